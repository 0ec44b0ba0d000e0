/*
 * rf_eval.c -- accuracy metrics and cross-validation.
 *
 * Metrics are the ones the GPU-prediction literature reports (Braun et al.
 * report MAPE and its median per GPU) plus R^2, Spearman's rank correlation
 * (does the model order configurations right: what an autotuner needs) and
 * the empirical coverage of the prediction intervals.
 *
 * Cross-validation: k-fold assigns rows to folds after a shuffle seeded with
 * params.seed; leave-one-group-out holds out one group (an application) per
 * fold, the honest test for unseen programs.  Every row gets exactly one
 * out-of-fold prediction; metrics are computed over all of them at once, per
 * fold and per group.  The optional grid search (rf_search) runs only on
 * the training rows of a fold (nested) and chooses by the median APE of an
 * inner CV -- the figure the user reads -- over random forests and extra
 * trees, max_features {1, 2/3, 1/3}, min_leaf {1, 3, 8}, with and without
 * the base feature; the inner folds leave groups out when the outer ones
 * do.
 */
#include "model/rf_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- metrics -- */

int rf__cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

typedef struct ri { double v; size_t i; } ri;

static int cmp_ri(const void *a, const void *b) {
  const ri *x = a, *y = b;
  if (x->v != y->v) return (x->v > y->v) - (x->v < y->v);
  return (x->i > y->i) - (x->i < y->i);
}

/* Average ranks (ties share the mean rank) into rank[]. */
static int ranks(const double *v, size_t n, double *rank) {
  ri *a = rf__mallocn(n, sizeof *a);
  if (!a) return -1;
  for (size_t i = 0; i < n; i++) a[i] = (ri){v[i], i};
  qsort(a, n, sizeof *a, cmp_ri);
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j + 1 < n && a[j + 1].v == a[i].v) j++;
    double r = (double)(i + j) / 2 + 1;
    for (size_t k = i; k <= j; k++) rank[a[k].i] = r;
    i = j + 1;
  }
  rf__free(a);
  return 0;
}

static double pearson(const double *a, const double *b, size_t n) {
  double ma = 0, mb = 0;
  for (size_t i = 0; i < n; i++) { ma += a[i]; mb += b[i]; }
  ma /= (double)n;
  mb /= (double)n;
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < n; i++) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i] - mb) * (b[i] - mb);
  }
  return saa > 0 && sbb > 0 ? sab / sqrt(saa * sbb) : NAN;
}

/*
 * Kendall's tau-b of (a, b) in O(n log n) (Knight 1966): sort the pairs by
 * a then b, count the pairs tied in a (n1) and in both (n3), then merge-sort
 * by b counting the exchanges, which are the discordant pairs, and the
 * pairs tied in b (n2).  tau_b = (n0 - n1 - n2 + n3 - 2 swaps) /
 * sqrt((n0 - n1) (n0 - n2)), n0 = n(n-1)/2.  NaN when either order is
 * constant.  An O(n^2) count took 0.3 s for 11,130 rows.
 */
typedef struct kpair { double a, b; } kpair;

static int cmp_kpair(const void *x, const void *y) {
  const kpair *p = x, *q = y;
  if (p->a != q->a) return (p->a > q->a) - (p->a < q->a);
  return (p->b > q->b) - (p->b < q->b);
}

/* Merge sort of v[0..n) by b, into order; returns the exchanges. */
static double merge_swaps(kpair *v, kpair *tmp, size_t n) {
  if (n < 2) return 0;
  size_t h = n / 2;
  double s = merge_swaps(v, tmp, h) + merge_swaps(v + h, tmp, n - h);
  size_t i = 0, j = h, k = 0;
  while (i < h && j < n) {
    if (v[j].b < v[i].b) {
      s += (double)(h - i); /* v[j] jumps every remaining left element */
      tmp[k++] = v[j++];
    } else {
      tmp[k++] = v[i++];
    }
  }
  while (i < h) tmp[k++] = v[i++];
  while (j < n) tmp[k++] = v[j++];
  memcpy(v, tmp, n * sizeof *v);
  return s;
}

