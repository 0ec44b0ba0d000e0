/*
 * rt_symbols.cu -- __constant__ and __device__ globals through the cudart
 * replacement (tests/test_run.c).
 *
 * A constant table and a device scale factor are set with
 * cudaMemcpyToSymbol; the kernel adds table[i % 8] * scale to each element
 * and counts processed elements in a __device__ counter (atomicAdd), which
 * the host reads back with cudaMemcpyFromSymbol.  A statically initialised
 * __device__ variable checks that module initialisers survive loading, and
 * cudaGetSymbolAddress/cudaGetSymbolSize must agree with a direct copy.
 * Prints PASS only when everything matches the CPU.
 */
#include <cstdio>
#include <cuda_runtime.h>

#define CHECK(x)                                                           \
  do {                                                                     \
    cudaError_t e_ = (x);                                                  \
    if (e_ != cudaSuccess) {                                               \
      fprintf(stderr, "rt_symbols: %s: %s\n", #x, cudaGetErrorString(e_)); \
      return 1;                                                            \
    }                                                                      \
  } while (0)

__constant__ float table[8];
__device__ float scale;
__device__ unsigned int processed;
__device__ int magic = 1234;

__global__ void apply(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    x[i] += table[i % 8] * scale + (float)magic;
    atomicAdd(&processed, 1u);
  }
}

int main() {
  const int n = 300;
  float h[n], t[8], s = 2.0f;
  for (int i = 0; i < 8; i++) t[i] = (float)(i + 1);
  for (int i = 0; i < n; i++) h[i] = (float)i;
  float *d;
  CHECK(cudaMalloc(&d, sizeof h));
  CHECK(cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpyToSymbol(table, t, sizeof t));
  CHECK(cudaMemcpyToSymbol(scale, &s, sizeof s));
  unsigned int zero = 0;
  CHECK(cudaMemcpyToSymbol(processed, &zero, sizeof zero));
  apply<<<(n + 127) / 128, 128>>>(d, n);
  apply<<<(n + 127) / 128, 128>>>(d, n);
  CHECK(cudaDeviceSynchronize());
  float out[n];
  unsigned int count = 0;
  CHECK(cudaMemcpy(out, d, sizeof out, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpyFromSymbol(&count, processed, sizeof count));
  /* the symbol's address is a device address: copy through it */
  void *addr = NULL;
  size_t size = 0;
  CHECK(cudaGetSymbolAddress(&addr, magic));
  CHECK(cudaGetSymbolSize(&size, magic));
  int m = 0;
  CHECK(cudaMemcpy(&m, addr, sizeof m, cudaMemcpyDeviceToHost));
  /* an offset copy into the table: element 3 becomes 10 */
  float ten = 10.0f;
  CHECK(cudaMemcpyToSymbol(table, &ten, sizeof ten, 3 * sizeof(float)));
  float back[8];
  CHECK(cudaMemcpyFromSymbol(back, table, sizeof back));
  int bad = 0;
  for (int i = 0; i < n; i++)
    if (out[i] != (float)i + 2.0f * (t[i % 8] * s + 1234.0f)) bad++;
  if (count != 2u * n) bad++;
  if (m != 1234 || size != sizeof(int)) bad++;
  if (back[3] != 10.0f || back[2] != 3.0f) bad++;
  CHECK(cudaFree(d));
  if (bad) {
    printf("FAIL rt_symbols: %d mismatches (count %u, magic %d, size %zu)\n", bad, count, m, size);
    return 1;
  }
  printf("PASS symbols\n");
  return 0;
}
