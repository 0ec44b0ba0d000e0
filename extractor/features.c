/*
 * features.c -- named feature vectors, the instruction-class taxonomy and
 * the static features of a kernel.
 *
 * feat_vec: parallel arrays of owned names and values, indexed by an open-
 * addressing hash table (linear probing, FNV-1a, power-of-two size at least
 * twice the capacity) so that set/add/get stay O(1) for the thousands of
 * op.<key> names a big module produces.  Slots hold index+1; 0 is empty.
 *
 * Classes: feat_class_of_key() reads an opcode key ("ld.global.nc.f32") and
 * nothing else, because GPU Mangrove's CUDA Flux keys arrive as text with no
 * instruction behind them.  The rule per opcode is a switch over every
 * ptx_op (no default, so -Wswitch flags an opcode added to ptx_ops.h without
 * a rule).  Memory classes depend on the state-space modifier, arithmetic
 * classes on the data-kind of the type modifier (f16/bf16 -> fp16, f32 ->
 * fp32, f64 -> fp64, anything else -> int_arith); untyped spellings (.b32)
 * of moves and loads never change a class.  docs/features.md is normative.
 *
 * Static features: per-kernel counts as if every call to a .func with a body
 * were inlined at its call site once (a call that would re-enter a function
 * already being expanded adds nothing: recursion is counted once).  Results
 * of functions whose expansion met no recursion are memoised, so a call DAG
 * costs time linear in its size.
 */
#include "extractor/features.h"
#include "extractor/frontend.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ feat_vec -- */

size_t feat_name_hash(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) { h ^= (unsigned char)*s; h *= 1099511628211ull; }
  return (size_t)h;
}

void feat_init(feat_vec *v) { memset(v, 0, sizeof *v); }

void feat_free(feat_vec *v) {
  if (!v) return;
  for (char *b = v->arena; b;) {
    char *prev; /* the first member of the block's arena_hdr */
    memcpy(&prev, b, sizeof prev);
    free(b);
    b = prev;
  }
  free(v->names);
  free(v->vals);
  free(v->hash);
  feat_init(v);
}

/* Slot of name (hash h) in the index: where it is, or the empty slot it
   would take. */
static size_t hash_slot_h(const feat_vec *v, const char *name, size_t h) {
  size_t mask = v->hcap - 1, s = h & mask;
  while (v->hash[s] && strcmp(v->names[v->hash[s] - 1], name)) s = (s + 1) & mask;
  return s;
}

static size_t hash_slot(const feat_vec *v, const char *name) {
  return hash_slot_h(v, name, feat_name_hash(name));
}

static int rehash(feat_vec *v, size_t hcap) {
  size_t *h = calloc(hcap, sizeof *h);
  if (!h) return -1;
  free(v->hash);
  v->hash = h;
  v->hcap = hcap;
  for (size_t i = 0; i < v->n; i++) v->hash[hash_slot(v, v->names[i])] = i + 1;
  return 0;
}

long feat_find(const feat_vec *v, const char *name) {
  if (!v || !v->hcap || !name) return -1;
  size_t s = hash_slot(v, name);
  return v->hash[s] ? (long)(v->hash[s] - 1) : -1;
}

long feat_find_hashed(const feat_vec *v, const char *name, size_t h) {
  if (!v || !v->hcap || !name) return -1;
  size_t s = hash_slot_h(v, name, h);
  return v->hash[s] ? (long)(v->hash[s] - 1) : -1;
}

/* Index of name, inserting it with value 0 when absent; -1 on ENOMEM. */
/*
 * A copy of name in v's arena: blocks of ARENA_BLOCK bytes (a name of over
 * a quarter of that gets a block of its own), each linked to the one
 * before, so that a set's
 * names cost one allocation a block instead of one each.  Why: an operator
 * launch's 34 names were 34 strdup and 34 free a call, a fifth of
 * kcast_features_from_op (perf).  NULL when out of memory.
 */
