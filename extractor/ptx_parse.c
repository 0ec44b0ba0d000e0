/*
 * ptx_parse.c -- recursive-descent parser from PTX text to a ptx_module.
 *
 * One pass over the token stream of ptx_lex.c.  Design choices, all for
 * speed on multi-megabyte inputs (target: > 50 MB/s on one core):
 *
 *  - Every instruction's opcode key ("ld.global.nc.f32") is one lexer word.
 *    Keys are interned in a hash table whose entries carry a pre-decoded
 *    instruction template (op, types, space, cmp, rnd, aux, vec, flags), so
 *    the dot-modifiers of a key are decoded once per module, not once per
 *    instruction; an instruction costs one hash probe plus its operands.
 *  - Names are resolved while parsing: function-scope names (registers and
 *    .local/.shared/.param variables) live in a table mapping a name to its
 *    innermost binding; each binding remembers the one it shadows, so leaving
 *    a nested `{ }` scope restores the outer declarations (nvcc redeclares
 *    `.param .b32 param0` in every callseq block).  Labels have their own
 *    table and may be used before they are defined; an undefined one is an
 *    error at the end of the body.  Module symbols (variables, functions) have
 *    a third table.  A `.branchtargets` jump table is kept on its label
 *    (ptx_label.targets); brx.idx names it like a branch target.
 *  - Per-function arrays grow in reusable scratch vectors and are copied to
 *    the module's arena, exactly sized, when the body closes.  Nothing is
 *    malloc'ed per token or per instruction.
 *  - Errors longjmp to ptx_parse, which frees the scratch vectors and the
 *    arena: the parser never returns a half-built module.  Messages read
 *    "FILE:LINE:COL: error: ..." and quote the offending token.
 *
 * What the parser accepts: see ptx.h and the PTX ISA 8.x/9.0 subset emitted
 * by nvcc 13 and clang 22 (tests/ptx/ has samples); debug sections, @@DWARF
 * and pragmas are skipped; .loc and .file give each instruction its source
 * line (ptx_insn.src_line, ptx_module.files) and nothing else; .texref/.surfref/.samplerref
 * declarations are recorded as symbols of space TEX without contents.
 *
 * What it refuses as ptxas does (check_operand_types, decode_key): register
 * operands whose declared type does not agree with the instruction's
 * (arithmetic, logic, moves, comparisons, selects, and the data of loads,
 * stores and conversions, by the ISA's operand-type rules), two modifiers
 * of one kind (rounding, comparison, vector width, state space of a load or
 * store), cvt without the rounding its types need or with one they forbid,
 * a guard that is not a predicate, an unknown .target.  Checked against
 * ptxas 13.0 on 6,656 operand-type and 1,008 cvt combinations: nothing
 * ptxas takes is refused (ptxas refuses more).  A key with a modifier the
 * decoder does not know is not type-checked.
 */
#include "ptx_int.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- arena -- */

#define ARENA_CHUNK (256u * 1024u)
#define ARENA_BIG (64u * 1024u)

struct ptx_arena *ptx_arena_new(void) {
  struct ptx_arena *a = calloc(1, sizeof *a);
  return a;
}

void ptx_arena_free(struct ptx_arena *a) {
  if (!a) return;
  for (ptx_arena_chunk *c = a->head, *n; c; c = n) { n = c->next; free(c); }
  for (ptx_arena_chunk *c = a->big, *n; c; c = n) { n = c->next; free(c); }
  free(a);
}

#define CHUNK_HDR ((sizeof(ptx_arena_chunk) + 15u) & ~(size_t)15u)

/* Large blocks come from calloc: zeroed and, for big sizes, lazily mapped. */
static void *arena_big(struct ptx_arena *a, size_t n) {
  if (n > SIZE_MAX - CHUNK_HDR) return NULL;
  ptx_arena_chunk *c = calloc(1, CHUNK_HDR + n);
  if (!c) return NULL;
  c->cap = c->used = n;
  c->next = a->big;
  a->big = c;
  a->total += CHUNK_HDR + n;
  return (char *)c + CHUNK_HDR;
}

void *ptx_arena_alloc(struct ptx_arena *a, size_t n) {
  n = (n + 15u) & ~(size_t)15u;
  if (n == 0) n = 16;
  if (n >= ARENA_BIG) return arena_big(a, n);
  ptx_arena_chunk *c = a->head;
  if (!c || c->cap - c->used < n) {
    c = malloc(CHUNK_HDR + ARENA_CHUNK);
    if (!c) return NULL;
    c->cap = ARENA_CHUNK;
    c->used = 0;
    c->next = a->head;
    a->head = c;
    a->total += CHUNK_HDR + ARENA_CHUNK;
  }
  void *p = (char *)c + CHUNK_HDR + c->used;
  c->used += n;
  return p;
}

/* Zeroed memory (for initialiser images, possibly large). */
static void *arena_calloc(struct ptx_arena *a, size_t n) {
  if (n >= ARENA_BIG) return arena_big(a, n);
  void *p = ptx_arena_alloc(a, n);
  if (p) memset(p, 0, n);
  return p;
}

char *ptx_arena_strndup(struct ptx_arena *a, const char *s, size_t len) {
  char *p = ptx_arena_alloc(a, len + 1);
  if (!p) return NULL;
  memcpy(p, s, len);
  p[len] = 0;
  return p;
}

/* ------------------------------------------------------- scratch vectors -- */

typedef struct vec { void *a; uint32_t n, cap; } vec;

/* ------------------------------------------------------------ name maps -- */

/* Open addressing, linear probing, power-of-two capacity, no deletion:
   a slot keeps its name forever and its value may become -1. */
typedef struct smap_slot { const char *s; uint32_t len, hash; int32_t val; } smap_slot;
typedef struct smap { smap_slot *slot; uint32_t cap, n; } smap;

/* ----------------------------------------------------------- the parser -- */

enum { B_REG = 0, B_VAR = 1 };
typedef struct binding {
  const char *s;
  uint32_t len, hash;
  int32_t prev;    /* binding shadowed by this one, -1 when none */
  uint32_t kind;   /* B_REG, B_VAR */
  uint32_t idx;    /* reg slot or ptx_func.vars index */
} binding;

enum { MS_VAR = 0, MS_FUNC = 1 }; /* module symbol: val = idx * 2 + kind */

typedef struct key_entry {
  ptx_insn tmpl;   /* decoded fields; operands, guard, line not set */
  uint8_t ntypes;  /* type modifiers written */
  uint8_t unknown; /* 1 when a modifier was not recognised: operand types
                      are then not checked (the decoding may be partial) */
} key_entry;

typedef struct label_use { uint32_t line, col; } label_use;

/* One entry of a .branchtargets list, where it was written. */
typedef struct target_use { uint32_t label, line, col; } target_use;

typedef struct parser {
  ptx_lexer L;
  ptx_tok tok;              /* current token */
  const char *fname;
  ptx_error *err;
  jmp_buf jb;
  ptx_module *m;
  struct ptx_arena *A;
  /* module scratch */
  vec mvars, funcs, keys, ktmpl;
  smap msyms, kmap;
  /* function scratch (reset per function) */
  vec insns, opnds, regs, fvars, labels, luse, binds, scopes;
  vec tuse;                 /* target_use of every .branchtargets entry */
  smap fsyms, lmap;
  /* initialiser scratch */
  vec relocs, initbuf;
  uint64_t init_total;      /* bytes of initialised data so far */
  uint64_t nregs_total;     /* register slots declared so far */
  uint32_t loc_file, loc_line; /* the last .loc (0: none in this function) */
  vec files;                /* .file names by number (const char *) */
  char numbuf[128];
} parser;

/* ---------------------------------------------------------------- errors -- */

static void quote_tok(const ptx_tok *t, char *out, size_t cap) {
  if (t->kind == PTX_TK_EOF) { snprintf(out, cap, "end of file"); return; }
  size_t n = t->len < 40 ? t->len : 40;
  size_t o = 0;
  out[o++] = '\'';
  for (size_t i = 0; i < n && o + 6 < cap; i++) {
    unsigned char c = (unsigned char)t->p[i];
    if (c >= 32 && c < 127) out[o++] = (char)c;
    else o += (size_t)snprintf(out + o, cap - o, "\\x%02x", c);
  }
  if (t->len > n && o + 4 < cap) { memcpy(out + o, "...", 3); o += 3; }
  if (o + 2 < cap) out[o++] = '\'';
  out[o] = 0;
}

__attribute__((noreturn, format(printf, 4, 5)))
static void fail_at(parser *P, uint32_t line, uint32_t col, const char *fmt, ...) {
  if (P->err) {
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    P->err->line = line;
    P->err->col = col;
    snprintf(P->err->msg, sizeof P->err->msg, "%s:%u:%u: error: %s", P->fname,
             line, col, what);
  }
  longjmp(P->jb, 1);
}

/* Error at the current token.  A lexical error replaces the message: the
   lexer stopped on a bad byte, which is what the user must fix. */
