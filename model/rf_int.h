/*
 * rf_int.h -- internals of the forest module shared by its .c files: the
 * forest and tree structs, the packed node, the allocator with its fault
 * hook, the error buffer and the random generator.  Outside model/ only
 * api/api.c (the batch walker, rf__predict_rows) and the tests include
 * this header.
 */
#ifndef KCAST_RF_INT_H
#define KCAST_RF_INT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "model/model.h"

/*
 * A packed node, 16 bytes, four to a cache line:
 *
 *   +--------------------+-------------+-------------+
 *   | v (f64)            | feature i32 | left u32    |
 *   +--------------------+-------------+-------------+
 *
 * Split (feature >= 0): x[feature] <= v goes to node `left`, else to
 * `left + 1`; children are always allocated as a pair after their parent
 * (left > own index), so a walk strictly increases the index and ends.
 * Leaf (feature == -1): v is the mean of the (transformed) in-bag targets,
 * `left` is the leaf number, indexing leaf_off.
 */
typedef struct rf_node {
  double v;
  int32_t feature;
  uint32_t left;
} rf_node;

typedef struct rf_tree {
  uint32_t n_nodes;    /* >= 1; nodes[0] is the root */
  uint32_t n_leaves;   /* leaves numbered 0..n_leaves-1 */
  uint32_t n_values;   /* stored leaf samples in total */
  rf_node *nodes;      /* n_nodes, owned */
  uint32_t *leaf_off;  /* n_leaves+1: leaf k's samples are
                          values[leaf_off[k] .. leaf_off[k+1]), sorted */
  float *values;       /* n_values transformed targets, owned */
} rf_tree;

/*
 * Prediction layout, 8 bytes a node, built in memory from the nodes when
 * a forest is trained or loaded (never stored):
 *
 *   +--------------+----------------------+----------+
 *   | thr: f32     | kid: u24             | feat: u8 |
 *   +--------------+----------------------+----------+
 *
 * Split: go to kid (left) when xf[feat] <= thr, else kid+1, where xf is
 * the row rounded up to float.  Exact: every threshold the trainer makes
 * is a float (rf_train.c), and for a float t, x <= t <=> roundup(x) <= t.
 * Leaf: feat == RF_CLEAF, kid = its own index, and the bits of thr are
 * its leaf code << 3 | the slot of its 64-byte block holding its mean (a
 * double; the block is the leaf's own, see below).  The leaf code names
 * the leaf's samples for the interval: when the forest allows it
 * (cdirect), their offset in the tree's values and their count,
 *
 *   code = leaf_off[k] << cbits | (count - 1)     (29 bits at most),
 *
 * so that the interval reads the samples without a load of leaf_off (a
 * cache miss per tree); otherwise the leaf number k.  The walk
 * sets xf[RF_CLEAF] = -inf, so a leaf's step goes to kid, itself: a walk
 * of exactly depth steps, with no test for leaves, ends on the leaf.
 *
 * Each tree's array is cut into 64-byte blocks (one cache line each, the
 * arena is aligned): a block holds a pair of children, the pairs below
 * them breadth-first while they fit, and the means of the leaves it
 * holds, so a walk touches about one line per two levels and reads its
 * leaf's mean from a line it already has (rf_predict.c, rf__build_fast).
 * Used when every threshold is a float, features < 255 and a tree's
 * array has < 2^24 slots; otherwise (e.g. files from another trainer)
 * the 16-byte nodes are walked.
 */
typedef struct rf_cnode {
  uint32_t key; /* order key of the float threshold (rf_walk.h, fkey) */
  uint32_t kw;  /* (kid - own index) << 8 | feat */
} rf_cnode;
#define RF_CLEAF 0xFFu

