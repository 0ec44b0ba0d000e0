/*
 * ds_kt.c -- Kernel Tuner cachefiles (measured times of every configuration
 * of a tunable kernel) and the kernel's source become a trainable dataset
 * (datasets/ds_kt.h; `kcast dataset import-kerneltuner` is its shell).
 *
 * What a configuration becomes (docs/formats.md, "Kernel Tuner
 * cachefiles"): one launch (app = the given app or the kernel's name,
 * dataset = the configuration's key, lseq 0) whose grid and block follow
 * Kernel Tuner's rules (block = the block-size parameters, grid =
 * ceil(problem size / product of the grid divisors)), with one time_ns
 * measurement per entry of `times` on the GPU the file names, and -- with a
 * source -- the features kcast emulate gives for that launch of the kernel
 * compiled with the configuration's parameters prepended as #define lines,
 * as Kernel Tuner compiles it.
 *
 * Two phases:
 *  1. times: every chosen configuration's launch and measurements, of every
 *     cachefile, in one transaction (a bad file or a launch stored with
 *     another grid changes nothing);
 *  2. features, for the launches that have none yet: compiled and emulated
 *     by worker threads (ds_kt_compute), each finished group written in its
 *     own transaction.  An interrupted import keeps every group it finished
 *     and a rerun computes only what is missing (resumable); a second
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
 * options and the argument list once, and gives the kernel's name as
 * compiled on its own, the name every launch is stored under.
 *
 * Threads: the workers compile (child processes), parse and emulate (each
 * on its own emulated device, one OpenMP thread each when jobs > 1); only
 * the calling thread touches the dataset and calls back.
 */
#include "datasets/ds_kt.h"
#include "datasets/ds_kt_int.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "extractor/features.h"
#include "extractor/frontend.h"
#include "extractor/ptx.h"
#include "model/model.h"
#include "profiler/prof.h"

#include <cjson/cJSON.h>
#include <unistd.h>

#define KT_SOURCE "kcast dataset import-kerneltuner"
#define KT_TOOL "kernel_tuner"
#define KT_NS "kcast_cfg"
#define KT_BATCH_MAX 48
/* The user constant data ptxas takes in one module (its "File uses too
   much global constant data (..., 0x10000 max)"): every copy of a group
   holds the source's __constant__ arrays, so a group is cut to what fits
   (a 4,356-byte filter: 15 copies), else ptxas refuses the whole group
   and none of it gets ptxas.* columns. */
#define KT_CONST_BANK 65536
/* Finished features are handed to the caller (written) at least this
   often, in seconds: an interrupted import loses at most this much. */
#define KT_SAVE_S 2.0
/* Keys a summary line lists per reason (the rest are counted). */
#define KT_LIST_KEYS 8

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int kt_fail(char *err, size_t cap, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int kt_fail(char *err, size_t cap, int rc, const char *fmt, ...) {
  if (err && cap) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
  }
  return rc;
}

/* --------------------------------------------------------------- helpers -- */

