/*
 * cli_kernel.c -- which kernel does the user mean?  The one rule that
 * `kcast extract --kernel K` and `kcast emulate --kernel K` share.
 *
 * K matches a mangled .entry name exactly, else a mangled name of the
 * same function (fe_same_function: a static kernel's _ZL name), else a
 * name read from the toolchain's demangling (fe_demangle): the whole
 * signature or the source name with its template arguments
 * ("gemm_tiled_kernel<16>", spaces not counted), else the source name
 * without them ("ns::k", "gemm_tiled_kernel"), else its last component
 * ("k").  A closer match takes precedence; more
 * than one match at the same level is an error that lists the candidates
 * (mangled and demangled), so a user never gets a kernel they did not mean.
 */
#include "cli/cli.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "extractor/features.h"
#include "extractor/frontend.h"
#include "extractor/ptx.h"
#include "model/model.h"

/* "MANGLED (DEMANGLED)" of each of n kernels, comma-separated (malloc'd). */
static char *name_list(const ptx_func **sel, long n) {
  size_t cap = 64;
  char **d = calloc((size_t)n + 1, sizeof *d);
  if (!d) return NULL;
  for (long i = 0; i < n; i++) {
    d[i] = fe_demangle(sel[i]->name);
    cap += strlen(sel[i]->name) + (d[i] ? strlen(d[i]) : 0) + 6;
  }
  char *list = malloc(cap);
  if (list) {
    size_t len = 0;
    list[0] = 0;
    for (long i = 0; i < n; i++)
      len += (size_t)snprintf(list + len, cap - len, "%s%s%s%s%s", i ? ", " : "", sel[i]->name,
                              d[i] ? " (" : "", d[i] ? d[i] : "", d[i] ? ")" : "");
  }
  for (long i = 0; i < n; i++) free(d[i]);
  free(d);
  return list;
}

static int is_kernel(const ptx_func *f) { return f->is_entry && f->has_body; }

long cli_select_kernels(const ptx_module *m, const char *want,
                        const ptx_func **sel, const char *path) {
  long n = 0;
  if (!want) {
    for (uint32_t i = 0; i < m->nfuncs; i++)
      if (is_kernel(&m->funcs[i])) sel[n++] = &m->funcs[i];
    return n;
  }
  for (uint32_t i = 0; i < m->nfuncs; i++) {
    const ptx_func *f = &m->funcs[i];
    if (is_kernel(f) && !strcmp(f->name, want)) {
      sel[0] = f;
      return 1;
    }
  }
  /* A mangled name that no .entry spells but that names the same function:
     libclang's _ZL3fooPf (a static kernel, as `kcast extract --list` may
     have printed it) is nvcc's .entry _Z3fooPf. */
  if (!strncmp(want, "_Z", 2)) {
    n = 0;
    for (uint32_t i = 0; i < m->nfuncs && n < 2; i++)
      if (is_kernel(&m->funcs[i]) && fe_same_function(m->funcs[i].name, want))
        sel[n++] = &m->funcs[i];
    if (n == 1) return 1;
  }
  for (int level = 3; level >= 1; level--) {
    n = 0;
    for (uint32_t i = 0; i < m->nfuncs; i++) {
      const ptx_func *f = &m->funcs[i];
      if (is_kernel(f) && fe_name_match(f->name, want) == level) sel[n++] = f;
    }
    if (n == 1) return 1;
    if (n > 1) {
      char *list = name_list(sel, n);
      cli_error("%s: kernel name '%s' is ambiguous: %s", path, want, list ? list : "(several)");
      free(list);
      return -1;
    }
  }
  cli_error("%s: no kernel named '%s' (try 'kcast extract %s --list')", path,
            want, path);
  return -1;
}

/* -------------------------------------------------------- selection -- */

enum { F_KERNEL = CLI_OPT_FILTER, F_SKIP, F_COUNT };

const struct option cli_filter_longopts[] = {
  {"kernel", required_argument, NULL, F_KERNEL},
  {"kernel-name", required_argument, NULL, CLI_OPT_KERNEL_NAME},
  {"launch-skip", required_argument, NULL, F_SKIP},
  {"launch-count", required_argument, NULL, F_COUNT},
  {NULL, 0, NULL, 0},
};