/* Pairs within runs of equal key: sum of t(t-1)/2 over runs. */
static double tied_pairs(const kpair *v, size_t n, int by_b, int both) {
  double t = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && (by_b ? v[j].b == v[i].b : v[j].a == v[i].a) &&
           (!both || v[j].b == v[i].b))
      j++;
    double c = (double)(j - i);
    t += c * (c - 1) / 2;
    i = j;
  }
  return t;
}

static int kendall_tau_b(const double *a, const double *b, size_t n, double *tau) {
  *tau = NAN;
  if (n < 2) return 0;
  kpair *v = rf__mallocn(n, sizeof *v), *tmp = rf__mallocn(n, sizeof *tmp);
  if (!v || !tmp) {
    rf__free(v);
    rf__free(tmp);
    return rf__nomem();
  }
  for (size_t i = 0; i < n; i++) v[i] = (kpair){a[i], b[i]};
  qsort(v, n, sizeof *v, cmp_kpair);
  double n0 = (double)n * (double)(n - 1) / 2;
  double n1 = tied_pairs(v, n, 0, 0), n3 = tied_pairs(v, n, 0, 1);
  double swaps = merge_swaps(v, tmp, n);
  double n2 = tied_pairs(v, n, 1, 0);
  double den = sqrt((n0 - n1) * (n0 - n2));
  if (den > 0) *tau = (n0 - n1 - n2 + n3 - 2 * swaps) / den;
  rf__free(v);
  rf__free(tmp);
  return 0;
}

/* Order of rows by prediction, ties by row index (cmp_ri). */
static int regrets(const double *y, const double *pred, size_t n, double *top1, double *top5) {
  *top1 = *top5 = NAN;
  double best = INFINITY;
  for (size_t i = 0; i < n; i++) {
    if (!(y[i] > 0) || !isfinite(pred[i])) return 0;
    if (y[i] < best) best = y[i];
  }
  if (!n) return 0;
  ri *a = rf__mallocn(n, sizeof *a);
  if (!a) return rf__nomem();
  for (size_t i = 0; i < n; i++) a[i] = (ri){pred[i], i};
  qsort(a, n, sizeof *a, cmp_ri);
  double s = 0;
  size_t t = 0;
  while (t < n && a[t].v == a[0].v) s += y[a[t++].i];
  *top1 = s / (double)t / best;
  double b5 = INFINITY;
  for (size_t k = 0; k < n && k < 5; k++)
    if (y[a[k].i] < b5) b5 = y[a[k].i];
  *top5 = b5 / best;
  rf__free(a);
  return 0;
}

int rf_metrics_compute(const double *y, const double *pred, const double *lo, const double *hi,
                       size_t n, rf_metrics *m) {
  m->n = n;
  m->mape = m->median_ape = m->rmse_log = m->r2 = m->spearman = m->coverage = NAN;
  m->kendall = m->top1_regret = m->top5_regret = NAN;
  if (regrets(y, pred, n, &m->top1_regret, &m->top5_regret) ||
      kendall_tau_b(y, pred, n, &m->kendall))
    return -1;
  if (n == 0) return 0;
  double *ape = rf__mallocn(n, sizeof(double));
  double *ra = rf__mallocn(n, sizeof(double));
  double *rb = rf__mallocn(n, sizeof(double));
  if (!ape || !ra || !rb) {
    rf__free(ape); rf__free(ra); rf__free(rb);
    return rf__nomem();
  }
  size_t na = 0, nl = 0, nc = 0;
  double sl = 0, ym = 0, ss_res = 0, ss_tot = 0, sa = 0;
  for (size_t i = 0; i < n; i++) {
    ym += y[i];
    if (y[i] != 0) { ape[na] = 100 * fabs(pred[i] - y[i]) / fabs(y[i]); sa += ape[na++]; }
    if (y[i] > 0 && pred[i] > 0) { double d = log(pred[i]) - log(y[i]); sl += d * d; nl++; }
    if (lo && hi && y[i] >= lo[i] && y[i] <= hi[i]) nc++;
  }
  ym /= (double)n;
  for (size_t i = 0; i < n; i++) {
    ss_res += (pred[i] - y[i]) * (pred[i] - y[i]);
    ss_tot += (y[i] - ym) * (y[i] - ym);
  }
  if (na) {
    m->mape = sa / (double)na;
    qsort(ape, na, sizeof(double), rf__cmp_double);
    m->median_ape = na % 2 ? ape[na / 2] : (ape[na / 2 - 1] + ape[na / 2]) / 2;
  }
  if (nl) m->rmse_log = sqrt(sl / (double)nl);
  if (ss_tot > 0) m->r2 = 1 - ss_res / ss_tot;
  if (lo && hi) m->coverage = (double)nc / (double)n;
  if (n >= 2) {
    if (ranks(y, n, ra) || ranks(pred, n, rb)) {
      rf__free(ape); rf__free(ra); rf__free(rb);
      return rf__nomem();
    }
    m->spearman = pearson(ra, rb, n);
  }
  rf__free(ape);
  rf__free(ra);
  rf__free(rb);
  return 0;
}

