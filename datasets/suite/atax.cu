/* atax -- y = A^T (A x), two dependent matrix-vector products.
 *
 * What: for a row-major N x N matrix, kernel 1 forms t = A x with one thread
 * per row (each thread walks its own row, so a warp's loads are N floats
 * apart: uncoalesced), and kernel 2 forms y = A^T t with one thread per column
 * (a warp reads consecutive floats of each row: coalesced).  The pair reads
 * the same matrix with the two access patterns, which is what a coalescing
 * feature has to tell apart.
 *
 * Usage:  atax N [BLOCK]
 *   N      matrix order, 1..16384
 *   BLOCK  threads per block (1-D), 1..1024 (default 256)
 * Launches per run: 2 (atax_rows_kernel, then atax_cols_kernel; grid
 * ceil(N/BLOCK) each).
 * Work: about 5 thread-instructions per matrix element: ~5 N^2 per launch
 * (measured with kcast emulate).
 *
 * Check: against double-precision CPU products.  Inputs are in [0,1), so all
 * terms are non-negative: t carries relative error at most about (N+1) u
 * (u = 2^-24) and y, a non-negative sum of products with t, at most about
 * 2 (N+1) u.  The tolerance 2 (N + 4) FLT_EPSILON is twice that.  PASS (exit 0),
 * or the mismatches and FAIL (exit 1); bad arguments print the usage, exit 2.
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
    "usage: atax N [BLOCK]\n"
    "  N      matrix order, 1..16384\n"
    "  BLOCK  threads per block, 1..1024, default 256\n";

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
        fprintf(stderr, "atax: bad argument '%s' (want %d..%d)\n",
                argv[idx], lo, hi);
        usage();
    }
    return (int)v;
}

/* Deterministic inputs: a 32-bit LCG (Numerical Recipes constants), fixed
 * seed; the top 24 bits give a float in [0,1). */
static unsigned int lcg_state = 20240605u;

static float lcg_unit(void)
{
    lcg_state = lcg_state * 1664525u + 1013904223u;
    return (float)(lcg_state >> 8) * (1.0f / 16777216.0f);
}

__global__ void atax_rows_kernel(int n, const float *a, const float *x,
                                 float *t)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float acc = 0.0f;
    for (int j = 0; j < n; ++j)
        acc += a[(size_t)i * n + j] * x[j];
    t[i] = acc;
}

__global__ void atax_cols_kernel(int n, const float *a, const float *t,
                                 float *y)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n)
        return;
    float acc = 0.0f;
    for (int i = 0; i < n; ++i)
        acc += a[(size_t)i * n + j] * t[i];
    y[j] = acc;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3)
        usage();
    int n = arg_int(argc, argv, 1, 0, 1, 16384);
    int bs = arg_int(argc, argv, 2, 256, 1, 1024);
    size_t count = (size_t)n * n;

    float *a = (float *)malloc(count * sizeof(float));
    float *x = (float *)malloc(n * sizeof(float));
    float *out = (float *)malloc(n * sizeof(float));
    double *t = (double *)malloc(n * sizeof(double));
    if (!a || !x || !out || !t) {
        fprintf(stderr, "atax: out of host memory\n");
        return 1;
    }
    for (size_t i = 0; i < count; ++i)
        a[i] = lcg_unit();
    for (int i = 0; i < n; ++i)
        x[i] = lcg_unit();

    float *da, *dx, *dt, *dy;
    CHECK(cudaMalloc(&da, count * sizeof(float)));
    CHECK(cudaMalloc(&dx, n * sizeof(float)));
    CHECK(cudaMalloc(&dt, n * sizeof(float)));
    CHECK(cudaMalloc(&dy, n * sizeof(float)));
    CHECK(cudaMemcpy(da, a, count * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dx, x, n * sizeof(float), cudaMemcpyHostToDevice));
    int grid = (n + bs - 1) / bs;
    atax_rows_kernel<<<grid, bs>>>(n, da, dx, dt);
    CHECK(cudaGetLastError());
    atax_cols_kernel<<<grid, bs>>>(n, da, dt, dy);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(out, dy, n * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK(cudaFree(da));
    CHECK(cudaFree(dx));
    CHECK(cudaFree(dt));
    CHECK(cudaFree(dy));

    for (int i = 0; i < n; ++i) {
        double acc = 0.0;
        for (int j = 0; j < n; ++j)
            acc += (double)a[(size_t)i * n + j] * x[j];
        t[i] = acc;
    }
    double tol = 2.0 * (n + 4) * (double)FLT_EPSILON, worst = 0.0;
    long bad = 0;
    for (int j = 0; j < n; ++j) {
        double ref = 0.0;
        for (int i = 0; i < n; ++i)
            ref += (double)a[(size_t)i * n + j] * t[i];
        double rel = fabs(out[j] - ref) / fabs(ref);
        if (!(rel <= tol)) {   /* also catches NaN */
            if (bad < 10)
                printf("mismatch y[%d]: got %.9g, expected %.9g (rel err %.3g "
                       "> %.3g)\n", j, out[j], ref, rel, tol);
            ++bad;
        } else if (rel > worst) {
            worst = rel;
        }
    }
    free(a);
    free(x);
    free(out);
    free(t);
    printf("atax N=%d BLOCK=%d: max rel err %.3g (tol %.3g)\n", n, bs, worst,
           tol);
    if (bad) {
        printf("%ld of %d elements mismatched\nFAIL\n", bad, n);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
