/*
 * cmd_featmodel.c -- `kcast featmodel fit|info|validate`: feature models
 * (model/fm_fit.c), the features of a kernel's launch at a size nobody ran,
 * from the launches of that kernel a dataset holds at other sizes.
 *
 *  - fit: the launches of one kernel (--kernel, by mangled or source name;
 *    --app when several programs launch it) into a .kcf file, with the
 *    held-out error of leaving each size out in turn, which decides whether
 *    libkcast and `kcast predict --featmodel` call the model reliable;
 *  - info: what a .kcf holds, with each feature's form (--forms);
 *  - validate: leave one size out for every kernel of a dataset (or one):
 *    per kernel the median relative error of the class.* and mem.*
 *    features and of the time predicted from them against the time
 *    predicted from the emulated features (the analytic estimate on --gpu,
 *    or a forest with --model), and which kernels it cannot model.
 *
 * A "size" is a launch's dataset label: the program's input.  Launches are
 * grouped by (app, kernel).
 */
#include "cli/cli.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "datasets/ds.h"
#include "extractor/features.h"
#include "extractor/frontend.h"
#include "model/model.h"

const char cmd_featmodel_usage[] =
    "usage: kcast featmodel fit DB --kernel K [--app APP] [--max-error E] -o FILE.kcf\n"
    "       kcast featmodel info FILE.kcf [--forms] [--format table|json]\n"
    "       kcast featmodel validate DB [--kernel K] [--app APP] [--gpu G]\n"
    "                                [--model MODEL] [--max-error E] [--format table|csv]\n"
    "                                [--gpus FILE] [--instances]\n"
    "\n"
    "A feature model gives the dynamic features of a kernel's launch (op.*,\n"
    "class.*, mem.*, ctrl.*, launch.*) from its grid, block, dynamic shared\n"
    "memory and the scalar arguments the kernel reads (arg.*, recorded by\n"
    "'kcast run'), learned from the kernel's launches at several sizes (the\n"
    "dataset labels of DB): each count as an exact polynomial when one fits\n"
    "every launch, else a product of powers fitted in log space.  'kcast\n"
    "predict --featmodel' and libkcast (kcast_featmodel_*) answer from it\n"
    "without emulation.\n"
    "\n"
    "fit: the launches of kernel K (mangled or source name; --app APP when\n"
    "     several programs launch one of that name) into FILE.kcf.  A kernel\n"
    "     template is one kernel: K 'gemm_tiled_kernel<T>' (the source name with\n"
    "     a name for each integer template argument; an argument written out,\n"
    "     as 'k<float, N>', must be the instances' own) takes every instance\n"
    "     whose demangled names differ only in integer template arguments, which\n"
    "     become variables of the fit (T0, T1, ...).  Each size is\n"
    "     left out in turn to measure the held-out error (median relative error\n"
    "     of the class.* and mem.* features); a model whose error is above E\n"
    "     (--max-error, 0.05) or cannot be measured (fewer than 3 sizes) is\n"
    "     flagged unreliable in every answer.\n"
    "info: kernel, arguments read, training sizes, held-out error and the\n"
    "     ranges of the launch quantities; --forms adds each feature's formula;\n"
    "     --format json: one object with all of it (the formulas too).\n"
    "validate: leave one size out for every kernel of DB (or K): per kernel\n"
    "     the median error of its class.* and mem.* features and of the time\n"
    "     predicted from them against the time predicted from the emulated\n"
    "     features -- the analytic estimate on --gpu G (H200), or the forest\n"
    "     MODEL on its GPU -- and a summary: kernels modelled within E, and\n"
    "     those it cannot model with the reason (--gpus FILE: GPUs to add to the\n"
    "     GPU table, as for 'kcast gpus').  The instances of a template count as\n"
    "     one kernel, its sizes theirs (a size held out is one program input:\n"
    "     one instance at one size); --instances counts each instance as a\n"
    "     kernel of its own.\n"
    "\n"
    "Exit status: 0 ok, 1 bad input (no such kernel, too few launches, a bad\n"
    "file), 2 bad command line.\n";

/* ------------------------------------------------------------ loading -- */

/* The launches of one (app, kernel), or of one (app, kernel template):
   the instances whose names differ only in integer template arguments. */
typedef struct kgroup {
  char *app, *kernel;  /* kernel: the mangled name, or the template key */
  size_t ntpl;         /* template variables (0: one kernel) */
  double *targs;       /* n*FM_MAX_TPL: each launch's template arguments */
  size_t ninst;        /* instances (distinct mangled names) */
  char **inst;         /* their names (owned) */
  size_t n, cap;
  int64_t *id;
  char **size;         /* dataset labels (owned) */
  uint32_t *grid, *block;
  uint64_t *shmem;
  feat_vec *feats;     /* loaded by group_features */
  /* the fm_rows view (group_rows) */
  size_t nf;
  char **names;        /* borrowed from feats */
  double *x;
} kgroup;

