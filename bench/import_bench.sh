#!/bin/sh
# import_bench.sh BUILD [QUICK] -- features of a Kernel Tuner search space:
# `kcast dataset import-kerneltuner -j` against one nvcc + one kcast emulate
# per configuration, one after another (what a user would script without
# the importer).
#
# The space: tests/tuning/scale_add.cu with block_size_x 32..800 (step 32),
# tile_size_x 1..14 and use_bias 0/1, 700 configurations, in a cachefile
# this script writes (synthetic times; the features do not depend on them).
# Both sides compute the same features: Kernel Tuner's #define lines, nvcc
# -ptx for the default architecture, the importer's default sampling
# (adaptive: --sample auto) or KT_SAMPLE=N CTAs, the same --arg list.  A
# kcast whose default is 64 sampled CTAs (an older tree, KCAST=...) gives
# the figures before adaptive sampling beside this tree's.
#
# Figures, side by side in one run:
#   import       seconds for the whole 700-configuration space (-j JOBS)
#   sample       seconds of the importer on a seeded sample of N
#                configurations (--configs N, default 60; 20 with QUICK)
#   one by one   seconds of nvcc + kcast emulate per configuration over the
#                same sample, one after another
#   ratio        one by one / sample (the target is >= 4)
#   real A100    seconds to import the times of the real A100 convolution
#                cachefile (4,362 entries, 32 runs each) when it is beside the
#                project (SHARED_DATA, default ../shared/data; target < 10 s)
#   tuned spaces 24 configurations (seeded) of the shared pnpoly and older
#                convolution spaces (SHARED_DATA/tuning-rtx/import.sh) and of
#                a long-loop kernel like a dedispersion (tests/tuning/
#                unroll_sum.cu, each thread summing 1,536 shifted inputs),
#                -j 2, defaults: seconds per configuration (targets 0.3 /
#                0.5 / 3 s), and beside it nvcc -ptx of one configuration
#                alone, which no importer setting shortens; KCAST_BASE=DIR
#                (another tree's build folder) adds its figures
# KT_CONFIGS=N changes the sample; JOBS (default: the CPUs) the workers.
set -eu
build=${1:?usage: import_bench.sh BUILD [QUICK]}
quick=${2:-0}
kcast=${KCAST:-$build/kcast}
here=$(cd "$(dirname "$0")" && pwd)
src=$here/../tests/tuning/scale_add.cu
n=${KT_CONFIGS:-60}
[ "$quick" = 1 ] && n=${KT_CONFIGS:-20}
jobs=${JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)}
command -v nvcc >/dev/null 2>&1 || { echo "import bench: nvcc not on PATH, skipped"; exit 0; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kcast-import-bench-XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
cp "$here/../tests/tuning/scale_add.h" "$tmp/"

# The cachefile (Kernel Tuner's format) and the list of configurations.
awk 'BEGIN {
  printf "{\"device_name\": \"NVIDIA A100-PCIE-40GB\", \"kernel_name\": \"scale_add\",\n"
  printf " \"problem_size\": [1000000], \"tune_params_keys\": [\"block_size_x\", \"tile_size_x\", \"use_bias\"],\n"
  printf " \"tune_params\": {}, \"objective\": \"time\", \"cache\": {\n"
  sep = ""
  for (bx = 32; bx <= 800; bx += 32) for (tx = 1; tx <= 14; tx++) for (ub = 0; ub <= 1; ub++) {
    t = bx / tx * 0.0001 + ub * 0.00001
    printf "%s\"%d,%d,%d\": {\"block_size_x\": %d, \"tile_size_x\": %d, \"use_bias\": %d, \"time\": %.6f, \"times\": [%.6f, %.6f]}",
      sep, bx, tx, ub, bx, tx, ub, t, t, t
    sep = ",\n"
  }
  printf "}}\n"
}' > "$tmp/space.json"
args="--arg buf:4M --arg buf:4M:randf --arg 1000000"
ksample=${KT_SAMPLE:-}
# what the one-by-one side passes emulate for the importer's default: auto
# where this kcast has it, else the 64 CTAs that were the default before
osample=${ksample:-64}
[ -z "$ksample" ] && "$kcast" help emulate 2>/dev/null | grep -q "'auto'" && osample=auto
opts="--grid-div-x block_size_x,tile_size_x ${ksample:+--sample $ksample} $args --const scale=randf"

