/*
 * rf_adapt.c -- a cross-GPU model adapted to a GPU it was not trained on
 * from a few launches measured there (`kcast calibrate`, `kcast cv --group
 * gpu --shots K`).
 *
 * Why two factors and not a retrained forest: K is small (5, 20: a
 * cluster operator runs a quick subset once on a new GPU type), and K rows
 * among tens of thousands of training rows change no tree.  What a new GPU
 * gets wrong against the model is, measured on the NeuSight data, two
 * things: how fast its host dispatches work (a PyTorch operator never
 * takes less than 25-27 us on three of its machines, 32 and 44 us on the
 * other two), and how its device runs a kernel against the estimate (its
 * sustained share of the datasheet bandwidth and FP32 rate).  The first
 * scales the part of a launch's time that is overhead, the second the
 * rest, so a prediction p becomes
 *
 *     p x (h x host + (1 - h) x device)
 *
 * where h in [0, 1] is the overhead's share of the launch's analytic
 * estimate on the GPU.  One pair of factors per launch class (an operator
 * launch's opr.class: GEMMs, convolutions, elementwise, softmax and
 * normalisation are each off in their own way on a new GPU; measured
 * below) and one for every launch, which a class without its own gets.
 * Measured on the NeuSight data (docs/accuracy.md): one pair for all
 * classes, fitted to 20 shots of any operator, made the elementwise
 * operators of a held-out GPU worse (14.6 -> 15.6 % MAPE); a pair per
 * class, 20 shots of each, better.  The overhead share h is (an_overhead_share: 1 for an operator bound by the
 * host's dispatch, the 2 us launch overhead's share for an emulated
 * kernel).  host and device are fitted to the K shots by least squares on
 * the relative error, each pulled towards 1 (the model as trained) by a
 * ridge penalty of RF_ADAPT_RIDGE shots' weight, so a factor the shots say
 * little about (no shot bound by the host) stays near the model's own
 * answer.  The interval bounds move with the point prediction.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model/model.h"
#include "model/rf_int.h"

/* The factors kept within these (a shot 20x off is a wrong GPU, not a
   slow one). */
#define FACTOR_MIN 0.05
#define FACTOR_MAX 20.0

int rf_adapt_fit(const double *pred, const double *y, const double *h, size_t k,
                 rf_adapt *out) {
  if (!out || (k && (!pred || !y))) return rf__err("rf_adapt_fit: NULL argument");
  memset(out, 0, sizeof *out);
  out->host = out->device = 1;
  if (!k) return rf__err("adapting a model to a GPU needs at least one measured launch");
  /* normal equations of sum (u f + v s - 1)^2 + L (f - 1)^2 + L (s - 1)^2,
     u = p h / y, v = p (1 - h) / y; L is RF_ADAPT_RIDGE times an average
     shot's weight, mean (u + v)^2 (about 1 when the model is right), so
     the pull is that of that many shots whatever the GPU's speed */
  double w = 0;
  for (size_t i = 0; i < k; i++)
    if (pred[i] > 0 && y[i] > 0) w += (pred[i] / y[i]) * (pred[i] / y[i]);
  double L = RF_ADAPT_RIDGE * w / (double)k;
  double suu = L, svv = L, suv = 0, su = L, sv = L, r2 = 0;
  for (size_t i = 0; i < k; i++) {
    double hi = h ? h[i] : 0;
    if (!(pred[i] > 0) || !(y[i] > 0) || !isfinite(pred[i]) || !isfinite(y[i]))
      return rf__err("shot %zu: prediction %g and measurement %g must be positive", i + 1,
                     pred[i], y[i]);
    if (!(hi >= 0 && hi <= 1)) return rf__err("shot %zu: overhead share %g is not in [0, 1]", i + 1, hi);
    double u = pred[i] * hi / y[i], v = pred[i] * (1 - hi) / y[i];
    suu += u * u;
    svv += v * v;
    suv += u * v;
    su += u;
    sv += v;
  }
  double det = suu * svv - suv * suv;
  double f = 1, s = 1;
  if (det > 1e-12 * suu * svv) {
    f = (su * svv - sv * suv) / det;
    s = (suu * sv - suv * su) / det;
  }
  f = fmin(FACTOR_MAX, fmax(FACTOR_MIN, f));
  s = fmin(FACTOR_MAX, fmax(FACTOR_MIN, s));
  for (size_t i = 0; i < k; i++) {
    double hi = h ? h[i] : 0, a = pred[i] * (hi * f + (1 - hi) * s);
    r2 += log(a / y[i]) * log(a / y[i]);
  }
  out->host = f;
  out->device = s;
  out->shots = (unsigned)(k > 0xffffffffu ? 0xffffffffu : k);
  out->rmse_log = sqrt(r2 / (double)k);
  return 0;
}

