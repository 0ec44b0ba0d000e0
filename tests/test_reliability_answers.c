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

#include <cjson/cJSON.h>
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
  free(out), free(err), out = err = NULL;
  rc = kc(&out, &err, "train --csv x.csv --target y -o a.kcm --output b.kcm");
  CHECK_MSG("-o and --output are one option: given both, exit 2 naming both spellings",
            rc == 2 && err && strstr(err, "-o and --output") && strstr(err, "a.kcm") &&
                strstr(err, "b.kcm"));
  free(out), free(err), out = err = NULL;
  rc = kc(&out, &err, "run --timeout 5 --timeout=10 -- /bin/true");
  CHECK_MSG("run: --timeout twice refused before anything runs", rc == 2 && err &&
            strstr(err, "--timeout given twice"));
  free(out), free(err), out = err = NULL;
  rc = kc(&out, &err, "extract tests/ptx/saxpy_nvcc.ptx -std=c++17 --std c++20");
  CHECK_MSG("-std and --std are one option", rc == 2 && err && strstr(err, "-std and --std"));
  free(out), free(err), out = err = NULL;
  /* the collecting options: --arg (and --dump), -I, -D */
  rc = kc(&out, &err, "emulate tests/ptx/saxpy_nvcc.ptx --grid 1 --block 32 --arg 32 --arg 2.0 "
          "--arg buf:128 --arg buf:128 --format csv");
  CHECK_MSG("--arg still collects one value per parameter", rc == 0);
  free(out), free(err), out = err = NULL;
  if (have_tool("nvcc")) {
    rc = kc(&out, &err, "extract tests/kernels/saxpy.cu -I include -I . -D A=1 -D B=2");
    CHECK_MSG("-I and -D still collect", rc == 0 && out && strstr(out, "_Z5saxpyifPKfPf"));
    free(out), free(err), out = err = NULL;
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
  free(out), free(err), out = err = NULL;
  rc = kc(&out, &err, "dataset stat x.db");
  CHECK_MSG("dataset stat: did you mean 'stats'", rc == 2 && err && strstr(err, "'stats'"));
  free(out), free(err), out = err = NULL;
  rc = kc(&out, &err, "model inof x.kcm");
  CHECK_MSG("model inof: did you mean 'info'", rc == 2 && err && strstr(err, "'info'"));
  free(out), free(err), out = err = NULL;
  rc = kc(&out, &err, "train --csv x.csv --target y --tress 10");
  CHECK_MSG("--tress: did you mean --trees", rc == 2 && err && strstr(err, "--trees?"));
  free(out), free(err), out = err = NULL;
  rc = kc(&out, &err, "cv --csv x.csv --target y --fodls 3");
  CHECK_MSG("--fodls: did you mean --folds", rc == 2 && err && strstr(err, "--folds?"));
  free(out), free(err), out = err = NULL;
  rc = kc(&out, &err, "train datasets/data/suite-features.db --target time");
  CHECK_MSG("train DB without --gpu is a usage error: exit 2", rc == 2 && err &&
            strstr(err, "--gpu"));
  free(out), free(err), out = err = NULL;
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
  free(out), free(err), out = err = NULL;
  rc = kc(&out, &err, "model importance '%s'", model);
  CHECK_MSG("no measurement of any GPU is a feature of the model",
            rc == 0 && out && !strstr(out, "@T4") && !strstr(out, "@K80"));
  CHECK_MSG("neither id nor lseq is a feature", out && !strstr(out, " id ") &&
            !strstr(out, " id\n") && !strstr(out, "lseq"));
  CHECK_MSG("the launch's features are", out && strstr(out, "class.fp32"));
  free(out), free(err), out = err = NULL;
  rc = kc(&out, &err, "train --csv '%s' --target time_ns@T4 --features all,time_ns@K80 "
          "--trees 20 -o '%s'", csv, model);
  free(out), free(err), out = err = NULL;
  if (rc == 0) rc = kc(&out, &err, "model importance '%s'", model);
  CHECK_MSG("a measurement named in --features is one", rc == 0 && out &&
            strstr(out, "time_ns@K80") && !strstr(out, "power_w@T4"));
  free(out), free(err), out = err = NULL;
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
  free(out), free(err), out = err = NULL;
  rc = kc(&out, &err, "predict --model '%s' --features '%s' --format json", model, csv);
  CHECK_MSG("...its JSON too", rc == 0 && out && strstr(out, "\"unit\":\"ns\""));
  free(out), free(err), out = err = NULL;
  rc = kc(&out, &err, "predict --model '%s' --features '%s' --format table", model, csv);
  CHECK_MSG("...and its table's header", rc == 0 && out && strstr(out, "prediction (ns)"));
  CHECK_MSG("...whose numbers are plain (no exponent)", out && !strstr(out, "e+"));
  free(out), free(err), out = err = NULL;
  rc = kc(&out, &err, "cv '%s' --gpu T4 --target time --trees 10 --folds 3 --predictions '%s'",
          db, pred);
  char *p = tests_read_file(pred, NULL);
  CHECK_MSG("cv --predictions records the unit", rc == 0 && p && strstr(p, ";unit=ns;"));
  free(p), free(out), free(err), out = err = NULL;
  rc = kc(&out, &err, "report --cv '%s' --unit us -o '%s'", pred, html);
  CHECK_MSG("report --cv --unit us on ns predictions: refused (exit 1), naming both units",
            rc == 1 && err && strstr(err, "us") && strstr(err, "in ns") &&
                access(html, F_OK) != 0);
  free(out), free(err), out = err = NULL;
  rc = kc(&out, &err, "report --cv '%s' --unit furlongs -o '%s'", pred, html);
  CHECK_MSG("--unit furlongs is a usage error", rc == 2 && err && strstr(err, "furlongs"));
  free(out), free(err), out = err = NULL;
  rc = kc(&out, &err, "report --cv '%s' -o '%s'", pred, html);
  char *h = tests_read_file(html, NULL);
  CHECK_MSG("report --cv takes the recorded unit for its axes", rc == 0 && h &&
            strstr(h, "(ns, log scale)"));
  free(h), free(out), free(err), out = err = NULL;
  rc = kc(&out, &err, "report '%s' --model '%s' --unit W -o '%s'", db, model, html);
  CHECK_MSG("report DB --unit W on a time model: refused", rc == 1 && err && strstr(err, "ns"));
  free(out), free(err), out = err = NULL;
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
  free(out), free(err), out = err = NULL;
  rc = kc(&out, &err, "cv '%s' --gpu 'Tesla K80,t4' --target time --trees 10 --folds 3", db);
  CHECK_MSG("...and a list of aliases finds K80 and T4", rc == 0);
  free(out), free(err), out = err = NULL;
  rc = kc(&out, &err, "cv '%s' --gpu A100 --target time --trees 10 --folds 3", db);
  CHECK_MSG("a GPU without measurements: exit 1 naming the GPUs that have them",
            rc == 1 && err && strstr(err, "A100") && strstr(err, "T4") && strstr(err, "K80") &&
                count_lines(err) == 1);
  free(out), free(err), out = err = NULL;
  CU_ASSERT_EQUAL_FATAL(kc(NULL, NULL, "dataset export '%s' --format csv -o '%s'", db, csv), 0);
  rc = kc(&out, &err, "predict --gpu h100,A100 --features '%s'", csv);
  CHECK_MSG("predict --gpu h100,A100: one row per launch and GPU",
            rc == 0 && out && strstr(out, "\nH100,") && strstr(out, "\nA100,") &&
                count_lines(out) == 1 + 2 * 40);
  free(out), free(err), out = err = NULL;
  rc = kc(&out, &err, "predict --gpu Z9000 --features '%s'", csv);
  CHECK_MSG("an unknown GPU: exit 1, the known ones and --gpus FILE in the message",
            rc == 1 && err && strstr(err, "Z9000") && strstr(err, "H200") &&
                strstr(err, "--gpus FILE"));
  free(out), free(err), out = err = NULL;
  rc = kc(&out, &err, "predict tests/ptx/saxpy_nvcc.ptx --kernel saxpy --grid 64 --block 256 "
          "--arg 16384 --arg 2.0 --arg buf:64k --arg buf:64k --gpu t4,H200");
  CHECK_MSG("predict FILE --gpu t4,H200: a row for each", rc == 0 && out && strstr(out, "\nT4 ") &&
            strstr(out, "\nH200 "));
  free(out), free(err), out = err = NULL;
  sh(NULL, NULL, "rm -rf '%s'", dir);
}

