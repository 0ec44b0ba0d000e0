/*
 * rf_range.c -- what a forest was trained on: the range of every feature
 * over its training rows, stored in the model (file version 4), and the
 * test of a new row against it.
 *
 * Why: a forest answers a row beyond its training data with the leaves at
 * the edge of it -- a launch twice the largest size it saw, a GPU with more
 * SMs than any it was trained on -- and its interval says nothing of that.
 * A scheduler must be told that the answer is an extrapolation (kcast
 * predict's out_of_range column, kcast_predict_check in kcast.h).  Only
 * features the forest splits on count (impurity importance > 0): a column
 * no split reads cannot move the answer.
 *
 * Beyond telling, a forest with a base (the analytic estimate: it learns
 * log(y / base)) shrinks such an answer toward the median of log(y / base)
 * over its training rows (base_med, file version 6), by the weight w^2, w
 * the share of the impurity importance that lies on the features outside
 * their range (rf__extrap_shift).  The edge leaves of a kernel or GPU
 * unlike any trained on carry that one's correction; the median is the
 * correction the estimate needs on a typical row.  Measured on the tuned
 * kernels of ../shared/data, leave one kernel out, kcast's defaults, two
 * seeds: pnpoly 58.2 -> 17.4 % median APE, the older convolution 34.6 ->
 * 34.0; within a GPU (rows in range) nothing moves, and on the tutorial's
 * 43 launches 5-fold T4 10.6 -> 11.2.  w itself (not squared) shrank
 * pnpoly to 14.9 but cost the tutorial 5-fold 12.8: a row slightly out
 * (one minor feature) keeps its forest answer almost whole with w^2.
 */
#include "model/rf_int.h"

#include <math.h>

int rf__ranges(rf_forest *f, const rf_data *d) {
  size_t p = d->n_cols, n = d->n_rows;
  f->range_lo = rf__mallocn(p, sizeof(double));
  f->range_hi = rf__mallocn(p, sizeof(double));
  if (!f->range_lo || !f->range_hi) return rf__nomem();
  for (size_t j = 0; j < p; j++) {
    const double *x = d->x + j * n;
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < n; i++) {
      if (x[i] < lo) lo = x[i];
      if (x[i] > hi) hi = x[i];
    }
    f->range_lo[j] = lo;
    f->range_hi[j] = hi;
  }
  return 0;
}

/* Feature j of row lies outside f's training range. */
static int outside(const rf_forest *f, size_t j, double v) {
  double lo = f->range_lo[j], hi = f->range_hi[j];
  /* relative slack for values written and read back as text */
  double eps = 1e-9 * fmax(fabs(lo), fabs(hi));
  return v < lo - eps || v > hi + eps;
}

long rf_outside(const rf_forest *f, const double *row, size_t *n_out) {
  long first = -1;
  size_t k = 0;
  if (f->range_lo && f->range_hi)
    for (size_t j = 0; j < f->n_features; j++) {
      if (!(f->mdi[j] > 0)) continue;
      if (outside(f, j, row[j])) {
        if (first < 0 || f->mdi[j] > f->mdi[first]) first = (long)j;
        k++;
      }
    }
  if (n_out) *n_out = k;
  return first;
}

double rf__extrap_shift(const rf_forest *f, const double *row, double m) {
  if (!isfinite(f->base_med) || !f->range_lo || !f->range_hi) return 0;
  double all = 0, out = 0;
  for (size_t j = 0; j < f->n_features; j++) {
    if (!(f->mdi[j] > 0)) continue;
    all += f->mdi[j];
    if (outside(f, j, row[j])) out += f->mdi[j];
  }
  if (!(out > 0) || !(all > 0)) return 0;
  double w = out / all;
  w = w > 1 ? 1 : w;
  return pow(w, RF_EXTRAP_POW) * (f->base_med - m);
}

void rf__class_shrink(const rf_calib *cal, double v, double *shrink, int *toward) {
  for (unsigned k = 0; k < cal->n_keyed; k++)
    if (cal->key_val[k] == v) {
      *shrink = cal->key_shrink[k];
      *toward = cal->key_toward[k];
      return;
    }
}

double rf__shift(const rf_forest *f, const rf_calib *cal, const double *row, double m) {
  double ex = rf__extrap_shift(f, row, m);
  double s = cal->shrink;
  int t = cal->toward;
  if (cal->n_keyed) rf__class_shrink(cal, row[cal->key], &s, &t);
  if (!(s > 0) || !isfinite(f->base_med)) return ex;
  double to = t ? f->base_med : 0;
  return ex + s * (to - (m + ex));
}
