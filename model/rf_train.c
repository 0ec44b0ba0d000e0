/*
 * rf_train.c -- growing the forest: histogram CART trees (random forest)
 * and extremely randomized trees, out-of-bag error and importances.
 * Walking it to predict is rf_predict.c.
 *
 * Split search -- binned, not exact.  Every feature is cut once per dataset
 * into at most 256 bins (one bin per distinct value when there are at most
 * 256, else quantile cuts), stored as one byte per cell.  A node then costs
 * one pass over its rows per candidate feature (accumulate sum and count per
 * bin) plus a scan of the occupied bins, found through a 256-bit occupancy
 * mask, so small nodes never pay for empty bins.  Exact sorted splits would
 * need sorted index lists per feature kept through every partition (p
 * arrays of n per tree); on 200,000 x 100 that is 80 MB of shuffling per
 * tree against 20 MB of bytes read once.  LightGBM and scikit-learn's
 * HistGradientBoosting made the same trade; with 256 quantile bins the loss
 * in accuracy is below the forest's own noise.  Thresholds are stored as
 * raw values (the midpoint between two adjacent bins), so prediction never
 * needs the bins: bin(x) <= b  <=>  x <= cut[b].
 *
 * Extra trees (Geurts et al. 2006, scikit-learn's ExtraTreesRegressor) draw
 * one threshold per candidate feature uniformly in (min, max) of the node's
 * values and need no bins.  On large data their passes read codes
 * (build_codes: a value's rank in its column, one or two bytes) where
 * every column has at most 65535 distinct values, else the values.
 *
 * Feature sampling: features are drawn without replacement in random order,
 * max_features at a time; the candidates of one batch are evaluated in one
 * pass over the node's rows, and a further batch is drawn only while no
 * valid split exists (as scikit-learn keeps drawing), so constant features
 * never make a node a leaf by accident.
 *
 * Memory layout (what made training 3-4x faster on 200,000 x 100; before/
 * after figures in the bench report): bins and extra-trees values are
 * row-major, so a node's pass reads its candidates from one or two cache
 * lines per row; the row index array is partitioned in place with the
 * targets moved alongside (every pass reads y sequentially); per-tree
 * scratch is allocated once per tree, never per node; columns are sorted
 * for binning by a radix sort that also yields each row's bin.  Histogram
 * subtraction (LightGBM) does not apply: a random forest draws different
 * candidate features at the two children, so the parent's histograms of
 * the child's candidates do not exist.
 *
 * Thresholds are chosen to be floats (float_thr) so prediction can walk
 * 8-byte nodes exactly (rf_int.h, rf_cnode); the OOB error walks them too.
 *
 * Small data (11,130 x 8, the dedispersion set, a tuning grid): a node's
 * target sum comes from its first histogram pass; features known to be
 * constant on a node are not passed over (grow_tree); rows of at most 8
 * features carry their bins with them (builder.rv), so passes read in
 * sequence; each candidate's pass runs one of two ways, by how often its
 * bin changes (hist_12); the partition moves rows in place straight to
 * where the two-pointer scheme puts them (rf__part_rows); small leaves
 * are rank-sorted.  Every sum is still formed in the same order, so the
 * model is the one the plain passes made (tests/test_rf.c compares them:
 * rf__plain_training).  Before/after, two threads, one run: 0.135 ->
 * 0.077 s for 100 trees on the A100 rows.
 *
 * Determinism: each tree owns a generator seeded from (seed, tree index),
 * writes only its own slot, and every cross-tree sum (OOB, importance) runs
 * in tree order after the parallel loop; so the model is bit-identical for
 * any thread count.
 */
#include "model/rf_int.h"
#include "model/rf_walk.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <time.h>

int rf__plain_training;
int rf__codes_always;

/* Read-only state shared by all trees of one training run. */
typedef struct shared {
  size_t n, p;            /* rows, features */
  const double *x;        /* column-major raw features */
  const double *y;        /* transformed targets */
  uint8_t *rb;            /* random forest: row-major bins, rb[i*p + j] */
  double **cuts;          /* per feature: n_cuts[j] increasing thresholds */
  unsigned *n_cuts;
  double *rxd;            /* extra trees: row-major values, or NULL ... */
  float *rxf;             /* ... as floats when every value is a float */
  uint8_t *rc8;           /* ... or row-major codes (build_codes): one */
  uint16_t *rc16;         /* byte or two per cell instead of four or eight */
  double **vals;          /* codes: per feature its distinct values, */
  unsigned *n_vals;       /* increasing (code c stands for vals[j][c]) */
  int vfloat;             /* codes: every value is a float */
  const rf_params *prm;   /* resolved */
  unsigned mtry;
  int pf;                 /* prefetch rows ahead (bin_row) */
  uint8_t *r8;            /* p <= 8: the bins in rows of 8 bytes (rb
                             itself when p == 8, else padded) */
  uint8_t *r8own;         /* r8 when allocated here */
} shared;

/* One histogram bin: sum of y and count of the node's rows in it. */
typedef struct hbin { double s; uint32_t c, pad; } hbin;

/* Nodes below this size find their occupied bins through a bit mask
   instead of scanning every bin of every candidate. */
#define SMALL_NODE 1024

/* Per-tree scratch and output under construction. */
typedef struct builder {
  rf_rng rng;
  uint32_t *idx;          /* in-bag rows (with bootstrap duplicates),
                             partitioned in place node by node */
  uint64_t *rv;           /* p <= 8 (random forest): rv[i] = the bins
                             of row idx[i], moved instead of idx, so the
                             passes read rows in sequence (idx is then
                             not kept up to date) */
  double *yv;             /* yv[i] = y[idx[i]]: moved with idx, so every
                             pass over a node reads y sequentially */
  size_t n_idx;
  uint32_t *feat;         /* feature permutation, reshuffled per node */
  uint32_t *cand;         /* candidates of the current batch (<= p) */
  hbin *hist;             /* p*256 bins, kept zero between uses */
  uint64_t *mask;         /* p*4 occupancy words (small nodes) */
  uint64_t *hrows, *hchg; /* per feature: rows of this tree's passes and
                             those whose bin changed (hist_12) */
  double *emn, *emx, *ethr, *esl; /* extra trees, per candidate */
  uint16_t *ecmn, *ecmx, *ect;    /* extra trees on codes: code range and
                                     threshold (codes below go left) */
  uint32_t *ebase, *elen;         /* ... its search (code_bounds) */
  const double **evp;
  float *ethf;            /* threshold rounded down to float (float rows) */
  uint32_t *enl;
  double node_sum;        /* eval_binned's sum when asked for it */
  float *tmp;             /* leaf values being sorted */
  uint8_t *side;          /* partition: each row goes left (1) or right */
  uint32_t *pidx;         /* partition scratch, n_idx + 1 */
  rf_tree t;
  uint32_t cap_nodes, cap_leaves, cap_values;
  double *mdi;            /* p: impurity decrease per feature */
} builder;

/* A node to grow: rows idx[lo,hi) and their target range. */
typedef struct work {
  uint32_t lo, hi, node, depth;
  double ymin, ymax;
  uint64_t cst;  /* random forest: features j < 64 known to be constant
                    on the node's rows (bit j) */
  uint32_t mm;   /* extra trees on codes: the node's code ranges are in
                    its slot of grow_tree's pool (its parent's partition) */
} work;

void rf__tree_free(rf_tree *t) {
  if (!t) return;
  rf__free(t->nodes);
  rf__free(t->leaf_off);
  rf__free(t->values);
  memset(t, 0, sizeof *t);
}

double rf__untransform(int transform, double v) {
  return transform == RF_TRANSFORM_LOG ? exp(v) : v;
}

double rf__offset(const rf_forest *f, const double *row) {
  int b = f->params.base_feature;
  if (b < 0) return 0;
  double x = row[b];
  return x > 0 && isfinite(x) ? log(x) : NAN;
}

int rf__transformed_y(const rf_params *p, const rf_data *d, double **out) {
  size_t n = d->n_rows;
  double *y = rf__mallocn(n ? n : 1, sizeof(double));
  if (!y) return rf__nomem();
  int b = p->base_feature;
  const char *tn = d->target ? d->target : "y";
  for (size_t i = 0; i < n; i++) {
    if (p->transform != RF_TRANSFORM_LOG) {
      y[i] = d->y[i];
      continue;
    }
    if (!(d->y[i] > 0)) {
      rf__free(y);
      return rf__err("row %zu: target %s = %g is not positive; a log target needs values > 0",
                     i + 1, tn, d->y[i]);
    }
    y[i] = log(d->y[i]);
    if (b >= 0) {
      double x = d->x[(size_t)b * n + i];
      if (!(x > 0) || !isfinite(x)) {
        rf__free(y);
        return rf__err("row %zu: the base column %s = %g is not positive", i + 1,
                       d->names && d->names[b] ? d->names[b] : "?", x);
      }
      y[i] -= log(x);
    }
  }
  *out = y;
  return 0;
}

/* ---------------------------------------------------------------- binning -- */