/* ------------------------------------------------------------------- CV -- */

int rf__subset(const rf_data *d, const size_t *sel, size_t k, rf_data *out) {
  if (rf_data_alloc(out, k, d->n_cols, d->y != NULL)) return -1;
  for (size_t j = 0; j < d->n_cols; j++) {
    const double *src = d->x + j * d->n_rows;
    double *dst = out->x + j * k;
    for (size_t i = 0; i < k; i++) dst[i] = src[sel[i]];
    if (!(out->names[j] = rf__strdup(d->names[j]))) goto nomem;
  }
  if (d->y)
    for (size_t i = 0; i < k; i++) out->y[i] = d->y[sel[i]];
  if (d->target && !(out->target = rf__strdup(d->target))) goto nomem;
  if (d->groups) {
    if (!(out->groups = rf__calloc(k, sizeof(char *)))) goto nomem;
    for (size_t i = 0; i < k; i++)
      if (d->groups[sel[i]] && !(out->groups[i] = rf__strdup(d->groups[sel[i]]))) goto nomem;
  }
  return 0;
nomem:
  rf_data_free(out);
  return rf__nomem();
}

void rf__shuffled_folds(size_t n, unsigned K, uint64_t seed, uint64_t stream, size_t *perm,
                        size_t *fold) {
  for (size_t i = 0; i < n; i++) perm[i] = i;
  rf_rng rng;
  rf__rng_seed(&rng, seed, stream);
  for (size_t i = n - 1; i > 0; i--) {
    size_t k = (size_t)rf__rng_below(&rng, i + 1), t = perm[i];
    perm[i] = perm[k];
    perm[k] = t;
  }
  for (size_t i = 0; i < n; i++) fold[perm[i]] = i % K;
}

/* Median APE (%) of the out-of-fold predictions of an inner CV of params p
   on d with fold[i] in 0..K-1: the error `kcast cv` reports, in the
   target's own units. */
static int inner_cv_ape(const rf_data *d, const rf_params *p, const size_t *fold, unsigned K,
                        double *ape) {
  size_t n = d->n_rows;
  size_t *tr = rf__mallocn(n, sizeof(size_t));
  double *row = rf__mallocn(d->n_cols, sizeof(double)), *e = rf__mallocn(n, sizeof(double));
  int rc = -1;
  size_t ne = 0;
  if (!tr || !row || !e) { rf__nomem(); goto out; }
  for (unsigned fo = 0; fo < K; fo++) {
    size_t ntr = 0;
    for (size_t i = 0; i < n; i++)
      if (fold[i] != fo) tr[ntr++] = i;
    if (ntr < 2 || ntr == n) continue;
    rf_data dtr;
    rf_forest *f = NULL;
    if (rf__subset(d, tr, ntr, &dtr)) goto out;
    int r = rf_train(&dtr, p, &f);
    rf_data_free(&dtr);
    if (r) goto out;
    for (size_t i = 0; i < n; i++) {
      if (fold[i] != fo || d->y[i] == 0) continue;
      for (size_t j = 0; j < d->n_cols; j++) row[j] = d->x[j * n + i];
      e[ne++] = fabs(rf_predict(f, row) - d->y[i]) / fabs(d->y[i]);
    }
    rf_free(f);
  }
  if (!ne) { *ape = INFINITY; rc = 0; goto out; }
  qsort(e, ne, sizeof *e, rf__cmp_double);
  *ape = 100 * (ne % 2 ? e[ne / 2] : (e[ne / 2 - 1] + e[ne / 2]) / 2);
  rc = 0;
out:
  rf__free(tr);
  rf__free(row);
  rf__free(e);
  return rc;
}

