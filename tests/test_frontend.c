/*
 * test_frontend.c -- the front ends: .ptx read as bytes, .cu through nvcc
 * and clang, .ll/.bc through the LLVM C API, kernel listing through
 * libclang, and the one-line errors each gives for bad input.
 *
 * The cross-check suite ties the three together: for every kernel file in
 * tests/kernels, the mangled names libclang reports must be exactly the
 * .entry names in the nvcc and the clang PTX of the corpus that `make test`
 * builds in $KCAST_BUILD/corpus.
 *
 * A missing compiler (nvcc, clang-22, llvm-as-22) skips the tests that need
 * it with a printed note; it is not a failure.
 */
#include "tests.h"

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "extractor/frontend.h"

#define SAXPY_CU "tests/kernels/saxpy.cu"
#define SAXPY_ENTRY ".entry _Z5saxpyifPKfPf("
#define SAXPY_C_ENTRY ".entry saxpy_c("

static int have_tool(const char *name) {
  char cmd[256];
  snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", name);
  return tests_run(cmd, NULL, NULL) == 0;
}

static int have_nvcc(void) {
  static int v = -1;
  if (v < 0) v = have_tool("nvcc");
  if (!v) printf("\n  [skip: nvcc not on PATH] ");
  return v;
}

static int have_clang(void) {
  static int v = -1;
  if (v < 0) {
    const char *c = getenv("KCAST_CLANG");
    v = have_tool(c && *c ? c : "clang-22");
  }
  if (!v) printf("\n  [skip: clang-22 not on PATH] ");
  return v;
}

static const fe_options nvcc_opts = {FE_NVCC, NULL, NULL, 0};
static const fe_options clang_opts = {FE_CLANG, NULL, NULL, 0};

/* Write text to DIR/name; the path goes to buf. */
static const char *scratch(char *buf, size_t cap, const char *dir, const char *name,
                           const char *text) {
  snprintf(buf, cap, "%s/%s", dir, name);
  if (tests_write_file(buf, text, strlen(text)) != 0) return NULL;
  return buf;
}

static int starts_with(const char *s, const char *prefix) {
  return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Number of ".entry " occurrences in ptx. */
static size_t count_entries(const char *ptx) {
  size_t n = 0;
  for (const char *p = ptx; (p = strstr(p, ".entry ")) != NULL; p += 7) n++;
  return n;
}

/* ------------------------------------------------------------- .ptx -- */

static void test_ptx_read_is_binary_safe(void) {
  char dir[4096], path[4200];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "fe"));
  static const char bytes[] = ".version 8.0\n\0\xff\x01 tail";
  snprintf(path, sizeof path, "%s/raw.PTX", dir);
  CU_ASSERT_EQUAL_FATAL(tests_write_file(path, bytes, sizeof bytes - 1), 0);
  char *ptx = NULL, err[512];
  size_t len = 0;
  /* the extension is matched case-insensitively, the bytes come back as is */
  CU_ASSERT_EQUAL(fe_to_ptx(path, &nvcc_opts, &ptx, &len, err, sizeof err), 0);
  CU_ASSERT_EQUAL(len, sizeof bytes - 1);
  CU_ASSERT(ptx && memcmp(ptx, bytes, sizeof bytes - 1) == 0);
  CU_ASSERT(ptx && ptx[len] == 0); /* NUL-terminated after the data */
  free(ptx);
  unlink(path);
  rmdir(dir);
}

static void test_missing_file_names_it(void) {
  char *ptx = (char *)1, err[512];
  size_t len = 1;
  CU_ASSERT_EQUAL(fe_to_ptx("tests/kernels/no_such.cu", &nvcc_opts, &ptx, &len, err,
                            sizeof err), -1);
  CU_ASSERT(starts_with(err, "tests/kernels/no_such.cu: "));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "No such file"));
  CU_ASSERT_PTR_NULL(ptx); /* no stale pointer on failure */
  CU_ASSERT_EQUAL(len, 0);
}

