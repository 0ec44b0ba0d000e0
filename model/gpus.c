/*
 * gpus.c -- the GPU table: public figures of the GPUs kcast knows, for the
 * analytic estimate (analytic.c), the per-GPU derived features
 * (derived.c), `kcast gpus` and `kcast predict --gpu`.
 *
 * The table is data, not code: model/gpus.csv, one row per GPU, compiled
 * into the library as text (the Makefile turns it into a C string) and
 * parsed on first use.  KCAST_GPUS=FILE names a CSV of the same columns
 * read after it: a row whose name is already known replaces that GPU, any
 * other row adds one, so a site describes its own GPUs without a rebuild.
 * docs/gpus.md documents every column and its sources.
 *
 * Sources (by kind): NVIDIA product datasheets for clocks, peak FP32/FP64,
 * memory size and bandwidth, and board power (TDP / max board power); NVIDIA
 * architecture whitepapers (Kepler GK110/GK210, Volta, Turing, Ampere
 * GA100 and GA102, Ada AD102, Hopper) and the CUDA C++ Programming Guide's
 * table of compute-capability limits for SM counts, L2 size, shared memory
 * per SM and per CTA, registers, and resident threads/CTAs per SM.  Peaks
 * are the non-tensor (CUDA-core) figures at the boost clock.  The K80 is a
 * board of two GK210; one CUDA device is one GK210, so its row is per GPU
 * (half the board's bandwidth, memory and power).  idle_w is NOT a
 * datasheet figure: an estimate of the power an idle, clocked-up device
 * draws (documented as such in docs/gpus.md).
 *
 * Names.  an_gpu_find matches a GPU's short name or one of its aliases (the
 * names the driver reports, e.g. "NVIDIA A100-PCIE-40GB") case-insensitively
 * and ignoring everything but letters and digits and a leading "NVIDIA" or
 * "Tesla", so the GPU keys `kcast profile` derives from driver names
 * ("A100-PCIE-40GB") match too.  Short names are unique that way.
 *
 * Threads.  The table is built once (pthread_once) and read-only after.
 */
#include <csv.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model/model.h"
#include "model/rf_int.h"

/* The text of model/gpus.csv (generated, $(BUILD)/gen/gpus_csv.c). */
extern const char an__gpus_csv[];

/* The columns, in no required order; every one must be present. */
enum {
  C_NAME, C_FULL, C_ALIASES, C_CC, C_SMS, C_MHZ, C_FP32, C_FP64, C_BW, C_MEM, C_L2, C_SMEM_SM,
  C_SMEM_CTA, C_SMEM_RES, C_REGS_SM, C_REGS_THR, C_THR_SM, C_CTAS_SM, C_TDP, C_IDLE, C_L1, C_N
};
/* Columns a table may leave out (or leave empty in a row): their value
   then comes from the compute capability (opt_default). */
static const unsigned char optional[C_N] = {[C_L1] = 1};
static const char *const col_names[C_N] = {
    "name",           "full_name",       "aliases",         "cc",
    "sms",            "boost_mhz",       "fp32_gflops",     "fp64_gflops",
    "mem_bw_gbs",     "mem_gb",          "l2_mb",           "smem_per_sm_kb",
    "smem_per_cta_kb", "smem_reserved_b", "regs_per_sm",    "max_regs_per_thread",
    "max_threads_per_sm", "max_ctas_per_sm", "tdp_w",       "idle_w",
    "l1_kb"};

/*
 * The L1 data cache per SM of an architecture, KB: the unified L1 and
 * shared memory from cc 7.0 (the CUDA C++ Programming Guide's table of
 * compute-capability features: 128 KB on 7.0, 96 on 7.5, 192 on 8.0 and
 * 8.7, 128 on 8.6, 8.9 and 12.x, 256 on 9.0 and 10.x), the L1/texture cache
 * before it (24 KB on 5.0, 5.2, 5.3 and 6.0; 48 KB on 6.1 and 6.2; the
 * 48 KB read-only data cache on 3.x).
 */
