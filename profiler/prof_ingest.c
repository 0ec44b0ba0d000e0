/*
 * prof_ingest.c -- records file reader, power/energy attribution and the
 * dataset writer of `kcast profile` (prof.h; docs/formats.md "Profiling").
 *
 * The records file is line-oriented text: a tag, then space-separated
 * fields, free text (kernel and device names) always last.  Text keeps the
 * injection library trivial (fprintf) and a damaged file diagnosable with
 * `less`; the `end` line with the counts tells a complete file from a
 * truncated one, since the library writes it last before the rename.
 *
 * Everything is parsed and checked before the first SQL statement, then
 * written in one transaction, so a bad file or a keying conflict leaves the
 * dataset byte-identical.
 */
#include "profiler/prof.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- helpers -- */

static void seterr(char *err, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void seterr(char *err, size_t cap, const char *fmt, ...) {
  if (!err || !cap) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, cap, fmt, ap);
  va_end(ap);
}

/* Line tokenizer: fields separated by blanks; rest() returns the remainder
   of the line (leading blanks skipped, trailing newline removed). */
typedef struct tok {
  char *p;
} tok;

static char *tok_next(tok *t) {
  while (*t->p == ' ' || *t->p == '\t') t->p++;
  if (!*t->p) return NULL;
  char *s = t->p;
  while (*t->p && *t->p != ' ' && *t->p != '\t') t->p++;
  if (*t->p) *t->p++ = 0;
  return s;
}

static char *tok_rest(tok *t) {
  while (*t->p == ' ' || *t->p == '\t') t->p++;
  return *t->p ? t->p : NULL;
}

static int parse_i64(const char *s, int64_t *v) {
  if (!s || !*s) return -1;
  char *end;
  errno = 0;
  long long x = strtoll(s, &end, 10);
  if (errno || *end) return -1;
  *v = x;
  return 0;
}

static int parse_u64(const char *s, uint64_t *v) {
  if (!s || !*s || *s == '-') return -1;
  char *end;
  errno = 0;
  unsigned long long x = strtoull(s, &end, 10);
  if (errno || *end) return -1;
  *v = x;
  return 0;
}

static int parse_dbl(const char *s, double *v) {
  if (!s || !*s) return -1;
  char *end;
  errno = 0;
  double x = strtod(s, &end);
  if (errno || *end || !isfinite(x)) return -1;
  *v = x;
  return 0;
}

/* Grow *arr (element size sz) to hold n+1 elements; -1 on overflow/OOM. */
static int grow(void **arr, size_t *cap, size_t n, size_t sz) {
  if (n < *cap) return 0;
  size_t nc = *cap ? *cap * 2 : 64;
  if (nc > SIZE_MAX / sz) return -1;
  void *p = realloc(*arr, nc * sz);
  if (!p) return -1;
  *arr = p;
  *cap = nc;
  return 0;
}

static void copy_str(char *dst, size_t cap, const char *src) {
  snprintf(dst, cap, "%s", src ? src : "");
}

/* --------------------------------------------------------------- reader -- */

