/*
 * test_cli_dataset.c -- `kcast dataset stats|export|merge` through the real
 * binary (tests_kcast()), on datasets the test builds with the ds_ API:
 * output contents, CSV quoting, exit codes and the one-line errors.
 */
#include "tests.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/ds.h"

/* A dataset with two apps, an awkward kernel name (comma and quote), an
   H200 time with repeats and a T4 power; path in buf.  0 on success. */
static int make_db(char *buf, size_t cap, const char *name) {
  char dir[2048], err[512];
  if (!tests_tmpdir(dir, sizeof dir, "clids")) return -1;
  snprintf(buf, cap, "%s/%s", dir, name);
  ds_db *db;
  if (ds_open(buf, DS_CREATE, &db, err, sizeof err) < 0) return -1;
  int rc = ds_begin(db);
  feat_vec fv;
  feat_init(&fv);
  feat_set(&fv, "op.add.s32", 12);
  feat_set(&fv, "launch.threads", 256);
  ds_launch l = {0};
  l.app = "saxpy";
  l.dataset = "n=1024";
  l.kernel = "_Z5saxpyifPfS_";
  l.grid[0] = 4; l.grid[1] = 1; l.grid[2] = 1;
  l.block[0] = 256; l.block[1] = 1; l.block[2] = 1;
  int64_t id1 = 0, id2 = 0;
  rc |= ds_insert_launch(db, &l, &fv, &id1);
  feat_set(&fv, "op.mul.f32", 0.1);
  l.app = "odd,app";
  l.dataset = "say \"hi\"";
  l.kernel = "k";
  l.lseq = 3;
  l.shmem = 48;
  rc |= ds_insert_launch(db, &l, &fv, &id2);
  rc |= ds_insert_measurement(db, id1, "H200", "time_ns", 100, 0, "t");
  rc |= ds_insert_measurement(db, id1, "H200", "time_ns", 300, 1, "t");
  rc |= ds_insert_measurement(db, id1, "H200", "time_ns", 200, 2, "t");
  rc |= ds_insert_measurement(db, id2, "T4", "power_w", 55.5, 0, "t");
  rc |= ds_commit(db);
  feat_free(&fv);
  ds_close(db);
  return rc ? -1 : 0;
}

static int run(char **out, char **err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int run(char **out, char **err, const char *fmt, ...) {
  char args[8192], cmd[9000];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(args, sizeof args, fmt, ap);
  va_end(ap);
  snprintf(cmd, sizeof cmd, "'%s' dataset %s", tests_kcast(), args);
  return tests_run(cmd, out, err);
}

static void test_stats_outputs(void) {
  char db[2200];
  CU_ASSERT_EQUAL_FATAL(make_db(db, sizeof db, "s.db"), 0);
  char *out = NULL, *err = NULL;
  CU_ASSERT_EQUAL(run(&out, &err, "stats '%s'", db), 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(out);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "launches        2"));  /* table: totals */
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "saxpy"));               /* per-app row */
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "H200"));                /* per-GPU row */
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "power_w"));
  free(out); free(err);

  CU_ASSERT_EQUAL(run(&out, &err, "stats '%s' --format json", db), 0);
  cJSON *j = cJSON_Parse(out);
  CU_ASSERT_PTR_NOT_NULL_FATAL(j);  /* JSON output parses */
  CU_ASSERT_EQUAL(cJSON_GetObjectItem(j, "launches")->valuedouble, 2);
  CU_ASSERT_EQUAL(cJSON_GetObjectItem(j, "measurements")->valuedouble, 4);
  cJSON *apps = cJSON_GetObjectItem(j, "apps");
  CU_ASSERT_EQUAL(cJSON_GetArraySize(apps), 2);
  cJSON *m0 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "measured"), 0);
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(m0, "gpu")->valuestring, "H200");
  CU_ASSERT_EQUAL(cJSON_GetObjectItem(m0, "measurements")->valuedouble, 3);
  cJSON_Delete(j);
  free(out); free(err);

  CU_ASSERT_EQUAL(run(&out, &err, "stats --format=csv '%s'", db), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "kind,app,gpu,metric,"));  /* csv header */
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "app,\"odd,app\",,,1,1,1,3,"));  /* quoted app */
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "gpu,,T4,power_w,1,,,,1"));
  free(out); free(err);
}

