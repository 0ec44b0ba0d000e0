/*
 * rt.h -- what `kcast run` and the cudart replacement share: the fatbinary
 * reader (the PTX inside an nvcc-built program) and the launch records file
 * (what the replacement library writes inside the program and `kcast run`
 * stores afterwards).
 *
 * The replacement library itself (runtime/cudart/, built as
 * $(BUILD)/cudart/libcudart.so.13) is not part of libkcast: it exports the
 * CUDA runtime API and nothing else.  This header is the part both sides
 * use; it depends on nothing CUDA.
 *
 * Conventions as in datasets/ds.h: 0 success, -1 failure with one line in
 * err; strings handed out are owned by the structure that holds them.
 */
#ifndef KCAST_RT_H
#define KCAST_RT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "extractor/features.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------- fatbinaries -- */

/* Magic of the wrapper nvcc passes to __cudaRegisterFatBinary. */
#define RT_FATBIN_WRAPPER_MAGIC 0x466243b1u
/* Magic of a fatbinary container (what the wrapper's data points at). */
#define RT_FATBIN_MAGIC 0xBA55ED50u
/* Entry kinds. */
enum { RT_FATBIN_PTX = 1, RT_FATBIN_ELF = 2 };
/* Entry flags: payload compressed, LZ4 block (CUDA 11/12) or zstd (13). */
#define RT_FATBIN_FLAG_LZ4 0x2000u
#define RT_FATBIN_FLAG_ZSTD 0x8000u
/* Highest PTX target the emulator is meant for (sm_90 / compute_90). */
#define RT_MAX_ARCH 90

/* What a fatbinary holds (rt_fatbin_list). */
typedef struct rt_fatbin_entry {
  int kind;              /* RT_FATBIN_PTX, RT_FATBIN_ELF or other */
  unsigned arch;         /* 75 for sm_75 / compute_75 */
  uint64_t flags;
  const uint8_t *data;   /* payload as stored (points into the fatbinary) */
  uint64_t stored;       /* bytes stored at data */
  uint64_t raw;          /* bytes after decompression (= stored if plain) */
} rt_fatbin_entry;

/*
 * List the entries of the fatbinary container at fb (size bytes readable;
 * the container's own header gives its length, which must fit).  Up to cap
 * entries go to out; *n receives the count (which may exceed cap).
 */
int rt_fatbin_list(const void *fb, size_t size, rt_fatbin_entry *out,
                   size_t cap, size_t *n, char *err, size_t cap_err);

/*
 * The PTX text the emulator should run: the PTX entry of the highest arch
 * <= RT_MAX_ARCH (else the lowest above it), decompressed.  [out] *ptx is
 * malloc'd and NUL-terminated, the caller frees it; *arch its target.
 * Fails with a message telling how to rebuild when there is no PTX
 * (machine code only) or it cannot be decompressed.
 */
int rt_fatbin_ptx(const void *fb, size_t size, char **ptx, size_t *len,
                  unsigned *arch, char *err, size_t cap);

/* Size of the container at fb from its header (0 when not a container). */
size_t rt_fatbin_size(const void *fb);

/*
 * Decode an LZ4 block (no frame) of n bytes into out (exactly cap bytes
 * expected).  Returns the bytes produced, or -1 on malformed input.
 */
long rt_lz4_block(const uint8_t *in, size_t n, uint8_t *out, size_t cap);

/* ------------------------------------------------------- records file -- */

/* Environment the replacement reads (set by `kcast run`). */
#define RT_ENV_OUT "KCAST_RUN_OUT"         /* records file to append to */
#define RT_ENV_SAMPLE "KCAST_RUN_SAMPLE"   /* CTAs to sample per launch */
#define RT_ENV_THREADS "KCAST_RUN_THREADS" /* OpenMP threads per launch */
#define RT_ENV_OOB "KCAST_RUN_OOB"         /* error or warn (emu.h, EMU_OOB_*) */
#define RT_ENV_RACECHECK "KCAST_RUN_RACECHECK" /* 1: the race check (emu.h) */
#define RT_ENV_STATUS "KCAST_RUN_STATUS"   /* status file (rt_status) to map */

/*
 * The status page: kcast run creates a file of sizeof(rt_status) zero
 * bytes and names it in KCAST_RUN_STATUS; the replacement maps it shared
 * and updates it around each launch, kcast run reads it for its progress
 * line and, after the program, for records_errno.  (kcast run's files are
 * memory and an unlinked file it names as /proc/self/fd/N, inherited: no
 * name is left behind however the run ends, and the page needs no disk.)  seq is odd while a writer is inside an update: a reader that sees
 * an odd or changed seq reads again (the display is all it feeds).
 */
