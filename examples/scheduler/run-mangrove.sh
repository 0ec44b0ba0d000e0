#!/bin/sh
# run-mangrove.sh -- the scheduler on real measurements: the GPU Mangrove
# tutorial data (43 launches measured on a Tesla T4 and a Tesla K80).
#
# Imports both GPUs into one dataset, trains a time and a power forest per
# GPU, and runs examples/sched twice over:
#   1. in-sample: forests trained on all 43 launches, scheduling the same 43
#      (optimistic: the forests have seen every launch they predict);
#   2. cross-fitted by input size: forests trained on the launches of sizes
#      s2,s4 schedule the launches of sizes s1,s3,s5, and the other way round,
#      so no prediction comes from a forest that saw the launch (needs the
#      sqlite3 shell to cut the training datasets; skipped without it).
# The oracle rows (EFT/LPT on the measured times) are the yardstick.
#
# usage (from the repository root):
#   examples/scheduler/run-mangrove.sh [BUILD [WORKDIR]]
# BUILD defaults to build, WORKDIR to BUILD/sched-mangrove; MANGROVE names the
# tutorial data (default ../shared/data/mangrove-tutorial).  Prints a note and
# exits 0 when the data is absent.
set -eu

BUILD=${1:-build}
WORK=${2:-$BUILD/sched-mangrove}
MANGROVE=${MANGROVE:-../shared/data/mangrove-tutorial}
KCAST=$BUILD/kcast
SCHED=$BUILD/examples/sched

if [ ! -f "$MANGROVE/cuda_flux_metrics.db" ]; then
  echo "run-mangrove: $MANGROVE not found, skipped"
  exit 0
fi
for f in "$KCAST" "$SCHED"; do
  if [ ! -x "$f" ]; then
    echo "run-mangrove: $f is not built (make BUILD=$BUILD all)" >&2
    exit 1
  fi
done
mkdir -p "$WORK"
DB=$WORK/mangrove.db
rm -f "$DB"
for g in T4 K80; do
  "$KCAST" dataset import-mangrove --features "$MANGROVE/cuda_flux_metrics.db" \
    --time "$MANGROVE/kernel_time_$g.db" --power "$MANGROVE/kernel_power_$g.db" \
    --gpu "$g" -o "$DB" >/dev/null
done

# train DB PREFIX: time and power forests for both GPUs into PREFIX-GPU-TARGET.kcm
train() {
  for g in T4 K80; do
    "$KCAST" train "$1" --gpu "$g" --target time --log-target --extra-trees --min-leaf 1 \
      --features launch,class --seed 1 -o "$2-$g-time.kcm" >/dev/null
    "$KCAST" train "$1" --gpu "$g" --target power --extra-trees --min-leaf 1 \
      --features launch,class --seed 1 -o "$2-$g-power.kcm" >/dev/null
  done
}
models() {
  echo "--model T4=$1-T4-time.kcm --model T4=$1-T4-power.kcm" \
       "--model K80=$1-K80-time.kcm --model K80=$1-K80-power.kcm"
}

echo "== in-sample: forests trained on all 43 launches, scheduling the same 43"
train "$DB" "$WORK/all"
# shellcheck disable=SC2046 # models prints separate words on purpose
"$SCHED" "$DB" $(models "$WORK/all")

if ! command -v sqlite3 >/dev/null 2>&1; then
  echo "run-mangrove: the sqlite3 shell is not installed, cross-fitted runs skipped"
  exit 0
fi
# fold NAME KEEP: a copy of DB holding only the launches whose input label is in KEEP
fold() {
  rm -f "$WORK/$1.db"
  cp "$DB" "$WORK/$1.db"
  sqlite3 "$WORK/$1.db" "PRAGMA foreign_keys = ON; DELETE FROM launches WHERE dataset NOT IN ($2);"
}
fold even "'s2','s4'"
fold odd "'s1','s3','s5'"
train "$WORK/even.db" "$WORK/even"
train "$WORK/odd.db" "$WORK/odd"
echo
echo "== cross-fitted: forests trained on sizes s2,s4, scheduling sizes s1,s3,s5"
# shellcheck disable=SC2046
"$SCHED" "$DB" --dataset s1,s3,s5 $(models "$WORK/even")
echo
echo "== cross-fitted: forests trained on sizes s1,s3,s5, scheduling sizes s2,s4"
# shellcheck disable=SC2046
"$SCHED" "$DB" --dataset s2,s4 $(models "$WORK/odd")
