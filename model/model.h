/*
 * model.h -- random-forest regression for kcast: data matrices, training
 * (CART / random forest / extremely randomized trees), prediction with
 * quantile-regression-forest intervals, importance, metrics, cross-
 * validation and the .kcm model file.
 *
 * Contract:
 *  - every function that can fail returns 0 on success and -1 on failure;
 *    the reason is then rf_last_error() (per thread, valid until the next
 *    failing rf_ call on that thread).  Library code never prints or exits.
 *  - a trained or loaded rf_forest is immutable: any number of threads may
 *    predict from one forest at the same time.  rf_set_* calls need
 *    exclusive access.
 *  - a model is a pure function of (data, params minus n_threads/progress):
 *    the same seed gives a byte-identical model file whatever the number of
 *    threads (each tree draws from its own generator seeded from
 *    (seed, tree index)).
 *  - targets may be transformed (RF_TRANSFORM_LOG): trees fit log(y); a
 *    prediction is exp(mean over trees of the leaf means of log y), i.e. a
 *    geometric mean, without bias correction.  Interval bounds are the
 *    leaf-sample quantiles in the transformed space (widened there by the
 *    calibration table when the model has one) mapped back with exp.
 *  - docs/formats.md ("Model file (.kcm)") is the normative byte layout.
 *
 * This header builds as C and C++.
 */
#ifndef KCAST_MODEL_H
#define KCAST_MODEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Newest version of the .kcm format this build reads and writes (it reads
   1 to 9; 2 adds the calibration table, 3 the base feature and the
   unseen-GPU table, 4 the features' training ranges, 5 the adapted GPUs, 6
   the extrapolation median of a model with a base, 7 the tables' shrinks
   for unseen groups, 8 their shrinks per class of rows, 9 the analytic
   estimate's version of an an.* base; a model with none of these is
   written as version 4). */
#define RF_FORMAT_VERSION 9
/* Largest number of histogram bins per feature. */
#define RF_MAX_BINS 256

/* Target transforms (stored in the model file). */
enum { RF_TRANSFORM_NONE = 0, RF_TRANSFORM_LOG = 1 };

/* Text of the last failure on this thread ("" when none). */
const char *rf_last_error(void);

/*
 * Test hook: make the n-th allocation from now on fail (n >= 1), and every
 * one after it; n <= 0 turns failures off.  Process-wide; for tests only.
 */
void rf_test_fail_alloc(long n);

/* ------------------------------------------------------------------ data -- */

/*
 * A dense matrix: n_rows x n_cols features (column-major), optional target
 * and optional per-row group labels.  Every pointer is owned by the struct;
 * free with rf_data_free.  NULL pointers are allowed for y and groups.
 */
typedef struct rf_data {
  size_t n_rows;     /* rows (samples) */
  size_t n_cols;     /* feature columns */
  double *x;         /* n_rows*n_cols, column-major: x[j*n_rows + i] */
  double *y;         /* n_rows targets, or NULL */
  char **names;      /* n_cols unique feature names */
  char *target;      /* name of the target column, or NULL */
  char **groups;     /* n_rows group labels (e.g. the application), or NULL */
  char *group_name;  /* name of the group column, or NULL */
  size_t n_extra;    /* columns of the source that were not loaded */
  char **extra;      /* their names (ignored, unselected, dropped constant) */
  size_t n_text;     /* string columns kept per row (rf_csv_opts.text,
                        text_auto, text_ignored); never features */
  char **text_names; /* n_text names */
  char ***text;      /* n_text columns of n_rows strings */
  unsigned char *text_auto; /* n_text flags: kept because its first data
                        cell was not a number (text_auto) */
} rf_data;

/* Allocate an n_rows x n_cols matrix (zeroed, names NULL, y allocated when
   with_y).  0 on success. */
int rf_data_alloc(rf_data *d, size_t n_rows, size_t n_cols, int with_y);
/* Free everything and zero *d.  Accepts NULL. */
void rf_data_free(rf_data *d);

/* CSV loader options: zero-initialise, set size = sizeof(rf_csv_opts). */
typedef struct rf_csv_opts {
  size_t size;              /* sizeof(rf_csv_opts) */
  const char *target;       /* target column (required when !no_target) */
  int no_target;            /* the file has no target (prediction input) */
  const char *group;        /* string column of group labels, or NULL */
  const char *ignore;       /* comma-separated columns to skip, or NULL */
  const char *const *keep;  /* when set: load exactly these feature columns,
                               in this order (others are skipped, unparsed) */
  size_t n_keep;
  int drop_constant;        /* drop feature columns with a single value */
  const char *text;         /* comma list of columns kept as strings per row
                               (d->text), not features; may name the group */
  int text_auto;            /* a column whose first data cell is not a number
                               is kept as text, not a feature */
  int text_ignored;         /* keep the ignored columns as text too */
  double (*empty_value)(const char *column); /* when set: an empty feature
                               cell reads as empty_value(column) unless that
                               is NaN (an error, as without it); kcast passes
                               ds_feature_default (0 for count families) */
  int empty_missing;        /* an empty feature cell empty_value does not fill
                               reads as NaN -- a missing value the caller
                               handles -- instead of being an error */
} rf_csv_opts;

/*
 * Load a CSV file: first record = column names, then one record per row.
 * Feature and target cells must be numbers (strtod, surrounding blanks
 * allowed); NaN and infinities are refused.  Errors name FILE:LINE and the
 * column ("data.csv:7: column tile_x: 'abc' is not a number").  LINE counts
 * records (header = line 1), so it is the text line for files without
 * quoted newlines.  Fewer than 2 data rows is an error.  Column lists
 * (ignore, text) take shell patterns (fnmatch: "tune.*"); a name or
 * pattern that matches no column is an error.
 */
int rf_data_load_csv(rf_data *d, const char *path, const rf_csv_opts *o);
/* Index of text column name in d, -1 when d has none of that name. */
long rf_data_text_col(const rf_data *d, const char *name);

/* Units of what models predict.  The unit of a target: "ns", "W", "J" for
   a dataset's time, power and energy (measurements are stored in time_ns,
   power_w, energy_j); for a CSV column, the unit its name spells as one of
   its parts after the first (time_ms_median -> "ms", time_ns@T4 -> "ns",
   power_w@K80 -> "W"); NULL when the name says none.  The units known:
   RF_UNITS, as written. */
