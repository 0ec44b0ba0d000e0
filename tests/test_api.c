/*
 * test_api.c -- the public C API (include/kcast.h, api/): misuse gives codes
 * and messages, never a crash; predictions equal the forest's own; one model
 * shared by many threads answers exactly as one thread does, and so does the
 * OpenMP batch, whose errors reach the caller's thread; libkcast.so
 * exports kcast_* only; the header compiles as C++.
 *
 * Suite "api" (make tsan runs only this suite under ThreadSanitizer).
 */
#include "tests.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/ds.h"
#include "include/kcast.h"
#include "model/model.h"
#include "model/rf_int.h"

#define CHECK_MSG(msg, cond) \
  CU_assertImplementation(!!(cond), __LINE__, (msg), __FILE__, "", CU_FALSE)

#define NROWS 300
#define CHECK_MSG(msg, cond) \
  CU_assertImplementation(!!(cond), __LINE__, (msg), __FILE__, "", CU_FALSE)
static const char *const feat_names[3] = {"launch.ctas", "launch.threads", "op.fma.rn.f32"};

static char tmp[4096];
static char time_model[4200], power_model[4200], trunc_model[4200];
static rf_forest *ref_forest; /* the time model as trained, for rf_predict */

/* Feature values of row i (deterministic, varied). */
static void row_of(unsigned i, double *r) {
  r[0] = 1 + (i * 37) % 512;
  r[1] = 32 * (1 + (i * 11) % 32);
  r[2] = (double)((i * 7919) % 10000);
}

/* Train a small forest on synthetic rows with target tgt and save it. */
static rf_forest *train(const char *tgt, const char *path) {
  rf_data d;
  memset(&d, 0, sizeof d);
  if (rf_data_alloc(&d, NROWS, 3, 1)) return NULL;
  if (!d.names) d.names = calloc(3, sizeof *d.names); /* rf_data_alloc may have made it */
  if (!d.names) { rf_data_free(&d); return NULL; }
  for (size_t j = 0; j < 3; j++) d.names[j] = strdup(feat_names[j]);
  d.target = strdup(tgt);
  for (unsigned i = 0; i < NROWS; i++) {
    double r[3];
    row_of(i, r);
    for (size_t j = 0; j < 3; j++) d.x[j * NROWS + i] = r[j];
    d.y[i] = 1000 + r[0] * r[1] * 0.01 + r[2] * 0.5;
  }
  rf_params p;
  rf_params_default(&p);
  p.n_trees = 20;
  p.seed = 7;
  p.n_threads = 1;
  rf_forest *f = NULL;
  if (rf_train(&d, &p, &f) || rf_set_gpu(f, "H200") || rf_save(f, path)) {
    rf_free(f);
    f = NULL;
  }
  rf_data_free(&d);
  return f;
}

static int api_setup(void) {
  if (!tests_tmpdir(tmp, sizeof tmp, "api")) return 1;
  snprintf(time_model, sizeof time_model, "%s/time.kcm", tmp);
  snprintf(power_model, sizeof power_model, "%s/power.kcm", tmp);
  snprintf(trunc_model, sizeof trunc_model, "%s/trunc.kcm", tmp);
  ref_forest = train("time", time_model);
  rf_forest *pf = train("power", power_model);
  int trained = ref_forest && pf;
  rf_free(pf);
  size_t len = 0;
  char *bytes = tests_read_file(time_model, &len);
  if (!trained || !bytes) { free(bytes); return 1; }
  int rc = tests_write_file(trunc_model, bytes, len / 2);
  free(bytes);
  return rc;
}

static int api_teardown(void) {
  rf_free(ref_forest);
  ref_forest = NULL;
  return 0;
}

static kcast_features *features_of_row(unsigned i) {
  kcast_features *fs = NULL;
  double r[3];
  row_of(i, r);
  if (kcast_features_new(&fs)) return NULL;
  for (size_t j = 0; j < 3; j++) kcast_features_set(fs, feat_names[j], r[j]);
  kcast_features_set(fs, "ctrl.unused_by_model", 42); /* ignored */
  return fs;
}

static void test_version_and_gpus(void) {
  CU_ASSERT_STRING_EQUAL(kcast_version(), KCAST_VERSION_STRING); /* run-time version = header's */
  CU_ASSERT_EQUAL(KCAST_CHECK_VERSION(), KCAST_OK);              /* this header matches the library */
  CU_ASSERT_EQUAL(kcast_check_version(KCAST_VERSION_MAJOR + 1, sizeof(kcast_launch_config)),
                  KCAST_E_VERSION);                              /* another major is refused */
  CU_ASSERT_EQUAL(kcast_check_version(KCAST_VERSION_MAJOR, 8), KCAST_E_VERSION); /* struct size mismatch */
  CU_ASSERT_PTR_NOT_NULL(strstr(kcast_last_error(), "kcast_launch_config")); /* ... and says which */
  CU_ASSERT(kcast_gpu_count() >= 1);                             /* the GPU table is listed */
  int has_h200 = 0;
  for (size_t i = 0; i < kcast_gpu_count(); i++) has_h200 |= !strcmp(kcast_gpu_name(i), "H200");
  CU_ASSERT(has_h200);                                           /* H200 is among them */
  CU_ASSERT_PTR_NULL(kcast_gpu_name(kcast_gpu_count()));         /* out of range is NULL */
  CU_ASSERT_STRING_EQUAL(kcast_status_name(KCAST_E_FEATURE), "KCAST_E_FEATURE");
}

