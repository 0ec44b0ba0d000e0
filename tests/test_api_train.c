/*
 * test_api_train.c -- the C API's entry points of version 0.2: training
 * from a matrix gives the forest `kcast train --csv` gives, and kcast cv's
 * folds reproduce its out-of-fold predictions exactly; matrix predictions
 * equal kcast_predict's bit for bit; a dataset read as a table holds the
 * export's values; the GPU table; Kernel Tuner spaces computed, predicted
 * and written as cachefiles the reader reads back.  Misuse is a status and
 * a message, never a crash.
 */
#include "tests.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/ds.h"
#include "include/kcast.h"

#define ASSERT_MSG(what, cond) CU_assertImplementation((cond), __LINE__, (what), __FILE__, "", CU_FALSE)
#define N 240
#define P 4

static const char *const names[P] = {"a", "b", "c", "d"};

/* Row i of the synthetic table, and its target. */
static void row_of(size_t i, double *r, double *y) {
  r[0] = 1 + (double)((i * 37) % 97);
  r[1] = (double)((i * 11) % 7);
  r[2] = 0.5 * (double)((i * 7919) % 1000);
  r[3] = (double)(i % 3);
  *y = 10 + 3 * r[0] + r[1] * r[1] + 0.01 * r[2] + 5 * r[3];
}

static void matrix(double *x, double *y) {
  for (size_t i = 0; i < N; i++) row_of(i, x + i * P, &y[i]);
}

/* The same rows as a CSV (round-trip digits). */
static int write_csv(const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  fputs("a,b,c,d,y\n", f);
  for (size_t i = 0; i < N; i++) {
    double r[P], y;
    row_of(i, r, &y);
    fprintf(f, "%.17g,%.17g,%.17g,%.17g,%.17g\n", r[0], r[1], r[2], r[3], y);
  }
  return fclose(f);
}

