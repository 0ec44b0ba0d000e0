/*
 * nsys_fuzz.c -- libFuzzer target for the Nsight Systems reader
 * (prof_nsys_read: cuda_gpu_trace CSV and SQLite exports; make fuzz).
 * The checks: nsight_fuzz.h.  Seeds: $(BUILD)/fuzz/corpus-nsys.
 */
#include "tests/fuzz/nsight_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return nsight_fuzz_one(prof_nsys_read, data, size);
}
