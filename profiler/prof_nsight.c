/*
 * prof_nsight.c -- kernel durations from Nsight Systems and Nsight Compute
 * exports, as prof_records, so that prof_ingest joins them to a `kcast
 * run` exactly as it joins `kcast profile`'s own records (prof.h;
 * docs/formats.md, "Nsight imports").
 *
 * Inputs:
 *   nsys CSV     `nsys stats --report cuda_gpu_trace --format csv`: one row
 *                per GPU activity, columns by name: "Start (UNIT)",
 *                "Duration (UNIT)", "CorrId", "GrdX".."BlkZ", "DymSMem
 *                (MB)", "Device", "Strm", "Name".  Memory copies and sets
 *                have no grid and are left out.  Lines before the header
 *                (what nsys prints around a report) are skipped.
 *   nsys SQLite  `nsys export --type sqlite`: CUPTI_ACTIVITY_KIND_KERNEL
 *                (start, end, correlationId, gridX.., blockX..,
 *                dynamicSharedMemory, names as StringIds ids).
 *   ncu CSV      `ncu --csv --page raw`: a header row ("ID", "Kernel
 *                Name", "Block Size", "Grid Size", metrics...), a row of
 *                units, one row per profiled launch; the duration is
 *                gpu__time_duration.sum in its unit's row.
 *
 * Launch order: a kcast run numbers launches in the order the program
 * made them.  nsys's correlation ids grow in API-call order (kernels on
 * several streams may start in another order), so its kernels are sorted
 * by correlation id; ncu serialises launches and numbers them (ID) in
 * launch order.  lseq is then the position among the kernels; a capture
 * that left launches out (ncu --launch-skip, kernel filters, a capture
 * range) shifts every later one, which the join's name and geometry check
 * then reports.
 *
 * Errors: "FILE:LINE: problem" (CSV record line) or "FILE: problem".
 */
#include "profiler/prof.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <csv.h>
#include <sqlite3.h>

static int nfail(char *err, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int nfail(char *err, size_t cap, const char *fmt, ...) {
  if (err && cap) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
  }
  return -1;
}

/* ------------------------------------------------------------ CSV table -- */

/* A whole CSV file as records of fields (libcsv). */
typedef struct ctable {
  size_t nrec, cap;
  struct crec { size_t n, cap; char **f; long line; } *rec;
  long line;       /* current line while parsing */
  int oom;
} ctable;

static void ct_free(ctable *t) {
  for (size_t i = 0; i < t->nrec; i++) {
    for (size_t j = 0; j < t->rec[i].n; j++) free(t->rec[i].f[j]);
    free(t->rec[i].f);
  }
  free(t->rec);
  memset(t, 0, sizeof *t);
}

static struct crec *ct_cur(ctable *t, int open) {
  if (t->nrec && !open) return &t->rec[t->nrec - 1];
  if (t->nrec == t->cap) {
    size_t nc = t->cap ? t->cap * 2 : 64;
    void *p = realloc(t->rec, nc * sizeof *t->rec);
    if (!p) return NULL;
    t->rec = p;
    t->cap = nc;
  }
  struct crec *r = &t->rec[t->nrec++];
  memset(r, 0, sizeof *r);
  r->line = t->line;
  return r;
}

typedef struct ct_state { ctable *t; int fresh; } ct_state;

static void on_field(void *s, size_t n, void *ctx) {
  ct_state *st = ctx;
  ctable *t = st->t;
  if (t->oom) return;
  struct crec *r = ct_cur(t, st->fresh);
  st->fresh = 0;
  if (!r) { t->oom = 1; return; }
  if (r->n == r->cap) {
    size_t nc = r->cap ? r->cap * 2 : 16;
    void *p = realloc(r->f, nc * sizeof *r->f);
    if (!p) { t->oom = 1; return; }
    r->f = p;
    r->cap = nc;
  }
  char *v = malloc(n + 1);
  if (!v) { t->oom = 1; return; }
  memcpy(v, s, n);
  v[n] = 0;
  r->f[r->n++] = v;
}

