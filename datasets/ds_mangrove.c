/*
 * ds_mangrove.c -- import GPU Mangrove's databases into a kcast dataset
 * (ds_import_mangrove in ds.h; docs/formats.md, "Importing GPU Mangrove
 * databases", is the normative mapping).
 *
 * GPU Mangrove (Braun et al., TACO 2020) keeps three kinds of SQLite file:
 *   fluxmetrics(bench, app, dataset, lseq, name, metric, value)
 *       one row per (launch, metric): gX gY gZ bX bY bZ shm, CUDA Flux's own
 *       instrumented `time`, and the thread-level dynamic count of every
 *       executed PTX opcode key (`ld.global.f32`);
 *   kerneltime(bench, app, dataset, build, lseq, time)    microseconds
 *   kernelpower(bench, app, dataset, build, lseq, power)  watts
 *       one row per repetition.
 * CUDA Flux counts with the same opcode keys as kcast (DESIGN.md), so a
 * Mangrove launch becomes a kcast launch whose op.* features are the counts
 * as they are; class.* follow from the keys through the taxonomy
 * (feat_class_of_key), and the global-memory byte counts follow from the
 * keys' bytes per thread (feat_mem_bytes_of_key) where every memory key of
 * the launch says its space and size.  Nothing that needs addresses
 * (sectors, bank conflicts, footprint) or warps (ctrl.*) can be derived.
 *
 * Design:
 *  - Every input is opened read-only and its table and columns checked
 *    before the dataset is touched; then one transaction writes everything,
 *    and any error (a text count, a missing gX row) rolls it all back.
 *  - fluxmetrics is read once, sorted by (app, dataset, lseq, rowid), so a
 *    launch's rows arrive together and are written when the key changes:
 *    memory stays one launch, whatever the file's size.
 *  - Launches are remembered by (bench, app, dataset, lseq) -- Mangrove's
 *    join key -- in a feat_vec used as a string -> id map; a measurement row
 *    whose key is not there is counted as skipped, not an error (Mangrove's
 *    time databases often cover more runs than the flux one).
 *  - rep numbers are the row's position among its launch's rows in table
 *    (rowid) order, so importing the same files again rewrites the same
 *    (gpu, metric, launch, rep) keys instead of adding rows.
 */
#include "datasets/ds.h"
#include "datasets/ds_int.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <sqlite3.h>

#define MG_SOURCE "mangrove-import" /* launches.source */
#define MG_TOOL "gpu-mangrove"      /* measurements.tool */

/* Largest integer a double holds exactly. */
#define MG_EXACT_INT 9007199254740992.0

/* An input table and the columns the importer reads from it. */
typedef struct mg_table {
  const char *name;
  const char *cols[7]; /* NULL-terminated */
} mg_table;

static const mg_table flux_table = {
  "fluxmetrics", {"bench", "app", "dataset", "lseq", "name", "metric", "value"}};
static const mg_table time_table = {
  "kerneltime", {"bench", "app", "dataset", "lseq", "time", NULL}};
static const mg_table power_table = {
  "kernelpower", {"bench", "app", "dataset", "lseq", "power", NULL}};

/* Launch metrics of fluxmetrics, in the order of mg_launch.dim[]. */
enum { MG_GX, MG_GY, MG_GZ, MG_BX, MG_BY, MG_BZ, MG_SHM, MG_NDIM };
static const char *const dim_metric[MG_NDIM] = {"gX", "gY", "gZ", "bX",
                                                "bY", "bZ", "shm"};
static const char *const dim_feature[MG_NDIM] = {
  "launch.grid_x", "launch.grid_y", "launch.grid_z", "launch.block_x",
  "launch.block_y", "launch.block_z", "launch.shared_bytes"};
/* CUDA Flux's instrumented kernel time: not ground truth, not imported. */
#define MG_FLUX_TIME "time"

/* Datasheet figures of the GPUs of the Mangrove tutorial (one GK210 of a
   K80 board: half its SMs and bandwidth).  0 = not filled in. */
static const struct known_gpu {
  const char *name;
  int cc_major, cc_minor, sm_count;
  double sm_clock_mhz, mem_bandwidth_gbs;
  int64_t l2_bytes;
  double tdp_w;
} known_gpus[] = {
  {"K80", 3, 7, 13, 875, 240, 1536 * 1024, 0},
  {"T4", 7, 5, 40, 1590, 320, 4096 * 1024, 70},
};

