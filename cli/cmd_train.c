/*
 * cmd_train.c -- `kcast train`: fit a random forest on a CSV file or a
 * dataset and write a .kcm model; also the option parsing, data loading
 * and progress display that `kcast cv` shares.
 *
 * Input is either `--csv FILE --target COLUMN` (any numeric table; the
 * dedispersion tuning data, exports) or `DB --gpu G --target time|power`
 * (a kcast dataset: datasets/ds.h's matrix query, features of every family,
 * median of the repeated measurements, group = the launch's app).
 */
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "datasets/ds.h"
#include "model/model.h"

const char cmd_train_usage[] =
    "usage: kcast train --csv FILE --target COLUMN [options]\n"
    "       kcast train DB --gpu G --target time|power [options]\n"
    "\n"
    "Train a random forest and write it as a model file.\n"
    "\n"
    "input:\n"
    "  --csv FILE          CSV with a header row; every other column is a feature\n"
    "  --target COLUMN     the column to predict (CSV) or time|power (DB)\n"
    "  --gpu NAME          the GPU (required with DB; recorded in the model)\n"
    "  --ignore COL,...    CSV columns that are not features\n"
    "  --group COLUMN      CSV column of group labels (not a feature)\n"
    "  --drop-constant     drop feature columns with a single value\n"
    "  --features F,...    feature families to use: launch, op, class, mem, ctrl,\n"
    "                      static (the part of a name before its first dot), and\n"
    "                      derived columns: mangrove (GPU Mangrove's twelve, mg.*,\n"
    "                      from op.*, class.*, launch.*), analytic (the analytic\n"
    "                      estimate on --gpu, an.*); docs/features.md\n"
    "hyperparameters:\n"
    "  --trees N           number of trees (100)\n"
    "  --max-features F    features tried per split: fraction in (0,1] or a count\n"
    "                      (default 1/3; 1.0 with --extra-trees)\n"
    "  --min-leaf N        smallest leaf in samples (5)\n"
    "  --max-depth D       deepest split level, 0 = unlimited (0)\n"
    "  --log-target        fit log(target); predictions are exp(mean of logs)\n"
    "  --extra-trees       extremely randomized trees (no bootstrap)\n"
    "  --bootstrap on|off  override the bootstrap default\n"
    "  --bins N            histogram bins per feature, 2..256 (256)\n"
    "  --calibrate         calibrate the prediction intervals on held-out rows\n"
    "                      (conformalized quantile regression): OOB rows for a\n"
    "                      bootstrap forest (its default), else an inner 5-fold\n"
    "                      CV of 50-tree forests (2-3x the training time); 'kcast\n"
    "                      cv' calibrates inside each training fold\n"
    "  --calibrate-groups  calibrate for groups the forest has not seen: the\n"
    "                      inner folds hold out whole groups (--group, or the\n"
    "                      app of a dataset's rows), for intervals on new\n"
    "                      applications; implies --calibrate\n"
    "  --no-calibrate      plain quantile-regression-forest intervals\n"
    "  --seed S            random seed (1)\n"
    "  --threads N         OpenMP threads (default: all)\n"
    "output:\n"
    "  -o MODEL            model file to write (model.kcm)\n"
    "  --cv K              also run K-fold CV and record its figures in the model\n"
    "  --perm-importance   also compute permutation importance (OOB)\n";

/* --------------------------------------------------------------- shared -- */

static int parse_uint(const char *s, unsigned long max, unsigned long *out) {
  char *e;
  if (!s || !*s || *s == '-') return -1;
  unsigned long long v = strtoull(s, &e, 10);
  if (*e || v > max) return -1;
  *out = (unsigned long)v;
  return 0;
}

/* ------------------------------------------------ feature families -- */

static int derive_columns(const rf_data *d, const char *list, const char *gpu, const char *src,
                          double **x, const char **names, size_t *k);

static const char *const families[] = {"launch", "op", "class", "mem", "ctrl", "static",
                                       "mangrove", "analytic"};

/* Is name's family (the text before its first dot) in the comma list? */
static int in_families(const char *list, const char *name) {
  const char *dot = strchr(name, '.');
  size_t fl = dot ? (size_t)(dot - name) : strlen(name);
  for (const char *t = list; *t;) {
    const char *e = strchr(t, ',');
    size_t n = e ? (size_t)(e - t) : strlen(t);
    if (n == fl && !strncmp(t, name, n)) return 1;
    if (!e) break;
    t = e + 1;
  }
  return 0;
}

