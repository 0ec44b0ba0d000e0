/*
 * test_run.c -- running unmodified CUDA programs on the CPU: the fatbinary
 * reader and LZ4 decoder on synthetic input, the launch records file, and
 * `kcast nvcc` + `kcast run` end to end on tests/programs/rt_*.cu (results
 * pass, dataset rows and exact counts, symbols, exit status, killed runs
 * leave the dataset unchanged, timed-out ones keep their finished launches
 * and are marked partial, unsupported entry points, managed and pinned
 * memory, copy directions from the pointers, the out-of-bounds policy, use
 * after free, the race check, device assert, launch limits, 32-bit shared addresses,
 * textures and surfaces against CPU references, many small launches, the
 * progress line on a terminal, machine-code-only and zstd-compressed
 * binaries; the runtime API as programs use it -- memory, launches,
 * streams and events, device queries, each self-checked against the CPU
 * (rt_api_*.cu) -- the launches kcast refuses by name (grid
 * synchronisation, clusters, device malloc; rt_coop.cu), relocatable device
 * code, and every entry point of cuda_runtime_api.h exported).
 *
 * The end-to-end tests need nvcc and $KCAST_BUILD/cudart/libcudart.so.13;
 * without them they pass with a note on stderr (a CPU-only checkout without
 * the toolkit still tests everything else).  Programs are compiled once
 * into $KCAST_BUILD/rtprog/ and rebuilt when their source is newer.
 */
#include "tests.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <lz4.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/rt.h"

/* ---------------------------------------------------------- helpers -- */

static double sql_num(const char *db, const char *sql) {
  sqlite3 *h;
  double v = -1;
  if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(h, sql, -1, &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
      v = sqlite3_column_double(s, 0);
    sqlite3_finalize(s);
  }
  sqlite3_close(h);
  return v;
}

/* Comma-joined text of a one-column query. */
static void sql_list(const char *db, const char *sql, char *out, size_t cap) {
  sqlite3 *h;
  out[0] = 0;
  if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) return;
  sqlite3_stmt *s;
  if (sqlite3_prepare_v2(h, sql, -1, &s, NULL) == SQLITE_OK) {
    size_t used = 0;
    while (sqlite3_step(s) == SQLITE_ROW && used < cap)
      used += (size_t)snprintf(out + used, cap - used, "%s%s", used ? "," : "",
                               (const char *)sqlite3_column_text(s, 0));
  }
  sqlite3_finalize(s);
  sqlite3_close(h);
}

static int count_of(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = hay; p && (p = strstr(p, needle)); p += strlen(needle)) n++;
  return n;
}

static void put16(uint8_t *p, unsigned v) { p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8); }
static void put32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static void put64(uint8_t *p, uint64_t v) { put32(p, (uint32_t)v), put32(p + 4, (uint32_t)(v >> 32)); }

/* Append an entry (64-byte header) to a container being built in fb. */
static size_t add_entry(uint8_t *fb, size_t off, int kind, unsigned arch, uint64_t flags,
                        const void *data, size_t stored, size_t raw) {
  uint8_t *e = fb + off;
  size_t padded = (stored + 7) / 8 * 8;
  memset(e, 0, 64 + padded);
  put16(e, (unsigned)kind);
  put16(e + 2, 0x101);
  put32(e + 4, 64);
  put64(e + 8, padded);
  if (flags & (RT_FATBIN_FLAG_LZ4 | RT_FATBIN_FLAG_ZSTD)) put32(e + 16, (uint32_t)stored);
  put32(e + 28, arch);
  put64(e + 40, flags);
  if (flags & (RT_FATBIN_FLAG_LZ4 | RT_FATBIN_FLAG_ZSTD)) put64(e + 56, raw);
  memcpy(e + 64, data, stored);
  return off + 64 + padded;
}

static void finish(uint8_t *fb, size_t end) {
  put32(fb, RT_FATBIN_MAGIC);
  put16(fb + 4, 1);
  put16(fb + 6, 16);
  put64(fb + 8, end - 16);
}

static const char ptx75[] = ".version 8.0\n.target sm_75\n.address_size 64\n// seventy-five\n";
static const char ptx90[] = ".version 8.0\n.target sm_90\n.address_size 64\n// ninety\n";

/* ------------------------------------------------- fatbinary reader -- */

static void test_fatbin_picks_best_ptx(void) {
  static uint8_t fb[4096];
  uint8_t elf[40] = {0x7f, 'E', 'L', 'F'};
  size_t off = 16;
  off = add_entry(fb, off, RT_FATBIN_ELF, 90, 0x11, elf, sizeof elf, sizeof elf);
  off = add_entry(fb, off, RT_FATBIN_PTX, 75, 0x11, ptx75, sizeof ptx75, sizeof ptx75);
  off = add_entry(fb, off, RT_FATBIN_PTX, 90, 0x11, ptx90, sizeof ptx90, sizeof ptx90);
  off = add_entry(fb, off, RT_FATBIN_PTX, 100, 0x11, ptx75, sizeof ptx75, sizeof ptx75);
  finish(fb, off);
  CU_ASSERT_EQUAL(rt_fatbin_size(fb), off); /* the header gives the container's length */
  rt_fatbin_entry e[8];
  size_t n = 0;
  char err[512];
  CU_ASSERT_EQUAL(rt_fatbin_list(fb, off, e, 8, &n, err, sizeof err), 0);
  CU_ASSERT_EQUAL(n, 4); /* all four entries are listed */
  CU_ASSERT_EQUAL(e[0].kind, RT_FATBIN_ELF);
  CU_ASSERT_EQUAL(e[2].arch, 90);
  char *ptx = NULL;
  size_t len = 0;
  unsigned arch = 0;
  CU_ASSERT_EQUAL(rt_fatbin_ptx(fb, off, &ptx, &len, &arch, err, sizeof err), 0);
  CU_ASSERT_EQUAL(arch, 90); /* highest PTX arch the emulator is meant for, not 100 */
  CU_ASSERT(ptx && strstr(ptx, "ninety"));
  CU_ASSERT_EQUAL(len, strlen(ptx90)); /* trailing NUL padding is not text */
  free(ptx);
}

static void test_fatbin_machine_code_only(void) {
  static uint8_t fb[512];
  uint8_t elf[24] = {0x7f, 'E', 'L', 'F'};
  size_t off = add_entry(fb, 16, RT_FATBIN_ELF, 90, 0x11, elf, sizeof elf, sizeof elf);
  finish(fb, off);
  char *ptx = NULL, err[512] = "";
  size_t len;
  unsigned arch;
  CU_ASSERT_EQUAL(rt_fatbin_ptx(fb, off, &ptx, &len, &arch, err, sizeof err), -1);
  CU_ASSERT_PTR_NULL(ptx);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "machine code only (sm_90)")); /* names what is there */
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "kcast nvcc"));                 /* and how to rebuild */
}

