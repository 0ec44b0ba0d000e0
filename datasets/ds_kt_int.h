/*
 * ds_kt_int.h -- internals of the Kernel Tuner import shared by its files
 * (ds_kt.c: the pipeline and the import; ds_kt_src.c: the tunable source's
 * text, read once and written once per configuration).  Not installed;
 * datasets/ds_kt.h is the interface.
 */
#ifndef KCAST_DS_KT_INT_H
#define KCAST_DS_KT_INT_H

#include <stddef.h>

#include "datasets/ds_kt.h"

/* A growing NUL-terminated buffer; every append returns -1 on ENOMEM. */
typedef struct kt_sbuf { char *s; size_t n, cap; } kt_sbuf;
int kt_sb_add(kt_sbuf *b, const char *t, size_t n);
int kt_sb_printf(kt_sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The body of a C string literal for s (for #line). */
int kt_sb_cstr(kt_sbuf *b, const char *s);

/* A `#pragma unroll NAME` line of a loop_unroll_factor parameter. */
typedef struct kt_pragma {
  size_t start, end;  /* text[start..end): the line up to NAME's end */
  char *param;        /* NAME */
} kt_pragma;

/* What the source's text says about how its copies are written. */
typedef struct kt_scan {
  size_t *ren;        /* nren offsets (ascending) just past an identifier
                         that a grouped copy renames NAME__kcast_cfgN */
  size_t nren;
  char **renamed;     /* the distinct names renamed: the kernel and every
                         name declared in an extern "C" region */
  size_t nrenamed;
  kt_pragma *prag;    /* loop_unroll_factor pragmas, ascending */
  size_t nprag;
  char **macros;      /* names the source #defines (#undef'd after a copy) */
  size_t nmacros;
} kt_scan;

/*
 * Scan text[0..len) (comments, strings and character literals skipped): the
 * occurrences to rename -- the kernel's name and the names declared at the
 * top of an extern "C" region (kernels, __device__/__constant__ variables,
 * host functions: C linkage ignores namespaces, so two copies would define
 * them twice), never a member after '.' or '->' nor a name in params[] or
 * one the source #defines -- the loop_unroll_factor pragmas and the macro
 * names.  0, or -1 out of memory.  Free with kt_scan_free.
 */
int kt_scan_source(const char *text, size_t len, const char *kernel, const char *const *params,
                   size_t nparams, kt_scan *out);
void kt_scan_free(kt_scan *s);

/*
 * Append the text of one copy: the source with ns's suffix ("__kcast_cfg3")
 * after every renamed occurrence (none when ns is NULL) and, for each
 * loop_unroll_factor parameter whose value is "0" (names/values of the
 * configuration), its pragma lines removed (their line breaks kept, so
 * line numbers stay the source's), as Kernel Tuner does.
 */
int kt_copy_text(kt_sbuf *b, const char *text, size_t len, const kt_scan *s, const char *ns,
                 const char *const *names, const char *const *values, size_t n);

/* Is name a loop_unroll_factor parameter (Kernel Tuner: the name holds
   "loop_unroll_factor"; its value replaces a pragma's argument)? */
int kt_is_unroll(const char *name);
/* Is s a C identifier? */
int kt_is_identifier(const char *s);

#endif
