/*
 * test_derived.c -- derived feature columns (model/derived.c): GPU
 * Mangrove's twelve (mg.*) and the analytic estimate (an.*), selected with
 * `kcast train|cv --features`, and recomputed by libkcast at prediction
 * time from a raw feature set.
 *
 * The point of the last test: a model trained on derived columns must give
 * the same answer whether the scheduler hands over the raw counts (libkcast
 * derives the columns) or the derived values themselves.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kcast.h"
#include "model/model.h"
#include "tests.h"

#define CHECK_MSG(msg, cond) \
  CU_assertImplementation(!!(cond), __LINE__, (msg), __FILE__, "", CU_FALSE)

static const char *const raw_names[] = {
    "launch.block_x", "launch.block_y", "launch.block_z", "launch.ctas", "op.ld.global.v4.f32",
    "op.st.shared.u32", "op.ld.param.u64", "op.add.s32", "class.fp32", "class.int_arith",
    "class.special", "class.sync"};
#define NRAW (sizeof raw_names / sizeof raw_names[0])

static size_t mg_index(const char *name) {
  for (size_t k = 0; k < MD_MANGROVE_N; k++)
    if (!strcmp(md_mangrove_names[k], name)) return k;
  return MD_MANGROVE_N;
}

static void test_mangrove_values(void) {
  const double v[NRAW] = {16, 8, 2, 40, 10, 6, 3, 7, 100, 20, 5, 1};
  double out[MD_MANGROVE_N];
  CU_ASSERT_EQUAL_FATAL(md_mangrove(raw_names, v, NRAW, out), 0);
  CHECK_MSG("threads per CTA is the block's product", out[mg_index("mg.threads_per_cta")] == 256);
  CHECK_MSG("CTAs are launch.ctas", out[mg_index("mg.ctas")] == 40);
  CHECK_MSG("instructions sum every op.* count", out[mg_index("mg.instructions")] == 10 + 6 + 3 + 7);
  CHECK_MSG("a v4.f32 global load moves 16 bytes per thread",
            out[mg_index("mg.global_bytes")] == 160);
  CHECK_MSG("a u32 shared store moves 4 bytes", out[mg_index("mg.shared_bytes")] == 24);
  CHECK_MSG("a u64 param load moves 8 bytes", out[mg_index("mg.param_bytes")] == 24);
  CHECK_MSG("arithmetic sums the fp and integer classes", out[mg_index("mg.arith")] == 120);
  CHECK_MSG("special and sync come from their classes",
            out[mg_index("mg.special")] == 5 && out[mg_index("mg.sync")] == 1);
  CHECK_MSG("arithmetic intensity is arith per global byte",
            fabs(out[mg_index("mg.arith_intensity")] - 120.0 / 160) < 1e-15);
  CHECK_MSG("without launch.ctas the columns are refused",
            md_mangrove(raw_names + 4, v + 4, NRAW - 4, out) == -1 &&
                strstr(rf_last_error(), "launch.ctas") != NULL);
}

static void test_analytic_values(void) {
  const double v[NRAW] = {256, 1, 1, 4096, 1, 0, 0, 2, 2, 3, 0, 0};
  double out[MD_ANALYTIC_N];
  an_estimate e;
  CU_ASSERT_EQUAL_FATAL(md_analytic("T4", raw_names, v, NRAW, out), 0);
  CU_ASSERT_EQUAL_FATAL(an_estimate_launch(an_gpu_find("T4"), raw_names, v, NRAW, &e), 0);
  CHECK_MSG("an.time_us is the estimate's time on that GPU", out[0] == e.time_us);
  CHECK_MSG("an.power_w is the estimate's power on that GPU", out[1] == e.power_w);
  CHECK_MSG("an unknown GPU is refused by name",
            md_analytic("NOPE", raw_names, v, NRAW, out) == -1 &&
                strstr(rf_last_error(), "NOPE") != NULL);
}

/* A CSV of 40 launches whose time grows with the global traffic. */
static int write_csv(const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  fprintf(f, "launch.block_x,launch.block_y,launch.block_z,launch.ctas,op.ld.global.v4.f32,"
             "op.add.s32,class.fp32,class.int_arith,y\n");
  for (int i = 0; i < 40; i++) {
    double ctas = 8 << (i % 6), loads = 1000.0 * (1 + i % 7) * ctas;
    fprintf(f, "%d,1,1,%.0f,%.0f,%d,%.0f,%d,%.6g\n", 64 << (i % 3), ctas, loads, 100 + i,
            2 * loads, 50 + i, 3 + loads * 0.002 + (i % 3));
  }
  return fclose(f);
}

static kcast_features *features_of(const char *const *names, const double *vals, size_t n) {
  kcast_features *fs = NULL;
  if (kcast_features_new(&fs)) return NULL;
  for (size_t i = 0; i < n; i++)
    if (kcast_features_set(fs, names[i], vals[i])) {
      kcast_features_free(fs);
      return NULL;
    }
  return fs;
}

