/*
 * rf_data.c -- the dense data matrix the forest trains on and its CSV
 * loader (libcsv).
 *
 * Why column-major: training scans one feature over the rows of a node
 * (binning, extra-trees min/max, partitions), so a column is contiguous.
 * Prediction takes rows; rf_predict_batch gathers them.
 *
 * CSV rules (docs/formats.md repeats them for users): the first record names
 * the columns; names must be unique (checked through a hash of the names, so
 * a header of 200,000 columns costs what it reads); a UTF-8 byte-order mark
 * before it is not part of the first name; a NUL byte in any cell is an
 * error (strtod would stop there and read "1\0x" as 1).  The target column (opts.target) becomes
 * y, the group column (opts.group) stays a string per row and is never a
 * feature, columns listed in opts.ignore are skipped unparsed; every other
 * column is a feature and each of its cells must be a finite number.  The
 * loader streams: a record is parsed into doubles as soon as libcsv hands it
 * over, so a 200,000 x 100 file never exists as strings in memory.
 */
#include "model/rf_int.h"

#include <csv.h>
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *rf_unit_canonical(const char *u) {
  static const char *const units[] = {"ns", "us", "ms", "s", "W", "mW", "J", "mJ"};
  if (!u) return NULL;
  if (!strcasecmp(u, "sec")) return "s";
  for (size_t k = 0; k < sizeof units / sizeof *units; k++)
    if (!strcmp(u, units[k])) return units[k];
  /* W and J are written either way; mW/mJ and ms/ns differ only in case
     for the prefix, so those must be as written */
  if (!strcasecmp(u, "w")) return "W";
  if (!strcasecmp(u, "j")) return "J";
  if (!strcmp(u, "mw")) return "mW";
  if (!strcmp(u, "mj")) return "mJ";
  return NULL;
}

const char *rf_target_unit(const char *target) {
  if (!target) return NULL;
  if (!strcmp(target, "time")) return "ns";
  if (!strcmp(target, "power")) return "W";
  if (!strcmp(target, "energy")) return "J";
  /* a part of the name after the first: time_ms_median, time_ns@T4 */
  const char *p = target + strcspn(target, "_@.-");
  while (*p) {
    p++;
    size_t n = strcspn(p, "_@.-");
    char part[8];
    if (n && n < sizeof part) {
      memcpy(part, p, n);
      part[n] = 0;
      for (size_t k = 0; k < n; k++)
        if (part[k] >= 'A' && part[k] <= 'Z') part[k] = (char)(part[k] - 'A' + 'a');
      const char *u = rf_unit_canonical(part);
      if (u) return u;
    }
    p += n;
    /* what follows '@' is a GPU's name, not a unit */
    if (*p == '@') break;
  }
  return NULL;
}

/* What a unit measures and its size in the dimension's base unit. */
static int unit_dim(const char *u, double *size) {
  static const struct { const char *u; int dim; double size; } units[] = {
      {"ns", 0, 1e-9}, {"us", 0, 1e-6}, {"ms", 0, 1e-3}, {"s", 0, 1},
      {"W", 1, 1},     {"mW", 1, 1e-3}, {"J", 2, 1},     {"mJ", 2, 1e-3}};
  const char *c = rf_unit_canonical(u);
  for (size_t k = 0; c && k < sizeof units / sizeof *units; k++)
    if (!strcmp(c, units[k].u)) {
      *size = units[k].size;
      return units[k].dim;
    }
  return -1;
}

int rf_unit_factor(const char *from, const char *to, double *factor) {
  double a, b;
  int da = unit_dim(from, &a), db = unit_dim(to, &b);
  if (da < 0 || db < 0 || da != db)
    return rf__err("'%s' and '%s' are not units of one quantity", from ? from : "",
                   to ? to : "");
  *factor = a / b;
  return 0;
}

const char *rf_column_gpu(const char *column) {
  const char *at = column ? strchr(column, '@') : NULL;
  return at && at > column && at[1] ? at + 1 : NULL;
}

