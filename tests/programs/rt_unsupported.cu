/*
 * rt_unsupported.cu -- entry points the cudart replacement does not
 * implement (tests/test_run.c).  The program tries CUDA graphs the way
 * programs do (stream capture, instantiate, launch), then falls back to
 * launching on the stream when that fails; every graph call must return
 * cudaErrorNotSupported (cudaGraphCreate twice: named once), as must
 * cudaIpcGetMemHandle and cudaGetDriverEntryPointByVersion, which are exported (the
 * program starts and reaches them: no "symbol lookup error").  The
 * fallback's result is compared with the CPU's; prints "PASS unsupported"
 * when all hold.  kcast run must name every unsupported call and exit 6.
 */
#include "rt_check.h"

__global__ void add(int *p, int n, int v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += v;
}

int main() {
  enum { N = 256 };
  int h[N];
  int *d;
  cudaStream_t s;
  CHECK(cudaMalloc(&d, sizeof h));
  CHECK(cudaMemset(d, 0, sizeof h));
  CHECK(cudaStreamCreate(&s));
  cudaGraph_t g;
  cudaGraphExec_t ge;
  EXPECT_ERR(cudaGraphCreate(&g, 0), cudaErrorNotSupported);
  EXPECT_ERR(cudaGraphCreate(&g, 0), cudaErrorNotSupported);
  if (cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess) {
    add<<<1, N, 0, s>>>(d, N, 1);
    CHECK(cudaStreamEndCapture(s, &g));
    CHECK(cudaGraphInstantiate(&ge, g, 0));
    CHECK(cudaGraphLaunch(ge, s));
  } else { /* no graphs: launch directly */
    cudaGetLastError();
    EXPECT_ERR(cudaGraphInstantiate(&ge, g, 0), cudaErrorNotSupported);
    add<<<1, N, 0, s>>>(d, N, 1);
  }
  CHECK(cudaStreamSynchronize(s));
  CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
  int ok = 1;
  for (int i = 0; i < N; i++) ok &= h[i] == 1;
  EXPECT(ok, "the stream computes the sum once, graph or not");
  cudaIpcMemHandle_t ipc;
  EXPECT_ERR(cudaIpcGetMemHandle(&ipc, d), cudaErrorNotSupported);
  void *fn = NULL;
  cudaDriverEntryPointQueryResult q;
  EXPECT_ERR(cudaGetDriverEntryPointByVersion("cuMemAlloc", &fn, 12000, cudaEnableDefault, &q),
             cudaErrorNotSupported);
  int *d2 = NULL;
  CHECK(cudaMalloc(&d2, 64)); /* the program goes on normally */
  DONE("unsupported");
}