#define RF_UNITS "ns, us, ms, s, W, mW, J, mJ"
const char *rf_target_unit(const char *target);
/* u as one of RF_UNITS (case-insensitive, "sec" for s), or NULL. */
const char *rf_unit_canonical(const char *u);
/* The factor that turns a value in unit from into one in unit to (both of
   RF_UNITS): 1000 for us -> ns, 1e-3 for mW -> W.  -1 (rf_last_error)
   when they are not units of one quantity (ns and W) or not units. */
int rf_unit_factor(const char *from, const char *to, double *factor);
/* The GPU a measurement column names after its '@' (kcast's export:
   time_ns@T4 -> "T4"), NULL when it names none. */
const char *rf_column_gpu(const char *column);

/* Check that every feature and target value is finite; src names the data
   in the message. */
int rf_data_check_finite(const rf_data *d, const char *src);

/* ---------------------------------------------------------------- params -- */

typedef void (*rf_progress_fn)(void *ctx, unsigned done, unsigned total);

typedef struct rf_params {
  size_t size;            /* sizeof(rf_params) (set by rf_params_default) */
  unsigned n_trees;       /* trees (default 100) */
  double max_features;    /* features tried per split: in (0,1] a fraction
                             of the features, >= 1 (integral) a count; 0 =
                             default: 1/3 (random forest, as R's
                             randomForest for regression), 1.0 (extra trees,
                             as scikit-learn's ExtraTreesRegressor) */
  unsigned min_leaf;      /* smallest leaf, in (in-bag) samples (default 5) */
  unsigned max_depth;     /* 0 = unlimited */
  int extra_trees;        /* 1: extremely randomized trees */
  int bootstrap;          /* -1 = default (1 for RF, 0 for extra trees) */
  int transform;          /* RF_TRANSFORM_* (default NONE) */
  uint64_t seed;          /* default 1 */
  int n_threads;          /* OpenMP threads; 0 = runtime default.  Not stored */
  unsigned n_bins;        /* histogram bins per feature, 2..256 (256) */
  unsigned leaf_cap;      /* leaf samples kept for intervals (default 32) */
  int perm_importance;    /* also compute OOB permutation importance */
  int64_t created;        /* summary timestamp (unix s); 0 = now, or
                             SOURCE_DATE_EPOCH when that is set */
  rf_progress_fn progress;/* called after each tree (any thread, serialised) */
  void *progress_ctx;
  int calibrate;          /* interval calibration (RF_CALIBRATE_*): 0 =
                             default (OOB for bootstrap forests, none
                             otherwise), see rf_predict_interval; rf_cv
                             calibrates each fold's forest on that fold's
                             training rows only */
  int base_feature;       /* -1 (default): none.  Else the index of a
                             feature b whose value is the target's base: with
                             the log transform the trees fit log(y) -
                             log(x_b), the ratio of the target to x_b, and a
                             prediction is x_b x exp(mean); x_b must be > 0
                             in every row (e.g. an.time_us, the analytic
                             estimate, for a time target).  Stored */
  int calib_groups;       /* with calibration on: the inner folds hold out
                             whole groups (d->groups), for intervals on
                             groups the forest has not seen (RF_CALIB_GROUPS;
                             needs >= 2 groups; rf_cv calibrates a fold
                             whose training rows hold one group by rows).
                             Not stored */
} rf_params;

/*
 * Interval calibration (model/rf_calib.c): conformalized quantile regression
 * (Romano et al. 2019) on held-out rows of the training data.
 *   RF_CALIBRATE_DEFAULT  OOB for bootstrap forests (cheap), off otherwise
 *   RF_CALIBRATE_OFF      plain quantile-regression-forest intervals
 *   RF_CALIBRATE_ON       OOB rows (at most RF_CALIB_ROWS of them) for
 *                         bootstrap forests, else an inner
 *                         RF_CALIB_FOLDS-fold CV on the training rows
 *                         (RF_CALIB_FOLDS extra forests of at most
 *                         RF_CALIB_TREES trees)
 */
enum { RF_CALIBRATE_DEFAULT = 0, RF_CALIBRATE_OFF = 1, RF_CALIBRATE_ON = 2 };
/* How a model's table was made (rf_info.cal_method, stored). */
enum { RF_CALIB_NONE = 0, RF_CALIB_OOB = 1, RF_CALIB_KFOLD = 2, RF_CALIB_GROUPS = 3 };
#define RF_CALIB_FOLDS 5
/* The prior spread of group offsets (a GPU's or a kernel's log ratio of
   measured time to the analytic base), in the log space of a time target:
   what intervals for an unseen group add when the calibration data holds
   fewer than 3 groups (docs/accuracy.md says how it was measured). */
#define RF_UNSEEN_SIGMA 0.15
#define RF_CALIB_TREES 50
/* Most OOB rows scored (a seeded sample when there are more). */
#define RF_CALIB_ROWS 2000
/* Largest calibration table a model file may hold. */
#define RF_CALIB_MAX 16
/* A shrink per class of rows: the column whose values are the classes,
   and the most classes a table keeps (model/rf_calib.c). */
#define RF_SHRINK_KEY "opr.class"
#define RF_SHRINK_CLASSES 8

void rf_params_default(rf_params *p);

/* ---------------------------------------------------------------- forest -- */

typedef struct rf_forest rf_forest;

/* Training summary stored in the model; NaN = not computed. */
typedef struct rf_summary {
  uint64_t n_rows;        /* training rows */
  double oob_mse;         /* OOB mean squared error, transformed space */
  double oob_mape;        /* OOB mean absolute percentage error (%) */
  double oob_r2;          /* OOB R^2 (original space) */
  double cv_mape;         /* CV figures when `train --cv` ran */
  double cv_median_ape;
  double cv_coverage;
  int64_t created;        /* unix time */
} rf_summary;

/*
 * A model adapted to a GPU it was not trained on from K launches measured
 * there (model/rf_adapt.c): a prediction p for that GPU becomes
 * p x (h x host + (1 - h) x device), h the overhead's share of the
 * launch's analytic estimate there (an_overhead_share).
 */
