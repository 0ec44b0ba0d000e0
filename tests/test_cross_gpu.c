/*
 * test_cross_gpu.c -- models of several GPUs, end to end: a dataset with
 * time measured on two GPUs of the table (T4, A100), whose times are the
 * analytic estimate of each launch on that GPU times a factor that depends
 * on the launch only.  A forest trained on both with kcast's defaults
 * learns the factor (its base is the estimate), so it predicts a third GPU
 * (H100) it never saw -- through `kcast predict --gpu`, kcast_predict_gpu
 * and leave-one-GPU-out CV -- which a forest without the base cannot.
 * Also: the rows and groups of a dataset loaded for several GPUs, a CSV's
 * GPU column, `cv --predictions` (content, and no partial file when it
 * cannot be written) and the errors of a model of several GPUs without
 * --gpu.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/ds.h"
#include "include/kcast.h"
#include "model/model.h"
#include "model/rf_int.h"
#include "tests.h"

#define CHECK_MSG(msg, cond) \
  CU_assertImplementation(!!(cond), __LINE__, (msg), __FILE__, "", CU_FALSE)

#define NL 80

static char dir[1024], db[1200], model[1200], csv[1200];

/* Launch i's features (names[], vals[], count in *n). */
static void launch_features(int i, const char **names, double *vals, size_t *n) {
  double ctas = 64 << (i % 6), bx = 32 << (i % 4), threads = ctas * bx;
  double fma = threads * (50 + 10 * (i % 9)), ld = threads * (4 + i % 5);
  size_t k = 0;
  names[k] = "launch.ctas", vals[k++] = ctas;
  names[k] = "launch.block_x", vals[k++] = bx;
  names[k] = "launch.block_y", vals[k++] = 1;
  names[k] = "launch.block_z", vals[k++] = 1;
  names[k] = "launch.threads", vals[k++] = threads;
  names[k] = "op.fma.rn.f32", vals[k++] = fma;
  names[k] = "op.ld.global.f32", vals[k++] = ld;
  names[k] = "class.fp32", vals[k++] = fma;
  names[k] = "class.ld_global", vals[k++] = ld;
  names[k] = "mem.global_bytes", vals[k++] = 4 * ld;
  names[k] = "mem.global_sectors", vals[k++] = ld / 8;
  names[k] = "mem.global_accesses", vals[k++] = ld / 32;
  names[k] = "ctrl.warp_insns", vals[k++] = (fma + ld) / 32 * 1.5;
  *n = k;
}

/* The measured time of launch i on GPU g: the estimate times a factor of
   the launch alone. */
static double time_ns(int i, const char *g) {
  const char *names[32];
  double vals[32];
  size_t n;
  launch_features(i, names, vals, &n);
  an_estimate e;
  if (an_estimate_launch(an_gpu_find(g), names, vals, n, &e)) return NAN;
  return e.time_us * 1e3 * (1.2 + 0.1 * (i % 9));
}