static void test_unknown_extension_and_bad_arch(void) {
  char *ptx = NULL, err[512];
  CU_ASSERT_EQUAL(fe_to_ptx("Makefile", NULL, &ptx, NULL, err, sizeof err), -1);
  CU_ASSERT(starts_with(err, "Makefile: unknown input type"));
  fe_options o = {FE_CLANG, "compute_90; rm -rf", NULL, 0};
  CU_ASSERT_EQUAL(fe_to_ptx(SAXPY_CU, &o, &ptx, NULL, err, sizeof err), -1);
  CU_ASSERT(starts_with(err, SAXPY_CU ": bad target architecture"));
  CU_ASSERT_PTR_NULL(ptx);
}

/* ----------------------------------------------------------- nvcc -- */

static void test_nvcc_saxpy_entries(void) {
  if (!have_nvcc()) return;
  char *ptx = NULL, err[512] = "";
  size_t len = 0;
  CU_ASSERT_EQUAL_FATAL(fe_to_ptx(SAXPY_CU, &nvcc_opts, &ptx, &len, err, sizeof err), 0);
  CU_ASSERT_EQUAL(strlen(ptx), len);
  CU_ASSERT_PTR_NOT_NULL(strstr(ptx, ".target sm_90")); /* default arch */
  CU_ASSERT_PTR_NOT_NULL(strstr(ptx, SAXPY_ENTRY));    /* C++ kernel, mangled */
  CU_ASSERT_PTR_NOT_NULL(strstr(ptx, SAXPY_C_ENTRY));  /* extern "C" kernel */
  free(ptx);
}

static void test_nvcc_error_names_file_and_line(void) {
  if (!have_nvcc()) return;
  char dir[4096], path[4200], *ptx = NULL, err[512] = "", want[4300];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "fe"));
  CU_ASSERT_PTR_NOT_NULL_FATAL(scratch(path, sizeof path, dir, "bad.cu",
      "__global__ void bad(int *p) {\n  p[0] = undefined_thing;\n}\n"));
  CU_ASSERT_EQUAL(fe_to_ptx(path, &nvcc_opts, &ptx, NULL, err, sizeof err), -1);
  snprintf(want, sizeof want, "%s:2: error: ", path);
  CU_ASSERT(starts_with(err, want)); /* nvcc's FILE(2) rewritten as FILE:2 */
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "undefined_thing"));
  CU_ASSERT_PTR_NULL(strchr(err, '\n')); /* one line */
  CU_ASSERT_PTR_NULL(ptx);
  unlink(path);
  rmdir(dir);
}

static void test_nvcc_not_on_path(void) {
  char *old = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
  setenv("PATH", "/nonexistent-kcast", 1);
  char *ptx = NULL, err[512] = "";
  int rc = fe_to_ptx(SAXPY_CU, &nvcc_opts, &ptx, NULL, err, sizeof err);
  if (old) setenv("PATH", old, 1); else unsetenv("PATH");
  free(old);
  CU_ASSERT_EQUAL(rc, -1);
  CU_ASSERT_STRING_EQUAL(err, SAXPY_CU ": nvcc not found on PATH");
}

/* ---------------------------------------------------------- clang -- */

static void test_clang_saxpy_entries(void) {
  if (!have_clang()) return;
  char *ptx = NULL, err[512] = "";
  CU_ASSERT_EQUAL_FATAL(fe_to_ptx(SAXPY_CU, &clang_opts, &ptx, NULL, err, sizeof err), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(ptx, "Generated by LLVM NVPTX Back-End"));
  CU_ASSERT_PTR_NOT_NULL(strstr(ptx, SAXPY_ENTRY));
  CU_ASSERT_PTR_NOT_NULL(strstr(ptx, SAXPY_C_ENTRY));
  free(ptx);
}

static void test_clang_links_libdevice(void) {
  if (!have_clang()) return;
  char *ptx = NULL, err[512] = "";
  CU_ASSERT_EQUAL_FATAL(fe_to_ptx("tests/kernels/fp64.cu", &clang_opts, &ptx, NULL, err,
                                  sizeof err), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(ptx, ".entry _Z9fp64_mathPKdPdi("));
  CU_ASSERT_PTR_NOT_NULL(strstr(ptx, "sqrt.rn.f64")); /* sqrt compiled in */
  /* sin and exp came from libdevice and were linked, not left external */
  CU_ASSERT_PTR_NULL(strstr(ptx, "__nv_"));
  CU_ASSERT_PTR_NULL(strstr(ptx, ".extern .func"));
  free(ptx);
}

