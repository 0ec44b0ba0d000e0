/*
 * rf_calib.c -- prediction intervals: the quantile-regression-forest
 * quantiles (Meinshausen 2006) and their calibration by conformalized
 * quantile regression (CQR, Romano, Patterson & Candes 2019).
 *
 * Why calibrate: a forest's leaf samples are training targets, fitted by
 * the very trees that hold them.  With small leaves and no bootstrap
 * (extra trees, min_leaf 1) every leaf holds the one row that made it, the
 * leaf-sample spread around a new row is the spread of its nearest
 * training neighbours, and the interval ignores the model's own error:
 * 90 % intervals covered 33-37 % of held-out GPU Mangrove launches.
 *
 * CQR on held-out rows of the training data.  For every row r held out --
 * out of bag (bootstrap forests: only the trees whose bag missed r vote,
 * no refit) or in the held-out fold of an inner RF_CALIB_FOLDS-fold split
 * (forests without bootstrap: one forest of at most RF_CALIB_TREES trees
 * per fold) -- and every coverage c of a fixed grid, the QRF interval at c
 * is computed in the transformed space exactly as rf_predict_interval does
 * and stretched to hold the point prediction m (the voting trees' mean):
 * [lo, hi] = [min(qlo, m), max(qhi, m)].  The conformity score is
 *
 *     s = max(lo - y, y - hi)        (> 0 outside, <= 0 inside)
 *
 * is recorded.  q(c) is the ceil((m+1) c)-th smallest of the m scores (the
 * largest when that rank exceeds m: split conformal's guarantee would need
 * an infinite bound there; the grid's 0.99 with fewer than 99 rows).  A
 * prediction at coverage c widens that band to [lo - q, hi + q]; q < 0
 * narrows an over-wide one (and the result is stretched again to hold m,
 * only ever adding coverage).  Between grid points q is linear in c; below
 * 0.5 and above 0.99 it is the end point's value.  Why stretch: with
 * single-sample leaves the mean of skewed neighbour targets often lies
 * outside their middle half, and a band that excludes its own estimate
 * is useless to a scheduler; stretching before scoring keeps the table
 * honest for the band actually returned (stretching after it over-covered
 * 50 % bands: 0.56 on the dedispersion rows).
 * The guarantee is CQR's when the held-out rows are exchangeable with new
 * rows (k-fold CV); the table is stored in the model (docs/formats.md) and
 * applied by rf_predict_interval.
 *
 * Cost: OOB scoring walks each sampled row through its ~37 % OOB trees
 * once and sorts its leaf samples once for all grid points: 0.02 s on one
 * thread for the 11,130 dedispersion rows, 3-6 % of a 100-tree forest's
 * training there, less on larger data (the rows scored are capped).  The
 * k-fold path trains RF_CALIB_FOLDS forests of at most RF_CALIB_TREES
 * trees on 4/5 of the rows: 2-3x the training time of 100 extra trees.
 *
 * Determinism: rows are scored in parallel, each into its own slot; the
 * inner forests are seeded from (seed, fold); the scores are then sorted,
 * so the table is the same for any thread count.
 */
#include "model/rf_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The coverage grid of every table this build makes. */
static const double grid[] = {0.5, 0.68, 0.8, 0.9, 0.95, 0.99};
#define NG (sizeof grid / sizeof grid[0])
/* Fewer scored rows than this (tiny training sets; rows drawn into every
   bag have no OOB vote and are not scored): the model stays uncalibrated. */
#define MIN_ROWS 10

/* -------------------------------------------------------------- quantiles -- */

/*
 * All trees walked together, one level a round, as rf__raw_mean does: the
 * loads of one round are independent, so the memory system overlaps them
 * (a tree-by-tree walk waits on every node: 49 us against 12 us a row for
 * 100 trees on the dedispersion rows, measured in one run).
 */
