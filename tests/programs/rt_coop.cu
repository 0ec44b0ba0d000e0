/*
 * rt_coop.cu -- launches the emulator cannot run as a GPU does, refused
 * with cudaErrorNotSupported and named (tests/test_run.c): a cooperative
 * launch of a kernel that synchronises the grid (cooperative groups'
 * this_grid().sync()), a kernel with __cluster_dims__, a cudaLaunchKernelEx
 * with a cluster dimension, a kernel given a required cluster width by
 * cudaFuncSetAttribute, and a kernel calling device-side malloc.  The
 * module's other kernels must still run: the program checks each error,
 * then computes the same sum without grid synchronisation (two launches)
 * and compares it with the CPU's: it prints "PASS coop" when the refusals
 * and the fallback both hold.
 */
#include <cooperative_groups.h>

#include "rt_check.h"

namespace cg = cooperative_groups;

/* each block sums its part, the grid synchronises, block 0 adds the parts */
__global__ void grid_sum(const int *x, int n, int *part, int *total) {
  cg::grid_group g = cg::this_grid();
  __shared__ int acc;
  if (threadIdx.x == 0) acc = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    atomicAdd(&acc, x[i]);
  __syncthreads();
  if (threadIdx.x == 0) part[blockIdx.x] = acc;
  g.sync();
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    int t = 0;
    for (unsigned b = 0; b < gridDim.x; b++) t += part[b];
    *total = t;
  }
}

__global__ void part_sum(const int *x, int n, int *part) {
  __shared__ int acc;
  if (threadIdx.x == 0) acc = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    atomicAdd(&acc, x[i]);
  __syncthreads();
  if (threadIdx.x == 0) part[blockIdx.x] = acc;
}

__global__ void add_parts(const int *part, int nb, int *total) {
  int t = 0;
  for (int b = 0; b < nb; b++) t += part[b];
  *total = t;
}

/* clusters exist from sm_90 on; kcast nvcc also builds older machine code */
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
#define CLUSTER_OF_TWO __cluster_dims__(2, 1, 1)
#else
#define CLUSTER_OF_TWO
#endif
__global__ void CLUSTER_OF_TWO clustered(int *p) { p[blockIdx.x] = blockIdx.x; }

__global__ void plain(int *p) { p[blockIdx.x] = blockIdx.x; }

__global__ void heap(int *p) {
  int *q = (int *)malloc(4 * sizeof(int));
  q[0] = threadIdx.x;
  p[threadIdx.x] = q[0];
  free(q);
}

int main() {
  enum { N = 10000, B = 8 };
  static int h[N];
  int ref = 0;
  for (int i = 0; i < N; i++) h[i] = i % 13, ref += h[i];
  int *x, *part, *total, n = N, t = 0;
  CHECK(cudaMalloc(&x, sizeof h));
  CHECK(cudaMalloc(&part, B * sizeof(int)));
  CHECK(cudaMalloc(&total, sizeof(int)));
  CHECK(cudaMemcpy(x, h, sizeof h, cudaMemcpyHostToDevice));
  void *args[] = {&x, &n, &part, &total};
  EXPECT_ERR(cudaLaunchCooperativeKernel((const void *)grid_sum, dim3(B), dim3(128), args, 0, 0),
             cudaErrorNotSupported);
  clustered<<<4, 32>>>(part);
  EXPECT_ERR(cudaGetLastError(), cudaErrorNotSupported);
  cudaLaunchAttribute at;
  at.id = cudaLaunchAttributeClusterDimension;
  at.val.clusterDim.x = 2, at.val.clusterDim.y = 1, at.val.clusterDim.z = 1;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(4);
  cfg.blockDim = dim3(32);
  cfg.attrs = &at;
  cfg.numAttrs = 1;
  EXPECT_ERR(cudaLaunchKernelEx(&cfg, plain, part), cudaErrorNotSupported);
  CHECK(cudaFuncSetAttribute(plain, cudaFuncAttributeRequiredClusterWidth, 2));
  plain<<<4, 32>>>(part);
  EXPECT_ERR(cudaGetLastError(), cudaErrorNotSupported);
  CHECK(cudaFuncSetAttribute(plain, cudaFuncAttributeRequiredClusterWidth, 1));
  plain<<<4, 32>>>(part); /* clusters of one CTA: runs */
  CHECK(cudaGetLastError());
  heap<<<1, 8>>>(part);
  EXPECT_ERR(cudaGetLastError(), cudaErrorNotSupported);
  /* the fallback without grid synchronisation */
  part_sum<<<B, 128>>>(x, N, part);
  add_parts<<<1, 1>>>(part, B, total);
  CHECK(cudaMemcpy(&t, total, sizeof t, cudaMemcpyDeviceToHost));
  EXPECT(t == ref, "the two-launch sum %d, the CPU's %d", t, ref);
  DONE("coop");
}