static void on_record(int c, void *ctx) {
  (void)c;
  ct_state *st = ctx;
  st->fresh = 1;
}

static int ct_read(const char *path, ctable *t, char *err, size_t cap) {
  memset(t, 0, sizeof *t);
  FILE *f = fopen(path, "rb");
  if (!f) return nfail(err, cap, "%s: %s", path, strerror(errno));
  struct csv_parser p;
  /* strict: a quote still open at the end of the file is an error, not a
     last field that swallowed the rest (libcsv checks that only with both
     flags; Nsight quotes every field that holds a quote or a comma, so the
     strict rules take what it writes) */
  if (csv_init(&p, CSV_APPEND_NULL | CSV_STRICT | CSV_STRICT_FINI)) {
    fclose(f);
    return nfail(err, cap, "%s: out of memory", path);
  }
  ct_state st = {t, 1};
  char buf[65536];
  size_t r;
  int rc = 0;
  t->line = 1;
  while ((r = fread(buf, 1, sizeof buf, f)) > 0) {
    /* parse line by line so each record knows its line */
    size_t s = 0;
    for (size_t i = 0; i < r; i++) {
      if (buf[i] != '\n') continue;
      if (csv_parse(&p, buf + s, i + 1 - s, on_field, on_record, &st) != i + 1 - s) {
        rc = nfail(err, cap, "%s:%ld: %s", path, t->line, csv_strerror(csv_error(&p)));
        break;
      }
      s = i + 1;
      t->line++;
    }
    if (rc) break;
    if (s < r && csv_parse(&p, buf + s, r - s, on_field, on_record, &st) != r - s) {
      rc = nfail(err, cap, "%s:%ld: %s", path, t->line, csv_strerror(csv_error(&p)));
      break;
    }
  }
  if (!rc && ferror(f)) rc = nfail(err, cap, "%s: read error", path);
  if (!rc && csv_fini(&p, on_field, on_record, &st))
    rc = nfail(err, cap, "%s:%ld: a quoted field is not closed before the end of the file", path,
               t->line);
  csv_free(&p);
  fclose(f);
  if (!rc && t->oom) rc = nfail(err, cap, "%s: out of memory", path);
  if (rc) ct_free(t);
  return rc;
}

/* Column of name (exact) or starting with prefix+" (" ; -1 when absent. */
static long col_of(const struct crec *h, const char *name, int prefix) {
  size_t n = strlen(name);
  for (size_t j = 0; j < h->n; j++) {
    const char *f = h->f[j];
    while (*f == ' ') f++;
    if (!strcmp(f, name)) return (long)j;
    if (prefix && !strncmp(f, name, n) && f[n] == ' ' && f[n + 1] == '(') return (long)j;
  }
  return -1;
}

/* Nanoseconds per unit named in "(ns)", "(us)", "(ms)", "(s)" or ncu's
   "nsecond", "usecond", "msecond", "second"; 0 when unknown. */
static double unit_ns(const char *u) {
  const char *p = strchr(u, '(');
  char b[32];
  size_t n = 0;
  if (p) {
    p++;
    while (p[n] && p[n] != ')' && n + 1 < sizeof b) { b[n] = p[n]; n++; }
  } else {
    while (u[n] == ' ') u++;
    while (u[n] && u[n] != ' ' && n + 1 < sizeof b) { b[n] = u[n]; n++; }
  }
  b[n] = 0;
  if (!strcmp(b, "ns") || !strcmp(b, "nsecond")) return 1;
  if (!strcmp(b, "us") || !strcmp(b, "usecond") || !strcmp(b, "\xc2\xb5s")) return 1e3;
  if (!strcmp(b, "ms") || !strcmp(b, "msecond")) return 1e6;
  if (!strcmp(b, "s") || !strcmp(b, "second")) return 1e9;
  return 0;
}

/* A number as Nsight prints it (thousands separators allowed, as 1,234,567.5:
   groups of three digits before the point and nowhere else, so
   "1,0,2,4,.5,0" is no number); -1 when it is not a finite number >= 0. */
