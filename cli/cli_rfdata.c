/*
 * cli_rfdata.c -- the training input of `kcast train` and `kcast cv`: the
 * options, loading a CSV or a dataset into the forest's matrix, the feature
 * families and derived columns, the target transform and the base column.
 *
 * Input is either `--csv FILE --target COLUMN` (any numeric table: the
 * tuning data, exports) or `DB --gpu G[,G...]|all --target time|power|energy`
 * (a kcast dataset: datasets/ds.h's matrix query, features of every family,
 * median of the repeated measurements, group = the launch's app).  Each row
 * has a GPU: --gpu names it for all rows, a dataset loaded for several GPUs
 * has one row per (launch, GPU) measured, and a CSV's --gpu-column (default
 * `gpu` when the file has one and --gpu is not given) names each row's.
 *
 * Defaults, chosen by `make accuracy` on real GPU timings (docs/
 * accuracy.md): every loaded column plus the derived families work, occ and
 * analytic (occ and analytic only when every row's GPU is in the GPU table;
 * gpu as well when the rows span several GPUs); a log target when every
 * target is positive; and for a time, power or energy target the analytic
 * estimate as the base (rf_params.base_feature): the forest learns the
 * ratio of the measured value to the estimate, which carries the scale of
 * each GPU and of each launch's work, so it holds for launches and GPUs
 * outside the training rows where a plain forest can only repeat the
 * nearest training value.
 */
#include "cli/cli.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "datasets/ds.h"
#include "model/model.h"

/* ------------------------------------------------------------- helpers -- */

int cli_parse_uint(const char *s, unsigned long max, unsigned long *out) {
  char *e;
  if (!s || !*s || *s == '-') return -1;
  unsigned long long v = strtoull(s, &e, 10);
  if (*e || v > max) return -1;
  *out = (unsigned long)v;
  return 0;
}

/* Is tok (len bytes) one of the comma list's items? */
static int has_item(const char *list, const char *tok, size_t tl) {
  for (const char *t = list; t && *t;) {
    const char *e = strchr(t, ',');
    size_t n = e ? (size_t)(e - t) : strlen(t);
    if (n == tl && !strncmp(t, tok, n)) return 1;
    if (!e) return 0;
    t = e + 1;
  }
  return 0;
}
static int has_token(const char *list, const char *tok) { return has_item(list, tok, strlen(tok)); }

/* ------------------------------------------------------ feature families -- */

/* Families of loaded columns (the part of a name before its first dot);
   "all" keeps every loaded column.  The derived families are model/
   derived.c's words (mangrove, analytic, work, occ, gpu). */
static const char *const families[] = {"all",  "launch", "op",    "class", "mem",
                                       "ctrl", "static", "ptxas", "opr"};
#define N_FAMILIES (sizeof families / sizeof *families)

/* Is name's family in the comma list?  Derived columns are never
   selected here (derive() makes them). */
static int in_families(const char *list, const char *name) {
  if (md_family_of(name) >= 0) return 0;
  if (has_token(list, "all")) return 1;
  const char *dot = strchr(name, '.');
  return has_item(list, name, dot ? (size_t)(dot - name) : strlen(name));
}

/* A comma list of family names (letters, digits, '_'), none empty; a name
   that is neither a known family nor a derived one must match some loaded
   column (a CSV's own prefix such as tune.*: checked after loading). */
static int valid_families(const char *list) {
  for (const char *t = list;;) {
    const char *e = strchr(t, ',');
    size_t n = e ? (size_t)(e - t) : strlen(t);
    if (!n) return 0;
    for (size_t k = 0; k < n; k++)
      if (!isalnum((unsigned char)t[k]) && t[k] != '_') return 0;
    if (!e) return 1;
    t = e + 1;
  }
}

/* Every item of list is a family of the built-in list, a derived family or
   the prefix of some column of d; else one error naming it. */
static int check_families(const rf_data *d, const char *list, const char *src) {
  for (const char *t = list;;) {
    const char *e = strchr(t, ',');
    size_t n = e ? (size_t)(e - t) : strlen(t), k;
    int ok = md_family(t, n, NULL, NULL) >= 0;
    for (k = 0; k < N_FAMILIES && !ok; k++) ok = strlen(families[k]) == n && !strncmp(t, families[k], n);
    for (size_t j = 0; j < d->n_cols && !ok; j++) {
      const char *c = d->names[j], *dot = strchr(c, '.');
      ok = (size_t)(dot ? dot - c : (long)strlen(c)) == n && !strncmp(c, t, n);
    }
    if (!ok) {
      cli_error("%s: --features %.*s: no column of that family (known: all, launch, op, class, "
                "mem, ctrl, static, ptxas, opr; derived: mangrove, analytic, work, occ, gpu, opr)",
                src, (int)n, t);
      return -1;
    }
    if (!e) return 0;
    t = e + 1;
  }
}

