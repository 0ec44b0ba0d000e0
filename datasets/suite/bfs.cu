// bfs.cu -- level-synchronous breadth-first search, one launch per level.
//
// usage: bfs NODES [BLOCK] [DEGREE]
//   NODES   vertices, 16 .. 2^24
//   BLOCK   threads per block, multiple of 32 in 32 .. 1024 (default 256)
//   DEGREE  mean out-degree, 1 .. 32 (default 4)
// Deterministic random directed graph (CSR): vertex v has 1 .. 2*DEGREE-1
// out-edges; 15 in 16 go to a vertex within +-256 of v (wrapping), the rest
// to a uniform random vertex, so the depth grows with NODES but stays modest.
// Each launch (one thread per vertex, grid ceil(NODES/BLOCK)) expands the
// vertices whose level equals the current one and labels unvisited
// neighbours with level+1 (racing writers all store the same value); the host
// reads a "changed" flag after each level.
// Launches per run: depth + 1 (the last level finds nothing new); the program
// prints the depth.  The source is vertex 0.
// Check: exact levels against a CPU queue BFS (-1 = unreachable).
#include "suite_util.h"

#define USAGE "bfs NODES [BLOCK] [DEGREE]"

__global__ void bfs_level(const int *rowptr, const int *adj, int *level, int n,
                          int cur, int *changed) {
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n || level[v] != cur) return;
  for (int e = rowptr[v]; e < rowptr[v + 1]; e++) {
    int u = adj[e];
    if (level[u] == -1) {
      level[u] = cur + 1;
      *changed = 1;
    }
  }
}

int main(int argc, char **argv) {
  if (argc < 2 || argc > 4) suite_usage(USAGE);
  int n = (int)suite_arg(argc, argv, 1, 0, 16, 1 << 24, USAGE);
  int block = (int)suite_arg(argc, argv, 2, 256, 32, 1024, USAGE);
  int deg = (int)suite_arg(argc, argv, 3, 4, 1, 32, USAGE);
  if (block % 32) suite_usage(USAGE);

  lcg_t g = {8675309u};
  int *rowptr = (int *)suite_malloc((size_t)(n + 1) * sizeof(int));
  rowptr[0] = 0;
  for (int v = 0; v < n; v++) rowptr[v + 1] = rowptr[v] + 1 + (int)lcg_below(&g, 2u * deg - 1);
  int m = rowptr[n];
  int *adj = (int *)suite_malloc((size_t)m * sizeof(int));
  for (int v = 0; v < n; v++)
    for (int e = rowptr[v]; e < rowptr[v + 1]; e++) {
      if (lcg_below(&g, 16) != 0) {
        long long u = (long long)v + (long long)lcg_below(&g, 513) - 256;
        adj[e] = (int)(((u % n) + n) % n);
      } else {
        adj[e] = (int)lcg_below(&g, (unsigned int)n);
      }
    }

  int *level = (int *)suite_malloc((size_t)n * sizeof(int));
  int *want = (int *)suite_malloc((size_t)n * sizeof(int));
  int *queue = (int *)suite_malloc((size_t)n * sizeof(int));
  for (int v = 0; v < n; v++) want[v] = level[v] = -1;
  level[0] = want[0] = 0;
  int qh = 0, qt = 0;
  queue[qt++] = 0;
  while (qh < qt) {
    int v = queue[qh++];
    for (int e = rowptr[v]; e < rowptr[v + 1]; e++)
      if (want[adj[e]] == -1) {
        want[adj[e]] = want[v] + 1;
        queue[qt++] = adj[e];
      }
  }

  int *drow, *dadj, *dlevel, *dchanged;
  CHECK(cudaMalloc(&drow, (size_t)(n + 1) * sizeof(int)));
  CHECK(cudaMalloc(&dadj, (size_t)m * sizeof(int)));
  CHECK(cudaMalloc(&dlevel, (size_t)n * sizeof(int)));
  CHECK(cudaMalloc(&dchanged, sizeof(int)));
  CHECK(cudaMemcpy(drow, rowptr, (size_t)(n + 1) * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dadj, adj, (size_t)m * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dlevel, level, (size_t)n * sizeof(int), cudaMemcpyHostToDevice));

  int grid = (n + block - 1) / block, cur = 0, changed = 1;
  while (changed) {
    CHECK(cudaMemset(dchanged, 0, sizeof(int)));
    bfs_level<<<grid, block>>>(drow, dadj, dlevel, n, cur, dchanged);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(&changed, dchanged, sizeof(int), cudaMemcpyDeviceToHost));
    cur++;
    if (cur > n) {  // cannot happen for a correct kernel; stops a runaway loop
      printf("more levels than vertices\n");
      break;
    }
  }
  CHECK(cudaMemcpy(level, dlevel, (size_t)n * sizeof(int), cudaMemcpyDeviceToHost));

  long long bad = cur > n ? 1 : 0;
  int depth = 0, reached = 0;
  for (int v = 0; v < n; v++) {
    if (want[v] > depth) depth = want[v];
    reached += want[v] >= 0;
    if (level[v] != want[v]) {
      if (bad < 5) printf("level[%d] = %d, want %d\n", v, level[v], want[v]);
      bad++;
    }
  }
  printf("bfs: nodes=%d edges=%d block=%d depth=%d reached=%d launches=%d\n", n, m,
         block, depth, reached, cur);
  CHECK(cudaFree(drow));
  CHECK(cudaFree(dadj));
  CHECK(cudaFree(dlevel));
  CHECK(cudaFree(dchanged));
  free(rowptr);
  free(adj);
  free(level);
  free(want);
  free(queue);
  return suite_finish(bad);
}
