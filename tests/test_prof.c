/*
 * test_prof.c -- the profiler without a GPU: the injection library's
 * exports and dependencies, `kcast profile` refusing cleanly on a machine
 * without a driver, the records-file reader (good, truncated, garbage),
 * the power/energy attribution math, keying, and the dataset rows
 * prof_ingest writes from synthetic records.
 *
 * GPU runs of the profiler live in profiler/gpu_check.sh (make gpu-check).
 * The one test that needs the absence of a driver (the "no CUDA device"
 * refusal) skips itself where libcuda.so.1 loads; everything here passes
 * on a CPU-only machine.
 */
#include "tests.h"

#include <dlfcn.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "datasets/ds.h"
#include "profiler/prof.h"

/* ---------------------------------------------------------- helpers -- */

static int64_t sql_int(const char *db, const char *sql) {
  sqlite3 *h;
  int64_t n = -1;
  if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(h, sql, -1, &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
      n = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
  }
  sqlite3_close(h);
  return n;
}

static double sql_dbl(const char *db, const char *sql) {
  sqlite3 *h;
  double v = NAN;
  if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(h, sql, -1, &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
      v = sqlite3_column_double(s, 0);
    sqlite3_finalize(s);
  }
  sqlite3_close(h);
  return v;
}

static int sql_text_is(const char *db, const char *sql, const char *want) {
  sqlite3 *h;
  int ok = 0;
  if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(h, sql, -1, &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW) {
      const unsigned char *t = sqlite3_column_text(s, 0);
      ok = t && !strcmp((const char *)t, want);
    }
    sqlite3_finalize(s);
  }
  sqlite3_close(h);
  return ok;
}

static char *write_tmp(char *path, size_t cap, const char *name, const char *text) {
  char dir[2048];
  if (!tests_tmpdir(dir, sizeof dir, "prof")) return NULL;
  snprintf(path, cap, "%s/%s", dir, name);
  return tests_write_file(path, text, strlen(text)) == 0 ? path : NULL;
}

static int same_bytes(const char *a_data, size_t a_len, const char *path) {
  size_t n = 0;
  char *b = tests_read_file(path, &n);
  int same = b && n == a_len && !memcmp(a_data, b, n);
  free(b);
  return same;
}

/* A complete synthetic records file: three launches of an H200 run,
   lseq 1 repeated three times and marked low-confidence; power samples
   at 250 W every 50 ms and an energy counter rising 25 J per 100 ms. */
static const char RECORDS[] =
    "kcast-records 1\n"
    "note written by test_prof.c\n"
    "gpu name NVIDIA H200\n"
    "gpu cc 9 0\n"
    "gpu sms 132\n"
    "gpu sm_clock_mhz 1980\n"
    "gpu mem_clock_mhz 2619\n"
    "gpu mem_bytes 150000000000\n"
    "gpu bus_width 6144\n"
    "gpu l2_bytes 62914560\n"
    "gpu power_limit_w 700\n"
    "gpu power_min_w 200\n"
    "gpu power_max_w 700\n"
    "gpu driver 580.65.06\n"
    "gpu cuda 13.0\n"
    "opt repeat 3\n"
    "opt power 1\n"
    "opt sampled_device 0\n"
    "opt launches 3\n"
    "lowconf 1 managed-memory\n"
    /* lseq rep start end dev stream corr grid3 block3 sshm dshm regs name */
    "kernel 0 0 1000000000 1200000000 0 7 11 4 1 1 256 1 1 0 0 32 _Z4busyPfi\n"
    "kernel 1 1 1300000000 1400000000 0 7 14 8 2 1 128 1 1 1024 512 40 _Z3memPfS_\n"
    "kernel 1 2 1400000000 1500000000 0 7 15 8 2 1 128 1 1 1024 512 40 _Z3memPfS_\n"
    "kernel 1 0 1600000000 1700000000 0 7 13 8 2 1 128 1 1 1024 512 40 _Z3memPfS_\n"
    "kernel 2 0 1800000000 1800001000 0 7 17 1 1 1 32 1 1 0 0 8 tiny\n"
    "unmatched 99 graph_kernel\n"
    "power 900000000 250000\n"
    "power 950000000 250000\n"
    "power 1000000000 250000\n"
    "power 1100000000 250000\n"
    "power 1200000000 250000\n"
    "power 1300000000 250000\n"
    "power 1400000000 250000\n"
    "power 1500000000 250000\n"
    "power 1600000000 250000\n"
    "power 1700000000 250000\n"
    "power 1800000000 250000\n"
    "power 1900000000 250000\n"
    "energy 900000000 0\n"
    "energy 1000000000 25000\n"
    "energy 1900000000 250000\n"
    "end 5 12 3\n";

/* ------------------------------------------------- injection library -- */