static long col_index(const rf_data *d, const char *name) {
  for (size_t j = 0; j < d->n_cols; j++)
    if (!strcmp(d->names[j], name)) return (long)j;
  return -1;
}

/* The GPU of row i (NULL when the input names none). */
static const char *row_gpu(const cli_rf_input *in, const rf_data *d, long gcol, size_t i) {
  if (gcol >= 0) return d->text[gcol][i];
  return in->gpu;
}

/*
 * Compute the derived families fam[0..nf) for every row from the columns d
 * has now, with model/derived.c (the code libkcast runs on one launch at
 * prediction time), on each row's GPU, and append the columns d lacks.
 * -1 after printing the error (the row and why).
 */
static int derive(rf_data *d, const int *fam, size_t nf, const cli_rf_input *in, long gcol,
                  const char *src) {
  size_t n = d->n_rows, p = d->n_cols, k = 0;
  const char *names[MD_FAM_N * MD_MAX_N];
  for (size_t f = 0; f < nf; f++) {
    const char *const *fn;
    size_t fc;
    md_family(md_family_word(fam[f]), strlen(md_family_word(fam[f])), &fn, &fc);
    for (size_t c = 0; c < fc; c++)
      if (col_index(d, fn[c]) < 0) names[k++] = fn[c];
  }
  if (!k) return 0;
  double *row = malloc((p + 1) * sizeof *row), *x = NULL;
  char **nn = NULL;
  int rc = -1;
  if (!row || !(x = realloc(d->x, (p + k) * n * sizeof *x))) { cli_error("out of memory"); goto out; }
  d->x = x;
  if (!(nn = realloc(d->names, (p + k) * sizeof *nn))) { cli_error("out of memory"); goto out; }
  d->names = nn;
  for (size_t i = 0; i < n; i++) {
    for (size_t j = 0; j < p; j++) row[j] = d->x[j * n + i];
    md_cache c;
    memset(&c, 0, sizeof c);
    for (size_t j = 0; j < k; j++) {
      double v;
      if (md_value(&c, names[j], row_gpu(in, d, gcol, i), (const char *const *)d->names, row, p,
                   &v) != 1) {
        cli_error("%s: row %zu: %s: %s", src, i + 1, names[j], rf_last_error());
        goto out;
      }
      d->x[(p + j) * n + i] = v;
    }
  }
  for (size_t j = 0; j < k; j++) {
    if (!(d->names[p + j] = strdup(names[j]))) {
      cli_error("out of memory");
      goto out;
    }
    d->n_cols++;
  }
  rc = 0;
out:
  free(row);
  return rc;
}

/* Does every row run on a GPU of the table, and do the columns hold the
   launch configuration the per-GPU families need? */
static int gpus_known(const cli_rf_input *in, const rf_data *d, long gcol) {
  if (col_index(d, "launch.ctas") < 0 || col_index(d, "launch.block_x") < 0) return 0;
  for (size_t i = 0; i < d->n_rows; i++) {
    const char *g = row_gpu(in, d, gcol, i);
    if (!g || !an_gpu_find(g)) return 0;
  }
  return 1;
}

/* The derived families a list asks for, or the defaults (header note). */
static size_t derived_list(const char *features, int launch, int known, int several, int oper,
                           int *fam) {
  size_t nf = 0;
  if (features) {
    for (int f = 0; f < MD_FAM_N; f++)
      if (has_token(features, md_family_word(f))) fam[nf++] = f;
    return nf;
  }
  /* measured (docs/accuracy.md): the per-GPU families help a model of one
     GPU, and hurt one of several on a GPU it has not seen */
  if (launch) fam[nf++] = MD_FAM_WORK;
  /* operator launches of one GPU: their waves and tail there (opr.*);
     across GPUs they hurt as occ does */
  if (oper && known && !several) fam[nf++] = MD_FAM_OPR;
  if (known && !several) {
    fam[nf++] = MD_FAM_OCC;
    fam[nf++] = MD_FAM_ANALYTIC;
  }
  return nf;
}

/* What a target measures, from its name: 0 time, 1 power, 2 energy, -1
   something else. */
static int target_kind(const char *t) {
  if (!t) return -1;
  char low[128];
  size_t n = 0;
  for (; t[n] && n + 1 < sizeof low; n++) low[n] = (char)tolower((unsigned char)t[n]);
  low[n] = 0;
  if (strstr(low, "energy")) return 2;
  if (strstr(low, "power")) return 1;
  if (strstr(low, "time")) return 0;
  return -1;
}

