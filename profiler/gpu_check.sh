#!/usr/bin/env bash
# gpu_check.sh -- `make gpu-check`: check `kcast profile` on a real NVIDIA GPU
# and collect ground truth into datasets/data/<gpu>.db (docs/gpu-check.md).
#
# Steps, each under its own `timeout`, the whole within 8 minutes:
#   build     kcast, libkcast_inject.so, tests/programs and the suite
#             (sm_90 + PTX); or, with KCAST_BUNDLE=DIR, the prebuilt
#             bundle of `make gpu-bundle` (a GPU machine without the
#             build's packages)
#   timing    gpu_check under kcast profile: durations within 5 % of the
#             program's cudaEvent timings for launches >= 50 us; launch
#             sequence (lseq order and kernel names) identical
#   repeat    --repeat 5: the program still prints PASS (results unchanged),
#             5 time_ns rows per launch, no low-confidence rows
#   power     --power on a 1.5 s kernel: power_w inside the board's range
#             (20 W .. 1.05 x NVML max power limit), energy_j = power x time
#   pwindow   --power on the short kernels: each launch measured over a
#             >= 100 ms power window, program still passes, power in range
#   suite     datasets/suite/suite.txt (or tests/programs): time (--repeat 5)
#             for every run first
#   overhead  suite wall time with and without injection (time-only), for
#             at most OVH_S (45) seconds; target <= 3 % (WARN above it)
#   emucheck  Nsight Compute counters of one run per suite program next to
#             the emulator's features (tools/emu-vs-ncu.sh), EMU_S (60) s
#   suite-pw  power (--power --windows-per-config 3 --repeat 5 --rep-offset 5,
#             100 ms windows) for as many runs as the time left allows
#             (WARN when cut short)
# Prints a summary table last; exits 1 if a check failed, keeping the data.
# KCAST_GPU_RESULTS=DIR: copy the dataset, its provenance, the log and the
# scratch folder (as gpu-check.tgz) there at the end.
set -u -o pipefail
cd "$(dirname "$0")/.." || exit 1

BUILD=${BUILD:-build}
JOBS=${JOBS:-8}
START=$(date +%s)
# No new step after GPU_CHECK_S seconds (default 450: the summary comes by
# 480 s); a shorter budget shortens the power pass first, then the times.
GPU_CHECK_S=${GPU_CHECK_S:-450}
case $GPU_CHECK_S in ''|*[!0-9]*) echo "gpu-check: GPU_CHECK_S must be seconds" >&2; exit 2 ;; esac
DEADLINE=$((START + GPU_CHECK_S))
WORK=$BUILD/gpu-check
rm -rf "$WORK"
mkdir -p "$WORK" datasets/data
LOG=$WORK/log.txt
BUNDLE=${KCAST_BUNDLE:-}
if [ -n "$BUNDLE" ]; then
  BUNDLE=$(cd "$BUNDLE" && pwd) || exit 1
  K=$BUNDLE/bin/kcast
  PROGDIR=$BUNDLE/programs SUITEDIR=$BUNDLE/suite
  export LD_LIBRARY_PATH=$BUNDLE/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
else
  K=$BUILD/kcast
  PROGDIR=$BUILD/programs SUITEDIR=$BUILD/suite
  # the suite programs link the toolkit's shared CUDA runtime
  CUDA_LIB=$(dirname "$(dirname "$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)")")/lib64
  export LD_LIBRARY_PATH=$CUDA_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
PROG=$PROGDIR/gpu_check
NAMES=() RESULTS=() DETAILS=()
FAILED=0

