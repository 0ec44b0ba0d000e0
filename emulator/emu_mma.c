/*
 * emu_mma.c -- the emulator's tensor-core, matrix-load and asynchronous-
 * copy instructions: mma.sync, wmma.load / wmma.mma / wmma.store,
 * ldmatrix, stmatrix, cp.async (with commit_group / wait_group) and the
 * simple forms of cp.async.bulk; and the names, at load time, of the
 * families that are not emulated (wgmma, mbarrier objects, TMA tensor
 * copies).  The engine's side of the contract is in emu_int.h.
 *
 * Fragments.  An mma.sync operand is a vector of registers whose elements
 * each thread holds by the layouts of the PTX ISA ("Matrix fragments for
 * mma.m16n8k16" and friends), with
 *
 *     g = %laneid >> 2 (groupID),   t = %laneid % 4 (threadID_in_group)
 *
 *   m16n8k16 .f16/.bf16  A: 4 regs x 2   row g + 8*((i>>1)&1), col 2t + (i&1) + 8*(i>>2)
 *                        B: 2 regs x 2   row 2t + (i&1) + 8*(i>>1), col g
 *   m16n8k8  .f16/.bf16  A: 2 regs x 2   row g + 8*(i>>1), col 2t + (i&1)
 *                        B: 1 reg  x 2   row 2t + i, col g
 *   m16n8k8  .tf32       A: 4 regs       row g + 8*(i&1), col t + 4*(i>>1)
 *                        B: 2 regs       row t + 4i, col g
 *   m16n8k4  .tf32       A: 2 regs       row g + 8i, col t;  B: 1 reg  row t, col g
 *   m16n8k32 .s8/.u8     A: 4 regs x 4   row g + 8*((i>>2)&1), col 4t + (i&3) + 16*(i>>3)
 *                        B: 2 regs x 4   row 4t + (i&3) + 16*(i>>2), col g
 *   m16n8k16 .s8/.u8     A: 2 regs x 4   row g + 8*(i>>2), col 4t + (i&3)
 *                        B: 1 reg  x 4   row 4t + i, col g
 *   m16n8k*  C/D (.f32, .s32: 4 regs; .f16: 2 regs x 2)
 *                                        row g + 8*(i>>1), col 2t + (i&1)
 *   m8n8k4   .f64        A: (g, t)  B: (t, g)  C/D: 2 regs (g, 2t + i)
 *   m8n8k16  .s8/.u8     A: 1 reg x 4 (g, 4t + i)  B: (4t + i, g)  C/D: 2 regs (g, 2t + i)
 *
 * (element i of a fragment is byte/half i%per of register i/per, low bits
 * first).  wmma fragments are opaque in the ISA and CUDA (a program may
 * only load, multiply, store, fill and map them element-wise); the
 * emulator's layout is row-major chunks: element e of lane l is logical
 * element p = (l * E + e) mod (rows * cols), E the elements a lane holds
 * (A is m x k, B k x n, C and D m x n).  Where 32 * E exceeds the matrix
 * (nvcc's .f16 A and B fragments hold 16 halves a lane) lanes 16..31 hold
 * a second copy; wmma.mma reads the first.  wmma.load and wmma.store map
 * each element to memory by the instruction's layout and stride (row-major
 * element (r, c) at r * ldm + c, column-major at c * ldm + r; ldm defaults
 * to the packed leading dimension), and move them as a GPU's vector loads
 * and stores where a lane's elements are 16-byte runs at aligned addresses
 * (a row-major tile), else element by element (docs/features.md).
 *
 * Arithmetic.  D = A * B + C element by element: for .f16, .bf16 and
 * .tf32 operands (a .tf32 operand is the .b32 register with its 13 low
 * mantissa bits ignored, as the tensor cores read it) every product is
 * exact in double; C and the products are summed in k order in double and
 * rounded once to the accumulator type (nearest even; a NaN is the
 * canonical NaN).  The ISA does not fix the order or the internal
 * precision of the accumulation; this is exact while the sum fits 53 bits.
 * .f64 is a chain of IEEE fma in k order (the .rn the ISA requires);
 * integers are exact, wrapping to 32 bits, or clamped with .satfinite.
 *
 * Memory.  ldmatrix reads, per 8x8 matrix, eight 16-byte rows whose
 * addresses lanes 8j..8j+7 supply (x1: lanes 0-7, x2: 0-15, x4: all), each
 * 16-byte aligned; lane l receives row l/4, columns 2(l%4) and 2(l%4)+1
 * (.trans: the transposed pair).  It goes to the engine as one 32-bit
 * shared load per matrix (two 16-bit ones with .trans), so bank conflicts
 * and bytes count as the hardware's phases do.  cp.async copies its
 * cp-size bytes (4, 8, 16) from global to shared when it issues, reading
 * src-size bytes (the rest zero; ignore-src: none); commit_group and
 * wait_group are no-ops, which is one legal timing of the asynchronous copy
 * (the data are visible before the wait).  The global read counts as a
 * global load, the shared write as a shared store.  cp.async.bulk
 * shared->global (bulk_group) copies at issue too; the bulk copies that
 * complete on an mbarrier and the tensor (TMA) copies are refused.
 *
 * mma, wmma, ldmatrix and stmatrix are .sync.aligned: every lane of the
 * warp executes them together; a warp with lanes missing (exited,
 * diverged, guard false) fails, naming the lanes, rather than computing
 * with registers nobody supplied.
 */
#include "emulator/emu_int.h"
#include "emulator/emu_alu.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

/* Element types. */
enum { T_NONE, T_F16, T_BF16, T_TF32, T_F32, T_F64, T_S8, T_U8, T_S32 };
/* Kinds. */
enum { X_NOP, X_MMA, X_WLD, X_WST, X_WMMA, X_LDM, X_STM, X_CPA, X_BULK_S2G };
/* wmma matrices */
enum { FR_A, FR_B, FR_C, FR_D };

#define MAXFRAG 16 /* registers of one fragment operand */

struct emu_xop {
  uint8_t kind;
  uint8_t m, n, k;
  uint8_t at, bt, ct, dt;    /* element types of A, B, C, D */
  uint8_t frag;              /* wmma.load/store: FR_* */
  uint8_t colmaj;            /* wmma.load/store: memory column-major */
  uint8_t sat;               /* .satfinite (integers) */
  uint8_t space;             /* memory space of the access (ptx_space) */
  uint8_t nmat, trans;       /* ldmatrix / stmatrix */
  uint8_t cpsize;            /* cp.async bytes */
  uint8_t srcmode;           /* cp.async: 0 full, 1 src-size slot, 2 ignore-src predicate */
  uint8_t srcneg;            /* the predicate written !p */
  uint8_t nd, na, nb, nc;    /* fragment registers */
  uint8_t fast;              /* mma.sync m16n8k16/k8 .f16/.bf16 into .f32:
                                mma_half_fast's form */
  uint32_t d[MAXFRAG], a[MAXFRAG], b[MAXFRAG], c[MAXFRAG];
  uint32_t addr, addr2;      /* address base slots (cp.async: dst, src) */
  int64_t off, off2;         /* their offsets */
  uint32_t stride;           /* wmma: ldm slot, or EMU_NOSLOT */
  uint32_t srcsz;            /* cp.async src-size / ignore-src slot */
  uint32_t bulk;             /* cp.async.bulk: size slot */
  uint32_t scratch;          /* first scratch slot: [0] address, [1] address 2,
                                [2..5] data */
  uint16_t *map;             /* mma.sync: dense index (row * cols + col) of
                                element i of lane l, A then B then C/D, each
                                [lane * elements + i] (mma_rc, once) */
};

/* ------------------------------------------------------------- keys -- */

/* The dot-separated tokens of a key (at most 24), each NUL-terminated in buf. */
static unsigned key_tokens(const char *key, char *buf, size_t cap, char **tok) {
  size_t n = strlen(key);
  if (n >= cap) n = cap - 1;
  memcpy(buf, key, n);
  buf[n] = 0;
  unsigned nt = 0;
  for (char *p = buf; nt < 24;) {
    tok[nt++] = p;
    char *d = strchr(p, '.');
    if (!d) break;
    *d = 0;
    p = d + 1;
  }
  return nt;
}

static int has_tok(char **tok, unsigned nt, const char *w) {
  for (unsigned i = 0; i < nt; i++)
    if (!strcmp(tok[i], w)) return 1;
  return 0;
}

static int type_of(const char *t) {
  static const struct { const char *s; int t; } tab[] = {
      {"f16", T_F16}, {"bf16", T_BF16}, {"tf32", T_TF32}, {"f32", T_F32}, {"f64", T_F64},
      {"s8", T_S8},   {"u8", T_U8},     {"s32", T_S32}};
  for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
    if (!strcmp(t, tab[i].s)) return tab[i].t;
  return T_NONE;
}

/* "m16n8k16" -> 16, 8, 16 */
static int shape_of(char **tok, unsigned nt, unsigned *m, unsigned *n, unsigned *k) {
  for (unsigned i = 0; i < nt; i++)
    if (sscanf(tok[i], "m%un%uk%u", m, n, k) == 3) return 1;
  return 0;
}

static int space_of(char **tok, unsigned nt) {
  for (unsigned i = 0; i < nt; i++) {
    if (!strcmp(tok[i], "global")) return PTX_SP_GLOBAL;
    if (!strncmp(tok[i], "shared", 6)) return PTX_SP_SHARED;
  }
  return PTX_SP_GENERIC;
}

double emu_key_tensor_flops(const char *key) {
  if (strncmp(key, "mma.", 4) && strncmp(key, "wmma.mma.", 9)) return 0;
  const char *p = strstr(key, ".m");
  unsigned m, n, k;
  for (; p; p = strstr(p + 1, ".m"))
    if (sscanf(p, ".m%un%uk%u", &m, &n, &k) == 3) return 2.0 * m * n * k / 32.0;
  return 0;
}

/* ------------------------------------------------------- preparation -- */

/* Bytes, and elements per 32-bit register, of an element type. */
static unsigned esize(int t) {
  switch (t) {
  case T_F16: case T_BF16: return 2;
  case T_S8: case T_U8: return 1;
  case T_F64: return 8;
  default: return 4;
  }
}
static unsigned per_reg(int t) { return t == T_F64 ? 1 : 4 / esize(t); }

/* A vector (or single register) operand into slots. */
static int frag_slots(const emu_xprep *p, const ptx_operand *o, uint32_t *slots, uint8_t *n,
                      const char **why) {
  unsigned cnt = o->kind == PTX_OPND_VEC ? o->n : 1;
  const ptx_operand *el = o->kind == PTX_OPND_VEC ? o + 1 : o;
  if (cnt > MAXFRAG) { *why = "fragment of more than 16 registers"; return 1; }
  for (unsigned j = 0; j < cnt; j++) {
    if (el[j].kind == PTX_OPND_ADDR || el[j].kind == PTX_OPND_VEC) {
      *why = "expected registers";
      return 1;
    }
    int rc = p->value(p->ctx, &el[j], &slots[j], why);
    if (rc) return rc;
  }
  *n = (uint8_t)cnt;
  return 0;
}

static void mma_rc(const emu_xop *x, int which, unsigned l, unsigned i, unsigned *row,
                   unsigned *col);

/* The gather map of an mma.sync (emu_xop.map): 0, or -1 on ENOMEM. */
static int mma_map(emu_xop *x) {
  unsigned ea = (unsigned)x->na * per_reg(x->at), eb = (unsigned)x->nb * per_reg(x->bt);
  unsigned ec = (unsigned)x->nc * per_reg(x->ct), ed = (unsigned)x->nd * per_reg(x->dt);
  unsigned ecd = ec > ed ? ec : ed;
  x->map = malloc(EMU_LANES * (ea + eb + ecd) * sizeof *x->map);
  if (!x->map) return -1;
  uint16_t *ma = x->map, *mb = ma + EMU_LANES * ea, *mc = mb + EMU_LANES * eb;
  for (unsigned l = 0; l < EMU_LANES; l++) {
    unsigned row, col;
    for (unsigned i = 0; i < ea; i++) {
      mma_rc(x, 0, l, i, &row, &col);
      ma[l * ea + i] = (uint16_t)(row * x->k + col);
    }
    for (unsigned i = 0; i < eb; i++) {
      mma_rc(x, 1, l, i, &row, &col);
      mb[l * eb + i] = (uint16_t)(row * x->n + col);
    }
    for (unsigned i = 0; i < ecd; i++) {
      mma_rc(x, 2, l, i, &row, &col);
      mc[l * ecd + i] = (uint16_t)(row * x->n + col);
    }
  }
  return 0;
}

