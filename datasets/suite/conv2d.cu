/* conv2d -- 2-D convolution of an N x N image with a K x K filter in constant memory.
 *
 * What: out[y][x] = sum over u, v of F[u][v] * in[y + u - R][x + v - R],
 * R = (K-1)/2, with zero padding outside the image.  The filter lives in
 * __constant__ memory (uploaded with cudaMemcpyToSymbol): every thread of a
 * warp reads the same filter word at the same time, the broadcast case the
 * constant cache is built for, while the image comes from global memory.
 * One thread per output pixel; the K^2 loop has a bounds test per tap (the
 * zero padding), so border threads diverge.
 *
 * Usage:  conv2d N [BLOCK] [K]
 *   N      image side, 1..8192
 *   BLOCK  thread-block side: BLOCK x BLOCK threads, 1..32 (default 16)
 *   K      filter width, odd, 1..15 (default 5)
 * Launches per run: 1 (conv2d_kernel, grid ceil(N/BLOCK)^2).
 * Work: about 16 thread-instructions per tap: ~16 K^2 N^2 per launch
 * (measured with kcast emulate).
 *
 * Check: against a double-precision CPU convolution.  Image values are in
 * [0,1) and the filter weights are positive (summing to about 1), so every
 * output is a float sum of at most K^2 non-negative terms with relative
 * error at most about (K^2 + 1) u, u = 2^-24; the tolerance
 * (K^2 + 4) FLT_EPSILON is twice that.  PASS (exit 0), or the mismatches and
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
    "usage: conv2d N [BLOCK] [K]\n"
    "  N      image side, 1..8192\n"
    "  BLOCK  thread-block side (BLOCK x BLOCK threads), 1..32, default 16\n"
    "  K      filter width, odd, 1..15, default 5\n";

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
        fprintf(stderr, "conv2d: bad argument '%s' (want %d..%d)\n",
                argv[idx], lo, hi);
        usage();
    }
    return (int)v;
}

/* Deterministic inputs: a 32-bit LCG (Numerical Recipes constants), fixed
 * seed; the top 24 bits give a float in [0,1). */
static unsigned int lcg_state = 20240613u;

static float lcg_unit(void)
{
    lcg_state = lcg_state * 1664525u + 1013904223u;
    return (float)(lcg_state >> 8) * (1.0f / 16777216.0f);
}

#define CONV_MAX_K 15

__constant__ float filt[CONV_MAX_K * CONV_MAX_K];

__global__ void conv2d_kernel(int n, int k, const float *in, float *out)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= n || y >= n)
        return;
    int r = k / 2;
    float acc = 0.0f;
    for (int u = 0; u < k; ++u) {
        int yy = y + u - r;
        if (yy < 0 || yy >= n)
            continue;
        for (int v = 0; v < k; ++v) {
            int xx = x + v - r;
            if (xx >= 0 && xx < n)
                acc += filt[u * k + v] * in[yy * n + xx];
        }
    }
    out[y * n + x] = acc;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 4)
        usage();
    int n = arg_int(argc, argv, 1, 0, 1, 8192);
    int bs = arg_int(argc, argv, 2, 16, 1, 32);
    int k = arg_int(argc, argv, 3, 5, 1, CONV_MAX_K);
    if (k % 2 == 0) {
        fprintf(stderr, "conv2d: K must be odd\n");
        usage();
    }
    int r = k / 2;
    size_t count = (size_t)n * n;
    size_t bytes = count * sizeof(float);

    float *img = (float *)malloc(bytes), *out = (float *)malloc(bytes);
    float f[CONV_MAX_K * CONV_MAX_K];
    if (!img || !out) {
        fprintf(stderr, "conv2d: out of host memory\n");
        return 1;
    }
    for (size_t i = 0; i < count; ++i)
        img[i] = lcg_unit();
    /* Positive weights (0.5..1.5 before scaling), normalised to sum ~1. */
    double fsum = 0.0;
    for (int i = 0; i < k * k; ++i) {
        f[i] = 0.5f + lcg_unit();
        fsum += f[i];
    }
    for (int i = 0; i < k * k; ++i)
        f[i] = (float)(f[i] / fsum);

    float *din, *dout;
    CHECK(cudaMalloc(&din, bytes));
    CHECK(cudaMalloc(&dout, bytes));
    CHECK(cudaMemcpy(din, img, bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpyToSymbol(filt, f, k * k * sizeof(float)));
    dim3 block(bs, bs);
    dim3 blocks((n + bs - 1) / bs, (n + bs - 1) / bs);
    conv2d_kernel<<<blocks, block>>>(n, k, din, dout);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(out, dout, bytes, cudaMemcpyDeviceToHost));
    CHECK(cudaFree(din));
    CHECK(cudaFree(dout));

    double tol = (k * k + 4) * (double)FLT_EPSILON, worst = 0.0;
    long bad = 0;
    for (int y = 0; y < n; ++y) {
        for (int x = 0; x < n; ++x) {
            double ref = 0.0;
            for (int u = -r; u <= r; ++u)
                for (int v = -r; v <= r; ++v)
                    if (y + u >= 0 && y + u < n && x + v >= 0 && x + v < n)
                        ref += (double)f[(u + r) * k + (v + r)] *
                               img[(size_t)(y + u) * n + (x + v)];
            double got = out[(size_t)y * n + x];
            double rel = fabs(got - ref) / fabs(ref);
            if (!(rel <= tol)) {   /* also catches NaN */
                if (bad < 10)
                    printf("mismatch out[%d][%d]: got %.9g, expected %.9g "
                           "(rel err %.3g > %.3g)\n", y, x, got, ref, rel, tol);
                ++bad;
            } else if (rel > worst) {
                worst = rel;
            }
        }
    }
    free(img);
    free(out);
    printf("conv2d N=%d BLOCK=%d K=%d: max rel err %.3g (tol %.3g)\n", n, bs,
           k, worst, tol);
    if (bad) {
        printf("%ld of %zu pixels mismatched\nFAIL\n", bad, count);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