int cli_filter_option(cli_filter *f, const cli_opts *o, int id) {
  unsigned long u;
  if ((id == F_KERNEL || id == CLI_OPT_KERNEL_NAME) && f->given) {
    cli_usage_error(o->cmd, "%s and %s both choose the kernel: give one", f->given, o->name);
    return -1;
  }
  switch (id) {
    case CLI_OPT_KERNEL_NAME: { /* the regex was checked by cli_opts_next */
      cli_kernel_name kn;
      cli_kernel_name_parse(o->arg, &kn);
      f->pattern = kn.regex;
      f->exact = kn.exact;
      f->given = !strcmp(o->name, "-k") ? "-k" : "--kernel-name";
      return 1;
    }
    case F_KERNEL: {
      /* checked now, compiled again when first used: nothing to free on
         the command's early ways out */
      regex_t re;
      int e = regcomp(&re, o->arg, REG_EXTENDED | REG_NOSUB);
      if (e) {
        char msg[256];
        regerror(e, &re, msg, sizeof msg);
        regfree(&re);
        cli_usage_error(o->cmd, "--kernel '%s': not a regular expression: %s", o->arg, msg);
        return -1;
      }
      regfree(&re);
      f->pattern = o->arg;
      f->given = "--kernel";
      return 1;
    }
    case F_SKIP:
    case F_COUNT:
      if (cli_parse_uint(o->arg, ~0UL, &u) || (id == F_COUNT && u == 0)) {
        cli_usage_error(o->cmd, "%s '%s': give a whole number%s", o->name, o->arg,
                        id == F_COUNT ? " >= 1" : "");
        return -1;
      }
      if (id == F_SKIP) f->skip = u;
      else f->count = u;
      return 1;
    default: return 0;
  }
}

int cli_filter_active(const cli_filter *f) {
  return f->pattern || f->exact || f->skip || f->count;
}

int cli_filter_take(cli_filter *f, const char *mangled) {
  if (f->pattern && !f->compiled) {
    if (regcomp(&f->re, f->pattern, REG_EXTENDED | REG_NOSUB)) return 0; /* checked before */
    f->compiled = 1;
  }
  if (f->pattern) {
    int hit = regexec(&f->re, mangled, 0, NULL, 0) == 0;
    if (!hit) {
      char *d = fe_demangle(mangled);
      hit = d && regexec(&f->re, d, 0, NULL, 0) == 0;
      free(d);
    }
    if (!hit) return 0;
  }
  if (f->exact && strcmp(mangled, f->exact) && fe_name_match(mangled, f->exact) == 0) return 0;
  if (f->matched++ < f->skip) return 0;
  if (f->count && f->taken >= f->count) return 0;
  f->taken++;
  return 1;
}

void cli_filter_free(cli_filter *f) {
  if (f->compiled) regfree(&f->re);
  f->compiled = 0;
}

/* --------------------------------------------------- compiler options -- */

enum { FE_STD = CLI_OPT_FE, FE_CFLAGS };

const struct option cli_fe_longopts[] = {
  {"std", required_argument, NULL, FE_STD},
  {"cflags", required_argument, NULL, FE_CFLAGS | CLI_OPT_MANY},
  {NULL, 0, NULL, 0},
};

/* Room for one more word; -1 after the usage error. */
static int fe_room(cli_fe_args *a, const cli_opts *o, size_t words, size_t bytes) {
  if (a->n + words <= CLI_FE_MAXARGS && a->used + bytes <= sizeof a->buf) return 0;
  cli_usage_error(o->cmd, "too many compiler options (at most %d words, %zu bytes)",
                  CLI_FE_MAXARGS, sizeof a->buf);
  return -1;
}

int cli_fe_option(cli_fe_args *a, cli_opts *o, int id) {
  const char *v = o->arg;
  switch (id) {
    case 'I':
    case 'D':
      if (fe_room(a, o, 2, 0)) return -1;
      a->v[a->n++] = id == 'I' ? "-I" : "-D";
      a->v[a->n++] = v;
      return 1;
    case 's': /* -std=VER and -std VER arrive as FE_STD (cli_opts_next) */
      cli_usage_error(o->cmd, "unknown option '-s%s' (did you mean -std=VERSION?)", v);
      return -1;
    case FE_STD:
      if (fe_room(a, o, 1, strlen(v) + 6)) return -1;
      a->v[a->n++] = a->buf + a->used;
      a->used += (size_t)sprintf(a->buf + a->used, "-std=%s", v) + 1;
      return 1;
    case FE_CFLAGS: {
      size_t len = strlen(v) + 1;
      if (fe_room(a, o, 0, len)) return -1;
      char *w = memcpy(a->buf + a->used, v, len);
      a->used += len;
      char *save = NULL;
      for (char *t = strtok_r(w, " \t\n", &save); t; t = strtok_r(NULL, " \t\n", &save)) {
        if (fe_room(a, o, 1, 0)) return -1;
        a->v[a->n++] = t;
      }
      return 1;
    }
    default: return 0;
  }
}

