// reduce_shuffle.cu -- warp-shuffle reductions: a float sum and an int max.
//
// usage: reduce_shuffle N [BLOCK]
//   N      elements, 1 .. 2^28
//   BLOCK  threads per block, multiple of 32 in 32 .. 1024 (default 256)
// Launches per run: 3 --
//   1. sum_partials, grid G = min(ceil(N/BLOCK), 1024): grid-stride loads,
//      __shfl_down_sync tree per warp, warp sums through shared memory folded
//      by warp 0, one partial per block;
//   2. sum_partials again with grid 1 over the G partials (deterministic order,
//      no float atomics);
//   3. max_xor, same grid as 1: butterfly __shfl_xor_sync max per warp, then one
//      atomicMax per warp on global memory (integer, order-free).
// Check: the max is exact.  The float inputs are in [0, 1) (no cancellation);
// each input passes through at most m = ceil(N/(G*BLOCK)) sequential adds, then
// log2(BLOCK) tree levels, then ceil(G/BLOCK) + log2(BLOCK) more in pass 2, so
// the relative error is below (m + G/BLOCK + 2 log2(BLOCK) + 2) * eps; we allow
// twice that against a long double pairwise CPU sum.
#include "suite_util.h"
#include <math.h>

#define USAGE "reduce_shuffle N [BLOCK]"

__device__ __forceinline__ float warp_sum(float v) {
  for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
  return v;
}

__global__ void sum_partials(const float *in, float *out, int n) {
  __shared__ float warp_sums[32];
  float v = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    v += in[i];
  v = warp_sum(v);
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    int nwarps = blockDim.x >> 5;
    v = lane < nwarps ? warp_sums[lane] : 0.0f;
    v = warp_sum(v);
    if (lane == 0) out[blockIdx.x] = v;
  }
}

__global__ void max_xor(const int *in, int *out, int n) {
  int m = -2147483647 - 1;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    m = max(m, in[i]);
  for (int mask = 16; mask > 0; mask >>= 1)
    m = max(m, __shfl_xor_sync(0xffffffffu, m, mask));
  if ((threadIdx.x & 31) == 0) atomicMax(out, m);
}

static long double pairwise(const float *x, long long n) {
  if (n <= 8) {
    long double s = 0;
    for (long long i = 0; i < n; i++) s += x[i];
    return s;
  }
  long long h = n / 2;
  return pairwise(x, h) + pairwise(x + h, n - h);
}

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3) suite_usage(USAGE);
  int n = (int)suite_arg(argc, argv, 1, 0, 1, 1 << 28, USAGE);
  int block = (int)suite_arg(argc, argv, 2, 256, 32, 1024, USAGE);
  if (block % 32) suite_usage(USAGE);

  float *hf = (float *)suite_malloc((size_t)n * sizeof(float));
  int *hi = (int *)suite_malloc((size_t)n * sizeof(int));
  lcg_t g = {777u};
  int want_max = -2147483647 - 1;
  for (int i = 0; i < n; i++) {
    hf[i] = lcg_unit(&g);
    hi[i] = (int)lcg_next(&g);
    if (hi[i] > want_max) want_max = hi[i];
  }
  long long blocks_needed = (n + block - 1) / block;
  int grid = blocks_needed < 1024 ? (int)blocks_needed : 1024;

  float *dfin, *dpart, *dsum;
  int *dint, *dmax;
  CHECK(cudaMalloc(&dfin, (size_t)n * sizeof(float)));
  CHECK(cudaMalloc(&dint, (size_t)n * sizeof(int)));
  CHECK(cudaMalloc(&dpart, (size_t)grid * sizeof(float)));
  CHECK(cudaMalloc(&dsum, sizeof(float)));
  CHECK(cudaMalloc(&dmax, sizeof(int)));
  CHECK(cudaMemcpy(dfin, hf, (size_t)n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dint, hi, (size_t)n * sizeof(int), cudaMemcpyHostToDevice));
  int init = -2147483647 - 1;
  CHECK(cudaMemcpy(dmax, &init, sizeof(int), cudaMemcpyHostToDevice));

  sum_partials<<<grid, block>>>(dfin, dpart, n);
  CHECK_LAUNCH();
  sum_partials<<<1, block>>>(dpart, dsum, grid);
  CHECK_LAUNCH();
  max_xor<<<grid, block>>>(dint, dmax, n);
  CHECK_LAUNCH();
  CHECK(cudaDeviceSynchronize());
  float got;
  int got_max;
  CHECK(cudaMemcpy(&got, dsum, sizeof(float), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(&got_max, dmax, sizeof(int), cudaMemcpyDeviceToHost));

  long double want = pairwise(hf, n);
  double m = ceil((double)n / ((double)grid * block));
  double steps = m + ceil((double)grid / block) + 2.0 * log2((double)block) + 2.0;
  double tol = 2.0 * steps * 5.9604644775390625e-08 * (double)want;
  double err = fabs((double)((long double)got - want));
  long long bad = 0;
  printf("reduce_shuffle: n=%d block=%d grid=%d sum=%.9g ref=%.9Lg err=%.3g tol=%.3g"
         " max=%d ref=%d\n", n, block, grid, got, want, err, tol, got_max, want_max);
  if (!(err <= tol)) bad++;
  if (got_max != want_max) bad++;
  CHECK(cudaFree(dfin));
  CHECK(cudaFree(dint));
  CHECK(cudaFree(dpart));
  CHECK(cudaFree(dsum));
  CHECK(cudaFree(dmax));
  free(hf);
  free(hi);
  return suite_finish(bad);
}
