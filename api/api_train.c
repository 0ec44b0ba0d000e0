/*
 * api_train.c -- training a forest from a matrix and saving it
 * (kcast_model_train, kcast_model_save), and the k-fold assignment of
 * `kcast cv` (kcast_cv_folds): what a program that is not the CLI -- the
 * Python package's Regressor -- needs to train kcast's own forest exactly
 * as `kcast train` and `kcast cv` do.
 *
 * kcast_model_train maps its parameters onto the forest's (rf_params) the
 * way the CLI's defaults do (ds_train_defaults) and trains with rf_train;
 * the target transform is chosen as ds_train_load chooses it (log when
 * every target is positive, unless said), so the same rows and parameters
 * give the forest `kcast train --csv` gives, bit for bit.
 */
#include "api/api_int.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/ds_train.h"
#include "model/model.h"

kcast_status kcast_model_train(const double *x, size_t n_rows, size_t n_cols, size_t row_stride,
                               const char *const *names, const double *y,
                               const kcast_train_params *params, kcast_model **model) {
  static const char fn[] = "kcast_model_train";
  if (!model) return api_fail(KCAST_E_ARG, "%s: model out-parameter is NULL", fn);
  *model = NULL;
  if (!x || !names || !y || !params)
    return api_fail(KCAST_E_ARG, "%s: %s is NULL", fn,
                    !x ? "x" : !names ? "names" : !y ? "y" : "params");
  if (params->size < sizeof *params)
    return api_fail(KCAST_E_ARG, "%s: params->size %zu < %zu (KCAST_TRAIN_PARAMS_INIT)", fn,
                    params->size, sizeof *params);
  if (n_rows < 2) return api_fail(KCAST_E_ARG, "%s: %zu rows; at least 2 are needed", fn, n_rows);
  if (n_cols < 1) return api_fail(KCAST_E_ARG, "%s: no feature columns", fn);
  if (row_stride < n_cols)
    return api_fail(KCAST_E_ARG, "%s: row_stride %zu is less than n_cols %zu", fn, row_stride,
                    n_cols);
  if (n_rows > SIZE_MAX / sizeof(double) / n_cols)
    return api_fail(KCAST_E_ARG, "%s: %zu x %zu values are more than memory holds", fn, n_rows,
                    n_cols);
  const kcast_train_params *q = params;
  if (q->n_trees < 1 || q->n_trees > 100000)
    return api_fail(KCAST_E_ARG, "%s: n_trees %u is not in 1..100000", fn, q->n_trees);
  if (!(q->max_features >= 0) || q->max_features > 1e9 ||
      (q->max_features > 1 && q->max_features != floor(q->max_features)))
    return api_fail(KCAST_E_ARG, "%s: max_features %g: give a fraction in (0, 1], a whole "
                    "count, or 0", fn, q->max_features);
  if (q->min_leaf < 1) return api_fail(KCAST_E_ARG, "%s: min_leaf must be >= 1", fn);
  if (q->bins < 2 || q->bins > RF_MAX_BINS)
    return api_fail(KCAST_E_ARG, "%s: bins %u is not in 2..%d", fn, q->bins, RF_MAX_BINS);
  if (q->bootstrap < -1 || q->bootstrap > 1 || q->log_target < -1 || q->log_target > 1 ||
      q->extra_trees < 0 || q->extra_trees > 1 || q->calibrate < 0 || q->calibrate > 1 ||
      q->threads < 0)
    return api_fail(KCAST_E_ARG, "%s: a flag out of range (bootstrap and log_target -1, 0 or 1; "
                    "extra_trees and calibrate 0 or 1; threads >= 0)", fn);
  for (size_t j = 0; j < n_cols; j++) {
    if (!names[j] || !*names[j]) return api_fail(KCAST_E_ARG, "%s: column %zu has no name", fn, j);
    for (size_t k = 0; k < j; k++)
      if (!strcmp(names[k], names[j]))
        return api_fail(KCAST_E_ARG, "%s: columns %zu and %zu are both named %s", fn, k, j,
                        names[j]);
  }
  int allpos = 1;
  for (size_t i = 0; i < n_rows; i++) {
    if (!isfinite(y[i])) return api_fail(KCAST_E_FEATURE, "%s: y[%zu] = %g is not finite", fn, i, y[i]);
    allpos &= y[i] > 0;
    for (size_t j = 0; j < n_cols; j++)
      if (!isfinite(x[i * row_stride + j]))
        return api_fail(KCAST_E_FEATURE, "%s: row %zu, column %s: %g is not finite", fn, i,
                        names[j], x[i * row_stride + j]);
  }
  /* kcast's defaults, then the caller's choices */
  rf_params p;
  ds_train_input in;
  ds_train_defaults(&p, &in);
  p.n_trees = q->n_trees;
  p.max_features = q->max_features;
  p.min_leaf = q->min_leaf;
  p.max_depth = q->max_depth;
  p.extra_trees = q->extra_trees;
  p.bootstrap = q->bootstrap;
  p.calibrate = q->calibrate ? RF_CALIBRATE_ON : RF_CALIBRATE_OFF;
  p.n_bins = q->bins;
  p.seed = q->seed;
  p.n_threads = q->threads;
  if (q->log_target == 1 && !allpos)
    return api_fail(KCAST_E_FEATURE, "%s: a log target needs every y > 0", fn);
  p.transform = q->log_target == 1 || (q->log_target < 0 && allpos) ? RF_TRANSFORM_LOG
                                                                     : RF_TRANSFORM_NONE;
  p.base_feature = -1;
  if (q->base) {
    for (size_t j = 0; j < n_cols; j++)
      if (!strcmp(names[j], q->base)) p.base_feature = (int)j;
    if (p.base_feature < 0)
      return api_fail(KCAST_E_ARG, "%s: base %s is not one of the columns", fn, q->base);
    if (p.transform != RF_TRANSFORM_LOG)
      return api_fail(KCAST_E_ARG, "%s: base %s needs the log target (every y > 0)", fn, q->base);
    for (size_t i = 0; i < n_rows; i++)
      if (!(x[i * row_stride + (size_t)p.base_feature] > 0))
        return api_fail(KCAST_E_FEATURE, "%s: row %zu: the base %s is not > 0", fn, i, q->base);
  }
  rf_data d;
  if (rf_data_alloc(&d, n_rows, n_cols, 1))
    return api_fail(KCAST_E_NOMEM, "%s: %s", fn, rf_last_error());
  int ok = 1;
  for (size_t j = 0; ok && j < n_cols; j++) ok = (d.names[j] = strdup(names[j])) != NULL;
  ok = ok && (d.target = strdup(q->target ? q->target : "y")) != NULL;
  if (!ok) {
    rf_data_free(&d);
    return api_fail(KCAST_E_NOMEM, "%s: out of memory", fn);
  }
  for (size_t i = 0; i < n_rows; i++) {
    d.y[i] = y[i];
    for (size_t j = 0; j < n_cols; j++) d.x[j * n_rows + i] = x[i * row_stride + j];
  }
  rf_forest *f = NULL;
  int trc = rf_train(&d, &p, &f);
  rf_data_free(&d);
  if (trc) {
    const char *why = rf_last_error();
    return api_fail(strstr(why, "out of memory") ? KCAST_E_NOMEM : KCAST_E_ARG, "%s: %s", fn, why);
  }
  if ((q->gpu && *q->gpu && rf_set_gpu(f, q->gpu)) || rf_set_target(f, q->target ? q->target : "y")) {
    rf_free(f);
    return api_fail(KCAST_E_NOMEM, "%s: out of memory", fn);
  }
  kcast_model *m = calloc(1, sizeof *m);
  if (!m || !(m->path = strdup("(trained model)"))) {
    free(m);
    rf_free(f);
    return api_fail(KCAST_E_NOMEM, "%s: out of memory", fn);
  }
  m->f = f;
  kcast_status st = api_model_init(m);
  if (st) return st;
  *model = m;
  return KCAST_OK;
}

