// layernorm_bf16.cu -- layer normalisation in bfloat16, as transformer
// blocks compute it: y = (x - mean) / sqrt(var + eps) * gamma + beta per row.
//
// usage: layernorm_bf16 ROWS COLS [BLOCK]
//   ROWS   rows, 1 .. 65535;  COLS  columns, an even number in 2 .. 16384
//   BLOCK  threads per block (one block a row), a multiple of 32 in 32 .. 1024
//          (default 256)
// The row is read as __nv_bfloat162 pairs and widened to float for the sums
// (mean, then the variance of the deviations: two passes, no cancellation);
// the output is __hfma2(__hmul2(x - mean, rstd), gamma, beta) in bfloat16
// pairs with x - mean also formed in bf16 (__hsub2), eps = 1e-5.
// Launches per run: 1 (layernorm_rows, grid ROWS).
// Check: against a double CPU version from the same bf16 inputs: the
// device's bf16 steps (x - mean, the product with rstd, the fma with gamma
// and beta) each round to 8 significant bits, so each output is within
// 2^-6 relative + 2^-6 absolute (|gamma|, |beta| <= 1, |y| <= ~5).
#include "suite_util.h"
#include <cuda_bf16.h>
#include <math.h>

#define USAGE "layernorm_bf16 ROWS COLS [BLOCK]"

__device__ float block_sum(float v, float *sh) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32, nw = blockDim.x / 32;
  __syncthreads();
  if (lane == 0) sh[warp] = v;
  __syncthreads();
  v = lane < nw ? sh[lane] : 0.0f;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__global__ void layernorm_rows(const __nv_bfloat162 *x, const __nv_bfloat162 *gamma,
                               const __nv_bfloat162 *beta, __nv_bfloat162 *y, int pairs) {
  __shared__ float sh[32];
  const __nv_bfloat162 *row = x + (size_t)blockIdx.x * pairs;
  __nv_bfloat162 *out = y + (size_t)blockIdx.x * pairs;
  float s = 0;
  for (int i = threadIdx.x; i < pairs; i += blockDim.x) {
    float2 f = __bfloat1622float2(row[i]);
    s += f.x + f.y;
  }
  float mean = block_sum(s, sh) / (2.0f * pairs);
  float q = 0;
  for (int i = threadIdx.x; i < pairs; i += blockDim.x) {
    float2 f = __bfloat1622float2(row[i]);
    q += (f.x - mean) * (f.x - mean) + (f.y - mean) * (f.y - mean);
  }
  float var = block_sum(q, sh) / (2.0f * pairs);
  __nv_bfloat162 m2 = __float2bfloat162_rn(mean), r2 = __float2bfloat162_rn(rsqrtf(var + 1e-5f));
  for (int i = threadIdx.x; i < pairs; i += blockDim.x) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    out[i] = __hfma2(__hmul2(__hsub2(row[i], m2), r2), gamma[i], beta[i]);
#else /* machine code before sm_80 (no bf16 arithmetic): the same steps in
         float, each rounded to bf16 (the emulator runs the compute_90 PTX) */
    float2 xv = __bfloat1622float2(row[i]), mv = __bfloat1622float2(m2);
    float2 rv = __bfloat1622float2(r2), gv = __bfloat1622float2(gamma[i]);
    float2 bv = __bfloat1622float2(beta[i]);
    float2 d = __bfloat1622float2(__floats2bfloat162_rn(xv.x - mv.x, xv.y - mv.y));
    float2 p = __bfloat1622float2(__floats2bfloat162_rn(d.x * rv.x, d.y * rv.y));
    out[i] = __floats2bfloat162_rn(fmaf(p.x, gv.x, bv.x), fmaf(p.y, gv.y, bv.y));
#endif
  }
}

static double bf(__nv_bfloat16 v) { return (double)__bfloat162float(v); }

int main(int argc, char **argv) {
  int rows = (int)suite_arg(argc, argv, 1, -1, 1, 65535, USAGE);
  int cols = (int)suite_arg(argc, argv, 2, -1, 2, 16384, USAGE);
  int block = (int)suite_arg(argc, argv, 3, 256, 32, 1024, USAGE);
  if (cols % 2 || block % 32) suite_usage(USAGE);
  size_t n = (size_t)rows * cols;
  __nv_bfloat16 *hx = (__nv_bfloat16 *)suite_malloc(n * 2), *hy = (__nv_bfloat16 *)suite_malloc(n * 2);
  __nv_bfloat16 *hg = (__nv_bfloat16 *)suite_malloc(cols * 2), *hb = (__nv_bfloat16 *)suite_malloc(cols * 2);
  lcg_t g = {20250314u};
  for (size_t i = 0; i < n; i++) hx[i] = __float2bfloat16(lcg_unit(&g) * 4.0f - 1.0f);
  for (int c = 0; c < cols; c++) {
    hg[c] = __float2bfloat16(0.5f + 0.5f * lcg_unit(&g));
    hb[c] = __float2bfloat16(lcg_unit(&g) - 0.5f);
  }
  __nv_bfloat16 *dx, *dy, *dg, *db;
  CHECK(cudaMalloc(&dx, n * 2));
  CHECK(cudaMalloc(&dy, n * 2));
  CHECK(cudaMalloc(&dg, cols * 2));
  CHECK(cudaMalloc(&db, cols * 2));
  CHECK(cudaMemcpy(dx, hx, n * 2, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dg, hg, cols * 2, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(db, hb, cols * 2, cudaMemcpyHostToDevice));
  layernorm_rows<<<rows, block>>>((const __nv_bfloat162 *)dx, (const __nv_bfloat162 *)dg,
                                  (const __nv_bfloat162 *)db, (__nv_bfloat162 *)dy, cols / 2);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(hy, dy, n * 2, cudaMemcpyDeviceToHost));
  long long bad = 0;
  for (int r = 0; r < rows; r++) {
    double mean = 0, var = 0;
    for (int c = 0; c < cols; c++) mean += bf(hx[(size_t)r * cols + c]);
    mean /= cols;
    for (int c = 0; c < cols; c++) var += pow(bf(hx[(size_t)r * cols + c]) - mean, 2);
    var /= cols;
    double rstd = 1 / sqrt(var + 1e-5);
    for (int c = 0; c < cols; c++) {
      double want = (bf(hx[(size_t)r * cols + c]) - mean) * rstd * bf(hg[c]) + bf(hb[c]);
      double y = bf(hy[(size_t)r * cols + c]);
      if (!(fabs(y - want) <= ldexp(fabs(want), -6) + ldexp(1.0, -6))) {
        if (bad < 5) fprintf(stderr, "y[%d][%d] = %.6g, want %.6g\n", r, c, y, want);
        bad++;
      }
    }
  }
  CHECK(cudaFree(dx));
  CHECK(cudaFree(dy));
  CHECK(cudaFree(dg));
  CHECK(cudaFree(db));
  free(hx); free(hy); free(hg); free(hb);
  return suite_finish(bad);
}
