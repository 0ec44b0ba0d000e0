/*
 * ptx_bench.c -- PTX parse throughput (make bench).
 *
 * Builds a synthetic module of at least 20 MB by replicating the kernels
 * and device functions of the committed samples (tests/ptx/ *_nvcc.ptx)
 * under renamed entries, writes it to BUILD/bench/synthetic.ptx, and times
 * ptx_parse over it (best of several runs, one core).  With
 * -DBENCH_WITH_ANALYSIS it also times ptx_cfg_build and feat_static on the
 * parsed module.  Prints MB/s.
 *
 * Usage: ptx_bench BUILD_DIR [SAMPLE.ptx ...]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "extractor/ptx.h"
#ifdef BENCH_WITH_ANALYSIS
#include "extractor/features.h"
#endif

typedef struct buf { char *p; size_t n, cap; } buf;

static void put(buf *b, const char *s, size_t n) {
  if (b->n + n + 1 > b->cap) {
    while (b->n + n + 1 > b->cap) b->cap = b->cap ? b->cap * 2 : 1 << 20;
    b->p = realloc(b->p, b->cap);
    if (!b->p) { fprintf(stderr, "ptx_bench: out of memory\n"); exit(1); }
  }
  memcpy(b->p + b->n, s, n);
  b->n += n;
  b->p[b->n] = 0;
}

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  if (s && fread(s, 1, (size_t)n, f) != (size_t)n) { free(s); s = NULL; }
  fclose(f);
  if (s) { s[n] = 0; *len = (size_t)n; }
  return s;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* CPU time of this process: the figure that does not depend on how busy
   the machine's other cores are. */
