/*
 * emu_load.c -- loading a parsed PTX module onto the emulator
 * (emu_module_load): module-scope variables allocated and initialised,
 * shared memory laid out, every instruction checked and prepared into an
 * eop (emu_eng.h) -- operands flattened into register-file slots, the
 * ALU handler chosen, engine kinds, call sequences, texture forms -- and
 * per function the frame layout, the local stack depth and the registers
 * a new frame must zero (zero_plan).  An unsupported instruction is named
 * with its line here, never in the middle of a run.  emu.c's header
 * describes the address windows and the engine the result feeds.
 */
#include "emulator/emu.h"
#include "emulator/emu_eng.h"
#include "emulator/emu_int.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------- preparation -- */

typedef struct prep {
  emu_module *em;
  efunc *fn;
  cslot *cs;
  uint32_t ncs, capcs;
  uint32_t nextslot;
  uint32_t sreg_slot[PTX_SR_COUNT];
  char *err;
  size_t cap;
  unsigned nbad;
  char first_bad[512];
  unsigned fn_nbad;      /* unsupported instructions of the function being prepared */
  char fn_bad[512];      /* its first */
  char whybuf[200];      /* a why that names something (prep_call) */
} prep;

static int add_cs(prep *P, uint8_t kind, uint64_t v, uint32_t *slot) {
  for (uint32_t i = 0; i < P->ncs; i++)
    if (P->cs[i].kind == kind && P->cs[i].v == v) {
      *slot = P->cs[i].slot;
      return 0;
    }
  if (P->ncs == P->capcs) {
    uint32_t nc = P->capcs ? P->capcs * 2 : 32;
    cslot *n = realloc(P->cs, nc * sizeof *n);
    if (!n) return -1;
    P->cs = n;
    P->capcs = nc;
  }
  P->cs[P->ncs].slot = P->nextslot;
  P->cs[P->ncs].kind = kind;
  P->cs[P->ncs].v = v;
  P->ncs++;
  *slot = P->nextslot++;
  return 0;
}

static void bad(prep *P, const ptx_insn *in, const char *why) {
  char where[4200];
  if (P->fn_nbad++ == 0)
    snprintf(P->fn_bad, sizeof P->fn_bad, "%s: unsupported instruction '%s' (%s)",
             ptx_insn_where(P->em->m, in, where, sizeof where), P->em->m->keys[in->key], why);
  if (P->nbad++ == 0) memcpy(P->first_bad, P->fn_bad, sizeof P->first_bad);
}

/* Value of a symbol (module var, function var or function) as a slot. */
static int sym_slot(prep *P, const ptx_operand *o, int local, uint32_t sym,
                    uint32_t *slot, const char **why) {
  emu_module *em = P->em;
  const ptx_func *f = P->fn->f;
  if (!local) {
    if (sym >= em->m->nvars) { *why = "bad symbol"; return 1; }
    if (em->vaddr[sym] == UINT64_MAX) { *why = "symbol of an unsupported state space"; return 1; }
    return add_cs(P, CS_IMM, em->vaddr[sym], slot);
  }
  if (sym >= f->nvars) { *why = "bad local symbol"; return 1; }
  const ptx_var *v = &f->vars[sym];
  if (f->is_entry && sym < f->nparams)
    return add_cs(P, CS_IMM, EMU_PARAM_WIN + P->fn->voff[sym], slot);
  switch (v->space) {
    case PTX_SP_LOCAL: case PTX_SP_PARAM:
      return add_cs(P, CS_FRAME, P->fn->voff[sym], slot);
    case PTX_SP_SHARED:
      return add_cs(P, CS_IMM, P->fn->voff[sym], slot);
    default:
      *why = "function-scope variable of an unsupported state space";
      return 1;
  }
  (void)o;
}

/* Slot of a value operand; 1 with *why when unsupported, -1 on ENOMEM. */
static int opnd_slot(prep *P, const ptx_operand *o, uint32_t *slot,
                     const char **why) {
  const ptx_func *f = P->fn->f;
  switch (o->kind) {
    case PTX_OPND_REG:
      if (o->u.reg >= f->nregs) { *why = "bad register"; return 1; }
      *slot = o->u.reg;
      return 0;
    case PTX_OPND_SINK:
      *slot = P->fn->sink_slot;
      return 0;
    case PTX_OPND_SREG:
      if (o->u.sreg >= PTX_SR_COUNT) { *why = "bad special register"; return 1; }
      if (o->u.sreg >= PTX_SR_RESERVED_SMEM_BEGIN && o->u.sreg <= PTX_SR_RESERVED_SMEM_1)
        P->em->resv = 1;
      if (P->sreg_slot[o->u.sreg] == NONE) {
        if (add_cs(P, CS_SREG, o->u.sreg, &P->sreg_slot[o->u.sreg])) return -1;
      }
      *slot = P->sreg_slot[o->u.sreg];
      return 0;
    case PTX_OPND_IMM_INT:
      return add_cs(P, CS_IMM, (uint64_t)o->u.i, slot);
    case PTX_OPND_IMM_F32:
      return add_cs(P, CS_IMM, o->u.f32bits, slot);
    case PTX_OPND_IMM_F64:
      return add_cs(P, CS_IMM, o->u.f64bits, slot);
    case PTX_OPND_SYM:
      return sym_slot(P, o, o->sym_local, o->u.sym, slot, why);
    case PTX_OPND_FUNC:
      return add_cs(P, CS_IMM, EMU_FUNC_WIN + o->u.func, slot);
    default:
      *why = "operand kind not supported here";
      return 1;
  }
}


static unsigned reg_width(const ptx_func *f, uint32_t slot) {
  if (slot >= f->nregs) return 8;
  unsigned t = f->regs[slot].type;
  unsigned s = ptx_type_size((ptx_type)t);
  if (t == PTX_T_PRED) return 1;
  return s ? s : 8;
}

/* Engine kind of an opcode, or -1 when the ALU decides. */
static int engine_kind(const ptx_module *m, const ptx_insn *in) {
  switch ((ptx_op)in->op) {
    case PTX_OP_LD: case PTX_OP_LDU: return K_LD;
    case PTX_OP_ST: return K_ST;
    case PTX_OP_ATOM: case PTX_OP_RED: return K_ATOM;
    case PTX_OP_PREFETCH: case PTX_OP_PREFETCHU: case PTX_OP_MEMBAR:
    case PTX_OP_FENCE: case PTX_OP_NANOSLEEP: case PTX_OP_PMEVENT:
    case PTX_OP_GRIDDEPCONTROL:
      return K_NOP;
    case PTX_OP_CVTA: return K_CVTA;
    case PTX_OP_ISSPACEP: return K_ISSPACEP;
    case PTX_OP_BRA: return K_BRA;
    case PTX_OP_BRX: return K_BRX;
    case PTX_OP_CALL: return K_CALL;
    case PTX_OP_RET: return K_RET;
    case PTX_OP_EXIT: return K_EXIT;
    case PTX_OP_TRAP: return K_TRAP;
    case PTX_OP_BAR: case PTX_OP_BARRIER:
      if (strstr(m->keys[in->key], ".warp")) return K_NOP; /* bar.warp.sync */
      return K_BAR;
    case PTX_OP_SHFL: return K_SHFL;
    case PTX_OP_VOTE: return K_VOTE;
    case PTX_OP_MATCH: return K_MATCH;
    case PTX_OP_ACTIVEMASK: return K_ACTIVEMASK;
    case PTX_OP_REDUX: return K_REDUX;
    case PTX_OP_ELECT: return K_ELECT;
    case PTX_OP_TEX: return K_TEX;
    case PTX_OP_SULD: return K_SULD;
    case PTX_OP_SUST: return K_SUST;
    default: return -1;
  }
}

/* Flatten operands into d/s slots (the emu_int.h rule); the address
   operand goes to abase/aoff, a label to x.  1 with *why when unsupported. */
