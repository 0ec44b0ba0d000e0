/*
 * test_emu_tensor.c -- the emulator on the kernels people write today:
 * half precision and bfloat16 (tests/kernels/half.cu) and tensor-core and
 * asynchronous-copy instructions (tests/kernels/tensor.cu), compiled by
 * nvcc and by clang into the corpus, run with 1 and 2 threads
 * (emu_fix.h), every result compared bit for bit with a reference this
 * file computes.
 *
 * The references do not use the emulator's rounding core: a value is
 * formed exactly (in __float128: products of halves have 22 bits, sums of
 * two such values fit its 113) and rounded to the half format by
 * ref_round below, which is checked against the host compiler's _Float16
 * conversions first.  The ISA defines each operation as the IEEE one
 * rounded once (PTX ISA, half precision floating-point instructions);
 * NaN results are the canonical 0x7FFF.
 */
#include "tests.h"
#include "tests/emu_fix.h"
#include "emulator/emu_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------- half references -- */

typedef __float128 quad;

/* Format of a reference rounding: significant bits, minimum normal
   exponent, the largest finite value's exponent, and the bit layout. */
typedef struct hfmt { int prec, emin, emax, mbits; } hfmt;
static const hfmt F16 = {11, -14, 15, 10}, BF16 = {8, -126, 127, 7};

static quad q_pow2(int e) {
  quad r = 1;
  for (; e > 0; e--) r *= 2;
  for (; e < 0; e++) r /= 2;
  return r;
}

/* Decode a half bit pattern exactly. */
static quad ref_decode(unsigned b, hfmt f) {
  unsigned sign = b >> 15, ebits = 15 - f.mbits, e = (b >> f.mbits) & ((1u << ebits) - 1);
  unsigned man = b & ((1u << f.mbits) - 1);
  quad v;
  if (e == (1u << ebits) - 1) v = man ? (quad)NAN : (quad)INFINITY;
  else if (e == 0) v = (quad)man * q_pow2(f.emin - f.mbits);
  else v = (quad)(man | (1u << f.mbits)) * q_pow2((int)e - (int)((1u << (ebits - 1)) - 1) - f.mbits);
  return sign ? -v : v;
}

/* Round an exact value to the format in mode 0 nearest even, 1 toward
   zero, 2 down, 3 up; NaN -> 0x7FFF. */
static unsigned ref_round_mode(quad x, hfmt f, int mode);
static unsigned ref_round(quad x, hfmt f) { return ref_round_mode(x, f, 0); }
static unsigned ref_round_mode(quad x, hfmt f, int mode) {
  if (x != x) return 0x7FFF;
  unsigned sign = (x < 0 || (x == 0 && 1 / (double)x < 0)) ? 0x8000u : 0;
  quad a = x < 0 ? -x : x;
  unsigned ebits = 15 - f.mbits, bias = (1u << (ebits - 1)) - 1;
  unsigned inf = ((1u << ebits) - 1) << f.mbits;
  int away = mode == 2 ? sign != 0 : mode == 3 ? sign == 0 : 0; /* directed: away from 0? */
  unsigned maxfin = inf - 1;
  if (a >= q_pow2(f.emax + 1)) /* infinity too */
    return sign | (mode == 0 || away || a == (quad)INFINITY ? inf : maxfin);
  int e = f.emin;
  while (a >= q_pow2(e + 1)) e++;
  quad ulp = q_pow2(e - (f.prec - 1));
  quad y = a / ulp;
  long long n = (long long)y;
  quad fr = y - (quad)n;
  if (mode == 0 ? (fr > 0.5 || (fr == 0.5 && (n & 1))) : (away && fr > 0)) n++;
  quad r = (quad)n * ulp;
  if (r >= q_pow2(f.emax + 1)) return sign | (mode == 0 || away ? inf : maxfin);
  if (r == 0) return sign;
  /* encode r */
  int re = f.emin;
  while (r >= q_pow2(re + 1)) re++;
  if (r < q_pow2(f.emin)) return sign | (unsigned)(long long)(r / q_pow2(f.emin - f.mbits));
  unsigned man = (unsigned)(long long)(r / q_pow2(re - f.mbits)) & ((1u << f.mbits) - 1);
  return sign | ((unsigned)(re + (int)bias) << f.mbits) | man;
}

static int q_isnan(quad x) { return x != x; }

/* Clamp a rounded result as .sat does: [+0, 1], NaN -> +0. */
static unsigned ref_sat(unsigned r, hfmt f) {
  quad v = ref_decode(r, f);
  if (q_isnan(v) || v <= 0) return 0;
  if (v >= 1) return f.mbits == 10 ? 0x3C00u : 0x3F80u;
  return r;
}
/* .relu: negative (and -0) -> +0, NaN -> canonical. */
static unsigned ref_relu(unsigned r, hfmt f) {
  quad v = ref_decode(r, f);
  if (q_isnan(v)) return 0x7FFF;
  return (v < 0 || (r & 0x8000u)) ? 0 : r;
}
static unsigned ref_minmax(unsigned a, unsigned b, int max, int nanp, hfmt f) {
  quad x = ref_decode(a, f), y = ref_decode(b, f);
  if (q_isnan(x) || q_isnan(y)) {
    if (nanp || (q_isnan(x) && q_isnan(y))) return 0x7FFF;
    return q_isnan(x) ? b : a;
  }
  if (x == y) return (max == !((a & 0x8000u) != 0)) ? a : b; /* -0 < +0 */
  return (max == (x > y)) ? a : b;
}
static int ref_cmp(int op, quad x, quad y) {
  switch (op) {
  case 0: return x == y;
  case 1: return x != y && !q_isnan(x) && !q_isnan(y);
  case 2: return x < y;
  case 3: return x <= y;
  case 4: return x > y;
  case 5: return x >= y;
  case 6: return !(x < y || x > y);
  case 7: return x != y;
  case 8: return !(x >= y);
  case 9: return !(x > y);
  case 10: return !(x <= y);
  default: return !(x < y);
  }
}

/* The 16 results of half_ops / bf16_ops for one element. */
static void ref_ops(unsigned a, unsigned b, unsigned c, hfmt f, unsigned *r) {
  quad x = ref_decode(a, f), y = ref_decode(b, f), z = ref_decode(c, f);
  r[0] = ref_round(x + y, f);
  r[1] = ref_round(x - y, f);
  r[2] = ref_round(x * y, f);
  r[3] = ref_round(x * y + z, f);
  r[4] = ref_sat(r[0], f);
  r[5] = ref_sat(r[2], f);
  r[6] = ref_sat(r[3], f);
  r[7] = ref_relu(r[3], f);
  r[8] = ref_minmax(a, b, 0, 0, f);
  r[9] = ref_minmax(a, b, 1, 0, f);
  r[10] = ref_minmax(a, b, 0, 1, f);
  r[11] = ref_minmax(a, b, 1, 1, f);
  r[12] = a ^ 0x8000u;
  r[13] = a & 0x7FFFu;
  /* .approx: the exact function rounded once (the emulator's documented
     accuracy; the hardware's bound is looser) */
  double xd = (double)x;
  r[14] = ref_round((quad)exp2(xd), f);
  r[15] = ref_round((quad)tanh(xd), f);
}

