// nn_layer.cu -- training steps of one dense layer with a sigmoid activation:
// forward pass, backpropagation and a plain SGD update.
//
// usage: nn_layer BATCH IN OUT [TILE] [ITERS]
//   BATCH  examples per step, 1 .. 8192
//   IN     inputs per example, 1 .. 8192
//   OUT    outputs (neurons), 1 .. 8192
//   TILE   matmul tile edge, 8, 16 or 32 (default 16); matmul blocks are
//          TILE x TILE threads, the element-wise kernels use TILE*TILE threads
//   ITERS  training steps (default 2), 1 .. 100
// Per step (loss 0.5/BATCH * sum (Y - T)^2, learning rate 1):
//   1. matmul   Z  = X W^T + b            (BATCH x OUT, K = IN)
//   2. sigmoid  Y  = 1 / (1 + exp(-Z))
//   3. delta    dZ = (Y - T) Y (1 - Y) / BATCH
//   4. matmul   dW = dZ^T X                (OUT x IN, K = BATCH)
//   5. bias_grad db = column sums of dZ    (one thread per output)
//   6. matmul   dX = dZ W                  (BATCH x IN, K = OUT)
//   7. sgd      W -= dW, b -= db
// One shared-memory tiled matmul kernel serves 1, 4 and 6 through strides.
// Launches per run: 7 * ITERS.
// Check: after the last step, Y, dW, db, dX of that step and the updated W and
// b, against a double-precision CPU mirror of all steps, normwise per array:
// max|x - x_ref| <= 1e-4 * max|x_ref|.  Float dot products of K <= 8192 terms
// have typical relative error ~sqrt(K) eps ~ 5e-6 of the magnitudes involved,
// expf is within 2 ulp, and a few SGD steps do not amplify the differences
// (lr * dW is ~10 % of W, so a broken update is far above the tolerance).
#include "suite_util.h"
#include <math.h>

#define USAGE "nn_layer BATCH IN OUT [TILE] [ITERS]"

// C[m][n] = sum_k A[m*sam + k*sak] * B[k*sbk + n*sbn] (+ bias[n]); C is M x N.
__global__ void matmul(const float *A, int sam, int sak, const float *B, int sbk, int sbn,
                       const float *bias, float *C, int M, int N, int K) {
  extern __shared__ float sm[];
  int t = blockDim.x;
  float *As = sm, *Bs = sm + t * t;
  int tx = threadIdx.x, ty = threadIdx.y;
  int m = blockIdx.y * t + ty, n = blockIdx.x * t + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += t) {
    int ka = k0 + tx, kb = k0 + ty;
    As[ty * t + tx] = (m < M && ka < K) ? A[(size_t)m * sam + (size_t)ka * sak] : 0.0f;
    Bs[ty * t + tx] = (kb < K && n < N) ? B[(size_t)kb * sbk + (size_t)n * sbn] : 0.0f;
    __syncthreads();
    for (int k = 0; k < t; k++) acc += As[ty * t + k] * Bs[k * t + tx];
    __syncthreads();
  }
  if (m < M && n < N) C[(size_t)m * N + n] = acc + (bias ? bias[n] : 0.0f);
}

__global__ void sigmoid(const float *z, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 1.0f / (1.0f + expf(-z[i]));
}

__global__ void delta(const float *y, const float *target, float *dz, int n, float inv_batch) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = y[i];
    dz[i] = (v - target[i]) * v * (1.0f - v) * inv_batch;
  }
}

__global__ void bias_grad(const float *dz, float *db, int batch, int out) {
  int o = blockIdx.x * blockDim.x + threadIdx.x;
  if (o >= out) return;
  float s = 0.0f;
  for (int b = 0; b < batch; b++) s += dz[(size_t)b * out + o];
  db[o] = s;
}

__global__ void sgd(float *w, const float *dw, float *bias, const float *db, int nw, int nb) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < nw) w[i] -= dw[i];
  if (i < nb) bias[i] -= db[i];
}