static int flatten(prep *P, const ptx_insn *in, eop *e, int first_is_dst,
                   const char **why) {
  const ptx_func *f = P->fn->f;
  int rc;
  for (unsigned j = 0; j < in->nopnd; j++) {
    const ptx_operand *o = ptx_insn_opnd(f, in, j);
    if (!o) { *why = "missing operand"; return 1; }
    int dst = (j == 0 && first_is_dst) || (j == 1 && o->pipe && first_is_dst);
    if (o->kind == PTX_OPND_ADDR) {
      if (o->n) { *why = "texture coordinates"; return 1; }
      e->aoff = o->u.addr.offset;
      if (o->u.addr.base_kind == PTX_OPND_REG) {
        if (o->u.addr.base >= f->nregs) { *why = "bad register"; return 1; }
        e->abase = o->u.addr.base;
      } else if (o->u.addr.base_kind == PTX_OPND_SYM) {
        rc = sym_slot(P, o, o->u.addr.sym_local, o->u.addr.base, &e->abase, why);
        if (rc) return rc;
      } else {
        rc = add_cs(P, CS_IMM, 0, &e->abase);
        if (rc) return rc;
        e->aoff = (int64_t)o->u.addr.base + o->u.addr.offset;
      }
      continue;
    }
    if (o->kind == PTX_OPND_LABEL) {
      if (o->u.label >= f->nlabels) { *why = "bad label"; return 1; }
      e->x = f->labels[o->u.label].insn;
      continue;
    }
    unsigned cnt = 1;
    const ptx_operand *el = o;
    if (o->kind == PTX_OPND_VEC) { cnt = o->n; el = o + 1; }
    else if (o->kind == PTX_OPND_LIST) { *why = "operand list"; return 1; }
    for (unsigned k = 0; k < cnt; k++) {
      uint32_t slot;
      rc = opnd_slot(P, &el[k], &slot, why);
      if (rc) return rc;
      if (dst) {
        if (e->o.nd >= EMU_MAX_DST) { *why = "too many destination operands"; return 1; }
        e->dw[e->o.nd] = (uint8_t)reg_width(f, slot);
        e->o.d[e->o.nd++] = slot;
      } else {
        if (e->o.ns >= EMU_MAX_SRC) { *why = "too many source operands"; return 1; }
        if (el[k].neg) e->o.sneg |= (uint8_t)(1u << e->o.ns);
        if (el[k].kind == PTX_OPND_SREG && is_clock_sreg(el[k].u.sreg)) e->clock = 1;
        e->o.s[e->o.ns++] = slot;
      }
    }
  }
  return 0;
}

/* eop.arun of every instruction of fn: the plain ALU ops (unguarded, no
   clock-like slot, not an emu_mma.c op) from it to the first other
   instruction or its block's end.  run_warp calls such a run's handlers
   back to back, without the guard test and dispatch of each (pnpoly's
   loop is blocks of 120 such ops). */
static void alu_runs(efunc *fn) {
  const ptx_cfg *g = fn->f->cfg;
  for (uint32_t b = 0; b < g->nblocks; b++) {
    const ptx_block *bl = &g->blocks[b];
    uint32_t next = 0;
    for (uint32_t i = bl->first + bl->count; i-- > bl->first;) {
      eop *e = &fn->ops[i];
      int plain = e->k == K_ALU && e->guard == NONE && !e->clock && e->o.alu;
      next = plain ? next + 1 : 0;
      e->arun = next;
    }
  }
}

/* The loader's services to emu_xop_prepare (emu_int.h, emu_xprep). */
static int xp_value(void *ctx, const ptx_operand *o, uint32_t *slot, const char **why) {
  if (!o) { *why = "missing operand"; return 1; }
  return opnd_slot(ctx, o, slot, why);
}
static int xp_address(void *ctx, const ptx_operand *o, uint32_t *slot, int64_t *off,
                      const char **why) {
  prep *P = ctx;
  const ptx_func *f = P->fn->f;
  if (o->kind != PTX_OPND_ADDR || o->n) { *why = "expected an address"; return 1; }
  *off = o->u.addr.offset;
  if (o->u.addr.base_kind == PTX_OPND_REG) {
    if (o->u.addr.base >= f->nregs) { *why = "bad register"; return 1; }
    *slot = o->u.addr.base;
    return 0;
  }
  if (o->u.addr.base_kind == PTX_OPND_SYM)
    return sym_slot(P, o, o->u.addr.sym_local, o->u.addr.base, slot, why);
  *off = (int64_t)o->u.addr.base + o->u.addr.offset;
  return add_cs(P, CS_IMM, 0, slot);
}
static uint32_t xp_scratch(void *ctx, unsigned n) {
  prep *P = ctx;
  uint32_t s = P->nextslot;
  P->nextslot += n;
  return s;
}

static int call_args(prep *P, const ptx_operand *o, uint32_t *n, carg **out,
                     const char **why) {
  const ptx_func *f = P->fn->f;
  *n = o->n;
  *out = calloc(o->n ? o->n : 1, sizeof **out);
  if (!*out) return -1;
  for (uint32_t k = 0; k < o->n; k++) {
    const ptx_operand *el = o + 1 + k;
    if (el->kind == PTX_OPND_SYM && el->sym_local && el->u.sym < f->nvars &&
        (f->vars[el->u.sym].space == PTX_SP_PARAM ||
         f->vars[el->u.sym].space == PTX_SP_LOCAL) &&
        !(f->is_entry && el->u.sym < f->nparams)) {
      (*out)[k].isvar = 1;
      (*out)[k].v = el->u.sym;
    } else {
      uint32_t slot;
      int rc = opnd_slot(P, el, &slot, why);
      if (rc) return rc;
      (*out)[k].v = slot;
    }
  }
  return 0;
}

static int prep_call(prep *P, const ptx_insn *in, eop *e, const char **why) {
  const ptx_func *f = P->fn->f;
  ecall *c = calloc(1, sizeof *c);
  if (!c) return -1;
  e->call = c;
  int seen_func = 0, rc;
  for (unsigned j = 0; j < in->nopnd; j++) {
    const ptx_operand *o = ptx_insn_opnd(f, in, j);
    if (!o) { *why = "missing operand"; return 1; }
    if (o->kind == PTX_OPND_FUNC) {
      if (o->u.func >= P->em->m->nfuncs) { *why = "bad function"; return 1; }
      const ptx_func *cf = &P->em->m->funcs[o->u.func];
      if (!cf->has_body) {
        if (strcmp(cf->name, "vprintf") == 0) {
          e->k = K_PRINTF;
        } else if (strcmp(cf->name, "__assertfail") == 0) {
          e->k = K_ASSERT; /* device assert(): reached only when it failed */
        } else {
          const char *n = cf->name;
          snprintf(P->whybuf, sizeof P->whybuf, "a call of %s, %s", n,
                   !strcmp(n, "malloc") || !strcmp(n, "free")
                       ? "device-side malloc/free, which the emulator does not provide"
                   : strstr(n, "cudaLaunchDevice") || strstr(n, "cudaGetParameterBuffer") ||
                           strstr(n, "cudaCDP")
                       ? "dynamic parallelism (a kernel launching kernels), which the emulator "
                         "does not provide"
                       : "a function defined in no file of this module (relocatable device "
                         "code, or a device library the emulator does not provide)");
          *why = P->whybuf;
          return 1;
        }
      } else {
        c->callee = &P->em->fn[o->u.func];
      }
      seen_func = 1;
    } else if (o->kind == PTX_OPND_LIST) {
      rc = seen_func ? call_args(P, o, &c->nargs, &c->args, why)
                     : call_args(P, o, &c->nrets, &c->rets, why);
      if (rc) return rc;
    } else if (o->kind == PTX_OPND_LABEL && seen_func) {
      continue; /* prototype of an indirect call: not reached */
    } else {
      *why = "indirect call";
      return 1;
    }
  }
  if (!seen_func) { *why = "indirect call"; return 1; }
  if (e->k == K_PRINTF) {
    if (c->nargs != 2) { *why = "vprintf takes two arguments"; return 1; }
    return 0;
  }
  if (e->k == K_ASSERT) {
    if (c->nargs < 4) { *why = "__assertfail takes message, file, line and function"; return 1; }
    return 0;
  }
  const ptx_func *cf = c->callee->f;
  if (c->nargs != cf->nparams || c->nrets > cf->nrets) {
    *why = "argument count does not match the callee";
    return 1;
  }
  return 0;
}

