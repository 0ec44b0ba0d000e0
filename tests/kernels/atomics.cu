// atomics.cu -- every integer atomic on global and shared memory, plus float
// and double atomicAdd.  Each block runs the shared-memory variants on its
// own slots, then folds them into global memory.
//   g[0] add, g[1] min, g[2] max, g[3] inc (wraps at 1023), g[4] dec,
//   g[5] max via a CAS loop, g[6] exch, g[7] and, g[8] or, g[9] xor
// Final values do not depend on the order threads run in: every operation
// is commutative, the CAS loop computes a max, exch stores the same value
// from every thread, and the float/double sums are exact for integer inputs
// whose sum stays below 2^24.
__device__ __forceinline__ void cas_max(unsigned *p, unsigned x) {
  unsigned old = *p, seen;
  do {
    seen = old;
    old = atomicCAS(p, seen, seen > x ? seen : x);
  } while (old != seen);
}

__global__ void atomics_global(unsigned *g, float *fsum, double *dsum,
                               const int *v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned x = (unsigned)v[i];
  atomicAdd(&g[0], x);
  atomicMin((int *)&g[1], v[i]);
  atomicMax((int *)&g[2], v[i]);
  atomicInc(&g[3], 1023u);
  atomicDec(&g[4], 1023u);
  cas_max(&g[5], x);
  atomicExch(&g[6], (unsigned)n);
  atomicAnd(&g[7], ~(1u << (i & 31)));
  atomicOr(&g[8], 1u << (i & 31));
  atomicXor(&g[9], x);
  atomicAdd(fsum, (float)v[i]);
  atomicAdd(dsum, (double)v[i]);
}

__global__ void atomics_shared(unsigned *g, float *fsum, double *dsum,
                               const int *v, int n) {
  __shared__ unsigned s[10];
  __shared__ float sf;
  __shared__ double sd;
  if (threadIdx.x < 10) s[threadIdx.x] = (threadIdx.x == 1) ? 0x7fffffffu : 0u;
  if (threadIdx.x == 0) { sf = 0.0f; sd = 0.0; }
  __syncthreads();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    unsigned x = (unsigned)v[i];
    atomicAdd(&s[0], x);
    atomicMin((int *)&s[1], v[i]);
    atomicMax((int *)&s[2], v[i]);
    atomicInc(&s[3], 1023u);
    atomicDec(&s[4], 1023u);
    cas_max(&s[5], x);
    atomicExch(&s[6], (unsigned)n);
    atomicAnd(&s[7], x);
    atomicOr(&s[8], x);
    atomicXor(&s[9], x);
    atomicAdd(&sf, (float)v[i]);
    atomicAdd(&sd, (double)v[i]);
  }
  __syncthreads();
  if (threadIdx.x < 10) atomicAdd(&g[threadIdx.x], s[threadIdx.x]);
  if (threadIdx.x == 0) {
    atomicAdd(fsum, sf);
    atomicAdd(dsum, sd);
  }
}