#define WALK_BATCH 256
void rf__walk(const rf_forest *f, const double *row, const rf_node **leaf) {
  size_t T = f->n_trees;
  for (size_t t0 = 0; t0 < T; t0 += WALK_BATCH) {
    size_t nb = T - t0 < WALK_BATCH ? T - t0 : WALK_BATCH, na = 0;
    const rf_node **cur = leaf + t0;
    const rf_tree *tr = f->trees + t0;
    uint16_t act[WALK_BATCH];
    for (size_t t = 0; t < nb; t++)
      if (cur[t]) act[na++] = (uint16_t)t;
    while (na) {
      size_t k = 0;
      for (size_t a = 0; a < na; a++) {
        unsigned t = act[a];
        const rf_node *nd = cur[t];
        if (nd->feature < 0) continue;
        const rf_node *nx = tr[t].nodes + nd->left + (row[nd->feature] > nd->v);
        __builtin_prefetch(nx);
        cur[t] = nx;
        act[k++] = (uint16_t)t;
      }
      na = k;
    }
  }
}

/*
 * Sorting the weighted leaf samples.  Each sample is packed into one u64,
 * an order-preserving key of its value above the bits of its weight, and
 * sorted by a stable LSD radix sort on the key (a pass is skipped when
 * every key has the same digit: log-time targets share their top byte),
 * insertion sort for short lists.  qsort with a comparison callback cost
 * 100 us a row for 100 trees of 7-sample leaves (the dedispersion rows)
 * and made OOB calibration double the training time; a heap merge of the
 * already sorted leaves still cost 38 us (pointer-chasing sifts).  Ties
 * keep tree order with either sort, so the order is a pure function of
 * the leaves.
 */
static inline uint64_t pack(float v, float w) {
  uint32_t u, wb;
  memcpy(&u, &v, 4);
  memcpy(&wb, &w, 4);
  u = u >> 31 ? ~u : u | 0x80000000u;
  return (uint64_t)u << 32 | wb;
}

static inline float unpack_v(uint64_t x) {
  uint32_t u = (uint32_t)(x >> 32);
  u = u >> 31 ? u & 0x7fffffffu : ~u;
  float v;
  memcpy(&v, &u, 4);
  return v;
}

static inline float unpack_w(uint64_t x) {
  uint32_t u = (uint32_t)x;
  float w;
  memcpy(&w, &u, 4);
  return w;
}

/* Stable sort of a[0..m) by the upper 32 bits; b is scratch of m.  Returns
   the array that holds the result (a or b). */
static uint64_t *sort_keys(uint64_t *a, uint64_t *b, size_t m) {
  if (m <= 48) {
    for (size_t i = 1; i < m; i++) {
      uint64_t x = a[i];
      size_t j = i;
      while (j > 0 && a[j - 1] >> 32 > x >> 32) {
        a[j] = a[j - 1];
        j--;
      }
      a[j] = x;
    }
    return a;
  }
  for (unsigned sh = 32; sh < 64; sh += 8) {
    size_t cnt[256] = {0};
    for (size_t i = 0; i < m; i++) cnt[a[i] >> sh & 255]++;
    if (cnt[a[0] >> sh & 255] == m) continue;
    size_t pos = 0;
    for (unsigned d = 0; d < 256; d++) {
      size_t c = cnt[d];
      cnt[d] = pos;
      pos += c;
    }
    for (size_t i = 0; i < m; i++) b[cnt[a[i] >> sh & 255]++] = a[i];
    uint64_t *t = a;
    a = b;
    b = t;
  }
  return a;
}

int rf__leaf_quantiles(const rf_forest *f, const rf_node *const *leaf, const double *probs,
                       size_t np, double *out, void **scratch, size_t *cap) {
  size_t T = f->n_trees, used = 0, total = 0;
  for (size_t t = 0; t < T; t++) {
    if (!leaf[t]) continue;
    uint32_t k = leaf[t]->left;
    used++;
    total += f->trees[t].leaf_off[k + 1] - f->trees[t].leaf_off[k];
  }
  void *mine = NULL;
  size_t mycap = 0;
  if (!scratch) {
    scratch = &mine;
    cap = &mycap;
  }
  if (2 * total > *cap || !*scratch) {
    size_t want = 2 * total > *cap ? 2 * total : *cap;
    uint64_t *nb = rf__realloc(*scratch, (want ? want : 1) * sizeof(uint64_t));
    if (!nb) {
      rf__free(mine);
      return rf__nomem();
    }
    *scratch = nb;
    *cap = want;
  }
  uint64_t *buf = *scratch;
  size_t m = 0;
  for (size_t t = 0; t < T; t++) {
    if (!leaf[t]) continue;
    const rf_tree *tr = &f->trees[t];
    uint32_t k = leaf[t]->left, a = tr->leaf_off[k], e = tr->leaf_off[k + 1];
    float w = 1.0f / (float)(e - a);
    for (uint32_t q = a; q < e; q++) buf[m++] = pack(tr->values[q], w);
  }
  const uint64_t *sorted = sort_keys(buf, buf + m, m);
  double cum = 0, last = m ? unpack_v(sorted[m - 1]) : NAN;
  size_t k = 0;
  for (size_t q = 0; q < m && k < np; q++) {
    cum += unpack_w(sorted[q]);
    while (k < np && cum >= probs[k] * (double)used) out[k++] = unpack_v(sorted[q]);
  }
  while (k < np) out[k++] = last;
  rf__free(mine);
  return 0;
}

