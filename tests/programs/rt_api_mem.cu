/*
 * rt_api_mem.cu -- the memory paths of the CUDA runtime a program takes,
 * each result compared with the CPU's (tests/test_run.c): device, pinned
 * (cudaMallocHost, cudaHostAlloc with its flags), managed (host access after
 * synchronising) and registered host memory (cudaHostRegister: a kernel
 * uses the host pointer); pitched 2-D memory and every cudaMemcpy2D
 * direction; cudaMalloc3D, cudaMemcpy3D both ways and cudaMemset3D;
 * cudaMemset, cudaMemset2D and their Async forms on a stream;
 * cudaMemcpyAsync; __constant__ and __device__ symbols (to, from, with an
 * offset, device to device, cudaGetSymbolAddress, cudaGetSymbolSize); stream-
 * ordered allocation from the default and a created memory pool with its
 * attributes; peer copies on the one device; cudaMemGetInfo;
 * cudaPointerGetAttributes of each kind of memory; and the errors a GPU
 * gives (a stray pointer in a copy, double registration, freeing host
 * memory with cudaFree).  Prints "PASS mem" when every check holds.
 */
#include "rt_check.h"

__constant__ float cscale[4];
__device__ int dglob[8];
__device__ int dcount;

__global__ void use_symbols(float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = out[i] * cscale[i % 4] + dglob[i % 8];
    atomicAdd(&dcount, 1);
  }
}

__global__ void inc(int *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += 1;
}

__global__ void add_rows(float *p, size_t pitch, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x < w && y < h) ((float *)((char *)p + y * pitch))[x] += 100.0f * y;
}

__global__ void triple3d(cudaPitchedPtr pp, int w, int h, int d) {
  int x = threadIdx.x, y = blockIdx.x, z = blockIdx.y;
  if (x < w && y < h && z < d) ((int *)((char *)pp.ptr + (z * h + y) * pp.pitch))[x] *= 3;
}

