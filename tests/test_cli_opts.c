/*
 * test_cli_opts.c -- the one option parser of every command (cli/cli_opt.c)
 * through the real binary: --opt=V, -o=V, -oV and --opt V are the same
 * everywhere, operands may come before options (whatever POSIXLY_CORRECT
 * says), and the refusals (an abbreviated name, a value for a flag, a
 * missing or empty value, an unknown option) are usage errors (exit 2)
 * naming the option.
 */
#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests.h"

#define CHECK_MSG(msg, cond) \
  CU_assertImplementation(!!(cond), __LINE__, (msg), __FILE__, "", CU_FALSE)

static char dir[1024], csv[1200];

static int setup(void) {
  if (dir[0]) return 0;
  if (!tests_tmpdir(dir, sizeof dir, "cliopts")) return -1;
  snprintf(csv, sizeof csv, "%s/t.csv", dir);
  FILE *f = fopen(csv, "w");
  if (!f) return -1;
  fprintf(f, "app,x,z,time\n");
  for (int i = 0; i < 120; i++) {
    double x = (i * 37 % 101) / 10.0, z = i % 7;
    fprintf(f, "%s,%g,%g,%g\n", i % 2 ? "alpha" : "beta", x, z, 1 + 3 * x + (z > 3 ? 5 : 0));
  }
  return fclose(f);
}

/* kcast ARGS (printf-style) with stdout and stderr captured. */
static int kc(char **out, char **err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int kc(char **out, char **err, const char *fmt, ...) {
  char args[8192], cmd[9000];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(args, sizeof args, fmt, ap);
  va_end(ap);
  snprintf(cmd, sizeof cmd, "'%s' %s", tests_kcast(), args);
  return tests_run(cmd, out, err);
}

static int exists(const char *path) { return access(path, F_OK) == 0; }

static void test_value_forms(void) {
  CU_ASSERT_FATAL(setup() == 0);
  char *out = NULL, *err = NULL, m[1300];
  const char *forms[] = {"-o=%s", "-o%s", "-o %s", "--output=%s", "--output %s"};
  for (int k = 0; k < 5; k++) {
    char o[1400];
    snprintf(m, sizeof m, "%s/m%d.kcm", dir, k);
    snprintf(o, sizeof o, forms[k], m);
    int rc = kc(&out, &err, "train --csv=%s --target=time --trees=5 --seed 2 %s", csv, o);
    char msg[128];
    snprintf(msg, sizeof msg, "train writes the model named by %s", forms[k]);
    CHECK_MSG(msg, rc == 0 && exists(m));
    free(out); free(err);
  }
  int rc = kc(&out, &err, "cv --csv %s --target time --folds=3 --trees=5 --format=json", csv);
  cJSON *j = rc == 0 && out ? cJSON_Parse(out) : NULL;
  cJSON *folds = cJSON_GetObjectItemCaseSensitive(j, "folds");
  CHECK_MSG("cv --folds=3 --format=json runs three folds", cJSON_IsNumber(folds) && folds->valueint == 3);
  cJSON_Delete(j);
  free(out); free(err);

  snprintf(m, sizeof m, "%s/m0.kcm", dir);
  rc = kc(&out, &err, "model importance %s --top=1", m);
  CHECK_MSG("model importance --top=1 prints one ranked feature",
            rc == 0 && out && strstr(out, "1    ") && !strstr(out, "2    "));
  free(out); free(err);
  rc = kc(&out, &err, "predict --model=%s --features=%s --format=json", m, csv);
  CHECK_MSG("predict --model= --features= --format=json prints JSON",
            rc == 0 && out && out[0] == '{' && strstr(out, "\"predictions\""));
  free(out); free(err);
  rc = kc(&out, &err, "gpus --format=csv");
  CHECK_MSG("gpus --format=csv prints the CSV header", rc == 0 && out && !strncmp(out, "name,", 5));
  free(out); free(err);
  rc = kc(&out, &err, "extract tests/ptx/saxpy_nvcc.ptx --format=csv --kernel=saxpy");
  CHECK_MSG("extract --format=csv --kernel=saxpy prints one CSV row",
            rc == 0 && out && !strncmp(out, "kernel,", 7));
  free(out); free(err);
  rc = kc(&out, &err, "emulate --kernel=saxpy --grid=1 --block=32 --arg=32 --arg=2 --arg=buf:128 "
          "--arg=buf:128 --format=json tests/ptx/saxpy_nvcc.ptx");
  CHECK_MSG("emulate takes every launch option as --opt=V, the file last",
            rc == 0 && out && strstr(out, "\"features\""));
  free(out); free(err);
}

static void test_operands_and_programs(void) {
  CU_ASSERT_FATAL(setup() == 0);
  char *out = NULL, *err = NULL, db[1300], exp[1300];
  snprintf(db, sizeof db, "%s/r.db", dir);
  snprintf(exp, sizeof exp, "%s/e.csv", dir);
  char prog[1200];
  snprintf(prog, sizeof prog, "%s/suite/scan", tests_build());
  int rc = kc(&out, &err, "run --app=myapp --dataset=d1 -o=%s --sample=2 --timeout=60 -- %s 4096 128",
              db, prog);
  CHECK_MSG("run takes --app=, -o= and --sample= before the program", exists(db));
  free(out); free(err);
  rc = kc(&out, &err, "dataset stats --format=csv %s", db);
  CHECK_MSG("dataset stats --format=csv before the DB shows the app run stored",
            rc == 0 && out && strstr(out, "app,myapp,"));
  free(out); free(err);
  rc = kc(&out, &err, "dataset export -o=%s %s", exp, db);
  CHECK_MSG("dataset export -o=FILE writes the export", rc == 0 && exists(exp));
  free(out); free(err);
  /* the program's own options are its own: run stops at the program */
  rc = kc(&out, &err, "run -o %s/r2.db %s --sample=oops", dir, prog);
  CHECK_MSG("an option after the program goes to the program, not to run",
            err && !strstr(err, "help run") && strstr(err, "usage: scan"));
  free(out); free(err);

  rc = kc(&out, &err, "cv %s --csv %s --target time", csv, csv);
  CHECK_MSG("an operand before the options is read (cv: both a DB and --csv)",
            rc != 0 && err && strstr(err, "not both"));
  free(out); free(err);
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "POSIXLY_CORRECT=1 '%s' cv %s --csv %s --target time", tests_kcast(), csv,
           csv);
  rc = tests_run(cmd, &out, &err);
  CHECK_MSG("POSIXLY_CORRECT does not stop the options at the first operand",
            rc != 0 && err && strstr(err, "not both"));
  free(out); free(err);
  rc = kc(&out, &err, "extract -- -no-such.ptx");
  CHECK_MSG("after --, a word starting with - is a file", rc == 1 && err && strstr(err, "-no-such.ptx"));
  free(out); free(err);
}

