/*
 * rt_steps.cu -- an iterative program: LAUNCHES launches of one kernel over
 * N = 1024 floats, each thread doing WORK extra multiply-adds (0: about 17
 * thread-instructions per thread, 17,000 per launch -- the small launches
 * of iterative solvers).  The host checks the result against the same
 * recurrence computed on the CPU and prints "PASS steps" with the time
 * from the first launch to the last result (the program's start-up and
 * kcast's excluded): what bench/ reports per launch.
 *
 * usage: rt_steps [LAUNCHES [WORK [N]]]   (defaults 1000, 0 and 1024)
 * Used by tests/test_run.c (--timeout keeps the finished launches; the
 * progress line on a terminal) and by bench/ (small-launch overhead).
 */
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <cuda_runtime.h>

__global__ void step(float *x, int n, int work) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  for (int k = 0; k < work; k++) v = v * 0.999f + 0.001f;
  x[i] = 0.5f * v + 1.0f;
}

static double now(void) {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  int launches = argc > 1 ? atoi(argv[1]) : 1000, work = argc > 2 ? atoi(argv[2]) : 0;
  int N = argc > 3 ? atoi(argv[3]) : 1024;
  if (launches < 0 || work < 0 || N < 256 || N % 256 || N > (1 << 24)) {
    fprintf(stderr, "usage: rt_steps [LAUNCHES [WORK [N]]] (N a multiple of 256)\n");
    return 2;
  }
  float *h = (float *)malloc(N * sizeof *h), *ref = (float *)malloc(N * sizeof *ref);
  if (!h || !ref) return 1;
  for (int i = 0; i < N; i++) ref[i] = h[i] = (float)(i % 17);
  float *d;
  if (cudaMalloc(&d, N * sizeof *h) != cudaSuccess) return 1;
  cudaMemcpy(d, h, N * sizeof *h, cudaMemcpyHostToDevice);
  double t0 = now();
  for (int k = 0; k < launches; k++) {
    step<<<N / 256, 256>>>(d, N, work);
    if (work) {
      printf("launch %d\n", k);
      fflush(stdout);
    }
  }
  cudaError_t e = cudaMemcpy(h, d, N * sizeof *h, cudaMemcpyDeviceToHost);
  double t1 = now();
  if (e != cudaSuccess) {
    printf("FAIL %s\n", cudaGetErrorName(e));
    return 1;
  }
  for (int k = 0; k < launches; k++)
    for (int i = 0; i < N; i++) {
      float v = ref[i];
      for (int j = 0; j < work; j++) v = v * 0.999f + 0.001f;
      ref[i] = 0.5f * v + 1.0f;
    }
  for (int i = 0; i < N; i++)
    if (h[i] != ref[i]) {
      printf("FAIL element %d is %g, expected %g\n", i, h[i], ref[i]);
      return 1;
    }
  printf("PASS steps: %d launches in %.4f s, %.1f us per launch\n", launches, t1 - t0,
         (t1 - t0) / launches * 1e6);
  return 0;
}
