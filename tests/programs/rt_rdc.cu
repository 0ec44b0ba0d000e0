/*
 * rt_rdc.cu -- a program in two files linked with relocatable device code
 * (tests/test_run.c builds it with `-rdc=true` and rt_rdc_dev.cu, which
 * defines the __device__ function and variable used here).  kcast does not
 * link PTX across files: the run must say so ("unsupported: relocatable
 * device code") and every launch fail with the error a GPU gives for a
 * kernel it has no image for, never run with unresolved code.  Prints
 * "PASS rdc" only when the results match the CPU's (under a GPU).
 */
#include "rt_check.h"

extern __device__ int twice(int x);
extern __device__ int table[4];

__global__ void use_other_file(int *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = twice(p[i]) + table[i % 4];
}

void launch_other(int *p, int n); /* rt_rdc_dev.cu */

int main() {
  enum { N = 256 };
  int h[N], o[N], t[4] = {10, 20, 30, 40};
  for (int i = 0; i < N; i++) h[i] = i;
  int *d;
  CHECK(cudaMalloc(&d, sizeof h));
  CHECK(cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpyToSymbol(table, t, sizeof t));
  use_other_file<<<1, N>>>(d, N);
  CHECK(cudaGetLastError());
  launch_other(d, N);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(o, d, sizeof o, cudaMemcpyDeviceToHost));
  int ok = 1;
  for (int i = 0; i < N; i++) ok &= o[i] == 2 * (2 * h[i] + t[i % 4]) + 1;
  EXPECT(ok, "device code linked across two files");
  DONE("rdc");
}