/* ------------------------------------------- datasets after a fault -- */

/* A suite program built with -cudart shared (make test builds SUITE_FAST),
   as an absolute path into buf; NULL (skipped, said why) when missing. */
static const char *suite_prog(const char *name, char *buf, size_t cap) {
  char cwd[4096];
  const char *b = tests_build();
  if (b[0] == '/') snprintf(buf, cap, "%s/suite/%s", b, name);
  else if (getcwd(cwd, sizeof cwd)) snprintf(buf, cap, "%s/%s/suite/%s", cwd, b, name);
  if (access(buf, X_OK) != 0) {
    fprintf(stderr, "(%s not built: skipped) ", buf);
    return NULL;
  }
  return buf;
}

/* Leave a hot journal on path: a child writes more than SQLite's cache
   holds inside a transaction (pages spill into the file, the journal
   holds their old contents) and is killed before COMMIT.  sql runs first
   inside the transaction.  1 when path-journal is left. */
static int kill_a_writer(const char *path, const char *sql) {
  pid_t p = fork();
  if (p < 0) return 0;
  if (p == 0) {
    sqlite3 *h = NULL;
    if (sqlite3_open(path, &h) != SQLITE_OK) _exit(1);
    char q[1024];
    snprintf(q, sizeof q, "PRAGMA cache_size = 2; BEGIN IMMEDIATE; %s; CREATE TABLE IF NOT "
             "EXISTS junk(b); WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c "
             "WHERE i < 3000) INSERT INTO junk SELECT randomblob(900) FROM c;", sql);
    if (sqlite3_exec(h, q, NULL, NULL, NULL) != SQLITE_OK) _exit(2);
    kill(getpid(), SIGKILL);
    _exit(3);
  }
  int st = 0;
  waitpid(p, &st, 0);
  char j[4200];
  snprintf(j, sizeof j, "%s-journal", path);
  struct stat sb;
  return WIFSIGNALED(st) && stat(j, &sb) == 0 && sb.st_size > 0;
}

/*
 * A SIGKILL while a dataset is created or written leaves a hot journal:
 * `dataset stats` said "attempt to write a readonly database", `run`
 * rolled it back to 0 bytes and refused it as empty.  Every open rolls
 * the journal back; an empty file is a new dataset to every writer and
 * "empty, not a dataset yet" to every reader; where the file cannot be
 * written the message says what to do.
 */
static void test_a_killed_writer_leaves_a_dataset_that_opens(void) {
  char dir[4096], db[4200], fresh[4200], prog[8192];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "ans-journal"));
  snprintf(db, sizeof db, "%s/d.db", dir);
  snprintf(fresh, sizeof fresh, "%s/new.db", dir);
  CU_ASSERT_EQUAL_FATAL(write_dataset(db, 40), 0);
  /* a dataset being written */
  CU_ASSERT_FATAL(kill_a_writer(db, "DELETE FROM measurements"));
  char *out = NULL, *err = NULL;
  int rc = kc(&out, &err, "dataset stats '%s'", db);
  CHECK_MSG("dataset stats (read-only) rolls back the killed write and reads the dataset",
            rc == 0 && out && strstr(out, "launches        40") && strstr(out, "measurements    160"));
  free(out), free(err), out = err = NULL;
  char j[4300];
  snprintf(j, sizeof j, "%s-journal", db);
  CHECK_MSG("...and the journal is gone", access(j, F_OK) != 0);
  /* a dataset being created: the roll-back leaves 0 bytes */
  CU_ASSERT_EQUAL_FATAL(tests_write_file(fresh, "", 0), 0);
  CU_ASSERT_FATAL(kill_a_writer(fresh, "CREATE TABLE meta(key, value)"));
  rc = kc(&out, &err, "dataset stats '%s'", fresh);
  CHECK_MSG("a reader of a killed creation: exit 1, 'an empty file, not a dataset yet'",
            rc == 1 && err && strstr(err, "empty file") && count_lines(err) == 1);
  free(out), free(err), out = err = NULL;
  rc = kc(&out, &err, "train '%s' --gpu T4 --target time", fresh);
  CHECK_MSG("...the same for train", rc == 1 && err && strstr(err, "empty file"));
  free(out), free(err), out = err = NULL;
  if (suite_prog("stencil2d", prog, sizeof prog)) {
    CU_ASSERT_FATAL(kill_a_writer(fresh, "CREATE TABLE meta(key, value)"));
    rc = kc(&out, &err, "run -o '%s' -- '%s' 32 8 2", fresh, prog);
    CHECK_MSG("kcast run takes the rolled-back empty file as a new dataset", rc == 0);
    free(out), free(err), out = err = NULL;
    rc = kc(&out, &err, "dataset stats '%s'", fresh);
    CHECK_MSG("...and writes its launches there", rc == 0 && out && strstr(out, "launches        2"));
    free(out), free(err), out = err = NULL;
    /* suite run on an empty output */
    char man[4200], sdb[4200];
    snprintf(man, sizeof man, "%s/m.txt", dir);
    snprintf(sdb, sizeof sdb, "%s/suite.db", dir);
    FILE *f = fopen(man, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fprintf(f, "stencil2d 32 8 2\n");
    fclose(f);
    CU_ASSERT_EQUAL_FATAL(tests_write_file(sdb, "", 0), 0);
    char bindir[4200];
    snprintf(bindir, sizeof bindir, "%.*s", (int)(strrchr(prog, '/') - prog), prog);
    rc = kc(&out, &err, "suite run '%s' --bindir '%s' -o '%s'", man, bindir, sdb);
    CHECK_MSG("suite run takes an empty output as a new dataset", rc == 0);
    free(out), free(err), out = err = NULL;
  }
  /* a journal where the folder is read-only: say what to do */
  CU_ASSERT_FATAL(kill_a_writer(db, "DELETE FROM launches"));
  char script[40000], res[4200], rdir[4096];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(rdir, sizeof rdir, "ans-ro"));
  snprintf(res, sizeof res, "%s/ro-err", rdir); /* outside the read-only folder */
  snprintf(script, sizeof script,
           "unshare %s -m sh -c \"mount --bind '%s' '%s' && mount -o remount,ro,bind '%s' && "
           "echo mounted > '%s.tmp' && { '%s' dataset stats '%s' 2>> '%s.tmp'; "
           "echo \\$? >> '%s.tmp'; }\" 2>/dev/null; mv '%s.tmp' '%s' 2>/dev/null",
           geteuid() == 0 ? "" : "-r", dir, dir, dir, res, tests_kcast(), db, res, res, res, res);
  sh(NULL, NULL, "%s", script);
  char *ro = tests_read_file(res, NULL);
  if (ro && !strncmp(ro, "mounted\n", 8)) {
    CHECK_MSG("on a read-only folder: exit 1, naming the journal and what to do",
              strstr(ro, "only a writer can roll back") && strstr(ro, "-journal") &&
                  strstr(ro, "\n1\n"));
  } else {
    fprintf(stderr, "(no private read-only mount here: skipped) ");
  }
  free(ro);
  sh(NULL, NULL, "rm -rf '%s'", rdir);
  rc = kc(&out, &err, "dataset stats '%s'", db);
  CHECK_MSG("...and once writable, the next open rolls it back", rc == 0 && out &&
            strstr(out, "launches        40"));
  free(out), free(err), out = err = NULL;
  sh(NULL, NULL, "rm -rf '%s'", dir);
}

/* ------------------------------------------------ foreign files read -- */

/* Monotonic seconds. */
static double mono_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/*
 * import-nsys of an export whose kernel table was an infinite recursive
 * view never returned.  Tables must be tables, and every read of a
 * foreign SQLite file is bounded by the work a file of its size needs.
 */
