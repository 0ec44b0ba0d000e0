/*
 * rt_limits.cu -- launch configurations a GPU refuses (tests/test_run.c):
 * grid y or z over 65535 and a block over 1024 threads
 * (cudaErrorInvalidConfiguration), dynamic shared memory over the kernel's
 * limit (cudaErrorInvalidValue: 48 KiB by default, 1 GiB always), then 64
 * KiB after cudaFuncSetAttribute(cudaFuncAttributeMaxDynamicSharedMemorySize)
 * raised the limit, which must run and reverse an array through shared
 * memory correctly (checked against the CPU).  Refused launches are not
 * sticky: later calls succeed.  Prints one line per launch and "PASS
 * limits" when every error is the one a GPU returns.
 */
#include <cstdio>
#include <cuda_runtime.h>

__global__ void rev(const int *in, int *out, int n) {
  extern __shared__ int s[];
  for (int i = threadIdx.x; i < n; i += blockDim.x) s[i] = in[i];
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = s[n - 1 - i];
}

static int expect(const char *what, cudaError_t want) {
  cudaError_t got = cudaGetLastError();
  printf("%s: %s\n", what, cudaGetErrorName(got));
  return got == want ? 0 : 1;
}

int main() {
  enum { N = 16384 }; /* 64 KiB of ints */
  static int h[N], o[N];
  for (int i = 0; i < N; i++) h[i] = 3 * i + 1;
  int *in, *out, bad = 0;
  cudaMalloc(&in, sizeof h);
  cudaMalloc(&out, sizeof h);
  cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice);
  rev<<<dim3(1, 65536), 32, 64>>>(in, out, 16);
  bad |= expect("grid y 65536", cudaErrorInvalidConfiguration);
  rev<<<dim3(1, 1, 70000), 32, 64>>>(in, out, 16);
  bad |= expect("grid z 70000", cudaErrorInvalidConfiguration);
  rev<<<1, 1025, 64>>>(in, out, 16);
  bad |= expect("block 1025", cudaErrorInvalidConfiguration);
  rev<<<1, dim3(8, 8, 65), 64>>>(in, out, 16);
  bad |= expect("block z 65", cudaErrorInvalidConfiguration);
  rev<<<1, 256, (size_t)1 << 30>>>(in, out, N);
  bad |= expect("1 GiB dynamic shared", cudaErrorInvalidValue);
  rev<<<1, 256, sizeof h>>>(in, out, N);
  bad |= expect("64 KiB dynamic shared, no attribute", cudaErrorInvalidValue);
  cudaError_t a = cudaFuncSetAttribute(rev, cudaFuncAttributeMaxDynamicSharedMemorySize, sizeof h);
  printf("attribute 64 KiB: %s\n", cudaGetErrorName(a));
  bad |= a != cudaSuccess;
  a = cudaFuncSetAttribute(rev, cudaFuncAttributeMaxDynamicSharedMemorySize, 1 << 20);
  printf("attribute 1 MiB: %s\n", cudaGetErrorName(a));
  bad |= a != cudaErrorInvalidValue;
  cudaGetLastError();
  rev<<<1, 256, sizeof h>>>(in, out, N);
  bad |= expect("64 KiB dynamic shared, attribute set", cudaSuccess);
  cudaMemcpy(o, out, sizeof o, cudaMemcpyDeviceToHost);
  for (int i = 0; i < N; i++)
    if (o[i] != h[N - 1 - i]) {
      printf("FAIL element %d\n", i);
      return 1;
    }
  if (bad) {
    printf("FAIL limits\n");
    return 1;
  }
  printf("PASS limits\n");
  return 0;
}