static void group_free(kgroup *g) {
  for (size_t i = 0; i < g->n; i++) {
    free(g->size[i]);
    if (g->feats) feat_free(&g->feats[i]);
  }
  free(g->app);
  free(g->kernel);
  free(g->targs);
  for (size_t i = 0; i < g->ninst; i++) free(g->inst[i]);
  free(g->inst);
  free(g->id);
  free(g->size);
  free(g->grid);
  free(g->block);
  free(g->shmem);
  free(g->feats);
  free(g->names);
  free(g->x);
  memset(g, 0, sizeof *g);
}

static int group_add(kgroup *g, int64_t id, const ds_launch *l, const double *targs) {
  if (g->n == g->cap) {
    size_t nc = g->cap ? 2 * g->cap : 16;
    int64_t *a = realloc(g->id, nc * sizeof *a);
    if (a) g->id = a;
    char **b = realloc(g->size, nc * sizeof *b);
    if (b) g->size = b;
    uint32_t *c = realloc(g->grid, nc * 3 * sizeof *c);
    if (c) g->grid = c;
    uint32_t *d = realloc(g->block, nc * 3 * sizeof *d);
    if (d) g->block = d;
    uint64_t *e = realloc(g->shmem, nc * sizeof *e);
    if (e) g->shmem = e;
    double *t = realloc(g->targs, nc * FM_MAX_TPL * sizeof *t);
    if (t) g->targs = t;
    if (!a || !b || !c || !d || !e || !t) return -1;
    g->cap = nc;
  }
  size_t i = g->n, j;
  for (j = 0; j < g->ninst; j++)
    if (!strcmp(g->inst[j], l->kernel)) break;
  if (j == g->ninst) {
    char **t = realloc(g->inst, (g->ninst + 1) * sizeof *t);
    if (!t) return -1;
    g->inst = t;
    if (!(g->inst[g->ninst] = strdup(l->kernel))) return -1;
    g->ninst++;
  }
  if (!(g->size[i] = strdup(l->dataset))) return -1;
  g->id[i] = id;
  memcpy(g->grid + 3 * i, l->grid, 3 * sizeof *g->grid);
  memcpy(g->block + 3 * i, l->block, 3 * sizeof *g->block);
  g->shmem[i] = l->shmem > 0 ? (uint64_t)l->shmem : 0;
  for (size_t t = 0; t < FM_MAX_TPL; t++) g->targs[i * FM_MAX_TPL + t] = t < g->ntpl ? targs[t] : 0;
  g->n++;
  return 0;
}

/* How one mangled name of the dataset is grouped (load_groups caches it:
   demangling once per kernel, not per launch). */
typedef struct kname {
  char *mangled;
  char *key;                 /* group key: template key, or the mangled name */
  size_t ntpl;
  double targs[FM_MAX_TPL];
  int match;                 /* selected by --kernel */
} kname;

/* Classify mangled against want (NULL: every kernel).  A template pattern
   (want with template arguments, one of them a variable: "k<T>") selects
   the instances of that template, grouped by template key; otherwise
   want is a kernel as every --kernel names one, and templates groups
   instances by their key when want is NULL.  -1 (printed) when want is a
   template pattern that meets a non-integer argument. */
static int classify(const char *db_path, const char *mangled, const char *want, int templates,
                    kname *k) {
  memset(k, 0, sizeof *k);
  double v[FM_MAX_TPL];
  size_t nv = 0;
  char why[512];
  int tm = want ? fe_template_args(mangled, want, v, FM_MAX_TPL, &nv, why, sizeof why) : 0;
  if (tm < 0) {
    cli_error("%s: --kernel '%s': %s", db_path, want, why);
    return -1;
  }
  char key[2048];
  size_t nt = 0;
  if (tm == 1 && nv > 0) {
    nt = fe_template_key(mangled, key, sizeof key, k->targs, FM_MAX_TPL);
    k->match = nt > 0;
  } else {
    k->match = !want || !strcmp(mangled, want) || fe_name_match(mangled, want) > 0;
    if (templates && !want) nt = fe_template_key(mangled, key, sizeof key, k->targs, FM_MAX_TPL);
  }
  k->ntpl = nt;
  k->mangled = strdup(mangled);
  k->key = strdup(nt ? key : mangled);
  return k->mangled && k->key ? 0 : -2;
}

/* Every (app, kernel) of db (only app / kernel when given) into *out;
   templates: instances of one template form one group (always so when
   kernel is a template pattern). */
