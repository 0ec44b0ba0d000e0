/* rt_rdc_dev.cu -- the second file of rt_rdc.cu (relocatable device code). */
#include <cuda_runtime.h>

__device__ int table[4];

__device__ int twice(int x) { return 2 * x; }

__global__ void plus_one_twice(int *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = twice(p[i]) + 1;
}

void launch_other(int *p, int n) { plus_one_twice<<<1, n>>>(p, n); }