/* A model's interval calibration table (model/rf_calib.c). */
typedef struct rf_calib {
  int method;                 /* RF_CALIB_*; NONE: n == 0 */
  unsigned folds;             /* inner folds (KFOLD, GROUPS), else 0 */
  uint64_t rows;              /* held-out rows scored */
  unsigned n;                 /* grid points, <= RF_CALIB_MAX */
  double cov[RF_CALIB_MAX];   /* nominal coverages, increasing in (0,1) */
  double q[RF_CALIB_MAX];     /* widening at cov[k], transformed space */
  /* A table made on held-out groups (RF_CALIB_GROUPS) of a forest with
     base_med: the share of the way its answers move from the forest's
     toward `toward` (0: the base itself, log ratio 0; 1: base_med), chosen
     on those groups' rows (rf_calib.c, "Unseen groups"); 0 keeps the
     forest's answer.  File version 7. */
  double shrink;
  int toward;
  /* The same chosen per class of rows (file version 8): where the rows'
     column `key` holds key_val[k], key_shrink[k] toward key_toward[k]
     replaces shrink and toward.  The classes are the values of the
     column named RF_SHRINK_KEY (operator launches: GEMMs, convolutions,
     elementwise, softmax and norm kernels are off against the estimate in
     their own ways); rows of another value take shrink.  n_keyed = 0:
     none (key is then unused). */
  int key;
  unsigned n_keyed;
  double key_val[RF_SHRINK_CLASSES];
  double key_shrink[RF_SHRINK_CLASSES];
  int key_toward[RF_SHRINK_CLASSES];
} rf_calib;

struct rf_forest {
  char *target;        /* owned, never NULL */
  char *gpu;           /* owned, never NULL ("" unknown) */
  size_t n_features;
  char **features;     /* owned */
  rf_params params;    /* resolved hyperparameters */
  rf_summary summary;
  size_t n_trees;
  rf_tree *trees;      /* n_trees, owned */
  double *mdi;         /* n_features */
  double *perm;        /* n_features, or NULL */
  rf_info info;        /* view filled by rf__fill_info */
  rf_cnode **cn;       /* n_trees compact node arrays in cmem, or NULL
                          (no fast path) */
  void *cmem;          /* the one allocation holding every cn[t] */
  uint32_t *corder;    /* walk order: trees by decreasing cdepth within
                          each batch of RF_WALK_BATCH (rf_predict.c) */
  uint32_t *cdepth;    /* branch-free rounds of tree corder[i] */
  int cdirect;         /* leaf codes are offset << cbits | count - 1
                          (rf_cnode); 0: leaf numbers */
  unsigned cbits;      /* count bits of a direct leaf code */
  unsigned cwide;      /* trees a group of the single-row walk steps
                          together: RF_WALK_WIDTH, or twice that for a
                          forest far beyond the caches (rf_predict.c) */
  int csolo;           /* every one-sample leaf's sample is its mean
                          rounded to float (bit for bit), so the interval
                          may take it from the mean the walk read */
  unsigned an_version; /* rf_info.an_version */
  int csorted;         /* every leaf's samples in rf__vkey order, so the
                          quantiles may merge the runs from their ends
                          (model/rf_calib.c, merge_tails) */
  rf_calib cal;        /* interval calibration (n == 0: none) */
  rf_calib cal_unseen; /* calibration for GPUs the model was not trained on
                          (n == 0: none; file version 3) */
  rf_calib cal_prior;  /* for an unseen GPU when cal_unseen is empty: cal
                          widened by the prior spread of groups
                          (rf__calib_prior; derived, not stored) */
  double *range_lo, *range_hi; /* n_features: each feature's smallest and
                          largest training value (rf_range.c; NULL in files
                          before version 4) */
  double base_med;     /* median of the transformed target (log(y / base))
                          over the training rows; NaN: no base, or a file
                          before version 6 (rf_range.c) */
  rf_adapt *adapt;     /* n_adapt GPUs adapted with measured shots
                          (rf_adapt.c; file version 5), owned */
  size_t n_adapt;
};

/* Widen table c, made on rows of `groups` groups (0 or 1: one group, by
   rows), for groups its data did not hold: with fewer than 3 the data
   cannot tell how far a new group lies from them, and the prior spread
   RF_UNSEEN_SIGMA of group offsets is added (rf_calib.c). */
void rf__calib_prior(rf_calib *c, size_t groups);