#define RF_ADAPT_MAX 256    /* adaptations a model may hold */
#define RF_ADAPT_CLASSES 8  /* launch classes: 0 any launch, 1..7 opr.class */
#define RF_ADAPT_RIDGE 0.5  /* the pull of each factor towards 1, in shots */
typedef struct rf_adapt {
  char gpu[64];        /* the GPU (the table's name) */
  int cls;             /* the launches it applies to: their opr.class
                          (model/opr.h), 0 any launch (the fallback) */
  double host;         /* factor on the overhead share of a prediction */
  double device;       /* factor on the rest */
  unsigned shots;      /* measured launches it was fitted to */
  double rmse_log;     /* RMS of ln(adapted / measured) over the shots */
} rf_adapt;

/* Read-only view of a forest; owned by the forest. */
typedef struct rf_info {
  const char *target;        /* target name ("time", a CSV column) */
  const char *gpu;           /* GPU name ("" when unknown) */
  int transform;             /* RF_TRANSFORM_* */
  size_t n_features;
  const char *const *features;
  rf_params params;          /* hyperparameters (n_threads, progress: 0) */
  rf_summary summary;
  size_t n_trees, n_nodes, n_leaves, n_leaf_values;
  const double *mdi;         /* n_features impurity importance, sums to 1 */
  const double *perm;        /* n_features permutation importance or NULL */
  int cal_method;            /* RF_CALIB_*: NONE = intervals uncalibrated */
  unsigned cal_folds;        /* inner folds (KFOLD, GROUPS), 0 otherwise */
  uint64_t cal_rows;         /* held-out rows that were scored */
  size_t n_cal;              /* grid points, 0 when uncalibrated */
  const double *cal_coverage;/* n_cal nominal coverages, increasing */
  const double *cal_q;       /* n_cal widenings, transformed space */
  size_t n_cal_unseen;       /* the table for GPUs the model was not trained
                                on (rf_calibrate_unseen; same grid), 0: none */
  uint64_t cal_unseen_rows;
  unsigned cal_unseen_folds;
  const double *cal_unseen_q;
  double cal_shrink, cal_unseen_shrink; /* each table's shrink of the answers
                                toward cal_toward / cal_unseen_toward (0: the
                                analytic base, 1: the training rows' median
                                correction); 0: none (rf_calib.c) */
  int cal_toward, cal_unseen_toward;
  /* each table's shrinks per class of rows (file version 8): the class
     column's name (NULL: none), and per class its value, shrink and target,
     which replace the one above for rows of that class */
  const char *cal_key, *cal_unseen_key;
  unsigned cal_n_keyed, cal_unseen_n_keyed;
  const double *cal_key_val, *cal_key_shrink, *cal_unseen_key_val, *cal_unseen_key_shrink;
  const int *cal_key_toward, *cal_unseen_key_toward;
  size_t n_adapt;            /* GPUs adapted with measured shots (rf_set_adapt) */
  const rf_adapt *adapt;
  unsigned an_version;       /* the AN_VERSION of the analytic estimate its base
                                (an.*) was computed with at training; 0: no
                                analytic base, or a file from before it was
                                recorded (version < 9) */
} rf_info;

/* Does the model's base come from another analytic estimate than this
   build's (an.* base, trained with another AN_VERSION or before it was
   recorded)?  Its forest corrects an estimate this build no longer
   computes, so its answers may be off by what changed.  With buf (cap >
   0): a sentence saying so, for a note. */
int rf_base_stale(const rf_forest *f, char *buf, size_t cap);

/* Fit the factors of a model to k shots on one GPU: its predictions
   pred[i] (positive) of launches measured y[i] (positive), whose overhead
   share is h[i] (NULL: 0 for every shot).  out->gpu is left empty. */
int rf_adapt_fit(const double *pred, const double *y, const double *h, size_t k,
                 rf_adapt *out);
/* The factor for a launch of overhead share h (1 for a NULL a). */
double rf_adapt_factor(const rf_adapt *a, double h);
/* The class of a launch whose opr.class is cls (rf_adapt.cls: 0 when it
   is none of 1..RF_ADAPT_CLASSES-1). */
int rf_adapt_class(double cls);
/* The adaptation f holds for launches of class cls on gpu (any name of its
   table row): the class's own, else gpu's class-0 one, else NULL. */
const rf_adapt *rf_get_adapt(const rf_forest *f, const char *gpu, int cls);
/* Add a's factors for (gpu, a->cls) to f, replacing one it has (stored:
   file version 4). */
int rf_set_adapt(rf_forest *f, const char *gpu, const rf_adapt *a);
/* The factor of f's adaptation to gpu for the launch names[i] = vals[i]
   (its overhead share from the analytic estimate there): returns 1 and
   sets *factor when f is adapted to gpu, else 0 with *factor = 1. */
int rf_adapt_launch(const rf_forest *f, const char *gpu, const char *const *names,
                    const double *vals, size_t n, double *factor);
/* Fit f's adaptations to gpu from n launches measured there: names[0..p)
   their columns, x row-major (n x p), y the measured targets; the model's
   features are taken by name, derived ones computed on gpu, others
   dflt(name) (NaN, or dflt NULL: an error naming it).  out[0] is class 0
   (every launch), then one per class the launches have, *nout of them
   (out has room for RF_ADAPT_CLASSES); gpu set to the table's name. */
int rf_adapt_fit_rows(const rf_forest *f, const char *gpu, const char *const *names,
                      const double *x, size_t n, size_t p, const double *y,
                      double (*dflt)(const char *name), rf_adapt *out, size_t *nout);

/* Train on d (d->y required, values finite; positive with LOG).  The model
   takes the feature names and target name from d.  *out: free with rf_free. */
int rf_train(const rf_data *d, const rf_params *p, rf_forest **out);
/* Accepts NULL. */
void rf_free(rf_forest *f);

const rf_info *rf_get_info(const rf_forest *f);
/* Set the GPU name / target name (copied). */
int rf_set_gpu(rf_forest *f, const char *gpu);
int rf_set_target(rf_forest *f, const char *target);
/* Record CV figures in the summary. */
struct rf_metrics;
void rf_set_cv(rf_forest *f, const struct rf_metrics *m);