static int num(const char *s, double *out) {
  char b[64];
  size_t n = 0;
  while (*s == ' ') s++;
  const char *comma = strchr(s, ',');
  if (comma) {
    size_t lead = strspn(s, "0123456789");
    if (lead < 1 || lead > 3 || s[lead] != ',') return -1;
    const char *p = s + lead;
    while (*p == ',') {
      if (strspn(p + 1, "0123456789") != 3) return -1;
      p += 4;
    }
    if (*p && *p != '.' && *p != ' ') return -1;
    if (strchr(p, ',')) return -1;
  }
  for (; *s && n + 1 < sizeof b; s++)
    if (*s != ',') b[n++] = *s;
  while (n && b[n - 1] == ' ') n--;
  b[n] = 0;
  if (!n) return -1;
  char *e;
  errno = 0;
  double v = strtod(b, &e);
  if (errno || *e || !isfinite(v) || v < 0) return -1;
  *out = v;
  return 0;
}

static int udim(const char *s, uint32_t *out) {
  double v;
  if (num(s, &v) || v < 1 || v > 4294967295.0 || v != floor(v)) return -1;
  *out = (uint32_t)v;
  return 0;
}

/* "(256, 1, 1)" -> 256 1 1. */
static int dims3(const char *s, uint32_t d[3]) {
  const char *p = s;
  while (*p == ' ' || *p == '(') p++;
  for (int i = 0; i < 3; i++) {
    char *e;
    errno = 0;
    unsigned long v = strtoul(p, &e, 10);
    if (errno || e == p || v < 1 || v > 4294967295ul) return -1;
    d[i] = (uint32_t)v;
    p = e;
    while (*p == ' ') p++;
    if (i < 2) {
      if (*p != ',') return -1;
      p++;
    }
  }
  while (*p == ' ') p++;
  return *p == ')' || !*p ? 0 : -1;
}

/* "NVIDIA H200 (0)" -> "NVIDIA H200". */
static void device_name(const char *s, char *out, size_t cap) {
  snprintf(out, cap, "%s", s);
  size_t n = strlen(out);
  while (n && out[n - 1] == ' ') out[--n] = 0;
  if (n && out[n - 1] == ')') {
    char *o = strrchr(out, '(');
    if (o && o > out) {
      int digits = 1;
      for (char *q = o + 1; q < out + n - 1; q++) digits &= isdigit((unsigned char)*q) != 0;
      if (digits) {
        *o = 0;
        n = strlen(out);
        while (n && out[n - 1] == ' ') out[--n] = 0;
      }
    }
  }
}

static int add_kernel(prof_records *r, size_t *cap, const prof_kernel *k) {
  if (r->nkernels == *cap) {
    size_t nc = *cap ? *cap * 2 : 64;
    void *p = realloc(r->kernels, nc * sizeof *r->kernels);
    if (!p) return -1;
    r->kernels = p;
    *cap = nc;
  }
  r->kernels[r->nkernels++] = *k;
  return 0;
}

/* sort key: the launch order (corr for nsys, ID for ncu), then start */
static int cmp_order(const void *a, const void *b) {
  const prof_kernel *x = a, *y = b;
  if (x->corr != y->corr) return x->corr < y->corr ? -1 : 1;
  return x->start < y->start ? -1 : x->start > y->start;
}

static void number_launches(prof_records *r) {
  qsort(r->kernels, r->nkernels, sizeof *r->kernels, cmp_order);
  for (size_t i = 0; i < r->nkernels; i++) {
    r->kernels[i].lseq = (int64_t)i;
    r->kernels[i].rep = 0;
  }
  r->repeat = 1;
  r->version = PROF_RECORDS_VERSION;
  r->sampled_device = -1;
  r->launches = (int64_t)r->nkernels;
}

/* ------------------------------------------------------------- nsys CSV -- */

