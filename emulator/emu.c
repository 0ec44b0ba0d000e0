/*
 * emu.c -- the PTX emulator engine: kernel launches.
 *
 * What: runs a kernel launch on the CPU, warp by warp, and counts what it
 * does (docs/features.md: launch.*, op.*, class.*, mem.*, ctrl.*).  The
 * arithmetic lives in emu_alu.c behind the emu_int.h contract; the
 * preparation of a loaded module (every instruction into an eop, shared
 * memory layout, frames, zero_plan) in emu_load.c behind emu_eng.h; this
 * file does everything else: memory, control flow, calls, barriers, warp
 * collectives, printf, counting, budgets, OpenMP across CTAs.
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
 * or on whether a team ran.  Tests that compare 1 and 2 threads make every
 * launch of two CTAs or more start its team at once (emu__team_always,
 * emu_int.h): their launches are small, and without it the "2 threads" run
 * was the calling thread's alone.  Device printf output is buffered per CTA
 * and written in CTA order after the launch.
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
 *
 * Race check (cfg->racecheck; emu_race.c has the design).  Off, mem_op
 * tests one worker flag; on, its plain loads and stores go to race_mem
 * (the fast paths that skip mem_op's lane list -- mem_shared32,
 * x_shared_vec, mem_uniform_ld -- step aside), which updates the launch's
 * global shadow by run index and the worker's shared shadow by warp; a
 * released barrier and a new CTA start a new interval of the latter.
 * Races are counted per worker and named like tolerated accesses: the
 * first of the lowest CTA.
 */
#include "emulator/emu.h"
#include "emulator/emu_eng.h"
#include "emulator/emu_int.h"
#include "emulator/emu_race.h"
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
int omp_get_num_threads(void);
#endif

#define MAX_CALL_DEPTH 1024
#define NBAR 16
#define GC_WAYS 4  /* allocation cache entries per thread */
#define OOB_SLACK 4096 /* bytes around an allocation that count as out of bounds, not unmapped */
#define BLOCK_STEP 4096 /* instructions between limit checks inside a block */
#define CLOCK_EVERY (1u << 18) /* thread-instructions between clock reads */
#define TEAM_MIN_S 2e-3 /* work left (seconds on one thread) worth a team */




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
  uint8_t *sh;            /* shared memory of the running CTA (EMU_MAX_SHARED
                             bytes under EMU_OOB_WARN: the SM's, past the window) */
  int shext;              /* the running CTA used (and zeroed) sh past its window */
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
  uint64_t done;          /* CTAs this worker finished */
  uint64_t *snap_t, *snap_w; /* cfg->partial: tcnt / wcnt before the running CTA */
  uint64_t snap_st[S_NSTAT], snap_oob; /* and st[], oob */
  uint64_t *ac_t;         /* adaptive sampling: tcnt before the running CTA */
  uint64_t ac_st[S_NSTAT]; /* and st[] */
  long gc[GC_WAYS];       /* allocations hit last, most recent first; -1 */
  emu_tcache tc;          /* the footprint chunk touched last */
  emu_texview tv;         /* the texture used last (tv.t NULL: none) */
  int oom;
  emu_trace *tr;          /* the address stream of the running CTA ... */
  int tracing;            /* ... when it is one the launch traces */
  emu_trace_res *tres;    /* results of this thread's traced CTAs */
  size_t ntres, ctres;
  int racing;             /* L->racing: mem_op hands plain accesses to race_mem */
  uint32_t race_id;       /* the running CTA's run index + 1 (global shadow id) */
  emu_race_cache rc;      /* the global shadow chunk used last */
  emu_race_sh rsh;        /* shared shadow of the running CTA */
  uint64_t race_g, race_s; /* racing words found: global, shared */
  uint64_t race_seen;     /* 1 + CTA whose first race was offered to L->race_msg */
} worker;

struct launch {
  emu_module *em;
  efunc *k;
  int team;               /* the most threads a round of it ran on */
  const emu_launch_cfg *cfg;
  const char *kname;
  uint32_t bdim[3], gdim[3];
  uint32_t nthreads, nwarps;
  uint64_t shsize;        /* the CTA's shared window: static + dynamic
                             bytes (+ the reserved region) */
  uint64_t shneed;        /* what a GPU allocates: static (16-aligned) +
                             dynamic bytes */
  uint64_t shres;         /* offset of the reserved region (em->resv) */
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
  uint64_t done;          /* CTAs finished (of the merged workers) */
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
  /* adaptive sampling (EMU_SAMPLE_AUTO, emu.h) */
  int adaptive;
  uint64_t abase;         /* run index of this round's first CTA */
  double *acv;            /* per CTA run, by run index: acn counts */
  size_t acn;             /* AC_KEY + the module's opcode keys */
  uint32_t *boff;         /* per block b: its class entries [boff[b], boff[b+1]) */
  uint32_t *bkey;         /* an entry's opcode key ... */
  uint32_t *bn;           /* ... and its instructions in the block */
  /* the race check (cfg->racecheck; emu_race.c) */
  int racing;             /* the check runs (shared memory at least) */
  emu_race *race;         /* the global shadow; NULL when global memory is
                             not checked (race_note says why) */
  uint8_t *race_skip;     /* per opcode key: a strong access (.volatile,
                             .relaxed, .acquire, .release, .mmio): unchecked */
  uint32_t *race_fbase;   /* per function: instruction ids before its first */
  uint64_t *race_map;     /* sampled: the CTA of each run index */
  uint64_t race_cta;      /* CTA of race_msg (UINT64_MAX: none yet) */
  uint64_t race_g, race_s; /* racing words of the merged workers */
  char race_msg[1024];    /* the first race (lowest CTA) */
  char race_note[256];    /* what the check left out */
};

