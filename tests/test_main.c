/*
 * test_main.c -- the one test runner: every suite in tests/, then CUnit's
 * summary.  Exit status is non-zero when any assertion failed.
 *
 *   kcast-tests              every suite
 *   kcast-tests SUITE...     only the named suites (e.g. under valgrind)
 */
#include "tests.h"

#include <CUnit/Basic.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_REGISTRARS 64
static tests_registrar registrars[MAX_REGISTRARS];
static int nregistrars;

void tests_add_registrar(tests_registrar fn) {
  if (nregistrars < MAX_REGISTRARS) registrars[nregistrars++] = fn;
}

CU_pSuite tests_suite(const char *name) {
  CU_pSuite s = CU_add_suite(name, NULL, NULL);
  if (!s) {
    fprintf(stderr, "kcast-tests: cannot add suite %s: %s\n", name, CU_get_error_msg());
    exit(2);
  }
  return s;
}

void tests_add(CU_pSuite s, const char *name, CU_TestFunc fn) {
  if (!CU_add_test(s, name, fn)) {
    fprintf(stderr, "kcast-tests: cannot add test %s: %s\n", name, CU_get_error_msg());
    exit(2);
  }
}

const char *tests_kcast(void) {
  const char *p = getenv("KCAST_BIN");
  return p && *p ? p : "build/kcast";
}

const char *tests_build(void) {
  const char *p = getenv("KCAST_BUILD");
  return p && *p ? p : "build";
}

char *tests_tmpdir(char *buf, size_t cap, const char *tag) {
  char base[4096];
  snprintf(base, sizeof base, "%s/tmp", tests_build());
  mkdir(base, 0777);
  int n = snprintf(buf, cap, "%s/%s-XXXXXX", base, tag);
  if (n < 0 || (size_t)n >= cap) return NULL;
  return mkdtemp(buf);
}

static char *slurp_fd(FILE *f, size_t *outlen) {
  size_t cap = 4096, len = 0;
  char *s = malloc(cap);
  if (!s) return NULL;
  size_t r;
  while ((r = fread(s + len, 1, cap - len - 1, f)) > 0) {
    len += r;
    if (cap - len < 2) {
      char *t = realloc(s, cap * 2);
      if (!t) { free(s); return NULL; }
      s = t; cap *= 2;
    }
  }
  s[len] = 0;
  if (outlen) *outlen = len;
  return s;
}

int tests_run(const char *cmd, char **out, char **err) {
  char dir[4096], errpath[4200], full[16384];
  if (!tests_tmpdir(dir, sizeof dir, "run")) return -1;
  snprintf(errpath, sizeof errpath, "%s/stderr", dir);
  snprintf(full, sizeof full, "( %s ) 2>'%s'", cmd, errpath);
  FILE *p = popen(full, "r");
  if (!p) return -1;
  char *o = slurp_fd(p, NULL);
  int st = pclose(p);
  if (out) *out = o; else free(o);
  if (err) *err = tests_read_file(errpath, NULL);
  unlink(errpath);
  rmdir(dir);
  if (st == -1) return -1;
  if (WIFEXITED(st)) return WEXITSTATUS(st);
  if (WIFSIGNALED(st)) return 128 + WTERMSIG(st);
  return -1;
}

char *tests_read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *s = slurp_fd(f, len);
  fclose(f);
  return s;
}

int tests_write_file(const char *path, const void *data, size_t len) {
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  size_t w = fwrite(data, 1, len, f);
  int rc = fclose(f);
  return (w == len && rc == 0) ? 0 : -1;
}

/* Keep only the suites named on the command line active. */
static int select_suites(int argc, char **argv) {
  if (argc < 2) return 0;
  CU_pTestRegistry reg = CU_get_registry();
  for (int i = 1; i < argc; i++)
    if (!CU_get_suite_by_name(argv[i], reg)) {
      fprintf(stderr, "kcast-tests: no suite named '%s'\n", argv[i]);
      return -1;
    }
  for (CU_pSuite s = reg->pSuite; s; s = s->pNext) {
    int keep = 0;
    for (int i = 1; i < argc; i++) keep |= strcmp(s->pName, argv[i]) == 0;
    CU_set_suite_active(s, keep ? CU_TRUE : CU_FALSE);
  }
  return 0;
}

int main(int argc, char **argv) {
  if (CU_initialize_registry() != CUE_SUCCESS) {
    fprintf(stderr, "kcast-tests: %s\n", CU_get_error_msg());
    return 2;
  }
  for (int i = 0; i < nregistrars; i++) registrars[i]();
  if (select_suites(argc, argv) != 0) {
    CU_cleanup_registry();
    return 2;
  }
  CU_basic_set_mode(CU_BRM_VERBOSE);
  CU_basic_run_tests();
  unsigned failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
  unsigned run = CU_get_number_of_tests_run();
  CU_cleanup_registry();
  if (run == 0) {
    fprintf(stderr, "kcast-tests: no test ran\n");
    return 1;
  }
  return failed ? 1 : 0;
}
