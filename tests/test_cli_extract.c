/*
 * test_cli_extract.c -- `kcast extract` end to end: the three output formats
 * on a committed PTX file, kernel selection by mangled and source name, and
 * the exit codes of bad input (1) and bad command lines (2).
 */
#include "tests.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

/* A CUnit assertion whose failure report is the sentence it proves. */
#define ASSERT_MSG(msg, value) \
  CU_assertImplementation(!!(value), __LINE__, (msg), __FILE__, "", CU_FALSE)

#define SAXPY "tests/ptx/saxpy_nvcc.ptx"

static int extract(const char *args, char **out, char **err) {
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "'%s' extract %s", tests_kcast(), args);
  return tests_run(cmd, out, err);
}

/* Commas outside double quotes: the field separators of a CSV line. */
static size_t count_seps(const char *s) {
  size_t n = 0;
  int q = 0;
  for (; *s; s++) {
    if (*s == '"') q = !q;
    else if (*s == ',' && !q) n++;
  }
  return n;
}

static void test_table(void) {
  char *out = NULL, *err = NULL;
  int rc = extract(SAXPY, &out, &err);
  CU_ASSERT_EQUAL(rc, 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(out);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "kernel _Z5saxpyifPKfPf"));      /* one section per kernel */
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "static.op.ld.global.f32"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "static.class.ld_global"));
  free(out);
  free(err);
}

static void test_json(void) {
  char *out = NULL, *err = NULL;
  int rc = extract(SAXPY " --format json", &out, &err);
  CU_ASSERT_EQUAL(rc, 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(out);
  cJSON *root = cJSON_Parse(out);
  CU_ASSERT_PTR_NOT_NULL_FATAL(root);                                  /* valid JSON */
  cJSON *ks = cJSON_GetObjectItemCaseSensitive(root, "kernels");
  CU_ASSERT_TRUE(cJSON_IsArray(ks));
  CU_ASSERT_EQUAL(cJSON_GetArraySize(ks), 1);
  cJSON *k = cJSON_GetArrayItem(ks, 0);
  cJSON *name = cJSON_GetObjectItemCaseSensitive(k, "name");
  CU_ASSERT_TRUE(cJSON_IsString(name));
  if (cJSON_IsString(name)) CU_ASSERT_STRING_EQUAL(name->valuestring, "_Z5saxpyifPKfPf");
  cJSON *fs = cJSON_GetObjectItemCaseSensitive(k, "features");
  CU_ASSERT_TRUE(cJSON_IsObject(fs));
  cJSON *fma = cJSON_GetObjectItemCaseSensitive(fs, "static.op.fma.rn.f32");
  CU_ASSERT_TRUE(cJSON_IsNumber(fma));
  if (cJSON_IsNumber(fma)) CU_ASSERT_EQUAL(fma->valuedouble, 1);
  cJSON *ldg = cJSON_GetObjectItemCaseSensitive(fs, "static.class.ld_global");
  CU_ASSERT_TRUE(cJSON_IsNumber(ldg));
  if (cJSON_IsNumber(ldg)) CU_ASSERT_EQUAL(ldg->valuedouble, 2);
  int all_numbers = 1;
  cJSON *it;
  cJSON_ArrayForEach(it, fs) if (!cJSON_IsNumber(it) || strncmp(it->string, "static.", 7)) all_numbers = 0;
  ASSERT_MSG("every feature is a number named static.*", all_numbers);
  cJSON_Delete(root);
  free(out);
  free(err);
}

static size_t count_char(const char *s, char c) {
  size_t n = 0;
  for (; *s; s++) n += *s == c;
  return n;
}

static void test_csv(void) {
  char *out = NULL, *err = NULL;
  int rc = extract(SAXPY " --format csv", &out, &err);
  CU_ASSERT_EQUAL(rc, 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(out);
  CU_ASSERT_EQUAL(strncmp(out, "kernel,", 7), 0);                      /* first column */
  CU_ASSERT_EQUAL(count_char(out, '\n'), 2);                          /* header + one row */
  char *nl = strchr(out, '\n');
  CU_ASSERT_PTR_NOT_NULL_FATAL(nl);
  *nl = 0;
  size_t hdr_commas = count_char(out, ',');
  char *row = nl + 1;
  CU_ASSERT_EQUAL(strncmp(row, "_Z5saxpyifPKfPf,", 16), 0);
  char *end = strchr(row, '\n');
  if (end) *end = 0;
  CU_ASSERT_EQUAL(count_seps(row), hdr_commas);                       /* as many fields as columns */
  CU_ASSERT_EQUAL(strncmp(row + 16, "\"saxpy(int, float, float const*, float*)\",", 42), 0); /* demangled beside */
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "static.op.st.global.f32"));
  free(out);
  free(err);
}