/* Index of parameter name (n bytes) among names[0..np), or -1. */
static long param_index(const char *const *names, size_t np, const char *name, size_t n) {
  for (size_t j = 0; j < np; j++)
    if (strlen(names[j]) == n && !strncmp(names[j], name, n)) return (long)j;
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

int ds_kt_geometry(const ds_kt_grid *g, const char *const *names, const char *const *values,
                   size_t np, unsigned grid[3], unsigned block[3], char *why, size_t cap) {
  for (int d = 0; d < 3; d++) {
    char name[256];
    block[d] = 1;
    if (list_item(g->bnames, (size_t)d, name, sizeof name)) {
      long j = param_index(names, np, name, strlen(name));
      if (j >= 0) {
        long long v = int_value(values[j]);
        if (v < 1 || v > 1024) {
          snprintf(why, cap, "block size %s = '%s' is not an integer in 1..1024", name,
                   values[j]);
          return -1;
        }
        block[d] = (unsigned)v;
      }
    }
  }
  for (int d = 0; d < 3; d++) {
    double div = 1;
    const char *list = g->div[d];
    char item[256];
    for (size_t i = 0; list && list_item(list, i, item, sizeof item); i++) {
      long long v = int_value(item);
      if (v < 0) {
        long j = param_index(names, np, item, strlen(item));
        if (j < 0) {
          /* an unnamed block size is 1, as Kernel Tuner defines it */
          char bn[256];
          int is_block = 0;
          for (size_t b = 0; b < 3; b++)
            if (list_item(g->bnames, b, bn, sizeof bn) && !strcmp(bn, item)) is_block = 1;
          if (is_block) continue;
          snprintf(why, cap, "grid divisor '%s' is not a tuning parameter", item);
          return -1;
        }
        v = int_value(values[j]);
        if (v < 1) {
          snprintf(why, cap, "grid divisor %s = '%s' is not a positive integer", item,
                   values[j]);
          return -1;
        }
      }
      div *= (double)v;
    }
    double gd = ceil((double)g->psize[d] / div);
    if (gd < 1 || gd > (d ? 65535.0 : 2147483647.0)) {
      snprintf(why, cap, "grid dimension %c would be %.0f", "xyz"[d], gd);
      return -1;
    }
    grid[d] = (unsigned)gd;
  }
  return 0;
}

/* ------------------------------------------------------- the source text -- */

/* Shared state of a computation. */
typedef struct kt_work {
  const ds_kt_source *s;
  char *text;               /* the source (NUL-terminated) */
  size_t len;
  char *hoisted;            /* its #include lines */
  kt_scan scan;             /* what its copies rename, its unroll pragmas
                               and macros (ds_kt_src.c) */
  ds_kt_job **todo;         /* configurations, in order */
  size_t ntodo, next;       /* next: first not yet taken */
  size_t batch;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  size_t done;              /* configurations finished */
  int stop;                 /* take no more groups */
  size_t batch_fallbacks;   /* groups compiled one by one */
  int threads;              /* OpenMP threads per launch */
  int probing;              /* the first configurations, before the workers */
  uint64_t const_bytes;     /* the __constant__ bytes of one compiled copy
                               (learnt while probing) */
  size_t ptxas_failed;      /* ptxas runs that failed (under mu) */
  char ptxas_err[320];      /* the first one's message */
} kt_work;

/* The #define lines of c, as Kernel Tuner writes them: grid_size_x..z,
   the block sizes, every other parameter, kernel_tuner 1 -- but a
   loop_unroll_factor parameter as `constexpr int NAME = VALUE;` (it is a
   pragma's argument), none when it is 0 (the pragma is removed).  undef:
   the #undef lines that end a copy, with every macro the source defines. */
static int add_defines(kt_sbuf *b, const kt_work *w, const ds_kt_job *c, int undef) {
  static const char *const gnames[3] = {"grid_size_x", "grid_size_y", "grid_size_z"};
  const char *const *bn = w->s->bnames;
  int rc = 0;
  for (int d = 0; d < 3; d++) {
    rc |= undef ? kt_sb_printf(b, "#undef %s\n", gnames[d])
                : kt_sb_printf(b, "#define %s %u\n", gnames[d], c->grid[d]);
  }
  for (int d = 0; d < 3; d++)
    if (bn[d])
      rc |= undef ? kt_sb_printf(b, "#undef %s\n", bn[d])
                  : kt_sb_printf(b, "#define %s %u\n", bn[d], c->block[d]);
  for (size_t j = 0; j < c->nparams; j++) {
    int is_block = 0;
    for (int d = 0; d < 3; d++)
      if (bn[d] && !strcmp(bn[d], c->names[j])) is_block = 1;
    if (is_block) continue;
    if (kt_is_unroll(c->names[j])) {
      if (!undef && strcmp(c->values[j], "0"))
        rc |= kt_sb_printf(b, "constexpr int %s = %s;\n", c->names[j], c->values[j]);
      continue;
    }
    rc |= undef ? kt_sb_printf(b, "#undef %s\n", c->names[j])
                : kt_sb_printf(b, "#define %s %s\n", c->names[j], c->values[j]);
  }
  rc |= undef ? kt_sb_printf(b, "#undef kernel_tuner\n")
              : kt_sb_printf(b, "#define kernel_tuner 1\n");
  for (size_t m = 0; undef && m < w->scan.nmacros; m++)
    rc |= kt_sb_printf(b, "#undef %s\n", w->scan.macros[m]);
  return rc;
}

/* The source of one configuration, compiled alone. */
static char *single_text(const kt_work *w, const ds_kt_job *c, size_t *len) {
  kt_sbuf b = {0};
  int rc = add_defines(&b, w, c, 0);
  rc |= kt_sb_printf(&b, "#line 1 \"");
  rc |= kt_sb_cstr(&b, w->s->path);
  rc |= kt_sb_printf(&b, "\"\n");
  rc |= kt_copy_text(&b, w->text, w->len, &w->scan, NULL, c->names, c->values, c->nparams);
  if (rc) { free(b.s); return NULL; }
  *len = b.n;
  return b.s;
}

/* One translation unit with configurations cs[0..n), each in namespace
   KT_NS<i> with its kernel and its extern "C" names renamed NAME__KT_NS<i>
   (ds_kt_src.c). */
static char *batch_text(const kt_work *w, ds_kt_job *const *cs, size_t n, size_t *len) {
  kt_sbuf b = {0};
  int rc = kt_sb_add(&b, w->hoisted, strlen(w->hoisted));
  for (size_t i = 0; i < n && !rc; i++) {
    char ns[32];
    snprintf(ns, sizeof ns, KT_NS "%zu", i);
    rc |= kt_sb_printf(&b, "namespace %s {\n", ns);
    rc |= add_defines(&b, w, cs[i], 0);
    rc |= kt_sb_printf(&b, "#line 1 \"");
    rc |= kt_sb_cstr(&b, w->s->path);
    rc |= kt_sb_printf(&b, "\"\n");
    rc |= kt_copy_text(&b, w->text, w->len, &w->scan, ns, cs[i]->names, cs[i]->values,
                       cs[i]->nparams);
    rc |= kt_sb_printf(&b, "\n");
    rc |= add_defines(&b, w, cs[i], 1);
    rc |= kt_sb_printf(&b, "}\n");
  }
  if (rc) { free(b.s); return NULL; }
  *len = b.n;
  return b.s;
}

/* The source's #include lines (hoisted above the copies of a batch). */
static char *include_lines(const char *text) {
  kt_sbuf b = {0};
  if (kt_sb_add(&b, "", 0)) return NULL;
  for (const char *l = text; *l;) {
    const char *e = strchr(l, '\n');
    size_t n = e ? (size_t)(e - l) : strlen(l);
    const char *p = l;
    while (p < l + n && (*p == ' ' || *p == '\t')) p++;
    if (p < l + n && *p == '#') {
      p++;
      while (p < l + n && (*p == ' ' || *p == '\t')) p++;
      if ((size_t)(l + n - p) >= 7 && !strncmp(p, "include", 7) &&
          (kt_sb_add(&b, l, n) || kt_sb_add(&b, "\n", 1))) {
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

void ds_kt_job_free(ds_kt_job *j) {
  if (!j) return;
  feat_free(&j->feats);
  free(j->err);
  j->err = NULL;
}

static void set_failed(ds_kt_job *c, const char *msg) {
  c->res = -1;
  free(c->err);
  c->err = strdup(msg && *msg ? msg : "failed");
}

static fe_options front_end(const kt_work *w) {
  fe_options fo = w->s->fo;
  fo.extra = w->s->copts;
  fo.nextra = w->s->ncopts;
  return fo;
}

/*
 * What ptxas says of the kernels of one compiled PTX text for each of the
 * source's architectures (ds_kt_source.ptxas_archs): one run a text, so a
 * group of configurations compiled together costs one ptxas run an
 * architecture.  An architecture ptxas cannot assemble for (CUDA 13 has no
 * sm_70) gives no columns, and the configurations keep their features.
 */
typedef struct kt_ptxas {
  fe_ptxas_kernel *k;       /* per architecture: the kernels, NULL on failure */
  size_t n;
} kt_ptxas;

static kt_ptxas *run_ptxas(kt_work *w, const char *ptx, size_t len) {
  size_t na = w->s->nptxas;
  if (!na) return NULL;
  kt_ptxas *pa = calloc(na, sizeof *pa);
  for (size_t a = 0; pa && a < na; a++) {
    char err[512];
    if (fe_ptxas(ptx, len, w->s->ptxas_archs[a], w->s->path, &pa[a].k, &pa[a].n, err,
                 sizeof err)) {
      pa[a].k = NULL;
      pa[a].n = 0;
      /* counted and the first named (ds_kt_stats): the configurations lack
         the columns, which a model trained on the others cannot take */
      pthread_mutex_lock(&w->mu);
      if (!w->ptxas_failed++)
        snprintf(w->ptxas_err, sizeof w->ptxas_err, "%.16s: %.280s", w->s->ptxas_archs[a], err);
      pthread_mutex_unlock(&w->mu);
    }
  }
  return pa;
}

/* The bytes of m's own __constant__ variables. */
static uint64_t const_bytes(const ptx_module *m) {
  uint64_t b = 0;
  for (uint32_t i = 0; i < m->nvars; i++)
    if (m->vars[i].space == PTX_SP_CONST && !m->vars[i].is_extern) b += m->vars[i].size;
  return b;
}

static void free_ptxas(const kt_work *w, kt_ptxas *pa) {
  for (size_t a = 0; pa && a < w->s->nptxas; a++) fe_ptxas_free(pa[a].k, pa[a].n);
  free(pa);
}

/* The static features of kernel k of m (static.*: the shared memory it
   declares, its registers by type, ...) and what ptxas reports for it
   (ptxas.sm_XY.*) into c's features, as kcast predict FILE adds them: the
   analytic estimate's residency needs the static shared memory and the
   registers, and its spills.  -1 on ENOMEM (c failed). */
static int add_static(const kt_work *w, ds_kt_job *c, ptx_module *m, const ptx_func *k,
                      const kt_ptxas *pa) {
  ptx_error perr;
  memset(&perr, 0, sizeof perr);
  int bad = feat_static(m, k, &c->feats, &perr) != 0;
  for (size_t a = 0; !bad && pa && a < w->s->nptxas; a++)
    for (size_t j = 0; j < pa[a].n && !bad; j++)
      if (pa[a].k[j].have && !strcmp(pa[a].k[j].name, k->name))
        bad = feat_ptxas(&pa[a].k[j], w->s->ptxas_archs[a], &c->feats) != 0;
  if (bad) {
    feat_free(&c->feats);
    set_failed(c, perr.msg[0] ? perr.msg : "out of memory");
    return -1;
  }
  return 0;
}

/* Emulate c as kernel k of em on dev (ns: its namespace or NULL).  Returns
   the emu_launch_args code. */
static int emulate(kt_work *w, ds_kt_job *c, emu_device *dev, emu_module *em, const ptx_func *k,
                   const char *ns) {
  char err[1100] = "";
  emu_launch_cfg cfg = w->s->cfg;
  memcpy(cfg.grid, c->grid, sizeof cfg.grid);
  memcpy(cfg.block, c->block, sizeof cfg.block);
  cfg.threads = w->threads;
  cfg.printf_out = stderr;
  feat_init(&c->feats);
  emu_stats st;
  int rc = emu_launch_args(dev, em, k, w->s->args, w->s->nargs, w->s->consts, w->s->nconsts, ns,
                           &cfg, &c->feats, &st, err, sizeof err);
  if (rc) {
    feat_free(&c->feats);
    set_failed(c, err);
  } else {
    c->res = 1;
  }
  return rc;
}

/* Compile, load and emulate c alone.  Returns 0, or the failure's code
   (1: arguments that fit no configuration; 2: no kernel of that name in
   the source; -1 otherwise). */
static int run_single(kt_work *w, ds_kt_job *c, char **kname_out) {
  char err[1100] = "";
  size_t tl = 0, pl = 0;
  char *src = single_text(w, c, &tl), *ptx = NULL;
  if (!src) { set_failed(c, "out of memory"); return -1; }
  fe_options fo = front_end(w);
  int rc = fe_cu_text_to_ptx(src, tl, w->s->path, &fo, &ptx, &pl, err, sizeof err);
  free(src);
  if (rc) { set_failed(c, err); return -1; }
  ptx_error perr;
  memset(&perr, 0, sizeof perr);
  ptx_module *m = ptx_parse(ptx, pl, w->s->path, &perr);
  if (!m) {
    set_failed(c, perr.msg[0] ? perr.msg : "cannot parse the PTX");
    free(ptx);
    return -1;
  }
  const ptx_func *k = single_kernel(m, w->s->kernel);
  if (w->probing && const_bytes(m) > w->const_bytes) w->const_bytes = const_bytes(m);
  emu_device *dev = NULL;
  emu_module *em = NULL;
  rc = -1;
  if (!k) {
    snprintf(err, sizeof err, "%s: no single kernel named %s in the compiled source (--kernel)",
             w->s->path, w->s->kernel);
    set_failed(c, err);
    rc = 2;
  } else if (!(dev = emu_device_new())) {
    set_failed(c, "out of memory");
  } else if (emu_module_load(dev, m, &em, err, sizeof err)) {
    set_failed(c, err);
  } else {
    rc = emulate(w, c, dev, em, k, NULL);
    if (!rc) {
      kt_ptxas *pa = run_ptxas(w, ptx, pl);
      if (add_static(w, c, m, k, pa)) rc = -1;
      free_ptxas(w, pa);
    }
    if (kname_out && !(*kname_out = strdup(k->name))) rc = -1;
  }
  emu_module_free(em);
  emu_device_free(dev);
  ptx_module_free(m);
  free(ptx);
  return rc;
}

/* c is finished: publish its result to the calling thread. */
static void publish(kt_work *w, ds_kt_job *c) {
  pthread_mutex_lock(&w->mu);
  c->status = c->res;
  w->done++;
  pthread_cond_broadcast(&w->cv);
  pthread_mutex_unlock(&w->mu);
}

/* One group: compiled at once when it has more than one configuration and
   that works, else one by one.  Each configuration is published as soon
   as it is emulated. */
static void run_group(kt_work *w, ds_kt_job **cs, size_t n) {
  char err[1100] = "";
  int grouped = 0;
  if (n > 1) {
    size_t tl = 0, pl = 0;
    char *src = batch_text(w, cs, n, &tl), *ptx = NULL;
    fe_options fo = front_end(w);
    ptx_module *m = NULL;
    emu_device *dev = NULL;
    emu_module *em = NULL;
    ptx_error perr;
    memset(&perr, 0, sizeof perr);
    if (src && !fe_cu_text_to_ptx(src, tl, w->s->path, &fo, &ptx, &pl, err, sizeof err) &&
        (m = ptx_parse(ptx, pl, w->s->path, &perr)) && (dev = emu_device_new()) &&
        !emu_module_load(dev, m, &em, err, sizeof err)) {
      const ptx_func **ks = calloc(n, sizeof *ks);
      int all = ks != NULL;
      for (size_t i = 0; all && i < n; i++)
        all = (ks[i] = batch_kernel(m, w->s->kernel, i)) != NULL;
      if (all) {
        grouped = 1;
        kt_ptxas *pa = run_ptxas(w, ptx, pl);
        for (size_t i = 0; i < n; i++) {
          char ns[32];
          snprintf(ns, sizeof ns, KT_NS "%zu", i);
          if (!emulate(w, cs[i], dev, em, ks[i], ns)) add_static(w, cs[i], m, ks[i], pa);
          publish(w, cs[i]);
        }
        free_ptxas(w, pa);
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
  for (size_t i = 0; !grouped && i < n; i++) {
    run_single(w, cs[i], NULL);
    publish(w, cs[i]);
  }
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
  }
}

/* The whole file at path (NUL-terminated) into *text; 0, or -1 with err. */
static int read_source(const char *path, char **text, size_t *len, char *err, size_t cap) {
  FILE *sf = fopen(path, "rb");
  if (!sf) return kt_fail(err, cap, -1, "%s: %s", path, strerror(errno));
  kt_sbuf sb = {0};
  char chunk[65536];
  size_t r;
  while ((r = fread(chunk, 1, sizeof chunk, sf)) > 0)
    if (kt_sb_add(&sb, chunk, r)) {
      fclose(sf);
      free(sb.s);
      return kt_fail(err, cap, -1, "out of memory");
    }
  int bad = ferror(sf);
  fclose(sf);
  if (bad) { free(sb.s); return kt_fail(err, cap, -1, "%s: read error", path); }
  if (!sb.s && kt_sb_add(&sb, "", 0)) return kt_fail(err, cap, -1, "out of memory");
  *text = sb.s;
  *len = sb.n;
  return 0;
}

int ds_kt_compute(const ds_kt_source *s, ds_kt_job **jobs, size_t n, ds_kt_done_fn done,
                  void *ctx, char **kname, ds_kt_stats *st, char *err, size_t cap) {
  kt_work w;
  memset(&w, 0, sizeof w);
  w.s = s;
  w.todo = jobs;
  w.ntodo = n;
  w.threads = s->jobs > 1 ? 1 : s->cfg.threads;
  *kname = NULL;
  if (st) memset(st, 0, sizeof *st);
  if (!n) return 0;
  int rc = -1;
  pthread_t *th = NULL;
  size_t nth = 0;
  if (!kt_is_identifier(s->kernel))
    return kt_fail(err, cap, 2, "kernel name '%.200s' is not a C identifier (the source's "
                   "kernel, as Kernel Tuner names it: --kernel)", s->kernel);
  if (read_source(s->path, &w.text, &w.len, err, cap)) return -1;
  if (!(w.hoisted = include_lines(w.text)) ||
      kt_scan_source(w.text, w.len, s->kernel, jobs[0]->names, jobs[0]->nparams, &w.scan)) {
    free(w.hoisted);
    free(w.text);
    return kt_fail(err, cap, -1, "out of memory");
  }
  pthread_mutex_init(&w.mu, NULL);
  pthread_cond_init(&w.cv, NULL);
  /* The first configuration alone: source, options and arguments are
     checked once, and the kernel's own name is learnt.  A configuration
     that does not compile may be one the others do not share: up to
     three are tried before the source is called bad. */
  size_t probe = 0;
  w.probing = 1;
  for (; probe < n && probe < 3 && !*kname; probe++) {
    ds_kt_job *first = jobs[probe];
    int frc = run_single(&w, first, kname);
    first->status = first->res;
    if (frc == 1 || frc == 2) {
      kt_fail(err, cap, frc, "configuration %s: %s", first->key, first->err);
      rc = frc;
      goto out;
    }
  }
  if (!*kname) {
    kt_fail(err, cap, -1, "configuration %s: %s", jobs[0]->key, jobs[0]->err);
    goto out;
  }
  w.probing = 0;
  w.next = probe;
  w.done = probe;
  size_t rest = n - probe;
  unsigned long jn = s->jobs ? s->jobs : 1;
  w.batch = s->batch ? s->batch : (rest + 2 * jn - 1) / (2 * jn);
  if (w.batch > KT_BATCH_MAX && !s->batch) w.batch = KT_BATCH_MAX;
  if (w.const_bytes && w.batch > KT_CONST_BANK / w.const_bytes)
    w.batch = KT_CONST_BANK / w.const_bytes; /* what ptxas takes in one module */
  if (w.batch < 1) w.batch = 1;
  th = calloc(jn, sizeof *th);
  if (!th) { kt_fail(err, cap, -1, "out of memory"); goto out; }
  for (size_t t = 0; t < jn && rest; t++)
    if (pthread_create(&th[nth], NULL, worker, &w) == 0) nth++;
  if (!nth && rest) worker(&w);
  /* Hand over what has finished, in any order, at least every KT_SAVE_S
     seconds and once more at the end. */
  ds_kt_job **batch = malloc(n * sizeof *batch);
  unsigned char *given = calloc(n, 1);
  size_t reported = 0;
  int stopped = 0, nomem = !batch || !given;
  double last = now_s();
  if (nomem) {
    kt_fail(err, cap, -1, "out of memory");
    stopped = 1;
    pthread_mutex_lock(&w.mu);
    w.stop = 1;
    pthread_mutex_unlock(&w.mu);
  }
  while (reported < n && !stopped) {
    pthread_mutex_lock(&w.mu);
    for (;;) {
      double t = now_s();
      if (w.done == n || (w.done > reported && t - last >= KT_SAVE_S)) break;
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      double wait = w.done > reported ? last + KT_SAVE_S - t : 1.0;
      if (wait < 0.001) wait = 0.001;
      long long nsec = ts.tv_nsec + (long long)(wait * 1e9);
      ts.tv_sec += (time_t)(nsec / 1000000000);
      ts.tv_nsec = (long)(nsec % 1000000000);
      pthread_cond_timedwait(&w.cv, &w.mu, &ts);
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
      if (jobs[i]->status != 0 && !given[i]) {
        given[i] = 1;
        batch[k++] = jobs[i];
      }
    pthread_mutex_unlock(&w.mu);
    reported += k;
    if (k && done && done(ctx, batch, k)) {
      pthread_mutex_lock(&w.mu);
      w.stop = 1;
      pthread_mutex_unlock(&w.mu);
      stopped = 1;
    }
    last = now_s();
  }
  free(batch);
  free(given);
  for (size_t t = 0; t < nth; t++) pthread_join(th[t], NULL);
  rc = nomem ? -1 : stopped ? -2 : 0;
out:
  if (st) {
    st->fallbacks = w.batch_fallbacks;
    st->ptxas_failed = w.ptxas_failed;
    snprintf(st->ptxas_err, sizeof st->ptxas_err, "%s", w.ptxas_err);
  }
  free(th);
  pthread_cond_destroy(&w.cv);
  pthread_mutex_destroy(&w.mu);
  free(w.hoisted);
  free(w.text);
  kt_scan_free(&w.scan);
  if (rc && rc != -2) {
    free(*kname);
    *kname = NULL;
  }
  return rc;
}

/* ------------------------------------------------------------ the import -- */

int ds_kt_gpu_row(const char *key, const char *device, ds_gpu *g) {
  memset(g, 0, sizeof *g);
  snprintf(g->name, sizeof g->name, "%s", key);
  const an_gpu *t = an_gpu_find(device);
  if (!t) t = an_gpu_find(key);
  if (!t) return 0;
  g->cc_major = t->cc_major;
  g->cc_minor = t->cc_minor;
  g->sm_count = t->sms;
  g->sm_clock_mhz = t->boost_mhz;
  g->mem_bytes = (int64_t)(t->mem_gb * 1e9);
  g->mem_bandwidth_gbs = t->mem_bw_gbs;
  g->l2_bytes = (int64_t)(t->l2_mb * 1048576.0);
  g->tdp_w = t->tdp_w;
  return 1;
}

void ds_kt_import_report_free(ds_kt_import_report *r) {
  if (!r) return;
  for (size_t i = 0; i < r->nfails; i++) {
    free(r->fails[i].key);
    free(r->fails[i].gpu);
    free(r->fails[i].reason);
  }
  free(r->fails);
  free(r->kernel);
  free(r->app);
  for (size_t i = 0; r->gpus && i < r->ngpus; i++) free(r->gpus[i]);
  free(r->gpus);
  memset(r, 0, sizeof *r);
}

/* One configuration to import (the union of the cachefiles' keys). */
typedef struct kt_cfg {
  const char *key;          /* owned by the first file holding it */
  const ds_kt_config **in;  /* per file: the entry, or NULL */
  const ds_kt_file *def;    /* the file whose parameters define it */
  const ds_kt_config *defc; /* its entry there */
  int64_t id;               /* launch id once written */
  int need;                 /* features to compute */
  ds_kt_job job;            /* its computation */
} kt_cfg;

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

static void note(const ds_kt_import_opts *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void note(const ds_kt_import_opts *o, const char *fmt, ...) {
  if (!o->note) return;
  char line[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  o->note(o->ctx, line);
}

/* The tuning parameters of job j with a numeric value, as tune.NAME
   features, into v (set or overwritten); -1 out of memory. */
int ds_kt_tune_features(const ds_kt_job *j, feat_vec *v) {
  for (size_t i = 0; i < j->nparams; i++) {
    char *e, name[300];
    double x = strtod(j->values[i], &e);
    if (*e || e == j->values[i] || !isfinite(x)) continue;
    snprintf(name, sizeof name, DS_TUNE_PREFIX "%s", j->names[i]);
    if (feat_set(v, name, x)) return -1;
  }
  return 0;
}

/* Does v hold a feature other than the tuning parameters? */
static int has_kcast_features(const feat_vec *v) {
  for (size_t i = 0; i < v->n; i++)
    if (!ds_is_tune_feature(v->names[i])) return 1;
  return 0;
}

/* Record a failed configuration in the report; -1 out of memory. */
static int add_failure(ds_kt_import_report *r, const char *key, const char *gpu,
                       const char *reason) {
  if (r->nfails % 64 == 0) {
    ds_kt_failure *f = realloc(r->fails, (r->nfails + 64) * sizeof *f);
    if (!f) return -1;
    r->fails = f;
  }
  ds_kt_failure *f = &r->fails[r->nfails];
  f->key = strdup(key);
  f->gpu = gpu ? strdup(gpu) : NULL;
  f->reason = strdup(reason ? reason : "failed");
  if (!f->key || (gpu && !f->gpu) || !f->reason) {
    free(f->key);
    free(f->gpu);
    free(f->reason);
    return -1;
  }
  r->nfails++;
  return 0;
}

/* A failure message without the names grouped compilation gives (the
   __kcast_cfgN suffixes, kcast_cfgN:: qualifiers) into out; with digits
   1, digit runs become '#' (what a group of alike messages shares). */
static void plain_reason(const char *msg, int digits, char *out, size_t cap) {
  size_t n = 0;
  for (const char *p = msg; *p && n + 1 < cap;) {
    if (!strncmp(p, "__" KT_NS, 2 + strlen(KT_NS)) && isdigit((unsigned char)p[2 + strlen(KT_NS)])) {
      p += 2 + strlen(KT_NS);
      while (isdigit((unsigned char)*p)) p++;
      continue;
    }
    if (!strncmp(p, KT_NS, strlen(KT_NS)) && isdigit((unsigned char)p[strlen(KT_NS)])) {
      const char *q = p + strlen(KT_NS);
      while (isdigit((unsigned char)*q)) q++;
      if (q[0] == ':' && q[1] == ':') { p = q + 2; continue; }
    }
    if (digits && isdigit((unsigned char)*p)) {
      out[n++] = '#';
      while (isdigit((unsigned char)*p)) p++;
      continue;
    }
    out[n++] = *p == '\n' ? ' ' : *p;
    p++;
  }
  out[n] = 0;
}

/* The summary of the configurations whose features failed: how many, and
   per kind of message (alike but for numbers) the count, one message and
   the first keys; at most 10 kinds (the rest counted). */
static void failure_summary(const ds_kt_import_opts *o, const ds_kt_import_report *r) {
  size_t nf = 0;
  for (size_t i = 0; i < r->nfails; i++) nf += r->fails[i].gpu == NULL;
  if (!nf) return;
  note(o, "kcast: %zu configuration%s' features failed (the times are kept; running the import "
       "again retries them%s):", nf, nf == 1 ? "" : "s",
       o->failures ? "; every one is in the --failures file" : "");
  enum { MAXG = 10 };
  char sig[MAXG][512];
  size_t first[MAXG], cnt[MAXG], ng = 0, other = 0;
  for (size_t i = 0; i < r->nfails; i++) {
    if (r->fails[i].gpu) continue;
    char s[512];
    plain_reason(r->fails[i].reason, 1, s, sizeof s);
    size_t g = 0;
    while (g < ng && strcmp(sig[g], s)) g++;
    if (g == ng) {
      if (ng == MAXG) { other++; continue; }
      snprintf(sig[ng], sizeof sig[ng], "%s", s);
      first[ng] = i;
      cnt[ng++] = 0;
    }
    cnt[g]++;
  }
  for (size_t g = 0; g < ng; g++) {
    char msg[700];
    plain_reason(r->fails[first[g]].reason, 0, msg, sizeof msg);
    kt_sbuf keys = {0};
    size_t shown = 0;
    for (size_t i = first[g]; i < r->nfails && shown < KT_LIST_KEYS; i++) {
      if (r->fails[i].gpu) continue;
      char s[512];
      plain_reason(r->fails[i].reason, 1, s, sizeof s);
      if (strcmp(s, sig[g])) continue;
      kt_sb_printf(&keys, "%s%s", shown ? " " : "", r->fails[i].key);
      shown++;
    }
    if (cnt[g] > shown) kt_sb_printf(&keys, " and %zu more", cnt[g] - shown);
    note(o, "kcast:   %zu x %s (%s)", cnt[g], msg, keys.s ? keys.s : "");
    free(keys.s);
  }
  if (other) note(o, "kcast:   %zu more with other messages", other);
}

/* Phase 2's writer: the finished configurations' features, one
   transaction per call. */
typedef struct kt_writer {
  const ds_kt_import_opts *o;
  ds_db *db;
  const char *app;
  char **kname_alone;
  size_t total, written;
  ds_kt_import_report *r;
  int dbfail;
  char *err;
  size_t cap;
} kt_writer;

static int write_done(void *ctx, ds_kt_job *const *done, size_t n) {
  kt_writer *wr = ctx;
  int dbfail = ds_begin(wr->db) != 0;
  for (size_t q = 0; q < n && !dbfail; q++) {
    ds_kt_job *k = done[q];
    if (k->status != 1) continue;
    ds_launch l = {0};
    l.app = wr->app;
    l.dataset = k->key;
    l.kernel = *wr->kname_alone;
    memcpy(l.grid, k->grid, sizeof l.grid);
    memcpy(l.block, k->block, sizeof l.block);
    l.shmem = (int64_t)wr->o->src.cfg.shared_bytes;
    l.source = KT_SOURCE;
    if (ds_kt_tune_features(k, &k->feats) || ds_insert_launch(wr->db, &l, &k->feats, NULL)) dbfail = 1;
  }
  if (!dbfail && ds_commit(wr->db)) dbfail = 1;
  if (dbfail) {
    kt_fail(wr->err, wr->cap, 1, "%s", ds_errmsg(wr->db));
    ds_rollback(wr->db);
    wr->dbfail = 1;
    return 1;
  }
  for (size_t q = 0; q < n; q++) {
    ds_kt_job *k = done[q];
    if (k->status == 1) {
      wr->r->computed++;
    } else {
      wr->r->failed++;
      if (add_failure(wr->r, k->key, NULL, k->err)) {
        kt_fail(wr->err, wr->cap, 1, "out of memory");
        wr->dbfail = 1;
        return 1;
      }
    }
    feat_free(&k->feats);
  }
  wr->written += n;
  if (wr->o->progress) wr->o->progress(wr->o->ctx, (unsigned)wr->written, (unsigned)wr->total);
  return 0;
}

int ds_kt_import(const ds_kt_import_opts *o, ds_kt_import_report *r, char *err, size_t cap) {
  memset(r, 0, sizeof *r);
  size_t nfiles = o->nfiles;
  ds_kt_file *files = NULL;
  kt_cfg *cfgs = NULL;
  size_t ncfg = 0;
  ds_db *db = NULL;
  char *kname_alone = NULL;
  char **gpus = NULL;
  ds_kt_job **todo = NULL;
  size_t ntodo = 0;
  size_t *chosen = NULL;
  key_map km = {0, NULL};
  int existed = 0;
  const char *source = o->src.path;

  /* Read every cachefile before touching the dataset. */
  int rc = 1;
  files = calloc(nfiles ? nfiles : 1, sizeof *files);
  gpus = calloc(nfiles ? nfiles : 1, sizeof *gpus);
  if (!files || !gpus) { kt_fail(err, cap, 1, "out of memory"); goto out; }
  for (size_t i = 0; i < nfiles; i++) {
    if (ds_kt_read(o->files[i], &files[i], err, cap)) goto out;
    if (files[i].unterminated)
      note(o, "kcast: %s: unterminated (a tuning run still writing, or interrupted);"
           " its %zu complete entries are read", o->files[i], files[i].nconfigs);
    if (i && strcmp(files[i].kernel_name, files[0].kernel_name) && !o->kernel) {
      kt_fail(err, cap, 1, "%s: kernel %s, but %s holds kernel %s (one kernel per import, or "
              "--kernel)", o->files[i], files[i].kernel_name, o->files[0], files[0].kernel_name);
      goto out;
    }
    char key[128];
    if (!o->gpu && !files[i].device_name[0]) {
      kt_fail(err, cap, 1, "%s: device_name is empty: the GPU of its times is unknown (give "
              "--gpu NAME)", o->files[i]);
      goto out;
    }
    if (o->gpu) snprintf(key, sizeof key, "%s", o->gpu);
    else prof_gpu_key(files[i].device_name, key, sizeof key);
    if (!(gpus[i] = strdup(key))) { kt_fail(err, cap, 1, "out of memory"); goto out; }
    for (size_t j = 0; j < i; j++)
      if (!strcmp(gpus[j], gpus[i])) {
        kt_fail(err, cap, 1, "%s and %s were both measured on %s: import one of them, or name "
                "the GPUs", o->files[j], o->files[i], gpus[i]);
        goto out;
      }
  }
  const char *kname = o->kernel ? o->kernel : files[0].kernel_name;
  const char *app = o->app ? o->app : kname;
  ds_kt_grid grid = o->grid;
  if (!grid.psize[0]) {
    for (size_t d = 0; d < 3; d++) grid.psize[d] = 1;
    for (size_t i = 0; i < nfiles; i++) {
      if (!files[i].ndims) {
        kt_fail(err, cap, 1, "%s: problem_size is not a list of numbers; give --problem-size",
                o->files[i]);
        goto out;
      }
      int64_t q[3] = {1, 1, 1};
      memcpy(q, files[i].problem_size, files[i].ndims * sizeof *q);
      if (i && memcmp(q, grid.psize, sizeof q)) {
        kt_fail(err, cap, 1, "%s: problem size differs from %s's; import them separately (--app)",
                o->files[i], o->files[0]);
        goto out;
      }
      memcpy(grid.psize, q, sizeof grid.psize);
    }
  }
  if (!(r->kernel = strdup(kname)) || !(r->app = strdup(app))) {
    kt_fail(err, cap, 1, "out of memory");
    goto out;
  }

  /* The union of the keys, in file order. */
  size_t total = 0;
  for (size_t i = 0; i < nfiles; i++) total += files[i].nconfigs;
  cfgs = calloc(total ? total : 1, sizeof *cfgs);
  km.cap = 16;
  while (km.cap < 2 * total + 16) km.cap *= 2;
  km.slot = malloc(km.cap * sizeof *km.slot);
  if (!cfgs || !km.slot) { kt_fail(err, cap, 1, "out of memory"); goto out; }
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
        if (!(k->in = calloc(nfiles, sizeof *k->in))) {
          kt_fail(err, cap, 1, "out of memory");
          goto out;
        }
      } else {
        k = &cfgs[km.slot[s]];
      }
      k->in[i] = e;
      if (!k->def && !e->failed) { k->def = &files[i]; k->defc = e; }
    }
  }
  /* Skipped: failed on every GPU that tried it.  Reported by reason. */
  size_t nvalid = 0;
  for (size_t i = 0; i < ncfg; i++) {
    if (cfgs[i].def) { nvalid++; continue; }
    r->skipped++;
  }
  for (size_t i = 0; i < nfiles; i++) {
    /* one line per file and failure reason: the count and the first keys */
    enum { MAXR = 32 };
    const char *why[MAXR];
    size_t cnt[MAXR], nr = 0, other = 0;
    kt_sbuf keys[MAXR];
    memset(keys, 0, sizeof keys);
    int lrc = 0;
    for (size_t j = 0; j < files[i].nconfigs && !lrc; j++) {
      const ds_kt_config *e = &files[i].configs[j];
      if (!e->failed) continue;
      if (add_failure(r, e->key, gpus[i], e->failed)) lrc = -1;
      size_t q = 0;
      while (q < nr && strcmp(why[q], e->failed)) q++;
      if (q == nr) {
        if (nr == MAXR) { other++; continue; }
        why[nr] = e->failed;
        cnt[nr++] = 0;
      }
      if (cnt[q]++ < KT_LIST_KEYS) lrc = kt_sb_printf(&keys[q], " %s", e->key);
    }
    for (size_t q = 0; q < nr && !lrc; q++) {
      if (cnt[q] > KT_LIST_KEYS) kt_sb_printf(&keys[q], " and %zu more", cnt[q] - KT_LIST_KEYS);
      note(o, "kcast: %s: %zu configuration%s skipped (%s on %s):%s", o->files[i], cnt[q],
           cnt[q] == 1 ? "" : "s", why[q], gpus[i], keys[q].s ? keys[q].s : "");
    }
    if (other) note(o, "kcast: %s: %zu more skipped for other reasons", o->files[i], other);
    for (size_t q = 0; q < MAXR; q++) free(keys[q].s);
    if (lrc) { kt_fail(err, cap, 1, "out of memory"); goto out; }
  }
  /* The chosen configurations: all valid ones, or a seeded sample. */
  size_t nch = 0;
  chosen = malloc((nvalid ? nvalid : 1) * sizeof *chosen);
  if (!chosen) { kt_fail(err, cap, 1, "out of memory"); goto out; }
  for (size_t i = 0; i < ncfg; i++)
    if (cfgs[i].def) chosen[nch++] = i;
  if (o->configs && o->configs < nch) {
    uint64_t st = o->seed;
    for (size_t i = nch - 1; i > 0; i--) {
      size_t j = (size_t)(mix(&st) % (i + 1));
      size_t t = chosen[i];
      chosen[i] = chosen[j];
      chosen[j] = t;
    }
    nch = o->configs;
    qsort(chosen, nch, sizeof *chosen, cmp_size);
  }
  for (size_t q = 0; q < nch; q++) {
    kt_cfg *k = &cfgs[chosen[q]];
    char why[400];
    ds_kt_job *j = &k->job;
    j->key = k->key;
    j->nparams = k->def->nparams;
    j->names = (const char *const *)k->def->params;
    j->values = (const char *const *)k->defc->values;
    if (ds_kt_geometry(&grid, j->names, j->values, j->nparams, j->grid, j->block, why,
                       sizeof why)) {
      kt_fail(err, cap, 1, "%s: configuration %s: %s", o->files[0], k->key, why);
      goto out;
    }
  }

  /* Phase 1: launches and times, one transaction. */
  struct stat sbo;
  existed = stat(o->out, &sbo) == 0;
  if (ds_open(o->out, DS_CREATE, &db, err, cap)) goto out;
  size_t ntimes = 0, nreused = 0;
  if (ds_begin(db) || ds_record_run(db, o->command, NULL)) goto dberr;
  for (size_t i = 0; i < nfiles; i++) {
    ds_gpu g;
    if (!ds_kt_gpu_row(gpus[i], files[i].device_name, &g))
      note(o, "kcast: note: GPU %s (%s) is not in the GPU table: train and cv on its times "
           "leave out the analytic base and the occupancy features (KCAST_GPUS=FILE adds it, "
           "docs/gpus.md)", gpus[i], files[i].device_name);
    if (ds_upsert_gpu(db, &g)) goto dberr;
  }
  for (size_t q = 0; q < nch; q++) {
    kt_cfg *k = &cfgs[chosen[q]];
    int64_t id = 0;
    int found = ds_find_launch(db, app, k->key, 0, &id);
    if (found < 0) goto dberr;
    ds_launch l = {0};
    l.app = app;
    l.dataset = k->key;
    l.kernel = kname;
    memcpy(l.grid, k->job.grid, sizeof l.grid);
    memcpy(l.block, k->job.block, sizeof l.block);
    l.shmem = (int64_t)o->src.cfg.shared_bytes;
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
      int itr;
      if (ds_iter_launches(db, app, k->key, &it)) goto dberr;
      while ((itr = ds_iter_next(it, &sid, &s)) == 1) {
        if (sid != id) continue;
        if (memcmp(s.grid, k->job.grid, sizeof s.grid) ||
            memcmp(s.block, k->job.block, sizeof s.block)) {
          kt_fail(err, cap, 1, "%s: launch (%s, %s) is stored with grid %u,%u,%u block "
                  "%u,%u,%u; this import makes grid %u,%u,%u block %u,%u,%u (another problem "
                  "size or divisors: use another --app)", o->out, app, k->key, s.grid[0],
                  s.grid[1], s.grid[2], s.block[0], s.block[1], s.block[2], k->job.grid[0],
                  k->job.grid[1], k->job.grid[2], k->job.block[0], k->job.block[1],
                  k->job.block[2]);
          ds_iter_free(it);
          goto fail_rollback;
        }
        if (!(stored_kernel = strdup(s.kernel))) itr = -1;
        break;
      }
      ds_iter_free(it);
      if (itr < 0) goto dberr;
      if (stored_kernel) l.kernel = stored_kernel;
      if (ds_get_features(db, id, &have)) { free(stored_kernel); goto dberr; }
    }
    /* the tuning parameters are tune.* features, beside what the launch
       has (its features, when a former import computed them) */
    int kcast = has_kcast_features(&have);
    size_t had = have.n;
    if (ds_kt_tune_features(&k->job, &have)) { free(stored_kernel); feat_free(&have); goto nomem_db; }
    int wrc = ds_insert_launch(db, &l, have.n > had || (had && !kcast) ? &have : NULL, &k->id);
    free(stored_kernel);
    if (wrc) { feat_free(&have); goto dberr; }
    k->need = source && !kcast;
    nreused += source && kcast;
    feat_free(&have);
    for (size_t i = 0; i < nfiles; i++) {
      const ds_kt_config *e = k->in[i];
      if (!e || e->failed) continue;
      for (size_t t = 0; t < e->ntimes; t++) {
        if (ds_insert_measurement(db, k->id, gpus[i], "time_ns", e->times_ms[t] * 1e6, (int)t,
                                  KT_TOOL))
          goto dberr;
        ntimes++;
      }
    }
  }
  if (ds_commit(db)) goto dberr;
  r->configs = nch;
  r->times = ntimes;
  r->kept = nreused;
  note(o, "kcast: %s: %zu configurations, %zu time_ns values written", o->out, nch, ntimes);

  /* Phase 2: features. */
  todo = malloc((nch ? nch : 1) * sizeof *todo);
  if (!todo) { kt_fail(err, cap, 1, "out of memory"); goto out; }
  for (size_t q = 0; q < nch; q++)
    if (cfgs[chosen[q]].need) todo[ntodo++] = &cfgs[chosen[q]].job;
  r->tried = ntodo;
  if (ntodo) {
    ds_kt_source src = o->src;
    src.kernel = kname;
    /* ptxas for each architecture of the files' GPUs (the registers,
       spills and static shared memory the estimate's residency needs) */
    char archbuf[16][16];
    const char *archs[16];
    if (!src.nptxas && !o->no_ptxas) {
      for (size_t i = 0; i < nfiles && src.nptxas < 16; i++) {
        const an_gpu *t = an_gpu_find(files[i].device_name);
        if (!t) t = an_gpu_find(gpus[i]);
        if (!t) continue;
        char a[16];
        snprintf(a, sizeof a, "sm_%d%d", t->cc_major, t->cc_minor);
        size_t j = 0;
        while (j < src.nptxas && strcmp(archs[j], a)) j++;
        if (j < src.nptxas) continue;
        snprintf(archbuf[src.nptxas], sizeof archbuf[0], "%s", a);
        archs[src.nptxas] = archbuf[src.nptxas];
        src.nptxas++;
      }
      src.ptxas_archs = archs;
    }
    kt_writer wr = {o, db, app, &kname_alone, ntodo, 0, r, 0, err, cap};
    ds_kt_stats st;
    int crc = ds_kt_compute(&src, todo, ntodo, write_done, &wr, &kname_alone, &st, err, cap);
    r->fallbacks = st.fallbacks;
    r->ptxas_failed = st.ptxas_failed;
    snprintf(r->ptxas_err, sizeof r->ptxas_err, "%s", st.ptxas_err);
    failure_summary(o, r);
    if (crc == 1) { rc = 2; goto out; } /* --arg fits no configuration: usage */
    if (crc) goto out;                  /* the kernel_name or --kernel: bad input */
  }
  rc = 0;
  goto out;

nomem_db:
  kt_fail(err, cap, 1, "out of memory");
  goto fail_rollback;
dberr:
  kt_fail(err, cap, 1, "%s", ds_errmsg(db));
fail_rollback:
  ds_rollback(db);
  ds_close(db);
  db = NULL;
  if (!existed) remove(o->out);
out:
  if (r->kernel && gpus) {
    r->gpus = gpus;
    r->ngpus = nfiles;
    gpus = NULL;
  }
  for (size_t i = 0; cfgs && i < ncfg; i++) {
    free(cfgs[i].in);
    ds_kt_job_free(&cfgs[i].job);
  }
  free(cfgs);
  free(chosen);
  free(km.slot);
  free(todo);
  free(kname_alone);
  for (size_t i = 0; gpus && i < nfiles; i++) free(gpus[i]);
  free(gpus);
  for (size_t i = 0; files && i < nfiles; i++) ds_kt_free(&files[i]);
  free(files);
  ds_close(db);
  return rc;
}

/* ------------------------------------------------------ a cachefile out -- */

/* A value as JSON: a number where the text reads as one, else a string. */
static cJSON *json_value(const char *v) {
  char *e;
  double x = strtod(v, &e);
  if (*v && !*e && isfinite(x)) return cJSON_CreateNumber(x);
  return cJSON_CreateString(v);
}

int ds_kt_write_cachefile(const char *path, const char *device, const char *kernel,
                          const int64_t psize[3], size_t pdims, int scalar,
                          const char *const *names, size_t nparams, const char *const *keys,
                          const char *const *values, const double *time_ms, size_t n, char *err,
                          size_t cap) {
  cJSON *root = cJSON_CreateObject();
  char *text = NULL, *tmp = NULL;
  int rc = -1;
  if (!root) goto nomem;
  if (!cJSON_AddStringToObject(root, "device_name", device) ||
      !cJSON_AddStringToObject(root, "kernel_name", kernel))
    goto nomem;
  if (scalar && pdims == 1) {
    if (!cJSON_AddNumberToObject(root, "problem_size", (double)psize[0])) goto nomem;
  } else {
    cJSON *ps = cJSON_AddArrayToObject(root, "problem_size");
    if (!ps) goto nomem;
    for (size_t d = 0; d < pdims; d++)
      if (!cJSON_AddItemToArray(ps, cJSON_CreateNumber((double)psize[d]))) goto nomem;
  }
  cJSON *tk = cJSON_AddArrayToObject(root, "tune_params_keys");
  cJSON *tp = cJSON_AddObjectToObject(root, "tune_params");
  if (!tk || !tp) goto nomem;
  for (size_t p = 0; p < nparams; p++) {
    if (!cJSON_AddItemToArray(tk, cJSON_CreateString(names[p]))) goto nomem;
    cJSON *vals = cJSON_AddArrayToObject(tp, names[p]);
    if (!vals) goto nomem;
    for (size_t i = 0; i < n; i++) {
      const char *v = values[i * nparams + p];
      int seen = 0;
      for (size_t q = 0; q < i && !seen; q++) seen = !strcmp(values[q * nparams + p], v);
      if (!seen && !cJSON_AddItemToArray(vals, json_value(v))) goto nomem;
    }
  }
  if (!cJSON_AddStringToObject(root, "objective", "time")) goto nomem;
  cJSON *cache = cJSON_AddObjectToObject(root, "cache");
  if (!cache) goto nomem;
  for (size_t i = 0; i < n; i++) {
    cJSON *e = cJSON_CreateObject();
    if (!e || !cJSON_AddItemToObject(cache, keys[i], e)) { cJSON_Delete(e); goto nomem; }
    for (size_t p = 0; p < nparams; p++)
      if (!cJSON_AddItemToObject(e, names[p], json_value(values[i * nparams + p]))) goto nomem;
    if (isnan(time_ms[i])) {
      if (!cJSON_AddStringToObject(e, "time", "RuntimeFailedConfig")) goto nomem;
    } else {
      cJSON *ts = NULL;
      if (!cJSON_AddNumberToObject(e, "time", time_ms[i]) ||
          !(ts = cJSON_AddArrayToObject(e, "times")) ||
          !cJSON_AddItemToArray(ts, cJSON_CreateNumber(time_ms[i])))
        goto nomem;
    }
    if (!cJSON_AddNumberToObject(e, "compile_time", 0) ||
        !cJSON_AddNumberToObject(e, "verification_time", 0) ||
        !cJSON_AddNumberToObject(e, "benchmark_time", isnan(time_ms[i]) ? 0 : time_ms[i]) ||
        !cJSON_AddNumberToObject(e, "strategy_time", 0) ||
        !cJSON_AddNumberToObject(e, "framework_time", 0))
      goto nomem;
  }
  if (!(text = cJSON_Print(root))) goto nomem;
  size_t pl = strlen(path);
  if (!(tmp = malloc(pl + 32))) goto nomem;
  snprintf(tmp, pl + 32, "%s.tmp.%ld", path, (long)getpid());
  FILE *f = fopen(tmp, "w");
  if (!f) { kt_fail(err, cap, -1, "%s: %s", tmp, strerror(errno)); goto out; }
  int bad = fputs(text, f) < 0 || fputc('\n', f) == EOF;
  bad |= fclose(f) != 0;
  if (bad || rename(tmp, path)) {
    kt_fail(err, cap, -1, "%s: %s", path, strerror(errno ? errno : EIO));
    remove(tmp);
    goto out;
  }
  rc = 0;
  goto out;
nomem:
  kt_fail(err, cap, -1, "%s: out of memory", path);
out:
  free(tmp);
  free(text);
  cJSON_Delete(root);
  return rc;
}
