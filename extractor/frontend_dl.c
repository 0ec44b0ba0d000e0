/*
 * frontend_dl.c -- dlopen of libclang and libLLVM for the front ends
 * (frontend_dl.h).
 *
 * Where the libraries are looked for: $KCAST_LLVM_LIBDIR/SONAME alone when
 * that variable is set; else SONAME on the loader's search path, then
 * BUILD_LIBDIR/SONAME (the LLVM the build compiled against).
 * SONAMEs and BUILD_LIBDIR come from the Makefile (llvm-config); the
 * defaults below are LLVM 22's.  A library that lacks one of the entry
 * points is refused as a whole.
 */
#include <clang-c/Index.h>
#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/IRReader.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>

#include "frontend_dl.h"
#include "frontend_int.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef FE_LIBCLANG
#define FE_LIBCLANG "libclang-22.so.22"
#endif
#ifndef FE_LIBLLVM
#define FE_LIBLLVM "libLLVM.so.22.1"
#endif
#ifndef FE_LLVM_LIBDIR
#define FE_LLVM_LIBDIR "/usr/lib/llvm-22/lib"
#endif

/* The pointers FE(name) calls through (declared by the front-end files). */
#define FE_DEFINE(f) __typeof__(f) *fe__p_##f;
FE_CLANG_FNS(FE_DEFINE)
FE_LLVM_FNS(FE_DEFINE)
#undef FE_DEFINE

/* Every entry point of one library: its name and where its pointer lives. */
#define FE_NAME(f) #f,
#define FE_SLOT(f) (void **)&fe__p_##f,
static const char *const clang_names[] = {FE_CLANG_FNS(FE_NAME) NULL};
static void **const clang_slots[] = {FE_CLANG_FNS(FE_SLOT) NULL};
static const char *const llvm_names[] = {FE_LLVM_FNS(FE_NAME) NULL};
static void **const llvm_slots[] = {FE_LLVM_FNS(FE_SLOT) NULL};
#undef FE_NAME
#undef FE_SLOT

typedef struct fe_lib {
  const char *soname;
  const char *const *names;
  void **const *slots;
  pthread_once_t once;
  int ok;
  char why[512];
} fe_lib;

static fe_lib clang_lib = {FE_LIBCLANG, clang_names, clang_slots, PTHREAD_ONCE_INIT, 0, ""};
static fe_lib llvm_lib = {FE_LIBLLVM, llvm_names, llvm_slots, PTHREAD_ONCE_INIT, 0, ""};

static void *open_lib(fe_lib *L) {
  char path[4096];
  const char *dir = getenv("KCAST_LLVM_LIBDIR");
  void *h = NULL;
  if (dir && *dir) {  /* the one place to look */
    snprintf(path, sizeof path, "%s/%s", dir, L->soname);
    if ((h = dlopen(path, RTLD_NOW | RTLD_LOCAL))) return h;
    const char *e = dlerror();
    snprintf(L->why, sizeof L->why, "%s", e ? e : "not found");
    return NULL;
  }
  if ((h = dlopen(L->soname, RTLD_NOW | RTLD_LOCAL))) return h;
  const char *first = dlerror();
  snprintf(L->why, sizeof L->why, "%s", first ? first : "not found");
  snprintf(path, sizeof path, "%s/%s", FE_LLVM_LIBDIR, L->soname);
  if ((h = dlopen(path, RTLD_NOW | RTLD_LOCAL))) return h;
  return NULL;
}

/* Open the library and resolve every name; the first missing one is
   reported and the library refused as a whole. */
static void load(fe_lib *L) {
  void *h = open_lib(L);
  if (!h) return;
  for (size_t i = 0; L->names[i]; i++)
    if (!(*L->slots[i] = dlsym(h, L->names[i]))) {
      snprintf(L->why, sizeof L->why, "%s lacks %s", L->soname, L->names[i]);
      return;
    }
  L->ok = 1;
}

static void load_clang(void) { load(&clang_lib); }
static void load_llvm(void) { load(&llvm_lib); }

static int report(const fe_lib *L, const char *what, const char *path, char *err,
                  size_t errcap) {
  if (L->ok) return 0;
  return fe__fail(err, errcap,
                  "%s: the %s needs %s, which could not be loaded (%s); install it "
                  "(make deps) or set KCAST_LLVM_LIBDIR",
                  path, what, L->soname, L->why);
}

int fe__load_clang(const char *path, char *err, size_t errcap) {
  pthread_once(&clang_lib.once, load_clang);
  return report(&clang_lib, "kernel listing (libclang)", path, err, errcap);
}

int fe__load_llvm(const char *path, char *err, size_t errcap) {
  pthread_once(&llvm_lib.once, load_llvm);
  return report(&llvm_lib, "LLVM IR front end", path, err, errcap);
}
