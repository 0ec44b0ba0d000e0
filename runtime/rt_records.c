/*
 * rt_records.c -- the launch records file between the cudart replacement
 * (writer, inside the emulated program) and `kcast run` (reader, after the
 * program exited).  runtime/rt.h describes the lines.
 *
 * Why a file: the program may crash, be killed or time out; the dataset
 * must then stay as it was.  The library appends one complete line per
 * launch with a single write(); `kcast run` reads the file only after a
 * normal exit and stores everything in one transaction.  Values are printed
 * as integers when they are ones, else with %.17g, so doubles round-trip
 * exactly.
 */
#include "runtime/rt.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A growing line (one malloc'd string); len == SIZE_MAX after ENOMEM. */
typedef struct linebuf {
  char *p;
  size_t len, cap;
} linebuf;

static void put(linebuf *l, const char *s, size_t n) {
  if (l->len == SIZE_MAX) return;
  if (l->len + n + 1 > l->cap) {
    size_t nc = l->cap ? 2 * l->cap : 1024;
    while (nc < l->len + n + 1) nc *= 2;
    char *q = realloc(l->p, nc);
    if (!q) {
      free(l->p);
      l->p = NULL;
      l->len = SIZE_MAX;
      return;
    }
    l->p = q;
    l->cap = nc;
  }
  memcpy(l->p + l->len, s, n);
  l->len += n;
  l->p[l->len] = 0;
}

/* v as text that strtod reads back exactly: integers (most counts) in
   plain digits, the rest as %.17g.  printf's %.17g was a tenth of the time
   of a small launch under kcast run. */
static void put_num(linebuf *l, double v) {
  char d[40], *p = d + sizeof d;
  if (v == v && v >= -9007199254740992.0 && v <= 9007199254740992.0 && v == (double)(int64_t)v &&
      !(v == 0 && signbit(v))) {
    int64_t x = (int64_t)v;
    uint64_t u = x < 0 ? (uint64_t)0 - (uint64_t)x : (uint64_t)x;
    do *--p = (char)('0' + u % 10); while (u /= 10);
    if (x < 0) *--p = '-';
    put(l, p, (size_t)(d + sizeof d - p));
    return;
  }
  int n = snprintf(d, sizeof d, "%.17g", v);
  put(l, d, n > 0 ? (size_t)n : 0);
}

char *rt_records_launch_line(const rt_launch_rec *r) {
  linebuf l = {NULL, 0, 0};
  char head[512];
  int n = snprintf(head, sizeof head, "launch %" PRId64 " %u %u %u %u %u %u %" PRId64 " %d %" PRIu64
                   " %.17g ", r->lseq, r->grid[0], r->grid[1], r->grid[2], r->block[0],
                   r->block[1], r->block[2], r->shmem, r->sampled, r->insns, r->seconds);
  put(&l, head, n > 0 ? (size_t)n : 0);
  put(&l, r->kernel, strlen(r->kernel));
  for (size_t i = 0; i < r->feats.n; i++) {
    put(&l, " ", 1);
    put(&l, r->feats.names[i], strlen(r->feats.names[i]));
    put(&l, "=", 1);
    put_num(&l, r->feats.vals[i]);
  }
  put(&l, "\n", 1);
  return l.len == SIZE_MAX ? NULL : l.p;
}

/* "TAG LSEQ MESSAGE\n", the message's newlines made spaces. */
static char *note_line(const char *tag, int64_t lseq, const char *msg) {
  char *buf = NULL;
  if (asprintf(&buf, "%s %" PRId64 " %s\n", tag, lseq, msg) < 0) return NULL;
  for (char *p = buf; p[1]; p++)
    if (*p == '\n' || *p == '\r') *p = ' ';
  return buf;
}

char *rt_records_warn_line(int64_t lseq, const char *msg) { return note_line("warn", lseq, msg); }

char *rt_records_race_line(int64_t lseq, const char *msg) { return note_line("race", lseq, msg); }