/* ---------------------------------------------------------------- options -- */

enum {
  RF_CSV = CLI_OPT_RF, RF_TARGET, RF_GPU, RF_GPU_COLUMN, RF_IGNORE, RF_GROUP, RF_BASE,
  RF_DROP_CONSTANT, RF_FEATURES, RF_LOG_TARGET, RF_NO_LOG_TARGET, RF_EXTRA_TREES,
  RF_RANDOM_FOREST, RF_CALIBRATE, RF_NO_CALIBRATE, RF_CALIBRATE_GROUPS, RF_BOOTSTRAP,
  RF_MAX_FEATURES, RF_TREES, RF_MIN_LEAF, RF_MAX_DEPTH, RF_SEED, RF_THREADS, RF_BINS, RF_APP,
  RF_LEAF_CAP
};

const struct option cli_rf_longopts[] = {
  {"csv", required_argument, NULL, RF_CSV},
  {"target", required_argument, NULL, RF_TARGET},
  {"gpu", required_argument, NULL, RF_GPU},
  {"gpu-column", required_argument, NULL, RF_GPU_COLUMN},
  {"ignore", required_argument, NULL, RF_IGNORE},
  {"group", required_argument, NULL, RF_GROUP},
  {"base", required_argument, NULL, RF_BASE},
  {"drop-constant", no_argument, NULL, RF_DROP_CONSTANT},
  {"features", required_argument, NULL, RF_FEATURES},
  {"log-target", no_argument, NULL, RF_LOG_TARGET},
  {"no-log-target", no_argument, NULL, RF_NO_LOG_TARGET},
  {"extra-trees", no_argument, NULL, RF_EXTRA_TREES},
  {"random-forest", no_argument, NULL, RF_RANDOM_FOREST},
  {"calibrate", no_argument, NULL, RF_CALIBRATE},
  {"no-calibrate", no_argument, NULL, RF_NO_CALIBRATE},
  {"calibrate-groups", no_argument, NULL, RF_CALIBRATE_GROUPS},
  {"bootstrap", required_argument, NULL, RF_BOOTSTRAP},
  {"max-features", required_argument, NULL, RF_MAX_FEATURES},
  {"trees", required_argument, NULL, RF_TREES},
  {"min-leaf", required_argument, NULL, RF_MIN_LEAF},
  {"max-depth", required_argument, NULL, RF_MAX_DEPTH},
  {"seed", required_argument, NULL, RF_SEED},
  {"threads", required_argument, NULL, RF_THREADS},
  {"bins", required_argument, NULL, RF_BINS},
  {"app", required_argument, NULL, RF_APP},
  {"leaf-cap", required_argument, NULL, RF_LEAF_CAP},
  {NULL, 0, NULL, 0},
};