__attribute__((noreturn, format(printf, 2, 3)))
static void fail(parser *P, const char *fmt, ...) {
  if (P->L.bad) {
    char c[16];
    unsigned char b = (unsigned char)*P->L.bad;
    if (b >= 32 && b < 127) snprintf(c, sizeof c, "'%c'", b);
    else snprintf(c, sizeof c, "'\\x%02x'", b);
    if (!strcmp(P->L.badmsg, "invalid character"))
      fail_at(P, P->L.badline, P->L.badcol, "invalid character %s%s", c,
              b == 0 || b >= 127 ? " (not a text file?)" : "");
    fail_at(P, P->L.badline, P->L.badcol, "%s", P->L.badmsg);
  }
  char what[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  fail_at(P, P->tok.line, P->tok.col, "%s", what);
}

__attribute__((noreturn))
static void oom(parser *P) {
  fail_at(P, P->tok.line, P->tok.col, "out of memory");
}

static void *aalloc(parser *P, size_t n) {
  void *p = ptx_arena_alloc(P->A, n);
  if (!p) oom(P);
  return p;
}

static const char *astr(parser *P, const char *s, size_t len) {
  char *p = ptx_arena_strndup(P->A, s, len);
  if (!p) oom(P);
  return p;
}

static void *vpush(parser *P, vec *v, size_t elem) {
  if (v->n == v->cap) {
    uint32_t nc = v->cap ? v->cap * 2 : 16;
    if (v->cap >= (1u << 30) || (size_t)nc > SIZE_MAX / elem) oom(P);
    void *na = realloc(v->a, (size_t)nc * elem);
    if (!na) oom(P);
    v->a = na;
    v->cap = nc;
  }
  return (char *)v->a + (size_t)v->n++ * elem;
}
#define VPUSH(P, v, T) ((T *)vpush((P), &(v), sizeof(T)))
#define VAT(v, T, i) (((T *)(v).a)[i])

/* Copy a scratch vector into the arena (NULL when empty). */
static void *vfreeze(parser *P, const vec *v, size_t elem) {
  if (!v->n) return NULL;
  void *p = aalloc(P, (size_t)v->n * elem);
  memcpy(p, v->a, (size_t)v->n * elem);
  return p;
}

/* ------------------------------------------------------------ name maps -- */

static void smap_grow(parser *P, smap *m) {
  uint32_t nc = m->cap ? m->cap * 2 : 256;
  if (nc == 0 || nc > (1u << 30)) oom(P);
  smap_slot *ns = calloc(nc, sizeof *ns);
  if (!ns) oom(P);
  for (uint32_t i = 0; i < m->cap; i++) {
    smap_slot *o = &m->slot[i];
    if (!o->s) continue;
    uint32_t h = o->hash & (nc - 1);
    while (ns[h].s) h = (h + 1) & (nc - 1);
    ns[h] = *o;
  }
  free(m->slot);
  m->slot = ns;
  m->cap = nc;
}

/* Slot of name s (existing, or the empty slot where it would go). */
static smap_slot *smap_find(const smap *m, const char *s, uint32_t len, uint32_t hash) {
  if (!m->cap) return NULL;
  uint32_t h = hash & (m->cap - 1);
  for (;;) {
    smap_slot *e = &m->slot[h];
    if (!e->s) return e;
    if (e->hash == hash && e->len == len && memcmp(e->s, s, len) == 0) return e;
    h = (h + 1) & (m->cap - 1);
  }
}

static int32_t smap_get(const smap *m, const char *s, uint32_t len, uint32_t hash) {
  smap_slot *e = smap_find(m, s, len, hash);
  return e && e->s ? e->val : -1;
}

/* Slot for s, inserted with val -1 when absent; s must outlive the map. */
static smap_slot *smap_put(parser *P, smap *m, const char *s, uint32_t len, uint32_t hash) {
  if ((m->n + 1) * 2 > m->cap) smap_grow(P, m);
  smap_slot *e = smap_find(m, s, len, hash);
  if (!e->s) {
    e->s = s;
    e->len = len;
    e->hash = hash;
    e->val = -1;
    m->n++;
  }
  return e;
}

static void smap_clear(smap *m) {
  if (m->n) memset(m->slot, 0, (size_t)m->cap * sizeof *m->slot);
  m->n = 0;
}

/* ---------------------------------------------------------------- tokens -- */

static void next(parser *P) { ptx_lex_next(&P->L, &P->tok); }

static int is_punct(const parser *P, char c) {
  return P->tok.kind == PTX_TK_PUNCT && P->tok.c == c;
}

static int tok_is(const parser *P, const char *w) {
  size_t n = strlen(w);
  return P->tok.kind == PTX_TK_WORD && P->tok.len == n && memcmp(P->tok.p, w, n) == 0;
}

static const char *tokq(const parser *P, char *buf, size_t cap) {
  quote_tok(&P->tok, buf, cap);
  return buf;
}

static void expect(parser *P, char c) {
  if (!is_punct(P, c)) {
    char q[200];
    fail(P, "expected '%c' before %s", c, tokq(P, q, sizeof q));
  }
  next(P);
}

/* Skip to the next ';' at brace depth 0 and past it. */
static void skip_statement(parser *P) {
  int depth = 0;
  for (;;) {
    if (P->tok.kind == PTX_TK_EOF) fail(P, "unexpected end of file, expected ';'");
    if (P->tok.kind == PTX_TK_PUNCT) {
      if (P->tok.c == '{') depth++;
      else if (P->tok.c == '}') {
        if (--depth < 0) fail(P, "unbalanced '}'");
      } else if (P->tok.c == ';' && depth == 0) { next(P); return; }
    }
    next(P);
  }
}

/* ----------------------------------------------------------- immediates -- */

typedef struct imm {
  uint8_t kind;    /* PTX_OPND_IMM_INT / IMM_F32 / IMM_F64 */
  uint8_t fmt;
  uint64_t bits;   /* integer value (two's complement) or float bits */
} imm;

static int hexval(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* Decode a number token (neg: preceded by '-').  fctx: size in bytes of the
   float context for decimal floats (8 -> f64, else f32).  0 on success. */
static int decode_num(parser *P, const char *s, uint32_t len, int neg, unsigned fctx, imm *out) {
  out->fmt = neg ? PTX_IMMFMT_NEG : 0;
  if (len >= 2 && s[0] == '0' && (s[1] == 'f' || s[1] == 'F' || s[1] == 'd' || s[1] == 'D')) {
    unsigned nd = (s[1] == 'f' || s[1] == 'F') ? 8 : 16;
    if (len != 2 + nd) return -1;
    uint64_t v = 0;
    int upper = 0;
    for (unsigned i = 2; i < len; i++) {
      int d = hexval(s[i]);
      if (d < 0) return -1;
      if (s[i] >= 'A' && s[i] <= 'F') upper = 1;
      v = v << 4 | (uint64_t)d;
    }
    out->fmt |= PTX_IMMFMT_FHEX | (upper ? PTX_IMMFMT_UPPER : 0) |
                (s[1] == 'F' || s[1] == 'D' ? PTX_IMMFMT_UPPREFIX : 0);
    if (nd == 8) {
      out->kind = PTX_OPND_IMM_F32;
      if (neg) v ^= 0x80000000u;
    } else {
      out->kind = PTX_OPND_IMM_F64;
      if (neg) v ^= 0x8000000000000000ull;
    }
    out->bits = v;
    return 0;
  }
  /* integer? */
  uint32_t n = len;
  int uns = 0;
  if (n > 1 && (s[n - 1] == 'U' || s[n - 1] == 'u')) { uns = 1; n--; }
  unsigned base = 10, start = 0, kind = PTX_IMMFMT_DEC;
  int upper = 0, uprefix = 0;
  if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16; start = 2; kind = PTX_IMMFMT_HEX; uprefix = s[1] == 'X';
  } else if (n >= 2 && s[0] == '0' && (s[1] == 'b' || s[1] == 'B')) {
    base = 2; start = 2; kind = PTX_IMMFMT_BIN; uprefix = s[1] == 'B';
  } else if (n >= 2 && s[0] == '0') {
    base = 8; start = 1; kind = PTX_IMMFMT_OCT;
  }
  int is_int = n > start;
  uint64_t v = 0;
  for (uint32_t i = start; i < n && is_int; i++) {
    int d = hexval(s[i]);
    if (d < 0 || (unsigned)d >= base) { is_int = 0; break; }
    if (s[i] >= 'A' && s[i] <= 'F') upper = 1;
    if (v > (UINT64_MAX - (uint64_t)d) / base) return -1; /* overflow */
    v = v * base + (uint64_t)d;
  }
  if (is_int) {
    out->kind = PTX_OPND_IMM_INT;
    out->fmt |= (uint8_t)(kind | (upper ? PTX_IMMFMT_UPPER : 0) |
                          (uprefix ? PTX_IMMFMT_UPPREFIX : 0) |
                          (uns ? PTX_IMMFMT_UNSIGNED : 0));
    out->bits = neg ? (uint64_t)0 - v : v;
    return 0;
  }
  /* decimal float: digits, one '.', optional exponent */
  if (len >= sizeof P->numbuf) return -1;
  int seen_dot = 0, seen_exp = 0, digits = 0;
  for (uint32_t i = 0; i < len; i++) {
    char c = s[i];
    if (c >= '0' && c <= '9') digits++;
    else if (c == '.' && !seen_dot && !seen_exp) seen_dot = 1;
    else if ((c == 'e' || c == 'E') && !seen_exp && digits) {
      seen_exp = 1;
      if (i + 1 < len && (s[i + 1] == '+' || s[i + 1] == '-')) i++;
      if (i + 1 >= len) return -1;
    } else return -1;
  }
  if (!digits || (!seen_dot && !seen_exp)) return -1;
  memcpy(P->numbuf, s, len);
  P->numbuf[len] = 0;
  errno = 0;
  double d = strtod(P->numbuf, NULL);
  if (neg) d = -d;
  out->fmt |= PTX_IMMFMT_FDEC;
  if (fctx == 8) {
    out->kind = PTX_OPND_IMM_F64;
    memcpy(&out->bits, &d, 8);
  } else {
    float f = (float)d;
    uint32_t b;
    memcpy(&b, &f, 4);
    out->kind = PTX_OPND_IMM_F32;
    out->bits = b;
  }
  return 0;
}

/* Parse [-]NUMBER at the current token into *out. */
static void parse_imm(parser *P, unsigned fctx, imm *out) {
  int neg = 0;
  ptx_tok start = P->tok;
  if (is_punct(P, '-')) { neg = 1; next(P); }
  if (P->tok.kind != PTX_TK_NUM) {
    char q[200];
    fail(P, "expected a number, found %s", tokq(P, q, sizeof q));
  }
  if (decode_num(P, P->tok.p, P->tok.len, neg, fctx, out) != 0) {
    char q[200];
    quote_tok(&P->tok, q, sizeof q);
    fail_at(P, start.line, start.col, "bad immediate %s%s", neg ? "-" : "", q);
  }
  next(P);
}

/* A non-negative integer (counts, sizes, alignments, dims). */
static uint64_t parse_uint(parser *P, const char *what) {
  imm v;
  if (P->tok.kind != PTX_TK_NUM || decode_num(P, P->tok.p, P->tok.len, 0, 4, &v) ||
      v.kind != PTX_OPND_IMM_INT) {
    char q[200];
    fail(P, "expected %s, found %s", what, tokq(P, q, sizeof q));
  }
  next(P);
  return v.bits;
}

/* ----------------------------------------------------- modifier tables -- */

enum { MK_TYPE, MK_SPACE, MK_CMP, MK_RND, MK_FLAG, MK_AUX, MK_VEC, MK_BOOL,
       MK_SCOPE, MK_LOHI, MK_ATOMOP, MK_SHFL, MK_VOTE, MK_PRMT, MK_UNI,
       MK_LR, MK_RED, MK_TESTP };

typedef struct modifier { const char *name; uint8_t kind; uint32_t val; } modifier;

static const modifier modifiers[] = {
  {"pred", MK_TYPE, PTX_T_PRED},
  {"b8", MK_TYPE, PTX_T_B8}, {"b16", MK_TYPE, PTX_T_B16}, {"b32", MK_TYPE, PTX_T_B32},
  {"b64", MK_TYPE, PTX_T_B64}, {"b128", MK_TYPE, PTX_T_B128},
  {"u8", MK_TYPE, PTX_T_U8}, {"u16", MK_TYPE, PTX_T_U16}, {"u32", MK_TYPE, PTX_T_U32},
  {"u64", MK_TYPE, PTX_T_U64},
  {"s8", MK_TYPE, PTX_T_S8}, {"s16", MK_TYPE, PTX_T_S16}, {"s32", MK_TYPE, PTX_T_S32},
  {"s64", MK_TYPE, PTX_T_S64},
  {"f16", MK_TYPE, PTX_T_F16}, {"f16x2", MK_TYPE, PTX_T_F16X2},
  {"bf16", MK_TYPE, PTX_T_BF16}, {"bf16x2", MK_TYPE, PTX_T_BF16X2},
  {"tf32", MK_TYPE, PTX_T_TF32}, {"f32", MK_TYPE, PTX_T_F32}, {"f64", MK_TYPE, PTX_T_F64},
  {"e4m3x2", MK_TYPE, PTX_T_E4M3X2}, {"e5m2x2", MK_TYPE, PTX_T_E5M2X2},
  {"u16x2", MK_TYPE, PTX_T_U16X2}, {"s16x2", MK_TYPE, PTX_T_S16X2},
  {"global", MK_SPACE, PTX_SP_GLOBAL}, {"shared", MK_SPACE, PTX_SP_SHARED},
  {"shared::cta", MK_SPACE, PTX_SP_SHARED},
  {"shared::cluster", MK_SPACE, PTX_SP_SHARED_CLUSTER},
  {"local", MK_SPACE, PTX_SP_LOCAL}, {"param", MK_SPACE, PTX_SP_PARAM},
  {"param::entry", MK_SPACE, PTX_SP_PARAM}, {"param::func", MK_SPACE, PTX_SP_PARAM},
  {"const", MK_SPACE, PTX_SP_CONST},
  {"eq", MK_CMP, PTX_CMP_EQ}, {"ne", MK_CMP, PTX_CMP_NE}, {"lt", MK_CMP, PTX_CMP_LT},
  {"le", MK_CMP, PTX_CMP_LE}, {"gt", MK_CMP, PTX_CMP_GT}, {"ge", MK_CMP, PTX_CMP_GE},
  {"lo", MK_LOHI, PTX_CMP_LO}, {"ls", MK_LOHI, PTX_CMP_LS},
  {"hi", MK_LOHI, PTX_CMP_HI}, {"hs", MK_LOHI, PTX_CMP_HS},
  {"equ", MK_CMP, PTX_CMP_EQU}, {"neu", MK_CMP, PTX_CMP_NEU},
  {"ltu", MK_CMP, PTX_CMP_LTU}, {"leu", MK_CMP, PTX_CMP_LEU},
  {"gtu", MK_CMP, PTX_CMP_GTU}, {"geu", MK_CMP, PTX_CMP_GEU},
  {"num", MK_CMP, PTX_CMP_NUM}, {"nan", MK_CMP, PTX_CMP_NAN},
  {"rn", MK_RND, PTX_RND_RN}, {"rz", MK_RND, PTX_RND_RZ}, {"rm", MK_RND, PTX_RND_RM},
  {"rp", MK_RND, PTX_RND_RP}, {"rna", MK_RND, PTX_RND_RNA}, {"rs", MK_RND, PTX_RND_RS},
  {"rni", MK_RND, PTX_RND_RNI}, {"rzi", MK_RND, PTX_RND_RZI},
  {"rmi", MK_RND, PTX_RND_RMI}, {"rpi", MK_RND, PTX_RND_RPI},
  {"ftz", MK_FLAG, PTX_F_FTZ}, {"sat", MK_FLAG, PTX_F_SAT},
  {"satfinite", MK_FLAG, PTX_F_SAT}, {"approx", MK_FLAG, PTX_F_APPROX},
  {"full", MK_FLAG, PTX_F_FULL}, {"nc", MK_FLAG, PTX_F_NC},
  {"wide", MK_FLAG, PTX_F_WIDE}, {"volatile", MK_FLAG, PTX_F_VOLATILE},
  {"sync", MK_FLAG, PTX_F_SYNC}, {"aligned", MK_FLAG, PTX_F_ALIGNED},
  {"to", MK_FLAG, PTX_F_TO}, {"cc", MK_FLAG, PTX_F_CC},
  {"shiftamt", MK_FLAG, PTX_F_SHIFTAMT}, {"clamp", MK_FLAG, PTX_F_CLAMP},
  {"wrap", MK_FLAG, PTX_F_WRAP}, {"relu", MK_FLAG, PTX_F_RELU},
  {"NaN", MK_FLAG, PTX_F_NAN}, {"arrive", MK_FLAG, PTX_F_ARRIVE},
  {"noftz", MK_FLAG, PTX_F_NOFTZ}, {"pack", MK_FLAG, PTX_F_PACK},
  {"red", MK_RED, PTX_F_RED},
  {"l", MK_LR, PTX_F_LEFT}, {"r", MK_LR, PTX_F_RIGHT},
  {"v2", MK_VEC, 2}, {"v4", MK_VEC, 4}, {"v8", MK_VEC, 8},
  {"and", MK_BOOL, PTX_AUX_AND}, {"or", MK_BOOL, PTX_AUX_OR}, {"xor", MK_BOOL, PTX_AUX_XOR},
  {"add", MK_ATOMOP, PTX_AUX_ADD}, {"min", MK_ATOMOP, PTX_AUX_MIN},
  {"max", MK_ATOMOP, PTX_AUX_MAX}, {"inc", MK_ATOMOP, PTX_AUX_INC},
  {"dec", MK_ATOMOP, PTX_AUX_DEC}, {"cas", MK_ATOMOP, PTX_AUX_CAS},
  {"exch", MK_ATOMOP, PTX_AUX_EXCH}, {"popc", MK_ATOMOP, PTX_AUX_POPC},
  {"up", MK_SHFL, PTX_AUX_UP}, {"down", MK_SHFL, PTX_AUX_DOWN},
  {"bfly", MK_SHFL, PTX_AUX_BFLY}, {"idx", MK_SHFL, PTX_AUX_IDX},
  {"all", MK_VOTE, PTX_AUX_ALL}, {"any", MK_VOTE, PTX_AUX_ANY},
  {"ballot", MK_VOTE, PTX_AUX_BALLOT}, {"uni", MK_UNI, PTX_AUX_UNIALL},
  {"f4e", MK_PRMT, PTX_AUX_F4E}, {"b4e", MK_PRMT, PTX_AUX_B4E},
  {"rc8", MK_PRMT, PTX_AUX_RC8}, {"ecl", MK_PRMT, PTX_AUX_ECL},
  {"ecr", MK_PRMT, PTX_AUX_ECR}, {"rc16", MK_PRMT, PTX_AUX_RC16},
  {"cta", MK_SCOPE, PTX_AUX_CTA}, {"gl", MK_SCOPE, PTX_AUX_GL},
  {"sys", MK_SCOPE, PTX_AUX_SYS}, {"gpu", MK_SCOPE, PTX_AUX_GPU},
  {"cluster", MK_SCOPE, PTX_AUX_CLUSTER},
  {"finite", MK_TESTP, PTX_AUX_FINITE}, {"infinite", MK_TESTP, PTX_AUX_INFINITE},
  {"number", MK_TESTP, PTX_AUX_NUMBER}, {"notanumber", MK_TESTP, PTX_AUX_NOTANUMBER},
  {"normal", MK_TESTP, PTX_AUX_NORMAL}, {"subnormal", MK_TESTP, PTX_AUX_SUBNORMAL},
};

static const modifier *find_modifier(const char *s, size_t n) {
  for (size_t i = 0; i < sizeof modifiers / sizeof modifiers[0]; i++)
    if (strncmp(modifiers[i].name, s, n) == 0 && modifiers[i].name[n] == 0)
      return &modifiers[i];
  return NULL;
}

static int op_has_atomop(int op) {
  return op == PTX_OP_ATOM || op == PTX_OP_RED || op == PTX_OP_REDUX ||
         op == PTX_OP_BAR || op == PTX_OP_BARRIER || op == PTX_OP_MULTIMEM ||
         op == PTX_OP_CP;
}

/* Two modifiers of one kind where an instruction takes one (.rn.rz,
   .lt.gt, .v2.v4, .global.shared on a load): an error naming both. */
static void conflict(parser *P, const char *what, const char *s, uint32_t len,
                     const modifier *a, const modifier *b) {
  fail(P, "%s %s .%s and .%s in '%.*s'", a == b ? "repeated" : "conflicting", what, a->name,
       b->name, (int)(len < 80 ? len : 80), s);
}

/* Decode the key word at the current token into a template (ke: what the
   operand check needs).  Unknown dot-modifiers stay in the key only; an
   unknown mnemonic is an error, and so are two modifiers of one kind that
   exclude each other. */
static void decode_key(parser *P, const char *s, uint32_t len, ptx_insn *t, key_entry *ke) {
  memset(t, 0, sizeof *t);
  const modifier *rnd = NULL, *cmp = NULL, *vw = NULL, *space = NULL, *boolop = NULL;
  ke->unknown = 0;
  uint32_t d = 0;
  while (d < len && s[d] != '.') d++;
  int op = ptx_op_lookup(s, d);
  if (op < 0) {
    char q[200];
    fail(P, "unknown instruction %s", tokq(P, q, sizeof q));
  }
  t->op = (uint16_t)op;
  t->vec = 1;
  t->guard = -1;
  int ntypes = 0;
  uint8_t types[2] = {0, 0};
  uint32_t i = d;
  while (i < len) {
    uint32_t b = ++i; /* past the dot */
    while (i < len && s[i] != '.') i++;
    if (i == b) {
      char q[200];
      fail(P, "empty modifier in %s", tokq(P, q, sizeof q));
    }
    const modifier *md = find_modifier(s + b, i - b);
    if (!md) {
      ke->unknown = 1;
      continue;
    }
    int setlike = op == PTX_OP_SETP || op == PTX_OP_SET;
    switch (md->kind) {
    case MK_TYPE:
      if (ntypes < 2) types[ntypes] = (uint8_t)md->val;
      ntypes++;
      break;
    case MK_SPACE:
      if (space && (op == PTX_OP_LD || op == PTX_OP_ST || op == PTX_OP_LDU) && space != md)
        conflict(P, "state spaces", s, len, space, md);
      if (!space) space = md;
      if (!t->space) t->space = (uint8_t)md->val;
      break;
    case MK_CMP:
    case MK_LOHI:
      if (md->kind == MK_CMP || setlike) {
        if (cmp && cmp != md) conflict(P, "comparisons", s, len, cmp, md);
        cmp = md;
        t->cmp = (uint8_t)md->val;
      } else if (md->val == PTX_CMP_LO) {
        t->flags |= PTX_F_LO;
      } else if (md->val == PTX_CMP_HI) {
        t->flags |= PTX_F_HI;
      }
      break;
    case MK_RND:
      if (rnd) conflict(P, "rounding modifiers", s, len, rnd, md);
      rnd = md;
      t->rnd = (uint8_t)md->val;
      break;
    case MK_FLAG: t->flags |= md->val; break;
    case MK_RED:
      if (op == PTX_OP_BAR || op == PTX_OP_BARRIER) t->flags |= PTX_F_RED;
      break;
    case MK_LR: if (op == PTX_OP_SHF) t->flags |= md->val; break;
    case MK_VEC:
      if (vw && vw != md) conflict(P, "vector widths", s, len, vw, md);
      vw = md;
      t->vec = (uint8_t)md->val;
      break;
    case MK_BOOL:
      if (setlike) {
        if (boolop && boolop != md) conflict(P, "boolean operations", s, len, boolop, md);
        boolop = md;
        t->boolop = (uint8_t)md->val;
      } else if (op_has_atomop(op)) {
        t->aux = (uint8_t)md->val;
      }
      break;
    case MK_ATOMOP: if (op_has_atomop(op)) t->aux = (uint8_t)md->val; break;
    case MK_SHFL: if (op == PTX_OP_SHFL) t->aux = (uint8_t)md->val; break;
    case MK_VOTE:
      if (op == PTX_OP_VOTE || op == PTX_OP_MATCH) t->aux = (uint8_t)md->val;
      break;
    case MK_UNI:
      if (op == PTX_OP_VOTE) t->aux = PTX_AUX_UNIALL;
      else t->flags |= PTX_F_UNI;
      break;
    case MK_PRMT: if (op == PTX_OP_PRMT) t->aux = (uint8_t)md->val; break;
    case MK_SCOPE:
      if (op == PTX_OP_MEMBAR || op == PTX_OP_FENCE) t->aux = (uint8_t)md->val;
      break;
    case MK_TESTP: if (op == PTX_OP_TESTP) t->aux = (uint8_t)md->val; break;
    default: break;
    }
  }
  ke->ntypes = (uint8_t)(ntypes < 255 ? ntypes : 255);
  if (op == PTX_OP_SETP) {
    t->type = PTX_T_PRED;
    t->type2 = types[0];
  } else {
    t->type = types[0];
    t->type2 = ntypes >= 2 ? types[1] : 0;
  }
  uint32_t of = ptx_op_info_table[op].flags;
  if (!t->space && (((of & (PTX_OPF_LOAD | PTX_OPF_STORE)) && !(of & PTX_OPF_TEX)) ||
                    op == PTX_OP_PREFETCH || op == PTX_OP_PREFETCHU))
    t->space = PTX_SP_GENERIC;
}

/* Key index of the mnemonic at the current token (interned, decoded once). */
static uint32_t intern_key(parser *P) {
  const ptx_tok *t = &P->tok;
  smap_slot *e = smap_find(&P->kmap, t->p, t->len, t->hash);
  if (e && e->s) return (uint32_t)e->val;
  key_entry ke;
  memset(&ke, 0, sizeof ke);
  decode_key(P, t->p, t->len, &ke.tmpl, &ke);
  const char *s = astr(P, t->p, t->len);
  e = smap_put(P, &P->kmap, s, t->len, t->hash);
  uint32_t k = P->keys.n;
  *VPUSH(P, P->keys, const char *) = s;
  *VPUSH(P, P->ktmpl, key_entry) = ke;
  e->val = (int32_t)k;
  return k;
}

/* ------------------------------------------------------ function scope -- */

static void bind(parser *P, const char *s, uint32_t len, uint32_t hash, uint32_t kind,
                 uint32_t idx, uint32_t line, uint32_t col) {
  smap_slot *e = smap_put(P, &P->fsyms, s, len, hash);
  uint32_t mark = P->scopes.n ? VAT(P->scopes, uint32_t, P->scopes.n - 1) : 0;
  if (e->val >= 0 && (uint32_t)e->val >= mark)
    fail_at(P, line, col, "'%.*s' is already declared in this scope", (int)len, s);
  binding *b = VPUSH(P, P->binds, binding);
  b->s = s; b->len = len; b->hash = hash;
  b->prev = e->val;
  b->kind = kind;
  b->idx = idx;
  e->val = (int32_t)(P->binds.n - 1);
}

static void scope_push(parser *P) {
  *VPUSH(P, P->scopes, uint32_t) = P->binds.n;
}

static void scope_pop(parser *P) {
  uint32_t mark = VAT(P->scopes, uint32_t, P->scopes.n - 1);
  P->scopes.n--;
  while (P->binds.n > mark) {
    binding *b = &VAT(P->binds, binding, P->binds.n - 1);
    smap_slot *e = smap_find(&P->fsyms, b->s, b->len, b->hash);
    if (e && e->s) e->val = b->prev;
    P->binds.n--;
  }
}

static const binding *lookup_local(const parser *P, const ptx_tok *t) {
  int32_t v = smap_get(&P->fsyms, t->p, t->len, t->hash);
  return v >= 0 ? &VAT(P->binds, binding, v) : NULL;
}

static uint32_t label_ref(parser *P, const ptx_tok *t, int define) {
  smap_slot *e = smap_find(&P->lmap, t->p, t->len, t->hash);
  if (!e || !e->s) {
    const char *s = astr(P, t->p, t->len);
    e = smap_put(P, &P->lmap, s, t->len, t->hash);
    e->val = (int32_t)P->labels.n;
    ptx_label *l = VPUSH(P, P->labels, ptx_label);
    l->name = s;
    l->insn = UINT32_MAX;
    l->ntargets = 0;
    l->targets = NULL;
    label_use *u = VPUSH(P, P->luse, label_use);
    u->line = t->line;
    u->col = t->col;
  }
  uint32_t li = (uint32_t)e->val;
  if (define) {
    ptx_label *l = &VAT(P->labels, ptx_label, li);
    if (l->insn != UINT32_MAX)
      fail_at(P, t->line, t->col, "duplicate label '%.*s'", (int)t->len, t->p);
    l->insn = P->insns.n;
  }
  return li;
}

/* ------------------------------------------------------------- operands -- */

static ptx_operand *new_opnd(parser *P) {
  ptx_operand *o = VPUSH(P, P->opnds, ptx_operand);
  memset(o, 0, sizeof *o);
  return o;
}

static int is_sink(const ptx_tok *t) {
  return t->kind == PTX_TK_WORD && t->len == 1 && t->p[0] == '_';
}

/* Resolve a name operand into o (not for branch targets). */
static void resolve_name(parser *P, ptx_operand *o, int op) {
  const ptx_tok *t = &P->tok;
  const binding *b = lookup_local(P, t);
  if (b) {
    if (b->kind == B_REG) { o->kind = PTX_OPND_REG; o->u.reg = b->idx; }
    else { o->kind = PTX_OPND_SYM; o->u.sym = b->idx; o->sym_local = 1; }
    return;
  }
  if (t->p[0] == '%') {
    int sr = ptx_sreg_lookup(t->p, t->len);
    if (sr >= 0) { o->kind = PTX_OPND_SREG; o->u.sreg = (uint32_t)sr; return; }
    fail(P, "undeclared register '%.*s'", (int)(t->len < 80 ? t->len : 80), t->p);
  }
  int32_t v = smap_get(&P->msyms, t->p, t->len, t->hash);
  if (v >= 0) {
    if ((v & 1) == MS_FUNC) { o->kind = PTX_OPND_FUNC; o->u.func = (uint32_t)v >> 1; }
    else { o->kind = PTX_OPND_SYM; o->u.sym = (uint32_t)v >> 1; }
    return;
  }
  if (op == PTX_OP_CALL || op == PTX_OP_BRX) {
    int32_t l = smap_get(&P->lmap, t->p, t->len, t->hash);
    if (l >= 0 || op == PTX_OP_BRX) {
      o->kind = PTX_OPND_LABEL;
      o->u.label = label_ref(P, t, 0);
      return;
    }
  }
  if (t->len == 7 && memcmp(t->p, "WARP_SZ", 7) == 0) {
    o->kind = PTX_OPND_IMM_INT;
    o->u.i = 32;
    return;
  }
  fail(P, "unknown symbol '%.*s'", (int)(t->len < 80 ? t->len : 80), t->p);
}

static void set_imm(ptx_operand *o, const imm *v) {
  o->kind = v->kind;
  o->fmt = v->fmt;
  if (v->kind == PTX_OPND_IMM_INT) o->u.i = (int64_t)v->bits;
  else if (v->kind == PTX_OPND_IMM_F32) o->u.f32bits = (uint32_t)v->bits;
  else o->u.f64bits = v->bits;
}

static void parse_simple(parser *P, const ptx_insn *I, unsigned fctx);

/* {a, b, ...} or (a, b, ...): header plus elements. */
static void parse_group(parser *P, const ptx_insn *I, unsigned fctx, char close, int kind) {
  uint32_t hi = P->opnds.n;
  new_opnd(P)->kind = (uint8_t)kind;
  next(P);
  uint32_t n = 0;
  if (!is_punct(P, close)) {
    for (;;) {
      parse_simple(P, I, fctx);
      n++;
      if (is_punct(P, ',')) { next(P); continue; }
      break;
    }
  }
  if (!is_punct(P, close)) {
    char q[200];
    fail(P, "expected ',' or '%c' in operand list, found %s", close, tokq(P, q, sizeof q));
  }
  next(P);
  VAT(P->opnds, ptx_operand, hi).n = n;
}

/* [base], [base+off], [base+-off], [base-off], [imm], [a, {coords}] */
static void parse_addr(parser *P, const ptx_insn *I) {
  uint32_t ai = P->opnds.n;
  ptx_operand *o = new_opnd(P);
  o->kind = PTX_OPND_ADDR;
  next(P);
  if (P->tok.kind == PTX_TK_WORD && P->tok.c != '.') {
    ptx_operand tmp;
    memset(&tmp, 0, sizeof tmp);
    resolve_name(P, &tmp, I->op);
    o = &VAT(P->opnds, ptx_operand, ai);
    if (tmp.kind == PTX_OPND_REG) {
      o->u.addr.base_kind = PTX_OPND_REG;
      o->u.addr.base = tmp.u.reg;
    } else if (tmp.kind == PTX_OPND_SYM) {
      o->u.addr.base_kind = PTX_OPND_SYM;
      o->u.addr.base = tmp.u.sym;
      o->u.addr.sym_local = tmp.sym_local;
      o->sym_local = tmp.sym_local;
    } else {
      fail(P, "'%.*s' cannot be used as an address", (int)(P->tok.len < 80 ? P->tok.len : 80),
           P->tok.p);
    }
    next(P);
    if (is_punct(P, '+') || is_punct(P, '-')) {
      int minus = P->tok.c == '-';
      next(P);
      imm v;
      if (minus && is_punct(P, '-')) {
        char q[200];
        fail(P, "bad address offset %s", tokq(P, q, sizeof q));
      }
      parse_imm(P, 8, &v);
      if (v.kind != PTX_OPND_IMM_INT) fail(P, "address offset must be an integer");
      o = &VAT(P->opnds, ptx_operand, ai);
      o->fmt = PTX_ADDRFMT_OFFSET | (minus ? PTX_ADDRFMT_MINUS : 0);
      o->u.addr.offset = minus ? (int64_t)((uint64_t)0 - v.bits) : (int64_t)v.bits;
    }
  } else if (P->tok.kind == PTX_TK_NUM) {
    imm v;
    parse_imm(P, 8, &v);
    if (v.kind != PTX_OPND_IMM_INT) fail(P, "address must be an integer");
    o = &VAT(P->opnds, ptx_operand, ai);
    o->u.addr.base_kind = PTX_OPND_IMM_INT;
    o->u.addr.offset = (int64_t)v.bits;
  } else {
    char q[200];
    fail(P, "expected an address, found %s", tokq(P, q, sizeof q));
  }
  if (is_punct(P, ',')) {
    /* texture/surface coordinates inside the brackets */
    next(P);
    if (!is_punct(P, '{')) {
      char q[200];
      fail(P, "expected '{' after ',' in address, found %s", tokq(P, q, sizeof q));
    }
    uint32_t hi = P->opnds.n;
    parse_group(P, I, 4, '}', PTX_OPND_VEC);
    /* flatten: the VEC header is dropped, its elements become the ADDR's */
    uint32_t n = VAT(P->opnds, ptx_operand, hi).n;
    memmove(&VAT(P->opnds, ptx_operand, hi), &VAT(P->opnds, ptx_operand, hi + 1),
            (size_t)n * sizeof(ptx_operand));
    P->opnds.n--;
    VAT(P->opnds, ptx_operand, ai).n = n;
  }
  expect(P, ']');
}

/* One operand that is not a group: reg, !pred, sreg, sym, imm, addr, sink. */
static void parse_simple(parser *P, const ptx_insn *I, unsigned fctx) {
  const ptx_tok *t = &P->tok;
  if (t->kind == PTX_TK_WORD && t->c != '.') {
    ptx_operand *o = new_opnd(P);
    if (is_sink(t)) o->kind = PTX_OPND_SINK;
    else resolve_name(P, o, I->op);
    next(P);
    return;
  }
  if (t->kind == PTX_TK_NUM || is_punct(P, '-')) {
    imm v;
    parse_imm(P, fctx, &v);
    set_imm(new_opnd(P), &v);
    return;
  }
  if (is_punct(P, '!')) {
    next(P);
    if (t->kind != PTX_TK_WORD) {
      char q[200];
      fail(P, "expected a predicate after '!', found %s", tokq(P, q, sizeof q));
    }
    ptx_operand *o = new_opnd(P);
    resolve_name(P, o, I->op);
    if (o->kind != PTX_OPND_REG) fail(P, "'!' applies to a predicate register only");
    o->neg = 1;
    next(P);
    return;
  }
  if (is_punct(P, '[')) { parse_addr(P, I); return; }
  char q[200];
  fail(P, "expected an operand, found %s", tokq(P, q, sizeof q));
}

/* ------------------------------------------------------- operand types -- */

enum { TK_NONE, TK_PRED, TK_B, TK_U, TK_S, TK_F };

static int type_kind(unsigned t) {
  if (t == PTX_T_PRED) return TK_PRED;
  if (t >= PTX_T_B8 && t <= PTX_T_B128) return TK_B;
  if (t >= PTX_T_U8 && t <= PTX_T_U64) return TK_U;
  if (t >= PTX_T_S8 && t <= PTX_T_S64) return TK_S;
  /* integer pairs: any 32-bit integer or bit-size register holds one */
  if (t == PTX_T_U16X2 || t == PTX_T_S16X2) return TK_B;
  if (t >= PTX_T_F16 && t < PTX_T_COUNT) return TK_F;
  return TK_NONE;
}

/*
 * Does a register of type rt agree with the instruction type it (PTX ISA,
 * "Operand Type Information")?  Bit-size types agree with any type of
 * their size, signed and unsigned integers of one size with each other,
 * floating-point types only with their own size; a predicate only with a
 * predicate.  relaxed: the data operands of ld, st and cvt may be wider
 * than the instruction type (a bit-size or integer register with any
 * bit-size or integer type, a float register with a narrower bit-size
 * type).  An unknown type agrees with everything.
 */
static int type_agrees(unsigned it, unsigned rt, int relaxed) {
  int ik = type_kind(it), rk = type_kind(rt);
  if (ik == TK_NONE || rk == TK_NONE) return 1;
  if (ik == TK_PRED || rk == TK_PRED) return ik == rk;
  unsigned is = ptx_type_size((ptx_type)it), rs = ptx_type_size((ptx_type)rt);
  if (relaxed ? rs < is : rs != is) return 0;
  if (ik == TK_B || rk == TK_B) return 1;
  if (ik == TK_F || rk == TK_F) return ik == rk && rs == is;
  return 1;
}

/* The double-width type of mul.wide / mad.wide's results (NONE: unknown). */
static unsigned wide_of(unsigned t) {
  switch (t) {
    case PTX_T_U16: return PTX_T_U32;
    case PTX_T_U32: return PTX_T_U64;
    case PTX_T_S16: return PTX_T_S32;
    case PTX_T_S32: return PTX_T_S64;
    default: return PTX_T_NONE;
  }
}

/* A scalar type cvt's rounding rules are about: 1 integer, 2 float, 0
   another (bit-size, packed, tf32, and bf16, whose rules are irregular:
   left alone). */
static int cvt_class(unsigned t) {
  int k = type_kind(t);
  if (k == TK_U || k == TK_S) return 1;
  if (t == PTX_T_F16 || t == PTX_T_F32 || t == PTX_T_F64) return 2;
  return 0;
}

/* cvt's rounding, as ptxas demands it: none between integers and for a
   wider float; a float rounding (.rn .rz .rm .rp) into a float from an
   integer; an integer rounding (.rni .rzi .rmi .rpi) from a float to an
   integer, optional between floats of one type; some rounding into a
   narrower float.  (ptxas also refuses some roundings this lets through,
   such as .rna or .rni into a narrower float: a rule left to it.) */
static void check_cvt_rounding(parser *P, const ptx_insn *I, const char *key) {
  int dc = cvt_class(I->type), sc = cvt_class(I->type2);
  if (!dc || !sc) return;
  unsigned ds = ptx_type_size((ptx_type)I->type), ss = ptx_type_size((ptx_type)I->type2);
  int r = I->rnd, fr = r == PTX_RND_RN || r == PTX_RND_RZ || r == PTX_RND_RM || r == PTX_RND_RP ||
                       r == PTX_RND_RNA || r == PTX_RND_RS;
  int ir = r == PTX_RND_RNI || r == PTX_RND_RZI || r == PTX_RND_RMI || r == PTX_RND_RPI;
  const char *need = NULL; /* what is required, or NULL when r is allowed */
  int none_ok = 0;
  if (dc == 1 && sc == 1) none_ok = 1, need = r ? "no rounding modifier" : NULL;
  else if (dc == 2 && sc == 1) need = fr ? NULL : "a rounding modifier .rn, .rz, .rm or .rp";
  else if (dc == 1 && sc == 2) need = ir ? NULL : "a rounding modifier .rni, .rzi, .rmi or .rpi";
  else if (I->type == I->type2) none_ok = 1, need = !r || ir ? NULL : "no rounding, or .rni, .rzi, .rmi or .rpi";
  else if (ds < ss || (ds == ss && I->type != I->type2))
    need = r ? NULL : "a rounding modifier .rn, .rz, .rm or .rp";
  else none_ok = 1, need = r ? "no rounding modifier (the conversion is exact)" : NULL;
  if (!need) return;
  fail_at(P, I->line, I->col, "'%s' %s %s", key, r || none_ok ? "takes" : "needs", need);
}

/* Where each top-level operand of the instruction being parsed starts: in
   the text, and in the operand scratch vector. */
typedef struct opnd_pos { uint32_t line, col, idx; } opnd_pos;
/* Operands checked at most (no checked instruction has more). */
#define OPND_POS_MAX 16

/* Operand j (its register, or each register of a vector) must agree with
   type t; the error names the register, both types and the place. */
static void want_type(parser *P, uint32_t ii, const opnd_pos *pos, unsigned j, unsigned t,
                      int relaxed, const char *key) {
  if (j >= OPND_POS_MAX || j >= VAT(P->insns, ptx_insn, ii).nopnd || t == PTX_T_NONE) return;
  const ptx_operand *o = &VAT(P->opnds, ptx_operand, pos[j].idx);
  /* a vector's elements follow it (ld/st data only; a mov packs) */
  unsigned count = o->kind == PTX_OPND_VEC && relaxed ? o->n : 1;
  const ptx_operand *first = o->kind == PTX_OPND_VEC && relaxed ? o + 1 : o;
  for (unsigned e = 0; e < count; e++) {
    const ptx_operand *r = first + e;
    if (r->kind != PTX_OPND_REG) continue;
    const ptx_reg *rg = &VAT(P->regs, ptx_reg, r->u.reg);
    if (rg->type == t || rg->vec > 1 || type_agrees(t, rg->type, relaxed)) continue;
    /* ptxas lets a vector of floats load into integers of their size */
    int ik = type_kind(t), rk = type_kind(rg->type);
    if (first != o && ik == TK_F && (rk == TK_U || rk == TK_S) &&
        ptx_type_size((ptx_type)t) == ptx_type_size((ptx_type)rg->type))
      continue;
    fail_at(P, pos[j].line, pos[j].col,
            "operand %u of '%s': register '%s' is .%s, which does not agree with .%s%s", j + 1,
            key, rg->name, ptx_type_name((ptx_type)rg->type), ptx_type_name((ptx_type)t),
            relaxed ? " (a load, store or conversion may use a wider register, never a "
                      "narrower one)"
                    : "");
  }
}

/*
 * Check the register operands of instruction ii against its types, as
 * ptxas does, for the instructions whose operand types follow from their
 * modifiers alone: arithmetic, logic, moves, comparisons and selects, and
 * the data of loads, stores and conversions.  Anything else (and any key
 * with a modifier the decoder does not know) is left alone.
 */
static void check_operand_types(parser *P, uint32_t ii, const key_entry *ke,
                                const opnd_pos *pos) {
  const ptx_insn *I = &VAT(P->insns, ptx_insn, ii);
  if (ke->unknown) return;
  const char *key = VAT(P->keys, const char *, I->key);
  unsigned t = I->type, n = I->nopnd;
  switch (I->op) {
    case PTX_OP_LD: case PTX_OP_LDU:
      if (ke->ntypes == 1) want_type(P, ii, pos, 0, t, 1, key);
      return;
    case PTX_OP_ST:
      if (ke->ntypes == 1) want_type(P, ii, pos, 1, t, 1, key);
      return;
    case PTX_OP_CVT:
      if (ke->ntypes != 2) return;
      check_cvt_rounding(P, I, key);
      want_type(P, ii, pos, 0, t, 1, key);
      for (unsigned j = 1; j < n; j++) want_type(P, ii, pos, j, I->type2, 1, key);
      return;
    case PTX_OP_SETP: {
      /* d[|p], a, b[, c]: a and b of the comparison type, the rest predicates */
      unsigned src = 0;
      for (unsigned j = 0; j < n; j++) {
        const ptx_operand *o = &VAT(P->opnds, ptx_operand, pos[j].idx);
        int is_src = j > 0 && !o->pipe && src < 2;
        if (is_src) src++;
        want_type(P, ii, pos, j, is_src ? I->type2 : PTX_T_PRED, 0, key);
      }
      return;
    }
    case PTX_OP_SELP:
      if (ke->ntypes != 1) return;
      for (unsigned j = 0; j < n; j++) want_type(P, ii, pos, j, j == 3 ? PTX_T_PRED : t, 0, key);
      return;
    case PTX_OP_TESTP:
      if (ke->ntypes != 1) return;
      want_type(P, ii, pos, 0, PTX_T_PRED, 0, key);
      want_type(P, ii, pos, 1, t, 0, key);
      return;
    case PTX_OP_MUL: case PTX_OP_MAD:
      if (ke->ntypes != 1) return;
      for (unsigned j = 0; j < n; j++) {
        int wide = (I->flags & PTX_F_WIDE) && (j == 0 || j == 3);
        want_type(P, ii, pos, j, wide ? wide_of(t) : t, 0, key);
      }
      return;
    case PTX_OP_SHL: case PTX_OP_SHR:
      if (ke->ntypes != 1) return;
      for (unsigned j = 0; j < n; j++) want_type(P, ii, pos, j, j == 2 ? PTX_T_U32 : t, 0, key);
      return;
    case PTX_OP_POPC: case PTX_OP_CLZ: case PTX_OP_BFIND:
      if (ke->ntypes != 1) return;
      want_type(P, ii, pos, 0, PTX_T_U32, 0, key);
      want_type(P, ii, pos, 1, t, 0, key);
      return;
    case PTX_OP_BFE: case PTX_OP_BFI: {
      if (ke->ntypes != 1) return;
      unsigned first_u32 = I->op == PTX_OP_BFE ? 2 : 3;
      for (unsigned j = 0; j < n; j++) want_type(P, ii, pos, j, j >= first_u32 ? PTX_T_U32 : t, 0, key);
      return;
    }
    case PTX_OP_ADD: case PTX_OP_ADDC: case PTX_OP_SUB: case PTX_OP_SUBC: case PTX_OP_MUL24:
    case PTX_OP_MAD24: case PTX_OP_MADC: case PTX_OP_SAD: case PTX_OP_DIV: case PTX_OP_REM:
    case PTX_OP_ABS: case PTX_OP_NEG: case PTX_OP_MIN: case PTX_OP_MAX: case PTX_OP_FMA:
    case PTX_OP_AND: case PTX_OP_OR: case PTX_OP_XOR: case PTX_OP_NOT: case PTX_OP_CNOT:
    case PTX_OP_BREV: case PTX_OP_COPYSIGN: case PTX_OP_SQRT: case PTX_OP_RSQRT:
    case PTX_OP_RCP: case PTX_OP_SIN: case PTX_OP_COS: case PTX_OP_LG2: case PTX_OP_EX2:
    case PTX_OP_TANH: case PTX_OP_MOV:
      if (ke->ntypes > 1)
        fail_at(P, I->line, I->col, "'%s' takes one type modifier, found %u", key, ke->ntypes);
      for (unsigned j = 0; j < n; j++) want_type(P, ii, pos, j, t, 0, key);
      return;
    default:
      return;
  }
}

/* .loc FILE LINE COL[, ...] (the current token is .loc): the line the
   following instructions come from.  Anything else on the line (inlined_at,
   function_name) is skipped; a malformed .loc is ignored, as the
   directive says nothing the emulator needs. */
static void parse_loc(parser *P) {
  const char *p = P->L.pos, *e = memchr(p, '\n', (size_t)(P->L.end - p));
  if (!e) e = P->L.end;
  char line[96];
  size_t n = (size_t)(e - p) < sizeof line - 1 ? (size_t)(e - p) : sizeof line - 1;
  memcpy(line, p, n);
  line[n] = 0;
  unsigned long f = 0, l = 0;
  char *q;
  f = strtoul(line, &q, 10);
  if (q != line) {
    char *r;
    l = strtoul(q, &r, 10);
    if (r != q && f < 65536 && l < UINT32_MAX) P->loc_file = (uint32_t)f, P->loc_line = (uint32_t)l;
  }
  ptx_lex_skip_line(&P->L);
  next(P);
}

/* .file N "NAME"[, TIMESTAMP, SIZE] (the current token is .file). */
static void parse_file(parser *P) {
  const char *p = P->L.pos, *e = memchr(p, '\n', (size_t)(P->L.end - p));
  if (!e) e = P->L.end;
  while (p < e && (*p == ' ' || *p == '\t')) p++;
  unsigned long f = 0;
  const char *d = p;
  while (p < e && *p >= '0' && *p <= '9' && f < 65536) f = f * 10 + (unsigned long)(*p++ - '0');
  while (p < e && (*p == ' ' || *p == '\t')) p++;
  if (p > d && p < e && *p == '"' && f < 65536) {
    const char *s = ++p;
    char name[4096];
    size_t n = 0;
    while (p < e && *p != '"' && n + 1 < sizeof name) {
      if (*p == '\\' && p + 1 < e) p++;
      name[n++] = *p++;
    }
    if (p < e && *p == '"' && p > s - 1) {
      while (P->files.n <= f) *VPUSH(P, P->files, const char *) = NULL;
      VAT(P->files, const char *, f) = ptx_arena_strndup(P->A, name, n);
    }
  }
  ptx_lex_skip_line(&P->L);
  next(P);
}

static void parse_insn(parser *P, int32_t guard, int guard_neg) {
  uint32_t line = P->tok.line, col = P->tok.col;
  ptx_tok mn = P->tok;
  uint32_t k = intern_key(P);
  uint32_t ii = P->insns.n;
  ptx_insn *I = VPUSH(P, P->insns, ptx_insn);
  *I = VAT(P->ktmpl, key_entry, k).tmpl;
  I->key = k;
  I->guard = guard;
  I->guard_neg = (uint8_t)guard_neg;
  I->line = line;
  I->col = col;
  I->src_line = P->loc_line;
  I->src_file = P->loc_file;
  I->opnd = P->opnds.n;
  ptx_insn tmpl = *I; /* stable copy: I may move only if insns grows (it won't) */
  int op = tmpl.op;
  unsigned fctx = ptx_type_size((ptx_type)(op == PTX_OP_SETP || op == PTX_OP_SET
                                               ? (tmpl.type2 ? tmpl.type2 : tmpl.type)
                                               : tmpl.type));
  next(P);
  unsigned nopnd = 0, ncount = 0;
  if (!is_punct(P, ';') && ptx_op_info_table[op].max_opnds == 0) {
    char q[200];
    fail(P, "expected ';' after '%.*s', found %s", (int)(mn.len < 80 ? mn.len : 80), mn.p,
         tokq(P, q, sizeof q));
  }
  opnd_pos pos[OPND_POS_MAX];
  if (!is_punct(P, ';')) {
    int pipe = 0;
    for (;;) {
      uint32_t oi = P->opnds.n;
      const ptx_tok *t = &P->tok;
      if (nopnd < OPND_POS_MAX) pos[nopnd] = (opnd_pos){t->line, t->col, oi};
      if (op == PTX_OP_BRA && t->kind == PTX_TK_WORD && t->c != '.' &&
          !lookup_local(P, t)) {
        ptx_operand *o = new_opnd(P);
        o->kind = PTX_OPND_LABEL;
        o->u.label = label_ref(P, t, 0);
        next(P);
      } else if (is_punct(P, '{')) {
        parse_group(P, &tmpl, fctx, '}', PTX_OPND_VEC);
      } else if (is_punct(P, '(')) {
        parse_group(P, &tmpl, fctx, ')', PTX_OPND_LIST);
      } else {
        parse_simple(P, &tmpl, fctx);
      }
      VAT(P->opnds, ptx_operand, oi).pipe = (uint8_t)pipe;
      nopnd++;
      if (!pipe) ncount++;
      if (nopnd > 255) fail(P, "too many operands");
      pipe = 0;
      if (is_punct(P, ',')) { next(P); continue; }
      if (is_punct(P, '|')) { pipe = 1; next(P); continue; }
      break;
    }
  }
  if (!is_punct(P, ';')) {
    char q[200];
    fail(P, "expected ',' or ';' after operand, found %s", tokq(P, q, sizeof q));
  }
  const ptx_op_info *info = &ptx_op_info_table[op];
  if ((int)ncount < info->min_opnds || (info->max_opnds >= 0 && (int)ncount > info->max_opnds)) {
    char range[32];
    if (info->min_opnds == info->max_opnds) snprintf(range, sizeof range, "%d", info->min_opnds);
    else if (info->max_opnds < 0) snprintf(range, sizeof range, "at least %d", info->min_opnds);
    else snprintf(range, sizeof range, "%d to %d", info->min_opnds, info->max_opnds);
    fail_at(P, line, col, "'%.*s' takes %s operand%s, found %u", (int)(mn.len < 80 ? mn.len : 80),
            mn.p, range, info->max_opnds == 1 ? "" : "s", ncount);
  }
  VAT(P->insns, ptx_insn, ii).nopnd = (uint8_t)nopnd;
  check_operand_types(P, ii, &VAT(P->ktmpl, key_entry, k), pos);
  next(P);
}

/* ------------------------------------------------------- declarations -- */

/* Attributes collected from the dot-words of a declaration. */
typedef struct decl {
  uint8_t space, type, vec, is_ptr, ptr_space, is_extern, is_visible, is_weak;
  uint8_t skip;     /* .texref/.surfref/.samplerref */
  uint32_t align;
} decl;

/* Walk the parts of dot-words (".ptr.global.align") until a non-dot token. */
static void parse_decl_attrs(parser *P, decl *d) {
  while (P->tok.kind == PTX_TK_WORD && P->tok.c == '.') {
    const char *s = P->tok.p;
    uint32_t len = P->tok.len, i = 0;
    int want_align = 0;
    while (i < len) {
      uint32_t b = ++i;
      while (i < len && s[i] != '.') i++;
      const char *w = s + b;
      uint32_t n = i - b;
#define IS(lit) (n == sizeof(lit) - 1 && memcmp(w, lit, n) == 0)
      if (IS("align")) want_align = 1;
      else if (IS("ptr")) d->is_ptr = 1;
      else if (IS("texref") || IS("surfref") || IS("samplerref")) d->skip = 1;
      else if (IS("attribute")) {
        /* .attribute(.managed): parenthesised, skipped */
        next(P);
        if (!is_punct(P, '(')) fail(P, "expected '(' after .attribute");
        while (!is_punct(P, ')')) {
          if (P->tok.kind == PTX_TK_EOF) fail(P, "unexpected end of file in .attribute");
          next(P);
        }
        goto next_word;
      } else if (IS("unified")) {
        /* .unified(uuid1, uuid2) */
        next(P);
        if (is_punct(P, '('))
          while (!is_punct(P, ')')) {
            if (P->tok.kind == PTX_TK_EOF) fail(P, "unexpected end of file in .unified");
            next(P);
          }
        goto next_word;
      } else {
        const modifier *md = find_modifier(w, n);
        if (md && md->kind == MK_TYPE) d->type = (uint8_t)md->val;
        else if (md && md->kind == MK_VEC) d->vec = (uint8_t)md->val;
        else if (md && md->kind == MK_SPACE && d->is_ptr) d->ptr_space = (uint8_t)md->val;
        else if (md && md->kind == MK_SPACE && !d->space) d->space = (uint8_t)md->val;
        else {
          char q[200];
          fail(P, "unknown declaration attribute '.%.*s' in %s", (int)n, w, tokq(P, q, sizeof q));
        }
      }
#undef IS
    }
    next(P);
    if (want_align) {
      uint64_t a = parse_uint(P, "an alignment");
      if (a == 0 || a > (1u << 30) || (a & (a - 1))) fail(P, "bad alignment %llu", (unsigned long long)a);
      d->align = (uint32_t)a;
    }
    continue;
  next_word:
    next(P);
  }
}

/* -------------------------------------------------------- initialisers -- */

#define MAX_DIMS 8
#define MAX_INIT_BYTES (256ull << 20) /* one initialised variable */
#define MAX_INIT_TOTAL (512ull << 20) /* all of a module's */
#define MAX_REGS (1u << 22)           /* register slots per module */

typedef struct initctx {
  uint8_t *buf;         /* image (sized) or NULL when unsized (P->initbuf) */
  uint64_t size;        /* bytes available; UINT64_MAX when unsized */
  uint64_t extent;      /* highest byte written + 1 */
  unsigned tsize;       /* bytes of one scalar */
  uint8_t type;
  int ndims;
  uint64_t stride[MAX_DIMS + 1]; /* bytes per element at each nesting level */
  const char *name;
} initctx;

static uint8_t *init_slot(parser *P, initctx *ic, uint64_t off, uint32_t line, uint32_t col) {
  uint64_t endb = off + ic->tsize;
  if (endb > ic->size || endb > MAX_INIT_BYTES)
    fail_at(P, line, col, "too many initialisers for '%s'", ic->name);
  if (endb > ic->extent) ic->extent = endb;
  if (ic->buf) return ic->buf + off;
  vec *v = &P->initbuf;
  if (endb > v->cap) {
    uint64_t nc = v->cap ? v->cap : 4096;
    while (nc < endb) nc *= 2;
    uint8_t *na = realloc(v->a, nc);
    if (!na) oom(P);
    memset(na + v->cap, 0, nc - v->cap);
    v->a = na;
    v->cap = (uint32_t)nc;
  }
  return (uint8_t *)v->a + off;
}

static void init_leaf(parser *P, initctx *ic, uint64_t off) {
  uint32_t line = P->tok.line, col = P->tok.col;
  int generic = 0;
  if (tok_is(P, "generic") || tok_is(P, "cvta")) {
    /* generic(sym) */
    next(P);
    expect(P, '(');
    generic = 1;
  }
  if (P->tok.kind == PTX_TK_WORD && P->tok.c != '.') {
    int32_t v = smap_get(&P->msyms, P->tok.p, P->tok.len, P->tok.hash);
    if (v < 0) fail(P, "unknown symbol '%.*s' in initialiser", (int)(P->tok.len < 80 ? P->tok.len : 80), P->tok.p);
    next(P);
    if (generic) expect(P, ')');
    int64_t addend = 0;
    if (is_punct(P, '+') || is_punct(P, '-')) {
      int minus = P->tok.c == '-';
      next(P);
      imm a;
      parse_imm(P, 8, &a);
      if (a.kind != PTX_OPND_IMM_INT) fail(P, "symbol offset must be an integer");
      addend = minus ? (int64_t)((uint64_t)0 - a.bits) : (int64_t)a.bits;
    }
    if (ic->tsize < 4) fail_at(P, line, col, "symbol address does not fit a %u-byte element", ic->tsize);
    (void)init_slot(P, ic, off, line, col);
    struct ptx_reloc *r = VPUSH(P, P->relocs, struct ptx_reloc);
    memset(r, 0, sizeof *r);
    r->offset = off;
    r->sym = (uint32_t)v >> 1;
    r->is_func = (v & 1) == MS_FUNC;
    r->generic = (uint8_t)generic;
    r->addend = addend;
    return;
  }
  if (generic) fail(P, "expected a symbol in generic()");
  imm v;
  unsigned fsz = ic->type == PTX_T_F64 ? 8 : 4;
  parse_imm(P, fsz, &v);
  uint64_t bits = v.bits;
  if (ic->type == PTX_T_F32) {
    float f;
    if (v.kind == PTX_OPND_IMM_INT) f = (float)(int64_t)v.bits;
    else if (v.kind == PTX_OPND_IMM_F64) { double d; memcpy(&d, &v.bits, 8); f = (float)d; }
    else { uint32_t b = (uint32_t)v.bits; memcpy(&f, &b, 4); }
    uint32_t b;
    memcpy(&b, &f, 4);
    bits = b;
  } else if (ic->type == PTX_T_F64) {
    double d;
    if (v.kind == PTX_OPND_IMM_INT) d = (double)(int64_t)v.bits;
    else if (v.kind == PTX_OPND_IMM_F32) { float f; uint32_t b = (uint32_t)v.bits; memcpy(&f, &b, 4); d = f; }
    else memcpy(&d, &v.bits, 8);
    memcpy(&bits, &d, 8);
  }
  uint8_t *dst = init_slot(P, ic, off, line, col);
  for (unsigned i = 0; i < ic->tsize && i < 8; i++) dst[i] = (uint8_t)(bits >> (8 * i));
}

static void init_list(parser *P, initctx *ic, int level, uint64_t base) {
  if (level >= ic->ndims) fail(P, "too many braces in initialiser of '%s'", ic->name);
  next(P); /* '{' */
  uint64_t k = 0;
  if (!is_punct(P, '}')) {
    for (;;) {
      if (is_punct(P, '{')) init_list(P, ic, level + 1, base + k * ic->stride[level]);
      else init_leaf(P, ic, base + k * ic->tsize);
      k++;
      if (is_punct(P, ',')) { next(P); continue; }
      break;
    }
  }
  if (!is_punct(P, '}')) {
    char q[200];
    fail(P, "expected ',' or '}' in initialiser, found %s", tokq(P, q, sizeof q));
  }
  next(P);
}

/* Declare one variable named by the current token with attributes d. */
static void parse_one_var(parser *P, const decl *d, int local, ptx_var *out) {
  memset(out, 0, sizeof *out);
  out->name = astr(P, P->tok.p, P->tok.len);
  out->line = P->tok.line;
  out->space = d->space;
  out->type = d->type;
  out->vec = d->vec ? d->vec : 1;
  out->is_extern = d->is_extern;
  out->is_visible = d->is_visible;
  out->is_weak = d->is_weak;
  out->is_ptr = d->is_ptr;
  out->ptr_space = d->ptr_space;
  out->align = d->align;
  next(P);
  uint64_t dims[MAX_DIMS];
  int ndims = 0, unsized = 0;
  uint64_t count = 1;
  while (is_punct(P, '[')) {
    next(P);
    if (ndims == MAX_DIMS) fail(P, "too many array dimensions");
    if (is_punct(P, ']')) {
      if (ndims) fail(P, "only the first array dimension may be empty");
      unsized = 1;
      dims[ndims++] = 0;
    } else {
      uint64_t n = parse_uint(P, "an array size");
      if (n == 0) fail(P, "array size must be positive");
      if (count > (UINT64_MAX >> 8) / n) fail(P, "array too large");
      dims[ndims++] = n;
      count *= n;
    }
    expect(P, ']');
  }
  unsigned tsize = ptx_type_size((ptx_type)out->type);
  out->count = unsized ? 0 : count;
  out->size = out->count * tsize * out->vec;
  if (!is_punct(P, '=')) return;
  uint32_t line = P->tok.line, col = P->tok.col;
  next(P);
  if (!tsize) fail_at(P, line, col, "initialiser of '%s' without a type", out->name);
  initctx ic;
  memset(&ic, 0, sizeof ic);
  ic.tsize = tsize;
  ic.type = out->type;
  ic.name = out->name;
  ic.ndims = ndims + (out->vec > 1);
  uint64_t inner = tsize;
  if (out->vec > 1) dims[ndims] = out->vec;
  for (int i = ic.ndims - 1; i >= 0; i--) {
    ic.stride[i] = inner;
    inner *= (i == 0 && unsized) ? 1 : dims[i];
  }
  if (unsized) {
    ic.size = UINT64_MAX;
    /* initbuf.n: bytes dirtied by the previous unsized initialiser */
    if (P->initbuf.n) memset(P->initbuf.a, 0, P->initbuf.n);
    P->initbuf.n = 0;
  } else {
    if (out->size > MAX_INIT_BYTES)
      fail_at(P, line, col, "initialised variable '%s' is larger than %llu bytes", out->name,
              (unsigned long long)MAX_INIT_BYTES);
    P->init_total += out->size;
    if (P->init_total > MAX_INIT_TOTAL)
      fail_at(P, line, col, "initialised data exceeds %llu bytes",
              (unsigned long long)MAX_INIT_TOTAL);
    ic.size = out->size;
    ic.buf = arena_calloc(P->A, (size_t)(out->size ? out->size : 1));
    if (!ic.buf) oom(P);
  }
  P->relocs.n = 0;
  if (is_punct(P, '{')) {
    if (ic.ndims == 0) {
      /* scalar written in braces: { 5 } */
      ic.ndims = 1;
      ic.stride[0] = tsize;
    }
    init_list(P, &ic, 0, 0);
  } else {
    init_leaf(P, &ic, 0);
  }
  if (unsized) {
    uint64_t per = ic.stride[0];
    uint64_t n = (ic.extent + per - 1) / per;
    /* count = elements of the first dim times the other dims */
    uint64_t rest = 1;
    for (int i = 1; i < ndims; i++) rest *= dims[i];
    out->count = n * rest;
    out->size = out->count * tsize * out->vec;
    uint8_t *img = arena_calloc(P->A, (size_t)(out->size ? out->size : 1));
    if (!img) oom(P);
    if (ic.extent) memcpy(img, P->initbuf.a, (size_t)ic.extent);
    P->initbuf.n = (uint32_t)ic.extent;
    P->init_total += out->size;
    if (P->init_total > MAX_INIT_TOTAL)
      fail_at(P, line, col, "initialised data exceeds %llu bytes",
              (unsigned long long)MAX_INIT_TOTAL);
    out->init = img;
  } else {
    out->init = ic.buf;
  }
  if (P->relocs.n) {
    out->init_syms = P->relocs.n;
    out->init_reloc = vfreeze(P, &P->relocs, sizeof(struct ptx_reloc));
  }
  (void)local;
}

/* Variable declaration after its linkage/space words; ends at ';'. */
static void parse_var_decl(parser *P, decl *d, int local) {
  parse_decl_attrs(P, d);
  if (d->skip) {
    /* .texref / .surfref / .samplerref: keep the names as TEX symbols */
    d->space = PTX_SP_TEX;
    d->type = 0;
  }
  for (;;) {
    if (P->tok.kind != PTX_TK_WORD || P->tok.c == '.') {
      char q[200];
      fail(P, "expected a variable name, found %s", tokq(P, q, sizeof q));
    }
    ptx_tok nt = P->tok;
    ptx_var v;
    if (d->skip) {
      memset(&v, 0, sizeof v);
      v.name = astr(P, nt.p, nt.len);
      v.space = PTX_SP_TEX;
      v.vec = 1;
      v.line = nt.line;
      next(P);
      if (is_punct(P, '=')) {
        /* sampler initialiser { filter_mode = nearest, ... } */
        next(P);
        if (is_punct(P, '{')) {
          int depth = 0;
          do {
            if (P->tok.kind == PTX_TK_EOF) fail(P, "unexpected end of file in initialiser");
            if (is_punct(P, '{')) depth++;
            if (is_punct(P, '}')) depth--;
            next(P);
          } while (depth > 0);
        }
      }
    } else {
      parse_one_var(P, d, local, &v);
      if (!v.type) fail_at(P, nt.line, nt.col, "variable '%.*s' has no type", (int)nt.len, nt.p);
    }
    if (local) {
      uint32_t idx = P->fvars.n;
      *VPUSH(P, P->fvars, ptx_var) = v;
      bind(P, v.name, nt.len, nt.hash, B_VAR, idx, nt.line, nt.col);
    } else {
      smap_slot *e = smap_put(P, &P->msyms, v.name, nt.len, nt.hash);
      if (e->val >= 0) {
        if ((e->val & 1) == MS_VAR && VAT(P->mvars, ptx_var, e->val >> 1).is_extern) {
          VAT(P->mvars, ptx_var, e->val >> 1) = v; /* definition of an extern */
        } else {
          fail_at(P, nt.line, nt.col, "redefinition of '%.*s'", (int)nt.len, nt.p);
        }
      } else {
        e->val = (int32_t)(P->mvars.n * 2 + MS_VAR);
        *VPUSH(P, P->mvars, ptx_var) = v;
      }
    }
    if (is_punct(P, ',')) { next(P); continue; }
    break;
  }
  if (!is_punct(P, ';')) {
    char q[200];
    fail(P, "expected ';' after declaration, found %s", tokq(P, q, sizeof q));
  }
  next(P);
}

/* .reg [.v2] .type names;  name<N> declares name0 .. nameN-1. */
static void parse_reg_decl(parser *P) {
  decl d;
  memset(&d, 0, sizeof d);
  next(P);
  parse_decl_attrs(P, &d);
  if (!d.type) fail(P, "register declaration without a type");
  for (;;) {
    if (P->tok.kind != PTX_TK_WORD || P->tok.c == '.') {
      char q[200];
      fail(P, "expected a register name, found %s", tokq(P, q, sizeof q));
    }
    ptx_tok nt = P->tok;
    next(P);
    if (is_punct(P, '<')) {
      next(P);
      uint64_t n = parse_uint(P, "a register count");
      if (n > MAX_REGS || P->nregs_total + n > MAX_REGS)
        fail(P, "too many registers (the limit is %u per module)", MAX_REGS);
      P->nregs_total += n;
      expect(P, '>');
      /* one arena block holds all names: "%r0\0%r1\0..." */
      size_t per = nt.len + 9;
      char *names = aalloc(P, per * (size_t)(n ? n : 1));
      for (uint64_t i = 0; i < n; i++) {
        char *s = names + per * i;
        memcpy(s, nt.p, nt.len);
        char dig[12];
        int dl = 0;
        uint64_t x = i;
        do { dig[dl++] = (char)('0' + x % 10); x /= 10; } while (x);
        for (int j = 0; j < dl; j++) s[nt.len + (uint32_t)j] = dig[dl - 1 - j];
        s[nt.len + (uint32_t)dl] = 0;
        uint32_t len = nt.len + (uint32_t)dl;
        uint32_t idx = P->regs.n;
        ptx_reg *r = VPUSH(P, P->regs, ptx_reg);
        r->name = s;
        r->type = d.type;
        r->vec = d.vec ? d.vec : 1;
        bind(P, s, len, ptx_hash_bytes(s, len), B_REG, idx, nt.line, nt.col);
      }
    } else {
      if (++P->nregs_total > MAX_REGS)
        fail(P, "too many registers (the limit is %u per module)", MAX_REGS);
      const char *s = astr(P, nt.p, nt.len);
      uint32_t idx = P->regs.n;
      ptx_reg *r = VPUSH(P, P->regs, ptx_reg);
      r->name = s;
      r->type = d.type;
      r->vec = d.vec ? d.vec : 1;
      bind(P, s, nt.len, nt.hash, B_REG, idx, nt.line, nt.col);
    }
    if (is_punct(P, ',')) { next(P); continue; }
    break;
  }
  if (!is_punct(P, ';')) {
    char q[200];
    fail(P, "expected ';' after register declaration, found %s", tokq(P, q, sizeof q));
  }
  next(P);
}

/* ------------------------------------------------------------ functions -- */

/* ( .param ... name, ... ) into fvars; returns how many. */
static uint32_t parse_param_list(parser *P) {
  expect(P, '(');
  uint32_t n = 0;
  if (is_punct(P, ')')) { next(P); return 0; }
  for (;;) {
    decl d;
    memset(&d, 0, sizeof d);
    if (!(tok_is(P, ".param") || tok_is(P, ".reg"))) {
      char q[200];
      fail(P, "expected .param in parameter list, found %s", tokq(P, q, sizeof q));
    }
    d.space = tok_is(P, ".reg") ? PTX_SP_REG : PTX_SP_PARAM;
    next(P);
    parse_decl_attrs(P, &d);
    if (d.space != PTX_SP_PARAM && d.space != PTX_SP_REG) fail(P, "bad parameter state space");
    if (!d.type) fail(P, "parameter without a type");
    if (P->tok.kind != PTX_TK_WORD || P->tok.c == '.') {
      char q[200];
      fail(P, "expected a parameter name, found %s", tokq(P, q, sizeof q));
    }
    ptx_var v;
    parse_one_var(P, &d, 1, &v);
    *VPUSH(P, P->fvars, ptx_var) = v;
    n++;
    if (is_punct(P, ',')) { next(P); continue; }
    break;
  }
  expect(P, ')');
  return n;
}

static void reset_function_scratch(parser *P) {
  P->insns.n = P->opnds.n = P->regs.n = P->fvars.n = P->labels.n = 0;
  P->luse.n = P->binds.n = P->scopes.n = P->tuse.n = 0;
  P->loc_file = P->loc_line = 0;
  smap_clear(&P->fsyms);
  smap_clear(&P->lmap);
}

/* Performance directives between the header and the body. */
static void parse_perf(parser *P, ptx_func *f) {
  while (P->tok.kind == PTX_TK_WORD && P->tok.c == '.') {
    uint32_t *dst = NULL;
    unsigned maxn = 0;
    if (tok_is(P, ".maxntid")) { dst = f->maxntid; maxn = 3; }
    else if (tok_is(P, ".reqntid")) { dst = f->reqntid; maxn = 3; }
    else if (tok_is(P, ".minnctapersm")) { dst = &f->minnctapersm; maxn = 1; }
    else if (tok_is(P, ".maxnreg")) { dst = &f->maxnreg; maxn = 1; }
    else if (tok_is(P, ".maxclusterrank")) { dst = &f->maxclusterrank; maxn = 1; }
    else if (tok_is(P, ".reqnctapercluster")) { dst = f->reqnctapercluster; maxn = 3; }
    else if (tok_is(P, ".maxnctapersm") ||
             tok_is(P, ".explicitcluster") || tok_is(P, ".noreturn") ||
             tok_is(P, ".abi_preserve") || tok_is(P, ".abi_preserve_control") ||
             tok_is(P, ".blocksareclusters")) {
      maxn = 3;
    } else if (tok_is(P, ".pragma")) {
      skip_statement(P);
      continue;
    } else {
      char q[200];
      fail(P, "unknown directive %s", tokq(P, q, sizeof q));
    }
    next(P);
    unsigned i = 0;
    while (P->tok.kind == PTX_TK_NUM) {
      uint64_t v = parse_uint(P, "a number");
      if (i >= maxn) fail(P, "too many values");
      if (dst) dst[i] = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
      i++;
      if (is_punct(P, ',')) next(P);
      else break;
    }
  }
}

static void parse_body(parser *P);

/*
 * `NAME: .branchtargets L1, L2, ...;` (after NAME and ':'): the jump table
 * of a brx.idx, kept on label li.  Entries may name labels defined further
 * down (label_ref records the first use, so an undefined one is reported
 * there); what they name is checked when the body closes.
 */
static void parse_branchtargets(parser *P, uint32_t li) {
  next(P); /* .branchtargets */
  uint32_t first = P->tuse.n;
  for (;;) {
    const ptx_tok *t = &P->tok;
    if (t->kind != PTX_TK_WORD || t->c == '.' || t->c == '%') {
      char q[200];
      fail(P, "expected a label in .branchtargets, found %s", tokq(P, q, sizeof q));
    }
    uint32_t line = t->line, col = t->col, target = label_ref(P, t, 0);
    target_use *u = VPUSH(P, P->tuse, target_use);
    u->label = target;
    u->line = line;
    u->col = col;
    next(P);
    if (is_punct(P, ',')) { next(P); continue; }
    break;
  }
  if (!is_punct(P, ';')) {
    char q[200];
    fail(P, "expected ',' or ';' in .branchtargets, found %s", tokq(P, q, sizeof q));
  }
  next(P);
  uint32_t n = P->tuse.n - first;
  uint32_t *tg = aalloc(P, (size_t)n * sizeof *tg);
  for (uint32_t k = 0; k < n; k++) tg[k] = VAT(P->tuse, target_use, first + k).label;
  ptx_label *l = &VAT(P->labels, ptx_label, li);
  l->ntargets = n;
  l->targets = tg;
}

/* Top-level operand j of scratch instruction ii (ptx_insn_opnd on the
   scratch vectors); NULL when absent. */
static const ptx_operand *scratch_opnd(const parser *P, uint32_t ii, unsigned j) {
  const ptx_insn *I = &VAT(P->insns, ptx_insn, ii);
  if (j >= I->nopnd) return NULL;
  uint32_t k = I->opnd;
  for (unsigned n = 0; n < j && k < P->opnds.n; n++) {
    const ptx_operand *o = &VAT(P->opnds, ptx_operand, k);
    k += 1 + ((o->kind == PTX_OPND_VEC || o->kind == PTX_OPND_LIST || o->kind == PTX_OPND_ADDR)
                  ? o->n : 0);
  }
  return k < P->opnds.n ? &VAT(P->opnds, ptx_operand, k) : NULL;
}

/*
 * When the body has closed and every label is defined: a .branchtargets
 * entry names a code label, not another table; brx.idx names a table; bra
 * does not.  (A table may follow the brx that names it, so none of this can
 * be decided earlier.)
 */
static void check_jump_tables(parser *P) {
  for (uint32_t i = 0; i < P->tuse.n; i++) {
    const target_use *u = &VAT(P->tuse, target_use, i);
    const ptx_label *l = &VAT(P->labels, ptx_label, u->label);
    if (l->ntargets)
      fail_at(P, u->line, u->col, ".branchtargets entry '%s' is a jump table, not a code label",
              l->name);
  }
  for (uint32_t ii = 0; ii < P->insns.n; ii++) {
    const ptx_insn *I = &VAT(P->insns, ptx_insn, ii);
    if (I->op == PTX_OP_BRX) {
      const ptx_operand *o = scratch_opnd(P, ii, 1);
      if (!o || o->kind != PTX_OPND_LABEL)
        fail_at(P, I->line, I->col, "brx.idx needs a .branchtargets label as its last operand");
      const ptx_label *l = &VAT(P->labels, ptx_label, o->u.label);
      if (!l->ntargets)
        fail_at(P, I->line, I->col, "brx.idx names '%s', which is not a .branchtargets table",
                l->name);
    } else if (I->op == PTX_OP_BRA) {
      for (unsigned j = 0; j < I->nopnd; j++) {
        const ptx_operand *o = scratch_opnd(P, ii, j);
        if (o && o->kind == PTX_OPND_LABEL && VAT(P->labels, ptx_label, o->u.label).ntargets)
          fail_at(P, I->line, I->col, "bra names '%s', a .branchtargets table, not a code label",
                  VAT(P->labels, ptx_label, o->u.label).name);
      }
    }
  }
}

static void parse_func(parser *P, const decl *lk, int is_entry, uint32_t line) {
  next(P); /* .entry / .func */
  reset_function_scratch(P);
  uint32_t nrets = 0;
  if (!is_entry && is_punct(P, '(')) nrets = parse_param_list(P);
  if (P->tok.kind != PTX_TK_WORD || P->tok.c == '.') {
    char q[200];
    fail(P, "expected a function name, found %s", tokq(P, q, sizeof q));
  }
  ptx_tok nt = P->tok;
  next(P);
  uint32_t nparams = 0;
  if (is_punct(P, '(')) nparams = parse_param_list(P);
  /* reorder fvars to params then rets */
  if (nrets && nparams) {
    ptx_var tmp[16];
    ptx_var *t = nrets <= 16 ? tmp : malloc(nrets * sizeof *t);
    if (!t) oom(P);
    memcpy(t, P->fvars.a, nrets * sizeof *t);
    memmove(P->fvars.a, &VAT(P->fvars, ptx_var, nrets), nparams * sizeof *t);
    memcpy(&VAT(P->fvars, ptx_var, nparams), t, nrets * sizeof *t);
    if (t != tmp) free(t);
  }
  ptx_func f;
  memset(&f, 0, sizeof f);
  f.is_entry = (uint8_t)is_entry;
  f.is_extern = lk->is_extern;
  f.is_visible = lk->is_visible;
  f.is_weak = lk->is_weak;
  f.line = line;
  f.nparams = nparams;
  f.nrets = nrets;
  parse_perf(P, &f);
  /* register the name (recursion may call it from its own body) */
  smap_slot *e = smap_put(P, &P->msyms, astr(P, nt.p, nt.len), nt.len, nt.hash);
  uint32_t fi;
  int had_body = 0, existed = e->val >= 0;
  if (existed) {
    if ((e->val & 1) != MS_FUNC)
      fail_at(P, nt.line, nt.col, "'%.*s' is already declared as a variable", (int)nt.len, nt.p);
    fi = (uint32_t)e->val >> 1;
    had_body = VAT(P->funcs, ptx_func, fi).has_body;
    if (VAT(P->funcs, ptx_func, fi).is_entry != is_entry)
      fail_at(P, nt.line, nt.col, "'%.*s' redeclared as a different kind of function",
              (int)nt.len, nt.p);
  } else {
    fi = P->funcs.n;
    memset(VPUSH(P, P->funcs, ptx_func), 0, sizeof(ptx_func));
    e->val = (int32_t)(fi * 2 + MS_FUNC);
  }
  f.name = e->s;
  if (is_punct(P, ';')) {
    next(P);
    if (existed) return; /* a repeated declaration changes nothing */
    f.is_extern = 1;
    f.nvars = P->fvars.n;
    f.vars = vfreeze(P, &P->fvars, sizeof(ptx_var));
    f.params = f.vars;
    f.rets = f.vars ? f.vars + nparams : NULL;
    VAT(P->funcs, ptx_func, fi) = f;
    return;
  }
  if (!is_punct(P, '{')) {
    char q[200];
    fail(P, "expected '{' or ';' after function header, found %s", tokq(P, q, sizeof q));
  }
  if (had_body) fail_at(P, nt.line, nt.col, "redefinition of function '%.*s'", (int)nt.len, nt.p);
  /* bind params and rets in the function scope */
  scope_push(P);
  for (uint32_t i = 0; i < P->fvars.n; i++) {
    ptx_var *v = &VAT(P->fvars, ptx_var, i);
    uint32_t len = (uint32_t)strlen(v->name);
    if (v->space == PTX_SP_REG) {
      uint32_t ri = P->regs.n;
      ptx_reg *r = VPUSH(P, P->regs, ptx_reg);
      r->name = v->name;
      r->type = v->type;
      r->vec = v->vec;
      bind(P, v->name, len, ptx_hash_bytes(v->name, len), B_REG, ri, v->line, 1);
    } else {
      bind(P, v->name, len, ptx_hash_bytes(v->name, len), B_VAR, i, v->line, 1);
    }
  }
  /* keep the function visible as a prototype while the body is parsed */
  if (!existed) {
    VAT(P->funcs, ptx_func, fi).name = f.name;
    VAT(P->funcs, ptx_func, fi).is_entry = (uint8_t)is_entry;
  }
  parse_body(P);
  /* undefined labels */
  for (uint32_t i = 0; i < P->labels.n; i++) {
    ptx_label *l = &VAT(P->labels, ptx_label, i);
    if (l->insn == UINT32_MAX) {
      label_use *u = &VAT(P->luse, label_use, i);
      fail_at(P, u->line, u->col, "unknown label '%s'", l->name);
    }
  }
  check_jump_tables(P);
  f.has_body = 1;
  f.is_extern = 0;
  f.nregs = P->regs.n;
  f.regs = vfreeze(P, &P->regs, sizeof(ptx_reg));
  f.nvars = P->fvars.n;
  f.vars = vfreeze(P, &P->fvars, sizeof(ptx_var));
  f.params = f.vars;
  f.rets = f.vars ? f.vars + nparams : NULL;
  f.ninsns = P->insns.n;
  f.insns = vfreeze(P, &P->insns, sizeof(ptx_insn));
  f.nopnds = P->opnds.n;
  f.opnds = vfreeze(P, &P->opnds, sizeof(ptx_operand));
  f.nlabels = P->labels.n;
  f.labels = vfreeze(P, &P->labels, sizeof(ptx_label));
  VAT(P->funcs, ptx_func, fi) = f;
}

/* Statements of a body, from '{' to the matching '}'. */
static void parse_body(parser *P) {
  next(P); /* '{' (function scope was pushed by the caller) */
  unsigned depth = 1;
  for (;;) {
    ptx_tok *t = &P->tok;
    if (t->kind == PTX_TK_PUNCT) {
      switch (t->c) {
      case '}':
        scope_pop(P);
        next(P);
        if (--depth == 0) return;
        continue;
      case '{':
        if (depth >= 1000) fail(P, "scopes nested too deeply");
        scope_push(P);
        depth++;
        next(P);
        continue;
      case '@': {
        next(P);
        int neg = 0;
        if (is_punct(P, '!')) { neg = 1; next(P); }
        if (t->kind != PTX_TK_WORD) {
          char q[200];
          fail(P, "expected a predicate after '@', found %s", tokq(P, q, sizeof q));
        }
        const binding *b = lookup_local(P, t);
        if (!b || b->kind != B_REG) {
          if (t->p[0] == '%' && !b)
            fail(P, "undeclared register '%.*s'", (int)(t->len < 80 ? t->len : 80), t->p);
          fail(P, "guard '%.*s' is not a register", (int)(t->len < 80 ? t->len : 80), t->p);
        }
        int32_t g = (int32_t)b->idx;
        const ptx_reg *gr = &VAT(P->regs, ptx_reg, b->idx);
        if (gr->type != PTX_T_PRED)
          fail(P, "guard '%s' is .%s, not a predicate", gr->name,
               ptx_type_name((ptx_type)gr->type));
        next(P);
        if (t->kind != PTX_TK_WORD || t->c == '.' || t->c == '%' || t->c == '$') {
          char q[200];
          fail(P, "expected an instruction after the guard, found %s", tokq(P, q, sizeof q));
        }
        parse_insn(P, g, neg);
        continue;
      }
      case ';':
        next(P); /* empty statement */
        continue;
      default: {
        char q[200];
        fail(P, "unexpected %s in function body", tokq(P, q, sizeof q));
      }
      }
    }
    if (t->kind == PTX_TK_WORD) {
      if (t->c == '.') {
        if (tok_is(P, ".reg")) { parse_reg_decl(P); continue; }
        if (P->tok.len > 5 && memcmp(P->tok.p, ".reg.", 5) == 0) {
          /* ".reg.b32 f;" (cuda_fp16.h's inline assembly): ptxas reads the
             directive and its type as two words, so the lexer's one word
             is cut after ".reg" and the type scanned again */
          P->L.pos = P->tok.p + 4;
          P->tok.len = 4;
          P->tok.hash = ptx_hash_bytes(P->tok.p, 4);
          parse_reg_decl(P);
          continue;
        }
        if (tok_is(P, ".local") || tok_is(P, ".shared") || tok_is(P, ".param") ||
            tok_is(P, ".const") || tok_is(P, ".global")) {
          decl d;
          memset(&d, 0, sizeof d);
          parse_var_decl(P, &d, 1);
          continue;
        }
        if (tok_is(P, ".pragma")) { skip_statement(P); continue; }
        if (tok_is(P, ".loc")) { parse_loc(P); continue; }
        if (tok_is(P, ".file")) { parse_file(P); continue; }
        char q[200];
        fail(P, "unknown directive %s", tokq(P, q, sizeof q));
      }
      if (ptx_lex_peek_char(&P->L) == ':') {
        ptx_tok lt = *t;
        uint32_t li = label_ref(P, &lt, 1);
        next(P); /* name */
        next(P); /* ':' */
        if (tok_is(P, ".branchtargets")) parse_branchtargets(P, li);
        else if (tok_is(P, ".callprototype") || tok_is(P, ".calltargets"))
          skip_statement(P);
        continue;
      }
      if (t->c == '%') {
        char q[200];
        fail(P, "expected an instruction, found %s", tokq(P, q, sizeof q));
      }
      parse_insn(P, -1, 0);
      continue;
    }
    if (t->kind == PTX_TK_EOF) fail(P, "unexpected end of file: missing '}'");
    char q[200];
    fail(P, "unexpected %s in function body", tokq(P, q, sizeof q));
  }
}

/* ---------------------------------------------------------------- module -- */

static void skip_section(parser *P) {
  next(P); /* .section */
  while (!is_punct(P, '{')) {
    if (P->tok.kind == PTX_TK_EOF) fail(P, "unexpected end of file in .section");
    next(P);
  }
  unsigned depth = 0;
  do {
    if (P->tok.kind == PTX_TK_EOF) fail(P, "unexpected end of file: missing '}' of .section");
    if (is_punct(P, '{')) depth++;
    else if (is_punct(P, '}')) depth--;
    next(P);
  } while (depth > 0);
}

/* A .target entry ptxas of CUDA 13 takes (PTX ISA 9.0, ".target"). */
static int known_target(const char *s, uint32_t n) {
  static const char *const opts[] = {"texmode_unified", "texmode_independent", "debug",
                                     "map_f64_to_f32"};
  for (size_t i = 0; i < sizeof opts / sizeof *opts; i++)
    if (strlen(opts[i]) == n && !memcmp(s, opts[i], n)) return 1;
  static const unsigned sms[] = {10, 11, 12, 13, 20, 21, 30, 32, 35, 37, 50, 52, 53, 60,
                                 61, 62, 70, 72, 75, 80, 86, 87, 88, 89, 90, 100, 101,
                                 103, 110, 120, 121};
  if (n < 5 || n > 7 || memcmp(s, "sm_", 3)) return 0;
  unsigned v = 0, i = 3;
  while (i < n && s[i] >= '0' && s[i] <= '9') v = v * 10 + (unsigned)(s[i++] - '0');
  if (i == 3) return 0;
  if (i < n) {
    /* sm_90a; sm_100a, sm_100f and later */
    if (i + 1 != n || (s[i] != 'a' && s[i] != 'f') || v < 90 || (s[i] == 'f' && v < 100))
      return 0;
  }
  for (size_t k = 0; k < sizeof sms / sizeof *sms; k++)
    if (sms[k] == v) return 1;
  return 0;
}

static void parse_module(parser *P) {
  ptx_module *m = P->m;
  next(P);
  while (P->tok.kind != PTX_TK_EOF) {
    ptx_tok *t = &P->tok;
    if (t->kind != PTX_TK_WORD || t->c != '.') {
      char q[200];
      if (is_punct(P, '}')) fail(P, "unbalanced '}'");
      fail(P, "expected a directive, found %s", tokq(P, q, sizeof q));
    }
    uint32_t line = t->line;
    if (tok_is(P, ".version")) {
      next(P);
      if (P->tok.kind != PTX_TK_NUM) fail(P, "expected a version number after .version");
      unsigned maj = 0, min = 0;
      uint32_t i = 0;
      while (i < P->tok.len && P->tok.p[i] >= '0' && P->tok.p[i] <= '9' && maj < 100000)
        maj = maj * 10 + (unsigned)(P->tok.p[i++] - '0');
      if (i < P->tok.len && P->tok.p[i] == '.') {
        i++;
        while (i < P->tok.len && P->tok.p[i] >= '0' && P->tok.p[i] <= '9' && min < 100000)
          min = min * 10 + (unsigned)(P->tok.p[i++] - '0');
      }
      if (i != P->tok.len || i == 0) {
        char q[200];
        fail(P, "bad version %s", tokq(P, q, sizeof q));
      }
      m->version_major = maj;
      m->version_minor = min;
      next(P);
    } else if (tok_is(P, ".target")) {
      next(P);
      size_t o = 0;
      for (;;) {
        if (P->tok.kind != PTX_TK_WORD) fail(P, "expected a target name after .target");
        if (!known_target(P->tok.p, P->tok.len)) {
          char q[200];
          fail(P, "unknown target %s (ptxas knows sm_10 ... sm_121, with an a or f suffix "
                  "from sm_90 and sm_100, and texmode_unified, texmode_independent, debug, "
                  "map_f64_to_f32)", tokq(P, q, sizeof q));
        }
        size_t n = P->tok.len;
        if (o + n + 2 < sizeof m->target) {
          if (o) { m->target[o++] = ','; }
          memcpy(m->target + o, P->tok.p, n);
          o += n;
          m->target[o] = 0;
        }
        next(P);
        if (is_punct(P, ',')) { next(P); continue; }
        break;
      }
    } else if (tok_is(P, ".address_size")) {
      next(P);
      uint64_t a = parse_uint(P, "an address size");
      if (a != 32 && a != 64) fail_at(P, line, t->col, "address size must be 32 or 64");
      m->address_size = (uint32_t)a;
    } else if (tok_is(P, ".file")) {
      parse_file(P);
    } else if (tok_is(P, ".loc")) {
      parse_loc(P);
    } else if (tok_is(P, ".section")) {
      skip_section(P);
    } else if (tok_is(P, ".pragma") || tok_is(P, ".alias")) {
      skip_statement(P);
    } else {
      decl d;
      memset(&d, 0, sizeof d);
      for (;;) {
        if (tok_is(P, ".extern")) d.is_extern = 1;
        else if (tok_is(P, ".visible")) d.is_visible = 1;
        else if (tok_is(P, ".weak") || tok_is(P, ".common")) d.is_weak = 1;
        else break;
        next(P);
      }
      if (tok_is(P, ".entry") || tok_is(P, ".func")) {
        parse_func(P, &d, tok_is(P, ".entry"), line);
      } else if (tok_is(P, ".global") || tok_is(P, ".shared") || tok_is(P, ".const") ||
                 tok_is(P, ".local")) {
        parse_var_decl(P, &d, 0);
      } else {
        char q[200];
        fail(P, "unknown directive %s", tokq(P, q, sizeof q));
      }
    }
  }
  if (P->L.bad) fail(P, "lexical error");
}

/* --------------------------------------------------------------- the API -- */

static void parser_free(parser *P) {
  vec *vs[] = {&P->mvars, &P->funcs, &P->keys, &P->ktmpl, &P->insns, &P->opnds,
               &P->regs, &P->fvars, &P->labels, &P->luse, &P->binds, &P->scopes,
               &P->tuse, &P->relocs, &P->initbuf, &P->files};
  for (size_t i = 0; i < sizeof vs / sizeof vs[0]; i++) free(vs[i]->a);
  free(P->msyms.slot);
  free(P->kmap.slot);
  free(P->fsyms.slot);
  free(P->lmap.slot);
}

static ptx_module *parse_run(parser *P) {
  if (setjmp(P->jb)) return NULL;
  parse_module(P);
  ptx_module *m = P->m;
  m->nvars = P->mvars.n;
  m->vars = vfreeze(P, &P->mvars, sizeof(ptx_var));
  m->nfuncs = P->funcs.n;
  m->funcs = vfreeze(P, &P->funcs, sizeof(ptx_func));
  m->nkeys = P->keys.n;
  m->keys = vfreeze(P, &P->keys, sizeof(const char *));
  m->nfiles = P->files.n;
  m->files = P->files.n ? vfreeze(P, &P->files, sizeof(const char *)) : NULL;
  return m;
}

const char *ptx_insn_where(const ptx_module *m, const ptx_insn *i, char *buf, size_t cap) {
  const char *f = i->src_line && m && i->src_file < m->nfiles ? m->files[i->src_file] : NULL;
  /* the compiler writes the source's absolute path: the name the user gave
     (the module's) where both are the same file */
  char ra[4096], rb[4096];
  if (f && m->filename && strcmp(f, m->filename) && realpath(f, ra) && realpath(m->filename, rb) &&
      !strcmp(ra, rb))
    f = m->filename;
  if (f) snprintf(buf, cap, "%s:%u (PTX line %u)", f, i->src_line, i->line);
  else snprintf(buf, cap, "%s:%u", m && m->filename ? m->filename : "<ptx>", i->line);
  return buf;
}

ptx_module *ptx_parse(const char *text, size_t len, const char *filename, ptx_error *err) {
  if (!filename) filename = "<input>";
  if (err) { err->line = err->col = 0; err->msg[0] = 0; }
  parser *P = calloc(1, sizeof *P);
  struct ptx_arena *A = ptx_arena_new();
  ptx_module *m = A ? ptx_arena_alloc(A, sizeof *m) : NULL;
  if (!P || !m) {
    if (err) snprintf(err->msg, sizeof err->msg, "%s:0:0: error: out of memory", filename);
    free(P);
    ptx_arena_free(A);
    return NULL;
  }
  memset(m, 0, sizeof *m);
  m->arena = A;
  P->A = A;
  P->m = m;
  P->err = err;
  P->fname = filename;
  if (!text) len = 0;
  ptx_lex_init(&P->L, text ? text : "", len);
  ptx_module *res = NULL;
  if (len >= UINT32_MAX) {
    if (err) snprintf(err->msg, sizeof err->msg, "%s:1:1: error: input larger than 4 GiB", filename);
  } else if (len == 0 || !text) {
    if (err) {
      err->line = err->col = 1;
      snprintf(err->msg, sizeof err->msg, "%s:1:1: error: empty input", filename);
    }
  } else {
    const char *nul = memchr(text, 0, len);
    if (nul) {
      uint32_t line = 1;
      const char *ls = text;
      for (const char *q = text; q < nul; q++)
        if (*q == '\n') { line++; ls = q + 1; }
      if (err) {
        err->line = line;
        err->col = (uint32_t)(nul - ls) + 1;
        snprintf(err->msg, sizeof err->msg,
                 "%s:%u:%u: error: NUL byte in input (not a text file?)", filename, line,
                 err->col);
      }
    } else {
      m->filename = ptx_arena_strndup(A, filename, strlen(filename));
      if (m->filename) res = parse_run(P);
      if (res && res->nfuncs == 0 && res->nvars == 0 && res->version_major == 0) {
        if (err) {
          err->line = err->col = 1;
          snprintf(err->msg, sizeof err->msg, "%s:1:1: error: no PTX in input", filename);
        }
        res = NULL;
      }
    }
  }
  parser_free(P);
  free(P);
  if (!res) ptx_arena_free(A);
  return res;
}

ptx_module *ptx_parse_file(const char *path, ptx_error *err) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    if (err) {
      err->line = err->col = 0;
      snprintf(err->msg, sizeof err->msg, "%s:0:0: error: cannot open: %s", path, strerror(errno));
    }
    return NULL;
  }
  size_t cap = 1 << 16, len = 0;
  char *buf = malloc(cap);
  int rerr = 0;
  while (buf) {
    size_t r = fread(buf + len, 1, cap - len, f);
    len += r;
    if (len < cap) { rerr = ferror(f); break; }
    if (cap > (SIZE_MAX >> 2)) { free(buf); buf = NULL; break; }
    char *nb = realloc(buf, cap * 2);
    if (!nb) { free(buf); buf = NULL; break; }
    buf = nb;
    cap *= 2;
  }
  fclose(f);
  if (!buf || rerr) {
    if (err) {
      err->line = err->col = 0;
      snprintf(err->msg, sizeof err->msg, "%s:0:0: error: %s", path,
               buf ? "read error" : "out of memory");
    }
    free(buf);
    return NULL;
  }
  ptx_module *m = ptx_parse(buf, len, path, err);
  free(buf);
  return m;
}