/* ------------------------------------------------------------ ptxas -- */

/* Is arch (sm_XY) already in the list of n? */
static int arch_seen(char (*a)[16], size_t n, const char *arch) {
  for (size_t i = 0; i < n; i++)
    if (!strcmp(a[i], arch)) return 1;
  return 0;
}

int cli_ptxas_features(const char *ptx, size_t len, const char *src, const char *archs,
                       const struct ptx_func *const *k, feat_vec *const *v, size_t nk,
                       int lenient) {
  char list[32][16];
  size_t na = 0;
  int all = !strcmp(archs, "all");
  if (all) {
    for (size_t i = 0; i < an_gpu_count() && na < 32; i++) {
      const an_gpu *g = an_gpu_at(i);
      char a[16];
      snprintf(a, sizeof a, "sm_%d%d", g->cc_major, g->cc_minor);
      if (!arch_seen(list, na, a)) snprintf(list[na++], sizeof list[0], "%s", a);
    }
  } else {
    for (const char *t = archs; *t && na < 32;) {
      const char *e = strchr(t, ',');
      size_t l = e ? (size_t)(e - t) : strlen(t);
      if (l && l < sizeof list[0]) {
        snprintf(list[na], sizeof list[0], "%.*s", (int)l, t);
        if (!arch_seen(list, na, list[na])) na++;
      }
      if (!e) break;
      t = e + 1;
    }
  }
  int got = 0;
  char skipped[512] = "", first[1024] = "";
  size_t sl = 0;
  for (size_t a = 0; a < na; a++) {
    fe_ptxas_kernel *r = NULL;
    size_t nr = 0;
    char err[1024];
    if (fe_ptxas(ptx, len, list[a], src, &r, &nr, err, sizeof err)) {
      /* "all" and the automatic runs skip an architecture ptxas cannot
         assemble for (CUDA 13 has no sm_37, sm_70) or a missing ptxas:
         one note at the end names them all */
      if (all || lenient) {
        if (!first[0]) snprintf(first, sizeof first, "%s", err);
        if (sl + 24 < sizeof skipped)
          sl += (size_t)snprintf(skipped + sl, sizeof skipped - sl, "%s%s", sl ? ", " : "",
                                 list[a]);
        continue;
      }
      cli_error("%s", err);
      return -1;
    }
    for (size_t i = 0; i < nk; i++)
      for (size_t j = 0; j < nr; j++)
        if (r[j].have && !strcmp(r[j].name, k[i]->name) && feat_ptxas(&r[j], list[a], v[i])) {
          fe_ptxas_free(r, nr);
          cli_error("out of memory");
          return -1;
        }
    fe_ptxas_free(r, nr);
    got++;
  }
  if (sl) {
    /* the GPUs of the table with those architectures */
    char gpus[512] = "";
    size_t gl = 0;
    for (size_t i = 0; i < an_gpu_count(); i++) {
      const an_gpu *g = an_gpu_at(i);
      char a[16];
      snprintf(a, sizeof a, "sm_%d%d", g->cc_major, g->cc_minor);
      int hit = 0;
      for (const char *t = skipped; *t && !hit;) {
        size_t l = strcspn(t, ",");
        hit = l == strlen(a) && !strncmp(t, a, l);
        t += l;
        while (*t == ',' || *t == ' ') t++;
      }
      if (hit && gl + strlen(g->name) + 8 < sizeof gpus)
        gl += (size_t)snprintf(gpus + gl, sizeof gpus - gl, "%s%s", gl ? ", " : "", g->name);
    }
    fprintf(stderr, "kcast: note: no register counts for %s%s%s%s (ptxas: %s)\n", skipped,
            gl ? " (GPUs " : "", gpus, gl ? ")" : "", first);
  }
  return got;
}
