/*
 * cmd_model.c -- `kcast model info|importance MODEL`: what a model file
 * holds (target, transform, GPU, hyperparameters, training summary, sizes)
 * and its feature importances, without predicting anything.
 */
#include "cli/cli.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/model.h"

const char cmd_model_usage[] =
    "usage: kcast model info MODEL [--format table|json]\n"
    "       kcast model importance MODEL [--top N] [--format table|json]\n"
    "\n"
    "info: target and transform, GPU, features, hyperparameters, training\n"
    "      summary (rows, OOB and CV figures, date), the forest's size and\n"
    "      the interval calibration table (coverage, widening q in the\n"
    "      transformed space) when the model has one.\n"
    "importance: features by impurity importance (MDI, normalised to 1), with\n"
    "      the permutation importance (increase of the OOB squared error) when\n"
    "      the model was trained with --perm-importance.\n"
    "--format json: one object with the same (info: the feature names too).\n";

typedef struct ranked { size_t j; double v; } ranked;

static int cmp_ranked(const void *a, const void *b) {
  const ranked *x = a, *y = b;
  if (x->v != y->v) return x->v < y->v ? 1 : -1;
  return (x->j > y->j) - (x->j < y->j);
}

/* A table's shrinks per class of rows (file version 8), one line. */
static void print_class_shrinks(const char *label, const char *key, unsigned n, const double *val,
                                const double *sh, const int *to, double other, int other_to) {
  if (!n) return;
  static const char *const target[] = {"the estimate", "the median"};
  char a[32], b[32];
  printf("%-12s moved by %s (chosen on the held-out groups):", label, key);
  for (unsigned k = 0; k < n; k++) {
    if (sh[k] > 0)
      printf(" %s %s toward %s;", cli_num(a, sizeof a, val[k], 6), cli_num(b, sizeof b, sh[k], 3),
             target[to[k] != 0]);
    else
      printf(" %s none;", cli_num(a, sizeof a, val[k], 6));
  }
  if (other > 0)
    printf(" others %s toward %s\n", cli_num(a, sizeof a, other, 3), target[other_to != 0]);
  else
    printf(" others none\n");
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
  if (p->base_feature >= 0 && !strncmp(in->features[p->base_feature], "an.", 3)) {
    if (in->an_version)
      printf("estimate     the base from version %u of the analytic estimate (this kcast: %u)\n",
             in->an_version, AN_VERSION);
    else
      printf("estimate     the base from an analytic estimate of unrecorded version (this "
             "kcast: %u)\n", AN_VERSION);
  }
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
  char nb[64];
  if (!isnan(s->oob_mse))
    printf("oob          MAPE %.2f %%, R^2 %.4f, MSE %s\n", s->oob_mape, s->oob_r2,
           cli_num(nb, sizeof nb, s->oob_mse, 4));
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
  for (size_t k = 0; k < in->n_cal; k++)
    printf(" %s %s%s", cli_num(nb, sizeof nb, in->cal_coverage[k], 3), in->cal_q[k] >= 0 ? "+" : "",
           cli_num(nb + 32, 32, in->cal_q[k], 4));
  putchar('\n');
  static const char *const toward[] = {"the analytic estimate", "the median correction"};
  if (in->cal_shrink > 0 && !in->cal_n_keyed)
    printf("answers      moved %s of the way toward %s (chosen on the held-out groups)\n",
           cli_num(nb, sizeof nb, in->cal_shrink, 3), toward[in->cal_toward != 0]);
  print_class_shrinks("answers", in->cal_key, in->cal_n_keyed, in->cal_key_val,
                      in->cal_key_shrink, in->cal_key_toward, in->cal_shrink, in->cal_toward);
  if (in->n_cal_unseen) {
    printf("unseen GPUs  calibrated on %llu rows held out by GPU in %u folds:",
           (unsigned long long)in->cal_unseen_rows, in->cal_unseen_folds);
    for (size_t k = 0; k < in->n_cal_unseen; k++)
      printf(" %s %s%s", cli_num(nb, sizeof nb, in->cal_coverage[k], 3),
             in->cal_unseen_q[k] >= 0 ? "+" : "", cli_num(nb + 32, 32, in->cal_unseen_q[k], 4));
    putchar('\n');
    if (in->cal_unseen_shrink > 0 && !in->cal_unseen_n_keyed)
      printf("unseen GPUs  answers moved %s of the way toward %s\n",
             cli_num(nb, sizeof nb, in->cal_unseen_shrink, 3), toward[in->cal_unseen_toward != 0]);
    print_class_shrinks("unseen GPUs", in->cal_unseen_key, in->cal_unseen_n_keyed,
                        in->cal_unseen_key_val, in->cal_unseen_key_shrink,
                        in->cal_unseen_key_toward, in->cal_unseen_shrink, in->cal_unseen_toward);
  }
}

