/*
 * emu_launch.c -- the emulator engine's launches: the CTAs a launch runs,
 * on which threads, sampled or adaptive, with which counts merged, and
 * the race check's rounds (emu_launch).  A CTA itself runs in emu.c.
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
#include "emulator/emu_run.h"

#ifdef _OPENMP
/* declared here: clang's omp.h is not always installed */
int omp_get_max_threads(void);
int omp_get_thread_num(void);
int omp_get_num_threads(void);
#endif

#define TEAM_MIN_S 2e-3 /* work left (seconds on one thread) worth a team */

void emu_launch_cfg_init(emu_launch_cfg *cfg) {
  memset(cfg, 0, sizeof *cfg);
  for (int i = 0; i < 3; i++) cfg->grid[i] = cfg->block[i] = 1;
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
  for (uint32_t i = 0; c->w && i < c->nwa; i++) eng_warp_free(&c->w[i]);
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
      eng_fail(W, NULL, -1, NULL, 1, "not started (asked to stop)");
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
    int crc = eng_run_cta(W, cta);
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
