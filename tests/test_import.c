/*
 * test_import.c -- Kernel Tuner cachefiles: the reader (ds_kt_read) on
 * files the test writes in Kernel Tuner's format, and `kcast dataset
 * import-kerneltuner` through the real binary with the tunable kernel
 * tests/tuning/scale_add.cu: launch geometry, times in ns, features equal
 * to kcast emulate's, grouped and one-by-one compilation alike, resuming,
 * a second GPU's cachefile sharing the features, and the errors.  The real
 * cachefiles beside the project (../shared/data/tuning-features) are read
 * for their times when they are there.
 */
#include "tests.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <zlib.h>

#include "datasets/ds.h"

#define ASSERT_MSG(what, cond) CU_assertImplementation((cond), __LINE__, (what), __FILE__, "", CU_FALSE)

static const char *const KT_SRC = "tests/tuning/scale_add.cu";
static const char *const KT_REAL = "../shared/data/tuning-features/cachefiles/convolution_A100.json.gz";

static int have_nvcc(void) {
  static int v = -1;
  if (v < 0) v = tests_run("command -v nvcc >/dev/null 2>&1", NULL, NULL) == 0;
  if (!v) printf("\n  [skip: nvcc not on PATH] ");
  return v;
}

/* The time of run r of configuration (bx, tx, ub), ms. */
static double kt_time(int bx, int tx, int ub, int r) {
  return (bx / (double)tx) * 0.001 * (1 + 0.01 * r) + ub * 0.0001;
}

/*
 * A cachefile of scale_add (24 configurations: block_size_x 32..256,
 * tile_size_x 1,2,4, use_bias 0,1; 256,4,1 failed) measured on device,
 * three runs each.  trunc: leave it unterminated, as an interrupted tuning
 * run does.  Returns 0.
 */
static int write_cachefile(const char *path, const char *device, int trunc) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  fprintf(f, "{\n\"device_name\": \"%s\",\n\"kernel_name\": \"scale_add\",\n"
             "\"problem_size\": [100000],\n"
             "\"tune_params_keys\": [\"block_size_x\", \"tile_size_x\", \"use_bias\"],\n"
             "\"tune_params\": {\"block_size_x\": [32, 64, 128, 256], \"tile_size_x\": [1, 2, 4],"
             " \"use_bias\": [0, 1]},\n\"objective\": \"time\",\n\"cache\": {\n", device);
  int first = 1;
  for (int bx = 32; bx <= 256; bx *= 2)
    for (int tx = 1; tx <= 4; tx *= 2)
      for (int ub = 0; ub <= 1; ub++) {
        if (!first && !trunc) fputs(",\n", f);
        first = 0;
        fprintf(f, "\"%d,%d,%d\": {\"block_size_x\": %d, \"tile_size_x\": %d, \"use_bias\": %d, ",
                bx, tx, ub, bx, tx, ub);
        if (bx == 256 && tx == 4 && ub == 1) {
          fprintf(f, "\"time\": \"CompileFailedConfig\"}");
        } else {
          double m = (kt_time(bx, tx, ub, 0) + kt_time(bx, tx, ub, 1) + kt_time(bx, tx, ub, 2)) / 3;
          fprintf(f, "\"time\": %.17g, \"times\": [%.17g, %.17g, %.17g], \"compile_time\": 1}", m,
                  kt_time(bx, tx, ub, 0), kt_time(bx, tx, ub, 1), kt_time(bx, tx, ub, 2));
        }
        if (trunc) fputs(",\n", f);
      }
  if (!trunc) fputs("\n}}\n", f);
  return fclose(f);
}