static void test_train_and_predict(void) {
  char dir[512], csv[640], model[640], cmd[2048];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "derived"));
  snprintf(csv, sizeof csv, "%s/d.csv", dir);
  snprintf(model, sizeof model, "%s/m.kcm", dir);
  CU_ASSERT_EQUAL_FATAL(write_csv(csv), 0);
  char *out = NULL, *err = NULL;
  snprintf(cmd, sizeof cmd, "%s train --csv %s --target y --gpu T4 --trees 20 "
           "--features launch,mangrove,analytic -o %s", tests_kcast(), csv, model);
  int rc = tests_run(cmd, &out, &err);
  CHECK_MSG("kcast train --features launch,mangrove,analytic succeeds", rc == 0);
  if (rc) fprintf(stderr, "%s", err ? err : "");
  free(out);
  free(err);
  snprintf(cmd, sizeof cmd, "%s model importance %s", tests_kcast(), model);
  rc = tests_run(cmd, &out, &err);
  CHECK_MSG("the model reads the derived and launch columns, not the raw counts",
            rc == 0 && out && strstr(out, "mg.global_bytes") && strstr(out, "an.time_us") &&
                strstr(out, "launch.ctas") && !strstr(out, "class.fp32"));
  free(out);
  free(err);

  kcast_model *m = NULL;
  CU_ASSERT_EQUAL_FATAL(kcast_model_load(model, &m), KCAST_OK);
  const char *const rn[] = {"launch.block_x", "launch.block_y", "launch.block_z", "launch.ctas",
                            "op.ld.global.v4.f32", "op.add.s32", "class.fp32", "class.int_arith"};
  const double rv[] = {128, 1, 1, 64, 3e5, 120, 6e5, 70};
  kcast_features *raw = features_of(rn, rv, 8);
  CU_ASSERT_PTR_NOT_NULL_FATAL(raw);
  /* the same launch with the derived values given explicitly */
  double mg[MD_MANGROVE_N], an[MD_ANALYTIC_N];
  CU_ASSERT_EQUAL_FATAL(md_mangrove(rn, rv, 8, mg), 0);
  CU_ASSERT_EQUAL_FATAL(md_analytic("T4", rn, rv, 8, an), 0);
  kcast_features *given = features_of(rn, rv, 8);
  CU_ASSERT_PTR_NOT_NULL_FATAL(given);
  for (size_t k = 0; k < MD_MANGROVE_N; k++) kcast_features_set(given, md_mangrove_names[k], mg[k]);
  for (size_t k = 0; k < MD_ANALYTIC_N; k++) kcast_features_set(given, md_analytic_names[k], an[k]);
  kcast_prediction a, b;
  CU_ASSERT_EQUAL(kcast_predict(m, raw, 0.9, &a), KCAST_OK);
  CU_ASSERT_EQUAL(kcast_predict(m, given, 0.9, &b), KCAST_OK);
  CHECK_MSG("libkcast derives mg.* and an.* from the raw counts exactly as given values",
            a.value == b.value && a.lo == b.lo && a.hi == b.hi && a.value > 0);
  /* a perturbed derived value changes nothing when the raw set is used... */
  kcast_features_set(given, "mg.global_bytes", mg[mg_index("mg.global_bytes")] * 1000);
  kcast_features_set(given, "an.time_us", an[0] * 1000);
  CU_ASSERT_EQUAL(kcast_predict(m, given, 0.9, &b), KCAST_OK);
  CHECK_MSG("...while values given explicitly take precedence over derivation", b.value != a.value);
  /* no launch.ctas: the derived columns cannot be computed */
  kcast_features *bad = features_of(rn + 4, rv + 4, 4);
  CU_ASSERT_PTR_NOT_NULL_FATAL(bad);
  CU_ASSERT_EQUAL(kcast_predict(m, bad, 0.9, &b), KCAST_E_FEATURE);
  CHECK_MSG("the error names the derived feature that could not be computed",
            strstr(kcast_last_error(), "launch.") != NULL);
  kcast_features_free(raw);
  kcast_features_free(given);
  kcast_features_free(bad);
  kcast_model_free(m);
}

static void test_cli_errors(void) {
  char dir[512], csv[640], cmd[2048];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "derived-err"));
  snprintf(csv, sizeof csv, "%s/d.csv", dir);
  CU_ASSERT_EQUAL_FATAL(write_csv(csv), 0);
  char *err = NULL;
  snprintf(cmd, sizeof cmd, "%s cv --csv %s --target y --features analytic", tests_kcast(), csv);
  int rc = tests_run(cmd, NULL, &err);
  CHECK_MSG("analytic columns without --gpu: exit 1 and a line naming --gpu",
            rc == 1 && err && strstr(err, "--gpu") && strstr(err, csv));
  free(err);
  snprintf(cmd, sizeof cmd, "%s cv --csv %s --target y --features launch,bogus", tests_kcast(), csv);
  rc = tests_run(cmd, NULL, &err);
  CHECK_MSG("an unknown family is a usage error (exit 2) that lists the valid ones",
            rc == 2 && err && strstr(err, "mangrove") && strstr(err, "analytic"));
  free(err);
  snprintf(cmd, sizeof cmd, "%s cv --csv %s --target y --features mangrove --folds 4 --format json",
           tests_kcast(), csv);
  char *out = NULL;
  rc = tests_run(cmd, &out, NULL);
  CHECK_MSG("mangrove alone still cross-validates", rc == 0 && out && strstr(out, "\"median_ape\""));
  free(out);
}

TEST_SUITES(register_derived) {
  CU_pSuite s = tests_suite("derived");
  TEST_ADD(s, test_mangrove_values);
  TEST_ADD(s, test_analytic_values);
  TEST_ADD(s, test_train_and_predict);
  TEST_ADD(s, test_cli_errors);
}
