/*
 * ptx_print.c -- an instruction back to PTX text.
 *
 * ptx_insn_print writes guard, opcode key and operands the way nvcc writes
 * them ("@%p1 bra $L__BB1_2", "ld.global.f32 %f1, [%rd2+4]",
 * "shfl.sync.down.b32 %r19|%p5, %r14, %r17, %r16, %r18",
 * "call.uni (retval0), _Z2sqf, (param0)").  Immediates keep their spelling
 * (ptx_operand.fmt): 0f3F800000 stays 0f3F800000, hex stays hex, [param0+0]
 * keeps its +0.  Decimal floats, whose digits the module does not keep, are
 * printed with the fewest digits that read back to the same bits.
 * Used by the tests' round trip, by diagnostics and by the disassembly of
 * the CLI.
 */
#include "ptx_int.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct out { char *buf; size_t cap, len; } out;

static void put(out *o, const char *s, size_t n) {
  if (o->len < o->cap) {
    size_t room = o->cap - o->len - 1;
    memcpy(o->buf + o->len, s, n < room ? n : room);
  }
  o->len += n;
}

static void puts_(out *o, const char *s) { put(o, s, strlen(s)); }

__attribute__((format(printf, 2, 3)))
static void putf(out *o, const char *fmt, ...) {
  char tmp[64];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n > 0) put(o, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static void put_float_dec(out *o, double v, int is_f32) {
  char tmp[48];
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(tmp, sizeof tmp, "%.*g", prec, v);
    int same = is_f32 ? (float)strtod(tmp, NULL) == (float)v : strtod(tmp, NULL) == v;
    if (same) break;
  }
  /* keep it a float literal: 1 -> 1.0 */
  if (!strpbrk(tmp, ".eEn")) strcat(tmp, ".0");
  puts_(o, tmp);
}

static void put_imm(out *o, const ptx_operand *p) {
  unsigned kind = p->fmt & PTX_IMMFMT_KIND;
  int upper = (p->fmt & PTX_IMMFMT_UPPER) != 0;
  int uprefix = (p->fmt & PTX_IMMFMT_UPPREFIX) != 0;
  int neg = (p->fmt & PTX_IMMFMT_NEG) != 0;
  if (p->kind == PTX_OPND_IMM_INT) {
    uint64_t mag = neg ? (uint64_t)0 - (uint64_t)p->u.i : (uint64_t)p->u.i;
    if (neg) puts_(o, "-");
    switch (kind) {
    case PTX_IMMFMT_HEX:
      putf(o, upper ? "0%c%" PRIX64 : "0%c%" PRIx64, uprefix ? 'X' : 'x', mag);
      break;
    case PTX_IMMFMT_OCT: putf(o, "0%" PRIo64, mag); break;
    case PTX_IMMFMT_BIN: {
      char tmp[70];
      int n = 0;
      do { tmp[n++] = (char)('0' + (mag & 1)); mag >>= 1; } while (mag);
      puts_(o, uprefix ? "0B" : "0b");
      while (n) put(o, &tmp[--n], 1);
      break;
    }
    default: putf(o, "%" PRIu64, mag); break;
    }
    if (p->fmt & PTX_IMMFMT_UNSIGNED) puts_(o, "U");
    return;
  }
  if (p->kind == PTX_OPND_IMM_F32) {
    uint32_t b = p->u.f32bits;
    if (kind == PTX_IMMFMT_FHEX) {
      if (neg) { puts_(o, "-"); b ^= 0x80000000u; }
      putf(o, upper ? "0%c%08" PRIX32 : "0%c%08" PRIx32, uprefix ? 'F' : 'f', b);
    } else {
      float f;
      memcpy(&f, &b, 4);
      put_float_dec(o, f, 1);
    }
    return;
  }
  uint64_t b = p->u.f64bits;
  if (kind == PTX_IMMFMT_FHEX) {
    if (neg) { puts_(o, "-"); b ^= 0x8000000000000000ull; }
    putf(o, upper ? "0%c%016" PRIX64 : "0%c%016" PRIx64, uprefix ? 'D' : 'd', b);
  } else {
    double d;
    memcpy(&d, &b, 8);
    put_float_dec(o, d, 0);
  }
}

