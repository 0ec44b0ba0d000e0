// tensor.cu -- tensor-core and asynchronous-copy instructions as CUTLASS-
// style code writes them (inline mma.sync, ldmatrix, stmatrix, cp.async)
// and as nvcuda::wmma compiles, plus the warp collectives redux, match,
// activemask and elect (tests/test_emu_tensor.c).  Fragments are packed
// here by the PTX ISA's layouts (g = lane / 4, t = lane % 4) or loaded by
// ldmatrix, so the two cross-check.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>
using namespace nvcuda;

// One 16x8 tile: D = A (16x16 f16, row-major) * B (16x8 f16, row-major) +
// C (16x8 f32), fragments packed by the ISA's m16n8k16 layout.
__global__ void mma_f16_packed(const unsigned short *A, const unsigned short *B, const float *C,
                               float *D) {
  unsigned l = threadIdx.x, g = l >> 2, t = l & 3;
  unsigned a[4], b[2];
  for (int r = 0; r < 4; r++) {
    unsigned row = g + 8 * (r & 1), col = 2 * t + 8 * (r >> 1);
    a[r] = A[row * 16 + col] | (unsigned)A[row * 16 + col + 1] << 16;
  }
  for (int r = 0; r < 2; r++) {
    unsigned k = 2 * t + 8 * r;
    b[r] = B[k * 8 + g] | (unsigned)B[(k + 1) * 8 + g] << 16;
  }
  float c[4], d[4];
  for (int i = 0; i < 4; i++) c[i] = C[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)];
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
               "{%8,%9}, {%10,%11,%12,%13};"
               : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]),
                 "f"(c[1]), "f"(c[2]), "f"(c[3]));
  for (int i = 0; i < 4; i++) D[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = d[i];
}

