/*
 * kt_fuzz.c -- libFuzzer target for the Kernel Tuner cachefile reader
 * (ds_kt_read; make fuzz).
 *
 * Arbitrary bytes go to ds_kt_read as a cachefile (plain JSON, or gzip when
 * they start with gzip's magic), under a 64 MiB memory limit
 * (ds_kt_set_memory_limit) so that a small input may not make the parser
 * take gigabytes.  A refused file must have a message that names it; a
 * read one must hold what the reader promises: every parameter a C
 * identifier, every value a one-line token, every configuration either
 * failed or with finite times >= 0, keys unique.  Seeds:
 * $(BUILD)/fuzz/corpus-kt.
 */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/ds.h"
#include "tests/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int identifier(const char *s) {
  if (!s || !(isalpha((unsigned char)*s) || *s == '_')) return 0;
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && *s != '_') return 0;
  return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static int init;
  if (!init) {
    ds_kt_set_memory_limit((size_t)64 << 20);
    init = 1;
  }
  const char *path = fuzz_memfile(data, size);
  if (!path) return 0;
  ds_kt_file f;
  char err[1200];
  if (ds_kt_read(path, &f, err, sizeof err)) {
    if (!strstr(err, path)) abort();
    return 0;
  }
  if (!f.device_name || !f.kernel_name || f.ndims > 3) abort();
  for (size_t j = 0; j < f.nparams; j++)
    if (!identifier(f.params[j])) abort();
  for (size_t i = 0; i < f.nconfigs; i++) {
    const ds_kt_config *c = &f.configs[i];
    if (!c->key) abort();
    for (size_t j = 0; j < f.nparams; j++)
      if (!c->values[j] || !c->values[j][0] || strpbrk(c->values[j], "\n\r\\#\"'")) abort();
    if (c->failed ? c->ntimes != 0 : c->ntimes == 0) abort();
    for (size_t t = 0; t < c->ntimes; t++)
      if (!isfinite(c->times_ms[t]) || c->times_ms[t] < 0) abort();
    for (size_t q = 0; q < i && q < 64; q++)
      if (!strcmp(f.configs[q].key, c->key)) abort();
  }
  ds_kt_free(&f);
  return 0;
}
