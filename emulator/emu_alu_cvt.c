/*
 * emu_alu_cvt.c -- cvt for the emulator's ALU, and the software rounding
 * core that cvt and the fp handlers (emu_alu_fp.c) share.
 *
 * cvt covers every pair of u8..u64, s8..s64 (b8..b64 as unsigned), f16,
 * bf16, f32 and f64, plus cvt.{rn,rz,rna}.tf32.f32 and the packing forms
 * cvt.rn{.relu}{.satfinite}.{f16x2,bf16x2}.f32 d, a, b (a in the upper half).
 *   int -> int     sign/zero extension or truncation; .sat clamps to the
 *                  destination range.
 *   float -> int   .rni .rzi .rmi .rpi (none: .rzi); NaN -> 0; the result
 *                  is always clamped to the destination range (the ISA's
 *                  implied saturation); .ftz flushes an f32 source.
 *   int -> float   .rn .rz .rm .rp (none: .rn); exact rounding of 64-bit
 *                  integers (no detour through double).
 *   float -> float widening is exact; narrowing rounds once with .rn .rz .rm
 *                  .rp .rna (f64 -> f16 is rounded directly, never through
 *                  f32); same-type with .rni .rzi .rmi .rpi rounds to an
 *                  integral value.  .sat clamps to [0, 1] (NaN -> +0),
 *                  .relu clamps negatives to +0, .ftz flushes f32 subnormal
 *                  sources and results.  NaN results: the canonical NaN of
 *                  the destination (0x7FFF, 0x7FFFFFFF); a NaN widened to f64
 *                  keeps the host's quiet NaN.
 * .satfinite parses to the same flag as .sat; on the x2 packing forms (where
 * .sat does not exist) it means "infinity -> largest finite", elsewhere the
 * flag is read as .sat.
 *
 * The rounding core (emu_fp_round and friends, declared in emu_alu.h) rounds
 * a value given as an integer significand, a binary exponent and a sticky
 * bit to any of the four formats in any of five directions, with subnormals
 * and overflow as IEEE 754 specifies.  It is plain integer code, so it does
 * not depend on the host's rounding mode.
 */
#include "emulator/emu_alu.h"

#include <math.h>

/* ------------------------------------------------------ rounding core -- */

static const struct { int p, eb; } fmts[4] = {
  {11, 5},  /* f16:  10 stored mantissa bits, 5 exponent bits */
  {8, 8},   /* bf16: 7, 8 */
  {24, 8},  /* f32 */
  {53, 11}, /* f64 */
};

int emu_fp_mode(unsigned rnd) {
  switch (rnd) {
  case PTX_RND_RZ: case PTX_RND_RZI: return EMU_RM_RZ;
  case PTX_RND_RM: case PTX_RND_RMI: return EMU_RM_DN;
  case PTX_RND_RP: case PTX_RND_RPI: return EMU_RM_UP;
  case PTX_RND_RNA: return EMU_RM_RNA;
  default: return EMU_RM_RN;
  }
}