#define ARENA_BLOCK 2048
typedef struct arena_hdr {
  char *prev; /* the block before (NULL: the first) */
  size_t size; /* bytes of names this block holds */
} arena_hdr;
static char *arena_copy(feat_vec *v, const char *name) {
  size_t len = strlen(name) + 1;
  if (len > ARENA_BLOCK / 4) {
    /* a long name: a block of its own, linked behind the current one so
       that the current block's free bytes stay in use */
    char *b = malloc(sizeof(arena_hdr) + len);
    if (!b) return NULL;
    arena_hdr h = {NULL, len};
    if (v->arena) {
      memcpy(&h.prev, v->arena, sizeof h.prev);
      memcpy(v->arena, &b, sizeof b);
    } else {
      v->arena = b;
      v->arena_left = 0;
    }
    memcpy(b, &h, sizeof h);
    memcpy(b + sizeof h, name, len);
    return b + sizeof h;
  }
  if (len > v->arena_left) {
    char *b = malloc(sizeof(arena_hdr) + ARENA_BLOCK);
    if (!b) return NULL;
    arena_hdr h = {v->arena, ARENA_BLOCK};
    memcpy(b, &h, sizeof h);
    v->arena = b;
    v->arena_left = ARENA_BLOCK;
  }
  arena_hdr h;
  memcpy(&h, v->arena, sizeof h);
  char *dst = v->arena + sizeof h + (h.size - v->arena_left);
  memcpy(dst, name, len);
  v->arena_left -= len;
  return dst;
}

/* Room for nc names (nc > cap): the arrays and an index of 2 nc slots. */
static int grow(feat_vec *v, size_t nc) {
  if (nc > SIZE_MAX / 4 / sizeof(char *)) return -1;
  char **nn = realloc(v->names, nc * sizeof *nn);
  if (!nn) return -1;
  v->names = nn;
  double *nv = realloc(v->vals, nc * sizeof *nv);
  if (!nv) return -1;
  v->vals = nv;
  /* cap grows only once the index has room for it (load factor <= 1/2). */
  if (rehash(v, nc * 2)) return -1;
  v->cap = nc;
  return 0;
}

int feat_reserve(feat_vec *v, size_t n) {
  if (n <= v->cap) return 0;
  size_t nc = 16;
  while (nc < n) nc *= 2;
  return grow(v, nc);
}

/* Index of name (hash h), inserting it with value 0 when absent; -1 on
   ENOMEM. */
static long feat_slot_h(feat_vec *v, const char *name, size_t h) {
  /* One probe finds the name or the empty slot it takes (unless the table
     grows first). */
  size_t s = SIZE_MAX;
  if (v->hcap) {
    s = hash_slot_h(v, name, h);
    if (v->hash[s]) return (long)(v->hash[s] - 1);
  }
  if (v->n == v->cap) {
    /* 128 first: a kernel's static features (~70 names) fit without
       growing; a launch's dynamic ones grow once or twice. */
    if (grow(v, v->cap ? v->cap * 2 : 128)) return -1;
    s = SIZE_MAX;
  }
  char *copy = arena_copy(v, name);
  if (!copy) return -1;
  v->names[v->n] = copy;
  v->vals[v->n] = 0.0;
  if (s == SIZE_MAX) s = hash_slot_h(v, copy, h);
  v->hash[s] = v->n + 1;
  return (long)v->n++;
}

static long feat_slot(feat_vec *v, const char *name) {
  return feat_slot_h(v, name, feat_name_hash(name));
}

int feat_set_hashed(feat_vec *v, const char *name, size_t h, double value) {
  long i = feat_slot_h(v, name, h);
  if (i < 0) return -1;
  v->vals[i] = value;
  return 0;
}

int feat_set(feat_vec *v, const char *name, double value) {
  long i = feat_slot(v, name);
  if (i < 0) return -1;
  v->vals[i] = value;
  return 0;
}

int feat_add(feat_vec *v, const char *name, double value) {
  long i = feat_slot(v, name);
  if (i < 0) return -1;
  v->vals[i] += value;
  return 0;
}

double feat_get(const feat_vec *v, const char *name, double dflt) {
  long i = feat_find(v, name);
  return i < 0 ? dflt : v->vals[i];
}

static int cmp_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

void feat_sort(feat_vec *v) {
  if (!v || v->n < 2) return;
  /* Sort (name, value) pairs: carry the value behind the name pointer. */
  struct pair { char *name; double val; } *p = malloc(v->n * sizeof *p);
  if (p) {
    for (size_t i = 0; i < v->n; i++) { p[i].name = v->names[i]; p[i].val = v->vals[i]; }
    qsort(p, v->n, sizeof *p, cmp_names); /* name is the first member */
    for (size_t i = 0; i < v->n; i++) { v->names[i] = p[i].name; v->vals[i] = p[i].val; }
    free(p);
  } else {
    /* No memory for the pair array: insertion sort in place. */
    for (size_t i = 1; i < v->n; i++) {
      char *nm = v->names[i];
      double x = v->vals[i];
      size_t j = i;
      for (; j > 0 && strcmp(v->names[j - 1], nm) > 0; j--) {
        v->names[j] = v->names[j - 1];
        v->vals[j] = v->vals[j - 1];
      }
      v->names[j] = nm;
      v->vals[j] = x;
    }
  }
  /* Same table size, so rebuilding the index cannot fail for lack of room. */
  memset(v->hash, 0, v->hcap * sizeof *v->hash);
  for (size_t i = 0; i < v->n; i++) v->hash[hash_slot(v, v->names[i])] = i + 1;
}