static void test_misuse(void) {
  kcast_model *m = (kcast_model *)1;
  kcast_features *fs = NULL;
  kcast_prediction pr;
  /* NULL handles and out-params: codes and messages, no crash. */
  CU_ASSERT_EQUAL(kcast_model_load(time_model, NULL), KCAST_E_ARG);
  CU_ASSERT(strlen(kcast_last_error()) > 0);
  CU_ASSERT_EQUAL(kcast_model_load(NULL, &m), KCAST_E_ARG);
  CU_ASSERT_PTR_NULL(m); /* out-param cleared on failure */
  CU_ASSERT_EQUAL(kcast_predict(NULL, NULL, 0.9, &pr), KCAST_E_ARG);
  CU_ASSERT_PTR_NOT_NULL(strstr(kcast_last_error(), "model is NULL"));
  CU_ASSERT_EQUAL(kcast_features_set(NULL, "x", 1), KCAST_E_ARG);
  CU_ASSERT_EQUAL(kcast_features_new(NULL), KCAST_E_ARG);
  CU_ASSERT_EQUAL(kcast_predict_batch(NULL, NULL, 1, 0.9, NULL), KCAST_E_ARG);
  CU_ASSERT_EQUAL(kcast_predict_analytic(NULL, NULL, NULL, NULL), KCAST_E_ARG);
  CU_ASSERT_EQUAL(kcast_model_target(NULL), KCAST_TARGET_OTHER);
  CU_ASSERT_EQUAL(kcast_model_nfeatures(NULL), 0);
  CU_ASSERT_PTR_NULL(kcast_model_gpu(NULL));
  kcast_model_free(NULL);    /* accepted */
  kcast_features_free(NULL); /* accepted */

  /* Files: missing, truncated. */
  char missing[4300];
  snprintf(missing, sizeof missing, "%s/nope.kcm", tmp);
  CU_ASSERT_EQUAL(kcast_model_load(missing, &m), KCAST_E_IO);
  CU_ASSERT_PTR_NOT_NULL(strstr(kcast_last_error(), "nope.kcm")); /* names the file */
  CU_ASSERT_EQUAL(kcast_model_load(trunc_model, &m), KCAST_E_FORMAT);
  CU_ASSERT_PTR_NULL(m);
  CU_ASSERT_PTR_NOT_NULL(strstr(kcast_last_error(), "trunc.kcm"));

  /* Bad feature names and values. */
  CU_ASSERT_EQUAL_FATAL(kcast_features_new(&fs), KCAST_OK);
  CU_ASSERT_EQUAL(kcast_features_set(fs, "", 1), KCAST_E_FEATURE);
  CU_ASSERT_EQUAL(kcast_features_set(fs, "launch.ctas", NAN), KCAST_E_FEATURE);
  CU_ASSERT_PTR_NOT_NULL(strstr(kcast_last_error(), "launch.ctas"));
  double v = 0;
  CU_ASSERT_EQUAL(kcast_features_get(fs, "launch.ctas", &v), KCAST_E_NOTFOUND);

  /* Missing features: a count feature counts 0, any other is an error naming it. */
  CU_ASSERT_EQUAL_FATAL(kcast_model_load(time_model, &m), KCAST_OK);
  kcast_features_set(fs, "launch.threads", 256);
  kcast_features_set(fs, "no.such.feature", 3);
  CU_ASSERT_EQUAL(kcast_predict(m, fs, 0.9, &pr), KCAST_E_FEATURE);
  CU_ASSERT_PTR_NOT_NULL(strstr(kcast_last_error(), "launch.ctas")); /* first missing one named */
  kcast_features_set(fs, "launch.ctas", 64);
  CU_ASSERT_EQUAL(kcast_predict(m, fs, 0.9, &pr), KCAST_OK); /* op.fma.rn.f32 absent: counts 0 */
  double row[3] = {64, 256, 0};
  CU_ASSERT_DOUBLE_EQUAL(pr.value, rf_predict(ref_forest, row), 0);
  CU_ASSERT_EQUAL(kcast_predict(m, fs, 1.5, &pr), KCAST_E_ARG); /* coverage out of (0,1) */
  CU_ASSERT_EQUAL(kcast_predict(m, fs, 0.9, NULL), KCAST_E_ARG);

  /* A model for another target. */
  CU_ASSERT_EQUAL(kcast_model_target(m), KCAST_TARGET_TIME);
  CU_ASSERT_EQUAL(kcast_model_expect(m, KCAST_TARGET_TIME), KCAST_OK);
  kcast_model *pm = NULL;
  CU_ASSERT_EQUAL_FATAL(kcast_model_load(power_model, &pm), KCAST_OK);
  CU_ASSERT_EQUAL(kcast_model_target(pm), KCAST_TARGET_POWER);
  CU_ASSERT_EQUAL(kcast_model_expect(pm, KCAST_TARGET_TIME), KCAST_E_TARGET);
  CU_ASSERT_PTR_NOT_NULL(strstr(kcast_last_error(), "'power'"));

  /* Analytic: unknown GPU, missing launch shape. */
  kcast_features *empty = NULL;
  kcast_features_new(&empty);
  CU_ASSERT_EQUAL(kcast_predict_analytic("NoSuchGPU", fs, &pr, NULL), KCAST_E_NOTFOUND);
  CU_ASSERT_PTR_NOT_NULL(strstr(kcast_last_error(), "H200")); /* lists the known ones */
  CU_ASSERT_EQUAL(kcast_predict_analytic("H200", empty, &pr, NULL), KCAST_E_FEATURE);
  kcast_features_free(empty);
  kcast_model_free(pm);
  kcast_model_free(m);
  kcast_features_free(fs);

  /* Launch configs and files for from_ptx. */
  kcast_launch_config c = KCAST_LAUNCH_CONFIG_INIT;
  CU_ASSERT_EQUAL(kcast_features_from_ptx("tests/ptx/saxpy_nvcc.ptx", NULL, NULL, &fs), KCAST_E_ARG);
  c.size = 0;
  CU_ASSERT_EQUAL(kcast_features_from_ptx("tests/ptx/saxpy_nvcc.ptx", NULL, &c, &fs), KCAST_E_ARG);
  c.size = sizeof c;
  CU_ASSERT_EQUAL(kcast_features_from_ptx("tests/ptx/saxpy_nvcc.ptx", NULL, &c, &fs), KCAST_E_ARG);
  CU_ASSERT_PTR_NOT_NULL(strstr(kcast_last_error(), "takes 4 parameters")); /* arg count */
  CU_ASSERT_EQUAL(kcast_features_from_ptx("tests/ptx/saxpy_nvcc.ptx", "nokernel", &c, &fs),
                  KCAST_E_NOTFOUND);
  CU_ASSERT_EQUAL(kcast_features_from_ptx(missing, NULL, &c, &fs), KCAST_E_IO);
  CU_ASSERT_EQUAL(kcast_features_from_launch(missing, 1, &fs), KCAST_E_IO);
  CU_ASSERT_EQUAL(kcast_features_from_launch(time_model, 1, &fs), KCAST_E_FORMAT); /* not a dataset */
  CU_ASSERT_PTR_NULL(fs);
}