static long long check(const char *what, const float *got, const double *want, size_t n) {
  double maxref = 0, maxerr = 0;
  for (size_t i = 0; i < n; i++) {
    maxref = fmax(maxref, fabs(want[i]));
    maxerr = fmax(maxerr, fabs((double)got[i] - want[i]));
  }
  int ok = maxerr <= 1e-4 * maxref;
  printf("  %-3s max err %.3g, max |ref| %.3g %s\n", what, maxerr, maxref, ok ? "ok" : "MISMATCH");
  return ok ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc < 4 || argc > 6) suite_usage(USAGE);
  int B = (int)suite_arg(argc, argv, 1, 0, 1, 8192, USAGE);
  int I = (int)suite_arg(argc, argv, 2, 0, 1, 8192, USAGE);
  int O = (int)suite_arg(argc, argv, 3, 0, 1, 8192, USAGE);
  int tile = (int)suite_arg(argc, argv, 4, 16, 8, 32, USAGE);
  int iters = (int)suite_arg(argc, argv, 5, 2, 1, 100, USAGE);
  if (tile != 8 && tile != 16 && tile != 32) suite_usage(USAGE);

  size_t nx = (size_t)B * I, nw = (size_t)O * I, ny = (size_t)B * O;
  float *x = (float *)suite_malloc(nx * sizeof(float)), *w = (float *)suite_malloc(nw * sizeof(float));
  float *bias = (float *)suite_malloc(O * sizeof(float)), *tg = (float *)suite_malloc(ny * sizeof(float));
  lcg_t g = {90210u};
  float wscale = 2.0f / sqrtf((float)I);
  for (size_t i = 0; i < nx; i++) x[i] = 2.0f * lcg_unit(&g) - 1.0f;
  for (size_t i = 0; i < nw; i++) w[i] = wscale * (lcg_unit(&g) - 0.5f);
  for (int i = 0; i < O; i++) bias[i] = 0.2f * (lcg_unit(&g) - 0.5f);
  for (size_t i = 0; i < ny; i++) tg[i] = lcg_unit(&g);

  float *dx_in, *dw, *db_, *dt, *dz, *dy, *ddz, *ddw, *ddb, *ddx;
  CHECK(cudaMalloc(&dx_in, nx * sizeof(float)));
  CHECK(cudaMalloc(&dw, nw * sizeof(float)));
  CHECK(cudaMalloc(&db_, O * sizeof(float)));
  CHECK(cudaMalloc(&dt, ny * sizeof(float)));
  CHECK(cudaMalloc(&dz, ny * sizeof(float)));
  CHECK(cudaMalloc(&dy, ny * sizeof(float)));
  CHECK(cudaMalloc(&ddz, ny * sizeof(float)));
  CHECK(cudaMalloc(&ddw, nw * sizeof(float)));
  CHECK(cudaMalloc(&ddb, O * sizeof(float)));
  CHECK(cudaMalloc(&ddx, nx * sizeof(float)));
  CHECK(cudaMemcpy(dx_in, x, nx * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dw, w, nw * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(db_, bias, O * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dt, tg, ny * sizeof(float), cudaMemcpyHostToDevice));

  dim3 blk(tile, tile);
  int flat = tile * tile;
  size_t shm = 2 * (size_t)flat * sizeof(float);
  for (int it = 0; it < iters; it++) {
    matmul<<<dim3((O + tile - 1) / tile, (B + tile - 1) / tile), blk, shm>>>(dx_in, I, 1, dw, 1, I, db_, dz, B, O, I);
    CHECK_LAUNCH();
    sigmoid<<<(int)((ny + flat - 1) / flat), flat>>>(dz, dy, (int)ny);
    CHECK_LAUNCH();
    delta<<<(int)((ny + flat - 1) / flat), flat>>>(dy, dt, ddz, (int)ny, 1.0f / (float)B);
    CHECK_LAUNCH();
    matmul<<<dim3((I + tile - 1) / tile, (O + tile - 1) / tile), blk, shm>>>(ddz, 1, O, dx_in, I, 1, NULL, ddw, O, I, B);
    CHECK_LAUNCH();
    bias_grad<<<(O + flat - 1) / flat, flat>>>(ddz, ddb, B, O);
    CHECK_LAUNCH();
    matmul<<<dim3((I + tile - 1) / tile, (B + tile - 1) / tile), blk, shm>>>(ddz, O, 1, dw, I, 1, NULL, ddx, B, I, O);
    CHECK_LAUNCH();
    sgd<<<(int)((nw + flat - 1) / flat), flat>>>(dw, ddw, db_, ddb, (int)nw, O);
    CHECK_LAUNCH();
  }
  CHECK(cudaDeviceSynchronize());

  // Double-precision mirror of the same steps.
  double *rw = (double *)suite_malloc(nw * sizeof(double)), *rb = (double *)suite_malloc(O * sizeof(double));
  double *ry = (double *)suite_malloc(ny * sizeof(double)), *rdz = (double *)suite_malloc(ny * sizeof(double));
  double *rdw = (double *)suite_malloc(nw * sizeof(double)), *rdb = (double *)suite_malloc(O * sizeof(double));
  double *rdx = (double *)suite_malloc(nx * sizeof(double));
  for (size_t i = 0; i < nw; i++) rw[i] = w[i];
  for (int i = 0; i < O; i++) rb[i] = bias[i];
  for (int it = 0; it < iters; it++) {
    for (int b = 0; b < B; b++)
      for (int o = 0; o < O; o++) {
        double s = rb[o];
        for (int i = 0; i < I; i++) s += (double)x[(size_t)b * I + i] * rw[(size_t)o * I + i];
        double yv = 1.0 / (1.0 + exp(-s));
        ry[(size_t)b * O + o] = yv;
        rdz[(size_t)b * O + o] = (yv - tg[(size_t)b * O + o]) * yv * (1.0 - yv) / B;
      }
    memset(rdw, 0, nw * sizeof(double));
    memset(rdx, 0, nx * sizeof(double));
    for (int o = 0; o < O; o++) rdb[o] = 0;
    for (int b = 0; b < B; b++)
      for (int o = 0; o < O; o++) {
        double d = rdz[(size_t)b * O + o];
        rdb[o] += d;
        for (int i = 0; i < I; i++) {
          rdw[(size_t)o * I + i] += d * x[(size_t)b * I + i];
          rdx[(size_t)b * I + i] += d * rw[(size_t)o * I + i];
        }
      }
    for (size_t i = 0; i < nw; i++) rw[i] -= rdw[i];
    for (int o = 0; o < O; o++) rb[o] -= rdb[o];
  }

  float *got = (float *)suite_malloc((nx > nw ? (nx > ny ? nx : ny) : (nw > ny ? nw : ny)) * sizeof(float));
  long long bad = 0;
  printf("nn_layer: batch=%d in=%d out=%d tile=%d iters=%d\n", B, I, O, tile, iters);
  CHECK(cudaMemcpy(got, dy, ny * sizeof(float), cudaMemcpyDeviceToHost));
  bad += check("Y", got, ry, ny);
  CHECK(cudaMemcpy(got, ddw, nw * sizeof(float), cudaMemcpyDeviceToHost));
  bad += check("dW", got, rdw, nw);
  CHECK(cudaMemcpy(got, ddb, O * sizeof(float), cudaMemcpyDeviceToHost));
  bad += check("db", got, rdb, O);
  CHECK(cudaMemcpy(got, ddx, nx * sizeof(float), cudaMemcpyDeviceToHost));
  bad += check("dX", got, rdx, nx);
  CHECK(cudaMemcpy(got, dw, nw * sizeof(float), cudaMemcpyDeviceToHost));
  bad += check("W", got, rw, nw);
  CHECK(cudaMemcpy(got, db_, O * sizeof(float), cudaMemcpyDeviceToHost));
  bad += check("b", got, rb, O);

  float *bufs[] = {dx_in, dw, db_, dt, dz, dy, ddz, ddw, ddb, ddx};
  for (size_t k = 0; k < sizeof bufs / sizeof bufs[0]; k++) CHECK(cudaFree(bufs[k]));
  free(x);
  free(w);
  free(bias);
  free(tg);
  free(rw);
  free(rb);
  free(ry);
  free(rdz);
  free(rdw);
  free(rdb);
  free(rdx);
  free(got);
  return suite_finish(bad);
}
