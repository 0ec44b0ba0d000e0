/*
 * emu_run.h -- what the emulator engine's three files share (emu.c: a CTA's
 * warps; emu_access.c: memory; emu_launch.c: launches): the per-thread
 * worker, its warps and the launch.  Private to the engine: emu_int.h is the
 * contract with the arithmetic, emu_eng.h with the loader.
 */
#ifndef KCAST_EMU_RUN_H
#define KCAST_EMU_RUN_H

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

#define NBAR 16
#define GC_WAYS 4  /* allocation cache entries per thread */

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

struct emu_xctx {
  worker *W;
  warp *w;
  const eop *e;   /* the instruction, for messages */
};

static inline uint8_t *lane_local(worker *W, const warp *w, uint32_t lane) {
  return W->loc + ((size_t)w->idx * EMU_LANES + lane) * W->L->lsz;
}

static inline double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* emu.c: messages, CTAs */
void eng_compose(const worker *W, const warp *w, int lane, const ptx_insn *in, const char *body,
                 char *msg, size_t cap);
/* Fail the launch with a message naming kernel, CTA, thread and line; the
   kind is W->kind (EMU_FAULT_OTHER unless the caller set it). */
void eng_fail(worker *W, const warp *w, int lane, const ptx_insn *in, int all, const char *fmt,
              ...) __attribute__((format(printf, 6, 7)));
int eng_run_cta(worker *W, uint64_t cta);
void eng_warp_free(warp *w);

/* emu_access.c: a warp's memory accesses and the device services that read
   memory (printf, assert, textures, surfaces) */
int eng_mem_op(worker *W, warp *w, uint64_t *r, const eop *e, uint32_t m);
void eng_arg_bytes(worker *W, const warp *w, const frame *fr, const uint64_t *r, const carg *a,
                   uint32_t lane, void *dst, uint64_t n);
int eng_do_printf(worker *W, warp *w, const frame *fr, uint64_t *r, const eop *e, uint32_t m);
void eng_do_assert(worker *W, warp *w, const frame *fr, const uint64_t *r, const eop *e,
                   uint32_t m);
int eng_do_tex(worker *W, warp *w, uint64_t *r, const eop *e, uint32_t m);
int eng_do_surf(worker *W, warp *w, uint64_t *r, const eop *e, uint32_t m);

#endif