/* ------------------------------------------------- instruction classes -- */

/* ORDER CLASS: feat_class in features.h. */
static const char *const feat_class_names[FEAT_C_COUNT] = {
  "int_arith", "fp16", "fp32", "fp64", "special", "logic", "compare",
  "convert", "move",
  "ld_global", "st_global", "ld_shared", "st_shared", "ld_local", "st_local",
  "ld_param", "st_param", "ld_const", "ld_generic", "st_generic",
  "atomic_global", "atomic_shared",
  "control", "sync", "warp", "tensor", "texture", "other",
};

const char *feat_class_name(feat_class c) {
  return (unsigned)c < FEAT_C_COUNT ? feat_class_names[c] : "other";
}

/* What a key's modifiers say, decoded once. */
typedef struct key_info {
  int op;          /* ptx_op, -1 when the mnemonic is unknown */
  ptx_type type;   /* last type modifier */
  unsigned tsize;  /* bytes of that type (f32x2: 8) */
  int fkind;       /* 16, 32, 64 for float kinds, 0 otherwise */
  ptx_space space; /* first state-space modifier, NONE when absent */
  int has_global;  /* some modifier is .global (cp.async: the source) */
  unsigned vec;    /* .v2/.v4/.v8, 1 otherwise */
} key_info;

static int tok_is(const char *t, size_t n, const char *w) {
  return strlen(w) == n && !memcmp(t, w, n);
}
/* "shared" or "shared::cta" etc. */
static int tok_space(const char *t, size_t n, const char *w) {
  size_t wl = strlen(w);
  return n >= wl && !memcmp(t, w, wl) && (n == wl || t[wl] == ':');
}

static void key_decode(const char *key, key_info *ki) {
  memset(ki, 0, sizeof *ki);
  ki->op = -1;
  ki->vec = 1;
  if (!key) return;
  const char *dot = strchr(key, '.');
  size_t ml = dot ? (size_t)(dot - key) : strlen(key);
  ki->op = ptx_op_lookup(key, (unsigned)ml);
  for (const char *t = dot; t && *t == '.';) {
    t++;
    const char *e = strchr(t, '.');
    size_t n = e ? (size_t)(e - t) : strlen(t);
    if (tok_is(t, n, "f32x2")) {
      ki->type = PTX_T_F32; ki->tsize = 8; ki->fkind = 32;
    } else if (tok_is(t, n, "v2") || tok_is(t, n, "v4") || tok_is(t, n, "v8")) {
      ki->vec = (unsigned)(t[1] - '0');
    } else if (tok_space(t, n, "global")) {
      ki->has_global = 1;
      if (!ki->space) ki->space = PTX_SP_GLOBAL;
    } else if (tok_is(t, n, "shared::cluster")) {
      if (!ki->space) ki->space = PTX_SP_SHARED_CLUSTER;
    } else if (tok_space(t, n, "shared")) {
      if (!ki->space) ki->space = PTX_SP_SHARED;
    } else if (tok_space(t, n, "local")) {
      if (!ki->space) ki->space = PTX_SP_LOCAL;
    } else if (tok_space(t, n, "param")) {
      if (!ki->space) ki->space = PTX_SP_PARAM;
    } else if (tok_space(t, n, "const")) {
      if (!ki->space) ki->space = PTX_SP_CONST;
    } else {
      for (int ty = PTX_T_PRED; ty < PTX_T_COUNT; ty++) {
        if (tok_is(t, n, ptx_type_name((ptx_type)ty))) {
          ki->type = (ptx_type)ty;
          ki->tsize = ptx_type_size((ptx_type)ty);
          switch ((ptx_type)ty) {
            case PTX_T_F16: case PTX_T_F16X2: case PTX_T_BF16: case PTX_T_BF16X2:
              ki->fkind = 16; break;
            case PTX_T_F32: case PTX_T_TF32: ki->fkind = 32; break;
            case PTX_T_F64: ki->fkind = 64; break;
            default: ki->fkind = 0; break;
          }
          break;
        }
      }
    }
    t = e;
  }
}