static int load_groups(ds_db *db, const char *db_path, const char *app, const char *kernel,
                       int templates, kgroup **out, size_t *nout) {
  *out = NULL;
  *nout = 0;
  ds_iter *it = NULL;
  if (ds_iter_launches(db, app, NULL, &it)) {
    cli_error("%s", ds_errmsg(db));
    return -1;
  }
  kgroup *g = NULL;
  size_t ng = 0, cap = 0;
  kname *kn = NULL;
  size_t nkn = 0, kcap = 0;
  int64_t id;
  ds_launch l;
  int r, failed = 0;
  while ((r = ds_iter_next(it, &id, &l)) == 1) {
    size_t c;
    for (c = 0; c < nkn; c++)
      if (!strcmp(kn[c].mangled, l.kernel)) break;
    if (c == nkn) {
      if (nkn == kcap) {
        size_t nc = kcap ? 2 * kcap : 16;
        kname *t = realloc(kn, nc * sizeof *t);
        if (!t) goto nomem;
        kn = t;
        kcap = nc;
      }
      int cr = classify(db_path, l.kernel, kernel, templates, &kn[nkn]);
      if (cr == -1) {
        failed = 1;
        break;
      }
      nkn++;
      if (cr) goto nomem;
    }
    const kname *K = &kn[c];
    if (!K->match) continue;
    size_t k;
    for (k = 0; k < ng; k++)
      if (!strcmp(g[k].kernel, K->key) && !strcmp(g[k].app, l.app)) break;
    if (k == ng) {
      if (ng == cap) {
        size_t nc = cap ? 2 * cap : 16;
        kgroup *t = realloc(g, nc * sizeof *t);
        if (!t) goto nomem;
        g = t;
        cap = nc;
      }
      memset(&g[ng], 0, sizeof g[ng]);
      g[ng].app = strdup(l.app);
      g[ng].kernel = strdup(K->key);
      g[ng].ntpl = K->ntpl;
      ng++;
      if (!g[k].app || !g[k].kernel) goto nomem;
    }
    if (group_add(&g[k], id, &l, K->targs)) goto nomem;
  }
  ds_iter_free(it);
  for (size_t c = 0; c < nkn; c++) free(kn[c].mangled), free(kn[c].key);
  free(kn);
  if (r < 0 || failed) {
    if (r < 0) cli_error("%s", ds_errmsg(db));
    for (size_t k = 0; k < ng; k++) group_free(&g[k]);
    free(g);
    return -1;
  }
  *out = g;
  *nout = ng;
  return 0;
nomem:
  ds_iter_free(it);
  for (size_t c = 0; c < nkn; c++) free(kn[c].mangled), free(kn[c].key);
  free(kn);
  for (size_t k = 0; k < ng; k++) group_free(&g[k]);
  free(g);
  cli_error("out of memory");
  return -1;
}

/* Load the group's features and build its fm_rows view. */
static int group_rows(ds_db *db, kgroup *g, fm_rows *r) {
  g->feats = calloc(g->n, sizeof *g->feats);
  if (!g->feats) goto nomem;
  feat_vec all;
  feat_init(&all);
  for (size_t i = 0; i < g->n; i++) {
    feat_init(&g->feats[i]);
    if (ds_get_features(db, g->id[i], &g->feats[i])) {
      feat_free(&all);
      cli_error("%s", ds_errmsg(db));
      return -1;
    }
    for (size_t j = 0; j < g->feats[i].n; j++)
      if (feat_find(&all, g->feats[i].names[j]) < 0 && feat_set(&all, g->feats[i].names[j], 0)) {
        feat_free(&all);
        goto nomem;
      }
  }
  /* the template variables: columns tpl.0 .. after the features */
  static char tpl_names[FM_MAX_TPL][8] = {"tpl.0", "tpl.1", "tpl.2", "tpl.3",
                                          "tpl.4", "tpl.5", "tpl.6", "tpl.7"};
  size_t nf = all.n + g->ntpl;
  g->nf = nf;
  g->names = malloc((nf ? nf : 1) * sizeof *g->names);
  g->x = malloc((g->n * nf + 1) * sizeof *g->x);
  if (!g->names || !g->x) {
    feat_free(&all);
    goto nomem;
  }
  /* names borrowed from a launch's vector that holds them */
  for (size_t j = 0; j < all.n; j++) {
    g->names[j] = NULL;
    for (size_t i = 0; i < g->n && !g->names[j]; i++) {
      long at = feat_find(&g->feats[i], all.names[j]);
      if (at >= 0) g->names[j] = g->feats[i].names[at];
    }
  }
  for (size_t t = 0; t < g->ntpl; t++) g->names[all.n + t] = tpl_names[t];
  for (size_t i = 0; i < g->n; i++) {
    for (size_t j = 0; j < all.n; j++) {
      long at = feat_find(&g->feats[i], all.names[j]);
      g->x[i * nf + j] = at >= 0 ? g->feats[i].vals[at] : NAN;
    }
    for (size_t t = 0; t < g->ntpl; t++) g->x[i * nf + all.n + t] = g->targs[i * FM_MAX_TPL + t];
  }
  feat_free(&all);
  memset(r, 0, sizeof *r);
  r->n = g->n;
  r->grid = g->grid;
  r->block = g->block;
  r->shmem = g->shmem;
  r->size = (const char *const *)g->size;
  r->nf = g->nf;
  r->names = (const char *const *)g->names;
  r->x = g->x;
  return 0;
nomem:
  cli_error("out of memory");
  return -1;
}

static size_t distinct_sizes(const kgroup *g) {
  size_t n = 0;
  for (size_t i = 0; i < g->n; i++) {
    size_t j;
    for (j = 0; j < i; j++)
      if (!strcmp(g->size[i], g->size[j])) break;
    n += j == i;
  }
  return n;
}