int cli_rf_option(cli_opts *o, int id, struct rf_params *p, cli_rf_input *in) {
  const char *cmd = o->cmd, *v = o->arg;
  unsigned long u;
  switch (id) {
    case RF_CSV: in->csv = v; return 1;
    case RF_TARGET: in->target = v; return 1;
    case RF_GPU: in->gpu = v; return 1;
    case RF_GPU_COLUMN: in->gpu_column = v; return 1;
    case RF_IGNORE: in->ignore = v; return 1;
    case RF_GROUP: in->group = v; return 1;
    case RF_BASE: in->base = v; return 1;
    case RF_APP: in->app = v; return 1;
    case RF_LEAF_CAP:
      if (cli_parse_uint(v, 65536, &u) || u < 2) {
        cli_usage_error(cmd, "--leaf-cap '%s': give a whole number in 2..65536", v);
        return -1;
      }
      p->leaf_cap = (unsigned)u;
      return 1;
    case RF_DROP_CONSTANT: in->drop_constant = 1; return 1;
    case RF_FEATURES:
      if (!valid_families(v)) {
        cli_usage_error(cmd, "--features '%s': give a comma list of families: all, launch, op, "
                        "class, mem, ctrl, static, ptxas, a CSV's own prefix, or derived: "
                        "mangrove, analytic, work, occ, gpu, opr", v);
        return -1;
      }
      in->features = v;
      return 1;
    case RF_LOG_TARGET: in->log_target = 1; return 1;
    case RF_NO_LOG_TARGET: in->log_target = 0; return 1;
    case RF_EXTRA_TREES: p->extra_trees = 1; return 1;
    case RF_RANDOM_FOREST: p->extra_trees = 0; return 1;
    case RF_CALIBRATE: p->calibrate = RF_CALIBRATE_ON; in->calib_set = 1; return 1;
    case RF_NO_CALIBRATE:
      p->calibrate = RF_CALIBRATE_OFF;
      p->calib_groups = 0;
      in->calib_set = 1;
      return 1;
    case RF_CALIBRATE_GROUPS:
      p->calibrate = RF_CALIBRATE_ON;
      p->calib_groups = 1;
      in->calib_set = 1;
      return 1;
    case RF_BOOTSTRAP:
      if (!strcmp(v, "on")) p->bootstrap = 1;
      else if (!strcmp(v, "off")) p->bootstrap = 0;
      else { cli_usage_error(cmd, "--bootstrap takes on or off, not '%s'", v); return -1; }
      return 1;
    case RF_MAX_FEATURES: {
      char *e;
      double d = strtod(v, &e);
      if (*e || !(d > 0) || d > 1e9 || (d > 1 && d != (double)(long)d)) {
        cli_usage_error(cmd, "--max-features '%s': give a fraction in (0,1] or a whole count", v);
        return -1;
      }
      p->max_features = d;
      return 1;
    }
    case RF_TREES: case RF_MIN_LEAF: case RF_MAX_DEPTH: case RF_SEED: case RF_THREADS:
    case RF_BINS: {
      static const unsigned long lim[][2] = {
        {1, 100000}, {1, 1000000}, {0, 100000}, {0, ~0UL}, {1, 4096}, {2, 256}};
      const unsigned long *l = lim[id - RF_TREES];
      if (cli_parse_uint(v, l[1], &u) || u < l[0]) {
        cli_usage_error(cmd, "%s '%s': give a whole number in %lu..%lu", o->name, v, l[0], l[1]);
        return -1;
      }
      switch (id) {
        case RF_TREES: p->n_trees = (unsigned)u; break;
        case RF_MIN_LEAF: p->min_leaf = (unsigned)u; break;
        case RF_MAX_DEPTH: p->max_depth = (unsigned)u; break;
        case RF_SEED: p->seed = u; break;
        case RF_THREADS: p->n_threads = (int)u; break;
        default: p->n_bins = (unsigned)u; break;
      }
      return 1;
    }
    default: return 0;
  }
}

void cli_rf_defaults(rf_params *p, cli_rf_input *in) {
  rf_params_default(p);
  /* kcast's defaults (docs/accuracy.md): extremely randomized trees, every
     feature tried at each split, leaves of one sample */
  p->extra_trees = 1;
  p->min_leaf = 1;
  /* intervals calibrated on held-out rows (extra trees have no OOB rows:
     an inner 5-fold of 50-tree forests) */
  p->calibrate = RF_CALIBRATE_ON;
  memset(in, 0, sizeof *in);
  in->log_target = -1;
  in->gpu_col = -1;
}

/* --------------------------------------------------------------- datasets -- */

/* Append v to a NULL-terminated-free list of strings; -1 out of memory. */
static int push_str(char ***v, size_t *n, const char *s) {
  char **t = realloc(*v, (*n + 1) * sizeof *t);
  if (!t) return -1;
  *v = t;
  if (!(t[*n] = strdup(s ? s : ""))) return -1;
  (*n)++;
  return 0;
}

/* The GPUs of in->gpu for a dataset: a comma list, or every GPU with
   measurements of metric ("all"). */
static int db_gpus(ds_db *db, const char *spec, const char *metric, char ***out, size_t *n) {
  *out = NULL;
  *n = 0;
  if (strcasecmp(spec, "all")) {
    for (const char *t = spec; *t;) {
      const char *e = strchr(t, ',');
      size_t l = e ? (size_t)(e - t) : strlen(t);
      char name[256];
      if (l && l < sizeof name) {
        memcpy(name, t, l);
        name[l] = 0;
        if (push_str(out, n, name)) return -1;
      }
      if (!e) break;
      t = e + 1;
    }
    return 0;
  }
  ds_stats st;
  if (ds_get_stats(db, &st)) return -2;
  for (size_t k = 0; k < st.nmeas; k++)
    if (!strcmp(st.meas[k].metric, metric) && push_str(out, n, st.meas[k].gpu)) {
      ds_stats_free(&st);
      return -1;
    }
  ds_stats_free(&st);
  return 0;
}

static void free_strs(char **v, size_t n) {
  for (size_t i = 0; i < n; i++) free(v[i]);
  free(v);
}

/* Key columns of a dataset's rows, kept as text (cv --predictions). */
enum { K_APP, K_DATASET, K_LSEQ, K_KERNEL, K_GPU, K_N };
static const char *const key_names[K_N] = {"app", "dataset", "lseq", "kernel", "gpu"};