static void test_clang_error_and_odd_names(void) {
  if (!have_clang()) return;
  char dir[4096], path[4200], *ptx = NULL, err[512] = "", want[4300];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "fe"));
  CU_ASSERT_PTR_NOT_NULL_FATAL(scratch(path, sizeof path, dir, "bad.cu",
      "__global__ void bad(int *p) {\n  p[0] = undefined_thing;\n}\n"));
  CU_ASSERT_EQUAL(fe_to_ptx(path, &clang_opts, &ptx, NULL, err, sizeof err), -1);
  snprintf(want, sizeof want, "%s:2:10: error: ", path);
  CU_ASSERT(starts_with(err, want));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "undefined_thing"));
  unlink(path);

  /* a name with a space and a quote is one argv element, not shell words;
     extra arguments reach the compiler */
  char *src = tests_read_file("tests/kernels/saxpy.cu", NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(src);
  size_t n = strlen(src);
  char *text = malloc(n + 128);
  CU_ASSERT_PTR_NOT_NULL_FATAL(text);
  snprintf(text, n + 128, "%s#ifdef WITH_EXTRA\n__global__ void extra_k() {}\n#endif\n", src);
  free(src);
  CU_ASSERT_PTR_NOT_NULL_FATAL(scratch(path, sizeof path, dir, "it's odd.cu", text));
  free(text);
  const char *extra[] = {"-DWITH_EXTRA"};
  fe_options o = {FE_CLANG, "sm_80", extra, 1};
  CU_ASSERT_EQUAL(fe_to_ptx(path, &o, &ptx, NULL, err, sizeof err), 0);
  CU_ASSERT(ptx && strstr(ptx, ".entry _Z7extra_kv("));
  CU_ASSERT(ptx && strstr(ptx, ".target sm_80"));
  free(ptx);
  unlink(path);
  rmdir(dir);
}

static void test_clang_override_missing(void) {
  char *old = getenv("KCAST_CLANG") ? strdup(getenv("KCAST_CLANG")) : NULL;
  setenv("KCAST_CLANG", "/nonexistent-kcast/clang", 1);
  char *ptx = NULL, err[512] = "";
  int rc = fe_to_ptx(SAXPY_CU, &clang_opts, &ptx, NULL, err, sizeof err);
  if (old) setenv("KCAST_CLANG", old, 1); else unsetenv("KCAST_CLANG");
  free(old);
  CU_ASSERT_EQUAL(rc, -1);
  CU_ASSERT_STRING_EQUAL(err, SAXPY_CU ": /nonexistent-kcast/clang not found");
}

/* ----------------------------------------------------------- LLVM -- */

static void test_ll_from_corpus(void) {
  char path[4096], *ptx = NULL, err[512] = "";
  snprintf(path, sizeof path, "%s/corpus/saxpy.clang.ll", tests_build());
  if (access(path, R_OK) != 0) {
    printf("\n  [skip: %s not built (make corpus)] ", path);
    return;
  }
  CU_ASSERT_EQUAL_FATAL(fe_to_ptx(path, NULL, &ptx, NULL, err, sizeof err), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(ptx, ".target sm_90"));
  CU_ASSERT_PTR_NOT_NULL(strstr(ptx, SAXPY_ENTRY));
  CU_ASSERT_PTR_NOT_NULL(strstr(ptx, SAXPY_C_ENTRY));
  free(ptx);
}

