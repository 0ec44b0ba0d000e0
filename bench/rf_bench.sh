#!/bin/sh
# rf_bench.sh -- the forest against scikit-learn and ranger, side by side in
# one run (the machine is shared: only ratios measured together mean much).
#
#   rf_bench.sh BUILD_DIR [QUICK]      (make bench runs it; QUICK=1 shrinks)
#
# 1. rf_bench prep writes every dataset and its 5 CV folds once
#    (BUILD/bench/rf/NAME.{bin,folds}): a synthetic 10,000 x 100 set, a
#    5,000-row CV set, a 100,000-row set for the scaling table (the same
#    seeded rows: each is the first rows of the largest), and the
#    dedispersion tuning data when ../shared/data/tuning-dedispersion (or
#    $KCAST_DEDISP) holds it;
# 2. installs the peers when they are missing (python3-sklearn or pip
#    scikit-learn; r-cran-ranger) and prints a SKIP line when it cannot;
# 3. runs kcast (bench/rf_bench.c), scikit-learn (peers/sklearn_bench.py)
#    and ranger (peers/ranger_bench.R) on the same files and prints one
#    table, the training-time ratios and the scaling table.
#
# KCAST_BASE=DIR (the build folder of another tree, with its
# bench/rf_bench built) runs that forest too, as peer "base", on the same
# files in the same run: before/after figures of a change.  Build that
# tree's rf_bench from this tree's bench/rf_bench.c when it predates the
# warm-up (rf_bench.c, warm_up): else its random forest's figure alone
# holds the start of the OpenMP team.
set -u
BUILD=$1
QUICK=${2:-0}
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=$BUILD/bench/rf
BIN=$BUILD/bench/rf_bench
mkdir -p "$OUT"
Q=""
[ "$QUICK" = 1 ] && Q="--quick"
DD=${KCAST_DEDISP:-$HERE/../../shared/data/tuning-dedispersion}
[ -f "$DD/A100.csv" ] || { echo "rf bench: dedispersion data not found ($DD), skipped"; DD=-; }
RES=$OUT/results.tsv
: > "$RES"

echo "rf bench: preparing datasets in $OUT ${Q:+(quick)}"
SETS=$("$BIN" prep "$OUT" "$DD" $Q) || exit 1
[ "$QUICK" = 1 ] && SETS=$(echo "$SETS" | tr ' ' '\n' | grep -v -e A4000 -e A6000 | tr '\n' ' ')

# peers: find or install them, else say why they are skipped
PY=""
for p in python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null 2>&1 && "$p" -c "import sklearn" 2>/dev/null; then PY=$p; break; fi
done
if [ -z "$PY" ]; then
  echo "rf bench: installing scikit-learn"
  { apt-get install -y -qq python3-sklearn >/dev/null 2>&1 || pip install -q scikit-learn >/dev/null 2>&1; } || true
  for p in python3 /usr/bin/python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c "import sklearn" 2>/dev/null; then PY=$p; break; fi
  done
fi
[ -n "$PY" ] || echo "SKIP: scikit-learn is not installed and could not be installed"
HAVE_R=0
if command -v Rscript >/dev/null 2>&1 && Rscript -e 'library(ranger)' >/dev/null 2>&1; then HAVE_R=1; else
  echo "rf bench: installing ranger"
  apt-get install -y -qq r-cran-ranger >/dev/null 2>&1 || true
  command -v Rscript >/dev/null 2>&1 && Rscript -e 'library(ranger)' >/dev/null 2>&1 && HAVE_R=1
fi
[ "$HAVE_R" = 1 ] || echo "SKIP: ranger (R) is not installed and could not be installed"

for s in $SETS; do
  case $s in synth_cv|synth_scale) continue ;; esac
  echo "rf bench: $s"
  "$BIN" run "$OUT" "$s" $Q | tee -a "$RES"
  [ -n "${KCAST_BASE:-}" ] && "$KCAST_BASE/bench/rf_bench" run "$OUT" "$s" $Q |
    sed 's/^R\t\([^\t]*\)\tkcast\t/R\t\1\tbase\t/' | tee -a "$RES"
  [ -n "$PY" ] && "$PY" "$HERE/peers/sklearn_bench.py" "$OUT" "$s" $Q | tee -a "$RES"
  [ "$HAVE_R" = 1 ] && Rscript "$HERE/peers/ranger_bench.R" "$OUT" "$s" | tee -a "$RES"
done
echo "rf bench: scaling"
"$BIN" scale "$OUT" $Q | tee -a "$RES"
[ -n "$PY" ] && "$PY" "$HERE/peers/sklearn_bench.py" "$OUT" --scale $Q | tee -a "$RES"

# GPU Mangrove's method next to kcast's configurations on the tutorial
# data: extra trees on its twelve engineered features (log target for time)
# against extra trees on kcast's launch and class families, and on the
# twelve plus the launch family; random 5-fold and
# leave-one-application-out; median APE of each and the difference.
MG=${KCAST_MANGROVE:-$HERE/../../shared/data/mangrove-tutorial}
MG_SEEDS=10
[ "$QUICK" = 1 ] && MG_SEEDS=3
if [ ! -f "$MG/cuda_flux_metrics.db" ]; then
  echo "SKIP: GPU Mangrove comparison: tutorial data not found ($MG)"
