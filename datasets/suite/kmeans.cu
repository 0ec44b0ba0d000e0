// kmeans.cu -- Lloyd's k-means in 4 dimensions, fixed number of iterations.
//
// usage: kmeans N [BLOCK] [ITERS] [K]
//   N      points, 64 .. 2^24
//   BLOCK  threads per block, multiple of 32 in 32 .. 1024 (default 256)
//   ITERS  iterations (default 10), 1 .. 1000
//   K      clusters, 2 .. 64 (default 16)
// Points have integer coordinates in [0, 1024) scattered around K hidden
// centres; the initial centroids are the first K points.
// Per iteration two launches:
//   1. assign (grid ceil(N/BLOCK)): centroids staged in shared memory, nearest
//      centroid per point, label written, coordinate sums (64-bit integer) and
//      counts accumulated with shared-memory atomics, flushed per block with
//      global atomics;
//   2. update (1 block of 64 threads): new centroid = sum / count (kept when the
//      cluster is empty), then the sums are cleared for the next iteration.
// Launches per run: 2 * ITERS (after one cudaMemset).
// Check: bit-exact.  Coordinates are integers, sums are exact integers, and
// every float operation is written with explicit round-to-nearest intrinsics
// (no FMA contraction) in the same order as the CPU code, which runs plain
// IEEE single precision; so labels and centroids must match exactly.
#include "suite_util.h"

#define USAGE "kmeans N [BLOCK] [ITERS] [K]"
#define DIM 4
#define MAXK 64

__global__ void assign(const float *pts, const float *cent, int *label,
                       unsigned long long *sums, unsigned int *counts, int n, int k) {
  __shared__ float sc[MAXK * DIM];
  __shared__ unsigned long long ssum[MAXK * DIM];
  __shared__ unsigned int scnt[MAXK];
  for (int i = threadIdx.x; i < k * DIM; i += blockDim.x) {
    sc[i] = cent[i];
    ssum[i] = 0;
  }
  for (int i = threadIdx.x; i < k; i += blockDim.x) scnt[i] = 0;
  __syncthreads();
  int p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p < n) {
    float x[DIM];
    for (int d = 0; d < DIM; d++) x[d] = pts[(size_t)p * DIM + d];
    int best = 0;
    float bestd = 0.0f;
    for (int c = 0; c < k; c++) {
      float dist = 0.0f;
      for (int d = 0; d < DIM; d++) {
        float diff = __fsub_rn(x[d], sc[c * DIM + d]);
        dist = __fadd_rn(dist, __fmul_rn(diff, diff));
      }
      if (c == 0 || dist < bestd) {
        bestd = dist;
        best = c;
      }
    }
    label[p] = best;
    for (int d = 0; d < DIM; d++) atomicAdd(&ssum[best * DIM + d], (unsigned long long)x[d]);
    atomicAdd(&scnt[best], 1u);
  }
  __syncthreads();
  for (int i = threadIdx.x; i < k * DIM; i += blockDim.x)
    if (ssum[i]) atomicAdd(&sums[i], ssum[i]);
  for (int i = threadIdx.x; i < k; i += blockDim.x)
    if (scnt[i]) atomicAdd(&counts[i], scnt[i]);
}

__global__ void update(float *cent, unsigned long long *sums, unsigned int *counts, int k) {
  int c = threadIdx.x;
  if (c >= k) return;
  unsigned int cnt = counts[c];
  for (int d = 0; d < DIM; d++) {
    if (cnt) cent[c * DIM + d] = __fdiv_rn(__ull2float_rn(sums[c * DIM + d]), __uint2float_rn(cnt));
    sums[c * DIM + d] = 0;
  }
  counts[c] = 0;
}

