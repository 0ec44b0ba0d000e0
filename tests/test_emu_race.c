/*
 * test_emu_race.c -- the emulator's race check (emu_launch_cfg.racecheck,
 * emulator/emu_race.c) on the kernels of tests/kernels/races.cu, each
 * racing one beside its fixed twin:
 *
 *   - Parboil histo's pattern (CTAs storing overlapping chunks): a
 *     write-write race in global memory, both CTAs named, one count per
 *     overlapping word whatever the thread count (2 threads run on a team,
 *     several times); disjoint chunks: nothing;
 *   - a CTA reading what the next one writes: a read-write race;
 *   - Rodinia heartwall's pattern (warp 1 reads a shared word warp 0
 *     writes, the __syncthreads missing): a read-write race in shared
 *     memory naming warp 0's store; the barrier added: nothing;
 *   - bytes of one word owned by different CTAs (Parboil histo's packed
 *     counts): nothing; a byte stored by two CTAs, or stored by one and
 *     read by another: exactly those words;
 *   - atomics from every CTA to one word, a warp reading what it wrote,
 *     volatile flags between CTAs: nothing;
 *   - a last-block reduction ordered by __threadfence: nothing reported,
 *     and the note says the kernel's global memory was not checked;
 *   - the check off: no count, no emu.races, even for a racing kernel;
 *   - a sampled launch sees only the CTAs it runs, and says so.
 * Clean kernels of the whole corpus run under the check in emu_kernels
 * (test_racecheck_correct_kernels) and emu_tensor.
 */
#include "tests.h"
#include "tests/emu_fix.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define CHUNK "_Z11chunk_storePfii"
#define NEIGHBOUR "_Z14neighbour_readPfS_"
#define NOSYNC "_Z11scan_nosyncPKfPf"
#define SYNC "_Z9scan_syncPKfPf"
#define ATOMIC "_Z12atomic_countPj"
#define WARP_LOCAL "_Z10warp_localPf"
#define VOLATILE "_Z13volatile_flagPVjPj"
#define BYTES "_Z11byte_ownersPhS_i"
#define LAST "_Z10last_blockPKfPfS1_"

/* Occurrences of needle in hay. */
static int count_of(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) n++;
  return n;
}

/* Launch with the check on; 0 or -1 (asserted). */
static int launch(kfix *f, const dims *dm, int threads, uint64_t sample, feat_vec *fv,
                  emu_stats *st) {
  int rc = fix_launch_cfg(f, dm, threads, sample, fv, st);
  CHECK(rc == 0, "%s.%s %s launches under the race check (threads=%d): %s", f->corpus,
        f->compiler, f->k->name, threads, f->err);
  return rc;
}

/* ------------------------------------------------- histo's chunks -- */

