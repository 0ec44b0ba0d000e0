/* hotspot -- explicit thermal simulation of a chip floor plan, ITERS steps.
 *
 * What: a square N x N grid of cells, each with a temperature T and a
 * dissipated power P, evolves by forward-Euler steps of the heat equation
 * with lateral conduction to the four neighbours and vertical conduction to
 * a heat sink at ambient temperature:
 *   T' = T + CX (Tw + Te - 2T) + CY (Tn + Ts - 2T) + CZ (TAMB - T) + CP P
 * where CX, CY, CZ are the step size over the thermal capacitance times the
 * conductances and CP the step over the capacitance.  Edges are insulated
 * (a missing neighbour counts as the cell itself: zero flux).  Each
 * BLOCK x BLOCK thread block first stages its tile plus a one-cell halo in
 * shared memory (edge threads fetch the halo), synchronises, and then
 * updates its cells from shared memory; one launch per time step, the host
 * swapping the temperature buffers.  Compared with stencil2d.cu this adds
 * shared-memory staging, a barrier, a second input array and clamped
 * indexing.
 *
 * Usage:  hotspot N [BLOCK] [ITERS]
 *   N      grid side, 1..8192
 *   BLOCK  thread-block side: BLOCK x BLOCK threads, 1..32 (default 16)
 *   ITERS  time steps, 1..10000 (default 10)
 * Launches per run: ITERS (hotspot_kernel, grid ceil(N/BLOCK)^2).
 * Work: about 66 thread-instructions per cell: ~66 N^2 per launch (measured
 * with kcast emulate).
 *
 * Check: against the same steps in double on the CPU.  Temperatures start in
 * [60,90) with TAMB = 80 and P in [0,1), and stay within about [60,100]; the
 * update is stable (1 - 2CX - 2CY - CZ = 0.55 > 0, so the step's max-norm is
 * 0.95 < 1 and earlier errors shrink).  A step rounds about 12 times on
 * quantities up to ~200, an absolute error of at most ~2400 u, u = 2^-24,
 * i.e. at most ~40u ~ 2.4e-6 of a temperature >= 60; the tolerance
 * 3e-6 (ITERS + 1) on the relative error bounds ITERS steps with room to
 * spare (a float simulation on the CPU, with and without fused
 * multiply-adds, stayed below 7e-7 for N = 16..256 and up to 200 steps).
 * PASS (exit 0), or the mismatches and FAIL (exit 1); bad arguments print
 * the usage and exit 2.
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
    "usage: hotspot N [BLOCK] [ITERS]\n"
    "  N      grid side, 1..8192\n"
    "  BLOCK  thread-block side (BLOCK x BLOCK threads), 1..32, default 16\n"
    "  ITERS  time steps, 1..10000, default 10\n";

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
        fprintf(stderr, "hotspot: bad argument '%s' (want %d..%d)\n",
                argv[idx], lo, hi);
        usage();
    }
    return (int)v;
}

/* Deterministic inputs: a 32-bit LCG (Numerical Recipes constants), fixed
 * seed; the top 24 bits give a float in [0,1). */
static unsigned int lcg_state = 20240611u;

static float lcg_unit(void)
{
    lcg_state = lcg_state * 1664525u + 1013904223u;
    return (float)(lcg_state >> 8) * (1.0f / 16777216.0f);
}

#define CX 0.1f       /* step * lateral conductance (x) / capacitance */
#define CY 0.1f       /* step * lateral conductance (y) / capacitance */
#define CZ 0.05f      /* step * vertical conductance to the sink / capacitance */
#define CP 0.5f       /* step / capacitance, per unit of power */
#define TAMB 80.0f    /* heat-sink (ambient) temperature */
#define HOT_MAX_BLOCK 32

