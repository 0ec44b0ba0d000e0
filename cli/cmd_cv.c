/*
 * cmd_cv.c -- `kcast cv`: cross-validate the forest on a CSV file or a
 * dataset and report MAPE, median APE, RMSE of logs, R^2, Spearman and
 * interval coverage, and the ranking a tuner reads (Kendall's tau, the
 * top-1 and top-5 regret: the measured time of the configuration predicted
 * fastest, and the best of the five predicted fastest, over the true best),
 * overall, per fold and per group (application, GPU).
 *
 * `--format json` prints one object (a contract other tools read):
 *   {"rows": N, "folds": K, "scheme": "kfold"|"group", "mape": .., "median_ape": ..,
 *    "rmse_log": .., "r2": .., "spearman": .., "coverage": .., "kendall": ..,
 *    "top1_regret": .., "top5_regret": .., "per_fold": [..],
 *    "per_app": {GROUP: {metrics}, ...}, "search": [{"max_features":..,"min_leaf":..}]}
 * APEs are percentages; undefined figures are null.  `--format csv`: a
 * header and one row per scope (overall, fold N, group NAME), undefined
 * figures empty.
 */
#include "cli/cli.h"

#include <cjson/cJSON.h>
#include <csv.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "include/kcast.h"
#include "model/model.h"

const char cmd_cv_usage[] =
    "usage: kcast cv --csv FILE --target COLUMN [--folds K | --group COLUMN] [options]\n"
    "       kcast cv DB --gpu G [--target time|power|energy] [--folds K | --group app]\n"
    "                [options]        (a dataset's target: time unless given)\n"
    "\n"
    "Cross-validate a random forest: k-fold (seeded shuffle, default 5 folds) or\n"
    "leave-one-group-out (--group).  Prints MAPE, median APE, RMSE of logs, R^2,\n"
    "Spearman's rho, Kendall's tau, the top-1 and top-5 regret (the measured\n"
    "value of the row predicted lowest, and the lowest measured of the five\n"
    "predicted lowest, over the lowest measured: 1 = the best was found) and the\n"
    "coverage of the prediction intervals, overall and per fold or group.\n"
    "\n"
    "  --folds K           number of folds (5)\n"
    "  --group COLUMN      leave one group out (CSV column, or app for a dataset)\n"
    "  --features F,...    feature families and derived columns, as for train\n"
    "                      (e.g. mangrove: GPU Mangrove's twelve features)\n"
    "  --search            choose the forest inside each training fold by the\n"
    "                      median APE of an inner 3-fold CV (groups held out with\n"
    "                      --group): random forest or extra trees x max_features\n"
    "                      {1, 2/3, 1/3} x min_leaf {1, 3, 8} x with or without the\n"
    "                      base; 37 candidates of 50 trees\n"
    "  --predictions FILE  write every row's out-of-fold prediction, interval and\n"
    "                      measured value beside its key columns (CSV; a\n"
    "                      dataset's kernel also demangled, last), and the\n"
    "                      settings, the unit of the values among them\n"
    "  --coverage C        nominal interval coverage (0.9)\n"
    "  --per-app           a dataset: also the figures of each app (an operator of\n"
    "                      an import-neusight dataset), for every shot count\n"
    "  --shots K[,K...]    with --group: a new GPU (group) from K measured launches:\n"
    "                      K rows of each held-out group, drawn with --seed, adapt\n"
    "                      the fold's model to it (kcast calibrate's fit) and the\n"
    "                      error is counted on its other rows; operator launches:\n"
    "                      K of each operator class (opr.class), each class\n"
    "                      fitted on its own; further counts are scored on the\n"
    "                      same forests (their draws share rows)\n"
    "  --format table|csv|json  output format (table); csv: one row per scope\n"
    "                      (overall, each fold, each group) with the figures\n"
    "and every input and hyperparameter option of 'kcast train'.\n";

static cJSON *num(double v) { return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull(); }