/*
 * Point prediction for one row of n_features values in the model's feature
 * order.  A NaN feature goes left at every split on it.
 */
double rf_predict(const rf_forest *f, const double *row);
/*
 * Point prediction and the [lo, hi] interval at coverage in (0,1) (0.9 ->
 * quantiles 0.05 and 0.95 of the leaf-sample distribution weighted as in
 * Meinshausen's quantile regression forests).  Any out pointer may be NULL.
 * A calibrated model (rf_info.n_cal > 0) stretches the interval to hold
 * the point prediction and widens it in the transformed space to
 * [lo - q, hi + q], q interpolated linearly in the coverage between the
 * table's grid points and held at the end points outside them; q < 0
 * narrows (the result still holds the point prediction; an interval
 * narrowed past empty is the point prediction).
 */
int rf_predict_interval(const rf_forest *f, const double *row, double coverage,
                        double *pred, double *lo, double *hi);
/*
 * Is row (n_features values, model order) outside what f was trained on?
 * The features f splits on whose value lies below the smallest or above the
 * largest training value: returns the index of the most important one, -1
 * when none is (or the model predates stored ranges: file version < 4);
 * *n_out (may be NULL) their number.
 */
long rf_outside(const rf_forest *f, const double *row, size_t *n_out);
/* rf_predict_interval with the calibration table for GPUs the model was
   not trained on when unseen and the model has one (rf_info.n_cal_unseen),
   else the usual table. */
int rf_predict_interval_on(const rf_forest *f, const double *row, double coverage, int unseen,
                           double *pred, double *lo, double *hi);
/*
 * Calibrate f's intervals for groups it has not seen -- a model trained on
 * several GPUs, for a GPU outside them: inner folds of d's rows (the
 * training rows, model feature order) hold out whole groups (groups[i],
 * e.g. each row's GPU; at least 2 distinct), scored as the main table is,
 * into the model's second table (stored, file version 3).
 */
int rf_calibrate_unseen(rf_forest *f, const rf_data *d, char **groups, int n_threads);
/*
 * Predict every row of d (d->n_cols == n_features, same order; use the CSV
 * loader's keep list to get it).  lo/hi may be NULL (no intervals).
 * OpenMP over rows with n_threads (0 = default).
 */
int rf_predict_batch(const rf_forest *f, const rf_data *d, double coverage,
                     double *pred, double *lo, double *hi, int n_threads);

/*
 * Permutation importance on a given set (d in model feature order, with y):
 * increase of the mean squared error (transformed space) when column j is
 * shuffled, for every feature, into out[n_features].
 */
int rf_permutation_importance(const rf_forest *f, const rf_data *d,
                              uint64_t seed, int n_threads, double *out);

/* ------------------------------------------------------------ model file -- */

/* Write atomically (PATH.tmp.PID, then rename). */
int rf_save(const rf_forest *f, const char *path);
/* Load and validate everything (magic, version, endianness, length, CRC,
   every count and index); errors name the file and the problem. */
int rf_load(const char *path, rf_forest **out);

/* --------------------------------------------------------------- metrics -- */

typedef struct rf_metrics {
  size_t n;           /* rows evaluated */
  double mape;        /* mean |pred-y|/|y| in percent (rows with y != 0) */
  double median_ape;  /* median of the same */
  double rmse_log;    /* sqrt(mean (ln pred - ln y)^2), rows with both > 0 */
  double r2;          /* 1 - SS_res/SS_tot */
  double spearman;    /* rank correlation (average ranks for ties) */
  double coverage;    /* fraction with lo <= y <= hi; NaN without intervals */
  double kendall;     /* Kendall's tau-b (ties in either order count neither
                         way) */
  double top1_regret; /* what a tuner choosing by the predictions pays: the
                         measured value of the row predicted lowest (the
                         mean over rows tied there) over the lowest measured
                         value; 1 = it picked the best.  NaN unless every
                         measured value is > 0 */
  double top5_regret; /* the lowest measured value among the five rows
                         predicted lowest (ties broken by row order), over
                         the lowest measured value */
} rf_metrics;

/* Metrics over n rows; lo/hi may be NULL.  NaN where undefined.  The
   ranking figures (spearman, kendall, top-k regret) treat lower as better,
   as for a time. */
int rf_metrics_compute(const double *y, const double *pred, const double *lo,
                       const double *hi, size_t n, rf_metrics *m);

/*
 * Top-k regret of a ranking (a tuning space: the configurations of one
 * kernel on one GPU, lower is better): pick the k rows with the lowest
 * predictions, run them, keep the fastest -- how much slower is it than the
 * fastest measured row?  *regret = min(y over those k rows) / min(y) - 1
 * (0: the best was among them; 0.4: 40 % slower).  Rows with a NaN y or
 * prediction are left out; ties in the prediction are taken in row order.
 * -1 (rf_last_error) when n is 0, k is 0, no row is usable or min(y) <= 0.
 * Separate from rf_metrics so that either can be merged into the other.
 */
int rf_rank_regret(const double *y, const double *pred, size_t n, size_t k, double *regret);

/* ------------------------------------------------------ cross-validation -- */

typedef struct rf_cv_opts {
  size_t size;            /* sizeof(rf_cv_opts) */
  unsigned folds;         /* k-fold (seeded shuffle); ignored with by_group */
  int by_group;           /* leave-one-group-out over d->groups */
  int search;             /* grid search inside each training fold */
  double coverage;        /* interval coverage (default 0.9 when 0) */
  rf_progress_fn progress;/* called after each fold */
  void *progress_ctx;
  unsigned shots;         /* with by_group: K rows of each held-out group,
                             drawn with the seed, adapt that fold's model to
                             the group (rf_adapt_fit: a new GPU from K
                             measured launches) and are left out of every
                             figure; 0 = none */
  const double *overhead; /* n_rows overhead shares for the adaptation
                             (an_overhead_share on the row's GPU), or NULL
                             (0 for every row: one factor) */
  const int *adapt_class; /* n_rows classes (rf_adapt_class of opr.class):
                             the shots are drawn and fitted per class, K of
                             each class of the held-out group; NULL: one */
  const unsigned *more;   /* n_more further shot counts (0 allowed), each
                             scored on the same folds' forests into
                             rf_cv_result.more (by_group only) */
  size_t n_more;
} rf_cv_opts;

