/*
 * test_cli_suite.c -- `kcast suite run|profile` (manifests, shards, output
 * names, resume, failures), `kcast dataset merge`'s agreement check and
 * idempotence, and the Slurm path: a one-node cluster brought up from
 * Debian's packages (tests/slurm/one-node.sh) collecting a manifest as a
 * 4-task array whose merged shards must equal a local run launch for
 * launch.  Suite programs come from `make` (SUITE_FAST); a test whose
 * programs or daemons are missing says so and skips.
 */
#include "tests.h"

#include <dirent.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "datasets/ds.h"
#include "runtime/rt.h"

#define CHECK_MSG(msg, cond) \
  CU_assertImplementation(!!(cond), __LINE__, (msg), __FILE__, "", CU_FALSE)
#include "extractor/features.h"

static const char *const fast_lines[] = {
  "gemm_tiled 64 8",
  "reduce_shuffle 4096 64",
  "histogram_shared 65536 256",
  "scan 100000 128",
  "stencil2d 64 8 10",
  "bfs 2000 128",
};
#define NFAST (sizeof fast_lines / sizeof fast_lines[0])

static int have_suite(void) {
  char p[4200];
  struct stat sb;
  for (size_t i = 0; i < NFAST; i++) {
    char prog[64];
    sscanf(fast_lines[i], "%63s", prog);
    snprintf(p, sizeof p, "%s/suite/%s", tests_build(), prog);
    if (stat(p, &sb) != 0) {
      printf("\n    [skip: %s not built (nvcc missing?)] ", p);
      return 0;
    }
  }
  return 1;
}

static int write_text(const char *path, const char *text) {
  return tests_write_file(path, text, strlen(text));
}

/* The fast subset as a manifest at path (with extra text appended). */
static void write_fast(const char *path, const char *extra) {
  char text[4096] = "# the fast subset\n";
  for (size_t i = 0; i < NFAST; i++) {
    strcat(text, fast_lines[i]);
    strcat(text, "\n");
  }
  if (extra) strcat(text, extra);
  CU_ASSERT_EQUAL_FATAL(write_text(path, text), 0);
}

static int sh(char **out, char **err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int sh(char **out, char **err, const char *fmt, ...) {
  char cmd[16384];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cmd, sizeof cmd, fmt, ap);
  va_end(ap);
  return tests_run(cmd, out, err);
}

/* A dataset's launches as sorted text lines: key, kernel, grid, block,
   shared memory and every feature (name=value, %.17g); NULL on failure. */
typedef struct sig { char **l; size_t n; } sig;
static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}
static int signature(const char *path, sig *s) {
  memset(s, 0, sizeof s[0]);
  ds_db *db;
  char e[1100];
  if (ds_open(path, DS_READONLY, &db, e, sizeof e) < 0) {
    printf("\n    %s ", e);
    return -1;
  }
  ds_iter *it;
  if (ds_iter_launches(db, NULL, NULL, &it) < 0) {
    ds_close(db);
    return -1;
  }
  int64_t id;
  ds_launch l;
  size_t cap = 0;
  int rc;
  while ((rc = ds_iter_next(it, &id, &l)) == 1) {
    feat_vec v;
    feat_init(&v);
    ds_get_features(db, id, &v);
    size_t len = 4096;
    for (size_t i = 0; i < v.n; i++) len += strlen(v.names[i]) + 32;
    char *t = malloc(len);
    int n = snprintf(t, len, "%s|%s|%lld|%s|%u,%u,%u|%u,%u,%u|%lld", l.app, l.dataset,
                     (long long)l.lseq, l.kernel, l.grid[0], l.grid[1], l.grid[2], l.block[0],
                     l.block[1], l.block[2], (long long)l.shmem);
    /* names sorted: feat_vec keeps insertion order, so sort a copy */
    char **names = calloc(v.n + 1, sizeof *names);
    for (size_t i = 0; i < v.n; i++) {
      names[i] = malloc(strlen(v.names[i]) + 40);
      sprintf(names[i], "%s=%.17g", v.names[i], v.vals[i]);
    }
    qsort(names, v.n, sizeof *names, cmp_str);
    for (size_t i = 0; i < v.n; i++) {
      n += snprintf(t + n, len - (size_t)n, "|%s", names[i]);
      free(names[i]);
    }
    free(names);
    feat_free(&v);
    if (s->n == cap) {
      cap = cap ? cap * 2 : 64;
      s->l = realloc(s->l, cap * sizeof *s->l);
    }
    s->l[s->n++] = t;
  }
  ds_iter_free(it);
  ds_close(db);
  if (rc < 0) return -1;
  qsort(s->l, s->n, sizeof *s->l, cmp_str);
  return 0;
}
static void sig_free(sig *s) {
  for (size_t i = 0; i < s->n; i++) free(s->l[i]);
  free(s->l);
}
/* Equal launch for launch; prints the first difference. */
static int sig_equal(const sig *a, const sig *b) {
  if (a->n != b->n) {
    printf("\n    %zu launches against %zu ", a->n, b->n);
    return 0;
  }
  for (size_t i = 0; i < a->n; i++)
    if (strcmp(a->l[i], b->l[i])) {
      printf("\n    first difference:\n    %.300s\n    %.300s ", a->l[i], b->l[i]);
      return 0;
    }
  return 1;
}

static int64_t count_rows(const char *db, const char *table) {
  char *out = NULL;
  int rc = sh(&out, NULL, "sqlite3 '%s' 'SELECT count(*) FROM %s'", db, table);
  int64_t n = rc == 0 && out ? strtoll(out, NULL, 10) : -1;
  free(out);
  return n;
}

static int live_with(const char *s);

/* ---------------------------------------------------- manifest errors -- */

