// cvt_round.cu -- float<->int conversions under each rounding mode
// (cvt.rni/rzi/rmi/rpi), int->float, saturation to [0,1] (cvt.sat) and
// half-precision round trips (cvt.rn.f16.f32 / cvt.f32.f16).
#include <cuda_fp16.h>

__global__ void float_to_int(const float *x, int *rn, int *rz, int *rd,
                             int *ru, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  rn[i] = __float2int_rn(v);
  rz[i] = __float2int_rz(v);
  rd[i] = __float2int_rd(v);
  ru[i] = __float2int_ru(v);
}

__global__ void int_to_float(const int *x, float *y, unsigned *u, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  y[i] = __int2float_rn(x[i]);
  u[i] = __float2uint_rz(__saturatef(y[i] * 0.001f) * 255.0f);
}

__global__ void half_roundtrip(const float *x, float *y, __half *h, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __half v = __float2half(x[i]);
  h[i] = v;
  y[i] = __half2float(v);
}
