/*
 * cmd_calibrate.c -- `kcast calibrate MODEL DB --gpu G -o OUT`: a
 * cross-GPU model adapted to a GPU it was not trained on, from the
 * launches of DB measured there (model/rf_adapt.c does the work: the fit
 * of the host and device factors; this file reads, calls and prints).
 */
#include "cli/cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "datasets/ds.h"
#include "datasets/ds_train.h"
#include "model/model.h"

const char cmd_calibrate_usage[] =
    "usage: kcast calibrate MODEL DB --gpu G -o OUT [--shots K] [--seed S] [--app LIST]\n"
    "\n"
    "Adapt a model trained on other GPUs to GPU G from the launches DB measured on\n"
    "G (a quick subset of the suite run there once): the model's predictions for\n"
    "G are fitted to them with two factors, one on the part of each launch's time\n"
    "that is overhead (the host's dispatch and the launch) and one on the rest,\n"
    "for all the launches and for those of each operator class (opr.class) on its\n"
    "own (docs/accuracy.md, 'A new GPU from a few measurements'), written with the\n"
    "model to OUT (model file version 5; 6 for a model with a base).  `kcast\n"
    "predict --model OUT --gpu G` and kcast_predict_gpu() then answer through\n"
    "them; other GPUs are unchanged.\n"
    "Calibrating OUT again for G replaces G's factors.\n"
    "\n"
    "  --gpu G       the GPU (a name of 'kcast gpus'); DB's measurements of it\n"
    "                are found by its table row, whatever name they carry\n"
    "  -o OUT        the adapted model (written whole or not at all)\n"
    "  --shots K     use K launches of each operator class, drawn with --seed\n"
    "                (default: all)\n"
    "  --seed S      the draw's seed (1)\n"
    "  --app LIST    only the launches of these apps (comma list)\n"
    "  --gpus FILE   GPUs to add to or replace in the GPU table\n"
    "\n"
    "Exit status: 0 ok, 1 bad model, dataset or GPU, 2 bad command line.\n";

