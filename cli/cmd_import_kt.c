/*
 * cmd_import_kt.c -- `kcast dataset import-kerneltuner`: Kernel Tuner
 * cachefiles (measured times of every configuration of a tunable kernel)
 * and the kernel's source become a trainable dataset.
 *
 * What a configuration becomes (docs/formats.md, "Kernel Tuner
 * cachefiles"): one launch (app = --app or the kernel's name, dataset =
 * the configuration's key, lseq 0) whose grid and block follow Kernel
 * Tuner's rules (block = the block-size parameters, grid = ceil(problem
 * size / product of the grid divisors)), with one time_ns measurement per
 * entry of `times` on the GPU the file names, and -- with --source -- the
 * features kcast emulate gives for that launch of the kernel compiled with
 * the configuration's parameters prepended as #define lines, as Kernel
 * Tuner compiles it.
 *
 * Two phases:
 *  1. times: every chosen configuration's launch and measurements, of every
 *     cachefile, in one transaction (a bad file or a launch stored with
 *     another grid changes nothing);
 *  2. features, for the launches that have none yet: compiled and emulated
 *     by -j worker threads, each finished group written in its own
 *     transaction.  An interrupted import keeps every group it finished and
 *     a rerun computes only what is missing (resumable); a second
 *     cachefile of the same kernel (another GPU) finds the features there
 *     and adds its times only.
 *
 * Shared compilation.  nvcc's cost is mostly its fixed start (the driver,
 * the preprocessor and front end over the CUDA headers), not the kernel:
 * compiling 50 configurations in one translation unit takes about as long
 * as compiling one.  So a group of configurations is compiled at once:
 * each copy of the source sits in its own namespace (kcast_cfgN) behind
 * its own #define lines, with the kernel renamed (so extern "C" kernels do
 * not collide) and the source's #include lines hoisted above the copies.
 * A group that does not compile that way (a source that cannot be
 * repeated) falls back to one compilation per configuration, which also
 * names the configuration a compile error belongs to.  The first
 * configuration is always compiled alone: it checks the source, the
 * options and the --arg list once, and gives the kernel's name as
 * compiled on its own, the name every launch is stored under.
 *
 * Threads: the workers compile (child processes), parse and emulate (each
 * on its own emulated device, one OpenMP thread each when -j > 1); only
 * the main thread touches the dataset and prints.
 */
#include "cli/cli.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "datasets/ds.h"
#include "emulator/emu.h"
#include "extractor/features.h"
#include "extractor/frontend.h"
#include "extractor/ptx.h"
#include "model/model.h"
#include "profiler/prof.h"

#define KT_CMD "dataset import-kerneltuner"
#define KT_SOURCE "kcast dataset import-kerneltuner"
#define KT_TOOL "kernel_tuner"
#define KT_NS "kcast_cfg"
#define KT_BATCH_MAX 48

/* One configuration to import (the union of the cachefiles' keys). */
typedef struct kt_cfg {
  const char *key;          /* owned by the first file holding it */
  const ds_kt_config **in;  /* per file: the entry, or NULL */
  const ds_kt_file *def;    /* the file whose parameters define it */
  const ds_kt_config *defc; /* its entry there */
  unsigned grid[3], block[3];
  int64_t id;               /* launch id once written */
  int need;                 /* features to compute */
  /* results of phase 2 (written by one worker, read after it is done) */
  int res;                  /* the worker's outcome: 1 ok, -1 failed */
  int status;               /* res, published under the work lock once
                               the configuration's group is done; 0 before */
  feat_vec feats;
  char *err;                /* why it failed (malloc'd) */
} kt_cfg;

typedef struct kt_opts {
  const char *out, *source, *app, *gpu;
  const char *div[3], *bnames;
  int64_t psize[3];
  size_t pdims;
  unsigned long configs, seed, jobs, batch;
  cli_const_spec *consts;
  size_t nconsts;
  const char **copts;
  size_t ncopts;
} kt_opts;

/* Shared state of phase 2. */
typedef struct kt_work {
  const kt_opts *o;
  cli_launch *L;            /* launch options: args, cfg, front end */
  char *text;               /* the source (NUL-terminated) */
  size_t len;
  char *hoisted;            /* its #include lines */
  const char *kname;        /* the kernel's source name */
  const char *const *names; /* block size names */
  kt_cfg **todo;            /* configurations needing features, in order */
  size_t ntodo, next;       /* next: first not yet taken */
  size_t batch;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  size_t done;              /* configurations finished */
  int stop;                 /* a fatal error: take no more groups */
  char fatal[1100];         /* that error */
  int fatal_rc;
  size_t batch_fallbacks;   /* groups compiled one by one */
  int threads;              /* OpenMP threads per launch */
  int sync;                 /* mu and cv are initialised */
} kt_work;

/* --------------------------------------------------------------- helpers -- */

static int parse_dims64(const char *s, int64_t out[3], size_t *n) {
  *n = 0;
  const char *p = s;
  while (*n < 3) {
    if (!isdigit((unsigned char)*p)) return -1;
    char *e;
    errno = 0;
    long long v = strtoll(p, &e, 10);
    if (errno || v < 1) return -1;
    out[(*n)++] = v;
    if (!*e) return 0;
    if (*e != ',') return -1;
    p = e + 1;
  }
  return -1;
}

/* Index of parameter name in f, or -1. */
static long param_index(const ds_kt_file *f, const char *name, size_t n) {
  for (size_t j = 0; j < f->nparams; j++)
    if (strlen(f->params[j]) == n && !strncmp(f->params[j], name, n)) return (long)j;
  return -1;
}

/* Whole positive integer value of text; -1 when it is not one. */
static long long int_value(const char *s) {
  char *e;
  errno = 0;
  long long v = strtoll(s, &e, 10);
  if (errno || *e || e == s || v < 1) return -1;
  return v;
}