typedef struct rf_cv_group {
  char *name;             /* group label (owned) */
  rf_metrics m;
} rf_cv_group;

/* The figures of one further shot count (rf_cv_opts.more). */
typedef struct rf_cv_shots {
  unsigned shots;
  double *pred, *lo, *hi; /* n: answers, adapted with the shots */
  unsigned char *shot;    /* n: 1 for a row drawn as a shot */
  rf_adapt *fold_adapt;   /* per fold (= group) x RF_ADAPT_CLASSES, as above */
  rf_metrics overall;     /* over the rows that are not shots */
  rf_metrics *group;      /* n_groups, in rf_cv_result.groups' order */
} rf_cv_shots;

typedef struct rf_cv_result {
  rf_metrics overall;
  size_t n;               /* rows */
  double *pred, *lo, *hi; /* out-of-fold predictions per row */
  unsigned n_folds;
  rf_metrics *fold;       /* n_folds */
  double *fold_mf;        /* max_features chosen per fold (search) */
  unsigned *fold_leaf;    /* min_leaf chosen per fold (search) */
  int *fold_et;           /* extra trees (1) or random forest, per fold */
  int *fold_base;         /* the base feature used (1) or not, per fold */
  size_t n_groups;
  rf_cv_group *groups;    /* per group metrics when d->groups (sorted) */
  unsigned char *shot;    /* n: 1 for a row used as a shot (then its
                             prediction is the unadapted one), or NULL */
  rf_adapt *fold_adapt;   /* n_folds x RF_ADAPT_CLASSES fitted adaptations
                             (shots; [fold * RF_ADAPT_CLASSES + class], shots
                             0 where the fold had no row of the class), or NULL */
  size_t n_more;
  rf_cv_shots *more;      /* rf_cv_opts.more's counts, in order */
  unsigned shrunk_folds;  /* folds whose table moved the held-out answers
                             (rf_info.cal_shrink > 0), and the smallest and
                             largest move among them */
  double shrink_min, shrink_max;
  size_t groups_calibrated; /* with calibration for unseen groups: the fewest
                             groups a fold's intervals were calibrated on
                             (below 3, RF_UNSEEN_SIGMA widened them);
                             SIZE_MAX otherwise */
} rf_cv_result;

/*
 * Choose hyperparameters on d by the median APE (the error `kcast cv`
 * reports) of an inner RF_SEARCH_FOLDS-fold CV of forests of at most
 * RF_SEARCH_TREES trees: p itself first, then random forests
 * and extra trees x max_features {1, 2/3, 1/3} x min_leaf {1, 3, 8} x with
 * and without p's base feature; a candidate must beat p's error by
 * RF_SEARCH_MARGIN, and later ones the best so far.  Inner folds hold out
 * groups when by_group
 * and d has at least 3 groups.  *best = the winner with p's tree count,
 * calibration and progress; *best_ape its inner error (may be NULL).
 */
#define RF_SEARCH_FOLDS 3
#define RF_SEARCH_TREES 50
/* A candidate replaces the given configuration only when its inner error is
   at least this much (relatively) lower. */
#define RF_SEARCH_MARGIN 0.05
int rf_search(const rf_data *d, const rf_params *p, int by_group, rf_params *best,
              double *best_ape);

/*
 * Cross-validate params p on d.  With o->search every training fold picks
 * its hyperparameters with rf_search (nested: the held-out rows are never
 * seen), then trains the chosen ones with p->n_trees.
 */
int rf_cv(const rf_data *d, const rf_params *p, const rf_cv_opts *o,
          rf_cv_result *r);
void rf_cv_result_free(rf_cv_result *r);
/*
 * The k-fold assignment rf_cv makes of n rows (K folds, seed = the
 * params' seed): fold[i] in 0..K-1 for each row, after a seeded shuffle.
 * The same rows in the same order get the same folds, so another program
 * can train on exactly rf_cv's training rows.  2 <= K <= n.
 */
int rf_cv_folds(size_t n, unsigned K, uint64_t seed, size_t *fold);

/* ------------------------------------------------ GPUs and analytic model -- */

/*
 * A GPU descriptor: one row of the GPU table (model/gpus.csv, compiled in;
 * KCAST_GPUS=FILE adds or replaces rows; docs/gpus.md).  Public datasheet
 * figures and the CUDA Programming Guide's per-architecture limits.
 * Multi-GPU boards (K80) are described per GPU.  idle_w is an estimate,
 * not a datasheet figure.
 */
typedef struct an_gpu {
  const char *name;          /* short name used on the command line ("H200") */
  const char *full_name;     /* e.g. "NVIDIA H200 SXM 141GB" */
  const char *aliases;       /* ';'-separated names the driver reports, may be "" */
  int cc_major, cc_minor;    /* compute capability */
  int sms;                   /* streaming multiprocessors, > 0 */
  double boost_mhz;          /* boost clock */
  double fp32_gflops;        /* peak FP32 (FMA = 2 flops), non-tensor */
  double fp64_gflops;        /* peak FP64, non-tensor */
  double mem_bw_gbs;         /* peak DRAM bandwidth, GB/s (10^9) */
  double mem_gb;             /* DRAM size, GB */
  double l2_mb;              /* L2 cache, MB (2^20 bytes) */
  double smem_per_sm_kb;     /* largest shared memory per SM, KB (2^10) */
  double smem_per_cta_kb;    /* largest shared memory one CTA may use, KB */
  double smem_reserved_b;    /* shared memory the system reserves per CTA, bytes */
  int regs_per_sm;           /* 32-bit registers per SM */
  int max_regs_per_thread;   /* registers one thread may use */
  int max_threads_per_sm;    /* resident threads per SM (a multiple of 32) */
  int max_ctas_per_sm;       /* resident CTAs per SM */
  double tdp_w;              /* board power limit (per GPU for K80) */
  double idle_w;             /* estimated idle power */
  double l1_kb;              /* L1 data cache per SM, KB: the unified L1 and
                                shared memory from cc 7.0 (shared memory in
                                use is taken from it), the L1/texture or
                                read-only cache before (optional column; its
                                default comes from the compute capability) */
} an_gpu;

