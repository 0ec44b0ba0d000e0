#!/bin/sh
# emu-vs-ncu.sh -- the CPU emulator's counts next to the GPU's own, launch by
# launch: the features `kcast run` recorded for the kernel suite
# (datasets/data/suite-features.db) against the hardware counters Nsight
# Compute read on a GPU for the same runs (collected by `make gpu-check`'s
# emucheck step into $BUILD/gpu-check/ncu/).
#
# Why: the emulator's memory and divergence features are meant to be what
# the hardware does (docs/features.md defines them so); this says how far
# that holds, per quantity, before a model is trained on them.  Pairs:
#
#   launch check     launch.ctas              launch__grid_size (must be 1.0:
#                                             proves the launches joined)
#   global sectors   mem.global_sectors       l1tex__t_sectors_pipe_lsu_mem_global_op_{ld,st,atom,red}.sum
#   global requests  mem.global_accesses      l1tex__t_requests_pipe_lsu_mem_global_op_{ld,st,atom,red}.sum
#   shared accesses  mem.shared_accesses      smsp__inst_executed_op_shared_{ld,st,atom}.sum
#   bank conflicts   mem.shared_bank_replays  l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{ld,st}.sum
#   warp insns       ctrl.warp_insns (PTX)    smsp__inst_executed.sum (SASS)
#   active lanes     ctrl.active_lane_ratio   smsp__thread_inst_executed.sum / 32 / smsp__inst_executed.sum
#   DRAM / footprint mem.footprint_bytes      dram__bytes_read.sum + dram__bytes_write.sum
#
# A pair is compared where both sides are known and the emulator's value
# is not 0 (0 = 0 launches are counted apart).  Output: per pair the
# launches compared, the median, 10th and 90th percentile of GPU/emulator,
# and the share within 5 %; plus DIR/compare.csv (one row per launch and
# pair).
#
# Input: DIR/runs.txt, one line per profiled run: FILE<TAB>APP<TAB>DATASET
# (FILE an ncu CSV in DIR, as `ncu --csv --print-kernel-base mangled`
# writes it: a header naming "ID", "Kernel Name", "Metric Name" and "Metric
# Value", then one row per launch and metric; ncu's ID is the launch's
# position in the run, which is kcast's lseq when every launch was
# profiled).  Values may carry thousands separators; lines that are not
# CSV rows (==PROF== messages) are skipped.
#
# usage: tools/emu-vs-ncu.sh DIR [FEATURES_DB] [KCAST]
set -eu
dir=${1:?usage: tools/emu-vs-ncu.sh DIR [FEATURES_DB] [KCAST]}
root=$(cd "$(dirname "$0")/.." && pwd)
db=${2:-$root/datasets/data/suite-features.db}
kcast=${3:-${KCAST:-$root/build/kcast}}
[ -f "$dir/runs.txt" ] || { echo "emu-vs-ncu: $dir/runs.txt: no such file" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kcast-emu-ncu.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
"$kcast" dataset export "$db" --format csv -o "$tmp/features.csv" >/dev/null

awk -v dir="$dir" -v out="$dir/compare.csv" '
# Split one CSV record into f[1..n] (quoted fields, "" escapes); returns n.
function csv(line, f,    n, i, c, q, cur) {
  n = 0; cur = ""; q = 0
  for (i = 1; i <= length(line); i++) {
    c = substr(line, i, 1)
    if (q) {
      if (c == "\"") { if (substr(line, i + 1, 1) == "\"") { cur = cur c; i++ } else q = 0 }
      else cur = cur c
    } else if (c == "\"") q = 1
    else if (c == ",") { f[++n] = cur; cur = "" }
    else cur = cur c
  }
  f[++n] = cur
  return n
}
function num(s) { gsub(/[, ]/, "", s); return (s ~ /^-?[0-9.]+([eE][-+]?[0-9]+)?$/) ? s + 0 : "" }
function has(k, m) { return ((k, m) in gv) }
function g(k, m) { return has(k, m) ? gv[k, m] : 0 }
function anyof(k, list,    a, n, i) {
  n = split(list, a, " ")
  for (i = 1; i <= n; i++) if (has(k, a[i])) return 1
  return 0
}
function sum(k, list,    a, n, i, s) {
  n = split(list, a, " "); s = 0
  for (i = 1; i <= n; i++) s += g(k, a[i])
  return s
}
function add(pair, k, emu, gpu,    r, kk) {
  if (emu == "" || gpu == "") return
  if (emu == 0) { if (gpu == 0) zz[pair]++; else zn[pair]++; return }
  r = gpu / emu
  np[pair]++; rat[pair, np[pair]] = r
  if (r >= 0.95 && r <= 1.05) w5[pair]++
  split(k, kk, SUBSEP)
  printf "%s,%s,%s,%s,%.17g,%.17g,%.6g\n", kk[1], kk[2], kk[3], pair, emu, gpu, r >> out
}
function pct(pair, p,    n, i, j, t, a) {
  n = np[pair]
  for (i = 1; i <= n; i++) a[i] = rat[pair, i]
  for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
  i = int(p * (n - 1) + 1.5); if (i < 1) i = 1; if (i > n) i = n
  return a[i]
}
BEGIN {
  FS = "\t"
  L = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum"
  R = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum l1tex__t_requests_pipe_lsu_mem_global_op_st.sum l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum l1tex__t_requests_pipe_lsu_mem_global_op_red.sum"
  S = "smsp__inst_executed_op_shared_ld.sum smsp__inst_executed_op_shared_st.sum smsp__inst_executed_op_shared_atom.sum"
  B = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"
  D = "dram__bytes_read.sum dram__bytes_write.sum"
  printf "app,dataset,lseq,pair,emulator,gpu,ratio\n" > out
  npairs = split("launch check,global sectors,global requests,shared accesses,bank conflicts,warp insns,active lanes,DRAM / footprint", names, ",")
}
FILENAME ~ /features\.csv$/ {
  n = csv($0, f)
  if (FNR == 1) { for (i = 1; i <= n; i++) fc[f[i]] = i; next }
  k = f[fc["app"]] SUBSEP f[fc["dataset"]] SUBSEP f[fc["lseq"]]
  for (c in fc) if (c ~ /^(mem|ctrl|launch)\./) ev[k, c] = num(f[fc[c]])
  next
}
FILENAME ~ /runs\.txt$/ { runs[++nr] = $0; next }
END {
  for (r = 1; r <= nr; r++) {
    split(runs[r], rf, "\t")
    file = dir "/" rf[1]; app = rf[2]; ds = rf[3]
    hdr = 0; rows = 0
    while ((getline line < file) > 0) {
      if (substr(line, 1, 1) != "\"") continue
      n = csv(line, f)
      if (!hdr) {
        for (i = 1; i <= n; i++) hc[f[i]] = i
        if (!("ID" in hc) || !("Metric Name" in hc) || !("Metric Value" in hc)) { delete hc; continue }
        hdr = 1; continue
      }
      k = app SUBSEP ds SUBSEP f[hc["ID"]]
      v = num(f[hc["Metric Value"]])
      if (v != "") { gv[k, f[hc["Metric Name"]]] = v; seen[k] = 1 }
      rows++
    }
    close(file)
    if (!hdr) { printf "emu-vs-ncu: %s: no ncu CSV header (ID, Metric Name, Metric Value)\n", file > "/dev/stderr"; bad++ }
    nfiles++
  }
  for (k in seen) {
    nk++
    if (!((k, "launch.ctas") in ev)) { unjoined++; continue }
    joined++
    if (has(k, "launch__grid_size")) add(names[1], k, ev[k, "launch.ctas"], g(k, "launch__grid_size"))
    if (anyof(k, L)) add(names[2], k, ev[k, "mem.global_sectors"] + 0, sum(k, L))
    if (anyof(k, R)) add(names[3], k, ev[k, "mem.global_accesses"] + 0, sum(k, R))
    if (anyof(k, S)) add(names[4], k, ev[k, "mem.shared_accesses"] + 0, sum(k, S))
    if (anyof(k, B)) add(names[5], k, ev[k, "mem.shared_bank_replays"] + 0, sum(k, B))
    if (has(k, "smsp__inst_executed.sum")) add(names[6], k, ev[k, "ctrl.warp_insns"] + 0, g(k, "smsp__inst_executed.sum"))
    if (has(k, "smsp__inst_executed.sum") && has(k, "smsp__thread_inst_executed.sum") && g(k, "smsp__inst_executed.sum") > 0)
      add(names[7], k, ev[k, "ctrl.active_lane_ratio"] + 0,
          g(k, "smsp__thread_inst_executed.sum") / 32 / g(k, "smsp__inst_executed.sum"))
    if (anyof(k, D)) add(names[8], k, ev[k, "mem.footprint_bytes"] + 0, sum(k, D))
  }
  printf "%d ncu files, %d launches with counters, %d joined to emulator features, %d not\n", nfiles, nk, joined, unjoined
  printf "%-17s %8s %9s %9s %9s %9s %s\n", "pair", "launches", "median", "p10", "p90", "within5%", "(GPU / emulator)"
  for (i = 1; i <= npairs; i++) {
    p = names[i]
    if (!np[p]) { printf "%-17s %8d %9s %9s %9s %9s%s\n", p, 0, "-", "-", "-", "-", (zz[p] + zn[p]) ? sprintf("  (%d both 0, %d emulator 0)", zz[p], zn[p]) : ""; continue }
    printf "%-17s %8d %9.4f %9.4f %9.4f %8.1f%%%s\n", p, np[p], pct(p, 0.5), pct(p, 0.1), pct(p, 0.9),
           100 * w5[p] / np[p], (zz[p] + zn[p]) ? sprintf("  (%d both 0, %d emulator 0)", zz[p], zn[p]) : ""
  }
  exit (bad || !joined) ? 1 : 0
}' "$tmp/features.csv" "$dir/runs.txt"
