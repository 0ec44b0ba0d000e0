/*
 * test_models.c -- `make models` (tools/train-models.sh): from a data
 * folder of datasets to a models folder of .kcm files and PROVENANCE.md.
 *
 * The datasets are built here through the datasets API, so the suite needs
 * no GPU and no outside data, and they take the two shapes real data has:
 * FakeGPU.db holds time and power measurements of launches without
 * features (what `kcast profile` records), whose features are in
 * suite-features.db (what `kcast run` records, no measurements); OtherGPU.db
 * carries its own features and time only (an imported GPU Mangrove
 * database).  The script must train exactly FakeGPU-time, FakeGPU-power
 * (both on the two datasets joined) and OtherGPU-time, each loadable (by
 * `kcast model info` and kcast_model_load) and labelled with its GPU and
 * target, and PROVENANCE.md must carry the CV figures `kcast cv` gives.
 * A folder without measured datasets is a note and exit 0, nothing written.
 *
 * Suite "models".
 */
#include "tests.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "datasets/ds.h"
#include "include/kcast.h"

#define NLAUNCH 60
#define NREP 3

static char tmp[4096];
static char data_dir[4200], empty_dir[4200], out_dir[4200], fake_db[4300], other_db[4300];

/* A dataset of NLAUNCH launches, with features when with_features; time
   (and power when with_power) measured on gpu, when gpu is non-NULL.  The
   launches are keyed alike in every dataset.  0 on success. */
static int make_db(const char *path, int with_features, const char *gpu, int with_power) {
  char err[512];
  ds_db *db = NULL;
  if (ds_open(path, DS_CREATE, &db, err, sizeof err)) {
    fprintf(stderr, "test_models: %s\n", err);
    return -1;
  }
  int rc = ds_begin(db);
  for (int i = 0; i < NLAUNCH && !rc; i++) {
    unsigned ctas = 1u + (unsigned)(i * 37 % 500), threads = 32u * (1u + (unsigned)(i % 8));
    double fma = (double)ctas * threads * (1 + i % 5), ld = (double)ctas * threads * 2;
    feat_vec v;
    feat_init(&v);
    feat_set(&v, "launch.ctas", ctas);
    feat_set(&v, "launch.threads", threads);
    feat_set(&v, "launch.block_x", threads);
    feat_set(&v, "op.fma.rn.f32", fma);
    feat_set(&v, "op.ld.global.f32", ld);
    feat_set(&v, "class.fp32", fma);
    feat_set(&v, "class.int_arith", 3.0 * ctas * threads);
    char dataset[32];
    snprintf(dataset, sizeof dataset, "n%d", i);
    ds_launch l = {NULL, i % 2 ? "appA" : "appB", dataset, 0, "_Z1kPf",
                   {ctas, 1, 1}, {threads, 1, 1}, 0, "test"};
    int64_t id = 0;
    rc = ds_insert_launch(db, &l, with_features ? &v : NULL, &id);
    feat_free(&v);
    for (int r = 0; gpu && r < NREP && !rc; r++) {
      double noise = 1 + 0.01 * ((i * 7 + r * 3) % 5);
      double t = (2000 + 0.05 * fma + 0.02 * ld) * noise;
      rc = ds_insert_measurement(db, id, gpu, "time_ns", t, r, "test");
      if (!rc && with_power)
        rc = ds_insert_measurement(db, id, gpu, "power_w", (40 + 1e-5 * fma) * noise, r, "test");
    }
  }
  rc = rc ? (ds_rollback(db), -1) : ds_commit(db);
  if (rc) fprintf(stderr, "test_models: %s: %s\n", path, ds_errmsg(db));
  ds_close(db);
  return rc;
}

static int models_setup(void) {
  if (!tests_tmpdir(tmp, sizeof tmp, "models")) return 1;
  snprintf(data_dir, sizeof data_dir, "%s/data", tmp);
  snprintf(empty_dir, sizeof empty_dir, "%s/features-only", tmp);
  snprintf(out_dir, sizeof out_dir, "%s/models", tmp);
  snprintf(fake_db, sizeof fake_db, "%s/FakeGPU.db", data_dir);
  snprintf(other_db, sizeof other_db, "%s/OtherGPU.db", data_dir);
  char path[4400];
  int rc = 0;
  rc |= mkdir(data_dir, 0777) != 0;
  rc |= mkdir(empty_dir, 0777) != 0;
  rc |= make_db(fake_db, 0, "FakeGPU", 1);
  rc |= make_db(other_db, 1, "OtherGPU", 0);
  snprintf(path, sizeof path, "%s/suite-features.db", data_dir);
  rc |= make_db(path, 1, NULL, 0);
  snprintf(path, sizeof path, "%s/suite-features.db", empty_dir);
  rc |= make_db(path, 1, NULL, 0);
  return rc ? 1 : 0;
}

