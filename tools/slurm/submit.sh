#!/bin/sh
# submit.sh -- submit a suite to Slurm as a job array of N shards and the
# merge step as a job that waits for it (afterany: the shards that finished
# are merged even when one failed; the step then fails naming the missing).
#
#   tools/slurm/submit.sh features|groundtruth MANIFEST OUTDIR N [SUITE-OPTIONS...]
#
# Writes OUTDIR/features-<i>.db (or gpu-<i>.db) per task and
# OUTDIR/features.db (or groundtruth.db) merged; prints the two job ids.
# Each job works in node-local scratch and copies only finished datasets
# to OUTDIR (job-common.sh).
#
# Limits per job, from the manifest's costs (`kcast suite run --dry-run
# --shard I/N` with the SUITE-OPTIONS, so --costs DB counts): the array's
# --time is twice the largest shard's expected seconds plus 10 minutes,
# its --mem the largest mem= of an entry (MiB; 1024 where no entry says)
# times the entries run at once (-j), plus 512 MiB for kcast; the merge
# job gets 10 minutes plus a second per entry and 1024 MiB.  A --time/-t
# or --mem in SBATCH_ARGS wins over them.
#
# SBATCH_ARGS adds sbatch options to both jobs (partition, account);
# KCAST names the kcast binary for the jobs (default: kcast on PATH) and
# KCAST_SLURM_SETUP a shell file every job sources first (module load
# lines; docs/gpu-check.md).  The jobs get both through the environment
# (sbatch's default --export=ALL), with KCAST_SLURM_DIR, this folder.
set -eu
if [ $# -lt 4 ]; then
  echo "usage: tools/slurm/submit.sh features|groundtruth MANIFEST OUTDIR N [SUITE-OPTIONS...]" >&2
  exit 2
fi
kind=$1 manifest=$2 outdir=$3 n=$4
shift 4
here=$(cd "$(dirname "$0")" && pwd)
case $kind in
  features) script=$here/features.sbatch prefix=features merged=features.db sub=run ;;
  groundtruth) script=$here/groundtruth.sbatch prefix=gpu merged=groundtruth.db sub=profile ;;
  *) echo "submit.sh: kind must be features or groundtruth, not '$kind'" >&2; exit 2 ;;
esac
case $n in ''|*[!0-9]*|0) echo "submit.sh: N must be a whole number > 0, not '$n'" >&2; exit 2 ;; esac
mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)
kcast=${KCAST:-kcast}

# the plan of every shard: expected seconds, memory and entries
plan_gpu="--gpu plan"
jobs=1 prev=""
for a in "$@"; do
  case $a in --gpu|--gpu=*) plan_gpu="" ;; esac
  case $prev in -j|--jobs) jobs=$a ;; esac
  case $a in --jobs=*) jobs=${a#--jobs=} ;; -j[0-9]*) jobs=${a#-j} ;; esac
  prev=$a
done
[ "$sub" = run ] || plan_gpu_opt=$plan_gpu
max_s=0 max_mem=0 entries=0 i=0
while [ $i -lt "$n" ]; do
  # shellcheck disable=SC2086 # plan_gpu_opt is one option and its value, or nothing
  line=$("$kcast" suite $sub "$manifest" --dry-run --shard "$i/$n" -o "$outdir/$prefix-$i.db" \
         ${plan_gpu_opt:-} "$@" | head -n 1) || { echo "submit.sh: the plan of shard $i/$n failed" >&2; exit 1; }
  s=$(echo "$line" | sed -n 's/.* entries, expected \([0-9.]*\) s of .*/\1/p')
  m=$(echo "$line" | sed -n 's/.*; memory \([0-9]*\) MiB.*/\1/p')
  e=$(echo "$line" | sed -n 's/^shard [0-9/]* of .*: \([0-9]*\) of [0-9]* entries.*/\1/p')
  [ -n "$s" ] || { echo "submit.sh: cannot read the plan: $line" >&2; exit 1; }
  max_s=$(awk -v a="$max_s" -v b="$s" 'BEGIN { print (b > a ? b : a) }')
  [ -n "$m" ] && [ "$m" -gt "$max_mem" ] && max_mem=$m
  entries=$((entries + ${e:-0}))
  i=$((i + 1))
done
[ "$max_mem" -gt 0 ] || max_mem=$((1024 * jobs))
time_min=$(awk -v s="$max_s" 'BEGIN { m = (2 * s + 600) / 60; printf "%d", (m == int(m)) ? m : int(m) + 1 }')
mem_mb=$((max_mem + 512))
merge_min=$(( (600 + entries + 59) / 60 ))
limits="--time=$time_min --mem=$mem_mb" merge_limits="--time=$merge_min --mem=1024"
case " ${SBATCH_ARGS:-} " in *" --time"*|*" -t"*) limits=${limits#--time=* } merge_limits=${merge_limits#--time=* } ;; esac
case " ${SBATCH_ARGS:-} " in *" --mem"*) limits=${limits%--mem=*} merge_limits=${merge_limits%--mem=*} ;; esac
echo "submit.sh: $n shards of $manifest, the largest expected ${max_s} s: array $limits, merge $merge_limits" >&2

export KCAST_SLURM_DIR="$here"
# shellcheck disable=SC2086 # SBATCH_ARGS and the limits are lists of options
array=$(sbatch --parsable ${SBATCH_ARGS:-} $limits --array=0-$((n - 1)) \
  --output="$outdir/$prefix-%a.out" "$script" "$manifest" "$outdir" "$@")
array=${array%%;*}
set --
i=0
while [ $i -lt "$n" ]; do set -- "$@" "$outdir/$prefix-$i.db"; i=$((i + 1)); done
# shellcheck disable=SC2086
merge=$(sbatch --parsable ${SBATCH_ARGS:-} $merge_limits --dependency=afterany:"$array" \
  --output="$outdir/merge.out" "$here/merge.sbatch" "$outdir/$merged" "$@")
merge=${merge%%;*}
echo "$array $merge"