/* Bit patterns: the special values of both formats, then random ones. */
static void half_inputs(unsigned short *a, unsigned short *b, unsigned short *c, int n,
                        uint64_t seed) {
  static const unsigned short sp[] = {
      0x0000, 0x8000, 0x3C00, 0xBC00, 0x7C00, 0xFC00, 0x7E00, 0x7C01, 0xFFFF, 0x0001, 0x8001,
      0x03FF, 0x0400, 0x7BFF, 0xFBFF, 0x3800, 0x3BFF, 0x3C01, 0x7F80, 0xFF80, 0x7FC0, 0x3F80,
      0x0080, 0x007F, 0x7F7F, 0x4000, 0xC000, 0x3555, 0x5640, 0x1000};
  size_t ns = sizeof sp / sizeof sp[0];
  uint64_t s = seed;
  for (int i = 0; i < n; i++) {
    uint64_t r = rng_next(&s);
    a[i] = (size_t)i < ns ? sp[i] : (unsigned short)r;
    b[i] = (size_t)i < ns ? sp[(i * 7 + 3) % ns] : (unsigned short)(r >> 16);
    c[i] = (size_t)i < ns ? sp[(i * 11 + 5) % ns] : (unsigned short)(r >> 32);
    if ((size_t)i >= ns && i % 3 == 0) { /* nearby values: cancellations, ties */
      b[i] = (unsigned short)(a[i] ^ 0x8000u ^ (r >> 60));
      c[i] = (unsigned short)(a[i] + (r >> 62));
    }
  }
}

/* The reference rounding against the host's IEEE half conversions. */
static void test_reference_rounding(void) {
  unsigned bad = 0, first = 0;
  for (unsigned b = 0; b < 0x10000; b++) {
    _Float16 h;
    unsigned short u = (unsigned short)b;
    memcpy(&h, &u, 2);
    quad v = ref_decode(b, F16);
    if (h != h ? !q_isnan(v) : (double)v != (double)h) { if (!bad++) first = b; }
    /* every f16 value and the midpoints beside it round as the host does */
    if (h == h && !isinf((double)h)) {
      double d = (double)h, nx = nextafter(d, INFINITY), mid = d + (nx - d) / 4;
      _Float16 hm = (_Float16)mid;
      unsigned short um;
      memcpy(&um, &hm, 2);
      if (ref_round((quad)mid, F16) != um && !bad++) first = b;
    }
  }
  CU_ASSERT_EQUAL(bad, 0);
  if (bad) printf("\n    reference rounding differs from _Float16 at 0x%04x (%u cases) ", first, bad);
  /* bfloat16: the top half of a float, nearest even */
  CU_ASSERT_EQUAL(ref_round((quad)1.00390625, BF16), 0x3F80);  /* tie to even: down */
  CU_ASSERT_EQUAL(ref_round((quad)1.01171875, BF16), 0x3F82);  /* tie to even: up */
  CU_ASSERT_EQUAL(ref_round((quad)3.4e38, BF16), 0x7F80);      /* overflow */
  CU_ASSERT_EQUAL(ref_round(q_pow2(-133), BF16), 0x0001);      /* smallest subnormal */
  CU_ASSERT_EQUAL(ref_round(-q_pow2(-135), BF16), 0x8000);     /* rounds to -0 */
}

static void body_half(kfix *f, int threads, feat_vec *fv) {
  enum { N = 640, NOPS = 16 };
  static unsigned short a[N], b[N], c[N], o[NOPS * N], acc[3 * N], acc0[3 * N];
  static unsigned m[4 * N];
  static unsigned want[NOPS * N], got[NOPS * N], wm[4 * N];
  for (int fmt = 0; fmt < 2; fmt++) {
    hfmt F = fmt ? BF16 : F16;
    half_inputs(a, b, c, N, 77 + (uint64_t)fmt);
    for (int i = 0; i < N; i++) {
      unsigned r[NOPS];
      ref_ops(a[i], b[i], c[i], F, r);
      for (int k = 0; k < NOPS; k++) want[k * N + i] = r[k];
      quad x = ref_decode(a[i], F), y = ref_decode(b[i], F), z = ref_decode(c[i], F);
      unsigned bits = 0;
      for (int k = 0; k < 12; k++) bits |= (unsigned)ref_cmp(k, x, y) << k;
      bits |= (unsigned)q_isnan(x) << 12;
      wm[4 * i] = bits;
      /* pairs p = (x, y), q = (z, x) */
      unsigned pl[2] = {a[i], b[i]}, ql[2] = {c[i], a[i]}, s = 0, t = 0, lt = 0;
      for (int h = 0; h < 2; h++) {
        quad P = ref_decode(pl[h], F), Q = ref_decode(ql[h], F);
        if (P < Q) lt |= 0xFFFFu << (16 * h);
        unsigned eq = P == Q ? (fmt ? 0x3F80u : 0x3C00u) : 0;
        s |= ref_round(P * Q + ref_decode(eq, F), F) << (16 * h);
        unsigned sum = ref_round(P + Q, F), prod = ref_round(P * Q, F);
        t |= ref_minmax(sum, prod, 1, 0, F) << (16 * h);
      }
      wm[4 * i + 1] = lt;
      wm[4 * i + 2] = s;
      wm[4 * i + 3] = t;
      (void)z;
      /* atomicAdd(&acc[i], x), atomicAdd(&acc[N + 2i] as a pair, p) */
      acc0[i] = c[i];
      acc0[N + 2 * i] = b[i];
      acc0[N + 2 * i + 1] = c[i];
    }
    if (fix_kernel(f, fmt ? "_Z8bf16_opsPKtS0_S0_PtPjS1_i" : "_Z8half_opsPKtS0_S0_PtPjS1_i"))
      return;
    fix_buf(f, 0, a, sizeof a);
    fix_buf(f, 1, b, sizeof b);
    fix_buf(f, 2, c, sizeof c);
    uint64_t od = fix_buf(f, 3, NULL, sizeof o);
    uint64_t md = fix_buf(f, 4, NULL, sizeof m);
    uint64_t ad = fix_buf(f, 5, acc0, sizeof acc0);
    fix_u32(f, 6, N);
    dims dm = {{(N + 127) / 128, 1, 1}, {128, 1, 1}, 0};
    const char *tag = fmt ? "bf16" : "f16";
    if (fix_launch_tagged(f, &dm, threads, fv, tag, NULL)) return;
    fix_get(f, o, od, sizeof o);
    fix_get(f, m, md, sizeof m);
    fix_get(f, acc, ad, sizeof acc);
    static const char *const what[NOPS] = {
        "add", "sub", "mul", "fma.rn", "add.sat", "mul.sat", "fma.rn.sat", "fma.rn.relu",
        "min", "max", "min.NaN", "max.NaN", "neg", "abs", "ex2.approx", "tanh.approx"};
    for (int k = 0; k < NOPS; k++) {
      for (int i = 0; i < N; i++) got[i] = o[k * N + i];
      char w[96];
      snprintf(w, sizeof w, "%s.%s (%s)", what[k], tag, fmt ? "__nv_bfloat16" : "__half");
      WORDS_EQ(f, w, got, want + k * N, N);
    }
    static unsigned g1[N], w1[N];
    static const char *const mwhat[4] = {
        "__heq ... __hgeu, __hisnan: setp/set on halves", "__hlt2_mask: set.lt.u32 on pairs",
        "__hfma2(p, q, __heq2(p, q)): set.eq on pairs, 1.0/0.0 per half",
        "__hmax2(__hadd2, __hmul2)"};
    for (int j = 0; j < 4; j++) {
      for (int i = 0; i < N; i++) { g1[i] = m[4 * i + j]; w1[i] = wm[4 * i + j]; }
      WORDS_EQ(f, mwhat[j], g1, w1, N);
    }
    for (int i = 0; i < N; i++) {
      got[i] = acc[i];
      want[i] = ref_round(ref_decode(c[i], F) + ref_decode(a[i], F), F);
      got[N + i] = acc[N + 2 * i] | (unsigned)acc[N + 2 * i + 1] << 16;
      want[N + i] = ref_round(ref_decode(b[i], F) + ref_decode(a[i], F), F) |
                    ref_round(ref_decode(c[i], F) + ref_decode(b[i], F), F) << 16;
    }
    WORDS_EQ(f, "atomicAdd on halves (atom.add.noftz)", got, want, N);
    WORDS_EQ(f, "atomicAdd on pairs (atom.add.noftz.x2)", got + N, want + N, N);
  }
  /* counted in the fp16 class: per element at least the 16 operations and
     the pair arithmetic, for both formats */
  double c16 = feat_get(fv, "f16/class.fp16", 0) + feat_get(fv, "bf16/class.fp16", 0);
  CHECK(c16 >= 2.0 * 20 * N, "%s.%s: class.fp16 counts the half arithmetic (%g >= %d)",
        f->corpus, f->compiler, c16, 40 * N);
  if (!strcmp(f->compiler, "nvcc")) {
    FEAT_EQ(f, fv, "f16/op.fma.rn.relu.f16", N);
    FEAT_EQ(f, fv, "bf16/op.fma.rn.relu.bf16", N);
    FEAT_EQ(f, fv, "f16/op.set.lt.u32.f16x2", N);
    FEAT_EQ(f, fv, "f16/op.atom.add.noftz.f16x2", N);
    FEAT_EQ(f, fv, "bf16/op.ex2.approx.ftz.bf16", N);
  }
}