static int atom_ok(const ptx_insn *in, const char **why) {
  unsigned t = in->type, sz = ptx_type_size((ptx_type)t);
  int half = t == PTX_T_F16 || t == PTX_T_BF16 || t == PTX_T_F16X2 || t == PTX_T_BF16X2;
  if (half || sz == 2) {
    /* atom.add.noftz.f16 (atomicAdd(__half *)) and friends, atom.cas.b16 */
    if (half && (in->aux == PTX_AUX_ADD || in->aux == PTX_AUX_MIN || in->aux == PTX_AUX_MAX))
      return 1;
    if (t == PTX_T_B16 && in->aux == PTX_AUX_CAS) return 1;
    *why = "16-bit and half-precision atomics: add/min/max on halves, cas.b16";
    return 0;
  }
  if (sz != 4 && sz != 8) { *why = "atomic type not supported"; return 0; }
  switch (in->aux) {
    case PTX_AUX_ADD: case PTX_AUX_MIN: case PTX_AUX_MAX: case PTX_AUX_EXCH:
    case PTX_AUX_CAS:
      return 1;
    case PTX_AUX_INC: case PTX_AUX_DEC:
      if (t == PTX_T_U32) return 1;
      *why = "inc/dec need .u32";
      return 0;
    case PTX_AUX_AND: case PTX_AUX_OR: case PTX_AUX_XOR:
      if (t == PTX_T_F32 || t == PTX_T_F64) { *why = "bitwise atomic on a float type"; return 0; }
      return 1;
    default:
      *why = "atomic operation not supported";
      return 0;
  }
}

/*
 * tex / suld / sust: geometry and mode from the key, the handle register
 * to abase, coordinates to s[0..ncoord), destinations to d[] (tex, suld),
 * a store's values to s[ncoord..].  1 with *why when unsupported.
 */
static int prep_tex(prep *P, const ptx_insn *in, eop *e, int k, const char **why) {
  const ptx_func *f = P->fn->f;
  const char *key = P->em->m->keys[in->key];
  static const struct { const char *tok; uint8_t g; } geoms[] = {
      {".1d.", EMU_GEOM_1D}, {".2d.", EMU_GEOM_2D}, {".3d.", EMU_GEOM_3D},
      {".a1d.", EMU_GEOM_A1D}, {".a2d.", EMU_GEOM_A2D}};
  for (size_t g = 0; g < sizeof geoms / sizeof geoms[0] && !e->geom; g++)
    if (strstr(key, geoms[g].tok)) e->geom = geoms[g].g;
  if (!e->geom) { *why = "texture geometry not supported (1d, 2d, 3d, a1d, a2d are)"; return 1; }
  if (k != K_TEX) {
    if (strncmp(key, "suld.b.", 7) && strncmp(key, "sust.b.", 7)) {
      *why = "formatted surface access (.p) not supported";
      return 1;
    }
    e->smode = strstr(key, ".clamp") ? EMU_SURF_CLAMP : strstr(key, ".zero") ? EMU_SURF_ZERO
                                                                             : EMU_SURF_TRAP;
  }
  if (in->nopnd != 2) { *why = "texture offsets and depth compares not supported"; return 1; }
  const ptx_operand *addr = ptx_insn_opnd(f, in, k == K_SUST ? 0 : 1);
  const ptx_operand *data = ptx_insn_opnd(f, in, k == K_SUST ? 1 : 0);
  if (!addr || !data || addr->kind != PTX_OPND_ADDR || !addr->n) {
    *why = "expected [handle, {coordinates}]";
    return 1;
  }
  if (addr->u.addr.base_kind != PTX_OPND_REG || addr->u.addr.base >= f->nregs) {
    *why = "texture and surface references (.texref, .surfref) are not supported: use "
           "texture objects (cudaCreateTextureObject)";
    return 1;
  }
  e->abase = addr->u.addr.base;
  unsigned ncoord = addr->n, geomc = e->geom == EMU_GEOM_1D ? 1 : e->geom == EMU_GEOM_2D ? 2
                                   : e->geom == EMU_GEOM_A1D ? 2 : 4;
  if (ncoord != geomc || ncoord > EMU_MAX_SRC) { *why = "coordinate count does not match the geometry"; return 1; }
  for (unsigned c = 0; c < ncoord; c++) {
    uint32_t slot;
    int rc = opnd_slot(P, addr + 1 + c, &slot, why);
    if (rc) return rc;
    e->o.s[e->o.ns++] = slot;
  }
  e->ncoord = (uint8_t)ncoord;
  unsigned cnt = data->kind == PTX_OPND_VEC ? data->n : 1;
  const ptx_operand *el = data->kind == PTX_OPND_VEC ? data + 1 : data;
  if (data->pipe || cnt > EMU_MAX_DST || (k == K_SUST && e->o.ns + cnt > EMU_MAX_SRC)) {
    *why = "operands";
    return 1;
  }
  for (unsigned c = 0; c < cnt; c++) {
    uint32_t slot;
    int rc = opnd_slot(P, &el[c], &slot, why);
    if (rc) return rc;
    if (k == K_SUST) {
      e->o.s[e->o.ns++] = slot;
    } else {
      e->dw[e->o.nd] = (uint8_t)reg_width(f, slot);
      e->o.d[e->o.nd++] = slot;
    }
  }
  if (k == K_TEX) {
    if (in->type != PTX_T_F32 && in->type != PTX_T_S32 && in->type != PTX_T_U32) {
      *why = "texture result type not supported (.f32, .s32, .u32 are)";
      return 1;
    }
    if (in->type2 != PTX_T_F32 && in->type2 != PTX_T_S32) {
      *why = "texture coordinate type not supported (.f32, .s32 are)";
      return 1;
    }
    return 0;
  }
  unsigned sz = ptx_type_size((ptx_type)in->type);
  if (sz == 0 || sz > 8 || (in->vec && in->vec != cnt) || (!in->vec && cnt != 1)) {
    *why = "surface element type or vector width";
    return 1;
  }
  e->size = (uint8_t)sz;
  e->vec = (uint8_t)cnt;
  return 0;
}

/* The alu of an emu_mma.c op: nothing (alu_first in emu.c ran it). */
static void xop_alu(uint64_t *restrict r, const emu_op *op, uint32_t mask) {
  (void)r, (void)op, (void)mask;
}

