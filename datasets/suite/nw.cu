// nw.cu -- Needleman-Wunsch global alignment scores, tiled wavefront: one
// launch per anti-diagonal of tiles.
//
// usage: nw N [TILE] [PENALTY]
//   N        length of both sequences, multiple of TILE, TILE .. 16384
//   TILE     tile edge = threads per block: 16, 32 or 64 (default 32)
//   PENALTY  gap penalty, 0 .. 100 (default 10)
// F is the (N+1) x (N+1) score matrix: F[i][0] = -i*P, F[0][j] = -j*P,
// F[i][j] = max(F[i-1][j-1] + S(a_i, b_j), F[i-1][j] - P, F[i][j-1] - P) with
// a 16-letter alphabet and a deterministic random substitution table S in
// [-4, 5] held in __constant__ memory.  With T = N / TILE tiles per side, launch
// d = 0 .. 2T-2 processes the tiles (ti, tj) with ti + tj = d; each block
// stages its tile's top row and left column in shared memory, sweeps the
// tile's own 2*TILE-1 inner anti-diagonals (thread r handles row r) with a
// barrier between them, and writes the tile back.
// Launches per run: 2 * N / TILE - 1 (grid 1, 2, .., T, .., 2, 1 blocks).
// Check: exact integers against the row-by-row CPU recurrence.
#include "suite_util.h"

#define USAGE "nw N [TILE] [PENALTY]"
#define ALPHA 16

__constant__ int c_sub[ALPHA * ALPHA];

__global__ void nw_tiles(int *F, const unsigned char *a, const unsigned char *b, int n,
                         int diag, int first_ti, int penalty) {
  extern __shared__ int s[];  // (tile+1) x (tile+1) scores, then tile chars of a and b
  int tile = blockDim.x, pitch = tile + 1, r = threadIdx.x;
  int ti = first_ti + blockIdx.x, tj = diag - ti;
  int row0 = ti * tile, col0 = tj * tile;  // F indices of the tile's top-left border cell
  size_t ld = (size_t)n + 1;
  int *sa = s + pitch * pitch, *sb = sa + tile;
  s[r + 1] = F[(size_t)row0 * ld + col0 + r + 1];          // top border row
  s[(r + 1) * pitch] = F[(size_t)(row0 + r + 1) * ld + col0]; // left border column
  if (r == 0) s[0] = F[(size_t)row0 * ld + col0];
  sa[r] = a[row0 + r];
  sb[r] = b[col0 + r];
  __syncthreads();
  for (int m = 0; m < 2 * tile - 1; m++) {
    int c = m - r;
    if (c >= 0 && c < tile) {
      int up_left = s[r * pitch + c] + c_sub[sa[r] * ALPHA + sb[c]];
      int up = s[r * pitch + c + 1] - penalty;
      int left = s[(r + 1) * pitch + c] - penalty;
      s[(r + 1) * pitch + c + 1] = max(up_left, max(up, left));
    }
    __syncthreads();
  }
  for (int c = 0; c < tile; c++)  // row r of the tile, written by thread r
    F[(size_t)(row0 + r + 1) * ld + col0 + c + 1] = s[(r + 1) * pitch + c + 1];
}

int main(int argc, char **argv) {
  if (argc < 2 || argc > 4) suite_usage(USAGE);
  int n = (int)suite_arg(argc, argv, 1, 0, 16, 16384, USAGE);
  int tile = (int)suite_arg(argc, argv, 2, 32, 16, 64, USAGE);
  int pen = (int)suite_arg(argc, argv, 3, 10, 0, 100, USAGE);
  if ((tile != 16 && tile != 32 && tile != 64) || n % tile) suite_usage(USAGE);

  lcg_t g = {17761u};
  int sub[ALPHA * ALPHA];
  for (int i = 0; i < ALPHA * ALPHA; i++) sub[i] = (int)lcg_below(&g, 10) - 4;
  unsigned char *a = (unsigned char *)suite_malloc((size_t)n), *b = (unsigned char *)suite_malloc((size_t)n);
  for (int i = 0; i < n; i++) {
    a[i] = (unsigned char)lcg_below(&g, ALPHA);
    b[i] = (unsigned char)lcg_below(&g, ALPHA);
  }
  size_t ld = (size_t)n + 1, cells = ld * ld;
  int *F = (int *)suite_malloc(cells * sizeof(int));
  memset(F, 0, cells * sizeof(int));
  for (int i = 0; i <= n; i++) {
    F[(size_t)i * ld] = -i * pen;
    F[i] = -i * pen;
  }
  int *dF;
  unsigned char *da, *db;
  CHECK(cudaMalloc(&dF, cells * sizeof(int)));
  CHECK(cudaMalloc(&da, (size_t)n));
  CHECK(cudaMalloc(&db, (size_t)n));
  CHECK(cudaMemcpy(dF, F, cells * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(da, a, (size_t)n, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(db, b, (size_t)n, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpyToSymbol(c_sub, sub, sizeof sub));

  int t = n / tile, launches = 0;
  size_t shm = ((size_t)(tile + 1) * (tile + 1) + 2 * tile) * sizeof(int);
  for (int d = 0; d <= 2 * t - 2; d++) {
    int lo = d - (t - 1) > 0 ? d - (t - 1) : 0, hi = d < t - 1 ? d : t - 1;
    nw_tiles<<<hi - lo + 1, tile, shm>>>(dF, da, db, n, d, lo, pen);
    CHECK_LAUNCH();
    launches++;
  }
  CHECK(cudaDeviceSynchronize());
  int *got = (int *)suite_malloc(cells * sizeof(int));
  CHECK(cudaMemcpy(got, dF, cells * sizeof(int), cudaMemcpyDeviceToHost));

  for (int i = 1; i <= n; i++)
    for (int j = 1; j <= n; j++) {
      int v = F[(size_t)(i - 1) * ld + j - 1] + sub[a[i - 1] * ALPHA + b[j - 1]];
      int up = F[(size_t)(i - 1) * ld + j] - pen, left = F[(size_t)i * ld + j - 1] - pen;
      if (up > v) v = up;
      if (left > v) v = left;
      F[(size_t)i * ld + j] = v;
    }
  long long bad = 0;
  for (size_t k = 0; k < cells; k++)
    if (got[k] != F[k]) {
      if (bad < 5) printf("F[%zu][%zu] = %d, want %d\n", k / ld, k % ld, got[k], F[k]);
      bad++;
    }
  printf("nw: n=%d tile=%d penalty=%d launches=%d score=%d\n", n, tile, pen, launches, F[cells - 1]);
  CHECK(cudaFree(dF));
  CHECK(cudaFree(da));
  CHECK(cudaFree(db));
  free(a);
  free(b);
  free(F);
  free(got);
  return suite_finish(bad);
}
