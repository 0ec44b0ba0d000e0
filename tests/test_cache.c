/*
 * test_cache.c -- the memory-hierarchy model: the emulator's reuse and
 * sharing features (emulator/emu_trace.c) on kernels whose values are
 * worked out by hand (tests/kernels/reuse.cu), and the per-GPU model
 * (model/cache.c, cache.*) on feature sets whose hits follow from its
 * rules.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "tests.h"

#define CHECK_MSG(msg, cond) \
  CU_assertImplementation(!!(cond), __LINE__, (msg), __FILE__, "", CU_FALSE)

/* Features of one emulated launch of kernel k of the corpus's reuse.cu
   (kcast emulate --format json); NULL when the corpus file is missing. */
static cJSON *emulate(const char *k, const char *grid, const char *block, const char *args,
                      const char *extra) {
  char ptx[1024], cmd[4096];
  snprintf(ptx, sizeof ptx, "%s/corpus/reuse.nvcc.ptx", tests_build());
  FILE *f = fopen(ptx, "r");
  if (!f) {
    printf("\n    (note: %s missing: emulator cases skipped) ", ptx);
    return NULL;
  }
  fclose(f);
  snprintf(cmd, sizeof cmd, "'%s' emulate '%s' --kernel %s --grid %s --block %s %s %s --format json",
           tests_kcast(), ptx, k, grid, block, args, extra);
  char *out = NULL;
  int rc = tests_run(cmd, &out, NULL);
  cJSON *j = rc == 0 && out ? cJSON_Parse(out) : NULL;
  free(out);
  CHECK_MSG("kcast emulate of the reuse kernel succeeds", j != NULL);
  return j;
}

static double feat(const cJSON *j, const char *name) {
  const cJSON *v = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "features"), name);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static void test_stream(void) {
  cJSON *j = emulate("stream_scale", "64", "256", "--arg buf:64k --arg buf:64k --arg 16384", "");
  if (!j) return;
  CHECK_MSG("streaming: no load sector is reused", feat(j, "mem.cta_reuse") == 0 &&
                                                       feat(j, "mem.reuse_lt_4m") == 0);
  CHECK_MSG("streaming: the previous CTA shares nothing, nor does the rest of the grid",
            feat(j, "mem.share_x") == 0 && feat(j, "mem.share_far") == 0);
  CHECK_MSG("streaming: 8 warps x 4 sectors of loads per CTA",
            feat(j, "mem.global_load_sectors") == 64 * 8 * 4);
  CHECK_MSG("streaming: the stored footprint is the output (64 x 256 floats)",
            feat(j, "mem.store_footprint_bytes") == 65536);
  cJSON_Delete(j);
}

static void test_table(void) {
  cJSON *j = emulate("table_twice", "64", "32", "--arg buf:2k:randf --arg buf:8k --arg 512", "");
  if (!j) return;
  /* one warp reads 16 lines, then the same 16 again: each second read has
     the 15 other lines (1920 bytes) between */
  CHECK_MSG("table read twice: half the load sectors are reuses within 2 KiB",
            fabs(feat(j, "mem.reuse_lt_2k") - 0.5) < 1e-12 && feat(j, "mem.reuse_lt_1k") == 0);
  CHECK_MSG("table read twice: every reuse is within 2 KiB (cta_reuse 0.5)",
            fabs(feat(j, "mem.cta_reuse") - 0.5) < 1e-12 &&
                fabs(feat(j, "mem.reuse_lt_4m") - 0.5) < 1e-12);
  CHECK_MSG("a table every CTA reads: shared with the neighbour and with the rest of the grid",
            feat(j, "mem.share_x") == 1 && feat(j, "mem.share_far") == 1);
  cJSON_Delete(j);
}

static void test_stencil(void) {
  /* one warp a CTA: in[i] touches line b (4 sectors), in[i-1] the last
     sector of line b-1 and line b again, in[i+1] line b again and the
     first sector of line b+1: 14 sector requests, 8 of them reuses of
     line b a line or less later; 6 distinct sectors, 2 of them (the last
     of line b-1, the first of line b) also the previous CTA's */
  const char *args = "--arg buf:8k:randf --arg buf:8k --arg 2048";
  cJSON *j = emulate("stencil3", "64", "32", args, "");
  if (!j) return;
  CHECK_MSG("stencil: 8 of 14 load sectors are reuses within 512 bytes",
            fabs(feat(j, "mem.reuse_lt_512") - 8.0 / 14) < 1e-12 &&
                fabs(feat(j, "mem.cta_reuse") - 8.0 / 14) < 1e-12);
  CHECK_MSG("stencil: a third of a CTA's sectors are its x neighbour's",
            fabs(feat(j, "mem.share_x") - 1.0 / 3) < 1e-12);
  CHECK_MSG("stencil: no y or z neighbour, nothing shared far away",
            feat(j, "mem.share_y") == 0 && feat(j, "mem.share_z") == 0 &&
                feat(j, "mem.share_far") == 0);
  cJSON_Delete(j);
  /* sampled: 8 of 256 CTAs run, the probes run beside them */
  j = emulate("stencil3", "256", "32", "--arg buf:32k:randf --arg buf:32k --arg 8192",
              "--sample 8");
  if (!j) return;
  CHECK_MSG("sampled stencil: the same reuse and sharing (probes of the neighbours)",
            fabs(feat(j, "mem.reuse_lt_512") - 8.0 / 14) < 1e-12 &&
                fabs(feat(j, "mem.share_x") - 1.0 / 3) < 1e-12);
  CHECK_MSG("sampled stencil: the probes' work is not counted (8 CTAs x 14 sectors, scaled)",
            feat(j, "mem.global_load_sectors") == 256 * 14 && feat(j, "emu.ctas_emulated") == 8);
  cJSON_Delete(j);
}

