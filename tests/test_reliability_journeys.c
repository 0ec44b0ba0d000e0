/*
 * test_reliability_journeys.c -- `make reliability`, third part: a new
 * user's journeys end to end, and the wrong answers found on them that
 * kcast gave without a word.  Each case is one: a tuning table's other
 * statistic of the target trained on as a feature; a CSV's gpu column
 * overruled by --gpu; predictions compared with another GPU's, another
 * quantity's or another unit's measurements; one GPU imported under two
 * names, half of it left out; a forest's extrapolation said for a CSV but
 * not for a kernel, an operator or a feature model; operator descriptions
 * that are no launch (a grid past CUDA's limits, wrapped to 32 bits; a
 * kernel of another operator; a GEMM grid that cannot cover its output);
 * a feature model whose argument the training sizes tied to the grid; a
 * model of one GPU answering for another through the C API.  Each checks
 * that kcast now answers right or says what is wrong (one line, exit 1).
 */
#include "tests.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "datasets/ds.h"
#include "include/kcast.h"
#include "model/model.h"

#define CHECK_MSG(msg, cond) \
  CU_assertImplementation(!!(cond), __LINE__, (msg), __FILE__, "", CU_FALSE)

/* kcast ARGS (a printf format): exit status, stdout and stderr. */
__attribute__((format(printf, 3, 4)))
static int kc(char **out, char **err, const char *fmt, ...) {
  char args[12000], cmd[16384];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(args, sizeof args, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= sizeof args) return -1;
  snprintf(cmd, sizeof cmd, "'%s' %s", tests_kcast(), args);
  return tests_run(cmd, out, err);
}

static void rm_rf(const char *dir) {
  char cmd[4300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  tests_run(cmd, NULL, NULL);
}

/* The MAPE of predict --measured's first summary line in err, NAN when none. */
static double mape_of(const char *err) {
  const char *p = err ? strstr(err, "MAPE ") : NULL;
  return p ? strtod(p + 5, NULL) : NAN;
}

/* A dataset of n launches with features, times on T4 and K80 (K80 three
   times slower) and powers; the T4 times under gpu name t4name. */
static int write_dataset(const char *path, int n, const char *t4name) {
  ds_db *db = NULL;
  if (ds_open(path, DS_CREATE, &db, NULL, 0)) return -1;
  int rc = ds_begin(db);
  for (int i = 0; i < n && !rc; i++) {
    ds_launch l = {NULL, i % 2 ? "appb" : "appa", "in", i, "_Z4kernPf",
                   {(uint32_t)(8 + i), 1, 1}, {128, 1, 1}, 0, "test"};
    feat_vec v;
    feat_init(&v);
    double ctas = 8 + i;
    feat_set(&v, "launch.ctas", ctas);
    feat_set(&v, "launch.grid_x", ctas);
    feat_set(&v, "launch.block_x", 128);
    feat_set(&v, "launch.block_y", 1);
    feat_set(&v, "launch.block_z", 1);
    feat_set(&v, "launch.threads", ctas * 128);
    feat_set(&v, "class.fp32", ctas * 128 * (10 + i % 7));
    feat_set(&v, "class.ld_global", ctas * 128 * 2);
    feat_set(&v, "mem.global_bytes", ctas * 128 * 8);
    int64_t id = 0;
    rc = ds_insert_launch(db, &l, &v, &id);
    feat_free(&v);
    double t = 1000 + 50.0 * ctas * (10 + i % 7);
    rc = rc || ds_insert_measurement(db, id, t4name, "time_ns", t, 0, "test") ||
         ds_insert_measurement(db, id, t4name, "power_w", 40 + i % 5, 0, "test") ||
         ds_insert_measurement(db, id, "K80", "time_ns", 3 * t, 0, "test");
  }
  rc = rc || ds_commit(db);
  ds_close(db);
  return rc ? -1 : 0;
}

/* -------------------------------------------------- tuning tables -- */

/*
 * Kernel Tuner tables carry several statistics of one measurement
 * (time_ms_median, time_ms_mean): `train --csv --target time_ms_median`
 * trained on time_ms_mean, ranked it first, cross-validated at 6 % and
 * asked for it at every prediction.  A column that measures (time, power,
 * energy, latency, ... with a unit) is not a feature unless named.
 */
static void test_a_tables_other_measurements_are_not_features(void) {
  char dir[4096], csv[4200], model[4200];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "jr-tune"));
  snprintf(csv, sizeof csv, "%s/t.csv", dir);
  snprintf(model, sizeof model, "%s/m.kcm", dir);
  FILE *f = fopen(csv, "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fprintf(f, "block,time_steps,time_ms_mean,power_w,time_ms_median\n");
  for (int i = 0; i < 60; i++) {
    double t = 1 + (i % 6) * 0.5 + (i % 5) * 0.1;
    fprintf(f, "%d,%d,%.4f,%d,%.4f\n", 32 << (i % 6), 10 + i % 5, t * 1.01, 100 + i, t);
  }
  CU_ASSERT_EQUAL_FATAL(fclose(f), 0);
  char *out = NULL, *err = NULL;
  int rc = kc(&out, &err, "train --csv '%s' --target time_ms_median --trees 10 -o '%s'", csv,
              model);
  CHECK_MSG("train on a table with time_ms_mean beside the target succeeds", rc == 0);
  CHECK_MSG("...saying the measurements it left out: time_ms_mean and power_w",
            err && strstr(err, "not features") && strstr(err, "time_ms_mean") &&
                strstr(err, "power_w"));
  free(out), free(err), out = err = NULL;
  rc = kc(&out, &err, "model info '%s' --format json", model);
  CHECK_MSG("time_ms_mean is not a feature of the model", rc == 0 && out &&
            !strstr(out, "\"time_ms_mean\"") && !strstr(out, "\"power_w\""));
  CHECK_MSG("time_steps (no unit: a count) and block are", out &&
            strstr(out, "\"time_steps\"") && strstr(out, "\"block\""));
  free(out), free(err), out = err = NULL;
  rc = kc(&out, &err, "train --csv '%s' --target time_ms_median --features all,time_ms_mean "
          "--trees 10 -o '%s'", csv, model);
  free(out), free(err), out = err = NULL;
  if (rc == 0) rc = kc(&out, &err, "model info '%s' --format json", model);
  CHECK_MSG("a measurement named in --features is one", rc == 0 && out &&
            strstr(out, "\"time_ms_mean\""));
  free(out), free(err), out = err = NULL;
  rm_rf(dir);
}

