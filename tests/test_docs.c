/*
 * test_docs.c -- the command reference (docs/cli.md) is generated from the
 * program's own help texts; this suite fails when the two have drifted
 * apart (fix: `make docs`).
 */
#include "tests.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_cli_reference_is_current(void) {
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "sh tools/gen-cli-doc.sh '%s'", tests_kcast());
  char *gen = NULL;
  int rc = tests_run(cmd, &gen, NULL);
  CU_ASSERT_EQUAL(rc, 0); /* the generator runs against this build's kcast */
  size_t len = 0;
  char *doc = tests_read_file("docs/cli.md", &len);
  CU_ASSERT_PTR_NOT_NULL_FATAL(doc); /* docs/cli.md exists */
  int same = gen && strcmp(gen, doc) == 0;
  if (!same) printf("\n    docs/cli.md differs from `kcast help`: run `make docs` ");
  CU_ASSERT_TRUE(same); /* docs/cli.md equals what the help texts generate */
  CU_ASSERT_PTR_NOT_NULL(strstr(doc, "## kcast extract")); /* every command has a section */
  free(gen);
  free(doc);
}

TEST_SUITES(register_docs) {
  CU_pSuite s = tests_suite("docs");
  TEST_ADD(s, test_cli_reference_is_current);
}
