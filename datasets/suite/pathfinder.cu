// pathfinder.cu -- dynamic programming over the rows of a grid: the cheapest
// top-to-bottom path where each step moves down, down-left or down-right.
//
// usage: pathfinder COLS ROWS [BLOCK] [HEIGHT]
//   COLS    grid width, 1 .. 2^24
//   ROWS    grid height, 2 .. 100000, COLS*ROWS at most 2^28
//   BLOCK   threads per block, multiple of 32 in 64 .. 1024 (default 256)
//   HEIGHT  rows advanced per launch, 1 .. 32 with 2*HEIGHT < BLOCK (default 8)
// cost[0][c] = wall[0][c]; cost[r][c] = wall[r][c] + min(cost[r-1][c-1..c+1])
// (neighbours outside the grid ignored).  Each launch advances HEIGHT rows in
// shared memory: a block loads BLOCK consecutive columns of the previous cost
// row, of which the middle BLOCK - 2*HEIGHT are still exact after HEIGHT steps
// (the halo shrinks by one column per side per row), and writes those.
// Launches per run: ceil((ROWS-1)/HEIGHT), grid ceil(COLS/(BLOCK-2*HEIGHT)).
// Check: exact integers against the row-by-row CPU recurrence.
#include "suite_util.h"

#define USAGE "pathfinder COLS ROWS [BLOCK] [HEIGHT]"

__global__ void advance(const int *wall, const int *src, int *dst, int cols,
                        int start_row, int steps, int halo) {
  extern __shared__ int sm[];
  int *prev = sm, *cur = sm + blockDim.x;
  int tx = threadIdx.x, width = blockDim.x - 2 * halo;
  int x = blockIdx.x * width - halo + tx;
  bool inside = x >= 0 && x < cols;
  prev[tx] = inside ? src[x] : 0;
  __syncthreads();
  for (int k = 1; k <= steps; k++) {
    if (inside && tx >= k && tx < (int)blockDim.x - k) {
      int best = prev[tx];
      if (x > 0) best = min(best, prev[tx - 1]);
      if (x < cols - 1) best = min(best, prev[tx + 1]);
      cur[tx] = wall[(size_t)(start_row + k) * cols + x] + best;
    }
    __syncthreads();
    int *t = prev;  // every thread swaps its own copy of the pointers
    prev = cur;
    cur = t;
  }
  if (inside && tx >= halo && tx < halo + width) dst[x] = prev[tx];
}

int main(int argc, char **argv) {
  if (argc < 3 || argc > 5) suite_usage(USAGE);
  int cols = (int)suite_arg(argc, argv, 1, 0, 1, 1 << 24, USAGE);
  int rows = (int)suite_arg(argc, argv, 2, 0, 2, 100000, USAGE);
  int block = (int)suite_arg(argc, argv, 3, 256, 64, 1024, USAGE);
  int height = (int)suite_arg(argc, argv, 4, 8, 1, 32, USAGE);
  if (block % 32 || 2 * height >= block || (long long)cols * rows > (1LL << 28)) suite_usage(USAGE);

  size_t cells = (size_t)cols * rows;
  int *wall = (int *)suite_malloc(cells * sizeof(int));
  lcg_t g = {24601u};
  for (size_t i = 0; i < cells; i++) wall[i] = (int)lcg_below(&g, 10);
  int *dwall, *dbuf[2];
  CHECK(cudaMalloc(&dwall, cells * sizeof(int)));
  CHECK(cudaMalloc(&dbuf[0], (size_t)cols * sizeof(int)));
  CHECK(cudaMalloc(&dbuf[1], (size_t)cols * sizeof(int)));
  CHECK(cudaMemcpy(dwall, wall, cells * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dbuf[0], wall, (size_t)cols * sizeof(int), cudaMemcpyHostToDevice));

  int width = block - 2 * height, grid = (cols + width - 1) / width, which = 0, launches = 0;
  for (int r = 0; r < rows - 1; r += height) {
    int steps = rows - 1 - r < height ? rows - 1 - r : height;
    advance<<<grid, block, 2 * block * sizeof(int)>>>(dwall, dbuf[which], dbuf[which ^ 1], cols, r, steps, height);
    CHECK_LAUNCH();
    which ^= 1;
    launches++;
  }
  CHECK(cudaDeviceSynchronize());
  int *got = (int *)suite_malloc((size_t)cols * sizeof(int));
  CHECK(cudaMemcpy(got, dbuf[which], (size_t)cols * sizeof(int), cudaMemcpyDeviceToHost));

  int *prev = (int *)suite_malloc((size_t)cols * sizeof(int)), *cur = (int *)suite_malloc((size_t)cols * sizeof(int));
  memcpy(prev, wall, (size_t)cols * sizeof(int));
  for (int r = 1; r < rows; r++) {
    for (int c = 0; c < cols; c++) {
      int best = prev[c];
      if (c > 0 && prev[c - 1] < best) best = prev[c - 1];
      if (c < cols - 1 && prev[c + 1] < best) best = prev[c + 1];
      cur[c] = wall[(size_t)r * cols + c] + best;
    }
    int *t = prev;
    prev = cur;
    cur = t;
  }
  long long bad = 0;
  int best = prev[0];
  for (int c = 0; c < cols; c++) {
    if (prev[c] < best) best = prev[c];
    if (got[c] != prev[c]) {
      if (bad < 5) printf("cost[%d] = %d, want %d\n", c, got[c], prev[c]);
      bad++;
    }
  }
  printf("pathfinder: cols=%d rows=%d block=%d height=%d launches=%d best=%d\n", cols, rows, block,
         height, launches, best);
  CHECK(cudaFree(dwall));
  CHECK(cudaFree(dbuf[0]));
  CHECK(cudaFree(dbuf[1]));
  free(wall);
  free(got);
  free(prev);
  free(cur);
  return suite_finish(bad);
}
