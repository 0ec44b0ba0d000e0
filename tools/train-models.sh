#!/bin/sh
# Train the shipped models (`make models`): for every dataset in the data
# folder that holds GPU measurements, one time model per measured GPU and,
# where power was recorded, one power model, written to the models folder
# as GPU-time.kcm and GPU-power.kcm, with PROVENANCE.md beside them.
#
# Why a script and not a fixed command: the right forest depends on the
# data (kcast's defaults were chosen on the real data of docs/accuracy.md;
# a small dataset can favour fewer features, or no base).  So each model is chosen by 5-fold
# cross-validation among a few configurations (CONFIGS below), by median
# absolute percentage error, and PROVENANCE.md keeps every candidate's CV
# figures, the chosen command, the date and the source dataset (with its
# SHA-256), so a model can be traced and rebuilt.
#
# A dataset without measurements (datasets/data/suite-features.db holds
# emulator features only) is skipped; `kcast dataset stats` tells which GPU
# and metric each dataset measured.  With no measured dataset at all the
# script says so and exits 0, leaving the models folder as it is.  Models
# are written under a temporary name and renamed, so an interrupted run
# never leaves a half-written model.
#
# usage: tools/train-models.sh [--kcast PATH] [--data DIR] [--out DIR]
#        (or KCAST, KCAST_MODELS_DATA, KCAST_MODELS_OUT in the environment;
#        defaults: build/kcast, datasets/data, datasets/models of the tree)
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
kcast=${KCAST:-$root/build/kcast}
data=${KCAST_MODELS_DATA:-$root/datasets/data}
out=${KCAST_MODELS_OUT:-$root/datasets/models}
folds=5

usage() {
  echo "usage: tools/train-models.sh [--kcast PATH] [--data DIR] [--out DIR]" >&2
  exit 2
}
while [ $# -gt 0 ]; do
  case $1 in
    --kcast) [ $# -ge 2 ] || usage; kcast=$2; shift 2 ;;
    --data) [ $# -ge 2 ] || usage; data=$2; shift 2 ;;
    --out) [ $# -ge 2 ] || usage; out=$2; shift 2 ;;
    -h|--help) usage ;;
    *) echo "train-models: unknown argument '$1'" >&2; usage ;;
  esac
done