/* Inner folds for the search: by group when the rows hold at least 3
   groups and the outer CV leaves groups out (selection for unseen groups),
   else a seeded shuffle; returns K. */
static unsigned search_folds(const rf_data *d, int by_group, uint64_t seed, size_t *fold,
                             size_t *scratch) {
  size_t n = d->n_rows;
  if (by_group && d->groups) {
    char **names = rf__mallocn(n, sizeof(char *));
    size_t *gid = rf__mallocn(n, sizeof(size_t)), ng = 0;
    unsigned K = 0;
    if (names && gid) {
      rf__group_index(d, gid, names, &ng);
      if (ng >= 3) {
        K = ng < RF_SEARCH_FOLDS ? (unsigned)ng : RF_SEARCH_FOLDS;
        size_t *gf = rf__mallocn(ng, sizeof(size_t)), *perm = rf__mallocn(ng, sizeof(size_t));
        if (gf && perm) {
          rf__shuffled_folds(ng, K, seed, 0x53524347ULL /* "SRCG" */, perm, gf);
          for (size_t i = 0; i < n; i++) fold[i] = gf[gid[i]];
        } else {
          K = 0;
        }
        rf__free(gf);
        rf__free(perm);
      }
    }
    rf__free(names);
    rf__free(gid);
    if (K) return K;
  }
  unsigned K = n < RF_SEARCH_FOLDS ? (unsigned)n : RF_SEARCH_FOLDS;
  rf__shuffled_folds(n, K, seed, 0x53524348ULL /* "SRCH" */, scratch, fold);
  return K;
}

int rf_search(const rf_data *d, const rf_params *p, int by_group, rf_params *best,
              double *best_ape) {
  static const double mfs[] = {1.0, 2.0 / 3.0, 1.0 / 3.0};
  static const unsigned leaves[] = {1, 3, 8};
  size_t n = d->n_rows;
  size_t *fold = rf__mallocn(n, sizeof(size_t)), *scratch = rf__mallocn(n, sizeof(size_t));
  if (!fold || !scratch) {
    rf__free(fold);
    rf__free(scratch);
    return rf__nomem();
  }
  unsigned K = search_folds(d, by_group, p->seed, fold, scratch);
  rf__free(scratch);
  double best_err = INFINITY, given_err = INFINITY;
  *best = *p;
  int rc = 0;
  /* the given configuration first */
  for (int c = -1; c < 2 * 3 * 3 * 2 && !rc; c++) {
    rf_params q = *p;
    if (c >= 0) {
      int et = c / 18 ? 0 : 1, m = c / 6 % 3, l = c / 2 % 3, nb = c % 2;
      if (nb && p->base_feature < 0) continue; /* no base to drop */
      q.extra_trees = et;
      q.bootstrap = -1;
      q.max_features = mfs[m];
      q.min_leaf = leaves[l];
      if (nb) q.base_feature = -1;
    }
    q.n_trees = p->n_trees < RF_SEARCH_TREES ? p->n_trees : RF_SEARCH_TREES;
    q.perm_importance = 0;
    q.progress = NULL;
    q.calibrate = RF_CALIBRATE_OFF; /* candidates are scored on errors only */
    double err;
    if ((rc = inner_cv_ape(d, &q, fold, K, &err))) break;
    /* another candidate must beat the given one by RF_SEARCH_MARGIN: an
       inner CV of a few hundred rows (or a few groups) is noisy, and a
       noise-driven switch away from good defaults costs more than it wins
       (docs/accuracy.md) */
    if (c < 0) given_err = err;
    else if (!(err < best_err && err < given_err * (1 - RF_SEARCH_MARGIN))) continue;
    {
      best_err = err;
      *best = q;
      best->n_trees = p->n_trees;
      best->calibrate = p->calibrate;
      best->perm_importance = p->perm_importance;
      best->progress = p->progress;
    }
  }
  rf__free(fold);
  if (!rc && best_ape) *best_ape = best_err;
  return rc;
}