static void test_foreign_sqlite_reads_are_bounded(void) {
  char dir[4096], ex[4200], db[4200], cmd[8192];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "ans-nsyssql"));
  snprintf(ex, sizeof ex, "%s/app.sqlite", dir);
  snprintf(db, sizeof db, "%s/out.db", dir);
  snprintf(cmd, sizeof cmd, "sqlite3 '%s' \"CREATE TABLE StringIds(id INTEGER PRIMARY KEY, "
           "value TEXT); INSERT INTO StringIds VALUES(1, 'k'); CREATE VIEW "
           "CUPTI_ACTIVITY_KIND_KERNEL AS WITH RECURSIVE r(start, end, correlationId, gridX, "
           "gridY, gridZ, blockX, blockY, blockZ, demangledName) AS (SELECT 0, 1, 0, 1, 1, 1, 1, "
           "1, 1, 1 UNION ALL SELECT start + 1, end + 1, correlationId + 1, 1, 1, 1, 1, 1, 1, 1 "
           "FROM r) SELECT * FROM r;\"", ex);
  CU_ASSERT_EQUAL_FATAL(tests_run(cmd, NULL, NULL), 0);
  char *out = NULL, *err = NULL;
  double t0 = mono_s();
  int rc = sh(&out, &err, "timeout 60 '%s' dataset import-nsys '%s' -o '%s' --app app --gpu H200",
              tests_kcast(), ex, db);
  CHECK_MSG("an export whose kernel table is an endless view: refused at once, naming the view",
            rc == 1 && mono_s() - t0 < 30 && err && strstr(err, "CUPTI_ACTIVITY_KIND_KERNEL") &&
                strstr(err, "view"));
  CHECK_MSG("...and no dataset is written", access(db, F_OK) != 0);
  free(out), free(err), out = err = NULL;
  /* the bound itself: an endless query on a foreign file stops */
  ds_foreign f;
  char e[1024];
  CU_ASSERT_EQUAL_FATAL(ds_foreign_open(ex, &f, e, sizeof e), 0);
  t0 = mono_s();
  int qrc = sqlite3_exec(f.h, "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c) "
                         "SELECT count(*) FROM c", NULL, NULL, NULL);
  ds_foreign_errmsg(&f, e, sizeof e);
  CHECK_MSG("an endless query on a foreign file stops within seconds, saying why",
            qrc != SQLITE_OK && mono_s() - t0 < 30 && strstr(e, "reading stopped") &&
                strstr(e, ex));
  ds_foreign_close(&f);
  /* GPU Mangrove databases are foreign files too */
  char fx[4200];
  snprintf(fx, sizeof fx, "%s/flux.db", dir);
  snprintf(cmd, sizeof cmd, "sqlite3 '%s' \"CREATE VIEW fluxmetrics AS WITH RECURSIVE r(bench, "
           "app, dataset, lseq, name, metric, value) AS (SELECT 'b', 'a', 'd', 0, 'k', "
           "'ld.global.f32', 1 UNION ALL SELECT bench, app, dataset, lseq + 1, name, metric, "
           "value FROM r) SELECT * FROM r;\"", fx);
  CU_ASSERT_EQUAL_FATAL(tests_run(cmd, NULL, NULL), 0);
  t0 = mono_s();
  rc = sh(&out, &err, "timeout 60 '%s' dataset import-mangrove --features '%s' -o '%s'",
          tests_kcast(), fx, db);
  CHECK_MSG("a GPU Mangrove file whose table is an endless view: refused at once",
            rc == 1 && mono_s() - t0 < 30 && err && strstr(err, "view"));
  free(out), free(err), out = err = NULL;
  sh(NULL, NULL, "rm -rf '%s'", dir);
}

/* The time_ns values an import wrote, as text ("" when none). */
static char *stored_times(const char *db) {
  char *out = NULL;
  if (sh(&out, NULL, "sqlite3 '%s' 'SELECT value FROM measurements ORDER BY launch_id'", db)) {
    free(out);
    return NULL;
  }
  return out;
}

/*
 * nsys durations of 1e300 ns were stored saturated at 9.22e18, fractions
 * of a ns cut, an unterminated quote in the last field accepted; ncu
 * without its units row was read as ns, and "1,0,2,4,.5,0" as 1024.5.
 */
static void test_nsight_values_are_read_exactly_or_refused(void) {
  char dir[4096], csv[4200], db[4200];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "ans-nsight"));
  snprintf(csv, sizeof csv, "%s/t.csv", dir);
  snprintf(db, sizeof db, "%s/out.db", dir);
  static const char head[] = "Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Name\n";
  char text[1024], *out = NULL, *err = NULL;
  int n = snprintf(text, sizeof text, "%s0,1e300,1,4,1,1,32,1,1,k\n", head);
  tests_write_file(csv, text, (size_t)n);
  int rc = kc(&out, &err, "dataset import-nsys '%s' -o '%s' --app app --gpu H200", csv, db);
  CHECK_MSG("nsys: a duration of 1e300 ns is refused, naming line and value",
            rc == 1 && err && strstr(err, "t.csv:2:") && strstr(err, "1e300") &&
                access(db, F_OK) != 0);
  free(out), free(err), out = err = NULL;
  n = snprintf(text, sizeof text, "%s0,1.5,1,4,1,1,32,1,1,k\n10,2.25,2,4,1,1,32,1,1,k\n", head);
  tests_write_file(csv, text, (size_t)n);
  rc = kc(&out, &err, "dataset import-nsys '%s' -o '%s' --app app --gpu H200", csv, db);
  char *v = stored_times(db);
  CHECK_MSG("nsys: fractions of a ns are stored as measured (1.5, 2.25)",
            rc == 0 && v && !strcmp(v, "1.5\n2.25\n"));
  free(v), free(out), free(err), out = err = NULL;
  unlink(db);
  n = snprintf(text, sizeof text, "%s0,5,1,4,1,1,32,1,1,\"k(int, float\n", head);
  tests_write_file(csv, text, (size_t)n);
  rc = kc(&out, &err, "dataset import-nsys '%s' -o '%s' --app app --gpu H200", csv, db);
  CHECK_MSG("nsys: a quote never closed is refused", rc == 1 && err && strstr(err, "quoted") &&
            access(db, F_OK) != 0);
  free(out), free(err), out = err = NULL;
  /* ncu */
  static const char nh[] = "\"ID\",\"Kernel Name\",\"Block Size\",\"Grid Size\","
                           "\"gpu__time_duration.sum\"\n";
  n = snprintf(text, sizeof text, "%s\"0\",\"k\",\"(32, 1, 1)\",\"(4, 1, 1)\",\"1500.5\"\n", nh);
  tests_write_file(csv, text, (size_t)n);
  rc = kc(&out, &err, "dataset import-ncu '%s' -o '%s' --app app --gpu H200", csv, db);
  CHECK_MSG("ncu: a report without its units row is refused (the unit is unknown)",
            rc == 1 && err && strstr(err, "units row") && access(db, F_OK) != 0);
  free(out), free(err), out = err = NULL;
  n = snprintf(text, sizeof text, "%s\"\",\"\",\"\",\"\",\"nsecond\"\n"
               "\"0\",\"k\",\"(32, 1, 1)\",\"(4, 1, 1)\",\"1,0,2,4,.5,0\"\n", nh);
  tests_write_file(csv, text, (size_t)n);
  rc = kc(&out, &err, "dataset import-ncu '%s' -o '%s' --app app --gpu H200", csv, db);
  CHECK_MSG("ncu: '1,0,2,4,.5,0' is no number", rc == 1 && err && strstr(err, "1,0,2,4,.5,0"));
  free(out), free(err), out = err = NULL;
  n = snprintf(text, sizeof text, "%s\"\",\"\",\"\",\"\",\"nsecond\"\n"
               "\"0\",\"k\",\"(32, 1, 1)\",\"(4, 1, 1)\",\"1,024.5\"\n", nh);
  tests_write_file(csv, text, (size_t)n);
  rc = kc(&out, &err, "dataset import-ncu '%s' -o '%s' --app app --gpu H200", csv, db);
  v = stored_times(db);
  CHECK_MSG("ncu: 1,024.5 nsecond is stored as 1024.5 ns, not rounded",
            rc == 0 && v && !strcmp(v, "1024.5\n"));
  free(v), free(out), free(err), out = err = NULL;
  sh(NULL, NULL, "rm -rf '%s'", dir);
}

