/*
 * test_emu.c -- engine-level tests of the PTX emulator on small hand-written
 * PTX kernels: control flow and reconvergence (per-block counts equal the
 * analytic sums), barriers, checked memory (messages naming kernel, CTA,
 * thread, line and address), budgets, calls with parameter passing, device
 * printf, warp collectives, memory statistics, thread-count independence,
 * sampling, registers read before being written (0), load-time rejection
 * of unsupported instructions, external (caller-owned) memory and lazily
 * filled allocations.
 *
 * Each kernel is a PTX string parsed with ptx_parse(); the expected numbers
 * are derived in comments next to each check.
 */
#include "tests.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "emulator/emu.h"
#include "emulator/emu_int.h"
#include "extractor/features.h"
#include "extractor/ptx.h"

/* One check whose failure report is the statement it proves. */
#define CHECK(cond, msg) \
  CU_assertImplementation((cond) ? CU_TRUE : CU_FALSE, __LINE__, (msg), __FILE__, "", CU_FALSE)

#define HDR ".version 8.0\n.target sm_90\n.address_size 64\n"

/* A loaded module with its device. */
typedef struct env {
  ptx_module *m;
  emu_device *d;
  emu_module *em;
  char err[1024];
} env;

static int env_load(env *E, const char *ptx) {
  memset(E, 0, sizeof *E);
  ptx_error pe;
  E->m = ptx_parse(ptx, strlen(ptx), "test.ptx", &pe);
  if (!E->m) {
    snprintf(E->err, sizeof E->err, "%s", pe.msg);
    return -1;
  }
  E->d = emu_device_new();
  if (!E->d) return -1;
  return emu_module_load(E->d, E->m, &E->em, E->err, sizeof E->err);
}

static void env_free(env *E) {
  emu_device_free(E->d); /* frees the module too */
  ptx_module_free(E->m);
}

/* Launch kernel k with one u64 pointer argument (and an optional u32);
   the statistics to st (may be NULL). */
static int run1s(env *E, const char *k, unsigned grid, unsigned block,
                 uint64_t ptr, emu_launch_cfg *cfg, feat_vec *fv, emu_stats *st) {
  unsigned char params[16];
  memcpy(params, &ptr, 8);
  cfg->grid[0] = grid;
  cfg->block[0] = block;
  cfg->params = params;
  cfg->params_size = sizeof params;
  return emu_launch(E->em, k, cfg, fv, st, E->err, sizeof E->err);
}

static int run1(env *E, const char *k, unsigned grid, unsigned block,
                uint64_t ptr, emu_launch_cfg *cfg, feat_vec *fv) {
  return run1s(E, k, grid, block, ptr, cfg, fv, NULL);
}

/* ------------------------------------------------------- divergence -- */

static const char *ifelse_ptx = HDR
    ".visible .entry k(.param .u64 out)\n"
    "{\n"
    "  .reg .pred %p<2>;\n"
    "  .reg .b32 %r<4>;\n"
    "  .reg .b64 %rd<4>;\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  cvta.to.global.u64 %rd1, %rd1;\n"
    "  mov.u32 %r1, %tid.x;\n"
    "  and.b32 %r2, %r1, 1;\n"
    "  setp.eq.u32 %p1, %r2, 0;\n"
    "  @%p1 bra EVEN;\n"
    "  mov.u32 %r3, 2;\n"
    "  bra.uni DONE;\n"
    "EVEN:\n"
    "  mov.u32 %r3, 1;\n"
    "DONE:\n"
    "  mul.wide.u32 %rd2, %r1, 4;\n"
    "  add.s64 %rd3, %rd1, %rd2;\n"
    "  st.global.u32 [%rd3], %r3;\n"
    "  ret;\n"
    "}\n";

static void test_divergent_ifelse(void) {
  env E;
  CU_ASSERT_EQUAL_FATAL(env_load(&E, ifelse_ptx), 0);
  uint64_t out;
  CU_ASSERT_EQUAL_FATAL(emu_malloc(E.d, 64 * 4, &out, E.err, sizeof E.err), 0);
  emu_launch_cfg cfg;
  emu_launch_cfg_init(&cfg);
  feat_vec fv;
  feat_init(&fv);
  int rc = run1(&E, "k", 1, 64, out, &cfg, &fv);
  if (rc) fprintf(stderr, "\n%s\n", E.err);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  uint32_t h[64];
  emu_memcpy_dtoh(E.d, h, out, sizeof h, E.err, sizeof E.err);
  int ok = 1;
  for (int i = 0; i < 64; i++) ok &= h[i] == (i % 2 ? 2u : 1u);
  CHECK(ok, "even threads took the EVEN side, odd ones the other");
  /* blocks: entry 6 insns x64, odd side 2 x32, even side 1 x32, join 4 x64 */
  CU_ASSERT_EQUAL(feat_get(&fv, "op.mov.u32", -1), 64 + 32 + 32);
  CU_ASSERT_EQUAL(feat_get(&fv, "op.bra", -1), 64);
  CU_ASSERT_EQUAL(feat_get(&fv, "op.bra.uni", -1), 32);
  CU_ASSERT_EQUAL(feat_get(&fv, "op.st.global.u32", -1), 64);
  CU_ASSERT_EQUAL(feat_get(&fv, "op.ret", -1), 64);
  CU_ASSERT_EQUAL(feat_get(&fv, "class.control", -1), 64 + 32 + 64);
  /* two warps, each with one divergent conditional branch */
  CU_ASSERT_EQUAL(feat_get(&fv, "ctrl.branches", -1), 2);
  CU_ASSERT_EQUAL(feat_get(&fv, "ctrl.divergent_branches", -1), 2);
  /* warp issues: 2 x (6 + 2 + 1 + 4); thread-insns 64*10 + 32*3 */
  CU_ASSERT_EQUAL(feat_get(&fv, "ctrl.warp_insns", -1), 26);
  CU_ASSERT_DOUBLE_EQUAL(feat_get(&fv, "ctrl.active_lane_ratio", -1),
                         (64.0 * 10 + 32 * 3) / (32.0 * 26), 1e-12);
  /* 64 stores of 4 bytes, 4 sectors per warp access, all bytes distinct */
  CU_ASSERT_EQUAL(feat_get(&fv, "mem.global_bytes", -1), 256);
  CU_ASSERT_EQUAL(feat_get(&fv, "mem.global_store_bytes", -1), 256);
  CU_ASSERT_EQUAL(feat_get(&fv, "mem.global_accesses", -1), 2);
  CU_ASSERT_EQUAL(feat_get(&fv, "mem.global_sectors", -1), 8);
  CU_ASSERT_EQUAL(feat_get(&fv, "mem.footprint_bytes", -1), 256);
  CU_ASSERT_EQUAL(feat_get(&fv, "launch.threads", -1), 64);
  CU_ASSERT_EQUAL(feat_get(&fv, "launch.param_bytes", -1), 8);
  feat_free(&fv);
  env_free(&E);
}

/* Nested loops: thread t runs t%4 outer iterations of t%3 inner ones. */
static const char *loops_ptx = HDR
    ".visible .entry k(.param .u64 out)\n"
    "{\n"
    "  .reg .pred %p<3>;\n"
    "  .reg .b32 %r<8>;\n"
    "  .reg .b64 %rd<4>;\n"
    "  mov.u32 %r1, %tid.x;\n"
    "  rem.u32 %r2, %r1, 4;\n"
    "  rem.u32 %r3, %r1, 3;\n"
    "  mov.u32 %r4, 0;\n"
    "  mov.u32 %r6, 0;\n"
    "OUTER:\n"
    "  setp.ge.u32 %p1, %r4, %r2;\n"
    "  @%p1 bra END;\n"
    "  mov.u32 %r5, 0;\n"
    "INNER:\n"
    "  setp.ge.u32 %p2, %r5, %r3;\n"
    "  @%p2 bra NEXT;\n"
    "  add.u32 %r6, %r6, 1;\n"
    "  add.u32 %r5, %r5, 1;\n"
    "  bra.uni INNER;\n"
    "NEXT:\n"
    "  add.u32 %r4, %r4, 1;\n"
    "  bra.uni OUTER;\n"
    "END:\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  mul.wide.u32 %rd2, %r1, 4;\n"
    "  add.s64 %rd3, %rd1, %rd2;\n"
    "  st.global.u32 [%rd3], %r6;\n"
    "  exit;\n"
    "}\n";

static void test_nested_loops(void) {
  env E;
  CU_ASSERT_EQUAL_FATAL(env_load(&E, loops_ptx), 0);
  uint64_t out;
  CU_ASSERT_EQUAL_FATAL(emu_malloc(E.d, 100 * 4, &out, E.err, sizeof E.err), 0);
  emu_launch_cfg cfg;
  emu_launch_cfg_init(&cfg);
  feat_vec fv;
  feat_init(&fv);
  int rc = run1(&E, "k", 1, 100, out, &cfg, &fv);
  if (rc) fprintf(stderr, "\n%s\n", E.err);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  uint32_t h[100];
  emu_memcpy_dtoh(E.d, h, out, sizeof h, E.err, sizeof E.err);
  double add = 0, setp = 0, bra = 0, brauni = 0;
  int ok = 1;
  for (unsigned t = 0; t < 100; t++) {
    unsigned n = t % 4, m = t % 3;
    ok &= h[t] == n * m;
    add += 2.0 * n * m + n;           /* body 2 adds, NEXT 1 add */
    setp += (n + 1) + n * (m + 1.0);  /* outer and inner headers */
    bra += (n + 1) + n * (m + 1.0);
    brauni += n * m + n;
  }
  CHECK(ok, "each thread's sum is (t%4)*(t%3)");
  CU_ASSERT_EQUAL(feat_get(&fv, "op.add.u32", -1), add);
  CU_ASSERT_EQUAL(feat_get(&fv, "op.setp.ge.u32", -1), setp);
  CU_ASSERT_EQUAL(feat_get(&fv, "op.bra", -1), bra);
  CU_ASSERT_EQUAL(feat_get(&fv, "op.bra.uni", -1), brauni);
  /* every thread reaches END once, after reconverging */
  CU_ASSERT_EQUAL(feat_get(&fv, "op.st.global.u32", -1), 100);
  CU_ASSERT_EQUAL(feat_get(&fv, "op.exit", -1), 100);
  CU_ASSERT(feat_get(&fv, "ctrl.divergent_branches", 0) > 0);
  feat_free(&fv);
  env_free(&E);
}

/* ----------------------------------------------------------- barrier -- */

static const char *barrier_ptx = HDR
    ".visible .entry k(.param .u64 out)\n"
    "{\n"
    "  .shared .align 4 .b8 sh[256];\n"
    "  .reg .b32 %r<10>;\n"
    "  .reg .b64 %rd<4>;\n"
    "  mov.u32 %r1, %tid.x;\n"
    "  mul.lo.u32 %r2, %r1, 10;\n"
    "  shl.b32 %r3, %r1, 2;\n"
    "  mov.u32 %r4, sh;\n"
    "  add.u32 %r5, %r4, %r3;\n"
    "  st.shared.u32 [%r5], %r2;\n"
    "  bar.sync 0;\n"
    "  add.u32 %r6, %r1, 32;\n"
    "  and.b32 %r6, %r6, 63;\n"
    "  shl.b32 %r7, %r6, 2;\n"
    "  add.u32 %r8, %r4, %r7;\n"
    "  ld.shared.u32 %r9, [%r8];\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  mul.wide.u32 %rd2, %r1, 4;\n"
    "  add.s64 %rd3, %rd1, %rd2;\n"
    "  st.global.u32 [%rd3], %r9;\n"
    "  ret;\n"
    "}\n";

static void test_barrier(void) {
  env E;
  CU_ASSERT_EQUAL_FATAL(env_load(&E, barrier_ptx), 0);
  uint64_t out;
  CU_ASSERT_EQUAL_FATAL(emu_malloc(E.d, 64 * 4, &out, E.err, sizeof E.err), 0);
  emu_launch_cfg cfg;
  emu_launch_cfg_init(&cfg);
  feat_vec fv;
  feat_init(&fv);
  int rc = run1(&E, "k", 2, 64, out, &cfg, &fv);
  if (rc) fprintf(stderr, "\n%s\n", E.err);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  uint32_t h[64];
  emu_memcpy_dtoh(E.d, h, out, sizeof h, E.err, sizeof E.err);
  int ok = 1;
  for (unsigned t = 0; t < 64; t++) ok &= h[t] == ((t + 32) % 64) * 10;
  CHECK(ok, "each warp read what the other warp wrote before bar.sync");
  CU_ASSERT_EQUAL(feat_get(&fv, "ctrl.barriers", -1), 4);  /* 2 CTAs x 2 warps */
  /* consecutive words: no bank conflicts; 2 shared accesses per warp */
  CU_ASSERT_EQUAL(feat_get(&fv, "mem.shared_accesses", -1), 8);
  CU_ASSERT_EQUAL(feat_get(&fv, "mem.shared_bytes", -1), 2 * 2 * 64 * 4);
  CU_ASSERT_EQUAL(feat_get(&fv, "mem.shared_bank_replays", -1), 0);
  feat_free(&fv);
  env_free(&E);
}

/* Stride-2 shared stores: lanes l and l+16 hit the same bank. */
static const char *bank_ptx = HDR
    ".visible .entry k()\n"
    "{\n"
    "  .shared .align 4 .b8 sh[512];\n"
    "  .reg .b32 %r<6>;\n"
    "  mov.u32 %r1, %tid.x;\n"
    "  shl.b32 %r2, %r1, 3;\n"
    "  mov.u32 %r3, sh;\n"
    "  add.u32 %r4, %r3, %r2;\n"
    "  st.shared.u32 [%r4], %r1;\n"
    "  ld.shared.u32 %r5, [%r3];\n"    /* broadcast: no conflict */
    "  ret;\n"
    "}\n";

static void test_bank_conflicts(void) {
  env E;
  CU_ASSERT_EQUAL_FATAL(env_load(&E, bank_ptx), 0);
  emu_launch_cfg cfg;
  emu_launch_cfg_init(&cfg);
  cfg.block[0] = 32;
  feat_vec fv;
  feat_init(&fv);
  CU_ASSERT_EQUAL_FATAL(emu_launch(E.em, "k", &cfg, &fv, NULL, E.err, sizeof E.err), 0);
  CU_ASSERT_EQUAL(feat_get(&fv, "mem.shared_bank_replays", -1), 1);
  CU_ASSERT_EQUAL(feat_get(&fv, "mem.shared_accesses", -1), 2);
  feat_free(&fv);
  env_free(&E);
}

/*
 * 32-bit shared loads (mem_op's one-pass path, mem_shared32): a warp
 * fills 1,024 words (word i = 3 i + 1) and loads word (lane x s) & 1023.
 * Replays of the load, by stride: 0 and 1 none, 2 one (lanes l and l + 16
 * share a bank, within one map word), 3 none (coprime with 32, 94 words
 * apart: the general path), 16 fifteen and 32 thirty-one (every lane in
 * two banks, or one).  The fill's 32 stores are consecutive words: none.
 * The fill goes the same path (32-bit stores).  A load past the end of
 * shared memory is still an error that names it.
 */
static const char *shld_ptx = HDR
    ".visible .entry k(.param .u64 out, .param .u32 s, .param .u32 extra)\n"
    "{\n"
    "  .shared .align 4 .b8 sh[4096];\n"
    "  .reg .pred %p<2>;\n"
    "  .reg .b32 %r<12>;\n"
    "  .reg .b64 %rd<4>;\n"
    "  mov.u32 %r1, %tid.x;\n"
    "  mov.u32 %r5, sh;\n"
    "  mov.u32 %r3, %r1;\n"
    "FILL:\n"
    "  shl.b32 %r4, %r3, 2;\n"
    "  add.u32 %r6, %r5, %r4;\n"
    "  mad.lo.u32 %r7, %r3, 3, 1;\n"
    "  st.shared.u32 [%r6], %r7;\n"
    "  add.u32 %r3, %r3, 32;\n"
    "  setp.lt.u32 %p1, %r3, 1024;\n"
    "  @%p1 bra FILL;\n"
    "  bar.sync 0;\n"
    "  ld.param.u32 %r2, [s];\n"
    "  mul.lo.u32 %r8, %r1, %r2;\n"
    "  and.b32 %r8, %r8, 1023;\n"
    "  ld.param.u32 %r11, [extra];\n"
    "  add.u32 %r8, %r8, %r11;\n"
    "  shl.b32 %r8, %r8, 2;\n"
    "  add.u32 %r9, %r5, %r8;\n"
    "  ld.shared.u32 %r10, [%r9];\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  mul.wide.u32 %rd2, %r1, 4;\n"
    "  add.s64 %rd3, %rd1, %rd2;\n"
    "  st.global.u32 [%rd3], %r10;\n"
    "  ret;\n"
    "}\n";

static int run_shld(env *E, uint64_t out, uint32_t s, uint32_t extra, feat_vec *fv) {
  struct {
    uint64_t out;
    uint32_t s, extra;
  } pk = {out, s, extra}; /* the kernel's parameters, as laid out */
  _Static_assert(sizeof pk == 16, "no padding");
  emu_launch_cfg cfg;
  emu_launch_cfg_init(&cfg);
  cfg.block[0] = 32;
  cfg.params = &pk;
  cfg.params_size = sizeof pk;
  return emu_launch(E->em, "k", &cfg, fv, NULL, E->err, sizeof E->err);
}

