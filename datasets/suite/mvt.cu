/* mvt -- x1 += A y1 and x2 += A^T y2, two independent matrix-vector products.
 *
 * What: for a row-major N x N matrix, kernel 1 updates x1 with one thread per
 * row (strided, uncoalesced walk along a row) and kernel 2 updates x2 with one
 * thread per column (coalesced walk down the columns).  Unlike atax.cu the
 * two launches are independent and each also reads and writes its output
 * vector (a read-modify-write), so their instruction mixes differ slightly.
 *
 * Usage:  mvt N [BLOCK]
 *   N      matrix order, 1..16384
 *   BLOCK  threads per block (1-D), 1..1024 (default 256)
 * Launches per run: 2 (mvt_rows_kernel, then mvt_cols_kernel; grid
 * ceil(N/BLOCK) each).
 * Work: about 5 thread-instructions per matrix element: ~5 N^2 per launch
 * (measured with kcast emulate).
 *
 * Check: against double-precision CPU sums.  Inputs are in [0,1), so all
 * terms are non-negative and each result, a float sum of N+1 non-negative
 * terms, has relative error at most about (N+2) u, u = 2^-24.  The tolerance
 * (N + 4) FLT_EPSILON is twice that.  PASS (exit 0), or the mismatches and
 * FAIL (exit 1); bad arguments print the usage and exit 2.
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
    "usage: mvt N [BLOCK]\n"
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
        fprintf(stderr, "mvt: bad argument '%s' (want %d..%d)\n",
                argv[idx], lo, hi);
        usage();
    }
    return (int)v;
}

/* Deterministic inputs: a 32-bit LCG (Numerical Recipes constants), fixed
 * seed; the top 24 bits give a float in [0,1). */
static unsigned int lcg_state = 20240606u;

static float lcg_unit(void)
{
    lcg_state = lcg_state * 1664525u + 1013904223u;
    return (float)(lcg_state >> 8) * (1.0f / 16777216.0f);
}

__global__ void mvt_rows_kernel(int n, const float *a, const float *y1,
                                float *x1)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float acc = x1[i];
    for (int j = 0; j < n; ++j)
        acc += a[(size_t)i * n + j] * y1[j];
    x1[i] = acc;
}

__global__ void mvt_cols_kernel(int n, const float *a, const float *y2,
                                float *x2)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float acc = x2[i];
    for (int j = 0; j < n; ++j)
        acc += a[(size_t)j * n + i] * y2[j];
    x2[i] = acc;
}

/* Compare got[] with ref[]; print the first mismatches; return how many. */
static long compare(const char *name, const float *got, const double *ref,
                    int n, double tol, double *worst)
{
    long bad = 0;
    for (int i = 0; i < n; ++i) {
        double rel = fabs(got[i] - ref[i]) / fabs(ref[i]);
        if (!(rel <= tol)) {   /* also catches NaN */
            if (bad < 10)
                printf("mismatch %s[%d]: got %.9g, expected %.9g (rel err "
                       "%.3g > %.3g)\n", name, i, got[i], ref[i], rel, tol);
            ++bad;
        } else if (rel > *worst) {
            *worst = rel;
        }
    }
    return bad;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3)
        usage();
    int n = arg_int(argc, argv, 1, 0, 1, 16384);
    int bs = arg_int(argc, argv, 2, 256, 1, 1024);
    size_t count = (size_t)n * n;
    size_t vbytes = n * sizeof(float);

    float *a = (float *)malloc(count * sizeof(float));
    float *v[4];   /* x1, x2, y1, y2 */
    for (int k = 0; k < 4; ++k)
        v[k] = (float *)malloc(vbytes);
    float *out1 = (float *)malloc(vbytes), *out2 = (float *)malloc(vbytes);
    double *ref1 = (double *)malloc(n * sizeof(double));
    double *ref2 = (double *)malloc(n * sizeof(double));
    if (!a || !v[0] || !v[1] || !v[2] || !v[3] || !out1 || !out2 || !ref1 ||
        !ref2) {
        fprintf(stderr, "mvt: out of host memory\n");
        return 1;
    }
    for (size_t i = 0; i < count; ++i)
        a[i] = lcg_unit();
    for (int k = 0; k < 4; ++k)
        for (int i = 0; i < n; ++i)
            v[k][i] = lcg_unit();

    float *da, *dv[4];
    CHECK(cudaMalloc(&da, count * sizeof(float)));
    CHECK(cudaMemcpy(da, a, count * sizeof(float), cudaMemcpyHostToDevice));
    for (int k = 0; k < 4; ++k) {
        CHECK(cudaMalloc(&dv[k], vbytes));
        CHECK(cudaMemcpy(dv[k], v[k], vbytes, cudaMemcpyHostToDevice));
    }
    int grid = (n + bs - 1) / bs;
    mvt_rows_kernel<<<grid, bs>>>(n, da, dv[2], dv[0]);
    CHECK(cudaGetLastError());
    mvt_cols_kernel<<<grid, bs>>>(n, da, dv[3], dv[1]);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(out1, dv[0], vbytes, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(out2, dv[1], vbytes, cudaMemcpyDeviceToHost));
    CHECK(cudaFree(da));
    for (int k = 0; k < 4; ++k)
        CHECK(cudaFree(dv[k]));

    for (int i = 0; i < n; ++i) {
        double s1 = v[0][i], s2 = v[1][i];
        for (int j = 0; j < n; ++j) {
            s1 += (double)a[(size_t)i * n + j] * v[2][j];
            s2 += (double)a[(size_t)j * n + i] * v[3][j];
        }
        ref1[i] = s1;
        ref2[i] = s2;
    }
    double tol = (n + 4) * (double)FLT_EPSILON, worst = 0.0;
    long bad = compare("x1", out1, ref1, n, tol, &worst) +
               compare("x2", out2, ref2, n, tol, &worst);
    free(a);
    for (int k = 0; k < 4; ++k)
        free(v[k]);
    free(out1);
    free(out2);
    free(ref1);
    free(ref2);
    printf("mvt N=%d BLOCK=%d: max rel err %.3g (tol %.3g)\n", n, bs, worst,
           tol);
    if (bad) {
        printf("%ld of %d elements mismatched\nFAIL\n", bad, 2 * n);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