static double l1_default(int maj, int min) {
  int cc = maj * 10 + min;
  if (cc >= 120) return 128;
  if (cc >= 100 || cc == 90) return 256;
  if (cc == 89 || cc == 86) return 128;
  if (cc >= 80) return 192;
  if (cc == 75) return 96;
  if (cc >= 70) return 128;
  if (cc == 61 || cc == 62) return 48;
  if (cc >= 50) return 24;
  return 48;
}

typedef struct table {
  an_gpu *g;          /* n GPUs; strings owned (one allocation each) */
  size_t n, cap;
  char err[700];      /* why KCAST_GPUS was not used, "" when it was (or unset) */
} table;

static table T;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Parser state of one CSV text. */
typedef struct parse {
  const char *src;        /* file name for messages */
  long line;              /* current record's line (1 = header) */
  int col[C_N];           /* column index of each field, -1 when absent */
  int ncols;              /* header fields */
  char *field[64];        /* current record's fields (owned) */
  int nf;
  int failed;
  char err[512];
  an_gpu *rows;           /* parsed GPUs */
  size_t n, cap;
} parse;

static void perr(parse *p, const char *fmt, const char *a, const char *b) {
  if (p->failed) return;
  p->failed = 1;
  char msg[400];
  snprintf(msg, sizeof msg, fmt, a ? a : "", b ? b : "");
  snprintf(p->err, sizeof p->err, "%s:%ld: %s", p->src, p->line, msg);
}

static void on_field(void *s, size_t len, void *ctx) {
  parse *p = ctx;
  if (p->failed) return;
  if (p->nf >= (int)(sizeof p->field / sizeof p->field[0])) {
    perr(p, "too many fields%s%s", NULL, NULL);
    return;
  }
  char *f = malloc(len + 1);
  if (!f) { perr(p, "out of memory%s%s", NULL, NULL); return; }
  memcpy(f, s, len);
  f[len] = 0;
  p->field[p->nf++] = f;
}

/* A number field: finite, > 0 unless may_zero. */
static int num(parse *p, int c, int may_zero, double *out) {
  const char *s = p->field[p->col[c]];
  char *e;
  errno = 0;
  double v = strtod(s, &e);
  if (e == s || *e || errno || !isfinite(v) || v < 0 || (!may_zero && v == 0)) {
    perr(p, "%s: '%s' is not a positive number", col_names[c], s);
    return -1;
  }
  *out = v;
  return 0;
}

static void free_gpu(an_gpu *g) {
  free((char *)g->name);
  free((char *)g->full_name);
  free((char *)g->aliases);
}

