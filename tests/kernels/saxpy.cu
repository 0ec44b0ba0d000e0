// saxpy.cu -- y = a*x + y with a bounds check: the smallest useful kernel.
// Two spellings of the same body: a C++ (mangled) kernel as real programs
// have, and an extern "C" one whose PTX .entry is simply "saxpy_c".
__global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

extern "C" __global__ void saxpy_c(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