/* The mma.sync forms and the fragment sizes (registers) their layouts need. */
static int mma_form(emu_xop *x, const char **why) {
  unsigned m = x->m, n = x->n, k = x->k;
  int ab = x->at, acc = x->ct;
  int fp16 = ab == T_F16 || ab == T_BF16, i8 = ab == T_S8 || ab == T_U8;
  unsigned na = 0, nb = 0, nc = 0;
  if (m == 16 && n == 8 && k == 16 && fp16) na = 4, nb = 2;
  else if (m == 16 && n == 8 && k == 8 && fp16) na = 2, nb = 1;
  else if (m == 16 && n == 8 && k == 8 && ab == T_TF32) na = 4, nb = 2;
  else if (m == 16 && n == 8 && k == 4 && ab == T_TF32) na = 2, nb = 1;
  else if (m == 16 && n == 8 && k == 32 && i8) na = 4, nb = 2;
  else if (m == 16 && n == 8 && k == 16 && i8) na = 2, nb = 1;
  else if (m == 8 && n == 8 && k == 4 && ab == T_F64) na = 1, nb = 1;
  else if (m == 8 && n == 8 && k == 16 && i8) na = 1, nb = 1;
  else {
    *why = "mma shape/type not supported (m16n8k16/k8 .f16/.bf16, m16n8k8/k4 .tf32, "
           "m16n8k32/k16 and m8n8k16 .s8/.u8, m8n8k4 .f64 are)";
    return 1;
  }
  if (m == 16) nc = (acc == T_F16) ? 2 : 4;
  else nc = 2;
  if (i8 && (acc != T_S32 || x->dt != T_S32)) { *why = "integer mma accumulates in .s32"; return 1; }
  if (ab == T_F64 && (acc != T_F64 || x->dt != T_F64)) { *why = "f64 mma accumulates in .f64"; return 1; }
  if ((fp16 || ab == T_TF32) && !((acc == T_F32 || acc == T_F16) && (x->dt == T_F32 || x->dt == T_F16))) {
    *why = "mma accumulator type not supported";
    return 1;
  }
  if ((ab == T_BF16 || ab == T_TF32) && (acc != T_F32 || x->dt != T_F32)) {
    *why = ".bf16 and .tf32 mma accumulate in .f32";
    return 1;
  }
  unsigned nd = m == 16 ? (x->dt == T_F16 ? 2 : 4) : 2;
  if (x->na != na || x->nb != nb || x->nc != nc || x->nd != nd) {
    *why = "fragment register counts do not match the shape";
    return 1;
  }
  return 0;
}

/* Elements a lane holds of the wmma matrix frag (regs registers). */
static unsigned wmma_elems(int t, unsigned regs) { return regs * per_reg(t); }

static void wmma_dims(const emu_xop *x, int frag, unsigned *rows, unsigned *cols) {
  if (frag == FR_A) *rows = x->m, *cols = x->k;
  else if (frag == FR_B) *rows = x->k, *cols = x->n;
  else *rows = x->m, *cols = x->n;
}

static int wmma_shape_ok(unsigned m, unsigned n, unsigned k, int t) {
  if (t == T_F16 || t == T_BF16 || t == T_S8 || t == T_U8)
    return k == 16 && ((m == 16 && n == 16) || (m == 32 && n == 8) || (m == 8 && n == 32));
  if (t == T_TF32) return m == 16 && n == 16 && k == 8;
  if (t == T_F64) return m == 8 && n == 8 && k == 4;
  return 0;
}

static int prep_mma(const emu_xprep *p, const ptx_insn *in, emu_xop *x, char **tok, unsigned nt,
                    int wmma, const char **why) {
  unsigned m, n, k;
  if (!shape_of(tok, nt, &m, &n, &k)) { *why = "shape missing"; return 1; }
  x->m = (uint8_t)m, x->n = (uint8_t)n, x->k = (uint8_t)k;
  int ty[4], nty = 0;
  for (unsigned i = 0; i < nt && nty < 4; i++) {
    if (!strcmp(tok[i], "sync") || !strcmp(tok[i], "aligned")) continue;
    int t = type_of(tok[i]);
    if (t) ty[nty++] = t;
  }
  if (wmma && nty == 2) { /* .f16 operands: wmma.mma...m16n16k16.dtype.ctype */
    x->dt = (uint8_t)ty[0], x->ct = (uint8_t)ty[1], x->at = x->bt = T_F16;
  } else if (nty == 4) {
    x->dt = (uint8_t)ty[0], x->at = (uint8_t)ty[1], x->bt = (uint8_t)ty[2], x->ct = (uint8_t)ty[3];
  } else {
    *why = "operand types missing";
    return 1;
  }
  if (x->at != x->bt && !((x->at == T_S8 || x->at == T_U8) && (x->bt == T_S8 || x->bt == T_U8))) {
    *why = "A and B of different types";
    return 1;
  }
  x->sat = (uint8_t)has_tok(tok, nt, "satfinite");
  if (in->nopnd != 4) { *why = "sparse and scaled mma forms are not supported"; return 1; }
  const ptx_operand *o[4];
  for (unsigned j = 0; j < 4; j++) {
    o[j] = ptx_insn_opnd(p->f, in, j);
    if (!o[j]) { *why = "missing operand"; return 1; }
  }
  int rc;
  if ((rc = frag_slots(p, o[0], x->d, &x->nd, why)) || (rc = frag_slots(p, o[1], x->a, &x->na, why)) ||
      (rc = frag_slots(p, o[2], x->b, &x->nb, why)) || (rc = frag_slots(p, o[3], x->c, &x->nc, why)))
    return rc;
  if (!wmma) {
    x->kind = X_MMA;
    if (!has_tok(tok, nt, "row") || !has_tok(tok, nt, "col")) {
      *why = "mma.sync needs .row.col (A row-major, B column-major)";
      return 1;
    }
    rc = mma_form(x, why);
    if (rc) return rc;
    x->fast = (uint8_t)(m == 16 && n == 8 && (k == 16 || k == 8) &&
                        (x->at == T_F16 || x->at == T_BF16) && x->ct == T_F32 && x->dt == T_F32);
    return mma_map(x);
  }
  x->kind = X_WMMA;
  if (!wmma_shape_ok(m, n, k, x->at)) { *why = "wmma shape/type not supported"; return 1; }
  int acc_ok = x->at == T_F16 ? (x->ct == T_F16 || x->ct == T_F32) && (x->dt == T_F16 || x->dt == T_F32)
               : x->at == T_F64 ? x->ct == T_F64 && x->dt == T_F64
               : (x->at == T_S8 || x->at == T_U8) ? x->ct == T_S32 && x->dt == T_S32
                                                   : x->ct == T_F32 && x->dt == T_F32;
  if (!acc_ok) { *why = "wmma accumulator type not supported"; return 1; }
  /* fragment sizes: a lane holds a whole number of elements, every element
     of the matrix is held */
  const uint8_t cnt[4] = {x->na, x->nb, x->nc, x->nd};
  const int tys[4] = {x->at, x->bt, x->ct, x->dt};
  for (int f = 0; f < 4; f++) {
    unsigned rows, cols;
    wmma_dims(x, f, &rows, &cols);
    unsigned e = wmma_elems(tys[f], cnt[f]);
    if (!e || (32 * e) % (rows * cols) || 32 * e < rows * cols) {
      *why = "wmma fragment register count does not fit the shape";
      return 1;
    }
  }
  return 0;
}

static int prep_wmma_ldst(const emu_xprep *p, const ptx_insn *in, emu_xop *x, char **tok,
                          unsigned nt, int store, const char **why) {
  unsigned m, n, k;
  if (!shape_of(tok, nt, &m, &n, &k)) { *why = "shape missing"; return 1; }
  x->m = (uint8_t)m, x->n = (uint8_t)n, x->k = (uint8_t)k;
  x->kind = store ? X_WST : X_WLD;
  const char *fr = nt > 2 ? tok[2] : "";
  x->frag = !strcmp(fr, "a") ? FR_A : !strcmp(fr, "b") ? FR_B : !strcmp(fr, "c") ? FR_C : FR_D;
  if ((store && x->frag != FR_D) || (!store && x->frag == FR_D)) { *why = "fragment kind"; return 1; }
  x->colmaj = (uint8_t)has_tok(tok, nt, "col");
  if (!x->colmaj && !has_tok(tok, nt, "row")) { *why = "layout (.row/.col) missing"; return 1; }
  x->space = (uint8_t)space_of(tok, nt);
  int t = T_NONE;
  for (unsigned i = 3; i < nt; i++)
    if (type_of(tok[i])) t = type_of(tok[i]);
  if (!t) { *why = "element type missing"; return 1; }
  /* shape checked with the operand type of the multiplication */
  int opty = (x->frag == FR_A || x->frag == FR_B) ? t
             : t == T_F64 ? T_F64 : t == T_S32 ? T_S8 : m == 16 && n == 16 && k == 8 ? T_TF32 : T_F16;
  if (!wmma_shape_ok(m, n, k, opty)) { *why = "wmma shape/type not supported"; return 1; }
  if (x->frag == FR_A) x->at = (uint8_t)t;
  else if (x->frag == FR_B) x->bt = (uint8_t)t;
  else if (x->frag == FR_C) x->ct = (uint8_t)t;
  else x->dt = (uint8_t)t;
  if (in->nopnd < 2 || in->nopnd > 3) { *why = "operands"; return 1; }
  const ptx_operand *ad = ptx_insn_opnd(p->f, in, store ? 0 : 1);
  const ptx_operand *fg = ptx_insn_opnd(p->f, in, store ? 1 : 0);
  if (!ad || !fg || ad->kind != PTX_OPND_ADDR) { *why = "expected a fragment and an address"; return 1; }
  int rc = p->address(p->ctx, ad, &x->addr, &x->off, why);
  if (rc) return rc;
  uint8_t cntf;
  rc = frag_slots(p, fg, store ? x->d : x->a, &cntf, why);
  if (rc) return rc;
  if (store) x->nd = cntf;
  else x->na = cntf;
  x->stride = EMU_NOSLOT;
  if (in->nopnd == 3) {
    rc = p->value(p->ctx, ptx_insn_opnd(p->f, in, 2), &x->stride, why);
    if (rc) return rc;
  }
  unsigned rows, cols;
  wmma_dims(x, x->frag, &rows, &cols);
  unsigned e = wmma_elems(t, cntf);
  if (!e || (32 * e) % (rows * cols) || 32 * e < rows * cols) {
    *why = "wmma fragment register count does not fit the shape";
    return 1;
  }
  x->scratch = p->scratch(p->ctx, 6);
  return x->scratch == EMU_NOSLOT ? -1 : 0;
}

static int prep_ldmatrix(const emu_xprep *p, const ptx_insn *in, emu_xop *x, char **tok,
                         unsigned nt, int store, const char **why) {
  x->kind = store ? X_STM : X_LDM;
  if (!has_tok(tok, nt, "m8n8") || !has_tok(tok, nt, "b16")) {
    *why = "only the .m8n8 .b16 shape is supported";
    return 1;
  }
  x->nmat = has_tok(tok, nt, "x4") ? 4 : has_tok(tok, nt, "x2") ? 2 : has_tok(tok, nt, "x1") ? 1 : 0;
  if (!x->nmat) { *why = ".x1, .x2 or .x4 missing"; return 1; }
  x->trans = (uint8_t)has_tok(tok, nt, "trans");
  x->space = PTX_SP_SHARED;
  const ptx_operand *ad = ptx_insn_opnd(p->f, in, store ? 0 : 1);
  const ptx_operand *fg = ptx_insn_opnd(p->f, in, store ? 1 : 0);
  if (in->nopnd != 2 || !ad || !fg || ad->kind != PTX_OPND_ADDR) { *why = "operands"; return 1; }
  int rc = p->address(p->ctx, ad, &x->addr, &x->off, why);
  if (rc) return rc;
  rc = frag_slots(p, fg, x->d, &x->nd, why);
  if (rc) return rc;
  if (x->nd != x->nmat) { *why = "one register per matrix"; return 1; }
  x->scratch = p->scratch(p->ctx, 6);
  return x->scratch == EMU_NOSLOT ? -1 : 0;
}