static void test_manifest_errors(void) {
  char dir[4096], m[4200], db[4200];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "suite-bad"));
  snprintf(m, sizeof m, "%s/m.txt", dir);
  snprintf(db, sizeof db, "%s/out.db", dir);
  /* a program that exists, so that only the line's problem is reported */
  static const struct { const char *text, *msg; } cases[] = {
    {"gemm_tiled 64 8\nsampel=4 gemm_tiled 32 8\n", "m.txt:2:1: unknown option 'sampel'"},
    {"gemm_tiled 64 8\n  sample=x gemm_tiled 32 8\n", "m.txt:2:3: sample= needs a whole number"},
    {"gemm_tiled \"64 8\n", "m.txt:1:12: unterminated \" quote"},
    {"gemm_tiled 64 8\n# fine\ngemm_tiled 64 8\n", "m.txt:3: same app 'gemm_tiled' and dataset '64 8' as line 1"},
    {"timeout=5\n", "m.txt:1:10: options but no program"},
    {"no_such_program 1\n", "m.txt:1: program"},
    {"# only comments\n\n", "no entry"},
    {"cost=-1 gemm_tiled 64 8\n", "m.txt:1:1: cost= needs seconds"},
    {"oob=maybe gemm_tiled 64 8\n", "m.txt:1:1: oob= takes warn or error"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    CU_ASSERT_EQUAL_FATAL(write_text(m, cases[k].text), 0);
    char *err = NULL;
    int rc = sh(NULL, &err, "'%s' suite run '%s' --bindir '%s/suite' -o '%s'", tests_kcast(), m,
                tests_build(), db);
    int ok = rc == 1 && err && strstr(err, cases[k].msg) && !strchr(strchr(err, '\n') + 1, '\n');
    if (!ok) printf("\n    case %zu: exit %d: %s ", k, rc, err ? err : "");
    CU_ASSERT_TRUE(ok); /* one error line naming file, line (and column), exit 1 */
    free(err);
    CU_ASSERT_NOT_EQUAL(access(db, F_OK), 0); /* and nothing was run or written */
  }
  /* Usage errors exit 2. */
  write_fast(m, NULL);
  const char *usage[] = {"--shard 2/2", "--shard 1", "-j 0", "--gpu H200", "-o 'x-%q.db'",
                         "-o 'x-%j.db'"};
  for (size_t k = 0; k < sizeof usage / sizeof usage[0]; k++) {
    int rc = sh(NULL, NULL, "env -u SLURM_JOB_ID -u SLURM_ARRAY_JOB_ID '%s' suite run '%s' %s "
                "--dry-run", tests_kcast(), m, usage[k]);
    if (rc != 2) printf("\n    %s: exit %d ", usage[k], rc);
    CU_ASSERT_EQUAL(rc, 2);
  }
}

/* --------------------------------------------------------- shards -- */

/* The line numbers of shard i/n (--dry-run) into lines[], their count. */
static int shard_lines(const char *m, const char *extra, int *lines, int cap, char **head) {
  char *out = NULL;
  int rc = sh(&out, NULL, "'%s' suite run '%s' --bindir '%s/suite' --dry-run %s", tests_kcast(),
              m, tests_build(), extra);
  int n = 0;
  if (rc != 0 || !out) {
    free(out);
    return -1;
  }
  for (char *p = out; (p = strstr(p, "\nline ")); p++)
    if (n < cap) lines[n++] = atoi(p + 6);
  if (head) *head = out;
  else free(out);
  return n;
}