/* A dataset's matrix: every feature family, the median measurement, one
   row per (launch, GPU) measured.  -1 after printing the error. */
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
  char **gpus = NULL;
  size_t ng = 0;
  ds_matrix m;
  memset(&m, 0, sizeof m);
  ds_target *t = NULL;
  size_t *rows = NULL, *gof = NULL, nr = 0;
  int rc = -1, g = db_gpus(db, in->gpu, metric, &gpus, &ng);
  if (g == -2) { cli_error("%s", ds_errmsg(db)); goto out; }
  if (g) { cli_error("out of memory"); goto out; }
  if (!ng) {
    cli_error("%s: no GPU has %s measurements", in->db, metric);
    goto out;
  }
  ds_query q;
  ds_query_init(&q);
  q.drop_constant = in->drop_constant;
  if (ng == 1) { q.gpu = gpus[0]; q.metric = metric; }
  if (in->app && !strchr(in->app, ',')) q.app = in->app;
  if (ds_query_matrix(db, &q, &m)) {
    cli_error("%s", ds_errmsg(db));
    goto out;
  }
  /* rows: (launch r, GPU k) with a measurement */
  t = calloc(ng, sizeof *t);
  rows = malloc((m.rows * ng + 1) * sizeof *rows);
  gof = malloc((m.rows * ng + 1) * sizeof *gof);
  if (!t || !rows || !gof) { cli_error("out of memory"); goto out; }
  for (size_t k = 0; k < ng; k++) {
    if (ng == 1) break;
    if (ds_query_target(db, gpus[k], metric, DS_AGG_MEDIAN, &t[k]) < 0) {
      cli_error("%s", ds_errmsg(db));
      goto out;
    }
  }
  for (size_t k = 0; k < ng; k++) {
    size_t ti = 0;
    for (size_t r = 0; r < m.rows; r++) {
      if (in->app && !has_token(in->app, m.app[r] ? m.app[r] : "")) continue;
      if (ng > 1) {
        while (ti < t[k].n && t[k].launch_id[ti] < m.launch_id[r]) ti++;
        if (ti == t[k].n || t[k].launch_id[ti] != m.launch_id[r]) continue;
      }
      rows[nr] = r;
      gof[nr++] = k;
    }
  }
  if (nr < 2) {
    cli_error("%s: %zu launches with %s measured on GPU '%s'; at least 2 are needed", in->db, nr,
              metric, in->gpu);
    goto out;
  }
  if (rf_data_alloc(d, nr, m.cols, 1)) {
    cli_error("%s", rf_last_error());
    goto out;
  }
  d->text = calloc(K_N, sizeof *d->text);
  d->text_names = calloc(K_N, sizeof *d->text_names);
  d->text_auto = calloc(K_N, 1);
  int ok = d->text && d->text_names && d->text_auto;
  if (ok) d->n_text = K_N;
  for (size_t c = 0; ok && c < K_N; c++)
    ok = (d->text_names[c] = strdup(key_names[c])) && (d->text[c] = calloc(nr, sizeof(char *)));
  for (size_t i = 0; ok && i < nr; i++) {
    size_t r = rows[i], k = gof[i];
    for (size_t j = 0; j < m.cols; j++) d->x[j * nr + i] = m.x[r * m.cols + j];
    if (ng == 1) {
      d->y[i] = m.y[r];
    } else {
      size_t lo = 0, hi = t[k].n;
      while (lo < hi) { /* the target of launch m.launch_id[r] on GPU k */
        size_t mid = (lo + hi) / 2;
        if (t[k].launch_id[mid] < m.launch_id[r]) lo = mid + 1;
        else hi = mid;
      }
      d->y[i] = t[k].value[lo];
    }
    char lseq[32];
    snprintf(lseq, sizeof lseq, "%lld", (long long)m.lseq[r]);
    const char *kv[K_N] = {m.app[r] ? m.app[r] : "", m.dataset[r] ? m.dataset[r] : "", lseq,
                           m.kernel[r] ? m.kernel[r] : "", gpus[k]};
    for (size_t c = 0; ok && c < K_N; c++) ok = (d->text[c][i] = strdup(kv[c])) != NULL;
  }
  for (size_t j = 0; ok && j < m.cols; j++) ok = (d->names[j] = strdup(m.colnames[j])) != NULL;
  ok = ok && (d->target = strdup(in->target)) != NULL;
  const char *grp = in->group && !strcmp(in->group, "gpu") ? "gpu" : "app";
  ok = ok && (d->group_name = strdup(grp)) && (d->groups = calloc(nr, sizeof(char *)));
  for (size_t i = 0; ok && i < nr; i++)
    ok = (d->groups[i] = strdup(d->text[!strcmp(grp, "gpu") ? K_GPU : K_APP][i])) != NULL;
  if (!ok) {
    cli_error("out of memory");
    rf_data_free(d);
    goto out;
  }
  rc = 0;