static int prep_cp(const emu_xprep *p, const ptx_insn *in, emu_xop *x, char **tok, unsigned nt,
                   const char **why) {
  if (nt < 2 || strcmp(tok[1], "async")) {
    *why = "cp: only cp.async is supported";
    return 1;
  }
  if (has_tok(tok, nt, "commit_group") || has_tok(tok, nt, "wait_group") ||
      has_tok(tok, nt, "wait_all") || has_tok(tok, nt, "prefetch")) {
    x->kind = X_NOP; /* the copies are done when they issue */
    return 0;
  }
  if (has_tok(tok, nt, "tensor")) {
    *why = "TMA tensor copies (cp.async.bulk.tensor) are not supported";
    return 1;
  }
  int mbar = 0;
  for (unsigned i = 2; i < nt; i++) mbar |= !strncmp(tok[i], "mbarrier", 8);
  if (mbar) {
    *why = "asynchronous copies completing on an mbarrier are not supported (mbarrier "
           "transactions)";
    return 1;
  }
  int bulk = nt > 2 && !strcmp(tok[2], "bulk");
  if (bulk) {
    /* cp.async.bulk.global.shared::cta.bulk_group [dst], [src], size */
    if (nt < 5 || strcmp(tok[3], "global") || strncmp(tok[4], "shared", 6) ||
        !has_tok(tok, nt, "bulk_group")) {
      *why = "cp.async.bulk: only global <- shared with .bulk_group is supported";
      return 1;
    }
    x->kind = X_BULK_S2G;
  } else {
    /* cp.async.{ca,cg}.shared{::cta}.global [dst], [src], cp-size{, src-size | ignore-src}{, policy} */
    if (nt < 5 || strncmp(tok[3], "shared", 6) || strcmp(tok[4], "global")) {
      *why = "cp.async: only shared <- global is supported";
      return 1;
    }
    x->kind = X_CPA;
  }
  if (in->nopnd < 3) { *why = "operands"; return 1; }
  const ptx_operand *d = ptx_insn_opnd(p->f, in, 0), *s = ptx_insn_opnd(p->f, in, 1);
  const ptx_operand *z = ptx_insn_opnd(p->f, in, 2);
  if (!d || !s || !z || d->kind != PTX_OPND_ADDR || s->kind != PTX_OPND_ADDR) {
    *why = "expected [dst], [src], size";
    return 1;
  }
  int rc = p->address(p->ctx, d, &x->addr, &x->off, why);
  if (!rc) rc = p->address(p->ctx, s, &x->addr2, &x->off2, why);
  if (rc) return rc;
  if (bulk) {
    rc = p->value(p->ctx, z, &x->bulk, why);
    if (rc) return rc;
    x->scratch = p->scratch(p->ctx, 6);
    return x->scratch == EMU_NOSLOT ? -1 : 0;
  }
  if (z->kind != PTX_OPND_IMM_INT || (z->u.i != 4 && z->u.i != 8 && z->u.i != 16)) {
    *why = "cp-size must be 4, 8 or 16";
    return 1;
  }
  if (has_tok(tok, nt, "cg") && z->u.i != 16) { *why = "cp.async.cg copies 16 bytes"; return 1; }
  x->cpsize = (uint8_t)z->u.i;
  x->srcsz = EMU_NOSLOT;
  for (unsigned j = 3; j < in->nopnd; j++) {
    const ptx_operand *o = ptx_insn_opnd(p->f, in, j);
    if (!o) break;
    int pred = o->kind == PTX_OPND_REG && p->f->regs[o->u.reg].type == PTX_T_PRED;
    int is64 = o->kind == PTX_OPND_REG && ptx_type_size((ptx_type)p->f->regs[o->u.reg].type) == 8;
    if (is64) continue; /* the cache policy */
    if (x->srcmode) { *why = "operands"; return 1; }
    rc = p->value(p->ctx, o, &x->srcsz, why);
    if (rc) return rc;
    x->srcmode = pred ? 2 : 1;
    x->srcneg = o->neg;
  }
  x->scratch = p->scratch(p->ctx, 6);
  return x->scratch == EMU_NOSLOT ? -1 : 0;
}

int emu_xop_prepare(const emu_xprep *p, const ptx_insn *in, emu_xop **out, const char **why) {
  *out = NULL;
  const char *key = p->m->keys[in->key];
  switch ((ptx_op)in->op) {
  case PTX_OP_MMA: case PTX_OP_WMMA: case PTX_OP_LDMATRIX: case PTX_OP_STMATRIX: case PTX_OP_CP:
    break;
  case PTX_OP_WGMMA:
    *why = "wgmma (warpgroup matrix multiply, sm_90a) is not supported";
    return 1;
  case PTX_OP_MBARRIER:
    *why = "mbarrier objects (asynchronous barriers and their transaction counts) are not "
           "supported";
    return 1;
  default:
    if (!strncmp(key, "tensormap", 9) || !strncmp(key, "tcgen05", 7)) {
      *why = "TMA descriptors and tensor memory (tensormap, tcgen05) are not supported";
      return 1;
    }
    return 0;
  }
  char buf[256], *tok[24];
  unsigned nt = key_tokens(key, buf, sizeof buf, tok);
  emu_xop *x = calloc(1, sizeof *x);
  if (!x) return -1;
  x->stride = x->srcsz = x->bulk = x->scratch = EMU_NOSLOT;
  int rc;
  switch ((ptx_op)in->op) {
  case PTX_OP_MMA:
    if (!has_tok(tok, nt, "sync")) { *why = "mma without .sync"; rc = 1; break; }
    rc = has_tok(tok, nt, "sp") ? (*why = "sparse mma (mma.sp) is not supported", 1)
                                : prep_mma(p, in, x, tok, nt, 0, why);
    break;
  case PTX_OP_WMMA:
    if (nt > 1 && !strcmp(tok[1], "mma")) rc = prep_mma(p, in, x, tok, nt, 1, why);
    else if (nt > 1 && !strcmp(tok[1], "load")) rc = prep_wmma_ldst(p, in, x, tok, nt, 0, why);
    else if (nt > 1 && !strcmp(tok[1], "store")) rc = prep_wmma_ldst(p, in, x, tok, nt, 1, why);
    else { *why = "wmma form not supported"; rc = 1; }
    break;
  case PTX_OP_LDMATRIX: rc = prep_ldmatrix(p, in, x, tok, nt, 0, why); break;
  case PTX_OP_STMATRIX: rc = prep_ldmatrix(p, in, x, tok, nt, 1, why); break;
  default: rc = prep_cp(p, in, x, tok, nt, why); break;
  }
  if (rc) {
    emu_xop_free(x);
    return rc < 0 ? -1 : 1;
  }
  *out = x;
  return 1;
}

void emu_xop_free(emu_xop *x) {
  if (x) free(x->map);
  free(x);
}

static unsigned push(uint32_t *out, unsigned n, unsigned cap, uint32_t s) {
  if (s != EMU_NOSLOT && n < cap) out[n++] = s;
  return n;
}

unsigned emu_xop_slots(const emu_xop *x, int defs, uint32_t *out, unsigned cap) {
  unsigned n = 0;
  if (defs) {
    if (x->kind == X_MMA || x->kind == X_WMMA || x->kind == X_LDM ||
        (x->kind == X_WLD))
      for (unsigned j = 0; j < (x->kind == X_WLD ? x->na : x->nd); j++)
        n = push(out, n, cap, x->kind == X_WLD ? x->a[j] : x->d[j]);
    return n;
  }
  for (unsigned j = 0; j < x->na && x->kind != X_WLD; j++) n = push(out, n, cap, x->a[j]);
  for (unsigned j = 0; j < x->nb; j++) n = push(out, n, cap, x->b[j]);
  for (unsigned j = 0; j < x->nc; j++) n = push(out, n, cap, x->c[j]);
  if (x->kind == X_WST || x->kind == X_STM)
    for (unsigned j = 0; j < x->nd; j++) n = push(out, n, cap, x->d[j]);
  if (x->kind != X_MMA && x->kind != X_WMMA && x->kind != X_NOP) n = push(out, n, cap, x->addr);
  if (x->kind == X_CPA || x->kind == X_BULK_S2G) n = push(out, n, cap, x->addr2);
  n = push(out, n, cap, x->stride);
  n = push(out, n, cap, x->srcsz);
  n = push(out, n, cap, x->bulk);
  return n;
}

/* ------------------------------------------------------------ values -- */