int rf_data_alloc(rf_data *d, size_t n_rows, size_t n_cols, int with_y) {
  memset(d, 0, sizeof *d);
  d->n_rows = n_rows;
  d->n_cols = n_cols;
  if (n_cols && n_rows > SIZE_MAX / n_cols) return rf__err("matrix too large");
  d->x = rf__calloc((n_rows * n_cols) > 0 ? n_rows * n_cols : 1, sizeof(double));
  d->names = rf__calloc(n_cols ? n_cols : 1, sizeof(char *));
  if (with_y) d->y = rf__calloc(n_rows ? n_rows : 1, sizeof(double));
  if (!d->x || !d->names || (with_y && !d->y)) {
    rf_data_free(d);
    return rf__nomem();
  }
  return 0;
}

static void free_strv(char **v, size_t n) {
  if (!v) return;
  for (size_t i = 0; i < n; i++) rf__free(v[i]);
  rf__free(v);
}

void rf_data_free(rf_data *d) {
  if (!d) return;
  rf__free(d->x);
  rf__free(d->y);
  free_strv(d->names, d->n_cols);
  free_strv(d->groups, d->n_rows);
  free_strv(d->extra, d->n_extra);
  for (size_t k = 0; k < d->n_text; k++) free_strv(d->text ? d->text[k] : NULL, d->n_rows);
  rf__free(d->text);
  free_strv(d->text_names, d->n_text);
  rf__free(d->text_auto);
  rf__free(d->target);
  rf__free(d->group_name);
  memset(d, 0, sizeof *d);
}

int rf_data_check_finite(const rf_data *d, const char *src) {
  for (size_t j = 0; j < d->n_cols; j++)
    for (size_t i = 0; i < d->n_rows; i++)
      if (!isfinite(d->x[j * d->n_rows + i]))
        return rf__err("%s: row %zu: column %s: value %g is not finite", src, i + 1,
                       d->names[j], d->x[j * d->n_rows + i]);
  if (d->y)
    for (size_t i = 0; i < d->n_rows; i++)
      if (!isfinite(d->y[i]))
        return rf__err("%s: row %zu: target %s: value %g is not finite", src, i + 1,
                       d->target ? d->target : "y", d->y[i]);
  return 0;
}

/* ------------------------------------------------------------ CSV loader -- */

/* Column roles: a feature slot >= 0, or one of these; text column k is
   ROLE_TEXT0 - k. */
enum { ROLE_SKIP = -1, ROLE_TARGET = -2, ROLE_GROUP = -3, ROLE_TEXT0 = -10 };

/* One kept string column. */
typedef struct tcol {
  int hdr;           /* header index */
  int is_auto;       /* kept because its first cell was not a number */
  char **v;          /* per row (grown with the rows) */
  char *cur;         /* current record's value */
} tcol;

typedef struct loader {
  const char *path;
  const rf_csv_opts *o;
  int failed;             /* first error recorded; later callbacks do nothing */
  size_t rec;             /* current record (0 = header) */
  size_t field;           /* field index within the record */
  /* header */
  char **hdr;
  size_t n_hdr, cap_hdr;
  uint32_t *hidx;         /* open-addressing index of hdr: column + 1, 0 = empty */
  size_t hcap;            /* slots, a power of two >= 2 n_hdr */
  int *role;              /* per header column: feature slot >= 0 or ROLE_* */
  size_t n_feat;
  /* rows */
  double *rows;           /* row-major n_feat per row */
  double *y;
  char **groups;
  size_t n_rows, cap_rows;
  double *cur;            /* current row's feature slots (n_feat) */
  double cur_y;
  char *cur_group;
  tcol *tc;               /* kept string columns */
  size_t n_tc;
  unsigned char *dead;    /* per feature slot: its column turned out to be
                             text (text_auto), dropped at the end */
} loader;

static void lfail_nomem(loader *L) {
  if (!L->failed) rf__nomem();
  L->failed = 1;
}

