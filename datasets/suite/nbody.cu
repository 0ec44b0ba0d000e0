// nbody.cu -- all-pairs gravitational n-body, shared-memory tiles, rsqrt.
//
// usage: nbody N [BLOCK] [ITERS]
//   N      bodies, 2 .. 2^17
//   BLOCK  threads per block = bodies per shared-memory tile, multiple of 32 in
//          32 .. 1024 (default 128)
//   ITERS  time steps (default 4), 1 .. 100
// Per step two launches, grid ceil(N/BLOCK):
//   1. body_force: each thread walks all bodies tile by tile (the block stages
//      BLOCK positions in shared memory), a_i = sum_j m_j d_ij (|d_ij|^2 +
//      eps^2)^-3/2 with rsqrtf, then v_i += a_i dt;
//   2. integrate: p_i += v_i dt.
// Launches per run: 2 * ITERS.  Work per force launch ~ 20 N^2 thread-instr.
// Compiled with -DSUITE_FP64 (nbody_fp64.cu) everything is double (rsqrt()).
// Check: against a double-precision CPU simulation (long double for fp64).
// Bodies start at rest, uniform in [-1,1]^3, masses ~1/N, softening eps^2 =
// 0.01, dt = 1e-3: over <= 100 steps nothing comes close enough to amplify
// rounding.  Float error sources are rsqrtf (2 ulp) and N-term sums
// (~sqrt(N) eps typical), so we compare normwise: max|v - v_ref| <= TOL *
// max|v_ref| and max|p - p_ref| <= TOL * max|p_ref|, TOL = 1e-4 for float
// (measured float-vs-double CPU error ~1e-6 at N = 4096) and 1e-11 for double.
#include "suite_util.h"
#include <math.h>

#ifdef SUITE_FP64
typedef double real;
typedef long double refreal;
#define RSQRT(x) rsqrt(x)
#define TOL 1e-11
#define PROG "nbody_fp64"
#else
typedef float real;
typedef double refreal;
#define RSQRT(x) rsqrtf(x)
#define TOL 1e-4
#define PROG "nbody"
#endif
#define USAGE PROG " N [BLOCK] [ITERS]"
// Position + mass (or velocity + pad), 16-byte aligned so float loads vectorise.
struct __align__(16) real4 {
  real x, y, z, w;
};
#define EPS2 ((real)0.01)
#define DT ((real)0.001)

__global__ void body_force(const real4 *pos, real4 *vel, int n) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  real4 *tile = (real4 *)smem_raw;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  real4 me = i < n ? pos[i] : pos[0];
  real ax = 0, ay = 0, az = 0;
  for (int base = 0; base < n; base += blockDim.x) {
    int j = base + threadIdx.x;
    real4 z = {0, 0, 0, 0};
    tile[threadIdx.x] = j < n ? pos[j] : z;  // mass 0 beyond n: no force
    __syncthreads();
    for (int t = 0; t < (int)blockDim.x; t++) {
      real4 o = tile[t];
      real dx = o.x - me.x, dy = o.y - me.y, dz = o.z - me.z;
      real r2 = dx * dx + dy * dy + dz * dz + EPS2;
      real inv = RSQRT(r2);
      real s = o.w * inv * inv * inv;
      ax += dx * s;
      ay += dy * s;
      az += dz * s;
    }
    __syncthreads();
  }
  if (i < n) {
    real4 v = vel[i];
    v.x += ax * DT;
    v.y += ay * DT;
    v.z += az * DT;
    vel[i] = v;
  }
}

__global__ void integrate(real4 *pos, const real4 *vel, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  real4 p = pos[i], v = vel[i];
  p.x += v.x * DT;
  p.y += v.y * DT;
  p.z += v.z * DT;
  pos[i] = p;
}