double rf__calib_q(const rf_calib *c, double coverage) {
  if (c->n == 0) return 0;
  if (coverage <= c->cov[0]) return c->q[0];
  if (coverage >= c->cov[c->n - 1]) return c->q[c->n - 1];
  unsigned k = 1;
  while (coverage > c->cov[k]) k++;
  double u = (coverage - c->cov[k - 1]) / (c->cov[k] - c->cov[k - 1]);
  return c->q[k - 1] + u * (c->q[k] - c->q[k - 1]);
}

/* ---------------------------------------------------------------- scoring -- */

/* The 2*NG quantile levels, increasing: lows of the widest first. */
static void grid_probs(double *probs) {
  for (size_t k = 0; k < NG; k++) {
    double alpha = (1 - grid[k]) / 2; /* as rf_predict_interval computes it */
    probs[NG - 1 - k] = alpha;
    probs[NG + k] = 1 - alpha;
  }
}

/* Per-thread scratch for scoring rows. */
typedef struct scorer {
  double *row;             /* p features */
  const rf_node **leaf;    /* one per tree of the scoring forest */
  void *buf;               /* rf__leaf_quantiles scratch */
  size_t cap;
} scorer;

static int scorer_init(scorer *s, size_t p, size_t T) {
  memset(s, 0, sizeof *s);
  s->row = rf__mallocn(p ? p : 1, sizeof(double));
  s->leaf = rf__mallocn(T ? T : 1, sizeof *s->leaf);
  return s->row && s->leaf ? 0 : -1;
}

static void scorer_free(scorer *s) {
  rf__free(s->row);
  rf__free(s->leaf);
  rf__free(s->buf);
}

/* Scores of row i (leaves in s->leaf) into sc[k * n + i]: the band is the
   QRF interval stretched to hold the voting trees' mean, as
   rf_predict_interval forms it. */
static int score_row(const rf_forest *g, scorer *s, const double *probs, double y, size_t n,
                     size_t i, double *sc) {
  double qv[2 * NG], m = 0;
  size_t used = 0;
  for (size_t t = 0; t < g->n_trees; t++)
    if (s->leaf[t]) {
      m += s->leaf[t]->v;
      used++;
    }
  m /= (double)used;
  if (rf__leaf_quantiles(g, s->leaf, probs, 2 * NG, qv, &s->buf, &s->cap)) return -1;
  for (size_t k = 0; k < NG; k++) {
    double lo = qv[NG - 1 - k] < m ? qv[NG - 1 - k] : m, hi = qv[NG + k] > m ? qv[NG + k] : m;
    sc[k * n + i] = lo - y > y - hi ? lo - y : y - hi;
  }
  return 0;
}

static void get_row(const rf_data *d, size_t i, double *row) {
  for (size_t j = 0; j < d->n_cols; j++) row[j] = d->x[j * d->n_rows + i];
}

/*
 * Bootstrap forests: rows through the trees that did not draw them.  At
 * most RF_CALIB_ROWS rows are scored, a seeded draw without replacement
 * when there are more: the table's quantiles need a few thousand scores
 * (the binomial error of a coverage over 2,000 rows is 0.007 at 0.9), and
 * scoring every row cost 18-32 % of a random forest's training time on the
 * 11,130 dedispersion rows.
 */
