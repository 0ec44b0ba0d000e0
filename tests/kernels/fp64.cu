// fp64.cu -- double-precision arithmetic and libdevice math (sqrt, sin,
// exp): fma, division, and the slow paths sin/exp bring in.
__global__ void fp64_math(const double *x, double *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double v = x[i];
  double r = sqrt(fabs(v)) + sin(v) * exp(-v * v);
  y[i] = fma(r, 0.5, v / (1.0 + v * v));
}

__global__ void fp64_dot(const double *a, const double *b, double *out, int n) {
  double s = 0.0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) s += a[i] * b[i];
  out[threadIdx.x] = s;
}