static void test_shards(void) {
  if (!have_suite()) return;
  char dir[4096], m[4200];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "suite-shard"));
  snprintf(m, sizeof m, "%s/m.txt", dir);
  /* Costs given: 8, 4, 4, 2, 2, 1 over lines 2..7 (the header is line 1). */
  CU_ASSERT_EQUAL_FATAL(write_text(m, "# costs\ncost=8 gemm_tiled 64 8\ncost=4 reduce_shuffle 4096 64\n"
                                      "cost=4 histogram_shared 65536 256\ncost=2 scan 100000 128\n"
                                      "cost=2 stencil2d 64 8 10\ncost=1 bfs 2000 128\n"), 0);
  int seen[16] = {0}, lines[16];
  double load[3] = {0};
  static const double cost_of[8] = {0, 0, 8, 4, 4, 2, 2, 1};
  for (int i = 0; i < 3; i++) {
    char opt[32];
    snprintf(opt, sizeof opt, "--shard %d/3", i);
    int n = shard_lines(m, opt, lines, 16, NULL);
    CU_ASSERT_TRUE_FATAL(n >= 1);
    for (int k = 0; k < n; k++) {
      if (lines[k] >= 2 && lines[k] <= 7) seen[lines[k]]++, load[i] += cost_of[lines[k]];
    }
    int again[16];
    CU_ASSERT_EQUAL(shard_lines(m, opt, again, 16, NULL), n); /* deterministic */
    CU_ASSERT_EQUAL(memcmp(again, lines, (size_t)n * sizeof *lines), 0);
  }
  for (int l = 2; l <= 7; l++) CU_ASSERT_EQUAL(seen[l], 1); /* every entry in exactly one shard */
  /* longest first onto the least loaded: {8}, {4, 2, 1}, {4, 2} */
  CU_ASSERT_DOUBLE_EQUAL(load[0], 8, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(load[1], 7, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(load[2], 6, 1e-9);
  /* Under a Slurm array the task is the default shard (ids from MIN, by STEP). */
  int a[16], b[16];
  int na = shard_lines(m, "--shard 1/3", a, 16, NULL);
  int nb;
  {
    char *out = NULL;
    int rc = sh(&out, NULL, "SLURM_ARRAY_TASK_ID=12 SLURM_ARRAY_TASK_MIN=10 SLURM_ARRAY_TASK_STEP=2 "
                "SLURM_ARRAY_TASK_COUNT=3 '%s' suite run '%s' --bindir '%s/suite' --dry-run",
                tests_kcast(), m, tests_build());
    nb = 0;
    for (char *p = out; rc == 0 && p && (p = strstr(p, "\nline ")); p++) b[nb++] = atoi(p + 6);
    CU_ASSERT_PTR_NOT_NULL(out && strstr(out, "shard 1/3")); /* (12 - 10) / 2 = 1 of 3 */
    free(out);
  }
  CU_ASSERT_EQUAL(na, nb);
  CU_ASSERT_EQUAL(memcmp(a, b, (size_t)na * sizeof *a), 0);
  char *err = NULL;
  CU_ASSERT_EQUAL(sh(NULL, &err, "SLURM_ARRAY_TASK_ID=5 SLURM_ARRAY_TASK_COUNT=3 '%s' suite run '%s' "
                     "--dry-run", tests_kcast(), m), 1); /* task 5 of 3 from 0: not a shard */
  CU_ASSERT_PTR_NOT_NULL(err && strstr(err, "give --shard I/N"));
  free(err);
  /* Output names: %a the array task, %j the job, %h the host, %p the pid. */
  char host[256], *out = NULL;
  gethostname(host, sizeof host);
  CU_ASSERT_EQUAL(sh(&out, NULL, "SLURM_ARRAY_TASK_ID=2 SLURM_ARRAY_TASK_COUNT=3 SLURM_ARRAY_JOB_ID=77 "
                     "'%s' suite run '%s' --bindir '%s/suite' --dry-run -o '%s/f-%%j_%%a-%%h-%%%%.db'",
                     tests_kcast(), m, tests_build(), dir), 0);
  char want[4600];
  snprintf(want, sizeof want, "-> %s/f-77_2-%s-%%.db", dir, host);
  CU_ASSERT_PTR_NOT_NULL(out && strstr(out, want));
  if (!out || !strstr(out, want)) printf("\n    want '%s' in: %s ", want, out ? out : "");
  free(out);
}

/* ------------------------------------------------------------ runs -- */

static void test_run_parallel_resume_fail(void) {
  if (!have_suite()) return;
  char dir[4096], m[4200], a[4200], b[4200], bindir[4200];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "suite-run"));
  snprintf(m, sizeof m, "%s/m.txt", dir);
  snprintf(a, sizeof a, "%s/a.db", dir);
  snprintf(b, sizeof b, "%s/b.db", dir);
  /* Private copies of the programs: one is "rebuilt" below. */
  snprintf(bindir, sizeof bindir, "%s/bin", dir);
  CU_ASSERT_EQUAL_FATAL(sh(NULL, NULL, "mkdir '%s' && cp '%s'/suite/gemm_tiled '%s'/suite/reduce_shuffle "
                           "'%s'/suite/histogram_shared '%s'/suite/scan '%s'/suite/stencil2d "
                           "'%s'/suite/bfs '%s'/", bindir, tests_build(), tests_build(),
                           tests_build(), tests_build(), tests_build(), tests_build(), bindir), 0);
  write_fast(m, NULL);
  char *out = NULL;
  int rc = sh(&out, NULL, "'%s' suite run '%s' --bindir '%s' -o '%s'", tests_kcast(), m, bindir, a);
  CU_ASSERT_EQUAL(rc, 0);
  CU_ASSERT_PTR_NOT_NULL(out && strstr(out, ": 6 passed, 0 failed, 0 skipped"));
  CU_ASSERT_PTR_NOT_NULL(out && strstr(out, "[6/6] ")); /* one line per entry */
  if (rc) printf("\n%s ", out ? out : "");
  free(out);
  rc = sh(&out, NULL, "'%s' suite run '%s' --bindir '%s' -j 2 -o '%s'", tests_kcast(), m, bindir, b);
  CU_ASSERT_EQUAL(rc, 0);
  free(out);
  sig sa, sb;
  CU_ASSERT_EQUAL_FATAL(signature(a, &sa), 0);
  CU_ASSERT_EQUAL_FATAL(signature(b, &sb), 0);
  CU_ASSERT_TRUE(sa.n >= NFAST);      /* every entry's launches */
  CU_ASSERT_TRUE(sig_equal(&sa, &sb)); /* -j 2 records what -j 1 does, launch for launch */
  sig_free(&sb);
  CU_ASSERT_EQUAL(count_rows(a, "suite_entries"), 6);
  int64_t runs = count_rows(a, "runs");
  CU_ASSERT_EQUAL(runs, 6); /* one provenance row per entry */
  /* Resumed: nothing runs again. */
  rc = sh(&out, NULL, "'%s' suite run '%s' --bindir '%s' -o '%s'", tests_kcast(), m, bindir, a);
  CU_ASSERT_EQUAL(rc, 0);
  CU_ASSERT_PTR_NOT_NULL(out && strstr(out, ": 0 passed, 0 failed, 6 skipped"));
  free(out);
  CU_ASSERT_EQUAL(count_rows(a, "runs"), runs);
  /* A rebuilt program (other bytes) runs again; the rest is skipped. */
  CU_ASSERT_EQUAL(sh(NULL, NULL, "printf x >> '%s/bfs'", bindir), 0);
  rc = sh(&out, NULL, "'%s' suite run '%s' --bindir '%s' -o '%s'", tests_kcast(), m, bindir, a);
  CU_ASSERT_EQUAL(rc, 0);
  CU_ASSERT_PTR_NOT_NULL(out && strstr(out, ": 1 passed, 0 failed, 5 skipped"));
  CU_ASSERT_PTR_NOT_NULL(out && strstr(out, "bfs 2000 128") && strstr(strstr(out, "bfs 2000 128"), "passed"));
  free(out);
  /* Other arguments or options are another entry or a changed one. */
  write_fast(m, "sample=2 stencil2d 256 16 2\ngemm_tiled abc\n");
  rc = sh(&out, NULL, "'%s' suite run '%s' --bindir '%s' -o '%s'", tests_kcast(), m, bindir, a);
  CU_ASSERT_EQUAL(rc, 1); /* an entry failed */
  CU_ASSERT_PTR_NOT_NULL(out && strstr(out, ": 1 passed, 1 failed, 6 skipped"));
  CU_ASSERT_PTR_NOT_NULL(out && strstr(out, "failed: ") && strstr(out, ":9 gemm_tiled abc: exit status 2"));
  if (!out || !strstr(out, "1 failed")) printf("\n%s ", out ? out : "");
  free(out);
  CU_ASSERT_EQUAL(count_rows(a, "suite_entries"), 7); /* the failed one is not recorded */
  /* Its output is in the log, in one block. */
  char log[4300];
  snprintf(log, sizeof log, "%s.log", a);
  char *text = tests_read_file(log, NULL);
  CU_ASSERT_PTR_NOT_NULL(text && strstr(text, "gemm_tiled: bad argument 'abc'"));
  free(text);
  /* No scratch left beside the output. */
  DIR *d = opendir(dir);
  struct dirent *de;
  int scratch = 0;
  while (d && (de = readdir(d)))
    if (strstr(de->d_name, ".kcast-suite")) scratch++;
  if (d) closedir(d);
  CU_ASSERT_EQUAL(scratch, 0);
  /* The same key rerun with fewer launches keeps none of the old ones. */
  write_fast(m, "app=st dataset=d stencil2d 64 8 10\n");
  CU_ASSERT_EQUAL(sh(NULL, NULL, "'%s' suite run '%s' --bindir '%s' -o '%s'", tests_kcast(), m,
                     bindir, a), 0);
  char *cnt = NULL;
  CU_ASSERT_EQUAL(sh(&cnt, NULL, "sqlite3 '%s' \"SELECT count(*) FROM launches WHERE app = 'st'\"", a), 0);
  CU_ASSERT_PTR_NOT_NULL(cnt && !strcmp(cnt, "10\n"));
  free(cnt);
  write_fast(m, "app=st dataset=d stencil2d 64 8 4\n");
  CU_ASSERT_EQUAL(sh(NULL, NULL, "'%s' suite run '%s' --bindir '%s' -o '%s'", tests_kcast(), m,
                     bindir, a), 0);
  CU_ASSERT_EQUAL(sh(&cnt, NULL, "sqlite3 '%s' \"SELECT count(*) FROM launches WHERE app = 'st'\"", a), 0);
  CU_ASSERT_PTR_NOT_NULL(cnt && !strcmp(cnt, "4\n")); /* lseq 4..9 of the longer run are gone */
  if (!cnt || strcmp(cnt, "4\n")) printf("\n    st launches: %s ", cnt ? cnt : "");
  free(cnt);
  CU_ASSERT_EQUAL(sh(NULL, NULL, "sqlite3 '%s' \"DELETE FROM launches WHERE app = 'st';"
                     " DELETE FROM suite_entries WHERE app = 'st'\"", a), 0);
  /* And the launches already there are those of a fresh run. */
  sig sc;
  CU_ASSERT_EQUAL_FATAL(signature(a, &sc), 0);
  CU_ASSERT_TRUE(sc.n > sa.n); /* plus the sampled stencil2d's */
  sig_free(&sa);
  sig_free(&sc);
}