/*
 * The Nsight readers are fuzz targets (make fuzz); make test builds them
 * and each runs clean over its seeds (tests/fuzz/seeds) for a moment.
 */
static void test_nsight_fuzzers_run_clean(void) {
  if (!have_tool("clang-22")) {
    fprintf(stderr, "(clang-22 missing: fuzzers skipped) ");
    return;
  }
  char dir[4096];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "ans-fuzz"));
  CU_ASSERT_EQUAL_FATAL(sh(NULL, NULL, "mkdir '%s/nsys' '%s/ncu' && cp tests/fuzz/seeds/nsys-* "
                           "'%s/nsys/' && cp tests/fuzz/seeds/ncu-* '%s/ncu/' && sqlite3 "
                           "'%s/nsys/export.sqlite' < tests/fuzz/seeds/nsys-export.sql", dir, dir,
                           dir, dir, dir), 0);
  static const char *const names[] = {"nsys", "ncu"};
  for (size_t i = 0; i < 2; i++) {
    char bin[4200], msg[4400], *out = NULL;
    snprintf(bin, sizeof bin, "%s/fuzz/%s_fuzz", tests_build(), names[i]);
    snprintf(msg, sizeof msg, "make test built %s", bin);
    CHECK_MSG(msg, access(bin, X_OK) == 0);
    int rc = sh(NULL, &out, "'%s' -runs=3000 -seed=1 -rss_limit_mb=2048 -max_len=65536 '%s/%s'",
                bin, dir, names[i]);
    snprintf(msg, sizeof msg, "the %s fuzzer runs clean on its seeds (rc %d)", names[i], rc);
    CHECK_MSG(msg, rc == 0);
    if (rc) fprintf(stderr, "%.2000s\n", out ? out : "");
    free(out);
  }
  sh(NULL, NULL, "rm -rf '%s'", dir);
}

/* -------------------------------------------- kcast run: every launch -- */

/* A program that launches step<<<G, 32>>> with G = 1, 2, 3, 4 as its mode
   says: "fork" (parent 1, child 2, parent 3), "exec" (1, then the program
   again as "after-exec": 4), "orphan FILE" (1, then a child that sleeps,
   its pid in FILE, and the parent too), "leave FILE" (the same, but the
   parent exits); built with -DODD (forks-odd) it
   also launches a kernel the emulator cannot load, in the same module,
   and ignores the error. */
static const char fork_src[] =
    "#include <cstdio>\n#include <cstring>\n#include <unistd.h>\n#include <sys/wait.h>\n"
    "__global__ void step(int *x, int k) { if (threadIdx.x == 0) x[0] += k; }\n"
    "__global__ void wild(int *x) {\n"
    "  x[threadIdx.x + 100000000] = 1; /* the fault */\n"
    "}\n"
    "#ifdef ODD\n"
    "__global__ void odd(unsigned *out, int *p) {\n"
    "  unsigned long long r;\n"
    "  asm volatile(\"mapa.u64 %0, %1, 0;\" : \"=l\"(r) : \"l\"(p)); out[0] = (unsigned)r; }\n"
    "#endif\n"
    "int main(int argc, char **argv) {\n"
    "  int *d; cudaMalloc(&d, 4); cudaMemset(d, 0, 4);\n"
    "  const char *mode = argc > 1 ? argv[1] : \"\";\n"
    "  if (!strcmp(mode, \"after-exec\")) { step<<<4, 32>>>(d, 4); cudaDeviceSynchronize();\n"
    "    printf(\"done after-exec\\n\"); return 0; }\n"
    "  step<<<1, 32>>>(d, 1); cudaDeviceSynchronize();\n"
    "  if (!strcmp(mode, \"fork\")) {\n"
    "    pid_t p = fork();\n"
    "    if (p == 0) { step<<<2, 32>>>(d, 2); cudaDeviceSynchronize(); _exit(0); }\n"
    "    waitpid(p, NULL, 0);\n"
    "    step<<<3, 32>>>(d, 3); cudaDeviceSynchronize();\n"
    "  } else if (!strcmp(mode, \"wild\")) {\n"
    "    wild<<<1, 32>>>(d); cudaDeviceSynchronize();\n"
    "  } else if (!strcmp(mode, \"exec\")) {\n"
    "    fflush(stdout); execl(argv[0], argv[0], \"after-exec\", (char *)NULL); return 1;\n"
    "  } else if ((!strcmp(mode, \"orphan\") || !strcmp(mode, \"leave\")) && argc > 2) {\n"
    "    pid_t p = fork();\n"
    "    if (p == 0) { sleep(300); _exit(0); }\n"
    "    FILE *f = fopen(argv[2], \"w\"); fprintf(f, \"%d\\n\", (int)p); fclose(f);\n"
    "    if (!strcmp(mode, \"orphan\")) sleep(300);\n"
    "  }\n"
    "#ifdef ODD\n"
    "  unsigned *o; cudaMalloc(&o, 4);\n"
    "  odd<<<1, 1>>>(o, d); cudaGetLastError();\n"
    "#endif\n"
    "  printf(\"done %s\\n\", mode);\n"
    "  return 0;\n"
    "}\n";

/* Build fork_src with `kcast nvcc FLAGS` into $KCAST_BUILD/ansprog/NAME
   (once per source); its path into buf, NULL (skipped) without nvcc. */
static const char *fork_prog(const char *name, const char *flags, char *buf, size_t cap) {
  if (cap < 8600) return NULL;
  char dir[8400], src[8500], cwd[4096];
  const char *b = tests_build();
  if (b[0] == '/') snprintf(dir, sizeof dir, "%s/ansprog", b);
  else snprintf(dir, sizeof dir, "%s/%s/ansprog", getcwd(cwd, sizeof cwd) ? cwd : ".", b);
  snprintf(buf, cap, "%s/%s", dir, name);
  snprintf(src, sizeof src, "%s/forks.cu", dir);
  if (!have_tool("nvcc")) {
    fprintf(stderr, "(nvcc missing: skipped) ");
    return NULL;
  }
  mkdir(dir, 0755);
  char *old = tests_read_file(src, NULL);
  int same_src = old && !strcmp(old, fork_src);
  free(old);
  if (!same_src && tests_write_file(src, fork_src, sizeof fork_src - 1)) return NULL;
  struct stat ss, sb;
  if (stat(src, &ss) == 0 && stat(buf, &sb) == 0 && sb.st_mtime >= ss.st_mtime) return buf;
  char *err = NULL;
  if (sh(NULL, &err, "'%s' nvcc -O2 %s -o '%s.tmp' '%s' && mv '%s.tmp' '%s'", tests_kcast(),
         flags, buf, src, buf, buf)) {
    fprintf(stderr, "(%s did not build: %s) ", name, err ? err : "");
    free(err);
    return NULL;
  }
  free(err);
  return buf;
}

/* One number from the dataset (sqlite3's shell); -1 when unreadable. */
static long sql_num(const char *db, const char *q) {
  char *out = NULL;
  long n = sh(&out, NULL, "sqlite3 '%s' \"%s\"", db, q) == 0 && out ? strtol(out, NULL, 10) : -1;
  free(out);
  return n;
}

/*
 * A program launching in the parent and in a forked child: "3 launches
 * recorded", 2 rows stored; exec: "2 recorded", 1 stored (every process
 * numbered from 0 and UNIQUE(app, dataset, lseq) kept one).  And a module
 * kcast cannot load: its launches failed, the program ignored that, and
 * kcast run said "0 launches recorded" with exit 0.
 */