int main() {
  enum { N = 1000 };
  static int h[N], o[N];
  for (int i = 0; i < N; i++) h[i] = i * 3 - 7;

  /* device memory, pointer arithmetic on device addresses */
  int *d;
  CHECK(cudaMalloc(&d, sizeof h));
  CHECK(cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice));
  inc<<<(N + 255) / 256, 256>>>(d, N);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(o, d, sizeof o, cudaMemcpyDeviceToHost));
  int ok = 1;
  for (int i = 0; i < N; i++) ok &= o[i] == h[i] + 1;
  EXPECT(ok, "a kernel updates device memory copied in and out");
  CHECK(cudaMemcpy(o, d + 10, 10 * sizeof(int), cudaMemcpyDeviceToHost));
  EXPECT(o[0] == h[10] + 1, "a copy from an offset device pointer");

  /* pinned host memory and its flags */
  int *ph, *ph2;
  unsigned fl = 99;
  CHECK(cudaMallocHost(&ph, sizeof h));
  CHECK(cudaHostAlloc((void **)&ph2, sizeof h, cudaHostAllocMapped | cudaHostAllocPortable));
  CHECK(cudaHostGetFlags(&fl, ph2));
  EXPECT(fl == (cudaHostAllocMapped | cudaHostAllocPortable), "cudaHostGetFlags: %u", fl);
  CHECK(cudaHostGetFlags(&fl, ph2 + 10));
  EXPECT(fl == (cudaHostAllocMapped | cudaHostAllocPortable), "cudaHostGetFlags inside");
  EXPECT_ERR(cudaHostGetFlags(&fl, h), cudaErrorInvalidValue);
  for (int i = 0; i < N; i++) ph[i] = i;
  CHECK(cudaMemcpy(d, ph, sizeof h, cudaMemcpyHostToDevice));
  inc<<<4, 256>>>(d, N);
  CHECK(cudaMemcpy(ph2, d, sizeof h, cudaMemcpyDeviceToHost));
  ok = 1;
  for (int i = 0; i < N; i++) ok &= ph2[i] == i + 1;
  EXPECT(ok, "copies between pinned and device memory");
  EXPECT_ERR(cudaFree(ph), cudaErrorInvalidValue); /* pinned memory is cudaFreeHost's */

  /* managed memory: the host reads what the kernel wrote after synchronising */
  int *m;
  CHECK(cudaMallocManaged(&m, sizeof h));
  for (int i = 0; i < N; i++) m[i] = 2 * i;
  inc<<<4, 256>>>(m, N);
  CHECK(cudaDeviceSynchronize());
  ok = 1;
  for (int i = 0; i < N; i++) ok &= m[i] == 2 * i + 1;
  EXPECT(ok, "managed memory written by the host, updated by a kernel, read by the host");

  /* registered host memory: a kernel uses the host pointer itself */
  int *reg = (int *)malloc(sizeof h + 12), *dreg = NULL;
  int *r = reg + 3; /* not 256-byte aligned */
  for (int i = 0; i < N; i++) r[i] = 5 * i;
  CHECK(cudaHostRegister(r, sizeof h, cudaHostRegisterMapped));
  EXPECT_ERR(cudaHostRegister(r + 8, 64, 0), cudaErrorHostMemoryAlreadyRegistered);
  CHECK(cudaHostGetDevicePointer((void **)&dreg, r, 0));
  EXPECT(dreg == r, "the device pointer of registered memory is the host pointer");
  inc<<<4, 256>>>(r, N);
  CHECK(cudaDeviceSynchronize());
  ok = 1;
  for (int i = 0; i < N; i++) ok &= r[i] == 5 * i + 1;
  EXPECT(ok, "a kernel updates registered host memory in place");
  CHECK(cudaHostGetFlags(&fl, r));
  EXPECT(fl == cudaHostRegisterMapped, "flags of registered memory: %u", fl);
  cudaPointerAttributes a;
  CHECK(cudaPointerGetAttributes(&a, r + 7));
  EXPECT(a.type == cudaMemoryTypeHost, "registered memory is host memory to the runtime");
  CHECK(cudaHostUnregister(r));
  EXPECT_ERR(cudaHostUnregister(r), cudaErrorHostMemoryNotRegistered);
  CHECK(cudaPointerGetAttributes(&a, r));
  EXPECT(a.type == cudaMemoryTypeUnregistered, "unregistered again");
  CHECK(cudaMemcpy(o, r, sizeof o, cudaMemcpyHostToHost));
  EXPECT(o[9] == 46, "plain host memory after cudaHostUnregister");
  free(reg);

  /* pitched 2-D memory, every direction of cudaMemcpy2D, cudaMemset2D */
  enum { W = 37, H = 5 };
  float hp[H][W], hq[H][W], hh[H][W];
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) hp[y][x] = y * W + x;
  float *dp, *dp2;
  size_t pitch, pitch2;
  CHECK(cudaMallocPitch((void **)&dp, &pitch, W * sizeof(float), H));
  CHECK(cudaMallocPitch((void **)&dp2, &pitch2, W * sizeof(float), H));
  EXPECT(pitch >= W * sizeof(float) && pitch % 256 == 0, "cudaMallocPitch pitch %zu", pitch);
  CHECK(cudaMemcpy2D(dp, pitch, hp, W * sizeof(float), W * sizeof(float), H,
                     cudaMemcpyHostToDevice));
  add_rows<<<dim3(1, H), 64>>>(dp, pitch, W, H);
  CHECK(cudaMemcpy2D(dp2, pitch2, dp, pitch, W * sizeof(float), H, cudaMemcpyDeviceToDevice));
  CHECK(cudaMemcpy2D(hq, W * sizeof(float), dp2, pitch2, W * sizeof(float), H,
                     cudaMemcpyDeviceToHost));
  ok = 1;
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) ok &= hq[y][x] == hp[y][x] + 100.0f * y;
  EXPECT(ok, "cudaMemcpy2D host to device, device to device, device to host");
  CHECK(cudaMemcpy2D(hh, W * sizeof(float), hq, W * sizeof(float), W * sizeof(float), H,
                     cudaMemcpyHostToHost));
  EXPECT(!memcmp(hh, hq, sizeof hh), "cudaMemcpy2D host to host");
  EXPECT_ERR(cudaMemcpy2D(dp, 8, hp, W * sizeof(float), W * sizeof(float), H,
                          cudaMemcpyHostToDevice), cudaErrorInvalidPitchValue);
  CHECK(cudaMemset2D(dp, pitch, 0, W * sizeof(float), H));
  CHECK(cudaMemcpy2D(hq, W * sizeof(float), dp, pitch, W * sizeof(float), H,
                     cudaMemcpyDeviceToHost));
  ok = 1;
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) ok &= hq[y][x] == 0;
  EXPECT(ok, "cudaMemset2D clears every row");

  /* 3-D: cudaMalloc3D, cudaMemcpy3D both ways, cudaMemset3D */
  enum { X = 20, Y = 6, Z = 4 };
  static int h3[Z][Y][X], o3[Z][Y][X];
  for (int z = 0; z < Z; z++)
    for (int y = 0; y < Y; y++)
      for (int x = 0; x < X; x++) h3[z][y][x] = z * 1000 + y * 100 + x;
  cudaPitchedPtr pp;
  cudaExtent ext = make_cudaExtent(X * sizeof(int), Y, Z);
  CHECK(cudaMalloc3D(&pp, ext));
  cudaMemcpy3DParms p3 = {};
  p3.srcPtr = make_cudaPitchedPtr(h3, X * sizeof(int), X, Y);
  p3.dstPtr = pp;
  p3.extent = ext;
  p3.kind = cudaMemcpyHostToDevice;
  CHECK(cudaMemcpy3D(&p3));
  triple3d<<<dim3(Y, Z), 32>>>(pp, X, Y, Z);
  cudaMemcpy3DParms q3 = {};
  q3.srcPtr = pp;
  q3.dstPtr = make_cudaPitchedPtr(o3, X * sizeof(int), X, Y);
  q3.extent = ext;
  q3.kind = cudaMemcpyDeviceToHost;
  CHECK(cudaMemcpy3D(&q3));
  ok = 1;
  for (int z = 0; z < Z; z++)
    for (int y = 0; y < Y; y++)
      for (int x = 0; x < X; x++) ok &= o3[z][y][x] == 3 * h3[z][y][x];
  EXPECT(ok, "cudaMemcpy3D in, a kernel on the pitched volume, cudaMemcpy3D out");
  cudaMemcpy3DPeerParms pq = {};
  pq.srcPtr = pp, pq.dstPtr = q3.dstPtr, pq.extent = ext;
  memset(o3, 0, sizeof o3);
  CHECK(cudaMemcpy3DPeer(&pq));
  EXPECT(o3[3][5][19] == 3 * h3[3][5][19], "cudaMemcpy3DPeer on the one device");
  CHECK(cudaMemset3D(pp, 0, make_cudaExtent(X * sizeof(int), Y, 2)));
  CHECK(cudaMemcpy3D(&q3));
  EXPECT(o3[1][5][19] == 0 && o3[2][0][0] == 3 * h3[2][0][0],
         "cudaMemset3D clears the slices asked for, no more");

  /* the Async forms on a stream */
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  CHECK(cudaMemsetAsync(d, 0, sizeof h, s));
  CHECK(cudaMemcpyAsync(d, h, 100 * sizeof(int), cudaMemcpyHostToDevice, s));
  inc<<<4, 256, 0, s>>>(d, N);
  CHECK(cudaMemcpyAsync(o, d, sizeof o, cudaMemcpyDeviceToHost, s));
  CHECK(cudaStreamSynchronize(s));
  ok = 1;
  for (int i = 0; i < N; i++) ok &= o[i] == (i < 100 ? h[i] : 0) + 1;
  EXPECT(ok, "cudaMemsetAsync, cudaMemcpyAsync and a launch in order on a stream");
  CHECK(cudaMemset2DAsync(dp, pitch, 0xff, 8, 2, s));
  CHECK(cudaMemset3DAsync(pp, 0, make_cudaExtent(4, 1, 1), s));
  CHECK(cudaMemcpy2DAsync(hq, W * sizeof(float), dp, pitch, W * sizeof(float), H,
                          cudaMemcpyDeviceToHost, s));
  CHECK(cudaStreamSynchronize(s));
  unsigned char *hb = (unsigned char *)hq;
  EXPECT(hb[0] == 0xff && hb[7] == 0xff && hb[8] == 0 && hb[W * 4] == 0xff,
         "cudaMemset2DAsync sets width bytes of each row");

  /* symbols */
  float cs[4] = {1, 2, 3, 4};
  int dg[8] = {0, 1, 2, 3, 4, 5, 6, 7}, zero = 0;
  CHECK(cudaMemcpyToSymbol(cscale, cs, sizeof cs));
  CHECK(cudaMemcpyToSymbol(dglob, dg, 4 * sizeof(int)));
  CHECK(cudaMemcpyToSymbol(dglob, dg + 4, 4 * sizeof(int), 4 * sizeof(int),
                           cudaMemcpyHostToDevice));
  CHECK(cudaMemcpyToSymbolAsync(dcount, &zero, sizeof zero, 0, cudaMemcpyHostToDevice, s));
  float *df, hf[64], of[64];
  for (int i = 0; i < 64; i++) hf[i] = (float)i;
  CHECK(cudaMalloc(&df, sizeof hf));
  CHECK(cudaMemcpy(df, hf, sizeof hf, cudaMemcpyHostToDevice));
  use_symbols<<<2, 32>>>(df, 64);
  CHECK(cudaMemcpy(of, df, sizeof of, cudaMemcpyDeviceToHost));
  ok = 1;
  for (int i = 0; i < 64; i++) ok &= of[i] == hf[i] * cs[i % 4] + dg[i % 8];
  EXPECT(ok, "a kernel reads __constant__ and __device__ arrays the host wrote");
  int cnt = 0, back[8];
  CHECK(cudaMemcpyFromSymbol(&cnt, dcount, sizeof cnt));
  EXPECT(cnt == 64, "cudaMemcpyFromSymbol of a counter the kernel incremented: %d", cnt);
  CHECK(cudaMemcpyFromSymbol(back, dglob, 4 * sizeof(int), 4 * sizeof(int)));
  EXPECT(back[0] == 4 && back[3] == 7, "cudaMemcpyFromSymbol with an offset");
  EXPECT_ERR(cudaMemcpyToSymbol(dglob, dg, 16 * sizeof(int)), cudaErrorInvalidValue);
  int *pg;
  CHECK(cudaGetSymbolAddress((void **)&pg, dglob));
  inc<<<1, 8>>>(pg, 8);
  CHECK(cudaMemcpyFromSymbolAsync(back, dglob, sizeof back, 0, cudaMemcpyDeviceToHost, s));
  CHECK(cudaStreamSynchronize(s));
  EXPECT(back[7] == 8, "a kernel through cudaGetSymbolAddress's pointer");
  size_t ssz;
  CHECK(cudaGetSymbolSize(&ssz, dglob));
  EXPECT(ssz == 32, "cudaGetSymbolSize %zu", ssz);
  CHECK(cudaMemcpyToSymbol(dglob, d, 8 * sizeof(int), 0, cudaMemcpyDeviceToDevice));
  CHECK(cudaMemcpyFromSymbol(back, dglob, sizeof back));
  EXPECT(back[0] == o[0] && back[7] == o[7], "cudaMemcpyToSymbol from device memory");

  /* stream-ordered allocation and memory pools */
  cudaMemPool_t pool, pool2;
  CHECK(cudaDeviceGetDefaultMemPool(&pool, 0));
  unsigned long long thr = 1ull << 30, v64 = 0;
  CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &thr));
  CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &v64));
  EXPECT(v64 == thr, "a pool's release threshold reads back");
  int *pa, *pb;
  CHECK(cudaMallocAsync(&pa, 4096, s));
  CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &v64));
  EXPECT(v64 == 4096, "a pool counts the bytes allocated from it: %llu", v64);
  cudaMemPoolProps props = {};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  CHECK(cudaMemPoolCreate(&pool2, &props));
  CHECK(cudaMallocFromPoolAsync(&pb, 1000 * sizeof(int), pool2, s));
  CHECK(cudaMemcpyAsync(pb, h, sizeof h, cudaMemcpyHostToDevice, s));
  inc<<<4, 256, 0, s>>>(pb, N);
  CHECK(cudaMemcpyAsync(o, pb, sizeof o, cudaMemcpyDeviceToHost, s));
  CHECK(cudaFreeAsync(pb, s));
  CHECK(cudaFreeAsync(pa, s));
  CHECK(cudaStreamSynchronize(s));
  EXPECT(o[999] == h[999] + 1, "a kernel on memory from a created pool");
  CHECK(cudaMemPoolGetAttribute(pool2, cudaMemPoolAttrUsedMemHigh, &v64));
  EXPECT(v64 == 4000, "a pool's high-water mark: %llu", v64);
  CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &v64));
  EXPECT(v64 == 0, "freed memory leaves its pool: %llu", v64);
  CHECK(cudaMemPoolTrimTo(pool, 0));
  CHECK(cudaMemPoolDestroy(pool2));

  /* peer copies on the one device; other devices do not exist */
  CHECK(cudaMemcpyPeerAsync(d, 0, df, 0, 64, s));
  EXPECT_ERR(cudaMemcpyPeer(d, 1, df, 0, 64), cudaErrorInvalidDevice);

  /* queries */
  size_t fr = 0, tot = 0;
  CHECK(cudaMemGetInfo(&fr, &tot));
  EXPECT(fr > 0 && tot >= fr, "cudaMemGetInfo");
  CHECK(cudaPointerGetAttributes(&a, d + 5));
  EXPECT(a.type == cudaMemoryTypeDevice && a.devicePointer == d + 5 && a.device == 0,
         "attributes of device memory");
  CHECK(cudaPointerGetAttributes(&a, m));
  EXPECT(a.type == cudaMemoryTypeManaged && a.device == 0, "attributes of managed memory");
  CHECK(cudaPointerGetAttributes(&a, ph));
  EXPECT(a.type == cudaMemoryTypeHost && a.hostPointer == ph, "attributes of pinned memory");
  CHECK(cudaPointerGetAttributes(&a, h));
  EXPECT(a.type == cudaMemoryTypeUnregistered, "attributes of pageable host memory");

  /* a stray pointer is an error, not a crash */
  EXPECT_ERR(cudaMemcpy(o, (void *)0x1234, 16, cudaMemcpyDeviceToHost), cudaErrorInvalidValue);

  CHECK(cudaFree(d));
  CHECK(cudaFreeHost(ph));
  CHECK(cudaFreeHost(ph2));
  CHECK(cudaFree(m));
  CHECK(cudaFree(dp));
  CHECK(cudaFree(dp2));
  CHECK(cudaFree(pp.ptr));
  CHECK(cudaFree(df));
  CHECK(cudaStreamDestroy(s));
  DONE("mem");
}