static void record(parse *p) {
  static const int may_zero[C_N] = {[C_FP64] = 1, [C_SMEM_RES] = 1, [C_IDLE] = 1};
  double v[C_N] = {0};
  an_gpu g;
  memset(&g, 0, sizeof g);
  if (p->nf != p->ncols) {
    char a[32], b[32];
    snprintf(a, sizeof a, "%d", p->nf);
    snprintf(b, sizeof b, "%d", p->ncols);
    perr(p, "%s fields, the header has %s", a, b);
    return;
  }
  for (int c = 0; c < C_N; c++) {
    if (c == C_NAME || c == C_FULL || c == C_ALIASES || c == C_CC) continue;
    if (optional[c] && (p->col[c] < 0 || !p->field[p->col[c]][0])) {
      v[c] = NAN; /* from the compute capability, below */
      continue;
    }
    if (num(p, c, may_zero[c], &v[c])) return;
  }
  const char *name = p->field[p->col[C_NAME]], *cc = p->field[p->col[C_CC]];
  if (!*name || strchr(name, ',') || strchr(name, ' ')) {
    perr(p, "name '%s' is empty or holds a space or comma%s", name, NULL);
    return;
  }
  int maj, min, used = 0;
  if (sscanf(cc, "%d.%d%n", &maj, &min, &used) != 2 || cc[used] || maj < 1 || maj > 99 ||
      min < 0 || min > 9) {
    perr(p, "cc '%s' is not a compute capability such as 8.6%s", cc, NULL);
    return;
  }
  if (v[C_IDLE] >= v[C_TDP]) { perr(p, "idle_w is not below tdp_w%s%s", NULL, NULL); return; }
  if (v[C_THR_SM] < 32 || fmod(v[C_THR_SM], 32) || v[C_REGS_THR] > v[C_REGS_SM]) {
    perr(p, "max_threads_per_sm must be a multiple of 32, max_regs_per_thread at most "
            "regs_per_sm%s%s", NULL, NULL);
    return;
  }
  g.cc_major = maj;
  g.cc_minor = min;
  g.sms = (int)v[C_SMS];
  g.boost_mhz = v[C_MHZ];
  g.fp32_gflops = v[C_FP32];
  g.fp64_gflops = v[C_FP64];
  g.mem_bw_gbs = v[C_BW];
  g.mem_gb = v[C_MEM];
  g.l2_mb = v[C_L2];
  g.smem_per_sm_kb = v[C_SMEM_SM];
  g.smem_per_cta_kb = v[C_SMEM_CTA];
  g.smem_reserved_b = v[C_SMEM_RES];
  g.regs_per_sm = (int)v[C_REGS_SM];
  g.max_regs_per_thread = (int)v[C_REGS_THR];
  g.max_threads_per_sm = (int)v[C_THR_SM];
  g.max_ctas_per_sm = (int)v[C_CTAS_SM];
  g.tdp_w = v[C_TDP];
  g.idle_w = v[C_IDLE];
  g.l1_kb = isnan(v[C_L1]) ? l1_default(maj, min) : v[C_L1];
  if (p->n == p->cap) {
    size_t nc = p->cap ? 2 * p->cap : 16;
    an_gpu *t = realloc(p->rows, nc * sizeof *t);
    if (!t) { perr(p, "out of memory%s%s", NULL, NULL); return; }
    p->rows = t;
    p->cap = nc;
  }
  g.name = strdup(name);
  g.full_name = strdup(p->field[p->col[C_FULL]]);
  g.aliases = strdup(p->field[p->col[C_ALIASES]]);
  if (!g.name || !g.full_name || !g.aliases) {
    free_gpu(&g);
    perr(p, "out of memory%s%s", NULL, NULL);
    return;
  }
  p->rows[p->n++] = g;
}

static void on_record(int c, void *ctx) {
  parse *p = ctx;
  (void)c;
  if (!p->failed) {
    if (p->line == 1) { /* the header */
      for (int k = 0; k < C_N; k++) p->col[k] = -1;
      p->ncols = p->nf;
      for (int f = 0; f < p->nf; f++) {
        int k = 0;
        while (k < C_N && strcmp(p->field[f], col_names[k])) k++;
        if (k == C_N) { perr(p, "unknown column '%s'%s", p->field[f], NULL); break; }
        if (p->col[k] >= 0) { perr(p, "column '%s' given twice%s", p->field[f], NULL); break; }
        p->col[k] = f;
      }
      for (int k = 0; k < C_N && !p->failed; k++)
        if (p->col[k] < 0 && !optional[k]) perr(p, "the header lacks column '%s'%s", col_names[k], NULL);
    } else if (!(p->nf == 1 && !p->field[0][0])) { /* skip blank lines */
      record(p);
    }
  }
  for (int f = 0; f < p->nf; f++) free(p->field[f]);
  p->nf = 0;
  p->line++;
}

