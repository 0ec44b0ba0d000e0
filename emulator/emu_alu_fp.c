/*
 * emu_alu_fp.c -- floating-point instructions of the emulator's ALU: fp32
 * and fp64 add/sub/mul/fma/mad/div/min/max/abs/neg/copysign/testp, the
 * sqrt/rcp/rsqrt/sin/cos/ex2/lg2/tanh family (f16/f16x2/bf16/bf16x2 arithmetic
 * is emu_alu_f16.c's).  Selected by emu_alu_select() (emu_alu.c); the slot
 * encoding is in emu_int.h.
 *
 * Exactness.
 *   - fp32 .rn (and no rounding modifier): computed in float on SSE, so the
 *     result is the IEEE one bit for bit; fma/mad through fmaf (one rounding).
 *     NaN results are the canonical NaN 0x7FFFFFFF, as on NVIDIA GPUs.
 *     .ftz flushes subnormal inputs and results to zero of the same sign;
 *     .sat clamps to [+0.0, 1.0] with NaN -> +0.0.
 *   - fp32 .rz/.rm/.rp: in software, no change of the host rounding mode:
 *     the exact result is a double (products of floats are exact) plus the
 *     sign of the remainder (TwoSum for sums, an fma residual for div and
 *     sqrt), rounded by emu_fp_round() (emu_alu_cvt.c).  Bit-exact.
 *   - fp64 .rn: host double arithmetic and fma().  fp64 .rz/.rm/.rp: the host
 *     rounding mode is switched with fesetround() around the lane loop; every
 *     operand and result passes an asm barrier (the technique of glibc's
 *     math_opt_barrier) so that the compiler cannot move the arithmetic out
 *     of the region -- no -frounding-math needed.  fp64 NaNs are the host's.
 *   - .approx forms (sqrt, rcp, rsqrt, sin, cos, ex2, lg2, tanh, div.approx,
 *     div.full, rcp.approx.ftz.f64, rsqrt.approx.f64): computed in double
 *     (C library) and rounded once to the destination, i.e. within 1 ulp of
 *     the correctly rounded result (almost always equal to it) -- more
 *     accurate than the hardware, which the ISA bounds at 2 ulp or at an
 *     absolute error (sin, cos, lg2 ~2^-22).  Results are not the GPU's bit
 *     patterns; the emulator needs plausible values, not hardware identity.
 * min/max order -0.0 below +0.0; a NaN operand yields the other operand
 * (both NaN, or .NaN: the canonical NaN).
 */
#include "emulator/emu_alu.h"

#include <fenv.h>
#include <math.h>

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

#define CNAN32 0x7FFFFFFFu
#define CNAN64 0x7FFFFFFFFFFFFFFFull

/* ------------------------------------------------------------ fp32 -- */

static inline float fin(uint64_t x, int ftz) {
  uint32_t b = (uint32_t)x;
  if (ftz && (b & 0x7F800000u) == 0) b &= 0x80000000u;
  return alu_u2f(b);
}
static inline uint64_t fbits(uint32_t b, int ftz) {
  if (ftz && (b & 0x7F800000u) == 0) b &= 0x80000000u;
  if ((b & 0x7FFFFFFFu) > 0x7F800000u) b = CNAN32;
  return b;
}
static inline uint64_t fout(float f, int ftz, int sat) {
  if (sat) f = f > 0.0f ? (f < 1.0f ? f : 1.0f) : 0.0f;
  return fbits(alu_f2u(f), ftz);
}

#define F32_2(name, FTZ, SAT, EXPR)                                         \
  ALU_FN(name) {                                                            \
    const uint64_t *pa = SRC(0), *pb = SRC(1);                              \
    uint64_t *d = DST(0);                                                   \
    LANES(mask, float a = fin(pa[l], FTZ); float b = fin(pb[l], FTZ);       \
          d[l] = fout((EXPR), FTZ, SAT));                                   \
  }