elif ! "$BUILD/kcast" dataset import-mangrove --help >/dev/null 2>&1; then
  echo "SKIP: GPU Mangrove comparison: this kcast has no 'dataset import-mangrove'"
else
  MGOUT=$OUT/mangrove.tsv
  : > "$MGOUT"
  for g in T4 K80; do
    db=$OUT/mangrove_$g.db
    rm -f "$db"
    "$BUILD/kcast" dataset import-mangrove --features "$MG/cuda_flux_metrics.db" \
      --time "$MG/kernel_time_$g.db" --power "$MG/kernel_power_$g.db" --gpu "$g" -o "$db" >/dev/null || continue
    for tgt in time power; do
      log=""
      [ "$tgt" = time ] && log="--log-target"
      for split in "--folds 5" "--group app"; do
        # 43 launches: one split's median APE swings by a factor of several
        # with the seed, so every figure is the mean over MG_SEEDS seeds
        # (fold assignment and forest both change with it).
        row="$g	$tgt	$(echo $split | cut -c3-)"
        for feats in mangrove launch,class mangrove,launch; do
          sum=0 cnt=0
          for seed in $(seq 1 "$MG_SEEDS"); do
            base=""
            [ "$feats" = mangrove ] && base="--base none" # GPU Mangrove's method has none
            v=$("$BUILD/kcast" cv "$db" --gpu "$g" --target $tgt --features $feats $base --extra-trees \
                  --min-leaf 1 --trees 100 --seed "$seed" $log $split --format json 2>/dev/null |
                grep -o '"median_ape":[^,}]*' | head -n 1 | cut -d: -f2)
            [ -n "$v" ] && { sum=$(awk -v a="$sum" -v b="$v" 'BEGIN { print a + b }'); cnt=$((cnt + 1)); }
          done
          row="$row	$(awk -v s="$sum" -v c="$cnt" 'BEGIN { if (c) printf "%.2f", s / c; else print "nan" }')"
        done
        printf "M\t%s\n" "$row" >> "$MGOUT"
      done
    done
  done
  printf "\nGPU Mangrove's method vs kcast: CV median APE %%, mean over %s seeds, tutorial data\n" "$MG_SEEDS"
  printf "(all extra trees, min-leaf 1, 100 trees, log target for time; mangrove = its twelve features,\n"
  printf " kcast A = launch,class families, kcast B = mangrove,launch; best-mg = the better kcast minus mangrove)\n"
  printf "%-4s %-6s %-10s %9s %9s %9s %8s\n" gpu target split mangrove "kcast A" "kcast B" best-mg
  awk -F'\t' '{ b = $6 < $7 ? $6 : $7; d = ($5 == "nan" || b == "nan") ? "-" : sprintf("%+.2f", b - $5);
                printf "%-4s %-6s %-10s %9s %9s %9s %8s\n", $2, $3, $4, $5, $6, $7, d }' "$MGOUT"
fi

# the table (plain awk: no peer needed to print it)
awk -F'\t' '
$1 == "R" { key = $2 SUBSEP $4; t[$2, $3, $4] = $5; row[++n] = $0; if (!(key in seen)) { seen[key] = 1; keys[++k] = key } }
$1 == "S" { srow[++ns] = $0 }
END {
  printf "\n%-14s %-8s %-3s %10s %9s %8s %12s %12s\n", "dataset", "peer", "alg", "train_s", "cv_medAPE", "cv_MAPE", "latency_us", "batch_rows/s"
  for (i = 1; i <= n; i++) { split(row[i], a, "\t"); printf "%-14s %-8s %-3s %10.2f %9.2f %8.2f %12.2f %12.0f\n", a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9] }
  printf "\ntraining time ratio (peer / kcast; >= 2 vs scikit-learn and >= 1 vs ranger is the target)\n"
  for (i = 1; i <= k; i++) { split(keys[i], b, SUBSEP); kc = t[b[1], "kcast", b[2]]; if (kc <= 0) continue
    s = t[b[1], "sklearn", b[2]]; r = t[b[1], "ranger", b[2]]; o = t[b[1], "base", b[2]]
    printf "%-14s %-3s  sklearn %6s  ranger %6s", b[1], b[2], s ? sprintf("%.2fx", s / kc) : "-", r ? sprintf("%.2fx", r / kc) : "-"
    printf (o ? sprintf("  base %6.2fx", o / kc) : "") "\n" }
  printf "\nscaling (training seconds, synthetic, 100 features, 2 threads; kcast alone above 10,000 rows)\n%-8s %-3s %8s %6s %9s\n", "peer", "alg", "rows", "trees", "train_s"
  for (i = 1; i <= ns; i++) { split(srow[i], a, "\t"); printf "%-8s %-3s %8d %6d %9.2f\n", a[2], a[3], a[4], a[5], a[6] }
}' "$RES"