static int run(char **out, char **err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int run(char **out, char **err, const char *fmt, ...) {
  char args[8192], cmd[9000];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(args, sizeof args, fmt, ap);
  va_end(ap);
  snprintf(cmd, sizeof cmd, "'%s' dataset import-kerneltuner %s", tests_kcast(), args);
  return tests_run(cmd, out, err);
}

/* Run `kcast ARGS` (printf-style). */
static int tests_run_fmt(char **out, char **err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int tests_run_fmt(char **out, char **err, const char *fmt, ...) {
  char args[8192], cmd[9000];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(args, sizeof args, fmt, ap);
  va_end(ap);
  snprintf(cmd, sizeof cmd, "'%s' %s", tests_kcast(), args);
  return tests_run(cmd, out, err);
}

/* The launch options of scale_add over 100000 elements. */
#define KT_OPTS "--grid-div-x block_size_x,tile_size_x --arg buf:400k --arg buf:400k:randf " \
                "--arg 100000 --const scale=randf:3"

/* ------------------------------------------------------------ the reader -- */

static void test_reader(void) {
  char dir[2048], p[2200], gz[2200], err[1200];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "ktread"));
  snprintf(p, sizeof p, "%s/a.json", dir);
  CU_ASSERT_EQUAL_FATAL(write_cachefile(p, "NVIDIA A100-PCIE-40GB", 0), 0);
  ds_kt_file f;
  ASSERT_MSG("a cachefile written in Kernel Tuner's format reads",
             ds_kt_read(p, &f, err, sizeof err) == 0);
  ASSERT_MSG("24 entries in file order", f.nconfigs == 24 && !strcmp(f.configs[0].key, "32,1,0"));
  ASSERT_MSG("device, kernel, problem size", !strcmp(f.device_name, "NVIDIA A100-PCIE-40GB") &&
             !strcmp(f.kernel_name, "scale_add") && f.ndims == 1 && f.problem_size[0] == 100000);
  ASSERT_MSG("parameters in tune_params_keys order", f.nparams == 3 &&
             !strcmp(f.params[2], "use_bias") && !strcmp(f.configs[1].values[2], "1"));
  ASSERT_MSG("every run's time kept", f.configs[0].ntimes == 3 &&
             f.configs[0].times_ms[2] == kt_time(32, 1, 0, 2));
  ASSERT_MSG("a failed configuration holds its string, no times",
             f.configs[23].failed && !strcmp(f.configs[23].failed, "CompileFailedConfig") &&
             f.configs[23].ntimes == 0);
  ds_kt_free(&f);

  /* the same file gzip-compressed */
  snprintf(gz, sizeof gz, "%s/a.json.gz", dir);
  size_t len = 0;
  char *text = tests_read_file(p, &len);
  gzFile g = gzopen(gz, "wb");
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT_EQUAL(gzwrite(g, text, (unsigned)len), (int)len);
  gzclose(g);
  ASSERT_MSG("a .json.gz reads the same", ds_kt_read(gz, &f, err, sizeof err) == 0 &&
             f.nconfigs == 24 && f.configs[5].times_ms[1] == kt_time(32, 4, 1, 1));
  ds_kt_free(&f);

  /* unterminated: read up to the last complete entry */
  CU_ASSERT_EQUAL_FATAL(write_cachefile(p, "NVIDIA A100-PCIE-40GB", 1), 0);
  ASSERT_MSG("an unterminated file (interrupted tuning) reads its complete entries",
             ds_kt_read(p, &f, err, sizeof err) == 0 && f.unterminated && f.nconfigs == 24);
  ds_kt_free(&f);

  /* bad inputs: one line naming the place */
  char *bad = strstr(text, "\"times\": [");
  CU_ASSERT_PTR_NOT_NULL_FATAL(bad);
  char keep = bad[10];
  bad[10] = '-';  /* times[0] of the first entry becomes negative */
  tests_write_file(p, text, len);
  ASSERT_MSG("a negative time is refused", ds_kt_read(p, &f, err, sizeof err) < 0);
  ASSERT_MSG("... naming the entry and the time", strstr(err, "'32,1,0'") && strstr(err, "times[0]"));
  bad[10] = '{';
  tests_write_file(p, text, len);
  ASSERT_MSG("broken JSON is refused", ds_kt_read(p, &f, err, sizeof err) < 0);
  ASSERT_MSG("... with FILE:LINE:COL", strstr(err, "a.json:") && strstr(err, "not valid JSON"));
  bad[10] = keep;
  tests_write_file(p, "{\"device_name\": \"x\"}", 20);
  ASSERT_MSG("JSON that is not a cachefile is refused", ds_kt_read(p, &f, err, sizeof err) < 0 &&
             strstr(err, "not a Kernel Tuner cachefile"));
  bad = strstr(text, "\"use_bias\": 0, \"time\"");
  CU_ASSERT_PTR_NOT_NULL_FATAL(bad);
  memcpy(bad, "\"use_bixs\"", 10);
  tests_write_file(p, text, len);
  ds_kt_read(p, &f, err, sizeof err);
  ASSERT_MSG("an entry without a tuning parameter is named", strstr(err, "lacks tuning parameter 'use_bias'") != NULL);
  free(text);
}

/* ---------------------------------------------------------- the command -- */

/* Launches, feature values and measurements of dataset db. */
static int count_rows(const char *db, int64_t *launches, int64_t *feats, int64_t *meas) {
  char err[512];
  ds_db *d;
  if (ds_open(db, DS_READONLY, &d, err, sizeof err)) return -1;
  ds_stats s;
  int rc = ds_get_stats(d, &s);
  if (!rc) {
    *launches = s.launches;
    *feats = s.feature_rows;
    *meas = s.measurements;
    ds_stats_free(&s);
  }
  ds_close(d);
  return rc;
}