static void test_fatbin_rejects_bad_input(void) {
  static uint8_t fb[512];
  size_t off = add_entry(fb, 16, RT_FATBIN_PTX, 75, 0x11, ptx75, sizeof ptx75, sizeof ptx75);
  finish(fb, off);
  rt_fatbin_entry e[4];
  size_t n;
  char err[512] = "";
  /* fewer bytes than the header claims */
  CU_ASSERT_EQUAL(rt_fatbin_list(fb, off - 8, e, 4, &n, err, sizeof err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "available"));
  /* an entry whose payload overruns the container */
  put64(fb + 16 + 8, 1u << 20);
  CU_ASSERT_EQUAL(rt_fatbin_list(fb, off, e, 4, &n, err, sizeof err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "overruns"));
  /* wrong magic */
  put32(fb, 0x12345678);
  CU_ASSERT_EQUAL(rt_fatbin_list(fb, off, e, 4, &n, err, sizeof err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "magic"));
}

static void test_lz4_block(void) {
  /* a block liblz4's own encoder made, of PTX-like text with repeats */
  char text[4096];
  size_t tl = 0;
  for (int i = 0; tl + 64 < sizeof text; i++)
    tl += (size_t)snprintf(text + tl, sizeof text - tl, "\tld.global.f32 %%f%d, [%%rd%d+%d];\n", i % 7,
                           i % 3, 4 * i);
  char comp[LZ4_COMPRESSBOUND(4096)];
  int cn = LZ4_compress_default(text, comp, (int)tl, (int)sizeof comp);
  CU_ASSERT_FATAL(cn > 0 && (size_t)cn < tl); /* repeats compress */
  uint8_t out[4096];
  long n = rt_lz4_block((const uint8_t *)comp, (size_t)cn, out, tl);
  CU_ASSERT_EQUAL(n, (long)tl);
  CU_ASSERT_EQUAL(memcmp(out, text, tl), 0); /* the text back, byte for byte */
  /* a cut block is malformed */
  CU_ASSERT_EQUAL(rt_lz4_block((const uint8_t *)comp, (size_t)cn - 3, out, tl), -1);
  /* a distance reaching before the output start is malformed */
  const uint8_t bad[] = {0x10, 'a', 9, 0};
  CU_ASSERT_EQUAL(rt_lz4_block(bad, sizeof bad, out, sizeof out), -1);
  /* output larger than the caller's buffer is refused */
  CU_ASSERT_EQUAL(rt_lz4_block((const uint8_t *)comp, (size_t)cn, out, 8), -1);
}

static void test_fatbin_lz4_ptx(void) {
  /* the LZ4 form of CUDA 11/12: a literal-only block holding the PTX */
  static uint8_t fb[1024], blk[256];
  size_t L = sizeof ptx90, k = 0;
  blk[k++] = 0xF0;
  size_t rest = L - 15;
  while (rest >= 255) blk[k++] = 255, rest -= 255;
  blk[k++] = (uint8_t)rest;
  memcpy(blk + k, ptx90, L);
  k += L;
  size_t off = add_entry(fb, 16, RT_FATBIN_PTX, 90, 0x11 | RT_FATBIN_FLAG_LZ4, blk, k, L);
  finish(fb, off);
  char *ptx = NULL, err[512] = "";
  size_t len;
  unsigned arch;
  CU_ASSERT_EQUAL(rt_fatbin_ptx(fb, off, &ptx, &len, &arch, err, sizeof err), 0);
  CU_ASSERT(ptx && strstr(ptx, "ninety")); /* decompressed text */
  free(ptx);
}

/* ----------------------------------------------------- records file -- */

static void test_records_roundtrip(void) {
  char dir[512], path[600];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "rtrec"));
  snprintf(path, sizeof path, "%s/rec.txt", dir);
  rt_launch_rec l;
  memset(&l, 0, sizeof l);
  feat_init(&l.feats);
  feat_set(&l.feats, "op.ld.global.f32", 2000);
  feat_set(&l.feats, "ctrl.active_lane_ratio", 0.1 + 0.2); /* not exact in decimal */
  l.lseq = 7, l.grid[0] = 4, l.grid[1] = l.grid[2] = 1, l.block[0] = 256;
  l.block[1] = l.block[2] = 1, l.shmem = 64, l.insns = 12345, l.seconds = 0.5;
  l.kernel = "_Z3fooPf";
  char *a = rt_records_launch_line(&l), *b = rt_records_error_line(8, "_Z3barv", "bad\naccess");
  feat_free(&l.feats);
  CU_ASSERT_PTR_NOT_NULL_FATAL(a);
  CU_ASSERT_PTR_NOT_NULL_FATAL(b);
  size_t la = strlen(a), lb = strlen(b);
  char *all = malloc(la + lb + 32);
  int n = sprintf(all, "kcast-run 1 42\n%s%s", a, b);
  CU_ASSERT_EQUAL(tests_write_file(path, all, (size_t)n), 0);
  rt_records r;
  char err[512];
  CU_ASSERT_EQUAL(rt_records_read(path, &r, err, sizeof err), 0);
  CU_ASSERT_EQUAL(r.loaded, 1);
  CU_ASSERT_EQUAL_FATAL(r.n, 2);
  CU_ASSERT_EQUAL(r.l[0].lseq, 7);
  CU_ASSERT_EQUAL(r.l[0].shmem, 64);
  CU_ASSERT_STRING_EQUAL(r.l[0].kernel, "_Z3fooPf");
  CU_ASSERT_EQUAL(feat_get(&r.l[0].feats, "ctrl.active_lane_ratio", 0), 0.1 + 0.2); /* exact */
  CU_ASSERT(r.l[1].error && strstr(r.l[1].error, "bad access")); /* one line */
  rt_records_free(&r);
  /* a torn last line (killed writer) is refused, naming the line */
  CU_ASSERT_EQUAL(tests_write_file(path, all, (size_t)n - 3), 0);
  CU_ASSERT_EQUAL(rt_records_read(path, &r, err, sizeof err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, ":3: truncated"));
  free(all);
  free(a);
  free(b);
}

/* warn and race records attach to their launch; a torn tail is dropped on
   request (a run killed by --timeout), refused otherwise. */
