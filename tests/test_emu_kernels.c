/*
 * test_emu_kernels.c -- the emulator against C references, kernel by kernel.
 *
 * Every kernel of the .cu files in tests/kernels/, as nvcc and as clang
 * compiled it into the test corpus ($KCAST_BUILD/corpus/<name>.<compiler>.ptx),
 * is run through the emulator API (ptx_parse_file, emu_device_new,
 * emu_module_load, emu_malloc, emu_memcpy_htod, emu_param_layout,
 * emu_launch, emu_memcpy_dtoh) and its outputs are compared with a
 * reference this file computes in C:
 *
 *   - integers bit for bit;
 *   - fp32 bit for bit where the reference can mirror the kernel's order of
 *     operations and its contractions (both compilers contract a*b+c into
 *     fma.rn.f32, which fmaf() reproduces exactly);
 *   - fp64 libdevice math (sin, exp) within a stated tolerance, because the
 *     host libm and libdevice are different (both ~1 ulp) implementations.
 *
 * Dynamic counts are checked against analytic values where the kernel fixes
 * them (saxpy's loads/stores/bytes/sectors, barriers per warp, shared-memory
 * bytes of the tiled matmul, bank conflicts of the padded transpose, calls
 * per thread, atomics per element).  Every launch runs with 1 and with 2
 * OpenMP threads, and the two runs must agree on every output byte and
 * every feature.  Failure paths: an out-of-bounds access, an endless kernel
 * against the instruction budget and the time limit.  Sampling: sampled
 * counts of regular kernels within 1% of the full counts (the differences
 * are printed so they show in the test log).
 *
 * A compiler whose corpus file is missing (not installed where the tests
 * run) is skipped with a note; each kernel must run for at least one.
 */
#include "tests.h"
#include "tests/emu_fix.h"

#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "emulator/emu.h"
#include "extractor/features.h"
#include "extractor/ptx.h"


static size_t distinct_sectors(uint64_t *addr, size_t n);

/* ---------------------------------------------------------------- saxpy -- */

#define SAXPY "_Z5saxpyifPKfPf"

static void body_saxpy(kfix *f, int threads, feat_vec *fv) {
  enum { N = 1000, BLOCK = 256, GRID = 5 }; /* 1280 threads: the bounds check matters */
  static float x[N], y[N], want[N], got[N];
  const float a = 1.5f;
  for (int i = 0; i < N; i++) {
    x[i] = (float)(i % 97) * 0.25f - 3.0f;
    y[i] = (float)i * 0.5f + 0.1f;
    want[i] = fmaf(a, x[i], y[i]);
  }
  if (fix_kernel(f, SAXPY)) return;
  fix_u32(f, 0, N);
  fix_f32(f, 1, a);
  fix_buf(f, 2, x, sizeof x);
  uint64_t yd = fix_buf(f, 3, y, sizeof y);
  dims dm = {{GRID, 1, 1}, {BLOCK, 1, 1}, 0};
  if (fix_launch(f, &dm, threads, fv)) return;
  fix_get(f, got, yd, sizeof got);
  WORDS_EQ(f, "y = a*x + y (one fma.rn.f32)", got, want, N);

  if (!strcmp(f->compiler, "nvcc")) {
    /* nvcc reads both x and y with ld.global.f32 (x is not __restrict__,
       so no .nc), writes y with st.global.f32. */
    FEAT_EQ(f, fv, "op.ld.global.f32", 2 * N);
    FEAT_EQ(f, fv, "op.st.global.f32", N);
  } else {
    FEAT_EQ(f, fv, "op.ld.global.b32", 2 * N);
    FEAT_EQ(f, fv, "op.st.global.b32", N);
  }
  FEAT_EQ(f, fv, "op.fma.rn.f32", N);
  FEAT_EQ(f, fv, "class.ld_global", 2 * N);
  FEAT_EQ(f, fv, "class.st_global", N);
  FEAT_EQ(f, fv, "mem.global_bytes", 12 * N);
  FEAT_EQ(f, fv, "mem.global_load_bytes", 8 * N);
  FEAT_EQ(f, fv, "mem.global_store_bytes", 4 * N);
  FEAT_EQ(f, fv, "mem.footprint_bytes", 8 * N);
  /* 31 full warps touch 4 sectors per access, the 32nd (8 lanes) one; three
     accesses (x, y, y) per warp. */
  FEAT_EQ(f, fv, "mem.global_accesses", 3 * 32);
  FEAT_EQ(f, fv, "mem.global_sectors", 3 * (31 * 4 + 1));
  FEAT_EQ(f, fv, "launch.threads", GRID * BLOCK);
  FEAT_EQ(f, fv, "launch.ctas", GRID);
  FEAT_EQ(f, fv, "launch.grid_x", GRID);
  FEAT_EQ(f, fv, "launch.block_x", BLOCK);
  FEAT_EQ(f, fv, "launch.param_bytes", 24);
  /* One conditional branch per warp (the bounds check); only the warp that
     straddles n = 1000 diverges. */
  FEAT_EQ(f, fv, "ctrl.branches", GRID * BLOCK / 32);
  FEAT_EQ(f, fv, "ctrl.divergent_branches", 1);
  double r = feat_get(fv, "ctrl.active_lane_ratio", NAN);
  CHECK(r > 0.5 && r < 1.0, "%s.%s saxpy: active lane ratio in (0.5, 1) (got %g)", f->corpus,
        f->compiler, r);
}

static void test_saxpy(void) { for_each_compiler("saxpy", body_saxpy); }

/* Out of bounds: n larger than the buffers stops the launch with a message
   naming kernel, CTA, thread, PTX line and address. */
static void body_saxpy_oob(kfix *f, int threads, feat_vec *fv) {
  enum { N = 1000 };
  static float x[N], y[N];
  if (fix_kernel(f, SAXPY)) return;
  fix_u32(f, 0, 2 * N);
  fix_f32(f, 1, 2.0f);
  uint64_t xd = fix_buf(f, 2, x, sizeof x);
  fix_buf(f, 3, y, sizeof y);
  dims dm = {{8, 1, 1}, {256, 1, 1}, 0};
  feat_vec mine;
  feat_init(&mine);
  int rc = fix_launch_cfg(f, &dm, threads, 0, &mine, NULL);
  CHECK(rc != 0, "%s.%s saxpy with n past the buffers fails (threads=%d)", f->corpus,
        f->compiler, threads);
  CHECK(mine.n == 0, "a failed launch adds no features (got %zu)", mine.n);
  feat_free(&mine);
  printf("\n    oob message (%s, %d threads): %s ", f->compiler, threads, f->err);
  CHECK(strstr(f->err, SAXPY) != NULL, "the out-of-bounds message names the kernel: %s", f->err);
  /* The faulting instruction: the first global load. */
  uint32_t line = 0;
  for (uint32_t i = 0; i < f->k->ninsns && !line; i++)
    if (f->k->insns[i].op == PTX_OP_LD && f->k->insns[i].space == PTX_SP_GLOBAL)
      line = f->k->insns[i].line;
  char lbuf[32];
  snprintf(lbuf, sizeof lbuf, "%u", line);
  CHECK(line && strstr(f->err, lbuf), "the message names PTX line %u: %s", line, f->err);
  if (threads == 1) {
    /* With one thread CTAs run in order: the first fault is thread 1000
       (CTA 3, thread 232) reading x[1000], just past the x allocation. */
    char abuf[64], abuf2[64];
    snprintf(abuf, sizeof abuf, "%" PRIx64, xd + 4 * N);
    snprintf(abuf2, sizeof abuf2, "%" PRIX64, xd + 4 * N);
    CHECK(strstr(f->err, abuf) || strstr(f->err, abuf2),
          "the message names address 0x%s: %s", abuf, f->err);
    CHECK(strstr(f->err, "232") != NULL, "the message names thread 232: %s", f->err);
  }
  feat_set(fv, "failed", rc != 0);
}

static void test_saxpy_out_of_bounds(void) { for_each_compiler("saxpy", body_saxpy_oob); }

/* ---------------------------------------------------------- reductions -- */

static void body_reduce_shared(kfix *f, int threads, feat_vec *fv) {
  enum { N = 1000, BLOCK = 256, GRID = 4 };
  static float in[N], want[GRID], got[GRID];
  for (int i = 0; i < N; i++) in[i] = (float)((i * 37) % 101) * 0.37f - 11.1f;
  for (int b = 0; b < GRID; b++) {
    float buf[BLOCK];
    for (int t = 0; t < BLOCK; t++) {
      int i = b * BLOCK + t;
      buf[t] = i < N ? in[i] : 0.0f;
    }
    for (int s = BLOCK / 2; s > 0; s >>= 1)
      for (int t = 0; t < s; t++) buf[t] += buf[t + s];
    want[b] = buf[0];
  }
  if (fix_kernel(f, "_Z13reduce_sharedPKfPfi")) return;
  fix_buf(f, 0, in, sizeof in);
  uint64_t od = fix_buf(f, 1, NULL, sizeof got);
  fix_u32(f, 2, N);
  dims dm = {{GRID, 1, 1}, {BLOCK, 1, 1}, 0};
  if (fix_launch(f, &dm, threads, fv)) return;
  fix_get(f, got, od, sizeof got);
  WORDS_EQ(f, "per-block tree sums (same order as the kernel)", got, want, GRID);
  /* bar.sync once before the loop and once per halving step (8). */
  FEAT_EQ(f, fv, "ctrl.barriers", GRID * (BLOCK / 32) * 9);
  /* Stores: buf[tid] once, then buf[tid] per active thread per step
     (128+64+...+1 = 255); loads: two per active thread per step, and
     thread 0's final buf[0]. */
  FEAT_EQ(f, fv, "class.st_shared", GRID * (BLOCK + 255));
  FEAT_EQ(f, fv, "class.ld_shared", GRID * (2 * 255 + 1));
  FEAT_EQ(f, fv, "class.st_global", GRID);
}

static void test_reduce_shared(void) { for_each_compiler("reduce_shared", body_reduce_shared); }

static void body_reduce_shuffle(kfix *f, int threads, feat_vec *fv) {
  enum { N = 3000, BLOCK = 128, GRID = 4 };
  static int32_t in[N];
  int32_t want = 0, got = 0;
  for (int i = 0; i < N; i++) {
    in[i] = (int32_t)((i * 7919) % 1000) - 500;
    want += in[i];
  }
  if (fix_kernel(f, "_Z14reduce_shufflePKiPii")) return;
  fix_buf(f, 0, in, sizeof in);
  uint64_t od = fix_buf(f, 1, NULL, 4);
  fix_u32(f, 2, N);
  dims dm = {{GRID, 1, 1}, {BLOCK, 1, 1}, 0};
  if (fix_launch(f, &dm, threads, fv)) return;
  fix_get(f, &got, od, 4);
  WORDS_EQ(f, "sum of all elements", &got, &want, 1);
  /* Five shfl.sync.down per thread, one atomic add per warp. */
  FEAT_EQ(f, fv, "class.warp", GRID * BLOCK * 5);
  FEAT_EQ(f, fv, "class.atomic_global", GRID * BLOCK / 32);
  FEAT_EQ(f, fv, "class.ld_global", N);
}