char *rt_records_unsupported_line(const char *name, const char *msg) {
  char *buf = NULL;
  if (strpbrk(name, " \n\r") || asprintf(&buf, "unsupported %s %s\n", name, msg) < 0) return NULL;
  for (char *p = buf; p[1]; p++)
    if (*p == '\n' || *p == '\r') *p = ' ';
  return buf;
}

char *rt_records_error_line(int64_t lseq, const char *kernel, const char *msg) {
  char *buf = NULL;
  if (asprintf(&buf, "error %" PRId64 " %s %s\n", lseq, kernel, msg) < 0) return NULL;
  for (char *p = buf; p[1]; p++)
    if (*p == '\n' || *p == '\r') *p = ' ';
  return buf;
}

static void rec_free(rt_launch_rec *l) {
  free(l->kernel);
  free(l->error);
  free(l->warn);
  free(l->race);
  feat_free(&l->feats);
}

void rt_records_free(rt_records *r) {
  if (!r) return;
  for (size_t i = 0; i < r->n; i++) rec_free(&r->l[i]);
  free(r->l);
  for (size_t i = 0; i < r->nunsup; i++) free(r->unsup[i]);
  free(r->unsup);
  memset(r, 0, sizeof *r);
}

/* Next space-separated token of *s (NUL-terminated in place), or NULL. */
static char *tok(char **s) {
  char *p = *s;
  while (*p == ' ') p++;
  if (!*p) return NULL;
  char *q = strchr(p, ' ');
  if (q) {
    *q = 0;
    *s = q + 1;
  } else {
    *s = p + strlen(p);
  }
  return p;
}

static int num_u64(const char *t, uint64_t *v) {
  if (!t || !*t) return -1;
  char *end;
  errno = 0;
  unsigned long long x = strtoull(t, &end, 10);
  if (errno || *end || t[0] == '-') return -1;
  *v = x;
  return 0;
}

static int parse_launch(char *s, rt_launch_rec *l) {
  uint64_t v[11];
  for (int i = 0; i < 10; i++)
    if (num_u64(tok(&s), &v[i])) return -1;
  char *sec = tok(&s), *end;
  if (!sec) return -1;
  l->seconds = strtod(sec, &end);
  if (*end) return -1;
  char *k = tok(&s);
  if (!k) return -1;
  l->lseq = (int64_t)v[0];
  for (int i = 0; i < 3; i++) {
    if (v[1 + i] > UINT32_MAX || v[4 + i] > UINT32_MAX) return -1;
    l->grid[i] = (uint32_t)v[1 + i];
    l->block[i] = (uint32_t)v[4 + i];
  }
  l->shmem = (int64_t)v[7];
  l->sampled = v[8] != 0;
  l->insns = v[9];
  if (!(l->kernel = strdup(k))) return -1;
  char *f;
  while ((f = tok(&s))) {
    char *eq = strrchr(f, '=');
    if (!eq || eq == f) return -1;
    *eq = 0;
    double x = strtod(eq + 1, &end);
    if (*end || !eq[1]) return -1;
    if (feat_set(&l->feats, f, x)) return -1;
  }
  return 0;
}

/* "NAME MESSAGE" of an unsupported line into r->unsup as "NAME (MESSAGE)",
   unless NAME is there already (another process).  -1 when malformed or
   out of memory. */
static int add_unsupported(rt_records *r, char *s) {
  char *name = tok(&s);
  if (!name || !*s) return -1;
  size_t n = strlen(name);
  for (size_t i = 0; i < r->nunsup; i++)
    if (!strncmp(r->unsup[i], name, n) && r->unsup[i][n] == ' ') return 0;
  char **v = realloc(r->unsup, (r->nunsup + 1) * sizeof *v), *e = NULL;
  if (!v) return -1;
  r->unsup = v;
  if (asprintf(&e, "%s (%s)", name, s) < 0) return -1;
  r->unsup[r->nunsup++] = e;
  return 0;
}

int rt_records_read(const char *path, rt_records *r, char *err, size_t cap) {
  return rt_records_read_ex(path, r, 0, err, cap);
}