static void test_run_records_every_process_and_names_lost_kernels(void) {
  char prog[8600], odd[8600], dir[4096], db[4200];
  if (!fork_prog("forks", "", prog, sizeof prog) ||
      !fork_prog("forks-odd", "-DODD", odd, sizeof odd))
    return;
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "ans-fork"));
  snprintf(db, sizeof db, "%s/f.db", dir);
  char *out = NULL, *err = NULL;
  int rc = kc(&out, &err, "run -o '%s' -- '%s' fork", db, prog);
  CHECK_MSG("fork: the run succeeds", rc == 0 && out && strstr(out, "done fork"));
  CHECK_MSG("fork: 3 launches stored, 3 reported", sql_num(db, "SELECT count(*) FROM launches") == 3 &&
            err && strstr(err, "3 launches of forks recorded"));
  CHECK_MSG("fork: in launch order across the processes (grids 1, 2, 3 at lseq 0, 1, 2)",
            sql_num(db, "SELECT group_concat(grid_x, '') FROM (SELECT grid_x FROM launches "
                    "ORDER BY lseq)") == 123);
  free(out), free(err), out = err = NULL;
  rc = kc(&out, &err, "run -o '%s' -- '%s' exec", db, prog);
  CHECK_MSG("exec: the program and the one it became: 2 launches stored and reported",
            rc == 0 && sql_num(db, "SELECT count(*) FROM launches WHERE dataset = 'exec'") == 2 &&
                err && strstr(err, "2 launches of forks recorded"));
  CHECK_MSG("exec: lseq 0 and 1 (grids 1 and 4)",
            sql_num(db, "SELECT group_concat(grid_x, '') FROM (SELECT grid_x FROM launches "
                    "WHERE dataset = 'exec' ORDER BY lseq)") == 14);
  free(out), free(err), out = err = NULL;
  rc = kc(&out, &err, "run -o '%s' -- '%s' odd", db, odd);
  CHECK_MSG("a kernel that cannot be loaded: the program 'succeeds', kcast run exits 4",
            rc == 4 && out && strstr(out, "done odd"));
  CHECK_MSG("...naming the kernel, why, and the launches lost",
            err && strstr(err, "_Z3oddPjPi") && strstr(err, "could not be loaded") &&
                strstr(err, "mapa") && strstr(err, "not recorded"));
  free(out), free(err), out = err = NULL;
  sh(NULL, NULL, "rm -rf '%s'", dir);
}

/* Is process pid alive (and not a zombie)? */
static int alive(pid_t pid) {
  char p[64], *st = NULL;
  snprintf(p, sizeof p, "/proc/%d/stat", (int)pid);
  st = tests_read_file(p, NULL);
  const char *rp = st ? strrchr(st, ')') : NULL;
  int a = rp && rp[1] == ' ' && rp[2] != 'Z';
  free(st);
  return a;
}

/*
 * SIGKILL of kcast run orphaned the program's children in its process
 * group (the program's parent-death signal is not inherited); a child
 * the program left running at its exit outlived the run.  Both end.
 */
static void test_run_leaves_no_process_behind(void) {
  char prog[8600], dir[4096], db[4200], pidf[4200];
  if (!fork_prog("forks", "", prog, sizeof prog)) return;
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "ans-orphan"));
  snprintf(db, sizeof db, "%s/o.db", dir);
  snprintf(pidf, sizeof pidf, "%s/pid", dir);
  pid_t kp = fork();
  CU_ASSERT_FATAL(kp >= 0);
  if (kp == 0) {
    int nul = open("/dev/null", O_RDWR);
    dup2(nul, 0), dup2(nul, 1), dup2(nul, 2);
    execl(tests_kcast(), tests_kcast(), "run", "-o", db, "--", prog, "orphan", pidf, (char *)NULL);
    _exit(127);
  }
  pid_t orphan = 0;
  for (double t0 = mono_s(); !orphan && mono_s() - t0 < 30;) {
    char *t = tests_read_file(pidf, NULL);
    if (t && strchr(t, '\n')) orphan = (pid_t)atoi(t);
    free(t);
    if (!orphan) usleep(20000);
  }
  CHECK_MSG("the program forked its child", orphan > 0);
  kill(kp, SIGKILL);
  waitpid(kp, NULL, 0);
  int gone = 0;
  for (double t0 = mono_s(); orphan > 0 && !gone && mono_s() - t0 < 10;) {
    gone = !alive(orphan);
    if (!gone) usleep(20000);
  }
  CHECK_MSG("kill -9 of kcast run: the program's child ends with it", orphan > 0 && gone);
  if (orphan > 0 && !gone) kill(orphan, SIGKILL);
  /* the program exits and leaves its child running */
  unlink(pidf);
  char *out = NULL, *err = NULL;
  double t0 = mono_s();
  int rc = kc(&out, &err, "run -o '%s' -- '%s' leave '%s'", db, prog, pidf);
  char *t = tests_read_file(pidf, NULL);
  orphan = t ? (pid_t)atoi(t) : 0;
  free(t);
  CHECK_MSG("a child left running at the program's exit ends within the grace, with a message "
            "and a non-zero exit", rc != 0 && mono_s() - t0 < 30 && orphan > 0 && !alive(orphan) &&
            err && strstr(err, "left a process running"));
  if (orphan > 0 && alive(orphan)) kill(orphan, SIGKILL);
  free(out), free(err), out = err = NULL;
  sh(NULL, NULL, "rm -rf '%s'", dir);
}

/* ------------------------------------- child processes and scratch -- */

/* A folder with a fake nvcc that starts a child and hangs (as cc1plus
   did on an #include of a FIFO): its pids go to DIR/pids. */
static void fake_nvcc(const char *dir) {
  char p[4200];
  snprintf(p, sizeof p, "%s/bin", dir);
  mkdir(p, 0755);
  snprintf(p, sizeof p, "%s/bin/nvcc", dir);
  FILE *f = fopen(p, "w");
  if (!f) return;
  fprintf(f, "#!/bin/sh\nsleep 300 &\necho $$ $! >> '%s/pids'\nwait\n", dir);
  fclose(f);
  chmod(p, 0755);
}

/* Are all the pids listed in dir/pids gone?  (none listed: -1) */
static int fake_nvcc_gone(const char *dir) {
  char p[4200];
  snprintf(p, sizeof p, "%s/pids", dir);
  char *t = tests_read_file(p, NULL);
  if (!t || !*t) {
    free(t);
    return -1;
  }
  int gone = 1;
  for (double t0 = mono_s(); mono_s() - t0 < 5;) {
    gone = 1;
    for (char *q = t; *q;) {
      char *e;
      long pid = strtol(q, &e, 10);
      if (e == q) { q++; continue; }
      if (pid > 0 && alive((pid_t)pid)) gone = 0;
      q = e;
    }
    if (gone) break;
    usleep(20000);
  }
  free(t);
  return gone;
}

/* What a folder holds, one name a line ("" when empty). */
static char *listing(const char *dir) {
  char *out = NULL;
  sh(&out, NULL, "ls -A '%s'", dir);
  return out;
}

/*
 * nvcc and ptxas had no time limit (--timeout covered the emulation
 * only): a compiler that hangs hung extract and import-kerneltuner.
 * Every tool run has one; the whole tool (its children too) is killed.
 */
static void test_every_compiler_run_has_a_time_limit(void) {
  char dir[4096], tmp[4200], cf[4200], db[4200];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "ans-hang"));
  fake_nvcc(dir);
  snprintf(tmp, sizeof tmp, "%s/tmp", dir);
  mkdir(tmp, 0700);
  char *out = NULL, *err = NULL;
  double t0 = mono_s();
  int rc = sh(&out, &err, "PATH='%s/bin':$PATH TMPDIR='%s' timeout 60 '%s' extract "
              "tests/kernels/saxpy.cu --tool-timeout 2", dir, tmp, tests_kcast());
  double dt = mono_s() - t0;
  CHECK_MSG("extract with a hanging nvcc: exit 1 after the limit, saying so",
            rc == 1 && dt < 30 && err && strstr(err, "did not finish within 2 s") &&
                count_lines(err) == 1);
  CHECK_MSG("...the compiler's own child is killed too", fake_nvcc_gone(dir) == 1);
  char *left = listing(tmp);
  CHECK_MSG("...and its scratch folder is removed", left && !*left);
  free(left), free(out), free(err), out = err = NULL;
  /* the same limit for import-kerneltuner's compiles (KCAST_TOOL_TIMEOUT) */
  snprintf(cf, sizeof cf, "%s/c.json", dir);
  snprintf(db, sizeof db, "%s/k.db", dir);
  static const char cache[] =
      "{\"device_name\": \"NVIDIA A100-PCIE-40GB\", \"kernel_name\": \"scale_add\", "
      "\"problem_size\": [100000], \"tune_params_keys\": [\"block_size_x\", \"tile_size_x\", "
      "\"use_bias\"], \"tune_params\": {\"block_size_x\": [32], \"tile_size_x\": [1], "
      "\"use_bias\": [0]}, \"objective\": \"time\", \"cache\": {\"32,1,0\": {\"block_size_x\": "
      "32, \"tile_size_x\": 1, \"use_bias\": 0, \"time\": 0.5, \"times\": [0.5, 0.5]}}}\n";
  CU_ASSERT_EQUAL_FATAL(tests_write_file(cf, cache, sizeof cache - 1), 0);
  snprintf(tmp, sizeof tmp, "%s/pids", dir);
  unlink(tmp);
  snprintf(tmp, sizeof tmp, "%s/tmp", dir);
  t0 = mono_s();
  rc = sh(&out, &err, "PATH='%s/bin':$PATH TMPDIR='%s' KCAST_TOOL_TIMEOUT=2 timeout 90 '%s' "
          "dataset import-kerneltuner '%s' -o '%s' --source tests/tuning/scale_add.cu "
          "--grid-div-x block_size_x,tile_size_x --arg buf:400k --arg buf:400k:randf "
          "--arg 100000 --const scale=randf:3", dir, tmp, tests_kcast(), cf, db);
  dt = mono_s() - t0;
  CHECK_MSG("import-kerneltuner --source with a hanging nvcc ends with the limit, saying so",
            rc != 0 && rc != 124 && dt < 60 && ((out && strstr(out, "did not finish within 2 s")) ||
                                                (err && strstr(err, "did not finish within 2 s"))));
  CHECK_MSG("...and nvcc's children are gone", fake_nvcc_gone(dir) == 1);
  left = listing(tmp);
  CHECK_MSG("...and nothing is left in TMPDIR", left && !*left);
  free(left), free(out), free(err), out = err = NULL;
  sh(NULL, NULL, "rm -rf '%s'", dir);
}