static void test_reduce_shuffle(void) { for_each_compiler("reduce_shuffle", body_reduce_shuffle); }

/* ----------------------------------------------------------- histogram -- */

static void body_histogram(kfix *f, int threads, feat_vec *fv) {
  enum { N = 10000, BLOCK = 128, GRID = 8 };
  static unsigned char data[N];
  uint32_t want[256] = {0}, got[256];
  uint64_t s = 7;
  for (int i = 0; i < N; i++) {
    /* skewed: low bins are common, so some blocks leave bins empty */
    uint64_t r = rng_next(&s);
    data[i] = (unsigned char)((r & 1) ? (r >> 8) % 40 : (r >> 8) & 255);
    want[data[i]]++;
  }
  /* One global atomic per block and non-empty bin of that block. */
  unsigned global_atomics = 0;
  for (int b = 0; b < GRID; b++) {
    int seen[256] = {0};
    for (int t = 0; t < BLOCK; t++)
      for (int i = b * BLOCK + t; i < N; i += GRID * BLOCK) seen[data[i]] = 1;
    for (int k = 0; k < 256; k++) global_atomics += (unsigned)seen[k];
  }
  if (fix_kernel(f, "_Z12histogram256PKhiPj")) return;
  fix_buf(f, 0, data, sizeof data);
  fix_u32(f, 1, N);
  uint64_t bd = fix_buf(f, 2, NULL, sizeof got);
  dims dm = {{GRID, 1, 1}, {BLOCK, 1, 1}, 0};
  if (fix_launch(f, &dm, threads, fv)) return;
  fix_get(f, got, bd, sizeof got);
  WORDS_EQ(f, "256-bin histogram", got, want, 256);
  FEAT_EQ(f, fv, "class.atomic_shared", N);
  FEAT_EQ(f, fv, "class.atomic_global", global_atomics);
  FEAT_EQ(f, fv, "mem.global_atomic_bytes", 4.0 * global_atomics);
  FEAT_EQ(f, fv, "ctrl.barriers", GRID * (BLOCK / 32) * 2);
}

static void test_histogram(void) { for_each_compiler("histogram", body_histogram); }

/* -------------------------------------------------------- packed_histo -- */

/* packed_histo.cu: Parboil histo's byte-packed counts, overflow words,
   16-bit halves and uchar4/ushort4 accesses, and stores of bytes and
   halves whose neighbours other CTAs store.  The 2-thread runs repeat the
   launches (a lost byte would show in some runs only); each run's output
   must be the C reference's. */
enum { PH_PACK = 1024, PH_WIDE = 1024, PH_BINS = PH_PACK + PH_WIDE };

static void body_packed_histo(kfix *f, int threads, feat_vec *fv) {
  enum { N = 40000, BLOCK = 256, GRID = 6, SCATTER = 64 * 256, ROUNDS = 4 };
  static uint32_t v[N];
  uint32_t cnt[PH_BINS] = {0};
  uint8_t want[PH_BINS], got[PH_BINS];
  uint64_t s = 34;
  for (int i = 0; i < N; i++) {
    /* bin 5 wraps its byte about 8 times a CTA; bins 0-3 (one word) wrap
       once each, so carries cascade; 10 % beyond the packed bins, 5 % on
       one 16-bit half (saturated in the output) */
    uint64_t r = rng_next(&s), k = r % 100;
    uint32_t x = k < 30 ? 5u : k < 50 ? (uint32_t)(k % 4) : k < 55 ? PH_PACK + 1u
                 : k < 60 ? PH_PACK + (uint32_t)((r >> 20) % PH_WIDE)
                          : (uint32_t)((r >> 20) % PH_PACK);
    v[i] = x;
    cnt[x]++;
  }
  for (int b = 0; b < PH_BINS; b++) want[b] = (uint8_t)(cnt[b] > 255 ? 255 : cnt[b]);
  static uint8_t bw[SCATTER], bg[SCATTER];
  static uint16_t hw[SCATTER], hg[SCATTER];
  for (int i = 0; i < SCATTER; i++) {
    bw[i] = (uint8_t)(i * 7 + i % 64);
    hw[i] = (uint16_t)(i * 3 + 1);
  }
  int rounds = threads > 1 ? ROUNDS : 1;
  for (int round = 0; round < rounds; round++) {
    feat_vec *rv = round ? NULL : fv;
    if (fix_kernel(f, "_Z12packed_countPKjiPjS1_S1_")) return;
    fix_buf(f, 0, v, sizeof v);
    fix_u32(f, 1, N);
    uint64_t sub = fix_buf(f, 2, NULL, (size_t)GRID * PH_PACK);
    uint64_t ovf = fix_buf(f, 3, NULL, PH_PACK * 4);
    uint64_t wide = fix_buf(f, 4, NULL, PH_WIDE * 2);
    dims dm = {{GRID, 1, 1}, {BLOCK, 1, 1}, 0};
    feat_vec tmp;
    feat_init(&tmp);
    if (fix_launch_tagged(f, &dm, threads, rv ? rv : &tmp, "count", NULL)) return;
    if (fix_kernel(f, "_Z12packed_finalPKjiPjS1_P6uchar4")) return;
    fix_u64(f, 0, sub);
    fix_u32(f, 1, GRID);
    fix_u64(f, 2, ovf);
    fix_u64(f, 3, wide);
    uint64_t out = fix_buf(f, 4, NULL, PH_BINS);
    dims df = {{PH_BINS / 4 / 64, 1, 1}, {64, 1, 1}, 0};
    if (fix_launch_tagged(f, &df, threads, rv ? rv : &tmp, "final", NULL)) return;
    fix_get(f, got, out, sizeof got);
    char what[160];
    snprintf(what, sizeof what,
             "byte-packed counts plus overflow words, 16-bit halves, saturated (threads=%d, "
             "run %d)", threads, round + 1);
    check_words(f, what, got, want, PH_BINS, 1, __LINE__);
    uint32_t left[PH_PACK] = {0}, zero[PH_PACK] = {0};
    fix_get(f, left, ovf, PH_PACK * 4);
    fix_get(f, left + PH_PACK / 2, wide, PH_WIDE * 2);
    WORDS_EQ(f, "packed_final cleared the overflow words (uint4) and the halves (ushort4)",
             left, zero, PH_PACK);
    if (fix_kernel(f, "_Z12byte_scatterPhPti")) return;
    uint64_t bd = fix_buf(f, 0, NULL, SCATTER), hd = fix_buf(f, 1, NULL, SCATTER * 2);
    fix_u32(f, 2, SCATTER);
    dims ds = {{64, 1, 1}, {256, 1, 1}, 0};
    if (fix_launch_tagged(f, &ds, threads, rv ? rv : &tmp, "scatter", NULL)) return;
    feat_free(&tmp);
    fix_get(f, bg, bd, sizeof bg);
    fix_get(f, hg, hd, sizeof hg);
    check_words(f, "bytes stored by 64 CTAs, each byte's neighbours by other CTAs", bg, bw,
                SCATTER, 1, __LINE__);
    check_words(f, "16-bit values stored by 64 CTAs, each one's neighbours by other CTAs", hg, hw,
                SCATTER, 2, __LINE__);
  }
  /* one shared atomic per packed value, one read and one global atomic
     per wide value (HALF_CAP is never reached) */
  uint32_t wide_n = 0;
  for (int b = PH_PACK; b < PH_BINS; b++) wide_n += cnt[b];
  FEAT_EQ(f, fv, "count/class.atomic_shared", N - wide_n);
}

static void test_packed_histo(void) { for_each_compiler("packed_histo", body_packed_histo); }

/* ------------------------------------------------------------- matmul -- */

#define MATMUL "_Z12matmul_tiledPKfS0_Pfi"

static void matmul_ref(const float *A, const float *B, float *C, int n) {
  int tiles = (n + 15) / 16;
  for (int row = 0; row < n; row++)
    for (int col = 0; col < n; col++) {
      float acc = 0.0f;
      for (int t = 0; t < tiles; t++)
        for (int k = 0; k < 16; k++) {
          int c = t * 16 + k;
          float a = c < n ? A[row * n + c] : 0.0f;
          float b = c < n ? B[c * n + col] : 0.0f;
          acc = fmaf(a, b, acc);
        }
      C[row * n + col] = acc;
    }
}

static void matmul_setup(kfix *f, int n, float **A, float **B, uint64_t *cd) {
  *A = malloc(sizeof(float) * (size_t)n * n);
  *B = malloc(sizeof(float) * (size_t)n * n);
  uint64_t s = 3;
  for (int i = 0; i < n * n; i++) {
    (*A)[i] = (float)(rng_next(&s) >> 40) / 16777216.0f - 0.5f;
    (*B)[i] = (float)(rng_next(&s) >> 40) / 16777216.0f * 2.0f;
  }
  fix_buf(f, 0, *A, sizeof(float) * (size_t)n * n);
  fix_buf(f, 1, *B, sizeof(float) * (size_t)n * n);
  *cd = fix_buf(f, 2, NULL, sizeof(float) * (size_t)n * n);
  fix_u32(f, 3, (uint32_t)n);
}

static void body_matmul(kfix *f, int threads, feat_vec *fv) {
  enum { N = 40, T = 3 }; /* 40 is not a multiple of the tile: padding matters */
  if (fix_kernel(f, MATMUL)) return;
  float *A, *B;
  uint64_t cd;
  matmul_setup(f, N, &A, &B, &cd);
  static float want[N * N], got[N * N];
  matmul_ref(A, B, want, N);
  dims dm = {{T, T, 1}, {16, 16, 1}, 0};
  if (!fix_launch(f, &dm, threads, fv)) {
    fix_get(f, got, cd, sizeof got);
    WORDS_EQ(f, "C = A*B (fma per k, tile order)", got, want, N * N);
    /* Two barriers per tile per warp. */
    FEAT_EQ(f, fv, "ctrl.barriers", T * T * 8 * T * 2);
    /* Per thread and tile: two 4-byte shared stores and 32 4-byte loads. */
    FEAT_EQ(f, fv, "mem.shared_bytes", (double)T * T * 256 * T * (2 + 32) * 4);
    FEAT_EQ(f, fv, "launch.block_y", 16);
    FEAT_EQ(f, fv, "launch.grid_y", T);
  }
  free(A);
  free(B);
}

static void test_matmul(void) { for_each_compiler("matmul_tiled", body_matmul); }

/* ---------------------------------------------------------- transpose -- */

static size_t distinct_sectors(uint64_t *addr, size_t n) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    int dup = 0;
    for (size_t j = 0; j < i; j++)
      if (addr[j] / 32 == addr[i] / 32) dup = 1;
    k += !dup;
  }
  return k;
}

