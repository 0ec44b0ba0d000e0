/* gemm_naive -- dense single-precision matrix multiply, one thread per output.
 *
 * What: C = alpha * A * B + beta * C for square N x N row-major matrices.
 * Each thread computes one element of C with a dot product read straight from
 * global memory (no reuse through shared memory).  It is the baseline the
 * tiled variant (gemm_tiled.cu) is compared against: same arithmetic, very
 * different memory behaviour.
 *
 * Usage:  gemm_naive N [BLOCK]
 *   N      matrix order, 1..4096
 *   BLOCK  thread-block side: BLOCK x BLOCK threads, 1..32 (default 16)
 * Launches per run: 1 (gemm_naive_kernel, grid ceil(N/BLOCK)^2).
 * Work: about 6 thread-instructions per multiply-add: ~5.7 N^3 (measured
 * with kcast emulate).
 *
 * Check: against a double-precision CPU product.  Inputs are in [0,1) and
 * alpha, beta > 0, so every term is non-negative and the relative error of a
 * float sum of N+1 such terms is at most about (N+2) u, u = 2^-24 (Higham,
 * recursive summation; fused multiply-adds only remove roundings).  The
 * tolerance (N + 4) * FLT_EPSILON = 2 (N + 4) u is that bound with a factor
 * of two to spare.  Output: PASS (exit 0) or the mismatches and FAIL (exit 1);
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
    "usage: gemm_naive N [BLOCK]\n"
    "  N      matrix order, 1..4096\n"
    "  BLOCK  thread-block side (BLOCK x BLOCK threads), 1..32, default 16\n";

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
        fprintf(stderr, "gemm_naive: bad argument '%s' (want %d..%d)\n",
                argv[idx], lo, hi);
        usage();
    }
    return (int)v;
}

/* Deterministic inputs: a 32-bit LCG (Numerical Recipes constants), fixed
 * seed; the top 24 bits give a float in [0,1). */
static unsigned int lcg_state = 20240601u;

static float lcg_unit(void)
{
    lcg_state = lcg_state * 1664525u + 1013904223u;
    return (float)(lcg_state >> 8) * (1.0f / 16777216.0f);
}

__global__ void gemm_naive_kernel(int n, float alpha, float beta,
                                  const float *a, const float *b, float *c)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= n || col >= n)
        return;
    float acc = 0.0f;
    for (int k = 0; k < n; ++k)
        acc += a[row * n + k] * b[k * n + col];
    c[row * n + col] = alpha * acc + beta * c[row * n + col];
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3)
        usage();
    int n = arg_int(argc, argv, 1, 0, 1, 4096);
    int bs = arg_int(argc, argv, 2, 16, 1, 32);
    const float alpha = 1.5f, beta = 0.5f;
    size_t count = (size_t)n * n;
    size_t bytes = count * sizeof(float);

    float *a = (float *)malloc(bytes), *b = (float *)malloc(bytes);
    float *c = (float *)malloc(bytes), *out = (float *)malloc(bytes);
    if (!a || !b || !c || !out) {
        fprintf(stderr, "gemm_naive: out of host memory\n");
        return 1;
    }
    for (size_t i = 0; i < count; ++i)
        a[i] = lcg_unit();
    for (size_t i = 0; i < count; ++i)
        b[i] = lcg_unit();
    for (size_t i = 0; i < count; ++i)
        c[i] = lcg_unit();

    float *da, *db, *dc;
    CHECK(cudaMalloc(&da, bytes));
    CHECK(cudaMalloc(&db, bytes));
    CHECK(cudaMalloc(&dc, bytes));
    CHECK(cudaMemcpy(da, a, bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(db, b, bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dc, c, bytes, cudaMemcpyHostToDevice));

    dim3 block(bs, bs);
    dim3 grid((n + bs - 1) / bs, (n + bs - 1) / bs);
    gemm_naive_kernel<<<grid, block>>>(n, alpha, beta, da, db, dc);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(out, dc, bytes, cudaMemcpyDeviceToHost));
    CHECK(cudaFree(da));
    CHECK(cudaFree(db));
    CHECK(cudaFree(dc));

    double tol = (n + 4) * (double)FLT_EPSILON, worst = 0.0;
    long bad = 0;
    for (int i = 0; i < n; ++i) {
        for (int j = 0; j < n; ++j) {
            double acc = 0.0;
            for (int k = 0; k < n; ++k)
                acc += (double)a[(size_t)i * n + k] * b[(size_t)k * n + j];
            double ref = alpha * acc + beta * (double)c[(size_t)i * n + j];
            double got = out[(size_t)i * n + j];
            double rel = fabs(got - ref) / fabs(ref);
            if (!(rel <= tol)) {   /* also catches NaN */
                if (bad < 10)
                    printf("mismatch C[%d][%d]: got %.9g, expected %.9g "
                           "(rel err %.3g > %.3g)\n", i, j, got, ref, rel, tol);
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
    printf("gemm_naive N=%d BLOCK=%d: max rel err %.3g (tol %.3g)\n", n, bs,
           worst, tol);
    if (bad) {
        printf("%ld of %zu elements mismatched\nFAIL\n", bad, count);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