static void body_chunks(kfix *f, int threads, feat_vec *fv) {
  enum { GRID = 8, BLOCK = 64, PER = 256, STRIDE = 200 };
  int runs = threads > 1 ? 4 : 1; /* a team: the order varies, the count must not */
  for (int run = 0; run < runs; run++) {
    if (fix_kernel(f, CHUNK)) return;
    fix_buf(f, 0, NULL, GRID * PER * 4);
    fix_u32(f, 1, PER);
    fix_u32(f, 2, STRIDE);
    dims dm = {{GRID, 1, 1}, {BLOCK, 1, 1}, 0};
    emu_stats st;
    feat_vec tmp;
    feat_init(&tmp);
    if (launch(f, &dm, threads, 0, run ? &tmp : fv, &st)) return;
    feat_free(&tmp);
    CHECK(st.races == (GRID - 1) * (PER - STRIDE) && st.races_shared == 0,
          "%s.%s CTAs storing chunks of %d words %d apart: each of the %d overlaps of %d words "
          "is one write-write race, counted once (threads=%d, run %d: %" PRIu64 " racing words, "
          "%" PRIu64 " in shared memory)", f->corpus, f->compiler, PER, STRIDE, GRID - 1,
          PER - STRIDE, threads, run + 1, st.races, st.races_shared);
    CHECK(strstr(st.race_first, "write-write race between CTAs in global memory") &&
              strstr(st.race_first, "st.global") && count_of(st.race_first, "CTA (") == 2 &&
              strstr(st.race_first, "(allocation 0x"),
          "%s.%s the first race names its kind, the store, the allocation and both CTAs "
          "(threads=%d): %s", f->corpus, f->compiler, threads, st.race_first);
    if (threads == 1)
      CHECK(strstr(st.race_first, "kernel " CHUNK ": CTA (1,0,0) thread (0,0,0)") &&
                strstr(st.race_first, "that CTA (0,0,0) writes too") &&
                strstr(st.race_first, "offset 800)"),
            "%s.%s on one thread the CTAs run in order: CTA 1's first store lands on CTA 0's "
            "word 200 (offset 800): %s", f->corpus, f->compiler, st.race_first);
  }
  FEAT_EQ(f, fv, "emu.races", (GRID - 1) * (PER - STRIDE));

  /* the bug fixed: chunks PER apart */
  if (fix_kernel(f, CHUNK)) return;
  fix_buf(f, 0, NULL, GRID * PER * 4);
  fix_u32(f, 1, PER);
  fix_u32(f, 2, PER);
  dims dm = {{GRID, 1, 1}, {BLOCK, 1, 1}, 0};
  emu_stats st;
  if (launch(f, &dm, threads, 0, NULL, &st)) return;
  CHECK(st.races == 0 && !st.race_first[0] && !st.race_note[0],
        "%s.%s disjoint chunks: no race, nothing named, nothing left out (threads=%d: %" PRIu64
        "; %s; %s)", f->corpus, f->compiler, threads, st.races, st.race_first, st.race_note);
}

static void test_race_histo_chunks(void) {
  int was = fix_racecheck(FIX_RACE_ON);
  for_each_compiler("races", body_chunks);
  fix_racecheck(was);
}

/* Many CTAs on a team: the count of a launch is the same every time. */
static void body_chunks_many(kfix *f, int threads, feat_vec *fv) {
  enum { GRID = 96, BLOCK = 128, PER = 1024, STRIDE = 1000 };
  for (int run = 0; run < (threads > 1 ? 3 : 1); run++) {
    if (fix_kernel(f, CHUNK)) return;
    fix_buf(f, 0, NULL, GRID * PER * 4);
    fix_u32(f, 1, PER);
    fix_u32(f, 2, STRIDE);
    dims dm = {{GRID, 1, 1}, {BLOCK, 1, 1}, 0};
    emu_stats st;
    if (launch(f, &dm, threads, 0, run ? NULL : fv, &st)) return;
    CHECK(st.races == (GRID - 1) * (PER - STRIDE),
          "%s.%s %d CTAs, overlaps of %d words: %d racing words on %d threads (run %d: %" PRIu64
          ")", f->corpus, f->compiler, GRID, PER - STRIDE, (GRID - 1) * (PER - STRIDE), threads,
          run + 1, st.races);
  }
}

static void test_race_count_any_order(void) {
  int was = fix_racecheck(FIX_RACE_ON);
  for_each_compiler("races", body_chunks_many);
  fix_racecheck(was);
}

/* --------------------------------------------- read-write, global -- */

static void body_neighbour(kfix *f, int threads, feat_vec *fv) {
  enum { GRID = 4 };
  if (fix_kernel(f, NEIGHBOUR)) return;
  fix_buf(f, 0, NULL, GRID * 64 * 4);
  fix_buf(f, 1, NULL, GRID * 4);
  dims dm = {{GRID, 1, 1}, {64, 1, 1}, 0};
  emu_stats st;
  if (launch(f, &dm, threads, 0, fv, &st)) return;
  CHECK(st.races == GRID - 1 && strstr(st.race_first, "read-write race between CTAs in global "
                                                      "memory"),
        "%s.%s CTA c reads the word CTA c + 1 writes: %d read-write races (threads=%d: %" PRIu64
        "; %s)", f->corpus, f->compiler, GRID - 1, threads, st.races, st.race_first);
  if (threads == 1)
    CHECK(strstr(st.race_first, "CTA (1,0,0) thread (0,0,0)") &&
              strstr(st.race_first, "it writes 4 bytes") &&
              strstr(st.race_first, "that CTA (0,0,0) reads"),
          "%s.%s on one thread CTA 1's store finds CTA 0's read: %s", f->corpus, f->compiler,
          st.race_first);
}

