/*
 * tests.h -- shared helpers of the CUnit test runner.
 *
 * Every tests/test_*.c registers its suites with TEST_SUITES(fn): fn runs
 * before main's CU_basic_run_tests and adds suites with CU_add_suite.  The
 * runner (test_main.c) collects them, so adding a test file needs no list.
 *
 * Environment (set by `make test`): KCAST_BIN is the CLI, KCAST_BUILD the
 * build folder (the compiled kernel corpus lives in $KCAST_BUILD/corpus).
 */
#ifndef KCAST_TESTS_H
#define KCAST_TESTS_H

#include <CUnit/CUnit.h>
#include <stddef.h>

typedef void (*tests_registrar)(void);
void tests_add_registrar(tests_registrar fn);

#define TEST_SUITES(fn)                                          \
  static void fn(void);                                          \
  __attribute__((constructor)) static void fn##_autoreg(void) {  \
    tests_add_registrar(fn);                                     \
  }                                                              \
  static void fn(void)

/* Add a suite with its tests; aborts the runner on CUnit errors. */
CU_pSuite tests_suite(const char *name);
#define TEST_ADD(suite, fn) tests_add((suite), #fn, (fn))
void tests_add(CU_pSuite s, const char *name, CU_TestFunc fn);

/* Path of the kcast CLI (KCAST_BIN, default build/kcast). */
const char *tests_kcast(void);
/* Build folder (KCAST_BUILD, default build). */
const char *tests_build(void);
/* A fresh scratch folder under $KCAST_BUILD/tmp; the string is static
   storage per call site until the next call. Returns NULL on failure. */
char *tests_tmpdir(char *buf, size_t cap, const char *tag);

/*
 * Run a shell command; capture stdout and stderr (each NUL-terminated,
 * malloc'd, caller frees; either pointer may be NULL to discard).  Returns
 * the exit status (0..255), or -1 when the command could not run or was
 * killed by a signal (128+signal is returned for a signal).
 */
int tests_run(const char *cmd, char **out, char **err);

/* Read a whole file (malloc'd, NUL-terminated); NULL on failure. */
char *tests_read_file(const char *path, size_t *len);
/* Write a file; 0 on success. */
int tests_write_file(const char *path, const void *data, size_t len);

#endif