/* Number of GPUs in the table, and the i-th (NULL when out of range). */
size_t an_gpu_count(void);
const an_gpu *an_gpu_at(size_t i);
/* The GPU called name: its short name or an alias, case-insensitively and
   ignoring all but letters and digits and a leading "NVIDIA"/"Tesla" (so
   "NVIDIA A100-PCIE-40GB" and "A100-PCIE-40GB" find A100-PCIE).  NULL when
   unknown. */
const an_gpu *an_gpu_find(const char *name);
/* Why KCAST_GPUS (or the built-in table) could not be read: one line
   naming the file, the line and the problem; "" when all is well.  The
   built-in rows are used either way. */
const char *an_gpu_table_error(void);
/* The table rows of the GPUs a comma list names (those the table knows),
   at most cap of them into out; returns how many. */
size_t an_gpu_list(const char *list, const an_gpu **out, size_t cap);
/* Is the GPU called name one of the comma list's (the same row of the
   table, or the same name when the table knows neither)? */
int an_gpu_in_list(const char *list, const char *name);
/* The one GPU resolver for names a user gives against names that exist
   (a dataset's measurement GPUs, a model's): the entry of names[0..n)
   that name means -- the same string, else the same ignoring case, else
   the same row of the GPU table ("t4", "Tesla T4", "NVIDIA T4" all mean a
   dataset's "T4") -- or NULL. */
const char *an_gpu_match(const char *name, const char *const *names, size_t n);
/* The table's short names, ", "-separated, into buf (cap > 0; cut short
   when it does not fit); for "unknown GPU" messages. */
void an_gpu_names(char *buf, size_t cap);

/*
 * The analytic estimate's version: raised by every change that moves its
 * answer (an.time_us, an.energy_mj, the other an.* terms) for any launch.
 * A time model learns the measured time over this estimate; one trained
 * on another version corrects an estimate this build no longer computes,
 * so models record it (file version 9) and predictions from another say
 * so (rf_base_stale).  tests/test_analytic.c pins the estimate's answers
 * for a few launches: when that test fails, raise this and the figures.
 */
#define AN_VERSION 1

/* Lower and upper factors of the analytic bands (documented in docs/gpus.md). */
#define AN_TIME_BAND_LO 0.5
#define AN_TIME_BAND_HI 2.0
#define AN_POWER_BAND_LO 0.7
#define AN_POWER_BAND_HI 1.3

/* The analytic estimate of one launch on one GPU (docs/gpus.md). */
typedef struct an_estimate {
  double time_us, time_lo_us, time_hi_us;    /* predicted kernel time and band */
  double power_w, power_lo_w, power_hi_w;    /* average power and band (in [idle, TDP]) */
  double energy_mj;                          /* time_us * power_w / 1000 */
  double t_overhead_us;                      /* fixed launch overhead */
  double t_compute_us;                       /* slowest functional-unit pipe */
  double t_issue_us;                         /* warp instruction issue */
  double t_memory_us;                        /* DRAM / L2 traffic */
  double t_latency_us;                       /* one warp's dependent chain per round */
  double waves;                              /* ceil(ctas / (sms * resident)) */
  int resident_ctas;                         /* CTAs resident per SM */
  double utilisation;                        /* in [0,1]: drives the power */
  const char *bound;                         /* "compute" "issue" "lsu" "latency" "l2" "dram" */
  double t_lsu_us;                           /* the SM's load/store path */
  double t_l2_us, t_dram_us;                 /* L2 and DRAM traffic (t_memory_us: the larger) */
  double l1_hit_rate;                        /* load sectors L1 serves (model/cache.c) */
  double l2_hit_rate;                        /* of the L2 requests, those L2 serves */
  double dram_bytes;                         /* read and written */
} an_estimate;

/*
 * Estimate time and power of the launch whose features are names[i] =
 * vals[i] (docs/features.md; an absent feature counts 0).  Needs
 * launch.ctas and launch.block_{x,y,z} (or launch.threads) > 0.  Returns 0,
 * or -1 (rf_last_error() says why) when they are missing or a value is
 * negative or not finite.  A rough roofline estimate, not a trained model.
 */
int an_estimate_launch(const an_gpu *g, const char *const *names, const double *vals,
                       size_t n, an_estimate *out);
/* The overhead's share of an estimate's time, in [0, 1]: t_overhead_us /
   time_us (1 for an operator launch bound by the host's dispatch). */
double an_overhead_share(const an_estimate *e);

/*
 * Residency of one launch on one GPU (model/analytic.c, docs/features.md
 * "occ.*"): threads and warps per CTA, shared memory per CTA (dynamic +
 * static; the ptxas.sm_XY.smem_bytes column for the GPU's architecture when
 * present), registers per thread (ptxas.sm_XY.registers for the GPU's
 * architecture, else the nearest architecture a column gives; 0 when none
 * does: the register limit is then not applied), and from them the
 * resident CTAs per SM under every limit, the limit that binds, waves and
 * the share of SMs with work.
 */
typedef struct an_occupancy {
  double tpc, wpc;           /* threads and warps per CTA */
  double shared;             /* shared bytes per CTA (dynamic + static) */
  double regs;               /* registers per thread, 0 when unknown */
  double spill_bytes;        /* ptxas spill stores + loads per thread, bytes */
  double ctas_per_sm;        /* resident CTAs per SM, >= 1 */
  double warps_per_sm;       /* ctas_per_sm x wpc */
  double occupancy;          /* warps_per_sm / (max_threads_per_sm / 32) */
  int limiter;               /* AN_LIMIT_*: what bounds ctas_per_sm */
  int fits;                  /* 0: the CTA exceeds the GPU's shared memory or
                                registers (the launch would fail; counted 1) */
  double waves;              /* ctas / (sms x ctas_per_sm) */
  double tail;               /* ceil(waves) - waves: idle share of the last wave */
  double busy_sms;           /* min(1, ctas / sms) */
} an_occupancy;
enum { AN_LIMIT_CTAS = 1, AN_LIMIT_THREADS = 2, AN_LIMIT_REGS = 3, AN_LIMIT_SHARED = 4 };