/* Field-wise equality (the struct has padding). */
static int pred_eq(const kcast_prediction *a, const kcast_prediction *b) {
  return a->value == b->value && a->lo == b->lo && a->hi == b->hi && a->source == b->source;
}

static void test_matches_forest(void) {
  kcast_model *m = NULL;
  CU_ASSERT_EQUAL_FATAL(kcast_model_load(time_model, &m), KCAST_OK);
  CU_ASSERT_STRING_EQUAL(kcast_model_gpu(m), "H200");
  CU_ASSERT_EQUAL(kcast_model_nfeatures(m), 3);
  CU_ASSERT_STRING_EQUAL(kcast_model_feature_name(m, 1), "launch.threads");
  CU_ASSERT_PTR_NULL(kcast_model_feature_name(m, 3));
  kcast_features *sets[64];
  kcast_prediction out[64];
  int equal = 1, ordered = 1;
  for (unsigned i = 0; i < 64; i++) {
    sets[i] = features_of_row(i * 5);
    double r[3], lo, hi;
    row_of(i * 5, r);
    kcast_prediction p;
    if (kcast_predict(m, sets[i], 0.9, &p)) { equal = 0; continue; }
    rf_predict_interval(ref_forest, r, 0.9, NULL, &lo, &hi);
    equal &= p.value == rf_predict(ref_forest, r) && p.lo == lo && p.hi == hi &&
             p.source == KCAST_SOURCE_FOREST;
    ordered &= p.lo <= p.value && p.value <= p.hi;
  }
  CU_ASSERT(equal);   /* kcast_predict == rf_predict and its interval, every row */
  CU_ASSERT(ordered); /* lo <= value <= hi */
  CU_ASSERT_EQUAL(kcast_predict_batch(m, (const kcast_features *const *)sets, 64, 0.9, out), KCAST_OK);
  int batch_equal = 1;
  for (unsigned i = 0; i < 64; i++) {
    kcast_prediction p;
    kcast_predict(m, sets[i], 0.9, &p);
    batch_equal &= pred_eq(&p, &out[i]);
  }
  CU_ASSERT(batch_equal); /* the batch answers as one-by-one calls */
  kcast_features *bad = NULL;
  kcast_features_new(&bad);
  kcast_features *mixed[3] = {sets[0], bad, sets[1]};
  CU_ASSERT_EQUAL(kcast_predict_batch(m, (const kcast_features *const *)mixed, 3, 0.9, out),
                  KCAST_E_FEATURE);
  CU_ASSERT_PTR_NOT_NULL(strstr(kcast_last_error(), "feature set 1")); /* names the index */
  kcast_features_free(bad);
  for (unsigned i = 0; i < 64; i++) kcast_features_free(sets[i]);
  kcast_model_free(m);
}

/* Sets holding the model's names in other orders, behind decoys or
   without one of them, one after another (kcast_predict first checks where
   the last set had each name): every answer is rf_predict's on the row,
   and the set that lacks a name fails (or, for an op count, reads 0),
   whatever the last set held there. */
static void test_feature_order(void) {
  kcast_model *m = NULL;
  CU_ASSERT_EQUAL_FATAL(kcast_model_load(time_model, &m), KCAST_OK);
  static const unsigned order[4][3] = {{0, 1, 2}, {2, 1, 0}, {1, 2, 0}, {0, 2, 1}};
  int equal = 1, lacking = 1;
  for (unsigned i = 0; i < 40; i++) {
    double r[3];
    row_of(i * 3, r);
    kcast_features *fs = NULL;
    CU_ASSERT_FATAL(kcast_features_new(&fs) == KCAST_OK);
    for (unsigned d = 0; d < i % 3; d++) { /* decoys shift the names */
      char name[32];
      snprintf(name, sizeof name, "decoy.%u", d);
      kcast_features_set(fs, name, -1);
    }
    const unsigned *o = order[i % 4];
    for (size_t j = 0; j < 3; j++) kcast_features_set(fs, feat_names[o[j]], r[o[j]]);
    kcast_prediction p;
    equal &= kcast_predict(m, fs, 0.9, &p) == KCAST_OK && p.value == rf_predict(ref_forest, r);
    kcast_features_free(fs);
    /* the same positions, one name missing: a decoy where it was */
    CU_ASSERT_FATAL(kcast_features_new(&fs) == KCAST_OK);
    for (size_t j = 0; j < 3; j++)
      kcast_features_set(fs, j == i % 3 ? "decoy.x" : feat_names[o[j]], r[o[j]]);
    unsigned miss = o[i % 3];
    kcast_status st = kcast_predict(m, fs, 0.9, &p);
    if (miss == 2) { /* an op count: absent means 0 */
      r[2] = 0;
      lacking &= st == KCAST_OK && p.value == rf_predict(ref_forest, r);
    } else {
      lacking &= st == KCAST_E_FEATURE && strstr(kcast_last_error(), feat_names[miss]) != NULL;
    }
    kcast_features_free(fs);
  }
  CU_ASSERT(equal);   /* any order, any offset: rf_predict's answer */
  CU_ASSERT(lacking); /* a missing name is named (or 0), never read from elsewhere */
  kcast_model_free(m);
}

/* kcast_predict_check: a launch inside the training ranges, one beyond
   them, and a GPU the model was not trained on. */