static cJSON *metrics_json(const rf_metrics *m) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "n", (double)m->n);
  cJSON_AddItemToObject(o, "mape", num(m->mape));
  cJSON_AddItemToObject(o, "median_ape", num(m->median_ape));
  cJSON_AddItemToObject(o, "rmse_log", num(m->rmse_log));
  cJSON_AddItemToObject(o, "r2", num(m->r2));
  cJSON_AddItemToObject(o, "spearman", num(m->spearman));
  cJSON_AddItemToObject(o, "coverage", num(m->coverage));
  cJSON_AddItemToObject(o, "kendall", num(m->kendall));
  cJSON_AddItemToObject(o, "top1_regret", num(m->top1_regret));
  cJSON_AddItemToObject(o, "top5_regret", num(m->top5_regret));
  return o;
}

static void row(const char *name, const rf_metrics *m) {
  printf("%-24s %7zu %9.2f %9.2f %9.4f %8.4f %8.4f %8.4f %7.3f %7.3f %8.3f\n", name, m->n, m->mape,
         m->median_ape, m->rmse_log, m->r2, m->spearman, m->kendall, m->top1_regret,
         m->top5_regret, m->coverage);
}

/* One CSV row of figures; empty cells for undefined ones. */
static void csv_row(const char *scope, const char *name, const rf_metrics *m) {
  printf("%s,", scope);
  cli_csv_field(stdout, name);
  printf(",%zu", m->n);
  double v[] = {m->mape,     m->median_ape,  m->rmse_log,    m->r2,         m->spearman,
                m->coverage, m->kendall,     m->top1_regret, m->top5_regret};
  for (int k = 0; k < 9; k++) {
    putchar(',');
    if (isfinite(v[k])) printf("%.9g", v[k]);
  }
  putchar('\n');
}

/*
 * --predictions FILE: every row's out-of-fold prediction, interval and
 * measured value beside its key columns (a dataset's app, dataset, lseq,
 * kernel and gpu; a CSV's text and ignored columns), its group and its
 * fold, and in its settings the unit of the values (rf_target_unit: ns
 * for a dataset's time), as CSV.  Written to FILE.tmp.PID and renamed, so a failed write
 * leaves no partial file.  -1 after printing the error.
 */
static int write_predictions(const char *path, const rf_data *d, const rf_cv_result *r,
                             const char *settings) {
  size_t tl = strlen(path) + 32;
  char *tmp = malloc(tl);
  if (!tmp) { cli_error("out of memory"); return -1; }
  snprintf(tmp, tl, "%s.tmp.%ld", path, (long)getpid());
  FILE *fp = fopen(tmp, "w");
  if (!fp) {
    cli_error("%s: cannot create: %s", tmp, strerror(errno));
    free(tmp);
    return -1;
  }
  for (size_t k = 0; k < d->n_text; k++) {
    cli_csv_field(fp, d->text_names[k]);
    fputc(',', fp);
  }
  int own_group = d->groups && rf_data_text_col(d, d->group_name) < 0;
  if (own_group) {
    cli_csv_field(fp, d->group_name ? d->group_name : "group");
    fputc(',', fp);
  }
  long kc = rf_data_text_col(d, "kernel"); /* a dataset's: its signature goes last */
  /* work per launch: the sum of the class.* counts (thread-instructions),
     when the rows have them */
  int have_work = 0;
  for (size_t j = 0; j < d->n_cols; j++) have_work |= !strncmp(d->names[j], "class.", 6);
  /* the columns of kcast 0.1 first, as they were; what 0.2 adds after */
  fputs(kc >= 0 ? "row,measured,predicted,lo,hi,ape_pct,demangled"
                : "row,measured,predicted,lo,hi,ape_pct", fp);
  fputs(have_work ? ",work,settings" : ",settings", fp);
  /* cv --shots: whether a row was a shot, and each further shot count's
     answer, after every column of 0.2 */
  if (r->shot) fputs(",shot", fp);
  for (size_t s = 0; s < r->n_more; s++)
    fprintf(fp, ",predicted_%ushots,shot_%ushots", r->more[s].shots, r->more[s].shots);
  fputc('\n', fp);
  for (size_t i = 0; i < d->n_rows; i++) {
    for (size_t k = 0; k < d->n_text; k++) {
      cli_csv_field(fp, d->text[k][i] ? d->text[k][i] : "");
      fputc(',', fp);
    }
    if (own_group) {
      cli_csv_field(fp, d->groups[i] ? d->groups[i] : "");
      fputc(',', fp);
    }
    double y = d->y[i];
    /* round-trip digits: another program can compare to the last bit */
    fprintf(fp, "%zu,%.17g,%.17g,%.17g,%.17g,", i + 1, y, r->pred[i], r->lo[i], r->hi[i]);
    if (y != 0) fprintf(fp, "%.6g", 100 * fabs(r->pred[i] - y) / fabs(y));
    if (kc >= 0) {
      const char *k = d->text[kc][i] ? d->text[kc][i] : "";
      char *dm = fe_demangle(k);
      fputc(',', fp);
      cli_csv_field(fp, dm ? dm : k);
      free(dm);
    }
    if (have_work) {
      double w = 0;
      for (size_t j = 0; j < d->n_cols; j++) {
        double v = d->x[j * d->n_rows + i];
        if (!strncmp(d->names[j], "class.", 6) && isfinite(v)) w += v;
      }
      fprintf(fp, ",%.9g", w);
    }
    fputc(',', fp);
    cli_csv_field(fp, settings);
    if (r->shot) fprintf(fp, ",%d", r->shot[i]);
    for (size_t s = 0; s < r->n_more; s++)
      fprintf(fp, ",%.9g,%d", r->more[s].pred[i], r->more[s].shot[i]);
    fputc('\n', fp);
  }
  int bad = ferror(fp);
  bad |= fflush(fp) != 0;
  bad |= fclose(fp) != 0;
  if (bad || rename(tmp, path)) {
    cli_error("%s: cannot write: %s", bad ? tmp : path, strerror(errno));
    unlink(tmp);
    free(tmp);
    return -1;
  }
  free(tmp);
  return 0;
}