/* The i-th comma-separated item of list into buf; 0 when absent. */
static int list_item(const char *list, size_t i, char *buf, size_t cap) {
  const char *p = list;
  for (size_t k = 0; k < i; k++) {
    p = strchr(p, ',');
    if (!p) return 0;
    p++;
  }
  size_t n = strcspn(p, ",");
  if (n == 0 || n >= cap) return 0;
  memcpy(buf, p, n);
  buf[n] = 0;
  return 1;
}

/*
 * Block and grid of configuration c of file f (Kernel Tuner's rules).  A
 * block-size name that is not a parameter of f is 1; a grid divisor is a
 * parameter name or a positive integer.  0, or -1 with why.
 */
static int geometry(const kt_opts *o, const int64_t ps[3], const ds_kt_file *f,
                    const ds_kt_config *c, unsigned grid[3], unsigned block[3], char *why,
                    size_t cap) {
  for (int d = 0; d < 3; d++) {
    char name[256];
    block[d] = 1;
    if (list_item(o->bnames, (size_t)d, name, sizeof name)) {
      long j = param_index(f, name, strlen(name));
      if (j >= 0) {
        long long v = int_value(c->values[j]);
        if (v < 1 || v > 1024) {
          snprintf(why, cap, "block size %s = '%s' is not an integer in 1..1024", name,
                   c->values[j]);
          return -1;
        }
        block[d] = (unsigned)v;
      }
    }
  }
  for (int d = 0; d < 3; d++) {
    double div = 1;
    const char *list = o->div[d];
    char item[256];
    for (size_t i = 0; list && list_item(list, i, item, sizeof item); i++) {
      long long v = int_value(item);
      if (v < 0) {
        long j = param_index(f, item, strlen(item));
        if (j < 0) {
          /* an unnamed block size is 1, as Kernel Tuner defines it */
          char bn[256];
          int is_block = 0;
          for (size_t b = 0; b < 3; b++)
            if (list_item(o->bnames, b, bn, sizeof bn) && !strcmp(bn, item)) is_block = 1;
          if (is_block) continue;
          snprintf(why, cap, "grid divisor '%s' is not a tuning parameter", item);
          return -1;
        }
        v = int_value(c->values[j]);
        if (v < 1) {
          snprintf(why, cap, "grid divisor %s = '%s' is not a positive integer", item,
                   c->values[j]);
          return -1;
        }
      }
      div *= (double)v;
    }
    double g = ceil((double)ps[d] / div);
    if (g < 1 || g > (d ? 65535.0 : 2147483647.0)) {
      snprintf(why, cap, "grid dimension %c would be %.0f", "xyz"[d], g);
      return -1;
    }
    grid[d] = (unsigned)g;
  }
  return 0;
}

/* Append text to a growing buffer; -1 on ENOMEM. */
typedef struct sbuf { char *s; size_t n, cap; } sbuf;
static int sb_add(sbuf *b, const char *t, size_t n) {
  if (b->n + n + 1 > b->cap) {
    size_t nc = b->cap ? b->cap : 4096;
    while (nc < b->n + n + 1) nc *= 2;
    char *p = realloc(b->s, nc);
    if (!p) return -1;
    b->s = p;
    b->cap = nc;
  }
  memcpy(b->s + b->n, t, n);
  b->n += n;
  b->s[b->n] = 0;
  return 0;
}
static int sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int sb_printf(sbuf *b, const char *fmt, ...) {
  char tmp[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0) return -1;
  if ((size_t)n < sizeof tmp) return sb_add(b, tmp, (size_t)n);
  char *big = malloc((size_t)n + 1);
  if (!big) return -1;
  va_start(ap, fmt);
  vsnprintf(big, (size_t)n + 1, fmt, ap);
  va_end(ap);
  int rc = sb_add(b, big, (size_t)n);
  free(big);
  return rc;
}

/* Put a C string literal body (for #line). */
static int sb_cstr(sbuf *b, const char *s) {
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    char t[8];
    if (c == '"' || c == '\\') snprintf(t, sizeof t, "\\%c", c);
    else if (c < 32 || c == 127) snprintf(t, sizeof t, "\\%03o", c);
    else { t[0] = (char)c; t[1] = 0; }
    if (sb_add(b, t, strlen(t))) return -1;
  }
  return 0;
}

/* The #define lines of c, as Kernel Tuner writes them: grid_size_x..z,
   the block sizes, every other parameter, kernel_tuner 1. */
static int add_defines(sbuf *b, const kt_work *w, const kt_cfg *c, int undef) {
  static const char *const gnames[3] = {"grid_size_x", "grid_size_y", "grid_size_z"};
  const ds_kt_file *f = c->def;
  int rc = 0;
  for (int d = 0; d < 3; d++) {
    rc |= undef ? sb_printf(b, "#undef %s\n", gnames[d])
                : sb_printf(b, "#define %s %u\n", gnames[d], c->grid[d]);
  }
  for (int d = 0; d < 3; d++)
    if (w->names[d])
      rc |= undef ? sb_printf(b, "#undef %s\n", w->names[d])
                  : sb_printf(b, "#define %s %u\n", w->names[d], c->block[d]);
  for (size_t j = 0; j < f->nparams; j++) {
    int is_block = 0;
    for (int d = 0; d < 3; d++)
      if (w->names[d] && !strcmp(w->names[d], f->params[j])) is_block = 1;
    if (is_block) continue;
    rc |= undef ? sb_printf(b, "#undef %s\n", f->params[j])
                : sb_printf(b, "#define %s %s\n", f->params[j], c->defc->values[j]);
  }
  rc |= undef ? sb_printf(b, "#undef kernel_tuner\n") : sb_printf(b, "#define kernel_tuner 1\n");
  return rc;
}

/* The source of one configuration, compiled alone. */
static char *single_text(const kt_work *w, const kt_cfg *c, size_t *len) {
  sbuf b = {0};
  int rc = add_defines(&b, w, c, 0);
  rc |= sb_printf(&b, "#line 1 \"");
  rc |= sb_cstr(&b, w->o->source);
  rc |= sb_printf(&b, "\"\n");
  rc |= sb_add(&b, w->text, w->len);
  if (rc) { free(b.s); return NULL; }
  *len = b.n;
  return b.s;
}

