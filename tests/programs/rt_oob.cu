/*
 * rt_oob.cu -- out-of-bounds accesses a GPU tolerates, and those it does
 * not (tests/test_run.c).
 *
 *   (no argument)  a 3-point average written the sloppy way old benchmark
 *                  code does: every thread reads in[i-1] and in[i+1]
 *                  before checking i, so thread 0 reads one element before
 *                  the buffer and the last one element past it; the values
 *                  read there are not used.  On a GPU (and under
 *                  `kcast run --oob warn`) the launch completes; the result
 *                  is checked against a CPU reference.  Under --oob error
 *                  the launch fails with cudaErrorIllegalAddress.
 *   uaf            the buffer is freed before the launch: a use after free
 *                  (the launch fails under --oob error).
 *   wild           the kernel writes through a pointer 1 GiB past the
 *                  buffer, which no policy tolerates; the program ignores
 *                  the error and exits 0, as careless host code does.
 *
 * Prints "PASS oob" when the result matches, else what happened; exits 0
 * unless the result is wrong.
 */
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

__global__ void avg3(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float l = in[i - 1], c = in[i], r = in[i + 1];  /* read before the check */
  if (i >= n) return;
  out[i] = ((i > 0 ? l : 0) + c + (i < n - 1 ? r : 0)) / 3;
}

__global__ void wild(float *p) { p[(1ull << 28) + threadIdx.x] = 1; }

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  enum { N = 256 };
  float h[N], o[N];
  for (int i = 0; i < N; i++) h[i] = (float)(i % 13) - 4;
  float *in, *out;
  cudaMalloc(&in, N * sizeof(float));
  cudaMalloc(&out, N * sizeof(float));
  cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice);
  if (!strcmp(mode, "wild")) {
    wild<<<1, 32>>>(in);
    printf("wild: %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
    return 0;
  }
  if (!strcmp(mode, "uaf")) cudaFree(in);
  avg3<<<N / 64, 64>>>(in, out, N);
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    printf("avg3: %s\n", cudaGetErrorName(e));
    return 0;
  }
  cudaMemcpy(o, out, sizeof o, cudaMemcpyDeviceToHost);
  for (int i = 0; i < N; i++) {
    float want = ((i > 0 ? h[i - 1] : 0) + h[i] + (i < N - 1 ? h[i + 1] : 0)) / 3;
    if (o[i] != want) {
      printf("FAIL element %d is %g, expected %g\n", i, o[i], want);
      return 1;
    }
  }
  printf("PASS oob\n");
  return 0;
}