/* Prepare instruction i of the function in P. */
static int prep_insn(prep *P, uint32_t i) {
  efunc *fn = P->fn;
  const ptx_func *f = fn->f;
  const ptx_module *m = P->em->m;
  const ptx_insn *in = &f->insns[i];
  eop *e = &fn->ops[i];
  const char *why = NULL;
  int rc;
  e->o.insn = in;
  e->o.cc = EMU_NOSLOT;
  e->guard = NONE;
  e->x = NONE;
  e->abase = NONE;
  if (in->guard >= 0) {
    if ((uint32_t)in->guard >= f->nregs) { bad(P, in, "bad guard"); return 0; }
    e->guard = (uint32_t)in->guard;
    e->gneg = in->guard_neg;
  }
  unsigned fl = ptx_op_info_table[in->op].flags;
  {
    /* tensor cores, matrix loads, asynchronous copies (emu_mma.c) */
    emu_xprep xp = {P, m, f, xp_value, xp_address, xp_scratch};
    rc = emu_xop_prepare(&xp, in, &e->xop, &why);
    if (rc < 0) return -1;
    if (rc > 0) {
      if (!e->xop) bad(P, in, why ? why : "not supported");
      e->k = K_ALU; /* run by alu_first (emu.c) */
      e->clock = EMU_CLOCK_XOP;
      e->o.alu = xop_alu;
      return 0;
    }
  }
  int k = engine_kind(m, in);
  e->mbytes = feat_mem_bytes_of_key(m->keys[in->key]);
  if (k < 0) {
    /* the ALU's business */
    rc = flatten(P, in, e, !(fl & PTX_OPF_NODST), &why);
    if (rc < 0) return -1;
    if (rc > 0) { bad(P, in, why); return 0; }
    if ((in->flags & PTX_F_CC) || in->op == PTX_OP_ADDC ||
        in->op == PTX_OP_SUBC || in->op == PTX_OP_MADC)
      e->o.cc = fn->cc_slot;
    const char *awhy = NULL;
    e->o.alu = emu_alu_select(in, e->o.nd, e->o.ns, &awhy);
    if (!e->o.alu) {
      bad(P, in, awhy ? awhy : "instruction not supported by the emulator");
      return 0;
    }
    e->k = K_ALU;
    return 0;
  }
  e->k = (uint8_t)k;
  switch (k) {
    case K_LD: case K_ST: case K_ATOM: {
      rc = flatten(P, in, e, k == K_LD || (k == K_ATOM && in->op == PTX_OP_ATOM), &why);
      if (rc < 0) return -1;
      if (rc > 0) { bad(P, in, why); return 0; }
      if (e->abase == NONE) { bad(P, in, "no address operand"); return 0; }
      unsigned sz = ptx_type_size((ptx_type)in->type);
      if (in->type == PTX_T_PRED || sz == 0 || sz > 8) {
        bad(P, in, "access type not supported");
        return 0;
      }
      e->size = (uint8_t)sz;
      e->vec = in->vec ? in->vec : 1;
      e->sext = (uint8_t)type_signed(in->type);
      e->space = in->space ? in->space : PTX_SP_GENERIC;
      e->a32 = e->abase < f->nregs && reg_width(f, e->abase) <= 4;
      if (e->space == PTX_SP_SHARED_CLUSTER) e->space = PTX_SP_SHARED;
      if (e->space == PTX_SP_TEX || e->space == PTX_SP_REG) { bad(P, in, "state space not supported"); return 0; }
      if (k == K_LD && e->o.nd != e->vec) { bad(P, in, "vector width does not match the destination"); return 0; }
      if (k == K_ST && e->o.ns != e->vec) { bad(P, in, "vector width does not match the source"); return 0; }
      if (k == K_ATOM) {
        if (!atom_ok(in, &why)) { bad(P, in, why); return 0; }
        if (e->vec != 1) { bad(P, in, "vector atomics not supported"); return 0; }
        if (e->space != PTX_SP_GLOBAL && e->space != PTX_SP_SHARED &&
            e->space != PTX_SP_GENERIC) {
          bad(P, in, "atomic state space not supported");
          return 0;
        }
        e->isred = in->op == PTX_OP_RED;
        unsigned need = in->aux == PTX_AUX_CAS ? 2 : 1;
        if (e->o.ns != need || (!e->isred && e->o.nd != 1)) { bad(P, in, "operands"); return 0; }
      }
      if (!e->mbytes) e->mbytes = sz * e->vec;
      return 0;
    }
    case K_CVTA: case K_ISSPACEP:
      rc = flatten(P, in, e, 1, &why);
      if (rc < 0) return -1;
      if (rc > 0 || e->o.nd != 1 || e->o.ns != 1) { bad(P, in, why ? why : "operands"); return 0; }
      e->space = in->space;
      e->size = (uint8_t)ptx_type_size((ptx_type)in->type);
      if (!e->size) e->size = 8;
      return 0;
    case K_BRX: {
      rc = flatten(P, in, e, 0, &why);
      if (rc < 0) return -1;
      if (rc > 0) { bad(P, in, why); return 0; }
      const ptx_operand *o = ptx_insn_opnd(f, in, 1);
      if (e->o.ns != 1 || !o || o->kind != PTX_OPND_LABEL || o->u.label >= f->nlabels ||
          !f->labels[o->u.label].ntargets) {
        bad(P, in, "brx.idx without an index and a .branchtargets table");
        return 0;
      }
      e->tab = &f->labels[o->u.label];
      e->x = NONE;
      for (uint32_t t = 0; t < e->tab->ntargets; t++)
        if (e->tab->targets[t] >= f->nlabels || f->labels[e->tab->targets[t]].insn > f->ninsns) {
          bad(P, in, "bad .branchtargets entry");
          return 0;
        }
      return 0;
    }
    case K_BRA:
      rc = flatten(P, in, e, 0, &why);
      if (rc < 0) return -1;
      if (rc > 0 || e->x == NONE) { bad(P, in, why ? why : "branch without a label"); return 0; }
      return 0;
    case K_CALL:
      rc = prep_call(P, in, e, &why);
      if (rc < 0) return -1;
      if (rc > 0) bad(P, in, why);
      return 0;
    case K_RET: case K_EXIT: case K_TRAP: case K_NOP:
      return 0;
    case K_TEX: case K_SULD: case K_SUST:
      rc = prep_tex(P, in, e, k, &why);
      if (rc < 0) return -1;
      if (rc > 0) bad(P, in, why);
      return 0;
    case K_BAR:
      if (strstr(m->keys[in->key], "cluster")) { bad(P, in, "cluster barriers not supported"); return 0; }
      e->isred = (in->flags & PTX_F_RED) != 0;
      rc = flatten(P, in, e, e->isred, &why);
      if (rc < 0) return -1;
      if (rc > 0) { bad(P, in, why); return 0; }
      if (e->isred && (e->o.ns < 2 || (in->aux != PTX_AUX_POPC && in->aux != PTX_AUX_AND &&
                                       in->aux != PTX_AUX_OR))) {
        bad(P, in, "barrier reduction form");
        return 0;
      }
      return 0;
    default:
      rc = flatten(P, in, e, 1, &why);
      if (rc < 0) return -1;
      if (rc > 0) { bad(P, in, why); return 0; }
      e->size = (uint8_t)ptx_type_size((ptx_type)in->type);
      if (k == K_SHFL && (e->o.ns < 3 || e->o.nd < 1)) { bad(P, in, "operands"); return 0; }
      if ((k == K_VOTE || k == K_MATCH || k == K_REDUX) && (e->o.ns < 1 || e->o.nd < 1)) {
        bad(P, in, "operands");
        return 0;
      }
      if (k == K_REDUX && in->aux != PTX_AUX_ADD && in->aux != PTX_AUX_MIN &&
          in->aux != PTX_AUX_MAX && in->aux != PTX_AUX_AND &&
          in->aux != PTX_AUX_OR && in->aux != PTX_AUX_XOR) {
        bad(P, in, "redux operation not supported");
        return 0;
      }
      if (k == K_ACTIVEMASK && e->o.nd != 1) { bad(P, in, "operands"); return 0; }
      return 0;
  }
}

/* Frame layout of a function: .local and .param variables in the thread's
   local stack (kernel params excepted), .shared ones in the module layout. */
