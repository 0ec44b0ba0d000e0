#!/bin/sh
# featmodel-check.sh -- validation of the feature models (make featmodel-check):
# leave one size out over the suite's kernels, per kernel the median
# relative error of the class.* and mem.* features and of the predicted
# time against the time predicted from the emulated features
# (docs/accuracy.md, "Feature models").
#
# usage: featmodel-check.sh KCAST SUITE_BINDIR OUTDIR PROGRAM...
#
#  1. the shipped suite dataset (datasets/data/suite-features.db), recorded
#     before kcast run stored arguments: models of the launch configuration
#     alone;
#  2. PROGRAM... (the fast subset) re-run under kcast run into
#     OUTDIR/suite-fast.db, which records the scalar arguments (arg.*):
#     models of the configuration and the arguments.
#
# Tables go to stdout and to OUTDIR/validate-{suite,fast}.{txt,csv}.
set -eu
kcast=$1 bindir=$2 out=$3
shift 3
mkdir -p "$out"
list="$out/fast.txt"
: > "$list"
for p in "$@"; do
  grep -E "^(sample=[0-9]+ )?$p( |\$)" datasets/suite/suite.txt >> "$list" || true
done
if [ ! -s "$list" ]; then echo "featmodel-check: no runs of $* in datasets/suite/suite.txt" >&2; exit 1; fi
datasets/suite/run-suite.sh "$kcast" "$bindir" "$list" "$out/suite-fast.db" 2> "$out/run.log" || {
  echo "featmodel-check: the fast subset did not run cleanly (see $out/run.log)" >&2; exit 1; }
for which in suite fast; do
  db=datasets/data/suite-features.db
  [ $which = fast ] && db="$out/suite-fast.db"
  echo "== $db"
  "$kcast" featmodel validate "$db" 2>&1 | tee "$out/validate-$which.txt"
  "$kcast" featmodel validate "$db" --format csv > "$out/validate-$which.csv"
  echo
done
