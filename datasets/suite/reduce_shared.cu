// reduce_shared.cu -- multi-pass shared-memory tree reduction (sum).
//
// usage: reduce_shared N [BLOCK]
//   N      elements, 1 .. 2^28
//   BLOCK  threads per block, power of two in 32 .. 1024 (default 256)
// Each block sums 2*BLOCK consecutive inputs (two loads per thread, then a
// sequential-addressing tree in shared memory) and writes one partial sum; the
// pass repeats on the partials until one value is left.
// Launches per run: passes = ceil(log_{2*BLOCK}(N)) (at least 1), e.g. N = 2^20,
// BLOCK 256 -> 3 (grids 2048, 4, 1).
//
// Compiled with -DSUITE_FP64 (reduce_shared_fp64.cu) the element type is double.
// Check: inputs are in [0, 1), so there is no cancellation.  Every input reaches
// the result through at most ceil(log2 N) + 2*passes additions, so the relative
// error of the GPU sum is below (log2 N + 8) * eps; we allow twice that.  The CPU
// reference is a pairwise sum in long double (its own error is negligible).
#include "suite_util.h"
#include <math.h>

#ifdef SUITE_FP64
typedef double real;
#define REAL_EPS 1.1102230246251565e-16
#define PROG "reduce_shared_fp64"
#else
typedef float real;
#define REAL_EPS 5.9604644775390625e-08
#define PROG "reduce_shared"
#endif
#define USAGE PROG " N [BLOCK]"

__global__ void reduce_pass(const real *in, real *out, int n) {
  extern __shared__ __align__(8) unsigned char smem_raw[];
  real *s = (real *)smem_raw;
  unsigned int t = threadIdx.x;
  size_t i = (size_t)blockIdx.x * (2 * blockDim.x) + t;
  real v = 0;
  if (i < (size_t)n) v = in[i];
  if (i + blockDim.x < (size_t)n) v += in[i + blockDim.x];
  s[t] = v;
  __syncthreads();
  for (unsigned int half = blockDim.x / 2; half > 0; half >>= 1) {
    if (t < half) s[t] += s[t + half];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = s[0];
}

static long double pairwise(const real *x, long long n) {
  if (n <= 8) {
    long double s = 0;
    for (long long i = 0; i < n; i++) s += x[i];
    return s;
  }
  long long h = n / 2;
  return pairwise(x, h) + pairwise(x + h, n - h);
}

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3) suite_usage(USAGE);
  int n = (int)suite_arg(argc, argv, 1, 0, 1, 1 << 28, USAGE);
  int block = (int)suite_arg(argc, argv, 2, 256, 32, 1024, USAGE);
  if (!suite_is_pow2(block)) suite_usage(USAGE);

  real *h = (real *)suite_malloc((size_t)n * sizeof(real));
  lcg_t g = {2024u};
  for (int i = 0; i < n; i++) h[i] = (real)lcg_unit(&g);

  int per = 2 * block;
  int parts = (n + per - 1) / per;
  real *din, *dtmp[2];
  CHECK(cudaMalloc(&din, (size_t)n * sizeof(real)));
  CHECK(cudaMalloc(&dtmp[0], (size_t)parts * sizeof(real)));
  CHECK(cudaMalloc(&dtmp[1], (size_t)parts * sizeof(real)));
  CHECK(cudaMemcpy(din, h, (size_t)n * sizeof(real), cudaMemcpyHostToDevice));

  const real *src = din;
  int len = n, which = 0, passes = 0;
  do {
    int grid = (len + per - 1) / per;
    reduce_pass<<<grid, block, block * sizeof(real)>>>(src, dtmp[which], len);
    CHECK_LAUNCH();
    src = dtmp[which];
    which ^= 1;
    len = grid;
    passes++;
  } while (len > 1);
  CHECK(cudaDeviceSynchronize());
  real got;
  CHECK(cudaMemcpy(&got, src, sizeof(real), cudaMemcpyDeviceToHost));

  long double want = pairwise(h, n);
  double tol = 2.0 * (log2((double)n) + 8.0) * REAL_EPS * (double)want;
  double err = fabs((double)((long double)got - want));
  printf("%s: n=%d block=%d passes=%d sum=%.17g ref=%.17Lg err=%.3g tol=%.3g\n",
         PROG, n, block, passes, (double)got, want, err, tol);
  CHECK(cudaFree(din));
  CHECK(cudaFree(dtmp[0]));
  CHECK(cudaFree(dtmp[1]));
  free(h);
  return suite_finish(err <= tol ? 0 : 1);
}