int cmd_calibrate(int argc, char **argv) {
  const char *gpu = NULL, *out = NULL, *apps = NULL;
  unsigned long shots = 0, seed = 1;
  enum { K_GPU = CLI_OPT_OWN, K_SHOTS, K_SEED, K_APP };
  static const struct option own[] = {
    {"gpu", required_argument, NULL, K_GPU},
    {"output", required_argument, NULL, 'o'},
    {"shots", required_argument, NULL, K_SHOTS},
    {"seed", required_argument, NULL, K_SEED},
    {"app", required_argument, NULL, K_APP},
    {NULL, 0, NULL, 0},
  };
  cli_opts op;
  cli_opts_init(&op, "calibrate", argc, argv, "o:", 0);
  cli_opts_add(&op, own);
  cli_opts_add(&op, cli_gpus_longopts);
  for (int c; (c = cli_opts_next(&op)) != CLI_OPT_END;) {
    if (c == CLI_OPT_ERR) return op.status;
    switch (c) {
      case K_GPU: gpu = op.arg; break;
      case 'o': out = op.arg; break;
      case K_APP: apps = op.arg; break;
      case K_SHOTS:
        if (cli_parse_uint(op.arg, 100000000, &shots) || !shots)
          return cli_usage_error("calibrate", "--shots '%s': give a count >= 1", op.arg);
        break;
      case K_SEED:
        if (cli_parse_uint(op.arg, ~0UL, &seed))
          return cli_usage_error("calibrate", "--seed '%s': give a whole number", op.arg);
        break;
    }
  }
  if (CLI_NOPERANDS(&op) != 2)
    return cli_usage_error("calibrate", "give MODEL and DB (%d operand%s given)",
                           CLI_NOPERANDS(&op), CLI_NOPERANDS(&op) == 1 ? "" : "s");
  if (!gpu) return cli_usage_error("calibrate", "--gpu G is required");
  if (!out) return cli_usage_error("calibrate", "-o OUT is required");
  const char *mpath = CLI_OPERANDS(&op)[0], *dpath = CLI_OPERANDS(&op)[1];
  const an_gpu *g = an_gpu_find(gpu);
  if (!g) {
    cli_error("unknown GPU '%s' (see 'kcast gpus'; --gpus FILE adds GPUs)", gpu);
    return KCAST_EXIT_USER;
  }
  rf_forest *f = NULL;
  if (cli_model_load(mpath, &f)) {
    cli_error("%s", rf_last_error());
    return KCAST_EXIT_USER;
  }
  int rc = KCAST_EXIT_USER;
  ds_db *db = NULL;
  ds_matrix m;
  memset(&m, 0, sizeof m);
  double *x = NULL, *y = NULL;
  const rf_info *info = rf_get_info(f);
  const char *tg = info->target;
  const char *metric = !strcmp(tg, "time") ? "time_ns" : !strcmp(tg, "power") ? "power_w"
                       : !strcmp(tg, "energy") ? "energy_j" : NULL;
  if (!metric) {
    cli_error("%s: the model predicts '%s', not time, power or energy of a dataset", mpath, tg);
    goto out;
  }
  if (an_gpu_in_list(info->gpu, g->name)) {
    cli_error("%s was trained on %s: calibrate adapts a model to a GPU it has not seen", mpath,
              g->name);
    goto out;
  }
  char err[512], key[128];
  if (ds_open(dpath, DS_READONLY, &db, err, sizeof err)) {
    cli_error("%s", err);
    goto out;
  }
  char kerr[1024];
  int k = ds_train_gpu_key(db, dpath, metric, g->name, key, sizeof key, kerr, sizeof kerr);
  if (k < 0) {
    cli_error("%s", kerr);
    goto out;
  }
  if (k) {
    cli_error("%s: no launch has %s measured on %s", dpath, metric, g->name);
    goto out;
  }
  ds_query q;
  ds_query_init(&q);
  q.gpu = key;
  q.metric = metric;
  if (apps && !strchr(apps, ',')) q.app = apps;
  if (ds_query_matrix(db, &q, &m)) {
    cli_error("%s", ds_errmsg(db));
    goto out;
  }
  /* the rows used: the apps asked for, then K of them drawn with the seed
     (a partial Fisher-Yates shuffle of their indices) */
  size_t n = 0, *idx = malloc((m.rows + 1) * sizeof *idx);
  if (!idx) { cli_error("out of memory"); goto out; }
  for (size_t r = 0; r < m.rows; r++) {
    int want = !apps;
    for (const char *t = apps; t && *t && !want;) {
      size_t l = strcspn(t, ",");
      want = m.app[r] && strlen(m.app[r]) == l && !strncmp(m.app[r], t, l);
      t += l;
      if (*t) t++;
    }
    if (want) idx[n++] = r;
  }
  if (!n) {
    free(idx);
    cli_error("%s: no launch of %s has %s measured on %s", dpath, apps ? apps : "any app", metric,
              g->name);
    goto out;
  }
  if (shots) {
    /* a seeded shuffle, then the first K launches of each class (an
       operator launch's opr.class; one class for other launches) */
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 0x53484f54ull;
    for (size_t t = 0; t + 1 < n; t++) {
      s ^= s >> 12, s ^= s << 25, s ^= s >> 27; /* xorshift64* */
      size_t j = t + (size_t)((s * 0x2545F4914F6CDD1Dull) % (n - t));
      size_t tmp = idx[t];
      idx[t] = idx[j];
      idx[j] = tmp;
    }
    long cc = -1;
    for (size_t j = 0; j < m.cols; j++)
      if (!strcmp(m.colnames[j], "opr.class")) cc = (long)j;
    size_t taken[RF_ADAPT_CLASSES] = {0}, kept = 0;
    for (size_t t = 0; t < n; t++) {
      int cl = cc >= 0 ? rf_adapt_class(m.x[idx[t] * m.cols + (size_t)cc]) : 0;
      if (taken[cl] < shots) taken[cl]++, idx[kept++] = idx[t];
    }
    n = kept;
  }
  x = malloc(n * (m.cols ? m.cols : 1) * sizeof *x);
  y = malloc(n * sizeof *y);
  if (!x || !y) {
    free(idx);
    cli_error("out of memory");
    goto out;
  }
  for (size_t i = 0; i < n; i++) {
    memcpy(x + i * m.cols, m.x + idx[i] * m.cols, m.cols * sizeof *x);
    y[i] = m.y[idx[i]];
  }
  free(idx);
  rf_adapt a[RF_ADAPT_CLASSES];
  size_t na = 0;
  if (rf_adapt_fit_rows(f, g->name, (const char *const *)m.colnames, x, n, m.cols, y,
                        ds_feature_default, a, &na)) {
    cli_error("%s: %s", dpath, rf_last_error());
    goto out;
  }
  for (size_t j = 0; j < na; j++)
    if (rf_set_adapt(f, g->name, &a[j])) {
      cli_error("%s: %s", mpath, rf_last_error());
      goto out;
    }
  if (rf_save(f, out)) {
    cli_error("%s", rf_last_error());
    goto out;
  }
  printf("%s: %s adapted to %s with %u launches of %s: host x%.4g, device x%.4g (RMS log error "
         "on them %.4f)\n", out, mpath, g->name, a[0].shots, dpath, a[0].host, a[0].device,
         a[0].rmse_log);
  for (size_t j = 1; j < na; j++)
    printf("  opr.class %d: %u launches: host x%.4g, device x%.4g (RMS log error %.4f)\n",
           a[j].cls, a[j].shots, a[j].host, a[j].device, a[j].rmse_log);
  rc = KCAST_EXIT_OK;
out:
  free(x);
  free(y);
  ds_matrix_free(&m);
  ds_close(db);
  rf_free(f);
  return rc;
}
