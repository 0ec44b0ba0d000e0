/*
 * emu_alu.h -- internals shared by the ALU's source files (emu_alu.c:
 * selection, integer, logic, moves and comparisons; emu_alu_fp.c: fp32/fp64
 * and half-precision arithmetic; emu_alu_cvt.c: cvt and the software
 * rounding core).  Nothing outside emu_alu*.c (and the ALU's tests) includes
 * this file; the engine sees only emu_alu_select() in emu_int.h.
 *
 * Handler shape.  Every handler is `ALU_FN(name)`: it reads source slots
 * through SRC(k), writes destination slots through DST(k) and visits lanes
 * with LANES(mask, body), which runs a plain 0..31 loop (vectorisable) when
 * the whole warp is active and walks the set bits of mask otherwise.  The
 * body may use the loop's lane index `l` and the handler's `r` and `op`.
 * Specialisation happens at select time, so bodies contain no switch on the
 * type; modifiers that are rare (rounding direction, saturation of cvt ...)
 * are read from op->insn once per call, never per lane.
 */
#ifndef KCAST_EMU_ALU_H
#define KCAST_EMU_ALU_H

#include <stdint.h>
#include <string.h>

#include "emulator/emu_int.h"

#if defined(__FLT_EVAL_METHOD__) && __FLT_EVAL_METHOD__ != 0
#error "the ALU needs float/double arithmetic without excess precision (SSE, not x87)"
#endif

/* Every handler is compiled twice on x86-64 with gcc, for AVX2 and for the
   baseline, the one the CPU runs chosen when the program loads (an ifunc):
   a full warp's lanes go four to a 256-bit register instead of two.  The
   same IEEE operations, so the same bits (no FMA target: a * b + c stays
   two roundings).  pnpoly's loop, one thread: +15-25 % thread-insns/s.
   A handler with a target of its own (target("fma")) is defined with
   ALU_CLONES empty (emu_alu_fp.c). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define ALU_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define ALU_CLONES
#endif
#define ALU_FN(name) \
  ALU_CLONES static void name(uint64_t *restrict r, const emu_op *op, uint32_t mask)

/* Lanes are independent: a destination slot may be a source slot of the
   same lane (add %r1, %r1, %r2) but never another lane's, so the full-warp
   loop may be vectorised without alias checks (which gcc's -O2 cost model
   would refuse).  clang vectorises with runtime checks at -O2 and warns
   when a forced vectorisation fails, so it gets no pragma. */
#if defined(__GNUC__) && !defined(__clang__)
#define ALU_IVDEP _Pragma("GCC ivdep")
#else
#define ALU_IVDEP
#endif

/* Lane loop; the body sees `l` (unsigned lane index).  Uses r, op, mask. */
#define LANES(msk, ...)                                                     \
  do {                                                                      \
    if ((msk) == 0xFFFFFFFFu) {                                             \
      ALU_IVDEP                                                             \
      for (unsigned l = 0; l < EMU_LANES; l++) { __VA_ARGS__; }             \
    } else {                                                                \
      for (uint32_t m_ = (msk); m_; m_ &= m_ - 1) {                         \
        unsigned l = (unsigned)__builtin_ctz(m_);                           \
        __VA_ARGS__;                                                        \
      }                                                                     \
    }                                                                       \
  } while (0)

/* Slot base pointers of source k / destination k (uses r and op). */
#define SRC(k) ((const uint64_t *)(r + (size_t)op->s[k] * EMU_LANES))
#define DST(k) (r + (size_t)op->d[k] * EMU_LANES)

/* Bit casts. */
static inline float alu_u2f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint32_t alu_f2u(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline double alu_u2d(uint64_t u) { double d; memcpy(&d, &u, 8); return d; }
static inline uint64_t alu_d2u(double d) { uint64_t u; memcpy(&u, &d, 8); return u; }

/* Select helpers of the other files (same contract as emu_alu_select). */
emu_alu_fn emu_alu_select_fp(const ptx_insn *i, unsigned nd, unsigned ns,
                             const char **why);
emu_alu_fn emu_alu_select_cvt(const ptx_insn *i, unsigned nd, unsigned ns,
                              const char **why);
/* emu_alu_f16.c: arithmetic and ex2/tanh on f16/f16x2/bf16/bf16x2, and
   set/setp whose source or destination is a half type. */
emu_alu_fn emu_alu_select_half(const ptx_insn *i, unsigned nd, unsigned ns,
                               const char **why);
emu_alu_fn emu_alu_select_half_cmp(const ptx_insn *i, unsigned nd, unsigned ns,
                                   const char **why);

/* ------------------------------------------------ software rounding -- */

/* Binary floating-point formats the rounding core produces. */
enum { EMU_FMT_F16, EMU_FMT_BF16, EMU_FMT_F32, EMU_FMT_F64 };
/* Rounding directions: nearest-even, toward zero, down (-inf), up (+inf),
   nearest with ties away from zero. */
enum { EMU_RM_RN, EMU_RM_RZ, EMU_RM_DN, EMU_RM_UP, EMU_RM_RNA };

/*
 * Round a real number to fmt in mode and return its bit pattern.  The number
 * is s when dir == 0; when dir is +1 (-1) it is strictly above (below) s by
 * less than half the gap between s and its neighbour in that direction.  NaN
 * gives the format's canonical NaN (all exponent and mantissa bits set, sign
 * clear), overflow gives infinity or the largest finite value as the mode
 * says, and subnormal results are rounded, not flushed.
 */
uint64_t emu_fp_round(double s, int dir, int fmt, int mode);
/* Round the integer (-1)^neg * m to fmt in mode. */
uint64_t emu_fp_round_int(int neg, uint64_t m, int fmt, int mode);
/* The exact value of a bit pattern of fmt (f16, bf16 and f32 fit a double). */
double emu_fp_decode(uint64_t bits, int fmt);
/* EMU_RM_* for a ptx_rnd (RN when none; .rni etc. map to their direction). */
int emu_fp_mode(unsigned rnd);

#endif
