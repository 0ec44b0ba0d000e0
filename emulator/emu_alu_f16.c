/*
 * emu_alu_f16.c -- half-precision instructions of the emulator's ALU:
 * arithmetic, comparisons and the approximate functions on .f16, .f16x2,
 * .bf16 and .bf16x2, and the half-precision adds of atom/red (for the
 * engine).  Selected by emu_alu_select() and emu_alu_select_fp(); the slot
 * encoding is in emu_int.h (a half in the low 16 bits, a pair in 32 bits,
 * element 0 in bits 0..15).
 *
 * What programs run here: nvcc's cuda_fp16.h and cuda_bf16.h turn __half
 * and __nv_bfloat16 arithmetic into inline PTX -- add/sub/mul/fma with
 * .rn, .sat and .relu, min/max (.NaN), neg/abs, set and setp with half
 * results or packed sources (set.eq.f16.f16 builds the 0/1 of
 * __heq, set.lt.u32.f16x2 the masks of __hlt2_mask), ex2/tanh .approx,
 * and atom.add.noftz on halves and pairs.  Every form the ISA defines for
 * these types is accepted; anything else is refused at load with a reason.
 *
 * Exactness (PTX ISA, half-precision floating-point instructions).
 *   - add, sub, mul, fma: the operands are decoded exactly into doubles,
 *     the exact result is formed (products of halves are exact in double;
 *     sums through TwoSum, whose error term gives the direction of the
 *     remainder) and rounded once by emu_fp_round() in the instruction's
 *     mode: bit-exact against IEEE 754 binary16 / bfloat16 arithmetic.
 *   - .ftz flushes subnormal inputs and results to zero of the same sign
 *     (.f16 only; .bf16 arithmetic has no .ftz); .sat clamps to [0, 1]
 *     with NaN -> +0; .relu makes a negative result (and -0) +0, a NaN the
 *     canonical NaN.  A NaN result is the canonical NaN 0x7FFF.
 *   - min/max: -0 below +0; a NaN operand yields the other (both NaN, or
 *     .NaN: the canonical NaN).
 *   - comparisons decode both halves exactly and compare as the fp32 ones
 *     do (unordered forms true on NaN); set writes 1.0 / 0.0 in the
 *     destination's half format, 0xFFFF / 0xFFFFFFFF for integers (per
 *     half of a packed source); setp of a pair writes half 0's result to
 *     p and half 1's to q, each combined with the optional predicate.
 *   - ex2.approx, tanh.approx: computed in double and rounded once to the
 *     half format (within 1 ulp of the exact value, as the fp32 .approx
 *     forms of emu_alu_fp.c; the hardware's bound is looser).
 */
#include "emulator/emu_alu.h"

#include <math.h>

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

#define HNAN 0x7FFFu

static inline int sgn_of(double x) { return (x > 0) - (x < 0); }

/* TwoSum: s = RN(x + y), return the sign of the exact (x + y) - s. */
static inline int two_sum_dir(double x, double y, double *s) {
  double t = x + y, bb = t - x;
  double e = (x - (t - bb)) + (y - bb);
  *s = t;
  return sgn_of(e);
}

static int is_bf(unsigned t) { return t == PTX_T_BF16 || t == PTX_T_BF16X2; }
static int is_pair(unsigned t) { return t == PTX_T_F16X2 || t == PTX_T_BF16X2; }
static int is_half(unsigned t) {
  return t == PTX_T_F16 || t == PTX_T_F16X2 || t == PTX_T_BF16 || t == PTX_T_BF16X2;
}

/* ------------------------------------------------------- arithmetic -- */

enum { HO_ADD, HO_SUB, HO_MUL, HO_FMA, HO_MIN, HO_MAX, HO_NEG, HO_ABS, HO_EX2, HO_TANH };

typedef struct hparams { int fmt, nh, ftz, sat, relu, nanp, mode; } hparams;

static hparams hparams_of(const ptx_insn *i) {
  hparams h;
  h.fmt = is_bf(i->type) ? EMU_FMT_BF16 : EMU_FMT_F16;
  h.nh = is_pair(i->type) ? 2 : 1;
  h.ftz = (i->flags & PTX_F_FTZ) != 0;
  h.sat = (i->flags & PTX_F_SAT) != 0;
  h.relu = (i->flags & PTX_F_RELU) != 0;
  h.nanp = (i->flags & PTX_F_NAN) != 0;
  h.mode = emu_fp_mode(i->rnd);
  return h;
}