void prof_records_free(prof_records *r) {
  if (!r) return;
  for (size_t i = 0; i < r->nkernels; i++) free(r->kernels[i].name);
  free(r->kernels);
  free(r->lowconf);
  free(r->windows);
  free(r->power);
  free(r->energy);
  memset(r, 0, sizeof *r);
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

long prof_records_keep(prof_records *r, int (*take)(void *ctx, const char *kernel), void *ctx,
                       size_t *nlaunch) {
  int64_t *seq = malloc((r->nkernels + 1) * sizeof *seq);
  unsigned char *keep = NULL;
  *nlaunch = 0;
  if (!seq) return -1;
  size_t n = 0, u = 0;
  for (size_t i = 0; i < r->nkernels; i++) seq[n++] = r->kernels[i].lseq;
  qsort(seq, n, sizeof *seq, cmp_i64);
  for (size_t i = 0; i < n; i++)
    if (!u || seq[u - 1] != seq[i]) seq[u++] = seq[i];
  if (!(keep = calloc(u + 1, 1))) {
    free(seq);
    return -1;
  }
  long taken = 0;
  for (size_t j = 0; j < u; j++) {
    size_t i = 0;
    while (r->kernels[i].lseq != seq[j]) i++; /* its first record names the kernel */
    if (take(ctx, r->kernels[i].name)) keep[j] = 1, taken++;
  }
  size_t k = 0;
  for (size_t i = 0; i < r->nkernels; i++) {
    const int64_t *at = bsearch(&r->kernels[i].lseq, seq, u, sizeof *seq, cmp_i64);
    if (at && keep[at - seq]) r->kernels[k++] = r->kernels[i];
    else free(r->kernels[i].name);
  }
  r->nkernels = k;
  *nlaunch = u;
  free(keep);
  free(seq);
  return taken;
}

/* One `gpu KEY VALUE` line. */
static int read_gpu_line(prof_records *r, tok *t, const char **why) {
  const char *key = tok_next(t);
  if (!key) { *why = "gpu line without a key"; return -1; }
  ds_gpu *g = &r->gpu;
  int64_t a = 0, b = 0;
  double d = 0;
  if (!strcmp(key, "name") || !strcmp(key, "driver") || !strcmp(key, "cuda")) {
    const char *v = tok_rest(t);
    if (!v) { *why = "gpu line without a value"; return -1; }
    if (!strcmp(key, "name")) copy_str(g->name, sizeof g->name, v);
    else if (!strcmp(key, "driver")) copy_str(g->driver, sizeof g->driver, v);
    else copy_str(g->cuda, sizeof g->cuda, v);
    return 0;
  }
  if (!strcmp(key, "cc")) {
    if (parse_i64(tok_next(t), &a) || parse_i64(tok_next(t), &b)) {
      *why = "gpu cc needs two integers";
      return -1;
    }
    g->cc_major = (int)a;
    g->cc_minor = (int)b;
    return 0;
  }
  const char *v = tok_next(t);
  if (parse_dbl(v, &d)) { *why = "gpu value is not a number"; return -1; }
  if (!strcmp(key, "sms")) g->sm_count = (int)d;
  else if (!strcmp(key, "sm_clock_mhz")) g->sm_clock_mhz = d;
  else if (!strcmp(key, "mem_clock_mhz")) g->mem_clock_mhz = d;
  else if (!strcmp(key, "mem_bytes")) g->mem_bytes = (int64_t)d;
  else if (!strcmp(key, "bus_width")) r->bus_width = (int)d;
  else if (!strcmp(key, "l2_bytes")) g->l2_bytes = (int64_t)d;
  else if (!strcmp(key, "power_limit_w")) g->tdp_w = d;
  else if (!strcmp(key, "power_min_w")) r->power_min_w = d;
  else if (!strcmp(key, "power_max_w")) r->power_max_w = d;
  /* Unknown descriptor keys are ignored: newer libraries may add some. */
  return 0;
}

static int read_kernel_line(prof_records *r, size_t *cap, tok *t,
                            const char **why) {
  int64_t v[16];
  for (int i = 0; i < 16; i++) {
    if (parse_i64(tok_next(t), &v[i])) {
      static const char *names[16] = {
          "lseq", "rep", "start", "end", "device", "stream", "corr", "grid_x",
          "grid_y", "grid_z", "block_x", "block_y", "block_z",
          "static_shmem", "dynamic_shmem", "registers"};
      static char buf[96];
      snprintf(buf, sizeof buf, "kernel: field %d (%s) missing or not an integer",
               i + 2, names[i]);
      *why = buf;
      return -1;
    }
  }
  const char *name = tok_rest(t);
  if (!name) { *why = "kernel: no kernel name"; return -1; }
  if (v[0] < 0 || v[1] < 0 || v[1] > 1000000) { *why = "kernel: lseq or rep out of range"; return -1; }
  if (v[2] < 0 || v[3] < v[2]) { *why = "kernel: end before start"; return -1; }
  for (int i = 7; i < 13; i++)
    if (v[i] < 1 || v[i] > UINT32_MAX) { *why = "kernel: grid/block dimension out of range"; return -1; }
  if (v[13] < 0 || v[14] < 0 || v[15] < 0) { *why = "kernel: negative size"; return -1; }
  if (grow((void **)&r->kernels, cap, r->nkernels, sizeof *r->kernels)) {
    *why = "out of memory";
    return -1;
  }
  prof_kernel *k = &r->kernels[r->nkernels];
  memset(k, 0, sizeof *k);
  k->name = strdup(name);
  if (!k->name) { *why = "out of memory"; return -1; }
  r->nkernels++;
  k->lseq = v[0];
  k->rep = (int)v[1];
  k->start = (uint64_t)v[2];
  k->end = (uint64_t)v[3];
  k->device = (uint32_t)v[4];
  k->stream = (uint32_t)v[5];
  k->corr = (uint32_t)v[6];
  for (int i = 0; i < 3; i++) {
    k->grid[i] = (uint32_t)v[7 + i];
    k->block[i] = (uint32_t)v[10 + i];
  }
  k->static_shmem = v[13];
  k->dyn_shmem = v[14];
  k->regs = (int)v[15];
  return 0;
}

static int read_sample_line(prof_sample **arr, size_t *n, size_t *cap, tok *t,
                            double scale, const char **why) {
  uint64_t ts;
  double v;
  if (parse_u64(tok_next(t), &ts) || parse_dbl(tok_next(t), &v) || v < 0) {
    *why = "sample needs a timestamp and a non-negative value";
    return -1;
  }
  if (*n && ts < (*arr)[*n - 1].t) { *why = "sample timestamps go backwards"; return -1; }
  if (grow((void **)arr, cap, *n, sizeof **arr)) { *why = "out of memory"; return -1; }
  (*arr)[*n].t = ts;
  (*arr)[*n].v = v * scale;
  (*n)++;
  return 0;
}

int prof_records_read(const char *path, prof_records *r, char *err, size_t cap) {
  memset(r, 0, sizeof *r);
  r->repeat = 1;
  r->sampled_device = -1;
  FILE *f = fopen(path, "r");
  if (!f) {
    seterr(err, cap, "%s: cannot open: %s", path, strerror(errno));
    return -1;
  }
  char *line = NULL;
  size_t linecap = 0, kcap = 0, lcap = 0, pcap = 0, ecap = 0, wcap = 0;
  long lineno = 0;
  int seen_end = 0, rc = -1;
  const char *why = NULL;
  ssize_t len;
  while ((len = getline(&line, &linecap, f)) >= 0) {
    lineno++;
    if (len > 0 && line[len - 1] == '\n') line[--len] = 0;
    else {
      why = "line not terminated (truncated file)";
      goto bad;
    }
    if ((size_t)len != strlen(line)) { why = "NUL byte in line"; goto bad; }
    if (seen_end) { why = "data after the end line"; goto bad; }
    tok t = {line};
    const char *tag = tok_next(&t);
    if (lineno == 1) {
      int64_t ver;
      if (!tag || strcmp(tag, "kcast-records") || parse_i64(tok_next(&t), &ver)) {
        why = "not a kcast records file (expected 'kcast-records 1')";
        goto bad;
      }
      if (ver != PROF_RECORDS_VERSION) {
        why = "unsupported records version (this build reads 1)";
        goto bad;
      }
      r->version = (int)ver;
      continue;
    }
    if (!tag || tag[0] == '#') continue;
    if (!strcmp(tag, "kernel")) {
      if (read_kernel_line(r, &kcap, &t, &why)) goto bad;
    } else if (!strcmp(tag, "power")) {
      if (read_sample_line(&r->power, &r->npower, &pcap, &t, 1e-3, &why)) goto bad;
    } else if (!strcmp(tag, "energy")) {
      if (read_sample_line(&r->energy, &r->nenergy, &ecap, &t, 1e-3, &why)) goto bad;
    } else if (!strcmp(tag, "gpu")) {
      if (read_gpu_line(r, &t, &why)) goto bad;
    } else if (!strcmp(tag, "lowconf")) {
      int64_t lseq;
      const char *reason;
      if (parse_i64(tok_next(&t), &lseq) || lseq < 0 || !(reason = tok_next(&t))) {
        why = "lowconf needs an lseq and a reason";
        goto bad;
      }
      if (grow((void **)&r->lowconf, &lcap, r->nlowconf, sizeof *r->lowconf)) {
        why = "out of memory";
        goto bad;
      }
      r->lowconf[r->nlowconf].lseq = lseq;
      copy_str(r->lowconf[r->nlowconf].reason, sizeof r->lowconf[0].reason, reason);
      r->nlowconf++;
    } else if (!strcmp(tag, "pwin")) {
      int64_t lseq, n;
      uint64_t a, b;
      if (parse_i64(tok_next(&t), &lseq) || lseq < 0 || parse_u64(tok_next(&t), &a) ||
          parse_u64(tok_next(&t), &b) || parse_i64(tok_next(&t), &n)) {
        why = "pwin needs an lseq, start, end and count";
        goto bad;
      }
      if (b <= a || n < 1) { why = "pwin: empty window (end <= start or count < 1)"; goto bad; }
      if (grow((void **)&r->windows, &wcap, r->nwindows, sizeof *r->windows)) {
        why = "out of memory";
        goto bad;
      }
      prof_window *w = &r->windows[r->nwindows++];
      w->lseq = lseq;
      w->start = a;
      w->end = b;
      w->count = n;
    } else if (!strcmp(tag, "opt")) {
      const char *key = tok_next(&t);
      int64_t v;
      if (!key || parse_i64(tok_next(&t), &v)) { why = "opt needs a key and an integer"; goto bad; }
      if (!strcmp(key, "repeat")) {
        if (v < 1) { why = "opt repeat must be >= 1"; goto bad; }
        r->repeat = (int)v;
      } else if (!strcmp(key, "power")) r->sampled = v != 0;
      else if (!strcmp(key, "sampled_device")) r->sampled_device = (int)v;
      else if (!strcmp(key, "launches")) r->launches = v;
      else if (!strcmp(key, "window_ms")) r->window_ms = v > 0 && v < INT32_MAX ? (int)v : 0;
    } else if (!strcmp(tag, "unmatched")) {
      r->nunmatched++;
    } else if (!strcmp(tag, "note")) {
      /* free text for people */
    } else if (!strcmp(tag, "end")) {
      uint64_t nk, np, ne;
      if (parse_u64(tok_next(&t), &nk) || parse_u64(tok_next(&t), &np) ||
          parse_u64(tok_next(&t), &ne)) {
        why = "end needs three counts (kernels, power, energy)";
        goto bad;
      }
      if (nk != r->nkernels || np != r->npower || ne != r->nenergy) {
        why = "counts in the end line disagree with the records read";
        goto bad;
      }
      seen_end = 1;
    } else {
      static char buf[96];
      snprintf(buf, sizeof buf, "unknown record '%.40s'", tag);
      why = buf;
      goto bad;
    }
  }
  if (ferror(f)) {
    seterr(err, cap, "%s: read error: %s", path, strerror(errno));
    goto out;
  }
  if (lineno == 0) {
    seterr(err, cap, "%s:1: empty records file", path);
    goto out;
  }
  if (!seen_end) {
    seterr(err, cap, "%s:%ld: truncated: no end line", path, lineno);
    goto out;
  }
  rc = 0;
  goto out;
bad:
  seterr(err, cap, "%s:%ld: %s", path, lineno, why);
out:
  free(line);
  fclose(f);
  if (rc) prof_records_free(r);
  return rc;
}

/* ---------------------------------------------------------- attribution -- */

/* Counter value at t, linear between samples; t within [e[0].t, e[n-1].t]. */
static double energy_at(const prof_sample *e, size_t n, uint64_t t) {
  size_t lo = 0, hi = n - 1;
  while (hi - lo > 1) {  /* e[lo].t <= t <= e[hi].t */
    size_t mid = lo + (hi - lo) / 2;
    if (e[mid].t <= t) lo = mid; else hi = mid;
  }
  if (e[hi].t == e[lo].t) return e[hi].v;
  double frac = (double)(t - e[lo].t) / (double)(e[hi].t - e[lo].t);
  return e[lo].v + frac * (e[hi].v - e[lo].v);
}

int prof_attribute(const prof_sample *power, size_t npower,
                   const prof_sample *energy, size_t nenergy, uint64_t s,
                   uint64_t e, prof_attr *out) {
  memset(out, 0, sizeof *out);
  if (e < s) return -1;
  uint64_t dur = e - s;
  double secs = (double)dur * 1e-9;
  out->lowconf = dur < PROF_POWER_MIN_NS;
  /* Overlapping power samples, counted for the record either way. */
  for (size_t i = 0; i < npower; i++) {
    uint64_t lo = i ? power[i - 1].t : power[i].t;
    if (power[i].t >= s && lo <= e) out->nsamples++;
  }
  if (nenergy >= 2 && dur >= PROF_POWER_MIN_NS && energy[0].t <= s &&
      energy[nenergy - 1].t >= e) {
    double j = energy_at(energy, nenergy, e) - energy_at(energy, nenergy, s);
    if (j >= 0) {
      out->method = PROF_ATTR_ENERGY;
      out->energy_j = j;
      out->power_w = secs > 0 ? j / secs : 0;
      return 0;
    }
  }
  if (npower >= 2 && power[0].t <= s && power[npower - 1].t >= e) {
    double j = 0;
    if (dur == 0) {
      /* A zero-length interval: the power of the sample covering s. */
      size_t i = 1;
      while (i < npower && power[i].t < s) i++;
      out->method = PROF_ATTR_POWER;
      out->power_w = power[i < npower ? i : npower - 1].v;
      return 0;
    }
    for (size_t i = 1; i < npower; i++) {
      uint64_t a = power[i - 1].t, b = power[i].t;  /* (a, b] holds v[i] */
      if (b <= s) continue;
      if (a >= e) break;
      uint64_t lo = a > s ? a : s, hi = b < e ? b : e;
      j += power[i].v * (double)(hi - lo) * 1e-9;
    }
    out->method = PROF_ATTR_POWER;
    out->energy_j = j;
    out->power_w = j / secs;
    return 0;
  }
  return 0;
}

/* ----------------------------------------------------------------- keys -- */

void prof_gpu_key(const char *device_name, char *out, size_t cap) {
  if (!cap) return;
  const char *s = device_name ? device_name : "";
  while (*s == ' ') s++;
  static const char *prefixes[] = {"NVIDIA ", "Tesla "};
  for (size_t i = 0; i < 2; i++)
    if (!strncmp(s, prefixes[i], strlen(prefixes[i]))) s += strlen(prefixes[i]);
  size_t n = 0;
  int dash = 0;
  for (; *s && n + 1 < cap; s++) {
    char c = *s;
    int ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
             (c >= '0' && c <= '9') || c == '.' || c == '_';
    if (ok) {
      if (dash && n) out[n++] = '-';
      if (n + 1 < cap) out[n++] = c;
      dash = 0;
    } else {
      dash = 1;
    }
  }
  out[n] = 0;
  if (!n) snprintf(out, cap, "unknown-gpu");
}

void prof_default_keys(int argc, char *const *argv, char *app, size_t app_cap,
                       char *dataset, size_t dataset_cap) {
  const char *p = argc > 0 && argv[0] ? argv[0] : "";
  const char *slash = strrchr(p, '/');
  snprintf(app, app_cap, "%s", slash ? slash + 1 : p);
  size_t n = 0;
  if (dataset_cap) dataset[0] = 0;
  for (int i = 1; i < argc && dataset_cap; i++) {
    int w = snprintf(dataset + n, dataset_cap - n, "%s%s", i > 1 ? " " : "", argv[i]);
    if (w < 0 || (size_t)w >= dataset_cap - n) break;
    n += (size_t)w;
  }
}

/* --------------------------------------------------------------- writer -- */

static int cmp_kernel(const void *a, const void *b) {
  const prof_kernel *x = *(prof_kernel *const *)a, *y = *(prof_kernel *const *)b;
  if (x->lseq != y->lseq) return x->lseq < y->lseq ? -1 : 1;
  if (x->rep != y->rep) return x->rep < y->rep ? -1 : 1;
  return x->start < y->start ? -1 : x->start > y->start;
}

static const prof_window *find_window(const prof_records *r, int64_t lseq) {
  for (size_t i = 0; i < r->nwindows; i++)
    if (r->windows[i].lseq == lseq) return &r->windows[i];
  return NULL;
}

/* Median interval between changes of the energy counter (ns); 0 when
   fewer than two changes were seen. */
static double energy_step_ns(const prof_records *r) {
  size_t n = 0, last = 0;
  double *d = r->nenergy > 1 ? malloc((r->nenergy - 1) * sizeof *d) : NULL;
  if (!d) return 0;
  for (size_t i = 1; i < r->nenergy; i++) {
    if (r->energy[i].v == r->energy[i - 1].v) continue;
    if (last) d[n++] = (double)(r->energy[i].t - r->energy[last].t);
    last = i;
  }
  double m = n ? ds_aggregate(d, n, DS_AGG_MEDIAN) : 0;
  free(d);
  return m;
}

static const char *lowconf_reason(const prof_records *r, int64_t lseq) {
  for (size_t i = 0; i < r->nlowconf; i++)
    if (r->lowconf[i].lseq == lseq) return r->lowconf[i].reason;
  return NULL;
}

/* Launches already stored under (app, dataset), sorted by lseq. */
typedef struct stored_launch {
  int64_t lseq, id;
  char *kernel;
  uint32_t grid[3], block[3];
} stored_launch;

static void free_stored(stored_launch *s, size_t n) {
  for (size_t i = 0; i < n; i++) free(s[i].kernel);
  free(s);
}

static int cmp_stored(const void *a, const void *b) {
  const stored_launch *x = a, *y = b;
  return x->lseq < y->lseq ? -1 : x->lseq > y->lseq;
}

static int load_stored(ds_db *db, const prof_keys *k, stored_launch **out,
                       size_t *n) {
  ds_iter *it = NULL;
  size_t cap = 0;
  *out = NULL;
  *n = 0;
  if (ds_iter_launches(db, k->app, k->dataset, &it) < 0) return -1;
  ds_launch l;
  int64_t id;
  int st;
  while ((st = ds_iter_next(it, &id, &l)) == 1) {
    if (grow((void **)out, &cap, *n, sizeof **out)) { st = -1; break; }
    (*out)[*n].lseq = l.lseq;
    (*out)[*n].id = id;
    (*out)[*n].kernel = strdup(l.kernel);
    memcpy((*out)[*n].grid, l.grid, sizeof l.grid);
    memcpy((*out)[*n].block, l.block, sizeof l.block);
    if (!(*out)[*n].kernel) { st = -1; break; }
    (*n)++;
  }
  ds_iter_free(it);
  if (st < 0) return -1;
  if (*n) qsort(*out, *n, sizeof **out, cmp_stored);
  return 0;
}

static const stored_launch *find_stored(const stored_launch *s, size_t n,
                                        int64_t lseq) {
  stored_launch key = {lseq, 0, NULL, {0, 0, 0}, {0, 0, 0}};
  return n ? bsearch(&key, s, n, sizeof *s, cmp_stored) : NULL;
}

static void tool_name(char *buf, size_t cap, const char *base, int low) {
  snprintf(buf, cap, "%s%s", base, low ? PROF_LOWCONF : "");
}

int prof_ingest(ds_db *db, const prof_records *r, const prof_keys *k,
                prof_summary *sum, char *err, size_t cap) {
  prof_summary local;
  if (!sum) sum = &local;
  memset(sum, 0, sizeof *sum);
  if (!k || !k->app || !*k->app || !k->dataset || k->rep_offset < 0) {
    seterr(err, cap, "profile: app must be non-empty and dataset set");
    return -1;
  }
  if (r->nkernels == 0) {
    seterr(err, cap, "profile: no kernel records");
    return -1;
  }
  sum->energy_step_ms = energy_step_ns(r) * 1e-6;
  if (k->gpu && *k->gpu) copy_str(sum->gpu, sizeof sum->gpu, k->gpu);
  else prof_gpu_key(r->gpu.name, sum->gpu, sizeof sum->gpu);
  sum->unmatched = r->nunmatched;

  /* Sort a view by (lseq, rep); check one kernel and config per lseq and
     unique reps before writing anything. */
  const prof_kernel **v = malloc(r->nkernels * sizeof *v);
  if (!v) {
    seterr(err, cap, "profile: out of memory");
    return -1;
  }
  for (size_t i = 0; i < r->nkernels; i++) v[i] = &r->kernels[i];
  qsort(v, r->nkernels, sizeof *v, cmp_kernel);
  for (size_t i = 1; i < r->nkernels; i++) {
    const prof_kernel *a = v[i - 1], *b = v[i];
    if (a->lseq != b->lseq) continue;
    if (a->rep == b->rep) {
      seterr(err, cap, "profile: launch %" PRId64 " has two records for rep %d",
             a->lseq, a->rep);
      free(v);
      return -1;
    }
    if (strcmp(a->name, b->name) || memcmp(a->grid, b->grid, sizeof a->grid) ||
        memcmp(a->block, b->block, sizeof a->block) || a->dyn_shmem != b->dyn_shmem) {
      seterr(err, cap, "profile: launch %" PRId64 " repeats differ in kernel or "
             "configuration (%s vs %s)", a->lseq, a->name, b->name);
      free(v);
      return -1;
    }
  }

  char tool[96];
  const char *what = k->source ? k->source : "profile";
  stored_launch *stored = NULL;
  size_t nstored = 0;
  if (ds_begin(db) < 0) goto dberr;
  if (load_stored(db, k, &stored, &nstored) < 0) goto dberr;
  if (ds_record_run(db, k->command, NULL) < 0) goto dberr;
  if (r->gpu.name[0]) {
    ds_gpu g = r->gpu;
    copy_str(g.name, sizeof g.name, sum->gpu);
    if (r->bus_width > 0 && g.mem_clock_mhz > 0 && g.mem_bandwidth_gbs <= 0)
      g.mem_bandwidth_gbs = r->bus_width / 8.0 * g.mem_clock_mhz * 1e6 * 2.0 / 1e9;
    if (ds_upsert_gpu(db, &g) < 0) goto dberr;
  }
  for (size_t i = 0; i < r->nkernels;) {
    size_t j = i;
    while (j < r->nkernels && v[j]->lseq == v[i]->lseq) j++;
    const prof_kernel *first = v[i];
    int64_t id = 0;
    const stored_launch *sl = find_stored(stored, nstored, first->lseq);
    if (sl) {
      /* The stored kernel must agree: otherwise the launch sequences of
         `kcast run` and this run disagree and the join would be wrong. */
      if (!prof_kernel_names_match(sl->kernel, first->name)) {
        seterr(err, cap, "%s: launch (%s, '%s', %" PRId64 ") is kernel %s "
               "in the dataset but %s here: the launch sequences disagree",
               what, k->app, k->dataset, first->lseq, sl->kernel, first->name);
        goto fail;
      }
      if (memcmp(sl->grid, first->grid, sizeof sl->grid) ||
          memcmp(sl->block, first->block, sizeof sl->block)) {
        seterr(err, cap, "%s: launch (%s, '%s', %" PRId64 ") of %s has grid %u,%u,%u "
               "block %u,%u,%u in the dataset but grid %u,%u,%u block %u,%u,%u here: the "
               "launch sequences disagree", what, k->app, k->dataset, first->lseq, sl->kernel,
               sl->grid[0], sl->grid[1], sl->grid[2], sl->block[0], sl->block[1], sl->block[2],
               first->grid[0], first->grid[1], first->grid[2], first->block[0],
               first->block[1], first->block[2]);
        goto fail;
      }
      id = sl->id;
    } else {
      ds_launch l = {0};
      l.bench = k->bench;
      l.app = k->app;
      l.dataset = k->dataset;
      l.lseq = first->lseq;
      l.kernel = first->name;
      memcpy(l.grid, first->grid, sizeof l.grid);
      memcpy(l.block, first->block, sizeof l.block);
      l.shmem = first->dyn_shmem;
      l.source = k->source ? k->source : PROF_SOURCE;
      if (ds_insert_launch(db, &l, NULL, &id) < 0) goto dberr;
      sum->created++;
    }
    sum->launches++;
    int low = lowconf_reason(r, first->lseq) != NULL;
    for (size_t q = i; q < j; q++) {
      tool_name(tool, sizeof tool, k->time_tool ? k->time_tool : PROF_TOOL_TIME, low);
      if (ds_insert_measurement(db, id, sum->gpu, "time_ns",
                                v[q]->has_dur ? v[q]->dur_ns
                                              : (double)(v[q]->end - v[q]->start),
                                v[q]->rep + k->rep_offset,
                                tool) < 0)
        goto dberr;
      sum->times++;
      sum->lowconf += low;
    }
    if (k->power) {
      /* Window: the launch's power window when it has one, else the
         repeats (back to back) when there are any, else the program's own
         execution. */
      uint64_t s = UINT64_MAX, e = 0;
      size_t n = 0;
      const prof_window *w = find_window(r, first->lseq);
      if (w) {
        s = w->start;
        e = w->end;
        n = (size_t)w->count;
        sum->windows++;
      }
      for (size_t q = i; q < j && !w; q++) {
        if (v[q]->rep == 0 && j - i > 1) continue;
        if (v[q]->start < s) s = v[q]->start;
        if (v[q]->end > e) e = v[q]->end;
        n++;
      }
      prof_attr at;
      int other_dev = r->sampled_device >= 0 && first->device != (uint32_t)r->sampled_device;
      if (!other_dev && n && prof_attribute(r->power, r->npower, r->energy,
                                            r->nenergy, s, e, &at) == 0 &&
          at.method != PROF_ATTR_NONE) {
        int plow = low || at.lowconf;
        tool_name(tool, sizeof tool,
                  at.method == PROF_ATTR_ENERGY ? PROF_TOOL_ENERGY : PROF_TOOL_POWER, plow);
        if (ds_insert_measurement(db, id, sum->gpu, "power_w", at.power_w, k->rep_offset,
                                  tool) < 0 ||
            ds_insert_measurement(db, id, sum->gpu, "energy_j", at.energy_j / (double)n,
                                  k->rep_offset, tool) < 0)
          goto dberr;
        sum->powers++;
        sum->lowconf += plow ? 2 : 0;
      } else {
        sum->unattributed++;
      }
    }
    i = j;
  }
  if (ds_commit(db) < 0) goto dberr;
  free_stored(stored, nstored);
  free(v);
  return 0;
dberr:
  seterr(err, cap, "%s", ds_errmsg(db));
fail:
  ds_rollback(db);
  free_stored(stored, nstored);
  free(v);
  return -1;
}