static feat_class arith_class(const key_info *ki) {
  switch (ki->fkind) {
    case 16: return FEAT_C_FP16;
    case 32: return FEAT_C_FP32;
    case 64: return FEAT_C_FP64;
    default: return FEAT_C_INT_ARITH;
  }
}

static feat_class ld_class(const key_info *ki) {
  switch (ki->space) {
    case PTX_SP_GLOBAL: return FEAT_C_LD_GLOBAL;
    case PTX_SP_SHARED: case PTX_SP_SHARED_CLUSTER: return FEAT_C_LD_SHARED;
    case PTX_SP_LOCAL: return FEAT_C_LD_LOCAL;
    case PTX_SP_PARAM: return FEAT_C_LD_PARAM;
    case PTX_SP_CONST: return FEAT_C_LD_CONST;
    default: return FEAT_C_LD_GENERIC;
  }
}

static feat_class st_class(const key_info *ki) {
  switch (ki->space) {
    case PTX_SP_GLOBAL: return FEAT_C_ST_GLOBAL;
    case PTX_SP_SHARED: case PTX_SP_SHARED_CLUSTER: return FEAT_C_ST_SHARED;
    case PTX_SP_LOCAL: return FEAT_C_ST_LOCAL;
    case PTX_SP_PARAM: return FEAT_C_ST_PARAM;
    default: return FEAT_C_ST_GENERIC;
  }
}