static int layout_vars(emu_module *em, efunc *fn) {
  const ptx_func *f = fn->f;
  fn->voff = calloc(f->nvars ? f->nvars : 1, sizeof *fn->voff);
  if (!fn->voff) return -1;
  uint64_t off = 0;
  if (f->is_entry && f->nparams) {
    size_t *po = calloc(f->nparams, sizeof *po);
    size_t total;
    if (!po) return -1;
    emu_param_layout(f, po, &total);
    for (uint32_t i = 0; i < f->nparams; i++) fn->voff[i] = po[i];
    free(po);
  }
  for (uint32_t i = 0; i < f->nvars; i++) {
    const ptx_var *v = &f->vars[i];
    if (f->is_entry && i < f->nparams) continue;
    uint64_t al = v->align && !v->is_ptr ? v->align : ptx_type_size((ptx_type)v->type) * (v->vec ? v->vec : 1);
    if (!al) al = 1;
    if (v->space == PTX_SP_LOCAL || v->space == PTX_SP_PARAM) {
      off = emu_align_up(off, al);
      fn->voff[i] = off;
      off += v->size;
    } else if (v->space == PTX_SP_SHARED) {
      fn->voff[i] = UINT64_MAX; /* placed by shared_layout */
    }
  }
  fn->frame = emu_align_up(off, 16);
  (void)em;
  return 0;
}

/* Deepest local stack from fn down (each frame 16-aligned). */
static uint64_t stack_need(emu_module *em, efunc *fn, int *recursive) {
  if (fn->done) return fn->stack;
  if (fn->visiting) { *recursive = 1; return 0; }
  fn->visiting = 1;
  uint64_t deepest = 0;
  for (uint32_t i = 0; i < fn->f->ninsns; i++) {
    const eop *e = &fn->ops[i];
    if (e->k == K_CALL && e->call && e->call->callee) {
      uint64_t s = stack_need(em, e->call->callee, recursive);
      if (s > deepest) deepest = s;
    }
  }
  fn->visiting = 0;
  fn->done = 1;
  fn->stack = fn->frame + deepest;
  return fn->stack;
}

/*
 * Which slots a new frame of fn must zero.  PTX leaves a register undefined
 * until it is written; the engine gives it 0 so that a kernel reading one
 * early behaves the same on every run and thread count.  Only a register
 * that some path from the entry reads before writing can show that 0, so
 * only those are zeroed (every other slot is written, lane by lane, before
 * any read of the lane; constant and special slots are filled anyway):
 * zeroing a whole register file per warp was 12 % of a saxpy emulation's
 * instructions.  The set is the live-in set of the entry block, by the classic
 * backward liveness over the CFG's blocks, with
 *   - a use: every source slot, the address base, the guard, a call's
 *     argument slots;
 *   - a definition: only an unguarded instruction's destinations that its
 *     executor writes for every lane it runs (a guarded one writes some
 *     lanes only, so it kills nothing); a call's return slots (each lane
 *     that comes back gets them); bar.red's result unless .arrive;
 *   - always zeroed: the carry flag, the sink, and the source of shfl
 *     (read from other lanes, which may never have written it).
 * A guarded bra/ret/exit and brx.idx follow the CFG's edges; a call falls
 * through to the next instruction.  Runs of zeroed slots go to fn->zr.
 * 0, or -1 on ENOMEM.
 */
#define ZP_MAX_WORDS (1u << 22) /* 32 MiB per bitset array */

static void zp_set(uint64_t *b, uint32_t s, uint32_t nr) {
  if (s < nr) b[s >> 6] |= 1ull << (s & 63);
}
static void zp_clr(uint64_t *b, uint32_t s, uint32_t nr) {
  if (s < nr) b[s >> 6] &= ~(1ull << (s & 63));
}

/* Backward transfer of one instruction: gen = (gen - def) + use. */
static void zp_insn(const eop *e, uint32_t nr, uint64_t *gen, uint64_t *kill,
                    uint64_t *force) {
  const ecall *c = e->call;
  uint32_t def[EMU_MAX_DST + 1], ndef = 0;
  if (e->guard == NONE) {
    switch (e->k) {
      case K_ALU: case K_LD: case K_TEX: case K_SULD:
        for (uint32_t j = 0; j < e->o.nd; j++) def[ndef++] = e->o.d[j];
        break;
      case K_ATOM:
        if (!e->isred && e->o.nd) def[ndef++] = e->o.d[0];
        break;
      case K_SHFL: case K_ELECT:
        for (uint32_t j = 0; j < e->o.nd && j < 2; j++) def[ndef++] = e->o.d[j];
        break;
      case K_MATCH:
        if (e->o.nd) def[ndef++] = e->o.d[0];
        if (e->o.nd > 1 && e->o.insn->aux == PTX_AUX_ALL) def[ndef++] = e->o.d[1];
        break;
      case K_CVTA: case K_ISSPACEP: case K_VOTE: case K_REDUX: case K_ACTIVEMASK:
        if (e->o.nd) def[ndef++] = e->o.d[0];
        break;
      case K_BAR:
        if (e->isred && e->o.nd && !(e->o.insn->flags & PTX_F_ARRIVE))
          def[ndef++] = e->o.d[0];
        break;
      default:
        break;
    }
  }
  for (uint32_t j = 0; j < ndef; j++) {
    zp_clr(gen, def[j], nr);
    zp_set(kill, def[j], nr);
  }
  if (eop_is_xop(e) && e->xop) {
    /* an mma reads every lane's fragment registers, an ldmatrix other
       lanes' addresses: what they read is zeroed like shfl's source */
    uint32_t xs[4 * 16 + 8];
    unsigned nx = e->guard == NONE ? emu_xop_slots(e->xop, 1, xs, 64) : 0;
    for (unsigned j = 0; j < nx; j++) {
      zp_clr(gen, xs[j], nr);
      zp_set(kill, xs[j], nr);
    }
    nx = emu_xop_slots(e->xop, 0, xs, sizeof xs / sizeof xs[0]);
    for (unsigned j = 0; j < nx; j++) {
      zp_set(gen, xs[j], nr);
      zp_set(force, xs[j], nr);
    }
  }
  if (c && e->guard == NONE && (e->k == K_CALL || e->k == K_PRINTF || e->k == K_ASSERT))
    for (uint32_t j = 0; j < c->nrets; j++)
      if (!c->rets[j].isvar) {
        zp_clr(gen, c->rets[j].v, nr);
        zp_set(kill, c->rets[j].v, nr);
      }
  for (uint32_t j = 0; j < e->o.ns; j++) zp_set(gen, e->o.s[j], nr);
  if (e->k == K_SHFL && e->o.ns) zp_set(force, e->o.s[0], nr);
  if (e->abase != NONE) zp_set(gen, e->abase, nr);
  if (e->guard != NONE) zp_set(gen, e->guard, nr);
  if (c)
    for (uint32_t j = 0; j < c->nargs; j++)
      if (!c->args[j].isvar) zp_set(gen, c->args[j].v, nr);
}

/* Slot s is zeroed: a register in set z, the carry flag or the sink. */
static int zp_zeroed(const efunc *fn, const uint64_t *z, uint32_t s) {
  if (s < fn->f->nregs) return (int)((z[s >> 6] >> (s & 63)) & 1);
  return s == fn->cc_slot || s == fn->sink_slot;
}