static void test_records_warn_and_torn(void) {
  char dir[512], path[600];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "rtrec2"));
  snprintf(path, sizeof path, "%s/rec.txt", dir);
  char *w = rt_records_warn_line(3, "kernel k: CTA (0,0,0)\nthread");
  CU_ASSERT_PTR_NOT_NULL_FATAL(w);
  char all[1024];
  int n = snprintf(all, sizeof all, "kcast-run 1 7\nlaunch 3 1 1 1 32 1 1 0 0 96 0.5 k "
                   "emu.oob_accesses=2\n%slaunch 4 1 1 1 32 1 1 0 0 96 0.5 k\nlaunch 5 1 1",
                   w);
  free(w);
  CU_ASSERT_EQUAL(tests_write_file(path, all, (size_t)n), 0);
  rt_records r;
  char err[512];
  CU_ASSERT_EQUAL(rt_records_read(path, &r, err, sizeof err), -1); /* torn: refused */
  CU_ASSERT_EQUAL_FATAL(rt_records_read_ex(path, &r, RT_READ_TORN_OK, err, sizeof err), 0);
  CU_ASSERT_EQUAL(r.torn, 1);
  CU_ASSERT_EQUAL_FATAL(r.n, 2); /* the torn launch 5 is dropped */
  CU_ASSERT(r.l[0].warn && !strcmp(r.l[0].warn, "kernel k: CTA (0,0,0) thread"));
  CU_ASSERT_PTR_NULL(r.l[1].warn);
  rt_records_free(&r);
  /* a warn record must follow its launch */
  n = snprintf(all, sizeof all, "kcast-run 1 7\nwarn 3 first\n");
  CU_ASSERT_EQUAL(tests_write_file(path, all, (size_t)n), 0);
  CU_ASSERT_EQUAL(rt_records_read(path, &r, err, sizeof err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, ":2: malformed warn record"));
  /* race records attach to their launch beside a warn record, once each */
  char *rl = rt_records_race_line(3, "kernel k: CTA (1,0,0)\nthread");
  CU_ASSERT_PTR_NOT_NULL_FATAL(rl);
  n = snprintf(all, sizeof all, "kcast-run 1 7\nlaunch 3 1 1 1 32 1 1 0 0 96 0.5 k "
               "emu.races=5\nwarn 3 oob\n%slaunch 4 1 1 1 32 1 1 0 0 96 0.5 k\n", rl);
  CU_ASSERT_EQUAL(tests_write_file(path, all, (size_t)n), 0);
  CU_ASSERT_EQUAL_FATAL(rt_records_read(path, &r, err, sizeof err), 0);
  CU_ASSERT_EQUAL_FATAL(r.n, 2);
  CU_ASSERT(r.l[0].race && !strcmp(r.l[0].race, "kernel k: CTA (1,0,0) thread"));
  CU_ASSERT(r.l[0].warn && !strcmp(r.l[0].warn, "oob"));
  CU_ASSERT_PTR_NULL(r.l[1].race);
  rt_records_free(&r);
  n = snprintf(all, sizeof all, "kcast-run 1 7\nlaunch 3 1 1 1 32 1 1 0 0 96 0.5 k\n%s%s", rl,
               rl);
  free(rl);
  CU_ASSERT_EQUAL(tests_write_file(path, all, (size_t)n), 0);
  CU_ASSERT_EQUAL(rt_records_read(path, &r, err, sizeof err), -1); /* twice: refused */
  CU_ASSERT_PTR_NOT_NULL(strstr(err, ":4: malformed race record"));
}

/* unsupported records: one entry per name (several processes may each
   write one), in order, none a launch. */
static void test_records_unsupported(void) {
  char dir[512], path[600];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "rtrec3"));
  snprintf(path, sizeof path, "%s/rec.txt", dir);
  char *u1 = rt_records_unsupported_line("cudaGraphLaunch", "CUDA graphs\nand capture");
  char *u2 = rt_records_unsupported_line("cudaIpcGetMemHandle", "IPC");
  CU_ASSERT_PTR_NULL(rt_records_unsupported_line("two words", "x")); /* a name has no space */
  CU_ASSERT_FATAL(u1 && u2);
  char all[1024];
  int n = snprintf(all, sizeof all, "kcast-run 1 7\n%slaunch 3 1 1 1 32 1 1 0 0 96 0.5 k\n"
                   "kcast-run 1 8\n%s%s", u1, u2, u1);
  free(u1), free(u2);
  CU_ASSERT_EQUAL(tests_write_file(path, all, (size_t)n), 0);
  rt_records r;
  char err[512];
  CU_ASSERT_EQUAL_FATAL(rt_records_read(path, &r, err, sizeof err), 0);
  CU_ASSERT_EQUAL(r.n, 1); /* not launches */
  CU_ASSERT_EQUAL_FATAL(r.nunsup, 2); /* cudaGraphLaunch once, from two processes */
  CU_ASSERT_STRING_EQUAL(r.unsup[0], "cudaGraphLaunch (CUDA graphs and capture)");
  CU_ASSERT_STRING_EQUAL(r.unsup[1], "cudaIpcGetMemHandle (IPC)");
  rt_records_free(&r);
  n = snprintf(all, sizeof all, "kcast-run 1 7\nunsupported cudaGraphLaunch\n");
  CU_ASSERT_EQUAL(tests_write_file(path, all, (size_t)n), 0);
  CU_ASSERT_EQUAL(rt_records_read(path, &r, err, sizeof err), -1); /* no message */
  CU_ASSERT_PTR_NOT_NULL(strstr(err, ":2: malformed unsupported record"));
}

/* ------------------------------------------------- end to end runs -- */

static char progdir[1024];
static int e2e_ok = -1; /* -1 unknown, 0 skipped, 1 available */

/* Build tests/programs/NAME.cu with `kcast nvcc EXTRA` into progdir/OUT. */
static int build_prog(const char *name, const char *out, const char *extra, const char *nvcc) {
  char src[256], bin[1100], cmd[8192];
  snprintf(src, sizeof src, "tests/programs/%s.cu", name);
  snprintf(bin, sizeof bin, "%s/%s", progdir, out);
  struct stat ss, sb;
  if (stat(src, &ss) != 0) return -1;
  if (stat(bin, &sb) == 0 && sb.st_mtime >= ss.st_mtime) return 0;
  if (nvcc)
    snprintf(cmd, sizeof cmd, "%s %s -o %s.tmp %s && mv %s.tmp %s", nvcc, extra, bin, src, bin,
             bin);
  else
    snprintf(cmd, sizeof cmd, "%s nvcc %s -o %s.tmp %s && mv %s.tmp %s", tests_kcast(), extra,
             bin, src, bin, bin);
  char *err = NULL;
  int rc = tests_run(cmd, NULL, &err);
  if (rc) fprintf(stderr, "\n  build of %s failed: %s\n", name, err ? err : "");
  free(err);
  return rc;
}

