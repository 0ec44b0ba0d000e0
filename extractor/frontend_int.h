/*
 * frontend_int.h -- internals shared by the front-end files (not part of
 * frontend.h's interface).
 *
 *   frontend.c        dispatch by extension, .ptx reading, running nvcc and
 *                     clang as child processes, the CUDA root
 *   frontend_llvm.c   .ll / .bc through the LLVM C API's NVPTX back end
 *   frontend_clang.c  kernel listing through libclang
 *
 * Every function here follows frontend.h's convention: 0 on success, -1 with
 * one line in err ("FILE: what went wrong").
 */
#ifndef KCAST_FRONTEND_INT_H
#define KCAST_FRONTEND_INT_H

#include <stdarg.h>
#include <stddef.h>

#include "frontend.h"

/* Write a formatted message into err (err may be NULL or errcap 0); returns
   -1 so that callers can `return fe__fail(...)`. */
int fe__fail(char *err, size_t errcap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The target architecture of o (FE_DEFAULT_ARCH when o or o->arch is NULL).
   Returns NULL after writing err when it is not of the form sm_<digits>
   with an optional letter suffix (sm_90, sm_90a, sm_100f). */
const char *fe__arch(const fe_options *o, const char *path, char *err,
                     size_t errcap);

/* The CUDA toolkit root: $CUDA_PATH, else $CUDA_HOME, else the folder above
   the bin/ that holds nvcc on PATH, else /usr/local/cuda.  Written into buf
   (always NUL-terminated); returns buf. */
char *fe__cuda_root(char *buf, size_t cap);

/* How a tool's messages name what it was given: mentions of the safe names
   (from) are rewritten to the user's (to), pairwise. */
typedef struct name_map { const char *from[2], *to[2]; } name_map;

/*
 * Run argv (argv[0] looked up on PATH) as a child process -- an argv array,
 * never a shell -- with stdin from /dev/null, stdout/stderr into files in
 * dir and environment envp.  On a failed start or a non-zero exit writes err
 * (the tool's first error line, FILE:LINE form) and returns -1; *diag gets
 * the child's stderr (malloc'd, may be NULL, names mapped through map)
 * either way when it ran.
 */
int fe__run_tool(char *const *argv, char *const *envp, const name_map *map, const char *tool,
                 const char *dir, const char *path, char **diag, char *err, size_t errcap);
/* Remove a private temporary folder and what it holds (fe_scratch_remove). */
void fe__remove_tmpdir(const char *dir);
/* A tool's process group while it runs, for fe_cleanup. */
#include <sys/types.h>
void fe__group_add(pid_t g);
void fe__group_del(pid_t g);

/* .ll / .bc -> PTX via the LLVM C API (frontend_llvm.c). */
int fe__llvm_to_ptx(const char *path, const fe_options *o, char **ptx,
                    size_t *len, char *err, size_t errcap);

#endif