static int parse_num(const char *s, size_t len, double *out) {
  char buf[128];
  if (len == 0 || len >= sizeof buf) return -1;
  memcpy(buf, s, len);
  buf[len] = 0;
  char *end;
  errno = 0;
  double v = strtod(buf, &end);
  if (end == buf) return -1;
  while (*end == ' ' || *end == '\t' || *end == '\r') end++;
  if (*end) return -1;
  *out = v;
  return 0;
}

static void cell_error(loader *L, const char *s, size_t len, const char *what) {
  int shown = len > 40 ? 40 : (int)len;
  rf__err("%s:%zu: column %s: '%.*s%s' %s", L->path, L->rec + 1, L->hdr[L->field], shown, s,
          len > 40 ? "..." : "", what);
  L->failed = 1;
}

static void on_field(void *s, size_t len, void *ctx) {
  loader *L = ctx;
  if (L->failed) return;
  if (memchr(s, 0, len)) {
    if (L->rec == 0 || L->field >= L->n_hdr)
      rf__err("%s:%zu: field %zu holds a NUL byte (not a text file?)", L->path, L->rec + 1,
              (L->rec == 0 ? L->n_hdr : L->field) + 1);
    else
      rf__err("%s:%zu: column %s: the cell holds a NUL byte (not a text file?)", L->path,
              L->rec + 1, L->hdr[L->field]);
    L->failed = 1;
    return;
  }
  if (L->rec == 0) {
    if (L->n_hdr == L->cap_hdr) {
      size_t nc = L->cap_hdr ? L->cap_hdr * 2 : 32;
      char **t = rf__realloc(L->hdr, nc * sizeof *t);
      if (!t) return lfail_nomem(L);
      L->hdr = t;
      L->cap_hdr = nc;
    }
    char *name = rf__malloc(len + 1);
    if (!name) return lfail_nomem(L);
    memcpy(name, s, len);
    name[len] = 0;
    L->hdr[L->n_hdr++] = name;
    return;
  }
  size_t f = L->field++;
  if (f >= L->n_hdr) return; /* counted; reported at end of record */
  int role = L->role[f];
  for (size_t k = 0; k < L->n_tc; k++) /* a kept string column (maybe also the group) */
    if (L->tc[k].hdr == (int)f) {
      rf__free(L->tc[k].cur);
      if (!(L->tc[k].cur = rf__malloc(len + 1))) return lfail_nomem(L);
      memcpy(L->tc[k].cur, s, len);
      L->tc[k].cur[len] = 0;
    }
  if (role == ROLE_SKIP || role <= ROLE_TEXT0) return;
  if (role == ROLE_GROUP) {
    rf__free(L->cur_group);
    L->cur_group = rf__malloc(len + 1);
    if (!L->cur_group) return lfail_nomem(L);
    memcpy(L->cur_group, s, len);
    L->cur_group[len] = 0;
    return;
  }
  double v;
  L->field = f; /* for the message */
  if (len == 0 && L->o->empty_value && role >= 0 && !isnan(v = L->o->empty_value(L->hdr[f]))) {
    L->field = f + 1;
    L->cur[role] = v;
    return;
  }
  if (len == 0 && role >= 0 && L->o->empty_missing) {
    L->field = f + 1;
    L->cur[role] = NAN;
    return;
  }
  if (parse_num(s, len, &v) && role >= 0 && L->rec == 1 && L->o->text_auto) {
    /* the first data cell of this column is not a number: a text column */
    tcol *t = rf__realloc(L->tc, (L->n_tc + 1) * sizeof *t);
    if (!t) return lfail_nomem(L);
    L->tc = t;
    memset(&L->tc[L->n_tc], 0, sizeof *L->tc);
    L->tc[L->n_tc].hdr = (int)f;
    L->tc[L->n_tc].is_auto = 1;
    if (!(L->tc[L->n_tc].cur = rf__malloc(len + 1))) return lfail_nomem(L);
    memcpy(L->tc[L->n_tc].cur, s, len);
    L->tc[L->n_tc].cur[len] = 0;
    L->n_tc++;
    L->dead[role] = 1;
    L->role[f] = ROLE_TEXT0;
    L->field = f + 1;
    return;
  }
  if (parse_num(s, len, &v)) return cell_error(L, s, len, "is not a number");
  if (!isfinite(v)) return cell_error(L, s, len, "is not a finite number (NaN and infinities are refused)");
  L->field = f + 1;
  if (role == ROLE_TARGET) L->cur_y = v;
  else L->cur[role] = v;
}

