/*
 * test_reliability_answers.c -- `make reliability`, second part: no silent
 * wrong answer.  Each case is a way kcast used to hand back something
 * wrong without a word -- a second --time quietly winning, a model trained
 * on the measurements it should predict, a prediction without its unit,
 * launches of a forked process dropped, a dataset a kill left unreadable,
 * a hung compiler, leftovers of a killed run, a misleading message -- and
 * checks that it now either answers right or says what is wrong (one line,
 * a non-zero exit).
 *
 * The cases drive the CLI (KCAST_BIN) and, where the fault lives there,
 * the library.  Cases that need something this machine lacks (nvcc, the
 * suite programs) say so and skip.
 */
#include "tests.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "datasets/ds.h"
#include "model/model.h"

#define CHECK_MSG(msg, cond) \
  CU_assertImplementation(!!(cond), __LINE__, (msg), __FILE__, "", CU_FALSE)

/* Run a printf-formatted shell command; see tests_run. */
__attribute__((format(printf, 3, 4)))
static int sh(char **out, char **err, const char *fmt, ...) {
  char cmd[16384];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(cmd, sizeof cmd, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= sizeof cmd) return -1;
  return tests_run(cmd, out, err);
}

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

static int have_tool(const char *name) {
  char cmd[256];
  snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", name);
  return tests_run(cmd, NULL, NULL) == 0;
}

/* Lines of s (a last line without newline counts). */
static unsigned count_lines(const char *s) {
  unsigned n = 0;
  for (const char *p = s; p && *p; p++)
    if (*p == '\n' || !p[1]) n++;
  return n;
}

/* A dataset of n launches of two apps with features and the median-able
   measurements time_ns and power_w on GPUs T4 and K80 (K80 slower, more
   power), time proportional to the work. */
static int write_dataset(const char *path, int n) {
  char err[512];
  ds_db *db = NULL;
  if (ds_open(path, DS_CREATE, &db, err, sizeof err)) return -1;
  int rc = ds_begin(db);
  for (int i = 0; i < n && !rc; i++) {
    ds_launch l = {NULL, i % 2 ? "appb" : "appa", "in", i, "_Z4kernPf",
                   {(uint32_t)(8 + i), 1, 1}, {128, 1, 1}, 0, "test"};
    feat_vec v;
    feat_init(&v);
    double ctas = 8 + i;
    feat_set(&v, "launch.ctas", ctas);
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
    rc = rc || ds_insert_measurement(db, id, "T4", "time_ns", t, 0, "test") ||
         ds_insert_measurement(db, id, "T4", "power_w", 40 + i % 5, 0, "test") ||
         ds_insert_measurement(db, id, "K80", "time_ns", 3 * t, 0, "test") ||
         ds_insert_measurement(db, id, "K80", "power_w", 90 + i % 3, 0, "test");
  }
  rc = rc || ds_commit(db);
  ds_close(db);
  return rc ? -1 : 0;
}

/* ------------------------------------------ options: one value, once -- */

/*
 * `import-mangrove --time A.db --time B.db --gpu T4` stored B's (K80)
 * times as T4 with exit 0.  Every option that takes one value refuses a
 * second one, naming both; the options that collect values still do.
 */