static void test_bc_from_corpus(void) {
  char ll[4096], dir[4096], bc[4200], cmd[9000], *ptx = NULL, err[512] = "";
  snprintf(ll, sizeof ll, "%s/corpus/fp64.clang.ll", tests_build());
  if (access(ll, R_OK) != 0) {
    printf("\n  [skip: %s not built (make corpus)] ", ll);
    return;
  }
  if (!have_tool("llvm-as-22")) {
    printf("\n  [skip: llvm-as-22 not on PATH] ");
    return;
  }
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "fe"));
  snprintf(bc, sizeof bc, "%s/fp64.bc", dir);
  snprintf(cmd, sizeof cmd, "llvm-as-22 '%s' -o '%s'", ll, bc);
  CU_ASSERT_EQUAL_FATAL(tests_run(cmd, NULL, NULL), 0);
  CU_ASSERT_EQUAL(fe_to_ptx(bc, NULL, &ptx, NULL, err, sizeof err), 0);
  CU_ASSERT(ptx && strstr(ptx, ".entry _Z9fp64_mathPKdPdi("));
  CU_ASSERT(ptx && strstr(ptx, ".entry _Z8fp64_dotPKdS0_Pdi("));
  CU_ASSERT(ptx && !strstr(ptx, ".extern .func")); /* libdevice was in the IR */
  free(ptx);
  unlink(bc);
  rmdir(dir);
}

/* Hand-written IR: no triple, no data layout, no target attributes. */
static void test_ll_plain_gets_target_defaults(void) {
  char dir[4096], path[4200], *ptx = NULL, err[512] = "";
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "fe"));
  CU_ASSERT_PTR_NOT_NULL_FATAL(scratch(path, sizeof path, dir, "k.ll",
      "define ptx_kernel void @store_one(ptr addrspace(1) %p) {\n"
      "  store float 1.0, ptr addrspace(1) %p\n  ret void\n}\n"));
  CU_ASSERT_EQUAL(fe_to_ptx(path, NULL, &ptx, NULL, err, sizeof err), 0);
  CU_ASSERT(ptx && strstr(ptx, ".entry store_one("));
  CU_ASSERT(ptx && strstr(ptx, ".version 8.8")); /* the PTX ISA clang-22 also picks */
  CU_ASSERT(ptx && strstr(ptx, ".target sm_90"));
  CU_ASSERT(ptx && strstr(ptx, "st.global"));
  free(ptx);
  ptx = NULL;
  fe_options o = {FE_NVCC, "sm_80", NULL, 0};
  CU_ASSERT_EQUAL(fe_to_ptx(path, &o, &ptx, NULL, err, sizeof err), 0);
  CU_ASSERT(ptx && strstr(ptx, ".target sm_80")); /* the arch option is the CPU */
  free(ptx);
  unlink(path);
  rmdir(dir);
}

static void test_bad_ir_errors(void) {
  char dir[4096], path[4200], want[4300], *ptx = NULL, err[512] = "";
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "fe"));

  /* syntax error: LLVM's FILE:LINE:COL passed on */
  scratch(path, sizeof path, dir, "bad.ll", "define void @f() {\n  ret i32 undefined_value\n}\n");
  CU_ASSERT_EQUAL(fe_to_ptx(path, NULL, &ptx, NULL, err, sizeof err), -1);
  snprintf(want, sizeof want, "%s:2:", path);
  CU_ASSERT(starts_with(err, want));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "error"));
  CU_ASSERT_PTR_NULL(strchr(err, '\n'));
  unlink(path);

  /* parses, but the verifier rejects it (a use its definition does not
     dominate), before code generation sees it */
  scratch(path, sizeof path, dir, "dominance.ll",
          "define void @f(i1 %c) {\nentry:\n  br i1 %c, label %a, label %b\n"
          "a:\n  %x = add i32 1, 2\n  br label %b\n"
          "b:\n  %y = add i32 %x, 1\n  ret void\n}\n");
  CU_ASSERT_EQUAL(fe_to_ptx(path, NULL, &ptx, NULL, err, sizeof err), -1);
  snprintf(want, sizeof want, "%s: invalid LLVM IR: Instruction does not dominate", path);
  CU_ASSERT(starts_with(err, want));
  unlink(path);

  /* host IR is refused by name */
  scratch(path, sizeof path, dir, "host.ll",
          "target triple = \"x86_64-pc-linux-gnu\"\ndefine void @f() {\n  ret void\n}\n");
  CU_ASSERT_EQUAL(fe_to_ptx(path, NULL, &ptx, NULL, err, sizeof err), -1);
  CU_ASSERT(starts_with(err, path));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "'x86_64-pc-linux-gnu', not NVPTX"));
  unlink(path);

  /* garbage bitcode */
  scratch(path, sizeof path, dir, "junk.bc", "BC\xc0\xde this is not bitcode");
  CU_ASSERT_EQUAL(fe_to_ptx(path, NULL, &ptx, NULL, err, sizeof err), -1);
  snprintf(want, sizeof want, "%s: error: ", path); /* LLVM names the file */
  CU_ASSERT(starts_with(err, want));
  CU_ASSERT_PTR_NULL(ptx);
  unlink(path);
  rmdir(dir);
}

