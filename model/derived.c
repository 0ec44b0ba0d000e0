/*
 * derived.c -- features computed from other features of the same launch:
 * GPU Mangrove's twelve engineered features (mg.*) and the analytic
 * estimate on the model's GPU (an.*).
 *
 * Why here and per row: a forest trained on derived columns must be able
 * to predict from the raw feature set a scheduler hands to libkcast, so
 * training (cli/cmd_train.c, column by column) and prediction (api/ and
 * cli/cmd_predict.c, one launch or CSV row at a time) call the same
 * function on one launch's names and values.  docs/features.md defines
 * each column.
 *
 * mg.* follow Braun et al.: thread-level sums of the op.* counts, split by
 * memory space for the byte volumes (bytes per thread access from the op
 * key's type and vector width), and the class.* sums for the operation
 * groups.  an.* are an_estimate_launch's time and power; they need the
 * launch.* columns (absent ones are an error there).
 */
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "model/rf_int.h"

const char *const md_mangrove_names[MD_MANGROVE_N] = {
    "mg.threads_per_cta", "mg.ctas",        "mg.instructions", "mg.special",
    "mg.logic",           "mg.control",     "mg.sync",         "mg.arith",
    "mg.global_bytes",    "mg.param_bytes", "mg.shared_bytes", "mg.arith_intensity"};

const char *const md_analytic_names[MD_ANALYTIC_N] = {"an.time_us", "an.power_w"};

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

int md_analytic(const char *gpu, const char *const *names, const double *vals, size_t n,
                double out[MD_ANALYTIC_N]) {
  const an_gpu *g = gpu ? an_gpu_find(gpu) : NULL;
  if (!g) return rf__err("the analytic features need a GPU of 'kcast gpus', not '%s'", gpu ? gpu : "");
  an_estimate e;
  if (an_estimate_launch(g, names, vals, n, &e)) return -1;
  out[0] = e.time_us;
  out[1] = e.power_w;
  return 0;
}

int md_value(md_cache *c, const char *name, const char *gpu, const char *const *names,
             const double *vals, size_t n, double *v) {
  int is_mg = !strncmp(name, "mg.", 3), is_an = !strncmp(name, "an.", 3);
  if (!is_mg && !is_an) return 0;
  const char *const *tab = is_mg ? md_mangrove_names : md_analytic_names;
  size_t nt = is_mg ? MD_MANGROVE_N : MD_ANALYTIC_N, k = 0;
  while (k < nt && strcmp(tab[k], name)) k++;
  if (k == nt) return 0;
  if (is_mg && !c->have_mg) {
    if (md_mangrove(names, vals, n, c->mg)) return -1;
    c->have_mg = 1;
  }
  if (is_an && !c->have_an) {
    if (md_analytic(gpu, names, vals, n, c->an)) return -1;
    c->have_an = 1;
  }
  *v = is_mg ? c->mg[k] : c->an[k];
  return 1;
}