/* The training ranges of d's columns into f (rf_range.c); 0 or -1. */
int rf__ranges(rf_forest *f, const rf_data *d);

/* The shift in transformed space that shrinks raw mean m of a row outside
   the training range toward f->base_med (rf_range.c): w^RF_EXTRAP_POW *
   (base_med - m), w the share of the impurity importance on the features
   out of range; 0 for a row in range or a forest without base_med.  Added
   to the prediction and its interval alike. */
#define RF_EXTRAP_POW 2
double rf__extrap_shift(const rf_forest *f, const double *row, double m);

/* The whole shift of raw mean m of a row answered with table cal:
   rf__extrap_shift, then cal's shrink of the result toward its target
   (rf_calib.shrink; rf_range.c). */
double rf__shift(const rf_forest *f, const rf_calib *cal, const double *row, double m);
/* The shrink and target of a row whose class column holds v: the class's
   entry of cal where it has one, else *shrink and *toward unchanged. */
void rf__class_shrink(const rf_calib *cal, double v, double *shrink, int *toward);

/* Build the compact layout when the forest allows it (0; -1 out of
   memory).  Called by rf_train and rf_load. */
int rf__build_fast(rf_forest *f);
void rf__free_fast(rf_forest *f);

/* Advise transparent huge pages for n bytes at p that are read at random
   (rf_util.c); failure is harmless. */
void rf__want_hugepages(void *p, size_t n);

/* Allocation through the fault hook; sizes are checked for overflow. */
void *rf__malloc(size_t n);
void *rf__calloc(size_t n, size_t size);
void *rf__mallocn(size_t n, size_t size);
void *rf__realloc(void *p, size_t n);
char *rf__strdup(const char *s);
void rf__free(void *p);

/* Set the per-thread error (printf format); returns -1. */
int rf__err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The error says "out of memory"; returns -1. */
int rf__nomem(void);

/* Operator launches (model/analytic_op.c): the launch's opr.class (0 when
   it has none: not an operator launch), and the analytic estimate of one
   that has it, which an_estimate_launch hands over to. */
double an__op_class(const char *const *names, const double *vals, size_t n);
int an__estimate_op(const an_gpu *g, const char *const *names, const double *vals, size_t n,
                    an_estimate *out);
/* The power limit (analytic.c): the clock's slowdown, >= 1, that keeps
   GPU g within its board power when its FP32 pipes are busy a share
   busy (0-1) of the time at the boost clock; and the time of t0_us of
   such work at the boost clock once the limiter, which acts over
   AN_POWER_TAU_US, has brought the clock down by that slowdown. */
double an__power_slowdown(const an_gpu *g, double busy);
double an__power_limited_us(double t0_us, double slowdown);

/* Copy the rows sel[0..k) of d into out (features, y, names, target;
   groups not copied).  0, or -1 out of memory. */
int rf__subset(const rf_data *d, const size_t *sel, size_t k, rf_data *out);
/* Test hook (tests/test_rf.c): while nonzero, rf_train takes its plain
   paths -- rows through the index, every candidate's pass, no direct
   passes -- which must give the same model to the byte. */
extern int rf__plain_training;
/* Test hook (tests/test_rf.c): while nonzero, rf__build_fast codes leaves
   by number (no direct leaf codes), which must give the same predictions
   and intervals bit for bit. */
extern int rf__leaf_numbers;

/* Test hook: while nonzero, extra trees take codes (build_codes in
   model/rf_train.c) whenever the data allows them, not only for the large
   data where they are faster. */
extern int rf__codes_always;

/* Test hook: while nonzero, the QRF quantiles (model/rf_calib.c) never
   copy a few samples out (SEL_COPY) but select on the runs, which must
   give the same intervals bit for bit.  rf__sel_keys: while nonzero, the
   copy's samples of equal weight are selected by select_keys, not by
   their order statistics; rf__sel_scalar: while nonzero, those order
   statistics never take the SSE4.1 tails. */
extern int rf__sel_runs, rf__sel_keys, rf__sel_scalar;
/* Test hook: while nonzero, the quantiles of more samples than SEL_COPY
   never merge the runs from their ends (merge_tails) but take
   select_runs, which must give the same intervals bit for bit. */