static int parse_error_limit(const char *v, double *out) {
  char *e;
  double x = strtod(v, &e);
  if (*e || e == v || !(x >= 0) || !isfinite(x))
    return cli_usage_error("featmodel", "--max-error '%s' is not a number >= 0 (a fraction: 0.05 = 5 %%)", v);
  *out = x;
  return 0;
}

/* ---------------------------------------------------------------- fit -- */

static int featmodel_fit(int argc, char **argv) {
  const char *db_path = NULL, *kernel = NULL, *app = NULL, *out = NULL;
  double limit = 0.05;
  enum { F_KERNEL = CLI_OPT_OWN, F_APP, F_MAXERR };
  static const struct option opts[] = {{"kernel", required_argument, NULL, F_KERNEL},
                                       {"app", required_argument, NULL, F_APP},
                                       {"max-error", required_argument, NULL, F_MAXERR},
                                       {"output", required_argument, NULL, 'o'},
                                       {NULL, 0, NULL, 0}};
  cli_opts o;
  cli_opts_init(&o, "featmodel", argc, argv, "o:", 0);
  cli_opts_add(&o, opts);
  for (int c; (c = cli_opts_next(&o)) != CLI_OPT_END;) {
    switch (c) {
      case CLI_OPT_ERR: return o.status;
      case F_KERNEL: kernel = o.arg; break;
      case F_APP: app = o.arg; break;
      case 'o': out = o.arg; break;
      default:
        if (parse_error_limit(o.arg, &limit)) return KCAST_EXIT_USAGE;
        break;
    }
  }
  if (CLI_NOPERANDS(&o) > 1)
    return cli_usage_error("featmodel", "fit: unexpected argument '%s'", CLI_OPERANDS(&o)[1]);
  if (CLI_NOPERANDS(&o) == 1) db_path = CLI_OPERANDS(&o)[0];
  if (!db_path) return cli_usage_error("featmodel", "fit: give the dataset DB");
  if (!kernel) return cli_usage_error("featmodel", "fit: give --kernel K");
  if (!out) return cli_usage_error("featmodel", "fit: give -o FILE.kcf");
  char err[1024] = "";
  ds_db *db = NULL;
  if (ds_open(db_path, DS_READONLY, &db, err, sizeof err)) {
    cli_error("%s", err);
    return KCAST_EXIT_USER;
  }
  kgroup *g = NULL;
  size_t ng = 0;
  int rc = KCAST_EXIT_USER;
  fm_model *m = NULL;
  if (load_groups(db, db_path, app, kernel, 0, &g, &ng)) goto out;
  if (ng == 0) {
    cli_error("%s: no launches of kernel '%s'%s%s%s", db_path, kernel, app ? " in app " : "",
              app ? app : "",
              strchr(kernel, '<') ? " (no kernel of that name, nor a template with those "
                                    "arguments)" : "");
    goto out;
  }
  if (ng > 1) {
    fprintf(stderr, "kcast: %s: '%s' names %zu kernels; give the mangled name or --app", db_path,
            kernel, ng);
    /* instances of one template: say how to name the template */
    char key[2048], src[1024];
    double tv[FM_MAX_TPL];
    if (fe_template_key(g[0].kernel, key, sizeof key, tv, FM_MAX_TPL)) {
      fe_demangled_name(key, src, sizeof src);
      fprintf(stderr, ", or the template as one kernel (--kernel '%s')", src);
    }
    fputc(':', stderr);
    for (size_t k = 0; k < ng && k < 16; k++) fprintf(stderr, " %s (%s)", g[k].kernel, g[k].app);
    if (ng > 16) fprintf(stderr, " ... (%zu in all)", ng);
    fputc('\n', stderr);
    goto out;
  }
  fm_rows r;
  if (group_rows(db, &g[0], &r)) goto out;
  if (fm_fit(&r, NULL, g[0].kernel, g[0].app, &m)) {
    /* most of fm_fit's messages start with the kernel's name already */
    const char *e = rf_last_error();
    size_t kl = strlen(g[0].kernel);
    if (!strncmp(e, g[0].kernel, kl) && e[kl] == ':') cli_error("%s: kernel %s", db_path, e);
    else cli_error("%s: kernel %s: %s", db_path, g[0].kernel, e);
    goto out;
  }
  double herr;
  unsigned hs;
  if (fm_validate(&r, &herr, &hs, NULL, NULL)) {
    cli_error("%s", rf_last_error());
    goto out;
  }
  fm_set_heldout(m, herr, hs, limit);
  if (fm_save(m, out)) {
    cli_error("%s", rf_last_error());
    goto out;
  }
  fm_info in;
  fm_get_info(m, &in);
  fprintf(stderr, "kcast: %s: %s from %zu launches at %zu sizes", out, g[0].kernel,
          in.nlaunches, in.nsizes);
  if (g[0].ntpl)
    fprintf(stderr, " of %zu instances (%zu template variable%s)", g[0].ninst, g[0].ntpl,
            g[0].ntpl == 1 ? "" : "s");
  fprintf(stderr, ": %zu features (%zu exact, %zu power laws, %zu least squares, %zu constant, "
          "%zu from the launch); ", in.nout, in.n_exact, in.n_power, in.n_linear, in.n_const,
          in.n_derived);
  if (isnan(herr))
    fprintf(stderr, "held-out error not measurable (%u size%s could be held out): flagged "
            "unreliable\n", hs, hs == 1 ? "" : "s");
  else
    fprintf(stderr, "held-out error %.2f %% over %u sizes%s\n", 100 * herr, hs,
            herr > limit ? ": above --max-error, flagged unreliable" : "");
  rc = KCAST_EXIT_OK;
out:
  fm_free(m);
  for (size_t k = 0; k < ng; k++) group_free(&g[k]);
  free(g);
  ds_close(db);
  return rc;
}