static void test_kernel_selection(void) {
  char *out = NULL, *err = NULL;
  CU_ASSERT_EQUAL(extract(SAXPY " --kernel saxpy --format csv", &out, &err), 0);  /* source name */
  CU_ASSERT_TRUE(out && strstr(out, "_Z5saxpyifPKfPf"));
  free(out); free(err);
  CU_ASSERT_EQUAL(extract(SAXPY " --kernel=_Z5saxpyifPKfPf --format csv", &out, &err), 0);
  free(out); free(err);
  int rc = extract(SAXPY " --kernel nosuchkernel", &out, &err);
  CU_ASSERT_EQUAL(rc, 1);                                             /* unknown kernel: user error */
  CU_ASSERT_TRUE(err && strstr(err, "nosuchkernel"));
  free(out); free(err);
}

static void test_ambiguous_and_two_kernels(void) {
  char dir[4096], path[4200], args[4400];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "extract"));
  snprintf(path, sizeof path, "%s/two.ptx", dir);
  const char *ptx = ".version 8.0\n.target sm_90\n.address_size 64\n"
                    ".visible .entry _Z3fooi(.param .u32 a)\n{\n  ret;\n}\n"
                    ".visible .entry _Z3foof(.param .f32 a)\n{\n  ret;\n}\n";
  CU_ASSERT_EQUAL_FATAL(tests_write_file(path, ptx, strlen(ptx)), 0);
  char *out = NULL, *err = NULL;
  snprintf(args, sizeof args, "'%s' --kernel foo", path);
  CU_ASSERT_EQUAL(extract(args, &out, &err), 1);                       /* ambiguous: user error */
  CU_ASSERT_TRUE(err && strstr(err, "_Z3fooi") && strstr(err, "_Z3foof"));
  free(out); free(err);
  snprintf(args, sizeof args, "'%s' --format csv", path);
  CU_ASSERT_EQUAL(extract(args, &out, &err), 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(out);
  CU_ASSERT_EQUAL(count_char(out, '\n'), 3);                          /* header + two kernels */
  free(out); free(err);
  snprintf(args, sizeof args, "'%s' --list", path);
  CU_ASSERT_EQUAL(extract(args, &out, &err), 0);
  CU_ASSERT_TRUE(out && strstr(out, "_Z3fooi") && strstr(out, "_Z3foof"));
  free(out); free(err);
  remove(path);
}

/* .cu input: the kernel listing (libclang) and features through clang. */
static void test_cu_input(void) {
  char *out = NULL, *err = NULL;
  CU_ASSERT_EQUAL(extract("tests/ptx/src/saxpy.cu --list", &out, &err), 0);
  CU_ASSERT_TRUE(out && strstr(out, "saxpy("));              /* source name and params */
  CU_ASSERT_TRUE(out && strstr(out, "_Z5saxpyifPKfPf"));     /* mangled name */
  free(out); free(err);
  CU_ASSERT_EQUAL(extract("tests/ptx/src/saxpy.cu --compiler clang --kernel saxpy --format json",
                          &out, &err), 0);
  cJSON *root = out ? cJSON_Parse(out) : NULL;
  CU_ASSERT_PTR_NOT_NULL(root);
  cJSON *k = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "kernels"), 0);
  cJSON *fs = cJSON_GetObjectItemCaseSensitive(k, "features");
  cJSON *ldg = cJSON_GetObjectItemCaseSensitive(fs, "static.class.ld_global");
  CU_ASSERT_TRUE(cJSON_IsNumber(ldg) && ldg->valuedouble == 2);      /* x[i] and y[i] */
  cJSON_Delete(root);
  free(out); free(err);
}

/* .cu files nvcc compiles and libclang reads differently: a static kernel
   (libclang mangles it _ZL5twicePf, nvcc's .entry is _Z5twicePf), the
   `register` C++17 rejects, and a file libclang cannot read at all (an
   #error only clang sees stands for any construct nvcc accepts and clang
   does not). */
