/*
 * ds.h -- the dataset store: launches, their features and their measured
 * time/power, in one SQLite file.
 *
 * A dataset is what `kcast run` (features, no GPU) and `kcast profile`
 * (measurements, on a GPU) write and what `kcast train`/`kcast cv` read.
 * Launches are joined across runs by (app, dataset, lseq): the program, a
 * label for its input and the launch's position in the program's launch
 * sequence -- the key the GPU Mangrove databases use.  docs/formats.md is the
 * normative description of the schema; this header is the only way the rest
 * of kcast touches it.
 *
 * Conventions:
 *  - every function returns 0 on success and -1 on failure; the failure's
 *    text ("FILE: problem") is then ds_errmsg(db) until the next call on db;
 *  - writers are transactional: ds_begin .. ds_commit, or each call on its
 *    own (then it commits by itself).  A process killed in between leaves the
 *    file as it was before ds_begin (SQLite rollback journal);
 *  - strings handed in are copied; strings handed out say who owns them;
 *  - one ds_db is used by one thread at a time; separate handles (also on the
 *    same file) may be used from separate threads or processes.
 */
#ifndef KCAST_DS_H
#define KCAST_DS_H

#include <stddef.h>
#include <stdint.h>

#include "extractor/features.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Schema version this build reads and writes (meta.schema_version). */
#define DS_SCHEMA_VERSION 1
/* SQLite application_id of a kcast dataset: "KCST". */
#define DS_APPLICATION_ID 0x4B435354

/* ds_open flags. */
enum {
  DS_CREATE = 1 << 0,   /* create the file (or fill an empty one) if needed */
  DS_READONLY = 1 << 1  /* open for reading only; not with DS_CREATE */
};

/* How repeated measurements of one (launch, gpu, metric) are combined. */
enum { DS_AGG_MEDIAN = 0, DS_AGG_MEAN = 1 };
/* The median or mean (agg) of vals[0..n), n > 0; sorts vals. */
double ds_aggregate(double *vals, size_t n, int agg);

/*
 * The tuning parameters of a Kernel Tuner configuration (ds_kt_import) are
 * features named tune.NAME: launch parameters, like the grid, rather than
 * what kcast measured.  A launch whose only features are tune.* counts as
 * a launch without features (a matrix leaves it out, ds_merge lets the
 * other side's features win), and a matrix leaves the column out unless
 * asked (ds_query.with_tune, or a families list naming "tune").
 */
#define DS_TUNE_PREFIX "tune."
int ds_is_tune_feature(const char *name);

/* What a missing feature becomes in a matrix (ds_query.missing). */
enum {
  DS_MISSING_DEFAULT = 0, /* ds_feature_default(): 0 for counts, NAN otherwise */
  DS_MISSING_NAN = 1      /* NAN for every missing feature (exports) */
};

typedef struct ds_db ds_db;

/* ------------------------------------------------------------ open/close -- */

/*
 * Open the dataset at path.  With DS_CREATE a missing or empty file gets the
 * current schema; an existing dataset is checked either way.  Refused, with a
 * message in err naming path: a missing file (without DS_CREATE), a file that
 * is not SQLite, an SQLite file that is not a kcast dataset, a dataset of a
 * newer (or unknown older) schema version.  [out] *db is NULL on failure.
 * err may be NULL; it is always NUL-terminated when cap > 0.
 */
int ds_open(const char *path, int flags, ds_db **db, char *err, size_t cap);
/*
 * Every open first rolls back the journal an interrupted writer left
 * (PATH-journal), read-only opens too; where the file or its folder cannot
 * be written that is an error saying what to do.  A file of 0 bytes (what
 * rolling back a dataset's creation leaves) is a new dataset with
 * DS_CREATE and refused as "an empty file, not a dataset yet" without.
 *
 * ds_probe: what a writer would find at path, after that roll-back:
 * DS_PROBE_NONE (no file), DS_PROBE_EMPTY (0 bytes: DS_CREATE makes it a
 * dataset), DS_PROBE_DATASET (a dataset this build reads); -1 with err
 * (not a dataset, a newer schema, unreadable: ds_open's messages).
 */