static void test_inject_exports(void) {
  char lib[4096], cmd[4300];
  snprintf(lib, sizeof lib, "%s/libkcast_inject.so", tests_build());
  struct stat st;
  CU_ASSERT_EQUAL_FATAL(stat(lib, &st), 0);  /* make builds the injection library */
  char *out = NULL;
  snprintf(cmd, sizeof cmd, "nm -D --defined-only '%s' | awk '{print $3}' | sort", lib);
  CU_ASSERT_EQUAL(tests_run(cmd, &out, NULL), 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(out);
  CU_ASSERT_STRING_EQUAL(out, "InitializeInjection\n");  /* exports exactly the entry point */
  free(out);
  snprintf(cmd, sizeof cmd, "readelf -d '%s' | grep NEEDED", lib);
  CU_ASSERT_EQUAL(tests_run(cmd, &out, NULL), 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(out);
  CU_ASSERT_PTR_NULL(strstr(out, "libcuda"));       /* no link-time driver dependency */
  CU_ASSERT_PTR_NULL(strstr(out, "libcupti"));      /* CUPTI is dlopen'ed */
  CU_ASSERT_PTR_NULL(strstr(out, "libnvidia-ml"));  /* NVML is dlopen'ed */
  free(out);
  /* Loaded outside kcast profile (no KCAST_PROFILE_OUT) it does nothing
     and reports success. */
  unsetenv(PROF_ENV_OUT);
  void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(h);  /* loads without CUDA present */
  int (*init)(void) = NULL;
  *(void **)&init = dlsym(h, "InitializeInjection");
  CU_ASSERT_PTR_NOT_NULL_FATAL(init);
  CU_ASSERT_EQUAL(init(), 1);  /* inert without KCAST_PROFILE_OUT */
  dlclose(h);
}

/* ---------------------------------------------------------- the CLI -- */

static int driver_present(void) {
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (h) dlclose(h);
  return h != NULL;
}

static void test_cli_no_gpu(void) {
  if (driver_present()) {
    fprintf(stderr, "(skipped: a CUDA driver is present; see make gpu-check) ");
    return;
  }
  char dir[2048], db[2200], cmd[8192];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "profcli"));
  snprintf(db, sizeof db, "%s/new.db", dir);
  char *out = NULL, *err = NULL;
  snprintf(cmd, sizeof cmd, "'%s' profile -o '%s' -- true", tests_kcast(), db);
  CU_ASSERT_EQUAL(tests_run(cmd, &out, &err), 1);  /* no GPU: exit 1 */
  CU_ASSERT_PTR_NOT_NULL_FATAL(err);
  CU_ASSERT_EQUAL(strncmp(err, "kcast: no CUDA device found (", 29), 0);  /* the one message */
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "libcuda.so.1"));  /* ... with the reason */
  size_t lines = 0;
  for (const char *p = err; *p; p++) lines += *p == '\n';
  CU_ASSERT_EQUAL(lines, 1);  /* one line */
  struct stat st;
  CU_ASSERT_NOT_EQUAL(stat(db, &st), 0);  /* no DB created */
  free(out); free(err);

  /* An existing dataset stays byte-identical. */
  char edb[2200], errbuf[512];
  snprintf(edb, sizeof edb, "%s/old.db", dir);
  ds_db *h;
  CU_ASSERT_EQUAL_FATAL(ds_open(edb, DS_CREATE, &h, errbuf, sizeof errbuf), 0);
  ds_launch l = {0};
  l.app = "true"; l.dataset = ""; l.kernel = "k";
  l.grid[0] = l.grid[1] = l.grid[2] = 1;
  l.block[0] = l.block[1] = l.block[2] = 1;
  CU_ASSERT_EQUAL(ds_insert_launch(h, &l, NULL, NULL), 0);
  ds_close(h);
  size_t n0 = 0;
  char *before = tests_read_file(edb, &n0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(before);
  snprintf(cmd, sizeof cmd, "'%s' profile --power --repeat 3 -o '%s' -- true", tests_kcast(), edb);
  CU_ASSERT_EQUAL(tests_run(cmd, &out, &err), 1);
  CU_ASSERT_TRUE(same_bytes(before, n0, edb));  /* DB untouched */
  free(before); free(out); free(err);
}

static void test_cli_usage(void) {
  char cmd[4096];
  char *out = NULL, *err = NULL;
  snprintf(cmd, sizeof cmd, "'%s' profile -o x.db", tests_kcast());
  CU_ASSERT_EQUAL(tests_run(cmd, &out, &err), 2);  /* no program: usage error */
  free(out); free(err);
  snprintf(cmd, sizeof cmd, "'%s' profile --repeat 0 -- true", tests_kcast());
  CU_ASSERT_EQUAL(tests_run(cmd, &out, &err), 2);  /* --repeat must be >= 1 */
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "--repeat"));
  free(out); free(err);
  snprintf(cmd, sizeof cmd, "'%s' profile --power-window 50 -- true", tests_kcast());
  CU_ASSERT_EQUAL(tests_run(cmd, &out, &err), 2);  /* a window needs --power */
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "--power-window needs --power"));
  free(out); free(err);
  snprintf(cmd, sizeof cmd, "'%s' profile --windows-per-config 3 -- true", tests_kcast());
  CU_ASSERT_EQUAL(tests_run(cmd, &out, &err), 2);  /* so does a window limit */
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "--windows-per-config needs --power"));
  free(out); free(err);
  snprintf(cmd, sizeof cmd, "'%s' profile --power --windows-per-config x -- true", tests_kcast());
  CU_ASSERT_EQUAL(tests_run(cmd, &out, &err), 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "--windows-per-config needs a count"));
  free(out); free(err);
  snprintf(cmd, sizeof cmd, "'%s' profile --power --power-window -3 -- true", tests_kcast());
  CU_ASSERT_EQUAL(tests_run(cmd, &out, &err), 2);  /* milliseconds 0..60000 */
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "--power-window"));
  free(out); free(err);
  snprintf(cmd, sizeof cmd, "'%s' profile --bogus -- true", tests_kcast());
  CU_ASSERT_EQUAL(tests_run(cmd, &out, &err), 2);  /* unknown option */
  free(out); free(err);
  snprintf(cmd, sizeof cmd, "'%s' help profile", tests_kcast());
  CU_ASSERT_EQUAL(tests_run(cmd, &out, &err), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "--repeat N"));  /* help documents the options */
  free(out); free(err);
}

/* ------------------------------------------------------------ reader -- */

