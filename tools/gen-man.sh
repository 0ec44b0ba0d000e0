#!/bin/sh
# Write manual pages from the CLI's own help texts, so they cannot drift
# from the program (`make install` runs it): kcast.1 (the overview and the
# option conventions) and kcast-COMMAND.1 for each command, the usage text
# kept as written (a no-fill block), as `man kcast-train` expects.
# usage: tools/gen-man.sh path/to/kcast OUTDIR
set -eu
kcast=${1:?usage: gen-man.sh KCAST OUTDIR}
out=${2:?usage: gen-man.sh KCAST OUTDIR}
mkdir -p "$out"
version=$("$kcast" version | awk '{print $2}')

# roff-safe text: backslashes doubled, a leading . or ' escaped
esc() { sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }

page() { # NAME SECTION-TITLE SUMMARY TEXT-COMMAND...
  name=$1 summary=$2
  shift 2
  {
    printf '.TH %s 1 "" "kcast %s" "kcast manual"\n' "$(echo "$name" | tr a-z A-Z)" "$version"
    printf '.SH NAME\n%s \\- %s\n' "$name" "$summary"
    printf '.SH DESCRIPTION\n.nf\n'
    "$@" | esc
    printf '.fi\n'
    if [ "$name" != kcast ]; then printf '.SH SEE ALSO\n.BR kcast (1)\n'; fi
  } > "$out/$name.1.tmp"
  mv "$out/$name.1.tmp" "$out/$name.1"
}

page kcast "predict execution time and power of CUDA kernel launches" "$kcast" help
"$kcast" help | awk '/^commands:/{on=1; next} on && !NF {exit} on {print}' |
while read -r c summary; do
  case $c in help|version) continue ;; esac
  page "kcast-$c" "$summary" "$kcast" help "$c"
done