/* One refusal: exit 2 and stderr holding want. */
static void refused(const char *args, const char *want, const char *msg) {
  char *out = NULL, *err = NULL;
  int rc = kc(&out, &err, "%s", args);
  CHECK_MSG(msg, rc == 2 && err && strstr(err, want));
  if (rc != 2 || !err || !strstr(err, want))
    printf("\n    %s: rc %d, stderr: %s", args, rc, err ? err : "");
  free(out); free(err);
}

static void test_refusals(void) {
  CU_ASSERT_FATAL(setup() == 0);
  char a[4096];
  snprintf(a, sizeof a, "cv --csv %s --target time --fold 3", csv);
  refused(a, "unknown option '--fold' (did you mean --folds?)", "an abbreviated option is refused");
  snprintf(a, sizeof a, "cv --csv %s --target time --search=1", csv);
  refused(a, "--search takes no value", "a flag given a value is refused");
  refused("extract tests/ptx/saxpy_nvcc.ptx --list=yes", "--list takes no value",
          "extract --list=yes is refused");
  snprintf(a, sizeof a, "train --csv %s --target", csv);
  refused(a, "--target needs a value", "a missing value at the end is refused");
  refused("train --csv= --target time", "--csv needs a value (got an empty one)",
          "an empty value is refused");
  refused("train -o", "-o needs a value", "a missing short value is refused");
  refused("train -x", "unknown option '-x'", "an unknown short option is refused");
  refused("dataset stats --bogus=1 x.db", "unknown option '--bogus'", "dataset: unknown option");
  refused("dataset import-mangrove --features", "--features needs a value",
          "import-mangrove: missing value");
  refused("model info --top=2 x.kcm", "unknown option '--top'",
          "model info takes no --top (importance does)");
  refused("gpus --format", "--format needs a value", "gpus: missing value");
  refused("predict tests/ptx/saxpy_nvcc.ptx --grid=1 --blok=32 --gpu H200",
          "unknown option '--blok'", "predict: a misspelt launch option");
  refused("emulate tests/ptx/saxpy_nvcc.ptx --grid=0 --block=32", "bad --grid '0'",
          "emulate: a bad value names the option");
  refused("run --sample=0 -- true", "--sample needs a positive integer, not '0'",
          "run: a bad --sample= value");
  refused("run --app= -- true", "--app needs a value (got an empty one)", "run: an empty --app=");
  refused("run --keep-going=yes -- true", "--keep-going takes no value", "run: a flag with a value");
  refused("profile --repeat=0 -- true", "--repeat needs an integer 1..10000",
          "profile: a bad --repeat= (checked before any GPU is looked for)");
  refused("profile --pow -- true", "unknown option '--pow' (did you mean --power?)",
          "profile: an abbreviation");
}

TEST_SUITES(cli_opts_suites) {
  CU_pSuite s = tests_suite("cli_opts");
  TEST_ADD(s, test_value_forms);
  TEST_ADD(s, test_operands_and_programs);
  TEST_ADD(s, test_refusals);
}
