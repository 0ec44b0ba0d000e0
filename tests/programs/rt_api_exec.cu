/*
 * rt_api_exec.cu -- the launch paths of the CUDA runtime a program takes,
 * each result compared with the CPU's (tests/test_run.c): <<<>>> with
 * dynamic shared memory on a stream, function templates, cudaLaunchKernel,
 * cudaLaunchKernelEx with the attributes programs pass (priority,
 * programmatic serialization, an access policy window, a completion
 * event), cudaLaunchCooperativeKernel of a kernel that does not synchronise
 * the grid, cudaFuncGetAttributes / cudaFuncSetAttribute (the dynamic
 * shared memory limit), cudaFuncGetName, cudaFuncGetParamInfo, the
 * occupancy calculators, device printf, and the errors a GPU gives for
 * launches it refuses (too many threads, a zero grid, too much shared
 * memory) -- the next launch working afterwards.  Prints "PASS exec".
 */
#include "rt_check.h"

template <typename T, int K> __global__ void axpy(T *y, const T *x, T a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i] + K;
}

/* reverse each block's n values through dynamic shared memory */
__global__ void reverse(const int *in, int *out, int n) {
  extern __shared__ int s[];
  int t = threadIdx.x;
  if (t < n) s[t] = in[blockIdx.x * n + t];
  __syncthreads();
  if (t < n) out[blockIdx.x * n + t] = s[n - 1 - t];
}

/* 100 KiB of dynamic shared memory: needs the attribute */
__global__ void big_shared(int *out) {
  extern __shared__ int s[];
  s[threadIdx.x * 100] = threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = s[(blockDim.x - 1 - threadIdx.x) * 100];
}

/* one value per block, summed by atomics: a cooperative launch that does
   not synchronise the grid */
__global__ void block_sums(const int *x, int n, int *total) {
  int acc = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    acc += x[i];
  atomicAdd(total, acc);
}

__global__ void say(int v) {
  if (threadIdx.x < 2) printf("device printf %d from thread %d\n", v, threadIdx.x);
}

__global__ void set(int *p, int v) { p[threadIdx.x] = v; }

