/*
 * frontend.h -- turn what users have (.cu, .ll, .bc, .ptx) into PTX text,
 * and list the __global__ kernels of a .cu file.
 *
 *   .ptx          read as is
 *   .cu           nvcc -ptx (default) or clang-22 --cuda-device-only -S
 *   .ll / .bc     LLVM C API: parse IR, NVPTX target machine, emit assembly
 *
 * Kernel listing uses libclang (clang-c/Index.h): every function with the
 * CUDA global attribute, with its parameter names and types.
 *
 * Errors: functions return 0 on success, -1 on failure with one line in err
 * ("FILE: what went wrong"; compiler diagnostics are summarised, the first
 * error line included).
 */
#ifndef KCAST_FRONTEND_H
#define KCAST_FRONTEND_H

#include <stddef.h>

typedef enum fe_compiler { FE_NVCC = 0, FE_CLANG = 1 } fe_compiler;

typedef struct fe_options {
  fe_compiler compiler;     /* for .cu input */
  const char *arch;         /* "sm_90" etc.; NULL selects FE_DEFAULT_ARCH */
  const char *const *extra; /* extra compiler arguments (-I, -D, -O3), or NULL */
  size_t nextra;
} fe_options;

#define FE_DEFAULT_ARCH "sm_90"

/*
 * The GPU architectures a program is built for to run on mixed clusters
 * (kcast nvcc; the Makefile's SUITE_ARCHS is the same list): machine code
 * for each generation from sm_70 (V100) to sm_90 (H100, H200) -- sm_75 T4,
 * sm_80 A100, sm_86 A10/A40/RTX 30, sm_89 L4/L40/RTX 40 -- of those the
 * nvcc at hand can make (`nvcc --list-gpu-code`: CUDA 13 starts at sm_75),
 * and PTX of the newest for later GPUs (the driver compiles it) and for the
 * emulator.  fe_nvcc_gencode writes the nvcc words ("-gencode",
 * "arch=compute_75,code=sm_75", ..., "arch=compute_90,code=[sm_90,compute_90]")
 * into words[0..max) (each cap bytes); returns how many, or -1 with err
 * when nvcc cannot be run or makes none of them.  nvcc runs without a
 * shell; its output is read through a pipe.
 */
#define FE_GPU_ARCHS 70, 75, 80, 86, 89, 90
int fe_nvcc_gencode(const char *nvcc, char (*words)[64], size_t max, char *err, size_t errcap);

/*
 * PTX text for path, chosen by its extension (case-insensitive).  *ptx is
 * malloc'd and NUL-terminated (caller frees); *len excludes the NUL.
 */
int fe_to_ptx(const char *path, const fe_options *o, char **ptx, size_t *len,
              char *err, size_t errcap);

/*
 * PTX of CUDA source text (textlen bytes) compiled as if it were the file
 * at path (which need not exist): messages and __FILE__ name path, quoted
 * includes are found in path's folder.  Same compilers, options and
 * safety as fe_to_ptx (no shell sees a name; nvcc runs in a private
 * folder).  The text should begin with `#line 1 "path"` after any lines
 * prepended to the user's source, so line numbers stay the user's.
 */
int fe_cu_text_to_ptx(const char *text, size_t textlen, const char *path, const fe_options *o,
                      char **ptx, size_t *len, char *err, size_t errcap);

typedef struct fe_param {
  char *name;   /* as written; "" when unnamed */
  char *type;   /* spelled as clang prints it, e.g. "const float *" */
} fe_param;

typedef struct fe_kernel {
  char *name;     /* source name, e.g. "saxpy" */
  char *mangled;  /* the PTX .entry name (Itanium mangling) */
  unsigned line;  /* line of the definition in the .cu file */
  size_t nparams;
  fe_param *params;
} fe_kernel;

/* The non-template __global__ functions defined in a .cu file (libclang does
   not expose template instantiations as cursors; their kernels still appear
   in the PTX).  Caller frees with fe_kernels_free. */
int fe_list_kernels(const char *cu_path, const fe_options *o, fe_kernel **out,
                    size_t *n, char *err, size_t errcap);
void fe_kernels_free(fe_kernel *k, size_t n);

/* The demangled signature of an Itanium-mangled name (libstdc++'s
   __cxa_demangle): "saxpy(int, float, float const*, float*)"; malloc'd
   (caller frees); NULL when name is not mangled (extern "C") or on ENOMEM. */
char *fe_demangle(const char *mangled);
/* The source name in a demangled signature d, with namespaces and template
   arguments, without return type and parameters ("gemm_tiled_kernel<16>"),
   into buf (truncated to cap - 1); its length.  "" for d NULL. */