/* Does item p[0..l) of a column list (a name or a shell pattern) match
   name? */
static int item_matches(const char *p, size_t l, const char *name) {
  char pat[256];
  if (l >= sizeof pat) return 0;
  memcpy(pat, p, l);
  pat[l] = 0;
  return !fnmatch(pat, name, 0);
}

static int in_list(const char *list, const char *name) {
  if (!list) return 0;
  for (const char *p = list; *p;) {
    const char *e = strchr(p, ',');
    size_t l = e ? (size_t)(e - p) : strlen(p);
    if (l && item_matches(p, l, name)) return 1;
    if (!e) break;
    p = e + 1;
  }
  return 0;
}

/* Every item of list matches some header column; else an error naming the
   first that does not (what: "ignore", "text"). */
static int check_list(loader *L, const char *list, const char *what) {
  for (const char *p = list; p && *p;) {
    const char *e = strchr(p, ',');
    size_t l = e ? (size_t)(e - p) : strlen(p);
    int found = 0;
    for (size_t i = 0; i < L->n_hdr && !found; i++) found = item_matches(p, l, L->hdr[i]);
    if (!found && l) {
      rf__err("%s:1: no column matches '%.*s' (in the %s list)", L->path, (int)l, p, what);
      L->failed = 1;
      return -1;
    }
    if (!e) break;
    p = e + 1;
  }
  return 0;
}

static int add_tcol(loader *L, int hdr) {
  for (size_t k = 0; k < L->n_tc; k++)
    if (L->tc[k].hdr == hdr) return 0;
  tcol *t = rf__realloc(L->tc, (L->n_tc + 1) * sizeof *t);
  if (!t) { lfail_nomem(L); return -1; }
  L->tc = t;
  memset(&L->tc[L->n_tc], 0, sizeof *L->tc);
  L->tc[L->n_tc++].hdr = hdr;
  return 0;
}

static uint64_t name_hash(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  return h;
}

/* Column of name, or -1 (through the index hdr_index made). */
static int hdr_find(const loader *L, const char *name) {
  if (!L->hidx) return -1;
  size_t n = strlen(name);
  for (size_t h = name_hash(name, n) & (L->hcap - 1);; h = (h + 1) & (L->hcap - 1)) {
    uint32_t v = L->hidx[h];
    if (!v) return -1;
    if (!strcmp(L->hdr[v - 1], name)) return (int)(v - 1);
  }
}

/* Index the header; the first repeated name is an error. */
static int hdr_index(loader *L) {
  if (L->n_hdr > UINT32_MAX / 4) return rf__err("%s:1: too many columns", L->path);
  size_t cap = 16;
  while (cap < 2 * L->n_hdr) cap *= 2;
  L->hidx = rf__calloc(cap, sizeof *L->hidx);
  if (!L->hidx) return rf__nomem();
  L->hcap = cap;
  for (size_t i = 0; i < L->n_hdr; i++) {
    size_t h = name_hash(L->hdr[i], strlen(L->hdr[i])) & (cap - 1);
    for (; L->hidx[h]; h = (h + 1) & (cap - 1))
      if (!strcmp(L->hdr[L->hidx[h] - 1], L->hdr[i]))
        return rf__err("%s:1: column '%s' appears twice", L->path, L->hdr[i]);
    L->hidx[h] = (uint32_t)i + 1;
  }
  return 0;
}