now() { date +%s.%N; }
secs() { echo "$1 $2" | awk '{printf "%.2f", $2 - $1}'; }

t0=$(now)
"$kcast" dataset import-kerneltuner "$tmp/space.json" -o "$tmp/all.db" --source "$src" $opts \
  -j "$jobs" > "$tmp/all.out" 2>&1 || { cat "$tmp/all.out"; exit 1; }
t1=$(now)
full=$(secs "$t0" "$t1")

t0=$(now)
"$kcast" dataset import-kerneltuner "$tmp/space.json" -o "$tmp/sample.db" --source "$src" $opts \
  -j "$jobs" --configs "$n" > "$tmp/sample.out" 2>&1 || { cat "$tmp/sample.out"; exit 1; }
t1=$(now)
sample=$(secs "$t0" "$t1")

# The same sample, one configuration after another: its keys from the dataset.
"$kcast" dataset export "$tmp/sample.db" | awk -F'"' 'NR > 1 {print $2}' > "$tmp/keys"
count=$(wc -l < "$tmp/keys")
t0=$(now)
while IFS=, read -r bx tx ub; do
  g=$(( (1000000 + bx * tx - 1) / (bx * tx) ))
  {
    printf '#define grid_size_x %d\n#define grid_size_y 1\n#define grid_size_z 1\n' "$g"
    printf '#define block_size_x %d\n#define block_size_y 1\n#define block_size_z 1\n' "$bx"
    printf '#define tile_size_x %d\n#define use_bias %d\n#define kernel_tuner 1\n' "$tx" "$ub"
    printf '#line 1 "scale_add.cu"\n'
    cat "$src"
  } > "$tmp/one.cu"
  nvcc -ptx -arch=sm_90 "$tmp/one.cu" -o "$tmp/one.ptx"
  "$kcast" emulate "$tmp/one.ptx" --grid "$g" --block "$bx" --sample "$osample" $args --format csv \
    > /dev/null
done < "$tmp/keys"
t1=$(now)
seq=$(secs "$t0" "$t1")

real=${SHARED_DATA:-$here/../../shared/data}/tuning-features/cachefiles/convolution_A100.json.gz
realt=""
if [ -f "$real" ]; then
  t0=$(now)
  "$kcast" dataset import-kerneltuner "$real" -o "$tmp/real.db" --grid-div-x block_size_x,tile_size_x \
    --grid-div-y block_size_y,tile_size_y > "$tmp/real.out" 2> /dev/null || { cat "$tmp/real.out"; exit 1; }
  t1=$(now)
  realt=$(secs "$t0" "$t1")
fi

echo "import bench: scale_add, 700 configurations, -j $jobs, sampling: ${ksample:-the importer's default} ($kcast)"
printf '  import (all 700)       %8s s   (%s)\n' "$full" "$(sed -n 's/.*features: \([^;]*\).*/\1/p' "$tmp/all.out")"
printf '  import (sample of %3d) %8s s\n' "$count" "$sample"
printf '  one by one (%3d)       %8s s   (nvcc -ptx + kcast emulate each)\n' "$count" "$seq"
echo "$seq $sample $full $count" | awk '{printf "  ratio                  %8.1fx  (one by one / import, same %d configurations; target >= 4)\n  per configuration      %8.3f s one by one, %.3f s in the whole import\n", $1 / $2, $4, $1 / $4, $3 / 700}'
if [ -n "$realt" ]; then
  printf '  real A100 cachefile    %8s s   (times only: %s; target < 10 s)\n' "$realt" \
    "$(sed -n 's/.*: \([0-9]* configurations\).*: \([0-9]* time_ns values\).*/\1, \2/p' "$tmp/real.out")"
else
  echo "  real A100 cachefile    (not found: $real)"
fi

