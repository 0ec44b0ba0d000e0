/*
 * test_cli_model.c -- kcast train, cv, predict and model end to end on a
 * synthetic CSV: exit codes, output shapes, the JSON contract of
 * `cv --format json`, and one clear error line for bad input.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"

/* Assertions whose report is the statement they prove. */
#define CHECK_MSG(msg, cond) \
  CU_assertImplementation(!!(cond), __LINE__, (msg), __FILE__, "", CU_FALSE)
#define CHECK_EQ(a, b, msg) CHECK_MSG(msg, (a) == (b))
#define CHECK_STR(a, b, msg) CHECK_MSG(msg, strcmp((a), (b)) == 0)
#define CHECK_NN(p, msg) CHECK_MSG(msg, (p) != NULL)

static char dir[1024];
static char csv[1200], model[1200], feats[1200], badcsv[1200];

/* y = 3 x + noise-free step on z; app column for groups; a constant column. */
static int setup(void) {
  if (!tests_tmpdir(dir, sizeof dir, "climodel")) return -1;
  snprintf(csv, sizeof csv, "%s/train.csv", dir);
  snprintf(model, sizeof model, "%s/m.kcm", dir);
  snprintf(feats, sizeof feats, "%s/feats.csv", dir);
  snprintf(badcsv, sizeof badcsv, "%s/bad.csv", dir);
  FILE *f = fopen(csv, "w");
  if (!f) return -1;
  fprintf(f, "app,x,z,k,time\n");
  for (int i = 0; i < 600; i++) {
    double x = (i * 37 % 101) / 10.0, z = i % 7;
    fprintf(f, "%s,%g,%g,1,%g\n", i % 3 == 0 ? "alpha" : i % 3 == 1 ? "beta" : "gamma", x, z,
            1 + 3 * x + (z > 3 ? 5 : 0));
  }
  fclose(f);
  f = fopen(feats, "w");
  if (!f) return -1;
  fprintf(f, "note,z,x,k\nfirst,1,2.5,1\nsecond,6,9,1\nthird,0,0,1\n");
  fclose(f);
  f = fopen(badcsv, "w");
  if (!f) return -1;
  fprintf(f, "x,time\n1,2\n2,oops\n");
  fclose(f);
  return 0;
}

static int run(const char *args, char **out, char **err) {
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "%s %s", tests_kcast(), args);
  return tests_run(cmd, out, err);
}

static void test_train_info_importance(void) {
  CU_ASSERT_FATAL(setup() == 0);
  char args[4096], *out = NULL, *err = NULL;
  snprintf(args, sizeof args, "train --csv %s --target time --group app --drop-constant --trees 30 "
           "--log-target --gpu TestGPU --seed 3 --threads 2 --perm-importance -o %s", csv, model);
  int rc = run(args, &out, &err);
  CHECK_EQ(rc, 0, "kcast train exits 0 on a good CSV");
  CHECK_MSG("kcast train says what it wrote", out && strstr(out, "wrote"));
  free(out); free(err);

  snprintf(args, sizeof args, "model info %s", model);
  CU_ASSERT_EQUAL(run(args, &out, &err), 0);
  CHECK_MSG("model info shows target and transform", out && strstr(out, "time (log)"));
  CHECK_MSG("model info shows the GPU", out && strstr(out, "TestGPU"));
  CHECK_MSG("model info shows 2 features (app is a group, k constant)", out && strstr(out, "features     2"));
  CHECK_MSG("model info shows the tree count", out && strstr(out, "30 trees"));
  free(out); free(err);

  snprintf(args, sizeof args, "model importance %s --top 1", model);
  CU_ASSERT_EQUAL(run(args, &out, &err), 0);
  CHECK_MSG("importance ranks x (slope 3 over 0..10) first", out && strstr(out, "1    x "));
  CHECK_MSG("--top 1 prints one feature", out && !strstr(out, "2    z"));
  CHECK_MSG("permutation importance column is shown", out && strstr(out, "perm"));
  free(out); free(err);
}