void ptx_module_free(ptx_module *m) {
  if (m) ptx_arena_free(m->arena); /* m itself lives in its arena */
}

ptx_func *ptx_find_func(const ptx_module *m, const char *name) {
  if (!m || !name) return NULL;
  for (uint32_t i = 0; i < m->nfuncs; i++)
    if (m->funcs[i].name && strcmp(m->funcs[i].name, name) == 0) return &m->funcs[i];
  return NULL;
}

void ptx_param_layout(const ptx_func *f, size_t *offsets, size_t *end,
                      size_t *total) {
  size_t off = 0, maxal = 1;
  for (uint32_t i = 0; f && i < f->nparams; i++) {
    const ptx_var *v = &f->params[i];
    size_t al = v->align && !v->is_ptr
                    ? v->align
                    : ptx_type_size((ptx_type)v->type) * (v->vec ? v->vec : 1);
    if (!al) al = 1;
    if (al > maxal) maxal = al;
    off = (off + al - 1) / al * al;
    if (offsets) offsets[i] = off;
    off += v->size;
  }
  if (end) *end = off;
  if (total) *total = (off + maxal - 1) / maxal * maxal;
}

const ptx_operand *ptx_insn_opnd(const ptx_func *f, const ptx_insn *i, unsigned j) {
  if (!f || !i || j >= i->nopnd) return NULL;
  uint32_t k = i->opnd;
  for (unsigned n = 0; n < j; n++) {
    const ptx_operand *o = &f->opnds[k];
    k += 1 + ((o->kind == PTX_OPND_VEC || o->kind == PTX_OPND_LIST || o->kind == PTX_OPND_ADDR)
                  ? o->n : 0);
  }
  return k < f->nopnds ? &f->opnds[k] : NULL;
}