static int setup(void) {
  if (!tests_tmpdir(dir, sizeof dir, "crossgpu")) return -1;
  snprintf(db, sizeof db, "%s/two.db", dir);
  snprintf(model, sizeof model, "%s/two.kcm", dir);
  snprintf(csv, sizeof csv, "%s/two.csv", dir);
  char err[512];
  ds_db *d = NULL;
  if (ds_open(db, DS_CREATE, &d, err, sizeof err)) return -1;
  int rc = ds_begin(d);
  FILE *f = fopen(csv, "w");
  if (!f) rc = -1;
  for (int i = 0; i < NL && !rc; i++) {
    const char *names[32];
    double vals[32];
    size_t n;
    launch_features(i, names, vals, &n);
    feat_vec v;
    feat_init(&v);
    for (size_t k = 0; k < n; k++) feat_set(&v, names[k], vals[k]);
    char label[32];
    snprintf(label, sizeof label, "n%d", i);
    ds_launch l = {NULL, i % 2 ? "appA" : "appB", label, 0, "_Z1kPf",
                   {(unsigned)vals[0], 1, 1}, {(unsigned)vals[1], 1, 1}, 0, "test"};
    int64_t id = 0;
    rc = ds_insert_launch(d, &l, &v, &id);
    feat_free(&v);
    static const char *const gpus[2] = {"T4", "A100"};
    for (int g = 0; g < 2 && !rc; g++) {
      double t = time_ns(i, gpus[g]);
      rc = ds_insert_measurement(d, id, gpus[g], "time_ns", t, 0, "test");
      if (i == 0 && g == 0) {
        fprintf(f, "key,gpu");
        for (size_t k = 0; k < n; k++) fprintf(f, ",%s", names[k]);
        fprintf(f, ",time_ns\n");
      }
      fprintf(f, "\"n%d,%s\",%s", i, gpus[g], gpus[g]);
      for (size_t k = 0; k < n; k++) fprintf(f, ",%.17g", vals[k]);
      fprintf(f, ",%.17g\n", t);
    }
  }
  if (f && fclose(f)) rc = -1;
  rc = rc ? (ds_rollback(d), -1) : ds_commit(d);
  ds_close(d);
  return rc;
}

static int run(const char *args, char **out, char **err) {
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "'%s' %s", tests_kcast(), args);
  return tests_run(cmd, out, err);
}

/* Median APE of kcast_predict_gpu on GPU g over every launch. */
static double api_median_ape(const kcast_model *m, const char *g, int *status) {
  double ape[NL];
  *status = KCAST_OK;
  for (int i = 0; i < NL; i++) {
    const char *names[32];
    double vals[32];
    size_t n;
    launch_features(i, names, vals, &n);
    kcast_features *fs = NULL;
    kcast_features_new(&fs);
    for (size_t k = 0; k < n; k++) kcast_features_set(fs, names[k], vals[k]);
    kcast_prediction p;
    kcast_status st = kcast_predict_gpu(m, g, fs, 0.9, &p);
    kcast_features_free(fs);
    if (st) {
      *status = st;
      return NAN;
    }
    double y = time_ns(i, g);
    ape[i] = fabs(p.value - y) / y;
  }
  for (int a = 1; a < NL; a++) /* insertion sort: 80 values */
    for (int b = a; b > 0 && ape[b] < ape[b - 1]; b--) {
      double t = ape[b];
      ape[b] = ape[b - 1];
      ape[b - 1] = t;
    }
  return 100 * (ape[NL / 2 - 1] + ape[NL / 2]) / 2;
}