/* An entry over its timeout fails, named so, and nothing of it is kept.
   The entry runs 16 s on a 2-core machine of 2026 (scan's 1.2 s was not
   safely over a second: a faster machine finished it in time). */
static void test_entry_timeout(void) {
  if (!have_suite()) return;
  char dir[4096], db[4200], m[4200];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "suite-to"));
  snprintf(db, sizeof db, "%s/x.db", dir);
  snprintf(m, sizeof m, "%s/m.txt", dir);
  CU_ASSERT_EQUAL_FATAL(write_text(m, "gemm_tiled 64 8\ntimeout=1 nbody 16384 256 4\n"), 0);
  char *out = NULL;
  int rc = sh(&out, NULL, "'%s' suite run '%s' --bindir '%s/suite' -o '%s'", tests_kcast(), m,
              tests_build(), db);
  CU_ASSERT_EQUAL(rc, 1);
  CU_ASSERT_PTR_NOT_NULL(out && strstr(out, ":2 nbody 16384 256 4: timed out after 1 s"));
  if (!out || !strstr(out, "timed out")) printf("\n%s ", out ? out : "");
  free(out);
  CU_ASSERT_EQUAL(count_rows(db, "suite_entries"), 1);
  char *o2 = NULL;
  CU_ASSERT_EQUAL(sh(&o2, NULL, "sqlite3 '%s' \"SELECT count(*) FROM launches WHERE app = 'nbody'\"",
                     db), 0);
  CU_ASSERT_PTR_NOT_NULL(o2 && !strcmp(o2, "0\n")); /* the partial run is not merged */
  free(o2);
}

/* SIGTERM in mid-suite: the running entries end, nothing more is merged,
   no scratch is left, kcast dies of the signal; a rerun resumes. */