static void test_predict_check(void) {
  kcast_model *m = NULL;
  CU_ASSERT_EQUAL_FATAL(kcast_model_load(time_model, &m), KCAST_OK);
  kcast_features *fs = features_of_row(5);
  CU_ASSERT_PTR_NOT_NULL_FATAL(fs);
  unsigned flags = 99;
  const char *feat = "x";
  CHECK_MSG("a training row's launch: no flag, no feature",
            kcast_predict_check(m, NULL, fs, &flags, &feat) == KCAST_OK && flags == 0 &&
                feat == NULL);
  kcast_features_set(fs, feat_names[0], 1e6); /* launch.ctas: 512 at most in training */
  CHECK_MSG("a launch with 1e6 CTAs (512 at most in training) is out of range, naming the feature",
            kcast_predict_check(m, NULL, fs, &flags, &feat) == KCAST_OK &&
                flags == KCAST_CHECK_OUT_OF_RANGE && feat && !strcmp(feat, feat_names[0]));
  CHECK_MSG("another GPU than a one-GPU model's (H200) is refused, as kcast_predict_gpu "
            "refuses it (a model of several GPUs flags one it has not seen: "
            "test_reliability_journeys.c)",
            kcast_predict_check(m, "T4", fs, &flags, NULL) == KCAST_E_ARG);
  CHECK_MSG("an unknown GPU is KCAST_E_NOTFOUND",
            kcast_predict_check(m, "NOPE", fs, &flags, NULL) == KCAST_E_NOTFOUND);
  CHECK_MSG("NULL flags is KCAST_E_ARG", kcast_predict_check(m, NULL, fs, NULL, NULL) == KCAST_E_ARG);
  kcast_features_free(fs);
  kcast_model_free(m);
}

/* kcast_predict_batch over 1000 sets, spread over OpenMP threads: each
   answer equals the one-by-one call bit for bit; with bad sets at some
   indices, the lowest one is reported -- on the calling thread, although a
   worker met it -- and every earlier answer is filled. */
#define NBATCH 1000

static void test_batch_parallel(void) {
  kcast_model *m = NULL;
  CU_ASSERT_EQUAL_FATAL(kcast_model_load(time_model, &m), KCAST_OK);
  kcast_features **sets = calloc(NBATCH, sizeof *sets);
  kcast_prediction *one = calloc(NBATCH, sizeof *one), *out = calloc(NBATCH, sizeof *out);
  kcast_features *bad = NULL;
  CU_ASSERT_FATAL(sets && one && out && kcast_features_new(&bad) == KCAST_OK);
  int built = 1, singles = 1;
  for (unsigned i = 0; i < NBATCH; i++) {
    sets[i] = features_of_row(i * 13 + 5);
    built &= sets[i] != NULL;
    singles &= sets[i] && kcast_predict(m, sets[i], 0.9, &one[i]) == KCAST_OK;
  }
  CU_ASSERT_FATAL(built && singles);
  const kcast_features *const *cs = (const kcast_features *const *)sets;
  CU_ASSERT_EQUAL(kcast_predict_batch(m, cs, NBATCH, 0.9, out), KCAST_OK);
  int same = 1;
  for (unsigned i = 0; i < NBATCH; i++) same &= pred_eq(&one[i], &out[i]);
  CU_ASSERT(same); /* 1000 batch answers equal the single calls bit for bit */

  /* One bad set at k: status and index on this thread, out[0..k) filled. */
  static const unsigned ks[] = {0, 63, 64, 517, 998, NBATCH - 1};
  int named = 1, filled = 1, status = 1;
  for (size_t t = 0; t < sizeof ks / sizeof ks[0]; t++) {
    unsigned k = ks[t];
    kcast_features *keep = sets[k];
    sets[k] = bad;
    memset(out, 0, NBATCH * sizeof *out);
    kcast_features_set(NULL, "reset", 0); /* leave another text in this thread's last error */
    status &= kcast_predict_batch(m, cs, NBATCH, 0.9, out) == KCAST_E_FEATURE;
    char want[64];
    snprintf(want, sizeof want, "feature set %u lacks", k);
    if (!strstr(kcast_last_error(), want)) {
      named = 0;
      fprintf(stderr, "test_api: k=%u: last error '%s'\n", k, kcast_last_error());
    }
    for (unsigned i = 0; i < k; i++) filled &= pred_eq(&one[i], &out[i]);
    sets[k] = keep;
  }
  CU_ASSERT(status); /* a set lacking launch.ctas fails the batch with KCAST_E_FEATURE */
  CU_ASSERT(named);  /* the caller's kcast_last_error names the failing index */
  CU_ASSERT(filled); /* every answer before it is there and right */

  /* Several bad sets: the lowest index wins, whatever the thread order. */
  kcast_features *keep[3] = {sets[950], sets[420], sets[421]};
  sets[950] = bad;
  sets[420] = NULL; /* a NULL set is KCAST_E_ARG at its index */
  sets[421] = bad;
  int lowest = 1;
  for (int rep = 0; rep < 20; rep++) {
    lowest &= kcast_predict_batch(m, cs, NBATCH, 0.9, out) == KCAST_E_ARG;
    lowest &= strstr(kcast_last_error(), "feature set 420 is NULL") != NULL;
  }
  CU_ASSERT(lowest); /* 20 runs: always the NULL at 420, never 421 or 950 */
  sets[950] = keep[0];
  sets[420] = keep[1];
  sets[421] = keep[2];

  for (unsigned i = 0; i < NBATCH; i++) kcast_features_free(sets[i]);
  kcast_features_free(bad);
  free(sets);
  free(one);
  free(out);
  kcast_model_free(m);
}

/* The answers a and b are the same bits (value, lo, hi) and source. */
static int pred_bits(const kcast_prediction *a, const kcast_prediction *b) {
  return !memcmp(&a->value, &b->value, sizeof a->value) && !memcmp(&a->lo, &b->lo, sizeof a->lo) &&
         !memcmp(&a->hi, &b->hi, sizeof a->hi) && a->source == b->source;
}

/* kcast_predict_batch of sets[0..n) against kcast_predict of each set, bit
   for bit; 0 when a call fails or an answer differs. */
static int batch_matches_singles(const kcast_model *m, kcast_features *const *sets, size_t n) {
  kcast_prediction *out = calloc(n, sizeof *out);
  int same = out && kcast_predict_batch(m, (const kcast_features *const *)sets, n, 0.9, out) ==
                        KCAST_OK;
  for (size_t i = 0; same && i < n; i++) {
    kcast_prediction p;
    same = kcast_predict(m, sets[i], 0.9, &p) == KCAST_OK && pred_bits(&p, &out[i]);
  }
  free(out);
  return same;
}

