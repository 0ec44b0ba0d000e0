/*
 * model_fuzz.c -- libFuzzer target for the .kcm model loader and the .kcf
 * feature model loader (make fuzz).
 *
 * Arbitrary bytes go to rf_load and to fm_load.  A refused file must have a
 * message that names it; a loaded forest must predict a finite value, with
 * a finite interval, for an all-zero row (the loader promises in-bounds
 * walks and finite leaves); a loaded feature model must give finite
 * features, no count below zero, for a few launches (the loader promises
 * in-range indices, finite coefficients, bounded exponents).  Seeds:
 * $(BUILD)/fuzz/corpus-model (a small model that make fuzz trains and a
 * feature model it fits).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "tests/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The .kcf side: fm_load, then every output of a few launches. */
static void feature_model(const char *path) {
  fm_model *m = NULL;
  if (fm_load(path, &m)) {
    if (m || !strstr(rf_last_error(), path)) abort();
    return;
  }
  static double args[FM_MAX_PARAM];
  static const uint32_t dims[3][6] = {{1, 1, 1, 1, 1, 1}, {7, 3, 2, 32, 4, 1}, {65535, 1, 1, 1024, 1, 1}};
  double *out = malloc((fm_nout(m) + 1) * sizeof *out);
  if (!out) abort();
  for (int k = 0; k < 3; k++) {
    for (size_t i = 0; i < FM_MAX_PARAM; i++) args[i] = k * 1000.0 + 1;
    static double targs[FM_MAX_TPL];
    for (size_t t = 0; t < FM_MAX_TPL; t++) targs[t] = k * 8.0 + 1;
    fm_info in;
    fm_get_info(m, &in);
    fm_launch l = {{dims[k][0], dims[k][1], dims[k][2]}, {dims[k][3], dims[k][4], dims[k][5]},
                   (uint64_t)k * 4096, args, FM_MAX_PARAM, targs, in.ntpl};
    unsigned fl;
    if (fm_eval(m, &l, out, &fl)) abort(); /* every argument is given */
    for (size_t i = 0; i < fm_nout(m); i++)
      if (!isfinite(out[i])) abort();
  }
  free(out);
  fm_free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = fuzz_memfile(data, size);
  if (!path) return 0;
  feature_model(path);
  rf_forest *f = NULL;
  if (rf_load(path, &f)) {
    if (f || !strstr(rf_last_error(), path)) abort();
    return 0;
  }
  const rf_info *in = rf_get_info(f);
  double *row = calloc(in->n_features ? in->n_features : 1, sizeof *row);
  if (!row) abort();
  double p = rf_predict(f, row), pr, lo, hi;
  if (!isfinite(p)) abort();
  if (rf_predict_interval(f, row, 0.9, &pr, &lo, &hi) == 0 &&
      (!isfinite(pr) || !isfinite(lo) || !isfinite(hi)))
    abort();
  free(row);
  rf_free(f);
  return 0;
}
