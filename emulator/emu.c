/*
 * emu.c -- the PTX emulator engine: device memory, module loading
 * (preparation of every instruction), and kernel launches.
 *
 * What: runs a kernel launch on the CPU, warp by warp, and counts what it
 * does (docs/features.md: launch.*, op.*, class.*, mem.*, ctrl.*).  The
 * arithmetic lives in emu_alu.c behind the emu_int.h contract; this file does
 * everything else: memory, control flow, calls, barriers, warp collectives,
 * printf, counting, budgets, OpenMP across CTAs.
 *
 * Address windows.  One 64-bit emulated space; generic addresses tell their
 * space by range:
 *
 *     0x0000_0001_0000_0000 ..   global allocations (cudaMalloc, module
 *                                .global/.const), 256-aligned, never reused,
 *                                with at least 256 unmapped bytes between two
 *     0x0000_1000_0000_0000 + o  shared: offset o in the running CTA's shared
 *                                memory (static vars, then dynamic `extern
 *                                .shared` at the end, 16-aligned)
 *     0x0000_2000_0000_0000 + o  local: offset o in the running thread's
 *                                local stack (one frame per call level)
 *     0x0000_3000_0000_0000 + o  param: offset o in the kernel argument
 *                                buffer (read-only)
 *     0x0000_4000_0000_0000 + i  function i (a function used as a value)
 *     0x0000_5000_0000_0000 ..   external window (EMU_EXT_BASE, 1 TiB): memory
 *                                the engine does not own, registered by
 *                                emu_map_external at the caller's address;
 *                                the cudart replacement maps managed memory
 *                                here at host address == device address,
 *                                from 0x0000_5000_0000_0000 up
 *
 * Global allocations and external mappings share one table sorted by base;
 * an address outside the shared/local/param windows is looked up there, so
 * external memory is global memory to every access check, the footprint
 * bitmap and the copies.  emu_free of an external mapping only unregisters
 * it; the caller unmaps its memory.  All of these ranges lie below 2^47
 * (x86-64 user space), so the window can be host memory too.
 *
 * Shared-, local- and param-space addresses (ld.shared, ld.local, cvta.to)
 * are the offsets; cvta adds or subtracts the window base.  An address
 * whose base is a 32-bit register is computed in 32 bits, as PTX does:
 * [%r2+68] with %r2 = base - 64 (wrapped) is base + 4.  .param variables
 * of a .func (its params, its return values, and a caller's call-sequence
 * params) live in the thread's local frame, so st.param / call / ld.param
 * are copies between frames.
 *
 * Reconvergence (SIMT stack).  Each warp has a stack of {pc, mask, rpc}; the
 * top entry runs.  A conditional branch whose active lanes disagree turns
 * the top into the merge entry (pc = rpc = first instruction of the branch
 * block's immediate post-dominator; none when it is the exit) and pushes the
 * fall-through path and then the taken path, each with that rpc.  A path
 * entry is popped when its pc reaches its rpc or its mask empties; when the
 * top's rpc already equals the new one, the top is replaced instead, so
 * loops with lane-dependent trip counts keep the stack bounded.  brx.idx
 * does the same with one path entry per distinct target of its lanes
 * (pushed so that they run in table order, the guard-false lanes' fall-
 * through last); lanes that all go one way are a plain jump.  exit
 * removes lanes from every entry; ret removes them from the entries of the
 * current call frame, and the frame returns when its entries are gone.
 *
 * Calls.  A call frame has its own register file (the callee's slots), its
 * own local frame (its .local and .param variables) and the index of the
 * first SIMT entry it owns.  Recursion works up to the local stack size.
 *
 * Registers read before written.  PTX leaves them undefined; here they read
 * 0, on every run and thread count.  A fresh frame zeroes only the
 * registers that some path from the function's entry reads before writing
 * (zero_plan, a liveness pass at load time): the others are always written
 * first.  Zeroing whole register files was 12 % of the instructions of a
 * saxpy emulation (callgrind; a few percent of its time).
 *
 * Scheduling.  A CTA's warps run in turn: each until it exits or waits at
 * a barrier; a barrier releases when all live warps (or the thread count
 * given) have arrived.  CTAs are handed out in index order from one
 * counter.  The calling thread runs them first; after each CTA it
 * estimates the work left from its CPU time per CTA so far, and only when that
 * exceeds TEAM_MIN_S (2 ms on one thread) does an OpenMP team of the
 * configured size join in, pulling from the same counter.  Why: most
 * launches of iterative programs are tiny (1000 launches of 10,000
 * thread-instructions), and a team per launch cost more than the work --
 * its threads spin between launches, and on a loaded machine a spinning or
 * descheduled team member delays every launch by milliseconds (1000 such
 * launches took 20-30 s under `kcast run` beside a busy process, 1.6 s on
 * one thread).  Each thread owns its warps, shared memory, local stacks and
 * counters, summed at the end, so counts do not depend on the thread count
 * or on whether a team ran.  Device printf output is buffered per CTA and
 * written in CTA order after the launch.
 *
 * Memory accesses.  A warp's access is resolved once for the whole warp
 * when its lowest and highest lane addresses resolve to one region (the
 * same allocation, the shared window, the parameter buffer or the lanes'
 * frames) and every address is aligned: then every lane between is in
 * bounds too.  Otherwise lanes are resolved one by one, which also names the
 * first faulting lane.  Global allocations are found through a four-entry
 * cache per thread (a triad alternates between three buffers), and the
 * footprint bitmap (emu_mem.c) is set once per run of adjacent lanes, a
 * word at a time.  Measured (make bench, triad, one thread): 141 M
 * thread-instructions/s with a per-lane path and a byte-by-byte bitmap,
 * 404 M with this one.
 *
 * Counting.  Per basic block: thread executions (popcount of the active
 * mask when a warp enters the block) and warp entries.  op.* = sum over
 * blocks of count x occurrences of the key, computed once at the end.  The
 * budget, time limit and stop flags are checked at block entries and every
 * BLOCK_STEP instructions inside a longer block (check_limits).
 *
 * Sampling.  With cfg->sample_ctas = N < CTAs, N CTAs run and every
 * additive count is multiplied by CTAs/(CTAs run).  In a 1-D grid the CTA
 * index range is cut into N equal strata and the CTA at the middle of each
 * runs (systematic sampling).  Midpoints rather than "first and last
 * included": the last CTA of a bounds-checked grid is usually partly idle,
 * and scaling it like a full one biased saxpy's counts by -1.15 % at 64 of
 * 3907 CTAs.  In a 2-D or 3-D grid each dimension is cut into N strata and
 * sample i takes the middle of stratum i*p_d mod N in dimension d (a rank-1
 * lattice: p_x = 1, p_y and p_z odd, coprime with N, near N*0.618 and
 * N*0.382), so the sample spreads over every dimension.  Strata of the
 * linear index instead put all 64 CTAs of a 512x256 transpose grid in
 * column 0 (stride 2048 = 4 rows): the sample then saw 16 rows of the
 * output, and no estimate of the footprint could recover it.  Coinciding
 * picks (small dimensions) run once: fewer than N CTAs may run.
 * ctrl.active_lane_ratio is not scaled.  mem.footprint_bytes is estimated
 * per allocation (foot_estimate): the sampled bytes scaled, capped by the
 * extent the sample touched.  launch.shared_bytes is the dynamic shared
 * memory only (docs/features.md).
 *
 * Errors.  The first error (lowest CTA index when several CTAs fail) is
 * reported; a failing CTA stops every CTA with a higher index at their next
 * block entry; budget and time limit stop all.
 */
#include "emulator/emu.h"
#include "emulator/emu_int.h"
#include "emulator/emu_trace.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
/* declared here: clang's omp.h is not always installed */
int omp_get_max_threads(void);
int omp_get_thread_num(void);
#endif

#define NONE UINT32_MAX
#define RECURSIVE_STACK (16u * 1024u) /* per-thread local bytes when recursive */
#define MAX_CALL_DEPTH 1024
#define NBAR 16
#define GC_WAYS 4  /* allocation cache entries per thread */
#define OOB_SLACK 4096 /* bytes around an allocation that count as out of bounds, not unmapped */
#define BLOCK_STEP 4096 /* instructions between limit checks inside a block */
#define CLOCK_EVERY (1u << 18) /* thread-instructions between clock reads */
#define TEAM_MIN_S 2e-3 /* work left (seconds on one thread) worth a team */



/* ============================================================ modules === */

/* Engine opcodes (eop.k). */
enum {
  K_ALU, K_NOP, K_LD, K_ST, K_ATOM, K_CVTA, K_ISSPACEP, K_BRA, K_BRX, K_CALL,
  K_PRINTF, K_RET, K_EXIT, K_TRAP, K_BAR, K_SHFL, K_VOTE, K_MATCH,
  K_ACTIVEMASK, K_REDUX, K_ELECT, K_ASSERT, K_TEX, K_SULD, K_SUST
};

/* A slot the engine fills when a frame starts. */
typedef struct cslot {
  uint32_t slot;
  uint8_t kind;    /* CS_* */
  uint64_t v;      /* CS_IMM: value; CS_FRAME: offset added to the frame
                      base; CS_SREG: ptx_sreg */
} cslot;
enum { CS_IMM, CS_FRAME, CS_SREG };

struct efunc;

/* Argument or return value of a call: a caller variable or a slot. */
typedef struct carg {
  uint8_t isvar;   /* 1: caller's function-scope var v; 0: slot v */
  uint32_t v;
} carg;

typedef struct ecall {
  struct efunc *callee;  /* NULL for vprintf */
  uint32_t nargs, nrets;
  carg *args, *rets;
} ecall;

/* One prepared instruction. */
typedef struct eop {
  emu_op o;            /* the ALU contract part (d/s slots, handler) */
  uint8_t k;           /* K_* */
  uint8_t gneg;        /* guard negated */
  uint8_t space;       /* memory/cvta/isspacep space */
  uint8_t size;        /* element bytes of a memory access */
  uint8_t vec;         /* elements per lane */
  uint8_t sext;        /* a load sign-extends */
  uint8_t clock;       /* reads %clock-like slots: refresh them first */
  uint8_t isred;       /* red (no destination), bar.red */
  uint8_t a32;         /* the address base is a 32-bit register: the
                          address (base + offset) wraps modulo 2^32 */
  uint8_t geom;        /* tex/suld/sust: EMU_GEOM_* */
  uint8_t ncoord;      /* tex/suld/sust: coordinates in s[0..ncoord) (for
                          a1d/a2d the layer first); sust's values follow */
  uint8_t smode;       /* suld/sust: EMU_SURF_* */
  uint8_t dw[EMU_MAX_DST]; /* destination register widths in bytes */
  uint32_t guard;      /* guard slot or NONE */
  uint32_t abase;      /* address base slot */
  int64_t aoff;        /* address offset */
  uint32_t x;          /* bra: target instruction */
  const ptx_label *tab;/* brx.idx: its .branchtargets table (ntargets >= 1,
                          every target's insn <= ninsns) */
  uint32_t mbytes;     /* bytes per lane for mem.* counts */
  ecall *call;         /* K_CALL / K_PRINTF */
} eop;

typedef struct efunc {
  const ptx_func *f;
  uint32_t idx;        /* index in ptx_module.funcs */
  eop *ops;            /* f->ninsns */
  uint32_t nslots;     /* registers + constants + specials + cc + sink */
  uint32_t ncs;
  cslot *cs;           /* slots filled per frame */
  uint32_t nclock;
  uint32_t *clock_cs;  /* indices into cs of clock-like specials */
  uint32_t cc_slot, sink_slot;
  uint32_t *bstart;    /* ninsns+1: block index when pc starts a block */
  uint32_t *bend;      /* per block: one past its last instruction */
  uint32_t *brpc;      /* per block: reconvergence instruction or NONE */
  uint64_t *voff;      /* per var: frame offset, shared offset or param
                          buffer offset */
  uint64_t frame;      /* local frame bytes */
  uint64_t stack;      /* frame + deepest callee chain */
  uint32_t cbase;      /* first block counter */
  uint32_t nzr;
  uint32_t *zr;        /* nzr (first slot, count) runs that a new frame
                          zeroes: see zero_plan */
  uint8_t visiting, done, recursive;
} efunc;

struct emu_module {
  emu_device *d;
  ptx_module *m;
  efunc *fn;               /* m->nfuncs */
  uint32_t nblocks;        /* block counters over all functions */
  uint64_t *vaddr;         /* per module var: device address, shared offset */
  uint64_t *galloc_base;   /* per module var: allocation base or 0 */
  uint64_t shared_static;  /* static shared bytes */
  uint64_t dyn_off;        /* offset of dynamic shared memory */
  struct wcache *cache;    /* the calling thread's worker buffers between
                              launches (launches of a device never overlap) */
};

static void wcache_free(struct wcache *c);

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
  if (P->nbad++ == 0)
    snprintf(P->first_bad, sizeof P->first_bad,
             "%s:%u: unsupported instruction '%s' (%s)",
             P->em->m->filename ? P->em->m->filename : "<ptx>", in->line,
             P->em->m->keys[in->key], why);
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

static int is_clock_sreg(uint32_t s) {
  return s == PTX_SR_CLOCK || s == PTX_SR_CLOCK_HI || s == PTX_SR_CLOCK64 ||
         s == PTX_SR_GLOBALTIMER || s == PTX_SR_GLOBALTIMER_LO ||
         s == PTX_SR_GLOBALTIMER_HI;
}

static int type_signed(unsigned t) {
  return t == PTX_T_S8 || t == PTX_T_S16 || t == PTX_T_S32 || t == PTX_T_S64;
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
          *why = "call to an external function without a body";
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
  if (sz != 4 && sz != 8) { *why = "atomic type not supported"; return 0; }
  if (t == PTX_T_F16X2 || t == PTX_T_BF16X2) { *why = "packed half atomics not supported"; return 0; }
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
static int layout_vars(emu_module *em, efunc *fn, uint64_t *shared_top) {
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
      if (v->is_extern && v->count == 0) {
        fn->voff[i] = UINT64_MAX; /* dynamic: fixed up after the layout */
      } else {
        *shared_top = emu_align_up(*shared_top, al);
        fn->voff[i] = *shared_top;
        *shared_top += v->size;
      }
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
      ecall *c = fn->ops[i].call;
      if (c) {
        free(c->args);
        free(c->rets);
        free(c);
      }
    }
  }
  free(fn->ops);
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
  wcache_free(em->cache);
  free(em);
}


/* Allocate and initialise module-scope .global/.const variables. */
static int load_vars(emu_module *em, char *err, size_t cap) {
  ptx_module *m = em->m;
  uint32_t n = m->nvars;
  em->vaddr = malloc((n ? n : 1) * sizeof *em->vaddr);
  em->galloc_base = calloc(n ? n : 1, sizeof *em->galloc_base);
  if (!em->vaddr || !em->galloc_base) return emu_errf(err, cap, "out of memory");
  uint64_t shtop = 0;
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
    } else if (v->space == PTX_SP_SHARED) {
      if (v->is_extern && v->count == 0) continue; /* dynamic, below */
      shtop = emu_align_up(shtop, al);
      em->vaddr[i] = shtop;
      shtop += v->size;
    }
  }
  /* function-scope .shared after the module-scope ones */
  for (uint32_t i = 0; i < m->nfuncs; i++) {
    em->fn[i].f = &m->funcs[i];
    em->fn[i].idx = i;
    if (layout_vars(em, &em->fn[i], &shtop) != 0) return emu_errf(err, cap, "out of memory");
  }
  em->shared_static = shtop;
  em->dyn_off = emu_align_up(shtop, 16);
  for (uint32_t i = 0; i < n; i++)
    if (m->vars[i].space == PTX_SP_SHARED && m->vars[i].is_extern &&
        m->vars[i].count == 0)
      em->vaddr[i] = em->dyn_off;
  for (uint32_t i = 0; i < m->nfuncs; i++) {
    efunc *fn = &em->fn[i];
    for (uint32_t j = 0; j < fn->f->nvars; j++)
      if (fn->voff[j] == UINT64_MAX) fn->voff[j] = em->dyn_off;
  }
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

