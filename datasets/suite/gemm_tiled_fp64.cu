/* gemm_tiled_fp64 -- double-precision matrix multiply through shared-memory tiles.
 *
 * What: the fp64 twin of gemm_tiled.cu (a separate program so the suite has
 * double-precision launches: DFMA throughput differs from FFMA by up to 64x
 * between GPU generations, which a time model must see).  C = alpha * A * B +
 * beta * C for square N x N row-major matrices; each BLOCK x BLOCK thread block
 * stages one tile of A and one of B in shared memory per step along k.  Tiles
 * that stick out past N are padded with zeros, so any N works.
 *
 * Usage:  gemm_tiled_fp64 N [BLOCK]
 *   N      matrix order, 1..4096
 *   BLOCK  tile side = thread-block side, one of 4, 8, 16, 32 (default 16)
 * Launches per run: 1 (gemm_tiled_fp64_kernel<BLOCK>, grid ceil(N/BLOCK)^2).
 * Work: as gemm_tiled: ~12, 6.9, 5.3 and 4.6 N^3 thread-instructions for
 * BLOCK = 4, 8, 16, 32 (measured with kcast emulate).
 *
 * Check: against a long-double CPU product (64-bit mantissa on x86, so its
 * own error is negligible next to the GPU's).  Inputs are in [0,1) and
 * alpha, beta > 0: every term is non-negative, so a double sum of at most N+1
 * terms has relative error at most about (N+2) u, u = 2^-53, in any order.
 * The tolerance (N + 4) * DBL_EPSILON = 2 (N + 4) u keeps a factor of two (and
 * still holds if long double is only double, as both errors then add up to
 * at most 2 (N+2) u).  PASS (exit 0), or the mismatches and FAIL (exit 1);
 * bad arguments print the usage and exit 2.
 */
#include <cerrno>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call)                                                         \
    do {                                                                    \
        cudaError_t err_ = (call);                                          \
        if (err_ != cudaSuccess) {                                          \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__,   \
                    #call, cudaGetErrorString(err_));                       \
            exit(1);                                                        \
        }                                                                   \
    } while (0)

static const char *const usage_text =
    "usage: gemm_tiled_fp64 N [BLOCK]\n"
    "  N      matrix order, 1..4096\n"
    "  BLOCK  tile side (BLOCK x BLOCK threads): 4, 8, 16 or 32, default 16\n";

static void usage(void)
{
    fputs(usage_text, stderr);
    exit(2);
}

/* Argument idx as an int in [lo, hi], or def when absent; else usage. */
static int arg_int(int argc, char **argv, int idx, int def, int lo, int hi)
{
    if (idx >= argc)
        return def;
    char *end;
    errno = 0;
    long v = strtol(argv[idx], &end, 10);
    if (errno != 0 || end == argv[idx] || *end != '\0' || v < lo || v > hi) {
        fprintf(stderr, "gemm_tiled_fp64: bad argument '%s' (want %d..%d)\n",
                argv[idx], lo, hi);
        usage();
    }
    return (int)v;
}

/* Deterministic inputs: a 32-bit LCG (Numerical Recipes constants), fixed
 * seed; two draws give 48 random bits, a double in [0,1) whose products are
 * not exact in double (so the multiply-adds really round). */
static unsigned int lcg_state = 20240603u;

static unsigned int lcg_next24(void)
{
    lcg_state = lcg_state * 1664525u + 1013904223u;
    return lcg_state >> 8;
}

static double lcg_unit(void)
{
    double hi = (double)lcg_next24();
    double lo = (double)lcg_next24();
    return (hi * 16777216.0 + lo) * (1.0 / 281474976710656.0);
}

template <int TILE>
__global__ void gemm_tiled_fp64_kernel(int n, double alpha, double beta,
                                  const double *a, const double *b, double *c)
{
    __shared__ double as[TILE][TILE];
    __shared__ double bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    double acc = 0.0;
    for (int k0 = 0; k0 < n; k0 += TILE) {
        as[ty][tx] = (row < n && k0 + tx < n) ? a[row * n + k0 + tx] : 0.0;
        bs[ty][tx] = (k0 + ty < n && col < n) ? b[(k0 + ty) * n + col] : 0.0;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k)
            acc += as[ty][k] * bs[k][tx];
        __syncthreads();
    }
    if (row < n && col < n)
        c[row * n + col] = alpha * acc + beta * c[row * n + col];
}