static int nsys_csv(const char *path, prof_records *r, char *err, size_t cap) {
  ctable t;
  if (ct_read(path, &t, err, cap)) return -1;
  size_t h = 0;
  long cd = -1;
  for (; h < t.nrec; h++)
    if ((cd = col_of(&t.rec[h], "Duration", 1)) >= 0 && col_of(&t.rec[h], "Name", 0) >= 0) break;
  if (h == t.nrec) {
    nfail(err, cap, "%s: no cuda_gpu_trace header (needs \"Duration (ns)\" and \"Name\" "
                 "columns: nsys stats --report cuda_gpu_trace --format csv)", path);
    ct_free(&t);
    return -1;
  }
  const struct crec *H = &t.rec[h];
  long cs = col_of(H, "Start", 1), cc = col_of(H, "CorrId", 0), cn = col_of(H, "Name", 0);
  long cdev = col_of(H, "Device", 0), cstr = col_of(H, "Strm", 0), cdyn = col_of(H, "DymSMem", 1);
  static const char *const gn[6] = {"GrdX", "GrdY", "GrdZ", "BlkX", "BlkY", "BlkZ"};
  long cg[6];
  for (int i = 0; i < 6; i++)
    if ((cg[i] = col_of(H, gn[i], 0)) < 0) {
      nfail(err, cap, "%s:%ld: cuda_gpu_trace header without a %s column", path, H->line,
                   gn[i]);
      ct_free(&t);
      return -1;
    }
  double dunit = unit_ns(H->f[cd]), sunit = cs >= 0 ? unit_ns(H->f[cs]) : 1;
  if (!dunit || !sunit) {
    nfail(err, cap, "%s:%ld: unknown time unit in '%s'", path, H->line, H->f[cd]);
    ct_free(&t);
    return -1;
  }
  size_t kcap = 0;
  int rc = 0;
  for (size_t i = h + 1; i < t.nrec && !rc; i++) {
    const struct crec *R = &t.rec[i];
    if (R->n == 1 && !R->f[0][0]) continue; /* blank line */
    if (R->n < H->n) {
      rc = nfail(err, cap, "%s:%ld: %zu fields, the header has %zu", path, R->line, R->n, H->n);
      break;
    }
    const char *gx = R->f[cg[0]];
    while (*gx == ' ') gx++;
    if (!*gx) continue; /* a memory copy or set */
    prof_kernel k;
    memset(&k, 0, sizeof k);
    double d = 0, s = 0, corr = 0, dyn = 0;
    for (int q = 0; q < 6 && !rc; q++)
      if (udim(R->f[cg[q]], q < 3 ? &k.grid[q] : &k.block[q - 3]))
        rc = nfail(err, cap, "%s:%ld: %s '%s' is not a positive integer", path, R->line, gn[q],
                   R->f[cg[q]]);
    if (rc) break;
    if (num(R->f[cd], &d)) {
      rc = nfail(err, cap, "%s:%ld: duration '%s' is not a number >= 0", path, R->line, R->f[cd]);
      break;
    }
    if (cs >= 0 && num(R->f[cs], &s)) {
      rc = nfail(err, cap, "%s:%ld: start '%s' is not a number >= 0", path, R->line, R->f[cs]);
      break;
    }
    if (cc >= 0 && (num(R->f[cc], &corr) || corr > 4294967295.0)) {
      rc = nfail(err, cap, "%s:%ld: CorrId '%s' is not an id", path, R->line, R->f[cc]);
      break;
    }
    if (cdyn >= 0 && !num(R->f[cdyn], &dyn)) k.dyn_shmem = (int64_t)llround(dyn * 1e6);
    if (cstr >= 0) {
      double sv;
      if (!num(R->f[cstr], &sv)) k.stream = (uint32_t)sv;
    }
    /* in ns: a duration beyond 2^53 ns (104 days) or a start beyond 2^63
       is no kernel's; the duration is kept exactly (fractions of a ns) */
    double dns = d * dunit, sns = s * sunit;
    if (!(dns <= 9007199254740992.0)) {
      rc = nfail(err, cap, "%s:%ld: duration '%s' is out of range (%.6g ns; at most 2^53 ns)",
                 path, R->line, R->f[cd], dns);
      break;
    }
    if (!(sns < 9.2e18)) {
      rc = nfail(err, cap, "%s:%ld: start '%s' is out of range (%.6g ns)", path, R->line,
                 R->f[cs], sns);
      break;
    }
    k.start = (uint64_t)llround(sns);
    k.end = k.start + (uint64_t)llround(dns);
    k.dur_ns = dns;
    k.has_dur = 1;
    k.corr = cc >= 0 ? (uint32_t)corr : (uint32_t)r->nkernels;
    if (!(k.name = strdup(R->f[cn])) || add_kernel(r, &kcap, &k)) {
      free(k.name);
      rc = nfail(err, cap, "%s: out of memory", path);
      break;
    }
    if (cdev >= 0 && !r->gpu.name[0]) device_name(R->f[cdev], r->gpu.name, sizeof r->gpu.name);
  }
  ct_free(&t);
  return rc;
}

