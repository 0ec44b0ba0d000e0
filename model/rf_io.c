/*
 * rf_io.c -- the .kcm model file: writing (atomic) and loading (checked).
 *
 * docs/formats.md ("Model file (.kcm)") is the normative layout; in short:
 *
 *   0        8  magic "KCASTRF\0"
 *   8        4  u32 format version (RF_FORMAT_VERSION)
 *   12       4  u32 byte-order marker 0x01020304 as the writer stored it
 *   16       8  u64 payload length L
 *   24       L  payload: names, transform, hyperparameters, summary,
 *               importances, trees (nodes, leaf offsets, leaf samples),
 *               calibration table (version 2), base feature and the
 *               unseen-GPU calibration table (version 3), the features'
 *               training ranges (version 4), adapted GPUs (version 5),
 *               the extrapolation median (version 6), the tables'
 *               shrinks (version 7), their class shrinks (version 8),
 *               the analytic estimate's version (version 9)
 *   24+L     4  u32 CRC-32 (zlib) of bytes 0 .. 24+L-1
 *
 * Numbers are in the writer's byte order; the marker lets a reader on the
 * other order refuse the file by name instead of misreading it.
 *
 * Versions: 9 appends, after them, u32 the AN_VERSION of the analytic
 * estimate an an.* base was computed with at training (>= 1); written
 * for every model with such a base and a log target (so with versions 6
 * to 8's fields, zero where unused).  8 appends, after them, per table (same order) u32 n_keyed
 * <= RF_SHRINK_CLASSES, and when above 0 u32 the class column (an index
 * of the features) and n_keyed x (f64 class value, f64 shrink in [0, 1],
 * u32 target): a shrink per class of rows (rf_calib.c); written only when
 * a table has one.  7 appends, after base_med, per table (the calibration one,
 * then the unseen-GPU one) f64 shrink in [0, 1] and u32 its target (0
 * the base, 1 base_med): how far a table made on held-out groups moves
 * the forest's answers (rf_calib.c); written only when one is above 0.
 * 6 appends, after the adapted GPUs (whose count may be 0 there),
 * f64 base_med: the median of log(y / base) over the training rows, which
 * an answer beyond the training ranges shrinks toward (rf_range.c); it is
 * written only for a log target with a base, and files before it load
 * without the shrink.  5 appends the adapted GPUs (u32 count >= 1, then
 * per GPU its name, class, factors, shots and spread).
 * 4 appends the training ranges (u32 flag, then per feature f64
 * smallest and f64 largest training value); older files load without
 * them (no out-of-range test).  3 appends the base feature (i32, -1 = none) and a second
 * calibration table, for GPUs the model was not trained on (same layout,
 * n = 0 when absent), after the first; version-2 files load with neither.
 * 2 appends the interval calibration table after the last tree
 * (always present, n_cal = 0 when uncalibrated); version 1 files, which
 * end after the last tree, still load, uncalibrated.  The version went up
 * rather than the table becoming an optional tail so that a version-1
 * reader refuses a new file as "unsupported version 2" instead of
 * predicting with uncalibrated intervals.
 *
 * A model file is input, not an invariant: the loader checks the frame
 * (size, magic, marker, version, length, CRC) and then every count against
 * the bytes left before allocating, every child index (greater than its
 * parent's, inside the tree: a walk always ends), every feature index and
 * every leaf number, so no file can make prediction read out of bounds or
 * loop, and every leaf value and sample (finite, within float range, finite
 * once transformed back), so none can predict NaN or infinity.  Each
 * failure names the file and what is wrong.
 */
#include "model/rf_int.h"

#include <errno.h>
#include <float.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define KCM_MAGIC "KCASTRF"  /* 8 bytes with its NUL */
#define KCM_ENDIAN 0x01020304u
#define KCM_HEADER 24
#define KCM_OLDEST 1         /* oldest version this build reads */

/* ----------------------------------------------------------------- writer -- */

typedef struct wbuf { uint8_t *p; size_t len, cap; int failed; } wbuf;

static void put(wbuf *b, const void *src, size_t n) {
  if (b->failed) return;
  if (b->len + n > b->cap) {
    size_t nc = b->cap ? b->cap : 4096;
    while (nc < b->len + n) nc *= 2;
    uint8_t *t = rf__realloc(b->p, nc);
    if (!t) {
      b->failed = 1;
      return;
    }
    b->p = t;
    b->cap = nc;
  }
  memcpy(b->p + b->len, src, n);
  b->len += n;
}

