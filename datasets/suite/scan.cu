// scan.cu -- inclusive prefix sum over a large array: block scan, scan of the
// block sums (recursively), then add the scanned sums back.
//
// usage: scan N [BLOCK]
//   N      elements (unsigned int), 1 .. 2^28
//   BLOCK  threads per block, power of two in 32 .. 1024 (default 256)
// Each block scans a tile of 4*BLOCK elements: coalesced load into shared
// memory, a sequential scan of 4 elements per thread, a Hillis-Steele scan of
// the per-thread totals, write-back; the tile total goes to a sums array.
// Level k+1 scans level k's sums the same way until one tile holds them all.
// Launches per run: L scan_tiles + (L-1) add_offsets, where L is the number of
// levels, the smallest L >= 1 with N <= (4*BLOCK)^L; e.g. N = 2^20, BLOCK 256:
// tiles 1024 -> 1: 2 + 1 = 3 launches; N = 2^24, BLOCK 128: 32768 -> 64 -> 1:
// 3 + 2 = 5 launches.
// Check: unsigned arithmetic modulo 2^32 on both sides, so the result is exact.
#include "suite_util.h"

#define USAGE "scan N [BLOCK]"
#define ITEMS 4

__global__ void scan_tiles(const unsigned int *in, unsigned int *out,
                           unsigned int *sums, int n) {
  extern __shared__ unsigned int sm[];
  unsigned int *tile = sm;                     // ITEMS * blockDim.x values
  unsigned int *tot = sm + ITEMS * blockDim.x; // blockDim.x thread totals
  int t = threadIdx.x, b = blockDim.x;
  size_t base = (size_t)blockIdx.x * ITEMS * b;
  for (int k = 0; k < ITEMS; k++) {
    size_t i = base + (size_t)k * b + t;
    tile[k * b + t] = i < (size_t)n ? in[i] : 0u;
  }
  __syncthreads();
  unsigned int run = 0;
  for (int k = 0; k < ITEMS; k++) {
    run += tile[ITEMS * t + k];
    tile[ITEMS * t + k] = run;
  }
  tot[t] = run;
  for (int off = 1; off < b; off <<= 1) {
    __syncthreads();
    unsigned int v = t >= off ? tot[t - off] : 0u;
    __syncthreads();
    tot[t] += v;
  }
  __syncthreads();
  unsigned int excl = tot[t] - run;
  for (int k = 0; k < ITEMS; k++) tile[ITEMS * t + k] += excl;
  __syncthreads();
  for (int k = 0; k < ITEMS; k++) {
    size_t i = base + (size_t)k * b + t;
    if (i < (size_t)n) out[i] = tile[k * b + t];
  }
  if (t == b - 1) sums[blockIdx.x] = tot[t];
}

// Tile b+1 gets the inclusive sum of tiles 0..b added (grid = tiles - 1).
__global__ void add_offsets(unsigned int *out, const unsigned int *scanned_sums, int n) {
  int tile = blockIdx.x + 1;
  unsigned int add = scanned_sums[blockIdx.x];
  size_t base = (size_t)tile * ITEMS * blockDim.x;
  for (int k = 0; k < ITEMS; k++) {
    size_t i = base + (size_t)k * blockDim.x + threadIdx.x;
    if (i < (size_t)n) out[i] += add;
  }
}

static int g_launches = 0;

// Scans d_in[0..n) into d_out; level buffers come from bufs[level...].
static void scan_level(const unsigned int *d_in, unsigned int *d_out, int n,
                       int block, unsigned int **bufs, int level) {
  int per = ITEMS * block;
  int tiles = (n + per - 1) / per;
  size_t shm = (size_t)(ITEMS + 1) * block * sizeof(unsigned int);
  scan_tiles<<<tiles, block, shm>>>(d_in, d_out, bufs[level], n);
  CHECK_LAUNCH();
  g_launches++;
  if (tiles == 1) return;
  scan_level(bufs[level], bufs[level], tiles, block, bufs, level + 1);
  add_offsets<<<tiles - 1, block>>>(d_out, bufs[level], n);
  CHECK_LAUNCH();
  g_launches++;
}

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3) suite_usage(USAGE);
  int n = (int)suite_arg(argc, argv, 1, 0, 1, 1 << 28, USAGE);
  int block = (int)suite_arg(argc, argv, 2, 256, 32, 1024, USAGE);
  if (!suite_is_pow2(block)) suite_usage(USAGE);

  size_t bytes = (size_t)n * sizeof(unsigned int);
  unsigned int *h = (unsigned int *)suite_malloc(bytes);
  unsigned int *hout = (unsigned int *)suite_malloc(bytes);
  lcg_t g = {31337u};
  for (int i = 0; i < n; i++) h[i] = lcg_below(&g, 1000u);

  unsigned int *din, *dout, *bufs[16];
  int nb = 0, per = ITEMS * block;
  for (long long len = n; nb < 16;) {
    long long tiles = (len + per - 1) / per;
    CHECK(cudaMalloc(&bufs[nb], (size_t)tiles * sizeof(unsigned int)));
    nb++;
    if (tiles == 1) break;
    len = tiles;
  }
  CHECK(cudaMalloc(&din, bytes));
  CHECK(cudaMalloc(&dout, bytes));
  CHECK(cudaMemcpy(din, h, bytes, cudaMemcpyHostToDevice));
  scan_level(din, dout, n, block, bufs, 0);
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemcpy(hout, dout, bytes, cudaMemcpyDeviceToHost));

  long long bad = 0;
  unsigned int run = 0;
  for (int i = 0; i < n; i++) {
    run += h[i];
    if (hout[i] != run) {
      if (bad < 5) printf("out[%d] = %u, want %u\n", i, hout[i], run);
      bad++;
    }
  }
  printf("scan: n=%d block=%d launches=%d\n", n, block, g_launches);
  for (int i = 0; i < nb; i++) CHECK(cudaFree(bufs[i]));
  CHECK(cudaFree(din));
  CHECK(cudaFree(dout));
  free(h);
  free(hout);
  return suite_finish(bad);
}
