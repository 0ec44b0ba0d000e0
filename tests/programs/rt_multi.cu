/*
 * rt_multi.cu -- several kernels, several launches, streams and events,
 * memsets, pitched 2D copies, pinned host memory and device queries through
 * the cudart replacement (tests/test_run.c).
 *
 * Launch sequence (lseq: kernel): 0 fill, 1 scale, 2 scale, 3 scale,
 * 4 transpose, 5 reduce.  Every result is checked against the CPU; prints
 * PASS only when all hold.  The emulated device's name and compute
 * capability are printed ("device NAME cc MAJOR.MINOR") for the test.
 */
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

#define CHECK(x)                                                         \
  do {                                                                   \
    cudaError_t e_ = (x);                                                \
    if (e_ != cudaSuccess) {                                             \
      fprintf(stderr, "rt_multi: %s: %s\n", #x, cudaGetErrorString(e_)); \
      return 1;                                                          \
    }                                                                    \
  } while (0)

__global__ void fill(int *x, int n, int v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = v + i;
}

__global__ void scale(int *x, int n, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= k;
}

/* out[c][r] = in[r][c]; rows of `pitch` bytes */
__global__ void transpose(const float *in, size_t ipitch, float *out, size_t opitch, int w, int h) {
  int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y * blockDim.y + threadIdx.y;
  if (c < w && r < h) {
    const float *row = (const float *)((const char *)in + r * ipitch);
    float *orow = (float *)((char *)out + c * opitch);
    orow[r] = row[c];
  }
}

/* one block: shared-memory tree sum of n ints (dynamic shared memory) */
__global__ void reduce(const int *x, int n, long long *out) {
  extern __shared__ long long s[];
  long long acc = 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) acc += x[i];
  s[threadIdx.x] = acc;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w /= 2) {
    if ((int)threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) *out = s[0];
}

int main() {
  int count = 0;
  CHECK(cudaGetDeviceCount(&count));
  CHECK(cudaSetDevice(0));
  cudaDeviceProp p;
  CHECK(cudaGetDeviceProperties(&p, 0));
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  printf("device %s cc %d.%d count %d\n", p.name, p.major, p.minor, count);
  if (count != 1 || sms != p.multiProcessorCount || p.warpSize != 32 || p.maxThreadsPerBlock != 1024) {
    printf("FAIL properties\n");
    return 1;
  }
  int rv = 0, dv = 0;
  CHECK(cudaRuntimeGetVersion(&rv));
  CHECK(cudaDriverGetVersion(&dv));

  const int n = 1000;
  int *dx, *hx;
  CHECK(cudaMalloc(&dx, n * sizeof(int)));
  CHECK(cudaMallocHost(&hx, n * sizeof(int)));
  CHECK(cudaMemset(dx, 0xff, n * sizeof(int)));
  CHECK(cudaMemcpy(hx, dx, n * sizeof(int), cudaMemcpyDefault));
  if (hx[0] != -1 || hx[n - 1] != -1) {
    printf("FAIL memset\n");
    return 1;
  }
  cudaStream_t st;
  cudaEvent_t e0, e1;
  CHECK(cudaStreamCreate(&st));
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  CHECK(cudaEventRecord(e0, st));
  fill<<<(n + 127) / 128, 128, 0, st>>>(dx, n, 5);
  for (int k = 2; k <= 4; k++) scale<<<(n + 255) / 256, 256, 0, st>>>(dx, n, k);
  CHECK(cudaEventRecord(e1, st));
  CHECK(cudaMemcpyAsync(hx, dx, n * sizeof(int), cudaMemcpyDeviceToHost, st));
  CHECK(cudaStreamSynchronize(st));
  CHECK(cudaEventSynchronize(e1));
  float ms = -1.f;
  CHECK(cudaEventElapsedTime(&ms, e0, e1));
  int bad = 0;
  for (int i = 0; i < n; i++)
    if (hx[i] != (5 + i) * 24) bad++;
  if (bad || ms < 0.f) {
    printf("FAIL chain: %d bad, %g ms\n", bad, ms);
    return 1;
  }

  /* pitched 2D: w x h floats, transposed */
  const int w = 37, h = 19;
  float src[h][w], dst[w][h];
  for (int r = 0; r < h; r++)
    for (int c = 0; c < w; c++) src[r][c] = (float)(r * 100 + c);
  float *din, *dout;
  size_t ip, op;
  CHECK(cudaMallocPitch((void **)&din, &ip, w * sizeof(float), h));
  CHECK(cudaMallocPitch((void **)&dout, &op, h * sizeof(float), w));
  CHECK(cudaMemcpy2D(din, ip, src, w * sizeof(float), w * sizeof(float), h, cudaMemcpyHostToDevice));
  dim3 b(16, 8), g((w + 15) / 16, (h + 7) / 8);
  transpose<<<g, b>>>(din, ip, dout, op, w, h);
  CHECK(cudaMemcpy2D(dst, h * sizeof(float), dout, op, h * sizeof(float), w, cudaMemcpyDeviceToHost));
  for (int r = 0; r < h; r++)
    for (int c = 0; c < w; c++)
      if (dst[c][r] != src[r][c]) bad++;
  if (bad) {
    printf("FAIL transpose: %d bad\n", bad);
    return 1;
  }

  long long *dsum, sum = 0, want = 0;
  CHECK(cudaMalloc(&dsum, sizeof *dsum));
  reduce<<<1, 128, 128 * sizeof(long long)>>>(dx, n, dsum);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(&sum, dsum, sizeof sum, cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) want += (5 + i) * 24;
  if (sum != want) {
    printf("FAIL reduce %lld != %lld\n", sum, want);
    return 1;
  }
  cudaFuncAttributes fa;
  CHECK(cudaFuncGetAttributes(&fa, reduce));
  int blocks = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, scale, 256, 0));
  if (fa.maxThreadsPerBlock < 128 || blocks < 1) {
    printf("FAIL attributes\n");
    return 1;
  }
  CHECK(cudaEventDestroy(e0));
  CHECK(cudaEventDestroy(e1));
  CHECK(cudaStreamDestroy(st));
  CHECK(cudaFreeHost(hx));
  CHECK(cudaFree(dx));
  CHECK(cudaFree(din));
  CHECK(cudaFree(dout));
  CHECK(cudaFree(dsum));
  CHECK(cudaDeviceReset());
  printf("PASS multi\n");
  return 0;
}