/* Class of a decoded key (feat_class_of_key without the decoding). */
static feat_class class_of(const key_info *kp) {
  const key_info ki = *kp;
  if (ki.op < 0 || ki.op >= PTX_OP_COUNT) return FEAT_C_OTHER;
  switch ((ptx_op)ki.op) {
    /* Arithmetic whose class follows the data kind of the type. */
    case PTX_OP_ABS: case PTX_OP_ADD: case PTX_OP_SUB: case PTX_OP_MUL:
    case PTX_OP_MAD: case PTX_OP_FMA: case PTX_OP_DIV: case PTX_OP_REM:
    case PTX_OP_NEG: case PTX_OP_MIN: case PTX_OP_MAX: case PTX_OP_COPYSIGN:
      return arith_class(&ki);
    /* Integer-only arithmetic (incl. the SIMD video instructions). */
    case PTX_OP_ADDC: case PTX_OP_SUBC: case PTX_OP_MADC: case PTX_OP_MUL24:
    case PTX_OP_MAD24: case PTX_OP_SAD: case PTX_OP_DP2A: case PTX_OP_DP4A:
    case PTX_OP_VABSDIFF: case PTX_OP_VADD: case PTX_OP_VSUB: case PTX_OP_VMAD:
    case PTX_OP_VMIN: case PTX_OP_VMAX:
      return FEAT_C_INT_ARITH;
    case PTX_OP_RCP: case PTX_OP_SQRT: case PTX_OP_RSQRT: case PTX_OP_SIN:
    case PTX_OP_COS: case PTX_OP_EX2: case PTX_OP_LG2: case PTX_OP_TANH:
      return FEAT_C_SPECIAL;
    case PTX_OP_AND: case PTX_OP_OR: case PTX_OP_XOR: case PTX_OP_NOT:
    case PTX_OP_CNOT: case PTX_OP_LOP3: case PTX_OP_SHL: case PTX_OP_SHR:
    case PTX_OP_SHF: case PTX_OP_BFE: case PTX_OP_BFI: case PTX_OP_BREV:
    case PTX_OP_POPC: case PTX_OP_CLZ: case PTX_OP_BFIND: case PTX_OP_PRMT:
    case PTX_OP_FNS: case PTX_OP_BMSK: case PTX_OP_SZEXT: case PTX_OP_VSHL:
    case PTX_OP_VSHR:
      return FEAT_C_LOGIC;
    case PTX_OP_SETP: case PTX_OP_SET: case PTX_OP_SELP: case PTX_OP_SLCT:
    case PTX_OP_TESTP: case PTX_OP_VSET: case PTX_OP_ISSPACEP:
    case PTX_OP_ISTYPEOF:
      return FEAT_C_COMPARE;
    case PTX_OP_CVT: case PTX_OP_CVTA:
      return FEAT_C_CONVERT;
    case PTX_OP_MOV:
      return FEAT_C_MOVE;
    case PTX_OP_LD:
      return ld_class(&ki);
    case PTX_OP_LDU: /* ldu reads global memory; generic addresses included */
      return ki.space == PTX_SP_GLOBAL ? FEAT_C_LD_GLOBAL : FEAT_C_LD_GENERIC;
    case PTX_OP_ST:
      return st_class(&ki);
    case PTX_OP_ATOM: case PTX_OP_RED:
      return (ki.space == PTX_SP_SHARED || ki.space == PTX_SP_SHARED_CLUSTER)
                 ? FEAT_C_ATOMIC_SHARED : FEAT_C_ATOMIC_GLOBAL;
    case PTX_OP_CP: /* cp.async...shared.global reads global memory */
      return ki.has_global ? FEAT_C_LD_GLOBAL : FEAT_C_OTHER;
    case PTX_OP_BRA: case PTX_OP_BRX: case PTX_OP_CALL: case PTX_OP_RET:
    case PTX_OP_EXIT: case PTX_OP_TRAP:
      return FEAT_C_CONTROL;
    case PTX_OP_BAR: case PTX_OP_BARRIER: case PTX_OP_MEMBAR:
    case PTX_OP_FENCE: case PTX_OP_MBARRIER: case PTX_OP_GRIDDEPCONTROL:
      return FEAT_C_SYNC;
    case PTX_OP_SHFL: case PTX_OP_VOTE: case PTX_OP_MATCH:
    case PTX_OP_ACTIVEMASK: case PTX_OP_REDUX: case PTX_OP_ELECT:
      return FEAT_C_WARP;
    case PTX_OP_MMA: case PTX_OP_WMMA: case PTX_OP_WGMMA:
    case PTX_OP_LDMATRIX: case PTX_OP_STMATRIX:
      return FEAT_C_TENSOR;
    case PTX_OP_TEX: case PTX_OP_TLD4: case PTX_OP_TXQ: case PTX_OP_SULD:
    case PTX_OP_SUST: case PTX_OP_SURED: case PTX_OP_SUQ:
      return FEAT_C_TEXTURE;
    case PTX_OP_ALLOCA: case PTX_OP_APPLYPRIORITY: case PTX_OP_BRKPT:
    case PTX_OP_CREATEPOLICY: case PTX_OP_DISCARD: case PTX_OP_GETCTARANK:
    case PTX_OP_MAPA: case PTX_OP_MULTIMEM: case PTX_OP_NANOSLEEP:
    case PTX_OP_PMEVENT: case PTX_OP_PREFETCH: case PTX_OP_PREFETCHU:
    case PTX_OP_SETMAXNREG: case PTX_OP_STACKRESTORE: case PTX_OP_STACKSAVE:
      return FEAT_C_OTHER;
    case PTX_OP_COUNT:
      break;
  }
  return FEAT_C_OTHER;
}

feat_class feat_class_of_key(const char *key) {
  key_info ki;
  key_decode(key, &ki);
  return class_of(&ki);
}

unsigned feat_mem_bytes_of_key(const char *key) {
  key_info ki;
  key_decode(key, &ki);
  switch (ki.op) {
    case PTX_OP_LD: case PTX_OP_LDU: case PTX_OP_ST:
    case PTX_OP_ATOM: case PTX_OP_RED:
      return ki.vec * ki.tsize;
    default:
      return 0;
  }
}

/* ------------------------------------------------------ static features -- */

/* Inlined view of one function: op counts per module key plus CFG sums. */
typedef struct agg {
  double *ops;       /* m->nkeys counts */
  double blocks;     /* non-empty basic blocks */
  double loops;      /* natural loops */
  double depth;      /* deepest loop nesting, call-site depth included */
} agg;

/* A growable list of indices: the functions and variables one kernel
   touches, so that the work per kernel follows its call tree rather than
   the module's size (a module of thousands of kernels would otherwise cost
   kernels x functions). */
typedef struct idxlist {
  uint32_t *v;
  size_t n, cap;
} idxlist;

static int idx_push(idxlist *l, uint32_t x) {
  if (l->n == l->cap) {
    size_t nc = l->cap ? l->cap * 2 : 16;
    uint32_t *nv = realloc(l->v, nc * sizeof *nv);
    if (!nv) return -1;
    l->v = nv;
    l->cap = nc;
  }
  l->v[l->n++] = x;
  return 0;
}

