/*
 * test_suite.c -- a fast subset of the kernel suite (datasets/suite) under
 * `kcast run`: each program, built by `make` with the suite's flags
 * (SUITE_FAST in the Makefile), must pass its own check on the CPU emulator,
 * and every launch must land in the dataset keyed (app, dataset, lseq) with
 * consistent features.  The whole suite runs through `make datasets`.
 */
#include "tests.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "datasets/ds.h"
#include "extractor/features.h"

static const char *const fast_runs[] = {
  "gemm_tiled 64 8",
  "reduce_shuffle 4096 64",
  "histogram_shared 65536 256",
  "scan 100000 128",
  "stencil2d 64 8 10",
  "bfs 2000 128",
  "gemm_mma 64",
};

/* Sum of the values of the features whose names start with prefix. */
static double sum_prefix(const feat_vec *v, const char *prefix) {
  double s = 0;
  size_t n = strlen(prefix);
  for (size_t i = 0; i < v->n; i++)
    if (!strncmp(v->names[i], prefix, n)) s += v->vals[i];
  return s;
}

static void check_run(const char *line) {
  char prog[64], args[256] = "";
  if (sscanf(line, "%63s %255[^\n]", prog, args) < 1) { CU_FAIL("bad run line"); return; }
  char bin[4096], dir[4096], db[4200], cmd[16384];
  snprintf(bin, sizeof bin, "%s/suite/%s", tests_build(), prog);
  struct stat st;
  if (stat(bin, &st) != 0) {
    printf("\n    [skip %s: %s not built (nvcc missing?)] ", prog, bin);
    return;
  }
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "suite"));
  snprintf(db, sizeof db, "%s/s.db", dir);
  snprintf(cmd, sizeof cmd, "'%s' run -o '%s' --timeout 300 -- '%s' %s", tests_kcast(), db, bin,
           args);
  char *out = NULL, *err = NULL;
  int rc = tests_run(cmd, &out, &err);
  if (rc != 0) printf("\n    %s: exit %d\n%s\n%s ", line, rc, out ? out : "", err ? err : "");
  CU_ASSERT_EQUAL(rc, 0); /* the program passes its own check on the emulator */
  CU_ASSERT_PTR_NOT_NULL(out && strstr(out, "PASS")); /* and says PASS */
  free(out);
  free(err);

  ds_db *d = NULL;
  char e[512];
  CU_ASSERT_EQUAL_FATAL(ds_open(db, DS_READONLY, &d, e, sizeof e), 0); /* kcast run wrote a dataset */
  ds_iter *it = NULL;
  CU_ASSERT_EQUAL_FATAL(ds_iter_launches(d, prog, args, &it), 0);
  int64_t id, expect_lseq = 0;
  ds_launch l;
  int r, consistent = 1, nlaunch = 0;
  while ((r = ds_iter_next(it, &id, &l)) == 1) {
    nlaunch++;
    if (l.lseq != expect_lseq++) consistent = 0; /* lseq counts launches from 0 */
    feat_vec v;
    feat_init(&v);
    if (ds_get_features(d, id, &v) != 0) consistent = 0;
    double threads = (double)l.grid[0] * l.grid[1] * l.grid[2] * l.block[0] * l.block[1] * l.block[2];
    if (feat_get(&v, "launch.threads", -1) != threads) consistent = 0;
    /* every thread-instruction is in exactly one class */
    if (fabs(sum_prefix(&v, "class.") - sum_prefix(&v, "op.")) > 0.5) consistent = 0;
    if (sum_prefix(&v, "op.") <= 0) consistent = 0;
    feat_free(&v);
  }
  CU_ASSERT_EQUAL(r, 0);
  ds_iter_free(it);
  ds_close(d);
  if (!nlaunch || !consistent) printf("\n    %s: %d launches, consistent=%d ", line, nlaunch, consistent);
  CU_ASSERT_TRUE(nlaunch > 0); /* the run's launches are keyed (program, arguments) */
  CU_ASSERT_TRUE(consistent);  /* lseq 0..n-1, launch.threads, class sums = op sums */
}

static void test_fast_suite(void) {
  for (size_t i = 0; i < sizeof fast_runs / sizeof fast_runs[0]; i++) check_run(fast_runs[i]);
}

TEST_SUITES(register_suite) {
  CU_pSuite s = tests_suite("suite");
  TEST_ADD(s, test_fast_suite);
}
