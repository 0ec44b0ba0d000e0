/*
 * csv_fuzz.c -- libFuzzer target for the CSV loader (make fuzz).
 *
 * Arbitrary bytes go to rf_data_load_csv, as training input (target
 * column "y") when the first byte is even and as prediction input (no
 * target) when it is odd.  A refused file must have a message that names
 * it; a loaded one must have finite values, named columns and matching
 * counts.  Seeds: $(BUILD)/fuzz/corpus-csv.
 */
#include <math.h>
#include <string.h>

#include "model/model.h"
#include "tests/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = fuzz_memfile(data, size);
  if (!path) return 0;
  rf_csv_opts o;
  memset(&o, 0, sizeof o);
  o.size = sizeof o;
  if (size && (data[0] & 1)) o.no_target = 1;
  else o.target = "y";
  rf_data d;
  if (rf_data_load_csv(&d, path, &o)) {
    if (!strstr(rf_last_error(), path)) abort();
    return 0;
  }
  if (!d.n_rows || !d.n_cols || (!o.no_target && !d.y)) abort();
  for (size_t j = 0; j < d.n_cols; j++)
    if (!d.names[j]) abort();
  for (size_t k = 0; k < d.n_rows * d.n_cols; k++)
    if (!isfinite(d.x[k])) abort();
  for (size_t i = 0; d.y && i < d.n_rows; i++)
    if (!isfinite(d.y[i])) abort();
  rf_data_free(&d);
  return 0;
}
