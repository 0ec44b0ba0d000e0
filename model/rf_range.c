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

long rf_outside(const rf_forest *f, const double *row, size_t *n_out) {
  long first = -1;
  size_t k = 0;
  if (f->range_lo && f->range_hi)
    for (size_t j = 0; j < f->n_features; j++) {
      if (!(f->mdi[j] > 0)) continue;
      double lo = f->range_lo[j], hi = f->range_hi[j];
      /* relative slack for values written and read back as text */
      double eps = 1e-9 * fmax(fabs(lo), fabs(hi));
      if (row[j] < lo - eps || row[j] > hi + eps) {
        if (first < 0 || f->mdi[j] > f->mdi[first]) first = (long)j;
        k++;
      }
    }
  if (n_out) *n_out = k;
  return first;
}