/*
 * `train --csv TABLE --gpu A100` on a table whose gpu column names A100,
 * A4000 and A6000 trained one "A100" model on all three GPUs' rows.  --gpu
 * that contradicts the file's gpu column is an error naming the row.
 */
static void test_gpu_and_the_files_gpu_column_agree(void) {
  char dir[4096], csv[4200], one[4200], model[4200];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "jr-gpucol"));
  snprintf(csv, sizeof csv, "%s/t.csv", dir);
  snprintf(one, sizeof one, "%s/one.csv", dir);
  snprintf(model, sizeof model, "%s/m.kcm", dir);
  FILE *f = fopen(csv, "w"), *g = fopen(one, "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  fprintf(f, "gpu,a,y\n");
  fprintf(g, "gpu,a,y\n");
  for (int i = 0; i < 20; i++) {
    fprintf(f, "%s,%d,%d\n", i < 10 ? "A100" : "A4000", i % 10, (i % 10 + 1) * (i < 10 ? 1 : 3));
    if (i < 10) fprintf(g, "A100,%d,%d\n", i, i + 1);
  }
  CU_ASSERT_EQUAL_FATAL(fclose(f), 0);
  CU_ASSERT_EQUAL_FATAL(fclose(g), 0);
  char *out = NULL, *err = NULL;
  int rc = kc(&out, &err, "train --csv '%s' --target y --gpu A100 --trees 5 -o '%s'", csv, model);
  CHECK_MSG("--gpu A100 on rows the gpu column says are A4000: exit 1 naming row, value and --gpu",
            rc == 1 && err && strstr(err, "row 11") && strstr(err, "'A4000'") &&
                strstr(err, "--gpu A100"));
  CHECK_MSG("...and no model is written", access(model, F_OK) != 0);
  free(out), free(err), out = err = NULL;
  rc = kc(&out, &err, "train --csv '%s' --target y --gpu a100 --trees 5 -o '%s'", one, model);
  CHECK_MSG("a gpu column that agrees (any case, any alias) is fine", rc == 0);
  free(out), free(err), out = err = NULL;
  rc = kc(&out, &err, "train --csv '%s' --target y --trees 5 -o '%s'", csv, model);
  CHECK_MSG("without --gpu the column names each row's GPU", rc == 0);
  free(out), free(err), out = err = NULL;
  rm_rf(dir);
}

/* ------------------------------------------------- --measured -- */

/*
 * predict --measured compared whatever column it was given: a time model
 * against power_w@T4 (MAPE in the millions of percent), a T4 model
 * against time_ns@K80, the analytic estimate (us) against kcast's own
 * export time_ns@T4 (read as us: MAPE 99.9 %), and --measured-unit was
 * ignored with --model.  The column's unit comes from its name or
 * --measured-unit and is converted; another quantity, another GPU or a
 * unit that contradicts the name is an error.
 */