static int e2e(void) {
  if (e2e_ok >= 0) return e2e_ok;
  char lib[1024];
  snprintf(lib, sizeof lib, "%s/cudart/libcudart.so.13", tests_build());
  snprintf(progdir, sizeof progdir, "%s/rtprog", tests_build());
  if (access(lib, R_OK) || tests_run("command -v nvcc", NULL, NULL) != 0) {
    fprintf(stderr, "\n  [skipped: nvcc or %s missing]\n", lib);
    return e2e_ok = 0;
  }
  mkdir(progdir, 0755);
  static const char *const names[] = {"rt_vecadd", "rt_symbols", "rt_multi", "rt_fail",
                                      "rt_unsupported", "rt_managed", "rt_oob", "rt_wrap",
                                      "rt_assert", "rt_limits", "rt_host", "rt_tex",
                                      "rt_steps", "rt_race", "rt_api_mem", "rt_api_exec",
                                      "rt_api_stream", "rt_api_device", "rt_coop"};
  e2e_ok = 1;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (build_prog(names[i], names[i], "-O2", NULL)) e2e_ok = 0;
  /* the per-thread default stream (the _ptds/_ptsz entry points), and two
     files with relocatable device code */
  if (build_prog("rt_api_stream", "rt_api_stream_pt", "-O2 --default-stream per-thread", NULL) ||
      build_prog("rt_rdc", "rt_rdc", "-O2 -rdc=true tests/programs/rt_rdc_dev.cu", NULL))
    e2e_ok = 0;
  /* plain nvcc: machine code only, and the default (zstd-compressed PTX) */
  if (build_prog("rt_vecadd", "vecadd_sass", "-cudart shared -gencode arch=compute_90,code=sm_90",
                 "nvcc") ||
      build_prog("rt_vecadd", "vecadd_zstd", "-cudart shared", "nvcc"))
    e2e_ok = 0;
  CU_ASSERT_EQUAL(e2e_ok, 1); /* every test program builds */
  return e2e_ok;
}

/* kcast run -o DB OPTS -- PROG ARGS; returns the exit status. */
static int krun(const char *db, const char *opts, const char *prog, const char *args, char **out,
                char **err) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "%s run -o %s %s -- %s/%s %s", tests_kcast(), db, opts, progdir,
           prog, args);
  return tests_run(cmd, out, err);
}

static void fresh_db(char *db, size_t cap, const char *tag) {
  char dir[512];
  if (!tests_tmpdir(dir, sizeof dir, tag)) {
    db[0] = 0;
    return;
  }
  snprintf(db, cap, "%s/k.db", dir);
}

static void test_run_vecadd(void) {
  if (!e2e()) return;
  char db[600], *out = NULL, *err = NULL;
  fresh_db(db, sizeof db, "rtvec");
  CU_ASSERT_EQUAL(krun(db, "", "rt_vecadd", "1000", &out, &err), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "PASS vecadd n=1000")); /* results match the CPU */
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "_Z6vecaddPKfS0_Pfi")); /* summary names the kernel */
  CU_ASSERT_EQUAL(sql_num(db, "SELECT count(*) FROM launches"), 1);
  CU_ASSERT_EQUAL(sql_num(db, "SELECT count(*) FROM launches WHERE app='rt_vecadd' AND "
                              "dataset='1000' AND lseq=0 AND grid_x=4 AND block_x=256 AND "
                              "source='kcast run'"), 1); /* keyed like kcast profile */
  /* every thread with i < n loads a[i] and b[i]: exactly 2n global loads */
  CU_ASSERT_EQUAL(sql_num(db, "SELECT sum(value) FROM features f JOIN feature_names n ON "
                              "n.id=f.name_id WHERE n.name LIKE 'op.ld.global.%'"), 2000);
  CU_ASSERT_EQUAL(sql_num(db, "SELECT value FROM features f JOIN feature_names n ON "
                              "n.id=f.name_id WHERE n.name='launch.threads'"), 1024);
  free(out), free(err);
  /* running again with another input adds a second key; --app renames */
  CU_ASSERT_EQUAL(krun(db, "--app va --dataset big", "rt_vecadd", "3000", NULL, NULL), 0);
  CU_ASSERT_EQUAL(sql_num(db, "SELECT count(*) FROM launches WHERE app='va' AND dataset='big'"),
                  1);
  CU_ASSERT_EQUAL(sql_num(db, "SELECT sum(value) FROM features f JOIN feature_names n ON "
                              "n.id=f.name_id JOIN launches l ON l.id=f.launch_id WHERE "
                              "l.app='va' AND n.name LIKE 'op.ld.global.%'"), 6000);
}

static void test_run_symbols(void) {
  if (!e2e()) return;
  char db[600], *out = NULL, *err = NULL;
  fresh_db(db, sizeof db, "rtsym");
  CU_ASSERT_EQUAL(krun(db, "", "rt_symbols", "", &out, &err), 0);
  /* constant table, device scale, atomic device counter, initialised global */
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "PASS symbols"));
  char list[256];
  sql_list(db, "SELECT lseq FROM launches WHERE app='rt_symbols' AND dataset='' ORDER BY lseq",
           list, sizeof list);
  CU_ASSERT_STRING_EQUAL(list, "0,1");
  free(out), free(err);
}

static void test_run_multi(void) {
  if (!e2e()) return;
  char db[600], *out = NULL, *err = NULL;
  fresh_db(db, sizeof db, "rtmulti");
  CU_ASSERT_EQUAL(krun(db, "--threads 2", "rt_multi", "", &out, &err), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "device kcast emulated GPU cc 9.0 count 1"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "PASS multi")); /* streams, events, memset, 2D, reduce */
  char list[512];
  sql_list(db, "SELECT kernel FROM launches ORDER BY lseq", list, sizeof list);
  CU_ASSERT_STRING_EQUAL(list, "_Z4fillPiii,_Z5scalePiii,_Z5scalePiii,_Z5scalePiii,"
                               "_Z9transposePKfmPfmii,_Z6reducePKiiPx");
  CU_ASSERT_EQUAL(sql_num(db, "SELECT shmem FROM launches WHERE lseq=5"), 1024);
  CU_ASSERT_EQUAL(sql_num(db, "SELECT grid_y FROM launches WHERE lseq=4"), 3);
  free(out), free(err);
}

static void test_run_exit_status(void) {
  if (!e2e()) return;
  char db[600], *out = NULL, *err = NULL;
  fresh_db(db, sizeof db, "rtfail");
  CU_ASSERT_EQUAL(krun(db, "", "rt_fail", "", &out, &err), 3); /* the program's status */
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "FAIL element 0"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "exited with status 3"));
  CU_ASSERT_EQUAL(sql_num(db, "SELECT count(*) FROM launches"), 1); /* its launch ran fine */
  free(out), free(err);
}

static void test_run_killed_leaves_db(void) {
  if (!e2e()) return;
  char db[600], *out = NULL, *err = NULL;
  fresh_db(db, sizeof db, "rtkill");
  CU_ASSERT_EQUAL_FATAL(krun(db, "", "rt_vecadd", "", NULL, NULL), 0);
  size_t n0 = 0, n1 = 0, n2 = 0;
  char *before = tests_read_file(db, &n0);
  /* --timeout before the program loaded the library: nothing written */
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "%s run -o %s --timeout 1 -- sleep 5", tests_kcast(), db);
  CU_ASSERT_EQUAL(tests_run(cmd, &out, &err), 137);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "timed out after 1 s"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "left unchanged"));
  char *after = tests_read_file(db, &n1);
  CU_ASSERT(before && after && n0 == n1 && !memcmp(before, after, n0)); /* byte for byte */
  free(out), free(err), free(after);
  /* kill -9 of the program mid-run (its launch records already written) */
  snprintf(cmd, sizeof cmd,
           "%s run -o %s -- %s/rt_fail spin & k=$!; sleep 1.5; "
           "for c in $(pgrep -P $k); do kill -9 $c; done; wait $k",
           tests_kcast(), db, progdir);
  CU_ASSERT_EQUAL(tests_run(cmd, NULL, &err), 137);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "killed by signal 9"));
  after = tests_read_file(db, &n2);
  CU_ASSERT(before && after && n0 == n2 && !memcmp(before, after, n0));
  free(err), free(before), free(after);
}