/* Decide each column's role once the header is complete. */
static void resolve_header(loader *L) {
  const rf_csv_opts *o = L->o;
  if (L->n_hdr == 0) {
    rf__err("%s:1: empty header", L->path);
    L->failed = 1;
    return;
  }
  if (hdr_index(L)) {
    L->failed = 1;
    return;
  }
  L->role = rf__mallocn(L->n_hdr, sizeof *L->role);
  if (!L->role) return lfail_nomem(L);
  for (size_t i = 0; i < L->n_hdr; i++) L->role[i] = ROLE_SKIP;
  if (o->target && !o->no_target) {
    int t = hdr_find(L, o->target);
    if (t < 0) {
      rf__err("%s:1: no column '%s' (the target)", L->path, o->target);
      L->failed = 1;
      return;
    }
    L->role[t] = ROLE_TARGET;
  }
  if (o->group) {
    int g = hdr_find(L, o->group);
    if (g < 0) {
      rf__err("%s:1: no column '%s' (the group)", L->path, o->group);
      L->failed = 1;
      return;
    }
    if (L->role[g] == ROLE_TARGET) {
      rf__err("%s:1: column '%s' cannot be both target and group", L->path, o->group);
      L->failed = 1;
      return;
    }
    L->role[g] = ROLE_GROUP;
  }
  if (check_list(L, o->ignore, "ignore") || check_list(L, o->text, "text")) return;
  for (size_t i = 0; i < L->n_hdr; i++) {
    int keep = in_list(o->text, L->hdr[i]) || (o->text_ignored && in_list(o->ignore, L->hdr[i]));
    if (!keep) continue;
    if (L->role[i] == ROLE_TARGET) {
      rf__err("%s:1: column '%s' cannot be both target and text", L->path, L->hdr[i]);
      L->failed = 1;
      return;
    }
    if (add_tcol(L, (int)i)) return;
    if (L->role[i] == ROLE_SKIP) L->role[i] = ROLE_TEXT0;
  }
  L->n_feat = 0;
  if (o->keep) {
    for (size_t k = 0; k < o->n_keep; k++) {
      int c = hdr_find(L, o->keep[k]);
      if (c < 0) {
        rf__err("%s:1: missing feature column '%s'", L->path, o->keep[k]);
        L->failed = 1;
        return;
      }
      if (L->role[c] != ROLE_SKIP && L->role[c] > ROLE_TEXT0) {
        rf__err("%s:1: column '%s' is listed twice or is also the target or group", L->path,
                o->keep[k]);
        L->failed = 1;
        return;
      }
      L->role[c] = (int)k;
    }
    L->n_feat = o->n_keep;
  } else {
    for (size_t i = 0; i < L->n_hdr; i++)
      if (L->role[i] == ROLE_SKIP && !in_list(o->ignore, L->hdr[i])) L->role[i] = (int)L->n_feat++;
  }
  if (L->n_feat == 0) {
    rf__err("%s:1: no feature columns", L->path);
    L->failed = 1;
    return;
  }
  L->cur = rf__calloc(L->n_feat, sizeof(double));
  L->dead = rf__calloc(L->n_feat, 1);
  if (!L->cur || !L->dead) lfail_nomem(L);
}