static void test_export_csv(void) {
  char db[2200], csvpath[2300];
  CU_ASSERT_EQUAL_FATAL(make_db(db, sizeof db, "e.db"), 0);
  char *out = NULL, *err = NULL;
  CU_ASSERT_EQUAL(run(&out, &err, "export '%s'", db), 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(out);
  const char *header =
      "id,bench,app,dataset,lseq,kernel,grid_x,grid_y,grid_z,block_x,block_y,"
      "block_z,shmem,launch.threads,op.add.s32,op.mul.f32,time_ns@H200,"
      "power_w@T4,demangled\n";
  CU_ASSERT_EQUAL(strncmp(out, header, strlen(header)), 0);  /* fixed columns, sorted features, metric@gpu by gpu */
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "\n1,,saxpy,n=1024,0,_Z5saxpyifPfS_,4,1,1,256,1,1,0,256,12,,200,,\"saxpy(int, float, float*, float*)\"\n"));  /* empty cell for a missing feature, median 200 */
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "\n2,,\"odd,app\",\"say \"\"hi\"\"\",3,k,4,1,1,256,1,1,48,256,12,0.1,,55.5,k\n"));  /* RFC 4180 quoting */
  free(out); free(err);

  snprintf(csvpath, sizeof csvpath, "%s.csv", db);
  CU_ASSERT_EQUAL(run(&out, &err, "export '%s' -o '%s'", db, csvpath), 0);
  CU_ASSERT_STRING_EQUAL(out, "");  /* -o: nothing on stdout */
  char *file = tests_read_file(csvpath, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(file);
  CU_ASSERT_EQUAL(strncmp(file, header, strlen(header)), 0);
  free(file); free(out); free(err);
}

static void test_merge_cli(void) {
  char a[2200], b[2200], outdb[2300];
  CU_ASSERT_EQUAL_FATAL(make_db(a, sizeof a, "a.db"), 0);
  CU_ASSERT_EQUAL_FATAL(make_db(b, sizeof b, "b.db"), 0);
  snprintf(outdb, sizeof outdb, "%s.merged", a);
  char *out = NULL, *err = NULL;
  CU_ASSERT_EQUAL(run(&out, &err, "merge '%s' '%s' '%s'", outdb, a, b), 0);
  free(out); free(err);
  CU_ASSERT_EQUAL(run(&out, &err, "stats '%s' --format json", outdb), 0);
  cJSON *j = cJSON_Parse(out);
  CU_ASSERT_PTR_NOT_NULL_FATAL(j);
  CU_ASSERT_EQUAL(cJSON_GetObjectItem(j, "launches")->valuedouble, 2);  /* same keys merged */
  CU_ASSERT_EQUAL(cJSON_GetObjectItem(j, "measurements")->valuedouble, 4);  /* same reps replaced */
  cJSON_Delete(j);
  free(out); free(err);
}

static void test_errors(void) {
  char db[2200], bad[2300];
  CU_ASSERT_EQUAL_FATAL(make_db(db, sizeof db, "x.db"), 0);
  char *out = NULL, *err = NULL;
  snprintf(bad, sizeof bad, "%s.missing", db);
  CU_ASSERT_EQUAL(run(&out, &err, "stats '%s'", bad), 1);  /* missing file: exit 1 */
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "kcast: "));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, bad));
  size_t lines = 0;
  for (const char *p = err; p && *p; p++) lines += *p == '\n';
  CU_ASSERT_EQUAL(lines, 1);  /* exactly one line of error */
  free(out); free(err);

  snprintf(bad, sizeof bad, "%s.txt", db);
  CU_ASSERT_EQUAL_FATAL(tests_write_file(bad, "hello, world\n", 13), 0);
  CU_ASSERT_EQUAL(run(&out, &err, "export '%s'", bad), 1);  /* not SQLite: exit 1 */
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "not an SQLite database"));
  free(out); free(err);
  CU_ASSERT_EQUAL(run(&out, &err, "merge '%s' '%s'", db, bad), 1);  /* bad merge input */
  CU_ASSERT_PTR_NOT_NULL(strstr(err, bad));
  free(out); free(err);

  CU_ASSERT_EQUAL(run(&out, &err, "stats '%s' --bogus", db), 2);  /* unknown option: usage error */
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "--bogus"));
  free(out); free(err);
  CU_ASSERT_EQUAL(run(&out, &err, "frobnicate '%s'", db), 2);  /* unknown subcommand */
  free(out); free(err);
  CU_ASSERT_EQUAL(run(&out, &err, "stats '%s' --format xml", db), 2);  /* unknown format */
  free(out); free(err);
  CU_ASSERT_EQUAL(run(&out, &err, "export '%s' --format json", db), 2);  /* export is csv only */
  free(out); free(err);
  CU_ASSERT_EQUAL(run(&out, &err, "stats"), 2);  /* no DB */
  free(out); free(err);
  CU_ASSERT_EQUAL(run(&out, &err, "--help"), 0);  /* help on stdout */
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "kcast dataset export"));
  free(out); free(err);
}

TEST_SUITES(register_cli_dataset) {
  CU_pSuite s = tests_suite("cli dataset");
  TEST_ADD(s, test_stats_outputs);
  TEST_ADD(s, test_export_csv);
  TEST_ADD(s, test_merge_cli);
  TEST_ADD(s, test_errors);
}
