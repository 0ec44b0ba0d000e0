/*
 * test_derived.c -- derived feature columns (model/derived.c): GPU
 * Mangrove's twelve (mg.*) and the analytic estimate (an.*), selected with
 * `kcast train|cv --features`, and recomputed by libkcast at prediction
 * time from a raw feature set.
 *
 * The point of the prediction tests: a model trained on derived columns
 * must give the same answer whether the scheduler hands over the raw counts
 * (libkcast derives the columns) or the derived values themselves, and
 * `kcast predict --features CSV` must answer a CSV of raw rows as libkcast
 * answers the same rows.
 */
#include <cjson/cJSON.h>
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

/* ---------------------------------------- kcast predict --features CSV -- */

#define CSV_RAW 8 /* write_csv's feature columns; y follows */
#define CSV_ROWS 40

/* write_csv's rows back: v[i][0..CSV_RAW) of each data row; the names are
   rn of test_train_and_predict.  0 when all CSV_ROWS rows were read. */
static int read_rows(const char *path, double v[CSV_ROWS][CSV_RAW]) {
  char *txt = tests_read_file(path, NULL);
  if (!txt) return -1;
  char *p = strchr(txt, '\n');
  int i = 0;
  for (; p && i < CSV_ROWS; i++) {
    p++;
    for (int j = 0; j < CSV_RAW; j++) {
      char *e;
      v[i][j] = strtod(p, &e);
      if (e == p || *e != ',') break;
      p = e + 1;
    }
    p = strchr(p, '\n');
  }
  free(txt);
  return i == CSV_ROWS ? 0 : -1;
}

/* Predictions of `kcast predict --format json` into pr/lo/hi; the number of
   rows read, -1 when the command failed. */
static int cli_predict(const char *model, const char *csv, double *pr, double *lo, double *hi) {
  char cmd[2048], *out = NULL, *err = NULL;
  snprintf(cmd, sizeof cmd, "%s predict --model %s --features %s --format json", tests_kcast(),
           model, csv);
  int rc = tests_run(cmd, &out, &err);
  if (rc) fprintf(stderr, "%s", err ? err : "");
  cJSON *root = rc == 0 && out ? cJSON_Parse(out) : NULL;
  cJSON *arr = cJSON_GetObjectItem(root, "predictions");
  int n = rc == 0 && cJSON_IsArray(arr) ? cJSON_GetArraySize(arr) : -1;
  for (int i = 0; i < n && i < CSV_ROWS; i++) {
    cJSON *r = cJSON_GetArrayItem(arr, i);
    pr[i] = cJSON_GetNumberValue(cJSON_GetObjectItem(r, "prediction"));
    lo[i] = cJSON_GetNumberValue(cJSON_GetObjectItem(r, "lo"));
    hi[i] = cJSON_GetNumberValue(cJSON_GetObjectItem(r, "hi"));
  }
  cJSON_Delete(root);
  free(out);
  free(err);
  return n;
}

/* Equal to 1e-12 relative: cJSON prints 15 significant digits when they
   read back within a rounding error, so its numbers are not bit exact. */
static int close12(double a, double b) {
  return fabs(a - b) <= 1e-12 * fmax(fabs(a), fabs(b));
}

static const char *const csv_names[CSV_RAW] = {
    "launch.block_x", "launch.block_y", "launch.block_z", "launch.ctas",
    "op.ld.global.v4.f32", "op.add.s32", "class.fp32", "class.int_arith"};

/* Write the rows v as a CSV of columns csv_names[skip excluded] (skip < 0:
   all), plus the extra columns xn[0..nx) with values xv[i][..] per row. */
static int write_rows(const char *path, double v[CSV_ROWS][CSV_RAW], int skip,
                      const char *const *xn, size_t nx, double xv[CSV_ROWS][MD_MANGROVE_N + MD_ANALYTIC_N]) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  fputs("kernel", f); /* a text column the model does not use */
  for (int j = 0; j < CSV_RAW; j++)
    if (j != skip) fprintf(f, ",%s", csv_names[j]);
  for (size_t k = 0; k < nx; k++) fprintf(f, ",%s", xn[k]);
  fputc('\n', f);
  for (int i = 0; i < CSV_ROWS; i++) {
    fprintf(f, "k%d", i);
    for (int j = 0; j < CSV_RAW; j++)
      if (j != skip) fprintf(f, ",%.17g", v[i][j]);
    for (size_t k = 0; k < nx; k++) fprintf(f, ",%.17g", xv[i][k]);
    fputc('\n', f);
  }
  return fclose(f);
}

