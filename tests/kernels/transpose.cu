// transpose.cu -- out = in^T for a rows x cols row-major matrix.  The naive
// kernel's stores are strided (uncoalesced); the tiled one goes through a
// 32x33 shared tile, the extra column keeping column reads free of bank
// conflicts.  Launch with block 32x8 and grid ceil(cols/32) x ceil(rows/32).
#define TDIM 32
#define TROWS 8

__global__ void transpose_naive(const float *in, float *out, int rows,
                                int cols) {
  int x = blockIdx.x * TDIM + threadIdx.x;
  for (int j = 0; j < TDIM; j += TROWS) {
    int y = blockIdx.y * TDIM + threadIdx.y + j;
    if (x < cols && y < rows) out[x * rows + y] = in[y * cols + x];
  }
}

__global__ void transpose_shared(const float *in, float *out, int rows,
                                 int cols) {
  __shared__ float tile[TDIM][TDIM + 1];
  int x = blockIdx.x * TDIM + threadIdx.x;
  for (int j = 0; j < TDIM; j += TROWS) {
    int y = blockIdx.y * TDIM + threadIdx.y + j;
    if (x < cols && y < rows) tile[threadIdx.y + j][threadIdx.x] = in[y * cols + x];
  }
  __syncthreads();
  x = blockIdx.y * TDIM + threadIdx.x;
  for (int j = 0; j < TDIM; j += TROWS) {
    int y = blockIdx.x * TDIM + threadIdx.y + j;
    if (x < rows && y < cols) out[y * rows + x] = tile[threadIdx.x][threadIdx.y + j];
  }
}