static void body_transpose(kfix *f, int threads, feat_vec *fv) {
  enum { ROWS = 50, COLS = 70, GX = 3, GY = 2 };
  static float in[ROWS * COLS], want[ROWS * COLS], got[ROWS * COLS];
  for (int i = 0; i < ROWS * COLS; i++) in[i] = (float)i + 0.5f;
  for (int y = 0; y < ROWS; y++)
    for (int x = 0; x < COLS; x++) want[x * ROWS + y] = in[y * COLS + x];
  const char *names[2] = {"_Z15transpose_naivePKfPfii", "_Z16transpose_sharedPKfPfii"};
  for (int v = 0; v < 2; v++) {
    if (fix_kernel(f, names[v])) return;
    uint64_t id = fix_buf(f, 0, in, sizeof in);
    uint64_t od = fix_buf(f, 1, NULL, sizeof got);
    fix_u32(f, 2, ROWS);
    fix_u32(f, 3, COLS);
    dims dm = {{GX, GY, 1}, {32, 8, 1}, 0};
    feat_vec one;
    feat_init(&one);
    if (fix_launch_tagged(f, &dm, threads, fv, v ? "shared" : "naive", &one)) {
      feat_free(&one);
      return;
    }
    fix_get(f, got, od, sizeof got);
    WORDS_EQ(f, "out = in^T", got, want, ROWS * COLS);
    /* Sectors per warp-level access: a warp is one threadIdx.y row of 32
       lanes; its active lanes are those inside the matrix. */
    double sectors = 0;
    for (int by = 0; by < GY; by++)
      for (int bx = 0; bx < GX; bx++)
        for (int ty = 0; ty < 8; ty++)
          for (int j = 0; j < 32; j += 8) {
            uint64_t ld[32], st[32];
            size_t nl = 0, ns = 0;
            for (int tx = 0; tx < 32; tx++) {
              if (v == 0) {
                int x = bx * 32 + tx, y = by * 32 + ty + j;
                if (x < COLS && y < ROWS) {
                  ld[nl++] = id + 4u * (uint64_t)(y * COLS + x);
                  st[ns++] = od + 4u * (uint64_t)(x * ROWS + y);
                }
              } else {
                int x = bx * 32 + tx, y = by * 32 + ty + j;
                if (x < COLS && y < ROWS) ld[nl++] = id + 4u * (uint64_t)(y * COLS + x);
                int x2 = by * 32 + tx, y2 = bx * 32 + ty + j;
                if (x2 < ROWS && y2 < COLS) st[ns++] = od + 4u * (uint64_t)(y2 * ROWS + x2);
              }
            }
            sectors += (double)distinct_sectors(ld, nl) + (double)distinct_sectors(st, ns);
          }
    FEAT_EQ(f, &one, "mem.global_sectors", sectors);
    FEAT_EQ(f, &one, "mem.global_bytes", 2.0 * 4 * ROWS * COLS);
    if (v == 1) {
      /* The 33-word row stride puts a warp's column reads in 32 banks. */
      FEAT_EQ(f, &one, "mem.shared_bank_replays", 0);
      FEAT_EQ(f, &one, "mem.shared_bytes", 2.0 * 4 * ROWS * COLS);
    }
    feat_free(&one);
  }
}

static void test_transpose(void) { for_each_compiler("transpose", body_transpose); }

/* ---------------------------------------------------------------- scan -- */

static void body_scan(kfix *f, int threads, feat_vec *fv) {
  enum { N = 1000, BLOCK = 256, GRID = 4 };
  static int32_t in[N], want[N], got[N];
  for (int i = 0; i < N; i++) in[i] = (i * 37) % 101 - 50;
  for (int i = 0; i < N; i++) want[i] = (i % BLOCK ? want[i - 1] : 0) + in[i];
  if (fix_kernel(f, "_Z14scan_inclusivePKiPii")) return;
  fix_buf(f, 0, in, sizeof in);
  uint64_t od = fix_buf(f, 1, NULL, sizeof got);
  fix_u32(f, 2, N);
  dims dm = {{GRID, 1, 1}, {BLOCK, 1, 1}, 0};
  if (fix_launch(f, &dm, threads, fv)) return;
  fix_get(f, got, od, sizeof got);
  WORDS_EQ(f, "per-block inclusive prefix sums", got, want, N);
  /* One barrier after the fill and one per doubling step (8). */
  FEAT_EQ(f, fv, "ctrl.barriers", GRID * (BLOCK / 32) * 9);
}

static void test_scan(void) { for_each_compiler("scan", body_scan); }

/* ------------------------------------------------------------ branches -- */

static void body_branches(kfix *f, int threads, feat_vec *fv) {
  enum { N = 1000, BLOCK = 256, GRID = 4, NC = 500, NS = 700 };
  static int32_t in[N], want[N], got[N];
  uint64_t s = 11;
  for (int i = 0; i < N; i++) {
    in[i] = (int32_t)(rng_next(&s) % 2000001) - 1000000;
    int lane = i & 31;
    int v = in[i];
    want[i] = (lane & 1) ? v * 3 + 1 : lane < 16 ? v / 2 : -v;
  }
  dims dm = {{GRID, 1, 1}, {BLOCK, 1, 1}, 0};
  if (fix_kernel(f, "_Z13lane_branchesPKiPii")) return;
  fix_buf(f, 0, in, sizeof in);
  uint64_t od = fix_buf(f, 1, NULL, sizeof got);
  fix_u32(f, 2, N);
  feat_vec one;
  feat_init(&one);
  if (!fix_launch_tagged(f, &dm, threads, fv, "lane", &one)) {
    fix_get(f, got, od, sizeof got);
    WORDS_EQ(f, "lane-parity branches", got, want, N);
    /* Each of the 32 warps holding elements splits on lane parity. */
    double dv = feat_get(&one, "ctrl.divergent_branches", 0);
    CHECK(dv >= 32, "%s.%s lane_branches: at least 32 divergent warp branches (got %g)",
          f->corpus, f->compiler, dv);
    double r = feat_get(&one, "ctrl.active_lane_ratio", NAN);
    CHECK(r < 1.0 && r > 0.2, "%s.%s lane_branches: active lane ratio below 1 (got %g)",
          f->corpus, f->compiler, r);
  }
  feat_free(&one);

  /* Collatz steps: lane-dependent loop trip counts. */
  static uint32_t cin[NC], csteps[NC], cwant[NC];
  uint64_t total_trips = 0;
  for (int i = 0; i < NC; i++) {
    cin[i] = (uint32_t)(i * 13 + 1);
    uint32_t v = cin[i], k = 0;
    while (v > 1 && k < 1000) {
      v = (v & 1) ? 3 * v + 1 : v >> 1;
      k++;
    }
    cwant[i] = k;
    total_trips += k;
  }
  if (fix_kernel(f, "_Z13collatz_stepsPKjPji")) return;
  fix_buf(f, 0, cin, sizeof cin);
  od = fix_buf(f, 1, NULL, sizeof csteps);
  fix_u32(f, 2, NC);
  dims dc = {{2, 1, 1}, {256, 1, 1}, 0};
  feat_init(&one);
  if (!fix_launch_tagged(f, &dc, threads, fv, "collatz", &one)) {
    fix_get(f, csteps, od, sizeof csteps);
    WORDS_EQ(f, "Collatz step counts", csteps, cwant, NC);
    double warp_insns = feat_get(&one, "ctrl.warp_insns", 0);
    double r = feat_get(&one, "ctrl.active_lane_ratio", NAN);
    CHECK(r < 0.9, "%s.%s collatz: loops of unequal trip count leave lanes idle (ratio %g)",
          f->corpus, f->compiler, r);
    CHECK(warp_insns > (double)total_trips / 32,
          "%s.%s collatz: warp issues exceed the trips spread over full warps", f->corpus,
          f->compiler);
  }
  feat_free(&one);

  /* switch on the input: six float operations and a default. */
  static int32_t op[NS];
  static float a[NS], b[NS], sw[NS], swant[NS];
  for (int i = 0; i < NS; i++) {
    op[i] = i % 7;
    a[i] = (float)(i % 50) * 0.75f - 10.0f;
    b[i] = (float)(i % 23) * 0.5f + 0.25f;
    float r;
    switch (op[i]) {
      case 0: r = a[i] + b[i]; break;
      case 1: r = a[i] - b[i]; break;
      case 2: r = a[i] * b[i]; break;
      case 3: r = a[i] / b[i]; break;
      case 4: r = fmaxf(a[i], b[i]); break;
      case 5: r = fminf(a[i], b[i]); break;
      default: r = 0.0f; break;
    }
    swant[i] = r;
  }
  if (fix_kernel(f, "_Z9switch_opPKiPKfS2_Pfi")) return;
  fix_buf(f, 0, op, sizeof op);
  fix_buf(f, 1, a, sizeof a);
  fix_buf(f, 2, b, sizeof b);
  od = fix_buf(f, 3, NULL, sizeof sw);
  fix_u32(f, 4, NS);
  dims ds = {{3, 1, 1}, {256, 1, 1}, 0};
  feat_init(&one);
  if (!fix_launch_tagged(f, &ds, threads, fv, "switch", &one)) {
    fix_get(f, sw, od, sizeof sw);
    WORDS_EQ(f, "switch results (+ - * / max min)", sw, swant, NS);
    /* clang lowers the switch to a brx.idx jump table, reached by every
       thread whose case is 0..5 (6 of each 7 of the NS threads) */
    double brx = feat_get(&one, "op.brx.idx", 0);
    if (!strcmp(f->compiler, "clang") || brx > 0)
      CHECK(brx == NS / 7 * 6, "%s.%s switch_op: brx.idx runs once per thread with case 0..5 "
            "(%d, got %g)", f->corpus, f->compiler, NS / 7 * 6, brx);
  }
  feat_free(&one);
}

static void test_branches(void) { for_each_compiler("branches", body_branches); }

/* -------------------------------------------------------- device calls -- */

static void body_calls(kfix *f, int threads, feat_vec *fv) {
  enum { N = 300 };
  static float x[N], y[N], want[N], got[N];
  for (int i = 0; i < N; i++) {
    x[i] = (float)i * 0.01f - 1.0f;
    y[i] = (float)(i % 9);
  }
  for (int i = 0; i < N; i++) {
    int j = i - 1 < 0 ? 0 : (i - 1 > N - 1 ? N - 1 : i - 1);
    float v = x[j];
    float p = fmaf(fmaf(0.25f, v, 0.5f), v, 1.0f);
    want[i] = y[i] + p;
  }
  if (fix_kernel(f, "_Z5callsPKfPfi")) return;
  fix_buf(f, 0, x, sizeof x);
  uint64_t yd = fix_buf(f, 1, y, sizeof y);
  fix_u32(f, 2, N);
  dims dm = {{2, 1, 1}, {256, 1, 1}, 0};
  if (fix_launch(f, &dm, threads, fv)) return;
  fix_get(f, got, yd, sizeof got);
  WORDS_EQ(f, "y += poly3(x[clamp(i-1)])", got, want, N);
  /* clamp_index and accumulate from the kernel, poly3 from accumulate. */
  FEAT_EQ(f, fv, "op.call.uni", 3 * N);
  FEAT_EQ(f, fv, "op.fma.rn.f32", 2 * N);
}

static void test_device_calls(void) { for_each_compiler("device_calls", body_calls); }