/* Exponent bits of the format: f16 14..10, bf16 14..7. */
static inline uint32_t hexp_mask(int fmt) { return fmt == EMU_FMT_F16 ? 0x7C00u : 0x7F80u; }

static inline double hin(uint32_t b, int fmt, int ftz) {
  if (ftz && (b & hexp_mask(fmt)) == 0) b &= 0x8000u;
  return emu_fp_decode(b, fmt);
}

static uint32_t half_op(int ho, uint32_t ab, uint32_t bb, uint32_t cb, const hparams *h) {
  if (ho == HO_NEG) return ab ^ 0x8000u;
  if (ho == HO_ABS) return ab & 0x7FFFu;
  double a = hin(ab, h->fmt, h->ftz), b = hin(bb, h->fmt, h->ftz), c = hin(cb, h->fmt, h->ftz), s;
  int dir = 0;
  switch (ho) {
  case HO_ADD: case HO_SUB:
    if (ho == HO_SUB) b = -b;
    dir = two_sum_dir(a, b, &s);
    if (s == 0 && dir == 0 && h->mode == EMU_RM_DN) s = -((-a) + (-b));
    break;
  case HO_MUL: s = a * b; break;
  case HO_FMA: {
    double p = a * b;
    dir = two_sum_dir(p, c, &s);
    if (s == 0 && dir == 0 && h->mode == EMU_RM_DN) s = -((-p) + (-c));
    break;
  }
  case HO_MIN: case HO_MAX:
    if (a != a || b != b) {
      if (h->nanp || (a != a && b != b)) return HNAN;
      s = a != a ? b : a;
    } else if (a == b) {
      s = (ho == HO_MIN) == (signbit(a) != 0) ? a : b;
    } else {
      s = (ho == HO_MIN) == (a < b) ? a : b;
    }
    break;
  case HO_EX2: s = exp2(a); break;
  case HO_TANH: s = tanh(a); break;
  default: s = 0; break;
  }
  if (h->sat) {
    if (s != s) s = 0;
    else if (s <= 0) { s = 0; dir = 0; }
    else if (s >= 1) { s = 1; dir = 0; }
  }
  if (h->relu && s == s && (s < 0 || (s == 0 && dir <= 0))) { s = 0; dir = 0; }
  uint32_t v = (uint32_t)emu_fp_round(s, dir, h->fmt, h->mode);
  if (h->ftz && (v & hexp_mask(h->fmt)) == 0) v &= 0x8000u;
  return v;
}

#define HALF_FN(name, HO)                                                   \
  ALU_FN(name) {                                                            \
    hparams h = hparams_of(op->insn);                                       \
    unsigned ns = op->ns;                                                   \
    const uint64_t *pa = SRC(0);                                            \
    const uint64_t *pb = ns > 1 ? SRC(1) : pa, *pc = ns > 2 ? SRC(2) : pa;  \
    uint64_t *d = DST(0);                                                   \
    LANES(mask, {                                                           \
      uint32_t v = 0;                                                       \
      for (int k = 0; k < h.nh; k++) {                                      \
        unsigned sh = 16u * (unsigned)k;                                    \
        v |= half_op(HO, (uint32_t)(pa[l] >> sh) & 0xFFFF,                  \
                     (uint32_t)(pb[l] >> sh) & 0xFFFF,                      \
                     (uint32_t)(pc[l] >> sh) & 0xFFFF, &h) << sh;           \
      }                                                                     \
      d[l] = v;                                                             \
    });                                                                     \
  }
HALF_FN(add_h, HO_ADD)
HALF_FN(sub_h, HO_SUB)
HALF_FN(mul_h, HO_MUL)
HALF_FN(fma_h, HO_FMA)
HALF_FN(min_h, HO_MIN)
HALF_FN(max_h, HO_MAX)
HALF_FN(neg_h, HO_NEG)
HALF_FN(abs_h, HO_ABS)
HALF_FN(ex2_h, HO_EX2)
HALF_FN(tanh_h, HO_TANH)

/* ------------------------------------------------------- comparisons -- */

