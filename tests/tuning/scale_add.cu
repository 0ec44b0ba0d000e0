/*
 * scale_add.cu -- a small tunable kernel in Kernel Tuner's style: the
 * tuning parameters block_size_x, tile_size_x and use_bias are macros the
 * tuner (or kcast dataset import-kerneltuner) defines before the source.
 * Each thread handles tile_size_x elements, block_size_x apart; the
 * factors live in constant memory.  tests/test_import.c and the import
 * bench use it.
 */
#include "scale_add.h"

__constant__ float scale[SCALE_N];

__device__ float bias(void) { return use_bias ? 1.0f : 0.0f; }

__global__ void scale_add(float *out, const float *in, int n) {
  int base = blockIdx.x * block_size_x * tile_size_x + threadIdx.x;
#pragma unroll
  for (int t = 0; t < tile_size_x; t++) {
    int i = base + t * block_size_x;
    if (i < n) out[i] = in[i] * scale[t % SCALE_N] + bias();
  }
}