/* One translation unit with configurations cs[0..n), each in namespace
   KT_NS<i> with its kernel renamed KERNEL__KT_NS<i>. */
static char *batch_text(const kt_work *w, kt_cfg *const *cs, size_t n, size_t *len) {
  sbuf b = {0};
  int rc = sb_add(&b, w->hoisted, strlen(w->hoisted));
  for (size_t i = 0; i < n && !rc; i++) {
    rc |= sb_printf(&b, "namespace " KT_NS "%zu {\n", i);
    rc |= add_defines(&b, w, cs[i], 0);
    rc |= sb_printf(&b, "#define %s %s__" KT_NS "%zu\n", w->kname, w->kname, i);
    rc |= sb_printf(&b, "#line 1 \"");
    rc |= sb_cstr(&b, w->o->source);
    rc |= sb_printf(&b, "\"\n");
    rc |= sb_add(&b, w->text, w->len);
    rc |= sb_printf(&b, "\n#undef %s\n", w->kname);
    rc |= add_defines(&b, w, cs[i], 1);
    rc |= sb_printf(&b, "}\n");
  }
  if (rc) { free(b.s); return NULL; }
  *len = b.n;
  return b.s;
}

/* The source's #include lines (hoisted above the copies of a batch). */
static char *include_lines(const char *text) {
  sbuf b = {0};
  if (sb_add(&b, "", 0)) return NULL;
  for (const char *l = text; *l;) {
    const char *e = strchr(l, '\n');
    size_t n = e ? (size_t)(e - l) : strlen(l);
    const char *p = l;
    while (p < l + n && (*p == ' ' || *p == '\t')) p++;
    if (p < l + n && *p == '#') {
      p++;
      while (p < l + n && (*p == ' ' || *p == '\t')) p++;
      if ((size_t)(l + n - p) >= 7 && !strncmp(p, "include", 7) &&
          (sb_add(&b, l, n) || sb_add(&b, "\n", 1))) {
        free(b.s);
        return NULL;
      }
    }
    if (!e) break;
    l = e + 1;
  }
  return b.s;
}

/* The kernel of a batch's copy i: an .entry named KERNEL__KT_NS<i>, or a
   mangled name holding that identifier. */
static const ptx_func *batch_kernel(const ptx_module *m, const char *kname, size_t i) {
  char want[600], lp[620];
  snprintf(want, sizeof want, "%s__" KT_NS "%zu", kname, i);
  snprintf(lp, sizeof lp, "%zu%s", strlen(want), want);
  const ptx_func *hit = NULL;
  for (uint32_t f = 0; f < m->nfuncs; f++) {
    const ptx_func *k = &m->funcs[f];
    if (!k->is_entry || !k->has_body) continue;
    if (!strcmp(k->name, want) || (!strncmp(k->name, "_Z", 2) && strstr(k->name, lp))) {
      if (hit) return NULL; /* ambiguous */
      hit = k;
    }
  }
  return hit;
}

/* The kernel of a configuration compiled alone. */
static const ptx_func *single_kernel(const ptx_module *m, const char *kname) {
  char lp[600];
  snprintf(lp, sizeof lp, "%zu%s", strlen(kname), kname);
  const ptx_func *hit = NULL;
  for (uint32_t f = 0; f < m->nfuncs; f++) {
    const ptx_func *k = &m->funcs[f];
    if (!k->is_entry || !k->has_body) continue;
    if (!strcmp(k->name, kname)) return k;
    if (!strncmp(k->name, "_Z", 2) && strstr(k->name, lp)) {
      if (hit) return NULL;
      hit = k;
    }
  }
  return hit;
}

/* ----------------------------------------------------------- the workers -- */

static void set_failed(kt_cfg *c, const char *msg) {
  c->res = -1;
  free(c->err);
  c->err = strdup(msg && *msg ? msg : "failed");
}

/* Emulate c as kernel k of em on dev (ns: its namespace or NULL).  Returns
   the cli_launch_kernel code. */
static int emulate(kt_work *w, kt_cfg *c, emu_device *dev, emu_module *em, const ptx_func *k,
                   const char *ns) {
  char err[1100] = "";
  emu_launch_cfg cfg = w->L->cfg;
  memcpy(cfg.grid, c->grid, sizeof cfg.grid);
  memcpy(cfg.block, c->block, sizeof cfg.block);
  cfg.threads = w->threads;
  cfg.printf_out = stderr;
  feat_init(&c->feats);
  emu_stats st;
  int rc = cli_launch_kernel(w->L, dev, em, k, w->o->consts, w->o->nconsts, ns, &cfg, &c->feats,
                             &st, err, sizeof err);
  if (rc) {
    feat_free(&c->feats);
    set_failed(c, err);
  } else {
    c->res = 1;
  }
  return rc;
}

/* Compile, load and emulate c alone.  Returns 0, or the failure's code
   (1: arguments that fit no configuration; -1 otherwise). */
static int run_single(kt_work *w, kt_cfg *c, char **kname_out) {
  char err[1100] = "";
  size_t tl = 0, pl = 0;
  char *src = single_text(w, c, &tl), *ptx = NULL;
  if (!src) { set_failed(c, "out of memory"); return -1; }
  fe_options fo = w->L->fo;
  fo.extra = w->o->copts;
  fo.nextra = w->o->ncopts;
  int rc = fe_cu_text_to_ptx(src, tl, w->o->source, &fo, &ptx, &pl, err, sizeof err);
  free(src);
  if (rc) { set_failed(c, err); return -1; }
  ptx_error perr;
  memset(&perr, 0, sizeof perr);
  ptx_module *m = ptx_parse(ptx, pl, w->o->source, &perr);
  if (!m) {
    set_failed(c, perr.msg[0] ? perr.msg : "cannot parse the PTX");
    free(ptx);
    return -1;
  }
  const ptx_func *k = single_kernel(m, w->kname);
  emu_device *dev = NULL;
  emu_module *em = NULL;
  rc = -1;
  if (!k) {
    snprintf(err, sizeof err, "%s: no single kernel named %s in the compiled source (--kernel)",
             w->o->source, w->kname);
    set_failed(c, err);
    rc = -1; /* the cachefile's kernel_name or --kernel: bad input, not a usage error */
  } else if (!(dev = emu_device_new())) {
    set_failed(c, "out of memory");
  } else if (emu_module_load(dev, m, &em, err, sizeof err)) {
    set_failed(c, err);
  } else {
    rc = emulate(w, c, dev, em, k, NULL);
    if (kname_out && !(*kname_out = strdup(k->name))) rc = -1;
  }
  emu_module_free(em);
  emu_device_free(dev);
  ptx_module_free(m);
  free(ptx);
  return rc;
}

