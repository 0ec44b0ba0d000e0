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
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "model/rf_int.h"

/* Constants of the estimate (documented in docs/gpus.md). */
#define OVERHEAD_US 2.0      /* launch + drain of an empty kernel */
#define BW_EFF 0.85          /* sustained / peak DRAM bandwidth */
#define L2_BW 3.0            /* L2 bandwidth as a multiple of DRAM peak */
#define MEM_LAT_CYC 500.0    /* global-memory latency, cycles */

/* Value of feature name (dflt when absent). */
static double fv_or(const char *const *names, const double *vals, size_t n, const char *name,
                    double dflt) {
  for (size_t i = 0; i < n; i++)
    if (names[i] && !strcmp(names[i], name)) return vals[i];
  return dflt;
}

/* Value of feature name (0 when absent). */
static double fv(const char *const *names, const double *vals, size_t n, const char *name) {
  return fv_or(names, vals, n, name, 0);
}

/* Threads per CTA: block_x x block_y x block_z (an absent y or z counts
   1), else launch.threads / ctas. */
static double threads_per_cta(const char *const *names, const double *vals, size_t n,
                              double ctas) {
  double tpc = fv(names, vals, n, "launch.block_x") * fv_or(names, vals, n, "launch.block_y", 1) *
               fv_or(names, vals, n, "launch.block_z", 1);
  if (!(tpc > 0) && ctas > 0) tpc = fv(names, vals, n, "launch.threads") / ctas;
  return tpc;
}

/*
 * The ptxas.sm_XY.<what> column for the architecture nearest to cc: XY
 * itself, else the newest one of the same major version not newer than cc,
 * else the newest one not newer, else the oldest one (register counts
 * change little between neighbouring architectures; docs/features.md).
 * NAN when the launch has no such column.
 */
static double ptxas_value(const char *const *names, const double *vals, size_t n, int cc,
                          const char *what) {
  int best = -1;
  double v = NAN;
  for (size_t i = 0; i < n; i++) {
    const char *c = names[i];
    if (!c || strncmp(c, "ptxas.sm_", 9)) continue;
    char *e;
    long a = strtol(c + 9, &e, 10);
    if (e == c + 9 || a <= 0 || a > 999 || e[0] != '.' || strcmp(e + 1, what)) continue;
    /* rank: exact 4, same major and older 3, older 2, newer 1 (then by
       closeness) */
    int arch = (int)a;
    int rank = arch == cc ? 4 : arch < cc && arch / 10 == cc / 10 ? 3 : arch < cc ? 2 : 1;
    int score = rank * 1000 + (arch <= cc ? arch : 999 - arch);
    if (score > best) { best = score; v = vals[i]; }
  }
  return v;
}

/* The launch's CTAs and threads per CTA, checked; -1 naming what is wrong. */
static int launch_shape(const char *const *names, const double *vals, size_t n, double *ctas,
                        double *tpc) {
  *ctas = fv(names, vals, n, "launch.ctas");
  *tpc = threads_per_cta(names, vals, n, *ctas);
  if (!(*ctas >= 1) || !(*tpc >= 1))
    return rf__err("the features need launch.ctas and launch.block_x/y/z (positive)");
  if (*tpc > 1024) return rf__err("launch has %.0f threads per CTA (at most 1024)", *tpc);
  return 0;
}

int an_occupancy_of(const an_gpu *g, const char *const *names, const double *vals, size_t n,
                    an_occupancy *o) {
  if (!g || !o || (n && (!names || !vals))) return rf__err("an_occupancy_of: NULL argument");
  memset(o, 0, sizeof *o);
#define F(name) fv(names, vals, n, name)
  double ctas, tpc;
  if (launch_shape(names, vals, n, &ctas, &tpc)) return -1;
  int cc = g->cc_major * 10 + g->cc_minor;
  double smem = ptxas_value(names, vals, n, cc, "smem_bytes");
  double regs = ptxas_value(names, vals, n, cc, "registers");
  double sst = ptxas_value(names, vals, n, cc, "spill_store_bytes");
  double sld = ptxas_value(names, vals, n, cc, "spill_load_bytes");
  o->tpc = tpc;
  o->wpc = ceil(tpc / 32);
  o->shared = F("launch.shared_bytes") + (isnan(smem) ? F("static.shared_bytes") : smem);
  o->regs = isnan(regs) || regs < 0 ? 0 : regs;
  o->spill_bytes = (isnan(sst) ? 0 : sst) + (isnan(sld) ? 0 : sld);
#undef F
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

int an_estimate_launch(const an_gpu *g, const char *const *names, const double *vals,
                       size_t n, an_estimate *o) {
  if (!g || !o || (n && (!names || !vals))) return rf__err("an_estimate_launch: NULL argument");
  if (g->sms <= 0 || !(g->boost_mhz > 0) || !(g->fp32_gflops > 0) || !(g->mem_bw_gbs > 0) ||
      g->max_threads_per_sm <= 0 || g->max_ctas_per_sm <= 0)
    return rf__err("GPU %s: figures must be positive", g->name ? g->name : "?");
  for (size_t i = 0; i < n; i++)
    if (!isfinite(vals[i])) return rf__err("feature %s is not finite", names[i] ? names[i] : "?");
  memset(o, 0, sizeof *o);
#define F(name) fv(names, vals, n, name)
  double ctas, tpc;
  if (launch_shape(names, vals, n, &ctas, &tpc)) return -1;

  /* Residency and waves. */
  an_occupancy occ;
  if (an_occupancy_of(g, names, vals, n, &occ)) return -1;
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
  pipe[0] = (F("class.fp32") + F("class.fp16")) / fp32_lanes;
  pipe[1] = F("class.fp64") / fp64_lanes;
  pipe[2] = (F("class.int_arith") + F("class.logic") + F("class.compare")) / int_lanes;
  pipe[3] = F("class.special") / sfu_lanes;
  pipe[4] = F("class.convert") / cvt_lanes;
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
  double lanes = F("ctrl.active_lane_ratio") > 0 ? F("ctrl.active_lane_ratio") : 1;
  double wi = F("ctrl.warp_insns");
  if (!(wi > 0)) {
    for (size_t i = 0; i < n; i++)
      if (names[i] && !strncmp(names[i], "class.", 6)) wi += vals[i];
    wi /= 32;
  }
  double const_w = F("class.ld_const") / 32 / lanes;
  double shared_w = F("mem.shared_accesses");
  if (!(shared_w > 0)) shared_w = (F("class.ld_shared") + F("class.st_shared")) / 32 / lanes;
  shared_w += F("mem.shared_bank_replays");
  o->t_issue_us = (fmax(wi - const_w, 0) / issue + shared_w) * load / clock * 1e6;

  /* Memory. */
  double sectors = F("mem.global_sectors");
  double bytes = sectors > 0 ? sectors * 32 : F("mem.global_bytes");
  bytes += F("mem.local_bytes");
  double accesses = F("mem.global_accesses");
  if (!(accesses > 0)) /* thread-level counts only (e.g. CUDA Flux): full warps */
    accesses = (F("class.ld_global") + F("class.st_global") + F("class.atomic_global")) / 32 / lanes;
  double bw = g->mem_bw_gbs * 1e9 * BW_EFF; /* B/s */
  /* Reuse through L2: distinct bytes are read once, written bytes go back. */
  double foot = F("mem.footprint_bytes"), dram = bytes, t_l2 = 0;
  double once = foot + F("mem.global_store_bytes");
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