static int exists(const char *dir, const char *name) {
  char p[4400];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  return access(p, F_OK) == 0;
}

/* Run the script on data into out; its exit status, stdout in *out_text. */
static int run_script(const char *data, const char *out, char **out_text, char **err_text) {
  char cmd[13000];
  snprintf(cmd, sizeof cmd, "sh tools/train-models.sh --kcast '%s' --data '%s' --out '%s'",
           tests_kcast(), data, out);
  return tests_run(cmd, out_text, err_text);
}

/* Nothing to train: no measurements (a note, exit 0), measurements
   without features (an error), a bad argument (usage). */
static void test_no_measurements(void) {
  char out[4300], *so = NULL, *se = NULL;
  snprintf(out, sizeof out, "%s/none", tmp);
  int rc = run_script(empty_dir, out, &so, &se);
  CU_ASSERT_EQUAL(rc, 0); /* nothing to train is not an error */
  CU_ASSERT(so && strstr(so, "make models: no measured dataset in"));
  CU_ASSERT(so && strstr(so, "(collect with make gpu-check)"));
  CU_ASSERT(se && strstr(se, "suite-features.db: features only"));
  CU_ASSERT(access(out, F_OK) != 0); /* and the models folder is not even created */
  free(so);
  free(se);
  so = se = NULL;

  /* Measurements whose features are nowhere: an error naming the dataset. */
  char lone[4300], lone_db[4400];
  snprintf(lone, sizeof lone, "%s/measured-only", tmp);
  snprintf(lone_db, sizeof lone_db, "%s/FakeGPU.db", lone);
  CU_ASSERT_FATAL(mkdir(lone, 0777) == 0 && make_db(lone_db, 0, "FakeGPU", 0) == 0);
  CU_ASSERT_EQUAL(run_script(lone, out, NULL, &se), 1);
  CU_ASSERT(se && strstr(se, "FakeGPU.db: measurements without features"));
  CU_ASSERT(access(out, F_OK) != 0);
  free(se);
  se = NULL;

  char cmd[200];
  snprintf(cmd, sizeof cmd, "sh tools/train-models.sh --bogus");
  CU_ASSERT_EQUAL(tests_run(cmd, NULL, &se), 2); /* a bad argument is a usage error */
  CU_ASSERT(se && strstr(se, "--bogus"));
  free(se);
}

/* The model file loads through the API with the GPU and target expected. */
static int model_is(const char *name, const char *gpu, kcast_target target) {
  char p[4400];
  snprintf(p, sizeof p, "%s/%s", out_dir, name);
  kcast_model *m = NULL;
  if (kcast_model_load(p, &m)) {
    fprintf(stderr, "test_models: %s\n", kcast_last_error());
    return 0;
  }
  int ok = !strcmp(kcast_model_gpu(m), gpu) && kcast_model_target(m) == target;
  kcast_model_free(m);
  return ok;
}