/* -------------------------------------------------------- listing -- */

static void test_list_saxpy(void) {
  if (!have_clang()) return; /* the CUDA headers come with the toolkit */
  fe_kernel *k = NULL;
  size_t n = 0;
  char err[512] = "";
  CU_ASSERT_EQUAL_FATAL(fe_list_kernels(SAXPY_CU, NULL, &k, &n, err, sizeof err), 0);
  CU_ASSERT_EQUAL_FATAL(n, 2);
  CU_ASSERT_STRING_EQUAL(k[0].name, "saxpy");
  CU_ASSERT_STRING_EQUAL(k[0].mangled, "_Z5saxpyifPKfPf");
  CU_ASSERT_EQUAL(k[0].line, 4);
  CU_ASSERT_EQUAL_FATAL(k[0].nparams, 4);
  CU_ASSERT_STRING_EQUAL(k[0].params[0].name, "n");
  CU_ASSERT_STRING_EQUAL(k[0].params[0].type, "int");
  CU_ASSERT_STRING_EQUAL(k[0].params[1].type, "float");
  CU_ASSERT_STRING_EQUAL(k[0].params[2].name, "x");
  CU_ASSERT_STRING_EQUAL(k[0].params[2].type, "const float *");
  CU_ASSERT_STRING_EQUAL(k[0].params[3].type, "float *");
  CU_ASSERT_STRING_EQUAL(k[1].name, "saxpy_c");
  CU_ASSERT_STRING_EQUAL(k[1].mangled, "saxpy_c"); /* extern "C": unmangled */
  CU_ASSERT_EQUAL(k[1].line, 9);
  fe_kernels_free(k, n);

  CU_ASSERT_EQUAL_FATAL(fe_list_kernels("tests/kernels/cvt_round.cu", NULL, &k, &n, err,
                                        sizeof err), 0);
  CU_ASSERT_EQUAL_FATAL(n, 3);
  CU_ASSERT_STRING_EQUAL(k[2].name, "half_roundtrip");
  CU_ASSERT_STRING_EQUAL(k[2].mangled, "_Z14half_roundtripPKfPfP6__halfi");
  CU_ASSERT_EQUAL_FATAL(k[2].nparams, 4);
  CU_ASSERT_STRING_EQUAL(k[2].params[2].name, "h");
  CU_ASSERT_STRING_EQUAL(k[2].params[2].type, "__half *"); /* type from cuda_fp16.h */
  fe_kernels_free(k, n);

  /* A whole program: host code with <<<>>> launches needs clang to see the
     CUDA installation's version (it picks the launch API by it). */
  int rc = fe_list_kernels("tests/programs/rt_vecadd.cu", NULL, &k, &n, err, sizeof err);
  if (rc != 0) printf("\n    %s ", err);
  CU_ASSERT_EQUAL_FATAL(rc, 0); /* a program with host launches lists */
  CU_ASSERT_EQUAL_FATAL(n, 1);
  CU_ASSERT_STRING_EQUAL(k[0].name, "vecadd");
  CU_ASSERT_STRING_EQUAL(k[0].mangled, "_Z6vecaddPKfS0_Pfi");
  fe_kernels_free(k, n);
}