/* One launch of fluxmetrics while its rows are read. */
typedef struct mg_launch {
  char *bench, *app, *dataset, *kernel; /* owned; app NULL = no launch yet */
  int64_t lseq;
  double dim[MG_NDIM];  /* gX..shm as read */
  unsigned have;        /* bit d set when dim[d] was read */
  int saw_time;         /* the `time` row was seen (duplicates refused) */
  feat_vec fv;          /* op.<key> counts so far */
} mg_launch;

typedef struct mg_ctx {
  ds_db *db;
  const ds_mangrove_opts *o;
  ds_import_report rep;
  feat_vec ids;         /* "bench\037app\037dataset\037lseq" -> launch id */
  feat_vec reps;        /* same key -> next rep, per measurement table */
} mg_ctx;

/* ------------------------------------------------------------- errors -- */

/* Row key of a failing row, "(bench=.., app=.., dataset=.., lseq=..[, metric=..])",
   from the statement's first columns as text. */
static void row_key(sqlite3_stmt *s, int with_metric, char *buf, size_t cap) {
  static const char *const names[] = {"bench", "app", "dataset", "lseq"};
  size_t n = 0;
  for (int i = 0; i < 4 + with_metric && n < cap; i++) {
    int col = i < 4 ? i : 5; /* flux: metric is column 5 */
    const char *v = (const char *)sqlite3_column_text(s, col);
    n += (size_t)snprintf(buf + n, cap - n, "%s%s=%s", i ? ", " : "(",
                          i < 4 ? names[i] : "metric", v ? v : "NULL");
  }
  if (n < cap) snprintf(buf + n, cap - n, ")");
}

/* "FILE: table T, row KEY: column C: WHAT"; returns -1. */
static int row_err(mg_ctx *c, const char *path, const char *table,
                   sqlite3_stmt *s, const char *col, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
static int row_err(mg_ctx *c, const char *path, const char *table,
                   sqlite3_stmt *s, const char *col, const char *fmt, ...) {
  char key[600], what[400];
  row_key(s, !strcmp(table, flux_table.name), key, sizeof key);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  ds_set_errmsg(c->db, "%s: table %s, row %s: column %s: %s", path, table,
                key, col, what);
  return -1;
}

/* ------------------------------------------------------------- inputs -- */

/*
 * Open path read-only and check that it holds table t with t's columns.
 * [out] *h is the open connection (NULL on failure); -1 with the message
 * set.
 */
static int open_source(ds_db *db, const char *path, const mg_table *t,
                       ds_foreign *src) {
  memset(src, 0, sizeof *src);
  sqlite3 **h = &src->h;
  struct stat sb;
  if (stat(path, &sb) != 0) {
    ds_set_errmsg(db, "%s: %s", path, strerror(errno));
    return -1;
  }
  if (S_ISDIR(sb.st_mode)) {
    ds_set_errmsg(db, "%s: is a directory, not a GPU Mangrove database", path);
    return -1;
  }
  /* SQLite itself only complains at the first query, and vaguely. */
  static const char magic[16] = "SQLite format 3";
  char head[16];
  FILE *f = fopen(path, "rb");
  if (!f) {
    ds_set_errmsg(db, "%s: %s", path, strerror(errno));
    return -1;
  }
  size_t got = fread(head, 1, sizeof head, f);
  fclose(f);
  if (got != sizeof head || memcmp(head, magic, sizeof magic) != 0) {
    ds_set_errmsg(db, "%s: not an SQLite database (GPU Mangrove databases are"
                  " SQLite 3 files)", path);
    return -1;
  }
  /* read-only, every read bounded (ds_foreign.c); the table a table */
  char err[1200];
  if (ds_foreign_open(path, src, err, sizeof err) < 0) {
    ds_set_errmsg(db, "%s", err);
    return -1;
  }
  int kind = ds_foreign_table(src, t->name);
  if (kind == DS_FOREIGN_NOT_TABLE) {
    ds_set_errmsg(db, "%s: %s is a view, not a table: not a GPU Mangrove database", path,
                  t->name);
    goto fail;
  }
  sqlite3_stmt *s;
  if (sqlite3_prepare_v2(*h, "SELECT name FROM pragma_table_info(?1)", -1, &s,
                         NULL) != SQLITE_OK) {
    ds_set_errmsg(db, "%s: cannot read: %s", path, sqlite3_errmsg(*h));
    goto fail;
  }
  sqlite3_bind_text(s, 1, t->name, -1, SQLITE_STATIC);
  unsigned found = 0, ncols = 0;
  int rc;
  while (ncols < 7 && t->cols[ncols]) ncols++;
  int any = 0;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    const char *col = (const char *)sqlite3_column_text(s, 0);
    any = 1;
    for (unsigned i = 0; col && i < ncols; i++)
      if (!strcasecmp(col, t->cols[i])) found |= 1u << i;
  }
  sqlite3_finalize(s);
  if (rc != SQLITE_DONE) {
    ds_set_errmsg(db, "%s: cannot read: %s", path, sqlite3_errmsg(*h));
    goto fail;
  }
  if (!any) {
    ds_set_errmsg(db, "%s: not a GPU Mangrove database (no table %s)", path,
                  t->name);
    goto fail;
  }
  for (unsigned i = 0; i < ncols; i++) {
    if (!(found & (1u << i))) {
      ds_set_errmsg(db, "%s: not a GPU Mangrove database (table %s has no"
                    " column %s)", path, t->name, t->cols[i]);
      goto fail;
    }
  }
  return 0;
fail:
  ds_foreign_close(src);
  return -1;
}