/* A table's shrinks per class: {"column": NAME, "classes": [{"value", "shrink",
   "toward"}...]}, or null when it has none. */
static cJSON *class_shrinks(const char *key, unsigned n, const double *val, const double *sh,
                            const int *to) {
  if (!n) return cJSON_CreateNull();
  static const char *const target[] = {"estimate", "median"};
  cJSON *o = cJSON_CreateObject(), *a = cJSON_AddArrayToObject(o, "classes");
  cJSON_AddStringToObject(o, "column", key);
  for (unsigned k = 0; k < n; k++) {
    cJSON *c = cJSON_CreateObject();
    cJSON_AddNumberToObject(c, "value", val[k]);
    cJSON_AddNumberToObject(c, "shrink", sh[k]);
    cJSON_AddStringToObject(c, "toward", target[to[k] != 0]);
    cJSON_AddItemToArray(a, c);
  }
  return o;
}

/* A number, or null for NaN. */
static cJSON *num_or_null(double v) { return isnan(v) ? cJSON_CreateNull() : cJSON_CreateNumber(v); }

/* A calibration table as [[coverage, q], ...]. */
static cJSON *cal_table(const double *cov, const double *q, size_t n) {
  cJSON *a = cJSON_CreateArray();
  for (size_t k = 0; a && k < n; k++) {
    cJSON *pair = cJSON_CreateArray();
    cJSON_AddItemToArray(pair, cJSON_CreateNumber(cov[k]));
    cJSON_AddItemToArray(pair, cJSON_CreateNumber(q[k]));
    cJSON_AddItemToArray(a, pair);
  }
  return a;
}

