// races.cu -- data races for the emulator's race check (--racecheck), each
// beside the same kernel with the bug fixed.
//   chunk_store: Parboil histo's copyMemory: CTA c stores `per` words from
//     c * stride; with stride < per each CTA's tail lands on the next
//     CTA's head (a write-write race between CTAs; the survivor depends on
//     the order the CTAs store in).  stride == per: disjoint, no race.
//   neighbour_read: CTA c writes out[c * 64 + t] and thread 0 also reads
//     out[(c + 1) * 64], which CTA c + 1 writes in the same launch (a
//     read-write race between CTAs).
//   scan_nosync / scan_sync: Rodinia heartwall's second cumulative sum:
//     warp 0 updates its half of a shared row, warp 1 adds warp 0's last
//     element; without the __syncthreads between them warp 1 reads it
//     before (on a GPU: maybe before, maybe after) warp 0 wrote it.
//   atomic_count: every thread of every CTA adds 1 to one word with
//     atomicAdd: atomics are not races.
//   warp_local: each warp writes shared words and reads its neighbour
//     lane's word with no barrier, and each CTA reads back the global word
//     it wrote: the same warp, the same CTA -- no race.
//   volatile_flag: CTA c stores a flag with a volatile store that CTA c + 1
//     reads with a volatile load: strong accesses, not data races.
//   byte_owners: thread 0 of CTA c (of 4) stores byte c of word 0 and reads
//     byte 8 + c of word 2: CTAs share words, never bytes -- no race; with
//     clash, CTA 1 also stores byte 0 (CTA 0's: write-write) and CTA 3
//     byte 10 (which CTA 2 reads: read-write), one racing word each.
//   last_block: a last-block sum ordered by __threadfence and an atomic
//     ticket (CUDA's threadFenceReduction): correct; the check cannot
//     follow the fence, and says global memory was not checked.
__global__ void chunk_store(float *out, int per, int stride) {
  for (int i = threadIdx.x; i < per; i += blockDim.x)
    out[blockIdx.x * stride + i] = (float)(blockIdx.x * 1000 + i);
}

__global__ void neighbour_read(float *out, float *seen) {
  int t = threadIdx.x, c = blockIdx.x;
  out[c * 64 + t] = (float)(c * 64 + t);
  if (t == 0 && c + 1 < gridDim.x) seen[c] = out[(c + 1) * 64];
}

__global__ void scan_nosync(const float *in, float *out) {
  __shared__ float row[64];
  int t = threadIdx.x;
  row[t] = in[blockIdx.x * 64 + t];
  __syncthreads();
  if (t < 32) row[t] = row[t] * 2.0f;
  // the missing __syncthreads()
  if (t >= 32) row[t] += row[31];
  __syncthreads();
  out[blockIdx.x * 64 + t] = row[t];
}

__global__ void scan_sync(const float *in, float *out) {
  __shared__ float row[64];
  int t = threadIdx.x;
  row[t] = in[blockIdx.x * 64 + t];
  __syncthreads();
  if (t < 32) row[t] = row[t] * 2.0f;
  __syncthreads();
  if (t >= 32) row[t] += row[31];
  __syncthreads();
  out[blockIdx.x * 64 + t] = row[t];
}

__global__ void atomic_count(unsigned *count) { atomicAdd(count, 1u); }

__global__ void warp_local(float *out) {
  __shared__ float s[128];
  int t = threadIdx.x, g = blockIdx.x * blockDim.x + t;
  s[t] = (float)g;
  __syncwarp();
  float n = s[t ^ 1];
  out[g] = n;
  out[g] += 1.0f;
}

__global__ void volatile_flag(volatile unsigned *flag, unsigned *seen) {
  int c = blockIdx.x;
  if (threadIdx.x == 0) {
    flag[c] = c + 1;
    if (c > 0) seen[c] = flag[c - 1];
  }
}

__global__ void byte_owners(unsigned char *b, unsigned char *seen, int clash) {
  if (threadIdx.x) return;
  int c = blockIdx.x;
  b[c] = (unsigned char)(c + 1);
  seen[c] = b[8 + c];
  if (clash && c == 1) b[0] = 9;
  if (clash && c == 3) b[10] = 7;
}

__device__ unsigned ticket;

__global__ void last_block(const float *in, float *part, float *sum) {
  __shared__ bool last;
  if (threadIdx.x == 0) {
    part[blockIdx.x] = in[blockIdx.x];
    __threadfence();
    last = atomicInc(&ticket, gridDim.x) == gridDim.x - 1;
  }
  __syncthreads();
  if (last && threadIdx.x == 0) {
    float s = 0;
    for (int i = 0; i < gridDim.x; i++) s += part[i];
    *sum = s;
  }
}
