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

TEST_SUITES(register_emu_tensor_tests) {
  CU_pSuite s = tests_suite("emu_tensor");
  TEST_ADD(s, test_reference_rounding);
  TEST_ADD(s, test_half);
  TEST_ADD(s, test_half_cvt);
}