/* Column col as text: NULL and blobs refused. */
static const char *col_text(mg_ctx *c, const char *path, const char *table,
                            sqlite3_stmt *s, int col, const char *name) {
  int type = sqlite3_column_type(s, col);
  if (type == SQLITE_NULL || type == SQLITE_BLOB) {
    row_err(c, path, table, s, name, "%s", type == SQLITE_NULL
            ? "is NULL, not text" : "is a blob, not text");
    return NULL;
  }
  return (const char *)sqlite3_column_text(s, col);
}

/* Column col as a finite number: text, NULL and blobs refused. */
static int col_number(mg_ctx *c, const char *path, const char *table,
                      sqlite3_stmt *s, int col, const char *name, double *v) {
  int type = sqlite3_column_type(s, col);
  if (type == SQLITE_INTEGER || type == SQLITE_FLOAT) {
    *v = sqlite3_column_double(s, col);
    if (isfinite(*v)) return 0;
    return row_err(c, path, table, s, name, "%g is not a finite number", *v);
  }
  if (type == SQLITE_TEXT)
    return row_err(c, path, table, s, name, "'%.80s' is not a number",
                   (const char *)sqlite3_column_text(s, col));
  return row_err(c, path, table, s, name, "%s", type == SQLITE_NULL
                 ? "is NULL, not a number" : "is a blob, not a number");
}

/* Launch sequence number: an integer >= 0. */
static int col_lseq(mg_ctx *c, const char *path, const char *table,
                    sqlite3_stmt *s, int col, int64_t *lseq) {
  double v;
  if (col_number(c, path, table, s, col, "lseq", &v) < 0) return -1;
  if (v < 0 || v != floor(v) || v >= MG_EXACT_INT)
    return row_err(c, path, table, s, "lseq", "%g is not a launch sequence"
                   " number (an integer >= 0)", v);
  *lseq = (int64_t)v;
  return 0;
}

/* "bench\037app\037dataset\037lseq": the join key of launches and
   measurement rows.  Returns the length, or -1 when it does not fit. */
static int join_key(char *buf, size_t cap, const char *bench, const char *app,
                    const char *dataset, int64_t lseq) {
  int n = snprintf(buf, cap, "%s\037%s\037%s\037%lld", bench, app, dataset,
                   (long long)lseq);
  return n < 0 || (size_t)n >= cap ? -1 : n;
}

/* --------------------------------------------------------- fluxmetrics -- */

static void launch_reset(mg_launch *l) {
  free(l->bench);
  free(l->app);
  free(l->dataset);
  free(l->kernel);
  feat_free(&l->fv);
  memset(l, 0, sizeof *l);
  feat_init(&l->fv);
}

/* An opcode key as CUDA Flux writes them: dot-separated words of letters,
   digits, '_' and ':' ("ld.global.nc.v4.f32", "shared::cta"). */