// The same product with A and B^T staged in shared memory and the
// fragments loaded by ldmatrix (.x4 for A, .x2 for B; .trans for B read
// from its row-major copy), and the bf16 m16n8k16 and the f16 m16n8k8
// forms on the same data; D[v] for variant v.
__global__ void mma_ldmatrix(const unsigned short *A, const unsigned short *B, const float *C,
                             float *D, const unsigned short *Abf, const unsigned short *Bbf) {
  __shared__ __align__(16) unsigned short sa[16 * 16], sbt[8 * 16], sb[16 * 8];
  __shared__ __align__(16) unsigned short sabf[16 * 16], sbtbf[8 * 16];
  unsigned l = threadIdx.x, g = l >> 2, t = l & 3;
  for (unsigned i = l; i < 256; i += 32) { sa[i] = A[i]; sabf[i] = Abf[i]; }
  for (unsigned i = l; i < 128; i += 32) {
    unsigned k = i / 8, n = i % 8;
    sb[i] = B[i];
    sbt[n * 16 + k] = B[i];
    sbtbf[n * 16 + k] = Bbf[i];
  }
  __syncthreads();
  float c[4];
  for (int i = 0; i < 4; i++) c[i] = C[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)];
  unsigned a[4], b[2], bt[2], abf[4], bbf[2];
  unsigned pa = (unsigned)__cvta_generic_to_shared(&sa[(l % 16) * 16 + 8 * (l / 16)]);
  unsigned pabf = (unsigned)__cvta_generic_to_shared(&sabf[(l % 16) * 16 + 8 * (l / 16)]);
  unsigned pb = (unsigned)__cvta_generic_to_shared(&sbt[(l % 8) * 16 + 8 * ((l / 8) % 2)]);
  unsigned pbbf = (unsigned)__cvta_generic_to_shared(&sbtbf[(l % 8) * 16 + 8 * ((l / 8) % 2)]);
  unsigned pbr = (unsigned)__cvta_generic_to_shared(&sb[(l % 16) * 8]);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3]) : "r"(pa));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(abf[0]), "=r"(abf[1]), "=r"(abf[2]), "=r"(abf[3]) : "r"(pabf));
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];"
               : "=r"(b[0]), "=r"(b[1]) : "r"(pb));
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];"
               : "=r"(bbf[0]), "=r"(bbf[1]) : "r"(pbbf));
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];"
               : "=r"(bt[0]), "=r"(bt[1]) : "r"(pbr));
  float d[4][4];
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
               "{%8,%9}, {%10,%11,%12,%13};"
               : "=f"(d[0][0]), "=f"(d[0][1]), "=f"(d[0][2]), "=f"(d[0][3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]),
                 "f"(c[1]), "f"(c[2]), "f"(c[3]));
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
               "{%8,%9}, {%10,%11,%12,%13};"
               : "=f"(d[1][0]), "=f"(d[1][1]), "=f"(d[1][2]), "=f"(d[1][3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(bt[0]), "r"(bt[1]), "f"(c[0]),
                 "f"(c[1]), "f"(c[2]), "f"(c[3]));
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, "
               "{%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
               : "=f"(d[2][0]), "=f"(d[2][1]), "=f"(d[2][2]), "=f"(d[2][3])
               : "r"(abf[0]), "r"(abf[1]), "r"(abf[2]), "r"(abf[3]), "r"(bbf[0]), "r"(bbf[1]),
                 "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
  // m16n8k8 twice (k 0-7, then k 8-15 accumulating): the same product
  float e[4];
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, "
               "{%7,%8,%9,%10};"
               : "=f"(e[0]), "=f"(e[1]), "=f"(e[2]), "=f"(e[3])
               : "r"(a[0]), "r"(a[1]), "r"(b[0]), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, "
               "{%0,%1,%2,%3};"
               : "+f"(e[0]), "+f"(e[1]), "+f"(e[2]), "+f"(e[3])
               : "r"(a[2]), "r"(a[3]), "r"(b[1]));
  for (int i = 0; i < 4; i++) d[3][i] = e[i];
  for (int v = 0; v < 4; v++)
    for (int i = 0; i < 4; i++) D[v * 128 + (g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = d[v][i];
}

// tf32 m16n8k8 and m16n8k4, f64 m8n8k4, s8 m16n8k32 on packed fragments;
// f16-accumulating m16n8k16.  X row-major 16 x 32 (floats / doubles / bytes
// as the form needs), Y row-major 32 x 8; outputs at out[form * 128 ...].
__global__ void mma_forms(const float *X, const float *Y, const double *Xd, const double *Yd,
                          const signed char *Xi, const signed char *Yi, float *out,
                          double *outd, int *outi, unsigned *outh, const unsigned short *Xh,
                          const unsigned short *Yh) {
  unsigned l = threadIdx.x, g = l >> 2, t = l & 3;
  // tf32 m16n8k8: A (g + 8*(i&1), t + 4*(i>>1)), B (t + 4i, g)
  unsigned a[4], b[2];
  for (int i = 0; i < 4; i++) a[i] = __float_as_uint(X[(g + 8 * (i & 1)) * 32 + t + 4 * (i >> 1)]);
  for (int i = 0; i < 2; i++) b[i] = __float_as_uint(Y[(t + 4 * i) * 8 + g]);
  float d[4] = {0, 0, 0, 0};
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, "
               "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  for (int i = 0; i < 4; i++) out[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = d[i];
  // tf32 m16n8k4: A (g + 8i, t), B (t, g)
  unsigned a2[2] = {__float_as_uint(X[g * 32 + t]), __float_as_uint(X[(g + 8) * 32 + t])};
  unsigned b1 = __float_as_uint(Y[t * 8 + g]);
  float d2[4] = {0, 0, 0, 0};
  asm volatile("mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5}, "
               "{%6}, {%0,%1,%2,%3};"
               : "+f"(d2[0]), "+f"(d2[1]), "+f"(d2[2]), "+f"(d2[3])
               : "r"(a2[0]), "r"(a2[1]), "r"(b1));
  for (int i = 0; i < 4; i++) out[128 + (g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = d2[i];
  // f64 m8n8k4: A (g, t), B (t, g), C/D (g, 2t + i)
  double ad = Xd[g * 32 + t], bd = Yd[t * 8 + g], dd[2] = {0, 0};
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};"
               : "+d"(dd[0]), "+d"(dd[1]) : "d"(ad), "d"(bd));
  for (int i = 0; i < 2; i++) outd[g * 8 + 2 * t + i] = dd[i];
  // s8 m16n8k32: A (g + 8((i>>2)&1), 4t + (i&3) + 16(i>>3)), B (4t + (i&3) + 16(i>>2), g)
  unsigned ai[4] = {0, 0, 0, 0}, bi[2] = {0, 0};
  for (int i = 0; i < 16; i++)
    ai[i / 4] |= (unsigned)(unsigned char)Xi[(g + 8 * ((i >> 2) & 1)) * 32 + 4 * t + (i & 3) + 16 * (i >> 3)]
                 << (8 * (i % 4));
  for (int i = 0; i < 8; i++)
    bi[i / 4] |= (unsigned)(unsigned char)Yi[(4 * t + (i & 3) + 16 * (i >> 2)) * 8 + g] << (8 * (i % 4));
  int di[4] = {0, 0, 0, 0};
  asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
               "{%8,%9}, {%0,%1,%2,%3};"
               : "+r"(di[0]), "+r"(di[1]), "+r"(di[2]), "+r"(di[3])
               : "r"(ai[0]), "r"(ai[1]), "r"(ai[2]), "r"(ai[3]), "r"(bi[0]), "r"(bi[1]));
  for (int i = 0; i < 4; i++) outi[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = di[i];
  // f16 accumulate: m16n8k16.f16.f16.f16.f16, C = 0
  unsigned ah[4], bh[2], dh[2] = {0, 0};
  for (int r = 0; r < 4; r++) {
    unsigned row = g + 8 * (r & 1), col = 2 * t + 8 * (r >> 1);
    ah[r] = Xh[row * 16 + col] | (unsigned)Xh[row * 16 + col + 1] << 16;
  }
  for (int r = 0; r < 2; r++) {
    unsigned k = 2 * t + 8 * r;
    bh[r] = Yh[k * 8 + g] | (unsigned)Yh[(k + 1) * 8 + g] << 16;
  }
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, "
               "{%6,%7}, {%0,%1};"
               : "+r"(dh[0]), "+r"(dh[1])
               : "r"(ah[0]), "r"(ah[1]), "r"(ah[2]), "r"(ah[3]), "r"(bh[0]), "r"(bh[1]));
  outh[g * 4 + t] = dh[0];
  outh[(g + 8) * 4 + t] = dh[1];
}