static void test_times_only(void) {
  char dir[2048], cf[2200], db[2200];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "kttimes"));
  snprintf(cf, sizeof cf, "%s/scale_A100.json", dir);
  snprintf(db, sizeof db, "%s/t.db", dir);
  CU_ASSERT_EQUAL_FATAL(write_cachefile(cf, "NVIDIA A100-PCIE-40GB", 0), 0);
  char *out = NULL, *err = NULL;
  int rc = run(&out, &err, "'%s' -o '%s' --grid-div-x block_size_x,tile_size_x", cf, db);
  ASSERT_MSG("times-only import succeeds", rc == 0);
  ASSERT_MSG("the failed configuration is reported by key", err && strstr(err, "256,4,1") &&
             strstr(err, "CompileFailedConfig"));
  ASSERT_MSG("summary names the GPU key kcast profile would use",
             out && strstr(out, "23 configurations") && strstr(out, "A100-PCIE-40GB"));
  free(out); free(err);
  char e2[512];
  ds_db *d;
  CU_ASSERT_EQUAL_FATAL(ds_open(db, DS_READONLY, &d, e2, sizeof e2), 0);
  int64_t id = 0;
  ASSERT_MSG("one launch per configuration, keyed by the cache key",
             ds_find_launch(d, "scale_add", "64,2,1", 0, &id) == 1);
  ASSERT_MSG("no launch for the failed one", ds_find_launch(d, "scale_add", "256,4,1", 0, &id) == 0);
  ds_iter *it;
  ds_launch l;
  int64_t lid;
  CU_ASSERT_EQUAL_FATAL(ds_iter_launches(d, "scale_add", "64,2,1", &it), 0);
  CU_ASSERT_EQUAL_FATAL(ds_iter_next(it, &lid, &l), 1);
  ASSERT_MSG("grid = ceil(100000 / (64*2)), block = block_size_x",
             l.grid[0] == 782 && l.grid[1] == 1 && l.block[0] == 64 && l.block[1] == 1);
  ds_iter_free(it);
  ds_target t;
  CU_ASSERT_EQUAL_FATAL(ds_query_target(d, "A100-PCIE-40GB", "time_ns", DS_AGG_MEDIAN, &t), 0);
  int ok = t.n == 23;
  for (size_t i = 0; i < t.n; i++)
    if (t.launch_id[i] == id) ok = ok && fabs(t.value[i] - kt_time(64, 2, 1, 1) * 1e6) < 1e-6;
  ASSERT_MSG("times become ns: the median of the three runs", ok);
  ds_target_free(&t);
  ds_gpu g;
  ASSERT_MSG("a gpus row from the GPU table (A100 PCIe: 108 SMs)",
             ds_get_gpu(d, "A100-PCIE-40GB", &g) == 1 && g.sm_count == 108);
  ds_close(d);

  /* the same file again rewrites the same rows */
  int64_t n1, f1, m1, n2, f2, m2;
  CU_ASSERT_EQUAL(count_rows(db, &n1, &f1, &m1), 0);
  CU_ASSERT_EQUAL(run(NULL, NULL, "'%s' -o '%s' --grid-div-x block_size_x,tile_size_x", cf, db), 0);
  CU_ASSERT_EQUAL(count_rows(db, &n2, &f2, &m2), 0);
  ASSERT_MSG("importing again adds nothing", n1 == 23 && m1 == 69 && n2 == n1 && m2 == m1);

  /* other divisors give other grids for stored launches: refused, unchanged */
  rc = run(NULL, &err, "'%s' -o '%s'", cf, db);
  ASSERT_MSG("a launch stored with another grid is refused", rc == 1 && err &&
             strstr(err, "is stored with grid") && strstr(err, "--app"));
  free(err);
  CU_ASSERT_EQUAL(count_rows(db, &n2, &f2, &m2), 0);
  ASSERT_MSG("... and the dataset is as it was", n2 == n1 && m2 == m1);

  /* the sample */
  snprintf(db, sizeof db, "%s/s.db", dir);
  CU_ASSERT_EQUAL(run(&out, NULL, "'%s' -o '%s' --configs 5 --seed 7", cf, db), 0);
  CU_ASSERT_EQUAL(count_rows(db, &n2, &f2, &m2), 0);
  ASSERT_MSG("--configs 5 imports five configurations", n2 == 5 && m2 == 15);
  free(out);

  /* usage errors */
  ASSERT_MSG("no -o is a usage error", run(NULL, NULL, "'%s'", cf) == 2);
  ASSERT_MSG("--arg without --source is a usage error",
             run(NULL, NULL, "'%s' -o '%s' --arg 1", cf, db) == 2);
  ASSERT_MSG("a bad -j is a usage error", run(NULL, NULL, "'%s' -o '%s' -j 0", cf, db) == 2);
  ASSERT_MSG("--grid is refused: the geometry follows from the cachefile",
             run(NULL, NULL, "'%s' -o '%s' --grid 4", cf, db) == 2);
  ASSERT_MSG("--jobs=2 and -o=DB forms parse", run(NULL, NULL, "'%s' -o='%s' --jobs=2", cf, db) == 0);
  rc = run(NULL, &err, "'%s/missing.json' -o '%s'", dir, db);
  ASSERT_MSG("a missing cachefile is a user error naming it", rc == 1 && err && strstr(err, "missing.json"));
  free(err);
}

/* Features of one exported row (the CSV of kcast dataset export, from the
   kernel column on) for dataset key; malloc'd. */
static char *export_row(const char *db, const char *key) {
  char cmd[4600], *out = NULL;
  snprintf(cmd, sizeof cmd, "'%s' dataset export '%s' | grep '\"%s\"' | cut -d, -f6-", tests_kcast(),
           db, key);
  if (tests_run(cmd, &out, NULL) != 0) { free(out); return NULL; }
  return out;
}