static int cmp_str(const void *a, const void *b) {
  const char *x = *(char *const *)a, *y = *(char *const *)b;
  return strcmp(x ? x : "", y ? y : "");
}

void rf__group_index(const rf_data *d, size_t *gidx, char **names, size_t *ng) {
  size_t n = d->n_rows, k = 0;
  memcpy(names, d->groups, n * sizeof(char *));
  qsort(names, n, sizeof(char *), cmp_str);
  for (size_t i = 0; i < n; i++)
    if (k == 0 || cmp_str(&names[k - 1], &names[i])) names[k++] = names[i];
  for (size_t i = 0; i < n; i++) {
    char **hit = bsearch(&d->groups[i], names, k, sizeof(char *), cmp_str);
    gidx[i] = (size_t)(hit - names);
  }
  *ng = k;
}

void rf_cv_result_free(rf_cv_result *r) {
  if (!r) return;
  rf__free(r->pred);
  rf__free(r->lo);
  rf__free(r->hi);
  rf__free(r->fold);
  rf__free(r->fold_mf);
  rf__free(r->fold_leaf);
  rf__free(r->fold_et);
  rf__free(r->fold_base);
  if (r->groups)
    for (size_t g = 0; g < r->n_groups; g++) rf__free(r->groups[g].name);
  rf__free(r->groups);
  rf__free(r->shot);
  rf__free(r->fold_adapt);
  for (size_t s = 0; r->more && s < r->n_more; s++) {
    rf__free(r->more[s].pred);
    rf__free(r->more[s].lo);
    rf__free(r->more[s].hi);
    rf__free(r->more[s].shot);
    rf__free(r->more[s].fold_adapt);
    rf__free(r->more[s].group);
  }
  rf__free(r->more);
  memset(r, 0, sizeof *r);
}

/* Metrics of the rows with fold[i] == which (or group index). */
static int metrics_of(const rf_data *d, const rf_cv_result *r, const size_t *lab, size_t which,
                      double *buf, rf_metrics *m) {
  size_t n = d->n_rows, k = 0;
  double *y = buf, *pr = buf + n, *lo = buf + 2 * n, *hi = buf + 3 * n;
  for (size_t i = 0; i < n; i++)
    if ((!lab || lab[i] == which) && !(r->shot && r->shot[i])) {
      y[k] = d->y[i]; pr[k] = r->pred[i]; lo[k] = r->lo[i]; hi[k] = r->hi[i];
      k++;
    }
  return rf_metrics_compute(y, pr, lo, hi, k, m);
}

int rf_cv_folds(size_t n, unsigned K, uint64_t seed, size_t *fold) {
  if (K < 2 || K > n) return rf__err("%u folds for %zu rows: need 2 <= folds <= rows", K, n);
  size_t *perm = rf__mallocn(n, sizeof(size_t));
  if (!perm) return rf__nomem();
  rf__shuffled_folds(n, K, seed, 0x43565f53ULL /* "CV_S" */, perm, fold);
  rf__free(perm);
  return 0;
}

/*
 * Shots (rf_cv_opts.shots): for each class c of the held-out fold's rows
 * te[0..nte) (rf_cv_opts.adapt_class; one class without), K of its rows,
 * drawn with the seed (a stream per fold and class: draws for several K
 * share their first rows), adapt the fold's predictions of that class:
 * pred/lo/hi (adapted in place), shot (the rows drawn are marked),
 * out[c] (the fit; shots 0 for a class the fold lacks).  A class of K rows
 * or fewer keeps one row out of the shots to be scored.  buf: 4 n doubles
 * of scratch.
 */