static int score_oob(const rf_forest *f, const rf_data *d, const double *ty,
                     uint64_t *const *inbag, int nt, const double *probs, double *sc,
                     unsigned char *ok) {
  size_t n = d->n_rows, T = f->n_trees, m = n < RF_CALIB_ROWS ? n : RF_CALIB_ROWS;
  uint32_t *rows = rf__mallocn(n, sizeof(uint32_t));
  if (!rows) return rf__nomem();
  for (size_t i = 0; i < n; i++) rows[i] = (uint32_t)i;
  if (m < n) {
    rf_rng rng;
    rf__rng_seed(&rng, f->params.seed, 0x43414c52ULL); /* "CALR" */
    for (size_t i = 0; i < m; i++) {
      size_t k = i + (size_t)rf__rng_below(&rng, n - i);
      uint32_t t = rows[i];
      rows[i] = rows[k];
      rows[k] = t;
    }
    /* back to row order: rows are then read in memory order */
    unsigned char *pick = rf__calloc(n, 1);
    if (!pick) {
      rf__free(rows);
      return rf__nomem();
    }
    for (size_t i = 0; i < m; i++) pick[rows[i]] = 1;
    for (size_t i = 0, r = 0; i < n; i++)
      if (pick[i]) rows[r++] = (uint32_t)i;
    rf__free(pick);
  }
  int failed = 0;
#pragma omp parallel num_threads(nt) reduction(| : failed)
  {
    scorer s;
    int mine = scorer_init(&s, d->n_cols, T);
    if (mine) failed = 1;
#pragma omp for schedule(dynamic, 16)
    for (size_t r = 0; r < m; r++) {
      if (mine) continue;
      size_t i = rows[r];
      get_row(d, i, s.row);
      size_t used = 0;
      for (size_t t = 0; t < T; t++) {
        int in = (int)(inbag[t][i >> 6] >> (i & 63) & 1);
        s.leaf[t] = in ? NULL : f->trees[t].nodes;
        used += !in;
      }
      if (!used) continue;
      rf__walk(f, s.row, s.leaf);
      if (score_row(f, &s, probs, ty[i], n, i, sc)) {
        mine = failed = 1;
        continue;
      }
      ok[i] = 1;
    }
    scorer_free(&s);
  }
  rf__free(rows);
  return failed ? rf__nomem() : 0;
}

