// branches.cu -- control flow whose shape depends on the lane and the data:
// divergent if/else by lane parity, a loop whose trip count is read from
// memory (Collatz steps, capped), and a switch on the input value.
__global__ void lane_branches(const int *in, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int v = in[i];
  int lane = threadIdx.x & 31;
  if (lane & 1)
    v = v * 3 + 1;
  else if (lane < 16)
    v = v / 2;
  else
    v = -v;
  out[i] = v;
}

__global__ void collatz_steps(const unsigned *in, unsigned *steps, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned v = in[i], k = 0;
  while (v > 1 && k < 1000) {
    v = (v & 1) ? 3 * v + 1 : v >> 1;
    k++;
  }
  steps[i] = k;
}

__global__ void switch_op(const int *op, const float *a, const float *b,
                          float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float r;
  switch (op[i]) {
  case 0: r = a[i] + b[i]; break;
  case 1: r = a[i] - b[i]; break;
  case 2: r = a[i] * b[i]; break;
  case 3: r = a[i] / b[i]; break;
  case 4: r = fmaxf(a[i], b[i]); break;
  case 5: r = fminf(a[i], b[i]); break;
  default: r = 0.0f; break;
  }
  out[i] = r;
}