static inline float u2f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint32_t f2u(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

/* A half's exact value, without a table or a loop (wmma, elem). */
static inline double h2d(uint32_t h) {
  uint32_t s = (h & 0x8000u) << 16, e = (h >> 10) & 31, m = h & 0x3FFu;
  if (e == 31) return (double)u2f(s | 0x7F800000u | (m << 13));
  if (e == 0) {
    double v = (double)m * 0x1p-24;
    return s ? -v : v;
  }
  return (double)u2f(s | ((e + 112) << 23) | (m << 13));
}

/* Element i of a fragment of type t held in registers regs of lane l. */
static inline double elem(const uint64_t *r, const uint32_t *regs, int t, unsigned i, unsigned l) {
  unsigned pr = per_reg(t);
  uint64_t w = r[(size_t)regs[i / pr] * EMU_LANES + l];
  unsigned sh = (i % pr) * 8 * esize(t);
  switch (t) {
  case T_F16: return h2d((uint32_t)(w >> sh) & 0xFFFF);
  case T_BF16: return (double)u2f(((uint32_t)(w >> sh) & 0xFFFF) << 16);
  case T_TF32: return (double)u2f((uint32_t)w & 0xFFFFE000u);
  case T_F32: return (double)u2f((uint32_t)w);
  case T_F64: { double d; memcpy(&d, &w, 8); return d; }
  case T_S8: return (double)(int8_t)(uint8_t)(w >> sh);
  case T_U8: return (double)(uint8_t)(w >> sh);
  default: return (double)(int32_t)(uint32_t)w; /* s32 */
  }
}

/* Write element i (value v of the accumulator type t) into lane l's registers. */
static inline void put(uint64_t *r, const uint32_t *regs, int t, unsigned i, unsigned l, double v,
                       int sat) {
  unsigned pr = per_reg(t);
  uint64_t *w = &r[(size_t)regs[i / pr] * EMU_LANES + l];
  switch (t) {
  case T_F16: {
    unsigned sh = (i % pr) * 16;
    uint64_t b = v != v ? 0x7FFFu : emu_fp_round(v, 0, EMU_FMT_F16, EMU_RM_RN);
    *w = (*w & ~(0xFFFFull << sh) & 0xFFFFFFFFull) | (b << sh);
    break;
  }
  case T_F32: {
    float f = (float)v;
    *w = f != f ? 0x7FFFFFFFu : f2u(f);
    break;
  }
  case T_F64: memcpy(w, &v, 8); break;
  default: { /* s32: v is an exact integer */
    if (sat) v = v > 2147483647.0 ? 2147483647.0 : v < -2147483648.0 ? -2147483648.0 : v;
    int64_t q = (int64_t)v;
    *w = (uint32_t)q;
  }
  }
}

/* Row and column of element i of lane l for the mma.sync fragments (see
   the table at the top).  which: 0 A, 1 B, 2 C/D. */
static void mma_rc(const emu_xop *x, int which, unsigned l, unsigned i, unsigned *row,
                   unsigned *col) {
  unsigned g = l >> 2, t = l & 3;
  int ab = x->at;
  if (which == 2) {
    if (x->m == 16) *row = g + 8 * (i >> 1), *col = 2 * t + (i & 1);
    else *row = g, *col = 2 * t + i;
    return;
  }
  if (ab == T_F64) { /* m8n8k4 */
    if (which == 0) *row = g, *col = t;
    else *row = t, *col = g;
    return;
  }
  if (ab == T_TF32) {
    if (x->k == 8) {
      if (which == 0) *row = g + 8 * (i & 1), *col = t + 4 * (i >> 1);
      else *row = t + 4 * i, *col = g;
    } else {
      if (which == 0) *row = g + 8 * i, *col = t;
      else *row = t, *col = g;
    }
    return;
  }
  if (ab == T_S8 || ab == T_U8) {
    if (x->m == 8) { /* m8n8k16 */
      if (which == 0) *row = g, *col = 4 * t + i;
      else *row = 4 * t + i, *col = g;
    } else if (x->k == 32) {
      if (which == 0) *row = g + 8 * ((i >> 2) & 1), *col = 4 * t + (i & 3) + 16 * (i >> 3);
      else *row = 4 * t + (i & 3) + 16 * (i >> 2), *col = g;
    } else {
      if (which == 0) *row = g + 8 * (i >> 2), *col = 4 * t + (i & 3);
      else *row = 4 * t + i, *col = g;
    }
    return;
  }
  /* .f16 / .bf16 */
  if (x->k == 16) {
    if (which == 0) *row = g + 8 * ((i >> 1) & 1), *col = 2 * t + (i & 1) + 8 * (i >> 2);
    else *row = 2 * t + (i & 1) + 8 * (i >> 1), *col = g;
  } else {
    if (which == 0) *row = g + 8 * (i >> 1), *col = 2 * t + (i & 1);
    else *row = 2 * t + i, *col = g;
  }
}

/* The m16n8 product, n = 8: for each (i, j) C, then the products in k
   order.  Every product is exact in double (operands of at most 24
   significant bits), so a fused multiply-add rounds exactly as the
   multiply and the add do: the FMA variant gives the same bits.  Four
   rows at a time: each (i, j) still sums in k order, but four chains of
   additions are in flight instead of one, which waited on the previous
   add's latency (make bench's tensor loop 125 -> 145 M thread-insns/s,
   one thread; the tensor tests' bit-exact results unchanged). */
#define MMA_N8_BODY                                                         \
  unsigned i = 0;                                                           \
  for (; i + 4 <= M; i += 4) {                                              \
    double d0[8], d1[8], d2[8], d3[8];                                      \
    for (unsigned j = 0; j < 8; j++) {                                      \
      d0[j] = C[i * 8 + j];                                                 \
      d1[j] = C[(i + 1) * 8 + j];                                           \
      d2[j] = C[(i + 2) * 8 + j];                                           \
      d3[j] = C[(i + 3) * 8 + j];                                           \
    }                                                                       \
    for (unsigned q = 0; q < K; q++) {                                      \
      double a0 = A[i * K + q], a1 = A[(i + 1) * K + q];                    \
      double a2 = A[(i + 2) * K + q], a3 = A[(i + 3) * K + q];              \
      const double *b = B + q * 8;                                          \
      for (unsigned j = 0; j < 8; j++) {                                    \
        d0[j] += a0 * b[j];                                                 \
        d1[j] += a1 * b[j];                                                 \
        d2[j] += a2 * b[j];                                                 \
        d3[j] += a3 * b[j];                                                 \
      }                                                                     \
    }                                                                       \
    for (unsigned j = 0; j < 8; j++) {                                      \
      D[i * 8 + j] = d0[j];                                                 \
      D[(i + 1) * 8 + j] = d1[j];                                           \
      D[(i + 2) * 8 + j] = d2[j];                                           \
      D[(i + 3) * 8 + j] = d3[j];                                           \
    }                                                                       \
  }                                                                         \
  for (; i < M; i++) {                                                      \
    double d[8];                                                            \
    for (unsigned j = 0; j < 8; j++) d[j] = C[i * 8 + j];                   \
    for (unsigned q = 0; q < K; q++) {                                      \
      double a = A[i * K + q];                                              \
      const double *b = B + q * 8;                                          \
      for (unsigned j = 0; j < 8; j++) d[j] += a * b[j];                    \
    }                                                                       \
    for (unsigned j = 0; j < 8; j++) D[i * 8 + j] = d[j];                   \
  }
static void mma_n8(unsigned M, unsigned K, const double *restrict A, const double *restrict B,
                   const double *restrict C, double *restrict D) {
  MMA_N8_BODY
}
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define MMA_AVX2 1
#ifdef __clang__
#pragma clang fp contract(fast)
#define MMA_CONTRACT
#else
#define MMA_CONTRACT optimize("fp-contract=fast"),
#endif
/* MMA_N8_BODY in AVX2 registers: the compiler kept the four rows'
   accumulators on the stack, a store and a load per step (make bench's
   tensor loop 145 -> 177 M thread-insns/s, one thread).  Same sums in the
   same order: bit for bit MMA_N8_BODY's. */
__attribute__((MMA_CONTRACT target("avx2,fma"))) static void mma_n8_avx2(
    unsigned M, unsigned K, const double *restrict A, const double *restrict B,
    const double *restrict C, double *restrict D) {
  unsigned i = 0;
  for (; i + 4 <= M; i += 4) {
    __m256d d00 = _mm256_loadu_pd(C + i * 8), d01 = _mm256_loadu_pd(C + i * 8 + 4);
    __m256d d10 = _mm256_loadu_pd(C + (i + 1) * 8), d11 = _mm256_loadu_pd(C + (i + 1) * 8 + 4);
    __m256d d20 = _mm256_loadu_pd(C + (i + 2) * 8), d21 = _mm256_loadu_pd(C + (i + 2) * 8 + 4);
    __m256d d30 = _mm256_loadu_pd(C + (i + 3) * 8), d31 = _mm256_loadu_pd(C + (i + 3) * 8 + 4);
    const double *a0 = A + i * K, *a1 = a0 + K, *a2 = a1 + K, *a3 = a2 + K;
    for (unsigned q = 0; q < K; q++) {
      __m256d b0 = _mm256_loadu_pd(B + q * 8), b1 = _mm256_loadu_pd(B + q * 8 + 4);
      __m256d x = _mm256_broadcast_sd(a0 + q);
      d00 = _mm256_fmadd_pd(x, b0, d00);
      d01 = _mm256_fmadd_pd(x, b1, d01);
      x = _mm256_broadcast_sd(a1 + q);
      d10 = _mm256_fmadd_pd(x, b0, d10);
      d11 = _mm256_fmadd_pd(x, b1, d11);
      x = _mm256_broadcast_sd(a2 + q);
      d20 = _mm256_fmadd_pd(x, b0, d20);
      d21 = _mm256_fmadd_pd(x, b1, d21);
      x = _mm256_broadcast_sd(a3 + q);
      d30 = _mm256_fmadd_pd(x, b0, d30);
      d31 = _mm256_fmadd_pd(x, b1, d31);
    }
    _mm256_storeu_pd(D + i * 8, d00);
    _mm256_storeu_pd(D + i * 8 + 4, d01);
    _mm256_storeu_pd(D + (i + 1) * 8, d10);
    _mm256_storeu_pd(D + (i + 1) * 8 + 4, d11);
    _mm256_storeu_pd(D + (i + 2) * 8, d20);
    _mm256_storeu_pd(D + (i + 2) * 8 + 4, d21);
    _mm256_storeu_pd(D + (i + 3) * 8, d30);
    _mm256_storeu_pd(D + (i + 3) * 8 + 4, d31);
  }
  for (; i < M; i++) {
    double d[8];
    for (unsigned j = 0; j < 8; j++) d[j] = C[i * 8 + j];
    for (unsigned q = 0; q < K; q++) {
      double a = A[i * K + q];
      const double *b = B + q * 8;
      for (unsigned j = 0; j < 8; j++) d[j] += a * b[j];
    }
    for (unsigned j = 0; j < 8; j++) D[i * 8 + j] = d[j];
  }
}
/* mma_n8_avx2 for m a multiple of 8 with a row of D in one 512-bit
   register: eight rows at a time, each A element broadcast into its fused multiply-add
   from memory -- half the instructions, the same sums in the same order
   (bit for bit mma_n8_avx2's). */
__attribute__((MMA_CONTRACT target("avx512f"))) static void mma_n8_avx512(
    unsigned M, unsigned K, const double *restrict A, const double *restrict B, const double *restrict C,
    double *restrict D) {
  for (unsigned i = 0; i < M; i += 8) {
    __m512d d0 = _mm512_loadu_pd(C + i * 8), d1 = _mm512_loadu_pd(C + (i + 1) * 8);
    __m512d d2 = _mm512_loadu_pd(C + (i + 2) * 8), d3 = _mm512_loadu_pd(C + (i + 3) * 8);
    __m512d d4 = _mm512_loadu_pd(C + (i + 4) * 8), d5 = _mm512_loadu_pd(C + (i + 5) * 8);
    __m512d d6 = _mm512_loadu_pd(C + (i + 6) * 8), d7 = _mm512_loadu_pd(C + (i + 7) * 8);
    const double *a = A + i * K;
    for (unsigned q = 0; q < K; q++) {
      __m512d b = _mm512_loadu_pd(B + q * 8);
      d0 = _mm512_fmadd_pd(_mm512_set1_pd(a[q]), b, d0);
      d1 = _mm512_fmadd_pd(_mm512_set1_pd(a[K + q]), b, d1);
      d2 = _mm512_fmadd_pd(_mm512_set1_pd(a[2 * K + q]), b, d2);
      d3 = _mm512_fmadd_pd(_mm512_set1_pd(a[3 * K + q]), b, d3);
      d4 = _mm512_fmadd_pd(_mm512_set1_pd(a[4 * K + q]), b, d4);
      d5 = _mm512_fmadd_pd(_mm512_set1_pd(a[5 * K + q]), b, d5);
      d6 = _mm512_fmadd_pd(_mm512_set1_pd(a[6 * K + q]), b, d6);
      d7 = _mm512_fmadd_pd(_mm512_set1_pd(a[7 * K + q]), b, d7);
    }
    _mm512_storeu_pd(D + i * 8, d0);
    _mm512_storeu_pd(D + (i + 1) * 8, d1);
    _mm512_storeu_pd(D + (i + 2) * 8, d2);
    _mm512_storeu_pd(D + (i + 3) * 8, d3);
    _mm512_storeu_pd(D + (i + 4) * 8, d4);
    _mm512_storeu_pd(D + (i + 5) * 8, d5);
    _mm512_storeu_pd(D + (i + 6) * 8, d6);
    _mm512_storeu_pd(D + (i + 7) * 8, d7);
  }
}
#ifdef __clang__
#pragma clang fp contract(off)
#endif
#endif

/* mma_n8 on the widest vector unit the host has (the same bits). */
#ifdef MMA_AVX2
static int simd_level(void);
#endif
static void mma_n8_any(unsigned M, unsigned K, const double *restrict A, const double *restrict B,
                       const double *restrict C, double *restrict D) {
#ifdef MMA_AVX2
  if (M % 8 == 0 && simd_level() >= 2) { mma_n8_avx512(M, K, A, B, C, D); return; }
  static int avx2 = -1;
  if (avx2 < 0) avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (avx2) { mma_n8_avx2(M, K, A, B, C, D); return; }
#endif
  mma_n8(M, K, A, B, C, D);
}

/* D = A * B + C on dense matrices (row-major, at most 32 x 32). */
static void mma_compute(const emu_xop *x, const double *restrict A, const double *restrict B,
                        const double *restrict C, double *restrict D) {
  unsigned M = x->m, N = x->n, K = x->k;
  if (x->at == T_F64) {
    for (unsigned i = 0; i < M; i++)
      for (unsigned j = 0; j < N; j++) {
        double d = C[i * N + j];
        for (unsigned q = 0; q < K; q++) d = fma(A[i * K + q], B[q * N + j], d);
        D[i * N + j] = d;
      }
    return;
  }
  /* for each (i, j): C, then the products in k order -- loops ordered so
     that the innermost one (over j) vectorises without reordering a sum;
     n = 8 (every m16n8 shape) with the width known to the compiler */
  if (N == 8) {
    mma_n8_any(M, K, A, B, C, D);
    return;
  }
  for (unsigned i = 0; i < M; i++) {
    double *d = D + i * N;
    for (unsigned j = 0; j < N; j++) d[j] = C[i * N + j];
    for (unsigned q = 0; q < K; q++) {
      double a = A[i * K + q];
      const double *b = B + q * N;
      for (unsigned j = 0; j < N; j++) d[j] += a * b[j];
    }
  }
}

/* Every half's value as a float (exact), for gather: an mma.m16n8k16
   decodes 384 halves, and the table took its gather from 11.5 to ~5 K host
   instructions (callgrind).  256 KiB, built on first use. */
static float h2f_tab[65536];
static pthread_once_t h2f_once = PTHREAD_ONCE_INIT;
static int h2f_ready; /* set after h2f_once: the common check without a call */
static void h2f_build(void) {
  for (uint32_t h = 0; h < 65536; h++) h2f_tab[h] = (float)h2d(h);
}

/* Every element of a fragment (nregs registers of type t, e elements a
   lane) into the dense matrix M by the map (lane * e + element). */
static inline void gather(const uint64_t *r, const uint32_t *regs, unsigned nregs, int t,
                          const uint16_t *map, unsigned e, double *M) {
  unsigned pr = per_reg(t);
  if (t == T_F16 || t == T_F32) { /* the common types, without the switch */
    for (unsigned j = 0; j < nregs; j++) {
      const uint64_t *w = r + (size_t)regs[j] * EMU_LANES;
      const uint16_t *m = map + j * pr;
      if (t == T_F16)
        for (unsigned l = 0; l < EMU_LANES; l++, m += e) {
          M[m[0]] = h2f_tab[(uint32_t)w[l] & 0xFFFF];
          M[m[1]] = h2f_tab[(uint32_t)(w[l] >> 16) & 0xFFFF];
        }
      else
        for (unsigned l = 0; l < EMU_LANES; l++, m += e) M[m[0]] = (double)u2f((uint32_t)w[l]);
    }
    return;
  }
  for (unsigned j = 0; j < nregs; j++) {
    const uint64_t *w = r + (size_t)regs[j] * EMU_LANES;
    for (unsigned l = 0; l < EMU_LANES; l++) {
      const uint16_t *m = map + l * e + j * pr;
      uint64_t v = w[l];
      switch (t) {
      case T_F16: M[m[0]] = h2d((uint32_t)v & 0xFFFF); M[m[1]] = h2d((uint32_t)(v >> 16) & 0xFFFF); break;
      case T_BF16:
        M[m[0]] = (double)u2f((uint32_t)v << 16);
        M[m[1]] = (double)u2f((uint32_t)v & 0xFFFF0000u);
        break;
      case T_TF32: M[m[0]] = (double)u2f((uint32_t)v & 0xFFFFE000u); break;
      case T_F32: M[m[0]] = (double)u2f((uint32_t)v); break;
      case T_F64: memcpy(&M[m[0]], &v, 8); break;
      case T_S8:
        for (unsigned b = 0; b < 4; b++) M[m[b]] = (double)(int8_t)(uint8_t)(v >> (8 * b));
        break;
      case T_U8:
        for (unsigned b = 0; b < 4; b++) M[m[b]] = (double)(uint8_t)(v >> (8 * b));
        break;
      default: M[m[0]] = (double)(int32_t)(uint32_t)v; break; /* s32 */
      }
    }
  }
}

int emu__mma_general;

#ifdef MMA_AVX2
/* mma.sync m16n8k16 / m16n8k8 with .f16 or .bf16 A and B and .f32 C and
   D -- the GEMM loop of half-precision programs -- straight between the
   fragment registers and the dense matrices, eight elements at a time:
   the layouts of the table at the top put a row of A, of C and of D (and
   a column of B) in four consecutive lanes, so no gather map is needed.
   The halves convert exactly (F16C; bf16 is the top half of a float) and
   the product is mma_n8_avx2's, so the bits are those of the general path
   (gather, mma_compute, put); tests/test_emu_tensor.c compares the two on
   random bit patterns.  make bench's tensor loop: the gather and the
   write-back took 37 % of its time. */

/* Eight halves (f16 or bf16, in the low 128 bits) as four + four doubles. */
__attribute__((target("avx2,f16c"))) static inline void halves8(__m128i h, int bf, double *out) {
  __m256 f = bf ? _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16))
                : _mm256_cvtph_ps(h);
  _mm256_storeu_pd(out, _mm256_cvtps_pd(_mm256_castps256_ps128(f)));
  _mm256_storeu_pd(out + 4, _mm256_cvtps_pd(_mm256_extractf128_ps(f, 1)));
}

