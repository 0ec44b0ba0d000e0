/*
 * analytic.c -- a roofline-style estimate of a launch's time and power on a
 * GPU of the table (gpus.c), from the launch's dynamic features alone.
 *
 * Why: a trained forest needs measurements on the GPU in question; this
 * answers for every GPU of the table from datasheet figures, so `kcast
 * predict --gpu` has something to say before any data exists, and a forest
 * predicting one quantity can borrow the other.  It is a rough estimate, not
 * a model fitted to measurements: the band it reports (x0.5..x2 for time,
 * x0.7..x1.3 for power) is a statement of that, not a calibrated interval.
 *
 * The terms (all docs/gpus.md, "The analytic estimate"):
 *   compute  slowest functional-unit pipe: thread-level counts of each class
 *            over that pipe's lanes per SM, on ceil(ctas/SMs) CTAs' worth of
 *            work per SM (so one CTA uses one SM);
 *   issue    warp instructions at ISSUE warp-instructions/clock/SM, same load;
 *   memory   mem.global_sectors x 32 B (+ local bytes) over the bandwidth
 *            reachable with the resident warps (Little's law), capped at
 *            BW_EFF of the peak; when the footprint fits in L2, DRAM moves
 *            the footprint once plus the stored bytes (write-back) and L2
 *            (L2_BW x DRAM peak) serves the rest;
 *   latency  per wave of resident CTAs, one warp's dependent chain;
 *   time   = OVERHEAD + max(terms).
 * Power = idle + (TDP - idle) x utilisation, where utilisation weighs the
 * compute and memory terms' share of the body time, the fraction of SMs with
 * work and the share of the time not spent in the fixed overhead.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "model/rf_int.h"

/* Constants of the estimate (documented in docs/gpus.md). */
#define OVERHEAD_US 2.0      /* launch + drain of an empty kernel */
#define BW_EFF 0.85          /* sustained / peak DRAM bandwidth */
#define L2_BW 3.0            /* L2 bandwidth as a multiple of DRAM peak */
#define MEM_LAT_CYC 500.0    /* global-memory latency, cycles */

/*
 * The features the estimate reads, gathered in one pass over the launch's
 * names: it looked each one up by a scan of them all, some forty scans a
 * call, which were half of a kcast_predict with a forest whose base is
 * an.time_us.  key_find looks a name up in key_name; the first
 * occurrence of a name counts, as the scans found it.
 */
enum {
  K_ATOMG, K_CMP, K_CONVERT, K_FP16, K_FP32, K_FP64, K_INT, K_LDCONST, K_LDG, K_LDSH,
  K_LOGIC, K_SPECIAL, K_STG, K_STSH, K_ALR, K_WI, K_BX, K_BY, K_BZ, K_CTAS, K_LSHARED,
  K_THREADS, K_FOOT, K_GACC, K_GBYTES, K_GSECT, K_GSTORE, K_LBYTES, K_SHACC, K_REPLAYS,
  K_SSHARED, K_N
};
static const char *const key_name[K_N] = {
  "class.atomic_global", "class.compare", "class.convert", "class.fp16", "class.fp32",
  "class.fp64", "class.int_arith", "class.ld_const", "class.ld_global", "class.ld_shared",
  "class.logic", "class.special", "class.st_global", "class.st_shared",
  "ctrl.active_lane_ratio", "ctrl.warp_insns",
  "launch.block_x", "launch.block_y", "launch.block_z", "launch.ctas", "launch.shared_bytes",
  "launch.threads",
  "mem.footprint_bytes", "mem.global_accesses", "mem.global_bytes", "mem.global_sectors",
  "mem.global_store_bytes", "mem.local_bytes", "mem.shared_accesses",
  "mem.shared_bank_replays",
  "static.shared_bytes",
};

/* The ptxas.sm_XY.<what> columns read (ptxas_pick). */
enum { P_SMEM, P_REGS, P_SST, P_SLD, P_N };
static const char *const ptx_what[P_N] = {"smem_bytes", "registers", "spill_store_bytes",
                                          "spill_load_bytes"};

