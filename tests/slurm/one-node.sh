#!/bin/sh
# one-node.sh -- a one-node Slurm cluster on this machine, from Debian's
# packages, for tests: munged with a key written here, slurmctld and slurmd
# in the foreground with a minimal slurm.conf, all state in a private
# temporary folder.  Then a suite's features are collected three ways and
# compared: `kcast suite run` here with -j 1 (and -j 2 with TIMES=1), and as
# a 4-task Slurm array (tools/slurm/submit.sh) with its merge step.
#
#   tests/slurm/one-node.sh KCAST BINDIR MANIFEST WORKDIR
#
# Writes WORKDIR/single.db (the local run), WORKDIR/array/features-{0..3}.db
# and WORKDIR/array/features.db (the merged shards), prints "wall <what> <s>"
# lines and each job's limits ("slurm: job ID TimeLimit=.. MinMemoryNode=..").
# The jobs see TMPDIR=WORKDIR/node-tmp as their node-local scratch and
# source WORKDIR/setup.sh (KCAST_SLURM_SETUP, the site hook), which says
# "setup hook ran" in their output.  Exits 0 (TIMES=1 adds local runs with the default threads at
# -j 1 and -j 2 for comparison; COSTS=DB balances the shards by the times
# recorded in DB); 77 (with the reason on stdout) when Slurm cannot be
# brought up here (not root, packages missing, daemons do not start); 1 on
# a failure.  Every daemon it starts is stopped on every way out (trap),
# and whatever still carries the cluster's configuration is killed; a run
# is bounded (daemons up in 30 s, jobs done in JOB_WAIT seconds, default 300).
set -u
kcast=$1 bindir=$2 manifest=$3 work=$4
JOB_WAIT=${JOB_WAIT:-300}
here=$(cd "$(dirname "$0")/../.." && pwd)

