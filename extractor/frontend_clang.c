/*
 * frontend_clang.c -- fe_list_kernels: the __global__ functions a .cu file
 * defines, read with libclang (clang-c/Index.h) instead of a hand-written
 * C++ scanner: templates, macros, namespaces and extern "C" blocks are
 * clang's problem, and the mangled names come from clang's own mangler.
 *
 * The file is parsed as the device side of a CUDA compile:
 *   -x cuda --cuda-device-only --cuda-gpu-arch=ARCH --cuda-path=ROOT
 *   -Wno-unknown-cuda-version -Wno-register EXTRA...
 * --cuda-path gives clang the CUDA headers (__global__, the builtin
 * variables, cuda_fp16.h) and the installation's version.  No -nocudalib:
 * with it clang does not detect the version and falls back to the pre-9.2
 * launch API, so host code with <<<>>> fails ("use of undeclared
 * identifier cudaConfigureCall") against CUDA 13's headers.
 * On the device side clang_Cursor_getMangling returns the Itanium name that
 * is the PTX .entry (checked against nvcc and clang PTX for every kernel in
 * tests/kernels: tests/test_frontend.c); extern "C" kernels keep their name.
 *
 * A kernel is a FunctionDecl with a CUDAGlobalAttr child that is a
 * definition located in the main file (prototypes and headers are skipped).
 * Function templates are not listed: libclang-22 exposes neither explicit
 * instantiations ("template __global__ void k<float>(float *);") nor
 * implicit ones as cursors, so there is no name to report; their PTX
 * entries still appear in fe_to_ptx's output.
 *
 * Errors: the first diagnostic of severity error or worse, as clang formats
 * it ("FILE:LINE:COL: error: message").
 */
#include "frontend_int.h"

#include <clang-c/Index.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "frontend_dl.h"

FE_CLANG_FNS(FE_DECLARE)

/* What the visitor collects; oom set on an allocation failure. */
typedef struct kernel_list {
  fe_kernel *k;  /* k[0..n) filled in */
  size_t n, cap; /* n <= cap */
  int oom;       /* an allocation failed; the list is incomplete */
} kernel_list;

/* strdup of a CXString's text, which is then disposed. */
static char *take_string(CXString s, int *oom) {
  const char *c = FE(clang_getCString)(s);
  char *d = strdup(c ? c : "");
  FE(clang_disposeString)(s);
  if (!d) *oom = 1;
  return d;
}

static enum CXChildVisitResult find_global_attr(CXCursor c, CXCursor parent,
                                                CXClientData data) {
  if (FE(clang_getCursorKind)(c) == CXCursor_CUDAGlobalAttr) {
    *(int *)data = 1;
    return CXChildVisit_Break;
  }
  return CXChildVisit_Continue;
}

static void add_kernel(kernel_list *L, CXCursor c) {
  if (L->n == L->cap) {
    size_t cap = L->cap ? L->cap * 2 : 8;
    fe_kernel *k = realloc(L->k, cap * sizeof *k);
    if (!k) {
      L->oom = 1;
      return;
    }
    L->k = k;
    L->cap = cap;
  }
  fe_kernel *k = &L->k[L->n++];
  memset(k, 0, sizeof *k);
  k->name = take_string(FE(clang_getCursorSpelling)(c), &L->oom);
  k->mangled = take_string(FE(clang_Cursor_getMangling)(c), &L->oom);
  unsigned line = 0;
  FE(clang_getExpansionLocation)(FE(clang_getCursorLocation)(c), NULL, &line, NULL, NULL);
  k->line = line;
  int na = FE(clang_Cursor_getNumArguments)(c);
  if (na <= 0) return;
  k->params = calloc((size_t)na, sizeof *k->params);
  if (!k->params) {
    L->oom = 1;
    return;
  }
  k->nparams = (size_t)na;
  for (int i = 0; i < na; i++) {
    CXCursor a = FE(clang_Cursor_getArgument)(c, (unsigned)i);
    k->params[i].name = take_string(FE(clang_getCursorSpelling)(a), &L->oom);
    k->params[i].type = take_string(FE(clang_getTypeSpelling)(FE(clang_getCursorType)(a)), &L->oom);
  }
}

static enum CXChildVisitResult visit(CXCursor c, CXCursor parent, CXClientData data) {
  kernel_list *L = data;
  if (L->oom) return CXChildVisit_Break;
  if (!FE(clang_Location_isFromMainFile)(FE(clang_getCursorLocation)(c)))
    return CXChildVisit_Continue;
  switch (FE(clang_getCursorKind)(c)) {
  case CXCursor_Namespace:
  case CXCursor_LinkageSpec:
    return CXChildVisit_Recurse;
  case CXCursor_FunctionDecl: {
    int global = 0;
    if (!FE(clang_isCursorDefinition)(c)) break;
    FE(clang_visitChildren)(c, find_global_attr, &global);
    if (global) add_kernel(L, c);
    break;
  }
  default:
    break;
  }
  return CXChildVisit_Continue;
}