/* --------------------------------------------------------------- info -- */

/* featmodel info --format json: what the table says, as one object (the
   forms always). */
static int info_json(const char *path, const fm_model *m, const fm_info *in, const char *date) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return -1;
  cJSON_AddStringToObject(o, "feature_model", path);
  cJSON_AddStringToObject(o, "kernel", in->kernel);
  if (in->app[0]) cJSON_AddStringToObject(o, "app", in->app);
  else cJSON_AddNullToObject(o, "app");
  cJSON *a = cJSON_AddArrayToObject(o, "arguments");
  for (size_t k = 0; k < in->nargs; k++) {
    char nm[32];
    snprintf(nm, sizeof nm, "arg.%u", in->arg_param[k]);
    cJSON_AddItemToArray(a, cJSON_CreateString(nm));
  }
  cJSON *tp = cJSON_AddArrayToObject(o, "template");
  for (size_t v = 0; v < in->ntpl; v++) {
    double lo, hi;
    fm_tpl_range(m, v, &lo, &hi);
    cJSON *r = cJSON_CreateArray();
    cJSON_AddItemToArray(r, cJSON_CreateNumber(lo));
    cJSON_AddItemToArray(r, cJSON_CreateNumber(hi));
    cJSON_AddItemToArray(tp, r);
  }
  cJSON *tr = cJSON_AddObjectToObject(o, "trained");
  cJSON_AddNumberToObject(tr, "launches", (double)in->nlaunches);
  cJSON_AddNumberToObject(tr, "sizes", (double)in->nsizes);
  cJSON_AddStringToObject(tr, "created", date);
  cJSON *fc = cJSON_AddObjectToObject(o, "features");
  cJSON_AddNumberToObject(fc, "count", (double)in->nout);
  cJSON_AddNumberToObject(fc, "exact", (double)in->n_exact);
  cJSON_AddNumberToObject(fc, "power", (double)in->n_power);
  cJSON_AddNumberToObject(fc, "least_squares", (double)in->n_linear);
  cJSON_AddNumberToObject(fc, "constant", (double)in->n_const);
  cJSON_AddNumberToObject(fc, "from_launch", (double)in->n_derived);
  cJSON *ho = cJSON_AddObjectToObject(o, "heldout");
  if (isnan(in->heldout_error)) cJSON_AddNullToObject(ho, "error");
  else cJSON_AddNumberToObject(ho, "error", in->heldout_error);
  cJSON_AddNumberToObject(ho, "sizes", in->heldout_sizes);
  cJSON_AddNumberToObject(ho, "limit", in->limit);
  cJSON_AddBoolToObject(ho, "unreliable", isnan(in->heldout_error) || in->heldout_error > in->limit);
  cJSON *fo = cJSON_AddObjectToObject(o, "forms");
  char buf[512];
  for (size_t i = 0; i < fm_nout(m); i++) {
    fm_out_form(m, i, buf, sizeof buf);
    cJSON_AddStringToObject(fo, fm_out_name(m, i), buf);
  }
  char *txt = cJSON_Print(o);
  cJSON_Delete(o);
  if (!txt) return -1;
  puts(txt);
  free(txt);
  return 0;
}

