/*
 * emu_args.h -- kernel arguments and constant-memory fills written as
 * text ("1000000", "2.5", "buf:4M:randf", "d_filter=randf:2"), typed
 * against a kernel's PTX parameters and made on an emulated device: what
 * `kcast emulate`, `kcast predict FILE` and the Kernel Tuner importer share,
 * so that features emulated by one are the features predicted by another.
 *
 * An argument is a literal (typed later against the parameter: decimal or
 * 0x integers in the range of the parameter's width, floats, PTX float bit
 * spellings 0fXXXXXXXX / 0dXXXXXXXXXXXXXXXX, or hex:BYTES for any
 * parameter) or a buffer, buf:BYTES[:FILL] with BYTES > 0 and an optional
 * k/M/G suffix and FILL one of zero, seq, seqf, rand[:SEED], randf[:SEED],
 * file=PATH (docs/cli.md, kcast emulate).  A pattern fill is made page by
 * page as the launch first reaches it (emu_malloc_lazy).
 *
 * Nothing here prints; messages go to the caller's buffer.  The functions
 * are safe on distinct devices from distinct threads.
 */
#ifndef KCAST_EMU_ARGS_H
#define KCAST_EMU_ARGS_H

#include <stddef.h>
#include <stdint.h>

#include "emulator/emu.h"
#include "extractor/features.h"
#include "extractor/ptx.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Contents of a buffer or a constant symbol. */
typedef enum { EMU_FILL_ZERO, EMU_FILL_SEQ, EMU_FILL_SEQF, EMU_FILL_RAND, EMU_FILL_RANDF,
               EMU_FILL_FILE } emu_fill_kind;

/* One argument (or, with is_buf 0 and a fill, a constant symbol's fill). */
typedef struct emu_arg_spec {
  const char *text;     /* as given (not owned) */
  int is_buf;           /* buf:... */
  uint64_t bytes;       /* buffer size (is_buf) */
  emu_fill_kind fill;   /* buffer contents (is_buf) */
  uint64_t seed;        /* rand/randf seed */
  const char *file;     /* EMU_FILL_FILE path, points into text */
  uint64_t addr;        /* device address once allocated, 0 before */
} emu_arg_spec;

/* A constant-memory fill, NAME=FILL (FILL as for buf:, e.g. randf:2). */
typedef struct emu_const_spec {
  const char *text;      /* as given (not owned) */
  char name[256];        /* the symbol's source name */
  emu_arg_spec fill;     /* its fill (is_buf 0) */
} emu_const_spec;

/* BYTES (len characters of s) with an optional k/M/G suffix; 0, or -1. */
int emu_parse_size(const char *s, size_t len, uint64_t *out);
/* An unsigned decimal or 0x-hex number spanning all of s; 0, or -1. */
int emu_parse_u64(const char *s, uint64_t *out);

/*
 * The syntax of a->text (set by the caller; the rest of *a is filled):
 * a literal is accepted as is (typed by emu_arg_encode), buf:... is parsed.
 * 0, or -1 with why (for a message "ARG 'TEXT': WHY") in why[0..cap).
 */
int emu_arg_parse(emu_arg_spec *a, char *why, size_t cap);
/*
 * NAME=FILL into *out.  0, or -1 with the tail of a message "bad --const
 * 'TEXT'TAIL" in tail[0..cap) (" (expected NAME=FILL)", ": 'x' is not a
 * symbol name", ": unknown fill ...").
 */
int emu_const_parse(const char *text, emu_const_spec *out, char *tail, size_t cap);

/* Encode literal text s for parameter p into out (p->size bytes); 0, or -1
   with *why a static string. */
int emu_arg_encode(const ptx_var *p, const char *s, unsigned char *out, const char **why);

/*
 * Fill n device bytes at addr as a says (what names it in messages:
 * "--arg 2"); 0, or -1 with the reason in err.
 */
int emu_arg_fill(emu_device *d, const emu_arg_spec *a, uint64_t addr, size_t n, const char *what,
                 char *err, size_t cap);
/* Allocate and fill the buffer of argument idx a at *addr; 0, or -1 with
   err set. */
int emu_arg_buffer(emu_device *d, const emu_arg_spec *a, unsigned idx, uint64_t *addr, char *err,
                   size_t cap);

/*
 * Launch kernel k of em (loaded on d) with args[0..nargs), typed against
 * k, and cfg's grid, block, shared memory, sample and limits.  The buffers
 * are made on d for this launch and freed after it; the constant symbols
 * consts[0..nconsts) are filled first (ns: the C++ namespace they were
 * declared in, or NULL; a symbol is also found renamed NAME__ns, as the
 * Kernel Tuner importer's grouped compilation renames extern "C" names).
 * Returns 0;
 * 1 when an argument or symbol does not fit the kernel (every launch of it
 * would fail alike); -1 for a failed launch.  err holds why.
 */
int emu_launch_args(emu_device *d, emu_module *em, const ptx_func *k, const emu_arg_spec *args,
                    unsigned nargs, const emu_const_spec *consts, size_t nconsts, const char *ns,
                    const emu_launch_cfg *cfg, feat_vec *features, emu_stats *st, char *err,
                    size_t cap);

#ifdef __cplusplus
}
#endif

#endif