static int zero_plan(efunc *fn) {
  const ptx_func *f = fn->f;
  const ptx_cfg *g = f->cfg;
  uint32_t nr = f->nregs, nb = g->nblocks;
  size_t nw = ((size_t)nr + 63) / 64 + 1;
  /* a huge function (bitsets past ZP_MAX_WORDS) zeroes every register */
  int whole = (size_t)nb * nw > ZP_MAX_WORDS;
  uint64_t *mem = calloc(((whole ? 0 : (size_t)nb * 3) + 2) * nw, sizeof *mem);
  if (!mem) return -1;
  uint64_t *force = mem, *tmp = force + nw;
  if (whole) {
    memset(tmp, 0xff, nw * sizeof *tmp);
  } else {
    uint64_t *gen = tmp + nw, *kill = gen + (size_t)nb * nw, *in = kill + (size_t)nb * nw;
    for (uint32_t b = 0; b < nb; b++) {
      const ptx_block *bl = &g->blocks[b];
      for (uint32_t i = bl->first + bl->count; i-- > bl->first;)
        zp_insn(&fn->ops[i], nr, gen + b * nw, kill + b * nw, force);
    }
    for (int changed = 1; changed;) {
      changed = 0;
      for (uint32_t b = nb; b-- > 0;) {
        const ptx_block *bl = &g->blocks[b];
        memset(tmp, 0, nw * sizeof *tmp);
        for (uint32_t k = 0; k < bl->nsucc; k++)
          for (size_t x = 0; x < nw; x++) tmp[x] |= in[(size_t)bl->succ[k] * nw + x];
        for (size_t x = 0; x < nw; x++) {
          uint64_t v = gen[b * nw + x] | (tmp[x] & ~kill[b * nw + x]);
          if (v != in[b * nw + x]) {
            in[b * nw + x] = v;
            changed = 1;
          }
        }
      }
    }
    /* zeroed: live-in at the entry block (block 0), forced */
    for (size_t x = 0; x < nw; x++) tmp[x] = in[x] | force[x];
  }
  uint32_t n = 0, cap = 0, *zr = NULL;
  for (uint32_t s = 0; s < fn->nslots;) {
    if (!zp_zeroed(fn, tmp, s)) { s++; continue; }
    uint32_t t = s + 1;
    while (t < fn->nslots && zp_zeroed(fn, tmp, t)) t++;
    if (n == cap) {
      uint32_t nc = cap ? cap * 2 : 8;
      uint32_t *p = realloc(zr, 2 * (size_t)nc * sizeof *p);
      if (!p) { free(zr); free(mem); return -1; }
      zr = p;
      cap = nc;
    }
    zr[2 * n] = s;
    zr[2 * n + 1] = t - s;
    n++;
    s = t;
  }
  free(mem);
  fn->zr = zr;
  fn->nzr = n;
  return 0;
}

static void efunc_free(efunc *fn) {
  if (fn->ops) {
    for (uint32_t i = 0; i < fn->f->ninsns; i++) {
      if (eop_is_xop(&fn->ops[i])) emu_xop_free(fn->ops[i].xop);
      ecall *c = fn->ops[i].call;
      if (c) {
        free(c->args);
        free(c->rets);
        free(c);
      }
    }
  }
  free(fn->ops);
  free(fn->bad);
  free(fn->cs);
  free(fn->clock_cs);
  free(fn->bstart);
  free(fn->bend);
  free(fn->brpc);
  free(fn->voff);
  free(fn->zr);
}

void emu_module_free(emu_module *em) {
  if (!em) return;
  if (em->fn)
    for (uint32_t i = 0; i < em->m->nfuncs; i++) efunc_free(&em->fn[i]);
  free(em->fn);
  free(em->kflops);
  free(em->kop);
  free(em->kcls);
  free(em->names);
  if (em->galloc_base && em->d) {
    for (uint32_t i = 0; i < em->m->nvars; i++)
      if (em->galloc_base[i]) emu_free(em->d, em->galloc_base[i], NULL, 0);
  }
  if (em->d) {
    for (size_t i = 0; i < em->d->nmods; i++)
      if (em->d->mods[i] == em) {
        em->d->mods[i] = em->d->mods[--em->d->nmods];
        break;
      }
  }
  free(em->vaddr);
  free(em->galloc_base);
  emu__wcache_free(em->cache);
  free(em);
}


/*
 * Shared memory, kernel by kernel.  On a GPU each kernel's shared
 * variables start at offset 0 of its own CTA window; laying out every
 * kernel's variables end to end put kernel B's `.align 4` array at 0x14
 * behind kernel A's 20 bytes, and B's st.shared.v4 (which the program may
 * issue: the array is 16-aligned on the GPU) was refused as misaligned
 * (Parboil mri-gridding).  A variable has one offset for the whole module
 * (an instruction's address is prepared once, and a .func called from two
 * kernels names the same variable in both), chosen so that the variables
 * one kernel can reach -- its own and its callees' function-scope ones and
 * the module-scope ones any of them names -- never overlap: kernel by
 * kernel, each variable not yet placed goes to the lowest offset, at its
 * alignment, that overlaps none of the kernel's placed ones.  A kernel with
 * variables of its own (the common case) thus has them from 0, in
 * declaration order.  Dynamic shared memory (`extern .shared` arrays
 * without a size: all of them alias one address) starts 16-aligned after
 * the largest static part of the kernels that reach such an array, the
 * same offset in every kernel, so the array is where the kernel's code and
 * its callees' code expect it; a kernel's window is its static part, or
 * that offset plus the launch's dynamic bytes.  Limits are checked against
 * what a GPU allocates (emu_launch).
 */
typedef struct shitem {
  uint64_t *off;   /* where the offset goes (em->vaddr[i] or fn->voff[j]) */
  uint64_t size, align;
  int dynamic;     /* an unsized extern array */
} shitem;

/* Items of the module: every .shared variable, module-scope first. */
static size_t shared_items(emu_module *em, shitem *it, uint32_t *mod_item,
                           uint32_t *fn_item) {
  const ptx_module *m = em->m;
  size_t n = 0;
  for (uint32_t i = 0; i < m->nvars; i++) {
    const ptx_var *v = &m->vars[i];
    mod_item[i] = NONE;
    if (v->space != PTX_SP_SHARED) continue;
    uint64_t al = v->align ? v->align : ptx_type_size((ptx_type)v->type) * (v->vec ? v->vec : 1);
    mod_item[i] = (uint32_t)n;
    it[n++] = (shitem){&em->vaddr[i], v->size, al ? al : 1, v->is_extern && v->count == 0};
  }
  for (uint32_t fi = 0; fi < m->nfuncs; fi++) {
    const ptx_func *f = &m->funcs[fi];
    fn_item[fi] = (uint32_t)n;
    for (uint32_t j = 0; j < f->nvars; j++) {
      const ptx_var *v = &f->vars[j];
      if (v->space != PTX_SP_SHARED || (f->is_entry && j < f->nparams)) continue;
      uint64_t al = v->align && !v->is_ptr ? v->align
                                           : ptx_type_size((ptx_type)v->type) * (v->vec ? v->vec : 1);
      it[n++] = (shitem){&em->fn[fi].voff[j], v->size, al ? al : 1, v->is_extern && v->count == 0};
    }
  }
  return n;
}

/* Mark in seen[] the items kernel-reachable from function fi (its own
   shared variables, module ones its operands name, its callees'). */
static void shared_reach(const emu_module *em, uint32_t fi, uint8_t *fseen, uint8_t *seen,
                         const uint32_t *mod_item, const uint32_t *fn_item, size_t nitems) {
  const ptx_module *m = em->m;
  if (fseen[fi]) return;
  fseen[fi] = 1;
  const ptx_func *f = &m->funcs[fi];
  uint32_t end = fi + 1 < m->nfuncs ? fn_item[fi + 1] : (uint32_t)nitems;
  for (uint32_t k = fn_item[fi]; k < end; k++) seen[k] = 1;
  for (uint32_t p = 0; p < f->nopnds; p++) {
    const ptx_operand *o = &f->opnds[p];
    uint32_t v = NONE;
    if (o->kind == PTX_OPND_ADDR && o->u.addr.base_kind == PTX_OPND_SYM &&
        !o->u.addr.sym_local && o->u.addr.base < m->nvars)
      v = o->u.addr.base;
    else if (o->kind == PTX_OPND_SYM && !o->sym_local && o->u.sym < m->nvars)
      v = o->u.sym;
    else if (o->kind == PTX_OPND_FUNC && o->u.func < m->nfuncs)
      shared_reach(em, o->u.func, fseen, seen, mod_item, fn_item, nitems);
    if (v != NONE && mod_item[v] != NONE) seen[mod_item[v]] = 1;
  }
}

/* The lowest offset >= 0 at alignment al for size bytes that overlaps none
   of the placed items in seen[]. */