static void put_u32(wbuf *b, uint32_t v) { put(b, &v, 4); }
static void put_u64(wbuf *b, uint64_t v) { put(b, &v, 8); }
static void put_f64(wbuf *b, double v) { put(b, &v, 8); }
static void put_str(wbuf *b, const char *s) {
  size_t n = strlen(s);
  put_u32(b, (uint32_t)n);
  put(b, s, n);
}

static void put_calib(wbuf *b, const rf_calib *c) {
  put_u32(b, c->n);
  if (!c->n) return;
  put_u32(b, (uint32_t)c->method);
  put_u32(b, c->folds);
  put_u64(b, c->rows);
  for (unsigned k = 0; k < c->n; k++) {
    put_f64(b, c->cov[k]);
    put_f64(b, c->q[k]);
  }
}

int rf_save(const rf_forest *f, const char *path) {
  wbuf b = {0};
  put(&b, KCM_MAGIC, 8);
  /* version 6 only for a model with base_med, 5 for one with adapted GPUs:
     the others stay readable by builds that read version 4 */
  int v6 = isfinite(f->base_med);
  /* version 8 only for a model whose tables shrink by class
     (rf_calib.n_keyed), 7 for one whose tables shrink (rf_calib.shrink) */
  /* version 9 for a model whose base is the analytic estimate */
  int v9 = v6 && f->an_version;
  int v8 = v9 || (v6 && (f->cal.n_keyed || f->cal_unseen.n_keyed));
  int v7 = v8 || (v6 && (f->cal.shrink > 0 || f->cal_unseen.shrink > 0));
  put_u32(&b, v9 ? 9 : v8 ? 8 : v7 ? 7 : v6 ? 6 : f->n_adapt ? 5 : 4);
  put_u32(&b, KCM_ENDIAN);
  put_u64(&b, 0); /* payload length, patched below */
  put_str(&b, f->target);
  put_str(&b, f->gpu);
  put_u32(&b, (uint32_t)f->params.transform);
  put_u32(&b, (uint32_t)f->n_features);
  for (size_t j = 0; j < f->n_features; j++) put_str(&b, f->features[j]);
  const rf_params *p = &f->params;
  put_u32(&b, p->n_trees);
  put_f64(&b, p->max_features);
  put_u32(&b, p->min_leaf);
  put_u32(&b, p->max_depth);
  put_u32(&b, (uint32_t)p->extra_trees);
  put_u32(&b, (uint32_t)p->bootstrap);
  put_u64(&b, p->seed);
  put_u32(&b, p->n_bins);
  put_u32(&b, p->leaf_cap);
  put_u32(&b, (uint32_t)p->perm_importance);
  const rf_summary *s = &f->summary;
  put_u64(&b, s->n_rows);
  put_f64(&b, s->oob_mse);
  put_f64(&b, s->oob_mape);
  put_f64(&b, s->oob_r2);
  put_f64(&b, s->cv_mape);
  put_f64(&b, s->cv_median_ape);
  put_f64(&b, s->cv_coverage);
  put_u64(&b, (uint64_t)s->created);
  for (size_t j = 0; j < f->n_features; j++) put_f64(&b, f->mdi[j]);
  put_u32(&b, f->perm != NULL);
  if (f->perm)
    for (size_t j = 0; j < f->n_features; j++) put_f64(&b, f->perm[j]);
  for (size_t t = 0; t < f->n_trees; t++) {
    const rf_tree *tr = &f->trees[t];
    put_u32(&b, tr->n_nodes);
    put_u32(&b, tr->n_leaves);
    put_u32(&b, tr->n_values);
    for (uint32_t k = 0; k < tr->n_nodes; k++) {
      put_f64(&b, tr->nodes[k].v);
      put_u32(&b, (uint32_t)tr->nodes[k].feature);
      put_u32(&b, tr->nodes[k].left);
    }
    put(&b, tr->leaf_off, ((size_t)tr->n_leaves + 1) * 4);
    put(&b, tr->values, (size_t)tr->n_values * 4);
  }
  put_calib(&b, &f->cal);
  /* version 3: the base feature and the table for unseen GPUs */
  put_u32(&b, (uint32_t)(int32_t)f->params.base_feature);
  put_calib(&b, &f->cal_unseen);
  /* version 4: the training ranges */
  put_u32(&b, f->range_lo && f->range_hi);
  if (f->range_lo && f->range_hi)
    for (size_t j = 0; j < f->n_features; j++) {
      put_f64(&b, f->range_lo[j]);
      put_f64(&b, f->range_hi[j]);
    }
  if (f->n_adapt || v6) { /* version 5: the adapted GPUs (version 6: maybe none) */
    put_u32(&b, (uint32_t)f->n_adapt);
    for (size_t k = 0; k < f->n_adapt; k++) {
      put_str(&b, f->adapt[k].gpu);
      put_u32(&b, (uint32_t)f->adapt[k].cls);
      put_f64(&b, f->adapt[k].host);
      put_f64(&b, f->adapt[k].device);
      put_u32(&b, f->adapt[k].shots);
      put_f64(&b, f->adapt[k].rmse_log);
    }
  }
  if (v6) put_f64(&b, f->base_med); /* version 6: what extrapolation shrinks toward */
  if (v7) { /* version 7: each table's shrink, the seen GPUs' then the unseen ones' */
    put_f64(&b, f->cal.shrink);
    put_u32(&b, (uint32_t)f->cal.toward);
    put_f64(&b, f->cal_unseen.shrink);
    put_u32(&b, (uint32_t)f->cal_unseen.toward);
  }
  if (v8) { /* version 8: each table's class shrinks, in the same order */
    const rf_calib *tab[2] = {&f->cal, &f->cal_unseen};
    for (int k = 0; k < 2; k++) {
      put_u32(&b, tab[k]->n_keyed);
      if (!tab[k]->n_keyed) continue;
      put_u32(&b, (uint32_t)tab[k]->key);
      for (unsigned c = 0; c < tab[k]->n_keyed; c++) {
        put_f64(&b, tab[k]->key_val[c]);
        put_f64(&b, tab[k]->key_shrink[c]);
        put_u32(&b, (uint32_t)tab[k]->key_toward[c]);
      }
    }
  }
  if (v9) put_u32(&b, f->an_version); /* version 9: the estimate of the base */
  if (b.failed) {
    rf__free(b.p);
    return rf__nomem();
  }
  uint64_t L = b.len - KCM_HEADER;
  memcpy(b.p + 16, &L, 8);
  uLong crc = crc32(0L, Z_NULL, 0);
  for (size_t off = 0; off < b.len;) { /* crc32 takes uInt lengths */
    size_t chunk = b.len - off > (1u << 30) ? (1u << 30) : b.len - off;
    crc = crc32(crc, b.p + off, (uInt)chunk);
    off += chunk;
  }
  put_u32(&b, (uint32_t)crc);
  if (b.failed) {
    rf__free(b.p);
    return rf__nomem();
  }
  size_t tl = strlen(path) + 32;
  char *tmp = rf__malloc(tl);
  if (!tmp) {
    rf__free(b.p);
    return rf__nomem();
  }
  snprintf(tmp, tl, "%s.tmp.%ld", path, (long)getpid());
  int rc = -1;
  FILE *fp = fopen(tmp, "wb");
  if (!fp) {
    rf__err("%s: cannot create: %s", tmp, strerror(errno));
    goto out;
  }
  size_t w = fwrite(b.p, 1, b.len, fp);
  int e1 = fflush(fp), e2 = fsync(fileno(fp));
  int e3 = fclose(fp);
  if (w != b.len || e1 || e2 || e3) {
    rf__err("%s: write failed: %s", tmp, strerror(errno));
    unlink(tmp);
    goto out;
  }
  if (rename(tmp, path)) {
    rf__err("%s: cannot rename to %s: %s", tmp, path, strerror(errno));
    unlink(tmp);
    goto out;
  }
  rc = 0;
out:
  rf__free(tmp);
  rf__free(b.p);
  return rc;
}