static int plausible_key(const char *k) {
  if (!*k || *k == '.') return 0;
  for (const char *p = k; *p; p++) {
    if (*p == '.') {
      if (p[1] == '.' || !p[1]) return 0;
    } else if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                 (*p >= '0' && *p <= '9') || *p == '_' || *p == ':')) {
      return 0;
    }
  }
  return 1;
}

/* Does key carry the modifier ".word" (whole word)? */
static int has_modifier(const char *key, const char *word) {
  size_t wl = strlen(word);
  for (const char *p = strchr(key, '.'); p; p = strchr(p + 1, '.'))
    if (!strncmp(p + 1, word, wl) && (p[1 + wl] == '.' || !p[1 + wl]))
      return 1;
  return 0;
}

/*
 * The features of launch l (its op.* counts are in l->fv already): class.*
 * (every class), launch.*, and mem.global_* when every memory key with a
 * non-zero count names its space and size.
 */
static int derive_features(mg_ctx *c, mg_launch *l) {
  double cls[FEAT_C_COUNT] = {0};
  double ld = 0, st = 0, at = 0;
  int mem_ok = 1;
  for (size_t i = 0; i < l->fv.n; i++) {
    const char *key = l->fv.names[i] + 3; /* past "op." */
    double n = l->fv.vals[i];
    feat_class k = feat_class_of_key(key);
    cls[k] += n;
    if (n == 0) continue;
    unsigned b = feat_mem_bytes_of_key(key);
    switch (k) {
      case FEAT_C_LD_GLOBAL: if (b) ld += n * b; else mem_ok = 0; break;
      case FEAT_C_ST_GLOBAL: if (b) st += n * b; else mem_ok = 0; break;
      case FEAT_C_ATOMIC_GLOBAL:
        /* a generic atom may resolve to shared memory */
        if (b && has_modifier(key, "global")) at += n * b;
        else mem_ok = 0;
        break;
      case FEAT_C_LD_GENERIC: case FEAT_C_ST_GENERIC:
        mem_ok = 0; /* may be global: bytes unknown */
        break;
      default: break;
    }
  }
  int rc = 0;
  for (int k = 0; k < FEAT_C_COUNT; k++) {
    char name[64];
    snprintf(name, sizeof name, "class.%s", feat_class_name((feat_class)k));
    rc |= feat_set(&l->fv, name, cls[k]);
  }
  for (int d = 0; d < MG_NDIM; d++) rc |= feat_set(&l->fv, dim_feature[d], l->dim[d]);
  double ctas = l->dim[MG_GX] * l->dim[MG_GY] * l->dim[MG_GZ];
  rc |= feat_set(&l->fv, "launch.ctas", ctas);
  rc |= feat_set(&l->fv, "launch.threads",
                 ctas * l->dim[MG_BX] * l->dim[MG_BY] * l->dim[MG_BZ]);
  if (mem_ok) {
    rc |= feat_set(&l->fv, "mem.global_bytes", ld + st + at);
    rc |= feat_set(&l->fv, "mem.global_load_bytes", ld);
    rc |= feat_set(&l->fv, "mem.global_store_bytes", st);
    rc |= feat_set(&l->fv, "mem.global_atomic_bytes", at);
  } else {
    c->rep.no_mem++;
  }
  if (rc) {
    ds_set_errmsg(c->db, "%s: out of memory", c->o->features);
    return -1;
  }
  return 0;
}

/* Write the launch collected in l (if any) and forget it. */
static int flush_launch(mg_ctx *c, mg_launch *l) {
  if (!l->app) return 0;
  const char *path = c->o->features;
  for (int d = 0; d < MG_NDIM; d++) {
    if (!(l->have & (1u << d))) {
      ds_set_errmsg(c->db, "%s: table fluxmetrics, launch (bench=%s, app=%s,"
                    " dataset=%s, lseq=%lld): no row for metric %s", path,
                    l->bench, l->app, l->dataset, (long long)l->lseq,
                    dim_metric[d]);
      return -1;
    }
  }
  if (derive_features(c, l) < 0) return -1;
  feat_sort(&l->fv);
  ds_launch dl = {0};
  dl.bench = l->bench;
  dl.app = l->app;
  dl.dataset = l->dataset;
  dl.lseq = l->lseq;
  dl.kernel = l->kernel;
  for (int d = 0; d < 3; d++) {
    dl.grid[d] = (uint32_t)l->dim[MG_GX + d];
    dl.block[d] = (uint32_t)l->dim[MG_BX + d];
  }
  dl.shmem = (int64_t)l->dim[MG_SHM];
  dl.source = MG_SOURCE;
  int64_t id;
  if (ds_insert_launch(c->db, &dl, &l->fv, &id) < 0) return -1;
  char key[4096];
  if (join_key(key, sizeof key, l->bench, l->app, l->dataset, l->lseq) < 0) {
    ds_set_errmsg(c->db, "%s: table fluxmetrics, launch (app=%.100s...):"
                  " names too long", path, l->app);
    return -1;
  }
  if (feat_set(&c->ids, key, (double)id) < 0) {
    ds_set_errmsg(c->db, "%s: out of memory", path);
    return -1;
  }
  c->rep.launches++;
  c->rep.features += (int64_t)l->fv.n;
  launch_reset(l);
  return 0;
}

