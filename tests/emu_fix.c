/*
 * emu_fix.c -- the fixture of the emulator's kernel tests (emu_fix.h).
 */
#include "tests.h"
#include "tests/emu_fix.h"
#include "emulator/emu_int.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ------------------------------------------------------------- checks -- */

/* One assertion whose failure report is the formatted sentence it proves. */
void check_impl(int ok, unsigned line, const char *fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  CU_assertImplementation(ok ? CU_TRUE : CU_FALSE, line, msg, __FILE__, "", CU_FALSE);
}

/* ------------------------------------------------------------ fixture -- */

const char *const COMPILERS[] = {"nvcc", "clang"};


/* 0 loaded, 1 corpus file missing (skipped), -1 failed (asserted). */
int fix_open(kfix *f, const char *corpus, const char *compiler) {
  memset(f, 0, sizeof *f);
  f->corpus = corpus;
  f->compiler = compiler;
  char path[4096];
  snprintf(path, sizeof path, "%s/corpus/%s.%s.ptx", tests_build(), corpus, compiler);
  struct stat sb;
  if (stat(path, &sb)) {
    printf("\n    (note: %s missing, %s skipped for %s) ", path, compiler, corpus);
    return 1;
  }
  ptx_error perr;
  memset(&perr, 0, sizeof perr);
  f->m = ptx_parse_file(path, &perr);
  CHECK(f->m != NULL, "%s parses: %s", path, perr.msg);
  if (!f->m) return -1;
  f->d = emu_device_new();
  CHECK(f->d != NULL, "emu_device_new gives a device");
  if (!f->d) return -1;
  int rc = emu_module_load(f->d, f->m, &f->em, f->err, sizeof f->err);
  CHECK(rc == 0, "%s loads onto the emulator: %s", path, f->err);
  return rc == 0 ? 0 : -1;
}

void fix_close(kfix *f) {
  emu_module_free(f->em);
  emu_device_free(f->d);
  ptx_module_free(f->m);
  memset(f, 0, sizeof *f);
}

/* Select the kernel of the next launch and clear its argument buffer. */
int fix_kernel(kfix *f, const char *mangled) {
  f->k = ptx_find_func(f->m, mangled);
  CHECK(f->k && f->k->is_entry, "%s.%s has kernel %s", f->corpus, f->compiler, mangled);
  if (!f->k || !f->k->is_entry) return -1;
  CHECK(f->k->nparams <= 64, "%s has at most 64 parameters", mangled);
  if (f->k->nparams > 64) return -1;
  int rc = emu_param_layout(f->k, f->off, &f->total);
  CHECK(rc == 0 && f->total <= sizeof f->params, "%s: parameter layout fits (%zu bytes)",
        mangled, f->total);
  memset(f->params, 0, sizeof f->params);
  return rc == 0 && f->total <= sizeof f->params ? 0 : -1;
}

void fix_scalar(kfix *f, unsigned idx, const void *v, size_t n) {
  if (!f->k || idx >= f->k->nparams) return;
  CHECK(f->k->params[idx].size == n, "%s param %u is %zu bytes (is %" PRIu64 ")", f->k->name, idx,
        n, f->k->params[idx].size);
  if (f->k->params[idx].size == n) memcpy(f->params + f->off[idx], v, n);
}
void fix_u32(kfix *f, unsigned idx, uint32_t v) { fix_scalar(f, idx, &v, 4); }
void fix_f32(kfix *f, unsigned idx, float v) { fix_scalar(f, idx, &v, 4); }
void fix_u64(kfix *f, unsigned idx, uint64_t v) { fix_scalar(f, idx, &v, 8); }

/* A device buffer holding bytes copied from host (zeroes when host is
   NULL); its address goes into parameter idx when idx >= 0. */
uint64_t fix_buf(kfix *f, int idx, const void *host, size_t bytes) {
  uint64_t a = 0;
  int rc = emu_malloc(f->d, bytes, &a, f->err, sizeof f->err);
  CHECK(rc == 0, "emu_malloc(%zu): %s", bytes, f->err);
  if (rc) return 0;
  if (host) {
    rc = emu_memcpy_htod(f->d, a, host, bytes, f->err, sizeof f->err);
    CHECK(rc == 0, "emu_memcpy_htod(%zu): %s", bytes, f->err);
  }
  if (idx >= 0) fix_u64(f, (unsigned)idx, a);
  return a;
}

void fix_get(kfix *f, void *host, uint64_t addr, size_t bytes) {
  int rc = emu_memcpy_dtoh(f->d, host, addr, bytes, f->err, sizeof f->err);
  CHECK(rc == 0, "emu_memcpy_dtoh(%zu): %s", bytes, f->err);
  if (rc) memset(host, 0xA5, bytes);
}


/* for_each_compiler's 2-thread runs: emu__team_always is on */
static int team_forced;
/* fix_racecheck: FIX_RACE_* */
static int race_mode;

int fix_racecheck(int mode) {
  int was = race_mode;
  race_mode = mode;
  return was;
}

/* Launch the selected kernel; features go to fv (may be NULL).  While
   for_each_compiler forces teams, a launch on more than one thread of two
   CTAs or more must have run on a team. */