static int featmodel_info(int argc, char **argv) {
  const char *path = NULL;
  int forms = 0, fmt = CLI_FMT_TABLE;
  static const struct option opts[] = {{"forms", no_argument, NULL, CLI_OPT_OWN},
                                       {"format", required_argument, NULL, 'f'},
                                       {NULL, 0, NULL, 0}};
  cli_opts o;
  cli_opts_init(&o, "featmodel", argc, argv, "", 0);
  cli_opts_add(&o, opts);
  for (int c; (c = cli_opts_next(&o)) != CLI_OPT_END;) {
    if (c == CLI_OPT_ERR) return o.status;
    if (c == 'f') {
      fmt = cli_parse_format(o.arg);
      if (fmt != CLI_FMT_TABLE && fmt != CLI_FMT_JSON)
        return cli_usage_error("featmodel", "info: --format is table or json, not '%s'", o.arg);
      continue;
    }
    forms = 1;
  }
  if (CLI_NOPERANDS(&o) > 1)
    return cli_usage_error("featmodel", "info: unexpected argument '%s'", CLI_OPERANDS(&o)[1]);
  if (CLI_NOPERANDS(&o) == 1) path = CLI_OPERANDS(&o)[0];
  if (!path) return cli_usage_error("featmodel", "info: give the model FILE.kcf");
  fm_model *m = NULL;
  if (fm_load(path, &m)) {
    cli_error("%s", rf_last_error());
    return KCAST_EXIT_USER;
  }
  fm_info in;
  fm_get_info(m, &in);
  char date[64] = "?";
  time_t t = (time_t)in.created;
  struct tm tm;
  if (gmtime_r(&t, &tm)) strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S UTC", &tm);
  if (fmt == CLI_FMT_JSON) {
    char iso[64] = "";
    if (gmtime_r(&t, &tm)) strftime(iso, sizeof iso, "%Y-%m-%dT%H:%M:%SZ", &tm);
    int jr = info_json(path, m, &in, iso);
    fm_free(m);
    if (jr) cli_error("out of memory");
    return jr ? KCAST_EXIT_USER : KCAST_EXIT_OK;
  }
  printf("feature model  %s\n", path);
  printf("kernel         %s\n", in.kernel);
  if (in.app[0]) printf("app            %s\n", in.app);
  printf("arguments      ");
  if (!in.nargs) printf("none read");
  for (size_t a = 0; a < in.nargs; a++) printf("%sarg.%u", a ? ", " : "", in.arg_param[a]);
  putchar('\n');
  if (in.ntpl) {
    printf("template       %zu variable%s:", in.ntpl, in.ntpl == 1 ? "" : "s");
    for (size_t v = 0; v < in.ntpl; v++) {
      double lo, hi;
      fm_tpl_range(m, v, &lo, &hi);
      printf("%s T%zu in [%.17g, %.17g]", v ? "," : "", v, lo, hi);
    }
    putchar('\n');
  }
  if (in.ntpl)
    printf("blocks         %s\n", in.ninst ? "each instance ran with one block: a fill with another "
                                               "(or, for a new instance, against the rule they "
                                               "follow) is flagged"
                                             : "free (an instance ran with several)");
  printf("trained        %zu launches at %zu sizes, %s\n", in.nlaunches, in.nsizes, date);
  printf("features       %zu: %zu exact polynomials, %zu power laws, %zu least squares, %zu "
         "constant, %zu from the launch\n", in.nout, in.n_exact, in.n_power, in.n_linear,
         in.n_const, in.n_derived);
  if (isnan(in.heldout_error))
    printf("held-out       not measured (%u size%s held out): answers are flagged unreliable\n",
           in.heldout_sizes, in.heldout_sizes == 1 ? "" : "s");
  else
    printf("held-out       %.2f %% median error of class.* and mem.* over %u sizes (limit "
           "%.2f %%)%s\n", 100 * in.heldout_error, in.heldout_sizes, 100 * in.limit,
           in.heldout_error > in.limit ? ": answers are flagged unreliable" : "");
  if (forms) {
    char buf[512];
    for (size_t i = 0; i < fm_nout(m); i++) {
      fm_out_form(m, i, buf, sizeof buf);
      printf("  %-36s %s\n", fm_out_name(m, i), buf);
    }
  }
  fm_free(m);
  return KCAST_EXIT_OK;
}

/* ----------------------------------------------------------- validate -- */

/* Time predictor of the validation: the analytic estimate on g, or the
   forest f on gpu. */
typedef struct timer {
  const an_gpu *g;
  const rf_forest *f;
  const char *gpu;
  double *row;
} timer;

/* Predicted time (us) of the launch names/vals describe; NaN when it
   cannot be computed. */
static double predict_time(timer *t, const char *const *names, const double *vals, size_t n) {
  if (!t->f) {
    an_estimate est;
    if (an_estimate_launch(t->g, names, vals, n, &est)) return NAN;
    return est.time_us;
  }
  const rf_info *info = rf_get_info(t->f);
  md_cache dc = {0};
  for (size_t j = 0; j < info->n_features; j++) {
    const char *want = info->features[j];
    long at = -1;
    for (size_t k = 0; k < n && at < 0; k++)
      if (!strcmp(names[k], want)) at = (long)k;
    if (at >= 0) {
      t->row[j] = vals[at];
      continue;
    }
    int got = md_value(&dc, want, t->gpu, names, vals, n, &t->row[j]);
    if (got < 0) return NAN;
    if (!got) t->row[j] = ds_feature_default(want);
  }
  return rf_predict(t->f, t->row) / 1e3;
}

typedef struct vctx {
  kgroup *g;
  timer *t;
  double *terr;
  size_t nterr;
  size_t extrap;
  const char **names;   /* scratch: the launch's names for the predictor */
  double *vals;
} vctx;

