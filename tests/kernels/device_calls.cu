// device_calls.cu -- real (non-inlined) calls: __noinline__ device functions
// with scalar and pointer parameters and return values, one calling
// another, so the PTX has .func bodies and call.uni with param passing.
__device__ __noinline__ float poly3(float x, float c0, float c1, float c2) {
  return (c2 * x + c1) * x + c0;
}

__device__ __noinline__ int clamp_index(int i, int lo, int hi) {
  return i < lo ? lo : (i > hi ? hi : i);
}

__device__ __noinline__ void accumulate(float *dst, float v) {
  *dst += poly3(v, 1.0f, 0.5f, 0.25f);
}

__global__ void calls(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int j = clamp_index(i - 1, 0, n - 1);
  float v = x[j];
  accumulate(&y[i], v);
}