/* Round (-1)^neg * (m + sticky*eps) * 2^e, 0 < eps < 1, to fmt. */
static uint64_t round_core(int neg, uint64_t m, int e, int sticky, int fmt, int mode) {
  int p = fmts[fmt].p, eb = fmts[fmt].eb;
  int bias = (1 << (eb - 1)) - 1, emin = 1 - bias;
  uint64_t sign = (uint64_t)(neg != 0) << (p - 1 + eb);
  uint64_t inf = ((1ull << eb) - 1) << (p - 1);
  if (m == 0) return sign;
  int msb = 63 - __builtin_clzll(m);
  int top = msb + e; /* exponent of the leading bit */
  int lsb = (top >= emin ? top : emin) - (p - 1);
  int shift = lsb - e;
  uint64_t q;
  int half, inexact; /* half: remainder vs half an ulp: -1 below, 0 at, 1 above */
  if (shift > 64) {
    q = 0;
    half = -1;
    inexact = 1;
  } else if (shift > 0) {
    uint64_t rem, h;
    if (shift == 64) { q = 0; rem = m; h = 1ull << 63; }
    else { q = m >> shift; rem = m & ((1ull << shift) - 1); h = 1ull << (shift - 1); }
    inexact = rem != 0 || sticky;
    half = rem > h ? 1 : rem < h ? -1 : (sticky ? 1 : 0);
  } else {
    q = m << -shift;
    inexact = sticky;
    half = -1;
  }
  int up;
  switch (mode) {
  case EMU_RM_RN: up = half > 0 || (half == 0 && (q & 1)); break;
  case EMU_RM_RNA: up = half >= 0; break;
  case EMU_RM_RZ: up = 0; break;
  case EMU_RM_DN: up = inexact && neg; break;
  default: up = inexact && !neg; break;
  }
  if (up && ++q == (1ull << p)) {
    q >>= 1;
    lsb++;
  }
  if (q == 0) return sign;
  if (q >= (1ull << (p - 1))) {
    int bexp = lsb + (p - 1) + bias;
    if (bexp >= (1 << eb) - 1) {
      int to_inf = mode == EMU_RM_RN || mode == EMU_RM_RNA ||
                   (mode == EMU_RM_UP && !neg) || (mode == EMU_RM_DN && neg);
      return sign | (to_inf ? inf : inf - 1);
    }
    return sign | ((uint64_t)bexp << (p - 1)) | (q - (1ull << (p - 1)));
  }
  return sign | q; /* subnormal */
}

uint64_t emu_fp_round_int(int neg, uint64_t m, int fmt, int mode) {
  return round_core(neg, m, 0, 0, fmt, mode);
}

uint64_t emu_fp_round(double s, int dir, int fmt, int mode) {
  int p = fmts[fmt].p, eb = fmts[fmt].eb;
  uint64_t inf = ((1ull << eb) - 1) << (p - 1);
  if (s != s) return (1ull << (p - 1 + eb)) - 1;
  int neg = signbit(s) != 0;
  if (isinf(s)) return ((uint64_t)neg << (p - 1 + eb)) | inf;
  uint64_t bits = alu_d2u(s) & 0x7FFFFFFFFFFFFFFFull;
  if (bits == 0) {
    if (dir == 0) return (uint64_t)neg << (p - 1 + eb);
    return round_core(dir < 0, 1, -1200, 0, fmt, mode); /* a tiny nonzero */
  }
  int ex = (int)(bits >> 52);
  uint64_t m = bits & ((1ull << 52) - 1);
  int e;
  if (ex == 0) e = -1074;
  else { m |= 1ull << 52; e = ex - 1075; }
  if (dir == 0) return round_core(neg, m, e, 0, fmt, mode);
  if ((dir > 0) != neg) return round_core(neg, m, e, 1, fmt, mode); /* |x| > |s| */
  /* |x| < |s|: within half the gap below |s|, represented by
     |s| - half an ulp of s plus a sticky bit (strictly between the two
     doubles, hence between the same pair of narrower-format boundaries) */
  return round_core(neg, 2 * m - 1, e - 1, 1, fmt, mode);
}

double emu_fp_decode(uint64_t bits, int fmt) {
  switch (fmt) {
  case EMU_FMT_F64: return alu_u2d(bits);
  case EMU_FMT_F32: return alu_u2f((uint32_t)bits);
  case EMU_FMT_BF16: return alu_u2f((uint32_t)(bits & 0xFFFF) << 16);
  default: {
    uint32_t b = (uint32_t)bits & 0xFFFF;
    int ex = (int)((b >> 10) & 0x1F);
    uint32_t m = b & 0x3FF;
    double v;
    if (ex == 31) v = m ? NAN : INFINITY;
    else if (ex == 0) v = ldexp((double)m, -24);
    else v = ldexp((double)(m | 0x400), ex - 25);
    return (b & 0x8000) ? -v : v;
  }
  }
}

/* --------------------------------------------------------- int -> int -- */

/* Parameters decoded once per call. */
typedef struct ipar { unsigned sw, dw; int ssgn, dsgn, sat; } ipar;