typedef struct an_in {
  double v[K_N];            /* 0 when absent */
  unsigned char have[K_N];
  double class_sum;         /* the class.* values summed in the names' order */
  double ptx[P_N];          /* NAN when the launch has no such column */
  int ptx_score[P_N];
} an_in;

/*
 * key_name by a hash of the name's length and three of its characters (no
 * pass over the whole name), in a table of KEY_SLOTS built once; one
 * memcmp confirms.  A binary search of key_name (strcmp at each of about
 * five steps for each of a launch's sixty-odd names) was a fifth of a
 * kcast_predict on the Mangrove T4 forest.
 */
#define KEY_SLOTS 128 /* a power of two, over 2 x K_N */
static unsigned char key_slot[KEY_SLOTS]; /* key + 1, 0 when empty */
static unsigned char key_len[K_N];
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

static inline unsigned key_hash(const char *c, size_t len) {
  return (unsigned)(len * 37u + (unsigned char)c[len - 1] * 11u + (unsigned char)c[len - 2] * 5u +
                    (unsigned char)c[len / 2]) & (KEY_SLOTS - 1);
}

static void key_build(void) {
  for (int k = 0; k < K_N; k++) {
    size_t len = strlen(key_name[k]);
    key_len[k] = (unsigned char)len;
    unsigned s = key_hash(key_name[k], len);
    while (key_slot[s]) s = (s + 1) & (KEY_SLOTS - 1);
    key_slot[s] = (unsigned char)(k + 1);
  }
}

static long key_find(const char *c) {
  size_t len = strlen(c);
  if (len < 2) return -1;
  for (unsigned s = key_hash(c, len);; s = (s + 1) & (KEY_SLOTS - 1)) {
    int k = key_slot[s] - 1;
    if (k < 0) return -1;
    if (key_len[k] == len && !memcmp(c, key_name[k], len)) return k;
  }
}

/*
 * A ptxas.sm_XY.<what> column (c + 9 is past "ptxas.sm_") for the
 * architecture nearest to cc: XY itself, else the newest one of the same
 * major version not newer than cc, else the newest one not newer, else the
 * oldest one (register counts change little between neighbouring
 * architectures; docs/features.md).  The best-ranked column wins, the
 * first of equals.
 */
static void ptxas_pick(an_in *in, const char *c, double v, int cc) {
  char *e;
  long a = strtol(c, &e, 10);
  if (e == c || a <= 0 || a > 999 || e[0] != '.') return;
  for (int k = 0; k < P_N; k++) {
    if (strcmp(e + 1, ptx_what[k])) continue;
    /* rank: exact 4, same major and older 3, older 2, newer 1 (then by
       closeness) */
    int arch = (int)a;
    int rank = arch == cc ? 4 : arch < cc && arch / 10 == cc / 10 ? 3 : arch < cc ? 2 : 1;
    int score = rank * 1000 + (arch <= cc ? arch : 999 - arch);
    if (score > in->ptx_score[k]) {
      in->ptx_score[k] = score;
      in->ptx[k] = v;
    }
    return;
  }
}

/* c starts with p (a literal: the loop unrolls; it stops at c's end, as
   strncmp, but with no call for each of a launch's names). */
static inline int starts(const char *c, const char *p) {
  for (; *p; c++, p++)
    if (*c != *p) return 0;
  return 1;
}

