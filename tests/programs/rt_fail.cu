/*
 * rt_fail.cu -- a program whose own check fails (tests/test_run.c): the
 * kernel writes i + 1 but the host expects i, so it prints FAIL and exits
 * 3; `kcast run` must pass that exit status through.  With an argument
 * "spin" it instead launches a kernel that loops for a very long time, for
 * the kill/--timeout tests; with "stuck" one of whose 8 CTAs does (the
 * others finish at once), for --timeout recording the launch partial.
 */
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

__global__ void off_by_one(int *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = i + 1;
}

__global__ void spin(int *x, long long iters) {
  int acc = 0;
  for (long long k = 0; k < iters; k++) acc += (int)(k ^ threadIdx.x);
  x[threadIdx.x] = acc;
}

__global__ void stuck(int *x, long long iters) {
  int acc = 1;
  if (blockIdx.x == 7)
    for (long long k = 0; k < iters; k++) acc += (int)(k ^ threadIdx.x);
  x[blockIdx.x] = acc;
}

int main(int argc, char **argv) {
  int *d, h[64];
  cudaMalloc(&d, sizeof h);
  off_by_one<<<1, 64>>>(d, 64);
  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  if (argc > 1 && !strcmp(argv[1], "stuck")) {
    stuck<<<8, 32>>>(d, 1LL << 40);
    printf("stuck: %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
    return 0;
  }
  if (argc > 1 && !strcmp(argv[1], "spin")) {
    printf("spinning\n");
    fflush(stdout);
    spin<<<64, 256>>>(d, 1LL << 40);
    cudaDeviceSynchronize();
    printf("spin done\n");
    return 0;
  }
  for (int i = 0; i < 64; i++)
    if (h[i] != i) {
      printf("FAIL element %d is %d, expected %d\n", i, h[i], i);
      return 3;
    }
  printf("PASS\n");
  return 0;
}
