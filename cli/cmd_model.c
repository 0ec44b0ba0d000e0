/*
 * cmd_model.c -- `kcast model info|importance MODEL`: what a model file
 * holds (target, transform, GPU, hyperparameters, training summary, sizes)
 * and its feature importances, without predicting anything.
 */
#include "cli/cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/model.h"

const char cmd_model_usage[] =
    "usage: kcast model info MODEL\n"
    "       kcast model importance MODEL [--top N]\n"
    "\n"
    "info: target and transform, GPU, features, hyperparameters, training\n"
    "      summary (rows, OOB and CV figures, date), the forest's size and\n"
    "      the interval calibration table (coverage, widening q in the\n"
    "      transformed space) when the model has one.\n"
    "importance: features by impurity importance (MDI, normalised to 1), with\n"
    "      the permutation importance (increase of the OOB squared error) when\n"
    "      the model was trained with --perm-importance.\n";

typedef struct ranked { size_t j; double v; } ranked;

static int cmp_ranked(const void *a, const void *b) {
  const ranked *x = a, *y = b;
  if (x->v != y->v) return x->v < y->v ? 1 : -1;
  return (x->j > y->j) - (x->j < y->j);
}

static void print_info(const char *path, const rf_info *in) {
  const rf_params *p = &in->params;
  const rf_summary *s = &in->summary;
  char date[64] = "?";
  time_t t = (time_t)s->created;
  struct tm tm;
  if (gmtime_r(&t, &tm)) strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S UTC", &tm);
  printf("model        %s\n", path);
  if (p->base_feature >= 0)
    printf("target       %s (log, relative to the base %s)\n", in->target,
           in->features[p->base_feature]);
  else
    printf("target       %s (%s)\n", in->target, in->transform == RF_TRANSFORM_LOG ? "log" : "none");
  printf("gpu%s         %s\n", strchr(in->gpu, ',') ? "s" : " ", in->gpu[0] ? in->gpu : "(unknown)");
  printf("features     %zu\n", in->n_features);
  printf("forest       %s, %zu trees, %zu nodes, %zu leaves, %zu leaf samples\n",
         p->extra_trees ? "extra trees" : "random forest", in->n_trees, in->n_nodes, in->n_leaves,
         in->n_leaf_values);
  printf("params       max_features %.4g, min_leaf %u, max_depth %u%s, bootstrap %s, bins %u, "
         "leaf_cap %u, seed %llu\n",
         p->max_features, p->min_leaf, p->max_depth, p->max_depth ? "" : " (unlimited)",
         p->bootstrap ? "on" : "off", p->n_bins, p->leaf_cap, (unsigned long long)p->seed);
  printf("trained      %llu rows, %s\n", (unsigned long long)s->n_rows, date);
  if (!isnan(s->oob_mse))
    printf("oob          MAPE %.2f %%, R^2 %.4f, MSE %.4g\n", s->oob_mape, s->oob_r2, s->oob_mse);
  if (!isnan(s->cv_mape))
    printf("cv           MAPE %.2f %%, median APE %.2f %%, coverage %.3f\n", s->cv_mape,
           s->cv_median_ape, s->cv_coverage);
  if (!in->n_cal) {
    printf("intervals    uncalibrated (quantile regression forest)\n");
    return;
  }
  if (in->cal_method == RF_CALIB_KFOLD)
    printf("intervals    calibrated (CQR) on %llu held-out rows of an inner %u-fold CV\n",
           (unsigned long long)in->cal_rows, in->cal_folds);
  else if (in->cal_method == RF_CALIB_GROUPS)
    printf("intervals    calibrated (CQR) for unseen groups: %llu rows held out by group "
           "in %u group folds\n", (unsigned long long)in->cal_rows, in->cal_folds);
  else
    printf("intervals    calibrated (CQR) on %llu out-of-bag rows\n",
           (unsigned long long)in->cal_rows);
  printf("calibration  coverage -> widening q%s:", in->transform == RF_TRANSFORM_LOG ? " (log)" : "");
  for (size_t k = 0; k < in->n_cal; k++) printf(" %.3g %+.4g", in->cal_coverage[k], in->cal_q[k]);
  putchar('\n');
  if (in->n_cal_unseen) {
    printf("unseen GPUs  calibrated on %llu rows held out by GPU in %u folds:",
           (unsigned long long)in->cal_unseen_rows, in->cal_unseen_folds);
    for (size_t k = 0; k < in->n_cal_unseen; k++)
      printf(" %.3g %+.4g", in->cal_coverage[k], in->cal_unseen_q[k]);
    putchar('\n');
  }
}

int cmd_model(int argc, char **argv) {
  if (argc < 2) return cli_usage_error("model", "give info MODEL or importance MODEL");
  const char *sub = argv[1], *path = NULL;
  unsigned long top = 0;
  static const char *const subs[] = {"info", "importance"};
  if (strcmp(sub, "info") && strcmp(sub, "importance"))
    return cli_unknown_subcommand("model", sub, subs, 2);
  static const struct option lo[] = {{"top", required_argument, NULL, 't'}, {NULL, 0, NULL, 0}};
  cli_opts o;
  cli_opts_init(&o, "model", argc - 1, argv + 1, "", 0);
  if (!strcmp(sub, "importance")) cli_opts_add(&o, lo);
  for (int c; (c = cli_opts_next(&o)) != CLI_OPT_END;) {
    if (c == CLI_OPT_ERR) return o.status;
    char *e;
    top = strtoul(o.arg, &e, 10);
    if (*e || *o.arg == '-' || top == 0)
      return cli_usage_error("model", "--top '%s': give a count >= 1", o.arg);
  }
  if (CLI_NOPERANDS(&o) != 1)
    return CLI_NOPERANDS(&o) ? cli_usage_error("model", "unexpected argument '%s'", CLI_OPERANDS(&o)[1])
                             : cli_usage_error("model", "give info MODEL or importance MODEL");
  path = CLI_OPERANDS(&o)[0];
  rf_forest *f = NULL;
  if (rf_load(path, &f)) {
    cli_error("%s", rf_last_error());
    return KCAST_EXIT_USER;
  }
  const rf_info *in = rf_get_info(f);
  if (!strcmp(sub, "info")) {
    print_info(path, in);
    rf_free(f);
    return KCAST_EXIT_OK;
  }
  ranked *r = malloc(in->n_features * sizeof *r);
  if (!r) {
    rf_free(f);
    cli_error("out of memory");
    return KCAST_EXIT_USER;
  }
  for (size_t j = 0; j < in->n_features; j++) r[j] = (ranked){j, in->mdi[j]};
  qsort(r, in->n_features, sizeof *r, cmp_ranked);
  size_t n = top && top < in->n_features ? top : in->n_features;
  printf("%-4s %-40s %10s%s\n", "rank", "feature", "mdi", in->perm ? "       perm" : "");
  for (size_t k = 0; k < n; k++) {
    printf("%-4zu %-40s %10.5f", k + 1, in->features[r[k].j], r[k].v);
    if (in->perm) printf(" %10.4g", in->perm[r[k].j]);
    putchar('\n');
  }
  free(r);
  rf_free(f);
  return KCAST_EXIT_OK;
}