/* ---------------------------------------------------------------- fp64 -- */

static void body_fp64(kfix *f, int threads, feat_vec *fv) {
  enum { N = 256, ND = 1000, DB = 64 };
  static double x[N], y[N];
  for (int i = 0; i < N; i++) x[i] = -4.0 + i * (8.0 / N) + 0.013;
  if (fix_kernel(f, "_Z9fp64_mathPKdPdi")) return;
  fix_buf(f, 0, x, sizeof x);
  uint64_t yd = fix_buf(f, 1, NULL, sizeof y);
  fix_u32(f, 2, N);
  dims dm = {{1, 1, 1}, {N, 1, 1}, 0};
  if (fix_launch_tagged(f, &dm, threads, fv, "math", NULL)) return;
  fix_get(f, y, yd, sizeof y);
  /* libdevice's sin/exp and the host's libm are different ~1-ulp
     implementations and the kernel's fma contraction moves the roundings:
     allow 1e-14 of the magnitude of the terms (about 45 ulp; cancellation
     between the terms makes a relative bound on the result meaningless). */
  int bad = 0, first = -1;
  for (int i = 0; i < N; i++) {
    double v = x[i];
    double r = sqrt(fabs(v)) + sin(v) * exp(-v * v);
    double q = v / (1.0 + v * v);
    double want = fma(r, 0.5, q);
    double scale = fabs(r) * 0.5 + fabs(q) + 1e-300;
    if (!(fabs(y[i] - want) <= 1e-14 * scale)) {
      bad++;
      if (first < 0) first = i;
    }
  }
  CHECK(bad == 0, "%s.%s fp64_math within 1e-14 of the term magnitude (%d bad, first %d: %.17g "
        "vs x=%.17g)", f->corpus, f->compiler, bad, first, first >= 0 ? y[first] : 0.0,
        first >= 0 ? x[first] : 0.0);

  static double a[ND], b[ND], dot[DB], dwant[DB];
  for (int i = 0; i < ND; i++) {
    a[i] = 1.0 / (i + 1);
    b[i] = (double)(i % 17) - 8.5;
  }
  for (int t = 0; t < DB; t++) {
    double s = 0.0;
    for (int i = t; i < ND; i += DB) s = fma(a[i], b[i], s);
    dwant[t] = s;
  }
  if (fix_kernel(f, "_Z8fp64_dotPKdS0_Pdi")) return;
  fix_buf(f, 0, a, sizeof a);
  fix_buf(f, 1, b, sizeof b);
  uint64_t od = fix_buf(f, 2, NULL, sizeof dot);
  fix_u32(f, 3, ND);
  dims dd = {{1, 1, 1}, {DB, 1, 1}, 0};
  if (fix_launch_tagged(f, &dd, threads, fv, "dot", NULL)) return;
  fix_get(f, dot, od, sizeof dot);
  WORDS_EQ(f, "strided dot products (fma.rn.f64 in order)", dot, dwant, DB);
}

static void test_fp64(void) { for_each_compiler("fp64", body_fp64); }

/* -------------------------------------------------------------- intdiv -- */

static void body_intdiv(kfix *f, int threads, feat_vec *fv) {
  enum { N = 256 };
  static int32_t a[N], b[N], q[N], r[N], wq[N], wr[N];
  static int64_t a6[N], b6[N], q6[N], r6[N], wq6[N], wr6[N];
  static const int32_t ca[] = {INT_MIN, INT_MIN, INT_MAX, INT_MAX, -7, 7, -7, 7, 0, 5,
                               INT_MIN, -1, 1, 100, -100, 13};
  static const int32_t cb[] = {-1, 1, -1, 0, 2, -2, -2, 2, 3, 0, 2, INT_MIN, INT_MAX, 7, 7,
                               INT_MIN};
  static const int64_t ca6[] = {INT64_MIN, INT64_MIN, INT64_MAX, -7, 7, -7, 0, 5,
                                INT64_MIN, -1, 1000000000000LL, -1000000000000LL};
  static const int64_t cb6[] = {-1, 1, -1, 2, -2, -2, 3, 0, 2, INT64_MIN, 7, 7};
  uint64_t s = 5;
  for (int i = 0; i < N; i++) {
    size_t nc = sizeof ca / sizeof ca[0], nc6 = sizeof ca6 / sizeof ca6[0];
    uint64_t r1 = rng_next(&s), r2 = rng_next(&s);
    a[i] = i < (int)nc ? ca[i] : (int32_t)r1;
    uint32_t sg32 = (r2 >> 60) & 1 ? 0xffffffffu : 1u;      /* negate without overflow */
    uint64_t sg64 = (r2 >> 62) & 1 ? UINT64_MAX : 1u;
    b[i] = i < (int)nc ? cb[i] : (int32_t)((uint32_t)(r2 >> (r2 & 31)) * sg32);
    a6[i] = i < (int)nc6 ? ca6[i] : (int64_t)r1;
    b6[i] = i < (int)nc6 ? cb6[i] : (int64_t)((r2 >> (r2 & 63)) * sg64);
  }
  dims dm = {{2, 1, 1}, {128, 1, 1}, 0};

  for (int i = 0; i < N; i++) {
    int32_t x = a[i], y = b[i];
    int z = y == 0 || (x == INT_MIN && y == -1);
    wq[i] = z ? 0 : x / y;
    wr[i] = z ? 0 : x % y;
  }
  if (fix_kernel(f, "_Z8intdiv32PKiS0_PiS1_i")) return;
  fix_buf(f, 0, a, sizeof a);
  fix_buf(f, 1, b, sizeof b);
  uint64_t qd = fix_buf(f, 2, NULL, sizeof q), rd = fix_buf(f, 3, NULL, sizeof r);
  fix_u32(f, 4, N);
  if (!fix_launch_tagged(f, &dm, threads, fv, "s32", NULL)) {
    fix_get(f, q, qd, sizeof q);
    fix_get(f, r, rd, sizeof r);
    WORDS_EQ(f, "s32 quotients", q, wq, N);
    WORDS_EQ(f, "s32 remainders", r, wr, N);
  }

  for (int i = 0; i < N; i++) {
    uint32_t x = (uint32_t)a[i], y = (uint32_t)b[i];
    wq[i] = (int32_t)(y ? x / y : 0u);
    wr[i] = (int32_t)(y ? x % y : 0u);
  }
  if (fix_kernel(f, "_Z6udiv32PKjS0_PjS1_i")) return;
  fix_buf(f, 0, a, sizeof a);
  fix_buf(f, 1, b, sizeof b);
  qd = fix_buf(f, 2, NULL, sizeof q);
  rd = fix_buf(f, 3, NULL, sizeof r);
  fix_u32(f, 4, N);
  if (!fix_launch_tagged(f, &dm, threads, fv, "u32", NULL)) {
    fix_get(f, q, qd, sizeof q);
    fix_get(f, r, rd, sizeof r);
    WORDS_EQ(f, "u32 quotients", q, wq, N);
    WORDS_EQ(f, "u32 remainders", r, wr, N);
  }

  for (int i = 0; i < N; i++) {
    int64_t x = a6[i], y = b6[i];
    int z = y == 0 || (x == INT64_MIN && y == -1);
    wq6[i] = z ? 0 : x / y;
    wr6[i] = z ? 0 : x % y;
  }
  if (fix_kernel(f, "_Z8intdiv64PKxS0_PxS1_i")) return;
  fix_buf(f, 0, a6, sizeof a6);
  fix_buf(f, 1, b6, sizeof b6);
  qd = fix_buf(f, 2, NULL, sizeof q6);
  rd = fix_buf(f, 3, NULL, sizeof r6);
  fix_u32(f, 4, N);
  if (!fix_launch_tagged(f, &dm, threads, fv, "s64", NULL)) {
    fix_get(f, q6, qd, sizeof q6);
    fix_get(f, r6, rd, sizeof r6);
    WORDS_EQ(f, "s64 quotients", q6, wq6, N);
    WORDS_EQ(f, "s64 remainders", r6, wr6, N);
  }

  for (int i = 0; i < N; i++) {
    uint64_t x = (uint64_t)a6[i], y = (uint64_t)b6[i];
    wq6[i] = (int64_t)(y ? x / y : 0u);
    wr6[i] = (int64_t)(y ? x % y : 0u);
  }
  if (fix_kernel(f, "_Z6udiv64PKyS0_PyS1_i")) return;
  fix_buf(f, 0, a6, sizeof a6);
  fix_buf(f, 1, b6, sizeof b6);
  qd = fix_buf(f, 2, NULL, sizeof q6);
  rd = fix_buf(f, 3, NULL, sizeof r6);
  fix_u32(f, 4, N);
  if (!fix_launch_tagged(f, &dm, threads, fv, "u64", NULL)) {
    fix_get(f, q6, qd, sizeof q6);
    fix_get(f, r6, rd, sizeof r6);
    WORDS_EQ(f, "u64 quotients", q6, wq6, N);
    WORDS_EQ(f, "u64 remainders", r6, wr6, N);
  }

  for (int i = 0; i < N; i++) {
    int32_t x = a[i];
    wq[i] = (int32_t)((uint32_t)(x / 7) + (uint32_t)(x % 10) + (uint32_t)((unsigned)x / 3u));
  }
  if (fix_kernel(f, "_Z9div_constPKiPii")) return;
  fix_buf(f, 0, a, sizeof a);
  qd = fix_buf(f, 1, NULL, sizeof q);
  fix_u32(f, 2, N);
  if (!fix_launch_tagged(f, &dm, threads, fv, "const", NULL)) {
    fix_get(f, q, qd, sizeof q);
    WORDS_EQ(f, "x/7 + x%10 + (unsigned)x/3 (multiply-high sequences)", q, wq, N);
  }
}

static void test_intdiv(void) { for_each_compiler("intdiv", body_intdiv); }

/* ----------------------------------------------------------- cvt_round -- */

/* cvt.rXi.s32.f32: round as mode says, saturate, NaN -> 0 (PTX ISA). */
static int32_t f2i_sat(float v, int mode) {
  if (isnan(v)) return 0;
  double d = v, r = mode == 0 ? nearbyint(d) : mode == 1 ? trunc(d) : mode == 2 ? floor(d)
                                                                             : ceil(d);
  if (r >= 2147483647.0) return INT32_MAX;
  if (r <= -2147483648.0) return INT32_MIN;
  return (int32_t)r;
}

/* IEEE binary32 -> binary16, round to nearest even (cvt.rn.f16.f32). */
static uint16_t f32_to_f16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u, exp = (x >> 23) & 0xffu, man = x & 0x7fffffu;
  if (exp == 0xff) return (uint16_t)(sign | 0x7c00u | (man ? 0x200u : 0));
  int e = (int)exp - 127 + 15;
  if (e >= 31) return (uint16_t)(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10) return (uint16_t)sign;
    man |= 0x800000u;
    unsigned shift = (unsigned)(14 - e);
    uint32_t h = man >> shift, rem = man & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (h & 1))) h++;
    return (uint16_t)(sign | h);
  }
  uint32_t h = ((uint32_t)e << 10) | (man >> 13), rem = man & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) h++; /* may carry into inf */
  return (uint16_t)(sign | h);
}