static void test_race_read_write_global(void) {
  int was = fix_racecheck(FIX_RACE_ON);
  for_each_compiler("races", body_neighbour);
  fix_racecheck(was);
}

/* --------------------------------------------- heartwall's scan -- */

static void body_scan(kfix *f, int threads, feat_vec *fv) {
  enum { GRID = 3, N = GRID * 64 };
  static float in[N], got[N], want[N];
  for (int i = 0; i < N; i++) in[i] = (float)(i % 11) - 3.0f;
  for (int s = 0; s < 2; s++) {
    if (fix_kernel(f, s ? SYNC : NOSYNC)) return;
    fix_buf(f, 0, in, sizeof in);
    uint64_t out = fix_buf(f, 1, NULL, sizeof got);
    dims dm = {{GRID, 1, 1}, {64, 1, 1}, 0};
    emu_stats st;
    feat_vec tmp;
    feat_init(&tmp);
    if (launch(f, &dm, threads, 0, s ? &tmp : fv, &st)) return;
    feat_free(&tmp);
    if (!s) {
      CHECK(st.races == GRID && st.races_shared == GRID,
            "%s.%s warp 1 reads row[31] that warp 0 writes with no barrier between: one race "
            "in shared memory per CTA (threads=%d: %" PRIu64 ", %" PRIu64 " in shared memory)",
            f->corpus, f->compiler, threads, st.races, st.races_shared);
      CHECK(strstr(st.race_first, "CTA (0,0,0) thread (32,0,0)") &&
                strstr(st.race_first, "ld.shared") &&
                strstr(st.race_first, "read-write race between warps in shared memory") &&
                strstr(st.race_first, "shared offset 124") &&
                strstr(st.race_first, "that warp 0 wrote (") && strstr(st.race_first, "st.shared"),
            "%s.%s the race names the reading thread, the word, warp 0 and its store (threads=%d): "
            "%s", f->corpus, f->compiler, threads, st.race_first);
      continue;
    }
    CHECK(st.races == 0 && !st.race_first[0],
          "%s.%s the __syncthreads added: no race (threads=%d: %" PRIu64 "; %s)", f->corpus,
          f->compiler, threads, st.races, st.race_first);
    fix_get(f, got, out, sizeof got);
    for (int c = 0; c < GRID; c++)
      for (int t = 0; t < 64; t++)
        want[c * 64 + t] = t < 32 ? 2.0f * in[c * 64 + t] : in[c * 64 + t] + 2.0f * in[c * 64 + 31];
    WORDS_EQ(f, "the fixed scan's row", got, want, N);
  }
}

static void test_race_heartwall_scan(void) {
  int was = fix_racecheck(FIX_RACE_ON);
  for_each_compiler("races", body_scan);
  fix_racecheck(was);
}

/* ------------------------------------------------ bytes of a word -- */

static void body_bytes(kfix *f, int threads, feat_vec *fv) {
  for (int clash = 0; clash < 2; clash++)
    for (int run = 0; run < (threads > 1 ? 4 : 1); run++) {
      if (fix_kernel(f, BYTES)) return;
      uint64_t b = fix_buf(f, 0, NULL, 16);
      fix_buf(f, 1, NULL, 16);
      fix_u32(f, 2, (uint32_t)clash);
      dims dm = {{4, 1, 1}, {32, 1, 1}, 0};
      emu_stats st;
      feat_vec tmp;
      feat_init(&tmp);
      if (launch(f, &dm, threads, 0, clash && !run ? fv : &tmp, &st)) return;
      feat_free(&tmp);
      if (!clash) {
        uint8_t got[4], want[4] = {1, 2, 3, 4};
        fix_get(f, got, b, 4);
        WORDS_EQ(f, "each CTA's byte of word 0", got, want, 4);
        CHECK(st.races == 0, "%s.%s four CTAs storing four bytes of one word and reading four "
              "bytes of another: no race (threads=%d, run %d: %" PRIu64 "; %s)", f->corpus,
              f->compiler, threads, run + 1, st.races, st.race_first);
      } else {
        CHECK(st.races == 2, "%s.%s a byte two CTAs store and a byte one CTA reads and another "
              "stores: two racing words, the bytes beside them still no race (threads=%d, run "
              "%d: %" PRIu64 "; %s)", f->corpus, f->compiler, threads, run + 1, st.races,
              st.race_first);
      }
    }
}

