// scan.cu -- block-level inclusive prefix sum (Hillis-Steele, double
// buffered in shared memory): out[i] = in[first of block] + ... + in[i].
// blockDim.x must be at most 512.
#define SCAN_MAX 512

__global__ void scan_inclusive(const int *in, int *out, int n) {
  __shared__ int buf[2][SCAN_MAX];
  int tid = threadIdx.x;
  int i = blockIdx.x * blockDim.x + tid;
  int src = 0;
  buf[0][tid] = (i < n) ? in[i] : 0;
  __syncthreads();
  for (int off = 1; off < blockDim.x; off <<= 1) {
    int v = buf[src][tid];
    if (tid >= off) v += buf[src][tid - off];
    buf[1 - src][tid] = v;
    src = 1 - src;
    __syncthreads();
  }
  if (i < n) out[i] = buf[src][tid];
}