// wmma: C = A * B + C in each supported form; every matrix row-major with
// leading dimension 32 elements except where a layout is named.
__global__ void wmma_f16(const half *a, const half *b, float *c, half *ch) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
  wmma::load_matrix_sync(fa, a, 32);
  wmma::load_matrix_sync(fb, b, 32);
  wmma::load_matrix_sync(fc, c, 32, wmma::mem_row_major);
  for (int i = 0; i < fc.num_elements; i++) fc.x[i] *= 0.5f;
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(c, fc, 32, wmma::mem_col_major);
  wmma::fragment<wmma::matrix_a, 32, 8, 16, half, wmma::col_major> ga;
  wmma::fragment<wmma::matrix_b, 32, 8, 16, half, wmma::row_major> gb;
  wmma::fragment<wmma::accumulator, 32, 8, 16, half> gc;
  wmma::fill_fragment(gc, __float2half(1.0f));
  wmma::load_matrix_sync(ga, a, 32);
  wmma::load_matrix_sync(gb, b, 32);
  wmma::mma_sync(gc, ga, gb, gc);
  wmma::store_matrix_sync(ch, gc, 8, wmma::mem_row_major);
}

__global__ void wmma_other(const __nv_bfloat16 *abf, const __nv_bfloat16 *bbf, const float *af,
                           const float *bf, const double *ad, const double *bd,
                           const signed char *ai, const signed char *bi, float *cbf, float *ctf,
                           double *cd, int *ci) {
  wmma::fragment<wmma::matrix_a, 8, 32, 16, __nv_bfloat16, wmma::row_major> a1;
  wmma::fragment<wmma::matrix_b, 8, 32, 16, __nv_bfloat16, wmma::row_major> b1;
  wmma::fragment<wmma::accumulator, 8, 32, 16, float> c1;
  wmma::fill_fragment(c1, 0.0f);
  wmma::load_matrix_sync(a1, abf, 32);
  wmma::load_matrix_sync(b1, bbf, 32);
  wmma::mma_sync(c1, a1, b1, c1);
  wmma::store_matrix_sync(cbf, c1, 32, wmma::mem_row_major);
  wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> a2;
  wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> b2;
  wmma::fragment<wmma::accumulator, 16, 16, 8, float> c2;
  wmma::fill_fragment(c2, 0.0f);
  wmma::load_matrix_sync(a2, af, 32);
  wmma::load_matrix_sync(b2, bf, 32);
  for (int i = 0; i < a2.num_elements; i++) a2.x[i] = wmma::__float_to_tf32(a2.x[i]);
  for (int i = 0; i < b2.num_elements; i++) b2.x[i] = wmma::__float_to_tf32(b2.x[i]);
  wmma::mma_sync(c2, a2, b2, c2);
  wmma::store_matrix_sync(ctf, c2, 32, wmma::mem_row_major);
  wmma::fragment<wmma::matrix_a, 8, 8, 4, double, wmma::row_major> a3;
  wmma::fragment<wmma::matrix_b, 8, 8, 4, double, wmma::col_major> b3;
  wmma::fragment<wmma::accumulator, 8, 8, 4, double> c3;
  wmma::fill_fragment(c3, 0.0);
  wmma::load_matrix_sync(a3, ad, 32);
  wmma::load_matrix_sync(b3, bd, 32);
  wmma::mma_sync(c3, a3, b3, c3);
  wmma::store_matrix_sync(cd, c3, 32, wmma::mem_row_major);
  wmma::fragment<wmma::matrix_a, 16, 16, 16, signed char, wmma::row_major> a4;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, signed char, wmma::col_major> b4;
  wmma::fragment<wmma::accumulator, 16, 16, 16, int> c4;
  wmma::fill_fragment(c4, 7);
  wmma::load_matrix_sync(a4, ai, 32);
  wmma::load_matrix_sync(b4, bi, 32);
  wmma::mma_sync(c4, a4, b4, c4);
  wmma::store_matrix_sync(ci, c4, 32, wmma::mem_row_major);
}

