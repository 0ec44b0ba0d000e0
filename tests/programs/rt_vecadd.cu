/*
 * rt_vecadd.cu -- `kcast run`'s first test program (tests/test_run.c).
 *
 * c = a + b over n floats (argument 1, default 1000) with one launch of a
 * 256-thread grid; copies in, copies out, checks every element against the
 * CPU and prints PASS only when all match.  Each thread with i < n loads
 * two floats, so the emulated launch's op.ld.global.* total is exactly 2n:
 * the test checks that number in the dataset.
 */
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(x)                                                          \
  do {                                                                    \
    cudaError_t e_ = (x);                                                 \
    if (e_ != cudaSuccess) {                                              \
      fprintf(stderr, "rt_vecadd: %s: %s\n", #x, cudaGetErrorString(e_)); \
      return 1;                                                           \
    }                                                                     \
  } while (0)

__global__ void vecadd(const float *a, const float *b, float *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1000;
  if (n < 1) n = 1;
  size_t bytes = (size_t)n * sizeof(float);
  float *a = (float *)malloc(bytes), *b = (float *)malloc(bytes), *c = (float *)malloc(bytes);
  for (int i = 0; i < n; i++) {
    a[i] = (float)i;
    b[i] = 0.5f * (float)(n - i);
  }
  float *da, *db, *dc;
  CHECK(cudaMalloc(&da, bytes));
  CHECK(cudaMalloc(&db, bytes));
  CHECK(cudaMalloc(&dc, bytes));
  CHECK(cudaMemcpy(da, a, bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(db, b, bytes, cudaMemcpyHostToDevice));
  vecadd<<<(n + 255) / 256, 256>>>(da, db, dc, n);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemcpy(c, dc, bytes, cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < n; i++)
    if (c[i] != a[i] + b[i]) bad++;
  CHECK(cudaFree(da));
  CHECK(cudaFree(db));
  CHECK(cudaFree(dc));
  free(a);
  free(b);
  free(c);
  if (bad) {
    printf("FAIL %d of %d elements differ\n", bad, n);
    return 1;
  }
  printf("PASS vecadd n=%d\n", n);
  return 0;
}
