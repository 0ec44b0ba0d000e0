/*
 * unroll_sum.cu -- a tunable kernel as Kernel Tuner's sources are often
 * written: the tuned kernel and its `_naive` reference in one extern "C"
 * block with the constant array they read, and a loop whose unrolling is a
 * tuning parameter (loop_unroll_factor_k: the argument of `#pragma unroll`,
 * 0 for none).  Each thread sums steps products of in[] and weight[].
 * tests/test_import.c imports a space of it.
 */
extern "C" {
__constant__ float weight[8];

__global__ void unroll_sum(float *out, const float *in, int n, int steps) {
  int i = blockIdx.x * block_size_x + threadIdx.x;
  if (i >= n) return;
  float acc = 0.0f;
#pragma unroll loop_unroll_factor_k
  for (int k = 0; k < steps; k++) acc += in[(i + k) % n] * weight[k % 8];
  out[i] = acc;
}

__global__ void unroll_sum_naive(float *out, const float *in, int n, int steps) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float acc = 0.0f;
  for (int k = 0; k < steps; k++) acc += in[(i + k) % n] * weight[k % 8];
  out[i] = acc;
}
}