static void on_record(int c, void *ctx) {
  loader *L = ctx;
  (void)c;
  if (L->failed) return;
  if (L->rec == 0) {
    resolve_header(L);
    L->rec++;
    L->field = 0;
    return;
  }
  if (L->field != L->n_hdr) {
    rf__err("%s:%zu: %zu fields, the header has %zu", L->path, L->rec + 1, L->field, L->n_hdr);
    L->failed = 1;
    return;
  }
  if (L->n_rows == L->cap_rows) {
    size_t nc = L->cap_rows ? L->cap_rows * 2 : 1024;
    double *r = rf__realloc(L->rows, nc * L->n_feat * sizeof(double));
    if (!r) return lfail_nomem(L);
    L->rows = r;
    double *y = rf__realloc(L->y, nc * sizeof(double));
    if (!y) return lfail_nomem(L);
    L->y = y;
    if (L->o->group) {
      char **g = rf__realloc(L->groups, nc * sizeof(char *));
      if (!g) return lfail_nomem(L);
      L->groups = g;
    }
    for (size_t k = 0; k < L->n_tc; k++) {
      char **v = rf__realloc(L->tc[k].v, nc * sizeof(char *));
      if (!v) return lfail_nomem(L);
      L->tc[k].v = v;
    }
    L->cap_rows = nc;
  }
  for (size_t k = 0; k < L->n_tc; k++) {
    L->tc[k].v[L->n_rows] = L->tc[k].cur ? L->tc[k].cur : rf__strdup("");
    L->tc[k].cur = NULL;
    if (!L->tc[k].v[L->n_rows]) return lfail_nomem(L);
  }
  memcpy(L->rows + L->n_rows * L->n_feat, L->cur, L->n_feat * sizeof(double));
  L->y[L->n_rows] = L->cur_y;
  if (L->o->group) {
    L->groups[L->n_rows] = L->cur_group;
    L->cur_group = NULL;
  }
  L->n_rows++;
  L->rec++;
  L->field = 0;
}

static int add_extra(rf_data *d, const char *name) {
  char **t = rf__realloc(d->extra, (d->n_extra + 1) * sizeof *t);
  if (!t) return rf__nomem();
  d->extra = t;
  if (!(d->extra[d->n_extra] = rf__strdup(name))) return rf__nomem();
  d->n_extra++;
  return 0;
}

/* Move constant feature columns to d->extra. */
static int drop_constant(rf_data *d) {
  size_t w = 0;
  for (size_t j = 0; j < d->n_cols; j++) {
    const double *c = d->x + j * d->n_rows;
    int constant = 1;
    for (size_t i = 1; i < d->n_rows && constant; i++) constant = c[i] == c[0];
    if (constant) {
      if (add_extra(d, d->names[j])) return -1;
      rf__free(d->names[j]);
      continue;
    }
    if (w != j) memmove(d->x + w * d->n_rows, c, d->n_rows * sizeof(double));
    d->names[w++] = d->names[j];
  }
  d->n_cols = w;
  if (w == 0) return rf__err("every feature column is constant");
  return 0;
}

static void loader_free(loader *L) {
  free_strv(L->hdr, L->n_hdr);
  rf__free(L->hidx);
  rf__free(L->role);
  rf__free(L->rows);
  rf__free(L->y);
  free_strv(L->groups, L->n_rows);
  rf__free(L->cur);
  rf__free(L->cur_group);
  for (size_t k = 0; k < L->n_tc; k++) {
    free_strv(L->tc[k].v, L->n_rows);
    rf__free(L->tc[k].cur);
  }
  rf__free(L->tc);
  rf__free(L->dead);
}

