// suite_util.h -- helpers shared by the suite programs that include it.
//
// What: the CHECK macro every CUDA runtime call goes through, the launch check
// (cudaGetLastError right after a <<<>>> launch), a 32-bit LCG with a fixed seed
// for deterministic inputs, strict decimal argument parsing with the usage/exit-2
// convention, and the PASS/FAIL ending (exit 0 / exit 1).
// Why: every suite program must be self-checking and deterministic and must run
// unmodified under kcast's CPU cudart replacement as well as on a real GPU; one
// copy of these rules keeps the programs identical in how they fail.  Header-only
// (static functions) so each program still builds from its single .cu file.
#ifndef KCAST_SUITE_UTIL_H
#define KCAST_SUITE_UTIL_H

#include <cuda_runtime.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Any failing runtime call ends the program with exit 1 and names the call.
#define CHECK(call)                                                            \
  do {                                                                         \
    cudaError_t err_ = (call);                                                 \
    if (err_ != cudaSuccess) {                                                 \
      fprintf(stderr, "%s:%d: %s failed: %s\nFAIL\n", __FILE__, __LINE__,      \
              #call, cudaGetErrorString(err_));                                \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

// After every launch: configuration errors surface here, execution errors at
// the next synchronising call (also CHECKed).
#define CHECK_LAUNCH() CHECK(cudaGetLastError())

// Numerical Recipes' LCG (a = 1664525, c = 1013904223, mod 2^32); the seed is
// fixed per program, so every run sees the same inputs.
typedef struct { unsigned int s; } lcg_t;

static inline unsigned int lcg_next(lcg_t *g) {
  g->s = g->s * 1664525u + 1013904223u;
  return g->s;
}

// Uniform in [0, 1) from the top 24 bits (exact in float).
static inline float lcg_unit(lcg_t *g) {
  return (float)(lcg_next(g) >> 8) * (1.0f / 16777216.0f);
}

// Uniform integer in [0, n), n > 0 (top bits: the low bits of an LCG are weak).
static inline unsigned int lcg_below(lcg_t *g, unsigned int n) {
  return (unsigned int)(((unsigned long long)lcg_next(g) * n) >> 32);
}

static inline void suite_usage(const char *usage) {
  fprintf(stderr, "usage: %s\n", usage);
  exit(2);
}

// argv[i] as a decimal integer in [lo, hi]; missing -> def; junk -> usage.
static inline long long suite_arg(int argc, char **argv, int i, long long def,
                           long long lo, long long hi, const char *usage) {
  if (i >= argc) return def;
  const char *s = argv[i];
  char *end = NULL;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi) {
    fprintf(stderr, "bad argument %d '%s': want an integer in [%lld, %lld]\n",
            i, s, lo, hi);
    suite_usage(usage);
  }
  return v;
}

static inline int suite_is_pow2(long long v) { return v > 0 && (v & (v - 1)) == 0; }

static inline void *suite_malloc(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p) {
    fprintf(stderr, "out of host memory (%zu bytes)\nFAIL\n", bytes);
    exit(1);
  }
  return p;
}

// Ends the program: PASS/exit 0 when bad == 0, else FAIL/exit 1.
static inline int suite_finish(long long bad) {
  if (bad == 0) {
    printf("PASS\n");
    return 0;
  }
  printf("%lld mismatches\nFAIL\n", bad);
  return 1;
}

#endif