static void test_an_option_given_twice_is_refused(void) {
  char dir[4096], db[4200];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "ans-opt"));
  snprintf(db, sizeof db, "%s/out.db", dir);
  char *out = NULL, *err = NULL;
  int rc = kc(&out, &err, "dataset import-mangrove --features a.db --time A.db --time B.db "
              "--gpu T4 -o '%s'", db);
  CHECK_MSG("a second --time is a usage error (exit 2) naming both values",
            rc == 2 && err && strstr(err, "--time") && strstr(err, "A.db") &&
                strstr(err, "B.db"));
  CHECK_MSG("...and nothing is written", access(db, F_OK) != 0);
  free(out), free(err);
  rc = kc(&out, &err, "train --csv x.csv --target y -o a.kcm --output b.kcm");
  CHECK_MSG("-o and --output are one option: given both, exit 2 naming both spellings",
            rc == 2 && err && strstr(err, "-o and --output") && strstr(err, "a.kcm") &&
                strstr(err, "b.kcm"));
  free(out), free(err);
  rc = kc(&out, &err, "run --timeout 5 --timeout=10 -- /bin/true");
  CHECK_MSG("run: --timeout twice refused before anything runs", rc == 2 && err &&
            strstr(err, "--timeout given twice"));
  free(out), free(err);
  rc = kc(&out, &err, "extract tests/ptx/saxpy_nvcc.ptx -std=c++17 --std c++20");
  CHECK_MSG("-std and --std are one option", rc == 2 && err && strstr(err, "-std and --std"));
  free(out), free(err);
  /* the collecting options: --arg (and --dump), -I, -D */
  rc = kc(&out, &err, "emulate tests/ptx/saxpy_nvcc.ptx --grid 1 --block 32 --arg 32 --arg 2.0 "
          "--arg buf:128 --arg buf:128 --format csv");
  CHECK_MSG("--arg still collects one value per parameter", rc == 0);
  free(out), free(err);
  if (have_tool("nvcc")) {
    rc = kc(&out, &err, "extract tests/kernels/saxpy.cu -I include -I . -D A=1 -D B=2");
    CHECK_MSG("-I and -D still collect", rc == 0 && out && strstr(out, "_Z5saxpyifPKfPf"));
    free(out), free(err);
  }
  sh(NULL, NULL, "rm -rf '%s'", dir);
}

/*
 * A misspelled command, subcommand or option gets "did you mean"; every
 * usage error exits 2 (a dataset without --gpu in train exited 1).
 */
static void test_usage_errors_exit_2_and_suggest(void) {
  char *out = NULL, *err = NULL;
  int rc = kc(&out, &err, "tarin --csv x.csv");
  CHECK_MSG("kcast tarin: exit 2, did you mean 'train'", rc == 2 && err &&
            strstr(err, "did you mean 'train'"));
  free(out), free(err);
  rc = kc(&out, &err, "dataset stat x.db");
  CHECK_MSG("dataset stat: did you mean 'stats'", rc == 2 && err && strstr(err, "'stats'"));
  free(out), free(err);
  rc = kc(&out, &err, "model inof x.kcm");
  CHECK_MSG("model inof: did you mean 'info'", rc == 2 && err && strstr(err, "'info'"));
  free(out), free(err);
  rc = kc(&out, &err, "train --csv x.csv --target y --tress 10");
  CHECK_MSG("--tress: did you mean --trees", rc == 2 && err && strstr(err, "--trees?"));
  free(out), free(err);
  rc = kc(&out, &err, "cv --csv x.csv --target y --fodls 3");
  CHECK_MSG("--fodls: did you mean --folds", rc == 2 && err && strstr(err, "--folds?"));
  free(out), free(err);
  rc = kc(&out, &err, "train datasets/data/suite-features.db --target time");
  CHECK_MSG("train DB without --gpu is a usage error: exit 2", rc == 2 && err &&
            strstr(err, "--gpu"));
  free(out), free(err);
}

/* ------------------------------------------- training on the targets -- */

/*
 * `kcast train --csv` on kcast's own export trained on the other targets:
 * importance ranked power_w@T4, time_ns@K80 and id first.  Measurements
 * (METRIC@GPU), id and lseq are not features unless --features names them.
 */
