/*
 * rf_util.c -- the forest module's plumbing: the per-thread last error, the
 * allocator with its fault-injection hook (as Lua's ltests.h allocator,
 * used by tests to prove every allocation failure is reported, not
 * crashed on or leaked), the random generator and default parameters.
 *
 * Random numbers: splitmix64 expands (seed, stream) into the 256-bit state
 * of xoshiro256** (Blackman & Vigna).  Each tree uses stream = tree index,
 * so a tree's draws do not depend on which thread builds it or when.
 */
#include "model/rf_int.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#if __has_include(<omp.h>)
#include <omp.h>
#else
int omp_get_max_threads(void); /* OpenMP API; clang without libomp headers */
#endif

static _Thread_local char last_error[1024];

const char *rf_last_error(void) { return last_error; }

int rf__err(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error, sizeof last_error, fmt, ap);
  va_end(ap);
  return -1;
}

int rf__nomem(void) { return rf__err("out of memory"); }

/* Allocations left before failures start; <= 0 with armed == 0: never. */
static atomic_long fail_countdown;
static atomic_int fail_armed;

void rf_test_fail_alloc(long n) {
  atomic_store(&fail_countdown, n);
  atomic_store(&fail_armed, n > 0);
}

static int should_fail(void) {
  if (!atomic_load_explicit(&fail_armed, memory_order_relaxed)) return 0;
  return atomic_fetch_sub(&fail_countdown, 1) <= 1;
}

void *rf__malloc(size_t n) {
  if (should_fail()) return NULL;
  return malloc(n ? n : 1);
}

void *rf__mallocn(size_t n, size_t size) {
  if (size && n > SIZE_MAX / size) return NULL;
  return rf__malloc(n * size);
}

void *rf__calloc(size_t n, size_t size) {
  if (size && n > SIZE_MAX / size) return NULL;
  if (should_fail()) return NULL;
  return calloc(n ? n : 1, size ? size : 1);
}

void *rf__realloc(void *p, size_t n) {
  if (should_fail()) return NULL;
  return realloc(p, n ? n : 1);
}

char *rf__strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = rf__malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

void rf__free(void *p) { free(p); }

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

void rf__rng_seed(rf_rng *r, uint64_t seed, uint64_t stream) {
  uint64_t x = seed ^ (stream * 0xd1b54a32d192ed03ULL);
  uint64_t mix = splitmix64(&x);
  x ^= mix;
  for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&x);
}

uint64_t rf__rng_next(rf_rng *r) { return rf__rng_next_(r); }

uint64_t rf__rng_below(rf_rng *r, uint64_t n) { return rf__rng_below_(r, n); }

double rf__rng_unit(rf_rng *r) { return rf__rng_unit_(r); }

int rf__nthreads(int n) { return n > 0 ? n : omp_get_max_threads(); }

void rf_params_default(rf_params *p) {
  memset(p, 0, sizeof *p);
  p->size = sizeof *p;
  p->n_trees = 100;
  p->max_features = 0;
  p->min_leaf = 5;
  p->max_depth = 0;
  p->extra_trees = 0;
  p->bootstrap = -1;
  p->transform = RF_TRANSFORM_NONE;
  p->base_feature = -1;
  p->seed = 1;
  p->n_bins = RF_MAX_BINS;
  p->leaf_cap = 32;
}

/*
 * Ask for transparent huge pages on a large matrix that is read at random
 * rows: with 4 KiB pages nearly every row of a 20 MB matrix is a TLB miss
 * (the prefetch of the next rows stalled on the page walk: 10% of the
 * samples).  Advice only; failure is harmless.
 */
void rf__want_hugepages(void *p, size_t n) {
  uintptr_t a = ((uintptr_t)p + (2u << 20) - 1) & ~(uintptr_t)((2u << 20) - 1);
  uintptr_t e = ((uintptr_t)p + n) & ~(uintptr_t)((2u << 20) - 1);
  if (e > a) madvise((void *)a, e - a, MADV_HUGEPAGE);
}
