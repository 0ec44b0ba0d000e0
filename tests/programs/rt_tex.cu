/*
 * rt_tex.cu -- texture and surface objects through the cudart replacement
 * (tests/test_run.c), each result checked against a CPU reference that
 * implements the CUDA programming guide's texture fetching:
 *
 *   1. tex1Dfetch on linear memory, reading past the end (zeros);
 *   2. a 2-D float array, point sampling, unnormalized coordinates, clamp
 *      (coordinates outside the array);
 *   3. the same array with linear filtering, normalized coordinates and
 *      wrap (weights in 8-bit fixed point, as the hardware's);
 *   4. a 2-D uchar4 array read as normalized floats, border address mode;
 *   5. a 3-D array filled with cudaMemcpy3D, point sampling;
 *   6. a layered 2-D array (tex2DLayered);
 *   7. a pitched 2-D texture over cudaMallocPitch memory, read as ints;
 *   8. a surface: surf2Dread / surf2Dwrite double every element of an
 *      array, read back with cudaMemcpy2DFromArray; surf2Dwrite with
 *      cudaBoundaryModeZero outside the array is dropped.
 *
 * Prints "PASS tex" only when every check holds, else names the first
 * failing one and exits 1.
 */
#include <cmath>
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

#define CHECK(x)                                                        \
  do {                                                                  \
    cudaError_t e_ = (x);                                               \
    if (e_ != cudaSuccess) {                                            \
      printf("FAIL %s: %s\n", #x, cudaGetErrorName(e_));                \
      return 1;                                                         \
    }                                                                   \
  } while (0)

enum { W = 16, H = 8, D = 4, L = 3, N1 = 100 };

__global__ void fetch1d(cudaTextureObject_t t, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1Dfetch<float>(t, i);
}

__global__ void sample2d(cudaTextureObject_t t, const float *xs, const float *ys, float *out,
                         int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<float>(t, xs[i], ys[i]);
}

__global__ void sample2d4(cudaTextureObject_t t, const float *xs, const float *ys, float4 *out,
                          int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<float4>(t, xs[i], ys[i]);
}

__global__ void sample3d(cudaTextureObject_t t, float *out) {
  int x = threadIdx.x, y = threadIdx.y, z = blockIdx.x;
  out[(z * H + y) * W + x] = tex3D<float>(t, x + 0.5f, y + 0.5f, z + 0.5f);
}

__global__ void sample_layered(cudaTextureObject_t t, float *out) {
  int x = threadIdx.x, y = threadIdx.y, l = blockIdx.x;
  out[(l * H + y) * W + x] = tex2DLayered<float>(t, x + 0.5f, y + 0.5f, l);
}

__global__ void sample_pitch(cudaTextureObject_t t, int *out) {
  int x = threadIdx.x, y = blockIdx.x;
  out[y * W + x] = tex2D<int>(t, x + 0.5f, y + 0.5f);
}

__global__ void surf_double(cudaSurfaceObject_t s) {
  int x = threadIdx.x, y = blockIdx.x;
  float v;
  surf2Dread(&v, s, x * 4, y);
  surf2Dwrite(2 * v, s, x * 4, y);
  if (x == 0 && y == 0) surf2Dwrite(-1.0f, s, W * 4, 0, cudaBoundaryModeZero);
}

/* ---------------------------------------------------------- reference -- */

static int clampi(int i, int n) { return i < 0 ? 0 : i >= n ? n - 1 : i; }
static int wrapi(int i, int n) { return ((i % n) + n) % n; }

/* Bilinear filtering with 8-bit fixed-point weights, wrap addressing,
   normalized coordinates (programming guide, "Linear Filtering"). */
static float ref_linear_wrap(const float *a, float xn, float yn) {
  float x = xn * W - 0.5f, y = yn * H - 0.5f;
  int i = (int)floorf(x), j = (int)floorf(y);
  float al = floorf((x - floorf(x)) * 256 + 0.5f) / 256, be = floorf((y - floorf(y)) * 256 + 0.5f) / 256;
  float t00 = a[wrapi(j, H) * W + wrapi(i, W)], t10 = a[wrapi(j, H) * W + wrapi(i + 1, W)];
  float t01 = a[wrapi(j + 1, H) * W + wrapi(i, W)], t11 = a[wrapi(j + 1, H) * W + wrapi(i + 1, W)];
  return (1 - al) * (1 - be) * t00 + al * (1 - be) * t10 + (1 - al) * be * t01 + al * be * t11;
}

static int close_to(float a, float b) { return fabsf(a - b) <= 1e-5f * (1 + fabsf(b)); }

int main() {
  /* 1. linear memory, tex1Dfetch, past the end */
  float h1[N1], o1[N1 + 4];
  for (int i = 0; i < N1; i++) h1[i] = 0.5f * i - 7;
  float *d1, *do1;
  CHECK(cudaMalloc(&d1, sizeof h1));
  CHECK(cudaMalloc(&do1, sizeof o1));
  CHECK(cudaMemcpy(d1, h1, sizeof h1, cudaMemcpyHostToDevice));
  cudaResourceDesc rd;
  memset(&rd, 0, sizeof rd);
  rd.resType = cudaResourceTypeLinear;
  rd.res.linear.devPtr = d1;
  rd.res.linear.desc = cudaCreateChannelDesc<float>();
  rd.res.linear.sizeInBytes = sizeof h1;
  cudaTextureDesc td;
  memset(&td, 0, sizeof td);
  td.readMode = cudaReadModeElementType;
  cudaTextureObject_t t1;
  CHECK(cudaCreateTextureObject(&t1, &rd, &td, NULL));
  fetch1d<<<1, 128>>>(t1, do1, N1 + 4);
  CHECK(cudaMemcpy(o1, do1, sizeof o1, cudaMemcpyDeviceToHost));
  for (int i = 0; i < N1 + 4; i++)
    if (o1[i] != (i < N1 ? h1[i] : 0.0f)) { printf("FAIL 1 tex1Dfetch %d: %g\n", i, o1[i]); return 1; }

  /* 2. 2-D float array, point, clamp, unnormalized */
  float a2[H * W];
  for (int i = 0; i < H * W; i++) a2[i] = (float)(i * 3 % 17) + 0.25f * (i % 5);
  cudaChannelFormatDesc fd = cudaCreateChannelDesc<float>();
  cudaArray_t arr2;
  CHECK(cudaMallocArray(&arr2, &fd, W, H));
  CHECK(cudaMemcpy2DToArray(arr2, 0, 0, a2, W * sizeof(float), W * sizeof(float), H,
                            cudaMemcpyHostToDevice));
  enum { NS = 64 };
  float xs[NS], ys[NS], o2[NS];
  for (int i = 0; i < NS; i++) {
    xs[i] = -3.0f + 0.37f * i;
    ys[i] = -1.5f + 0.21f * i;
  }
  float *dxs, *dys, *do2;
  CHECK(cudaMalloc(&dxs, sizeof xs));
  CHECK(cudaMalloc(&dys, sizeof ys));
  CHECK(cudaMalloc(&do2, NS * sizeof(float4)));
  CHECK(cudaMemcpy(dxs, xs, sizeof xs, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dys, ys, sizeof ys, cudaMemcpyHostToDevice));
  memset(&rd, 0, sizeof rd);
  rd.resType = cudaResourceTypeArray;
  rd.res.array.array = arr2;
  memset(&td, 0, sizeof td);
  td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
  td.filterMode = cudaFilterModePoint;
  cudaTextureObject_t t2;
  CHECK(cudaCreateTextureObject(&t2, &rd, &td, NULL));
  sample2d<<<1, NS>>>(t2, dxs, dys, do2, NS);
  CHECK(cudaMemcpy(o2, do2, sizeof o2, cudaMemcpyDeviceToHost));
  for (int i = 0; i < NS; i++) {
    float want = a2[clampi((int)floorf(ys[i]), H) * W + clampi((int)floorf(xs[i]), W)];
    if (o2[i] != want) { printf("FAIL 2 point/clamp %d: %g, expected %g\n", i, o2[i], want); return 1; }
  }

  /* 3. the same array, linear filtering, normalized coordinates, wrap */
  for (int i = 0; i < NS; i++) {
    xs[i] = -0.3f + 0.029f * i;
    ys[i] = 1.2f - 0.041f * i;
  }
  CHECK(cudaMemcpy(dxs, xs, sizeof xs, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dys, ys, sizeof ys, cudaMemcpyHostToDevice));
  td.addressMode[0] = td.addressMode[1] = cudaAddressModeWrap;
  td.filterMode = cudaFilterModeLinear;
  td.normalizedCoords = 1;
  cudaTextureObject_t t3;
  CHECK(cudaCreateTextureObject(&t3, &rd, &td, NULL));
  sample2d<<<1, NS>>>(t3, dxs, dys, do2, NS);
  CHECK(cudaMemcpy(o2, do2, sizeof o2, cudaMemcpyDeviceToHost));
  for (int i = 0; i < NS; i++) {
    float want = ref_linear_wrap(a2, xs[i], ys[i]);
    if (!close_to(o2[i], want)) { printf("FAIL 3 linear/wrap %d: %g, expected %g\n", i, o2[i], want); return 1; }
  }

  /* 4. uchar4 read as normalized floats, border */
  uchar4 a4[H * W];
  for (int i = 0; i < H * W; i++) a4[i] = make_uchar4(i, 255 - i, (i * 7) & 255, 128);
  cudaChannelFormatDesc cd4 = cudaCreateChannelDesc<uchar4>();
  cudaArray_t arr4;
  CHECK(cudaMallocArray(&arr4, &cd4, W, H));
  CHECK(cudaMemcpy2DToArray(arr4, 0, 0, a4, W * sizeof(uchar4), W * sizeof(uchar4), H,
                            cudaMemcpyHostToDevice));
  for (int i = 0; i < NS; i++) {
    xs[i] = -2.0f + 0.33f * i;
    ys[i] = 0.5f + (i % 10);
  }
  CHECK(cudaMemcpy(dxs, xs, sizeof xs, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dys, ys, sizeof ys, cudaMemcpyHostToDevice));
  rd.res.array.array = arr4;
  memset(&td, 0, sizeof td);
  td.addressMode[0] = td.addressMode[1] = cudaAddressModeBorder;
  td.readMode = cudaReadModeNormalizedFloat;
  cudaTextureObject_t t4;
  CHECK(cudaCreateTextureObject(&t4, &rd, &td, NULL));
  sample2d4<<<1, NS>>>(t4, dxs, dys, (float4 *)do2, NS);
  float4 o4[NS];
  CHECK(cudaMemcpy(o4, do2, sizeof o4, cudaMemcpyDeviceToHost));
  for (int i = 0; i < NS; i++) {
    int x = (int)floorf(xs[i]), y = (int)floorf(ys[i]);
    float4 want = make_float4(0, 0, 0, 0);
    if (x >= 0 && x < W && y >= 0 && y < H) {
      uchar4 c = a4[y * W + x];
      want = make_float4(c.x / 255.0f, c.y / 255.0f, c.z / 255.0f, c.w / 255.0f);
    }
    if (!close_to(o4[i].x, want.x) || !close_to(o4[i].y, want.y) || !close_to(o4[i].z, want.z) ||
        !close_to(o4[i].w, want.w)) {
      printf("FAIL 4 normalized/border %d: %g %g %g %g\n", i, o4[i].x, o4[i].y, o4[i].z, o4[i].w);
      return 1;
    }
  }

  /* 5. 3-D array through cudaMemcpy3D */
  static float a5[D * H * W], o5[D * H * W];
  for (int i = 0; i < D * H * W; i++) a5[i] = (float)i - 100;
  cudaArray_t arr5;
  CHECK(cudaMalloc3DArray(&arr5, &fd, make_cudaExtent(W, H, D)));
  cudaMemcpy3DParms p3;
  memset(&p3, 0, sizeof p3);
  p3.srcPtr = make_cudaPitchedPtr(a5, W * sizeof(float), W, H);
  p3.dstArray = arr5;
  p3.extent = make_cudaExtent(W, H, D);
  p3.kind = cudaMemcpyHostToDevice;
  CHECK(cudaMemcpy3D(&p3));
  rd.res.array.array = arr5;
  memset(&td, 0, sizeof td);
  cudaTextureObject_t t5;
  CHECK(cudaCreateTextureObject(&t5, &rd, &td, NULL));
  float *do5;
  CHECK(cudaMalloc(&do5, sizeof o5));
  sample3d<<<D, dim3(W, H)>>>(t5, do5);
  CHECK(cudaMemcpy(o5, do5, sizeof o5, cudaMemcpyDeviceToHost));
  for (int i = 0; i < D * H * W; i++)
    if (o5[i] != a5[i]) { printf("FAIL 5 3-D %d: %g\n", i, o5[i]); return 1; }

  /* 6. layered 2-D */
  static float a6[L * H * W], o6[L * H * W];
  for (int i = 0; i < L * H * W; i++) a6[i] = 1000.0f * (i / (H * W)) + i % (H * W);
  cudaArray_t arr6;
  CHECK(cudaMalloc3DArray(&arr6, &fd, make_cudaExtent(W, H, L), cudaArrayLayered));
  p3.srcPtr = make_cudaPitchedPtr(a6, W * sizeof(float), W, H);
  p3.dstArray = arr6;
  p3.extent = make_cudaExtent(W, H, L);
  CHECK(cudaMemcpy3D(&p3));
  rd.res.array.array = arr6;
  cudaTextureObject_t t6;
  CHECK(cudaCreateTextureObject(&t6, &rd, &td, NULL));
  float *do6;
  CHECK(cudaMalloc(&do6, sizeof o6));
  sample_layered<<<L, dim3(W, H)>>>(t6, do6);
  CHECK(cudaMemcpy(o6, do6, sizeof o6, cudaMemcpyDeviceToHost));
  for (int i = 0; i < L * H * W; i++)
    if (o6[i] != a6[i]) { printf("FAIL 6 layered %d: %g\n", i, o6[i]); return 1; }

  /* 7. pitched 2-D texture of ints */
  int a7[H * W], o7[H * W];
  for (int i = 0; i < H * W; i++) a7[i] = i * i - 50;
  int *d7;
  size_t pitch;
  CHECK(cudaMallocPitch((void **)&d7, &pitch, W * sizeof(int), H));
  CHECK(cudaMemcpy2D(d7, pitch, a7, W * sizeof(int), W * sizeof(int), H, cudaMemcpyHostToDevice));
  memset(&rd, 0, sizeof rd);
  rd.resType = cudaResourceTypePitch2D;
  rd.res.pitch2D.devPtr = d7;
  rd.res.pitch2D.desc = cudaCreateChannelDesc<int>();
  rd.res.pitch2D.width = W;
  rd.res.pitch2D.height = H;
  rd.res.pitch2D.pitchInBytes = pitch;
  cudaTextureObject_t t7;
  CHECK(cudaCreateTextureObject(&t7, &rd, &td, NULL));
  int *do7;
  CHECK(cudaMalloc(&do7, sizeof o7));
  sample_pitch<<<H, W>>>(t7, do7);
  CHECK(cudaMemcpy(o7, do7, sizeof o7, cudaMemcpyDeviceToHost));
  for (int i = 0; i < H * W; i++)
    if (o7[i] != a7[i]) { printf("FAIL 7 pitch2D %d: %d\n", i, o7[i]); return 1; }

  /* 8. surface read-modify-write */
  cudaArray_t arr8;
  CHECK(cudaMallocArray(&arr8, &fd, W, H, cudaArraySurfaceLoadStore));
  CHECK(cudaMemcpy2DToArray(arr8, 0, 0, a2, W * sizeof(float), W * sizeof(float), H,
                            cudaMemcpyHostToDevice));
  memset(&rd, 0, sizeof rd);
  rd.resType = cudaResourceTypeArray;
  rd.res.array.array = arr8;
  cudaSurfaceObject_t s8;
  CHECK(cudaCreateSurfaceObject(&s8, &rd));
  surf_double<<<H, W>>>(s8);
  CHECK(cudaDeviceSynchronize());
  float o8[H * W];
  CHECK(cudaMemcpy2DFromArray(o8, W * sizeof(float), arr8, 0, 0, W * sizeof(float), H,
                              cudaMemcpyDeviceToHost));
  for (int i = 0; i < H * W; i++)
    if (o8[i] != 2 * a2[i]) { printf("FAIL 8 surface %d: %g\n", i, o8[i]); return 1; }

  cudaDestroyTextureObject(t1);
  cudaDestroyTextureObject(t2);
  cudaDestroyTextureObject(t3);
  cudaDestroyTextureObject(t4);
  cudaDestroyTextureObject(t5);
  cudaDestroyTextureObject(t6);
  cudaDestroyTextureObject(t7);
  cudaDestroySurfaceObject(s8);
  CHECK(cudaFreeArray(arr2));
  CHECK(cudaFreeArray(arr4));
  CHECK(cudaFreeArray(arr5));
  CHECK(cudaFreeArray(arr6));
  CHECK(cudaFreeArray(arr8));
  printf("PASS tex\n");
  return 0;
}