record() {
  NAMES+=("$1"); RESULTS+=("$2"); DETAILS+=("$3")
  [ "$2" = FAIL ] && FAILED=1
  echo "[$2] $1: $3" | tee -a "$LOG" >&2
}
left() { echo $((DEADLINE - $(date +%s))); }
# run with a timeout of min($1, time left), at least 5 s
t() {
  local lim=$1; shift
  local l; l=$(left); [ "$l" -lt "$lim" ] && lim=$l; [ "$lim" -lt 5 ] && lim=5
  timeout --kill-after=5 "$lim" "$@"
}
now_ns() { date +%s%N; }
results() {  # copy what a run produced to $KCAST_GPU_RESULTS
  local dst=${KCAST_GPU_RESULTS:-}
  [ -n "$dst" ] || return 0
  mkdir -p "$dst" || return 0
  [ -n "${GPU:-}" ] && cp -f "datasets/data/$GPU.db" "datasets/data/$GPU.md" "$dst/" 2>/dev/null
  cp -f "$LOG" "$dst/" 2>/dev/null
  tar czf "$dst/gpu-check.tgz" -C "$(dirname "$WORK")" "$(basename "$WORK")" 2>/dev/null
}
summary() {
  echo
  echo "== make gpu-check summary ($(( $(date +%s) - START )) s) =="
  printf '%-10s %-5s %s\n' CHECK RESULT DETAIL
  for i in "${!NAMES[@]}"; do
    printf '%-10s %-5s %s\n' "${NAMES[$i]}" "${RESULTS[$i]}" "${DETAILS[$i]}"
  done
  [ "$FAILED" = 0 ] && echo "gpu-check: all checks passed" || echo "gpu-check: FAILED"
  results
}

# ---------------------------------------------------------------- build --
if [ -n "$BUNDLE" ]; then
  # The bundle's CUPTI only where this machine has none of its own: the
  # injection library tries it after its own search.
  export KCAST_CUPTI_FALLBACK=$BUNDLE/cupti/libcupti.so.13
  if [ -x "$K" ] && [ -f "$BUNDLE/bin/libkcast_inject.so" ] && [ -x "$PROG" ] &&
     "$K" version >"$WORK/build.log" 2>&1; then
    record build PASS "prebuilt bundle ($(sed -n 's/^tree: //p' "$BUNDLE/MANIFEST"), nvcc $(sed -n 's/^nvcc: //p' "$BUNDLE/MANIFEST")), its CUPTI as the fallback"
  else
    record build FAIL "bundle $BUNDLE unusable: $(tail -n 2 "$WORK/build.log" | tr '\n' ' ')"
    summary; exit 1
  fi
elif t 300 make BUILD="$BUILD" -j"$JOBS" all programs suite >"$WORK/build.log" 2>&1 &&
   [ -x "$K" ] && [ -f "$BUILD/libkcast_inject.so" ] && [ -x "$PROG" ]; then
  record build PASS "kcast, libkcast_inject.so, programs, suite ($(( $(date +%s) - START )) s)"
else
  record build FAIL "see $WORK/build.log: $(tail -n 3 "$WORK/build.log" | tr '\n' ' ')"
  summary; exit 1
fi