/* This host's name as kcast writes it into scratch names. */
static void host_part(char *buf, size_t cap) {
  char h[256] = "";
  if (gethostname(h, sizeof h - 1) != 0 || !h[0]) snprintf(h, sizeof h, "host");
  size_t n = 0;
  for (const char *p = h; *p && n + 1 < cap && n < 40; p++)
    buf[n++] = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                       *p == '.' ? *p : '-';
  buf[n] = 0;
}

/* A pid no process has (one that ran and was reaped). */
static pid_t dead_pid(void) {
  pid_t p = fork();
  if (p == 0) _exit(0);
  waitpid(p, NULL, 0);
  return p;
}

/*
 * SIGTERM or SIGKILL of import-kerneltuner --source left kcast-fe-*
 * folders in TMPDIR; SIGKILL of suite run its .kcast-suite-* folder that
 * later runs never cleaned.  A signal cleans up; the next run sweeps what
 * a kill -9 left (of dead processes of this host only).
 */
static void test_scratch_is_cleaned_on_signals_and_swept(void) {
  char dir[4096], tmp[4200], host[64], name[512], p[8192];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "ans-scratch"));
  fake_nvcc(dir);
  snprintf(tmp, sizeof tmp, "%s/tmp", dir);
  mkdir(tmp, 0700);
  host_part(host, sizeof host);
  static const int sigs[] = {SIGTERM, SIGINT};
  for (size_t k = 0; k < 2; k++) {
    snprintf(p, sizeof p, "%s/pids", dir);
    unlink(p);
    pid_t kp = fork();
    CU_ASSERT_FATAL(kp >= 0);
    if (kp == 0) {
      for (int q = 1; q < 32; q++) signal(q, SIG_DFL);
      char path[8192];
      snprintf(path, sizeof path, "%s/bin:%s", dir, getenv("PATH") ? getenv("PATH") : "");
      setenv("PATH", path, 1);
      setenv("TMPDIR", tmp, 1);
      int nul = open("/dev/null", O_RDWR);
      dup2(nul, 0), dup2(nul, 1), dup2(nul, 2);
      execl(tests_kcast(), tests_kcast(), "extract", "tests/kernels/saxpy.cu", (char *)NULL);
      _exit(127);
    }
    /* wait for the compiler to be running */
    int running = 0;
    for (double t0 = mono_s(); !running && mono_s() - t0 < 20;) {
      char *t = tests_read_file(p, NULL);
      running = t && *t;
      free(t);
      if (!running) usleep(20000);
    }
    CHECK_MSG("the compile started", running);
    kill(kp, sigs[k]);
    int st = 0;
    waitpid(kp, &st, 0);
    snprintf(name, sizeof name, "signal %d: kcast dies of it", sigs[k]);
    CHECK_MSG(name, WIFSIGNALED(st) && WTERMSIG(st) == sigs[k]);
    snprintf(name, sizeof name, "signal %d: the compiler's processes are killed", sigs[k]);
    CHECK_MSG(name, fake_nvcc_gone(dir) == 1);
    char *left = listing(tmp);
    snprintf(name, sizeof name, "signal %d: nothing left in TMPDIR (%.100s)", sigs[k],
             left ? left : "");
    CHECK_MSG(name, left && !*left);
    free(left);
  }
  /* what a kill -9 leaves: swept by the next run, a live owner's kept */
  pid_t dead = dead_pid();
  snprintf(p, sizeof p, "%s/kcast-fe-%s-%d-AbCdEf", tmp, host, (int)dead);
  mkdir(p, 0700);
  snprintf(p, sizeof p, "%s/kcast-fe-%s-%d-AbCdEf/in.cu", tmp, host, (int)dead);
  tests_write_file(p, "x", 1);
  snprintf(p, sizeof p, "%s/kcast-fe-%s-%d-LiVeOn", tmp, host, (int)getpid());
  mkdir(p, 0700);
  snprintf(p, sizeof p, "%s/kcast-fe-other.host-%d-AbCdEf", tmp, (int)dead);
  mkdir(p, 0700);
  int rc = sh(NULL, NULL, "TMPDIR='%s' '%s' extract tests/kernels/saxpy.cu", tmp, tests_kcast());
  char *left = listing(tmp);
  snprintf(name, sizeof name, "kcast-fe-%s-%d-AbCdEf", host, (int)dead);
  char live[512];
  snprintf(live, sizeof live, "kcast-fe-%s-%d-LiVeOn", host, (int)getpid());
  if (have_tool("nvcc"))
    CHECK_MSG("the next compile sweeps a dead process's kcast-fe folder, keeps a live one's "
              "and another host's", rc == 0 && left && !strstr(left, name) && strstr(left, live) &&
              strstr(left, "kcast-fe-other.host"));
  free(left);
  /* suite run: its .kcast-suite folder beside the output */
  char prog[8192], out[4200], man[4200];
  if (suite_prog("stencil2d", prog, sizeof prog)) {
    snprintf(out, sizeof out, "%s/out", dir);
    mkdir(out, 0700);
    snprintf(p, sizeof p, "%s/.kcast-suite-%s-%d-XyZzY1", out, host, (int)dead);
    mkdir(p, 0700);
    snprintf(p, sizeof p, "%s/.kcast-suite-%s-%d-XyZzY1/part.db", out, host, (int)dead);
    tests_write_file(p, "x", 1);
    snprintf(man, sizeof man, "%s/m.txt", dir);
    tests_write_file(man, "stencil2d 32 8 2\n", 17);
    char bindir[8192];
    snprintf(bindir, sizeof bindir, "%.*s", (int)(strrchr(prog, '/') - prog), prog);
    rc = kc(NULL, NULL, "suite run '%s' --bindir '%s' -o '%s/s.db'", man, bindir, out);
    left = listing(out);
    CHECK_MSG("suite run sweeps the scratch folder a killed run left beside its output",
              rc == 0 && left && !strstr(left, ".kcast-suite"));
    free(left);
  }
  sh(NULL, NULL, "rm -rf '%s'", dir);
}

/* ------------------------------------------------ messages and values -- */

/*
 * Each small, each a wrong answer or a misleading word: `kcast run ./nope`
 * said two things, the second wrong; `--summary -` wrote a file named
 * "-"; `-o %` said "unknown %at the end"; `--log /dev/full` lost the log
 * without a word; a .kcm whose length field is 2^64-1 was "expected 27
 * bytes"; a truncated .kcf had a "bad magic"; a cachefile kernel_name
 * with \u0000 was silently cut; device_name "" was stored as
 * "unknown-gpu"; a cachefile kernel_name the source lacks exited 2.
 */
