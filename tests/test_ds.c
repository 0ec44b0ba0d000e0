/*
 * test_ds.c -- the dataset store (datasets/ds.h): opening and refusing files,
 * launch/feature/measurement writers and their re-insert rules, the matrix
 * query used by training, merge, statistics, and crash safety (a writer
 * SIGKILLed inside a transaction leaves the file as it was).
 *
 * Every test builds its own dataset under $KCAST_BUILD/tmp through the API;
 * raw SQLite is used only to forge files the API must refuse and to count
 * rows behind the API's back.
 */
#include "tests.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "datasets/ds.h"

/* A fresh path "<tmpdir>/<name>" (the folder is new for every call). */
static const char *tmp_path(char *buf, size_t cap, const char *name) {
  char dir[2048];
  if (!tests_tmpdir(dir, sizeof dir, "ds")) return NULL;
  snprintf(buf, cap, "%s/%s", dir, name);
  return buf;
}

static ds_db *create_db(char *path, size_t cap) {
  char err[512];
  ds_db *db = NULL;
  if (!tmp_path(path, cap, "t.db")) return NULL;
  if (ds_open(path, DS_CREATE, &db, err, sizeof err) < 0) {
    fprintf(stderr, "create_db: %s\n", err);
    return NULL;
  }
  return db;
}

static ds_launch mk_launch(const char *app, const char *dataset, int64_t lseq,
                           const char *kernel) {
  ds_launch l = {0};
  l.bench = "testsuite";
  l.app = app;
  l.dataset = dataset;
  l.lseq = lseq;
  l.kernel = kernel;
  l.grid[0] = 64; l.grid[1] = 1; l.grid[2] = 1;
  l.block[0] = 256; l.block[1] = 1; l.block[2] = 1;
  l.source = "test";
  return l;
}

/* Row count of table through raw SQLite; -1 on error. */
static long long raw_count(const char *path, const char *table) {
  sqlite3 *h;
  char sql[256];
  long long n = -1;
  if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
    sqlite3_close(h);
    return -1;
  }
  snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", table);
  sqlite3_stmt *s;
  if (sqlite3_prepare_v2(h, sql, -1, &s, NULL) == SQLITE_OK &&
      sqlite3_step(s) == SQLITE_ROW)
    n = sqlite3_column_int64(s, 0);
  sqlite3_finalize(s);
  sqlite3_close(h);
  return n;
}

static int raw_exec(const char *path, const char *sql) {
  sqlite3 *h;
  int rc = sqlite3_open(path, &h);
  if (rc == SQLITE_OK) rc = sqlite3_exec(h, sql, NULL, NULL, NULL);
  sqlite3_close(h);
  return rc == SQLITE_OK ? 0 : -1;
}

/* ------------------------------------------------------------ open/close -- */

static void test_open_create_and_reopen(void) {
  char path[2200], err[512];
  ds_db *db = create_db(path, sizeof path);
  CU_ASSERT_PTR_NOT_NULL_FATAL(db);
  CU_ASSERT_STRING_EQUAL(ds_path(db), path);
  ds_close(db);
  db = NULL;
  CU_ASSERT_EQUAL(ds_open(path, 0, &db, err, sizeof err), 0); /* existing dataset opens without DS_CREATE */
  CU_ASSERT_PTR_NOT_NULL(db);
  CU_ASSERT_EQUAL(ds_integrity_check(db), 0);   /* fresh schema is consistent */
  ds_close(db);
  CU_ASSERT_EQUAL(ds_open(path, DS_READONLY, &db, err, sizeof err), 0);
  ds_launch l = mk_launch("a", "d", 0, "k");
  CU_ASSERT_EQUAL(ds_insert_launch(db, &l, NULL, NULL), -1);  /* read-only handle refuses writes */
  CU_ASSERT_PTR_NOT_NULL(strstr(ds_errmsg(db), path));        /* ... naming the file */
  ds_close(db);
  ds_close(NULL);  /* NULL is accepted */
}

static void test_open_refuses_bad_files(void) {
  char path[2200], err[512];
  ds_db *db = (ds_db *)1;

  CU_ASSERT_PTR_NOT_NULL_FATAL(tmp_path(path, sizeof path, "missing.db"));
  CU_ASSERT_EQUAL(ds_open(path, 0, &db, err, sizeof err), -1);  /* missing file without DS_CREATE */
  CU_ASSERT_PTR_NULL(db);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, path));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "No such file"));
  struct stat sb;
  CU_ASSERT_NOT_EQUAL(stat(path, &sb), 0);  /* and it did not create it */

  CU_ASSERT_PTR_NOT_NULL_FATAL(tmp_path(path, sizeof path, "text.db"));
  CU_ASSERT_EQUAL_FATAL(tests_write_file(path, "launch,app\n1,x\n", 15), 0);
  CU_ASSERT_EQUAL(ds_open(path, DS_CREATE, &db, err, sizeof err), -1);  /* a text file is not taken over */
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "not an SQLite database"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, path));

  CU_ASSERT_PTR_NOT_NULL_FATAL(tmp_path(path, sizeof path, "foreign.db"));
  CU_ASSERT_EQUAL_FATAL(raw_exec(path, "CREATE TABLE kernels(id, name)"), 0);
  CU_ASSERT_EQUAL(ds_open(path, DS_CREATE, &db, err, sizeof err), -1);  /* foreign SQLite file refused */
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "not a kcast dataset"));
  CU_ASSERT_EQUAL(raw_count(path, "kernels"), 0);  /* and left untouched */

  ds_db *ok = create_db(path, sizeof path);
  CU_ASSERT_PTR_NOT_NULL_FATAL(ok);
  ds_close(ok);
  CU_ASSERT_EQUAL_FATAL(raw_exec(path, "UPDATE meta SET value = '99'"
                                       " WHERE key = 'schema_version'"), 0);
  CU_ASSERT_EQUAL(ds_open(path, 0, &db, err, sizeof err), -1);  /* newer schema refused */
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "schema version 99 is newer"));

  CU_ASSERT_PTR_NOT_NULL_FATAL(tmp_path(path, sizeof path, "empty.db"));
  CU_ASSERT_EQUAL_FATAL(tests_write_file(path, "", 0), 0);
  CU_ASSERT_EQUAL(ds_open(path, 0, &db, err, sizeof err), -1);  /* empty file is no dataset ... */
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "not a kcast dataset"));
  CU_ASSERT_EQUAL(ds_open(path, DS_CREATE, &db, err, sizeof err), 0);  /* ... but DS_CREATE fills it */
  ds_close(db);

  CU_ASSERT_EQUAL(ds_open(path, DS_CREATE | DS_READONLY, &db, err, sizeof err), -1);  /* contradictory flags */
  char dir[2048];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "dsdir"));
  CU_ASSERT_EQUAL(ds_open(dir, DS_CREATE, &db, err, sizeof err), -1);  /* a directory is refused */
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "directory"));
}