typedef struct sctx {
  const ptx_module *m;
  agg **memo;        /* per function: context-free result, or NULL */
  uint8_t *on_stack; /* per function: being expanded */
  idxlist memoized;  /* the functions whose memo entry is set */
} sctx;

static agg *agg_new(uint32_t nkeys) {
  agg *a = calloc(1, sizeof *a);
  if (!a) return NULL;
  a->ops = calloc(nkeys ? nkeys : 1, sizeof *a->ops);
  if (!a->ops) { free(a); return NULL; }
  return a;
}

static void agg_free(agg *a) {
  if (!a) return;
  free(a->ops);
  free(a);
}

/* Module function index called by instruction in, or -1 (indirect call). */
static long call_target(const ptx_module *m, const ptx_func *f,
                        const ptx_insn *in) {
  for (unsigned j = 0; j < in->nopnd; j++) {
    const ptx_operand *o = ptx_insn_opnd(f, in, j);
    if (!o) break;
    if (o->kind == PTX_OPND_FUNC && o->u.func < m->nfuncs) return (long)o->u.func;
  }
  return -1;
}

/* Expand function fi into *res.  *clean: the result does not depend on the
 * call stack (it is memoised and owned by the context); otherwise the caller
 * frees it.  0 or -1 on ENOMEM. */
static int expand(sctx *c, uint32_t fi, agg **res, int *clean) {
  const ptx_module *m = c->m;
  if (c->memo[fi]) { *res = c->memo[fi]; *clean = 1; return 0; }
  const ptx_func *f = &m->funcs[fi];
  agg *a = agg_new(m->nkeys);
  if (!a) return -1;
  int cl = 1;
  c->on_stack[fi] = 1;
  const ptx_cfg *cfg = f->cfg;
  for (uint32_t i = 0; i < f->ninsns; i++)
    if (f->insns[i].key < m->nkeys) a->ops[f->insns[i].key] += 1;
  if (cfg) {
    for (uint32_t b = 0; b < cfg->nblocks; b++) {
      if (cfg->blocks[b].count) a->blocks += 1;
      if (cfg->blocks[b].loop_depth > a->depth) a->depth = cfg->blocks[b].loop_depth;
    }
    a->loops = cfg->nloops;
  }
  for (uint32_t i = 0; i < f->ninsns; i++) {
    const ptx_insn *in = &f->insns[i];
    if (in->op != PTX_OP_CALL) continue;
    long g = call_target(m, f, in);
    if (g < 0 || !m->funcs[g].has_body) continue;
    if (c->on_stack[g]) { cl = 0; continue; }
    agg *s = NULL;
    int scl = 0;
    if (expand(c, (uint32_t)g, &s, &scl)) { c->on_stack[fi] = 0; agg_free(a); return -1; }
    for (uint32_t k = 0; k < m->nkeys; k++) a->ops[k] += s->ops[k];
    a->blocks += s->blocks;
    a->loops += s->loops;
    double d = (cfg && i < f->ninsns ? cfg->blocks[cfg->block_of[i]].loop_depth : 0) + s->depth;
    if (d > a->depth) a->depth = d;
    if (!scl) { cl = 0; agg_free(s); }
  }
  c->on_stack[fi] = 0;
  if (cl) {
    if (idx_push(&c->memoized, fi)) { agg_free(a); return -1; }
    c->memo[fi] = a;
  }
  *res = a;
  *clean = cl;
  return 0;
}

/* Mark every function reachable from fi through direct calls and list it
   in *list.  0, or -1 on ENOMEM. */
static int mark_reach(const ptx_module *m, uint32_t fi, uint8_t *seen, idxlist *list) {
  if (seen[fi]) return 0;
  seen[fi] = 1;
  if (idx_push(list, fi)) return -1;
  const ptx_func *f = &m->funcs[fi];
  for (uint32_t i = 0; i < f->ninsns; i++) {
    if (f->insns[i].op != PTX_OP_CALL) continue;
    long g = call_target(m, f, &f->insns[i]);
    if (g >= 0 && mark_reach(m, (uint32_t)g, seen, list)) return -1;
  }
  return 0;
}

/* Mark module variables named by operands of f (address bases and symbols)
   and list each newly marked one in *list.  0, or -1 on ENOMEM. */
