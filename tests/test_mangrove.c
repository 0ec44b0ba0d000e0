/*
 * test_mangrove.c -- the GPU Mangrove importer (ds_import_mangrove, `kcast
 * dataset import-mangrove`).
 *
 * Two kinds of input:
 *  - small Mangrove databases the tests write with raw SQLite (always run):
 *    the mapping of every column, derived class.* / launch.* / mem.*
 *    features, rep numbering, skipped rows, refusals of foreign and
 *    malformed files with the dataset left as it was, the CLI;
 *  - the real tutorial databases (K80 and T4), found at
 *    ../shared/data/mangrove-tutorial from the repository root and skipped
 *    with a note when absent.  Expected values are read from the source
 *    files with raw SQLite, independently of the importer.
 */
#include "tests.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "datasets/ds.h"

#define MG_DATA "../shared/data/mangrove-tutorial"

/* ------------------------------------------------------------ helpers -- */

/* "<fresh tmpdir>/<name>". */
static const char *tmp_path(char *buf, size_t cap, const char *name) {
  char dir[2048];
  if (!tests_tmpdir(dir, sizeof dir, "mg")) return NULL;
  snprintf(buf, cap, "%s/%s", dir, name);
  return buf;
}

static int raw_exec(const char *path, const char *sql) {
  sqlite3 *h;
  int rc = sqlite3_open(path, &h);
  if (rc == SQLITE_OK) rc = sqlite3_exec(h, sql, NULL, NULL, NULL);
  sqlite3_close(h);
  return rc == SQLITE_OK ? 0 : -1;
}

/* First column of the first row of a query, as a double; NAN on error or
   no row. */
static double raw_num(const char *path, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static double raw_num(const char *path, const char *fmt, ...) {
  char sql[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(sql, sizeof sql, fmt, ap);
  va_end(ap);
  sqlite3 *h;
  double v = NAN;
  if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(h, sql, -1, &s, NULL) == SQLITE_OK &&
        sqlite3_step(s) == SQLITE_ROW &&
        sqlite3_column_type(s, 0) != SQLITE_NULL)
      v = sqlite3_column_double(s, 0);
    sqlite3_finalize(s);
  }
  sqlite3_close(h);
  return v;
}

/* Row counts of the dataset tables an import writes. */
typedef struct counts { double launches, features, names, meas, gpus; } counts;
static counts count_rows(const char *db) {
  counts c;
  c.launches = raw_num(db, "SELECT count(*) FROM launches");
  c.features = raw_num(db, "SELECT count(*) FROM features");
  c.names = raw_num(db, "SELECT count(*) FROM feature_names");
  c.meas = raw_num(db, "SELECT count(*) FROM measurements");
  c.gpus = raw_num(db, "SELECT count(*) FROM gpus");
  return c;
}
static int same_counts(counts a, counts b) {
  return a.launches == b.launches && a.features == b.features &&
         a.names == b.names && a.meas == b.meas && a.gpus == b.gpus;
}

/* Value of feature name of launch (app, dataset, lseq); NAN when absent. */
static double feature(const char *db, const char *app, const char *dataset,
                      int lseq, const char *name) {
  return raw_num(db, "SELECT value FROM feature_values v JOIN launches l ON"
                 " l.id = v.launch_id WHERE l.app = '%s' AND l.dataset = '%s'"
                 " AND l.lseq = %d AND v.name = '%s'", app, dataset, lseq, name);
}

static ds_db *open_ds(const char *path) {
  char err[512];
  ds_db *db = NULL;
  if (ds_open(path, DS_CREATE, &db, err, sizeof err) < 0)
    fprintf(stderr, "open_ds: %s\n", err);
  return db;
}

static int import(const char *out, const char *flux, const char *time,
                  const char *power, const char *gpu, ds_import_report *rep,
                  char *err, size_t cap) {
  ds_db *db = open_ds(out);
  if (!db) return -2;
  ds_mangrove_opts o = {flux, time, power, gpu, NULL};
  int rc = ds_import_mangrove(db, &o, rep);
  if (err) snprintf(err, cap, "%s", ds_errmsg(db));
  ds_close(db);
  return rc;
}

static const char flux_schema[] =
  "CREATE TABLE fluxmetrics(bench text not null, app text not null,"
  " dataset text not null, lseq integer not null, name text not null,"
  " metric text not null, value double not null);";
static const char time_schema[] =
  "CREATE TABLE kerneltime(bench text not null, app text not null,"
  " dataset text not null, build text not null, lseq integer not null,"
  " time integer not null);";
static const char power_schema[] =
  "CREATE TABLE kernelpower(bench text not null, app text not null,"
  " dataset text not null, build text not null, lseq integer not null,"
  " power real not null);";