out:
  if (t)
    for (size_t k = 0; k < ng; k++) ds_target_free(&t[k]);
  free(t);
  free(rows);
  free(gof);
  ds_matrix_free(&m);
  free_strs(gpus, ng);
  ds_close(db);
  return rc;
}

/* ---------------------------------------------------------------- loading -- */

/* Does the CSV's first line name a column called name? */
static int csv_has_column(const char *path, const char *name) {
  FILE *fp = fopen(path, "rb");
  if (!fp) return 0;
  char line[65536];
  int found = 0;
  if (fgets(line, sizeof line, fp)) {
    line[strcspn(line, "\r\n")] = 0;
    for (char *t = line; t;) {
      char *e = strchr(t, ',');
      size_t l = e ? (size_t)(e - t) : strlen(t);
      if (l >= 2 && t[0] == '"' && t[l - 1] == '"') { t++; l -= 2; }
      if (l == strlen(name) && !strncmp(t, name, l)) found = 1;
      t = e ? e + 1 : NULL;
    }
  }
  fclose(fp);
  return found;
}


/* Is path a text file whose first line has a comma, rather than a SQLite
   dataset (given where a dataset goes)? */
static int looks_like_csv(const char *path) {
  FILE *fp = fopen(path, "rb");
  if (!fp) return 0;
  char head[512];
  size_t n = fread(head, 1, sizeof head - 1, fp);
  fclose(fp);
  head[n] = 0;
  if (n >= 16 && !memcmp(head, "SQLite format 3", 16)) return 0;
  char *nl = strchr(head, '\n');
  if (nl) *nl = 0;
  return strlen(head) == (nl ? (size_t)(nl - head) : n) && strchr(head, ',') != NULL;
}