static int simd_level(void);

__attribute__((target("avx2,fma,f16c"))) static void mma_half_fast(const emu_xop *x, uint64_t *r) {
  const unsigned K = x->k;
  const int bf = x->at == T_BF16;
  const __m256i low = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
  double A[16 * 16], B[16 * 8], C[16 * 8], D[16 * 8];
  /* A: register j holds rows 8 (j & 1) + g, columns 8 (j >> 1) + 2t, +1:
     lanes 4g..4g+3 are eight consecutive halves of one row */
  for (unsigned j = 0; j < x->na; j++) {
    const uint64_t *w = r + (size_t)x->a[j] * EMU_LANES;
    unsigned rb = 8 * (j & 1), cb = 8 * (j >> 1);
    for (unsigned g = 0; g < 8; g++) { /* the low words of four lanes (32
                                          bytes, as ldm_matrix_avx2 writes
                                          them: a read spanning two writes
                                          waits for both) */
      __m256i v = _mm256_permutevar8x32_epi32(_mm256_loadu_si256((const __m256i *)(w + 4 * g)), low);
      halves8(_mm256_castsi256_si128(v), bf, A + (rb + g) * K + cb);
    }
  }
  /* B: register j, lane 4g + t holds rows 8j + 2t, +1 of column g: lanes
     t, t + 4, ..., t + 28 are two rows */
  for (unsigned j = 0; j < x->nb; j++) {
    /* the low words as an 8 x 4 matrix M[g][t] (lane 4g + t), transposed
       in registers: cols[t] = M[0..7][t] (a gather of each waited on the
       loads behind it) */
    const uint64_t *w = r + (size_t)x->b[j] * EMU_LANES;
    __m256 pr[4];
    for (unsigned q = 0; q < 4; q++) /* rows 2q, 2q + 1: M[2q][0], M[2q][1], M[2q+1][0], M[2q+1][1] | t 2, 3 */
      pr[q] = _mm256_shuffle_ps(_mm256_castsi256_ps(_mm256_loadu_si256((const __m256i *)(w + 8 * q))),
                                _mm256_castsi256_ps(_mm256_loadu_si256((const __m256i *)(w + 8 * q + 4))),
                                _MM_SHUFFLE(2, 0, 2, 0));
    __m256i a = _mm256_castps_si256(_mm256_unpacklo_ps(pr[0], pr[1])); /* M0t0 M2t0 M0t1 M2t1 | t2 t3 */
    __m256i b = _mm256_castps_si256(_mm256_unpackhi_ps(pr[0], pr[1])); /* M1, M3 */
    __m256i c = _mm256_castps_si256(_mm256_unpacklo_ps(pr[2], pr[3])); /* M4, M6 */
    __m256i d = _mm256_castps_si256(_mm256_unpackhi_ps(pr[2], pr[3])); /* M5, M7 */
    __m256i ev0 = _mm256_unpacklo_epi64(a, c), od0 = _mm256_unpacklo_epi64(b, d); /* t0 | t2 */
    __m256i ev1 = _mm256_unpackhi_epi64(a, c), od1 = _mm256_unpackhi_epi64(b, d); /* t1 | t3 */
    __m256i f0 = _mm256_unpacklo_epi32(ev0, od0), f1 = _mm256_unpackhi_epi32(ev0, od0);
    __m256i f2 = _mm256_unpacklo_epi32(ev1, od1), f3 = _mm256_unpackhi_epi32(ev1, od1);
    __m256i cols[4] = {_mm256_permute2x128_si256(f0, f1, 0x20), _mm256_permute2x128_si256(f2, f3, 0x20),
                       _mm256_permute2x128_si256(f0, f1, 0x31), _mm256_permute2x128_si256(f2, f3, 0x31)};
    for (unsigned t = 0; t < 4; t++) {
      __m256i v = cols[t];
      double *row = B + (8 * j + 2 * t) * 8;
      if (bf) {
        __m256 lo = _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
        __m256 hi = _mm256_castsi256_ps(_mm256_and_si256(v, _mm256_set1_epi32((int)0xFFFF0000u)));
        _mm256_storeu_pd(row, _mm256_cvtps_pd(_mm256_castps256_ps128(lo)));
        _mm256_storeu_pd(row + 4, _mm256_cvtps_pd(_mm256_extractf128_ps(lo, 1)));
        _mm256_storeu_pd(row + 8, _mm256_cvtps_pd(_mm256_castps256_ps128(hi)));
        _mm256_storeu_pd(row + 12, _mm256_cvtps_pd(_mm256_extractf128_ps(hi, 1)));
      } else {
        __m256i lo = _mm256_and_si256(v, _mm256_set1_epi32(0xFFFF)), hi = _mm256_srli_epi32(v, 16);
        __m256i p = _mm256_permute4x64_epi64(_mm256_packus_epi32(lo, hi), 0xD8);
        halves8(_mm256_castsi256_si128(p), 0, row);
        halves8(_mm256_extracti128_si256(p, 1), 0, row + 8);
      }
    }
  }
  /* C: registers 2h, 2h + 1 hold columns 2t, 2t + 1 of rows 8h + g */
  for (unsigned h = 0; h < 2; h++) {
    const uint64_t *c0 = r + (size_t)x->c[2 * h] * EMU_LANES, *c1 = r + (size_t)x->c[2 * h + 1] * EMU_LANES;
    for (unsigned g = 0; g < 8; g++) {
      __m256i v0 = _mm256_loadu_si256((const __m256i *)(c0 + 4 * g));
      __m256i v1 = _mm256_slli_epi64(_mm256_loadu_si256((const __m256i *)(c1 + 4 * g)), 32);
      __m256 f = _mm256_castsi256_ps(_mm256_blend_epi32(v0, v1, 0xAA));
      double *row = C + (8 * h + g) * 8;
      _mm256_storeu_pd(row, _mm256_cvtps_pd(_mm256_castps256_ps128(f)));
      _mm256_storeu_pd(row + 4, _mm256_cvtps_pd(_mm256_extractf128_ps(f, 1)));
    }
  }
  if (simd_level() >= 2) mma_n8_avx512(16, K, A, B, C, D);
  else mma_n8_avx2(16, K, A, B, C, D);
  /* D as C, each float rounded to nearest even, a NaN canonical */
  const __m256 qnan = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
  const __m256i lo32 = _mm256_set1_epi64x(0xFFFFFFFFll);
  for (unsigned h = 0; h < 2; h++) {
    uint64_t *d0 = r + (size_t)x->d[2 * h] * EMU_LANES, *d1 = r + (size_t)x->d[2 * h + 1] * EMU_LANES;
    for (unsigned g = 0; g < 8; g++) {
      const double *row = D + (8 * h + g) * 8;
      __m256 f = _mm256_set_m128(_mm256_cvtpd_ps(_mm256_loadu_pd(row + 4)),
                                 _mm256_cvtpd_ps(_mm256_loadu_pd(row)));
      f = _mm256_blendv_ps(f, qnan, _mm256_cmp_ps(f, f, _CMP_UNORD_Q));
      __m256i v = _mm256_castps_si256(f);
      _mm256_storeu_si256((__m256i *)(d0 + 4 * g), _mm256_and_si256(v, lo32));
      _mm256_storeu_si256((__m256i *)(d1 + 4 * g), _mm256_srli_epi64(v, 32));
    }
  }
}

/* What the host's vector units allow, capped by the test hook: 0 the
   general paths, 1 AVX2 + FMA + F16C, 2 and AVX-512 (emu__mma_general: 1
   caps at 0, 2 at 1). */
static int simd_level(void) {
  static int lv = -1;
  if (lv < 0) {
    int a2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
             __builtin_cpu_supports("f16c");
    lv = a2 ? (__builtin_cpu_supports("avx512f") ? 2 : 1) : 0;
  }
  int cap = emu__mma_general == 1 ? 0 : emu__mma_general == 2 ? 1 : 2;
  return lv < cap ? lv : cap;
}
#endif

static int need_warp(emu_xctx *ctx, uint32_t mask, const char *what) {
  if (mask == 0xFFFFFFFFu) return 0;
  emu_x_fail(ctx, -1, "%s executed by lanes 0x%08x: every lane of the warp must execute it "
                      "(.sync.aligned)", what, mask);
  return -1;
}

static int exec_mma(emu_xctx *ctx, const emu_xop *x, uint64_t *r, uint32_t mask) {
  if (need_warp(ctx, mask, "mma.sync")) return -1;
#ifdef MMA_AVX2
  if (x->fast && simd_level() >= 1) {
    mma_half_fast(x, r);
    return 0;
  }
#endif
  double A[16 * 32], B[32 * 8], C[16 * 8], D[16 * 8];
  unsigned ea = (unsigned)x->na * per_reg(x->at), eb = (unsigned)x->nb * per_reg(x->bt);
  unsigned ec = (unsigned)x->nc * per_reg(x->ct), ed = (unsigned)x->nd * per_reg(x->dt);
  unsigned ecd = ec > ed ? ec : ed;
  const uint16_t *ma = x->map, *mb = ma + EMU_LANES * ea, *mc = mb + EMU_LANES * eb;
  if (x->at == T_F16 && !__atomic_load_n(&h2f_ready, __ATOMIC_ACQUIRE)) {
    pthread_once(&h2f_once, h2f_build);
    __atomic_store_n(&h2f_ready, 1, __ATOMIC_RELEASE);
  }
  gather(r, x->a, x->na, x->at, ma, ea, A);
  gather(r, x->b, x->nb, x->bt, mb, eb, B);
  gather(r, x->c, x->nc, x->ct, mc, ecd, C);
  mma_compute(x, A, B, C, D);
  if (x->dt == T_F32) { /* the common case without put()'s switch */
    for (unsigned j = 0; j < x->nd; j++) {
      uint64_t *w = r + (size_t)x->d[j] * EMU_LANES;
      for (unsigned l = 0; l < EMU_LANES; l++) {
        float f = (float)D[mc[l * ecd + j]];
        w[l] = f != f ? 0x7FFFFFFFu : f2u(f);
      }
    }
    return 0;
  }
  for (unsigned l = 0; l < EMU_LANES; l++)
    for (unsigned i = 0; i < ed; i++) put(r, x->d, x->dt, i, l, D[mc[l * ecd + i]], x->sat);
  return 0;
}

/* wmma fragments: lane and element of logical element p (the first copy). */
/* A wmma fragment of a floating type as its dense matrix: the layout at the
   top puts element e of lane l at index l * E + e (the first n). */
#define WMMA_DENSE(BODY)                                                    \
  for (unsigned j = 0; j < E / pr; j++) {                                   \
    const uint64_t *wr = r + (size_t)regs[j] * EMU_LANES;                   \
    for (unsigned l = 0; l * E < n; l++) {                                  \
      uint32_t w = (uint32_t)wr[l];                                         \
      double *o = M + l * E + j * pr;                                       \
      BODY;                                                                 \
    }                                                                       \
  }
#ifdef MMA_AVX2
/* wmma_dense of f16 / bf16 fragments whose lanes hold a multiple of eight
   halves: a lane's four registers at a time as eight halves to eight
   doubles (F16C, exact like h2f_tab; the suite's gemm_wmma and make
   bench's wmma row converted element by element through the table). */
