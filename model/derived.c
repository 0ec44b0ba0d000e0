/*
 * derived.c -- features computed from other features of the same launch
 * (and, for some families, the descriptor of the GPU it runs on):
 *
 *   mg.*    GPU Mangrove's twelve engineered features (Braun et al.)
 *   work.*  hardware-independent ratios: work per thread, warp and CTA,
 *           coalescing, bank conflicts, the read-only path, reuse, mix
 *   occ.*   residency on the target GPU: registers (ptxas.* columns for
 *           the target's architecture), resident CTAs and warps, occupancy,
 *           the limiting resource, waves and the last wave's idle share
 *   gpu.*   the target GPU's descriptor (the GPU table, docs/gpus.md)
 *   an.*    the analytic estimate on the target GPU and its terms
 *
 * Why here and per row: a forest trained on derived columns must be able
 * to predict from the raw feature set a scheduler hands to libkcast, so
 * training (cli/cmd_train.c, row by row) and prediction (api/ and
 * cli/cmd_predict.c, one launch or CSV row at a time) call the same
 * function on one launch's names and values.  The target GPU is an argument:
 * a model trained on several GPUs (a row's GPU from its dataset or CSV
 * column) predicts for any GPU of the table.  docs/features.md defines each
 * column.
 *
 * An absent count feature counts 0 (as in the dataset store); a ratio
 * whose denominator is 0 is 0.  mg.* follow Braun et al.: thread-level sums
 * of the op.* counts, split by memory space for the byte volumes (bytes per
 * thread access from the op key's type and vector width), and the class.*
 * sums for the operation groups.  occ.* and an.* need the launch.* columns.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/an_int.h"
#include "model/model.h"
#include "model/rf_int.h"

const char *const md_mangrove_names[MD_MANGROVE_N] = {
    "mg.threads_per_cta", "mg.ctas",        "mg.instructions", "mg.special",
    "mg.logic",           "mg.control",     "mg.sync",         "mg.arith",
    "mg.global_bytes",    "mg.param_bytes", "mg.shared_bytes", "mg.arith_intensity"};

const char *const md_analytic_names[MD_ANALYTIC_N] = {
    "an.time_us",   "an.power_w",  "an.energy_mj", "an.compute_us",
    "an.issue_us",  "an.memory_us", "an.latency_us"};

const char *const md_work_names[MD_WORK_N] = {
    "work.threads_per_cta",     "work.warps_per_cta",        "work.shared_bytes_per_cta",
    "work.insns_per_thread",    "work.warp_insns_per_warp",  "work.warp_insns_per_cta",
    "work.sectors_per_request", "work.bytes_per_sector",     "work.replays_per_shared_access",
    "work.ldg_fraction",        "work.reuse",                "work.flops_per_byte",
    "work.shared_per_insn",     "work.global_per_insn",      "work.const_per_insn",
    "work.divergence"};

const char *const md_occ_names[MD_OCC_N] = {
    "occ.regs_per_thread", "occ.spill_bytes", "occ.ctas_per_sm", "occ.warps_per_sm",
    "occ.occupancy",       "occ.limiter",     "occ.waves",       "occ.tail",
    "occ.busy_sms"};

const char *const md_gpu_names[MD_GPU_N] = {
    "gpu.cc",          "gpu.sms",            "gpu.clock_mhz",    "gpu.fp32_gflops",
    "gpu.fp64_gflops", "gpu.mem_bw_gbs",     "gpu.l2_mb",        "gpu.smem_per_sm_kb",
    "gpu.max_threads_per_sm", "gpu.tdp_w"};

const char *const md_cache_names[MD_CACHE_N] = {
    "cache.l1_hit_rate",     "cache.l2_hit_rate", "cache.dram_read_bytes", "cache.dram_write_bytes",
    "cache.l2_request_bytes", "cache.l1_bytes",   "cache.modelled"};

/* The families, in md_cache order; word = the --features name. */
static const struct {
  const char *word, *prefix;
  const char *const *names;
  size_t n;
  int needs_gpu;
} fams[MD_FAM_N] = {
    {"mangrove", "mg.", md_mangrove_names, MD_MANGROVE_N, 0},
    {"analytic", "an.", md_analytic_names, MD_ANALYTIC_N, 1},
    {"work", "work.", md_work_names, MD_WORK_N, 0},
    {"occ", "occ.", md_occ_names, MD_OCC_N, 1},
    {"gpu", "gpu.", md_gpu_names, MD_GPU_N, 1},
    {"cache", "cache.", md_cache_names, MD_CACHE_N, 1},
    {"opr", "opr.", md_operator_names, MD_OPR_N, 1},
};

enum { TPC, CTAS, INSNS, SPECIAL, LOGIC, CONTROL, SYNC, ARITH, GBYTES, PBYTES, SBYTES, AI };