/* ---------------------------------------------------------------- writers -- */

static void test_insert_find_and_features(void) {
  char path[2200];
  ds_db *db = create_db(path, sizeof path);
  CU_ASSERT_PTR_NOT_NULL_FATAL(db);
  feat_vec fv;
  feat_init(&fv);
  feat_set(&fv, "op.add.s32", 100);
  feat_set(&fv, "launch.threads", 16384);
  ds_launch l = mk_launch("saxpy", "n=1M", 0, "_Z5saxpyifPfS_");
  int64_t id = 0, found = 0;
  CU_ASSERT_EQUAL(ds_begin(db), 0);
  CU_ASSERT_EQUAL(ds_insert_launch(db, &l, &fv, &id), 0);
  CU_ASSERT(id > 0);
  CU_ASSERT_EQUAL(ds_commit(db), 0);
  CU_ASSERT_EQUAL(ds_find_launch(db, "saxpy", "n=1M", 0, &found), 1);  /* found by (app, dataset, lseq) */
  CU_ASSERT_EQUAL(found, id);
  CU_ASSERT_EQUAL(ds_find_launch(db, "saxpy", "n=1M", 1, &found), 0);  /* other lseq: absent */
  CU_ASSERT_EQUAL(ds_find_launch(db, "saxpy", "n=2M", 0, &found), 0);  /* other dataset: absent */

  feat_vec got;
  feat_init(&got);
  CU_ASSERT_EQUAL(ds_get_features(db, id, &got), 0);
  CU_ASSERT_EQUAL(got.n, 2);
  CU_ASSERT_EQUAL(feat_get(&got, "op.add.s32", -1), 100);  /* feature values round-trip */
  CU_ASSERT_EQUAL(feat_get(&got, "launch.threads", -1), 16384);
  feat_free(&got);

  /* Measurements survive a re-insert; features are replaced by the new set. */
  CU_ASSERT_EQUAL(ds_insert_measurement(db, id, "H200", "time_ns", 1000, 0, "test"), 0);
  feat_vec fv2;
  feat_init(&fv2);
  feat_set(&fv2, "op.mul.f32", 7);
  l.kernel = "_Z5saxpyifPfS_v2";
  l.bench = NULL;
  int64_t id2 = 0;
  CU_ASSERT_EQUAL(ds_insert_launch(db, &l, &fv2, &id2), 0);  /* without ds_begin: commits by itself */
  CU_ASSERT_EQUAL(id2, id);  /* same key keeps its id */
  feat_init(&got);
  CU_ASSERT_EQUAL(ds_get_features(db, id, &got), 0);
  CU_ASSERT_EQUAL(got.n, 1);  /* old names are gone */
  CU_ASSERT_EQUAL(feat_get(&got, "op.mul.f32", -1), 7);
  feat_free(&got);
  CU_ASSERT_EQUAL(raw_count(path, "measurements"), 1);  /* measurement kept */
  CU_ASSERT_EQUAL(raw_count(path, "launches"), 1);

  ds_iter *it;
  ds_launch row;
  int64_t rid;
  CU_ASSERT_EQUAL_FATAL(ds_iter_launches(db, NULL, NULL, &it), 0);
  CU_ASSERT_EQUAL(ds_iter_next(it, &rid, &row), 1);
  CU_ASSERT_STRING_EQUAL(row.kernel, "_Z5saxpyifPfS_v2");  /* columns updated */
  CU_ASSERT_STRING_EQUAL(row.bench, "testsuite");  /* NULL bench kept the stored one */
  CU_ASSERT_EQUAL(row.grid[0], 64);
  CU_ASSERT_EQUAL(row.block[0], 256);
  CU_ASSERT_EQUAL(ds_iter_next(it, &rid, &row), 0);  /* only one launch */
  ds_iter_free(it);

  /* NULL features keep the stored feature set (a profiler's upsert). */
  CU_ASSERT_EQUAL(ds_insert_launch(db, &l, NULL, NULL), 0);
  CU_ASSERT_EQUAL(raw_count(path, "features"), 1);
  feat_free(&fv);
  feat_free(&fv2);
  ds_close(db);
}