static void test_run_unsupported(void) {
  if (!e2e()) return;
  char db[600], *out = NULL, *err = NULL, sum[700];
  fresh_db(db, sizeof db, "rtunsup");
  snprintf(sum, sizeof sum, "--summary %s.json --format json", db);
  /* the program falls back and computes the right answer, but called what
     kcast does not implement: the run says so and exits 6 */
  CU_ASSERT_EQUAL(krun(db, sum, "rt_unsupported", "", &out, &err), 6);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "PASS unsupported")); /* cudaErrorNotSupported, no crash */
  CU_ASSERT_PTR_NULL(strstr(out, "FAIL"));
  /* the library names each call once, however often the program calls it */
  CU_ASSERT_EQUAL(count_of(err, "kcast-cudart: unsupported: cudaGraphCreate"), 1);
  CU_ASSERT_EQUAL(count_of(err, "kcast-cudart: unsupported: cudaIpcGetMemHandle"), 1);
  /* kcast run lists them, with what they belong to, and the exit status */
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "called 5 CUDA runtime functions that kcast does not "
                                     "support"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "  unsupported: cudaStreamBeginCapture (CUDA graphs"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "  unsupported: cudaGetDriverEntryPointByVersion (the "
                                     "driver API"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "exit status 6"));
  CU_ASSERT_EQUAL(sql_num(db, "SELECT count(*) FROM launches WHERE app='rt_unsupported'"), 1);
  size_t n = 0;
  char json[700];
  snprintf(json, sizeof json, "%s.json", db);
  char *js = tests_read_file(json, &n);
  CU_ASSERT(js && strstr(js, "\"unsupported\"") && strstr(js, "cudaGraphInstantiate (CUDA"));
  free(js);
  free(out), free(err);
  /* --keep-going: the run's exit status ignores them */
  CU_ASSERT_EQUAL(krun(db, "--keep-going", "rt_unsupported", "", &out, &err), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "  unsupported: cudaGraphCreate (")); /* still named */
  CU_ASSERT_PTR_NULL(strstr(err, "exit status 6"));
  free(out), free(err);
}

/* Every function cuda_runtime_api.h declares, and the per-thread default
   stream names it maps them to, are exported by the replacement: a program
   calling any of them starts and gets an answer, never the dynamic
   linker's "symbol lookup error" (exit 127) in the middle of its run. */
static void test_run_exports_whole_api(void) {
  if (!e2e()) return;
  char *hdr = NULL, *syms = NULL, cmd[2048];
  CU_ASSERT_EQUAL_FATAL(tests_run("cat \"$(dirname \"$(command -v nvcc)\")/../include/"
                                  "cuda_runtime_api.h\"", &hdr, NULL), 0);
  snprintf(cmd, sizeof cmd, "nm -D --defined-only %s/cudart/libcudart.so.13", tests_build());
  CU_ASSERT_EQUAL_FATAL(tests_run(cmd, &syms, NULL), 0);
  size_t declared = 0, missing = 0;
  for (const char *p = hdr; (p = strstr(p, "CUDARTAPI ")); ) {
    p += 10;
    char name[128], ptds[160];
    size_t k = 0;
    while ((p[k] == '_' || (p[k] >= 'a' && p[k] <= 'z') || (p[k] >= 'A' && p[k] <= 'Z') ||
            (p[k] >= '0' && p[k] <= '9')) && k < sizeof name - 1)
      k++;
    if (!k || p[k] != '(' || k >= sizeof name - 1) continue;
    memcpy(name, p, k);
    name[k] = 0;
    declared++;
    snprintf(ptds, sizeof ptds, " %s@@libcudart.so.13\n", name);
    if (!strstr(syms, ptds)) {
      if (missing++ < 5) fprintf(stderr, "\n  not exported: %s", name);
    }
  }
  for (const char *p = hdr; (p = strstr(p, "__CUDART_API_PT")); ) {
    const char *q = p + 15; /* "DS(" or "SZ(" */
    p = q;
    if ((q[0] != 'D' || q[1] != 'S') && (q[0] != 'S' || q[1] != 'Z')) continue;
    if (q[2] != '(' || q[3] == 'a') continue; /* the macro's own definition */
    char name[160];
    size_t k = 0;
    while (q[3 + k] && q[3 + k] != ')' && k < 120) k++;
    snprintf(name, sizeof name, " %.*s_pt%c%c@@libcudart.so.13\n", (int)k, q + 3,
             q[0] == 'D' ? 'd' : 's', q[0] == 'D' ? 's' : 'z');
    declared++;
    if (!strstr(syms, name) && missing++ < 5) fprintf(stderr, "\n  not exported:%s", name);
  }
  CU_ASSERT(declared > 350); /* the header's ~310 functions and ~70 per-thread names */
  CU_ASSERT_EQUAL(missing, 0);
  free(hdr), free(syms);
}

/* The memory paths (rt_api_mem.cu): device, pinned, managed, registered,
   pitched, 3-D, symbols, pools, peers, pointer attributes -- every result
   the CPU's. */
static void test_run_api_memory(void) {
  if (!e2e()) return;
  char db[600], *out = NULL, *err = NULL;
  fresh_db(db, sizeof db, "rtapimem");
  CU_ASSERT_EQUAL(krun(db, "--oob error", "rt_api_mem", "", &out, &err), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "PASS mem"));
  CU_ASSERT_PTR_NULL(strstr(out, "FAIL"));
  CU_ASSERT_PTR_NULL(strstr(err, "unsupported"));
  /* the stray pointer is named, not a crash */
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "the source 0x1234 is neither device memory nor host"));
  CU_ASSERT_EQUAL(sql_num(db, "SELECT count(*) FROM launches WHERE app='rt_api_mem'"), 10);
  free(out), free(err);
}

/* The launch paths (rt_api_exec.cu); its refused launches (the errors a GPU
   returns) are counted, named and, with --keep-going, do not fail the run. */
static void test_run_api_launches(void) {
  if (!e2e()) return;
  char db[600], *out = NULL, *err = NULL;
  fresh_db(db, sizeof db, "rtapiexec");
  CU_ASSERT_EQUAL(krun(db, "--keep-going", "rt_api_exec", "", &out, &err), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "PASS exec"));
  CU_ASSERT_PTR_NULL(strstr(out, "FAIL"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "device printf 42 from thread 1"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "cudaErrorCooperativeLaunchTooLarge"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "5 launches failed"));
  CU_ASSERT_EQUAL(sql_num(db, "SELECT count(*) FROM launches WHERE app='rt_api_exec'"), 9);
  /* cudaLaunchKernelEx's launch is recorded like any other */
  CU_ASSERT_EQUAL(sql_num(db, "SELECT count(*) FROM launches WHERE kernel="
                              "'_Z4axpyIfLi3EEvPT_PKS0_S0_i' AND block_x=256"), 1);
  free(out), free(err);
}