/* ----------------------------------------------------------- the model -- */

typedef struct fs {
  const char *names[40];
  double vals[40];
  size_t n;
} fs;

static void put(fs *f, const char *name, double v) {
  for (size_t i = 0; i < f->n; i++)
    if (!strcmp(f->names[i], name)) { f->vals[i] = v; return; }
  f->names[f->n] = name;
  f->vals[f->n++] = v;
}

static const char *const bins[14] = {
    "mem.reuse_lt_512", "mem.reuse_lt_1k",   "mem.reuse_lt_2k",   "mem.reuse_lt_4k",
    "mem.reuse_lt_8k",  "mem.reuse_lt_16k",  "mem.reuse_lt_32k",  "mem.reuse_lt_64k",
    "mem.reuse_lt_128k", "mem.reuse_lt_256k", "mem.reuse_lt_512k", "mem.reuse_lt_1m",
    "mem.reuse_lt_2m",  "mem.reuse_lt_4m"};

/* A launch of ctas CTAs of 256 threads loading 1000 sectors per CTA, half
   of them reused within 64 KiB (from the 64k bin up), the footprint foot. */
static fs tile_launch(double ctas, double foot) {
  fs f = {.n = 0};
  put(&f, "launch.block_x", 256);
  put(&f, "launch.ctas", ctas);
  put(&f, "launch.grid_x", ctas);
  put(&f, "mem.global_sectors", 1000 * ctas);
  put(&f, "mem.global_load_sectors", 1000 * ctas);
  put(&f, "mem.global_accesses", 250 * ctas);
  put(&f, "mem.footprint_bytes", foot);
  put(&f, "mem.cta_reuse", 0.5);
  for (int b = 0; b < 14; b++) put(&f, bins[b], b >= 7 ? 0.5 : 0);
  return f;
}

