/*
 * rt_assert.cu -- device assert() (tests/test_run.c).  One kernel of the
 * module asserts; another runs first and is checked against a CPU
 * reference (a module with an assert in one kernel must stay runnable).
 * The asserting kernel fails on element 5 (negative): the launch must
 * fail with cudaErrorAssert, sticky for later calls, as on a GPU.  The
 * program reports what it saw and exits 0 (careless host code); with the
 * argument "ok" no element is negative and the assert passes.
 */
#include <cassert>
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

__global__ void square(const int *x, int *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] * x[i];
}

__global__ void check_nonneg(const int *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) assert(x[i] >= 0);
}

int main(int argc, char **argv) {
  enum { N = 64 };
  int h[N], o[N];
  int ok = argc > 1 && !strcmp(argv[1], "ok");
  for (int i = 0; i < N; i++) h[i] = i == 5 && !ok ? -3 : i;
  int *x, *y;
  cudaMalloc(&x, sizeof h);
  cudaMalloc(&y, sizeof h);
  cudaMemcpy(x, h, sizeof h, cudaMemcpyHostToDevice);
  square<<<1, N>>>(x, y, N);
  cudaMemcpy(o, y, sizeof o, cudaMemcpyDeviceToHost);
  for (int i = 0; i < N; i++)
    if (o[i] != h[i] * h[i]) {
      printf("FAIL square %d\n", i);
      return 1;
    }
  check_nonneg<<<1, N>>>(x, N);
  cudaError_t e = cudaDeviceSynchronize();
  cudaError_t later = cudaMemcpy(o, y, sizeof o, cudaMemcpyDeviceToHost);
  printf("square ok; assert kernel: %s; later call: %s\n", cudaGetErrorName(e),
         cudaGetErrorName(later));
  return 0;
}