static void test_cu_nvcc_vs_libclang(void) {
  char dir[4096], path[4200], args[4400];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "extract_cu"));
  snprintf(path, sizeof path, "%s/st.cu", dir);
  const char *src = "__global__ static void twice(float *a) { register float x = a[threadIdx.x]; "
                    "a[threadIdx.x] = 2.0f * x; }\n"
                    "__global__ void plain(float *a) { a[threadIdx.x] += 1.0f; }\n";
  CU_ASSERT_EQUAL_FATAL(tests_write_file(path, src, strlen(src)), 0);
  char *out = NULL, *err = NULL;
  snprintf(args, sizeof args, "'%s' --list", path);
  int rc = extract(args, &out, &err);
  ASSERT_MSG("a static kernel using `register` is listed with its source line and its .entry name",
             rc == 0 && out && strstr(out, "twice(float * a)  _Z5twicePf  line 1"));
  ASSERT_MSG("the listing holds no second, 'template instance' line for the static kernel",
             out && !strstr(out, "template instance"));
  free(out); free(err);
  snprintf(args, sizeof args, "'%s' --kernel _ZL5twicePf --format csv", path);
  rc = extract(args, &out, &err);
  ASSERT_MSG("--kernel with libclang's _ZL name of a static kernel selects nvcc's _Z5twicePf",
             rc == 0 && out && strstr(out, "_Z5twicePf") && !strstr(out, "_Z5plainPf"));
  free(out); free(err);

  snprintf(path, sizeof path, "%s/clangonly.cu", dir);
  src = "#ifdef __clang__\n#error this file is for nvcc\n#endif\n"
        "__global__ void k(int *a) { a[threadIdx.x] = 1; }\n";
  CU_ASSERT_EQUAL_FATAL(tests_write_file(path, src, strlen(src)), 0);
  snprintf(args, sizeof args, "'%s' --list", path);
  rc = extract(args, &out, &err);
  ASSERT_MSG("a file libclang cannot read but nvcc compiles is listed from the PTX (exit 0)",
             rc == 0 && out && strstr(out, "_Z1kPi") && strstr(out, "from PTX"));
  ASSERT_MSG("... with a note naming libclang's error",
             err && strstr(err, "note: libclang cannot read it") && strstr(err, "this file is for nvcc"));
  free(out); free(err);
  remove(path);
  snprintf(path, sizeof path, "%s/st.cu", dir);
  remove(path);
}

/* "kcast: PATH:LINE:COL: error: ..." with numeric LINE and COL. */
static int has_located_error(const char *err, const char *path) {
  const char *p = err ? strstr(err, path) : NULL;
  if (!p) return 0;
  p += strlen(path);
  if (*p++ != ':' || !isdigit((unsigned char)*p)) return 0;
  while (isdigit((unsigned char)*p)) p++;
  if (*p++ != ':' || !isdigit((unsigned char)*p)) return 0;
  while (isdigit((unsigned char)*p)) p++;
  return !strncmp(p, ": error:", 8);
}

static void test_errors(void) {
  char dir[4096], path[4200], args[4400];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "extract"));
  snprintf(path, sizeof path, "%s/bad.ptx", dir);
  const char *bad = ".version 8.0\n.target sm_90\n.address_size 64\n"
                    ".visible .entry k()\n{\n  frobnicate.u32 %r1;\n  ret;\n}\n";
  CU_ASSERT_EQUAL_FATAL(tests_write_file(path, bad, strlen(bad)), 0);
  char *out = NULL, *err = NULL;
  snprintf(args, sizeof args, "'%s'", path);
  CU_ASSERT_EQUAL(extract(args, &out, &err), 1);                       /* parse error: user error */
  ASSERT_MSG("a parse error reads FILE:LINE:COL: error:", has_located_error(err, path));
  CU_ASSERT_TRUE(err && strstr(err, "kcast: "));
  free(out); free(err);
  remove(path);

  CU_ASSERT_EQUAL(extract("tests/ptx/no_such_file.ptx", &out, &err), 1); /* missing file */
  CU_ASSERT_TRUE(err && strstr(err, "no_such_file.ptx"));
  free(out); free(err);
  CU_ASSERT_EQUAL(extract(SAXPY " --bogus", &out, &err), 2);          /* unknown option */
  free(out); free(err);
  CU_ASSERT_EQUAL(extract(SAXPY " --format xml", &out, &err), 2);     /* unknown format */
  free(out); free(err);
  CU_ASSERT_EQUAL(extract("", &out, &err), 2);                        /* no input file */
  free(out); free(err);
  CU_ASSERT_EQUAL(extract(SAXPY " --kernel", &out, &err), 2);         /* option without value */
  free(out); free(err);
  CU_ASSERT_EQUAL(extract(SAXPY " " SAXPY, &out, &err), 2);           /* two inputs */
  free(out); free(err);
  CU_ASSERT_EQUAL(extract("--help", &out, &err), 0);                  /* help on stdout */
  CU_ASSERT_TRUE(out && strstr(out, "usage: kcast extract"));
  free(out); free(err);
}

/* Numeric value of "name <spaces> value" in a table output, NAN if absent. */
static double table_value(const char *out, const char *name) {
  char key[256];
  snprintf(key, sizeof key, "  %s ", name);
  const char *p = out ? strstr(out, key) : NULL;
  return p ? strtod(p + strlen(key), NULL) : NAN;
}

