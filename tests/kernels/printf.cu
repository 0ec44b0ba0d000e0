// printf.cu -- device printf: vprintf with a local argument buffer of mixed
// types (int, double, pointer-free), printed by the first thread of each
// block only.
#include <cstdio>

__global__ void hello(const float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (threadIdx.x == 0 && i < n)
    printf("block %d thread %d x=%f n=%d\n", (int)blockIdx.x, (int)threadIdx.x,
           (double)x[i], n);
}
