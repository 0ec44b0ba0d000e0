/*
 * ds_train.h -- a training matrix from a kcast dataset or a CSV file: what
 * `kcast train`, `kcast cv` and `kcast report` load, and what the C API's
 * and the Python package's callers get the same way.
 *
 * Input is either a CSV (csv, target = a column) or a dataset (db, gpu =
 * NAME[,NAME...] or "all", target = time, power or energy: the median of
 * each launch's measurements, one row per (launch, GPU) measured).  Loading
 * adds the derived families (model/derived.c) the options ask for or the
 * defaults choose, and sets the target transform and the base column of
 * the rf_params (docs/accuracy.md says why these defaults).
 *
 * Errors: every function returns 0 on success; -1 for bad input (the
 * message in err names the file, the row or column and the problem), -2
 * for options that do not go together (a usage error: the message names
 * them).  Nothing prints.
 */
#ifndef KCAST_DS_TRAIN_H
#define KCAST_DS_TRAIN_H

#include <stddef.h>

#include "model/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What to load (set by the caller) and what loading found (set by
   ds_train_load). */
typedef struct ds_train_input {
  const char *csv, *db, *target, *gpu, *group, *ignore;  /* target: a CSV
                              column, or for a dataset time (NULL), power
                              or energy */
  const char *app;         /* dataset: only the launches of these apps
                              (comma list), NULL all */
  const char *gpu_column;  /* CSV column naming each row's GPU (default: gpu
                              when the file has one and gpu is not given) */
  const char *features;    /* NULL: every loaded column and the default
                              derived families; else a comma list of
                              families and derived families */
  const char *base;        /* NULL/"auto": the analytic estimate of a time,
                              power or energy target when it can be made;
                              "none"; or a column */
  int drop_constant;
  int log_target;          /* -1 auto (log when every target > 0), 0, 1 */
  int calib_set;           /* the calibration was chosen by the caller */
  int want_overhead;       /* set overhead[] and adapt_class[] (cv --shots,
                              calibrate) */
  double *overhead;        /* set by ds_train_load when want_overhead: each
                              row's overhead share on its GPU
                              (an_overhead_share; 0 where no estimate can be
                              made); the caller frees it */
  int *adapt_class;        /* ditto: each row's class for the shots
                              (rf_adapt_class of its opr.class) */
  /* set by ds_train_load */
  long gpu_col;            /* the text column of each row's GPU, -1 when one
                              GPU (gpu) names them all */
  char gpus[512];          /* the rows' distinct GPUs, comma-separated */
  char notes[512];         /* CSV columns kept as text because of their content */
  char gpu_note[640];      /* "" or why the analytic base (and the occupancy
                              features) the defaults use are left out: a
                              row's GPU the GPU table does not know */
  char gpu_buf[512];       /* for a dataset: its names of the GPUs gpu named,
                              comma-separated ("" until then, or when they
                              do not fit) */
  char left_out[512];      /* "" or the measurement and row-key columns the
                              defaults left out (never features unless
                              named: METRIC@GPU, id, lseq) */
} ds_train_input;

/* kcast's training defaults into *p and a cleared *in (docs/accuracy.md:
   extremely randomized trees, every feature at each split, leaves of one
   sample, calibrated intervals). */
void ds_train_defaults(rf_params *p, ds_train_input *in);
/* Is list a comma list of family names (letters, digits, '_'), none
   empty?  Which families exist is checked by ds_train_load. */
int ds_train_valid_families(const char *list);
/*
 * Load the matrix in->csv or in->db describes into *d (free with
 * rf_data_free), its derived columns, and choose the target transform and
 * the base column into *p.  0; -1 or -2 with the message in err[0..cap).
 */
int ds_train_load(ds_train_input *in, rf_data *d, rf_params *p, char *err, size_t cap);
/*
 * The name under which dataset db (src names it in messages) holds metric's
 * measurements of GPU name (the same name in any case, or one the GPU table
 * resolves to the same GPU: "Tesla T4" finds "T4") into key[0..cap).  0
 * found; 1 none; -1 the dataset cannot be read, or holds that GPU's
 * measurements under two names (one would be left out), the message in
 * err[0..errcap).
 */
struct ds_db;
int ds_train_gpu_key(struct ds_db *db, const char *src, const char *metric, const char *name,
                     char *key, size_t cap, char *err, size_t errcap);

#ifdef __cplusplus
}
#endif

#endif
