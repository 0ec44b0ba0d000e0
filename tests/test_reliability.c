/*
 * test_reliability.c -- `make reliability`: hostile and careless input,
 * faults, kills, full disks and concurrent writers.  Each case is one of
 * the ways kcast used to lose data, run a user's string through a shell or
 * leave something behind, and checks that it no longer does: one clear
 * error line, a non-zero exit, nothing lost, nothing left over.
 *
 * The cases drive the CLI (KCAST_BIN) where the fault is the CLI's and the
 * library where it is the library's.  A full disk is a tiny tmpfs where
 * this process may mount one (root in a private mount namespace) and
 * /dev/full otherwise; cases that need something this machine lacks (nvcc,
 * the suite programs, a mount) say so and skip.
 */
#include "tests.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "include/kcast.h"

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

static int exists(const char *dir, const char *name) {
  char p[8192];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  struct stat sb;
  return lstat(p, &sb) == 0;
}

static int have_tool(const char *name) {
  char cmd[256];
  snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", name);
  return tests_run(cmd, NULL, NULL) == 0;
}

/* Absolute path of a file of the tree (tests run from the repository root). */
static const char *abs_path(const char *rel, char *buf, size_t cap) {
  char cwd[4096];
  if (!getcwd(cwd, sizeof cwd)) return rel;
  if ((size_t)snprintf(buf, cap, "%s/%.*s", cwd, 1000, rel) >= cap) return rel;
  return buf;
}

/* Number of lines of s (a last line without newline counts). */
static unsigned count_lines(const char *s) {
  unsigned n = 0;
  for (const char *p = s; p && *p; p++)
    if (*p == '\n' || !p[1]) n++;
  return n;
}

/* ------------------------------------------------ 1. names and shells -- */

/*
 * nvcc runs its stages through a shell with the file name pasted into the
 * command lines: a name holding $(...) must still be only a name, for
 * extract, emulate, predict FILE.cu and kcast_features_from_ptx, and
 * nvcc's messages must name the user's file (and the header it includes).
 */
static void test_file_name_never_reaches_a_shell(void) {
  if (!have_tool("nvcc")) {
    fprintf(stderr, "(nvcc not on PATH: skipped) ");
    return;
  }
  char dir[4096], saxpy[8192], kcast[8192];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "rel-inj"));
  abs_path("tests/kernels/saxpy.cu", saxpy, sizeof saxpy);
  snprintf(kcast, sizeof kcast, "%s", tests_kcast());
  if (kcast[0] != '/') abs_path(tests_kcast(), kcast, sizeof kcast);
  /* A source whose name runs a command, and a folder whose name does,
     holding a source that includes a header next to it. */
  CU_ASSERT_EQUAL_FATAL(sh(NULL, NULL,
      "cd '%s' && cp '%s' 'x$(touch PWNED1).cu' && mkdir 'd$(touch PWNED2)' && "
      "printf '#define SCALE 2.0f\\n' > 'd$(touch PWNED2)/h.h' && "
      "printf '#include \"h.h\"\\n__global__ void k(float *x) { x[threadIdx.x] *= SCALE; }\\n' "
      "> 'd$(touch PWNED2)/k.cu' && "
      "printf '__global__ void bad(float *x) {\\n  x[0] = undefined_thing;\\n}\\n' "
      "> 'd$(touch PWNED2)/bad`touch PWNED3`.cu'", dir, saxpy), 0);
  char *out = NULL, *err = NULL;
  int rc = sh(&out, &err, "cd '%s' && '%s' extract 'x$(touch PWNED1).cu'", dir, kcast);
  CHECK_MSG("extract of a $(...) name succeeds", rc == 0 && out && strstr(out, "_Z5saxpyifPKfPf"));
  free(out), free(err);
  rc = sh(&out, &err, "cd '%s' && '%s' extract 'd$(touch PWNED2)/k.cu'", dir, kcast);
  CHECK_MSG("extract in a $(...) folder finds the header beside the source",
            rc == 0 && out && strstr(out, "_Z1kPf"));
  free(out), free(err);
  rc = sh(&out, &err, "cd '%s' && '%s' emulate 'x$(touch PWNED1).cu' --kernel saxpy_c "
          "--grid 1 --block 32 --arg 32 --arg 2.0 --arg buf:128 --arg buf:128", dir, kcast);
  CHECK_MSG("emulate of a $(...) name succeeds", rc == 0);
  free(out), free(err);
  rc = sh(&out, &err, "cd '%s' && '%s' predict 'x$(touch PWNED1).cu' --kernel saxpy_c "
          "--grid 1 --block 32 --arg 32 --arg 2.0 --arg buf:128 --arg buf:128 --gpu T4", dir, kcast);
  CHECK_MSG("predict FILE.cu of a $(...) name succeeds", rc == 0);
  free(out), free(err);
  rc = sh(&out, &err, "cd '%s' && '%s' extract 'd$(touch PWNED2)/bad`touch PWNED3`.cu'", dir,
          kcast);
  CHECK_MSG("a compile error exits 1", rc == 1);
  CHECK_MSG("the compile error names the user's file and line, on one line",
            err && strstr(err, "kcast: d$(touch PWNED2)/bad`touch PWNED3`.cu:2: error: ") &&
            strstr(err, "undefined_thing") && count_lines(err) == 1);
  free(out), free(err);
  /* kcast nvcc hands its arguments to nvcc as they are: such a name is refused. */
  rc = sh(&out, &err, "cd '%s' && '%s' nvcc -o app 'x$(touch PWNED4).cu'", dir, kcast);
  CHECK_MSG("kcast nvcc refuses a name its shell would run", rc == 1 && err &&
            strstr(err, "x$(touch PWNED4).cu") && !exists(dir, "PWNED4"));
  free(out), free(err);
  /* The library entry point compiles through the same front end. */
  char api_path[8192];
  snprintf(api_path, sizeof api_path, "%s/x$(touch PWNED1).cu", dir);
  kcast_arg args[4] = {{KCAST_ARG_SCALAR, 32, 0, 0, 0}, {KCAST_ARG_SCALAR, 0x40000000u, 0, 0, 0},
                       {KCAST_ARG_BUFFER, 0, 128, KCAST_FILL_ZERO, 0},
                       {KCAST_ARG_BUFFER, 0, 128, KCAST_FILL_ZERO, 0}};
  kcast_launch_config c = KCAST_LAUNCH_CONFIG_INIT;
  c.block[0] = 32;
  c.args = args;
  c.nargs = 4;
  kcast_features *fs = NULL;
  CHECK_MSG("kcast_features_from_ptx of a $(...) name succeeds",
            kcast_features_from_ptx(api_path, "saxpy_c", &c, &fs) == KCAST_OK);
  kcast_features_free(fs);
  char cwd[4096];
  CHECK_MSG("nothing ran in the test folder", !exists(dir, "PWNED1") && !exists(dir, "PWNED2") &&
                                                  !exists(dir, "PWNED3"));
  CHECK_MSG("nothing ran in the working folder",
            getcwd(cwd, sizeof cwd) && !exists(cwd, "PWNED1") && !exists(cwd, "PWNED3"));
  sh(NULL, NULL, "rm -rf '%s'", dir);
}

