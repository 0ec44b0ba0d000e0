/*
 * rt_unsupported.cu -- entry points the cudart replacement does not
 * implement (tests/test_run.c): cudaGraphCreate is called twice and must
 * return cudaErrorNotSupported both times (the replacement names it on
 * stderr once); cudaIpcGetMemHandle likewise.  Prints PASS when both hold and
 * the program keeps running normally afterwards.
 */
#include <cstdio>
#include <cuda_runtime.h>

int main() {
  cudaGraph_t g;
  cudaError_t a = cudaGraphCreate(&g, 0), b = cudaGraphCreate(&g, 0);
  cudaIpcMemHandle_t ipc;
  int *dm = NULL;
  cudaMalloc(&dm, 64);
  cudaError_t c = cudaIpcGetMemHandle(&ipc, dm);
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
