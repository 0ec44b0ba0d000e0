/*
 * emu.c -- the PTX emulator engine: a CTA's warps, instruction by instruction.
 *
 * What: runs a kernel launch on the CPU, warp by warp, and counts what it
 * does (docs/features.md: launch.*, op.*, class.*, mem.*, ctrl.*).  The
 * arithmetic lives in emu_alu.c behind the emu_int.h contract; the
 * preparation of a loaded module (every instruction into an eop, shared
 * memory layout, frames, zero_plan) in emu_load.c behind emu_eng.h; the
 * memory accesses in emu_access.c and the launch (which CTAs run, on which
 * threads, sampling) in emu_launch.c, all three sharing emu_run.h.  This
 * file runs a CTA: its warps' control flow, calls, barriers, warp
 * collectives, counting, budgets and errors.
 *
 * Address windows.  One 64-bit emulated space; generic addresses tell their
 * space by range:
 *
 *     0x0000_0001_0000_0000 ..   global allocations (cudaMalloc, module
 *                                .global/.const), 256-aligned, never reused,
 *                                with at least 256 unmapped bytes between two
 *     0x0000_1000_0000_0000 + o  shared: offset o in the running CTA's shared
 *                                memory (the kernel's static vars from 0,
 *                                then dynamic `extern .shared`, 16-aligned:
 *                                emu_load.c, shared_layout; then the
 *                                reserved region when read)
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
 *                                from 0x0000_5000_0000_0000 up; host memory
 *                                above the window (up to EMU_HOST_END) or
 *                                below the global allocations may be
 *                                registered at its own address too
 *                                (cudaHostRegister)
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
 * Counting.  Per basic block: thread executions (popcount of the active
 * mask when a warp enters the block) and warp entries.  op.* = sum over
 * blocks of count x occurrences of the key, computed once at the end.  The
 * budget, time limit and stop flags are checked at block entries and every
 * BLOCK_STEP instructions inside a longer block (check_limits).
 */
#include "emulator/emu_run.h"

#define MAX_CALL_DEPTH 1024
#define BLOCK_STEP 4096 /* instructions between limit checks inside a block */
#define CLOCK_EVERY (1u << 18) /* thread-instructions between clock reads */

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
void eng_compose(const worker *W, const warp *w, int lane, const ptx_insn *in,
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
  char where[4200];
  if (in)
    snprintf(msg, cap, "%s: %s: %s: %s", head, ptx_insn_where(L->em->m, in, where, sizeof where),
             L->em->m->keys[in->key], body);
  else
    snprintf(msg, cap, "%s: %s", head, body);
}

/* Fail the launch with a message naming kernel, CTA, thread and line; the
   kind is W->kind (EMU_FAULT_OTHER unless the caller set it). */
