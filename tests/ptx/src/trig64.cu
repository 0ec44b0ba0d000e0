// trig64.cu -- double-precision kernel with sin and sqrt (libdevice slow
// paths, local arrays, fp64 constants).  Source of tests/ptx/trig64_nvcc.ptx.
__global__ void trig64(const double *x, double *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double v = x[i];
  y[i] = sin(v) * sqrt(fabs(v)) + 1.5;
}