static void test_shared_load_banks(void) {
  env E;
  CU_ASSERT_EQUAL_FATAL(env_load(&E, shld_ptx), 0);
  uint64_t out;
  CU_ASSERT_EQUAL_FATAL(emu_malloc(E.d, 32 * 4, &out, E.err, sizeof E.err), 0);
  static const uint32_t stride[] = {0, 1, 2, 3, 16, 32}, replays[] = {0, 0, 1, 0, 15, 31};
  for (size_t c = 0; c < sizeof stride / sizeof stride[0]; c++) {
    feat_vec fv;
    feat_init(&fv);
    int rc = run_shld(&E, out, stride[c], 0, &fv);
    if (rc) fprintf(stderr, "\n%s\n", E.err);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    uint32_t h[32];
    emu_memcpy_dtoh(E.d, h, out, sizeof h, E.err, sizeof E.err);
    int ok = 1;
    for (uint32_t l = 0; l < 32; l++) ok &= h[l] == ((l * stride[c]) & 1023) * 3 + 1;
    CHECK(ok, "every lane loaded its word");
    CU_ASSERT_EQUAL(feat_get(&fv, "mem.shared_bank_replays", -1), replays[c]);
    CU_ASSERT_EQUAL(feat_get(&fv, "mem.shared_accesses", -1), 33);
    CU_ASSERT_EQUAL(feat_get(&fv, "mem.shared_bytes", -1), 33 * 32 * 4);
    feat_free(&fv);
  }
  feat_vec fv;
  feat_init(&fv);
  CU_ASSERT_NOT_EQUAL(run_shld(&E, out, 1, 1024 - 16, &fv), 0); /* lanes 16-31 past the end */
  CHECK(strstr(E.err, "shared") != NULL, "the error names shared memory");
  feat_free(&fv);
  env_free(&E);
}

/* ldmatrix.x4 (the emulator's shared path of 16-byte rows) and, for
   lanes 0-7, ld.shared.v4.u32 of the same rows (mem_op's): lane 8j + r
   gives row r of matrix j at tile + r * stride + j * mstride. */
static const char *ldm_ptx = HDR
    ".visible .entry k(.param .u64 out, .param .u32 stride, .param .u32 mstride)\n"
    "{\n"
    "  .reg .pred %p<3>;\n  .reg .b32 %r<40>;\n  .reg .b64 %rd<8>;\n"
    "  .shared .align 16 .b8 tile[8192];\n"
    "  ld.param.u64 %rd1, [out];\n  ld.param.u32 %r1, [stride];\n  ld.param.u32 %r2, [mstride];\n"
    "  cvta.to.global.u64 %rd1, %rd1;\n  mov.u32 %r3, %tid.x;\n  mov.u32 %r4, tile;\n"
    "  mov.u32 %r5, %r3;\n"
    "FILL:\n" /* word i = 3 i + 1, 64 conflict-free stores */
    "  shl.b32 %r6, %r5, 2;\n  add.s32 %r7, %r4, %r6;\n  mad.lo.s32 %r8, %r5, 3, 1;\n"
    "  st.shared.u32 [%r7], %r8;\n  add.s32 %r5, %r5, 32;\n"
    "  setp.lt.u32 %p1, %r5, 2048;\n  @%p1 bra FILL;\n"
    "  bar.sync 0;\n"
    "  and.b32 %r9, %r3, 7;\n  shr.u32 %r10, %r3, 3;\n  mul.lo.s32 %r11, %r9, %r1;\n"
    "  mad.lo.s32 %r11, %r10, %r2, %r11;\n  add.s32 %r12, %r4, %r11;\n"
    "  ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r20, %r21, %r22, %r23}, [%r12];\n"
    "  mul.wide.u32 %rd2, %r3, 16;\n  add.s64 %rd3, %rd1, %rd2;\n"
    "  st.global.v4.u32 [%rd3], {%r20, %r21, %r22, %r23};\n"
    "  setp.lt.u32 %p2, %r3, 8;\n  @!%p2 bra DONE;\n"
    "  ld.shared.v4.u32 {%r24, %r25, %r26, %r27}, [%r12];\n"
    "  add.s64 %rd4, %rd3, 512;\n  st.global.v4.u32 [%rd4], {%r24, %r25, %r26, %r27};\n"
    "DONE:\n  ret;\n}\n";

/* A full warp's vector load of one address (a constant, a global word
   pair, a parameter) takes the uniform path (emu.c, mem_uniform_ld): each
   element to its register in every lane, counted as the general path
   counts it -- which the race check forces, so the two runs compare. */
static const char *uniform_vec_ptx = HDR
    ".const .align 16 .b32 cv[8] = {11, 12, 13, 14, 15, 16, 17, 18};\n"
    ".visible .entry k(.param .u64 buf)\n{\n"
    "  .reg .b32 %r<16>;\n  .reg .b64 %rd<8>;\n"
    "  ld.param.u64 %rd1, [buf];\n  cvta.to.global.u64 %rd1, %rd1;\n  mov.u32 %r1, %tid.x;\n"
    "  ld.global.v4.u32 {%r2, %r3, %r4, %r5}, [%rd1];\n"
    "  ld.global.v2.u32 {%r6, %r7}, [%rd1+8];\n"
    "  ld.const.v2.u32 {%r8, %r9}, [cv+8];\n"
    "  mov.u64 %rd4, cv;\n  ld.const.v4.u32 {%r10, %r11, %r12, %r13}, [%rd4+16];\n"
    "  ld.param.v2.u32 {%r14, %r15}, [buf];\n"
    "  mul.wide.u32 %rd2, %r1, 64;\n  add.s64 %rd3, %rd1, %rd2;\n"
    "  st.global.v4.u32 [%rd3+64], {%r2, %r3, %r4, %r5};\n"
    "  st.global.v2.u32 [%rd3+80], {%r6, %r7};\n"
    "  st.global.v2.u32 [%rd3+88], {%r8, %r9};\n"
    "  st.global.v4.u32 [%rd3+96], {%r10, %r11, %r12, %r13};\n"
    "  st.global.v2.u32 [%rd3+112], {%r14, %r15};\n"
    "  ret;\n}\n";

static void test_uniform_vector_load(void) {
  env E;
  CU_ASSERT_EQUAL_FATAL(env_load(&E, uniform_vec_ptx), 0);
  uint64_t buf;
  CU_ASSERT_EQUAL_FATAL(emu_malloc(E.d, 64 + 32 * 64, &buf, E.err, sizeof E.err), 0);
  uint32_t in[4] = {0xA0, 0xA1, 0xA2, 0xA3};
  uint32_t out[2][32 * 16];
  feat_vec fv[2];
  for (int race = 0; race < 2; race++) {
    CU_ASSERT_EQUAL_FATAL(emu_memcpy_htod(E.d, buf, in, sizeof in, E.err, sizeof E.err), 0);
    emu_launch_cfg cfg;
    emu_launch_cfg_init(&cfg);
    cfg.racecheck = race;
    feat_init(&fv[race]);
    int rc = run1(&E, "k", 1, 32, buf, &cfg, &fv[race]);
    if (rc) fprintf(stderr, "\n%s\n", E.err);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    emu_memcpy_dtoh(E.d, out[race], buf + 64, sizeof out[race], E.err, sizeof E.err);
  }
  int ok = 1;
  for (unsigned l = 0; l < 32; l++) {
    const uint32_t *o = out[0] + 16 * l;
    static const uint32_t want[12] = {0xA0, 0xA1, 0xA2, 0xA3, 0xA2, 0xA3, 13, 14, 15, 16, 17, 18};
    for (unsigned k = 0; k < 12; k++) ok &= o[k] == want[k];
    ok &= o[12] == (uint32_t)buf && o[13] == (uint32_t)(buf >> 32);
  }
  CHECK(ok, "every lane gets each element of the one address's vector (global, constant "
            "direct and indexed, parameter)");
  CHECK(!memcmp(out[0], out[1], sizeof out[0]), "... as the general path gives them");
  static const char *const keys[] = {"mem.global_bytes", "mem.global_load_bytes", "mem.global_sectors",
                                     "mem.global_accesses", "mem.footprint_bytes",
                                     "mem.global_load_sectors", "mem.const_accesses",
                                     "mem.const_replays"};
  int same = 1;
  for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
    same &= feat_get(&fv[0], keys[k], -1) == feat_get(&fv[1], keys[k], -1);
  CHECK(same && feat_get(&fv[0], "mem.global_accesses", -1) > 0 &&
            feat_get(&fv[0], "mem.const_accesses", -1) > 0,
        "... and counted as the general path counts them (bytes, sectors, accesses, footprint, "
        "constant accesses)");
  feat_free(&fv[0]);
  feat_free(&fv[1]);
  env_free(&E);
}

/* ldm_ptx's k on one warp with the row and matrix strides s and ms. */
static int run_ldm(env *E, uint64_t out, uint32_t s, uint32_t ms, feat_vec *fv) {
  struct {
    uint64_t out;
    uint32_t s, ms;
  } pk = {out, s, ms}; /* the kernel's parameters, as laid out */
  _Static_assert(sizeof pk == 16, "no padding");
  emu_launch_cfg cfg;
  emu_launch_cfg_init(&cfg);
  cfg.block[0] = 32;
  cfg.params = &pk;
  cfg.params_size = sizeof pk;
  return emu_launch(E->em, "k", &cfg, fv, NULL, E->err, sizeof E->err);
}

/* Bank replays of 16-byte rows: a bank quad (four banks) serves one row a
   pass, so rows r * stride replay (most rows in one quad) - 1 times a
   matrix: stride 16 and 48 reach all eight quads, 32 four (two rows each:
   1), 128 one (7); rows at one address are one broadcast (0). */
static void test_ldmatrix_banks(void) {
  env E;
  CU_ASSERT_EQUAL_FATAL(env_load(&E, ldm_ptx), 0);
  uint64_t out;
  CU_ASSERT_EQUAL_FATAL(emu_malloc(E.d, 160 * 4, &out, E.err, sizeof E.err), 0);
  static const uint32_t stride[] = {16, 48, 32, 128, 0}, mstride[] = {128, 512, 256, 1024, 16};
  static const uint32_t replays[] = {0, 0, 1, 7, 0};
  /* the vector rows (emu_mma.c, ldm_rows) and, emu__mma_general set, the
     scalar ones */
  const size_t nc = sizeof stride / sizeof stride[0];
  for (size_t cc = 0; cc < 2 * nc; cc++) {
    size_t c = cc % nc;
    emu__mma_general = cc >= nc;
    feat_vec fv;
    feat_init(&fv);
    int rc = run_ldm(&E, out, stride[c], mstride[c], &fv);
    if (rc) fprintf(stderr, "\n%s\n", E.err);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    uint32_t h[160];
    emu_memcpy_dtoh(E.d, h, out, sizeof h, E.err, sizeof E.err);
    int ok = 1;
    for (uint32_t l = 0; l < 32; l++)
      for (uint32_t q = 0; q < 4; q++) { /* word l % 4 of row l / 4 of matrix q */
        uint32_t w = ((l / 4) * stride[c] + q * mstride[c] + (l % 4) * 4) / 4;
        ok &= h[4 * l + q] == 3 * w + 1;
      }
    for (uint32_t l = 0; l < 8; l++)
      for (uint32_t k = 0; k < 4; k++) ok &= h[128 + 4 * l + k] == 3 * (l * stride[c] / 4 + k) + 1;
    CHECK(ok, "every lane has its words of the rows");
    CU_ASSERT_EQUAL(feat_get(&fv, "mem.shared_bank_replays", -1), 5 * replays[c]);
    CU_ASSERT_EQUAL(feat_get(&fv, "mem.shared_accesses", -1), 64 + 4 + 1);
    CU_ASSERT_EQUAL(feat_get(&fv, "mem.shared_bytes", -1), 64 * 128 + 4 * 128 + 128);
    feat_free(&fv);
  }
  emu__mma_general = 0;
  /* a row past the window, and one not 16-byte aligned, are refused */
  for (int bad = 0; bad < 2; bad++) {
    feat_vec fv;
    feat_init(&fv);
    CU_ASSERT_NOT_EQUAL(run_ldm(&E, out, bad ? 8 : 2048, 16, &fv), 0);
    CHECK(strstr(E.err, bad ? "aligned" : "shared") != NULL, "the error says why");
    feat_free(&fv);
  }
  env_free(&E);
}

/*
 * Launches one after another on the calling thread keep its worker's
 * buffers on the module (warps, register arenas, counters): the cache was
 * once emptied by the second launch and never filled again, so every later
 * launch allocated, cleared and freed them (a quarter of a small launch
 * under kcast run).  And the features of a launch into an empty vector
 * (built in place) are those it adds to a vector that holds names already.
 */
static void test_worker_cache_and_features(void) {
  env E;
  CU_ASSERT_EQUAL_FATAL(env_load(&E, bank_ptx), 0);
  emu_launch_cfg cfg;
  emu_launch_cfg_init(&cfg);
  cfg.block[0] = 64; /* two warps (the kernel stores at 8 bytes a thread in 512) */
  cfg.threads = 1;
  int kept = 1;
  feat_vec first;
  feat_init(&first);
  for (int i = 0; i < 4; i++) {
    feat_vec fv;
    feat_init(&fv);
    CU_ASSERT_EQUAL_FATAL(emu_launch(E.em, "k", &cfg, &fv, NULL, E.err, sizeof E.err), 0);
    kept &= emu__cached_warps(E.em) >= 2;
    if (i == 0) first = fv;
    else feat_free(&fv);
  }
  CHECK(kept, "every launch leaves its warps in the module's cache for the next one");
  feat_vec more;
  feat_init(&more);
  CU_ASSERT_FATAL(feat_set(&more, "user.x", 7) == 0);
  CU_ASSERT_EQUAL_FATAL(emu_launch(E.em, "k", &cfg, &more, NULL, E.err, sizeof E.err), 0);
  int same = more.n == first.n + 1 && first.n > 20 && feat_get(&more, "user.x", 0) == 7;
  for (size_t i = 0; same && i < first.n; i++)
    same = !strcmp(more.names[i + 1], first.names[i]) && more.vals[i + 1] == first.vals[i];
  CHECK(same, "a launch into an empty vector gives the names and values, in order, it adds to a "
              "filled one");
  feat_free(&more);
  feat_free(&first);
  env_free(&E);
}

/* ------------------------------------------------------ bad accesses -- */

static const char *oob_ptx = HDR
    ".visible .entry k(.param .u64 buf)\n"
    "{\n"
    "  .reg .b32 %r<4>;\n"
    "  .reg .b64 %rd<5>;\n"
    "  ld.param.u64 %rd1, [buf];\n"
    "  mov.u32 %r1, %tid.x;\n"
    "  mul.wide.u32 %rd2, %r1, 4;\n"
    "  add.s64 %rd3, %rd1, %rd2;\n"
    "  ld.global.u32 %r2, [%rd3];\n"
    "  add.s64 %rd4, %rd3, 2;\n"
    "  st.global.u32 [%rd4], %r2;\n"
    "  ret;\n"
    "}\n";

static void test_out_of_bounds(void) {
  env E;
  CU_ASSERT_EQUAL_FATAL(env_load(&E, oob_ptx), 0);
  uint64_t buf;
  CU_ASSERT_EQUAL_FATAL(emu_malloc(E.d, 16, &buf, E.err, sizeof E.err), 0);
  emu_launch_cfg cfg;
  emu_launch_cfg_init(&cfg);
  cfg.grid[1] = 2;
  feat_vec fv;
  feat_init(&fv);
  int rc = run1(&E, "k", 3, 8, buf, &cfg, &fv);
  CU_ASSERT_EQUAL(rc, -1);
  char want[256];
  snprintf(want, sizeof want,
           "kernel k: CTA (0,0,0) thread (4,0,0): test.ptx:12: ld.global.u32: "
           "out-of-bounds global read of 4 bytes at 0x%llx (allocation 0x%llx+16)",
           (unsigned long long)(buf + 16), (unsigned long long)buf);
  CU_ASSERT_STRING_EQUAL(E.err, want);
  CU_ASSERT_EQUAL(fv.n, 0); /* a failed launch adds no features */
  feat_free(&fv);
  env_free(&E);
}

/* 32-bit address arithmetic wraps: the shared address base - 64 held in a
   32-bit register plus an offset of 68 is base + 4 (nvcc writes such code
   for a loop that starts one element before an array). */
static const char *wrap32_ptx = HDR
    ".visible .entry k(.param .u64 out)\n"
    "{\n"
    "  .reg .b32 %r<6>;\n"
    "  .reg .b64 %rd<4>;\n"
    "  .shared .align 4 .b8 sm[256];\n"
    "  mov.u32 %r1, %tid.x;\n"
    "  mov.u32 %r2, sm;\n"
    "  shl.b32 %r3, %r1, 2;\n"
    "  add.s32 %r2, %r2, %r3;\n"
    "  add.s32 %r4, %r2, -64;\n"
    "  st.shared.u32 [%r4+68], %r1;\n"
    "  bar.sync 0;\n"
    "  ld.shared.u32 %r5, [%r2+4];\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  mul.wide.u32 %rd2, %r1, 4;\n"
    "  add.s64 %rd3, %rd1, %rd2;\n"
    "  st.global.u32 [%rd3], %r5;\n"
    "  ret;\n"
    "}\n";

static void test_address_wrap32(void) {
  env E;
  CU_ASSERT_EQUAL_FATAL(env_load(&E, wrap32_ptx), 0);
  uint64_t buf;
  CU_ASSERT_EQUAL_FATAL(emu_malloc(E.d, 64 * 4, &buf, E.err, sizeof E.err), 0);
  emu_launch_cfg cfg;
  emu_launch_cfg_init(&cfg);
  int rc = run1(&E, "k", 1, 32, buf, &cfg, NULL);
  if (rc) fprintf(stderr, "\n%s\n", E.err);
  CHECK(rc == 0, "[%r + 68] with %r = base - 64 in a 32-bit register is in bounds");
  uint32_t out[32];
  emu_memcpy_dtoh(E.d, out, buf, sizeof out, E.err, sizeof E.err);
  int ok = 1;
  for (uint32_t t = 0; t < 32; t++) ok &= out[t] == t;
  CHECK(ok, "each thread reads back the value it stored at base + 4 + 4 * tid");
  env_free(&E);
}

/* A GPU's policy for reads a little out of bounds (EMU_OOB_WARN): thread i
   reads in[i-1] and in[i+1] and writes out[i]; the last thread also writes
   out[n].  Three accesses fall outside the 8-int buffers. */
static const char *halo_ptx = HDR
    ".visible .entry k(.param .u64 in, .param .u64 out)\n"
    "{\n"
    "  .reg .pred %p<2>;\n"
    "  .reg .b32 %r<6>;\n"
    "  .reg .b64 %rd<6>;\n"
    "  ld.param.u64 %rd1, [in];\n"
    "  ld.param.u64 %rd2, [out];\n"
    "  mov.u32 %r1, %tid.x;\n"
    "  mul.wide.u32 %rd3, %r1, 4;\n"
    "  add.s64 %rd4, %rd1, %rd3;\n"
    "  ld.global.u32 %r2, [%rd4+-4];\n"
    "  ld.global.u32 %r3, [%rd4+4];\n"
    "  add.s32 %r4, %r2, %r3;\n"
    "  add.s64 %rd5, %rd2, %rd3;\n"
    "  st.global.u32 [%rd5], %r4;\n"
    "  setp.eq.u32 %p1, %r1, 7;\n"
    "  @%p1 st.global.u32 [%rd5+4], %r4;\n"
    "  ret;\n"
    "}\n";