int main() {
  enum { N = 512 };
  float hx[N], hy[N], oy[N];
  for (int i = 0; i < N; i++) hx[i] = (float)i, hy[i] = 1000.0f - i;
  float *dx, *dy;
  CHECK(cudaMalloc(&dx, sizeof hx));
  CHECK(cudaMalloc(&dy, sizeof hy));
  CHECK(cudaMemcpy(dx, hx, sizeof hx, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dy, hy, sizeof hy, cudaMemcpyHostToDevice));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

  /* a template by <<<>>>, then by cudaLaunchKernel, then cudaLaunchKernelEx */
  axpy<float, 3><<<N / 128, 128, 0, s>>>(dy, dx, 2.0f, N);
  CHECK(cudaGetLastError());
  float a = 0.5f;
  int n = N;
  void *args[] = {&dy, &dx, &a, &n};
  CHECK(cudaLaunchKernel((const void *)axpy<float, 3>, dim3(N / 64), dim3(64), args, 0, s));
  cudaEvent_t done;
  CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  cudaLaunchAttribute at[4];
  at[0].id = cudaLaunchAttributePriority;
  at[0].val.priority = -1;
  at[1].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  at[1].val.programmaticStreamSerializationAllowed = 1;
  at[2].id = cudaLaunchAttributeAccessPolicyWindow;
  at[2].val.accessPolicyWindow.base_ptr = dy;
  at[2].val.accessPolicyWindow.num_bytes = sizeof hy;
  at[2].val.accessPolicyWindow.hitRatio = 1.0f;
  at[2].val.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  at[2].val.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  at[3].id = cudaLaunchAttributeLaunchCompletionEvent;
  at[3].val.launchCompletionEvent.event = done;
  at[3].val.launchCompletionEvent.flags = 0;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(N / 256);
  cfg.blockDim = dim3(256);
  cfg.stream = s;
  cfg.attrs = at;
  cfg.numAttrs = 4;
  CHECK(cudaLaunchKernelEx(&cfg, axpy<float, 3>, dy, (const float *)dx, 1.0f, N));
  CHECK(cudaEventSynchronize(done));
  CHECK(cudaStreamSynchronize(s));
  CHECK(cudaMemcpy(oy, dy, sizeof oy, cudaMemcpyDeviceToHost));
  int ok = 1;
  for (int i = 0; i < N; i++) {
    float r = 2.0f * hx[i] + hy[i] + 3;
    r = 0.5f * hx[i] + r + 3;
    r = 1.0f * hx[i] + r + 3;
    ok &= oy[i] == r;
  }
  EXPECT(ok, "a template launched by <<<>>>, cudaLaunchKernel and cudaLaunchKernelEx in order");
  int *ix;
  CHECK(cudaMalloc(&ix, N * sizeof(int)));
  CHECK(cudaMemset(ix, 0, N * sizeof(int)));
  axpy<int, 7><<<N / 256, 256>>>(ix, ix, 5, N);
  int oi[N];
  CHECK(cudaMemcpy(oi, ix, sizeof oi, cudaMemcpyDeviceToHost));
  EXPECT(oi[3] == 7 && oi[511] == 7, "a second instantiation of the template");

  /* dynamic shared memory on a stream */
  enum { B = 4, T = 200 };
  int hin[B * T], hout[B * T];
  for (int i = 0; i < B * T; i++) hin[i] = i * 7;
  int *din, *dout;
  CHECK(cudaMalloc(&din, sizeof hin));
  CHECK(cudaMalloc(&dout, sizeof hin));
  CHECK(cudaMemcpy(din, hin, sizeof hin, cudaMemcpyHostToDevice));
  reverse<<<B, 256, T * sizeof(int), s>>>(din, dout, T);
  CHECK(cudaMemcpyAsync(hout, dout, sizeof hout, cudaMemcpyDeviceToHost, s));
  CHECK(cudaStreamSynchronize(s));
  ok = 1;
  for (int b = 0; b < B; b++)
    for (int t = 0; t < T; t++) ok &= hout[b * T + t] == hin[b * T + T - 1 - t];
  EXPECT(ok, "dynamic shared memory: each block reversed");

  /* function attributes and the dynamic shared memory limit */
  cudaFuncAttributes fa;
  CHECK(cudaFuncGetAttributes(&fa, reverse));
  EXPECT(fa.maxThreadsPerBlock == 1024 && fa.maxDynamicSharedSizeBytes == 48 * 1024,
         "cudaFuncGetAttributes: %d threads, %d dynamic shared bytes", fa.maxThreadsPerBlock,
         fa.maxDynamicSharedSizeBytes);
  big_shared<<<1, 256, 100 * 1024>>>(dout);
  EXPECT_ERR(cudaGetLastError(), cudaErrorInvalidValue);
  CHECK(cudaFuncSetAttribute(big_shared, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             100 * 1024));
  CHECK(cudaFuncSetAttribute(big_shared, cudaFuncAttributePreferredSharedMemoryCarveout, 100));
  big_shared<<<1, 256, 100 * 1024>>>(dout);
  CHECK(cudaGetLastError());
  int ob[256];
  CHECK(cudaMemcpy(ob, dout, sizeof ob, cudaMemcpyDeviceToHost));
  ok = 1;
  for (int i = 0; i < 256; i++) ok &= ob[i] == 255 - i;
  EXPECT(ok, "100 KiB of dynamic shared memory once the attribute allows it");
  CHECK(cudaFuncGetAttributes(&fa, big_shared));
  EXPECT(fa.maxDynamicSharedSizeBytes == 100 * 1024, "the attribute reads back");
  EXPECT_ERR(cudaFuncSetAttribute(big_shared, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  1 << 20), cudaErrorInvalidValue);
  EXPECT_ERR(cudaFuncGetAttributes(&fa, (const void *)main), cudaErrorInvalidDeviceFunction);

  /* names and parameters */
  const char *name = NULL;
  CHECK(cudaFuncGetName(&name, reverse));
  EXPECT(name && !strcmp(name, "_Z7reversePKiPii"), "cudaFuncGetName: %s", name ? name : "");
  size_t off = 0, sz = 0;
  CHECK(cudaFuncGetParamInfo((const void *)axpy<float, 3>, 2, &off, &sz));
  EXPECT(off == 16 && sz == 4, "cudaFuncGetParamInfo of the third parameter: %zu %zu", off, sz);
  EXPECT_ERR(cudaFuncGetParamInfo((const void *)axpy<float, 3>, 4, &off, &sz),
             cudaErrorInvalidValue);

  /* occupancy */
  int nb = 0, minGrid = 0, blockSize = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, reverse, 256, T * sizeof(int)));
  EXPECT(nb == 8, "8 blocks of 256 threads per SM (2048 threads): %d", nb);
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, big_shared, 64, 100 * 1024));
  EXPECT(nb == 2, "2 blocks of 100 KiB shared memory per SM (228 KiB): %d", nb);
  CHECK(cudaOccupancyMaxPotentialBlockSize(&minGrid, &blockSize, axpy<float, 3>, 0, 0));
  EXPECT(blockSize > 0 && blockSize <= 1024 && minGrid > 0, "potential block size %d, grid %d",
         blockSize, minGrid);
  size_t avail = 0;
  CHECK(cudaOccupancyAvailableDynamicSMemPerBlock(&avail, reverse, 2, 256));
  EXPECT(avail == 114 * 1024 - 1024, "dynamic shared memory with 2 blocks per SM: %zu", avail);

  /* a cooperative launch of a kernel that does not synchronise the grid */
  enum { CN = 10000 };
  static int hc[CN];
  int ref = 0, tot = 0, *dc, *dtot;
  for (int i = 0; i < CN; i++) hc[i] = i % 13, ref += hc[i];
  CHECK(cudaMalloc(&dc, sizeof hc));
  CHECK(cudaMalloc(&dtot, sizeof(int)));
  CHECK(cudaMemcpy(dc, hc, sizeof hc, cudaMemcpyHostToDevice));
  CHECK(cudaMemset(dtot, 0, sizeof(int)));
  int cn = CN;
  void *cargs[] = {&dc, &cn, &dtot};
  CHECK(cudaLaunchCooperativeKernel((const void *)block_sums, dim3(8), dim3(128), cargs, 0, 0));
  CHECK(cudaMemcpy(&tot, dtot, sizeof tot, cudaMemcpyDeviceToHost));
  EXPECT(tot == ref, "a cooperative launch sums %d, the CPU %d", tot, ref);
  EXPECT_ERR(cudaLaunchCooperativeKernel((const void *)block_sums, dim3(132 * 32 + 1),
                                         dim3(32), cargs, 0, 0),
             cudaErrorCooperativeLaunchTooLarge);

  /* device printf */
  say<<<1, 4>>>(42);
  CHECK(cudaDeviceSynchronize());

  /* refused launches: the error a GPU returns, once; later launches run */
  set<<<1, 2048>>>(ix, 1);
  EXPECT(cudaPeekAtLastError() == cudaErrorInvalidConfiguration, "peek after 2048 threads");
  EXPECT(cudaGetLastError() == cudaErrorInvalidConfiguration, "get after 2048 threads");
  EXPECT(cudaGetLastError() == cudaSuccess, "the error is read once");
  set<<<0, 32>>>(ix, 1);
  EXPECT_ERR(cudaGetLastError(), cudaErrorInvalidConfiguration);
  set<<<dim3(1, 70000), 32>>>(ix, 1);
  EXPECT_ERR(cudaGetLastError(), cudaErrorInvalidConfiguration);
  set<<<1, 32>>>(ix, 9);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(oi, ix, 32 * sizeof(int), cudaMemcpyDeviceToHost));
  EXPECT(oi[0] == 9 && oi[31] == 9, "a launch after refused ones runs");
  DONE("exec");
}