/* The per-CTA counts adaptive sampling measures (acv). */
enum { AC_TI, AC_GSECT, AC_SREP, AC_SACC, AC_CLS, AC_KEY = AC_CLS + FEAT_C_COUNT };

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
  char where[4200];
  if (in)
    snprintf(msg, cap, "%s: %s: %s: %s", head, ptx_insn_where(L->em->m, in, where, sizeof where),
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

/* An access of n bytes at offset off of shared memory past the CTA's
   window (resolve): inside the SM's shared memory (the largest a CTA may
   have) a GPU lets it through (EMU_OOB_WARN: out->p set). */
static __attribute__((noinline, cold)) int shared_past(worker *W, uint64_t off, unsigned n,
                                                       lacc *out) {
  const launch *L = W->L;
  if (L->cfg->oob == EMU_OOB_WARN && off <= EMU_MAX_SHARED && n <= EMU_MAX_SHARED - off) {
    if (!W->shext) { /* zeros for this CTA, made when first used */
      memset(W->sh + L->shsize, 0, EMU_MAX_SHARED - L->shsize);
      W->shext = 1;
    }
    out->p = W->sh + off;
  }
  return E_OOB;
}

/* The allocation nearest address a, however far, for the message of an
   unmapped access (resolve): b is the last one below a (-1: none). */
static __attribute__((noinline, cold)) long nearest_alloc(const emu_device *d, long b,
                                                         uint64_t a) {
  if (b >= 0 && (b + 1 >= (long)d->n || a - (d->a[b].base + d->a[b].size) < d->a[b + 1].base - a))
    return b;
  return b + 1 < (long)d->n ? b + 1 : -1;
}

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
      out->rs = R_SHARED;
      if (off > L->shsize || n > L->shsize - off) return shared_past(W, off, n, out);
      out->p = W->sh + off;
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
        if (li >= 0) return E_OOB;
        out->g = nearest_alloc(d, b, a); /* for the message */
        return E_UNMAPPED;
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

/* "N bytes past the end of allocation B+S" / "N bytes before allocation
   B+S" for address a and allocation gi. */
static void near_alloc(const emu_device *d, long gi, uint64_t a, char *buf, size_t cap) {
  const galloc *g = &d->a[gi];
  if (a >= g->base + g->size)
    snprintf(buf, cap, "%llu bytes past the end of allocation 0x%llx+%llu",
             (unsigned long long)(a - (g->base + g->size)), (unsigned long long)g->base,
             (unsigned long long)g->size);
  else if (a < g->base)
    snprintf(buf, cap, "%llu bytes before allocation 0x%llx+%llu",
             (unsigned long long)(g->base - a), (unsigned long long)g->base,
             (unsigned long long)g->size);
  else
    snprintf(buf, cap, "allocation 0x%llx+%llu, offset %llu", (unsigned long long)g->base,
             (unsigned long long)g->size, (unsigned long long)(a - g->base));
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
      if (ac->g >= 0 && (size_t)ac->g < d->n) {
        char near[160];
        near_alloc(d, ac->g, a, near, sizeof near);
        snprintf(body, cap, "unmapped %s %s of %u bytes at 0x%llx (%s, the nearest)", sp,
                 what, n, (unsigned long long)a, near);
      } else {
        snprintf(body, cap, "unmapped %s %s of %u bytes at 0x%llx (no allocation)", sp, what, n,
                 (unsigned long long)a);
      }
      break;
    case E_FREED:
      snprintf(body, cap, "%s %s of %u bytes at 0x%llx: use after free (allocation 0x%llx+%llu "
               "was freed)", sp, what, n, (unsigned long long)a,
               (unsigned long long)d->freed[ac->g].base, (unsigned long long)d->freed[ac->g].size);
      break;
    default:
      if (ac->g >= 0 && (size_t)ac->g < d->n && strstr(sp, "global")) {
        snprintf(body, cap, "out-of-bounds %s %s of %u bytes at 0x%llx (allocation 0x%llx+%llu)",
                 sp, what, n, (unsigned long long)a, (unsigned long long)d->a[ac->g].base,
                 (unsigned long long)d->a[ac->g].size);
      } else if (ac->rs == R_SHARED) {
        snprintf(body, cap, "out-of-bounds %s %s of %u bytes at 0x%llx (the CTA's shared "
                 "window is %llu bytes)", sp, what, n, (unsigned long long)a,
                 (unsigned long long)W->L->shsize);
      } else {
        snprintf(body, cap, "out-of-bounds %s %s of %u bytes at 0x%llx", sp, what, n,
                 (unsigned long long)a);
      }
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

/* An access a GPU tolerates (EMU_OOB_WARN): global, out of bounds but in
   a page the allocations map (emu_mapped_page; within 4 KiB of one always
   counts) or to freed memory; shared, past the CTA's window inside the
   SM's shared memory (resolve set ac->p).  Counted; the first of the
   lowest CTA is kept. */
static int tolerated(const worker *W, int code, const lacc *ac, uint64_t a) {
  if (W->L->cfg->oob != EMU_OOB_WARN) return 0;
  if (ac->rs == R_SHARED) return code == E_OOB && ac->p;
  return ac->rs == R_GLOBAL &&
         (code == E_OOB || code == E_FREED ||
          (code == E_UNMAPPED && emu_mapped_page(W->L->em->d, a)));
}

/* Count a tolerated access; keep the first of the lowest CTA, its text
   from mem_msg (body NULL) or body. */
static void note_tolerated(worker *W, const warp *w, uint32_t lane, const eop *e, int code,
                           uint64_t a, unsigned n, int write, const lacc *ac, const char *text) {
  launch *L = W->L;
  W->oob++;
  if (W->oob_seen == W->cta + 1 || W->cta > __atomic_load_n(&L->oob_cta, __ATOMIC_RELAXED))
    return;
  W->oob_seen = W->cta + 1;
  char body[512], msg[768];
  if (text) snprintf(body, sizeof body, "%s", text);
  else mem_msg(W, e, code, a, n, write, ac, body, sizeof body);
  compose(W, w, (int)lane, e->o.insn, body, msg, sizeof msg);
#pragma omp critical(emu_error)
  {
    if (W->cta < L->oob_cta) {
      L->oob_cta = W->cta;
      snprintf(L->oob_msg, sizeof L->oob_msg, "%s", msg);
    }
  }
}

static void note_oob(worker *W, const warp *w, uint32_t lane, const eop *e, int code,
                     uint64_t a, unsigned n, int write, const lacc *ac) {
  note_tolerated(W, w, lane, e, code, a, n, write, ac, NULL);
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
  if (aux != PTX_AUX_CAS && (type == PTX_T_F16 || type == PTX_T_BF16 || type == PTX_T_F16X2 ||
                             type == PTX_T_BF16X2))
    return emu_half_atom(aux, type, old, b);
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

/* out of line: the atomics path must not change how mem_op's hot paths compile */
static __attribute__((noinline)) uint64_t atom_do(const eop *e, uint8_t *p, uint64_t b, uint64_t c) {
  const ptx_insn *in = e->o.insn;
  unsigned t = in->type;
  int intadd = in->aux == PTX_AUX_ADD && t != PTX_T_F32 && t != PTX_T_F64 && t != PTX_T_F16X2 &&
               t != PTX_T_BF16X2;
  if (e->size == 2) { /* halves and cas.b16 */
    uint16_t *q = (uint16_t *)(void *)p;
    uint16_t old = __atomic_load_n(q, __ATOMIC_RELAXED);
    for (;;) {
      uint16_t nv = (uint16_t)atom_new(in->aux, t, 2, old, (uint16_t)b, (uint16_t)c);
      if (nv == old) return old;
      if (__atomic_compare_exchange_n(q, &old, nv, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        return old;
    }
  }
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
  unsigned cut = 0; /* the first descent, 0 when ascending */
  for (unsigned i = 1; i < n; i++)
    if (v[i] < v[i - 1]) { cut = i; break; }
  int two = cut > 0 && n <= 2 * EMU_LANES;
  for (unsigned i = cut + 1; two && i < n; i++) two = v[i] >= v[i - 1];
  if (two) { /* two ascending runs (a warp whose halves read the same
                rows, as a wmma fragment's do): merged */
    uint64_t t[2 * EMU_LANES];
    unsigned a = 0, b = cut, o = 0;
    while (a < cut && b < n) t[o++] = v[b] < v[a] ? v[b++] : v[a++];
    while (a < cut) t[o++] = v[a++];
    while (b < n) t[o++] = v[b++];
    memcpy(v, t, n * sizeof *v);
  } else if (cut)
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
  if (W->racing) return 1; /* the lanes go where race_mem sees them */
  lacc ac;
  ac.g = -1;
  if (resolve(W, w, 0, e->space, a, n, 0, &ac) != E_OK || ac.perlane || ac.rs == R_SHARED)
    return 1;
  for (unsigned k = 0; k < e->vec; k++) { /* .v2 / .v4: each element to its register */
    uint64_t v = extend(load_n(ac.p + (size_t)k * e->size, e->size), e->size, e->sext, e->dw[k]);
    uint64_t *dst = r + (size_t)e->o.d[k] * EMU_LANES;
    for (uint32_t l = 0; l < EMU_LANES; l++) dst[l] = v;
  }
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
static __attribute__((noinline)) int mem_shared32(worker *W, uint64_t *r, const eop *e, uint32_t m) {
  if (W->racing) return 1; /* the lanes go where race_mem sees them */
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

/* What mem_refused made of a lane's refused access. */
enum { MR_SHARED, MR_SLACK, MR_DROP };

/*
 * Lane l's access at a that resolve refused (rc, ac): tolerated (EMU_OOB_WARN
 * and its kinds, tolerated) and noted, or the launch fails (-1).  Tolerated:
 * MR_SHARED, shared memory past the window (*pl its bytes); MR_SLACK, the
 * mapped pages' memory (*pl: what is there); MR_DROP, not performed (freed,
 * or beyond the mapped pages: loads give zeros).  Out of line: mem_op's
 * loop compiles as without it.
 */
static __attribute__((noinline, cold)) int mem_refused(worker *W, warp *w, uint32_t l,
                                                       const eop *e, int rc, uint64_t a,
                                                       unsigned n, int write, lacc *ac,
                                                       uint8_t **pl) {
  if (!tolerated(W, rc, ac, a)) {
    mem_fail(W, w, l, e, rc, a, n, write, ac);
    return -1;
  }
  note_oob(W, w, l, e, rc, a, n, write, ac);
  if (ac->rs == R_SHARED) { /* the SM's memory past the window */
    *pl = ac->p;
    return MR_SHARED;
  }
  /* the mapped pages' memory: what is there (freed: zeros, dropped) */
  uint8_t *sp = rc != E_FREED ? emu_slack_ptr(d_of(W), a, write) : NULL;
  if (!sp) return MR_DROP;
  *pl = sp;
  return MR_SLACK;
}

/* ------------------------------------------------------ race check -- */

/* Instruction id of in, running in function fn (emu_race_sh_check): the
   ids of the functions before it, then its index, from 1; 0 when in is
   not fn's. */
static uint32_t race_insn_id(const launch *L, const efunc *fn, const ptx_insn *in) {
  const ptx_func *f = fn->f;
  if (in < f->insns || in >= f->insns + f->ninsns) return 0;
  return L->race_fbase[fn->idx] + (uint32_t)(in - f->insns) + 1;
}

/* The instruction of id (race_insn_id), or NULL. */
static const ptx_insn *race_insn_of(const launch *L, uint32_t id) {
  const ptx_module *m = L->em->m;
  for (uint32_t fi = 0; id && fi < m->nfuncs; fi++)
    if (id > L->race_fbase[fi] && id - L->race_fbase[fi] <= m->funcs[fi].ninsns)
      return &m->funcs[fi].insns[id - L->race_fbase[fi] - 1];
  return NULL;
}

/* "CTA (x,y,z)" of global shadow id (run index + 1). */
static void race_cta_name(const launch *L, uint32_t id, char *buf, size_t cap) {
  uint64_t c = L->race_map ? L->race_map[id - 1] : (uint64_t)id - 1;
  snprintf(buf, cap, "CTA (%u,%u,%u)", (unsigned)(c % L->gdim[0]),
           (unsigned)(c / L->gdim[0] % L->gdim[1]),
           (unsigned)(c / ((uint64_t)L->gdim[0] * L->gdim[1])));
}

/*
 * The `count` words that lane's access of n bytes at address a (global:
 * in allocation gi; shared: gi < 0 and a the window offset) found racing,
 * the first described by h: counted, and the first race of the lowest CTA
 * described in L->race_msg (as note_tolerated keeps the first tolerated
 * access).
 */
static __attribute__((noinline, cold)) void race_found(worker *W, const warp *w, uint32_t lane,
                                                       const eop *e, long gi, uint64_t a,
                                                       unsigned n, const emu_race_hit *h,
                                                       unsigned count) {
  launch *L = W->L;
  int shared = gi < 0;
  if (shared) W->race_s += count;
  else W->race_g += count;
  if (W->race_seen == W->cta + 1 || W->cta > __atomic_load_n(&L->race_cta, __ATOMIC_RELAXED))
    return;
  W->race_seen = W->cta + 1;
  const char *kind = h->kind == EMU_RACE_WW ? "write-write" : "read-write";
  const char *verb = h->kind == EMU_RACE_RW ? "reads" : "writes";
  char where[64], other[768], body[1024], msg[1024];
  if (shared) {
    snprintf(where, sizeof where, "shared offset %llu", (unsigned long long)a);
    const ptx_insn *oi = race_insn_of(L, h->oinsn);
    char at[600] = "";
    if (oi) {
      char loc[512];
      snprintf(at, sizeof at, " (%s: %s)", ptx_insn_where(L->em->m, oi, loc, sizeof loc),
               L->em->m->keys[oi->key]);
    }
    if (h->other == EMU_RACE_MANY)
      snprintf(other, sizeof other, "other warps read%s", at);
    else
      snprintf(other, sizeof other, "warp %u %s%s", h->other - 1,
               h->kind == EMU_RACE_WR ? "read" : "wrote", at);
    snprintf(body, sizeof body, "%s race between warps in shared memory: it %s %u bytes at %s "
             "that %s, with no barrier between (the warps' order decides the result)", kind, verb,
             n, where, other);
  } else {
    char near[160], oc[128] = "other CTAs read";
    near_alloc(L->em->d, gi, a, near, sizeof near);
    if (h->other != EMU_RACE_MANY) {
      char c[64];
      race_cta_name(L, h->other, c, sizeof c);
      snprintf(oc, sizeof oc, "%s %s", c,
               h->kind == EMU_RACE_WW ? "writes too" : h->kind == EMU_RACE_RW ? "writes" : "reads");
    }
    snprintf(body, sizeof body, "%s race between CTAs in global memory: it %s %u bytes at 0x%llx "
             "(%s) that %s in the same launch (the CTAs' order decides the result)", kind, verb,
             n, (unsigned long long)a, near, oc);
  }
  compose(W, w, (int)lane, e->o.insn, body, msg, sizeof msg);
#pragma omp critical(emu_error)
  {
    if (W->cta < L->race_cta) {
      L->race_cta = W->cta;
      snprintf(L->race_msg, sizeof L->race_msg, "%s", msg);
    }
  }
}

/* The lane of lanes m whose n bytes at addr[l] hold byte x. */
static uint32_t race_lane(uint32_t m, const uint64_t *addr, uint64_t x, unsigned n) {
  for (uint32_t mm = m; mm; mm &= mm - 1) {
    uint32_t l = (uint32_t)__builtin_ctz(mm);
    if (x - addr[l] < n) return l;
  }
  return m ? (uint32_t)__builtin_ctz(m) : 0;
}

/*
 * The race check of one ld or st (mem_op; not an atomic): the global
 * lanes gl at addr[] (in allocation g1, or gidx[l] each; unit: the block
 * [lo, hi + n) in g1), the shared lanes sl at p[].  Out of line and cold:
 * with the check off, mem_op pays one test.
 */
static __attribute__((noinline, cold)) void race_mem(worker *W, const warp *w, const eop *e,
                                                     const uint64_t *addr, uint8_t *const *p,
                                                     const long *gidx, long g1, uint32_t gl,
                                                     uint32_t sl, int unit, uint64_t lo,
                                                     uint64_t hi, unsigned n, int mono) {
  launch *L = W->L;
  if (L->race_skip[e->o.insn->key]) return;
  int write = e->k == K_ST;
  emu_race_hit h;
  unsigned c;
  if (gl && L->race) {
    const emu_device *d = L->em->d;
    if (unit || (mono && g1 >= 0)) {
      /* runs of adjacent or overlapping lanes (a coalesced warp is one) */
      uint64_t s = lo, t = hi + n;
      int open = unit;
      for (uint32_t mm = unit ? 0 : gl; mm; mm &= mm - 1) {
        uint64_t a = addr[__builtin_ctz(mm)];
        if (open && a <= t) {
          if (a + n > t) t = a + n;
          continue;
        }
        if (open && (c = emu_race_global(L->race, &W->rc, g1, s - d->a[g1].base, t - s,
                                         W->race_id, write, &h))) {
          uint64_t x = d->a[g1].base + h.off;
          uint32_t l = race_lane(gl, addr, x, n);
          race_found(W, w, l, e, g1, addr[l], n, &h, c);
        }
        s = a;
        t = a + n;
        open = 1;
      }
      if (open && (c = emu_race_global(L->race, &W->rc, g1, s - d->a[g1].base, t - s,
                                       W->race_id, write, &h))) {
        uint64_t x = d->a[g1].base + h.off;
        uint32_t l = race_lane(gl, addr, x, n);
        race_found(W, w, l, e, g1, addr[l], n, &h, c);
      }
    } else {
      for (uint32_t mm = gl; mm; mm &= mm - 1) {
        uint32_t l = (uint32_t)__builtin_ctz(mm);
        long gi = gidx ? gidx[l] : g1;
        if ((c = emu_race_global(L->race, &W->rc, gi, addr[l] - d->a[gi].base, n, W->race_id,
                                 write, &h)))
          race_found(W, w, l, e, gi, addr[l], n, &h, c);
      }
    }
  }
  if (sl) {
    const efunc *fn = w->fr[w->nf - 1].fn;
    uint32_t id = race_insn_id(L, fn, e->o.insn);
    uint64_t prev = UINT64_MAX;
    for (uint32_t mm = sl; mm; mm &= mm - 1) {
      uint32_t l = (uint32_t)__builtin_ctz(mm);
      uint64_t o = (uint64_t)(p[l] - W->sh);
      /* a lane at the previous lane's bytes (a broadcast) changes nothing:
         the same warp, the same access */
      if (o == prev) continue;
      prev = o;
      /* past the window (tolerated under EMU_OOB_WARN): not shadowed */
      if (o < W->rsh.size && n <= W->rsh.size - o &&
          (c = emu_race_sh_check(&W->rsh, o, n, w->idx, id, write, &h)))
        race_found(W, w, l, e, -1, o, n, &h, c);
    }
  }
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
  if (m == UINT32_MAX && e->k != K_ATOM && (e->vec == 1 || e->k == K_LD)) {
    uint64_t a0 = base[0] + (uint64_t)e->aoff, bad = 0, same = 0;
    if (e->a32) a0 = (uint32_t)a0;
    for (uint32_t l = 0; l < EMU_LANES; l++) {
      uint64_t a = base[l] + (uint64_t)e->aoff;
      if (e->a32) a = (uint32_t)a;
      addr[l] = a;
      bad |= a ^ (a0 + (uint64_t)l * n);
      same |= a ^ a0;
    }
    if (!bad && e->vec == 1) unit = 1, lo = orv = a0, hi = addr[EMU_LANES - 1];
    /* a full warp loading one address (a parameter, a constant; .v2 and
       .v4 too, as pnpoly reads its polygon's vertices) */
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
  uint32_t slack = 0; /* lanes tolerated in the mapped pages' memory (no footprint) */
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
        int t = mem_refused(W, w, l, e, rc, addr[l], n, write, &ac, &p[l]);
        if (t < 0) return -1;
        if (t == MR_SHARED) sl |= 1u << l;
        else gl |= 1u << l, slack |= (uint32_t)(t == MR_SLACK) << l,
             drop |= (uint32_t)(t == MR_DROP) << l;
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
  } else if (e->k == K_LD && e->size == 4 && !e->sext && (e->vec == 2 || e->vec == 4) &&
             e->dw[0] >= 4 && e->dw[1] >= 4 && (e->vec == 2 || (e->dw[2] >= 4 && e->dw[3] >= 4))) {
    /* .v2 / .v4 of 32-bit elements, zero-extended (ld.shared.v4.f32, the
       four words an ldmatrix.x4 row gives): extend() without its cases
       and no switch an element (make bench's tensor loop 105 -> 125 M
       thread-insns/s, one thread) */
    for (uint32_t mm = m; mm; mm &= mm - 1) {
      uint32_t l = (uint32_t)__builtin_ctz(mm);
      for (unsigned k = 0; k < e->vec; k++) {
        uint32_t v;
        memcpy(&v, p[l] + 4 * k, 4);
        r[(size_t)e->o.d[k] * EMU_LANES + l] = v;
      }
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
  if (__builtin_expect(W->racing, 0) && e->k != K_ATOM && (gl | sl))
    race_mem(W, w, e, addr, p, g1 >= 0 ? NULL : gidx, g1, gl & ~drop & ~slack, sl, unit, lo, hi,
             n, mono);
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
    if ((gl & ~drop & ~slack) &&
        touch_lanes(W, addr, g1 >= 0 ? NULL : gidx, g1, gl & ~drop & ~slack, n, mono)) {
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

/* ------------------------------------------- emu_mma.c's memory path -- */

struct emu_xctx {
  worker *W;
  warp *w;
  const eop *e;   /* the instruction, for messages */
};

/*
 * A shared access of vec = 2 or 4 words a lane (ldmatrix's and stmatrix's
 * 16-byte rows, cp.async's shared stores), every lane aligned to its n =
 * 4 vec bytes and inside the CTA's window: 0 when done; 1 when mem_op must
 * do it, before anything is read or written.  The bank count is mem_op's:
 * aligned n-byte accesses are equal or disjoint, and the one at word k
 * covers banks k % 32 .. k % 32 + vec - 1, the same vec banks as every
 * access with the same (k / vec) % (32 / vec); each bank serves as many
 * distinct words as its group has distinct accesses.  Through mem_op an
 * eop was built and the lanes went through its general paths: make
 * bench's ldmatrix + mma.sync loop spent 57 % of its time there.
 */
static int x_shared_vec(worker *W, uint64_t *r, const emu_xacc *a, uint32_t m) {
  if (W->racing) return 1; /* the lanes go where race_mem sees them */
  unsigned vec = a->vec, n = 4u * vec, sh = vec == 4 ? 4 : 3; /* n = 1 << sh */
  const uint64_t *base = r + (size_t)a->addr * EMU_LANES;
  uint64_t shs = W->L->shsize, bad = 0;
  uint64_t off[EMU_LANES], key[EMU_LANES];
  unsigned nk = 0;
  for (uint32_t mm = m; mm; mm &= mm - 1) {
    uint32_t l = (uint32_t)__builtin_ctz(mm);
    uint64_t ad = base[l];
    uint64_t o = ad - EMU_SHARED_WIN < EMU_WIN_SIZE ? ad - EMU_SHARED_WIN : ad;
    bad |= (ad & (n - 1)) | (uint64_t)(o > shs || n > shs - o);
    off[l] = o;
    /* insertion into the sorted keys (at most 32) */
    uint64_t k = o >> sh;
    unsigned i = nk++;
    while (i && key[i - 1] > k) key[i] = key[i - 1], i--;
    key[i] = k;
  }
  if (bad) return 1;
  if (a->write) {
    for (uint32_t mm = m; mm; mm &= mm - 1) {
      uint32_t l = (uint32_t)__builtin_ctz(mm);
      for (unsigned j = 0; j < vec; j++) {
        uint32_t v = (uint32_t)r[(size_t)a->data[j] * EMU_LANES + l];
        memcpy(W->sh + off[l] + 4 * j, &v, 4);
      }
    }
  } else {
    for (uint32_t mm = m; mm; mm &= mm - 1) {
      uint32_t l = (uint32_t)__builtin_ctz(mm);
      for (unsigned j = 0; j < vec; j++) {
        uint32_t v;
        memcpy(&v, W->sh + off[l] + 4 * j, 4);
        r[(size_t)a->data[j] * EMU_LANES + l] = v;
      }
    }
  }
  unsigned per[16] = {0}, mx = 0, gm = 32 / vec - 1; /* the groups: k & gm */
  for (unsigned i = 0; i < nk; i++) {
    if (i && key[i] == key[i - 1]) continue;
    unsigned g = (unsigned)(key[i] & gm);
    if (++per[g] > mx) mx = per[g];
  }
  W->st[S_SBYTES] += (uint64_t)nk * n;
  W->st[S_SACC]++;
  if (mx > 1) W->st[S_SREPLAY] += mx - 1;
  return 0;
}

uint8_t *emu_x_shared(emu_xctx *x, uint64_t *size) {
  if (x->W->racing) return NULL; /* the accesses go where race_mem sees them */
  *size = x->W->L->shsize;
  return x->W->sh;
}

void emu_x_shared_count(emu_xctx *x, uint64_t bytes, uint64_t accesses, uint64_t replays) {
  uint64_t *st = x->W->st;
  st[S_SBYTES] += bytes;
  st[S_SACC] += accesses;
  st[S_SREPLAY] += replays;
}

int emu_x_access(emu_xctx *x, uint64_t *r, const emu_xacc *a, uint32_t m) {
  if (a->space == PTX_SP_SHARED && a->size == 4 && (a->vec == 2 || a->vec == 4) && m &&
      !x_shared_vec(x->W, r, a, m))
    return 0;
  eop t;
  memset(&t, 0, sizeof t);
  t.o.insn = x->e->o.insn;
  t.o.cc = EMU_NOSLOT;
  t.k = a->write ? K_ST : K_LD;
  t.space = a->space;
  t.size = a->size;
  t.vec = a->vec;
  t.guard = NONE;
  t.abase = a->addr;
  t.mbytes = (uint32_t)a->size * a->vec;
  for (unsigned j = 0; j < a->vec; j++) {
    if (a->write) {
      t.o.s[j] = a->data[j];
    } else {
      t.o.d[j] = a->data[j];
      t.dw[j] = 8;
    }
  }
  if (a->write) t.o.ns = a->vec;
  else t.o.nd = a->vec;
  return m ? mem_op(x->W, x->w, r, &t, m) : 0;
}

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

void emu_x_fail(emu_xctx *x, int lane, const char *fmt, ...) {
  char body[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(body, sizeof body, fmt, ap);
  va_end(ap);
  fail(x->W, x->w, lane, x->e->o.insn, 0, "%s", body);
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

/* What tex_view gives for an invalid handle under EMU_OOB_WARN. */
static const emu_texview bad_texview;

/* Opens handle h for lane l (below). */
static const emu_texview *tex_view_open(worker *W, const warp *w, uint64_t h, const eop *e,
                                        uint32_t l);

/* The texture or surface object in lane l's handle register: the one the
   worker has open (inline: one test a lane), else opened. */
static inline const emu_texview *tex_view(worker *W, const warp *w, uint64_t *r, const eop *e,
                                          uint32_t l) {
  uint64_t h = r[(size_t)e->abase * EMU_LANES + l];
  if (W->tv.t && W->tv.handle == h) return &W->tv;
  return tex_view_open(W, w, h, e, l);
}

static const emu_texview *tex_view_open(worker *W, const warp *w, uint64_t h, const eop *e,
                                        uint32_t l) {
  char why[256];
  if (emu_texview_open(W->L->em->d, h, &W->tv, why, sizeof why)) {
    W->tv.t = NULL;
    if (W->L->cfg->oob == EMU_OOB_WARN) {
      /* a GPU reads zeros through a bad handle: counted, the first named */
      note_tolerated(W, w, l, e, 0, 0, 0, 0, NULL, why);
      return &bad_texview;
    }
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
    if (v == &bad_texview) {
      for (unsigned k = 0; k < e->o.nd; k++) r[(size_t)e->o.d[k] * EMU_LANES + l] = 0;
      continue;
    }
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
    if (v == &bad_texview) { /* a read gives zeros, a write is dropped */
      for (unsigned k = 0; e->k == K_SULD && k < e->vec; k++)
        r[(size_t)e->o.d[k] * EMU_LANES + l] = 0;
      continue;
    }
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
    /* asked to stop: looked at here, with the budget, off the common path */
    if (L->cfg->stop && __atomic_load_n(L->cfg->stop, __ATOMIC_RELAXED)) {
      W->kind = EMU_FAULT_LIMIT;
      fail(W, w, -1, in, 1, "stopped before its end (asked to stop)");
      return -1;
    }
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
  if (any && W->racing) emu_race_sh_next(&W->rsh); /* a new barrier interval */
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

void emu__wcache_free(wcache *c) {
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
  if (L->cfg->oob == EMU_OOB_WARN && shneed < EMU_MAX_SHARED) shneed = EMU_MAX_SHARED;
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
  if (L->racing) {
    W->racing = 1;
    W->rc.gi = -1;
    if (emu_race_sh_init(&W->rsh, L->shsize)) return -1;
  }
  if (L->adaptive && !(W->ac_t = malloc(nb * sizeof *W->ac_t))) return -1;
  if (L->cfg->partial &&
      (!(W->snap_t = malloc(nb * sizeof *W->snap_t)) || !(W->snap_w = malloc(nb * sizeof *W->snap_w))))
    return -1;
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
  emu_race_sh_free(&W->rsh);
  free(W->snap_t);
  free(W->snap_w);
  free(W->ac_t);
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

/* emu__team_always (tests): 1 = a launch of two CTAs or more on more than
   one thread starts its team before the first CTA */
static int team_always;

int emu__team_always(int on) {
  return __atomic_exchange_n(&team_always, on != 0, __ATOMIC_RELAXED);
}

static double cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double wall_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The counts of the CTA W just finished (W->ac_t, W->ac_st: before it)
   into out (L->acn of them): thread-instructions by opcode key and class
   from its blocks' executions, sectors, replays, shared accesses. */
static void ac_record(worker *W, double *out) {
  const launch *L = W->L;
  memset(out, 0, L->acn * sizeof *out);
  for (uint32_t b = 0; b < L->em->nblocks; b++) {
    uint64_t d = W->tcnt[b] - W->ac_t[b];
    if (!d) continue;
    for (uint32_t e = L->boff[b]; e < L->boff[b + 1]; e++) {
      double c = (double)d * (double)L->bn[e];
      out[AC_KEY + L->bkey[e]] += c;
      out[AC_CLS + L->em->kcls[L->bkey[e]]] += c;
      out[AC_TI] += c;
    }
  }
  out[AC_GSECT] = (double)(W->st[S_GSECT] - W->ac_st[S_GSECT]);
  out[AC_SREP] = (double)(W->st[S_SREPLAY] - W->ac_st[S_SREPLAY]);
  out[AC_SACC] = (double)(W->st[S_SACC] - W->ac_st[S_SACC]);
}

/*
 * Run CTAs from the launch's counter until none is left.  With probe set
 * (the calling thread, a team possible), stop after a CTA once the work
 * left, estimated from the thread's CPU time per CTA so far, exceeds
 * TEAM_MIN_S: returns 1 then (a team should take over), else 0.  CPU time,
 * not wall time: on a loaded machine a preempted first CTA looked like
 * milliseconds of work and started a team for a launch of four CTAs.  But
 * the thread's CPU clock is a system call (517 ns here, the wall clock's
 * 22 ns), and the CPU time never exceeds the wall time: the wall clock
 * screens, the CPU clock confirms, and only while two CTAs or more are
 * left (one is the calling thread's as soon as a team's).  make bench's
 * 2,000 launches of 2 CTAs on 2 threads went from 0.87x to ~1x of their
 * one-thread rate.
 */
static int run_ctas(worker *W, int probe) {
  launch *L = W->L;
  if (probe && __atomic_load_n(&team_always, __ATOMIC_RELAXED)) return 1;
  if (probe && L->nrun - __atomic_load_n(&L->next, __ATOMIC_RELAXED) < 3) probe = 0;
  double c0 = probe ? cpu_s() : 0, w0 = probe ? wall_s() : 0;
  for (;;) {
    uint64_t i = __atomic_fetch_add(&L->next, 1, __ATOMIC_RELAXED);
    if (i >= L->nrun) return 0;
    uint64_t cta = L->list ? L->list[i] : i;
    if (__atomic_load_n(&L->stop_all, __ATOMIC_RELAXED) ||
        cta > __atomic_load_n(&L->abort_cta, __ATOMIC_RELAXED))
      continue;
    /* asked to stop: no CTA starts (a short CTA may never reach the check
       inside, which waits for L->flush_at instructions) */
    if (L->cfg->stop && __atomic_load_n(L->cfg->stop, __ATOMIC_RELAXED)) {
      W->cta = cta;
      W->kind = EMU_FAULT_LIMIT;
      fail(W, NULL, -1, NULL, 1, "not started (asked to stop)");
      continue;
    }
    W->pf.len = 0;
    size_t nb = L->em->nblocks;
    if (W->snap_t) { /* cfg->partial: what to take back if this CTA is stopped */
      memcpy(W->snap_t, W->tcnt, nb * sizeof *W->tcnt);
      memcpy(W->snap_w, W->wcnt, nb * sizeof *W->wcnt);
      memcpy(W->snap_st, W->st, sizeof W->st);
      W->snap_oob = W->oob;
    }
    if (W->ac_t) {
      memcpy(W->ac_t, W->tcnt, nb * sizeof *W->tcnt);
      memcpy(W->ac_st, W->st, sizeof W->st);
    }
    W->race_id = (uint32_t)(L->abase + i + 1); /* < EMU_RACE_IDS where L->race is set */
    int crc = run_cta(W, cta);
    if (crc == 0) {
      W->done++;
      if (W->ac_t) ac_record(W, &L->acv[(L->abase + i) * L->acn]);
    } else if (W->snap_t) {
      memcpy(W->tcnt, W->snap_t, nb * sizeof *W->tcnt);
      memcpy(W->wcnt, W->snap_w, nb * sizeof *W->wcnt);
      memcpy(W->st, W->snap_st, sizeof W->st);
      W->oob = W->snap_oob;
    }
    /* a failed CTA's text too: what its threads printed before the fault
       or the failed assert (a GPU prints it as well) */
    if (W->pf.len) {
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
      W->po[W->npo].i = L->abase + i;
      W->po[W->npo++].b = W->pf;
      memset(&W->pf, 0, sizeof W->pf);
    }
    if (probe && i + 2 < L->nrun) {
      double left = (double)(L->nrun - i - 1) / (double)(i + 1);
      if ((wall_s() - w0) * left > TEAM_MIN_S && (cpu_s() - c0) * left > TEAM_MIN_S) return 1;
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
  L->done += W->done;
  W->done = 0;
  L->race_g += W->race_g;
  L->race_s += W->race_s;
  W->race_g = W->race_s = 0;
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

/* Shared memory a GPU gives a CTA of kernel k with dyn dynamic bytes. */
static uint64_t shared_need(const efunc *k, size_t dyn) {
  return dyn ? emu_align_up(k->sh_static, 16) + dyn : k->sh_static;
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
  P.adaptive = 0; /* their counts are not recorded */
  P.abase = 0;
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
  P.racing = 0; /* CTAs run a second time: not part of the launch */
  P.race = NULL;
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

/* Adaptive sampling's tables of the instructions of each opcode key per
   block (L->boff, bkey, bn; L->acn); 0 or -1 (ENOMEM). */
static int ac_tables(launch *L) {
  const emu_module *em = L->em;
  const ptx_module *m = em->m;
  size_t nb = em->nblocks, ne = 0;
  uint32_t *n = calloc(m->nkeys ? m->nkeys : 1, sizeof *n);
  L->acn = AC_KEY + m->nkeys;
  L->boff = calloc(nb + 1, sizeof *L->boff);
  if (!n || !L->boff) {
    free(n);
    return -1;
  }
  for (int pass = 0; pass < 2; pass++) {
    ne = 0;
    for (uint32_t fi = 0; fi < m->nfuncs; fi++) {
      const efunc *fn = &em->fn[fi];
      if (!fn->ops) continue;
      const ptx_cfg *g = fn->f->cfg;
      for (uint32_t b = 0; b < g->nblocks; b++) {
        const ptx_block *bl = &g->blocks[b];
        if (!pass) L->boff[fn->cbase + b] = (uint32_t)ne;
        for (uint32_t i = bl->first; i < bl->first + bl->count; i++) n[fn->f->insns[i].key]++;
        for (uint32_t i = bl->first; i < bl->first + bl->count; i++) {
          uint32_t k = fn->f->insns[i].key;
          if (!n[k]) continue;
          if (pass) L->bkey[ne] = k, L->bn[ne] = n[k];
          n[k] = 0;
          ne++;
        }
      }
    }
    if (!pass) {
      /* blocks of functions without ops have no entries: offsets ascend */
      L->boff[nb] = (uint32_t)ne;
      for (size_t b = nb; b-- > 0;)
        if (L->boff[b] > L->boff[b + 1]) L->boff[b] = L->boff[b + 1];
      L->bkey = malloc((ne ? ne : 1) * sizeof *L->bkey);
      L->bn = malloc((ne ? ne : 1) * sizeof *L->bn);
      if (!L->bkey || !L->bn) {
        free(n);
        return -1;
      }
    }
  }
  free(n);
  return 0;
}

typedef struct ac_ord {
  uint64_t cta, run;
} ac_ord;

static int cmp_ac_ord(const void *a, const void *b) {
  uint64_t x = ((const ac_ord *)a)->cta, y = ((const ac_ord *)b)->cta;
  return (x > y) - (x < y);
}

/*
 * The largest relative standard error of the grid totals estimated from the
 * counts v (m per CTA) of the n CTAs run (cta: their indices, by run index) of
 * ntotal (emu.h, "Adaptive sampling").  The variance is the
 * successive-difference estimate of a systematic sample, sum (x[i+1] -
 * x[i])^2 / (2 (n-1)) over the CTAs in index order: a trend over the grid
 * (a triangular loop), which the spread-out sample follows, does not count
 * as variance as it would in s^2 (that asked 1,024 CTAs of a triangular
 * kernel whose 48 were exact); CTAs that differ at random count in full.
 * -1 (ENOMEM) when the order cannot be made.
 */
static double ac_rse(const double *v, size_t m, const uint64_t *cta, uint64_t n,
                     uint64_t ntotal) {
  if (n < 2) return INFINITY;
  ac_ord *o = malloc(n * sizeof *o);
  double *mean = calloc(2 * m, sizeof *mean), *var = mean + m;
  if (!o || !mean) {
    free(o);
    free(mean);
    return -1;
  }
  for (uint64_t i = 0; i < n; i++) o[i].cta = cta[i], o[i].run = i;
  qsort(o, n, sizeof *o, cmp_ac_ord);
  for (uint64_t i = 0; i < n; i++)
    for (size_t k = 0; k < m; k++) mean[k] += v[i * m + k];
  for (size_t k = 0; k < m; k++) mean[k] /= (double)n;
  for (uint64_t i = 1; i < n; i++) {
    const double *a = &v[o[i].run * m], *b = &v[o[i - 1].run * m];
    for (size_t k = 0; k < m; k++) var[k] += (a[k] - b[k]) * (a[k] - b[k]) / 2;
  }
  free(o);
  double fpc = n < ntotal ? 1.0 - (double)n / (double)ntotal : 0.0, worst = 0;
  for (size_t k = 0; k < m; k++) {
    if (k == AC_SACC || !(mean[k] > 0)) continue;
    double den = mean[k], floor = k >= AC_CLS ? 0.01 * mean[AC_TI] : k == AC_SREP ? 0.01 * mean[AC_SACC] : 0;
    if (den < floor) den = floor;
    double r = sqrt(var[k] / (double)(n - 1) / (double)n * fpc) / den;
    if (r > worst) worst = r;
  }
  free(mean);
  return worst;
}

/* Run the CTAs of L->list (or all) from L->next: the calling thread, a team
   when the work looks large enough (see the note at the top); counts into
   tcnt, wcnt, stt.  1 when a worker ran out of memory. */
static int run_round(launch *L, uint64_t *tcnt, uint64_t *wcnt, uint64_t *stt) {
  int nth = L->cfg->threads > 0 ? L->cfg->threads : 0;
#ifdef _OPENMP
  if (!nth) nth = omp_get_max_threads();
  if ((uint64_t)nth > L->nrun) nth = (int)L->nrun;
#else
  nth = 1;
#endif
  /* The calling thread starts; a team joins only when the work left looks
     large enough to pay for starting it (see the note at the top). */
  worker W0;
  int oom = worker_init(&W0, L, 1) != 0;
  if (L->team < 1) L->team = 1;
  if (!oom && run_ctas(&W0, nth > 1) > 0) {
#ifdef _OPENMP
#pragma omp parallel num_threads(nth)
    {
#pragma omp single nowait
      if (omp_get_num_threads() > L->team) L->team = omp_get_num_threads();
      worker Wt, *W = &W0;
      if (omp_get_thread_num() != 0) {
        W = &Wt;
        if (worker_init(W, L, 0) != 0) {
#pragma omp atomic write
          oom = 1;
          __atomic_store_n(&L->stop_all, 1, __ATOMIC_RELAXED);
        } else {
          run_ctas(W, 0);
        }
#pragma omp critical(emu_merge)
        merge_worker(L, W, tcnt, wcnt, stt);
        worker_free(W);
      } else {
        run_ctas(W, 0);
      }
    }
#endif
  }
  if (W0.L) merge_worker(L, &W0, tcnt, wcnt, stt);
  worker_free(&W0);
  return oom;
}

/* 1 when sorted v[0..n) holds x. */
static int has_u64(const uint64_t *v, uint64_t n, uint64_t x) {
  uint64_t lo = 0, hi = n;
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (v[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo < n && v[lo] == x;
}

/*
 * The next round of an adaptive launch that has run the nran CTAs of ran
 * (sorted): the CTAs of a sample of tgt not run yet, or every CTA left
 * when tgt reaches half a grid of at most amax CTAs.  Into *out (NULL when none: the rounds
 * end); 0 or -1 (ENOMEM).
 */
static int ac_next(const launch *L, uint64_t tgt, uint64_t amax, const uint64_t *ran,
                   uint64_t nran, uint64_t **out, uint64_t *nout) {
  *out = NULL;
  *nout = 0;
  uint64_t k = 0, *v;
  if (2 * tgt >= L->ntotal && L->ntotal <= amax) {
    if (!(v = malloc((L->ntotal - nran + 1) * sizeof *v))) return -1;
    for (uint64_t c = 0, j = 0; c < L->ntotal; c++) {
      if (j < nran && ran[j] == c) j++;
      else v[k++] = c;
    }
  } else {
    uint64_t got;
    if (!(v = sample_list(L->gdim, tgt, &got))) return -1;
    for (uint64_t i = 0; i < got; i++)
      if (!has_u64(ran, nran, v[i])) v[k++] = v[i];
  }
  if (!k) {
    free(v);
    return 0;
  }
  *out = v;
  *nout = k;
  return 0;
}

/* ran[0..*nran) and add[0..nadd) (sorted, disjoint) merged into ran (room
   for both). */
static void merge_sorted(uint64_t *ran, uint64_t *nran, const uint64_t *add, uint64_t nadd) {
  uint64_t i = *nran, j = nadd, o = *nran + nadd;
  while (j > 0) {
    if (i > 0 && ran[i - 1] > add[j - 1]) ran[--o] = ran[--i];
    else ran[--o] = add[--j];
  }
  *nran += nadd;
}

/* ---------------------------------------------------- race check -- */

/* The first instruction of fn, or of a function it calls, that orders
   CTAs among themselves: a fence or membar of gpu or system scope (a
   __threadfence), an acquire or release access of that scope; NULL when
   none.  seen: per function, zeroed. */
static const ptx_insn *race_fence(const emu_module *em, const efunc *fn, uint8_t *seen) {
  if (seen[fn->idx]) return NULL;
  seen[fn->idx] = 1;
  const ptx_func *f = fn->f;
  for (uint32_t i = 0; i < f->ninsns; i++) {
    const ptx_insn *in = &f->insns[i];
    const char *key = em->m->keys[in->key];
    if ((in->op == PTX_OP_MEMBAR || in->op == PTX_OP_FENCE) &&
        (in->aux == PTX_AUX_GL || in->aux == PTX_AUX_GPU || in->aux == PTX_AUX_SYS))
      return in;
    if ((strstr(key, ".acquire") || strstr(key, ".release") || strstr(key, ".acq_rel")) &&
        (strstr(key, ".gpu") || strstr(key, ".sys")))
      return in;
  }
  for (uint32_t i = 0; i < f->ninsns; i++) {
    const eop *e = &fn->ops[i];
    if (e->k == K_CALL && e->call && e->call->callee) {
      const ptx_insn *in = race_fence(em, e->call->callee, seen);
      if (in) return in;
    }
  }
  return NULL;
}

/*
 * Set up the race check of L (cfg->racecheck): which opcode keys are
 * strong accesses (not checked), the instruction ids, and the global
 * shadow -- unless the kernel orders its CTAs with fences (a last-block
 * reduction, a decoupled look-back: its accesses between CTAs are
 * synchronised in a way the check does not follow, and it would report
 * them) or runs more CTAs than the shadow tells apart; L->race_note then
 * says so.  0, or -1 on ENOMEM.
 */
static int race_setup(launch *L) {
  const emu_module *em = L->em;
  const ptx_module *m = em->m;
  const emu_device *d = em->d;
  L->racing = 1;
  L->race_cta = UINT64_MAX;
  L->race_skip = calloc(m->nkeys ? m->nkeys : 1, 1);
  L->race_fbase = calloc(m->nfuncs + 1, sizeof *L->race_fbase);
  uint8_t *seen = calloc(m->nfuncs + 1, 1);
  uint64_t *sizes = malloc((d->n + 1) * sizeof *sizes);
  int rc = -1;
  if (!L->race_skip || !L->race_fbase || !seen || !sizes) goto out;
  for (uint32_t k = 0; k < m->nkeys; k++) {
    const char *key = m->keys[k];
    L->race_skip[k] = strstr(key, ".volatile") || strstr(key, ".relaxed") ||
                      strstr(key, ".acquire") || strstr(key, ".release") || strstr(key, ".mmio");
  }
  uint32_t id = 0;
  for (uint32_t fi = 0; fi < m->nfuncs; fi++) {
    L->race_fbase[fi] = id;
    id = m->funcs[fi].ninsns > UINT32_MAX / 2 - id ? UINT32_MAX / 2 : id + m->funcs[fi].ninsns;
  }
  const ptx_insn *fence = race_fence(em, L->k, seen);
  uint64_t runs = L->list ? L->nrun : L->ntotal;
  if (fence) {
    char loc[512];
    snprintf(L->race_note, sizeof L->race_note, "global memory between CTAs not checked: the "
             "kernel orders its CTAs with fences (%s: %s), which the check does not follow",
             ptx_insn_where(m, fence, loc, sizeof loc), m->keys[fence->key]);
  } else if (runs > EMU_RACE_IDS) {
    snprintf(L->race_note, sizeof L->race_note, "global memory between CTAs not checked: %llu "
             "CTAs, the check tells %u apart", (unsigned long long)runs, EMU_RACE_IDS);
  } else {
    for (size_t i = 0; i < d->n; i++) sizes[i] = d->a[i].size;
    if (!(L->race = emu_race_new(d->n, sizes))) goto out;
  }
  rc = 0;
out:
  free(seen);
  free(sizes);
  return rc;
}

/* Before a round of a sampled launch (L->list): the CTA of each new run
   index, for the messages; a launch that would run more CTAs than the
   shadow tells apart stops checking global memory.  0 or -1 (ENOMEM). */
static int race_round(launch *L) {
  if (!L->race || !L->list) return 0;
  if (L->abase + L->nrun > EMU_RACE_IDS) {
    emu_race_free(L->race);
    L->race = NULL;
    snprintf(L->race_note, sizeof L->race_note, "global memory between CTAs not checked: "
             "more than %u CTAs run", EMU_RACE_IDS);
    return 0;
  }
  uint64_t *mp = realloc(L->race_map, (L->abase + L->nrun) * sizeof *mp);
  if (!mp) return -1;
  L->race_map = mp;
  memcpy(mp + L->abase, L->list, L->nrun * sizeof *mp);
  return 0;
}

/* What the race check found, into st. */
static void race_finish(launch *L, emu_stats *st) {
  if (L->race && emu_race_incomplete(L->race) && !L->race_note[0])
    snprintf(L->race_note, sizeof L->race_note, "some global accesses not checked: the shadow "
             "memory reached its limit (%llu MiB)", (unsigned long long)(EMU_RACE_MAX_BYTES >> 20));
  if (L->race && L->list && !L->race_note[0])
    snprintf(L->race_note, sizeof L->race_note, "a sampled launch: global memory checked between "
             "the %llu CTAs that ran only", (unsigned long long)(L->abase ? L->abase : L->nrun));
  if (!st) return;
  st->races = L->race_g + L->race_s;
  st->races_shared = L->race_s;
  snprintf(st->race_first, sizeof st->race_first, "%s", L->race_msg);
  snprintf(st->race_note, sizeof st->race_note, "%s", L->race_note);
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
  const char *unsup = emu_kernel_unsupported(em, kernel);
  if (unsup) {
    if (st) st->fault = EMU_FAULT_UNSUPPORTED;
    return emu_errf(err, cap, "kernel %s cannot run: %s", kernel, unsup);
  }
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
  else if (cfg->shared_bytes > EMU_MAX_SHARED ||
           shared_need(&em->fn[ki], cfg->shared_bytes) > EMU_MAX_SHARED)
    snprintf(why, sizeof why, "%llu bytes of shared memory per CTA (%zu dynamic) exceeds %u",
             (unsigned long long)shared_need(&em->fn[ki], cfg->shared_bytes), cfg->shared_bytes,
             EMU_MAX_SHARED);
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
  /* the kernel's window (emu_load.c, shared_layout), then the reserved
     shared memory when the module reads its registers */
  L.shneed = shared_need(L.k, cfg->shared_bytes);
  L.shsize = cfg->shared_bytes ? L.k->sh_dyn + cfg->shared_bytes : L.k->sh_static;
  if (em->resv) {
    L.shres = emu_align_up(L.shsize, 16);
    L.shsize = L.shres + EMU_RESERVED_SMEM;
  }
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
  double *keyc = NULL, *keye = NULL; /* keye: the edges' keyc (adaptive) */
  uint64_t stt[S_NSTAT] = {0};
  uint64_t amin = cfg->sample_min ? cfg->sample_min : EMU_AUTO_MIN;
  uint64_t amax = cfg->sample_max ? cfg->sample_max : EMU_AUTO_MAX;
  if (amin < 2) amin = 2;
  if (amax < amin) amax = amin;
  double atarget = cfg->sample_rse > 0 ? cfg->sample_rse : EMU_AUTO_RSE;
  uint64_t *ran = NULL, nran = 0, tgt = amin; /* adaptive: the CTAs run, sorted */
  uint64_t *rcta = NULL;                      /* and by run index */
  /* adaptive: the first and the last CTA, a stratum of their own (run
     first, counted once each, never scaled: a grid's edges are where its
     odd CTAs are, bfs's root, a partial last CTA), their counts apart */
  uint64_t *tcnte = NULL, *wcnte = NULL, stte[S_NSTAT] = {0}, edges[2], *main_list = NULL,
           nmain_run = 0;
  const uint64_t nedge = 2;
  double rse = 0;
  if (cfg->sample_ctas == EMU_SAMPLE_AUTO) {
    if (ntotal > 2 * amin) { /* else the whole grid, as sample_ctas = 0 */
      L.adaptive = 1;
      L.list = sample_list(cfg->grid, amin, &L.nrun);
      if (!L.list || ac_tables(&L) || !(tcnte = calloc(em->nblocks ? em->nblocks : 1, sizeof *tcnte)) ||
          !(wcnte = calloc(em->nblocks ? em->nblocks : 1, sizeof *wcnte))) {
        emu_errf(err, cap, "out of memory");
        goto out;
      }
    }
  } else if (cfg->sample_ctas && cfg->sample_ctas < ntotal) {
    L.list = sample_list(cfg->grid, cfg->sample_ctas, &L.nrun);
    if (!L.list) { emu_errf(err, cap, "out of memory"); goto out; }
  }
  if (features && trace_plan(&L, &tctas, &troles, &textra, &ntextra)) {
    emu_errf(err, cap, "out of memory");
    goto out;
  }
  if (cfg->racecheck && race_setup(&L)) {
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
  int oom = 0;
  if (L.adaptive) { /* the edges first; the first round of the sample after them */
    main_list = L.list;
    nmain_run = L.nrun;
    edges[0] = 0;
    edges[1] = ntotal - 1;
    L.list = edges;
    L.nrun = nedge;
  }
  for (;;) {
    if (L.adaptive) {
      double *a = realloc(L.acv, (L.abase + L.nrun) * L.acn * sizeof *a);
      uint64_t *r = realloc(ran, (nran + L.nrun) * sizeof *r);
      uint64_t *rq = realloc(rcta, (L.abase + L.nrun) * sizeof *rq);
      if (a) L.acv = a;
      if (r) ran = r;
      if (rq) rcta = rq;
      if (!a || !r || !rq) { oom = 1; break; }
      memcpy(rcta + L.abase, L.list, L.nrun * sizeof *rcta);
    }
    if (race_round(&L)) { oom = 1; break; }
    L.next = 0;
    int edge_round = L.adaptive && L.list == edges;
    oom = run_round(&L, edge_round ? tcnte : tcnt, edge_round ? wcnte : wcnt, edge_round ? stte : stt);
    if (!L.adaptive) break;
    merge_sorted(ran, &nran, L.list, L.nrun);
    L.abase += L.nrun;
    if (oom || L.oom || L.err_cta != UINT64_MAX) break;
    if (edge_round) { /* the first round: the sample's CTAs that are no edge */
      uint64_t k = 0;
      for (uint64_t i = 0; i < nmain_run; i++)
        if (!has_u64(ran, nran, main_list[i])) main_list[k++] = main_list[i];
      L.list = main_list;
      L.nrun = k;
      main_list = NULL;
      if (k) continue;
    }
    if (nran == ntotal) { /* every CTA: exact */
      rse = 0;
      break;
    }
    /* the interior: the CTAs after the edges */
    rse = ac_rse(L.acv + nedge * L.acn, L.acn, rcta + nedge, nran - nedge, ntotal - nedge);
    if (rse < 0) { oom = 1; break; }
    if ((nran - nedge >= amin && rse <= atarget) || tgt >= amax) break;
    uint64_t *nx = NULL, nn = 0;
    int bad = 0;
    while (!nx && !bad && tgt < amax) { /* a size whose picks all ran: the next */
      tgt = tgt * 3 < amax ? tgt * 3 : amax;
      bad = ac_next(&L, tgt, amax, ran, nran, &nx, &nn);
    }
    if (bad) { oom = 1; break; }
    if (!nx) break;
    if (nran - nedge + nn > amax) { /* a last round off the nested sizes: thinned */
      uint64_t keep = amax - (nran - nedge);
      for (uint64_t i = 0; i < keep; i++) nx[i] = nx[(2 * i + 1) * nn / (2 * keep)];
      nn = keep;
    }
    free(L.list);
    L.list = nx;
    L.nrun = nn;
  }
  double secs = now_s() - L.t0;
  if (L.racing) race_finish(&L, st);
  if (oom || L.oom) {
    if (st) st->fault = EMU_FAULT_OTHER;
    emu_errf(err, cap, "kernel %s: out of memory for the emulator's state", kernel);
    goto out;
  }
  int partial = 0;
  if (L.err_cta != UINT64_MAX) {
    if (st) st->fault = L.err_kind;
    emu_errf(err, cap, "%s", L.err);
    if (!cfg->partial || L.err_kind != EMU_FAULT_LIMIT || !L.done) goto fpout;
    partial = 1; /* the CTAs that finished, as a sample */
  }
  /* ---- features ---- */
  uint64_t counted = partial ? L.done : L.adaptive ? nran : L.nrun;
  int scaled = L.adaptive ? nran < ntotal || partial : L.list != NULL || partial;
  if (!scaled) rse = 0;
  double scale = scaled ? (double)ntotal / (double)counted : 1.0;
  if (L.adaptive && (partial || !scaled)) { /* the edges as any CTA run */
    for (uint32_t b = 0; b < em->nblocks; b++) {
      tcnt[b] += tcnte[b];
      wcnt[b] += wcnte[b];
      tcnte[b] = wcnte[b] = 0;
    }
    for (int k = 0; k < S_NSTAT; k++) stt[k] += stte[k], stte[k] = 0;
  } else if (L.adaptive) { /* the interior scaled, the edges once */
    scale = (double)(ntotal - nedge) / (double)(nran - nedge);
  }
  double foot = 0;
  for (size_t i = 0; features && i < d->n; i++) {
    emu_foot f;
    emu_foot_scan(&d->a[i], &f);
    foot += scaled ? foot_estimate(&f, d->a[i].size, ntotal, counted) : (double)f.bytes;
  }
  /* the probes run after the footprint is taken: they touch memory the
     sample does not */
  if (L.adaptive) { /* the probes a later round ran are not run again */
    size_t k = 0;
    for (size_t i = 0; i < ntextra; i++)
      if (!has_u64(ran, nran, textra[i])) textra[k++] = textra[i];
    ntextra = k;
  }
  if (ntextra && !partial) run_probes(&L, textra, ntextra);
  uint64_t tinsn = 0, winsn = 0, wchain = 0, tinsne = 0, winsne = 0, wchaine = 0; /* ..e: the edges' */
  if (L.adaptive && !(keye = calloc(m->nkeys ? m->nkeys : 1, sizeof *keye))) {
    emu_errf(err, cap, "out of memory");
    goto fpout;
  }
  for (uint32_t fi = 0; fi < m->nfuncs; fi++) {
    const efunc *fn = &em->fn[fi];
    if (!fn->ops) continue;
    const ptx_cfg *g = fn->f->cfg;
    for (uint32_t b = 0; b < g->nblocks; b++) {
      uint64_t c = tcnt[fn->cbase + b], ce = keye ? tcnte[fn->cbase + b] : 0;
      uint64_t we = keye ? wcnte[fn->cbase + b] : 0;
      const ptx_block *bl = &g->blocks[b];
      tinsn += (c + ce) * bl->count;
      winsn += (wcnt[fn->cbase + b] + we) * bl->count;
      winsne += we * bl->count;
      tinsne += ce * bl->count;
      wchaine += we * bl->chain;
      wchain += (wcnt[fn->cbase + b] + we) * bl->chain;
      for (uint32_t i = bl->first; c && i < bl->first + bl->count; i++)
        keyc[fn->f->insns[i].key] += (double)c;
      for (uint32_t i = bl->first; ce && i < bl->first + bl->count; i++)
        keye[fn->f->insns[i].key] += (double)ce;
    }
  }
  if (st) {
    st->ctas_total = ntotal;
    st->ctas_run = counted;
    st->partial = partial;
    st->thread_insns = tinsn;
    st->warp_insns = winsn;
    st->seconds = secs;
    st->sampled = scaled;
    st->sample_rse = L.adaptive && scaled ? rse : 0;
    st->team = L.team;
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
    double cls[FEAT_C_COUNT] = {0}, tflops = 0;
    for (uint32_t k = 0; k < m->nkeys; k++) {
      double e = keye ? keye[k] : 0;
      if (!keyc[k] && !e) continue;
      bad |= feat_set(v, em->kop[k], keyc[k] * scale + e);
      cls[em->kcls[k]] += keyc[k] * scale + e;
      if (em->kflops) tflops += (keyc[k] * scale + e) * em->kflops[k];
    }
    for (int c = 0; c < FEAT_C_COUNT; c++)
      bad |= feat_set(v, em->clsname[c], cls[c]);
    if (em->kflops) bad |= feat_set(v, "tensor.flops", tflops);
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
      bad |= feat_set(v, mem[i].name, (double)stt[mem[i].s] * scale + (double)stte[mem[i].s]);
    bad |= feat_set(v, "mem.footprint_bytes", foot);
    if (L.ntres) {
      double tf[EMU_TRACE_NFEAT];
      uint32_t gd3[3] = {cfg->grid[0], cfg->grid[1], cfg->grid[2]};
      bad |= emu_trace_features(L.tres, L.ntres, ntotal, gd3, tf) != 0;
      for (int k = 0; k < EMU_TRACE_NFEAT && !bad; k++)
        bad |= feat_set(v, emu_trace_feat_name[k], tf[k]);
    }
    bad |= feat_set(v, "ctrl.warp_insns", (double)(winsn - winsne) * scale + (double)winsne);
    bad |= feat_set(v, "emu.ctas_emulated", (double)counted);
    if (partial) bad |= feat_set(v, "emu.partial", 1);
    if (L.adaptive && scaled && !partial) bad |= feat_set(v, "emu.sample_rse", rse);
    if (L.oob_n) bad |= feat_set(v, "emu.oob_accesses", (double)L.oob_n);
    if (L.race_g + L.race_s) bad |= feat_set(v, "emu.races", (double)(L.race_g + L.race_s));
    /* the ratios of the grid's estimated totals: with an edge stratum,
       the interior scaled and the edges once */
    double rt = (double)tinsn, rw = (double)winsn, rch = (double)wchain;
    if (keye) {
      rt = (double)(tinsn - tinsne) * scale + (double)tinsne;
      rw = (double)(winsn - winsne) * scale + (double)winsne;
      rch = (double)(wchain - wchaine) * scale + (double)wchaine;
    }
    bad |= feat_set(v, "ctrl.active_lane_ratio", rw > 0 ? rt / (32.0 * rw) : 0.0);
    /* warp instructions over the executed blocks' critical paths */
    bad |= feat_set(v, "ctrl.ilp", rch > 0 ? rw / rch : 0.0);
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
  if (L.list != edges) free(L.list); /* edges: the stack's */
  free(ran);
  free(rcta);
  free(tcnte);
  free(wcnte);
  free(main_list);
  free(keye);
  free(L.acv);
  free(L.boff);
  free(L.bkey);
  free(L.bn);
  emu_race_free(L.race);
  free(L.race_skip);
  free(L.race_fbase);
  free(L.race_map);
  free(tcnt);
  free(wcnt);
  free(keyc);
  emu_touch_clear(em->d);
  return rc;
}
