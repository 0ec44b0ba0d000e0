/*
 * gpu_check.cu -- the profiler's reference program (make gpu-check).
 *
 * Launches kernels of known, different durations and times each launch
 * with cudaEvents, printing "event_ms <lseq> <kernel> <ms>" per launch in
 * the program's own launch order, so profiler/gpu_check.sh can compare the
 * profiler's durations and launch sequence with the program's view.
 * Self-checking: the results of every kernel are verified on the host
 * (in particular `inc`, which updates its buffer in place, must have run
 * exactly once per launch even when `kcast profile --repeat N` repeats it);
 * prints PASS and exits 0 when all hold.
 *
 *   gpu_check          the timing/sequence set (busy loops of 0.01-20 ms,
 *                      a streaming copy, an in-place increment)
 *   gpu_check --long   one 1.5 s full-occupancy busy loop (power checks)
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CHECK(x)                                                              \
  do {                                                                        \
    cudaError_t e_ = (x);                                                     \
    if (e_ != cudaSuccess) {                                                  \
      fprintf(stderr, "gpu_check: %s: %s\n", #x, cudaGetErrorString(e_));     \
      exit(1);                                                                \
    }                                                                         \
  } while (0)

__device__ static unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/* Spin for ns nanoseconds (global timer), then write a checkable value. */
__global__ void busy(float *out, unsigned long long ns) {
  unsigned long long t0 = now_ns();
  float acc = 0.f;
  while (now_ns() - t0 < ns) acc += 1.0f;
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc > 0.f ? 1.f : 2.f;
}

/* Streaming copy, `reps` passes. */
__global__ void copy(float *dst, const float *src, size_t n, int reps) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (int r = 0; r < reps; r++)
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += stride)
      dst[i] = src[i] + (float)r;
}

/* In place: x[i] += 1. */
__global__ void inc(float *x, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.f;
}

static int lseq = 0;
static cudaEvent_t ev0, ev1;

static void begin() { CHECK(cudaEventRecord(ev0)); }
static void end(const char *name) {
  CHECK(cudaEventRecord(ev1));
  CHECK(cudaEventSynchronize(ev1));
  CHECK(cudaGetLastError());
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, ev0, ev1));
  printf("event_ms %d %s %.6f\n", lseq++, name, ms);
}

int main(int argc, char **argv) {
  int longmode = argc > 1 && !strcmp(argv[1], "--long");
  CHECK(cudaEventCreate(&ev0));
  CHECK(cudaEventCreate(&ev1));
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int threads = 256, blocks = sms * 8;
  float *out;
  CHECK(cudaMalloc(&out, sizeof(float) * blocks * threads));
  int ok = 1;
  float *h = (float *)malloc(sizeof(float) * blocks * threads);

  if (longmode) {
    begin();
    busy<<<blocks, threads>>>(out, 1500000000ull);
    end("busy");
  } else {
    const unsigned long long ns[] = {10000, 100000, 1000000, 5000000, 20000000};
    for (int i = 0; i < 5; i++) {
      begin();
      busy<<<sms, threads>>>(out, ns[i]);
      end("busy");
    }
    size_t n = 32u << 20;  /* 128 MiB per buffer */
    float *a, *b;
    CHECK(cudaMalloc(&a, n * sizeof(float)));
    CHECK(cudaMalloc(&b, n * sizeof(float)));
    CHECK(cudaMemset(a, 0, n * sizeof(float)));
    begin();
    copy<<<sms * 4, 512>>>(b, a, n, 4);
    end("copy");
    for (int i = 0; i < 3; i++) {
      begin();
      inc<<<(unsigned)((n + 255) / 256), 256>>>(a, n);
      end("inc");
    }
    float *ha = (float *)malloc(n * sizeof(float));
    CHECK(cudaMemcpy(ha, a, n * sizeof(float), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < n; i++)
      if (ha[i] != 3.f) {  /* three increments, each exactly once */
        fprintf(stderr, "gpu_check: a[%zu] = %g, expected 3\n", i, ha[i]);
        ok = 0;
        break;
      }
    CHECK(cudaMemcpy(ha, b, n * sizeof(float), cudaMemcpyDeviceToHost));
    if (ha[0] != 3.f || ha[n - 1] != 3.f) {
      fprintf(stderr, "gpu_check: copy result %g, expected 3\n", ha[0]);
      ok = 0;
    }
    free(ha);
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
  }
  CHECK(cudaMemcpy(h, out, sizeof(float) * (longmode ? blocks : sms) * threads,
                   cudaMemcpyDeviceToHost));
  for (int i = 0; i < (longmode ? blocks : sms) * threads; i++)
    if (h[i] != 1.f) {
      fprintf(stderr, "gpu_check: busy wrote %g at %d\n", h[i], i);
      ok = 0;
      break;
    }
  free(h);
  CHECK(cudaFree(out));
  printf("launches %d\n", lseq);
  puts(ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