static void test_model(void) {
  double c[MD_CACHE_N];
  /* one CTA on an A100 (192 KB of L1, no shared memory): the 64 KiB
     reuses hit L1 */
  fs f = tile_launch(1, 16000);
  CU_ASSERT_EQUAL_FATAL(md_memory("A100", f.names, f.vals, f.n, c), 0);
  CHECK_MSG("reuse within 64 KiB, one CTA on 192 KB of L1: L1 serves half the loads",
            fabs(c[0] - 0.5) < 1e-12 && c[6] == 1);
  CHECK_MSG("the footprint fits in L2: DRAM reads it once", fabs(c[2] - 16000) < 1e-9);
  /* 100 KB of shared memory per CTA: the carve-out of 100 KB leaves 92 KB
     of L1 on the A100 (192 - 100), still above 64 KiB */
  put(&f, "launch.shared_bytes", 100 * 1024 - 1024);
  CU_ASSERT_EQUAL_FATAL(md_memory("A100", f.names, f.vals, f.n, c), 0);
  CHECK_MSG("shared memory takes its carve-out from L1 (192 - 100 KB)",
            fabs(c[5] - 92 * 1024) < 1e-9 && fabs(c[0] - 0.5) < 1e-12);
  /* on an A4000 (128 KB, 100 KB carve-out): 28 KB left, below 64 KiB: the
     reuses miss L1 and L2 serves them */
  CU_ASSERT_EQUAL_FATAL(md_memory("A4000", f.names, f.vals, f.n, c), 0);
  CHECK_MSG("28 KB of L1 left: the 64 KiB reuses miss it and hit L2",
            c[0] < 0.5 && c[1] > 0.4 && fabs(c[5] - 28 * 1024) < 1e-9);
  /* eight resident CTAs (no shared memory, 256 threads) share 192 KB:
     24 KB each, below 64 KiB */
  fs g = tile_launch(8 * 108, 16000 * 8 * 108);
  CU_ASSERT_EQUAL_FATAL(md_memory("A100", g.names, g.vals, g.n, c), 0);
  CHECK_MSG("eight resident CTAs: each has 24 KB of L1, the 64 KiB reuses go to L2",
            c[0] < 0.3 && c[1] > 0.4);
  /* a grid-wide table (share_far 1) on 8 resident CTAs: 7 of 8 first
     touches hit L1 */
  fs t = tile_launch(8 * 108, 16000);
  for (int b = 0; b < 14; b++) put(&t, bins[b], 0);
  put(&t, "mem.cta_reuse", 0);
  put(&t, "mem.share_far", 1);
  CU_ASSERT_EQUAL_FATAL(md_memory("A100", t.names, t.vals, t.n, c), 0);
  CHECK_MSG("data every CTA reads: 7 of 8 resident CTAs find it in L1",
            fabs(c[0] - 7.0 / 8) < 1e-12);
  /* neighbours: cold data the x neighbour also read is an L2 hit, a y
     neighbour's when the CTAs between bring in less than L2 holds */
  fs s = tile_launch(100000, 100000.0 * 4096);
  for (int b = 0; b < 14; b++) put(&s, bins[b], 0);
  put(&s, "mem.cta_reuse", 0);
  put(&s, "mem.share_x", 0.5);
  CU_ASSERT_EQUAL_FATAL(md_memory("A4000", s.names, s.vals, s.n, c), 0);
  CHECK_MSG("half of each CTA's data is its x neighbour's: L2 serves half the loads",
            fabs(c[1] - 0.5) < 1e-9 && fabs(c[2] - 1000.0 * 100000 * 32 * 0.5) < 1);
  put(&s, "mem.share_x", 0);
  put(&s, "mem.share_y", 0.5);
  put(&s, "launch.grid_x", 100); /* 100 CTAs x 4 KB between: fits 4 MB */
  CU_ASSERT_EQUAL_FATAL(md_memory("A4000", s.names, s.vals, s.n, c), 0);
  CHECK_MSG("a y neighbour 100 CTAs back (400 KB between): L2 serves its half",
            fabs(c[1] - 0.5) < 1e-9);
  put(&s, "launch.grid_x", 10000); /* 40 MB between: a tenth of it fits */
  CU_ASSERT_EQUAL_FATAL(md_memory("A4000", s.names, s.vals, s.n, c), 0);
  CHECK_MSG("a y neighbour 10,000 CTAs back (40 MB between, 4 MB of L2): a tenth of it hits",
            fabs(c[1] - 0.5 * 4 * 1048576 / (10000 * 4096.0)) < 1e-9);
  /* without the reuse features: the footprint rule of older launches */
  fs old = {.n = 0};
  put(&old, "launch.block_x", 256);
  put(&old, "launch.ctas", 10);
  put(&old, "mem.global_sectors", 10000);
  put(&old, "mem.footprint_bytes", 32000);
  CU_ASSERT_EQUAL_FATAL(md_memory("A100", old.names, old.vals, old.n, c), 0);
  CHECK_MSG("no reuse features: not modelled, DRAM moves the footprint that fits in L2",
            c[6] == 0 && c[0] == 0 && fabs(c[2] - 32000) < 1e-9);
  CHECK_MSG("cache.* needs a GPU of the table",
            md_memory("NOPE", old.names, old.vals, old.n, c) == -1 &&
                strstr(rf_last_error(), "NOPE"));
  CHECK_MSG("cache.* are derived columns of the cache family",
            md_family_of("cache.l1_hit_rate") == MD_FAM_CACHE && md_family_needs_gpu(MD_FAM_CACHE));
}

/* The estimate reads the model: the same launch with its reuse in L1 is
   faster than with every load from DRAM. */
static void test_estimate_uses_it(void) {
  const an_gpu *g = an_gpu_find("A4000");
  fs f = tile_launch(48 * 4, 1e6);
  for (int b = 0; b < 14; b++) put(&f, bins[b], 0.9);
  put(&f, "mem.cta_reuse", 0.9);
  put(&f, "mem.global_sectors", 1e9);
  put(&f, "mem.global_load_sectors", 1e9);
  put(&f, "mem.global_accesses", 2.5e8);
  put(&f, "mem.footprint_bytes", 1e8);
  put(&f, "mem.share_x", 1); /* what a CTA first reads its neighbour read too */
  an_estimate hit, miss;
  CU_ASSERT_EQUAL_FATAL(an_estimate_launch(g, f.names, f.vals, f.n, &hit), 0);
  for (int b = 0; b < 14; b++) put(&f, bins[b], 0);
  put(&f, "mem.cta_reuse", 0);
  put(&f, "mem.share_x", 0);
  put(&f, "mem.footprint_bytes", 1e10);
  CU_ASSERT_EQUAL_FATAL(an_estimate_launch(g, f.names, f.vals, f.n, &miss), 0);
  CHECK_MSG("reuse served by L1: faster than every sector from DRAM, and not DRAM-bound",
            hit.time_us < miss.time_us / 3 && strcmp(hit.bound, "dram") &&
                !strcmp(miss.bound, "dram"));
  CHECK_MSG("the hit rates and DRAM bytes are reported",
            hit.l1_hit_rate > 0.85 && miss.l1_hit_rate == 0 && miss.dram_bytes > hit.dram_bytes);
}

TEST_SUITES(register_cache) {
  CU_pSuite s = tests_suite("cache");
  TEST_ADD(s, test_stream);
  TEST_ADD(s, test_table);
  TEST_ADD(s, test_stencil);
  TEST_ADD(s, test_model);
  TEST_ADD(s, test_estimate_uses_it);
}