static int adapt_fold(const rf_data *d, const rf_cv_opts *o, unsigned shots, uint64_t seed,
                      unsigned k, const size_t *te, size_t nte, double *pred, double *lo,
                      double *hi, unsigned char *shot, rf_adapt *out, double *buf) {
  size_t n = d->n_rows;
  size_t *pick = (size_t *)(buf + 3 * n); /* one class's rows, partly shuffled */
  for (int c = 0; c < RF_ADAPT_CLASSES; c++) {
    size_t m = 0;
    for (size_t t = 0; t < nte; t++)
      if ((o->adapt_class ? o->adapt_class[te[t]] : 0) == c) pick[m++] = te[t];
    size_t K = shots < m ? shots : m ? m - 1 : 0;
    if (!K) continue;
    rf_rng g;
    rf__rng_seed(&g, seed, 0x53484f54ULL + 131 * k + (uint64_t)c);
    double *pr = buf, *y = buf + n, *h = buf + 2 * n;
    for (size_t t = 0; t < K; t++) {
      size_t j = t + (size_t)rf__rng_below(&g, m - t);
      size_t tmp = pick[t];
      pick[t] = pick[j];
      pick[j] = tmp;
      size_t i = pick[t];
      shot[i] = 1;
      pr[t] = pred[i];
      y[t] = d->y[i];
      h[t] = o->overhead ? o->overhead[i] : 0;
    }
    rf_adapt a;
    if (rf_adapt_fit(pr, y, h, K, &a)) return -1;
    a.cls = c;
    out[c] = a;
    for (size_t t = K; t < m; t++) {
      size_t i = pick[t];
      double f = rf_adapt_factor(&a, o->overhead ? o->overhead[i] : 0);
      pred[i] *= f;
      lo[i] *= f;
      hi[i] *= f;
    }
  }
  return 0;
}

