// triad.cu -- STREAM-style bandwidth kernel: a[i] = b[i] + s * c[i].
//
// usage: triad N [BLOCK] [ITERS]
//   N      elements per array (float), 1 .. 2^28
//   BLOCK  threads per block, 32 .. 1024, multiple of 32 (default 256)
//   ITERS  number of triad launches (default 10); launch k uses s = k % 4 + 1
// Launches per run: ITERS (all with grid ceil(N/BLOCK)).
//
// Why: the purest memory-bound kernel (12 bytes moved per 2 flops); it anchors
// the bandwidth end of the time model.
// Check: b and c are multiples of 1/8 in [-16, 16) and s is a small integer, so
// s*c and b + s*c are exact in float (at most 11 significant bits) whether or
// not the GPU fuses them into one FMA: the comparison is exact.
#include "suite_util.h"

#define USAGE "triad N [BLOCK] [ITERS]"

__global__ void triad(float *a, const float *b, const float *c, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = b[i] + s * c[i];
}

int main(int argc, char **argv) {
  if (argc < 2 || argc > 4) suite_usage(USAGE);
  int n = (int)suite_arg(argc, argv, 1, 0, 1, 1 << 28, USAGE);
  int block = (int)suite_arg(argc, argv, 2, 256, 32, 1024, USAGE);
  int iters = (int)suite_arg(argc, argv, 3, 10, 1, 100000, USAGE);
  if (block % 32) suite_usage(USAGE);

  size_t bytes = (size_t)n * sizeof(float);
  float *hb = (float *)suite_malloc(bytes), *hc = (float *)suite_malloc(bytes);
  float *ha = (float *)suite_malloc(bytes);
  lcg_t g = {12345u};
  for (int i = 0; i < n; i++) {
    hb[i] = (float)lcg_below(&g, 256) / 8.0f - 16.0f;
    hc[i] = (float)lcg_below(&g, 256) / 8.0f - 16.0f;
  }
  float *da, *db, *dc;
  CHECK(cudaMalloc(&da, bytes));
  CHECK(cudaMalloc(&db, bytes));
  CHECK(cudaMalloc(&dc, bytes));
  CHECK(cudaMemcpy(db, hb, bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dc, hc, bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemset(da, 0, bytes));

  int grid = (n + block - 1) / block;
  float s = 0.0f;
  for (int k = 0; k < iters; k++) {
    s = (float)(k % 4 + 1);
    triad<<<grid, block>>>(da, db, dc, s, n);
    CHECK_LAUNCH();
  }
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemcpy(ha, da, bytes, cudaMemcpyDeviceToHost));

  long long bad = 0;
  for (int i = 0; i < n; i++) {
    float want = hb[i] + s * hc[i];
    if (ha[i] != want) {
      if (bad < 5) printf("a[%d] = %g, want %g\n", i, ha[i], want);
      bad++;
    }
  }
  CHECK(cudaFree(da));
  CHECK(cudaFree(db));
  CHECK(cudaFree(dc));
  free(ha);
  free(hb);
  free(hc);
  return suite_finish(bad);
}