static void test_train_equals_kcast_train(void) {
  char dir[2048], csv[2200], cli[2200], api[2200], cmd[8000];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "apitrain"));
  snprintf(csv, sizeof csv, "%s/t.csv", dir);
  snprintf(cli, sizeof cli, "%s/cli.kcm", dir);
  snprintf(api, sizeof api, "%s/api.kcm", dir);
  CU_ASSERT_EQUAL_FATAL(write_csv(csv), 0);
  snprintf(cmd, sizeof cmd, "'%s' train --csv '%s' --target y --trees 12 -o '%s'", tests_kcast(),
           csv, cli);
  CU_ASSERT_EQUAL_FATAL(tests_run(cmd, NULL, NULL), 0);
  double x[N * P], y[N];
  matrix(x, y);
  kcast_train_params p = KCAST_TRAIN_PARAMS_INIT;
  p.n_trees = 12;
  p.target = "y";
  kcast_model *m = NULL, *c = NULL, *back = NULL;
  ASSERT_MSG("kcast_model_train trains on a row-major matrix",
             kcast_model_train(x, N, P, P, names, y, &p, &m) == KCAST_OK && m);
  ASSERT_MSG("... and kcast_model_save writes it", kcast_model_save(m, api) == KCAST_OK);
  CU_ASSERT_EQUAL_FATAL(kcast_model_load(cli, &c), KCAST_OK);
  CU_ASSERT_EQUAL_FATAL(kcast_model_load(api, &back), KCAST_OK);
  ASSERT_MSG("the model's facts", kcast_model_ntrees(m) == 12 && kcast_model_nrows(m) == N &&
             !strcmp(kcast_model_target_name(m), "y") && kcast_model_nfeatures(m) == P &&
             fabs(kcast_model_importance(m, 0) + kcast_model_importance(m, 1) +
                  kcast_model_importance(m, 2) + kcast_model_importance(m, 3) - 1) < 1e-9 &&
             isnan(kcast_model_importance(m, P)));
  int same = 1;
  kcast_features *fs = NULL;
  kcast_features_new(&fs);
  for (size_t i = 0; i < N && same; i += 7) {
    for (size_t j = 0; j < P; j++) kcast_features_set(fs, names[j], x[i * P + j]);
    kcast_prediction a, b, d;
    same = !kcast_predict(m, fs, 0.9, &a) && !kcast_predict(c, fs, 0.9, &b) &&
           !kcast_predict(back, fs, 0.9, &d) && a.value == b.value && a.lo == b.lo &&
           a.hi == b.hi && d.value == a.value && d.hi == a.hi;
  }
  ASSERT_MSG("the same forest as kcast train --csv (predictions equal bit for bit), saved and "
             "loaded back alike", same);
  kcast_features_free(fs);
  kcast_model_free(c);
  kcast_model_free(back);

  /* kcast cv's folds: training on the other folds reproduces its
     out-of-fold predictions exactly */
  char oof[2200];
  snprintf(oof, sizeof oof, "%s/oof.csv", dir);
  snprintf(cmd, sizeof cmd, "'%s' cv --csv '%s' --target y --trees 8 --folds 4 --seed 3 "
           "--predictions '%s' > /dev/null", tests_kcast(), csv, oof);
  CU_ASSERT_EQUAL_FATAL(tests_run(cmd, NULL, NULL), 0);
  uint32_t fold[N];
  ASSERT_MSG("kcast_cv_folds", kcast_cv_folds(N, 4, 3, fold) == KCAST_OK);
  double pred[N];
  int ok = 1;
  for (unsigned k = 0; k < 4 && ok; k++) {
    double xt[N * P], yt[N];
    size_t nt = 0;
    for (size_t i = 0; i < N; i++)
      if (fold[i] != k) {
        memcpy(xt + nt * P, x + i * P, P * sizeof *x);
        yt[nt++] = y[i];
      }
    kcast_train_params q = KCAST_TRAIN_PARAMS_INIT;
    q.n_trees = 8;
    q.seed = 3;
    kcast_model *f = NULL;
    ok = kcast_model_train(xt, nt, P, P, names, yt, &q, &f) == KCAST_OK;
    for (size_t i = 0; ok && i < N; i++)
      if (fold[i] == k)
        ok = kcast_predict_matrix(f, NULL, x + i * P, 1, P, P, names, 0.9, &pred[i], NULL, NULL,
                                  1) == KCAST_OK;
    kcast_model_free(f);
  }
  size_t len = 0;
  char *text = tests_read_file(oof, &len), *line = text ? strchr(text, '\n') : NULL;
  double worst = 0;
  for (size_t i = 0; ok && line && i < N; i++) {
    double row, meas, pr;
    if (sscanf(line + 1, "%lf,%lf,%lf", &row, &meas, &pr) != 3) { ok = 0; break; }
    worst = fmax(worst, fabs(pr - pred[i]) / fabs(pr));
    line = strchr(line + 1, '\n');
  }
  free(text);
  ASSERT_MSG("training on each fold's other rows gives kcast cv's out-of-fold predictions",
             ok && worst == 0);
  kcast_model_free(m);
}