static void test_features(void) {
  if (!have_nvcc()) return;
  char dir[2048], cf[2200], cf2[2200], db[2200], db1[2200];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "ktfeat"));
  snprintf(cf, sizeof cf, "%s/scale_A100.json", dir);
  snprintf(cf2, sizeof cf2, "%s/scale_A4000.json", dir);
  snprintf(db, sizeof db, "%s/f.db", dir);
  snprintf(db1, sizeof db1, "%s/one.db", dir);
  CU_ASSERT_EQUAL_FATAL(write_cachefile(cf, "NVIDIA A100-PCIE-40GB", 0), 0);
  CU_ASSERT_EQUAL_FATAL(write_cachefile(cf2, "NVIDIA RTX A4000", 0), 0);
  char *out = NULL, *err = NULL;
  int rc = run(&out, &err, "'%s' -o '%s' --source %s " KT_OPTS " --configs 8 -j 2", cf, db,
               KT_SRC);
  ASSERT_MSG("import with features succeeds", rc == 0);
  ASSERT_MSG("eight computed, compiled in groups", out && strstr(out, "8 computed, 0 kept, 0 failed") &&
             !strstr(out, "one by one"));
  free(out); free(err);
  /* One configuration compiled alone and emulated by kcast emulate gives the
     same features (the defines are Kernel Tuner's). */
  char *row = export_row(db, "64,2,1");
  char *cmd = NULL, *eout = NULL;
  const char *pre = "#define grid_size_x 782\\n#define grid_size_y 1\\n#define grid_size_z 1\\n"
                    "#define block_size_x 64\\n#define block_size_y 1\\n#define block_size_z 1\\n"
                    "#define tile_size_x 2\\n#define use_bias 1\\n#define kernel_tuner 1\\n"
                    "#line 1 \"scale_add.cu\"\\n";
  CU_ASSERT(asprintf(&cmd, "printf '%s' > '%s/one.cu' && cat %s >> '%s/one.cu' && "
                     "cp tests/tuning/scale_add.h '%s/' && '%s' emulate '%s/one.cu' --grid 782 "
                     "--block 64 --arg buf:400k --arg buf:400k:randf --arg 100000 --sample auto "
                     "--format json", pre, dir, KT_SRC, dir, dir, tests_kcast(), dir) > 0);
  char *eerr = NULL;
  ASSERT_MSG("kcast emulate of the configuration runs", tests_run(cmd, &eout, &eerr) == 0);
  if (eerr && *eerr) printf("\n  %s", eerr);
  free(eerr);
  cJSON *j = eout ? cJSON_Parse(eout) : NULL;
  cJSON *fs = j ? cJSON_GetObjectItem(j, "features") : NULL;
  char e2[512];
  ds_db *d = NULL;
  feat_vec v;
  feat_init(&v);
  int64_t id = 0;
  int same = fs && ds_open(db, DS_READONLY, &d, e2, sizeof e2) == 0 &&
             ds_find_launch(d, "scale_add", "64,2,1", 0, &id) == 1 &&
             ds_get_features(d, id, &v) == 0;
  /* the import adds the tuning parameters (tune.*) to what emulate gives */
  size_t ntune = 0;
  for (size_t i = 0; i < v.n; i++) ntune += ds_is_tune_feature(v.names[i]);
  ASSERT_MSG("the tuning parameters are stored as tune.* beside the features",
             ntune == 3 && feat_get(&v, "tune.block_size_x", 0) == 64 &&
             feat_get(&v, "tune.tile_size_x", 0) == 2 && feat_get(&v, "tune.use_bias", 0) == 1);
  /* ... and the kernel's static features and what ptxas says of it for
     the cachefile's GPU (static.*, ptxas.sm_XY.*), as predict FILE adds them */
  size_t nstatic = 0, nptxas = 0;
  double regs = 0;
  for (size_t i = 0; i < v.n; i++) {
    nstatic += !strncmp(v.names[i], "static.", 7);
    if (!strncmp(v.names[i], "ptxas.sm_", 9)) {
      nptxas++;
      if (strstr(v.names[i], ".registers")) regs = v.vals[i];
    }
  }
  ASSERT_MSG("the kernel's static features are stored (static.insns, static.shared_bytes)",
             nstatic > 10 && feat_get(&v, "static.insns", 0) > 0 &&
                 !isnan(feat_get(&v, "static.shared_bytes", NAN)));
  ASSERT_MSG("ptxas's registers, spills, stack and shared memory for the GPU's architecture",
             nptxas == 5 && regs > 0);
  same = same && (size_t)cJSON_GetArraySize(fs) == v.n - ntune - nstatic - nptxas;
  cJSON *x;
  if (same) cJSON_ArrayForEach(x, fs) {
    double got = feat_get(&v, x->string, NAN);
    if (!(fabs(got - x->valuedouble) <= 1e-9 * fabs(x->valuedouble))) {
      printf("\n  %s: import %.17g, emulate %.17g", x->string, got, x->valuedouble);
      same = 0;
    }
  }
  ASSERT_MSG("the import's features are kcast emulate's for that configuration", same);
  ASSERT_MSG("... stored under the kernel's own name", row && strstr(row, "_Z9scale_addPfPKfi,782,"));
  feat_free(&v);
  ds_close(d);
  cJSON_Delete(j);
  free(cmd); free(eout);

  /* resume / second GPU: nothing recomputed, times added */
  int64_t n1, f1, m1;
  CU_ASSERT_EQUAL(count_rows(db, &n1, &f1, &m1), 0);
  rc = run(&out, NULL, "'%s' -o '%s' --source %s " KT_OPTS " --configs 8 -j 2", cf2, db, KT_SRC);
  ASSERT_MSG("the A4000 cachefile finds the features there", rc == 0 && out &&
             strstr(out, "0 computed, 8 kept"));
  free(out);
  int64_t n2, f2, m2;
  CU_ASSERT_EQUAL(count_rows(db, &n2, &f2, &m2), 0);
  ASSERT_MSG("... and adds only its times", n2 == n1 && f2 == f1 && m2 == 2 * m1);

  /* one nvcc per configuration gives the same features */
  rc = run(&out, NULL, "'%s' -o '%s' --source %s " KT_OPTS " --configs 8 -j 2 --batch 1", cf, db1,
           KT_SRC);
  ASSERT_MSG("--batch 1 import succeeds", rc == 0);
  free(out);
  char *row1 = export_row(db1, "64,2,1");
  ASSERT_MSG("grouped and one-by-one compilation give the same features",
             row && row1 && *row && !strcmp(row, row1));
  free(row); free(row1);

  /* errors: the argument list must fit the kernel; a compile error names
     the source line; the dataset keeps what it had */
  rc = run(NULL, &err, "'%s' -o '%s' --source %s --grid-div-x block_size_x,tile_size_x --arg 1",
           cf, db1, KT_SRC);
  ASSERT_MSG("an --arg list that does not fit the kernel is a usage error", rc == 2 && err &&
             strstr(err, "takes 3 parameters"));
  free(err);
  char bad[2300];
  snprintf(bad, sizeof bad, "%s/bad.cu", dir);
  tests_write_file(bad, "__global__ void scale_add(float *o, const float *i, int n) {\n  o[0] = nope;\n}\n", 77);
  rc = run(NULL, &err, "'%s' -o '%s/b.db' --source '%s' --grid-div-x block_size_x,tile_size_x "
           "--arg buf:4 --arg buf:4 --arg 1", cf, dir, bad);
  ASSERT_MSG("a source that does not compile fails with its line", rc == 1 && err &&
             strstr(err, "bad.cu:2"));
  free(err);
}