/* The figures of the rows of each value of text column col (a dataset's
   app: per operator), the shots of set (pred, shot) left out: their
   names into names[] and figures into m[], at most cap; returns how many,
   -1 out of memory. */
static long per_value(const rf_data *d, long col, const double *pred, const double *lo,
                      const double *hi, const unsigned char *shot, char **names, rf_metrics *m,
                      size_t cap) {
  size_t n = d->n_rows, k = 0;
  double *y = malloc((n + 1) * 4 * sizeof *y);
  if (!y) return -1;
  double *p = y + n, *l = y + 2 * n, *h = y + 3 * n;
  for (size_t i = 0; i < n; i++) {
    const char *a = d->text[col][i] ? d->text[col][i] : "";
    size_t g = 0;
    while (g < k && strcmp(names[g], a)) g++;
    if (g < k || k == cap) continue;
    names[k] = (char *)a;
    size_t c = 0;
    for (size_t j = i; j < n; j++) {
      if (shot && shot[j]) continue;
      if (strcmp(d->text[col][j] ? d->text[col][j] : "", a)) continue;
      y[c] = d->y[j], p[c] = pred[j], l[c] = lo[j], h[c] = hi[j];
      c++;
    }
    rf_metrics_compute(y, p, l, h, c, &m[k]);
    k++;
  }
  free(y);
  return (long)k;
}