static float f16_to_f32(uint16_t h) {
  unsigned e = (h >> 10) & 31, m = h & 1023;
  float v = e == 0 ? ldexpf((float)m, -24) : e == 31 ? (m ? NAN : INFINITY)
                                                     : ldexpf((float)(m | 1024), (int)e - 25);
  return (h & 0x8000) ? -v : v;
}

static void body_cvt(kfix *f, int threads, feat_vec *fv) {
  enum { N = 96 };
  static float x[N];
  static int32_t o[4][N], w[4][N];
  static const float corner[] = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 0.49999997f,
                                 -0.49999997f, 1e10f, -1e10f, NAN, INFINITY, -INFINITY,
                                 2147483520.0f, 2147483648.0f, -2147483648.0f, -2147483904.0f,
                                 1e-40f, -1e-40f, -0.0f, 0.0f, 8388607.5f, -8388607.5f,
                                 16777217.0f, 3.999999f, -3.999999f};
  uint64_t s = 9;
  for (int i = 0; i < N; i++) {
    size_t nc = sizeof corner / sizeof corner[0];
    x[i] = i < (int)nc ? corner[i] : ((float)(rng_next(&s) >> 40) / 16384.0f - 512.0f);
    for (int m = 0; m < 4; m++) w[m][i] = f2i_sat(x[i], m);
  }
  dims dm = {{1, 1, 1}, {128, 1, 1}, 0};
  if (fix_kernel(f, "_Z12float_to_intPKfPiS1_S1_S1_i")) return;
  fix_buf(f, 0, x, sizeof x);
  uint64_t od[4];
  for (int m = 0; m < 4; m++) od[m] = fix_buf(f, 1 + m, NULL, sizeof o[m]);
  fix_u32(f, 5, N);
  if (!fix_launch_tagged(f, &dm, threads, fv, "f2i", NULL)) {
    const char *what[4] = {"cvt.rni.s32.f32 (nearest even, saturating, NaN->0)",
                           "cvt.rzi.s32.f32", "cvt.rmi.s32.f32", "cvt.rpi.s32.f32"};
    for (int m = 0; m < 4; m++) {
      fix_get(f, o[m], od[m], sizeof o[m]);
      WORDS_EQ(f, what[m], o[m], w[m], N);
    }
  }

  static int32_t xi[N];
  static float y[N], yw[N];
  static uint32_t u[N], uw[N];
  static const int32_t ci[] = {0, 1, -1, 16777217, -16777217, INT_MAX, INT_MIN, 33554435,
                               500, 999, 1000, 1001, 2000, -5};
  for (int i = 0; i < N; i++) {
    size_t nc = sizeof ci / sizeof ci[0];
    xi[i] = i < (int)nc ? ci[i] : (int32_t)(rng_next(&s) % 3000) - 500;
    yw[i] = (float)xi[i];
    float t = yw[i] * 0.001f;
    t = t > 1.0f ? 1.0f : t < 0.0f ? 0.0f : t;
    uw[i] = (uint32_t)truncf(t * 255.0f);
  }
  if (fix_kernel(f, "_Z12int_to_floatPKiPfPji")) return;
  fix_buf(f, 0, xi, sizeof xi);
  uint64_t yd = fix_buf(f, 1, NULL, sizeof y), ud = fix_buf(f, 2, NULL, sizeof u);
  fix_u32(f, 3, N);
  if (!fix_launch_tagged(f, &dm, threads, fv, "i2f", NULL)) {
    fix_get(f, y, yd, sizeof y);
    fix_get(f, u, ud, sizeof u);
    WORDS_EQ(f, "cvt.rn.f32.s32", y, yw, N);
    WORDS_EQ(f, "saturate(y*0.001)*255 -> cvt.rzi.u32", u, uw, N);
  }

  static float hx[N], hy[N], hyw[N];
  static uint16_t h[N], hw[N];
  static const float ch[] = {65504.0f, 65519.0f, 65520.0f, 1e6f, -1e6f, INFINITY, -INFINITY,
                             6.1035156e-05f, 6.0e-05f, 5.9604645e-08f, 2.9802322e-08f,
                             2.98023259e-08f, 1e-10f, -0.0f, 1.0009765625f, 1.00048828125f,
                             1.00146484375f, 0.1f, -2048.5f, 2049.0f};
  for (int i = 0; i < N; i++) {
    size_t nc = sizeof ch / sizeof ch[0];
    hx[i] = i < (int)nc ? ch[i] : ((float)(rng_next(&s) >> 40) / 256.0f - 32768.0f) * 1.5f;
    hw[i] = f32_to_f16(hx[i]);
    hyw[i] = f16_to_f32(hw[i]);
  }
  if (fix_kernel(f, "_Z14half_roundtripPKfPfP6__halfi")) return;
  fix_buf(f, 0, hx, sizeof hx);
  yd = fix_buf(f, 1, NULL, sizeof hy);
  uint64_t hd = fix_buf(f, 2, NULL, sizeof h);
  fix_u32(f, 3, N);
  if (!fix_launch_tagged(f, &dm, threads, fv, "half", NULL)) {
    fix_get(f, h, hd, sizeof h);
    fix_get(f, hy, yd, sizeof hy);
    WORDS_EQ(f, "cvt.rn.f16.f32 (nearest even, overflow to inf, subnormals)", h, hw, N);
    WORDS_EQ(f, "cvt.f32.f16 (exact)", hy, hyw, N);
  }
}

static void test_cvt_round(void) { for_each_compiler("cvt_round", body_cvt); }

/* ------------------------------------------------------- shared windows -- */

/* Each kernel's shared variables start at 0 of its own window: win_b's
   uint4 stores (16-aligned on a GPU) are not refused because win_a's
   20 bytes came first; a .func shared by two kernels sees one counter that
   overlaps neither kernel's own array; dynamic memory follows the static
   part; the reserved region lies past the window. */
static void body_shared_windows(kfix *f, int threads, feat_vec *fv) {
  unsigned got[64], want[64];
  dims d32 = {{1, 1, 1}, {32, 1, 1}, 0}, d64 = {{1, 1, 1}, {64, 1, 1}, 0};
  if (fix_kernel(f, "_Z5win_aPj")) return;
  uint64_t o = fix_buf(f, 0, NULL, sizeof got);
  if (fix_launch_tagged(f, &d32, threads, fv, "a", NULL)) return;
  fix_get(f, got, o, 32 * 4);
  for (unsigned t = 0; t < 32; t++) want[t] = t % 5 * 7;
  WORDS_EQ(f, "win_a's 5-word array", got, want, 32);

  if (fix_kernel(f, "_Z5win_bPj")) return;
  o = fix_buf(f, 0, NULL, sizeof got);
  if (fix_launch_tagged(f, &d32, threads, fv, "b", NULL)) return;
  fix_get(f, got, o, 32 * 4);
  for (unsigned t = 0; t < 32; t++) {
    unsigned i = 127 - t, j = i / 4, k = i % 4;
    want[t] = k == 0 ? j : k == 1 ? j + 100 : k == 2 ? 7 : 9;
  }
  WORDS_EQ(f, "win_b's array written as uint4 at offset 0", got, want, 32);

  int ig[65], iw[65];
  if (fix_kernel(f, "_Z6win_c1Pi")) return;
  o = fix_buf(f, 0, NULL, sizeof ig);
  if (fix_launch_tagged(f, &d64, threads, fv, "c1", NULL)) return;
  fix_get(f, ig, o, sizeof ig);
  for (int t = 0; t < 64; t++) iw[t] = -t;
  iw[64] = 64 * 63 / 2;
  WORDS_EQ(f, "win_c1's array and the counter bump() adds to", ig, iw, 65);
  if (fix_kernel(f, "_Z6win_c2Pi")) return;
  o = fix_buf(f, 0, NULL, sizeof ig);
  if (fix_launch_tagged(f, &d64, threads, fv, "c2", NULL)) return;
  fix_get(f, ig, o, 9 * 4);
  for (int t = 0; t < 8; t++) iw[t] = 2 * t;
  iw[8] = 1064;
  WORDS_EQ(f, "win_c2's doubles and the same counter", ig, iw, 9);

  float fg[65], fw[65];
  if (fix_kernel(f, "_Z7win_dynPf")) return;
  o = fix_buf(f, 0, NULL, sizeof fg);
  dims dd = {{1, 1, 1}, {64, 1, 1}, 64 * 4};
  if (fix_launch_tagged(f, &dd, threads, fv, "dyn", NULL)) return;
  fix_get(f, fg, o, sizeof fg);
  for (int t = 0; t < 64; t++) fw[t] = (float)(63 - t) + 1000.0f + (float)(t % 3);
  fw[64] = 0;
  WORDS_EQ(f, "dynamic shared memory after the static array, 16-aligned", fg, fw, 65);
  /* one byte more than a GPU gives is refused, naming the sizes */
  dims big = {{1, 1, 1}, {64, 1, 1}, 227 * 1024 - 15};
  emu_stats st;
  int rc = fix_launch_cfg(f, &big, threads, 0, NULL, &st);
  CHECK(rc != 0 && st.fault == EMU_FAULT_CONFIG && strstr(f->err, "232449 bytes"),
        "win_dyn with 16 + 227 KiB - 15 bytes is refused (%s)", f->err);
  dims fits = {{1, 1, 1}, {64, 1, 1}, 227 * 1024 - 16};
  rc = fix_launch_cfg(f, &fits, threads, 0, NULL, &st);
  CHECK(rc == 0, "win_dyn with 16 + 227 KiB - 16 bytes runs (%s)", f->err);

  if (fix_kernel(f, "_Z8win_resvPj")) return;
  o = fix_buf(f, 0, NULL, sizeof got);
  if (fix_launch_tagged(f, &d32, threads, fv, "resv", NULL)) return;
  fix_get(f, got, o, 35 * 4);
  for (unsigned t = 0; t < 32; t++) want[t] = t + 1;
  WORDS_EQ(f, "win_resv's array untouched by stores to the reserved region", got, want, 32);
  CHECK(got[32] >= 128 && got[32] % 16 == 0 && got[33] == got[32] + 512 && got[34] == 1024,
        "%s.%s: reserved region past the 128-byte window, 16-aligned, 1 KiB (begin %u, _1 %u, "
        "cap %u)", f->corpus, f->compiler, got[32], got[33], got[34]);
}

static void test_shared_windows(void) { for_each_compiler("shared_windows", body_shared_windows); }

/* ------------------------------------------------------------- atomics -- */