static void test_insert_rejects_bad_input(void) {
  char path[2200];
  ds_db *db = create_db(path, sizeof path);
  CU_ASSERT_PTR_NOT_NULL_FATAL(db);
  ds_launch l = mk_launch("", "d", 0, "k");
  CU_ASSERT_EQUAL(ds_insert_launch(db, &l, NULL, NULL), -1);  /* empty app */
  CU_ASSERT_PTR_NOT_NULL(strstr(ds_errmsg(db), "app"));
  l = mk_launch("a", "d", -1, "k");
  CU_ASSERT_EQUAL(ds_insert_launch(db, &l, NULL, NULL), -1);  /* negative lseq */
  l = mk_launch("a", "d", 0, NULL);
  CU_ASSERT_EQUAL(ds_insert_launch(db, &l, NULL, NULL), -1);  /* no kernel */
  feat_vec fv;
  feat_init(&fv);
  feat_set(&fv, "op.x", NAN);
  l = mk_launch("a", "d", 0, "k");
  CU_ASSERT_EQUAL(ds_insert_launch(db, &l, &fv, NULL), -1);  /* NaN feature */
  CU_ASSERT_PTR_NOT_NULL(strstr(ds_errmsg(db), "op.x"));
  feat_free(&fv);
  CU_ASSERT_EQUAL(raw_count(path, "launches"), 0);  /* nothing half-written */
  int64_t id;
  CU_ASSERT_EQUAL_FATAL(ds_insert_launch(db, &l, NULL, &id), 0);
  CU_ASSERT_EQUAL(ds_insert_measurement(db, id, "H200", "cycles", 1, 0, NULL), -1);  /* unknown metric */
  CU_ASSERT_PTR_NOT_NULL(strstr(ds_errmsg(db), "cycles"));
  CU_ASSERT_EQUAL(ds_insert_measurement(db, id, "H200", "time_ns", -5, 0, NULL), -1);  /* negative time */
  CU_ASSERT_EQUAL(ds_insert_measurement(db, id, "", "time_ns", 5, 0, NULL), -1);  /* no GPU */
  CU_ASSERT_EQUAL(ds_insert_measurement(db, id + 100, "H200", "time_ns", 5, 0, NULL), -1);  /* unknown launch */
  CU_ASSERT_PTR_NOT_NULL(strstr(ds_errmsg(db), "no launch"));
  CU_ASSERT_EQUAL(raw_count(path, "measurements"), 0);
  CU_ASSERT_EQUAL(ds_commit(db), -1);  /* commit without begin is an error */
  ds_close(db);
}

static void test_rollback_discards(void) {
  char path[2200];
  ds_db *db = create_db(path, sizeof path);
  CU_ASSERT_PTR_NOT_NULL_FATAL(db);
  feat_vec fv;
  feat_init(&fv);
  feat_set(&fv, "op.a", 1);
  feat_set(&fv, "op.b", 2);
  ds_launch l = mk_launch("a", "d", 0, "k");
  CU_ASSERT_EQUAL(ds_begin(db), 0);
  CU_ASSERT_EQUAL(ds_record_run(db, "test rollback", NULL), 0);
  CU_ASSERT_EQUAL(ds_insert_launch(db, &l, &fv, NULL), 0);
  CU_ASSERT_EQUAL(ds_begin(db), -1);  /* no nested transactions */
  CU_ASSERT_EQUAL(ds_rollback(db), 0);
  CU_ASSERT_EQUAL(raw_count(path, "launches"), 0);  /* rolled back */
  CU_ASSERT_EQUAL(raw_count(path, "feature_names"), 0);
  CU_ASSERT_EQUAL(raw_count(path, "runs"), 0);
  /* The handle must not remember name ids (or a run) from the lost txn. */
  feat_vec fv2;
  feat_init(&fv2);
  feat_set(&fv2, "op.b", 5);
  int64_t id;
  CU_ASSERT_EQUAL(ds_insert_launch(db, &l, &fv2, &id), 0);
  feat_vec got;
  feat_init(&got);
  CU_ASSERT_EQUAL(ds_get_features(db, id, &got), 0);
  CU_ASSERT_EQUAL(got.n, 1);
  CU_ASSERT_EQUAL(feat_get(&got, "op.b", -1), 5);  /* name resolved afresh after rollback */
  CU_ASSERT_EQUAL(ds_integrity_check(db), 0);
  feat_free(&got);
  feat_free(&fv);
  feat_free(&fv2);
  ds_close(db);
}

/* A bulk transaction (kcast run's) stores the same rows, and the foreign
   keys hold again once it ends, committed or rolled back. */
static void test_bulk_transaction(void) {
  char path[2200];
  ds_db *db = create_db(path, sizeof path);
  CU_ASSERT_PTR_NOT_NULL_FATAL(db);
  feat_vec fv;
  feat_init(&fv);
  feat_set(&fv, "op.a", 1);
  feat_set(&fv, "class.fp32", 7);
  ds_launch l = mk_launch("a", "d", 0, "k");
  int64_t id = 0;
  CU_ASSERT_EQUAL(ds_begin_bulk(db), 0);
  CU_ASSERT_EQUAL(ds_begin_bulk(db), -1); /* no nesting */
  CU_ASSERT_EQUAL(ds_record_run(db, "test bulk", NULL), 0);
  CU_ASSERT_EQUAL(ds_insert_launch(db, &l, &fv, &id), 0);
  CU_ASSERT_EQUAL(ds_commit(db), 0);
  feat_vec got;
  feat_init(&got);
  CU_ASSERT_EQUAL(ds_get_features(db, id, &got), 0);
  CU_ASSERT(got.n == 2 && feat_get(&got, "class.fp32", -1) == 7);
  /* enforced again: a measurement of a launch that does not exist fails */
  CU_ASSERT_EQUAL(ds_insert_measurement(db, id + 1000, "H100", "time_ns", 5, 0, "t"), -1);
  CU_ASSERT_EQUAL(ds_insert_measurement(db, id, "H100", "time_ns", 5, 0, "t"), 0);
  /* and after a rolled-back bulk transaction */
  CU_ASSERT_EQUAL(ds_begin_bulk(db), 0);
  CU_ASSERT_EQUAL(ds_rollback(db), 0);
  CU_ASSERT_EQUAL(ds_insert_measurement(db, id + 1000, "H100", "time_ns", 5, 1, "t"), -1);
  CU_ASSERT_EQUAL(ds_integrity_check(db), 0);
  feat_free(&got);
  feat_free(&fv);
  ds_close(db);
}