kcast_status kcast_model_save(const kcast_model *model, const char *path) {
  if (!model || !path || !*path)
    return api_fail(KCAST_E_ARG, "kcast_model_save: %s", !model ? "model is NULL" : "no path");
  if (rf_save(model->f, path)) return api_fail(KCAST_E_IO, "%s", rf_last_error());
  return KCAST_OK;
}

kcast_status kcast_cv_folds(size_t n, unsigned k, uint64_t seed, uint32_t *fold) {
  if (!fold) return api_fail(KCAST_E_ARG, "kcast_cv_folds: fold is NULL");
  if (k < 2 || k > n)
    return api_fail(KCAST_E_ARG, "kcast_cv_folds: %u folds for %zu rows: need 2 <= k <= n", k, n);
  if (n > SIZE_MAX / sizeof(size_t))
    return api_fail(KCAST_E_ARG, "kcast_cv_folds: n = %zu is too large", n);
  size_t *f = malloc(n * sizeof *f);
  if (!f) return api_fail(KCAST_E_NOMEM, "kcast_cv_folds: out of memory");
  if (rf_cv_folds(n, k, seed, f)) {
    free(f);
    return api_fail(KCAST_E_ARG, "kcast_cv_folds: %s", rf_last_error());
  }
  for (size_t i = 0; i < n; i++) fold[i] = (uint32_t)f[i];
  free(f);
  return KCAST_OK;
}