static void test_list_shapes_and_errors(void) {
  if (!have_clang()) return;
  char dir[4096], path[4200], want[4300], err[512] = "";
  fe_kernel *k = NULL;
  size_t n = 0;
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "fe"));
  scratch(path, sizeof path, dir, "shapes.cu",
          "namespace ns {\n"
          "template <typename T> __global__ void fill(T *p, T v) { p[0] = v; }\n"
          "template __global__ void fill<float>(float *, float);\n"
          "__global__ void inner(int) {}\n"
          "}\n"
          "__global__ void proto(int *q);\n"
          "__device__ int helper(int x) { return x + 1; }\n"
          "__global__ void proto(int *q) { *q = helper(1); }\n"
          "extern \"C\" { __global__ void cblock(void) {} }\n"
          "#ifdef WITH_EXTRA\n__global__ void extra_k() {}\n#endif\n");
  const char *extra[] = {"-DWITH_EXTRA"};
  fe_options o = {FE_CLANG, NULL, extra, 1};
  CU_ASSERT_EQUAL_FATAL(fe_list_kernels(path, &o, &k, &n, err, sizeof err), 0);
  /* the template is not listed (libclang hides its instantiations), the
     device helper is not a kernel, the prototype is not a second kernel */
  CU_ASSERT_EQUAL_FATAL(n, 4);
  CU_ASSERT_STRING_EQUAL(k[0].mangled, "_ZN2ns5innerEi");
  CU_ASSERT_EQUAL_FATAL(k[0].nparams, 1);
  CU_ASSERT_STRING_EQUAL(k[0].params[0].name, ""); /* unnamed parameter */
  CU_ASSERT_STRING_EQUAL(k[0].params[0].type, "int");
  CU_ASSERT_STRING_EQUAL(k[1].mangled, "_Z5protoPi");
  CU_ASSERT_EQUAL(k[1].line, 8); /* the definition, not the prototype */
  CU_ASSERT_STRING_EQUAL(k[2].mangled, "cblock");
  CU_ASSERT_EQUAL(k[2].nparams, 0);
  CU_ASSERT_STRING_EQUAL(k[3].mangled, "_Z7extra_kv"); /* -D reached libclang */
  fe_kernels_free(k, n);
  unlink(path);

  k = (fe_kernel *)1;
  scratch(path, sizeof path, dir, "bad.cu",
          "__global__ void bad(int *p) {\n  p[0] = undefined_thing;\n}\n");
  CU_ASSERT_EQUAL(fe_list_kernels(path, NULL, &k, &n, err, sizeof err), -1);
  snprintf(want, sizeof want, "%s:2:10: error: use of undeclared identifier", path);
  CU_ASSERT(starts_with(err, want));
  CU_ASSERT_PTR_NULL(k);
  CU_ASSERT_EQUAL(n, 0);
  unlink(path);
  rmdir(dir);

  CU_ASSERT_EQUAL(fe_list_kernels("tests/kernels/none.cu", NULL, &k, &n, err, sizeof err), -1);
  CU_ASSERT(starts_with(err, "tests/kernels/none.cu: No such file"));
  fe_kernels_free(NULL, 0); /* accepts NULL */
}

/* ---------------------------------------------------- cross-check -- */

/* Every listed kernel is an .entry of the corpus PTX, and nothing else is. */
static void check_corpus_side(const char *stem, const char *side, const fe_kernel *k,
                              size_t n) {
  char path[4096];
  snprintf(path, sizeof path, "%s/corpus/%s.%s.ptx", tests_build(), stem, side);
  char *ptx = tests_read_file(path, NULL);
  if (!ptx) {
    printf("\n  [skip: %s not built] ", path);
    return;
  }
  size_t found = 0;
  for (size_t i = 0; i < n; i++) {
    char want[512];
    snprintf(want, sizeof want, ".entry %s(", k[i].mangled);
    if (strstr(ptx, want)) found++;
    else printf("\n  %s: no %s", path, want);
  }
  CU_ASSERT_EQUAL(found, n);                 /* libclang's names are the entries */
  CU_ASSERT_EQUAL(count_entries(ptx), n);    /* and there are no others */
  free(ptx);
}