static void test_gpus(void) {
  char path[2200];
  ds_db *db = create_db(path, sizeof path);
  CU_ASSERT_PTR_NOT_NULL_FATAL(db);
  ds_gpu g = {0}, got;
  snprintf(g.name, sizeof g.name, "H200");
  g.cc_major = 9;
  g.cc_minor = 0;
  g.sm_count = 132;
  g.mem_bytes = 150LL << 30;
  g.mem_bandwidth_gbs = 4800;
  snprintf(g.cuda, sizeof g.cuda, "13.0");
  CU_ASSERT_EQUAL(ds_upsert_gpu(db, &g), 0);
  CU_ASSERT_EQUAL(ds_get_gpu(db, "H200", &got), 1);
  CU_ASSERT_EQUAL(got.sm_count, 132);
  CU_ASSERT_EQUAL(got.cc_major, 9);
  CU_ASSERT_EQUAL(got.mem_bytes, 150LL << 30);
  CU_ASSERT_STRING_EQUAL(got.cuda, "13.0");
  CU_ASSERT_STRING_EQUAL(got.driver, "");  /* unknown stays unknown */
  g.sm_count = 130;
  CU_ASSERT_EQUAL(ds_upsert_gpu(db, &g), 0);
  CU_ASSERT_EQUAL(ds_get_gpu(db, "H200", &got), 1);
  CU_ASSERT_EQUAL(got.sm_count, 130);  /* a known value replaces */
  CU_ASSERT_EQUAL(raw_count(path, "gpus"), 1);
  /* A row with fewer descriptors (a time-only profile: no NVML) keeps
     what the row knew and adds what it knows. */
  ds_gpu h = {0};
  snprintf(h.name, sizeof h.name, "H200");
  snprintf(h.driver, sizeof h.driver, "580.159.03");
  CU_ASSERT_EQUAL(ds_upsert_gpu(db, &h), 0);
  CU_ASSERT_EQUAL(ds_get_gpu(db, "H200", &got), 1);
  CU_ASSERT_EQUAL(got.sm_count, 130);
  CU_ASSERT_EQUAL(got.cc_major, 9);
  CU_ASSERT_EQUAL(got.mem_bytes, 150LL << 30);
  CU_ASSERT_STRING_EQUAL(got.cuda, "13.0");
  CU_ASSERT_STRING_EQUAL(got.driver, "580.159.03");
  CU_ASSERT_EQUAL(raw_count(path, "gpus"), 1);
  CU_ASSERT_EQUAL(ds_get_gpu(db, "T4", &got), 0);  /* absent GPU */
  ds_close(db);
}

/* ------------------------------------------------------ matrix / targets -- */

/* Three launches of two apps; H200 times with repeats, one featureless. */
static ds_db *matrix_db(char *path, size_t cap, int64_t ids[4]) {
  ds_db *db = create_db(path, cap);
  if (!db) return NULL;
  feat_vec fv;
  ds_begin(db);
  const char *apps[4] = {"a", "a", "b", "c"};
  for (int i = 0; i < 4; i++) {
    feat_init(&fv);
    if (i < 3) {
      feat_set(&fv, "launch.threads", 256);           /* constant */
      feat_set(&fv, "op.add.s32", 10.0 * (i + 1));
      if (i != 1) feat_set(&fv, "ctrl.active_ratio", 0.5 + 0.1 * i);
      if (i == 2) feat_set(&fv, "op.mul.f32", 3);
    }
    ds_launch l = mk_launch(apps[i], "d", i, "k");
    ds_insert_launch(db, &l, i < 3 ? &fv : NULL, &ids[i]);
    feat_free(&fv);
  }
  /* launch 0: reps 1, 3, 2 (median 2, mean 2); launch 1: 4, 8 (median 6);
     launch 2: power only; launch 3: featureless but timed. */
  ds_insert_measurement(db, ids[0], "H200", "time_ns", 1, 0, "t");
  ds_insert_measurement(db, ids[0], "H200", "time_ns", 3, 1, "t");
  ds_insert_measurement(db, ids[0], "H200", "time_ns", 2, 2, "t");
  ds_insert_measurement(db, ids[1], "H200", "time_ns", 4, 0, "t");
  ds_insert_measurement(db, ids[1], "H200", "time_ns", 9, 1, "t");
  ds_insert_measurement(db, ids[1], "H200", "time_ns", 8, 1, "t");  /* replaces rep 1 */
  ds_insert_measurement(db, ids[2], "H200", "power_w", 250, 0, "t");
  ds_insert_measurement(db, ids[3], "H200", "time_ns", 5, 0, "t");
  if (ds_commit(db) < 0) {
    ds_close(db);
    return NULL;
  }
  return db;
}

static long col_of(const ds_matrix *m, const char *name) {
  for (size_t j = 0; j < m->cols; j++)
    if (!strcmp(m->colnames[j], name)) return (long)j;
  return -1;
}

