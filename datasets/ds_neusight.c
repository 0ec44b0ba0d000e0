/*
 * ds_neusight.c -- import operator launches in the format of the NeuSight
 * training set (Lee, Phanishayee, Mahajan, ASPLOS 2025: PyTorch operators
 * timed on five GPUs) into a kcast dataset (ds_import_neusight in ds.h;
 * docs/formats.md, "Importing operator launches", is the normative
 * mapping).
 *
 * A file is CSV, plain or gzip (zlib's gzread reads both), with a header
 * row naming its columns: OPName, Latency (ms), Device, Kernel Name,
 * Grid x/y/z, Block x/y/z, optionally Kernels (every kernel of the
 * operator, ';'-separated), and the operator's shape parameters (B, M, N,
 * K for bmm; B, H for softmax; ...).  Columns are found by name, so their
 * order does not matter and other columns (Torch Version, Warps per SM,
 * ...) are ignored.
 *
 * Design:
 *  - A row becomes one launch: app = the operator, dataset = its shape and
 *    the GPU it ran on ("B=8 M=512 N=512 K=64 @T4"), lseq = the main
 *    kernel's position among the operator's kernels.  The GPU is part of
 *    the key because the library chooses the kernel and the grid per GPU
 *    (cuBLAS runs a 128x128 tile on an A100 and a 64x64 one on a T4 for
 *    the same product), so the same shape is a different launch on each
 *    GPU; so the features of a launch are its own, and datasets of
 *    different GPUs merge without conflicts.
 *  - The features are opr_features() of the row (model/opr.h): the code
 *    `kcast predict --op` and kcast_features_from_op() run, so training
 *    and prediction read the same columns.  opr.* features that are 0 are
 *    not stored (the family counts: a missing one reads 0).
 *  - Rows of the same key (the files repeat a few shapes) are repetitions:
 *    rep 0, 1, ... in the order read.  They must agree on kernel, grid and
 *    block.
 *  - Every file is read and checked while one transaction writes; any
 *    error (a file that cannot be read, a row that is not as the header
 *    says, a GPU the table does not know) rolls everything back, so the
 *    dataset is as it was.  Importing the same files again rewrites the
 *    same rows.
 */
#include "datasets/ds.h"
#include "datasets/ds_int.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <csv.h>
#include <zlib.h>

#include "model/model.h"
#include "model/opr.h"

#define NS_SOURCE "kcast dataset import-neusight" /* launches.source */
#define NS_TOOL "neusight"                        /* measurements.tool */

/* The columns read by name, in this order in ns_file.col[]. */
enum { C_OP, C_LAT, C_DEV, C_KERNEL, C_GX, C_GY, C_GZ, C_BX, C_BY, C_BZ, C_KERNELS, C_NCOLS };
static const char *const col_name[C_NCOLS] = {
  "OPName", "Latency", "Device", "Kernel Name", "Grid x", "Grid y", "Grid z",
  "Block x", "Block y", "Block z", "Kernels"};
/* Kernels is optional (softmax's files have none). */
#define C_OPTIONAL C_KERNELS

/* Most columns a file may have. */
#define MAX_COLS 64

/* A key's launch id, the repetitions written so far and its launch
   configuration (to check that repeated rows agree). */
typedef struct ns_key {
  char *key;        /* app \x1f dataset \x1f lseq; owned */
  int64_t id;
  int reps;
  uint64_t cfg;     /* hash of kernel, grid and block */
  long line;        /* the first row of the key */
  int file;         /* index of its file */
} ns_key;

/* The import's state (one per call). */
typedef struct ns_state {
  ds_db *db;
  const char *path;      /* current file */
  int file;              /* its index */
  long line;             /* current record's line (1 = the header) */
  int failed;
  char *field[MAX_COLS]; /* the record's fields, owned */
  size_t flen[MAX_COLS];
  int nf;
  int too_many;
  int col[C_NCOLS];      /* column of each name, -1 absent */
  char *hdr[MAX_COLS];   /* the header's names */
  int ncols;
  const opr_info *op;    /* operator of the last row, and its shape columns */
  int dimcol[OPR_MAX_DIMS];
  ns_key *keys;          /* open-addressing table of keys */
  size_t nkeys, kcap;
  char gpus[32][64];     /* the GPU keys written, for their gpus rows */
  int ngpus;
  ds_neusight_report *rep;
  const char *const *paths;
  char buf[1 << 16];     /* what gzread gives */
} ns_state;