static void test_messages_say_what_happened(void) {
  char dir[4096], p[4200], q[4200];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "ans-msg"));
  char *out = NULL, *err = NULL;
  snprintf(p, sizeof p, "%s/r.db", dir);
  int rc = kc(&out, &err, "run -o '%s' -- ./no-such-program", p);
  CHECK_MSG("kcast run ./nope: one line saying it cannot run, nothing about libcudart",
            rc == 127 && err && count_lines(err) == 1 && strstr(err, "No such file") &&
                !strstr(err, "libcudart"));
  free(out), free(err), out = err = NULL;
  char prog[8192];
  if (suite_prog("scan", prog, sizeof prog)) {
    rc = sh(&out, &err, "cd '%s' && '%s' run -o r.db --summary - -- '%s' 1024", dir,
            tests_kcast(), prog);
    snprintf(q, sizeof q, "%s/-", dir);
    CHECK_MSG("--summary - is standard output, not a file named '-'",
              rc == 0 && out && strstr(out, "kernel,demangled,launches") && access(q, F_OK) != 0);
    free(out), free(err), out = err = NULL;
  }
  rc = kc(&out, &err, "suite run /dev/null -o '%%'");
  CHECK_MSG("-o %: says a '%' ends the name", rc == 2 && err && strstr(err, "'%' ends the name"));
  free(out), free(err), out = err = NULL;
  if (suite_prog("stencil2d", prog, sizeof prog)) {
    snprintf(p, sizeof p, "%s/m.txt", dir);
    tests_write_file(p, "stencil2d 32 8 2\n", 17);
    char bindir[8192];
    snprintf(bindir, sizeof bindir, "%.*s", (int)(strrchr(prog, '/') - prog), prog);
    rc = kc(&out, &err, "suite run '%s' --bindir '%s' -o '%s/s.db' --log /dev/full", p, bindir, dir);
    CHECK_MSG("suite run --log /dev/full: exit 1 saying the log could not be written",
              rc == 1 && err && strstr(err, "/dev/full") && strstr(err, "cannot write the log"));
    free(out), free(err), out = err = NULL;
  }
  /* a model whose payload length is 2^64-1 */
  snprintf(p, sizeof p, "%s/t.csv", dir);
  FILE *f = fopen(p, "w");
  fprintf(f, "a,y\n");
  for (int i = 0; i < 20; i++) fprintf(f, "%d,%d\n", i, 2 * i);
  fclose(f);
  snprintf(q, sizeof q, "%s/m.kcm", dir);
  CU_ASSERT_EQUAL_FATAL(kc(NULL, NULL, "train --csv '%s' --target y --trees 3 -o '%s'", p, q), 0);
  size_t n = 0;
  char *m = tests_read_file(q, &n);
  CU_ASSERT_FATAL(m && n > 28);
  memset(m + 16, 0xff, 8);
  tests_write_file(q, m, n);
  rc = kc(&out, &err, "model info '%s'", q);
  CHECK_MSG("a .kcm whose length is 2^64-1 is named as such, not 'expected 27 bytes'",
            rc == 1 && err && strstr(err, "18446744073709551615") && !strstr(err, "expected 27"));
  free(m), free(out), free(err), out = err = NULL;
  /* a truncated feature model */
  snprintf(q, sizeof q, "%s/f.kcf", dir);
  CU_ASSERT_EQUAL_FATAL(kc(NULL, NULL, "featmodel fit datasets/data/suite-features.db --kernel "
                           "triad -o '%s'", q), 0);
  m = tests_read_file(q, &n);
  CU_ASSERT_FATAL(m && n > 40);
  tests_write_file(q, m, 20);
  rc = kc(&out, &err, "featmodel info '%s'", q);
  CHECK_MSG("a truncated .kcf is 'truncated', not 'bad magic'",
            rc == 1 && err && strstr(err, "truncated") && !strstr(err, "bad magic"));
  free(m), free(out), free(err), out = err = NULL;
  /* cachefiles */
  static const char cache[] =
      "{\"device_name\": \"%s\", \"kernel_name\": \"%s\", \"problem_size\": [100000], "
      "\"tune_params_keys\": [\"block_size_x\", \"tile_size_x\", \"use_bias\"], \"tune_params\": "
      "{\"block_size_x\": [32], \"tile_size_x\": [1], \"use_bias\": [0]}, \"objective\": "
      "\"time\", \"cache\": {\"32,1,0\": {\"block_size_x\": 32, \"tile_size_x\": 1, "
      "\"use_bias\": 0, \"time\": 0.5, \"times\": [0.5, 0.5]}}}\n";
  char text[2048], cf[4200], db[4200];
  snprintf(cf, sizeof cf, "%s/c.json", dir);
  snprintf(db, sizeof db, "%s/k.db", dir);
  int tl = snprintf(text, sizeof text, cache, "NVIDIA A100-PCIE-40GB", "scale\\u0000add");
  tests_write_file(cf, text, (size_t)tl);
  rc = kc(&out, &err, "dataset import-kerneltuner '%s' -o '%s'", cf, db);
  CHECK_MSG("a kernel_name with \\u0000 is refused, naming line and column",
            rc == 1 && err && strstr(err, "c.json:1:") && strstr(err, "u0000") &&
                access(db, F_OK) != 0);
  free(out), free(err), out = err = NULL;
  tl = snprintf(text, sizeof text, cache, "", "scale_add");
  tests_write_file(cf, text, (size_t)tl);
  rc = kc(&out, &err, "dataset import-kerneltuner '%s' -o '%s'", cf, db);
  CHECK_MSG("device_name \"\" is refused (give --gpu), not stored as unknown-gpu",
            rc == 1 && err && strstr(err, "device_name is empty") && access(db, F_OK) != 0);
  free(out), free(err), out = err = NULL;
  if (have_tool("nvcc")) {
    tl = snprintf(text, sizeof text, cache, "NVIDIA A100-PCIE-40GB", "nosuch");
    tests_write_file(cf, text, (size_t)tl);
    rc = kc(&out, &err, "dataset import-kerneltuner '%s' -o '%s' --source "
            "tests/tuning/scale_add.cu --grid-div-x block_size_x,tile_size_x --arg buf:400k "
            "--arg buf:400k:randf --arg 100000 --const scale=randf:3", cf, db);
    CHECK_MSG("a cachefile kernel_name the source lacks is bad input (exit 1), not usage",
              rc == 1 && err && strstr(err, "nosuch"));
    free(out), free(err), out = err = NULL;
  }
  sh(NULL, NULL, "rm -rf '%s'", dir);
}

/* The JSON object s holds, or NULL when it is not one. */
static cJSON *json_of(const char *s) {
  cJSON *j = s ? cJSON_Parse(s) : NULL;
  if (j && !cJSON_IsObject(j)) {
    cJSON_Delete(j);
    j = NULL;
  }
  return j;
}

/*
 * --format json for model info, featmodel info, suite run and run's
 * summary (tools had to scrape their tables), and tables of plain
 * numbers (1207900, not 1.2079e+06).
 */
