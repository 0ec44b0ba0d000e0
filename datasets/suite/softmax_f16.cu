// softmax_f16.cu -- row-wise softmax in half precision, as attention layers
// compute it: y = exp(x - max(x)) / sum(exp(x - max(x))) per row.
//
// usage: softmax_f16 ROWS COLS [BLOCK]
//   ROWS   rows, 1 .. 65535;  COLS  columns, an even number in 2 .. 16384
//   BLOCK  threads per block (one block a row), a multiple of 32 in 32 .. 1024
//          (default 128)
// The row is read as __half2 pairs; the maximum is a __hmax2 reduction
// (warp shuffles, then shared memory across warps); exp(x - max) is
// h2exp(__hsub2(...)) in half; the sum accumulates in float; the output is
// __float2half_rn(e / sum) -- the usual mixed-precision recipe.
// Launches per run: 1 (softmax_rows, grid ROWS).
// Check: against a double CPU softmax of the same half inputs: each output
// within 2^-9 relative + 2^-14 absolute (h2exp has about 2^-10 relative
// error, the quotient's rounding to half another 2^-11), every row summing
// to 1 within 2^-7.
#include "suite_util.h"
#include <cuda_fp16.h>
#include <math.h>

#define USAGE "softmax_f16 ROWS COLS [BLOCK]"

__device__ __half2 warp_max2(__half2 v) {
  for (int o = 16; o > 0; o >>= 1) v = __hmax2(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__global__ void softmax_rows(const __half2 *x, __half2 *y, int pairs) {
  __shared__ __half2 wmax[32];
  __shared__ float wsum[32];
  const __half2 *row = x + (size_t)blockIdx.x * pairs;
  __half2 *out = y + (size_t)blockIdx.x * pairs;
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32, nw = blockDim.x / 32;
  __half2 m = __float2half2_rn(-65504.0f);
  for (int i = threadIdx.x; i < pairs; i += blockDim.x) m = __hmax2(m, row[i]);
  m = warp_max2(m);
  if (lane == 0) wmax[warp] = m;
  __syncthreads();
  m = lane < nw ? wmax[lane] : __float2half2_rn(-65504.0f);
  m = warp_max2(m);
  __half mx = __hmax(__low2half(m), __high2half(m));
  __half2 mx2 = __half2half2(mx);
  float s = 0;
  for (int i = threadIdx.x; i < pairs; i += blockDim.x) {
    __half2 e = h2exp(__hsub2(row[i], mx2));
    float2 f = __half22float2(e);
    s += f.x + f.y;
  }
  s = warp_sum(s);
  __syncthreads();
  if (lane == 0) wsum[warp] = s;
  __syncthreads();
  s = lane < nw ? wsum[lane] : 0.0f;
  s = warp_sum(s);
  float inv = 1.0f / s;
  for (int i = threadIdx.x; i < pairs; i += blockDim.x) {
    float2 f = __half22float2(h2exp(__hsub2(row[i], mx2)));
    out[i] = __floats2half2_rn(f.x * inv, f.y * inv);
  }
}

int main(int argc, char **argv) {
  int rows = (int)suite_arg(argc, argv, 1, -1, 1, 65535, USAGE);
  int cols = (int)suite_arg(argc, argv, 2, -1, 2, 16384, USAGE);
  int block = (int)suite_arg(argc, argv, 3, 128, 32, 1024, USAGE);
  if (cols % 2 || block % 32) suite_usage(USAGE);
  size_t n = (size_t)rows * cols;
  __half *hx = (__half *)suite_malloc(n * sizeof(__half)), *hy = (__half *)suite_malloc(n * sizeof(__half));
  lcg_t g = {20250313u};
  for (size_t i = 0; i < n; i++) hx[i] = __float2half(lcg_unit(&g) * 16.0f - 8.0f);
  __half *dx, *dy;
  CHECK(cudaMalloc(&dx, n * sizeof(__half)));
  CHECK(cudaMalloc(&dy, n * sizeof(__half)));
  CHECK(cudaMemcpy(dx, hx, n * sizeof(__half), cudaMemcpyHostToDevice));
  softmax_rows<<<rows, block>>>((const __half2 *)dx, (__half2 *)dy, cols / 2);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(hy, dy, n * sizeof(__half), cudaMemcpyDeviceToHost));
  long long bad = 0;
  for (int r = 0; r < rows; r++) {
    double mx = -1e300, s = 0, got = 0;
    for (int c = 0; c < cols; c++) mx = fmax(mx, (double)__half2float(hx[(size_t)r * cols + c]));
    for (int c = 0; c < cols; c++) s += exp((double)__half2float(hx[(size_t)r * cols + c]) - mx);
    for (int c = 0; c < cols; c++) {
      double want = exp((double)__half2float(hx[(size_t)r * cols + c]) - mx) / s;
      double y = __half2float(hy[(size_t)r * cols + c]);
      got += y;
      if (!(fabs(y - want) <= ldexp(want, -9) + ldexp(1.0, -14))) {
        if (bad < 5) fprintf(stderr, "y[%d][%d] = %.6g, want %.6g\n", r, c, y, want);
        bad++;
      }
    }
    if (!(fabs(got - 1) <= ldexp(1.0, -7))) {
      if (bad < 5) fprintf(stderr, "row %d sums to %.6g\n", r, got);
      bad++;
    }
  }
  CHECK(cudaFree(dx));
  CHECK(cudaFree(dy));
  free(hx);
  free(hy);
  return suite_finish(bad);
}