int rt_records_read_ex(const char *path, rt_records *r, unsigned flags, char *err, size_t cap) {
  memset(r, 0, sizeof *r);
  FILE *f = fopen(path, "r");
  if (!f) {
    snprintf(err, cap, "%s: %s", path, strerror(errno));
    return -1;
  }
  int rc = rt_records_read_file(f, path, r, flags, err, cap);
  fclose(f);
  return rc;
}

int rt_records_read_file(FILE *f, const char *path, rt_records *r, unsigned flags, char *err,
                         size_t cap) {
  memset(r, 0, sizeof *r);
  char *line = NULL;
  size_t lcap = 0, capl = 0;
  ssize_t n;
  unsigned long no = 0;
  int rc = 0;
  while ((n = getline(&line, &lcap, f)) > 0) {
    no++;
    if (line[n - 1] != '\n') {
      if (flags & RT_READ_TORN_OK) { /* the tail of a killed writer */
        r->torn = 1;
        break;
      }
      snprintf(err, cap, "%s:%lu: truncated record (the program was interrupted)", path, no);
      rc = -1;
      break;
    }
    line[n - 1] = 0;
    char *s = line, *tag = tok(&s);
    if (!tag) continue;
    if (!strcmp(tag, "kcast-run")) {
      char *ver = tok(&s);
      if (!ver || strcmp(ver, "1")) {
        snprintf(err, cap, "%s:%lu: unknown records version '%s' (this kcast reads 1)", path,
                 no, ver ? ver : "");
        rc = -1;
        break;
      }
      r->loaded++;
      continue;
    }
    if (!strcmp(tag, "unsupported")) { /* not a launch: a call kcast refused */
      if (add_unsupported(r, s) < 0) {
        snprintf(err, cap, "%s:%lu: malformed unsupported record", path, no);
        rc = -1;
        break;
      }
      continue;
    }
    int is_launch = !strcmp(tag, "launch"), is_error = !strcmp(tag, "error");
    if (!strcmp(tag, "warn") || !strcmp(tag, "race")) { /* belongs to the launch before it */
      uint64_t lseq;
      rt_launch_rec *last = r->n ? &r->l[r->n - 1] : NULL;
      char **note = last ? (tag[0] == 'w' ? &last->warn : &last->race) : NULL;
      if (num_u64(tok(&s), &lseq) || !last || last->lseq != (int64_t)lseq || last->error ||
          *note || !(*note = strdup(s))) {
        snprintf(err, cap, "%s:%lu: malformed %s record", path, no, tag);
        rc = -1;
        break;
      }
      continue;
    }
    if (!is_launch && !is_error) {
      snprintf(err, cap, "%s:%lu: unknown record '%s'", path, no, tag);
      rc = -1;
      break;
    }
    if (r->n == capl) {
      size_t nc = capl ? capl * 2 : 16;
      rt_launch_rec *nl = realloc(r->l, nc * sizeof *nl);
      if (!nl) {
        snprintf(err, cap, "%s: out of memory", path);
        rc = -1;
        break;
      }
      r->l = nl;
      capl = nc;
    }
    rt_launch_rec *l = &r->l[r->n++];
    memset(l, 0, sizeof *l);
    feat_init(&l->feats);
    int bad;
    if (is_launch) {
      bad = parse_launch(s, l);
    } else {
      uint64_t lseq;
      char *k;
      bad = num_u64(tok(&s), &lseq) || !(k = tok(&s));
      if (!bad) {
        l->lseq = (int64_t)lseq;
        bad = !(l->kernel = strdup(k)) || !(l->error = strdup(s));
      }
    }
    if (bad) {
      snprintf(err, cap, "%s:%lu: malformed %s record", path, no, tag);
      rc = -1;
      break;
    }
  }
  if (!rc && ferror(f)) {
    snprintf(err, cap, "%s: read error: %s", path, strerror(errno));
    rc = -1;
  }
  free(line);
  if (rc) rt_records_free(r);
  return rc;
}