extern int rf__sel_merge_off;

/* The order key of a leaf sample (its float's bits, negatives flipped):
   the order of the QRF quantiles, -0 before +0 (model/rf_calib.c). */
static inline uint32_t rf__vkey(float v) {
  uint32_t u;
  memcpy(&u, &v, 4);
  return u ^ ((uint32_t)-(int32_t)(u >> 31) | 0x80000000u);
}

/* The 8-byte nodes' keys of x[0..n) (model/rf_predict.c): the order key of
   the smallest float >= x[j], 0 for NaN.  Internal; tested against the
   definition in tests/test_rf.c. */
void rf__row_keys(const double *x, size_t n, uint32_t *k);

/* The training's partition of a node's n rows (model/rf_train.c): rows
   with gf[k] = 1 (nl of them) to the front, ix and yy moved alike, in the
   order of the model's two-pointer scheme; fl is n + 1 entries of
   scratch. */
void rf__part_rows(uint32_t *ix, double *yy, const uint8_t *gf, uint32_t n, uint32_t nl,
                   uint32_t *fl);
/* fold[i] in [0, K) for n rows: a seeded shuffle (xoshiro stream `stream`
   of seed) dealt round-robin, so folds differ in size by at most one;
   perm is n entries of scratch. */
void rf__shuffled_folds(size_t n, unsigned K, uint64_t seed, uint64_t stream, size_t *perm,
                        size_t *fold);
/* qsort comparator of doubles, ascending. */
int rf__cmp_double(const void *a, const void *b);
/* d->groups as indices: names[0..*ng) the distinct labels, sorted (borrowed
   from d; a NULL label counts as ""), gidx[i] row i's label's index.  gidx
   and names hold d->n_rows entries. */
void rf__group_index(const rf_data *d, size_t *gidx, char **names, size_t *ng);

/* Threads to use: n when n > 0, else the OpenMP default. */
int rf__nthreads(int n);

/* Free a tree's arrays. */
void rf__tree_free(rf_tree *t);
/* Refresh f->info from the fields. */
void rf__fill_info(rf_forest *f);
/* Sum of the leaf values of row across trees (transformed space). */
double rf__raw_mean(const rf_forest *f, const double *row);
double rf__untransform(int transform, double v);

/* xoshiro256** seeded by splitmix64: the same streams on every platform. */
typedef struct rf_rng { uint64_t s[4]; } rf_rng;
void rf__rng_seed(rf_rng *r, uint64_t seed, uint64_t stream);
uint64_t rf__rng_next(rf_rng *r);
/* Uniform in [0, n), n >= 1 (Lemire's unbiased method). */
uint64_t rf__rng_below(rf_rng *r, uint64_t n);

/* The same, inline for the training's inner loops (the bootstrap draws n
   of them a tree); rf__rng_next, rf__rng_below and rf__rng_unit are
   these. */
