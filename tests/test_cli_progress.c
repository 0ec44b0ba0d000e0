/*
 * test_cli_progress.c -- the Nsight habits every command shares
 * (cli/cli_opt.c): -k/--kernel-name with Nsight Compute's meaning (an
 * exact name unless regex:EXPR) beside --kernel REGEX, and --progress /
 * --quiet for runs whose stderr is a log.  A suite program (gemm_tiled
 * 512 16, about 2 s under the emulator) runs with stderr a file (a log)
 * and on a pseudo-terminal (script(1)).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests.h"

#define CHECK_MSG(msg, cond) \
  CU_assertImplementation(!!(cond), __LINE__, (msg), __FILE__, "", CU_FALSE)

static char dir[1024], prog[1200];

static int sh(char **out, char **err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int sh(char **out, char **err, const char *fmt, ...) {
  char cmd[8192];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cmd, sizeof cmd, fmt, ap);
  va_end(ap);
  return tests_run(cmd, out, err);
}

static int have_prog(void) {
  snprintf(prog, sizeof prog, "%s/suite/gemm_tiled", tests_build());
  if (access(prog, X_OK) == 0) return 1;
  printf("\n    (no %s: make suite builds it; skipped) ", prog);
  return 0;
}

static int count(const char *s, const char *needle) {
  int n = 0;
  for (const char *p = s; p && (p = strstr(p, needle)); p += strlen(needle)) n++;
  return n;
}

/* Launches dataset export lists (its CSV rows after the header). */
static int exported(const char *db, const char *opts) {
  char *out = NULL;
  int rc = sh(&out, NULL, "'%s' dataset export '%s' --format csv %s", tests_kcast(), db, opts);
  int n = rc == 0 && out ? count(out, "\n") - 1 : -1;
  free(out);
  return n;
}

static void test_kernel_name(void) {
  if (!have_prog()) return;
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "knames"));
  char *out = NULL, *err = NULL;
  /* gemm_tiled N TILE launches gemm_tiled_kernel<TILE> once */
  static const struct { const char *opt; int launches; const char *what; } cases[] = {
    {"-k 'gemm_tiled_kernel<8>'", 1, "-k with the source name and template arguments"},
    {"-k gemm_tiled_kernel", 1, "-k with the source name alone"},
    {"-k _Z17gemm_tiled_kernelILi8EEviffPKfS1_Pf", 1, "-k with the mangled name"},
    {"--kernel-name=gemm_tiled", 0, "--kernel-name is exact: a prefix is not a match"},
    {"-kgemm_tiled", 0, "-kNAME: exact, a prefix is not a match"},
    {"-k regex:gemm_t", 1, "-k regex:EXPR searches as --kernel does"},
    {"-k 'regex:kernel<16>'", 0, "-k regex:EXPR that matches nothing"},
    {"--kernel gemm_t", 1, "--kernel REGEX as before"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    char db[1200], msg[200];
    snprintf(db, sizeof db, "%s/r%zu.db", dir, k);
    int rc = sh(&out, &err, "'%s' run -o '%s' %s -- '%s' 64 8", tests_kcast(), db, cases[k].opt, prog);
    snprintf(msg, sizeof msg, "run %s", cases[k].what);
    char want[64];
    snprintf(want, sizeof want, ": %d launches of gemm_tiled recorded", cases[k].launches);
    CHECK_MSG(msg, rc == 0 && err && strstr(err, want));
    free(out); free(err);
  }
  char db0[1200];
  snprintf(db0, sizeof db0, "%s/all.db", dir);
  CU_ASSERT_EQUAL_FATAL(sh(NULL, NULL, "'%s' run -o '%s' -- '%s' 64 8 && '%s' run -o '%s' -- '%s' 64 16",
                           tests_kcast(), db0, prog, tests_kcast(), db0, prog), 0);
  CHECK_MSG("dataset export -k takes the one instance", exported(db0, "-k 'gemm_tiled_kernel<16>'") == 1);
  CHECK_MSG("dataset export -k NAME of a template's name takes both instances",
            exported(db0, "-k gemm_tiled_kernel") == 2);
  CHECK_MSG("dataset export without a filter has both", exported(db0, "") == 2);
  int rc = sh(&out, &err, "'%s' run -o '%s/x.db' -k 'regex:(' -- '%s' 64 8", tests_kcast(), dir, prog);
  CHECK_MSG("-k regex: with a bad expression is a usage error naming it",
            rc == 2 && err && strstr(err, "-k 'regex:('"));
  free(out); free(err);
  rc = sh(&out, &err, "'%s' run -o '%s/x.db' -k a --kernel b -- '%s' 64 8", tests_kcast(), dir, prog);
  CHECK_MSG("-k and --kernel together are a usage error", rc == 2 && err && strstr(err, "give one"));
  free(out); free(err);
  rc = sh(&out, &err, "'%s' train -k x", tests_kcast());
  CHECK_MSG("a command without a kernel filter has no -k", rc == 2 && err && strstr(err, "'-k'"));
  free(out); free(err);
}

