#!/bin/sh
# submit.sh -- submit a suite to Slurm as a job array of N shards and the
# merge step as a job that waits for it (afterany: the shards that finished
# are merged even when one failed; the step then fails naming the missing).
#
#   tools/slurm/submit.sh features|groundtruth MANIFEST OUTDIR N [SUITE-OPTIONS...]
#
# Writes OUTDIR/features-<i>.db (or gpu-<i>.db) per task and
# OUTDIR/features.db (or groundtruth.db) merged; prints the two job ids.
# SBATCH_ARGS adds sbatch options to both jobs (partition, account, time);
# KCAST names the kcast binary for the jobs (default: kcast on PATH).
set -eu
if [ $# -lt 4 ]; then
  echo "usage: tools/slurm/submit.sh features|groundtruth MANIFEST OUTDIR N [SUITE-OPTIONS...]" >&2
  exit 2
fi
kind=$1 manifest=$2 outdir=$3 n=$4
shift 4
here=$(cd "$(dirname "$0")" && pwd)
case $kind in
  features) script=$here/features.sbatch prefix=features merged=features.db ;;
  groundtruth) script=$here/groundtruth.sbatch prefix=gpu merged=groundtruth.db ;;
  *) echo "submit.sh: kind must be features or groundtruth, not '$kind'" >&2; exit 2 ;;
esac
case $n in ''|*[!0-9]*|0) echo "submit.sh: N must be a whole number > 0, not '$n'" >&2; exit 2 ;; esac
mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)
# shellcheck disable=SC2086 # SBATCH_ARGS is a list of options
array=$(sbatch --parsable ${SBATCH_ARGS:-} --array=0-$((n - 1)) \
  --output="$outdir/$prefix-%a.out" "$script" "$manifest" "$outdir" "$@")
array=${array%%;*}
set --
i=0
while [ $i -lt "$n" ]; do set -- "$@" "$outdir/$prefix-$i.db"; i=$((i + 1)); done
# shellcheck disable=SC2086
merge=$(sbatch --parsable ${SBATCH_ARGS:-} --dependency=afterany:"$array" \
  --output="$outdir/merge.out" "$here/merge.sbatch" "$outdir/$merged" "$@")
merge=${merge%%;*}
echo "$array $merge"