void eng_fail(worker *W, const warp *w, int lane, const ptx_insn *in,
                 int all, const char *fmt, ...) {
  char body[512], msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(body, sizeof body, fmt, ap);
  va_end(ap);
  eng_compose(W, w, lane, in, body, msg, sizeof msg);
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
    case PTX_SR_TOTAL_SMEM_SIZE: return L->shneed;
    case PTX_SR_AGGR_SMEM_SIZE: return L->shneed + EMU_RESERVED_SMEM;
    case PTX_SR_RESERVED_SMEM_BEGIN: case PTX_SR_RESERVED_SMEM_0: return L->shres;
    case PTX_SR_RESERVED_SMEM_1: return L->shres + EMU_RESERVED_SMEM / 2;
    case PTX_SR_RESERVED_SMEM_END: return L->shres + EMU_RESERVED_SMEM;
    case PTX_SR_RESERVED_SMEM_CAP: return EMU_RESERVED_SMEM;
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
    /* 64-byte aligned, so a slot's 256 bytes start a cache line: the
       handlers' and emu_mma.c's 32-byte accesses never straddle two */
    uint64_t *n = aligned_alloc(64, nc * sizeof *n);
    if (!n) return -1;
    if (w->ra) memcpy(n, w->ra, w->rcap * sizeof *n);
    free(w->ra);
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
    eng_fail(W, w, __builtin_ctz(m), e->o.insn, 0, "call depth exceeds %d", MAX_CALL_DEPTH);
    return -1;
  }
  uint64_t lbase = emu_align_up(cf->ltop, 16);
  if (lbase + callee->frame > W->L->lsz) {
    eng_fail(W, w, __builtin_ctz(m), e->o.insn, 0,
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
        eng_arg_bytes(W, w, cf, r, &c->args[j], l, loc + dst, n < 8 ? n : 8);
      }
    }
  }
  if (push_frame(W, w, callee, lbase, e) != 0 || push_ent(w, 0, m, NONE) != 0) {
    W->oom = 1;
    eng_fail(W, w, -1, e->o.insn, 1, "out of memory");
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
    /* asked to stop: looked at here, with the budget, off the common path */
    if (L->cfg->stop && __atomic_load_n(L->cfg->stop, __ATOMIC_RELAXED)) {
      W->kind = EMU_FAULT_LIMIT;
      eng_fail(W, w, -1, in, 1, "stopped before its end (asked to stop)");
      return -1;
    }
    if (L->cfg->insn_budget && u > L->cfg->insn_budget) {
      W->kind = EMU_FAULT_LIMIT;
      eng_fail(W, w, -1, in, 1, "exceeded the instruction budget of %llu thread-instructions",
           (unsigned long long)L->cfg->insn_budget);
      return -1;
    }
  }
  if (L->cfg->time_limit_s > 0 && (inside || W->since_clock >= CLOCK_EVERY)) {
    W->since_clock = 0;
    if (now_s() - L->t0 > L->cfg->time_limit_s) {
      W->kind = EMU_FAULT_LIMIT;
      eng_fail(W, w, -1, in, 1, "exceeded the time limit of %g s", L->cfg->time_limit_s);
      return -1;
    }
  }
  return 0;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
/* guard_mask's bits four lanes a step: bit 0 of each lane to the sign,
   then movemask (a guarded instruction's mask was a third of run_warp's
   time emulating pnpoly's loop, perf) */
__attribute__((target("avx2"))) static uint32_t guard_bits_avx2(const uint64_t *p) {
  uint32_t m = 0;
  for (unsigned i = 0; i < EMU_LANES / 4; i++) {
    __m256i v = _mm256_slli_epi64(_mm256_loadu_si256((const __m256i *)(p + 4 * i)), 63);
    m |= (uint32_t)_mm256_movemask_pd(_mm256_castsi256_pd(v)) << (4 * i);
  }
  return m;
}
#define GUARD_AVX2 1
#endif

static inline uint32_t guard_mask(const uint64_t *p, int neg) {
  uint32_t m = 0;
#ifdef GUARD_AVX2
  if (__builtin_cpu_supports("avx2"))
    m = guard_bits_avx2(p);
  else
#endif
    for (uint32_t l = 0; l < EMU_LANES; l++) m |= (uint32_t)(p[l] & 1) << l;
  return neg ? ~m : m;
}

/*
 * Run warp w until it exits, waits at a barrier, or fails (-1).
 * Locals: fr/fn/r/ops describe the running frame and are reloaded after
 * anything that changes frames or may move the register arena.
 */
/*
 * What an ALU op with eop.clock set does before its alu: refresh the
 * %clock-like slots it reads, or, an emu_mma.c op (EMU_CLOCK_XOP, whose alu
 * does nothing), the whole of it.  Out of line, so run_warp's ALU case
 * compiles as without emu_mma.c.  0 or -1 (the launch fails).
 */