/* Configurations that fail here: 32,1,0 (the first: compiled alone) and
   128,4,0 do not compile, 64,2,1 reads out of bounds.  The rest import; the
   failed ones are named and keep their times. */
static void test_failures(void) {
  if (!have_nvcc()) return;
  char dir[2048], cf[2200], db[2200], src[2200];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "ktfail"));
  snprintf(cf, sizeof cf, "%s/scale_A100.json", dir);
  snprintf(db, sizeof db, "%s/f.db", dir);
  snprintf(src, sizeof src, "%s/scale_add.cu", dir);
  CU_ASSERT_EQUAL_FATAL(write_cachefile(cf, "NVIDIA A100-PCIE-40GB", 0), 0);
  static const char text[] =
      "#if (block_size_x == 32 && tile_size_x == 1 && use_bias == 0) || \\\n"
      "    (block_size_x == 128 && tile_size_x == 4 && use_bias == 0)\n"
      "#error this configuration does not build\n"
      "#endif\n"
      "__global__ void scale_add(float *out, const float *in, int n) {\n"
      "  int i = blockIdx.x * block_size_x * tile_size_x + threadIdx.x;\n"
      "  if (block_size_x == 64 && tile_size_x == 2 && use_bias == 1) out[i + 4 * n] = 1;\n"
      "  if (i < n) out[i] = in[i];\n"
      "}\n";
  tests_write_file(src, text, sizeof text - 1);
  char *out = NULL, *err = NULL;
  int rc = run(&out, &err, "'%s' -o '%s' --source '%s' --grid-div-x block_size_x,tile_size_x "
               "--arg buf:400k --arg buf:400k --arg 100000 -j 2", cf, db, src);
  ASSERT_MSG("an import with failing configurations completes", rc == 0);
  ASSERT_MSG("20 computed, 3 failed, one group compiled one by one", out &&
             strstr(out, "20 computed, 0 kept, 3 failed") && strstr(out, "1 group compiled one by one"));
  ASSERT_MSG("the failures are summarized: how many, then per kind of message one line with "
             "its count and keys", err &&
             strstr(err, "3 configurations' features failed") &&
             strstr(err, "2 x ") && strstr(err, "does not build") &&
             strstr(err, "(32,1,0 128,4,0)") && strstr(err, "1 x ") && strstr(err, "(64,2,1)"));
  ASSERT_MSG("... not one line per configuration", err && !strstr(err, "features failed:"));
  if (rc || !out || !strstr(out, "3 failed")) printf("\n  %s\n  %s", out ? out : "", err ? err : "");
  free(out); free(err);
  int64_t n = 0, f = 0, m = 0;
  CU_ASSERT_EQUAL(count_rows(db, &n, &f, &m), 0);
  ASSERT_MSG("every configuration keeps its times", n == 23 && m == 69);
  /* a rerun computes only the failed ones again (and they fail again) */
  rc = run(&out, NULL, "'%s' -o '%s' --source '%s' --grid-div-x block_size_x,tile_size_x "
           "--arg buf:400k --arg buf:400k --arg 100000 -j 2", cf, db, src);
  ASSERT_MSG("a rerun resumes: only the three without features are tried (all fail: exit 1)",
             rc == 1 && out &&
             strstr(out, "0 computed, 20 kept, 3 failed"));
  free(out);
}

