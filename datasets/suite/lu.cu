/* lu -- in-place LU decomposition without pivoting, one step per launch pair.
 *
 * What: factor a row-major N x N matrix A = L U (L unit lower triangular, its
 * multipliers stored below the diagonal; U on and above it) by right-looking
 * Gaussian elimination.  Step k runs two kernels: lu_scale_kernel divides
 * column k below the diagonal by the pivot A[k][k], then lu_update_kernel
 * subtracts the rank-1 product A[i][k] * A[k][j] from the trailing
 * (N-k-1) x (N-k-1) submatrix.  The grids shrink with k, so one run yields
 * 2 (N-1) launches of steadily decreasing size -- many distinct launch
 * shapes from one program.  The input is strictly diagonally dominant
 * (off-diagonal entries in [0,1), N added to the diagonal), so no pivoting is
 * needed and the factorisation is stable.
 *
 * Usage:  lu N [BLOCK]
 *   N      matrix order, 2..2048
 *   BLOCK  update-kernel block side: BLOCK x BLOCK threads, 1..32 (default 16);
 *          the scale kernel uses 1-D blocks of BLOCK*BLOCK threads
 * Launches per run: 2 (N-1): for k = 0..N-2, lu_scale_kernel (grid
 * ceil((N-k-1)/BLOCK^2)) then lu_update_kernel (grid ceil((N-k-1)/BLOCK)^2).
 * Work: about 37 thread-instructions per update thread, ~12 N^3 in all
 * (measured with kcast emulate); the scale launches are tiny.
 *
 * Check: against the same elimination in double on the CPU, entry by entry,
 * scaled by the size of what was combined to form it: an entry of U (j >= i)
 * is a sum of O(1) updates to an O(1) or O(N) start, so its error is measured
 * against |U_ij| + 1; a multiplier L_ij (j < i) is such a sum divided by
 * U_jj, so against |L_ij| + 1/|U_jj|.  Pure relative error would not do:
 * late trailing entries can cancel to ~1e-9.  Each entry takes at most N
 * rounded updates, each off by at most about u = 2^-24 of that scale, so the
 * error is at most about N u; the tolerance (N + 4) FLT_EPSILON = 2 (N + 4) u
 * is twice that (a float simulation on the CPU stayed below 0.08 N
 * FLT_EPSILON for N = 4..1024, with and without fused multiply-adds).
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
    "usage: lu N [BLOCK]\n"
    "  N      matrix order, 2..2048\n"
    "  BLOCK  update block side (BLOCK x BLOCK threads), 1..32, default 16\n";

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
        fprintf(stderr, "lu: bad argument '%s' (want %d..%d)\n",
                argv[idx], lo, hi);
        usage();
    }
    return (int)v;
}

/* Deterministic inputs: a 32-bit LCG (Numerical Recipes constants), fixed
 * seed; the top 24 bits give a float in [0,1). */
static unsigned int lcg_state = 20240607u;

static float lcg_unit(void)
{
    lcg_state = lcg_state * 1664525u + 1013904223u;
    return (float)(lcg_state >> 8) * (1.0f / 16777216.0f);
}

/* Column k below the diagonal: A[i][k] /= A[k][k] for i > k. */
__global__ void lu_scale_kernel(int n, int k, float *a)
{
    int i = k + 1 + blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        a[i * n + k] /= a[k * n + k];
}

/* Trailing submatrix: A[i][j] -= A[i][k] * A[k][j] for i, j > k.  Reads only
 * row k and column k, which this launch does not write: no races. */
__global__ void lu_update_kernel(int n, int k, float *a)
{
    int j = k + 1 + blockIdx.x * blockDim.x + threadIdx.x;
    int i = k + 1 + blockIdx.y * blockDim.y + threadIdx.y;
    if (i < n && j < n)
        a[i * n + j] -= a[i * n + k] * a[k * n + j];
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3)
        usage();
    int n = arg_int(argc, argv, 1, 0, 2, 2048);
    int bs = arg_int(argc, argv, 2, 16, 1, 32);
    size_t count = (size_t)n * n;
    size_t bytes = count * sizeof(float);

    float *a = (float *)malloc(bytes), *out = (float *)malloc(bytes);
    double *r = (double *)malloc(count * sizeof(double));
    if (!a || !out || !r) {
        fprintf(stderr, "lu: out of host memory\n");
        return 1;
    }
    for (size_t i = 0; i < count; ++i)
        a[i] = lcg_unit();
    for (int i = 0; i < n; ++i)
        a[(size_t)i * n + i] += (float)n;

    float *da;
    CHECK(cudaMalloc(&da, bytes));
    CHECK(cudaMemcpy(da, a, bytes, cudaMemcpyHostToDevice));
    int scale_block = bs * bs;
    for (int k = 0; k < n - 1; ++k) {
        int rest = n - k - 1;
        lu_scale_kernel<<<(rest + scale_block - 1) / scale_block,
                          scale_block>>>(n, k, da);
        CHECK(cudaGetLastError());
        dim3 block(bs, bs);
        dim3 grid((rest + bs - 1) / bs, (rest + bs - 1) / bs);
        lu_update_kernel<<<grid, block>>>(n, k, da);
        CHECK(cudaGetLastError());
    }
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(out, da, bytes, cudaMemcpyDeviceToHost));
    CHECK(cudaFree(da));

    for (size_t i = 0; i < count; ++i)
        r[i] = a[i];
    for (int k = 0; k < n - 1; ++k) {
        for (int i = k + 1; i < n; ++i) {
            double l = r[(size_t)i * n + k] /= r[(size_t)k * n + k];
            for (int j = k + 1; j < n; ++j)
                r[(size_t)i * n + j] -= l * r[(size_t)k * n + j];
        }
    }
    double tol = (n + 4) * (double)FLT_EPSILON, worst = 0.0;
    long bad = 0;
    for (int i = 0; i < n; ++i) {
        for (int j = 0; j < n; ++j) {
            double ref = r[(size_t)i * n + j], got = out[(size_t)i * n + j];
            double scale = j >= i ? fabs(ref) + 1.0
                                  : fabs(ref) + 1.0 / fabs(r[(size_t)j * n + j]);
            double err = fabs(got - ref) / scale;
            if (!(err <= tol)) {   /* also catches NaN */
                if (bad < 10)
                    printf("mismatch %s[%d][%d]: got %.9g, expected %.9g "
                           "(scaled err %.3g > %.3g)\n", j >= i ? "U" : "L",
                           i, j, got, ref, err, tol);
                ++bad;
            } else if (err > worst) {
                worst = err;
            }
        }
    }
    free(a);
    free(out);
    free(r);
    printf("lu N=%d BLOCK=%d: max scaled err %.3g (tol %.3g)\n", n, bs, worst,
           tol);
    if (bad) {
        printf("%ld of %zu entries mismatched\nFAIL\n", bad, count);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
