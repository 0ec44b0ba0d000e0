/*
 * analytic_op.c -- the analytic estimate of an operator launch (a library
 * kernel described by the opr.* features, model/opr.h) on a GPU of the
 * table, and the operator family's per-GPU columns (opr.ctas_per_sm,
 * opr.waves, opr.tail, opr.busy_sms).
 *
 * Why its own estimate: an emulated launch tells its instructions and
 * sectors, an operator launch only its work (flops, the minimum bytes)
 * and how the library cut it (tile, split-K, threads).  an_estimate_launch
 * (analytic.c) hands a launch that carries opr.class here, so the base of
 * a forest (an.time_us), `kcast predict --gpu` and kcast_predict_analytic
 * treat both kinds alike.  docs/gpus.md gives the formulas; in short:
 *
 *   residency  CTAs per SM under the CTA and thread limits and, for a
 *              tiled GEMM, the registers and shared memory its tile needs
 *              (accumulators tile_m x tile_n x slices / threads + 32 per
 *              thread, two K-steps of 8 of both panels in shared memory);
 *   compute    GEMM and convolution: the busiest SM's CTAs in rounds of the
 *              resident ones, each CTA 2 tile_m tile_n tile_k flops at
 *              GEMM_EFF of the SM's FP32 peak, less when fewer than W_SAT
 *              warps are resident (Winograd does 2.25x fewer products);
 *              elementwise and row operators: flops and transcendental
 *              operations over the SMs with work;
 *   memory     the minimum bytes over the operator's share (opr.mem_eff)
 *              of the DRAM bandwidth; a GEMM's panels re-read per tile row
 *              and column come from L2 (L2_BW x the DRAM peak) while the
 *              operands fit in it, else from DRAM;
 *   latency    per round of resident CTAs, a tile's prologue and epilogue
 *              (TILE_CYC) for GEMMs and convolutions, else one dependent
 *              memory round trip;
 *   time     = max(host, gap + max(compute, memory) + latency) +
 *              KERNEL_US per further kernel of the operator.
 *
 * host and gap (opr.host_us, opr.gap_us: the operator table's, model/
 * opr.c) are not GPU figures: an operator's time as PyTorch measures it
 * (the NeuSight data) cannot drop below the host's dispatch of that
 * operator (26.5 us for add, 47.5 for layer norm), and its kernel adds its
 * launch and the events' resolution.  On three of that data's machines
 * (A100, P4, T4) the floors agree to 1-2 us, on the V100's and P100's they
 * are 1.2x and 1.6-1.7x those: a property of the host that `kcast
 * calibrate` (a few launches measured there) learns.  A launch whose
 * features predate the columns gets HOST_US, GAP_US and BW_EFF.
 */
#include <math.h>
#include <string.h>

#include "model/model.h"
#include "model/opr.h"
#include "model/rf_int.h"

#define HOST_US 26.0     /* host dispatch floor of one operator */
#define GAP_US 12.0      /* launch and timing of its kernel */
#define KERNEL_US 3.0    /* each further kernel of the operator */
#define BW_EFF 0.85      /* sustained / peak DRAM bandwidth */
#define L2_BW 3.0        /* L2 bandwidth as a multiple of the DRAM peak */
#define GEMM_EFF 0.95    /* SGEMM's share of the FP32 peak at full occupancy */
#define W_SAT 8.0        /* warps per SM that saturate the FP32 pipes */
#define MEM_LAT_CYC 500.0
#define TILE_CYC 3000.0  /* a tile's prologue and epilogue: its first panels
                            from DRAM, its output written */
#define WINOGRAD_GAIN 2.25 /* F(2x2, 3x3): 16 products for 36 */

/* The opr.* and launch.* columns the estimate reads, in opr_feature_names
   order (model/opr.c). */
enum {
  F_GX, F_GY, F_GZ, F_BX, F_BY, F_BZ, F_CTAS, F_THREADS, F_CLASS, F_BATCH, F_M, F_N, F_K,
  F_ELEMENTS, F_FLOPS, F_SFU, F_BYTES, F_INTENSITY, F_KERNELS, F_ALGO, F_FILTER, F_TILE_M,
  F_TILE_N, F_SLICES, F_TILES, F_SPLIT, F_TILE_K, F_FILL, F_VECTOR, F_EPT, F_RPC, F_HOST,
  F_GAP, F_MEFF, F_N_
};

/* Gather the columns: the first occurrence of each name counts. */
static void gather(const char *const *names, const double *vals, size_t n, double *v,
                   unsigned char *have) {
  memset(have, 0, F_N_);
  for (int k = 0; k < F_N_; k++) v[k] = 0;
  for (size_t i = 0; i < n; i++) {
    const char *c = names[i];
    if (!c || (c[0] != 'o' && c[0] != 'l')) continue;
    /* the common case: the names in opr_features' order */
    int k = -1;
    if (i < F_N_ && !strcmp(c, opr_feature_names[i])) {
      k = (int)i;
    } else {
      for (int j = 0; j < F_N_ && k < 0; j++)
        if (!strcmp(c, opr_feature_names[j])) k = j;
    }
    if (k >= 0 && !have[k]) {
      have[k] = 1;
      v[k] = vals[i];
    }
  }
}