static void test_race_bytes(void) {
  int was = fix_racecheck(FIX_RACE_ON);
  for_each_compiler("races", body_bytes);
  fix_racecheck(was);
}

/* ---------------------------------------------------- not races -- */

static void body_not_races(kfix *f, int threads, feat_vec *fv) {
  emu_stats st;
  /* atomics from every thread of 16 CTAs to one word */
  if (fix_kernel(f, ATOMIC)) return;
  uint64_t cnt = fix_buf(f, 0, NULL, 4);
  dims da = {{16, 1, 1}, {64, 1, 1}, 0};
  if (launch(f, &da, threads, 0, fv, &st)) return;
  uint32_t n = 0;
  fix_get(f, &n, cnt, 4);
  CHECK(n == 16 * 64 && st.races == 0, "%s.%s atomicAdd from 1024 threads of 16 CTAs to one "
        "word: counted (%u) and no race (threads=%d: %" PRIu64 "; %s)", f->corpus, f->compiler,
        n, threads, st.races, st.race_first);
  /* a warp reading what it wrote, a CTA re-reading its own global word */
  if (fix_kernel(f, WARP_LOCAL)) return;
  fix_buf(f, 0, NULL, 4 * 128 * 4);
  dims dw = {{4, 1, 1}, {128, 1, 1}, 0};
  if (launch(f, &dw, threads, 0, NULL, &st)) return;
  CHECK(st.races == 0, "%s.%s a warp reading its neighbour lane's shared word with no barrier, "
        "a thread re-reading its global word: no race (threads=%d: %" PRIu64 "; %s)", f->corpus,
        f->compiler, threads, st.races, st.race_first);
  /* volatile stores and loads between CTAs */
  if (fix_kernel(f, VOLATILE)) return;
  fix_buf(f, 0, NULL, 64);
  fix_buf(f, 1, NULL, 64);
  dims dv = {{8, 1, 1}, {32, 1, 1}, 0};
  if (launch(f, &dv, threads, 0, NULL, &st)) return;
  CHECK(st.races == 0, "%s.%s volatile flags stored by one CTA and loaded by the next: strong "
        "accesses, no race (threads=%d: %" PRIu64 "; %s)", f->corpus, f->compiler, threads,
        st.races, st.race_first);
}

static void test_race_not_races(void) {
  int was = fix_racecheck(FIX_RACE_ON);
  for_each_compiler("races", body_not_races);
  fix_racecheck(was);
}

/* A last-block sum ordered by __threadfence and an atomic ticket. */
static void body_last_block(kfix *f, int threads, feat_vec *fv) {
  enum { GRID = 8 };
  float in[GRID], sum = 0, want = 0;
  for (int i = 0; i < GRID; i++) in[i] = (float)(i + 1), want += in[i];
  uint64_t tk;
  size_t tsz;
  CHECK(emu_symbol(f->em, "ticket", &tk, &tsz, f->err, sizeof f->err) == 0, "%s.%s has ticket: %s",
        f->corpus, f->compiler, f->err);
  uint32_t zero = 0;
  emu_memcpy_htod(f->d, tk, &zero, 4, f->err, sizeof f->err);
  if (fix_kernel(f, LAST)) return;
  fix_buf(f, 0, in, sizeof in);
  fix_buf(f, 1, NULL, sizeof in);
  uint64_t s = fix_buf(f, 2, NULL, 4);
  dims dm = {{GRID, 1, 1}, {32, 1, 1}, 0};
  emu_stats st;
  if (launch(f, &dm, threads, 0, fv, &st)) return;
  fix_get(f, &sum, s, 4);
  CHECK(sum == want && st.races == 0 && strstr(st.race_note, "not checked") &&
            strstr(st.race_note, "fences") && strstr(st.race_note, "membar.gl"),
        "%s.%s a last-block reduction after __threadfence: the right sum (%g), no race reported, "
        "and the note says its global memory was not checked (threads=%d: %" PRIu64 "; %s)",
        f->corpus, f->compiler, sum, threads, st.races, st.race_note);
}