static uint64_t shared_fit(const shitem *it, const uint8_t *seen, const uint8_t *placed,
                           size_t n, uint64_t size, uint64_t al) {
  uint64_t o = 0;
  for (;;) {
    int moved = 0;
    for (size_t k = 0; k < n; k++) {
      if (!seen[k] || !placed[k] || it[k].dynamic || !it[k].size) continue;
      uint64_t a = *it[k].off, b = a + it[k].size;
      if (o < b && a < o + size) {
        o = emu_align_up(b, al);
        moved = 1;
      }
    }
    if (!moved) return o;
  }
}

static int shared_layout(emu_module *em) {
  const ptx_module *m = em->m;
  size_t cap = m->nvars + 1;
  for (uint32_t fi = 0; fi < m->nfuncs; fi++) cap += m->funcs[fi].nvars;
  shitem *it = malloc(cap * sizeof *it);
  uint32_t *mod_item = malloc((m->nvars + 1) * sizeof *mod_item);
  uint32_t *fn_item = malloc((m->nfuncs + 1) * sizeof *fn_item);
  uint8_t *seen = malloc(cap), *placed = calloc(cap, 1), *fseen = malloc(m->nfuncs + 1);
  int rc = -1;
  if (!it || !mod_item || !fn_item || !seen || !placed || !fseen) goto out;
  size_t n = shared_items(em, it, mod_item, fn_item);
  uint64_t dyn = 0;
  /* kernels in order, then (as if one more kernel) what none reaches */
  for (uint32_t fi = 0; fi <= m->nfuncs; fi++) {
    if (fi < m->nfuncs && !m->funcs[fi].is_entry) continue;
    if (fi < m->nfuncs) {
      memset(seen, 0, n);
      memset(fseen, 0, m->nfuncs);
      shared_reach(em, fi, fseen, seen, mod_item, fn_item, n);
    } else {
      for (size_t k = 0; k < n; k++) seen[k] = !placed[k];
    }
    uint64_t top = 0;
    int reaches_dyn = 0;
    for (size_t k = 0; k < n; k++) {
      if (!seen[k]) continue;
      if (it[k].dynamic) { reaches_dyn = 1; continue; }
      if (!placed[k]) {
        *it[k].off = shared_fit(it, seen, placed, n, it[k].size, it[k].align);
        placed[k] = 1;
      }
      if (*it[k].off + it[k].size > top) top = *it[k].off + it[k].size;
    }
    if (fi < m->nfuncs) {
      em->fn[fi].sh_static = top;
      em->fn[fi].sh_dyn = reaches_dyn ? UINT64_MAX : emu_align_up(top, 16);
      if (reaches_dyn && emu_align_up(top, 16) > dyn) dyn = emu_align_up(top, 16);
    }
  }
  for (size_t k = 0; k < n; k++)
    if (it[k].dynamic) *it[k].off = dyn;
  for (uint32_t fi = 0; fi < m->nfuncs; fi++)
    if (em->fn[fi].sh_dyn == UINT64_MAX) em->fn[fi].sh_dyn = dyn;
  rc = 0;
out:
  free(it);
  free(mod_item);
  free(fn_item);
  free(seen);
  free(placed);
  free(fseen);
  return rc;
}

/* Allocate and initialise module-scope .global/.const variables. */
static int load_vars(emu_module *em, char *err, size_t cap) {
  ptx_module *m = em->m;
  uint32_t n = m->nvars;
  em->vaddr = malloc((n ? n : 1) * sizeof *em->vaddr);
  em->galloc_base = calloc(n ? n : 1, sizeof *em->galloc_base);
  if (!em->vaddr || !em->galloc_base) return emu_errf(err, cap, "out of memory");
  for (uint32_t i = 0; i < n; i++) {
    const ptx_var *v = &m->vars[i];
    em->vaddr[i] = UINT64_MAX;
    uint64_t al = v->align ? v->align : ptx_type_size((ptx_type)v->type) * (v->vec ? v->vec : 1);
    if (!al) al = 1;
    if (v->space == PTX_SP_GLOBAL || v->space == PTX_SP_CONST) {
      if (v->is_extern && v->size == 0) continue;
      uint64_t a;
      if (emu_malloc(em->d, v->size, &a, err, cap) != 0) return -1;
      em->galloc_base[i] = a;
      em->vaddr[i] = a;
    }
  }
  for (uint32_t i = 0; i < m->nfuncs; i++) {
    em->fn[i].f = &m->funcs[i];
    em->fn[i].idx = i;
    if (layout_vars(em, &em->fn[i]) != 0) return emu_errf(err, cap, "out of memory");
  }
  if (shared_layout(em) != 0) return emu_errf(err, cap, "out of memory");
  /* initialisers, then relocations (addresses of symbols) */
  for (uint32_t i = 0; i < n; i++) {
    const ptx_var *v = &m->vars[i];
    if (!em->galloc_base[i] || !v->init) continue;
    uint8_t *p = emu_host_ptr(em->d, em->vaddr[i], v->size);
    if (!p) continue;
    memcpy(p, v->init, v->size);
    for (uint32_t r = 0; r < v->init_syms; r++) {
      const struct ptx_reloc *rl = &v->init_reloc[r];
      uint64_t val;
      if (rl->is_func) val = EMU_FUNC_WIN + rl->sym;
      else if (rl->sym < n && em->vaddr[rl->sym] != UINT64_MAX) {
        val = em->vaddr[rl->sym];
        if (rl->generic && m->vars[rl->sym].space == PTX_SP_SHARED) val += EMU_SHARED_WIN;
      } else continue;
      val += (uint64_t)rl->addend;
      unsigned w = m->address_size == 32 ? 4 : 8;
      if (rl->offset + w <= v->size) memcpy(p + rl->offset, &val, w);
    }
  }
  return 0;
}

/* The names a launch's features use, made once per module rather than
   per launch: "op.<key>" and the class of every opcode key, and
   "class.<name>" (classifying and prefixing every key of the module was
   about a quarter of a small launch's cost outside emulation, callgrind).
   0, or -1 on ENOMEM. */
static int feature_names(emu_module *em) {
  const ptx_module *m = em->m;
  size_t total = 0;
  for (uint32_t k = 0; k < m->nkeys; k++) total += 4 + strlen(m->keys[k]);
  for (int c = 0; c < FEAT_C_COUNT; c++) total += 7 + strlen(feat_class_name((feat_class)c));
  em->names = malloc(total ? total : 1);
  em->kop = malloc((m->nkeys ? m->nkeys : 1) * sizeof *em->kop);
  em->kcls = malloc(m->nkeys ? m->nkeys : 1);
  if (!em->names || !em->kop || !em->kcls) return -1;
  char *p = em->names;
  for (uint32_t k = 0; k < m->nkeys; k++) {
    size_t n = strlen(m->keys[k]);
    em->kop[k] = p;
    memcpy(p, "op.", 3);
    memcpy(p + 3, m->keys[k], n + 1);
    p += 4 + n;
    em->kcls[k] = (uint8_t)feat_class_of_key(m->keys[k]);
  }
  for (int c = 0; c < FEAT_C_COUNT; c++) {
    const char *cn = feat_class_name((feat_class)c);
    size_t n = strlen(cn);
    em->clsname[c] = p;
    memcpy(p, "class.", 6);
    memcpy(p + 6, cn, n + 1);
    p += 7 + n;
  }
  return 0;
}

int emu_module_load(emu_device *d, ptx_module *m, emu_module **out, char *err,
                    size_t cap) {
  return emu_module_load_ex(d, m, 0, out, err, cap);
}

/* The first reason fn, or a function it calls, cannot run; NULL when it
   can.  seen: per function, zeroed. */
static const char *unrunnable(const emu_module *em, const efunc *fn, uint8_t *seen) {
  if (fn->bad) return fn->bad;
  if (seen[fn->idx] || !fn->ops) return NULL;
  seen[fn->idx] = 1;
  for (uint32_t i = 0; i < fn->f->ninsns; i++) {
    const eop *e = &fn->ops[i];
    if (e->k == K_CALL && e->call && e->call->callee) {
      const char *why = unrunnable(em, e->call->callee, seen);
      if (why) return why;
    }
  }
  return NULL;
}