static unsigned iwidth(unsigned t, int *sgn) {
  *sgn = t == PTX_T_S8 || t == PTX_T_S16 || t == PTX_T_S32 || t == PTX_T_S64;
  switch (t) {
  case PTX_T_B8: case PTX_T_U8: case PTX_T_S8: return 8;
  case PTX_T_B16: case PTX_T_U16: case PTX_T_S16: return 16;
  case PTX_T_B32: case PTX_T_U32: case PTX_T_S32: return 32;
  case PTX_T_B64: case PTX_T_U64: case PTX_T_S64: return 64;
  default: return 0;
  }
}

static int ffmt(unsigned t) {
  switch (t) {
  case PTX_T_F16: return EMU_FMT_F16;
  case PTX_T_BF16: return EMU_FMT_BF16;
  case PTX_T_F32: return EMU_FMT_F32;
  case PTX_T_F64: return EMU_FMT_F64;
  default: return -1;
  }
}

static inline uint64_t wmask(unsigned w) { return w >= 64 ? ~0ull : (1ull << w) - 1; }
/* Slot value of width w, sign-extended to 64 bits when sgn. */
static inline uint64_t iread(uint64_t x, unsigned w, int sgn) {
  if (w >= 64) return x;
  x &= wmask(w);
  if (sgn && ((x >> (w - 1)) & 1)) x |= ~wmask(w);
  return x;
}

/* cvt.u64.u32 / cvt.s64.s32 / cvt.{u,s}32.{u,s}64 without .sat: the common
   fast cases */
ALU_FN(cvt_zext32) {
  const uint64_t *pa = SRC(0);
  uint64_t *d = DST(0);
  LANES(mask, d[l] = (uint32_t)pa[l]);
}
ALU_FN(cvt_sext32) {
  const uint64_t *pa = SRC(0);
  uint64_t *d = DST(0);
  LANES(mask, d[l] = (uint64_t)(int64_t)(int32_t)(uint32_t)pa[l]);
}

/* cvt{.sat}.IT.IT d, a: the general integer conversion */
ALU_FN(cvt_ii) {
  int ssgn, dsgn;
  unsigned sw = iwidth(op->insn->type2, &ssgn), dw = iwidth(op->insn->type, &dsgn);
  int sat = (op->insn->flags & PTX_F_SAT) != 0;
  uint64_t dm = wmask(dw);
  const uint64_t *pa = SRC(0);
  uint64_t *d = DST(0);
  if (!sat) {
    LANES(mask, d[l] = iread(pa[l], sw, ssgn) & dm);
    return;
  }
  int64_t smax = (int64_t)(dm >> 1), smin = -smax - 1;
  LANES(mask, {
    uint64_t v = iread(pa[l], sw, ssgn);
    if (dsgn) {
      if (ssgn) v = (int64_t)v > smax ? (uint64_t)smax : (int64_t)v < smin ? (uint64_t)smin : v;
      else if (v > (uint64_t)smax) v = (uint64_t)smax;
    } else {
      if (ssgn && (int64_t)v < 0) v = 0;
      else if (v > dm) v = dm;
    }
    d[l] = v & dm;
  });
}

/* ------------------------------------------------------- float -> int -- */

static inline double fread_(uint64_t x, int fmt, int ftz) {
  if (fmt == EMU_FMT_F32) {
    uint32_t b = (uint32_t)x;
    if (ftz && (b & 0x7F800000u) == 0) b &= 0x80000000u;
    return alu_u2f(b);
  }
  if (fmt == EMU_FMT_F64) return alu_u2d(x);
  return emu_fp_decode(x, fmt);
}

static inline double round_integral(double x, int mode) {
  switch (mode) {
  case EMU_RM_RZ: return trunc(x);
  case EMU_RM_DN: return floor(x);
  case EMU_RM_UP: return ceil(x);
  case EMU_RM_RNA: return round(x);
  default: return nearbyint(x); /* the host is in round-to-nearest-even */
  }
}