static void test_interrupted_suite_resumes(void) {
  if (!have_suite()) return;
  char dir[4096], db[4200], m[4200];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "suite-int"));
  snprintf(db, sizeof db, "%s/x.db", dir);
  snprintf(m, sizeof m, "%s/m.txt", dir);
  /* three entries of a fraction of a second, then three of 10-16 s each
     (2 cores, 2026): at 3 s the first are done, two run, one waits, on a
     machine some times faster too (the entries run in the manifest's order) */
  write_fast(m, "gemm_tiled 160 32\nstencil2d 512 32 8\nreduce_shuffle 4194304 128\n"
                "nbody 16384 256 4\nnbody 16384 256 3\nnbody 16384 256 2\n");
  char *out = NULL;
  int rc = sh(&out, NULL, "'%s' suite run '%s' --bindir '%s/suite' -j 2 -o '%s' "
              "> '%s/out.txt' 2>&1 & p=$!; sleep 3; kill -TERM $p; wait $p; echo $?; "
              "sleep 1; ls -A '%s'", tests_kcast(), m, tests_build(), db, dir, dir);
  CU_ASSERT_EQUAL(rc, 0);
  CU_ASSERT_PTR_NOT_NULL(out && !strncmp(out, "143\n", 4)); /* died of SIGTERM */
  CU_ASSERT_PTR_NOT_NULL(out && !strstr(out, ".kcast-suite")); /* no scratch left */
  free(out);
  char p[4300];
  snprintf(p, sizeof p, "%s/out.txt", dir);
  char *text = tests_read_file(p, NULL);
  CU_ASSERT_PTR_NOT_NULL(text && strstr(text, "not run (interrupted by"));
  free(text);
  int64_t done = count_rows(db, "suite_entries");
  if (done <= 0) {
    printf("\n    [note: nothing finished in 3 s; resume not checked] ");
    return;
  }
  /* What finished is skipped by the next run (planned, not run here). */
  rc = sh(&out, NULL, "'%s' suite run '%s' --bindir '%s/suite' -o '%s' --dry-run", tests_kcast(), m,
          tests_build(), db);
  CU_ASSERT_EQUAL(rc, 0);
  int64_t skips = 0;
  for (char *q = out; q && (q = strstr(q, "skip (same build)")); q++) skips++;
  CU_ASSERT_EQUAL(skips, done);
  free(out);
  CU_ASSERT_EQUAL(live_with(dir), 0); /* no entry's kcast run or program outlives it */
}

static void test_profile_without_gpu(void) {
  if (!have_suite()) return;
  if (access("/proc/driver/nvidia/gpus", F_OK) == 0) {
    printf("\n    [skip: a GPU is present; make gpu-check covers profiling] ");
    return;
  }
  char dir[4096], m[4200], db[4200];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "suite-prof"));
  snprintf(m, sizeof m, "%s/m.txt", dir);
  snprintf(db, sizeof db, "%s/g.db", dir);
  write_fast(m, "repeat=3 scan 1000 64\n");
  char *err = NULL, *out = NULL;
  int rc = sh(NULL, &err, "'%s' suite profile '%s' --bindir '%s/suite' -o '%s'", tests_kcast(), m,
              tests_build(), db);
  CU_ASSERT_EQUAL(rc, 1);
  CU_ASSERT_PTR_NOT_NULL(err && strstr(err, "no GPU to profile on") && strstr(err, "nothing run"));
  CU_ASSERT_NOT_EQUAL(access(db, F_OK), 0);
  free(err);
  /* With the GPU named, the plan is made without one. */
  rc = sh(&out, NULL, "'%s' suite profile '%s' --bindir '%s/suite' --gpu H200 --shard 0/2 -o '%s' "
          "--dry-run", tests_kcast(), m, tests_build(), db);
  CU_ASSERT_EQUAL(rc, 0);
  CU_ASSERT_PTR_NOT_NULL(out && strstr(out, "shard 0/2") && strstr(out, "of 7 entries"));
  free(out);
  CU_ASSERT_EQUAL(sh(NULL, NULL, "'%s' suite profile '%s' -j 2 --gpu H200 --dry-run", tests_kcast(),
                     m), 2); /* one GPU: one entry at a time */
}

/* ----------------------------------------------------------- merge -- */

static void test_merge_agreement(void) {
  if (!have_suite()) return;
  char dir[4096], a[4200], b[4200], out_db[4200], ma[4200], mb[4200];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "suite-merge"));
  snprintf(ma, sizeof ma, "%s/a.txt", dir);
  snprintf(mb, sizeof mb, "%s/b.txt", dir);
  snprintf(a, sizeof a, "%s/a.db", dir);
  snprintf(b, sizeof b, "%s/b.db", dir);
  snprintf(out_db, sizeof out_db, "%s/out.db", dir);
  /* The same launch key with other features: scan's arguments under one label. */
  CU_ASSERT_EQUAL_FATAL(write_text(ma, "dataset=x scan 1000 64\n"), 0);
  CU_ASSERT_EQUAL_FATAL(write_text(mb, "dataset=x scan 2000 64\n"), 0);
  CU_ASSERT_EQUAL_FATAL(sh(NULL, NULL, "'%s' suite run '%s' --bindir '%s/suite' -o '%s' >/dev/null && "
                           "'%s' suite run '%s' --bindir '%s/suite' -o '%s' >/dev/null", tests_kcast(),
                           ma, tests_build(), a, tests_kcast(), mb, tests_build(), b), 0);
  char *err = NULL, *e1 = NULL, *e2 = NULL;
  CU_ASSERT_EQUAL(sh(NULL, NULL, "'%s' dataset merge '%s' '%s'", tests_kcast(), out_db, a), 0);
  CU_ASSERT_EQUAL(sh(NULL, NULL, "'%s' dataset export '%s' -o '%s/e1.csv'", tests_kcast(), out_db, dir), 0);
  int64_t runs = count_rows(out_db, "runs");
  /* Idempotent: again, the runs included. */
  CU_ASSERT_EQUAL(sh(NULL, NULL, "'%s' dataset merge '%s' '%s' '%s'", tests_kcast(), out_db, a, a), 0);
  CU_ASSERT_EQUAL(sh(NULL, NULL, "'%s' dataset export '%s' -o '%s/e2.csv'", tests_kcast(), out_db, dir), 0);
  char p1[4300], p2[4300];
  snprintf(p1, sizeof p1, "%s/e1.csv", dir);
  snprintf(p2, sizeof p2, "%s/e2.csv", dir);
  e1 = tests_read_file(p1, NULL);
  e2 = tests_read_file(p2, NULL);
  CU_ASSERT_TRUE(e1 && e2 && !strcmp(e1, e2));
  CU_ASSERT_EQUAL(count_rows(out_db, "runs"), runs);
  CU_ASSERT_EQUAL(count_rows(out_db, "suite_entries"), 1);
  /* A disagreeing input: one line naming the key; nothing of it merged. */
  int rc = sh(NULL, &err, "'%s' dataset merge '%s' '%s'", tests_kcast(), out_db, b);
  CU_ASSERT_EQUAL(rc, 1);
  CU_ASSERT_PTR_NOT_NULL(err && strstr(err, "(app 'scan', dataset 'x', lseq 0)") &&
                         strstr(err, "disagree") && !strchr(strchr(err, '\n') + 1, '\n'));
  if (rc != 1 || !err || !strstr(err, "lseq 0")) printf("\n    %s ", err ? err : "");
  free(err);
  free(e2);
  CU_ASSERT_EQUAL(sh(NULL, NULL, "'%s' dataset export '%s' -o '%s/e2.csv'", tests_kcast(), out_db, dir), 0);
  e2 = tests_read_file(p2, NULL);
  CU_ASSERT_TRUE(e1 && e2 && !strcmp(e1, e2)); /* unchanged */
  CU_ASSERT_EQUAL(count_rows(out_db, "runs"), runs);
  /* --replace lets the input win. */
  CU_ASSERT_EQUAL(sh(NULL, NULL, "'%s' dataset merge --replace '%s' '%s'", tests_kcast(), out_db, b), 0);
  sig sb, so;
  CU_ASSERT_EQUAL_FATAL(signature(b, &sb), 0);
  CU_ASSERT_EQUAL_FATAL(signature(out_db, &so), 0);
  CU_ASSERT_TRUE(sig_equal(&sb, &so));
  CU_ASSERT_EQUAL(count_rows(out_db, "runs"), runs + 1); /* both runs' provenance kept */
  sig_free(&sb);
  sig_free(&so);
  free(e1);
  free(e2);
}

