/*
 * fm_io.c -- the feature model file (.kcf): writing (atomic) and loading
 * (checked).  docs/formats.md ("Feature model file (.kcf)") is normative:
 *
 *   0        8  magic "KCASTFM\0"
 *   8        4  u32 format version (FM_FORMAT_VERSION)
 *   12       4  u32 byte-order marker 0x01020304 as the writer stored it
 *   16       8  u64 payload length L
 *   24       L  payload: kernel, app, provenance, held-out error, arguments,
 *               template variables (version 2), quantities, outputs,
 *               the instances' blocks (version 3)
 *   24+L     4  u32 CRC-32 (zlib) of bytes 0 .. 24+L-1
 *
 * The frame is the .kcm one (rf_io.c) with its own magic, so that neither
 * loader mistakes the other's file.  A file is input: every count is
 * checked against the bytes left, every kind, quantity and argument index
 * and every number (finite coefficients, bounded exponents, integer ones
 * in exact forms), so that no file makes fm_eval read out of bounds or
 * answer NaN.  Version 1 files (no template variables) are still read.
 */
#include "model/fm_int.h"
#include "model/rf_int.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define KCF_MAGIC "KCASTFM"  /* 8 bytes with its NUL */
#define KCF_ENDIAN 0x01020304u
#define KCF_HEADER 24

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


static uint32_t crc_of(const uint8_t *p, size_t n) {
  uLong crc = crc32(0L, Z_NULL, 0);
  for (size_t off = 0; off < n;) { /* crc32 takes uInt lengths */
    size_t chunk = n - off > (1u << 30) ? (1u << 30) : n - off;
    crc = crc32(crc, p + off, (uInt)chunk);
    off += chunk;
  }
  return (uint32_t)crc;
}

int fm_save(const fm_model *m, const char *path) {
  wbuf b = {0};
  put(&b, KCF_MAGIC, 8);
  put_u32(&b, FM_FORMAT_VERSION);
  put_u32(&b, KCF_ENDIAN);
  put_u64(&b, 0); /* payload length, patched below */
  put_str(&b, m->kernel);
  put_str(&b, m->app);
  put_u64(&b, (uint64_t)m->created);
  put_u64(&b, m->nsizes);
  put_u64(&b, m->nlaunches);
  put_f64(&b, m->heldout);
  put_u32(&b, m->heldout_sizes);
  put_f64(&b, m->limit);
  put_u32(&b, (uint32_t)m->nargs);
  for (size_t a = 0; a < m->nargs; a++) put_u32(&b, m->arg_param[a]);
  put_u32(&b, (uint32_t)m->ntpl);
  put_u32(&b, (uint32_t)m->ndiff);
  put_u32(&b, (uint32_t)m->nq);
  for (size_t i = 0; i < m->nq; i++) {
    put_u32(&b, m->q[i].kind);
    put_u32(&b, m->q[i].a);
    put_u32(&b, m->q[i].used);
    put_f64(&b, m->q[i].lo);
    put_f64(&b, m->q[i].hi);
  }
  put_u32(&b, (uint32_t)m->nout);
  for (size_t i = 0; i < m->nout; i++) {
    const fm_out *o = &m->out[i];
    put_str(&b, o->name);
    put_u32(&b, o->kind);
    put_u32(&b, o->aux);
    put_u32(&b, o->nterms);
    for (uint32_t k = 0; k < o->nterms; k++) {
      put_f64(&b, o->t[k].coef);
      put_u32(&b, o->t[k].nf);
      for (uint32_t f = 0; f < o->t[k].nf; f++) {
        put_u32(&b, o->t[k].q[f]);
        put_f64(&b, o->t[k].e[f]);
      }
    }
  }
  if (b.failed) {
    rf__free(b.p);
    return rf__nomem();
  }
  put_u32(&b, (uint32_t)m->ninst);
  for (size_t k = 0; k < m->ninst; k++) {
    for (size_t t = 0; t < m->ntpl; t++) put_f64(&b, m->inst_t[k * m->ntpl + t]);
    for (int d = 0; d < 3; d++) put_u32(&b, m->inst_b[3 * k + d]);
  }
  if (b.failed) {
    rf__free(b.p);
    return rf__nomem();
  }
  uint64_t L = b.len - KCF_HEADER;
  memcpy(b.p + 16, &L, 8);
  put_u32(&b, crc_of(b.p, b.len));
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
    rf__err("%s: write failed: %s", tmp, strerror(errno ? errno : EIO));
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
  size_t len, pos;
  const char *path;
  int failed;
  uint32_t version;  /* the file's format version (1 to 3) */
} rd;

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

