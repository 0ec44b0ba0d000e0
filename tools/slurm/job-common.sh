# job-common.sh -- sourced by the kcast Slurm jobs (features, groundtruth,
# merge; Slurm runs a copy of each batch script, so they find this file
# through KCAST_SLURM_DIR, which submit.sh sets).  It gives them:
#
#  - the site hook: when KCAST_SLURM_SETUP names a file, it is sourced
#    first, in the job's shell -- the place for `module load cuda/13.0`,
#    `source /opt/venv/bin/activate` or an `export PATH=...`;
#  - node-local scratch: kcast_scratch makes a private folder under
#    $SLURM_TMPDIR, else $TMPDIR, else /tmp (on the node, not the shared file
#    system: SQLite's locking is not safe on NFS or Lustre), removed when
#    the job ends however it ends;
#  - kcast_publish SRC DEST: copy a finished dataset onto the shared file
#    system as one whole file (DEST.tmp.PID, then renamed), so that nothing
#    ever opens a half-copied one and no SQLite file is written there.
if [ -n "${KCAST_SLURM_SETUP:-}" ]; then
  if [ ! -r "$KCAST_SLURM_SETUP" ]; then
    echo "kcast job: KCAST_SLURM_SETUP=$KCAST_SLURM_SETUP: cannot read it" >&2
    exit 1
  fi
  # shellcheck disable=SC1090
  . "$KCAST_SLURM_SETUP"
fi

kcast_scratch() {
  base=${SLURM_TMPDIR:-${TMPDIR:-/tmp}}
  scratch=$(mktemp -d "$base/kcast-${SLURM_JOB_ID:-job}-XXXXXX") || {
    echo "kcast job: cannot make a scratch folder in $base" >&2
    exit 1
  }
  trap 'rm -rf "$scratch"' EXIT
  trap 'rm -rf "$scratch"; exit 143' TERM
  trap 'rm -rf "$scratch"; exit 130' INT
  echo "kcast job: node-local scratch $scratch on $(hostname)"
}

kcast_publish() {
  cp "$1" "$2.tmp.$$" && mv -f "$2.tmp.$$" "$2" || {
    rm -f "$2.tmp.$$"
    echo "kcast job: cannot copy $1 to $2" >&2
    return 1
  }
}

# kcast_shard run|profile PREFIX MANIFEST OUTDIR [SUITE-OPTIONS...]: this
# array task's shard in scratch, resumed from OUTDIR/PREFIX-<task>.db when
# that exists, published there (with its .log) when kcast suite ends.
kcast_shard() {
  kind=$1 prefix=$2 manifest=$3 outdir=$4
  shift 4
  mkdir -p "$outdir"
  task=${SLURM_ARRAY_TASK_ID:-0}
  kcast_scratch
  db=$scratch/$prefix-$task.db
  if [ -f "$outdir/$prefix-$task.db" ]; then cp "$outdir/$prefix-$task.db" "$db"; fi
  if [ -f "$outdir/$prefix-$task.db.log" ]; then cp "$outdir/$prefix-$task.db.log" "$db.log"; fi
  [ "$kind" = run ] && export OMP_NUM_THREADS="${SLURM_CPUS_PER_TASK:-1}"
  rc=0
  "${KCAST:-kcast}" suite "$kind" "$manifest" -o "$db" --progress "$@" || rc=$?
  if [ -f "$db" ]; then
    kcast_publish "$db" "$outdir/$prefix-$task.db" || rc=1
    if [ -f "$db.log" ]; then kcast_publish "$db.log" "$outdir/$prefix-$task.db.log" || rc=1; fi
  fi
  return $rc
}