__global__ void hotspot_kernel(int n, const float *temp, const float *power,
                               float *out)
{
    __shared__ float tile[HOT_MAX_BLOCK + 2][HOT_MAX_BLOCK + 2];
    int bs = blockDim.x;
    int tx = threadIdx.x, ty = threadIdx.y;
    int gx = blockIdx.x * bs + tx, gy = blockIdx.y * bs + ty;
    /* Threads past the edge load the last cell: exactly the clamped
     * neighbour that the last real cell needs (insulated edge). */
    int cx = min(gx, n - 1), cy = min(gy, n - 1);
    tile[ty + 1][tx + 1] = temp[cy * n + cx];
    if (tx == 0)
        tile[ty + 1][0] = temp[cy * n + max(cx - 1, 0)];
    if (tx == bs - 1)
        tile[ty + 1][bs + 1] = temp[cy * n + min(cx + 1, n - 1)];
    if (ty == 0)
        tile[0][tx + 1] = temp[max(cy - 1, 0) * n + cx];
    if (ty == bs - 1)
        tile[bs + 1][tx + 1] = temp[min(cy + 1, n - 1) * n + cx];
    __syncthreads();
    if (gx >= n || gy >= n)
        return;
    float t = tile[ty + 1][tx + 1];
    float v = t + CX * (tile[ty + 1][tx] + tile[ty + 1][tx + 2] - 2.0f * t) +
              CY * (tile[ty][tx + 1] + tile[ty + 2][tx + 1] - 2.0f * t) +
              CZ * (TAMB - t) + CP * power[gy * n + gx];
    out[gy * n + gx] = v;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 4)
        usage();
    int n = arg_int(argc, argv, 1, 0, 1, 8192);
    int bs = arg_int(argc, argv, 2, 16, 1, HOT_MAX_BLOCK);
    int iters = arg_int(argc, argv, 3, 10, 1, 10000);
    size_t count = (size_t)n * n;
    size_t bytes = count * sizeof(float);

    float *temp = (float *)malloc(bytes), *power = (float *)malloc(bytes);
    float *out = (float *)malloc(bytes);
    double *r0 = (double *)malloc(count * sizeof(double));
    double *r1 = (double *)malloc(count * sizeof(double));
    if (!temp || !power || !out || !r0 || !r1) {
        fprintf(stderr, "hotspot: out of host memory\n");
        return 1;
    }
    for (size_t i = 0; i < count; ++i)
        temp[i] = 60.0f + 30.0f * lcg_unit();
    for (size_t i = 0; i < count; ++i)
        power[i] = lcg_unit();

    float *d[2], *dp;
    CHECK(cudaMalloc(&d[0], bytes));
    CHECK(cudaMalloc(&d[1], bytes));
    CHECK(cudaMalloc(&dp, bytes));
    CHECK(cudaMemcpy(d[0], temp, bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dp, power, bytes, cudaMemcpyHostToDevice));
    dim3 block(bs, bs);
    dim3 blocks((n + bs - 1) / bs, (n + bs - 1) / bs);
    for (int it = 0; it < iters; ++it) {
        hotspot_kernel<<<blocks, block>>>(n, d[it & 1], dp, d[(it + 1) & 1]);
        CHECK(cudaGetLastError());
    }
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(out, d[iters & 1], bytes, cudaMemcpyDeviceToHost));
    CHECK(cudaFree(d[0]));
    CHECK(cudaFree(d[1]));
    CHECK(cudaFree(dp));

    for (size_t i = 0; i < count; ++i)
        r0[i] = temp[i];
    for (int it = 0; it < iters; ++it) {
        for (int y = 0; y < n; ++y) {
            for (int x = 0; x < n; ++x) {
                double t = r0[(size_t)y * n + x];
                double w = r0[(size_t)y * n + (x > 0 ? x - 1 : x)];
                double e = r0[(size_t)y * n + (x < n - 1 ? x + 1 : x)];
                double no = r0[(size_t)(y > 0 ? y - 1 : y) * n + x];
                double so = r0[(size_t)(y < n - 1 ? y + 1 : y) * n + x];
                r1[(size_t)y * n + x] =
                    t + (double)CX * (w + e - 2.0 * t) +
                    (double)CY * (no + so - 2.0 * t) +
                    (double)CZ * ((double)TAMB - t) +
                    (double)CP * power[(size_t)y * n + x];
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
                printf("mismatch T[%zu][%zu]: got %.9g, expected %.9g (rel err "
                       "%.3g > %.3g)\n", idx / n, idx % n, out[idx], r0[idx],
                       rel, tol);
            ++bad;
        } else if (rel > worst) {
            worst = rel;
        }
    }
    free(temp);
    free(power);
    free(out);
    free(r0);
    free(r1);
    printf("hotspot N=%d BLOCK=%d ITERS=%d: max rel err %.3g (tol %.3g)\n", n,
           bs, iters, worst, tol);
    if (bad) {
        printf("%ld of %zu cells mismatched\nFAIL\n", bad, count);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