static void test_half(void) { for_each_compiler("half", body_half); }

/* float -> half and bfloat16 at nearest even, and back exactly. */
static void body_half_cvt(kfix *f, int threads, feat_vec *fv) {
  enum { N = 512 };
  static float x[N], back[2 * N], wback[2 * N];
  static unsigned short h[5 * N], bf[5 * N];
  static unsigned gh[5 * N], wh[5 * N], gb[5 * N], wb[5 * N];
  uint64_t s = 5;
  for (int i = 0; i < N; i++) {
    uint32_t u = (uint32_t)rng_next(&s);
    if (i % 4 == 0) u = (u & 0x8000FFFFu) | 0x38000000u; /* near halves' range */
    memcpy(&x[i], &u, 4);
    if (i < 8) x[i] = (float[]){65520.0f, 65519.99f, 5.96046448e-8f, 2.98023224e-8f, 1.0f + 1.0f / 2048,
                                NAN, -INFINITY, -0.0f}[i];
    quad q = isnan(x[i]) ? (quad)NAN : (quad)x[i];
    for (int k = 0; k < 4; k++) {
      wh[k * N + i] = ref_round_mode(q, F16, k);
      wb[k * N + i] = ref_round_mode(q, BF16, k);
    }
    /* from double: x (1 + 2^-12), exact in double */
    quad qd = isnan(x[i]) ? (quad)NAN : (quad)((double)x[i] * (1.0 + 1.0 / 4096));
    wh[4 * N + i] = ref_round(qd, F16);
    wb[4 * N + i] = ref_round(qd, BF16);
    wback[2 * i] = (float)ref_decode(wh[i], F16);
    wback[2 * i + 1] = (float)ref_decode(wb[i], BF16);
  }
  if (fix_kernel(f, "_Z8half_cvtPKfPtS1_Pfi")) return;
  fix_buf(f, 0, x, sizeof x);
  uint64_t hd = fix_buf(f, 1, NULL, sizeof h), bd = fix_buf(f, 2, NULL, sizeof bf);
  uint64_t kd = fix_buf(f, 3, NULL, sizeof back);
  fix_u32(f, 4, N);
  dims dm = {{N / 128, 1, 1}, {128, 1, 1}, 0};
  if (fix_launch(f, &dm, threads, fv)) return;
  fix_get(f, h, hd, sizeof h);
  fix_get(f, bf, bd, sizeof bf);
  fix_get(f, back, kd, sizeof back);
  for (int i = 0; i < 5 * N; i++) { gh[i] = h[i]; gb[i] = bf[i]; }
  static const char *const hw[5] = {"__float2half_rn (cvt.rn.f16.f32)", "__float2half_rz",
                                    "__float2half_rd", "__float2half_ru",
                                    "__double2half (cvt.rn.f16.f64)"};
  static const char *const bw[5] = {"__float2bfloat16_rn (cvt.rn.bf16.f32)",
                                    "__float2bfloat16_rz", "__float2bfloat16_rd",
                                    "__float2bfloat16_ru", "__double2bfloat16"};
  for (int k = 0; k < 5; k++) {
    WORDS_EQ(f, hw[k], gh + k * N, wh + k * N, N);
    WORDS_EQ(f, bw[k], gb + k * N, wb + k * N, N);
  }
  /* NaN compares by bits: make the reference's NaN the canonical one */
  for (int i = 0; i < 2 * N; i++)
    if (isnan(wback[i]) && isnan(back[i])) wback[i] = back[i];
  WORDS_EQ(f, "__half2float, __bfloat162float", back, wback, 2 * N);
}

static void test_half_cvt(void) { for_each_compiler("half", body_half_cvt); }

/* ------------------------------------------------------ tensor cores -- */

/* Dyadic halves k/64, |k| <= 128, and floats of a full mantissa: every
   product and sum of a 16-term dot product with them is exact in double
   and __float128, so the single rounding to float is what is compared. */
static unsigned short small_half(uint64_t *s, hfmt f) {
  int k = (int)(rng_next(s) % 257) - 128;
  return (unsigned short)ref_round((quad)k / 64, f);
}
static float unit_float(uint64_t *s) {
  return (float)((double)(rng_next(s) >> 40) / (double)(1 << 24)) * 2.0f - 1.0f;
}
static float q2f(quad q) { return (float)q; }