static void test_real_cachefile(void) {
  FILE *f = fopen(KT_REAL, "rb");
  if (!f) { printf("\n  [skip: %s not there] ", KT_REAL); return; }
  fclose(f);
  char dir[2048], db[2200], err[1200];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "ktreal"));
  snprintf(db, sizeof db, "%s/a100.db", dir);
  ds_kt_file k;
  ASSERT_MSG("the real A100 convolution cachefile reads", ds_kt_read(KT_REAL, &k, err, sizeof err) == 0);
  size_t failed = 0;
  for (size_t i = 0; i < k.nconfigs; i++) failed += k.configs[i].failed != NULL;
  ASSERT_MSG("4,362 entries, 161 failed, 32 runs each", k.nconfigs == 4362 && failed == 161 &&
             k.configs[0].ntimes == 32 && k.nparams == 10);
  ds_kt_free(&k);
  char *out = NULL;
  int rc = run(&out, NULL, "'%s' -o '%s' --grid-div-x block_size_x,tile_size_x "
               "--grid-div-y block_size_y,tile_size_y", KT_REAL, db);
  ASSERT_MSG("its times import", rc == 0 && out && strstr(out, "4201 configurations") &&
             strstr(out, "134432 time_ns"));
  free(out);
  ds_db *d;
  CU_ASSERT_EQUAL_FATAL(ds_open(db, DS_READONLY, &d, err, sizeof err), 0);
  ds_iter *it;
  ds_launch l;
  int64_t id;
  CU_ASSERT_EQUAL_FATAL(ds_iter_launches(d, "convolution_kernel", "16,1,1,1,0,0,0,1,15,15", &it), 0);
  ASSERT_MSG("grid of 16x1 threads, 1x1 tiles over 4096^2: 256 x 4096",
             ds_iter_next(it, &id, &l) == 1 && l.grid[0] == 256 && l.grid[1] == 4096 &&
             l.block[0] == 16 && l.block[1] == 1);
  ds_iter_free(it);
  ds_close(d);
}


/* ------------------------------------------------------- Nsight imports -- */

/* A dataset as kcast run leaves it for program "app" run with "-n 2":
   saxpy (4096x256), then reduce<float> (128x128) at lseq 0 and 1. */
static int make_run_db(const char *path) {
  char err[512];
  ds_db *d;
  if (ds_open(path, DS_CREATE, &d, err, sizeof err)) return -1;
  feat_vec v;
  feat_init(&v);
  feat_set(&v, "op.add.s32", 7);
  ds_launch l = {0};
  l.app = "app";
  l.dataset = "-n 2";
  l.kernel = "_Z5saxpyifPKfPf";
  l.grid[0] = 4096; l.grid[1] = l.grid[2] = 1;
  l.block[0] = 256; l.block[1] = l.block[2] = 1;
  l.source = "kcast run";
  int rc = ds_insert_launch(d, &l, &v, NULL);
  l.lseq = 1;
  l.kernel = "_Z6reduceIfEvPKfPfi";
  l.grid[0] = 128;
  l.block[0] = 128;
  rc |= ds_insert_launch(d, &l, &v, NULL);
  feat_free(&v);
  ds_close(d);
  return rc;
}

static const char NSYS_CSV[] =
    "Generating SQLite file app.sqlite from app.nsys-rep\n"
    "Start (%s),Duration (%s),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),"
    "DymSMem (MB),Bytes (MB),Throughput (MBps),SrcMemKd,DstMemKd,Device,Ctx,GreenCtx,Strm,Name\n"
    "1000,2.5,118,,,,,,,,,,4.194,1677.722,Pageable,Device,NVIDIA H200 (0),1,,7,"
    "[CUDA memcpy Host-to-Device]\n"
    "5000,12.25,121,4096,1,1,256,1,1,16,0.000,0.000,,,,,NVIDIA H200 (0),1,,7,"
    "\"saxpy(int, float, const float *, float *)\"\n"
    "4000,1.5,125,128,1,1,%d,1,1,32,0.000,0.000,,,,,NVIDIA H200 (0),1,,8,"
    "\"void reduce<float>(const float *, float *, int)\"\n";

static int64_t stat_count(const char *db, int what) {
  int64_t n = 0, f = 0, m = 0;
  if (count_rows(db, &n, &f, &m)) return -1;
  return what == 0 ? n : what == 1 ? f : m;
}

static double median_of(const char *db, const char *gpu, const char *dataset, int64_t lseq) {
  char err[512];
  ds_db *d;
  double v = NAN;
  int64_t id = 0;
  if (ds_open(db, DS_READONLY, &d, err, sizeof err)) return NAN;
  ds_target t;
  if (ds_find_launch(d, "app", dataset, lseq, &id) == 1 &&
      ds_query_target(d, gpu, "time_ns", DS_AGG_MEDIAN, &t) == 0) {
    for (size_t i = 0; i < t.n; i++)
      if (t.launch_id[i] == id) v = t.value[i];
    ds_target_free(&t);
  }
  ds_close(d);
  return v;
}