double an__op_class(const char *const *names, const double *vals, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (names[i] && names[i][0] == 'o' && !strcmp(names[i], "opr.class")) return vals[i];
  return 0;
}

/* Resident CTAs per SM of an operator launch (>= 1). */
static double resident(const an_gpu *g, const double *v) {
  double tpc = v[F_BX] * (v[F_BY] > 0 ? v[F_BY] : 1) * (v[F_BZ] > 0 ? v[F_BZ] : 1);
  if (!(tpc >= 1)) tpc = v[F_CTAS] > 0 ? v[F_THREADS] / v[F_CTAS] : 1;
  double wpc = ceil(tpc / 32);
  double res = g->max_ctas_per_sm;
  res = fmin(res, floor(g->max_threads_per_sm / (wpc * 32)));
  double tm = v[F_TILE_M], tn = v[F_TILE_N], sl = v[F_SLICES] > 0 ? v[F_SLICES] : 1;
  if (tm > 0 && tn > 0) {
    double regs = fmin(g->max_regs_per_thread, ceil(tm * tn * sl / tpc) + 32);
    double per_warp = ceil(regs * 32 / 256) * 256;
    res = fmin(res, floor(g->regs_per_sm / (per_warp * wpc)));
    double smem = (tm + tn) * 8 * 4 * 2 * sl, unit = g->cc_major >= 8 ? 128 : 256;
    double per_cta = ceil((smem + g->smem_reserved_b) / unit) * unit;
    res = fmin(res, floor(g->smem_per_sm_kb * 1024 / per_cta));
  }
  return res >= 1 ? res : 1;
}

