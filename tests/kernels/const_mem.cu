// const_mem.cu -- a __constant__ table with an initialiser (ld.const) and a
// __device__ global counter (atomics on a module-scope .global variable).
__constant__ float coeffs[8] = {1.0f, 0.5f, 0.25f, 0.125f,
                                2.0f, 4.0f, 8.0f, 16.0f};
__device__ unsigned long long calls_seen = 0;

__global__ void apply_coeffs(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  y[i] = x[i] * coeffs[i & 7] + coeffs[(i >> 3) & 7];
  atomicAdd(&calls_seen, 1ull);
}
