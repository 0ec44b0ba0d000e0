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
 * estimate on the GPU (an_overhead_share: 1 for an operator bound by the
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
     u = p h / y, v = p (1 - h) / y */
  double L = RF_ADAPT_RIDGE, suu = L, svv = L, suv = 0, su = L, sv = L, r2 = 0;
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

const rf_adapt *rf_get_adapt(const rf_forest *f, const char *gpu) {
  if (!f || !gpu) return NULL;
  for (size_t i = 0; i < f->n_adapt; i++)
    if (an_gpu_in_list(f->adapt[i].gpu, gpu)) return &f->adapt[i];
  return NULL;
}

int rf_set_adapt(rf_forest *f, const char *gpu, const rf_adapt *a) {
  if (!f || !gpu || !*gpu || !a) return rf__err("rf_set_adapt: NULL argument");
  if (strlen(gpu) >= sizeof a->gpu) return rf__err("GPU name '%s' is too long", gpu);
  if (!(a->host > 0) || !(a->device > 0) || !isfinite(a->host) || !isfinite(a->device))
    return rf__err("adaptation factors must be positive");
  rf_adapt *slot = (rf_adapt *)rf_get_adapt(f, gpu);
  if (!slot) {
    if (f->n_adapt >= RF_ADAPT_MAX)
      return rf__err("a model holds at most %d adapted GPUs", RF_ADAPT_MAX);
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
