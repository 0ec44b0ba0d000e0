/* gemv -- single-precision matrix-vector product, one thread block per row.
 *
 * What: y = alpha * A * x + beta * y for a row-major N x N matrix.  Block r
 * owns row r: its BLOCK threads stride across the row (consecutive threads
 * read consecutive columns, so the loads coalesce), each keeps a partial sum,
 * and the block folds the partials with a tree reduction in shared memory
 * (log2 BLOCK barrier-separated halving steps, the upper lanes idling).  It
 * gives the suite a memory-bound kernel with barriers and a shrinking active
 * mask, unlike the thread-per-row loops in atax.cu and mvt.cu.
 *
 * Usage:  gemv N [BLOCK]
 *   N      matrix order, 1..16384
 *   BLOCK  threads per block, a power of two 32..1024 (default 256)
 * Launches per run: 1 (gemv_kernel, grid N, block BLOCK).
 * Work: about 7 thread-instructions per matrix element plus the reduction,
 * ~80 per thread: ~7 N^2 + 80 N BLOCK (measured with kcast emulate).
 *
 * Check: against a double-precision CPU product.  Inputs are in [0,1) and
 * alpha, beta > 0, so all terms are non-negative and the float result, in
 * whatever order the partial sums are formed, has relative error at most
 * about (N+2) u, u = 2^-24; the tolerance (N + 4) * FLT_EPSILON is twice that.
 * PASS (exit 0), or the mismatches and FAIL (exit 1); bad arguments print the
 * usage and exit 2.
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
    "usage: gemv N [BLOCK]\n"
    "  N      matrix order, 1..16384\n"
    "  BLOCK  threads per block, a power of two 32..1024, default 256\n";

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
        fprintf(stderr, "gemv: bad argument '%s' (want %d..%d)\n",
                argv[idx], lo, hi);
        usage();
    }
    return (int)v;
}

/* Deterministic inputs: a 32-bit LCG (Numerical Recipes constants), fixed
 * seed; the top 24 bits give a float in [0,1). */
static unsigned int lcg_state = 20240604u;

static float lcg_unit(void)
{
    lcg_state = lcg_state * 1664525u + 1013904223u;
    return (float)(lcg_state >> 8) * (1.0f / 16777216.0f);
}

/* Shared scratch sized for the largest block; blockDim.x is a power of two. */
#define GEMV_MAX_BLOCK 1024

__global__ void gemv_kernel(int n, float alpha, float beta, const float *a,
                            const float *x, float *y)
{
    __shared__ float part[GEMV_MAX_BLOCK];
    int row = blockIdx.x;
    int t = threadIdx.x;
    const float *arow = a + (size_t)row * n;
    float acc = 0.0f;
    for (int j = t; j < n; j += blockDim.x)
        acc += arow[j] * x[j];
    part[t] = acc;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
        if (t < half)
            part[t] += part[t + half];
        __syncthreads();
    }
    if (t == 0)
        y[row] = alpha * part[0] + beta * y[row];
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3)
        usage();
    int n = arg_int(argc, argv, 1, 0, 1, 16384);
    int bs = arg_int(argc, argv, 2, 256, 32, GEMV_MAX_BLOCK);
    if ((bs & (bs - 1)) != 0) {
        fprintf(stderr, "gemv: BLOCK must be a power of two\n");
        usage();
    }
    const float alpha = 1.5f, beta = 0.5f;
    size_t count = (size_t)n * n;

    float *a = (float *)malloc(count * sizeof(float));
    float *x = (float *)malloc(n * sizeof(float));
    float *y = (float *)malloc(n * sizeof(float));
    float *out = (float *)malloc(n * sizeof(float));
    if (!a || !x || !y || !out) {
        fprintf(stderr, "gemv: out of host memory\n");
        return 1;
    }
    for (size_t i = 0; i < count; ++i)
        a[i] = lcg_unit();
    for (int i = 0; i < n; ++i)
        x[i] = lcg_unit();
    for (int i = 0; i < n; ++i)
        y[i] = lcg_unit();

    float *da, *dx, *dy;
    CHECK(cudaMalloc(&da, count * sizeof(float)));
    CHECK(cudaMalloc(&dx, n * sizeof(float)));
    CHECK(cudaMalloc(&dy, n * sizeof(float)));
    CHECK(cudaMemcpy(da, a, count * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dx, x, n * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dy, y, n * sizeof(float), cudaMemcpyHostToDevice));
    gemv_kernel<<<n, bs>>>(n, alpha, beta, da, dx, dy);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(out, dy, n * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK(cudaFree(da));
    CHECK(cudaFree(dx));
    CHECK(cudaFree(dy));

    double tol = (n + 4) * (double)FLT_EPSILON, worst = 0.0;
    long bad = 0;
    for (int i = 0; i < n; ++i) {
        double acc = 0.0;
        for (int j = 0; j < n; ++j)
            acc += (double)a[(size_t)i * n + j] * x[j];
        double ref = alpha * acc + beta * (double)y[i];
        double rel = fabs(out[i] - ref) / fabs(ref);
        if (!(rel <= tol)) {   /* also catches NaN */
            if (bad < 10)
                printf("mismatch y[%d]: got %.9g, expected %.9g (rel err %.3g "
                       "> %.3g)\n", i, out[i], ref, rel, tol);
            ++bad;
        } else if (rel > worst) {
            worst = rel;
        }
    }
    free(a);
    free(x);
    free(y);
    free(out);
    printf("gemv N=%d BLOCK=%d: max rel err %.3g (tol %.3g)\n", n, bs, worst,
           tol);
    if (bad) {
        printf("%ld of %d elements mismatched\nFAIL\n", bad, n);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