/* --ptxas: what the assembler reports, per architecture; a PTX made for
   sm_90 assembles for sm_80 (its .target is rewritten); an architecture
   ptxas lacks is one error; a hostile file name runs nothing. */
static void test_ptxas(void) {
  char *out = NULL, *err = NULL, path[1024];
  snprintf(path, sizeof path, "%s/corpus/matmul_tiled.nvcc.ptx", tests_build());
  char args[2048];
  snprintf(args, sizeof args, "'%s' --ptxas sm_80,sm_86", path);
  int rc = extract(args, &out, &err);
  ASSERT_MSG("extract --ptxas sm_80,sm_86 on sm_90 PTX exits 0", rc == 0);
  double r80 = table_value(out, "ptxas.sm_80.registers"), r86 = table_value(out, "ptxas.sm_86.registers");
  ASSERT_MSG("registers for both architectures, a plausible count", r80 >= 8 && r80 <= 255 && r86 >= 8);
  ASSERT_MSG("ptxas's static shared memory is the PTX's",
             table_value(out, "ptxas.sm_80.smem_bytes") == table_value(out, "static.shared_bytes") &&
                 table_value(out, "static.shared_bytes") > 0);
  ASSERT_MSG("no spills in a small kernel", table_value(out, "ptxas.sm_80.spill_store_bytes") == 0);
  free(out);
  free(err);
  snprintf(args, sizeof args, "'%s' --ptxas sm_37", path);
  rc = extract(args, &out, &err);
  ASSERT_MSG("an architecture ptxas lacks: exit 1, one line naming the file and ptxas",
             rc == 1 && out && !*out && err && strstr(err, "matmul_tiled") && strstr(err, "ptxas") &&
                 strchr(err, '\n') == err + strlen(err) - 1);
  free(out);
  free(err);
  snprintf(args, sizeof args, "'%s' --ptxas all", path);
  rc = extract(args, &out, &err);
  ASSERT_MSG("--ptxas all: the table's architectures ptxas has, notes for the others",
             rc == 0 && !isnan(table_value(out, "ptxas.sm_90.registers")) &&
                 !isnan(table_value(out, "ptxas.sm_75.registers")) && err && strstr(err, "note"));
  free(out);
  free(err);
  char dir[512], evil[1200], cmd[4096];
  ASSERT_MSG("scratch folder", tests_tmpdir(dir, sizeof dir, "ptxas") != NULL);
  snprintf(evil, sizeof evil, "%s/x$(touch PWNED-ptxas).ptx", dir);
  remove("PWNED-ptxas");
  size_t plen = 0;
  char *ptx = tests_read_file(SAXPY, &plen);
  CU_ASSERT_PTR_NOT_NULL_FATAL(ptx);
  CU_ASSERT_EQUAL_FATAL(tests_write_file(evil, ptx, plen), 0);
  free(ptx);
  snprintf(cmd, sizeof cmd, "'%s' extract \"%s\" --ptxas sm_80", tests_kcast(), evil);
  /* the shell of tests_run sees the name in double quotes: $(...) would
     run there too, so escape its $ for the test's own shell */
  char *d = strstr(cmd, "$(");
  if (d) {
    memmove(d + 1, d, strlen(d) + 1);
    *d = '\\';
  }
  rc = tests_run(cmd, &out, &err);
  FILE *f = fopen("PWNED-ptxas", "r"); /* a shell would have made it here, kcast's folder */
  ASSERT_MSG("a file name holding $(...) is assembled and runs nothing",
             rc == 0 && !f && out && strstr(out, "ptxas.sm_80.registers"));
  if (f) fclose(f);
  free(out);
  free(err);
  snprintf(cmd, sizeof cmd, "KCAST_PTXAS=/no/such/ptxas '%s' extract %s --ptxas sm_80", tests_kcast(), SAXPY);
  rc = tests_run(cmd, &out, &err);
  ASSERT_MSG("a missing ptxas: exit 1 naming it", rc == 1 && err && strstr(err, "/no/such/ptxas"));
  free(out);
  free(err);
}

TEST_SUITES(cli_extract_suites) {
  CU_pSuite s = tests_suite("cli_extract");
  TEST_ADD(s, test_table);
  TEST_ADD(s, test_json);
  TEST_ADD(s, test_csv);
  TEST_ADD(s, test_kernel_selection);
  TEST_ADD(s, test_ambiguous_and_two_kernels);
  TEST_ADD(s, test_errors);
  TEST_ADD(s, test_cu_input);
  TEST_ADD(s, test_cu_nvcc_vs_libclang);
  TEST_ADD(s, test_ptxas);
}