/*
 * A synthetic Mangrove triple in a fresh folder: launch app1/d/0 with
 * global vector loads, stores, atomics; launch app1/d/1 with a generic
 * load (no mem.* derivable).  Time: 3 rows for launch 0, 2 for launch 1,
 * plus 2 rows matching no launch.  Power: 2 rows for launch 0.
 */
static int make_synthetic(char *flux, char *time, char *power, size_t cap) {
  if (!tmp_path(flux, cap, "flux.db")) return -1;
  char *slash = strrchr(flux, '/');
  snprintf(time, cap, "%.*s/time.db", (int)(slash - flux), flux);
  snprintf(power, cap, "%.*s/power.db", (int)(slash - flux), flux);
  static const char rows[] =
    "INSERT INTO fluxmetrics VALUES"
    " ('b', 'app1', 'd', 0, '_Z1kPf', 'gX', 4), ('b', 'app1', 'd', 0, '_Z1kPf', 'gY', 2),"
    " ('b', 'app1', 'd', 0, '_Z1kPf', 'gZ', 1), ('b', 'app1', 'd', 0, '_Z1kPf', 'bX', 32),"
    " ('b', 'app1', 'd', 0, '_Z1kPf', 'bY', 2), ('b', 'app1', 'd', 0, '_Z1kPf', 'bZ', 1),"
    " ('b', 'app1', 'd', 0, '_Z1kPf', 'shm', 64), ('b', 'app1', 'd', 0, '_Z1kPf', 'time', 123),"
    " ('b', 'app1', 'd', 0, '_Z1kPf', 'ld.global.v4.f32', 100),"
    " ('b', 'app1', 'd', 0, '_Z1kPf', 'st.global.f32', 50),"
    " ('b', 'app1', 'd', 0, '_Z1kPf', 'atom.global.add.u32', 10),"
    " ('b', 'app1', 'd', 0, '_Z1kPf', 'add.s32', 7),"
    " ('b', 'app1', 'd', 0, '_Z1kPf', 'mad.lo.s32', 2),"
    " ('b', 'app1', 'd', 0, '_Z1kPf', 'fma.rn.f32', 3),"
    " ('b', 'app1', 'd', 0, '_Z1kPf', 'cvt.u32.u64', 0),"
    " ('b', 'app1', 'd', 1, '_Z1gPf', 'gX', 1), ('b', 'app1', 'd', 1, '_Z1gPf', 'gY', 1),"
    " ('b', 'app1', 'd', 1, '_Z1gPf', 'gZ', 1), ('b', 'app1', 'd', 1, '_Z1gPf', 'bX', 64),"
    " ('b', 'app1', 'd', 1, '_Z1gPf', 'bY', 1), ('b', 'app1', 'd', 1, '_Z1gPf', 'bZ', 1),"
    " ('b', 'app1', 'd', 1, '_Z1gPf', 'shm', 0),"
    " ('b', 'app1', 'd', 1, '_Z1gPf', 'ld.f32', 64),"
    " ('b', 'app1', 'd', 1, '_Z1gPf', 'st.global.f32', 64);";
  static const char trows[] =
    "INSERT INTO kerneltime VALUES ('b', 'app1', 'd', 'time', 0, 15),"
    " ('b', 'app1', 'd', 'time', 1, 40), ('b', 'app1', 'd', 'time', 0, 25),"
    " ('b', 'app1', 'd', 'time', 7, 99), ('other', 'app1', 'd', 'time', 0, 1),"
    " ('b', 'app1', 'd', 'time', 0, 20), ('b', 'app1', 'd', 'time', 1, 41.5);";
  static const char prows[] =
    "INSERT INTO kernelpower VALUES ('b', 'app1', 'd', 'power', 0, 55.25),"
    " ('b', 'app1', 'd', 'power', 0, 56.5);";
  char sql[4096];
  snprintf(sql, sizeof sql, "%s%s", flux_schema, rows);
  if (raw_exec(flux, sql)) return -1;
  snprintf(sql, sizeof sql, "%s%s", time_schema, trows);
  if (raw_exec(time, sql)) return -1;
  snprintf(sql, sizeof sql, "%s%s", power_schema, prows);
  return raw_exec(power, sql);
}

/* ---------------------------------------------------- synthetic inputs -- */

