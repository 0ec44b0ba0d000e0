/*
 * emu_bench.c -- emulator throughput: thread-instructions per second on
 * three kinds of kernel, each with 1 and 2 OpenMP threads.
 *
 *   compute    256 fma.rn.f32 per thread (8 independent chains, unrolled
 *              8x, 32 trips): the ALU dispatch path, no memory traffic
 *   memory     triad a[i] = b[i] + s*c[i] over 4M floats (48 MB): address
 *              checking, coalescing/sector accounting, footprint tracking
 *   divergent  Mandelbrot escape counts (at most 256 iterations) over a
 *              512x512 grid: lane-dependent trip counts, so warps run with
 *              partial masks and the reconvergence stack works
 *   tensor     the inner loop of a tensor-core GEMM: ldmatrix.x4,
 *              ldmatrix.x2.trans and mma.sync.m16n8k16 per trip, one warp
 *              per CTA (512 CTAs, 256 trips); the target is 1 G
 *              thread-instructions/s on one thread
 *   wmma       a WMMA GEMM's inner loop: wmma.load.a / .b of row-major
 *              half tiles from global memory and wmma.mma.m16n16k16 into
 *              f32, one warp per CTA (256 CTAs, 64 trips), then wmma.store
 *   texture    tex1Dfetch of a linear float texture in a loop, as Rodinia
 *              kmeans reads its points (each thread 64 fetches of a
 *              strided element and an add)
 *   small      2,000 launches of 2 CTAs of 64 threads (the compute loop at
 *              4 trips), as Rodinia myocyte launches: what a launch costs
 *              beside its instructions; the rate is the instructions over
 *              the launches' emulation time
 *
 * The kernels are hand-written PTX, so the figures do not depend on which
 * CUDA compiler is installed.  Each configuration runs REPS times and the
 * best time is reported (the machine is shared; the best run is the least
 * disturbed one).  The target for the compute-bound and the memory-bound
 * kernels is 300 M thread-instructions per second per core; the table
 * states it next to the figure.
 *
 * usage: emu_bench [BUILD_DIR [WORD]]   (BUILD_DIR is accepted for symmetry
 * with ptx_bench and ignored; WORD runs only the kernels whose name holds
 * it, for a profile of one)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "emulator/emu.h"
#include "extractor/features.h"
#include "extractor/ptx.h"

#define REPS 3
#define TARGET_MIPS_PER_CORE 300.0
#define TARGET_MMA_MIPS 1000.0 /* the tensor-core loop, one thread */