static int mark_vars(const ptx_module *m, const ptx_func *f, uint8_t *used, idxlist *list) {
  for (uint32_t p = 0; p < f->nopnds; p++) {
    const ptx_operand *o = &f->opnds[p];
    uint32_t v;
    if (o->kind == PTX_OPND_ADDR && o->u.addr.base_kind == PTX_OPND_SYM &&
        !o->u.addr.sym_local && o->u.addr.base < m->nvars)
      v = o->u.addr.base;
    else if (o->kind == PTX_OPND_SYM && !o->sym_local && o->u.sym < m->nvars)
      v = o->u.sym;
    else
      continue;
    if (used[v]) continue;
    used[v] = 1;
    if (idx_push(list, v)) return -1;
  }
  return 0;
}

/* prefix + rest into buf (cap bytes, truncated like snprintf); the
   feature names of one kernel are built this way, not with snprintf, which
   cost a tenth of feat_static. */
static const char *join_name(char *buf, size_t cap, const char *prefix, const char *rest) {
  size_t a = strlen(prefix), b = strlen(rest);
  if (a >= cap) a = cap - 1;
  if (b >= cap - a) b = cap - a - 1;
  memcpy(buf, prefix, a);
  memcpy(buf + a, rest, b);
  buf[a + b] = 0;
  return buf;
}

static int fail_oom(const ptx_module *m, const ptx_func *k, ptx_error *err) {
  if (err) {
    err->line = k->line;
    err->col = 1;
    snprintf(err->msg, sizeof err->msg, "%s:%u:1: error: out of memory computing static features of %s",
             m->filename ? m->filename : "<ptx>", k->line, k->name ? k->name : "?");
  }
  return -1;
}

/* Register groups: see docs/features.md. */
static const char *reg_group(ptx_type t) {
  switch (t) {
    case PTX_T_PRED: return "pred";
    case PTX_T_B8: case PTX_T_U8: case PTX_T_S8:
    case PTX_T_B16: case PTX_T_U16: case PTX_T_S16:
    case PTX_T_F16: case PTX_T_BF16: return "b16";
    case PTX_T_B32: case PTX_T_U32: case PTX_T_S32:
    case PTX_T_F16X2: case PTX_T_BF16X2: case PTX_T_TF32:
    case PTX_T_E4M3X2: case PTX_T_E5M2X2:
    case PTX_T_U16X2: case PTX_T_S16X2: return "b32";
    case PTX_T_B64: case PTX_T_U64: case PTX_T_S64: return "b64";
    case PTX_T_B128: return "b128";
    case PTX_T_F32: return "f32";
    case PTX_T_F64: return "f64";
    default: return NULL;
  }
}

static const char *const reg_groups[] = {"pred", "b16", "b32", "b64", "b128", "f32", "f64"};

