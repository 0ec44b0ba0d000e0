// Kernels with known reuse and sharing, for the memory-hierarchy model's
// tests (tests/test_cache.c): numbers of docs/features.md "Reuse and
// sharing" worked out by hand for each.

// Streaming: every element read once, no CTA shares with another.
extern "C" __global__ void stream_scale(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 2.0f * in[i];
}

// A table of m floats every warp reads twice, a warp-width slice a step:
// the second pass re-reads each line after the rest of the table.
extern "C" __global__ void table_twice(const float *table, float *out, int m) {
  float s = 0.0f;
  for (int pass = 0; pass < 2; pass++)
    for (int j = threadIdx.x; j < m; j += 32) s += table[j] * (pass + 1);
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// A three-point stencil: each warp's three loads overlap, each CTA's halo
// is its neighbours' data.
extern "C" __global__ void stencil3(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i > 0 && i < n - 1) out[i] = in[i - 1] + in[i] + in[i + 1];
}