/* ---------------------------------------------------------- nsys SQLite -- */

static int has_column(sqlite3 *db, const char *table, const char *col) {
  char sql[200];
  snprintf(sql, sizeof sql, "PRAGMA table_info(%s)", table);
  sqlite3_stmt *st;
  int found = 0;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return 0;
  while (sqlite3_step(st) == SQLITE_ROW)
    if (!strcmp((const char *)sqlite3_column_text(st, 1), col)) found = 1;
  sqlite3_finalize(st);
  return found;
}

/* Is table t of the export a table (not a view: ds_foreign_table)?  0, or
   -1 with the message; a missing optional table is 1. */
static int check_table(ds_foreign *f, const char *t, int optional, char *err, size_t cap) {
  int k = ds_foreign_table(f, t);
  if (k == DS_FOREIGN_TABLE) return 0;
  if (k == DS_FOREIGN_MISSING && optional) return 1;
  if (k < 0) {
    char m[1024];
    return nfail(err, cap, "%s", ds_foreign_errmsg(f, m, sizeof m));
  }
  if (k == DS_FOREIGN_MISSING)
    return nfail(err, cap, "%s: not an nsys SQLite export with kernels (no table %s)", f->path, t);
  return nfail(err, cap, "%s: %s is a view, not a table: not an nsys export (refused: a view "
               "can compute anything, without end)", f->path, t);
}