int cli_rf_load(const char *cmd, cli_rf_input *in, rf_data *d, rf_params *p) {
  memset(d, 0, sizeof *d);
  in->gpus[0] = 0;
  in->notes[0] = 0;
  if (!in->target) return cli_usage_error(cmd, "--target is required"), -1;
  if (in->csv && in->db) return cli_usage_error(cmd, "give either --csv FILE or a dataset, not both"), -1;
  const char *src = in->csv ? in->csv : in->db;
  const char *gcolname = NULL;
  if (in->db && looks_like_csv(in->db))
    return cli_usage_error(cmd, "%s is a CSV file, not a dataset: give it as --csv %s", in->db,
                           in->db), -1;
  if (in->db) {
    if (!in->gpu) return cli_usage_error(cmd, "a dataset needs --gpu NAME[,NAME...]|all"), -1;
    if (in->gpu_column) return cli_usage_error(cmd, "--gpu-column is for a CSV"), -1;
    if (in->app && !*in->app) return cli_usage_error(cmd, "--app needs a comma list of apps"), -1;
    if (in->group && strcmp(in->group, "app") && strcmp(in->group, "gpu"))
      return cli_usage_error(cmd, "with a dataset the groups are 'app' or 'gpu'"), -1;
    if (load_db(in, d)) return -1;
    if (strchr(in->gpu, ',') || !strcasecmp(in->gpu, "all")) gcolname = "gpu";
  } else {
    if (!in->csv) return cli_usage_error(cmd, "no input: give --csv FILE or a dataset"), -1;
    if (in->app) return cli_usage_error(cmd, "--app selects launches of a dataset, not of a CSV"), -1;
    if (in->gpu && strchr(in->gpu, ','))
      return cli_usage_error(cmd, "a CSV names several GPUs with --gpu-column COLUMN"), -1;
    if (in->gpu && in->gpu_column) return cli_usage_error(cmd, "give --gpu or --gpu-column, not both"), -1;
    gcolname = in->gpu_column;
    if (!gcolname && !in->gpu && csv_has_column(in->csv, "gpu")) gcolname = "gpu";
    /* the GPU column stays text (each row's GPU); so do the ignored
       columns and those holding text (keys for cv --predictions) */
    rf_csv_opts o = {.size = sizeof o, .target = in->target, .group = in->group,
                     .ignore = in->ignore, .drop_constant = in->drop_constant,
                     .text = gcolname, .text_auto = 1, .text_ignored = 1,
                     .empty_value = ds_feature_default};
    if (rf_data_load_csv(d, in->csv, &o)) {
      /* a column of text whose first cell read as a number */
      const char *e = rf_last_error(), *c = strstr(e, ": column "), *q;
      if (c && strstr(e, "is not a number") && (q = strstr(c + 9, ": '")) &&
          !((size_t)(q - c - 9) == strlen(in->target) && !strncmp(c + 9, in->target, strlen(in->target))))
        cli_error("%s (a text column: --ignore %.*s leaves it out, --group %.*s groups by it)", e,
                  (int)(q - c - 9), c + 9, (int)(q - c - 9), c + 9);
      else
        cli_error("%s", e);
      return -1;
    }
    /* note the text columns found by content */
    size_t len = 0;
    for (size_t k = 0; k < d->n_text; k++)
      if (d->text_auto[k] && len + 2 < sizeof in->notes)
        len += (size_t)snprintf(in->notes + len, sizeof in->notes - len, "%s%s", len ? ", " : "",
                                d->text_names[k]);
  }
  long gcol = gcolname ? rf_data_text_col(d, gcolname) : -1;
  in->gpu_col = gcol;
  if (rf_data_check_finite(d, src)) {
    cli_error("%s", rf_last_error());
    goto fail;
  }
  /* the distinct GPUs of the rows, for the model */
  size_t gl = 0;
  for (size_t i = 0; i < d->n_rows; i++) {
    const char *g = row_gpu(in, d, gcol, i);
    if (!g || !*g) continue;
    const an_gpu *known_g = an_gpu_find(g);
    if (known_g) g = known_g->name; /* the table's name, as predict --gpu takes it */
    size_t l = strlen(g);
    int seen = 0;
    for (const char *t = in->gpus; *t && !seen;) {
      const char *e = strchr(t, ',');
      size_t n = e ? (size_t)(e - t) : strlen(t);
      seen = n == l && !strncmp(t, g, l);
      t = e ? e + 1 : t + n;
    }
    if (seen) continue;
    if (gl + l + 2 >= sizeof in->gpus || strchr(g, ',')) {
      cli_error("%s: too many GPUs or a GPU name with a comma ('%s')", src, g);
      goto fail;
    }
    gl += (size_t)snprintf(in->gpus + gl, sizeof in->gpus - gl, "%s%s", gl ? "," : "", g);
  }
  if (in->features && check_families(d, in->features, src)) goto fail;
  int several = strchr(in->gpus, ',') != NULL;
  int known = gpus_known(in, d, gcol);

  /* features: the families asked for (or all loaded columns), then the
     derived ones */
  const char *feat = in->features ? in->features : "all";
  int fam[MD_FAM_N];
  int launch = col_index(d, "launch.ctas") >= 0 && col_index(d, "launch.block_x") >= 0;
  int oper = col_index(d, "opr.class") >= 0;
  size_t nf = derived_list(in->features, launch, known, several, oper, fam);
  for (size_t f = 0; f < nf; f++) {
    if (!md_family_needs_gpu(fam[f])) continue;
    for (size_t i = 0; i < d->n_rows; i++) {
      const char *g = row_gpu(in, d, gcol, i);
      if (!g || !*g) {
        cli_error("%s: --features %s needs each row's GPU: --gpu NAME, or --gpu-column COLUMN "
                  "naming a GPU of 'kcast gpus'", src, md_family_word(fam[f]));
        goto fail;
      }
      if (!an_gpu_find(g)) {
        cli_error("%s: row %zu: --features %s: unknown GPU '%s' (see 'kcast gpus'; KCAST_GPUS "
                  "adds GPUs)", src, i + 1, md_family_word(fam[f]), g);
        goto fail;
      }
    }
  }
  /* derived columns come from every loaded column, so derive first (a
     family asked for that cannot be made is an error naming the row) */
  if (derive(d, fam, nf, in, gcol, src)) goto fail;
  /* the overhead share of each row's estimate, before the columns it
     reads may be left out below */
  if (in->want_overhead) {
    free(in->overhead);
    free(in->adapt_class);
    in->overhead = calloc(d->n_rows ? d->n_rows : 1, sizeof *in->overhead);
    in->adapt_class = calloc(d->n_rows ? d->n_rows : 1, sizeof *in->adapt_class);
    double *rowv = malloc((d->n_cols + 1) * sizeof *rowv);
    if (!in->overhead || !in->adapt_class || !rowv) { free(rowv); cli_error("out of memory"); goto fail; }
    long cc = col_index(d, "opr.class");
    for (size_t i = 0; i < d->n_rows; i++) {
      const char *g = row_gpu(in, d, gcol, i);
      const an_gpu *gg = g ? an_gpu_find(g) : NULL;
      an_estimate e;
      for (size_t j = 0; j < d->n_cols; j++) rowv[j] = d->x[j * d->n_rows + i];
      if (gg && !an_estimate_launch(gg, (const char *const *)d->names, rowv, d->n_cols, &e))
        in->overhead[i] = an_overhead_share(&e);
      in->adapt_class[i] = cc >= 0 ? rf_adapt_class(rowv[cc]) : 0;
    }
    free(rowv);
  }
  /* the base: the analytic estimate of the target, when it can be made */
  int kind = target_kind(in->target);
  const char *base = NULL;
  if (in->base && strcmp(in->base, "none") && strcmp(in->base, "auto")) {
    base = in->base;
  } else if (!in->base || !strcmp(in->base, "auto")) {
    /* time and energy: measured gains; power: the analytic power is a
       poorer base than none (docs/accuracy.md) */
    static const char *const an_of[3] = {"an.time_us", NULL, "an.energy_mj"};
    if (kind >= 0 && known && in->log_target != 0) base = an_of[kind];
  }
  if (base && md_family_of(base) >= 0 && col_index(d, base) < 0) {
    int bf = md_family_of(base);
    if (derive(d, &bf, 1, in, gcol, src)) goto fail;
  }
  if (base && col_index(d, base) < 0) {
    cli_error("%s: the base column %s is neither a column nor a derived feature", src, base);
    goto fail;
  }
  /* keep the selected families and every derived column asked for */
  {
    size_t n = d->n_rows, keep = 0;
    for (size_t j = 0; j < d->n_cols; j++) {
      int df = md_family_of(d->names[j]), want = 0;
      if (df >= 0) {
        for (size_t f = 0; f < nf && !want; f++) want = fam[f] == df;
        want = want || (base && !strcmp(base, d->names[j]));
      } else {
        want = in_families(feat, d->names[j]) || (base && !strcmp(base, d->names[j]));
      }
      if (want) {
        if (keep != j) {
          memmove(d->x + keep * n, d->x + j * n, n * sizeof *d->x);
          d->names[keep] = d->names[j];
        }
        keep++;
      } else {
        char **ne = realloc(d->extra, (d->n_extra + 1) * sizeof *ne);
        if (!ne) { cli_error("out of memory"); goto fail; }
        d->extra = ne;
        d->extra[d->n_extra++] = d->names[j];
      }
    }
    d->n_cols = keep;
    if (!keep) {
      cli_error("%s: no feature column belongs to the families '%s'", src, feat);
      goto fail;
    }
  }
  /* the target transform: log when every target is positive (or asked) */
  int allpos = 1;
  for (size_t i = 0; i < d->n_rows; i++) allpos &= d->y[i] > 0;
  if (in->log_target == 1 || (in->log_target < 0 && allpos)) p->transform = RF_TRANSFORM_LOG;
  else p->transform = RF_TRANSFORM_NONE;
  p->base_feature = -1;
  if (base) {
    if (p->transform != RF_TRANSFORM_LOG) {
      cli_error("%s: --base %s needs a log target (every target > 0, without --no-log-target)", src,
                base);
      goto fail;
    }
    p->base_feature = (int)col_index(d, base);
  }
  return 0;
fail:
  free(in->overhead);
  in->overhead = NULL;
  free(in->adapt_class);
  in->adapt_class = NULL;
  rf_data_free(d);
  return -1;
}

