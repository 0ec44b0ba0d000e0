/*
 * frontend_llvm.c -- .ll / .bc to PTX in process, through the LLVM C API:
 * parse the IR (text or bitcode, LLVM tells them apart), verify it, build an
 * NVPTX target machine and let its AsmPrinter write PTX into memory.
 *
 * Why in process: the NVPTX back end ships inside libLLVM (llvm-22 has it
 * built in), so no llc binary has to be on PATH, and LLVM's diagnostics
 * ("FILE:LINE:COL: error: ...") come back as strings we can pass on.
 *
 * Target: the module's own triple when it is an NVPTX one, nvptx64-nvidia-cuda
 * when it has none; IR for any other target is refused (it is host code, not
 * a kernel).  CPU = the requested arch (sm_90 by default).  Features:
 * +ptx88 -- the PTX ISA clang-22 itself selects against CUDA 13, valid for
 * every sm_XX up to sm_121 -- so that a .ll from clang and the .cu it came
 * from give the same PTX; for newer archs LLVM picks the version.  Functions
 * that carry "target-cpu"/"target-features" attributes (clang writes them)
 * keep their own.  llc-22 -mcpu=sm_90 without features would pick PTX 7.8,
 * the oldest version that knows sm_90.
 *
 * Threads: one LLVMContext per call, targets initialised once.
 * Known limit: the verifier catches malformed IR, but IR that is valid and
 * that the NVPTX back end cannot select makes LLVM report a fatal error,
 * which ends the process (LLVM offers no recoverable hook for it).
 */
#include "frontend_int.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/IRReader.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend_dl.h"

FE_LLVM_FNS(FE_DECLARE)

#define FE_NVPTX_TRIPLE "nvptx64-nvidia-cuda"
#define FE_PTX_FEATURES "+ptx88"
#define FE_PTX_FEATURES_MAX_SM 121

static pthread_once_t nvptx_once = PTHREAD_ONCE_INIT;

static void nvptx_init(void) {
  FE(LLVMInitializeNVPTXTargetInfo)();
  FE(LLVMInitializeNVPTXTarget)();
  FE(LLVMInitializeNVPTXTargetMC)();
  FE(LLVMInitializeNVPTXAsmPrinter)();
}

/* The first line of an LLVM message, without a leading "error: " when the
   caller adds its own context. */
static void first_line(const char *msg, char *buf, size_t cap) {
  if (!msg) msg = "";
  size_t n = strcspn(msg, "\n");
  while (n && (msg[n - 1] == ' ' || msg[n - 1] == '\r')) n--;
  snprintf(buf, cap, "%.*s", (int)n, msg);
}

int fe__llvm_to_ptx(const char *path, const fe_options *o, char **ptx,
                    size_t *len, char *err, size_t errcap) {
  const char *arch = fe__arch(o, path, err, errcap);
  if (!arch) return -1;
  if (fe__load_llvm(path, err, errcap) < 0) return -1;
  pthread_once(&nvptx_once, nvptx_init);

  char line[1024];
  char *msg = NULL;
  LLVMMemoryBufferRef in = NULL;
  if (FE(LLVMCreateMemoryBufferWithContentsOfFile)(path, &in, &msg)) {
    first_line(msg, line, sizeof line);
    FE(LLVMDisposeMessage)(msg);
    return fe__fail(err, errcap, "%s: %s", path, line);
  }

  int rc = -1;
  LLVMContextRef ctx = FE(LLVMContextCreate)();
  LLVMModuleRef mod = NULL;
  LLVMTargetMachineRef tm = NULL;
  LLVMMemoryBufferRef out = NULL;

  if (FE(LLVMParseIRInContext2)(ctx, in, &mod, &msg)) {
    /* Text IR errors already read "FILE:LINE:COL: error: ..."; bitcode
       errors are bare ("Invalid bitcode signature"). */
    first_line(msg, line, sizeof line);
    if (strncmp(line, path, strlen(path)) == 0)
      fe__fail(err, errcap, "%s", line);
    else
      fe__fail(err, errcap, "%s: invalid LLVM IR: %s", path, line);
    mod = NULL;
    goto done;
  }
  FE(LLVMDisposeMessage)(msg);
  msg = NULL;

  if (FE(LLVMVerifyModule)(mod, LLVMReturnStatusAction, &msg)) {
    first_line(msg, line, sizeof line);
    fe__fail(err, errcap, "%s: invalid LLVM IR: %s", path, line);
    goto done;
  }
  FE(LLVMDisposeMessage)(msg);
  msg = NULL;

  const char *triple = FE(LLVMGetTarget)(mod);
  if (!triple || !*triple) {
    FE(LLVMSetTarget)(mod, FE_NVPTX_TRIPLE);
    triple = FE_NVPTX_TRIPLE;
  } else if (strncmp(triple, "nvptx", 5) != 0) {
    fe__fail(err, errcap,
             "%s: IR is for target '%s', not NVPTX (compile the device side, e.g. "
             "clang --cuda-device-only -emit-llvm)",
             path, triple);
    goto done;
  }

  LLVMTargetRef target = NULL;
  if (FE(LLVMGetTargetFromTriple)(triple, &target, &msg)) {
    first_line(msg, line, sizeof line);
    fe__fail(err, errcap, "%s: no LLVM target for '%s': %s", path, triple, line);
    goto done;
  }
  FE(LLVMDisposeMessage)(msg);
  msg = NULL;

  unsigned sm = (unsigned)strtoul(arch + 3, NULL, 10);
  const char *features = sm <= FE_PTX_FEATURES_MAX_SM ? FE_PTX_FEATURES : "";
  tm = FE(LLVMCreateTargetMachine)(target, triple, arch, features, LLVMCodeGenLevelDefault,
                               LLVMRelocDefault, LLVMCodeModelDefault);
  if (!tm) {
    fe__fail(err, errcap, "%s: cannot create an NVPTX target machine for %s", path, arch);
    goto done;
  }
  const char *dl = FE(LLVMGetDataLayoutStr)(mod);
  if (!dl || !*dl) {
    LLVMTargetDataRef td = FE(LLVMCreateTargetDataLayout)(tm);
    FE(LLVMSetModuleDataLayout)(mod, td);
    FE(LLVMDisposeTargetData)(td);
  }

  if (FE(LLVMTargetMachineEmitToMemoryBuffer)(tm, mod, LLVMAssemblyFile, &msg, &out)) {
    first_line(msg, line, sizeof line);
    fe__fail(err, errcap, "%s: NVPTX code generation failed: %s", path, line);
    goto done;
  }
  FE(LLVMDisposeMessage)(msg);
  msg = NULL;

  size_t n = FE(LLVMGetBufferSize)(out);
  char *text = malloc(n + 1);
  if (!text) {
    fe__fail(err, errcap, "%s: out of memory", path);
    goto done;
  }
  memcpy(text, FE(LLVMGetBufferStart)(out), n);
  text[n] = 0;
  *ptx = text;
  if (len) *len = n;
  rc = 0;

done:
  if (msg) FE(LLVMDisposeMessage)(msg);
  if (out) FE(LLVMDisposeMemoryBuffer)(out);
  if (tm) FE(LLVMDisposeTargetMachine)(tm);
  if (mod) FE(LLVMDisposeModule)(mod);
  FE(LLVMDisposeMemoryBuffer)(in);
  FE(LLVMContextDispose)(ctx);
  return rc;
}