int an__estimate_op(const an_gpu *g, const char *const *names, const double *vals, size_t n,
                    an_estimate *o) {
  double v[F_N_];
  unsigned char have[F_N_];
  gather(names, vals, n, v, have);
  int cls = (int)v[F_CLASS];
  if (cls < OPR_GEMM || cls > OPR_NORM || v[F_CLASS] != cls)
    return rf__err("opr.class %g is not an operator class (1-5)", v[F_CLASS]);
  double ctas = v[F_CTAS];
  if (!(ctas >= 1) || !(v[F_BX] >= 1))
    return rf__err("an operator launch needs launch.ctas and launch.block_x (positive)");
  for (int k = 0; k < F_N_; k++)
    if (!(v[k] >= 0)) return rf__err("%s is negative", opr_feature_names[k]);
  memset(o, 0, sizeof *o);
  double sms = g->sms, clock = g->boost_mhz * 1e6;
  double tpc = v[F_BX] * (have[F_BY] && v[F_BY] > 0 ? v[F_BY] : 1) *
               (have[F_BZ] && v[F_BZ] > 0 ? v[F_BZ] : 1);
  double wpc = ceil(tpc / 32), res = resident(g, v);
  double per_sm = ceil(ctas / sms), c = fmin(res, per_sm), rounds = ceil(per_sm / c);
  /* the operator's software constants (model/opr.c), the old figures for
     launches whose features predate them */
  double host = v[F_HOST] > 0 ? v[F_HOST] : HOST_US, gap = v[F_GAP] > 0 ? v[F_GAP] : GAP_US;
  double meff = v[F_MEFF] > 0 ? v[F_MEFF] : BW_EFF;
  double bw = g->mem_bw_gbs * 1e9 * meff, l2bw = g->mem_bw_gbs * 1e9 * L2_BW;
  double sm_rate = g->fp32_gflops * 1e9 / sms; /* flop/s of one SM */
  double t_comp = 0, t_mem = 0, t_l2 = 0, t_lat = 0, bytes = v[F_BYTES];
  if (cls == OPR_GEMM || cls == OPR_CONV) {
    double flops = v[F_FLOPS];
    if (cls == OPR_CONV && v[F_ALGO] == OPR_ALGO_WINOGRAD && v[F_FILTER] == 3)
      flops /= WINOGRAD_GAIN;
    /* one CTA's work: its tile over its share of the reduction, the
       padding of edge tiles included; without a tile, an even share */
    double cta = flops / ctas;
    if (v[F_TILE_M] > 0 && v[F_TILE_N] > 0 && v[F_TILE_K] > 0)
      cta = 2 * v[F_TILE_M] * v[F_TILE_N] * v[F_TILE_K] * (flops / fmax(v[F_FLOPS], 1));
    double e = fmin(1.0, c * wpc / W_SAT);
    t_comp = rounds * c * cta / (sm_rate * GEMM_EFF * e);
    /* operands: A (batch x m x k) re-read for every column of tiles, B
       for every row, both through L2 while they fit in it */
    double a = 4 * v[F_BATCH] * v[F_M] * v[F_K], cbytes = 4 * v[F_BATCH] * v[F_M] * v[F_N];
    double b = fmax(bytes - a - cbytes, 0);
    double cols = v[F_TILE_N] > 0 ? ceil(v[F_N] / v[F_TILE_N]) : 1;
    double rows = v[F_TILE_M] > 0 ? ceil(v[F_M] / v[F_TILE_M]) : 1;
    double split = v[F_SPLIT] > 1 ? v[F_SPLIT] : 1;
    double traffic = a * cols + b * rows + cbytes * split;
    double dram = (a + b) <= g->l2_mb * 1048576.0 ? bytes + cbytes * (split - 1) * 2 : traffic;
    t_mem = dram / bw;
    t_l2 = traffic / l2bw;
  } else {
    /* a block-per-row softmax reads its row twice more (maximum, sum),
       layer norm once more (statistics, then the normalisation) */
    double passes = cls == OPR_SOFTMAX && v[F_RPC] <= 1 ? 3 : cls == OPR_NORM ? 2 : 1;
    t_mem = fmax(bytes / bw, bytes * passes / l2bw);
    double busy = fmin(1.0, ctas / sms);
    double sfu_rate = sms * 16 * clock;
    t_comp = (v[F_FLOPS] / (g->fp32_gflops * 1e9) + v[F_SFU] / sfu_rate) / busy;
  }
  /* one dependent round trip to memory per wave of resident CTAs */
  t_lat = rounds * (cls == OPR_GEMM || cls == OPR_CONV ? TILE_CYC : MEM_LAT_CYC) / clock;
  t_comp *= 1e6;
  t_mem *= 1e6;
  t_l2 *= 1e6;
  t_lat *= 1e6;
  /* the power limit (analytic.c): the FP32 pipes' work of a low-power card,
     and the L2's, which runs on the same clock, slow as the clock drops */
  double slow = an__power_slowdown(g, t_comp / fmax(fmax(t_comp, fmax(t_mem, t_l2)), 1e-12));
  t_comp = an__power_limited_us(t_comp, slow);
  t_l2 = an__power_limited_us(t_l2, slow);
  t_mem = fmax(t_mem, t_l2);
  double body = fmax(t_comp, t_mem) + t_lat;
  double extra = (v[F_KERNELS] > 1 ? v[F_KERNELS] - 1 : 0) * KERNEL_US;
  double gpu = gap + body + extra;
  o->time_us = fmax(host, gpu);
  /* bound by the host, the whole time is its overhead (the kernel runs
     while the host dispatches) */
  o->t_overhead_us = gpu < host ? o->time_us : gap + extra;
  o->t_compute_us = t_comp;
  o->t_issue_us = 0;
  o->t_memory_us = t_mem;
  o->t_latency_us = t_lat;
  o->waves = ceil(ctas / (sms * res));
  o->resident_ctas = (int)res;
  o->bound = gpu < host ? "host" : t_comp >= t_mem ? "compute" : "memory";
  o->time_lo_us = o->time_us * AN_TIME_BAND_LO;
  o->time_hi_us = o->time_us * AN_TIME_BAND_HI;
  /* power as for emulated launches (analytic.c): the busy share of the
     time, weighted by what binds */
  double u = 0;
  if (body > 0) {
    double r_comp = t_comp / body, r_mem = t_mem / body;
    u = fmin(1.0, 0.25 + 0.5 * r_comp + 0.35 * r_mem);
    u *= fmin(1.0, ctas / sms);
    u *= body / o->time_us;
  }
  o->utilisation = u;
  double idle = g->idle_w, span = g->tdp_w - g->idle_w;
  o->power_w = idle + span * u;
  o->power_lo_w = fmax(idle, o->power_w * AN_POWER_BAND_LO);
  o->power_hi_w = fmin(g->tdp_w, o->power_w * AN_POWER_BAND_HI);
  o->energy_mj = o->time_us * o->power_w / 1000;
  return 0;
}

const char *const md_operator_names[MD_OPR_N] = {"opr.ctas_per_sm", "opr.waves", "opr.tail",
                                                 "opr.busy_sms"};

int md_operator(const char *gpu, const char *const *names, const double *vals, size_t n,
                double out[MD_OPR_N]) {
  const an_gpu *g = gpu ? an_gpu_find(gpu) : NULL;
  if (!g) return rf__err("the operator features need a GPU of 'kcast gpus', not '%s'", gpu ? gpu : "");
  if (n && (!names || !vals)) return rf__err("md_operator: NULL argument");
  double v[F_N_];
  unsigned char have[F_N_];
  gather(names, vals, n, v, have);
  memset(out, 0, MD_OPR_N * sizeof *out);
  if (!have[F_CLASS]) return 0; /* not an operator launch: nothing to say */
  if (!(v[F_CTAS] >= 1) || !(v[F_BX] >= 1))
    return rf__err("the operator features need launch.ctas and launch.block_x (positive)");
  double res = resident(g, v);
  /* waves of the output's tiles when the launch cuts it into tiles (the
     CTAs of a split-K launch are its tiles times the split), else of CTAs */
  double waves = v[F_CTAS] / (g->sms * res);
  out[0] = res;
  out[1] = waves;
  out[2] = ceil(waves) - waves;
  out[3] = fmin(1.0, v[F_CTAS] / g->sms);
  return 0;
}