#define F32_3(name, FTZ, SAT, EXPR)                                         \
  ALU_FN(name) {                                                            \
    const uint64_t *pa = SRC(0), *pb = SRC(1), *pc = SRC(2);                \
    uint64_t *d = DST(0);                                                   \
    LANES(mask, float a = fin(pa[l], FTZ); float b = fin(pb[l], FTZ);       \
          float c = fin(pc[l], FTZ); d[l] = fout((EXPR), FTZ, SAT));        \
  }
/* the four .ftz x .sat variants: name_n, name_f (ftz), name_s, name_fs */
#define F32_2X4(name, EXPR)                                                 \
  F32_2(name##_n, 0, 0, EXPR) F32_2(name##_f, 1, 0, EXPR)                   \
  F32_2(name##_s, 0, 1, EXPR) F32_2(name##_fs, 1, 1, EXPR)
#define F32_3X4(name, EXPR)                                                 \
  F32_3(name##_n, 0, 0, EXPR) F32_3(name##_f, 1, 0, EXPR)                   \
  F32_3(name##_s, 0, 1, EXPR) F32_3(name##_fs, 1, 1, EXPR)
#define X4(name) {name##_n, name##_f, name##_s, name##_fs}

/* add/sub/mul{.rn}{.ftz}{.sat}.f32, fma/mad{.rn}{.ftz}{.sat}.f32 */
F32_2X4(add_f32, a + b)
F32_2X4(sub_f32, a - b)
F32_2X4(mul_f32, a * b)
F32_3X4(fma_f32, fmaf(a, b, c))
/* The same fma handlers compiled for x86-64 CPUs with FMA (chosen at select
   time with __builtin_cpu_supports): fmaf becomes one instruction instead of
   a library call per lane, same results. */
#if defined(__x86_64__) && defined(__GNUC__)
#define ALU_FMA_TARGET 1
#pragma push_macro("ALU_CLONES")
#undef ALU_CLONES
#define ALU_CLONES
#define F32_3F(name, FTZ, SAT, EXPR) __attribute__((target("fma"))) F32_3(name, FTZ, SAT, EXPR)
F32_3F(fma_f32_n_hw, 0, 0, fmaf(a, b, c))
F32_3F(fma_f32_f_hw, 1, 0, fmaf(a, b, c))
F32_3F(fma_f32_s_hw, 0, 1, fmaf(a, b, c))
F32_3F(fma_f32_fs_hw, 1, 1, fmaf(a, b, c))
__attribute__((target("fma"))) ALU_FN(fma_f64_hw) {
  const uint64_t *pa = SRC(0), *pb = SRC(1), *pc = SRC(2);
  uint64_t *d = DST(0);
  LANES(mask, d[l] = alu_d2u(fma(alu_u2d(pa[l]), alu_u2d(pb[l]), alu_u2d(pc[l]))));
}
#pragma pop_macro("ALU_CLONES")
#endif

/* div{.rn,.approx,.full}{.ftz}.f32: the IEEE quotient */
F32_2(div_f32_n, 0, 0, a / b)
F32_2(div_f32_f, 1, 0, a / b)

/* min/max{.ftz}{.NaN}.f32 */
static inline float fmin_ptx(float a, float b, int nanp) {
  if (a != a || b != b) return (nanp || (a != a && b != b)) ? NAN : (a != a ? b : a);
  if (a == b) return signbit(a) ? a : b;
  return a < b ? a : b;
}
static inline float fmax_ptx(float a, float b, int nanp) {
  if (a != a || b != b) return (nanp || (a != a && b != b)) ? NAN : (a != a ? b : a);
  if (a == b) return signbit(a) ? b : a;
  return a > b ? a : b;
}
F32_2(min_f32_n, 0, 0, fmin_ptx(a, b, 0))
F32_2(min_f32_f, 1, 0, fmin_ptx(a, b, 0))
F32_2(min_f32_nn, 0, 0, fmin_ptx(a, b, 1))
F32_2(min_f32_fn, 1, 0, fmin_ptx(a, b, 1))
F32_2(max_f32_n, 0, 0, fmax_ptx(a, b, 0))
F32_2(max_f32_f, 1, 0, fmax_ptx(a, b, 0))
F32_2(max_f32_nn, 0, 0, fmax_ptx(a, b, 1))
F32_2(max_f32_fn, 1, 0, fmax_ptx(a, b, 1))

/* abs/neg{.ftz}.f32: sign bit only (NaN payloads kept) */
#define F32_1B(name, FTZ, EXPR)                                             \
  ALU_FN(name) {                                                            \
    const uint64_t *pa = SRC(0);                                            \
    uint64_t *d = DST(0);                                                   \
    LANES(mask, uint32_t a = alu_f2u(fin(pa[l], FTZ)); d[l] = (uint32_t)(EXPR)); \
  }
F32_1B(abs_f32_n, 0, a & 0x7FFFFFFFu)
F32_1B(abs_f32_f, 1, a & 0x7FFFFFFFu)
F32_1B(neg_f32_n, 0, a ^ 0x80000000u)
F32_1B(neg_f32_f, 1, a ^ 0x80000000u)

/* One-source fp32 functions with .ftz chosen per call: sqrt, rcp, rsqrt,
   sin, cos, ex2, lg2, tanh (the double ones are the .approx forms). */
#define F32_FN(name, EXPR)                                                  \
  ALU_FN(name) {                                                            \
    const uint64_t *pa = SRC(0);                                            \
    uint64_t *d = DST(0);                                                   \
    int ftz = (op->insn->flags & PTX_F_FTZ) != 0;                           \
    LANES(mask, float a = fin(pa[l], ftz); d[l] = fout((EXPR), ftz, 0));    \
  }
F32_FN(sqrt_f32, sqrtf(a))
F32_FN(rcp_f32, 1.0f / a)
F32_FN(rsqrt_f32, (float)(1.0 / sqrt((double)a)))
F32_FN(sin_f32, (float)sin((double)a))
F32_FN(cos_f32, (float)cos((double)a))
F32_FN(ex2_f32, (float)exp2((double)a))
F32_FN(lg2_f32, (float)log2((double)a))
F32_FN(tanh_f32, (float)tanh((double)a))

/* fp32 with .rz/.rm/.rp (software; see the file comment).  Operation codes: */
enum { FO_ADD, FO_SUB, FO_MUL, FO_FMA, FO_DIV, FO_SQRT, FO_RCP };

static inline int sgn_of(double x) { return (x > 0) - (x < 0); }

/* TwoSum: s = RN(x + y), return sign of the exact (x + y) - s. */
static inline int two_sum_dir(double x, double y, double *s) {
  double t = x + y, bb = t - x;
  double e = (x - (t - bb)) + (y - bb);
  *s = t;
  return sgn_of(e);
}

/* Exact result of fo on doubles holding float values, as s + dir. */
static double exact_f32(int fo, double x, double y, double z, int mode, int *dir) {
  double s;
  *dir = 0;
  switch (fo) {
  case FO_SUB: y = -y; /* fall through */
  case FO_ADD:
    *dir = two_sum_dir(x, y, &s);
    if (s == 0 && *dir == 0 && mode == EMU_RM_DN) s = -((-x) + (-y));
    return s;
  case FO_MUL: return x * y;
  case FO_FMA: {
    double p = x * y;
    *dir = two_sum_dir(p, z, &s);
    if (s == 0 && *dir == 0 && mode == EMU_RM_DN) s = -((-p) + (-z));
    return s;
  }
  case FO_DIV:
    s = x / y;
    if (isfinite(s) && s != 0) *dir = sgn_of(fma(-s, y, x)) * sgn_of(y);
    return s;
  case FO_RCP:
    s = 1.0 / x;
    if (isfinite(s) && s != 0) *dir = sgn_of(fma(-s, x, 1.0)) * sgn_of(x);
    return s;
  default: /* FO_SQRT */
    s = sqrt(x);
    if (isfinite(s) && s != 0) *dir = sgn_of(fma(-s, s, x));
    return s;
  }
}

#define F32_DIR(name, FO, NSRC)                                             \
  ALU_FN(name) {                                                            \
    const uint64_t *pa = SRC(0);                                            \
    const uint64_t *pb = NSRC > 1 ? SRC(1) : pa, *pc = NSRC > 2 ? SRC(2) : pa; \
    uint64_t *d = DST(0);                                                   \
    int ftz = (op->insn->flags & PTX_F_FTZ) != 0;                           \
    int sat = (op->insn->flags & PTX_F_SAT) != 0;                           \
    int mode = emu_fp_mode(op->insn->rnd);                                  \
    LANES(mask, {                                                           \
      int dir;                                                              \
      double s = exact_f32(FO, fin(pa[l], ftz), fin(pb[l], ftz),            \
                           fin(pc[l], ftz), mode, &dir);                    \
      uint32_t v = (uint32_t)emu_fp_round(s, dir, EMU_FMT_F32, mode);       \
      d[l] = sat ? fout(alu_u2f(v), ftz, 1) : fbits(v, ftz);                \
    });                                                                     \
  }
F32_DIR(add_f32_dir, FO_ADD, 2)
F32_DIR(sub_f32_dir, FO_SUB, 2)
F32_DIR(mul_f32_dir, FO_MUL, 2)
F32_DIR(fma_f32_dir, FO_FMA, 3)
F32_DIR(div_f32_dir, FO_DIV, 2)
F32_DIR(sqrt_f32_dir, FO_SQRT, 1)
F32_DIR(rcp_f32_dir, FO_RCP, 1)

/* ------------------------------------------------------------ fp64 -- */

#define F64_2(name, EXPR)                                                   \
  ALU_FN(name) {                                                            \
    const uint64_t *pa = SRC(0), *pb = SRC(1);                              \
    uint64_t *d = DST(0);                                                   \
    LANES(mask, double a = alu_u2d(pa[l]); double b = alu_u2d(pb[l]);       \
          d[l] = alu_d2u(EXPR));                                            \
  }
F64_2(add_f64, a + b)
F64_2(sub_f64, a - b)
F64_2(mul_f64, a * b)
F64_2(div_f64, a / b)
ALU_FN(fma_f64) {
  const uint64_t *pa = SRC(0), *pb = SRC(1), *pc = SRC(2);
  uint64_t *d = DST(0);
  LANES(mask, d[l] = alu_d2u(fma(alu_u2d(pa[l]), alu_u2d(pb[l]), alu_u2d(pc[l]))));
}

static inline uint64_t dmin_ptx(double a, double b, int nanp) {
  if (a != a || b != b)
    return (nanp || (a != a && b != b)) ? CNAN64 : alu_d2u(a != a ? b : a);
  if (a == b) return alu_d2u(signbit(a) ? a : b);
  return alu_d2u(a < b ? a : b);
}
static inline uint64_t dmax_ptx(double a, double b, int nanp) {
  if (a != a || b != b)
    return (nanp || (a != a && b != b)) ? CNAN64 : alu_d2u(a != a ? b : a);
  if (a == b) return alu_d2u(signbit(a) ? b : a);
  return alu_d2u(a > b ? a : b);
}
#define F64_2B(name, EXPR)                                                  \
  ALU_FN(name) {                                                            \
    const uint64_t *pa = SRC(0), *pb = SRC(1);                              \
    uint64_t *d = DST(0);                                                   \
    LANES(mask, double a = alu_u2d(pa[l]); double b = alu_u2d(pb[l]); d[l] = (EXPR)); \
  }
F64_2B(min_f64, dmin_ptx(a, b, 0))
F64_2B(max_f64, dmax_ptx(a, b, 0))
F64_2B(min_f64_nan, dmin_ptx(a, b, 1))
F64_2B(max_f64_nan, dmax_ptx(a, b, 1))

static inline double dftz(double x, int ftz) {
  uint64_t b = alu_d2u(x);
  if (ftz && (b & 0x7FF0000000000000ull) == 0) b &= 0x8000000000000000ull;
  return alu_u2d(b);
}
#define F64_1(name, EXPR)                                                   \
  ALU_FN(name) {                                                            \
    const uint64_t *pa = SRC(0);                                            \
    uint64_t *d = DST(0);                                                   \
    int ftz = (op->insn->flags & PTX_F_FTZ) != 0;                           \
    LANES(mask, double a = dftz(alu_u2d(pa[l]), ftz); d[l] = alu_d2u(dftz((EXPR), ftz))); \
  }
F64_1(sqrt_f64, sqrt(a))
F64_1(rcp_f64, 1.0 / a)
F64_1(rsqrt_f64, 1.0 / sqrt(a))
ALU_FN(abs_f64) {
  const uint64_t *pa = SRC(0);
  uint64_t *d = DST(0);
  LANES(mask, d[l] = pa[l] & 0x7FFFFFFFFFFFFFFFull);
}
ALU_FN(neg_f64) {
  const uint64_t *pa = SRC(0);
  uint64_t *d = DST(0);
  LANES(mask, d[l] = pa[l] ^ 0x8000000000000000ull);
}

/* fp64 with .rz/.rm/.rp: host rounding mode around the loop (see top). */
#define OPT_BARRIER(x) __asm__ volatile("" : "+m"(x) : : "memory")
static int fe_of(unsigned rnd) {
  switch (rnd) {
  case PTX_RND_RZ: return FE_TOWARDZERO;
  case PTX_RND_RM: return FE_DOWNWARD;
  case PTX_RND_RP: return FE_UPWARD;
  default: return FE_TONEAREST;
  }
}
#define F64_DIR(name, NSRC, EXPR)                                           \
  ALU_FN(name) {                                                            \
    const uint64_t *pa = SRC(0);                                            \
    const uint64_t *pb = NSRC > 1 ? SRC(1) : pa, *pc = NSRC > 2 ? SRC(2) : pa; \
    uint64_t *d = DST(0);                                                   \
    int old = fegetround();                                                 \
    fesetround(fe_of(op->insn->rnd));                                       \
    LANES(mask, {                                                           \
      double a = alu_u2d(pa[l]), b = alu_u2d(pb[l]), c = alu_u2d(pc[l]);    \
      OPT_BARRIER(a); OPT_BARRIER(b); OPT_BARRIER(c);                       \
      double v = (EXPR);                                                    \
      OPT_BARRIER(v);                                                       \
      d[l] = alu_d2u(v);                                                    \
    });                                                                     \
    fesetround(old);                                                        \
  }
F64_DIR(add_f64_dir, 2, a + b)
F64_DIR(sub_f64_dir, 2, a - b)
F64_DIR(mul_f64_dir, 2, a * b)
F64_DIR(div_f64_dir, 2, a / b)
F64_DIR(fma_f64_dir, 3, fma(a, b, c))
F64_DIR(sqrt_f64_dir, 1, sqrt(a))
F64_DIR(rcp_f64_dir, 1, 1.0 / a)

/* --------------------------------------------------- f32/f64 misc -- */

/* copysign.T d, a, b: b with the sign of a */
ALU_FN(copysign_f32) {
  const uint64_t *pa = SRC(0), *pb = SRC(1);
  uint64_t *d = DST(0);
  LANES(mask, d[l] = ((uint32_t)pa[l] & 0x80000000u) | ((uint32_t)pb[l] & 0x7FFFFFFFu));
}
ALU_FN(copysign_f64) {
  const uint64_t *pa = SRC(0), *pb = SRC(1);
  uint64_t *d = DST(0);
  LANES(mask, d[l] = (pa[l] & 0x8000000000000000ull) | (pb[l] & 0x7FFFFFFFFFFFFFFFull));
}

/* testp.PROP.T p, a: class test on the bits (exponent e, mantissa m) */
#define GEN_TESTP(name, RD, EM, MM)                                         \
  ALU_FN(name) {                                                            \
    const uint64_t *pa = SRC(0);                                            \
    uint64_t *d = DST(0);                                                   \
    unsigned prop = op->insn->aux;                                          \
    LANES(mask, {                                                           \
      uint64_t x = RD(pa[l]), e = x & (EM), m = x & (MM);                   \
      int v;                                                                \
      switch (prop) {                                                       \
      case PTX_AUX_FINITE: v = e != (EM); break;                            \
      case PTX_AUX_INFINITE: v = e == (EM) && m == 0; break;                \
      case PTX_AUX_NUMBER: v = !(e == (EM) && m != 0); break;               \
      case PTX_AUX_NOTANUMBER: v = e == (EM) && m != 0; break;              \
      case PTX_AUX_NORMAL: v = e != 0 && e != (EM); break;                  \
      default: v = e == 0 && m != 0; break; /* subnormal */                 \
      }                                                                     \
      d[l] = (uint64_t)v;                                                   \
    });                                                                     \
  }
#define RD32(x) ((uint64_t)(uint32_t)(x))
#define RD64(x) ((uint64_t)(x))
GEN_TESTP(testp_f32, RD32, 0x7F800000ull, 0x007FFFFFull)
GEN_TESTP(testp_f64, RD64, 0x7FF0000000000000ull, 0x000FFFFFFFFFFFFFull)

/* ------------------------------------------------------------ select -- */

#define FAIL(msg) do { *why = (msg); return NULL; } while (0)
#define NEED(cond, msg) do { if (!(cond)) FAIL(msg); } while (0)

static int directed(unsigned rnd) {
  return rnd == PTX_RND_RZ || rnd == PTX_RND_RM || rnd == PTX_RND_RP;
}

emu_alu_fn emu_alu_select_fp(const ptx_insn *i, unsigned nd, unsigned ns,
                             const char **why) {
  unsigned t = i->type;
  uint32_t fl = i->flags;
  int ftz = (fl & PTX_F_FTZ) != 0, sat = (fl & PTX_F_SAT) != 0;
  int v4 = ftz + 2 * sat; /* index into the X4 tables */
  int dir = directed(i->rnd);
  if (t == PTX_T_F16 || t == PTX_T_F16X2 || t == PTX_T_BF16 || t == PTX_T_BF16X2)
    return emu_alu_select_half(i, nd, ns, why); /* emu_alu_f16.c */
  if (t == PTX_T_TF32) FAIL("tf32 arithmetic: not supported");
  NEED(t == PTX_T_F32 || t == PTX_T_F64, "floating-point type not supported");
  int f64 = t == PTX_T_F64;
  NEED(!f64 || (!ftz && !sat) || i->op == PTX_OP_RCP || i->op == PTX_OP_RSQRT,
       "f64: .ftz/.sat not defined here");
  NEED(i->rnd == PTX_RND_NONE || i->rnd <= PTX_RND_RP, "rounding mode not valid for this instruction");
  NEED(nd == 1, "expected 1 destination");
  switch (i->op) {
  case PTX_OP_ADD: case PTX_OP_SUB: case PTX_OP_MUL: {
    NEED(ns == 2, "add/sub/mul: expected 2 sources");
    int o = i->op == PTX_OP_ADD ? 0 : i->op == PTX_OP_SUB ? 1 : 2;
    if (f64) {
      if (dir) return (emu_alu_fn[3]){add_f64_dir, sub_f64_dir, mul_f64_dir}[o];
      return (emu_alu_fn[3]){add_f64, sub_f64, mul_f64}[o];
    }
    if (dir) return (emu_alu_fn[3]){add_f32_dir, sub_f32_dir, mul_f32_dir}[o];
    static const emu_alu_fn t4[3][4] = {X4(add_f32), X4(sub_f32), X4(mul_f32)};
    return t4[o][v4];
  }
  case PTX_OP_FMA: case PTX_OP_MAD: {
    NEED(ns == 3, "fma/mad: expected 3 sources");
    if (dir) return f64 ? fma_f64_dir : fma_f32_dir;
#ifdef ALU_FMA_TARGET
    if (__builtin_cpu_supports("fma")) {
      static const emu_alu_fn h4[4] = {fma_f32_n_hw, fma_f32_f_hw, fma_f32_s_hw, fma_f32_fs_hw};
      return f64 ? fma_f64_hw : h4[v4];
    }
#endif
    if (f64) return fma_f64;
    static const emu_alu_fn t4[4] = X4(fma_f32);
    return t4[v4];
  }
  case PTX_OP_DIV:
    NEED(ns == 2, "div: expected 2 sources");
    if (f64) {
      NEED(!(fl & (PTX_F_APPROX | PTX_F_FULL)), "div.approx.f64: not defined");
      return dir ? div_f64_dir : div_f64;
    }
    NEED(!sat, "div.sat: not defined");
    if (dir) return div_f32_dir;
    return ftz ? div_f32_f : div_f32_n;
  case PTX_OP_MIN: case PTX_OP_MAX: {
    NEED(ns == 2, "min/max: only the two-input form is supported for floats");
    NEED(!(fl & PTX_F_RELU), "min/max.relu: not defined for f32/f64");
    int mx = i->op == PTX_OP_MAX, nanp = (fl & PTX_F_NAN) != 0;
    if (f64) return mx ? (nanp ? max_f64_nan : max_f64) : (nanp ? min_f64_nan : min_f64);
    static const emu_alu_fn tmin[4] = {min_f32_n, min_f32_f, min_f32_nn, min_f32_fn};
    static const emu_alu_fn tmax[4] = {max_f32_n, max_f32_f, max_f32_nn, max_f32_fn};
    return (mx ? tmax : tmin)[ftz + 2 * nanp];
  }
  case PTX_OP_ABS: case PTX_OP_NEG:
    NEED(ns == 1, "abs/neg: expected 1 source");
    if (f64) return i->op == PTX_OP_ABS ? abs_f64 : neg_f64;
    if (i->op == PTX_OP_ABS) return ftz ? abs_f32_f : abs_f32_n;
    return ftz ? neg_f32_f : neg_f32_n;
  case PTX_OP_SQRT: case PTX_OP_RCP:
    NEED(ns == 1, "sqrt/rcp: expected 1 source");
    if (f64) {
      if (fl & PTX_F_APPROX) {
        NEED(i->op == PTX_OP_RCP, "sqrt.approx.f64: not defined");
        return rcp_f64;
      }
      if (dir) return i->op == PTX_OP_SQRT ? sqrt_f64_dir : rcp_f64_dir;
      return i->op == PTX_OP_SQRT ? sqrt_f64 : rcp_f64;
    }
    if (dir) return i->op == PTX_OP_SQRT ? sqrt_f32_dir : rcp_f32_dir;
    return i->op == PTX_OP_SQRT ? sqrt_f32 : rcp_f32;
  case PTX_OP_RSQRT:
    NEED(ns == 1, "rsqrt: expected 1 source");
    return f64 ? rsqrt_f64 : rsqrt_f32;
  case PTX_OP_SIN: case PTX_OP_COS: case PTX_OP_EX2: case PTX_OP_LG2:
  case PTX_OP_TANH:
    NEED(ns == 1, "expected 1 source");
    NEED(!f64, "sin/cos/ex2/lg2/tanh: only .f32 is defined");
    switch (i->op) {
    case PTX_OP_SIN: return sin_f32;
    case PTX_OP_COS: return cos_f32;
    case PTX_OP_EX2: return ex2_f32;
    case PTX_OP_LG2: return lg2_f32;
    default: return tanh_f32;
    }
  case PTX_OP_COPYSIGN:
    NEED(ns == 2, "copysign: expected 2 sources");
    return f64 ? copysign_f64 : copysign_f32;
  case PTX_OP_TESTP:
    NEED(ns == 1, "testp: expected 1 source");
    NEED(i->aux >= PTX_AUX_FINITE && i->aux <= PTX_AUX_SUBNORMAL, "testp: property missing");
    return f64 ? testp_f64 : testp_f32;
  default:
    FAIL("floating-point instruction not supported");
  }
}