static void test_measured_is_what_is_predicted(void) {
  char dir[4096], db[4200], csv[4200], csv2[4200], model[4200];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "jr-meas"));
  snprintf(db, sizeof db, "%s/d.db", dir);
  snprintf(csv, sizeof csv, "%s/d.csv", dir);
  snprintf(csv2, sizeof csv2, "%s/u.csv", dir);
  snprintf(model, sizeof model, "%s/m.kcm", dir);
  CU_ASSERT_EQUAL_FATAL(write_dataset(db, 40, "T4"), 0);
  CU_ASSERT_EQUAL_FATAL(kc(NULL, NULL, "dataset export '%s' -o '%s'", db, csv), 0);
  CU_ASSERT_EQUAL_FATAL(kc(NULL, NULL, "train '%s' --gpu T4 --trees 10 -o '%s'", db, model), 0);
  /* the export with one more column: the T4 time in us, its name no unit */
  char cmd[9000];
  snprintf(cmd, sizeof cmd, "awk -F, 'NR==1{for(i=1;i<=NF;i++)if($i==\"time_ns@T4\")c=i; print $0\",t\"; "
           "next}{print $0\",\"$c/1000}' '%s' > '%s'", csv, csv2);
  CU_ASSERT_EQUAL_FATAL(tests_run(cmd, NULL, NULL), 0);
  char *out = NULL, *err = NULL;
  int rc = kc(&out, &err, "predict --model '%s' --features '%s' --measured power_w@T4", model, csv);
  CHECK_MSG("a time model against power_w@T4: exit 1 naming both units, before any output",
            rc == 1 && err && strstr(err, "in W") && strstr(err, "in ns") && out && !*out);
  free(out), free(err), out = err = NULL;
  rc = kc(&out, &err, "predict --model '%s' --features '%s' --measured time_ns@K80", model, csv);
  CHECK_MSG("a T4 model against time_ns@K80: exit 1 naming both GPUs",
            rc == 1 && err && strstr(err, "K80") && strstr(err, "for T4"));
  free(out), free(err), out = err = NULL;
  rc = kc(&out, &err, "predict --model '%s' --features '%s' --measured time_ns@T4", model, csv);
  double ref = mape_of(err);
  CHECK_MSG("a T4 model against time_ns@T4 compares", rc == 0 && ref < 50);
  free(out), free(err), out = err = NULL;
  rc = kc(&out, &err, "predict --model '%s' --features '%s' --measured t --measured-unit us", model,
          csv2);
  CHECK_MSG("--measured-unit us converts us to the model's ns (was ignored: 1000x)",
            rc == 0 && fabs(mape_of(err) - ref) < 0.02);
  free(out), free(err), out = err = NULL;
  rc = kc(&out, &err, "predict --model '%s' --features '%s' --measured t", model, csv2);
  CHECK_MSG("a column whose name spells no unit: a note says which unit is assumed",
            rc == 0 && err && strstr(err, "spells no unit") && strstr(err, "in ns"));
  free(out), free(err), out = err = NULL;
  rc = kc(&out, &err, "predict --model '%s' --features '%s' --measured time_ns@T4 "
          "--measured-unit us", model, csv);
  CHECK_MSG("--measured-unit that contradicts the column's name: exit 1", rc == 1 && err &&
            strstr(err, "contradicts"));
  free(out), free(err), out = err = NULL;
  /* the analytic estimate is in us: time_ns@T4 and the same times in us
     give the same figures */
  rc = kc(&out, &err, "predict --gpu T4 --features '%s' --measured time_ns@T4", csv);
  double a = mape_of(err);
  free(out), free(err), out = err = NULL;
  int rc2 = kc(&out, &err, "predict --gpu T4 --features '%s' --measured t --measured-unit us", csv2);
  double b = mape_of(err);
  CHECK_MSG("the analytic estimate against time_ns@T4 reads ns as ns (as the us column)",
            rc == 0 && rc2 == 0 && isfinite(a) && fabs(a - b) < 0.02 && a < 99);
  free(out), free(err), out = err = NULL;
  rc = kc(&out, &err, "predict --gpu T4,K80 --features '%s' --measured time_ns@T4", csv);
  CHECK_MSG("the analytic estimate on K80 against T4's times: exit 1", rc == 1 && err &&
            strstr(err, "for K80"));
  free(out), free(err), out = err = NULL;
  /* a gpu column naming each row's GPU: rows of another GPU than the one
     predicted for carry another GPU's measurement */
  snprintf(cmd, sizeof cmd, "awk -F, 'NR==1{print $0\",gpu\"; next}{print $0\",\"(NR>30?\"K80\":\"T4\")}' "
           "'%s' > '%s.g'", csv2, csv2);
  CU_ASSERT_EQUAL_FATAL(tests_run(cmd, NULL, NULL), 0);
  rc = kc(&out, &err, "predict --model '%s' --features '%s.g' --measured t --measured-unit us",
          model, csv2);
  CHECK_MSG("a T4 model against rows the gpu column says are K80's: exit 1 naming the row",
            rc == 1 && err && strstr(err, "row 30") && strstr(err, "'K80'"));
  free(out), free(err), out = err = NULL;
  rc = kc(&out, &err, "predict --gpu T4 --features '%s.g' --measured t --measured-unit us", csv2);
  CHECK_MSG("...and the analytic estimate on T4 alike", rc == 1 && err && strstr(err, "'K80'"));
  free(out), free(err), out = err = NULL;
  rc = kc(&out, &err, "predict --gpu-column gpu --features '%s.g' --measured t --measured-unit us",
          csv2);
  CHECK_MSG("--gpu-column gpu estimates each row on its own GPU", rc == 0);
  free(out), free(err), out = err = NULL;
  rm_rf(dir);
}

