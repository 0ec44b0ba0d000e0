// reduce_shuffle.cu -- warp-shuffle reduction: each warp folds its 32 values
// with __shfl_down_sync, lane 0 adds the warp's sum to *out atomically.
// A grid-stride loop lets any grid cover any n.
__device__ __forceinline__ int warp_sum(int v) {
  for (int off = 16; off > 0; off >>= 1)
    v += __shfl_down_sync(0xffffffffu, v, off);
  return v;
}

__global__ void reduce_shuffle(const int *in, int *out, int n) {
  int sum = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += gridDim.x * blockDim.x)
    sum += in[i];
  sum = warp_sum(sum);
  if ((threadIdx.x & 31) == 0) atomicAdd(out, sum);
}
