/*
 * ds_kt.h -- Kernel Tuner tuning spaces as kcast launches: the launch
 * geometry of a configuration (Kernel Tuner's rules), the features of every
 * configuration of a tunable kernel compiled and emulated as Kernel Tuner
 * compiles it (grouped nvcc runs, worker threads), and the whole import of
 * cachefiles into a dataset (`kcast dataset import-kerneltuner`,
 * docs/formats.md "Kernel Tuner cachefiles").  The cachefile reader itself
 * is ds_kt_read (datasets/ds.h).
 *
 * Nothing here prints: notes and progress go to the caller's callbacks,
 * errors to its buffer.  Callbacks run on the calling thread.
 */
#ifndef KCAST_DS_KT_H
#define KCAST_DS_KT_H

#include <stddef.h>
#include <stdint.h>

#include "datasets/ds.h"
#include "emulator/emu.h"
#include "emulator/emu_args.h"
#include "extractor/features.h"
#include "extractor/frontend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How a configuration's launch follows from its parameters. */
typedef struct ds_kt_grid {
  const char *bnames;    /* block size names, comma list (x[,y[,z]]) */
  const char *div[3];    /* grid divisors per dimension: comma lists of
                            parameter names or positive integers; NULL: 1 */
  int64_t psize[3];      /* problem size (1 for unused dimensions) */
} ds_kt_grid;

/*
 * Block and grid of the configuration whose parameters names[i] have the
 * #define texts values[i] (i < n), by Kernel Tuner's rules: block = the
 * block-size parameters (1 where a name is not a parameter), grid_d =
 * ceil(psize_d / product of the divisors); an unnamed block size among the
 * divisors counts 1.  0, or -1 with why.
 */
int ds_kt_geometry(const ds_kt_grid *g, const char *const *names, const char *const *values,
                   size_t n, unsigned grid[3], unsigned block[3], char *why, size_t cap);

/* A tunable kernel's source and how each configuration is launched. */
typedef struct ds_kt_source {
  const char *path;              /* the .cu */
  const char *kernel;            /* the kernel's name in the source */
  const char *bnames[3];         /* block size names (NULL where none) */
  fe_options fo;                 /* compiler and arch (extra: unused) */
  const char *const *copts;      /* compiler options */
  size_t ncopts;
  const emu_arg_spec *args;      /* one per kernel parameter */
  unsigned nargs;
  const emu_const_spec *consts;  /* constant symbols to fill */
  size_t nconsts;
  emu_launch_cfg cfg;            /* shared bytes, sample, limits, oob, threads */
  unsigned long jobs;            /* worker threads (>= 1) */
  unsigned long batch;           /* configurations per compiler run; 0: auto */
  const char *const *ptxas_archs; /* architectures ("sm_86") whose ptxas
                                    registers, spills, stack and static shared
                                    memory each configuration records
                                    (ptxas.sm_XY.*); none when nptxas is 0 */
  size_t nptxas;
} ds_kt_source;

/* One configuration to compute. */
typedef struct ds_kt_job {
  const char *key;               /* its name in messages (the cache key) */
  size_t nparams;
  const char *const *names;      /* its parameters ... */
  const char *const *values;     /* ... and their #define texts */
  unsigned grid[3], block[3];
  /* results (written by a worker, read once the job is reported done) */
  int res;                       /* the worker's outcome: 1 ok, -1 failed */
  int status;                    /* res, published once reported */
  feat_vec feats;                /* res 1: the features (the caller frees) */
  char *err;                     /* res -1: why (malloc'd; ds_kt_job_free) */
} ds_kt_job;
/* Free a job's results.  Accepts NULL. */
void ds_kt_job_free(ds_kt_job *j);

/*
 * Called on the calling thread with jobs done[0..n) finished since the last
 * call (their status set), in any order: whatever finished, at least every
 * 2 seconds, and the rest at the end.  A nonzero return stops the
 * computation (no more groups are started).
 */
typedef int (*ds_kt_done_fn)(void *ctx, ds_kt_job *const *done, size_t n);

/* What ds_kt_compute did. */
typedef struct ds_kt_stats {
  size_t fallbacks;              /* groups compiled one configuration at a time */
  size_t ptxas_failed;           /* ptxas runs that failed: their configurations
                                    have no ptxas.sm_XY.* columns */
  char ptxas_err[320];           /* the first failure */
} ds_kt_stats;

/*
 * Features of jobs[0..n) (n >= 1): the source compiled with each job's
 * parameters prepended as #define lines (as Kernel Tuner compiles it),
 * groups of configurations in one compiler run, emulated by s->jobs worker
 * threads.  The first configurations are compiled alone first (up to
 * three, until one compiles): they check the source, the options and the
 * arguments, and give the kernel's name as compiled alone, returned in
 * *kname (caller frees).  A copy in a group renames the kernel and every
 * name of an extern "C" region (ds_kt_src.c), so that a second kernel
 * there does not make the group compile one configuration at a time; a
 * loop_unroll_factor parameter is Kernel Tuner's (its value the argument
 * of `#pragma unroll NAME`, 0 removing the pragma).  done is called as
 * jobs finish.  Returns 0 (some
 * jobs may have failed: their status says), 1 for arguments that fit no
 * configuration (a usage error), 2 for a kernel name the source lacks or
 * that is not an identifier (bad input), -1 when no probe compiles or on
 * a fatal error, with err set; -2 when done asked to stop.
 */