/* model info --format json: what print_info says, as one object. */
static int json_info(const char *path, const rf_info *in) {
  const rf_params *p = &in->params;
  const rf_summary *s = &in->summary;
  char date[64] = "";
  time_t t = (time_t)s->created;
  struct tm tm;
  if (gmtime_r(&t, &tm)) strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
  cJSON *o = cJSON_CreateObject();
  if (!o) return -1;
  cJSON_AddStringToObject(o, "model", path);
  cJSON_AddStringToObject(o, "target", in->target ? in->target : "");
  const char *u = rf_target_unit(in->target);
  if (u) cJSON_AddStringToObject(o, "unit", u);
  else cJSON_AddNullToObject(o, "unit");
  cJSON_AddStringToObject(o, "transform", in->transform == RF_TRANSFORM_LOG ? "log" : "none");
  if (p->base_feature >= 0) cJSON_AddStringToObject(o, "base", in->features[p->base_feature]);
  else cJSON_AddNullToObject(o, "base");
  /* the analytic estimate's version of an an.* base (null: none recorded) */
  if (in->an_version) cJSON_AddNumberToObject(o, "an_version", in->an_version);
  else cJSON_AddNullToObject(o, "an_version");
  cJSON *g = cJSON_AddArrayToObject(o, "gpus");
  for (const char *q = in->gpu; q && *q;) {
    size_t l = strcspn(q, ",");
    char one[256];
    snprintf(one, sizeof one, "%.*s", (int)(l < 255 ? l : 255), q);
    cJSON_AddItemToArray(g, cJSON_CreateString(one));
    q += l + (q[l] == ',');
  }
  cJSON *fa = cJSON_AddArrayToObject(o, "features");
  for (size_t j = 0; j < in->n_features; j++)
    cJSON_AddItemToArray(fa, cJSON_CreateString(in->features[j]));
  cJSON *fo = cJSON_AddObjectToObject(o, "forest");
  cJSON_AddStringToObject(fo, "kind", p->extra_trees ? "extra trees" : "random forest");
  cJSON_AddNumberToObject(fo, "trees", (double)in->n_trees);
  cJSON_AddNumberToObject(fo, "nodes", (double)in->n_nodes);
  cJSON_AddNumberToObject(fo, "leaves", (double)in->n_leaves);
  cJSON_AddNumberToObject(fo, "leaf_samples", (double)in->n_leaf_values);
  cJSON *pa = cJSON_AddObjectToObject(o, "params");
  cJSON_AddNumberToObject(pa, "max_features", p->max_features);
  cJSON_AddNumberToObject(pa, "min_leaf", p->min_leaf);
  cJSON_AddNumberToObject(pa, "max_depth", p->max_depth);
  cJSON_AddBoolToObject(pa, "bootstrap", p->bootstrap != 0);
  cJSON_AddNumberToObject(pa, "bins", p->n_bins);
  cJSON_AddNumberToObject(pa, "leaf_cap", p->leaf_cap);
  if (p->seed <= (1ull << 53)) {
    cJSON_AddNumberToObject(pa, "seed", (double)p->seed);
  } else { /* beyond a double's integers: its digits */
    char sd[32];
    snprintf(sd, sizeof sd, "%llu", (unsigned long long)p->seed);
    cJSON_AddStringToObject(pa, "seed", sd);
  }
  cJSON *tr = cJSON_AddObjectToObject(o, "trained");
  cJSON_AddNumberToObject(tr, "rows", (double)s->n_rows);
  cJSON_AddStringToObject(tr, "created", date);
  if (isnan(s->oob_mse)) {
    cJSON_AddNullToObject(o, "oob");
  } else {
    cJSON *ob = cJSON_AddObjectToObject(o, "oob");
    cJSON_AddItemToObject(ob, "mape_pct", num_or_null(s->oob_mape));
    cJSON_AddItemToObject(ob, "r2", num_or_null(s->oob_r2));
    cJSON_AddItemToObject(ob, "mse", num_or_null(s->oob_mse));
  }
  if (isnan(s->cv_mape)) {
    cJSON_AddNullToObject(o, "cv");
  } else {
    cJSON *cv = cJSON_AddObjectToObject(o, "cv");
    cJSON_AddItemToObject(cv, "mape_pct", num_or_null(s->cv_mape));
    cJSON_AddItemToObject(cv, "median_ape_pct", num_or_null(s->cv_median_ape));
    cJSON_AddItemToObject(cv, "coverage", num_or_null(s->cv_coverage));
  }
  cJSON *iv = cJSON_AddObjectToObject(o, "intervals");
  static const char *const method[] = {"none", "oob", "kfold", "groups"};
  int mi = !in->n_cal ? 0 : in->cal_method == RF_CALIB_KFOLD ? 2
                         : in->cal_method == RF_CALIB_GROUPS ? 3 : 1;
  cJSON_AddStringToObject(iv, "calibration", method[mi]);
  cJSON_AddNumberToObject(iv, "rows", (double)in->cal_rows);
  cJSON_AddNumberToObject(iv, "folds", in->cal_folds);
  cJSON_AddItemToObject(iv, "table", cal_table(in->cal_coverage, in->cal_q, in->n_cal));
  static const char *const target[] = {"estimate", "median"};
  cJSON_AddNumberToObject(iv, "shrink", in->cal_shrink);
  cJSON_AddStringToObject(iv, "shrink_toward", target[in->cal_toward != 0]);
  cJSON_AddItemToObject(iv, "class_shrinks",
                        class_shrinks(in->cal_key, in->cal_n_keyed, in->cal_key_val,
                                      in->cal_key_shrink, in->cal_key_toward));
  if (in->n_cal_unseen) {
    cJSON *un = cJSON_AddObjectToObject(iv, "unseen_gpus");
    cJSON_AddNumberToObject(un, "rows", (double)in->cal_unseen_rows);
    cJSON_AddNumberToObject(un, "folds", in->cal_unseen_folds);
    cJSON_AddNumberToObject(un, "shrink", in->cal_unseen_shrink);
    cJSON_AddStringToObject(un, "shrink_toward", target[in->cal_unseen_toward != 0]);
    cJSON_AddItemToObject(un, "class_shrinks",
                          class_shrinks(in->cal_unseen_key, in->cal_unseen_n_keyed,
                                        in->cal_unseen_key_val, in->cal_unseen_key_shrink,
                                        in->cal_unseen_key_toward));
    cJSON_AddItemToObject(un, "table",
                          cal_table(in->cal_coverage, in->cal_unseen_q, in->n_cal_unseen));
  } else {
    cJSON_AddNullToObject(iv, "unseen_gpus");
  }
  char *txt = cJSON_Print(o);
  cJSON_Delete(o);
  if (!txt) return -1;
  puts(txt);
  free(txt);
  return 0;
}