/* Number of cuts below v (cuts increasing). */
static inline unsigned bin_of(const double *cuts, unsigned nc, double v) {
  unsigned lo = 0, hi = nc;
  while (lo < hi) {
    unsigned mid = (lo + hi) / 2;
    if (cuts[mid] < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* Order-preserving map of a double to an unsigned key (no NaN here). */
static inline uint64_t dkey(double v) {
  uint64_t u;
  memcpy(&u, &v, 8);
  return u >> 63 ? ~u : u | (1ULL << 63);
}

static inline double kdouble(uint64_t u) {
  u = u >> 63 ? u & ~(1ULL << 63) : ~u;
  double v;
  memcpy(&v, &u, 8);
  return v;
}

/*
 * LSD radix sort of n keys with their row numbers (8 passes of 8 bits, a
 * pass skipped when every key has the same digit: quantised or integral
 * columns need two or three).  key/ord are sorted in place; k2/o2 are
 * scratch of n each.  Replaces qsort with a comparison callback, which was
 * 45% of training time for a 100-tree forest on 200,000 x 100.
 */
static void radix_sort(uint64_t *key, uint32_t *ord, uint64_t *k2, uint32_t *o2, size_t n) {
  for (unsigned sh = 0; sh < 64; sh += 8) {
    size_t cnt[256] = {0};
    for (size_t i = 0; i < n; i++) cnt[(key[i] >> sh) & 255]++;
    if (cnt[(key[0] >> sh) & 255] == n) continue;
    size_t pos = 0;
    for (unsigned d = 0; d < 256; d++) {
      size_t c = cnt[d];
      cnt[d] = pos;
      pos += c;
    }
    for (size_t i = 0; i < n; i++) {
      size_t at = cnt[(key[i] >> sh) & 255]++;
      k2[at] = key[i];
      o2[at] = ord[i];
    }
    uint64_t *tk = key;
    key = k2;
    k2 = tk;
    uint32_t *to = ord;
    ord = o2;
    o2 = to;
    /* after an odd number of passes the result sits in the scratch pair;
       the caller copies it back (see bin_column) */
  }
}

/* The float next to finite f (or to +inf going down), up or down: what
   nextafterf gives, without its call (the thresholds of extra trees take
   one or two per candidate and node). */
static inline float float_next(float f, int up) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if (f == 0) u = up ? 1u : 0x80000001u;
  else if ((f > 0) == (up != 0)) u++;
  else u--;
  memcpy(&f, &u, 4);
  return f;
}

/* Largest float <= v (v finite, within float range). */
static inline float float_down(double v) {
  float f = (float)v;
  if ((double)f > v) f = float_next(f, 0);
  return f;
}

/*
 * A threshold in [a, b) that is a float, near t, or t itself when no float
 * lies in [a, b).  Any threshold in [a, b) splits the training values the
 * same way; a float one lets prediction compare floats exactly (rf_int.h,
 * rf_cnode).
 */
static inline double float_thr(double t, double a, double b) {
  if (!(fabs(t) <= FLT_MAX) || !(fabs(a) <= FLT_MAX)) return t;
  double c = float_down(t);
  if (c >= a && c < b) return c;
  c = (double)(float)a;
  if (c < a) c = float_next((float)a, 1);
  return c >= a && c < b ? c : t;
}

/* A cut (the midpoint between two adjacent distinct values of the sorted
   column) moved to a float in [lower value, upper value). */
static double float_cut(double cut, const double *sorted, size_t n) {
  size_t lo = 0, hi = n; /* first value > cut */
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (sorted[mid] <= cut) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0 || lo >= n) return cut;
  return float_thr(cut, sorted[lo - 1], sorted[lo]);
}

/* Scratch for binning one column. */
typedef struct colsort { uint64_t *k, *k2; uint32_t *o, *o2; double *sorted; } colsort;

/*
 * Cuts for one column into cuts[0..*nc) and every row's bin into b[]:
 * the column is sorted once; bins are then assigned walking the sorted
 * order (bin = number of cuts below the value).
 */
static void bin_column(const double *col, size_t n, unsigned n_bins, colsort *cs, double *cuts,
                       unsigned *nc, uint8_t *b) {
  for (size_t i = 0; i < n; i++) {
    cs->k[i] = dkey(col[i]);
    cs->o[i] = (uint32_t)i;
  }
  uint64_t *k = cs->k, *k2 = cs->k2;
  uint32_t *o = cs->o, *o2 = cs->o2;
  /* the same passes radix_sort takes, to know where the result ends up */
  unsigned passes = 0;
  for (unsigned sh = 0; sh < 64; sh += 8) {
    uint64_t d0 = (k[0] >> sh) & 255;
    size_t i = 1;
    while (i < n && ((k[i] >> sh) & 255) == d0) i++;
    passes += i < n;
  }
  radix_sort(k, o, k2, o2, n);
  if (passes & 1) {
    k = cs->k2;
    o = cs->o2;
  }
  double *sorted = cs->sorted;
  for (size_t i = 0; i < n; i++) sorted[i] = kdouble(k[i]);
  size_t distinct = 1;
  for (size_t i = 1; i < n; i++) distinct += sorted[i] != sorted[i - 1];
  unsigned c = 0;
  if (distinct <= n_bins) {
    for (size_t i = 1; i < n; i++)
      if (sorted[i] != sorted[i - 1]) cuts[c++] = sorted[i - 1] + (sorted[i] - sorted[i - 1]) / 2;
  } else {
    for (unsigned q = 1; q < n_bins; q++) {
      size_t r = (size_t)((double)q * (double)n / n_bins);
      if (r == 0 || r >= n) continue;
      /* move r to the start of a run of equal values at or after it */
      while (r < n && sorted[r] == sorted[r - 1]) r++;
      if (r >= n) break;
      double cut = sorted[r - 1] + (sorted[r] - sorted[r - 1]) / 2;
      if (c == 0 || cut > cuts[c - 1]) cuts[c++] = cut;
    }
  }
  *nc = c;
  for (unsigned q = 0; q < c; q++) cuts[q] = float_cut(cuts[q], sorted, n);
  unsigned bin = 0;
  for (size_t i = 0; i < n; i++) {
    while (bin < c && cuts[bin] < sorted[i]) bin++;
    b[o[i]] = (uint8_t)bin;
  }
}

/*
 * Bins, row-major.  A node's histogram pass reads its candidate features
 * from each of its rows; row-major puts them in one or two cache lines per
 * row, where column-major cost one miss per row and candidate once nodes
 * are small and their rows scattered (measured: 4x on 200,000 x 100).
 */
static int build_bins(shared *S, int n_threads) {
  size_t n = S->n, p = S->p;
  uint8_t *cb = rf__mallocn(n, p);
  S->rb = rf__mallocn(n, p);
  S->cuts = rf__calloc(p, sizeof(double *));
  S->n_cuts = rf__calloc(p, sizeof(unsigned));
  if (!cb || !S->rb || !S->cuts || !S->n_cuts) {
    rf__free(cb);
    return rf__nomem();
  }
  rf__want_hugepages(S->rb, n * p);
  S->pf = n * p > (512u << 10);
  int failed = 0;
#pragma omp parallel num_threads(n_threads) reduction(| : failed)
  {
    colsort cs = {rf__mallocn(n, sizeof(uint64_t)), rf__mallocn(n, sizeof(uint64_t)),
                  rf__mallocn(n, sizeof(uint32_t)), rf__mallocn(n, sizeof(uint32_t)),
                  rf__mallocn(n, sizeof(double))};
    int ok = cs.k && cs.k2 && cs.o && cs.o2 && cs.sorted;
    if (!ok) failed = 1;
#pragma omp for schedule(dynamic, 1)
    for (size_t j = 0; j < p; j++) {
      if (!ok) continue;
      S->cuts[j] = rf__mallocn(S->prm->n_bins, sizeof(double));
      if (!S->cuts[j]) {
        failed = 1;
        continue;
      }
      bin_column(S->x + j * n, n, S->prm->n_bins, &cs, S->cuts[j], &S->n_cuts[j], cb + j * n);
    }
    rf__free(cs.k);
    rf__free(cs.k2);
    rf__free(cs.o);
    rf__free(cs.o2);
    rf__free(cs.sorted);
    /* transpose in blocks of 64 rows: each thread writes whole rows */
#pragma omp for schedule(static)
    for (size_t i0 = 0; i0 < n; i0 += 64) {
      size_t i1 = i0 + 64 < n ? i0 + 64 : n;
      for (size_t j = 0; j < p; j++)
        for (size_t i = i0; i < i1; i++) S->rb[i * p + j] = cb[j * n + i];
    }
  }
  rf__free(cb);
  if (failed) return rf__nomem();
  if (rf__plain_training) {
    /* rows through idx */
  } else if (p == 8) {
    S->r8 = S->rb;
  } else if (p < 8) {
    if (!(S->r8 = S->r8own = rf__calloc(n, 8))) return rf__nomem();
    for (size_t i = 0; i < n; i++) memcpy(S->r8 + 8 * i, S->rb + i * p, p);
  }
  return 0;
}

/*
 * Extra trees on codes: each value replaced by its rank among the distinct
 * values of its column, row-major, one byte per cell when no column has
 * more than 255 distinct values, else two (at most 65535).  A node's range
 * is then the smallest and largest code of its rows, read back as values
 * (vals), and x <= thr  <=>  code(x) < the number of the column's values
 * <= thr: the same draws, thresholds, sides and sums as on the values, in
 * a half or a quarter of the bytes of float rows (what a pass over a large
 * node waits on: 1,000,000 rows of 100 floats are 400 MB).  A column
 * holding both zeros (equal, yet which one a node's minimum is depends on
 * the rows' order) or more distinct values keeps the value rows.
 *
 * A column's distinct values are collected in a hash table of at most
 * 2^17 slots (the keys of dkey, never 0 for a finite value), each row
 * keeping its slot; only the distinct values are sorted.  Sorting whole
 * columns took 0.33 s of a 3.2 s training on 100,000 x 100.
 * Returns 0 with S->rc8 or S->rc16 set, 1 when codes do not apply, -1
 * for out of memory.
 */
#define CODE_SLOTS_LOG 17
static int build_codes(shared *S, int n_threads) {
  size_t n = S->n, p = S->p;
  unsigned lg = 4;
  while (lg < CODE_SLOTS_LOG && ((size_t)1 << lg) < 2 * n) lg++;
  size_t slots = (size_t)1 << lg;
  S->vals = rf__calloc(p, sizeof(double *));
  S->n_vals = rf__calloc(p, sizeof(unsigned));
  uint16_t *cc = rf__mallocn(n, p * sizeof(uint16_t)); /* column-major codes */
  if (!S->vals || !S->n_vals || !cc) {
    rf__free(cc);
    return -1;
  }
  int failed = 0, refused = 0, notfloat = 0;
#pragma omp parallel num_threads(n_threads) reduction(| : failed, refused, notfloat)
  {
    uint64_t *key = rf__mallocn(slots, sizeof(uint64_t)), *dk = rf__mallocn(slots, sizeof(uint64_t));
    uint64_t *dk2 = rf__mallocn(slots, sizeof(uint64_t));
    uint32_t *ord = rf__mallocn(slots, sizeof(uint32_t)), *ord2 = rf__mallocn(slots, sizeof(uint32_t));
    uint32_t *slot = rf__mallocn(n, sizeof(uint32_t));
    uint16_t *code = rf__mallocn(slots, sizeof(uint16_t));
    int ok = key && dk && dk2 && ord && ord2 && slot && code;
    if (!ok) failed = 1;
#pragma omp for schedule(dynamic, 1)
    for (size_t j = 0; j < p; j++) {
      if (!ok || refused) continue;
      const double *col = S->x + j * n;
      memset(key, 0, slots * sizeof(uint64_t));
      size_t distinct = 0;
      for (size_t i = 0; i < n && distinct <= UINT16_MAX; i++) {
        uint64_t kv = dkey(col[i]);
        notfloat |= (double)(float)col[i] != col[i];
        size_t h = (size_t)((kv * 0x9e3779b97f4a7c15ULL) >> (64 - lg));
        while (key[h] && key[h] != kv) h = (h + 1) & (slots - 1);
        if (!key[h]) {
          key[h] = kv;
          dk[distinct] = kv;
          ord[distinct++] = (uint32_t)h;
        }
        slot[i] = (uint32_t)h;
      }
      if (distinct > UINT16_MAX) {
        refused = 1;
        continue;
      }
      unsigned passes = 0; /* where radix_sort leaves the result (bin_column) */
      for (unsigned sh = 0; sh < 64; sh += 8) {
        uint64_t d0 = (dk[0] >> sh) & 255;
        size_t i = 1;
        while (i < distinct && ((dk[i] >> sh) & 255) == d0) i++;
        passes += i < distinct;
      }
      radix_sort(dk, ord, dk2, ord2, distinct);
      const uint64_t *sk = passes & 1 ? dk2 : dk;
      const uint32_t *so = passes & 1 ? ord2 : ord;
      double *v = S->vals[j] = rf__mallocn(distinct, sizeof(double));
      if (!v) {
        failed = 1;
        continue;
      }
      for (size_t c = 0; c < distinct; c++) {
        v[c] = kdouble(sk[c]);
        code[so[c]] = (uint16_t)c;
        if (c && v[c] == v[c - 1]) refused = 1; /* -0 and +0 */
      }
      uint16_t *cj = cc + j * n;
      for (size_t i = 0; i < n; i++) cj[i] = code[slot[i]];
      S->n_vals[j] = (unsigned)distinct;
    }
    rf__free(key);
    rf__free(dk);
    rf__free(dk2);
    rf__free(ord);
    rf__free(ord2);
    rf__free(slot);
    rf__free(code);
  }
  int rc = failed ? -1 : refused ? 1 : 0;
  unsigned most = 0;
  for (size_t j = 0; j < p && !rc; j++) most = S->n_vals[j] > most ? S->n_vals[j] : most;
  if (!rc) {
    if (most <= UINT8_MAX) S->rc8 = rf__mallocn(n, p);
    else S->rc16 = rf__mallocn(n, p * sizeof(uint16_t));
    if (!S->rc8 && !S->rc16) rc = -1;
  }
  if (!rc) {
    uint8_t *r8 = S->rc8;
    uint16_t *r16 = S->rc16;
    rf__want_hugepages(r8 ? (void *)r8 : (void *)r16, n * p * (r8 ? 1 : 2));
    S->vfloat = !notfloat;
    S->pf = n * p * (r8 ? 1 : 2) > (512u << 10);
    /* transpose in blocks of 64 rows: each thread writes whole rows */
#pragma omp parallel for num_threads(n_threads) schedule(static)
    for (size_t i0 = 0; i0 < n; i0 += 64) {
      size_t i1 = i0 + 64 < n ? i0 + 64 : n;
      for (size_t j = 0; j < p; j++)
        for (size_t i = i0; i < i1; i++) {
          if (r8) r8[i * p + j] = (uint8_t)cc[j * n + i];
          else r16[i * p + j] = cc[j * n + i];
        }
    }
  }
  rf__free(cc);
  if (rc) { /* the value rows instead */
    for (size_t j = 0; j < p; j++) rf__free(S->vals[j]);
    rf__free(S->vals);
    rf__free(S->n_vals);
    S->vals = NULL;
    S->n_vals = NULL;
  }
  return rc;
}

/*
 * Codes pay where the float rows outgrow the caches: on 100 features, 25
 * trees, 2 threads (CPU time, one run), 10,000 rows (4 MB of floats) took
 * 1.38-1.46 s on float rows against 1.60-1.70 s on codes, 25,000 (10 MB)
 * 1.10 against 1.17 s, 50,000 (20 MB) 2.75 against 2.36 s; the 11,130
 * dedispersion rows of 8 features twice as long on codes (their passes
 * over a handful of features do not fill a vector and carry the sums
 * through memory).  So codes from 16 MB of float rows and 16 features.
 */
#define CODES_MIN_BYTES (16u << 20)
#define CODES_MIN_FEATURES 16

/* Extra trees: codes (build_codes) where they apply and pay, else the
   values row-major, as floats when that loses nothing (halves the bytes
   each pass reads). */
static int build_rows(shared *S, int n_threads) {
  size_t n = S->n, p = S->p, np = n * p;
  int big = p >= CODES_MIN_FEATURES && np * sizeof(float) >= CODES_MIN_BYTES;
  if (!rf__plain_training && (big || rf__codes_always)) {
    int rc = build_codes(S, n_threads);
    if (rc < 0) return rf__nomem();
    if (rc == 0) return 0;
  }
  int exact = 1;
  for (size_t k = 0; k < np && exact; k++) exact = (double)(float)S->x[k] == S->x[k];
  if (exact) {
    S->rxf = rf__mallocn(np, sizeof(float));
    if (!S->rxf) return rf__nomem();
    rf__want_hugepages(S->rxf, np * sizeof(float));
  } else {
    S->rxd = rf__mallocn(np, sizeof(double));
    if (!S->rxd) return rf__nomem();
    rf__want_hugepages(S->rxd, np * sizeof(double));
  }
  for (size_t i0 = 0; i0 < n; i0 += 64) {
    size_t i1 = i0 + 64 < n ? i0 + 64 : n;
    for (size_t j = 0; j < p; j++)
      for (size_t i = i0; i < i1; i++) {
        if (exact) S->rxf[i * p + j] = (float)S->x[j * n + i];
        else S->rxd[i * p + j] = S->x[j * n + i];
      }
  }
  return 0;
}

static void free_shared(shared *S) {
  if (S->cuts)
    for (size_t j = 0; j < S->p; j++) rf__free(S->cuts[j]);
  rf__free(S->cuts);
  rf__free(S->n_cuts);
  rf__free(S->rb);
  rf__free(S->r8own);
  rf__free(S->rxd);
  rf__free(S->rxf);
  rf__free(S->rc8);
  rf__free(S->rc16);
  if (S->vals)
    for (size_t j = 0; j < S->p; j++) rf__free(S->vals[j]);
  rf__free(S->vals);
  rf__free(S->n_vals);
}

/* ----------------------------------------------------------- tree growing -- */

static int push_node(builder *b) {
  if (b->t.n_nodes + 2 > b->cap_nodes) {
    uint32_t nc = b->cap_nodes ? b->cap_nodes * 2 : 256;
    rf_node *t = rf__realloc(b->t.nodes, (size_t)nc * sizeof *t);
    if (!t) return -1;
    b->t.nodes = t;
    b->cap_nodes = nc;
  }
  return 0;
}

static int cmp_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

/* Make node a leaf over idx[lo,hi). */
static int make_leaf(builder *b, const shared *S, const work *w, double sum) {
  uint32_t n = w->hi - w->lo;
  unsigned cap = S->prm->leaf_cap;
  uint32_t keep = n < cap ? n : cap;
  if (b->t.n_leaves + 2 > b->cap_leaves) {
    uint32_t nc = b->cap_leaves ? b->cap_leaves * 2 : 128;
    uint32_t *t = rf__realloc(b->t.leaf_off, (size_t)nc * sizeof *t);
    if (!t) return -1;
    b->t.leaf_off = t;
    b->cap_leaves = nc;
  }
  if (b->t.n_values + keep > b->cap_values) {
    uint32_t nc = b->cap_values ? b->cap_values : 1024;
    while (nc < b->t.n_values + keep) nc *= 2;
    float *t = rf__realloc(b->t.values, (size_t)nc * sizeof *t);
    if (!t) return -1;
    b->t.values = t;
    b->cap_values = nc;
  }
  for (uint32_t i = 0; i < n; i++) b->tmp[i] = (float)b->yv[w->lo + i];
  if (n <= 16 && !rf__plain_training) { /* rank sort, stable: the insertion sort's */
    float in[16];
    memcpy(in, b->tmp, n * sizeof(float));
    for (uint32_t i = 0; i < n; i++) {
      float v = in[i];
      uint32_t r = 0;
      for (uint32_t j = 0; j < i; j++) r += in[j] <= v;
      for (uint32_t j = i + 1; j < n; j++) r += in[j] < v;
      b->tmp[r] = v;
    }
  } else if (n <= 48) { /* most leaves: a stable insertion sort, as qsort's order */
    for (uint32_t i = 1; i < n; i++) {
      float v = b->tmp[i];
      uint32_t k = i;
      for (; k > 0 && b->tmp[k - 1] > v; k--) b->tmp[k] = b->tmp[k - 1];
      b->tmp[k] = v;
    }
  } else {
    qsort(b->tmp, n, sizeof(float), cmp_float);
  }
  float *dst = b->t.values + b->t.n_values;
  if (keep == n) {
    memcpy(dst, b->tmp, n * sizeof(float));
  } else { /* evenly spaced order statistics, both extremes included */
    for (uint32_t k = 0; k < keep; k++)
      dst[k] = b->tmp[(size_t)k * (n - 1) / (keep - 1)];
  }
  uint32_t leaf = b->t.n_leaves++;
  b->t.leaf_off[leaf] = b->t.n_values;
  b->t.n_values += keep;
  b->t.leaf_off[leaf + 1] = b->t.n_values;
  rf_node *nd = &b->t.nodes[w->node];
  nd->v = sum / n;
  nd->feature = -1;
  nd->left = leaf;
  return 0;
}

typedef struct split {
  int feature;     /* -1: none */
  double score;    /* sL^2/nL + sR^2/nR */
  double thr;      /* raw threshold */
  float thrf;      /* extra trees on float rows: thr rounded down to float */
  int bin;         /* bin threshold (binned mode) */
  unsigned code;   /* extra trees on codes: codes below go left */
  int lcst, rcst;  /* binned: the left (right) side holds one bin of the
                      feature, which is then constant there */
} split;

/*
 * Best split of one candidate from its filled histogram h; clears h.
 * Feature j (< 64) with a single occupied bin is constant on the node's
 * rows: bit j of *cst.  When j's scan takes the best split, best->lcst and
 * rcst say whether each side holds a single bin of j.
 */
static void scan_bins(hbin *h, const uint64_t *mask, unsigned nbins, const shared *S,
                      const work *w, unsigned j, double sum, split *best, uint64_t *cst) {
  uint32_t n = w->hi - w->lo, nL = 0;
  double sL = 0;
  unsigned minl = S->prm->min_leaf, occ = 0, first = 0, after = 0;
  int bk = -1;
#define SCAN_ONE(k)                                              \
  do {                                                           \
    if (!h[k].c) break;                                          \
    if (!occ++) first = (k);                                     \
    after += bk >= 0;                                            \
    nL += h[k].c;                                                \
    sL += h[k].s;                                                \
    h[k].s = 0;                                                  \
    h[k].c = 0;                                                  \
    uint32_t nR = n - nL;                                        \
    if (nR == 0 || nL < minl || nR < minl) break;                \
    double sR = sum - sL, dl = nL, dr = nR;                      \
    /* sL^2/nL + sR^2/nR > best, without two divisions */        \
    if (sL * sL * dr + sR * sR * dl > best->score * dl * dr) {   \
      best->score = sL * sL / dl + sR * sR / dr;                 \
      best->feature = (int)j;                                    \
      best->bin = (int)(k);                                      \
      best->thr = S->cuts[j][k];                                 \
      bk = (int)(k);                                             \
      after = 0;                                                 \
    }                                                            \
  } while (0)
  if (mask) {
    for (unsigned word = 0; word < RF_MAX_BINS / 64; word++) {
      uint64_t m = mask[word];
      while (m) {
        unsigned k = word * 64 + (unsigned)__builtin_ctzll(m);
        m &= m - 1;
        SCAN_ONE(k);
      }
    }
  } else {
    for (unsigned k = 0; k < nbins; k++) SCAN_ONE(k);
  }
#undef SCAN_ONE
  if (occ == 1 && j < 64) *cst |= 1ULL << j;
  if (bk >= 0) {
    best->lcst = first == (unsigned)bk;
    best->rcst = after == 1;
  }
}

/*
 * Histogram split search over m candidates in one pass over the node's
 * rows: per candidate, the row's bin takes its target (summed in row
 * order) and a count.  However the loop runs, each bin adds its rows in
 * row order: the same sums to the bit.
 *
 * One or two candidates (8 features at the default third; one when the
 * other is known constant, grow_tree) run each candidate one of two ways:
 *
 *   run:    the current bin's sum and count stay in registers and go back
 *           to the histogram when the bin changes, so rows of one bin in a
 *           row never wait on their own store; a branch on every change;
 *   direct: every row adds to the histogram, no branch; the occupied bins
 *           of small nodes gather in a register (features of < 64 bins).
 *
 * The run pass mispredicts when bins change often and irregularly (29-54
 * % of rows per feature on the dedispersion data, whose rows follow the
 * tuning grid); the direct pass waits where a bin's rows follow each other
 * closely (and its mask costs four selects a row over 64 bins).  On the
 * dedispersion data the direct pass took 20 % off the training time (one
 * thread: 0.178 -> 0.143 s), on 20,000 synthetic rows of 256-bin features
 * (bins change on 80 % of rows, predictably) it added 40 %.  So each
 * feature keeps the rate at which its bin changed over this tree's passes
 * so far (both passes count it), and runs direct when it has < 64 bins
 * and that rate is between DIRECT_LO and DIRECT_HI.
 */
#define DIRECT_LO 0.15
#define DIRECT_HI 0.75

/* The binned row of the node's i-th sample (hi: the node's end), with the
   row 12 samples ahead prefetched (both ends of it when it spans lines)
   when pf: bins too large for the cache (the prefetch's instructions
   were 2 % of the time on the dedispersion data, 89 KB of bins). */
static inline const uint8_t *bin_row(const uint8_t *rb, size_t p, const uint32_t *idx, uint32_t i,
                                     uint32_t hi, int pf) {
  if (!idx) return rb + 8 * (size_t)i; /* packed: rb is the builder's rv */
  if (pf && i + 12 < hi) {
    const uint8_t *ahead = rb + (size_t)idx[i + 12] * p;
    __builtin_prefetch(ahead);
    if (p > 64) __builtin_prefetch(ahead + p - 1);
  }
  return rb + (size_t)idx[i] * p;
}

/* The rows a pass reads: packed (the builder's rv, in node order; bin_row
   is told so by idx == NULL) or gathered through idx. */
#define PASS_ROWS(PACKED)                                         \
  const uint8_t *rb = (PACKED) ? (const uint8_t *)b->rv : S->rb; \
  const uint32_t *idx = (PACKED) ? NULL : b->idx;                 \
  size_t p = S->p

/* One candidate of a pass: its histogram h, occupancy words mk (memory,
   run) or mr (register, direct), current bin cb, and in run mode the
   run's sum and count; ch counts the rows whose bin differs from the
   previous row's. */
typedef struct hcand {
  hbin *h;
  uint64_t *mk;
  unsigned c, cb;
  double s;
  uint32_t n, ch;
  uint64_t mr;
} hcand;

static inline __attribute__((always_inline)) void hc_step(hcand *k, unsigned bin, double y,
                                                           int small, const int direct) {
  if (direct) {
    k->h[bin].s += y;
    k->h[bin].c++;
    k->mr |= 1ULL << (bin & 63);
    k->ch += bin != k->cb;
    k->cb = bin;
    return;
  }
  if (bin != k->cb) {
    k->h[k->cb].s = k->s;
    k->h[k->cb].c = k->n;
    k->cb = bin;
    k->s = k->h[bin].s;
    k->n = k->h[bin].c;
    k->ch++;
    if (small) k->mk[bin >> 6] |= 1ULL << (bin & 63);
  }
  k->s += y;
  k->n++;
}

/* Start: bin 0 current (run mode flushes it at the end, maybe empty:
   scan_bins skips empty bins); end: flush, mask, change count. */
static inline __attribute__((always_inline)) void hc_init(hcand *k, hbin *h, uint64_t *mk,
                                                           unsigned c, int small,
                                                           const int direct) {
  k->h = h;
  k->mk = mk;
  k->c = c;
  k->cb = 0;
  k->s = 0;
  k->n = 0;
  k->ch = 0;
  k->mr = 0;
  if (!direct && small) mk[0] |= 1;
}

static inline __attribute__((always_inline)) void hc_end(hcand *k, builder *b, uint32_t rows,
                                                          int small, const int direct) {
  if (direct) {
    if (small) k->mk[0] = k->mr; /* a narrow feature: one word */
  } else {
    k->h[k->cb].s = k->s;
    k->h[k->cb].c = k->n;
  }
  b->hrows[k->c] += rows;
  b->hchg[k->c] += k->ch;
}

/* eval_binned's pass for one candidate (a) or two (a, then b: slots of
   the histogram and mask given with each); adds the node's targets to
   *sum in row order when sum is not NULL. */
static inline __attribute__((always_inline)) void hist_12_(builder *b, const shared *S,
                                                            const work *w, unsigned ca, hbin *ha,
                                                            uint64_t *ma, unsigned cb, hbin *hb,
                                                            uint64_t *mb, int small, double *sum,
                                                            const int two, const int packed,
                                                            const int da, const int db) {
  PASS_ROWS(packed);
  const double *yv = b->yv;
  double st = sum ? *sum : 0;
  hcand A, B;
  hc_init(&A, ha, ma, ca, small, da);
  if (two) hc_init(&B, hb, mb, cb, small, db);
  else B = A; /* not used */
  for (uint32_t i = w->lo; i < w->hi; i++) {
    const uint8_t *row = bin_row(rb, p, idx, i, w->hi, S->pf);
    double y = yv[i];
    st += y;
    hc_step(&A, row[ca], y, small, da);
    if (two) hc_step(&B, row[cb], y, small, db);
  }
  uint32_t rows = w->hi - w->lo;
  hc_end(&A, b, rows, small, da);
  if (two) hc_end(&B, b, rows, small, db);
  if (sum) *sum = st;
}

/* Whether feature j's pass goes direct (above). */
static inline int go_direct(const builder *b, const shared *S, unsigned j) {
  if (S->n_cuts[j] >= 64 || rf__plain_training) return 0;
  uint64_t r = b->hrows[j], c = b->hchg[j];
  return r == 0 || (c >= DIRECT_LO * (double)r && c <= DIRECT_HI * (double)r);
}

/* One and two candidates, with rows through idx or packed (rv), each way
   of the candidates; two with one direct and one run put the direct one
   first in the loop (each keeps its own histogram and mask slots). */
#define HIST_PACK(PK)                                                                             \
  do {                                                                                            \
    if (m == 1) {                                                                                 \
      if (d0) hist_12_(b, S, w, c0, h, mask, 0, h, mask, small, sum, 0, PK, 1, 0);                \
      else hist_12_(b, S, w, c0, h, mask, 0, h, mask, small, sum, 0, PK, 0, 0);                   \
    } else if (d0 && d1) {                                                                        \
      hist_12_(b, S, w, c0, h, mask, c1, h1, mask1, small, sum, 1, PK, 1, 1);                     \
    } else if (!d0 && !d1) {                                                                      \
      hist_12_(b, S, w, c0, h, mask, c1, h1, mask1, small, sum, 1, PK, 0, 0);                     \
    } else if (d0) {                                                                              \
      hist_12_(b, S, w, c0, h, mask, c1, h1, mask1, small, sum, 1, PK, 1, 0);                     \
    } else {                                                                                      \
      hist_12_(b, S, w, c1, h1, mask1, c0, h, mask, small, sum, 1, PK, 1, 0);                     \
    }                                                                                             \
  } while (0)
__attribute__((noinline)) static void hist_12(builder *b, const shared *S, const work *w,
                                              const uint32_t *cand, unsigned m, int small,
                                              double *sum) {
  hbin *h = b->hist, *h1 = b->hist + RF_MAX_BINS;
  uint64_t *mask = b->mask, *mask1 = b->mask + 4;
  unsigned c0 = cand[0], c1 = m > 1 ? cand[1] : 0;
  int d0 = go_direct(b, S, c0), d1 = m > 1 && go_direct(b, S, c1);
  if (b->rv) HIST_PACK(1);
  else HIST_PACK(0);
}
#undef HIST_PACK

/* The general pass, m candidates. */
static inline __attribute__((always_inline)) void hist_m_(builder *b, const shared *S,
                                                           const work *w, const uint32_t *cand,
                                                           unsigned m, int small, double *sum,
                                                           const int packed) {
  PASS_ROWS(packed);
  hbin *h = b->hist;
  uint64_t *mask = b->mask;
  const double *yv = b->yv;
  if (sum) /* its own pass: many candidates keep the loop busy */
    for (uint32_t i = w->lo; i < w->hi; i++) *sum += yv[i];
  for (uint32_t i = w->lo; i < w->hi; i++) {
    const uint8_t *row = bin_row(rb, p, idx, i, w->hi, S->pf);
    double y = yv[i];
    if (small) {
      for (unsigned k = 0; k < m; k++) {
        unsigned bin = row[cand[k]];
        hbin *e = &h[k * RF_MAX_BINS + bin];
        e->s += y;
        e->c++;
        mask[k * 4 + (bin >> 6)] |= 1ULL << (bin & 63);
      }
    } else {
      for (unsigned k = 0; k < m; k++) {
        hbin *e = &h[k * RF_MAX_BINS + row[cand[k]]];
        e->s += y;
        e->c++;
      }
    }
  }
}
#undef PASS_ROWS

__attribute__((noinline)) static void hist_m(builder *b, const shared *S, const work *w,
                                              const uint32_t *cand, unsigned m, int small,
                                              double *sum) {
  if (b->rv) hist_m_(b, S, w, cand, m, small, sum, 1);
  else hist_m_(b, S, w, cand, m, small, sum, 0);
}

/* Not inlined: inside the tree loop it lost registers to the rest of
   grow_tree and spilled in its innermost loop.  *cst: scan_bins. */
__attribute__((noinline)) static void eval_binned(builder *b, const shared *S, const work *w,
                                                   const uint32_t *cand, unsigned m, double sum,
                                                   int want_sum, split *best, uint64_t *cst) {
  uint32_t n = w->hi - w->lo;
  int small = n < SMALL_NODE;
  hbin *h = b->hist;
  uint64_t *mask = b->mask;
  if (small) memset(mask, 0, (size_t)m * 4 * sizeof(uint64_t));
  if (m <= 2) hist_12(b, S, w, cand, m, small, want_sum ? &sum : NULL);
  else hist_m(b, S, w, cand, m, small, want_sum ? &sum : NULL);
  if (want_sum) best->score = sum * sum / n;
  for (unsigned k = 0; k < m; k++)
    scan_bins(h + (size_t)k * RF_MAX_BINS, small ? mask + k * 4 : NULL, S->n_cuts[cand[k]] + 1, S,
              w, cand[k], sum, best, cst);
  if (want_sum) b->node_sum = sum;
}

/*
 * Extra trees over m candidates: one pass for each candidate's range, one
 * threshold per candidate drawn uniformly in it, one pass to count both
 * sides.  On float rows the comparison x <= thr is done as x <= the
 * largest float not above thr, the same answer for every float x.
 */
#define EVAL_EXTRA(NAME, T, THR)                                                            \
  static void NAME(builder *b, const shared *S, const work *w, const T *rx,                 \
                   const uint32_t *cand, unsigned m, int all, double sum, split *best) {   \
    size_t p = S->p;                                                                        \
    double *restrict mn = b->emn, *restrict mx = b->emx;                                                      \
    for (unsigned k = 0; k < m; k++) {                                                      \
      mn[k] = INFINITY;                                                                     \
      mx[k] = -INFINITY;                                                                    \
    }                                                                                       \
    for (uint32_t i = w->lo; i < w->hi; i++) {                                              \
      const T *row = rx + (size_t)b->idx[i] * p;                                            \
      if (all) {                                                                            \
        _Pragma("omp simd")                                                                 \
        for (unsigned k = 0; k < m; k++) {                                                  \
          double v = row[k];                                                                \
          mn[k] = v < mn[k] ? v : mn[k];                                                    \
          mx[k] = v > mx[k] ? v : mx[k];                                                    \
        }                                                                                   \
      } else {                                                                              \
        for (unsigned k = 0; k < m; k++) {                                                  \
          double v = row[cand[k]];                                                          \
          mn[k] = v < mn[k] ? v : mn[k];                                                    \
          mx[k] = v > mx[k] ? v : mx[k];                                                    \
        }                                                                                   \
      }                                                                                     \
    }                                                                                       \
    T *restrict thr = (T *)(void *)THR;                                                              \
    for (unsigned k = 0; k < m; k++) {                                                      \
      b->enl[k] = 0;                                                                        \
      b->esl[k] = 0;                                                                        \
      if (!(mn[k] < mx[k])) {                                                               \
        b->ethr[k] = NAN;                                                                   \
        thr[k] = (T)-INFINITY; /* nothing goes left */                                      \
        continue;                                                                           \
      }                                                                                     \
      double t = mn[k] + rf__rng_unit_(&b->rng) * (mx[k] - mn[k]);                          \
      if (!(t < mx[k])) t = mn[k];                                                          \
      t = float_thr(t, mn[k], mx[k]);                                                       \
      b->ethr[k] = t;                                                                       \
      thr[k] = sizeof(T) == sizeof(float) ? (T)float_down(t) : (T)t;                        \
    }                                                                                       \
    uint32_t *restrict nl = b->enl;                                                                  \
    double *restrict sl = b->esl;                                                                    \
    for (uint32_t i = w->lo; i < w->hi; i++) {                                              \
      const T *row = rx + (size_t)b->idx[i] * p;                                            \
      double y = b->yv[i];                                                                  \
      if (all) {                                                                            \
        _Pragma("omp simd")                                                                 \
        for (unsigned k = 0; k < m; k++) {                                                  \
          int c = row[k] <= thr[k];                                                         \
          nl[k] += (uint32_t)c;                                                             \
          sl[k] += c ? y : 0.0;                                                             \
        }                                                                                   \
      } else {                                                                              \
        for (unsigned k = 0; k < m; k++) {                                                  \
          int c = row[cand[k]] <= thr[k];                                                   \
          nl[k] += (uint32_t)c;                                                             \
          sl[k] += c ? y : 0.0;                                                             \
        }                                                                                   \
      }                                                                                     \
    }                                                                                       \
    uint32_t n = w->hi - w->lo;                                                             \
    for (unsigned k = 0; k < m; k++) {                                                      \
      uint32_t nL = nl[k], nR = n - nL;                                                     \
      if (isnan(b->ethr[k]) || nL < S->prm->min_leaf || nR < S->prm->min_leaf || nL == 0 || \
          nR == 0)                                                                          \
        continue;                                                                           \
      double sL = sl[k], sR = sum - sL;                                                     \
      double score = sL * sL / nL + sR * sR / nR;                                           \
      if (score > best->score) {                                                            \
        best->score = score;                                                                \
        best->feature = (int)(all ? k : cand[k]);                                           \
        best->thr = b->ethr[k];                                                             \
        best->thrf = (float)thr[k];                                                         \
      }                                                                                     \
    }                                                                                       \
  }
EVAL_EXTRA(eval_extra_f, float, b->ethf)
EVAL_EXTRA(eval_extra_d, double, b->ethr + S->p)
#undef EVAL_EXTRA

/*
 * Code bounds of m candidates at once: for each k, the number of values of
 * vp[k] at most tc[k], searched in codes [base[k], base[k] + len[k]) where
 * vp[k][base[k]] is the smallest (len[k] >= 1).  Every candidate takes the
 * same number of halving steps without a branch on the comparison: a
 * search per candidate mispredicted on every step, a quarter of the
 * training time on 100,000 x 100.  The answer is 0 when even the smallest
 * value is above tc[k] (nothing goes left).
 */
static void code_bounds(const double *const *vp, const double *tc, uint32_t *base, uint32_t *len,
                        unsigned m) {
  uint32_t most = 1;
  for (unsigned k = 0; k < m; k++) most = len[k] > most ? len[k] : most;
  unsigned steps = 0;
  while (most > 1) {
    most -= most >> 1;
    steps++;
  }
  for (unsigned s = 0; s < steps; s++)
    for (unsigned k = 0; k < m; k++) { /* vp[k][base] <= tc[k] < the values past the range */
      uint32_t h = len[k] >> 1, at = base[k] + h;
      base[k] = vp[k][at] <= tc[k] ? at : base[k];
      len[k] -= h;
    }
  for (unsigned k = 0; k < m; k++) base[k] = vp[k][base[k]] <= tc[k] ? base[k] + 1 : 0;
}

/* Rows a pass asks for ahead (row_ahead) when they do not fit the cache:
   a pass over a node's rows goes through its row numbers, in an order no
   prefetcher foresees. */
#define CODE_AHEAD 8
static inline void row_ahead(const void *row, size_t bytes) {
  const char *r = row;
  for (size_t o = 0; o < bytes; o += 64) __builtin_prefetch(r + o);
  __builtin_prefetch(r + bytes - 1);
}

/* Nodes of at most this many rows compare each row's value (vals[code])
   with the threshold instead of searching every candidate's code bound:
   r rows cost r loads a candidate, the search about log2 of its range. */
#define CODE_FEW_ROWS 16

/*
 * eval_extra on codes (build_codes): the range pass takes the smallest and
 * largest code, the threshold is drawn between their values exactly as on
 * the values, and its code bound (codes_le) decides the sides.  The value
 * compared is the one the value rows compare: the threshold rounded down
 * to a float when every value is a float, else the threshold.
 */
#define EVAL_CODES(NAME, T)                                                                 \
  static void NAME(builder *b, const shared *S, const work *w, const T *rx,                 \
                   const uint32_t *cand, unsigned m, int all, double sum, split *best,     \
                   const uint16_t *pmm) {                                                   \
    size_t p = S->p;                                                                        \
    T *restrict mn = (T *)(void *)b->ecmn, *restrict mx = (T *)(void *)b->ecmx;             \
    size_t rowb = p * sizeof(T);                                                            \
    int pf = S->pf && w->hi - w->lo > CODE_AHEAD;                                           \
    for (unsigned k = 0; k < m; k++) {                                                      \
      mn[k] = pmm ? (T)pmm[all ? k : cand[k]] : (T)~(T)0;                                   \
      mx[k] = pmm ? (T)pmm[p + (all ? k : cand[k])] : 0;                                    \
    }                                                                                       \
    for (uint32_t i = w->lo; i < w->hi && !pmm; i++) {                                      \
      if (pf) row_ahead(rx + (size_t)b->idx[i + CODE_AHEAD < w->hi ? i + CODE_AHEAD : i] * p, rowb); \
      const T *row = rx + (size_t)b->idx[i] * p;                                            \
      if (all) {                                                                            \
        _Pragma("omp simd")                                                                 \
        for (unsigned k = 0; k < m; k++) {                                                  \
          T v = row[k];                                                                     \
          mn[k] = v < mn[k] ? v : mn[k];                                                    \
          mx[k] = v > mx[k] ? v : mx[k];                                                    \
        }                                                                                   \
      } else {                                                                              \
        for (unsigned k = 0; k < m; k++) {                                                  \
          T v = row[cand[k]];                                                               \
          mn[k] = v < mn[k] ? v : mn[k];                                                    \
          mx[k] = v > mx[k] ? v : mx[k];                                                    \
        }                                                                                   \
      }                                                                                     \
    }                                                                                       \
    T *restrict ct = (T *)(void *)b->ect;                                                   \
    double *restrict tc = b->emn; /* the value compared, -inf: none */                      \
    for (unsigned k = 0; k < m; k++) {                                                      \
      const double *vj = S->vals[all ? k : cand[k]];                                        \
      b->evp[k] = vj;                                                                       \
      b->ebase[k] = mn[k];                                                                  \
      b->elen[k] = 1;                                                                       \
      tc[k] = -INFINITY;                                                                    \
      if (mn[k] >= mx[k]) {                                                                 \
        b->ethr[k] = NAN;                                                                   \
        continue;                                                                           \
      }                                                                                     \
      double lo = vj[mn[k]], hi = vj[mx[k]];                                                \
      double t = lo + rf__rng_unit_(&b->rng) * (hi - lo);                                   \
      if (!(t < hi)) t = lo;                                                                \
      t = float_thr(t, lo, hi);                                                             \
      b->ethr[k] = t;                                                                       \
      tc[k] = S->vfloat ? (double)float_down(t) : t;                                        \
      b->elen[k] = (uint32_t)mx[k] - mn[k]; /* vj[mx] > t */                                \
    }                                                                                       \
    uint32_t n = w->hi - w->lo;                                                             \
    int few = n <= CODE_FEW_ROWS;                                                           \
    if (!few) code_bounds(b->evp, tc, b->ebase, b->elen, m);                                \
    for (unsigned k = 0; k < m; k++) {                                                      \
      ct[k] = (T)b->ebase[k];                                                               \
      b->enl[k] = 0;                                                                        \
      b->esl[k] = 0;                                                                        \
    }                                                                                       \
    uint32_t *restrict nl = b->enl;                                                         \
    double *restrict sl = b->esl;                                                           \
    const double *const *restrict vp = b->evp;                                              \
    for (uint32_t i = w->lo; i < w->hi; i++) {                                              \
      if (pf) row_ahead(rx + (size_t)b->idx[i + CODE_AHEAD < w->hi ? i + CODE_AHEAD : i] * p, rowb); \
      const T *row = rx + (size_t)b->idx[i] * p;                                            \
      double y = b->yv[i];                                                                  \
      if (few) {                                                                            \
        for (unsigned k = 0; k < m; k++) {                                                  \
          int c = vp[k][row[all ? k : cand[k]]] <= tc[k];                                   \
          nl[k] += (uint32_t)c;                                                             \
          sl[k] += c ? y : 0.0;                                                             \
        }                                                                                   \
      } else if (all) {                                                                     \
        _Pragma("omp simd")                                                                 \
        for (unsigned k = 0; k < m; k++) {                                                  \
          int c = row[k] < ct[k];                                                           \
          nl[k] += (uint32_t)c;                                                             \
          sl[k] += c ? y : 0.0;                                                             \
        }                                                                                   \
      } else {                                                                              \
        for (unsigned k = 0; k < m; k++) {                                                  \
          int c = row[cand[k]] < ct[k];                                                     \
          nl[k] += (uint32_t)c;                                                             \
          sl[k] += c ? y : 0.0;                                                             \
        }                                                                                   \
      }                                                                                     \
    }                                                                                       \
    int kb = -1;                                                                            \
    for (unsigned k = 0; k < m; k++) {                                                      \
      uint32_t nL = nl[k], nR = n - nL;                                                     \
      if (isnan(b->ethr[k]) || nL < S->prm->min_leaf || nR < S->prm->min_leaf || nL == 0 || \
          nR == 0)                                                                          \
        continue;                                                                           \
      double sL = sl[k], sR = sum - sL;                                                     \
      double score = sL * sL / nL + sR * sR / nR;                                           \
      if (score > best->score) {                                                            \
        best->score = score;                                                                \
        best->feature = (int)(all ? k : cand[k]);                                           \
        best->thr = b->ethr[k];                                                             \
        best->code = ct[k];                                                                 \
        kb = (int)k;                                                                        \
      }                                                                                     \
    }                                                                                       \
    if (few && kb >= 0) { /* the code bound of the split taken alone */                     \
      code_bounds(vp + kb, tc + kb, b->ebase + kb, b->elen + kb, 1);                        \
      best->code = b->ebase[kb];                                                            \
    }                                                                                       \
  }
EVAL_CODES(eval_codes8, uint8_t)
EVAL_CODES(eval_codes16, uint16_t)
#undef EVAL_CODES

/* Smallest and largest of y[0..n), n >= 1, in four independent chains
   (one min and one max chain waited 4 cycles a row).  y is finite; which
   of two equal zeros is returned does not matter: only ymin < ymax is
   asked. */
static inline void range_of(const double *y, uint32_t n, double *mn, double *mx) {
  double a0 = y[0], a1 = y[0], a2 = y[0], a3 = y[0];
  double b0 = y[0], b1 = y[0], b2 = y[0], b3 = y[0];
  uint32_t k = 1;
  for (; k + 4 <= n; k += 4) {
    a0 = y[k] < a0 ? y[k] : a0;
    a1 = y[k + 1] < a1 ? y[k + 1] : a1;
    a2 = y[k + 2] < a2 ? y[k + 2] : a2;
    a3 = y[k + 3] < a3 ? y[k + 3] : a3;
    b0 = y[k] > b0 ? y[k] : b0;
    b1 = y[k + 1] > b1 ? y[k + 1] : b1;
    b2 = y[k + 2] > b2 ? y[k + 2] : b2;
    b3 = y[k + 3] > b3 ? y[k + 3] : b3;
  }
  for (; k < n; k++) {
    a0 = y[k] < a0 ? y[k] : a0;
    b0 = y[k] > b0 ? y[k] : b0;
  }
  a0 = a1 < a0 ? a1 : a0;
  a2 = a3 < a2 ? a3 : a2;
  b0 = b1 > b0 ? b1 : b0;
  b2 = b3 > b2 ? b3 : b2;
  *mn = a2 < a0 ? a2 : a0;
  *mx = b2 > b0 ? b2 : b0;
}

/* A double's bits, for selects without a branch. */
static inline uint64_t u64_of(const double *p) {
  uint64_t u;
  memcpy(&u, p, sizeof u);
  return u;
}
static inline void u64_to(double *p, uint64_t u) { memcpy(p, &u, sizeof u); }

/*
 * The two-pointer partition, moved in place without its loop.  The scheme
 * (the model's since its first version): a front pointer F from 0 and a
 * back pointer B from n-1; the row under examination is F's when the
 * previous row went left (and at the start), B's when it went right; a
 * row going left settles at the next left slot 0, 1, ..., one going right
 * at the next right slot n-1, n-2, ...; it stops when the pointers meet.
 * Replaying it row by row waited on every row's side to know the next
 * row (a load, a select, a load: a chain through the whole node).  Where
 * each row ends is a function of the sides alone:
 *
 *   F takes [0, a), B takes [a, n), a = nl when gf[nl] goes left (or
 *   nl == n), else nl + 1;
 *   a left row of F's stays put; a right row of B's moves down one;
 *   the k-th right row of F's (FR[k], in increasing position) goes to
 *   n - 1 for k = 0, else one below the (k-1)-th left row of B's (BL[k-1],
 *   in decreasing position), and BL[k] goes to FR[k]'s slot.
 *
 * (Each F row going right hands the pointer to B until a B row goes left,
 * which fills that F row's slot; between them every B row going right
 * takes the slot just above it.)  Checked against the replay on every side
 * pattern up to 16 rows and on random ones (tests/test_rf.c).  Walking B's
 * rows upward writes slot q-1 after reading it; FR[k]'s row, overwritten
 * by BL[k], is carried to BL[k-1] in a register.  fl: n+1 entries of
 * scratch.  nl: the rows with gf[k] = 1.  B's loop has no branch on the
 * side (a row going right writes its own slot, rewritten in the next
 * step): a split's sides are random, and the branch mispredicted on about
 * half of B's rows; random-forest training on the dedispersion A4000 set,
 * one thread, 0.125-0.128 -> 0.119-0.122 s.
 */
/* ix: row numbers (T uint32_t) or packed rows (uint64_t) */
#define PART_ROWS(NAME, T)                                                                         \
void NAME(T *ix, double *yy, const uint8_t *gf, uint32_t n, uint32_t nl, uint32_t *fl) {           \
  if (nl >= n) return;                                                                             \
  uint32_t a = gf[nl] ? nl : nl + 1, m = 0;                                                        \
  for (uint32_t k = 0; k < a; k++) { /* FR: F's right rows, in order */                            \
    fl[m] = k;                                                                                     \
    m += gf[k] ^ 1u;                                                                               \
  }                                                                                                \
  fl[m] = 0; /* read, never used, when B's last row goes right */                                  \
  /* m >= 1 rows of F go right; B has m - (a - nl) going left */                                   \
  uint32_t j = m - (a - nl), q = a;                                                                \
  T pi;                                                                                            \
  double py;                                                                                       \
  if (a == nl) { /* B's first row is its last left one, under a */                                 \
    uint32_t t = fl[--j];                                                                          \
    pi = ix[t];                                                                                    \
    py = yy[t];                                                                                    \
    ix[t] = ix[a];                                                                                 \
    yy[t] = yy[a];                                                                                 \
    q = a + 1;                                                                                     \
  } else {                                                                                         \
    pi = ix[fl[j]];                                                                                \
    py = yy[fl[j]];                                                                                \
  }                                                                                                \
  for (; q < n; q++) { /* without a branch: the sides of a split are random */                     \
    T ci = ix[q];                                                                                  \
    uint64_t cy = u64_of(yy + q), pu = u64_of(&py);                                                \
    uint32_t g = gf[q];                                                                            \
    j -= g;                                                                                        \
    uint32_t t = q ^ ((q ^ fl[j]) & -g); /* q when g = 0: a slot rewritten in the next step */   \
    T mt = (T)0 - (T)g;                                                                            \
    uint64_t m64 = (uint64_t)0 - g;                                                                \
    ix[q - 1] = ci ^ ((ci ^ pi) & mt);                                                             \
    u64_to(yy + q - 1, cy ^ ((cy ^ pu) & m64));                                                    \
    T ti = ix[t];                                                                                  \
    uint64_t tu = u64_of(yy + t);                                                                  \
    ix[t] = ci;                                                                                    \
    u64_to(yy + t, cy);                                                                            \
    pi = pi ^ ((pi ^ ti) & mt);                                                                    \
    pu = pu ^ ((pu ^ tu) & m64);                                                                   \
    u64_to(&py, pu);                                                                               \
  }                                                                                                \
  ix[n - 1] = pi;                                                                                  \
  yy[n - 1] = py;                                                                                  \
}
PART_ROWS(rf__part_rows, uint32_t)
static PART_ROWS(part_rows8, uint64_t)
#undef PART_ROWS

/*
 * The sides of a split on codes (code < c goes left) of the node's n rows
 * ix[0, n) into gf, returning the rows going left, and on the way every
 * feature's smallest and largest code on each side: the right side's p
 * minima and p maxima at mm, the left side's after them.  A child's range
 * pass read its rows again; here each row is read once for its side and
 * both children's ranges (the smallest and largest code do not depend on
 * the order of the rows).
 */
#define FUSED_SIDES(NAME, T)                                                                \
  static uint32_t NAME(const shared *S, const T *rc, const uint32_t *ix, uint32_t n,        \
                       size_t f, unsigned c, uint8_t *gf, uint16_t *mm) {                   \
    size_t p = S->p, rowb = p * sizeof(T);                                                  \
    uint16_t *rmm = mm, *lmm = mm + 2 * p;                                                  \
    for (size_t j = 0; j < p; j++) {                                                        \
      rmm[j] = lmm[j] = UINT16_MAX;                                                         \
      rmm[p + j] = lmm[p + j] = 0;                                                          \
    }                                                                                       \
    int pf = S->pf && n > CODE_AHEAD;                                                       \
    uint32_t nl = 0;                                                                        \
    for (uint32_t k = 0; k < n; k++) {                                                      \
      if (pf) row_ahead(rc + (size_t)ix[k + CODE_AHEAD < n ? k + CODE_AHEAD : k] * p, rowb); \
      const T *row = rc + (size_t)ix[k] * p;                                                \
      uint8_t g = row[f] < c;                                                               \
      gf[k] = g;                                                                            \
      nl += g;                                                                              \
      uint16_t *restrict a = g ? lmm : rmm;                                                 \
      _Pragma("omp simd")                                                                   \
      for (size_t j = 0; j < p; j++) {                                                      \
        uint16_t v = row[j];                                                                \
        a[j] = v < a[j] ? v : a[j];                                                         \
        a[p + j] = v > a[p + j] ? v : a[p + j];                                             \
      }                                                                                     \
    }                                                                                       \
    return nl;                                                                              \
  }
FUSED_SIDES(fused_sides8, uint8_t)
FUSED_SIDES(fused_sides16, uint16_t)
#undef FUSED_SIDES

static int grow_tree(builder *b, const shared *S) {
  const rf_params *prm = S->prm;
  size_t p = S->p;
  work *stack = rf__mallocn(64 + 2 * (size_t)64, sizeof(work));
  size_t sp = 0, cap_stack = 192;
  /* extra trees on codes trying every feature: the partition of a node
     takes both children's code ranges (fused_sides), so their own passes
     for them go; slot k of the pool holds stack[k]'s, p minima then p
     maxima */
  int fuse = (S->rc8 || S->rc16) && S->mtry >= p;
  uint16_t *mm = fuse ? rf__mallocn(cap_stack, 2 * p * sizeof(uint16_t)) : NULL;
  if (!stack || (fuse && !mm)) {
    rf__free(stack);
    rf__free(mm);
    return -1;
  }
  if (push_node(b)) goto fail;
  b->t.n_nodes = 1;
  {
    double ymin = INFINITY, ymax = -INFINITY;
    for (uint32_t i = 0; i < b->n_idx; i++) {
      double v = b->yv[i];
      ymin = v < ymin ? v : ymin;
      ymax = v > ymax ? v : ymax;
    }
    uint64_t cst = 0; /* one bin for the whole data: constant everywhere */
    if (!prm->extra_trees && !rf__plain_training)
      for (size_t j = 0; j < p && j < 64; j++) cst |= (uint64_t)(S->n_cuts[j] == 0) << j;
    stack[sp++] = (work){0, (uint32_t)b->n_idx, 0, 0, ymin, ymax, cst, 0};
  }
  while (sp) {
    work w = stack[--sp];
    uint32_t n = w.hi - w.lo;
    int can_split = n >= 2 * prm->min_leaf && n >= 2 && w.ymin < w.ymax &&
                    (prm->max_depth == 0 || w.depth < prm->max_depth);
    /* the sum: from the first histogram pass (a split to search,
       binned), else one pass of its own; both add the rows in order, so
       they give the same double */
    double sum = 0;
    int want_sum = can_split && !prm->extra_trees;
    if (!want_sum)
      for (uint32_t i = w.lo; i < w.hi; i++) sum += b->yv[i];
    split best = {-1, sum * sum / n, 0, 0, 0, 0, 0, 0};
    uint64_t cst = w.cst;
    /* candidates in batches of mtry, drawn without replacement; a further
       batch only while no valid split has been found */
    for (size_t k0 = 0; can_split && k0 < p && best.feature < 0; k0 += S->mtry) {
      unsigned m = 0;
      for (size_t k = k0; k < p && k < k0 + S->mtry; k++) {
        size_t r = k + (size_t)rf__rng_below_(&b->rng, p - k);
        uint32_t j = b->feat[r];
        b->feat[r] = b->feat[k];
        b->feat[k] = j;
        b->cand[m++] = j;
      }
      int all = m == p;
      if (prm->extra_trees) {
        const uint16_t *pmm = w.mm ? mm + sp * 2 * p : NULL;
        if (S->rc8) eval_codes8(b, S, &w, S->rc8, b->cand, m, all, sum, &best, pmm);
        else if (S->rc16) eval_codes16(b, S, &w, S->rc16, b->cand, m, all, sum, &best, pmm);
        else if (S->rxf) eval_extra_f(b, S, &w, S->rxf, b->cand, m, all, sum, &best);
        else eval_extra_d(b, S, &w, S->rxd, b->cand, m, all, sum, &best);
      } else {
        /* a feature constant on the node's rows never splits them: its
           pass is skipped (the draws above stay, and so does every later
           draw); the others keep their order, so ties go as before */
        unsigned mc = 0;
        uint64_t skip = rf__plain_training ? 0 : cst;
        for (unsigned k = 0; k < m; k++) {
          uint32_t j = b->cand[k];
          b->cand[mc] = j;
          mc += !(j < 64 && (skip >> j & 1));
        }
        if (mc) {
          eval_binned(b, S, &w, b->cand, mc, sum, want_sum, &best, &cst);
          if (want_sum) {
            sum = b->node_sum;
            want_sum = 0;
          }
        }
      }
    }
    if (want_sum) /* every candidate was constant: the sum's own pass */
      for (uint32_t i = w.lo; i < w.hi; i++) sum += b->yv[i];
    double parent = sum * sum / n;
    if (best.feature < 0) {
      if (make_leaf(b, S, &w, sum)) goto fail;
      continue;
    }
    /*
     * Partition idx[lo,hi) and yv with it, left part first, in the order
     * of the two-pointer scheme the model has always used (a row going
     * left stays, one going right swaps with the last unsettled row):
     * every later sum depends on that order.  First every row's side
     * (independent loads), then the rows move in place to where that
     * scheme puts them (rf__part_rows; packed rows move instead of row
     * numbers), then both sides' target ranges.
     */
    size_t f = (size_t)best.feature;
    uint32_t *ix = b->idx + w.lo;
    double *yy = b->yv + w.lo;
    uint8_t *gf = b->side;
    uint32_t nl = 0;
#define SIDES(GOES_LEFT)                     \
    for (uint32_t k = 0; k < n; k++) {       \
      uint32_t r = ix[k];                    \
      uint8_t g_ = (uint8_t)(GOES_LEFT);     \
      gf[k] = g_;                            \
      nl += g_;                              \
    }
    if (sp + 2 > cap_stack) {
      work *t = rf__realloc(stack, cap_stack * 2 * sizeof *t);
      if (!t) goto fail;
      stack = t;
      if (fuse) {
        uint16_t *t2 = rf__realloc(mm, cap_stack * 2 * 2 * p * sizeof(uint16_t));
        if (!t2) goto fail;
        mm = t2;
      }
      cap_stack *= 2;
    }
    uint64_t *rv = b->rv ? b->rv + w.lo : NULL;
    if (fuse) {
      if (S->rc8) nl = fused_sides8(S, S->rc8, ix, n, f, best.code, gf, mm + sp * 2 * p);
      else nl = fused_sides16(S, S->rc16, ix, n, f, best.code, gf, mm + sp * 2 * p);
    } else if (rv) {
      const uint8_t *rvb = (const uint8_t *)rv;
      for (uint32_t k = 0; k < n; k++) {
        uint8_t g_ = rvb[8 * (size_t)k + f] <= best.bin;
        gf[k] = g_;
        nl += g_;
      }
    } else if (!prm->extra_trees) {
      SIDES(S->rb[(size_t)r * p + f] <= best.bin)
    } else if (S->rc8) {
      SIDES(S->rc8[(size_t)r * p + f] < best.code)
    } else if (S->rc16) {
      SIDES(S->rc16[(size_t)r * p + f] < best.code)
    } else if (S->rxf) {
      SIDES(S->rxf[(size_t)r * p + f] <= best.thrf)
    } else {
      SIDES(S->rxd[(size_t)r * p + f] <= best.thr)
    }
#undef SIDES
    if (rv) part_rows8(rv, yy, gf, n, nl, b->pidx);
    else rf__part_rows(ix, yy, gf, n, nl, b->pidx);
    double lmin, lmax, rmin, rmax;
    range_of(yy, nl, &lmin, &lmax);
    range_of(yy + nl, n - nl, &rmin, &rmax);
    uint32_t i = w.lo + nl;
    if (push_node(b)) goto fail;
    uint32_t left = b->t.n_nodes;
    b->t.n_nodes += 2;
    rf_node *nd = &b->t.nodes[w.node];
    nd->v = best.thr;
    nd->feature = best.feature;
    nd->left = left;
    b->mdi[best.feature] += best.score - parent;
    /* what is constant here is constant in both children; so is the
       split feature on a side that holds one of its bins */
    uint64_t fb = f < 64 ? 1ULL << f : 0;
    stack[sp++] = (work){i, w.hi, left + 1, w.depth + 1, rmin, rmax, cst | (best.rcst ? fb : 0),
                         (uint32_t)fuse};
    stack[sp++] = (work){w.lo, i, left, w.depth + 1, lmin, lmax, cst | (best.lcst ? fb : 0),
                         (uint32_t)fuse};
  }
  rf__free(stack);
  rf__free(mm);
  return 0;
fail:
  rf__free(stack);
  rf__free(mm);
  return -1;
}

/*
 * Renumber the nodes breadth-first.  Growth is depth-first (small stack),
 * which scatters the top levels over the array; every prediction walks the
 * top levels, so putting them first keeps them in the same few cache lines.
 * Children stay adjacent pairs with indices above their parent's.
 */
static int relayout_bfs(rf_tree *t) {
  rf_node *nn = rf__mallocn(t->n_nodes, sizeof(rf_node));
  uint32_t *q = rf__mallocn(t->n_nodes, sizeof(uint32_t));
  if (!nn || !q) {
    rf__free(nn);
    rf__free(q);
    return -1;
  }
  uint32_t head = 0, tail = 1;
  q[0] = 0;
  while (head < tail) {
    rf_node nd = t->nodes[q[head]];
    if (nd.feature >= 0) {
      q[tail] = nd.left;
      q[tail + 1] = nd.left + 1;
      nd.left = tail;
      tail += 2;
    }
    nn[head++] = nd;
  }
  rf__free(t->nodes);
  rf__free(q);
  t->nodes = nn;
  return 0;
}

/*
 * Build tree number ti into *out; inbag (n bits) gets the in-bag rows.
 * Returns -1 only for out of memory.
 */
static int build_tree(const shared *S, size_t ti, rf_tree *out, uint64_t *inbag, double *mdi) {
  builder b;
  memset(&b, 0, sizeof b);
  size_t n = S->n, p = S->p;
  int rc = -1;
  rf__rng_seed(&b.rng, S->prm->seed, ti);
  b.idx = rf__mallocn(n + 4, sizeof(uint32_t));
  b.yv = rf__mallocn(n, sizeof(double));
  b.feat = rf__mallocn(p, sizeof(uint32_t));
  b.cand = rf__mallocn(p, sizeof(uint32_t));
  b.tmp = rf__mallocn(n, sizeof(float));
  b.side = rf__malloc(n);
  b.pidx = rf__mallocn(n + 1, sizeof(uint32_t));
  b.mdi = mdi;
  uint32_t *cnt = NULL;
  if (!b.idx || !b.yv || !b.feat || !b.cand || !b.tmp || !b.side || !b.pidx) goto out;
  if (S->prm->extra_trees) {
    b.emn = rf__mallocn(p, 5 * sizeof(double)); /* min, max, sum, thr, thr as T */
    b.ethf = rf__mallocn(p, sizeof(float));
    b.enl = rf__mallocn(p, sizeof(uint32_t));
    b.ecmn = rf__mallocn(p, 3 * sizeof(uint16_t));
    b.ebase = rf__mallocn(p, 2 * sizeof(uint32_t));
    b.evp = rf__mallocn(p, sizeof(double *));
    if (!b.emn || !b.ethf || !b.enl || !b.ecmn || !b.ebase || !b.evp) goto out;
    b.elen = b.ebase + p;
    b.ecmx = b.ecmn + p;
    b.ect = b.ecmn + 2 * p;
    b.emx = b.emn + p;
    b.esl = b.emn + 2 * p;
    b.ethr = b.emn + 3 * p;
  } else {
    b.hist = rf__calloc(S->mtry, RF_MAX_BINS * sizeof(hbin));
    b.mask = rf__mallocn(S->mtry, 4 * sizeof(uint64_t));
    b.hrows = rf__calloc(2 * p, sizeof(uint64_t));
    if (!b.hist || !b.mask || !b.hrows) goto out;
    b.hchg = b.hrows + p;
  }
  for (size_t j = 0; j < p; j++) b.feat[j] = (uint32_t)j;
  if (S->prm->bootstrap) {
    cnt = rf__calloc(n, sizeof(uint32_t));
    if (!cnt) goto out;
    for (size_t i = 0; i < n; i++) cnt[rf__rng_below_(&b.rng, n)]++;
    /* a row's copies without a branch on their number (mostly 0, 1 or 2,
       unpredictable): four slots written, cnt of them kept (idx has n + 4) */
    size_t k = 0;
    for (size_t i0 = 0; i0 < n; i0 += 64) {
      size_t i1 = i0 + 64 < n ? i0 + 64 : n;
      uint64_t word = 0;
      for (size_t i = i0; i < i1; i++) {
        uint32_t c = cnt[i], *o = b.idx + k;
        word |= (uint64_t)(c != 0) << (i - i0);
        o[0] = o[1] = o[2] = o[3] = (uint32_t)i;
        for (uint32_t q = 4; q < c; q++) o[q] = (uint32_t)i;
        k += c;
      }
      inbag[i0 >> 6] = word;
    }
    b.n_idx = k;
  } else {
    for (size_t i = 0; i < n; i++) b.idx[i] = (uint32_t)i;
    for (size_t i = 0; i < (n + 63) / 64; i++) inbag[i] = ~0ULL;
    b.n_idx = n;
  }
  for (size_t i = 0; i < b.n_idx; i++) b.yv[i] = S->y[b.idx[i]];
  if (S->r8) {
    if (!(b.rv = rf__mallocn(b.n_idx ? b.n_idx : 1, sizeof(uint64_t)))) goto out;
    for (size_t i = 0; i < b.n_idx; i++) memcpy(&b.rv[i], S->r8 + 8 * (size_t)b.idx[i], 8);
  }
  if (grow_tree(&b, S) || relayout_bfs(&b.t)) goto out;
  *out = b.t;
  memset(&b.t, 0, sizeof b.t);
  rc = 0;
out:
  rf__tree_free(&b.t);
  rf__free(cnt);
  rf__free(b.idx);
  rf__free(b.rv);
  rf__free(b.yv);
  rf__free(b.feat);
  rf__free(b.cand);
  rf__free(b.tmp);
  rf__free(b.side);
  rf__free(b.pidx);
  rf__free(b.emn);
  rf__free(b.ethf);
  rf__free(b.enl);
  rf__free(b.ecmn);
  rf__free(b.ebase);
  rf__free(b.evp);
  rf__free(b.hist);
  rf__free(b.mask);
  rf__free(b.hrows);
  return rc;
}

/* ------------------------------------------------------------- importance -- */

int rf_permutation_importance(const rf_forest *f, const rf_data *d, uint64_t seed, int n_threads,
                              double *out) {
  if (!d->y) return rf__err("permutation importance needs targets");
  if (d->n_cols != f->n_features)
    return rf__err("data has %zu feature columns, the model %zu", d->n_cols, f->n_features);
  size_t n = d->n_rows, p = d->n_cols;
  double *y = NULL;
  if (rf__transformed_y(&f->params, d, &y)) return -1;
  uint32_t *perm = rf__mallocn(n, sizeof(uint32_t));
  if (!perm) {
    rf__free(y);
    return rf__nomem();
  }
  int nt = rf__nthreads(n_threads);
  /* squared errors per row, summed in row order: the same sum for any
     thread count (an OpenMP reduction's order is not fixed) */
  double *se = rf__mallocn(n, sizeof(double));
  if (!se) {
    rf__free(perm);
    rf__free(y);
    return rf__nomem();
  }
  double base = 0;
#pragma omp parallel for num_threads(nt) schedule(static)
  for (size_t i = 0; i < n; i++) {
    double s = 0;
    for (size_t t = 0; t < f->n_trees; t++) s += leaf_of_col(&f->trees[t], d->x, n, i, -1, 0)->v;
    double e = s / (double)f->n_trees - y[i];
    se[i] = e * e;
  }
  for (size_t i = 0; i < n; i++) base += se[i];
  for (size_t j = 0; j < p; j++) {
    rf_rng rng;
    rf__rng_seed(&rng, seed ^ 0x5045524dULL, j);
    for (size_t i = 0; i < n; i++) perm[i] = (uint32_t)i;
    for (size_t i = n - 1; i > 0; i--) {
      size_t k = (size_t)rf__rng_below(&rng, i + 1);
      uint32_t t = perm[i];
      perm[i] = perm[k];
      perm[k] = t;
    }
    const double *xj = d->x + j * n;
    double err = 0;
#pragma omp parallel for num_threads(nt) schedule(static)
    for (size_t i = 0; i < n; i++) {
      double s = 0;
      for (size_t t = 0; t < f->n_trees; t++)
        s += leaf_of_col(&f->trees[t], d->x, n, i, (int)j, xj[perm[i]])->v;
      double e = s / (double)f->n_trees - y[i];
      se[i] = e * e;
    }
    for (size_t i = 0; i < n; i++) err += se[i];
    out[j] = (err - base) / (double)n;
  }
  rf__free(se);
  rf__free(perm);
  rf__free(y);
  return 0;
}

/* Breiman's OOB permutation importance: per tree, shuffle feature j among
   the tree's OOB rows; mean increase of the tree's squared error. */
static int oob_perm_importance(rf_forest *f, const shared *S, uint64_t *const *inbag, int nt) {
  size_t n = S->n, p = S->p, T = f->n_trees;
  double *acc = rf__calloc(T * p, sizeof(double));
  unsigned char *used = rf__calloc(T, 1);
  int failed = 0;
  if (!acc || !used) failed = 1;
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) reduction(| : failed)
  for (size_t t = 0; t < T; t++) {
    if (!acc || !used) continue;
    uint32_t *oob = rf__mallocn(n, sizeof(uint32_t));
    uint32_t *perm = rf__mallocn(n, sizeof(uint32_t));
    if (!oob || !perm) {
      failed = 1;
      rf__free(oob);
      rf__free(perm);
      continue;
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
      if (!(inbag[t][i >> 6] >> (i & 63) & 1)) oob[m++] = (uint32_t)i;
    if (m) {
      used[t] = 1;
      const rf_tree *tr = &f->trees[t];
      double base = 0;
      for (size_t q = 0; q < m; q++) {
        double e = leaf_of_col(tr, S->x, n, oob[q], -1, 0)->v - S->y[oob[q]];
        base += e * e;
      }
      rf_rng rng;
      rf__rng_seed(&rng, f->params.seed ^ 0x4f4f4250ULL, t);
      for (size_t j = 0; j < p; j++) {
        memcpy(perm, oob, m * sizeof(uint32_t));
        for (size_t q = m - 1; q > 0; q--) {
          size_t k = (size_t)rf__rng_below(&rng, q + 1);
          uint32_t tmp = perm[q];
          perm[q] = perm[k];
          perm[k] = tmp;
        }
        const double *xj = S->x + j * n;
        double err = 0;
        for (size_t q = 0; q < m; q++) {
          double e = leaf_of_col(tr, S->x, n, oob[q], (int)j, xj[perm[q]])->v - S->y[oob[q]];
          err += e * e;
        }
        acc[t * p + j] = (err - base) / (double)m;
      }
    }
    rf__free(oob);
    rf__free(perm);
  }
  if (failed) {
    rf__free(acc);
    rf__free(used);
    return rf__nomem();
  }
  f->perm = rf__calloc(p, sizeof(double));
  if (!f->perm) {
    rf__free(acc);
    rf__free(used);
    return rf__nomem();
  }
  size_t nu = 0;
  for (size_t t = 0; t < T; t++) {
    if (!used[t]) continue;
    nu++;
    for (size_t j = 0; j < p; j++) f->perm[j] += acc[t * p + j];
  }
  for (size_t j = 0; j < p; j++) f->perm[j] = nu ? f->perm[j] / (double)nu : 0;
  rf__free(acc);
  rf__free(used);
  return 0;
}

/*
 * OOB predictions (transformed space; NaN for rows in every bag).  Rows
 * go in blocks, and within a block tree by tree, so one tree's nodes stay
 * cached while the block's rows walk it; random forests walk the row-major
 * bins with each split's bin number (x <= cut[k] <=> bin(x) <= k).  Each
 * row still sums its trees in tree order: the same figures for any thread
 * count.  (Row by row over all trees missed the cache on most nodes: 12%
 * of training time on 200,000 x 100.)
 */
/*
 * OOB predictions over the 8-byte nodes (rf_int.h): per block of rows,
 * the rows' order keys, then tree by tree eight OOB rows at a time in
 * registers for the tree's rounds and a short tail, as rf__raw_mean walks
 * eight trees.  Eight independent walks overlap their loads where one row
 * at a time waited on each node.  Each row still sums its trees in tree
 * order.
 */
static int oob_fast(const rf_forest *f, const shared *S, uint64_t *const *inbag, int nt,
                    double *op) {
  size_t n = S->n, p = S->p, T = f->n_trees;
  uint32_t *rounds = rf__mallocn(T, sizeof(uint32_t));
  if (!rounds) return rf__nomem();
  for (size_t i = 0; i < T; i++) rounds[f->corder[i]] = f->cdepth[i];
  enum { BLOCK = 2048 };
  size_t stride = key_stride(p);
  uint32_t M = (uint32_t)stride - 1;
  int failed = 0;
#pragma omp parallel num_threads(nt) reduction(| : failed)
  {
    uint32_t *xk = rf__mallocn(BLOCK, stride * sizeof(uint32_t));
    uint32_t cnt[BLOCK], rows[BLOCK];
    if (!xk) failed = 1;
#pragma omp for schedule(dynamic, 1)
    for (size_t c0 = 0; c0 < n; c0 += BLOCK) {
      if (!xk) continue;
      size_t c1 = c0 + BLOCK < n ? c0 + BLOCK : n;
      for (size_t i = c0; i < c1; i++) {
        uint32_t *k = xk + (i - c0) * stride;
        for (size_t j = 0; j < p; j++) k[j] = key_up(S->x[j * n + i]); /* finite */
        k[M] = 0;
        op[i] = 0;
        cnt[i - c0] = 0;
      }
      for (size_t t = 0; t < T; t++) {
        size_t m = 0;
        for (size_t i = c0; i < c1; i++) {
          rows[m] = (uint32_t)(i - c0);
          m += !(inbag[t][i >> 6] >> (i & 63) & 1);
        }
        const rf_cnode *root = f->cn[t];
        uint32_t R = rounds[t];
        size_t a = 0;
        for (; a + 8 <= m; a += 8) {
          const uint32_t *x8[8];
          const rf_cnode *qs[8];
          for (int u = 0; u < 8; u++) x8[u] = xk + rows[a + u] * stride;
          walk8(root, R, M, x8, qs);
          for (int u = 0; u < 8; u++) {
            double v = cmean(qs[u]);
            op[c0 + rows[a + u]] += v;
            cnt[rows[a + u]]++;
          }
        }
        for (; a < m; a++) {
          const rf_cnode *q = root;
          const uint32_t *xr = xk + rows[a] * stride;
          while ((q->kw & 0xFF) != RF_CLEAF) BSTEP(q, xr, M);
          double v = cmean(q);
          op[c0 + rows[a]] += v;
          cnt[rows[a]]++;
        }
      }
      for (size_t i = c0; i < c1; i++) op[i] = cnt[i - c0] ? op[i] / (double)cnt[i - c0] : NAN;
    }
    rf__free(xk);
  }
  rf__free(rounds);
  return failed ? rf__nomem() : 0;
}

static int oob_predict(const rf_forest *f, const shared *S, uint64_t *const *inbag, int nt,
                       double *op) {
  if (f->cn) return oob_fast(f, S, inbag, nt, op);
  size_t n = S->n, p = S->p, T = f->n_trees;
  uint8_t **nb = NULL;
  if (S->rb) {
    nb = rf__calloc(T, sizeof *nb);
    if (!nb) return rf__nomem();
    for (size_t t = 0; t < T; t++) {
      const rf_tree *tr = &f->trees[t];
      if (!(nb[t] = rf__malloc(tr->n_nodes))) {
        for (size_t u = 0; u < t; u++) rf__free(nb[u]);
        rf__free(nb);
        return rf__nomem();
      }
      for (uint32_t k = 0; k < tr->n_nodes; k++) {
        int j = tr->nodes[k].feature;
        nb[t][k] = j < 0 ? 0 : (uint8_t)bin_of(S->cuts[j], S->n_cuts[j], tr->nodes[k].v);
      }
    }
  }
  enum { BLOCK = 2048 };
#pragma omp parallel num_threads(nt)
  {
    uint32_t cnt[BLOCK];
#pragma omp for schedule(dynamic, 1)
    for (size_t c0 = 0; c0 < n; c0 += BLOCK) {
      size_t c1 = c0 + BLOCK < n ? c0 + BLOCK : n;
      for (size_t i = c0; i < c1; i++) {
        op[i] = 0;
        cnt[i - c0] = 0;
      }
      for (size_t t = 0; t < T; t++) {
        const rf_node *nd = f->trees[t].nodes;
        for (size_t i = c0; i < c1; i++) {
          if (inbag[t][i >> 6] >> (i & 63) & 1) continue;
          uint32_t k = 0;
          if (nb) {
            const uint8_t *row = S->rb + i * p, *nbt = nb[t];
            while (nd[k].feature >= 0) k = nd[k].left + (row[nd[k].feature] > nbt[k]);
          } else {
            k = (uint32_t)(leaf_of_col(&f->trees[t], S->x, n, i, -1, 0) - nd);
          }
          op[i] += nd[k].v;
          cnt[i - c0]++;
        }
      }
      for (size_t i = c0; i < c1; i++) op[i] = cnt[i - c0] ? op[i] / (double)cnt[i - c0] : NAN;
    }
  }
  if (nb)
    for (size_t t = 0; t < T; t++) rf__free(nb[t]);
  rf__free(nb);
  return 0;
}

/* ---------------------------------------------------------------- training -- */

void rf__fill_info(rf_forest *f) {
  rf_info *in = &f->info;
  in->target = f->target;
  in->gpu = f->gpu;
  in->transform = f->params.transform;
  in->n_features = f->n_features;
  in->features = (const char *const *)f->features;
  in->params = f->params;
  in->summary = f->summary;
  in->n_trees = f->n_trees;
  in->n_nodes = in->n_leaves = in->n_leaf_values = 0;
  for (size_t t = 0; t < f->n_trees; t++) {
    in->n_nodes += f->trees[t].n_nodes;
    in->n_leaves += f->trees[t].n_leaves;
    in->n_leaf_values += f->trees[t].n_values;
  }
  in->mdi = f->mdi;
  in->perm = f->perm;
  in->n_adapt = f->n_adapt;
  in->adapt = f->adapt;
  in->an_version = f->an_version;
  rf__calib_info(f);
}

const rf_info *rf_get_info(const rf_forest *f) { return &f->info; }

static int set_str(char **dst, const char *s) {
  char *d = rf__strdup(s ? s : "");
  if (!d) return rf__nomem();
  rf__free(*dst);
  *dst = d;
  return 0;
}

int rf_set_gpu(rf_forest *f, const char *gpu) {
  int rc = set_str(&f->gpu, gpu);
  rf__fill_info(f);
  return rc;
}

int rf_set_target(rf_forest *f, const char *target) {
  int rc = set_str(&f->target, target);
  rf__fill_info(f);
  return rc;
}

void rf_set_cv(rf_forest *f, const rf_metrics *m) {
  f->summary.cv_mape = m->mape;
  f->summary.cv_median_ape = m->median_ape;
  f->summary.cv_coverage = m->coverage;
  rf__fill_info(f);
}

void rf_free(rf_forest *f) {
  if (!f) return;
  rf__free_fast(f);
  rf__free(f->target);
  rf__free(f->gpu);
  if (f->features)
    for (size_t j = 0; j < f->n_features; j++) rf__free(f->features[j]);
  rf__free(f->features);
  if (f->trees)
    for (size_t t = 0; t < f->n_trees; t++) rf__tree_free(&f->trees[t]);
  rf__free(f->trees);
  rf__free(f->mdi);
  rf__free(f->perm);
  rf__free(f->range_lo);
  rf__free(f->range_hi);
  rf__free(f->adapt);
  rf__free(f);
}

static int64_t now_or_epoch(int64_t created) {
  if (created) return created;
  const char *e = getenv("SOURCE_DATE_EPOCH");
  if (e && *e) return strtoll(e, NULL, 10);
  return (int64_t)time(NULL);
}

/* Resolve defaults and check ranges; p->max_features becomes a fraction
   (<= 1) or a count (> 1) as given, 0 replaced by the default. */
static int resolve_params(const rf_params *in, size_t n_features, rf_params *p, unsigned *mtry) {
  if (!in || in->size < sizeof(rf_params)) return rf__err("rf_train: bad params (size)");
  *p = *in;
  if (p->n_trees < 1 || p->n_trees > 100000) return rf__err("n_trees %u is not in 1..100000", p->n_trees);
  if (p->min_leaf < 1) return rf__err("min_leaf must be at least 1");
  if (p->n_bins < 2 || p->n_bins > RF_MAX_BINS) return rf__err("n_bins %u is not in 2..256", p->n_bins);
  if (p->leaf_cap < 2 || p->leaf_cap > 65536) return rf__err("leaf_cap %u is not in 2..65536", p->leaf_cap);
  if (p->transform != RF_TRANSFORM_NONE && p->transform != RF_TRANSFORM_LOG)
    return rf__err("unknown target transform %d", p->transform);
  if (p->base_feature >= 0 && ((size_t)p->base_feature >= n_features || p->transform != RF_TRANSFORM_LOG))
    return rf__err("base feature %d: needs the log transform and a feature index below %zu",
                   p->base_feature, n_features);
  if (p->base_feature < -1) return rf__err("base feature %d is invalid", p->base_feature);
  if (!(p->max_features >= 0) || isinf(p->max_features))
    return rf__err("max_features %g is not a fraction in (0,1] or a count", p->max_features);
  if (p->max_features > 1 && p->max_features != floor(p->max_features))
    return rf__err("max_features %g: a count must be a whole number", p->max_features);
  if (p->max_features == 0) p->max_features = p->extra_trees ? 1.0 : 1.0 / 3.0;
  double m = p->max_features <= 1 ? floor(p->max_features * (double)n_features) : p->max_features;
  if (m < 1) m = 1;
  if (m > (double)n_features) m = (double)n_features;
  *mtry = (unsigned)m;
  if (p->bootstrap < 0) p->bootstrap = !p->extra_trees;
  p->bootstrap = !!p->bootstrap;
  p->extra_trees = !!p->extra_trees;
  p->n_threads = 0;
  p->progress = NULL;
  p->progress_ctx = NULL;
  p->perm_importance = !!p->perm_importance;
  if (p->calibrate != RF_CALIBRATE_DEFAULT && p->calibrate != RF_CALIBRATE_OFF &&
      p->calibrate != RF_CALIBRATE_ON)
    return rf__err("unknown calibrate setting %d", p->calibrate);
  return 0;
}

int rf_train(const rf_data *d, const rf_params *pin, rf_forest **out) {
  *out = NULL;
  if (!d || !d->y) return rf__err("training data has no target");
  if (d->n_rows < 2) return rf__err("training data has %zu rows; at least 2 are needed", d->n_rows);
  if (d->n_rows > UINT32_MAX / 2) return rf__err("training data has too many rows (%zu)", d->n_rows);
  if (d->n_cols < 1) return rf__err("training data has no feature columns");
  if (d->n_cols > INT32_MAX) return rf__err("too many feature columns");
  if (rf_data_check_finite(d, "training data")) return -1;
  rf_params prm;
  unsigned mtry = 1;
  if (resolve_params(pin, d->n_cols, &prm, &mtry)) return -1;
  int nt = rf__nthreads(pin->n_threads);
  size_t n = d->n_rows, p = d->n_cols, T = prm.n_trees;

  shared S = {.n = n, .p = p, .x = d->x, .prm = &prm, .mtry = mtry};
  double *y = NULL;
  rf_forest *f = rf__calloc(1, sizeof *f);
  uint64_t **inbag = rf__calloc(T, sizeof *inbag);
  double *mdi_t = rf__calloc(T * p, sizeof(double));
  int rc = -1;
  if (!f || !inbag || !mdi_t) {
    rf__nomem();
    goto out;
  }
  f->base_med = NAN; /* set once the forest is complete: training predicts without it */
  if (rf__transformed_y(&prm, d, &y)) goto out;
  /* Leaf samples are 32-bit floats, and a model must predict finite values
     (rf_load refuses one that does not). */
  for (size_t i = 0; i < n; i++)
    if (fabs(y[i]) > FLT_MAX || !isfinite(rf__untransform(prm.transform, (float)y[i]))) {
      rf__err("row %zu: target %s = %g is out of range (a model keeps its leaves as 32-bit "
              "floats, at most %g in magnitude, and must predict finite values)", i + 1,
              d->target ? d->target : "y", d->y[i], (double)FLT_MAX);
      goto out;
    }
  S.y = y;
  f->params = prm;
  f->n_features = p;
  f->n_trees = T;
  f->target = rf__strdup(d->target ? d->target : "y");
  f->gpu = rf__strdup("");
  f->features = rf__calloc(p, sizeof(char *));
  f->trees = rf__calloc(T, sizeof(rf_tree));
  f->mdi = rf__calloc(p, sizeof(double));
  if (!f->target || !f->gpu || !f->features || !f->trees || !f->mdi) {
    rf__nomem();
    goto out;
  }
  for (size_t j = 0; j < p; j++)
    if (!(f->features[j] = rf__strdup(d->names && d->names[j] ? d->names[j] : "x"))) {
      rf__nomem();
      goto out;
    }
  if (prm.extra_trees ? build_rows(&S, nt) : build_bins(&S, nt)) goto out;

  int failed = 0;
  unsigned done = 0;
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) reduction(| : failed)
  for (size_t t = 0; t < T; t++) {
    inbag[t] = rf__calloc((n + 63) / 64, sizeof(uint64_t));
    if (!inbag[t] || build_tree(&S, t, &f->trees[t], inbag[t], mdi_t + t * p)) {
      failed = 1;
      continue;
    }
    if (pin->progress) {
#pragma omp critical(rf_progress)
      pin->progress(pin->progress_ctx, ++done, (unsigned)T);
    }
  }
  if (failed) {
    rf__nomem();
    goto out;
  }
  /* the prediction layout first: the OOB error walks it */
  if (rf__build_fast(f)) {
    rf__nomem();
    goto out;
  }

  /* MDI, summed in tree order, normalised to 1 */
  double tot = 0;
  for (size_t t = 0; t < T; t++)
    for (size_t j = 0; j < p; j++) f->mdi[j] += mdi_t[t * p + j];
  for (size_t j = 0; j < p; j++) tot += f->mdi[j];
  if (tot > 0)
    for (size_t j = 0; j < p; j++) f->mdi[j] /= tot;

  /* OOB error */
  f->summary.n_rows = n;
  f->summary.oob_mse = f->summary.oob_mape = f->summary.oob_r2 = NAN;
  f->summary.cv_mape = f->summary.cv_median_ape = f->summary.cv_coverage = NAN;
  f->summary.created = now_or_epoch(pin->created);
  if (prm.bootstrap) {
    double *op = rf__mallocn(n, sizeof(double));
    if (!op) {
      rf__nomem();
      goto out;
    }
    if (oob_predict(f, &S, inbag, nt, op)) {
      rf__free(op);
      goto out;
    }
    double se = 0, ape = 0, ymean = 0, ss_res = 0, ss_tot = 0;
    size_t c = 0, ca = 0;
    for (size_t i = 0; i < n; i++)
      if (!isnan(op[i])) { ymean += d->y[i]; c++; }
    if (c) {
      ymean /= (double)c;
      for (size_t i = 0; i < n; i++) {
        if (isnan(op[i])) continue;
        double e = op[i] - y[i];
        se += e * e;
        double pr = rf__untransform(prm.transform, op[i] + (prm.base_feature >= 0
                                                  ? log(d->x[(size_t)prm.base_feature * n + i])
                                                  : 0));
        ss_res += (pr - d->y[i]) * (pr - d->y[i]);
        ss_tot += (d->y[i] - ymean) * (d->y[i] - ymean);
        if (d->y[i] != 0) { ape += fabs(pr - d->y[i]) / fabs(d->y[i]); ca++; }
      }
      f->summary.oob_mse = se / (double)c;
      f->summary.oob_mape = ca ? 100 * ape / (double)ca : NAN;
      f->summary.oob_r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : NAN;
    }
    rf__free(op);
    if (prm.perm_importance && oob_perm_importance(f, &S, inbag, nt)) goto out;
  } else if (prm.perm_importance) {
    /* no OOB rows without bootstrap: permutation importance on the training set */
    f->perm = rf__calloc(p, sizeof(double));
    if (!f->perm) {
      rf__nomem();
      goto out;
    }
    rf__fill_info(f);
    if (rf_permutation_importance(f, d, prm.seed, nt, f->perm)) goto out;
  }
  /* interval calibration (model/rf_calib.c), training ranges (rf_range.c) */
  if (rf__calibrate(f, d, y, &prm, inbag, nt) || rf__ranges(f, d)) goto out;
  if (prm.base_feature >= 0 && prm.transform == RF_TRANSFORM_LOG) {
    /* what a row beyond the training ranges shrinks toward (rf_range.c);
       y is not needed after this */
    qsort(y, n, sizeof *y, rf__cmp_double);
    f->base_med = n % 2 ? y[n / 2] : 0.5 * (y[n / 2 - 1] + y[n / 2]);
  }
  /* the estimate an analytic base was computed with (rf_base_stale) */
  if (prm.base_feature >= 0 && !strncmp(f->features[prm.base_feature], "an.", 3))
    f->an_version = AN_VERSION;
  rf__fill_info(f);
  *out = f;
  f = NULL;
  rc = 0;
out:
  if (inbag)
    for (size_t t = 0; t < T; t++) rf__free(inbag[t]);
  rf__free(inbag);
  rf__free(mdi_t);
  rf__free(y);
  free_shared(&S);
  rf_free(f);
  return rc;
}
