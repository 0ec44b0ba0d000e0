// spmv_csr.cu -- sparse matrix-vector product y = A x, CSR storage, two kernels.
//
// usage: spmv_csr ROWS [BLOCK]
//   ROWS   rows = columns of A, 32 .. 2^24
//   BLOCK  threads per block, multiple of 32 in 32 .. 1024 (default 256)
// A has deterministic random sparsity with varying row lengths: most rows hold
// 1..15 entries, one row in 32 holds 32..255 (capped at ROWS); columns uniform.
// Launches per run: 2 --
//   1. spmv_scalar: one thread per row, grid ceil(ROWS/BLOCK) (load imbalance,
//      uncoalesced reads of the row's entries);
//   2. spmv_vector: one warp per row, lanes stride through the row, shuffle
//      reduction, grid ceil(ROWS*32/BLOCK).
// Check: per row, |y - y_ref| <= (len + 2) * eps_f32 * sum|a_ij x_j| + 1e-30,
// the standard bound for a float dot product of len terms in any summation
// order (gamma_n); y_ref is computed in double.
#include "suite_util.h"
#include <math.h>

#define USAGE "spmv_csr ROWS [BLOCK]"

__global__ void spmv_scalar(const int *rowptr, const int *col, const float *val,
                            const float *x, float *y, int rows) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  float s = 0.0f;
  for (int e = rowptr[r]; e < rowptr[r + 1]; e++) s += val[e] * x[col[e]];
  y[r] = s;
}

__global__ void spmv_vector(const int *rowptr, const int *col, const float *val,
                            const float *x, float *y, int rows) {
  long long gt = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  int r = (int)(gt >> 5), lane = threadIdx.x & 31;
  if (r >= rows) return;  // whole warps leave together (blockDim % 32 == 0)
  float s = 0.0f;
  for (int e = rowptr[r] + lane; e < rowptr[r + 1]; e += 32) s += val[e] * x[col[e]];
  for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off);
  if (lane == 0) y[r] = s;
}

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3) suite_usage(USAGE);
  int rows = (int)suite_arg(argc, argv, 1, 0, 32, 1 << 24, USAGE);
  int block = (int)suite_arg(argc, argv, 2, 256, 32, 1024, USAGE);
  if (block % 32) suite_usage(USAGE);

  lcg_t g = {5150u};
  int *rowptr = (int *)suite_malloc((size_t)(rows + 1) * sizeof(int));
  rowptr[0] = 0;
  for (int r = 0; r < rows; r++) {
    int len = (lcg_next(&g) >> 27) == 0 ? 32 + (int)lcg_below(&g, 224) : 1 + (int)lcg_below(&g, 15);
    if (len > rows) len = rows;
    rowptr[r + 1] = rowptr[r] + len;
  }
  int nnz = rowptr[rows];
  int *col = (int *)suite_malloc((size_t)nnz * sizeof(int));
  float *val = (float *)suite_malloc((size_t)nnz * sizeof(float));
  float *x = (float *)suite_malloc((size_t)rows * sizeof(float));
  float *y = (float *)suite_malloc((size_t)rows * sizeof(float));
  for (int e = 0; e < nnz; e++) {
    col[e] = (int)lcg_below(&g, (unsigned int)rows);
    val[e] = 2.0f * lcg_unit(&g) - 1.0f;
  }
  for (int i = 0; i < rows; i++) x[i] = 2.0f * lcg_unit(&g) - 1.0f;

  int *drow, *dcol;
  float *dval, *dx, *dy[2];
  CHECK(cudaMalloc(&drow, (size_t)(rows + 1) * sizeof(int)));
  CHECK(cudaMalloc(&dcol, (size_t)nnz * sizeof(int)));
  CHECK(cudaMalloc(&dval, (size_t)nnz * sizeof(float)));
  CHECK(cudaMalloc(&dx, (size_t)rows * sizeof(float)));
  CHECK(cudaMalloc(&dy[0], (size_t)rows * sizeof(float)));
  CHECK(cudaMalloc(&dy[1], (size_t)rows * sizeof(float)));
  CHECK(cudaMemcpy(drow, rowptr, (size_t)(rows + 1) * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dcol, col, (size_t)nnz * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dval, val, (size_t)nnz * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dx, x, (size_t)rows * sizeof(float), cudaMemcpyHostToDevice));

  spmv_scalar<<<(rows + block - 1) / block, block>>>(drow, dcol, dval, dx, dy[0], rows);
  CHECK_LAUNCH();
  long long vthreads = (long long)rows * 32;
  spmv_vector<<<(int)((vthreads + block - 1) / block), block>>>(drow, dcol, dval, dx, dy[1], rows);
  CHECK_LAUNCH();
  CHECK(cudaDeviceSynchronize());

  long long bad = 0;
  for (int k = 0; k < 2; k++) {
    CHECK(cudaMemcpy(y, dy[k], (size_t)rows * sizeof(float), cudaMemcpyDeviceToHost));
    for (int r = 0; r < rows; r++) {
      double s = 0.0, abs_s = 0.0;
      for (int e = rowptr[r]; e < rowptr[r + 1]; e++) {
        double t = (double)val[e] * (double)x[col[e]];
        s += t;
        abs_s += fabs(t);
      }
      double tol = (rowptr[r + 1] - rowptr[r] + 2) * 5.9604644775390625e-08 * abs_s + 1e-30;
      if (!(fabs((double)y[r] - s) <= tol)) {
        if (bad < 5) printf("%s y[%d] = %.9g, want %.9g (tol %.3g)\n", k ? "vector" : "scalar", r, y[r], s, tol);
        bad++;
      }
    }
  }
  printf("spmv_csr: rows=%d nnz=%d block=%d\n", rows, nnz, block);
  CHECK(cudaFree(drow));
  CHECK(cudaFree(dcol));
  CHECK(cudaFree(dval));
  CHECK(cudaFree(dx));
  CHECK(cudaFree(dy[0]));
  CHECK(cudaFree(dy[1]));
  free(rowptr);
  free(col);
  free(val);
  free(x);
  free(y);
  return suite_finish(bad);
}
