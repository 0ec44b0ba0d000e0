#!/bin/sh
# Print docs/cli.md from the CLI's own help texts, so the reference cannot
# drift from the program: `make docs` writes it, a CLI test compares it.
# usage: tools/gen-cli-doc.sh path/to/kcast
set -eu
kcast=${1:?usage: gen-cli-doc.sh KCAST}
cat <<'HEAD'
# kcast command reference

Generated from `kcast help` and `kcast help COMMAND` by
`tools/gen-cli-doc.sh` (`make docs`); a test checks that this file matches
the program. Feature names are defined in `features.md`, file formats in
`formats.md`.

Conventions shared by every command: a readable table on a terminal,
`--format csv|json` for other tools; progress on stderr for anything that
runs longer than a second; exit status 0 on success, 1 on a user error (one
line on stderr naming the file, the place and the problem), 2 on a bad
command line.

```
HEAD
"$kcast" help
echo '```'
for c in $("$kcast" help | awk '/^commands:/{on=1; next} on && !NF {exit} on {print $1}'); do
  case $c in help|version) continue ;; esac
  printf '\n## kcast %s\n\n```\n' "$c"
  "$kcast" help "$c"
  echo '```'
done
