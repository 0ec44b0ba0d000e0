/*
 * ds_train.c -- the training input of `kcast train`, `kcast cv` and `kcast
 * report` (datasets/ds_train.h): loading a CSV or a dataset into the
 * forest's matrix, the feature families and derived columns, the target
 * transform and the base column.
 *
 * Input is either a CSV with a target column (any numeric table: the
 * tuning data, exports) or a dataset with a GPU list and time, power or
 * energy (datasets/ds.h's matrix query, features of every family, median
 * of the repeated measurements, group = the launch's app).  Each row has a
 * GPU: gpu names it for all rows, a dataset loaded for several GPUs has one
 * row per (launch, GPU) measured, and a CSV's gpu_column (default `gpu`
 * when the file has one and no gpu is given) names each row's.
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
#include "datasets/ds_train.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "datasets/ds.h"
#include "model/model.h"

/* The message of a failure into err; returns rc (-1 bad input, -2 usage). */
static int fail(char *err, size_t cap, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(char *err, size_t cap, int rc, const char *fmt, ...) {
  if (err && cap) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
  }
  return rc;
}

/* ------------------------------------------------------------- helpers -- */

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
static const char *const families[] = {"all",  "launch", "op",     "class", "mem",
                                       "ctrl", "static", "ptxas", "tune",  "opr"};
#define N_FAMILIES (sizeof families / sizeof *families)

/* A column that is never a feature unless named: a measurement of kcast's
   export (METRIC@GPU: time_ns@T4, power_w@K80 -- the targets of other
   models, a perfect predictor of this one's) or a row key (id, lseq: the
   order rows were written in).  A forest trained on `dataset export`'s CSV
   ranked exactly these first.  Also a measurement of a tuning table: a
   name without a family (no dot) that starts with time, power, energy,
   latency, duration or runtime and is that word alone or spells a unit in
   a later part (time_ms_mean beside the target time_ms_median, power_w):
   another statistic of the target, or another quantity measured with it,
   is what a prediction never has.  time_steps (no unit) stays a feature. */
static int is_measurement(const char *name) {
  static const char *const words[] = {"time", "times", "power", "energy", "latency",
                                      "duration", "runtime"};
  if (strchr(name, '.')) return 0;
  size_t n = strcspn(name, "_@-");
  for (size_t k = 0; k < sizeof words / sizeof *words; k++)
    if (strlen(words[k]) == n && !strncasecmp(name, words[k], n))
      return !name[n] || rf_target_unit(name) != NULL;
  return 0;
}

static int not_a_feature(const char *name) {
  const char *at = strchr(name, '@');
  return !strcmp(name, "id") || !strcmp(name, "lseq") || (at && at > name && at[1]) ||
         is_measurement(name);
}

/* Is name's family in the comma list?  Derived columns are never
   selected here (derive() makes them); measurements and keys only when
   the list names them (their whole name is their family). */
static int in_families(const char *list, const char *name) {
  if (md_family_of(name) >= 0) return 0;
  const char *dot = strchr(name, '.');
  if (has_item(list, name, dot ? (size_t)(dot - name) : strlen(name))) return 1;
  return !not_a_feature(name) && has_token(list, "all");
}

/* A comma list of family names (letters, digits, '_'; '@', and '-' after
   it, for a measurement column named whole: time_ns@A100-PCIE), none
   empty; a name that is neither a known family nor a derived one must
   match some loaded column (a CSV's own prefix such as tune.*: checked
   after loading). */
int ds_train_valid_families(const char *list) {
  for (const char *t = list;;) {
    const char *e = strchr(t, ',');
    size_t n = e ? (size_t)(e - t) : strlen(t);
    if (!n) return 0;
    int at = memchr(t, '@', n) != NULL; /* a measurement: its GPU may have a '-' */
    for (size_t k = 0; k < n; k++)
      if (!isalnum((unsigned char)t[k]) && t[k] != '_' && !(at && (t[k] == '@' || t[k] == '-')))
        return 0;
    if (!e) return 1;
    t = e + 1;
  }
}

/* Every item of list is a family of the built-in list, a derived family or
   the prefix of some column of d; else one error naming it. */