static int run_halo(env *E, uint64_t in, uint64_t out, int oob, feat_vec *fv, emu_stats *st) {
  unsigned char params[16];
  memcpy(params, &in, 8);
  memcpy(params + 8, &out, 8);
  emu_launch_cfg cfg;
  emu_launch_cfg_init(&cfg);
  cfg.block[0] = 8;
  cfg.params = params;
  cfg.params_size = sizeof params;
  cfg.oob = oob;
  return emu_launch(E->em, "k", &cfg, fv, st, E->err, sizeof E->err);
}

static void test_oob_policy(void) {
  env E;
  CU_ASSERT_EQUAL_FATAL(env_load(&E, halo_ptx), 0);
  uint64_t in, out;
  CU_ASSERT_EQUAL_FATAL(emu_malloc(E.d, 32, &in, E.err, sizeof E.err), 0);
  CU_ASSERT_EQUAL_FATAL(emu_malloc(E.d, 32, &out, E.err, sizeof E.err), 0);
  int32_t h[8];
  for (int i = 0; i < 8; i++) h[i] = i + 1;
  emu_memcpy_htod(E.d, in, h, sizeof h, E.err, sizeof E.err);
  /* error (the default): the first bad access stops the launch */
  emu_stats st;
  feat_vec fv;
  feat_init(&fv);
  CU_ASSERT_EQUAL(run_halo(&E, in, out, EMU_OOB_ERROR, &fv, &st), -1);
  char want[256];
  snprintf(want, sizeof want, "kernel k: CTA (0,0,0) thread (0,0,0): test.ptx:14: ld.global.u32: "
           "out-of-bounds global read of 4 bytes at 0x%llx (allocation 0x%llx+32)",
           (unsigned long long)(in - 4), (unsigned long long)in);
  CU_ASSERT_STRING_EQUAL(E.err, want);
  CHECK(st.fault == EMU_FAULT_ADDRESS, "a bad address is an EMU_FAULT_ADDRESS");
  CHECK(fv.n == 0, "a failed launch has no features");
  /* warn: reads give zeros, the write is dropped, the launch completes */
  CU_ASSERT_EQUAL_FATAL(run_halo(&E, in, out, EMU_OOB_WARN, &fv, &st), 0);
  int32_t o[8];
  emu_memcpy_dtoh(E.d, o, out, sizeof o, E.err, sizeof E.err);
  int ok = o[0] == 0 + 2 && o[7] == 7 + 0;
  for (int i = 1; i < 7; i++) ok &= o[i] == (i) + (i + 2);
  CHECK(ok, "out-of-bounds reads give 0, in-bounds ones the data");
  CHECK(st.oob_accesses == 3, "three tolerated accesses are counted (in[-1], in[8], out[8])");
  CHECK(feat_get(&fv, "emu.oob_accesses", -1) == 3, "the launch carries emu.oob_accesses = 3");
  if (strcmp(st.oob_first, want)) fprintf(stderr, "\n%s\n", st.oob_first);
  CHECK(strcmp(st.oob_first, want) == 0, "the first one is named like an error");
  CHECK(feat_get(&fv, "mem.footprint_bytes", -1) == 64, "dropped accesses touch no footprint");
  CHECK(feat_get(&fv, "mem.global_load_bytes", -1) == 64, "every executed load is counted");
  /* a far address (not near any allocation) is an error even under warn */
  feat_free(&fv);
  feat_init(&fv);
  CU_ASSERT_EQUAL(run_halo(&E, in + (1ull << 30), out, EMU_OOB_WARN, &fv, &st), -1);
  CHECK(strstr(E.err, "unmapped global read") != NULL, "an unmapped address stays an error");
  /* use after free: named as such, tolerated under warn */
  CU_ASSERT_EQUAL(emu_free(E.d, in, E.err, sizeof E.err), 0);
  CU_ASSERT_EQUAL(run_halo(&E, in, out, EMU_OOB_ERROR, NULL, &st), -1);
  snprintf(want, sizeof want, "use after free (allocation 0x%llx+32 was freed)",
           (unsigned long long)in);
  if (!strstr(E.err, want)) fprintf(stderr, "\n%s\n", E.err);
  CHECK(strstr(E.err, want) != NULL, "a freed buffer is reported as a use after free");
  CU_ASSERT_EQUAL(run_halo(&E, in, out, EMU_OOB_WARN, NULL, &st), 0);
  CHECK(st.oob_accesses == 8 + 8 + 1, "every freed-buffer read and the overrun are counted");
  CHECK(emu_memcpy_dtoh(E.d, o, in, 4, E.err, sizeof E.err) == -1 &&
            strstr(E.err, "is freed memory") != NULL,
        "a copy from a freed buffer says so");
  CHECK(emu_free(E.d, in, E.err, sizeof E.err) == -1 && strstr(E.err, "freed already") != NULL,
        "a second free says the buffer was freed already");
  feat_free(&fv);
  env_free(&E);
}

/* What a GPU does with a sloppy program under --oob warn: memory of the
   2 MiB pages the allocations map is there (zeros until written, writes
   stick, across launches); past every mapped page an access fails, the
   message naming the nearest allocation and the distance; shared memory
   past the CTA's window inside the SM's is tolerated; a bad texture handle
   reads zeros.  Each tolerated access is counted. */
static const char *slack_ptx = HDR
    ".visible .entry put(.param .u64 p, .param .u64 off, .param .u32 v)\n"
    "{\n"
    "  .reg .b32 %r<4>;\n  .reg .b64 %rd<4>;\n"
    "  ld.param.u64 %rd1, [p];\n  ld.param.u64 %rd2, [off];\n  ld.param.u32 %r1, [v];\n"
    "  add.s64 %rd3, %rd1, %rd2;\n"
    "  st.global.u32 [%rd3], %r1;\n"
    "  ret;\n}\n"
    ".visible .entry get(.param .u64 p, .param .u64 off, .param .u32 v)\n"
    "{\n"
    "  .reg .b32 %r<4>;\n  .reg .b64 %rd<4>;\n"
    "  ld.param.u64 %rd1, [p];\n  ld.param.u64 %rd2, [off];\n"
    "  add.s64 %rd3, %rd1, %rd2;\n"
    "  ld.global.u32 %r2, [%rd3];\n"
    "  st.global.u32 [%rd1], %r2;\n"
    "  ret;\n}\n"
    ".extern .shared .align 16 .b8 dyn[];\n"
    ".visible .entry shx(.param .u64 p, .param .u64 off, .param .u32 v)\n"
    "{\n"
    "  .reg .b32 %r<8>;\n  .reg .b64 %rd<4>;\n"
    "  ld.param.u64 %rd1, [p];\n  mov.u32 %r1, %tid.x;\n  shl.b32 %r2, %r1, 2;\n"
    "  mov.u32 %r3, dyn;\n  add.s32 %r4, %r3, %r2;\n"
    "  add.s32 %r5, %r1, 100;\n  st.shared.u32 [%r4], %r5;\n  bar.sync 0;\n"
    "  xor.b32 %r6, %r2, 4;\n  add.s32 %r6, %r3, %r6;\n  ld.shared.u32 %r7, [%r6];\n"
    "  mul.wide.u32 %rd2, %r1, 4;\n  add.s64 %rd3, %rd1, %rd2;\n  st.global.u32 [%rd3], %r7;\n"
    "  ret;\n}\n"
    ".visible .entry badtex(.param .u64 p, .param .u64 off, .param .u32 v)\n"
    "{\n"
    "  .reg .b32 %r<8>;\n  .reg .f32 %f<8>;\n  .reg .b64 %rd<4>;\n"
    "  ld.param.u64 %rd1, [p];\n  ld.param.u64 %rd2, [off];\n  mov.u32 %r1, 3;\n"
    "  tex.1d.v4.f32.s32 {%f1, %f2, %f3, %f4}, [%rd2, {%r1}];\n"
    "  add.f32 %f5, %f1, 0f3F800000;\n  st.global.f32 [%rd1], %f5;\n"
    "  ret;\n}\n";

/* CHECK with a formatted message. */
#define CHECKF(cond, ...)                                                          \
  do {                                                                             \
    char m_[4096];                                                                 \
    snprintf(m_, sizeof m_, __VA_ARGS__);                                          \
    CU_assertImplementation((cond) ? CU_TRUE : CU_FALSE, __LINE__, m_, __FILE__, "", CU_FALSE); \
  } while (0)

/* A team of threads joins a launch only when the work left pays for it
   (emu.c, TEAM_MIN_S): 2 CTAs of a short loop run on the calling thread
   alone, 512 CTAs of a long one on the team; the counts are the same
   either way (checked against one thread). */
static const char *team_ptx = HDR
    ".visible .entry spin(.param .u64 out, .param .u32 trips)\n"
    "{\n"
    "  .reg .pred %p<2>;\n  .reg .b32 %r<8>;\n  .reg .f32 %f<4>;\n  .reg .b64 %rd<4>;\n"
    "  ld.param.u64 %rd1, [out];\n  ld.param.u32 %r1, [trips];\n"
    "  mov.u32 %r2, %ctaid.x;\n  mov.u32 %r3, %ntid.x;\n  mov.u32 %r4, %tid.x;\n"
    "  mad.lo.s32 %r5, %r2, %r3, %r4;\n  cvt.rn.f32.u32 %f1, %r5;\n  mov.u32 %r6, 0;\n"
    "$L_loop:\n"
    "  fma.rn.f32 %f1, %f1, 0f3F7FBE77, 0f3F000000;\n"
    "  add.s32 %r6, %r6, 1;\n  setp.lt.u32 %p1, %r6, %r1;\n  @%p1 bra $L_loop;\n"
    "  cvta.to.global.u64 %rd1, %rd1;\n  mul.wide.u32 %rd2, %r5, 4;\n"
    "  add.s64 %rd1, %rd1, %rd2;\n  st.global.f32 [%rd1], %f1;\n  ret;\n}\n";

static void test_team_only_for_large_work(void) {
  env E;
  CU_ASSERT_EQUAL_FATAL(env_load(&E, team_ptx), 0);
  uint64_t out;
  CU_ASSERT_EQUAL_FATAL(emu_malloc(E.d, 512 * 256 * 4, &out, E.err, sizeof E.err), 0);
  static const unsigned grid[2] = {2, 512}, block[2] = {64, 256}, trips[2] = {4, 1024};
  for (int big = 0; big < 2; big++) {
    uint64_t insns[2] = {0, 0};
    for (int th = 1; th <= 2; th++) {
      unsigned char params[12];
      memcpy(params, &out, 8);
      memcpy(params + 8, &trips[big], 4);
      emu_launch_cfg cfg;
      emu_launch_cfg_init(&cfg);
      cfg.grid[0] = grid[big];
      cfg.block[0] = block[big];
      cfg.params = params;
      cfg.params_size = sizeof params;
      cfg.threads = th;
      emu_stats st;
      memset(&st, 0, sizeof st);
      CU_ASSERT_EQUAL_FATAL(emu_launch(E.em, "spin", &cfg, NULL, &st, E.err, sizeof E.err), 0);
      insns[th - 1] = st.thread_insns;
      if (th == 2)
        CHECKF(st.team == (big ? 2 : 1), "%s launch on 2 threads: a team of %d (want %d)",
               big ? "a 0.1-second" : "a 2-CTA", st.team, big ? 2 : 1);
    }
    CHECKF(insns[0] == insns[1] && insns[0] > 0, "the same counts on 1 and 2 threads (%llu, %llu)",
           (unsigned long long)insns[0], (unsigned long long)insns[1]);
  }
  env_free(&E);
}

/* tex1Dfetch (tex.1d with integer coordinates on a linear resource, the
   emulator's fast path): thread i fetches element i - 2 of a 4-element
   texture, so two threads read before it and two past it (zeros); float4
   elements come back as stored, uchar4 read normalized as v / 255; the
   elements read count in the footprint. */
static const char *fetch_ptx = HDR
    ".visible .entry fetch(.param .u64 out, .param .u64 tex)\n"
    "{\n"
    "  .reg .b32 %r<4>;\n  .reg .f32 %f<5>;\n  .reg .b64 %rd<5>;\n"
    "  ld.param.u64 %rd1, [out];\n  ld.param.u64 %rd2, [tex];\n"
    "  mov.u32 %r1, %tid.x;\n  sub.s32 %r2, %r1, 2;\n"
    "  tex.1d.v4.f32.s32 {%f1, %f2, %f3, %f4}, [%rd2, {%r2}];\n"
    "  mul.wide.u32 %rd3, %r1, 16;\n  add.s64 %rd4, %rd1, %rd3;\n"
    "  st.global.v4.f32 [%rd4], {%f1, %f2, %f3, %f4};\n"
    "  ret;\n}\n";

static void test_tex1dfetch(void) {
  env E;
  CU_ASSERT_EQUAL_FATAL(env_load(&E, fetch_ptx), 0);
  for (int fmt = 0; fmt < 2; fmt++) {
    uint64_t out, mem, h = 0;
    unsigned elem = fmt ? 4 : 16;
    CU_ASSERT_EQUAL_FATAL(emu_malloc(E.d, 8 * 16, &out, E.err, sizeof E.err), 0);
    CU_ASSERT_EQUAL_FATAL(emu_malloc(E.d, 4 * elem, &mem, E.err, sizeof E.err), 0);
    float fv4[16];
    unsigned char u4[16];
    for (int i = 0; i < 16; i++) {
      fv4[i] = (float)i * 1.5f - 3;
      u4[i] = (unsigned char)(i * 17);
    }
    CU_ASSERT_EQUAL(emu_memcpy_htod(E.d, mem, fmt ? (void *)u4 : (void *)fv4, 4 * elem, E.err,
                                    sizeof E.err), 0);
    emu_texture t;
    memset(&t, 0, sizeof t);
    t.addr = mem;
    t.width = 4;
    t.height = t.depth = 1;
    t.pitch = t.slice = 4 * elem;
    t.channels = 4;
    t.bits = fmt ? 8 : 32;
    t.kind = fmt ? EMU_TEX_UNSIGNED : EMU_TEX_FLOAT;
    t.read_normalized = fmt;
    t.dims = 1;
    t.linear = 1;
    CU_ASSERT_EQUAL_FATAL(emu_texture_new(E.d, &t, &h, E.err, sizeof E.err), 0);
    unsigned char params[16];
    memcpy(params, &out, 8);
    memcpy(params + 8, &h, 8);
    emu_launch_cfg cfg;
    emu_launch_cfg_init(&cfg);
    cfg.block[0] = 8;
    cfg.params = params;
    cfg.params_size = sizeof params;
    feat_vec fv;
    feat_init(&fv);
    CU_ASSERT_EQUAL_FATAL(emu_launch(E.em, "fetch", &cfg, &fv, NULL, E.err, sizeof E.err), 0);
    float got[32];
    emu_memcpy_dtoh(E.d, got, out, sizeof got, E.err, sizeof E.err);
    int ok = 1;
    for (int i = 0; i < 8; i++)
      for (int c = 0; c < 4; c++) {
        int x = i - 2;
        float want = x < 0 || x > 3 ? 0 : fmt ? (float)((double)u4[x * 4 + c] / 255.0)
                                               : fv4[x * 4 + c];
        if (got[i * 4 + c] != want) ok = 0;
      }
    CHECKF(ok, "%s texture: the elements in range, zeros before and past it",
           fmt ? "uchar4 normalized" : "float4");
    CHECKF(feat_get(&fv, "mem.footprint_bytes", -1) == 128 + 4 * elem,
           "the footprint holds the output and the texture's 4 elements (%g)",
           feat_get(&fv, "mem.footprint_bytes", -1));
    feat_free(&fv);
    CU_ASSERT_EQUAL(emu_texture_free(E.d, h, E.err, sizeof E.err), 0);
  }
  env_free(&E);
}


static int run_slack(env *E, const char *k, uint64_t p, uint64_t off, uint32_t v, unsigned block,
                     int oob, emu_stats *st) {
  unsigned char params[24];
  memcpy(params, &p, 8);
  memcpy(params + 8, &off, 8);
  memcpy(params + 16, &v, 4);
  emu_launch_cfg cfg;
  emu_launch_cfg_init(&cfg);
  cfg.block[0] = block;
  cfg.params = params;
  cfg.params_size = sizeof params;
  cfg.oob = oob;
  return emu_launch(E->em, k, &cfg, NULL, st, E->err, sizeof E->err);
}