int main(int argc, char **argv) {
  if (argc < 2 || argc > 4) suite_usage(USAGE);
  int n = (int)suite_arg(argc, argv, 1, 0, 2, 1 << 17, USAGE);
  int block = (int)suite_arg(argc, argv, 2, 128, 32, 1024, USAGE);
  int iters = (int)suite_arg(argc, argv, 3, 4, 1, 100, USAGE);
  if (block % 32) suite_usage(USAGE);

  size_t bytes = (size_t)n * sizeof(real4);
  real4 *hp = (real4 *)suite_malloc(bytes), *hv = (real4 *)suite_malloc(bytes);
  refreal *rp = (refreal *)suite_malloc((size_t)n * 4 * sizeof(refreal));
  refreal *rv = (refreal *)suite_malloc((size_t)n * 3 * sizeof(refreal));
  lcg_t g = {271828u};
  for (int i = 0; i < n; i++) {
    hp[i].x = (real)(2.0f * lcg_unit(&g) - 1.0f);
    hp[i].y = (real)(2.0f * lcg_unit(&g) - 1.0f);
    hp[i].z = (real)(2.0f * lcg_unit(&g) - 1.0f);
    hp[i].w = (real)((0.5f + lcg_unit(&g)) / (float)n);
    hv[i].x = hv[i].y = hv[i].z = hv[i].w = 0;
    rp[4 * i] = hp[i].x;
    rp[4 * i + 1] = hp[i].y;
    rp[4 * i + 2] = hp[i].z;
    rp[4 * i + 3] = hp[i].w;
    rv[3 * i] = rv[3 * i + 1] = rv[3 * i + 2] = 0;
  }
  real4 *dp, *dv;
  CHECK(cudaMalloc(&dp, bytes));
  CHECK(cudaMalloc(&dv, bytes));
  CHECK(cudaMemcpy(dp, hp, bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dv, hv, bytes, cudaMemcpyHostToDevice));
  int grid = (n + block - 1) / block;
  for (int it = 0; it < iters; it++) {
    body_force<<<grid, block, block * sizeof(real4)>>>(dp, dv, n);
    CHECK_LAUNCH();
    integrate<<<grid, block>>>(dp, dv, n);
    CHECK_LAUNCH();
  }
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemcpy(hp, dp, bytes, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(hv, dv, bytes, cudaMemcpyDeviceToHost));

  refreal eps2 = (refreal)EPS2, dt = (refreal)DT;
  for (int it = 0; it < iters; it++) {
    for (int i = 0; i < n; i++) {
      refreal a[3] = {0, 0, 0};
      for (int j = 0; j < n; j++) {
        refreal d[3], r2 = eps2;
        for (int c = 0; c < 3; c++) {
          d[c] = rp[4 * j + c] - rp[4 * i + c];
          r2 += d[c] * d[c];
        }
        refreal s = rp[4 * j + 3] / (r2 * sqrtl(r2));
        for (int c = 0; c < 3; c++) a[c] += d[c] * s;
      }
      for (int c = 0; c < 3; c++) rv[3 * i + c] += a[c] * dt;
    }
    for (int i = 0; i < n; i++)
      for (int c = 0; c < 3; c++) rp[4 * i + c] += rv[3 * i + c] * dt;
  }
  double vmax = 0, pmax = 0, verr = 0, perr = 0;
  for (int i = 0; i < n; i++) {
    real gp[3] = {hp[i].x, hp[i].y, hp[i].z}, gv[3] = {hv[i].x, hv[i].y, hv[i].z};
    for (int c = 0; c < 3; c++) {
      vmax = fmax(vmax, fabs((double)rv[3 * i + c]));
      pmax = fmax(pmax, fabs((double)rp[4 * i + c]));
      verr = fmax(verr, fabs((double)((refreal)gv[c] - rv[3 * i + c])));
      perr = fmax(perr, fabs((double)((refreal)gp[c] - rp[4 * i + c])));
    }
  }
  long long bad = 0;
  if (!(verr <= TOL * vmax)) bad++;
  if (!(perr <= TOL * pmax)) bad++;
  printf("%s: n=%d block=%d iters=%d vel err %.3g (max %.3g) pos err %.3g (max %.3g) tol %.1g\n",
         PROG, n, block, iters, verr, vmax, perr, pmax, TOL);
  CHECK(cudaFree(dp));
  CHECK(cudaFree(dv));
  free(hp);
  free(hv);
  free(rp);
  free(rv);
  return suite_finish(bad);
}