int cmd_model(int argc, char **argv) {
  if (argc < 2) return cli_usage_error("model", "give info MODEL or importance MODEL");
  const char *sub = argv[1], *path = NULL;
  unsigned long top = 0;
  static const char *const subs[] = {"info", "importance"};
  if (strcmp(sub, "info") && strcmp(sub, "importance"))
    return cli_unknown_subcommand("model", sub, subs, 2);
  static const struct option lo[] = {{"top", required_argument, NULL, 't'}, {NULL, 0, NULL, 0}};
  static const struct option fmt_lo[] = {{"format", required_argument, NULL, 'f'},
                                         {NULL, 0, NULL, 0}};
  int fmt = CLI_FMT_TABLE;
  cli_opts o;
  cli_opts_init(&o, "model", argc - 1, argv + 1, "", 0);
  if (!strcmp(sub, "importance")) cli_opts_add(&o, lo);
  cli_opts_add(&o, fmt_lo);
  for (int c; (c = cli_opts_next(&o)) != CLI_OPT_END;) {
    if (c == CLI_OPT_ERR) return o.status;
    if (c == 'f') {
      fmt = cli_parse_format(o.arg);
      if (fmt != CLI_FMT_TABLE && fmt != CLI_FMT_JSON)
        return cli_usage_error("model", "--format is table or json, not '%s'", o.arg);
      continue;
    }
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
  if (cli_model_load(path, &f)) {
    cli_error("%s", rf_last_error());
    return KCAST_EXIT_USER;
  }
  const rf_info *in = rf_get_info(f);
  if (!strcmp(sub, "info")) {
    int jr = 0;
    if (fmt == CLI_FMT_JSON) jr = json_info(path, in);
    else print_info(path, in);
    rf_free(f);
    if (jr) cli_error("out of memory");
    return jr ? KCAST_EXIT_USER : KCAST_EXIT_OK;
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
  if (fmt == CLI_FMT_JSON) {
    cJSON *root = cJSON_CreateObject(), *a = root ? cJSON_AddArrayToObject(root, "importance") : NULL;
    for (size_t k = 0; a && k < n; k++) {
      cJSON *e = cJSON_CreateObject();
      cJSON_AddNumberToObject(e, "rank", (double)(k + 1));
      cJSON_AddStringToObject(e, "feature", in->features[r[k].j]);
      cJSON_AddNumberToObject(e, "mdi", r[k].v);
      if (in->perm) cJSON_AddNumberToObject(e, "perm", in->perm[r[k].j]);
      cJSON_AddItemToArray(a, e);
    }
    char *txt = a ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    if (txt) puts(txt);
    free(txt);
  } else {
    printf("%-4s %-40s %10s%s\n", "rank", "feature", "mdi", in->perm ? "       perm" : "");
    for (size_t k = 0; k < n; k++) {
      char nb[64];
      printf("%-4zu %-40s %10.5f", k + 1, in->features[r[k].j], r[k].v);
      if (in->perm) printf(" %10s", cli_num(nb, sizeof nb, in->perm[r[k].j], 4));
      putchar('\n');
    }
  }
  free(r);
  rf_free(f);
  return KCAST_EXIT_OK;
}