/* ----------------------------------------------------------------- reader -- */

typedef struct rd {
  const uint8_t *p;
  size_t len, pos;       /* pos within the whole file */
  const char *path;
  int failed;
} rd;

static int rd_need(rd *r, size_t n, const char *what) {
  if (r->failed) return -1;
  if (n > r->len - r->pos) {
    rf__err("%s: inconsistent: %s (%zu bytes) runs past the end of the payload at offset %zu",
            r->path, what, n, r->pos);
    r->failed = 1;
    return -1;
  }
  return 0;
}

static uint32_t get_u32(rd *r, const char *what) {
  uint32_t v = 0;
  if (rd_need(r, 4, what)) return 0;
  memcpy(&v, r->p + r->pos, 4);
  r->pos += 4;
  return v;
}

static uint64_t get_u64(rd *r, const char *what) {
  uint64_t v = 0;
  if (rd_need(r, 8, what)) return 0;
  memcpy(&v, r->p + r->pos, 8);
  r->pos += 8;
  return v;
}

static double get_f64(rd *r, const char *what) {
  double v = 0;
  if (rd_need(r, 8, what)) return 0;
  memcpy(&v, r->p + r->pos, 8);
  r->pos += 8;
  return v;
}

static char *get_str(rd *r, const char *what) {
  uint32_t n = get_u32(r, what);
  if (rd_need(r, n, what)) return NULL;
  if (memchr(r->p + r->pos, 0, n)) {
    rf__err("%s: inconsistent: %s contains a NUL byte (offset %zu)", r->path, what, r->pos);
    r->failed = 1;
    return NULL;
  }
  char *s = rf__malloc((size_t)n + 1);
  if (!s) {
    rf__nomem();
    r->failed = 1;
    return NULL;
  }
  memcpy(s, r->p + r->pos, n);
  s[n] = 0;
  r->pos += n;
  return s;
}