static void test_dataset_of_two_gpus(void) {
  CU_ASSERT_FATAL(setup() == 0);
  char args[4096], *out = NULL, *err = NULL;
  snprintf(args, sizeof args, "cv '%s' --gpu all --target time --group gpu --trees 40 --format json",
           db);
  int rc = run(args, &out, &err);
  CHECK_MSG("cv of a dataset on every GPU it measured, leaving one GPU out: exit 0",
            rc == 0 && out && strstr(out, "\"rows\":160") && strstr(out, "\"folds\":2"));
  CHECK_MSG("its groups are the GPUs", out && strstr(out, "\"T4\"") && strstr(out, "\"A100\""));
  cJSON *j = out ? cJSON_Parse(out) : NULL;
  double logo = j ? cJSON_GetObjectItem(j, "median_ape")->valuedouble : NAN;
  cJSON_Delete(j);
  CHECK_MSG("with the analytic base, an unseen GPU is predicted within 10 %", logo < 10);
  free(out);
  free(err);
  snprintf(args, sizeof args, "cv '%s' --gpu T4,A100 --target time --group gpu --trees 40 "
           "--base none --format json", db);
  rc = run(args, &out, NULL);
  j = rc == 0 && out ? cJSON_Parse(out) : NULL;
  double plain = j ? cJSON_GetObjectItem(j, "median_ape")->valuedouble : NAN;
  cJSON_Delete(j);
  CHECK_MSG("without it, far worse (at least 3x the error)", plain > 3 * logo);
  free(out);

  snprintf(args, sizeof args, "train '%s' --gpu T4,A100 --target time --trees 40 -o '%s'", db,
           model);
  rc = run(args, &out, &err);
  CHECK_MSG("train on two GPUs records both and calibrates for unseen ones",
            rc == 0 && out && strstr(out, "outside T4,A100"));
  free(out);
  free(err);
  kcast_model *m = NULL;
  CU_ASSERT_FATAL(kcast_model_load(model, &m) == KCAST_OK);
  CHECK_MSG("kcast_model_gpu lists the GPUs", !strcmp(kcast_model_gpu(m), "T4,A100"));
  int st;
  double h100 = api_median_ape(m, "H100", &st);
  CHECK_MSG("kcast_predict_gpu on H100, never seen: median APE under 10 %", st == KCAST_OK && h100 < 10);
  double own = api_median_ape(m, "NVIDIA A100-SXM4-40GB", &st);
  CHECK_MSG("on a GPU it saw, named as the driver names it: under 5 %", st == KCAST_OK && own < 5);
  kcast_features *fs = NULL;
  kcast_features_new(&fs);
  kcast_features_set(fs, "launch.ctas", 64);
  kcast_features_set(fs, "launch.block_x", 128);
  kcast_prediction p;
  CHECK_MSG("a model of several GPUs without a GPU: KCAST_E_ARG naming the GPUs",
            kcast_predict(m, fs, 0.9, &p) == KCAST_E_ARG && strstr(kcast_last_error(), "T4,A100"));
  CHECK_MSG("an unknown GPU: KCAST_E_NOTFOUND", kcast_predict_gpu(m, "Z9", fs, 0.9, &p) == KCAST_E_NOTFOUND);
  kcast_features_free(fs);
  kcast_model_free(m);

  /* the CLI on a CSV of the same launches: --gpu is needed, H100 gets a note */
  snprintf(args, sizeof args, "predict --model '%s' --features '%s'", model, csv);
  rc = run(args, &out, &err);
  CHECK_MSG("kcast predict of a model of several GPUs without --gpu: exit 1 naming them",
            rc == 1 && err && strstr(err, "give --gpu"));
  free(out);
  free(err);
  /* (no --measured: the rows' times were measured on T4 and A100, and
     comparing H100's predictions with them is an error) */
  snprintf(args, sizeof args, "predict --model '%s' --features '%s' --gpu H100", model, csv);
  rc = run(args, &out, &err);
  CHECK_MSG("with --gpu H100: exit 0, a note that it has not seen H100",
            rc == 0 && err && strstr(err, "not on H100") && strstr(err, "unseen GPUs"));
  free(out);
  free(err);
}

/* Feature set i of the batch tests: launch i % NL, its FMA count scaled
   by the round (i / NL) so that no two sets are alike. */
static kcast_features *batch_set(int i) {
  const char *names[32];
  double vals[32];
  size_t n;
  launch_features(i % NL, names, vals, &n);
  kcast_features *fs = NULL;
  if (kcast_features_new(&fs)) return NULL;
  for (size_t k = 0; k < n; k++)
    kcast_features_set(fs, names[k], vals[k] * (k == 5 ? 1 + 0.07 * (i / NL) : 1));
  return fs;
}

/* kcast_predict_batch_gpu of sets[0..n) on g against kcast_predict_gpu of
   each set, bit for bit (value, lo, hi, source). */
static int batch_is_singles(const kcast_model *m, const char *g, kcast_features *const *sets,
                            size_t n, kcast_prediction *out) {
  if (kcast_predict_batch_gpu(m, g, (const kcast_features *const *)sets, n, 0.9, out)) return 0;
  for (size_t i = 0; i < n; i++) {
    kcast_prediction p;
    if (kcast_predict_gpu(m, g, sets[i], 0.9, &p) ||
        memcmp(&p.value, &out[i].value, sizeof p.value) ||
        memcmp(&p.lo, &out[i].lo, sizeof p.lo) || memcmp(&p.hi, &out[i].hi, sizeof p.hi) ||
        p.source != out[i].source)
      return 0;
  }
  return 1;
}