/* ------------------------------------------------------ 3. the output -- */

/* A small CSV with a learnable target (y = 2 a + b). */
static int write_train_csv(const char *path, unsigned rows) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  fprintf(f, "a,b,y\n");
  for (unsigned i = 0; i < rows; i++)
    fprintf(f, "%u,%u,%u\n", i % 17, (i * 7) % 5, 2 * (i % 17) + (i * 7) % 5);
  return fclose(f);
}

/*
 * Every command's standard output on a full device: the command must fail
 * (non-zero) with a line saying the output could not be written, whether
 * the output is short (caught at the final flush) or long (caught by the
 * stream's error flag).
 */
static void test_output_to_a_full_device_fails(void) {
  char dir[4096], csv[4200], model[4200], feats[4200];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "rel-full"));
  snprintf(csv, sizeof csv, "%s/train.csv", dir);
  snprintf(model, sizeof model, "%s/m.kcm", dir);
  snprintf(feats, sizeof feats, "%s/rows.csv", dir);
  CU_ASSERT_EQUAL_FATAL(write_train_csv(csv, 60), 0);
  CU_ASSERT_EQUAL_FATAL(tests_write_file(feats, "a,b\n1,2\n3,4\n", 12), 0);
  CU_ASSERT_EQUAL_FATAL(sh(NULL, NULL, "'%s' train --csv '%s' --target y --trees 10 -o '%s'",
                           tests_kcast(), csv, model), 0);
  /* $M, $C and $F are the model, the training CSV and the rows above. */
  static const char *const cmds[] = {
      "version", "help", "help run", "gpus", "predict --model \"$M\" --features \"$F\"",
      "dataset stats datasets/data/suite-features.db",
      "dataset export datasets/data/suite-features.db --format csv", "model info \"$M\"",
      "model importance \"$M\"", "cv --csv \"$C\" --target y --trees 10 --folds 3",
      "train --csv \"$C\" --target y --trees 10 -o \"$M.2\"", "extract tests/ptx/saxpy_nvcc.ptx",
      "extract tests/kernels/saxpy.cu --list",
      "emulate tests/ptx/saxpy_nvcc.ptx --grid 1 --block 32 --arg 32 "
      "--arg 2.0 --arg buf:128 --arg buf:128"};
  for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
    if (strstr(cmds[i], "--list") && !have_tool("nvcc")) continue;
    char *err = NULL, msg[8400];
    int ok = sh(NULL, NULL, "M='%s' C='%s' F='%s'; '%s' %s > /dev/null", model, csv, feats,
                tests_kcast(), cmds[i]) == 0;
    int rc = sh(NULL, &err, "M='%s' C='%s' F='%s'; '%s' %s > /dev/full", model, csv, feats,
                tests_kcast(), cmds[i]);
    snprintf(msg, sizeof msg, "kcast %s > /dev/full exits 1 saying the output was lost (rc %d: %.300s)",
             cmds[i], rc, err ? err : "");
    CHECK_MSG(msg, ok && rc == 1 && err && strstr(err, "standard output") &&
                       strstr(err, "No space left on device"));
    free(err);
  }
  sh(NULL, NULL, "rm -rf '%s'", dir);
}

/* --------------------------------------------------------------- suites -- */

TEST_SUITES(register_reliability) {
  CU_pSuite s = tests_suite("reliability");
  TEST_ADD(s, test_file_name_never_reaches_a_shell);
  TEST_ADD(s, test_output_to_a_full_device_fails);
}