int rf_data_load_csv(rf_data *d, const char *path, const rf_csv_opts *o) {
  memset(d, 0, sizeof *d);
  if (!o || o->size < sizeof(rf_csv_opts)) return rf__err("rf_data_load_csv: bad options");
  if (!o->no_target && !o->target) return rf__err("%s: no target column given", path);
  FILE *fp = fopen(path, "rb");
  if (!fp) return rf__err("%s: %s", path, strerror(errno));
  loader L = {.path = path, .o = o};
  struct csv_parser p;
  if (csv_init(&p, CSV_APPEND_NULL) != 0) {
    fclose(fp);
    return rf__nomem();
  }
  char buf[65536];
  size_t n;
  int rc = 0, first = 1;
  while (!L.failed && (n = fread(buf, 1, sizeof buf, fp)) > 0) {
    size_t skip = 0;
    if (first && n >= 3 && !memcmp(buf, "\xEF\xBB\xBF", 3)) skip = 3; /* UTF-8 BOM */
    first = 0;
    if (csv_parse(&p, buf + skip, n - skip, on_field, on_record, &L) != n - skip) {
      rf__err("%s:%zu: CSV syntax error: %s", path, L.rec + 1, csv_strerror(csv_error(&p)));
      L.failed = 1;
    }
  }
  if (!L.failed && ferror(fp)) {
    rf__err("%s: read error", path);
    L.failed = 1;
  }
  if (!L.failed) csv_fini(&p, on_field, on_record, &L);
  csv_free(&p);
  fclose(fp);
  if (L.failed) goto fail;
  if (L.rec == 0) {
    rf__err("%s: empty file (no header)", path);
    goto fail;
  }
  if (L.n_rows == 0) {
    rf__err("%s: no data rows", path);
    goto fail;
  }
  if (L.n_rows == 1 && !o->no_target) {
    rf__err("%s: only one data row; at least 2 are needed", path);
    goto fail;
  }
  /* live feature slots, in order: slot -> output column */
  size_t n_live = 0;
  long *col_of = rf__mallocn(L.n_feat ? L.n_feat : 1, sizeof(long));
  if (!col_of) goto nomem_l;
  for (size_t j = 0; j < L.n_feat; j++) col_of[j] = L.dead[j] ? -1 : (long)n_live++;
  if (!n_live) {
    rf__free(col_of);
    rf__err("%s:1: no feature columns (every other column holds text)", path);
    goto fail;
  }
  if (rf_data_alloc(d, L.n_rows, n_live, !o->no_target)) { rf__free(col_of); goto fail; }
  for (size_t i = 0; i < L.n_rows; i++)
    for (size_t j = 0; j < L.n_feat; j++)
      if (col_of[j] >= 0) d->x[(size_t)col_of[j] * L.n_rows + i] = L.rows[i * L.n_feat + j];
  if (d->y) memcpy(d->y, L.y, L.n_rows * sizeof(double));
  for (size_t i = 0; i < L.n_hdr; i++) {
    int r = L.role[i];
    if (r >= 0 && col_of[r] >= 0 && !d->names[col_of[r]]) {
      if (!(d->names[col_of[r]] = rf__strdup(L.hdr[i]))) { rf__free(col_of); goto nomem; }
    } else if (r == ROLE_SKIP) {
      if (add_extra(d, L.hdr[i])) { rf__free(col_of); goto fail_d; }
    }
  }
  rf__free(col_of);
  if (L.n_tc) {
    d->text = rf__calloc(L.n_tc, sizeof(char **));
    d->text_names = rf__calloc(L.n_tc, sizeof(char *));
    d->text_auto = rf__calloc(L.n_tc, 1);
    if (!d->text || !d->text_names || !d->text_auto) goto nomem;
    d->n_text = L.n_tc;
    for (size_t k = 0; k < L.n_tc; k++) {
      d->text[k] = L.tc[k].v;
      L.tc[k].v = NULL;
      d->text_auto[k] = (unsigned char)L.tc[k].is_auto;
      if (!(d->text_names[k] = rf__strdup(L.hdr[L.tc[k].hdr]))) goto nomem;
    }
  }
  if (!o->no_target && !(d->target = rf__strdup(o->target))) goto nomem;
  if (o->group) {
    if (!(d->group_name = rf__strdup(o->group))) goto nomem;
    d->groups = L.groups;
    L.groups = NULL;
  }
  if (o->drop_constant && drop_constant(d)) goto fail_d;
  loader_free(&L);
  return rc;
nomem:
  rf__nomem();
fail_d:
  if (0) {
  nomem_l:
    rf__nomem();
    goto fail;
  }
  rf_data_free(d);
fail:
  loader_free(&L);
  return -1;
}

long rf_data_text_col(const rf_data *d, const char *name) {
  for (size_t k = 0; d && name && k < d->n_text; k++)
    if (!strcmp(d->text_names[k], name)) return (long)k;
  return -1;
}