/* ------------------------------------------------------------ cwd= -- */

/* An entry whose program reads its input relative to where it runs (as
   public suites do): a script that runs gemm_tiled with the arguments in
   ./input.txt.  With cwd=data it finds data/input.txt; without, it fails;
   cwd= of a folder that does not exist is a manifest error. */
static void test_entry_cwd(void) {
  if (!have_suite()) return;
  char dir[4096], abs[4096], p[4400];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "suite-cwd"));
  CU_ASSERT_PTR_NOT_NULL_FATAL(realpath(dir, abs));
  char bindir[4096];
  snprintf(p, sizeof p, "%s/suite", tests_build());
  CU_ASSERT_PTR_NOT_NULL_FATAL(realpath(p, bindir));
  snprintf(p, sizeof p, "%s/data", abs);
  CU_ASSERT_EQUAL_FATAL(mkdir(p, 0755), 0);
  snprintf(p, sizeof p, "%s/data/input.txt", abs);
  CU_ASSERT_EQUAL_FATAL(write_text(p, "64 16\n"), 0);
  char script[4500];
  snprintf(script, sizeof script, "#!/bin/sh\nexec '%s/gemm_tiled' $(cat input.txt)\n", bindir);
  snprintf(p, sizeof p, "%s/wrap.sh", abs);
  CU_ASSERT_EQUAL_FATAL(write_text(p, script), 0);
  CU_ASSERT_EQUAL_FATAL(chmod(p, 0755), 0);
  snprintf(p, sizeof p, "%s/m.txt", abs);
  CU_ASSERT_EQUAL_FATAL(write_text(p, "cwd=data app=wrapped dataset=in ./wrap.sh\n"
                                      "app=plain dataset=in ./wrap.sh\n"), 0);
  char *out = NULL, *err = NULL;
  int rc = sh(&out, &err, "cd / && '%s' suite run '%s/m.txt' -o '%s/o.db'", tests_kcast(), abs, abs);
  CHECK_MSG("the entry with cwd= passes, the one without fails (no ./input.txt)",
            rc == 1 && out && strstr(out, "wrapped in") && strstr(out, "passed, 1 launch") &&
                strstr(out, "FAILED"));
  free(out); free(err);
  snprintf(p, sizeof p, "%s/o.db", abs);
  CHECK_MSG("it ran in data/ and its one launch is recorded",
            count_rows(p, "launches") == 1);
  ds_db *db = NULL;
  char e2[256];
  if (ds_open(p, DS_READONLY, &db, e2, sizeof e2) == 0) {
    ds_suite_entry se;
    CHECK_MSG("cwd= is part of the entry's recorded command",
              ds_suite_find(db, "run", "wrapped", "in", "", &se) == 1 &&
                  !strncmp(se.command, "cwd=data ", 9));
    ds_close(db);
  }
  snprintf(p, sizeof p, "%s/m2.txt", abs);
  CU_ASSERT_EQUAL_FATAL(write_text(p, "cwd=nowhere ./wrap.sh\n"), 0);
  rc = sh(&out, &err, "'%s' suite run '%s' -o '%s/o2.db'", tests_kcast(), p, abs);
  CHECK_MSG("cwd= of a missing folder is an error naming the line, nothing run",
            rc == 1 && err && strstr(err, "m2.txt:1: cwd=nowhere: No such file or directory"));
  free(out); free(err);
}

/* ----------------------------------------------------------- Slurm -- */

/* Live (not zombie) processes whose command line or environment names s. */
static int live_with(const char *s) {
  DIR *d = opendir("/proc");
  struct dirent *de;
  int n = 0;
  while (d && (de = readdir(d))) {
    if (de->d_name[0] < '0' || de->d_name[0] > '9') continue;
    char p[300], *t;
    size_t len;
    snprintf(p, sizeof p, "/proc/%s/stat", de->d_name);
    t = tests_read_file(p, NULL);
    char *rp = t ? strrchr(t, ')') : NULL;
    int zombie = rp && rp[1] == ' ' && rp[2] == 'Z';
    free(t);
    if (zombie) continue;
    const char *files[] = {"cmdline", "environ"};
    for (int k = 0; k < 2; k++) {
      snprintf(p, sizeof p, "/proc/%s/%s", de->d_name, files[k]);
      t = tests_read_file(p, &len);
      for (size_t i = 0; t && i < len; i++)
        if (!t[i]) t[i] = ' ';
      if (t && strstr(t, s)) n++;
      free(t);
    }
  }
  if (d) closedir(d);
  return n;
}