# Paths as they should read in messages and PROVENANCE.md: relative to the
# tree when inside it.
show() {
  case $1 in
    "$root"/*) printf '%s' "${1#"$root"/}" ;;
    *) printf '%s' "$1" ;;
  esac
}

if [ ! -x "$kcast" ]; then
  echo "train-models: $(show "$kcast"): not found or not executable (run make first)" >&2
  exit 1
fi
if [ ! -d "$data" ]; then
  echo "train-models: $(show "$data"): no such folder" >&2
  exit 1
fi

# Candidate configurations: label|options.  100 trees each (the default).
CONFIGS='defaults|
no-base|--base none
launch-class|--features launch,class
random-forest|--random-forest --min-leaf 5 --max-features 0.333'

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kcast-models.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

# Pass 1: what each dataset holds.  Measured ones go to "measured" (path
# and feature-value count) with their (GPU, metric) pairs in "pairs"
# ("db|gpu|metric|launches"); those with features but no measurements (the
# emulator's suite-features.db) to "featdbs".
: > "$tmp/measured"
: > "$tmp/pairs"
: > "$tmp/featdbs"
for db in "$data"/*.db; do
  [ -f "$db" ] || continue
  if ! "$kcast" dataset stats "$db" --format csv < /dev/null > "$tmp/stats.csv" 2> "$tmp/stats.err"; then
    echo "train-models: $(show "$db"): skipped: $(head -n 1 "$tmp/stats.err")" >&2
    continue
  fi
  awk -F, -v db="$db" '$1 == "gpu" && ($4 == "time_ns" || $4 == "power_w") && $5 > 0 {
      print db "|" $3 "|" $4 "|" $5 }' "$tmp/stats.csv" > "$tmp/found"
  fv=$(awk -F, '$1 == "total" { print $8 + 0 }' "$tmp/stats.csv")
  nm=$(awk -F, '$1 == "total" { print $9 + 0 }' "$tmp/stats.csv")
  if [ -s "$tmp/found" ]; then
    cat "$tmp/found" >> "$tmp/pairs"
    echo "$db|$fv" >> "$tmp/measured"
  elif [ "${fv:-0}" -gt 0 ] && [ "${nm:-0}" -eq 0 ]; then
    echo "$db" >> "$tmp/featdbs"
    echo "train-models: $(show "$db"): features only (no time or power measurements)" >&2
  else
    echo "train-models: $(show "$db"): no time or power measurements, skipped" >&2
  fi
done
if [ ! -s "$tmp/pairs" ]; then
  echo "make models: no measured dataset in $(show "$data") (collect with make gpu-check)"
  exit 0
fi

# Pass 2: the dataset each measured one trains on.  `kcast profile` records
# measurements without features (make gpu-check writes <gpu>.db that way);
# the features of the same launches come from `kcast run` (make datasets).
# Such a dataset is joined with every features-only dataset by (app,
# dataset, lseq) -- `kcast dataset merge` -- into a scratch file; one that
# carries its own features (an imported GPU Mangrove database) is used as it
# is.  "sources" lines: "db|training file|description|merge command".
: > "$tmp/sources"
n=0
while IFS='|' read -r db fv; do
  if [ "$fv" -gt 0 ]; then
    echo "$db|$db|\`$(show "$db")\`|" >> "$tmp/sources"
    continue
  fi
  if [ ! -s "$tmp/featdbs" ]; then
    echo "train-models: $(show "$db"): measurements without features, and no features-only" \
         "dataset in $(show "$data") to join them with (make datasets); skipped" >&2
    continue
  fi
  n=$((n + 1))
  joined="$tmp/joined-$n.db"
  desc="\`$(show "$db")\` (measurements) joined with"
  merge="kcast dataset merge joined.db"
  set --
  while IFS= read -r f; do
    set -- "$@" "$f"
    desc="$desc \`$(show "$f")\`"
    merge="$merge $(show "$f")"
  done < "$tmp/featdbs"
  merge="$merge $(show "$db")"
  desc="$desc (features) by (app, dataset, lseq)"
  if ! "$kcast" dataset merge "$joined" "$@" "$db" < /dev/null > /dev/null 2> "$tmp/merge.err"; then
    echo "train-models: $(show "$db"): cannot join with the features: $(head -n 1 "$tmp/merge.err")" >&2
    exit 1
  fi
  echo "$db|$joined|$desc|$merge" >> "$tmp/sources"
done < "$tmp/measured"
if [ ! -s "$tmp/sources" ]; then
  echo "train-models: no model trained: the measured datasets in $(show "$data") have no" \
       "features to train on" >&2
  exit 1
fi

mkdir -p "$out"
date_utc=$(date -u '+%Y-%m-%d %H:%M UTC')
version=$("$kcast" --version 2>/dev/null || echo "kcast (unknown version)")
prov="$tmp/PROVENANCE.md"
{
  echo "# Provenance of the models in $(show "$out")"
  echo
  echo "Written by \`tools/train-models.sh\` (\`make models\`) on $date_utc with $version."
  echo "Each model was chosen among the configurations below by $folds-fold"
  echo "cross-validation (\`kcast cv --folds $folds\`, seeded shuffle) on its source"
  echo "dataset: the lowest median absolute percentage error wins.  Errors are in"
  echo "percent of the measured value; coverage is the share of measurements inside"
  echo "the 90 % prediction interval."
} > "$prov"

# Value of a top-level number in kcast cv's JSON (the overall figures come
# before the per-fold ones), with D decimals: jnum KEY FILE D.  A value that
# is not a number (null) is shown as it is.
jnum() {
  v=$(grep -o "\"$1\":[^,}]*" "$2" | head -n 1 | cut -d: -f2)
  awk -v v="$v" -v d="$3" 'BEGIN {
    if (v ~ /^-?[0-9.]+([eE][-+]?[0-9]+)?$/) printf "%.*f", d, v; else printf "%s", v }'
}

trained=0
seen=""
# Time models first, then power, so a GPU's pair sits together below.
for metric in time_ns power_w; do
  while IFS='|' read -r db gpu m nlaunch; do
    [ "$m" = "$metric" ] || continue
    src=$(awk -F'|' -v db="$db" '$1 == db { print $2 }' "$tmp/sources")
    desc=$(awk -F'|' -v db="$db" '$1 == db { print $3 }' "$tmp/sources")
    merge=$(awk -F'|' -v db="$db" '$1 == db { print $4 }' "$tmp/sources")
    [ -n "$src" ] || continue
    target=${metric%_*}
    key="$gpu/$target"
    case " $seen " in
      *" $key "*)
        echo "train-models: $(show "$db"): $gpu $target already trained from another dataset;" \
             "merge them with kcast dataset merge to train on both" >&2
        continue ;;
    esac
    seen="$seen $key"
    name=$(printf '%s' "$gpu" | tr -c 'A-Za-z0-9._-' '_')
    model="$out/$name-$target.kcm"
    echo "train-models: $gpu $target from $(show "$db") ($nlaunch launches): cross-validating" >&2

    best=""
    best_ape=""
    best_opts=""
    nrows=""
    rows=""
    echo "$CONFIGS" > "$tmp/configs"
    while IFS='|' read -r label opts; do
      # shellcheck disable=SC2086 # opts is a word list
      if "$kcast" cv "$src" --gpu "$gpu" --target "$target" --folds "$folds" $opts \
           --format json < /dev/null > "$tmp/cv.json" 2> "$tmp/cv.err"; then
        j="$tmp/cv.json"
        ape=$(jnum median_ape "$j" 2)
        nrows=$(jnum rows "$j" 0)
        row="| $label | \`${opts:-(defaults)}\` | $(jnum mape "$j" 2) | $ape | $(jnum rmse_log "$j" 3)"
        row="$row | $(jnum r2 "$j" 3) | $(jnum spearman "$j" 3) | $(jnum coverage "$j" 3) |"
        if [ -z "$best" ] || awk -v a="$ape" -v b="$best_ape" 'BEGIN { exit !(a + 0 < b + 0) }'; then
          best=$label
          best_ape=$ape
          best_opts=$opts
        fi
      else
        row="| $label | \`${opts:-(defaults)}\` | CV failed: $(head -n 1 "$tmp/cv.err" | tr '|' '/') ||||||"
      fi
      rows="$rows$row
"
    done < "$tmp/configs"
    if [ -z "$best" ]; then
      echo "train-models: $gpu $target: every configuration failed CV; first error:" >&2
      head -n 1 "$tmp/cv.err" >&2
      exit 1
    fi

    # The chosen configuration on applications it has not seen: leave one
    # app out, intervals calibrated by application (as the model will be).
    # shellcheck disable=SC2086
    if "$kcast" cv "$src" --gpu "$gpu" --target "$target" --group app $best_opts \
         --calibrate-groups --format json < /dev/null > "$tmp/logo.json" 2> "$tmp/logo.err"; then
      logo="leave-one-app-out CV, intervals calibrated by application: MAPE"
      logo="$logo $(jnum mape "$tmp/logo.json" 2) %, median APE $(jnum median_ape "$tmp/logo.json" 2) %,"
      logo="$logo coverage of 90 % intervals $(jnum coverage "$tmp/logo.json" 3)"
    else
      logo="not measured: $(head -n 1 "$tmp/logo.err")"
    fi

    echo "train-models: $gpu $target: $best (median APE $best_ape %), training" >&2
    # Intervals calibrated for applications the model has not seen (a
    # scheduler's new programs); row calibration when there is one app.
    cal=--calibrate-groups
    for try in 1 2; do
      # shellcheck disable=SC2086
      if "$kcast" train "$src" --gpu "$gpu" --target "$target" $best_opts $cal \
           -o "$out/.$name-$target.kcm.tmp" < /dev/null > "$tmp/train.log" 2>&1; then
        break
      fi
      if [ $try = 1 ] && grep -q 'at least 2 groups' "$tmp/train.log"; then
        cal=""
        continue
      fi
      cat "$tmp/train.log" >&2
      rm -f "$out/.$name-$target.kcm.tmp"
      exit 1
    done
    "$kcast" model info "$out/.$name-$target.kcm.tmp" < /dev/null > /dev/null
    mv "$out/.$name-$target.kcm.tmp" "$model"
    trained=$((trained + 1))

    sums=""
    for f in "$db" $( [ -n "$merge" ] && cat "$tmp/featdbs" ); do
      sums="$sums${sums:+, }$(show "$f") $(sha256sum "$f" | cut -d' ' -f1)"
    done
    train_db=$(show "$db")
    [ -z "$merge" ] || train_db=joined.db
    {
      echo
      echo "## $name-$target.kcm"
      echo
      echo "- GPU: $gpu; target: $target ($metric, median over repetitions)"
      echo "- source: $desc; $nlaunch launches measured, ${nrows:-?} with features used"
      echo "- SHA-256: $sums"
      echo "- chosen: $best (lowest median APE, $best_ape %)"
      echo "- unseen applications: $logo"
      echo "- command: ${merge:+\`$merge\`, then }\`kcast train $train_db --gpu $gpu" \
           "--target $target ${best_opts:+$best_opts }${cal:+$cal }-o $(show "$model")\`"
      echo "- trained: $date_utc"
      echo
      echo "| configuration | options | MAPE % | median APE % | RMSE log | R^2 | Spearman | coverage |"
      echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"
      printf '%s' "$rows"
    } >> "$prov"
  done < "$tmp/pairs"
done

cp "$prov" "$out/.PROVENANCE.md.tmp"
mv "$out/.PROVENANCE.md.tmp" "$out/PROVENANCE.md"
echo "train-models: $trained model(s) and PROVENANCE.md in $(show "$out")" >&2