int ds_kt_compute(const ds_kt_source *s, ds_kt_job **jobs, size_t n, ds_kt_done_fn done,
                  void *ctx, char **kname, ds_kt_stats *st, char *err, size_t cap);

/* The numeric parameters of j as tune.NAME features, into v (set or
   overwritten); -1 out of memory. */
int ds_kt_tune_features(const ds_kt_job *j, feat_vec *v);

/*
 * Write a Kernel Tuner cachefile (Kernel Tuner 1.x's JSON, the one it
 * loads in simulation mode) of n configurations: device and kernel names,
 * problem_size (a number when scalar, else a list of dims), the nparams
 * names (tune_params_keys; tune_params lists each one's distinct values in
 * order of appearance), and per configuration keys[i] with its values
 * values[i * nparams + p] (numbers where they read as numbers) and
 * time_ms[i] as time and times (zero compile, verification and benchmark
 * times), or "RuntimeFailedConfig" where time_ms[i] is NaN.  Written to a
 * temporary file beside path and renamed.  0, or -1 with err.
 */
int ds_kt_write_cachefile(const char *path, const char *device, const char *kernel,
                          const int64_t psize[3], size_t pdims, int scalar,
                          const char *const *names, size_t nparams, const char *const *keys,
                          const char *const *values, const double *time_ms, size_t n, char *err,
                          size_t cap);

/* The gpus row of GPU key (measurements.gpu) for a device the driver
   called device: the name, and the GPU table's descriptors when the table
   knows device or key.  Returns 1 when the table knows it, else 0. */
int ds_kt_gpu_row(const char *key, const char *device, ds_gpu *g);

/* An import of cachefiles into a dataset. */
typedef struct ds_kt_import_opts {
  const char *const *files;      /* the cachefiles */
  size_t nfiles;
  const char *out;               /* the dataset (created when missing) */
  const char *app;               /* launches' app (default: the kernel's name) */
  const char *gpu;               /* GPU key for a single file (default: from
                                    its device_name) */
  const char *kernel;            /* the kernel's name (default: the files') */
  ds_kt_grid grid;               /* psize of 0s: the files' problem size */
  unsigned long configs, seed;   /* a seeded sample of configs (0: all) */
  const char *command;           /* runs row's command line */
  ds_kt_source src;              /* with src.path: the features too */
  const char *failures;          /* only named in the summary: the caller
                                    writes the report's list there */
  int no_ptxas;                  /* with src.nptxas 0: no ptxas columns; else
                                    those of the files' GPUs' architectures
                                    (the GPU table's; ptxas.sm_XY.*) */
  void (*note)(void *ctx, const char *line); /* a line for the user */
  void (*progress)(void *ctx, unsigned done, unsigned total);
  void *ctx;
} ds_kt_import_opts;

/* A configuration that failed: on a GPU (its cachefile holds a failure
   string instead of times) or, gpu NULL, in the features' computation. */
typedef struct ds_kt_failure {
  char *key;                     /* its cache key */
  char *gpu;                     /* the GPU key of the file, or NULL */
  char *reason;                  /* the file's string, or why kcast failed */
} ds_kt_failure;

/* What an import did (ds_kt_import_report_free frees it). */
typedef struct ds_kt_import_report {
  size_t configs;                /* configurations imported */
  size_t times;                  /* time_ns values written */
  size_t computed, kept, failed; /* features: computed, already there, failed */
  size_t tried;                  /* configurations whose features were computed */
  size_t skipped;                /* failed on every GPU that tried them */
  size_t fallbacks;              /* groups compiled one by one */
  size_t ptxas_failed;           /* ptxas runs that failed (ds_kt_stats) */
  char ptxas_err[320];
  char *kernel, *app;            /* the kernel's and app's names */
  char **gpus;                   /* per file, the GPU key */
  size_t ngpus;
  ds_kt_failure *fails;          /* every failed configuration, per file in
                                    file order, then the features' */
  size_t nfails;
} ds_kt_import_report;
void ds_kt_import_report_free(ds_kt_import_report *r);

/*
 * Import o->files into o->out (docs/formats.md): phase 1 writes every
 * chosen configuration's launch and times in one transaction (a bad file
 * changes nothing; a new output file is removed again), phase 2 computes
 * the features of the launches that have none and writes them as they
 * finish.  Returns 0, 1 (bad input: err says what and where) or 2 (options
 * that do not fit: a usage error).  *r is filled either way (free it).
 */
int ds_kt_import(const ds_kt_import_opts *o, ds_kt_import_report *r, char *err, size_t cap);

#ifdef __cplusplus
}
#endif

#endif
