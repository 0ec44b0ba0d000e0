#!/bin/sh
# featmodel-check.sh -- validation of the feature models (make featmodel-check):
# leave one size out over the suite's kernels, per kernel the median
# relative error of the class.* and mem.* features and of the predicted
# time against the time predicted from the emulated features
# (docs/accuracy.md, "Feature models").
#
# usage: featmodel-check.sh KCAST OUTDIR [MANGROVE_DIR]
#
# Validates the shipped suite dataset (datasets/data/suite-features.db,
# recorded by kcast run with the scalar arguments, arg.*), with the time
# from the analytic estimate on H200 and, when MANGROVE_DIR holds the GPU
# Mangrove tutorial data, from a T4 time forest trained on it (launch,class
# features, as make bench trains it).  Tables go to stdout and to
# OUTDIR/validate-{analytic,forest}.{txt,csv}; the summary with each
# instance of a kernel template counted as a kernel of its own (as before
# templates were modelled as one kernel) to OUTDIR/validate-instances.txt.
set -eu
kcast=$1 out=$2 mg=${3:-}
db=datasets/data/suite-features.db
mkdir -p "$out"
echo "== $db, time by the analytic estimate (H200)"
"$kcast" featmodel validate "$db" 2>&1 | tee "$out/validate-analytic.txt"
"$kcast" featmodel validate "$db" --format csv > "$out/validate-analytic.csv"
echo
echo "== $db, each template instance as a kernel of its own (--instances)"
"$kcast" featmodel validate "$db" --instances 2>&1 | tail -2 | tee "$out/validate-instances.txt"
if [ -n "$mg" ] && [ -f "$mg/cuda_flux_metrics.db" ] && [ -f "$mg/kernel_time_T4.db" ]; then
  rm -f "$out/t4.db"
  "$kcast" dataset import-mangrove --features "$mg/cuda_flux_metrics.db" \
    --time "$mg/kernel_time_T4.db" --gpu T4 -o "$out/t4.db" > "$out/t4.log" 2>&1
  "$kcast" train "$out/t4.db" --gpu T4 --target time --trees 100 --log-target \
    --extra-trees --min-leaf 1 --features launch,class -o "$out/t4.kcm" >> "$out/t4.log" 2>&1
  echo
  echo "== $db, time by the T4 forest ($out/t4.kcm)"
  "$kcast" featmodel validate "$db" --model "$out/t4.kcm" 2>&1 | tee "$out/validate-forest.txt"
  "$kcast" featmodel validate "$db" --model "$out/t4.kcm" --format csv > "$out/validate-forest.csv"
else
  echo "featmodel-check: no GPU Mangrove tutorial data at '${mg:-}': the forest column skipped"
fi