/* A comma list of known family names, none empty. */
static int valid_families(const char *list) {
  for (const char *t = list;;) {
    const char *e = strchr(t, ',');
    size_t n = e ? (size_t)(e - t) : strlen(t), k;
    for (k = 0; k < sizeof families / sizeof *families; k++)
      if (strlen(families[k]) == n && !strncmp(t, families[k], n)) break;
    if (k == sizeof families / sizeof *families) return 0;
    if (!e) return 1;
    t = e + 1;
  }
}

/* Keep only the columns of the listed families (docs/features.md); the
   others move to d->extra like any unselected column. */
static int select_families(rf_data *d, const char *list, const char *src, int may_empty) {
  size_t n = d->n_rows, keep = 0;
  for (size_t j = 0; j < d->n_cols; j++) {
    if (in_families(list, d->names[j])) {
      if (keep != j) {
        memmove(d->x + keep * n, d->x + j * n, n * sizeof *d->x);
        d->names[keep] = d->names[j];
      }
      keep++;
    } else {
      char **ne = realloc(d->extra, (d->n_extra + 1) * sizeof *ne);
      if (!ne) { cli_error("out of memory"); return -1; }
      d->extra = ne;
      d->extra[d->n_extra++] = d->names[j];
    }
  }
  d->n_cols = keep;
  if (!keep && !may_empty) {
    cli_error("%s: no feature column belongs to the families '%s'", src, list);
    return -1;
  }
  return 0;
}

/* --features: a family selection, plus the derived columns 'mangrove'
   and 'analytic' ask for (computed from all loaded columns first). */
static int apply_features(rf_data *d, const char *features, const char *gpu, const char *src) {
  if (!features) return 0;
  double *dx;
  const char *dn[MD_MANGROVE_N + MD_ANALYTIC_N];
  size_t k;
  if (derive_columns(d, features, gpu, src, &dx, dn, &k)) return -1;
  if (select_families(d, features, src, k > 0)) {
    free(dx);
    return -1;
  }
  if (!k) return 0;
  size_t n = d->n_rows, p = d->n_cols;
  double *nx = realloc(d->x, (p + k) * n * sizeof *nx);
  char **nn = nx ? realloc(d->names, (p + k) * sizeof *nn) : NULL;
  if (nx) d->x = nx;
  if (nn) d->names = nn;
  int ok = nx && nn;
  for (size_t j = 0; ok && j < k; j++) {
    memcpy(d->x + (p + j) * n, dx + j * n, n * sizeof *dx);
    ok = (d->names[p + j] = strdup(dn[j])) != NULL;
    if (ok) d->n_cols++;
  }
  free(dx);
  if (!ok) cli_error("out of memory");
  return ok ? 0 : -1;
}