typedef struct rt_status {
  uint64_t seq;          /* update count, odd during an update */
  uint64_t launches;     /* launches finished (emulated, failed or not) */
  uint64_t failed;       /* of which failed */
  uint64_t insns_done;   /* thread-instructions of the finished launches */
  int64_t lseq;          /* the launch running now, -1 when none */
  uint64_t insns_now;    /* its thread-instructions so far (emu_launch_cfg.progress) */
  char kernel[240];      /* its kernel (mangled) */
  int32_t records_errno; /* the first launch record that could not be
                            written (a full disk): its errno; 0 = none */
  int32_t stop;          /* set by kcast run at --timeout: the running
                            launch stops and is recorded from the CTAs that
                            finished (emu.partial), later ones fail */
  int64_t next_lseq;     /* atomic: the next launch's lseq, for every process
                            of the run (the page is shared across fork and
                            named again after exec): a program that forks or
                            execs numbers its launches once, not once per
                            process (which stored one of each pair) */
} rt_status;
/* launches.source of the rows `kcast run` writes. */
#define RT_SOURCE "kcast run"

/*
 * The file is text, one record per line, appended with one write() each:
 *
 *   kcast-run 1 PID                 the library was loaded (process PID)
 *   launch LSEQ GX GY GZ BX BY BZ SHMEM SAMPLED INSNS SECONDS KERNEL NAME=VALUE...
 *   error LSEQ KERNEL MESSAGE       a launch that failed or was refused, or
 *                                   whose kernel could not be loaded (no
 *                                   features): every launch call has a line
 *   warn LSEQ MESSAGE               the launch before it had tolerated
 *                                   out-of-bounds accesses (emu.oob_accesses);
 *                                   MESSAGE names the first
 *   race LSEQ MESSAGE               the launch before it had data races
 *                                   (KCAST_RUN_RACECHECK; emu.races);
 *                                   MESSAGE names the first
 *   unsupported NAME MESSAGE        the program called NAME, a CUDA runtime
 *                                   entry point (or a use of one) kcast does
 *                                   not implement: it returned
 *                                   cudaErrorNotSupported; MESSAGE says
 *                                   what it belongs to ("CUDA graphs and
 *                                   stream capture"); one line per NAME and
 *                                   process
 *
 * A line that does not end in a newline is the torn tail of a killed
 * process; the reader refuses the file then (the run did not finish).
 *
 * A record the library cannot write (a full disk) is not silently lost:
 * the library says so on stderr, records nothing more, and stores the
 * errno in the status page's records_errno (memory, no disk needed), which
 * kcast run checks after the program.
 */
typedef struct rt_launch_rec {
  int64_t lseq;
  uint32_t grid[3], block[3];
  int64_t shmem;
  int sampled;           /* counts scaled from a CTA sample */
  uint64_t insns;        /* thread-instructions emulated */
  double seconds;        /* emulation wall time */
  char *kernel;          /* owned */
  feat_vec feats;        /* owned */
  char *error;           /* owned; non-NULL for a failed launch */
  char *warn;            /* owned; the first tolerated out-of-bounds access, or NULL */
  char *race;            /* owned; the first data race (race check), or NULL */
} rt_launch_rec;

typedef struct rt_records {
  int loaded;            /* "kcast-run" lines seen (processes that loaded it) */
  int torn;              /* a torn last line was dropped (RT_READ_TORN_OK) */
  size_t n;
  rt_launch_rec *l;      /* in file order */
  size_t nunsup;
  char **unsup;          /* owned; "NAME (MESSAGE)" of each distinct NAME of
                            the `unsupported` lines, in file order */
} rt_records;

/* Format one launch line (with its newline) into a malloc'd string. */
char *rt_records_launch_line(const rt_launch_rec *r);
/* Format one error line (message's newlines become spaces). */
char *rt_records_error_line(int64_t lseq, const char *kernel, const char *msg);
/* Format one warn line (likewise). */
char *rt_records_warn_line(int64_t lseq, const char *msg);
/* Format one race line (likewise). */
char *rt_records_race_line(int64_t lseq, const char *msg);
/* Format one unsupported line (name: no spaces; message likewise). */
char *rt_records_unsupported_line(const char *name, const char *msg);

/* Read path into *r (zeroed first); names file and line on failure. */
int rt_records_read(const char *path, rt_records *r, char *err, size_t cap);
/* The same with flags: RT_READ_TORN_OK drops a torn last line (a writer
   that was killed, e.g. by kcast run's --timeout) and sets r->torn. */
#define RT_READ_TORN_OK 1u
int rt_records_read_ex(const char *path, rt_records *r, unsigned flags, char *err, size_t cap);
/* The same from an open stream; name is what messages call it. */
int rt_records_read_file(FILE *f, const char *name, rt_records *r, unsigned flags, char *err,
                         size_t cap);
/* Free and zero.  NULL ok. */
void rt_records_free(rt_records *r);

#ifdef __cplusplus
}
#endif

#endif
