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

#include "datasets/ds.h"
#include "include/kcast.h"

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

/* --------------------------------------------------------------- suites -- */

TEST_SUITES(register_reliability_journeys) {
  CU_pSuite s = tests_suite("reliability_journeys");
  TEST_ADD(s, test_a_tables_other_measurements_are_not_features);
  TEST_ADD(s, test_gpu_and_the_files_gpu_column_agree);
}