/* The batch walks blocks of sets tree-major (api.c, rf__predict_rows),
   or row by row when the forest stays in cache: batches below, at and
   past the size that runs on the calling thread and the block sizes, on
   the calibrated time model (8-byte nodes) both ways and on a model of
   260 features, whose nodes cannot be packed (16-byte walk). */
#define WIDE_FEATURES 260

static void test_batch_blocks(void) {
  kcast_model *m = NULL;
  CU_ASSERT_EQUAL_FATAL(kcast_model_load(time_model, &m), KCAST_OK);
  CU_ASSERT(rf_get_info(ref_forest)->n_cal > 0); /* its intervals are calibrated */
  enum { NMAX = 5000 };
  kcast_features **sets = calloc(NMAX, sizeof *sets);
  CU_ASSERT_FATAL(sets != NULL);
  int built = 1;
  for (unsigned i = 0; i < NMAX; i++) built &= (sets[i] = features_of_row(i * 31 + 3)) != NULL;
  CU_ASSERT_FATAL(built);
  static const size_t ns[] = {1, 2, 31, 32, 33, 63, 64, 65, 127, 1000, 1023, NMAX};
  int same = 1;
  /* the model is small: row by row, and tree-major through the test hook */
  for (int tm = 0; tm < 2; tm++) {
    rf__rows_tree_major = tm;
    for (size_t t = 0; t < sizeof ns / sizeof ns[0]; t++)
      if (!batch_matches_singles(m, sets, ns[t])) {
        same = 0;
        fprintf(stderr, "test_api: batch of %zu (tree-major %d) differs from kcast_predict\n",
                ns[t], tm);
      }
  }
  rf__rows_tree_major = 0;
  CU_ASSERT(same); /* every batch size, both walks: each answer is kcast_predict's, bit for bit */
  kcast_model_free(m);
  for (unsigned i = 0; i < NMAX; i++) kcast_features_free(sets[i]);

  /* 260 features: the forest keeps its 16-byte nodes */
  char wide[4300];
  snprintf(wide, sizeof wide, "%s/wide.kcm", tmp);
  rf_data d;
  memset(&d, 0, sizeof d);
  CU_ASSERT_FATAL(rf_data_alloc(&d, NROWS, WIDE_FEATURES, 1) == 0);
  if (!d.names) d.names = calloc(WIDE_FEATURES, sizeof *d.names);
  CU_ASSERT_FATAL(d.names != NULL);
  for (size_t j = 0; j < WIDE_FEATURES; j++) {
    char name[32];
    snprintf(name, sizeof name, "w.f%03zu", j);
    d.names[j] = strdup(name);
  }
  d.target = strdup("time");
  for (unsigned i = 0; i < NROWS; i++) {
    for (size_t j = 0; j < WIDE_FEATURES; j++)
      d.x[j * NROWS + i] = (double)((i * (j + 3) * 7919) % 1000);
    d.y[i] = 100 + d.x[i] + 0.5 * d.x[7 * NROWS + i] + 0.1 * d.x[259 * NROWS + i];
  }
  rf_params p;
  rf_params_default(&p);
  p.n_trees = 20;
  p.n_threads = 1;
  rf_forest *f = NULL;
  CU_ASSERT_FATAL(rf_train(&d, &p, &f) == 0 && rf_save(f, wide) == 0);
  rf_free(f);
  f = NULL;
  CU_ASSERT_FATAL(rf_load(wide, &f) == 0);
  CU_ASSERT(f->cn == NULL); /* no packed nodes: the walk of 16-byte nodes */
  rf_free(f);
  CU_ASSERT_FATAL(kcast_model_load(wide, &m) == KCAST_OK);
  int wbuilt = 1;
  for (unsigned i = 0; i < 200; i++) {
    wbuilt &= kcast_features_new(&sets[i]) == KCAST_OK;
    for (size_t j = 0; wbuilt && j < WIDE_FEATURES; j++)
      kcast_features_set(sets[i], d.names[j], d.x[j * NROWS + (i * 7) % NROWS] + i % 3);
  }
  CU_ASSERT_FATAL(wbuilt);
  CU_ASSERT(batch_matches_singles(m, sets, 200)); /* 16-byte nodes: the same answers */
  CU_ASSERT(batch_matches_singles(m, sets, 40));  /* on the calling thread too */
  for (unsigned i = 0; i < 200; i++) kcast_features_free(sets[i]);
  rf_data_free(&d);
  kcast_model_free(m);
  free(sets);
}

/* ----------------------------------------------------------- threads -- */

#define NTHREADS 8
#define NPRED 10000
#define NSETS 97

typedef struct worker {
  const kcast_model *m;
  kcast_features *const *sets;
  kcast_prediction *out; /* NPRED */
  int failures;
} worker;

static void *work(void *arg) {
  worker *w = arg;
  for (unsigned i = 0; i < NPRED; i++)
    if (kcast_predict(w->m, w->sets[i % NSETS], 0.8, &w->out[i])) w->failures++;
  return NULL;
}

static void test_threads(void) {
  kcast_model *m = NULL;
  CU_ASSERT_EQUAL_FATAL(kcast_model_load(time_model, &m), KCAST_OK);
  kcast_features *sets[NSETS];
  for (unsigned i = 0; i < NSETS; i++) sets[i] = features_of_row(i * 3 + 1);
  worker ref = {m, sets, calloc(NPRED, sizeof(kcast_prediction)), 0};
  work(&ref);
  CU_ASSERT_EQUAL(ref.failures, 0);
  worker w[NTHREADS];
  pthread_t t[NTHREADS];
  int started = 0;
  for (int i = 0; i < NTHREADS; i++) {
    w[i] = (worker){m, sets, calloc(NPRED, sizeof(kcast_prediction)), 0};
    if (w[i].out && pthread_create(&t[i], NULL, work, &w[i]) == 0) started++;
  }
  CU_ASSERT_EQUAL(started, NTHREADS);
  int same = 1, failures = 0;
  for (int i = 0; i < started; i++) {
    pthread_join(t[i], NULL);
    failures += w[i].failures;
    for (unsigned k = 0; k < NPRED; k++) same &= pred_eq(&w[i].out[k], &ref.out[k]);
  }
  CU_ASSERT_EQUAL(failures, 0); /* 8 x 10000 concurrent predictions all succeed */
  CU_ASSERT(same);              /* and each thread's answers equal the single-threaded run */
  for (int i = 0; i < NTHREADS; i++) free(w[i].out);
  free(ref.out);
  for (unsigned i = 0; i < NSETS; i++) kcast_features_free(sets[i]);
  kcast_model_free(m);
}