/*
 * One launch measured at 0 ns (a timer's floor, a broken import) made `kcast
 * train DB` fail with "--base an.time_us needs a log target (every target >
 * 0, without --no-log-target)": an option the user never gave, and no word
 * of which launch.  The message names the launch and the way out.
 */
static void test_a_zero_time_names_its_launch(void) {
  char dir[4096], db[4200], model[4200], cmd[9000];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "jr-zero"));
  snprintf(db, sizeof db, "%s/d.db", dir);
  snprintf(model, sizeof model, "%s/m.kcm", dir);
  CU_ASSERT_EQUAL_FATAL(write_dataset(db, 30, "T4"), 0);
  snprintf(cmd, sizeof cmd, "sqlite3 '%s' \"UPDATE measurements SET value = 0 WHERE gpu = 'T4' "
           "AND metric = 'time_ns' AND launch_id = (SELECT id FROM launches WHERE lseq = 7)\"", db);
  CU_ASSERT_EQUAL_FATAL(tests_run(cmd, NULL, NULL), 0);
  char *out = NULL, *err = NULL;
  int rc = kc(&out, &err, "train '%s' --gpu T4 --trees 5 -o '%s'", db, model);
  CHECK_MSG("a launch timed at 0: exit 1 naming its keys, the default base and the way out",
            rc == 1 && err && strstr(err, "lseq 7") && strstr(err, "default base") &&
                strstr(err, "--base none --no-log-target") && access(model, F_OK) != 0);
  free(out), free(err), out = err = NULL;
  rc = kc(&out, &err, "train '%s' --gpu T4 --trees 5 --base none --no-log-target -o '%s'", db,
          model);
  CHECK_MSG("...which trains", rc == 0);
  free(out), free(err), out = err = NULL;
  rm_rf(dir);
}

/* ------------------------------------------------- GPU names -- */

/*
 * Measurements of one GPU imported under two names (`--gpu 'Tesla T4'`
 * once, `--gpu T4` once): `cv --gpu t4` took the first and left the other
 * out; `--gpu all` made two GPUs of it, whose rows then trained and tested
 * each other.  Both are an error naming the two names.
 */
static void test_one_gpu_under_two_names_is_refused(void) {
  char dir[4096], db[4200], db2[4200];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "jr-names"));
  snprintf(db, sizeof db, "%s/d.db", dir);
  snprintf(db2, sizeof db2, "%s/e.db", dir);
  CU_ASSERT_EQUAL_FATAL(write_dataset(db, 30, "T4"), 0);
  CU_ASSERT_EQUAL_FATAL(write_dataset(db2, 30, "Tesla T4"), 0);
  /* the second file's launches are other runs of the same inputs */
  char cmd[9000];
  snprintf(cmd, sizeof cmd, "sqlite3 '%s' \"UPDATE launches SET dataset = 'again'\"", db2);
  CU_ASSERT_EQUAL_FATAL(tests_run(cmd, NULL, NULL), 0);
  CU_ASSERT_EQUAL_FATAL(kc(NULL, NULL, "dataset merge '%s' '%s'", db, db2), 0);
  char *out = NULL, *err = NULL;
  int rc = kc(&out, &err, "cv '%s' --gpu t4 --trees 5 --folds 3", db);
  CHECK_MSG("cv --gpu t4 on T4 and 'Tesla T4': exit 1 naming both names",
            rc == 1 && err && strstr(err, "'T4'") && strstr(err, "'Tesla T4'"));
  free(out), free(err), out = err = NULL;
  rc = kc(&out, &err, "cv '%s' --gpu all --trees 5 --group gpu", db);
  CHECK_MSG("cv --gpu all --group gpu: exit 1, not two GPUs of one",
            rc == 1 && err && strstr(err, "two names"));
  free(out), free(err), out = err = NULL;
  rc = kc(&out, &err, "cv '%s' --gpu K80 --trees 5 --folds 3", db);
  CHECK_MSG("a GPU under one name still works", rc == 0);
  free(out), free(err), out = err = NULL;
  rm_rf(dir);
}

