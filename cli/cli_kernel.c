/*
 * cli_kernel.c -- which kernel does the user mean?  The one rule that
 * `kcast extract --kernel K` and `kcast emulate --kernel K` share.
 *
 * K matches a mangled .entry name exactly, else the source name: the Itanium
 * base identifier (_Z5saxpyifPKfPf -> saxpy, last component of a nested
 * _ZN...E name), else the length-prefixed identifier "5saxpy" anywhere
 * inside a mangled name.  Exact base-name matches take precedence over
 * substring matches.  More than one match is an error that lists the
 * candidates, so a user never gets a kernel they did not mean.
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

/* Source base name of an Itanium-mangled name into buf; 0 when not mangled. */
static int base_name(const char *mangled, char *buf, size_t cap) {
  const char *p = mangled;
  if (strncmp(p, "_Z", 2)) return 0;
  p += 2;
  int nested = 0;
  if (*p == 'N') {
    nested = 1;
    p++;
    while (*p == 'K' || *p == 'V' || *p == 'r') p++; /* cv-qualifiers */
  }
  const char *last = NULL;
  size_t lastlen = 0;
  while (isdigit((unsigned char)*p)) {
    char *e;
    unsigned long n = strtoul(p, &e, 10);
    if (n == 0 || strlen(e) < n) return 0;
    last = e;
    lastlen = n;
    p = e + n;
    if (!nested) break;
    if (*p == 'I') break; /* template arguments: the name came before */
  }
  if (!last || lastlen + 1 > cap) return 0;
  memcpy(buf, last, lastlen);
  buf[lastlen] = 0;
  return 1;
}

/* 2: want is the base name of mangled; 1: "<len>want" occurs inside it. */
static int name_matches(const char *mangled, const char *want) {
  char base[512];
  if (base_name(mangled, base, sizeof base) && !strcmp(base, want)) return 2;
  char lp[600];
  snprintf(lp, sizeof lp, "%zu%s", strlen(want), want);
  if (!strncmp(mangled, "_Z", 2) && strstr(mangled, lp)) return 1;
  return 0;
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
  for (int level = 2; level >= 1; level--) {
    n = 0;
    for (uint32_t i = 0; i < m->nfuncs; i++) {
      const ptx_func *f = &m->funcs[i];
      if (is_kernel(f) && name_matches(f->name, want) >= level) sel[n++] = f;
    }
    if (n == 1) return 1;
    if (n > 1) {
      size_t cap = 64;
      for (long i = 0; i < n; i++) cap += strlen(sel[i]->name) + 2;
      char *list = malloc(cap);
      if (list) {
        list[0] = 0;
        for (long i = 0; i < n; i++) {
          if (i) strcat(list, ", ");
          strcat(list, sel[i]->name);
        }
      }
      cli_error("%s: kernel name '%s' is ambiguous: %s", path, want,
                list ? list : "(several)");
      free(list);
      return -1;
    }
  }
  cli_error("%s: no kernel named '%s' (try 'kcast extract %s --list')", path,
            want, path);
  return -1;
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
  for (size_t a = 0; a < na; a++) {
    fe_ptxas_kernel *r = NULL;
    size_t nr = 0;
    char err[1024];
    if (fe_ptxas(ptx, len, list[a], src, &r, &nr, err, sizeof err)) {
      /* "all" and the automatic runs skip an architecture ptxas cannot
         assemble for (CUDA 13 has no sm_37, sm_70) or a missing ptxas */
      if (all || lenient) {
        fprintf(stderr, "kcast: note: no registers for %s: %s\n", list[a], err);
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
  return got;
}