/* Streams, events, callbacks (rt_api_stream.cu), also built for the
   per-thread default stream, whose entry points are other names. */
static void test_run_api_streams(void) {
  if (!e2e()) return;
  char db[600], *out = NULL, *err = NULL;
  fresh_db(db, sizeof db, "rtapistream");
  CU_ASSERT_EQUAL(krun(db, "", "rt_api_stream", "", &out, &err), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "PASS stream"));
  CU_ASSERT_PTR_NULL(strstr(out, "FAIL"));
  free(out), free(err);
  CU_ASSERT_EQUAL(krun(db, "", "rt_api_stream_pt", "", &out, &err), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "PASS stream")); /* not "symbol lookup error" */
  CU_ASSERT_PTR_NULL(strstr(err, "symbol lookup error"));
  CU_ASSERT_EQUAL(sql_num(db, "SELECT count(*) FROM launches WHERE app='rt_api_stream_pt'"), 7);
  free(out), free(err);
}

/* Device queries (rt_api_device.cu): every attribute agrees with the
   properties, limits read back, one device's peer and PCI answers. */
static void test_run_api_device(void) {
  if (!e2e()) return;
  char db[600], *out = NULL, *err = NULL;
  fresh_db(db, sizeof db, "rtapidev");
  CU_ASSERT_EQUAL(krun(db, "", "rt_api_device", "", &out, &err), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "PASS device"));
  CU_ASSERT_PTR_NULL(strstr(out, "FAIL"));
  free(out), free(err);
}

/* Launches the emulator cannot run as a GPU does (rt_coop.cu) are refused
   with cudaErrorNotSupported, each named; the module's other kernels run
   and the program's fallback is right.  Exit status 4: launches were not
   recorded. */
static void test_run_refused_by_name(void) {
  if (!e2e()) return;
  char db[600], *out = NULL, *err = NULL;
  fresh_db(db, sizeof db, "rtcoop");
  CU_ASSERT_EQUAL(krun(db, "", "rt_coop", "", &out, &err), 4);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "PASS coop"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "unsupported: a cooperative launch of a kernel that "
                                     "synchronises the grid"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "unsupported: thread block clusters of (2,1,1) CTAs"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "a call of malloc, device-side malloc/free"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "5 launches failed"));
  CU_ASSERT_EQUAL(sql_num(db, "SELECT count(*) FROM launches WHERE app='rt_coop'"), 3);
  free(out), free(err);
}

/* Relocatable device code (two files, -rdc=true): kcast cannot link it;
   the run names it, no launch runs unresolved code. */
static void test_run_rdc(void) {
  if (!e2e()) return;
  char db[600], *out = NULL, *err = NULL;
  fresh_db(db, sizeof db, "rtrdc");
  CU_ASSERT_EQUAL(krun(db, "", "rt_rdc", "", &out, &err), 1); /* the program's own check */
  CU_ASSERT_PTR_NULL(strstr(out, "PASS rdc"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "unsupported: relocatable device code"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "rebuild without -rdc"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "  unsupported: __cudaRegisterLinkedBinary"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "2 launches failed"));
  CU_ASSERT_EQUAL(sql_num(db, "SELECT count(*) FROM launches WHERE app='rt_rdc'"), 0);
  free(out), free(err);
}

static void test_run_managed(void) {
  if (!e2e()) return;
  char db[600], *out = NULL, *err = NULL;
  fresh_db(db, sizeof db, "rtmanaged");
  CU_ASSERT_EQUAL(krun(db, "", "rt_managed", "", &out, &err), 0);
  /* host writes, kernel updates through the same pointer, host reads back;
     the kernel saw the host's address; __managed__ vars; copies; memset */
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "PASS managed n=1000"));
  CU_ASSERT_PTR_NULL(strstr(err, "not supported"));
  CU_ASSERT_EQUAL(sql_num(db, "SELECT count(*) FROM launches WHERE app='rt_managed'"), 1);
  free(out), free(err);
  /* a kernel writing one element past a managed array is stopped under
     --oob error, as a GPU's illegal address (exit status 4: a launch failed) */
  fresh_db(db, sizeof db, "rtmanaged2");
  CU_ASSERT_EQUAL(krun(db, "--oob error", "rt_managed", "overrun", &out, &err), 4);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "overrun: cudaErrorIllegalAddress"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "out-of-bounds")); /* in the managed window: */
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "(allocation 0x5000000"));
  free(out), free(err);
  /* under --oob warn (the default) the write is dropped and counted */
  CU_ASSERT_EQUAL(krun(db, "", "rt_managed", "overrun", &out, &err), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "overrun: cudaSuccess"));
  CU_ASSERT_EQUAL(sql_num(db, "SELECT value FROM feature_values WHERE name='emu.oob_accesses'"), 1);
  free(out), free(err);
}

static void test_run_machine_code_only(void) {
  if (!e2e()) return;
  char db[600], *out = NULL, *err = NULL;
  fresh_db(db, sizeof db, "rtsass");
  CU_ASSERT_NOT_EQUAL(krun(db, "", "vecadd_sass", "", &out, &err), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "machine code only (sm_90)"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "rebuild with `kcast nvcc`"));
  CU_ASSERT_PTR_NULL(strstr(out, "PASS"));
  free(out), free(err);
}

static void test_run_zstd_ptx(void) {
  if (!e2e()) return;
  char db[600], *out = NULL, *err = NULL;
  fresh_db(db, sizeof db, "rtzstd");
  /* nvcc 13's default: sm_75 machine code plus zstd-compressed compute_75 PTX */
  CU_ASSERT_EQUAL(krun(db, "", "vecadd_zstd", "500", &out, &err), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "PASS vecadd n=500"));
  free(out), free(err);
}

static void test_run_sample_and_usage(void) {
  if (!e2e()) return;
  char db[600], *out = NULL, *err = NULL;
  fresh_db(db, sizeof db, "rtsample");
  /* 2 of 40 CTAs: the output is wrong, the features are still recorded */
  krun(db, "--sample 2", "rt_vecadd", "10000", &out, &err);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "sampled"));
  CU_ASSERT_EQUAL(sql_num(db, "SELECT count(*) FROM launches"), 1);
  free(out), free(err);
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "%s run --sample x -- /bin/true", tests_kcast());
  CU_ASSERT_EQUAL(tests_run(cmd, NULL, NULL), 2); /* a bad option is a usage error */
  /* a program that is not a CUDA program: said, nothing written */
  CU_ASSERT_EQUAL(krun(db, "", "../kcast", "version", &out, &err), 1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "did not load kcast's libcudart.so.13"));
  free(out), free(err);
}