static void test_nsys(void) {
  char dir[2048], db[2200], csv[2200], text[4096];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "nsys"));
  snprintf(db, sizeof db, "%s/run.db", dir);
  snprintf(csv, sizeof csv, "%s/trace.csv", dir);
  CU_ASSERT_EQUAL_FATAL(make_run_db(db), 0);
  int n = snprintf(text, sizeof text, NSYS_CSV, "us", "us", 128);
  tests_write_file(csv, text, (size_t)n);
  char *out = NULL, *err = NULL;
  int rc = tests_run_fmt(&out, &err, "dataset import-nsys '%s' -o '%s' -- ./app -n 2", csv, db);
  ASSERT_MSG("nsys cuda_gpu_trace CSV imports onto the kcast run", rc == 0 && out &&
             strstr(out, "2 launches") && strstr(out, "H200") && !strstr(out, "created"));
  free(out); free(err);
  ASSERT_MSG("joined by launch order (CorrId), demangled names matched, us -> ns",
             median_of(db, "H200", "-n 2", 0) == 12250 && median_of(db, "H200", "-n 2", 1) == 1500);
  ASSERT_MSG("no launch added, features kept", stat_count(db, 0) == 2 && stat_count(db, 1) == 2);

  /* a geometry that disagrees: named by launch, nothing written */
  n = snprintf(text, sizeof text, NSYS_CSV, "ns", "ns", 64);
  tests_write_file(csv, text, (size_t)n);
  int64_t before = stat_count(db, 2);
  rc = tests_run_fmt(NULL, &err, "dataset import-nsys '%s' -o '%s' --app app --dataset '-n 2' "
                     "--rep-offset 1", csv, db);
  ASSERT_MSG("a launch whose block differs is refused", rc == 1 && err &&
             strstr(err, "launch (app, '-n 2', 1)") && strstr(err, "block 128,1,1"));
  free(err);
  ASSERT_MSG("... and nothing is written", stat_count(db, 2) == before);

  /* another program's trace: the kernel names disagree */
  n = snprintf(text, sizeof text, NSYS_CSV, "ns", "ns", 128);
  char *sw = strstr(text, "\"saxpy(");
  memcpy(sw + 1, "daxpy", 5);
  tests_write_file(csv, text, (size_t)n);
  rc = tests_run_fmt(NULL, &err, "dataset import-nsys '%s' -o '%s' --app app --dataset '-n 2'",
                     csv, db);
  ASSERT_MSG("a kernel that is not the stored one is refused", rc == 1 && err &&
             strstr(err, "daxpy") && strstr(err, "launch sequences disagree"));
  free(err);

  /* bad input: one line with the line number */
  tests_write_file(csv, "Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Name\n"
                        "1,2,3,4,1,1,x,1,1,k\n", 86);
  rc = tests_run_fmt(NULL, &err, "dataset import-nsys '%s' -o '%s' --app app --gpu H200", csv, db);
  ASSERT_MSG("a bad block dimension is named with its line", rc == 1 && err &&
             strstr(err, "trace.csv:2:") && strstr(err, "BlkX"));
  free(err);
  ASSERT_MSG("no program and no --app is a usage error",
             tests_run_fmt(NULL, NULL, "dataset import-nsys '%s' -o '%s'", csv, db) == 2);
}

static void test_nsys_sqlite(void) {
  char dir[2048], db[2200], ex[2200], err[512];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "nsyssql"));
  snprintf(db, sizeof db, "%s/run.db", dir);
  snprintf(ex, sizeof ex, "%s/app.sqlite", dir);
  CU_ASSERT_EQUAL_FATAL(make_run_db(db), 0);
  /* the tables of an nsys SQLite export that the reader uses */
  char cmd[5000];
  snprintf(cmd, sizeof cmd, "sqlite3 '%s' \"CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT);"
           "INSERT INTO StringIds VALUES(1,'saxpy(int, float, const float *, float *)'),"
           "(2,'_Z5saxpyifPKfPf'),(3,'void reduce<float>(const float *, float *, int)'),"
           "(4,'_Z6reduceIfEvPKfPfi');"
           "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER, end INTEGER, deviceId INTEGER,"
           " streamId INTEGER, correlationId INTEGER, gridX INTEGER, gridY INTEGER, gridZ INTEGER,"
           " blockX INTEGER, blockY INTEGER, blockZ INTEGER, dynamicSharedMemory INTEGER,"
           " demangledName INTEGER, shortName INTEGER, mangledName INTEGER);"
           "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES(900,1900,0,8,30,128,1,1,128,1,1,0,3,3,4),"
           "(100,600,0,7,20,4096,1,1,256,1,1,0,1,1,2);"
           "CREATE TABLE TARGET_INFO_GPU(id INTEGER, name TEXT);"
           "INSERT INTO TARGET_INFO_GPU VALUES(0,'NVIDIA A100-PCIE-40GB');\"", ex);
  CU_ASSERT_EQUAL_FATAL(tests_run(cmd, NULL, NULL), 0);
  char *out = NULL;
  int rc = tests_run_fmt(&out, NULL, "dataset import-nsys '%s' -o '%s' -- app -n 2", ex, db);
  ASSERT_MSG("an nsys SQLite export imports", rc == 0 && out && strstr(out, "A100-PCIE-40GB"));
  free(out);
  ASSERT_MSG("end - start per launch, in correlation order",
             median_of(db, "A100-PCIE-40GB", "-n 2", 0) == 500 &&
             median_of(db, "A100-PCIE-40GB", "-n 2", 1) == 1000);
  ds_db *d;
  ds_gpu g;
  CU_ASSERT_EQUAL_FATAL(ds_open(db, DS_READONLY, &d, err, sizeof err), 0);
  ASSERT_MSG("the gpus row has the GPU table's figures", ds_get_gpu(d, "A100-PCIE-40GB", &g) == 1 &&
             g.sm_count == 108);
  ds_close(d);
}

