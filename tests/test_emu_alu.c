/*
 * test_emu_alu.c -- the emulator's arithmetic unit (emulator/emu_alu*.c).
 *
 * How: each test parses a small PTX kernel, builds the emu_op of each
 * instruction the way the engine does (registers are their own slots,
 * immediates get extra slots filled for all 32 lanes, vector operands are
 * flattened, the carry flag gets a slot), runs the selected handler over 32
 * lanes of chosen inputs and compares with values computed here in plain C:
 * integers and fp32/fp64 .rn bit for bit (host float/double ops, fmaf), the
 * directed roundings bit for bit against the host's own arithmetic under
 * fesetround, approximate functions within the 1 ulp the ALU documents, and
 * corner cases against values worked out from the PTX ISA by hand.
 * A sweep over every instruction of every test kernel checks that handlers
 * touch only their destination slots, only in the lanes of the mask, and
 * that a partial mask gives the same values as a full one.
 */
#include "tests.h"

#include <fenv.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emulator/emu_alu.h"
#include "extractor/ptx.h"

#define CHECK(cond, msg) \
  CU_assertImplementation((cond) ? CU_TRUE : CU_FALSE, __LINE__, (msg), __FILE__, "", CU_FALSE)

/* ------------------------------------------------------------ harness -- */

#define MAXSLOT 256
static uint64_t R[MAXSLOT * EMU_LANES];
static ptx_module *M;
static const ptx_func *F;
static emu_op OP;
static unsigned NSLOT;

static const char *HDR =
    ".version 8.5\n.target sm_90\n.address_size 64\n"
    ".visible .entry k()\n{\n"
    ".reg .pred %p<8>;\n.reg .b16 %h<8>;\n.reg .b32 %r<16>;\n"
    ".reg .b64 %rd<16>;\n.reg .f32 %f<16>;\n.reg .f64 %fd<16>;\n";

static int load(const char *body) {
  ptx_module_free(M);
  M = NULL;
  F = NULL;
  size_t n = strlen(HDR) + strlen(body) + 8;
  char *text = malloc(n);
  snprintf(text, n, "%s%s\n}\n", HDR, body);
  ptx_error err;
  M = ptx_parse(text, strlen(text), "alu.ptx", &err);
  free(text);
  if (!M) {
    fprintf(stderr, "test_emu_alu: %s\n", err.msg);
    return -1;
  }
  F = &M->funcs[0];
  memset(R, 0, sizeof R);
  return 0;
}

static unsigned reg(const char *name) {
  for (unsigned i = 0; i < F->nregs; i++)
    if (strcmp(F->regs[i].name, name) == 0) return i;
  fprintf(stderr, "test_emu_alu: no register %s\n", name);
  abort();
}

static void set(const char *name, unsigned lane, uint64_t v) { R[reg(name) * EMU_LANES + lane] = v; }
static void setall(const char *name, uint64_t v) {
  for (unsigned l = 0; l < EMU_LANES; l++) set(name, l, v);
}
static uint64_t get(const char *name, unsigned lane) { return R[reg(name) * EMU_LANES + lane]; }

static void add_opnd(const ptx_operand *o, int isdst, unsigned *extra) {
  uint32_t slot = EMU_NOSLOT;
  uint64_t imm = 0;
  int isimm = 0;
  switch (o->kind) {
  case PTX_OPND_REG: slot = o->u.reg; break;
  case PTX_OPND_IMM_INT: imm = (uint64_t)o->u.i; isimm = 1; break;
  case PTX_OPND_IMM_F32: imm = o->u.f32bits; isimm = 1; break;
  case PTX_OPND_IMM_F64: imm = o->u.f64bits; isimm = 1; break;
  default: break;
  }
  if (isimm) {
    slot = (*extra)++;
    for (unsigned l = 0; l < EMU_LANES; l++) R[slot * EMU_LANES + l] = imm;
  }
  if (isdst) {
    OP.d[OP.nd++] = slot;
  } else {
    if (o->neg) OP.sneg |= (uint8_t)(1u << OP.ns);
    OP.s[OP.ns++] = slot;
  }
}

/* Build OP for instruction idx (immediate slots filled) and select. */
static emu_alu_fn prep(unsigned idx, const char **why) {
  const ptx_insn *in = &F->insns[idx];
  memset(&OP, 0, sizeof OP);
  OP.insn = in;
  OP.cc = EMU_NOSLOT;
  unsigned extra = F->nregs;
  int nodst = (ptx_op_info_table[in->op].flags & PTX_OPF_NODST) != 0;
  for (unsigned j = 0; j < in->nopnd; j++) {
    const ptx_operand *o = ptx_insn_opnd(F, in, j);
    int isdst = !nodst && (j == 0 || o->pipe);
    if (o->kind == PTX_OPND_VEC)
      for (unsigned e = 1; e <= o->n; e++) add_opnd(o + e, isdst, &extra);
    else
      add_opnd(o, isdst, &extra);
  }
  if ((in->flags & PTX_F_CC) || in->op == PTX_OP_ADDC || in->op == PTX_OP_SUBC ||
      in->op == PTX_OP_MADC)
    OP.cc = extra++;
  NSLOT = extra;
  const char *w = NULL;
  emu_alu_fn fn = emu_alu_select(in, OP.nd, OP.ns, &w);
  if (why) *why = w;
  if (!fn && w) fprintf(stderr, "test_emu_alu: line %u: %s\n", in->line, w);
  OP.alu = fn;
  return fn;
}

/* Run instruction idx over the lanes in mask; 0 when it had a handler. */
static int run(unsigned idx, uint32_t mask) {
  if (!prep(idx, NULL)) return -1;
  OP.alu(R, &OP, mask);
  return 0;
}
static int run_all(unsigned idx) { return run(idx, 0xFFFFFFFFu); }