#define MMA_PACKED "_Z14mma_f16_packedPKtS0_PKfPf"
#define MMA_LDM "_Z12mma_ldmatrixPKtS0_PKfPfS0_S0_"
#define MMA_FORMS "_Z9mma_formsPKfS0_PKdS2_PKaS4_PfPdPiPjPKtSA_"
#define WMMA_F16 "_Z8wmma_f16PK6__halfS1_PfPS_"
#define WMMA_OTHER "_Z10wmma_otherPK13__nv_bfloat16S1_PKfS3_PKdS5_PKaS7_PfS8_PdPi"
#define ASYNC_COPY "_Z10async_copyPKfPfPti"
#define COLLECTIVES "_Z11collectivesPKjPj"

static void body_mma(kfix *f, int threads, feat_vec *fv) {
  static unsigned short A[256], B[128], Abf[256], Bbf[128];
  static float C[128], D[4 * 128], W[4 * 128];
  uint64_t s = 31;
  for (int i = 0; i < 256; i++) A[i] = small_half(&s, F16), Abf[i] = small_half(&s, BF16);
  for (int i = 0; i < 128; i++) B[i] = small_half(&s, F16), Bbf[i] = small_half(&s, BF16);
  for (int i = 0; i < 128; i++) C[i] = unit_float(&s);
  for (int m = 0; m < 16; m++)
    for (int n = 0; n < 8; n++) {
      quad full = C[m * 8 + n], bf = C[m * 8 + n], lo = C[m * 8 + n];
      for (int k = 0; k < 16; k++) {
        quad p = ref_decode(A[m * 16 + k], F16) * ref_decode(B[k * 8 + n], F16);
        full += p;
        bf += ref_decode(Abf[m * 16 + k], BF16) * ref_decode(Bbf[k * 8 + n], BF16);
        if (k == 7) lo = q2f(full); /* m16n8k8: rounded after k = 0..7 */
        if (k >= 8) lo += p;
      }
      W[m * 8 + n] = W[128 + m * 8 + n] = q2f(full);
      W[256 + m * 8 + n] = q2f(bf);
      W[384 + m * 8 + n] = q2f(lo);
    }
  dims d32 = {{1, 1, 1}, {32, 1, 1}, 0};
  if (fix_kernel(f, MMA_PACKED)) return;
  fix_buf(f, 0, A, sizeof A);
  fix_buf(f, 1, B, sizeof B);
  fix_buf(f, 2, C, sizeof C);
  uint64_t dd = fix_buf(f, 3, NULL, 128 * 4);
  if (fix_launch_tagged(f, &d32, threads, fv, "packed", NULL)) return;
  fix_get(f, D, dd, 128 * 4);
  WORDS_EQ(f, "mma.m16n8k16.f32.f16 on fragments packed by the ISA's layout", D, W, 128);
  FEAT_EQ(f, fv, "packed/op.mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 32);
  FEAT_EQ(f, fv, "packed/tensor.flops", 2 * 16 * 8 * 16);
  FEAT_EQ(f, fv, "packed/class.tensor", 32);

  /* every A element through the product exactly: B picks column c0 + n
     of A (ones on a shifted diagonal), C is 0, so D is A's halves as
     floats -- subnormals, zeros of both signs, the largest finite, 1 ulp
     off 1 -- whatever converts them (a table, F16C) */
  static const unsigned short spec[] = {0x0001, 0x8001, 0x03FF, 0x83FF, 0x0400, 0x0000,
                                        0x8000, 0x7BFF, 0xFBFF, 0x3C01, 0x3BFF, 0x0200};
  static unsigned short As[256], Bi[128];
  static float Cz[128], Ds[128], Ws[128];
  for (int i = 0; i < 256; i++)
    As[i] = i % 3 ? spec[(i * 7) % (sizeof spec / sizeof spec[0])] : small_half(&s, F16);
  for (int c0 = 0; c0 <= 8; c0 += 8) {
    memset(Bi, 0, sizeof Bi);
    for (int n = 0; n < 8; n++) Bi[(c0 + n) * 8 + n] = 0x3C00;
    for (int m = 0; m < 16; m++)
      for (int n = 0; n < 8; n++) Ws[m * 8 + n] = q2f(ref_decode(As[m * 16 + c0 + n], F16));
    if (fix_kernel(f, MMA_PACKED)) return;
    fix_buf(f, 0, As, sizeof As);
    fix_buf(f, 1, Bi, sizeof Bi);
    fix_buf(f, 2, Cz, sizeof Cz);
    dd = fix_buf(f, 3, NULL, 128 * 4);
    if (fix_launch_tagged(f, &d32, threads, fv, c0 ? "spec8" : "spec0", NULL)) return;
    fix_get(f, Ds, dd, sizeof Ds);
    WORDS_EQ(f, c0 ? "A's special halves, columns 8-15, exactly through mma.m16n8k16"
                   : "A's special halves, columns 0-7, exactly through mma.m16n8k16",
             Ds, Ws, 128);
  }

  if (fix_kernel(f, MMA_LDM)) return;
  fix_buf(f, 0, A, sizeof A);
  fix_buf(f, 1, B, sizeof B);
  fix_buf(f, 2, C, sizeof C);
  dd = fix_buf(f, 3, NULL, sizeof D);
  fix_buf(f, 4, Abf, sizeof Abf);
  fix_buf(f, 5, Bbf, sizeof Bbf);
  if (fix_launch_tagged(f, &d32, threads, fv, "ldm", NULL)) return;
  fix_get(f, D, dd, sizeof D);
  WORDS_EQ(f, "ldmatrix.x4 + ldmatrix.x2 fragments: mma.m16n8k16 f16", D, W, 128);
  WORDS_EQ(f, "ldmatrix.x2.trans of row-major B: the same product", D + 128, W + 128, 128);
  WORDS_EQ(f, "mma.m16n8k16.f32.bf16", D + 256, W + 256, 128);
  WORDS_EQ(f, "two mma.m16n8k8 accumulating", D + 384, W + 384, 128);
  /* five ldmatrix: x4 is 4 shared accesses of 128 bytes, x2 2, .trans x2
     4 of 64; all conflict-free (rows of 16 bytes in consecutive banks) */
  FEAT_EQ(f, fv, "ldm/op.ldmatrix.sync.aligned.m8n8.x4.shared.b16", 64);
  FEAT_EQ(f, fv, "ldm/tensor.flops", 3 * 2 * 16 * 8 * 16 + 2 * 2 * 16 * 8 * 8);
}

static void test_mma(void) { for_each_compiler("tensor", body_mma); }

/* The vector path of mma.sync's half-precision forms (emulator/emu_mma.c,
   mma_half_fast, with the AVX-512 or the AVX2 product) against the general
   one (a gather map, mma_compute, put) on random bit patterns: halves of
   every exponent (subnormals, infinities and NaNs among them), sums that
   round, accumulators of every sign.  Where the host has no AVX2 the three
   runs are one path, and agree trivially. */
static unsigned short rand_half(uint64_t *s, int bf) {
  unsigned short h = (unsigned short)rng_next(s);
  unsigned short inf = bf ? 0x7F80 : 0x7C00;
  if ((h & inf) == inf && rng_next(s) % 2) h ^= (unsigned short)(bf ? 0x0080 : 0x0400);
  return h;
}
static void body_mma_paths(kfix *f, int threads, feat_vec *fv) {
  static unsigned short A[256], B[128], Abf[256], Bbf[128];
  static float C[128], D[3][4 * 128];
  uint64_t s = 77 + (uint64_t)threads;
  for (int i = 0; i < 256; i++) A[i] = rand_half(&s, 0), Abf[i] = rand_half(&s, 1);
  for (int i = 0; i < 128; i++) B[i] = rand_half(&s, 0), Bbf[i] = rand_half(&s, 1);
  for (int i = 0; i < 128; i++) {
    uint32_t u = (uint32_t)rng_next(&s);
    if ((u & 0x7F800000u) == 0x7F800000u && i % 16) u ^= 0x00800000u;
    memcpy(&C[i], &u, 4);
  }
  dims d32 = {{1, 1, 1}, {32, 1, 1}, 0};
  static const int mode[3] = {0, 2, 1}; /* fast, fast with AVX2's product, general */
  static const char *const tag[3] = {"fast", "avx2", "general"};
  feat_vec kept[3];
  for (int m = 0; m < 3; m++) {
    feat_init(&kept[m]);
    emu__mma_general = mode[m];
    int bad = fix_kernel(f, MMA_LDM);
    if (!bad) {
      fix_buf(f, 0, A, sizeof A);
      fix_buf(f, 1, B, sizeof B);
      fix_buf(f, 2, C, sizeof C);
      uint64_t dd = fix_buf(f, 3, NULL, sizeof D[m]);
      fix_buf(f, 4, Abf, sizeof Abf);
      fix_buf(f, 5, Bbf, sizeof Bbf);
      bad = fix_launch_tagged(f, &d32, threads, fv, tag[m], &kept[m]);
      if (!bad) fix_get(f, D[m], dd, sizeof D[m]);
    }
    emu__mma_general = 0;
    if (bad) {
      for (int j = 0; j <= m; j++) feat_free(&kept[j]);
      return;
    }
  }
  WORDS_EQ(f, "mma.m16n8k16 f16 / bf16 and m16n8k8 on random halves: the vector path (512-bit "
              "product) gives the general path's bits", D[0], D[2], 4 * 128);
  WORDS_EQ(f, "... and with the 256-bit product", D[1], D[2], 4 * 128);
  size_t differ = 0;
  for (size_t i = 0; i < kept[2].n; i++)
    for (int m = 0; m < 2; m++) differ += !(feat_get(&kept[m], kept[2].names[i], NAN) == kept[2].vals[i]);
  CHECK(differ == 0 && kept[0].n == kept[2].n && kept[2].n > 0,
        "the three paths count the same features (%zu differ)", differ);
  size_t nan = 0;
  for (int i = 0; i < 4 * 128; i++) nan += D[2][i] != D[2][i];
  CHECK(nan > 0 && nan < 4 * 128 * 3 / 4, "the random halves give NaNs and numbers (%zu NaN of 512)",
        nan);
  for (int m = 0; m < 3; m++) feat_free(&kept[m]);
}

static void test_mma_paths(void) { for_each_compiler("tensor", body_mma_paths); }

/* wmma.load / wmma.store as vector accesses where each lane's elements are
   16-byte runs at aligned addresses (emulator/emu_mma.c, wldst_vector),
   and wmma.mma without the general path's per-element switch (wmma_fast),
   against the general paths (emu__mma_general = 1): the same results and
   bytes; fewer accesses by what the layouts give.  In wmma_f16 the
   row-major A (16 elements a lane: 16 accesses -> 2), the row-major f32 C
   (8 -> 2), m32n8k16's row-major B (16 -> 2) and the row-major f16 store
   (8 -> 1) go as vectors; the column-major B, A and store stay element by
   element: 41 accesses fewer. */
static void body_wmma_paths(kfix *f, int threads, feat_vec *fv) {
  static unsigned short a[512], b[512], ch[3][256];
  static float c0[512], c[3][512];
  uint64_t s = 4321;
  for (int i = 0; i < 512; i++) a[i] = rand_half(&s, 0), b[i] = rand_half(&s, 0);
  for (int i = 0; i < 512; i++) c0[i] = unit_float(&s) * 100.0f;
  dims d32 = {{1, 1, 1}, {32, 1, 1}, 0};
  feat_vec kept[3]; /* emu__mma_general: the host's best, general, AVX2 only */
  for (int m = 0; m < 3; m++) {
    feat_init(&kept[m]);
    emu__mma_general = m;
    int bad = fix_kernel(f, WMMA_F16);
    if (!bad) {
      fix_buf(f, 0, a, sizeof a);
      fix_buf(f, 1, b, sizeof b);
      uint64_t cd = fix_buf(f, 2, c0, sizeof c0), hd = fix_buf(f, 3, NULL, sizeof ch[m]);
      static const char *const tag[] = {"vector", "general", "vector, AVX2"};
      bad = fix_launch_tagged(f, &d32, threads, fv, tag[m], &kept[m]);
      if (!bad) fix_get(f, c[m], cd, sizeof c[m]), fix_get(f, ch[m], hd, sizeof ch[m]);
    }
    emu__mma_general = 0;
    if (bad) {
      for (int j = 0; j <= m; j++) feat_free(&kept[j]);
      return;
    }
  }
  WORDS_EQ(f, "wmma f16 on random halves: vector loads and stores and the fast product give "
              "the general paths' f32 results", c[0], c[1], 512);
  WORDS_EQ(f, "... and f16 results", ch[0], ch[1], 256);
  WORDS_EQ(f, "... with the AVX2 product too (f32)", c[2], c[1], 512);
  WORDS_EQ(f, "... (f16)", ch[2], ch[1], 256);
  double acc0 = feat_get(&kept[0], "mem.global_accesses", -1);
  double acc1 = feat_get(&kept[1], "mem.global_accesses", -1);
  double by0 = feat_get(&kept[0], "mem.global_bytes", -1), by1 = feat_get(&kept[1], "mem.global_bytes", -1);
  CHECK(acc1 - acc0 == 41 && by0 == by1 && by0 > 0,
        "the vector layouts make 41 global accesses fewer, the same bytes (%g vs %g accesses, "
        "%g vs %g bytes)", acc0, acc1, by0, by1);
  CHECK(feat_get(&kept[0], "mem.global_sectors", -1) < feat_get(&kept[1], "mem.global_sectors", -1),
        "... and fewer sector requests (a row's 32 bytes once, not once an element)");
  feat_free(&kept[0]);
  feat_free(&kept[1]);
  feat_free(&kept[2]);
}

static void test_wmma_paths(void) { for_each_compiler("tensor", body_wmma_paths); }

static unsigned tf32_of(float x) { uint32_t u; memcpy(&u, &x, 4); return u & 0xFFFFE000u; }
static quad tf32q(float x) { uint32_t u = tf32_of(x); float g; memcpy(&g, &u, 4); return g; }

static void body_mma_forms(kfix *f, int threads, feat_vec *fv) {
  static float X[16 * 32], Y[32 * 8], out[256], want[256];
  static double Xd[16 * 32], Yd[32 * 8], outd[64], wantd[64];
  static signed char Xi[16 * 32], Yi[32 * 8];
  static int outi[128], wanti[128];
  static unsigned short Xh[256], Yh[128];
  static unsigned outh[64], wanth[64];
  uint64_t s = 99;
  for (int i = 0; i < 16 * 32; i++) {
    X[i] = unit_float(&s) * 3.0f;
    Xd[i] = (double)unit_float(&s) + (double)unit_float(&s) * 0x1p-30;
    Xi[i] = (signed char)(rng_next(&s) & 0xFF);
  }
  for (int i = 0; i < 32 * 8; i++) {
    Y[i] = unit_float(&s);
    Yd[i] = (double)unit_float(&s) + (double)unit_float(&s) * 0x1p-30;
    Yi[i] = (signed char)(rng_next(&s) & 0xFF);
  }
  for (int i = 0; i < 256; i++) Xh[i] = small_half(&s, F16);
  for (int i = 0; i < 128; i++) Yh[i] = small_half(&s, F16);
  for (int m = 0; m < 16; m++)
    for (int n = 0; n < 8; n++) {
      quad k8 = 0, k4 = 0, h = 0;
      long long acc = 0;
      for (int k = 0; k < 8; k++) {
        quad p = tf32q(X[m * 32 + k]) * tf32q(Y[k * 8 + n]);
        k8 += p;
        if (k < 4) k4 += p;
      }
      for (int k = 0; k < 32; k++) acc += (long long)Xi[m * 32 + k] * Yi[k * 8 + n];
      for (int k = 0; k < 16; k++) h += ref_decode(Xh[m * 16 + k], F16) * ref_decode(Yh[k * 8 + n], F16);
      want[m * 8 + n] = q2f(k8);
      want[128 + m * 8 + n] = q2f(k4);
      wanti[m * 8 + n] = (int)acc;
      unsigned hb = ref_round(h, F16);
      if (n % 2 == 0) wanth[m * 4 + n / 2] = hb;
      else wanth[m * 4 + n / 2] |= hb << 16;
    }
  for (int m = 0; m < 8; m++)
    for (int n = 0; n < 8; n++) {
      double d = 0;
      for (int k = 0; k < 4; k++) d = fma(Xd[m * 32 + k], Yd[k * 8 + n], d);
      wantd[m * 8 + n] = d;
    }
  if (fix_kernel(f, MMA_FORMS)) return;
  fix_buf(f, 0, X, sizeof X);
  fix_buf(f, 1, Y, sizeof Y);
  fix_buf(f, 2, Xd, sizeof Xd);
  fix_buf(f, 3, Yd, sizeof Yd);
  fix_buf(f, 4, Xi, sizeof Xi);
  fix_buf(f, 5, Yi, sizeof Yi);
  uint64_t o = fix_buf(f, 6, NULL, sizeof out), od = fix_buf(f, 7, NULL, sizeof outd);
  uint64_t oi = fix_buf(f, 8, NULL, sizeof outi), oh = fix_buf(f, 9, NULL, sizeof outh);
  fix_buf(f, 10, Xh, sizeof Xh);
  fix_buf(f, 11, Yh, sizeof Yh);
  dims d32 = {{1, 1, 1}, {32, 1, 1}, 0};
  if (fix_launch(f, &d32, threads, fv)) return;
  fix_get(f, out, o, sizeof out);
  fix_get(f, outd, od, sizeof outd);
  fix_get(f, outi, oi, sizeof outi);
  fix_get(f, outh, oh, sizeof outh);
  WORDS_EQ(f, "mma.m16n8k8.tf32 (13 low mantissa bits ignored)", out, want, 128);
  WORDS_EQ(f, "mma.m16n8k4.tf32", out + 128, want + 128, 128);
  WORDS_EQ(f, "mma.m8n8k4.f64 (fma in k order)", outd, wantd, 64);
  WORDS_EQ(f, "mma.m16n8k32.s32.s8", outi, wanti, 128);
  WORDS_EQ(f, "mma.m16n8k16.f16.f16 (f16 accumulator)", outh, wanth, 64);
  FEAT_EQ(f, fv, "tensor.flops", 2 * (16 * 8 * 8 + 16 * 8 * 4 + 8 * 8 * 4 + 16 * 8 * 32 + 16 * 8 * 16));
}

static void test_mma_forms(void) { for_each_compiler("tensor", body_mma_forms); }

static void body_wmma(kfix *f, int threads, feat_vec *fv) {
  static unsigned short a[512], b[512], ch[256], wch[256];
  static float c[512], c0[512], wc[512];
  uint64_t s = 1234;
  for (int i = 0; i < 512; i++) a[i] = small_half(&s, F16), b[i] = small_half(&s, F16);
  for (int i = 0; i < 512; i++) c0[i] = unit_float(&s);
  memcpy(wc, c0, sizeof wc);
  for (int m = 0; m < 16; m++)
    for (int n = 0; n < 16; n++) {
      quad acc = (quad)(0.5f * c0[m * 32 + n]);
      for (int k = 0; k < 16; k++)
        acc += ref_decode(a[m * 32 + k], F16) * ref_decode(b[n * 32 + k], F16);
      wc[n * 32 + m] = q2f(acc); /* stored column-major */
    }
  for (int m = 0; m < 32; m++)
    for (int n = 0; n < 8; n++) {
      quad acc = 1;
      for (int k = 0; k < 16; k++)
        acc += ref_decode(a[k * 32 + m], F16) * ref_decode(b[k * 32 + n], F16);
      wch[m * 8 + n] = (unsigned short)ref_round(acc, F16);
    }
  if (fix_kernel(f, WMMA_F16)) return;
  fix_buf(f, 0, a, sizeof a);
  fix_buf(f, 1, b, sizeof b);
  uint64_t cd = fix_buf(f, 2, c0, sizeof c0), hd = fix_buf(f, 3, NULL, sizeof ch);
  dims d32 = {{1, 1, 1}, {32, 1, 1}, 0};
  if (fix_launch_tagged(f, &d32, threads, fv, "f16", NULL)) return;
  fix_get(f, c, cd, sizeof c);
  fix_get(f, ch, hd, sizeof ch);
  /* column-major store over the row-major C: compare the 16 x 16 block */
  static float g1[256], w1[256];
  for (int n = 0; n < 16; n++)
    for (int m = 0; m < 16; m++) g1[n * 16 + m] = c[n * 32 + m], w1[n * 16 + m] = wc[n * 32 + m];
  WORDS_EQ(f, "wmma m16n16k16 f16 -> f32 (row A, col B, row C, col D, fragment scaled)", g1, w1, 256);
  WORDS_EQ(f, "wmma m32n8k16 f16 -> f16 (col A, row B, filled C)", ch, wch, 256);
  FEAT_EQ(f, fv, "f16/tensor.flops", 2 * (16 * 16 * 16 + 32 * 8 * 16));

  static unsigned short abf[512], bbf[512];
  static float af[512], bf[512], cbf[256], wbf[256], ctf[512], wtf[512];
  static double ad[256], bd[256], cdd[256], wd[256];
  static signed char ai[512], bi[512];
  static int ci[512], wi[512];
  for (int i = 0; i < 512; i++) {
    abf[i] = small_half(&s, BF16), bbf[i] = small_half(&s, BF16);
    af[i] = unit_float(&s), bf[i] = unit_float(&s);
    ai[i] = (signed char)rng_next(&s), bi[i] = (signed char)rng_next(&s);
  }
  for (int i = 0; i < 256; i++) ad[i] = unit_float(&s), bd[i] = (double)unit_float(&s) / 3;
  for (int m = 0; m < 8; m++)
    for (int n = 0; n < 32; n++) {
      quad acc = 0;
      for (int k = 0; k < 16; k++) acc += ref_decode(abf[m * 32 + k], BF16) * ref_decode(bbf[k * 32 + n], BF16);
      wbf[m * 32 + n] = q2f(acc);
    }
  /* __float_to_tf32: nearest, ties away, to 10 mantissa bits */
#define RNA(x) ({ uint32_t u_; float r_; memcpy(&u_, &(x), 4); u_ = (u_ + 0x1000u) & 0xFFFFE000u; memcpy(&r_, &u_, 4); r_; })
  for (int m = 0; m < 16; m++)
    for (int n = 0; n < 16; n++) {
      quad acc = 0;
      for (int k = 0; k < 8; k++) acc += (quad)RNA(af[m * 32 + k]) * (quad)RNA(bf[k * 32 + n]);
      wtf[m * 32 + n] = q2f(acc);
    }
  for (int m = 0; m < 8; m++)
    for (int n = 0; n < 8; n++) {
      double d = 0;
      for (int k = 0; k < 4; k++) d = fma(ad[m * 32 + k], bd[n * 32 + k], d);
      wd[m * 32 + n] = d;
    }
  for (int m = 0; m < 16; m++)
    for (int n = 0; n < 16; n++) {
      int acc = 7;
      for (int k = 0; k < 16; k++) acc += ai[m * 32 + k] * bi[n * 32 + k];
      wi[m * 32 + n] = acc;
    }
  if (fix_kernel(f, WMMA_OTHER)) return;
  fix_buf(f, 0, abf, sizeof abf);
  fix_buf(f, 1, bbf, sizeof bbf);
  fix_buf(f, 2, af, sizeof af);
  fix_buf(f, 3, bf, sizeof bf);
  fix_buf(f, 4, ad, sizeof ad);
  fix_buf(f, 5, bd, sizeof bd);
  fix_buf(f, 6, ai, sizeof ai);
  fix_buf(f, 7, bi, sizeof bi);
  uint64_t o1 = fix_buf(f, 8, NULL, sizeof cbf), o2 = fix_buf(f, 9, NULL, sizeof ctf);
  uint64_t o3 = fix_buf(f, 10, NULL, sizeof cdd), o4 = fix_buf(f, 11, NULL, sizeof ci);
  if (fix_launch_tagged(f, &d32, threads, fv, "other", NULL)) return;
  fix_get(f, cbf, o1, sizeof cbf);
  fix_get(f, ctf, o2, sizeof ctf);
  fix_get(f, cdd, o3, sizeof cdd);
  fix_get(f, ci, o4, sizeof ci);
  WORDS_EQ(f, "wmma m8n32k16 bf16", cbf, wbf, 256);
  static float g2[256], w2[256];
  static double g3[64], w3[64];
  static int g4[256], w4[256];
  for (int m = 0; m < 16; m++)
    for (int n = 0; n < 16; n++) {
      g2[m * 16 + n] = ctf[m * 32 + n], w2[m * 16 + n] = wtf[m * 32 + n];
      g4[m * 16 + n] = ci[m * 32 + n], w4[m * 16 + n] = wi[m * 32 + n];
    }
  for (int m = 0; m < 8; m++)
    for (int n = 0; n < 8; n++) g3[m * 8 + n] = cdd[m * 32 + n], w3[m * 8 + n] = wd[m * 32 + n];
  WORDS_EQ(f, "wmma m16n16k8 tf32 (cvt.rna.tf32.f32 on the fragments)", g2, w2, 256);
  WORDS_EQ(f, "wmma m8n8k4 f64 (col-major B)", g3, w3, 64);
  WORDS_EQ(f, "wmma m16n16k16 s8 -> s32", g4, w4, 256);
}

static void test_wmma(void) { for_each_compiler("tensor", body_wmma); }

static void body_async(kfix *f, int threads, feat_vec *fv) {
  static float src[128], dst[384], want[288];
  static unsigned short tr[256], wtr[256];
  for (int i = 0; i < 128; i++) src[i] = (float)i + 0.25f;
  for (int i = 0; i < 128; i++) want[i] = src[i];
  for (int l = 0; l < 32; l++) {
    int keep = l % 3;
    want[128 + 2 * l] = keep >= 1 ? src[2 * l] : 0;
    want[128 + 2 * l + 1] = keep >= 2 ? src[2 * l + 1] : 0;
    want[256 + l] = (l & 1) ? 0 : src[l];
  }
  for (int i = 0; i < 128; i++) wtr[i] = (unsigned short)i;
  for (int t = 0; t < 32; t++)
    for (int j = 0; j < 2; j++)
      for (int h = 0; h < 2; h++)
        wtr[128 + (8 * j + 2 * (t % 4) + h) * 8 + t / 4] = (unsigned short)(2 * t + h + 64 * j);
  if (fix_kernel(f, ASYNC_COPY)) return;
  fix_buf(f, 0, src, sizeof src);
  uint64_t dd = fix_buf(f, 1, NULL, sizeof dst), td = fix_buf(f, 2, NULL, sizeof tr);
  fix_u32(f, 3, 128);
  dims d32 = {{1, 1, 1}, {32, 1, 1}, 0};
  if (fix_launch(f, &d32, threads, fv)) return;
  fix_get(f, dst, dd, sizeof dst);
  fix_get(f, tr, td, sizeof tr);
  WORDS_EQ(f, "cp.async.cg 16 bytes", dst, want, 128);
  WORDS_EQ(f, "cp.async.ca 8 bytes with src-size 0, 4, 8 (zero fill)", dst + 128, want + 128, 64);
  WORDS_EQ(f, "cp.async.ca 4 bytes with ignore-src", dst + 256, want + 256, 32);
  WORDS_EQ(f, "stmatrix.x2 and stmatrix.x2.trans", tr, wtr, 256);
  /* the copies are the kernel's only global reads, counted as what they
     read: 16 bytes a lane, 8 for the 10 lanes of src-size 8 and 4 for the
     11 of src-size 4, 4 for the 16 lanes that do not ignore the source */
  FEAT_EQ(f, fv, "op.cp.async.cg.shared.global", 32);
  FEAT_EQ(f, fv, "mem.global_load_bytes", 32 * 16 + 10 * 8 + 11 * 4 + 16 * 4);
}

static void test_async_copy(void) { for_each_compiler("tensor", body_async); }

static void body_collectives(kfix *f, int threads, feat_vec *fv) {
  static unsigned in[32], out[6 * 32], want[6 * 32];
  uint64_t s = 8;
  for (int l = 0; l < 32; l++) in[l] = (unsigned)(rng_next(&s) & 0xFFFF);
  unsigned act = 0x77777777u, sum = 0, mx = 0, orv = 0;
  for (int l = 0; l < 32; l++)
    if (act >> l & 1) sum += in[l], mx = in[l] > mx ? in[l] : mx, orv |= in[l];
  memset(want, 0, sizeof want);
  for (int l = 0; l < 32; l++) {
    if (!(act >> l & 1)) continue;
    unsigned mm = 0;
    for (int k = 0; k < 32; k++)
      if ((act >> k & 1) && in[k] % 5 == in[l] % 5) mm |= 1u << k;
    want[l] = act, want[32 + l] = sum, want[64 + l] = mx, want[96 + l] = orv, want[128 + l] = mm;
    want[160 + l] = 0; /* elect: the lowest member, lane 0 */
  }
  if (fix_kernel(f, COLLECTIVES)) return;
  fix_buf(f, 0, in, sizeof in);
  uint64_t od = fix_buf(f, 1, NULL, sizeof out);
  dims d32 = {{1, 1, 1}, {32, 1, 1}, 0};
  if (fix_launch(f, &d32, threads, fv)) return;
  fix_get(f, out, od, sizeof out);
  WORDS_EQ(f, "activemask, redux add/max/or, match.any, elect on a diverged warp", out, want, 6 * 32);
}

static void test_collectives(void) { for_each_compiler("tensor", body_collectives); }

/* ------------------------------------------------ refused at load -- */

/* Load PTX text; the emu_module_load message (or "" when it loads). */
static int load_text(const char *body, char *msg, size_t cap) {
  char text[2048];
  snprintf(text, sizeof text,
           ".version 8.0\n.target sm_90a\n.address_size 64\n"
           ".visible .entry k(.param .u64 k_p)\n{\n.reg .b64 %%rd<4>;\n.reg .b32 %%r<20>;\n"
           ".reg .f32 %%f<8>;\n.reg .pred %%p<2>;\n.shared .align 8 .b64 bar;\n%s\nret;\n}\n",
           body);
  ptx_error pe;
  ptx_module *m = ptx_parse(text, strlen(text), "x.ptx", &pe);
  msg[0] = 0;
  if (!m) { snprintf(msg, cap, "parse: %s", pe.msg); return -1; }
  emu_device *d = emu_device_new();
  emu_module *em = NULL;
  int rc = emu_module_load(d, m, &em, msg, cap);
  if (rc == 0) msg[0] = 0;
  emu_module_free(em);
  emu_device_free(d);
  ptx_module_free(m);
  return rc;
}

static void test_refused_families(void) {
  static const struct { const char *body, *want; } cases[] = {
      {"wgmma.fence.sync.aligned;", "wgmma (warpgroup matrix multiply"},
      {"mbarrier.init.shared.b64 [bar], 32;", "mbarrier objects"},
      {"cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes [%rd1], "
       "[%rd2, {%r1}], [bar];", "TMA tensor copies"},
      {"cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%rd1], [%rd2], 64, "
       "[bar];", "completing on an mbarrier"},
      {"mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32 {%f0,%f1,%f2,%f3,%f4,%f5,%f6,%f7}, "
       "{%r0,%r1}, {%r2,%r3}, {%f0,%f1,%f2,%f3,%f4,%f5,%f6,%f7};", "mma shape/type not supported"},
      {"ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r0,%r1}, [%rd1];", "one register per matrix"},
      {"cp.async.ca.shared.global [%rd1], [%rd2], 12;", "cp-size must be 4, 8 or 16"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char msg[1024];
    int rc = load_text(cases[i].body, msg, sizeof msg);
    CHECK(rc != 0 && strstr(msg, cases[i].want) && strstr(msg, "x.ptx:"),
          "'%s' is refused at load, naming the line and '%s' (got: %s)", cases[i].body,
          cases[i].want, msg);
  }
  char msg[1024];
  CHECK(load_text("cp.async.commit_group;\ncp.async.wait_group 0;\ncp.async.wait_all;", msg,
                  sizeof msg) == 0,
        "commit_group, wait_group and wait_all load (%s)", msg);
}

/* An mma.sync by a warp with lanes missing fails, naming them. */
static void body_partial_warp(kfix *f, int threads, feat_vec *fv) {
  static unsigned short A[256], B[128];
  static float C[128];
  if (fix_kernel(f, MMA_PACKED)) return;
  fix_buf(f, 0, A, sizeof A);
  fix_buf(f, 1, B, sizeof B);
  fix_buf(f, 2, C, sizeof C);
  fix_buf(f, 3, NULL, 128 * 4);
  dims d16 = {{1, 1, 1}, {16, 1, 1}, 0};
  int rc = fix_launch_cfg(f, &d16, threads, 0, NULL, NULL);
  CHECK(rc != 0 && strstr(f->err, "lanes 0x0000ffff") && strstr(f->err, "every lane"),
        "%s.%s: mma.sync in a 16-thread block fails naming the lanes (%s)", f->corpus,
        f->compiler, f->err);
  dims d32 = {{1, 1, 1}, {32, 1, 1}, 0};
  fix_launch(f, &d32, threads, fv); /* and the whole warp runs it */
}

static void test_partial_warp(void) { for_each_compiler("tensor", body_partial_warp); }

/* The tensor kernels again under the race check: ldmatrix, stmatrix,
   cp.async and mma tiles in shared memory between barriers find no race
   (emu_fix.c asserts it for every launch). */
static void test_racecheck_tensor(void) {
  int was = fix_racecheck(FIX_RACE_CLEAN);
  for_each_compiler("tensor", body_mma);
  for_each_compiler("tensor", body_wmma);
  for_each_compiler("tensor", body_async);
  for_each_compiler("tensor", body_collectives);
  for_each_compiler("tensor", body_partial_warp);
  fix_racecheck(was);
}

TEST_SUITES(register_emu_tensor_tests) {
  CU_pSuite s = tests_suite("emu_tensor");
  TEST_ADD(s, test_reference_rounding);
  TEST_ADD(s, test_half);
  TEST_ADD(s, test_half_cvt);
  TEST_ADD(s, test_mma);
  TEST_ADD(s, test_mma_paths);
  TEST_ADD(s, test_mma_forms);
  TEST_ADD(s, test_wmma);
  TEST_ADD(s, test_wmma_paths);
  TEST_ADD(s, test_async_copy);
  TEST_ADD(s, test_collectives);
  TEST_ADD(s, test_refused_families);
  TEST_ADD(s, test_partial_warp);
  TEST_ADD(s, test_racecheck_tensor);
}