/*
 * `import-mangrove --gpu Z80` (K80 mistyped) stored the times under Z80
 * without a word; every model of them then lacked the analytic base.  A
 * GPU key the table does not know gets a note, with the nearest name.
 */
static void test_an_unknown_gpu_key_is_noted(void) {
  char dir[4096], cf[4200], db[4200];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "jr-key"));
  snprintf(cf, sizeof cf, "%s/c.json", dir);
  snprintf(db, sizeof db, "%s/k.db", dir);
  static const char cache[] =
      "{\"device_name\": \"NVIDIA A100-PCIE-40GB\", \"kernel_name\": \"scale_add\", "
      "\"problem_size\": [100000], \"tune_params_keys\": [\"block_size_x\"], \"tune_params\": "
      "{\"block_size_x\": [32]}, \"objective\": \"time\", \"cache\": {\"32\": "
      "{\"block_size_x\": 32, \"time\": 0.5, \"times\": [0.5, 0.5]}}}\n";
  CU_ASSERT_EQUAL_FATAL(tests_write_file(cf, cache, sizeof cache - 1), 0);
  char *out = NULL, *err = NULL;
  int rc = kc(&out, &err, "dataset import-kerneltuner '%s' -o '%s' --gpu Z80", cf, db);
  CHECK_MSG("--gpu Z80: imported, with a note that the table lacks it and K80 is near",
            rc == 0 && err && strstr(err, "'Z80' is not in the GPU table") &&
                strstr(err, "did you mean K80"));
  free(out), free(err), out = err = NULL;
  rc = kc(&out, &err, "dataset import-kerneltuner '%s' -o '%s.2' --gpu 'Tesla T4'", cf, db);
  CHECK_MSG("--gpu 'Tesla T4' (an alias of the table): no note",
            rc == 0 && err && !strstr(err, "not in the GPU table"));
  free(out), free(err), out = err = NULL;
  rm_rf(dir);
}

/* ---------------------------------------------- extrapolation -- */

/* A NeuSight-format file of relu launches on a T4. */
static int write_relu(const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  fprintf(f, "OPName,Latency,Device,Torch Version,Kernel Name,Warps per SM,Blocks per SM,"
             "Grid x,Grid y,Grid z,Block x,Block y,Block z,CUDA Version,Kernels,B,H\n");
  for (int i = 0; i < 40; i++) {
    int b = 1 << (i % 8), h = 256 << (i % 5);
    double el = (double)b * h;
    fprintf(f, "relu,%.6f,Tesla T4,p2.1.0,vectorized_elementwise_kernel<4>,1,1,%.0f,1,1,128,1,1,"
               "cu121,;vectorized_elementwise_kernel<4>,%d,%d\n",
            0.01 + el * 2e-8, ceil(el / 512), b, h);
  }
  return fclose(f);
}

/*
 * predict --features marked rows outside the model's training range; the
 * same forest answering `predict FILE`, `predict --op` (a bmm to a model
 * that saw only relu launches) or `predict --featmodel` said nothing.
 * Now each says so in a note naming the feature (json: "outside").
 */
static void test_every_forest_answer_says_when_it_extrapolates(void) {
  char dir[4096], db[4200], model[4200], ns[4200], ops[4200], omodel[4200];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "jr-out"));
  snprintf(db, sizeof db, "%s/d.db", dir);
  snprintf(model, sizeof model, "%s/m.kcm", dir);
  snprintf(ns, sizeof ns, "%s/relu__Tesla_T4.csv", dir);
  snprintf(ops, sizeof ops, "%s/ops.db", dir);
  snprintf(omodel, sizeof omodel, "%s/ops.kcm", dir);
  CU_ASSERT_EQUAL_FATAL(write_dataset(db, 40, "T4"), 0);
  CU_ASSERT_EQUAL_FATAL(kc(NULL, NULL, "train '%s' --gpu T4 --trees 10 -o '%s'", db, model), 0);
  char *out = NULL, *err = NULL;
  int rc = kc(&out, &err, "predict tests/ptx/saxpy_nvcc.ptx --kernel saxpy --grid 4096 --block 256 "
              "--arg 1048576 --arg 2.0 --arg buf:4M --arg buf:4M --model '%s' --format json",
              model);
  CHECK_MSG("predict FILE beyond the training launches: a note naming the feature",
            rc == 0 && err && strstr(err, "outside the model's training range") &&
                strstr(err, "an extrapolation"));
  CHECK_MSG("...and its JSON row says outside", out && strstr(out, "\"outside\""));
  free(out), free(err), out = err = NULL;
  CU_ASSERT_EQUAL_FATAL(write_relu(ns), 0);
  CU_ASSERT_EQUAL_FATAL(kc(NULL, NULL, "dataset import-neusight '%s' -o '%s'", ns, ops), 0);
  CU_ASSERT_EQUAL_FATAL(kc(NULL, NULL, "train '%s' --gpu T4 --trees 10 -o '%s'", ops, omodel), 0);
  rc = kc(&out, &err, "predict --op 'bmm B=8 M=512 N=512 K=64' --model '%s' --gpu T4", omodel);
  CHECK_MSG("a bmm to a model of relu launches: a note that it rests on opr.* outside the range",
            rc == 0 && err && strstr(err, "outside the model's training range") &&
                strstr(err, "opr."));
  free(out), free(err), out = err = NULL;
  rc = kc(&out, &err, "predict --op 'relu B=8 H=1024' --model '%s' --gpu T4", omodel);
  CHECK_MSG("a relu inside the training launches: no such note",
            rc == 0 && err && !strstr(err, "outside the model's training range"));
  free(out), free(err), out = err = NULL;
  rm_rf(dir);
}