int cli_rf_option(const char *cmd, int argc, char **argv, int *i, struct rf_params *p,
                  cli_rf_input *in) {
  const char *a = argv[*i];
  const char *v = *i + 1 < argc ? argv[*i + 1] : NULL;
  unsigned long u;
#define NEEDV()                                                     \
  do {                                                              \
    if (!v) {                                                       \
      cli_usage_error(cmd, "%s needs a value", a);                  \
      return -1;                                                    \
    }                                                               \
    (*i)++;                                                         \
  } while (0)
  if (!strcmp(a, "--csv")) { NEEDV(); in->csv = v; return 1; }
  if (!strcmp(a, "--target")) { NEEDV(); in->target = v; return 1; }
  if (!strcmp(a, "--gpu")) { NEEDV(); in->gpu = v; return 1; }
  if (!strcmp(a, "--ignore")) { NEEDV(); in->ignore = v; return 1; }
  if (!strcmp(a, "--group")) { NEEDV(); in->group = v; return 1; }
  if (!strcmp(a, "--drop-constant")) { in->drop_constant = 1; return 1; }
  if (!strcmp(a, "--features")) {
    NEEDV();
    if (!valid_families(v)) {
      cli_usage_error(cmd, "--features '%s': give a comma list of launch, op, class, mem, "
                      "ctrl, static, mangrove, analytic", v);
      return -1;
    }
    in->features = v;
    return 1;
  }
  if (!strcmp(a, "--log-target")) { p->transform = RF_TRANSFORM_LOG; return 1; }
  if (!strcmp(a, "--extra-trees")) { p->extra_trees = 1; return 1; }
  if (!strcmp(a, "--calibrate")) { p->calibrate = RF_CALIBRATE_ON; return 1; }
  if (!strcmp(a, "--no-calibrate")) { p->calibrate = RF_CALIBRATE_OFF; p->calib_groups = 0; return 1; }
  if (!strcmp(a, "--calibrate-groups")) {
    p->calibrate = RF_CALIBRATE_ON;
    p->calib_groups = 1;
    return 1;
  }
  if (!strcmp(a, "--bootstrap")) {
    NEEDV();
    if (!strcmp(v, "on")) p->bootstrap = 1;
    else if (!strcmp(v, "off")) p->bootstrap = 0;
    else { cli_usage_error(cmd, "--bootstrap takes on or off, not '%s'", v); return -1; }
    return 1;
  }
  if (!strcmp(a, "--max-features")) {
    NEEDV();
    char *e;
    double d = strtod(v, &e);
    if (*e || !(d > 0) || d > 1e9 || (d > 1 && d != (double)(long)d)) {
      cli_usage_error(cmd, "--max-features '%s': give a fraction in (0,1] or a whole count", v);
      return -1;
    }
    p->max_features = d;
    return 1;
  }
  struct { const char *name; unsigned long min, max; } ints[] = {
    {"--trees", 1, 100000}, {"--min-leaf", 1, 1000000}, {"--max-depth", 0, 100000},
    {"--seed", 0, ~0UL}, {"--threads", 1, 4096}, {"--bins", 2, 256},
  };
  for (size_t k = 0; k < sizeof ints / sizeof ints[0]; k++) {
    if (strcmp(a, ints[k].name)) continue;
    NEEDV();
    if (parse_uint(v, ints[k].max, &u) || u < ints[k].min) {
      cli_usage_error(cmd, "%s '%s': give a whole number in %lu..%lu", a, v, ints[k].min, ints[k].max);
      return -1;
    }
    switch (k) {
      case 0: p->n_trees = (unsigned)u; break;
      case 1: p->min_leaf = (unsigned)u; break;
      case 2: p->max_depth = (unsigned)u; break;
      case 3: p->seed = u; break;
      case 4: p->n_threads = (int)u; break;
      case 5: p->n_bins = (unsigned)u; break;
    }
    return 1;
  }
#undef NEEDV
  return 0;
}

/* Matrix of a kcast dataset: every feature family, median measurement. */
static int load_db(const cli_rf_input *in, rf_data *d) {
  const char *metric = NULL;
  if (!strcmp(in->target, "time")) metric = "time_ns";
  else if (!strcmp(in->target, "power")) metric = "power_w";
  else if (!strcmp(in->target, "energy")) metric = "energy_j";
  if (!metric) {
    cli_error("%s: --target must be time, power or energy for a dataset, not '%s'", in->db, in->target);
    return -1;
  }
  char err[512];
  ds_db *db = NULL;
  if (ds_open(in->db, DS_READONLY, &db, err, sizeof err)) {
    cli_error("%s", err);
    return -1;
  }
  ds_query q;
  ds_query_init(&q);
  q.gpu = in->gpu;
  q.metric = metric;
  q.drop_constant = in->drop_constant;
  ds_matrix m;
  memset(&m, 0, sizeof m);
  if (ds_query_matrix(db, &q, &m)) {
    cli_error("%s", ds_errmsg(db));
    ds_close(db);
    return -1;
  }
  ds_close(db);
  int rc = -1;
  if (m.rows < 2) {
    cli_error("%s: %zu launches with %s measured on GPU '%s'; at least 2 are needed", in->db,
              m.rows, metric, in->gpu);
    goto out;
  }
  if (rf_data_alloc(d, m.rows, m.cols, 1)) {
    cli_error("%s", rf_last_error());
    goto out;
  }
  for (size_t i = 0; i < m.rows; i++) {
    for (size_t j = 0; j < m.cols; j++) d->x[j * m.rows + i] = m.x[i * m.cols + j];
    d->y[i] = m.y[i];
  }
  for (size_t j = 0; j < m.cols; j++) d->names[j] = strdup(m.colnames[j]);
  d->target = strdup(in->target);
  d->groups = calloc(m.rows, sizeof(char *));
  d->group_name = strdup("app");
  if (d->groups)
    for (size_t i = 0; i < m.rows; i++) d->groups[i] = strdup(m.app[i] ? m.app[i] : "");
  int ok = d->target && d->groups && d->group_name;
  for (size_t j = 0; ok && j < m.cols; j++) ok = d->names[j] != NULL;
  for (size_t i = 0; ok && i < m.rows; i++) ok = d->groups[i] != NULL;
  if (!ok) {
    cli_error("out of memory");
    rf_data_free(d);
    goto out;
  }
  rc = 0;
out:
  ds_matrix_free(&m);
  return rc;
}