/* The batch of a model of two GPUs (the model test_dataset_of_two_gpus
   trained: its base is an.time_us, and it has a calibration for GPUs it
   has not seen): on H100 (unseen) and A100 (seen), across the batch's
   block sizes, walked row by row and tree-major, each answer is
   kcast_predict_gpu's bit for bit -- the unseen table included; a bad
   base value fails at its index with kcast_predict_gpu's text, every set
   before it answered, and the lowest failing set wins. */
#define NB 300

static void test_batch_of_two_gpus(void) {
  /* the launches' times are exact, so both tables hardly widen: a copy of
     the model whose unseen table widens by 0.3 more shows which one an
     answer took */
  char wider[1300];
  snprintf(wider, sizeof wider, "%s/two-wider.kcm", dir);
  rf_forest *f = NULL;
  CU_ASSERT_FATAL(rf_load(model, &f) == 0);
  CHECK_MSG("the model has a table for unseen GPUs", f->cal_unseen.n > 0 && f->cal.n > 0);
  CHECK_MSG("its base is an.time_us",
            f->params.base_feature >= 0 &&
                !strcmp(f->features[f->params.base_feature], "an.time_us"));
  for (unsigned k = 0; k < f->cal_unseen.n; k++) f->cal_unseen.q[k] += 0.3;
  CU_ASSERT_FATAL(rf_save(f, wider) == 0);
  rf_free(f);
  kcast_model *m = NULL;
  CU_ASSERT_FATAL(kcast_model_load(wider, &m) == KCAST_OK);
  kcast_features *sets[NB];
  kcast_prediction out[NB], h100[NB];
  int built = 1;
  for (int i = 0; i < NB; i++) built &= (sets[i] = batch_set(i)) != NULL;
  CU_ASSERT_FATAL(built);
  static const size_t ns[] = {1, 63, 64, 65, 129, NB};
  int unseen = 1, seen = 1;
  /* the model is small: row by row, and tree-major through the test hook
     (which stays on for the rest of the test) */
  for (int tm = 0; tm < 2; tm++) {
    rf__rows_tree_major = tm;
    for (size_t t = 0; t < sizeof ns / sizeof ns[0]; t++) {
      unseen &= batch_is_singles(m, "H100", sets, ns[t], out);
      seen &= batch_is_singles(m, "A100", sets, ns[t], out);
    }
  }
  CHECK_MSG("H100, unseen: every batch size answers as kcast_predict_gpu, bit for bit", unseen);
  CHECK_MSG("A100, seen: the same", seen);
  const kcast_features *const *cs = (const kcast_features *const *)sets;
  CU_ASSERT(kcast_predict_batch_gpu(m, "H100", cs, NB, 0.9, h100) == KCAST_OK);
  int wide = 1;
  for (int i = 0; i < NB; i++)
    wide &= h100[i].hi / h100[i].lo > 1.3 * out[i].hi / out[i].lo; /* exp(0.6) = 1.82 */
  CHECK_MSG("H100's intervals take the unseen table (wider by the 0.3 added)", wide);

  /* a bad base value at 100: KCAST_E_ARG with kcast_predict_gpu's text */
  kcast_features_set(sets[100], "an.time_us", -1);
  kcast_prediction p;
  CU_ASSERT(kcast_predict_gpu(m, "H100", sets[100], 0.9, &p) == KCAST_E_ARG);
  char single[1024], want[1100];
  snprintf(single, sizeof single, "%s", kcast_last_error());
  const char *why = strstr(single, "feature an.time_us, the model's base, is -1");
  CU_ASSERT_FATAL(why != NULL);
  snprintf(want, sizeof want, "%.*sfeature set 100: %s", (int)(why - single), single, why);
  memset(out, 0, sizeof out);
  CU_ASSERT(kcast_predict_batch_gpu(m, "H100", cs, NB, 0.9, out) == KCAST_E_ARG);
  CHECK_MSG("a bad base value: the single call's text, naming the set",
            !strcmp(kcast_last_error(), want));
  if (strcmp(kcast_last_error(), want))
    fprintf(stderr, "test_cross_gpu: '%s', want '%s'\n", kcast_last_error(), want);
  int filled = 1;
  for (int i = 0; i < 100; i++)
    filled &= !memcmp(&out[i].value, &h100[i].value, sizeof out[i].value) &&
              !memcmp(&out[i].lo, &h100[i].lo, sizeof out[i].lo) &&
              !memcmp(&out[i].hi, &h100[i].hi, sizeof out[i].hi) && out[i].source == h100[i].source;
  CHECK_MSG("every set before it answered", filled);
  /* a missing feature above it loses, one below it wins */
  kcast_features *empty = NULL, *keep = sets[250];
  kcast_features_new(&empty);
  sets[250] = empty;
  int lowest = kcast_predict_batch_gpu(m, "H100", cs, NB, 0.9, out) == KCAST_E_ARG &&
               strstr(kcast_last_error(), "feature set 100: ");
  sets[250] = keep;
  keep = sets[40];
  sets[40] = empty;
  lowest &= kcast_predict_batch_gpu(m, "H100", cs, NB, 0.9, out) == KCAST_E_FEATURE &&
            strstr(kcast_last_error(), "feature set 40 lacks");
  sets[40] = keep;
  CHECK_MSG("the lowest failing set is reported, whatever fails there", lowest);
  rf__rows_tree_major = 0;
  kcast_features_free(empty);
  for (int i = 0; i < NB; i++) kcast_features_free(sets[i]);
  kcast_model_free(m);
}

