/*
 * cmd_report.c -- `kcast report`: one self-contained HTML file that shows
 * how good the predictions are, for a dataset and a model or for a
 * cross-validation run (`kcast cv --predictions FILE`).  The page itself
 * is model/report.c's (rp_write_html: what it draws is said there); this
 * file gathers the rows, their keys and work, and the settings shown in
 * the header.
 *
 * Inputs: `DB --model MODEL` predicts every measured launch of DB for the
 * model's target on the model's GPUs, loading the rows as `kcast train`
 * does (cli_rf_load: the same derived features, per row's GPU); `--cv
 * FILE` reads cv's predictions (measured, predicted, lo, hi, the key
 * columns, the work per launch and the settings column when present,
 * docs/formats.md).  The file is written whole or not at all (cli_out).
 */
#include "cli/cli.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "datasets/ds.h"
#include "include/kcast.h"
#include "model/model.h"
#include "model/report.h"

const char cmd_report_usage[] =
    "usage: kcast report DB --model MODEL [--gpu G[,G...]] [-o FILE.html]\n"
    "       kcast report --cv PREDICTIONS.csv [DB] [--model MODEL] [--coverage C]\n"
    "                    [--unit UNIT] [-o FILE.html]\n"
    "\n"
    "Write one self-contained HTML file (inline SVG; no script, nothing fetched)\n"
    "showing the predictions against the measurements: predicted vs measured on\n"
    "log-log axes with the intervals, each point coloured by application and\n"
    "titled with its keys and error (shown on hover), a legend, the table of the\n"
    "worst rows, the interval coverage against the nominal, the error by\n"
    "application and by GPU (with two or more), the error against the work per\n"
    "launch, for tuning spaces (an application on a GPU with 20 rows or more)\n"
    "the predicted rank against the measured rank with the top-1 and top-5\n"
    "regret, the model's feature importance and the dataset's work per launch\n"
    "(thread-instructions).  The header shows the settings: the CV's (scheme,\n"
    "folds, seed, features, forest) from the predictions file, the model's.\n"
    "\n"
    "  DB              a kcast dataset: with --model (and no --cv) every launch\n"
    "                  measured on the model's GPUs is predicted; with --cv it\n"
    "                  gives the work-per-launch histogram\n"
    "  --model MODEL   the model to evaluate (DB mode) or whose importance to show\n"
    "  --gpu G,...     with DB: the GPUs to predict for (default: the model's)\n"
    "  --cv FILE       the predictions of 'kcast cv --predictions FILE'\n"
    "  --coverage C    nominal interval coverage (0.9; for --cv: what cv ran with)\n"
    "  --unit UNIT     unit of the measured values for the axes: one of ns, us,\n"
    "                  ms, s, W, mW, J, mJ, and never one that contradicts the\n"
    "                  data (DB mode: ns, W or J from the target; --cv: the unit\n"
    "                  cv recorded in the file)\n"
    "  --title TEXT    the report's title\n"
    "  -o FILE         the HTML file to write (report.html)\n"
    "\n"
    "Exit status: 0 ok, 1 bad input, 2 bad command line.\n";

/* ------------------------------------------------------------ the data -- */

/* Work per launch of every launch in db: the sum of its class.* counts
   (thread-instructions), else launch.threads.  *w malloc'd. */