/* ---------------------------------------------- derived features -- */

/* Is tok one of the comma list's items? */
static int has_token(const char *list, const char *tok) {
  size_t tl = strlen(tok);
  for (const char *t = list;;) {
    const char *e = strchr(t, ',');
    size_t n = e ? (size_t)(e - t) : strlen(t);
    if (n == tl && !strncmp(t, tok, n)) return 1;
    if (!e) return 0;
    t = e + 1;
  }
}

/*
 * The derived columns the list asks for (GPU Mangrove's twelve, the
 * analytic estimate on gpu), computed row by row with model/derived.c --
 * the same code libkcast runs on one launch at prediction time.  On
 * success *x holds k columns of n rows (column-major) named names[0..k).
 */
static int derive_columns(const rf_data *d, const char *list, const char *gpu, const char *src,
                          double **x, const char **names, size_t *k) {
  int mg = has_token(list, "mangrove"), an = has_token(list, "analytic");
  size_t n = d->n_rows, p = d->n_cols;
  *k = 0;
  *x = NULL;
  if (!mg && !an) return 0;
  if (an && (!gpu || !an_gpu_find(gpu))) {
    cli_error("%s: --features analytic needs --gpu naming a GPU of 'kcast gpus' (got '%s')", src,
              gpu ? gpu : "");
    return -1;
  }
  for (size_t j = 0; mg && j < MD_MANGROVE_N; j++) names[(*k)++] = md_mangrove_names[j];
  for (size_t j = 0; an && j < MD_ANALYTIC_N; j++) names[(*k)++] = md_analytic_names[j];
  double *out = calloc(n * *k + 1, sizeof *out), *row = malloc((p + 1) * sizeof *row);
  if (!out || !row) {
    free(out);
    free(row);
    cli_error("out of memory");
    return -1;
  }
  for (size_t i = 0; i < n; i++) {
    for (size_t j = 0; j < p; j++) row[j] = d->x[j * n + i];
    double v[MD_MANGROVE_N + MD_ANALYTIC_N];
    size_t c = 0;
    int rc = 0;
    if (mg) rc = md_mangrove((const char *const *)d->names, row, p, v);
    if (mg) c = MD_MANGROVE_N;
    if (!rc && an) rc = md_analytic(gpu, (const char *const *)d->names, row, p, v + c);
    if (rc) {
      cli_error("%s: row %zu: %s", src, i + 1, rf_last_error());
      free(out);
      free(row);
      return -1;
    }
    for (size_t j = 0; j < *k; j++) out[j * n + i] = v[j];
  }
  free(row);
  *x = out;
  return 0;
}