/*
 * tune-space --model ranked a tuning space with a model whose training
 * launches were nothing like the kernel's (a model of operator launches
 * reads every opr.* of a PTX kernel as 0), without a word.  A note counts
 * the predictions resting on a feature outside the model's range.
 */
static void test_tune_space_says_when_it_extrapolates(void) {
  char dir[4096], db[4200], model[4200];
  if (tests_run("command -v nvcc >/dev/null 2>&1", NULL, NULL) != 0) {
    fprintf(stderr, "(nvcc missing: skipped) ");
    return;
  }
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "jr-tune-space"));
  snprintf(db, sizeof db, "%s/d.db", dir);
  snprintf(model, sizeof model, "%s/m.kcm", dir);
  CU_ASSERT_EQUAL_FATAL(write_dataset(db, 30, "T4"), 0);
  CU_ASSERT_EQUAL_FATAL(kc(NULL, NULL, "train '%s' --gpu T4 --trees 5 -o '%s'", db, model), 0);
  char *out = NULL, *err = NULL;
  int rc = kc(&out, &err, "tune-space --source tests/tuning/scale_add.cu --kernel scale_add "
              "--param block_size_x=32,64 --param tile_size_x=1 --param use_bias=0 "
              "--problem-size 100000 --grid-div-x block_size_x,tile_size_x --arg buf:400k "
              "--arg buf:400k:randf --arg 100000 --const scale=randf:3 -j 1 --model '%s' "
              "--csv -", model);
  CHECK_MSG("tune-space with a model of other launches: a note counts the extrapolations",
            rc == 0 && err && strstr(err, "2 of 2 predictions rest on a feature outside"));
  CHECK_MSG("(the model of this kcast's estimate: no warning)",
            err && !strstr(err, "another version of the analytic estimate"));
  free(out), free(err), out = err = NULL;
  /* the same model as a kcast of the next estimate version wrote it (its
     last field, docs/formats.md version 9): ranked with a warning */
  size_t len = 0;
  unsigned char *img = (unsigned char *)tests_read_file(model, &len);
  CU_ASSERT_FATAL(img != NULL && len > 32);
  uint32_t next = AN_VERSION + 1, ver = 0;
  memcpy(&ver, img + 8, 4);
  CHECK_MSG("a model of an analytic base is file version 9", ver == 9);
  memcpy(img + len - 8, &next, 4);
  uint32_t crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), img, (uInt)(len - 4));
  memcpy(img + len - 4, &crc, 4);
  CU_ASSERT_FATAL(tests_write_file(model, img, len) == 0);
  free(img);
  rc = kc(&out, &err, "tune-space --source tests/tuning/scale_add.cu --kernel scale_add "
          "--param block_size_x=32,64 --param tile_size_x=1 --param use_bias=0 "
          "--problem-size 100000 --grid-div-x block_size_x,tile_size_x --arg buf:400k "
          "--arg buf:400k:randf --arg 100000 --const scale=randf:3 -j 1 --model '%s' "
          "--csv -", model);
  const char *w = err ? strstr(err, "another version of the analytic estimate") : NULL;
  CHECK_MSG("tune-space with a model of another estimate: ranked, with one warning",
            rc == 0 && w && !strstr(w + 1, "another version of the analytic estimate"));
  free(out), free(err);
  rm_rf(dir);
}

/* ---------------------------------------------- operator shapes -- */