static void test_json_everywhere_and_plain_tables(void) {
  char dir[4096], db[4200], model[4200], kcf[4200];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "ans-json"));
  snprintf(db, sizeof db, "%s/d.db", dir);
  snprintf(model, sizeof model, "%s/m.kcm", dir);
  snprintf(kcf, sizeof kcf, "%s/t.kcf", dir);
  CU_ASSERT_EQUAL_FATAL(write_dataset(db, 40), 0);
  CU_ASSERT_EQUAL_FATAL(kc(NULL, NULL, "train '%s' --gpu T4 --target time --trees 10 -o '%s'",
                           db, model), 0);
  char *out = NULL, *err = NULL;
  int rc = kc(&out, &err, "model info '%s' --format json", model);
  cJSON *j = json_of(out);
  CHECK_MSG("model info --format json: one object with target, unit, GPUs, features",
            rc == 0 && j && !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(j, "target")), "time") &&
                !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(j, "unit")), "ns") &&
                cJSON_GetArraySize(cJSON_GetObjectItem(j, "gpus")) == 1 &&
                cJSON_GetArraySize(cJSON_GetObjectItem(j, "features")) > 3 &&
                cJSON_IsObject(cJSON_GetObjectItem(j, "intervals")));
  cJSON_Delete(j), free(out), free(err), out = err = NULL;
  rc = kc(&out, &err, "model importance '%s' --format json --top 3", model);
  j = json_of(out);
  CHECK_MSG("model importance --format json: the ranked features",
            rc == 0 && j && cJSON_GetArraySize(cJSON_GetObjectItem(j, "importance")) == 3);
  cJSON_Delete(j), free(out), free(err), out = err = NULL;
  CU_ASSERT_EQUAL_FATAL(kc(NULL, NULL, "featmodel fit datasets/data/suite-features.db --kernel "
                           "triad -o '%s'", kcf), 0);
  rc = kc(&out, &err, "featmodel info '%s' --format json", kcf);
  j = json_of(out);
  CHECK_MSG("featmodel info --format json: kernel, counts and every form",
            rc == 0 && j && strstr(cJSON_GetStringValue(cJSON_GetObjectItem(j, "kernel")), "triad") &&
                cJSON_IsObject(cJSON_GetObjectItem(j, "forms")) &&
                cJSON_GetArraySize(cJSON_GetObjectItem(j, "forms")) > 10);
  cJSON_Delete(j), free(out), free(err), out = err = NULL;
  char prog[8192];
  if (suite_prog("stencil2d", prog, sizeof prog)) {
    char man[4200], sdb[4200], bindir[8192];
    snprintf(man, sizeof man, "%s/m.txt", dir);
    snprintf(sdb, sizeof sdb, "%s/s.db", dir);
    tests_write_file(man, "stencil2d 32 8 2\n", 17);
    snprintf(bindir, sizeof bindir, "%.*s", (int)(strrchr(prog, '/') - prog), prog);
    rc = kc(&out, &err, "suite run '%s' --bindir '%s' -o '%s' --format json", man, bindir, sdb);
    j = json_of(out);
    cJSON *e = j ? cJSON_GetArrayItem(cJSON_GetObjectItem(j, "entries"), 0) : NULL;
    CHECK_MSG("suite run --format json: one object on stdout, each entry's state and launches",
              rc == 0 && j && cJSON_GetNumberValue(cJSON_GetObjectItem(j, "passed")) == 1 && e &&
                  !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(e, "state")), "passed") &&
                  cJSON_GetNumberValue(cJSON_GetObjectItem(e, "launches")) == 2 &&
                  err && strstr(err, "passed"));
    cJSON_Delete(j), free(out), free(err), out = err = NULL;
    rc = kc(&out, &err, "run -o '%s' --summary - --format json -- '%s' 32 8 2", sdb, prog);
    const char *brace = out ? strchr(out, '{') : NULL;
    j = json_of(brace);
    cJSON *k0 = j ? cJSON_GetArrayItem(cJSON_GetObjectItem(j, "kernels"), 0) : NULL;
    CHECK_MSG("run --summary - --format json: the counts and the kernels",
              rc == 0 && j && cJSON_GetNumberValue(cJSON_GetObjectItem(j, "launches_recorded")) == 2 &&
                  k0 && cJSON_GetNumberValue(cJSON_GetObjectItem(k0, "launches")) == 2);
    cJSON_Delete(j), free(out), free(err), out = err = NULL;
  }
  /* a launch long enough for a time in the millions of us (64 CTAs: the
     default sampling also runs the last CTA, whose index overflows saxpy's
     int arithmetic to an address before every allocation, a fault) */
  rc = kc(&out, &err, "predict tests/ptx/saxpy_nvcc.ptx --kernel saxpy --grid 2147483647 "
          "--block 1024 --arg 2147483647 --arg 2.0 --arg buf:64k --arg buf:64k --gpu K80 "
          "--oob warn --sample 64");
  CHECK_MSG("predict's table prints plain numbers, never an exponent",
            rc == 0 && out && strstr(out, "K80") && !strstr(out, "e+"));
  free(out), free(err), out = err = NULL;
  sh(NULL, NULL, "rm -rf '%s'", dir);
}

/* The 1-based line of fork_src holding what. */
static int src_line_of(const char *what) {
  const char *p = strstr(fork_src, what);
  int n = 1;
  for (const char *q = fork_src; p && q < p; q++) n += *q == '\n';
  return p ? n : -1;
}

/*
 * A fault in a .cu named the line of the generated PTX (k.cu:38 was not
 * line 38 of k.cu), and kernel parameters by their PTX names.  The front
 * ends compile with line information (.loc/.file), messages name the
 * source line (and the PTX line), and the buffer a fault hit is named by
 * its parameter's source name.
 */
static void test_faults_name_source_lines_and_parameters(void) {
  char dir[4096], cu[4200];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "ans-loc"));
  snprintf(cu, sizeof cu, "%s/k.cu", dir);
  static const char k[] =
      "#include <cstdio>\n"
      "// a few lines before the kernel\n"
      "//\n"
      "//\n"
      "__global__ void oob(float *out, const float *in, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  out[i] = in[i + n] * 2.0f;\n"
      "}\n";
  CU_ASSERT_EQUAL_FATAL(tests_write_file(cu, k, sizeof k - 1), 0);
  if (!have_tool("nvcc")) {
    fprintf(stderr, "(nvcc missing: skipped) ");
    return;
  }
  static const char *const compilers[] = {"nvcc", "clang"};
  for (int c = 0; c < 2; c++) {
    if (c == 1 && !have_tool("clang-22")) continue;
    char *out = NULL, *err = NULL, msg[256];
    int rc = sh(&out, &err, "cd '%s' && '%s' emulate k.cu --compiler %s --kernel oob --grid 1 "
                "--block 32 --arg buf:128 --arg buf:128 --arg 1000", dir, tests_kcast(),
                compilers[c]);
    snprintf(msg, sizeof msg, "%s: the fault names k.cu:7, the load's source line", compilers[c]);
    CHECK_MSG(msg, rc == 1 && err && strstr(err, "k.cu:7 (PTX line"));
    snprintf(msg, sizeof msg, "%s: ...and the buffer by its parameter's source name", compilers[c]);
    CHECK_MSG(msg, err && strstr(err, "parameter 1 'in'") && strstr(err, "past the end"));
    free(out), free(err), out = err = NULL;
  }
  char *out = NULL, *err = NULL;
  int rc = sh(&out, &err, "cd '%s' && '%s' emulate k.cu --kernel oob --grid 1 --block 32 --arg "
              "buf:128", dir, tests_kcast());
  CHECK_MSG("an --arg count that does not fit lists the parameters by their source names",
            rc == 2 && err && strstr(err, "'out'") && strstr(err, "'in'") && strstr(err, "'n'"));
  free(out), free(err), out = err = NULL;
  /* kcast run of a program built by kcast nvcc */
  char prog[8600], db[4200], want[64];
  if (fork_prog("forks", "", prog, sizeof prog)) {
    snprintf(db, sizeof db, "%s/w.db", dir);
    rc = kc(&out, &err, "run -o '%s' --oob error -- '%s' wild", db, prog);
    snprintf(want, sizeof want, "forks.cu:%d (PTX line", src_line_of("x[threadIdx.x + 100000000]"));
    CHECK_MSG("kcast run: the fault names the source line of the program's kernel",
              rc == 4 && err && strstr(err, want));
    free(out), free(err), out = err = NULL;
  }
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
  TEST_ADD(s, test_a_killed_writer_leaves_a_dataset_that_opens);
  TEST_ADD(s, test_foreign_sqlite_reads_are_bounded);
  TEST_ADD(s, test_nsight_values_are_read_exactly_or_refused);
  TEST_ADD(s, test_nsight_fuzzers_run_clean);
  TEST_ADD(s, test_run_records_every_process_and_names_lost_kernels);
  TEST_ADD(s, test_run_leaves_no_process_behind);
  TEST_ADD(s, test_every_compiler_run_has_a_time_limit);
  TEST_ADD(s, test_scratch_is_cleaned_on_signals_and_swept);
  TEST_ADD(s, test_messages_say_what_happened);
  TEST_ADD(s, test_json_everywhere_and_plain_tables);
  TEST_ADD(s, test_faults_name_source_lines_and_parameters);
}