/* Take one fluxmetrics row into l (starting a new launch when its key
   differs from l's). */
static int flux_row(mg_ctx *c, sqlite3_stmt *s, mg_launch *l) {
  const char *path = c->o->features, *T = flux_table.name;
  const char *bench, *app, *dataset, *name, *metric;
  int64_t lseq;
  double v;
  if (!(bench = col_text(c, path, T, s, 0, "bench")) ||
      !(app = col_text(c, path, T, s, 1, "app")) ||
      !(dataset = col_text(c, path, T, s, 2, "dataset")) ||
      col_lseq(c, path, T, s, 3, &lseq) < 0 ||
      !(name = col_text(c, path, T, s, 4, "name")) ||
      !(metric = col_text(c, path, T, s, 5, "metric")) ||
      col_number(c, path, T, s, 6, "value", &v) < 0)
    return -1;
  if (!*app) return row_err(c, path, T, s, "app", "is empty");
  if (!*name) return row_err(c, path, T, s, "name", "is empty (no kernel name)");
  if (!l->app || strcmp(l->app, app) || strcmp(l->dataset, dataset) ||
      l->lseq != lseq) {
    if (flush_launch(c, l) < 0) return -1;
    l->bench = strdup(bench);
    l->app = strdup(app);
    l->dataset = strdup(dataset);
    l->kernel = strdup(name);
    l->lseq = lseq;
    if (!l->bench || !l->app || !l->dataset || !l->kernel) {
      ds_set_errmsg(c->db, "%s: out of memory", path);
      return -1;
    }
  } else if (strcmp(l->bench, bench)) {
    return row_err(c, path, T, s, "bench", "'%s' differs from '%s' in other"
                   " rows of the same (app, dataset, lseq)", bench, l->bench);
  } else if (strcmp(l->kernel, name)) {
    return row_err(c, path, T, s, "name", "'%s' differs from '%s' in other"
                   " rows of the same launch", name, l->kernel);
  }
  for (int d = 0; d < MG_NDIM; d++) {
    if (strcmp(metric, dim_metric[d])) continue;
    if (l->have & (1u << d))
      return row_err(c, path, T, s, "metric", "%s appears twice", metric);
    double lim = d == MG_SHM ? MG_EXACT_INT : 4294967296.0;
    if (v != floor(v) || v < (d == MG_SHM ? 0 : 1) || v >= lim)
      return row_err(c, path, T, s, "value", "%g is not a valid %s (%s)", v,
                     metric, d == MG_SHM ? "bytes, an integer >= 0"
                                         : "an integer from 1 to 2^32-1");
    l->dim[d] = v;
    l->have |= 1u << d;
    return 0;
  }
  if (!strcmp(metric, MG_FLUX_TIME)) {
    if (l->saw_time)
      return row_err(c, path, T, s, "metric", "%s appears twice", metric);
    l->saw_time = 1;
    return 0;
  }
  if (!plausible_key(metric))
    return row_err(c, path, T, s, "metric", "'%.80s' is neither a launch"
                   " metric (gX gY gZ bX bY bZ shm time) nor a PTX opcode key",
                   metric);
  if (v < 0)
    return row_err(c, path, T, s, "value", "%g is not a count (negative)", v);
  char fname[512];
  if (snprintf(fname, sizeof fname, "op.%s", metric) >= (int)sizeof fname)
    return row_err(c, path, T, s, "metric", "opcode key too long");
  if (feat_find(&l->fv, fname) >= 0)
    return row_err(c, path, T, s, "metric", "%s appears twice", metric);
  if (feat_set(&l->fv, fname, v) < 0) {
    ds_set_errmsg(c->db, "%s: out of memory", path);
    return -1;
  }
  return 0;
}