int emu_module_load(emu_device *d, ptx_module *m, emu_module **out, char *err,
                    size_t cap) {
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
    for (uint32_t i = 0; i < f->ninsns; i++)
      if (prep_insn(&P, i) != 0) goto nomem;
    fn->nslots = P.nextslot;
    fn->cs = P.cs;
    fn->ncs = P.ncs;
    P.cs = NULL;
    P.capcs = 0;
    if (!P.nbad && zero_plan(fn) != 0) goto nomem;
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
  if (P.nbad) {
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

void emu_launch_cfg_init(emu_launch_cfg *cfg) {
  memset(cfg, 0, sizeof *cfg);
  for (int i = 0; i < 3; i++) cfg->grid[i] = cfg->block[i] = 1;
}

/* ============================================================ launches == */

/* Counters of one OpenMP thread (summed at the end). */
enum {
  S_GBYTES, S_GLOAD, S_GSTORE, S_GATOM, S_GACC, S_GSECT, S_SBYTES, S_SACC,
  S_SREPLAY, S_LBYTES, S_BRANCH, S_DIVERGE, S_BARRIER,
  S_GSECT_LD,   /* the loads' part of S_GSECT */
  S_CACC,       /* warp-level constant-memory loads through a register
                   address (LDC; an immediate address is an operand) */
  S_CREPLAY,    /* their distinct addresses beyond the first (serialised) */
  S_NSTAT
};

typedef struct sent {
  uint32_t pc;    /* next instruction */
  uint32_t mask;  /* lanes on this path */
  uint32_t rpc;   /* reconvergence instruction, NONE: exit/ret only */
} sent;

typedef struct frame {
  efunc *fn;
  size_t roff;      /* register file offset in the warp's arena */
  uint64_t lbase;   /* local frame base (offset in the thread's stack) */
  uint64_t ltop;    /* lbase + frame size */
  uint32_t sbase;   /* first SIMT entry of this frame */
  const eop *call;  /* the caller's call instruction (NULL for the kernel) */
} frame;

enum { W_RUN, W_BAR, W_DONE };

typedef struct warp {
  uint32_t idx;      /* warp index in the CTA */
  uint32_t live;     /* lanes not exited */
  int state;         /* W_* */
  sent *st;
  uint32_t ns, scap;
  frame *fr;
  uint32_t nf, fcap;
  uint64_t *ra;      /* register arena (frames' register files) */
  const struct efunc *base_fn; /* function whose constants the arena's first
                                  frame holds (push_frame), or NULL */
  size_t rtop, rcap;
  uint64_t clock;    /* warp instructions issued (drives %clock) */
  uint32_t bar_id;   /* barrier waited at */
  uint32_t bar_dslot, bar_dmask; /* bar.red destination */
} warp;

typedef struct bar_state {
  uint32_t arrived;   /* warps arrived */
  uint32_t want;      /* warps expected (0: every live warp) */
  uint32_t popc;      /* bar.red.popc */
  uint32_t andv, orv; /* bar.red.and / .or */
} bar_state;

typedef struct launch launch;

/* Device printf text of one CTA, by its run index. */
typedef struct pfout {
  uint64_t i;
  emu_strbuf b;
} pfout;

typedef struct worker {
  launch *L;
  uint64_t *tcnt, *wcnt;  /* per block: thread executions, warp entries */
  uint64_t st[S_NSTAT];
  warp *w;
  uint32_t nw;            /* warps of a CTA (used of w) */
  uint32_t nwa;           /* warps allocated in w */
  uint8_t *sh;            /* shared memory of the running CTA */
  uint8_t *loc;           /* local stacks: nthreads x lsz */
  uint64_t shcap, loccap; /* bytes allocated at sh and loc */
  int cached;             /* buffers from (and back to) the module's cache */
  uint64_t cta;           /* linear index of the running CTA */
  uint32_t ctaid[3];
  uint32_t live_warps;
  bar_state bar[NBAR];
  emu_strbuf pf;          /* printf text of the running CTA */
  pfout *po;              /* printf text of this thread's finished CTAs */
  size_t npo, cpo;
  uint64_t insn_acc;      /* thread-instructions not yet added to L */
  uint64_t since_clock;   /* thread-instructions counted since the clock was read */
  emu_fault kind;         /* kind of the next fail() (record_error resets it) */
  uint64_t oob;           /* accesses tolerated under EMU_OOB_WARN */
  uint64_t oob_seen;      /* 1 + CTA whose first one was offered to L->oob_msg */
  long gc[GC_WAYS];       /* allocations hit last, most recent first; -1 */
  emu_tcache tc;          /* the footprint chunk touched last */
  emu_texview tv;         /* the texture used last (tv.t NULL: none) */
  int oom;
  emu_trace *tr;          /* the address stream of the running CTA ... */
  int tracing;            /* ... when it is one the launch traces */
  emu_trace_res *tres;    /* results of this thread's traced CTAs */
  size_t ntres, ctres;
} worker;

struct launch {
  emu_module *em;
  efunc *k;
  const emu_launch_cfg *cfg;
  const char *kname;
  uint32_t bdim[3], gdim[3];
  uint32_t nthreads, nwarps;
  uint64_t shsize;        /* static + dynamic shared bytes */
  uint64_t lsz;           /* local stack bytes per thread */
  uint64_t ntotal, nrun;
  uint64_t *list;         /* sampled CTA indices, NULL = all */
  uint64_t abort_cta;     /* CTAs above this index stop (atomic) */
  int stop_all;           /* every CTA stops (atomic) */
  uint64_t err_cta;       /* CTA of the recorded error */
  emu_fault err_kind;     /* its kind */
  char err[1024];
  uint64_t oob_cta;       /* CTA of oob_msg (UINT64_MAX: none yet) */
  uint64_t oob_n;         /* tolerated accesses of the merged workers */
  char oob_msg[768];      /* first tolerated out-of-bounds access */
  uint64_t used;          /* thread-instructions (atomic) */
  uint64_t flush_at;
  int oom;                /* a worker ran out of memory */
  double t0;
  pfout *po;              /* printf text of the CTAs that printed */
  size_t npo;
  uint64_t next;          /* next run index to hand out (atomic) */
  const uint64_t *trace;  /* CTAs whose address streams are traced,
                             ascending (emu_trace.h), ntrace of them */
  const unsigned char *trace_role; /* EMU_TRACE_* of each */
  size_t ntrace;
  emu_trace_res *tres;    /* the merged workers' results */
  size_t ntres;
};

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void record_error(worker *W, int all, const char *msg) {
  launch *L = W->L;
  emu_fault kind = W->kind;
  W->kind = EMU_FAULT_OTHER;
#pragma omp critical(emu_error)
  {
    if (W->cta < L->err_cta) {
      L->err_cta = W->cta;
      L->err_kind = kind;
      snprintf(L->err, sizeof L->err, "%s", msg);
    }
  }
  uint64_t cur = __atomic_load_n(&L->abort_cta, __ATOMIC_RELAXED);
  while (W->cta < cur &&
         !__atomic_compare_exchange_n(&L->abort_cta, &cur, W->cta, 0,
                                      __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
  if (all) __atomic_store_n(&L->stop_all, 1, __ATOMIC_RELAXED);
}

/* "kernel K: CTA (x,y,z) thread (x,y,z): FILE:LINE: KEY: <body>" into msg. */
static void compose(const worker *W, const warp *w, int lane, const ptx_insn *in,
                    const char *body, char *msg, size_t cap) {
  const launch *L = W->L;
  char head[384];
  int n = snprintf(head, sizeof head, "kernel %s: CTA (%u,%u,%u)", L->kname,
                   W->ctaid[0], W->ctaid[1], W->ctaid[2]);
  if (w && lane >= 0) {
    uint32_t t = w->idx * EMU_LANES + (uint32_t)lane;
    snprintf(head + n, sizeof head - (size_t)n, " thread (%u,%u,%u)",
             t % L->bdim[0], t / L->bdim[0] % L->bdim[1],
             t / (L->bdim[0] * L->bdim[1]));
  } else if (w) {
    snprintf(head + n, sizeof head - (size_t)n, " warp %u", w->idx);
  }
  if (in)
    snprintf(msg, cap, "%s: %s:%u: %s: %s", head,
             L->em->m->filename ? L->em->m->filename : "<ptx>", in->line,
             L->em->m->keys[in->key], body);
  else
    snprintf(msg, cap, "%s: %s", head, body);
}

/* Fail the launch with a message naming kernel, CTA, thread and line; the
   kind is W->kind (EMU_FAULT_OTHER unless the caller set it). */
static void fail(worker *W, const warp *w, int lane, const ptx_insn *in,
                 int all, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static void fail(worker *W, const warp *w, int lane, const ptx_insn *in,
                 int all, const char *fmt, ...) {
  char body[512], msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(body, sizeof body, fmt, ap);
  va_end(ap);
  compose(W, w, lane, in, body, msg, sizeof msg);
  record_error(W, all, msg);
}

/* ------------------------------------------------------ special regs -- */

static uint64_t sreg_val(const worker *W, const warp *w, uint32_t s,
                         uint32_t lane) {
  const launch *L = W->L;
  uint32_t t = w->idx * EMU_LANES + lane;
  switch (s) {
    case PTX_SR_TID_X: return t % L->bdim[0];
    case PTX_SR_TID_Y: return t / L->bdim[0] % L->bdim[1];
    case PTX_SR_TID_Z: return t / (L->bdim[0] * L->bdim[1]);
    case PTX_SR_NTID_X: case PTX_SR_NTID_Y: case PTX_SR_NTID_Z:
      return L->bdim[s - PTX_SR_NTID_X];
    case PTX_SR_CTAID_X: case PTX_SR_CTAID_Y: case PTX_SR_CTAID_Z:
      return W->ctaid[s - PTX_SR_CTAID_X];
    case PTX_SR_NCTAID_X: case PTX_SR_NCTAID_Y: case PTX_SR_NCTAID_Z:
      return L->gdim[s - PTX_SR_NCTAID_X];
    case PTX_SR_CLUSTERID_X: case PTX_SR_CLUSTERID_Y: case PTX_SR_CLUSTERID_Z:
      return W->ctaid[s - PTX_SR_CLUSTERID_X];
    case PTX_SR_NCLUSTERID_X: case PTX_SR_NCLUSTERID_Y: case PTX_SR_NCLUSTERID_Z:
      return L->gdim[s - PTX_SR_NCLUSTERID_X];
    case PTX_SR_CLUSTER_NCTAID_X: case PTX_SR_CLUSTER_NCTAID_Y:
    case PTX_SR_CLUSTER_NCTAID_Z: case PTX_SR_CLUSTER_NCTARANK: case PTX_SR_NSMID:
      return 1;
    case PTX_SR_LANEID: return lane;
    case PTX_SR_WARPID: return w->idx;
    case PTX_SR_NWARPID: return 64;
    case PTX_SR_LANEMASK_EQ: return 1u << lane;
    case PTX_SR_LANEMASK_LE: return (uint32_t)((2ull << lane) - 1);
    case PTX_SR_LANEMASK_LT: return (1u << lane) - 1;
    case PTX_SR_LANEMASK_GE: return ~((1u << lane) - 1);
    case PTX_SR_LANEMASK_GT: return (uint32_t)~((2ull << lane) - 1);
    case PTX_SR_CLOCK: return (uint32_t)w->clock;
    case PTX_SR_CLOCK_HI: return (uint32_t)(w->clock >> 32);
    case PTX_SR_CLOCK64: return w->clock;
    case PTX_SR_GLOBALTIMER: return w->clock * 4;
    case PTX_SR_GLOBALTIMER_LO: return (uint32_t)(w->clock * 4);
    case PTX_SR_GLOBALTIMER_HI: return (uint32_t)((w->clock * 4) >> 32);
    case PTX_SR_DYNAMIC_SMEM_SIZE: return L->cfg->shared_bytes;
    case PTX_SR_TOTAL_SMEM_SIZE: return L->shsize;
    default: return 0;
  }
}

/* All 32 lanes of special register s: the thread indices without a
   per-lane switch (they are every frame's commonest specials), the rest
   through sreg_val. */
static void fill_sreg(const worker *W, const warp *w, uint32_t s, uint64_t *p) {
  const launch *L = W->L;
  uint32_t t0 = w->idx * EMU_LANES, bx = L->bdim[0], by = L->bdim[1];
  switch (s) {
    case PTX_SR_TID_X: {
      uint32_t x = t0 % bx;
      for (uint32_t l = 0; l < EMU_LANES; l++) {
        p[l] = x;
        if (++x == bx) x = 0;
      }
      return;
    }
    case PTX_SR_TID_Y:
      if (by == 1) {
        for (uint32_t l = 0; l < EMU_LANES; l++) p[l] = 0;
        return;
      }
      break;
    case PTX_SR_NTID_X: case PTX_SR_NTID_Y: case PTX_SR_NTID_Z:
    case PTX_SR_CTAID_X: case PTX_SR_CTAID_Y: case PTX_SR_CTAID_Z:
    case PTX_SR_NCTAID_X: case PTX_SR_NCTAID_Y: case PTX_SR_NCTAID_Z: {
      uint64_t v = sreg_val(W, w, s, 0);
      for (uint32_t l = 0; l < EMU_LANES; l++) p[l] = v;
      return;
    }
    default:
      break;
  }
  for (uint32_t l = 0; l < EMU_LANES; l++) p[l] = sreg_val(W, w, s, l);
}

/* Zero the slots of a fresh register file that can be read before being
   written (zero_plan) and fill its constant and special slots. */
/* keep: the register file already holds fn's constants (see push_frame). */
static void fill_frame(const worker *W, const warp *w, const efunc *fn,
                       uint64_t *r, uint64_t lbase, int keep) {
  for (uint32_t z = 0; z < fn->nzr; z++)
    memset(r + (size_t)fn->zr[2 * z] * EMU_LANES, 0,
           (size_t)fn->zr[2 * z + 1] * EMU_LANES * sizeof *r);
  for (uint32_t c = 0; c < fn->ncs; c++) {
    const cslot *cs = &fn->cs[c];
    uint64_t *p = r + (size_t)cs->slot * EMU_LANES;
    if (cs->kind == CS_SREG) {
      fill_sreg(W, w, (uint32_t)cs->v, p);
    } else if (!keep) {
      uint64_t v = cs->kind == CS_FRAME ? cs->v + lbase : cs->v;
      for (uint32_t l = 0; l < EMU_LANES; l++) p[l] = v;
    }
  }
}

static void refresh_clock(const worker *W, const warp *w, const efunc *fn,
                          uint64_t *r) {
  for (uint32_t c = 0; c < fn->nclock; c++) {
    const cslot *cs = &fn->cs[fn->clock_cs[c]];
    uint64_t v = sreg_val(W, w, (uint32_t)cs->v, 0);
    uint64_t *p = r + (size_t)cs->slot * EMU_LANES;
    for (uint32_t l = 0; l < EMU_LANES; l++) p[l] = v;
  }
}

/* ------------------------------------------------------------ stacks -- */

static int push_ent(warp *w, uint32_t pc, uint32_t mask, uint32_t rpc) {
  if (w->ns == w->scap) {
    uint32_t nc = w->scap ? w->scap * 2 : 16;
    sent *n = realloc(w->st, nc * sizeof *n);
    if (!n) return -1;
    w->st = n;
    w->scap = nc;
  }
  w->st[w->ns].pc = pc;
  w->st[w->ns].mask = mask;
  w->st[w->ns].rpc = rpc;
  w->ns++;
  return 0;
}

static int push_frame(worker *W, warp *w, efunc *fn, uint64_t lbase,
                      const eop *call) {
  if (w->nf == w->fcap) {
    uint32_t nc = w->fcap ? w->fcap * 2 : 4;
    frame *n = realloc(w->fr, nc * sizeof *n);
    if (!n) return -1;
    w->fr = n;
    w->fcap = nc;
  }
  size_t need = w->rtop + (size_t)fn->nslots * EMU_LANES;
  if (need > w->rcap) {
    size_t nc = w->rcap ? w->rcap : 1024;
    while (nc < need) nc *= 2;
    uint64_t *n = realloc(w->ra, nc * sizeof *n);
    if (!n) return -1;
    /* defined contents: lanes a frame never writes are still read (and
       discarded) by whole-warp loops such as compares */
    memset(n + w->rcap, 0, (nc - w->rcap) * sizeof *n);
    w->ra = n;
    w->rcap = nc;
  }
  /* The kernel's frame sits at the arena's start for every CTA the warp
     runs; its immediate and frame-address slots are never written by
     instructions (destinations are registers), so they stay valid from
     the last CTA or launch of the same function. */
  int keep = w->nf == 0 && w->base_fn == fn;
  if (w->nf == 0) w->base_fn = fn;
  frame *f = &w->fr[w->nf++];
  f->fn = fn;
  f->roff = w->rtop;
  f->lbase = lbase;
  f->ltop = lbase + fn->frame;
  f->sbase = w->ns;
  f->call = call;
  w->rtop = need;
  fill_frame(W, w, fn, w->ra + f->roff, lbase, keep);
  return 0;
}

static inline uint8_t *lane_local(worker *W, const warp *w, uint32_t lane) {
  return W->loc + ((size_t)w->idx * EMU_LANES + lane) * W->L->lsz;
}

/* ------------------------------------------------------------ memory -- */

/* Resolved access of one lane. */
enum { R_GLOBAL, R_SHARED, R_LOCAL, R_PARAM, R_CONST, R_NONE };
enum { E_OK, E_UNMAPPED, E_OOB, E_MISALIGNED, E_READONLY, E_FREED };

typedef struct acc {
  uint8_t *p;
  uint8_t rs;      /* R_* */
  uint8_t perlane; /* p lies in the lane's local stack (local, .func param) */
  long g;          /* allocation index for global/const; on E_FREED the
                      index in the device's freed ranges */
} lacc;

/* Allocation containing a through the worker's MRU cache, or -1.  A kernel
   alternating between buffers (triad reads b and c, writes a) hits. */
static long find_alloc(worker *W, const emu_device *d, uint64_t a) {
  for (int i = 0; i < GC_WAYS; i++) {
    long gi = W->gc[i];
    if (gi >= 0 && a - d->a[gi].base < d->a[gi].size) {
      for (; i > 0; i--) W->gc[i] = W->gc[i - 1];
      W->gc[0] = gi;
      return gi;
    }
  }
  long gi = emu_galloc_find(d, a);
  if (gi >= 0) {
    memmove(W->gc + 1, W->gc, (GC_WAYS - 1) * sizeof *W->gc);
    W->gc[0] = gi;
  }
  return gi;
}

static int resolve(worker *W, const warp *w, uint32_t lane, unsigned space,
                   uint64_t a, unsigned n, int write, lacc *out) {
  launch *L = W->L;
  out->rs = R_NONE;
  if (n > 1 && (a & (n - 1))) return E_MISALIGNED;
  unsigned sp = space;
  uint64_t off = a;
  if (sp == PTX_SP_GENERIC) {
    if (a - EMU_SHARED_WIN < EMU_WIN_SIZE) { sp = PTX_SP_SHARED; off = a - EMU_SHARED_WIN; }
    else if (a - EMU_LOCAL_WIN < EMU_WIN_SIZE) { sp = PTX_SP_LOCAL; off = a - EMU_LOCAL_WIN; }
    else if (a - EMU_PARAM_WIN < EMU_WIN_SIZE) { sp = PTX_SP_PARAM; }
    else sp = PTX_SP_GLOBAL;
  } else if (sp == PTX_SP_SHARED && a - EMU_SHARED_WIN < EMU_WIN_SIZE) {
    off = a - EMU_SHARED_WIN;
  } else if (sp == PTX_SP_LOCAL && a - EMU_LOCAL_WIN < EMU_WIN_SIZE) {
    off = a - EMU_LOCAL_WIN;
  }
  out->perlane = 0;
  switch (sp) {
    case PTX_SP_SHARED:
      if (off > L->shsize || n > L->shsize - off) return E_OOB;
      out->p = W->sh + off;
      out->rs = R_SHARED;
      return E_OK;
    case PTX_SP_PARAM:
      if (a - EMU_PARAM_WIN < EMU_WIN_SIZE) {
        if (write) return E_READONLY;
        off = a - EMU_PARAM_WIN;
        if (off > L->cfg->params_size || n > L->cfg->params_size - off) return E_OOB;
        out->p = (uint8_t *)L->cfg->params + off;
        out->rs = R_PARAM;
        return E_OK;
      }
      /* a .func parameter: the thread's local frame */
      /* fallthrough */
    case PTX_SP_LOCAL: {
      uint64_t top = w->fr[w->nf - 1].ltop;
      if (off > top || n > top - off) return E_OOB;
      out->p = lane_local(W, w, lane) + off;
      out->rs = sp == PTX_SP_PARAM ? R_PARAM : R_LOCAL;
      out->perlane = 1;
      return E_OK;
    }
    default: {
      const emu_device *d = L->em->d;
      long gi = find_alloc(W, d, a);
      out->rs = sp == PTX_SP_CONST ? R_CONST : R_GLOBAL;
      if (gi < 0) {
        /* not mapped: near (within OOB_SLACK of) a live or a freed
           allocation, whichever is nearer, or unmapped */
        uint64_t fd = UINT64_MAX, ld = UINT64_MAX;
        long fi = emu_freed_near(d, a, OOB_SLACK, &fd), li = -1;
        long b = emu_galloc_below(d, a);
        if (b >= 0 && a - d->a[b].base < d->a[b].size + OOB_SLACK)
          li = b, ld = a - (d->a[b].base + d->a[b].size) + 1;
        if (b + 1 < (long)d->n && d->a[b + 1].base - a <= OOB_SLACK && d->a[b + 1].base - a < ld)
          li = b + 1, ld = d->a[b + 1].base - a;
        if (fi >= 0 && fd <= ld) {
          out->g = fi;
          return E_FREED;
        }
        out->g = li;
        return li >= 0 ? E_OOB : E_UNMAPPED;
      }
      const galloc *g = &d->a[gi];
      out->g = gi;
      if (n > g->size - (a - g->base)) return E_OOB;
      emu_lazy_fill(g, a - g->base, n);
      out->p = g->host + (a - g->base);
      out->rs = sp == PTX_SP_CONST ? R_CONST : R_GLOBAL;
      return E_OK;
    }
  }
}

static const char *space_word(unsigned space, uint64_t a) {
  switch (space) {
    case PTX_SP_SHARED: return "shared";
    case PTX_SP_LOCAL: return "local";
    case PTX_SP_PARAM: return "param";
    case PTX_SP_CONST: return "const";
    case PTX_SP_GLOBAL: return "global";
    default:
      if (a - EMU_SHARED_WIN < EMU_WIN_SIZE) return "generic (shared)";
      if (a - EMU_LOCAL_WIN < EMU_WIN_SIZE) return "generic (local)";
      if (a - EMU_PARAM_WIN < EMU_WIN_SIZE) return "generic (param)";
      return "generic (global)";
  }
}

/* What went wrong with one lane's access (the body of the message). */
static void mem_msg(const worker *W, const eop *e, int code, uint64_t a, unsigned n,
                    int write, const lacc *ac, char *body, size_t cap) {
  const char *what = e->k == K_ATOM ? "atomic" : write ? "write" : "read";
  const char *sp = space_word(e->space, a);
  const emu_device *d = W->L->em->d;
  switch (code) {
    case E_MISALIGNED:
      snprintf(body, cap, "misaligned %s %s of %u bytes at 0x%llx (address %% %u != 0)", sp,
               what, n, (unsigned long long)a, n);
      break;
    case E_READONLY:
      snprintf(body, cap, "write of %u bytes at 0x%llx to the read-only kernel parameters", n,
               (unsigned long long)a);
      break;
    case E_UNMAPPED:
      snprintf(body, cap, "unmapped %s %s of %u bytes at 0x%llx", sp, what, n,
               (unsigned long long)a);
      break;
    case E_FREED:
      snprintf(body, cap, "%s %s of %u bytes at 0x%llx: use after free (allocation 0x%llx+%llu "
               "was freed)", sp, what, n, (unsigned long long)a,
               (unsigned long long)d->freed[ac->g].base, (unsigned long long)d->freed[ac->g].size);
      break;
    default:
      if (ac->g >= 0 && (size_t)ac->g < d->n && strstr(sp, "global"))
        snprintf(body, cap, "out-of-bounds %s %s of %u bytes at 0x%llx (allocation 0x%llx+%llu)",
                 sp, what, n, (unsigned long long)a, (unsigned long long)d->a[ac->g].base,
                 (unsigned long long)d->a[ac->g].size);
      else
        snprintf(body, cap, "out-of-bounds %s %s of %u bytes at 0x%llx", sp, what, n,
                 (unsigned long long)a);
  }
}

static void mem_fail(worker *W, const warp *w, uint32_t lane, const eop *e,
                     int code, uint64_t a, unsigned n, int write,
                     const lacc *ac) {
  char body[512];
  mem_msg(W, e, code, a, n, write, ac, body, sizeof body);
  W->kind = code == E_MISALIGNED ? EMU_FAULT_MISALIGNED : EMU_FAULT_ADDRESS;
  fail(W, w, (int)lane, e->o.insn, 0, "%s", body);
}

/* An access a GPU tolerates (EMU_OOB_WARN): global, slightly out of
   bounds or freed.  Counted; the first of the lowest CTA is kept. */
static int tolerated(const worker *W, int code, const lacc *ac) {
  return W->L->cfg->oob == EMU_OOB_WARN && ac->rs == R_GLOBAL &&
         (code == E_OOB || code == E_FREED);
}

static void note_oob(worker *W, const warp *w, uint32_t lane, const eop *e, int code,
                     uint64_t a, unsigned n, int write, const lacc *ac) {
  launch *L = W->L;
  W->oob++;
  if (W->oob_seen == W->cta + 1 || W->cta > __atomic_load_n(&L->oob_cta, __ATOMIC_RELAXED))
    return;
  W->oob_seen = W->cta + 1;
  char body[512], msg[768];
  mem_msg(W, e, code, a, n, write, ac, body, sizeof body);
  compose(W, w, (int)lane, e->o.insn, body, msg, sizeof msg);
#pragma omp critical(emu_error)
  {
    if (W->cta < L->oob_cta) {
      L->oob_cta = W->cta;
      snprintf(L->oob_msg, sizeof L->oob_msg, "%s", msg);
    }
  }
}

static inline uint64_t load_n(const uint8_t *p, unsigned n) {
  switch (n) {
    case 1: return *p;
    case 2: { uint16_t v; memcpy(&v, p, 2); return v; }
    case 4: { uint32_t v; memcpy(&v, p, 4); return v; }
    default: { uint64_t v; memcpy(&v, p, 8); return v; }
  }
}

static inline void store_n(uint8_t *p, uint64_t v, unsigned n) {
  switch (n) {
    case 1: *p = (uint8_t)v; break;
    case 2: { uint16_t x = (uint16_t)v; memcpy(p, &x, 2); break; }
    case 4: { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); break; }
    default: memcpy(p, &v, 8);
  }
}

static inline uint64_t extend(uint64_t v, unsigned size, int sext, unsigned dw) {
  if (sext && size < 8) {
    uint64_t sign = 1ull << (size * 8 - 1);
    v = (v ^ sign) - sign;
  }
  if (dw < 8) v &= (1ull << (dw * 8)) - 1;
  return v;
}

static float f32_of(uint32_t b) { float f; memcpy(&f, &b, 4); return f; }
static uint32_t bits_f32(float f) { uint32_t b; memcpy(&b, &f, 4); return b; }
static double f64_of(uint64_t b) { double f; memcpy(&f, &b, 8); return f; }
static uint64_t bits_f64(double f) { uint64_t b; memcpy(&b, &f, 8); return b; }

/* New value of an atomic read-modify-write. */
static uint64_t atom_new(unsigned aux, unsigned type, unsigned size,
                         uint64_t old, uint64_t b, uint64_t c) {
  int fl = type == PTX_T_F32 || type == PTX_T_F64;
  int sg = type_signed(type);
  switch (aux) {
    case PTX_AUX_ADD:
      if (type == PTX_T_F32) return bits_f32(f32_of((uint32_t)old) + f32_of((uint32_t)b));
      if (type == PTX_T_F64) return bits_f64(f64_of(old) + f64_of(b));
      return old + b;
    case PTX_AUX_MIN: case PTX_AUX_MAX: {
      int less;
      if (fl && size == 4) less = f32_of((uint32_t)b) < f32_of((uint32_t)old);
      else if (fl) less = f64_of(b) < f64_of(old);
      else if (sg && size == 4) less = (int32_t)b < (int32_t)old;
      else if (sg) less = (int64_t)b < (int64_t)old;
      else less = b < old;
      if (aux == PTX_AUX_MIN) return less ? b : old;
      int greater;
      if (fl && size == 4) greater = f32_of((uint32_t)b) > f32_of((uint32_t)old);
      else if (fl) greater = f64_of(b) > f64_of(old);
      else if (sg && size == 4) greater = (int32_t)b > (int32_t)old;
      else if (sg) greater = (int64_t)b > (int64_t)old;
      else greater = b > old;
      return greater ? b : old;
    }
    case PTX_AUX_INC: return (uint32_t)old >= (uint32_t)b ? 0 : old + 1;
    case PTX_AUX_DEC:
      return ((uint32_t)old == 0 || (uint32_t)old > (uint32_t)b) ? b : old - 1;
    case PTX_AUX_CAS: return old == b ? c : old;
    case PTX_AUX_EXCH: return b;
    case PTX_AUX_AND: return old & b;
    case PTX_AUX_OR: return old | b;
    case PTX_AUX_XOR: return old ^ b;
    default: return old;
  }
}

static uint64_t atom_do(const eop *e, uint8_t *p, uint64_t b, uint64_t c) {
  const ptx_insn *in = e->o.insn;
  unsigned t = in->type;
  int intadd = in->aux == PTX_AUX_ADD && t != PTX_T_F32 && t != PTX_T_F64;
  if (e->size == 4) {
    uint32_t *q = (uint32_t *)(void *)p;
    if (intadd) return __atomic_fetch_add(q, (uint32_t)b, __ATOMIC_RELAXED);
    if (in->aux == PTX_AUX_EXCH) return __atomic_exchange_n(q, (uint32_t)b, __ATOMIC_RELAXED);
    uint32_t old = __atomic_load_n(q, __ATOMIC_RELAXED);
    for (;;) {
      uint32_t nv = (uint32_t)atom_new(in->aux, t, 4, old, (uint32_t)b, (uint32_t)c);
      if (nv == old) return old;
      if (__atomic_compare_exchange_n(q, &old, nv, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        return old;
    }
  }
  uint64_t *q = (uint64_t *)(void *)p;
  if (intadd) return __atomic_fetch_add(q, b, __ATOMIC_RELAXED);
  if (in->aux == PTX_AUX_EXCH) return __atomic_exchange_n(q, b, __ATOMIC_RELAXED);
  uint64_t old = __atomic_load_n(q, __ATOMIC_RELAXED);
  for (;;) {
    uint64_t nv = atom_new(in->aux, t, 8, old, b, c);
    if (nv == old) return old;
    if (__atomic_compare_exchange_n(q, &old, nv, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
      return old;
  }
}

/* Shared-memory words a warp access may span for the bitmap count of
   its bank replays (mem_op): 64 x 16 = 1024 words, 4 KiB. */
#define SH_SPAN_WORDS 16

/* Distinct values in v[0..n) (small n); sorts v. */
static unsigned count_distinct(uint64_t *v, unsigned n) {
  int sorted = 1;
  for (unsigned i = 1; i < n; i++)
    if (v[i] < v[i - 1]) { sorted = 0; break; }
  if (!sorted)
    for (unsigned i = 1; i < n; i++) {
      uint64_t x = v[i];
      unsigned j = i;
      while (j > 0 && v[j - 1] > x) { v[j] = v[j - 1]; j--; }
      v[j] = x;
    }
  unsigned d = n ? 1 : 0;
  for (unsigned i = 1; i < n; i++) d += v[i] != v[i - 1];
  return d;
}

static emu_device *d_of(const worker *W) { return W->L->em->d; }

/* Fill the pages the lanes m of a lazily filled allocation g reach. */
static __attribute__((noinline)) void lazy_lanes(const galloc *g, const uint64_t *addr,
                                                 uint32_t m, unsigned n) {
  for (uint32_t mm = m; mm; mm &= mm - 1) {
    uint32_t l = (uint32_t)__builtin_ctz(mm);
    emu_lazy_fill(g, addr[l] - g->base, n);
  }
}

static int touch_lanes(worker *W, const uint64_t *addr, const long *gidx, long g1,
                       uint32_t gl, unsigned n, int mono);

/* A constant load whose address comes from a register (an LDC of the
   machine code), not from a symbol and an offset (an operand of the
   instruction that uses it). */
static inline int const_indexed(const warp *w, const eop *e) {
  return e->abase < w->fr[w->nf - 1].fn->f->nregs;
}

/*
 * A full warp loading n bytes at the one address a (mem_op): resolved and
 * read once, the value given to every lane, counted as the lane-by-lane
 * path counts it (global: one sector, n bytes of footprint).  0 when done,
 * 1 when the lanes must go the general way (local or shared memory, or an
 * error to report there), -1 on failure.
 */
static int mem_uniform_ld(worker *W, warp *w, uint64_t *r, const eop *e, uint64_t a, unsigned n) {
  lacc ac;
  ac.g = -1;
  if (resolve(W, w, 0, e->space, a, n, 0, &ac) != E_OK || ac.perlane || ac.rs == R_SHARED)
    return 1;
  uint64_t v = extend(load_n(ac.p, n), n, e->sext, e->dw[0]);
  uint64_t *dst = r + (size_t)e->o.d[0] * EMU_LANES;
  for (uint32_t l = 0; l < EMU_LANES; l++) dst[l] = v;
  if (ac.rs == R_CONST && const_indexed(w, e)) W->st[S_CACC]++;
  if (ac.rs != R_GLOBAL) return 0;
  uint64_t bytes = (uint64_t)EMU_LANES * e->mbytes;
  W->st[S_GBYTES] += bytes;
  W->st[S_GLOAD] += bytes;
  W->st[S_GACC]++;
  unsigned us = 1 + (((a + n - 1) >> 5) != (a >> 5));
  W->st[S_GSECT] += us;
  W->st[S_GSECT_LD] += us;
  if (W->tracing) emu_trace_range(W->tr, w->idx, 0, a >> 5, (a + n - 1) >> 5);
  if (touch_lanes(W, &a, NULL, ac.g, 1, n, 1)) {
    W->oom = 1;
    fail(W, w, -1, e->o.insn, 1, "out of memory for the footprint bitmap");
    return -1;
  }
  return 0;
}

/*
 * All lanes of m in one region (resolve() of the lowest and the highest
 * address agree: the same space, the same allocation, both in bounds,
 * every address aligned): fill p[] and return 1.  Regions are contiguous,
 * so every address between the two is in bounds too.  0 when the lanes
 * must be resolved one by one (an error to report, or mixed regions).
 */
static inline __attribute__((always_inline)) int warp_region(worker *W, const warp *w, const eop *e, const uint64_t *addr,
                       uint32_t m, uint64_t lo, uint64_t hi, uint64_t orv, unsigned n,
                       int write, uint8_t **p, lacc *ac) {
  if (n > 1 && (orv & (n - 1))) return 0;
  uint32_t l0 = (uint32_t)__builtin_ctz(m);
  lacc h;
  ac->g = h.g = -1;
  if (resolve(W, w, l0, e->space, lo, n, write, ac) != E_OK) return 0;
  if (hi != lo) {
    if (resolve(W, w, l0, e->space, hi, n, write, &h) != E_OK || h.rs != ac->rs ||
        h.perlane != ac->perlane || h.g != ac->g || h.p - ac->p != (ptrdiff_t)(hi - lo))
      return 0;
  }
  if (ac->perlane) {
    ptrdiff_t off = ac->p - lane_local(W, w, l0);
    for (uint32_t mm = m; mm; mm &= mm - 1) {
      uint32_t l = (uint32_t)__builtin_ctz(mm);
      p[l] = lane_local(W, w, l) + off + (addr[l] - lo);
    }
  } else {
    for (uint32_t mm = m; mm; mm &= mm - 1) {
      uint32_t l = (uint32_t)__builtin_ctz(mm);
      p[l] = ac->p + (addr[l] - lo);
    }
    if (ac->g >= 0 && (ac->rs == R_GLOBAL || ac->rs == R_CONST) && d_of(W)->a[ac->g].lazy)
      lazy_lanes(&d_of(W)->a[ac->g], addr, m, n); /* resolve() filled the ends only */
  }
  return 1;
}

/*
 * The block [lo, hi + n) of a unit-stride warp (mem_op) in one region:
 * global, shared or constant memory (not a lane's local stack), both ends
 * in bounds in the same allocation, lo aligned.  1 with ac filled in, 0
 * when the lanes must go through warp_region (which reports errors).
 */
static int warp_block(worker *W, const warp *w, const eop *e, uint64_t lo, uint64_t hi,
                      unsigned n, int write, lacc *ac) {
  if (n > 1 && (lo & (n - 1))) return 0;
  lacc h;
  ac->g = h.g = -1;
  if (resolve(W, w, 0, e->space, lo, n, write, ac) != E_OK || ac->perlane) return 0;
  if (resolve(W, w, 0, e->space, hi, n, write, &h) != E_OK || h.rs != ac->rs ||
      h.perlane || h.g != ac->g || h.p - ac->p != (ptrdiff_t)(hi - lo))
    return 0;
  if (ac->g >= 0 && (ac->rs == R_GLOBAL || ac->rs == R_CONST)) {
    /* resolve() filled the ends of a lazily filled allocation; the middle */
    const galloc *g = &d_of(W)->a[ac->g];
    emu_lazy_fill(g, lo - g->base, hi + n - lo);
  }
  return 1;
}

/* Footprint of the global lanes gl: one touch per run of adjacent or
   overlapping accesses when the addresses ascend with the lane (a
   coalesced warp is one run), else one per lane.  0, or -1 on ENOMEM. */
static int touch_lanes(worker *W, const uint64_t *addr, const long *gidx, long g1,
                       uint32_t gl, unsigned n, int mono) {
  emu_device *d = W->L->em->d;
  if (mono && g1 >= 0) {
    uint64_t s = 0, e = 0;
    int open = 0;
    for (uint32_t mm = gl; mm; mm &= mm - 1) {
      uint64_t a = addr[__builtin_ctz(mm)];
      if (open && a <= e) {
        if (a + n > e) e = a + n;
        continue;
      }
      if (open && emu_touch(d, g1, s - d->a[g1].base, e - s, &W->tc)) return -1;
      s = a;
      e = a + n;
      open = 1;
    }
    if (open && emu_touch(d, g1, s - d->a[g1].base, e - s, &W->tc)) return -1;
    return 0;
  }
  for (uint32_t mm = gl; mm; mm &= mm - 1) {
    uint32_t l = (uint32_t)__builtin_ctz(mm);
    long gi = gidx ? gidx[l] : g1;
    if (emu_touch(d, gi, addr[l] - d->a[gi].base, n, &W->tc)) return -1;
  }
  return 0;
}

/*
 * ld.shared and st.shared of one 32-bit element a lane (a load
 * zero-extended; the tiles of a tiled kernel: two of every three
 * instructions of gemm_tiled's inner loop are such loads), in one pass
 * over the lanes for their accesses and the bank count mem_op makes: 0
 * when done; 1 when mem_op must do it, before anything is read or written
 * (a lane out of bounds or misaligned, which it reports, or words 64 or
 * more apart).  Offsets as resolve() takes them: in the shared window or
 * from 0; lanes store in ascending order, as mem_op's do.  mem_op went
 * over the lanes four times (addresses, their region, the accesses, a
 * list of their words for the banks): kcast_features_from_ptx of
 * gemm_tiled n=1024 (64 CTAs sampled), medians of 5, 170-172 -> 83-87 ms
 * with the loads alone; the suite's 190,394 feature values the same.
 */
static int mem_shared32(worker *W, uint64_t *r, const eop *e, uint32_t m) {
  const uint64_t *base = r + (size_t)e->abase * EMU_LANES;
  uint64_t shs = W->L->shsize, bad = 0, wlo = UINT64_MAX, whi = 0;
  uint64_t off[EMU_LANES];
  for (uint32_t mm = m; mm; mm &= mm - 1) {
    uint32_t l = (uint32_t)__builtin_ctz(mm);
    uint64_t a = base[l] + (uint64_t)e->aoff;
    if (e->a32) a = (uint32_t)a;
    uint64_t o = a - EMU_SHARED_WIN < EMU_WIN_SIZE ? a - EMU_SHARED_WIN : a;
    bad |= (a & 3) | (uint64_t)(o > shs || 4 > shs - o);
    off[l] = o;
    wlo = o >> 2 < wlo ? o >> 2 : wlo;
    whi = o >> 2 > whi ? o >> 2 : whi;
  }
  if (bad || whi - wlo >= 64) return 1;
  uint64_t x = 0;
  if (e->k == K_LD) {
    uint64_t *dst = r + (size_t)e->o.d[0] * EMU_LANES;
    for (uint32_t mm = m; mm; mm &= mm - 1) {
      uint32_t l = (uint32_t)__builtin_ctz(mm), v;
      memcpy(&v, W->sh + off[l], 4);
      dst[l] = v;
      x |= 1ull << ((off[l] >> 2) - wlo);
    }
  } else {
    const uint64_t *src = r + (size_t)e->o.s[0] * EMU_LANES;
    for (uint32_t mm = m; mm; mm &= mm - 1) {
      uint32_t l = (uint32_t)__builtin_ctz(mm), v = (uint32_t)src[l];
      memcpy(W->sh + off[l], &v, 4);
      x |= 1ull << ((off[l] >> 2) - wlo);
    }
  }
  W->st[S_SBYTES] += (uint64_t)emu_popc32(m) * e->mbytes;
  W->st[S_SACC]++;
  W->st[S_SREPLAY] += ((uint32_t)x & (uint32_t)(x >> 32)) != 0; /* mem_op's map word */
  return 0;
}

/* ld / st / atom / red for the lanes in m. */
static int mem_op(worker *W, warp *w, uint64_t *r, const eop *e, uint32_t m) {
  unsigned n = (unsigned)e->size * e->vec;
  if (e->space == PTX_SP_SHARED && e->vec == 1 && e->size == 4 && m &&
      ((e->k == K_LD && !e->sext && e->dw[0] >= 4) || e->k == K_ST) && !mem_shared32(W, r, e, m))
    return 0;
  int write = e->k != K_LD;
  uint64_t addr[EMU_LANES];
  uint8_t *p[EMU_LANES];
  long gidx[EMU_LANES];
  uint32_t gl = 0, sl = 0, ll = 0, cl = 0;
  const uint64_t *base = r + (size_t)e->abase * EMU_LANES;
  uint64_t lo = UINT64_MAX, hi = 0, orv = 0, prev = 0;
  int mono = 1;
  /* unit: a full warp of single-element loads or stores at consecutive
     addresses (lane l at addr[0] + l * n), the coalesced case; its lanes
     are checked, copied and counted as one block below */
  int unit = 0;
  if (m == UINT32_MAX && e->vec == 1 && e->k != K_ATOM) {
    uint64_t a0 = base[0] + (uint64_t)e->aoff, bad = 0, same = 0;
    if (e->a32) a0 = (uint32_t)a0;
    for (uint32_t l = 0; l < EMU_LANES; l++) {
      uint64_t a = base[l] + (uint64_t)e->aoff;
      if (e->a32) a = (uint32_t)a;
      addr[l] = a;
      bad |= a ^ (a0 + (uint64_t)l * n);
      same |= a ^ a0;
    }
    if (!bad) unit = 1, lo = orv = a0, hi = addr[EMU_LANES - 1];
    /* a full warp loading one address (a parameter, a constant) */
    if (!same && e->k == K_LD) {
      int rc = mem_uniform_ld(W, w, r, e, a0, n);
      if (rc <= 0) return rc;
    }
  }
  for (uint32_t mm = unit ? 0 : m; mm; mm &= mm - 1) {
    uint32_t l = (uint32_t)__builtin_ctz(mm);
    uint64_t a = base[l] + (uint64_t)e->aoff;
    if (e->a32) a = (uint32_t)a;
    addr[l] = a;
    orv |= a;
    if (a < lo) lo = a;
    if (a > hi) hi = a;
    if (a < prev) mono = 0;
    prev = a;
  }
  lacc ac;
  long g1 = -1; /* the one allocation of the global lanes, or -1: see gidx */
  uint32_t drop = 0; /* lanes whose access is tolerated and not performed */
  if (unit && warp_block(W, w, e, lo, hi, n, write, &ac)) {
    /* p[] stays unset: the block path reads and writes ac.p directly,
       except in shared memory, whose bank count wants the lanes */
    if (ac.rs == R_GLOBAL) gl = m, g1 = ac.g;
    else if (ac.rs == R_CONST) cl = m;
    else if (ac.rs == R_SHARED) {
      for (uint32_t l = 0; l < EMU_LANES; l++) p[l] = ac.p + (size_t)l * n;
      sl = m;
      unit = 0;
    }
  } else if ((unit = 0), warp_region(W, w, e, addr, m, lo, hi, orv, n, write, p, &ac)) {
    if (ac.rs == R_GLOBAL) gl = m, g1 = ac.g;
    else if (ac.rs == R_SHARED) sl = m;
    else if (ac.rs == R_LOCAL) ll = m;
    else if (ac.rs == R_CONST) cl = m;
  } else {
    for (uint32_t mm = m; mm; mm &= mm - 1) {
      uint32_t l = (uint32_t)__builtin_ctz(mm);
      ac.g = -1;
      int rc = resolve(W, w, l, e->space, addr[l], n, write, &ac);
      if (rc != E_OK) {
        if (!tolerated(W, rc, &ac)) {
          mem_fail(W, w, l, e, rc, addr[l], n, write, &ac);
          return -1;
        }
        note_oob(W, w, l, e, rc, addr[l], n, write, &ac);
        drop |= 1u << l;
        gl |= 1u << l;
        continue;
      }
      p[l] = ac.p;
      gidx[l] = ac.g;
      if (ac.rs == R_GLOBAL) gl |= 1u << l;
      else if (ac.rs == R_SHARED) sl |= 1u << l;
      else if (ac.rs == R_LOCAL) ll |= 1u << l;
      else if (ac.rs == R_CONST) cl |= 1u << l;
    }
  }
  if (drop) {
    /* a dropped read gives zeros, a dropped atomic returns 0 */
    for (uint32_t mm = drop; mm && (e->k == K_LD || !e->isred); mm &= mm - 1) {
      uint32_t l = (uint32_t)__builtin_ctz(mm);
      for (unsigned k = 0; k < (e->k == K_LD ? e->vec : 1u) && e->o.nd; k++)
        r[(size_t)e->o.d[k] * EMU_LANES + l] = 0;
    }
    m &= ~drop;
  }
  if (unit) {
    uint64_t *dst = r + (size_t)(e->k == K_LD ? e->o.d[0] : e->o.s[0]) * EMU_LANES;
    if (e->k == K_LD && n == 4 && !e->sext && e->dw[0] >= 4) {
      for (uint32_t l = 0; l < EMU_LANES; l++) {
        uint32_t v;
        memcpy(&v, ac.p + (size_t)l * 4, 4);
        dst[l] = v;
      }
    } else if (e->k == K_LD) {
      for (uint32_t l = 0; l < EMU_LANES; l++)
        dst[l] = extend(load_n(ac.p + (size_t)l * n, n), n, e->sext, e->dw[0]);
    } else if (n == 4) {
      for (uint32_t l = 0; l < EMU_LANES; l++) {
        uint32_t v = (uint32_t)dst[l];
        memcpy(ac.p + (size_t)l * 4, &v, 4);
      }
    } else if (n == 8) {
      memcpy(ac.p, dst, 8 * EMU_LANES); /* the slots are the lanes' 64-bit values */
    } else {
      for (uint32_t l = 0; l < EMU_LANES; l++) store_n(ac.p + (size_t)l * n, dst[l], n);
    }
  } else if (e->k == K_LD && e->vec == 1 && e->size == 4 && !e->sext && e->dw[0] >= 4) {
    /* one 32-bit element a lane, zero-extended: what extend() gives */
    uint64_t *dst = r + (size_t)e->o.d[0] * EMU_LANES;
    for (uint32_t mm = m; mm; mm &= mm - 1) {
      uint32_t l = (uint32_t)__builtin_ctz(mm), v;
      memcpy(&v, p[l], 4);
      dst[l] = v;
    }
  } else if (e->k == K_LD) {
    for (uint32_t mm = m; mm; mm &= mm - 1) {
      uint32_t l = (uint32_t)__builtin_ctz(mm);
      for (unsigned k = 0; k < e->vec; k++) {
        uint64_t v = load_n(p[l] + k * e->size, e->size);
        r[(size_t)e->o.d[k] * EMU_LANES + l] = extend(v, e->size, e->sext, e->dw[k]);
      }
    }
  } else if (e->k == K_ST) {
    for (uint32_t mm = m; mm; mm &= mm - 1) {
      uint32_t l = (uint32_t)__builtin_ctz(mm);
      for (unsigned k = 0; k < e->vec; k++)
        store_n(p[l] + k * e->size, r[(size_t)e->o.s[k] * EMU_LANES + l], e->size);
    }
  } else {
    const uint64_t *bs = r + (size_t)e->o.s[0] * EMU_LANES;
    const uint64_t *cs = e->o.ns > 1 ? r + (size_t)e->o.s[1] * EMU_LANES : bs;
    uint64_t mask = e->size == 4 ? 0xffffffffull : ~0ull;
    for (uint32_t mm = m; mm; mm &= mm - 1) {
      uint32_t l = (uint32_t)__builtin_ctz(mm);
      uint64_t old = atom_do(e, p[l], bs[l] & mask, cs[l] & mask);
      if (!e->isred) r[(size_t)e->o.d[0] * EMU_LANES + l] = extend(old, e->size, 0, e->dw[0]);
    }
  }
  /* statistics */
  if (gl) {
    unsigned cnt = emu_popc32(gl);
    uint64_t bytes = (uint64_t)cnt * e->mbytes;
    W->st[S_GBYTES] += bytes;
    W->st[e->k == K_LD ? S_GLOAD : e->k == K_ST ? S_GSTORE : S_GATOM] += bytes;
    W->st[S_GACC]++;
    if (unit) {
      /* [lo, hi + n) contiguous, every element aligned and at most 8 bytes:
         no element spans two sectors and every sector between is hit */
      W->st[S_GSECT] += (hi >> 5) - (lo >> 5) + 1;
      if (e->k == K_LD) W->st[S_GSECT_LD] += (hi >> 5) - (lo >> 5) + 1;
      if (W->tracing) emu_trace_range(W->tr, w->idx, e->k != K_LD, lo >> 5, hi >> 5);
      if (emu_touch(d_of(W), g1, lo - d_of(W)->a[g1].base, hi + n - lo, &W->tc)) {
        W->oom = 1;
        fail(W, w, -1, e->o.insn, 1, "out of memory for the footprint bitmap");
        return -1;
      }
      return 0;
    }
    /* distinct 32-byte sectors; ascending addresses need no sort */
    uint64_t sec[2 * EMU_LANES];
    unsigned ns = 0;
    for (uint32_t mm = gl; mm; mm &= mm - 1) {
      uint64_t a = addr[__builtin_ctz(mm)];
      sec[ns++] = a >> 5;
      if (((a + n - 1) >> 5) != (a >> 5)) sec[ns++] = (a + n - 1) >> 5;
    }
    unsigned nd = count_distinct(sec, ns); /* sorts sec */
    W->st[S_GSECT] += nd;
    if (e->k == K_LD) W->st[S_GSECT_LD] += nd;
    if (W->tracing) emu_trace_list(W->tr, w->idx, e->k != K_LD, sec, ns);
    if ((gl & ~drop) && touch_lanes(W, addr, g1 >= 0 ? NULL : gidx, g1, gl & ~drop, n, mono)) {
      W->oom = 1;
      fail(W, w, -1, e->o.insn, 1, "out of memory for the footprint bitmap");
      return -1;
    }
  }
  if (sl) {
    unsigned cnt = emu_popc32(sl);
    W->st[S_SBYTES] += (uint64_t)cnt * e->mbytes;
    W->st[S_SACC]++;
    /* replays: the most distinct 4-byte words any one bank (word % 32)
       serves, less one.  The usual case first: every lane's words [o >> 2,
       (o + n - 1) >> 2] within 64 of the lowest, as bits of one map word
       from it; bits j and j + 32 are one bank, so a bank serves two
       distinct words at most, and two only where both halves of the map
       have a bit.  (The word list below took 25 % of gemm_tiled's
       emulation, bank by bank.) */
    uint64_t flo = UINT64_MAX, fhi = 0, fw = 0;
    for (uint32_t mm = sl; mm; mm &= mm - 1) {
      uint64_t o = (uint64_t)(p[__builtin_ctz(mm)] - W->sh);
      uint64_t a = o >> 2, b = (o + n - 1) >> 2;
      flo = a < flo ? a : flo;
      fhi = b > fhi ? b : fhi;
      fw += b - a + 1;
    }
    if (fhi - flo < 64 && fw <= 4 * EMU_LANES) { /* the list below would hold every word */
      uint64_t x = 0;
      for (uint32_t mm = sl; mm; mm &= mm - 1) {
        uint64_t o = (uint64_t)(p[__builtin_ctz(mm)] - W->sh);
        uint64_t a = o >> 2, b = (o + n - 1) >> 2;
        x |= ((2ull << (b - a)) - 1) << (a - flo);
      }
      W->st[S_SREPLAY] += ((uint32_t)x & (uint32_t)(x >> 32)) != 0;
      goto shared_done;
    }
    uint64_t wd[4 * EMU_LANES], wlo = UINT64_MAX, whi = 0;
    unsigned nw = 0;
    for (uint32_t mm = sl; mm; mm &= mm - 1) {
      uint32_t l = (uint32_t)__builtin_ctz(mm);
      uint64_t o = (uint64_t)(p[l] - W->sh);
      for (uint64_t x = o >> 2; x <= (o + n - 1) >> 2 && nw < 4 * EMU_LANES; x++) {
        wd[nw++] = x;
        if (x < wlo) wlo = x;
        if (x > whi) whi = x;
      }
    }
    unsigned per[32] = {0}, mx = 0;
    if (whi - wlo < 64) {
      /* the usual case: one map word, kept in a register */
      uint64_t x = 0;
      for (unsigned i = 0; i < nw; i++) x |= 1ull << (wd[i] - wlo);
      for (; x; x &= x - 1) {
        unsigned b = (unsigned)__builtin_ctzll(x) & 31;
        if (++per[b] > mx) mx = per[b];
      }
    } else if (whi - wlo < 64 * SH_SPAN_WORDS) {
      /* the words as a bitmap from wlo: each set bit is one distinct word;
         bit j of a 64-bit map word is in bank (wlo + j) % 32, and shifting
         every word by wlo only renames the banks, so the maximum is the same */
      uint64_t bm[SH_SPAN_WORDS] = {0};
      for (unsigned i = 0; i < nw; i++) bm[(wd[i] - wlo) >> 6] |= 1ull << ((wd[i] - wlo) & 63);
      for (unsigned k = 0; k <= (whi - wlo) >> 6; k++)
        for (uint64_t x = bm[k]; x; x &= x - 1) {
          unsigned b = (unsigned)__builtin_ctzll(x) & 31;
          if (++per[b] > mx) mx = per[b];
        }
    } else {
      count_distinct(wd, nw); /* sorts */
      for (unsigned i = 0; i < nw; i++) {
        if (i && wd[i] == wd[i - 1]) continue;
        unsigned b = (unsigned)(wd[i] & 31);
        if (++per[b] > mx) mx = per[b];
      }
    }
    if (mx > 1) W->st[S_SREPLAY] += mx - 1;
  }
shared_done:
  if (ll) W->st[S_LBYTES] += (uint64_t)emu_popc32(ll) * e->mbytes;
  if (cl && const_indexed(w, e)) {
    /* the constant cache serves one address a clock: the distinct words */
    uint64_t cw[EMU_LANES];
    unsigned nc = 0;
    for (uint32_t mm = cl; mm; mm &= mm - 1) cw[nc++] = addr[__builtin_ctz(mm)] >> 2;
    W->st[S_CACC]++;
    W->st[S_CREPLAY] += count_distinct(cw, nc) - 1;
  }
  return 0;
}

/* Checked read for printf (generic addresses of one lane). */
typedef struct rdctx { worker *W; warp *w; uint32_t lane; } rdctx;
static int printf_read(void *vctx, uint64_t a, void *dst, size_t n) {
  rdctx *c = vctx;
  lacc ac;
  ac.g = -1;
  for (size_t i = 0; i < n; i++) {
    if (resolve(c->W, c->w, c->lane, PTX_SP_GENERIC, a + i, 1, 0, &ac) != E_OK) return -1;
    ((uint8_t *)dst)[i] = *ac.p;
  }
  return 0;
}

/* Value of call argument j for one lane: from a caller var or a slot. */
static void arg_bytes(worker *W, const warp *w, const frame *fr,
                      const uint64_t *r, const carg *a, uint32_t lane,
                      void *dst, uint64_t n) {
  if (a->isvar) {
    memcpy(dst, lane_local(W, w, lane) + fr->lbase + fr->fn->voff[a->v], n);
  } else {
    uint64_t v = r[(size_t)a->v * EMU_LANES + lane];
    memcpy(dst, &v, n > 8 ? 8 : n);
  }
}

static int do_printf(worker *W, warp *w, const frame *fr, uint64_t *r,
                     const eop *e, uint32_t m) {
  const ecall *c = e->call;
  for (uint32_t mm = m; mm; mm &= mm - 1) {
    uint32_t l = (uint32_t)__builtin_ctz(mm);
    uint64_t fmt = 0, args = 0;
    arg_bytes(W, w, fr, r, &c->args[0], l, &fmt, 8);
    arg_bytes(W, w, fr, r, &c->args[1], l, &args, 8);
    rdctx rc = {W, w, l};
    char msg[256];
    size_t before = W->pf.len;
    if (emu_printf_format(&W->pf, fmt, args, printf_read, &rc, msg, sizeof msg) != 0) {
      fail(W, w, (int)l, e->o.insn, 0, "%s", msg);
      return -1;
    }
    if (c->nrets) {
      int32_t cnt = (int32_t)(W->pf.len - before);
      const carg *ra = &c->rets[0];
      if (ra->isvar) {
        const ptx_var *v = &fr->fn->f->vars[ra->v];
        memcpy(lane_local(W, w, l) + fr->lbase + fr->fn->voff[ra->v], &cnt,
               v->size < 4 ? v->size : 4);
      } else {
        r[(size_t)ra->v * EMU_LANES + l] = (uint32_t)cnt;
      }
    }
  }
  return 0;
}

/* The texture or surface object in lane l's handle register. */
static const emu_texview *tex_view(worker *W, const warp *w, uint64_t *r, const eop *e,
                                   uint32_t l) {
  uint64_t h = r[(size_t)e->abase * EMU_LANES + l];
  if (W->tv.t && W->tv.handle == h) return &W->tv;
  char why[256];
  if (emu_texview_open(W->L->em->d, h, &W->tv, why, sizeof why)) {
    W->tv.t = NULL;
    W->kind = EMU_FAULT_ADDRESS;
    fail(W, w, (int)l, e->o.insn, 0, "%s", why);
    return NULL;
  }
  return &W->tv;
}

static int tex_oom(worker *W, const warp *w, const eop *e) {
  W->oom = 1;
  fail(W, w, -1, e->o.insn, 1, "out of memory for the footprint bitmap");
  return -1;
}

/* tex.geom.v4.dtype.ctype d, [h, {c}] for the lanes in m. */
static int do_tex(worker *W, warp *w, uint64_t *r, const eop *e, uint32_t m) {
  const ptx_insn *in = e->o.insn;
  int layered = e->geom == EMU_GEOM_A1D || e->geom == EMU_GEOM_A2D;
  int icoord = in->type2 == PTX_T_S32;
  for (uint32_t mm = m; mm; mm &= mm - 1) {
    uint32_t l = (uint32_t)__builtin_ctz(mm);
    const emu_texview *v = tex_view(W, w, r, e, l);
    if (!v) return -1;
    double c[4], out[4];
    int layer = 0;
    unsigned j = 0;
    if (layered) layer = (int32_t)r[(size_t)e->o.s[j++] * EMU_LANES + l];
    for (unsigned k = 0; j < e->ncoord; j++, k++) {
      uint64_t raw = r[(size_t)e->o.s[j] * EMU_LANES + l];
      c[k] = icoord ? (double)(int32_t)raw : (double)f32_of((uint32_t)raw);
    }
    if (emu_tex_sample(W->L->em->d, v, e->geom, c, layer, icoord, &W->tc, out))
      return tex_oom(W, w, e);
    for (unsigned k = 0; k < e->o.nd && k < 4; k++) {
      uint64_t bits;
      if (in->type == PTX_T_F32) bits = bits_f32((float)out[k]);
      else if (in->type == PTX_T_S32) bits = (uint32_t)(int32_t)out[k];
      else bits = (uint32_t)(out[k] < 0 ? 0 : out[k]);
      r[(size_t)e->o.d[k] * EMU_LANES + l] = bits;
    }
  }
  return 0;
}

/* suld.b / sust.b for the lanes in m. */
static int do_surf(worker *W, warp *w, uint64_t *r, const eop *e, uint32_t m) {
  int layered = e->geom == EMU_GEOM_A1D || e->geom == EMU_GEOM_A2D;
  unsigned bytes = (unsigned)e->size * e->vec;
  for (uint32_t mm = m; mm; mm &= mm - 1) {
    uint32_t l = (uint32_t)__builtin_ctz(mm);
    const emu_texview *v = tex_view(W, w, r, e, l);
    if (!v) return -1;
    int64_t c[4] = {0, 0, 0, 0};
    int layer = 0;
    unsigned j = 0;
    if (layered) layer = (int32_t)r[(size_t)e->o.s[j++] * EMU_LANES + l];
    for (unsigned k = 0; j < e->ncoord; j++, k++)
      c[k] = (int32_t)r[(size_t)e->o.s[j] * EMU_LANES + l];
    uint8_t *p = NULL;
    int rc = emu_surf_access(W->L->em->d, v, c, layer, e->geom, bytes, e->smode, &p, &W->tc);
    if (rc < 0) return tex_oom(W, w, e);
    if (rc > 0) {
      W->kind = EMU_FAULT_ADDRESS;
      fail(W, w, (int)l, e->o.insn, 0,
           "surface %s of %u bytes out of bounds at byte %lld, row %lld, slice/layer %lld "
           "(surface %llu x %llu x %llu elements of %llu bytes)",
           e->k == K_SULD ? "read" : "write", bytes, (long long)c[0], (long long)c[1],
           (long long)(layered ? layer : c[2]), (unsigned long long)v->t->width,
           (unsigned long long)v->t->height, (unsigned long long)v->t->depth,
           (unsigned long long)v->elem);
      return -1;
    }
    for (unsigned k = 0; k < e->vec; k++) {
      if (e->k == K_SULD) {
        uint64_t x = p ? load_n(p + k * e->size, e->size) : 0;
        r[(size_t)e->o.d[k] * EMU_LANES + l] = extend(x, e->size, 0, e->dw[k]);
      } else if (p) {
        store_n(p + k * e->size, r[(size_t)e->o.s[e->ncoord + k] * EMU_LANES + l], e->size);
      }
    }
  }
  return 0;
}

/* NUL-terminated string at generic address a for one lane (truncated to
   cap - 1 bytes; "?" when unreadable). */
static void read_cstr(worker *W, warp *w, uint32_t lane, uint64_t a, char *buf, size_t cap) {
  rdctx rc = {W, w, lane};
  size_t i = 0;
  for (; i + 1 < cap; i++) {
    char ch;
    if (printf_read(&rc, a + i, &ch, 1) != 0) {
      snprintf(buf, cap, "?");
      return;
    }
    if (!(buf[i] = ch)) return;
  }
  buf[i] = 0;
}

/* A failed device assert(): __assertfail(message, file, line, function,
   charsize) fails the launch as cudaErrorAssert does, naming all four. */
static void do_assert(worker *W, warp *w, const frame *fr, const uint64_t *r, const eop *e,
                      uint32_t m) {
  const ecall *c = e->call;
  uint32_t l = (uint32_t)__builtin_ctz(m);
  uint64_t msg = 0, file = 0, func = 0;
  uint32_t line = 0;
  arg_bytes(W, w, fr, r, &c->args[0], l, &msg, 8);
  arg_bytes(W, w, fr, r, &c->args[1], l, &file, 8);
  arg_bytes(W, w, fr, r, &c->args[2], l, &line, 4);
  arg_bytes(W, w, fr, r, &c->args[3], l, &func, 8);
  char ms[256], fs[256], fn[256];
  read_cstr(W, w, l, msg, ms, sizeof ms);
  read_cstr(W, w, l, file, fs, sizeof fs);
  read_cstr(W, w, l, func, fn, sizeof fn);
  W->kind = EMU_FAULT_ASSERT;
  fail(W, w, (int)l, e->o.insn, 0, "device assertion `%s` failed at %s:%u in %s", ms, fs, line,
       fn);
}

/* ------------------------------------------------------- collectives -- */

static uint32_t member_mask(const uint64_t *r, const eop *e, unsigned j,
                            uint32_t m) {
  if (j >= e->o.ns || !m) return 0xffffffffu;
  return (uint32_t)r[(size_t)e->o.s[j] * EMU_LANES + __builtin_ctz(m)];
}

static void do_shfl(uint64_t *r, const eop *e, uint32_t m) {
  uint64_t a[EMU_LANES];
  const uint64_t *as = r + (size_t)e->o.s[0] * EMU_LANES;
  const uint64_t *bs = r + (size_t)e->o.s[1] * EMU_LANES;
  const uint64_t *cs = r + (size_t)e->o.s[2] * EMU_LANES;
  memcpy(a, as, sizeof a);
  unsigned mode = e->o.insn->aux;
  uint64_t res[EMU_LANES], pv[EMU_LANES];
  for (uint32_t mm = m; mm; mm &= mm - 1) {
    uint32_t l = (uint32_t)__builtin_ctz(mm);
    uint32_t b = (uint32_t)bs[l] & 31, c = (uint32_t)cs[l];
    uint32_t segmask = (c >> 8) & 31, clamp = c & 31;
    uint32_t minl = l & segmask, maxl = minl | (clamp & ~segmask);
    int32_t j;
    int ok;
    switch (mode) {
      case PTX_AUX_UP: j = (int32_t)l - (int32_t)b; ok = j >= (int32_t)maxl; break;
      case PTX_AUX_DOWN: j = (int32_t)(l + b); ok = j <= (int32_t)maxl; break;
      case PTX_AUX_BFLY: j = (int32_t)(l ^ b); ok = j <= (int32_t)maxl; break;
      default: j = (int32_t)(minl | (b & ~segmask)); ok = j <= (int32_t)maxl; break;
    }
    if (!ok || j < 0 || j > 31) j = (int32_t)l;
    res[l] = a[j] & 0xffffffffull;
    pv[l] = (uint64_t)ok;
  }
  for (uint32_t mm = m; mm; mm &= mm - 1) {
    uint32_t l = (uint32_t)__builtin_ctz(mm);
    r[(size_t)e->o.d[0] * EMU_LANES + l] = res[l];
    if (e->o.nd > 1) r[(size_t)e->o.d[1] * EMU_LANES + l] = pv[l];
  }
}

static void do_vote(uint64_t *r, const eop *e, uint32_t m) {
  uint32_t mm = m & member_mask(r, e, 1, m);
  const uint64_t *ps = r + (size_t)e->o.s[0] * EMU_LANES;
  int neg = e->o.sneg & 1;
  uint32_t ballot = 0;
  for (uint32_t x = mm; x; x &= x - 1) {
    uint32_t l = (uint32_t)__builtin_ctz(x);
    if ((ps[l] & 1) ^ (uint64_t)neg) ballot |= 1u << l;
  }
  uint64_t v;
  switch (e->o.insn->aux) {
    case PTX_AUX_ALL: v = ballot == mm; break;
    case PTX_AUX_ANY: v = ballot != 0; break;
    case PTX_AUX_UNIALL: v = ballot == 0 || ballot == mm; break;
    default: v = ballot; break;
  }
  for (uint32_t x = m; x; x &= x - 1)
    r[(size_t)e->o.d[0] * EMU_LANES + __builtin_ctz(x)] = v;
}

static void do_match(uint64_t *r, const eop *e, uint32_t m) {
  uint32_t mm = m & member_mask(r, e, 1, m);
  const uint64_t *as = r + (size_t)e->o.s[0] * EMU_LANES;
  uint64_t wmask = e->size == 8 ? ~0ull : 0xffffffffull;
  uint32_t allsame = 1;
  uint32_t first = mm ? (uint32_t)__builtin_ctz(mm) : 0;
  for (uint32_t x = mm; x; x &= x - 1)
    if ((as[__builtin_ctz(x)] & wmask) != (as[first] & wmask)) allsame = 0;
  for (uint32_t x = m; x; x &= x - 1) {
    uint32_t l = (uint32_t)__builtin_ctz(x);
    uint64_t v;
    if (e->o.insn->aux == PTX_AUX_ALL) {
      v = allsame ? mm : 0;
      if (e->o.nd > 1) r[(size_t)e->o.d[1] * EMU_LANES + l] = allsame;
    } else {
      uint32_t s = 0;
      for (uint32_t y = mm; y; y &= y - 1) {
        uint32_t k = (uint32_t)__builtin_ctz(y);
        if ((as[k] & wmask) == (as[l] & wmask)) s |= 1u << k;
      }
      v = s;
    }
    r[(size_t)e->o.d[0] * EMU_LANES + l] = v;
  }
}

static void do_redux(uint64_t *r, const eop *e, uint32_t m) {
  uint32_t mm = m & member_mask(r, e, 1, m);
  const uint64_t *as = r + (size_t)e->o.s[0] * EMU_LANES;
  unsigned t = e->o.insn->type, aux = e->o.insn->aux;
  uint32_t acc = 0;
  int first = 1;
  for (uint32_t x = mm; x; x &= x - 1) {
    uint32_t v = (uint32_t)as[__builtin_ctz(x)];
    if (first) { acc = v; first = 0; continue; }
    switch (aux) {
      case PTX_AUX_ADD: acc += v; break;
      case PTX_AUX_AND: acc &= v; break;
      case PTX_AUX_OR: acc |= v; break;
      case PTX_AUX_XOR: acc ^= v; break;
      case PTX_AUX_MIN:
        acc = t == PTX_T_S32 ? ((int32_t)v < (int32_t)acc ? v : acc) : (v < acc ? v : acc);
        break;
      default:
        acc = t == PTX_T_S32 ? ((int32_t)v > (int32_t)acc ? v : acc) : (v > acc ? v : acc);
    }
  }
  for (uint32_t x = m; x; x &= x - 1)
    r[(size_t)e->o.d[0] * EMU_LANES + __builtin_ctz(x)] = acc;
}

/* ------------------------------------------------------------ control -- */

/* Retire lanes from every SIMT entry at index >= from. */
static void drop_lanes(warp *w, uint32_t from, uint32_t m) {
  for (uint32_t i = from; i < w->ns; i++) w->st[i].mask &= ~m;
}

/* Copy the callee's return values to the caller for the lanes in m. */
static void copy_rets(worker *W, warp *w, uint32_t m) {
  const frame *cf = &w->fr[w->nf - 1], *pf = &w->fr[w->nf - 2];
  const ecall *c = cf->call->call;
  const ptx_func *f = cf->fn->f;
  uint64_t *pr = w->ra + pf->roff;
  for (uint32_t j = 0; j < c->nrets; j++) {
    const ptx_var *rv = &f->vars[f->nparams + j];
    uint64_t src = cf->lbase + cf->fn->voff[f->nparams + j];
    for (uint32_t mm = m; mm; mm &= mm - 1) {
      uint32_t l = (uint32_t)__builtin_ctz(mm);
      uint8_t *loc = lane_local(W, w, l);
      if (c->rets[j].isvar) {
        const ptx_var *dv = &pf->fn->f->vars[c->rets[j].v];
        uint64_t n = rv->size < dv->size ? rv->size : dv->size;
        memcpy(loc + pf->lbase + pf->fn->voff[c->rets[j].v], loc + src, n);
      } else {
        uint64_t v = 0;
        memcpy(&v, loc + src, rv->size < 8 ? rv->size : 8);
        pr[(size_t)c->rets[j].v * EMU_LANES + l] = v;
      }
    }
  }
}

/* Start a call for the lanes in m; the caller resumes at pc+1. */
static int do_call(worker *W, warp *w, const eop *e, uint32_t pc, uint32_t m) {
  const ecall *c = e->call;
  efunc *callee = c->callee;
  frame *cf = &w->fr[w->nf - 1];
  if (w->nf >= MAX_CALL_DEPTH) {
    fail(W, w, __builtin_ctz(m), e->o.insn, 0, "call depth exceeds %d", MAX_CALL_DEPTH);
    return -1;
  }
  uint64_t lbase = emu_align_up(cf->ltop, 16);
  if (lbase + callee->frame > W->L->lsz) {
    fail(W, w, __builtin_ctz(m), e->o.insn, 0,
         "local memory stack overflow calling %s (%llu bytes per thread)",
         callee->f->name, (unsigned long long)W->L->lsz);
    return -1;
  }
  w->st[w->ns - 1].pc = pc + 1;
  /* copy the arguments into the callee's frame before pushing (the push
     may move the register arena) */
  const ptx_func *f = callee->f;
  for (uint32_t j = 0; j < c->nargs; j++) {
    uint64_t n = f->vars[j].size;
    uint64_t dst = lbase + callee->voff[j];
    const uint64_t *r = w->ra + cf->roff;
    for (uint32_t mm = m; mm; mm &= mm - 1) {
      uint32_t l = (uint32_t)__builtin_ctz(mm);
      uint8_t *loc = lane_local(W, w, l);
      if (c->args[j].isvar) {
        const ptx_var *sv = &cf->fn->f->vars[c->args[j].v];
        uint64_t k = n < sv->size ? n : sv->size;
        memmove(loc + dst, loc + cf->lbase + cf->fn->voff[c->args[j].v], k);
      } else {
        arg_bytes(W, w, cf, r, &c->args[j], l, loc + dst, n < 8 ? n : 8);
      }
    }
  }
  if (push_frame(W, w, callee, lbase, e) != 0 || push_ent(w, 0, m, NONE) != 0) {
    W->oom = 1;
    fail(W, w, -1, e->o.insn, 1, "out of memory");
    return -1;
  }
  return 0;
}

/*
 * Budget, time limit and stop flags; called at block entries and every
 * BLOCK_STEP instructions inside a longer block.  The clock is read once
 * CLOCK_EVERY thread-instructions have been counted since the last read, or
 * always when `inside` (a step inside a huge block, whose instructions were
 * all counted at its entry).  Reading it every 256 block entries instead let
 * a kernel with one 1M-instruction block run 4.8 s past a 1 s limit.
 */
static int check_limits(worker *W, const warp *w, const ptx_insn *in, int inside) {
  launch *L = W->L;
  if (__atomic_load_n(&L->stop_all, __ATOMIC_RELAXED) ||
      __atomic_load_n(&L->abort_cta, __ATOMIC_RELAXED) < W->cta)
    return -1;
  if (W->insn_acc >= L->flush_at) {
    uint64_t u = __atomic_add_fetch(&L->used, W->insn_acc, __ATOMIC_RELAXED);
    if (L->cfg->progress) __atomic_add_fetch(L->cfg->progress, W->insn_acc, __ATOMIC_RELAXED);
    W->insn_acc = 0;
    if (L->cfg->insn_budget && u > L->cfg->insn_budget) {
      W->kind = EMU_FAULT_LIMIT;
      fail(W, w, -1, in, 1, "exceeded the instruction budget of %llu thread-instructions",
           (unsigned long long)L->cfg->insn_budget);
      return -1;
    }
  }
  if (L->cfg->time_limit_s > 0 && (inside || W->since_clock >= CLOCK_EVERY)) {
    W->since_clock = 0;
    if (now_s() - L->t0 > L->cfg->time_limit_s) {
      W->kind = EMU_FAULT_LIMIT;
      fail(W, w, -1, in, 1, "exceeded the time limit of %g s", L->cfg->time_limit_s);
      return -1;
    }
  }
  return 0;
}

static inline uint32_t guard_mask(const uint64_t *p, int neg) {
  uint32_t m = 0;
  for (uint32_t l = 0; l < EMU_LANES; l++) m |= (uint32_t)(p[l] & 1) << l;
  return neg ? ~m : m;
}

/*
 * Run warp w until it exits, waits at a barrier, or fails (-1).
 * Locals: fr/fn/r/ops describe the running frame and are reloaded after
 * anything that changes frames or may move the register arena.
 */
static int run_warp(worker *W, warp *w) {
  launch *L = W->L;
  frame *fr;
  efunc *fn;
  uint64_t *r;
  const eop *ops;
#define RELOAD()                          \
  do {                                    \
    fr = &w->fr[w->nf - 1];               \
    fn = fr->fn;                          \
    r = w->ra + fr->roff;                 \
    ops = fn->ops;                        \
  } while (0)
  RELOAD();
  for (;;) {
    /* ---- block boundary: pick the running entry ---- */
    if (w->ns == fr->sbase) {
      if (w->nf == 1) {
        w->state = W_DONE;
        return 0;
      }
      w->rtop = fr->roff;
      w->nf--;
      RELOAD();
      continue;
    }
    sent *t = &w->st[w->ns - 1];
    if (!t->mask || t->pc == t->rpc) {
      if (t->mask && t->pc == NONE) {
        fail(W, w, -1, NULL, 0, "internal error: lanes lost at reconvergence");
        return -1;
      }
      w->ns--;
      continue;
    }
    uint32_t pc = t->pc, active = t->mask;
    const ptx_func *f = fn->f;
    if (pc >= f->ninsns) {
      /* fell off the end: an implicit ret */
      if (w->nf == 1) {
        drop_lanes(w, 0, active);
        w->live &= ~active;
      } else {
        copy_rets(W, w, active);
        drop_lanes(w, fr->sbase, active);
      }
      continue;
    }
    uint32_t b = fn->bstart[pc], end;
    if (b != NONE) {
      uint32_t pop = emu_popc32(active);
      end = fn->bend[b];
      W->tcnt[fn->cbase + b] += pop;
      W->wcnt[fn->cbase + b]++;
      w->clock += end - pc;
      W->insn_acc += (uint64_t)pop * (end - pc);
      W->since_clock += (uint64_t)pop * (end - pc);
      if (check_limits(W, w, &f->insns[pc], 0) != 0) return -1;
    } else {
      end = fn->bend[f->cfg->block_of[pc]];
    }
    /* ---- execute the block from pc, checking limits every BLOCK_STEP ---- */
    uint32_t step = end - pc > BLOCK_STEP ? pc + BLOCK_STEP : end;
    for (;;) {
      if (pc >= step) {
        if (pc >= end) {
          w->st[w->ns - 1].pc = pc;
          break;
        }
        if (check_limits(W, w, &f->insns[pc], 1) != 0) return -1;
        step = end - pc > BLOCK_STEP ? pc + BLOCK_STEP : end;
      }
      const eop *e = &ops[pc];
      uint32_t m = active;
      if (e->guard != NONE) m &= guard_mask(r + (size_t)e->guard * EMU_LANES, e->gneg);
      switch (e->k) {
        case K_ALU:
          if (m) {
            if (e->clock) refresh_clock(W, w, fn, r);
            e->o.alu(r, &e->o, m);
          }
          pc++;
          continue;
        case K_NOP:
          pc++;
          continue;
        case K_LD: case K_ST: case K_ATOM:
          if (m && mem_op(W, w, r, e, m) != 0) return -1;
          pc++;
          continue;
        case K_CVTA: {
          uint64_t win = 0;
          if (e->space == PTX_SP_SHARED || e->space == PTX_SP_SHARED_CLUSTER) win = EMU_SHARED_WIN;
          else if (e->space == PTX_SP_LOCAL) win = EMU_LOCAL_WIN;
          else if (e->space == PTX_SP_PARAM) win = 0; /* param addresses are generic already */
          int to = (e->o.insn->flags & PTX_F_TO) != 0;
          const uint64_t *s = r + (size_t)e->o.s[0] * EMU_LANES;
          uint64_t *d = r + (size_t)e->o.d[0] * EMU_LANES;
          for (uint32_t mm = m; mm; mm &= mm - 1) {
            uint32_t l = (uint32_t)__builtin_ctz(mm);
            uint64_t v = s[l];
            if (win) v = to ? (v - win < EMU_WIN_SIZE ? v - win : v) : v + win;
            d[l] = e->size == 4 ? (uint32_t)v : v;
          }
          pc++;
          continue;
        }
        case K_ISSPACEP: {
          const uint64_t *s = r + (size_t)e->o.s[0] * EMU_LANES;
          uint64_t *d = r + (size_t)e->o.d[0] * EMU_LANES;
          for (uint32_t mm = m; mm; mm &= mm - 1) {
            uint32_t l = (uint32_t)__builtin_ctz(mm);
            uint64_t a = s[l];
            int sh = a - EMU_SHARED_WIN < EMU_WIN_SIZE, lo = a - EMU_LOCAL_WIN < EMU_WIN_SIZE,
                pa = a - EMU_PARAM_WIN < EMU_WIN_SIZE;
            int v;
            switch (e->space) {
              case PTX_SP_SHARED: case PTX_SP_SHARED_CLUSTER: v = sh; break;
              case PTX_SP_LOCAL: v = lo; break;
              case PTX_SP_PARAM: v = pa; break;
              default: v = !sh && !lo && !pa && emu_galloc_find(L->em->d, a) >= 0;
            }
            d[l] = (uint64_t)v;
          }
          pc++;
          continue;
        }
        case K_BRA: {
          uint32_t top = w->ns - 1;
          if (e->guard == NONE) {
            w->st[top].pc = e->x;
            break;
          }
          W->st[S_BRANCH]++;
          uint32_t T = m, N = active & ~m, fall = pc + 1;
          if (!N || e->x == fall) { w->st[top].pc = e->x; break; }
          if (!T) { w->st[top].pc = fall; break; }
          W->st[S_DIVERGE]++;
          uint32_t R = fn->brpc[f->cfg->block_of[pc]];
          if (w->st[top].rpc == R) w->ns--;
          else w->st[top].pc = R;
          if ((fall != R && push_ent(w, fall, N, R) != 0) ||
              (e->x != R && push_ent(w, e->x, T, R) != 0)) {
            fail(W, w, -1, e->o.insn, 1, "out of memory");
            return -1;
          }
          break;
        }
        case K_BRX: {
          /* brx.idx idx, T: each lane of m goes to T's entry idx, the
             other active lanes (guard false) to the fall-through.  Lanes
             are grouped by target instruction; with more than one group
             the warp diverges as at a bra (see the note at the top), one
             path entry per group, pushed so that the paths run in table
             order (a group's place: its lowest index) and the fall-through
             last. */
          W->st[S_BRANCH]++;
          const ptx_label *tab = e->tab;
          const uint64_t *ix = r + (size_t)e->o.s[0] * EMU_LANES;
          uint32_t gpc[EMU_LANES + 1], gmask[EMU_LANES + 1], gkey[EMU_LANES + 1], ng = 0;
          uint32_t N = active & ~m;
          for (uint32_t mm = m; mm; mm &= mm - 1) {
            uint32_t l = (uint32_t)__builtin_ctz(mm), v = (uint32_t)ix[l];
            if (v >= tab->ntargets) {
              fail(W, w, (int)l, e->o.insn, 0,
                   "brx.idx index %u out of range (table of %u targets)", v, tab->ntargets);
              return -1;
            }
            uint32_t to = f->labels[tab->targets[v]].insn, g = 0;
            while (g < ng && gpc[g] != to) g++;
            if (g == ng) { gpc[g] = to; gmask[g] = 0; gkey[g] = v; ng++; }
            gmask[g] |= 1u << l;
            if (v < gkey[g]) gkey[g] = v;
          }
          if (N) {
            uint32_t g = 0;
            while (g < ng && gpc[g] != pc + 1) g++;
            if (g == ng) { gpc[g] = pc + 1; gmask[g] = 0; gkey[g] = UINT32_MAX; ng++; }
            gmask[g] |= N;
          }
          uint32_t top = w->ns - 1;
          if (ng <= 1) {
            w->st[top].pc = ng ? gpc[0] : pc + 1;
            break;
          }
          W->st[S_DIVERGE]++;
          for (uint32_t i = 1; i < ng; i++) /* insertion sort, key descending */
            for (uint32_t j = i; j > 0 && gkey[j - 1] < gkey[j]; j--) {
              uint32_t tp = gpc[j], tm = gmask[j], tk = gkey[j];
              gpc[j] = gpc[j - 1]; gmask[j] = gmask[j - 1]; gkey[j] = gkey[j - 1];
              gpc[j - 1] = tp; gmask[j - 1] = tm; gkey[j - 1] = tk;
            }
          uint32_t R = fn->brpc[f->cfg->block_of[pc]];
          if (w->st[top].rpc == R) w->ns--;
          else w->st[top].pc = R;
          for (uint32_t g = 0; g < ng; g++)
            if (gpc[g] != R && push_ent(w, gpc[g], gmask[g], R) != 0) {
              fail(W, w, -1, e->o.insn, 1, "out of memory");
              return -1;
            }
          break;
        }
        case K_CALL:
          if (!m) { pc++; continue; }
          if (do_call(W, w, e, pc, m) != 0) return -1;
          RELOAD();
          break;
        case K_PRINTF:
          if (m && do_printf(W, w, fr, r, e, m) != 0) return -1;
          pc++;
          continue;
        case K_ASSERT:
          if (!m) { pc++; continue; }
          do_assert(W, w, fr, r, e, m);
          return -1;
        case K_TEX:
          if (m && do_tex(W, w, r, e, m) != 0) return -1;
          pc++;
          continue;
        case K_SULD: case K_SUST:
          if (m && do_surf(W, w, r, e, m) != 0) return -1;
          pc++;
          continue;
        case K_RET:
          if (w->nf > 1) {
            if (m) {
              copy_rets(W, w, m);
              drop_lanes(w, fr->sbase, m);
            }
            w->st[w->ns - 1].pc = pc + 1;
            break;
          }
          /* ret from the kernel is exit */
          __attribute__((fallthrough));
        case K_EXIT:
          if (m) {
            drop_lanes(w, 0, m);
            w->live &= ~m;
          }
          w->st[w->ns - 1].pc = pc + 1;
          break;
        case K_TRAP:
          if (!m) { pc++; continue; }
          W->kind = EMU_FAULT_TRAP;
          fail(W, w, __builtin_ctz(m), e->o.insn, 0, "trap: the kernel aborted");
          return -1;
        case K_BAR: {
          if (!m) { pc++; continue; }
          W->st[S_BARRIER]++;
          uint32_t first = (uint32_t)__builtin_ctz(m);
          uint32_t id = e->o.ns > (e->isred ? 1u : 0u) ? (uint32_t)r[(size_t)e->o.s[0] * EMU_LANES + first] : 0;
          if (id >= NBAR) {
            fail(W, w, (int)first, e->o.insn, 0, "barrier id %u out of range", id);
            return -1;
          }
          bar_state *bs = &W->bar[id];
          unsigned cntj = e->isred ? 2 : 1;
          if (e->o.ns > cntj && !(e->isred && e->o.ns == 2)) {
            uint64_t cnt = r[(size_t)e->o.s[1] * EMU_LANES + first];
            bs->want = (uint32_t)((cnt + 31) / 32);
          }
          if (e->isred) {
            const uint64_t *ps = r + (size_t)e->o.s[e->o.ns - 1] * EMU_LANES;
            int neg = (e->o.sneg >> (e->o.ns - 1)) & 1;
            if (bs->arrived == 0) { bs->andv = 1; bs->orv = 0; bs->popc = 0; }
            for (uint32_t mm = m; mm; mm &= mm - 1) {
              uint32_t v = (uint32_t)((ps[__builtin_ctz(mm)] & 1) ^ (uint64_t)neg);
              bs->popc += v;
              bs->andv &= v;
              bs->orv |= v;
            }
            w->bar_dslot = e->o.d[0];
            w->bar_dmask = m;
          }
          bs->arrived++;
          w->st[w->ns - 1].pc = pc + 1;
          if (e->o.insn->flags & PTX_F_ARRIVE) break;
          w->bar_id = id;
          w->state = W_BAR;
          return 0;
        }
        case K_SHFL:
          if (m) do_shfl(r, e, m);
          pc++;
          continue;
        case K_VOTE:
          if (m) do_vote(r, e, m);
          pc++;
          continue;
        case K_MATCH:
          if (m) do_match(r, e, m);
          pc++;
          continue;
        case K_REDUX:
          if (m) do_redux(r, e, m);
          pc++;
          continue;
        case K_ACTIVEMASK:
          for (uint32_t mm = m; mm; mm &= mm - 1)
            r[(size_t)e->o.d[0] * EMU_LANES + __builtin_ctz(mm)] = active;
          pc++;
          continue;
        case K_ELECT: {
          uint32_t mm = m & member_mask(r, e, 0, m);
          uint32_t leader = mm ? (uint32_t)__builtin_ctz(mm) : 0;
          for (uint32_t x = m; x; x &= x - 1) {
            uint32_t l = (uint32_t)__builtin_ctz(x);
            r[(size_t)e->o.d[0] * EMU_LANES + l] = leader;
            if (e->o.nd > 1) r[(size_t)e->o.d[1] * EMU_LANES + l] = mm && l == leader;
          }
          pc++;
          continue;
        }
        default:
          fail(W, w, -1, e->o.insn, 0, "internal error: bad engine op");
          return -1;
      }
      break; /* control transfer: back to the boundary */
    }
  }
#undef RELOAD
}

/* Release barriers whose every expected warp has arrived; 1 if any. */
static int release_barriers(worker *W) {
  int any = 0;
  for (uint32_t id = 0; id < NBAR; id++) {
    bar_state *bs = &W->bar[id];
    if (!bs->arrived) continue;
    uint32_t want = bs->want ? bs->want : W->live_warps;
    if (bs->arrived < want) continue;
    uint32_t v = 0;
    for (uint32_t i = 0; i < W->nw; i++) {
      warp *w = &W->w[i];
      if (w->state != W_BAR || w->bar_id != id) continue;
      w->state = W_RUN;
      const eop *e = NULL;
      /* bar.red result: the instruction before the resume pc */
      frame *fr = &w->fr[w->nf - 1];
      uint32_t pc = w->st[w->ns - 1].pc;
      if (pc > 0) e = &fr->fn->ops[pc - 1];
      if (e && e->k == K_BAR && e->isred) {
        switch (e->o.insn->aux) {
          case PTX_AUX_POPC: v = bs->popc; break;
          case PTX_AUX_AND: v = bs->andv; break;
          default: v = bs->orv; break;
        }
        uint64_t *r = w->ra + fr->roff;
        for (uint32_t mm = w->bar_dmask; mm; mm &= mm - 1)
          r[(size_t)w->bar_dslot * EMU_LANES + __builtin_ctz(mm)] = v;
      }
    }
    memset(bs, 0, sizeof *bs);
    any = 1;
  }
  return any;
}

static void warp_free(warp *w) {
  free(w->st);
  free(w->fr);
  free(w->ra);
}

/* Start tracing CTA cta when the launch traces it (W->tracing). */
static void trace_begin(worker *W, uint64_t cta) {
  launch *L = W->L;
  W->tracing = 0;
  size_t lo = 0, hi = L->ntrace;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (L->trace[mid] < cta) lo = mid + 1;
    else hi = mid;
  }
  if (lo == L->ntrace || L->trace[lo] != cta) return;
  if (!W->tr) W->tr = emu_trace_new();
  W->tracing = W->tr && emu_trace_begin(W->tr, cta, L->trace_role[lo], L->nwarps) == 0;
}

/* The traced CTA finished: keep its results (dropped when memory is short:
   the launch's averages then come from fewer CTAs). */
static void trace_end(worker *W) {
  W->tracing = 0;
  if (W->ntres == W->ctres) {
    size_t nc = W->ctres ? 2 * W->ctres : 8;
    emu_trace_res *t = realloc(W->tres, nc * sizeof *t);
    if (!t) return;
    W->tres = t;
    W->ctres = nc;
  }
  if (emu_trace_end(W->tr, &W->tres[W->ntres]) == 0) W->ntres++;
  else emu_trace_res_free(&W->tres[W->ntres]);
}

/* Run CTA number `cta` (linear index); 0 or -1. */
static int run_cta(worker *W, uint64_t cta) {
  launch *L = W->L;
  W->cta = cta;
  if (L->ntrace) trace_begin(W, cta);
  W->ctaid[0] = (uint32_t)(cta % L->gdim[0]);
  W->ctaid[1] = (uint32_t)(cta / L->gdim[0] % L->gdim[1]);
  W->ctaid[2] = (uint32_t)(cta / ((uint64_t)L->gdim[0] * L->gdim[1]));
  memset(W->bar, 0, sizeof W->bar);
  if (L->shsize) memset(W->sh, 0, L->shsize);
  W->live_warps = L->nwarps;
  for (uint32_t i = 0; i < L->nwarps; i++) {
    warp *w = &W->w[i];
    w->idx = i;
    uint32_t lanes = L->nthreads - i * EMU_LANES;
    w->live = lanes >= 32 ? 0xffffffffu : ((1u << lanes) - 1);
    w->state = W_RUN;
    w->ns = w->nf = 0;
    w->rtop = 0;
    w->clock = 0;
    if (push_frame(W, w, L->k, 0, NULL) != 0 || push_ent(w, 0, w->live, NONE) != 0) {
      fail(W, NULL, -1, NULL, 1, "out of memory");
      return -1;
    }
  }
  for (;;) {
    int progress = 0, alldone = 1;
    for (uint32_t i = 0; i < L->nwarps; i++) {
      warp *w = &W->w[i];
      if (w->state == W_RUN) {
        if (run_warp(W, w) != 0) return -1;
        progress = 1;
        if (w->state == W_DONE) W->live_warps--;
        if (release_barriers(W)) progress = 1;
      }
      if (w->state != W_DONE) alldone = 0;
    }
    if (alldone) {
      if (W->tracing) trace_end(W);
      return 0;
    }
    if (release_barriers(W)) progress = 1;
    if (!progress) {
      for (uint32_t i = 0; i < L->nwarps; i++)
        if (W->w[i].state == W_BAR) {
          warp *w = &W->w[i];
          const frame *fr = &w->fr[w->nf - 1];
          uint32_t pc = w->st[w->ns - 1].pc;
          fail(W, w, -1, pc ? fr->fn->ops[pc - 1].o.insn : NULL, 0,
               "deadlock: waits at barrier %u, which the CTA's other warps "
               "never reach", w->bar_id);
          return -1;
        }
      fail(W, NULL, -1, NULL, 0, "internal error: no warp can run");
      return -1;
    }
  }
}

/*
 * Buffers a worker needs, kept on the module between launches for the
 * calling thread: warps (with their SIMT stacks, frames and register
 * arenas), block counters, shared memory and local stacks.  Allocating and
 * freeing them per launch cost more than a small launch's emulation (1000
 * launches of 18,000 thread-instructions: heap trimmed and page-faulted
 * back every time).  Reused contents are reset where they are read: the
 * counters and local stacks here, shared memory per CTA, registers per
 * frame (zero_plan).
 */
typedef struct wcache {
  warp *w;
  uint32_t nwa;         /* warps allocated */
  uint64_t *tcnt, *wcnt; /* em->nblocks each */
  uint8_t *sh, *loc;
  uint64_t shcap, loccap;
} wcache;

/* Free the buffers c holds (not c). */
static void wcache_clear(wcache *c) {
  for (uint32_t i = 0; c->w && i < c->nwa; i++) warp_free(&c->w[i]);
  free(c->w);
  free(c->tcnt);
  free(c->wcnt);
  free(c->sh);
  free(c->loc);
  memset(c, 0, sizeof *c);
}

static void wcache_free(wcache *c) {
  if (!c) return;
  wcache_clear(c);
  free(c);
}

/* Set W up for L, from the module's cache when use_cache (the calling
   thread); 0 or -1 on ENOMEM (W then holds what it got: worker_free). */
static int worker_init(worker *W, launch *L, int use_cache) {
  memset(W, 0, sizeof *W);
  W->L = L;
  for (int i = 0; i < GC_WAYS; i++) W->gc[i] = -1;
  W->tc.gi = -1;
  W->kind = EMU_FAULT_OTHER;
  emu_module *em = L->em;
  size_t nb = em->nblocks ? em->nblocks : 1;
  uint64_t shneed = L->shsize ? L->shsize : 1, locneed = (uint64_t)L->nwarps * EMU_LANES * L->lsz;
  wcache *c = use_cache ? em->cache : NULL;
  if (c) { /* take the cached buffers */
    W->w = c->w, W->nwa = c->nwa, W->tcnt = c->tcnt, W->wcnt = c->wcnt;
    W->sh = c->sh, W->shcap = c->shcap, W->loc = c->loc, W->loccap = c->loccap;
    memset(c, 0, sizeof *c);
  }
  W->cached = use_cache;
  if (!W->tcnt) W->tcnt = calloc(nb, sizeof *W->tcnt);
  else memset(W->tcnt, 0, nb * sizeof *W->tcnt);
  if (!W->wcnt) W->wcnt = calloc(nb, sizeof *W->wcnt);
  else memset(W->wcnt, 0, nb * sizeof *W->wcnt);
  if (W->nwa < L->nwarps) {
    warp *nw = realloc(W->w, L->nwarps * sizeof *nw);
    if (!nw) return -1;
    memset(nw + W->nwa, 0, (L->nwarps - W->nwa) * sizeof *nw);
    W->w = nw;
    W->nwa = L->nwarps;
  }
  W->nw = L->nwarps;
  if (W->shcap < shneed) {
    free(W->sh);
    W->shcap = 0;
    if (!(W->sh = malloc(shneed))) return -1;
    W->shcap = shneed;
  }
  if (W->loccap < locneed || !W->loc) {
    free(W->loc);
    W->loccap = 0;
    if (!(W->loc = calloc(locneed ? locneed : 1, 1))) return -1;
    W->loccap = locneed;
  } else if (L->k->stack || L->k->recursive) { /* a kernel without locals reads none */
    memset(W->loc, 0, locneed);
  }
  if (!W->tcnt || !W->wcnt) return -1;
  return 0;
}

/* Release W: its buffers back to the module's cache when it took them
   from there, else freed. */
static void worker_free(worker *W) {
  wcache *c = NULL;
  if (W->cached && W->L) { /* the cache itself stays once made (worker_init empties it) */
    c = W->L->em->cache;
    if (!c) c = W->L->em->cache = calloc(1, sizeof *c);
  }
  wcache held = {W->w, W->nwa, W->tcnt, W->wcnt, W->sh, W->loc, W->shcap, W->loccap};
  if (c) {
    wcache_clear(c); /* empty: what it held is W's */
    *c = held;
  } else {
    wcache_clear(&held);
  }
  free(W->pf.p);
  for (size_t i = 0; i < W->npo; i++) free(W->po[i].b.p);
  free(W->po);
  emu_trace_free(W->tr);
  for (size_t i = 0; i < W->ntres; i++) emu_trace_res_free(&W->tres[i]);
  free(W->tres);
  memset(W, 0, sizeof *W);
}

uint32_t emu__cached_warps(const emu_module *em) {
  return em && em->cache && em->cache->w ? em->cache->nwa : 0;
}

static int cmp_pfout(const void *a, const void *b) {
  uint64_t x = ((const pfout *)a)->i, y = ((const pfout *)b)->i;
  return (x > y) - (x < y);
}

static double cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/*
 * Run CTAs from the launch's counter until none is left.  With probe set
 * (the calling thread, a team possible), stop after a CTA once the work
 * left, estimated from the thread's CPU time per CTA so far, exceeds
 * TEAM_MIN_S: returns 1 then (a team should take over), else 0.  CPU time,
 * not wall time: on a loaded machine a preempted first CTA looked like
 * milliseconds of work and started a team for a launch of four CTAs.
 */
static int run_ctas(worker *W, int probe) {
  launch *L = W->L;
  double c0 = probe ? cpu_s() : 0;
  for (;;) {
    uint64_t i = __atomic_fetch_add(&L->next, 1, __ATOMIC_RELAXED);
    if (i >= L->nrun) return 0;
    uint64_t cta = L->list ? L->list[i] : i;
    if (__atomic_load_n(&L->stop_all, __ATOMIC_RELAXED) ||
        cta > __atomic_load_n(&L->abort_cta, __ATOMIC_RELAXED))
      continue;
    W->pf.len = 0;
    if (run_cta(W, cta) == 0 && W->pf.len) {
      if (W->npo == W->cpo) {
        size_t nc = W->cpo ? 2 * W->cpo : 8;
        pfout *np = realloc(W->po, nc * sizeof *np);
        if (!np) {
          W->oom = 1;
          __atomic_store_n(&L->stop_all, 1, __ATOMIC_RELAXED);
          return 0;
        }
        W->po = np;
        W->cpo = nc;
      }
      W->po[W->npo].i = i;
      W->po[W->npo++].b = W->pf;
      memset(&W->pf, 0, sizeof W->pf);
    }
    if (probe && i + 1 < L->nrun) {
      double el = cpu_s() - c0;
      if (el / (double)(i + 1) * (double)(L->nrun - i - 1) > TEAM_MIN_S) return 1;
    }
  }
}

/* Add a worker's counters and printf text to the launch's. */
static void merge_worker(launch *L, worker *W, uint64_t *tcnt, uint64_t *wcnt, uint64_t *stt) {
  for (uint32_t b = 0; b < L->em->nblocks; b++) {
    tcnt[b] += W->tcnt[b];
    wcnt[b] += W->wcnt[b];
  }
  for (int s = 0; s < S_NSTAT; s++) stt[s] += W->st[s];
  L->used += W->insn_acc;
  W->insn_acc = 0;
  L->oob_n += W->oob;
  W->oob = 0;
  if (W->oom) L->oom = 1;
  if (W->ntres) {
    emu_trace_res *t = realloc(L->tres, (L->ntres + W->ntres) * sizeof *t);
    if (t) {
      memcpy(t + L->ntres, W->tres, W->ntres * sizeof *t);
      L->tres = t;
      L->ntres += W->ntres;
    } else {
      for (size_t i = 0; i < W->ntres; i++) emu_trace_res_free(&W->tres[i]);
    }
    W->ntres = 0;
  }
  if (W->npo) {
    pfout *np = realloc(L->po, (L->npo + W->npo) * sizeof *np);
    if (!np) {
      L->oom = 1;
      return;
    }
    L->po = np;
    memcpy(L->po + L->npo, W->po, W->npo * sizeof *np);
    L->npo += W->npo;
    W->npo = 0;
  }
}

static uint64_t gcd_u64(uint64_t a, uint64_t b) {
  while (b) {
    uint64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/* An odd multiplier coprime with n near n*f (the lattice's p_d). */
static uint64_t lattice_step(uint64_t n, double f) {
  uint64_t p = (uint64_t)((double)n * f) | 1;
  while (p > 1 && gcd_u64(p, n) != 1) p += 2;
  return p % n ? p : 1;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* The CTAs (linear indices, ascending, distinct) a launch sampling n of
   grid runs: see "Sampling" at the top.  *nrun receives their number. */
static uint64_t *sample_list(const unsigned grid[3], uint64_t n, uint64_t *nrun) {
  uint64_t *v = malloc(n * sizeof *v);
  if (!v) return NULL;
  uint64_t ntotal = (uint64_t)grid[0] * grid[1] * grid[2];
  int dims = (grid[0] > 1) + (grid[1] > 1) + (grid[2] > 1);
  if (dims <= 1) {
    for (uint64_t i = 0; i < n; i++)
      v[i] = (uint64_t)((unsigned __int128)(2 * i + 1) * ntotal / (2 * n));
    *nrun = n;
    return v;
  }
  uint64_t p[3] = {1, lattice_step(n, 0.6180339887), lattice_step(n, 0.3819660113)};
  for (uint64_t i = 0; i < n; i++) {
    uint64_t c[3];
    for (int d = 0; d < 3; d++) {
      uint64_t r = (uint64_t)((unsigned __int128)i * p[d] % n);
      c[d] = (uint64_t)((unsigned __int128)(2 * r + 1) * grid[d] / (2 * n));
    }
    v[i] = c[0] + (uint64_t)grid[0] * (c[1] + (uint64_t)grid[1] * c[2]);
  }
  qsort(v, n, sizeof *v, cmp_u64);
  uint64_t k = 0;
  for (uint64_t i = 0; i < n; i++)
    if (!k || v[i] != v[k - 1]) v[k++] = v[i];
  *nrun = k;
  return v;
}

/*
 * Footprint of one allocation over the whole grid, estimated from what the
 * nrun sampled CTAs (of ntotal) touched (f).  Scaling the sample's bytes by
 * ntotal/nrun is right for data each CTA owns (a triad's elements) and
 * wrong, by up to that factor, for data CTAs share: a tiled GEMM's row and
 * column panels, a stencil's halos, a table every CTA reads (64 CTAs of a
 * 1024-CTA GEMM said 6x its footprint).  Shared or not, data lies in the
 * range the CTAs address, which a sample spread over the grid (see
 * Sampling) spans.  With
 *
 *   lin    = seen * ntotal/nrun                     (owned data)
 *   extent = the sample's first to last touched 32-byte sector, at most
 *            the allocation's, times typical        (shared data)
 *
 * where typical is the bytes a touched sector usually has (the
 * byte-weighted mode: 32 for dense data, whose halo sectors touched in part
 * by one CTA are filled by its neighbours; 8 for one float of a 16-byte
 * struct), the estimate is lin while lin stays within 5 % of the extent
 * widened by nrun/(nrun-1) (the sample does not see the first and last half
 * strata of a long dimension, so owned data reaches that far), else the
 * plain extent (shared data: widening would overstate a table every CTA
 * reads).  Measured on the suite's sampled programs against full emulation
 * in docs/features.md.
 */
static double foot_estimate(const emu_foot *f, uint64_t size, uint64_t ntotal, uint64_t nrun) {
  if (!f->bytes) return 0;
  unsigned typical = 32;
  double best = -1;
  for (unsigned b = 1; b <= 32; b++)
    if ((double)b * (double)f->hist[b] > best) best = (double)b * (double)f->hist[b], typical = b;
  double all = (double)((size + 31) / 32) * typical, ext = (double)(f->hi - f->lo + 1) * typical;
  double wide = nrun > 1 ? ext * (double)nrun / (double)(nrun - 1) : ext;
  double lin = (double)f->bytes * (double)ntotal / (double)nrun;
  double est = lin <= 1.05 * (wide < all ? wide : all) ? lin : ext < all ? ext : all;
  if (est > (double)size) est = (double)size;
  return est > (double)f->bytes ? est : (double)f->bytes;
}

/* 1 in rd[i] for each parameter i of kernel f that an instruction names
   (ld.param [p], mov %rd, p): the parameters the kernel reads.  rd has
   room for f->nparams entries. */
static void param_reads(const ptx_func *f, uint8_t *rd) {
  memset(rd, 0, f->nparams);
  for (uint32_t i = 0; i < f->nopnds; i++) {
    const ptx_operand *o = &f->opnds[i];
    if (o->kind == PTX_OPND_ADDR && o->u.addr.base_kind == PTX_OPND_SYM && o->u.addr.sym_local &&
        o->u.addr.base < f->nparams)
      rd[o->u.addr.base] = 1;
    else if (o->kind == PTX_OPND_SYM && o->sym_local && o->u.sym < f->nparams)
      rd[o->u.sym] = 1;
  }
}

/*
 * The scalar arguments kernel f reads, as features arg.I = value (I the
 * parameter's index): every parameter an instruction names that is one
 * integer or floating-point value of at most 8 bytes, except a 64-bit
 * integer holding a device address (a pointer: its value says where, not
 * how much).  Feature models (model/featmodel.c) fit counts as functions
 * of these; training matrices leave the family out (ds_query).
 */
static int arg_features(const emu_module *em, const ptx_func *f, const uint8_t *params,
                        const size_t *po, feat_vec *v) {
  if (!f->nparams) return 0;
  uint8_t *rd = malloc(f->nparams);
  if (!rd) return -1;
  param_reads(f, rd);
  int bad = 0;
  for (uint32_t i = 0; i < f->nparams && !bad; i++) {
    const ptx_var *p = &f->params[i];
    if (!rd[i] || p->count != 1 || p->vec != 1) continue;
    const uint8_t *b = params + po[i];
    uint64_t u = 0;
    double val;
    switch (p->type) {
      case PTX_T_U8: case PTX_T_B8: val = b[0]; break;
      case PTX_T_S8: val = (int8_t)b[0]; break;
      case PTX_T_U16: case PTX_T_B16: { uint16_t x; memcpy(&x, b, 2); val = x; break; }
      case PTX_T_S16: { int16_t x; memcpy(&x, b, 2); val = x; break; }
      case PTX_T_U32: case PTX_T_B32: { uint32_t x; memcpy(&x, b, 4); val = x; break; }
      case PTX_T_S32: { int32_t x; memcpy(&x, b, 4); val = x; break; }
      case PTX_T_F32: { float x; memcpy(&x, b, 4); val = x; break; }
      case PTX_T_F64: { double x; memcpy(&x, b, 8); val = x; break; }
      case PTX_T_U64: case PTX_T_B64: case PTX_T_S64:
        memcpy(&u, b, 8);
        if (emu_is_device_addr(em->d, u)) continue;
        val = p->type == PTX_T_S64 ? (double)(int64_t)u : (double)u;
        break;
      default: continue;
    }
    if (!isfinite(val)) continue;
    char name[32];
    snprintf(name, sizeof name, "arg.%u", i);
    bad |= feat_set(v, name, val);
  }
  free(rd);
  return bad ? -1 : 0;
}

/* feat_set of prefix + s (a feature name: short; a longer one is cut as
   the name buffer of snprintf cut it). */
static int set_prefixed(feat_vec *v, const char *prefix, const char *s, double val) {
  char name[512];
  size_t a = strlen(prefix), b = strlen(s);
  if (a + b >= sizeof name) b = sizeof name - 1 - a;
  memcpy(name, prefix, a);
  memcpy(name + a, s, b);
  name[a + b] = 0;
  return feat_set(v, name, val);
}

/*
 * The CTAs whose address streams a launch traces (emu_trace.h): at most
 * EMU_TRACE_CTAS spread over the CTAs that run (EMU_TRACE_MAIN), and the
 * neighbours one back in x, y and z (EMU_TRACE_PROBE) of one of them --
 * two when the sample has 16 or more -- chosen near the middle of the
 * grid among those that have neighbours there.  Into L->trace (ascending)
 * and L->trace_role; *extra (NULL when none) the probes a sampled launch
 * does not run, which emu_launch runs after it, their counts not counted.
 * 0 or -1 (ENOMEM).
 */
static int trace_plan(launch *L, uint64_t **ctas, unsigned char **roles, uint64_t **extra,
                      size_t *nextra) {
  *ctas = NULL;
  *roles = NULL;
  *extra = NULL;
  *nextra = 0;
  uint64_t nmain = L->nrun < EMU_TRACE_CTAS ? L->nrun : EMU_TRACE_CTAS, got = 0;
  uint64_t *v = malloc((nmain + 6) * sizeof *v);
  unsigned char *ro = malloc(nmain + 6);
  if (!v || !ro) {
    free(v);
    free(ro);
    return -1;
  }
  if (L->list) {
    for (uint64_t i = 0; i < nmain; i++)
      v[i] = L->list[(unsigned __int128)(2 * i + 1) * L->nrun / (2 * nmain)];
    got = nmain;
  } else {
    uint64_t *s = sample_list(L->gdim, nmain, &got);
    if (!s) {
      free(v);
      free(ro);
      return -1;
    }
    memcpy(v, s, got * sizeof *v);
    free(s);
  }
  for (uint64_t i = 0; i < got; i++) ro[i] = EMU_TRACE_MAIN;
  /* bases: main CTAs nearest the middle (and at a quarter) with every
     coordinate >= 1 in the grid's dimensions that are longer than 1 */
  size_t n = got;
  uint64_t gx = L->gdim[0], gxy = (uint64_t)L->gdim[0] * L->gdim[1];
  double want[2] = {0.5, 0.25};
  int nbases = L->nrun >= 16 ? 2 : 1;
  uint64_t used = UINT64_MAX;
  for (int b = 0; b < nbases; b++) {
    uint64_t best = UINT64_MAX;
    double bd = 1e300;
    for (uint64_t i = 0; i < got; i++) {
      uint64_t c = v[i], x = c % gx, y = c / gx % L->gdim[1], z = c / gxy;
      if ((L->gdim[0] > 1 && !x) || (L->gdim[1] > 1 && !y) || (L->gdim[2] > 1 && !z) || c == used)
        continue;
      double d = fabs((double)c - want[b] * (double)L->ntotal);
      if (d < bd) bd = d, best = c;
    }
    if (best == UINT64_MAX) continue;
    used = best;
    uint64_t nb[3] = {L->gdim[0] > 1 ? best - 1 : UINT64_MAX,
                      L->gdim[1] > 1 ? best - gx : UINT64_MAX,
                      L->gdim[2] > 1 ? best - gxy : UINT64_MAX};
    for (int d = 0; d < 3; d++) {
      if (nb[d] == UINT64_MAX) continue;
      size_t k = 0;
      while (k < n && v[k] != nb[d]) k++;
      if (k < n) {
        ro[k] |= EMU_TRACE_PROBE;
      } else {
        v[n] = nb[d];
        ro[n++] = EMU_TRACE_PROBE;
      }
    }
  }
  /* ascending, roles alongside (a handful: insertion sort) */
  for (size_t i = 1; i < n; i++)
    for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
      uint64_t t = v[j]; v[j] = v[j - 1]; v[j - 1] = t;
      unsigned char r = ro[j]; ro[j] = ro[j - 1]; ro[j - 1] = r;
    }
  if (L->list) { /* the probes the sample does not run */
    uint64_t *x = malloc(6 * sizeof *x);
    if (!x) {
      free(v);
      free(ro);
      return -1;
    }
    for (size_t i = 0; i < n; i++) {
      if (ro[i] != EMU_TRACE_PROBE) continue;
      size_t lo = 0, hi = L->nrun;
      while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (L->list[mid] < v[i]) lo = mid + 1;
        else hi = mid;
      }
      if (lo == L->nrun || L->list[lo] != v[i]) x[(*nextra)++] = v[i];
    }
    if (*nextra) *extra = x;
    else free(x);
  }
  *ctas = v;
  *roles = ro;
  L->trace = v;
  L->trace_role = ro;
  L->ntrace = n;
  return 0;
}

/*
 * Run the probes of a sampled launch (trace_plan's extra) on the calling
 * thread, for their address streams alone: their counts, printf text and
 * errors are dropped (a probe that fails gives no sharing figure), their
 * traced results go to L.
 */
static void run_probes(launch *L, uint64_t *extra, size_t nextra) {
  launch P = *L;
  P.list = extra;
  P.nrun = nextra;
  P.next = 0;
  P.po = NULL;
  P.npo = 0;
  P.tres = NULL;
  P.ntres = 0;
  P.abort_cta = P.err_cta = P.oob_cta = UINT64_MAX;
  P.stop_all = 0;
  P.oob_n = 0;
  P.oom = 0;
  worker Wp;
  if (worker_init(&Wp, &P, 1) == 0) {
    run_ctas(&Wp, 0);
    emu_trace_res *t = Wp.ntres ? realloc(L->tres, (L->ntres + Wp.ntres) * sizeof *t) : NULL;
    if (t) {
      memcpy(t + L->ntres, Wp.tres, Wp.ntres * sizeof *t);
      L->tres = t;
      L->ntres += Wp.ntres;
      Wp.ntres = 0;
    }
  }
  worker_free(&Wp);
}

int emu_launch(emu_module *em, const char *kernel, const emu_launch_cfg *cfg,
               feat_vec *features, emu_stats *st, char *err, size_t cap) {
  if (!em || !kernel || !cfg) return emu_errf(err, cap, "emu_launch: null argument");
  const ptx_module *m = em->m;
  uint32_t ki = UINT32_MAX;
  for (uint32_t i = 0; i < m->nfuncs; i++)
    if (m->funcs[i].is_entry && strcmp(m->funcs[i].name, kernel) == 0) ki = i;
  if (ki == UINT32_MAX || !em->fn[ki].ops)
    return emu_errf(err, cap, "no kernel named '%s' in %s", kernel,
                m->filename ? m->filename : "the module");
  if (st) memset(st, 0, sizeof *st);
  uint64_t nthreads = 1, ntotal = 1;
  for (int i = 0; i < 3; i++) {
    nthreads *= cfg->block[i];
    ntotal *= cfg->grid[i];
  }
  char why[160] = "";
  const unsigned *gd = cfg->grid, *bd = cfg->block;
  if (!gd[0] || !gd[1] || !gd[2] || !bd[0] || !bd[1] || !bd[2])
    snprintf(why, sizeof why, "grid and block dimensions must be >= 1");
  else if (gd[0] > EMU_MAX_GRID_X || gd[1] > EMU_MAX_GRID_YZ || gd[2] > EMU_MAX_GRID_YZ)
    snprintf(why, sizeof why, "grid (%u,%u,%u) exceeds (%u,%u,%u)", gd[0], gd[1], gd[2],
             EMU_MAX_GRID_X, EMU_MAX_GRID_YZ, EMU_MAX_GRID_YZ);
  else if (bd[0] > 1024 || bd[1] > 1024 || bd[2] > 64)
    snprintf(why, sizeof why, "block (%u,%u,%u) exceeds (1024,1024,64)", bd[0], bd[1], bd[2]);
  else if (nthreads > 1024)
    snprintf(why, sizeof why, "%llu threads per block exceeds 1024", (unsigned long long)nthreads);
  else if (cfg->shared_bytes > EMU_MAX_SHARED || em->dyn_off + cfg->shared_bytes > EMU_MAX_SHARED)
    snprintf(why, sizeof why, "%llu bytes of shared memory per CTA (%zu dynamic) exceeds %u",
             (unsigned long long)(em->shared_static > em->dyn_off + cfg->shared_bytes
                                      ? em->shared_static : em->dyn_off + cfg->shared_bytes),
             cfg->shared_bytes, EMU_MAX_SHARED);
  if (why[0]) {
    if (st) st->fault = EMU_FAULT_CONFIG;
    return emu_errf(err, cap, "kernel %s: %s (no GPU launches it)", kernel, why);
  }
  size_t ptotal;
  const ptx_func *kf = &m->funcs[ki];
  size_t *po = calloc(kf->nparams ? kf->nparams : 1, sizeof *po);
  if (!po) return emu_errf(err, cap, "out of memory");
  emu_param_layout(kf, po, &ptotal);
  size_t pend = kf->nparams ? po[kf->nparams - 1] + kf->params[kf->nparams - 1].size : 0;
  if (cfg->params_size < pend || (pend && !cfg->params)) {
    free(po);
    if (st) st->fault = EMU_FAULT_CONFIG;
    return emu_errf(err, cap, "kernel %s: argument buffer of %zu bytes, the parameters need %zu",
                kernel, cfg->params_size, pend);
  }
  /* the arguments as the launch passed them (the kernel cannot change its
     parameter space); recorded with the features */
  feat_vec argv;
  feat_init(&argv);
  if (features && arg_features(em, kf, cfg->params, po, &argv)) {
    free(po);
    feat_free(&argv);
    return emu_errf(err, cap, "out of memory");
  }
  free(po);

  launch L;
  memset(&L, 0, sizeof L);
  L.em = em;
  L.k = &em->fn[ki];
  L.cfg = cfg;
  L.kname = kernel;
  for (int i = 0; i < 3; i++) {
    L.bdim[i] = cfg->block[i];
    L.gdim[i] = cfg->grid[i];
  }
  L.nthreads = (uint32_t)nthreads;
  L.nwarps = (L.nthreads + EMU_LANES - 1) / EMU_LANES;
  L.shsize = cfg->shared_bytes ? em->dyn_off + cfg->shared_bytes : em->shared_static;
  L.lsz = emu_align_up(L.k->recursive ? (L.k->stack > RECURSIVE_STACK ? L.k->stack : RECURSIVE_STACK)
                                  : L.k->stack, 16);
  if (!L.lsz) L.lsz = 16;
  L.ntotal = ntotal;
  L.nrun = ntotal;
  L.abort_cta = UINT64_MAX;
  L.err_cta = UINT64_MAX;
  L.oob_cta = UINT64_MAX;
  L.flush_at = 1u << 16;
  if (cfg->insn_budget && cfg->insn_budget / 64 + 1 < L.flush_at)
    L.flush_at = cfg->insn_budget / 64 + 1;
  int rc = -1;
  uint64_t *tcnt = NULL, *wcnt = NULL, *tctas = NULL, *textra = NULL;
  unsigned char *troles = NULL;
  size_t ntextra = 0;
  double *keyc = NULL;
  uint64_t stt[S_NSTAT] = {0};
  if (cfg->sample_ctas && cfg->sample_ctas < ntotal) {
    L.list = sample_list(cfg->grid, cfg->sample_ctas, &L.nrun);
    if (!L.list) { emu_errf(err, cap, "out of memory"); goto out; }
  }
  if (features && trace_plan(&L, &tctas, &troles, &textra, &ntextra)) {
    emu_errf(err, cap, "out of memory");
    goto out;
  }
  tcnt = calloc(em->nblocks ? em->nblocks : 1, sizeof *tcnt);
  wcnt = calloc(em->nblocks ? em->nblocks : 1, sizeof *wcnt);
  keyc = calloc(m->nkeys ? m->nkeys : 1, sizeof *keyc);
  if (!tcnt || !wcnt || !keyc) { emu_errf(err, cap, "out of memory"); goto out; }
  emu_device *d = em->d;
  emu_touch_clear(d);
  L.t0 = now_s();
  int nth = cfg->threads > 0 ? cfg->threads : 0;
#ifdef _OPENMP
  if (!nth) nth = omp_get_max_threads();
  if ((uint64_t)nth > L.nrun) nth = (int)L.nrun;
#else
  nth = 1;
#endif
  /* The calling thread starts; a team joins only when the work left looks
     large enough to pay for starting it (see the note at the top). */
  worker W0;
  int oom = worker_init(&W0, &L, 1) != 0;
  if (!oom && run_ctas(&W0, nth > 1) > 0) {
#ifdef _OPENMP
#pragma omp parallel num_threads(nth)
    {
      worker Wt, *W = &W0;
      if (omp_get_thread_num() != 0) {
        W = &Wt;
        if (worker_init(W, &L, 0) != 0) {
#pragma omp atomic write
          oom = 1;
          __atomic_store_n(&L.stop_all, 1, __ATOMIC_RELAXED);
        } else {
          run_ctas(W, 0);
        }
#pragma omp critical(emu_merge)
        merge_worker(&L, W, tcnt, wcnt, stt);
        worker_free(W);
      } else {
        run_ctas(W, 0);
      }
    }
#endif
  }
  if (W0.L) merge_worker(&L, &W0, tcnt, wcnt, stt);
  worker_free(&W0);
  double secs = now_s() - L.t0;
  if (oom || L.oom) {
    if (st) st->fault = EMU_FAULT_OTHER;
    emu_errf(err, cap, "kernel %s: out of memory for the emulator's state", kernel);
    goto out;
  }
  if (L.err_cta != UINT64_MAX) {
    if (st) st->fault = L.err_kind;
    emu_errf(err, cap, "%s", L.err);
    goto fpout;
  }
  /* ---- features ---- */
  double scale = L.list ? (double)ntotal / (double)L.nrun : 1.0;
  double foot = 0;
  for (size_t i = 0; features && i < d->n; i++) {
    emu_foot f;
    emu_foot_scan(&d->a[i], &f);
    foot += L.list ? foot_estimate(&f, d->a[i].size, ntotal, L.nrun) : (double)f.bytes;
  }
  /* the probes run after the footprint is taken: they touch memory the
     sample does not */
  if (ntextra) run_probes(&L, textra, ntextra);
  uint64_t tinsn = 0, winsn = 0, wchain = 0;
  for (uint32_t fi = 0; fi < m->nfuncs; fi++) {
    const efunc *fn = &em->fn[fi];
    if (!fn->ops) continue;
    const ptx_cfg *g = fn->f->cfg;
    for (uint32_t b = 0; b < g->nblocks; b++) {
      uint64_t c = tcnt[fn->cbase + b];
      const ptx_block *bl = &g->blocks[b];
      tinsn += c * bl->count;
      winsn += wcnt[fn->cbase + b] * bl->count;
      wchain += wcnt[fn->cbase + b] * bl->chain;
      if (!c) continue;
      for (uint32_t i = bl->first; i < bl->first + bl->count; i++)
        keyc[fn->f->insns[i].key] += (double)c;
    }
  }
  if (st) {
    st->ctas_total = ntotal;
    st->ctas_run = L.nrun;
    st->thread_insns = tinsn;
    st->warp_insns = winsn;
    st->seconds = secs;
    st->sampled = L.list != NULL;
    st->oob_accesses = L.oob_n;
    snprintf(st->oob_first, sizeof st->oob_first, "%s", L.oob_msg);
  }
  if (features) {
    /* an empty vector (what the runtime passes each launch) takes the
       names straight away; else they go in after the last one is made, so
       a failure adds none */
    feat_vec tmp, *v = features->n ? &tmp : features;
    feat_init(&tmp);
    int bad = 0;
    static const char *const gname[3] = {"launch.grid_x", "launch.grid_y", "launch.grid_z"};
    static const char *const bname[3] = {"launch.block_x", "launch.block_y", "launch.block_z"};
    for (int i = 0; i < 3; i++) {
      bad |= feat_set(v, gname[i], cfg->grid[i]);
      bad |= feat_set(v, bname[i], cfg->block[i]);
    }
    bad |= feat_set(v, "launch.ctas", (double)ntotal);
    bad |= feat_set(v, "launch.threads", (double)ntotal * (double)nthreads);
    bad |= feat_set(v, "launch.shared_bytes", (double)cfg->shared_bytes);
    bad |= feat_set(v, "launch.param_bytes", (double)pend);
    double cls[FEAT_C_COUNT] = {0};
    for (uint32_t k = 0; k < m->nkeys; k++) {
      if (!keyc[k]) continue;
      bad |= set_prefixed(v, "op.", m->keys[k], keyc[k] * scale);
      cls[feat_class_of_key(m->keys[k])] += keyc[k] * scale;
    }
    for (int c = 0; c < FEAT_C_COUNT; c++)
      bad |= set_prefixed(v, "class.", feat_class_name((feat_class)c), cls[c]);
    static const struct { const char *name; int s; } mem[] = {
      {"mem.global_bytes", S_GBYTES}, {"mem.global_load_bytes", S_GLOAD},
      {"mem.global_store_bytes", S_GSTORE}, {"mem.global_atomic_bytes", S_GATOM},
      {"mem.global_accesses", S_GACC}, {"mem.global_sectors", S_GSECT},
      {"mem.shared_bytes", S_SBYTES}, {"mem.shared_accesses", S_SACC},
      {"mem.shared_bank_replays", S_SREPLAY}, {"mem.local_bytes", S_LBYTES},
      {"ctrl.branches", S_BRANCH}, {"ctrl.divergent_branches", S_DIVERGE},
      {"ctrl.barriers", S_BARRIER}, {"mem.global_load_sectors", S_GSECT_LD},
      {"mem.const_accesses", S_CACC}, {"mem.const_replays", S_CREPLAY}};
    for (size_t i = 0; i < sizeof mem / sizeof mem[0]; i++)
      bad |= feat_set(v, mem[i].name, (double)stt[mem[i].s] * scale);
    bad |= feat_set(v, "mem.footprint_bytes", foot);
    if (L.ntres) {
      double tf[EMU_TRACE_NFEAT];
      uint32_t gd3[3] = {cfg->grid[0], cfg->grid[1], cfg->grid[2]};
      bad |= emu_trace_features(L.tres, L.ntres, ntotal, gd3, tf) != 0;
      for (int k = 0; k < EMU_TRACE_NFEAT && !bad; k++)
        bad |= feat_set(v, emu_trace_feat_name[k], tf[k]);
    }
    bad |= feat_set(v, "ctrl.warp_insns", (double)winsn * scale);
    bad |= feat_set(v, "emu.ctas_emulated", (double)L.nrun);
    if (L.oob_n) bad |= feat_set(v, "emu.oob_accesses", (double)L.oob_n);
    bad |= feat_set(v, "ctrl.active_lane_ratio",
                    winsn ? (double)tinsn / (32.0 * (double)winsn) : 0.0);
    /* warp instructions over the executed blocks' critical paths */
    bad |= feat_set(v, "ctrl.ilp", wchain ? (double)winsn / (double)wchain : 0.0);
    for (size_t i = 0; i < argv.n; i++) bad |= feat_set(v, argv.names[i], argv.vals[i]);
    for (size_t i = 0; v == &tmp && i < tmp.n && !bad; i++)
      bad |= feat_set(features, tmp.names[i], tmp.vals[i]);
    feat_free(&tmp);
    if (bad) {
      if (v == features) feat_free(features); /* empty again, as it came */
      emu_errf(err, cap, "out of memory");
      goto fpout;
    }
  }
  rc = 0;
fpout:
  /* printf text of the CTAs that ran, in CTA order */
  if (L.npo > 1) qsort(L.po, L.npo, sizeof *L.po, cmp_pfout);
  for (size_t i = 0; i < L.npo; i++)
    fwrite(L.po[i].b.p, 1, L.po[i].b.len, cfg->printf_out ? cfg->printf_out : stdout);
out:
  feat_free(&argv);
  for (size_t i = 0; i < L.npo; i++) free(L.po[i].b.p);
  free(L.po);
  for (size_t i = 0; i < L.ntres; i++) emu_trace_res_free(&L.tres[i]);
  free(L.tres);
  free(tctas);
  free(troles);
  free(textra);
  free(L.list);
  free(tcnt);
  free(wcnt);
  free(keyc);
  emu_touch_clear(em->d);
  return rc;
}
