#!/bin/sh
# Train the operator model (`make models`): the launches of the NeuSight
# training set (../shared/data/neusight-train: 16 PyTorch operators timed
# on five GPUs) imported into a dataset, and one cross-GPU time forest on
# all of them, written to OUT/operators-time.kcm with OUT/operators-time.md
# (its provenance: the input files and their SHA-256, the commands, the
# model's summary).  `kcast predict --op` uses it by default.
#
# Why a build product (OUT defaults to build/models) and not a file in git:
# it is a function of data that lives beside the project, not in it, and
# of the kcast that trained it; it is some tens of megabytes; and `make
# models` remakes it, byte for byte (a fixed seed, and the newest input
# file's time as SOURCE_DATE_EPOCH: the model's timestamp).  `make install`
# copies it to PREFIX/lib/kcast/models when it was made.
#
# The configuration is kcast's defaults but for the leaves (OPTS) and 50
# trees (TREES): docs/accuracy.md, "Operator launches", gives both against
# the five GPUs left out one at a time.  Intervals are calibrated for GPUs
# the model has not seen (a model of several GPUs always is).
#
# usage: tools/train-op-model.sh KCAST DATA OUT
# (DATA without the files: a note, exit 0, nothing written)
set -eu
kcast=${1:?usage: tools/train-op-model.sh KCAST DATA OUT}
data=${2:?usage: tools/train-op-model.sh KCAST DATA OUT}
out=${3:?usage: tools/train-op-model.sh KCAST DATA OUT}
TREES=${TREES:-50}
SEED=${SEED:-1}
# leaves of at least 20 launches, 8 samples kept of each for the
# intervals: the same accuracy as kcast's leaves of one sample on these
# launches (docs/accuracy.md), in a model of some 30 MB instead of some
# 800 MB, trained in a fraction of the time
OPTS=${OPTS:---min-leaf 20 --leaf-cap 8}

if [ ! -x "$kcast" ]; then
  echo "train-op-model: $kcast: not found or not executable (run make first)" >&2
  exit 1
fi
set -- "$data"/*.csv.gz
if [ ! -f "$1" ]; then
  echo "train-op-model: no operator data in $data (*.csv.gz): the operator model is not made"
  exit 0
fi
mkdir -p "$out"
db=$out/operators.db
model=$out/operators-time.kcm
tmp=$out/.operators-time.kcm.tmp.$$
trap 'rm -f "$tmp" "$db.tmp.$$"' EXIT INT TERM

# the dataset: a build product too, remade from the files every time
start=$(date +%s)
rm -f "$db.tmp.$$"
"$kcast" dataset import-neusight "$@" -o "$db.tmp.$$"
mv "$db.tmp.$$" "$db"
imported=$(date +%s)

# reproducible: the model's timestamp is the newest input's
newest=0
for f in "$@"; do
  t=$(stat -c %Y "$f")
  [ "$t" -gt "$newest" ] && newest=$t
done
# shellcheck disable=SC2086
SOURCE_DATE_EPOCH=$newest "$kcast" train "$db" --gpu all --target time --trees "$TREES" \
  --seed "$SEED" $OPTS -o "$tmp"
mv "$tmp" "$model"
trained=$(date +%s)

{
  echo "# operators-time.kcm"
  echo
  echo "A cross-GPU time model of operator launches (docs/features.md, \"Operator"
  echo "launches\"), made by \`make models\` (tools/train-op-model.sh)."
  echo
  echo "- command: kcast dataset import-neusight DATA/*.csv.gz -o operators.db;"
  echo "  SOURCE_DATE_EPOCH=$newest kcast train operators.db --gpu all --target time"
  echo "  --trees $TREES --seed $SEED $OPTS -o operators-time.kcm"
  echo "- import $((imported - start)) s, training $((trained - imported)) s"
  echo "- kcast: $("$kcast" --version 2>/dev/null || echo unknown)"
  echo
  echo "Inputs (SHA-256):"
  echo
  for f in "$@"; do
    echo "    $(sha256sum "$f" | cut -c1-64)  $(basename "$f")"
  done
  echo
  echo "The model:"
  echo
  "$kcast" model info "$model" | sed 's/^/    /'
} > "$out/operators-time.md"
echo "train-op-model: $model ($(du -h "$model" | cut -f1)); provenance in $out/operators-time.md"