/* Bytes one thread moves with memory op key k ("ld.global.v4.f32" -> 16):
   the last type modifier's width times the vector count; 4 when untyped. */
static double access_bytes(const char *k) {
  double bytes = 4, vec = 1;
  char tok[32];
  for (const char *s = strchr(k, '.'); s; s = strchr(s + 1, '.')) {
    size_t n = strcspn(s + 1, ".");
    if (n == 0 || n >= sizeof tok) continue;
    memcpy(tok, s + 1, n);
    tok[n] = 0;
    if (tok[0] == 'v' && tok[1] >= '2' && tok[1] <= '8' && !tok[2]) vec = tok[1] - '0';
    const char *d = tok + (tok[0] == 'b' && tok[1] == 'f' ? 2 : 1);
    if (strchr("sufb", tok[0]) && *d >= '1' && *d <= '9') {
      char *e;
      long bits = strtol(d, &e, 10);
      if (bits > 0 && (!*e || !strcmp(e, "x2"))) bytes = (double)bits / 8 * (*e ? 2 : 1);
    }
  }
  return bytes * vec;
}

/* Memory space of op key k when it is a load/store/atomic: 'g', 's', 'p'
   (global, shared, param) or 0. */
static int mem_space(const char *k) {
  static const char *const mn[] = {"ld.", "ldu.", "st.", "atom.", "red."};
  int is_mem = 0;
  for (size_t i = 0; i < sizeof mn / sizeof *mn; i++) is_mem |= !strncmp(k, mn[i], strlen(mn[i]));
  if (!is_mem) return 0;
  if (strstr(k, ".global")) return 'g';
  if (strstr(k, ".shared")) return 's';
  if (strstr(k, ".param")) return 'p';
  return 0;
}

int md_mangrove(const char *const *names, const double *vals, size_t n, double out[MD_MANGROVE_N]) {
  if (n && (!names || !vals)) return rf__err("md_mangrove: NULL argument");
  memset(out, 0, MD_MANGROVE_N * sizeof *out);
  double bx = -1, by = 1, bz = 1;
  int have_ctas = 0;
  for (size_t j = 0; j < n; j++) {
    const char *c = names[j];
    double v = vals[j];
    if (!c) continue;
    if (!strcmp(c, "launch.block_x")) bx = v;
    else if (!strcmp(c, "launch.block_y")) by = v;
    else if (!strcmp(c, "launch.block_z")) bz = v;
    else if (!strcmp(c, "launch.ctas")) { out[CTAS] = v; have_ctas = 1; }
    else if (!strcmp(c, "class.special")) out[SPECIAL] += v;
    else if (!strcmp(c, "class.logic")) out[LOGIC] += v;
    else if (!strcmp(c, "class.control")) out[CONTROL] += v;
    else if (!strcmp(c, "class.sync")) out[SYNC] += v;
    else if (!strcmp(c, "class.int_arith") || !strcmp(c, "class.fp16") ||
             !strcmp(c, "class.fp32") || !strcmp(c, "class.fp64"))
      out[ARITH] += v;
    else if (!strncmp(c, "op.", 3)) {
      out[INSNS] += v;
      int sp = mem_space(c + 3);
      if (sp) out[sp == 'g' ? GBYTES : sp == 's' ? SBYTES : PBYTES] += v * access_bytes(c + 3);
    }
  }
  if (bx < 0 || !have_ctas)
    return rf__err("GPU Mangrove's features need %s", bx >= 0 ? "launch.ctas"
                                                      : have_ctas ? "launch.block_x"
                                                                  : "launch.block_x and launch.ctas");
  out[TPC] = bx * by * bz;
  out[AI] = out[GBYTES] > 0 ? out[ARITH] / out[GBYTES] : 0;
  return 0;
}

/* a / b, 0 when b is 0 (a ratio of counts the launch does not have). */
static double ratio(double a, double b) { return b > 0 ? a / b : 0; }