/* Each thread's last error is its own. */
static void *fail_once(void *arg) {
  kcast_features_set(NULL, (const char *)arg, 1);
  return NULL;
}

static void test_error_per_thread(void) {
  kcast_model *m = NULL;
  kcast_model_load(NULL, &m);
  char mine[1024];
  snprintf(mine, sizeof mine, "%s", kcast_last_error());
  pthread_t t;
  CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, fail_once, "x"), 0);
  pthread_join(t, NULL);
  CU_ASSERT_STRING_EQUAL(kcast_last_error(), mine); /* another thread's failure did not touch ours */
}

/* ------------------------------------------------------ feature sources -- */

static void test_from_launch(void) {
  char db[4300], err[512];
  snprintf(db, sizeof db, "%s/ds.db", tmp);
  ds_db *h = NULL;
  CU_ASSERT_EQUAL_FATAL(ds_open(db, DS_CREATE, &h, err, sizeof err), 0);
  feat_vec v;
  feat_init(&v);
  feat_set(&v, "launch.ctas", 128);
  feat_set(&v, "launch.threads", 256);
  feat_set(&v, "launch.block_x", 256);
  feat_set(&v, "op.fma.rn.f32", 4096);
  ds_launch l = {NULL, "app", "in", 0, "_Z1kv", {128, 1, 1}, {256, 1, 1}, 0, NULL};
  int64_t id = 0;
  CU_ASSERT_EQUAL_FATAL(ds_insert_launch(h, &l, &v, &id), 0);
  ds_close(h);
  feat_free(&v);

  kcast_features *fs = NULL;
  CU_ASSERT_EQUAL_FATAL(kcast_features_from_launch(db, id, &fs), KCAST_OK);
  double x = 0;
  CU_ASSERT_EQUAL(kcast_features_get(fs, "op.fma.rn.f32", &x), KCAST_OK);
  CU_ASSERT_DOUBLE_EQUAL(x, 4096, 0); /* the stored value comes back */
  kcast_model *m = NULL;
  kcast_prediction p, t, w;
  CU_ASSERT_EQUAL_FATAL(kcast_model_load(time_model, &m), KCAST_OK);
  CU_ASSERT_EQUAL(kcast_predict(m, fs, 0.9, &p), KCAST_OK);
  double row[3] = {128, 256, 4096};
  CU_ASSERT_DOUBLE_EQUAL(p.value, rf_predict(ref_forest, row), 0);
  CU_ASSERT_EQUAL(kcast_predict_analytic("h200", fs, &t, &w), KCAST_OK); /* case-insensitive */
  CU_ASSERT(t.value > 0 && t.lo <= t.value && t.value <= t.hi && t.source == KCAST_SOURCE_ANALYTIC);
  CU_ASSERT(w.value > 0 && w.lo <= w.value && w.value <= w.hi);
  kcast_model_free(m);
  kcast_features_free(fs);
  fs = NULL;
  CU_ASSERT_EQUAL(kcast_features_from_launch(db, id + 100, &fs), KCAST_E_NOTFOUND);
  CU_ASSERT_PTR_NOT_NULL(strstr(kcast_last_error(), "ds.db"));
}

/* The out-of-bounds policy: saxpy over n = 1100 elements with buffers of
   1000 floats; threads 1000..1099 read x and y and write y past the ends. */
static void test_from_ptx_oob(void) {
  kcast_arg args[4] = {{KCAST_ARG_SCALAR, 1100, 0, 0, 0}, {KCAST_ARG_SCALAR, 0x40000000u, 0, 0, 0},
                       {KCAST_ARG_BUFFER, 0, 4000, KCAST_FILL_SEQF, 0},
                       {KCAST_ARG_BUFFER, 0, 4000, KCAST_FILL_SEQF, 0}};
  kcast_launch_config c = KCAST_LAUNCH_CONFIG_INIT;
  c.grid[0] = 5;
  c.block[0] = 256;
  c.args = args;
  c.nargs = 4;
  kcast_features *fs = NULL;
  CU_ASSERT_EQUAL(kcast_features_from_ptx("tests/ptx/saxpy_nvcc.ptx", NULL, &c, &fs),
                  KCAST_E_EMULATION); /* KCAST_OOB_ERROR, the default */
  CU_ASSERT_PTR_NOT_NULL(strstr(kcast_last_error(), "out-of-bounds global read"));
  c.oob = KCAST_OOB_WARN;
  CU_ASSERT_EQUAL_FATAL(kcast_features_from_ptx("tests/ptx/saxpy_nvcc.ptx", NULL, &c, &fs), KCAST_OK);
  double v = -1;
  CU_ASSERT_EQUAL(kcast_features_get(fs, "emu.oob_accesses", &v), KCAST_OK);
  /* 100 threads x (load x, load y, store y), less x[1088..1099]: y starts
     4352 bytes after x (4000 rounded up past the 256-byte gap), so those
     twelve reads land in y, as they would on a GPU */
  CU_ASSERT_EQUAL(v, 288);
  CU_ASSERT_EQUAL(kcast_features_get(fs, "emu.ctas_emulated", &v), KCAST_OK);
  CU_ASSERT_EQUAL(v, 5);
  kcast_features_free(fs);
  c.oob = 7;
  CU_ASSERT_EQUAL(kcast_features_from_ptx("tests/ptx/saxpy_nvcc.ptx", NULL, &c, &fs), KCAST_E_ARG);
}

/* The race check through the public API (0.4.1): chunk_store, Parboil
   histo's pattern, 4 CTAs storing 96 words each 64 apart (each CTA's
   last 32 words on the next CTA's first: 3 x 32 racing words); 64 apart
   and 64 words each, disjoint. */
