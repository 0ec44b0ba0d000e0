// packed_histo.cu -- a histogram whose per-CTA counts are bytes packed four
// to a shared word, the scheme of Parboil's histo, and stores of single
// bytes and 16-bit values whose neighbours other CTAs write.
//   packed_count: values below PACK_BINS are counted by each CTA in bytes
//     of shared words (atomicAdd of 1 << 8 * (v % 4)); a byte that wraps
//     adds 256 to the bin's global overflow word and -1 to the next bin's
//     for the carry it passed on (repeated while the carries wrap bytes);
//     values from PACK_BINS on are counted in 16-bit halves of global
//     words (the word read, then atomicAdd of 1 << 16 * (bin % 2) while
//     the half is below HALF_CAP); each CTA copies its shared words to its
//     own slice of sub.
//   packed_final: four bins a thread, the CTAs' bytes plus the overflow
//     words (read as a uint4 and cleared) or the halves (a ushort4, read
//     and cleared), saturated at 255, stored as a uchar4.
//   byte_scatter: element i = t * gridDim.x + c is stored by thread t of
//     CTA c (a byte and a 16-bit value): every element's neighbours belong
//     to other CTAs.
// No result depends on the order CTAs run in: every global update is an
// atomic addition, each CTA writes its own slice, HALF_CAP is never reached.
#define PACK_BINS 1024
#define WIDE_BINS 1024
#define HALF_CAP 0xFFFFu

__global__ void packed_count(const unsigned *v, int n, unsigned *sub,
                             unsigned *ovf, unsigned *wide) {
  __shared__ unsigned sh[PACK_BINS / 4];
  for (int i = threadIdx.x; i < PACK_BINS / 4; i += blockDim.x) sh[i] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += gridDim.x * blockDim.x) {
    unsigned x = v[i];
    if (x < PACK_BINS) {
      unsigned off = (x % 4) * 8;
      unsigned prev = atomicAdd(&sh[x / 4], 1u << off);
      unsigned bin = x;
      while (((prev >> off) & 0xFFu) == 0xFFu) {  // this byte wrapped
        atomicAdd(&ovf[bin], 256u);
        if (off == 24) break;                     // its carry left the word
        atomicAdd(&ovf[bin + 1], 0xFFFFFFFFu);    // the next byte got +1
        off += 8;
        bin++;
      }
    } else {
      unsigned b = x - PACK_BINS, sh16 = (b % 2) * 16;
      unsigned old = wide[b / 2];
      if (((old >> sh16) & 0xFFFFu) < HALF_CAP) atomicAdd(&wide[b / 2], 1u << sh16);
    }
  }
  __syncthreads();
  for (int i = threadIdx.x; i < PACK_BINS / 4; i += blockDim.x)
    sub[blockIdx.x * (PACK_BINS / 4) + i] = sh[i];
}

__global__ void packed_final(const unsigned *sub, int nsub, unsigned *ovf,
                             unsigned *wide, uchar4 *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < PACK_BINS / 4) {
    uint4 o = ((uint4 *)ovf)[i];
    ((uint4 *)ovf)[i] = make_uint4(0, 0, 0, 0);
    for (int c = 0; c < nsub; c++) {
      unsigned w = sub[c * (PACK_BINS / 4) + i];
      o.x += w & 0xFF;
      o.y += (w >> 8) & 0xFF;
      o.z += (w >> 16) & 0xFF;
      o.w += w >> 24;
    }
    out[i] = make_uchar4(min(o.x, 255u), min(o.y, 255u), min(o.z, 255u), min(o.w, 255u));
  } else if (i < (PACK_BINS + WIDE_BINS) / 4) {
    int j = i - PACK_BINS / 4;
    ushort4 h = ((ushort4 *)wide)[j];
    ((ushort4 *)wide)[j] = make_ushort4(0, 0, 0, 0);
    out[i] = make_uchar4(min(h.x, 255), min(h.y, 255), min(h.z, 255), min(h.w, 255));
  }
}

__global__ void byte_scatter(unsigned char *b, unsigned short *h, int n) {
  int i = threadIdx.x * gridDim.x + blockIdx.x;
  if (i < n) {
    b[i] = (unsigned char)(i * 7 + blockIdx.x);
    h[i] = (unsigned short)(i * 3 + 1);
  }
}
