/*
 * ds_kerneltuner.c -- read a Kernel Tuner cachefile (ds_kt_read in ds.h;
 * docs/formats.md, "Kernel Tuner cachefiles").
 *
 * Kernel Tuner records every configuration it benchmarks in one JSON
 * object:
 *
 *   { "device_name": "NVIDIA A100-PCIE-40GB", "kernel_name": "conv",
 *     "problem_size": [4096, 4096], "tune_params_keys": ["bx", "by"],
 *     "tune_params": {...}, "objective": "time",
 *     "cache": { "16,1": {"bx": 16, "by": 1, "time": 3.87,
 *                         "times": [3.97, 3.87, ...], ...},
 *                "32,16": {"bx": 32, "by": 16, "time": "RuntimeFailedConfig"},
 *                ... } }
 *
 * `time` is the mean of `times`, both in milliseconds; a configuration
 * that failed holds a string instead (InvalidConfig, CompileFailedConfig,
 * RuntimeFailedConfig).  Kernel Tuner appends entries to the file while it
 * tunes and writes the closing braces last, so a run that was interrupted
 * leaves the object unterminated: such a file is read up to its last
 * complete entry and marked (ds_kt_file.unterminated).
 *
 * The reader only reads: the file (plain or gzip, through zlib's gzread,
 * which passes plain bytes through) is parsed whole with cJSON, then every
 * entry is checked and copied into plain arrays, so the importer never
 * touches JSON.  Errors name the file and the place: "FILE:LINE:COL: ..."
 * for JSON syntax, "FILE: cache entry 'KEY': ..." for a bad entry.
 *
 * What reaches the compiler is checked here, once: a parameter name must be
 * a C identifier and a value a one-line token of what Kernel Tuner accepts
 * (a number, an identifier, a simple expression of them), because each
 * becomes a `#define NAME VALUE` line; a newline, a backslash, a quote, a
 * `#`, a comment or unbalanced parentheses would make it another
 * preprocessor line (an #include of any file) or comment out the source.
 * A configuration key that appears twice is refused (its geometry would
 * come from one entry and its times from the other).
 *
 * Memory.  A gzip file is small on disk and may be huge inside, and cJSON
 * takes about 64 bytes per JSON value on top of the text: "[0,0,0,..."
 * needs 32 times its size.  The decompressed text is therefore read under
 * a limit on what text and parse together would take (counted as the text
 * arrives: every value opened by '[', '{' or ',' is one node), 1 GiB by
 * default (ds_kt_set_memory_limit); an allocation that fails is reported
 * as "out of memory", never as bad JSON.
 */
#include "datasets/ds.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <zlib.h>

/* Largest integer a double holds exactly. */
#define KT_EXACT_INT 9007199254740992.0
/* Default limit of text plus parse (ds_kt_set_memory_limit). */
#define KT_MEMORY_DEFAULT ((size_t)1 << 30)
/* What cJSON takes per value (the node) beyond the text of its strings. */
#define KT_NODE_BYTES (sizeof(cJSON) + 16)
/* The longest parameter value taken (a #define's text). */
#define KT_VALUE_MAX 256

static size_t kt_memory_limit = KT_MEMORY_DEFAULT;

void ds_kt_set_memory_limit(size_t bytes) {
  kt_memory_limit = bytes ? bytes : KT_MEMORY_DEFAULT;
}

/* cJSON's allocations, so that a failed one is told from bad JSON: the
   hooks are the C library's, counting failures per thread. */
static _Thread_local int kt_oom;
static void *kt_malloc(size_t n) {
  void *p = malloc(n);
  if (!p) kt_oom = 1;
  return p;
}
static pthread_once_t kt_hooks_once = PTHREAD_ONCE_INIT;
static void kt_hooks(void) {
  cJSON_Hooks h = {kt_malloc, free};
  cJSON_InitHooks(&h);
}

static int kt_fail(char *err, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int kt_fail(char *err, size_t cap, const char *fmt, ...) {
  if (err && cap) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
  }
  return -1;
}

/* Nodes cJSON will make for text[0..n): one per value opened by '[', '{'
   or ',' (an upper bound: a ',' inside a string counts too). */
static size_t count_nodes(const char *t, size_t n) {
  size_t c = 0;
  for (size_t i = 0; i < n; i++) c += t[i] == '[' || t[i] == '{' || t[i] == ',';
  return c;
}