/* Parse text (len bytes) named src into p->rows. */
static int parse_text(parse *p, const char *src, const char *text, size_t len) {
  memset(p, 0, sizeof *p);
  p->src = src;
  p->line = 1;
  struct csv_parser cp;
  if (csv_init(&cp, CSV_APPEND_NULL)) {
    snprintf(p->err, sizeof p->err, "%s: cannot start the CSV reader", src);
    return -1;
  }
  size_t done = csv_parse(&cp, text, len, on_field, on_record, p);
  if (done != len && !p->failed) {
    p->failed = 1;
    snprintf(p->err, sizeof p->err, "%s:%ld: %s", src, p->line, csv_strerror(csv_error(&cp)));
  }
  if (!p->failed) csv_fini(&cp, on_field, on_record, p);
  csv_free(&cp);
  for (int f = 0; f < p->nf; f++) free(p->field[f]);
  p->nf = 0;
  if (!p->failed && p->line <= 2 && !p->n) {
    p->failed = 1;
    snprintf(p->err, sizeof p->err, "%s: no GPU rows", src);
  }
  if (p->failed) {
    for (size_t i = 0; i < p->n; i++) free_gpu(&p->rows[i]);
    free(p->rows);
    p->rows = NULL;
    p->n = 0;
    return -1;
  }
  return 0;
}

/* Letters and digits of s, lower case, without a leading "nvidia"/"tesla". */
static void norm(const char *s, size_t len, char *out, size_t cap) {
  size_t n = 0;
  for (size_t i = 0; i < len && s[i] && n + 1 < cap; i++)
    if (isalnum((unsigned char)s[i])) out[n++] = (char)tolower((unsigned char)s[i]);
  out[n] = 0;
  for (int again = 1; again;) {
    again = 0;
    static const char *const pre[] = {"nvidia", "tesla"};
    for (int k = 0; k < 2; k++) {
      size_t l = strlen(pre[k]);
      if (n > l && !strncmp(out, pre[k], l)) {
        memmove(out, out + l, n - l + 1);
        n -= l;
        again = 1;
      }
    }
  }
}

static long find_in(const an_gpu *g, size_t n, const char *name) {
  char want[128], have[128];
  for (size_t i = 0; i < n; i++)
    if (!strcasecmp(g[i].name, name)) return (long)i;
  norm(name, strlen(name), want, sizeof want);
  if (!*want) return -1;
  for (size_t i = 0; i < n; i++) {
    norm(g[i].name, strlen(g[i].name), have, sizeof have);
    if (!strcmp(have, want)) return (long)i;
    for (const char *a = g[i].aliases; a && *a;) {
      const char *e = strchr(a, ';');
      size_t l = e ? (size_t)(e - a) : strlen(a);
      norm(a, l, have, sizeof have);
      if (*have && !strcmp(have, want)) return (long)i;
      if (!e) break;
      a = e + 1;
    }
  }
  return -1;
}

/* Add or replace the rows of p in the table (p's strings move). */
static void merge(parse *p) {
  for (size_t i = 0; i < p->n; i++) {
    long at = -1;
    for (size_t k = 0; k < T.n && at < 0; k++)
      if (!strcasecmp(T.g[k].name, p->rows[i].name)) at = (long)k;
    if (at >= 0) {
      free_gpu(&T.g[at]);
      T.g[at] = p->rows[i];
      continue;
    }
    if (T.n == T.cap) {
      size_t nc = T.cap ? 2 * T.cap : 16;
      an_gpu *t = realloc(T.g, nc * sizeof *t);
      if (!t) { free_gpu(&p->rows[i]); snprintf(T.err, sizeof T.err, "GPU table: out of memory"); continue; }
      T.g = t;
      T.cap = nc;
    }
    T.g[T.n++] = p->rows[i];
  }
  free(p->rows);
  p->rows = NULL;
  p->n = 0;
}