__attribute__((target("avx2,f16c"))) static void wmma_dense_halves(const uint64_t *r,
                                                                    const uint32_t *regs, int bf,
                                                                    unsigned E, unsigned n,
                                                                    double *M) {
  for (unsigned l = 0; l * E < n; l++)
    for (unsigned j = 0; j < E / 2; j += 4) {
      __m128i v = _mm_setr_epi32((int)(uint32_t)r[(size_t)regs[j] * EMU_LANES + l],
                                 (int)(uint32_t)r[(size_t)regs[j + 1] * EMU_LANES + l],
                                 (int)(uint32_t)r[(size_t)regs[j + 2] * EMU_LANES + l],
                                 (int)(uint32_t)r[(size_t)regs[j + 3] * EMU_LANES + l]);
      halves8(v, bf, M + l * E + 2 * j);
    }
}

/* The same for f32 fragments, four registers at a time. */
__attribute__((target("avx2"))) static void wmma_dense_f32(const uint64_t *r, const uint32_t *regs,
                                                            unsigned E, unsigned n, double *M) {
  for (unsigned l = 0; l * E < n; l++)
    for (unsigned j = 0; j < E; j += 4) {
      __m128i v = _mm_setr_epi32((int)(uint32_t)r[(size_t)regs[j] * EMU_LANES + l],
                                 (int)(uint32_t)r[(size_t)regs[j + 1] * EMU_LANES + l],
                                 (int)(uint32_t)r[(size_t)regs[j + 2] * EMU_LANES + l],
                                 (int)(uint32_t)r[(size_t)regs[j + 3] * EMU_LANES + l]);
      _mm256_storeu_pd(M + l * E + j, _mm256_cvtps_pd(_mm_castsi128_ps(v)));
    }
}
#endif

static void wmma_dense(const uint64_t *r, const uint32_t *regs, int t, unsigned E, unsigned n,
                       double *M) {
  unsigned pr = per_reg(t);
#ifdef MMA_AVX2
  if ((t == T_F16 || t == T_BF16) && E % 8 == 0 && simd_level() >= 1) {
    wmma_dense_halves(r, regs, t == T_BF16, E, n, M);
    return;
  }
  if (t == T_F32 && E % 4 == 0 && simd_level() >= 1) {
    wmma_dense_f32(r, regs, E, n, M);
    return;
  }
#endif
  switch (t) { /* the type outside the loops */
  case T_F16: WMMA_DENSE(o[0] = h2f_tab[w & 0xFFFF]; o[1] = h2f_tab[w >> 16]) break;
  case T_BF16: WMMA_DENSE(o[0] = (double)u2f(w << 16); o[1] = (double)u2f(w & 0xFFFF0000u)) break;
  case T_TF32: WMMA_DENSE(o[0] = (double)u2f(w & 0xFFFFE000u)) break;
  default: WMMA_DENSE(o[0] = (double)u2f(w)) break; /* f32 */
  }
}
#undef WMMA_DENSE

/* wmma.mma of .f16, .bf16 and .tf32 (n a multiple of 8): the fragments
   dense without a per-element switch, the product by 8-column slices
   (each (i, j) sums alone in k order: a slice is mma_n8's, the same bits
   as mma_compute's loop), D back as put() writes it (the suite's gemm_wmma spent
   45 % of its emulation in the general path). */
static void wmma_fast(const emu_xop *x, uint64_t *r) {
  unsigned M = x->m, N = x->n, K = x->k;
  unsigned ea = (unsigned)x->na * per_reg(x->at), eb = (unsigned)x->nb * per_reg(x->bt);
  unsigned ec = (unsigned)x->nc * per_reg(x->ct), ed = (unsigned)x->nd * per_reg(x->dt);
  double A[32 * 16], B[16 * 32], C[32 * 32], D[32 * 32], Bs[16 * 8], Cs[32 * 8], Ds[32 * 8];
  if (!__atomic_load_n(&h2f_ready, __ATOMIC_ACQUIRE)) {
    pthread_once(&h2f_once, h2f_build);
    __atomic_store_n(&h2f_ready, 1, __ATOMIC_RELEASE);
  }
  wmma_dense(r, x->a, x->at, ea, M * K, A);
  wmma_dense(r, x->b, x->bt, eb, K * N, B);
  wmma_dense(r, x->c, x->ct, ec, M * N, C);
  for (unsigned s0 = 0; s0 < N; s0 += 8) {
    for (unsigned q = 0; q < K; q++) memcpy(Bs + q * 8, B + q * N + s0, 8 * sizeof *B);
    for (unsigned i = 0; i < M; i++) memcpy(Cs + i * 8, C + i * N + s0, 8 * sizeof *C);
    mma_n8_any(M, K, A, Bs, Cs, Ds);
    for (unsigned i = 0; i < M; i++) memcpy(D + i * N + s0, Ds + i * 8, 8 * sizeof *D);
  }
  if (x->dt == T_F32) { /* put()'s f32 case, a register at a time */
    for (unsigned e = 0; e < ed; e++) {
      uint64_t *w = r + (size_t)x->d[e] * EMU_LANES;
      for (unsigned l = 0; l < EMU_LANES; l++) {
        float f = (float)D[(l * ed + e) & (M * N - 1)]; /* M N: a power of two */
        w[l] = f != f ? 0x7FFFFFFFu : f2u(f);
      }
    }
    return;
  }
  for (unsigned l = 0; l < EMU_LANES; l++)
    for (unsigned e = 0; e < ed; e++) put(r, x->d, x->dt, e, l, D[(l * ed + e) % (M * N)], x->sat);
}

static int exec_wmma(emu_xctx *ctx, const emu_xop *x, uint64_t *r, uint32_t mask) {
  if (need_warp(ctx, mask, "wmma.mma")) return -1;
  if ((x->at == T_F16 || x->at == T_BF16 || x->at == T_TF32) && x->n % 8 == 0 &&
      emu__mma_general != 1) {
    wmma_fast(x, r);
    return 0;
  }
  static const unsigned MAXE = 32 * 32;
  double A[32 * 16], B[16 * 32], C[32 * 32], D[32 * 32];
  unsigned M = x->m, N = x->n, K = x->k;
  unsigned ea = (unsigned)x->na * per_reg(x->at), eb = (unsigned)x->nb * per_reg(x->bt);
  unsigned ec = (unsigned)x->nc * per_reg(x->ct), ed = (unsigned)x->nd * per_reg(x->dt);
  for (unsigned p = 0; p < M * K && p < MAXE; p++) A[p] = elem(r, x->a, x->at, p % ea, p / ea);
  for (unsigned p = 0; p < K * N && p < MAXE; p++) B[p] = elem(r, x->b, x->bt, p % eb, p / eb);
  for (unsigned p = 0; p < M * N && p < MAXE; p++) C[p] = elem(r, x->c, x->ct, p % ec, p / ec);
  mma_compute(x, A, B, C, D);
  for (unsigned l = 0; l < EMU_LANES; l++)
    for (unsigned e = 0; e < ed; e++) {
      unsigned p = (l * ed + e) % (M * N);
      put(r, x->d, x->dt, e, l, D[p], x->sat);
    }
  return 0;
}

/* Lane l's address of base slot s + off (64-bit: shared offsets and
   generic or global addresses alike). */
static inline uint64_t lane_addr(const uint64_t *r, uint32_t s, int64_t off, unsigned l) {
  return r[(size_t)s * EMU_LANES + l] + (uint64_t)off;
}

/* Memory address of element e of lane l's wmma fragment (E elements a
   lane, es bytes each; the layout at the top). */
static inline uint64_t wmma_addr(const emu_xop *x, const uint64_t *r, unsigned rows, unsigned cols,
                                 unsigned E, unsigned es, unsigned l, unsigned e) {
  /* every wmma shape's sides are powers of two (wmma_shape_ok) */
  unsigned p = (l * E + e) & (rows * cols - 1), row = p >> __builtin_ctz(cols), col = p & (cols - 1);
  uint64_t ldm = x->stride != EMU_NOSLOT ? (uint32_t)r[(size_t)x->stride * EMU_LANES + l]
                                         : (x->colmaj ? rows : cols);
  uint64_t idx = x->colmaj ? (uint64_t)col * ldm + row : (uint64_t)row * ldm + col;
  return lane_addr(r, x->addr, x->off, l) + idx * es;
}

/* wmma.load / wmma.store as the vector accesses a GPU makes where each
   lane's elements lie in runs of 16 bytes (8 or 4 for smaller fragments)
   at consecutive, aligned addresses -- a row-major tile read by a
   row-major fragment and the like: one access per run, its words straight
   to or from the fragment's registers.  1 when the layout is not so (the
   caller goes element by element), 0 done, -1 failed. */
static int wldst_vector(emu_xctx *ctx, const emu_xop *x, uint64_t *r, uint32_t mask, int st,
                        const uint32_t *regs, unsigned E, unsigned es, unsigned pr, unsigned rows,
                        unsigned cols) {
  unsigned bytes = E * es, chunk = bytes >= 16 ? 16 : bytes;
  if (es > 4 || emu__mma_general == 1 || (chunk != 4 && chunk != 8 && chunk != 16) || bytes % chunk)
    return 1;
  unsigned K = chunk / es, nch = E / K, RC = rows * cols;
  /* runs of K elements never cross a row of a row-major tile: p of a
     run's first element is a multiple of K (E, RC and cols are) */
  if (x->colmaj || nch > 16 || E % K || RC % K || cols % K) return 1;
  uint64_t ca[16][EMU_LANES];
  for (unsigned l = 0; l < EMU_LANES; l++) {
    uint64_t ldm = x->stride != EMU_NOSLOT ? (uint32_t)r[(size_t)x->stride * EMU_LANES + l] : cols;
    if ((lane_addr(r, x->addr, x->off, l) | ldm * es) % chunk) return 1;
    for (unsigned c = 0; c < nch; c++) ca[c][l] = wmma_addr(x, r, rows, cols, E, es, l, c * K);
  }
  uint64_t *sa = r + (size_t)x->scratch * EMU_LANES;
  for (unsigned c = 0; c < nch; c++) {
    emu_xacc acc = {(uint8_t)st, x->space, 4, (uint8_t)(chunk / 4), x->scratch, {0, 0, 0, 0}};
    for (unsigned j = 0; j < chunk / 4; j++) acc.data[j] = regs[c * K / pr + j];
    memcpy(sa, ca[c], sizeof ca[c]);
    if (emu_x_access(ctx, r, &acc, mask)) return -1;
  }
  return 0;
}

/* wmma.load / wmma.store: as vector accesses where the layout allows
   (wldst_vector), else element by element through the engine. */
static int exec_wldst(emu_xctx *ctx, const emu_xop *x, uint64_t *r, uint32_t mask) {
  int st = x->kind == X_WST;
  if (need_warp(ctx, mask, st ? "wmma.store" : "wmma.load")) return -1;
  int t = x->frag == FR_A ? x->at : x->frag == FR_B ? x->bt : x->frag == FR_C ? x->ct : x->dt;
  const uint32_t *regs = st ? x->d : x->a;
  unsigned nregs = st ? x->nd : x->na;
  unsigned rows, cols;
  wmma_dims(x, x->frag, &rows, &cols);
  unsigned E = nregs * per_reg(t), es = esize(t), pr = per_reg(t);
  int v = wldst_vector(ctx, x, r, mask, st, regs, E, es, pr, rows, cols);
  if (v <= 0) return v;
  uint64_t *sa = r + (size_t)x->scratch * EMU_LANES, *sd = r + (size_t)(x->scratch + 2) * EMU_LANES;
  emu_xacc acc = {(uint8_t)st, x->space, (uint8_t)es, 1, x->scratch, {x->scratch + 2, 0, 0, 0}};
  for (unsigned e = 0; e < E; e++) {
    for (unsigned l = 0; l < EMU_LANES; l++) {
      sa[l] = wmma_addr(x, r, rows, cols, E, es, l, e);
      if (st) {
        uint64_t w = r[(size_t)regs[e / pr] * EMU_LANES + l];
        sd[l] = es == 8 ? w : (w >> ((e % pr) * 8 * es)) & ((1ull << (8 * es)) - 1);
      }
    }
    if (emu_x_access(ctx, r, &acc, mask)) return -1;
    if (!st)
      for (unsigned l = 0; l < EMU_LANES; l++) {
        uint64_t *w = &r[(size_t)regs[e / pr] * EMU_LANES + l];
        if (es == 8 || pr == 1) { *w = sd[l]; continue; }
        unsigned sh = (e % pr) * 8 * es;
        uint64_t msk = ((1ull << (8 * es)) - 1) << sh;
        if (e % pr == 0) *w = 0; /* the register's first element: the rest follow */
        *w = (*w & ~msk) | ((sd[l] << sh) & msk);
      }
  }
  return 0;
}

