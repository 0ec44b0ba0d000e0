/*
 * rt_race.cu -- a program with data races, for `kcast run --racecheck`
 * (tests/test_run.c).
 *
 *   (no argument)  two launches with a race each: CTAs that store
 *                  overlapping chunks of one buffer (Parboil histo's
 *                  copyMemory with a small histogram: each CTA's tail lands
 *                  on the next CTA's head), and a row of shared memory that
 *                  warp 1 reads while warp 0 updates it, a __syncthreads
 *                  missing (Rodinia heartwall's second cumulative sum);
 *                  then one clean launch.
 *   fixed          the same with the bugs fixed: disjoint chunks, the
 *                  __syncthreads added.
 *
 * Prints "PASS race" when the program's own checks pass (the racy
 * launches' results are not checked: they depend on the order); exits 0.
 */
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

__global__ void chunks(float *out, int per, int stride) {
  for (int i = threadIdx.x; i < per; i += blockDim.x)
    out[blockIdx.x * stride + i] = (float)(blockIdx.x * 1000 + i);
}

__global__ void cumsum(const float *in, float *out, int sync) {
  __shared__ float row[64];
  int t = threadIdx.x;
  row[t] = in[blockIdx.x * 64 + t];
  __syncthreads();
  if (t < 32) row[t] = row[t] * 2.0f;
  if (sync) __syncthreads();
  if (t >= 32) row[t] += row[31];
  __syncthreads();
  out[blockIdx.x * 64 + t] = row[t];
}

__global__ void scale(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= 2.0f;
}

int main(int argc, char **argv) {
  int fixed = argc > 1 && !strcmp(argv[1], "fixed");
  enum { CTAS = 8, PER = 256, N = CTAS * 64 };
  float *buf, *in, *out;
  cudaMalloc(&buf, CTAS * PER * sizeof(float));
  cudaMalloc(&in, N * sizeof(float));
  cudaMalloc(&out, N * sizeof(float));
  float h[N];
  for (int i = 0; i < N; i++) h[i] = (float)(i % 7);
  cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice);
  chunks<<<CTAS, 64>>>(buf, PER, fixed ? PER : PER - 32);
  cumsum<<<CTAS, 64>>>(in, out, fixed);
  scale<<<N / 64, 64>>>(in, N);
  if (cudaDeviceSynchronize() != cudaSuccess) {
    printf("FAIL launch\n");
    return 1;
  }
  float o[N];
  cudaMemcpy(o, in, sizeof o, cudaMemcpyDeviceToHost);
  for (int i = 0; i < N; i++)
    if (o[i] != 2.0f * (float)(i % 7)) {
      printf("FAIL element %d\n", i);
      return 1;
    }
  if (fixed) {
    cudaMemcpy(o, out, sizeof o, cudaMemcpyDeviceToHost);
    for (int c = 0; c < CTAS; c++)
      for (int t = 0; t < 64; t++) {
        float x = h[c * 64 + t];
        float want = t < 32 ? 2 * x : x + 2 * h[c * 64 + 31];
        if (o[c * 64 + t] != want) {
          printf("FAIL cumsum %d %d\n", c, t);
          return 1;
        }
      }
  }
  printf("PASS race\n");
  return 0;
}