static int dataset_work(const char *path, double **w, size_t *n, const char **what) {
  char err[1100];
  ds_db *db = NULL;
  *w = NULL;
  *n = 0;
  if (ds_open(path, DS_READONLY, &db, err, sizeof err)) {
    cli_error("%s", err);
    return -1;
  }
  ds_query q;
  ds_query_init(&q);
  q.missing = DS_MISSING_NAN;
  ds_matrix m;
  memset(&m, 0, sizeof m);
  int rc = -1;
  if (ds_query_matrix(db, &q, &m) < 0) {
    cli_error("%s", ds_errmsg(db));
    goto out;
  }
  int have_class = 0;
  long thr = -1;
  for (size_t j = 0; j < m.cols; j++) {
    if (!strncmp(m.colnames[j], "class.", 6)) have_class = 1;
    if (!strcmp(m.colnames[j], "launch.threads")) thr = (long)j;
  }
  *what = have_class ? "thread-instructions" : "threads";
  if (!(*w = malloc((m.rows + 1) * sizeof **w))) { cli_error("out of memory"); goto out; }
  for (size_t i = 0; i < m.rows; i++) {
    double s = 0;
    for (size_t j = 0; j < m.cols; j++) {
      double v = m.x[i * m.cols + j];
      if (have_class ? !strncmp(m.colnames[j], "class.", 6) : (long)j == thr)
        if (isfinite(v)) s += v;
    }
    if (s > 0) (*w)[(*n)++] = s;
  }
  rc = 0;
out:
  ds_matrix_free(&m);
  ds_close(db);
  return rc;
}

static long col_of(const rf_data *d, const char *name) {
  for (size_t j = 0; j < d->n_cols; j++)
    if (!strcmp(d->names[j], name)) return (long)j;
  return -1;
}

/* The coverage levels a model is asked at. */
static const double levels[] = {0.5, 0.6, 0.7, 0.8, 0.9, 0.95};
#define NLEVELS (sizeof levels / sizeof *levels)

/* The settings shown in the header: a cv predictions file's settings
   column ("k=v;k=v") and the model's parameters. */
typedef struct settings {
  rp_setting s[40];
  size_t n;
  char buf[4096];
  size_t used;
} settings;