static void test_progress_quiet(void) {
  if (!have_prog()) return;
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "progress"));
  char *out = NULL, *err = NULL;
  const char *line = "kcast run: 0 launches done, launch 0 _Z17gemm_tiled_kernel";
  /* stderr a file: nothing by default, whole lines with --progress */
  int rc = sh(&out, &err, "'%s' run -o '%s/a.db' -- '%s' 512 16", tests_kcast(), dir, prog);
  CHECK_MSG("by default a log gets no progress", rc == 0 && err && !strstr(err, "launches done"));
  free(out); free(err);
  rc = sh(&out, &err, "'%s' run --progress -o '%s/b.db' -- '%s' 512 16", tests_kcast(), dir, prog);
  CHECK_MSG("--progress: a log gets whole progress lines (no carriage return, no escape)",
            rc == 0 && err && strstr(err, line) && !strchr(err, '\r') && !strchr(err, '\033'));
  if (!(err && strstr(err, line))) printf("\n    %s", err ? err : "");
  free(out); free(err);
  /* a terminal: progress by default, none with --quiet */
  if (access("/usr/bin/script", X_OK) == 0) {
    rc = sh(&out, NULL, "script -qefc \"'%s' run -o '%s/c.db' -- '%s' 512 16\" /dev/null",
            tests_kcast(), dir, prog);
    CHECK_MSG("on a terminal progress is redrawn in place by default",
              rc == 0 && out && strstr(out, "\rkcast run: 0 launches done"));
    free(out);
    rc = sh(&out, NULL, "script -qefc \"'%s' run --quiet -o '%s/d.db' -- '%s' 512 16\" /dev/null",
            tests_kcast(), dir, prog);
    CHECK_MSG("--quiet: no progress even on a terminal",
              rc == 0 && out && strstr(out, "recorded in") && !strstr(out, "launches done"));
    free(out);
  } else {
    printf("\n    (no script(1): the terminal half is skipped) ");
  }
  /* suite run: which entries run, in a log */
  char m[1200];
  snprintf(m, sizeof m, "%s/m.txt", dir);
  CU_ASSERT_EQUAL_FATAL(tests_write_file(m, "gemm_tiled 512 16\n", 18), 0);
  rc = sh(&out, &err, "'%s' suite run '%s' --bindir '%s/suite' -o '%s/s.db' --progress",
          tests_kcast(), m, tests_build(), dir);
  CHECK_MSG("suite run --progress says in the log which entry runs",
            rc == 0 && err && strstr(err, "kcast suite run: 0/1 done, running: gemm_tiled 512 16 ("));
  free(out); free(err);
  rc = sh(&out, &err, "'%s' gpus --progress --quiet", tests_kcast());
  CHECK_MSG("--progress with --quiet is a usage error", rc == 2 && err && strstr(err, "exclude"));
  free(out); free(err);
  rc = sh(&out, &err, "'%s' gpus --quiet", tests_kcast());
  CHECK_MSG("every command takes --quiet", rc == 0);
  free(out); free(err);
}

TEST_SUITES(cli_progress_suites) {
  CU_pSuite s = tests_suite("cli_progress");
  TEST_ADD(s, test_kernel_name);
  TEST_ADD(s, test_progress_quiet);
}
