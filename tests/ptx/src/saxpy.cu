// saxpy.cu -- the smallest useful kernel: y = a*x + y.  Source of
// tests/ptx/saxpy_nvcc.ptx (nvcc -ptx -arch=sm_90) and saxpy_clang.ptx
// (clang-22 --cuda-device-only -S --cuda-gpu-arch=sm_90).
__global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