int rf_cv(const rf_data *d, const rf_params *p, const rf_cv_opts *o, rf_cv_result *r) {
  memset(r, 0, sizeof *r);
  r->groups_calibrated = SIZE_MAX;
  if (!o || o->size < sizeof(rf_cv_opts)) return rf__err("rf_cv: bad options");
  if (!d->y) return rf__err("cross-validation needs a target");
  size_t n = d->n_rows, p_ = d->n_cols;
  double cov = o->coverage > 0 ? o->coverage : 0.9;
  if (!(cov < 1)) return rf__err("coverage %g is not in (0, 1)", cov);
  if (o->by_group && !d->groups) return rf__err("leave-one-group-out needs a group column");
  if (o->shots && !o->by_group)
    return rf__err("shots adapt a model to a held-out group: they need leave-one-group-out");
  size_t *fold = rf__mallocn(n, sizeof(size_t));
  size_t *gidx = NULL;
  char **gnames = NULL;
  size_t ng = 0, *tr = NULL, *te = NULL;
  double *row = NULL, *buf = NULL;
  int rc = -1;
  r->n = n;
  r->pred = rf__mallocn(n, sizeof(double));
  r->lo = rf__mallocn(n, sizeof(double));
  r->hi = rf__mallocn(n, sizeof(double));
  tr = rf__mallocn(n, sizeof(size_t));
  te = rf__mallocn(n, sizeof(size_t));
  row = rf__mallocn(p_, sizeof(double));
  buf = rf__mallocn(4 * n, sizeof(double));
  if (!fold || !r->pred || !r->lo || !r->hi || !tr || !te || !row || !buf) {
    rf__nomem();
    goto out;
  }
  if (d->groups) { /* distinct sorted group names, index per row */
    gnames = rf__mallocn(n, sizeof(char *));
    gidx = rf__mallocn(n, sizeof(size_t));
    if (!gnames || !gidx) { rf__nomem(); goto out; }
    rf__group_index(d, gidx, gnames, &ng);
  }
  unsigned K;
  if (o->by_group) {
    if (ng < 2) { rf__err("leave-one-group-out needs at least 2 groups (found %zu)", ng); goto out; }
    K = (unsigned)ng;
    memcpy(fold, gidx, n * sizeof(size_t));
  } else {
    K = o->folds ? o->folds : 5;
    if (K < 2 || K > n) { rf__err("%u folds for %zu rows: need 2 <= folds <= rows", K, n); goto out; }
    if (rf_cv_folds(n, K, p->seed, fold)) goto out;
  }
  r->n_folds = K;
  r->fold = rf__calloc(K, sizeof(rf_metrics));
  r->fold_mf = rf__calloc(K, sizeof(double));
  r->fold_leaf = rf__calloc(K, sizeof(unsigned));
  r->fold_et = rf__calloc(K, sizeof(int));
  r->fold_base = rf__calloc(K, sizeof(int));
  if (!r->fold || !r->fold_mf || !r->fold_leaf || !r->fold_et || !r->fold_base) { rf__nomem(); goto out; }
  if (o->shots) {
    r->shot = rf__calloc(n, 1);
    r->fold_adapt = rf__calloc((size_t)K * RF_ADAPT_CLASSES, sizeof(rf_adapt));
    if (!r->shot || !r->fold_adapt) { rf__nomem(); goto out; }
  }
  if (o->n_more) {
    if (!o->by_group || !o->more) { rf__err("further shot counts need leave-one-group-out"); goto out; }
    r->more = rf__calloc(o->n_more, sizeof *r->more);
    if (!r->more) { rf__nomem(); goto out; }
    r->n_more = o->n_more;
    for (size_t s = 0; s < o->n_more; s++) {
      rf_cv_shots *m = &r->more[s];
      m->shots = o->more[s];
      m->pred = rf__mallocn(n, sizeof(double));
      m->lo = rf__mallocn(n, sizeof(double));
      m->hi = rf__mallocn(n, sizeof(double));
      m->shot = rf__calloc(n, 1);
      m->fold_adapt = rf__calloc((size_t)K * RF_ADAPT_CLASSES, sizeof(rf_adapt));
      m->group = rf__calloc(ng ? ng : 1, sizeof(rf_metrics));
      if (!m->pred || !m->lo || !m->hi || !m->shot || !m->fold_adapt || !m->group) {
        rf__nomem();
        goto out;
      }
    }
  }
  for (unsigned k = 0; k < K; k++) {
    size_t ntr = 0, nte = 0;
    for (size_t i = 0; i < n; i++) {
      if (fold[i] == k) te[nte++] = i;
      else tr[ntr++] = i;
    }
    if (ntr < 2) { rf__err("fold %u leaves %zu training rows", k + 1, ntr); goto out; }
    rf_data dtr;
    if (rf__subset(d, tr, ntr, &dtr)) goto out;
    rf_params q = *p;
    q.progress = NULL;
    q.perm_importance = 0;
    if (q.calib_groups) { /* a fold left with one group calibrates by rows */
      size_t g0 = gidx ? gidx[tr[0]] : 0, t = 1;
      while (gidx && t < ntr && gidx[tr[t]] == g0) t++;
      if (!gidx || t == ntr) q.calib_groups = 0;
    }
    if (o->search) {
      rf_params sel;
      if (rf_search(&dtr, &q, o->by_group, &sel, NULL)) { rf_data_free(&dtr); goto out; }
      sel.progress = NULL;
      sel.perm_importance = 0;
      q = sel;
    }
    rf_forest *f = NULL;
    int e = rf_train(&dtr, &q, &f);
    rf_data_free(&dtr);
    if (e) goto out;
    if (p->calib_groups && gidx) {
      /* intervals for the held-out group: with fewer than 3 groups to
         calibrate on, the prior spread of groups widens them */
      size_t ntg = 0;
      for (size_t g = 0; g < ng; g++)
        for (size_t t = 0; t < ntr; t++)
          if (gidx[tr[t]] == g) { ntg++; break; }
      rf__calib_prior(&f->cal, ntg);
      r->groups_calibrated = ntg < r->groups_calibrated ? ntg : r->groups_calibrated;
    }
    {
      /* the fold's moves: its classes' where it has them (then every row
         takes its class's), else its one shrink */
      const rf_calib *c = &f->cal;
      double lo = c->n_keyed ? c->key_shrink[0] : c->shrink, hi = lo;
      for (unsigned ci = 1; ci < c->n_keyed; ci++) {
        lo = fmin(lo, c->key_shrink[ci]);
        hi = fmax(hi, c->key_shrink[ci]);
      }
      if (hi > 0) {
        if (!r->shrunk_folds++) r->shrink_min = lo, r->shrink_max = hi;
        r->shrink_min = fmin(r->shrink_min, lo);
        r->shrink_max = fmax(r->shrink_max, hi);
      }
    }
    r->fold_mf[k] = f->params.max_features;
    r->fold_leaf[k] = f->params.min_leaf;
    r->fold_et[k] = f->params.extra_trees;
    r->fold_base[k] = f->params.base_feature >= 0;
    for (size_t t = 0; t < nte; t++) {
      size_t i = te[t];
      for (size_t j = 0; j < p_; j++) row[j] = d->x[j * n + i];
      if (rf_predict_interval(f, row, cov, &r->pred[i], &r->lo[i], &r->hi[i])) {
        rf_free(f);
        goto out;
      }
    }
    rf_free(f);
    /* further shot counts first: they start from the unadapted answers */
    for (size_t s = 0; s < r->n_more; s++) {
      rf_cv_shots *m = &r->more[s];
      for (size_t t = 0; t < nte; t++) {
        size_t i = te[t];
        m->pred[i] = r->pred[i], m->lo[i] = r->lo[i], m->hi[i] = r->hi[i];
      }
      if (m->shots && adapt_fold(d, o, m->shots, p->seed, k, te, nte, m->pred, m->lo, m->hi,
                                 m->shot, &m->fold_adapt[(size_t)k * RF_ADAPT_CLASSES], buf))
        goto out;
    }
    if (o->shots && adapt_fold(d, o, o->shots, p->seed, k, te, nte, r->pred, r->lo, r->hi,
                               r->shot, &r->fold_adapt[(size_t)k * RF_ADAPT_CLASSES], buf))
      goto out;
    if (o->progress) o->progress(o->progress_ctx, k + 1, K);
  }
  if (metrics_of(d, r, NULL, 0, buf, &r->overall)) goto out;
  for (unsigned k = 0; k < K; k++)
    if (metrics_of(d, r, fold, k, buf, &r->fold[k])) goto out;
  if (ng) {
    r->groups = rf__calloc(ng, sizeof(rf_cv_group));
    if (!r->groups) { rf__nomem(); goto out; }
    r->n_groups = ng;
    for (size_t g = 0; g < ng; g++) {
      if (!(r->groups[g].name = rf__strdup(gnames[g]))) { rf__nomem(); goto out; }
      if (metrics_of(d, r, gidx, g, buf, &r->groups[g].m)) goto out;
    }
  }
  for (size_t s = 0; s < r->n_more; s++) {
    /* the figures of a further shot count: its answers and shots in r's
       place for metrics_of */
    rf_cv_result v = *r;
    v.pred = r->more[s].pred, v.lo = r->more[s].lo, v.hi = r->more[s].hi;
    v.shot = r->more[s].shot;
    if (metrics_of(d, &v, NULL, 0, buf, &r->more[s].overall)) goto out;
    for (size_t g = 0; g < ng; g++)
      if (metrics_of(d, &v, gidx, g, buf, &r->more[s].group[g])) goto out;
  }
  rc = 0;
out:
  if (rc) rf_cv_result_free(r);
  rf__free(fold);
  rf__free(gidx);
  rf__free(gnames);
  rf__free(tr);
  rf__free(te);
  rf__free(row);
  rf__free(buf);
  return rc;
}