enum { DS_PROBE_NONE = 0, DS_PROBE_EMPTY = 1, DS_PROBE_DATASET = 2 };
int ds_probe(const char *path, char *err, size_t cap);
/* Close; rolls back an open transaction.  Accepts NULL. */
void ds_close(ds_db *db);
/* The last failure's message; "" when none.  Owned by db. */
const char *ds_errmsg(const ds_db *db);
/* The path db was opened with.  Owned by db. */
const char *ds_path(const ds_db *db);

/* ---------------------------------------------------------- transactions -- */

/* How long a call waits for another connection's lock before it fails
   with "database is locked" (ds_open sets 5000 ms). */
void ds_set_busy_timeout(ds_db *db, int ms);

/* Begin a write transaction (takes the write lock now; waits up to the busy
   timeout). */
int ds_begin(ds_db *db);
/* ds_begin for a writer whose rows reference only what it inserts itself
   (kcast run storing its launches): the foreign-key checks, about half the
   cost of a launch's feature rows, are off until ds_commit or ds_rollback
   ends the transaction, and back on after it. */
int ds_begin_bulk(ds_db *db);
int ds_commit(ds_db *db);
/* Roll back; a no-op when no transaction is open. */
int ds_rollback(ds_db *db);
/* PRAGMA integrity_check; -1 with the first problem when it is not "ok". */
int ds_integrity_check(ds_db *db);

/* ---------------------------------------------------------------- writers -- */

/* One kernel launch.  Strings are read during the call only. */
typedef struct ds_launch {
  const char *bench;    /* suite label (Mangrove's "bench"), may be NULL */
  const char *app;      /* program name, non-empty */
  const char *dataset;  /* input label (the program's arguments), non-NULL */
  int64_t lseq;         /* position in the program's launch sequence, >= 0 */
  const char *kernel;   /* kernel name (mangled), non-empty */
  uint32_t grid[3];     /* grid dimensions, x y z */
  uint32_t block[3];    /* block dimensions, x y z */
  int64_t shmem;        /* dynamic shared memory bytes */
  const char *source;   /* tool that made the row ("kcast run"), may be NULL */
} ds_launch;

/*
 * Record a provenance row (runs table): command line, UTC date, host.  Later
 * launches and measurements written through db carry its id.  [out] run_id
 * may be NULL.
 */
int ds_record_run(ds_db *db, const char *command, int64_t *run_id);
/*
 * Mark run run_id partial: the command did not finish (kcast run's
 * --timeout), so launches it would have written are missing; reason says
 * why and how far it got.  The table partial_runs is created in a file that
 * lacks it (docs/formats.md).
 */
int ds_mark_partial(ds_db *db, int64_t run_id, const char *reason);

/*
 * Insert launch l, or update it when (app, dataset, lseq) exists already:
 * the launch keeps its id and its measurements, its other columns are
 * replaced (a NULL bench/source keeps the stored one).  When features is
 * non-NULL the launch's feature set is replaced by it (names not in it are
 * deleted); when NULL the stored features are kept (a profiler adding
 * measurements).  Atomic.  [out] id may be NULL.
 */
int ds_insert_launch(ds_db *db, const ds_launch *l, const feat_vec *features,
                     int64_t *id);
/* [out] *id of launch (app, dataset, lseq); returns 1 when found, 0 when
   not, -1 on error. */
int ds_find_launch(ds_db *db, const char *app, const char *dataset,
                   int64_t lseq, int64_t *id);
/*
 * Record one measured value: metric is "time_ns", "power_w" or "energy_j",
 * value finite and >= 0, rep the repetition number (>= 0).  (launch, gpu,
 * metric, rep) is a key: recording it again replaces value and tool.
 */