static void set_add(settings *st, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_add(settings *st, const char *name, const char *fmt, ...) {
  if (st->n >= sizeof st->s / sizeof *st->s || st->used >= sizeof st->buf - 2) return;
  va_list ap;
  va_start(ap, fmt);
  char *at = st->buf + st->used;
  int w = vsnprintf(at, sizeof st->buf - st->used, fmt, ap);
  va_end(ap);
  if (w < 0) return;
  st->used += strlen(at) + 1;
  st->s[st->n].name = name;
  st->s[st->n++].value = at;
}

/* "kcast=0.2.0;scheme=kfold;..." of kcast cv --predictions, in order, with
   people's names for the keys. */
static void set_from_cv(settings *st, const char *text) {
  static const char *const names[][2] = {
      {"kcast", "kcast version of the CV"}, {"scheme", "CV scheme"}, {"folds", "folds"},
      {"seed", "seed"}, {"features", "feature families"}, {"target", "target"}, {"unit", "unit"},
      {"transform", "target transform"}, {"base", "relative to"}, {"trees", "trees"},
      {"max_features", "max features per split"}, {"min_leaf", "min leaf"},
      {"extra_trees", "extra trees"}, {"search", "searched per fold"},
      {"coverage", "nominal coverage"}, {"gpus", "GPUs"}};
  char copy[1024];
  snprintf(copy, sizeof copy, "%s", text);
  char *save = NULL;
  for (char *kv = strtok_r(copy, ";", &save); kv; kv = strtok_r(NULL, ";", &save)) {
    char *eq = strchr(kv, '=');
    if (!eq) continue;
    *eq = 0;
    const char *name = NULL;
    for (size_t k = 0; k < sizeof names / sizeof *names; k++)
      if (!strcmp(names[k][0], kv)) name = names[k][1];
    const char *v = eq + 1;
    if (!name || !*v) continue; /* a key of a later kcast, or nothing to say */
    if (!strcmp(kv, "max_features") && !strcmp(v, "0")) v = "default (1/3; 1 for extra trees)";
    if ((!strcmp(kv, "extra_trees") || !strcmp(kv, "search")) && (!strcmp(v, "0") || !strcmp(v, "1")))
      v = *v == '1' ? "yes" : "no";
    set_add(st, name, "%s", v);
  }
}

static void set_from_model(settings *st, const char *path, const rf_info *in) {
  set_add(st, "model", "%s", path);
  set_add(st, "model: target, GPUs", "%s, %s", in->target ? in->target : "?",
          in->gpu && *in->gpu ? in->gpu : "none named");
  const rf_params *p = &in->params;
  char mf[32];
  if (p->max_features == 0) snprintf(mf, sizeof mf, "default");
  else snprintf(mf, sizeof mf, "%g", p->max_features);
  set_add(st, "model: forest", "%zu %s, max features %s, min leaf %u, seed %llu, %s target",
          in->n_trees, p->extra_trees ? "extra trees" : "trees (random forest)", mf, p->min_leaf,
          (unsigned long long)p->seed, in->transform == RF_TRANSFORM_LOG ? "log" : "linear");
  if (p->base_feature >= 0 && (size_t)p->base_feature < in->n_features)
    set_add(st, "model: relative to", "%s", in->features[p->base_feature]);
  char fams[256] = "";
  for (size_t j = 0; j < in->n_features; j++) {
    int fam = md_family_of(in->features[j]);
    const char *w = fam >= 0 ? md_family_word(fam) : NULL;
    if (w && !strstr(fams, w) && strlen(fams) + strlen(w) + 3 < sizeof fams)
      strcat(strcat(fams, *fams ? ", " : ""), w);
  }
  set_add(st, "model: features", "%zu (%s)", in->n_features, *fams ? fams : "CSV columns");
}

int cmd_report(int argc, char **argv) {
  const char *out = "report.html", *model = NULL, *cv = NULL, *gpu = NULL, *unit = NULL,
             *title = NULL;
  double nominal = 0.9;
  enum { R_MODEL = CLI_OPT_OWN, R_CV, R_GPU, R_COVERAGE, R_UNIT, R_TITLE };
  static const struct option lo[] = {
    {"output", required_argument, NULL, 'o'},
    {"model", required_argument, NULL, R_MODEL},
    {"cv", required_argument, NULL, R_CV},
    {"gpu", required_argument, NULL, R_GPU},
    {"coverage", required_argument, NULL, R_COVERAGE},
    {"unit", required_argument, NULL, R_UNIT},
    {"title", required_argument, NULL, R_TITLE},
    {NULL, 0, NULL, 0},
  };
  cli_opts o;
  cli_opts_init(&o, "report", argc, argv, "o:", 0);
  cli_opts_add(&o, lo);
  cli_opts_add(&o, cli_gpus_longopts);
  for (int c; (c = cli_opts_next(&o)) != CLI_OPT_END;) {
    char *e;
    switch (c) {
      case CLI_OPT_ERR: return o.status;
      case 'o': out = o.arg; break;
      case R_MODEL: model = o.arg; break;
      case R_CV: cv = o.arg; break;
      case R_GPU: gpu = o.arg; break;
      case R_UNIT:
        if (!(unit = rf_unit_canonical(o.arg)))
          return cli_usage_error("report", "--unit '%s' is none of " RF_UNITS, o.arg);
        break;
      case R_TITLE: title = o.arg; break;
      case R_COVERAGE:
        nominal = strtod(o.arg, &e);
        if (*e || !(nominal > 0 && nominal < 1))
          return cli_usage_error("report", "--coverage '%s' is not in (0,1)", o.arg);
        break;
    }
  }
  if (CLI_NOPERANDS(&o) > 1)
    return cli_usage_error("report", "unexpected argument '%s'", CLI_OPERANDS(&o)[1]);
  const char *db = CLI_NOPERANDS(&o) ? CLI_OPERANDS(&o)[0] : NULL;
  if (!cv && !(db && model))
    return cli_usage_error("report", "give DB --model MODEL, or --cv PREDICTIONS.csv");
  if (gpu && cv) return cli_usage_error("report", "--gpu goes with DB --model, not --cv");

  rp_report r;
  memset(&r, 0, sizeof r);
  r.nominal = nominal;
  settings st;
  memset(&st, 0, sizeof st);
  rf_forest *f = NULL;
  rf_data d;
  memset(&d, 0, sizeof d);
  double *pred = NULL, *plo = NULL, *phi = NULL, *lv = NULL, *hv = NULL, *work = NULL;
  char **kern = NULL;
  rf_data in;
  memset(&in, 0, sizeof in);
  char *src = NULL;
  int rc = KCAST_EXIT_USER;
  if (model && cli_model_load(model, &f)) {
    cli_error("%s", rf_last_error());
    goto done;
  }
  const rf_info *info = f ? rf_get_info(f) : NULL;
  if (info) {
    r.nimp = info->n_features;
    r.imp_name = info->features;
    r.imp = info->mdi;
  }
  size_t slen = 64 + strlen(cv ? cv : "") + strlen(db ? db : "") + strlen(model ? model : "");
  if (!(src = malloc(slen))) { cli_error("out of memory"); goto done; }
  if (cv) {
    /* cv --predictions: key columns, settings, work, row, measured,
       predicted, lo, hi, ape_pct[, demangled] */
    rf_csv_opts co = {.size = sizeof co, .target = "measured", .ignore = "ape_pct,row",
                      .text_auto = 1};
    if (rf_data_load_csv(&d, cv, &co)) {
      cli_error("%s", rf_last_error());
      goto done;
    }
    long pc = col_of(&d, "predicted"), lc = col_of(&d, "lo"), hc = col_of(&d, "hi");
    if (pc < 0 || lc < 0 || hc < 0) {
      cli_error("%s: not a 'kcast cv --predictions' file (needs columns measured, predicted, "
                "lo, hi)", cv);
      goto done;
    }
    r.n = d.n_rows;
    r.y = d.y;
    r.pred = d.x + (size_t)pc * d.n_rows;
    r.lo = d.x + (size_t)lc * d.n_rows;
    r.hi = d.x + (size_t)hc * d.n_rows;
    long ac = rf_data_text_col(&d, "app"), gc = rf_data_text_col(&d, "gpu"),
         dc = rf_data_text_col(&d, "dataset"), kc = rf_data_text_col(&d, "demangled"),
         sc = rf_data_text_col(&d, "settings"), wc = col_of(&d, "work");
    if (kc < 0) kc = rf_data_text_col(&d, "kernel");
    if (dc < 0) dc = rf_data_text_col(&d, "key"); /* a Kernel Tuner CSV's configuration */
    r.app = ac >= 0 ? (const char *const *)d.text[ac] : NULL;
    r.gpu = gc >= 0 ? (const char *const *)d.text[gc] : NULL;
    r.dataset = dc >= 0 ? (const char *const *)d.text[dc] : NULL;
    r.kernel = kc >= 0 ? (const char *const *)d.text[kc] : NULL;
    r.work = wc >= 0 ? d.x + (size_t)wc * d.n_rows : NULL;
    r.work_what = "thread-instructions";
    r.gpu1 = "(one GPU)";
    r.target = "value";
    const char *cvunit = NULL;
    if (sc >= 0 && d.n_rows && d.text[sc][0]) {
      set_from_cv(&st, d.text[sc][0]);
      const char *t = strstr(d.text[sc][0], ";target="), *u = strstr(d.text[sc][0], ";unit=");
      static char tg[64], un[32];
      if (t) sscanf(t + 8, "%63[^;]", tg), r.target = *tg ? tg : r.target;
      if (u && sscanf(u + 6, "%31[^;]", un) == 1 && *un) cvunit = un;
    } else {
      set_add(&st, "CV settings", "not recorded (a predictions file of kcast before 0.2)");
    }
    /* the unit cv recorded (its settings); --unit may not contradict it */
    const char *fc = rf_unit_canonical(cvunit);
    if (unit && fc && strcmp(unit, fc)) {
      cli_error("%s: --unit %s contradicts the predictions, which are in %s", cv, unit, fc);
      goto done;
    }
    r.unit = unit ? unit : cvunit ? cvunit : "the measured column's unit";
    size_t inside = 0;
    for (size_t i = 0; i < r.n; i++) inside += r.y[i] >= r.lo[i] && r.y[i] <= r.hi[i];
    r.ncov = 1;
    r.cov_nom[0] = nominal;
    r.cov_obs[0] = r.n ? (double)inside / (double)r.n : NAN;
    snprintf(src, slen, "cross-validation predictions %s%s%s", cv, model ? ", model " : "",
             model ? model : "");
    if (info) set_from_model(&st, model, info);
  } else {
    /* the dataset's measured launches, loaded as kcast train loads them,
       the columns the model reads, in its order */
    const char *tg = info->target ? info->target : "";
    if (strcmp(tg, "time") && strcmp(tg, "power") && strcmp(tg, "energy")) {
      cli_error("%s predicts '%s', a CSV column: a report on a dataset needs a time, power or "
                "energy model (or give --cv)", model, tg);
      goto done;
    }
    cli_rf_input ri;
    rf_params p;
    cli_rf_defaults(&p, &ri);
    ri.db = db;
    ri.target = tg;
    ri.gpu = gpu ? gpu : info->gpu;
    if (!ri.gpu || !*ri.gpu) {
      cli_error("%s names no GPU: give --gpu G", model);
      goto done;
    }
    /* a model of one GPU answers for that GPU only (as kcast predict) */
    if (gpu && info->gpu && *info->gpu && !strchr(info->gpu, ',') && !an_gpu_in_list(info->gpu, gpu)) {
      cli_error("%s was trained on %s only, not on %s: it cannot predict for another GPU", model,
                info->gpu, gpu);
      goto done;
    }
    /* the model's families, and class.* for each row's work */
    char fams[256] = "all,class";
    for (size_t j = 0; j < info->n_features; j++) {
      int fam = md_family_of(info->features[j]);
      const char *w = fam >= 0 ? md_family_word(fam) : NULL;
      if (w && !strstr(fams, w) && strlen(fams) + strlen(w) + 2 < sizeof fams)
        strcat(strcat(fams, ","), w);
    }
    ri.features = fams;
    if (cli_rf_load("report", &ri, &d, &p)) goto done;
    if (rf_data_alloc(&in, d.n_rows, info->n_features, 0)) { cli_error("out of memory"); goto done; }
    for (size_t j = 0; j < info->n_features; j++) {
      long c = col_of(&d, info->features[j]);
      if (c < 0) {
        cli_error("%s: the model reads %s, which the dataset's launches do not give", db,
                  info->features[j]);
        goto done;
      }
      memcpy(in.x + j * d.n_rows, d.x + (size_t)c * d.n_rows, d.n_rows * sizeof *in.x);
      if (!(in.names[j] = strdup(info->features[j]))) { cli_error("out of memory"); goto done; }
    }
    size_t n = d.n_rows;
    pred = malloc((n + 1) * sizeof *pred), plo = malloc((n + 1) * sizeof *plo),
    phi = malloc((n + 1) * sizeof *phi), lv = malloc((n + 1) * sizeof *lv),
    hv = malloc((n + 1) * sizeof *hv), work = malloc((n + 1) * sizeof *work);
    kern = calloc(n + 1, sizeof *kern);
    if (!pred || !plo || !phi || !lv || !hv || !work || !kern) { cli_error("out of memory"); goto done; }
    for (size_t k = 0; k < NLEVELS; k++) {
      if (rf_predict_batch(f, &in, levels[k], pred, lv, hv, 0)) {
        cli_error("%s: %s", model, rf_last_error());
        goto done;
      }
      size_t inside = 0;
      for (size_t i = 0; i < n; i++) inside += d.y[i] >= lv[i] && d.y[i] <= hv[i];
      r.cov_nom[r.ncov] = levels[k];
      r.cov_obs[r.ncov++] = n ? (double)inside / (double)n : NAN;
    }
    if (rf_predict_batch(f, &in, nominal, pred, plo, phi, 0)) {
      cli_error("%s: %s", model, rf_last_error());
      goto done;
    }
    int have_class = 0;
    for (size_t j = 0; j < d.n_cols; j++) have_class |= !strncmp(d.names[j], "class.", 6);
    for (size_t i = 0; i < n; i++) {
      double w = 0;
      for (size_t j = 0; j < d.n_cols; j++) {
        double v = d.x[j * n + i];
        if (!strncmp(d.names[j], "class.", 6) && isfinite(v)) w += v;
      }
      work[i] = have_class ? w : NAN;
    }
    long kc = rf_data_text_col(&d, "kernel"), dc = rf_data_text_col(&d, "dataset");
    for (size_t i = 0; kc >= 0 && i < n; i++) {
      const char *k = d.text[kc][i] ? d.text[kc][i] : "";
      kern[i] = fe_demangle(k);
      if (!kern[i] && !(kern[i] = strdup(k))) { cli_error("out of memory"); goto done; }
    }
    r.n = n;
    r.y = d.y;
    r.pred = pred, r.lo = plo, r.hi = phi;
    r.app = (const char *const *)d.groups;
    r.dataset = dc >= 0 ? (const char *const *)d.text[dc] : NULL;
    r.kernel = kc >= 0 ? (const char *const *)kern : NULL;
    r.gpu = ri.gpu_col >= 0 ? (const char *const *)d.text[ri.gpu_col] : NULL;
    r.gpu1 = ri.gpu;
    r.work = have_class ? work : NULL;
    r.work_what = "thread-instructions";
    r.target = tg;
    if (unit && strcmp(unit, rf_target_unit(tg))) {
      cli_error("%s: --unit %s contradicts the dataset's %s measurements, which are in %s", db,
                unit, tg, rf_target_unit(tg));
      goto done;
    }
    r.unit = rf_target_unit(tg);
    snprintf(src, slen, "dataset %s, model %s", db, model);
    r.in_sample = 1;
    set_add(&st, "evaluated", "every measured launch of %s on %s (in sample)", db, ri.gpu);
    set_from_model(&st, model, info);
  }
  double *hist = NULL;
  const char *what = "thread-instructions";
  if (db && dataset_work(db, &hist, &r.nhist, &what)) goto done;
  r.hist = hist;
  if (r.nhist) r.work_what = what;
  r.title = title ? title : cv ? "kcast: cross-validation report" : "kcast: model report";
  r.source = src;
  r.version = KCAST_VERSION_STRING;
  char date[64] = "";
  time_t now = time(NULL);
  struct tm tm;
  if (gmtime_r(&now, &tm)) strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", &tm);
  r.date = date;
  r.settings = st.s;
  r.nsettings = st.n;
  cli_out co;
  if (cli_out_open(&co, out)) goto done;
  int wrc = rp_write_html(co.f, &r);
  if (wrc) cli_error("writing %s: %s", out, rf_last_error());
  if (cli_out_close(&co, wrc == 0) || wrc) goto done;
  printf("wrote %s (%zu rows)\n", out, r.n);
  rc = KCAST_EXIT_OK;
done:
  free(src);
  free((void *)r.hist);
  free(pred);
  free(plo);
  free(phi);
  free(lv);
  free(hv);
  free(work);
  for (size_t i = 0; kern && i < d.n_rows; i++) free(kern[i]);
  free(kern);
  rf_data_free(&in);
  rf_data_free(&d);
  rf_free(f);
  return rc;
}