/* One group: compiled at once when it has more than one configuration and
   that works, else one by one. */
static void run_group(kt_work *w, kt_cfg **cs, size_t n) {
  char err[1100] = "";
  int grouped = 0;
  if (n > 1) {
    size_t tl = 0, pl = 0;
    char *src = batch_text(w, cs, n, &tl), *ptx = NULL;
    fe_options fo = w->L->fo;
    fo.extra = w->o->copts;
    fo.nextra = w->o->ncopts;
    ptx_module *m = NULL;
    emu_device *dev = NULL;
    emu_module *em = NULL;
    ptx_error perr;
    memset(&perr, 0, sizeof perr);
    if (src && !fe_cu_text_to_ptx(src, tl, w->o->source, &fo, &ptx, &pl, err, sizeof err) &&
        (m = ptx_parse(ptx, pl, w->o->source, &perr)) && (dev = emu_device_new()) &&
        !emu_module_load(dev, m, &em, err, sizeof err)) {
      const ptx_func **ks = calloc(n, sizeof *ks);
      int all = ks != NULL;
      for (size_t i = 0; all && i < n; i++) all = (ks[i] = batch_kernel(m, w->kname, i)) != NULL;
      if (all) {
        grouped = 1;
        for (size_t i = 0; i < n; i++) {
          char ns[32];
          snprintf(ns, sizeof ns, KT_NS "%zu", i);
          emulate(w, cs[i], dev, em, ks[i], ns);
        }
      }
      free(ks);
    }
    emu_module_free(em);
    emu_device_free(dev);
    ptx_module_free(m);
    free(ptx);
    free(src);
    if (!grouped) {
      pthread_mutex_lock(&w->mu);
      w->batch_fallbacks++;
      pthread_mutex_unlock(&w->mu);
    }
  }
  for (size_t i = 0; !grouped && i < n; i++) run_single(w, cs[i], NULL);
}

static void *worker(void *arg) {
  kt_work *w = arg;
  for (;;) {
    pthread_mutex_lock(&w->mu);
    if (w->stop || w->next >= w->ntodo) {
      pthread_mutex_unlock(&w->mu);
      return NULL;
    }
    size_t first = w->next, n = w->ntodo - first < w->batch ? w->ntodo - first : w->batch;
    w->next += n;
    pthread_mutex_unlock(&w->mu);
    run_group(w, w->todo + first, n);
    pthread_mutex_lock(&w->mu);
    for (size_t i = 0; i < n; i++) w->todo[first + i]->status = w->todo[first + i]->res;
    w->done += n;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
  }
}

/* ------------------------------------------------------------ the command -- */

const char cmd_import_kt_usage[] =
    "usage: kcast dataset import-kerneltuner CACHEFILE... -o DB [--source FILE.cu]\n"
    "              [--kernel NAME] [--app NAME] [--gpu NAME] [--problem-size X[,Y[,Z]]]\n"
    "              [--grid-div-x LIST] [--grid-div-y LIST] [--grid-div-z LIST]\n"
    "              [--block-size-names X[,Y[,Z]]] [--arg SPEC]... [--const NAME=FILL]...\n"
    "              [--copt OPTION]... [--compiler nvcc|clang] [--arch sm_XX] [--shared BYTES]\n"
    "              [--sample CTAS] [--configs N] [--seed S] [-j JOBS] [--batch N]\n"
    "              [--budget INSNS] [--timeout SECONDS] [--oob error|warn]\n"
    "              [--tool-timeout SECONDS]\n";

static void kt_usage(FILE *f) {
  fputs(cmd_import_kt_usage, f);
}

static int kt_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int kt_usage_error(const char *fmt, ...) {
  char msg[1200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, "kcast: %s: %s\n", KT_CMD, msg);
  kt_usage(stderr);
  return KCAST_EXIT_USAGE;
}