static void body_atomics(kfix *f, int threads, feat_vec *fv) {
  enum { N = 1000, BLOCK = 256, GRID = 4 };
  static int32_t v[N];
  for (int i = 0; i < N; i++) v[i] = (int32_t)((i * 7919) % 2001) - 1000;
  dims dm = {{GRID, 1, 1}, {BLOCK, 1, 1}, 0};

  /* Global variants. */
  uint32_t g[10] = {0, 0x7fffffffu, 0x80000000u, 0, 0, 0, 0, 0xffffffffu, 0, 0}, gw[10];
  float fs = 0, fsw = 0;
  double ds = 0, dsw = 0;
  memcpy(gw, g, sizeof g);
  for (int i = 0; i < N; i++) {
    uint32_t x = (uint32_t)v[i];
    gw[0] += x;
    if (v[i] < (int32_t)gw[1]) gw[1] = (uint32_t)v[i];
    if (v[i] > (int32_t)gw[2]) gw[2] = (uint32_t)v[i];
    gw[3] = gw[3] >= 1023 ? 0 : gw[3] + 1;
    gw[4] = (gw[4] == 0 || gw[4] > 1023) ? 1023 : gw[4] - 1;
    if (x > gw[5]) gw[5] = x;
    gw[6] = N;
    gw[7] &= ~(1u << (i & 31));
    gw[8] |= 1u << (i & 31);
    gw[9] ^= x;
    fsw += (float)v[i];
    dsw += (double)v[i];
  }
  if (fix_kernel(f, "_Z14atomics_globalPjPfPdPKii")) return;
  uint64_t gd = fix_buf(f, 0, g, sizeof g);
  uint64_t fd = fix_buf(f, 1, &fs, sizeof fs), dd = fix_buf(f, 2, &ds, sizeof ds);
  fix_buf(f, 3, v, sizeof v);
  fix_u32(f, 4, N);
  /* The CAS-max loop on g[5] retries when another lane or CTA changed the
     word in between; with CTAs running in parallel the number of retries
     (op.bra, op.atom.*, ...) depends on their interleaving, so this
     launch's counts stay out of the 1-vs-2-thread comparison (fv).  Its
     outputs do not depend on the order. */
  feat_vec one, unordered;
  feat_init(&one);
  feat_init(&unordered);
  int grc = fix_launch_tagged(f, &dm, threads, &unordered, "global", &one);
  feat_free(&unordered);
  if (!grc) {
    fix_get(f, g, gd, sizeof g);
    fix_get(f, &fs, fd, sizeof fs);
    fix_get(f, &ds, dd, sizeof ds);
    WORDS_EQ(f, "global add min max inc dec cas-max exch and or xor", g, gw, 10);
    WORDS_EQ(f, "global float atomicAdd (exact integer sum)", &fs, &fsw, 1);
    WORDS_EQ(f, "global double atomicAdd (exact integer sum)", &ds, &dsw, 1);
    double at = feat_get(&one, "class.atomic_global", 0);
    CHECK(at >= 12.0 * N, "%s.%s atomics_global: at least 12 atomics per element (got %g)",
          f->corpus, f->compiler, at);
  }
  feat_free(&one);

  /* Shared variants, folded into g per block. */
  uint32_t z[10] = {0};
  uint32_t sw[10] = {0};
  float sfw = 0;
  double sdw = 0;
  for (int b = 0; b < GRID; b++) {
    uint32_t sh[10] = {0, 0x7fffffffu, 0, 0, 0, 0, 0, 0, 0, 0};
    float sf = 0;
    double sd = 0;
    for (int t = 0; t < BLOCK; t++) {
      int i = b * BLOCK + t;
      if (i >= N) continue;
      uint32_t x = (uint32_t)v[i];
      sh[0] += x;
      if (v[i] < (int32_t)sh[1]) sh[1] = (uint32_t)v[i];
      if (v[i] > (int32_t)sh[2]) sh[2] = (uint32_t)v[i];
      sh[3] = sh[3] >= 1023 ? 0 : sh[3] + 1;
      sh[4] = (sh[4] == 0 || sh[4] > 1023) ? 1023 : sh[4] - 1;
      if (x > sh[5]) sh[5] = x;
      sh[6] = N;
      sh[7] &= x;
      sh[8] |= x;
      sh[9] ^= x;
      sf += (float)v[i];
      sd += (double)v[i];
    }
    for (int k = 0; k < 10; k++) sw[k] += sh[k];
    sfw += sf;
    sdw += sd;
  }
  fs = 0;
  ds = 0;
  if (fix_kernel(f, "_Z14atomics_sharedPjPfPdPKii")) return;
  gd = fix_buf(f, 0, z, sizeof z);
  fd = fix_buf(f, 1, &fs, sizeof fs);
  dd = fix_buf(f, 2, &ds, sizeof ds);
  fix_buf(f, 3, v, sizeof v);
  fix_u32(f, 4, N);
  feat_init(&one);
  if (!fix_launch_tagged(f, &dm, threads, fv, "shared", &one)) {
    fix_get(f, g, gd, sizeof g);
    fix_get(f, &fs, fd, sizeof fs);
    fix_get(f, &ds, dd, sizeof ds);
    WORDS_EQ(f, "shared atomics folded per block", g, sw, 10);
    WORDS_EQ(f, "shared float atomicAdd", &fs, &sfw, 1);
    WORDS_EQ(f, "shared double atomicAdd", &ds, &sdw, 1);
    /* Ten folds per block into g, one float and one double. */
    FEAT_EQ(f, &one, "class.atomic_global", GRID * 12);
    double as = feat_get(&one, "class.atomic_shared", 0);
    CHECK(as >= 12.0 * N, "%s.%s atomics_shared: at least 12 shared atomics per element (got %g)",
          f->corpus, f->compiler, as);
  }
  feat_free(&one);
}

static void test_atomics(void) { for_each_compiler("atomics", body_atomics); }

/* ---------------------------------------------------------- vote_match -- */

static void body_vote(kfix *f, int threads, feat_vec *fv) {
  enum { N = 100, T = 128 };
  static int32_t in[N];
  static uint32_t out[8 * N], want[8 * N];
  for (int i = 0; i < N; i++) in[i] = (i * 37) % 23 - 11 + (i % 5 == 0 ? 0x10000 * i : 0);
  int32_t vv[T];
  for (int i = 0; i < T; i++) vv[i] = i < N ? in[i] : 0;
  for (int i = 0; i < N; i++) {
    int w0 = i & ~31;
    uint32_t ballot = 0, same = 0;
    int all = 1, any = 0;
    for (int l = 0; l < 32; l++) {
      int32_t v = vv[w0 + l];
      if (v > 0) ballot |= 1u << l;
      if (v == 0) all = 0;
      if (v < 0) any = 1;
      if ((v & 7) == (vv[i] & 7)) same |= 1u << l;
    }
    uint32_t uv = (uint32_t)vv[i], rev = 0;
    for (int b = 0; b < 32; b++) rev |= ((uv >> b) & 1u) << (31 - b);
    int clz = 0;
    while (clz < 32 && !(uv & (0x80000000u >> clz))) clz++;
    unsigned sh = (unsigned)(i & 31);
    uint32_t *o = want + 8 * i;
    o[0] = ballot;
    o[1] = (uint32_t)all | ((uint32_t)any << 1);
    o[2] = 0xffffffffu;
    o[3] = same;
    o[4] = (uint32_t)__builtin_popcount(ballot);
    o[5] = (uint32_t)clz;
    o[6] = rev;
    o[7] = (uint32_t)((((uint64_t)ballot << 32) | uv) << sh >> 32);
  }
  if (fix_kernel(f, "_Z10vote_matchPKiPji")) return;
  fix_buf(f, 0, in, sizeof in);
  uint64_t od = fix_buf(f, 1, NULL, sizeof out);
  fix_u32(f, 2, N);
  dims dm = {{2, 1, 1}, {64, 1, 1}, 0};
  if (fix_launch(f, &dm, threads, fv)) return;
  fix_get(f, out, od, sizeof out);
  static const char *what[8] = {"ballot", "all|any<<1", "activemask (converged warp)",
                                "match.any on v&7", "popc", "clz", "brev", "shf.l (funnel)"};
  for (int k = 0; k < 8; k++) {
    uint32_t g[N], w[N];
    for (int i = 0; i < N; i++) {
      g[i] = out[8 * i + k];
      w[i] = want[8 * i + k];
    }
    WORDS_EQ(f, what[k], g, w, N);
  }
}

static void test_vote_match(void) { for_each_compiler("vote_match", body_vote); }

/* ----------------------------------------------------------- const_mem -- */

static void body_const(kfix *f, int threads, feat_vec *fv) {
  enum { N = 100 };
  static const float coeffs[8] = {1.0f, 0.5f, 0.25f, 0.125f, 2.0f, 4.0f, 8.0f, 16.0f};
  static float x[N], y[N], want[N];
  for (int i = 0; i < N; i++) {
    x[i] = (float)i * 0.3f - 7.0f;
    want[i] = fmaf(x[i], coeffs[i & 7], coeffs[(i >> 3) & 7]);
  }
  uint64_t sym = 0;
  size_t ssize = 0;
  int rc = emu_symbol(f->em, "calls_seen", &sym, &ssize, f->err, sizeof f->err);
  CHECK(rc == 0 && ssize == 8, "%s.%s: calls_seen is an 8-byte module variable: %s", f->corpus,
        f->compiler, f->err);
  uint64_t before = 0, after = 0;
  if (!rc) fix_get(f, &before, sym, 8);
  if (fix_kernel(f, "_Z12apply_coeffsPKfPfi")) return;
  fix_buf(f, 0, x, sizeof x);
  uint64_t yd = fix_buf(f, 1, NULL, sizeof y);
  fix_u32(f, 2, N);
  dims dm = {{1, 1, 1}, {128, 1, 1}, 0};
  if (fix_launch(f, &dm, threads, fv)) return;
  fix_get(f, y, yd, sizeof y);
  WORDS_EQ(f, "x*coeffs[i&7] + coeffs[(i>>3)&7] (initialised __constant__ table)", y, want, N);
  if (!rc) {
    fix_get(f, &after, sym, 8);
    CHECK(after - before == N, "%s.%s: the __device__ counter grew by n=%d (got %" PRIu64 ")",
          f->corpus, f->compiler, N, after - before);
  }
  FEAT_EQ(f, fv, "class.ld_const", 2 * N);
}

static void test_const_mem(void) { for_each_compiler("const_mem", body_const); }

/* -------------------------------------------------------------- printf -- */

