/*
 * ncu_fuzz.c -- libFuzzer target for the Nsight Compute reader
 * (prof_ncu_read: `ncu --csv --page raw`; make fuzz).  The checks:
 * nsight_fuzz.h.  Seeds: $(BUILD)/fuzz/corpus-ncu.
 */
#include "tests/fuzz/nsight_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return nsight_fuzz_one(prof_ncu_read, data, size);
}