/* splitmix64 for the seeded sample. */
static uint64_t mix(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static int cmp_size(const void *a, const void *b) {
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  return x < y ? -1 : x > y;
}

/* Key -> configuration index (open addressing over the union of keys). */
typedef struct key_map { size_t cap; long *slot; } key_map;
static uint64_t hash_str(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

void cli_gpu_row(const char *key, const char *device, ds_gpu *g) {
  memset(g, 0, sizeof *g);
  snprintf(g->name, sizeof g->name, "%s", key);
  const an_gpu *t = an_gpu_find(device);
  if (!t) t = an_gpu_find(key);
  if (!t) return;
  g->cc_major = t->cc_major;
  g->cc_minor = t->cc_minor;
  g->sm_count = t->sms;
  g->sm_clock_mhz = t->boost_mhz;
  g->mem_bytes = (int64_t)(t->mem_gb * 1e9);
  g->mem_bandwidth_gbs = t->mem_bw_gbs;
  g->l2_bytes = (int64_t)(t->l2_mb * 1048576.0);
  g->tdp_w = t->tdp_w;
}

static char *join_args(int argc, char **argv) {
  size_t n = sizeof "kcast dataset";
  for (int i = 0; i < argc; i++) n += strlen(argv[i]) + 1;
  char *s = malloc(n);
  if (!s) return NULL;
  strcpy(s, "kcast dataset");
  for (int i = 0; i < argc; i++) {
    strcat(s, " ");
    strcat(s, argv[i]);
  }
  return s;
}

int cmd_import_kerneltuner(int argc, char **argv) {
  /* Own options; the launch options (--arg, --sample, --arch, ...) are
     cli_launch.c's, so they mean what they mean to kcast emulate. */
  enum { O_SOURCE = CLI_OPT_OWN, O_APP, O_GPU, O_PSIZE, O_DIVX, O_DIVY, O_DIVZ, O_BNAMES,
         O_CONST, O_COPT, O_CONFIGS, O_SEED, O_BATCH, O_JOBS, O_OUT, O_HELP };
  static const struct option lopts[] = {
      {"output", required_argument, NULL, O_OUT},  {"source", required_argument, NULL, O_SOURCE},
      {"app", required_argument, NULL, O_APP},     {"gpu", required_argument, NULL, O_GPU},
      {"problem-size", required_argument, NULL, O_PSIZE},
      {"grid-div-x", required_argument, NULL, O_DIVX},
      {"grid-div-y", required_argument, NULL, O_DIVY},
      {"grid-div-z", required_argument, NULL, O_DIVZ},
      {"block-size-names", required_argument, NULL, O_BNAMES},
      {"const", required_argument, NULL, O_CONST | CLI_OPT_MANY},
      {"copt", required_argument, NULL, O_COPT | CLI_OPT_MANY},
      {"configs", required_argument, NULL, O_CONFIGS},
      {"seed", required_argument, NULL, O_SEED},   {"jobs", required_argument, NULL, O_JOBS},
      {"batch", required_argument, NULL, O_BATCH}, {"help", no_argument, NULL, O_HELP},
      {NULL, 0, NULL, 0}};
  kt_opts o;
  memset(&o, 0, sizeof o);
  o.div[0] = "block_size_x";
  o.div[1] = "block_size_y";
  o.div[2] = "block_size_z";
  o.bnames = "block_size_x,block_size_y,block_size_z";
  o.seed = 1;
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  o.jobs = ncpu > 0 ? (unsigned long)ncpu : 1;
  int sample_set = 0;
  cli_launch L;
  ds_kt_file *files = NULL;
  size_t nfiles = 0;
  kt_cfg *cfgs = NULL;
  size_t ncfg = 0;
  ds_db *db = NULL;
  char *text = NULL, *cmdline = NULL, *kname_alone = NULL;
  char **gpus = NULL;
  kt_work w;
  memset(&w, 0, sizeof w);
  key_map km = {0, NULL};
  int rc = cli_launch_init(&L, KT_CMD, argc * 2 + 2);
  if (rc) return rc;
  o.consts = calloc((size_t)argc + 1, sizeof *o.consts);
  o.copts = calloc((size_t)argc + 1, sizeof *o.copts);
  if (!o.consts || !o.copts) { cli_error("out of memory"); rc = KCAST_EXIT_USER; goto out; }
  rc = KCAST_EXIT_USAGE;
  cli_opts po;
  cli_opts_init(&po, "dataset", argc, argv, "o:j:h", 0);
  if (cli_opts_add(&po, lopts) || cli_opts_add(&po, cli_launch_longopts)) {
    cli_error("internal: too many options");
    goto out;
  }
  int c;
  while ((c = cli_opts_next(&po)) != CLI_OPT_END) {
    unsigned long u = 0;
    const char *val = po.arg;
    if (c == CLI_OPT_ERR) { rc = po.status; goto out; }
    if (c >= CLI_OPT_LAUNCH) {
      if (!strcmp(po.name, "--grid") || !strcmp(po.name, "--block")) {
        kt_usage_error("%s: the launch geometry follows from the cachefile (--problem-size, "
                       "--grid-div-x/y/z, --block-size-names)", po.name);
        goto out;
      }
      if (!strcmp(po.name, "--sample")) sample_set = 1;
      if (cli_launch_option(&L, &po, c) != 1) goto out;
      continue;
    }
    switch (c) {
      case 'o': case O_OUT: o.out = val; break;
      case 'h': case O_HELP: kt_usage(stdout); rc = KCAST_EXIT_OK; goto out;
      case O_SOURCE: o.source = val; break;
      case O_APP: o.app = val; break;
      case O_GPU: o.gpu = val; break;
      case O_PSIZE:
        if (parse_dims64(val, o.psize, &o.pdims)) {
          kt_usage_error("bad --problem-size '%s' (X[,Y[,Z]], positive integers)", val);
          goto out;
        }
        break;
      case O_DIVX: case O_DIVY: case O_DIVZ: o.div[c - O_DIVX] = val; break;
      case O_BNAMES: o.bnames = val; break;
      case O_CONST:
        if (cli_parse_const("dataset", val, &o.consts[o.nconsts])) goto out;
        o.nconsts++;
        break;
      case O_COPT: o.copts[o.ncopts++] = val; break;
      case O_CONFIGS: case O_SEED: case 'j': case O_JOBS: case O_BATCH:
        if (cli_parse_uint(val, c == O_SEED ? ULONG_MAX : 1000000000ul, &u) ||
            (c != O_SEED && u == 0)) {
          kt_usage_error("bad %s '%s' (expected a positive integer)", po.name, val);
          goto out;
        }
        if (c == O_CONFIGS) o.configs = u;
        else if (c == O_SEED) o.seed = u;
        else if (c == 'j' || c == O_JOBS) o.jobs = u > 256 ? 256 : u;
        else o.batch = u;
        break;
      default: kt_usage_error("unknown option '%s'", po.name ? po.name : "?"); goto out;
    }
  }
  char **operands = CLI_OPERANDS(&po);
  nfiles = (size_t)CLI_NOPERANDS(&po);
  if (!nfiles) { kt_usage_error("no cachefile given"); goto out; }
  if (!o.out || !*o.out) { kt_usage_error("needs -o DB"); goto out; }
  if (o.gpu && nfiles > 1) { kt_usage_error("--gpu names one GPU: give one cachefile with it"); goto out; }
  if (!o.source && (L.nargs || o.nconsts || o.ncopts)) {
    kt_usage_error("--arg, --const and --copt need --source");
    goto out;
  }
  if (!sample_set) L.cfg.sample_ctas = 64;
  {
    struct stat sb;
    if (o.source && stat(o.source, &sb)) {
      cli_error("%s: %s", o.source, strerror(errno));
      rc = KCAST_EXIT_USER;
      goto out;
    }
  }

  /* Read every cachefile before touching the dataset. */
  rc = KCAST_EXIT_USER;
  files = calloc(nfiles, sizeof *files);
  gpus = calloc(nfiles, sizeof *gpus);
  if (!files || !gpus) { cli_error("out of memory"); goto out; }
  for (size_t i = 0; i < nfiles; i++) {
    char err[1200];
    if (ds_kt_read(operands[i], &files[i], err, sizeof err)) {
      cli_error("%s", err);
      goto out;
    }
    if (files[i].unterminated)
      fprintf(stderr, "kcast: %s: unterminated (a tuning run still writing, or interrupted);"
              " its %zu complete entries are read\n", operands[i], files[i].nconfigs);
    if (i && strcmp(files[i].kernel_name, files[0].kernel_name) && !L.kernel) {
      cli_error("%s: kernel %s, but %s holds kernel %s (one kernel per import, or --kernel)",
                operands[i], files[i].kernel_name, operands[0], files[0].kernel_name);
      goto out;
    }
    char key[128];
    if (!o.gpu && !files[i].device_name[0]) {
      cli_error("%s: device_name is empty: the GPU of its times is unknown (give --gpu NAME)",
                operands[i]);
      goto out;
    }
    if (o.gpu) snprintf(key, sizeof key, "%s", o.gpu);
    else prof_gpu_key(files[i].device_name, key, sizeof key);
    if (!(gpus[i] = strdup(key))) { cli_error("out of memory"); goto out; }
    for (size_t j = 0; j < i; j++)
      if (!strcmp(gpus[j], gpus[i])) {
        cli_error("%s and %s were both measured on %s: import one of them, or name the GPUs",
                  operands[j], operands[i], gpus[i]);
        goto out;
      }
  }
  const char *kname = L.kernel ? L.kernel : files[0].kernel_name;
  const char *app = o.app ? o.app : kname;
  int64_t ps[3] = {1, 1, 1};
  if (o.pdims) {
    memcpy(ps, o.psize, sizeof ps);
    for (size_t d = o.pdims; d < 3; d++) ps[d] = 1;
  } else {
    for (size_t i = 0; i < nfiles; i++) {
      if (!files[i].ndims) {
        cli_error("%s: problem_size is not a list of numbers; give --problem-size",
                  operands[i]);
        goto out;
      }
      int64_t q[3] = {1, 1, 1};
      memcpy(q, files[i].problem_size, files[i].ndims * sizeof *q);
      if (i && memcmp(q, ps, sizeof q)) {
        cli_error("%s: problem size differs from %s's; import them separately (--app)",
                  operands[i], operands[0]);
        goto out;
      }
      memcpy(ps, q, sizeof ps);
    }
  }
  char bn[3][256];
  const char *bnames[3] = {NULL, NULL, NULL};
  for (size_t d = 0; d < 3; d++)
    if (list_item(o.bnames, d, bn[d], sizeof bn[d])) bnames[d] = bn[d];
  if (!bnames[0]) { kt_usage_error("bad --block-size-names '%s'", o.bnames); rc = 2; goto out; }

  /* The union of the keys, in file order. */
  size_t total = 0;
  for (size_t i = 0; i < nfiles; i++) total += files[i].nconfigs;
  cfgs = calloc(total ? total : 1, sizeof *cfgs);
  km.cap = 16;
  while (km.cap < 2 * total + 16) km.cap *= 2;
  km.slot = malloc(km.cap * sizeof *km.slot);
  if (!cfgs || !km.slot) { cli_error("out of memory"); goto out; }
  for (size_t s = 0; s < km.cap; s++) km.slot[s] = -1;
  for (size_t i = 0; i < nfiles; i++) {
    for (size_t j = 0; j < files[i].nconfigs; j++) {
      const ds_kt_config *e = &files[i].configs[j];
      size_t s = (size_t)(hash_str(e->key) & (km.cap - 1));
      while (km.slot[s] >= 0 && strcmp(cfgs[km.slot[s]].key, e->key)) s = (s + 1) & (km.cap - 1);
      kt_cfg *k;
      if (km.slot[s] < 0) {
        km.slot[s] = (long)ncfg;
        k = &cfgs[ncfg++];
        k->key = e->key;
        if (!(k->in = calloc(nfiles, sizeof *k->in))) { cli_error("out of memory"); goto out; }
      } else {
        k = &cfgs[km.slot[s]];
      }
      k->in[i] = e;
      if (!k->def && !e->failed) { k->def = &files[i]; k->defc = e; }
    }
  }
  /* Skipped: failed on every GPU that tried it.  Reported by reason. */
  size_t nskipped = 0, nvalid = 0;
  for (size_t i = 0; i < ncfg; i++) {
    if (cfgs[i].def) { nvalid++; continue; }
    nskipped++;
  }
  for (size_t i = 0; i < nfiles; i++) {
    /* one line per file and failure reason, listing the keys */
    for (size_t j = 0; j < files[i].nconfigs; j++) {
      const ds_kt_config *e = &files[i].configs[j];
      if (!e->failed) continue;
      int seen = 0;
      for (size_t q = 0; q < j && !seen; q++)
        seen = files[i].configs[q].failed && !strcmp(files[i].configs[q].failed, e->failed);
      if (seen) continue;
      size_t cnt = 0;
      for (size_t q = j; q < files[i].nconfigs; q++)
        cnt += files[i].configs[q].failed && !strcmp(files[i].configs[q].failed, e->failed);
      fprintf(stderr, "kcast: %s: %zu configuration%s skipped (%s on %s):", operands[i],
              cnt, cnt == 1 ? "" : "s", e->failed, gpus[i]);
      for (size_t q = j; q < files[i].nconfigs; q++)
        if (files[i].configs[q].failed && !strcmp(files[i].configs[q].failed, e->failed))
          fprintf(stderr, " %s", files[i].configs[q].key);
      fputc('\n', stderr);
    }
  }
  /* The chosen configurations: all valid ones, or a seeded sample. */
  size_t *chosen = malloc((nvalid ? nvalid : 1) * sizeof *chosen), nch = 0;
  if (!chosen) { cli_error("out of memory"); goto out; }
  for (size_t i = 0; i < ncfg; i++)
    if (cfgs[i].def) chosen[nch++] = i;
  if (o.configs && o.configs < nch) {
    uint64_t st = o.seed;
    for (size_t i = nch - 1; i > 0; i--) {
      size_t j = (size_t)(mix(&st) % (i + 1));
      size_t t = chosen[i];
      chosen[i] = chosen[j];
      chosen[j] = t;
    }
    nch = o.configs;
    qsort(chosen, nch, sizeof *chosen, cmp_size);
  }
  for (size_t q = 0; q < nch; q++) {
    kt_cfg *k = &cfgs[chosen[q]];
    char why[400];
    if (geometry(&o, ps, k->def, k->defc, k->grid, k->block, why, sizeof why)) {
      cli_error("%s: configuration %s: %s", operands[0], k->key, why);
      free(chosen);
      goto out;
    }
  }

  /* Phase 1: launches and times, one transaction. */
  struct stat sbo;
  int existed = stat(o.out, &sbo) == 0;
  {
    char err[1200];
    if (ds_open(o.out, DS_CREATE, &db, err, sizeof err)) {
      cli_error("%s", err);
      free(chosen);
      goto out;
    }
  }
  cmdline = join_args(argc, argv);
  size_t ntimes = 0, nreused = 0;
  if (ds_begin(db) || ds_record_run(db, cmdline, NULL)) goto dberr_chosen;
  for (size_t i = 0; i < nfiles; i++) {
    ds_gpu g;
    cli_gpu_row(gpus[i], files[i].device_name, &g);
    if (ds_upsert_gpu(db, &g)) goto dberr_chosen;
  }
  for (size_t q = 0; q < nch; q++) {
    kt_cfg *k = &cfgs[chosen[q]];
    int64_t id = 0;
    int found = ds_find_launch(db, app, k->key, 0, &id);
    if (found < 0) goto dberr_chosen;
    ds_launch l = {0};
    l.app = app;
    l.dataset = k->key;
    l.kernel = kname;
    memcpy(l.grid, k->grid, sizeof l.grid);
    memcpy(l.block, k->block, sizeof l.block);
    l.shmem = (int64_t)L.cfg.shared_bytes;
    l.source = KT_SOURCE;
    feat_vec have;
    feat_init(&have);
    char *stored_kernel = NULL;
    if (found) {
      /* The stored launch must have this import's geometry; it keeps its
         kernel name (the compiled one, once it has features). */
      ds_iter *it = NULL;
      ds_launch s;
      int64_t sid;
      int r;
      if (ds_iter_launches(db, app, k->key, &it)) goto dberr_chosen;
      while ((r = ds_iter_next(it, &sid, &s)) == 1) {
        if (sid != id) continue;
        if (memcmp(s.grid, k->grid, sizeof s.grid) || memcmp(s.block, k->block, sizeof s.block)) {
          cli_error("%s: launch (%s, %s) is stored with grid %u,%u,%u block %u,%u,%u; this import"
                    " makes grid %u,%u,%u block %u,%u,%u (another problem size or divisors: use"
                    " another --app)", o.out, app, k->key, s.grid[0], s.grid[1], s.grid[2],
                    s.block[0], s.block[1], s.block[2], k->grid[0], k->grid[1], k->grid[2],
                    k->block[0], k->block[1], k->block[2]);
          ds_iter_free(it);
          goto fail_chosen;
        }
        if (!(stored_kernel = strdup(s.kernel))) r = -1;
        break;
      }
      ds_iter_free(it);
      if (r < 0) goto dberr_chosen;
      if (stored_kernel) l.kernel = stored_kernel;
      if (ds_get_features(db, id, &have)) { free(stored_kernel); goto dberr_chosen; }
    }
    int wrc = ds_insert_launch(db, &l, NULL, &k->id);
    free(stored_kernel);
    if (wrc) { feat_free(&have); goto dberr_chosen; }
    k->need = o.source && have.n == 0;
    nreused += o.source && have.n > 0;
    feat_free(&have);
    for (size_t i = 0; i < nfiles; i++) {
      const ds_kt_config *e = k->in[i];
      if (!e || e->failed) continue;
      for (size_t t = 0; t < e->ntimes; t++) {
        if (ds_insert_measurement(db, k->id, gpus[i], "time_ns", e->times_ms[t] * 1e6, (int)t,
                                  KT_TOOL))
          goto dberr_chosen;
        ntimes++;
      }
    }
  }
  if (ds_commit(db)) goto dberr_chosen;
  fprintf(stderr, "kcast: %s: %zu configurations, %zu time_ns values written\n", o.out, nch,
          ntimes);

  /* Phase 2: features. */
  size_t nfeat = 0, nfail = 0;
  w.todo = malloc((nch ? nch : 1) * sizeof *w.todo);
  if (!w.todo) { cli_error("out of memory"); free(chosen); goto out; }
  for (size_t q = 0; q < nch; q++)
    if (cfgs[chosen[q]].need) w.todo[w.ntodo++] = &cfgs[chosen[q]];
  free(chosen);
  chosen = NULL;
  if (w.ntodo) {
    size_t tlen = 0;
    FILE *sf = fopen(o.source, "rb");
    if (!sf) { cli_error("%s: %s", o.source, strerror(errno)); goto out; }
    sbuf sb = {0};
    char chunk[65536];
    size_t r;
    while ((r = fread(chunk, 1, sizeof chunk, sf)) > 0)
      if (sb_add(&sb, chunk, r)) { fclose(sf); free(sb.s); cli_error("out of memory"); goto out; }
    int bad = ferror(sf);
    fclose(sf);
    if (bad) { free(sb.s); cli_error("%s: read error", o.source); goto out; }
    if (!sb.s && sb_add(&sb, "", 0)) { cli_error("out of memory"); goto out; }
    text = sb.s;
    tlen = sb.n;
    w.o = &o;
    w.L = &L;
    w.text = text;
    w.len = tlen;
    w.kname = kname;
    w.names = bnames;
    w.threads = o.jobs > 1 ? 1 : L.cfg.threads;
    if (!(w.hoisted = include_lines(text))) { cli_error("out of memory"); goto out; }
    pthread_mutex_init(&w.mu, NULL);
    pthread_cond_init(&w.cv, NULL);
    w.sync = 1;
    /* The first configuration alone: source, options and arguments are
       checked once, and the kernel's own name is learnt.  A configuration
       that does not compile may be one the others do not share: up to
       three are tried before the source is called bad. */
    size_t probe = 0;
    for (; probe < w.ntodo && probe < 3 && !kname_alone; probe++) {
      kt_cfg *first = w.todo[probe];
      int frc = run_single(&w, first, &kname_alone);
      first->status = first->res;
      if (frc == 1) {
        cli_error("configuration %s: %s", first->key, first->err);
        rc = KCAST_EXIT_USAGE;
        goto out;
      }
    }
    if (!kname_alone) {
      cli_error("configuration %s: %s", w.todo[0]->key, w.todo[0]->err);
      goto out;
    }
    w.next = probe;
    w.done = probe;
    size_t rest = w.ntodo - probe;
    w.batch = o.batch ? o.batch : (rest + 2 * o.jobs - 1) / (2 * o.jobs);
    if (w.batch > KT_BATCH_MAX && !o.batch) w.batch = KT_BATCH_MAX;
    if (w.batch < 1) w.batch = 1;
    pthread_t *th = calloc(o.jobs, sizeof *th);
    size_t nth = 0;
    if (!th) { cli_error("out of memory"); goto out; }
    for (size_t t = 0; t < o.jobs && rest; t++)
      if (pthread_create(&th[nth], NULL, worker, &w) == 0) nth++;
    if (!nth && rest) worker(&w);
    cli_progress pr;
    cli_progress_init(&pr, "kcast: features");
    size_t written = 0;
    int dbfail = 0;
    while (written < w.ntodo && !dbfail) {
      /* Groups finish out of order; write, in order, every configuration
         whose group is done. */
      pthread_mutex_lock(&w.mu);
      while (w.todo[written]->status == 0) pthread_cond_wait(&w.cv, &w.mu);
      size_t end = written;
      while (end < w.ntodo && w.todo[end]->status != 0) end++;
      pthread_mutex_unlock(&w.mu);
      if (ds_begin(db)) dbfail = 1;
      for (size_t q = written; q < end && !dbfail; q++) {
        kt_cfg *k = w.todo[q];
        if (k->status != 1) continue;
        ds_launch l = {0};
        l.app = app;
        l.dataset = k->key;
        l.kernel = kname_alone;
        memcpy(l.grid, k->grid, sizeof l.grid);
        memcpy(l.block, k->block, sizeof l.block);
        l.shmem = (int64_t)L.cfg.shared_bytes;
        l.source = KT_SOURCE;
        if (ds_insert_launch(db, &l, &k->feats, NULL)) dbfail = 1;
      }
      if (!dbfail && ds_commit(db)) dbfail = 1;
      if (dbfail) {
        cli_error("%s", ds_errmsg(db));
        ds_rollback(db);
        pthread_mutex_lock(&w.mu);
        w.stop = 1;
        pthread_mutex_unlock(&w.mu);
        break;
      }
      for (size_t q = written; q < end; q++) {
        kt_cfg *k = w.todo[q];
        if (k->status == 1) {
          nfeat++;
        } else {
          nfail++;
          fprintf(stderr, "kcast: configuration %s: features failed: %s\n", k->key, k->err);
        }
        feat_free(&k->feats);
      }
      written = end;
      cli_progress_fn(&pr, (unsigned)written, (unsigned)w.ntodo);
    }
    for (size_t t = 0; t < nth; t++) pthread_join(th[t], NULL);
    free(th);
    if (dbfail) goto out;
  }
  printf("%s: %zu configurations of %s (app %s): %zu time_ns values on", o.out, nch, kname, app,
         ntimes);
  for (size_t i = 0; i < nfiles; i++) printf("%s %s", i ? "," : "", gpus[i]);
  if (o.source)
    printf("; features: %zu computed, %zu kept, %zu failed", nfeat, nreused, nfail);
  else
    printf("; no features (no --source)");
  if (nskipped) printf("; %zu skipped (failed on the GPU)", nskipped);
  if (w.batch_fallbacks)
    printf("; %zu group%s compiled one by one", w.batch_fallbacks,
           w.batch_fallbacks == 1 ? "" : "s");
  printf("\n");
  rc = nch && nfail == w.ntodo && w.ntodo ? KCAST_EXIT_USER : KCAST_EXIT_OK;
  goto out;

dberr_chosen:
  cli_error("%s", ds_errmsg(db));
fail_chosen:
  ds_rollback(db);
  free(chosen);
  rc = KCAST_EXIT_USER;
  ds_close(db);
  db = NULL;
  if (!existed) remove(o.out);
out:
  if (w.sync) {
    pthread_cond_destroy(&w.cv);
    pthread_mutex_destroy(&w.mu);
  }
  for (size_t i = 0; w.todo && i < w.ntodo; i++) {
    feat_free(&w.todo[i]->feats);
  }
  for (size_t i = 0; cfgs && i < ncfg; i++) {
    free(cfgs[i].in);
    free(cfgs[i].err);
  }
  free(cfgs);
  free(km.slot);
  free(w.todo);
  free(w.hoisted);
  free(text);
  free(kname_alone);
  free(cmdline);
  for (size_t i = 0; gpus && i < nfiles; i++) free(gpus[i]);
  free(gpus);
  for (size_t i = 0; files && i < nfiles; i++) ds_kt_free(&files[i]);
  free(files);
  ds_close(db);
  free(o.consts);
  free(o.copts);
  cli_launch_free(&L);
  return rc;
}
