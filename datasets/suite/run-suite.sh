#!/bin/sh
# run-suite.sh -- run every entry of a suite manifest under `kcast suite
# run` and collect the features of every launch into one dataset, with a
# provenance note (make datasets).
#
# usage: run-suite.sh KCAST BINDIR MANIFEST OUT.db
#
# MANIFEST is a suite manifest (docs/formats.md, "Suite manifest"): one
# `[KEY=VALUE...] program arg...` per line.  A line with `sample=N` emulates
# N CTAs per launch and scales the counts (its results are incomplete, so
# its own check may fail: that is expected and reported, not an error).
# Launches are keyed by kcast run's defaults (app = program name, dataset =
# the arguments), the same keys `kcast profile` uses, so GPU measurements
# join.  SUITE_JOBS (default 1) entries run at a time.
#
# The dataset is built in OUT.db.tmp (started afresh) and renamed at the
# end: an interrupted run leaves OUT.db as it was.  A provenance note goes
# to OUT.md, the programs' own output to OUT.db.log (not kept in the
# repository).
set -eu
kcast=$1 bindir=$2 list=$3 out=$4
tmp="$out.tmp"
note="${out%.db}.md"
log="$out.log"
summary="$out.summary"
rm -f "$tmp" "$tmp.log" "$log" "$summary"
start=$(date +%s)
set +e
"$kcast" suite run "$list" --bindir "$bindir" -o "$tmp" --log "$log" --timeout 600 \
  -j "${SUITE_JOBS:-1}" > "$summary"
rc=$?
set -e
end=$(date +%s)
cat "$summary" >&2
runs=$(grep -c '^\[' "$summary" || true)
sampled=$(grep '^\[' "$summary" | grep -c ' passed, .*; sampled' || true)
passed=$(grep '^\[' "$summary" | grep -c ' passed, ' || true)
passed=$((passed - sampled))
failed=$(grep -c '^\[.* FAILED' "$summary" || true)
failures=$(sed -n 's/^  failed: /- /p' "$summary")
rm -f "$summary"
if [ ! -f "$tmp" ]; then echo "run-suite: no launch was recorded (kcast suite run exit $rc)" >&2; exit 1; fi
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
  echo "- command: \`make datasets\` (datasets/suite/run-suite.sh: kcast suite run over $(basename "$list"), ${SUITE_JOBS:-1} at a time)"
  echo "- date: $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "- kcast: $("$kcast" version)"
  echo "- compiler: $(nvcc --version | tail -2 | head -1)"
  echo "- flags: ${SUITE_NVCCFLAGS:-(not given: run through make datasets to record them)}"
  echo "- machine: $(nproc) CPU cores ($(uname -m)), no GPU: every feature comes from the emulator"
  echo "- runs: $runs ($passed passed their own check in full emulation, $sampled sampled, $failed failed)"
  echo "- wall time: $((end - start)) s"
  echo "- work: $span"
  echo "- sampling: lines marked \`sample=N\` in the list emulate N CTAs per launch; their counts are scaled to the grid (docs/features.md) and their program output is not checked"
  if [ -n "$failures" ]; then echo; echo "Failed runs:"; echo "$failures"; fi
  echo
  echo '```'
  echo "$stats"
  echo '```'
} > "$note"
echo "run-suite: $runs runs, $passed passed, $sampled sampled, $failed failed, $((end - start)) s -> $out" >&2
[ $failed -eq 0 ]