/* Architectures of the machine code (ELF) and of the PTX in program's
   fatbinaries (the .nv_fatbin section, every container in it), as bit
   masks of arch - 50 (sm_75: bit 25); -1 when they cannot be read. */
static int fatbin_archs(const char *program, const char *tmp, uint64_t *elf, uint64_t *ptx) {
  char bin[4400];
  snprintf(bin, sizeof bin, "%s/fatbin.bin", tmp);
  if (sh(NULL, NULL, "objcopy -O binary --only-section=.nv_fatbin '%s' '%s'", program, bin)) return -1;
  size_t len = 0;
  unsigned char *fb = (unsigned char *)tests_read_file(bin, &len);
  *elf = *ptx = 0;
  int nc = 0;
  for (size_t at = 0; fb && at + 16 <= len;) {
    size_t sz = rt_fatbin_size(fb + at);
    if (!sz || at + sz > len) break;
    rt_fatbin_entry e[64];
    size_t n = 0;
    char err[256];
    if (rt_fatbin_list(fb + at, len - at, e, 64, &n, err, sizeof err)) break;
    for (size_t k = 0; k < n && k < 64; k++)
      if (e[k].arch >= 50 && e[k].arch < 114) {
        if (e[k].kind == RT_FATBIN_ELF) *elf |= 1ull << (e[k].arch - 50);
        if (e[k].kind == RT_FATBIN_PTX) *ptx |= 1ull << (e[k].arch - 50);
      }
    nc++;
    at += (sz + 7) & ~(size_t)7;
  }
  free(fb);
  return nc ? 0 : -1;
}

/* cuobjdump: $KCAST_CUOBJDUMP, else on PATH, else the CUDA root's bin
   (the toolkit ships it; pip's nvidia-cuda-cuobjdump has one too). */
static int find_cuobjdump(char *buf, size_t cap) {
  const char *env = getenv("KCAST_CUOBJDUMP");
  if (env && *env) return snprintf(buf, cap, "%s", env), access(buf, X_OK) == 0;
  char *out = NULL;
  int rc = sh(&out, NULL, "command -v cuobjdump || { d=$(dirname \"$(command -v nvcc)\") && "
              "test -x \"$d/cuobjdump\" && echo \"$d/cuobjdump\"; }");
  int ok = rc == 0 && out && *out;
  if (ok) {
    out[strcspn(out, "\n")] = 0;
    snprintf(buf, cap, "%s", out);
  }
  free(out);
  return ok;
}