static void test_ncu(void) {
  char dir[2048], db[2200], csv[2200];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "ncu"));
  snprintf(db, sizeof db, "%s/run.db", dir);
  snprintf(csv, sizeof csv, "%s/raw.csv", dir);
  CU_ASSERT_EQUAL_FATAL(make_run_db(db), 0);
  static const char raw[] =
      "==PROF== Connected to process 4242 (app)\n"
      "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\","
      "\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"device__attribute_display_name\","
      "\"gpu__time_duration.sum\",\"sm__cycles_elapsed.avg\"\n"
      "\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"usecond\",\"cycle\"\n"
      "\"0\",\"4242\",\"app\",\"host\",\"saxpy(int, float, const float *, float *)\",\"1\",\"7\","
      "\"(256, 1, 1)\",\"(4096, 1, 1)\",\"0\",\"9.0\",\"NVIDIA H200\",\"1,024.50\",\"12,000\"\n"
      "\"1\",\"4242\",\"app\",\"host\",\"_Z6reduceIfEvPKfPfi\",\"1\",\"7\","
      "\"(128, 1, 1)\",\"(128, 1, 1)\",\"0\",\"9.0\",\"NVIDIA H200\",\"3.25\",\"900\"\n";
  tests_write_file(csv, raw, sizeof raw - 1);
  char *out = NULL, *err = NULL;
  int rc = tests_run_fmt(&out, &err, "dataset import-ncu '%s' -o '%s' -- app -n 2", csv, db);
  ASSERT_MSG("ncu --csv --page raw imports onto the kcast run", rc == 0 && out && strstr(out, "H200"));
  if (rc) printf("\n  %s", err ? err : "");
  free(out); free(err);
  ASSERT_MSG("gpu__time_duration.sum in its unit (usecond, thousands separators) -> ns",
             median_of(db, "H200", "-n 2", 0) == 1024500 && median_of(db, "H200", "-n 2", 1) == 3250);
  /* without the duration metric: say which option adds it */
  static const char nodur[] = "\"ID\",\"Kernel Name\",\"Block Size\",\"Grid Size\"\n"
                              "\"0\",\"k\",\"(1, 1, 1)\",\"(1, 1, 1)\"\n";
  tests_write_file(csv, nodur, sizeof nodur - 1);
  rc = tests_run_fmt(NULL, &err, "dataset import-ncu '%s' -o '%s' --app app --gpu H200", csv, db);
  ASSERT_MSG("a report without gpu__time_duration.sum is refused, naming it", rc == 1 && err &&
             strstr(err, "gpu__time_duration.sum"));
  free(err);
}

/* kcast run of a suite program, then an nsys trace of the same launches
   (mangled names, as `cuda_gpu_trace:mangled` prints them): joined onto
   the run's launches, features kept. */
static void test_nsys_after_run(void) {
  char bin[2300], dir[2048], db[2200], csv[2200], cmd[8000];
  snprintf(bin, sizeof bin, "%s/suite/reduce_shuffle", tests_build());
  FILE *f = fopen(bin, "rb");
  if (!f) { printf("\n  [skip: %s not built] ", bin); return; }
  fclose(f);
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "nsysrun"));
  snprintf(db, sizeof db, "%s/run.db", dir);
  snprintf(csv, sizeof csv, "%s/trace.csv", dir);
  snprintf(cmd, sizeof cmd, "'%s' run -o '%s' --timeout 300 -- '%s' 4096 64 > /dev/null", tests_kcast(),
           db, bin);
  CU_ASSERT_EQUAL_FATAL(tests_run(cmd, NULL, NULL), 0);
  /* the trace: one row per launch of the run, in order */
  snprintf(cmd, sizeof cmd, "{ echo 'Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,"
           "Device,Name'; '%s' dataset export '%s' | awk -F, 'NR > 1 {printf \"%%d,%%d,%%d,%%s,%%s,%%s,"
           "%%s,%%s,%%s,NVIDIA H200 (0),%%s\\n\", 100 * NR, 1000 + NR, NR, $7, $8, $9, $10, $11, "
           "$12, $6}'; } > '%s'", tests_kcast(), db, csv);
  CU_ASSERT_EQUAL_FATAL(tests_run(cmd, NULL, NULL), 0);
  int64_t launches = stat_count(db, 0), feats = stat_count(db, 1);
  char *out = NULL;
  int rc = tests_run_fmt(&out, NULL, "dataset import-nsys '%s' -o '%s' -- '%s' 4096 64", csv, db, bin);
  ASSERT_MSG("the trace of a kcast run's program joins onto its launches", rc == 0 && out &&
             !strstr(out, "created"));
  free(out);
  ASSERT_MSG("every launch timed, none added, features kept", stat_count(db, 0) == launches &&
             stat_count(db, 1) == feats && stat_count(db, 2) == launches);
}

TEST_SUITES(register_import) {
  CU_pSuite s = tests_suite("import");
  TEST_ADD(s, test_reader);
  TEST_ADD(s, test_times_only);
  TEST_ADD(s, test_features);
  TEST_ADD(s, test_failures);
  TEST_ADD(s, test_real_cachefile);
  TEST_ADD(s, test_nsys);
  TEST_ADD(s, test_nsys_sqlite);
  TEST_ADD(s, test_ncu);
  TEST_ADD(s, test_nsys_after_run);
}