static void test_cli_csv_predict(void) {
  char dir[512], csv[640], model[640], model2[640], path[700], cmd[2048];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "derived-csv"));
  snprintf(csv, sizeof csv, "%s/d.csv", dir);
  snprintf(model, sizeof model, "%s/m.kcm", dir);
  snprintf(model2, sizeof model2, "%s/m2.kcm", dir);
  CU_ASSERT_EQUAL_FATAL(write_csv(csv), 0);
  snprintf(cmd, sizeof cmd, "%s train --csv %s --target y --gpu T4 --trees 20 "
           "--features launch,mangrove,analytic -o %s", tests_kcast(), csv, model);
  CU_ASSERT_EQUAL_FATAL(tests_run(cmd, NULL, NULL), 0);
  snprintf(cmd, sizeof cmd, "%s train --csv %s --target y --gpu T4 --trees 20 "
           "--features mangrove,analytic -o %s", tests_kcast(), csv, model2);
  CU_ASSERT_EQUAL_FATAL(tests_run(cmd, NULL, NULL), 0);
  static double v[CSV_ROWS][CSV_RAW], xv[CSV_ROWS][MD_MANGROVE_N + MD_ANALYTIC_N];
  CU_ASSERT_EQUAL_FATAL(read_rows(csv, v), 0);

  /* the raw rows: the CLI derives mg.* and an.* as libkcast does */
  kcast_model *m = NULL;
  CU_ASSERT_EQUAL_FATAL(kcast_model_load(model, &m), KCAST_OK);
  static double pr[CSV_ROWS], lo[CSV_ROWS], hi[CSV_ROWS], api[CSV_ROWS];
  char expect[CSV_ROWS * 96 + 32] = "prediction,lo,hi,unit\n";
  snprintf(path, sizeof path, "%s/raw.csv", dir);
  CU_ASSERT_EQUAL_FATAL(write_rows(path, v, -1, NULL, 0, NULL), 0);
  int n = cli_predict(model, path, pr, lo, hi);
  CHECK_MSG("kcast predict --features answers a raw CSV for a model with mg.*/an.* columns",
            n == CSV_ROWS);
  int same = n == CSV_ROWS;
  for (int i = 0; i < CSV_ROWS && same; i++) {
    kcast_features *fs = features_of(csv_names, v[i], CSV_RAW);
    kcast_prediction a;
    same = fs && kcast_predict(m, fs, 0.9, &a) == KCAST_OK && close12(a.value, pr[i]) &&
           close12(a.lo, lo[i]) && close12(a.hi, hi[i]);
    api[i] = same ? a.value : 0;
    if (same) {
      size_t l = strlen(expect);
      snprintf(expect + l, sizeof expect - l, "%.9g,%.9g,%.9g,unit of y\n", a.value, a.lo, a.hi);
    }
    kcast_features_free(fs);
  }
  CHECK_MSG("every row's prediction and interval equal kcast_predict's on the same raw "
            "features (to 1e-12, the JSON output's precision)", same);
  char *out = NULL, *err = NULL;
  snprintf(cmd, sizeof cmd, "%s predict --model %s --features %s", tests_kcast(), model, path);
  CHECK_MSG("...and the default csv output is kcast_predict's answers as printed, byte for byte",
            same && tests_run(cmd, &out, &err) == 0 && out && !strcmp(out, expect));
  free(out);
  free(err);

  /* the derived values given explicitly, equal to the derived ones */
  const char *xn[MD_MANGROVE_N + 2];
  for (size_t k = 0; k < MD_MANGROVE_N; k++) xn[k] = md_mangrove_names[k];
  xn[MD_MANGROVE_N] = md_analytic_names[0];
  xn[MD_MANGROVE_N + 1] = md_analytic_names[1];
  for (int i = 0; i < CSV_ROWS; i++) {
    CU_ASSERT_EQUAL_FATAL(md_mangrove(csv_names, v[i], CSV_RAW, xv[i]), 0);
    CU_ASSERT_EQUAL_FATAL(md_analytic("T4", csv_names, v[i], CSV_RAW, xv[i] + MD_MANGROVE_N), 0);
  }
  snprintf(path, sizeof path, "%s/given.csv", dir);
  CU_ASSERT_EQUAL_FATAL(write_rows(path, v, -1, xn, MD_MANGROVE_N + 2, xv), 0);
  static double pg[CSV_ROWS], lg[CSV_ROWS], hg[CSV_ROWS];
  n = cli_predict(model, path, pg, lg, hg);
  same = n == CSV_ROWS;
  for (int i = 0; i < CSV_ROWS && same; i++) same = pg[i] == pr[i] && lg[i] == lo[i] && hg[i] == hi[i];
  CHECK_MSG("given mg.*/an.* columns equal to the derived values predict as the raw CSV", same);

  /* two given columns perturbed, the rest derived: the given values win */
  const char *px[2] = {"mg.global_bytes", "an.time_us"};
  for (int i = 0; i < CSV_ROWS; i++) {
    xv[i][0] = xv[i][mg_index("mg.global_bytes")] * 1000;
    xv[i][1] = xv[i][MD_MANGROVE_N] * 1000;
  }
  snprintf(path, sizeof path, "%s/perturbed.csv", dir);
  CU_ASSERT_EQUAL_FATAL(write_rows(path, v, -1, px, 2, xv), 0);
  n = cli_predict(model, path, pg, lg, hg);
  CHECK_MSG("a CSV giving some derived columns predicts", n == CSV_ROWS);
  int differ = 0;
  same = n == CSV_ROWS;
  for (int i = 0; i < CSV_ROWS && same; i++) {
    kcast_features *fs = features_of(csv_names, v[i], CSV_RAW);
    kcast_prediction a;
    same = fs && !kcast_features_set(fs, px[0], xv[i][0]) &&
           !kcast_features_set(fs, px[1], xv[i][1]) && kcast_predict(m, fs, 0.9, &a) == KCAST_OK &&
           close12(a.value, pg[i]);
    differ += !close12(pg[i], api[i]);
    kcast_features_free(fs);
  }
  CHECK_MSG("given mg.global_bytes and an.time_us are used as given, as libkcast uses them", same);
  CHECK_MSG("...and the perturbed values change some prediction", differ > 0);
  kcast_model_free(m);

  /* no launch.ctas: mg.* and an.* cannot be derived */
  snprintf(path, sizeof path, "%s/noctas.csv", dir);
  CU_ASSERT_EQUAL_FATAL(write_rows(path, v, 3, NULL, 0, NULL), 0);
  snprintf(cmd, sizeof cmd, "%s predict --model %s --features %s", tests_kcast(), model2, path);
  int rc = tests_run(cmd, &out, &err);
  const char *nl = err ? strchr(err, '\n') : NULL;
  CHECK_MSG("a CSV lacking a raw column a derived one needs: exit 1, nothing on stdout",
            rc == 1 && out && !*out);
  CHECK_MSG("...and one error line naming the file, the missing column and the derived column",
            err && nl && !nl[1] && strstr(err, path) && strstr(err, "launch.ctas") &&
                strstr(err, "mg."));
  free(out);
  free(err);

  /* a row whose block is 0: the analytic estimate refuses it, by line */
  v[2][0] = 0;
  snprintf(path, sizeof path, "%s/zero.csv", dir);
  CU_ASSERT_EQUAL_FATAL(write_rows(path, v, -1, NULL, 0, NULL), 0);
  snprintf(cmd, sizeof cmd, "%s predict --model %s --features %s", tests_kcast(), model, path);
  rc = tests_run(cmd, &out, &err);
  snprintf(cmd, sizeof cmd, "%s:4:", path);
  CHECK_MSG("a row the derivation refuses: exit 1, nothing on stdout, one line naming "
            "file:line and an.time_us",
            rc == 1 && out && !*out && err && strstr(err, cmd) && strstr(err, "an.time_us") &&
                strchr(err, '\n') == err + strlen(err) - 1);
  free(out);
  free(err);
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
  CHECK_MSG("a family no column has: exit 1 and a line that lists the known ones",
            rc == 1 && err && strstr(err, "bogus") && strstr(err, "mangrove") &&
                strstr(err, "analytic"));
  free(err);
  snprintf(cmd, sizeof cmd, "%s cv --csv %s --target y --features mangrove --folds 4 --format json",
           tests_kcast(), csv);
  char *out = NULL;
  rc = tests_run(cmd, &out, NULL);
  CHECK_MSG("mangrove alone still cross-validates", rc == 0 && out && strstr(out, "\"median_ape\""));
  free(out);
}