/* Launch the instance for tile side bs (one of 4, 8, 16, 32). */
static void launch(int bs, int n, double alpha, double beta, const double *a,
                   const double *b, double *c)
{
    dim3 block(bs, bs);
    dim3 grid((n + bs - 1) / bs, (n + bs - 1) / bs);
    switch (bs) {
    case 4:
        gemm_tiled_fp64_kernel<4><<<grid, block>>>(n, alpha, beta, a, b, c);
        break;
    case 8:
        gemm_tiled_fp64_kernel<8><<<grid, block>>>(n, alpha, beta, a, b, c);
        break;
    case 16:
        gemm_tiled_fp64_kernel<16><<<grid, block>>>(n, alpha, beta, a, b, c);
        break;
    default:
        gemm_tiled_fp64_kernel<32><<<grid, block>>>(n, alpha, beta, a, b, c);
        break;
    }
    CHECK(cudaGetLastError());
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3)
        usage();
    int n = arg_int(argc, argv, 1, 0, 1, 4096);
    int bs = arg_int(argc, argv, 2, 16, 4, 32);
    if (bs != 4 && bs != 8 && bs != 16 && bs != 32) {
        fprintf(stderr, "gemm_tiled_fp64: BLOCK must be 4, 8, 16 or 32\n");
        usage();
    }
    const double alpha = 1.5, beta = 0.5;
    size_t count = (size_t)n * n;
    size_t bytes = count * sizeof(double);

    double *a = (double *)malloc(bytes), *b = (double *)malloc(bytes);
    double *c = (double *)malloc(bytes), *out = (double *)malloc(bytes);
    if (!a || !b || !c || !out) {
        fprintf(stderr, "gemm_tiled_fp64: out of host memory\n");
        return 1;
    }
    for (size_t i = 0; i < count; ++i)
        a[i] = lcg_unit();
    for (size_t i = 0; i < count; ++i)
        b[i] = lcg_unit();
    for (size_t i = 0; i < count; ++i)
        c[i] = lcg_unit();

    double *da, *db, *dc;
    CHECK(cudaMalloc(&da, bytes));
    CHECK(cudaMalloc(&db, bytes));
    CHECK(cudaMalloc(&dc, bytes));
    CHECK(cudaMemcpy(da, a, bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(db, b, bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dc, c, bytes, cudaMemcpyHostToDevice));
    launch(bs, n, alpha, beta, da, db, dc);
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(out, dc, bytes, cudaMemcpyDeviceToHost));
    CHECK(cudaFree(da));
    CHECK(cudaFree(db));
    CHECK(cudaFree(dc));

    double tol = (n + 4) * DBL_EPSILON, worst = 0.0;
    long bad = 0;
    for (int i = 0; i < n; ++i) {
        for (int j = 0; j < n; ++j) {
            long double acc = 0.0L;
            for (int k = 0; k < n; ++k)
                acc += (long double)a[(size_t)i * n + k] * b[(size_t)k * n + j];
            long double ref = alpha * acc + beta * (long double)c[(size_t)i * n + j];
            long double got = out[(size_t)i * n + j];
            double rel = (double)(fabsl(got - ref) / fabsl(ref));
            if (!(rel <= tol)) {   /* also catches NaN */
                if (bad < 10)
                    printf("mismatch C[%d][%d]: got %.17g, expected %.17Lg "
                           "(rel err %.3g > %.3g)\n", i, j, (double)got, ref,
                           rel, tol);
                ++bad;
            } else if (rel > worst) {
                worst = rel;
            }
        }
    }
    free(a);
    free(b);
    free(c);
    free(out);
    printf("gemm_tiled_fp64 N=%d BLOCK=%d: max rel err %.3g (tol %.3g)\n", n, bs,
           worst, tol);
    if (bad) {
        printf("%ld of %zu elements mismatched\nFAIL\n", bad, count);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