const char *emu_kernel_unsupported(const emu_module *em, const char *kernel) {
  if (!em || !kernel || !em->nbad) return NULL;
  for (uint32_t i = 0; i < em->m->nfuncs; i++) {
    if (!em->m->funcs[i].is_entry || strcmp(em->m->funcs[i].name, kernel)) continue;
    uint8_t *seen = calloc(em->m->nfuncs, 1);
    if (!seen) return "out of memory";
    const char *why = unrunnable(em, &em->fn[i], seen);
    free(seen);
    return why;
  }
  return NULL;
}

int emu_module_load_ex(emu_device *d, ptx_module *m, unsigned flags, emu_module **out,
                       char *err, size_t cap) {
  if (!d || !m || !out) return emu_errf(err, cap, "emu_module_load: null argument");
  *out = NULL;
  ptx_error pe;
  if (ptx_cfg_build(m, &pe) != 0) return emu_errf(err, cap, "%s", pe.msg);
  emu_module *em = calloc(1, sizeof *em);
  if (!em) return emu_errf(err, cap, "out of memory");
  em->d = d;
  em->m = m;
  em->fn = calloc(m->nfuncs ? m->nfuncs : 1, sizeof *em->fn);
  if (!em->fn) {
    free(em);
    return emu_errf(err, cap, "out of memory");
  }
  if (d->nmods == d->capmods) {
    size_t nc = d->capmods ? d->capmods * 2 : 4;
    emu_module **nm = realloc(d->mods, nc * sizeof *nm);
    if (!nm) {
      free(em->fn);
      free(em);
      return emu_errf(err, cap, "out of memory");
    }
    d->mods = nm;
    d->capmods = nc;
  }
  d->mods[d->nmods++] = em;
  if (load_vars(em, err, cap) != 0) goto fail;
  prep P;
  memset(&P, 0, sizeof P);
  P.em = em;
  P.err = err;
  P.cap = cap;
  for (uint32_t fi = 0; fi < m->nfuncs; fi++) {
    efunc *fn = &em->fn[fi];
    const ptx_func *f = fn->f;
    if (!f->has_body || !f->cfg) continue;
    fn->ops = calloc(f->ninsns ? f->ninsns : 1, sizeof *fn->ops);
    fn->bstart = malloc((f->ninsns + 1) * sizeof *fn->bstart);
    fn->bend = malloc(f->cfg->nblocks * sizeof *fn->bend);
    fn->brpc = malloc(f->cfg->nblocks * sizeof *fn->brpc);
    if (!fn->ops || !fn->bstart || !fn->bend || !fn->brpc) goto nomem;
    for (uint32_t i = 0; i <= f->ninsns; i++) fn->bstart[i] = NONE;
    for (uint32_t b = 0; b < f->cfg->nblocks; b++) {
      const ptx_block *bl = &f->cfg->blocks[b];
      if (bl->count && fn->bstart[bl->first] == NONE) fn->bstart[bl->first] = b;
      fn->bend[b] = bl->first + bl->count;
      int32_t ip = bl->ipdom;
      fn->brpc[b] = ip >= 0 ? f->cfg->blocks[ip].first : NONE;
    }
    fn->cbase = em->nblocks;
    em->nblocks += f->cfg->nblocks;
    P.fn = fn;
    P.ncs = 0;
    P.nextslot = f->nregs;
    for (unsigned s = 0; s < PTX_SR_COUNT; s++) P.sreg_slot[s] = NONE;
    fn->cc_slot = P.nextslot++;
    fn->sink_slot = P.nextslot++;
    P.fn_nbad = 0;
    for (uint32_t i = 0; i < f->ninsns; i++)
      if (prep_insn(&P, i) != 0) goto nomem;
    if (P.fn_nbad && (flags & EMU_LOAD_PARTIAL)) {
      char more[64] = "";
      if (P.fn_nbad > 1)
        snprintf(more, sizeof more, " (and %u more unsupported instruction%s)", P.fn_nbad - 1,
                 P.fn_nbad > 2 ? "s" : "");
      size_t len = strlen(P.fn_bad) + strlen(more) + 1;
      if (!(fn->bad = malloc(len))) goto nomem;
      em->nbad++;
      snprintf(fn->bad, len, "%s%s", P.fn_bad, more);
    }
    fn->nslots = P.nextslot;
    fn->cs = P.cs;
    fn->ncs = P.ncs;
    P.cs = NULL;
    P.capcs = 0;
    if (!P.fn_nbad && (!P.nbad || (flags & EMU_LOAD_PARTIAL)) && zero_plan(fn) != 0) goto nomem;
    alu_runs(fn);
    for (uint32_t c = 0; c < fn->ncs; c++)
      if (fn->cs[c].kind == CS_SREG && is_clock_sreg((uint32_t)fn->cs[c].v)) fn->nclock++;
    if (fn->nclock) {
      fn->clock_cs = malloc(fn->nclock * sizeof *fn->clock_cs);
      if (!fn->clock_cs) goto nomem;
      fn->nclock = 0;
      for (uint32_t c = 0; c < fn->ncs; c++)
        if (fn->cs[c].kind == CS_SREG && is_clock_sreg((uint32_t)fn->cs[c].v))
          fn->clock_cs[fn->nclock++] = c;
    }
  }
  free(P.cs);
  if (P.nbad && !(flags & EMU_LOAD_PARTIAL)) {
    if (P.nbad > 1)
      emu_errf(err, cap, "%s (and %u more unsupported instruction%s)", P.first_bad,
           P.nbad - 1, P.nbad > 2 ? "s" : "");
    else
      emu_errf(err, cap, "%s", P.first_bad);
    goto fail;
  }
  /* per-thread local stack: deepest call chain; a function from which a
     recursive cycle is reachable gets RECURSIVE_STACK (checked per call) */
  for (uint32_t fi = 0; fi < m->nfuncs; fi++) {
    efunc *fn = &em->fn[fi];
    if (!fn->ops) continue;
    for (uint32_t k = 0; k < m->nfuncs; k++) em->fn[k].done = em->fn[k].visiting = 0;
    int rec = 0;
    fn->stack = stack_need(em, fn, &rec);
    fn->recursive = (uint8_t)rec;
  }
  if (feature_names(em) != 0) {
    emu_errf(err, cap, "out of memory");
    goto fail;
  }
  for (uint32_t k = 0; k < m->nkeys; k++) {
    double fl = emu_key_tensor_flops(m->keys[k]);
    if (fl == 0) continue;
    if (!em->kflops && !(em->kflops = calloc(m->nkeys, sizeof *em->kflops))) {
      emu_errf(err, cap, "out of memory");
      goto fail;
    }
    em->kflops[k] = fl;
  }
  *out = em;
  return 0;
nomem:
  free(P.cs);
  emu_errf(err, cap, "out of memory");
fail:
  emu_module_free(em);
  return -1;
}

int emu_symbol(emu_module *em, const char *name, uint64_t *addr, size_t *size,
               char *err, size_t cap) {
  if (!em || !name) return emu_errf(err, cap, "emu_symbol: null argument");
  for (uint32_t i = 0; i < em->m->nvars; i++) {
    const ptx_var *v = &em->m->vars[i];
    if (strcmp(v->name, name) == 0 && em->galloc_base[i]) {
      if (addr) *addr = em->vaddr[i];
      if (size) *size = v->size;
      return 0;
    }
  }
  return emu_errf(err, cap, "no .global or .const variable named '%s'", name);
}

int emu_param_layout(const ptx_func *k, size_t *offsets, size_t *total) {
  if (!k) return -1;
  ptx_param_layout(k, offsets, NULL, total);
  return 0;
}