double rf_adapt_factor(const rf_adapt *a, double h) {
  if (!a) return 1;
  if (!(h >= 0)) h = 0;
  if (h > 1) h = 1;
  return h * a->host + (1 - h) * a->device;
}

int rf_adapt_class(double cls) {
  return cls >= 1 && cls < RF_ADAPT_CLASSES && cls == floor(cls) ? (int)cls : 0;
}

/* The entry of (gpu, cls) exactly, NULL when none. */
static rf_adapt *find_exact(const rf_forest *f, const char *gpu, int cls) {
  for (size_t i = 0; i < f->n_adapt; i++)
    if (f->adapt[i].cls == cls && an_gpu_in_list(f->adapt[i].gpu, gpu)) return &f->adapt[i];
  return NULL;
}

const rf_adapt *rf_get_adapt(const rf_forest *f, const char *gpu, int cls) {
  if (!f || !gpu) return NULL;
  const rf_adapt *a = find_exact(f, gpu, rf_adapt_class(cls));
  return a ? a : find_exact(f, gpu, 0);
}

int rf_set_adapt(rf_forest *f, const char *gpu, const rf_adapt *a) {
  if (!f || !gpu || !*gpu || !a) return rf__err("rf_set_adapt: NULL argument");
  if (strlen(gpu) >= sizeof a->gpu) return rf__err("GPU name '%s' is too long", gpu);
  if (!(a->host > 0) || !(a->device > 0) || !isfinite(a->host) || !isfinite(a->device))
    return rf__err("adaptation factors must be positive");
  if (a->cls < 0 || a->cls >= RF_ADAPT_CLASSES)
    return rf__err("adaptation class %d is not in 0..%d", a->cls, RF_ADAPT_CLASSES - 1);
  rf_adapt *slot = find_exact(f, gpu, a->cls);
  if (!slot) {
    if (f->n_adapt >= RF_ADAPT_MAX)
      return rf__err("a model holds at most %d adaptations", RF_ADAPT_MAX);
    rf_adapt *t = rf__realloc(f->adapt, (f->n_adapt + 1) * sizeof *t);
    if (!t) return rf__nomem();
    f->adapt = t;
    slot = &f->adapt[f->n_adapt++];
  }
  *slot = *a;
  snprintf(slot->gpu, sizeof slot->gpu, "%s", gpu);
  rf__fill_info(f);
  return 0;
}

double an_overhead_share(const an_estimate *e) {
  if (!e || !(e->time_us > 0)) return 0;
  double h = e->t_overhead_us / e->time_us;
  return h < 0 ? 0 : h > 1 ? 1 : h;
}

int rf_adapt_launch(const rf_forest *f, const char *gpu, const char *const *names,
                    const double *vals, size_t n, double *factor) {
  *factor = 1;
  if (!f || !f->n_adapt) return 0;
  const rf_adapt *a = rf_get_adapt(f, gpu, an__op_class(names, vals, n));
  if (!a) return 0;
  const an_gpu *g = an_gpu_find(gpu);
  an_estimate e;
  double h = 0;
  if (g && !an_estimate_launch(g, names, vals, n, &e)) h = an_overhead_share(&e);
  *factor = rf_adapt_factor(a, h);
  return 1;
}