static int hcmp(unsigned cmp, double a, double b) {
  switch (cmp) {
  case PTX_CMP_EQ: return a == b;
  case PTX_CMP_NE: return a != b && a == a && b == b;
  case PTX_CMP_LT: return a < b;
  case PTX_CMP_LE: return a <= b;
  case PTX_CMP_GT: return a > b;
  case PTX_CMP_GE: return a >= b;
  case PTX_CMP_EQU: return !(a < b || a > b);
  case PTX_CMP_NEU: return a != b;
  case PTX_CMP_LTU: return !(a >= b);
  case PTX_CMP_LEU: return !(a > b);
  case PTX_CMP_GTU: return !(a <= b);
  case PTX_CMP_GEU: return !(a < b);
  case PTX_CMP_NUM: return a == a && b == b;
  case PTX_CMP_NAN: return a != a || b != b;
  default: return 0;
  }
}

/* The comparison of half k of sources 0 and 1 of lane l, combined with the
   optional predicate (source 2). */
static inline int hcmp_lane(const uint64_t *restrict r, const emu_op *op, unsigned l, unsigned k,
                            int fmt, int ftz) {
  const ptx_insn *i = op->insn;
  unsigned sh = 16u * k;
  double a = hin((uint32_t)(SRC(0)[l] >> sh) & 0xFFFF, fmt, ftz);
  double b = hin((uint32_t)(SRC(1)[l] >> sh) & 0xFFFF, fmt, ftz);
  int t = hcmp(i->cmp, a, b);
  if (i->boolop && op->ns > 2) {
    int c = (int)((SRC(2)[l] ^ ((op->sneg >> 2) & 1)) & 1);
    t = i->boolop == PTX_AUX_AND ? t & c : i->boolop == PTX_AUX_OR ? t | c : t ^ c;
  }
  return t;
}

/* setp.CMP{.BOOL}{.ftz}.{f16,bf16,f16x2,bf16x2} p[|q], a, b{, {!}c} */
ALU_FN(setp_h) {
  const ptx_insn *i = op->insn;
  int fmt = is_bf(i->type) ? EMU_FMT_BF16 : EMU_FMT_F16, ftz = (i->flags & PTX_F_FTZ) != 0;
  int pair = is_pair(i->type), q = op->nd > 1 && op->d[1] != EMU_NOSLOT;
  uint64_t *p = DST(0), *pq = q ? DST(1) : NULL;
  LANES(mask, {
    int t0 = hcmp_lane(r, op, l, 0, fmt, ftz);
    p[l] = (uint64_t)t0;
    if (pq) {
      if (pair) {
        pq[l] = (uint64_t)hcmp_lane(r, op, l, 1, fmt, ftz);
      } else {
        /* q = !t BOOL c */
        double a = hin((uint32_t)SRC(0)[l] & 0xFFFF, fmt, ftz);
        double b = hin((uint32_t)SRC(1)[l] & 0xFFFF, fmt, ftz);
        int nt = !hcmp(i->cmp, a, b);
        if (i->boolop && op->ns > 2) {
          int c = (int)((SRC(2)[l] ^ ((op->sneg >> 2) & 1)) & 1);
          nt = i->boolop == PTX_AUX_AND ? nt & c : i->boolop == PTX_AUX_OR ? nt | c : nt ^ c;
        }
        pq[l] = (uint64_t)nt;
      }
    }
  });
}

/* set.CMP{.BOOL}{.ftz}.DTYPE.STYPE d, a, b{, {!}c} with a half source or a
   half destination: per half of a pair, packed. */
ALU_FN(set_h) {
  const ptx_insn *i = op->insn;
  unsigned st = i->type2, dt = i->type;
  int fmt = is_bf(st) ? EMU_FMT_BF16 : EMU_FMT_F16, ftz = (i->flags & PTX_F_FTZ) != 0;
  int nh = is_pair(st) ? 2 : 1;
  uint32_t one;
  switch (dt) {
  case PTX_T_F16: case PTX_T_F16X2: one = 0x3C00u; break;
  case PTX_T_BF16: case PTX_T_BF16X2: one = 0x3F80u; break;
  case PTX_T_F32: one = 0x3F800000u; break;
  case PTX_T_U16: case PTX_T_S16: case PTX_T_B16: one = 0xFFFFu; break;
  default: one = nh == 2 ? 0xFFFFu : 0xFFFFFFFFu; break;
  }
  uint64_t *d = DST(0);
  LANES(mask, {
    uint32_t v = 0;
    for (int k = 0; k < nh; k++)
      if (hcmp_lane(r, op, l, (unsigned)k, fmt, ftz)) v |= one << (16 * k);
    d[l] = v;
  });
}

/* ------------------------------------------------------------ select -- */