static void test_corpus_entries_match_listing(void) {
  if (!have_clang()) return;
  glob_t g;
  CU_ASSERT_EQUAL_FATAL(glob("tests/kernels/*.cu", 0, NULL, &g), 0);
  CU_ASSERT(g.gl_pathc >= 16); /* the kernel files the other suites rely on */
  for (size_t f = 0; f < g.gl_pathc; f++) {
    const char *cu = g.gl_pathv[f];
    fe_kernel *k = NULL;
    size_t n = 0;
    char err[512] = "";
    int rc = fe_list_kernels(cu, NULL, &k, &n, err, sizeof err);
    if (rc) printf("\n  %s", err);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT(n > 0); /* every kernel file defines a kernel */
    char stem[256];
    const char *b = strrchr(cu, '/') + 1;
    snprintf(stem, sizeof stem, "%.*s", (int)(strlen(b) - 3), b);
    check_corpus_side(stem, "nvcc", k, n);
    check_corpus_side(stem, "clang", k, n);
    fe_kernels_free(k, n);
  }
  globfree(&g);
}

/* LLVM and libclang are loaded at run time: with KCAST_LLVM_LIBDIR naming a
   folder without them, an .ll input fails with one line that names the file
   and the library, and PTX input (which needs neither) still works. */
static void test_llvm_libs_missing(void) {
  char ll[4096], cmd[12288], *out = NULL, *err = NULL;
  snprintf(ll, sizeof ll, "%s/corpus/saxpy.clang.ll", tests_build());
  if (access(ll, R_OK) != 0) {
    printf("\n  [skip: %s not built (make corpus)] ", ll);
    return;
  }
  snprintf(cmd, sizeof cmd, "KCAST_LLVM_LIBDIR=/nonexistent-kcast-llvm %s extract %s",
           tests_kcast(), ll);
  int rc = tests_run(cmd, &out, &err);
  CU_ASSERT_NOT_EQUAL(rc, 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, ll));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "libLLVM"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "KCAST_LLVM_LIBDIR"));
  CU_ASSERT_PTR_NULL(strchr(err, '\n') ? strchr(strchr(err, '\n') + 1, '\n') : NULL);
  CU_ASSERT_EQUAL(out ? strlen(out) : 0, 0);
  free(out);
  free(err);
  snprintf(cmd, sizeof cmd, "KCAST_LLVM_LIBDIR=/nonexistent-kcast-llvm %s extract "
           "tests/ptx/saxpy_clang.ptx", tests_kcast());
  CU_ASSERT_EQUAL(tests_run(cmd, &out, &err), 0);
  CU_ASSERT(out && strlen(out) > 0);
  free(out);
  free(err);
}

TEST_SUITES(register_frontend) {
  CU_pSuite s = tests_suite("frontend: inputs and errors");
  TEST_ADD(s, test_ptx_read_is_binary_safe);
  TEST_ADD(s, test_missing_file_names_it);
  TEST_ADD(s, test_unknown_extension_and_bad_arch);
  TEST_ADD(s, test_nvcc_not_on_path);
  TEST_ADD(s, test_clang_override_missing);
  TEST_ADD(s, test_llvm_libs_missing);

  s = tests_suite("frontend: nvcc and clang");
  TEST_ADD(s, test_nvcc_saxpy_entries);
  TEST_ADD(s, test_nvcc_error_names_file_and_line);
  TEST_ADD(s, test_clang_saxpy_entries);
  TEST_ADD(s, test_clang_links_libdevice);
  TEST_ADD(s, test_clang_error_and_odd_names);

  s = tests_suite("frontend: LLVM IR");
  TEST_ADD(s, test_ll_from_corpus);
  TEST_ADD(s, test_bc_from_corpus);
  TEST_ADD(s, test_ll_plain_gets_target_defaults);
  TEST_ADD(s, test_bad_ir_errors);

  s = tests_suite("frontend: kernel listing");
  TEST_ADD(s, test_list_saxpy);
  TEST_ADD(s, test_list_shapes_and_errors);
  TEST_ADD(s, test_corpus_entries_match_listing);
}