static int need(rd *r, size_t n, const char *what) {
  if (r->failed) return -1;
  if (n > r->len - r->pos)
    return bad(r, "%s (%zu bytes) runs past the end of the payload at offset %zu", what, n,
               r->pos);
  return 0;
}
static uint32_t get_u32(rd *r, const char *what) {
  uint32_t v = 0;
  if (need(r, 4, what)) return 0;
  memcpy(&v, r->p + r->pos, 4);
  r->pos += 4;
  return v;
}
static uint64_t get_u64(rd *r, const char *what) {
  uint64_t v = 0;
  if (need(r, 8, what)) return 0;
  memcpy(&v, r->p + r->pos, 8);
  r->pos += 8;
  return v;
}
static double get_f64(rd *r, const char *what) {
  double v = 0;
  if (need(r, 8, what)) return 0;
  memcpy(&v, r->p + r->pos, 8);
  r->pos += 8;
  return v;
}
static char *get_str(rd *r, const char *what) {
  uint32_t n = get_u32(r, what);
  if (need(r, n, what)) return NULL;
  if (memchr(r->p + r->pos, 0, n)) {
    bad(r, "%s contains a NUL byte (offset %zu)", what, r->pos);
    return NULL;
  }
  char *s = rf__malloc((size_t)n + 1);
  if (!s) {
    r->failed = 1;
    rf__nomem();
    return NULL;
  }
  memcpy(s, r->p + r->pos, n);
  s[n] = 0;
  r->pos += n;
  return s;
}