/* ------------------------------------------------------------ regret -- */

int rf_rank_regret(const double *y, const double *pred, size_t n, size_t k, double *regret) {
  if (!y || !pred || !regret || !n || !k) return rf__err("rf_rank_regret: no rows or k = 0");
  double best = INFINITY;
  size_t usable = 0;
  for (size_t i = 0; i < n; i++)
    if (!isnan(y[i]) && !isnan(pred[i])) {
      usable++;
      if (y[i] < best) best = y[i];
    }
  if (!usable) return rf__err("rf_rank_regret: no row has both a measurement and a prediction");
  if (!(best > 0)) return rf__err("rf_rank_regret: the best measured value is %g, not > 0", best);
  /* the k lowest predictions by repeated selection: k is small (1, 5) */
  uint8_t *taken = rf__calloc(n, 1);
  if (!taken) return rf__nomem();
  double got = INFINITY;
  for (size_t r = 0; r < k && r < usable; r++) {
    size_t at = n;
    for (size_t i = 0; i < n; i++)
      if (!taken[i] && !isnan(y[i]) && !isnan(pred[i]) && (at == n || pred[i] < pred[at])) at = i;
    taken[at] = 1;
    if (y[at] < got) got = y[at];
  }
  rf__free(taken);
  *regret = got / best - 1;
  return 0;
}
