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
#include <string.h>

#include "model/model.h"
#include "model/rf_int.h"

/* Constants of the estimate (documented in docs/gpus.md). */
#define OVERHEAD_US 2.0      /* launch + drain of an empty kernel */
#define BW_EFF 0.85          /* sustained / peak DRAM bandwidth */
#define L2_BW 3.0            /* L2 bandwidth as a multiple of DRAM peak */
#define MEM_LAT_CYC 500.0    /* global-memory latency, cycles */
#define ALU_LAT_CYC 2.0      /* average cycles per dependent instruction */
#define MEM_MLP 2.0          /* independent global accesses in flight per warp */

/* Value of feature name (0 when absent). */
static double fv(const char *const *names, const double *vals, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (names[i] && !strcmp(names[i], name)) return vals[i];
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
  double ctas = F("launch.ctas");
  double tpc = F("launch.block_x") * F("launch.block_y") * F("launch.block_z");
  if (!(tpc > 0) && ctas > 0) tpc = F("launch.threads") / ctas;
  if (!(ctas >= 1) || !(tpc >= 1))
    return rf__err("the features need launch.ctas and launch.block_x/y/z (positive)");
  if (tpc > 1024) return rf__err("launch has %.0f threads per CTA (at most 1024)", tpc);

  /* Residency and waves. */
  double wpc = ceil(tpc / 32);
  double shared = F("launch.shared_bytes") + F("static.shared_bytes");
  double res = floor(g->max_threads_per_sm / (wpc * 32));
  if (res > g->max_ctas_per_sm) res = g->max_ctas_per_sm;
  if (shared > 0) {
    double by_smem = floor(g->smem_per_sm_kb * 1024 / shared);
    if (by_smem < res) res = by_smem;
  }
  if (res < 1) res = 1; /* too much shared memory: the launch would fail; count 1 */
  double sms = g->sms, clock = g->boost_mhz * 1e6; /* Hz */
  double concurrent = sms * res;
  o->resident_ctas = (int)res;
  o->waves = ceil(ctas / concurrent);
  /* Work per SM: the busiest SM runs ceil(ctas/SMs) CTAs. */
  double load = ceil(ctas / sms) / ctas; /* fraction of the launch on the busiest SM */

  /* Compute: thread-level counts over lanes per SM per clock. */
  int kepler = g->cc_major < 5;
  double fp32_lanes = g->fp32_gflops * 1e9 / (2 * sms * clock);
  double fp64_lanes = g->fp64_gflops > 0 ? g->fp64_gflops * 1e9 / (2 * sms * clock) : 1.0 / 32;
  double int_lanes = kepler ? 160 : 64, sfu_lanes = kepler ? 32 : 16, cvt_lanes = 16;
  double issue = kepler ? 6 : 4;
  double pipe[6];
  pipe[0] = (F("class.fp32") + F("class.fp16")) / fp32_lanes;
  pipe[1] = F("class.fp64") / fp64_lanes;
  pipe[2] = (F("class.int_arith") + F("class.logic") + F("class.compare")) / int_lanes;
  pipe[3] = F("class.special") / sfu_lanes;
  pipe[4] = F("class.convert") / cvt_lanes;
  pipe[5] = F("mem.shared_accesses") + F("mem.shared_bank_replays"); /* 1 wavefront/clock */
  double cyc = 0;
  for (int i = 0; i < 6; i++)
    if (pipe[i] > cyc) cyc = pipe[i];
  o->t_compute_us = cyc * load / clock * 1e6;
  o->t_issue_us = F("ctrl.warp_insns") / issue * load / clock * 1e6;

  /* Memory. */
  double sectors = F("mem.global_sectors");
  double bytes = sectors > 0 ? sectors * 32 : F("mem.global_bytes");
  bytes += F("mem.local_bytes");
  double accesses = F("mem.global_accesses");
  double bw = g->mem_bw_gbs * 1e9 * BW_EFF; /* B/s */
  if (accesses > 0 && bytes > 0) {
    double active_warps = fmin(ctas, concurrent) * wpc;
    double per_access = bytes / accesses;
    double little = active_warps * per_access * MEM_MLP / (MEM_LAT_CYC / clock);
    if (little < bw) bw = little;
  }
  /* Reuse through L2: distinct bytes are read once, written bytes go back. */
  double foot = F("mem.footprint_bytes"), dram = bytes, t_l2 = 0;
  double once = foot + F("mem.global_store_bytes");
  if (foot > 0 && once < bytes && foot <= g->l2_mb * 1048576.0) {
    dram = once;
    t_l2 = bytes / (g->mem_bw_gbs * 1e9 * L2_BW);
  }
  o->t_memory_us = fmax(dram / bw, t_l2) * 1e6;

  /* Latency: one warp's dependent chain per wave. */
  double warps = ctas * wpc;
  double chain = F("ctrl.warp_insns") / warps * ALU_LAT_CYC +
                 accesses / warps * MEM_LAT_CYC / MEM_MLP;
  o->t_latency_us = o->waves * chain / clock * 1e6;

  double body = o->t_compute_us;
  o->bound = "compute";
  if (o->t_issue_us > body) { body = o->t_issue_us; o->bound = "issue"; }
  if (o->t_memory_us > body) { body = o->t_memory_us; o->bound = "memory"; }
  if (o->t_latency_us > body) { body = o->t_latency_us; o->bound = "latency"; }
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
