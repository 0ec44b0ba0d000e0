// half.cu -- half-precision and bfloat16 arithmetic as cuda_fp16.h and
// cuda_bf16.h write it (inline PTX: add/sub/mul/fma with .sat and .relu,
// min/max, neg/abs, set/setp with half results and packed sources), the
// .approx functions on halves, and atomicAdd on halves and pairs
// (tests/test_emu_tensor.c checks every result bit for bit).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#define NOPS_H 16  // results per element in o (one half each)

__global__ void half_ops(const unsigned short *a, const unsigned short *b,
                         const unsigned short *c, unsigned short *o,
                         unsigned *m, unsigned short *acc, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __half x = __ushort_as_half(a[i]), y = __ushort_as_half(b[i]), z = __ushort_as_half(c[i]);
  __half r[NOPS_H];
  r[0] = __hadd(x, y);
  r[1] = __hsub(x, y);
  r[2] = __hmul(x, y);
  r[3] = __hfma(x, y, z);
  r[4] = __hadd_sat(x, y);
  r[5] = __hmul_sat(x, y);
  r[6] = __hfma_sat(x, y, z);
  r[7] = __hfma_relu(x, y, z);
  r[8] = __hmin(x, y);
  r[9] = __hmax(x, y);
  r[10] = __hmin_nan(x, y);
  r[11] = __hmax_nan(x, y);
  r[12] = __hneg(x);
  r[13] = __habs(x);
  unsigned short e2, th;
  asm("ex2.approx.f16 %0, %1;" : "=h"(e2) : "h"(a[i]));
  asm("tanh.approx.f16 %0, %1;" : "=h"(th) : "h"(a[i]));
  r[14] = __ushort_as_half(e2);
  r[15] = __ushort_as_half(th);
  for (int k = 0; k < NOPS_H; k++) o[k * n + i] = __half_as_ushort(r[k]);
  m[i * 4] = __heq(x, y) | __hne(x, y) << 1 | __hlt(x, y) << 2 | __hle(x, y) << 3 |
             __hgt(x, y) << 4 | __hge(x, y) << 5 | __hequ(x, y) << 6 | __hneu(x, y) << 7 |
             __hltu(x, y) << 8 | __hleu(x, y) << 9 | __hgtu(x, y) << 10 | __hgeu(x, y) << 11 |
             __hisnan(x) << 12;
  // pairs: (x, y) and (z, x)
  __half2 p = __halves2half2(x, y), q = __halves2half2(z, x);
  m[i * 4 + 1] = __hlt2_mask(p, q);
  __half2 s = __hfma2(p, q, __heq2(p, q));
  m[i * 4 + 2] = *(unsigned *)&s;
  __half2 t = __hmax2(__hadd2(p, q), __hmul2(p, q));
  m[i * 4 + 3] = *(unsigned *)&t;
  atomicAdd((__half *)&acc[i], x);
  atomicAdd((__half2 *)&acc[n + 2 * i], p);
}

__global__ void bf16_ops(const unsigned short *a, const unsigned short *b,
                         const unsigned short *c, unsigned short *o,
                         unsigned *m, unsigned short *acc, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __nv_bfloat16 x = __ushort_as_bfloat16(a[i]), y = __ushort_as_bfloat16(b[i]),
                z = __ushort_as_bfloat16(c[i]);
  __nv_bfloat16 r[NOPS_H];
  r[0] = __hadd(x, y);
  r[1] = __hsub(x, y);
  r[2] = __hmul(x, y);
  r[3] = __hfma(x, y, z);
  r[4] = __hadd_sat(x, y);
  r[5] = __hmul_sat(x, y);
  r[6] = __hfma_sat(x, y, z);
  r[7] = __hfma_relu(x, y, z);
  r[8] = __hmin(x, y);
  r[9] = __hmax(x, y);
  r[10] = __hmin_nan(x, y);
  r[11] = __hmax_nan(x, y);
  r[12] = __hneg(x);
  r[13] = __habs(x);
  unsigned short e2, th;
  asm("ex2.approx.ftz.bf16 %0, %1;" : "=h"(e2) : "h"(a[i]));
  asm("tanh.approx.bf16 %0, %1;" : "=h"(th) : "h"(a[i]));
  r[14] = __ushort_as_bfloat16(e2);
  r[15] = __ushort_as_bfloat16(th);
  for (int k = 0; k < NOPS_H; k++) o[k * n + i] = __bfloat16_as_ushort(r[k]);
  m[i * 4] = __heq(x, y) | __hne(x, y) << 1 | __hlt(x, y) << 2 | __hle(x, y) << 3 |
             __hgt(x, y) << 4 | __hge(x, y) << 5 | __hequ(x, y) << 6 | __hneu(x, y) << 7 |
             __hltu(x, y) << 8 | __hleu(x, y) << 9 | __hgtu(x, y) << 10 | __hgeu(x, y) << 11 |
             __hisnan(x) << 12;
  __nv_bfloat162 p = __halves2bfloat162(x, y), q = __halves2bfloat162(z, x);
  m[i * 4 + 1] = __hlt2_mask(p, q);
  __nv_bfloat162 s = __hfma2(p, q, __heq2(p, q));
  m[i * 4 + 2] = *(unsigned *)&s;
  __nv_bfloat162 t = __hmax2(__hadd2(p, q), __hmul2(p, q));
  m[i * 4 + 3] = *(unsigned *)&t;
  atomicAdd((__nv_bfloat16 *)&acc[i], x);
  atomicAdd((__nv_bfloat162 *)&acc[n + 2 * i], p);
}

// conversions: float and double -> half / bfloat16 in each rounding mode
// (h[k * n + i], bf[k * n + i]: k = rn, rz, rd, ru, rn from double) and back
__global__ void half_cvt(const float *f, unsigned short *h, unsigned short *bf, float *back, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __half x = __float2half_rn(f[i]);
  __nv_bfloat16 y = __float2bfloat16_rn(f[i]);
  double d = (double)f[i] * (1.0 + 1.0 / 4096);
  h[i] = __half_as_ushort(x);
  h[n + i] = __half_as_ushort(__float2half_rz(f[i]));
  h[2 * n + i] = __half_as_ushort(__float2half_rd(f[i]));
  h[3 * n + i] = __half_as_ushort(__float2half_ru(f[i]));
  h[4 * n + i] = __half_as_ushort(__double2half(d));
  bf[i] = __bfloat16_as_ushort(y);
  bf[n + i] = __bfloat16_as_ushort(__float2bfloat16_rz(f[i]));
  bf[2 * n + i] = __bfloat16_as_ushort(__float2bfloat16_rd(f[i]));
  bf[3 * n + i] = __bfloat16_as_ushort(__float2bfloat16_ru(f[i]));
  bf[4 * n + i] = __bfloat16_as_ushort(__double2bfloat16(d));
  back[2 * i] = __half2float(x);
  back[2 * i + 1] = __bfloat162float(y);
}