int feat_static(ptx_module *m, const ptx_func *k, feat_vec *out, ptx_error *err) {
  if (!m || !k || !out) return -1;
  if (k < m->funcs || k >= m->funcs + m->nfuncs) {
    if (err) {
      err->line = err->col = 0;
      snprintf(err->msg, sizeof err->msg, "%s: error: kernel is not part of this module",
               m->filename ? m->filename : "<ptx>");
    }
    return -1;
  }
  if (ptx_cfg_build(m, err)) return -1;
  uint32_t ki = (uint32_t)(k - m->funcs);
  sctx c = {m, calloc(m->nfuncs, sizeof(agg *)), calloc(m->nfuncs, 1), {0}};
  uint8_t *reach = calloc(m->nfuncs, 1);
  uint8_t *used = calloc(m->nvars ? m->nvars : 1, 1);
  idxlist reached = {0}, named = {0};
  agg *a = NULL;
  int clean = 0, rc = -1;
  char name[1024];
  if (!c.memo || !c.on_stack || !reach || !used) goto out;
  if (expand(&c, ki, &a, &clean)) goto out;

  /* Opcode keys, classes and the derived counts. */
  double cls[FEAT_C_COUNT] = {0}, insns = 0, branches = 0, calls = 0;
  for (uint32_t key = 0; key < m->nkeys; key++) {
    double n = a->ops[key];
    if (n == 0) continue;
    const char *ks = m->keys[key];
    if (feat_set(out, join_name(name, sizeof name, "static.op.", ks), n)) goto out;
    key_info kinfo;
    key_decode(ks, &kinfo);
    cls[class_of(&kinfo)] += n;
    insns += n;
    if (kinfo.op == PTX_OP_BRA || kinfo.op == PTX_OP_BRX) branches += n;
    if (kinfo.op == PTX_OP_CALL) calls += n;
  }
  for (int cc = 0; cc < FEAT_C_COUNT; cc++) {
    if (feat_set(out, join_name(name, sizeof name, "static.class.", feat_class_name((feat_class)cc)),
                 cls[cc]))
      goto out;
  }
  /* instruction-level parallelism of the kernel's own reachable blocks:
     instructions over the sum of the blocks' critical paths */
  double bins = 0, bchain = 0;
  for (uint32_t b = 0; k->cfg && b < k->cfg->nblocks; b++)
    if (k->cfg->blocks[b].reachable) {
      bins += k->cfg->blocks[b].count;
      bchain += k->cfg->blocks[b].chain;
    }
  if (feat_set(out, "static.ilp", bchain > 0 ? bins / bchain : 0)) goto out;
  if (feat_set(out, "static.insns", insns) || feat_set(out, "static.blocks", a->blocks) ||
      feat_set(out, "static.loops", a->loops) ||
      feat_set(out, "static.max_loop_depth", a->depth) ||
      feat_set(out, "static.branches", branches) || feat_set(out, "static.calls", calls))
    goto out;

  /* Registers declared by the kernel itself. */
  for (size_t g = 0; g < sizeof reg_groups / sizeof *reg_groups; g++) {
    if (feat_set(out, join_name(name, sizeof name, "static.regs.", reg_groups[g]), 0)) goto out;
  }
  for (uint32_t r = 0; r < k->nregs; r++) {
    const char *g = reg_group((ptx_type)k->regs[r].type);
    if (!g) continue;
    if (feat_add(out, join_name(name, sizeof name, "static.regs.", g),
                 k->regs[r].vec ? k->regs[r].vec : 1))
      goto out;
  }

  /* Memory: the kernel, every function it can reach, the module variables
   * they name. */
  if (mark_reach(m, ki, reach, &reached)) goto out;
  double shared = 0, local = 0, cnst = 0;
  for (size_t r = 0; r < reached.n; r++) {
    const ptx_func *f = &m->funcs[reached.v[r]];
    if (mark_vars(m, f, used, &named)) goto out;
    for (uint32_t v = 0; v < f->nvars; v++) {
      if (f->vars[v].space == PTX_SP_SHARED) shared += (double)f->vars[v].size;
      else if (f->vars[v].space == PTX_SP_LOCAL) local += (double)f->vars[v].size;
    }
  }
  for (size_t u = 0; u < named.n; u++) {
    uint32_t v = named.v[u];
    switch (m->vars[v].space) {
      case PTX_SP_SHARED: shared += (double)m->vars[v].size; break;
      case PTX_SP_LOCAL: local += (double)m->vars[v].size; break;
      case PTX_SP_CONST: cnst += (double)m->vars[v].size; break;
      default: break;
    }
  }
  /* Parameters laid out in order, each at its alignment. */
  size_t poff = 0;
  ptx_param_layout(k, NULL, &poff, NULL);
  if (feat_set(out, "static.shared_bytes", shared) ||
      feat_set(out, "static.local_bytes", local) ||
      feat_set(out, "static.const_bytes", cnst) ||
      feat_set(out, "static.param_bytes", (double)poff) ||
      feat_set(out, "static.params", k->nparams))
    goto out;
  rc = 0;

out:
  if (a && !clean) agg_free(a);
  if (c.memo)
    for (size_t i = 0; i < c.memoized.n; i++) agg_free(c.memo[c.memoized.v[i]]);
  free(c.memoized.v);
  free(reached.v);
  free(named.v);
  free(c.memo);
  free(c.on_stack);
  free(reach);
  free(used);
  if (rc) fail_oom(m, k, err); /* every failure after the CFG is ENOMEM */
  return rc;
}

int feat_ptxas(const fe_ptxas_kernel *k, const char *arch, feat_vec *out) {
  static const char *const what[] = {"registers", "spill_store_bytes", "spill_load_bytes",
                                     "stack_bytes", "smem_bytes"};
  double val[] = {k->registers, k->spill_store_bytes, k->spill_load_bytes, k->stack_bytes,
                  k->smem_bytes};
  char name[128];
  for (size_t i = 0; i < sizeof what / sizeof *what; i++) {
    snprintf(name, sizeof name, "ptxas.%s.%s", arch, what[i]);
    if (feat_set(out, name, val[i] < 0 ? 0 : val[i])) return -1;
  }
  return 0;
}
