// matmul_tiled.cu -- C = A * B for row-major n x n matrices, 16x16 tiles
// staged in shared memory (launch with block 16x16, grid ceil(n/16)^2).
// Out-of-range tile elements load as zero, so any n works.
#define TILE 16

__global__ void matmul_tiled(const float *A, const float *B, float *C, int n) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * TILE + ty;
  int col = blockIdx.x * TILE + tx;
  float acc = 0.0f;
  for (int t = 0; t < (n + TILE - 1) / TILE; t++) {
    int ac = t * TILE + tx, br = t * TILE + ty;
    As[ty][tx] = (row < n && ac < n) ? A[row * n + ac] : 0.0f;
    Bs[ty][tx] = (br < n && col < n) ? B[br * n + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TILE; k++) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  if (row < n && col < n) C[row * n + col] = acc;
}