int main(int argc, char **argv) {
  if (argc < 2 || argc > 5) suite_usage(USAGE);
  int n = (int)suite_arg(argc, argv, 1, 0, 64, 1 << 24, USAGE);
  int block = (int)suite_arg(argc, argv, 2, 256, 32, 1024, USAGE);
  int iters = (int)suite_arg(argc, argv, 3, 10, 1, 1000, USAGE);
  int k = (int)suite_arg(argc, argv, 4, 16, 2, MAXK, USAGE);
  if (block % 32) suite_usage(USAGE);

  lcg_t g = {1234567u};
  size_t pbytes = (size_t)n * DIM * sizeof(float);
  float *pts = (float *)suite_malloc(pbytes);
  float centres[MAXK * DIM];
  for (int i = 0; i < k * DIM; i++) centres[i] = (float)(64 + lcg_below(&g, 896));
  for (int p = 0; p < n; p++) {
    int c = (int)lcg_below(&g, (unsigned int)k);
    for (int d = 0; d < DIM; d++) {
      int v = (int)centres[c * DIM + d] + (int)lcg_below(&g, 129) - 64;
      pts[(size_t)p * DIM + d] = (float)v;
    }
  }
  float cent[MAXK * DIM] = {0}, got_cent[MAXK * DIM];
  for (int i = 0; i < k * DIM; i++) cent[i] = pts[i];

  float *dpts, *dcent;
  int *dlabel;
  unsigned long long *dsums;
  unsigned int *dcounts;
  CHECK(cudaMalloc(&dpts, pbytes));
  CHECK(cudaMalloc(&dcent, sizeof cent));
  CHECK(cudaMalloc(&dlabel, (size_t)n * sizeof(int)));
  CHECK(cudaMalloc(&dsums, MAXK * DIM * sizeof(unsigned long long)));
  CHECK(cudaMalloc(&dcounts, MAXK * sizeof(unsigned int)));
  CHECK(cudaMemcpy(dpts, pts, pbytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dcent, cent, sizeof cent, cudaMemcpyHostToDevice));
  CHECK(cudaMemset(dsums, 0, MAXK * DIM * sizeof(unsigned long long)));
  CHECK(cudaMemset(dcounts, 0, MAXK * sizeof(unsigned int)));

  int grid = (n + block - 1) / block;
  for (int it = 0; it < iters; it++) {
    assign<<<grid, block>>>(dpts, dcent, dlabel, dsums, dcounts, n, k);
    CHECK_LAUNCH();
    update<<<1, MAXK>>>(dcent, dsums, dcounts, k);
    CHECK_LAUNCH();
  }
  CHECK(cudaDeviceSynchronize());
  int *got_label = (int *)suite_malloc((size_t)n * sizeof(int));
  CHECK(cudaMemcpy(got_label, dlabel, (size_t)n * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(got_cent, dcent, sizeof got_cent, cudaMemcpyDeviceToHost));

  // CPU reference: the same iterations in plain float, same operation order.
  int *label = (int *)suite_malloc((size_t)n * sizeof(int));
  unsigned long long sums[MAXK * DIM];
  unsigned int counts[MAXK];
  for (int it = 0; it < iters; it++) {
    memset(sums, 0, sizeof sums);
    memset(counts, 0, sizeof counts);
    for (int p = 0; p < n; p++) {
      int best = 0;
      float bestd = 0.0f;
      for (int c = 0; c < k; c++) {
        float dist = 0.0f;
        for (int d = 0; d < DIM; d++) {
          float diff = pts[(size_t)p * DIM + d] - cent[c * DIM + d];
          float sq = diff * diff;
          dist = dist + sq;
        }
        if (c == 0 || dist < bestd) {
          bestd = dist;
          best = c;
        }
      }
      label[p] = best;
      for (int d = 0; d < DIM; d++) sums[best * DIM + d] += (unsigned long long)pts[(size_t)p * DIM + d];
      counts[best]++;
    }
    for (int c = 0; c < k; c++)
      if (counts[c])
        for (int d = 0; d < DIM; d++) cent[c * DIM + d] = (float)sums[c * DIM + d] / (float)counts[c];
  }

  long long bad = 0;
  for (int p = 0; p < n; p++)
    if (got_label[p] != label[p]) {
      if (bad < 5) printf("label[%d] = %d, want %d\n", p, got_label[p], label[p]);
      bad++;
    }
  for (int i = 0; i < k * DIM; i++)
    if (got_cent[i] != cent[i]) {
      if (bad < 10) printf("centroid[%d][%d] = %.9g, want %.9g\n", i / DIM, i % DIM, got_cent[i], cent[i]);
      bad++;
    }
  printf("kmeans: n=%d block=%d iters=%d k=%d\n", n, block, iters, k);
  CHECK(cudaFree(dpts));
  CHECK(cudaFree(dcent));
  CHECK(cudaFree(dlabel));
  CHECK(cudaFree(dsums));
  CHECK(cudaFree(dcounts));
  free(pts);
  free(got_label);
  free(label);
  return suite_finish(bad);
}