int an_occupancy_of(const an_gpu *g, const char *const *names, const double *vals, size_t n,
                    an_occupancy *out);

/*
 * Derived features of one launch (model/derived.c, docs/features.md),
 * computed from the launch's other features and, for analytic, occ and
 * gpu, the descriptor of the GPU it runs on:
 *   mangrove  mg.*    GPU Mangrove's twelve (op.*, class.*, launch.*)
 *   analytic  an.*    the analytic estimate and its terms on the GPU
 *   work      work.*  hardware-independent ratios (work per thread, warp
 *                     and CTA; coalescing; bank conflicts; read-only path;
 *                     reuse; instruction mix)
 *   occ       occ.*   registers, residency, occupancy, waves on the GPU
 *   gpu       gpu.*   the GPU's descriptor
 *   opr       opr.*   an operator launch's residency and waves on the GPU
 *                     (the rest of opr.* is stored, model/opr.h)
 *   cache     cache.* the memory hierarchy on the GPU (model/cache.c)
 * Training and prediction both call these, so a model trained on derived
 * columns predicts from raw feature sets.  Each returns 0, or -1 with
 * rf_last_error() when the launch.* columns it needs are missing or the GPU
 * is unknown.
 */
#define MD_MANGROVE_N 12
#define MD_ANALYTIC_N 7
#define MD_WORK_N 16
#define MD_OCC_N 9
#define MD_GPU_N 10
#define MD_OPR_N 4
#define MD_CACHE_N 7
#define MD_MAX_N 16
enum { MD_FAM_MANGROVE, MD_FAM_ANALYTIC, MD_FAM_WORK, MD_FAM_OCC, MD_FAM_GPU, MD_FAM_CACHE,
       MD_FAM_OPR,
       MD_FAM_N };
extern const char *const md_mangrove_names[MD_MANGROVE_N];
extern const char *const md_analytic_names[MD_ANALYTIC_N];
extern const char *const md_work_names[MD_WORK_N];
extern const char *const md_occ_names[MD_OCC_N];
extern const char *const md_gpu_names[MD_GPU_N];
/* opr.* on the GPU (model/analytic_op.c): residency, waves, tail and busy
   SMs of an operator launch (model/opr.h); all 0 for a launch without
   opr.class */
extern const char *const md_operator_names[MD_OPR_N];
extern const char *const md_cache_names[MD_CACHE_N];
int md_mangrove(const char *const *names, const double *vals, size_t n, double out[MD_MANGROVE_N]);
int md_analytic(const char *gpu, const char *const *names, const double *vals, size_t n,
                double out[MD_ANALYTIC_N]);
int md_work(const char *const *names, const double *vals, size_t n, double out[MD_WORK_N]);
int md_occupancy(const char *gpu, const char *const *names, const double *vals, size_t n,
                 double out[MD_OCC_N]);
int md_gpu(const char *gpu, double out[MD_GPU_N]);
int md_operator(const char *gpu, const char *const *names, const double *vals, size_t n,
                double out[MD_OPR_N]);
/* cache.*: where the launch's global loads are served on the GPU
   (model/cache.c: L1 and L2 hit rates, DRAM bytes read and written, L2
   traffic, the L1 capacity left beside shared memory, whether the
   emulator's reuse features were there to model it). */
int md_memory(const char *gpu, const char *const *names, const double *vals, size_t n,
              double out[MD_CACHE_N]);
/* Family fam (MD_FAM_*) into out[] of its size. */
int md_compute(int fam, const char *gpu, const char *const *names, const double *vals, size_t n,
               double *out);
/* The family a derived column name belongs to (MD_FAM_*), -1 when name is
   not a derived column. */
int md_family_of(const char *name);
/* The family called word[0..len) on the command line ("mangrove", "work",
   ...): its index and column names, -1 when there is none. */
int md_family(const char *word, size_t len, const char *const **names, size_t *n);
/* The command-line word of family fam, NULL when out of range. */
const char *md_family_word(int fam);
/* Does family fam depend on the GPU? */
int md_family_needs_gpu(int fam);
/* The value of derived column name for one launch on GPU gpu, computing
   each family once per cache (zero-initialise it per launch): 1 when name is
   a derived column (*v set), 0 when it is not one, -1 when it cannot be
   computed. */
typedef struct md_cache {
  int have[MD_FAM_N];
  double v[MD_FAM_N][MD_MAX_N];
} md_cache;
int md_value(md_cache *c, const char *name, const char *gpu, const char *const *names,
             const double *vals, size_t n, double *v);
/* Where derived column name is: its family (*fam) and its index in the
   family (*k); 0 when name is not a derived column.  md_value_at then
   answers as md_value without looking the name up again (a model's
   columns, located once at load). */
int md_locate(const char *name, int *fam, size_t *k);
int md_value_at(md_cache *c, int fam, size_t k, const char *gpu, const char *const *names,
                const double *vals, size_t n, double *v);

/* ------------------------------------------------ feature models (fm_) -- */

/*
 * A feature model (model/fm_fit.c, file model/fm_io.c, docs/formats.md
 * "Feature model file (.kcf)") gives the dynamic features of one kernel's
 * launch from the launch alone -- grid, block, dynamic shared memory and
 * the scalar arguments the kernel reads (arg.* features) -- learned from
 * the launches of that kernel at several sizes.  Each count is an exact
 * polynomial of the launch's quantities when one fits every training
 * launch, otherwise a product of powers fitted in log space.  A loaded or
 * fitted model is immutable: fm_eval may run on any number of threads.
 */
#define FM_FORMAT_VERSION 3   /* 3: the instances' blocks; 2: template
                                 variables; 1 and 2 are still read */
/* Kernel parameters an argument may come from: arg.0 .. arg.(FM_MAX_PARAM-1). */
#define FM_MAX_PARAM 4096
/* Template variables a model may have (tpl.0 .. tpl.(FM_MAX_TPL-1)): the
   integer template arguments of a kernel template's instances. */
#define FM_MAX_TPL 8