skip() { echo "skip: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "not root (slurmd runs jobs as root here)"
for t in munged slurmctld slurmd sbatch squeue sinfo scontrol scancel; do
  command -v "$t" > /dev/null 2>&1 || PATH=$PATH:/usr/sbin:/sbin
  command -v "$t" > /dev/null 2>&1 || skip "$t not installed (make deps installs slurmctld, slurmd, slurm-client, munge)"
done

state=$(mktemp -d "${TMPDIR:-/tmp}/kcast-slurm-XXXXXX") || exit 1
chmod 700 "$state"
pids=""
cleanup() {
  rc=$?
  trap - EXIT INT TERM HUP
  if [ -n "${SLURM_CONF:-}" ]; then
    scancel --quiet --full "--user=$(id -un)" > /dev/null 2>&1 || true
    i=0
    while [ $i -lt 50 ] && [ -n "$(squeue -h 2>/dev/null)" ]; do sleep 0.2; i=$((i + 1)); done
  fi
  for p in $pids; do kill -TERM "$p" 2>/dev/null; done
  i=0
  while [ $i -lt 50 ]; do
    alive=""
    for p in $pids; do kill -0 "$p" 2>/dev/null && alive="$alive $p"; done
    [ -z "$alive" ] && break
    sleep 0.2; i=$((i + 1))
  done
  for p in $pids; do kill -KILL "$p" 2>/dev/null; done
  # Anything else of this cluster (a job step, a slurmstepd): its command
  # line names the state folder or its environment this configuration.
  for d in /proc/[0-9]*; do
    p=${d#/proc/}
    [ "$p" = $$ ] && continue
    if { tr '\0' '\n' < "$d/environ" | grep -qxF "SLURM_CONF=$state/slurm.conf" ||
         tr '\0' ' ' < "$d/cmdline" | grep -qF "$state/"; } 2>/dev/null; then
      kill -KILL "$p" 2>/dev/null
    fi
  done
  if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then
    for f in "$state"/*.log "$state"/*.out; do
      [ -f "$f" ] && { echo "--- $f"; tail -n 15 "$f"; }
    done
  fi
  rm -rf "$state"
  exit $rc
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# Two free TCP ports for slurmctld and slurmd: random ones in 20000-49999
# that nothing listens on or uses (/proc/net/tcp*, hex port numbers).
used=$(awk 'FNR > 1 { split($2, a, ":"); print a[2] }' /proc/net/tcp /proc/net/tcp6 2>/dev/null)
pick_port() {
  while :; do
    p=$(( $(od -An -N2 -tu2 /dev/urandom) % 30000 + 20000 ))
    echo "$used" | grep -qx "$(printf '%04X' "$p")" || { echo "$p"; return; }
  done
}
ctld_port=$(pick_port)
slurmd_port=$ctld_port
while [ "$slurmd_port" = "$ctld_port" ]; do slurmd_port=$(pick_port); done
host=$(hostname -s)
cpus=$(nproc)
# the node's memory (MB) as Slurm counts it: jobs ask for --mem
mem_mb=$(awk '/^MemTotal:/ { printf "%d", $2 / 1024 * 0.9 }' /proc/meminfo)

head -c 1024 /dev/urandom > "$state/munge.key" && chmod 400 "$state/munge.key"
munged --force --foreground --socket="$state/munge.sock" --key-file="$state/munge.key" \
  --log-file="$state/munged.log" --pid-file="$state/munged.pid" --seed-file="$state/munged.seed" \
  > "$state/munged.out" 2>&1 &
pids="$pids $!"
mkdir -p "$state/spool" "$state/ctld"
cat > "$state/slurm.conf" <<CONF
ClusterName=kcasttest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$state/munge.sock
CredType=cred/munge
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/spool
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/slurmctld.log
SlurmdLogFile=$state/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
MinJobAge=600
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=kcast Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$state/slurm.conf"
i=0
while [ ! -S "$state/munge.sock" ]; do
  i=$((i + 1)); [ $i -gt 50 ] && skip "munged did not start: $(tail -n 1 "$state/munged.out")"
  sleep 0.2
done
slurmctld -D -i -f "$SLURM_CONF" > "$state/slurmctld.out" 2>&1 &
pids="$pids $!"
slurmd -D -f "$SLURM_CONF" > "$state/slurmd.out" 2>&1 &
pids="$pids $!"
i=0
until [ "$(sinfo -h -o %T 2>/dev/null)" = idle ]; do
  i=$((i + 1))
  [ $i -gt 150 ] && skip "slurmctld/slurmd did not bring the node up in 30 s: $(tail -n 1 "$state/slurmctld.log" 2>/dev/null)"
  sleep 0.2
done
echo "slurm: node $host up ($cpus CPUs), ports $ctld_port/$slurmd_port, state $state"

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
mkdir -p "$work/array"
# The reference runs each launch on one thread, as each array task does
# (features.sbatch: OMP_NUM_THREADS = its one CPU): a kernel whose threads
# race on a memory word (bfs marking visited nodes) counts work that
# depends on how CTAs interleave, so only equal threading compares bit for
# bit.
t=$(now)
OMP_NUM_THREADS=1 "$kcast" suite run "$manifest" --bindir "$bindir" -o "$work/single.db" \
  > "$work/single.out" 2>&1 ||
  { echo "local suite run failed:"; tail -n 5 "$work/single.out"; exit 1; }
echo "wall local-j1-1thread $(since "$t")"
if [ -n "${TIMES:-}" ]; then
  t=$(now)
  "$kcast" suite run "$manifest" --bindir "$bindir" -o "$work/single-j1.db" > "$work/single-j1.out" 2>&1 ||
    { echo "local suite run failed:"; tail -n 5 "$work/single-j1.out"; exit 1; }
  echo "wall local-j1 $(since "$t")"
  t=$(now)
  "$kcast" suite run "$manifest" --bindir "$bindir" -j 2 -o "$work/single-j2.db" > "$work/single-j2.out" 2>&1 ||
    { echo "local suite run -j 2 failed:"; tail -n 5 "$work/single-j2.out"; exit 1; }
  echo "wall local-j2 $(since "$t")"
fi

t=$(now)
mkdir -p "$work/node-tmp"
printf 'echo "setup hook ran on $(hostname)"\n' > "$work/setup.sh"
ids=$(TMPDIR="$work/node-tmp" KCAST_SLURM_SETUP="$work/setup.sh" KCAST="$kcast" \
      "$here/tools/slurm/submit.sh" features "$manifest" "$work/array" 4 \
      --bindir "$bindir" ${COSTS:+--costs "$COSTS"}) || { echo "submit.sh failed"; exit 1; }
set -- $ids
array=$1 merge=$2
echo "slurm: array job $array, merge job $merge"
i=0
while [ -n "$(squeue -h -j "$array,$merge" 2>/dev/null)" ]; do
  i=$((i + 1))
  [ $i -gt $((JOB_WAIT * 5)) ] && { echo "jobs not done after $JOB_WAIT s"; squeue; exit 1; }
  sleep 0.2
done
echo "wall array-4 $(since "$t")"
for j in $array $merge; do
  st=$(scontrol -o show job "$j" 2>/dev/null | tr ' ' '\n' | grep '^JobState=' | sort -u | tr '\n' ' ')
  echo "slurm: job $j $st"
  case $st in *COMPLETED*) ;; *) echo "job $j did not complete"; cat "$work"/array/*.out; exit 1 ;; esac
  case $st in *FAILED*|*CANCELLED*|*TIMEOUT*) echo "job $j did not complete"; cat "$work"/array/*.out; exit 1 ;; esac
  echo "slurm: job $j $(scontrol -o show job "$j" 2>/dev/null | tr ' ' '\n' |
    grep -E '^(TimeLimit|MinMemoryNode)=' | sort -u | tr '\n' ' ')"
done
[ -f "$work/array/features.db" ] || { echo "no merged dataset"; cat "$work/array/merge.out"; exit 1; }
exit 0
