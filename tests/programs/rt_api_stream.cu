/*
 * rt_api_stream.cu -- streams, events and host callbacks as a program uses
 * them, each result compared with the CPU's (tests/test_run.c): streams
 * created with flags and priorities (read back), work ordered across
 * streams by cudaStreamWaitEvent, cudaStreamAddCallback and
 * cudaLaunchHostFunc running after the work before them, events recorded,
 * queried, synchronised and timed (a cudaEventDisableTiming event cannot
 * be timed), the legacy and per-thread default streams, stream attributes,
 * capture queries (nothing is capturing), and the errors a GPU gives for a
 * destroyed stream or event.  Built once as usual and once with
 * `--default-stream per-thread` (the _ptds/_ptsz entry points).  Prints
 * "PASS stream".
 */
#include "rt_check.h"

__global__ void add(int *p, int n, int v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += v;
}

__global__ void spin(int *p, int n, int iters) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    int a = p[i];
    for (int k = 0; k < iters; k++) a = a * 3 + 1;
    p[i] = a;
  }
}

static int cb_count, cb_seen = -1, host_count, host_seen = -1;
static cudaError_t cb_status = cudaErrorUnknown;
static int *watched;

static void CUDART_CB on_stream(cudaStream_t s, cudaError_t st, void *u) {
  cb_count++;
  cb_status = st;
  cb_seen = *(int *)u + watched[0]; /* the work before it is done */
}

static void CUDART_CB on_host(void *u) {
  host_count++;
  host_seen = *(int *)u;
}

