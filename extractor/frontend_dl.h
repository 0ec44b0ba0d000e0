/*
 * frontend_dl.h -- the libclang and libLLVM entry points the front ends
 * call, resolved at run time (frontend_dl.c).
 *
 * kcast links neither library: a program that uses libkcast for
 * predictions, and `kcast profile` on a GPU machine without LLVM, never
 * load them.  frontend_clang.c and frontend_llvm.c include the real headers
 * for the types and call every entry point as FE(name)(...) after one
 * successful fe__load_clang / fe__load_llvm.
 */
#ifndef KCAST_FRONTEND_DL_H
#define KCAST_FRONTEND_DL_H

#include <stddef.h>

#define FE_CLANG_FNS(X)                                                         \
  X(clang_Cursor_getArgument) X(clang_Cursor_getMangling)                      \
  X(clang_Cursor_getNumArguments) X(clang_Location_isFromMainFile)             \
  X(clang_createIndex) X(clang_disposeDiagnostic) X(clang_disposeIndex)        \
  X(clang_disposeString) X(clang_disposeTranslationUnit)                       \
  X(clang_formatDiagnostic) X(clang_getCString) X(clang_getCursorKind)         \
  X(clang_getCursorLocation) X(clang_getCursorSpelling) X(clang_getCursorType) \
  X(clang_getDiagnostic) X(clang_getDiagnosticLocation)                        \
  X(clang_getDiagnosticSeverity) X(clang_getExpansionLocation)                 \
  X(clang_getNumDiagnostics) X(clang_getSpellingLocation)                      \
  X(clang_getTranslationUnitCursor) X(clang_getTypeSpelling)                   \
  X(clang_isCursorDefinition) X(clang_parseTranslationUnit2)                   \
  X(clang_visitChildren)

#define FE_LLVM_FNS(X)                                                          \
  X(LLVMContextCreate) X(LLVMContextDispose)                                   \
  X(LLVMCreateMemoryBufferWithContentsOfFile) X(LLVMCreateTargetDataLayout)    \
  X(LLVMCreateTargetMachine) X(LLVMDisposeMemoryBuffer) X(LLVMDisposeMessage)  \
  X(LLVMDisposeModule) X(LLVMDisposeTargetData) X(LLVMDisposeTargetMachine)    \
  X(LLVMGetBufferSize) X(LLVMGetBufferStart) X(LLVMGetDataLayoutStr)           \
  X(LLVMGetTarget) X(LLVMGetTargetFromTriple) X(LLVMInitializeNVPTXAsmPrinter) \
  X(LLVMInitializeNVPTXTarget) X(LLVMInitializeNVPTXTargetInfo)                \
  X(LLVMInitializeNVPTXTargetMC) X(LLVMParseIRInContext2)                      \
  X(LLVMSetModuleDataLayout) X(LLVMSetTarget)                                  \
  X(LLVMTargetMachineEmitToMemoryBuffer) X(LLVMVerifyModule)

/* Declares the pointer of entry point f (after the real headers). */
#define FE_DECLARE(f) extern __typeof__(f) *fe__p_##f;

/* Call entry point f through its resolved pointer. */
#define FE(f) (*fe__p_##f)

/* Load the library once per process (thread-safe).  0 on success; -1 with
   "PATH: the Clang front end needs LIB: why" in err. */
int fe__load_clang(const char *path, char *err, size_t errcap);
int fe__load_llvm(const char *path, char *err, size_t errcap);

#endif