static void gather(const char *const *names, const double *vals, size_t n, int cc, an_in *in) {
  pthread_once(&key_once, key_build);
  memset(in, 0, sizeof *in);
  for (int k = 0; k < P_N; k++) {
    in->ptx[k] = NAN;
    in->ptx_score[k] = -1;
  }
  for (size_t i = 0; i < n; i++) {
    const char *c = names[i];
    /* every name read starts with one of these (op.*, arg.*, emu.*, ...
       are most of a launch's names and read none) */
    if (!c || (c[0] != 'c' && c[0] != 'l' && c[0] != 'm' && c[0] != 'p' && c[0] != 's'))
      continue;
    if (c[0] == 'p' && starts(c, "ptxas.sm_")) {
      ptxas_pick(in, c + 9, vals[i], cc);
      continue;
    }
    if (c[0] == 'c' && starts(c, "class.")) in->class_sum += vals[i];
    long k = key_find(c);
    if (k >= 0 && !in->have[k]) {
      in->have[k] = 1;
      in->v[k] = vals[i];
    }
  }
}

/* Value of key k, dflt when absent. */
static inline double in_or(const an_in *in, int k, double dflt) {
  return in->have[k] ? in->v[k] : dflt;
}

/* Threads per CTA: block_x x block_y x block_z (an absent y or z counts
   1), else launch.threads / ctas. */
static double threads_per_cta(const an_in *in, double ctas) {
  double tpc = in->v[K_BX] * in_or(in, K_BY, 1) * in_or(in, K_BZ, 1);
  if (!(tpc > 0) && ctas > 0) tpc = in->v[K_THREADS] / ctas;
  return tpc;
}

/* The launch's CTAs and threads per CTA, checked; -1 naming what is wrong. */
static int launch_shape(const an_in *in, double *ctas, double *tpc) {
  *ctas = in->v[K_CTAS];
  *tpc = threads_per_cta(in, *ctas);
  if (!(*ctas >= 1) || !(*tpc >= 1))
    return rf__err("the features need launch.ctas and launch.block_x/y/z (positive)");
  if (*tpc > 1024) return rf__err("launch has %.0f threads per CTA (at most 1024)", *tpc);
  return 0;
}

/* an_occupancy_of on gathered features. */
static int occupancy(const an_gpu *g, const an_in *in, an_occupancy *o) {
  memset(o, 0, sizeof *o);
  double ctas, tpc;
  if (launch_shape(in, &ctas, &tpc)) return -1;
  double smem = in->ptx[P_SMEM], regs = in->ptx[P_REGS], sst = in->ptx[P_SST],
         sld = in->ptx[P_SLD];
  o->tpc = tpc;
  o->wpc = ceil(tpc / 32);
  o->shared = in->v[K_LSHARED] + (isnan(smem) ? in->v[K_SSHARED] : smem);
  o->regs = isnan(regs) || regs < 0 ? 0 : regs;
  o->spill_bytes = (isnan(sst) ? 0 : sst) + (isnan(sld) ? 0 : sld);
  o->fits = 1;
  double res = g->max_ctas_per_sm;
  o->limiter = AN_LIMIT_CTAS;
  double by_threads = floor(g->max_threads_per_sm / (o->wpc * 32));
  if (by_threads < res) { res = by_threads; o->limiter = AN_LIMIT_THREADS; }
  if (o->regs > 0) {
    /* registers are allocated per warp in units of 256 */
    double per_warp = ceil(o->regs * 32 / 256) * 256;
    double by_regs = floor(g->regs_per_sm / (per_warp * o->wpc));
    if (o->regs > g->max_regs_per_thread) by_regs = 0;
    if (by_regs < res) { res = by_regs; o->limiter = AN_LIMIT_REGS; }
  }
  if (o->shared > 0) {
    /* the system's reservation per CTA, in allocation units (128 bytes
       from cc 8.0, 256 before) */
    double unit = g->cc_major >= 8 ? 128 : 256;
    double per_cta = ceil((o->shared + g->smem_reserved_b) / unit) * unit;
    double by_smem = floor(g->smem_per_sm_kb * 1024 / per_cta);
    if (o->shared > g->smem_per_cta_kb * 1024) by_smem = 0;
    if (by_smem < res) { res = by_smem; o->limiter = AN_LIMIT_SHARED; }
  }
  if (res < 1) { res = 1; o->fits = 0; } /* the launch would fail; counted as one */
  o->ctas_per_sm = res;
  o->warps_per_sm = res * o->wpc;
  o->occupancy = o->warps_per_sm / (g->max_threads_per_sm / 32.0);
  o->waves = ctas / (g->sms * res);
  o->tail = ceil(o->waves) - o->waves;
  o->busy_sms = fmin(1.0, ctas / g->sms);
  return 0;
}