void fe_kernels_free(fe_kernel *k, size_t n) {
  if (!k) return;
  for (size_t i = 0; i < n; i++) {
    free(k[i].name);
    free(k[i].mangled);
    for (size_t j = 0; j < k[i].nparams; j++) {
      free(k[i].params[j].name);
      free(k[i].params[j].type);
    }
    free(k[i].params);
  }
  free(k);
}

/* The first error diagnostic of tu, formatted into err; 0 when none. */
static int first_error(CXTranslationUnit tu, const char *path, char *err, size_t errcap) {
  unsigned nd = FE(clang_getNumDiagnostics)(tu);
  for (unsigned i = 0; i < nd; i++) {
    CXDiagnostic d = FE(clang_getDiagnostic)(tu, i);
    enum CXDiagnosticSeverity sev = FE(clang_getDiagnosticSeverity)(d);
    if (sev >= CXDiagnostic_Error) {
      CXString s = FE(clang_formatDiagnostic)(
          d, CXDiagnostic_DisplaySourceLocation | CXDiagnostic_DisplayColumn);
      const char *t = FE(clang_getCString)(s);
      CXFile f = NULL;
      FE(clang_getSpellingLocation)(FE(clang_getDiagnosticLocation)(d), &f, NULL, NULL, NULL);
      if (f) /* already "FILE:LINE:COL: error: ..." */
        fe__fail(err, errcap, "%s", t ? t : "error");
      else
        fe__fail(err, errcap, "%s: %s", path, t ? t : "error");
      FE(clang_disposeString)(s);
      FE(clang_disposeDiagnostic)(d);
      return 1;
    }
    FE(clang_disposeDiagnostic)(d);
  }
  return 0;
}

int fe_list_kernels(const char *cu_path, const fe_options *o, fe_kernel **out,
                    size_t *n, char *err, size_t errcap) {
  if (err && errcap) err[0] = 0;
  if (!cu_path || !*cu_path || !out || !n)
    return fe__fail(err, errcap, "fe_list_kernels: no input file given");
  *out = NULL;
  *n = 0;
  struct stat sb;
  if (stat(cu_path, &sb) != 0) return fe__fail(err, errcap, "%s: %s", cu_path, strerror(errno));
  if (S_ISDIR(sb.st_mode)) return fe__fail(err, errcap, "%s: is a directory", cu_path);
  const char *arch = fe__arch(o, cu_path, err, errcap);
  if (!arch) return -1;
  if (fe__load_clang(cu_path, err, errcap) < 0) return -1;

  char archopt[128], root[4096], cudaopt[4200];
  snprintf(archopt, sizeof archopt, "--cuda-gpu-arch=%s", arch);
  snprintf(cudaopt, sizeof cudaopt, "--cuda-path=%s", fe__cuda_root(root, sizeof root));
  size_t nextra = (o && o->extra) ? o->nextra : 0;
  const char **args = calloc(9 + nextra, sizeof *args);
  if (!args) return fe__fail(err, errcap, "%s: out of memory", cu_path);
  int na = 0;
  args[na++] = "-x";
  args[na++] = "cuda";
  args[na++] = "--cuda-device-only";
  args[na++] = archopt;
  args[na++] = cudaopt;
  args[na++] = "-Wno-unknown-cuda-version";
  args[na++] = "-Wno-register"; /* C++17 rejects `register`; nvcc accepts it */
  for (size_t i = 0; i < nextra; i++)
    if (o->extra[i]) args[na++] = o->extra[i];

  /* Diagnostics are collected, not printed: the library never writes to
     stderr. */
  CXIndex idx = FE(clang_createIndex)(0, 0);
  CXTranslationUnit tu = NULL;
  enum CXErrorCode ec = FE(clang_parseTranslationUnit2)(idx, cu_path, args, na, NULL, 0,
                                                    CXTranslationUnit_None, &tu);
  free(args);
  int rc = -1;
  if (ec != CXError_Success || !tu) {
    fe__fail(err, errcap, "%s: libclang could not parse the file (error code %d)", cu_path,
             (int)ec);
    goto done;
  }
  if (first_error(tu, cu_path, err, errcap)) goto done;

  kernel_list L = {0};
  FE(clang_visitChildren)(FE(clang_getTranslationUnitCursor)(tu), visit, &L);
  if (L.oom) {
    fe_kernels_free(L.k, L.n);
    fe__fail(err, errcap, "%s: out of memory", cu_path);
    goto done;
  }
  *out = L.k;
  *n = L.n;
  rc = 0;

done:
  if (tu) FE(clang_disposeTranslationUnit)(tu);
  FE(clang_disposeIndex)(idx);
  return rc;
}