static void test_sloppy_programs(void) {
  env E;
  CU_ASSERT_EQUAL_FATAL(env_load(&E, slack_ptx), 0);
  uint64_t buf;
  CU_ASSERT_EQUAL_FATAL(emu_malloc(E.d, 256, &buf, E.err, sizeof E.err), 0);
  emu_stats st;
  uint32_t got = 0;
  /* 64 KiB past a 256-byte buffer: its 2 MiB page */
  CU_ASSERT_EQUAL(run_slack(&E, "put", buf, 65536, 1234, 1, EMU_OOB_WARN, &st), 0);
  CHECKF(st.oob_accesses == 1, "the write into the mapped page is counted (%llu)",
        (unsigned long long)st.oob_accesses);
  CHECKF(strstr(st.oob_first, "unmapped global write") &&
            strstr(st.oob_first, "65280 bytes past the end of allocation"),
        "the first one names the nearest allocation and the distance (%s)", st.oob_first);
  CU_ASSERT_EQUAL(run_slack(&E, "get", buf, 65536, 0, 1, EMU_OOB_WARN, &st), 0);
  emu_memcpy_dtoh(E.d, &got, buf, 4, E.err, sizeof E.err);
  CHECKF(got == 1234, "a later launch reads back what was written there (%u)", got);
  CU_ASSERT_EQUAL(run_slack(&E, "get", buf, 131072, 0, 1, EMU_OOB_WARN, &st), 0);
  emu_memcpy_dtoh(E.d, &got, buf, 4, E.err, sizeof E.err);
  CHECKF(got == 0 && st.oob_accesses == 1, "where nothing was written it reads zeros");
  /* under --oob error the same write fails, naming the nearest allocation */
  CU_ASSERT_EQUAL(run_slack(&E, "put", buf, 65536, 1, 1, EMU_OOB_ERROR, &st), -1);
  char want[256];
  snprintf(want, sizeof want,
           "unmapped global write of 4 bytes at 0x%llx (65280 bytes past the end of allocation "
           "0x%llx+256, the nearest)",
           (unsigned long long)(buf + 65536), (unsigned long long)buf);
  CHECKF(strstr(E.err, want) != NULL, "error: %s (want %s)", E.err, want);
  /* past every mapped page: an error under warn too */
  uint64_t far = 4ull << 20;
  CU_ASSERT_EQUAL(run_slack(&E, "put", buf, far, 1, 1, EMU_OOB_WARN, &st), -1);
  CHECKF(strstr(E.err, "unmapped global write") && strstr(E.err, "past the end of allocation"),
        "beyond the mapped pages the access fails (%s)", E.err);
  /* shared past the CTA's window: an extern array launched with 0 bytes */
  static uint32_t out[32];
  uint64_t o;
  CU_ASSERT_EQUAL_FATAL(emu_malloc(E.d, sizeof out, &o, E.err, sizeof E.err), 0);
  CU_ASSERT_EQUAL(run_slack(&E, "shx", o, 0, 0, 32, EMU_OOB_ERROR, &st), -1);
  CHECKF(strstr(E.err, "out-of-bounds shared write") && strstr(E.err, "window is 0 bytes"),
        "error: the access past a 0-byte window fails (%s)", E.err);
  CU_ASSERT_EQUAL(run_slack(&E, "shx", o, 0, 0, 32, EMU_OOB_WARN, &st), 0);
  emu_memcpy_dtoh(E.d, out, o, sizeof out, E.err, sizeof E.err);
  int ok = 1;
  for (unsigned t = 0; t < 32; t++) ok &= out[t] == (t ^ 1) + 100;
  CHECKF(ok && st.oob_accesses == 64, "warn: the SM's memory past the window works for the CTA, "
        "every access counted (%llu)", (unsigned long long)st.oob_accesses);
  CHECKF(strstr(st.oob_first, "shared") != NULL, "the first one is named (%s)", st.oob_first);
  /* a texture handle nobody made */
  CU_ASSERT_EQUAL(run_slack(&E, "badtex", o, 77, 0, 1, EMU_OOB_ERROR, &st), -1);
  CU_ASSERT_EQUAL(run_slack(&E, "badtex", o, 77, 0, 1, EMU_OOB_WARN, &st), 0);
  float f = 0;
  emu_memcpy_dtoh(E.d, &f, o, 4, E.err, sizeof E.err);
  CHECKF(f == 1.0f && st.oob_accesses == 1, "warn: a bad texture handle reads zeros, counted");
  env_free(&E);
}

/* A launch stopped by its budget keeps the CTAs that finished (cfg.partial):
   CTA 7 of 8 loops for ever, the others add one to their element. */
static const char *spin_ptx = HDR
    ".visible .entry spin(.param .u64 p)\n"
    "{\n"
    "  .reg .pred %p<2>;\n  .reg .b32 %r<4>;\n  .reg .b64 %rd<4>;\n"
    "  ld.param.u64 %rd1, [p];\n  mov.u32 %r1, %ctaid.x;\n"
    "  setp.ne.u32 %p1, %r1, 7;\n  @%p1 bra $L_work;\n"
    "$L_spin:\n  add.s32 %r2, %r2, 1;\n  bra.uni $L_spin;\n"
    "$L_work:\n  mul.wide.u32 %rd2, %r1, 4;\n  add.s64 %rd3, %rd1, %rd2;\n"
    "  ld.global.u32 %r3, [%rd3];\n  add.s32 %r3, %r3, 1;\n  st.global.u32 [%rd3], %r3;\n"
    "  ret;\n}\n";

static void test_partial_launch(void) {
  env E;
  CU_ASSERT_EQUAL_FATAL(env_load(&E, spin_ptx), 0);
  uint64_t buf;
  CU_ASSERT_EQUAL_FATAL(emu_malloc(E.d, 64, &buf, E.err, sizeof E.err), 0);
  emu_launch_cfg cfg;
  emu_launch_cfg_init(&cfg);
  cfg.insn_budget = 1u << 20;
  cfg.threads = 1;
  feat_vec fv;
  feat_init(&fv);
  /* without cfg.partial: an error, nothing recorded */
  CU_ASSERT_EQUAL(run1(&E, "spin", 8, 32, buf, &cfg, &fv), -1);
  CHECKF(fv.n == 0 && strstr(E.err, "instruction budget"), "a stopped launch fails (%s)", E.err);
  cfg.partial = 1;
  emu_stats st;
  unsigned char params[16];
  memcpy(params, &buf, 8);
  cfg.grid[0] = 8;
  cfg.block[0] = 32;
  cfg.params = params;
  cfg.params_size = 8;
  int rc = emu_launch(E.em, "spin", &cfg, &fv, &st, E.err, sizeof E.err);
  CHECKF(rc == 0 && st.partial && st.fault == EMU_FAULT_LIMIT && strstr(E.err, "budget"),
         "with cfg.partial it is recorded, partial, the reason kept (rc %d: %s)", rc, E.err);
  CHECKF(st.ctas_run == 7 && feat_get(&fv, "emu.ctas_emulated", -1) == 7 &&
             feat_get(&fv, "emu.partial", -1) == 1 && feat_get(&fv, "launch.ctas", -1) == 8,
         "from the 7 CTAs that finished (%llu)", (unsigned long long)st.ctas_run);
  /* each finished CTA executes st.global once per thread: 7 x 32, scaled to 8 CTAs;
     the stopped CTA's spinning is taken back */
  CHECKF(feat_get(&fv, "op.st.global.u32", -1) == 8 * 32, "counts of the finished CTAs scaled "
         "to the grid (%g)", feat_get(&fv, "op.st.global.u32", -1));
  CHECKF(feat_get(&fv, "op.bra.uni", 0) == 0, "nothing of the stopped CTA (%g)",
         feat_get(&fv, "op.bra.uni", 0));
  uint32_t h[8];
  emu_memcpy_dtoh(E.d, h, buf, sizeof h, E.err, sizeof E.err);
  CHECKF(h[0] == 2 && h[6] == 2 && h[7] == 0, "the finished CTAs' results are written (both launches)");
  feat_free(&fv);
  /* a stop flag stops it the same way; none finished: an error */
  int stop = 1;
  cfg.insn_budget = 0;
  cfg.stop = &stop;
  feat_init(&fv);
  rc = emu_launch(E.em, "spin", &cfg, &fv, &st, E.err, sizeof E.err);
  CHECKF(rc == -1 && st.fault == EMU_FAULT_LIMIT && fv.n == 0 && strstr(E.err, "asked to stop"),
         "stopped before any CTA finished: a failed launch (rc %d, %zu features: %s)", rc, fv.n,
         E.err);
  feat_free(&fv);
  env_free(&E);
}

/* Device assert(): nvcc calls __assertfail(message, file, line, function,
   charsize) when the condition is false. */
static const char *assert_ptx = HDR
    ".extern .func __assertfail(.param .b64 a0, .param .b64 a1, .param .b32 a2,"
    " .param .b64 a3, .param .b64 a4);\n"
    ".global .align 1 .b8 msg[6] = {120, 32, 62, 32, 48, 0};\n"
    ".global .align 1 .b8 file[5] = {97, 46, 99, 117, 0};\n"
    ".global .align 1 .b8 fname[4] = {107, 40, 41, 0};\n"
    ".visible .entry other(.param .u64 buf)\n"
    "{\n"
    "  ret;\n"
    "}\n"
    ".visible .entry k(.param .u64 buf)\n"
    "{\n"
    "  .reg .pred %p<2>;\n"
    "  .reg .b32 %r<4>;\n"
    "  .reg .b64 %rd<10>;\n"
    "  ld.param.u64 %rd1, [buf];\n"
    "  mov.u32 %r1, %tid.x;\n"
    "  mul.wide.u32 %rd2, %r1, 4;\n"
    "  add.s64 %rd3, %rd1, %rd2;\n"
    "  ld.global.u32 %r2, [%rd3];\n"
    "  setp.gt.s32 %p1, %r2, 0;\n"
    "  @%p1 bra OK;\n"
    "  mov.u64 %rd4, msg;\n"
    "  cvta.global.u64 %rd5, %rd4;\n"
    "  mov.u64 %rd6, file;\n"
    "  cvta.global.u64 %rd7, %rd6;\n"
    "  mov.u64 %rd8, fname;\n"
    "  cvta.global.u64 %rd9, %rd8;\n"
    "  {\n"
    "  .param .b64 param0;\n"
    "  st.param.b64 [param0], %rd5;\n"
    "  .param .b64 param1;\n"
    "  st.param.b64 [param1], %rd7;\n"
    "  .param .b32 param2;\n"
    "  st.param.b32 [param2], 42;\n"
    "  .param .b64 param3;\n"
    "  st.param.b64 [param3], %rd9;\n"
    "  .param .b64 param4;\n"
    "  st.param.b64 [param4], 1;\n"
    "  call.uni __assertfail, (param0, param1, param2, param3, param4);\n"
    "  }\n"
    "OK:\n"
    "  ret;\n"
    "}\n";

static void test_device_assert(void) {
  env E;
  int rc = env_load(&E, assert_ptx);
  if (rc) fprintf(stderr, "\n%s\n", E.err);
  CHECK(rc == 0, "a module calling __assertfail loads");
  if (rc) { env_free(&E); return; }
  uint64_t buf;
  CU_ASSERT_EQUAL_FATAL(emu_malloc(E.d, 64, &buf, E.err, sizeof E.err), 0);
  int32_t h[16];
  for (int i = 0; i < 16; i++) h[i] = i == 5 ? 0 : 1;
  emu_memcpy_htod(E.d, buf, h, sizeof h, E.err, sizeof E.err);
  emu_launch_cfg cfg;
  emu_launch_cfg_init(&cfg);
  CHECK(run1(&E, "other", 1, 16, buf, &cfg, NULL) == 0, "its other kernels run");
  emu_stats st;
  unsigned char params[8];
  memcpy(params, &buf, 8);
  cfg.block[0] = 16;
  cfg.params = params;
  cfg.params_size = 8;
  CU_ASSERT_EQUAL(emu_launch(E.em, "k", &cfg, NULL, &st, E.err, sizeof E.err), -1);
  CU_ASSERT_STRING_EQUAL(E.err, "kernel k: CTA (0,0,0) thread (5,0,0): test.ptx:41: call.uni: "
                                "device assertion `x > 0` failed at a.cu:42 in k()");
  CHECK(st.fault == EMU_FAULT_ASSERT, "a failed assertion is an EMU_FAULT_ASSERT");
  h[5] = 3;
  emu_memcpy_htod(E.d, buf, h, sizeof h, E.err, sizeof E.err);
  CHECK(emu_launch(E.em, "k", &cfg, NULL, &st, E.err, sizeof E.err) == 0,
        "a passing assertion costs nothing");
  env_free(&E);
}