/* --------------------------------------------------------------- progress -- */

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

double cli_now_s(void) { return now_s(); }

void cli_progress_init(cli_progress *p, const char *label) {
  p->label = label;
  p->start = now_s();
  p->last = 0;
  p->shown = 0;
}

/* On a terminal one line redrawn at most five times a second; in a log
   (--progress) a whole line at most every CLI_PROGRESS_LOG_S seconds and
   the last one; either only once the job has run for a second. */
void cli_progress_fn(void *ctx, unsigned done, unsigned total) {
  cli_progress *p = ctx;
  int style = cli_progress_style();
  if (style == CLI_PROGRESS_NONE) return;
  double t = now_s();
  if (t - p->start < 1.0 && done < total) return;
  if (!p->shown && done == total) return; /* finished within a second */
  double every = style == CLI_PROGRESS_TTY ? 0.2 : CLI_PROGRESS_LOG_S;
  if (done < total && p->shown && t - p->last < every) return;
  p->last = t;
  p->shown = 1;
  if (style == CLI_PROGRESS_TTY) {
    fprintf(stderr, "\r%s %u/%u", p->label, done, total);
    if (done == total) fputc('\n', stderr);
  } else {
    fprintf(stderr, "%s %u/%u, %.0f s\n", p->label, done, total, t - p->start);
  }
  fflush(stderr);
}