/*
 * `predict --op 'relu B=2147483647 H=2147483647'` printed grid 4286578688
 * (2^53 CTAs cut to 32 bits), 'bmm B=100000 ...' a grid z of 100000 and
 * 'conv B=2147483647 ...' "grid and block are needed"; relu run by an
 * sgemm kernel and a bmm whose grid cannot hold its tiles were predicted
 * as given; 201 GB of tensors on a 16 GB T4 without a word.  A description
 * that is no launch is refused, naming why; tensors too large for a GPU
 * are said in a note.
 */
static void test_operator_descriptions_that_are_no_launch(void) {
  static const struct { const char *op, *want; } bad[] = {
    {"relu B=2147483647 H=2147483647", "beyond CUDA's limits"},
    {"relu B=1048576 H=1048576", "2147483648 x 1 x 1"},
    {"bmm B=100000 M=64 N=64 K=64", "beyond CUDA's limits"},
    {"conv B=2147483647 Cin=3 Cout=64 Kernel=3 Size=2147483647 Stride=1 Padding=1",
     "beyond CUDA's limits"},
    {"bmm B=8 M=512 N=512 K=64 grid=1,70000,1", "beyond CUDA's limits"},
    {"relu B=4 H=4 kernel=volta_sgemm_128x64_nn", "another operator class (matrix product)"},
    {"bmm B=8 M=512 N=512 K=64 kernel=softmax_warp_forward", "another operator class (softmax)"},
    {"bmm B=8 M=512 N=512 K=64 kernel=volta_sgemm_128x128_nn grid=1,1,1", "fewer than the 32 tiles"},
  };
  char *out = NULL, *err = NULL, msg[300];
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    int rc = kc(&out, &err, "predict --op '%s' --gpu T4 --format csv", bad[i].op);
    snprintf(msg, sizeof msg, "--op '%s': exit 1 saying %s", bad[i].op, bad[i].want);
    CHECK_MSG(msg, rc == 1 && err && strstr(err, bad[i].want));
    free(out), free(err), out = err = NULL;
  }
  static const char *const good[] = {
    "bmm B=8 M=512 N=512 K=64 kernel=volta_sgemm_128x128_nn grid=1,4,8",
    "conv B=8 Cin=64 Cout=64 Kernel=3 Size=56 Stride=1 Padding=1 kernel=volta_sgemm_128x64_nn",
    "add B=2 H=3 kernel=k grid=5 block=64",
    "relu B=1048576 H=1024",
  };
  for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
    int rc = kc(&out, &err, "predict --op '%s' --gpu T4 --format csv", good[i]);
    snprintf(msg, sizeof msg, "--op '%s' is one launch: predicted", good[i]);
    CHECK_MSG(msg, rc == 0);
    free(out), free(err), out = err = NULL;
  }
  int rc = kc(&out, &err, "predict --op 'relu B=64 H=1024' --gpu t4,A100 --format csv");
  CHECK_MSG("--op --gpu t4,A100: a row for each (the list was 'unknown GPU')",
            rc == 0 && out && strstr(out, ",T4,") && strstr(out, ",A100,"));
  free(out), free(err), out = err = NULL;
  rc = kc(&out, &err, "predict --op 'bmm B=1000 M=4096 N=4096 K=4096' --gpu T4");
  CHECK_MSG("201 GB of tensors on a 16 GB T4: a note says no such launch runs there",
            rc == 0 && err && strstr(err, "more than the memory of T4"));
  free(out), free(err), out = err = NULL;
  kcast_features *fs = NULL;
  CHECK_MSG("kcast_features_from_op refuses a shape no launch covers",
            kcast_features_from_op("relu B=1048576 H=1048576", NULL, 0, &fs) == KCAST_E_ARG &&
                strstr(kcast_last_error(), "beyond CUDA's limits"));
  kcast_features_free(fs);
}

/* ---------------------------------------------- feature models -- */

/*
 * The suite ran triad at n = grid x block only, so its feature model's
 * forms read threads and not n; `predict --featmodel` at n = 100 on 1024
 * threads answered 1024 stores (the kernel makes 100) with no note.  An
 * argument the sizes tied to the configuration is range-checked: outside
 * its trained values the answer is marked extrapolated.
 */
static void test_featmodel_argument_tied_to_the_grid(void) {
  char dir[4096], kcf[4200];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "jr-fm"));
  snprintf(kcf, sizeof kcf, "%s/t.kcf", dir);
  CU_ASSERT_EQUAL_FATAL(kc(NULL, NULL, "featmodel fit datasets/data/suite-features.db --kernel "
                           "triad -o '%s'", kcf), 0);
  char *out = NULL, *err = NULL;
  int rc = kc(&out, &err, "predict --featmodel '%s' --grid 8 --block 128 --arg buf --arg buf "
              "--arg buf --arg 2.0 --arg 100 --gpu T4", kcf);
  CHECK_MSG("triad at n = 100 on 1024 threads: marked an extrapolation",
            rc == 0 && err && strstr(err, "extrapolated"));
  free(out), free(err), out = err = NULL;
  rc = kc(&out, &err, "predict --featmodel '%s' --grid 8 --block 128 --arg buf --arg buf "
          "--arg buf --arg 3.5 --arg 1024 --gpu T4", kcf);
  CHECK_MSG("...at n = 1024 (as fitted), another scale factor: no note",
            rc == 0 && err && !strstr(err, "extrapolated"));
  free(out), free(err), out = err = NULL;
  rm_rf(dir);
}