size_t fe_demangled_name(const char *d, char *buf, size_t cap);
/* How closely want names the kernel mangled (the rule of every --kernel
   and of kcast_features_from_ptx): 3 its demangled signature or its source
   name with template arguments ("gemm_tiled_kernel<16>"; spaces not
   counted), 2 the source name without them ("ns::k"), 1 its last
   component ("k"); 0 no match (an exact mangled name is the caller's). */
int fe_name_match(const char *mangled, const char *want);
/* Do mangled names a and b name the same function?  Equal, or both
   demangle to the same signature: libclang mangles a static kernel with
   the internal-linkage marker (_ZL3fooPf) that nvcc's .entry drops
   (_Z3fooPf).  0 for NULL. */
int fe_same_function(const char *a, const char *b);

/* Kernel templates (a feature model covers every instance of one).  The
   template key of an instance: its demangled signature with each integer
   argument of the kernel's own template argument list replaced by T0, T1,
   ... ("void gemm_tiled_kernel<T0>(int, float, ...)"), into key (cap
   bytes); the arguments' values into targs[0..max).  Returns how many were
   replaced, 0 (key "") for a name that is not mangled, has no integer
   template argument or does not fit. */
size_t fe_template_key(const char *mangled, char *key, size_t cap, double *targs, size_t max);
/* Does kernel name (mangled, a demangled signature or a source name:
   "gemm_tiled_kernel<16>") instantiate template pattern ("k<T>",
   "ns::k<float, N>", a template key)?  The pattern's name is the kernel's
   source name or its last component; each pattern argument equal to the
   kernel's is fixed, an identifier that differs (not a fundamental type's
   keyword: float, int, ... are always fixed) is a variable that takes
   the kernel's integer argument into targs (*n of them, at most max).
   1 a match, 0 none, -1 the names and arity match but a variable meets a
   non-integer argument (why says which; whycap bytes).  A mangled name
   against a pattern that is a whole template key (with its parameter
   list) matches when its own key is that one. */
int fe_template_args(const char *name, const char *pattern, double *targs, size_t max,
                     size_t *n, char *why, size_t whycap);

/*
 * What ptxas reports for each kernel of a PTX text assembled for arch
 * ("sm_80"; frontend_ptxas.c): the PTX's .target is rewritten to arch, so
 * PTX made for a newer architecture is assembled for an older one unless it
 * uses that architecture's instructions (then ptxas's error is returned).
 * src names the input in messages.  *out (n kernels, caller frees with
 * fe_ptxas_free).  ptxas is $KCAST_PTXAS, else the CUDA root's
 * bin/ptxas, else on PATH.
 */
typedef struct fe_ptxas_kernel {
  char *name;                 /* the .entry name */
  double registers;           /* per thread */
  double spill_store_bytes, spill_load_bytes, stack_bytes;  /* per thread */
  double smem_bytes;          /* static shared memory per CTA */
  int have;                   /* the register line was seen */
} fe_ptxas_kernel;
int fe_ptxas(const char *ptx, size_t len, const char *arch, const char *src,
             fe_ptxas_kernel **out, size_t *n, char *err, size_t errcap);
void fe_ptxas_free(fe_ptxas_kernel *k, size_t n);

/*
 * Scratch and children (frontend_scratch.c).  Every compiler and assembler
 * kcast starts (nvcc, clang, ptxas) runs in a process group of its own
 * with a time limit: fe_tool_timeout() seconds -- fe_set_tool_timeout(),
 * else $KCAST_TOOL_TIMEOUT, else FE_TOOL_TIMEOUT_S -- after which the
 * whole group is killed and the run fails saying so.  Scratch folders are
 * named PREFIX-HOST-PID-XXXXXX; the first one a process makes with a
 * prefix in a folder removes that folder's ones whose owner on this host
 * has died (a kill -9 left them).  fe_cleanup() kills the running tools'
 * groups and removes the live scratch folders using async-signal-safe
 * calls only: a signal handler may call it before the process dies.
 */
#define FE_TOOL_TIMEOUT_S 600.0
/* 0 or less restores the default. */
void fe_set_tool_timeout(double seconds);
double fe_tool_timeout(void);
/* Make base/prefix-HOST-PID-XXXXXX (base NULL or "": /tmp) into dir (cap
   bytes), registered for fe_cleanup; sweeps base first (once per base and
   prefix in a process).  0, or -1 with the message in err. */
int fe_scratch_make(const char *base, const char *prefix, char *dir, size_t cap, char *err,
                    size_t errcap);
/* Remove base's prefix folders of dead processes of this host; how many. */
int fe_scratch_sweep(const char *base, const char *prefix);
/* Remove a scratch folder and what it holds (and forget it). */
void fe_scratch_remove(const char *dir);
void fe_cleanup(void);

#endif
