/*
 * rt_wrap.cu -- 32-bit shared-memory address arithmetic (tests/test_run.c).
 * The kernel computes the address of s[i + 1] as (address of s[i]) - 64 in
 * a 32-bit register and loads [that + 68], as compiled code for a loop
 * that starts one tile before an array does: for thread 0 the register
 * wraps below zero, and the access is in bounds modulo 2^32.  Checked
 * against a CPU reference; prints "PASS wrap".
 */
#include <cstdio>
#include <cuda_runtime.h>

__global__ void shift(float *out) {
  __shared__ float s[65];
  s[threadIdx.x] = threadIdx.x + 1.0f;
  if (threadIdx.x == 0) s[64] = 65.0f;
  __syncthreads();
  unsigned a = (unsigned)__cvta_generic_to_shared(&s[threadIdx.x]);
  float v;
  asm volatile("{\n\t.reg .u32 t;\n\tadd.s32 t, %1, -64;\n\tld.shared.f32 %0, [t+68];\n\t}"
               : "=f"(v) : "r"(a));
  out[threadIdx.x] = v;
}

int main() {
  float *d, h[64];
  cudaMalloc(&d, sizeof h);
  shift<<<1, 64>>>(d);
  cudaError_t e = cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  if (e != cudaSuccess) {
    printf("FAIL %s\n", cudaGetErrorName(e));
    return 1;
  }
  for (int i = 0; i < 64; i++)
    if (h[i] != i + 2.0f) {
      printf("FAIL element %d is %g, expected %g\n", i, h[i], i + 2.0f);
      return 1;
    }
  printf("PASS wrap\n");
  return 0;
}