static void test_export_measurements_are_not_features(void) {
  char dir[4096], db[4200], csv[4200], model[4200];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "ans-exp"));
  snprintf(db, sizeof db, "%s/d.db", dir);
  snprintf(csv, sizeof csv, "%s/d.csv", dir);
  snprintf(model, sizeof model, "%s/m.kcm", dir);
  CU_ASSERT_EQUAL_FATAL(write_dataset(db, 60), 0);
  CU_ASSERT_EQUAL_FATAL(kc(NULL, NULL, "dataset export '%s' --format csv -o '%s'", db, csv), 0);
  char *out = NULL, *err = NULL;
  int rc = kc(&out, &err, "train --csv '%s' --target time_ns@T4 --trees 20 -o '%s'", csv, model);
  CHECK_MSG("train --csv on an export succeeds", rc == 0);
  CHECK_MSG("...saying which measurement and key columns it left out",
            err && strstr(err, "not features") && strstr(err, "time_ns@K80") &&
                strstr(err, "power_w@T4") && strstr(err, "lseq"));
  free(out), free(err);
  rc = kc(&out, &err, "model importance '%s'", model);
  CHECK_MSG("no measurement of any GPU is a feature of the model",
            rc == 0 && out && !strstr(out, "@T4") && !strstr(out, "@K80"));
  CHECK_MSG("neither id nor lseq is a feature", out && !strstr(out, " id ") &&
            !strstr(out, " id\n") && !strstr(out, "lseq"));
  CHECK_MSG("the launch's features are", out && strstr(out, "class.fp32"));
  free(out), free(err);
  rc = kc(&out, &err, "train --csv '%s' --target time_ns@T4 --features all,time_ns@K80 "
          "--trees 20 -o '%s'", csv, model);
  free(out), free(err);
  rc = rc || kc(&out, &err, "model importance '%s'", model);
  CHECK_MSG("a measurement named in --features is one", rc == 0 && out &&
            strstr(out, "time_ns@K80") && !strstr(out, "power_w@T4"));
  free(out), free(err);
  sh(NULL, NULL, "rm -rf '%s'", dir);
}

/* ----------------------------------------------------------- units -- */

/*
 * The forest printed prediction,lo,hi in ns while the analytic printed
 * time_us; report --cv --unit us drew ns data on a us axis and took
 * --unit furlongs.  Every prediction names its unit, cv's predictions
 * file records it, report refuses a unit that contradicts the data.
 */
static void test_predictions_name_their_unit(void) {
  char dir[4096], db[4200], csv[4200], model[4200], pred[4200], html[4200];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "ans-unit"));
  snprintf(db, sizeof db, "%s/d.db", dir);
  snprintf(csv, sizeof csv, "%s/d.csv", dir);
  snprintf(model, sizeof model, "%s/m.kcm", dir);
  snprintf(pred, sizeof pred, "%s/oof.csv", dir);
  snprintf(html, sizeof html, "%s/r.html", dir);
  CU_ASSERT_EQUAL_FATAL(write_dataset(db, 40), 0);
  CU_ASSERT_EQUAL_FATAL(kc(NULL, NULL, "dataset export '%s' --format csv -o '%s'", db, csv), 0);
  CU_ASSERT_EQUAL_FATAL(kc(NULL, NULL, "train '%s' --gpu T4 --target time --trees 20 -o '%s'",
                           db, model), 0);
  char *out = NULL, *err = NULL;
  int rc = kc(&out, &err, "predict --model '%s' --features '%s'", model, csv);
  CHECK_MSG("predict's CSV names the unit of every row: ns for a dataset's time",
            rc == 0 && out && !strncmp(out, "prediction,lo,hi,unit\n", 22) &&
                strstr(out, ",ns\n"));
  free(out), free(err);
  rc = kc(&out, &err, "predict --model '%s' --features '%s' --format json", model, csv);
  CHECK_MSG("...its JSON too", rc == 0 && out && strstr(out, "\"unit\":\"ns\""));
  free(out), free(err);
  rc = kc(&out, &err, "predict --model '%s' --features '%s' --format table", model, csv);
  CHECK_MSG("...and its table's header", rc == 0 && out && strstr(out, "prediction (ns)"));
  CHECK_MSG("...whose numbers are plain (no exponent)", out && !strstr(out, "e+"));
  free(out), free(err);
  rc = kc(&out, &err, "cv '%s' --gpu T4 --target time --trees 10 --folds 3 --predictions '%s'",
          db, pred);
  char *p = tests_read_file(pred, NULL);
  CHECK_MSG("cv --predictions records the unit", rc == 0 && p && strstr(p, ",unit") &&
            strstr(p, ",ns,"));
  free(p), free(out), free(err);
  rc = kc(&out, &err, "report --cv '%s' --unit us -o '%s'", pred, html);
  CHECK_MSG("report --cv --unit us on ns predictions: refused (exit 1), naming both units",
            rc == 1 && err && strstr(err, "us") && strstr(err, "in ns") &&
                access(html, F_OK) != 0);
  free(out), free(err);
  rc = kc(&out, &err, "report --cv '%s' --unit furlongs -o '%s'", pred, html);
  CHECK_MSG("--unit furlongs is a usage error", rc == 2 && err && strstr(err, "furlongs"));
  free(out), free(err);
  rc = kc(&out, &err, "report --cv '%s' -o '%s'", pred, html);
  char *h = tests_read_file(html, NULL);
  CHECK_MSG("report --cv takes the recorded unit for its axes", rc == 0 && h &&
            strstr(h, "(ns, log scale)"));
  free(h), free(out), free(err);
  rc = kc(&out, &err, "report '%s' --model '%s' --unit W -o '%s'", db, model, html);
  CHECK_MSG("report DB --unit W on a time model: refused", rc == 1 && err && strstr(err, "ns"));
  free(out), free(err);
  sh(NULL, NULL, "rm -rf '%s'", dir);
}