int cli_rf_load(const char *cmd, const cli_rf_input *in, rf_data *d) {
  memset(d, 0, sizeof *d);
  if (!in->target) return cli_usage_error(cmd, "--target is required"), -1;
  if (in->csv && in->db) return cli_usage_error(cmd, "give either --csv FILE or a dataset, not both"), -1;
  if (in->db) {
    if (!in->gpu) return cli_usage_error(cmd, "a dataset needs --gpu NAME"), -1;
    if (in->group && strcmp(in->group, "app"))
      return cli_usage_error(cmd, "with a dataset the only group is 'app'"), -1;
    if (load_db(in, d)) return -1;
    if (rf_data_check_finite(d, in->db)) {
      cli_error("%s", rf_last_error());
      rf_data_free(d);
      return -1;
    }
    if (apply_features(d, in->features, in->gpu, in->db)) {
      rf_data_free(d);
      return -1;
    }
    return 0;
  }
  if (!in->csv) return cli_usage_error(cmd, "no input: give --csv FILE or a dataset"), -1;
  rf_csv_opts o = {.size = sizeof o, .target = in->target, .group = in->group,
                   .ignore = in->ignore, .drop_constant = in->drop_constant};
  if (rf_data_load_csv(d, in->csv, &o)) {
    cli_error("%s", rf_last_error());
    return -1;
  }
  if (apply_features(d, in->features, in->gpu, in->csv)) {
    rf_data_free(d);
    return -1;
  }
  return 0;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void cli_progress_init(cli_progress *p, const char *label) {
  p->label = label;
  p->start = now_s();
  p->last = 0;
  p->shown = 0;
}

void cli_progress_fn(void *ctx, unsigned done, unsigned total) {
  cli_progress *p = ctx;
  double t = now_s();
  if (t - p->start < 1.0 && done < total) return;
  if (!p->shown && done == total) return; /* finished within a second */
  if (done < total && t - p->last < 0.2) return;
  p->last = t;
  p->shown = 1;
  fprintf(stderr, "\r%s %u/%u", p->label, done, total);
  if (done == total) fputc('\n', stderr);
  fflush(stderr);
}

/* ---------------------------------------------------------------- train -- */

int cmd_train(int argc, char **argv) {
  rf_params p;
  rf_params_default(&p);
  cli_rf_input in = {0};
  const char *out = "model.kcm";
  unsigned long cv_folds = 0;
  for (int i = 1; i < argc; i++) {
    int r = cli_rf_option("train", argc, argv, &i, &p, &in);
    if (r < 0) return KCAST_EXIT_USAGE;
    if (r) continue;
    const char *a = argv[i];
    if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
      if (i + 1 >= argc) return cli_usage_error("train", "%s needs a value", a);
      out = argv[++i];
    } else if (!strcmp(a, "--cv")) {
      if (i + 1 >= argc || parse_uint(argv[i + 1], 1000, &cv_folds) || cv_folds < 2)
        return cli_usage_error("train", "--cv needs a fold count of at least 2");
      i++;
    } else if (!strcmp(a, "--perm-importance")) {
      p.perm_importance = 1;
    } else if (a[0] == '-') {
      return cli_usage_error("train", "unknown option '%s'", a);
    } else if (!in.db) {
      in.db = a;
    } else {
      return cli_usage_error("train", "unexpected argument '%s'", a);
    }
  }
  rf_data d;
  if (cli_rf_load("train", &in, &d)) return in.target ? KCAST_EXIT_USER : KCAST_EXIT_USAGE;
  int rc = KCAST_EXIT_USER;
  rf_forest *f = NULL;
  rf_metrics cvm;
  int have_cv = 0;
  if (cv_folds) {
    cli_progress pg;
    cli_progress_init(&pg, "cv folds");
    rf_cv_opts co = {.size = sizeof co, .folds = (unsigned)cv_folds, .coverage = 0.9,
                     .progress = cli_progress_fn, .progress_ctx = &pg};
    rf_cv_result cr;
    if (rf_cv(&d, &p, &co, &cr)) {
      cli_error("%s: cross-validation: %s", in.csv ? in.csv : in.db, rf_last_error());
      goto out;
    }
    cvm = cr.overall;
    have_cv = 1;
    rf_cv_result_free(&cr);
  }
  cli_progress pg;
  cli_progress_init(&pg, "trees");
  p.progress = cli_progress_fn;
  p.progress_ctx = &pg;
  double t0 = now_s();
  if (rf_train(&d, &p, &f)) {
    cli_error("%s: %s", in.csv ? in.csv : in.db, rf_last_error());
    goto out;
  }
  double dt = now_s() - t0;
  if ((in.gpu && rf_set_gpu(f, in.gpu)) || rf_set_target(f, in.target)) {
    cli_error("%s", rf_last_error());
    goto out;
  }
  if (have_cv) rf_set_cv(f, &cvm);
  if (rf_save(f, out)) {
    cli_error("%s", rf_last_error());
    goto out;
  }
  const rf_info *info = rf_get_info(f);
  printf("trained %zu trees (%zu nodes) on %zu rows x %zu features in %.2f s\n", info->n_trees,
         info->n_nodes, d.n_rows, d.n_cols, dt);
  if (info->params.bootstrap)
    printf("OOB: MAPE %.2f %%, R^2 %.4f, MSE %.4g%s\n", info->summary.oob_mape, info->summary.oob_r2,
           info->summary.oob_mse, p.transform == RF_TRANSFORM_LOG ? " (log space)" : "");
  if (info->n_cal) {
    size_t k = 0;
    while (k + 1 < info->n_cal && info->cal_coverage[k] < 0.9) k++;
    printf("intervals calibrated on %llu %s rows (widening at %.3g: %+.4g%s)\n",
           (unsigned long long)info->cal_rows,
           info->cal_method == RF_CALIB_OOB      ? "out-of-bag"
           : info->cal_method == RF_CALIB_GROUPS ? "group-held-out"
                                                 : "held-out",
           info->cal_coverage[k],
           info->cal_q[k], p.transform == RF_TRANSFORM_LOG ? " in log space" : "");
  }
  if (have_cv)
    printf("CV (%lu-fold): MAPE %.2f %%, median APE %.2f %%, coverage %.3f\n", cv_folds,
           cvm.mape, cvm.median_ape, cvm.coverage);
  printf("wrote %s\n", out);
  rc = KCAST_EXIT_OK;
out:
  rf_free(f);
  rf_data_free(&d);
  return rc;
}
