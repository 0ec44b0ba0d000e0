/*
 * rt_check.h -- the checks of the runtime API test programs
 * (tests/programs/rt_api_*.cu, tests/test_run.c): each check is one line,
 * "FAIL <what it proves>" when it does not hold (nothing when it does), and
 * the program ends with "PASS NAME" and status 0 only when every check held.
 * Results are compared with the CPU's.
 */
#ifndef RT_CHECK_H
#define RT_CHECK_H
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

static int rt_fails = 0;

/* a CUDA call that must succeed */
#define CHECK(x)                                                                        \
  do {                                                                                  \
    cudaError_t e_ = (x);                                                               \
    if (e_ != cudaSuccess) {                                                            \
      printf("FAIL line %d: %s returned %s\n", __LINE__, #x, cudaGetErrorName(e_));     \
      rt_fails++;                                                                       \
    }                                                                                   \
  } while (0)

/* a condition, with what it proves */
#define EXPECT(cond, ...)                   \
  do {                                      \
    if (!(cond)) {                          \
      printf("FAIL line %d: ", __LINE__);   \
      printf(__VA_ARGS__);                  \
      printf("\n");                         \
      rt_fails++;                           \
    }                                       \
  } while (0)

/* a CUDA call that must return the error a GPU returns */
#define EXPECT_ERR(x, want)                                                             \
  do {                                                                                  \
    cudaError_t e_ = (x);                                                               \
    if (e_ != (want)) {                                                                 \
      printf("FAIL line %d: %s returned %s, a GPU returns %s\n", __LINE__, #x,          \
             cudaGetErrorName(e_), cudaGetErrorName(want));                             \
      rt_fails++;                                                                       \
    }                                                                                   \
    cudaGetLastError();                                                                 \
  } while (0)

#define DONE(name)                                      \
  do {                                                  \
    if (rt_fails) {                                     \
      printf("FAILED %s: %d checks\n", name, rt_fails); \
      return 1;                                         \
    }                                                   \
    printf("PASS %s\n", name);                          \
    return 0;                                           \
  } while (0)

#endif