static int cmp_lines(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sort the lines of s in place (returns s with lines reordered). */
static char *sorted_lines(char *s) {
  size_t n = 0, len = strlen(s);
  for (size_t i = 0; i < len; i++) n += s[i] == '\n';
  char **v = calloc(n + 1, sizeof *v);
  char *copy = malloc(len + 1);
  if (!v || !copy) { free(v); free(copy); return s; }
  size_t k = 0;
  for (char *p = s, *e; k < n && (e = strchr(p, '\n')); p = e + 1) {
    *e = 0;
    v[k++] = p;
  }
  qsort(v, k, sizeof *v, cmp_lines);
  copy[0] = 0;
  size_t at = 0;
  for (size_t i = 0; i < k; i++) at += (size_t)sprintf(copy + at, "%s\n", v[i]);
  memcpy(s, copy, at + 1);
  free(v);
  free(copy);
  return s;
}

static void body_printf(kfix *f, int threads, feat_vec *fv) {
  enum { N = 100, BLOCK = 32, GRID = 4 };
  static float x[N];
  for (int i = 0; i < N; i++) x[i] = (float)i * 0.5f - 3.0f;
  char want[4096] = "";
  size_t at = 0;
  for (int b = 0; b < GRID; b++)
    if (b * BLOCK < N)
      at += (size_t)snprintf(want + at, sizeof want - at, "block %d thread 0 x=%f n=%d\n", b,
                             (double)x[b * BLOCK], N);
  if (fix_kernel(f, "_Z5helloPKfi")) return;
  fix_buf(f, 0, x, sizeof x);
  fix_u32(f, 1, N);
  FILE *tf = tmpfile();
  CHECK(tf != NULL, "tmpfile() for the printf capture");
  if (!tf) return;
  emu_launch_cfg cfg;
  emu_launch_cfg_init(&cfg);
  cfg.grid[0] = GRID;
  cfg.block[0] = BLOCK;
  cfg.params = f->params;
  cfg.params_size = f->total;
  cfg.threads = threads;
  cfg.printf_out = tf;
  int rc = emu_launch(f->em, f->k->name, &cfg, fv, NULL, f->err, sizeof f->err);
  CHECK(rc == 0, "%s.%s hello launches: %s", f->corpus, f->compiler, f->err);
  fflush(tf);
  rewind(tf);
  char got[4096];
  size_t n = fread(got, 1, sizeof got - 1, tf);
  got[n] = 0;
  fclose(tf);
  sorted_lines(got);
  sorted_lines(want);
  CHECK(!strcmp(got, want), "%s.%s device printf prints one line per block:\n%s\nexpected:\n%s",
        f->corpus, f->compiler, got, want);
}

static void test_printf(void) { for_each_compiler("printf", body_printf); }

/* ------------------------------------------------------ endless kernels -- */

static const char SPIN_PTX[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry spin(.param .u64 p)\n{\n"
    "  .reg .b32 %r<3>;\n"
    "  mov.u32 %r1, 0;\n"
    "$L_top:\n"
    "  add.u32 %r1, %r1, 1;\n"
    "  bra.uni $L_top;\n"
    "  ret;\n}\n";

static void test_budget_and_timeout(void) {
  ptx_error perr;
  memset(&perr, 0, sizeof perr);
  ptx_module *m = ptx_parse(SPIN_PTX, strlen(SPIN_PTX), "spin.ptx", &perr);
  CHECK(m != NULL, "the endless kernel parses: %s", perr.msg);
  if (!m) return;
  emu_device *d = emu_device_new();
  emu_module *em = NULL;
  char err[1024] = "";
  int rc = emu_module_load(d, m, &em, err, sizeof err);
  CHECK(rc == 0, "the endless kernel loads: %s", err);
  if (!rc) {
    uint64_t p = 0;
    emu_launch_cfg cfg;
    emu_launch_cfg_init(&cfg);
    cfg.grid[0] = 2;
    cfg.block[0] = 64;
    cfg.params = &p;
    cfg.params_size = 8;
    cfg.insn_budget = 1000000;
    emu_stats st;
    memset(&st, 0, sizeof st);
    err[0] = 0;
    rc = emu_launch(em, "spin", &cfg, NULL, &st, err, sizeof err);
    CHECK(rc != 0, "an endless kernel stops at the instruction budget");
    CHECK(strstr(err, "spin") && (strstr(err, "budget") || strstr(err, "instruction")),
          "the budget message names the kernel and the budget: %s", err);
    printf("\n    budget message: %s ", err);

    cfg.insn_budget = 0;
    cfg.time_limit_s = 0.3;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    err[0] = 0;
    rc = emu_launch(em, "spin", &cfg, NULL, &st, err, sizeof err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double el = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    CHECK(rc != 0, "an endless kernel stops at the time limit");
    CHECK(el < 5.0, "the time limit of 0.3 s stops it within 5 s (took %.2f s)", el);
    CHECK(strstr(err, "spin") && (strstr(err, "time") || strstr(err, "second")),
          "the time-limit message names the kernel and the limit: %s", err);
    printf("\n    timeout message (%.2f s): %s ", el, err);
  }
  emu_module_free(em);
  emu_device_free(d);
  ptx_module_free(m);
}

/* --------------------------------------------------- parameter layout -- */

/* clang writes `.param .u64 .ptr .align 1 p`: the .align of a .ptr
   parameter is the alignment of the memory it points to (PTX ISA, kernel
   parameter attributes), not of the parameter; a .u64 parameter still sits
   at a multiple of 8.  A plain `.align 8 .b8 s[12]` does align the
   parameter itself. */
static const char LAYOUT_PTX[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry lay(.param .u64 .ptr .align 1 a, .param .u32 b,\n"
    "    .param .u64 .ptr .global .align 4 c, .param .u8 d, .param .align 8 .b8 e[12],\n"
    "    .param .f64 f)\n{\n  ret;\n}\n";

static void test_param_layout(void) {
  ptx_error perr;
  memset(&perr, 0, sizeof perr);
  ptx_module *m = ptx_parse(LAYOUT_PTX, strlen(LAYOUT_PTX), "lay.ptx", &perr);
  CHECK(m != NULL, "the layout module parses: %s", perr.msg);
  if (!m) return;
  const ptx_func *k = ptx_find_func(m, "lay");
  size_t off[6] = {0}, total = 0;
  int rc = k ? emu_param_layout(k, off, &total) : -1;
  CHECK(rc == 0, "emu_param_layout succeeds");
  static const size_t want[6] = {0, 8, 16, 24, 32, 48};
  for (int i = 0; i < 6; i++)
    CHECK(off[i] == want[i], "parameter %d of (u64 .ptr.align 1, u32, u64 .ptr.align 4, u8, "
          ".align 8 b8[12], f64) is at offset %zu (got %zu)", i, want[i], off[i]);
  CHECK(total == 56, "the argument buffer is 56 bytes (got %zu)", total);
  ptx_module_free(m);
}

/* ------------------------------------------------------------ sampling -- */

/* Largest relative difference between sampled and full counts over every
   feature of full except launch.* (exact), emu.* (how the counts were
   obtained: CTAs emulated) and those in skip; prints it. */
static double sample_diff(const char *what, const feat_vec *full, const feat_vec *smp,
                          const char *skip) {
  double worst = 0;
  const char *wname = "";
  size_t missing = 0;
  for (size_t i = 0; i < full->n; i++) {
    const char *nm = full->names[i];
    if (!strncmp(nm, "launch.", 7)) {
      CHECK(feat_get(smp, nm, NAN) == full->vals[i], "%s: sampled %s equals the full launch's",
            what, nm);
      continue;
    }
    if (!strncmp(nm, "emu.", 4) || (skip && strstr(skip, nm))) continue;
    double s = feat_get(smp, nm, NAN);
    if (isnan(s)) { missing++; continue; }
    double fv = full->vals[i];
    double d = fv == 0 ? fabs(s) : fabs(s - fv) / fabs(fv);
    if (d > worst) { worst = d; wname = nm; }
  }
  CHECK(missing == 0, "%s: the sample reports every feature of the full run (%zu missing)", what,
        missing);
  printf("\n    sampling %s: max |sampled-full|/full = %.4f%% (%s) ", what, 100 * worst, wname);
  return worst;
}

static void test_sampling(void) {
  int ran = 0;
  for (int c = 0; c < NCOMPILERS; c++) {
    kfix f;
    if (fix_open(&f, "saxpy", COMPILERS[c])) { fix_close(&f); continue; }
    enum { N = 1000000, BLOCK = 256 };
    unsigned grid = (N + BLOCK - 1) / BLOCK; /* 3907: the last CTA is partial */
    float *x = calloc(N, 4), *y = calloc(N, 4);
    if (x && y && !fix_kernel(&f, SAXPY)) {
      for (int i = 0; i < N; i++) { x[i] = (float)(i & 1023); y[i] = 1.0f; }
      fix_u32(&f, 0, N);
      fix_f32(&f, 1, 2.0f);
      fix_buf(&f, 2, x, (size_t)N * 4);
      fix_buf(&f, 3, y, (size_t)N * 4);
      dims dm = {{grid, 1, 1}, {BLOCK, 1, 1}, 0};
      feat_vec full, smp, smp64;
      feat_init(&full);
      feat_init(&smp);
      feat_init(&smp64);
      emu_stats sf, ss, s64;
      memset(&sf, 0, sizeof sf);
      memset(&ss, 0, sizeof ss);
      memset(&s64, 0, sizeof s64);
      int r1 = fix_launch_cfg(&f, &dm, 2, 0, &full, &sf);
      int r2 = fix_launch_cfg(&f, &dm, 2, 256, &smp, &ss);
      int r3 = fix_launch_cfg(&f, &dm, 2, 64, &smp64, &s64);
      CHECK(r1 == 0 && r2 == 0 && r3 == 0, "saxpy.%s 1M: full and sampled launches run: %s",
            f.compiler, f.err);
      if (!r1 && !r2 && !r3) {
        CHECK(!sf.sampled && sf.ctas_run == grid, "a full launch runs every CTA");
        CHECK(ss.sampled && ss.ctas_run <= 256 && ss.ctas_run > 0 && ss.ctas_total == grid,
              "a sampled launch runs at most 256 of %u CTAs (ran %" PRIu64 ")", grid,
              ss.ctas_run);
        char what[128];
        snprintf(what, sizeof what, "saxpy.%s n=1M, %" PRIu64 "/%u CTAs", f.compiler,
                 ss.ctas_run, grid);
        double d = sample_diff(what, &full, &smp, NULL);
        CHECK(d < 0.01, "%s: sampled counts within 1%% of the full counts (%.4f%%)", what,
              100 * d);
        /* With 64 CTAs: the sample takes each stratum's middle CTA, so the
           partial last CTA (64 of 256 threads in bounds) is not scaled like
           a full one; including it used to put the estimate 1.15% low. */
        snprintf(what, sizeof what, "saxpy.%s n=1M, %" PRIu64 "/%u CTAs", f.compiler,
                 s64.ctas_run, grid);
        d = sample_diff(what, &full, &smp64, NULL);
        CHECK(d < 0.01, "%s: 64-CTA sampled counts within 1%% of the full counts (%.4f%%)",
              what, 100 * d);
        FEAT_EQ(&f, &full, "mem.global_bytes", 12.0 * N);
        printf("\n    saxpy.%s n=1M full: %" PRIu64 " thread-insns in %.3f s (%.1f M/s) ",
               f.compiler, sf.thread_insns, sf.seconds,
               sf.seconds > 0 ? (double)sf.thread_insns / sf.seconds / 1e6 : 0.0);
      }
      feat_free(&full);
      feat_free(&smp);
      feat_free(&smp64);
    }
    free(x);
    free(y);
    fix_close(&f);

    if (fix_open(&f, "matmul_tiled", COMPILERS[c])) { fix_close(&f); continue; }
    if (!fix_kernel(&f, MATMUL)) {
      enum { NM = 128, TM = NM / 16 };
      float *A, *B;
      uint64_t cd;
      matmul_setup(&f, NM, &A, &B, &cd);
      dims dm = {{TM, TM, 1}, {16, 16, 1}, 0};
      feat_vec full, smp;
      feat_init(&full);
      feat_init(&smp);
      int r1 = fix_launch_cfg(&f, &dm, 2, 0, &full, NULL);
      int r2 = fix_launch_cfg(&f, &dm, 2, 16, &smp, NULL);
      CHECK(r1 == 0 && r2 == 0, "matmul.%s 128: full and sampled launches run: %s", f.compiler,
            f.err);
      if (!r1 && !r2) {
        char what[128];
        snprintf(what, sizeof what, "matmul.%s n=128, 16/64 CTAs", f.compiler);
        /* CTAs share rows of A and columns of B: scaling the sample's
           footprint by 64/16 said 2x; the extent-capped estimate is exact
           here (docs/features.md) */
        double d = sample_diff(what, &full, &smp, NULL);
        CHECK(d < 0.01, "%s: sampled counts, the footprint included, within 1%% of the full "
              "counts (%.4f%%)", what, 100 * d);
        double fpf = feat_get(&full, "mem.footprint_bytes", 0);
        double fps = feat_get(&smp, "mem.footprint_bytes", 0);
        printf("\n    matmul.%s footprint full %.0f, sampled estimate %.0f ", f.compiler, fpf,
               fps);
      }
      feat_free(&full);
      feat_free(&smp);
      free(A);
      free(B);
    }
    fix_close(&f);
    ran++;
  }
  CHECK(ran > 0, "sampling ran for at least one compiler");
}

/* Kernels whose CTAs differ (tests/kernels/triangular.cu) under adaptive
   sampling (emu.h, "Adaptive sampling") against full emulation. */
#define TRIMV "_Z5trimvPKfPfi"
#define JAGGED "_Z6jaggedPKfPfi"

/* Select kernel kname of triangular.cu with arguments (x, y, n); 0 or -1. */
static int tri_kernel(kfix *f, const char *kname, int n) {
  float *x = calloc((size_t)n, 4);
  if (!x || fix_kernel(f, kname)) {
    free(x);
    return -1;
  }
  for (int i = 0; i < n; i++) x[i] = (float)(i % 61) * 0.25f;
  fix_buf(f, 0, x, (size_t)n * 4);
  fix_buf(f, 1, x, (size_t)n * 4);
  fix_u32(f, 2, (uint32_t)n);
  free(x);
  return 0;
}

/* sample_diff for adaptive sampling, whose stopping rule watches the
   classes, sectors and replays (emu.h): an op.* count is judged against the
   larger of itself and 1 % of the thread-instructions (a one-per-thread
   prologue instruction of an unrolled loop, at 0.1 % of the instructions,
   varies with the trip count mod 4 and comes out 9 % off at 48 CTAs). */
static double adaptive_diff(const char *what, const feat_vec *full, const feat_vec *smp) {
  double tinsn = 0, worst = 0;
  const char *wname = "";
  for (size_t i = 0; i < full->n; i++)
    if (!strncmp(full->names[i], "class.", 6)) tinsn += full->vals[i];
  for (size_t i = 0; i < full->n; i++) {
    const char *nm = full->names[i];
    if (!strncmp(nm, "emu.", 4) || !strncmp(nm, "launch.", 7)) continue;
    double s = feat_get(smp, nm, NAN), fv = fabs(full->vals[i]);
    double den = !strncmp(nm, "op.", 3) && fv < 0.01 * tinsn ? 0.01 * tinsn : fv;
    double d = isnan(s) ? INFINITY : den == 0 ? fabs(s) : fabs(s - full->vals[i]) / den;
    if (d > worst) worst = d, wname = nm;
  }
  printf("\n    sampling %s: max error = %.4f%% (%s) ", what, 100 * worst, wname);
  return worst;
}

static void adaptive_case(kfix *f, const char *kname, unsigned grid, unsigned block, int n,
                          double fixed16_min) {
  if (tri_kernel(f, kname, n)) return;
  dims dm = {{grid, 1, 1}, {block, 1, 1}, 0};
  feat_vec full, au, au1, s16;
  feat_init(&full);
  feat_init(&au);
  feat_init(&au1);
  feat_init(&s16);
  emu_stats sf, sa, s1;
  int r1 = fix_launch_cfg(f, &dm, 2, 0, &full, &sf);
  int r2 = fix_launch_cfg(f, &dm, 2, EMU_SAMPLE_AUTO, &au, &sa);
  int r3 = fix_launch_cfg(f, &dm, 1, EMU_SAMPLE_AUTO, &au1, &s1);
  int r4 = fix_launch_cfg(f, &dm, 2, EMU_AUTO_MIN, &s16, NULL);
  CHECK(!r1 && !r2 && !r3 && !r4, "%s.%s: full, adaptive and 16-CTA launches run: %s", f->corpus,
        f->compiler, f->err);
  if (!r1 && !r2 && !r3 && !r4) {
    char what[160];
    snprintf(what, sizeof what, "%s.%s %s adaptive, %" PRIu64 "/%u CTAs, rse %.4f%%", f->corpus,
             f->compiler, kname, sa.ctas_run, grid, 100 * sa.sample_rse);
    CHECK(sa.sampled && sa.ctas_run > EMU_AUTO_MIN + 2 && sa.ctas_run <= EMU_AUTO_MAX + 2,
          "%s: more CTAs than the edges and the first round, at most the edges and the maximum, ran", what);
    CHECK(sa.sample_rse > 0 && (sa.sample_rse <= EMU_AUTO_RSE || sa.ctas_run == EMU_AUTO_MAX + 2),
          "%s: the precision reached is recorded and meets the target (or the maximum ran)",
          what);
    CHECK(feat_get(&au, "emu.sample_rse", NAN) == sa.sample_rse &&
              feat_get(&au, "emu.ctas_emulated", 0) == (double)sa.ctas_run,
          "%s: emu.sample_rse and emu.ctas_emulated record it", what);
    CHECK(isnan(feat_get(&full, "emu.sample_rse", NAN)), "a full launch has no emu.sample_rse");
    double d = adaptive_diff(what, &full, &au);
    CHECK(d < 0.01, "%s: adaptive counts within 1%% of the full counts (%.4f%%)", what, 100 * d);
    check_same_features(&au, &au1, "adaptive sampling on 1 and 2 threads");
    CHECK(s1.ctas_run == sa.ctas_run, "%s: the same CTAs on 1 and 2 threads", what);
    snprintf(what, sizeof what, "%s.%s %s 16 CTAs", f->corpus, f->compiler, kname);
    double d16 = adaptive_diff(what, &full, &s16);
    CHECK(d16 >= fixed16_min, "%s: the first round alone is off by %.4f%% (>= %.1f%%): the "
          "kernel needs the later rounds", what, 100 * d16, 100 * fixed16_min);
  }
  feat_free(&full);
  feat_free(&au);
  feat_free(&au1);
  feat_free(&s16);
}

static void test_sampling_adaptive(void) {
  int ran = 0;
  for (int c = 0; c < NCOMPILERS; c++) {
    kfix f;
    if (fix_open(&f, "triangular", COMPILERS[c])) { fix_close(&f); continue; }
    adaptive_case(&f, TRIMV, 1024, 32, 1024 * 32, 0);
    adaptive_case(&f, JAGGED, 4096, 32, 131072, 0.01);
    /* a grid of at most 2 x EMU_AUTO_MIN CTAs runs whole: as a full launch */
    if (!tri_kernel(&f, JAGGED, 4096)) {
      dims dm = {{2 * EMU_AUTO_MIN, 1, 1}, {32, 1, 1}, 0};
      feat_vec full, au;
      feat_init(&full);
      feat_init(&au);
      emu_stats sa;
      int r1 = fix_launch_cfg(&f, &dm, 2, 0, &full, NULL);
      int r2 = fix_launch_cfg(&f, &dm, 2, EMU_SAMPLE_AUTO, &au, &sa);
      CHECK(!r1 && !r2, "jagged.%s small grid: both launches run: %s", f.compiler, f.err);
      if (!r1 && !r2) {
        CHECK(!sa.sampled && sa.ctas_run == 2 * EMU_AUTO_MIN && sa.sample_rse == 0,
              "a grid of 2 x EMU_AUTO_MIN CTAs runs every CTA, unscaled");
        check_same_features(&full, &au, "adaptive sampling of a small grid and full emulation");
      }
      feat_free(&full);
      feat_free(&au);
    }
    fix_close(&f);
    ran++;
  }
  CHECK(ran > 0, "adaptive sampling ran for at least one compiler");
}

/* ---------------------------------------------------------------------- */

/* ------------------------------------------------------ race check -- */

/* The correct kernels of the corpus again, under the race check: every
   launch finds no race (emu_fix.c asserts it), and the outputs and counts
   are what they are without the check -- barriers in reductions, tiles
   and scans, warp-synchronous steps, shared and global atomics, byte and
   16-bit stores whose neighbours other CTAs store, 2-D shared windows. */
static void test_racecheck_correct_kernels(void) {
  static const struct { const char *corpus; body_fn body; } k[] = {
      {"reduce_shared", body_reduce_shared}, {"reduce_shuffle", body_reduce_shuffle},
      {"histogram", body_histogram},         {"packed_histo", body_packed_histo},
      {"matmul_tiled", body_matmul},         {"transpose", body_transpose},
      {"scan", body_scan},                   {"branches", body_branches},
      {"device_calls", body_calls},          {"shared_windows", body_shared_windows},
      {"atomics", body_atomics},             {"vote_match", body_vote},
      {"const_mem", body_const},             {"saxpy", body_saxpy}};
  int was = fix_racecheck(FIX_RACE_CLEAN);
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) for_each_compiler(k[i].corpus, k[i].body);
  fix_racecheck(was);
}

TEST_SUITES(register_emu_kernels) {
  CU_pSuite s = tests_suite("emu_kernels");
  TEST_ADD(s, test_saxpy);
  TEST_ADD(s, test_saxpy_out_of_bounds);
  TEST_ADD(s, test_reduce_shared);
  TEST_ADD(s, test_reduce_shuffle);
  TEST_ADD(s, test_histogram);
  TEST_ADD(s, test_packed_histo);
  TEST_ADD(s, test_matmul);
  TEST_ADD(s, test_transpose);
  TEST_ADD(s, test_scan);
  TEST_ADD(s, test_branches);
  TEST_ADD(s, test_device_calls);
  TEST_ADD(s, test_fp64);
  TEST_ADD(s, test_intdiv);
  TEST_ADD(s, test_cvt_round);
  TEST_ADD(s, test_shared_windows);
  TEST_ADD(s, test_atomics);
  TEST_ADD(s, test_vote_match);
  TEST_ADD(s, test_const_mem);
  TEST_ADD(s, test_printf);
  TEST_ADD(s, test_budget_and_timeout);
  TEST_ADD(s, test_param_layout);
  TEST_ADD(s, test_sampling);
  TEST_ADD(s, test_sampling_adaptive);
  TEST_ADD(s, test_racecheck_correct_kernels);
}
