/* stencil3d -- 7-point Jacobi smoothing on an N^3 grid, ITERS sweeps.
 *
 * What: each sweep writes out = C0 centre + C1 (sum of the six face
 * neighbours) for interior points and copies the boundary faces unchanged;
 * the host swaps two buffers between sweeps, one launch per sweep.  Threads
 * tile the x-y plane (a 2-D grid of BLOCK x BLOCK blocks) and each thread
 * marches along z through its whole column, so a launch is a loop of N
 * iterations per thread with three neighbour planes in flight -- a different
 * shape from the one-point-per-thread stencil2d.cu.
 *
 * Usage:  stencil3d N [BLOCK] [ITERS]
 *   N      grid side, 3..512
 *   BLOCK  thread-block side: BLOCK x BLOCK threads, 1..32 (default 16)
 *   ITERS  sweeps, 1..10000 (default 4)
 * Launches per run: ITERS (stencil3d_kernel, grid ceil(N/BLOCK)^2).
 * Work: about 25 thread-instructions per point: ~25 N^3 per launch (measured
 * with kcast emulate).
 *
 * Check: against the same sweeps in double on the CPU.  Inputs are in
 * [0.5,1.5) and C0 + 6 C1 = 1 with C0, C1 > 0, so values stay convex
 * combinations in [0.5,1.5): no cancellation, and a sweep cannot amplify an
 * earlier error.  A sweep adds at most about 8 roundings of size u = 2^-24
 * times the terms' sum (<= 1.5), at most 24u ~ 1.5e-6 of the value; the
 * tolerance 3e-6 (ITERS + 1) on the relative error bounds ITERS sweeps with
 * room to spare.  PASS (exit 0), or the mismatches and FAIL (exit 1); bad
 * arguments print the usage and exit 2.
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
    "usage: stencil3d N [BLOCK] [ITERS]\n"
    "  N      grid side, 3..512\n"
    "  BLOCK  thread-block side (BLOCK x BLOCK threads), 1..32, default 16\n"
    "  ITERS  sweeps, 1..10000, default 4\n";

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
        fprintf(stderr, "stencil3d: bad argument '%s' (want %d..%d)\n",
                argv[idx], lo, hi);
        usage();
    }
    return (int)v;
}

/* Deterministic inputs: a 32-bit LCG (Numerical Recipes constants), fixed
 * seed; the top 24 bits give a float in [0,1). */
static unsigned int lcg_state = 20240610u;

static float lcg_unit(void)
{
    lcg_state = lcg_state * 1664525u + 1013904223u;
    return (float)(lcg_state >> 8) * (1.0f / 16777216.0f);
}

#define C0 0.25f
#define C1 0.125f

__global__ void stencil3d_kernel(int n, const float *in, float *out)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= n || y >= n)
        return;
    size_t plane = (size_t)n * n;
    bool edge = x == 0 || y == 0 || x == n - 1 || y == n - 1;
    for (int z = 0; z < n; ++z) {
        size_t idx = z * plane + (size_t)y * n + x;
        if (edge || z == 0 || z == n - 1) {
            out[idx] = in[idx];
        } else {
            out[idx] = C0 * in[idx] +
                       C1 * (in[idx - 1] + in[idx + 1] + in[idx - n] +
                             in[idx + n] + in[idx - plane] + in[idx + plane]);
        }
    }
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 4)
        usage();
    int n = arg_int(argc, argv, 1, 0, 3, 512);
    int bs = arg_int(argc, argv, 2, 16, 1, 32);
    int iters = arg_int(argc, argv, 3, 4, 1, 10000);
    size_t plane = (size_t)n * n, count = plane * n;
    size_t bytes = count * sizeof(float);

    float *grid = (float *)malloc(bytes), *out = (float *)malloc(bytes);
    double *r0 = (double *)malloc(count * sizeof(double));
    double *r1 = (double *)malloc(count * sizeof(double));
    if (!grid || !out || !r0 || !r1) {
        fprintf(stderr, "stencil3d: out of host memory\n");
        return 1;
    }
    for (size_t i = 0; i < count; ++i)
        grid[i] = 0.5f + lcg_unit();

    float *d[2];
    CHECK(cudaMalloc(&d[0], bytes));
    CHECK(cudaMalloc(&d[1], bytes));
    CHECK(cudaMemcpy(d[0], grid, bytes, cudaMemcpyHostToDevice));
    dim3 block(bs, bs);
    dim3 blocks((n + bs - 1) / bs, (n + bs - 1) / bs);
    for (int it = 0; it < iters; ++it) {
        stencil3d_kernel<<<blocks, block>>>(n, d[it & 1], d[(it + 1) & 1]);
        CHECK(cudaGetLastError());
    }
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(out, d[iters & 1], bytes, cudaMemcpyDeviceToHost));
    CHECK(cudaFree(d[0]));
    CHECK(cudaFree(d[1]));

    for (size_t i = 0; i < count; ++i)
        r0[i] = grid[i];
    for (int it = 0; it < iters; ++it) {
        for (int z = 0; z < n; ++z) {
            for (int y = 0; y < n; ++y) {
                for (int x = 0; x < n; ++x) {
                    size_t idx = z * plane + (size_t)y * n + x;
                    if (x == 0 || y == 0 || z == 0 || x == n - 1 ||
                        y == n - 1 || z == n - 1)
                        r1[idx] = r0[idx];
                    else
                        r1[idx] = (double)C0 * r0[idx] +
                                  (double)C1 * (r0[idx - 1] + r0[idx + 1] +
                                                r0[idx - n] + r0[idx + n] +
                                                r0[idx - plane] +
                                                r0[idx + plane]);
                }
            }
        }
        double *t = r0;
        r0 = r1;
        r1 = t;
    }
    double tol = 3e-6 * (iters + 1), worst = 0.0;
    long bad = 0;
    for (size_t idx = 0; idx < count; ++idx) {
        double rel = fabs(out[idx] - r0[idx]) / fabs(r0[idx]);
        if (!(rel <= tol)) {   /* also catches NaN */
            if (bad < 10)
                printf("mismatch u[%zu][%zu][%zu]: got %.9g, expected %.9g "
                       "(rel err %.3g > %.3g)\n", idx / plane, idx / n % n,
                       idx % n, out[idx], r0[idx], rel, tol);
            ++bad;
        } else if (rel > worst) {
            worst = rel;
        }
    }
    free(grid);
    free(out);
    free(r0);
    free(r1);
    printf("stencil3d N=%d BLOCK=%d ITERS=%d: max rel err %.3g (tol %.3g)\n",
           n, bs, iters, worst, tol);
    if (bad) {
        printf("%ld of %zu points mismatched\nFAIL\n", bad, count);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
