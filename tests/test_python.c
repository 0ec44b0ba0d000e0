/*
 * test_python.c -- the Python package (python/) under pytest, as one CUnit
 * test so that `make test` ends with one summary: the extension and the
 * package make python built into $(BUILD)/python are imported from there
 * and python/tests run against this build's kcast binary.  Skipped, saying
 * why, where the package was not built (no python3 with numpy; sanitizer
 * builds) or pytest is missing.
 */
#include "tests.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void test_pytest_suite(void) {
  const char *py = getenv("KCAST_PYTHON");
  char built[4096];
  snprintf(built, sizeof built, "%s/python/kcast/.built", tests_build());
  if (!py || !*py || access(built, F_OK)) {
    printf("\n  [skip: the Python package is not built for this build (make python)] ");
    return;
  }
  char probe[4200];
  snprintf(probe, sizeof probe, "'%s' -c 'import pytest, numpy' 2>/dev/null", py);
  if (tests_run(probe, NULL, NULL)) {
    printf("\n  [skip: %s has no pytest or numpy (make deps)] ", py);
    return;
  }
  char cwd[2048], cmd[12000];
  CU_ASSERT_PTR_NOT_NULL_FATAL(getcwd(cwd, sizeof cwd));
  /* run from the build folder: the source tree's python/kcast (without the
     extension) must not shadow the built package */
  snprintf(cmd, sizeof cmd,
           "cd '%s' && PYTHONPATH='%s/python' KCAST_BIN='%s' KCAST_BUILD='%s' '%s' -m pytest -q "
           "-rs -p no:cacheprovider '%s/python/tests' 2>&1",
           tests_build(), tests_build(), tests_kcast(), tests_build(), py, cwd);
  char *out = NULL;
  int rc = tests_run(cmd, &out, NULL);
  /* the summary and the skips, for the log */
  const char *last = out ? out : "";
  for (const char *p = last; p && *p; p++)
    if (!strncmp(p, "SKIPPED", 7) || !strncmp(p, "FAILED", 6)) {
      const char *e = strchr(p, '\n');
      printf("\n    %.*s", (int)(e ? e - p : (long)strlen(p)), p);
      p = e ? e : p + strlen(p) - 1;
    }
  const char *end = out ? out + strlen(out) : NULL;
  while (end && end > out && (end[-1] == '\n')) end--;
  const char *ls = end;
  while (ls && ls > out && ls[-1] != '\n') ls--;
  if (ls) printf("\n    pytest: %.*s ", (int)(end - ls), ls);
  CU_assertImplementation(rc == 0, __LINE__, "the Python package's tests pass under pytest",
                          __FILE__, "", CU_FALSE);
  if (rc && out) printf("\n%.6000s", out);
  free(out);
}

TEST_SUITES(register_python) {
  CU_pSuite s = tests_suite("python");
  TEST_ADD(s, test_pytest_suite);
}
