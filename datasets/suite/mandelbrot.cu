// mandelbrot.cu -- escape-time Mandelbrot iteration counts (branch divergence).
//
// usage: mandelbrot N [BLOCK] [MAXITER]
//   N        image is N x N pixels, 8 .. 16384
//   BLOCK    threads per block, multiple of 32 in 32 .. 1024 (default 256),
//            arranged as 32 x (BLOCK/32)
//   MAXITER  iteration cap per pixel, 1 .. 100000 (default 256)
// Launches per run: 2, grid ceil(N/32) x ceil(N/(BLOCK/32)) --
//   1. the whole set, [-2.5, 1] x [-1.75, 1.75] (large uniform regions);
//   2. a zoom on seahorse valley, centre (-0.745, 0.11), width 0.02 (escape
//      times vary pixel to pixel: heavy divergence).
// Check: exact.  Every float operation in the kernel uses explicit
// round-to-nearest intrinsics (no FMA contraction) in the same order as the
// CPU loop, which runs IEEE single precision, so counts must agree bit for bit.
#include "suite_util.h"

#define USAGE "mandelbrot N [BLOCK] [MAXITER]"

__global__ void mandel(int *out, int n, float x0, float y0, float step, int maxiter) {
  int px = blockIdx.x * blockDim.x + threadIdx.x;
  int py = blockIdx.y * blockDim.y + threadIdx.y;
  if (px >= n || py >= n) return;
  float cx = __fadd_rn(x0, __fmul_rn((float)px, step));
  float cy = __fadd_rn(y0, __fmul_rn((float)py, step));
  float x = 0.0f, y = 0.0f;
  int it = 0;
  while (it < maxiter) {
    float x2 = __fmul_rn(x, x), y2 = __fmul_rn(y, y);
    if (__fadd_rn(x2, y2) > 4.0f) break;
    y = __fadd_rn(__fmul_rn(__fmul_rn(2.0f, x), y), cy);
    x = __fadd_rn(__fsub_rn(x2, y2), cx);
    it++;
  }
  out[(size_t)py * n + px] = it;
}

static int mandel_ref(int px, int py, float x0, float y0, float step, int maxiter) {
  float cx = x0 + (float)px * step;
  float cy = y0 + (float)py * step;
  float x = 0.0f, y = 0.0f;
  int it = 0;
  while (it < maxiter) {
    float x2 = x * x, y2 = y * y;
    float r2 = x2 + y2;
    if (r2 > 4.0f) break;
    float tx = 2.0f * x;
    float txy = tx * y;
    y = txy + cy;
    float d = x2 - y2;
    x = d + cx;
    it++;
  }
  return it;
}

int main(int argc, char **argv) {
  if (argc < 2 || argc > 4) suite_usage(USAGE);
  int n = (int)suite_arg(argc, argv, 1, 0, 8, 16384, USAGE);
  int block = (int)suite_arg(argc, argv, 2, 256, 32, 1024, USAGE);
  int maxiter = (int)suite_arg(argc, argv, 3, 256, 1, 100000, USAGE);
  if (block % 32) suite_usage(USAGE);

  const float view_x0[2] = {-2.5f, -0.755f}, view_y0[2] = {-1.75f, 0.10f};
  const float view_w[2] = {3.5f, 0.02f};
  size_t bytes = (size_t)n * n * sizeof(int);
  int *dout[2], *got = (int *)suite_malloc(bytes);
  dim3 blk(32, block / 32), grd((n + 31) / 32, (n + block / 32 - 1) / (block / 32));
  for (int v = 0; v < 2; v++) {
    CHECK(cudaMalloc(&dout[v], bytes));
    mandel<<<grd, blk>>>(dout[v], n, view_x0[v], view_y0[v], view_w[v] / (float)n, maxiter);
    CHECK_LAUNCH();
  }
  CHECK(cudaDeviceSynchronize());

  long long bad = 0, total = 0;
  for (int v = 0; v < 2; v++) {
    CHECK(cudaMemcpy(got, dout[v], bytes, cudaMemcpyDeviceToHost));
    float step = view_w[v] / (float)n;
    for (int py = 0; py < n; py++)
      for (int px = 0; px < n; px++) {
        int want = mandel_ref(px, py, view_x0[v], view_y0[v], step, maxiter);
        int have = got[(size_t)py * n + px];
        total += want;
        if (have != want) {
          if (bad < 5) printf("view %d pixel (%d,%d) = %d, want %d\n", v, px, py, have, want);
          bad++;
        }
      }
    CHECK(cudaFree(dout[v]));
  }
  printf("mandelbrot: n=%d block=%d maxiter=%d total iterations %lld\n", n, block, maxiter, total);
  free(got);
  return suite_finish(bad);
}