int md_work(const char *const *names, const double *vals, size_t n, double out[MD_WORK_N]) {
  if (n && (!names || !vals)) return rf__err("md_work: NULL argument");
  memset(out, 0, MD_WORK_N * sizeof *out);
  double bx = -1, by = 1, bz = 1, ctas = -1, threads = 0, shared = 0, insns = 0, warp_insns = 0;
  double sectors = 0, accesses = 0, gbytes = 0, replays = 0, saccesses = 0, nc = 0;
  double ld_global = 0, st_global = 0, ld_shared = 0, st_shared = 0, ld_const = 0, foot = 0;
  double flops = 0, branches = 0, divergent = 0, lanes = 0, class_sum = 0;
  /* one prefix test a name, then its suffix: a chain of strcmp over every
     name of a set was 13 % of an operator prediction (perf, kcast_predict
     _gpu with the operator model, 34 names a set) */
  for (size_t j = 0; j < n; j++) {
    const char *c = names[j];
    double v = vals[j];
    if (!c) continue;
#define IS(s) (!strcmp(c, s))
    switch (c[0]) {
      case 'l':
        if (strncmp(c, "launch.", 7)) break;
        c += 7;
        if (IS("block_x")) bx = v;
        else if (IS("block_y")) by = v;
        else if (IS("block_z")) bz = v;
        else if (IS("ctas")) ctas = v;
        else if (IS("threads")) threads = v;
        else if (IS("shared_bytes")) shared += v;
        break;
      case 's':
        if (IS("static.shared_bytes")) shared += v;
        break;
      case 'c':
        if (!strncmp(c, "ctrl.", 5)) {
          c += 5;
          if (IS("warp_insns")) warp_insns = v;
          else if (IS("branches")) branches = v;
          else if (IS("divergent_branches")) divergent = v;
          else if (IS("active_lane_ratio")) lanes = v;
        } else if (!strncmp(c, "class.", 6)) {
          class_sum += v;
          c += 6;
          if (IS("ld_global")) ld_global = v;
          else if (IS("st_global")) st_global = v;
          else if (IS("ld_shared")) ld_shared = v;
          else if (IS("st_shared")) st_shared = v;
          else if (IS("ld_const")) ld_const = v;
          else if (IS("fp16") || IS("fp32") || IS("fp64")) flops += v;
        }
        break;
      case 'm':
        if (strncmp(c, "mem.", 4)) break;
        c += 4;
        if (IS("global_sectors")) sectors = v;
        else if (IS("global_accesses")) accesses = v;
        else if (IS("global_bytes")) gbytes = v;
        else if (IS("shared_bank_replays")) replays = v;
        else if (IS("shared_accesses")) saccesses = v;
        else if (IS("footprint_bytes")) foot = v;
        break;
      case 'o':
        if (c[1] == 'p' && c[2] == '.') {
          insns += v;
          if (!strncmp(c, "op.ld.global.nc.", 16) || !strncmp(c, "op.ldu.global.", 14)) nc += v;
        }
        break;
    }
#undef IS
  }
  if (bx < 0 || !(ctas > 0)) return rf__err("the work features need launch.block_x and launch.ctas");
  if (!(insns > 0)) insns = class_sum; /* a launch given by classes only */
  double tpc = bx * by * bz, wpc = ceil(tpc / 32);
  if (!(threads > 0)) threads = ctas * tpc;
  if (!(warp_insns > 0) && insns > 0) warp_insns = insns / 32 / (lanes > 0 ? lanes : 1);
  double warps = ctas * wpc;
  out[0] = tpc;
  out[1] = wpc;
  out[2] = shared;
  out[3] = ratio(insns, threads);
  out[4] = ratio(warp_insns, warps);
  out[5] = ratio(warp_insns, ctas);
  out[6] = ratio(sectors, accesses);
  out[7] = ratio(gbytes, sectors * 32);
  out[8] = ratio(replays, saccesses);
  out[9] = ratio(nc, ld_global);
  out[10] = ratio(sectors * 32, foot);
  out[11] = ratio(flops, sectors > 0 ? sectors * 32 : gbytes);
  out[12] = ratio(ld_shared + st_shared, insns);
  out[13] = ratio(ld_global + st_global, insns);
  out[14] = ratio(ld_const, insns);
  out[15] = ratio(divergent, branches);
  return 0;
}

/* The table row of gpu, or NULL after naming it in the error (what: the
   family that needs it). */
static const an_gpu *need_gpu(const char *gpu, const char *what) {
  const an_gpu *g = gpu ? an_gpu_find(gpu) : NULL;
  if (!g) rf__err("the %s features need a GPU of 'kcast gpus', not '%s'", what, gpu ? gpu : "");
  return g;
}

int md_gpu(const char *gpu, double out[MD_GPU_N]) {
  const an_gpu *g = need_gpu(gpu, "GPU");
  if (!g) return -1;
  out[0] = g->cc_major + g->cc_minor / 10.0;
  out[1] = g->sms;
  out[2] = g->boost_mhz;
  out[3] = g->fp32_gflops;
  out[4] = g->fp64_gflops;
  out[5] = g->mem_bw_gbs;
  out[6] = g->l2_mb;
  out[7] = g->smem_per_sm_kb;
  out[8] = g->max_threads_per_sm;
  out[9] = g->tdp_w;
  return 0;
}