/* fm_eval flags. */
enum {
  FM_EXTRAPOLATED = 1u << 0, /* a quantity the model uses lies outside the
                                range of its training launches, or an
                                argument no form reads but whose value the
                                configuration fixed in every training launch
                                (its effect may hide in the configuration's) */
  FM_OTHER_BLOCK = 1u << 2,  /* a template's instances each ran with one
                                block, and this launch's is another (the
                                instance's own, or for an instance nobody
                                ran the rule its blocks follow: constant or
                                equal to a template variable); also sets
                                FM_EXTRAPOLATED */
  FM_UNRELIABLE = 1u << 1    /* the kernel's held-out error is above the
                                model's limit, or it could not be measured
                                (fewer than 3 sizes): its work depends on
                                more than the launch (data, a loop count
                                it does not read as an argument) */
};

typedef struct fm_model fm_model;

/* Training launches of one kernel (fm_fit). */
typedef struct fm_rows {
  size_t n;                  /* launches */
  const uint32_t *grid;      /* n*3 */
  const uint32_t *block;     /* n*3 */
  const uint64_t *shmem;     /* n, dynamic shared bytes */
  const char *const *size;   /* n labels of the size (the input: the
                                dataset label); held-out validation leaves
                                one label out at a time */
  size_t nf;                 /* feature columns */
  const char *const *names;  /* nf names (launch.*, op.*, class.*, mem.*,
                                ctrl.*, arg.*; emu.* and static.* ignored;
                                tpl.I: the I-th integer template argument
                                of the row's kernel instance, inputs like
                                arg.*, not outputs) */
  const double *x;           /* n*nf row-major; NaN where a launch lacks it */
} fm_rows;

/* One launch to evaluate. */
typedef struct fm_launch {
  uint32_t grid[3], block[3];
  uint64_t shmem;
  const double *args;        /* args[i]: value of kernel parameter i (what
                                arg.i would hold); entries the model does
                                not read are ignored */
  size_t nargs;              /* entries of args */
  const double *targs;       /* a template's variables (T0, T1, ...: the
                                instance's integer template arguments) */
  size_t ntargs;             /* entries of targs: exactly the model's */
} fm_launch;

/*
 * Fit the feature model of kernel (its mangled name; app may be NULL) from
 * the rows of r with use[i] != 0 (use NULL: all).  At least 2 distinct
 * launch configurations are needed.  No held-out error is set (see
 * fm_validate).  [out] *out: free with fm_free.
 */
int fm_fit(const fm_rows *r, const uint8_t *use, const char *kernel, const char *app,
           fm_model **out);
void fm_free(fm_model *m);

/* Called by fm_validate for every held-out launch: row is r's row index,
   pred the model's outputs (fm_nout(m) values in fm_out_name order). */
typedef void (*fm_heldout_fn)(void *ctx, size_t row, const fm_model *m, const double *pred,
                              unsigned flags);
/*
 * Leave one size out: for each distinct size label of r, fit on the other
 * sizes and evaluate that size's launches.  *err receives the median
 * relative error (fm_rel_error) of the class.* and mem.* features of every
 * held-out launch (those that are non-zero in the launch or the
 * prediction), NaN when fewer than 2 folds could be fitted; *nsizes the
 * sizes held out.
 * A fold that cannot be fitted (its training sizes share one
 * configuration) is skipped.  cb may be NULL.
 */
int fm_validate(const fm_rows *r, double *err, unsigned *nsizes, fm_heldout_fn cb, void *ctx);
/* |pred - truth| / max(|truth|, 1): relative, and absolute near zero. */
double fm_rel_error(double pred, double truth);
/* Record the held-out error of a fitted model and the limit above which
   fm_eval flags FM_UNRELIABLE. */
void fm_set_heldout(fm_model *m, double err, unsigned nsizes, double limit);

/*
 * Features of launch l into out[0..fm_nout(m)) (fm_out_name order): no
 * allocation, thread-safe.  [out] *flags (may be NULL): FM_* bits.  -1 when
 * l passes fewer arguments than the model reads (naming the parameter),
 * another number of template arguments than the model's template
 * variables, or a zero grid/block dimension.  A template variable outside
 * its fitted range always flags FM_EXTRAPOLATED (an instance nobody ran
 * beyond the ones fitted).
 */
int fm_eval(const fm_model *m, const fm_launch *l, double *out, unsigned *flags);

/* What a model holds (fm_info). */
typedef struct fm_info {
  const char *kernel, *app;  /* owned by the model; app "" when not given */
  size_t nout;               /* output features */
  size_t n_exact, n_power, n_linear, n_const, n_derived;
                             /* outputs per form: exact polynomial, product
                                of powers (log space), least-squares monomial
                                (counts with zeros), constant, computed from
                                the launch (launch.*, arg.*, ratios) */
  size_t nargs;              /* arguments read */
  const uint32_t *arg_param; /* their parameter indices, ascending */
  size_t ntpl;               /* template variables (0: one kernel; else the
                                kernel is a template key, fe_template_key) */
  size_t nsizes, nlaunches;  /* training sizes and launches */
  size_t ninst;              /* template instances recorded with their one
                                block each (FM_OTHER_BLOCK), 0: none */
  double heldout_error;      /* NaN when not measured */
  unsigned heldout_sizes;
  double limit;              /* FM_UNRELIABLE above this held-out error */
  int64_t created;           /* Unix time */
} fm_info;
void fm_get_info(const fm_model *m, fm_info *out);
size_t fm_nout(const fm_model *m);
/* Fitted range of template variable T<t> (NaN when t >= ntpl). */
void fm_tpl_range(const fm_model *m, size_t t, double *lo, double *hi);
const char *fm_out_name(const fm_model *m, size_t i);
/* Text form of output i ("exact: 2*threads*arg.0 + 1*ctas"), into buf. */
void fm_out_form(const fm_model *m, size_t i, char *buf, size_t cap);

/* Write atomically (PATH.tmp.PID, then rename); load checked (each failure
   names the file and what is wrong). */
int fm_save(const fm_model *m, const char *path);
int fm_load(const char *path, fm_model **out);

#ifdef __cplusplus
}
#endif

#endif