// cp.async into shared memory: 16-byte cg copies, 8- and 4-byte ca
// copies with src-size (zero fill), ignore-src; then stmatrix back out.
__global__ void async_copy(const float *src, float *dst, unsigned short *tr, int n) {
  __shared__ __align__(16) float s[4 * 128];
  unsigned l = threadIdx.x;
  unsigned sp = (unsigned)__cvta_generic_to_shared(&s[4 * l]);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(sp), "l"(src + 4 * l));
  asm volatile("cp.async.commit_group;");
  unsigned sp2 = (unsigned)__cvta_generic_to_shared(&s[128 + 2 * l]);
  int keep = (int)(l % 3); /* src-size 0, 4 or 8 */
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;" ::"r"(sp2), "l"(src + 2 * l),
               "r"(4 * keep));
  unsigned sp3 = (unsigned)__cvta_generic_to_shared(&s[256 + l]);
  asm volatile("{ .reg .pred p; setp.ne.b32 p, %2, 0;\n"
               "cp.async.ca.shared.global [%0], [%1], 4, p; }" ::"r"(sp3), "l"(src + l),
               "r"(l & 1));
  asm volatile("cp.async.commit_group;");
  asm volatile("cp.async.wait_group 1;");
  asm volatile("cp.async.wait_all;");
  __syncthreads();
  for (int i = l; i < 3 * 128; i += 32) dst[i] = s[i];
  // stmatrix .x2 of two 8x8 b16 matrices (lane-order values), and .trans
  unsigned short *st = (unsigned short *)&s[0];
  __syncthreads();
  unsigned v0 = (2 * l) | (2 * l + 1) << 16, v1 = v0 + 0x00400040u;
  unsigned pr = (unsigned)__cvta_generic_to_shared(&st[(l % 16) * 8]);
  asm volatile("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1,%2};" ::"r"(pr), "r"(v0), "r"(v1));
  unsigned pt = (unsigned)__cvta_generic_to_shared(&st[128 + (l % 16) * 8]);
  asm volatile("stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%0], {%1,%2};" ::"r"(pt), "r"(v0), "r"(v1));
  __syncthreads();
  for (int i = l; i < 256; i += 32) tr[i] = st[i];
}

// redux, match, activemask, elect on a diverged warp
__global__ void collectives(const unsigned *in, unsigned *out) {
  unsigned l = threadIdx.x, v = in[l];
  unsigned o[6] = {0, 0, 0, 0, 0, 0};
  if (l % 4 != 3) {
    unsigned act = __activemask();
    o[0] = act;
    o[1] = __reduce_add_sync(act, v);
    o[2] = __reduce_max_sync(act, v);
    o[3] = __reduce_or_sync(act, v);
    o[4] = __match_any_sync(act, v % 5);
    unsigned e;
    asm volatile("{ .reg .pred p; elect.sync %0|p, %1; }" : "=r"(e) : "r"(act));
    o[5] = e;
  }
  for (int i = 0; i < 6; i++) out[i * 32 + l] = o[i];
}
