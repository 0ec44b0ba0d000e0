// triangular.cu -- kernels whose CTAs do different amounts of work, for
// the sampling tests: trimv is a triangular loop (CTA b of 32 threads
// reads b/8 + 1 tiles of x through shared memory, a work that grows
// linearly over the grid); jagged gives
// each CTA 48 to 63 rounds of global loads, chosen by a hash of its index
// (data-dependent work with no trend over the grid).

__global__ void trimv(const float *x, float *y, int n) {
  __shared__ float t[32];
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  int tiles = blockIdx.x / 8 + 1;
  float s = 0.0f;
  for (int k = 0; k < tiles; k++) {
    t[threadIdx.x] = x[(k * blockDim.x + threadIdx.x) % n];
    __syncthreads();
    s += t[(threadIdx.x + k) % 32] * (float)(k + 1);
    __syncthreads();
  }
  if (r < n) y[r] = s;
}

__global__ void jagged(const float *x, float *y, int n) {
  unsigned h = blockIdx.x * 2654435761u;
  h ^= h >> 15;
  int rounds = 48 + (int)((h >> 4) % 16u);
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0.0f;
  for (int k = 0; k < rounds; k++) s += x[(i + k * 977) % n];
  y[i % n] = s;
}