static double cpu(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Append text with every whole-word occurrence of the module's function
   names and global variables suffixed by _cN, so that copies do not clash. */
static void put_renamed(buf *b, const char *text, const ptx_module *m, unsigned copy) {
  char suf[32];
  int sl = snprintf(suf, sizeof suf, "_c%u", copy);
  const char *p = text;
  while (*p) {
    int isw = (*p == '_' || *p == '$' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'));
    if (!isw) { put(b, p, 1); p++; continue; }
    const char *q = p;
    while (*q == '_' || *q == '$' || (*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
           (*q >= '0' && *q <= '9'))
      q++;
    size_t n = (size_t)(q - p);
    int hit = 0;
    for (uint32_t i = 0; i < m->nfuncs && !hit; i++)
      hit = strlen(m->funcs[i].name) == n && !memcmp(m->funcs[i].name, p, n) &&
            m->funcs[i].has_body;
    for (uint32_t i = 0; i < m->nvars && !hit; i++)
      hit = strlen(m->vars[i].name) == n && !memcmp(m->vars[i].name, p, n) &&
            !m->vars[i].is_extern;
    put(b, p, n);
    if (hit) put(b, suf, (size_t)sl);
    p = q;
  }
}

/* The part of a sample after its .address_size line, without extern
   function declarations (the synthetic header declares vprintf once).
   Returns a malloc'ed copy. */
static char *sample_body(const char *t) {
  const char *a = strstr(t, ".address_size");
  const char *nl = a ? strchr(a, '\n') : NULL;
  const char *p = nl ? nl + 1 : t;
  buf b = {0};
  put(&b, "", 0);
  for (;;) {
    const char *e = strstr(p, ".extern .func");
    if (!e) { put(&b, p, strlen(p)); break; }
    put(&b, p, (size_t)(e - p));
    const char *end = strstr(e, "\n;");
    if (!end) break;
    p = end + 2;
  }
  return b.p;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: ptx_bench BUILD_DIR SAMPLE.ptx...\n");
    return 2;
  }
  const char *build = argv[1];
  int ns = argc - 2;
  char **bodies = calloc((size_t)ns, sizeof *bodies);
  ptx_module **mods = calloc((size_t)ns, sizeof *mods);
  for (int a = 0; a < ns; a++) {
    size_t len;
    char *t = slurp(argv[a + 2], &len);
    if (!t) { fprintf(stderr, "ptx_bench: cannot read %s\n", argv[a + 2]); return 1; }
    ptx_error err;
    mods[a] = ptx_parse(t, len, argv[a + 2], &err);
    if (!mods[a]) { fprintf(stderr, "ptx_bench: %s\n", err.msg); return 1; }
    bodies[a] = sample_body(t);
    free(t);
  }
  buf out = {0};
  const char *hdr = ".version 9.0\n.target sm_90\n.address_size 64\n\n"
                    ".extern .func  (.param .b32 func_retval0) vprintf\n"
                    "(\n\t.param .b64 vprintf_param_0,\n\t.param .b64 vprintf_param_1\n)\n;\n";
  put(&out, hdr, strlen(hdr));
  unsigned copies = 0;
  while (out.n < (20u << 20)) {
    for (int a = 0; a < ns; a++) put_renamed(&out, bodies[a], mods[a], copies);
    copies++;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/bench", build);
  mkdir(path, 0777);
  snprintf(path, sizeof path, "%s/bench/synthetic.ptx", build);
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(out.p, 1, out.n, f) != out.n || fclose(f) != 0) {
    fprintf(stderr, "ptx_bench: cannot write %s\n", path);
    return 1;
  }
  double mb = (double)out.n / 1e6;
  printf("ptx_bench: %s: %.1f MB, %u copies of %d samples\n", path, mb, copies, ns);

  double best = 1e30, best_cpu = 1e30;
  ptx_module *m = NULL;
  size_t ninsns = 0;
  for (int rep = 0; rep < 5; rep++) {
    ptx_module_free(m);
    ptx_error err;
    double t0 = now(), c0 = cpu();
    m = ptx_parse(out.p, out.n, path, &err);
    double dt = now() - t0, dc = cpu() - c0;
    if (!m) { fprintf(stderr, "ptx_bench: %s\n", err.msg); return 1; }
    if (dt < best) best = dt;
    if (dc < best_cpu) best_cpu = dc;
  }
  for (uint32_t i = 0; i < m->nfuncs; i++) ninsns += m->funcs[i].ninsns;
  printf("ptx_parse:   %8.1f MB/s wall, %.1f MB/s cpu  (best of 5: %.3f s, %u functions, "
         "%zu instructions, %.1f M insn/s)\n",
         mb / best, mb / best_cpu, best, m->nfuncs, ninsns, (double)ninsns / best / 1e6);
#ifdef BENCH_WITH_ANALYSIS
  {
    ptx_error err;
    double t0 = now();
    if (ptx_cfg_build(m, &err) != 0) { fprintf(stderr, "ptx_bench: %s\n", err.msg); return 1; }
    double t1 = now();
    size_t nk = 0;
    for (uint32_t i = 0; i < m->nfuncs; i++) {
      if (!m->funcs[i].is_entry) continue;
      feat_vec v;
      feat_init(&v);
      if (feat_static(m, &m->funcs[i], &v, &err) != 0) {
        fprintf(stderr, "ptx_bench: %s\n", err.msg);
        return 1;
      }
      feat_free(&v);
      nk++;
    }
    double t2 = now();
    printf("ptx_cfg_build: %6.1f MB/s  (%.3f s)\n", mb / (t1 - t0), t1 - t0);
    printf("feat_static:   %6.1f MB/s  (%.3f s, %zu kernels)\n", mb / (t2 - t1), t2 - t1, nk);
    printf("parse+analyse: %6.1f MB/s  (parse, CFG and static features of every kernel; "
           "target >= 50 MB/s on one core)\n", mb / (best + (t2 - t0)));
  }
#endif
  ptx_module_free(m);
  for (int a = 0; a < ns; a++) { ptx_module_free(mods[a]); free(bodies[a]); }
  free(mods);
  free(bodies);
  free(out.p);
  return 0;
}