/* The bank conflicts of one matrix's eight 16-byte rows (k: offset / 16):
   a row's four banks are those of every row with the same k % 8, and each
   such group serves its distinct rows one after the other.  The passes
   the warp's access takes: the most distinct rows of a group (1..8).  The
   counts go in the nibbles of one register (counters in an array cost a
   store-forwarding stall on every read). */
static unsigned rows_passes(const uint32_t *k) {
  unsigned groups = 0;
  for (unsigned q = 0; q < 8; q++) groups |= 1u << (k[q] & 7);
  if (groups == 0xFF) return 1; /* eight groups: eight distinct rows */
  uint32_t per = 0;
  _Pragma("GCC unroll 8") for (unsigned q = 0; q < 8; q++) {
    unsigned dup = 0;
    _Pragma("GCC unroll 8") for (unsigned p = 0; p < q; p++) dup |= k[p] == k[q];
    per += (uint32_t)!dup << (4 * (k[q] & 7));
  }
  unsigned mx = 0;
  for (unsigned g = 0; g < 8; g++) {
    unsigned c = (per >> (4 * g)) & 15;
    mx = c > mx ? c : mx;
  }
  return mx;
}

#ifdef MMA_AVX2
/* rows_passes with the eight keys in one register: a row is a group's new
   row unless one of the rows before it has its key (seven rotations). */
__attribute__((target("avx2"))) static unsigned rows_passes_avx2(const uint32_t *kp) {
  static const int32_t rot[7][8] = {
      {7, 0, 1, 2, 3, 4, 5, 6}, {6, 7, 0, 1, 2, 3, 4, 5}, {5, 6, 7, 0, 1, 2, 3, 4},
      {4, 5, 6, 7, 0, 1, 2, 3}, {3, 4, 5, 6, 7, 0, 1, 2}, {2, 3, 4, 5, 6, 7, 0, 1},
      {1, 2, 3, 4, 5, 6, 7, 0}};
  static const int32_t before[7][8] = {
      {0, -1, -1, -1, -1, -1, -1, -1}, {0, 0, -1, -1, -1, -1, -1, -1}, {0, 0, 0, -1, -1, -1, -1, -1},
      {0, 0, 0, 0, -1, -1, -1, -1},    {0, 0, 0, 0, 0, -1, -1, -1},    {0, 0, 0, 0, 0, 0, -1, -1},
      {0, 0, 0, 0, 0, 0, 0, -1}};
  __m256i k = _mm256_loadu_si256((const __m256i *)kp), dup = _mm256_setzero_si256();
  for (unsigned s = 0; s < 7; s++) {
    __m256i o = _mm256_permutevar8x32_epi32(k, _mm256_loadu_si256((const __m256i *)rot[s]));
    dup = _mm256_or_si256(dup, _mm256_and_si256(_mm256_cmpeq_epi32(k, o),
                                                _mm256_loadu_si256((const __m256i *)before[s])));
  }
  __m256i cnt = _mm256_sllv_epi32(_mm256_andnot_si256(dup, _mm256_set1_epi32(1)),
                                  _mm256_slli_epi32(_mm256_and_si256(k, _mm256_set1_epi32(7)), 2));
  __m128i h = _mm_add_epi32(_mm256_castsi256_si128(cnt), _mm256_extracti128_si256(cnt, 1));
  h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0x4E));
  h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0xB1));
  /* the largest nibble: bytes of the low nibbles against the high ones */
  __m128i m = _mm_and_si128(h, _mm_set1_epi8(15));
  m = _mm_max_epu8(m, _mm_and_si128(_mm_srli_epi32(h, 4), _mm_set1_epi8(15)));
  m = _mm_max_epu8(m, _mm_srli_epi32(m, 16));
  m = _mm_max_epu8(m, _mm_srli_epi32(m, 8));
  return (unsigned)_mm_cvtsi128_si32(m) & 0xFF;
}
#endif

#ifdef MMA_AVX2
/* ldm_rows' first pass four rows at a time: each row's offset in the
   window (off) and its key (offset / 16); != 0 when a row is misaligned or
   past lim = the window's size - 16.  The window lies below 2^18 bytes
   (EMU_MAX_SHARED), so an offset with a bit above 17 is out. */
_Static_assert(EMU_MAX_SHARED < (1u << 18) && EMU_WIN_SIZE == 1ull << 40,
               "rows_offsets_avx2's bounds");
__attribute__((target("avx2"))) static uint64_t rows_offsets_avx2(const uint64_t *areg, int64_t aoff,
                                                                  unsigned nrows, uint64_t lim,
                                                                  uint64_t *off, uint32_t *k) {
  const __m256i win = _mm256_set1_epi64x((long long)EMU_SHARED_WIN), zero = _mm256_setzero_si256();
  const __m256i vo = _mm256_set1_epi64x(aoff), vlim = _mm256_set1_epi64x((long long)lim);
  const __m256i low = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
  __m256i bad = zero;
  for (unsigned q = 0; q < nrows; q += 4) {
    __m256i ad = _mm256_add_epi64(_mm256_loadu_si256((const __m256i *)(areg + q)), vo);
    __m256i t = _mm256_sub_epi64(ad, win);
    __m256i o = _mm256_blendv_epi8(ad, t, _mm256_cmpeq_epi64(_mm256_srli_epi64(t, 40), zero));
    bad = _mm256_or_si256(bad, _mm256_and_si256(ad, _mm256_set1_epi64x(15)));
    bad = _mm256_or_si256(bad, _mm256_srli_epi64(o, 18));
    bad = _mm256_or_si256(bad, _mm256_cmpgt_epi64(o, vlim));
    _mm256_storeu_si256((__m256i *)(off + q), o);
    __m256i kk = _mm256_permutevar8x32_epi32(_mm256_srli_epi64(o, 4), low);
    _mm_storeu_si128((__m128i *)(k + q), _mm256_castsi256_si128(kk));
  }
  return !_mm256_testz_si256(bad, bad);
}

/* ldm_rows' memo of replays by the keys' differences (d[q] = k[q] - k[0]). */
#define ROWS_MEMO 4
typedef struct rows_memo {
  unsigned nrows;
  uint64_t replays;
  uint32_t d[EMU_LANES];
} rows_memo;
static _Thread_local rows_memo rows_memo_tab[ROWS_MEMO];

__attribute__((target("avx2"))) static void rows_deltas_avx2(const uint32_t *k, unsigned nrows,
                                                             uint32_t *d) {
  __m256i k0 = _mm256_set1_epi32((int)k[0]);
  for (unsigned q = 0; q < nrows; q += 8)
    _mm256_storeu_si256((__m256i *)(d + q),
                        _mm256_sub_epi32(_mm256_loadu_si256((const __m256i *)(k + q)), k0));
}
#endif

/* ldmatrix's rows (stmatrix's with write): nrows (8, 16 or 32) rows of 16
   bytes, row q at shared address areg[q] + aoff, to or from words
   buf[4q .. 4q + 3] -- or, reading with rows given, rows[q] pointed at the
   row in the CTA's shared memory -- counted as emu_x_access counts the 8
   rows of each matrix.  0 when done; 1 (nothing read, written or counted)
   when the rows must go through emu_x_access: the race check, a row
   misaligned or outside the CTA's window. */
static int ldm_rows(emu_xctx *ctx, const void *key, const uint64_t *areg, int64_t aoff,
                    unsigned nrows, uint32_t *buf, const uint8_t **rows, int write) {
  uint64_t shs, bad = 0, off[EMU_LANES];
  uint32_t k[EMU_LANES];
  uint8_t *sh = emu_x_shared(ctx, &shs);
  if (!sh || nrows > EMU_LANES || nrows % 8 || shs < 16) return 1;
#ifdef MMA_AVX2
  int avx2 = simd_level() >= 1;
  if (avx2)
    bad = rows_offsets_avx2(areg, aoff, nrows, shs - 16, off, k);
  else
#endif
    for (unsigned q = 0; q < nrows; q++) { /* one pass: address, window, bounds */
      uint64_t ad = areg[q] + (uint64_t)aoff;
      uint64_t o = ad - EMU_SHARED_WIN < EMU_WIN_SIZE ? ad - EMU_SHARED_WIN : ad;
      bad |= (ad & 15) | (uint64_t)(o > shs - 16);
      off[q] = o;
      k[q] = (uint32_t)(o >> 4);
    }
  if (bad) return 1;
  if (write)
    for (unsigned q = 0; q < nrows; q++) memcpy(sh + off[q], buf + 4 * q, 16);
  else if (rows)
    for (unsigned q = 0; q < nrows; q++) rows[q] = sh + off[q];
  else
    for (unsigned q = 0; q < nrows; q++) memcpy(buf + 4 * q, sh + off[q], 16);
  uint64_t replays = 0;
#ifdef MMA_AVX2
  if (avx2) {
    /* the replays depend on the keys' differences alone (a shift of every
       row moves each to another bank group, all alike, and keeps which
       rows are equal): each thread keeps the last patterns, one per slot
       chosen by the instruction, and a loop's ldmatrix meets its own */
    rows_memo *mo = &rows_memo_tab[((uintptr_t)key >> 4) % ROWS_MEMO];
    uint32_t d[EMU_LANES];
    rows_deltas_avx2(k, nrows, d);
    if (mo->nrows == nrows && !memcmp(mo->d, d, nrows * sizeof *d)) {
      replays = mo->replays;
    } else {
      for (unsigned j = 0; j < nrows; j += 8) replays += rows_passes_avx2(k + j) - 1;
      mo->nrows = nrows;
      mo->replays = replays;
      memcpy(mo->d, d, nrows * sizeof *d);
    }
  } else
#endif
    for (unsigned j = 0; j < nrows; j += 8) replays += rows_passes(k + j) - 1;
  emu_x_shared_count(ctx, 16ull * nrows, nrows / 8, replays);
  return 0;
}

/* One 8x8 matrix of halves from its eight rows (16 bytes each, rows[rr])
   into the warp's register d: lane 4 rr + q gets word q of row rr; with
   .trans lane 4 c + t gets the halves (2t, c) and (2t + 1, c) -- row c of
   the transposed matrix is the four words of lanes 4c..4c+3.  SSE2 (every
   x86-64) does the transpose in registers: the scalar one read each word
   back from the rows' copy, a store-forwarding stall each (make bench's
   tensor loop, ldmatrix half its time). */
static void ldm_matrix(const uint8_t *const *rows, int trans, uint64_t *d) {
#ifdef MMA_AVX2 /* x86-64: SSE2 */
  const __m128i z = _mm_setzero_si128();
  if (!trans) {
    for (unsigned rr = 0; rr < 8; rr++) {
      __m128i v = _mm_loadu_si128((const __m128i *)rows[rr]);
      _mm_storeu_si128((__m128i *)(d + 4 * rr), _mm_unpacklo_epi32(v, z));
      _mm_storeu_si128((__m128i *)(d + 4 * rr + 2), _mm_unpackhi_epi32(v, z));
    }
    return;
  }
  __m128i u[4][2]; /* u[t][h]: words (row 2t | row 2t+1 << 16) of columns 4h..4h+3 */
  for (unsigned t = 0; t < 4; t++) {
    __m128i a = _mm_loadu_si128((const __m128i *)rows[2 * t]);
    __m128i b = _mm_loadu_si128((const __m128i *)rows[2 * t + 1]);
    u[t][0] = _mm_unpacklo_epi16(a, b);
    u[t][1] = _mm_unpackhi_epi16(a, b);
  }
  for (unsigned h = 0; h < 2; h++) { /* 4x4 transpose of words: column c's t = 0..3 */
    __m128i p0 = _mm_unpacklo_epi32(u[0][h], u[1][h]), p1 = _mm_unpacklo_epi32(u[2][h], u[3][h]);
    __m128i p2 = _mm_unpackhi_epi32(u[0][h], u[1][h]), p3 = _mm_unpackhi_epi32(u[2][h], u[3][h]);
    __m128i c[4] = {_mm_unpacklo_epi64(p0, p1), _mm_unpackhi_epi64(p0, p1),
                    _mm_unpacklo_epi64(p2, p3), _mm_unpackhi_epi64(p2, p3)};
    for (unsigned k = 0; k < 4; k++) {
      uint64_t *o = d + 4 * (4 * h + k);
      _mm_storeu_si128((__m128i *)o, _mm_unpacklo_epi32(c[k], z));
      _mm_storeu_si128((__m128i *)(o + 2), _mm_unpackhi_epi32(c[k], z));
    }
  }
#else
  for (unsigned l = 0; l < EMU_LANES; l++) {
    if (!trans) {
      uint32_t w;
      memcpy(&w, rows[l / 4] + 4 * (l % 4), 4);
      d[l] = w;
      continue;
    }
    unsigned c = l / 4, t = l % 4;
    uint16_t lo, hi;
    memcpy(&lo, rows[2 * t] + 2 * c, 2);
    memcpy(&hi, rows[2 * t + 1] + 2 * c, 2);
    d[l] = (uint32_t)lo | (uint32_t)hi << 16;
  }
#endif
}