static int nsys_sqlite(const char *path, prof_records *r, char *err, size_t cap) {
  ds_foreign f;
  if (ds_foreign_open(path, &f, err, cap)) return -1;
  sqlite3 *db = f.h;
  char m[1024];
  if (check_table(&f, "CUPTI_ACTIVITY_KIND_KERNEL", 0, err, cap) ||
      check_table(&f, "StringIds", 0, err, cap)) {
    ds_foreign_close(&f);
    return -1;
  }
  static const char *const need[] = {"start", "end", "correlationId", "gridX", "gridY", "gridZ",
                                     "blockX", "blockY", "blockZ", "demangledName"};
  for (size_t i = 0; i < sizeof need / sizeof *need; i++)
    if (!has_column(db, "CUPTI_ACTIVITY_KIND_KERNEL", need[i])) {
      ds_foreign_close(&f);
      return nfail(err, cap, "%s: not an nsys SQLite export with kernels (table "
                   "CUPTI_ACTIVITY_KIND_KERNEL, column %s)", path, need[i]);
    }
  /* the name as the program has it: mangled where the export keeps it */
  int mang = has_column(db, "CUPTI_ACTIVITY_KIND_KERNEL", "mangledName");
  const char *namecol = mang ? "coalesce(m.value, d.value)" : "d.value";
  int dyn = has_column(db, "CUPTI_ACTIVITY_KIND_KERNEL", "dynamicSharedMemory");
  char sql[1024];
  snprintf(sql, sizeof sql,
           "SELECT k.start, k.\"end\", k.correlationId, k.gridX, k.gridY, k.gridZ, k.blockX, "
           "k.blockY, k.blockZ, %s, %s FROM CUPTI_ACTIVITY_KIND_KERNEL k "
           "LEFT JOIN StringIds d ON d.id = k.demangledName %s ORDER BY k.correlationId, k.start",
           dyn ? "k.dynamicSharedMemory" : "0", namecol,
           mang ? "LEFT JOIN StringIds m ON m.id = k.mangledName" : "");
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
    nfail(err, cap, "%s", ds_foreign_errmsg(&f, m, sizeof m));
    ds_foreign_close(&f);
    return -1;
  }
  size_t kcap = 0;
  int rc = 0, s;
  long row = 0;
  while ((s = sqlite3_step(st)) == SQLITE_ROW) {
    row++;
    prof_kernel k;
    memset(&k, 0, sizeof k);
    /* integers only: a REAL or TEXT time would be cut or read as 0 */
    for (int q = 0; q < 9 && !rc; q++)
      if (sqlite3_column_type(st, q) != SQLITE_INTEGER)
        rc = nfail(err, cap, "%s: kernel row %ld: column %d (%s) is not an integer", path, row,
                   q + 1, q < 2 ? (q ? "end" : "start") : q == 2 ? "correlationId" : "grid/block");
    if (rc) break;
    sqlite3_int64 a = sqlite3_column_int64(st, 0), b = sqlite3_column_int64(st, 1);
    if (a < 0 || b < a) {
      rc = nfail(err, cap, "%s: kernel row %ld: end before start", path, row);
      break;
    }
    k.start = (uint64_t)a;
    k.end = (uint64_t)b;
    sqlite3_int64 corr = sqlite3_column_int64(st, 2);
    if (corr < 0 || corr > 4294967295ll) {
      rc = nfail(err, cap, "%s: kernel row %ld: correlationId %lld is not an id", path, row,
                 (long long)corr);
      break;
    }
    k.corr = (uint32_t)corr;
    for (int q = 0; q < 6 && !rc; q++) {
      sqlite3_int64 v = sqlite3_column_int64(st, 3 + q);
      if (v < 1 || v > 4294967295ll)
        rc = nfail(err, cap, "%s: kernel row %ld: grid/block dimension %lld", path, row,
                   (long long)v);
      else if (q < 3) k.grid[q] = (uint32_t)v;
      else k.block[q - 3] = (uint32_t)v;
    }
    if (rc) break;
    k.dyn_shmem = sqlite3_column_int64(st, 9);
    if (k.dyn_shmem < 0) {
      rc = nfail(err, cap, "%s: kernel row %ld: dynamic shared memory %lld", path, row,
                 (long long)k.dyn_shmem);
      break;
    }
    const unsigned char *nm = sqlite3_column_text(st, 10);
    if (!nm) {
      rc = nfail(err, cap, "%s: kernel row %ld has no name in StringIds", path, row);
      break;
    }
    if ((size_t)sqlite3_column_bytes(st, 10) != strlen((const char *)nm)) {
      rc = nfail(err, cap, "%s: kernel row %ld: its name holds a NUL byte", path, row);
      break;
    }
    if (!(k.name = strdup((const char *)nm)) || add_kernel(r, &kcap, &k)) {
      free(k.name);
      rc = nfail(err, cap, "%s: out of memory", path);
      break;
    }
  }
  if (!rc && s != SQLITE_DONE) rc = nfail(err, cap, "%s", ds_foreign_errmsg(&f, m, sizeof m));
  sqlite3_finalize(st);
  /* the GPU's name, where the export has it (a table) */
  int gi = rc ? 1 : check_table(&f, "TARGET_INFO_GPU", 1, err, cap);
  if (gi < 0) rc = -1;
  if (!gi && has_column(db, "TARGET_INFO_GPU", "name") &&
      sqlite3_prepare_v2(db, "SELECT name FROM TARGET_INFO_GPU LIMIT 1", -1, &st, NULL) ==
          SQLITE_OK) {
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
      snprintf(r->gpu.name, sizeof r->gpu.name, "%s", sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
  }
  ds_foreign_close(&f);
  return rc;
}