/* Clamp an integral double to the range of (w, sgn); NaN -> 0. */
static inline uint64_t clamp_to_int(double x, unsigned w, int sgn) {
  if (x != x) return 0;
  if (sgn) {
    double lim = ldexp(1.0, (int)w - 1);
    if (x >= lim) return wmask(w) >> 1;
    if (x < -lim) return (wmask(w) >> 1) + 1; /* MIN, masked below */
    return (uint64_t)(int64_t)x;
  }
  if (x <= 0) return 0;
  if (x >= ldexp(1.0, (int)w)) return wmask(w);
  return (uint64_t)x;
}

/* cvt.{rni,rzi,rmi,rpi}{.ftz}.IT.FT d, a */
ALU_FN(cvt_fi) {
  int dsgn;
  unsigned dw = iwidth(op->insn->type, &dsgn);
  int sf = ffmt(op->insn->type2), ftz = (op->insn->flags & PTX_F_FTZ) != 0;
  int mode = op->insn->rnd == PTX_RND_NONE ? EMU_RM_RZ : emu_fp_mode(op->insn->rnd);
  uint64_t dm = wmask(dw);
  const uint64_t *pa = SRC(0);
  uint64_t *d = DST(0);
  switch (mode) {
#define FI_LOOP(FN) LANES(mask, d[l] = clamp_to_int(FN(fread_(pa[l], sf, ftz)), dw, dsgn) & dm)
  case EMU_RM_RZ: FI_LOOP(trunc); break;
  case EMU_RM_DN: FI_LOOP(floor); break;
  case EMU_RM_UP: FI_LOOP(ceil); break;
  case EMU_RM_RNA: FI_LOOP(round); break;
  default: FI_LOOP(nearbyint); break;
#undef FI_LOOP
  }
}

/* ------------------------------------------------------- int -> float -- */

static inline uint64_t fpost(uint64_t v, int fmt, int ftz, int sat, int relu);

/* cvt{.rn,.rz,.rm,.rp}{.sat}.FT.IT d, a */
ALU_FN(cvt_if) {
  int ssgn;
  unsigned sw = iwidth(op->insn->type2, &ssgn);
  int df = ffmt(op->insn->type), mode = emu_fp_mode(op->insn->rnd);
  int sat = (op->insn->flags & PTX_F_SAT) != 0, ftz = (op->insn->flags & PTX_F_FTZ) != 0;
  const uint64_t *pa = SRC(0);
  uint64_t *d = DST(0);
  if (mode == EMU_RM_RN && !sat && !ftz && df == EMU_FMT_F32) {
    if (ssgn) LANES(mask, d[l] = alu_f2u((float)(int64_t)iread(pa[l], sw, 1)));
    else LANES(mask, d[l] = alu_f2u((float)iread(pa[l], sw, 0)));
    return;
  }
  if (mode == EMU_RM_RN && !sat && df == EMU_FMT_F64) {
    if (ssgn) LANES(mask, d[l] = alu_d2u((double)(int64_t)iread(pa[l], sw, 1)));
    else LANES(mask, d[l] = alu_d2u((double)iread(pa[l], sw, 0)));
    return;
  }
  LANES(mask, {
    uint64_t v = iread(pa[l], sw, ssgn);
    int neg = ssgn && (int64_t)v < 0;
    uint64_t mag = neg ? 0 - v : v;
    d[l] = fpost(emu_fp_round_int(neg, mag, df, mode), df, ftz, sat, 0);
  });
}

/* ----------------------------------------------------- float -> float -- */

static const uint64_t cnan[4] = {0x7FFF, 0x7FFF, 0x7FFFFFFF, 0x7FFFFFFFFFFFFFFFull};
static const uint64_t one_bits[4] = {0x3C00, 0x3F80, 0x3F800000, 0x3FF0000000000000ull};

