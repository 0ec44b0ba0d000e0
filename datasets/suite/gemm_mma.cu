// gemm_mma.cu -- half-precision matrix multiply as hand-tuned tensor-core
// kernels write it: mma.sync.m16n8k16 on fragments loaded by ldmatrix from
// shared memory that cp.async fills, two stages deep (the next k-tile is in
// flight while the current one is multiplied).  C = A B, A and B half
// (row-major), C float.
//
// usage: gemm_mma N
//   N      matrix order, a multiple of 32 in 32 .. 4096
// A block of 128 threads (4 warps, 2 x 2) computes a 32x32 tile of C; each
// warp a 16x16 part of it, two m16n8k16 products per 16-wide step of k.
// Per 32-wide k-tile every thread issues one 16-byte cp.async of A's tile
// and one of B's into the stage not being read, commits the group and waits
// for the previous one (cp.async.wait_group 1); A fragments come from
// ldmatrix.x4, B fragments from ldmatrix.x4.trans of the row-major tile.
// Machine code for sm_75 copies synchronously and multiplies with two
// m16n8k8 per m16n8k16, for sm_70 without tensor cores (the emulator and
// sm_80 on run the code above).
// Launches per run: 1 (mma_gemm, grid (N/32)^2).
// Check: as gemm_wmma (inputs multiples of 1/64 in [-1, 1], exact
// products): |C - C_ref| <= N * N * 2^-24 + 1e-6 against a double CPU product.
#include "suite_util.h"
#include <cuda_fp16.h>
#include <math.h>

#define USAGE "gemm_mma N"
#define BM 32
#define BK 32

/* The machine code for GPUs before sm_80 (the suite builds every
   generation from sm_70; the emulator runs the compute_90 PTX) copies
   synchronously, and before sm_75 multiplies without tensor cores. */
#if __CUDA_ARCH__ >= 800
#define ASYNC_COPY 1
#endif
#if __CUDA_ARCH__ >= 750
#define TENSOR_MMA 1
#endif

__device__ __forceinline__ void cp_async16(void *smem, const void *gmem) {
#ifdef ASYNC_COPY
  unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(gmem));
#else
  *(uint4 *)smem = *(const uint4 *)gmem;
#endif
}

__device__ __forceinline__ void cp_async_commit(void) {
#ifdef ASYNC_COPY
  asm volatile("cp.async.commit_group;");
#endif
}

__device__ __forceinline__ void cp_async_wait1(void) {
#ifdef ASYNC_COPY
  asm volatile("cp.async.wait_group 1;");
#endif
}

__global__ void mma_gemm(const half *A, const half *B, float *C, int n) {
  __shared__ __align__(16) half sa[2][BM * BK], sb[2][BK * BM];
  int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  int wm = warp / 2, wn = warp % 2;               /* warp's 16x16 part */
  int row0 = blockIdx.y * BM, col0 = blockIdx.x * BM;
  /* each thread copies 8 halves (16 bytes) of each tile: row tid/4, column 8*(tid%4) */
  int cr = tid / 4, cc = 8 * (tid % 4);
  float acc[2][4] = {{0, 0, 0, 0}, {0, 0, 0, 0}};
  int ktiles = n / BK;
  cp_async16(&sa[0][cr * BK + cc], A + (size_t)(row0 + cr) * n + cc);
  cp_async16(&sb[0][cr * BM + cc], B + (size_t)cr * n + col0 + cc);
  cp_async_commit();
  for (int kt = 0; kt < ktiles; kt++) {
    int cur = kt & 1;
    if (kt + 1 < ktiles) { /* the next tile into the other stage */
      int k1 = (kt + 1) * BK;
      cp_async16(&sa[cur ^ 1][cr * BK + cc], A + (size_t)(row0 + cr) * n + k1 + cc);
      cp_async16(&sb[cur ^ 1][cr * BM + cc], B + (size_t)(k1 + cr) * n + col0 + cc);
    }
    cp_async_commit();
    cp_async_wait1();
    __syncthreads();
#ifdef TENSOR_MMA
    for (int kk = 0; kk < BK; kk += 16) {
      unsigned a[4], b[4];
      unsigned pa = (unsigned)__cvta_generic_to_shared(
          &sa[cur][(wm * 16 + lane % 16) * BK + kk + 8 * (lane / 16)]);
      asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                   : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3]) : "r"(pa));
      /* matrix j = lane/8: k rows kk + 8*(j%2) .., columns wn*16 + 8*(j/2) .. */
      int j = lane / 8, r = lane % 8;
      unsigned pb = (unsigned)__cvta_generic_to_shared(
          &sb[cur][(kk + 8 * (j % 2) + r) * BM + wn * 16 + 8 * (j / 2)]);
      asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                   : "=r"(b[0]), "=r"(b[1]), "=r"(b[2]), "=r"(b[3]) : "r"(pb));
      for (int h = 0; h < 2; h++) {
#if __CUDA_ARCH__ >= 800
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, "
                     "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                     : "+f"(acc[h][0]), "+f"(acc[h][1]), "+f"(acc[h][2]), "+f"(acc[h][3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[2 * h]),
                       "r"(b[2 * h + 1]));
