// vote_match.cu -- warp-wide votes and matches (vote.sync, match.any.sync,
// activemask) and bit intrinsics (popc, clz, brev, shf.l).  One output word
// per thread per result.
__global__ void vote_match(const int *in, unsigned *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = i < n ? in[i] : 0;
  unsigned full = 0xffffffffu;
  unsigned ballot = __ballot_sync(full, v > 0);
  int all = __all_sync(full, v != 0);
  int any = __any_sync(full, v < 0);
  unsigned active = __activemask();
  unsigned same = __match_any_sync(full, v & 7);
  if (i >= n) return;
  unsigned *o = out + 8 * i;
  o[0] = ballot;
  o[1] = (unsigned)all | ((unsigned)any << 1);
  o[2] = active;
  o[3] = same;
  o[4] = (unsigned)__popc(ballot);
  o[5] = (unsigned)__clz(v);
  o[6] = __brev((unsigned)v);
  o[7] = __funnelshift_l((unsigned)v, ballot, i & 31);
}