int fix_launch_cfg(kfix *f, const dims *dm, int threads, uint64_t sample,
                          feat_vec *fv, emu_stats *st) {
  emu_launch_cfg cfg;
  emu_launch_cfg_init(&cfg);
  for (int i = 0; i < 3; i++) {
    cfg.grid[i] = dm->g[i] ? dm->g[i] : 1;
    cfg.block[i] = dm->b[i] ? dm->b[i] : 1;
  }
  cfg.shared_bytes = dm->shared;
  cfg.params = f->params;
  cfg.params_size = f->total;
  cfg.threads = threads;
  cfg.sample_ctas = sample;
  cfg.printf_out = stderr;
  cfg.racecheck = race_mode != FIX_RACE_OFF;
  emu_stats own;
  if (!st) st = &own;
  int rc = emu_launch(f->em, f->k->name, &cfg, fv, st, f->err, sizeof f->err);
  if (rc == 0 && team_forced && threads > 1 && st->ctas_run > 1)
    CHECK(st->team > 1, "%s.%s %s on %d threads ran on a team (%d threads), not on the calling "
          "thread alone", f->corpus, f->compiler, f->k->name, threads, st->team);
  if (rc == 0 && race_mode == FIX_RACE_CLEAN)
    CHECK(st->races == 0, "%s.%s %s (threads=%d), a correct kernel, has no data race under the "
          "race check (found %llu racing words; the first: %s)", f->corpus, f->compiler,
          f->k->name, threads, (unsigned long long)st->races, st->race_first);
  return rc;
}

int fix_launch(kfix *f, const dims *dm, int threads, feat_vec *fv) {
  int rc = fix_launch_cfg(f, dm, threads, 0, fv, NULL);
  CHECK(rc == 0, "%s.%s %s launches (threads=%d): %s", f->corpus, f->compiler, f->k->name,
        threads, f->err);
  return rc;
}

/* Launch with a private feature vector, then copy its entries into fv as
   "<tag>/<name>" so one run can hold several launches. */
int fix_launch_tagged(kfix *f, const dims *dm, int threads, feat_vec *fv,
                             const char *tag, feat_vec *keep) {
  feat_vec tmp;
  feat_init(&tmp);
  int rc = fix_launch(f, dm, threads, &tmp);
  char name[512];
  for (size_t i = 0; i < tmp.n; i++) {
    snprintf(name, sizeof name, "%s/%s", tag, tmp.names[i]);
    feat_set(fv, name, tmp.vals[i]);
    if (keep) feat_set(keep, tmp.names[i], tmp.vals[i]);
  }
  feat_free(&tmp);
  return rc;
}

/* Feature of the current run: name must be present with value want. */
void check_feat(kfix *f, const feat_vec *fv, const char *name, double want,
                       unsigned line) {
  double got = feat_get(fv, name, NAN);
  check_impl(got == want, line, "%s.%s %s: %s == %.17g (got %.17g)", f->corpus, f->compiler,
             f->k ? f->k->name : "", name, want, got);
}

/* Compare n 32-bit words; report the first difference. */
void check_words(kfix *f, const char *what, const void *got, const void *want,
                        size_t n, size_t wsize, unsigned line) {
  const unsigned char *g = got, *w = want;
  size_t bad = 0, first = n;
  for (size_t i = 0; i < n; i++)
    if (memcmp(g + i * wsize, w + i * wsize, wsize)) {
      if (first == n) first = i;
      bad++;
    }
  uint64_t gv = 0, wv = 0;
  if (first < n) {
    memcpy(&gv, g + first * wsize, wsize);
    memcpy(&wv, w + first * wsize, wsize);
  }
  check_impl(bad == 0, line,
             "%s.%s %s: %s equals the C reference bit for bit (%zu of %zu differ; first [%zu] "
             "got 0x%" PRIx64 " want 0x%" PRIx64 ")",
             f->corpus, f->compiler, f->k ? f->k->name : "", what, bad, n, first, gv, wv);
}

/* Two feature vectors hold the same names with the same values. */
void check_same_features(const feat_vec *a, const feat_vec *b, const char *what) {
  size_t bad = 0;
  const char *first = "";
  double av = 0, bv = 0;
  for (size_t i = 0; i < a->n; i++) {
    double v = feat_get(b, a->names[i], NAN);
    if (!(v == a->vals[i])) {
      if (!bad) { first = a->names[i]; av = a->vals[i]; bv = v; }
      bad++;
    }
  }
  CHECK(bad == 0 && a->n == b->n && a->n > 0,
        "%s: identical features with 1 and 2 threads (%zu vs %zu names, %zu differ; first %s "
        "%.17g vs %.17g)", what, a->n, b->n, bad, first, av, bv);
}


/*
 * Run body for each compiler with 1 and 2 threads.  The body allocates and
 * fills its buffers, launches, and checks outputs and counts; the two runs'
 * features (and, through the body's own checks, outputs) must agree.  With
 * 2 threads every launch of two CTAs or more runs on a team of 2
 * (emu__team_always), however little work it holds.
 */
void for_each_compiler(const char *corpus, body_fn body) {
  int ran = 0;
  for (int c = 0; c < NCOMPILERS; c++) {
    kfix f;
    int rc = fix_open(&f, corpus, COMPILERS[c]);
    if (rc) {
      fix_close(&f);
      continue;
    }
    feat_vec fv[2];
    for (int t = 0; t < 2; t++) {
      feat_init(&fv[t]);
      /* 2 threads: a team from the first CTA, however small the launch
         (else it would run on the calling thread alone) */
      int was = emu__team_always(t == 1);
      team_forced = t == 1;
      body(&f, t + 1, &fv[t]);
      team_forced = 0;
      emu__team_always(was);
    }
    char what[256];
    snprintf(what, sizeof what, "%s.%s", corpus, COMPILERS[c]);
    check_same_features(&fv[0], &fv[1], what);
    feat_free(&fv[0]);
    feat_free(&fv[1]);
    fix_close(&f);
    ran++;
  }
  CHECK(ran > 0, "the corpus holds %s for at least one compiler", corpus);
}

/* Deterministic pseudo-random numbers for inputs. */
uint64_t rng_next(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
