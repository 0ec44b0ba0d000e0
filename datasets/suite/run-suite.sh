#!/bin/sh
# run-suite.sh -- run every line of a suite list under `kcast run` and
# collect the features of every launch into one dataset (make datasets).
#
# usage: run-suite.sh KCAST BINDIR LIST OUT.db
#
# LIST has one run per line, `program arg...` ('#' starts a comment).  A
# line may begin with `sample=N`: that run emulates N CTAs per launch and
# scales the counts (its results are incomplete, so its own check may fail:
# that is expected and reported, not an error).  Launches are keyed by
# kcast run's defaults (app = program name, dataset = the arguments), the
# same keys `kcast profile` uses, so GPU measurements join.
#
# The dataset is built in OUT.db.tmp and renamed at the end: an interrupted
# run leaves OUT.db as it was.  A provenance note goes to OUT.md, the
# programs' own output to OUT.db.log (not kept in the repository).
set -eu
kcast=$1 bindir=$2 list=$3 out=$4
tmp="$out.tmp"
note="${out%.db}.md"
log="$out.log"
rm -f "$tmp" "$log"
start=$(date +%s)
runs=0 passed=0 sampled=0 failed=0 failures=""
while IFS= read -r line || [ -n "$line" ]; do
  line=${line%%#*}
  set -f; set -- $line; set +f
  [ $# -gt 0 ] || continue
  sample=""
  case $1 in sample=*) sample=${1#sample=}; shift ;; esac
  prog=$1; shift
  runs=$((runs + 1))
  printf '%-40s ' "$prog $*" >&2
  t0=$(date +%s)
  if [ -n "$sample" ]; then
    set +e; "$kcast" run -o "$tmp" --sample "$sample" --timeout 600 -- "$bindir/$prog" "$@" >>"$log" 2>&1; rc=$?; set -e
  else
    set +e; "$kcast" run -o "$tmp" --timeout 600 -- "$bindir/$prog" "$@" >>"$log" 2>&1; rc=$?; set -e
  fi
  t1=$(date +%s)
  if [ -n "$sample" ]; then
    sampled=$((sampled + 1)); echo "sampled ($sample CTAs/launch), exit $rc, $((t1 - t0)) s" >&2
  elif [ $rc -eq 0 ]; then
    passed=$((passed + 1)); echo "PASS, $((t1 - t0)) s" >&2
  else
    failed=$((failed + 1)); failures="$failures
- \`$prog $*\`: exit $rc"; echo "FAIL (exit $rc)" >&2
  fi
done < "$list"
end=$(date +%s)
if [ ! -f "$tmp" ]; then echo "run-suite: no launch was recorded" >&2; exit 1; fi
mv "$tmp" "$out"
stats=$("$kcast" dataset stats "$out")
# Work per launch: the sum of the class.* counts (every thread-instruction
# is in exactly one class), from the export's columns.
span=$("$kcast" dataset export "$out" | awk -F, '
  NR == 1 { for (i = 1; i <= NF; i++) if ($i ~ /^class\./) c[i] = 1; next }
  { s = 0; for (i in c) s += $i; if (n == 0 || s < lo) lo = s; if (s > hi) hi = s; n++ }
  END { if (n && lo > 0) printf "%d launches; thread-instructions per launch %.3g to %.3g (%.1f orders of magnitude)", n, lo, hi, log(hi / lo) / log(10) }')
{
  echo "# $(basename "$out"): features of the kernel suite under the CPU emulator"
  echo
  echo "- command: \`make datasets\` (datasets/suite/run-suite.sh over $(basename "$list"))"
  echo "- date: $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "- kcast: $("$kcast" version)"
  echo "- compiler: $(nvcc --version | tail -2 | head -1)"
  echo "- flags: ${SUITE_NVCCFLAGS:-(not given: run through make datasets to record them)}"
  echo "- machine: $(nproc) CPU cores ($(uname -m)), no GPU: every feature comes from the emulator"
  echo "- runs: $runs ($passed passed their own check in full emulation, $sampled sampled, $failed failed)"
  echo "- wall time: $((end - start)) s"
  echo "- work: $span"
  echo "- sampling: lines marked \`sample=N\` in the list emulate N CTAs per launch; their counts are scaled to the grid (docs/features.md) and their program output is not checked"
  if [ -n "$failures" ]; then echo; echo "Failed runs:$failures"; fi
  echo
  echo '```'
  echo "$stats"
  echo '```'
} > "$note"
echo "run-suite: $runs runs, $passed passed, $sampled sampled, $failed failed, $((end - start)) s -> $out" >&2
[ $failed -eq 0 ]