static inline uint64_t rf__rotl_(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
static inline uint64_t rf__rng_next_(rf_rng *r) {
  uint64_t *s = r->s;
  uint64_t result = rf__rotl_(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rf__rotl_(s[3], 45);
  return result;
}
static inline uint64_t rf__rng_below_(rf_rng *r, uint64_t n) {
  uint64_t x = rf__rng_next_(r);
  unsigned __int128 m = (unsigned __int128)x * n;
  uint64_t l = (uint64_t)m;
  if (l < n) {
    uint64_t t = -n % n;
    while (l < t) {
      x = rf__rng_next_(r);
      m = (unsigned __int128)x * n;
      l = (uint64_t)m;
    }
  }
  return (uint64_t)(m >> 64);
}
static inline double rf__rng_unit_(rf_rng *r) {
  return (double)(rf__rng_next_(r) >> 11) * 0x1.0p-53;
}
/* Uniform in [0, 1). */
double rf__rng_unit(rf_rng *r);

/*
 * Tree-major prediction of rows the caller gathers (rf_predict.c; api/api.c's
 * kcast_predict_batch): the walk of rf_predict_batch over nr <= max_rows
 * rows stored one after another (rows[r * n_features + j]), row by row
 * for a forest that stays in cache (rf_predict.c, RF_ROWS_CACHED).  rf__rows_new
 * makes a walker's scratch for f (NULL out of memory); one walker serves
 * one thread.  rf__predict_rows fills pred[r], lo[r], hi[r] as
 * rf_predict_interval_on(f, row r, coverage, unseen) does, bit for bit,
 * and returns nr, or the first row that failed (a bad base value, out of
 * memory; rf_last_error as rf_predict_interval_on sets it), every row
 * before it filled.
 */
typedef struct rf_rows rf_rows;
rf_rows *rf__rows_new(const rf_forest *f, size_t max_rows);
/* Test hook: while nonzero, rf__rows_new walks tree-major a forest small
   enough to stay in cache, which it otherwise walks row by row (the same
   answers either way, bit for bit). */
extern int rf__rows_tree_major;
void rf__rows_free(rf_rows *w);
size_t rf__predict_rows(const rf_forest *f, rf_rows *w, const double *rows, size_t nr,
                        double coverage, int unseen, double *pred, double *lo, double *hi);

/* ------------------------------------------- intervals (rf_calib.c) -- */

/* Walk row down every tree t with leaf[t] != NULL (set it to the tree's
   root); leaf[t] ends at the row's leaf.  16-byte nodes, trees
   interleaved. */
void rf__walk(const rf_forest *f, const double *row, const rf_node **leaf);
/*
 * Quantile-regression-forest quantiles: every tree t with leaf[t] != NULL
 * weighs 1, spread evenly over its leaf's samples; out[k] is the first
 * sample (ascending) where the cumulative weight reaches probs[k] times the
 * number of trees used (probs increasing in [0,1]); NaN without samples.
 * *scratch (may be NULL, realloc'd; *cap its size in entries) is reused
 * between calls; the caller frees it.  0, or -1 out of memory.
 */
int rf__leaf_quantiles(const rf_forest *f, const rf_node *const *leaf, const double *probs,
                       size_t np, double *out, void **scratch, size_t *cap);
/* The same with tree t's vote given as its leaf code leaf[t] on the
   8-byte nodes (rf_cnode: the leaf number, or offset and count when
   f->cdirect; UINT32_MAX: none).  means (may be NULL): the leaves' means
   by tree, which stand for one-sample leaves' samples when f->csolo
   (the same values, without a load from the tree's samples). */
int rf__leaf_quantiles_n(const rf_forest *f, const uint32_t *leaf, const double *means,
                         const double *probs, size_t np, double *out, void **scratch,
                         size_t *cap);
/* Widening at coverage c (0 for an uncalibrated model). */
double rf__calib_q(const rf_calib *c, double coverage);
/*
 * Calibrate a freshly trained forest (p resolved, nt threads) when
 * p->calibrate asks for it: from its OOB rows (inbag: n_trees bit sets,
 * bootstrap forests) or from an inner K-fold on d (ty: transformed
 * targets).  Leaves f->cal empty when too few rows can be scored.
 */
/* rf__calibrate into table out (f->cal or f->cal_unseen). */
int rf__calibrate_into(rf_forest *f, const rf_data *d, const double *ty, const rf_params *p,
                       uint64_t *const *inbag, int nt, rf_calib *out);
int rf__calibrate(rf_forest *f, const rf_data *d, const double *ty, const rf_params *p,
                  uint64_t *const *inbag, int nt);
/* Fill the calibration fields of f->info. */
void rf__calib_info(rf_forest *f);

/* The log of the row's base feature (rf_params.base_feature): 0 for a
   model without one, NAN when the row's base value is not > 0 and finite. */
double rf__offset(const rf_forest *f, const double *row);
/* Transformed training targets of d for f's params: y, log(y), or log(y) -
   log(x_base); *out owned by the caller.  -1 naming the first bad row. */
int rf__transformed_y(const rf_params *p, const rf_data *d, double **out);

#endif
