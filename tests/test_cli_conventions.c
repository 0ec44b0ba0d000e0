/*
 * test_cli_conventions.c -- what users bring from Nsight Compute and
 * scikit-learn, through the real binary: demangled names beside mangled
 * ones and template kernels by their source name, ncu-style launch
 * selection (--kernel REGEX, --launch-skip, --launch-count) in run and
 * dataset export, the run summary as CSV, and the messages of the
 * conventions (help help, a text column, a missing --csv).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests.h"

#define CHECK_MSG(msg, cond) \
  CU_assertImplementation(!!(cond), __LINE__, (msg), __FILE__, "", CU_FALSE)

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

/* Lines of s that hold needle. */
static int count_lines(const char *s, const char *needle) {
  int n = 0;
  for (const char *p = s; p && *p;) {
    const char *e = strchr(p, '\n');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    const char *h = strstr(p, needle);
    if (h && h < p + len) n++;
    p = e ? e + 1 : NULL;
  }
  return n;
}

#define GEMM "datasets/suite/gemm_tiled.cu"
#define GEMM16 "_Z17gemm_tiled_kernelILi16EEviffPKfS1_Pf"

static void test_template_kernels(void) {
  char *out = NULL, *err = NULL;
  int rc = kc(&out, &err, "extract " GEMM " --list");
  CHECK_MSG("extract --list of a .cu with only template kernels exits 0", rc == 0);
  CHECK_MSG("--list names each template instance with its demangled signature",
            out && count_lines(out, "template instance") == 4 &&
                strstr(out, "void gemm_tiled_kernel<16>(int, float, float, float const*, "
                            "float const*, float*)  " GEMM16));
  free(out); free(err);
  rc = kc(&out, &err, "extract " GEMM " --kernel 'gemm_tiled_kernel<16>' --format csv");
  CHECK_MSG("--kernel 'gemm_tiled_kernel<16>' selects that one instance",
            rc == 0 && out && count_lines(out, "gemm_tiled_kernel") == 1 &&
                strstr(out, "\n" GEMM16 ",\"void gemm_tiled_kernel<16>("));
  free(out); free(err);
  rc = kc(&out, &err, "extract " GEMM " --kernel gemm_tiled_kernel");
  CHECK_MSG("the bare template name is ambiguous and lists the instances, demangled",
            rc == 1 && err && strstr(err, "ambiguous") && strstr(err, "gemm_tiled_kernel<32>"));
  free(out); free(err);
  rc = kc(&out, &err, "extract " GEMM " --kernel 'gemm_tiled_kernel<64>'");
  CHECK_MSG("an instance the file lacks is an error naming it",
            rc == 1 && err && strstr(err, "gemm_tiled_kernel<64>"));
  free(out); free(err);
  rc = kc(&out, &err, "extract tests/ptx/saxpy_nvcc.ptx --format json");
  CHECK_MSG("extract JSON carries the demangled signature beside the name",
            rc == 0 && out && strstr(out, "\"demangled\":\t\"saxpy(int, float, float const*, float*)\""));
  free(out); free(err);
}

static void test_launch_selection(void) {
  char dir[1024], db[1200], sum[1200], prog[1200];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "cliconv"));
  snprintf(db, sizeof db, "%s/r.db", dir);
  snprintf(sum, sizeof sum, "%s/sum.csv", dir);
  snprintf(prog, sizeof prog, "%s/suite/scan", tests_build());
  char *out = NULL, *err = NULL;
  /* scan 1048576 128 launches scan_tiles, scan_tiles, scan_tiles,
     add_offsets, add_offsets (lseq 0..4) */
  int rc = kc(&out, &err, "run -o '%s' --kernel 'scan_tiles' --launch-skip 1 --launch-count 1 "
              "--summary '%s' -- '%s' 1048576 128", db, sum, prog);
  CHECK_MSG("run with a selection exits 0", rc == 0);
  CHECK_MSG("run says how many launches the selection took",
            err && strstr(err, "1 launches of scan recorded") && strstr(err, "(1 of 5 launches selected"));
  free(out); free(err);
  rc = kc(&out, &err, "dataset export '%s'", db);
  CHECK_MSG("the one launch stored is the second scan_tiles (lseq 1)",
            rc == 0 && out && count_lines(out, "_Z10scan_tiles") == 1 &&
                strstr(out, ",scan,1048576 128,1,_Z10scan_tilesPKjPjS1_i,"));
  free(out); free(err);
  char *csv = tests_read_file(sum, NULL);
  CHECK_MSG("--summary FILE holds the per-kernel summary as CSV with the demangled name",
            csv && !strncmp(csv, "kernel,demangled,launches,", 26) &&
                strstr(csv, "\"scan_tiles(unsigned int const*, unsigned int*, unsigned int*, int)\",1,"));
  free(csv);

  snprintf(db, sizeof db, "%s/all.db", dir);
  rc = kc(&out, &err, "run -o '%s' -- '%s' 1048576 128", db, prog);
  CHECK_MSG("run without a selection stores every launch", rc == 0 && err && strstr(err, "5 launches"));
  free(out); free(err);
  rc = kc(&out, &err, "dataset export '%s' --kernel 'add_offsets\\(' --launch-count 1", db);
  CHECK_MSG("dataset export --kernel REGEX matches the demangled signature, --launch-count 1 keeps one",
            rc == 0 && out && count_lines(out, "_Z11add_offsets") == 1 &&
                !strstr(out, "_Z10scan_tiles") && strstr(out, ",3,_Z11add_offsetsPjPKji,"));
  free(out); free(err);
  rc = kc(&out, &err, "dataset export '%s' --launch-skip 4", db);
  CHECK_MSG("dataset export --launch-skip 4 of 5 leaves the last launch",
            rc == 0 && out && count_lines(out, "1048576 128,") == 1 && strstr(out, ",4,_Z11add_offsets"));
  free(out); free(err);
  rc = kc(&out, &err, "dataset export '%s' --kernel '(unclosed'", db);
  CHECK_MSG("a bad regular expression is a usage error naming it",
            rc == 2 && err && strstr(err, "--kernel '(unclosed'"));
  free(out); free(err);
  rc = kc(&out, &err, "dataset stats '%s' --kernel x", db);
  CHECK_MSG("stats takes no selection", rc == 2 && err && strstr(err, "unknown option '--kernel'"));
  free(out); free(err);
}

TEST_SUITES(cli_conventions_suites) {
  CU_pSuite s = tests_suite("cli_conventions");
  TEST_ADD(s, test_template_kernels);
  TEST_ADD(s, test_launch_selection);
}