int md_occupancy(const char *gpu, const char *const *names, const double *vals, size_t n,
                 double out[MD_OCC_N]) {
  const an_gpu *g = need_gpu(gpu, "occupancy");
  if (!g) return -1;
  an_occupancy o;
  if (an_occupancy_of(g, names, vals, n, &o)) return -1;
  out[0] = o.regs;
  out[1] = o.spill_bytes;
  out[2] = o.ctas_per_sm;
  out[3] = o.warps_per_sm;
  out[4] = o.occupancy;
  out[5] = o.limiter;
  out[6] = o.waves;
  out[7] = o.tail;
  out[8] = o.busy_sms;
  return 0;
}

int md_memory(const char *gpu, const char *const *names, const double *vals, size_t n,
              double out[MD_CACHE_N]) {
  const an_gpu *g = need_gpu(gpu, "cache");
  if (!g) return -1;
  an_in in;
  an__gather(names, vals, n, g->cc_major * 10 + g->cc_minor, &in);
  an_occupancy o;
  an_mem m;
  if (an__occupancy(g, &in, &o) || an__mem(g, &in, &o, &m)) return -1;
  out[0] = m.load_sectors > 0 ? m.l1_hits / m.load_sectors : 0;
  out[1] = m.l2_requests > 0 ? m.l2_hits / m.l2_requests : 0;
  out[2] = m.dram_read;
  out[3] = m.dram_write;
  out[4] = m.l2_requests * 32;
  out[5] = m.l1_bytes;
  out[6] = m.modelled;
  return 0;
}

int md_analytic(const char *gpu, const char *const *names, const double *vals, size_t n,
                double out[MD_ANALYTIC_N]) {
  const an_gpu *g = need_gpu(gpu, "analytic");
  if (!g) return -1;
  an_estimate e;
  if (an_estimate_launch(g, names, vals, n, &e)) return -1;
  out[0] = e.time_us;
  out[1] = e.power_w;
  out[2] = e.energy_mj;
  out[3] = e.t_compute_us;
  out[4] = e.t_issue_us;
  out[5] = e.t_memory_us;
  out[6] = e.t_latency_us;
  return 0;
}

int md_family_of(const char *name) {
  if (!name) return -1;
  for (int f = 0; f < MD_FAM_N; f++) {
    size_t pl = strlen(fams[f].prefix);
    if (strncmp(name, fams[f].prefix, pl)) continue;
    for (size_t k = 0; k < fams[f].n; k++)
      if (!strcmp(fams[f].names[k], name)) return f;
    return -1;
  }
  return -1;
}

int md_family(const char *word, size_t len, const char *const **names, size_t *n) {
  for (int f = 0; f < MD_FAM_N; f++)
    if (strlen(fams[f].word) == len && !strncmp(word, fams[f].word, len)) {
      if (names) *names = fams[f].names;
      if (n) *n = fams[f].n;
      return f;
    }
  return -1;
}

const char *md_family_word(int fam) { return fam >= 0 && fam < MD_FAM_N ? fams[fam].word : NULL; }

int md_family_needs_gpu(int fam) { return fam >= 0 && fam < MD_FAM_N && fams[fam].needs_gpu; }

int md_compute(int fam, const char *gpu, const char *const *names, const double *vals, size_t n,
               double *out) {
  switch (fam) {
    case MD_FAM_MANGROVE: return md_mangrove(names, vals, n, out);
    case MD_FAM_ANALYTIC: return md_analytic(gpu, names, vals, n, out);
    case MD_FAM_WORK: return md_work(names, vals, n, out);
    case MD_FAM_OCC: return md_occupancy(gpu, names, vals, n, out);
    case MD_FAM_GPU: return md_gpu(gpu, out);
    case MD_FAM_CACHE: return md_memory(gpu, names, vals, n, out);
    case MD_FAM_OPR: return md_operator(gpu, names, vals, n, out);
  }
  return rf__err("md_compute: unknown family %d", fam);
}

int md_locate(const char *name, int *fam, size_t *k) {
  int f = md_family_of(name);
  if (f < 0) return 0;
  size_t i = 0;
  while (strcmp(fams[f].names[i], name)) i++;
  *fam = f;
  *k = i;
  return 1;
}

int md_value_at(md_cache *c, int fam, size_t k, const char *gpu, const char *const *names,
                const double *vals, size_t n, double *v) {
  if (!c->have[fam]) {
    if (md_compute(fam, gpu, names, vals, n, c->v[fam])) return -1;
    c->have[fam] = 1;
  }
  *v = c->v[fam][k];
  return 1;
}

int md_value(md_cache *c, const char *name, const char *gpu, const char *const *names,
             const double *vals, size_t n, double *v) {
  int f;
  size_t k;
  if (!md_locate(name, &f, &k)) return 0;
  return md_value_at(c, f, k, gpu, names, vals, n, v);
}