/* Post-processing of a float result of fmt: .sat, .relu, f32 .ftz. */
static inline uint64_t fpost(uint64_t v, int fmt, int ftz, int sat, int relu) {
  if (!sat && !relu && !ftz) return v;
  int p = fmts[fmt].p, eb = fmts[fmt].eb;
  uint64_t sbit = 1ull << (p - 1 + eb), inf = ((1ull << eb) - 1) << (p - 1);
  uint64_t mag = v & (sbit - 1);
  int isnan_ = mag > inf;
  if (sat) {
    if (isnan_ || (v & sbit)) return 0;
    if (mag >= one_bits[fmt]) return one_bits[fmt];
  }
  if (relu) {
    if (isnan_) return cnan[fmt];
    if (v & sbit) return 0;
  }
  if (ftz && fmt == EMU_FMT_F32 && (v & 0x7F800000u) == 0) v &= 0x80000000u;
  return v;
}

/* cvt.f64.f32: exact */
ALU_FN(cvt_f64_f32) {
  const uint64_t *pa = SRC(0);
  uint64_t *d = DST(0);
  LANES(mask, d[l] = alu_d2u((double)alu_u2f((uint32_t)pa[l])));
}
/* cvt.rn.f32.f64: host rounding (nearest-even), canonical NaN */
ALU_FN(cvt_rn_f32_f64) {
  const uint64_t *pa = SRC(0);
  uint64_t *d = DST(0);
  LANES(mask, {
    uint32_t b = alu_f2u((float)alu_u2d(pa[l]));
    d[l] = (b & 0x7FFFFFFFu) > 0x7F800000u ? 0x7FFFFFFFu : b;
  });
}

/* cvt{.frnd}{.ftz}{.sat}{.relu}.FT.FT d, a: the general case */
ALU_FN(cvt_ff) {
  const ptx_insn *i = op->insn;
  int df = ffmt(i->type), sf = ffmt(i->type2);
  int ftz = (i->flags & PTX_F_FTZ) != 0, sat = (i->flags & PTX_F_SAT) != 0;
  int relu = (i->flags & PTX_F_RELU) != 0;
  int integral = i->rnd >= PTX_RND_RNI;
  int mode = emu_fp_mode(i->rnd);
  const uint64_t *pa = SRC(0);
  uint64_t *d = DST(0);
  LANES(mask, {
    double x = fread_(pa[l], sf, ftz);
    uint64_t v;
    if (integral) x = round_integral(x, mode);
    if (x != x) v = (df == EMU_FMT_F64 && sf == EMU_FMT_F32) ? alu_d2u(x) : cnan[df];
    else if (df == EMU_FMT_F64) v = alu_d2u(x);
    else v = emu_fp_round(x, 0, df, integral ? EMU_RM_RN : mode);
    d[l] = fpost(v, df, ftz, sat, relu);
  });
}

/* cvt.rn{.relu}{.satfinite}.{f16x2,bf16x2}.f32 d, a, b: d = cvt(a):cvt(b) */
ALU_FN(cvt_pack_x2) {
  const ptx_insn *i = op->insn;
  int df = i->type == PTX_T_BF16X2 ? EMU_FMT_BF16 : EMU_FMT_F16;
  int relu = (i->flags & PTX_F_RELU) != 0, satf = (i->flags & PTX_F_SAT) != 0;
  int mode = emu_fp_mode(i->rnd);
  const uint64_t *pa = SRC(0), *pb = SRC(1);
  uint64_t *d = DST(0);
  uint64_t inf = df == EMU_FMT_F16 ? 0x7C00 : 0x7F80;
  LANES(mask, {
    uint64_t h[2];
    for (int k = 0; k < 2; k++) {
      double x = alu_u2f((uint32_t)(k ? pb[l] : pa[l]));
      uint64_t v = emu_fp_round(x, 0, df, mode);
      if (satf && (v & 0x7FFF) == inf) v -= 1; /* +-inf -> +-max finite */
      h[k] = fpost(v, df, 0, 0, relu);
    }
    d[l] = (h[0] << 16) | h[1];
  });
}

/* cvt.{rn,rz,rna}.tf32.f32 d, a: f32 with the low 13 mantissa bits cleared
   after rounding (NaN -> canonical NaN) */