static int parse(rd *r, fm_model *m) {
  r->pos = KCF_HEADER;
  if (!(m->kernel = get_str(r, "kernel name"))) return -1;
  if (!(m->app = get_str(r, "app name"))) return -1;
  if (!m->kernel[0]) return bad(r, "empty kernel name");
  m->created = (int64_t)get_u64(r, "provenance");
  m->nsizes = get_u64(r, "provenance");
  m->nlaunches = get_u64(r, "provenance");
  m->heldout = get_f64(r, "held-out error");
  m->heldout_sizes = get_u32(r, "held-out error");
  m->limit = get_f64(r, "error limit");
  uint32_t na = get_u32(r, "argument count");
  if (r->failed) return -1;
  if (!(isnan(m->heldout) || (m->heldout >= 0 && isfinite(m->heldout))))
    return bad(r, "held-out error %g is not a number >= 0 (nor NaN: not measured)", m->heldout);
  if (!(m->limit >= 0 && isfinite(m->limit)))
    return bad(r, "error limit %g is not a finite number >= 0", m->limit);
  if (na > FM_MAX_ARGS) return bad(r, "%u arguments (at most %d)", na, FM_MAX_ARGS);
  m->arg_param = rf__mallocn(na ? na : 1, sizeof *m->arg_param);
  if (!m->arg_param) return rf__nomem();
  m->nargs = na;
  for (uint32_t a = 0; a < na; a++) {
    m->arg_param[a] = get_u32(r, "argument list");
    if (r->failed) return -1;
    if (m->arg_param[a] >= FM_MAX_PARAM || (a && m->arg_param[a] <= m->arg_param[a - 1]))
      return bad(r, "argument %u: parameter index %u out of order or beyond %d", a,
                 m->arg_param[a], FM_MAX_PARAM);
  }
  uint32_t nt = r->version >= 2 ? get_u32(r, "template variable count") : 0;
  if (r->failed) return -1;
  if (nt > FM_MAX_TPL) return bad(r, "%u template variables (at most %d)", nt, FM_MAX_TPL);
  m->ntpl = nt;
  uint32_t nd = r->version >= 2 ? get_u32(r, "difference count") : 0;
  if (r->failed) return -1;
  if (nd > FM_MAX_DIFF) return bad(r, "%u differences (at most %d)", nd, FM_MAX_DIFF);
  m->ndiff = nd;
  uint32_t nq = get_u32(r, "quantity count");
  if (r->failed) return -1;
  if (nq != FM_NQ_LAUNCH + na + nt + nd)
    return bad(r, "%u quantities for %u arguments, %u template variables and %u differences "
               "(expected %u)", nq, na, nt, nd, FM_NQ_LAUNCH + na + nt + nd);
  m->q = rf__calloc(nq, sizeof *m->q);
  if (!m->q) return rf__nomem();
  m->nq = nq;
  for (uint32_t i = 0; i < nq; i++) {
    fm_qty *q = &m->q[i];
    q->kind = get_u32(r, "quantity");
    q->a = get_u32(r, "quantity");
    uint32_t used = get_u32(r, "quantity");
    q->lo = get_f64(r, "quantity range");
    q->hi = get_f64(r, "quantity range");
    if (r->failed) return -1;
    uint32_t want = i < FM_NQ_LAUNCH ? i : i < FM_NQ_LAUNCH + na ? FM_Q_ARG
                    : i < FM_NQ_LAUNCH + na + nt ? FM_Q_TARG : FM_Q_DIFF;
    uint32_t wa = i < FM_NQ_LAUNCH ? 0 : i - FM_NQ_LAUNCH - (want == FM_Q_TARG ? na : 0);
    if (want == FM_Q_DIFF) { /* two distinct arguments of the list */
      if (q->kind != want || (q->a >> 8) >= na || (q->a & 0xff) >= na ||
          (q->a >> 8) == (q->a & 0xff) || q->a >> 16)
        return bad(r, "quantity %u: kind %u (%u) is not a difference of two of the %u "
                   "arguments", i, q->kind, q->a, na);
    } else if (q->kind != want || q->a != wa)
      return bad(r, "quantity %u: kind %u (argument %u) where kind %u belongs", i, q->kind, q->a,
                 want);
    if (used > 1) return bad(r, "quantity %u: used flag %u", i, used);
    if (!isfinite(q->lo) || !isfinite(q->hi) || q->lo > q->hi)
      return bad(r, "quantity %u: range [%g, %g] is not a finite interval", i, q->lo, q->hi);
    q->used = (uint8_t)used;
  }
  uint32_t no = get_u32(r, "output count");
  if (r->failed) return -1;
  if (no == 0) return bad(r, "no outputs");
  if ((size_t)no * 16 > r->len - r->pos) return bad(r, "%u outputs do not fit in the file", no);
  m->out = rf__calloc(no, sizeof *m->out);
  if (!m->out) return rf__nomem();
  for (uint32_t i = 0; i < no; i++) {
    fm_out *o = &m->out[i];
    if (!(o->name = get_str(r, "output name"))) return -1;
    m->nout = i + 1;
    o->kind = get_u32(r, "output");
    o->aux = get_u32(r, "output");
    o->nterms = get_u32(r, "output");
    if (r->failed) return -1;
    if (!o->name[0]) return bad(r, "output %u has an empty name", i);
    for (uint32_t j = 0; j < i; j++)
      if (!strcmp(m->out[j].name, o->name)) return bad(r, "output %s appears twice", o->name);
    if (o->kind >= FM_O_NKINDS) return bad(r, "output %s: unknown kind %u", o->name, o->kind);
    if (o->kind == FM_O_LAUNCH && o->aux >= FM_L_N)
      return bad(r, "output %s: launch feature %u out of range", o->name, o->aux);
    if (o->kind == FM_O_ARG && o->aux >= na)
      return bad(r, "output %s: argument %u out of range (%u arguments)", o->name, o->aux, na);
    uint32_t maxt = o->kind == FM_O_EXACT ? FM_MAX_TERMS
                    : o->kind <= FM_O_LINEAR ? 1 : 0;
    if (o->nterms > maxt || (o->kind <= FM_O_LINEAR && o->nterms == 0))
      return bad(r, "output %s: %u terms for kind %u", o->name, o->nterms, o->kind);
    for (uint32_t k = 0; k < o->nterms; k++) {
      fm_term *t = &o->t[k];
      t->coef = get_f64(r, "term");
      t->nf = get_u32(r, "term");
      if (r->failed) return -1;
      if (!isfinite(t->coef)) return bad(r, "output %s: coefficient is not finite", o->name);
      if (t->nf > FM_MAX_FACTORS || (o->kind == FM_O_CONST && t->nf))
        return bad(r, "output %s: %u factors in a term", o->name, t->nf);
      for (uint32_t f = 0; f < t->nf; f++) {
        t->q[f] = get_u32(r, "factor");
        t->e[f] = get_f64(r, "factor");
        if (r->failed) return -1;
        if (t->q[f] >= nq)
          return bad(r, "output %s: quantity %u out of range (%u)", o->name, t->q[f], nq);
        if (!(fabs(t->e[f]) <= FM_MAX_EXP))
          return bad(r, "output %s: exponent %g beyond %g", o->name, t->e[f], FM_MAX_EXP);
        if (o->kind != FM_O_POWER && (t->e[f] != floor(t->e[f]) || t->e[f] < 0))
          return bad(r, "output %s: exponent %g of a polynomial is not a whole number >= 0",
                     o->name, t->e[f]);
      }
    }
  }
  uint32_t ni = r->version >= 3 ? get_u32(r, "instance count") : 0;
  if (r->failed) return -1;
  if (ni && !m->ntpl) return bad(r, "%u instances in a model that is not a template", ni);
  if (ni > FM_MAX_INST) return bad(r, "%u instances (at most %d)", ni, FM_MAX_INST);
  if (ni) {
    if ((size_t)ni * (m->ntpl * 8 + 12) > r->len - r->pos)
      return bad(r, "%u instances, more than the bytes left hold", ni);
    m->inst_t = rf__calloc((size_t)ni * m->ntpl, sizeof *m->inst_t);
    m->inst_b = rf__calloc((size_t)ni * 3, sizeof *m->inst_b);
    if (!m->inst_t || !m->inst_b) return rf__nomem();
    m->ninst = ni;
    for (uint32_t k = 0; k < ni; k++) {
      for (size_t t = 0; t < m->ntpl; t++) {
        double v = get_f64(r, "instance");
        if (!isfinite(v)) return bad(r, "instance %u: template value is not finite", k);
        m->inst_t[k * m->ntpl + t] = v;
      }
      for (int d = 0; d < 3; d++) {
        uint32_t b = get_u32(r, "instance");
        if (r->failed) return -1;
        if (b == 0) return bad(r, "instance %u: a block dimension of 0", k);
        m->inst_b[3 * k + d] = b;
      }
    }
  }
  if (r->pos != r->len) return bad(r, "%zu bytes left over after the last output", r->len - r->pos);
  fm__index(m);
  return 0;
}