static void test_train(void) {
  char *so = NULL, *se = NULL;
  int rc = run_script(data_dir, out_dir, &so, &se);
  if (rc) fprintf(stderr, "%s", se ? se : "");
  free(so);
  if (rc) free(se);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  CU_ASSERT(exists(out_dir, "FakeGPU-time.kcm"));     /* time model of the measured GPU */
  CU_ASSERT(exists(out_dir, "FakeGPU-power.kcm"));    /* and its power model */
  CU_ASSERT(exists(out_dir, "OtherGPU-time.kcm"));    /* time for a GPU without power rows */
  CU_ASSERT(!exists(out_dir, "OtherGPU-power.kcm"));  /* but no power model for it */
  CU_ASSERT(!exists(out_dir, "suite-features-time.kcm")); /* nor for the unmeasured dataset */
  CU_ASSERT(!exists(out_dir, ".FakeGPU-time.kcm.tmp"));   /* no temporary left behind */
  CU_ASSERT(se && strstr(se, "suite-features.db: features only"));
  free(se);

  CU_ASSERT(model_is("FakeGPU-time.kcm", "FakeGPU", KCAST_TARGET_TIME));
  CU_ASSERT(model_is("FakeGPU-power.kcm", "FakeGPU", KCAST_TARGET_POWER));
  CU_ASSERT(model_is("OtherGPU-time.kcm", "OtherGPU", KCAST_TARGET_TIME));
  char cmd[9000], *info = NULL;
  snprintf(cmd, sizeof cmd, "'%s' model info '%s/FakeGPU-power.kcm'", tests_kcast(), out_dir);
  CU_ASSERT_EQUAL(tests_run(cmd, &info, NULL), 0); /* kcast model info reads it */
  CU_ASSERT(info && strstr(info, "FakeGPU"));
  CU_ASSERT(info && strstr(info, "60 rows")); /* trained on every launch */
  CU_ASSERT(info && strstr(info, "for unseen groups")); /* intervals calibrated by app */
  free(info);

  char prov[4400];
  snprintf(prov, sizeof prov, "%s/PROVENANCE.md", out_dir);
  char *doc = tests_read_file(prov, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
  CU_ASSERT_PTR_NOT_NULL(strstr(doc, "## FakeGPU-time.kcm"));
  CU_ASSERT_PTR_NOT_NULL(strstr(doc, "## FakeGPU-power.kcm"));
  CU_ASSERT_PTR_NOT_NULL(strstr(doc, "## OtherGPU-time.kcm"));
  CU_ASSERT_PTR_NULL(strstr(doc, "OtherGPU-power"));
  CU_ASSERT_PTR_NOT_NULL(strstr(doc, "FakeGPU.db` (measurements) joined with")); /* the sources */
  CU_ASSERT_PTR_NOT_NULL(strstr(doc, "60 launches measured, 60 with features used"));
  CU_ASSERT_PTR_NOT_NULL(strstr(doc, "- command: `kcast dataset merge joined.db ")); /* the commands */
  CU_ASSERT_PTR_NOT_NULL(strstr(doc, "`kcast train joined.db --gpu FakeGPU --target time"));
  CU_ASSERT_PTR_NOT_NULL(strstr(doc, "- command: `kcast train ")); /* OtherGPU: no join */
  CU_ASSERT_PTR_NOT_NULL(strstr(doc, "- chosen: "));
  CU_ASSERT_PTR_NOT_NULL(strstr(doc, "- unseen applications: leave-one-app-out CV"));
  CU_ASSERT_PTR_NOT_NULL(strstr(doc, "--calibrate-groups -o ")); /* in the command */

  /* The recorded CV figures are kcast cv's: the default configuration's
     median APE for OtherGPU time, as kcast cv prints it, is in its row. */
  char *json = NULL;
  snprintf(cmd, sizeof cmd, "'%s' cv '%s' --gpu OtherGPU --target time --folds 5 --format json",
           tests_kcast(), other_db);
  CU_ASSERT_EQUAL_FATAL(tests_run(cmd, &json, NULL), 0);
  const char *k = json ? strstr(json, "\"median_ape\":") : NULL;
  CU_ASSERT_PTR_NOT_NULL_FATAL(k);
  double ape = strtod(k + strlen("\"median_ape\":"), NULL);
  char want[128];
  snprintf(want, sizeof want, "| defaults | `(defaults)` | ");
  const char *sect = strstr(doc, "## OtherGPU-time.kcm");
  const char *row = sect ? strstr(sect, want) : NULL;
  CU_ASSERT_PTR_NOT_NULL_FATAL(row);
  snprintf(want, sizeof want, "| %.2f |", ape);
  const char *eol = strchr(row, '\n');
  const char *hit = strstr(row, want);
  CU_ASSERT(hit && eol && hit < eol); /* same number, same row */
  if (!(hit && eol && hit < eol)) fprintf(stderr, "test_models: wanted %s in the defaults row\n", want);
  free(json);
  free(doc);
}

TEST_SUITES(register_models) {
  CU_pSuite s = CU_add_suite("models", models_setup, NULL);
  if (!s) return;
  TEST_ADD(s, test_no_measurements);
  TEST_ADD(s, test_train);
}