static void test_predict_matrix_equals_predict(void) {
  double x[N * P], y[N];
  matrix(x, y);
  kcast_train_params p = KCAST_TRAIN_PARAMS_INIT;
  p.n_trees = 10;
  kcast_model *m = NULL;
  CU_ASSERT_EQUAL_FATAL(kcast_model_train(x, N, P, P, names, y, &p, &m), KCAST_OK);
  /* another column order, an extra column, a row stride */
  static const char *const shuffled[P + 1] = {"d", "extra", "b", "a", "c"};
  const size_t stride = P + 3;
  double *xs = calloc(N * stride, sizeof *xs);
  for (size_t i = 0; i < N; i++) {
    double *r = xs + i * stride;
    r[0] = x[i * P + 3]; r[1] = 42; r[2] = x[i * P + 1]; r[3] = x[i * P]; r[4] = x[i * P + 2];
  }
  double pr[N], lo[N], hi[N], pr2[N], lo2[N], hi2[N];
  ASSERT_MSG("kcast_predict_matrix on 2 threads",
             kcast_predict_matrix(m, NULL, xs, N, P + 1, stride, shuffled, 0.8, pr, lo, hi, 2) == 0);
  ASSERT_MSG("... and on 1", kcast_predict_matrix(m, NULL, xs, N, P + 1, stride, shuffled, 0.8,
                                                  pr2, lo2, hi2, 1) == 0);
  int same = 1;
  kcast_features *fs = NULL;
  kcast_features_new(&fs);
  for (size_t i = 0; i < N && same; i++) {
    for (size_t j = 0; j < P; j++) kcast_features_set(fs, names[j], x[i * P + j]);
    kcast_prediction a;
    same = !kcast_predict(m, fs, 0.8, &a) && a.value == pr[i] && a.lo == lo[i] && a.hi == hi[i] &&
           pr2[i] == pr[i] && lo2[i] == lo[i] && hi2[i] == hi[i];
  }
  kcast_features_free(fs);
  ASSERT_MSG("its answers are kcast_predict's, bit for bit, whatever the threads and column "
             "order", same);
  xs[5 * stride + 2] = NAN;
  ASSERT_MSG("a NaN in a column the model reads is KCAST_E_FEATURE naming the row",
             kcast_predict_matrix(m, NULL, xs, N, P + 1, stride, shuffled, 0.8, pr, NULL, NULL, 0) ==
                 KCAST_E_FEATURE && strstr(kcast_last_error(), "row 5") &&
             strstr(kcast_last_error(), "feature b"));
  ASSERT_MSG("a NaN elsewhere is ignored",
             (xs[5 * stride + 2] = x[5 * P + 1], xs[7 * stride + 1] = NAN,
              kcast_predict_matrix(m, NULL, xs, N, P + 1, stride, shuffled, 0.8, pr, NULL, NULL, 0) == 0));
  ASSERT_MSG("a feature no column holds (not a count) is named",
             kcast_predict_matrix(m, NULL, x, N, 3, P, names, 0.9, pr, NULL, NULL, 0) ==
                 KCAST_E_FEATURE && strstr(kcast_last_error(), "feature d"));
  ASSERT_MSG("misuse: a stride below the columns, lo without hi, a bad coverage",
             kcast_predict_matrix(m, NULL, x, N, P, P - 1, names, 0.9, pr, NULL, NULL, 0) == KCAST_E_ARG &&
             kcast_predict_matrix(m, NULL, x, N, P, P, names, 0.9, pr, lo, NULL, 0) == KCAST_E_ARG &&
             kcast_predict_matrix(m, NULL, x, N, P, P, names, 1.5, pr, NULL, NULL, 0) == KCAST_E_ARG &&
             kcast_predict_matrix(NULL, NULL, x, N, P, P, names, 0.9, pr, NULL, NULL, 0) == KCAST_E_ARG);
  free(xs);
  /* training misuse */
  kcast_model *bad = NULL;
  kcast_train_params q = KCAST_TRAIN_PARAMS_INIT;
  x[3] = INFINITY;
  ASSERT_MSG("a value that is not finite is refused, naming row and column",
             kcast_model_train(x, N, P, P, names, y, &q, &bad) == KCAST_E_FEATURE &&
             strstr(kcast_last_error(), "row 0, column d") && !bad);
  x[3] = 0;
  static const char *const dup[P] = {"a", "b", "a", "d"};
  ASSERT_MSG("duplicate column names are refused",
             kcast_model_train(x, N, P, P, dup, y, &q, &bad) == KCAST_E_ARG);
  q.n_trees = 0;
  ASSERT_MSG("zero trees are refused", kcast_model_train(x, N, P, P, names, y, &q, &bad) == KCAST_E_ARG);
  q = (kcast_train_params)KCAST_TRAIN_PARAMS_INIT;
  q.base = "zz";
  ASSERT_MSG("a base that is no column is refused",
             kcast_model_train(x, N, P, P, names, y, &q, &bad) == KCAST_E_ARG);
  q.base = NULL;
  q.size = 8;
  ASSERT_MSG("a params struct of another size is refused",
             kcast_model_train(x, N, P, P, names, y, &q, &bad) == KCAST_E_ARG);
  ASSERT_MSG("kcast_cv_folds refuses k > n",
             kcast_cv_folds(3, 4, 1, (uint32_t[4]){0}) == KCAST_E_ARG);
  kcast_model_free(m);
}