static void on_heldout(void *ctx, size_t row, const fm_model *m, const double *pred,
                       unsigned flags) {
  vctx *v = ctx;
  if (flags & FM_EXTRAPOLATED) v->extrap++;
  const feat_vec *emu = &v->g->feats[row];
  double te = predict_time(v->t, (const char *const *)emu->names, emu->vals, emu->n);
  size_t n = fm_nout(m);
  for (size_t k = 0; k < n; k++) v->names[k] = fm_out_name(m, k), v->vals[k] = pred[k];
  double tf = predict_time(v->t, v->names, v->vals, n);
  if (isfinite(te) && isfinite(tf) && te > 0) v->terr[v->nterr++] = fabs(tf - te) / te;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *x, size_t n) {
  if (!n) return NAN;
  qsort(x, n, sizeof *x, cmp_double);
  return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

static int featmodel_validate(int argc, char **argv) {
  const char *db_path = NULL, *kernel = NULL, *app = NULL, *gpu = NULL, *model = NULL;
  double limit = 0.05;
  int fmt = CLI_FMT_TABLE, instances = 0;
  enum { V_KERNEL = CLI_OPT_OWN, V_APP, V_GPU, V_MODEL, V_MAXERR, V_FORMAT, V_INSTANCES };
  static const struct option opts[] = {{"kernel", required_argument, NULL, V_KERNEL},
                                       {"app", required_argument, NULL, V_APP},
                                       {"gpu", required_argument, NULL, V_GPU},
                                       {"model", required_argument, NULL, V_MODEL},
                                       {"max-error", required_argument, NULL, V_MAXERR},
                                       {"format", required_argument, NULL, V_FORMAT},
                                       {"instances", no_argument, NULL, V_INSTANCES},
                                       {NULL, 0, NULL, 0}};
  cli_opts o;
  cli_opts_init(&o, "featmodel", argc, argv, "", 0);
  cli_opts_add(&o, opts);
  cli_opts_add(&o, cli_gpus_longopts);
  for (int c; (c = cli_opts_next(&o)) != CLI_OPT_END;) {
    switch (c) {
      case CLI_OPT_ERR: return o.status;
      case V_KERNEL: kernel = o.arg; break;
      case V_APP: app = o.arg; break;
      case V_GPU: gpu = o.arg; break;
      case V_MODEL: model = o.arg; break;
      case V_INSTANCES: instances = 1; break;
      case V_MAXERR:
        if (parse_error_limit(o.arg, &limit)) return KCAST_EXIT_USAGE;
        break;
      default:
        fmt = cli_parse_format(o.arg);
        if (fmt != CLI_FMT_TABLE && fmt != CLI_FMT_CSV)
          return cli_usage_error("featmodel", "validate: --format is table or csv, not '%s'", o.arg);
        break;
    }
  }
  if (CLI_NOPERANDS(&o) > 1)
    return cli_usage_error("featmodel", "validate: unexpected argument '%s'", CLI_OPERANDS(&o)[1]);
  if (CLI_NOPERANDS(&o) == 1) db_path = CLI_OPERANDS(&o)[0];
  if (!db_path) return cli_usage_error("featmodel", "validate: give the dataset DB");
  timer t = {0};
  rf_forest *f = NULL;
  int rc = KCAST_EXIT_USER;
  if (model) {
    if (cli_model_load(model, &f)) {
      cli_error("%s", rf_last_error());
      return rc;
    }
    const char *mg = rf_get_info(f)->gpu;
    t.gpu = gpu ? gpu : mg;
    if (!t.gpu || !*t.gpu || strchr(t.gpu, ',')) {
      cli_error("%s: trained on '%s': give --gpu G", model, mg ? mg : "");
      rf_free(f);
      return rc;
    }
    t.f = f;
    t.row = malloc((rf_get_info(f)->n_features + 1) * sizeof *t.row);
    if (!t.row) {
      rf_free(f);
      cli_error("out of memory");
      return rc;
    }
  } else {
    t.gpu = gpu ? gpu : "H200";
    if (!(t.g = an_gpu_find(t.gpu))) {
      cli_unknown_gpu(NULL, t.gpu, 0);
      return rc;
    }
  }
  char err[1024] = "";
  ds_db *db = NULL;
  kgroup *g = NULL;
  size_t ng = 0;
  if (ds_open(db_path, DS_READONLY, &db, err, sizeof err)) {
    cli_error("%s", err);
    goto out;
  }
  if (load_groups(db, db_path, app, kernel, !instances, &g, &ng)) goto out;
  if (ng == 0) {
    cli_error("%s: no launches%s%s", db_path, kernel ? " of kernel " : "", kernel ? kernel : "");
    goto out;
  }
  if (fmt == CLI_FMT_CSV)
    printf("app,kernel,instances,sizes,launches,args,feature_error,time_error,extrapolated,"
           "status\n");
  else
    printf("%-18s %-44s %5s %8s %4s %9s %9s  %s\n", "app", "kernel", "sizes", "launches",
           "args", "feat.err", "time.err", "status");
  size_t modelled = 0, measured = 0, ntemplates = 0, ntinst = 0, tmodelled = 0;
  double *ferrs = calloc(ng, sizeof *ferrs);
  if (!ferrs) {
    cli_error("out of memory");
    goto out;
  }
  char notes[4096] = "";
  size_t nl = 0;
  for (size_t k = 0; k < ng; k++) {
    fm_rows r;
    if (group_rows(db, &g[k], &r)) goto out2;
    vctx v = {0};
    v.g = &g[k];
    v.t = &t;
    v.terr = malloc((g[k].n + 1) * sizeof *v.terr);
    v.names = malloc((g[k].nf + 16) * sizeof *v.names);
    v.vals = malloc((g[k].nf + 16) * sizeof *v.vals);
    if (!v.terr || !v.names || !v.vals) {
      free(v.terr), free(v.names), free(v.vals);
      cli_error("out of memory");
      goto out2;
    }
    double fe;
    unsigned hs;
    size_t nargs = 0;
    for (size_t j = 0; j < g[k].nf; j++) nargs += !strncmp(g[k].names[j], "arg.", 4);
    nargs += g[k].ntpl; /* the template variables are inputs as the arguments are */
    if (fm_validate(&r, &fe, &hs, on_heldout, &v)) {
      free(v.terr), free(v.names), free(v.vals);
      cli_error("%s", rf_last_error());
      goto out2;
    }
    double te = median(v.terr, v.nterr);
    size_t ns = distinct_sizes(&g[k]);
    const char *status;
    if (isnan(fe)) status = ns < 3 ? "not modelled: fewer than 3 sizes"
                                   : "not modelled: too few distinct launches to hold sizes out";
    else if (fe > limit) status = "not modelled: held-out error above the limit";
    else status = "modelled";
    if (!isnan(fe)) ferrs[measured++] = fe;
    modelled += !isnan(fe) && fe <= limit;
    if (g[k].ntpl) {
      ntemplates++;
      ntinst += g[k].ninst;
      tmodelled += !isnan(fe) && fe <= limit;
    }
    /* a template by its source name with T0, T1, ... in the table */
    char shown[1024];
    if (g[k].ntpl) fe_demangled_name(g[k].kernel, shown, sizeof shown);
    else snprintf(shown, sizeof shown, "%s", g[k].kernel);
    if (fmt == CLI_FMT_CSV) {
      cli_csv_field(stdout, g[k].app);
      putchar(',');
      cli_csv_field(stdout, g[k].kernel);
      printf(",%zu,%zu,%zu,%zu,", g[k].ninst, ns, g[k].n, nargs);
      if (!isnan(fe)) printf("%.6g", fe);
      putchar(',');
      if (!isnan(te)) printf("%.6g", te);
      printf(",%zu,%s\n", v.extrap, status);
    } else {
      char fs[32] = "-", ts[32] = "-";
      if (!isnan(fe)) snprintf(fs, sizeof fs, "%.2f %%", 100 * fe);
      if (!isnan(te)) snprintf(ts, sizeof ts, "%.2f %%", 100 * te);
      printf("%-18s %-44s %5zu %8zu %4zu %9s %9s  %s\n", g[k].app, shown, ns, g[k].n, nargs, fs,
             ts, status);
    }
    if (fe > limit && nl < sizeof notes - 64)
      nl += (size_t)snprintf(notes + nl, sizeof notes - nl, "%s%s", nl ? ", " : "", g[k].app);
    free(v.terr), free(v.names), free(v.vals);
    for (size_t i = 0; i < g[k].n; i++) feat_free(&g[k].feats[i]);
    free(g[k].feats), g[k].feats = NULL;
    free(g[k].names), g[k].names = NULL;
    free(g[k].x), g[k].x = NULL;
  }
  double med = median(ferrs, measured);
  /* the summary ends the table; beside a csv it goes to stderr */
  fprintf(fmt == CLI_FMT_CSV ? stderr : stdout, "%s%zu kernels; %zu could be validated (3+ sizes or varied launches), "
          "median feature error %.2f %%; %zu within %.1f %% (%.0f %% of the validated, %.0f %% "
          "of all); time predicted on %s by %s\n", fmt == CLI_FMT_CSV ? "kcast: " : "\n", ng,
          measured,
          isnan(med) ? NAN : 100 * med, modelled, 100 * limit,
          measured ? 100.0 * (double)modelled / (double)measured : 0.0,
          100.0 * (double)modelled / (double)ng, t.gpu, model ? model : "the analytic estimate");
  if (ntemplates)
    fprintf(fmt == CLI_FMT_CSV ? stderr : stdout, "%s%zu of the kernels %s template%s (%zu "
            "instances, each counted once with its template; --instances counts each instance "
            "as a kernel), %zu of them within %.1f %%\n", fmt == CLI_FMT_CSV ? "kcast: " : "",
            ntemplates, ntemplates == 1 ? "is a" : "are", ntemplates == 1 ? "" : "s", ntinst,
            tmodelled, 100 * limit);
  rc = KCAST_EXIT_OK;
out2:
  free(ferrs);
out:
  for (size_t k = 0; k < ng; k++) group_free(&g[k]);
  free(g);
  ds_close(db);
  free(t.row);
  rf_free(f);
  return rc;
}

int cmd_featmodel(int argc, char **argv) {
  if (argc < 2) return cli_usage_error("featmodel", "give a subcommand: fit, info or validate");
  const char *sub = argv[1];
  if (!strcmp(sub, "fit")) return featmodel_fit(argc - 1, argv + 1);
  if (!strcmp(sub, "info")) return featmodel_info(argc - 1, argv + 1);
  if (!strcmp(sub, "validate")) return featmodel_validate(argc - 1, argv + 1);
  static const char *const subs[] = {"fit", "info", "validate"};
  return cli_unknown_subcommand("featmodel", sub, subs, 3);
}