int ds_insert_measurement(ds_db *db, int64_t launch_id, const char *gpu,
                          const char *metric, double value, int rep,
                          const char *tool);

/* A GPU's descriptors.  Numbers <= 0 and empty strings mean "unknown". */
typedef struct ds_gpu {
  char name[128];          /* key, as used in measurements.gpu ("H200") */
  int cc_major, cc_minor;  /* compute capability */
  int sm_count;
  double sm_clock_mhz;     /* max SM clock */
  double mem_clock_mhz;
  int64_t mem_bytes;
  double mem_bandwidth_gbs;
  int64_t l2_bytes;
  double tdp_w;            /* power limit */
  char driver[64];         /* driver version */
  char cuda[32];           /* CUDA version */
} ds_gpu;

/* Insert the gpus row of g->name, or update it: known values of g (non-zero
   numbers, non-empty strings) replace the row's, unknown ones keep them. */
int ds_upsert_gpu(ds_db *db, const ds_gpu *g);
/* Fill *out from the gpus row of name; returns 1 found, 0 not, -1 error. */
int ds_get_gpu(ds_db *db, const char *name, ds_gpu *out);

/* ds_merge flags. */
enum {
  DS_MERGE_REPLACE = 1 << 0,  /* src wins over a conflicting launch or
                                 measurement instead of failing */
  DS_MERGE_WHOLE_RUNS = 1 << 1 /* src holds whole runs: a launch of db whose
                                 (app, dataset) src has but whose lseq src
                                 lacks is deleted (an earlier, longer run of
                                 the same key) */
};

/*
 * Merge the dataset at src_path into db: gpus (src wins), runs (appended;
 * a run db already holds -- same command, date, host and version -- is not
 * added twice), launches by key, measurements by (launch, gpu, metric,
 * rep), suite entries by key.  A launch that has features on both sides
 * must agree (kernel, grid, block, shared memory, every feature name and
 * value), and so must a measurement on both sides; otherwise the merge
 * fails naming the first conflicting keys and writes nothing, unless flags
 * has DS_MERGE_REPLACE (src's columns and feature set win).  Merging the
 * same file again changes nothing.  Must be called outside a transaction;
 * it runs in one of its own.
 */
int ds_merge(ds_db *db, const char *src_path, unsigned flags);

/* A suite manifest entry that ran (kcast suite): what makes it skippable
   on a resumed run, and its cost for balancing shards. */
typedef struct ds_suite_entry {
  const char *kind;      /* "run" (emulator features) or "profile" (GPU) */
  const char *app;       /* launch key app of the entry */
  const char *dataset;   /* launch key dataset of the entry */
  const char *gpu;       /* profile: GPU key of its measurements; "" for run */
  const char *build;     /* identity of the program file (content hash) */
  const char *command;   /* program, arguments and options that shape the
                            results, one canonical string */
  double seconds;        /* wall time of the entry */
  int64_t launches;      /* launches it recorded */
} ds_suite_entry;

/* Record e (replacing the row of its (kind, app, dataset, gpu)); the
   table suite_entries is created in a file that lacks it. */
int ds_suite_record(ds_db *db, const ds_suite_entry *e);
/* The row of (kind, app, dataset, gpu) into *out, gpu NULL matching any
   GPU (the slowest such row); strings owned by db until the next call on
   it.  Returns 1 found, 0 not (also in a file without the table), -1 on
   error. */
int ds_suite_find(ds_db *db, const char *kind, const char *app, const char *dataset,
                  const char *gpu, ds_suite_entry *out);

/* What to import from GPU Mangrove's databases (ds_import_mangrove). */
typedef struct ds_mangrove_opts {
  const char *features;  /* CUDA Flux database (table fluxmetrics), required */
  const char *time;      /* table kerneltime (microseconds), or NULL */
  const char *power;     /* table kernelpower (watts), or NULL */
  const char *gpu;       /* GPU the time/power were measured on; required
                            with time or power */
  const char *command;   /* command line for the runs table, or NULL (none) */
} ds_mangrove_opts;