int rf_adapt_fit_rows(const rf_forest *f, const char *gpu, const char *const *names,
                      const double *x, size_t n, size_t p, const double *y,
                      double (*dflt)(const char *name), rf_adapt *out, size_t *nout) {
  if (nout) *nout = 0;
  if (!f || !gpu || !out || !nout || (n && (!names || !x || !y)))
    return rf__err("rf_adapt_fit_rows: NULL argument");
  const an_gpu *g = an_gpu_find(gpu);
  if (!g) return rf__err("unknown GPU '%s' (see 'kcast gpus')", gpu);
  if (!n) return rf__err("no launch measured on %s to adapt the model to", g->name);
  size_t nf = f->n_features;
  int unseen = f->gpu && *f->gpu && !an_gpu_in_list(f->gpu, g->name);
  long *at = rf__mallocn(nf ? nf : 1, sizeof *at);
  double *row = rf__mallocn(nf ? nf : 1, sizeof *row);
  double *pr = rf__mallocn(n, sizeof *pr), *h = rf__mallocn(n, sizeof *h);
  double *sp = rf__mallocn(n, sizeof *sp), *sy = rf__mallocn(n, sizeof *sy),
         *sh = rf__mallocn(n, sizeof *sh);
  int *cls = rf__mallocn(n, sizeof *cls);
  int rc = -1;
  if (!at || !row || !pr || !h || !sp || !sy || !sh || !cls) { rf__nomem(); goto out; }
  for (size_t j = 0; j < nf; j++) {
    at[j] = -1;
    for (size_t c = 0; c < p && at[j] < 0; c++)
      if (names[c] && !strcmp(names[c], f->features[j])) at[j] = (long)c;
  }
  for (size_t i = 0; i < n; i++) {
    const double *v = x + i * p;
    md_cache dc;
    memset(&dc, 0, sizeof dc);
    for (size_t j = 0; j < nf; j++) {
      if (at[j] >= 0) { row[j] = v[at[j]]; continue; }
      int got = md_value(&dc, f->features[j], g->name, names, v, p, &row[j]);
      if (got < 0) { rf__err("launch %zu: %s: %s", i + 1, f->features[j], rf_last_error()); goto out; }
      if (got) continue;
      row[j] = dflt ? dflt(f->features[j]) : NAN;
      if (isnan(row[j])) {
        rf__err("launch %zu lacks feature %s, which the model reads", i + 1, f->features[j]);
        goto out;
      }
    }
    /* as the adapted GPU's answers will be made: a GPU the model was not
       trained on takes its unseen-GPU table, and that table's shrink */
    if (unseen ? rf_predict_interval_on(f, row, 0.9, 1, &pr[i], NULL, NULL)
               : ((pr[i] = rf_predict(f, row)), 0))
      goto out;
    an_estimate e;
    h[i] = an_estimate_launch(g, names, v, p, &e) ? 0 : an_overhead_share(&e);
    cls[i] = rf_adapt_class(an__op_class(names, v, p));
  }
  /* class 0: every launch (what a launch of a class without its own fit
     gets); then each class of the launches on its own */
  for (int c = 0; c < RF_ADAPT_CLASSES; c++) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
      if (!c || cls[i] == c) sp[k] = pr[i], sy[k] = y[i], sh[k] = h[i], k++;
    if (!k) continue;
    if (rf_adapt_fit(sp, sy, sh, k, &out[*nout])) goto out;
    out[*nout].cls = c;
    snprintf(out[*nout].gpu, sizeof out[*nout].gpu, "%s", g->name);
    (*nout)++;
  }
  rc = 0;
out:
  rf__free(at);
  rf__free(row);
  rf__free(pr);
  rf__free(h);
  rf__free(sp);
  rf__free(sy);
  rf__free(sh);
  rf__free(cls);
  return rc;
}
