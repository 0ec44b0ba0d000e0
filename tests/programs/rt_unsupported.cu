/*
 * rt_unsupported.cu -- entry points the cudart replacement does not
 * implement (tests/test_run.c): cudaGraphCreate is called twice and must
 * return cudaErrorNotSupported both times (the replacement names it on
 * stderr once); cudaHostGetDevicePointer likewise.  Prints PASS when both hold and
 * the program keeps running normally afterwards.
 */
#include <cstdio>
#include <cuda_runtime.h>

int main() {
  cudaGraph_t g;
  cudaError_t a = cudaGraphCreate(&g, 0), b = cudaGraphCreate(&g, 0);
  void *m = NULL, *h = &g;
  cudaError_t c = cudaHostGetDevicePointer(&m, h, 0);
  cudaGetLastError();
  int *d = NULL;
  cudaError_t e = cudaMalloc(&d, 64);
  if (a == cudaErrorNotSupported && b == cudaErrorNotSupported && c == cudaErrorNotSupported &&
      e == cudaSuccess) {
    printf("PASS unsupported\n");
    return 0;
  }
  printf("FAIL %d %d %d %d\n", (int)a, (int)b, (int)c, (int)e);
  return 1;
}