#define FAIL(msg) do { *why = (msg); return NULL; } while (0)
#define NEED(cond, msg) do { if (!(cond)) FAIL(msg); } while (0)

static int directed(unsigned rnd) {
  return rnd == PTX_RND_RZ || rnd == PTX_RND_RM || rnd == PTX_RND_RP;
}

emu_alu_fn emu_alu_select_half(const ptx_insn *i, unsigned nd, unsigned ns, const char **why) {
  NEED(nd == 1, "f16/bf16 arithmetic: expected 1 destination");
  if (i->op == PTX_OP_EX2 || i->op == PTX_OP_TANH) {
    NEED(ns == 1, "ex2/tanh: expected 1 source");
    NEED(i->flags & PTX_F_APPROX, "ex2/tanh on f16/bf16: only .approx is defined");
    return i->op == PTX_OP_EX2 ? ex2_h : tanh_h;
  }
  NEED(i->rnd == PTX_RND_NONE || i->rnd == PTX_RND_RN || directed(i->rnd),
       "f16/bf16 arithmetic: rounding mode not supported");
  switch (i->op) {
  case PTX_OP_ADD: NEED(ns == 2, "add: expected 2 sources"); return add_h;
  case PTX_OP_SUB: NEED(ns == 2, "sub: expected 2 sources"); return sub_h;
  case PTX_OP_MUL: NEED(ns == 2, "mul: expected 2 sources"); return mul_h;
  case PTX_OP_FMA: NEED(ns == 3, "fma: expected 3 sources"); return fma_h;
  case PTX_OP_MIN: NEED(ns == 2, "min: only the two-input form"); return min_h;
  case PTX_OP_MAX: NEED(ns == 2, "max: only the two-input form"); return max_h;
  case PTX_OP_NEG: NEED(ns == 1, "neg: expected 1 source"); return neg_h;
  case PTX_OP_ABS: NEED(ns == 1, "abs: expected 1 source"); return abs_h;
  case PTX_OP_MAD: FAIL("mad: not defined for f16/bf16");
  default: FAIL("f16/bf16: instruction not supported for this type");
  }
}

emu_alu_fn emu_alu_select_half_cmp(const ptx_insn *i, unsigned nd, unsigned ns, const char **why) {
  int setp = i->op == PTX_OP_SETP;
  unsigned st = setp ? i->type : i->type2;
  NEED(is_half(st), "setp/set: comparison type not supported");
  NEED(i->cmp != PTX_CMP_NONE && (i->cmp < PTX_CMP_LO || i->cmp > PTX_CMP_HS),
       "setp/set: comparison not defined for a half type");
  NEED(ns == 2 || (ns == 3 && i->boolop), "setp/set: operand shape not supported");
  if (setp) {
    NEED(nd == 1 || nd == 2, "setp: operand shape not supported");
    return setp_h;
  }
  NEED(nd == 1, "set: expected 1 destination");
  unsigned dt = i->type;
  if (is_pair(st))
    NEED(dt == st || dt == PTX_T_U32 || dt == PTX_T_S32,
         "set with a packed source: the destination must be the pair type, .u32 or .s32");
  else
    NEED(dt == PTX_T_F16 || dt == PTX_T_BF16 || dt == PTX_T_U16 || dt == PTX_T_S16 ||
             dt == PTX_T_U32 || dt == PTX_T_S32 || dt == PTX_T_B32 || dt == PTX_T_F32,
         "set: destination type not supported");
  return set_h;
}

/* ---------------------------------------------------- for the engine -- */

uint64_t emu_half_atom(unsigned aux, unsigned type, uint64_t old, uint64_t b) {
  hparams h;
  h.fmt = is_bf(type) ? EMU_FMT_BF16 : EMU_FMT_F16;
  h.nh = is_pair(type) ? 2 : 1;
  h.ftz = h.sat = h.relu = h.nanp = 0;
  h.mode = EMU_RM_RN;
  int ho = aux == PTX_AUX_MIN ? HO_MIN : aux == PTX_AUX_MAX ? HO_MAX : HO_ADD;
  uint64_t v = 0;
  for (int k = 0; k < h.nh; k++) {
    unsigned sh = 16u * (unsigned)k;
    v |= (uint64_t)half_op(ho, (uint32_t)(old >> sh) & 0xFFFF, (uint32_t)(b >> sh) & 0xFFFF, 0,
                           &h) << sh;
  }
  return v;
}