#ifdef MMA_AVX2
/* ldm_matrix writing each four lanes in one 32-byte store, which mma.sync's
   vector path reads back in one load (AVX2). */
__attribute__((target("avx2"))) static void ldm_matrix_avx2(const uint8_t *const *rows, int trans,
                                                            uint64_t *d) {
  if (!trans) {
    for (unsigned rr = 0; rr < 8; rr++)
      _mm256_storeu_si256((__m256i *)(d + 4 * rr),
                          _mm256_cvtepu32_epi64(_mm_loadu_si128((const __m128i *)rows[rr])));
    return;
  }
  __m128i u[4][2];
  for (unsigned t = 0; t < 4; t++) {
    __m128i a = _mm_loadu_si128((const __m128i *)rows[2 * t]);
    __m128i b = _mm_loadu_si128((const __m128i *)rows[2 * t + 1]);
    u[t][0] = _mm_unpacklo_epi16(a, b);
    u[t][1] = _mm_unpackhi_epi16(a, b);
  }
  for (unsigned h = 0; h < 2; h++) {
    __m128i p0 = _mm_unpacklo_epi32(u[0][h], u[1][h]), p1 = _mm_unpacklo_epi32(u[2][h], u[3][h]);
    __m128i p2 = _mm_unpackhi_epi32(u[0][h], u[1][h]), p3 = _mm_unpackhi_epi32(u[2][h], u[3][h]);
    __m128i c[4] = {_mm_unpacklo_epi64(p0, p1), _mm_unpackhi_epi64(p0, p1),
                    _mm_unpacklo_epi64(p2, p3), _mm_unpackhi_epi64(p2, p3)};
    for (unsigned k = 0; k < 4; k++)
      _mm256_storeu_si256((__m256i *)(d + 4 * (4 * h + k)), _mm256_cvtepu32_epi64(c[k]));
  }
}
#endif

/* ldmatrix / stmatrix .m8n8 .b16, x1/x2/x4, .trans: per matrix j one
   shared access by lanes 0..7, lane r moving the 16 bytes of row r (the
   address lane 8j + r supplies) -- 128 bytes, as the hardware serves each
   matrix -- and the words handed to the lanes that hold them: lane l has
   row l/4, columns 2(l%4) and 2(l%4)+1 (word l%4 of that row); with
   .trans the pair (2(l%4), l/4), (2(l%4)+1, l/4). */
static int exec_ldm(emu_xctx *ctx, const emu_xop *x, uint64_t *r, uint32_t mask) {
  int st = x->kind == X_STM;
  if (need_warp(ctx, mask, st ? "stmatrix" : "ldmatrix")) return -1;
  unsigned rows = 8u * x->nmat;
  const uint64_t *areg = r + (size_t)x->addr * EMU_LANES;
  /* the rows in one pass, each matrix's words straight between its
     register and the 16-byte rows: matrix j's row rr, word q is lane
     4 rr + q's register (.trans: the halves of column pairs); make bench's
     ldmatrix + mma.sync loop spent a third of its time going through
     emu_x_access per matrix */
  const uint8_t *rp[EMU_LANES];
  if (!st && !ldm_rows(ctx, x, areg, x->off, rows, NULL, rp, 0)) {
#ifdef MMA_AVX2
    if (simd_level() >= 1) {
      for (unsigned j = 0; j < x->nmat; j++)
        ldm_matrix_avx2(rp + 8 * j, x->trans, r + (size_t)x->d[j] * EMU_LANES);
      return 0;
    }
#endif
    for (unsigned j = 0; j < x->nmat; j++)
      ldm_matrix(rp + 8 * j, x->trans, r + (size_t)x->d[j] * EMU_LANES);
    return 0;
  }
  for (unsigned l = 0; l < rows; l++) {
    uint64_t a = lane_addr(r, x->addr, x->off, l);
    if (a & 15) {
      emu_x_fail(ctx, (int)l, "%s: row address 0x%llx of lane %u is not 16-byte aligned",
                 st ? "stmatrix" : "ldmatrix", (unsigned long long)a, l);
      return -1;
    }
  }
  if (st) {
    uint32_t rw[4 * EMU_LANES];
    for (unsigned j = 0; j < x->nmat; j++) {
      const uint64_t *dreg = r + (size_t)x->d[j] * EMU_LANES;
      uint32_t *m = rw + 32 * j;
      if (!x->trans) {
        for (unsigned l = 0; l < EMU_LANES; l++) m[l] = (uint32_t)dreg[l];
        continue;
      }
      memset(m, 0, 32 * sizeof *m);
      for (unsigned l = 0; l < EMU_LANES; l++) {
        uint32_t v = (uint32_t)dreg[l];
        unsigned col = l / 4, q = col / 2, sh = 16 * (col % 2);
        for (unsigned h = 0; h < 2; h++) m[4 * (2 * (l % 4) + h) + q] |= ((v >> (16 * h)) & 0xFFFF) << sh;
      }
    }
    if (!ldm_rows(ctx, x, areg, x->off, rows, rw, NULL, 1)) return 0;
  }
  uint64_t *sa = r + (size_t)x->scratch * EMU_LANES;
  uint64_t *w[4];
  for (unsigned q = 0; q < 4; q++) w[q] = r + (size_t)(x->scratch + 2 + q) * EMU_LANES;
  emu_xacc acc = {(uint8_t)st, PTX_SP_SHARED, 4, 4, x->scratch,
                  {x->scratch + 2, x->scratch + 3, x->scratch + 4, x->scratch + 5}};
  for (unsigned j = 0; j < x->nmat; j++) {
    uint64_t *dreg = r + (size_t)x->d[j] * EMU_LANES;
    for (unsigned rr = 0; rr < 8; rr++) sa[rr] = lane_addr(r, x->addr, x->off, 8 * j + rr);
    if (st) {
      /* the rows from the lanes' registers */
      for (unsigned l = 0; l < EMU_LANES; l++) {
        uint32_t v = (uint32_t)dreg[l];
        if (!x->trans) {
          w[l % 4][l / 4] = v;
        } else {
          for (unsigned h = 0; h < 2; h++) {
            unsigned row = 2 * (l % 4) + h, col = l / 4, q = col / 2, sh = 16 * (col % 2);
            uint64_t *cell = &w[q][row];
            *cell = (*cell & ~(0xFFFFull << sh)) | (uint64_t)((v >> (16 * h)) & 0xFFFF) << sh;
          }
        }
      }
    }
    if (emu_x_access(ctx, r, &acc, 0xFFu)) return -1;
    if (st) continue;
    if (!x->trans) { /* lane 4 rr + q: word q of row rr */
      for (unsigned rr = 0; rr < 8; rr++)
        for (unsigned q = 0; q < 4; q++) dreg[4 * rr + q] = (uint32_t)w[q][rr];
      continue;
    }
    for (unsigned l = 0; l < EMU_LANES; l++) {
      unsigned col = l / 4, q = col / 2, sh = 16 * (col % 2), r0 = 2 * (l % 4);
      dreg[l] = ((w[q][r0] >> sh) & 0xFFFF) | ((w[q][r0 + 1] >> sh) & 0xFFFF) << 16;
    }
  }
  return 0;
}

/* cp.async shared <- global of cp-size bytes, src-size of them read. */
static int exec_cpa(emu_xctx *ctx, const emu_xop *x, uint64_t *r, uint32_t mask) {
  unsigned n = x->cpsize, words = n / 4;
  uint32_t full = 0, part = 0;
  uint64_t *sa = r + (size_t)x->scratch * EMU_LANES, *sb = r + (size_t)(x->scratch + 1) * EMU_LANES;
  unsigned have[EMU_LANES];
  for (uint32_t mm = mask; mm; mm &= mm - 1) {
    unsigned l = (unsigned)__builtin_ctz(mm);
    unsigned k = n;
    if (x->srcmode == 1) {
      uint64_t v = (uint32_t)r[(size_t)x->srcsz * EMU_LANES + l];
      k = v < n ? (unsigned)v : n;
    } else if (x->srcmode == 2) {
      k = ((r[(size_t)x->srcsz * EMU_LANES + l] ^ x->srcneg) & 1) ? 0 : n;
    }
    have[l] = k;
    if (k == n) full |= 1u << l;
    else if (k) part |= 1u << l;
    sa[l] = lane_addr(r, x->addr, x->off, l);
    sb[l] = lane_addr(r, x->addr2, x->off2, l);
  }
  /* data words: zero, then what the lanes read (a lane that reads all
     cp-size bytes overwrites every word: only the others need the zeros) */
  for (unsigned w = 0; w < words && (mask & ~full); w++) {
    uint64_t *dw = r + (size_t)(x->scratch + 2 + w) * EMU_LANES;
    for (uint32_t mm = mask & ~full; mm; mm &= mm - 1) dw[__builtin_ctz(mm)] = 0;
  }
  emu_xacc ld = {0, PTX_SP_GLOBAL, 4, (uint8_t)words, x->scratch + 1,
                 {x->scratch + 2, x->scratch + 3, x->scratch + 4, x->scratch + 5}};
  if (full && emu_x_access(ctx, r, &ld, full)) return -1;
  for (uint32_t mm = part; mm; mm &= mm - 1) { /* src-size between 0 and cp-size: byte by byte */
    unsigned l = (unsigned)__builtin_ctz(mm);
    uint64_t base = sb[l];
    for (unsigned b = 0; b < have[l]; b++) {
      sb[l] = base + b;
      emu_xacc one = {0, PTX_SP_GLOBAL, 1, 1, x->scratch + 1, {x->scratch + 5, 0, 0, 0}};
      uint64_t keep = r[(size_t)(x->scratch + 5) * EMU_LANES + l];
      if (emu_x_access(ctx, r, &one, 1u << l)) return -1;
      uint64_t byte = r[(size_t)(x->scratch + 5) * EMU_LANES + l] & 0xFF;
      r[(size_t)(x->scratch + 5) * EMU_LANES + l] = keep;
      uint64_t *dw = r + (size_t)(x->scratch + 2 + b / 4) * EMU_LANES;
      dw[l] |= byte << (8 * (b % 4));
    }
  }
  emu_xacc stc = {1, PTX_SP_SHARED, 4, (uint8_t)words, x->scratch,
                  {x->scratch + 2, x->scratch + 3, x->scratch + 4, x->scratch + 5}};
  return emu_x_access(ctx, r, &stc, mask);
}

/* cp.async.bulk.global.shared::cta.bulk_group [dst], [src], size: each
   lane of mask copies its size bytes, 16 at a time. */
static int exec_bulk(emu_xctx *ctx, const emu_xop *x, uint64_t *r, uint32_t mask) {
  uint64_t *sa = r + (size_t)x->scratch * EMU_LANES, *sb = r + (size_t)(x->scratch + 1) * EMU_LANES;
  for (uint32_t mm = mask; mm; mm &= mm - 1) {
    unsigned l = (unsigned)__builtin_ctz(mm);
    uint64_t size = (uint32_t)r[(size_t)x->bulk * EMU_LANES + l];
    if (size % 16) {
      emu_x_fail(ctx, (int)l, "cp.async.bulk: size %llu is not a multiple of 16",
                 (unsigned long long)size);
      return -1;
    }
    uint64_t dst = lane_addr(r, x->addr, x->off, l), src = lane_addr(r, x->addr2, x->off2, l);
    emu_xacc ld = {0, PTX_SP_SHARED, 4, 4, x->scratch + 1,
                   {x->scratch + 2, x->scratch + 3, x->scratch + 4, x->scratch + 5}};
    emu_xacc stg = {1, PTX_SP_GLOBAL, 4, 4, x->scratch,
                    {x->scratch + 2, x->scratch + 3, x->scratch + 4, x->scratch + 5}};
    for (uint64_t o = 0; o < size; o += 16) {
      sb[l] = src + o;
      sa[l] = dst + o;
      if (emu_x_access(ctx, r, &ld, 1u << l) || emu_x_access(ctx, r, &stg, 1u << l)) return -1;
    }
  }
  return 0;
}

int emu_xop_exec(emu_xctx *ctx, const emu_xop *x, uint64_t *r, uint32_t mask) {
  switch (x->kind) {
  case X_MMA: return exec_mma(ctx, x, r, mask);
  case X_WMMA: return exec_wmma(ctx, x, r, mask);
  case X_WLD: case X_WST: return exec_wldst(ctx, x, r, mask);
  case X_LDM: case X_STM: return exec_ldm(ctx, x, r, mask);
  case X_CPA: return exec_cpa(ctx, x, r, mask);
  case X_BULK_S2G: return exec_bulk(ctx, x, r, mask);
  default: return 0;
  }
}