int prof_nsys_read(const char *path, prof_records *r, char *err, size_t cap) {
  memset(r, 0, sizeof *r);
  FILE *f = fopen(path, "rb");
  if (!f) return nfail(err, cap, "%s: %s", path, strerror(errno));
  char magic[16] = "";
  size_t n = fread(magic, 1, sizeof magic, f);
  fclose(f);
  int rc = n == 16 && !memcmp(magic, "SQLite format 3", 16) ? nsys_sqlite(path, r, err, cap)
                                                            : nsys_csv(path, r, err, cap);
  if (!rc && !r->nkernels) rc = nfail(err, cap, "%s: no kernel launches", path);
  if (rc) { prof_records_free(r); return -1; }
  number_launches(r);
  return 0;
}

/* -------------------------------------------------------------- ncu CSV -- */

int prof_ncu_read(const char *path, prof_records *r, char *err, size_t cap) {
  memset(r, 0, sizeof *r);
  ctable t;
  if (ct_read(path, &t, err, cap)) return -1;
  size_t h = 0;
  for (; h < t.nrec; h++)
    if (col_of(&t.rec[h], "ID", 0) == 0 && col_of(&t.rec[h], "Kernel Name", 0) >= 0) break;
  if (h == t.nrec) {
    nfail(err, cap, "%s: no ncu raw-page header (\"ID\", \"Kernel Name\", ...: ncu --csv "
                 "--page raw)", path);
    ct_free(&t);
    return -1;
  }
  const struct crec *H = &t.rec[h];
  long cn = col_of(H, "Kernel Name", 0), cb = col_of(H, "Block Size", 0),
       cg = col_of(H, "Grid Size", 0), ct = col_of(H, "gpu__time_duration.sum", 0),
       cdev = col_of(H, "device__attribute_display_name", 0);
  if (cb < 0 || cg < 0 || ct < 0) {
    nfail(err, cap, "%s:%ld: the header lacks %s", path, H->line,
                 cb < 0 ? "\"Block Size\"" : cg < 0 ? "\"Grid Size\""
                                                    : "gpu__time_duration.sum (add --metrics "
                                                      "gpu__time_duration.sum)");
    ct_free(&t);
    return -1;
  }
  /* the units row follows the header: its ID cell is empty.  Without it
     the unit of the durations is unknown (reading them as ns was a guess):
     ncu --csv --page raw always prints it */
  size_t first = h + 1;
  double unit = 1;
  if (!(first < t.nrec && t.rec[first].n > (size_t)ct && !t.rec[first].f[0][0])) {
    nfail(err, cap, "%s:%ld: no units row after the header (ncu --csv --page raw prints one): "
          "the unit of gpu__time_duration.sum is unknown", path,
          first < t.nrec ? t.rec[first].line : H->line + 1);
    ct_free(&t);
    return -1;
  }
  {
    unit = unit_ns(t.rec[first].f[ct]);
    if (!unit) {
      long line = t.rec[first].line;
      char u[64];
      snprintf(u, sizeof u, "%s", t.rec[first].f[ct]);
      nfail(err, cap, "%s:%ld: unknown unit '%s' of gpu__time_duration.sum", path, line, u);
      ct_free(&t);
      return -1;
    }
    first++;
  }
  size_t kcap = 0;
  int rc = 0;
  for (size_t i = first; i < t.nrec && !rc; i++) {
    const struct crec *R = &t.rec[i];
    if (R->n == 1 && !R->f[0][0]) continue;
    if (R->n < H->n) {
      rc = nfail(err, cap, "%s:%ld: %zu fields, the header has %zu", path, R->line, R->n, H->n);
      break;
    }
    prof_kernel k;
    memset(&k, 0, sizeof k);
    double id = 0, d = 0;
    if (num(R->f[0], &id) || id != floor(id) || id > 4294967295.0) {
      rc = nfail(err, cap, "%s:%ld: ID '%s' is not a launch number", path, R->line, R->f[0]);
      break;
    }
    if (dims3(R->f[cb], k.block) || dims3(R->f[cg], k.grid)) {
      rc = nfail(err, cap, "%s:%ld: %s '%s' is not (X, Y, Z)", path, R->line,
                 dims3(R->f[cb], k.block) ? "Block Size" : "Grid Size",
                 dims3(R->f[cb], k.block) ? R->f[cb] : R->f[cg]);
      break;
    }
    if (num(R->f[ct], &d)) {
      rc = nfail(err, cap, "%s:%ld: gpu__time_duration.sum '%s' is not a number >= 0", path,
                 R->line, R->f[ct]);
      break;
    }
    for (size_t q = 0; q < r->nkernels && !rc; q++)
      if (r->kernels[q].corr == (uint32_t)id)
        rc = nfail(err, cap, "%s:%ld: launch ID %.0f appears twice (several passes or "
                   "processes in one report: import one at a time)", path, R->line, id);
    if (rc) break;
    k.corr = (uint32_t)id;
    k.start = 0;
    double dns = d * unit;
    if (!(dns <= 9007199254740992.0)) {
      rc = nfail(err, cap, "%s:%ld: gpu__time_duration.sum '%s' is out of range (%.6g ns)",
                 path, R->line, R->f[ct], dns);
      break;
    }
    k.end = (uint64_t)llround(dns);
    k.dur_ns = dns;
    k.has_dur = 1;
    if (!(k.name = strdup(R->f[cn])) || add_kernel(r, &kcap, &k)) {
      free(k.name);
      rc = nfail(err, cap, "%s: out of memory", path);
      break;
    }
    if (cdev >= 0 && !r->gpu.name[0]) snprintf(r->gpu.name, sizeof r->gpu.name, "%s", R->f[cdev]);
  }
  ct_free(&t);
  if (!rc && !r->nkernels) rc = nfail(err, cap, "%s: no profiled launches", path);
  if (rc) { prof_records_free(r); return -1; }
  number_launches(r);
  return 0;
}