static __attribute__((noinline)) int alu_first(worker *W, warp *w, const efunc *fn,
                                               uint64_t *r, const eop *e, uint32_t m) {
  if (e->clock != EMU_CLOCK_XOP) {
    refresh_clock(W, w, fn, r);
    return 0;
  }
  emu_xctx xc = {W, w, e};
  return emu_xop_exec(&xc, e->xop, r, m);
}

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
        eng_fail(W, w, -1, NULL, 0, "internal error: lanes lost at reconvergence");
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
      if (e->arun > 1) {
        /* a run of plain ALU ops (emu_load.c, alu_runs): every lane active */
        const eop *x = e, *xe = e + (e->arun < step - pc ? e->arun : step - pc);
        do x->o.alu(r, &x->o, active);
        while (++x < xe);
        pc += (uint32_t)(xe - e);
        continue;
      }
      uint32_t m = active;
      if (e->guard != NONE) m &= guard_mask(r + (size_t)e->guard * EMU_LANES, e->gneg);
      switch (e->k) {
        case K_ALU:
          if (m) {
            /* (an emu_mma.c op's alu does nothing) */
            if (e->clock && alu_first(W, w, fn, r, e, m) != 0) return -1;
            e->o.alu(r, &e->o, m);
          }
          pc++;
          continue;
        case K_NOP:
          pc++;
          continue;
        case K_LD: case K_ST: case K_ATOM:
          if (m && eng_mem_op(W, w, r, e, m) != 0) return -1;
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
            eng_fail(W, w, -1, e->o.insn, 1, "out of memory");
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
              eng_fail(W, w, (int)l, e->o.insn, 0,
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
              eng_fail(W, w, -1, e->o.insn, 1, "out of memory");
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
          if (m && eng_do_printf(W, w, fr, r, e, m) != 0) return -1;
          pc++;
          continue;
        case K_ASSERT:
          if (!m) { pc++; continue; }
          eng_do_assert(W, w, fr, r, e, m);
          return -1;
        case K_TEX:
          if (m && eng_do_tex(W, w, r, e, m) != 0) return -1;
          pc++;
          continue;
        case K_SULD: case K_SUST:
          if (m && eng_do_surf(W, w, r, e, m) != 0) return -1;
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
          eng_fail(W, w, __builtin_ctz(m), e->o.insn, 0, "trap: the kernel aborted");
          return -1;
        case K_BAR: {
          if (!m) { pc++; continue; }
          W->st[S_BARRIER]++;
          uint32_t first = (uint32_t)__builtin_ctz(m);
          uint32_t id = e->o.ns > (e->isred ? 1u : 0u) ? (uint32_t)r[(size_t)e->o.s[0] * EMU_LANES + first] : 0;
          if (id >= NBAR) {
            eng_fail(W, w, (int)first, e->o.insn, 0, "barrier id %u out of range", id);
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
          eng_fail(W, w, -1, e->o.insn, 0, "internal error: bad engine op");
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
  if (any && W->racing) emu_race_sh_next(&W->rsh); /* a new barrier interval */
  return any;
}

void eng_warp_free(warp *w) {
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
int eng_run_cta(worker *W, uint64_t cta) {
  launch *L = W->L;
  W->cta = cta;
  if (L->ntrace) trace_begin(W, cta);
  W->ctaid[0] = (uint32_t)(cta % L->gdim[0]);
  W->ctaid[1] = (uint32_t)(cta / L->gdim[0] % L->gdim[1]);
  W->ctaid[2] = (uint32_t)(cta / ((uint64_t)L->gdim[0] * L->gdim[1]));
  memset(W->bar, 0, sizeof W->bar);
  if (L->shsize) memset(W->sh, 0, L->shsize);
  W->shext = 0;
  if (W->racing) emu_race_sh_next(&W->rsh); /* the CTA's first barrier interval */
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
      eng_fail(W, NULL, -1, NULL, 1, "out of memory");
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
          eng_fail(W, w, -1, pc ? fr->fn->ops[pc - 1].o.insn : NULL, 0,
               "deadlock: waits at barrier %u, which the CTA's other warps "
               "never reach", w->bar_id);
          return -1;
        }
      eng_fail(W, NULL, -1, NULL, 0, "internal error: no warp can run");
      return -1;
    }
  }
}