static void test_from_ptx_racecheck(void) {
  kcast_arg args[3] = {{KCAST_ARG_BUFFER, 0, 4 * 96 * 4, KCAST_FILL_ZERO, 0},
                       {KCAST_ARG_SCALAR, 96, 0, 0, 0},
                       {KCAST_ARG_SCALAR, 64, 0, 0, 0}};
  kcast_launch_config c = KCAST_LAUNCH_CONFIG_INIT;
  c.grid[0] = 4;
  c.block[0] = 64;
  c.args = args;
  c.nargs = 3;
  c.racecheck = 1;
  kcast_features *fs = NULL;
  double v = -1;
  CU_ASSERT_EQUAL_FATAL(kcast_features_from_ptx("tests/kernels/races.cu", "chunk_store", &c, &fs),
                        KCAST_OK);
  CHECK_MSG("overlapping stores of three CTA pairs: 96 racing words in emu.races",
            kcast_features_get(fs, "emu.races", &v) == KCAST_OK && v == 96);
  kcast_features_free(fs);
  c.racecheck = 0;
  CU_ASSERT_EQUAL_FATAL(kcast_features_from_ptx("tests/kernels/races.cu", "chunk_store", &c, &fs),
                        KCAST_OK);
  CHECK_MSG("... and without the check no emu.races",
            kcast_features_get(fs, "emu.races", &v) != KCAST_OK);
  kcast_features_free(fs);
  args[1].bits = 64;
  c.racecheck = 1;
  CU_ASSERT_EQUAL_FATAL(kcast_features_from_ptx("tests/kernels/races.cu", "chunk_store", &c, &fs),
                        KCAST_OK);
  CHECK_MSG("disjoint stores: no emu.races", kcast_features_get(fs, "emu.races", &v) != KCAST_OK);
  kcast_features_free(fs);
  c.racecheck = 2;
  CHECK_MSG("a racecheck other than 0 or 1 is an argument error",
            kcast_features_from_ptx("tests/kernels/races.cu", "chunk_store", &c, &fs) ==
                KCAST_E_ARG && strstr(kcast_last_error(), "racecheck 2"));
}

static void test_from_ptx(void) {
  kcast_arg args[4];
  memset(args, 0, sizeof args);
  args[0].kind = KCAST_ARG_SCALAR;
  args[0].bits = 4096; /* n */
  float a = 2.0f;
  uint32_t abits;
  memcpy(&abits, &a, 4);
  args[1].kind = KCAST_ARG_SCALAR;
  args[1].bits = abits;
  args[2].kind = KCAST_ARG_BUFFER;
  args[2].bytes = 4096 * 4;
  args[2].fill = KCAST_FILL_RANDF;
  args[2].seed = 3;
  args[3].kind = KCAST_ARG_BUFFER;
  args[3].bytes = 4096 * 4;
  kcast_launch_config c = KCAST_LAUNCH_CONFIG_INIT;
  c.grid[0] = 16;
  c.block[0] = 256;
  c.sample_ctas = 4;
  c.args = args;
  c.nargs = 4;
  c.threads = 1;
  kcast_features *fs = NULL;
  CU_ASSERT_EQUAL_FATAL(kcast_features_from_ptx("tests/ptx/saxpy_nvcc.ptx", "saxpy", &c, &fs),
                        KCAST_OK);
  double ctas = 0, fma = 0;
  CU_ASSERT_EQUAL(kcast_features_get(fs, "launch.ctas", &ctas), KCAST_OK);
  CU_ASSERT_DOUBLE_EQUAL(ctas, 16, 0); /* counts describe the whole grid */
  CU_ASSERT_EQUAL(kcast_features_get(fs, "op.fma.rn.f32", &fma), KCAST_OK);
  CU_ASSERT_DOUBLE_EQUAL(fma, 4096, 0.5); /* one FMA per element, scaled from 4 sampled CTAs */
  int has_static = 0;
  for (size_t i = 0; i < kcast_features_count(fs); i++)
    has_static |= !strncmp(kcast_features_name(fs, i), "static.", 7);
  CU_ASSERT(has_static); /* static features are added too */
  kcast_prediction t;
  CU_ASSERT_EQUAL(kcast_predict_analytic("H200", fs, &t, NULL), KCAST_OK);
  kcast_features_free(fs);
  fs = NULL;
  /* the demangled signature names the kernel too (the toolchain's demangler) */
  CU_ASSERT_EQUAL(kcast_features_from_ptx("tests/ptx/saxpy_nvcc.ptx",
                                          "saxpy(int, float, float const*, float*)", &c, &fs),
                  KCAST_OK);
  kcast_features_free(fs);
  fs = NULL;
  CU_ASSERT_EQUAL(kcast_features_from_ptx("tests/ptx/saxpy_nvcc.ptx", "saxpy(int)", &c, &fs),
                  KCAST_E_NOTFOUND); /* a signature it does not have */
  kcast_features_free(fs);
  fs = NULL;

  /* A buffer handed to the float parameter, and a too small buffer. */
  kcast_arg bad[4];
  memcpy(bad, args, sizeof bad);
  bad[1] = args[2];
  c.args = bad;
  CU_ASSERT_EQUAL(kcast_features_from_ptx("tests/ptx/saxpy_nvcc.ptx", NULL, &c, &fs), KCAST_E_ARG);
  CU_ASSERT_PTR_NOT_NULL(strstr(kcast_last_error(), "device address"));
  memcpy(bad, args, sizeof bad);
  bad[3].bytes = 64;
  c.args = bad;
  CU_ASSERT_EQUAL(kcast_features_from_ptx("tests/ptx/saxpy_nvcc.ptx", NULL, &c, &fs),
                  KCAST_E_EMULATION); /* out-of-bounds store stops the launch */
  CU_ASSERT(strlen(kcast_last_error()) > 0);
  CU_ASSERT_PTR_NULL(fs);
}

/* --------------------------------------------------- library surface -- */

/* Every function kcast.h declares, and nothing else, is exported, each
   under a version node of api/libkcast.map (name@@KCAST_M.N), and the
   library's SONAME is libkcast.so.<major> (docs/api.md, "Versions"). */
