// histogram.cu -- 256-bin byte histogram: per-block counts with shared-memory
// atomics, then one global atomicAdd per non-empty bin and block.
#define HIST_BINS 256

__global__ void histogram256(const unsigned char *data, int n,
                             unsigned *bins) {
  __shared__ unsigned local[HIST_BINS];
  for (int b = threadIdx.x; b < HIST_BINS; b += blockDim.x) local[b] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += gridDim.x * blockDim.x)
    atomicAdd(&local[data[i]], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < HIST_BINS; b += blockDim.x)
    if (local[b]) atomicAdd(&bins[b], local[b]);
}