ALU_FN(cvt_tf32) {
  int mode = emu_fp_mode(op->insn->rnd);
  const uint64_t *pa = SRC(0);
  uint64_t *d = DST(0);
  LANES(mask, {
    uint32_t b = (uint32_t)pa[l];
    if ((b & 0x7FFFFFFFu) > 0x7F800000u) { d[l] = 0x7FFFFFFFu; continue; }
    if ((b & 0x7F800000u) != 0x7F800000u) {
      if (mode == EMU_RM_RNA) b += 0x1000u;
      else if (mode == EMU_RM_RN) b += 0xFFFu + ((b >> 13) & 1);
    }
    d[l] = b & 0xFFFFE000u;
  });
}

/* ------------------------------------------------------------ select -- */

#define FAIL(msg) do { *why = (msg); return NULL; } while (0)
#define NEED(cond, msg) do { if (!(cond)) FAIL(msg); } while (0)

emu_alu_fn emu_alu_select_cvt(const ptx_insn *i, unsigned nd, unsigned ns,
                              const char **why) {
  unsigned dt = i->type, st = i->type2;
  int dsgn, ssgn;
  unsigned dw = iwidth(dt, &dsgn), sw = iwidth(st, &ssgn);
  int df = ffmt(dt), sf = ffmt(st);
  unsigned rnd = i->rnd;
  int irnd = rnd >= PTX_RND_RNI, frnd = rnd != PTX_RND_NONE && !irnd;
  NEED(nd == 1, "cvt: expected 1 destination");
  NEED(rnd != PTX_RND_RS, "cvt.rs: stochastic rounding not supported");
  if (dt == PTX_T_F16X2 || dt == PTX_T_BF16X2) {
    NEED(st == PTX_T_F32 && ns == 2, "cvt to f16x2/bf16x2: only the pack form d, a, b from .f32");
    NEED(rnd == PTX_RND_RN || rnd == PTX_RND_RZ, "cvt to f16x2/bf16x2: rounding mode not supported");
    return cvt_pack_x2;
  }
  NEED(ns == 1, "cvt: expected 1 source");
  if (dt == PTX_T_TF32) {
    NEED(st == PTX_T_F32, "cvt to tf32: only from .f32");
    NEED(rnd == PTX_RND_RNA || rnd == PTX_RND_RN || rnd == PTX_RND_RZ,
         "cvt to tf32: rounding mode not supported");
    NEED(!(i->flags & PTX_F_SAT), "cvt.satfinite.tf32: not supported");
    return cvt_tf32;
  }
  NEED((dw || df >= 0) && (sw || sf >= 0), "cvt: type combination not supported");
  if (dw && sw) {
    NEED(rnd == PTX_RND_NONE, "cvt int-to-int: rounding modifier not allowed");
    if (!(i->flags & PTX_F_SAT)) {
      if (dw == 64 && sw == 32) return ssgn ? cvt_sext32 : cvt_zext32;
      if (dw == 32 && sw == 64) return cvt_zext32;
    }
    return cvt_ii;
  }
  if (dw) {
    NEED(!frnd, "cvt float-to-int: needs .rni/.rzi/.rmi/.rpi, not a float rounding");
    return cvt_fi;
  }
  if (sw) {
    NEED(!irnd, "cvt int-to-float: .rni/.rzi/.rmi/.rpi not allowed");
    NEED(rnd != PTX_RND_RNA, "cvt.rna int-to-float: not supported");
    return cvt_if;
  }
  /* float -> float */
  if (irnd) NEED(df == sf, "cvt.rni/.rzi/.rmi/.rpi float-to-float: types must be equal");
  int narrowing = fmts[df].p < fmts[sf].p || fmts[df].eb < fmts[sf].eb;
  if (rnd == PTX_RND_RNA) NEED(narrowing, "cvt.rna: only for narrowing conversions");
  uint32_t extra = i->flags & (PTX_F_FTZ | PTX_F_SAT | PTX_F_RELU);
  if (!extra && df == EMU_FMT_F64 && sf == EMU_FMT_F32 && !irnd) return cvt_f64_f32;
  if (!extra && df == EMU_FMT_F32 && sf == EMU_FMT_F64 &&
      (rnd == PTX_RND_RN || rnd == PTX_RND_NONE))
    return cvt_rn_f32_f64;
  return cvt_ff;
}