static void test_synthetic_mapping(void) {
  char flux[2200], time[2200], power[2200], out[2200], err[1200];
  CU_ASSERT_EQUAL_FATAL(make_synthetic(flux, time, power, sizeof flux), 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(tmp_path(out, sizeof out, "out.db"));
  ds_import_report r;
  CU_ASSERT_EQUAL_FATAL(import(out, flux, time, power, "Synth", &r, err,
                               sizeof err), 0);
  CU_ASSERT_EQUAL(r.flux_rows, 24);     /* every fluxmetrics row was read */
  CU_ASSERT_EQUAL(r.launches, 2);       /* one launch per (app, dataset, lseq) */
  CU_ASSERT_EQUAL(r.time_rows, 5);      /* 3 + 2 time rows matched launches */
  CU_ASSERT_EQUAL(r.time_skipped, 2);   /* lseq 7 and bench 'other' match none */
  CU_ASSERT_EQUAL(r.power_rows, 2);
  CU_ASSERT_EQUAL(r.power_skipped, 0);
  CU_ASSERT_EQUAL(r.no_mem, 1);         /* the launch with a generic load */
  CU_ASSERT_EQUAL(r.features, raw_num(out, "SELECT count(*) FROM features"));

  /* launch columns */
  CU_ASSERT_EQUAL(raw_num(out, "SELECT grid_x * 100 + grid_y * 10 + grid_z"
                          " FROM launches WHERE lseq = 0"), 421);
  CU_ASSERT_EQUAL(raw_num(out, "SELECT block_x * 100 + block_y * 10 + block_z"
                          " FROM launches WHERE lseq = 0"), 3221);
  CU_ASSERT_EQUAL(raw_num(out, "SELECT shmem FROM launches WHERE lseq = 0"), 64);
  CU_ASSERT_EQUAL(raw_num(out, "SELECT count(*) FROM launches WHERE lseq = 0"
                          " AND kernel = '_Z1kPf' AND bench = 'b' AND source ="
                          " 'mangrove-import' AND app = 'app1' AND dataset = 'd'"),
                  1);  /* name -> kernel, bench kept, source marked */

  /* op.* as in the source, zero counts kept, CUDA Flux's time not imported */
  CU_ASSERT_EQUAL(feature(out, "app1", "d", 0, "op.ld.global.v4.f32"), 100);
  CU_ASSERT_EQUAL(feature(out, "app1", "d", 0, "op.add.s32"), 7);
  CU_ASSERT_EQUAL(feature(out, "app1", "d", 0, "op.cvt.u32.u64"), 0);
  CU_ASSERT(isnan(feature(out, "app1", "d", 0, "op.time")));  /* no time feature */
  CU_ASSERT(isnan(feature(out, "app1", "d", 0, "op.gX")));    /* gX is no opcode */
  CU_ASSERT_EQUAL(raw_num(out, "SELECT count(*) FROM feature_names WHERE name"
                          " LIKE '%%time%%'"), 0);

  /* class.*: sums through the taxonomy, every class present on every launch */
  CU_ASSERT_EQUAL(feature(out, "app1", "d", 0, "class.ld_global"), 100);
  CU_ASSERT_EQUAL(feature(out, "app1", "d", 0, "class.st_global"), 50);
  CU_ASSERT_EQUAL(feature(out, "app1", "d", 0, "class.atomic_global"), 10);
  CU_ASSERT_EQUAL(feature(out, "app1", "d", 0, "class.int_arith"), 9);
  CU_ASSERT_EQUAL(feature(out, "app1", "d", 0, "class.fp32"), 3);
  CU_ASSERT_EQUAL(feature(out, "app1", "d", 0, "class.tensor"), 0);
  CU_ASSERT_EQUAL(feature(out, "app1", "d", 1, "class.ld_generic"), 64);
  CU_ASSERT_EQUAL(raw_num(out, "SELECT count(*) FROM feature_values WHERE name"
                          " LIKE 'class.%%'"), 2 * FEAT_C_COUNT);

  /* launch.* (threads = ctas x threads per block, docs/features.md) */
  CU_ASSERT_EQUAL(feature(out, "app1", "d", 0, "launch.grid_y"), 2);
  CU_ASSERT_EQUAL(feature(out, "app1", "d", 0, "launch.block_x"), 32);
  CU_ASSERT_EQUAL(feature(out, "app1", "d", 0, "launch.ctas"), 8);
  CU_ASSERT_EQUAL(feature(out, "app1", "d", 0, "launch.threads"), 512);
  CU_ASSERT_EQUAL(feature(out, "app1", "d", 0, "launch.shared_bytes"), 64);

  /* mem.global_*: count x bytes per key; none where a generic load hides
     the space */
  CU_ASSERT_EQUAL(feature(out, "app1", "d", 0, "mem.global_load_bytes"), 1600);
  CU_ASSERT_EQUAL(feature(out, "app1", "d", 0, "mem.global_store_bytes"), 200);
  CU_ASSERT_EQUAL(feature(out, "app1", "d", 0, "mem.global_atomic_bytes"), 40);
  CU_ASSERT_EQUAL(feature(out, "app1", "d", 0, "mem.global_bytes"), 1840);
  CU_ASSERT(isnan(feature(out, "app1", "d", 1, "mem.global_bytes")));
  CU_ASSERT_EQUAL(raw_num(out, "SELECT count(*) FROM feature_names WHERE name"
                          " LIKE 'mem.%%' AND name NOT LIKE 'mem.global_%%'"),
                  0);  /* nothing needing addresses is made up */

  /* measurements: us -> ns, reps in table order per launch, tool named */
  CU_ASSERT_EQUAL(raw_num(out, "SELECT group_concat(value, ' ') = '15000.0"
                          " 25000.0 20000.0' FROM (SELECT m.value FROM"
                          " measurements m JOIN launches l ON l.id ="
                          " m.launch_id WHERE l.lseq = 0 AND m.metric ="
                          " 'time_ns' ORDER BY m.rep)"), 1);
  CU_ASSERT_EQUAL(raw_num(out, "SELECT m.value FROM measurements m JOIN"
                          " launches l ON l.id = m.launch_id WHERE l.lseq = 1"
                          " AND m.metric = 'time_ns' AND m.rep = 1"), 41500);
  CU_ASSERT_EQUAL(raw_num(out, "SELECT max(rep) FROM measurements WHERE"
                          " metric = 'power_w'"), 1);
  CU_ASSERT_EQUAL(raw_num(out, "SELECT sum(value) FROM measurements WHERE"
                          " metric = 'power_w'"), 111.75);
  CU_ASSERT_EQUAL(raw_num(out, "SELECT count(*) FROM measurements WHERE"
                          " gpu = 'Synth' AND tool = 'gpu-mangrove'"), 7);
  /* a gpus row for the name, nothing else known */
  CU_ASSERT_EQUAL(raw_num(out, "SELECT count(*) FROM gpus WHERE name = 'Synth'"
                          " AND cc_major IS NULL AND sm_count IS NULL"), 1);
}

static void test_synthetic_reimport_is_idempotent(void) {
  char flux[2200], time[2200], power[2200], out[2200], err[1200];
  CU_ASSERT_EQUAL_FATAL(make_synthetic(flux, time, power, sizeof flux), 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(tmp_path(out, sizeof out, "out.db"));
  CU_ASSERT_EQUAL_FATAL(import(out, flux, time, power, "T4", NULL, err,
                               sizeof err), 0);
  counts a = count_rows(out);
  double sum1 = raw_num(out, "SELECT sum(value) FROM measurements");
  double ids1 = raw_num(out, "SELECT sum(id) FROM launches");
  CU_ASSERT_EQUAL(import(out, flux, time, power, "T4", NULL, err, sizeof err), 0);
  counts b = count_rows(out);
  CU_ASSERT(same_counts(a, b));  /* second import adds no rows anywhere */
  CU_ASSERT_EQUAL(raw_num(out, "SELECT sum(value) FROM measurements"), sum1);
  CU_ASSERT_EQUAL(raw_num(out, "SELECT sum(id) FROM launches"), ids1);  /* ids kept */
  /* T4 is known: its datasheet figures fill the gpus row */
  CU_ASSERT_EQUAL(raw_num(out, "SELECT cc_major * 10 + cc_minor FROM gpus"
                          " WHERE name = 'T4'"), 75);
  CU_ASSERT_EQUAL(raw_num(out, "SELECT sm_count FROM gpus WHERE name = 'T4'"), 40);
}

/* Import bad, expecting failure with all of the fragments in the message,
   and the dataset at out unchanged. */
static void expect_refusal(const char *out, const char *flux, const char *time,
                           const char *frag1, const char *frag2,
                           const char *frag3) {
  char err[1200];
  counts before = count_rows(out);
  CU_ASSERT_EQUAL(import(out, flux, time, NULL, time ? "K80" : NULL, NULL,
                         err, sizeof err), -1);
  if (frag1) CU_ASSERT_PTR_NOT_NULL(strstr(err, frag1));
  if (frag2) CU_ASSERT_PTR_NOT_NULL(strstr(err, frag2));
  if (frag3) CU_ASSERT_PTR_NOT_NULL(strstr(err, frag3));
  if ((frag1 && !strstr(err, frag1)) || (frag2 && !strstr(err, frag2)) ||
      (frag3 && !strstr(err, frag3)))
    fprintf(stderr, "\n  unexpected message: %s\n", err);
  CU_ASSERT(same_counts(before, count_rows(out)));  /* dataset as it was */
}

static void test_refuses_foreign_and_malformed(void) {
  char flux[2200], time[2200], power[2200], out[2200], bad[2200], err[1200];
  CU_ASSERT_EQUAL_FATAL(make_synthetic(flux, time, power, sizeof flux), 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(tmp_path(out, sizeof out, "out.db"));
  CU_ASSERT_EQUAL_FATAL(import(out, flux, time, power, "K80", NULL, err,
                               sizeof err), 0);
  CU_ASSERT_EQUAL(count_rows(out).launches, 2);  /* something to protect */

  /* wrong table */
  CU_ASSERT_PTR_NOT_NULL_FATAL(tmp_path(bad, sizeof bad, "wrong.db"));
  CU_ASSERT_EQUAL_FATAL(raw_exec(bad, "CREATE TABLE kernels(a, b);"), 0);
  expect_refusal(out, bad, NULL, bad,
                 "not a GPU Mangrove database (no table fluxmetrics)", NULL);
  /* a time file given where the flux file belongs */
  expect_refusal(out, time, NULL, time, "(no table fluxmetrics)", NULL);
  /* missing column */
  CU_ASSERT_PTR_NOT_NULL_FATAL(tmp_path(bad, sizeof bad, "nocol.db"));
  CU_ASSERT_EQUAL_FATAL(raw_exec(bad, "CREATE TABLE fluxmetrics(bench, app,"
                                 " dataset, lseq, name, metric);"), 0);
  expect_refusal(out, bad, NULL, bad,
                 "(table fluxmetrics has no column value)", NULL);
  /* not SQLite at all */
  CU_ASSERT_PTR_NOT_NULL_FATAL(tmp_path(bad, sizeof bad, "text.db"));
  CU_ASSERT_EQUAL_FATAL(tests_write_file(bad, "bench,app\n", 10), 0);
  expect_refusal(out, bad, NULL, bad, "not an SQLite database", NULL);
  /* missing file */
  CU_ASSERT_PTR_NOT_NULL_FATAL(tmp_path(bad, sizeof bad, "absent.db"));
  expect_refusal(out, bad, NULL, bad, "No such file", NULL);
  struct stat sb;
  CU_ASSERT_NOT_EQUAL(stat(bad, &sb), 0);  /* and it was not created */

  /* a text value: named by file, table, row key and column; the earlier
     rows of the same import are rolled back too */
  CU_ASSERT_PTR_NOT_NULL_FATAL(tmp_path(bad, sizeof bad, "text-value.db"));
  char sql[2048];
  snprintf(sql, sizeof sql, "%s INSERT INTO fluxmetrics VALUES"
           " ('b', 'new', 'd', 0, 'k', 'gX', 1), ('b', 'new', 'd', 0, 'k', 'gY', 1),"
           " ('b', 'new', 'd', 0, 'k', 'gZ', 1), ('b', 'new', 'd', 0, 'k', 'bX', 1),"
           " ('b', 'new', 'd', 0, 'k', 'bY', 1), ('b', 'new', 'd', 0, 'k', 'bZ', 1),"
           " ('b', 'new', 'd', 0, 'k', 'shm', 0),"
           " ('b', 'zz', 's1', 3, 'k', 'ld.global.f32', 'abc');", flux_schema);
  CU_ASSERT_EQUAL_FATAL(raw_exec(bad, sql), 0);
  expect_refusal(out, bad, NULL, bad,
                 "table fluxmetrics, row (bench=b, app=zz, dataset=s1, lseq=3,"
                 " metric=ld.global.f32)", "column value: 'abc' is not a number");
  CU_ASSERT_EQUAL(raw_num(out, "SELECT count(*) FROM launches WHERE app ="
                          " 'new'"), 0);  /* the good launch before it is gone */

  /* a launch without one of its configuration rows */
  CU_ASSERT_PTR_NOT_NULL_FATAL(tmp_path(bad, sizeof bad, "nogy.db"));
  snprintf(sql, sizeof sql, "%s INSERT INTO fluxmetrics VALUES"
           " ('b', 'a', 'd', 0, 'k', 'gX', 1), ('b', 'a', 'd', 0, 'k', 'gZ', 1),"
           " ('b', 'a', 'd', 0, 'k', 'bX', 1), ('b', 'a', 'd', 0, 'k', 'bY', 1),"
           " ('b', 'a', 'd', 0, 'k', 'bZ', 1), ('b', 'a', 'd', 0, 'k', 'shm', 0);",
           flux_schema);
  CU_ASSERT_EQUAL_FATAL(raw_exec(bad, sql), 0);
  expect_refusal(out, bad, NULL, bad, "lseq=0): no row for metric gY", NULL);

  /* a fractional block size, a negative lseq, a repeated metric */
  const struct { const char *row, *msg; } cases[] = {
    {"('b', 'a', 'd', 0, 'k', 'bX', 2.5)", "column value: 2.5 is not a valid bX"},
    {"('b', 'a', 'd', -1, 'k', 'gX', 1)", "column lseq: -1 is not a launch sequence number"},
    {"('b', 'a', 'd', 0, 'k', 'gX', 1), ('b', 'a', 'd', 0, 'k', 'gX', 1)",
     "column metric: gX appears twice"},
    {"('b', 'a', 'd', 0, 'k', 'add.s32', -4)", "column value: -4 is not a count"},
    {"('b', 'a', 'd', 0, 'k', 'add s32', 4)", "is neither a launch metric"},
    {"('b', 'a', 'd', 0, 'k', 'gX', 1), ('b', 'a', 'd', 0, 'k2', 'gY', 1)",
     "column name: 'k2' differs from 'k'"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    CU_ASSERT_PTR_NOT_NULL_FATAL(tmp_path(bad, sizeof bad, "case.db"));
    snprintf(sql, sizeof sql, "%s INSERT INTO fluxmetrics VALUES %s;",
             flux_schema, cases[i].row);
    CU_ASSERT_EQUAL_FATAL(raw_exec(bad, sql), 0);
    expect_refusal(out, bad, NULL, bad, cases[i].msg, NULL);
  }

  /* a text time: file, table kerneltime, row key, column time */
  CU_ASSERT_PTR_NOT_NULL_FATAL(tmp_path(bad, sizeof bad, "badtime.db"));
  snprintf(sql, sizeof sql, "%s INSERT INTO kerneltime VALUES"
           " ('b', 'app1', 'd', 'time', 0, 'fast');", time_schema);
  CU_ASSERT_EQUAL_FATAL(raw_exec(bad, sql), 0);
  expect_refusal(out, flux, bad, bad, "table kerneltime, row (bench=b,"
                 " app=app1, dataset=d, lseq=0): column time: 'fast' is not a"
                 " number", NULL);
  /* a power file passed as time */
  expect_refusal(out, flux, power, power, "(no table kerneltime)", NULL);

  /* measurements without a GPU name */
  CU_ASSERT_EQUAL(import(out, flux, time, NULL, NULL, NULL, err, sizeof err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "name of the GPU"));

  ds_db *db = open_ds(out);
  CU_ASSERT_PTR_NOT_NULL_FATAL(db);
  CU_ASSERT_EQUAL(ds_integrity_check(db), 0);  /* the file is sound after all that */
  ds_close(db);
}

/* ------------------------------------------------------------------ CLI -- */

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

static void test_cli_synthetic(void) {
  char flux[2200], time[2200], power[2200], out[2200], bad[2200];
  CU_ASSERT_EQUAL_FATAL(make_synthetic(flux, time, power, sizeof flux), 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(tmp_path(out, sizeof out, "cli.db"));
  char *o = NULL, *e = NULL;
  CU_ASSERT_EQUAL(run(&o, &e, "import-mangrove --features '%s' --time '%s'"
                      " --power '%s' --gpu K80 -o '%s'", flux, time, power, out),
                  0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(o);
  CU_ASSERT_PTR_NOT_NULL_FATAL(e);
  CU_ASSERT_PTR_NOT_NULL(strstr(o, "2 launches"));  /* summary on stdout */
  char want[5000];
  snprintf(want, sizeof want, "kcast: %s: 2 measurement rows have no matching"
           " launch in %s; skipped\n", time, flux);
  CU_ASSERT_STRING_EQUAL(e, want);  /* skipped rows: one note, not an error */
  free(o); free(e);
  CU_ASSERT_EQUAL(raw_num(out, "SELECT count(*) FROM runs WHERE command LIKE"
                          " 'kcast dataset import-mangrove --features %%'"), 1);

  /* a foreign file: exit 1, one line, and no output file left behind */
  CU_ASSERT_PTR_NOT_NULL_FATAL(tmp_path(bad, sizeof bad, "fresh.db"));
  CU_ASSERT_EQUAL(run(&o, &e, "import-mangrove --features '%s' -o '%s'", time,
                      bad), 1);
  snprintf(want, sizeof want, "kcast: %s: not a GPU Mangrove database (no"
           " table fluxmetrics)\n", time);
  CU_ASSERT_STRING_EQUAL(e ? e : "", want);
  struct stat sb;
  CU_ASSERT_NOT_EQUAL(stat(bad, &sb), 0);  /* the failed import created nothing */
  free(o); free(e);

  /* usage errors: exit 2 */
  CU_ASSERT_EQUAL(run(&o, &e, "import-mangrove -o '%s'", out), 2);
  CU_ASSERT(e && strstr(e, "needs --features"));  /* says what is missing */
  free(o); free(e);
  CU_ASSERT_EQUAL(run(&o, &e, "import-mangrove --features '%s' --time '%s'"
                      " -o '%s'", flux, time, out), 2);
  CU_ASSERT(e && strstr(e, "need --gpu"));  /* measurements need a GPU */
  free(o); free(e);
  CU_ASSERT_EQUAL(run(&o, &e, "import-mangrove --features '%s' --bogus -o '%s'",
                      flux, out), 2);
  free(o); free(e);
}

/* ---------------------------------------------------- the tutorial data -- */

static int have_tutorial(void) {
  struct stat sb;
  if (stat(MG_DATA "/cuda_flux_metrics.db", &sb) == 0) return 1;
  printf("\n  [skip: %s not found (GPU Mangrove tutorial data)] ", MG_DATA);
  return 0;
}

static void test_tutorial_k80(void) {
  if (!have_tutorial()) return;
  const char *flux = MG_DATA "/cuda_flux_metrics.db",
             *time = MG_DATA "/kernel_time_K80.db",
             *power = MG_DATA "/kernel_power_K80.db";
  char out[2200], err[1200];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tmp_path(out, sizeof out, "k80.db"));
  ds_import_report r;
  int rc = import(out, flux, time, power, "K80", &r, err, sizeof err);
  if (rc) fprintf(stderr, "\n  import: %s\n", err);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  CU_ASSERT_EQUAL(r.launches, 43);      /* the README's 43 kernel launches */
  CU_ASSERT_EQUAL(r.flux_rows, raw_num(flux, "SELECT count(*) FROM fluxmetrics"));
  CU_ASSERT_EQUAL(r.time_skipped, 0);   /* every measurement has its launch */
  CU_ASSERT_EQUAL(r.power_skipped, 0);
  CU_ASSERT_EQUAL(r.no_mem, 0);         /* no generic memory keys in this data */
  CU_ASSERT_EQUAL(raw_num(out, "SELECT count(*) FROM launches"), 43);
  CU_ASSERT_EQUAL(raw_num(out, "SELECT count(DISTINCT app) FROM launches"), 7);

  ds_db *db = open_ds(out);
  CU_ASSERT_PTR_NOT_NULL_FATAL(db);
  ds_stats st;
  CU_ASSERT_EQUAL_FATAL(ds_get_stats(db, &st), 0);
  CU_ASSERT_EQUAL(st.napps, 7);
  for (size_t i = 0; i < st.napps; i++) {  /* launches per app as in the source */
    double want = raw_num(flux, "SELECT count(*) FROM (SELECT DISTINCT dataset,"
                          " lseq FROM fluxmetrics WHERE app = '%s')",
                          st.apps[i].app);
    CU_ASSERT_EQUAL((double)st.apps[i].launches, want);
  }
  /* measurement rows per metric = source rows */
  CU_ASSERT_EQUAL_FATAL(st.nmeas, 2);
  for (size_t i = 0; i < st.nmeas; i++) {
    int is_time = !strcmp(st.meas[i].metric, "time_ns");
    CU_ASSERT_STRING_EQUAL(st.meas[i].gpu, "K80");
    CU_ASSERT_EQUAL(st.meas[i].launches, 43);
    CU_ASSERT_EQUAL((double)st.meas[i].values,
                    is_time ? raw_num(time, "SELECT count(*) FROM kerneltime")
                            : raw_num(power, "SELECT count(*) FROM kernelpower"));
  }
  ds_stats_free(&st);
  ds_close(db);
  CU_ASSERT_EQUAL(r.time_rows, 430);
  CU_ASSERT_EQUAL(r.power_rows, 430);

  /* one launch's op.* equal the source's counts, key by key */
  sqlite3 *h;
  CU_ASSERT_EQUAL_FATAL(sqlite3_open_v2(flux, &h, SQLITE_OPEN_READONLY, NULL),
                        SQLITE_OK);
  sqlite3_stmt *s;
  CU_ASSERT_EQUAL_FATAL(sqlite3_prepare_v2(h, "SELECT metric, value FROM"
                        " fluxmetrics WHERE app = 'kmeans' AND dataset = 's1'"
                        " AND lseq = 1", -1, &s, NULL), SQLITE_OK);
  int nops = 0, mismatches = 0;
  double cls[FEAT_C_COUNT] = {0};
  while (sqlite3_step(s) == SQLITE_ROW) {
    const char *m = (const char *)sqlite3_column_text(s, 0);
    double v = sqlite3_column_double(s, 1);
    static const char *const launch_metrics[] = {"gX", "gY", "gZ", "bX", "bY",
                                                 "bZ", "shm", "time"};
    int is_launch = 0;
    for (size_t i = 0; i < 8; i++) is_launch |= !strcmp(m, launch_metrics[i]);
    if (is_launch) continue;  /* the configuration and CUDA Flux's time */
    char name[256];
    snprintf(name, sizeof name, "op.%s", m);
    if (feature(out, "kmeans", "s1", 1, name) != v) mismatches++;
    cls[feat_class_of_key(m)] += v;
    nops++;
  }
  sqlite3_finalize(s);
  sqlite3_close(h);
  CU_ASSERT(nops > 20);            /* the launch has many opcode keys */
  CU_ASSERT_EQUAL(mismatches, 0);  /* ... each imported exactly */
  CU_ASSERT_EQUAL(raw_num(out, "SELECT count(*) FROM feature_values v JOIN"
                          " launches l ON l.id = v.launch_id WHERE l.app ="
                          " 'kmeans' AND l.dataset = 's1' AND l.lseq = 1 AND"
                          " v.name LIKE 'op.%%'"), nops);  /* and no others */
  for (int k = 0; k < FEAT_C_COUNT; k++) {  /* class sums of those keys */
    char name[64];
    snprintf(name, sizeof name, "class.%s", feat_class_name((feat_class)k));
    CU_ASSERT_EQUAL(feature(out, "kmeans", "s1", 1, name), cls[k]);
  }
  CU_ASSERT_EQUAL(feature(out, "kmeans", "s1", 1, "launch.shared_bytes"), 12288);
  /* class sums = op sums on every launch: total of class.* = total of op.* */
  CU_ASSERT_EQUAL(raw_num(out, "SELECT count(*) FROM (SELECT launch_id, sum(CASE"
                          " WHEN name LIKE 'op.%%' THEN value END) AS o, sum(CASE"
                          " WHEN name LIKE 'class.%%' THEN value END) AS c FROM"
                          " feature_values GROUP BY launch_id) WHERE o <> c"), 0);

  /* times: us -> ns, in the source's row order */
  double t_src = raw_num(time, "SELECT time FROM kerneltime WHERE app = 'gemm'"
                         " AND dataset = 's2' AND lseq = 0 ORDER BY rowid"
                         " LIMIT 1 OFFSET 3");
  double t_ds = raw_num(out, "SELECT m.value FROM measurements m JOIN launches"
                        " l ON l.id = m.launch_id WHERE l.app = 'gemm' AND"
                        " l.dataset = 's2' AND l.lseq = 0 AND m.metric ="
                        " 'time_ns' AND m.rep = 3");
  CU_ASSERT(t_src > 0);
  CU_ASSERT_EQUAL(t_ds, t_src * 1000);
  CU_ASSERT_EQUAL(raw_num(out, "SELECT sum(value) FROM measurements WHERE"
                          " metric = 'time_ns'"),
                  raw_num(time, "SELECT sum(time) FROM kerneltime") * 1000);
  CU_ASSERT_DOUBLE_EQUAL(raw_num(out, "SELECT sum(value) FROM measurements"
                                 " WHERE metric = 'power_w'"),
                         raw_num(power, "SELECT sum(power) FROM kernelpower"),
                         1e-6);

  /* importing again changes nothing */
  counts a = count_rows(out);
  double fsum = raw_num(out, "SELECT sum(value) FROM features");
  CU_ASSERT_EQUAL(import(out, flux, time, power, "K80", &r, err, sizeof err), 0);
  CU_ASSERT(same_counts(a, count_rows(out)));
  CU_ASSERT_EQUAL(raw_num(out, "SELECT sum(value) FROM features"), fsum);

  /* T4 into the same dataset: same launches, a second GPU */
  CU_ASSERT_EQUAL(import(out, flux, MG_DATA "/kernel_time_T4.db",
                         MG_DATA "/kernel_power_T4.db", "T4", &r, err,
                         sizeof err), 0);
  CU_ASSERT_EQUAL(raw_num(out, "SELECT count(*) FROM launches"), 43);
  CU_ASSERT_EQUAL(raw_num(out, "SELECT count(*) FROM gpus"), 2);
  CU_ASSERT_EQUAL(raw_num(out, "SELECT count(*) FROM measurements"), 4 * 430);
}

static void test_tutorial_cli_two_gpus(void) {
  if (!have_tutorial()) return;
  char out[2200];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tmp_path(out, sizeof out, "cli2.db"));
  const char *gpus[] = {"K80", "T4"};
  char *o = NULL, *e = NULL;
  for (int i = 0; i < 2; i++) {
    CU_ASSERT_EQUAL(run(&o, &e, "import-mangrove --features %s/cuda_flux_metrics.db"
                        " --time %s/kernel_time_%s.db --power"
                        " %s/kernel_power_%s.db --gpu %s -o '%s'", MG_DATA,
                        MG_DATA, gpus[i], MG_DATA, gpus[i], gpus[i], out), 0);
    CU_ASSERT_STRING_EQUAL(e ? e : "(null)", "");  /* nothing skipped, no noise */
    free(o); free(e);
  }
  CU_ASSERT_EQUAL(run(&o, &e, "stats '%s'", out), 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(o);
  CU_ASSERT_PTR_NOT_NULL(strstr(o, "launches        43"));
  CU_ASSERT_PTR_NOT_NULL(strstr(o, "gpus            2"));
  CU_ASSERT_PTR_NOT_NULL(strstr(o, "K80  time_ns           43           430"));
  CU_ASSERT_PTR_NOT_NULL(strstr(o, "T4   power_w           43           430"));
  CU_ASSERT_PTR_NOT_NULL(strstr(o, "kmeans"));
  free(o); free(e);
}

TEST_SUITES(register_mangrove) {
  CU_pSuite s = tests_suite("mangrove");
  TEST_ADD(s, test_synthetic_mapping);
  TEST_ADD(s, test_synthetic_reimport_is_idempotent);
  TEST_ADD(s, test_refuses_foreign_and_malformed);
  TEST_ADD(s, test_cli_synthetic);
  TEST_ADD(s, test_tutorial_k80);
  TEST_ADD(s, test_tutorial_cli_two_gpus);
}