/* ---------------------------------------------- work, occ and gpu -- */

static void test_work_values(void) {
  static const char *const n[] = {
      "launch.block_x", "launch.block_y", "launch.ctas", "launch.shared_bytes", "static.shared_bytes",
      "op.ld.global.nc.f32", "op.ld.global.f32", "op.fma.rn.f32", "ctrl.warp_insns",
      "mem.global_sectors", "mem.global_accesses", "mem.global_bytes", "mem.footprint_bytes",
      "mem.shared_accesses", "mem.shared_bank_replays", "class.ld_global", "class.fp32",
      "class.ld_shared", "class.ld_const", "ctrl.branches", "ctrl.divergent_branches"};
  /* 10 CTAs of 64 x 2 threads: 1280 threads, 40 warps */
  double v[] = {64, 2, 10, 1024, 3072, 300, 100, 1600, 200, 800, 400, 12800, 6400, 50, 25, 400,
                1600, 640, 128, 100, 10};
  double w[MD_WORK_N];
  CU_ASSERT_EQUAL_FATAL(md_work(n, v, sizeof n / sizeof *n, w), 0);
  CHECK_MSG("threads and warps per CTA", w[0] == 128 && w[1] == 4);
  CHECK_MSG("shared bytes per CTA are dynamic + static", w[2] == 4096);
  CHECK_MSG("thread instructions per thread from the op.* counts", fabs(w[3] - 2000.0 / 1280) < 1e-12);
  CHECK_MSG("warp instructions per warp and per CTA", w[4] == 5 && w[5] == 20);
  CHECK_MSG("sectors per request and bytes per sector", w[6] == 2 && w[7] == 0.5);
  CHECK_MSG("replays per shared access", w[8] == 0.5);
  CHECK_MSG("the read-only share of global loads (ld.global.nc)", w[9] == 0.75);
  CHECK_MSG("reuse: sector bytes over the footprint", w[10] == 4);
  CHECK_MSG("flops per DRAM byte", fabs(w[11] - 1600.0 / 25600) < 1e-12);
  CHECK_MSG("shares of the instruction mix and divergence",
            fabs(w[12] - 0.32) < 1e-12 && fabs(w[13] - 0.2) < 1e-12 && fabs(w[14] - 0.064) < 1e-12 &&
                w[15] == 0.1);
  CHECK_MSG("a launch without block or CTAs is refused by name",
            md_work(n + 2, v + 2, 3, w) == -1 && strstr(rf_last_error(), "launch.block_x"));
}