static void test_dataset_table_and_gpus(void) {
  const char *db = "datasets/data/suite-features.db";
  kcast_table *t = NULL;
  ASSERT_MSG("kcast_dataset_read reads the shipped dataset", kcast_dataset_read(db, &t) == KCAST_OK);
  char cmd[4096], *out = NULL;
  snprintf(cmd, sizeof cmd, "'%s' dataset export %s | head -1 | tr ',' '\\n' | wc -l",
           tests_kcast(), db);
  CU_ASSERT_EQUAL_FATAL(tests_run(cmd, &out, NULL), 0);
  long ncols_export = out ? atol(out) : 0;
  free(out);
  /* the export adds bench, grid, block, shmem (8) and the demangled name */
  ASSERT_MSG("its columns are the export's keys, features and measurements",
             (long)kcast_table_ncols(t) == ncols_export - 9 && kcast_table_nrows(t) > 100 &&
             !strcmp(kcast_table_colname(t, 0), "id") && !strcmp(kcast_table_colname(t, 4), "kernel"));
  ASSERT_MSG("text and number columns", kcast_table_text(t, 1, 0) && !kcast_table_numbers(t, 1) &&
             kcast_table_numbers(t, 0) && !kcast_table_text(t, 0, 0) &&
             !kcast_table_colname(t, 100000));
  long ctas = -1;
  for (size_t j = 0; j < kcast_table_ncols(t); j++)
    if (!strcmp(kcast_table_colname(t, j), "launch.ctas")) ctas = (long)j;
  kcast_features *fs = NULL;
  ASSERT_MSG("a launch's features match kcast_features_from_launch", ctas >= 0 &&
             kcast_features_from_launch(db, (int64_t)kcast_table_numbers(t, 0)[3], &fs) == 0);
  double v = -1;
  kcast_features_get(fs, "launch.ctas", &v);
  ASSERT_MSG("... (launch.ctas)", ctas >= 0 && v == kcast_table_numbers(t, (size_t)ctas)[3]);
  kcast_features_free(fs);
  kcast_table_free(t);
  ASSERT_MSG("a missing dataset is KCAST_E_IO", kcast_dataset_read("no/such.db", &t) == KCAST_E_IO && !t);
  kcast_gpu_desc d;
  d.size = sizeof d;
  int all = 1;
  for (size_t i = 0; i < kcast_gpu_count(); i++)
    all = all && !kcast_gpu_info(i, &d) && !strcmp(d.name, kcast_gpu_name(i)) && d.sms > 0;
  ASSERT_MSG("kcast_gpu_info describes every GPU of the table", all && kcast_gpu_count() > 5);
  ASSERT_MSG("... and refuses an index past it and a short struct",
             kcast_gpu_info(kcast_gpu_count(), &d) == KCAST_E_NOTFOUND &&
             (d.size = 4, kcast_gpu_info(0, &d)) == KCAST_E_ARG);
}

