/*
 * frontend_ptxas.c -- what NVIDIA's assembler says of each kernel of a PTX
 * text for one architecture: registers per thread, spill stores and loads,
 * stack frame and static shared memory (`ptxas -arch=sm_XY -v`).
 *
 * Why: registers decide how many CTAs a GPU keeps resident, and only the
 * assembler knows them (PTX declares virtual registers by the thousand).
 * They are per architecture, so the features are named by it
 * (ptxas.sm_80.registers; docs/features.md) and the per-GPU occupancy
 * features pick the column of each GPU's architecture.
 *
 * How: the PTX goes to a private temporary folder, with its `.target`
 * rewritten to the architecture asked for (ptxas refuses a PTX whose
 * target is newer than -arch; a kernel that uses a newer architecture's
 * instructions is then refused by ptxas itself, and that error is the
 * answer), and ptxas runs there as a child process from an argv array
 * (fe__run_tool: no shell, stdin from /dev/null).  The binary is
 * $KCAST_PTXAS when set, else ptxas beside nvcc on PATH, else under the
 * CUDA root.  Its -v report is parsed line by line:
 *
 *   ptxas info    : Compiling entry function '_Z5saxpyifPKfPf' for 'sm_80'
 *   ptxas info    : Function properties for _Z5saxpyifPKfPf
 *       0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
 *   ptxas info    : Used 10 registers, 4096 bytes smem, 380 bytes cmem[0]
 *
 * the figures after "Function properties for NAME" and "Used" belong to the
 * entry being compiled; a device function's own properties are skipped.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "extractor/frontend_int.h"

extern char **environ;

/* The ptxas binary to run (buf holds it). */
static const char *ptxas_path(char *buf, size_t cap) {
  const char *e = getenv("KCAST_PTXAS");
  if (e && *e) return e;
  char root[4096];
  fe__cuda_root(root, sizeof root);
  snprintf(buf, cap, "%s/bin/ptxas", root);
  if (access(buf, X_OK) == 0) return buf;
  return "ptxas"; /* on PATH, or a clear "not found" */
}

/* ptx with its .target directive's architecture replaced by arch, into f. */
static int write_retargeted(FILE *f, const char *ptx, size_t len, const char *arch) {
  const char *p = ptx, *end = ptx + len;
  int done = 0;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *le = nl ? nl + 1 : end;
    const char *t = p;
    while (t < le && (*t == ' ' || *t == '\t')) t++;
    if (!done && le - t > 8 && !strncmp(t, ".target", 7) && isspace((unsigned char)t[7])) {
      const char *a = t + 7;
      while (a < le && isspace((unsigned char)*a)) a++;
      const char *ae = a;
      while (ae < le && (isalnum((unsigned char)*ae) || *ae == '_')) ae++;
      fwrite(p, 1, (size_t)(a - p), f);
      fputs(arch, f);
      fwrite(ae, 1, (size_t)(le - ae), f);
      done = 1;
    } else {
      fwrite(p, 1, (size_t)(le - p), f);
    }
    p = le;
  }
  return done ? 0 : -1;
}

static double num_before(const char *line, const char *what) {
  const char *w = strstr(line, what);
  if (!w) return -1;
  const char *d = w;
  while (d > line && d[-1] == ' ') d--;
  while (d > line && isdigit((unsigned char)d[-1])) d--;
  return isdigit((unsigned char)*d) ? strtod(d, NULL) : -1;
}