/* Out-of-bounds reads a GPU tolerates, those it does not, use after free,
   and the exit status of a run with a failed launch. */
static void test_run_oob(void) {
  if (!e2e()) return;
  char db[600], *out = NULL, *err = NULL;
  fresh_db(db, sizeof db, "rtoob");
  /* warn, the default: one element before and after the buffer */
  CU_ASSERT_EQUAL(krun(db, "", "rt_oob", "", &out, &err), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "PASS oob")); /* matches the CPU reference */
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "2 out-of-bounds accesses that a GPU tolerates"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "CTA (0,0,0) thread (0,0,0)")); /* the first, named */
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "ld.global.f32: out-of-bounds global read of 4 bytes"));
  CU_ASSERT_EQUAL(sql_num(db, "SELECT value FROM feature_values WHERE name='emu.oob_accesses'"), 2);
  CU_ASSERT_EQUAL(sql_num(db, "SELECT count(*) FROM launches"), 1); /* recorded */
  free(out), free(err);
  /* error: the launch fails as on a GPU's illegal address; the program
     ignores it and exits 0, kcast run does not */
  fresh_db(db, sizeof db, "rtoob2");
  CU_ASSERT_EQUAL(krun(db, "--oob error", "rt_oob", "", &out, &err), 4);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "avg3: cudaErrorIllegalAddress"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "1 launch failed in the emulator"));
  CU_ASSERT_EQUAL(sql_num(db, "SELECT count(*) FROM launches"), 0);
  free(out), free(err);
  CU_ASSERT_EQUAL(krun(db, "--oob error --keep-going", "rt_oob", "", NULL, NULL), 0);
  /* use after free is named as such */
  CU_ASSERT_EQUAL(krun(db, "--oob error", "rt_oob", "uaf", &out, &err), 4);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "use after free (allocation 0x"));
  free(out), free(err);
  /* an unmapped address fails under any policy */
  CU_ASSERT_EQUAL(krun(db, "", "rt_oob", "wild", &out, &err), 4);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "wild: cudaErrorIllegalAddress"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "unmapped global write"));
  free(out), free(err);
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "%s run --oob maybe -- /bin/true", tests_kcast());
  CU_ASSERT_EQUAL(tests_run(cmd, NULL, NULL), 2); /* a bad policy is a usage error */
}

/* --racecheck: a histo-like and a heartwall-like race, each launch named
   on stderr, recorded with emu.races, the run summarised and exit 5; the
   program still runs (its checks pass) and every launch is stored; the
   races fixed, or the check off: exit 0. */
static void test_run_racecheck(void) {
  if (!e2e()) return;
  char db[600], *out = NULL, *err = NULL;
  fresh_db(db, sizeof db, "rtrace");
  CU_ASSERT_EQUAL(krun(db, "--racecheck", "rt_race", "", &out, &err), 5);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "PASS race")); /* a race does not fail the launch */
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "launch 0 (_Z6chunksPfii): data race (--racecheck): 224 "
                                     "racing words"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "write-write race between CTAs in global memory"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "rt_race.cu:")); /* the source line (kcast nvcc: -lineinfo) */
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "launch 1 (_Z6cumsumPKfPfi): data race (--racecheck): 8 "
                                     "racing words"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "read-write race between warps in shared memory"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "kcast run: data races (--racecheck) in 2 launches: 232 "
                                     "racing words"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "exit status 5"));
  CU_ASSERT_EQUAL(sql_num(db, "SELECT count(*) FROM launches"), 3); /* all recorded */
  CU_ASSERT_EQUAL(sql_num(db, "SELECT sum(value) FROM feature_values WHERE name='emu.races'"),
                  232);
  free(out), free(err);
  /* the bugs fixed: no race, exit 0 */
  fresh_db(db, sizeof db, "rtrace2");
  CU_ASSERT_EQUAL(krun(db, "--racecheck", "rt_race", "fixed", &out, &err), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "PASS race"));
  CU_ASSERT_PTR_NULL(strstr(err, "data race"));
  CU_ASSERT_PTR_NULL(strstr(err, "race check"));
  free(out), free(err);
  /* the check off: the racing run as before */
  fresh_db(db, sizeof db, "rtrace3");
  CU_ASSERT_EQUAL(krun(db, "", "rt_race", "", &out, &err), 0);
  CU_ASSERT_PTR_NULL(strstr(err, "data race"));
  CU_ASSERT_EQUAL(sql_num(db, "SELECT count(*) FROM feature_values WHERE name='emu.races'"), 0);
  free(out), free(err);
}

static void test_run_wrap32(void) {
  if (!e2e()) return;
  char db[600], *out = NULL, *err = NULL;
  fresh_db(db, sizeof db, "rtwrap");
  CU_ASSERT_EQUAL(krun(db, "--oob error", "rt_wrap", "", &out, &err), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "PASS wrap")); /* base - 64 + 68 in 32 bits */
  free(out), free(err);
}

static void test_run_assert(void) {
  if (!e2e()) return;
  char db[600], *out = NULL, *err = NULL;
  fresh_db(db, sizeof db, "rtassert");
  CU_ASSERT_EQUAL(krun(db, "", "rt_assert", "", &out, &err), 4);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "square ok; assert kernel: cudaErrorAssert; later call: "
                                     "cudaErrorAssert")); /* sticky, as on a GPU */
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "thread (5,0,0)"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "device assertion `x[i] >= 0` failed at "
                                     "tests/programs/rt_assert.cu:22 in void check_nonneg("));
  CU_ASSERT_EQUAL(sql_num(db, "SELECT count(*) FROM launches"), 1); /* square, not the failed one */
  free(out), free(err);
  fresh_db(db, sizeof db, "rtassert2");
  CU_ASSERT_EQUAL(krun(db, "", "rt_assert", "ok", &out, &err), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "assert kernel: cudaSuccess"));
  CU_ASSERT_EQUAL(sql_num(db, "SELECT count(*) FROM launches"), 2);
  free(out), free(err);
}

static void test_run_limits(void) {
  if (!e2e()) return;
  char db[600], *out = NULL, *err = NULL;
  fresh_db(db, sizeof db, "rtlimits");
  /* the refused launches are not recorded: exit 4, each kernel named */
  CU_ASSERT_EQUAL(krun(db, "", "rt_limits", "", &out, &err), 4);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "PASS limits")); /* every error the one a GPU returns */
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "refused: grid (1,65536,1) exceeds"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "not recorded; the first, launch 0: refused"));
  char list[256];
  sql_list(db, "SELECT lseq FROM launches", list, sizeof list);
  CU_ASSERT_STRING_EQUAL(list, "6"); /* refused launches take an lseq and record nothing */
  free(out), free(err);
}

static void test_run_host_memory(void) {
  if (!e2e()) return;
  char db[600], *out = NULL, *err = NULL;
  fresh_db(db, sizeof db, "rthost");
  CU_ASSERT_EQUAL(krun(db, "--oob error", "rt_host", "", &out, &err), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "PASS host")); /* pages, zero-copy, directions */
  free(out), free(err);
}