/* Forests without bootstrap: an inner k-fold on the training rows. */
static int score_kfold(const rf_data *d, const double *ty, const rf_params *p, int nt,
                       const double *probs, double *sc, unsigned char *ok) {
  size_t n = d->n_rows, K = RF_CALIB_FOLDS;
  unsigned *fold = rf__mallocn(n, sizeof(unsigned));
  size_t *perm = rf__mallocn(n, sizeof(size_t));
  rf_data dtr;
  memset(&dtr, 0, sizeof dtr);
  rf_forest *g = NULL;
  int rc = -1;
  if (!fold || !perm) {
    rf__nomem();
    goto out;
  }
  for (size_t i = 0; i < n; i++) perm[i] = i;
  rf_rng rng;
  rf__rng_seed(&rng, p->seed, 0x43414c42ULL); /* "CALB" */
  for (size_t i = n - 1; i > 0; i--) {
    size_t k = (size_t)rf__rng_below(&rng, i + 1), t = perm[i];
    perm[i] = perm[k];
    perm[k] = t;
  }
  for (size_t i = 0; i < n; i++) fold[perm[i]] = (unsigned)(i % K);
  for (unsigned k = 0; k < K; k++) {
    size_t ntr = 0;
    for (size_t i = 0; i < n; i++) ntr += fold[i] != k;
    if (rf_data_alloc(&dtr, ntr, d->n_cols, 1)) goto out;
    for (size_t j = 0; j < d->n_cols; j++) {
      const double *src = d->x + j * n;
      double *dst = dtr.x + j * ntr;
      for (size_t i = 0, r = 0; i < n; i++)
        if (fold[i] != k) dst[r++] = src[i];
    }
    for (size_t i = 0, r = 0; i < n; i++)
      if (fold[i] != k) dtr.y[r++] = d->y[i];
    rf_params q = *p;
    q.calibrate = RF_CALIBRATE_OFF;
    q.n_trees = p->n_trees < RF_CALIB_TREES ? p->n_trees : RF_CALIB_TREES;
    q.seed = p->seed ^ (0x9e3779b97f4a7c15ULL * (k + 1));
    q.n_threads = nt;
    q.perm_importance = 0;
    q.progress = NULL;
    q.progress_ctx = NULL;
    q.created = 1;
    if (rf_train(&dtr, &q, &g)) goto out;
    rf_data_free(&dtr);
    int failed = 0;
#pragma omp parallel num_threads(nt) reduction(| : failed)
    {
      scorer s;
      int mine = scorer_init(&s, d->n_cols, g->n_trees);
      if (mine) failed = 1;
#pragma omp for schedule(dynamic, 64)
      for (size_t i = 0; i < n; i++) {
        if (mine || fold[i] != k) continue;
        get_row(d, i, s.row);
        for (size_t t = 0; t < g->n_trees; t++) s.leaf[t] = g->trees[t].nodes;
        rf__walk(g, s.row, s.leaf);
        if (score_row(g, &s, probs, ty[i], n, i, sc)) {
          mine = failed = 1;
          continue;
        }
        ok[i] = 1;
      }
      scorer_free(&s);
    }
    rf_free(g);
    g = NULL;
    if (failed) {
      rf__nomem();
      goto out;
    }
  }
  rc = 0;
out:
  rf_free(g);
  rf_data_free(&dtr);
  rf__free(fold);
  rf__free(perm);
  return rc;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* ------------------------------------------------------------ calibration -- */

int rf__calibrate(rf_forest *f, const rf_data *d, const double *ty, const rf_params *p,
                  uint64_t *const *inbag, int nt) {
  memset(&f->cal, 0, sizeof f->cal);
  int mode = p->calibrate;
  int want = mode == RF_CALIBRATE_ON || (mode == RF_CALIBRATE_DEFAULT && p->bootstrap);
  f->params.calibrate = RF_CALIBRATE_OFF;
  if (!want) return 0;
  size_t n = d->n_rows;
  if (!p->bootstrap && n < MIN_ROWS) return 0;
  double probs[2 * NG];
  grid_probs(probs);
  double *sc = rf__mallocn(n, NG * sizeof(double));
  unsigned char *ok = rf__calloc(n, 1);
  int rc = -1;
  if (!sc || !ok) {
    rf__nomem();
    goto out;
  }
  if (p->bootstrap ? score_oob(f, d, ty, inbag, nt, probs, sc, ok)
                   : score_kfold(d, ty, p, nt, probs, sc, ok))
    goto out;
  size_t m = 0;
  for (size_t i = 0; i < n; i++) m += ok[i];
  if (m >= MIN_ROWS) {
    rf_calib *c = &f->cal;
    for (size_t k = 0; k < NG; k++) {
      double *s = sc + k * n; /* compact the scored rows to the front, in row order */
      size_t r = 0;
      for (size_t i = 0; i < n; i++)
        if (ok[i]) s[r++] = s[i];
      qsort(s, m, sizeof *s, cmp_d);
      double want_rank = ceil((double)(m + 1) * grid[k] - 1e-9);
      size_t rank = want_rank > (double)m ? m : (size_t)want_rank;
      c->cov[k] = grid[k];
      c->q[k] = s[rank - 1];
    }
    c->n = (unsigned)NG;
    c->method = p->bootstrap ? RF_CALIB_OOB : RF_CALIB_KFOLD;
    c->folds = p->bootstrap ? 0 : RF_CALIB_FOLDS;
    c->rows = m;
    f->params.calibrate = RF_CALIBRATE_ON;
  }
  rc = 0;
out:
  rf__free(sc);
  rf__free(ok);
  return rc;
}

void rf__calib_info(rf_forest *f) {
  rf_info *in = &f->info;
  in->cal_method = f->cal.n ? f->cal.method : RF_CALIB_NONE;
  in->cal_folds = f->cal.folds;
  in->cal_rows = f->cal.rows;
  in->n_cal = f->cal.n;
  in->cal_coverage = f->cal.cov;
  in->cal_q = f->cal.q;
}