static const char *sym_name(const ptx_module *m, const ptx_func *f, uint32_t idx, int local) {
  if (local) return idx < f->nvars ? f->vars[idx].name : "?";
  return idx < m->nvars ? m->vars[idx].name : "?";
}

static const char *reg_name(const ptx_func *f, uint32_t r) {
  return r < f->nregs ? f->regs[r].name : "%?";
}

/* Print operand k; returns the index after it and its elements. */
static uint32_t put_opnd(out *o, const ptx_module *m, const ptx_func *f, uint32_t k) {
  if (k >= f->nopnds) { puts_(o, "?"); return k + 1; }
  const ptx_operand *p = &f->opnds[k];
  switch (p->kind) {
  case PTX_OPND_REG:
    if (p->neg) puts_(o, "!");
    puts_(o, reg_name(f, p->u.reg));
    return k + 1;
  case PTX_OPND_SREG: puts_(o, ptx_sreg_name((ptx_sreg)p->u.sreg)); return k + 1;
  case PTX_OPND_IMM_INT:
  case PTX_OPND_IMM_F32:
  case PTX_OPND_IMM_F64: put_imm(o, p); return k + 1;
  case PTX_OPND_SYM: puts_(o, sym_name(m, f, p->u.sym, p->sym_local)); return k + 1;
  case PTX_OPND_LABEL:
    puts_(o, p->u.label < f->nlabels ? f->labels[p->u.label].name : "?");
    return k + 1;
  case PTX_OPND_FUNC:
    puts_(o, p->u.func < m->nfuncs && m->funcs[p->u.func].name ? m->funcs[p->u.func].name : "?");
    return k + 1;
  case PTX_OPND_SINK: puts_(o, "_"); return k + 1;
  case PTX_OPND_ADDR: {
    const struct ptx_addr *a = &p->u.addr;
    puts_(o, "[");
    if (a->base_kind == PTX_OPND_REG) puts_(o, reg_name(f, a->base));
    else if (a->base_kind == PTX_OPND_SYM) puts_(o, sym_name(m, f, a->base, a->sym_local));
    else putf(o, "%" PRId64, a->offset);
    if (a->base_kind != PTX_OPND_IMM_INT && (p->fmt & PTX_ADDRFMT_OFFSET)) {
      if (p->fmt & PTX_ADDRFMT_MINUS) putf(o, "-%" PRIu64, (uint64_t)0 - (uint64_t)a->offset);
      else putf(o, "+%" PRId64, a->offset);
    }
    uint32_t next = k + 1;
    if (p->n) {
      puts_(o, ", {");
      for (uint32_t e = 0; e < p->n; e++) {
        if (e) puts_(o, ", ");
        next = put_opnd(o, m, f, next);
      }
      puts_(o, "}");
    }
    puts_(o, "]");
    return next;
  }
  case PTX_OPND_VEC:
  case PTX_OPND_LIST: {
    puts_(o, p->kind == PTX_OPND_VEC ? "{" : "(");
    uint32_t next = k + 1;
    for (uint32_t e = 0; e < p->n; e++) {
      if (e) puts_(o, ", ");
      next = put_opnd(o, m, f, next);
    }
    puts_(o, p->kind == PTX_OPND_VEC ? "}" : ")");
    return next;
  }
  default: puts_(o, "?"); return k + 1;
  }
}

size_t ptx_insn_print(const ptx_module *m, const ptx_func *f, const ptx_insn *i, char *buf,
                      size_t cap) {
  out o = {buf, cap, 0};
  if (i->guard >= 0) {
    puts_(&o, i->guard_neg ? "@!" : "@");
    puts_(&o, reg_name(f, (uint32_t)i->guard));
    puts_(&o, " ");
  }
  puts_(&o, i->key < m->nkeys ? m->keys[i->key] : "?");
  uint32_t k = i->opnd;
  for (unsigned j = 0; j < i->nopnd; j++) {
    const ptx_operand *p = k < f->nopnds ? &f->opnds[k] : NULL;
    if (j == 0) puts_(&o, " ");
    else puts_(&o, p && p->pipe ? "|" : ", ");
    k = put_opnd(&o, m, f, k);
  }
  if (cap) buf[o.len < cap ? o.len : cap - 1] = 0;
  return o.len;
}