static void test_race_fenced_kernel(void) {
  int was = fix_racecheck(FIX_RACE_ON);
  for_each_compiler("races", body_last_block);
  fix_racecheck(was);
}

/* The check off: nothing counted, no emu.races, the same counts. */
static void body_off(kfix *f, int threads, feat_vec *fv) {
  feat_vec on;
  feat_init(&on);
  for (int mode = 0; mode < 2; mode++) {
    int was = fix_racecheck(mode ? FIX_RACE_ON : FIX_RACE_OFF);
    if (fix_kernel(f, CHUNK)) return;
    fix_buf(f, 0, NULL, 8 * 256 * 4);
    fix_u32(f, 1, 256);
    fix_u32(f, 2, 200);
    dims dm = {{8, 1, 1}, {64, 1, 1}, 0};
    emu_stats st;
    int rc = fix_launch_cfg(f, &dm, threads, 0, mode ? &on : fv, &st);
    fix_racecheck(was);
    CHECK(rc == 0, "%s.%s launches: %s", f->corpus, f->compiler, f->err);
    if (!mode)
      CHECK(st.races == 0 && !st.race_first[0] && isnan(feat_get(fv, "emu.races", NAN)),
            "%s.%s without the check a racing launch counts nothing and has no emu.races "
            "(threads=%d: %" PRIu64 ")", f->corpus, f->compiler, threads, st.races);
  }
  /* every other feature is what the check-off launch gave */
  size_t diff = 0;
  for (size_t i = 0; i < fv->n; i++) diff += feat_get(&on, fv->names[i], NAN) != fv->vals[i];
  CHECK(diff == 0 && on.n == fv->n + 1, "%s.%s the check changes no feature, it adds emu.races "
        "(%zu differ; %zu vs %zu names)", f->corpus, f->compiler, diff, on.n, fv->n);
  feat_free(&on);
}

static void test_race_check_off(void) { for_each_compiler("races", body_off); }

/* A sampled launch checks the CTAs it runs against each other only. */
static void body_sampled(kfix *f, int threads, feat_vec *fv) {
  enum { GRID = 64 };
  if (fix_kernel(f, CHUNK)) return;
  fix_buf(f, 0, NULL, GRID * 256 * 4);
  fix_u32(f, 1, 256);
  fix_u32(f, 2, 200);
  dims dm = {{GRID, 1, 1}, {64, 1, 1}, 0};
  emu_stats st;
  if (launch(f, &dm, threads, 8, fv, &st)) return;
  CHECK(st.races == 0 && strstr(st.race_note, "sampled") && strstr(st.race_note, "8 CTAs"),
        "%s.%s 8 of 64 CTAs, none adjacent: their overlaps with the CTAs not run are not seen, "
        "and the note says so (threads=%d: %" PRIu64 "; %s)", f->corpus, f->compiler, threads,
        st.races, st.race_note);
}

static void test_race_sampled(void) {
  int was = fix_racecheck(FIX_RACE_ON);
  for_each_compiler("races", body_sampled);
  fix_racecheck(was);
}

TEST_SUITES(register_emu_race) {
  CU_pSuite s = tests_suite("emu_race");
  TEST_ADD(s, test_race_histo_chunks);
  TEST_ADD(s, test_race_count_any_order);
  TEST_ADD(s, test_race_read_write_global);
  TEST_ADD(s, test_race_heartwall_scan);
  TEST_ADD(s, test_race_bytes);
  TEST_ADD(s, test_race_not_races);
  TEST_ADD(s, test_race_fenced_kernel);
  TEST_ADD(s, test_race_check_off);
  TEST_ADD(s, test_race_sampled);
}