/* ---------------------------------------------------- GPU names -- */

/*
 * --gpu t4 worked in predict and found nothing in train; --gpu H100,A100
 * was refused by predict.  One resolver: case-insensitive, aliases, lists;
 * unknown names get the known ones and --gpus FILE, a GPU without
 * measurements the GPUs that have them.
 */
static void test_one_gpu_resolver(void) {
  char dir[4096], db[4200], csv[4200];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "ans-gpu"));
  snprintf(db, sizeof db, "%s/d.db", dir);
  snprintf(csv, sizeof csv, "%s/d.csv", dir);
  CU_ASSERT_EQUAL_FATAL(write_dataset(db, 40), 0);
  char *out = NULL, *err = NULL;
  int rc = kc(&out, &err, "cv '%s' --gpu t4 --target time --trees 10 --folds 3", db);
  CHECK_MSG("cv --gpu t4 finds the dataset's T4", rc == 0);
  free(out), free(err);
  rc = kc(&out, &err, "cv '%s' --gpu 'Tesla K80,t4' --target time --trees 10 --folds 3", db);
  CHECK_MSG("...and a list of aliases finds K80 and T4", rc == 0);
  free(out), free(err);
  rc = kc(&out, &err, "cv '%s' --gpu A100 --target time --trees 10 --folds 3", db);
  CHECK_MSG("a GPU without measurements: exit 1 naming the GPUs that have them",
            rc == 1 && err && strstr(err, "A100") && strstr(err, "T4") && strstr(err, "K80") &&
                count_lines(err) == 1);
  free(out), free(err);
  CU_ASSERT_EQUAL_FATAL(kc(NULL, NULL, "dataset export '%s' --format csv -o '%s'", db, csv), 0);
  rc = kc(&out, &err, "predict --gpu h100,A100 --features '%s'", csv);
  CHECK_MSG("predict --gpu h100,A100: one row per launch and GPU",
            rc == 0 && out && strstr(out, "\nH100,") && strstr(out, "\nA100,") &&
                count_lines(out) == 1 + 2 * 40);
  free(out), free(err);
  rc = kc(&out, &err, "predict --gpu Z9000 --features '%s'", csv);
  CHECK_MSG("an unknown GPU: exit 1, the known ones and --gpus FILE in the message",
            rc == 1 && err && strstr(err, "Z9000") && strstr(err, "H200") &&
                strstr(err, "--gpus FILE"));
  free(out), free(err);
  rc = kc(&out, &err, "predict tests/ptx/saxpy_nvcc.ptx --kernel saxpy --grid 64 --block 256 "
          "--arg 16384 --arg 2.0 --arg buf:64k --arg buf:64k --gpu t4,H200");
  CHECK_MSG("predict FILE --gpu t4,H200: a row for each", rc == 0 && out && strstr(out, "\nT4 ") &&
            strstr(out, "\nH200 "));
  free(out), free(err);
  sh(NULL, NULL, "rm -rf '%s'", dir);
}

/* --------------------------------------------------------------- suites -- */

TEST_SUITES(register_reliability_answers) {
  CU_pSuite s = tests_suite("reliability_answers");
  TEST_ADD(s, test_an_option_given_twice_is_refused);
  TEST_ADD(s, test_usage_errors_exit_2_and_suggest);
  TEST_ADD(s, test_export_measurements_are_not_features);
  TEST_ADD(s, test_predictions_name_their_unit);
  TEST_ADD(s, test_one_gpu_resolver);
}
