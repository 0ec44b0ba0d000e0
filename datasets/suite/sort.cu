// sort.cu -- bitonic sort of unsigned int keys, one launch per merge step.
//
// usage: sort N [BLOCK]
//   N      keys, 2 .. 2^26; padded with 0xffffffff up to P = next power of two
//   BLOCK  threads per block, multiple of 32 in 32 .. 1024 (default 256)
// The network has log2(P) stages; stage k (k = 2, 4, .., P) has steps j = k/2,
// k/4, .., 1, and each step is one launch of P/2 threads, each comparing and
// maybe swapping one pair (i, i ^ j) in the direction given by bit k of i.
// Launches per run: log2(P) * (log2(P) + 1) / 2, grid ceil(P/2 / BLOCK);
// e.g. N = 2^10 -> 55, 2^16 -> 136, 2^20 -> 210, 2^22 -> 253.
// Check: exact, against qsort of the same keys.
#include "suite_util.h"

#define USAGE "sort N [BLOCK]"

__global__ void bitonic_step(unsigned int *a, unsigned int j, unsigned int k, unsigned int half) {
  unsigned int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= half) return;
  unsigned int i = 2 * j * (t / j) + (t % j);  // lower index of the pair; bit j of i is 0
  unsigned int p = i + j;
  unsigned int x = a[i], y = a[p];
  bool ascending = (i & k) == 0;
  if ((x > y) == ascending) {
    a[i] = y;
    a[p] = x;
  }
}

static int cmp_u32(const void *pa, const void *pb) {
  unsigned int a = *(const unsigned int *)pa, b = *(const unsigned int *)pb;
  return (a > b) - (a < b);
}

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3) suite_usage(USAGE);
  int n = (int)suite_arg(argc, argv, 1, 0, 2, 1 << 26, USAGE);
  int block = (int)suite_arg(argc, argv, 2, 256, 32, 1024, USAGE);
  if (block % 32) suite_usage(USAGE);
  unsigned int p = 1;
  while (p < (unsigned int)n) p <<= 1;

  size_t pbytes = (size_t)p * sizeof(unsigned int);
  unsigned int *h = (unsigned int *)suite_malloc(pbytes);
  unsigned int *got = (unsigned int *)suite_malloc(pbytes);
  lcg_t g = {99991u};
  for (unsigned int i = 0; i < p; i++) h[i] = i < (unsigned int)n ? lcg_next(&g) : 0xffffffffu;

  unsigned int *d;
  CHECK(cudaMalloc(&d, pbytes));
  CHECK(cudaMemcpy(d, h, pbytes, cudaMemcpyHostToDevice));
  unsigned int half = p / 2;
  int grid = (int)((half + block - 1) / block), launches = 0;
  for (unsigned int k = 2; k <= p; k <<= 1)
    for (unsigned int j = k / 2; j > 0; j >>= 1) {
      bitonic_step<<<grid, block>>>(d, j, k, half);
      CHECK_LAUNCH();
      launches++;
    }
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemcpy(got, d, pbytes, cudaMemcpyDeviceToHost));

  qsort(h, n, sizeof(unsigned int), cmp_u32);
  long long bad = 0;
  for (int i = 0; i < n; i++)
    if (got[i] != h[i]) {
      if (bad < 5) printf("key[%d] = %u, want %u\n", i, got[i], h[i]);
      bad++;
    }
  printf("sort: n=%d padded=%u block=%d launches=%d\n", n, p, block, launches);
  CHECK(cudaFree(d));
  free(h);
  free(got);
  return suite_finish(bad);
}
