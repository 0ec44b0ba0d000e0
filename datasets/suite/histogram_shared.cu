// histogram_shared.cu -- histogram with per-block privatised bins in shared
// memory (shared-memory atomics), merged into global bins with one global
// atomicAdd per bin per block.
//
// usage: histogram_shared N [BLOCK] [BINS]
//   N      keys (unsigned int), 1 .. 2^28
//   BLOCK  threads per block, multiple of 32 in 32 .. 1024 (default 256)
//   BINS   number of bins, 1 .. 8192 (default 256); key k goes to bin k % BINS
// Launches per run: 2, grid min(ceil(N/BLOCK), 1024) with grid-stride loops:
//   1. uniform keys; 2. skewed keys (about 3/4 of them land in bins 0..7, so
//   the shared atomics contend heavily).
// Check: integer counts, exact against a CPU histogram.
#include "suite_util.h"

#define USAGE "histogram_shared N [BLOCK] [BINS]"

__global__ void hist_shared(const unsigned int *keys, unsigned int *bins, int n, int nbins) {
  extern __shared__ unsigned int local[];
  for (int b = threadIdx.x; b < nbins; b += blockDim.x) local[b] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    atomicAdd(&local[keys[i] % (unsigned int)nbins], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < nbins; b += blockDim.x)
    if (local[b]) atomicAdd(&bins[b], local[b]);
}

int main(int argc, char **argv) {
  if (argc < 2 || argc > 4) suite_usage(USAGE);
  int n = (int)suite_arg(argc, argv, 1, 0, 1, 1 << 28, USAGE);
  int block = (int)suite_arg(argc, argv, 2, 256, 32, 1024, USAGE);
  int nbins = (int)suite_arg(argc, argv, 3, 256, 1, 8192, USAGE);
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
    hist_shared<<<grid, block, hbytes>>>(dkeys[d], dbins[d], n, nbins);
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
  printf("histogram_shared: n=%d block=%d bins=%d grid=%d\n", n, block, nbins, grid);
  free(got);
  return suite_finish(bad);
}