# ------------------------------------------------------------- identity --
GPU_FULL=$(t 20 nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
DRIVER=$(t 20 nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n 1)
PLIM=$(t 20 nvidia-smi --query-gpu=power.min_limit,power.max_limit --format=csv,noheader,nounits 2>/dev/null | head -n 1)
PMIN=$(echo "$PLIM" | cut -d, -f1 | tr -d ' ')
PMAX=$(echo "$PLIM" | cut -d, -f2 | tr -d ' ')
CUDA_V=$(nvcc --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p')
[ -n "$BUNDLE" ] && CUDA_V="${CUDA_V:-none on this machine}; programs built with nvcc $(sed -n 's/^nvcc: //p' "$BUNDLE/MANIFEST")"
if [ -z "$GPU_FULL" ]; then
  record gpu FAIL "nvidia-smi reports no GPU"
  summary; exit 1
fi
GPU=$(echo "$GPU_FULL" | sed -e 's/^NVIDIA //' -e 's/^Tesla //' -e 's/[^A-Za-z0-9._]\+/-/g' -e 's/^-//' -e 's/-$//')
record gpu PASS "$GPU_FULL (key $GPU), driver $DRIVER, CUDA $CUDA_V, power limits $PMIN..$PMAX W"

# Column of METRIC@GPU in an export; prints "lseq kernel value" per row.
export_col() {  # db metric
  t 60 "$K" dataset export "$1" -o "$WORK/export.csv" >/dev/null 2>>"$LOG" || return 1
  awk -F, -v col="$2@$GPU" 'NR==1 { for (i = 1; i <= NF; i++) if ($i == col) c = i; next }
                            { print $5, $6, (c ? $c : "") }' "$WORK/export.csv"
}

# --------------------------------------------------------------- timing --
t 120 "$K" profile -o "$WORK/check.db" --gpu "$GPU" -- "$PROG" >"$WORK/check.out" 2>"$WORK/check.err"
rc=$?
if [ $rc -ne 0 ] || ! grep -q '^PASS' "$WORK/check.out"; then
  record timing FAIL "exit $rc: $(tail -n 2 "$WORK/check.err" | tr '\n' ' ')"
else
  export_col "$WORK/check.db" time_ns >"$WORK/check.rows"
  res=$(awk 'FNR == NR { kern[$1] = $2; tns[$1] = $3; nrow++; next }
             $1 == "event_ms" { n++; l = $2
               if (!(l in kern) || index(kern[l], $3) == 0) seq++
               else if ($4 >= 0.05) { c++; e = (tns[l] / 1e6 - $4) / $4; if (e < 0) e = -e
                 if (e > m) m = e; if (e > 0.05) bad++ } }
             END { if (nrow != n) seq++
               printf "%d %d %d %d %.2f", n, nrow, seq + 0, bad + 0, m * 100 }' \
        "$WORK/check.rows" "$WORK/check.out")
  read -r n nrow seq bad maxe <<<"$res"
  if [ "$n" -gt 0 ] && [ "$seq" = 0 ] && [ "$bad" = 0 ]; then
    record timing PASS "$n launches, sequence identical, max |cupti-event|/event $maxe % (>= 50 us)"
  else
    record timing FAIL "$n event lines vs $nrow rows, $seq sequence mismatches, $bad over 5 % (max $maxe %)"
  fi
fi

# --------------------------------------------------------------- repeat --
t 180 "$K" profile --repeat 5 -o "$WORK/rep.db" --gpu "$GPU" -- "$PROG" >"$WORK/rep.out" 2>"$WORK/rep.err"
rc=$?
nl=$(grep -c '^event_ms' "$WORK/rep.out")
nm=$(t 30 "$K" dataset stats "$WORK/rep.db" --format json 2>/dev/null | grep -o '"measurements": *[0-9]*' | head -n 1 | grep -o '[0-9]*$')
if [ $rc -eq 0 ] && grep -q '^PASS' "$WORK/rep.out" && [ "${nm:-0}" = $((nl * 5)) ] &&
   ! grep -q 'low-confidence' "$WORK/rep.err"; then
  record repeat PASS "results unchanged (PASS), $nm time rows for $nl launches x 5"
else
  record repeat FAIL "exit $rc, ${nm:-?} rows for $nl launches x 5: $(grep 'kcast' "$WORK/rep.err" | tail -n 2 | tr '\n' ' ')"
fi

# ---------------------------------------------------------------- power --
t 120 "$K" profile --power --repeat 3 -o "$WORK/pw.db" --gpu "$GPU" -- "$PROG" --long >"$WORK/pw.out" 2>"$WORK/pw.err"
rc=$?
pw=$(export_col "$WORK/pw.db" power_w | awk '$1 == 0 { print $3 }')
en=$(export_col "$WORK/pw.db" energy_j | awk '$1 == 0 { print $3 }')
tn=$(export_col "$WORK/pw.db" time_ns | awk '$1 == 0 { print $3 }')
if [ $rc -eq 0 ] && [ -n "$pw" ] && [ -n "$PMAX" ] &&
   awk -v p="$pw" -v mx="$PMAX" -v e="$en" -v tn="$tn" \
     'BEGIN { ok = p >= 20 && p <= 1.05 * mx; if (e != "" && tn > 0) { q = e / (tn * 1e-9) / p; ok = ok && q > 0.9 && q < 1.1 }; exit !ok }'; then
  record power PASS "1.5 s kernel: $pw W (range 20..$PMAX W), $en J per run"
else
  record power FAIL "exit $rc, power_w '${pw}' W, energy_j '${en}', limits '$PMIN..$PMAX': $(tail -n 1 "$WORK/pw.err")"
fi

# Power windows: every launch of the short-kernel run (10 us .. 20 ms)
# measured over a >= 100 ms window of back-to-back executions; the program
# still passes (memory restored), no low-confidence row, every power_w in
# the board's range.
t 120 "$K" profile --power -o "$WORK/pwin.db" --gpu "$GPU" -- "$PROG" >"$WORK/pwin.out" 2>"$WORK/pwin.err"
rc=$?
summ=$(grep '^kcast profile:' "$WORK/pwin.err" | tail -n 1)
step=$(echo "$summ" | sed -n 's/.*energy counter steps every \([0-9.]*\) ms.*/\1/p')
nwin=$(echo "$summ" | sed -n 's/.*(\([0-9]*\) over power windows.*/\1/p')
nl=$(grep -c '^event_ms' "$WORK/pwin.out")
range=$(export_col "$WORK/pwin.db" power_w | awk -v mx="${PMAX:-0}" '
  { n++; if ($3 == "" || $3 < 20 || $3 > 1.05 * mx) bad++; if (lo == "" || $3 < lo) lo = $3; if ($3 > hi) hi = $3 }
  END { printf "%d %d %.0f %.0f", n, bad + 0, lo, hi }')
read -r npw badpw lopw hipw <<<"$range"
if [ $rc -eq 0 ] && grep -q '^PASS' "$WORK/pwin.out" && [ "${nwin:-0}" = "$nl" ] &&
   [ "$npw" = "$nl" ] && [ "$badpw" = 0 ] && ! echo "$summ" | grep -q 'low-confidence'; then
  record pwindow PASS "$nl launches, each over a power window: $lopw..$hipw W; energy counter steps every ${step:-?} ms"
else
  record pwindow FAIL "exit $rc, ${nwin:-?} windows for $nl launches, $badpw of $npw power_w outside 20..$PMAX W: $summ"
fi

# ---------------------------------------------------------------- suite --
# One line per run: PROGRAM [ARGS]; PROGRAM relative to the repo root or a
# name in the suite or programs folder.  Commands in the loops below read
# /dev/null, not the list.
SUITE=$WORK/suite.txt
if [ -f datasets/suite/suite.txt ]; then
  # a `sample=N` prefix only tells the CPU emulator to sample; a GPU runs
  # the whole program
  grep -v '^[[:space:]]*\(#\|$\)' datasets/suite/suite.txt |
    sed 's/^[[:space:]]*sample=[0-9]*[[:space:]]*//' >"$SUITE"
  SUITE_SRC=datasets/suite/suite.txt
else
  : >"$SUITE"
  for p in "$PROGDIR"/*; do [ -x "$p" ] && echo "$p" >>"$SUITE"; done
  SUITE_SRC="$PROGDIR (no datasets/suite/suite.txt)"
fi
resolve() {
  if [ -x "$1" ]; then echo "$1"
  elif [ -x "$SUITEDIR/$1" ]; then echo "$SUITEDIR/$1"
  elif [ -x "$PROGDIR/$1" ]; then echo "$PROGDIR/$1"
  else echo ""; fi
}

# Ground truth into datasets/data/<gpu>.db: time first (every run), then
# the overhead runs (at most OVH_S seconds), then power with what is left.
DB=datasets/data/$GPU.db
OVH_S=${OVH_S:-45}
suite_pass() {  # time|power; sets ok, tried, skipped
  ok=0 tried=0 skipped=0
  while read -r prog args; do
    exe=$(resolve "$prog")
    if [ -z "$exe" ]; then skipped=$((skipped + 1)); continue; fi
    [ "$(left)" -lt "$2" ] && { skipped=$((skipped + 1)); continue; }
    tried=$((tried + 1))
    if [ "$1" = time ]; then
      t 90 "$K" profile --repeat 5 --gpu "$GPU" --bench kcast-suite --app "$(basename "$prog")" \
        -o "$DB" -- "$exe" $args </dev/null >>"$WORK/suite.out" 2>>"$WORK/suite.err" && ok=$((ok + 1))
    else
      t 120 "$K" profile --power --windows-per-config 3 --repeat 5 --rep-offset 5 --gpu "$GPU" --bench kcast-suite \
        --app "$(basename "$prog")" -o "$DB" -- "$exe" $args </dev/null \
        >>"$WORK/suite-power.out" 2>>"$WORK/suite-power.err" && ok=$((ok + 1))
    fi
  done <"$SUITE"
}
suite_pass time $((OVH_S + 30))
if [ $tried -gt 0 ] && [ $ok = $tried ] && [ $skipped = 0 ]; then
  record suite PASS "$tried runs from $SUITE_SRC: time (5 runs per launch) into $DB"
else
  record suite FAIL "$tried runs from $SUITE_SRC: $ok timed, $skipped skipped (see $WORK/suite.err)"
fi

# Overhead: time-only profile vs plain run, best of two, summed over the
# suite runs OVH_S seconds allow; and the program with the injection
# library alone (no kcast around it: no start-up check, no ingest), which
# tells what the instrumentation inside the program costs.
plain=0 prof=0 inproc=0 nrun=0 ovh_end=$(( $(date +%s) + OVH_S ))
INJ=$(cd "$(dirname "$K")" && pwd)/libkcast_inject.so  # beside kcast, built or bundled
while read -r prog args; do
  [ "$(date +%s)" -ge "$ovh_end" ] || [ "$(left)" -lt 20 ] && break
  exe=$(resolve "$prog"); [ -z "$exe" ] && continue
  best_a=0 best_b=0 best_c=0
  for _ in 1 2; do
    a0=$(now_ns); t 60 "$exe" $args </dev/null >/dev/null 2>&1; a1=$(now_ns)
    b0=$(now_ns); t 60 "$K" profile -o "$WORK/ovh.db" --gpu "$GPU" -- "$exe" $args </dev/null >/dev/null 2>&1; b1=$(now_ns)
    c0=$(now_ns)
    CUDA_INJECTION64_PATH=$INJ KCAST_PROFILE_OUT=$WORK/ovh.rec KCAST_PROFILE_REPEAT=1 \
      KCAST_PROFILE_POWER=0 t 60 "$exe" $args </dev/null >/dev/null 2>&1
    c1=$(now_ns)
    da=$((a1 - a0)); db=$((b1 - b0)); dc=$((c1 - c0))
    { [ $best_a = 0 ] || [ $da -lt $best_a ]; } && best_a=$da
    { [ $best_b = 0 ] || [ $db -lt $best_b ]; } && best_b=$db
    { [ $best_c = 0 ] || [ $dc -lt $best_c ]; } && best_c=$dc
  done
  plain=$((plain + best_a)); prof=$((prof + best_b)); inproc=$((inproc + best_c)); nrun=$((nrun + 1))
done <"$SUITE"
if [ $nrun -gt 0 ] && [ $plain -gt 0 ]; then
  ovh=$(awk -v a=$plain -v b=$prof 'BEGIN { printf "%.1f", (b - a) * 100.0 / a }')
  inp=$(awk -v a=$plain -v c=$inproc 'BEGIN { printf "%.1f", (c - a) * 100.0 / a }')
  detail="$nrun runs: $(awk -v a=$plain 'BEGIN{printf "%.2f", a/1e9}') s plain, $(awk -v b=$prof 'BEGIN{printf "%.2f", b/1e9}') s profiled: +$ovh % (target <= 3 %); the injection library alone: +$inp %"
  if awk -v o="$ovh" 'BEGIN { exit !(o <= 3) }'; then record overhead PASS "$detail"; else record overhead WARN "$detail"; fi
else
  record overhead WARN "not measured (no suite program ran in time)"
fi

# Emulator check: Nsight Compute's counters (ncu, when installed) for the
# first run of each suite program the emulator ran in full, for at most
# EMU_S seconds; --clock-control none leaves the clocks alone.  Raw CSVs in
# $WORK/ncu; tools/emu-vs-ncu.sh sets them beside the emulator's features.
EMU_S=${EMU_S:-60}
NCU=$(command -v ncu 2>/dev/null || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
if [ -z "$NCU" ]; then
  record emucheck SKIP "ncu not found"
elif [ "$(left)" -lt 40 ]; then
  record emucheck SKIP "no time left"
else
  mkdir -p "$WORK/ncu"
  : >"$WORK/ncu/runs.txt"
  t 60 "$NCU" --query-metrics >"$WORK/ncu/query.txt" 2>&1
  mets=""
  for m in launch__grid_size launch__block_size launch__registers_per_thread gpu__time_duration.sum \
           smsp__inst_executed.sum smsp__thread_inst_executed.sum \
           l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum \
           l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum \
           l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum l1tex__t_requests_pipe_lsu_mem_global_op_st.sum \
           l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum l1tex__t_requests_pipe_lsu_mem_global_op_red.sum \
           smsp__inst_executed_op_shared_ld.sum smsp__inst_executed_op_shared_st.sum \
           smsp__inst_executed_op_shared_atom.sum \
           l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum \
           l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum \
           dram__bytes_read.sum dram__bytes_write.sum; do
    # keep the metrics this ncu knows (its query lists base names)
    grep -q "^${m%.*}[[:space:]]" "$WORK/ncu/query.txt" 2>/dev/null && mets="$mets${mets:+,}$m"
  done
  [ -n "$mets" ] || mets=launch__grid_size,smsp__inst_executed.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
  emu_end=$(( $(date +%s) + EMU_S )) nrun=0 nok=0 done_apps=" "
  grep -v '^[[:space:]]*\(#\|$\|sample=\)' datasets/suite/suite.txt >"$WORK/ncu/full.txt"
  while read -r prog args; do
    [ "$(date +%s)" -ge "$emu_end" ] || [ "$(left)" -lt 30 ] && break
    case $done_apps in *" $prog "*) continue ;; esac
    exe=$(resolve "$prog"); [ -z "$exe" ] && continue
    done_apps="$done_apps$prog "
    nrun=$((nrun + 1))
    if t 30 "$NCU" --clock-control none --csv --print-kernel-base mangled --metrics "$mets" \
         "$exe" $args </dev/null >"$WORK/ncu/$nrun.csv" 2>>"$WORK/ncu/err.txt"; then
      nok=$((nok + 1))
      printf '%s\t%s\t%s\n' "$nrun.csv" "$(basename "$prog")" "$args" >>"$WORK/ncu/runs.txt"
    fi
  done <"$WORK/ncu/full.txt"
  if [ "$nok" -gt 0 ] && sh tools/emu-vs-ncu.sh "$WORK/ncu" datasets/data/suite-features.db "$K" \
       >"$WORK/ncu/compare.txt" 2>>"$WORK/ncu/err.txt"; then
    record emucheck PASS "$nok of $nrun runs under ncu, $(echo "$mets" | tr ',' '\n' | wc -l) metrics; $(sed -n 1p "$WORK/ncu/compare.txt"); global sectors GPU/emulator median $(awk '$1 == "global" && $2 == "sectors" { print $4 }' "$WORK/ncu/compare.txt") (table in ncu/compare.txt)"
  else
    record emucheck WARN "$nok of $nrun runs under ncu; no comparison: $(tail -n 1 "$WORK/ncu/err.txt" 2>/dev/null)"
  fi
fi

# Power: --power (100 ms windows, at most 3 per launch configuration of a
# run: 767 windows for the suite's 2,364 launches) as far as the time left
# allows; runs it cannot reach are listed, not guessed.
suite_pass power 15
if [ $tried -gt 0 ] && [ $ok = $tried ] && [ $skipped = 0 ]; then
  record suite-pw PASS "$tried runs: power and energy per launch (100 ms windows) into $DB"
elif [ $tried -gt 0 ] && [ $ok = $tried ]; then
  record suite-pw WARN "power for $ok runs; $skipped not reached in the time (see $WORK/suite-power.err)"
else
  record suite-pw FAIL "$tried runs: $ok with power, $skipped skipped (see $WORK/suite-power.err)"
fi

# ----------------------------------------------------------- provenance --
{
  echo "# $GPU ground truth (kcast profile)"
  echo
  echo "- GPU: $GPU_FULL (key \`$GPU\`), power limits $PMIN..$PMAX W"
  echo "- driver: $DRIVER; CUDA toolkit: $CUDA_V"
  echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ); host: $(uname -nrm)"
  if [ -n "$BUNDLE" ]; then
    echo "- command: \`KCAST_BUNDLE=DIR profiler/gpu_check.sh\` on the bundle of \`make gpu-bundle\` (tree $(sed -n 's/^tree: //p' "$BUNDLE/MANIFEST"), built $(sed -n 's/^built: //p' "$BUNDLE/MANIFEST")), $("$K" version 2>/dev/null)"
  else
    echo "- command: \`make gpu-check\` (profiler/gpu_check.sh), $("$K" version 2>/dev/null)"
  fi
  echo "- suite: $SUITE_SRC; time: \`kcast profile --repeat 5\`; power: \`kcast profile --power --windows-per-config 3 --repeat 5 --rep-offset 5\` (100 ms power windows, at most 3 per launch configuration of a run)"
  echo
  echo "| check | result | detail |"
  echo "| --- | --- | --- |"
  for i in "${!NAMES[@]}"; do echo "| ${NAMES[$i]} | ${RESULTS[$i]} | ${DETAILS[$i]} |"; done
} >"datasets/data/$GPU.md"

summary
exit $FAILED