static int import_flux(mg_ctx *c, ds_foreign *f) {
  sqlite3 *h = f->h;
  char m[1200];
  const char *path = c->o->features;
  sqlite3_stmt *s;
  if (sqlite3_prepare_v2(h,
                         "SELECT bench, app, dataset, lseq, name, metric, value"
                         " FROM fluxmetrics ORDER BY app, dataset, lseq, rowid",
                         -1, &s, NULL) != SQLITE_OK) {
    ds_set_errmsg(c->db, "%s: cannot read table fluxmetrics: %s", path,
                  sqlite3_errmsg(h));
    return -1;
  }
  mg_launch l;
  memset(&l, 0, sizeof l);
  feat_init(&l.fv);
  int rc, ret = -1;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    c->rep.flux_rows++;
    if (flux_row(c, s, &l) < 0) goto out;
  }
  if (rc != SQLITE_DONE) {
    ds_set_errmsg(c->db, "%s (table fluxmetrics)", ds_foreign_errmsg(f, m, sizeof m));
    goto out;
  }
  if (flush_launch(c, &l) < 0) goto out;
  ret = 0;
out:
  launch_reset(&l);
  feat_free(&l.fv);
  sqlite3_finalize(s);
  return ret;
}

/* -------------------------------------------------------- measurements -- */

/* Rows of kerneltime / kernelpower as measurements of metric, each value
   times scale; rows without a launch counted in *skipped. */
static int import_meas(mg_ctx *c, ds_foreign *f, const char *path,
                       const mg_table *t, const char *metric, double scale,
                       int64_t *written, int64_t *skipped) {
  sqlite3 *h = f->h;
  char m[1200];
  char sql[160];
  snprintf(sql, sizeof sql, "SELECT bench, app, dataset, lseq, %s FROM %s"
           " ORDER BY rowid", t->cols[4], t->name);
  sqlite3_stmt *s;
  if (sqlite3_prepare_v2(h, sql, -1, &s, NULL) != SQLITE_OK) {
    ds_set_errmsg(c->db, "%s: cannot read table %s: %s", path, t->name,
                  sqlite3_errmsg(h));
    return -1;
  }
  feat_free(&c->reps);
  feat_init(&c->reps);
  int rc, ret = -1;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    const char *bench, *app, *dataset;
    int64_t lseq;
    double v;
    if (!(bench = col_text(c, path, t->name, s, 0, "bench")) ||
        !(app = col_text(c, path, t->name, s, 1, "app")) ||
        !(dataset = col_text(c, path, t->name, s, 2, "dataset")) ||
        col_lseq(c, path, t->name, s, 3, &lseq) < 0 ||
        col_number(c, path, t->name, s, 4, t->cols[4], &v) < 0)
      goto out;
    if (v < 0) {
      row_err(c, path, t->name, s, t->cols[4], "%g is negative", v);
      goto out;
    }
    char key[4096];
    long k = join_key(key, sizeof key, bench, app, dataset, lseq) < 0
                 ? -1 : feat_find(&c->ids, key);
    if (k < 0) {
      (*skipped)++;
      continue;
    }
    double r = feat_get(&c->reps, key, 0);
    if (r >= 2147483647.0) {
      row_err(c, path, t->name, s, t->cols[4], "too many repetitions");
      goto out;
    }
    if (feat_set(&c->reps, key, r + 1) < 0) {
      ds_set_errmsg(c->db, "%s: out of memory", path);
      goto out;
    }
    if (ds_insert_measurement(c->db, (int64_t)c->ids.vals[k], c->o->gpu,
                              metric, v * scale, (int)r, MG_TOOL) < 0)
      goto out;
    (*written)++;
  }
  if (rc != SQLITE_DONE) {
    ds_set_errmsg(c->db, "%s (table %s)", ds_foreign_errmsg(f, m, sizeof m), t->name);
    goto out;
  }
  ret = 0;
out:
  sqlite3_finalize(s);
  return ret;
}

/* ---------------------------------------------------------------- gpus -- */

/* A gpus row for name unless one exists; unknown fields of an existing row
   are filled from the datasheet table when the name is known. */
