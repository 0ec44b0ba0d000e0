// transpose.cu -- matrix transpose, naive and through a padded shared tile.
//
// usage: transpose ROWS COLS [TILE] [ITERS]
//   ROWS, COLS  matrix shape (float, row-major), 1 .. 32768 each, ROWS*COLS
//               at most 2^28
//   TILE        tile edge 8, 16 or 32 (default 32); blocks are TILE x 8
//               threads, each thread handles TILE/8 rows of the tile
//   ITERS       repetitions of the pair of launches (default 2), 1 .. 1000
// Launches per run: 2 * ITERS, grid ceil(COLS/TILE) x ceil(ROWS/TILE), in the
// order naive, shared, naive, shared, ...
//   transpose_naive:  coalesced reads, strided (uncoalesced) writes;
//   transpose_shared: tile staged in shared memory with one padding column,
//                     so both global reads and writes coalesce and the column
//                     reads of the tile are free of bank conflicts.
// Check: exact (pure data movement).
#include "suite_util.h"

#define USAGE "transpose ROWS COLS [TILE] [ITERS]"
#define BLOCK_ROWS 8

// in is rows x cols, out is cols x rows.
__global__ void transpose_naive(const float *in, float *out, int rows, int cols) {
  int tile = blockDim.x;
  int x = blockIdx.x * tile + threadIdx.x;
  int y0 = blockIdx.y * tile + threadIdx.y;
  if (x >= cols) return;
  for (int k = 0; k < tile; k += BLOCK_ROWS) {
    int y = y0 + k;
    if (y < rows) out[(size_t)x * rows + y] = in[(size_t)y * cols + x];
  }
}

__global__ void transpose_shared(const float *in, float *out, int rows, int cols) {
  extern __shared__ float t[];  // tile x (tile + 1)
  int tile = blockDim.x, pitch = tile + 1;
  int x = blockIdx.x * tile + threadIdx.x;
  int y0 = blockIdx.y * tile + threadIdx.y;
  for (int k = 0; k < tile; k += BLOCK_ROWS) {
    int y = y0 + k;
    if (x < cols && y < rows) t[(threadIdx.y + k) * pitch + threadIdx.x] = in[(size_t)y * cols + x];
  }
  __syncthreads();
  int ox = blockIdx.y * tile + threadIdx.x;   // column of out = row of in
  int oy0 = blockIdx.x * tile + threadIdx.y;  // row of out = column of in
  for (int k = 0; k < tile; k += BLOCK_ROWS) {
    int oy = oy0 + k;
    if (ox < rows && oy < cols) out[(size_t)oy * rows + ox] = t[threadIdx.x * pitch + threadIdx.y + k];
  }
}

int main(int argc, char **argv) {
  if (argc < 3 || argc > 5) suite_usage(USAGE);
  int rows = (int)suite_arg(argc, argv, 1, 0, 1, 32768, USAGE);
  int cols = (int)suite_arg(argc, argv, 2, 0, 1, 32768, USAGE);
  int tile = (int)suite_arg(argc, argv, 3, 32, 8, 32, USAGE);
  int iters = (int)suite_arg(argc, argv, 4, 2, 1, 1000, USAGE);
  if ((tile != 8 && tile != 16 && tile != 32) || (long long)rows * cols > (1LL << 28))
    suite_usage(USAGE);

  size_t count = (size_t)rows * cols, bytes = count * sizeof(float);
  float *h = (float *)suite_malloc(bytes), *got = (float *)suite_malloc(bytes);
  lcg_t g = {60221u};
  for (size_t i = 0; i < count; i++) h[i] = (float)lcg_next(&g) * (1.0f / 65536.0f);
  float *din, *dout[2];
  CHECK(cudaMalloc(&din, bytes));
  CHECK(cudaMalloc(&dout[0], bytes));
  CHECK(cudaMalloc(&dout[1], bytes));
  CHECK(cudaMemcpy(din, h, bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemset(dout[0], 0, bytes));
  CHECK(cudaMemset(dout[1], 0, bytes));
  dim3 blk(tile, BLOCK_ROWS), grd((cols + tile - 1) / tile, (rows + tile - 1) / tile);
  size_t shm = (size_t)tile * (tile + 1) * sizeof(float);
  for (int it = 0; it < iters; it++) {
    transpose_naive<<<grd, blk>>>(din, dout[0], rows, cols);
    CHECK_LAUNCH();
    transpose_shared<<<grd, blk, shm>>>(din, dout[1], rows, cols);
    CHECK_LAUNCH();
  }
  CHECK(cudaDeviceSynchronize());

  long long bad = 0;
  for (int k = 0; k < 2; k++) {
    CHECK(cudaMemcpy(got, dout[k], bytes, cudaMemcpyDeviceToHost));
    for (int y = 0; y < rows; y++)
      for (int x = 0; x < cols; x++)
        if (got[(size_t)x * rows + y] != h[(size_t)y * cols + x]) {
          if (bad < 5) printf("%s: out[%d][%d] wrong\n", k ? "shared" : "naive", x, y);
          bad++;
        }
    CHECK(cudaFree(dout[k]));
  }
  printf("transpose: %dx%d tile=%d iters=%d\n", rows, cols, tile, iters);
  CHECK(cudaFree(din));
  free(h);
  free(got);
  return suite_finish(bad);
}