/* What an import wrote and left out. */
typedef struct ds_import_report {
  int64_t flux_rows;      /* fluxmetrics rows read */
  int64_t launches;       /* launches written (inserted or replaced) */
  int64_t features;       /* feature values written */
  int64_t no_mem;         /* launches without mem.global_* (a memory key
                             whose bytes the key does not say) */
  int64_t time_rows;      /* time_ns values written */
  int64_t time_skipped;   /* kerneltime rows without a launch in features */
  int64_t power_rows;     /* power_w values written */
  int64_t power_skipped;  /* kernelpower rows without a launch in features */
} ds_import_report;

/*
 * Import GPU Mangrove databases into db (docs/formats.md, "Importing GPU
 * Mangrove databases", gives the mapping): one launch per (app, dataset,
 * lseq) of o->features with its op.*, class.*, launch.* and derivable mem.*
 * features; time_ns/power_w measurements of o->gpu, one per source row,
 * rep = its position among the launch's rows; a gpus row for o->gpu if
 * there is none.  Must be called outside a transaction; runs in one of its
 * own, so a failure (a foreign or malformed input named with file, table,
 * row and column) leaves db as it was.  Importing the same files again
 * rewrites the same rows.  [out] rep may be NULL; it is filled on success.
 */
int ds_import_mangrove(ds_db *db, const ds_mangrove_opts *o,
                       ds_import_report *rep);

/* What an operator import wrote (ds_import_neusight). */
typedef struct ds_neusight_report {
  int64_t files;      /* files read */
  int64_t rows;       /* data rows read */
  int64_t launches;   /* launches written (one per operator, shape, GPU) */
  int64_t features;   /* feature values written */
  int64_t time_rows;  /* time_ns values written (rows; repeated shapes are reps) */
  char gpus[512];     /* the GPUs measured, comma-separated (the table's names) */
} ds_neusight_report;

/*
 * Import operator launches in the NeuSight training set's format (CSV,
 * plain or gzip, one row per operator launch: OPName, Latency in ms,
 * Device, Kernel Name, Grid x..z, Block x..z, optionally Kernels, and the
 * operator's shape columns; docs/formats.md, "Importing operator
 * launches") into db: a launch per (operator, shape, GPU) with the
 * operator's features (model/opr.h), its time_ns on the GPU the Device
 * column names (resolved through the GPU table), a gpus row per GPU.
 * Must be called outside a transaction; runs in one of its own, so any
 * error -- named FILE:LINE: problem -- leaves db as it was.  command is
 * recorded in runs (NULL: none).  [out] rep may be NULL.
 */
int ds_import_neusight(ds_db *db, const char *const *paths, size_t n, const char *command,
                       ds_neusight_report *rep);

/* One configuration of a Kernel Tuner cachefile. */
typedef struct ds_kt_config {
  char *key;          /* the cache key ("16,1,1,1,0,0,0,1,15,15") */
  char **values;      /* the file's nparams parameter values as #define text
                         (integers without a fraction, true/false as 1/0) */
  double *times_ms;   /* ntimes measured runs, milliseconds; the mean alone
                         for an entry without `times`; NULL when failed */
  size_t ntimes;
  char *failed;       /* the string an entry holds instead of a time
                         ("RuntimeFailedConfig"), else NULL */
} ds_kt_config;

/* A whole cachefile (ds_kt_read); every string is owned by it. */
typedef struct ds_kt_file {
  char *device_name;        /* as the driver reported it */
  char *kernel_name;
  size_t ndims;             /* 1..3, or 0 when problem_size is not numeric */
  int64_t problem_size[3];
  size_t nparams;
  char **params;            /* tune_params_keys, in order */
  size_t nconfigs;
  ds_kt_config *configs;    /* in file order */
  int unterminated;         /* the JSON lacked its closing braces (a tuning
                               run still writing, or interrupted): the
                               complete entries were read */
} ds_kt_file;