static void test_csv_gpu_column_and_predictions(void) {
  char args[4096], pred[1300], *out = NULL, *err = NULL;
  snprintf(pred, sizeof pred, "%s/pred.csv", dir);
  snprintf(args, sizeof args, "cv --csv '%s' --target time_ns --group gpu --trees 30 "
           "--predictions '%s'", csv, pred);
  int rc = run(args, &out, &err);
  CHECK_MSG("a CSV's gpu column names each row's GPU; leave one GPU out: exit 0",
            rc == 0 && out && strstr(out, "relative to an.time_us"));
  CHECK_MSG("the text column is noted, not a feature", err && strstr(err, "not features: key"));
  free(out);
  free(err);
  size_t len = 0;
  char *p = tests_read_file(pred, &len);
  int lines = 0;
  for (size_t i = 0; p && i < len; i++) lines += p[i] == '\n';
  CHECK_MSG("--predictions: a header and one line per row", p && lines == 1 + 2 * NL);
  CHECK_MSG("with the key and GPU columns, measured, prediction and interval",
            p && !strncmp(p, "gpu,key,row,measured,predicted,lo,hi,ape_pct,work,settings\n", 59) &&
                strstr(p, "\nA100,\"n3,A100\",8,"));
  free(p);
  snprintf(args, sizeof args, "cv --csv '%s' --target time_ns --trees 10 --predictions '%s/no/such/p.csv'",
           csv, dir);
  rc = run(args, &out, &err);
  CHECK_MSG("an unwritable --predictions file: exit 1 naming it", rc == 1 && err && strstr(err, "no/such"));
  free(out);
  free(err);
  snprintf(args, sizeof args, "cv --csv '%s' --target time_ns --gpu-column key --trees 10", csv);
  rc = run(args, &out, &err);
  CHECK_MSG("a GPU column whose values are no GPU's: exit 1 naming the value",
            rc == 1 && err && strstr(err, "'n0,T4'"));
  free(out);
  free(err);
}

TEST_SUITES(register_cross_gpu) {
  CU_pSuite s = tests_suite("cross_gpu");
  TEST_ADD(s, test_dataset_of_two_gpus);
  TEST_ADD(s, test_batch_of_two_gpus);
  TEST_ADD(s, test_csv_gpu_column_and_predictions);
}
