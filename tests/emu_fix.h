/*
 * emu_fix.h -- the fixture of the emulator's kernel tests
 * (test_emu_kernels.c, test_emu_tensor.c): a kernel of the compiled
 * corpus ($KCAST_BUILD/corpus/<name>.<compiler>.ptx) loaded onto a fresh
 * device, its arguments, buffers and launches, checks whose failure
 * message is the sentence they prove, and the 1-and-2-thread run of a
 * test body for each compiler.
 */
#ifndef KCAST_TESTS_EMU_FIX_H
#define KCAST_TESTS_EMU_FIX_H

#include <stddef.h>
#include <stdint.h>

#include "emulator/emu.h"
#include "extractor/features.h"
#include "extractor/ptx.h"

extern const char *const COMPILERS[];
#define CHECK(cond, ...) check_impl(!!(cond), __LINE__, __VA_ARGS__)

#define NCOMPILERS 2

typedef struct kfix {
  const char *corpus;     /* kernel file base name, e.g. "saxpy" */
  const char *compiler;   /* "nvcc" or "clang" */
  ptx_module *m;
  emu_device *d;
  emu_module *em;
  const ptx_func *k;      /* kernel of the next launch (fix_kernel) */
  size_t off[64];         /* its parameter offsets */
  size_t total;           /* its argument buffer size */
  unsigned char params[1024];
  char err[1024];         /* error text of the last failed call */
} kfix;

typedef struct dims { unsigned g[3], b[3]; size_t shared; } dims;

#define FEAT_EQ(f, fv, name, want) check_feat((f), (fv), (name), (double)(want), __LINE__)

#define WORDS_EQ(f, what, got, want, n) \
  check_words((f), (what), (got), (want), (n), sizeof *(want), __LINE__)

typedef void (*body_fn)(kfix *f, int threads, feat_vec *fv);

void check_impl(int ok, unsigned line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int fix_open(kfix *f, const char *corpus, const char *compiler);
void fix_close(kfix *f);
int fix_kernel(kfix *f, const char *mangled);
void fix_scalar(kfix *f, unsigned idx, const void *v, size_t n);
void fix_u32(kfix *f, unsigned idx, uint32_t v);
void fix_f32(kfix *f, unsigned idx, float v);
void fix_u64(kfix *f, unsigned idx, uint64_t v);
uint64_t fix_buf(kfix *f, int idx, const void *host, size_t bytes);
void fix_get(kfix *f, void *host, uint64_t addr, size_t bytes);
int fix_launch_cfg(kfix *f, const dims *dm, int threads, uint64_t sample,
                   feat_vec *fv, emu_stats *st);
/* The race check of every later fixture launch (returns the previous
   mode): FIX_RACE_OFF; FIX_RACE_ON, emu_launch_cfg.racecheck set;
   FIX_RACE_CLEAN, set and the launch must find no race (the test bodies
   of correct kernels run again under the check). */
enum { FIX_RACE_OFF, FIX_RACE_ON, FIX_RACE_CLEAN };
int fix_racecheck(int mode);
int fix_launch(kfix *f, const dims *dm, int threads, feat_vec *fv);
int fix_launch_tagged(kfix *f, const dims *dm, int threads, feat_vec *fv,
                      const char *tag, feat_vec *keep);
void check_feat(kfix *f, const feat_vec *fv, const char *name, double want,
                unsigned line);
void check_words(kfix *f, const char *what, const void *got, const void *want,
                 size_t n, size_t wsize, unsigned line);
void check_same_features(const feat_vec *a, const feat_vec *b, const char *what);
void for_each_compiler(const char *corpus, body_fn body);
uint64_t rng_next(uint64_t *s);

#endif
