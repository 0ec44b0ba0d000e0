// reduce.cu -- block reduction exercising shared memory, barriers, warp
// shuffles, atomics, printf and a non-inlined device-function call.
// Source of tests/ptx/reduce_nvcc.ptx (nvcc -ptx -arch=sm_90).
#include <cstdio>

__device__ float table[4] = {1.0f, 2.0f, 0.5f, 0.25f};
__device__ unsigned counter;

__device__ __noinline__ float scale(float v, int k) {
  return v * table[k & 3];
}

__device__ __noinline__ void note(int block) {
  printf("block %d done\n", block);
}

__global__ void reduce(const float *in, float *out, int n) {
  extern __shared__ float buf[];
  __shared__ float warpsum[32];
  unsigned tid = threadIdx.x;
  unsigned i = blockIdx.x * blockDim.x * 2 + tid;
  float v = 0.0f;
  if (i < n) v = in[i];
  if (i + blockDim.x < n) v += in[i + blockDim.x];
  buf[tid] = scale(v, tid);
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s >= 32; s >>= 1) {
    if (tid < s) buf[tid] += buf[tid + s];
    __syncthreads();
  }
  if (tid < 32) {
    float w = buf[tid];
    for (int off = 16; off > 0; off >>= 1)
      w += __shfl_down_sync(0xffffffffu, w, off);
    if ((tid & 31) == 0) warpsum[tid / 32] = w;
    if (tid == 0) {
      atomicAdd(out, warpsum[0]);
      unsigned old = atomicInc(&counter, 0xffffffffu);
      if (old == gridDim.x - 1) note(blockIdx.x);
    }
  }
  if (__any_sync(0xffffffffu, v < 0.0f) && tid == 1)
    atomicMax((int *)out + 1, (int)v);
}