static int check_families(const rf_data *d, const char *list, const char *src, char *err,
                          size_t cap) {
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
      fail(err, cap, -1, "%s: --features %.*s: no column of that family (known: all, launch, op, class, "
                "mem, ctrl, static, ptxas, tune, opr; derived: mangrove, analytic, work, occ, gpu, "
                "cache, opr)",
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

/* The GPUs gpu named: the dataset's names for them once load_db
   resolved them (gpu_buf), else as given. */
static const char *in_gpu(const ds_train_input *in) {
  return in->gpu_buf[0] ? in->gpu_buf : in->gpu;
}

/* The GPU of row i (NULL when the input names none). */
static const char *row_gpu(const ds_train_input *in, const rf_data *d, long gcol, size_t i) {
  if (gcol >= 0) return d->text[gcol][i];
  return in_gpu(in);
}

/*
 * Compute the derived families fam[0..nf) for every row from the columns d
 * has now, with model/derived.c (the code libkcast runs on one launch at
 * prediction time), on each row's GPU, and append the columns d lacks.
 * -1 with the message (the row and why) in err.
 */
static int derive(rf_data *d, const int *fam, size_t nf, const ds_train_input *in, long gcol,
                  const char *src, char *err, size_t cap) {
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
  if (!row || !(x = realloc(d->x, (p + k) * n * sizeof *x))) { fail(err, cap, -1, "out of memory"); goto out; }
  d->x = x;
  if (!(nn = realloc(d->names, (p + k) * sizeof *nn))) { fail(err, cap, -1, "out of memory"); goto out; }
  d->names = nn;
  for (size_t i = 0; i < n; i++) {
    for (size_t j = 0; j < p; j++) row[j] = d->x[j * n + i];
    md_cache c;
    memset(&c, 0, sizeof c);
    for (size_t j = 0; j < k; j++) {
      double v;
      if (md_value(&c, names[j], row_gpu(in, d, gcol, i), (const char *const *)d->names, row, p,
                   &v) != 1) {
        fail(err, cap, -1, "%s: row %zu: %s: %s", src, i + 1, names[j], rf_last_error());
        goto out;
      }
      d->x[(p + j) * n + i] = v;
    }
  }
  for (size_t j = 0; j < k; j++) {
    if (!(d->names[p + j] = strdup(names[j]))) {
      fail(err, cap, -1, "out of memory");
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
static int gpus_known(const ds_train_input *in, const rf_data *d, long gcol) {
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

/* Another of the dataset's names have[0..nh) for the GPU of the GPU
   table that g names ("Tesla T4" beside "T4": one GPU imported under two
   names), NULL when none. */
static const char *other_name(const char *g, const char *const *have, size_t nh) {
  const an_gpu *t = an_gpu_find(g);
  for (size_t k = 0; t && k < nh; k++)
    if (strcmp(have[k], g) && an_gpu_find(have[k]) == t) return have[k];
  return NULL;
}

int ds_train_gpu_key(ds_db *db, const char *src, const char *metric, const char *name,
                     char *key, size_t cap, char *err, size_t errcap) {
  ds_stats st;
  if (ds_get_stats(db, &st)) return fail(err, errcap, -1, "%s", ds_errmsg(db));
  const char *have[256];
  size_t nh = 0;
  for (size_t k = 0; k < st.nmeas && nh < 256; k++)
    if (!strcmp(st.meas[k].metric, metric)) have[nh++] = st.meas[k].gpu;
  const char *g = an_gpu_match(name, have, nh), *o = g ? other_name(g, have, nh) : NULL;
  int rc = g ? 0 : 1;
  if (o)
    rc = fail(err, errcap, -1, "%s: GPU %s has %s measurements under two names, '%s' and '%s' "
              "(imports named it differently): taking one would leave out the other's "
              "(import both under one --gpu name)", src, name, metric, g, o);
  else if (g)
    snprintf(key, cap, "%s", g);
  ds_stats_free(&st);
  return rc;
}

/* The GPUs of in->gpu for a dataset: every GPU with measurements of
   metric ("all"), or a comma list, each name resolved against those GPUs
   (an_gpu_match: "t4" and "Tesla T4" find "T4").  -1 out of memory, -2
   the dataset cannot be read (ds_errmsg), -3 a name no GPU of the dataset
   answers to, or one GPU of the GPU table the dataset has under two names
   (the message in err, with the GPUs that have metric). */
static int db_gpus(ds_db *db, const char *src, const char *spec, const char *metric, char ***out,
                   size_t *n, char *err, size_t cap) {
  *out = NULL;
  *n = 0;
  ds_stats st;
  if (ds_get_stats(db, &st)) return -2;
  const char *have[256];
  size_t nh = 0;
  for (size_t k = 0; k < st.nmeas && nh < 256; k++)
    if (!strcmp(st.meas[k].metric, metric)) have[nh++] = st.meas[k].gpu;
  int rc = 0;
  if (!strcasecmp(spec, "all")) {
    for (size_t k = 0; k < nh && !rc; k++) {
      const char *o = other_name(have[k], have, nh);
      if (o) {
        fail(err, cap, -1, "%s: GPU %s has %s measurements under two names, '%s' and '%s' "
             "(imports named it differently): as two GPUs, one GPU's rows would train and "
             "test each other (import both under one --gpu name)", src, have[k], metric,
             have[k], o);
        rc = -3;
      } else if (push_str(out, n, have[k])) {
        rc = -1;
      }
    }
  } else {
    for (const char *t = spec; *t && !rc;) {
      const char *e = strchr(t, ',');
      size_t l = e ? (size_t)(e - t) : strlen(t);
      char name[256];
      snprintf(name, sizeof name, "%.*s", (int)(l < sizeof name ? l : sizeof name - 1), t);
      const char *g = l ? an_gpu_match(name, have, nh) : NULL;
      if (l && !g) {
        char list[1024];
        size_t len = 0;
        list[0] = 0;
        for (size_t k = 0; k < nh && len + 1 < sizeof list; k++)
          len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", k ? ", " : "", have[k]);
        if (nh)
          fail(err, cap, -1, "%s: no %s measurements on GPU '%s' (the dataset has them on: %s)",
               src, metric, name, list);
        else
          fail(err, cap, -1, "%s: no %s measurements on GPU '%s' (the dataset has none on any GPU)",
               src, metric, name);
        rc = -3;
      } else if (g && other_name(g, have, nh)) {
        const char *o = other_name(g, have, nh);
        fail(err, cap, -1, "%s: GPU %s has %s measurements under two names, '%s' and '%s' "
             "(imports named it differently): taking one would leave out the other's (import "
             "both under one --gpu name)", src, name, metric, g, o);
        rc = -3;
      } else if (g) {
        int dup = 0;
        for (size_t k = 0; k < *n; k++) dup |= !strcmp((*out)[k], g);
        if (!dup && push_str(out, n, g)) rc = -1;
      }
      if (!e) break;
      t = e + 1;
    }
  }
  ds_stats_free(&st);
  return rc;
}

static void free_strs(char **v, size_t n) {
  for (size_t i = 0; i < n; i++) free(v[i]);
  free(v);
}

/* Key columns of a dataset's rows, kept as text (cv --predictions). */
enum { K_APP, K_DATASET, K_LSEQ, K_KERNEL, K_GPU, K_N };
static const char *const key_names[K_N] = {"app", "dataset", "lseq", "kernel", "gpu"};

/* A dataset's matrix: every feature family, the median measurement, one
   row per (launch, GPU) measured.  0, or -1 with the message in err. */
static int load_db(ds_train_input *in, rf_data *d, char *err, size_t cap) {
  const char *metric = NULL;
  if (!strcmp(in->target, "time")) metric = "time_ns";
  else if (!strcmp(in->target, "power")) metric = "power_w";
  else if (!strcmp(in->target, "energy")) metric = "energy_j";
  if (!metric) {
    fail(err, cap, -1, "%s: --target must be time, power or energy for a dataset, not '%s'", in->db, in->target);
    return -1;
  }
  ds_db *db = NULL;
  if (ds_open(in->db, DS_READONLY, &db, err, cap)) return -1;
  char **gpus = NULL;
  size_t ng = 0;
  ds_matrix m;
  memset(&m, 0, sizeof m);
  ds_target *t = NULL;
  size_t *rows = NULL, *gof = NULL, nr = 0;
  int rc = -1, g = db_gpus(db, in->db, in->gpu, metric, &gpus, &ng, err, cap);
  if (g == -2) { fail(err, cap, -1, "%s", ds_errmsg(db)); goto out; }
  if (g == -3) goto out;
  if (g) { fail(err, cap, -1, "out of memory"); goto out; }
  if (!ng) {
    fail(err, cap, -1, "%s: no GPU has %s measurements", in->db, metric);
    goto out;
  }
  /* from here on the GPUs are the dataset's names for them */
  {
    size_t len = 0;
    in->gpu_buf[0] = 0;
    for (size_t k = 0; k < ng && len + 1 < sizeof in->gpu_buf; k++)
      len += (size_t)snprintf(in->gpu_buf + len, sizeof in->gpu_buf - len, "%s%s", k ? "," : "",
                              gpus[k]);
    if (len >= sizeof in->gpu_buf) in->gpu_buf[0] = 0; /* too many: the spec as given */
  }
  ds_query q;
  ds_query_init(&q);
  q.drop_constant = in->drop_constant;
  /* the tuning parameters only when asked for (their meaning is the
     kernel's own: no model of other kernels can use them) */
  q.with_tune = in->features && has_token(in->features, "tune");
  if (ng == 1) { q.gpu = gpus[0]; q.metric = metric; }
  if (in->app && !strchr(in->app, ',')) q.app = in->app;
  if (ds_query_matrix(db, &q, &m)) {
    fail(err, cap, -1, "%s", ds_errmsg(db));
    goto out;
  }
  /* rows: (launch r, GPU k) with a measurement */
  t = calloc(ng, sizeof *t);
  rows = malloc((m.rows * ng + 1) * sizeof *rows);
  gof = malloc((m.rows * ng + 1) * sizeof *gof);
  if (!t || !rows || !gof) { fail(err, cap, -1, "out of memory"); goto out; }
  for (size_t k = 0; k < ng; k++) {
    if (ng == 1) break;
    if (ds_query_target(db, gpus[k], metric, DS_AGG_MEDIAN, &t[k]) < 0) {
      fail(err, cap, -1, "%s", ds_errmsg(db));
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
    fail(err, cap, -1, "%s: %zu launches with %s measured on GPU '%s'; at least 2 are needed", in->db, nr,
              metric, in_gpu(in));
    goto out;
  }
  if (rf_data_alloc(d, nr, m.cols, 1)) {
    fail(err, cap, -1, "%s", rf_last_error());
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
    fail(err, cap, -1, "out of memory");
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

int ds_train_load(ds_train_input *in, rf_data *d, rf_params *p, char *err, size_t cap) {
  memset(d, 0, sizeof *d);
  in->gpus[0] = 0;
  in->notes[0] = 0;
  in->gpu_note[0] = 0;
  in->gpu_buf[0] = 0;
  in->left_out[0] = 0;
  /* a dataset's measurements are time, power or energy: time unless said */
  if (!in->target && in->db && !in->csv) in->target = "time";
  if (!in->target) return fail(err, cap, -2, "--target is required");
  if (in->csv && in->db) return fail(err, cap, -2, "give either --csv FILE or a dataset, not both");
  const char *src = in->csv ? in->csv : in->db;
  const char *gcolname = NULL;
  if (in->db && looks_like_csv(in->db))
    return fail(err, cap, -2, "%s is a CSV file, not a dataset: give it as --csv %s", in->db,
                           in->db);
  if (in->db) {
    if (!in->gpu) return fail(err, cap, -2, "a dataset needs --gpu NAME[,NAME...]|all");
    if (in->gpu_column) return fail(err, cap, -2, "--gpu-column is for a CSV");
    if (in->app && !*in->app) return fail(err, cap, -2, "--app needs a comma list of apps");
    if (in->group && strcmp(in->group, "app") && strcmp(in->group, "gpu"))
      return fail(err, cap, -2, "with a dataset the groups are 'app' or 'gpu'");
    if (load_db(in, d, err, cap)) return -1;
    if (strchr(in_gpu(in), ',') || !strcasecmp(in_gpu(in), "all")) gcolname = "gpu";
  } else {
    if (!in->csv) return fail(err, cap, -2, "no input: give --csv FILE or a dataset");
    if (in->app) return fail(err, cap, -2, "--app selects launches of a dataset, not of a CSV");
    if (in->gpu && strchr(in->gpu, ','))
      return fail(err, cap, -2, "a CSV names several GPUs with --gpu-column COLUMN");
    if (in->gpu && in->gpu_column) return fail(err, cap, -2, "give --gpu or --gpu-column, not both");
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
        fail(err, cap, -1, "%s (a text column: --ignore %.*s leaves it out, --group %.*s groups by it)", e,
                  (int)(q - c - 9), c + 9, (int)(q - c - 9), c + 9);
      else
        fail(err, cap, -1, "%s", e);
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
  /* --gpu G says every row of a CSV is G: a gpu column of the file that
     names another GPU contradicts it (the rows of three GPUs trained as
     one would be a model of none of them) */
  if (in->csv && in->gpu && !gcolname) {
    long gc = rf_data_text_col(d, "gpu");
    const an_gpu *want = an_gpu_find(in->gpu);
    for (size_t i = 0; gc >= 0 && i < d->n_rows; i++) {
      const char *g = d->text[gc][i];
      if (!g || !*g || !strcasecmp(g, in->gpu) || (want && an_gpu_find(g) == want)) continue;
      fail(err, cap, -1, "%s: row %zu: column gpu says '%s', but --gpu %s says every row is %s "
           "(leave --gpu out to take each row's GPU from the column, or give only %s's rows)",
           src, i + 1, g, in->gpu, in->gpu, in->gpu);
      goto fail;
    }
  }
  if (rf_data_check_finite(d, src)) {
    fail(err, cap, -1, "%s", rf_last_error());
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
      fail(err, cap, -1, "%s: too many GPUs or a GPU name with a comma ('%s')", src, g);
      goto fail;
    }
    gl += (size_t)snprintf(in->gpus + gl, sizeof in->gpus - gl, "%s%s", gl ? "," : "", g);
  }
  if (in->features && check_families(d, in->features, src, err, cap)) goto fail;
  int several = strchr(in->gpus, ',') != NULL;
  int known = gpus_known(in, d, gcol);
  if (!known && col_index(d, "launch.ctas") >= 0 && col_index(d, "launch.block_x") >= 0 &&
      target_kind(in->target) >= 0 && (!in->base || !strcmp(in->base, "auto")) &&
      in->log_target != 0) {
    /* the defaults would have used them: say why they are not there */
    char unk[256] = "";
    size_t ul = 0, nu = 0;
    for (size_t i = 0; i < d->n_rows && nu < 4; i++) {
      const char *g = row_gpu(in, d, gcol, i);
      if (!g || !*g || an_gpu_find(g)) continue;
      char q[140];
      snprintf(q, sizeof q, "'%.120s'", g);
      if (strstr(unk, q)) continue;
      ul += (size_t)snprintf(unk + ul, sizeof unk - ul, "%s%s", nu ? ", " : "", q);
      if (ul >= sizeof unk) ul = sizeof unk - 1;
      nu++;
    }
    if (nu)
      snprintf(in->gpu_note, sizeof in->gpu_note,
               "GPU %s not in the GPU table: the analytic base%s are left out, so the forest "
               "predicts only what it saw (kcast gpus lists the table; --gpus FILE or "
               "KCAST_GPUS=FILE adds a GPU)", unk,
               in->features || several ? "" : " and the occupancy and analytic features");
  }

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
        fail(err, cap, -1, "%s: --features %s needs each row's GPU: --gpu NAME, or --gpu-column COLUMN "
                  "naming a GPU of 'kcast gpus'", src, md_family_word(fam[f]));
        goto fail;
      }
      if (!an_gpu_find(g)) {
        fail(err, cap, -1, "%s: row %zu: --features %s: unknown GPU '%s' (see 'kcast gpus'; KCAST_GPUS "
                  "adds GPUs)", src, i + 1, md_family_word(fam[f]), g);
        goto fail;
      }
    }
  }
  /* derived columns come from every loaded column, so derive first (a
     family asked for that cannot be made is an error naming the row) */
  if (derive(d, fam, nf, in, gcol, src, err, cap)) goto fail;
  /* the overhead share of each row's estimate, before the columns it
     reads may be left out below */
  if (in->want_overhead) {
    free(in->overhead);
    free(in->adapt_class);
    in->overhead = calloc(d->n_rows ? d->n_rows : 1, sizeof *in->overhead);
    in->adapt_class = calloc(d->n_rows ? d->n_rows : 1, sizeof *in->adapt_class);
    double *rowv = malloc((d->n_cols + 1) * sizeof *rowv);
    if (!in->overhead || !in->adapt_class || !rowv) {
      free(rowv);
      fail(err, cap, -1, "out of memory");
      goto fail;
    }
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
    if (derive(d, &bf, 1, in, gcol, src, err, cap)) goto fail;
  }
  if (base && col_index(d, base) < 0) {
    fail(err, cap, -1, "%s: the base column %s is neither a column nor a derived feature", src, base);
    goto fail;
  }
  /* keep the selected families and every derived column asked for */
  {
    size_t n = d->n_rows, keep = 0, nl = strlen(in->left_out);
    for (size_t j = 0; j < d->n_cols; j++) {
      int df = md_family_of(d->names[j]), want = 0;
      if (df >= 0) {
        for (size_t f = 0; f < nf && !want; f++) want = fam[f] == df;
        want = want || (base && !strcmp(base, d->names[j]));
      } else {
        want = in_families(feat, d->names[j]) || (base && !strcmp(base, d->names[j]));
        if (!want && not_a_feature(d->names[j]) && nl + strlen(d->names[j]) + 3 < sizeof in->left_out)
          nl += (size_t)snprintf(in->left_out + nl, sizeof in->left_out - nl, "%s%s",
                                 nl ? ", " : "", d->names[j]);
      }
      if (want) {
        if (keep != j) {
          memmove(d->x + keep * n, d->x + j * n, n * sizeof *d->x);
          d->names[keep] = d->names[j];
        }
        keep++;
      } else {
        char **ne = realloc(d->extra, (d->n_extra + 1) * sizeof *ne);
        if (!ne) { fail(err, cap, -1, "out of memory"); goto fail; }
        d->extra = ne;
        d->extra[d->n_extra++] = d->names[j];
      }
    }
    d->n_cols = keep;
    if (!keep) {
      fail(err, cap, -1, "%s: no feature column belongs to the families '%s'", src, feat);
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
      size_t bad = 0;
      while (bad < d->n_rows && d->y[bad] > 0) bad++;
      if (bad < d->n_rows && in->log_target != 0) {
        /* a dataset's row by its keys, a CSV's by its number */
        char where[600];
        long ka = rf_data_text_col(d, "app"), kd = rf_data_text_col(d, "dataset");
        long kl = rf_data_text_col(d, "lseq"), kg = rf_data_text_col(d, "gpu");
        if (in->db && ka >= 0 && kd >= 0 && kl >= 0)
          snprintf(where, sizeof where, "launch (app '%.100s', dataset '%.200s', lseq %.20s)%s%.100s",
                   d->text[ka][bad], d->text[kd][bad], d->text[kl][bad], kg >= 0 ? " on " : "",
                   kg >= 0 ? d->text[kg][bad] : "");
        else
          snprintf(where, sizeof where, "row %zu", bad + 1);
        fail(err, cap, -1, "%s: %s: target %s is %g; the %s base %s needs a log target, so "
             "every target > 0 (leave it out, or --base none --no-log-target)", src, where,
             in->target, d->y[bad], in->base && strcmp(in->base, "auto") ? "given" : "default",
             base);
      } else {
        fail(err, cap, -1, "%s: --base %s needs a log target (every target > 0, without "
             "--no-log-target)", src, base);
      }
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

/* -------------------------------------------------------------- defaults -- */

void ds_train_defaults(rf_params *p, ds_train_input *in) {
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