int cmd_cv(int argc, char **argv) {
  rf_params p;
  cli_rf_input in;
  cli_rf_defaults(&p, &in);
  unsigned long folds = 0;
  int search = 0, fmt = CLI_FMT_TABLE, shots_given = 0, per_app = 0;
  const char *predictions = NULL;
  double coverage = 0.9;
  unsigned long shots = 0;
  unsigned more[16];
  size_t nmore = 0;
  enum { C_FOLDS = CLI_OPT_OWN, C_SEARCH, C_PREDICTIONS, C_COVERAGE, C_FORMAT, C_SHOTS,
         C_PER_APP };
  static const struct option own[] = {
    {"folds", required_argument, NULL, C_FOLDS},
    {"search", no_argument, NULL, C_SEARCH},
    {"predictions", required_argument, NULL, C_PREDICTIONS},
    {"coverage", required_argument, NULL, C_COVERAGE},
    {"format", required_argument, NULL, C_FORMAT},
    {"shots", required_argument, NULL, C_SHOTS},
    {"per-app", no_argument, NULL, C_PER_APP},
    {NULL, 0, NULL, 0},
  };
  cli_opts op;
  cli_opts_init(&op, "cv", argc, argv, "", 0);
  cli_opts_add(&op, own);
  cli_opts_add(&op, cli_gpus_longopts);
  cli_opts_add(&op, cli_rf_longopts);
  for (int c; (c = cli_opts_next(&op)) != CLI_OPT_END;) {
    if (c == CLI_OPT_ERR) return op.status;
    int r = cli_rf_option(&op, c, &p, &in);
    if (r < 0) return KCAST_EXIT_USAGE;
    if (r) continue;
    const char *v = op.arg;
    char *e;
    switch (c) {
      case C_FOLDS:
        folds = strtoul(v, &e, 10);
        if (*e || *v == '-' || folds < 2 || folds > 100000)
          return cli_usage_error("cv", "--folds '%s': give a count >= 2", v);
        break;
      case C_SEARCH: search = 1; break;
      case C_PER_APP: per_app = 1; break;
      case C_SHOTS: {
        /* K[,K...]: the first is the main figure, the others are scored on
           the same forests */
        char buf[256];
        snprintf(buf, sizeof buf, "%s", v);
        nmore = 0;
        int first = 1;
        for (char *t = strtok(buf, ","); t; t = strtok(NULL, ","), first = 0) {
          unsigned long k;
          if (cli_parse_uint(t, 1000000, &k) || (!first && nmore == 16))
            return cli_usage_error("cv", "--shots '%s': give a count of launches, or up to 17 "
                                   "comma-separated", v);
          if (first) shots = k;
          else more[nmore++] = (unsigned)k;
        }
        if (first) return cli_usage_error("cv", "--shots '%s': give a count of launches", v);
        shots_given = 1;
        break;
      }
      case C_PREDICTIONS: predictions = v; break;
      case C_COVERAGE:
        coverage = strtod(v, &e);
        if (*e || !(coverage > 0 && coverage < 1))
          return cli_usage_error("cv", "--coverage '%s' is not in (0,1)", v);
        break;
      case C_FORMAT:
        fmt = cli_parse_format(v);
        if (fmt < 0) return cli_usage_error("cv", "--format is table, csv or json, not '%s'", v);
        break;
    }
  }
  if (CLI_NOPERANDS(&op) > 1)
    return cli_usage_error("cv", "unexpected argument '%s'", CLI_OPERANDS(&op)[1]);
  if (CLI_NOPERANDS(&op)) in.db = CLI_OPERANDS(&op)[0];
  if (folds && in.group) return cli_usage_error("cv", "--folds and --group exclude each other");
  if (shots_given && !in.group)
    return cli_usage_error("cv", "--shots K adapts to each held-out group: it needs --group");
  in.want_overhead = shots_given;
  rf_data d;
  if (cli_rf_load("cv", &in, &d, &p)) return in.target ? KCAST_EXIT_USER : KCAST_EXIT_USAGE;
  /* intervals for what the CV holds out: unseen groups when it leaves
     groups out (unless the calibration was chosen) */
  if (in.group && !in.calib_set && p.calibrate == RF_CALIBRATE_ON) p.calib_groups = 1;
  if (in.notes[0])
    fprintf(stderr, "kcast: note: %s: columns holding text are not features: %s (--ignore or "
            "--group them to say so)\n", in.csv, in.notes);
  cli_progress pg;
  cli_progress_init(&pg, "cv folds");
  rf_cv_opts o = {.size = sizeof o, .folds = (unsigned)folds, .by_group = in.group != NULL,
                  .search = search, .coverage = coverage, .progress = cli_progress_fn,
                  .progress_ctx = &pg, .shots = (unsigned)shots, .overhead = in.overhead,
                  .more = more, .n_more = nmore, .adapt_class = in.adapt_class};
  rf_cv_result r;
  int rc = KCAST_EXIT_USER;
  int cvrc = rf_cv(&d, &p, &o, &r);
  free(in.overhead);
  in.overhead = NULL;
  free(in.adapt_class);
  in.adapt_class = NULL;
  if (cvrc) {
    cli_error("%s: %s", in.csv ? in.csv : in.db, rf_last_error());
    rf_data_free(&d);
    return rc;
  }
  /* --per-app: the figures of each app (operator) of a dataset, for every
     shot count */
  enum { PER_MAX = 256 };
  char *pa_name[17][PER_MAX];
  rf_metrics pa_m[17][PER_MAX];
  long pa_n[17] = {0};
  long acol = per_app ? rf_data_text_col(&d, "app") : -1;
  if (per_app && acol < 0) {
    rf_cv_result_free(&r);
    rf_data_free(&d);
    return cli_usage_error("cv", "--per-app needs a dataset (its launches' app)");
  }
  for (size_t s = 0; per_app && s <= r.n_more; s++) {
    pa_n[s] = s == 0 ? per_value(&d, acol, r.pred, r.lo, r.hi, r.shot, pa_name[s], pa_m[s], PER_MAX)
                     : per_value(&d, acol, r.more[s - 1].pred, r.more[s - 1].lo,
                                 r.more[s - 1].hi, r.more[s - 1].shot, pa_name[s], pa_m[s],
                                 PER_MAX);
    if (pa_n[s] < 0) {
      cli_error("out of memory");
      rf_cv_result_free(&r);
      rf_data_free(&d);
      return rc;
    }
  }
  if (fmt == CLI_FMT_JSON) {
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "rows", (double)r.n);
    cJSON_AddNumberToObject(root, "folds", r.n_folds);
    cJSON_AddStringToObject(root, "scheme", o.by_group ? "group" : "kfold");
    cJSON_AddNumberToObject(root, "coverage_nominal", coverage);
    cJSON *m = metrics_json(&r.overall);
    for (cJSON *it = m->child; it; it = it->next)
      cJSON_AddItemToObject(root, it->string, cJSON_Duplicate(it, 1));
    cJSON_Delete(m);
    cJSON *pf = cJSON_AddArrayToObject(root, "per_fold");
    for (unsigned k = 0; k < r.n_folds; k++) cJSON_AddItemToArray(pf, metrics_json(&r.fold[k]));
    cJSON *pa = cJSON_AddObjectToObject(root, "per_app");
    for (size_t g = 0; g < r.n_groups; g++)
      cJSON_AddItemToObject(pa, r.groups[g].name, metrics_json(&r.groups[g].m));
    if (per_app) {
      cJSON *pk = cJSON_AddObjectToObject(root, "per_launch_app");
      for (long g = 0; g < pa_n[0]; g++)
        cJSON_AddItemToObject(pk, pa_name[0][g], metrics_json(&pa_m[0][g]));
    }
    if (shots_given) {
      cJSON *sm = cJSON_AddArrayToObject(root, "shots_more");
      for (size_t s = 0; s < r.n_more; s++) {
        cJSON *o1 = metrics_json(&r.more[s].overall);
        cJSON_AddNumberToObject(o1, "shots", r.more[s].shots);
        cJSON *pa1 = cJSON_AddObjectToObject(o1, "per_app");
        for (size_t g = 0; g < r.n_groups; g++)
          cJSON_AddItemToObject(pa1, r.groups[g].name, metrics_json(&r.more[s].group[g]));
        if (per_app) {
          cJSON *pk = cJSON_AddObjectToObject(o1, "per_launch_app");
          for (long g = 0; g < pa_n[s + 1]; g++)
            cJSON_AddItemToObject(pk, pa_name[s + 1][g], metrics_json(&pa_m[s + 1][g]));
        }
        cJSON_AddItemToArray(sm, o1);
      }
    }
    if (shots) {
      /* per held-out group (fold order = sorted group names) */
      cJSON_AddNumberToObject(root, "shots", (double)shots);
      cJSON *ad = cJSON_AddObjectToObject(root, "adapted");
      for (unsigned k = 0; k < r.n_folds && k < r.n_groups; k++) {
        cJSON *cl = cJSON_CreateArray();
        for (int c = 0; c < RF_ADAPT_CLASSES; c++) {
          const rf_adapt *fa = &r.fold_adapt[(size_t)k * RF_ADAPT_CLASSES + c];
          if (!fa->shots) continue;
          cJSON *a = cJSON_CreateObject();
          cJSON_AddNumberToObject(a, "class", c);
          cJSON_AddNumberToObject(a, "host", fa->host);
          cJSON_AddNumberToObject(a, "device", fa->device);
          cJSON_AddNumberToObject(a, "shots", fa->shots);
          cJSON_AddItemToArray(cl, a);
        }
        cJSON_AddItemToObject(ad, r.groups[k].name, cl);
      }
    }
    if (search) {
      cJSON *s = cJSON_AddArrayToObject(root, "search");
      for (unsigned k = 0; k < r.n_folds; k++) {
        cJSON *c = cJSON_CreateObject();
        cJSON_AddNumberToObject(c, "max_features", r.fold_mf[k]);
        cJSON_AddNumberToObject(c, "min_leaf", r.fold_leaf[k]);
        cJSON_AddBoolToObject(c, "extra_trees", r.fold_et[k]);
        cJSON_AddBoolToObject(c, "base", r.fold_base[k]);
        cJSON_AddItemToArray(s, c);
      }
    }
    char *txt = cJSON_PrintUnformatted(root);
    if (txt) puts(txt);
    free(txt);
    cJSON_Delete(root);
  } else if (fmt == CLI_FMT_CSV) {
    puts("scope,name,rows,mape,median_ape,rmse_log,r2,spearman,coverage,kendall,top1_regret,"
         "top5_regret");
    csv_row("overall", "", &r.overall);
    for (unsigned k = 0; k < r.n_folds; k++) {
      char name[32];
      snprintf(name, sizeof name, "%u", k + 1);
      csv_row("fold", name, &r.fold[k]);
    }
    for (size_t g = 0; g < r.n_groups; g++) csv_row("group", r.groups[g].name, &r.groups[g].m);
    for (size_t s = 0; s < r.n_more; s++) {
      char scope[32];
      snprintf(scope, sizeof scope, "shots%u", r.more[s].shots);
      csv_row(scope, "", &r.more[s].overall);
      for (size_t g = 0; g < r.n_groups; g++) {
        snprintf(scope, sizeof scope, "group-shots%u", r.more[s].shots);
        csv_row(scope, r.groups[g].name, &r.more[s].group[g]);
      }
    }
    for (size_t s = 0; per_app && s <= r.n_more; s++)
      for (long g = 0; g < pa_n[s]; g++) {
        char scope[32];
        snprintf(scope, sizeof scope, "app-shots%u", s ? r.more[s - 1].shots : (unsigned)shots);
        csv_row(scope, pa_name[s][g], &pa_m[s][g]);
      }
  } else {
    char how[256];
    snprintf(how, sizeof how, "%s%s%s%s, %s", p.transform == RF_TRANSFORM_LOG ? "log" : "linear",
             p.base_feature >= 0 ? ", relative to " : "",
             p.base_feature >= 0 ? d.names[p.base_feature] : "", "",
             search ? "searched per fold" : p.extra_trees ? "extra trees" : "random forest");
    printf("%s: %zu rows, %zu features, %u %s, target %s (%s)\n", in.csv ? in.csv : in.db,
           d.n_rows, d.n_cols, r.n_folds, o.by_group ? "groups (leave one out)" : "folds",
           in.target, how);
    printf("%-24s %7s %9s %9s %9s %8s %8s %8s %7s %7s %8s\n", "", "rows", "MAPE%", "medAPE%",
           "RMSElog", "R2", "rho", "tau", "top1", "top5", "cover");
    row("overall", &r.overall);
    if (r.n_groups) {
      printf("per %s:\n", d.group_name ? d.group_name : "group");
      for (size_t g = 0; g < r.n_groups; g++) row(r.groups[g].name, &r.groups[g].m);
    } else {
      for (unsigned k = 0; k < r.n_folds; k++) {
        char name[32];
        snprintf(name, sizeof name, "fold %u", k + 1);
        row(name, &r.fold[k]);
      }
    }
    if (shots)
      for (unsigned k = 0; k < r.n_folds && k < r.n_groups; k++)
        for (int c = 0; c < RF_ADAPT_CLASSES; c++) {
          const rf_adapt *fa = &r.fold_adapt[(size_t)k * RF_ADAPT_CLASSES + c];
          if (!fa->shots) continue;
          char cl[32] = "";
          if (c) snprintf(cl, sizeof cl, " (opr.class %d)", c);
          printf("%s%s: adapted with %u shots (not counted above): host x%.3f, device x%.3f\n",
                 r.groups[k].name, cl, fa->shots, fa->host, fa->device);
        }
    if (per_app) {
      printf("per app%s:\n", shots ? " (shots not counted)" : "");
      for (long g = 0; g < pa_n[0]; g++) row(pa_name[0][g], &pa_m[0][g]);
    }
    for (size_t s = 0; s < r.n_more; s++) {
      char name[64];
      printf("with %u shots of each held-out %s (the same forests):\n", r.more[s].shots,
             d.group_name ? d.group_name : "group");
      snprintf(name, sizeof name, "overall, %u shots", r.more[s].shots);
      row(name, &r.more[s].overall);
      for (size_t g = 0; g < r.n_groups; g++) row(r.groups[g].name, &r.more[s].group[g]);
      if (per_app) {
        printf("per app, %u shots:\n", r.more[s].shots);
        for (long g = 0; g < pa_n[s + 1]; g++) row(pa_name[s + 1][g], &pa_m[s + 1][g]);
      }
    }
    if (search)
      for (unsigned k = 0; k < r.n_folds; k++)
        printf("fold %u: search chose %s, max_features %.3g, min_leaf %u, %s\n", k + 1,
               r.fold_et[k] ? "extra trees" : "random forest", r.fold_mf[k], r.fold_leaf[k],
               r.fold_base[k] ? "with the base" : "no base");
  }
  /* what the predictions file says it was made with (docs/formats.md) */
  char settings[1024];
  const char *tg = in.target ? in.target : "";
  /* the unit of measured, predicted, lo and hi: a dataset target's, or the
     one a CSV column's name spells (rf_target_unit), "" when it says none */
  const char *unit = rf_target_unit(tg) ? rf_target_unit(tg) : "";
  snprintf(settings, sizeof settings,
           "kcast=%s;scheme=%s%s%s;folds=%u;seed=%llu;features=%s;target=%s;unit=%s;transform=%s;"
           "base=%s;trees=%u;max_features=%g;min_leaf=%u;extra_trees=%d;search=%d;coverage=%g;"
           "gpus=%s", KCAST_VERSION_STRING, o.by_group ? "group" : "kfold", o.by_group ? " by " : "",
           o.by_group && d.group_name ? d.group_name : "", r.n_folds,
           (unsigned long long)p.seed, in.features ? in.features : "default", tg, unit,
           p.transform == RF_TRANSFORM_LOG ? "log" : "none",
           p.base_feature >= 0 ? d.names[p.base_feature] : "none", p.n_trees, p.max_features,
           p.min_leaf, p.extra_trees, search, coverage, in.gpus[0] ? in.gpus : in.gpu ? in.gpu : "");
  if (r.groups_calibrated < 3)
    fprintf(stderr, "kcast: note: the intervals for held-out groups were calibrated on %zu "
            "group%s at least: too few to tell how far a new one lies, so they are widened by "
            "the prior spread of groups (sigma %.2f in log space; docs/accuracy.md)\n",
            r.groups_calibrated, r.groups_calibrated == 1 ? "" : "s", RF_UNSEEN_SIGMA);
  if (r.shrunk_folds) {
    char a[32], b[32];
    fprintf(stderr, "kcast: note: in %u of %u folds the forest's answers for the held-out "
            "group were moved %s%s%s of the way toward the analytic estimate or the median "
            "correction (what the inner folds' held-out groups were answered best by; "
            "docs/accuracy.md)\n", r.shrunk_folds, r.n_folds, cli_num(a, sizeof a, r.shrink_min, 3),
            r.shrink_max > r.shrink_min ? " to " : "",
            r.shrink_max > r.shrink_min ? cli_num(b, sizeof b, r.shrink_max, 3) : "");
  }
  if (predictions && write_predictions(predictions, &d, &r, settings)) {
    rc = KCAST_EXIT_USER;
    rf_cv_result_free(&r);
    rf_data_free(&d);
    return rc;
  }
  rc = KCAST_EXIT_OK;
  rf_cv_result_free(&r);
  rf_data_free(&d);
  return rc;
}