# The tuned spaces: the shared ones when they are beside the project, and
# the long-loop kernel, 24 configurations each, on two workers.
rtx=${SHARED_DATA:-$here/../../shared/data}/tuning-rtx
awk 'BEGIN {
  printf "{\"device_name\": \"NVIDIA A100-PCIE-40GB\", \"kernel_name\": \"unroll_sum\",\n"
  printf " \"problem_size\": [1048576], \"tune_params_keys\": [\"block_size_x\", \"loop_unroll_factor_k\"],\n"
  printf " \"tune_params\": {}, \"objective\": \"time\", \"cache\": {\n"
  sep = ""
  for (bx = 32; bx <= 256; bx += 32) for (u = 1; u <= 4; u *= 2) {
    printf "%s\"%d,%d\": {\"block_size_x\": %d, \"loop_unroll_factor_k\": %d, \"time\": 1.0, \"times\": [1.0]}",
      sep, bx, u, bx, u
    sep = ",\n"
  }
  printf "}}\n"
}' > "$tmp/long.json"
# one space with one kcast: seconds per configuration ("-" when it failed)
space() { # kcast name
  t0=$(now)
  case $2 in
  long) "$1" dataset import-kerneltuner "$tmp/long.json" -o "$tmp/long-$$.db" \
          --source "$here/../tests/tuning/unroll_sum.cu" --arg buf:4M --arg buf:4M:randf \
          --arg 1048576 --arg 1536 --const weight=randf --arch sm_80 -j 2 > "$tmp/sp.out" 2>&1 ;;
  *) KCAST=$1 KCAST_GPUS=$rtx/gpus-rtx.csv sh "$rtx/import.sh" "$2" "$tmp/$2-$$.db" --configs 24 \
       --seed 1 -j 2 > "$tmp/sp.out" 2>&1 ;;
  esac || { echo "-"; rm -f "$tmp"/*-$$.db; return; }
  t1=$(now)
  rm -f "$tmp"/*-$$.db
  echo "$t0 $t1" | awk '{printf "%.3f", ($2 - $1) / 24}'
}
one_nvcc() { # the source of one configuration (with its #define lines): nvcc -ptx seconds
  t0=$(now)
  nvcc -ptx -arch=sm_80 "$1" -o "$tmp/one-nvcc.ptx" 2> /dev/null || { echo "-"; return; }
  t1=$(now)
  secs "$t0" "$t1"
}
echo "tuned spaces, 24 configurations each, -j 2, defaults: seconds per configuration"
printf '  %-28s %10s %10s %16s  %s\n' space kcast base "nvcc -ptx of one" target
for sp in pnpoly convolution long; do
  [ "$sp" = long ] || [ -f "$rtx/import.sh" ] || { echo "  $sp: not found ($rtx)"; continue; }
  a=$(space "$kcast" "$sp")
  b="-"
  [ -n "${KCAST_BASE:-}" ] && b=$(space "$KCAST_BASE/kcast" "$sp")
  case $sp in
  pnpoly) d="#define block_size_x 256\n#define tile_size 4\n#define between_method 0\n#define use_method 0"
          f=$rtx/src/pnpoly.cu; tg=0.3; name="pnpoly (shared)" ;;
  convolution) d="#define block_size_x 32\n#define block_size_y 8\n#define tile_size_x 2\n#define tile_size_y 4\n#define read_only 1\n#define use_padding 1\n#define filter_height 15\n#define filter_width 15"
          f=$rtx/src/convolution.cu; tg=0.5; name="older convolution (shared)" ;;
  long) d="#define block_size_x 128"
        f=$here/../tests/tuning/unroll_sum.cu; tg=3; name="long loop (1,536 steps)" ;;
  esac
  printf "$d\n#define grid_size_x 64\n#define grid_size_y 64\n#define grid_size_z 1\n" > "$tmp/one-nvcc.cu"
  # (the importer's handling of loop_unroll_factor_*: the value replaces the pragma's argument)
  sed 's/#pragma unroll loop_unroll_factor_k/#pragma unroll 4/' "$f" >> "$tmp/one-nvcc.cu"
  printf '  %-28s %10s %10s %16s  <= %s s\n' "$name" "$a" "$b" "$(one_nvcc "$tmp/one-nvcc.cu")" "$tg"
done