static void test_reader_good(void) {
  char path[2300], err[512];
  CU_ASSERT_PTR_NOT_NULL_FATAL(write_tmp(path, sizeof path, "r.txt", RECORDS));
  prof_records r;
  CU_ASSERT_EQUAL_FATAL(prof_records_read(path, &r, err, sizeof err), 0);
  CU_ASSERT_EQUAL(r.nkernels, 5);
  CU_ASSERT_EQUAL(r.npower, 12);
  CU_ASSERT_EQUAL(r.nenergy, 3);
  CU_ASSERT_EQUAL(r.nunmatched, 1);
  CU_ASSERT_EQUAL(r.repeat, 3);
  CU_ASSERT_EQUAL(r.sampled, 1);
  CU_ASSERT_EQUAL(r.launches, 3);
  CU_ASSERT_STRING_EQUAL(r.gpu.name, "NVIDIA H200");  /* free text to the line end */
  CU_ASSERT_EQUAL(r.gpu.cc_major, 9);
  CU_ASSERT_EQUAL(r.bus_width, 6144);
  CU_ASSERT_DOUBLE_EQUAL(r.power_max_w, 700, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(r.power[0].v, 250.0, 1e-9);   /* mW -> W */
  CU_ASSERT_DOUBLE_EQUAL(r.energy[1].v, 25.0, 1e-9);   /* mJ -> J */
  CU_ASSERT_EQUAL(r.kernels[1].lseq, 1);
  CU_ASSERT_EQUAL(r.kernels[1].rep, 1);
  CU_ASSERT_EQUAL(r.kernels[1].dyn_shmem, 512);
  CU_ASSERT_EQUAL(r.kernels[1].static_shmem, 1024);
  CU_ASSERT_EQUAL(r.kernels[1].grid[1], 2);
  CU_ASSERT_STRING_EQUAL(r.kernels[1].name, "_Z3memPfS_");
  CU_ASSERT_EQUAL(r.nlowconf, 1);
  CU_ASSERT_STRING_EQUAL(r.lowconf[0].reason, "managed-memory");
  prof_records_free(&r);
}

/* profile --kernel/--launch-skip/--launch-count keep whole launches: take
   the second launch of any kernel matching "m" or "t". */
static int take_second(void *ctx, const char *kernel) {
  int *seen = ctx;
  if (!strchr(kernel, 'm') && !strchr(kernel, 't')) return 0;
  return ++*seen == 2;
}

static void test_records_keep(void) {
  char path[2300], err[512];
  CU_ASSERT_PTR_NOT_NULL_FATAL(write_tmp(path, sizeof path, "k.txt", RECORDS));
  prof_records r;
  CU_ASSERT_EQUAL_FATAL(prof_records_read(path, &r, err, sizeof err), 0);
  int seen = 0;
  size_t nl = 0;
  /* launches 0 (_Z4busyPfi: no m or t), 1 (_Z3memPfS_, three executions), 2 (tiny) */
  CU_ASSERT_EQUAL(prof_records_keep(&r, take_second, &seen, &nl), 1);
  CU_ASSERT_EQUAL(nl, 3);                 /* three launches asked about... */
  CU_ASSERT_EQUAL(seen, 2);               /* ...two of them matched */
  CU_ASSERT_EQUAL(r.nkernels, 1);         /* the second match, launch 2, alone */
  CU_ASSERT(r.nkernels == 1 && r.kernels[0].lseq == 2 && !strcmp(r.kernels[0].name, "tiny"));
  prof_records_free(&r);
  CU_ASSERT_EQUAL_FATAL(prof_records_read(path, &r, err, sizeof err), 0);
  seen = 1; /* the first match (launch 1) is now the second */
  CU_ASSERT_EQUAL(prof_records_keep(&r, take_second, &seen, &nl), 1);
  CU_ASSERT_EQUAL(r.nkernels, 3);         /* every execution of launch 1 stays */
  for (size_t i = 0; i < r.nkernels; i++) CU_ASSERT_EQUAL(r.kernels[i].lseq, 1);
  prof_records_free(&r);
}

/* Read text; expect failure with all of the given fragments in err. */
static void expect_bad(const char *text, const char *frag1, const char *frag2) {
  char path[2300], err[512] = "";
  CU_ASSERT_PTR_NOT_NULL_FATAL(write_tmp(path, sizeof path, "bad.txt", text));
  prof_records r;
  CU_ASSERT_EQUAL(prof_records_read(path, &r, err, sizeof err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, path));  /* names the file */
  CU_ASSERT_PTR_NOT_NULL(strstr(err, frag1));
  if (frag2) CU_ASSERT_PTR_NOT_NULL(strstr(err, frag2));
  if (!strstr(err, frag1) || (frag2 && !strstr(err, frag2)))
    fprintf(stderr, "\n  unexpected message: %s\n", err);
  CU_ASSERT_EQUAL(r.nkernels, 0);  /* nothing handed out */
  CU_ASSERT_PTR_NULL(r.kernels);
}

static void test_reader_errors(void) {
  /* Cut before the end line: truncated, named at the last line read. */
  char cut[sizeof RECORDS];
  const char *endp = strstr(RECORDS, "end 5");
  size_t n = (size_t)(endp - RECORDS);
  memcpy(cut, RECORDS, n);
  cut[n] = 0;
  expect_bad(cut, ":41: truncated: no end line", NULL);
  /* Cut in the middle of a line. */
  memcpy(cut, RECORDS, n - 5);
  cut[n - 5] = 0;
  expect_bad(cut, ":41: line not terminated", NULL);
  expect_bad("kcast-records 1\nkernel 0 0 5 1 0 0 0 1 1 1 1 1 1 0 0 0 k\nend 1 0 0\n",
             ":2: kernel: end before start", NULL);
  expect_bad("kcast-records 1\nkernel 0 0 1 2 0 0 0 1 1 x 1 1 1 0 0 0 k\nend 1 0 0\n",
             ":2: kernel: field 11 (grid_z)", NULL);
  expect_bad("kcast-records 1\nkernel 0 0 1 2 0 0 0 1 1 1 1 1 1 0 0 0\nend 1 0 0\n",
             ":2:", "no kernel name");
  expect_bad("kcast-records 1\nbogus 1 2 3\nend 0 0 0\n", ":2: unknown record 'bogus'", NULL);
  expect_bad("GIF89a\x01\x02\n", ":1: not a kcast records file", NULL);
  expect_bad("kcast-records 2\nend 0 0 0\n", ":1: unsupported records version", NULL);
  expect_bad("kcast-records 1\npower 10 5\npower 5 5\nend 0 2 0\n",
             ":3: sample timestamps go backwards", NULL);
  expect_bad("kcast-records 1\nend 1 0 0\n", ":2: counts in the end line disagree", NULL);
  expect_bad("kcast-records 1\npwin 0 5 5 3\nend 0 0 0\n", ":2: pwin: empty window", NULL);
  expect_bad("kcast-records 1\npwin 0 5 9 0\nend 0 0 0\n", ":2: pwin: empty window", NULL);
  expect_bad("kcast-records 1\npwin 0 5 9\nend 0 0 0\n", ":2: pwin needs", NULL);
  expect_bad("kcast-records 1\nend 0 0 0\nkernel\n", ":3: data after the end line", NULL);
  expect_bad("", ":1: empty records file", NULL);
  char err[512];
  prof_records r;
  CU_ASSERT_EQUAL(prof_records_read("/nonexistent/records.txt", &r, err, sizeof err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "/nonexistent/records.txt: cannot open"));
}

/* ------------------------------------------------------- attribution -- */

static void test_attribution_math(void) {
  /* Piecewise constant: sample i holds over (t[i-1], t[i]]. */
  prof_sample pw[] = {{0, 100}, {10000000, 200}, {20000000, 300}, {30000000, 400}};
  prof_attr a;
  CU_ASSERT_EQUAL(prof_attribute(pw, 4, NULL, 0, 5000000, 15000000, &a), 0);
  CU_ASSERT_EQUAL(a.method, PROF_ATTR_POWER);
  /* 5 ms at 200 W + 5 ms at 300 W = 1.0 J + 1.5 J */
  CU_ASSERT_DOUBLE_EQUAL(a.energy_j, 2.5, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(a.power_w, 250.0, 1e-9);
  CU_ASSERT_EQUAL(a.lowconf, 1);   /* 10 ms < PROF_POWER_MIN_NS */
  CU_ASSERT_EQUAL(a.nsamples, 2);  /* the samples whose windows overlap */
  /* Exactly on sample boundaries: (10, 30] ms = 10 ms x 300 W + 10 ms x 400 W. */
  CU_ASSERT_EQUAL(prof_attribute(pw, 4, NULL, 0, 10000000, 30000000, &a), 0);
  CU_ASSERT_DOUBLE_EQUAL(a.energy_j, 7.0, 1e-12);
  /* Inside one window: that sample's power. */
  CU_ASSERT_EQUAL(prof_attribute(pw, 4, NULL, 0, 21000000, 22000000, &a), 0);
  CU_ASSERT_DOUBLE_EQUAL(a.power_w, 400.0, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(a.energy_j, 0.4, 1e-12);
  /* Not covered by samples: no attribution rather than a guess. */
  CU_ASSERT_EQUAL(prof_attribute(pw, 4, NULL, 0, 25000000, 35000000, &a), 0);
  CU_ASSERT_EQUAL(a.method, PROF_ATTR_NONE);
  CU_ASSERT_EQUAL(prof_attribute(pw, 4, NULL, 0, 20, 10, &a), -1);  /* end before start */

  /* Energy counter: linear between readings, used for >= 100 ms. */
  prof_sample en[] = {{0, 0}, {1000000000, 100}, {2000000000, 300}};
  CU_ASSERT_EQUAL(prof_attribute(pw, 4, en, 3, 500000000, 1500000000, &a), 0);
  CU_ASSERT_EQUAL(a.method, PROF_ATTR_ENERGY);
  CU_ASSERT_DOUBLE_EQUAL(a.energy_j, 150.0, 1e-9);  /* 200 - 50 */
  CU_ASSERT_DOUBLE_EQUAL(a.power_w, 150.0, 1e-9);
  CU_ASSERT_EQUAL(a.lowconf, 0);
  /* Shorter than 100 ms: power samples even when a counter exists. */
  CU_ASSERT_EQUAL(prof_attribute(pw, 4, en, 3, 5000000, 15000000, &a), 0);
  CU_ASSERT_EQUAL(a.method, PROF_ATTR_POWER);
}

/* --------------------------------------------------------------- keys -- */

static void test_keys(void) {
  char app[64], ds[64], key[64];
  char *argv1[] = {"./build/programs/saxpy", "-n", "1024", "--iters=3", NULL};
  prof_default_keys(4, argv1, app, sizeof app, ds, sizeof ds);
  CU_ASSERT_STRING_EQUAL(app, "saxpy");          /* basename of the program */
  CU_ASSERT_STRING_EQUAL(ds, "-n 1024 --iters=3");  /* arguments joined by one space */
  char *argv2[] = {"bfs", NULL};
  prof_default_keys(1, argv2, app, sizeof app, ds, sizeof ds);
  CU_ASSERT_STRING_EQUAL(app, "bfs");
  CU_ASSERT_STRING_EQUAL(ds, "");                /* no arguments: empty label */
  prof_gpu_key("NVIDIA H200", key, sizeof key);
  CU_ASSERT_STRING_EQUAL(key, "H200");
  prof_gpu_key("NVIDIA H100 80GB HBM3", key, sizeof key);
  CU_ASSERT_STRING_EQUAL(key, "H100-80GB-HBM3");
  prof_gpu_key("Tesla T4", key, sizeof key);
  CU_ASSERT_STRING_EQUAL(key, "T4");
  prof_gpu_key("", key, sizeof key);
  CU_ASSERT_STRING_EQUAL(key, "unknown-gpu");
}

/* ------------------------------------------------------------ ingest -- */

static void test_ingest_rows(void) {
  char path[2300], dbp[2400], err[512];
  CU_ASSERT_PTR_NOT_NULL_FATAL(write_tmp(path, sizeof path, "r.txt", RECORDS));
  snprintf(dbp, sizeof dbp, "%s.db", path);
  prof_records r;
  CU_ASSERT_EQUAL_FATAL(prof_records_read(path, &r, err, sizeof err), 0);
  ds_db *db;
  CU_ASSERT_EQUAL_FATAL(ds_open(dbp, DS_CREATE, &db, err, sizeof err), 0);
  /* lseq 0 was made by `kcast run` with features: kept, not re-created. */
  feat_vec fv;
  feat_init(&fv);
  feat_set(&fv, "op.add.s32", 7);
  ds_launch l = {0};
  l.app = "app"; l.dataset = "-n 1"; l.lseq = 0; l.kernel = "_Z4busyPfi";
  l.grid[0] = 4; l.grid[1] = l.grid[2] = 1;
  l.block[0] = 256; l.block[1] = l.block[2] = 1;
  l.source = "kcast run";
  int64_t id0 = 0;
  CU_ASSERT_EQUAL(ds_insert_launch(db, &l, &fv, &id0), 0);
  feat_free(&fv);
  prof_keys k = {"app", "-n 1", NULL, NULL, "kcast profile -- app -n 1", 1, 0, NULL, NULL};
  prof_summary sum;
  CU_ASSERT_EQUAL_FATAL(prof_ingest(db, &r, &k, &sum, err, sizeof err), 0);
  ds_close(db);
  prof_records_free(&r);

  CU_ASSERT_STRING_EQUAL(sum.gpu, "H200");  /* key from the device name */
  CU_ASSERT_EQUAL(sum.launches, 3);
  CU_ASSERT_EQUAL(sum.created, 2);          /* lseq 1 and 2 */
  CU_ASSERT_EQUAL(sum.times, 5);
  CU_ASSERT_EQUAL(sum.unmatched, 1);
  CU_ASSERT_EQUAL(sql_int(dbp, "SELECT count(*) FROM launches"), 3);
  CU_ASSERT_TRUE(sql_text_is(dbp, "SELECT source FROM launches WHERE lseq=0", "kcast run"));  /* kept */
  CU_ASSERT_EQUAL(sql_int(dbp, "SELECT count(*) FROM feature_values WHERE name='op.add.s32'"), 1);
  CU_ASSERT_TRUE(sql_text_is(dbp, "SELECT source FROM launches WHERE lseq=1", "kcast profile"));
  CU_ASSERT_EQUAL(sql_int(dbp, "SELECT shmem FROM launches WHERE lseq=1"), 512);  /* dynamic only */
  CU_ASSERT_EQUAL(sql_int(dbp, "SELECT grid_y FROM launches WHERE lseq=1"), 2);
  CU_ASSERT_TRUE(sql_text_is(dbp, "SELECT dataset FROM launches WHERE lseq=2", "-n 1"));
  /* time_ns per execution with its rep number. */
  CU_ASSERT_EQUAL(sql_int(dbp, "SELECT count(*) FROM measurements WHERE metric='time_ns'"), 5);
  CU_ASSERT_EQUAL(sql_int(dbp, "SELECT count(*) FROM measurements m JOIN launches l ON "
                               "l.id=m.launch_id WHERE l.lseq=1 AND metric='time_ns'"), 3);
  CU_ASSERT_DOUBLE_EQUAL(sql_dbl(dbp, "SELECT value FROM measurements m JOIN launches l ON "
                                      "l.id=m.launch_id WHERE l.lseq=0 AND metric='time_ns'"),
                         200000000.0, 1e-6);
  CU_ASSERT_EQUAL(sql_int(dbp, "SELECT max(rep) FROM measurements WHERE metric='time_ns'"), 2);
  CU_ASSERT_EQUAL(sql_int(dbp, "SELECT count(*) FROM measurements WHERE gpu<>'H200'"), 0);
  /* Low-confidence marker on every row of lseq 1, and only there. */
  CU_ASSERT_EQUAL(sql_int(dbp, "SELECT count(*) FROM measurements m JOIN launches l ON "
                               "l.id=m.launch_id WHERE l.lseq=1 AND tool LIKE '%:lowconf'"), 5);
  CU_ASSERT_TRUE(sql_text_is(dbp, "SELECT tool FROM measurements m JOIN launches l ON "
                                  "l.id=m.launch_id WHERE l.lseq=0 AND metric='time_ns'",
                             "kcast-profile:cupti"));
  /* lseq 0: 200 ms, energy counter: 25 J/100 ms -> 50 J, 250 W. */
  CU_ASSERT_DOUBLE_EQUAL(sql_dbl(dbp, "SELECT value FROM measurements m JOIN launches l ON "
                                      "l.id=m.launch_id WHERE l.lseq=0 AND metric='energy_j'"),
                         50.0, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(sql_dbl(dbp, "SELECT value FROM measurements m JOIN launches l ON "
                                      "l.id=m.launch_id WHERE l.lseq=0 AND metric='power_w'"),
                         250.0, 1e-9);
  CU_ASSERT_TRUE(sql_text_is(dbp, "SELECT tool FROM measurements m JOIN launches l ON "
                                  "l.id=m.launch_id WHERE l.lseq=0 AND metric='power_w'",
                             "kcast-profile:nvml-energy"));
  /* lseq 1: window = repeats 1..2 (1.3 s .. 1.5 s), 50 J over 2 runs. */
  CU_ASSERT_DOUBLE_EQUAL(sql_dbl(dbp, "SELECT value FROM measurements m JOIN launches l ON "
                                      "l.id=m.launch_id WHERE l.lseq=1 AND metric='energy_j'"),
                         25.0, 1e-9);
  CU_ASSERT_EQUAL(sql_int(dbp, "SELECT rep FROM measurements m JOIN launches l ON "
                               "l.id=m.launch_id WHERE l.lseq=1 AND metric='power_w'"), 0);
  /* lseq 2: 1 us, from power samples, low-confidence. */
  CU_ASSERT_DOUBLE_EQUAL(sql_dbl(dbp, "SELECT value FROM measurements m JOIN launches l ON "
                                      "l.id=m.launch_id WHERE l.lseq=2 AND metric='power_w'"),
                         250.0, 1e-9);
  CU_ASSERT_TRUE(sql_text_is(dbp, "SELECT tool FROM measurements m JOIN launches l ON "
                                  "l.id=m.launch_id WHERE l.lseq=2 AND metric='power_w'",
                             "kcast-profile:nvml-power:lowconf"));
  /* gpus row: descriptors, bandwidth = bus/8 x mem clock x 2. */
  CU_ASSERT_EQUAL(sql_int(dbp, "SELECT sm_count FROM gpus WHERE name='H200'"), 132);
  CU_ASSERT_DOUBLE_EQUAL(sql_dbl(dbp, "SELECT mem_bandwidth_gbs FROM gpus WHERE name='H200'"),
                         6144 / 8.0 * 2619e6 * 2 / 1e9, 1e-6);
  CU_ASSERT_DOUBLE_EQUAL(sql_dbl(dbp, "SELECT tdp_w FROM gpus WHERE name='H200'"), 700, 1e-9);
  CU_ASSERT_TRUE(sql_text_is(dbp, "SELECT driver FROM gpus WHERE name='H200'", "580.65.06"));
  CU_ASSERT_EQUAL(sql_int(dbp, "SELECT count(*) FROM runs"), 1);  /* provenance row */

  /* A second profile with --rep-offset 10 adds runs instead of replacing. */
  CU_ASSERT_EQUAL_FATAL(prof_records_read(path, &r, err, sizeof err), 0);
  CU_ASSERT_EQUAL_FATAL(ds_open(dbp, 0, &db, err, sizeof err), 0);
  k.rep_offset = 10;
  CU_ASSERT_EQUAL(prof_ingest(db, &r, &k, &sum, err, sizeof err), 0);
  ds_close(db);
  prof_records_free(&r);
  CU_ASSERT_EQUAL(sum.created, 0);  /* every launch exists now */
  CU_ASSERT_EQUAL(sql_int(dbp, "SELECT count(*) FROM measurements WHERE metric='time_ns'"), 10);
  CU_ASSERT_EQUAL(sql_int(dbp, "SELECT max(rep) FROM measurements WHERE metric='time_ns'"), 12);
  CU_ASSERT_EQUAL(sql_int(dbp, "SELECT count(*) FROM measurements WHERE metric='power_w' AND rep=10"), 3);
}

/* Power windows: a launch with a `pwin` line takes its power and energy
   from that window (energy per execution = window energy / count), 100 ms
   and longer through the energy counter, shorter from power samples and
   low-confidence; a launch without one keeps the repeats' window.  The
   energy counter here steps every 10 ms (sampled every 2 ms): the summary
   reports that period. */
static void test_ingest_windows(void) {
  size_t cap = 1 << 16, n = 0;
  char *t = malloc(cap);
  CU_ASSERT_PTR_NOT_NULL_FATAL(t);
  n += (size_t)snprintf(t + n, cap - n,
      "kcast-records 1\ngpu name NVIDIA H200\nopt repeat 2\nopt power 1\n"
      "opt sampled_device 0\nopt window_ms 200\n"
      "kernel 0 0 1000000 1010000 0 7 11 1 1 1 32 1 1 0 0 16 _Z1kv\n"
      "kernel 1 0 2000000 2010000 0 7 12 1 1 1 32 1 1 0 0 16 _Z1kv\n"
      "kernel 2 0 3000000 3010000 0 7 13 1 1 1 32 1 1 0 0 16 _Z1kv\n"
      "kernel 2 1 500000000 700000000 0 7 14 1 1 1 32 1 1 0 0 16 _Z1kv\n"
      "pwin 0 100000000 300000000 2000\npwin 1 400000000 450000000 500\n");
  int ns = 0;
  for (long ms = 0; ms <= 1000; ms += 2, ns++)  /* 250 W */
    n += (size_t)snprintf(t + n, cap - n, "power %ld 250000\n", ms * 1000000);
  for (long ms = 0; ms <= 1000; ms += 2)        /* counter steps every 10 ms */
    n += (size_t)snprintf(t + n, cap - n, "energy %ld %ld\n", ms * 1000000, ms / 10 * 2500);
  snprintf(t + n, cap - n, "end 4 %d %d\n", ns, ns);
  char path[2300], dbp[2400], err[512];
  CU_ASSERT_PTR_NOT_NULL_FATAL(write_tmp(path, sizeof path, "w.txt", t));
  free(t);
  snprintf(dbp, sizeof dbp, "%s.db", path);
  prof_records r;
  CU_ASSERT_EQUAL_FATAL(prof_records_read(path, &r, err, sizeof err), 0);
  CU_ASSERT_EQUAL(r.nwindows, 2);
  CU_ASSERT_EQUAL(r.window_ms, 200);
  CU_ASSERT_EQUAL(r.windows[1].count, 500);
  ds_db *db;
  CU_ASSERT_EQUAL_FATAL(ds_open(dbp, DS_CREATE, &db, err, sizeof err), 0);
  prof_keys k = {"w", "", NULL, NULL, NULL, 1, 0, NULL, NULL};
  prof_summary sum;
  CU_ASSERT_EQUAL_FATAL(prof_ingest(db, &r, &k, &sum, err, sizeof err), 0);
  ds_close(db);
  prof_records_free(&r);
  CU_ASSERT_EQUAL(sum.windows, 2);
  CU_ASSERT_EQUAL(sum.powers, 3);
  CU_ASSERT_DOUBLE_EQUAL(sum.energy_step_ms, 10.0, 1e-9);
  CU_ASSERT_EQUAL(sum.times, 4);  /* the window's executions add no time rows */
  const char *q = "SELECT value FROM measurements m JOIN launches l ON l.id=m.launch_id "
                  "WHERE l.lseq=%d AND metric='%s'";
  char sql[512];
  /* lseq 0: 200 ms window, 50 J by the counter, 2000 executions. */
  snprintf(sql, sizeof sql, q, 0, "power_w");
  CU_ASSERT_DOUBLE_EQUAL(sql_dbl(dbp, sql), 250.0, 1e-9);
  snprintf(sql, sizeof sql, q, 0, "energy_j");
  CU_ASSERT_DOUBLE_EQUAL(sql_dbl(dbp, sql), 50.0 / 2000, 1e-12);
  CU_ASSERT_TRUE(sql_text_is(dbp, "SELECT tool FROM measurements m JOIN launches l ON "
                                  "l.id=m.launch_id WHERE l.lseq=0 AND metric='power_w'",
                             "kcast-profile:nvml-energy"));
  /* lseq 1: 50 ms window: power samples, low-confidence; 12.5 J / 500. */
  snprintf(sql, sizeof sql, q, 1, "energy_j");
  CU_ASSERT_DOUBLE_EQUAL(sql_dbl(dbp, sql), 12.5 / 500, 1e-12);
  CU_ASSERT_TRUE(sql_text_is(dbp, "SELECT tool FROM measurements m JOIN launches l ON "
                                  "l.id=m.launch_id WHERE l.lseq=1 AND metric='power_w'",
                             "kcast-profile:nvml-power:lowconf"));
  /* lseq 2: no window: its repeat (200 ms, 50 J for one run). */
  snprintf(sql, sizeof sql, q, 2, "energy_j");
  CU_ASSERT_DOUBLE_EQUAL(sql_dbl(dbp, sql), 50.0, 1e-9);
  CU_ASSERT_EQUAL(sql_int(dbp, "SELECT count(*) FROM measurements WHERE tool LIKE '%lowconf' "
                               "AND metric='time_ns'"), 0);  /* time rows unaffected */
}

static void test_ingest_refusals(void) {
  char path[2300], dbp[2400], err[512];
  CU_ASSERT_PTR_NOT_NULL_FATAL(write_tmp(path, sizeof path, "r.txt", RECORDS));
  snprintf(dbp, sizeof dbp, "%s.db", path);
  prof_records r;
  CU_ASSERT_EQUAL_FATAL(prof_records_read(path, &r, err, sizeof err), 0);
  ds_db *db;
  CU_ASSERT_EQUAL_FATAL(ds_open(dbp, DS_CREATE, &db, err, sizeof err), 0);
  ds_launch l = {0};
  l.app = "app"; l.dataset = ""; l.lseq = 1; l.kernel = "_Z5otherv";
  l.grid[0] = l.grid[1] = l.grid[2] = 1;
  l.block[0] = l.block[1] = l.block[2] = 1;
  CU_ASSERT_EQUAL(ds_insert_launch(db, &l, NULL, NULL), 0);
  ds_close(db);
  size_t n0 = 0;
  char *before = tests_read_file(dbp, &n0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(before);

  /* A stored launch with another kernel at the same key: refused. */
  CU_ASSERT_EQUAL_FATAL(ds_open(dbp, 0, &db, err, sizeof err), 0);
  prof_keys k = {"app", "", "H200", NULL, NULL, 1, 0, NULL, NULL};
  CU_ASSERT_EQUAL(prof_ingest(db, &r, &k, NULL, err, sizeof err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "launch sequences disagree"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "_Z5otherv"));
  /* Two records claiming the same (lseq, rep): refused. */
  r.kernels[2].rep = 1;
  k.dataset = "other";
  CU_ASSERT_EQUAL(prof_ingest(db, &r, &k, NULL, err, sizeof err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "two records for rep 1"));
  ds_close(db);
  prof_records_free(&r);
  CU_ASSERT_TRUE(same_bytes(before, n0, dbp));  /* refused writes leave the file as it was */
  free(before);
}

/* The bundle of `make gpu-bundle` (what a GPU machine without the build's
   packages runs): every library kcast needs beyond the C runtime is inside
   it, kcast starts from it, and gpu_check.sh in bundle mode passes its
   build step and, with no GPU, stops at the gpu step with exit 1, leaving
   its log in KCAST_GPU_RESULTS. */
static void test_gpu_bundle(void) {
  char b[2048], dir[2048], cmd[16384];
  snprintf(b, sizeof b, "%s/gpu-bundle", tests_build());
  char man[2100];
  snprintf(man, sizeof man, "%s/MANIFEST", b);
  struct stat st;
  if (stat(man, &st) != 0) {
    CU_FAIL("no gpu bundle: make gpu-bundle (make test builds it)");
    return;
  }
  char *out = NULL, *err = NULL;
  /* Libraries resolved outside the bundle: the C runtime only. */
  snprintf(cmd, sizeof cmd,
           "LD_LIBRARY_PATH='%s/lib' ldd '%s/bin/kcast' '%s/bin/libkcast_inject.so' | "
           "awk -v d='%s/lib/' '$2 == \"=>\" && index($3, d) != 1 { print $1, $3 }' | "
           "grep -Ev '^(libc|libm|libdl|libpthread|librt|libgcc_s)\\.so|^ld-linux' || true",
           b, b, b, b);
  CU_ASSERT_EQUAL(tests_run(cmd, &out, &err), 0);
  if (out && *out) printf("\n  outside the bundle: %s", out);
  CU_ASSERT_TRUE(out && !*out);
  free(out); free(err);
  snprintf(cmd, sizeof cmd, "env -i LD_LIBRARY_PATH='%s/lib' '%s/bin/kcast' version", b, b);
  CU_ASSERT_EQUAL(tests_run(cmd, &out, &err), 0);
  CU_ASSERT_PTR_NOT_NULL(out && strstr(out, "kcast "));
  free(out); free(err);
  snprintf(cmd, sizeof cmd, "ls '%s/suite' | wc -l; ls '%s/programs/gpu_check' '%s/lib/libcudart.so.13' "
           "'%s/cupti/libcupti.so.13'", b, b, b, b);
  CU_ASSERT_EQUAL(tests_run(cmd, &out, &err), 0);  /* every part is there */
  CU_ASSERT_TRUE(out && atoi(out) >= 30);           /* the kernel suite's programs */
  free(out); free(err);

  if (driver_present()) {
    fprintf(stderr, "(gpu_check.sh part skipped: a CUDA driver is present; see make gpu-check) ");
    return;
  }
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "gpubundle"));
  snprintf(cmd, sizeof cmd,
           "PATH=/usr/bin:/bin BUILD='%s/b' KCAST_BUNDLE='%s' KCAST_GPU_RESULTS='%s/res' "
           "bash profiler/gpu_check.sh",
           dir, b, dir);
  CU_ASSERT_EQUAL(tests_run(cmd, &out, &err), 1);
  CU_ASSERT_PTR_NOT_NULL(out && strstr(out, "build      PASS  prebuilt bundle"));
  CU_ASSERT_PTR_NOT_NULL(out && strstr(out, "gpu        FAIL"));
  CU_ASSERT_PTR_NOT_NULL(out && strstr(out, "gpu-check: FAILED"));
  free(out); free(err);
  char p[2200];
  snprintf(p, sizeof p, "%s/res/log.txt", dir);
  CU_ASSERT_EQUAL(stat(p, &st), 0);
  snprintf(p, sizeof p, "%s/res/gpu-check.tgz", dir);
  CU_ASSERT_EQUAL(stat(p, &st), 0);
}

/* tools/emu-vs-ncu.sh on an ncu CSV written the way `ncu --csv
   --print-kernel-base mangled` writes one (quoted fields, thousands
   separators, ==PROF== lines around): the launch gemm_tiled "16 4" lseq 0
   of the shipped suite features joins, each pair's GPU/emulator ratio is
   what the counters were made to give, a launch the emulator did not
   record is counted as not joined, and a file without the header is an
   error. */
static void test_emu_vs_ncu(void) {
  char dir[2048], p[2200], cmd[8192];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "emuncu"));
  static const char hdr[] =
      "==PROF== Connected to process 4242 (gemm_tiled)\n"
      "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\","
      "\"Stream\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"Section Name\","
      "\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n";
  static const char *const rows[][2] = {
      {"launch__grid_size", "16"},
      {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "600"},
      {"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "40"},
      {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "140"},
      {"l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "20"},
      {"smsp__inst_executed_op_shared_ld.sum", "512"},
      {"smsp__inst_executed_op_shared_st.sum", "128"},
      {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "0"},
      {"smsp__inst_executed.sum", "6,528"},
      {"smsp__thread_inst_executed.sum", "104,448"},
      {"dram__bytes_read.sum", "2,048"},
      {"dram__bytes_write.sum", "1,024"},
  };
  size_t cap = 8192, n = 0;
  char *t = malloc(cap);
  CU_ASSERT_PTR_NOT_NULL_FATAL(t);
  n += (size_t)snprintf(t + n, cap - n, "%s", hdr);
  for (int id = 0; id < 2; id++)  /* lseq 1 does not exist in the features */
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
      n += (size_t)snprintf(t + n, cap - n,
                            "\"%d\",\"4242\",\"gemm_tiled\",\"h\",\"_Z17gemm_tiled_kernelILi4EEviffPKfS1_Pf\","
                            "\"1\",\"7\",\"(4, 4, 1)\",\"(4, 4, 1)\",\"0\",\"9.0\",\"Command line profiler "
                            "metrics\",\"%s\",\"\",\"%s\"\n", id, rows[i][0], rows[i][1]);
  snprintf(t + n, cap - n, "==PROF== Disconnected from process 4242\n");
  snprintf(p, sizeof p, "%s/gemm.csv", dir);
  CU_ASSERT_EQUAL_FATAL(tests_write_file(p, t, strlen(t)), 0);
  free(t);
  snprintf(p, sizeof p, "%s/runs.txt", dir);
  CU_ASSERT_EQUAL_FATAL(tests_write_file(p, "gemm.csv\tgemm_tiled\t16 4\n", 25), 0);
  char *out = NULL, *err = NULL;
  snprintf(cmd, sizeof cmd, "sh tools/emu-vs-ncu.sh '%s' datasets/data/suite-features.db '%s'", dir,
           tests_kcast());
  CU_ASSERT_EQUAL(tests_run(cmd, &out, &err), 0);
  if (err && *err) printf("\n  %s", err);
  CU_ASSERT_PTR_NOT_NULL(out && strstr(out, "1 ncu files, 2 launches with counters, 1 joined to "
                                             "emulator features, 1 not"));
  static const char *const want[] = {
      "launch check             1    1.0000", "global sectors           1    1.0000",
      "global requests          1    1.0000", "shared accesses          1    1.0000",
      "warp insns               1    2.0000", "active lanes             1    1.0000",
      "DRAM / footprint         1    1.0000", "(1 both 0, 0 emulator 0)"};
  for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
    CU_ASSERT_PTR_NOT_NULL(out && strstr(out, want[i]));
    if (!(out && strstr(out, want[i]))) printf("\n  missing: %s", want[i]);
  }
  free(out); free(err);
  snprintf(p, sizeof p, "%s/compare.csv", dir);
  char *csv = tests_read_file(p, NULL);
  CU_ASSERT_PTR_NOT_NULL(csv && strstr(csv, "gemm_tiled,16 4,0,warp insns,3264,6528,2\n"));
  free(csv);
  snprintf(p, sizeof p, "%s/gemm.csv", dir);
  CU_ASSERT_EQUAL_FATAL(tests_write_file(p, "not,an,ncu,file\n", 16), 0);
  CU_ASSERT_EQUAL(tests_run(cmd, &out, &err), 1);
  CU_ASSERT_PTR_NOT_NULL(err && strstr(err, "gemm.csv: no ncu CSV header"));
  free(out); free(err);
}

TEST_SUITES(register_prof) {
  CU_pSuite s = tests_suite("profiler");
  TEST_ADD(s, test_inject_exports);
  TEST_ADD(s, test_cli_no_gpu);
  TEST_ADD(s, test_cli_usage);
  TEST_ADD(s, test_reader_good);
  TEST_ADD(s, test_records_keep);
  TEST_ADD(s, test_reader_errors);
  TEST_ADD(s, test_attribution_math);
  TEST_ADD(s, test_keys);
  TEST_ADD(s, test_ingest_rows);
  TEST_ADD(s, test_ingest_windows);
  TEST_ADD(s, test_ingest_refusals);
  TEST_ADD(s, test_gpu_bundle);
  TEST_ADD(s, test_emu_vs_ncu);
}
