// Shared memory per kernel: each kernel's shared variables start at offset
// 0 of its own window (tests/test_emu_kernels.c, test_shared_windows).
// win_a's 20 bytes must not push win_b's array off its 16-byte alignment
// (win_b writes it as uint4, as Parboil mri-gridding's splitRearrange does);
// win_c1 and win_c2 share a file-scope counter through a function that is
// not inlined; win_dyn adds dynamic shared memory to a static array;
// win_resv writes the reserved shared memory cooperative groups uses.

__shared__ int shared_counter;

__global__ void win_a(unsigned *out) {
  __shared__ unsigned a[5];
  if (threadIdx.x < 5) a[threadIdx.x] = threadIdx.x * 7u;
  __syncthreads();
  out[threadIdx.x] = a[threadIdx.x % 5];
}

__global__ void win_b(unsigned *out) {
  __shared__ unsigned b[128];
  ((uint4 *)b)[threadIdx.x] = make_uint4(threadIdx.x, threadIdx.x + 100u, 7u, 9u);
  __syncthreads();
  out[threadIdx.x] = b[127 - threadIdx.x];
}

__device__ __noinline__ int bump(int v) { return atomicAdd(&shared_counter, v); }

__global__ void win_c1(int *out) {
  __shared__ int own[64];
  if (threadIdx.x == 0) shared_counter = 0;
  own[threadIdx.x] = -(int)threadIdx.x;
  __syncthreads();
  bump((int)threadIdx.x);
  __syncthreads();
  out[threadIdx.x] = own[threadIdx.x];
  if (threadIdx.x == 0) out[64] = shared_counter;
}

__global__ void win_c2(int *out) {
  __shared__ double mine[8];
  if (threadIdx.x == 0) shared_counter = 1000;
  if (threadIdx.x < 8) mine[threadIdx.x] = 0.5 * threadIdx.x;
  __syncthreads();
  bump(1);
  __syncthreads();
  if (threadIdx.x < 8) out[threadIdx.x] = (int)(4.0 * mine[threadIdx.x]);
  if (threadIdx.x == 0) out[8] = shared_counter;
}

__global__ void win_dyn(float *out) {
  __shared__ float st[3];
  extern __shared__ float dyn[];
  if (threadIdx.x < 3) st[threadIdx.x] = 1000.0f + threadIdx.x;
  dyn[threadIdx.x] = (float)threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = dyn[blockDim.x - 1 - threadIdx.x] + st[threadIdx.x % 3];
  if (threadIdx.x == 0) out[blockDim.x] = (float)((unsigned long long)dyn % 16);
}

__global__ void win_resv(unsigned *out) {
  __shared__ unsigned s[32];
  unsigned r0, r1, cap;
  asm volatile("mov.u32 %0, %%reserved_smem_offset_1;" : "=r"(r1));
  asm volatile("mov.u32 %0, %%reserved_smem_offset_begin;" : "=r"(r0));
  asm volatile("mov.u32 %0, %%reserved_smem_offset_cap;" : "=r"(cap));
  s[threadIdx.x] = threadIdx.x + 1;
  __syncthreads();
  asm volatile("st.shared.u32 [%0], %1;" ::"r"(r1 + 4 * threadIdx.x), "r"(0xdeadu));
  __syncthreads();
  out[threadIdx.x] = s[threadIdx.x];
  if (threadIdx.x == 0) { out[32] = r0; out[33] = r1; out[34] = cap; }
}
