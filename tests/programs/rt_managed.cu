/*
 * rt_managed.cu -- managed memory through the cudart replacement
 * (tests/test_run.c).
 *
 * Arrays from cudaMallocManaged are written on the host, updated by a
 * kernel through the same pointers, and read back on the host after
 * cudaDeviceSynchronize.  The kernel also stores the address it was given,
 * which must equal the host pointer (one address on both sides), counts
 * elements with atomicAdd into a managed counter and bumps two __managed__
 * variables (one statically initialised) that the host reads directly.
 * cudaMemcpy with cudaMemcpyDefault and each explicit direction, cudaMemset,
 * prefetch and advice must work on managed pointers, and an argument
 * "overrun" makes the kernel write one element past a managed array (the
 * emulator stops it under --oob error, drops the write under --oob warn;
 * the program prints the error and exits 0).  Prints PASS only when
 * everything matches.
 */
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

#define CHECK(x)                                                           \
  do {                                                                     \
    cudaError_t e_ = (x);                                                  \
    if (e_ != cudaSuccess) {                                               \
      fprintf(stderr, "rt_managed: %s: %s\n", #x, cudaGetErrorString(e_)); \
      return 1;                                                            \
    }                                                                      \
  } while (0)

__managed__ int bumps = 40;
__managed__ float weights[4] = {1.0f, 2.0f, 3.0f, 4.0f};

__global__ void update(float *x, const int *y, int n, unsigned *count,
                       unsigned long long *seen) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 0) {
    *seen = (unsigned long long)x;
    bumps += 2;
    weights[3] *= 10.0f;
  }
  if (i < n) {
    x[i] = x[i] * 2.0f + (float)y[i] * weights[i % 3];
    atomicAdd(count, 1u);
  }
}

__global__ void overrun(int *p, int n) { p[n] = 1; }

int main(int argc, char **argv) {
  const int n = 1000;
  float *x = NULL;
  int *y = NULL;
  unsigned *count = NULL;
  unsigned long long *seen = NULL;
  CHECK(cudaMallocManaged(&x, n * sizeof *x));
  CHECK(cudaMallocManaged(&y, n * sizeof *y, cudaMemAttachGlobal));
  CHECK(cudaMallocManaged(&count, sizeof *count));
  CHECK(cudaMallocManaged(&seen, sizeof *seen));
  if (argc > 1 && !strcmp(argv[1], "overrun")) {
    overrun<<<1, 1>>>(y, n);
    cudaError_t e = cudaDeviceSynchronize();
    printf("overrun: %s\n", cudaGetErrorName(e));
    return 0;
  }
  for (int i = 0; i < n; i++) x[i] = (float)i, y[i] = i % 7;
  *count = 0;
  cudaMemLocation loc;
  memset(&loc, 0, sizeof loc);
  loc.type = cudaMemLocationTypeDevice;
  CHECK(cudaMemPrefetchAsync(x, n * sizeof *x, loc, 0, 0));
  CHECK(cudaMemAdvise(y, n * sizeof *y, cudaMemAdviseSetReadMostly, loc));
  update<<<(n + 255) / 256, 256>>>(x, y, n, count, seen);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  int bad = 0;
  const float w[3] = {1.0f, 2.0f, 3.0f};
  for (int i = 0; i < n; i++)
    if (x[i] != (float)i * 2.0f + (float)(i % 7) * w[i % 3]) {
      if (!bad) printf("FAIL x[%d] = %g\n", i, x[i]);
      bad++;
    }
  if (*count != (unsigned)n) printf("FAIL count %u\n", *count), bad++;
  if (*seen != (unsigned long long)x) printf("FAIL kernel saw %llx, host %p\n", *seen, x), bad++;
  if (bumps != 42 || weights[3] != 40.0f)
    printf("FAIL managed vars %d %g\n", bumps, weights[3]), bad++;
  /* copies in every direction, and a fill */
  float host[4], *dev = NULL;
  CHECK(cudaMalloc(&dev, 4 * sizeof *dev));
  CHECK(cudaMemcpy(host, x + 1, sizeof host, cudaMemcpyDefault));
  CHECK(cudaMemcpy(dev, x + 1, sizeof host, cudaMemcpyDefault));
  CHECK(cudaMemcpy(x, dev, sizeof host, cudaMemcpyDeviceToDevice));
  if (memcmp(x, host, sizeof host)) printf("FAIL copy back\n"), bad++;
  CHECK(cudaMemcpy(x + 8, host, sizeof host, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(host, x + 8, sizeof host, cudaMemcpyDeviceToHost));
  if (memcmp(x + 8, x, sizeof host)) printf("FAIL explicit copies\n"), bad++;
  CHECK(cudaMemset(y, 0, n * sizeof *y));
  for (int i = 0; i < n; i++)
    if (y[i]) {
      printf("FAIL memset y[%d]\n", i);
      bad++;
      break;
    }
  CHECK(cudaFree(dev));
  CHECK(cudaFree(x));
  CHECK(cudaFree(y));
  CHECK(cudaFree(count));
  CHECK(cudaFree(seen));
  if (bad) return 1;
  printf("PASS managed n=%d\n", n);
  return 0;
}