/* Parse ptxas -v's report into *out (n kernels). */
static int parse_report(const char *text, fe_ptxas_kernel **out, size_t *n) {
  size_t cap = 0;
  long cur = -1;     /* the entry being compiled */
  int props = 0;     /* the last "Function properties" named the entry */
  *out = NULL;
  *n = 0;
  for (const char *p = text; p && *p;) {
    const char *nl = strchr(p, '\n');
    size_t l = nl ? (size_t)(nl - p) : strlen(p);
    char line[2048];
    snprintf(line, sizeof line, "%.*s", (int)(l < sizeof line ? l : sizeof line - 1), p);
    p = nl ? nl + 1 : NULL;
    const char *q;
    if ((q = strstr(line, "Compiling entry function '"))) {
      q += strlen("Compiling entry function '");
      const char *e = strchr(q, '\'');
      if (!e) continue;
      if (*n == cap) {
        size_t nc = cap ? 2 * cap : 8;
        fe_ptxas_kernel *t = realloc(*out, nc * sizeof *t);
        if (!t) return -1;
        *out = t;
        cap = nc;
      }
      fe_ptxas_kernel *k = &(*out)[*n];
      memset(k, 0, sizeof *k);
      if (!(k->name = strndup(q, (size_t)(e - q)))) return -1;
      cur = (long)(*n)++;
      props = 0;
    } else if ((q = strstr(line, "Function properties for "))) {
      q += strlen("Function properties for ");
      props = cur >= 0 && !strcmp(q, (*out)[cur].name);
    } else if (cur >= 0 && props && strstr(line, "bytes stack frame")) {
      fe_ptxas_kernel *k = &(*out)[cur];
      k->stack_bytes = num_before(line, "bytes stack frame");
      k->spill_store_bytes = num_before(line, "bytes spill stores");
      k->spill_load_bytes = num_before(line, "bytes spill loads");
    } else if (cur >= 0 && (q = strstr(line, "Used ")) && strstr(q, "registers")) {
      fe_ptxas_kernel *k = &(*out)[cur];
      k->registers = num_before(q, "registers");
      double sm = num_before(q, "bytes smem");
      k->smem_bytes = sm >= 0 ? sm : 0;
      k->have = 1;
    }
  }
  return 0;
}

void fe_ptxas_free(fe_ptxas_kernel *k, size_t n) {
  for (size_t i = 0; k && i < n; i++) free(k[i].name);
  free(k);
}

int fe_ptxas(const char *ptx, size_t len, const char *arch, const char *src,
             fe_ptxas_kernel **out, size_t *n, char *err, size_t errcap) {
  *out = NULL;
  *n = 0;
  fe_options o = {FE_NVCC, arch, NULL, 0};
  if (!fe__arch(&o, src, err, errcap)) return -1;
  const char *base = getenv("TMPDIR");
  char dir[4096], in[4200], cubin[4200], archopt[64], tool[4200], why[4200];
  if (fe_scratch_make(base, "kcast-ptxas", dir, sizeof dir, why, sizeof why))
    return fe__fail(err, errcap, "%s: %s", src, why);
  snprintf(in, sizeof in, "%s/in.ptx", dir);
  snprintf(cubin, sizeof cubin, "%s/out.cubin", dir);
  snprintf(archopt, sizeof archopt, "-arch=%s", arch);
  FILE *f = fopen(in, "w");
  int rc = -1;
  char *diag = NULL;
  if (!f) {
    fe__fail(err, errcap, "%s: cannot write %s: %s", src, in, strerror(errno));
    goto out;
  }
  int bad = write_retargeted(f, ptx, len, arch);
  if (fclose(f) || bad) {
    fe__fail(err, errcap, bad ? "%s: no .target directive" : "%s: cannot write the PTX copy", src);
    goto out;
  }
  char *argv[] = {(char *)ptxas_path(tool, sizeof tool), archopt, "-v", "-o", cubin, in, NULL};
  name_map map = {{in, NULL}, {src, NULL}};
  if (fe__run_tool(argv, environ, &map, "ptxas", dir, src, &diag, err, errcap)) goto out;
  if (parse_report(diag ? diag : "", out, n)) {
    fe_ptxas_free(*out, *n);
    *out = NULL;
    *n = 0;
    fe__fail(err, errcap, "%s: out of memory", src);
    goto out;
  }
  rc = 0;
out:
  free(diag);
  fe__remove_tmpdir(dir);
  return rc;
}