/* The memory the parse of n bytes holding nodes values takes with the
   text: the text, the nodes and (at most) a copy of the text's strings. */
static double parse_bytes(size_t n, size_t nodes) {
  return 2.0 * (double)n + (double)nodes * (double)KT_NODE_BYTES;
}

/* The whole (decompressed) file, NUL-terminated, refused past the memory
   limit. */
static int read_gz(const char *path, char **out, size_t *len, char *err, size_t cap) {
  errno = 0;
  gzFile g = gzopen(path, "rb");
  if (!g) {
    if (errno == ENOMEM) return kt_fail(err, cap, "%s: out of memory", path);
    return kt_fail(err, cap, "%s: %s", path, strerror(errno ? errno : ENOENT));
  }
  size_t n = 0, sz = 1 << 16, nodes = 0;
  char *buf = malloc(sz);
  if (!buf) { gzclose(g); return kt_fail(err, cap, "%s: out of memory", path); }
  for (;;) {
    if (sz - n < 2) {
      char *nb = realloc(buf, sz * 2);
      if (!nb) { free(buf); gzclose(g); return kt_fail(err, cap, "%s: out of memory", path); }
      buf = nb;
      sz *= 2;
    }
    size_t want = sz - n - 1;
    if (want > (1u << 24)) want = 1u << 24;
    int r = gzread(g, buf + n, (unsigned)want);
    if (r < 0) {
      int zerr = 0;
      const char *m = gzerror(g, &zerr);
      if (zerr == Z_MEM_ERROR) kt_fail(err, cap, "%s: out of memory", path);
      else kt_fail(err, cap, "%s: cannot read: %s", path, zerr == Z_ERRNO ? strerror(errno) : m);
      free(buf);
      gzclose(g);
      return -1;
    }
    if (r == 0) break;
    nodes += count_nodes(buf + n, (size_t)r);
    n += (size_t)r;
    if (parse_bytes(n, nodes) > (double)kt_memory_limit) {
      kt_fail(err, cap, "%s: too large: parsing its JSON would take more than the %zu MiB "
              "limit (%zu bytes%s read when refused)", path, kt_memory_limit >> 20, n,
              gzdirect(g) ? "" : " decompressed");
      free(buf);
      gzclose(g);
      return -1;
    }
  }
  gzclose(g);
  buf[n] = 0;
  *out = buf;
  *len = n;
  return 0;
}

/* Line and column (1-based) of byte offset off in text. */
static void line_col(const char *text, size_t off, long *line, long *col) {
  *line = 1;
  *col = 1;
  for (size_t i = 0; i < off && text[i]; i++) {
    if (text[i] == '\n') { (*line)++; *col = 1; } else (*col)++;
  }
}

/* A parameter value as the text a #define gets: integers without a
   fraction, other numbers with the fewest digits that read back, strings
   as they are, true/false as 1/0.  NULL for anything else. */
static char *value_text(const cJSON *v) {
  char buf[64];
  if (cJSON_IsBool(v)) return strdup(cJSON_IsTrue(v) ? "1" : "0");
  if (cJSON_IsString(v)) return strdup(v->valuestring);
  if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)) return NULL;
  double x = v->valuedouble;
  if (x == floor(x) && fabs(x) < KT_EXACT_INT) {
    snprintf(buf, sizeof buf, "%lld", (long long)x);
  } else {
    for (int prec = 15; prec <= 17; prec++) {
      snprintf(buf, sizeof buf, "%.*g", prec, x);
      if (strtod(buf, NULL) == x) break;
    }
  }
  return strdup(buf);
}

void ds_kt_free(ds_kt_file *f) {
  if (!f) return;
  for (size_t i = 0; i < f->nconfigs; i++) {
    ds_kt_config *c = &f->configs[i];
    free(c->key);
    for (size_t j = 0; c->values && j < f->nparams; j++) free(c->values[j]);
    free(c->values);
    free(c->times_ms);
    free(c->failed);
  }
  free(f->configs);
  for (size_t j = 0; j < f->nparams; j++) free(f->params[j]);
  free(f->params);
  free(f->device_name);
  free(f->kernel_name);
  memset(f, 0, sizeof *f);
}