static void test_tunespace(void) {
  if (tests_run("command -v nvcc >/dev/null 2>&1", NULL, NULL)) {
    printf("\n  [skip: nvcc not on PATH] ");
    return;
  }
  static const char *const pn[3] = {"block_size_x", "tile_size_x", "use_bias"};
  static const char *const vals[] = {"32", "1", "0", "64", "2", "1", "128", "4", "0",
                                     "2048", "1", "0" /* a block no GPU launches */};
  static const char *const args[] = {"buf:400k", "buf:400k:randf", "100000"};
  static const char *const consts[] = {"scale=randf:3"};
  kcast_tunespace_spec s;
  memset(&s, 0, sizeof s);
  s.size = sizeof s;
  s.source = "tests/tuning/scale_add.cu";
  s.kernel = "scale_add";
  s.problem_size[0] = 100000;
  s.problem_size_scalar = 1;
  s.grid_div[0] = "block_size_x,tile_size_x";
  s.nparams = 3;
  s.param_names = pn;
  s.nconfigs = 4;
  s.values = vals;
  s.args = args;
  s.nargs = 3;
  s.consts = consts;
  s.nconsts = 1;
  s.jobs = 2;
  kcast_tunespace *ts = NULL;
  ASSERT_MSG("kcast_tunespace_compute computes a space", kcast_tunespace_compute(&s, &ts) == KCAST_OK);
  if (!ts) { printf("\n  %s", kcast_last_error()); return; }
  unsigned g[3], b[3];
  ASSERT_MSG("four configurations, keyed as Kernel Tuner keys them",
             kcast_tunespace_count(ts) == 4 && !strcmp(kcast_tunespace_key(ts, 1), "64,2,1"));
  ASSERT_MSG("Kernel Tuner's geometry", kcast_tunespace_geometry(ts, 1, g, b) == 0 &&
             g[0] == 782 && b[0] == 64);
  const kcast_features *f1 = kcast_tunespace_features(ts, 1);
  double ctas = 0, tb = 0;
  ASSERT_MSG("features with the tuning parameters", f1 &&
             !kcast_features_get(f1, "launch.ctas", &ctas) && ctas == 782 &&
             !kcast_features_get(f1, "tune.tile_size_x", &tb) && tb == 2);
  ASSERT_MSG("a configuration no GPU launches fails alone, saying why",
             !kcast_tunespace_features(ts, 3) && kcast_tunespace_error(ts, 3) &&
             strstr(kcast_tunespace_error(ts, 3), "1024"));
  double t[4];
  for (size_t i = 0; i < 4; i++) {
    kcast_prediction p;
    t[i] = kcast_tunespace_features(ts, i) &&
                   !kcast_predict_analytic("A100", kcast_tunespace_features(ts, i), &p, NULL)
               ? p.value : NAN;
  }
  char dir[2048], path[2200], err[1200];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "apits"));
  snprintf(path, sizeof path, "%s/space.json", dir);
  ASSERT_MSG("kcast_tunespace_write", kcast_tunespace_write(ts, path, "NVIDIA A100-PCIE-40GB", t) == 0);
  ds_kt_file kf;
  ASSERT_MSG("the cachefile reads back (ds_kt_read)", ds_kt_read(path, &kf, err, sizeof err) == 0);
  ASSERT_MSG("... with its configurations, times in ms and the failed one marked",
             kf.nconfigs == 4 && kf.nparams == 3 && !strcmp(kf.kernel_name, "scale_add") &&
             kf.ndims == 1 && kf.problem_size[0] == 100000 &&
             fabs(kf.configs[1].times_ms[0] - t[1] / 1e6) <= 1e-12 * t[1] &&
             kf.configs[3].failed && !strcmp(kf.configs[3].failed, "RuntimeFailedConfig"));
  ds_kt_free(&kf);
  kcast_tunespace_free(ts);
  /* what reaches the compiler is checked first */
  static const char *const evil[] = {"32", "1", "0\n#include \"/etc/passwd\""};
  s.nconfigs = 1;
  s.values = evil;
  ASSERT_MSG("a value that would be another preprocessor line is refused",
             kcast_tunespace_compute(&s, &ts) == KCAST_E_ARG && !ts &&
             strstr(kcast_last_error(), "use_bias"));
  s.values = vals;
  s.kernel = "scale_add; rm";
  ASSERT_MSG("a kernel name that is not an identifier is refused",
             kcast_tunespace_compute(&s, &ts) == KCAST_E_ARG);
  s.kernel = "scale_add";
  s.nargs = 1;
  ASSERT_MSG("arguments that fit no configuration are KCAST_E_ARG",
             kcast_tunespace_compute(&s, &ts) == KCAST_E_ARG && strstr(kcast_last_error(), "takes 3"));
  ASSERT_MSG("a NULL spec", kcast_tunespace_compute(NULL, &ts) == KCAST_E_ARG);
}

TEST_SUITES(register_api_train) {
  CU_pSuite s = tests_suite("api_train");
  TEST_ADD(s, test_train_equals_kcast_train);
  TEST_ADD(s, test_predict_matrix_equals_predict);
  TEST_ADD(s, test_dataset_table_and_gpus);
  TEST_ADD(s, test_tunespace);
}
