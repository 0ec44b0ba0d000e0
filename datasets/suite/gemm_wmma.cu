// gemm_wmma.cu -- half-precision matrix multiply on the tensor cores through
// nvcuda::wmma: C = A B with A, B half (row-major), C float.
//
// usage: gemm_wmma N [WARPS]
//   N      matrix order, a multiple of 16 in 16 .. 4096
//   WARPS  warps per block, 1, 2, 4 or 8 (default 4); block (32*WARPS) threads
// Each warp owns one 16x16 tile of C: it walks k in steps of 16, loading a
// 16x16 fragment of A (row-major) and of B (row-major), and accumulates
// wmma::mma_sync in a float fragment that it stores at the end.  The grid
// is (N/16)^2 warps: ceil((N/16)^2 / WARPS) blocks.
// Launches per run: 1 (wmma_gemm).
// Check: the inputs are multiples of 1/64 in [-1, 1] (exact in half), so
// every product is exact; a float sum of N such products carries at most
// N rounding errors of 2^-24 relative to the running sum, whose magnitude
// is at most N: |C - C_ref| <= N * N * 2^-24 + 1e-6 against a double CPU
// product (any summation order the tensor cores use).
#include "suite_util.h"
#include <cuda_fp16.h>
#include <math.h>
#include <mma.h>

#define USAGE "gemm_wmma N [WARPS]"

using namespace nvcuda;

__global__ void wmma_gemm(const half *A, const half *B, float *C, int n) {
  int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  int tiles = n / 16;
  if (warp >= tiles * tiles) return; /* whole warps only: blockDim is 32*WARPS */
  int tm = warp / tiles, tn = warp % tiles;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
  wmma::fill_fragment(fc, 0.0f);
  for (int k = 0; k < n; k += 16) {
    wmma::load_matrix_sync(fa, A + (size_t)tm * 16 * n + k, n);
    wmma::load_matrix_sync(fb, B + (size_t)k * n + tn * 16, n);
    wmma::mma_sync(fc, fa, fb, fc);
  }
  wmma::store_matrix_sync(C + (size_t)tm * 16 * n + tn * 16, fc, n, wmma::mem_row_major);
}

int main(int argc, char **argv) {
  int n = (int)suite_arg(argc, argv, 1, -1, 16, 4096, USAGE);
  int warps = (int)suite_arg(argc, argv, 2, 4, 1, 8, USAGE);
  if (n % 16 || (warps & (warps - 1))) suite_usage(USAGE);
  size_t nn = (size_t)n * n;
  half *ha = (half *)suite_malloc(nn * sizeof(half)), *hb = (half *)suite_malloc(nn * sizeof(half));
  float *fa = (float *)suite_malloc(nn * sizeof(float)), *fb = (float *)suite_malloc(nn * sizeof(float));
  float *hc = (float *)suite_malloc(nn * sizeof(float));
  lcg_t g = {20250311u};
  for (size_t i = 0; i < nn; i++) {
    fa[i] = ((int)lcg_below(&g, 129) - 64) / 64.0f;
    fb[i] = ((int)lcg_below(&g, 129) - 64) / 64.0f;
    ha[i] = __float2half(fa[i]);
    hb[i] = __float2half(fb[i]);
  }
  half *da, *db;
  float *dc;
  CHECK(cudaMalloc(&da, nn * sizeof(half)));
  CHECK(cudaMalloc(&db, nn * sizeof(half)));
  CHECK(cudaMalloc(&dc, nn * sizeof(float)));
  CHECK(cudaMemcpy(da, ha, nn * sizeof(half), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(db, hb, nn * sizeof(half), cudaMemcpyHostToDevice));
  long long tiles = (long long)(n / 16) * (n / 16);
  int blocks = (int)((tiles + warps - 1) / warps);
  wmma_gemm<<<blocks, 32 * warps>>>(da, db, dc, n);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(hc, dc, nn * sizeof(float), cudaMemcpyDeviceToHost));
  long long bad = 0;
  double tol = (double)n * n * ldexp(1.0, -24) + 1e-6;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double s = 0;
      for (int k = 0; k < n; k++) s += (double)fa[(size_t)i * n + k] * fb[(size_t)k * n + j];
      if (!(fabs(hc[(size_t)i * n + j] - s) <= tol)) {
        if (bad < 5) fprintf(stderr, "C[%d][%d] = %.9g, want %.9g\n", i, j, hc[(size_t)i * n + j], s);
        bad++;
      }
    }
  CHECK(cudaFree(da));
  CHECK(cudaFree(db));
  CHECK(cudaFree(dc));
  free(ha); free(hb); free(fa); free(fb); free(hc);
  return suite_finish(bad);
}