/* A C identifier: a letter or '_', then letters, digits and '_'. */
int ds_kt_valid_name(const char *s) {
  if (!(isalpha((unsigned char)*s) || *s == '_')) return 0;
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && *s != '_') return 0;
  return 1;
}

/* A value a #define may take: a one-line token of what Kernel Tuner
   accepts -- numbers, identifiers, and simple expressions of them
   (operators, parentheses, blanks) -- at most KT_VALUE_MAX bytes, without
   a comment and with balanced parentheses. */
int ds_kt_valid_value(const char *v) {
  size_t n = strlen(v);
  if (!n || n > KT_VALUE_MAX || v[0] == ' ' || v[n - 1] == ' ') return 0;
  int depth = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)v[i];
    if (isalnum(c) || c == '_' || c == '.' || c == ' ') continue;
    if (!strchr("+-*/%<>=!&|^~?:,()", c)) return 0;
    if (c == '/' && (v[i + 1] == '/' || v[i + 1] == '*')) return 0;
    if (c == '(') depth++;
    if (c == ')' && --depth < 0) return 0;
  }
  return depth == 0;
}

/* Does object o hold a second member called name? */
static int twice(const cJSON *o, const char *name) {
  int n = 0;
  for (const cJSON *x = o->child; x; x = x->next)
    if (x->string && !strcmp(x->string, name) && ++n > 1) return 1;
  return 0;
}

/* One cache entry into c; 0, or -1 with err naming the entry. */
static int read_entry(const char *path, const ds_kt_file *f, const cJSON *e, ds_kt_config *c,
                      char *err, size_t cap) {
  const char *key = e->string;
  if (!cJSON_IsObject(e))
    return kt_fail(err, cap, "%s: cache entry '%s' is not an object", path, key);
  c->values = calloc(f->nparams ? f->nparams : 1, sizeof *c->values);
  if (!c->values) return kt_fail(err, cap, "%s: out of memory", path);
  for (size_t j = 0; j < f->nparams; j++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, f->params[j]);
    if (!v)
      return kt_fail(err, cap, "%s: cache entry '%s' lacks tuning parameter '%s'", path, key,
                     f->params[j]);
    if (twice(e, f->params[j]))
      return kt_fail(err, cap, "%s: cache entry '%s' gives tuning parameter '%s' twice", path,
                     key, f->params[j]);
    if (!(c->values[j] = value_text(v)))
      return kt_fail(err, cap, "%s: cache entry '%s': parameter '%s' is not a number or string",
                     path, key, f->params[j]);
    if (!ds_kt_valid_value(c->values[j]))
      return kt_fail(err, cap, "%s: cache entry '%s': parameter '%s' = '%.80s%s' is not a "
                     "number, identifier or simple expression on one line (it becomes a "
                     "#define)", path, key, f->params[j], c->values[j],
                     strlen(c->values[j]) > 80 ? "..." : "");
  }
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(e, "time");
  if (!t) return kt_fail(err, cap, "%s: cache entry '%s' has no 'time'", path, key);
  if (twice(e, "time") || twice(e, "times"))
    return kt_fail(err, cap, "%s: cache entry '%s' gives its time%s twice", path, key,
                   twice(e, "time") ? "" : "s");
  if (cJSON_IsString(t)) {
    if (!(c->failed = strdup(t->valuestring[0] ? t->valuestring : "failed")))
      return kt_fail(err, cap, "%s: out of memory", path);
    return 0;
  }
  if (!cJSON_IsNumber(t) || !isfinite(t->valuedouble) || t->valuedouble < 0)
    return kt_fail(err, cap, "%s: cache entry '%s': 'time' is neither a time (ms >= 0) nor a "
                   "failure string", path, key);
  const cJSON *ts = cJSON_GetObjectItemCaseSensitive(e, "times");
  if (!ts) {
    /* Older files keep the mean only. */
    if (!(c->times_ms = malloc(sizeof *c->times_ms)))
      return kt_fail(err, cap, "%s: out of memory", path);
    c->times_ms[0] = t->valuedouble;
    c->ntimes = 1;
    return 0;
  }
  if (!cJSON_IsArray(ts) || cJSON_GetArraySize(ts) == 0)
    return kt_fail(err, cap, "%s: cache entry '%s': 'times' is not a non-empty array", path,
                   key);
  size_t n = (size_t)cJSON_GetArraySize(ts), k = 0;
  if (!(c->times_ms = malloc(n * sizeof *c->times_ms)))
    return kt_fail(err, cap, "%s: out of memory", path);
  const cJSON *x;
  cJSON_ArrayForEach(x, ts) {
    if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble) || x->valuedouble < 0)
      return kt_fail(err, cap, "%s: cache entry '%s': times[%zu] is not a time (ms >= 0)", path,
                     key, k);
    c->times_ms[k++] = x->valuedouble;
  }
  c->ntimes = k;
  return 0;
}