static int import_gpu(mg_ctx *c) {
  ds_gpu g;
  int found = ds_get_gpu(c->db, c->o->gpu, &g);
  if (found < 0) return -1;
  if (!found) {
    memset(&g, 0, sizeof g);
    snprintf(g.name, sizeof g.name, "%s", c->o->gpu);
  }
  const char *n = c->o->gpu;
  if (!strncasecmp(n, "Tesla ", 6)) n += 6;
  for (size_t i = 0; i < sizeof known_gpus / sizeof known_gpus[0]; i++) {
    const struct known_gpu *k = &known_gpus[i];
    if (strcasecmp(n, k->name)) continue;
    if (g.cc_major <= 0) {
      g.cc_major = k->cc_major;
      g.cc_minor = k->cc_minor;
    }
    if (g.sm_count <= 0) g.sm_count = k->sm_count;
    if (g.sm_clock_mhz <= 0) g.sm_clock_mhz = k->sm_clock_mhz;
    if (g.mem_bandwidth_gbs <= 0) g.mem_bandwidth_gbs = k->mem_bandwidth_gbs;
    if (g.l2_bytes <= 0) g.l2_bytes = k->l2_bytes;
    if (g.tdp_w <= 0) g.tdp_w = k->tdp_w;
  }
  return ds_upsert_gpu(c->db, &g);
}

/* -------------------------------------------------------------- import -- */

int ds_import_mangrove(ds_db *db, const ds_mangrove_opts *o,
                       ds_import_report *rep) {
  if (!o || !o->features || !*o->features) {
    ds_set_errmsg(db, "%s: GPU Mangrove import needs a CUDA Flux database"
                  " (fluxmetrics)", ds_path(db));
    return -1;
  }
  int meas = (o->time && *o->time) || (o->power && *o->power);
  if (meas && (!o->gpu || !*o->gpu)) {
    ds_set_errmsg(db, "%s: measurements need the name of the GPU they were"
                  " taken on", meas && o->time && *o->time ? o->time : o->power);
    return -1;
  }
  if (o->gpu && strlen(o->gpu) >= sizeof ((ds_gpu *)0)->name) {
    ds_set_errmsg(db, "GPU name '%.40s...' is too long", o->gpu);
    return -1;
  }
  mg_ctx c;
  memset(&c, 0, sizeof c);
  c.db = db;
  c.o = o;
  feat_init(&c.ids);
  feat_init(&c.reps);
  ds_foreign hf, ht, hp;
  memset(&hf, 0, sizeof hf);
  memset(&ht, 0, sizeof ht);
  memset(&hp, 0, sizeof hp);
  int ret = -1, in_txn = 0;
  /* Every input is checked before the dataset is touched. */
  if (open_source(db, o->features, &flux_table, &hf) < 0) goto out;
  if (o->time && *o->time && open_source(db, o->time, &time_table, &ht) < 0)
    goto out;
  if (o->power && *o->power &&
      open_source(db, o->power, &power_table, &hp) < 0)
    goto out;
  if (ds_begin(db) < 0) goto out;
  in_txn = 1;
  if (o->command && ds_record_run(db, o->command, NULL) < 0) goto out;
  if (import_flux(&c, &hf) < 0) goto out;
  if (o->gpu && *o->gpu && import_gpu(&c) < 0) goto out;
  if (ht.h && import_meas(&c, &ht, o->time, &time_table, "time_ns", 1e3,
                        &c.rep.time_rows, &c.rep.time_skipped) < 0)
    goto out;
  if (hp.h && import_meas(&c, &hp, o->power, &power_table, "power_w", 1.0,
                        &c.rep.power_rows, &c.rep.power_skipped) < 0)
    goto out;
  if (ds_commit(db) < 0) goto out;
  in_txn = 0;
  if (rep) *rep = c.rep;
  ret = 0;
out:
  if (in_txn) {
    /* ds_rollback clears the message: keep the one that says why. */
    char *msg = strdup(ds_errmsg(db));
    ds_rollback(db);
    ds_set_errmsg(db, "%s", msg ? msg : "out of memory");
    free(msg);
  }
  ds_foreign_close(&hf);
  ds_foreign_close(&ht);
  ds_foreign_close(&hp);
  feat_free(&c.ids);
  feat_free(&c.reps);
  return ret;
}