static void build(void) {
  parse p;
  if (parse_text(&p, "model/gpus.csv", an__gpus_csv, strlen(an__gpus_csv))) {
    snprintf(T.err, sizeof T.err, "%.600s", p.err); /* a build defect; the tests catch it */
    return;
  }
  merge(&p);
  const char *extra = getenv("KCAST_GPUS");
  if (!extra || !*extra) return;
  FILE *fp = fopen(extra, "rb");
  if (!fp) {
    snprintf(T.err, sizeof T.err, "%s (KCAST_GPUS): %s", extra, strerror(errno));
    return;
  }
  char *buf = NULL;
  size_t len = 0, cap = 0, got;
  char chunk[8192];
  int bad = 0;
  while (!bad && (got = fread(chunk, 1, sizeof chunk, fp)) > 0) {
    if (len + got + 1 > cap) {
      size_t nc = (len + got + 1) * 2;
      char *t = nc > (1u << 26) ? NULL : realloc(buf, nc);
      if (!t) bad = 1;
      else { buf = t; cap = nc; }
    }
    if (!bad) { memcpy(buf + len, chunk, got); len += got; }
  }
  if (ferror(fp) || bad) {
    snprintf(T.err, sizeof T.err, "%s (KCAST_GPUS): %s", extra, bad ? "too large" : "read error");
  } else if (parse_text(&p, extra, buf ? buf : "", len)) {
    snprintf(T.err, sizeof T.err, "%.600s (KCAST_GPUS)", p.err);
  } else {
    /* the extra table's own names must stay unique */
    for (size_t i = 0; i < p.n && !T.err[0]; i++)
      for (size_t k = i + 1; k < p.n; k++)
        if (!strcasecmp(p.rows[i].name, p.rows[k].name))
          snprintf(T.err, sizeof T.err, "%s (KCAST_GPUS): GPU %s given twice", extra, p.rows[i].name);
    if (T.err[0]) {
      for (size_t i = 0; i < p.n; i++) free_gpu(&p.rows[i]);
      free(p.rows);
    } else {
      merge(&p);
    }
  }
  free(buf);
  fclose(fp);
}

static const table *tab(void) {
  pthread_once(&once, build);
  return &T;
}

const char *an_gpu_table_error(void) { return tab()->err; }

size_t an_gpu_count(void) { return tab()->n; }

const an_gpu *an_gpu_at(size_t i) { return i < an_gpu_count() ? &T.g[i] : NULL; }

const an_gpu *an_gpu_find(const char *name) {
  if (!name || !*name) return NULL;
  const table *t = tab();
  long at = find_in(t->g, t->n, name);
  return at >= 0 ? &t->g[at] : NULL;
}

size_t an_gpu_list(const char *list, const an_gpu **out, size_t cap) {
  size_t n = 0;
  for (const char *t = list; t && *t;) {
    const char *e = strchr(t, ',');
    size_t l = e ? (size_t)(e - t) : strlen(t);
    char name[256];
    if (l && l < sizeof name) {
      memcpy(name, t, l);
      name[l] = 0;
      const an_gpu *g = an_gpu_find(name);
      if (g && n < cap) out[n++] = g;
    }
    t = e ? e + 1 : NULL;
  }
  return n;
}

const char *an_gpu_match(const char *name, const char *const *names, size_t n) {
  if (!name || !*name) return NULL;
  for (size_t k = 0; k < n; k++)
    if (names[k] && !strcmp(names[k], name)) return names[k];
  for (size_t k = 0; k < n; k++)
    if (names[k] && !strcasecmp(names[k], name)) return names[k];
  const an_gpu *want = an_gpu_find(name);
  for (size_t k = 0; want && k < n; k++)
    if (names[k] && an_gpu_find(names[k]) == want) return names[k];
  return NULL;
}

void an_gpu_names(char *buf, size_t cap) {
  size_t len = 0;
  buf[0] = 0;
  for (size_t i = 0; i < an_gpu_count(); i++) {
    const char *nm = an_gpu_at(i)->name;
    if (len + strlen(nm) + 8 >= cap) {
      snprintf(buf + len, cap - len, "%s...", i ? ", " : "");
      return;
    }
    len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", nm);
  }
}

int an_gpu_in_list(const char *list, const char *name) {
  const an_gpu *want = an_gpu_find(name);
  for (const char *t = list; t && *t && name;) {
    const char *e = strchr(t, ',');
    size_t l = e ? (size_t)(e - t) : strlen(t);
    if (l == strlen(name) && !strncasecmp(t, name, l)) return 1;
    char one[256];
    if (want && l < sizeof one) {
      memcpy(one, t, l);
      one[l] = 0;
      if (an_gpu_find(one) == want) return 1;
    }
    t = e ? e + 1 : NULL;
  }
  return 0;
}