/* Compare a destination register with expected values over all lanes. */
static int lanes_eq(const char *name, const uint64_t *want, const char *what) {
  for (unsigned l = 0; l < EMU_LANES; l++) {
    uint64_t got = get(name, l);
    if (got != want[l]) {
      fprintf(stderr, "test_emu_alu: %s: %s lane %u: got 0x%llx want 0x%llx\n", what, name,
              l, (unsigned long long)got, (unsigned long long)want[l]);
      return 0;
    }
  }
  return 1;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd64(void) {
  uint64_t x = rng_state;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return rng_state = x;
}

/* Interesting 32-bit values: corners first, then random. */
static uint32_t v32(unsigned l, unsigned salt) {
  static const uint32_t c[] = {0, 1, 2, 0xFFFFFFFFu, 0x80000000u, 0x7FFFFFFFu, 0xFFFFFFFEu,
                               0x80000001u, 3, 7, 0x12345678u, 0xDEADBEEFu};
  unsigned k = (l + salt * 5) % 32;
  return k < sizeof c / sizeof c[0] ? c[k] : (uint32_t)rnd64();
}
static uint64_t v64(unsigned l, unsigned salt) {
  static const uint64_t c[] = {0, 1, ~0ull, 0x8000000000000000ull, 0x7FFFFFFFFFFFFFFFull,
                               2, 0xFFFFFFFFull, 0x100000000ull, 0xDEADBEEFCAFEF00Dull};
  unsigned k = (l + salt * 3) % 32;
  return k < sizeof c / sizeof c[0] ? c[k] : rnd64();
}

static uint32_t f2u(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float u2f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static uint64_t d2u(double d) { uint64_t u; memcpy(&u, &d, 8); return u; }
static double u2d(uint64_t u) { double d; memcpy(&d, &u, 8); return d; }
static uint32_t canon32(uint32_t b) { return (b & 0x7FFFFFFFu) > 0x7F800000u ? 0x7FFFFFFFu : b; }

/* Interesting floats: zeros, subnormals, infinities, NaN, random bits. */
static float vf(unsigned l, unsigned salt) {
  static const uint32_t c[] = {0x00000000u, 0x80000000u, 0x3F800000u, 0xBF800000u,
                               0x00000001u, 0x807FFFFFu, 0x7F800000u, 0xFF800000u,
                               0x7FC00000u, 0x7F7FFFFFu, 0x00800000u, 0x3EAAAAABu};
  unsigned k = (l + salt * 7) % 32;
  if (k < sizeof c / sizeof c[0]) return u2f(c[k]);
  uint32_t b = (uint32_t)rnd64();
  /* keep most random values in a moderate exponent range */
  if (k & 1) b = (b & 0x807FFFFFu) | ((uint32_t)(100 + (rnd64() % 56)) << 23);
  return u2f(b);
}

/* ---------------------------------------------------------- integer -- */

static int64_t sat32(int64_t t) { return t > INT32_MAX ? INT32_MAX : t < INT32_MIN ? INT32_MIN : t; }

/* min/max of each 16-bit half (mx: max; sgn: signed; relu: negatives 0) */
static uint32_t pair16(uint32_t a, uint32_t b, int mx, int sgn, int relu) {
  uint32_t r = 0;
  for (int h = 0; h < 2; h++) {
    uint16_t x = (uint16_t)(a >> (16 * h)), y = (uint16_t)(b >> (16 * h));
    int32_t xi = sgn ? (int16_t)x : x, yi = sgn ? (int16_t)y : y;
    int32_t v = mx ? (xi > yi ? xi : yi) : (xi < yi ? xi : yi);
    if (relu && v < 0) v = 0;
    r |= (uint32_t)(uint16_t)v << (16 * h);
  }
  return r;
}

static void test_int_arith(void) {
  CU_ASSERT_FATAL(load("add.s32 %r1, %r2, %r3;\n"          /* 0 */
                       "sub.u32 %r1, %r2, %r3;\n"          /* 1 */
                       "mul.lo.s32 %r1, %r2, %r3;\n"       /* 2 */
                       "mul.hi.s32 %r1, %r2, %r3;\n"       /* 3 */
                       "mul.hi.u32 %r1, %r2, %r3;\n"       /* 4 */
                       "mul.wide.s32 %rd1, %r2, %r3;\n"    /* 5 */
                       "mul.wide.u32 %rd1, %r2, %r3;\n"    /* 6 */
                       "mad.lo.s32 %r1, %r2, %r3, %r4;\n"  /* 7 */
                       "mad.wide.s32 %rd1, %r2, %r3, %rd2;\n" /* 8 */
                       "add.s64 %rd1, %rd2, %rd3;\n"       /* 9 */
                       "mul.hi.u64 %rd1, %rd2, %rd3;\n"    /* 10 */
                       "mul.hi.s64 %rd1, %rd2, %rd3;\n"    /* 11 */
                       "add.sat.s32 %r1, %r2, %r3;\n"      /* 12 */
                       "min.s32 %r1, %r2, %r3;\n"          /* 13 */
                       "max.u32 %r1, %r2, %r3;\n"          /* 14 */
                       "sad.u32 %r1, %r2, %r3, %r4;\n"     /* 15 */
                       "abs.s32 %r1, %r2;\n"               /* 16 */
                       "neg.s64 %rd1, %rd2;\n"             /* 17 */
                       "add.u16 %h1, %h2, %h3;\n"          /* 18 */
                       "mul.wide.s16 %r1, %h2, %h3;\n"     /* 19 */
                       "mul24.lo.s32 %r1, %r2, %r3;\n"     /* 20 */
                       "mul24.hi.u32 %r1, %r2, %r3;\n"     /* 21 */
                       "add.s32 %r1, %r2, -1;\n"           /* 22 */
                       "mad.hi.sat.s32 %r1, %r2, %r3, %r4;\n" /* 23 */
                       "min.s16 %h1, %h2, %h3;\n"          /* 24 */
                       "max.relu.s32 %r1, %r2, %r3;\n"     /* 25 */
                       "min.u16x2 %r1, %r2, %r3;\n"        /* 26 */
                       "max.s16x2 %r1, %r2, %r3;\n"        /* 27 */
                       "min.relu.s16x2 %r1, %r2, %r3;\n") == 0);
  uint32_t a[32], b[32], c[32];
  uint64_t A[32], B[32], want[32];
  for (unsigned l = 0; l < 32; l++) {
    a[l] = v32(l, 0); b[l] = v32(l, 1); c[l] = v32(l, 2);
    A[l] = v64(l, 0); B[l] = v64(l, 1);
    set("%r2", l, a[l]); set("%r3", l, b[l]); set("%r4", l, c[l]);
    set("%rd2", l, A[l]); set("%rd3", l, B[l]);
    set("%h2", l, a[l] & 0xFFFF); set("%h3", l, b[l] & 0xFFFF);
  }
#define EXPECT32(idx, expr, what)                                            \
  do {                                                                       \
    for (unsigned l = 0; l < 32; l++) want[l] = (uint32_t)(expr);            \
    CHECK(run_all(idx) == 0 && lanes_eq("%r1", want, what), what);           \
  } while (0)
#define EXPECT64(idx, expr, what)                                            \
  do {                                                                       \
    for (unsigned l = 0; l < 32; l++) want[l] = (uint64_t)(expr);            \
    CHECK(run_all(idx) == 0 && lanes_eq("%rd1", want, what), what);          \
  } while (0)
#define S32(x) ((int64_t)(int32_t)(x))
  EXPECT32(0, a[l] + b[l], "add.s32 wraps like two's complement");
  EXPECT32(1, a[l] - b[l], "sub.u32 wraps");
  EXPECT32(2, a[l] * b[l], "mul.lo.s32 keeps the low 32 bits");
  EXPECT32(3, (uint64_t)(S32(a[l]) * S32(b[l])) >> 32, "mul.hi.s32 is the signed high word");
  EXPECT32(4, ((uint64_t)a[l] * b[l]) >> 32, "mul.hi.u32 is the unsigned high word");
  EXPECT64(5, S32(a[l]) * S32(b[l]), "mul.wide.s32 is the full signed product");
  EXPECT64(6, (uint64_t)a[l] * b[l], "mul.wide.u32 is the full unsigned product");
  EXPECT32(7, a[l] * b[l] + c[l], "mad.lo.s32 = low(a*b) + c");
  EXPECT64(8, (uint64_t)(S32(a[l]) * S32(b[l])) + A[l], "mad.wide.s32 = a*b + c in 64 bits");
  EXPECT64(9, A[l] + B[l], "add.s64 wraps");
  EXPECT64(10, (uint64_t)(((unsigned __int128)A[l] * B[l]) >> 64), "mul.hi.u64 via 128-bit product");
  EXPECT64(11, (uint64_t)(((__int128)(int64_t)A[l] * (int64_t)B[l]) >> 64),
           "mul.hi.s64 via signed 128-bit product");
  EXPECT32(12, S32(a[l]) + S32(b[l]) > INT32_MAX ? INT32_MAX
               : S32(a[l]) + S32(b[l]) < INT32_MIN ? INT32_MIN : S32(a[l]) + S32(b[l]),
           "add.sat.s32 clamps at INT32_MIN/MAX");
  EXPECT32(13, (int32_t)a[l] < (int32_t)b[l] ? a[l] : b[l], "min.s32 compares signed");
  EXPECT32(14, a[l] > b[l] ? a[l] : b[l], "max.u32 compares unsigned");
  EXPECT32(15, c[l] + (a[l] > b[l] ? a[l] - b[l] : b[l] - a[l]), "sad.u32 = c + |a-b|");
  EXPECT32(16, (int32_t)a[l] < 0 ? 0u - a[l] : a[l], "abs.s32 (abs(INT_MIN) = INT_MIN)");
  EXPECT64(17, 0 - A[l], "neg.s64");
  for (unsigned l = 0; l < 32; l++) want[l] = (uint16_t)(a[l] + b[l]);
  CHECK(run_all(18) == 0 && lanes_eq("%h1", want, "add.u16"), "add.u16 wraps at 16 bits, upper bits zero");
  EXPECT32(19, (int32_t)(int16_t)a[l] * (int32_t)(int16_t)b[l], "mul.wide.s16 gives the 32-bit product");
  EXPECT32(20, (uint64_t)((int64_t)((int32_t)(a[l] << 8) >> 8) * ((int32_t)(b[l] << 8) >> 8)),
           "mul24.lo.s32 multiplies sign-extended 24-bit operands");
  EXPECT32(21, ((uint64_t)(a[l] & 0xFFFFFF) * (b[l] & 0xFFFFFF)) >> 16,
           "mul24.hi.u32 keeps bits 47..16 of the 48-bit product");
  EXPECT32(22, a[l] - 1, "an immediate -1 (64-bit slot pattern) is read as 32 bits");
  EXPECT32(23, sat32(((S32(a[l]) * S32(b[l])) >> 32) + S32(c[l])), "mad.hi.sat.s32 saturates");
  for (unsigned l = 0; l < 32; l++)
    want[l] = (uint16_t)((int16_t)a[l] < (int16_t)b[l] ? a[l] : b[l]);
  CHECK(run_all(24) == 0 && lanes_eq("%h1", want, "min.s16"), "min.s16 compares signed 16-bit values");
  EXPECT32(25, (int32_t)a[l] > (int32_t)b[l] ? ((int32_t)a[l] > 0 ? a[l] : 0)
                                             : ((int32_t)b[l] > 0 ? b[l] : 0),
           "max.relu.s32 clamps negative results to 0");
  EXPECT32(26, pair16(a[l], b[l], 0, 0, 0), "min.u16x2 takes the unsigned minimum of each half");
  EXPECT32(27, pair16(a[l], b[l], 1, 1, 0), "max.s16x2 takes the signed maximum of each half");
  EXPECT32(28, pair16(a[l], b[l], 0, 1, 1),
           "min.relu.s16x2 takes the signed minimum of each half, negative halves 0");
}

static void test_divrem(void) {
  CU_ASSERT_FATAL(load("div.s32 %r1, %r2, %r3;\n rem.s32 %r1, %r2, %r3;\n"
                       "div.u32 %r1, %r2, %r3;\n rem.u32 %r1, %r2, %r3;\n"
                       "div.s64 %rd1, %rd2, %rd3;\n rem.s64 %rd1, %rd2, %rd3;\n"
                       "div.u16 %h1, %h2, %h3;\n div.s16 %h1, %h2, %h3;\n") == 0);
  uint32_t a[32], b[32];
  uint64_t want[32];
  for (unsigned l = 0; l < 32; l++) {
    a[l] = v32(l, 3);
    b[l] = l < 4 ? 0 : l < 8 ? 0xFFFFFFFFu : v32(l, 4);
    if (l == 4 || l == 5) a[l] = 0x80000000u; /* INT_MIN / -1 */
    set("%r2", l, a[l]); set("%r3", l, b[l]);
    set("%rd2", l, l == 4 ? (uint64_t)INT64_MIN : (uint64_t)(int64_t)(int32_t)a[l]);
    set("%rd3", l, (uint64_t)(int64_t)(int32_t)b[l]);
    set("%h2", l, l == 4 ? 0x8000 : a[l] & 0xFFFF); set("%h3", l, b[l] & 0xFFFF);
  }
  for (unsigned l = 0; l < 32; l++) {
    int32_t x = (int32_t)a[l], y = (int32_t)b[l];
    want[l] = (uint32_t)(y == 0 ? -1 : (y == -1 ? (int32_t)(0u - a[l]) : x / y));
  }
  CHECK(run_all(0) == 0 && lanes_eq("%r1", want, "div.s32"),
        "div.s32: x/0 = -1, INT_MIN/-1 = INT_MIN, otherwise C division");
  for (unsigned l = 0; l < 32; l++) {
    int32_t x = (int32_t)a[l], y = (int32_t)b[l];
    want[l] = (uint32_t)(y == 0 ? x : (y == -1 ? 0 : x % y));
  }
  CHECK(run_all(1) == 0 && lanes_eq("%r1", want, "rem.s32"),
        "rem.s32: x%0 = x, INT_MIN%-1 = 0, sign of the dividend");
  for (unsigned l = 0; l < 32; l++) want[l] = b[l] ? a[l] / b[l] : 0xFFFFFFFFu;
  CHECK(run_all(2) == 0 && lanes_eq("%r1", want, "div.u32"), "div.u32: x/0 = 0xFFFFFFFF");
  for (unsigned l = 0; l < 32; l++) want[l] = b[l] ? a[l] % b[l] : a[l];
  CHECK(run_all(3) == 0 && lanes_eq("%r1", want, "rem.u32"), "rem.u32: x%0 = x");
  for (unsigned l = 0; l < 32; l++) {
    int64_t x = (int64_t)get("%rd2", l), y = (int64_t)get("%rd3", l);
    want[l] = (uint64_t)(y == 0 ? -1 : (y == -1 ? (int64_t)(0 - (uint64_t)x) : x / y));
  }
  CHECK(run_all(4) == 0 && lanes_eq("%rd1", want, "div.s64"), "div.s64 with INT64_MIN/-1 does not trap");
  for (unsigned l = 0; l < 32; l++) {
    int64_t x = (int64_t)get("%rd2", l), y = (int64_t)get("%rd3", l);
    want[l] = (uint64_t)(y == 0 ? x : (y == -1 ? 0 : x % y));
  }
  CHECK(run_all(5) == 0 && lanes_eq("%rd1", want, "rem.s64"), "rem.s64");
  for (unsigned l = 0; l < 32; l++) {
    uint32_t x = (uint32_t)get("%h2", l), y = (uint32_t)get("%h3", l);
    want[l] = y ? x / y : 0xFFFF;
  }
  CHECK(run_all(6) == 0 && lanes_eq("%h1", want, "div.u16"), "div.u16: x/0 = 0xFFFF");
  for (unsigned l = 0; l < 32; l++) {
    int32_t x = (int16_t)get("%h2", l), y = (int16_t)get("%h3", l);
    want[l] = (uint16_t)(y == 0 ? -1 : x / y);
  }
  CHECK(run_all(7) == 0 && lanes_eq("%h1", want, "div.s16"), "div.s16: -32768/-1 = -32768");
}

static void test_carry(void) {
  CU_ASSERT_FATAL(load("add.cc.u32 %r1, %r2, %r4;\n addc.u32 %r3, %r5, %r6;\n"
                       "sub.cc.u32 %r1, %r2, %r4;\n subc.u32 %r3, %r5, %r6;\n"
                       "mad.lo.cc.u32 %r1, %r2, %r4, %r7;\n madc.hi.u32 %r3, %r2, %r4, %r8;\n"
                       "add.cc.u64 %rd1, %rd2, %rd3;\n addc.cc.u64 %rd4, %rd5, %rd6;\n"
                       "addc.u64 %rd7, %rd8, %rd9;\n") == 0);
  /* 64-bit add/sub out of 32-bit halves, with the same carry slot */
  uint64_t x[32], y[32], wl[32], wh[32];
  for (unsigned l = 0; l < 32; l++) {
    x[l] = v64(l, 5); y[l] = v64(l, 6);
    set("%r2", l, (uint32_t)x[l]); set("%r5", l, x[l] >> 32);
    set("%r4", l, (uint32_t)y[l]); set("%r6", l, y[l] >> 32);
  }
  prep(0, NULL);
  uint32_t ccslot = OP.cc; /* every instruction here gets the same slot */
  run_all(0); run_all(1);
  for (unsigned l = 0; l < 32; l++) { wl[l] = (uint32_t)(x[l] + y[l]); wh[l] = (x[l] + y[l]) >> 32; }
  CHECK(lanes_eq("%r1", wl, "add.cc") && lanes_eq("%r3", wh, "addc"),
        "add.cc.u32 + addc.u32 make a 64-bit addition");
  run_all(2); run_all(3);
  for (unsigned l = 0; l < 32; l++) { wl[l] = (uint32_t)(x[l] - y[l]); wh[l] = (x[l] - y[l]) >> 32; }
  CHECK(lanes_eq("%r1", wl, "sub.cc") && lanes_eq("%r3", wh, "subc"),
        "sub.cc.u32 + subc.u32 make a 64-bit subtraction (CF = borrow)");
  /* 32x32 -> 64 plus a 64-bit addend via mad.lo.cc / madc.hi */
  for (unsigned l = 0; l < 32; l++) {
    set("%r7", l, (uint32_t)y[l]); set("%r8", l, y[l] >> 32);
    uint64_t p = (uint64_t)(uint32_t)x[l] * (uint32_t)y[l] + y[l];
    wl[l] = (uint32_t)p; wh[l] = p >> 32;
  }
  run_all(4); run_all(5);
  CHECK(lanes_eq("%r1", wl, "mad.lo.cc") && lanes_eq("%r3", wh, "madc.hi"),
        "mad.lo.cc.u32 + madc.hi.u32 compute a*b + c in 64 bits");
  /* 192-bit addition with u64 limbs */
  uint64_t w0[32], w1[32], w2[32];
  for (unsigned l = 0; l < 32; l++) {
    uint64_t a0 = v64(l, 1), a1 = v64(l, 2), a2 = v64(l, 3), b0 = v64(l, 4), b1 = v64(l, 5), b2 = v64(l, 6);
    set("%rd2", l, a0); set("%rd5", l, a1); set("%rd8", l, a2);
    set("%rd3", l, b0); set("%rd6", l, b1); set("%rd9", l, b2);
    unsigned __int128 s0 = (unsigned __int128)a0 + b0;
    unsigned __int128 s1 = (unsigned __int128)a1 + b1 + (uint64_t)(s0 >> 64);
    w0[l] = (uint64_t)s0; w1[l] = (uint64_t)s1; w2[l] = a2 + b2 + (uint64_t)(s1 >> 64);
  }
  run_all(6); run_all(7); run_all(8);
  CHECK(lanes_eq("%rd1", w0, "add.cc.u64") && lanes_eq("%rd4", w1, "addc.cc.u64") &&
            lanes_eq("%rd7", w2, "addc.u64"),
        "add.cc/addc.cc/addc.u64 chain a 192-bit addition");
  CHECK(OP.cc == ccslot, "the harness gives every carry instruction the same CF slot");
}

/* ------------------------------------------------------------ logic -- */

static uint32_t lop3_ref(uint32_t a, uint32_t b, uint32_t c, unsigned lut) {
  uint32_t v = 0;
  for (unsigned i = 0; i < 32; i++) {
    unsigned k = (((a >> i) & 1) << 2) | (((b >> i) & 1) << 1) | ((c >> i) & 1);
    v |= ((lut >> k) & 1u) << i;
  }
  return v;
}

static void test_logic(void) {
  CU_ASSERT_FATAL(load("and.b32 %r1, %r2, %r3;\n or.b64 %rd1, %rd2, %rd3;\n"
                       "xor.b16 %h1, %h2, %h3;\n not.b32 %r1, %r2;\n cnot.b32 %r1, %r2;\n"
                       "and.pred %p1, %p2, !%p3;\n or.pred %p1, !%p2, %p3;\n"
                       "xor.pred %p1, %p2, %p3;\n not.pred %p1, %p2;\n"
                       "lop3.b32 %r1, %r2, %r3, %r4, 0x96;\n lop3.b32 %r1, %r2, %r3, %r4, 0xE8;\n"
                       "lop3.b32 %r1, %r2, %r3, %r4, 0xF0;\n lop3.b32 %r1, %r2, %r3, %r4, 0x1;\n"
                       "lop3.b32 %r1, %r2, %r3, %r4, 0xCA;\n") == 0);
  uint32_t a[32], b[32], c[32];
  uint64_t want[32];
  for (unsigned l = 0; l < 32; l++) {
    a[l] = v32(l, 7); b[l] = v32(l, 8); c[l] = v32(l, 9);
    if (l == 3) a[l] = 0;
    set("%r2", l, a[l]); set("%r3", l, b[l]); set("%r4", l, c[l]);
    set("%rd2", l, v64(l, 1)); set("%rd3", l, v64(l, 2));
    set("%h2", l, a[l] & 0xFFFF); set("%h3", l, b[l] & 0xFFFF);
    set("%p2", l, l & 1); set("%p3", l, (l >> 1) & 1);
  }
  for (unsigned l = 0; l < 32; l++) want[l] = a[l] & b[l];
  CHECK(run_all(0) == 0 && lanes_eq("%r1", want, "and.b32"), "and.b32");
  for (unsigned l = 0; l < 32; l++) want[l] = get("%rd2", l) | get("%rd3", l);
  CHECK(run_all(1) == 0 && lanes_eq("%rd1", want, "or.b64"), "or.b64");
  for (unsigned l = 0; l < 32; l++) want[l] = (a[l] ^ b[l]) & 0xFFFF;
  CHECK(run_all(2) == 0 && lanes_eq("%h1", want, "xor.b16"), "xor.b16");
  for (unsigned l = 0; l < 32; l++) want[l] = (uint32_t)~a[l];
  CHECK(run_all(3) == 0 && lanes_eq("%r1", want, "not.b32"), "not.b32 keeps the upper slot bits zero");
  for (unsigned l = 0; l < 32; l++) want[l] = a[l] == 0;
  CHECK(run_all(4) == 0 && lanes_eq("%r1", want, "cnot.b32"), "cnot.b32: 1 for zero, else 0");
  for (unsigned l = 0; l < 32; l++) want[l] = (l & 1) & !((l >> 1) & 1);
  CHECK(run_all(5) == 0 && lanes_eq("%p1", want, "and.pred !"), "and.pred honours a negated source");
  for (unsigned l = 0; l < 32; l++) want[l] = (uint64_t)((!(l & 1)) | ((l >> 1) & 1));
  CHECK(run_all(6) == 0 && lanes_eq("%p1", want, "or.pred !"), "or.pred honours a negated first source");
  for (unsigned l = 0; l < 32; l++) want[l] = (l & 1) ^ ((l >> 1) & 1);
  CHECK(run_all(7) == 0 && lanes_eq("%p1", want, "xor.pred"), "xor.pred");
  for (unsigned l = 0; l < 32; l++) want[l] = !(l & 1);
  CHECK(run_all(8) == 0 && lanes_eq("%p1", want, "not.pred"), "not.pred gives 0/1");
  static const unsigned luts[] = {0x96, 0xE8, 0xF0, 0x01, 0xCA};
  for (unsigned k = 0; k < 5; k++) {
    for (unsigned l = 0; l < 32; l++) want[l] = lop3_ref(a[l], b[l], c[l], luts[k]);
    CHECK(run_all(9 + k) == 0 && lanes_eq("%r1", want, "lop3"),
          "lop3.b32 matches a bit-by-bit LUT lookup (xor3, majority, a, nor3, select)");
  }
}

static void test_shifts(void) {
  CU_ASSERT_FATAL(load("shl.b32 %r1, %r2, %r3;\n shr.u32 %r1, %r2, %r3;\n shr.s32 %r1, %r2, %r3;\n"
                       "shl.b64 %rd1, %rd2, %r3;\n shr.s64 %rd1, %rd2, %r3;\n shr.u16 %h1, %h2, %r3;\n"
                       "shf.l.wrap.b32 %r1, %r2, %r4, %r3;\n shf.l.clamp.b32 %r1, %r2, %r4, %r3;\n"
                       "shf.r.wrap.b32 %r1, %r2, %r4, %r3;\n shf.r.clamp.b32 %r1, %r2, %r4, %r3;\n"
                       "shr.s16 %h1, %h2, %r3;\n") == 0);
  static const uint32_t amts[] = {0, 1, 5, 15, 16, 31, 32, 33, 63, 64, 65, 100, 255, 256, 0xFFFFFFFFu, 0x80000000u};
  uint32_t a[32], n[32], hi[32];
  uint64_t A[32], want[32];
  for (unsigned l = 0; l < 32; l++) {
    a[l] = v32(l, 11) | (l & 1 ? 0x80000000u : 0); n[l] = amts[l % 16];
    hi[l] = v32(l, 12); A[l] = v64(l, 13);
    set("%r2", l, a[l]); set("%r3", l, n[l]); set("%r4", l, hi[l]); set("%rd2", l, A[l]);
    set("%h2", l, a[l] & 0xFFFF);
  }
  for (unsigned l = 0; l < 32; l++) want[l] = n[l] >= 32 ? 0 : (uint32_t)(a[l] << n[l]);
  CHECK(run_all(0) == 0 && lanes_eq("%r1", want, "shl.b32"), "shl.b32: amounts >= 32 give 0");
  for (unsigned l = 0; l < 32; l++) want[l] = n[l] >= 32 ? 0 : a[l] >> n[l];
  CHECK(run_all(1) == 0 && lanes_eq("%r1", want, "shr.u32"), "shr.u32: amounts >= 32 give 0");
  for (unsigned l = 0; l < 32; l++) want[l] = (uint32_t)((int32_t)a[l] >> (n[l] >= 32 ? 31 : n[l]));
  CHECK(run_all(2) == 0 && lanes_eq("%r1", want, "shr.s32"), "shr.s32 is arithmetic and fills with the sign");
  for (unsigned l = 0; l < 32; l++) want[l] = n[l] >= 64 ? 0 : A[l] << n[l];
  CHECK(run_all(3) == 0 && lanes_eq("%rd1", want, "shl.b64"), "shl.b64: amounts >= 64 give 0");
  for (unsigned l = 0; l < 32; l++) want[l] = (uint64_t)((int64_t)A[l] >> (n[l] >= 64 ? 63 : n[l]));
  CHECK(run_all(4) == 0 && lanes_eq("%rd1", want, "shr.s64"), "shr.s64 sign fill");
  for (unsigned l = 0; l < 32; l++) want[l] = n[l] >= 16 ? 0 : (a[l] & 0xFFFF) >> n[l];
  CHECK(run_all(5) == 0 && lanes_eq("%h1", want, "shr.u16"), "shr.u16: amounts >= 16 give 0");
  for (int k = 0; k < 4; k++) {
    for (unsigned l = 0; l < 32; l++) {
      uint64_t x = ((uint64_t)hi[l] << 32) | a[l];
      uint32_t s = (k & 1) ? (n[l] > 32 ? 32 : n[l]) : n[l] & 31;
      want[l] = k < 2 ? (uint32_t)((x << s) >> 32) : (uint32_t)(x >> s);
    }
    CHECK(run_all(6 + (unsigned)k) == 0 && lanes_eq("%r1", want, "shf"),
          "shf.{l,r}.{wrap,clamp}.b32 funnel-shift b:a by c mod 32 / clamped to 32");
  }
  for (unsigned l = 0; l < 32; l++)
    want[l] = (uint16_t)((int16_t)(a[l] & 0xFFFF) >> (n[l] >= 16 ? 15 : n[l]));
  CHECK(run_all(10) == 0 && lanes_eq("%h1", want, "shr.s16"), "shr.s16 sign fill within 16 bits");
}

/* Bit-by-bit references transcribed from the ISA pseudo-code. */
static uint64_t bfe_ref(uint64_t a, uint32_t b, uint32_t c, unsigned w, int sgn) {
  unsigned msb = w - 1, pos = b & 0xFF, len = c & 0xFF;
  unsigned sb = pos + len - 1 < msb ? pos + len - 1 : msb;
  int sbit = (!sgn || len == 0) ? 0 : (int)((a >> sb) & 1);
  uint64_t d = 0;
  for (unsigned i = 0; i <= msb; i++) {
    int bit = (i < len && pos + i <= msb) ? (int)((a >> (pos + i)) & 1) : sbit;
    d |= (uint64_t)bit << i;
  }
  return d;
}
static uint64_t bfi_ref(uint64_t a, uint64_t b, uint32_t c, uint32_t dd, unsigned w) {
  unsigned msb = w - 1, pos = c & 0xFF, len = dd & 0xFF;
  uint64_t f = b;
  for (unsigned i = 0; i < len && pos + i <= msb; i++)
    f = (f & ~(1ull << (pos + i))) | (((a >> i) & 1) << (pos + i));
  return f;
}

static void test_bitfield(void) {
  CU_ASSERT_FATAL(load("bfe.u32 %r1, %r2, %r3, %r4;\n bfe.s32 %r1, %r2, %r3, %r4;\n"
                       "bfe.s64 %rd1, %rd2, %r3, %r4;\n bfi.b32 %r1, %r2, %r5, %r3, %r4;\n"
                       "bfi.b64 %rd1, %rd2, %rd3, %r3, %r4;\n"
                       "bfind.u32 %r1, %r2;\n bfind.s32 %r1, %r2;\n bfind.shiftamt.u64 %r1, %rd2;\n"
                       "brev.b32 %r1, %r2;\n popc.b64 %r1, %rd2;\n clz.b32 %r1, %r2;\n"
                       "bmsk.wrap.b32 %r1, %r3, %r4;\n bmsk.clamp.b32 %r1, %r3, %r4;\n"
                       "szext.wrap.s32 %r1, %r2, %r4;\n szext.clamp.u32 %r1, %r2, %r4;\n"
                       "szext.clamp.s32 %r1, %r2, %r4;\n") == 0);
  static const uint32_t pos[] = {0, 1, 8, 31, 32, 33, 63, 64, 255, 256 + 4, 16, 24, 7, 0, 30, 62};
  static const uint32_t len[] = {0, 1, 8, 1, 5, 32, 2, 64, 255, 0x100 + 8, 16, 16, 40, 32, 3, 70};
  uint32_t a[32], p[32], n[32], base[32];
  uint64_t A[32], B[32], want[32];
  for (unsigned l = 0; l < 32; l++) {
    a[l] = v32(l, 14); A[l] = v64(l, 15); B[l] = v64(l, 16); base[l] = v32(l, 17);
    p[l] = pos[l % 16]; n[l] = len[(l * 7) % 16];
    set("%r2", l, a[l]); set("%r3", l, p[l]); set("%r4", l, n[l]); set("%r5", l, base[l]);
    set("%rd2", l, A[l]); set("%rd3", l, B[l]);
  }
  for (unsigned l = 0; l < 32; l++) want[l] = bfe_ref(a[l], p[l], n[l], 32, 0);
  CHECK(run_all(0) == 0 && lanes_eq("%r1", want, "bfe.u32"), "bfe.u32 matches the ISA pseudo-code at edge positions");
  for (unsigned l = 0; l < 32; l++) want[l] = bfe_ref(a[l], p[l], n[l], 32, 1);
  CHECK(run_all(1) == 0 && lanes_eq("%r1", want, "bfe.s32"), "bfe.s32 sign-extends from bit min(pos+len-1, 31)");
  for (unsigned l = 0; l < 32; l++) want[l] = bfe_ref(A[l], p[l], n[l], 64, 1);
  CHECK(run_all(2) == 0 && lanes_eq("%rd1", want, "bfe.s64"), "bfe.s64");
  for (unsigned l = 0; l < 32; l++) want[l] = bfi_ref(a[l], base[l], p[l], n[l], 32);
  CHECK(run_all(3) == 0 && lanes_eq("%r1", want, "bfi.b32"), "bfi.b32 inserts clipped at the msb; len 0 or pos > msb gives b");
  for (unsigned l = 0; l < 32; l++) want[l] = bfi_ref(A[l], B[l], p[l], n[l], 64);
  CHECK(run_all(4) == 0 && lanes_eq("%rd1", want, "bfi.b64"), "bfi.b64");
  for (unsigned l = 0; l < 32; l++) want[l] = a[l] ? 31u - (uint32_t)__builtin_clz(a[l]) : 0xFFFFFFFFu;
  CHECK(run_all(5) == 0 && lanes_eq("%r1", want, "bfind.u32"), "bfind.u32: msb position, 0xFFFFFFFF for 0");
  for (unsigned l = 0; l < 32; l++) {
    uint32_t x = (int32_t)a[l] < 0 ? ~a[l] : a[l];
    want[l] = x ? 31u - (uint32_t)__builtin_clz(x) : 0xFFFFFFFFu;
  }
  CHECK(run_all(6) == 0 && lanes_eq("%r1", want, "bfind.s32"), "bfind.s32: msb that differs from the sign; -1 and 0 give 0xFFFFFFFF");
  for (unsigned l = 0; l < 32; l++) want[l] = A[l] ? (uint32_t)__builtin_clzll(A[l]) : 0xFFFFFFFFu;
  CHECK(run_all(7) == 0 && lanes_eq("%r1", want, "bfind.shiftamt.u64"), "bfind.shiftamt.u64 gives the left shift amount");
  for (unsigned l = 0; l < 32; l++) {
    uint32_t x = 0;
    for (unsigned i = 0; i < 32; i++) x |= ((a[l] >> i) & 1) << (31 - i);
    want[l] = x;
  }
  CHECK(run_all(8) == 0 && lanes_eq("%r1", want, "brev.b32"), "brev.b32 reverses the bits");
  for (unsigned l = 0; l < 32; l++) want[l] = (uint64_t)__builtin_popcountll(A[l]);
  CHECK(run_all(9) == 0 && lanes_eq("%r1", want, "popc.b64"), "popc.b64 counts set bits into a u32");
  for (unsigned l = 0; l < 32; l++) want[l] = a[l] ? (uint32_t)__builtin_clz(a[l]) : 32;
  CHECK(run_all(10) == 0 && lanes_eq("%r1", want, "clz.b32"), "clz.b32: 32 for zero");
  for (int clamp = 0; clamp < 2; clamp++) {
    for (unsigned l = 0; l < 32; l++) {
      /* ISA: bits [a, a+b) set, both mod 32 (wrap), or a >= 32 -> 0 and the
         mask running to the top when b >= 32 or a+b >= 32 (clamp) */
      uint32_t s = clamp ? p[l] : p[l] & 31, w = clamp ? n[l] : n[l] & 31, m = 0;
      if (!(clamp && s >= 32))
        for (uint32_t i = s; i < 32 && (i - s < w || (clamp && w >= 32)); i++) m |= 1u << i;
      want[l] = m;
    }
    CHECK(run_all(11 + (unsigned)clamp) == 0 && lanes_eq("%r1", want, "bmsk"),
          "bmsk.{wrap,clamp}.b32 masks b bits from bit a");
  }
  for (int k = 0; k < 3; k++) {
    int clamp = k > 0, sgn = k != 1;
    for (unsigned l = 0; l < 32; l++) {
      uint32_t nb = clamp ? (n[l] > 32 ? 32 : n[l]) : n[l] & 31, x = a[l];
      uint32_t v = nb >= 32 ? x : x & ((1u << nb) - 1);
      if (sgn && nb > 0 && nb < 32 && ((x >> (nb - 1)) & 1)) v |= ~0u << nb;
      want[l] = v;
    }
    CHECK(run_all(13 + (unsigned)k) == 0 && lanes_eq("%r1", want, "szext"),
          "szext.{wrap,clamp}.{s32,u32} extends the low N bits");
  }
}

static void test_prmt(void) {
  CU_ASSERT_FATAL(load("prmt.b32 %r1, %r2, %r3, %r4;\n prmt.b32.f4e %r1, %r2, %r3, %r4;\n"
                       "prmt.b32.b4e %r1, %r2, %r3, %r4;\n prmt.b32.rc8 %r1, %r2, %r3, %r4;\n"
                       "prmt.b32.ecl %r1, %r2, %r3, %r4;\n prmt.b32.ecr %r1, %r2, %r3, %r4;\n"
                       "prmt.b32.rc16 %r1, %r2, %r3, %r4;\n") == 0);
  /* bytes of b:a are 0x00, 0x91, 0x22, 0xB3, 0x44, 0xD5, 0x66, 0xF7 */
  static const uint8_t bytes[8] = {0x00, 0x91, 0x22, 0xB3, 0x44, 0xD5, 0x66, 0xF7};
  setall("%r2", 0xB3229100u);
  setall("%r3", 0xF766D544u);
  uint64_t want[32];
  for (unsigned l = 0; l < 32; l++) {
    uint32_t c = (uint32_t)rnd64() & 0xFFFF;
    if (l == 0) c = 0x3210;
    if (l == 1) c = 0x89AB; /* sign replication from bytes 0..3 */
    set("%r4", l, c);
    uint32_t v = 0;
    for (unsigned i = 0; i < 4; i++) {
      unsigned s = (c >> (4 * i)) & 0xF;
      uint32_t byte = bytes[s & 7];
      if (s & 8) byte = (byte & 0x80) ? 0xFF : 0;
      v |= byte << (8 * i);
    }
    want[l] = v;
  }
  CHECK(run_all(0) == 0 && lanes_eq("%r1", want, "prmt default"),
        "prmt default mode picks bytes by nibble and replicates signs with bit 3");
  CHECK(get("%r1", 0) == 0xB3229100u, "prmt selector 0x3210 is the identity on a");
  /* ISA tables, written as "d.b3 d.b2 d.b1 d.b0" for c[1:0] = 0..3 */
  static const char *tab[6][4] = {
    {"3210", "4321", "5432", "6543"}, {"5670", "6701", "7012", "0123"},
    {"0000", "1111", "2222", "3333"}, {"3210", "3211", "3222", "3333"},
    {"0000", "1110", "2210", "3210"}, {"1010", "3232", "1010", "3232"}};
  static const char *names[6] = {"f4e", "b4e", "rc8", "ecl", "ecr", "rc16"};
  for (unsigned m = 0; m < 6; m++) {
    for (unsigned l = 0; l < 32; l++) {
      uint32_t c = (uint32_t)rnd64();
      set("%r4", l, c);
      const char *t = tab[m][c & 3];
      uint32_t v = 0;
      for (unsigned i = 0; i < 4; i++) v |= (uint32_t)bytes[t[3 - i] - '0'] << (8 * i);
      want[l] = v;
    }
    CHECK(run_all(1 + m) == 0 && lanes_eq("%r1", want, names[m]),
          "prmt .f4e/.b4e/.rc8/.ecl/.ecr/.rc16 follow the ISA byte tables");
  }
}

static void test_dot(void) {
  CU_ASSERT_FATAL(load("dp4a.u32.u32 %r1, %r2, %r3, %r4;\n dp4a.s32.s32 %r1, %r2, %r3, %r4;\n"
                       "dp4a.s32.u32 %r1, %r2, %r3, %r4;\n dp2a.lo.s32.s32 %r1, %r2, %r3, %r4;\n"
                       "dp2a.hi.u32.s32 %r1, %r2, %r3, %r4;\n") == 0);
  uint32_t a[32], b[32], c[32];
  uint64_t want[32];
  for (unsigned l = 0; l < 32; l++) {
    a[l] = v32(l, 20); b[l] = v32(l, 21); c[l] = v32(l, 22);
    set("%r2", l, a[l]); set("%r3", l, b[l]); set("%r4", l, c[l]);
  }
  for (int k = 0; k < 3; k++) {
    int sa = k >= 1, sb = k == 1;
    for (unsigned l = 0; l < 32; l++) {
      int64_t s = 0;
      for (unsigned i = 0; i < 4; i++) {
        int64_t x = (a[l] >> (8 * i)) & 0xFF, y = (b[l] >> (8 * i)) & 0xFF;
        if (sa) x = (int8_t)x;
        if (sb) y = (int8_t)y;
        s += x * y;
      }
      want[l] = (uint32_t)(c[l] + (uint64_t)s);
    }
    CHECK(run_all((unsigned)k) == 0 && lanes_eq("%r1", want, "dp4a"),
          "dp4a = c + sum of byte products with per-operand signedness");
  }
  for (int k = 0; k < 2; k++) {
    for (unsigned l = 0; l < 32; l++) {
      unsigned base = k ? 2 : 0;
      int64_t s = 0;
      for (unsigned i = 0; i < 2; i++) {
        int64_t x = (a[l] >> (16 * i)) & 0xFFFF, y = (int8_t)((b[l] >> (8 * (base + i))) & 0xFF);
        if (!k) x = (int16_t)x;
        s += x * y;
      }
      want[l] = (uint32_t)(c[l] + (uint64_t)s);
    }
    CHECK(run_all(3 + (unsigned)k) == 0 && lanes_eq("%r1", want, "dp2a"),
          "dp2a.{lo,hi} uses bytes 0,1 or 2,3 of b");
  }
}

/* ------------------------------------------------- moves and selects -- */

static void test_moves(void) {
  CU_ASSERT_FATAL(load("mov.u32 %r1, -1;\n mov.b64 %rd1, {%r2, %r3};\n mov.b64 {%r5, %r6}, %rd2;\n"
                       "mov.b32 {%h1, %h2}, %r2;\n mov.b32 %r1, {%h3, %h4};\n mov.pred %p1, %p2;\n"
                       "mov.f32 %f1, 0f3F800000;\n mov.b64 {%h1, %h2, %h3, %h4}, %rd2;\n"
                       "cvt.u16.u32 %h1, %r2;\n selp.b32 %r1, %r2, %r3, %p2;\n selp.f64 %fd1, %fd2, %fd3, %p2;\n"
                       "slct.u32.s32 %r1, %r2, %r3, %r4;\n slct.b32.f32 %r1, %r2, %r3, %f4;\n"
                       "mov.b64 {_, %r6}, %rd2;\n") == 0);
  uint64_t want[32], w2[32];
  for (unsigned l = 0; l < 32; l++) {
    set("%r2", l, v32(l, 1)); set("%r3", l, v32(l, 2)); set("%rd2", l, v64(l, 3));
    set("%h3", l, l * 3); set("%h4", l, 0xFFFF - l); set("%p2", l, l & 1);
    set("%r4", l, l < 4 ? 0 : l < 8 ? 0xFFFFFFFFu : v32(l, 4));
    set("%fd2", l, d2u(1.5 * l)); set("%fd3", l, d2u(-2.0));
  }
  set("%r6", 0, 77);
  for (unsigned l = 0; l < 32; l++) want[l] = 0xFFFFFFFFu;
  CHECK(run_all(0) == 0 && lanes_eq("%r1", want, "mov.u32 -1"), "mov.u32 of -1 writes 0xFFFFFFFF with zero upper bits");
  for (unsigned l = 0; l < 32; l++) want[l] = get("%r2", l) | (get("%r3", l) << 32);
  CHECK(run_all(1) == 0 && lanes_eq("%rd1", want, "pack"), "mov.b64 {lo, hi} packs element 0 low");
  for (unsigned l = 0; l < 32; l++) { want[l] = (uint32_t)get("%rd2", l); w2[l] = get("%rd2", l) >> 32; }
  CHECK(run_all(2) == 0 && lanes_eq("%r5", want, "unpack lo") && lanes_eq("%r6", w2, "unpack hi"),
        "mov.b64 {lo, hi} unpacks");
  for (unsigned l = 0; l < 32; l++) { want[l] = get("%r2", l) & 0xFFFF; w2[l] = get("%r2", l) >> 16; }
  CHECK(run_all(3) == 0 && lanes_eq("%h1", want, "unpack16") && lanes_eq("%h2", w2, "unpack16 hi"),
        "mov.b32 {h0, h1} splits halves");
  for (unsigned l = 0; l < 32; l++) want[l] = (l * 3) | ((uint64_t)(0xFFFF - l) << 16);
  CHECK(run_all(4) == 0 && lanes_eq("%r1", want, "pack16"), "mov.b32 {h0, h1} packs halves");
  for (unsigned l = 0; l < 32; l++) want[l] = l & 1;
  CHECK(run_all(5) == 0 && lanes_eq("%p1", want, "mov.pred"), "mov.pred copies");
  for (unsigned l = 0; l < 32; l++) want[l] = 0x3F800000u;
  CHECK(run_all(6) == 0 && lanes_eq("%f1", want, "mov.f32 imm"), "mov.f32 of an immediate");
  run_all(7);
  int ok = 1;
  for (unsigned l = 0; l < 32; l++) {
    uint64_t x = get("%rd2", l);
    ok &= get("%h1", l) == (x & 0xFFFF) && get("%h2", l) == ((x >> 16) & 0xFFFF) &&
          get("%h3", l) == ((x >> 32) & 0xFFFF) && get("%h4", l) == x >> 48;
  }
  CHECK(ok, "mov.b64 into four b16 elements");
  for (unsigned l = 0; l < 32; l++) want[l] = get("%r2", l) & 0xFFFF;
  /* (mov.u16 %h1, %r2 would truncate too, but ptxas and the parser refuse it:
     the operand types disagree) */
  CHECK(run_all(8) == 0 && lanes_eq("%h1", want, "cvt.u16.u32"), "cvt.u16.u32 truncates");
  for (unsigned l = 0; l < 32; l++) want[l] = (l & 1) ? get("%r2", l) : get("%r3", l);
  CHECK(run_all(9) == 0 && lanes_eq("%r1", want, "selp"), "selp.b32 picks a when c");
  for (unsigned l = 0; l < 32; l++) want[l] = (l & 1) ? d2u(1.5 * l) : d2u(-2.0);
  CHECK(run_all(10) == 0 && lanes_eq("%fd1", want, "selp.f64"), "selp.f64");
  for (unsigned l = 0; l < 32; l++) want[l] = (int32_t)get("%r4", l) >= 0 ? get("%r2", l) : get("%r3", l);
  CHECK(run_all(11) == 0 && lanes_eq("%r1", want, "slct.s32"), "slct.s32 selects a when c >= 0");
  static const uint32_t fc[4] = {0x80000000u, 0xBF800000u, 0x7FC00000u, 0x00000001u};
  for (unsigned l = 0; l < 32; l++) {
    set("%f4", l, fc[l & 3]);
    want[l] = (l & 3) == 0 || (l & 3) == 3 ? get("%r2", l) : get("%r3", l);
  }
  CHECK(run_all(12) == 0 && lanes_eq("%r1", want, "slct.f32"), "slct.f32: -0.0 selects a, NaN and negatives b");
  run_all(13);
  CHECK(get("%r6", 0) == get("%rd2", 0) >> 32, "mov.b64 {_, hi} writes the named element");
}

/* ------------------------------------------------------------ compares -- */

static void test_setp(void) {
  CU_ASSERT_FATAL(load("setp.lt.s32 %p1, %r2, %r3;\n setp.lo.u32 %p1, %r2, %r3;\n"
                       "setp.ge.u64 %p1|%p2, %rd2, %rd3;\n"
                       "setp.lt.and.s32 %p1|%p2, %r2, %r3, !%p3;\n setp.ne.or.s32 %p1, %r2, %r3, %p3;\n"
                       "setp.eq.xor.s32 %p1, %r2, %r3, %p3;\n set.gt.u32.s32 %r1, %r2, %r3;\n"
                       "set.lt.f32.f32 %r1, %f2, %f3;\n setp.hi.s16 %p1, %h2, %h3;\n"
                       "setp.eq.f32 %p1, %f2, %f3;\n setp.ne.f32 %p1, %f2, %f3;\n setp.lt.f32 %p1, %f2, %f3;\n"
                       "setp.le.f32 %p1, %f2, %f3;\n setp.gt.f32 %p1, %f2, %f3;\n setp.ge.f32 %p1, %f2, %f3;\n"
                       "setp.equ.f32 %p1, %f2, %f3;\n setp.neu.f32 %p1, %f2, %f3;\n setp.ltu.f32 %p1, %f2, %f3;\n"
                       "setp.leu.f32 %p1, %f2, %f3;\n setp.gtu.f32 %p1, %f2, %f3;\n setp.geu.f32 %p1, %f2, %f3;\n"
                       "setp.num.f32 %p1, %f2, %f3;\n setp.nan.f32 %p1, %f2, %f3;\n"
                       "setp.ltu.f64 %p1, %fd2, %fd3;\n setp.lt.ftz.f32 %p1, %f2, %f3;\n") == 0);
  uint32_t a[32], b[32];
  uint64_t want[32], wq[32];
  for (unsigned l = 0; l < 32; l++) {
    a[l] = v32(l, 30); b[l] = (l % 3 == 0) ? a[l] : v32(l, 31);
    set("%r2", l, a[l]); set("%r3", l, b[l]);
    set("%rd2", l, v64(l, 1)); set("%rd3", l, (l & 1) ? v64(l, 1) : v64(l, 2));
    set("%h2", l, a[l] & 0xFFFF); set("%h3", l, b[l] & 0xFFFF);
    set("%p3", l, (l >> 2) & 1);
  }
  for (unsigned l = 0; l < 32; l++) want[l] = (int32_t)a[l] < (int32_t)b[l];
  CHECK(run_all(0) == 0 && lanes_eq("%p1", want, "setp.lt.s32"), "setp.lt.s32 is signed");
  for (unsigned l = 0; l < 32; l++) want[l] = a[l] < b[l];
  CHECK(run_all(1) == 0 && lanes_eq("%p1", want, "setp.lo.u32"), "setp.lo.u32 is unsigned");
  for (unsigned l = 0; l < 32; l++) { want[l] = get("%rd2", l) >= get("%rd3", l); wq[l] = !want[l]; }
  CHECK(run_all(2) == 0 && lanes_eq("%p1", want, "setp p") && lanes_eq("%p2", wq, "setp q"),
        "setp p|q writes the comparison and its complement");
  for (unsigned l = 0; l < 32; l++) {
    int t = (int32_t)a[l] < (int32_t)b[l], c = !((l >> 2) & 1);
    want[l] = t & c; wq[l] = (!t) & c;
  }
  CHECK(run_all(3) == 0 && lanes_eq("%p1", want, "and p") && lanes_eq("%p2", wq, "and q"),
        "setp.lt.and with !%p3: p = t & !c, q = !t & !c");
  for (unsigned l = 0; l < 32; l++) want[l] = (a[l] != b[l]) | ((l >> 2) & 1);
  CHECK(run_all(4) == 0 && lanes_eq("%p1", want, "or"), "setp.ne.or");
  for (unsigned l = 0; l < 32; l++) want[l] = (a[l] == b[l]) ^ ((l >> 2) & 1);
  CHECK(run_all(5) == 0 && lanes_eq("%p1", want, "xor"), "setp.eq.xor");
  for (unsigned l = 0; l < 32; l++) want[l] = (int32_t)a[l] > (int32_t)b[l] ? 0xFFFFFFFFu : 0;
  CHECK(run_all(6) == 0 && lanes_eq("%r1", want, "set.u32"), "set.gt.u32.s32 gives 0xFFFFFFFF or 0");
  /* float operands with NaN, zeros of both signs, infinities */
  static const uint32_t fv[8] = {0x7FC00000u, 0x3F800000u, 0x80000000u, 0x00000000u,
                                 0xFF800000u, 0x40000000u, 0x00000001u, 0x7F800000u};
  float fa[32], fb[32];
  for (unsigned l = 0; l < 32; l++) {
    fa[l] = u2f(fv[l & 7]); fb[l] = u2f(fv[(l >> 3) * 2 + (l & 1)]);
    set("%f2", l, f2u(fa[l])); set("%f3", l, f2u(fb[l]));
    set("%fd2", l, d2u(fa[l])); set("%fd3", l, d2u(fb[l]));
  }
  for (unsigned l = 0; l < 32; l++) want[l] = fa[l] < fb[l] ? 0x3F800000u : 0;
  CHECK(run_all(7) == 0 && lanes_eq("%r1", want, "set.f32"), "set.lt.f32.f32 gives 1.0f or 0.0f");
  for (unsigned l = 0; l < 32; l++) want[l] = (a[l] & 0xFFFF) > (b[l] & 0xFFFF);
  CHECK(run_all(8) == 0 && lanes_eq("%p1", want, "setp.hi.s16"), "setp.hi on an s16 operand is unsigned");
  for (unsigned k = 0; k < 14; k++) {
    for (unsigned l = 0; l < 32; l++) {
      float x = fa[l], y = fb[l];
      int un = isnan(x) || isnan(y), v;
      switch (k) {
      case 0: v = x == y; break;
      case 1: v = !un && x != y; break;
      case 2: v = x < y; break;
      case 3: v = x <= y; break;
      case 4: v = x > y; break;
      case 5: v = x >= y; break;
      case 6: v = un || x == y; break;
      case 7: v = un || x != y; break;
      case 8: v = un || x < y; break;
      case 9: v = un || x <= y; break;
      case 10: v = un || x > y; break;
      case 11: v = un || x >= y; break;
      case 12: v = !un; break;
      default: v = un; break;
      }
      want[l] = (uint64_t)v;
    }
    CHECK(run_all(9 + k) == 0 && lanes_eq("%p1", want, "setp.f32"),
          "setp.f32 eq ne lt le gt ge (ordered) and equ neu ltu leu gtu geu (unordered), num, nan");
  }
  for (unsigned l = 0; l < 32; l++) want[l] = isnan(fa[l]) || isnan(fb[l]) || fa[l] < fb[l];
  CHECK(run_all(23) == 0 && lanes_eq("%p1", want, "setp.ltu.f64"), "setp.ltu.f64 is true for NaN");
  for (unsigned l = 0; l < 32; l++) {
    float x = fpclassify(fa[l]) == FP_SUBNORMAL ? 0.0f : fa[l];
    float y = fpclassify(fb[l]) == FP_SUBNORMAL ? 0.0f : fb[l];
    want[l] = x < y;
  }
  CHECK(run_all(24) == 0 && lanes_eq("%p1", want, "setp.lt.ftz"), "setp.ftz compares flushed subnormals as zero");
}

/* setp of one destination and no boolean operand takes a handler of its
   own per comparison (emu_alu.c, pick_setp1): every integer comparison on
   every 32- and 64-bit type, signed and unsigned views, against plain C,
   and the same p as the general handler of setp p|q; partial masks. */
static void test_setp_single(void) {
  static const char *const cmps[] = {"eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"};
  static const char *const types[] = {"s32", "u32", "b32", "s64", "u64", "b64"};
  char body[16384];
  size_t n = 0;
  for (unsigned t = 0; t < 6; t++)
    for (unsigned c = 0; c < 10; c++) {
      int wide = t >= 3;
      const char *a = wide ? "%rd2" : "%r2", *b = wide ? "%rd3" : "%r3";
      n += (size_t)snprintf(body + n, sizeof body - n, "setp.%s.%s %%p1, %s, %s;\n", cmps[c],
                            types[t], a, b);
      n += (size_t)snprintf(body + n, sizeof body - n, "setp.%s.%s %%p4|%%p5, %s, %s;\n", cmps[c],
                            types[t], a, b);
    }
  CU_ASSERT_FATAL(load(body) == 0);
  for (unsigned l = 0; l < 32; l++) {
    uint32_t x = v32(l, 40), y = (l % 5 == 0) ? x : v32(l, 41);
    uint64_t X = v64(l, 4), Y = (l % 7 == 0) ? X : v64(l, 5);
    set("%r2", l, x); set("%r3", l, y); set("%rd2", l, X); set("%rd3", l, Y);
  }
  int ok = 1, same = 1, masked = 1;
  for (unsigned t = 0; t < 6; t++)
    for (unsigned c = 0; c < 10; c++) {
      uint64_t want[32];
      for (unsigned l = 0; l < 32; l++) {
        int wide = t >= 3, sgn = (t == 0 || t == 3) && c < 6;
        uint64_t ua = wide ? get("%rd2", l) : (uint32_t)get("%r2", l);
        uint64_t ub = wide ? get("%rd3", l) : (uint32_t)get("%r3", l);
        int64_t sa = wide ? (int64_t)ua : (int32_t)(uint32_t)ua;
        int64_t sb = wide ? (int64_t)ub : (int32_t)(uint32_t)ub;
        unsigned k = c < 6 ? c : c - 4; /* lo ls hi hs: lt le gt ge, unsigned */
        int v;
        switch (k) {
        case 0: v = ua == ub; break;
        case 1: v = ua != ub; break;
        case 2: v = sgn ? sa < sb : ua < ub; break;
        case 3: v = sgn ? sa <= sb : ua <= ub; break;
        case 4: v = sgn ? sa > sb : ua > ub; break;
        default: v = sgn ? sa >= sb : ua >= ub; break;
        }
        want[l] = (uint64_t)v;
      }
      unsigned idx = 2 * (t * 10 + c);
      ok &= run_all(idx) == 0 && lanes_eq("%p1", want, "setp single");
      same &= run_all(idx + 1) == 0 && lanes_eq("%p4", want, "setp p|q");
      /* a partial mask: lanes outside keep what they held */
      for (unsigned l = 0; l < 32; l++) set("%p1", l, 7);
      uint64_t part[32];
      for (unsigned l = 0; l < 32; l++) part[l] = (0x5A5A5A5Au >> l & 1) ? want[l] : 7;
      masked &= run(idx, 0x5A5A5A5Au) == 0 && lanes_eq("%p1", part, "setp single masked");
    }
  CHECK(ok, "setp.CMP.T p (one destination) for eq..hs on s32 u32 b32 s64 u64 b64 equals plain C");
  CHECK(same, "... and the general setp p|q gives the same p");
  CHECK(masked, "... and a partial mask writes its lanes only");
}

/* ------------------------------------------------------------ fp32/64 -- */

static void test_fp_rn(void) {
  CU_ASSERT_FATAL(load("add.f32 %f1, %f2, %f3;\n sub.rn.f32 %f1, %f2, %f3;\n mul.rn.f32 %f1, %f2, %f3;\n"
                       "fma.rn.f32 %f1, %f2, %f3, %f4;\n div.rn.f32 %f1, %f2, %f3;\n"
                       "add.f64 %fd1, %fd2, %fd3;\n mul.rn.f64 %fd1, %fd2, %fd3;\n"
                       "fma.rn.f64 %fd1, %fd2, %fd3, %fd4;\n div.rn.f64 %fd1, %fd2, %fd3;\n"
                       "sqrt.rn.f32 %f1, %f2;\n sqrt.rn.f64 %fd1, %fd2;\n rcp.rn.f32 %f1, %f2;\n"
                       "mad.rn.f32 %f1, %f2, %f3, %f4;\n") == 0);
  float a[32], b[32], c[32];
  double A[32], B[32], C[32];
  uint64_t want[32];
  int ok = 1;
  for (int round_ = 0; round_ < 40 && ok; round_++) {
    for (unsigned l = 0; l < 32; l++) {
      a[l] = vf(l, (unsigned)round_); b[l] = vf(l, (unsigned)round_ + 1); c[l] = vf(l, (unsigned)round_ + 2);
      A[l] = (double)a[l] * 1.000000119 + (double)b[l];
      B[l] = u2d(rnd64() & 0xBFFFFFFFFFFFFFFFull); C[l] = (double)c[l];
      set("%f2", l, f2u(a[l])); set("%f3", l, f2u(b[l])); set("%f4", l, f2u(c[l]));
      set("%fd2", l, d2u(A[l])); set("%fd3", l, d2u(B[l])); set("%fd4", l, d2u(C[l]));
    }
#define FEXP(idx, expr)                                                       \
  do {                                                                        \
    for (unsigned l = 0; l < 32; l++) want[l] = canon32(f2u(expr));           \
    ok &= run_all(idx) == 0 && lanes_eq("%f1", want, #expr);                  \
  } while (0)
#define DEXP(idx, expr)                                                       \
  do {                                                                        \
    for (unsigned l = 0; l < 32; l++) want[l] = d2u(expr);                    \
    ok &= run_all(idx) == 0 && lanes_eq("%fd1", want, #expr);                 \
  } while (0)
    FEXP(0, a[l] + b[l]);
    FEXP(1, a[l] - b[l]);
    FEXP(2, a[l] * b[l]);
    FEXP(3, fmaf(a[l], b[l], c[l]));
    FEXP(4, a[l] / b[l]);
    FEXP(9, sqrtf(a[l]));
    FEXP(11, 1.0f / a[l]);
    FEXP(12, fmaf(a[l], b[l], c[l]));
    for (unsigned l = 0; l < 32; l++) {
      /* host NaN bit patterns are not compared for f64 */
      if (isnan(A[l] + B[l]) || isnan(A[l] * B[l]) || isnan(A[l] / B[l]) || isnan(fma(A[l], B[l], C[l]))) {
        A[l] = 1.0; set("%fd2", l, d2u(1.0));
        B[l] = 3.0; set("%fd3", l, d2u(3.0));
      }
    }
    DEXP(5, A[l] + B[l]);
    DEXP(6, A[l] * B[l]);
    DEXP(7, fma(A[l], B[l], C[l]));
    DEXP(8, A[l] / B[l]);
    for (unsigned l = 0; l < 32; l++) set("%fd2", l, d2u(fabs(A[l])));
    DEXP(10, sqrt(fabs(A[l])));
  }
  CHECK(ok, "fp32 and fp64 .rn add/sub/mul/fma/div/sqrt/rcp equal the host's IEEE results bit for bit (f32 NaN canonical)");
}

static void test_fp_ftz_sat_minmax(void) {
  CU_ASSERT_FATAL(load("add.ftz.f32 %f1, %f2, %f3;\n mul.sat.f32 %f1, %f2, %f3;\n"
                       "min.f32 %f1, %f2, %f3;\n max.f32 %f1, %f2, %f3;\n min.NaN.f32 %f1, %f2, %f3;\n"
                       "abs.ftz.f32 %f1, %f2;\n neg.f32 %f1, %f2;\n max.f64 %fd1, %fd2, %fd3;\n"
                       "copysign.f32 %f1, %f2, %f3;\n testp.subnormal.f32 %p1, %f2;\n"
                       "testp.notanumber.f64 %p1, %fd2;\n testp.finite.f32 %p1, %f2;\n"
                       "testp.normal.f32 %p1, %f2;\n testp.infinite.f32 %p1, %f2;\n"
                       "add.sat.ftz.f32 %f1, %f2, %f3;\n") == 0);
  /* lane pairs: (a, b) */
  static const uint32_t pa[16] = {0x00000001u, 0x80000003u, 0x3F800000u, 0x7FC00000u,
                                  0x7FC00000u, 0x80000000u, 0x00000000u, 0x40000000u,
                                  0x3F000000u, 0xC0000000u, 0x007FFFFFu, 0x7F800000u,
                                  0xFF800000u, 0x3F800001u, 0x00800000u, 0x7F7FFFFFu};
  static const uint32_t pb[16] = {0x00000001u, 0x3F800000u, 0x7FC00000u, 0x40000000u,
                                  0x7FC00000u, 0x00000000u, 0x80000000u, 0x3F000000u,
                                  0x3F000000u, 0x3F800000u, 0x00000001u, 0x3F800000u,
                                  0x3F800000u, 0x3F800000u, 0x80000001u, 0x7F7FFFFFu};
  uint64_t want[32];
  for (unsigned l = 0; l < 32; l++) {
    set("%f2", l, pa[l & 15]); set("%f3", l, pb[l & 15]);
    set("%fd2", l, d2u(u2f(pa[l & 15]))); set("%fd3", l, d2u(u2f(pb[l & 15])));
  }
  for (unsigned l = 0; l < 32; l++) {
    float x = u2f(pa[l & 15]), y = u2f(pb[l & 15]);
    if (fpclassify(x) == FP_SUBNORMAL) x = copysignf(0.0f, x);
    if (fpclassify(y) == FP_SUBNORMAL) y = copysignf(0.0f, y);
    float s = x + y;
    if (fpclassify(s) == FP_SUBNORMAL) s = copysignf(0.0f, s);
    want[l] = canon32(f2u(s));
  }
  CHECK(run_all(0) == 0 && lanes_eq("%f1", want, "add.ftz"), "add.ftz.f32 flushes subnormal inputs (sign kept)");
  for (unsigned l = 0; l < 32; l++) {
    float p = u2f(pa[l & 15]) * u2f(pb[l & 15]);
    want[l] = f2u(isnan(p) ? 0.0f : p <= 0 ? 0.0f : p >= 1 ? 1.0f : p);
  }
  CHECK(run_all(1) == 0 && lanes_eq("%f1", want, "mul.sat"), "mul.sat.f32 clamps to [0,1], NaN and -0 to +0");
  run_all(2);
  CHECK(get("%f1", 3) == 0x40000000u && get("%f1", 2) == 0x3F800000u,
        "min.f32 returns the non-NaN operand");
  CHECK(get("%f1", 4) == 0x7FFFFFFFu, "min.f32 of two NaNs is the canonical NaN");
  CHECK(get("%f1", 5) == 0x80000000u && get("%f1", 6) == 0x80000000u, "min.f32 orders -0.0 below +0.0");
  CHECK(get("%f1", 9) == 0xC0000000u, "min.f32 of -2 and 1 is -2");
  run_all(3);
  CHECK(get("%f1", 5) == 0 && get("%f1", 6) == 0, "max.f32 orders +0.0 above -0.0");
  CHECK(get("%f1", 7) == 0x40000000u && get("%f1", 3) == 0x40000000u, "max.f32 picks the larger / non-NaN");
  run_all(4);
  CHECK(get("%f1", 3) == 0x7FFFFFFFu && get("%f1", 7) == 0x3F000000u, "min.NaN.f32 propagates NaN");
  run_all(5);
  CHECK(get("%f1", 1) == 0 && get("%f1", 9) == 0x40000000u, "abs.ftz.f32 flushes a subnormal to +0 and clears the sign");
  run_all(6);
  CHECK(get("%f1", 2) == 0xBF800000u && get("%f1", 5) == 0, "neg.f32 flips the sign bit (neg -0 = +0)");
  run_all(7);
  CHECK(u2d(get("%fd1", 9)) == 1.0 && get("%fd1", 5) == 0 && u2d(get("%fd1", 3)) == 2.0,
        "max.f64 with signed zeros and NaN");
  run_all(8);
  CHECK(get("%f1", 1) == 0xBF800000u && get("%f1", 9) == 0xBF800000u && get("%f1", 7) == 0x3F000000u,
        "copysign.f32 d, a, b takes the sign of a and the magnitude of b");
  run_all(9);
  CHECK(get("%p1", 0) == 1 && get("%p1", 10) == 1 && get("%p1", 2) == 0 && get("%p1", 5) == 0,
        "testp.subnormal");
  run_all(10);
  CHECK(get("%p1", 3) == 1 && get("%p1", 2) == 0 && get("%p1", 11) == 0, "testp.notanumber.f64");
  run_all(11);
  CHECK(get("%p1", 11) == 0 && get("%p1", 3) == 0 && get("%p1", 0) == 1, "testp.finite excludes inf and NaN");
  run_all(12);
  CHECK(get("%p1", 2) == 1 && get("%p1", 0) == 0 && get("%p1", 5) == 0 && get("%p1", 11) == 0,
        "testp.normal excludes zero, subnormal, inf");
  run_all(13);
  CHECK(get("%p1", 11) == 1 && get("%p1", 12) == 1 && get("%p1", 3) == 0, "testp.infinite");
  run_all(14);
  CHECK(get("%f1", 15) == 0x3F800000u && get("%f1", 9) == 0 && get("%f1", 0) == 0,
        "add.sat.ftz.f32: overflow clamps to 1, negatives and flushed zeros to +0");
}

/* Host reference under a rounding mode; volatile keeps the operation
   between the fesetround calls. */
static uint32_t host_f32(int fe, int o, float a, float b, float c) {
  volatile float va = a, vb = b, vc = c, vr;
  fesetround(fe);
  switch (o) {
  case 0: vr = va + vb; break;
  case 1: vr = va - vb; break;
  case 2: vr = va * vb; break;
  case 3: vr = fmaf(va, vb, vc); break;
  case 4: vr = va / vb; break;
  default: vr = sqrtf(va); break;
  }
  fesetround(FE_TONEAREST);
  return f2u(vr);
}
static uint64_t host_f64(int fe, int o, double a, double b, double c) {
  volatile double va = a, vb = b, vc = c, vr;
  fesetround(fe);
  switch (o) {
  case 0: vr = va + vb; break;
  case 1: vr = va - vb; break;
  case 2: vr = va * vb; break;
  case 3: vr = fma(va, vb, vc); break;
  case 4: vr = va / vb; break;
  default: vr = sqrt(va); break;
  }
  fesetround(FE_TONEAREST);
  return d2u(vr);
}

/* True when the host's float unit honours fesetround; valgrind's does not
   (it computes SSE arithmetic round-to-nearest whatever the mode), and then
   the host cannot serve as the reference for directed rounding. */
static int host_honours_rounding(void) {
  /* volatile results: the division must happen between the calls */
  volatile float one = 1.0f, three = 3.0f, up, down;
  fesetround(FE_UPWARD);
  up = one / three;
  fesetround(FE_DOWNWARD);
  down = one / three;
  fesetround(FE_TONEAREST);
  return up != down;
}

static void test_fp_directed(void) {
  if (!host_honours_rounding()) {
    printf("\n    [skip: this host ignores fesetround (valgrind?); no reference for "
           "directed rounding] ");
    return;
  }
  static const char *rn[3] = {"rz", "rm", "rp"};
  static const int fe[3] = {FE_TOWARDZERO, FE_DOWNWARD, FE_UPWARD};
  static const char *ops[6] = {"add", "sub", "mul", "fma", "div", "sqrt"};
  char body[4096] = "";
  for (int m = 0; m < 3; m++)
    for (int o = 0; o < 6; o++) {
      char line[128];
      const char *args = o == 3 ? "%f2, %f3, %f4" : o == 5 ? "%f2" : "%f2, %f3";
      snprintf(line, sizeof line, "%s.%s.f32 %%f1, %s;\n", ops[o], rn[m], args);
      strcat(body, line);
      const char *dargs = o == 3 ? "%fd2, %fd3, %fd4" : o == 5 ? "%fd2" : "%fd2, %fd3";
      snprintf(line, sizeof line, "%s.%s.f64 %%fd1, %s;\n", ops[o], rn[m], dargs);
      strcat(body, line);
    }
  CU_ASSERT_FATAL(load(body) == 0);
  int ok32 = 1, ok64 = 1;
  uint64_t want[32];
  for (int round_ = 0; round_ < 12; round_++) {
    for (unsigned l = 0; l < 32; l++) {
      float a = vf(l, (unsigned)round_ * 3), b = vf(l, (unsigned)round_ * 3 + 1), c = vf(l, (unsigned)round_ * 3 + 2);
      if (l == 20) { a = 1.0f; b = -1.0f; c = -0.0f; } /* exact zero sums: -0 under rm */
      if (l == 21) { a = 3.0f; b = 3.0f; c = -9.0f; }
      set("%f2", l, f2u(a)); set("%f3", l, f2u(b)); set("%f4", l, f2u(c));
      double A = u2d(rnd64() & 0x7FFFFFFFFFFFFFFFull) , B = (double)b * 1.1, C = (double)c;
      if (l < 8) A = (double)a;
      if (isnan(A) || isinf(A)) A = 2.5;
      if (l == 20) { A = 1.0; B = -1.0; C = -0.0; }
      set("%fd2", l, d2u(A)); set("%fd3", l, d2u(B)); set("%fd4", l, d2u(C));
    }
    for (unsigned m = 0; m < 3; m++)
      for (unsigned o = 0; o < 6; o++) {
        unsigned idx = m * 12 + o * 2;
        for (unsigned l = 0; l < 32; l++)
          want[l] = canon32(host_f32(fe[m], (int)o, u2f((uint32_t)get("%f2", l)),
                                     u2f((uint32_t)get("%f3", l)), u2f((uint32_t)get("%f4", l))));
        ok32 &= run_all(idx) == 0 && lanes_eq("%f1", want, ops[o]);
        for (unsigned l = 0; l < 32; l++)
          want[l] = host_f64(fe[m], (int)o, u2d(get("%fd2", l)), u2d(get("%fd3", l)), u2d(get("%fd4", l)));
        run_all(idx + 1);
        for (unsigned l = 0; l < 32; l++)
          if (isnan(u2d(want[l])) && isnan(u2d(get("%fd1", l)))) want[l] = get("%fd1", l);
        ok64 &= lanes_eq("%fd1", want, ops[o]);
      }
  }
  CHECK(ok32, "f32 add/sub/mul/fma/div/sqrt .rz/.rm/.rp (software rounding) equal the host under fesetround");
  CHECK(ok64, "f64 add/sub/mul/fma/div/sqrt .rz/.rm/.rp equal the host under fesetround");
  CHECK(fegetround() == FE_TONEAREST, "the host rounding mode is restored after directed f64 handlers");
}

static int ulp_diff(float x, float y) {
  if (isnan(x) || isnan(y)) return isnan(x) && isnan(y) ? 0 : 1 << 30;
  if (x == y) return 0;
  int32_t a = (int32_t)f2u(x), b = (int32_t)f2u(y);
  if (a < 0) a = INT32_MIN - a;
  if (b < 0) b = INT32_MIN - b;
  int64_t d = (int64_t)a - b;
  return d < 0 ? (int)-d : (int)d;
}

static void test_fp_approx(void) {
  CU_ASSERT_FATAL(load("sin.approx.f32 %f1, %f2;\n cos.approx.ftz.f32 %f1, %f2;\n ex2.approx.f32 %f1, %f2;\n"
                       "lg2.approx.f32 %f1, %f2;\n rsqrt.approx.f32 %f1, %f2;\n tanh.approx.f32 %f1, %f2;\n"
                       "rcp.approx.f32 %f1, %f2;\n div.full.f32 %f1, %f2, %f3;\n sqrt.approx.f32 %f1, %f2;\n"
                       "rcp.approx.ftz.f64 %fd1, %fd2;\n rsqrt.approx.f64 %fd1, %fd2;\n") == 0);
  int worst = 0;
  for (int round_ = 0; round_ < 20; round_++) {
    float x[32];
    for (unsigned l = 0; l < 32; l++) {
      x[l] = u2f(((uint32_t)rnd64() & 0x807FFFFFu) | ((uint32_t)(110 + rnd64() % 30) << 23));
      if (l < 4) x[l] = (float)l * 0.5f;
    }
    for (unsigned l = 0; l < 32; l++) { set("%f2", l, f2u(x[l])); set("%f3", l, f2u(x[(l + 1) & 31])); }
    for (unsigned k = 0; k < 9; k++) {
      run_all(k);
      for (unsigned l = 0; l < 32; l++) {
        long double v = x[l], ref;
        switch (k) {
        case 0: ref = sinl(v); break;
        case 1: ref = cosl(v); break;
        case 2: ref = exp2l(v); break;
        case 3: ref = log2l(v); break;
        case 4: ref = 1.0L / sqrtl(v); break;
        case 5: ref = tanhl(v); break;
        case 6: ref = 1.0L / v; break;
        case 7: ref = v / (long double)x[(l + 1) & 31]; break;
        default: ref = sqrtl(v); break;
        }
        int d = ulp_diff(u2f((uint32_t)get("%f1", l)), canon32(f2u((float)ref)) == 0x7FFFFFFFu
                                                             ? NAN : (float)ref);
        if (d > worst) {
          worst = d;
          if (d > 1) fprintf(stderr, "test_emu_alu: approx fn %u x=%a got %a ref %a\n", k,
                             (double)x[l], (double)u2f((uint32_t)get("%f1", l)), (double)ref);
        }
      }
    }
  }
  CHECK(worst <= 1, "f32 .approx functions are within 1 ulp of the correctly rounded value");
  setall("%fd2", d2u(3.0));
  run_all(9);
  CHECK(u2d(get("%fd1", 0)) == 1.0 / 3.0, "rcp.approx.ftz.f64 of 3");
  setall("%fd2", d2u(4.0));
  run_all(10);
  CHECK(u2d(get("%fd1", 0)) == 0.5, "rsqrt.approx.f64 of 4 is 0.5");
  setall("%f2", 0x80000000u);
  run_all(3);
  CHECK(get("%f1", 0) == 0xFF800000u, "lg2.approx(-0) is -inf");
  setall("%f2", 0xFF800000u);
  run_all(2);
  CHECK(get("%f1", 0) == 0, "ex2.approx(-inf) is +0");
}

/* ---------------------------------------------------------------- cvt -- */

static void test_cvt_int(void) {
  CU_ASSERT_FATAL(load("cvt.s64.s32 %rd1, %r2;\n cvt.u64.u32 %rd1, %r2;\n cvt.u32.u64 %r1, %rd2;\n"
                       "cvt.sat.s8.s32 %r1, %r2;\n cvt.sat.u16.s32 %r1, %r2;\n cvt.sat.s32.u32 %r1, %r2;\n"
                       "cvt.sat.u32.s64 %r1, %rd2;\n cvt.s32.s8 %r1, %r2;\n cvt.u16.u8 %h1, %r2;\n"
                       "cvt.s16.s64 %h1, %rd2;\n") == 0);
  uint32_t a[32];
  uint64_t A[32], want[32];
  for (unsigned l = 0; l < 32; l++) {
    a[l] = v32(l, 40); A[l] = v64(l, 41);
    if (l == 30) a[l] = 0x80; /* s8 edge */
    set("%r2", l, a[l]); set("%rd2", l, A[l]);
  }
  for (unsigned l = 0; l < 32; l++) want[l] = (uint64_t)(int64_t)(int32_t)a[l];
  CHECK(run_all(0) == 0 && lanes_eq("%rd1", want, "s64.s32"), "cvt.s64.s32 sign-extends");
  for (unsigned l = 0; l < 32; l++) want[l] = a[l];
  CHECK(run_all(1) == 0 && lanes_eq("%rd1", want, "u64.u32"), "cvt.u64.u32 zero-extends");
  for (unsigned l = 0; l < 32; l++) want[l] = (uint32_t)A[l];
  CHECK(run_all(2) == 0 && lanes_eq("%r1", want, "u32.u64"), "cvt.u32.u64 truncates");
  for (unsigned l = 0; l < 32; l++) {
    int32_t x = (int32_t)a[l];
    want[l] = (uint8_t)(x > 127 ? 127 : x < -128 ? -128 : x);
  }
  CHECK(run_all(3) == 0 && lanes_eq("%r1", want, "sat.s8.s32"), "cvt.sat.s8.s32 clamps to [-128,127] (8-bit pattern)");
  for (unsigned l = 0; l < 32; l++) {
    int32_t x = (int32_t)a[l];
    want[l] = (uint64_t)(x < 0 ? 0 : x > 65535 ? 65535 : x);
  }
  CHECK(run_all(4) == 0 && lanes_eq("%r1", want, "sat.u16.s32"), "cvt.sat.u16.s32 clamps to [0,65535]");
  for (unsigned l = 0; l < 32; l++) want[l] = a[l] > 0x7FFFFFFFu ? 0x7FFFFFFFu : a[l];
  CHECK(run_all(5) == 0 && lanes_eq("%r1", want, "sat.s32.u32"), "cvt.sat.s32.u32 clamps at INT32_MAX");
  for (unsigned l = 0; l < 32; l++) {
    int64_t x = (int64_t)A[l];
    want[l] = (uint64_t)(x < 0 ? 0 : x > 0xFFFFFFFFll ? 0xFFFFFFFFll : x);
  }
  CHECK(run_all(6) == 0 && lanes_eq("%r1", want, "sat.u32.s64"), "cvt.sat.u32.s64");
  for (unsigned l = 0; l < 32; l++) want[l] = (uint32_t)(int32_t)(int8_t)a[l];
  CHECK(run_all(7) == 0 && lanes_eq("%r1", want, "s32.s8"), "cvt.s32.s8 sign-extends the low byte");
  for (unsigned l = 0; l < 32; l++) want[l] = a[l] & 0xFF;
  CHECK(run_all(8) == 0 && lanes_eq("%h1", want, "u16.u8"), "cvt.u16.u8");
  for (unsigned l = 0; l < 32; l++) want[l] = A[l] & 0xFFFF;
  CHECK(run_all(9) == 0 && lanes_eq("%h1", want, "s16.s64"), "cvt.s16.s64 truncates");
}

static void test_cvt_float_int(void) {
  CU_ASSERT_FATAL(load("cvt.rni.s32.f32 %r1, %f2;\n cvt.rzi.s32.f32 %r1, %f2;\n cvt.rmi.s32.f32 %r1, %f2;\n"
                       "cvt.rpi.s32.f32 %r1, %f2;\n cvt.rzi.u32.f32 %r1, %f2;\n cvt.rni.s64.f64 %rd1, %fd2;\n"
                       "cvt.rzi.u8.f32 %r1, %f2;\n cvt.rn.f32.s32 %f1, %r2;\n cvt.rz.f32.u64 %f1, %rd2;\n"
                       "cvt.rn.f64.s64 %fd1, %rd2;\n cvt.rm.f32.s64 %f1, %rd2;\n cvt.rp.f32.u32 %f1, %r2;\n"
                       "cvt.rn.f16.s32 %h1, %r2;\n cvt.rni.u64.f64 %rd1, %fd2;\n") == 0);
  static const float fv[16] = {2.5f, -2.5f, 3.5f, -0.5f, 0.5f, 1.49999988f, -1.5f, 1e10f,
                               -1e10f, NAN, INFINITY, -INFINITY, 2147483520.0f, -2147483648.0f, 255.9f, 256.0f};
  uint64_t want[32];
  for (unsigned l = 0; l < 32; l++) {
    float x = l < 16 ? fv[l] : vf(l, 50) * 1e6f;
    set("%f2", l, f2u(x)); set("%fd2", l, d2u((double)x * 3.0e8));
  }
  static const int fe[4] = {FE_TONEAREST, FE_TOWARDZERO, FE_DOWNWARD, FE_UPWARD};
  for (unsigned k = 0; k < 4; k++) {
    for (unsigned l = 0; l < 32; l++) {
      float x = u2f((uint32_t)get("%f2", l));
      double r = k == 0 ? nearbyint(x) : k == 1 ? trunc(x) : k == 2 ? floor(x) : ceil(x);
      want[l] = (uint32_t)(isnan(x) ? 0 : r >= 2147483648.0 ? INT32_MAX : r < -2147483648.0 ? INT32_MIN : (int32_t)r);
    }
    (void)fe;
    CHECK(run_all(k) == 0 && lanes_eq("%r1", want, "f32->s32"),
          "cvt.{rni,rzi,rmi,rpi}.s32.f32: ties to even, NaN -> 0, clamped to the s32 range");
  }
  CHECK(get("%r1", 0) == 3 && get("%r1", 1) == (uint32_t)-2, "cvt.rpi of 2.5 is 3 and of -2.5 is -2");
  run_all(0);
  CHECK(get("%r1", 0) == 2 && get("%r1", 2) == 4 && get("%r1", 1) == (uint32_t)-2,
        "cvt.rni rounds .5 ties to even (2.5 -> 2, 3.5 -> 4, -2.5 -> -2)");
  for (unsigned l = 0; l < 32; l++) {
    float x = u2f((uint32_t)get("%f2", l));
    double r = trunc(x);
    want[l] = isnan(x) || r <= 0 ? 0 : r >= 4294967296.0 ? 0xFFFFFFFFu : (uint32_t)r;
  }
  CHECK(run_all(4) == 0 && lanes_eq("%r1", want, "f32->u32"), "cvt.rzi.u32.f32 clamps negatives to 0");
  for (unsigned l = 0; l < 32; l++) {
    double x = u2d(get("%fd2", l)), r = nearbyint(x);
    want[l] = (uint64_t)(isnan(x) ? 0 : r >= 0x1p63 ? INT64_MAX : r < -0x1p63 ? INT64_MIN : (int64_t)r);
  }
  CHECK(run_all(5) == 0 && lanes_eq("%rd1", want, "f64->s64"), "cvt.rni.s64.f64 clamps to the s64 range");
  run_all(6);
  CHECK(get("%r1", 14) == 255 && get("%r1", 15) == 255 && get("%r1", 7) == 255 && get("%r1", 8) == 0,
        "cvt.rzi.u8.f32 saturates to [0,255]");
  for (unsigned l = 0; l < 32; l++) set("%r2", l, v32(l, 51)), set("%rd2", l, v64(l, 52) >> (l & 7));
  for (unsigned l = 0; l < 32; l++) want[l] = f2u((float)(int32_t)get("%r2", l));
  CHECK(run_all(7) == 0 && lanes_eq("%f1", want, "f32.s32"), "cvt.rn.f32.s32 equals the host conversion");
  int ok = 1;
  for (unsigned k = 0; k < 4; k++) {
    static const unsigned idx[4] = {8, 10, 11, 9};
    static const int fm[4] = {FE_TOWARDZERO, FE_DOWNWARD, FE_UPWARD, FE_TONEAREST};
    run_all(idx[k]);
    for (unsigned l = 0; l < 32; l++) {
      volatile uint64_t u = get("%rd2", l);
      volatile int64_t s = (int64_t)get("%rd2", l);
      volatile uint32_t u32 = (uint32_t)get("%r2", l);
      volatile float vf_;
      volatile double vd;
      fesetround(fm[k]);
      if (k == 0) vf_ = (float)u;
      else if (k == 1) vf_ = (float)s;
      else if (k == 2) vf_ = (float)u32;
      else vd = (double)s;
      fesetround(FE_TONEAREST);
      want[l] = k == 3 ? d2u(vd) : f2u(vf_);
    }
    ok &= lanes_eq(k == 3 ? "%fd1" : "%f1", want, "int->float");
  }
  CHECK(ok, "cvt.{rz,rm,rp}.f32.{u64,s64,u32} and cvt.rn.f64.s64 round 64-bit integers exactly like the host");
  setall("%r2", 65520);
  run_all(12);
  CHECK(get("%h1", 0) == 0x7C00, "cvt.rn.f16.s32 of 65520 overflows to +inf");
  set("%fd2", 0, d2u(-3.7)); set("%fd2", 1, d2u(1e30)); set("%fd2", 2, d2u(NAN));
  run_all(13);
  CHECK(get("%rd1", 0) == 0 && get("%rd1", 1) == UINT64_MAX && get("%rd1", 2) == 0,
        "cvt.rni.u64.f64: negatives -> 0, too large -> max, NaN -> 0");
}

static void test_cvt_float(void) {
  CU_ASSERT_FATAL(load("cvt.rn.f16.f32 %h1, %f2;\n cvt.rz.f16.f32 %h1, %f2;\n cvt.rna.f16.f32 %h1, %f2;\n"
                       "cvt.f32.f16 %f1, %h2;\n cvt.rn.f16.f64 %h1, %fd2;\n cvt.rn.bf16.f32 %h1, %f2;\n"
                       "cvt.f32.bf16 %f1, %h2;\n cvt.f64.f32 %fd1, %f2;\n cvt.rn.f32.f64 %f1, %fd2;\n"
                       "cvt.rm.f32.f64 %f1, %fd2;\n cvt.rp.f32.f64 %f1, %fd2;\n cvt.rni.f32.f32 %f1, %f2;\n"
                       "cvt.rzi.f64.f64 %fd1, %fd2;\n cvt.sat.f32.f32 %f1, %f2;\n cvt.ftz.f32.f32 %f1, %f2;\n"
                       "cvt.rn.f16x2.f32 %r1, %f2, %f3;\n cvt.rn.bf16x2.f32 %r1, %f2, %f3;\n"
                       "cvt.rna.tf32.f32 %r1, %f2;\n cvt.rn.relu.f16.f32 %h1, %f2;\n cvt.rp.f16.f32 %h1, %f2;\n"
                       "cvt.rn.satfinite.f16x2.f32 %r1, %f2, %f3;\n") == 0);
  /* f32 -> f16 at ties and limits */
  static const float in[12] = {1.0f, 1.00048828125f /* 1 + 2^-11: tie */, 1.00146484375f /* 1 + 3*2^-11 */,
                               65504.0f, 65520.0f /* tie with 2^16 */, 0x1p-24f, 0x1p-25f, 0x1.8p-25f,
                               -0.0f, NAN, -65536.0f, 0x1.004p-14f};
  static const uint16_t rn[12] = {0x3C00, 0x3C00, 0x3C02, 0x7BFF, 0x7C00, 0x0001, 0x0000, 0x0001,
                                  0x8000, 0x7FFF, 0xFC00, 0x0401};
  static const uint16_t rz[12] = {0x3C00, 0x3C00, 0x3C01, 0x7BFF, 0x7BFF, 0x0001, 0x0000, 0x0000,
                                  0x8000, 0x7FFF, 0xFBFF, 0x0401};
  static const uint16_t rna[12] = {0x3C00, 0x3C01, 0x3C02, 0x7BFF, 0x7C00, 0x0001, 0x0001, 0x0001,
                                   0x8000, 0x7FFF, 0xFC00, 0x0401};
  uint64_t want[32];
  for (unsigned l = 0; l < 32; l++) set("%f2", l, f2u(in[l % 12]));
  for (unsigned l = 0; l < 32; l++) want[l] = rn[l % 12];
  CHECK(run_all(0) == 0 && lanes_eq("%h1", want, "rn.f16.f32"),
        "cvt.rn.f16.f32: ties to even, overflow to inf, subnormal halves, canonical NaN");
  for (unsigned l = 0; l < 32; l++) want[l] = rz[l % 12];
  CHECK(run_all(1) == 0 && lanes_eq("%h1", want, "rz.f16.f32"), "cvt.rz.f16.f32: truncation, overflow to max finite");
  for (unsigned l = 0; l < 32; l++) want[l] = rna[l % 12];
  CHECK(run_all(2) == 0 && lanes_eq("%h1", want, "rna.f16.f32"), "cvt.rna.f16.f32: ties away from zero");
#ifdef __FLT16_MAX__
  {
    int ok = 1;
    for (int k = 0; k < 64 && ok; k++) {
      for (unsigned l = 0; l < 32; l++) {
        uint32_t b = ((uint32_t)rnd64() & 0x80FFFFFFu) | ((uint32_t)(96 + rnd64() % 50) << 23);
        set("%f2", l, b);
        _Float16 h = (_Float16)u2f(b);
        uint16_t hb;
        memcpy(&hb, &h, 2);
        want[l] = hb;
      }
      ok &= run_all(0) == 0 && lanes_eq("%h1", want, "rn.f16 vs _Float16");
    }
    CHECK(ok, "cvt.rn.f16.f32 equals the compiler's _Float16 conversion on 2048 random values");
  }
#endif
  for (unsigned l = 0; l < 32; l++) {
    uint16_t h = (uint16_t)(l * 2113u + (l << 10));
    set("%h2", l, h);
    int e = (h >> 10) & 31, m = h & 0x3FF;
    double v = e == 31 ? (m ? NAN : INFINITY) : e == 0 ? ldexp(m, -24) : ldexp(m | 0x400, e - 25);
    want[l] = (h & 0x8000) ? f2u((float)-v) : f2u((float)v);
    if (e == 31 && m) want[l] = get("%h2", l) & 0x8000 ? 0xFFFFFFFFu : 0x7FFFFFFFu;
  }
  run_all(3);
  for (unsigned l = 0; l < 32; l++)
    if ((want[l] & 0x7FFFFFFFu) == 0x7FFFFFFFu) want[l] = get("%f1", l) == 0x7FFFFFFFu ? 0x7FFFFFFFu : ~0u;
  CHECK(lanes_eq("%f1", want, "f32.f16"), "cvt.f32.f16 is exact (subnormal halves included)");
  setall("%fd2", d2u(1.0 + 0x1p-11 + 0x1p-40));
  set("%fd2", 1, d2u(1e300));
  set("%fd2", 2, d2u(0x1p-30));
  run_all(4);
  CHECK(get("%h1", 0) == 0x3C01, "cvt.rn.f16.f64 rounds once (no double rounding through f32)");
  CHECK(get("%h1", 1) == 0x7C00 && get("%h1", 2) == 0, "cvt.rn.f16.f64: huge -> inf, tiny -> 0");
  setall("%f2", 0x3F808000u); /* bf16 tie: 1 + 2^-8 -> even 0x3F80 */
  set("%f2", 1, 0x3F818000u); /* 0x3F81 odd + half -> 0x3F82 */
  set("%f2", 2, 0x7F7FFFFFu); /* rounds up to inf */
  run_all(5);
  CHECK(get("%h1", 0) == 0x3F80 && get("%h1", 1) == 0x3F82 && get("%h1", 2) == 0x7F80,
        "cvt.rn.bf16.f32 ties to even and overflows to inf");
  setall("%h2", 0xC0A0);
  run_all(6);
  CHECK(get("%f1", 0) == 0xC0A00000u, "cvt.f32.bf16 shifts into the high half");
  setall("%f2", 0x00000001u);
  run_all(7);
  CHECK(u2d(get("%fd1", 0)) == 0x1p-149, "cvt.f64.f32 keeps f32 subnormals exact");
  int ok = 1;
  for (int k = 0; k < 20; k++) {
    for (unsigned l = 0; l < 32; l++) set("%fd2", l, rnd64() & 0xC7FFFFFFFFFFFFFFull);
    for (unsigned m = 0; m < 3; m++) {
      static const int fm[3] = {FE_TONEAREST, FE_DOWNWARD, FE_UPWARD};
      for (unsigned l = 0; l < 32; l++) {
        volatile double x = u2d(get("%fd2", l));
        volatile float f;
        fesetround(fm[m]);
        f = (float)x;
        fesetround(FE_TONEAREST);
        want[l] = canon32(f2u(f));
      }
      ok &= run_all(8 + m) == 0 && lanes_eq("%f1", want, "f32.f64");
    }
  }
  CHECK(ok, "cvt.{rn,rm,rp}.f32.f64 equal the host conversion under each rounding mode");
  static const float ri[6] = {2.5f, -2.5f, 0.49999997f, -0.0f, 8388609.0f, 1.5f};
  for (unsigned l = 0; l < 32; l++) set("%f2", l, f2u(ri[l % 6])), set("%fd2", l, d2u(-ri[l % 6]));
  run_all(11);
  CHECK(u2f((uint32_t)get("%f1", 0)) == 2.0f && u2f((uint32_t)get("%f1", 5)) == 2.0f &&
            get("%f1", 3) == 0x80000000u && u2f((uint32_t)get("%f1", 4)) == 8388609.0f,
        "cvt.rni.f32.f32 rounds to an integral value, ties to even, -0 kept");
  run_all(12);
  CHECK(u2d(get("%fd1", 0)) == -2.0 && u2d(get("%fd1", 2)) == -0.0 && signbit(u2d(get("%fd1", 2))),
        "cvt.rzi.f64.f64 truncates toward zero");
  static const uint32_t sv[4] = {0xBF800000u, 0x3FC00000u, 0x7FC00000u, 0x3F000000u};
  for (unsigned l = 0; l < 32; l++) set("%f2", l, sv[l & 3]);
  run_all(13);
  CHECK(get("%f1", 0) == 0 && get("%f1", 1) == 0x3F800000u && get("%f1", 2) == 0 && get("%f1", 3) == 0x3F000000u,
        "cvt.sat.f32.f32 clamps to [0,1] and maps NaN to 0");
  setall("%f2", 0x80000005u);
  run_all(14);
  CHECK(get("%f1", 0) == 0x80000000u, "cvt.ftz.f32.f32 flushes a subnormal to -0");
  setall("%f2", f2u(1.0f)); setall("%f3", f2u(-2.0f));
  run_all(15);
  CHECK(get("%r1", 0) == 0x3C00C000u, "cvt.rn.f16x2.f32 d, a, b puts a in the upper half");
  run_all(16);
  CHECK(get("%r1", 0) == 0x3F80C000u, "cvt.rn.bf16x2.f32 packs the same way");
  setall("%f2", 0x3F801000u);
  set("%f2", 1, 0x3F800FFFu);
  run_all(17);
  CHECK(get("%r1", 0) == 0x3F802000u && get("%r1", 1) == 0x3F800000u,
        "cvt.rna.tf32.f32 keeps 10 mantissa bits, ties away");
  setall("%f2", f2u(-3.0f));
  set("%f2", 1, 0x7FC00000u);
  run_all(18);
  CHECK(get("%h1", 0) == 0 && get("%h1", 1) == 0x7FFF, "cvt.rn.relu.f16.f32: negatives -> +0, NaN -> canonical");
  setall("%f2", f2u(1.0001f));
  run_all(19);
  CHECK(get("%h1", 0) == 0x3C01, "cvt.rp.f16.f32 rounds up");
  setall("%f2", f2u(INFINITY)); setall("%f3", f2u(-1e6f));
  run_all(20);
  CHECK(get("%r1", 0) == 0x7BFFFBFFu, "cvt.rn.satfinite.f16x2.f32 maps overflow to the largest finite value");
}

static void test_half(void) {
  CU_ASSERT_FATAL(load("add.f16 %h1, %h2, %h3;\n mul.f16x2 %r1, %r2, %r3;\n fma.rn.f16 %h1, %h2, %h3, %h4;\n"
                       "add.bf16 %h1, %h2, %h3;\n neg.f16x2 %r1, %r2;\n min.f16 %h1, %h2, %h3;\n"
                       "add.rn.sat.f16 %h1, %h2, %h3;\n mul.rn.bf16x2 %r1, %r2, %r3;\n"
                       "setp.lt.f16 %p1, %h2, %h3;\n sub.rz.f16 %h1, %h2, %h3;\n") == 0);
  setall("%h2", 0x3C00); setall("%h3", 0x1000); /* 1 + 2^-11: a tie -> 1.0 */
  set("%h3", 1, 0x1001);                          /* just above the tie -> next */
  set("%h2", 2, 0x7BFF); set("%h3", 2, 0x7BFF);   /* 65504 * 2 -> inf */
  run_all(0);
  CHECK(get("%h1", 0) == 0x3C00 && get("%h1", 1) == 0x3C01 && get("%h1", 2) == 0x7C00,
        "add.f16 rounds to nearest even and overflows to inf");
  setall("%r2", 0x40003C00u); setall("%r3", 0xC2004400u); /* {2, 1} * {-3, 4} */
  run_all(1);
  CHECK(get("%r1", 0) == 0xC6004400u, "mul.f16x2 multiplies each half");
  setall("%h2", 0x3C01); setall("%h3", 0x3C01); setall("%h4", 0xBC02);
  run_all(2); /* (1+u)^2 - (1+2u) = u^2 = 2^-20 exactly; mul then add would give 0 */
  CHECK(get("%h1", 0) == 0x0010, "fma.rn.f16 rounds a*b+c once (u^2 survives as a subnormal)");
  setall("%h2", 0x3F80); setall("%h3", 0x3B80); /* bf16 1 + 2^-8: tie -> 1 */
  run_all(3);
  CHECK(get("%h1", 0) == 0x3F80, "add.bf16 ties to even");
  setall("%r2", 0x3C00BC00u);
  run_all(4);
  CHECK(get("%r1", 0) == 0xBC003C00u, "neg.f16x2 flips both sign bits");
  setall("%h2", 0x7E00); setall("%h3", 0xC000);
  run_all(5);
  CHECK(get("%h1", 0) == 0xC000, "min.f16 ignores a NaN operand");
  setall("%h2", 0x3C00); setall("%h3", 0x3C00);
  set("%h3", 1, 0xC400);
  run_all(6);
  CHECK(get("%h1", 0) == 0x3C00 && get("%h1", 1) == 0, "add.sat.f16 clamps to [0,1]");
  setall("%r2", 0x40003F80u); setall("%r3", 0x40404000u); /* {2,1} * {3,2} */
  run_all(7);
  CHECK(get("%r1", 0) == 0x40C04000u, "mul.rn.bf16x2");
  setall("%h2", 0xBC00); setall("%h3", 0x0001);
  run_all(8);
  CHECK(get("%p1", 0) == 1, "setp.lt.f16 compares decoded halves");
  setall("%h2", 0x3C00); setall("%h3", 0x0001);
  run_all(9);
  CHECK(get("%h1", 0) == 0x3BFF, "sub.rz.f16: 1 - 2^-24 truncates to the value below 1");
}

/* --------------------------------------------------------- selection -- */

static void test_select(void) {
  CU_ASSERT_FATAL(load(".reg .b64 %x<2>;\n"
                       "ld.global.u32 %r1, [%rd1];\n st.global.u32 [%rd1], %r1;\n bra $L;\n$L:\n"
                       "shfl.sync.bfly.b32 %r1, %r2, 1, 31, -1;\n bar.sync 0;\n"
                       "cvta.to.global.u64 %rd1, %rd2;\n"
                       "cvt.rs.f16x2.f32 %r1, %f1, %f2, %r3;\n lop3.b64 %rd1, %rd2, %rd3, %rd4, 0x96;\n"
                       "sin.approx.f64 %fd1, %fd2;\n vadd.u32.u32.u32 %r1, %r2, %r3;\n"
                       "cvt.rni.f32.f64 %f1, %fd1;\n mul.wide.u64 %rd1, %rd2, %rd3;\n"
                       "max.relu.u16x2 %r1, %r2, %r3;\n"
                       "add.rn.f32 %f1, %f2, %f3;\n mov.u32 %r1, %tid.x;\n") == 0);
  const char *why;
  int ok = 1;
  for (unsigned i = 0; i < 6; i++) {
    why = "x";
    ok &= prep(i, &why) == NULL && why == NULL;
  }
  CHECK(ok, "ld, st, bra, shfl, bar and cvta are the engine's: NULL with no reason");
  int okw = 1;
  for (unsigned i = 6; i < 13; i++) {
    why = NULL;
    okw &= prep(i, &why) == NULL && why != NULL && strlen(why) > 5;
  }
  CHECK(okw, "unsupported forms (cvt.rs, lop3.b64, sin.f64, vadd, cvt.rni across types, mul.wide.u64, "
             "max.relu.u16x2) give a reason");
  CHECK(prep(13, &why) != NULL && why == NULL, "a supported form selects a handler with no reason");
  CHECK(prep(14, &why) != NULL, "mov of a special register is an ALU move");
}

/* ------------------------------------------------------- lane masks -- */

/* Every instruction of a kernel: writes only its destinations, only lanes
   in the mask, and the same values as with the full mask. */
static int sweep(const char *body, unsigned *count) {
  if (load(body) != 0) return 0;
  static uint64_t base[MAXSLOT * EMU_LANES], full[MAXSLOT * EMU_LANES];
  int ok = 1;
  for (unsigned i = 0; i < F->ninsns; i++) {
    const char *why;
    for (size_t k = 0; k < MAXSLOT * EMU_LANES; k++) R[k] = rnd64();
    for (unsigned s = 0; s < F->nregs; s++) {
      unsigned t = F->regs[s].type;
      for (unsigned l = 0; l < EMU_LANES; l++) {
        uint64_t *v = &R[s * EMU_LANES + l];
        if (t == PTX_T_PRED) *v &= 1;
        else if (ptx_type_size((ptx_type)t) < 8) *v &= (1ull << (8 * ptx_type_size((ptx_type)t))) - 1;
      }
    }
    if (!prep(i, &why)) continue; /* immediates are filled by prep */
    if (OP.cc != EMU_NOSLOT)
      for (unsigned l = 0; l < EMU_LANES; l++) R[OP.cc * EMU_LANES + l] &= 1;
    memcpy(base, R, sizeof R);
    OP.alu(R, &OP, 0xFFFFFFFFu);
    memcpy(full, R, sizeof R);
    memcpy(R, base, sizeof R);
    uint32_t mask = 0x5A3C0F81u ^ (uint32_t)i;
    OP.alu(R, &OP, mask);
    (*count)++;
    for (unsigned s = 0; s < NSLOT && ok; s++) {
      int isd = s == OP.cc && (OP.insn->flags & PTX_F_CC);
      for (unsigned k = 0; k < OP.nd; k++) isd |= OP.d[k] == s;
      for (unsigned l = 0; l < EMU_LANES; l++) {
        size_t at = s * EMU_LANES + l;
        int in = (mask >> l) & 1;
        if ((!isd || !in) && R[at] != base[at]) ok = 0;
        if (isd && in && R[at] != full[at]) ok = 0;
        if (!ok) {
          fprintf(stderr, "test_emu_alu: sweep: line %u slot %u lane %u\n", OP.insn->line, s, l);
          break;
        }
      }
    }
  }
  return ok;
}

static void test_masks(void) {
  unsigned n = 0;
  int ok = sweep("add.s32 %r1, %r2, %r3;\n mul.wide.u32 %rd1, %r2, %r3;\n div.s32 %r1, %r2, %r3;\n"
                 "rem.u64 %rd1, %rd2, %rd3;\n shl.b32 %r1, %r2, %r3;\n bfe.s32 %r1, %r2, %r3, %r4;\n"
                 "bfi.b32 %r1, %r2, %r3, %r4, %r5;\n prmt.b32 %r1, %r2, %r3, %r4;\n"
                 "lop3.b32 %r1, %r2, %r3, %r4, 0x6A;\n setp.lt.and.s32 %p1|%p2, %r2, %r3, !%p3;\n"
                 "set.ge.f32.f32 %r1, %f2, %f3;\n selp.b64 %rd1, %rd2, %rd3, %p3;\n"
                 "mov.b64 {%r1, %r2}, %rd3;\n mov.b64 %rd1, {%r2, %r3};\n add.cc.u32 %r1, %r2, %r3;\n"
                 "madc.hi.cc.u32 %r1, %r2, %r3, %r4;\n fma.rn.f32 %f1, %f2, %f3, %f4;\n"
                 "add.rz.f32 %f1, %f2, %f3;\n div.rp.f64 %fd1, %fd2, %fd3;\n sqrt.approx.ftz.f32 %f1, %f2;\n"
                 "cvt.rn.f16.f32 %h1, %f2;\n cvt.rzi.s32.f64 %r1, %fd2;\n cvt.s64.s32 %rd1, %r2;\n"
                 "cvt.sat.u8.s16 %r1, %h2;\n cvt.rn.f16x2.f32 %r1, %f2, %f3;\n add.f16x2 %r1, %r2, %r3;\n"
                 "min.NaN.ftz.f32 %f1, %f2, %f3;\n testp.normal.f64 %p1, %fd2;\n popc.b32 %r1, %r2;\n"
                 "dp4a.s32.u32 %r1, %r2, %r3, %r4;\n shf.r.clamp.b32 %r1, %r2, %r3, %r4;\n"
                 "and.pred %p1, !%p2, %p3;\n mad.lo.s64 %rd1, %rd2, %rd3, %rd4;\n"
                 "abs.f64 %fd1, %fd2;\n ex2.approx.ftz.f32 %f1, %f2;\n cvt.rn.f32.u64 %f1, %rd2;\n"
                 "sub.sat.s32 %r1, %r2, 5;\n max.u16 %h1, %h2, %h3;\n mul24.hi.s32 %r1, %r2, %r3;\n"
                 "bfind.s64 %r1, %rd2;\n brev.b64 %rd1, %rd2;\n",
                 &n);
  CHECK(ok, "handlers write only their destination slots, only the lanes in the mask, with full-mask values");
  CHECK(n == 41, "every instruction of the sweep had a handler");
  CHECK(fegetround() == FE_TONEAREST, "the host rounding mode is unchanged after the sweep");
}

static void cleanup(void) {
  ptx_module_free(M);
  M = NULL;
}

static void test_cleanup(void) {
  cleanup();
  CHECK(M == NULL, "the last test module is freed");
}

TEST_SUITES(register_emu_alu_tests) {
  CU_pSuite s = tests_suite("emu_alu");
  TEST_ADD(s, test_int_arith);
  TEST_ADD(s, test_divrem);
  TEST_ADD(s, test_carry);
  TEST_ADD(s, test_logic);
  TEST_ADD(s, test_shifts);
  TEST_ADD(s, test_bitfield);
  TEST_ADD(s, test_prmt);
  TEST_ADD(s, test_dot);
  TEST_ADD(s, test_moves);
  TEST_ADD(s, test_setp);
  TEST_ADD(s, test_setp_single);
  TEST_ADD(s, test_fp_rn);
  TEST_ADD(s, test_fp_ftz_sat_minmax);
  TEST_ADD(s, test_fp_directed);
  TEST_ADD(s, test_fp_approx);
  TEST_ADD(s, test_cvt_int);
  TEST_ADD(s, test_cvt_float_int);
  TEST_ADD(s, test_cvt_float);
  TEST_ADD(s, test_half);
  TEST_ADD(s, test_select);
  TEST_ADD(s, test_masks);
  TEST_ADD(s, test_cleanup);
}
