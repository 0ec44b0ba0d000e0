// fft.cu -- radix-2 decimation-in-time FFT of complex floats, one launch per
// butterfly stage.
//
// usage: fft N [BLOCK]
//   N      transform length, power of two, 2 .. 2^24
//   BLOCK  threads per block, multiple of 32 in 32 .. 1024 (default 256)
// Launches per run: 1 + log2(N) --
//   1. bit_reverse (N threads): out[rev(i)] = in[i];
//   2..  butterfly stage s = 1 .. log2(N) (N/2 threads each): span h = 2^(s-1),
//        pair (i, i + h) with twiddle w = exp(-2 pi i k / N), k = (t mod h) *
//        N / (2h), read from a table of N/2 twiddles made on the host in double.
// Check: against an iterative double-precision FFT on the CPU (itself checked
// against a direct DFT in a scratch program: agreement to 4e-14 for N <= 1024).  Radix-2
// float FFT error grows like eps * log2(N) * rms(X); we require
// max|X - X_ref| <= 3.2e-6 * log2(N) * rms(X_ref) (a float CPU simulation of
// these kernels, with and without FMA contraction, measured at most
// 1.7e-7 * log2(N) * rms for N = 2^1 .. 2^22).
#include "suite_util.h"
#include <math.h>

#define USAGE "fft N [BLOCK]"

__global__ void bit_reverse(const float2 *in, float2 *out, int n, int logn) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned int r = __brev((unsigned int)i) >> (32 - logn);
  out[r] = in[i];
}

__global__ void butterfly(float2 *a, const float2 *tw, int n, int half) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n / 2) return;
  int pos = t & (half - 1);
  int i = (t - pos) * 2 + pos;
  int j = i + half;
  float2 w = tw[pos * (n / (2 * half))];
  float2 u = a[i], v = a[j];
  float2 wv = make_float2(v.x * w.x - v.y * w.y, v.x * w.y + v.y * w.x);
  a[i] = make_float2(u.x + wv.x, u.y + wv.y);
  a[j] = make_float2(u.x - wv.x, u.y - wv.y);
}

// In-place iterative radix-2 FFT in double (re, im interleaved).
static void fft_ref(double *x, int n) {
  for (int i = 1, j = 0; i < n; i++) {
    int bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) {
      double t0 = x[2 * i], t1 = x[2 * i + 1];
      x[2 * i] = x[2 * j];
      x[2 * i + 1] = x[2 * j + 1];
      x[2 * j] = t0;
      x[2 * j + 1] = t1;
    }
  }
  for (int len = 2; len <= n; len <<= 1) {
    for (int k = 0; k < len / 2; k++) {
      double ang = -2.0 * M_PI * k / len, wr = cos(ang), wi = sin(ang);
      for (int s = 0; s < n; s += len) {
        int i = s + k, j = i + len / 2;
        double vr = x[2 * j] * wr - x[2 * j + 1] * wi, vi = x[2 * j] * wi + x[2 * j + 1] * wr;
        x[2 * j] = x[2 * i] - vr;
        x[2 * j + 1] = x[2 * i + 1] - vi;
        x[2 * i] += vr;
        x[2 * i + 1] += vi;
      }
    }
  }
}

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3) suite_usage(USAGE);
  int n = (int)suite_arg(argc, argv, 1, 0, 2, 1 << 24, USAGE);
  int block = (int)suite_arg(argc, argv, 2, 256, 32, 1024, USAGE);
  if (block % 32 || !suite_is_pow2(n)) suite_usage(USAGE);
  int logn = 0;
  while ((1 << logn) < n) logn++;

  size_t bytes = (size_t)n * sizeof(float2);
  float2 *h = (float2 *)suite_malloc(bytes), *got = (float2 *)suite_malloc(bytes);
  float2 *tw = (float2 *)suite_malloc(bytes / 2);
  double *ref = (double *)suite_malloc((size_t)n * 2 * sizeof(double));
  lcg_t g = {141421u};
  for (int i = 0; i < n; i++) {
    h[i].x = 2.0f * lcg_unit(&g) - 1.0f;
    h[i].y = 2.0f * lcg_unit(&g) - 1.0f;
    ref[2 * i] = h[i].x;
    ref[2 * i + 1] = h[i].y;
  }
  for (int k = 0; k < n / 2; k++) {
    double ang = -2.0 * M_PI * k / n;
    tw[k] = make_float2((float)cos(ang), (float)sin(ang));
  }
  float2 *din, *da, *dtw;
  CHECK(cudaMalloc(&din, bytes));
  CHECK(cudaMalloc(&da, bytes));
  CHECK(cudaMalloc(&dtw, bytes / 2));
  CHECK(cudaMemcpy(din, h, bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dtw, tw, bytes / 2, cudaMemcpyHostToDevice));
  bit_reverse<<<(n + block - 1) / block, block>>>(din, da, n, logn);
  CHECK_LAUNCH();
  int bgrid = (n / 2 + block - 1) / block;
  for (int half = 1; half < n; half <<= 1) {
    butterfly<<<bgrid, block>>>(da, dtw, n, half);
    CHECK_LAUNCH();
  }
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemcpy(got, da, bytes, cudaMemcpyDeviceToHost));

  fft_ref(ref, n);
  double sumsq = 0, maxerr = 0;
  for (int i = 0; i < n; i++) sumsq += ref[2 * i] * ref[2 * i] + ref[2 * i + 1] * ref[2 * i + 1];
  double rms = sqrt(sumsq / n);
  double tol = 3.2e-6 * logn * rms;
  long long bad = 0;
  for (int i = 0; i < n; i++) {
    double er = hypot((double)got[i].x - ref[2 * i], (double)got[i].y - ref[2 * i + 1]);
    if (er > maxerr) maxerr = er;
    if (!(er <= tol)) {
      if (bad < 5) printf("X[%d] = (%g, %g), want (%g, %g)\n", i, got[i].x, got[i].y, ref[2 * i], ref[2 * i + 1]);
      bad++;
    }
  }
  printf("fft: n=%d block=%d launches=%d max err %.3g (%.3g * log2N * rms) tol %.3g\n", n, block,
         1 + logn, maxerr, maxerr / (logn * rms), tol);
  CHECK(cudaFree(din));
  CHECK(cudaFree(da));
  CHECK(cudaFree(dtw));
  free(h);
  free(got);
  free(tw);
  free(ref);
  return suite_finish(bad);
}
