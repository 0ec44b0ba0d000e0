/*
 * model_fuzz.c -- libFuzzer target for the .kcm model loader (make fuzz).
 *
 * Arbitrary bytes go to rf_load.  A refused file must have a message that
 * names it; a loaded one must predict a finite value, with a finite
 * interval, for an all-zero row (the loader promises in-bounds walks and
 * finite leaves).  Seeds: $(BUILD)/fuzz/corpus-model (a small model that
 * make fuzz trains).
 */
#include <math.h>
#include <string.h>

#include "model/model.h"
#include "tests/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = fuzz_memfile(data, size);
  if (!path) return 0;
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