/*
 * Read the Kernel Tuner cachefile at path (JSON, plain or gzip) into *out
 * (docs/formats.md).  Refused with one line in err: unreadable, not JSON
 * ("FILE:LINE:COL: ..."), not a cachefile, larger than the memory limit
 * allows, out of memory (said so), a parameter name that is not a C
 * identifier or is given twice, a key given twice, an entry without a
 * parameter, with a value that is not a one-line number, identifier or
 * simple expression, or with a time that is neither a number >= 0 nor a
 * failure string ("FILE: cache entry 'KEY': ...").  Free with ds_kt_free
 * (accepts a zeroed one).
 */
int ds_kt_read(const char *path, ds_kt_file *out, char *err, size_t cap);
void ds_kt_free(ds_kt_file *f);
/* The most memory ds_kt_read lets the text and its parse take together
   (estimated as the text is read: about 2 bytes per byte of text plus 80
   per JSON value), 1 GiB by default; 0 restores the default.
   Process-wide; for tests and fuzzers. */
void ds_kt_set_memory_limit(size_t bytes);
/* What the reader takes for a parameter's name (a C identifier) and value
   (a one-line number, identifier or simple expression, <= 256 bytes). */
int ds_kt_valid_name(const char *name);
int ds_kt_valid_value(const char *value);

/* ---------------------------------------------------------------- readers -- */

typedef struct ds_iter ds_iter;

/* Iterate launches by id, optionally only app and/or dataset (NULL = any). */
int ds_iter_launches(ds_db *db, const char *app, const char *dataset,
                     ds_iter **it);
/*
 * Next launch: returns 1 and fills *id and *out (strings owned by the
 * iterator, valid until the next call), 0 at the end, -1 on error (message
 * in ds_errmsg of the db).
 */
int ds_iter_next(ds_iter *it, int64_t *id, ds_launch *out);
/* Accepts NULL. */
void ds_iter_free(ds_iter *it);

/* Append launch_id's features to out (feat_set; out must be initialised). */
int ds_get_features(ds_db *db, int64_t launch_id, feat_vec *out);

/*
 * Value a matrix uses for a feature the launch lacks: 0 for the count
 * families (op, class, mem, static, and opr: an operator launch's work and
 * tile, 0 where they do not apply), NAN for the rest (launch, ctrl,
 * unknown), whose zero would be a real, different value.
 */
double ds_feature_default(const char *name);

/* Matrix query.  Initialise with ds_query_init, then set what you need. */
typedef struct ds_query {
  const char *gpu;       /* measurements of this GPU; NULL = features only */
  const char *metric;    /* "time_ns", "power_w", "energy_j" (with gpu) */
  int agg;               /* DS_AGG_MEDIAN (default) or DS_AGG_MEAN */
  const char *const *families; /* feature families to keep; NULL = all but
                                  emu.* (how the emulator obtained a launch's
                                  features: CTAs emulated, out-of-bounds
                                  accesses; not features of the kernel),
                                  arg.* (the scalar arguments: their meaning
                                  differs from kernel to kernel) and tune.*
                                  (the same, for tuning parameters) */
  size_t nfamilies;
  int drop_constant;     /* drop columns with one value in every row */
  int missing;           /* DS_MISSING_DEFAULT or DS_MISSING_NAN */
  const char *app;       /* only this app; NULL = all */
  const char *dataset;   /* only this input label; NULL = all */
  int include_empty;     /* keep launches without any feature row */
  int with_tune;         /* with families NULL: keep the tune.* columns too */
} ds_query;

void ds_query_init(ds_query *q);