/* ------------------------------------------------------ name comparison -- */

/* Source base name of an Itanium-mangled name ("_Z5saxpyifPKfPf" ->
   "saxpy"; last component of a nested name); 0 when not mangled. */
static int mangled_base(const char *m, char *buf, size_t cap) {
  const char *p = m;
  if (strncmp(p, "_Z", 2)) return 0;
  p += 2;
  int nested = *p == 'N';
  if (nested) {
    p++;
    while (*p == 'K' || *p == 'V' || *p == 'r') p++;
  }
  const char *last = NULL;
  size_t len = 0;
  while (isdigit((unsigned char)*p)) {
    char *e;
    unsigned long n = strtoul(p, &e, 10);
    if (n == 0 || strlen(e) < n) return 0;
    last = e;
    len = n;
    p = e + n;
    if (!nested || *p == 'I') break;
  }
  if (!last || len + 1 > cap) return 0;
  memcpy(buf, last, len);
  buf[len] = 0;
  return 1;
}

/* Base name of a demangled signature ("void ns::k<int>(float *, int)" ->
   "k"): the identifier before the parameter list, past template arguments
   and qualifiers. */
static int demangled_base(const char *d, char *buf, size_t cap) {
  const char *paren = strchr(d, '(');
  const char *e = paren ? paren : d + strlen(d);
  while (e > d && e[-1] == ' ') e--;
  if (e > d && e[-1] == '>') { /* skip template arguments */
    int depth = 0;
    while (e > d) {
      e--;
      if (*e == '>') depth++;
      else if (*e == '<' && --depth == 0) break;
    }
  }
  const char *s = e;
  while (s > d && (isalnum((unsigned char)s[-1]) || s[-1] == '_')) s--;
  if (s == e || (size_t)(e - s) + 1 > cap) return 0;
  memcpy(buf, s, (size_t)(e - s));
  buf[e - s] = 0;
  return 1;
}

int prof_kernel_names_match(const char *stored, const char *reported) {
  if (!strcmp(stored, reported)) return 1;
  char a[512], b[512];
  /* both mangled and different: different kernels */
  if (!strncmp(reported, "_Z", 2) && !strncmp(stored, "_Z", 2)) return 0;
  int ha = mangled_base(stored, a, sizeof a) || demangled_base(stored, a, sizeof a);
  int hb = mangled_base(reported, b, sizeof b) || demangled_base(reported, b, sizeof b);
  return ha && hb && !strcmp(a, b);
}