int fm_load(const char *path, fm_model **out) {
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
    size_t k = fread(buf + len, 1, cap - len, fp);
    len += k;
    if (k == 0) break;
  }
  int ferr = ferror(fp);
  fclose(fp);
  int rc = -1;
  fm_model *m = NULL;
  if (ferr) {
    rf__err("%s: read error", path);
    goto out;
  }
  if (len < KCF_HEADER + 4 || memcmp(buf, KCF_MAGIC, 8)) {
    rf__err("%s: not a kcast feature model (.kcf): %s", path,
            len >= 8 && !memcmp(buf, "KCASTRF", 8) ? "this is a forest model (.kcm)"
                                                    : "bad magic");
    goto out;
  }
  uint32_t ver, endian;
  uint64_t L;
  memcpy(&ver, buf + 8, 4);
  memcpy(&endian, buf + 12, 4);
  memcpy(&L, buf + 16, 8);
  if (endian != KCF_ENDIAN) {
    rf__err("%s: written on a machine of the other byte order", path);
    goto out;
  }
  if (ver < 1 || ver > FM_FORMAT_VERSION) {
    rf__err("%s: unsupported feature model version %u (this build reads 1 to %d)", path, ver,
            FM_FORMAT_VERSION);
    goto out;
  }
  if (L != len - KCF_HEADER - 4) {
    rf__err("%s: truncated or padded: header says %llu payload bytes, the file has %zu", path,
            (unsigned long long)L, len - KCF_HEADER - 4);
    goto out;
  }
  uint32_t crc;
  memcpy(&crc, buf + len - 4, 4);
  if (crc != crc_of(buf, len - 4)) {
    rf__err("%s: checksum mismatch (the file is damaged)", path);
    goto out;
  }
  m = rf__calloc(1, sizeof *m);
  if (!m) {
    rf__nomem();
    goto out;
  }
  rd r = {buf, len - 4, 0, path, 0, ver};
  if (parse(&r, m)) goto out;
  *out = m;
  m = NULL;
  rc = 0;
out:
  fm_free(m);
  rf__free(buf);
  return rc;
}