#else /* sm_75: m16n8k16 is two m16n8k8, k 0-7 then 8-15 */
        for (int q = 0; q < 2; q++)
          asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, "
                       "{%4,%5}, {%6}, {%0,%1,%2,%3};"
                       : "+f"(acc[h][0]), "+f"(acc[h][1]), "+f"(acc[h][2]), "+f"(acc[h][3])
                       : "r"(a[2 * q]), "r"(a[2 * q + 1]), "r"(b[2 * h + q]));
#endif
      }
    }
#else /* no tensor cores: the same outputs from the shared tiles */
    for (int h = 0; h < 2; h++)
      for (int i = 0; i < 4; i++) {
        int r = wm * 16 + lane / 4 + 8 * (i / 2), c = wn * 16 + 8 * h + 2 * (lane % 4) + (i % 2);
        for (int k = 0; k < BK; k++)
          acc[h][i] += __half2float(sa[cur][r * BK + k]) * __half2float(sb[cur][k * BM + c]);
      }
#endif
    __syncthreads(); /* the stage is read before the next copy overwrites it */
  }
  int g = lane / 4, t = lane % 4;
  for (int h = 0; h < 2; h++)
    for (int i = 0; i < 4; i++) {
      int r = row0 + wm * 16 + g + 8 * (i / 2), c = col0 + wn * 16 + 8 * h + 2 * t + (i % 2);
      C[(size_t)r * n + c] = acc[h][i];
    }
}

int main(int argc, char **argv) {
  int n = (int)suite_arg(argc, argv, 1, -1, 32, 4096, USAGE);
  if (n % 32) suite_usage(USAGE);
  size_t nn = (size_t)n * n;
  half *ha = (half *)suite_malloc(nn * sizeof(half)), *hb = (half *)suite_malloc(nn * sizeof(half));
  float *fa = (float *)suite_malloc(nn * sizeof(float)), *fb = (float *)suite_malloc(nn * sizeof(float));
  float *hc = (float *)suite_malloc(nn * sizeof(float));
  lcg_t g = {20250312u};
  for (size_t i = 0; i < nn; i++) {
    fa[i] = ((int)lcg_below(&g, 129) - 64) / 64.0f;
    fb[i] = ((int)lcg_below(&g, 129) - 64) / 64.0f;
    ha[i] = __float2half(fa[i]);
    hb[i] = __float2half(fb[i]);
  }
  half *da, *db;
  float *dc;
  CHECK(cudaMalloc(&da, nn * sizeof(half)));
  CHECK(cudaMalloc(&db, nn * sizeof(half)));
  CHECK(cudaMalloc(&dc, nn * sizeof(float)));
  CHECK(cudaMemcpy(da, ha, nn * sizeof(half), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(db, hb, nn * sizeof(half), cudaMemcpyHostToDevice));
  dim3 grid(n / BM, n / BM);
  mma_gemm<<<grid, 128>>>(da, db, dc, n);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(hc, dc, nn * sizeof(float), cudaMemcpyDeviceToHost));
  long long bad = 0;
  double tol = (double)n * n * ldexp(1.0, -24) + 1e-6;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double s = 0;
      for (int k = 0; k < n; k++) s += (double)fa[(size_t)i * n + k] * fb[(size_t)k * n + j];
      if (!(fabs(hc[(size_t)i * n + j] - s) <= tol)) {
        if (bad < 5) fprintf(stderr, "C[%d][%d] = %.9g, want %.9g\n", i, j, hc[(size_t)i * n + j], s);
        bad++;
      }
    }
  CHECK(cudaFree(da));
  CHECK(cudaFree(db));
  CHECK(cudaFree(dc));
  free(ha); free(hb); free(fa); free(fb); free(hc);
  return suite_finish(bad);
}