/* Configurations no GPU launches are refused, naming the limit. */
static void test_launch_limits(void) {
  env E;
  CU_ASSERT_EQUAL_FATAL(env_load(&E, wrap32_ptx), 0);
  uint64_t buf;
  CU_ASSERT_EQUAL_FATAL(emu_malloc(E.d, 4096, &buf, E.err, sizeof E.err), 0);
  unsigned char params[8];
  memcpy(params, &buf, 8);
  static const struct { unsigned g[3], b[3]; size_t sh; const char *what; } bad[] = {
      {{1, 65536, 1}, {32, 1, 1}, 0, "grid (1,65536,1) exceeds (2147483647,65535,65535)"},
      {{1, 1, 65536}, {32, 1, 1}, 0, "grid (1,1,65536) exceeds"},
      {{1, 1, 1}, {1, 1, 65}, 0, "block (1,1,65) exceeds (1024,1024,64)"},
      {{1, 1, 1}, {32, 33, 1}, 0, "1056 threads per block exceeds 1024"},
      {{1, 1, 1}, {32, 1, 1}, 1u << 30, "of shared memory per CTA"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    emu_launch_cfg cfg;
    emu_launch_cfg_init(&cfg);
    memcpy(cfg.grid, bad[i].g, sizeof cfg.grid);
    memcpy(cfg.block, bad[i].b, sizeof cfg.block);
    cfg.shared_bytes = bad[i].sh;
    cfg.params = params;
    cfg.params_size = 8;
    emu_stats st;
    feat_vec fv;
    feat_init(&fv);
    int rc = emu_launch(E.em, "k", &cfg, &fv, &st, E.err, sizeof E.err);
    CHECK(rc == -1 && strstr(E.err, bad[i].what) && strstr(E.err, "no GPU launches it") &&
              st.fault == EMU_FAULT_CONFIG && fv.n == 0,
          "an impossible configuration is refused, naming the limit");
    feat_free(&fv);
  }
  emu_launch_cfg cfg;
  emu_launch_cfg_init(&cfg);
  cfg.block[0] = 32;
  cfg.grid[1] = 65535;
  cfg.shared_bytes = EMU_MAX_SHARED - 256;
  cfg.sample_ctas = 2;
  cfg.params = params;
  cfg.params_size = 8;
  CHECK(emu_launch(E.em, "k", &cfg, NULL, NULL, E.err, sizeof E.err) == 0,
        "the largest grid y and shared memory a GPU allows run");
  env_free(&E);
}

static void test_misaligned(void) {
  env E;
  CU_ASSERT_EQUAL_FATAL(env_load(&E, oob_ptx), 0);
  uint64_t buf;
  CU_ASSERT_EQUAL_FATAL(emu_malloc(E.d, 64, &buf, E.err, sizeof E.err), 0);
  emu_launch_cfg cfg;
  emu_launch_cfg_init(&cfg);
  CU_ASSERT_EQUAL(run1(&E, "k", 1, 4, buf, &cfg, NULL), -1);
  char want[256];
  snprintf(want, sizeof want,
           "kernel k: CTA (0,0,0) thread (0,0,0): test.ptx:14: st.global.u32: "
           "misaligned global write of 4 bytes at 0x%llx",
           (unsigned long long)(buf + 2));
  CHECK(strncmp(E.err, want, strlen(want)) == 0,
                    "the message names kernel, CTA, thread, line, key and address");
  env_free(&E);
}

/* ------------------------------------------------------------ budget -- */

static const char *endless_ptx = HDR
    ".visible .entry k()\n"
    "{\n"
    "  .reg .b32 %r<2>;\n"
    "  mov.u32 %r1, 0;\n"
    "L:\n"
    "  add.u32 %r1, %r1, 1;\n"
    "  bra.uni L;\n"
    "}\n";

static void test_budget_and_time(void) {
  env E;
  CU_ASSERT_EQUAL_FATAL(env_load(&E, endless_ptx), 0);
  emu_launch_cfg cfg;
  emu_launch_cfg_init(&cfg);
  cfg.grid[0] = 4;
  cfg.block[0] = 64;
  cfg.insn_budget = 100000;
  CU_ASSERT_EQUAL(emu_launch(E.em, "k", &cfg, NULL, NULL, E.err, sizeof E.err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(E.err, "exceeded the instruction budget of 100000"));
  CU_ASSERT_PTR_NOT_NULL(strstr(E.err, "kernel k: CTA ("));
  cfg.insn_budget = 0;
  cfg.time_limit_s = 0.2;
  CU_ASSERT_EQUAL(emu_launch(E.em, "k", &cfg, NULL, NULL, E.err, sizeof E.err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(E.err, "exceeded the time limit of 0.2 s"));
  env_free(&E);
}

/*
 * The time limit inside a huge basic block: one block of 200,000 adds in an
 * endless loop.  The clock used to be read every 256 block entries, that is
 * every 51 M warp-instructions here (0.6-3 s on one thread); a 0.1 s limit
 * must stop the launch within a fraction of that.
 */
static void test_time_limit_huge_block(void) {
  enum { NADD = 200000 };
  size_t cap = NADD * 32 + 1024, len = 0;
  char *ptx = malloc(cap);
  CU_ASSERT_PTR_NOT_NULL_FATAL(ptx);
  len += (size_t)snprintf(ptx + len, cap - len,
                          HDR ".visible .entry k()\n{\n  .reg .b32 %%r<2>;\n"
                          "  mov.u32 %%r1, 0;\nL:\n");
  for (int i = 0; i < NADD; i++)
    len += (size_t)snprintf(ptx + len, cap - len, "  add.u32 %%r1, %%r1, 1;\n");
  snprintf(ptx + len, cap - len, "  bra.uni L;\n}\n");
  env E;
  CU_ASSERT_EQUAL_FATAL(env_load(&E, ptx), 0);
  free(ptx);
  emu_launch_cfg cfg;
  emu_launch_cfg_init(&cfg);
  cfg.block[0] = 32;
  cfg.threads = 1;
  cfg.time_limit_s = 0.1;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  CU_ASSERT_EQUAL(emu_launch(E.em, "k", &cfg, NULL, NULL, E.err, sizeof E.err), -1);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
  CU_ASSERT_PTR_NOT_NULL(strstr(E.err, "exceeded the time limit of 0.1 s"));
  CHECK(s < 0.4, "a 0.1 s limit stops a launch inside a 200,000-instruction block within 0.4 s");
  env_free(&E);
}

/* ------------------------------------------------------------- calls -- */

static const char *call_ptx = HDR
    ".func (.param .b32 rv) addmul(.param .b32 a, .param .b32 b)\n"
    "{\n"
    "  .reg .b32 %r<4>;\n"
    "  ld.param.u32 %r1, [a];\n"
    "  ld.param.u32 %r2, [b];\n"
    "  mad.lo.s32 %r3, %r1, %r2, 7;\n"
    "  st.param.b32 [rv], %r3;\n"
    "  ret;\n"
    "}\n"
    ".visible .entry k(.param .u64 out)\n"
    "{\n"
    "  .reg .b32 %r<4>;\n"
    "  .reg .b64 %rd<4>;\n"
    "  mov.u32 %r1, %tid.x;\n"
    "  {\n"
    "  .param .b32 param0;\n"
    "  st.param.b32 [param0], %r1;\n"
    "  .param .b32 param1;\n"
    "  st.param.b32 [param1], 3;\n"
    "  .param .b32 retval0;\n"
    "  call.uni (retval0), addmul, (param0, param1);\n"
    "  ld.param.b32 %r2, [retval0];\n"
    "  }\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  mul.wide.u32 %rd2, %r1, 4;\n"
    "  add.s64 %rd3, %rd1, %rd2;\n"
    "  st.global.u32 [%rd3], %r2;\n"
    "  ret;\n"
    "}\n";

static void test_call_ret(void) {
  env E;
  int rc = env_load(&E, call_ptx);
  if (rc) fprintf(stderr, "\n%s\n", E.err);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  uint64_t out;
  CU_ASSERT_EQUAL_FATAL(emu_malloc(E.d, 40 * 4, &out, E.err, sizeof E.err), 0);
  emu_launch_cfg cfg;
  emu_launch_cfg_init(&cfg);
  feat_vec fv;
  feat_init(&fv);
  rc = run1(&E, "k", 1, 40, out, &cfg, &fv);
  if (rc) fprintf(stderr, "\n%s\n", E.err);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  uint32_t h[40];
  emu_memcpy_dtoh(E.d, h, out, sizeof h, E.err, sizeof E.err);
  int ok = 1;
  for (unsigned t = 0; t < 40; t++) ok &= h[t] == t * 3 + 7;
  CHECK(ok, "the callee saw both arguments and returned a*b+7");
  /* callee instructions count under their own keys, once per thread */
  CU_ASSERT_EQUAL(feat_get(&fv, "op.mad.lo.s32", -1), 40);
  CU_ASSERT_EQUAL(feat_get(&fv, "op.ld.param.u32", -1), 80);
  CU_ASSERT_EQUAL(feat_get(&fv, "op.call.uni", -1), 40);
  CU_ASSERT_EQUAL(feat_get(&fv, "op.ret", -1), 80);
  feat_free(&fv);
  env_free(&E);
}

/* ------------------------------------------------------------ printf -- */

static const char *printf_ptx = HDR
    ".extern .func (.param .b32 func_retval0) vprintf (.param .b64 vprintf_param_0, "
    ".param .b64 vprintf_param_1);\n"
    ".global .align 1 .b8 fmt[23] = {99,61,37,100,32,116,61,37,100,32,118,61,37,46,49,"
    "102,32,115,61,37,115,10,0};\n"
    ".global .align 1 .b8 word[3] = {104,105,0};\n"
    ".visible .entry k()\n"
    "{\n"
    "  .local .align 8 .b8 __local_depot0[24];\n"
    "  .reg .b64 %SP;\n"
    "  .reg .b64 %SPL;\n"
    "  .reg .b32 %r<4>;\n"
    "  .reg .b64 %rd<6>;\n"
    "  mov.u64 %SPL, __local_depot0;\n"
    "  cvta.local.u64 %SP, %SPL;\n"
    "  mov.u32 %r1, %ctaid.x;\n"
    "  mov.u32 %r2, %tid.x;\n"
    "  st.local.u32 [%SPL], %r1;\n"
    "  st.local.u32 [%SPL+4], %r2;\n"
    "  mov.b64 %rd1, 0d3FF8000000000000;\n"
    "  st.local.u64 [%SPL+8], %rd1;\n"
    "  mov.u64 %rd2, word;\n"
    "  cvta.global.u64 %rd3, %rd2;\n"
    "  st.local.u64 [%SPL+16], %rd3;\n"
    "  mov.u64 %rd4, fmt;\n"
    "  cvta.global.u64 %rd5, %rd4;\n"
    "  {\n"
    "  .param .b64 param0;\n"
    "  st.param.b64 [param0], %rd5;\n"
    "  .param .b64 param1;\n"
    "  st.param.b64 [param1], %SP;\n"
    "  .param .b32 retval0;\n"
    "  call.uni (retval0), vprintf, (param0, param1);\n"
    "  ld.param.b32 %r3, [retval0];\n"
    "  }\n"
    "  ret;\n"
    "}\n";

static void test_printf(void) {
  env E;
  int rc = env_load(&E, printf_ptx);
  if (rc) fprintf(stderr, "\n%s\n", E.err);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  const char *want =
      "c=0 t=0 v=1.5 s=hi\nc=0 t=1 v=1.5 s=hi\n"
      "c=1 t=0 v=1.5 s=hi\nc=1 t=1 v=1.5 s=hi\n"
      "c=2 t=0 v=1.5 s=hi\nc=2 t=1 v=1.5 s=hi\n";
  for (int threads = 1; threads <= 2; threads++) {
    FILE *f = tmpfile();
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    emu_launch_cfg cfg;
    emu_launch_cfg_init(&cfg);
    cfg.grid[0] = 3;
    cfg.block[0] = 2;
    cfg.threads = threads;
    cfg.printf_out = f;
    rc = emu_launch(E.em, "k", &cfg, NULL, NULL, E.err, sizeof E.err);
    if (rc) fprintf(stderr, "\n%s\n", E.err);
    CU_ASSERT_EQUAL(rc, 0);
    char buf[512] = {0};
    rewind(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    CU_ASSERT_STRING_EQUAL(buf, want); /* CTA order, lane order */
  }
  env_free(&E);
}

/* ------------------------------------------------- warp collectives -- */

static const char *warp_ptx = HDR
    ".visible .entry k(.param .u64 out)\n"
    "{\n"
    "  .reg .pred %p<4>;\n"
    "  .reg .b32 %r<16>;\n"
    "  .reg .b64 %rd<4>;\n"
    "  mov.u32 %r1, %tid.x;\n"
    "  shfl.sync.bfly.b32 %r2, %r1, 16, 31, -1;\n"
    "  add.u32 %r3, %r1, %r2;\n"
    "  shfl.sync.bfly.b32 %r2, %r3, 8, 31, -1;\n"
    "  add.u32 %r3, %r3, %r2;\n"
    "  shfl.sync.bfly.b32 %r2, %r3, 4, 31, -1;\n"
    "  add.u32 %r3, %r3, %r2;\n"
    "  shfl.sync.bfly.b32 %r2, %r3, 2, 31, -1;\n"
    "  add.u32 %r3, %r3, %r2;\n"
    "  shfl.sync.bfly.b32 %r2, %r3, 1, 31, -1;\n"
    "  add.u32 %r3, %r3, %r2;\n"          /* sum of 0..31 = 496 */
    "  and.b32 %r4, %r1, 1;\n"
    "  setp.ne.u32 %p1, %r4, 0;\n"
    "  vote.sync.ballot.b32 %r5, %p1, -1;\n" /* 0xaaaaaaaa */
    "  shfl.sync.down.b32 %r6|%p2, %r1, 1, 31, -1;\n"
    "  selp.u32 %r7, 1, 0, %p2;\n"
    "  redux.sync.max.u32 %r8, %r1, -1;\n"
    "  @%p1 bra SKIP;\n"
    "  activemask.b32 %r9;\n"             /* even lanes only: 0x55555555 */
    "SKIP:\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  mul.wide.u32 %rd2, %r1, 32;\n"
    "  add.s64 %rd3, %rd1, %rd2;\n"
    "  st.global.v4.u32 [%rd3], {%r3, %r5, %r6, %r7};\n"
    "  st.global.v2.u32 [%rd3+16], {%r8, %r9};\n"
    "  ret;\n"
    "}\n";

static void test_warp_collectives(void) {
  env E;
  int rc = env_load(&E, warp_ptx);
  if (rc) fprintf(stderr, "\n%s\n", E.err);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  uint64_t out;
  CU_ASSERT_EQUAL_FATAL(emu_malloc(E.d, 32 * 32, &out, E.err, sizeof E.err), 0);
  emu_launch_cfg cfg;
  emu_launch_cfg_init(&cfg);
  rc = run1(&E, "k", 1, 32, out, &cfg, NULL);
  if (rc) fprintf(stderr, "\n%s\n", E.err);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  uint32_t h[32 * 8];
  emu_memcpy_dtoh(E.d, h, out, sizeof h, E.err, sizeof E.err);
  int sum = 1, ballot = 1, down = 1, pred = 1, mx = 1, am = 1;
  for (unsigned l = 0; l < 32; l++) {
    const uint32_t *o = h + l * 8;
    sum &= o[0] == 496;
    ballot &= o[1] == 0xaaaaaaaau;
    down &= o[2] == (l < 31 ? l + 1 : l);
    pred &= o[3] == (l < 31);
    mx &= o[4] == 31;
    if (!(l & 1)) am &= o[5] == 0x55555555u;
  }
  CHECK(sum, "a butterfly reduction gives every lane the warp sum");
  CHECK(ballot, "ballot of odd lanes is 0xaaaaaaaa");
  CHECK(down, "shfl.down reads lane+1, the last lane keeps its own value");
  CHECK(pred, "shfl.down's predicate is false only past the clamp");
  CHECK(mx, "redux.max over the warp is 31");
  CHECK(am, "activemask inside the even-lane branch is 0x55555555");
  env_free(&E);
}

/* ---------------------------------------- thread count, sampling -- */

static const char *atomics_ptx = HDR
    ".visible .entry k(.param .u64 buf)\n"
    "{\n"
    "  .reg .pred %p<2>;\n"
    "  .reg .b32 %r<8>;\n"
    "  .reg .f32 %f<3>;\n"
    "  .reg .b64 %rd<6>;\n"
    "  ld.param.u64 %rd1, [buf];\n"
    "  mov.u32 %r1, %tid.x;\n"
    "  mov.u32 %r2, %ctaid.x;\n"
    "  and.b32 %r3, %r1, 7;\n"
    "  mul.wide.u32 %rd2, %r3, 4;\n"
    "  add.s64 %rd3, %rd1, %rd2;\n"
    "  atom.global.add.u32 %r4, [%rd3], 1;\n"
    "  red.global.max.u32 [%rd1+32], %r2;\n"
    "  cvt.rn.f32.u32 %f1, %r3;\n"
    "  atom.global.add.f32 %f2, [%rd1+36], %f1;\n"
    "  setp.lt.u32 %p1, %r1, 5;\n"
    "  @%p1 red.global.add.u64 [%rd1+40], 3;\n"
    "  ret;\n"
    "}\n";

static void test_threads_and_sampling(void) {
  env E;
  int rc = env_load(&E, atomics_ptx);
  if (rc) fprintf(stderr, "\n%s\n", E.err);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  uint64_t buf;
  CU_ASSERT_EQUAL_FATAL(emu_malloc(E.d, 48, &buf, E.err, sizeof E.err), 0);
  feat_vec fv[2];
  unsigned char mem[2][48];
  for (int t = 0; t < 2; t++) {
    emu_memset(E.d, buf, 0, 48, E.err, sizeof E.err);
    emu_launch_cfg cfg;
    emu_launch_cfg_init(&cfg);
    cfg.threads = t + 1;
    feat_init(&fv[t]);
    emu_stats st;
    /* 2 threads: a team from the first CTA (the launch is too small to
       get one otherwise) */
    int was = emu__team_always(t == 1);
    rc = run1s(&E, "k", 40, 96, buf, &cfg, &fv[t], &st);
    emu__team_always(was);
    if (rc) fprintf(stderr, "\n%s\n", E.err);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    if (t == 1) CHECK(st.team == 2, "the 2-thread launch ran on a team of 2");
    emu_memcpy_dtoh(E.d, mem[t], buf, 48, E.err, sizeof E.err);
  }
  CHECK(memcmp(mem[0], mem[1], 48) == 0,
                    "1 and 2 threads leave the same memory");
  int same = fv[0].n == fv[1].n;
  for (size_t i = 0; same && i < fv[0].n; i++)
    same = feat_get(&fv[1], fv[0].names[i], -1) == fv[0].vals[i];
  CHECK(same, "1 and 2 threads give identical features");
  uint32_t cnt[8];
  memcpy(cnt, mem[0], 32);
  CU_ASSERT_EQUAL(cnt[0], 40 * 12);         /* 96 threads / 8 bins x 40 CTAs */
  uint32_t mx;
  memcpy(&mx, mem[0] + 32, 4);
  CU_ASSERT_EQUAL(mx, 39);
  float fs;
  memcpy(&fs, mem[0] + 36, 4);
  CU_ASSERT_EQUAL(fs, 40 * 12 * 28.0f);     /* 12 x (0+..+7) per CTA, exact */
  uint64_t s64;
  memcpy(&s64, mem[0] + 40, 8);
  CU_ASSERT_EQUAL(s64, 40 * 5 * 3);         /* guarded red: 5 lanes per CTA */
  CU_ASSERT_EQUAL(feat_get(&fv[0], "op.red.global.add.u64", -1), 40 * 96);
  CU_ASSERT_EQUAL(feat_get(&fv[0], "mem.global_atomic_bytes", -1),
                  40 * (96 * 4 + 96 * 4 + 96 * 4 + 5 * 8));
  /* sampled: 7 of 40 CTAs, counts scaled by 40/7 */
  emu_launch_cfg cfg;
  emu_launch_cfg_init(&cfg);
  cfg.sample_ctas = 7;
  feat_vec sv;
  feat_init(&sv);
  emu_stats st;
  unsigned char params[8];
  memcpy(params, &buf, 8);
  cfg.grid[0] = 40;
  cfg.block[0] = 96;
  cfg.params = params;
  cfg.params_size = 8;
  rc = emu_launch(E.em, "k", &cfg, &sv, &st, E.err, sizeof E.err);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  CU_ASSERT_EQUAL(st.sampled, 1);
  CU_ASSERT_EQUAL(st.ctas_run, 7);
  CU_ASSERT_EQUAL(st.ctas_total, 40);
  CHECK(feat_get(&sv, "emu.ctas_emulated", -1) == 7, "emu.ctas_emulated names the 7 CTAs run");
  CHECK(feat_get(&fv[0], "emu.ctas_emulated", -1) == 40, "a full launch emulates all 40 CTAs");
  int close = 1;
  for (size_t i = 0; i < fv[0].n; i++) {
    if (strcmp(fv[0].names[i], "mem.footprint_bytes") == 0 ||
        strncmp(fv[0].names[i], "emu.", 4) == 0)
      continue;
    double full = fv[0].vals[i], smp = feat_get(&sv, fv[0].names[i], -1);
    if (full == 0 ? smp != 0 : fabs(smp - full) / full > 0.01) {
      close = 0;
      fprintf(stderr, "\n%s: full %g sampled %g\n", fv[0].names[i], full, smp);
    }
  }
  CHECK(close, "sampled counts are within 1% of the full counts");
  feat_free(&sv);
  feat_free(&fv[0]);
  feat_free(&fv[1]);
  env_free(&E);
}

/* The footprint of a sampled launch: thread i reads one float of the
   16-byte struct aos[i] (a quarter of each sector) and table[i % 256],
   which every CTA shares, and writes out[i].  Scaling the sample's bytes
   counted the table once per sampled CTA times the scale. */
static const char *foot_ptx = HDR
    ".visible .entry k(.param .u64 aos, .param .u64 table, .param .u64 out)\n"
    "{\n"
    "  .reg .b32 %r<8>;\n"
    "  .reg .f32 %f<4>;\n"
    "  .reg .b64 %rd<12>;\n"
    "  ld.param.u64 %rd1, [aos];\n"
    "  ld.param.u64 %rd2, [table];\n"
    "  ld.param.u64 %rd3, [out];\n"
    "  mov.u32 %r1, %ctaid.x;\n"
    "  mov.u32 %r2, %ntid.x;\n"
    "  mov.u32 %r3, %tid.x;\n"
    "  mad.lo.s32 %r4, %r1, %r2, %r3;\n"
    "  mul.wide.u32 %rd4, %r4, 16;\n"
    "  add.s64 %rd5, %rd1, %rd4;\n"
    "  ld.global.f32 %f1, [%rd5];\n"
    "  and.b32 %r5, %r4, 255;\n"
    "  mul.wide.u32 %rd6, %r5, 4;\n"
    "  add.s64 %rd7, %rd2, %rd6;\n"
    "  ld.global.f32 %f2, [%rd7];\n"
    "  add.f32 %f3, %f1, %f2;\n"
    "  mul.wide.u32 %rd8, %r4, 4;\n"
    "  add.s64 %rd9, %rd3, %rd8;\n"
    "  st.global.f32 [%rd9], %f3;\n"
    "  ret;\n"
    "}\n"
    ".visible .entry t(.param .u64 aos, .param .u64 table, .param .u64 out)\n"
    "{\n"
    "  .reg .pred %p<2>;\n"
    "  .reg .b32 %r<4>;\n"
    "  .reg .f32 %f<2>;\n"
    "  .reg .b64 %rd<4>;\n"
    "  ld.param.u64 %rd1, [table];\n"
    "  mov.u32 %r1, %tid.x;\n"
    "  mul.wide.u32 %rd2, %r1, 4;\n"
    "  add.s64 %rd3, %rd1, %rd2;\n"
    "  ld.global.f32 %f1, [%rd3];\n"
    "  setp.eq.f32 %p1, %f1, 0f461C4000;\n"
    "  @%p1 st.global.f32 [%rd3], %f1;\n"
    "  ret;\n"
    "}\n";

static void test_sampled_footprint(void) {
  env E;
  CU_ASSERT_EQUAL_FATAL(env_load(&E, foot_ptx), 0);
  enum { CTAS = 512, TPB = 64, N = CTAS * TPB };
  uint64_t aos, table, out;
  CU_ASSERT_EQUAL_FATAL(emu_malloc(E.d, (size_t)N * 16, &aos, E.err, sizeof E.err), 0);
  CU_ASSERT_EQUAL_FATAL(emu_malloc(E.d, 256 * 4, &table, E.err, sizeof E.err), 0);
  CU_ASSERT_EQUAL_FATAL(emu_malloc(E.d, (size_t)N * 4, &out, E.err, sizeof E.err), 0);
  unsigned char params[24];
  memcpy(params, &aos, 8);
  memcpy(params + 8, &table, 8);
  memcpy(params + 16, &out, 8);
  double foot[4];
  for (int smp = 0; smp < 4; smp++) {
    emu_launch_cfg cfg;
    emu_launch_cfg_init(&cfg);
    cfg.grid[0] = CTAS;
    cfg.block[0] = TPB;
    cfg.params = params;
    cfg.params_size = sizeof params;
    cfg.sample_ctas = smp & 1 ? 32 : 0;
    feat_vec fv;
    feat_init(&fv);
    CU_ASSERT_EQUAL_FATAL(emu_launch(E.em, smp < 2 ? "k" : "t", &cfg, &fv, NULL, E.err,
                                     sizeof E.err), 0);
    foot[smp] = feat_get(&fv, "mem.footprint_bytes", -1);
    feat_free(&fv);
  }
  CHECK(foot[0] == 4.0 * N + 1024 + 4.0 * N, "full: one float per struct, the table, out");
  CHECK(fabs(foot[1] / foot[0] - 1) < 0.02,
        "32 of 512 CTAs estimate the footprint within 2% (strided structs, a shared table)");
  CHECK(foot[2] == 256 && foot[3] == 256,
        "a table every CTA reads counts once, sampled or not (scaling said 16 times)");
  env_free(&E);
}

/* ------------------------------------------------------- unsupported -- */

static const char *unsupported_ptx = HDR
    ".visible .entry k()\n"
    "{\n"
    "  .reg .b32 %r<2>;\n"
    "  mov.u32 %r1, 1;\n"
    "  wgmma.fence.sync.aligned;\n"
    "  wgmma.commit_group.sync.aligned;\n"
    "  ret;\n"
    "}\n";

static void test_unsupported(void) {
  env E;
  CU_ASSERT_EQUAL(env_load(&E, unsupported_ptx), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(E.err, "test.ptx:8: unsupported instruction "
                                       "'wgmma.fence.sync.aligned'"));
  CU_ASSERT_PTR_NOT_NULL(strstr(E.err, "and 1 more"));
  CU_ASSERT_PTR_NULL(E.em);
  env_free(&E);
}

/* EMU_LOAD_PARTIAL (a program's module under kcast run): a kernel using an
   unsupported instruction, directly or through a function it calls, cannot
   run and says why; the module's other kernels run. */
static const char *partial_ptx = HDR
    ".extern .func (.param .b64 r) malloc(.param .b64 n);\n"
    ".func (.param .b64 r) grab(.param .b64 n)\n"
    "{\n"
    "  .reg .b64 %rd<3>;\n"
    "  ld.param.u64 %rd1, [n];\n"
    "  { .param .b64 a; st.param.b64 [a], %rd1; .param .b64 b;\n"
    "    call.uni (b), malloc, (a); ld.param.b64 %rd2, [b]; }\n"
    "  st.param.b64 [r], %rd2;\n"
    "  ret;\n"
    "}\n"
    ".visible .entry heap(.param .u64 out)\n"
    "{\n"
    "  .reg .b64 %rd<3>;\n"
    "  mov.u64 %rd1, 16;\n"
    "  { .param .b64 a; st.param.b64 [a], %rd1; .param .b64 b;\n"
    "    call.uni (b), grab, (a); ld.param.b64 %rd2, [b]; }\n"
    "  ret;\n"
    "}\n"
    ".visible .entry wg(.param .u64 out)\n"
    "{\n"
    "  wgmma.fence.sync.aligned;\n"
    "  ret;\n"
    "}\n"
    ".visible .entry k(.param .u64 out)\n"
    "{\n"
    "  .reg .b32 %r<2>;\n"
    "  .reg .b64 %rd<2>;\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  mov.u32 %r1, 7;\n"
    "  st.global.u32 [%rd1], %r1;\n"
    "  ret;\n"
    "}\n";

static void test_unsupported_partial(void) {
  env E;
  CU_ASSERT_EQUAL(env_load(&E, partial_ptx), -1); /* strict: the module fails */
  CU_ASSERT_PTR_NOT_NULL(strstr(E.err, "a call of malloc, device-side malloc/free"));
  emu_module_free(E.em);
  E.em = NULL;
  CU_ASSERT_EQUAL_FATAL(emu_module_load_ex(E.d, E.m, EMU_LOAD_PARTIAL, &E.em, E.err,
                                           sizeof E.err), 0);
  CU_ASSERT_PTR_NULL(emu_kernel_unsupported(E.em, "k")); /* k can run */
  const char *why = emu_kernel_unsupported(E.em, "heap");
  CU_ASSERT(why && strstr(why, "malloc")); /* through the function it calls */
  why = emu_kernel_unsupported(E.em, "wg");
  CU_ASSERT(why && strstr(why, "'wgmma.fence.sync.aligned'"));
  uint64_t a;
  CU_ASSERT_EQUAL_FATAL(emu_malloc(E.d, 64, &a, E.err, sizeof E.err), 0);
  emu_launch_cfg cfg;
  emu_launch_cfg_init(&cfg);
  emu_stats st;
  CU_ASSERT_EQUAL(run1s(&E, "k", 1, 1, a, &cfg, NULL, &st), 0); /* the others run */
  uint32_t v = 0;
  CU_ASSERT_EQUAL(emu_memcpy_dtoh(E.d, &v, a, 4, E.err, sizeof E.err), 0);
  CU_ASSERT_EQUAL(v, 7);
  CU_ASSERT_EQUAL(run1s(&E, "heap", 1, 1, a, &cfg, NULL, &st), -1); /* refused, named */
  CU_ASSERT_EQUAL(st.fault, EMU_FAULT_UNSUPPORTED);
  CU_ASSERT_PTR_NOT_NULL(strstr(E.err, "kernel heap cannot run"));
  env_free(&E);
}

/* Parameter layout: natural alignment, total rounded up. */
static void test_param_layout(void) {
  static const char *ptx = HDR
      ".visible .entry k(.param .u8 a, .param .u64 b, .param .u32 c, "
      ".param .align 16 .b8 s[20])\n{\n  ret;\n}\n";
  env E;
  CU_ASSERT_EQUAL_FATAL(env_load(&E, ptx), 0);
  size_t off[4], total;
  CU_ASSERT_EQUAL(emu_param_layout(ptx_find_func(E.m, "k"), off, &total), 0);
  CU_ASSERT_EQUAL(off[0], 0);
  CU_ASSERT_EQUAL(off[1], 8);
  CU_ASSERT_EQUAL(off[2], 16);
  CU_ASSERT_EQUAL(off[3], 32);
  CU_ASSERT_EQUAL(total, 64);
  env_free(&E);
}

/* Recursion with a lane-dependent depth: fact(n) for n = tid%8 + 1. */
static const char *fact_ptx = HDR
    ".func (.param .b32 rv) fact(.param .b32 n)\n"
    "{\n"
    "  .reg .pred %p<2>;\n"
    "  .reg .b32 %r<5>;\n"
    "  ld.param.u32 %r1, [n];\n"
    "  setp.le.u32 %p1, %r1, 1;\n"
    "  @%p1 bra BASE;\n"
    "  sub.u32 %r2, %r1, 1;\n"
    "  {\n"
    "  .param .b32 param0;\n"
    "  st.param.b32 [param0], %r2;\n"
    "  .param .b32 retval0;\n"
    "  call.uni (retval0), fact, (param0);\n"
    "  ld.param.b32 %r3, [retval0];\n"
    "  }\n"
    "  mul.lo.u32 %r4, %r3, %r1;\n"
    "  st.param.b32 [rv], %r4;\n"
    "  ret;\n"
    "BASE:\n"
    "  st.param.b32 [rv], 1;\n"
    "  ret;\n"
    "}\n"
    ".visible .entry k(.param .u64 out, .param .u32 add)\n"
    "{\n"
    "  .reg .b32 %r<5>;\n"
    "  .reg .b64 %rd<4>;\n"
    "  mov.u32 %r1, %tid.x;\n"
    "  and.b32 %r2, %r1, 7;\n"
    "  ld.param.u32 %r4, [add];\n"
    "  add.u32 %r2, %r2, %r4;\n"
    "  {\n"
    "  .param .b32 param0;\n"
    "  st.param.b32 [param0], %r2;\n"
    "  .param .b32 retval0;\n"
    "  call.uni (retval0), fact, (param0);\n"
    "  ld.param.b32 %r3, [retval0];\n"
    "  }\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  mul.wide.u32 %rd2, %r1, 4;\n"
    "  add.s64 %rd3, %rd1, %rd2;\n"
    "  st.global.u32 [%rd3], %r3;\n"
    "  ret;\n"
    "}\n";

static void test_recursion(void) {
  env E;
  int rc = env_load(&E, fact_ptx);
  if (rc) fprintf(stderr, "\n%s\n", E.err);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  uint64_t out;
  CU_ASSERT_EQUAL_FATAL(emu_malloc(E.d, 48 * 4, &out, E.err, sizeof E.err), 0);
  unsigned char params[16] = {0};
  memcpy(params, &out, 8);
  uint32_t add = 1;
  memcpy(params + 8, &add, 4);
  emu_launch_cfg cfg;
  emu_launch_cfg_init(&cfg);
  cfg.block[0] = 48;
  cfg.params = params;
  cfg.params_size = 12;
  feat_vec fv;
  feat_init(&fv);
  rc = emu_launch(E.em, "k", &cfg, &fv, NULL, E.err, sizeof E.err);
  if (rc) fprintf(stderr, "\n%s\n", E.err);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  uint32_t h[48];
  emu_memcpy_dtoh(E.d, h, out, sizeof h, E.err, sizeof E.err);
  static const uint32_t f[9] = {1, 1, 2, 6, 24, 120, 720, 5040, 40320};
  int ok = 1;
  double calls = 0;
  for (unsigned t = 0; t < 48; t++) {
    ok &= h[t] == f[t % 8 + 1];
    calls += t % 8 + 1; /* fact(n) is entered n times */
  }
  CHECK(ok, "every lane returned (tid%8+1)! through its own recursion depth");
  /* call.uni: one per kernel thread plus one per recursive step */
  CU_ASSERT_EQUAL(feat_get(&fv, "op.call.uni", -1), calls);
  CU_ASSERT_EQUAL(feat_get(&fv, "op.ld.param.u32", -1), calls + 48);
  /* a depth beyond the stack is an error, not a crash */
  add = 100000;
  memcpy(params + 8, &add, 4);
  cfg.block[0] = 1;
  rc = emu_launch(E.em, "k", &cfg, NULL, NULL, E.err, sizeof E.err);
  CU_ASSERT_EQUAL(rc, -1);
  CHECK(strstr(E.err, "call depth exceeds") || strstr(E.err, "stack overflow"),
        "runaway recursion stops with a call depth / stack message");
  feat_free(&fv);
  env_free(&E);
}

/* A barrier that only warp 0 reaches releases once the CTA's other warps
   have exited; bar.red.popc hands every waiting lane the count. */
static const char *partial_bar_ptx = HDR
    ".visible .entry k(.param .u64 out)\n"
    "{\n"
    "  .reg .pred %p<2>;\n"
    "  .reg .b32 %r<3>;\n"
    "  .reg .b64 %rd<4>;\n"
    "  mov.u32 %r1, %tid.x;\n"
    "  setp.ge.u32 %p1, %r1, 32;\n"
    "  @%p1 exit;\n"
    "  bar.red.popc.u32 %r2, 0, %p1;\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  mul.wide.u32 %rd2, %r1, 4;\n"
    "  add.s64 %rd3, %rd1, %rd2;\n"
    "  st.global.u32 [%rd3], %r2;\n"
    "  ret;\n"
    "}\n";

static void test_barrier_after_exit(void) {
  env E;
  int rc = env_load(&E, partial_bar_ptx);
  if (rc) fprintf(stderr, "\n%s\n", E.err);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  uint64_t out;
  CU_ASSERT_EQUAL_FATAL(emu_malloc(E.d, 32 * 4, &out, E.err, sizeof E.err), 0);
  emu_launch_cfg cfg;
  emu_launch_cfg_init(&cfg);
  rc = run1(&E, "k", 1, 128, out, &cfg, NULL);
  if (rc) fprintf(stderr, "\n%s\n", E.err);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  uint32_t h[32];
  emu_memcpy_dtoh(E.d, h, out, sizeof h, E.err, sizeof E.err);
  int ok = 1;
  for (unsigned t = 0; t < 32; t++) ok &= h[t] == 0;
  CHECK(ok, "warp 0 passed the barrier once warps 1-3 exited; popc of false is 0");
  env_free(&E);
}

/* ------------------------------------------------------ jump tables -- */

/* brx.idx: k switches on tid%4 through a table whose entries 0 and 2 share
   a case (warp 1 takes index 1 everywhere); kg is a guarded brx whose
   guard-false lanes fall through with out-of-range indices; ko indexes past
   its table. */
static const char *brx_ptx = HDR
    ".visible .entry k(.param .u64 out)\n"           /* line 4 */
    "{\n"
    "  .reg .pred %p<2>;\n"
    "  .reg .b32 %r<4>;\n"
    "  .reg .b64 %rd<4>;\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  cvta.to.global.u64 %rd1, %rd1;\n"
    "  mov.u32 %r1, %tid.x;\n"
    "  and.b32 %r2, %r1, 3;\n"
    "  setp.ge.u32 %p1, %r1, 32;\n"
    "  selp.b32 %r2, 1, %r2, %p1;\n"
    "  $L_tab: .branchtargets $L_a, $L_b, $L_a, $L_c;\n"
    "  brx.idx %r2, $L_tab;\n"
    "$L_c:\n"
    "  mov.u32 %r3, 30;\n"
    "  bra.uni $L_join;\n"
    "$L_a:\n"
    "  mov.u32 %r3, 10;\n"
    "  bra.uni $L_join;\n"
    "$L_b:\n"
    "  mov.u32 %r3, 20;\n"
    "$L_join:\n"
    "  add.u32 %r3, %r3, %r2;\n"
    "  mul.wide.u32 %rd2, %r1, 4;\n"
    "  add.s64 %rd3, %rd1, %rd2;\n"
    "  st.global.u32 [%rd3], %r3;\n"
    "  ret;\n"
    "}\n"
    ".visible .entry kg(.param .u64 out)\n"
    "{\n"
    "  .reg .pred %p<2>;\n"
    "  .reg .b32 %r<4>;\n"
    "  .reg .b64 %rd<4>;\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  cvta.to.global.u64 %rd1, %rd1;\n"
    "  mov.u32 %r1, %tid.x;\n"
    "  setp.lt.u32 %p1, %r1, 2;\n"
    "  @%p1 brx.idx %r1, $L_t;\n"
    "  mov.u32 %r3, 5;\n"
    "  bra.uni $L_j;\n"
    "  $L_t: .branchtargets $L_a, $L_b;\n"
    "$L_a:\n"
    "  mov.u32 %r3, 6;\n"
    "  bra.uni $L_j;\n"
    "$L_b:\n"
    "  mov.u32 %r3, 7;\n"
    "$L_j:\n"
    "  mul.wide.u32 %rd2, %r1, 4;\n"
    "  add.s64 %rd3, %rd1, %rd2;\n"
    "  st.global.u32 [%rd3], %r3;\n"
    "  ret;\n"
    "}\n"
    ".visible .entry ko(.param .u64 out)\n"
    "{\n"
    "  .reg .b32 %r<2>;\n"
    "  mov.u32 %r1, %tid.x;\n"
    "  $L_t: .branchtargets $L_a, $L_a, $L_a, $L_a;\n"
    "  brx.idx %r1, $L_t;\n"                          /* line 61 */
    "$L_a:\n"
    "  ret;\n"
    "}\n";

static void test_brx(void) {
  env E;
  int rc = env_load(&E, brx_ptx);
  if (rc) fprintf(stderr, "\n%s\n", E.err);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  uint64_t out;
  CU_ASSERT_EQUAL_FATAL(emu_malloc(E.d, 64 * 4, &out, E.err, sizeof E.err), 0);
  emu_launch_cfg cfg;
  emu_launch_cfg_init(&cfg);
  feat_vec fv;
  feat_init(&fv);
  rc = run1(&E, "k", 1, 64, out, &cfg, &fv);
  if (rc) fprintf(stderr, "\n%s\n", E.err);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  uint32_t h[64];
  emu_memcpy_dtoh(E.d, h, out, sizeof h, E.err, sizeof E.err);
  static const uint32_t per_index[4] = {10, 20, 10, 30};
  int ok = 1;
  for (uint32_t t = 0; t < 64; t++)
    ok &= h[t] == (t < 32 ? per_index[t % 4] + t % 4 : 20u + 1);
  CHECK(ok, "each lane ran the case its index selects (entries 0 and 2 share $L_a)");
  /* thread-level counts: the switch block x64, case c x8 (t%4 == 3 in warp
     0), case a x16 (t%4 in {0,2}), case b x8 + x32 (warp 1), join x64 */
  CU_ASSERT_EQUAL(feat_get(&fv, "op.brx.idx", -1), 64);
  CU_ASSERT_EQUAL(feat_get(&fv, "op.mov.u32", -1), 64 + 8 + 16 + 40);
  CU_ASSERT_EQUAL(feat_get(&fv, "op.bra.uni", -1), 8 + 16);
  CU_ASSERT_EQUAL(feat_get(&fv, "op.add.u32", -1), 64);
  CU_ASSERT_EQUAL(feat_get(&fv, "op.st.global.u32", -1), 64);
  /* one brx per warp; warp 0 splits three ways, warp 1 jumps as one */
  CU_ASSERT_EQUAL(feat_get(&fv, "ctrl.branches", -1), 2);
  CU_ASSERT_EQUAL(feat_get(&fv, "ctrl.divergent_branches", -1), 1);
  /* both warps run the join once, reconverged: warp 0 issues 7 + 2 + 2 + 1
     + 5, warp 1 7 + 1 + 5 */
  CU_ASSERT_EQUAL(feat_get(&fv, "ctrl.warp_insns", -1), 17 + 13);
  feat_free(&fv);

  /* guarded: lanes 0 and 1 take the table, the rest (indices 2..31, out of
     range but guarded off) fall through */
  feat_init(&fv);
  rc = run1(&E, "kg", 1, 32, out, &cfg, &fv);
  if (rc) fprintf(stderr, "\n%s\n", E.err);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  emu_memcpy_dtoh(E.d, h, out, 32 * 4, E.err, sizeof E.err);
  ok = h[0] == 6 && h[1] == 7;
  for (uint32_t t = 2; t < 32; t++) ok &= h[t] == 5;
  CHECK(ok, "guard-true lanes follow the table, guard-false lanes fall through");
  CU_ASSERT_EQUAL(feat_get(&fv, "ctrl.branches", -1), 1);
  CU_ASSERT_EQUAL(feat_get(&fv, "ctrl.divergent_branches", -1), 1);
  CU_ASSERT_EQUAL(feat_get(&fv, "op.mov.u32", -1), 32 + 30 + 1 + 1);
  /* 5 + (2 + 2 + 1) paths + 4 join, the join once */
  CU_ASSERT_EQUAL(feat_get(&fv, "ctrl.warp_insns", -1), 5 + 5 + 4);
  feat_free(&fv);

  /* out of range: thread 4 is the first lane past the 4-entry table */
  feat_init(&fv);
  rc = run1(&E, "ko", 1, 32, out, &cfg, &fv);
  CU_ASSERT_EQUAL(rc, -1);
  CU_ASSERT_STRING_EQUAL(E.err, "kernel ko: CTA (0,0,0) thread (4,0,0): test.ptx:61: brx.idx: "
                                "brx.idx index 4 out of range (table of 4 targets)");
  CU_ASSERT_EQUAL(fv.n, 0); /* a failed launch adds no features */
  feat_free(&fv);
  env_free(&E);
}

/* ------------------------------------------------- external memory -- */

/* emu_map_external: caller-owned host memory at a caller-chosen address in
   the external window, used by kernels and copies like owned memory. */
static void test_map_external(void) {
  env E;
  CU_ASSERT_EQUAL_FATAL(env_load(&E, ifelse_ptx), 0);
  uint32_t *host = calloc(64, 4), *small = calloc(32, 4);
  CU_ASSERT_FATAL(host && small);
  uint64_t a = EMU_EXT_BASE + 4096, b = EMU_EXT_BASE + 8192, g0, g1;
  CU_ASSERT_EQUAL_FATAL(emu_malloc(E.d, 64, &g0, E.err, sizeof E.err), 0);
  /* refused: in the engine's own ranges (global allocations, just below the
     window, reaching into it from below), past user space, misaligned, or
     overlapping a mapping from either side */
  CU_ASSERT_EQUAL(emu_map_external(E.d, g0 + 4096, host, 256, E.err, sizeof E.err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(E.err, "overlaps the engine's address ranges"));
  CU_ASSERT_EQUAL(emu_map_external(E.d, EMU_EXT_BASE - 256, host, 256, E.err, sizeof E.err), -1);
  CU_ASSERT_EQUAL(emu_map_external(E.d, EMU_EXT_BASE - 128, host, 256, E.err, sizeof E.err), -1);
  CU_ASSERT_EQUAL(emu_map_external(E.d, EMU_HOST_END - 128, host, 256, E.err, sizeof E.err), -1);
  CU_ASSERT_EQUAL(emu_map_external(E.d, EMU_GLOBAL_BASE - 128, host, 256, E.err, sizeof E.err),
                  -1);
  /* host addresses above the window and below the global range are taken
     (registered host memory lives where the program's heap is) */
  CU_ASSERT_EQUAL(emu_map_external(E.d, EMU_EXT_BASE + EMU_EXT_SIZE - 128, host, 256, E.err,
                                   sizeof E.err), -1); /* misaligned */
  CU_ASSERT_EQUAL(emu_map_external(E.d, 0x0000555500000000ull, host, 256, E.err, sizeof E.err), 0);
  CU_ASSERT_EQUAL(emu_free(E.d, 0x0000555500000000ull, E.err, sizeof E.err), 0);
  CU_ASSERT_EQUAL(emu_map_external(E.d, 0x00400000ull, host, 256, E.err, sizeof E.err), 0);
  CU_ASSERT_EQUAL(emu_free(E.d, 0x00400000ull, E.err, sizeof E.err), 0);
  CU_ASSERT_EQUAL(emu_map_external(E.d, a + 16, host, 256, E.err, sizeof E.err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(E.err, "not 256-byte aligned"));
  CU_ASSERT_EQUAL_FATAL(emu_map_external(E.d, a, host, 256, E.err, sizeof E.err), 0);
  CU_ASSERT_EQUAL(emu_map_external(E.d, a, small, 128, E.err, sizeof E.err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(E.err, "overlaps the allocation"));
  CU_ASSERT_EQUAL(emu_map_external(E.d, a - 256, small, 512, E.err, sizeof E.err), -1);
  /* adjacent below it is fine (inserted before: the table stays sorted) */
  CU_ASSERT_EQUAL(emu_map_external(E.d, a - 256, small, 128, E.err, sizeof E.err), 0);
  CU_ASSERT_EQUAL(emu_malloc(E.d, 64, &g1, E.err, sizeof E.err), 0);
  CU_ASSERT(g1 > g0 && g1 < EMU_EXT_BASE); /* emu_malloc stays in the global range */
  CU_ASSERT_PTR_EQUAL(emu_host_ptr(E.d, a + 8, 4), host + 2); /* the caller's memory */
  CU_ASSERT_PTR_EQUAL(emu_host_ptr(E.d, a - 256, 128), small);
  CU_ASSERT_PTR_NULL(emu_host_ptr(E.d, a + 200, 64)); /* runs past its end */

  /* a kernel writes the host memory directly */
  host[63] = 99;
  emu_launch_cfg cfg;
  emu_launch_cfg_init(&cfg);
  feat_vec fv;
  feat_init(&fv);
  int rc = run1(&E, "k", 1, 64, a, &cfg, &fv);
  if (rc) fprintf(stderr, "\n%s\n", E.err);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  int ok = 1;
  for (int i = 0; i < 64; i++) ok &= host[i] == (i % 2 ? 2u : 1u);
  CHECK(ok, "the kernel's stores landed in the caller's host buffer");
  CU_ASSERT_EQUAL(feat_get(&fv, "mem.footprint_bytes", -1), 256); /* bitmap covers it */
  feat_free(&fv);
  /* copies and fills go through the same table */
  uint32_t v = 7, back = 0;
  CU_ASSERT_EQUAL(emu_memcpy_htod(E.d, a + 4, &v, 4, E.err, sizeof E.err), 0);
  CU_ASSERT_EQUAL(host[1], 7);
  CU_ASSERT_EQUAL(emu_memcpy_dtod(E.d, g1, a + 4, 4, E.err, sizeof E.err), 0);
  CU_ASSERT_EQUAL(emu_memcpy_dtoh(E.d, &back, g1, 4, E.err, sizeof E.err), 0);
  CU_ASSERT_EQUAL(back, 7);
  CU_ASSERT_EQUAL(emu_memset(E.d, a, 0, 256, E.err, sizeof E.err), 0);
  CU_ASSERT_EQUAL(host[0] | host[1] | host[63], 0);
  CU_ASSERT_EQUAL(emu_memcpy_htod(E.d, a + 252, &v, 8, E.err, sizeof E.err), -1);

  /* out of bounds on external memory is caught: 128 bytes, 64 threads */
  CU_ASSERT_EQUAL(emu_free(E.d, a - 256, E.err, sizeof E.err), 0); /* unregister small */
  CU_ASSERT_PTR_NULL(emu_host_ptr(E.d, a - 256, 1));
  small[0] = 5; /* still the caller's: not freed by emu_free */
  CU_ASSERT_EQUAL_FATAL(emu_map_external(E.d, b, small, 128, E.err, sizeof E.err), 0);
  emu_launch_cfg_init(&cfg);
  feat_init(&fv);
  rc = run1(&E, "k", 1, 64, b, &cfg, &fv);
  CU_ASSERT_EQUAL(rc, -1);
  char want[256];
  snprintf(want, sizeof want,
           "out-of-bounds global write of 4 bytes at 0x%llx (allocation 0x%llx+128)",
           (unsigned long long)(b + 128), (unsigned long long)b);
  CU_ASSERT_PTR_NOT_NULL(strstr(E.err, want)); /* thread 32 writes just past the end */
  CU_ASSERT_PTR_NOT_NULL(strstr(E.err, "thread (32,0,0)"));
  feat_free(&fv);
  env_free(&E); /* forgets both mappings without freeing them */
  host[0] = small[0] = 1;
  free(host);
  free(small);
}

/* ------------------------------------------- registers read unwritten -- */

/* PTX leaves a register undefined until written; the emulator reads it as
   0, whatever ran before in the same register file.  "partial": %r1 and
   %p2 are written only where (tid + ctaid) is odd, %r5 only under that
   guard, so the other threads read all three unwritten (0): they store 0,
   the odd ones 7 + 5 + 100.  The CTAs alternate the parity, so a register
   file reused from the previous CTA would hand an even lane that CTA's 7.
   "callee": f writes %r2 only for x != 0; the second call (x = 0) reuses
   the frame of the first (x = 1, %r2 = 9), so it returns 0: 9000 per
   thread.  "shfl": the half-warp that stays ((lane < 16) == ctaid odd)
   writes %r1 = 5 + ctaid, the other half exits; each staying lane reads
   %r1 of its exited partner lane^16, never written in this CTA: 0. */
static const char *unwritten_ptx = HDR
    ".func (.param .b32 rv) f(.param .b32 x)\n"
    "{\n"
    "  .reg .pred %p<2>;\n"
    "  .reg .b32 %r<3>;\n"
    "  ld.param.u32 %r1, [x];\n"
    "  setp.eq.u32 %p1, %r1, 0;\n"
    "  @%p1 bra DONE;\n"
    "  mov.u32 %r2, 9;\n"
    "DONE:\n"
    "  st.param.b32 [rv], %r2;\n"
    "  ret;\n"
    "}\n"
    ".visible .entry partial(.param .u64 out)\n"
    "{\n"
    "  .reg .pred %p<3>;\n"
    "  .reg .b32 %r<10>;\n"
    "  .reg .b64 %rd<4>;\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  mov.u32 %r2, %tid.x;\n"
    "  mov.u32 %r3, %ctaid.x;\n"
    "  add.u32 %r4, %r2, %r3;\n"
    "  and.b32 %r4, %r4, 1;\n"
    "  setp.eq.u32 %p1, %r4, 1;\n"
    "  @!%p1 bra SKIP;\n"
    "  mov.u32 %r1, 7;\n"
    "  setp.ne.u32 %p2, %r4, 0;\n"
    "SKIP:\n"
    "  @%p1 mov.u32 %r5, 5;\n"
    "  selp.u32 %r6, 100, 0, %p2;\n"
    "  add.u32 %r7, %r1, %r5;\n"
    "  add.u32 %r7, %r7, %r6;\n"
    "  mov.u32 %r8, %ntid.x;\n"
    "  mad.lo.s32 %r9, %r3, %r8, %r2;\n"
    "  mul.wide.u32 %rd2, %r9, 4;\n"
    "  add.s64 %rd3, %rd1, %rd2;\n"
    "  st.global.u32 [%rd3], %r7;\n"
    "  ret;\n"
    "}\n"
    ".visible .entry callee(.param .u64 out)\n"
    "{\n"
    "  .reg .b32 %r<6>;\n"
    "  .reg .b64 %rd<4>;\n"
    "  {\n"
    "  .param .b32 param0;\n"
    "  st.param.b32 [param0], 1;\n"
    "  .param .b32 retval0;\n"
    "  call.uni (retval0), f, (param0);\n"
    "  ld.param.b32 %r1, [retval0];\n"
    "  }\n"
    "  {\n"
    "  .param .b32 param0;\n"
    "  st.param.b32 [param0], 0;\n"
    "  .param .b32 retval0;\n"
    "  call.uni (retval0), f, (param0);\n"
    "  ld.param.b32 %r2, [retval0];\n"
    "  }\n"
    "  mad.lo.s32 %r3, %r1, 1000, %r2;\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  mov.u32 %r4, %tid.x;\n"
    "  mov.u32 %r5, %ctaid.x;\n"
    "  mad.lo.s32 %r4, %r5, 32, %r4;\n"
    "  mul.wide.u32 %rd2, %r4, 4;\n"
    "  add.s64 %rd3, %rd1, %rd2;\n"
    "  st.global.u32 [%rd3], %r3;\n"
    "  ret;\n"
    "}\n"
    ".visible .entry shfl(.param .u64 out)\n"
    "{\n"
    "  .reg .pred %p<4>;\n"
    "  .reg .b32 %r<8>;\n"
    "  .reg .b64 %rd<4>;\n"
    "  mov.u32 %r3, %tid.x;\n"
    "  mov.u32 %r4, %ctaid.x;\n"
    "  setp.lt.u32 %p1, %r3, 16;\n"
    "  and.b32 %r5, %r4, 1;\n"
    "  setp.eq.u32 %p2, %r5, 1;\n"
    "  xor.pred %p3, %p1, %p2;\n"
    "  @%p3 exit;\n"
    "  add.u32 %r1, %r4, 5;\n"
    "  shfl.sync.bfly.b32 %r2, %r1, 16, 31, -1;\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  mad.lo.s32 %r6, %r4, 32, %r3;\n"
    "  mul.wide.u32 %rd2, %r6, 4;\n"
    "  add.s64 %rd3, %rd1, %rd2;\n"
    "  st.global.u32 [%rd3], %r2;\n"
    "  ret;\n"
    "}\n";

static void test_unwritten_registers(void) {
  env E;
  int rc = env_load(&E, unwritten_ptx);
  if (rc) fprintf(stderr, "\n%s\n", E.err);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  enum { GRID = 6, BLOCK = 64, N = GRID * BLOCK };
  uint64_t out;
  CU_ASSERT_EQUAL_FATAL(emu_malloc(E.d, N * 4, &out, E.err, sizeof E.err), 0);
  static const char *const names[] = {"partial", "callee", "shfl"};
  for (int threads = 1; threads <= 2; threads++) {
    for (int k = 0; k < 3; k++) {
      /* 0xAB fill: a thread that stores nothing would show it */
      emu_memset(E.d, out, 0xAB, N * 4, E.err, sizeof E.err);
      emu_launch_cfg cfg;
      emu_launch_cfg_init(&cfg);
      cfg.threads = threads;
      unsigned block = k == 0 ? BLOCK : 32;
      rc = run1(&E, names[k], GRID, block, out, &cfg, NULL);
      if (rc) fprintf(stderr, "\n%s\n", E.err);
      CU_ASSERT_EQUAL_FATAL(rc, 0);
      uint32_t h[N];
      emu_memcpy_dtoh(E.d, h, out, sizeof h, E.err, sizeof E.err);
      int ok = 1;
      for (unsigned c = 0; c < GRID; c++)
        for (unsigned t = 0; t < block; t++) {
          uint32_t got = h[c * block + t], want;
          if (k == 0) want = (t + c) % 2 ? 112u : 0u;
          else if (k == 1) want = 9000u;
          else want = ((t < 16) == (c % 2 == 1)) ? 0u : 0xABABABABu;
          if (got != want) {
            if (ok)
              fprintf(stderr, "\n%s threads=%d CTA %u thread %u: got %u, want %u\n",
                      names[k], threads, c, t, got, want);
            ok = 0;
          }
        }
      static const char *const why[] = {
          "partial: registers (and a predicate) written on one path only read 0 elsewhere",
          "callee: a call frame reused from an earlier call reads its unwritten register as 0",
          "shfl: a lane's source register that the lane never wrote reads 0 at its partner"};
      CHECK(ok, why[k]);
    }
  }
  env_free(&E);
}

/* ---------------------------------------------------------- ALU runs -- */

/* One block of 6,000 ALU instructions (more than a limit-check step of
   4,096): plain adds, every seventh guarded by "thread is odd", every
   500th a %clock read.  run_warp calls the plain ones back to back
   (emu_load.c, alu_runs): a guarded instruction taken into a run would
   change the even threads' sums. */
static char *alu_runs_ptx(unsigned n, unsigned *plain, unsigned *guarded) {
  size_t cap = 128 * (size_t)n + 4096, len = 0;
  char *s = malloc(cap);
  if (!s) return NULL;
  len += (size_t)snprintf(s + len, cap - len,
                          HDR ".visible .entry k(.param .u64 out)\n{\n"
                              "  .reg .pred %%p<2>;\n  .reg .b32 %%r<8>;\n  .reg .b64 %%rd<4>;\n"
                              "  ld.param.u64 %%rd1, [out];\n  cvta.to.global.u64 %%rd1, %%rd1;\n"
                              "  mov.u32 %%r1, %%tid.x;\n  and.b32 %%r4, %%r1, 1;\n"
                              "  setp.eq.u32 %%p1, %%r4, 1;\n  mov.u32 %%r2, 0;\n  bra.uni L;\nL:\n");
  *plain = *guarded = 0;
  for (unsigned i = 0; i < n; i++) {
    if (i % 500 == 250)
      len += (size_t)snprintf(s + len, cap - len, "  mov.u32 %%r5, %%clock;\n");
    else if (i % 7 == 3)
      len += (size_t)snprintf(s + len, cap - len, "  @%%p1 add.u32 %%r2, %%r2, 1;\n"), (*guarded)++;
    else
      len += (size_t)snprintf(s + len, cap - len, "  add.u32 %%r1, %%r1, 3;\n"), (*plain)++;
  }
  snprintf(s + len, cap - len,
           "  mov.u32 %%r6, %%tid.x;\n  mul.wide.u32 %%rd2, %%r6, 8;\n  add.s64 %%rd3, %%rd1, %%rd2;\n"
           "  st.global.v2.u32 [%%rd3], {%%r1, %%r2};\n  ret;\n}\n");
  return s;
}

static void test_alu_runs(void) {
  unsigned plain = 0, guarded = 0;
  char *ptx = alu_runs_ptx(6000, &plain, &guarded);
  CU_ASSERT_PTR_NOT_NULL_FATAL(ptx);
  env E;
  int rc = env_load(&E, ptx);
  free(ptx);
  if (rc) fprintf(stderr, "\n%s\n", E.err);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  enum { BLOCK = 64 };
  uint64_t out;
  CU_ASSERT_EQUAL_FATAL(emu_malloc(E.d, BLOCK * 8, &out, E.err, sizeof E.err), 0);
  for (int threads = 1; threads <= 2; threads++) {
    emu_launch_cfg cfg;
    emu_launch_cfg_init(&cfg);
    cfg.threads = threads;
    emu_stats st;
    rc = run1s(&E, "k", 2, BLOCK, out, &cfg, NULL, &st);
    if (rc) fprintf(stderr, "\n%s\n", E.err);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    uint32_t h[2 * BLOCK];
    emu_memcpy_dtoh(E.d, h, out, sizeof h, E.err, sizeof E.err);
    int ok = 1;
    for (unsigned t = 0; t < BLOCK; t++) {
      uint32_t want1 = t + 3 * plain, want2 = t % 2 ? guarded : 0;
      if (h[2 * t] != want1 || h[2 * t + 1] != want2) {
        if (ok)
          fprintf(stderr, "\nthreads=%d thread %u: got %u %u, want %u %u\n", threads, t,
                  h[2 * t], h[2 * t + 1], want1, want2);
        ok = 0;
      }
    }
    CHECK(ok, "a run of plain ALU ops skips neither a guard nor a clock read, past a check step");
  }
  env_free(&E);
}

/* ---------------------------------------------------- broadcast load -- */

/* Every lane loads the u32 at in + off (one address for the warp) and
   stores it to out[tid]. */
static const char *bcast_ptx = HDR
    ".visible .entry k(.param .u64 in, .param .u64 out, .param .u32 off)\n"
    "{\n"
    "  .reg .b32 %r<4>;\n"
    "  .reg .b64 %rd<6>;\n"
    "  ld.param.u64 %rd1, [in];\n  ld.param.u64 %rd2, [out];\n  ld.param.u32 %r1, [off];\n"
    "  cvt.u64.u32 %rd3, %r1;\n  add.s64 %rd3, %rd1, %rd3;\n"
    "  ld.global.u32 %r2, [%rd3];\n"
    "  mov.u32 %r3, %tid.x;\n  mul.wide.u32 %rd4, %r3, 4;\n  add.s64 %rd5, %rd2, %rd4;\n"
    "  st.global.u32 [%rd5], %r2;\n"
    "  ret;\n"
    "}\n";

static void test_broadcast_load(void) {
  env E;
  CU_ASSERT_EQUAL_FATAL(env_load(&E, bcast_ptx), 0);
  uint64_t in, out;
  CU_ASSERT_EQUAL_FATAL(emu_malloc(E.d, 64, &in, E.err, sizeof E.err), 0);
  CU_ASSERT_EQUAL_FATAL(emu_malloc(E.d, 64 * 4, &out, E.err, sizeof E.err), 0);
  uint32_t v = 0xdeadbeefu;
  CU_ASSERT_EQUAL_FATAL(emu_memcpy_htod(E.d, in + 8, &v, 4, E.err, sizeof E.err), 0);
  unsigned char params[20];
  uint32_t off = 8;
  memcpy(params, &in, 8);
  memcpy(params + 8, &out, 8);
  memcpy(params + 16, &off, 4);
  emu_launch_cfg cfg;
  emu_launch_cfg_init(&cfg);
  cfg.block[0] = 64;
  cfg.params = params;
  cfg.params_size = sizeof params;
  feat_vec fv;
  feat_init(&fv);
  CU_ASSERT_EQUAL_FATAL(emu_launch(E.em, "k", &cfg, &fv, NULL, E.err, sizeof E.err), 0);
  uint32_t h[64];
  CU_ASSERT_EQUAL_FATAL(emu_memcpy_dtoh(E.d, h, out, sizeof h, E.err, sizeof E.err), 0);
  int ok = 1;
  for (int i = 0; i < 64; i++) ok &= h[i] == v;
  CHECK(ok, "every lane received the word all lanes loaded");
  /* per warp: the load is 32 x 4 bytes in one sector, the store 128
     bytes in 4 sectors; footprint: the 4 loaded bytes and 256 stored */
  CU_ASSERT_EQUAL(feat_get(&fv, "mem.global_load_bytes", -1), 2 * 128);
  CU_ASSERT_EQUAL(feat_get(&fv, "mem.global_bytes", -1), 2 * 256);
  CU_ASSERT_EQUAL(feat_get(&fv, "mem.global_accesses", -1), 4);
  CU_ASSERT_EQUAL(feat_get(&fv, "mem.global_sectors", -1), 2 * (1 + 4));
  CU_ASSERT_EQUAL(feat_get(&fv, "mem.footprint_bytes", -1), 4 + 256);
  feat_free(&fv);
  /* the same load at in + 2 is misaligned: the error names it */
  off = 2;
  memcpy(params + 16, &off, 4);
  CU_ASSERT_EQUAL(emu_launch(E.em, "k", &cfg, NULL, NULL, E.err, sizeof E.err), -1);
  char want[256];
  snprintf(want, sizeof want, "misaligned global read of 4 bytes at 0x%llx",
           (unsigned long long)(in + 2));
  CHECK(strstr(E.err, want) != NULL, "a misaligned broadcast load is reported as one");
  env_free(&E);
}

/* ------------------------------------------------------ gather counts -- */

/* Lane l of each warp loads the 8 bytes at in + ((l * 7) % 32) * stride
   (the lanes out of address order), or with dup the 8 bytes of lane l & ~1
   (pairs reading one address), and stores their sum to out[tid]. */
static const char *gather_ptx = HDR
    ".visible .entry k(.param .u64 in, .param .u64 out, .param .u32 stride, .param .u32 dup)\n"
    "{\n"
    "  .reg .b32 %r<12>;\n"
    "  .reg .b64 %rd<8>;\n"
    "  ld.param.u64 %rd1, [in];\n  ld.param.u64 %rd2, [out];\n"
    "  ld.param.u32 %r1, [stride];\n  ld.param.u32 %r2, [dup];\n"
    "  mov.u32 %r3, %tid.x;\n  and.b32 %r4, %r3, 31;\n"
    "  not.b32 %r5, %r2;\n  or.b32 %r5, %r5, -2;\n  and.b32 %r4, %r4, %r5;\n"
    "  mul.lo.u32 %r4, %r4, 7;\n  and.b32 %r4, %r4, 31;\n  mul.lo.u32 %r4, %r4, %r1;\n"
    "  cvt.u64.u32 %rd3, %r4;\n  add.s64 %rd3, %rd1, %rd3;\n"
    "  ld.global.v2.u32 {%r6, %r7}, [%rd3];\n  add.u32 %r8, %r6, %r7;\n"
    "  mul.wide.u32 %rd4, %r3, 4;\n  add.s64 %rd5, %rd2, %rd4;\n"
    "  st.global.u32 [%rd5], %r8;\n  ret;\n}\n";

/* The warp's load sectors and bytes, counted here from the addresses: the
   same for lanes a 2 KiB bitmap holds (mem_op's span path) and for wider
   ones (its sector list). */
static void test_gather_counts(void) {
  env E;
  int rc = env_load(&E, gather_ptx);
  if (rc) fprintf(stderr, "\n%s\n", E.err);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  enum { BLOCK = 64, GRID = 48 };
  uint64_t in, out;
  CU_ASSERT_EQUAL_FATAL(emu_malloc(E.d, 32 * 200, &in, E.err, sizeof E.err), 0);
  CU_ASSERT_EQUAL_FATAL(emu_malloc(E.d, BLOCK * 4, &out, E.err, sizeof E.err), 0);
  static const uint32_t strides[] = {8, 24, 40, 64, 72, 136, 200};
  for (size_t s = 0; s < sizeof strides / sizeof strides[0]; s++)
    for (uint32_t dup = 0; dup <= 1; dup++) {
      unsigned char params[24];
      memcpy(params, &in, 8);
      memcpy(params + 8, &out, 8);
      memcpy(params + 16, &strides[s], 4);
      memcpy(params + 20, &dup, 4);
      emu_launch_cfg cfg;
      emu_launch_cfg_init(&cfg);
      cfg.block[0] = BLOCK;
      cfg.grid[0] = GRID; /* most CTAs untraced: the trace keeps its own count */
      cfg.params = params;
      cfg.params_size = sizeof params;
      feat_vec fv;
      feat_init(&fv);
      CU_ASSERT_EQUAL_FATAL(emu_launch(E.em, "k", &cfg, &fv, NULL, E.err, sizeof E.err), 0);
      /* the reference: distinct sectors and bytes of one warp's lanes */
      uint64_t sec[64], byte[32];
      unsigned nsec = 0, nbyte = 0;
      for (uint32_t l = 0; l < 32; l++) {
        uint64_t o = (uint64_t)((((dup ? l & ~1u : l) * 7) % 32) * strides[s]);
        uint64_t ss[2] = {(in + o) >> 5, (in + o + 7) >> 5};
        for (int k = 0; k < 2; k++) {
          int seen = 0;
          for (unsigned i = 0; i < nsec; i++) seen |= sec[i] == ss[k];
          if (!seen) sec[nsec++] = ss[k];
        }
        int seen = 0;
        for (unsigned i = 0; i < nbyte; i++) seen |= byte[i] == o;
        if (!seen) byte[nbyte++] = o;
      }
      double ls = feat_get(&fv, "mem.global_load_sectors", -1);
      double fb = feat_get(&fv, "mem.footprint_bytes", -1);
      CHECKF(ls == 2.0 * GRID * nsec && fb == 8.0 * nbyte + BLOCK * 4,
             "stride %u%s: load sectors %g (want %u), footprint %g (want %u)", strides[s],
             dup ? ", pairs" : "", ls, 2 * GRID * nsec, fb, 8 * nbyte + BLOCK * 4);
      feat_free(&fv);
    }
  env_free(&E);
}

/* ------------------------------------------------------ lazy fills -- */

/* Thread i reads in[i * stride] into out[i] and writes that value + 1 to
   in[i * stride + off]. */
static const char *lazy_ptx = HDR
    ".visible .entry k(.param .u64 in, .param .u64 out, .param .u32 stride, .param .u32 off)\n"
    "{\n"
    "  .reg .b32 %r<8>;\n"
    "  .reg .b64 %rd<8>;\n"
    "  ld.param.u64 %rd1, [in];\n  ld.param.u64 %rd2, [out];\n"
    "  ld.param.u32 %r1, [stride];\n  ld.param.u32 %r2, [off];\n"
    "  mov.u32 %r3, %ctaid.x;\n  mov.u32 %r4, %ntid.x;\n  mov.u32 %r5, %tid.x;\n"
    "  mad.lo.s32 %r3, %r3, %r4, %r5;\n"
    "  mul.lo.s32 %r4, %r3, %r1;\n"
    "  mul.wide.u32 %rd3, %r4, 4;\n  add.s64 %rd4, %rd1, %rd3;\n"
    "  ld.global.u32 %r6, [%rd4];\n"
    "  mul.wide.u32 %rd5, %r3, 4;\n  add.s64 %rd5, %rd2, %rd5;\n"
    "  st.global.u32 [%rd5], %r6;\n"
    "  add.s32 %r7, %r6, 1;\n"
    "  add.s32 %r4, %r4, %r2;\n  mul.wide.u32 %rd3, %r4, 4;\n  add.s64 %rd4, %rd1, %rd3;\n"
    "  st.global.u32 [%rd4], %r7;\n"
    "  ret;\n"
    "}\n";

static uint32_t lazy_word(uint32_t salt, uint64_t k) {
  return (uint32_t)(k * 2654435761u) ^ salt;
}

static void lazy_fill(const void *ctx, uint64_t off, uint8_t *dst, size_t n) {
  uint32_t salt;
  memcpy(&salt, ctx, 4);
  for (size_t i = 0; i < n; i += 4) {
    uint32_t w = lazy_word(salt, (off + i) / 4);
    memcpy(dst + i, &w, n - i < 4 ? n - i : 4);
  }
}

/* One launch of lazy_ptx over `words` words of input, lazily filled or
   (eager) filled before the launch from the same function; the input
   buffer after the launch into in_after, the output into out_h. */
static int lazy_run(int lazy, unsigned grid, unsigned block, uint32_t stride, uint32_t off,
                    size_t words, uint32_t *in_after, uint32_t *out_h, feat_vec *fv) {
  env E;
  if (env_load(&E, lazy_ptx)) return -1;
  uint32_t salt = 0x5bd1e995u;
  uint64_t in = 0, out = 0;
  int rc = -1;
  if (lazy ? emu_malloc_lazy(E.d, words * 4 + 2, lazy_fill, &salt, sizeof salt, &in, E.err,
                             sizeof E.err)
           : emu_malloc(E.d, words * 4 + 2, &in, E.err, sizeof E.err))
    goto out;
  if (emu_malloc(E.d, (size_t)grid * block * 4, &out, E.err, sizeof E.err)) goto out;
  if (!lazy) {
    uint8_t *h = emu_host_ptr(E.d, in, words * 4 + 2);
    if (!h) goto out;
    lazy_fill(&salt, 0, h, words * 4 + 2);
  }
  unsigned char params[24];
  memcpy(params, &in, 8);
  memcpy(params + 8, &out, 8);
  memcpy(params + 16, &stride, 4);
  memcpy(params + 20, &off, 4);
  emu_launch_cfg cfg;
  emu_launch_cfg_init(&cfg);
  cfg.grid[0] = grid;
  cfg.block[0] = block;
  cfg.params = params;
  cfg.params_size = sizeof params;
  cfg.threads = 2;
  if (emu_launch(E.em, "k", &cfg, fv, NULL, E.err, sizeof E.err)) goto out;
  if (emu_memcpy_dtoh(E.d, out_h, out, (size_t)grid * block * 4, E.err, sizeof E.err) ||
      emu_memcpy_dtoh(E.d, in_after, in, words * 4, E.err, sizeof E.err))
    goto out;
  rc = 0;
out:
  if (rc) fprintf(stderr, "\n%s\n", E.err);
  env_free(&E);
  return rc;
}

static void test_lazy_fill(void) {
  /* (a) one page per thread (stride 1024 words), 128 threads in 2 CTAs, 2
     OpenMP threads; (b) coalesced: 256 consecutive words read, the next
     256 written.  The buffer is 2 bytes longer than its words: a short
     last page. */
  struct { unsigned grid, block; uint32_t stride, off; size_t words; } cs[2] = {
      {2, 64, 1024, 1, 128 * 1024 + 16}, {2, 128, 1, 256, 4096}};
  for (int c = 0; c < 2; c++) {
    size_t nw = cs[c].words, nt = (size_t)cs[c].grid * cs[c].block;
    uint32_t *inl = calloc(nw, 4), *ine = calloc(nw, 4), *outl = calloc(nt, 4),
             *oute = calloc(nt, 4);
    feat_vec fl, fe;
    feat_init(&fl);
    feat_init(&fe);
    CU_ASSERT_FATAL(inl && ine && outl && oute);
    CU_ASSERT_EQUAL_FATAL(lazy_run(1, cs[c].grid, cs[c].block, cs[c].stride, cs[c].off, nw, inl,
                                   outl, &fl), 0);
    CU_ASSERT_EQUAL_FATAL(lazy_run(0, cs[c].grid, cs[c].block, cs[c].stride, cs[c].off, nw, ine,
                                   oute, &fe), 0);
    int ok = 1;
    for (size_t i = 0; i < nt; i++) ok &= outl[i] == lazy_word(0x5bd1e995u, i * cs[c].stride);
    CHECK(ok, "every thread read the fill's word from its lazily filled page");
    ok = 1;
    for (size_t k = 0; k < nw; k++) {
      uint32_t want = lazy_word(0x5bd1e995u, k);
      if (k >= cs[c].off && (k - cs[c].off) % cs[c].stride == 0 &&
          (k - cs[c].off) / cs[c].stride < nt)
        want = lazy_word(0x5bd1e995u, k - cs[c].off) + 1;
      ok &= inl[k] == want;
    }
    CHECK(ok, "the kernel's stores survive (no later fill of their page) and unread pages "
              "hold the fill when copied out");
    CHECK(!memcmp(inl, ine, nw * 4) && !memcmp(outl, oute, nt * 4),
          "a lazily filled buffer ends as the eagerly filled one does");
    ok = fl.n == fe.n && fl.n > 0;
    for (size_t i = 0; ok && i < fl.n; i++)
      ok = feat_get(&fe, fl.names[i], NAN) == fl.vals[i];
    CHECK(ok, "the launch's features are those of the eagerly filled buffer");
    feat_free(&fl);
    feat_free(&fe);
    free(inl);
    free(ine);
    free(outl);
    free(oute);
  }
}

TEST_SUITES(register_emu) {
  CU_pSuite s = tests_suite("emu");
  TEST_ADD(s, test_divergent_ifelse);
  TEST_ADD(s, test_brx);
  TEST_ADD(s, test_nested_loops);
  TEST_ADD(s, test_barrier);
  TEST_ADD(s, test_bank_conflicts);
  TEST_ADD(s, test_shared_load_banks);
  TEST_ADD(s, test_ldmatrix_banks);
  TEST_ADD(s, test_uniform_vector_load);
  TEST_ADD(s, test_worker_cache_and_features);
  TEST_ADD(s, test_out_of_bounds);
  TEST_ADD(s, test_map_external);
  TEST_ADD(s, test_misaligned);
  TEST_ADD(s, test_address_wrap32);
  TEST_ADD(s, test_sampled_footprint);
  TEST_ADD(s, test_oob_policy);
  TEST_ADD(s, test_sloppy_programs);
  TEST_ADD(s, test_tex1dfetch);
  TEST_ADD(s, test_team_only_for_large_work);
  TEST_ADD(s, test_partial_launch);
  TEST_ADD(s, test_device_assert);
  TEST_ADD(s, test_launch_limits);
  TEST_ADD(s, test_budget_and_time);
  TEST_ADD(s, test_time_limit_huge_block);
  TEST_ADD(s, test_call_ret);
  TEST_ADD(s, test_recursion);
  TEST_ADD(s, test_barrier_after_exit);
  TEST_ADD(s, test_printf);
  TEST_ADD(s, test_warp_collectives);
  TEST_ADD(s, test_threads_and_sampling);
  TEST_ADD(s, test_unsupported);
  TEST_ADD(s, test_unsupported_partial);
  TEST_ADD(s, test_param_layout);
  TEST_ADD(s, test_unwritten_registers);
  TEST_ADD(s, test_alu_runs);
  TEST_ADD(s, test_gather_counts);
  TEST_ADD(s, test_lazy_fill);
  TEST_ADD(s, test_broadcast_load);
}