/* Parse text; on failure try it as an unterminated file (entries up to the
   last complete one, then the closing braces).  *unterminated says which. */
static cJSON *parse_json(const char *path, char *text, size_t len, int *unterminated, char *err,
                         size_t cap) {
  const char *end = NULL;
  *unterminated = 0;
  pthread_once(&kt_hooks_once, kt_hooks);
  kt_oom = 0;
  cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
  if (root) return root;
  if (kt_oom) {
    kt_fail(err, cap, "%s: out of memory (parsing %zu bytes of JSON)", path, len);
    return NULL;
  }
  size_t off = end && end >= text ? (size_t)(end - text) : 0;
  /* Kernel Tuner writes each entry followed by ",\n"; the last complete
     one ends at the last "}," or "}" of the text: closed in place (the
     text is ours), so the retry takes no second copy. */
  size_t n = len;
  while (n && (text[n - 1] == ' ' || text[n - 1] == '\n' || text[n - 1] == '\r' ||
               text[n - 1] == '\t'))
    n--;
  if (n && text[n - 1] == ',') {
    char keep = text[n];
    text[n - 1] = '}';
    text[n] = '}';
    root = cJSON_ParseWithLength(text, n + 1);
    text[n - 1] = ',';
    text[n] = keep;
    if (root) { *unterminated = 1; return root; }
    if (kt_oom) {
      kt_fail(err, cap, "%s: out of memory (parsing %zu bytes of JSON)", path, len);
      return NULL;
    }
  }
  long line, col;
  line_col(text, off, &line, &col);
  kt_fail(err, cap, "%s:%ld:%ld: not valid JSON (a Kernel Tuner cachefile is one JSON object)",
          path, line, col);
  return NULL;
}

/* A \u0000 escape in a JSON string (a NUL the parser would keep and every
   C string cut there: a kernel name "k\u0000x" read as "k"): its line and
   column, 1 when found. */
static int nul_escape(const char *t, size_t n, long *line, long *col) {
  *line = 1;
  const char *bol = t;
  for (size_t i = 0; i + 5 < n; i++) {
    if (t[i] == '\n') (*line)++, bol = t + i + 1;
    if (t[i] != '\\' || t[i + 1] != 'u' || memcmp(t + i + 2, "0000", 4)) continue;
    size_t b = 0; /* an escaped backslash before it makes it text */
    while (b < i && t[i - 1 - b] == '\\') b++;
    if (b % 2 == 0) {
      *col = (long)(t + i - bol) + 1;
      return 1;
    }
  }
  return 0;
}

