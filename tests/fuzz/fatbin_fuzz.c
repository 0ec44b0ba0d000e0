/*
 * fatbin_fuzz.c -- libFuzzer target for the fatbinary reader (make fuzz).
 *
 * Arbitrary bytes as a fatbinary container: rt_fatbin_size, rt_fatbin_list
 * and rt_fatbin_ptx (LZ4 and zstd payloads included) must stay inside the
 * bytes given, and a PTX they return must be NUL-terminated at its length.
 * Seeds: $(BUILD)/fuzz/corpus-fatbin (the .nv_fatbin sections of the suite
 * programs).
 */
#include <stdlib.h>
#include <string.h>

#include "runtime/rt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* a copy of exactly size bytes, so that ASan sees any read past them */
  uint8_t *fb = malloc(size ? size : 1);
  if (!fb) return 0;
  memcpy(fb, data, size);
  char err[512];
  rt_fatbin_entry e[8];
  size_t n = 0;
  if (size >= 16) (void)rt_fatbin_size(fb);
  if (rt_fatbin_list(fb, size, e, 8, &n, err, sizeof err) == 0)
    for (size_t i = 0; i < n && i < 8; i++)
      if (e[i].data < fb || e[i].data + e[i].stored > fb + size) abort();
  char *ptx = NULL;
  size_t len = 0;
  unsigned arch = 0;
  if (rt_fatbin_ptx(fb, size, &ptx, &len, &arch, err, sizeof err) == 0) {
    if (!ptx || ptx[len] != 0) abort();
    free(ptx);
  } else if (!err[0]) {
    abort();
  }
  free(fb);
  return 0;
}