/* ------------------------------------------------------ the C API -- */

/*
 * `kcast predict --gpu K80` refuses a model trained on T4 alone; the C API
 * (and so Python's Model.predict(df, gpu="K80")) answered with the T4
 * forest's ratios on K80's estimate.  Now it refuses alike.
 */
static void test_a_one_gpu_model_answers_for_its_gpu_only(void) {
  char dir[4096], db[4200], model[4200];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "jr-api"));
  snprintf(db, sizeof db, "%s/d.db", dir);
  snprintf(model, sizeof model, "%s/m.kcm", dir);
  CU_ASSERT_EQUAL_FATAL(write_dataset(db, 30, "T4"), 0);
  CU_ASSERT_EQUAL_FATAL(kc(NULL, NULL, "train '%s' --gpu T4 --trees 5 -o '%s'", db, model), 0);
  kcast_model *m = NULL;
  CU_ASSERT_EQUAL_FATAL(kcast_model_load(model, &m), KCAST_OK);
  const char *names[] = {"launch.ctas", "launch.grid_x", "launch.block_x", "launch.block_y",
                         "launch.block_z", "launch.threads", "class.fp32", "class.ld_global",
                         "mem.global_bytes"};
  double vals[] = {16, 16, 128, 1, 1, 2048, 2048 * 12, 4096, 16384};
  kcast_features *fs = NULL;
  CU_ASSERT_EQUAL_FATAL(kcast_features_new(&fs), KCAST_OK);
  for (size_t k = 0; k < sizeof vals / sizeof *vals; k++)
    CU_ASSERT_EQUAL_FATAL(kcast_features_set(fs, names[k], vals[k]), KCAST_OK);
  kcast_prediction p;
  CHECK_MSG("kcast_predict_gpu for the model's own GPU (any spelling) answers",
            kcast_predict_gpu(m, "Tesla T4", fs, 0.9, &p) == KCAST_OK && p.value > 0);
  CHECK_MSG("...for another GPU it is KCAST_E_ARG naming both",
            kcast_predict_gpu(m, "K80", fs, 0.9, &p) == KCAST_E_ARG &&
                strstr(kcast_last_error(), "T4 only") && strstr(kcast_last_error(), "K80"));
  unsigned flags = 0;
  CHECK_MSG("...and so is kcast_predict_check's question for it",
            kcast_predict_check(m, "K80", fs, &flags, NULL) == KCAST_E_ARG);
  kcast_model_free(m);
  m = NULL;
  CU_ASSERT_EQUAL_FATAL(kc(NULL, NULL, "train '%s' --gpu T4,K80 --trees 5 -o '%s'", db, model),
                        0);
  CU_ASSERT_EQUAL_FATAL(kcast_model_load(model, &m), KCAST_OK);
  CHECK_MSG("a model of two GPUs answers for a third, flagged unseen",
            kcast_predict_gpu(m, "H100", fs, 0.9, &p) == KCAST_OK && p.value > 0 &&
                kcast_predict_check(m, "H100", fs, &flags, NULL) == KCAST_OK &&
                (flags & KCAST_CHECK_UNSEEN_GPU));
  kcast_features_free(fs);
  kcast_model_free(m);
  rm_rf(dir);
}

/* --------------------------------------------------------------- suites -- */

TEST_SUITES(register_reliability_journeys) {
  CU_pSuite s = tests_suite("reliability_journeys");
  TEST_ADD(s, test_a_tables_other_measurements_are_not_features);
  TEST_ADD(s, test_gpu_and_the_files_gpu_column_agree);
  TEST_ADD(s, test_measured_is_what_is_predicted);
  TEST_ADD(s, test_a_zero_time_names_its_launch);
  TEST_ADD(s, test_one_gpu_under_two_names_is_refused);
  TEST_ADD(s, test_an_unknown_gpu_key_is_noted);
  TEST_ADD(s, test_every_forest_answer_says_when_it_extrapolates);
  TEST_ADD(s, test_tune_space_says_when_it_extrapolates);
  TEST_ADD(s, test_operator_descriptions_that_are_no_launch);
  TEST_ADD(s, test_featmodel_argument_tied_to_the_grid);
  TEST_ADD(s, test_a_one_gpu_model_answers_for_its_gpu_only);
}