static void test_slurm_array_equals_local(void) {
  if (!have_suite()) return;
  char dir[4096], m[4200], single[4200], merged[4300];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "suite-slurm"));
  char abs[4096];
  CU_ASSERT_PTR_NOT_NULL_FATAL(realpath(dir, abs));
  snprintf(m, sizeof m, "%s/m.txt", abs);
  write_fast(m, NULL);
  /* the first entry says what memory it needs (submit.sh's --mem) */
  char *mt = tests_read_file(m, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(mt);
  char *first = strstr(mt, fast_lines[0]);
  CU_ASSERT_PTR_NOT_NULL_FATAL(first);
  char mtext[4200];
  snprintf(mtext, sizeof mtext, "%.*smem=700 %s", (int)(first - mt), mt, first);
  free(mt);
  CU_ASSERT_EQUAL_FATAL(write_text(m, mtext), 0);
  char kcast[4096], bindir[4200];
  CU_ASSERT_PTR_NOT_NULL_FATAL(realpath(tests_kcast(), kcast));
  snprintf(bindir, sizeof bindir, "%s/suite", tests_build());
  char bindir_abs[4096];
  CU_ASSERT_PTR_NOT_NULL_FATAL(realpath(bindir, bindir_abs));
  /* The programs the array runs are built for a cluster of mixed GPUs:
     machine code for every architecture from sm_70 to sm_90 this nvcc
     makes, PTX for newer ones (read by kcast's fatbinary reader, and by
     cuobjdump --list-elf where there is one). */
  char *codes = NULL;
  uint64_t want = 0;
  if (sh(&codes, NULL, "nvcc --list-gpu-code 2>/dev/null") == 0 && codes) {
    static const unsigned a[] = {70, 75, 80, 86, 89, 90};
    for (size_t k = 0; k < 6; k++) {
      char name[16];
      snprintf(name, sizeof name, "sm_%u\n", a[k]);
      if (strstr(codes, name)) want |= 1ull << (a[k] - 50);
    }
  }
  free(codes);
  char cuobjdump[4096];
  int have_cuobjdump = find_cuobjdump(cuobjdump, sizeof cuobjdump);
  if (!have_cuobjdump) printf("\n    [no cuobjdump (KCAST_CUOBJDUMP): kcast's fatbinary reader only] ");
  CHECK_MSG("nvcc makes several architectures from sm_70 to sm_90", __builtin_popcountll(want) >= 3);
  for (size_t i = 0; i < NFAST; i++) {
    char prog[64], path[4400], msg[256];
    sscanf(fast_lines[i], "%63s", prog);
    snprintf(path, sizeof path, "%s/%s", bindir_abs, prog);
    uint64_t elf = 0, ptx = 0;
    int r = fatbin_archs(path, abs, &elf, &ptx);
    snprintf(msg, sizeof msg, "%s holds machine code for every architecture nvcc makes from sm_70 "
             "to sm_90, and compute_90 PTX", prog);
    CHECK_MSG(msg, r == 0 && (elf & want) == want && (ptx >> 40 & 1));
    if (have_cuobjdump) {
      char *lst = NULL;
      int rc2 = sh(&lst, NULL, "'%s' --list-elf '%s'", cuobjdump, path);
      int all = rc2 == 0 && lst;
      for (unsigned a = 70; all && a <= 90; a++)
        if (want >> (a - 50) & 1) {
          char name[32];
          snprintf(name, sizeof name, ".sm_%u.cubin", a);
          all = strstr(lst, name) != NULL;
        }
      snprintf(msg, sizeof msg, "cuobjdump --list-elf %s lists every architecture", prog);
      CHECK_MSG(msg, all);
      free(lst);
    }
  }
  char *out = NULL;
  /* Bounded: the script's own limits, and a kill after 420 s at worst. */
  int rc = sh(&out, NULL, "JOB_WAIT=240 timeout -k 10 420 tests/slurm/one-node.sh '%s' '%s' '%s' '%s' 2>&1",
              kcast, bindir_abs, m, abs);
  const char *st = out ? strstr(out, ", state ") : NULL;
  char state[512] = "";
  if (st) sscanf(st + 8, "%511s", state);
  if (rc == 77) {
    printf("\n    [skip: no one-node Slurm here: %s] ", out ? out : "");
    free(out);
    return;
  }
  if (rc != 0) printf("\n%s ", out ? out : "");
  CU_ASSERT_EQUAL_FATAL(rc, 0); /* the array and its merge step completed */
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "JobState=COMPLETED"));
  /* limits from the manifest's costs: 6 entries guessed at 1 s over 4
     shards (2 s at most: 2 x 2 s + 10 min, 11 min), mem=700 + 512 MiB;
     the merge 10 min + 6 s and 1024 MiB */
  CHECK_MSG("the array's --time and --mem come from the manifest's costs",
            strstr(out, "MinMemoryNode=1212M") && strstr(out, "TimeLimit=00:11:00"));
  CHECK_MSG("the merge job has its own --mem", strstr(out, "MinMemoryNode=1G"));
  if (!strstr(out, "MinMemoryNode=1212M") || !strstr(out, "MinMemoryNode=1G")) printf("\n%s ", out);
  /* Nothing of the cluster outlives the test. */
  CU_ASSERT_TRUE(state[0] != 0);
  if (state[0]) CU_ASSERT_EQUAL(live_with(state), 0);
  free(out);
  snprintf(single, sizeof single, "%s/single.db", abs);
  snprintf(merged, sizeof merged, "%s/array/features.db", abs);
  sig ss, sm;
  CU_ASSERT_EQUAL_FATAL(signature(single, &ss), 0);
  CU_ASSERT_EQUAL_FATAL(signature(merged, &sm), 0);
  CU_ASSERT_TRUE(ss.n >= NFAST);
  CU_ASSERT_TRUE(sig_equal(&ss, &sm)); /* the merged shards equal the local run, launch for launch */
  /* Four shards, each entry in exactly one of them. */
  size_t total = 0;
  int nonempty = 0;
  for (int i = 0; i < 4; i++) {
    char p[4400];
    snprintf(p, sizeof p, "%s/array/features-%d.db", abs, i);
    sig sh_;
    CU_ASSERT_EQUAL_FATAL(signature(p, &sh_), 0);
    total += sh_.n;
    nonempty += sh_.n > 0;
    sig_free(&sh_);
  }
  CU_ASSERT_EQUAL(total, sm.n);
  CU_ASSERT_EQUAL(nonempty, 4); /* 6 entries over 4 tasks: none idle */
  CU_ASSERT_EQUAL(count_rows(merged, "suite_entries"), (int64_t)NFAST);
  /* Node-local scratch: every task and the merge said where theirs was
     (TMPDIR of the test's jobs), it is gone, and the shared folder holds
     the finished datasets only; the site hook ran in every job. */
  int scratch_named = 0, hooked = 0;
  char tmpd[4400], want_s[4500];
  snprintf(tmpd, sizeof tmpd, "%s/node-tmp", abs);
  snprintf(want_s, sizeof want_s, "node-local scratch %s/kcast-", tmpd);
  for (int i = 0; i < 5; i++) {
    char p[4400];
    if (i < 4) snprintf(p, sizeof p, "%s/array/features-%d.out", abs, i);
    else snprintf(p, sizeof p, "%s/array/merge.out", abs);
    char *t = tests_read_file(p, NULL);
    scratch_named += t && strstr(t, want_s);
    hooked += t && strstr(t, "setup hook ran");
    free(t);
  }
  CHECK_MSG("each job worked in node-local scratch ($TMPDIR)", scratch_named == 5);
  CHECK_MSG("each job sourced KCAST_SLURM_SETUP first (the module-load hook)", hooked == 5);
  char *ls = NULL;
  sh(&ls, NULL, "ls -A '%s'; echo ==; ls -A '%s/array'", tmpd, abs);
  CHECK_MSG("the scratch folders are removed when the jobs end", ls && !strncmp(ls, "==", 2));
  CHECK_MSG("the shared folder has no SQLite journal and no entry's scratch",
            ls && !strstr(ls, "-journal") && !strstr(ls, ".kcast-suite-") && !strstr(ls, ".tmp."));
  free(ls);
  sig_free(&ss);
  sig_free(&sm);
}

TEST_SUITES(register_cli_suite) {
  CU_pSuite s = tests_suite("cli_suite");
  TEST_ADD(s, test_manifest_errors);
  TEST_ADD(s, test_shards);
  TEST_ADD(s, test_run_parallel_resume_fail);
  TEST_ADD(s, test_entry_timeout);
  TEST_ADD(s, test_interrupted_suite_resumes);
  TEST_ADD(s, test_profile_without_gpu);
  TEST_ADD(s, test_merge_agreement);
  TEST_ADD(s, test_entry_cwd);
  CU_pSuite t = tests_suite("slurm");
  TEST_ADD(t, test_slurm_array_equals_local);
}