static void test_exports(void) {
  char cmd[4400], *out = NULL;
  snprintf(cmd, sizeof cmd, "nm -D --defined-only %s/libkcast.so", tests_build());
  int rc = tests_run(cmd, &out, NULL);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  int only_kcast = 1, n = 0, has_predict = 0, unversioned = 0, nodes = 0;
  char exported[8192] = " ";
  char *save = NULL;
  for (char *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    const char *sym = strrchr(line, ' ');
    sym = sym ? sym + 1 : line;
    if (!strcmp(sym, "_init") || !strcmp(sym, "_fini")) continue;
    if (strstr(line, " A KCAST_")) { /* a version node's own symbol */
      nodes++;
      continue;
    }
    const char *at = strstr(sym, "@@KCAST_");
    if (!at) {
      unversioned++;
      fprintf(stderr, "test_api: libkcast.so exports %s without a version\n", sym);
    }
    size_t len = at ? (size_t)(at - sym) : strlen(sym);
    if (strncmp(sym, "kcast_", 6)) {
      only_kcast = 0;
      fprintf(stderr, "test_api: libkcast.so exports %s\n", sym);
    }
    n++;
    has_predict |= len == 13 && !strncmp(sym, "kcast_predict", 13);
    if (strlen(exported) + len + 2 < sizeof exported)
      strcat(strncat(exported, sym, len), " ");
  }
  free(out);
  CU_ASSERT(only_kcast);      /* every exported symbol is kcast_* */
  CU_ASSERT(unversioned == 0); /* each under a version node */
  CU_ASSERT(nodes >= 1);
  CU_ASSERT(has_predict);     /* and the API is there */
  CU_ASSERT(n >= 20);
  /* the header's functions: "kcast_name(" at a declaration's start */
  char *h = tests_read_file("include/kcast.h", NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(h);
  int declared = 0, missing = 0;
  for (char *p = h; (p = strstr(p, "kcast_")); p++) {
    size_t len = strspn(p, "abcdefghijklmnopqrstuvwxyz_0123456789");
    if (p[len] != '(' || (p > h && (p[-1] == '_' || p[-1] == '>'))) continue;
    /* a declaration: the name follows the return type on the same line */
    const char *bol = p;
    while (bol > h && bol[-1] != '\n') bol--;
    if (*bol == ' ' || *bol == '#' || *bol == '/' || *bol == '*') continue;
    char want[80];
    snprintf(want, sizeof want, " %.*s ", (int)len, p);
    declared++;
    if (!strstr(exported, want)) {
      missing++;
      fprintf(stderr, "test_api: kcast.h declares %s, libkcast.so does not export it\n", want);
    }
  }
  free(h);
  CHECK_MSG("every function kcast.h declares is exported", declared >= 30 && missing == 0);
  CHECK_MSG("exactly the functions kcast.h declares are exported", declared == n);
  snprintf(cmd, sizeof cmd, "readelf -d %s/libkcast.so", tests_build());
  rc = tests_run(cmd, &out, NULL);
  char soname[64];
  snprintf(soname, sizeof soname, "Library soname: [libkcast.so.%d]", KCAST_VERSION_MAJOR);
  CHECK_MSG("libkcast.so's SONAME is libkcast.so.<major>", rc == 0 && out && strstr(out, soname));
  free(out);
}

static void test_header_languages(void) {
  char src[4300], cmd[9000], *err = NULL;
  const char *prog =
      "#include \"kcast.h\"\n"
      "int main(void) {\n"
      "  kcast_launch_config c = KCAST_LAUNCH_CONFIG_INIT;\n"
      "  kcast_prediction p;\n"
      "  kcast_model *m = 0;\n"
      "  p.source = KCAST_SOURCE_FOREST;\n"
      "  (void)c; (void)p;\n"
      "  return kcast_model_load(\"x\", &m) == KCAST_OK;\n"
      "}\n";
  snprintf(src, sizeof src, "%s/hdr.c", tmp);
  CU_ASSERT_EQUAL_FATAL(tests_write_file(src, prog, strlen(prog)), 0);
  snprintf(cmd, sizeof cmd, "cc -std=c99 -pedantic -Wall -Wextra -Werror -Iinclude -fsyntax-only %s", src);
  int rc = tests_run(cmd, NULL, &err);
  CU_ASSERT_EQUAL(rc, 0); /* kcast.h compiles as pedantic C99 */
  if (rc) fprintf(stderr, "%s", err ? err : "");
  free(err);
  err = NULL;
  if (tests_run("command -v g++", NULL, NULL) != 0) {
    fprintf(stderr, "test_api: g++ not found, C++ check skipped\n");
    return;
  }
  snprintf(src, sizeof src, "%s/hdr.cpp", tmp);
  CU_ASSERT_EQUAL_FATAL(tests_write_file(src, prog, strlen(prog)), 0);
  snprintf(cmd, sizeof cmd,
           "g++ -std=c++11 -pedantic -Wall -Wextra -Werror -Iinclude -fsyntax-only %s", src);
  rc = tests_run(cmd, NULL, &err);
  CU_ASSERT_EQUAL(rc, 0); /* kcast.h compiles as C++11 */
  if (rc) fprintf(stderr, "%s", err ? err : "");
  free(err);
}

TEST_SUITES(register_api) {
  CU_pSuite s = CU_add_suite("api", api_setup, api_teardown);
  if (!s) return;
  TEST_ADD(s, test_version_and_gpus);
  TEST_ADD(s, test_misuse);
  TEST_ADD(s, test_matches_forest);
  TEST_ADD(s, test_feature_order);
  TEST_ADD(s, test_predict_check);
  TEST_ADD(s, test_batch_parallel);
  TEST_ADD(s, test_batch_blocks);
  TEST_ADD(s, test_threads);
  TEST_ADD(s, test_error_per_thread);
  TEST_ADD(s, test_from_launch);
  TEST_ADD(s, test_from_ptx);
  TEST_ADD(s, test_from_ptx_oob);
  TEST_ADD(s, test_from_ptx_racecheck);
  TEST_ADD(s, test_exports);
  TEST_ADD(s, test_header_languages);
}