/* Residency on A100 (cc 8.0: 2048 threads, 32 CTAs, 64K registers, 164 KB
   shared with 1 KB reserved per CTA) and the choice of ptxas column. */
static void test_occupancy(void) {
  const an_gpu *a100 = an_gpu_find("A100"), *a4000 = an_gpu_find("A4000"), *l4 = an_gpu_find("L4");
  an_occupancy o;
  const char *n1[] = {"launch.block_x", "launch.ctas"};
  double v1[] = {256, 1000};
  CU_ASSERT_EQUAL_FATAL(an_occupancy_of(a100, n1, v1, 2, &o), 0);
  CHECK_MSG("256 threads, no registers known: 8 CTAs by threads", o.ctas_per_sm == 8 &&
                                                                    o.limiter == AN_LIMIT_THREADS &&
                                                                    o.occupancy == 1 && o.regs == 0);
  CHECK_MSG("waves and the last wave's idle share", fabs(o.waves - 1000.0 / 864) < 1e-12 &&
                                                      fabs(o.tail - (2 - 1000.0 / 864)) < 1e-12);
  const char *n2[] = {"launch.block_x", "launch.ctas", "ptxas.sm_80.registers", "ptxas.sm_86.registers"};
  double v2[] = {256, 1000, 128, 64};
  CU_ASSERT_EQUAL_FATAL(an_occupancy_of(a100, n2, v2, 4, &o), 0);
  CHECK_MSG("128 registers x 256 threads: 2 CTAs by registers on sm_80",
            o.regs == 128 && o.ctas_per_sm == 2 && o.limiter == AN_LIMIT_REGS);
  CU_ASSERT_EQUAL_FATAL(an_occupancy_of(a4000, n2, v2, 4, &o), 0);
  CHECK_MSG("the A4000 (sm_86) reads its own column: 64 registers, 4 CTAs", o.regs == 64 && o.ctas_per_sm == 4);
  CU_ASSERT_EQUAL_FATAL(an_occupancy_of(l4, n2, v2, 4, &o), 0);
  CHECK_MSG("the L4 (sm_89) takes the newest older one of its major version (sm_86)", o.regs == 64);
  const char *n3[] = {"launch.block_x", "launch.ctas", "ptxas.sm_90.registers"};
  double v3[] = {256, 1000, 32};
  CU_ASSERT_EQUAL_FATAL(an_occupancy_of(a100, n3, v3, 3, &o), 0);
  CHECK_MSG("only a newer architecture's column: it is used", o.regs == 32);
  const char *n4[] = {"launch.block_x", "launch.ctas", "static.shared_bytes"};
  double v4[] = {64, 1000, 40 * 1024};
  CU_ASSERT_EQUAL_FATAL(an_occupancy_of(a100, n4, v4, 3, &o), 0);
  CHECK_MSG("40 KB + 1 KB reserved: 4 CTAs by shared memory", o.ctas_per_sm == 4 &&
                                                               o.limiter == AN_LIMIT_SHARED && o.fits);
  v4[2] = 200 * 1024;
  CU_ASSERT_EQUAL_FATAL(an_occupancy_of(a100, n4, v4, 3, &o), 0);
  CHECK_MSG("more shared memory than a CTA may have: does not fit, counted as 1",
            !o.fits && o.ctas_per_sm == 1);
  double v5[] = {1024, 1000, 255};
  CU_ASSERT_EQUAL_FATAL(an_occupancy_of(a100, n2, v5, 3, &o), 0);
  CHECK_MSG("255 registers x 1024 threads exceed the register file: does not fit", !o.fits);
  double g[MD_GPU_N];
  CU_ASSERT_EQUAL_FATAL(md_gpu("NVIDIA RTX A4000", g), 0);
  CHECK_MSG("the GPU family is the table's row", g[0] == 8.6 && g[1] == 48 && g[5] == 448);
  CHECK_MSG("an unknown GPU is refused by name", md_gpu("Z9", g) == -1 && strstr(rf_last_error(), "Z9"));
  md_cache c;
  memset(&c, 0, sizeof c);
  double x;
  CHECK_MSG("md_value computes occ.* on the GPU it is given",
            md_value(&c, "occ.ctas_per_sm", "A100", n2, v2, 4, &x) == 1 && x == 2);
  CHECK_MSG("every family's names are derived columns",
            md_family_of("work.reuse") == MD_FAM_WORK && md_family_of("gpu.sms") == MD_FAM_GPU &&
                md_family_of("an.issue_us") == MD_FAM_ANALYTIC && md_family_of("occ.nope") == -1 &&
                md_family_of("launch.ctas") == -1);
}

TEST_SUITES(register_derived) {
  CU_pSuite s = tests_suite("derived");
  TEST_ADD(s, test_mangrove_values);
  TEST_ADD(s, test_work_values);
  TEST_ADD(s, test_occupancy);
  TEST_ADD(s, test_analytic_values);
  TEST_ADD(s, test_train_and_predict);
  TEST_ADD(s, test_cli_errors);
  TEST_ADD(s, test_cli_csv_predict);
}