/*
 * Launches as rows (by id), features as columns (sorted by name).  With
 * q->gpu set: rows are the launches with at least one q->metric value on
 * q->gpu, y their aggregate.  Without: y is NULL.  Launches without features
 * are left out unless q->include_empty.  Columns: feature names present in
 * at least one row, of the chosen families (family = the name up to its
 * first dot).  Every pointer is owned by *out; free with ds_matrix_free.
 */
typedef struct ds_matrix {
  size_t rows, cols;
  char **colnames;     /* cols names */
  double *x;           /* rows*cols, row-major; missing per q->missing */
  double *y;           /* rows targets, NULL for a features-only query */
  int64_t *launch_id;  /* rows ids, ascending */
  char **app;          /* rows */
  char **dataset;      /* rows */
  char **kernel;       /* rows */
  int64_t *lseq;       /* rows: position in the program's launch sequence */
} ds_matrix;

int ds_query_matrix(ds_db *db, const ds_query *q, ds_matrix *out);
/* Free and zero *m.  Accepts NULL and a zeroed matrix. */
void ds_matrix_free(ds_matrix *m);

/*
 * Aggregated measurements of one (gpu, metric): n launches by ascending id
 * with their aggregate value.  Free with ds_target_free.
 */
typedef struct ds_target {
  size_t n;
  int64_t *launch_id;
  double *value;
} ds_target;
int ds_query_target(ds_db *db, const char *gpu, const char *metric, int agg,
                    ds_target *out);
void ds_target_free(ds_target *t);

/* Summary counts (kcast dataset stats).  Free with ds_stats_free. */
typedef struct ds_app_stats {
  char *app;
  int64_t launches, datasets, kernels; /* kernels: distinct kernel names */
  int64_t feature_rows;                /* feature values of its launches */
} ds_app_stats;
typedef struct ds_meas_stats {
  char *gpu, *metric;
  int64_t launches, values; /* distinct launches, measurement rows */
} ds_meas_stats;
typedef struct ds_stats {
  int64_t launches, feature_rows, feature_names, measurements, gpus, runs;
  int64_t partial_runs; /* runs marked partial (ds_mark_partial) */
  size_t napps;
  ds_app_stats *apps;   /* by app name */
  size_t nmeas;
  ds_meas_stats *meas;  /* by gpu, then metric */
} ds_stats;
int ds_get_stats(ds_db *db, ds_stats *out);
void ds_stats_free(ds_stats *s);

/* ------------------------------------------------ foreign SQLite files -- */

/*
 * SQLite files kcast did not write (an nsys export, GPU Mangrove
 * databases) are input: ds_foreign_open opens one read-only with every
 * statement bounded (a progress handler stops a connection that has done
 * more work than a file of its size needs: a view that recurses forever
 * ends with an error instead of never), and ds_foreign_table tells a
 * table from a view, which a reader refuses by name.  f lives where the
 * caller put it until ds_foreign_close (the handler points at it).
 */
struct sqlite3;
typedef struct ds_foreign {
  struct sqlite3 *h;            /* the read-only connection */
  const char *path;             /* as given (not owned) */
  unsigned long long budget;    /* steps the connection may take */
  unsigned long long used;      /* steps taken so far */
  int stopped;                  /* the budget ended a statement */
} ds_foreign;
int ds_foreign_open(const char *path, ds_foreign *f, char *err, size_t cap);
void ds_foreign_close(ds_foreign *f);
enum { DS_FOREIGN_MISSING = 0, DS_FOREIGN_TABLE = 1, DS_FOREIGN_NOT_TABLE = 2 };
/* What name is in f's schema (case-insensitive): DS_FOREIGN_*; -1 when the
   schema cannot be read. */
int ds_foreign_table(ds_foreign *f, const char *name);
/* The last failure as "PATH: problem" into buf: the budget's message when
   it stopped a statement, else SQLite's.  Returns buf. */
const char *ds_foreign_errmsg(const ds_foreign *f, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif

#endif