int ds_kt_read(const char *path, ds_kt_file *out, char *err, size_t cap) {
  memset(out, 0, sizeof *out);
  char *text = NULL;
  size_t len = 0;
  if (read_gz(path, &text, &len, err, cap)) return -1;
  long nline, ncol;
  if (nul_escape(text, len, &nline, &ncol)) {
    free(text);
    return kt_fail(err, cap, "%s:%ld:%ld: a string holds \\u0000 (a NUL character), which no "
                   "name or value may hold", path, nline, ncol);
  }
  cJSON *root = parse_json(path, text, len, &out->unterminated, err, cap);
  free(text);
  if (!root) return -1;
  int rc = -1;
  if (!cJSON_IsObject(root)) {
    kt_fail(err, cap, "%s: not a Kernel Tuner cachefile (the JSON is not an object)", path);
    goto out;
  }
  const cJSON *dev = cJSON_GetObjectItemCaseSensitive(root, "device_name");
  const cJSON *kn = cJSON_GetObjectItemCaseSensitive(root, "kernel_name");
  const cJSON *keys = cJSON_GetObjectItemCaseSensitive(root, "tune_params_keys");
  const cJSON *cache = cJSON_GetObjectItemCaseSensitive(root, "cache");
  const cJSON *ps = cJSON_GetObjectItemCaseSensitive(root, "problem_size");
  if (!cJSON_IsString(dev) || !cJSON_IsString(kn) || !cJSON_IsArray(keys) ||
      !cJSON_IsObject(cache)) {
    kt_fail(err, cap, "%s: not a Kernel Tuner cachefile (needs device_name, kernel_name, "
            "tune_params_keys and cache)", path);
    goto out;
  }
  if (!(out->device_name = strdup(dev->valuestring)) ||
      !(out->kernel_name = strdup(kn->valuestring)))
    goto nomem;
  /* problem_size: a number or a list of up to three numbers; anything else
     (Kernel Tuner also allows parameter names) leaves ndims 0. */
  if (cJSON_IsNumber(ps) && ps->valuedouble >= 1 && ps->valuedouble < KT_EXACT_INT) {
    out->ndims = 1;
    out->problem_size[0] = (int64_t)ps->valuedouble;
  } else if (cJSON_IsArray(ps) && cJSON_GetArraySize(ps) >= 1 && cJSON_GetArraySize(ps) <= 3) {
    size_t d = 0;
    const cJSON *x;
    int ok = 1;
    cJSON_ArrayForEach(x, ps) {
      if (!cJSON_IsNumber(x) || x->valuedouble < 1 || x->valuedouble >= KT_EXACT_INT ||
          x->valuedouble != floor(x->valuedouble))
        ok = 0;
      else
        out->problem_size[d] = (int64_t)x->valuedouble;
      d++;
    }
    if (ok) out->ndims = d;
  }
  size_t np = (size_t)cJSON_GetArraySize(keys);
  out->params = calloc(np ? np : 1, sizeof *out->params);
  if (!out->params) goto nomem;
  const cJSON *x;
  cJSON_ArrayForEach(x, keys) {
    if (!cJSON_IsString(x) || !x->valuestring[0]) {
      kt_fail(err, cap, "%s: tune_params_keys[%zu] is not a parameter name", path, out->nparams);
      goto out;
    }
    if (!ds_kt_valid_name(x->valuestring)) {
      kt_fail(err, cap, "%s: tune_params_keys[%zu]: '%.80s' is not a C identifier (a tuning "
              "parameter becomes a #define)", path, out->nparams, x->valuestring);
      goto out;
    }
    for (size_t j = 0; j < out->nparams; j++)
      if (!strcmp(out->params[j], x->valuestring)) {
        kt_fail(err, cap, "%s: tune_params_keys names '%s' twice", path, x->valuestring);
        goto out;
      }
    if (!(out->params[out->nparams++] = strdup(x->valuestring))) goto nomem;
  }
  size_t nc = (size_t)cJSON_GetArraySize(cache);
  out->configs = calloc(nc ? nc : 1, sizeof *out->configs);
  if (!out->configs) goto nomem;
  /* keys seen: open addressing over indexes into out->configs */
  size_t hcap = 16;
  while (hcap < 2 * nc + 16) hcap *= 2;
  size_t *seen = malloc(hcap * sizeof *seen);
  if (!seen) goto nomem;
  for (size_t i = 0; i < hcap; i++) seen[i] = (size_t)-1;
  cJSON_ArrayForEach(x, cache) {
    uint64_t h = 1469598103934665603ull;
    for (const char *p = x->string; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
    size_t slot = (size_t)(h & (hcap - 1));
    while (seen[slot] != (size_t)-1) {
      if (!strcmp(out->configs[seen[slot]].key, x->string)) {
        kt_fail(err, cap, "%s: cache entry '%s' appears twice (a duplicate configuration key: "
                "which entry is the configuration?)", path, x->string);
        free(seen);
        goto out;
      }
      slot = (slot + 1) & (hcap - 1);
    }
    ds_kt_config *c = &out->configs[out->nconfigs];
    if (!(c->key = strdup(x->string))) { free(seen); goto nomem; }
    seen[slot] = out->nconfigs++;
    if (read_entry(path, out, x, c, err, cap)) { free(seen); goto out; }
  }
  free(seen);
  rc = 0;
  goto out;
nomem:
  kt_fail(err, cap, "%s: out of memory", path);
out:
  cJSON_Delete(root);
  if (rc) ds_kt_free(out);
  return rc;
}