static int bad(rd *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(rd *r, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  r->failed = 1;
  return rf__err("%s: inconsistent: %s", r->path, msg);
}

/* Can a leaf predict v (transformed space)?  Finite, storable as the
   32-bit float leaf samples are, and finite once transformed back: a
   CRC-valid file could hold anything. */
static int leaf_ok(const rf_forest *f, double v) {
  return isfinite(v) && fabs(v) <= FLT_MAX && isfinite(rf__untransform(f->params.transform, v));
}

static int read_tree(rd *r, rf_forest *f, size_t t, rf_tree *tr) {
  char what[64];
  snprintf(what, sizeof what, "tree %zu header", t);
  tr->n_nodes = get_u32(r, what);
  tr->n_leaves = get_u32(r, what);
  tr->n_values = get_u32(r, what);
  if (r->failed) return -1;
  if (tr->n_nodes == 0) return bad(r, "tree %zu has no nodes", t);
  if (tr->n_leaves == 0 || tr->n_leaves > tr->n_nodes)
    return bad(r, "tree %zu: %u leaves for %u nodes", t, tr->n_leaves, tr->n_nodes);
  snprintf(what, sizeof what, "tree %zu nodes", t);
  if (rd_need(r, (size_t)tr->n_nodes * 16, what)) return -1;
  snprintf(what, sizeof what, "tree %zu leaf offsets", t);
  if (rd_need(r, (size_t)tr->n_nodes * 16 + ((size_t)tr->n_leaves + 1) * 4, what)) return -1;
  snprintf(what, sizeof what, "tree %zu leaf samples", t);
  if (rd_need(r, (size_t)tr->n_nodes * 16 + ((size_t)tr->n_leaves + 1) * 4 +
                     (size_t)tr->n_values * 4, what))
    return -1;
  tr->nodes = rf__mallocn(tr->n_nodes, sizeof(rf_node));
  tr->leaf_off = rf__mallocn((size_t)tr->n_leaves + 1, sizeof(uint32_t));
  tr->values = rf__mallocn(tr->n_values ? tr->n_values : 1, sizeof(float));
  if (!tr->nodes || !tr->leaf_off || !tr->values) {
    r->failed = 1;
    return rf__nomem();
  }
  for (uint32_t k = 0; k < tr->n_nodes; k++) {
    rf_node *nd = &tr->nodes[k];
    nd->v = get_f64(r, what);
    nd->feature = (int32_t)get_u32(r, what);
    nd->left = get_u32(r, what);
    if (nd->feature >= 0) {
      if ((size_t)nd->feature >= f->n_features)
        return bad(r, "tree %zu node %u: feature index %d out of range (%zu features)", t, k,
                   nd->feature, f->n_features);
      if (nd->left <= k || nd->left >= tr->n_nodes - 1)
        return bad(r, "tree %zu node %u: child index %u out of range (%u nodes)", t, k,
                   nd->left, tr->n_nodes);
      if (isnan(nd->v)) return bad(r, "tree %zu node %u: threshold is NaN", t, k);
    } else if (nd->feature == -1) {
      if (nd->left >= tr->n_leaves)
        return bad(r, "tree %zu node %u: leaf number %u out of range (%u leaves)", t, k,
                   nd->left, tr->n_leaves);
      if (!leaf_ok(f, nd->v))
        return bad(r, "tree %zu node %u: leaf value %g is out of range (NaN, infinite, beyond "
                   "32-bit floats, or infinite once transformed back)", t, k, nd->v);
    } else {
      return bad(r, "tree %zu node %u: feature index %d is invalid", t, k, nd->feature);
    }
  }
  memcpy(tr->leaf_off, r->p + r->pos, ((size_t)tr->n_leaves + 1) * 4);
  r->pos += ((size_t)tr->n_leaves + 1) * 4;
  if (tr->leaf_off[0] != 0 || tr->leaf_off[tr->n_leaves] != tr->n_values)
    return bad(r, "tree %zu: leaf offsets do not span the %u leaf samples", t, tr->n_values);
  for (uint32_t k = 0; k < tr->n_leaves; k++)
    if (tr->leaf_off[k + 1] <= tr->leaf_off[k])
      return bad(r, "tree %zu leaf %u: no samples or offsets out of order", t, k);
  memcpy(tr->values, r->p + r->pos, (size_t)tr->n_values * 4);
  r->pos += (size_t)tr->n_values * 4;
  for (uint32_t q = 0; q < tr->n_values; q++)
    if (!leaf_ok(f, tr->values[q]))
      return bad(r, "tree %zu: leaf sample %u (%g) is out of range (NaN, infinite, or "
                 "infinite once transformed back)", t, q, (double)tr->values[q]);
  return 0;
}

/* A calibration table (version 2; the unseen-GPU one from version 3) of
   forest f (its trees read already). */
static int read_calib(rd *r, const rf_forest *f, rf_calib *c) {
  uint32_t n = get_u32(r, "calibration table");
  if (r->failed) return -1;
  if (n > RF_CALIB_MAX)
    return bad(r, "calibration table: %u grid points (at most %d)", n, RF_CALIB_MAX);
  if (n == 0) return 0;
  uint32_t method = get_u32(r, "calibration table");
  uint32_t folds = get_u32(r, "calibration table");
  uint64_t rows = get_u64(r, "calibration table");
  if (r->failed || rd_need(r, (size_t)n * 16, "calibration table")) return -1;
  if (method != RF_CALIB_OOB && method != RF_CALIB_KFOLD && method != RF_CALIB_GROUPS)
    return bad(r, "calibration table: unknown method %u", method);
  if ((method == RF_CALIB_OOB) != (folds == 0) || folds > 1000)
    return bad(r, "calibration table: %u folds for method %u", folds, method);
  if (rows == 0) return bad(r, "calibration table: no rows scored");
  /* A widening must keep the widest interval finite once transformed back
     (the leaves are checked already). */
  double vmax = 0;
  for (size_t t = 0; t < f->n_trees; t++)
    for (uint32_t q = 0; q < f->trees[t].n_values; q++)
      if (fabs(f->trees[t].values[q]) > vmax) vmax = fabs(f->trees[t].values[q]);
  for (uint32_t k = 0; k < n; k++) {
    double cov = get_f64(r, "calibration table"), q = get_f64(r, "calibration table");
    if (!(cov > 0 && cov < 1) || (k > 0 && !(cov > c->cov[k - 1])))
      return bad(r, "calibration table: coverage %g at point %u is not increasing in (0, 1)", cov,
                 k);
    if (!isfinite(q) || !isfinite(rf__untransform(f->params.transform, vmax + fabs(q))) ||
        fabs(q) > FLT_MAX)
      return bad(r, "calibration table: widening at point %u is not finite (%g; or not once "
                 "added to a leaf and transformed back)", k, q);
    c->cov[k] = cov;
    c->q[k] = q;
  }
  c->n = n;
  c->method = (int)method;
  c->folds = folds;
  c->rows = rows;
  return 0;
}

static int parse(rd *r, rf_forest *f, uint32_t version) {
  r->pos = KCM_HEADER;
  f->target = get_str(r, "target name");
  f->gpu = get_str(r, "GPU name");
  uint32_t tr = get_u32(r, "transform");
  if (r->failed) return -1;
  if (tr != RF_TRANSFORM_NONE && tr != RF_TRANSFORM_LOG)
    return bad(r, "unknown target transform %u", tr);
  uint32_t nf = get_u32(r, "feature count");
  if (r->failed) return -1;
  if (nf == 0) return bad(r, "no features");
  if ((size_t)nf * 4 > r->len - r->pos) return bad(r, "%u features do not fit in the file", nf);
  f->features = rf__calloc(nf, sizeof(char *));
  if (!f->features) return rf__nomem();
  f->n_features = nf;
  for (uint32_t j = 0; j < nf; j++)
    if (!(f->features[j] = get_str(r, "feature name"))) return -1;
  rf_params_default(&f->params);
  rf_params *p = &f->params;
  p->transform = (int)tr;
  p->n_trees = get_u32(r, "hyperparameters");
  p->max_features = get_f64(r, "hyperparameters");
  p->min_leaf = get_u32(r, "hyperparameters");
  p->max_depth = get_u32(r, "hyperparameters");
  p->extra_trees = (int)get_u32(r, "hyperparameters");
  p->bootstrap = (int)get_u32(r, "hyperparameters");
  p->seed = get_u64(r, "hyperparameters");
  p->n_bins = get_u32(r, "hyperparameters");
  p->leaf_cap = get_u32(r, "hyperparameters");
  p->perm_importance = (int)get_u32(r, "hyperparameters");
  rf_summary *s = &f->summary;
  s->n_rows = get_u64(r, "summary");
  s->oob_mse = get_f64(r, "summary");
  s->oob_mape = get_f64(r, "summary");
  s->oob_r2 = get_f64(r, "summary");
  s->cv_mape = get_f64(r, "summary");
  s->cv_median_ape = get_f64(r, "summary");
  s->cv_coverage = get_f64(r, "summary");
  s->created = (int64_t)get_u64(r, "summary");
  if (r->failed) return -1;
  if (p->n_trees == 0) return bad(r, "no trees");
  if ((size_t)p->n_trees * 12 > r->len - r->pos)
    return bad(r, "%u trees do not fit in the file", p->n_trees);
  f->mdi = rf__mallocn(nf, sizeof(double));
  if (!f->mdi) return rf__nomem();
  for (uint32_t j = 0; j < nf; j++) f->mdi[j] = get_f64(r, "impurity importance");
  uint32_t has_perm = get_u32(r, "permutation importance flag");
  if (r->failed) return -1;
  if (has_perm > 1) return bad(r, "permutation importance flag is %u", has_perm);
  if (has_perm) {
    f->perm = rf__mallocn(nf, sizeof(double));
    if (!f->perm) return rf__nomem();
    for (uint32_t j = 0; j < nf; j++) f->perm[j] = get_f64(r, "permutation importance");
  }
  if (r->failed) return -1;
  f->trees = rf__calloc(p->n_trees, sizeof(rf_tree));
  if (!f->trees) return rf__nomem();
  f->n_trees = p->n_trees;
  for (size_t t = 0; t < f->n_trees; t++)
    if (read_tree(r, f, t, &f->trees[t])) return -1;
  if (version >= 2) {
    if (read_calib(r, f, &f->cal)) return -1;
    p->calibrate = f->cal.n ? RF_CALIBRATE_ON : RF_CALIBRATE_OFF;
    if (version >= 3) {
      int32_t b = (int32_t)get_u32(r, "base feature");
      if (r->failed) return -1;
      if (b < -1 || b >= (int32_t)nf) return bad(r, "base feature index %d out of range", (int)b);
      if (b >= 0 && p->transform != RF_TRANSFORM_LOG)
        return bad(r, "a base feature needs the log transform");
      p->base_feature = b;
      if (read_calib(r, f, &f->cal_unseen)) return -1;
    }
    if (version >= 4) {
      uint32_t has = get_u32(r, "training-range flag");
      if (r->failed) return -1;
      if (has > 1) return bad(r, "training-range flag is %u", has);
      if (has) {
        if ((size_t)nf * 16 > r->len - r->pos) return bad(r, "the training ranges do not fit");
        f->range_lo = rf__mallocn(nf, sizeof(double));
        f->range_hi = rf__mallocn(nf, sizeof(double));
        if (!f->range_lo || !f->range_hi) return rf__nomem();
        for (uint32_t j = 0; j < nf; j++) {
          f->range_lo[j] = get_f64(r, "training range");
          f->range_hi[j] = get_f64(r, "training range");
          if (!r->failed && (!isfinite(f->range_lo[j]) || !isfinite(f->range_hi[j]) ||
                             f->range_lo[j] > f->range_hi[j]))
            return bad(r, "feature %s: training range [%g, %g] is empty or not finite",
                       f->features[j], f->range_lo[j], f->range_hi[j]);
        }
        if (r->failed) return -1;
      }
    }
    if (version >= 5) {
      uint32_t na = get_u32(r, "adapted GPUs");
      if (r->failed) return -1;
      unsigned na_min = version >= 6 ? 0 : 1;
      if (na < na_min || na > RF_ADAPT_MAX)
        return bad(r, "%u adaptations (%u to %d)", na, na_min, RF_ADAPT_MAX);
      f->adapt = rf__calloc(na ? na : 1, sizeof *f->adapt);
      if (!f->adapt) return rf__nomem();
      for (uint32_t k = 0; k < na; k++) {
        rf_adapt *a = &f->adapt[k];
        char *g = get_str(r, "adapted GPU");
        if (r->failed) { rf__free(g); return -1; }
        size_t gl = strlen(g);
        if (!gl || gl >= sizeof a->gpu) {
          rf__free(g);
          return bad(r, "adapted GPU %u: name of %zu characters", k, gl);
        }
        memcpy(a->gpu, g, gl + 1);
        rf__free(g);
        uint32_t cls = get_u32(r, "adapted GPU");
        if (r->failed) return -1;
        if (cls >= RF_ADAPT_CLASSES)
          return bad(r, "adapted GPU %s: class %u (0 to %d)", a->gpu, cls, RF_ADAPT_CLASSES - 1);
        a->cls = (int)cls;
        for (uint32_t q = 0; q < k; q++)
          if (f->adapt[q].cls == a->cls && !strcmp(f->adapt[q].gpu, a->gpu))
            return bad(r, "adapted GPU %s, class %u, given twice", a->gpu, cls);
        a->host = get_f64(r, "adapted GPU");
        a->device = get_f64(r, "adapted GPU");
        a->shots = get_u32(r, "adapted GPU");
        a->rmse_log = get_f64(r, "adapted GPU");
        if (r->failed) return -1;
        if (!(a->host > 0 && a->host < 1e6) || !(a->device > 0 && a->device < 1e6) ||
            !(a->rmse_log >= 0 && a->rmse_log < 1e6) || !a->shots)
          return bad(r, "adapted GPU %s: factors %g and %g, %u shots, spread %g out of range",
                     a->gpu, a->host, a->device, a->shots, a->rmse_log);
        f->n_adapt = k + 1;
      }
    }
    if (version >= 6) {
      double bm = get_f64(r, "extrapolation median");
      if (r->failed) return -1;
      if (!(fabs(bm) < 1e6) || p->base_feature < 0 || p->transform != RF_TRANSFORM_LOG)
        return bad(r, "extrapolation median %g (finite, and only for a log target with a base)",
                   bm);
      f->base_med = bm;
    }
    if (version >= 7) {
      rf_calib *tab[2] = {&f->cal, &f->cal_unseen};
      for (int k = 0; k < 2; k++) {
        double sh = get_f64(r, "shrink");
        uint32_t to = get_u32(r, "shrink target");
        if (r->failed) return -1;
        if (!(sh >= 0 && sh <= 1) || to > 1 || (sh > 0 && !tab[k]->n))
          return bad(r, "%s table: shrink %g toward %u (0 to 1, toward 0 or 1, and only with "
                     "a table)", k ? "unseen-GPU" : "calibration", sh, to);
        tab[k]->shrink = sh;
        tab[k]->toward = (int)to;
      }
    }
    if (version >= 8) {
      rf_calib *tab[2] = {&f->cal, &f->cal_unseen};
      for (int k = 0; k < 2; k++) {
        const char *which = k ? "unseen-GPU" : "calibration";
        uint32_t nk = get_u32(r, "class shrinks");
        if (r->failed) return -1;
        if (!nk) continue;
        if (nk > RF_SHRINK_CLASSES || !tab[k]->n)
          return bad(r, "%s table: %u class shrinks (at most %d, and only with a table)", which,
                     nk, RF_SHRINK_CLASSES);
        uint32_t key = get_u32(r, "class column");
        if (r->failed) return -1;
        if (key >= f->n_features)
          return bad(r, "%s table: class column %u of %zu features", which, key, f->n_features);
        tab[k]->key = (int)key;
        for (uint32_t c = 0; c < nk; c++) {
          double v = get_f64(r, "class shrink"), sh = get_f64(r, "class shrink");
          uint32_t to = get_u32(r, "class shrink target");
          if (r->failed) return -1;
          if (!isfinite(v) || !(sh >= 0 && sh <= 1) || to > 1)
            return bad(r, "%s table: class %g shrinks %g toward %u (a finite class, 0 to 1, "
                       "toward 0 or 1)", which, v, sh, to);
          for (uint32_t q = 0; q < c; q++)
            if (tab[k]->key_val[q] == v)
              return bad(r, "%s table: class %g given twice", which, v);
          tab[k]->key_val[c] = v;
          tab[k]->key_shrink[c] = sh;
          tab[k]->key_toward[c] = (int)to;
        }
        tab[k]->n_keyed = nk;
      }
    }
    if (version >= 9) {
      uint32_t av = get_u32(r, "analytic estimate version");
      if (r->failed) return -1;
      if (!av || p->base_feature < 0 || strncmp(f->features[p->base_feature], "an.", 3))
        return bad(r, "analytic estimate version %u (at least 1, and only for a base an.*)", av);
      f->an_version = av;
    }
    if (r->pos != r->len)
      return bad(r, "%zu bytes left over after the calibration table", r->len - r->pos);
  } else {
    p->calibrate = RF_CALIBRATE_OFF;
    if (r->pos != r->len)
      return bad(r, "%zu bytes left over after the last tree", r->len - r->pos);
  }
  return 0;
}

int rf_base_stale(const rf_forest *f, char *buf, size_t cap) {
  if (buf && cap) buf[0] = 0;
  int b = f->params.base_feature;
  if (b < 0 || (size_t)b >= f->n_features || strncmp(f->features[b], "an.", 3) ||
      f->an_version == AN_VERSION)
    return 0;
  if (buf && cap) {
    if (f->an_version)
      snprintf(buf, cap, "its base %s comes from version %u of the analytic estimate, this "
               "kcast computes version %u: its corrections may not fit (train it again)",
               f->features[b], f->an_version, AN_VERSION);
    else
      snprintf(buf, cap, "its base %s comes from an analytic estimate of a kcast before "
               "estimate versions were recorded (this kcast computes version %u): its "
               "corrections may not fit (train it again)", f->features[b], AN_VERSION);
  }
  return 1;
}

int rf_load(const char *path, rf_forest **out) {
  *out = NULL;
  FILE *fp = fopen(path, "rb");
  if (!fp) return rf__err("%s: %s", path, strerror(errno));
  uint8_t *buf = NULL;
  size_t len = 0, cap = 0;
  for (;;) {
    if (cap - len < 65536) {
      size_t nc = cap ? cap * 2 : 1 << 16;
      uint8_t *t = rf__realloc(buf, nc);
      if (!t) {
        fclose(fp);
        rf__free(buf);
        return rf__nomem();
      }
      buf = t;
      cap = nc;
    }
    size_t n = fread(buf + len, 1, cap - len, fp);
    len += n;
    if (n == 0) break;
  }
  int rerr = ferror(fp);
  fclose(fp);
  rf_forest *f = NULL;
  int rc = -1;
  if (rerr) {
    rf__err("%s: read error", path);
    goto out;
  }
  if (len < 8 || memcmp(buf, KCM_MAGIC, 8)) {
    if (len < 8 && !memcmp(buf, KCM_MAGIC, len) && len > 0)
      rf__err("%s: truncated: expected at least %d bytes, the file has %zu", path, KCM_HEADER + 4, len);
    else
      rf__err("%s: bad magic: not a kcast model file", path);
    goto out;
  }
  if (len < KCM_HEADER + 4) {
    rf__err("%s: truncated: expected at least %d bytes, the file has %zu", path, KCM_HEADER + 4, len);
    goto out;
  }
  uint32_t version, marker;
  uint64_t plen;
  memcpy(&version, buf + 8, 4);
  memcpy(&marker, buf + 12, 4);
  memcpy(&plen, buf + 16, 8);
  if (marker != KCM_ENDIAN) {
    if (marker == 0x04030201u)
      rf__err("%s: wrong endianness: written on a machine of the other byte order", path);
    else
      rf__err("%s: bad byte-order marker 0x%08x", path, marker);
    goto out;
  }
  if (version < KCM_OLDEST || version > RF_FORMAT_VERSION) {
    rf__err("%s: unsupported version %u (this build reads versions %d to %d)", path, version,
            KCM_OLDEST, RF_FORMAT_VERSION);
    goto out;
  }
  /* the payload the file has room for (no sum that a huge plen wraps) */
  uint64_t room = (uint64_t)len - KCM_HEADER - 4;
  if (plen != room) {
    if (plen > room && plen <= UINT64_MAX - KCM_HEADER - 4)
      rf__err("%s: truncated: expected %llu bytes, the file has %zu", path,
              (unsigned long long)(plen + KCM_HEADER + 4), len);
    else if (plen > room)
      rf__err("%s: damaged: its header says %llu payload bytes, more than any file holds (the "
              "file has %zu bytes)", path, (unsigned long long)plen, len);
    else
      rf__err("%s: %llu bytes of trailing garbage after the CRC", path,
              (unsigned long long)(room - plen));
    goto out;
  }
  uint32_t stored;
  memcpy(&stored, buf + len - 4, 4);
  uLong crc = crc32(0L, Z_NULL, 0);
  for (size_t off = 0; off < len - 4;) {
    size_t chunk = len - 4 - off > (1u << 30) ? (1u << 30) : len - 4 - off;
    crc = crc32(crc, buf + off, (uInt)chunk);
    off += chunk;
  }
  if ((uint32_t)crc != stored) {
    rf__err("%s: CRC mismatch (stored %08x, computed %08x): the file is corrupt", path, stored,
            (uint32_t)crc);
    goto out;
  }
  f = rf__calloc(1, sizeof *f);
  if (!f) {
    rf__nomem();
    goto out;
  }
  f->base_med = NAN; /* none before version 6 */
  rd r = {.p = buf, .len = len - 4, .pos = KCM_HEADER, .path = path};
  if (parse(&r, f, version)) goto out;
  rf__fill_info(f);
  if (rf__build_fast(f)) {
    rf__nomem();
    goto out;
  }
  *out = f;
  f = NULL;
  rc = 0;
out:
  rf_free(f);
  rf__free(buf);
  return rc;
}