static void test_predict(void) {
  char args[4096], *out = NULL, *err = NULL;
  snprintf(args, sizeof args, "predict --model %s --features %s", model, feats);
  CHECK_EQ(run(args, &out, &err), 0, "kcast predict exits 0");
  int lines = 0;
  for (char *p = out; p && *p; p++) lines += *p == '\n';
  CHECK_EQ(lines, 4, "a header and one line per input row");
  double p1 = 0, lo = 0, hi = 0;
  char *second = out ? strchr(out, '\n') : NULL;
  CU_ASSERT_FATAL(second && sscanf(second + 1, "%lf,%lf,%lf", &p1, &lo, &hi) == 3);
  CHECK_MSG("row 1 (x=2.5, z=1) predicts about 8.5 inside [lo, hi]",
                    fabs(p1 - 8.5) < 1.0 && lo <= p1 && p1 <= hi);
  CHECK_MSG("extra columns are noted on stderr", err && strstr(err, "ignoring 2 columns") && strstr(err, "note"));
  CHECK_MSG("rows inside the training ranges: no outside column, no note",
            out && !strncmp(out, "prediction,lo,hi,unit\n", 22) && err && !strstr(err, "outside"));
  free(out); free(err);

  /* x was trained on 0..10: 25 lies outside, and z's 3 inside */
  char far[1300];
  snprintf(far, sizeof far, "%s/far.csv", dir);
  tests_write_file(far, "x,z\n25,3\n5,3\n", 13);
  snprintf(args, sizeof args, "predict --model %s --features %s", model, far);
  CHECK_EQ(run(args, &out, &err), 0, "kcast predict of a row outside the ranges exits 0");
  CHECK_MSG("a row outside the training ranges is flagged: column outside names x",
            out && !strncmp(out, "prediction,lo,hi,unit,outside\n", 30) && strstr(out, ",x\n") &&
            strstr(out, ",ns,\n"));
  CHECK_MSG("... and a note counts them", err && strstr(err, "1 of 2 predictions rest on a feature "
                                                      "outside the model's training range"));
  free(out); free(err);
  snprintf(args, sizeof args, "predict --model %s --features %s --format json", model, far);
  CHECK_EQ(run(args, &out, &err), 0, "kcast predict --format json exits 0");
  const char *o1 = out ? strstr(out, "\"outside\":\"x\"") : NULL;
  CHECK_MSG("json: \"outside\": \"x\" on that row only", o1 && !strstr(o1 + 1, "\"outside\""));
  free(out); free(err);

  char nofeat[1300];
  snprintf(nofeat, sizeof nofeat, "%s/nofeat.csv", dir);
  tests_write_file(nofeat, "x\n1\n", 4);
  snprintf(args, sizeof args, "predict --model %s --features %s", model, nofeat);
  CU_ASSERT_EQUAL(run(args, &out, &err), 1);
  CHECK_MSG("a missing feature is an error naming it", err && strstr(err, "missing feature column 'z'"));
  free(out); free(err);
}

static void test_cv_json(void) {
  char args[4096], *out = NULL, *err = NULL;
  snprintf(args, sizeof args, "cv --csv %s --target time --ignore k --group app --trees 20 --format json --threads 2", csv);
  CHECK_EQ(run(args, &out, &err), 0, "kcast cv --group exits 0");
  cJSON *j = out ? cJSON_Parse(out) : NULL;
  CU_ASSERT_PTR_NOT_NULL_FATAL(j);
  const char *keys[] = {"mape",     "median_ape", "rmse_log",    "r2",         "spearman",
                        "coverage", "kendall",    "top1_regret", "top5_regret"};
  int all = 1;
  for (size_t k = 0; k < 9; k++) all &= cJSON_IsNumber(cJSON_GetObjectItem(j, keys[k]));
  CHECK_MSG("cv json has mape, median_ape, rmse_log, r2, spearman, coverage, kendall, "
            "top1_regret, top5_regret as numbers", all);
  cJSON *pa = cJSON_GetObjectItem(j, "per_app");
  CHECK_MSG("per_app holds the three apps", cJSON_GetArraySize(pa) == 3 &&
                    cJSON_IsNumber(cJSON_GetObjectItem(cJSON_GetObjectItem(pa, "beta"), "mape")));
  CHECK_MSG("the apps share one function: median APE below 5 %",
                    cJSON_GetObjectItem(j, "median_ape")->valuedouble < 5);
  cJSON_Delete(j);
  free(out); free(err);

  snprintf(args, sizeof args, "cv --csv %s --target time --ignore app --folds 3 --trees 10 --search", csv);
  CU_ASSERT_EQUAL(run(args, &out, &err), 0);
  CHECK_MSG("the table shows the overall row and search choices", out && strstr(out, "overall") && strstr(out, "search chose"));
  free(out); free(err);
}

static void test_errors(void) {
  char args[4096], *out = NULL, *err = NULL;
  snprintf(args, sizeof args, "train --csv %s --target time -o %s/x.kcm", badcsv, dir);
  CHECK_EQ(run(args, &out, &err), 1, "a bad cell is a user error (exit 1)");
  char want[1400];
  snprintf(want, sizeof want, "kcast: %s:3: column time: 'oops' is not a number\n", badcsv);
  CHECK_STR(err ? err : "", want, "one line naming file, line, column and cell");
  free(out); free(err);

  CHECK_EQ(run("train --csv x.csv", &out, &err), 2, "no --target is a usage error");
  free(out); free(err);
  CU_ASSERT_EQUAL(run("train --trees zero --csv x.csv --target t", &out, &err), 2);
  CHECK_MSG("a bad number names the option", err && strstr(err, "--trees 'zero'"));
  free(out); free(err);

  char broken[1300];
  snprintf(broken, sizeof broken, "%s/broken.kcm", dir);
  size_t len;
  char *m = tests_read_file(model, &len);
  CU_ASSERT_FATAL(m != NULL);
  m[len / 2] ^= 1;
  tests_write_file(broken, m, len);
  free(m);
  snprintf(args, sizeof args, "model info %s", broken);
  CU_ASSERT_EQUAL(run(args, &out, &err), 1);
  CHECK_MSG("a corrupt model is refused with 'CRC mismatch'", err && strstr(err, "CRC mismatch"));
  free(out); free(err);
  snprintf(args, sizeof args, "model info %s/none.kcm", dir);
  CU_ASSERT_EQUAL(run(args, &out, &err), 1);
  CHECK_MSG("a missing model names the file", err && strstr(err, "none.kcm"));
  free(out); free(err);
}

TEST_SUITES(cli_model_suites) {
  CU_pSuite s = tests_suite("cli_model");
  TEST_ADD(s, test_train_info_importance);
  TEST_ADD(s, test_predict);
  TEST_ADD(s, test_cv_json);
  TEST_ADD(s, test_errors);
}