static void test_target_aggregates(void) {
  char path[2200];
  int64_t ids[4];
  ds_db *db = matrix_db(path, sizeof path, ids);
  CU_ASSERT_PTR_NOT_NULL_FATAL(db);
  ds_target t;
  CU_ASSERT_EQUAL_FATAL(ds_query_target(db, "H200", "time_ns", DS_AGG_MEDIAN, &t), 0);
  CU_ASSERT_EQUAL_FATAL(t.n, 3);
  CU_ASSERT_EQUAL(t.launch_id[0], ids[0]);
  CU_ASSERT_DOUBLE_EQUAL(t.value[0], 2, 1e-12);  /* median of 1, 3, 2 */
  CU_ASSERT_DOUBLE_EQUAL(t.value[1], 6, 1e-12);  /* median of 4, 8 (rep 1 replaced 9) */
  CU_ASSERT_DOUBLE_EQUAL(t.value[2], 5, 1e-12);
  ds_target_free(&t);
  CU_ASSERT_EQUAL_FATAL(ds_query_target(db, "H200", "time_ns", DS_AGG_MEAN, &t), 0);
  CU_ASSERT_DOUBLE_EQUAL(t.value[0], 2, 1e-12);  /* mean of 1, 3, 2 */
  ds_target_free(&t);
  CU_ASSERT_EQUAL(ds_query_target(db, "T4", "time_ns", DS_AGG_MEDIAN, &t), 0);
  CU_ASSERT_EQUAL(t.n, 0);  /* unknown GPU: empty, not an error */
  CU_ASSERT_EQUAL(ds_query_target(db, "H200", "watts", DS_AGG_MEDIAN, &t), -1);  /* bad metric */
  ds_close(db);
}