static void fail(ns_state *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(ns_state *s, const char *fmt, ...) {
  if (s->failed) return;
  s->failed = 1;
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  ds_set_errmsg(s->db, "%s:%ld: %s", s->path, s->line, msg);
}

static uint64_t fnv(const char *p, size_t n, uint64_t h) {
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
  return h;
}

/* The entry of key in the table, created (id 0) when new; NULL out of
   memory. */
static ns_key *key_get(ns_state *s, const char *key) {
  if (2 * (s->nkeys + 1) > s->kcap) {
    size_t nc = s->kcap ? 2 * s->kcap : 4096;
    ns_key *t = calloc(nc, sizeof *t);
    if (!t) return NULL;
    for (size_t i = 0; i < s->kcap; i++) {
      if (!s->keys[i].key) continue;
      size_t h = fnv(s->keys[i].key, strlen(s->keys[i].key), 1469598103934665603ull) & (nc - 1);
      while (t[h].key) h = (h + 1) & (nc - 1);
      t[h] = s->keys[i];
    }
    free(s->keys);
    s->keys = t;
    s->kcap = nc;
  }
  size_t h = fnv(key, strlen(key), 1469598103934665603ull) & (s->kcap - 1);
  while (s->keys[h].key && strcmp(s->keys[h].key, key)) h = (h + 1) & (s->kcap - 1);
  if (!s->keys[h].key) {
    if (!(s->keys[h].key = strdup(key))) return NULL;
    s->nkeys++;
  }
  return &s->keys[h];
}

static void on_field(void *data, size_t len, void *ctx) {
  ns_state *s = ctx;
  if (s->failed) return;
  if (s->nf >= MAX_COLS) { s->too_many = 1; return; }
  char *f = malloc(len + 1);
  if (!f) { fail(s, "out of memory"); return; }
  memcpy(f, data, len);
  f[len] = 0;
  s->field[s->nf] = f;
  s->flen[s->nf++] = len;
}

/* A number field of column c: finite; a whole number in [lo, hi] when
   whole_num, else > 0. */
static int field_num(ns_state *s, int c, int whole_num, double lo, double hi, double *out) {
  const char *f = s->field[s->col[c]];
  char *e;
  errno = 0;
  double v = strtod(f, &e);
  while (e && isspace((unsigned char)*e)) e++;
  if (e == f || *e || errno || !isfinite(v) || (whole_num && (v != floor(v) || v < lo || v > hi)) ||
      (!whole_num && !(v > 0))) {
    fail(s, "column %s: '%s' is not %s", col_name[c], f,
         whole_num ? "a whole number >= 1" : "a positive number");
    return -1;
  }
  *out = v;
  return 0;
}

static int header(ns_state *s) {
  if (s->too_many) { fail(s, "more than %d columns", MAX_COLS); return -1; }
  for (int c = 0; c < C_NCOLS; c++) s->col[c] = -1;
  s->ncols = s->nf;
  for (int f = 0; f < s->nf; f++) {
    s->hdr[f] = s->field[f];
    s->field[f] = NULL;
    for (int c = 0; c < C_NCOLS; c++)
      if (!strcmp(s->hdr[f], col_name[c])) {
        if (s->col[c] >= 0) { fail(s, "column '%s' given twice", col_name[c]); return -1; }
        s->col[c] = f;
      }
  }
  for (int c = 0; c < C_NCOLS; c++)
    if (s->col[c] < 0 && c != C_OPTIONAL) {
      fail(s, "not an operator launch file: the header has no column '%s'", col_name[c]);
      return -1;
    }
  s->op = NULL;
  return 0;
}

/* The shape columns of op in this file; -1 naming the one it lacks. */
static int shape_columns(ns_state *s, const opr_info *op) {
  size_t nd = opr_ndims(op);
  for (size_t i = 0; i < nd; i++) {
    s->dimcol[i] = -1;
    for (int f = 0; f < s->ncols; f++)
      if (opr_dim_index(op, s->hdr[f]) == (int)i) s->dimcol[i] = f;
    if (s->dimcol[i] < 0) {
      char dn[32];
      fail(s, "operator %s: the header has no column for its parameter %s", op->name,
           opr_dim_name(op, i, dn, sizeof dn));
      return -1;
    }
  }
  s->op = op;
  return 0;
}

/* Is the GPU key g among those written?  Add it if not (at most 32). */
static void note_gpu(ns_state *s, const char *g) {
  for (int i = 0; i < s->ngpus; i++)
    if (!strcmp(s->gpus[i], g)) return;
  if (s->ngpus < 32) snprintf(s->gpus[s->ngpus++], sizeof s->gpus[0], "%s", g);
}

static void row(ns_state *s) {
  if (s->too_many || s->nf != s->ncols) {
    fail(s, "%s%d fields, the header has %d", s->too_many ? "more than " : "",
         s->too_many ? MAX_COLS : s->nf, s->ncols);
    return;
  }
  const char *opname = s->field[s->col[C_OP]];
  const opr_info *op = opr_find(opname);
  if (!op) {
    char known[400];
    size_t n = 0;
    for (size_t i = 0; i < opr_count() && n + 16 < sizeof known; i++)
      n += (size_t)snprintf(known + n, sizeof known - n, "%s%s", i ? ", " : "", opr_at(i)->name);
    fail(s, "column OPName: unknown operator '%s' (known: %s)", opname, known);
    return;
  }
  if (op != s->op && shape_columns(s, op)) return;
  /* the description as `kcast predict --op` takes it: one parser checks
     the shape */
  char desc[512], shape[400];
  size_t dl = 0, sl = 0, nd = opr_ndims(op);
  dl += (size_t)snprintf(desc, sizeof desc, "%s", op->name);
  for (size_t i = 0; i < nd; i++) {
    char dn[32];
    const char *v = s->field[s->dimcol[i]];
    if (strlen(v) > 24 || strchr(v, ' ') || strchr(v, '\'') || strchr(v, '"')) {
      fail(s, "column %s: '%.40s' is not a whole number", s->hdr[s->dimcol[i]], v);
      return;
    }
    opr_dim_name(op, i, dn, sizeof dn);
    dl += (size_t)snprintf(desc + dl, sizeof desc - dl, " %s=%s", dn, v);
    sl += (size_t)snprintf(shape + sl, sizeof shape - sl, "%s%s=%s", i ? " " : "", dn, v);
  }
  opr_launch l;
  if (opr_parse(desc, &l)) {
    fail(s, "%s", rf_last_error());
    return;
  }
  double lat, g[6];
  for (int k = 0; k < 6; k++)
    if (field_num(s, C_GX + k, 1, 1, 4294967295.0, &g[k])) return;
  if (field_num(s, C_LAT, 0, 0, 0, &lat)) return;
  for (int k = 0; k < 3; k++) {
    l.grid[k] = (uint32_t)g[k];
    l.block[k] = (uint32_t)g[3 + k];
  }
  const char *kernel = s->field[s->col[C_KERNEL]];
  if (!*kernel) { fail(s, "column Kernel Name is empty"); return; }
  snprintf(l.kernel, sizeof l.kernel, "%s", kernel);
  /* the operator's kernels: how many, where the main one is, and (for a
     convolution) what they say of the algorithm */
  int64_t lseq = 0;
  if (s->col[C_KERNELS] >= 0) {
    const char *list = s->field[s->col[C_KERNELS]];
    snprintf(l.others, sizeof l.others, "%s", list);
    unsigned nk = 0;
    int64_t at = -1, sub = -1;
    for (const char *t = list; *t;) {
      size_t n = strcspn(t, ";");
      if (n) {
        if (at < 0 && n == strlen(kernel) && !strncmp(t, kernel, n)) at = nk;
        if (sub < 0) {
          char item[OPR_KERNEL_MAX];
          snprintf(item, sizeof item, "%.*s", (int)(n < sizeof item ? n : sizeof item - 1), t);
          if (strstr(item, kernel)) sub = nk; /* a demangled spelling of it */
        }
        nk++;
      }
      t += n;
      if (*t) t++;
    }
    l.nkernels = nk ? nk : 1;
    lseq = at >= 0 ? at : sub >= 0 ? sub : 0;
  } else {
    l.nkernels = 1;
  }
  double f[OPR_NFEAT];
  if (opr_features(&l, f)) {
    fail(s, "%s", rf_last_error());
    return;
  }
  const char *device = s->field[s->col[C_DEV]];
  const an_gpu *gpu = an_gpu_find(device);
  if (!gpu) {
    fail(s, "column Device: GPU '%s' is not in the GPU table (kcast gpus; KCAST_GPUS or --gpus "
         "adds one)", device);
    return;
  }
  char dataset[512];
  snprintf(dataset, sizeof dataset, "%s @%s", shape, gpu->name);
  char key[700];
  snprintf(key, sizeof key, "%s\x1f%s\x1f%lld", op->name, dataset, (long long)lseq);
  ns_key *k = key_get(s, key);
  if (!k) { fail(s, "out of memory"); return; }
  uint64_t cfg = fnv(kernel, strlen(kernel), 1469598103934665603ull);
  cfg = fnv((const char *)g, sizeof g, cfg);
  if (!k->id) {
    feat_vec fv;
    feat_init(&fv);
    int bad = 0;
    for (int j = 0; j < OPR_NFEAT && !bad; j++)
      if (f[j] != 0 || strncmp(opr_feature_names[j], "opr.", 4))
        bad = feat_set(&fv, opr_feature_names[j], f[j]);
    ds_launch dl_ = {.app = op->name, .dataset = dataset, .lseq = lseq, .kernel = kernel,
                     .grid = {l.grid[0], l.grid[1], l.grid[2]},
                     .block = {l.block[0], l.block[1], l.block[2]}, .source = NS_SOURCE};
    if (bad) {
      fail(s, "out of memory");
    } else if (ds_insert_launch(s->db, &dl_, &fv, &k->id) < 0) {
      fail(s, "%s", ds_errmsg(s->db));
    } else {
      k->cfg = cfg;
      k->line = s->line;
      k->file = s->file;
      s->rep->launches++;
      s->rep->features += (int64_t)fv.n;
    }
    feat_free(&fv);
    if (s->failed) return;
  } else if (k->cfg != cfg) {
    fail(s, "%s %s: another kernel, grid or block than the same shape on line %ld%s%s",
         op->name, dataset, k->line, k->file != s->file ? " of " : "",
         k->file != s->file ? s->paths[k->file] : "");
    return;
  }
  if (ds_insert_measurement(s->db, k->id, gpu->name, "time_ns", lat * 1e6, k->reps, NS_TOOL) < 0) {
    fail(s, "%s", ds_errmsg(s->db));
    return;
  }
  k->reps++;
  s->rep->time_rows++;
  note_gpu(s, gpu->name);
}

static void on_record(int c, void *ctx) {
  ns_state *s = ctx;
  (void)c;
  if (!s->failed) {
    if (s->line == 1) header(s);
    else if (!(s->nf == 1 && !s->flen[0])) { /* a blank line */
      s->rep->rows++;
      row(s);
    }
  }
  for (int f = 0; f < s->nf; f++) {
    free(s->field[f]);
    s->field[f] = NULL;
  }
  s->nf = 0;
  s->too_many = 0;
  s->line++;
}

static void free_header(ns_state *s) {
  for (int f = 0; f < s->ncols; f++) {
    free(s->hdr[f]);
    s->hdr[f] = NULL;
  }
  s->ncols = 0;
}

/* Read one file into the open transaction. */
static int read_file(ns_state *s, const char *path) {
  s->path = path;
  s->line = 1;
  s->op = NULL;
  gzFile gz = gzopen(path, "rb");
  if (!gz) {
    ds_set_errmsg(s->db, "%s: cannot open: %s", path, errno ? strerror(errno) : "out of memory");
    return -1;
  }
  gzbuffer(gz, 1 << 17);
  struct csv_parser p;
  if (csv_init(&p, CSV_APPEND_NULL)) {
    gzclose(gz);
    ds_set_errmsg(s->db, "%s: cannot start the CSV reader", path);
    return -1;
  }
  int n = 0;
  while (!s->failed && (n = gzread(gz, s->buf, sizeof s->buf)) > 0) {
    if (csv_parse(&p, s->buf, (size_t)n, on_field, on_record, s) != (size_t)n && !s->failed)
      fail(s, "%s", csv_strerror(csv_error(&p)));
  }
  if (!s->failed && n < 0) {
    int e;
    const char *m = gzerror(gz, &e);
    ds_set_errmsg(s->db, "%s: cannot read: %s", path, e == Z_ERRNO ? strerror(errno) : m);
    s->failed = 1;
  }
  if (!s->failed) csv_fini(&p, on_field, on_record, s);
  csv_free(&p);
  for (int f = 0; f < s->nf; f++) {
    free(s->field[f]);
    s->field[f] = NULL;
  }
  s->nf = 0;
  gzclose(gz);
  if (!s->failed && s->line == 1) {
    ds_set_errmsg(s->db, "%s: empty file (no header row)", path);
    s->failed = 1;
  }
  free_header(s);
  return s->failed ? -1 : 0;
}

int ds_import_neusight(ds_db *db, const char *const *paths, size_t n, const char *command,
                       ds_neusight_report *rep) {
  ds_neusight_report r;
  memset(&r, 0, sizeof r);
  if (!n || !paths) {
    ds_set_errmsg(db, "import-neusight: no input file");
    return -1;
  }
  ns_state *s = calloc(1, sizeof *s);
  if (!s) {
    ds_set_errmsg(db, "out of memory");
    return -1;
  }
  s->db = db;
  s->rep = &r;
  s->paths = paths;
  int rc = -1;
  if (ds_begin(db) < 0) goto out;
  if (command && ds_record_run(db, command, NULL) < 0) goto out;
  for (size_t i = 0; i < n; i++) {
    s->file = (int)i;
    if (read_file(s, paths[i])) goto out;
    r.files++;
  }
  for (int i = 0; i < s->ngpus; i++) {
    const an_gpu *t = an_gpu_find(s->gpus[i]);
    ds_gpu g;
    memset(&g, 0, sizeof g);
    snprintf(g.name, sizeof g.name, "%s", s->gpus[i]);
    if (t) {
      g.cc_major = t->cc_major;
      g.cc_minor = t->cc_minor;
      g.sm_count = t->sms;
      g.sm_clock_mhz = t->boost_mhz;
      g.mem_bytes = (int64_t)(t->mem_gb * 1e9);
      g.mem_bandwidth_gbs = t->mem_bw_gbs;
      g.l2_bytes = (int64_t)(t->l2_mb * 1048576.0);
      g.tdp_w = t->tdp_w;
    }
    if (ds_upsert_gpu(db, &g) < 0) goto out;
    snprintf(r.gpus + strlen(r.gpus), sizeof r.gpus - strlen(r.gpus), "%s%s", i ? "," : "",
             s->gpus[i]);
  }
  if (ds_commit(db) < 0) goto out;
  rc = 0;
out:
  if (rc) {
    char keep[1024];
    snprintf(keep, sizeof keep, "%s", ds_errmsg(db));
    ds_rollback(db);
    ds_set_errmsg(db, "%s", keep);
  }
  for (size_t i = 0; i < s->kcap; i++) free(s->keys[i].key);
  free(s->keys);
  free_header(s);
  free(s);
  if (!rc && rep) *rep = r;
  return rc;
}