static void test_run_textures(void) {
  if (!e2e()) return;
  char db[600], *out = NULL, *err = NULL;
  fresh_db(db, sizeof db, "rttex");
  CU_ASSERT_EQUAL(krun(db, "--oob error", "rt_tex", "", &out, &err), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "PASS tex")); /* eight cases against the CPU */
  CU_ASSERT_EQUAL(sql_num(db, "SELECT count(*) FROM launches"), 8);
  CU_ASSERT(sql_num(db, "SELECT sum(value) FROM feature_values WHERE name LIKE 'op.tex.%'") > 0);
  CU_ASSERT(sql_num(db, "SELECT sum(value) FROM feature_values WHERE name = 'class.texture'") ==
            sql_num(db, "SELECT sum(value) FROM feature_values WHERE name LIKE 'op.tex.%' OR "
                        "name LIKE 'op.suld.%' OR name LIKE 'op.sust.%'"));
  if (!strstr(out, "PASS tex")) fprintf(stderr, "\n%s\n%s\n", out, err);
  free(out), free(err);
}

/* --timeout keeps the launches that finished and marks the run partial;
   a terminal shows the progress, a pipe does not. */
static void test_run_timeout_partial_progress(void) {
  if (!e2e()) return;
  char db[600], *out = NULL, *err = NULL;
  fresh_db(db, sizeof db, "rtpartial");
  /* 1000 launches of ~50 M thread-instructions: far more than 2 s */
  CU_ASSERT_EQUAL(krun(db, "--timeout 2", "rt_steps", "1000 30000", &out, &err), 137);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "the run is marked partial"));
  double n = sql_num(db, "SELECT count(*) FROM launches");
  CU_ASSERT(n >= 1 && n < 1000); /* the finished ones */
  char lseqs[64];
  snprintf(lseqs, sizeof lseqs, "%.0f", n - 1);
  char list[8192];
  sql_list(db, "SELECT max(lseq) FROM launches", list, sizeof list);
  CU_ASSERT_STRING_EQUAL(list, lseqs); /* 0 .. n-1, none missing */
  sql_list(db, "SELECT reason FROM partial_runs", list, sizeof list);
  CU_ASSERT_PTR_NOT_NULL(strstr(list, "timed out after 2 s (--timeout)"));
  CU_ASSERT_PTR_NULL(strstr(err, "launches done")); /* stderr is no terminal: no progress */
  free(out), free(err);
  /* the launch running at the timeout is recorded from its CTAs that
     finished: 7 of 8, one of which never ends */
  fresh_db(db, sizeof db, "rtstuck");
  CU_ASSERT_EQUAL(krun(db, "--timeout 2", "rt_fail", "stuck", &out, &err), 137);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "recorded from the 7 of 8 CTAs that finished"));
  CU_ASSERT_EQUAL(sql_num(db, "SELECT f.value FROM launches l JOIN features f ON f.launch_id = l.id"
                              " JOIN feature_names n ON n.id = f.name_id WHERE l.lseq = 1 AND"
                              " n.name = 'emu.partial'"), 1);
  CU_ASSERT_EQUAL(sql_num(db, "SELECT f.value FROM launches l JOIN features f ON f.launch_id = l.id"
                              " JOIN feature_names n ON n.id = f.name_id WHERE l.lseq = 1 AND"
                              " n.name = 'emu.ctas_emulated'"), 7);
  free(out), free(err);
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "%s dataset stats %s", tests_kcast(), db);
  CU_ASSERT_EQUAL(tests_run(cmd, &out, NULL), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "(1 partial: did not finish)"));
  free(out);
  if (tests_run("command -v script", NULL, NULL) != 0) {
    fprintf(stderr, "\n  [progress on a terminal skipped: no script(1)]\n");
    return;
  }
  fresh_db(db, sizeof db, "rtprogress");
  snprintf(cmd, sizeof cmd, "script -qec '%s run -o %s --timeout 3 -- %s/rt_steps 1000 30000 "
           ">/dev/null' /dev/null", tests_kcast(), db, progdir);
  tests_run(cmd, &out, NULL);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "launches done, launch ")); /* on a terminal */
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "_Z4stepPfii"));            /* the kernel running */
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "thread-insns, "));         /* and the rate */
  free(out);
}

/* Many small launches run correctly (their speed is in bench/). */
static void test_run_small_launches(void) {
  if (!e2e()) return;
  char db[600], *out = NULL, *err = NULL;
  fresh_db(db, sizeof db, "rtsmall");
  CU_ASSERT_EQUAL(krun(db, "--threads 2", "rt_steps", "300", &out, &err), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "PASS steps: 300 launches"));
  CU_ASSERT_EQUAL(sql_num(db, "SELECT count(*) FROM launches"), 300);
  CU_ASSERT_EQUAL(sql_num(db, "SELECT count(DISTINCT f.value) FROM features f JOIN feature_names"
                              " n ON n.id = f.name_id WHERE n.name = 'ctrl.warp_insns'"), 1);
  free(out), free(err);
}

TEST_SUITES(register_run) {
  CU_pSuite s = tests_suite("run");
  TEST_ADD(s, test_fatbin_picks_best_ptx);
  TEST_ADD(s, test_fatbin_machine_code_only);
  TEST_ADD(s, test_fatbin_rejects_bad_input);
  TEST_ADD(s, test_lz4_block);
  TEST_ADD(s, test_fatbin_lz4_ptx);
  TEST_ADD(s, test_records_roundtrip);
  TEST_ADD(s, test_records_warn_and_torn);
  TEST_ADD(s, test_records_unsupported);
  TEST_ADD(s, test_run_vecadd);
  TEST_ADD(s, test_run_symbols);
  TEST_ADD(s, test_run_multi);
  TEST_ADD(s, test_run_exit_status);
  TEST_ADD(s, test_run_killed_leaves_db);
  TEST_ADD(s, test_run_unsupported);
  TEST_ADD(s, test_run_exports_whole_api);
  TEST_ADD(s, test_run_api_memory);
  TEST_ADD(s, test_run_api_launches);
  TEST_ADD(s, test_run_api_streams);
  TEST_ADD(s, test_run_api_device);
  TEST_ADD(s, test_run_refused_by_name);
  TEST_ADD(s, test_run_rdc);
  TEST_ADD(s, test_run_managed);
  TEST_ADD(s, test_run_machine_code_only);
  TEST_ADD(s, test_run_zstd_ptx);
  TEST_ADD(s, test_run_sample_and_usage);
  TEST_ADD(s, test_run_oob);
  TEST_ADD(s, test_run_racecheck);
  TEST_ADD(s, test_run_wrap32);
  TEST_ADD(s, test_run_assert);
  TEST_ADD(s, test_run_limits);
  TEST_ADD(s, test_run_host_memory);
  TEST_ADD(s, test_run_textures);
  TEST_ADD(s, test_run_timeout_partial_progress);
  TEST_ADD(s, test_run_small_launches);
}
