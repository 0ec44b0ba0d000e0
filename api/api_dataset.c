/*
 * api_dataset.c -- a dataset's launches as one table (kcast_dataset_read):
 * the columns of `kcast dataset export` -- keys, every feature (tune.*
 * included), the median of each GPU's and metric's measurements -- as
 * column arrays a caller (the Python package's read_dataset) turns into a
 * DataFrame without parsing a CSV.  Built from the dataset store's matrix
 * and target queries (datasets/ds.h).
 */
#include "api/api_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/ds.h"

/* Column kinds. */
enum { COL_NUM, COL_TEXT };

typedef struct tcol {
  char *name;
  int kind;
  double *num;   /* COL_NUM: nrows values */
  char **text;   /* COL_TEXT: nrows strings */
} tcol;

struct kcast_table {
  size_t nrows, ncols;
  tcol *cols;
};

void kcast_table_free(kcast_table *t) {
  if (!t) return;
  for (size_t j = 0; j < t->ncols; j++) {
    free(t->cols[j].name);
    free(t->cols[j].num);
    for (size_t i = 0; t->cols[j].text && i < t->nrows; i++) free(t->cols[j].text[i]);
    free(t->cols[j].text);
  }
  free(t->cols);
  free(t);
}

size_t kcast_table_nrows(const kcast_table *t) { return t ? t->nrows : 0; }
size_t kcast_table_ncols(const kcast_table *t) { return t ? t->ncols : 0; }

const char *kcast_table_colname(const kcast_table *t, size_t j) {
  return t && j < t->ncols ? t->cols[j].name : NULL;
}

const double *kcast_table_numbers(const kcast_table *t, size_t j) {
  return t && j < t->ncols && t->cols[j].kind == COL_NUM ? t->cols[j].num : NULL;
}

const char *kcast_table_text(const kcast_table *t, size_t j, size_t i) {
  return t && j < t->ncols && i < t->nrows && t->cols[j].kind == COL_TEXT ? t->cols[j].text[i]
                                                                          : NULL;
}

/* A new column of kind at the end of t (room reserved by the caller). */
static tcol *add_col(kcast_table *t, const char *name, int kind) {
  tcol *c = &t->cols[t->ncols];
  memset(c, 0, sizeof *c);
  c->kind = kind;
  if (!(c->name = strdup(name))) return NULL;
  t->ncols++;
  size_t n = t->nrows ? t->nrows : 1;
  if (kind == COL_NUM ? !(c->num = malloc(n * sizeof *c->num))
                      : !(c->text = calloc(n, sizeof *c->text)))
    return NULL;
  return c;
}

kcast_status kcast_dataset_read(const char *path, kcast_table **out) {
  if (!out) return api_fail(KCAST_E_ARG, "kcast_dataset_read: t out-parameter is NULL");
  *out = NULL;
  if (!path || !*path) return api_fail(KCAST_E_ARG, "kcast_dataset_read: path is NULL or empty");
  FILE *probe = fopen(path, "rb");
  if (!probe) return api_fail(KCAST_E_IO, "%s: cannot open", path);
  fclose(probe);
  char err[1024] = "";
  ds_db *db = NULL;
  if (ds_open(path, DS_READONLY, &db, err, sizeof err))
    return api_fail(KCAST_E_FORMAT, "%s", err[0] ? err : "cannot open the dataset");
  ds_matrix m;
  memset(&m, 0, sizeof m);
  ds_stats st;
  memset(&st, 0, sizeof st);
  kcast_table *t = NULL;
  kcast_status rc = KCAST_E_NOMEM;
  ds_query q;
  ds_query_init(&q);
  q.missing = DS_MISSING_NAN;
  q.include_empty = 1;
  q.with_tune = 1;
  if (ds_query_matrix(db, &q, &m) || ds_get_stats(db, &st)) {
    rc = api_fail(KCAST_E_FORMAT, "%s", ds_errmsg(db));
    goto out;
  }
  t = calloc(1, sizeof *t);
  if (!t) goto nomem;
  t->nrows = m.rows;
  t->cols = calloc(5 + m.cols + st.nmeas, sizeof *t->cols);
  if (!t->cols) goto nomem;
  tcol *id = add_col(t, "id", COL_NUM), *app = id ? add_col(t, "app", COL_TEXT) : NULL;
  tcol *dset = app ? add_col(t, "dataset", COL_TEXT) : NULL;
  tcol *lseq = dset ? add_col(t, "lseq", COL_NUM) : NULL;
  tcol *kern = lseq ? add_col(t, "kernel", COL_TEXT) : NULL;
  if (!kern) goto nomem;
  for (size_t i = 0; i < m.rows; i++) {
    id->num[i] = (double)m.launch_id[i];
    lseq->num[i] = (double)m.lseq[i];
    if (!(app->text[i] = strdup(m.app[i] ? m.app[i] : "")) ||
        !(dset->text[i] = strdup(m.dataset[i] ? m.dataset[i] : "")) ||
        !(kern->text[i] = strdup(m.kernel[i] ? m.kernel[i] : "")))
      goto nomem;
  }
  for (size_t j = 0; j < m.cols; j++) {
    tcol *c = add_col(t, m.colnames[j], COL_NUM);
    if (!c) goto nomem;
    for (size_t i = 0; i < m.rows; i++) c->num[i] = m.x[i * m.cols + j];
  }
  for (size_t k = 0; k < st.nmeas; k++) {
    char name[512];
    snprintf(name, sizeof name, "%s@%s", st.meas[k].metric, st.meas[k].gpu);
    tcol *c = add_col(t, name, COL_NUM);
    if (!c) goto nomem;
    ds_target tg;
    if (ds_query_target(db, st.meas[k].gpu, st.meas[k].metric, DS_AGG_MEDIAN, &tg)) {
      rc = api_fail(KCAST_E_FORMAT, "%s", ds_errmsg(db));
      goto out;
    }
    /* both by ascending launch id */
    size_t ti = 0;
    for (size_t i = 0; i < m.rows; i++) {
      while (ti < tg.n && tg.launch_id[ti] < m.launch_id[i]) ti++;
      c->num[i] = ti < tg.n && tg.launch_id[ti] == m.launch_id[i] ? tg.value[ti] : NAN;
    }
    ds_target_free(&tg);
  }
  *out = t;
  t = NULL;
  rc = KCAST_OK;
  goto out;
nomem:
  rc = api_fail(KCAST_E_NOMEM, "%s: out of memory", path);
out:
  kcast_table_free(t);
  ds_stats_free(&st);
  ds_matrix_free(&m);
  ds_close(db);
  return rc;
}