static const char COMPUTE_PTX[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry fma_loop(.param .u64 out, .param .u32 trips)\n{\n"
    "  .reg .pred %p<2>;\n  .reg .b32 %r<8>;\n  .reg .f32 %f<12>;\n  .reg .b64 %rd<4>;\n"
    "  ld.param.u64 %rd1, [out];\n  ld.param.u32 %r1, [trips];\n"
    "  mov.u32 %r2, %ctaid.x;\n  mov.u32 %r3, %ntid.x;\n  mov.u32 %r4, %tid.x;\n"
    "  mad.lo.s32 %r5, %r2, %r3, %r4;\n  cvt.rn.f32.u32 %f9, %r5;\n"
    "  mul.f32 %f9, %f9, 0f33800000;\n"
    "  mov.f32 %f10, 0f3F7FBE77;\n"
    "  mov.f32 %f1, 0f3F800000;\n  mov.f32 %f2, 0f3F000000;\n  mov.f32 %f3, 0f3E800000;\n"
    "  mov.f32 %f4, 0f3E000000;\n  mov.f32 %f5, 0f40000000;\n  mov.f32 %f6, 0f40400000;\n"
    "  mov.f32 %f7, 0f40800000;\n  mov.f32 %f8, 0f40A00000;\n  mov.u32 %r6, 0;\n"
    "$L_loop:\n"
    "  fma.rn.f32 %f1, %f1, %f10, %f9;\n  fma.rn.f32 %f2, %f2, %f10, %f9;\n"
    "  fma.rn.f32 %f3, %f3, %f10, %f9;\n  fma.rn.f32 %f4, %f4, %f10, %f9;\n"
    "  fma.rn.f32 %f5, %f5, %f10, %f9;\n  fma.rn.f32 %f6, %f6, %f10, %f9;\n"
    "  fma.rn.f32 %f7, %f7, %f10, %f9;\n  fma.rn.f32 %f8, %f8, %f10, %f9;\n"
    "  add.s32 %r6, %r6, 1;\n  setp.lt.u32 %p1, %r6, %r1;\n  @%p1 bra $L_loop;\n"
    "  add.f32 %f1, %f1, %f2;\n  add.f32 %f3, %f3, %f4;\n  add.f32 %f5, %f5, %f6;\n"
    "  add.f32 %f7, %f7, %f8;\n  add.f32 %f1, %f1, %f3;\n  add.f32 %f5, %f5, %f7;\n"
    "  add.f32 %f1, %f1, %f5;\n"
    "  cvta.to.global.u64 %rd2, %rd1;\n  mul.wide.u32 %rd3, %r5, 4;\n"
    "  add.s64 %rd2, %rd2, %rd3;\n  st.global.f32 [%rd2], %f1;\n  ret;\n}\n";

static const char TRIAD_PTX[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry triad(.param .u64 a, .param .u64 b, .param .u64 c, .param .f32 s,"
    " .param .u32 n)\n{\n"
    "  .reg .pred %p<2>;\n  .reg .b32 %r<8>;\n  .reg .f32 %f<6>;\n  .reg .b64 %rd<12>;\n"
    "  ld.param.u64 %rd1, [a];\n  ld.param.u64 %rd2, [b];\n  ld.param.u64 %rd3, [c];\n"
    "  ld.param.f32 %f1, [s];\n  ld.param.u32 %r1, [n];\n"
    "  mov.u32 %r2, %ctaid.x;\n  mov.u32 %r3, %ntid.x;\n  mov.u32 %r4, %tid.x;\n"
    "  mad.lo.s32 %r5, %r2, %r3, %r4;\n  setp.ge.u32 %p1, %r5, %r1;\n  @%p1 bra $L_end;\n"
    "  cvta.to.global.u64 %rd4, %rd1;\n  cvta.to.global.u64 %rd5, %rd2;\n"
    "  cvta.to.global.u64 %rd6, %rd3;\n  mul.wide.u32 %rd7, %r5, 4;\n"
    "  add.s64 %rd8, %rd5, %rd7;\n  ld.global.f32 %f2, [%rd8];\n"
    "  add.s64 %rd9, %rd6, %rd7;\n  ld.global.f32 %f3, [%rd9];\n"
    "  fma.rn.f32 %f4, %f3, %f1, %f2;\n"
    "  add.s64 %rd10, %rd4, %rd7;\n  st.global.f32 [%rd10], %f4;\n"
    "$L_end:\n  ret;\n}\n";

/* z = z^2 + c until |z|^2 > 4 or 256 iterations; c from the pixel. */
static const char MANDEL_PTX[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry mandel(.param .u64 out, .param .u32 w)\n{\n"
    "  .reg .pred %p<4>;\n  .reg .b32 %r<12>;\n  .reg .f32 %f<16>;\n  .reg .b64 %rd<4>;\n"
    "  ld.param.u64 %rd1, [out];\n  ld.param.u32 %r1, [w];\n"
    "  mov.u32 %r2, %ctaid.x;\n  mov.u32 %r3, %ntid.x;\n  mov.u32 %r4, %tid.x;\n"
    "  mad.lo.s32 %r5, %r2, %r3, %r4;\n"
    "  rem.u32 %r6, %r5, %r1;\n  div.u32 %r7, %r5, %r1;\n"
    "  cvt.rn.f32.u32 %f1, %r6;\n  cvt.rn.f32.u32 %f2, %r7;\n  cvt.rn.f32.u32 %f3, %r1;\n"
    "  div.rn.f32 %f1, %f1, %f3;\n  div.rn.f32 %f2, %f2, %f3;\n"
    "  fma.rn.f32 %f1, %f1, 0f40400000, 0fC0000000;\n"   /* cx = 3x/w - 2 */
    "  fma.rn.f32 %f2, %f2, 0f40000000, 0fBF800000;\n"   /* cy = 2y/w - 1 */
    "  mov.f32 %f4, 0f00000000;\n  mov.f32 %f5, 0f00000000;\n  mov.u32 %r8, 0;\n"
    "$L_loop:\n"
    "  mul.f32 %f6, %f4, %f4;\n  mul.f32 %f7, %f5, %f5;\n  add.f32 %f8, %f6, %f7;\n"
    "  setp.gt.f32 %p1, %f8, 0f40800000;\n  @%p1 bra $L_done;\n"
    "  sub.f32 %f9, %f6, %f7;\n  mul.f32 %f10, %f4, %f5;\n"
    "  add.f32 %f4, %f9, %f1;\n  fma.rn.f32 %f5, %f10, 0f40000000, %f2;\n"
    "  add.s32 %r8, %r8, 1;\n  setp.lt.u32 %p2, %r8, 256;\n  @%p2 bra $L_loop;\n"
    "$L_done:\n"
    "  cvta.to.global.u64 %rd2, %rd1;\n  mul.wide.u32 %rd3, %r5, 4;\n"
    "  add.s64 %rd2, %rd2, %rd3;\n  st.global.u32 [%rd2], %r8;\n  ret;\n}\n";

/* The inner loop of a tensor-core GEMM, one warp per CTA: a 16x16 A tile
   and a 16x8 B tile of halves in shared memory, then per trip ldmatrix.x4
   (A), ldmatrix.x2.trans (B) and mma.sync.m16n8k16 accumulating in f32. */
static const char MMA_PTX[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry mma_loop(.param .u64 out, .param .u32 trips)\n{\n"
    "  .reg .pred %p<2>;\n  .reg .b32 %r<32>;\n  .reg .f32 %f<8>;\n  .reg .b64 %rd<4>;\n"
    "  .shared .align 16 .b8 tile[768];\n"
    "  ld.param.u64 %rd1, [out];\n  ld.param.u32 %r1, [trips];\n"
    "  mov.u32 %r2, %tid.x;\n  mov.u32 %r3, tile;\n"
    "  shl.b32 %r4, %r2, 2;\n  add.s32 %r5, %r3, %r4;\n"
    "  mad.lo.s32 %r6, %r2, 65537, 1006648320;\n" /* halves 0x3C00 + tid */
    "  st.shared.u32 [%r5], %r6;\n  st.shared.u32 [%r5+128], %r6;\n"
    "  st.shared.u32 [%r5+256], %r6;\n  st.shared.u32 [%r5+384], %r6;\n"
    "  st.shared.u32 [%r5+512], %r6;\n  st.shared.u32 [%r5+640], %r6;\n"
    "  bar.sync 0;\n"
    "  and.b32 %r7, %r2, 15;\n  shr.u32 %r8, %r2, 4;\n"
    "  shl.b32 %r9, %r7, 5;\n  shl.b32 %r10, %r8, 4;\n"
    "  add.s32 %r11, %r3, %r9;\n  add.s32 %r11, %r11, %r10;\n" /* A row l%16, half l/16 */
    "  shl.b32 %r12, %r7, 4;\n  add.s32 %r13, %r3, 512;\n  add.s32 %r13, %r13, %r12;\n"
    "  mov.f32 %f1, 0f00000000;\n  mov.f32 %f2, 0f00000000;\n"
    "  mov.f32 %f3, 0f00000000;\n  mov.f32 %f4, 0f00000000;\n  mov.u32 %r14, 0;\n"
    "$L_loop:\n"
    "  ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r20, %r21, %r22, %r23}, [%r11];\n"
    "  ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%r24, %r25}, [%r13];\n"
    "  mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1, %f2, %f3, %f4}, "
    "{%r20, %r21, %r22, %r23}, {%r24, %r25}, {%f1, %f2, %f3, %f4};\n"
    "  add.s32 %r14, %r14, 1;\n  setp.lt.u32 %p1, %r14, %r1;\n  @%p1 bra $L_loop;\n"
    "  add.f32 %f1, %f1, %f2;\n  add.f32 %f3, %f3, %f4;\n  add.f32 %f1, %f1, %f3;\n"
    "  mov.u32 %r15, %ctaid.x;\n  mad.lo.s32 %r16, %r15, 32, %r2;\n"
    "  cvta.to.global.u64 %rd2, %rd1;\n  mul.wide.u32 %rd3, %r16, 4;\n"
    "  add.s64 %rd2, %rd2, %rd3;\n  st.global.f32 [%rd2], %f1;\n  ret;\n}\n";

/* A WMMA GEMM's inner loop as nvcuda::wmma compiles it, one warp per CTA:
   per trip wmma.load.a and wmma.load.b of 16x16 row-major half tiles from
   global memory and wmma.mma into an f32 accumulator; at the end
   wmma.store.d of the CTA's 16x16 result. */
static const char WMMA_PTX[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry wmma_loop(.param .u64 out, .param .u32 trips)\n{\n"
    "  .reg .pred %p<2>;\n  .reg .b32 %r<24>;\n  .reg .f32 %f<10>;\n  .reg .b64 %rd<6>;\n"
    "  ld.param.u64 %rd1, [out];\n  ld.param.u32 %r1, [trips];\n"
    "  cvta.to.global.u64 %rd1, %rd1;\n  add.s64 %rd2, %rd1, 512;\n"
    "  mov.f32 %f1, 0f00000000;\n  mov.f32 %f2, 0f00000000;\n  mov.f32 %f3, 0f00000000;\n"
    "  mov.f32 %f4, 0f00000000;\n  mov.f32 %f5, 0f00000000;\n  mov.f32 %f6, 0f00000000;\n"
    "  mov.f32 %f7, 0f00000000;\n  mov.f32 %f8, 0f00000000;\n  mov.u32 %r2, 0;\n"
    "$L_loop:\n"
    "  wmma.load.a.sync.aligned.row.m16n16k16.global.f16 "
    "{%r4, %r5, %r6, %r7, %r8, %r9, %r10, %r11}, [%rd1];\n"
    "  wmma.load.b.sync.aligned.row.m16n16k16.global.f16 "
    "{%r12, %r13, %r14, %r15, %r16, %r17, %r18, %r19}, [%rd2];\n"
    "  wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32 {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}, "
    "{%r4, %r5, %r6, %r7, %r8, %r9, %r10, %r11}, {%r12, %r13, %r14, %r15, %r16, %r17, %r18, %r19}, "
    "{%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8};\n"
    "  add.s32 %r2, %r2, 1;\n  setp.lt.u32 %p1, %r2, %r1;\n  @%p1 bra $L_loop;\n"
    "  mov.u32 %r3, %ctaid.x;\n  mul.wide.u32 %rd3, %r3, 1024;\n"
    "  add.s64 %rd4, %rd1, %rd3;\n  add.s64 %rd4, %rd4, 1024;\n"
    "  wmma.store.d.sync.aligned.row.m16n16k16.global.f32 [%rd4], "
    "{%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8};\n  ret;\n}\n";

/* A kmeans-style read loop: 64 tex.1d fetches of element (i * 64 + k) of a
   linear float texture, summed. */
static const char TEX_PTX[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry tex_loop(.param .u64 out, .param .u64 tex)\n{\n"
    "  .reg .pred %p<2>;\n  .reg .b32 %r<10>;\n  .reg .f32 %f<8>;\n  .reg .b64 %rd<4>;\n"
    "  ld.param.u64 %rd1, [out];\n  ld.param.u64 %rd2, [tex];\n"
    "  mov.u32 %r2, %ctaid.x;\n  mov.u32 %r3, %ntid.x;\n  mov.u32 %r4, %tid.x;\n"
    "  mad.lo.s32 %r5, %r2, %r3, %r4;\n  shl.b32 %r6, %r5, 6;\n"
    "  mov.f32 %f5, 0f00000000;\n  mov.u32 %r7, 0;\n"
    "$L_loop:\n"
    "  add.s32 %r8, %r6, %r7;\n"
    "  tex.1d.v4.f32.s32 {%f1, %f2, %f3, %f4}, [%rd2, {%r8}];\n"
    "  add.f32 %f5, %f5, %f1;\n"
    "  add.s32 %r7, %r7, 1;\n  setp.lt.u32 %p1, %r7, 64;\n  @%p1 bra $L_loop;\n"
    "  cvta.to.global.u64 %rd1, %rd1;\n  mul.wide.u32 %rd3, %r5, 4;\n"
    "  add.s64 %rd1, %rd1, %rd3;\n  st.global.f32 [%rd1], %f5;\n  ret;\n}\n";

typedef struct bench {
  const char *name;
  const char *ptx;
  const char *kernel;
  unsigned grid, block;
  int kind;            /* 0 compute, 1 memory, 2 divergent, 3 tensor cores,
                          4 texture, 5 small launches, 6 wmma */
} bench;

enum { FMA_TRIPS = 32, TRIAD_N = 4 << 20, MANDEL_W = 512, MMA_TRIPS = 256, TEX_CTAS = 256,
       SMALL_LAUNCHES = 2000, SMALL_TRIPS = 4, WMMA_CTAS = 256, WMMA_TRIPS = 64 };

static const bench BENCHES[] = {
    {"compute (256 fma.rn.f32/thread)", COMPUTE_PTX, "fma_loop", 1024, 256, 0},
    {"memory (triad, 4M floats)", TRIAD_PTX, "triad", TRIAD_N / 256, 256, 1},
    {"divergent (mandelbrot 512x512)", MANDEL_PTX, "mandel", MANDEL_W * MANDEL_W / 256, 256, 2},
    {"tensor (ldmatrix + mma.sync loop)", MMA_PTX, "mma_loop", 512, 32, 3},
    {"wmma (load + mma loop, global)", WMMA_PTX, "wmma_loop", WMMA_CTAS, 32, 6},
    {"texture (tex1Dfetch loop, kmeans)", TEX_PTX, "tex_loop", TEX_CTAS, 256, 4},
    {"small launches (2 CTAs x 64, 2000)", COMPUTE_PTX, "fma_loop", 2, 64, 5},
};

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One launch of b's kernel; its statistics into *st.  0, or -1 (printed). */
static int launch_once(emu_module *em, const bench *b, unsigned char *params, size_t total,
                       int threads, emu_stats *st) {
  char err[1024] = "";
  emu_launch_cfg cfg;
  emu_launch_cfg_init(&cfg);
  cfg.grid[0] = b->grid;
  cfg.block[0] = b->block;
  cfg.params = params;
  cfg.params_size = total;
  cfg.threads = threads;
  memset(st, 0, sizeof *st);
  feat_vec fv;
  feat_init(&fv);
  int rc = emu_launch(em, b->kernel, &cfg, &fv, st, err, sizeof err);
  feat_free(&fv);
  if (rc) fprintf(stderr, "emu_bench: %s: %s\n", b->kernel, err);
  return rc;
}

/* Best-of-REPS throughput (thread-insns/s) of b with `threads` threads;
   -1 on error (printed). */
static double run_bench(const bench *b, int threads, uint64_t *insns) {
  ptx_error perr;
  memset(&perr, 0, sizeof perr);
  ptx_module *m = ptx_parse(b->ptx, strlen(b->ptx), b->kernel, &perr);
  if (!m) {
    fprintf(stderr, "emu_bench: %s\n", perr.msg);
    return -1;
  }
  char err[1024] = "";
  double best = -1;
  emu_device *d = emu_device_new();
  emu_module *em = NULL;
  const ptx_func *k = ptx_find_func(m, b->kernel);
  size_t off[8], total = 0;
  unsigned char params[64];
  memset(params, 0, sizeof params);
  uint64_t a0 = 0, a1 = 0, a2 = 0;
  if (!d || !k || emu_module_load(d, m, &em, err, sizeof err) || emu_param_layout(k, off, &total)) {
    fprintf(stderr, "emu_bench: %s: cannot load: %s\n", b->kernel, err);
    goto out;
  }
  size_t threads_total = (size_t)b->grid * b->block;
  if (b->kind == 1) {
    size_t bytes = (size_t)TRIAD_N * 4;
    if (emu_malloc(d, bytes, &a0, err, sizeof err) || emu_malloc(d, bytes, &a1, err, sizeof err) ||
        emu_malloc(d, bytes, &a2, err, sizeof err)) {
      fprintf(stderr, "emu_bench: %s\n", err);
      goto out;
    }
    float *hb = emu_host_ptr(d, a1, bytes), *hc = emu_host_ptr(d, a2, bytes);
    for (size_t i = 0; hb && hc && i < TRIAD_N; i++) {
      hb[i] = (float)(i & 1023);
      hc[i] = 0.5f;
    }
    float s = 3.0f;
    uint32_t n = TRIAD_N;
    memcpy(params + off[0], &a0, 8);
    memcpy(params + off[1], &a1, 8);
    memcpy(params + off[2], &a2, 8);
    memcpy(params + off[3], &s, 4);
    memcpy(params + off[4], &n, 4);
  } else if (b->kind == 4) {
    size_t nel = threads_total * 64;
    uint64_t h = 0;
    if (emu_malloc(d, threads_total * 4, &a0, err, sizeof err) ||
        emu_malloc(d, nel * 4, &a1, err, sizeof err)) {
      fprintf(stderr, "emu_bench: %s\n", err);
      goto out;
    }
    float *hf = emu_host_ptr(d, a1, nel * 4);
    for (size_t i = 0; hf && i < nel; i++) hf[i] = (float)(i & 255);
    emu_texture t;
    memset(&t, 0, sizeof t);
    t.addr = a1;
    t.width = nel;
    t.height = t.depth = 1;
    t.pitch = t.slice = nel * 4;
    t.channels = 1;
    t.bits = 32;
    t.kind = EMU_TEX_FLOAT;
    t.dims = 1;
    t.linear = 1;
    if (emu_texture_new(d, &t, &h, err, sizeof err)) {
      fprintf(stderr, "emu_bench: %s\n", err);
      goto out;
    }
    memcpy(params + off[0], &a0, 8);
    memcpy(params + off[1], &h, 8);
  } else if (b->kind == 6) {
    size_t bytes = 1024 + (size_t)WMMA_CTAS * 1024; /* A, B, then each CTA's D */
    if (emu_malloc(d, bytes, &a0, err, sizeof err)) {
      fprintf(stderr, "emu_bench: %s\n", err);
      goto out;
    }
    uint16_t *hh = emu_host_ptr(d, a0, 1024);
    for (unsigned i = 0; hh && i < 512; i++) hh[i] = (uint16_t)(0x3800 + (i & 255)); /* 0.5 .. ~1 */
    uint32_t trips = WMMA_TRIPS;
    memcpy(params + off[0], &a0, 8);
    memcpy(params + off[1], &trips, 4);
  } else {
    if (emu_malloc(d, threads_total * 4, &a0, err, sizeof err)) {
      fprintf(stderr, "emu_bench: %s\n", err);
      goto out;
    }
    uint32_t p1 = b->kind == 0 ? FMA_TRIPS : b->kind == 3 ? MMA_TRIPS : b->kind == 5 ? SMALL_TRIPS
                                                                                     : MANDEL_W;
    memcpy(params + off[0], &a0, 8);
    memcpy(params + off[1], &p1, 4);
  }
  for (int r = 0; r < REPS; r++) {
    /* small launches: many, their instructions over their wall time (what
       a launch costs beside its instructions); else one, over the
       emulator's own time */
    unsigned n = b->kind == 5 ? SMALL_LAUNCHES : 1;
    uint64_t ins = 0;
    double sec = 0;
    for (unsigned q = 0; q < n; q++) {
      emu_stats st;
      double t0 = now_s();
      if (launch_once(em, b, params, total, threads, &st)) {
        best = -1;
        goto out;
      }
      sec += b->kind == 5 ? now_s() - t0 : st.seconds;
      ins += st.thread_insns;
    }
    double rate = sec > 0 ? (double)ins / sec : 0;
    if (rate > best) best = rate;
    *insns = ins;
  }
out:
  emu_module_free(em);
  emu_device_free(d);
  ptx_module_free(m);
  return best;
}

int main(int argc, char **argv) {
  const char *only = argc > 2 ? argv[2] : NULL;
  printf("emulator throughput, M thread-instructions/s (best of %d)\n\n", REPS);
  printf("%-34s %14s %10s %10s %8s  %s\n", "kernel", "thread-insns", "1 thread", "2 threads",
         "speedup", "target");
  int failed = 0;
  for (size_t i = 0; i < sizeof BENCHES / sizeof BENCHES[0]; i++) {
    const bench *b = &BENCHES[i];
    if (only && !strstr(b->name, only)) continue;
    uint64_t insns = 0;
    double r1 = run_bench(b, 1, &insns), r2 = run_bench(b, 2, &insns);
    if (r1 < 0 || r2 < 0) {
      failed = 1;
      continue;
    }
    char target[96] = "";
    if (b->kind == 0 || b->kind == 1 || b->kind == 4 || b->kind == 5 || b->kind == 6)
      snprintf(target, sizeof target, ">= %.0f M/s per core: %s", TARGET_MIPS_PER_CORE,
               r1 / 1e6 >= TARGET_MIPS_PER_CORE ? "met" : "NOT met");
    if (b->kind == 3)
      snprintf(target, sizeof target, ">= %.0f M/s on 1 thread: %s", TARGET_MMA_MIPS,
               r1 / 1e6 >= TARGET_MMA_MIPS ? "met" : "NOT met");
    printf("%-34s %14" PRIu64 " %10.1f %10.1f %7.2fx  %s\n", b->name, insns, r1 / 1e6, r2 / 1e6,
           r1 > 0 ? r2 / r1 : 0.0, target);
  }
  return failed;
}
