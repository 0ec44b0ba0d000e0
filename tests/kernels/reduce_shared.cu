// reduce_shared.cu -- shared-memory tree reduction: each block sums
// blockDim.x elements (a power of two, at most 256) into out[blockIdx.x].
// Exercises st/ld.shared, bar.sync and a loop with a halving trip count.
#define RS_MAX_BLOCK 256

__global__ void reduce_shared(const float *in, float *out, int n) {
  __shared__ float buf[RS_MAX_BLOCK];
  unsigned tid = threadIdx.x;
  unsigned i = blockIdx.x * blockDim.x + tid;
  buf[tid] = (i < (unsigned)n) ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) buf[tid] += buf[tid + s];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = buf[0];
}