static void test_matrix_query(void) {
  char path[2200];
  int64_t ids[4];
  ds_db *db = matrix_db(path, sizeof path, ids);
  CU_ASSERT_PTR_NOT_NULL_FATAL(db);
  ds_query q;
  ds_query_init(&q);
  q.gpu = "H200";
  q.metric = "time_ns";
  ds_matrix m;
  CU_ASSERT_EQUAL_FATAL(ds_query_matrix(db, &q, &m), 0);
  CU_ASSERT_EQUAL(m.rows, 2);  /* timed launches with features (3 is featureless, 2 has power only) */
  CU_ASSERT_EQUAL(m.cols, 3);  /* op.mul.f32 occurs only in an unselected row */
  CU_ASSERT_STRING_EQUAL(m.colnames[0], "ctrl.active_ratio");  /* sorted by name */
  CU_ASSERT_STRING_EQUAL(m.colnames[1], "launch.threads");
  CU_ASSERT_STRING_EQUAL(m.colnames[2], "op.add.s32");
  CU_ASSERT_EQUAL(m.launch_id[0], ids[0]);
  CU_ASSERT_EQUAL(m.launch_id[1], ids[1]);
  CU_ASSERT_STRING_EQUAL(m.app[1], "a");
  CU_ASSERT_STRING_EQUAL(m.kernel[0], "k");
  CU_ASSERT_DOUBLE_EQUAL(m.y[0], 2, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(m.y[1], 6, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(m.x[0 * 3 + 2], 10, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(m.x[1 * 3 + 2], 20, 1e-12);
  CU_ASSERT(isnan(m.x[1 * 3 + 0]));  /* missing ctrl.* ratio is NAN, not 0 */
  ds_matrix_free(&m);

  q.drop_constant = 1;
  CU_ASSERT_EQUAL_FATAL(ds_query_matrix(db, &q, &m), 0);
  CU_ASSERT_EQUAL(col_of(&m, "launch.threads"), -1);  /* constant column dropped */
  CU_ASSERT(col_of(&m, "op.add.s32") >= 0);
  CU_ASSERT_EQUAL(m.cols, 2);
  ds_matrix_free(&m);

  /* Features only: all launches with features, y NULL; missing counts = 0. */
  ds_query_init(&q);
  const char *fams[] = {"op"};
  q.families = fams;
  q.nfamilies = 1;
  CU_ASSERT_EQUAL_FATAL(ds_query_matrix(db, &q, &m), 0);
  CU_ASSERT_PTR_NULL(m.y);
  CU_ASSERT_EQUAL(m.rows, 3);
  CU_ASSERT_EQUAL(m.cols, 2);  /* only the op family */
  long mul = col_of(&m, "op.mul.f32");
  CU_ASSERT_FATAL(mul >= 0);
  CU_ASSERT_EQUAL(m.x[0 * m.cols + (size_t)mul], 0.0);  /* missing op count reads 0 */
  CU_ASSERT_EQUAL(m.x[2 * m.cols + (size_t)mul], 3.0);
  ds_matrix_free(&m);

  q.missing = DS_MISSING_NAN;
  q.include_empty = 1;
  q.app = "c";
  CU_ASSERT_EQUAL_FATAL(ds_query_matrix(db, &q, &m), 0);
  CU_ASSERT_EQUAL(m.rows, 1);  /* app filter + featureless launch kept */
  CU_ASSERT_EQUAL(m.cols, 0);
  ds_matrix_free(&m);
  q.app = "a";
  CU_ASSERT_EQUAL_FATAL(ds_query_matrix(db, &q, &m), 0);
  CU_ASSERT_EQUAL(m.rows, 2);
  mul = col_of(&m, "op.mul.f32");
  CU_ASSERT_EQUAL(mul, -1);  /* op.mul.f32 belongs to app b only */
  ds_matrix_free(&m);
  ds_matrix_free(&m);  /* freeing twice is harmless (zeroed) */

  CU_ASSERT_EQUAL(ds_feature_default("op.add.s32"), 0.0);
  CU_ASSERT_EQUAL(ds_feature_default("static.class.fp32"), 0.0);
  CU_ASSERT(isnan(ds_feature_default("launch.grid_x")));
  CU_ASSERT(isnan(ds_feature_default("ctrl.active_ratio")));
  q.app = NULL;
  q.gpu = "H200";
  q.metric = NULL;
  CU_ASSERT_EQUAL(ds_query_matrix(db, &q, &m), -1);  /* gpu without metric */
  ds_close(db);
}

/* ------------------------------------------------------------ merge/stats -- */

/* Shards that disagree: a measurement with the same key and another value,
   a launch with the same key and other columns; suite entries merge by key. */
static void test_merge_conflicts_and_suite_entries(void) {
  char pa[2200], pb[2200];
  ds_db *a = create_db(pa, sizeof pa), *b = create_db(pb, sizeof pb);
  CU_ASSERT_PTR_NOT_NULL_FATAL(a);
  CU_ASSERT_PTR_NOT_NULL_FATAL(b);
  feat_vec fv;
  feat_init(&fv);
  feat_set(&fv, "op.add.s32", 7);
  ds_launch l = mk_launch("p", "1 2", 0, "k");
  int64_t ia, ib;
  CU_ASSERT_EQUAL(ds_record_run(a, "kcast run a", NULL), 0);
  CU_ASSERT_EQUAL(ds_insert_launch(a, &l, &fv, &ia), 0);
  CU_ASSERT_EQUAL(ds_insert_measurement(a, ia, "H200", "time_ns", 10, 0, "cupti"), 0);
  CU_ASSERT_EQUAL(ds_record_run(b, "kcast run b", NULL), 0);
  CU_ASSERT_EQUAL(ds_insert_launch(b, &l, &fv, &ib), 0);
  CU_ASSERT_EQUAL(ds_insert_measurement(b, ib, "H200", "time_ns", 11, 0, "cupti"), 0);
  ds_suite_entry e = {"run", "p", "1 2", "", "fnv1a64:0:1", "p 1 2", 2.5, 1};
  CU_ASSERT_EQUAL(ds_suite_record(b, &e), 0);
  ds_close(b);
  CU_ASSERT_EQUAL(ds_merge(a, pb, 0), -1); /* the same measurement key, another value */
  CU_ASSERT_PTR_NOT_NULL(strstr(ds_errmsg(a), "1 measurement disagree"));
  CU_ASSERT_PTR_NOT_NULL(strstr(ds_errmsg(a), "time_ns on H200 rep 0: 11 in the input, 10 in the output"));
  ds_suite_entry f;
  CU_ASSERT_EQUAL(ds_suite_find(a, "run", "p", "1 2", NULL, &f), 0); /* nothing merged */
  CU_ASSERT_EQUAL(raw_count(pa, "runs"), 1);
  CU_ASSERT_EQUAL(ds_merge(a, pb, DS_MERGE_REPLACE), 0);
  CU_ASSERT_EQUAL(ds_suite_find(a, "run", "p", "1 2", NULL, &f), 1); /* the entry came along */
  CU_ASSERT_STRING_EQUAL(f.build, "fnv1a64:0:1");
  CU_ASSERT_DOUBLE_EQUAL(f.seconds, 2.5, 1e-12);
  CU_ASSERT_EQUAL(ds_suite_find(a, "profile", "p", "1 2", NULL, &f), 0); /* another kind */
  CU_ASSERT_EQUAL(ds_suite_find(a, "run", "p", "1 2", "H200", &f), 0);   /* another GPU key */
  /* The same key with another grid is a conflict too. */
  l.grid[0] = 65;
  CU_ASSERT_PTR_NOT_NULL_FATAL(b = create_db(pb, sizeof pb));
  CU_ASSERT_EQUAL(ds_insert_launch(b, &l, &fv, &ib), 0);
  ds_close(b);
  CU_ASSERT_EQUAL(ds_merge(a, pb, 0), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(ds_errmsg(a), "(app 'p', dataset '1 2', lseq 0): kernel, grid"));
  /* A launch without features on one side (a profile) is no conflict. */
  CU_ASSERT_PTR_NOT_NULL_FATAL(b = create_db(pb, sizeof pb));
  l.grid[0] = 64;
  CU_ASSERT_EQUAL(ds_insert_launch(b, &l, NULL, &ib), 0);
  CU_ASSERT_EQUAL(ds_insert_measurement(b, ib, "T4", "time_ns", 40, 0, "cupti"), 0);
  ds_close(b);
  CU_ASSERT_EQUAL(ds_merge(a, pb, 0), 0);
  feat_vec got;
  feat_init(&got);
  CU_ASSERT_EQUAL(ds_get_features(a, ia, &got), 0);
  CU_ASSERT_EQUAL(feat_get(&got, "op.add.s32", -1), 7); /* features kept */
  feat_free(&got);
  feat_free(&fv);
  ds_close(a);
}

static void test_merge_and_stats(void) {
  char pa[2200], pb[2200];
  int64_t ids[4];
  ds_db *a = matrix_db(pa, sizeof pa, ids);
  CU_ASSERT_PTR_NOT_NULL_FATAL(a);
  ds_db *b = create_db(pb, sizeof pb);
  CU_ASSERT_PTR_NOT_NULL_FATAL(b);
  /* b: launch ("a","d",0) again with new features and a T4 time; plus a new one. */
  feat_vec fv;
  feat_init(&fv);
  feat_set(&fv, "op.new", 42);
  ds_launch l = mk_launch("a", "d", 0, "k");
  int64_t id, id2;
  CU_ASSERT_EQUAL(ds_record_run(b, "kcast profile", NULL), 0);
  CU_ASSERT_EQUAL(ds_insert_launch(b, &l, &fv, &id), 0);
  CU_ASSERT_EQUAL(ds_insert_measurement(b, id, "T4", "time_ns", 77, 0, "p"), 0);
  CU_ASSERT_EQUAL(ds_insert_measurement(b, id, "H200", "time_ns", 100, 0, "p"), 0);
  l = mk_launch("z", "d", 0, "kz");
  CU_ASSERT_EQUAL(ds_insert_launch(b, &l, &fv, &id2), 0);
  ds_gpu g = {0};
  snprintf(g.name, sizeof g.name, "T4");
  g.sm_count = 40;
  CU_ASSERT_EQUAL(ds_upsert_gpu(b, &g), 0);
  ds_close(b);

  CU_ASSERT_EQUAL(ds_merge(a, pb, 0), -1);  /* the shared launch's features disagree */
  CU_ASSERT_PTR_NOT_NULL(strstr(ds_errmsg(a), "(app 'a', dataset 'd', lseq 0)")); /* named by key */
  CU_ASSERT_EQUAL(raw_count(pa, "launches"), 4);  /* and nothing was merged */
  CU_ASSERT_EQUAL(ds_merge(a, pb, DS_MERGE_REPLACE), 0);
  CU_ASSERT_EQUAL(raw_count(pa, "launches"), 5);  /* 4 + 1 new, the shared key merged */
  CU_ASSERT_EQUAL(raw_count(pa, "gpus"), 1);
  CU_ASSERT_EQUAL(raw_count(pa, "runs"), 1);
  feat_vec got;
  feat_init(&got);
  CU_ASSERT_EQUAL(ds_get_features(a, ids[0], &got), 0);
  CU_ASSERT_EQUAL(got.n, 1);  /* src features replaced the set of the shared launch */
  CU_ASSERT_EQUAL(feat_get(&got, "op.new", -1), 42);
  feat_free(&got);
  ds_target t;
  CU_ASSERT_EQUAL_FATAL(ds_query_target(a, "H200", "time_ns", DS_AGG_MEDIAN, &t), 0);
  CU_ASSERT_DOUBLE_EQUAL(t.value[0], 3, 1e-12);  /* rep 0 replaced by 100: 100, 3, 2 -> 3 */
  ds_target_free(&t);
  CU_ASSERT_EQUAL_FATAL(ds_query_target(a, "T4", "time_ns", DS_AGG_MEDIAN, &t), 0);
  CU_ASSERT_EQUAL(t.n, 1);
  CU_ASSERT_EQUAL(t.launch_id[0], ids[0]);  /* measurement re-keyed to the merged launch */
  ds_target_free(&t);
  CU_ASSERT_EQUAL(ds_merge(a, pb, 0), 0);  /* merging again changes nothing, runs included */
  CU_ASSERT_EQUAL(raw_count(pa, "runs"), 1);
  CU_ASSERT_EQUAL(raw_count(pa, "launches"), 5);
  CU_ASSERT_EQUAL(raw_count(pa, "measurements"), 8);
  CU_ASSERT_EQUAL(ds_merge(a, pa, 0), -1);  /* not into itself */
  CU_ASSERT_EQUAL(ds_integrity_check(a), 0);

  ds_stats st;
  CU_ASSERT_EQUAL_FATAL(ds_get_stats(a, &st), 0);
  CU_ASSERT_EQUAL(st.launches, 5);
  CU_ASSERT_EQUAL(st.measurements, 8);
  CU_ASSERT_EQUAL(st.gpus, 1);
  CU_ASSERT_EQUAL_FATAL(st.napps, 4);
  CU_ASSERT_STRING_EQUAL(st.apps[0].app, "a");
  CU_ASSERT_EQUAL(st.apps[0].launches, 2);
  CU_ASSERT_EQUAL(st.apps[0].kernels, 1);
  CU_ASSERT_EQUAL(st.apps[0].feature_rows, 1 + 2);  /* op.new + launch 1's two */
  CU_ASSERT_EQUAL_FATAL(st.nmeas, 3);
  CU_ASSERT_STRING_EQUAL(st.meas[0].gpu, "H200");
  CU_ASSERT_STRING_EQUAL(st.meas[0].metric, "power_w");
  CU_ASSERT_STRING_EQUAL(st.meas[1].metric, "time_ns");
  CU_ASSERT_EQUAL(st.meas[1].launches, 3);
  CU_ASSERT_EQUAL(st.meas[1].values, 6);
  CU_ASSERT_STRING_EQUAL(st.meas[2].gpu, "T4");
  ds_stats_free(&st);
  feat_free(&fv);
  ds_close(a);
}

/* ---------------------------------------------------------- crash safety -- */

/* Add n launches with nf features each, lseq from base; 0 on success. */
static int bulk_insert(ds_db *db, int base, int n, int nf) {
  feat_vec fv;
  feat_init(&fv);
  char name[64];
  int rc = 0;
  for (int i = 0; i < n && rc == 0; i++) {
    for (int f = 0; f < nf; f++) {
      snprintf(name, sizeof name, "op.key%03d.f32", f);
      if (feat_set(&fv, name, (double)(i * nf + f)) < 0) rc = -1;
    }
    ds_launch l = mk_launch("bulk", "d", base + i, "kernel");
    if (rc == 0) rc = ds_insert_launch(db, &l, &fv, NULL);
  }
  feat_free(&fv);
  return rc;
}

/* Partial runs: marked, counted, kept by merge, also in a file made before
   partial_runs existed; emu.* stays out of a matrix unless asked for. */
static void test_partial_runs_and_emu_family(void) {
  char path[2200], path2[2200], err[512];
  ds_db *db = create_db(path, sizeof path);
  CU_ASSERT_PTR_NOT_NULL_FATAL(db);
  int64_t run = 0;
  CU_ASSERT_EQUAL(ds_record_run(db, "kcast run -- ./a", &run), 0);
  CU_ASSERT_EQUAL(ds_mark_partial(db, run, "timed out after 2 s"), 0);
  ds_launch l = mk_launch("a", "", 0, "k");
  feat_vec fv;
  feat_init(&fv);
  feat_set(&fv, "op.add.s32", 10);
  feat_set(&fv, "emu.ctas_emulated", 64);
  CU_ASSERT_EQUAL(ds_insert_launch(db, &l, &fv, NULL), 0);
  feat_free(&fv);
  ds_stats st;
  CU_ASSERT_EQUAL_FATAL(ds_get_stats(db, &st), 0);
  CU_ASSERT_EQUAL(st.runs, 1);
  CU_ASSERT_EQUAL(st.partial_runs, 1);
  ds_stats_free(&st);
  ds_query q;
  ds_query_init(&q);
  ds_matrix m;
  CU_ASSERT_EQUAL_FATAL(ds_query_matrix(db, &q, &m), 0);
  CU_ASSERT_EQUAL(m.cols, 1); /* op.add.s32; emu.ctas_emulated left out */
  ds_matrix_free(&m);
  const char *fams[] = {"emu"};
  q.families = fams;
  q.nfamilies = 1;
  CU_ASSERT_EQUAL_FATAL(ds_query_matrix(db, &q, &m), 0);
  CU_ASSERT_EQUAL(m.cols, 1); /* named: there */
  ds_matrix_free(&m);
  ds_close(db);
  /* a file without the table (made before it existed) gets it on first use */
  ds_db *old = create_db(path2, sizeof path2);
  CU_ASSERT_PTR_NOT_NULL_FATAL(old);
  ds_close(old);
  CU_ASSERT_EQUAL(raw_exec(path2, "DROP TABLE partial_runs"), 0);
  CU_ASSERT_EQUAL_FATAL(ds_open(path2, 0, &old, err, sizeof err), 0);
  CU_ASSERT_EQUAL_FATAL(ds_get_stats(old, &st), 0);
  CU_ASSERT_EQUAL(st.partial_runs, 0);
  ds_stats_free(&st);
  CU_ASSERT_EQUAL(ds_merge(old, path, 0), 0);
  CU_ASSERT_EQUAL(raw_count(path2, "partial_runs"), 1); /* the merged run stays partial */
  CU_ASSERT_EQUAL(ds_record_run(old, "again", &run), 0);
  CU_ASSERT_EQUAL(ds_mark_partial(old, run, "x"), 0);
  CU_ASSERT_EQUAL(raw_count(path2, "partial_runs"), 2);
  ds_close(old);
}

static void test_kill9_leaves_previous_contents(void) {
  char path[2200], jpath[2300], err[512];
  ds_db *db = create_db(path, sizeof path);
  CU_ASSERT_PTR_NOT_NULL_FATAL(db);
  CU_ASSERT_EQUAL_FATAL(ds_begin(db), 0);
  CU_ASSERT_EQUAL_FATAL(bulk_insert(db, 0, 100, 20), 0);
  CU_ASSERT_EQUAL_FATAL(ds_commit(db), 0);
  ds_close(db);
  long long l0 = raw_count(path, "launches"), f0 = raw_count(path, "features");
  CU_ASSERT_EQUAL(l0, 100);
  CU_ASSERT_EQUAL(f0, 2000);
  struct stat sb0;
  CU_ASSERT_EQUAL_FATAL(stat(path, &sb0), 0);

  int pfd[2];
  CU_ASSERT_EQUAL_FATAL(pipe(pfd), 0);
  fflush(NULL);
  pid_t pid = fork();
  CU_ASSERT_FATAL(pid >= 0);
  if (pid == 0) {
    /* Child: enough rows to overflow the page cache, so pages reach the
       file before COMMIT; then report and wait to be killed. */
    close(pfd[0]);
    ds_db *c;
    char cerr[512];
    if (ds_open(path, 0, &c, cerr, sizeof cerr) < 0 || ds_begin(c) < 0 ||
        bulk_insert(c, 1000, 3000, 60) < 0)
      _exit(3);
    if (write(pfd[1], "x", 1) != 1) _exit(4);
    for (;;) pause();
  }
  close(pfd[1]);
  char ch = 0;
  ssize_t got = read(pfd[0], &ch, 1);
  close(pfd[0]);
  CU_ASSERT_EQUAL(got, 1);  /* the child did its inserts */
  snprintf(jpath, sizeof jpath, "%s-journal", path);
  struct stat sb;
  CU_ASSERT_EQUAL(stat(jpath, &sb), 0);  /* a rollback journal exists mid-transaction */
  struct stat db_sb;
  CU_ASSERT_EQUAL(stat(path, &db_sb), 0);
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  CU_ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  CU_ASSERT(db_sb.st_size > sb0.st_size);  /* pages reached the file before the kill */

  CU_ASSERT_EQUAL_FATAL(ds_open(path, 0, &db, err, sizeof err), 0);  /* hot journal rolled back on open */
  CU_ASSERT_EQUAL(ds_integrity_check(db), 0);
  ds_stats st;
  CU_ASSERT_EQUAL_FATAL(ds_get_stats(db, &st), 0);
  CU_ASSERT_EQUAL(st.launches, l0);   /* exactly the previous contents */
  CU_ASSERT_EQUAL(st.feature_rows, f0);
  CU_ASSERT_EQUAL(st.feature_names, 20);
  ds_stats_free(&st);
  ds_close(db);
  CU_ASSERT_NOT_EQUAL(stat(jpath, &sb) == 0 && sb.st_size > 0, 1);  /* journal consumed */
}

TEST_SUITES(register_ds) {
  CU_pSuite s = tests_suite("datasets");
  TEST_ADD(s, test_open_create_and_reopen);
  TEST_ADD(s, test_open_refuses_bad_files);
  TEST_ADD(s, test_insert_find_and_features);
  TEST_ADD(s, test_insert_rejects_bad_input);
  TEST_ADD(s, test_rollback_discards);
  TEST_ADD(s, test_bulk_transaction);
  TEST_ADD(s, test_gpus);
  TEST_ADD(s, test_target_aggregates);
  TEST_ADD(s, test_matrix_query);
  TEST_ADD(s, test_merge_and_stats);
  TEST_ADD(s, test_merge_conflicts_and_suite_entries);
  TEST_ADD(s, test_partial_runs_and_emu_family);
  TEST_ADD(s, test_kill9_leaves_previous_contents);
}
