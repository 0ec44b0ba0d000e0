#!/bin/sh
# run_bench.sh BUILD [QUICK] -- kcast run on an iterative program of small
# launches (tests/programs/rt_steps.cu: launches of one 1024-thread kernel,
# 18,432 thread-instructions each), with and without a busy neighbour.
#
# Figures (best of REPS runs; the machine is shared):
#   per launch     the program's own time from its first launch to its last
#                  result, divided by the launches (start-up excluded),
#                  default threads and --threads 1; also for launches of 512
#                  threads (9,216 thread-instructions, the size of the target)
#   1000 launches  that time for 1000 launches (target < 0.5 s)
#   throughput     thread-instructions per second of the whole launch phase,
#                  against the emulator's single-thread rate on the same
#                  kernel (one launch of 1M threads, --threads 1, the
#                  emulator's own time): the target is at most 2x slower
#   neighbour      the same beside a process keeping every core busy
#
# KCAST=path runs another kcast (a build of another tree, to compare).
set -eu
build=${1:?usage: run_bench.sh BUILD [QUICK]}
quick=${2:-0}
kcast=${KCAST:-$build/kcast}
prog=$build/bench/rt_steps
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$build/bench"
if [ ! -x "$prog" ] || [ "$here/../tests/programs/rt_steps.cu" -nt "$prog" ]; then
  "$build/kcast" nvcc -O2 -o "$prog.tmp" "$here/../tests/programs/rt_steps.cu" && mv "$prog.tmp" "$prog"
fi
reps=5
launches=1000
if [ "$quick" = 1 ]; then reps=2; launches=300; fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kcast-bench-XXXXXX")
neighbour=""
cleanup() {
  for p in $neighbour; do kill "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

# best per-launch microseconds of reps runs: run_small THREADS-OPTION [N]
run_small() {
  best=""
  i=0
  while [ $i -lt $reps ]; do
    rm -f "$tmp/s.db"
    us=$("$kcast" run -o "$tmp/s.db" $1 -- "$prog" $launches 0 ${2:-1024} 2>/dev/null |
         sed -n 's/.* \([0-9.]*\) us per launch/\1/p')
    [ -n "$us" ] || { echo "run_bench: rt_steps failed under $kcast" >&2; exit 1; }
    if [ -z "$best" ] || awk -v a="$us" -v b="$best" 'BEGIN{exit !(a < b)}'; then best=$us; fi
    i=$((i + 1))
  done
  echo "$best"
}

# the emulator's single-thread rate on this kernel (M thread-insns/s), from
# kcast run's table: kernel, launches, CTAs, thread-insns, emu-seconds, name
single_rate() {
  best=0
  i=0
  while [ $i -lt $reps ]; do
    rm -f "$tmp/b.db"
    r=$("$kcast" run -o "$tmp/b.db" --threads 1 -- "$prog" 1 0 1048576 2>&1 >/dev/null |
        awk '$1 ~ /^_Z/ && $5 > 0 {printf "%.1f", $4 / $5 / 1e6}')
    if awk -v a="$r" -v b="$best" 'BEGIN{exit !(a > b)}'; then best=$r; fi
    i=$((i + 1))
  done
  echo "$best"
}

insns=18432 # thread-instructions per launch of 1024 threads (rt_steps 1000 0)
report() {
  label=$1
  dflt=$(run_small "")
  one=$(run_small "--threads 1")
  half=$(run_small "" 512)
  rate=$(single_rate)
  awk -v l="$label" -v d="$dflt" -v o="$one" -v h="$half" -v r="$rate" -v k=$insns 'BEGIN {
    tp = k / (d * 1e-6) / 1e6
    printf "%-22s %12.1f %12.1f %14.3f %12.1f %12.1f %12.1f %8.2fx\n", l, d, o, d * 1000 / 1e6, h,
           tp, r, r / tp
  }'
}

cores=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
echo "kcast run, small launches ($launches launches of 1024 threads, $insns thread-insns each; best of $reps)"
echo "kcast: $kcast"
echo
printf "%-22s %12s %12s %14s %12s %12s %12s %9s\n" "" "us/launch" "us/launch" "1000 launches" \
  "us/launch" "whole-prog" "1-thread" "ratio"
printf "%-22s %12s %12s %14s %12s %12s %12s %9s\n" "" "(default)" "(1 thread)" "s (default)" \
  "9216 insns" "M insn/s" "M insn/s" ""
report "idle machine"
i=0
while [ $i -lt "$cores" ]; do
  sh -c 'while :; do :; done' &
  neighbour="$neighbour $!"
  i=$((i + 1))
done
sleep 0.5
report "busy neighbour ($cores)"
echo
echo "targets: <= 100 us per launch and 1000 launches < 0.5 s beside the neighbour;"
echo "         whole-program rate within 2x of the single-thread rate (ratio <= 2.00x)"
