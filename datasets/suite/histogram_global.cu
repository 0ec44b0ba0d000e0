// histogram_global.cu -- histogram with every key counted by an atomicAdd
// straight on the global bins (no privatisation): the global-atomics
// counterpart of histogram_shared.cu, same inputs and checks.
//
// usage: histogram_global N [BLOCK] [BINS]
//   N      keys (unsigned int), 1 .. 2^28
//   BLOCK  threads per block, multiple of 32 in 32 .. 1024 (default 256)
//   BINS   number of bins, 1 .. 2^20 (default 256); key k goes to bin k % BINS
// Launches per run: 2, grid min(ceil(N/BLOCK), 1024) with grid-stride loops:
//   1. uniform keys; 2. skewed keys (about 3/4 of them land in bins 0..7, so
//   the global atomics contend heavily on few addresses).
// Check: integer counts, exact against a CPU histogram.
#include "suite_util.h"

#define USAGE "histogram_global N [BLOCK] [BINS]"

__global__ void hist_global(const unsigned int *keys, unsigned int *bins, int n, int nbins) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    atomicAdd(&bins[keys[i] % (unsigned int)nbins], 1u);
}

int main(int argc, char **argv) {
  if (argc < 2 || argc > 4) suite_usage(USAGE);
  int n = (int)suite_arg(argc, argv, 1, 0, 1, 1 << 28, USAGE);
  int block = (int)suite_arg(argc, argv, 2, 256, 32, 1024, USAGE);
  int nbins = (int)suite_arg(argc, argv, 3, 256, 1, 1 << 20, USAGE);
  if (block % 32) suite_usage(USAGE);

  size_t bytes = (size_t)n * sizeof(unsigned int);
  size_t hbytes = (size_t)nbins * sizeof(unsigned int);
  unsigned int *keys[2], *want[2], *got = (unsigned int *)suite_malloc(hbytes);
  lcg_t g = {4242u};
  for (int d = 0; d < 2; d++) {
    keys[d] = (unsigned int *)suite_malloc(bytes);
    want[d] = (unsigned int *)suite_malloc(hbytes);
    memset(want[d], 0, hbytes);
    for (int i = 0; i < n; i++) {
      unsigned int r = lcg_next(&g);
      unsigned int k = (d == 1 && (r >> 30) != 0) ? (lcg_next(&g) >> 29) : lcg_next(&g);
      keys[d][i] = k;
      want[d][k % (unsigned int)nbins]++;
    }
  }
  long long blocks_needed = (n + block - 1) / block;
  int grid = blocks_needed < 1024 ? (int)blocks_needed : 1024;

  unsigned int *dkeys[2], *dbins[2];
  for (int d = 0; d < 2; d++) {
    CHECK(cudaMalloc(&dkeys[d], bytes));
    CHECK(cudaMalloc(&dbins[d], hbytes));
    CHECK(cudaMemcpy(dkeys[d], keys[d], bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemset(dbins[d], 0, hbytes));
  }
  for (int d = 0; d < 2; d++) {
    hist_global<<<grid, block>>>(dkeys[d], dbins[d], n, nbins);
    CHECK_LAUNCH();
  }
  CHECK(cudaDeviceSynchronize());

  long long bad = 0;
  for (int d = 0; d < 2; d++) {
    CHECK(cudaMemcpy(got, dbins[d], hbytes, cudaMemcpyDeviceToHost));
    for (int b = 0; b < nbins; b++)
      if (got[b] != want[d][b]) {
        if (bad < 5) printf("%s bin %d = %u, want %u\n", d ? "skewed" : "uniform", b, got[b], want[d][b]);
        bad++;
      }
    CHECK(cudaFree(dkeys[d]));
    CHECK(cudaFree(dbins[d]));
    free(keys[d]);
    free(want[d]);
  }
  printf("histogram_global: n=%d block=%d bins=%d grid=%d\n", n, block, nbins, grid);
  free(got);
  return suite_finish(bad);
}