int main() {
  enum { N = 1024 };
  int h[N], o[N];
  for (int i = 0; i < N; i++) h[i] = i;
  int *d, *ph;
  CHECK(cudaMalloc(&d, sizeof h));
  CHECK(cudaMallocHost(&ph, sizeof h));
  watched = ph;

  cudaStream_t s1, s2, s3;
  int least = 1, greatest = 1, prio = 1;
  unsigned flags = 99;
  unsigned long long id1 = 0, id2 = 0;
  CHECK(cudaStreamCreate(&s1));
  CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  EXPECT(least == 0 && greatest < 0, "stream priorities %d..%d", least, greatest);
  CHECK(cudaStreamCreateWithPriority(&s3, cudaStreamDefault, greatest));
  CHECK(cudaStreamGetFlags(s2, &flags));
  EXPECT(flags == cudaStreamNonBlocking, "cudaStreamGetFlags: %u", flags);
  CHECK(cudaStreamGetPriority(s3, &prio));
  EXPECT(prio == greatest, "cudaStreamGetPriority: %d", prio);
  CHECK(cudaStreamGetId(s1, &id1));
  CHECK(cudaStreamGetId(s2, &id2));
  EXPECT(id1 != id2, "streams have distinct ids");
  int dev = -1;
  CHECK(cudaStreamGetDevice(s3, &dev));
  EXPECT(dev == 0, "cudaStreamGetDevice");

  cudaEvent_t e0, e1, e2, never;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  CHECK(cudaEventCreateWithFlags(&e2, cudaEventDisableTiming));
  CHECK(cudaEventCreateWithFlags(&never, cudaEventBlockingSync));
  EXPECT(cudaEventQuery(never) == cudaSuccess, "an event never recorded is complete");

  /* s1: copy, long kernel, kernel; s2 waits for s1's event, then adds 7 */
  CHECK(cudaMemcpyAsync(d, h, sizeof h, cudaMemcpyHostToDevice, s1));
  CHECK(cudaEventRecord(e0, s1));
  spin<<<N / 256, 256, 0, s1>>>(d, N, 2000);
  add<<<N / 256, 256, 0, s1>>>(d, N, 5);
  CHECK(cudaEventRecord(e1, s1));
  CHECK(cudaStreamWaitEvent(s2, e1, 0));
  add<<<N / 256, 256, 0, s2>>>(d, N, 7);
  CHECK(cudaEventRecordWithFlags(e2, s2, cudaEventRecordDefault));
  CHECK(cudaMemcpyAsync(ph, d, sizeof h, cudaMemcpyDeviceToHost, s2));
  int cookie = 77;
  CHECK(cudaStreamAddCallback(s2, on_stream, &cookie, 0));
  CHECK(cudaLaunchHostFunc(s2, on_host, &cookie));
  CHECK(cudaStreamSynchronize(s2));
  EXPECT(cudaStreamQuery(s2) == cudaSuccess, "a synchronised stream is idle");
  CHECK(cudaEventSynchronize(e2));
  EXPECT(cudaEventQuery(e2) == cudaSuccess, "a recorded event completes");
  int ok = 1;
  for (int i = 0; i < N; i++) {
    int a = h[i];
    for (int k = 0; k < 2000; k++) a = a * 3 + 1;
    ok &= ph[i] == a + 12;
  }
  EXPECT(ok, "work ordered across two streams by an event");
  int a0 = h[0];
  for (int k = 0; k < 2000; k++) a0 = a0 * 3 + 1;
  EXPECT(cb_count == 1 && cb_status == cudaSuccess && cb_seen == 77 + a0 + 12,
         "the stream callback ran once, after the copy before it");
  EXPECT(host_count == 1 && host_seen == 77, "the host function ran once");
  EXPECT_ERR(cudaStreamAddCallback(s2, on_stream, &cookie, 1), cudaErrorInvalidValue);

  float ms = -1;
  CHECK(cudaEventElapsedTime(&ms, e0, e1));
  EXPECT(ms >= 0, "elapsed time between two events: %f", ms);
  EXPECT_ERR(cudaEventElapsedTime(&ms, e0, e2), cudaErrorInvalidResourceHandle);
  EXPECT_ERR(cudaEventElapsedTime(&ms, e0, never), cudaErrorInvalidResourceHandle);

  /* the default streams: legacy (0, cudaStreamLegacy) and per-thread */
  add<<<N / 256, 256, 0, s1>>>(d, N, 1);
  add<<<N / 256, 256>>>(d, N, 1);
  add<<<N / 256, 256, 0, cudaStreamPerThread>>>(d, N, 1);
  add<<<N / 256, 256, 0, cudaStreamLegacy>>>(d, N, 1);
  CHECK(cudaMemcpyAsync(o, d, sizeof o, cudaMemcpyDeviceToHost, cudaStreamPerThread));
  CHECK(cudaStreamSynchronize(cudaStreamPerThread));
  CHECK(cudaStreamSynchronize(0));
  EXPECT(o[0] == ph[0] + 4 && o[N - 1] == ph[N - 1] + 4, "the default streams");
  EXPECT_ERR(cudaStreamDestroy(cudaStreamLegacy), cudaErrorInvalidResourceHandle);

  /* attributes are hints kept with the stream */
  cudaStreamAttrValue v = {}, w = {};
  v.accessPolicyWindow.base_ptr = d;
  v.accessPolicyWindow.num_bytes = sizeof h;
  v.accessPolicyWindow.hitRatio = 0.5f;
  v.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  v.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  CHECK(cudaStreamSetAttribute(s1, cudaStreamAttributeAccessPolicyWindow, &v));
  CHECK(cudaStreamGetAttribute(s1, cudaStreamAttributeAccessPolicyWindow, &w));
  EXPECT(w.accessPolicyWindow.base_ptr == d && w.accessPolicyWindow.hitRatio == 0.5f,
         "a stream attribute reads back");
  CHECK(cudaStreamCopyAttributes(s3, s1));
  CHECK(cudaStreamAttachMemAsync(s1, d, 0, cudaMemAttachSingle));
  CHECK(cudaCtxResetPersistingL2Cache());

  /* nothing is ever capturing */
  cudaStreamCaptureStatus cs = cudaStreamCaptureStatusActive;
  CHECK(cudaStreamIsCapturing(s1, &cs));
  EXPECT(cs == cudaStreamCaptureStatusNone, "cudaStreamIsCapturing");
  cs = cudaStreamCaptureStatusActive;
  CHECK(cudaStreamGetCaptureInfo(s2, &cs, NULL, NULL, NULL, NULL, NULL));
  EXPECT(cs == cudaStreamCaptureStatusNone, "cudaStreamGetCaptureInfo");
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  CHECK(cudaThreadExchangeStreamCaptureMode(&mode));
  CHECK(cudaThreadExchangeStreamCaptureMode(&mode));
  EXPECT(mode == cudaStreamCaptureModeRelaxed, "cudaThreadExchangeStreamCaptureMode swaps");

  /* destroyed handles are errors, not crashes */
  CHECK(cudaEventDestroy(e0));
  EXPECT_ERR(cudaEventRecord(e0, s1), cudaErrorInvalidResourceHandle);
  EXPECT_ERR(cudaEventDestroy(e0), cudaErrorInvalidResourceHandle);
  CHECK(cudaStreamDestroy(s3));
  EXPECT_ERR(cudaStreamSynchronize(s3), cudaErrorInvalidResourceHandle);
  EXPECT_ERR(cudaStreamDestroy(s3), cudaErrorInvalidResourceHandle);

  CHECK(cudaDeviceSynchronize());
  CHECK(cudaEventDestroy(e1));
  CHECK(cudaEventDestroy(e2));
  CHECK(cudaEventDestroy(never));
  CHECK(cudaStreamDestroy(s1));
  CHECK(cudaStreamDestroy(s2));
  DONE("stream");
}