int an_occupancy_of(const an_gpu *g, const char *const *names, const double *vals, size_t n,
                    an_occupancy *o) {
  if (!g || !o || (n && (!names || !vals))) return rf__err("an_occupancy_of: NULL argument");
  an_in in;
  gather(names, vals, n, g->cc_major * 10 + g->cc_minor, &in);
  return occupancy(g, &in, o);
}

int an_estimate_launch(const an_gpu *g, const char *const *names, const double *vals,
                       size_t n, an_estimate *o) {
  if (!g || !o || (n && (!names || !vals))) return rf__err("an_estimate_launch: NULL argument");
  if (g->sms <= 0 || !(g->boost_mhz > 0) || !(g->fp32_gflops > 0) || !(g->mem_bw_gbs > 0) ||
      g->max_threads_per_sm <= 0 || g->max_ctas_per_sm <= 0)
    return rf__err("GPU %s: figures must be positive", g->name ? g->name : "?");
  for (size_t i = 0; i < n; i++)
    if (!isfinite(vals[i])) return rf__err("feature %s is not finite", names[i] ? names[i] : "?");
  /* a library kernel described by its operator (model/opr.h) has its own
     estimate (analytic_op.c) */
  if (an__op_class(names, vals, n) != 0) return an__estimate_op(g, names, vals, n, o);
  memset(o, 0, sizeof *o);
  an_in in;
  gather(names, vals, n, g->cc_major * 10 + g->cc_minor, &in);
#define F(k) in.v[k]
  double ctas, tpc;
  if (launch_shape(&in, &ctas, &tpc)) return -1;

  /* Residency and waves. */
  an_occupancy occ;
  if (occupancy(g, &in, &occ)) return -1;
  double res = occ.ctas_per_sm, wpc = occ.wpc;
  double sms = g->sms, clock = g->boost_mhz * 1e6; /* Hz */
  double concurrent = sms * res;
  o->resident_ctas = (int)res;
  o->waves = ceil(ctas / concurrent);
  /* Work per SM: the busiest SM runs ceil(ctas/SMs) CTAs. */
  double load = ceil(ctas / sms) / ctas; /* fraction of the launch on the busiest SM */

  /* Pipes: thread-level counts over lanes per SM per clock. */
  int kepler = g->cc_major < 5;
  double fp32_lanes = g->fp32_gflops * 1e9 / (2 * sms * clock);
  double fp64_lanes = g->fp64_gflops > 0 ? g->fp64_gflops * 1e9 / (2 * sms * clock) : 1.0 / 32;
  double int_lanes = kepler ? 160 : 64, sfu_lanes = kepler ? 32 : 16, cvt_lanes = 16;
  double issue = kepler ? 6 : 4;
  double pipe[5];
  pipe[0] = (F(K_FP32) + F(K_FP16)) / fp32_lanes;
  pipe[1] = F(K_FP64) / fp64_lanes;
  pipe[2] = (F(K_INT) + F(K_LOGIC) + F(K_CMP)) / int_lanes;
  pipe[3] = F(K_SPECIAL) / sfu_lanes;
  pipe[4] = F(K_CONVERT) / cvt_lanes;
  double cyc = 0;
  for (int i = 0; i < 5; i++)
    if (pipe[i] > cyc) cyc = pipe[i];
  o->t_compute_us = cyc * load / clock * 1e6;
  /* Issue: warp instructions, without constant loads (the SASS reads a
     constant as an operand of the instruction that uses it), plus the
     shared-memory wavefronts, which the load/store path serialises with
     the issue of everything else (one wavefront a clock; a conflicted
     access takes one per replay).  Warp counts come from ctrl.warp_insns,
     else from the thread-level counts over 32 lanes. */
  double lanes = F(K_ALR) > 0 ? F(K_ALR) : 1;
  double wi = F(K_WI);
  if (!(wi > 0)) {
    if (wi == 0 && !signbit(wi)) {
      wi = in.class_sum; /* 0 + the sum: the same additions in the same order */
    } else {
      for (size_t i = 0; i < n; i++)
        if (names[i] && !strncmp(names[i], "class.", 6)) wi += vals[i];
    }
    wi /= 32;
  }
  double const_w = F(K_LDCONST) / 32 / lanes;
  double shared_w = F(K_SHACC);
  if (!(shared_w > 0)) shared_w = (F(K_LDSH) + F(K_STSH)) / 32 / lanes;
  shared_w += F(K_REPLAYS);
  o->t_issue_us = (fmax(wi - const_w, 0) / issue + shared_w) * load / clock * 1e6;

  /* Memory. */
  double sectors = F(K_GSECT);
  double bytes = sectors > 0 ? sectors * 32 : F(K_GBYTES);
  bytes += F(K_LBYTES);
  double accesses = F(K_GACC);
  if (!(accesses > 0)) /* thread-level counts only (e.g. CUDA Flux): full warps */
    accesses = (F(K_LDG) + F(K_STG) + F(K_ATOMG)) / 32 / lanes;
  double bw = g->mem_bw_gbs * 1e9 * BW_EFF; /* B/s */
  /* Reuse through L2: distinct bytes are read once, written bytes go back. */
  double foot = F(K_FOOT), dram = bytes, t_l2 = 0;
  double once = foot + F(K_GSTORE);
  if (foot > 0 && once < bytes && foot <= g->l2_mb * 1048576.0) {
    dram = once;
    t_l2 = bytes / (g->mem_bw_gbs * 1e9 * L2_BW);
  }
  o->t_memory_us = fmax(dram / bw, t_l2) * 1e6;

  /* Latency: the busiest SM runs its CTAs in rounds of the resident ones;
     in each round a warp waits for its global accesses (MEM_LAT_CYC each),
     a wait the other resident CTAs hide but for one share of it. */
  double warps = ctas * wpc, rounds = ceil(ceil(ctas / sms) / res);
  o->t_latency_us = rounds * (accesses / warps) * MEM_LAT_CYC / res / clock * 1e6;

  double body = fmax(o->t_compute_us, o->t_issue_us);
  o->bound = o->t_issue_us >= o->t_compute_us ? "issue" : "compute";
  if (o->t_memory_us > body) { body = o->t_memory_us; o->bound = "memory"; }
  if (o->t_latency_us > body) o->bound = "latency";
  body += o->t_latency_us;
  o->t_overhead_us = OVERHEAD_US;
  o->time_us = OVERHEAD_US + body;
  o->time_lo_us = o->time_us * AN_TIME_BAND_LO;
  o->time_hi_us = o->time_us * AN_TIME_BAND_HI;

  /* Power. */
  double u = 0;
  if (body > 0) {
    double r_comp = fmax(o->t_compute_us, o->t_issue_us) / body;
    double r_mem = o->t_memory_us / body;
    u = fmin(1.0, 0.25 + 0.5 * r_comp + 0.35 * r_mem);
    u *= fmin(1.0, ctas / sms);
    u *= body / (body + OVERHEAD_US);
  }
  o->utilisation = u;
  double idle = g->idle_w, span = g->tdp_w - g->idle_w;
  o->power_w = idle + span * u;
  o->power_lo_w = fmax(idle, o->power_w * AN_POWER_BAND_LO);
  o->power_hi_w = fmin(g->tdp_w, o->power_w * AN_POWER_BAND_HI);
  o->energy_mj = o->time_us * o->power_w / 1000;
#undef F
  return 0;
}
