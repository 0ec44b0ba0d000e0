/*
 * test_cli_emulate.c -- `kcast emulate` end to end: buffers filled from
 * --arg specs, the bytes --dump writes, the JSON/CSV/table contracts, kernel
 * selection by source name, sampling, the race check, and the exit codes
 * and messages of bad --arg text, a wrong argument count, an out-of-bounds
 * launch and an exhausted budget.
 *
 * Input is the corpus saxpy (nvcc, else clang) when the test build made it,
 * else the committed tests/ptx/saxpy_nvcc.ptx: both hold _Z5saxpyifPKfPf
 * with parameters (.u32 n, .f32 a, .u64 x, .u64 y).
 */
#include "tests.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#define ASSERT_MSG(msg, value) \
  CU_assertImplementation(!!(value), __LINE__, (msg), __FILE__, "", CU_FALSE)

#define SAXPY "_Z5saxpyifPKfPf"

static char saxpy_path[4200];

static const char *saxpy_file(void) {
  const char *cands[] = {"saxpy.nvcc.ptx", "saxpy.clang.ptx"};
  struct stat sb;
  for (int i = 0; i < 2; i++) {
    snprintf(saxpy_path, sizeof saxpy_path, "%s/corpus/%s", tests_build(), cands[i]);
    if (!stat(saxpy_path, &sb)) return saxpy_path;
  }
  snprintf(saxpy_path, sizeof saxpy_path, "tests/ptx/saxpy_nvcc.ptx");
  return saxpy_path;
}

static int emulate(const char *args, char **out, char **err) {
  char cmd[16384];
  snprintf(cmd, sizeof cmd, "'%s' emulate %s", tests_kcast(), args);
  return tests_run(cmd, out, err);
}

/* y = 2*x + y over seqf buffers: y[i] = 3i exactly; the dump holds it. */
/* Commas outside double quotes: the field separators of a CSV line. */
static size_t count_seps(const char *s) {
  size_t n = 0;
  int q = 0;
  for (; *s; s++) {
    if (*s == '"') q = !q;
    else if (*s == ',' && !q) n++;
  }
  return n;
}

static void test_dump_and_json(void) {
  char dir[4096], dump[4300], args[12000];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "emulate"));
  snprintf(dump, sizeof dump, "%s/y.bin", dir);
  snprintf(args, sizeof args,
           "'%s' --kernel saxpy --grid 5 --block 256 --arg 1000 --arg 2.0 "
           "--arg buf:4000:seqf --arg buf:4000:seqf --dump 3='%s' --format json",
           saxpy_file(), dump);
  char *out = NULL, *err = NULL;
  int rc = emulate(args, &out, &err);
  CU_ASSERT_EQUAL(rc, 0);
  if (rc) printf("\n    stderr: %s ", err ? err : "");
  size_t len = 0;
  char *bytes = tests_read_file(dump, &len);
  ASSERT_MSG("--dump wrote the 4000-byte buffer of parameter 3", bytes && len == 4000);
  if (bytes && len == 4000) {
    int bad = 0;
    for (int i = 0; i < 1000; i++) {
      float v;
      memcpy(&v, bytes + 4 * i, 4);
      if (v != 3.0f * (float)i) bad++;
    }
    ASSERT_MSG("the dumped y is 2*x + y = 3i for every element", bad == 0);
  }
  free(bytes);

  cJSON *root = out ? cJSON_Parse(out) : NULL;
  ASSERT_MSG("stdout is one JSON object", cJSON_IsObject(root));
  cJSON *k = cJSON_GetObjectItemCaseSensitive(root, "kernel");
  ASSERT_MSG("\"kernel\" is the mangled name", cJSON_IsString(k) && !strcmp(k->valuestring, SAXPY));
  cJSON *fs = cJSON_GetObjectItemCaseSensitive(root, "features");
  ASSERT_MSG("\"features\" is an object", cJSON_IsObject(fs));
  int all_numbers = cJSON_GetArraySize(fs) > 0, families = 1;
  cJSON *it;
  cJSON_ArrayForEach(it, fs) {
    if (!cJSON_IsNumber(it)) all_numbers = 0;
    const char *nm = it->string;
    if (strncmp(nm, "launch.", 7) && strncmp(nm, "op.", 3) && strncmp(nm, "class.", 6) &&
        strncmp(nm, "mem.", 4) && strncmp(nm, "ctrl.", 5) && strncmp(nm, "emu.", 4) &&
        strncmp(nm, "arg.", 4))
      families = 0;
  }
  ASSERT_MSG("every feature is a number", all_numbers);
  ASSERT_MSG("every feature is launch.*, op.*, class.*, mem.*, ctrl.*, arg.* or emu.*", families);
  cJSON *thr = cJSON_GetObjectItemCaseSensitive(fs, "launch.threads");
  ASSERT_MSG("launch.threads is grid*block = 1280", cJSON_IsNumber(thr) && thr->valuedouble == 1280);
  cJSON *ldg = cJSON_GetObjectItemCaseSensitive(fs, "class.ld_global");
  ASSERT_MSG("class.ld_global is 2n = 2000", cJSON_IsNumber(ldg) && ldg->valuedouble == 2000);
  cJSON *gb = cJSON_GetObjectItemCaseSensitive(fs, "mem.global_bytes");
  ASSERT_MSG("mem.global_bytes is 12n", cJSON_IsNumber(gb) && gb->valuedouble == 12000);
  cJSON *em = cJSON_GetObjectItemCaseSensitive(root, "emulation");
  ASSERT_MSG("\"emulation\" is an object", cJSON_IsObject(em));
  const char *nums[] = {"ctas_total", "ctas_run", "thread_insns", "warp_insns", "seconds"};
  for (int i = 0; i < 5; i++) {
    cJSON *v = cJSON_GetObjectItemCaseSensitive(em, nums[i]);
    CU_ASSERT_TRUE(cJSON_IsNumber(v)); /* each documented statistic is a number */
  }
  cJSON *ct = cJSON_GetObjectItemCaseSensitive(em, "ctas_total");
  cJSON *cr = cJSON_GetObjectItemCaseSensitive(em, "ctas_run");
  ASSERT_MSG("all 5 CTAs ran", cJSON_IsNumber(ct) && ct->valuedouble == 5 && cJSON_IsNumber(cr) &&
                                   cr->valuedouble == 5);
  cJSON *ti = cJSON_GetObjectItemCaseSensitive(em, "thread_insns");
  ASSERT_MSG("thread_insns is positive", cJSON_IsNumber(ti) && ti->valuedouble > 0);
  ASSERT_MSG("sampled is false for a full launch",
             cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(em, "sampled")));
  cJSON_Delete(root);
  free(out);
  free(err);
  remove(dump);
  rmdir(dir);
}

static size_t count_char(const char *s, char c) {
  size_t n = 0;
  for (; *s; s++) n += *s == c;
  return n;
}

static void test_table_and_csv(void) {
  char args[8192];
  char *out = NULL, *err = NULL;
  snprintf(args, sizeof args,
           "'%s' --kernel " SAXPY " --grid 2 --block 128 --arg 200 --arg 1 --arg buf:1k:randf "
           "--arg buf:1k",
           saxpy_file());
  CU_ASSERT_EQUAL(emulate(args, &out, &err), 0);
  ASSERT_MSG("the table names the kernel", out && strstr(out, "kernel " SAXPY));
  ASSERT_MSG("the table lists op.* counts", out && strstr(out, "op.fma.rn.f32"));
  ASSERT_MSG("the table ends with the emulation statistics", out && strstr(out, "emulation") &&
                                                                  strstr(out, "thread_insns"));
  free(out);
  free(err);

  snprintf(args, sizeof args,
           "'%s' --kernel saxpy --grid 2 --block 128 --arg 200 --arg 1 --arg buf:1k:rand:5 "
           "--arg buf:1k --format csv",
           saxpy_file());
  out = err = NULL;
  CU_ASSERT_EQUAL(emulate(args, &out, &err), 0);
  ASSERT_MSG("csv has a header row and one data row", out && count_char(out, '\n') == 2);
  if (out && count_char(out, '\n') == 2) {
    char *nl = strchr(out, '\n');
    *nl = 0;
    char *row = nl + 1;
    row[strlen(row) - 1] = 0;
    ASSERT_MSG("the header starts with the kernel column", !strncmp(out, "kernel,", 7));
    ASSERT_MSG("the header has the emulation columns", strstr(out, "emulation.sampled") != NULL);
    ASSERT_MSG("the header has the features", strstr(out, "launch.threads") != NULL);
    ASSERT_MSG("the row starts with the mangled name", !strncmp(row, SAXPY ",", strlen(SAXPY) + 1));
    ASSERT_MSG("the row has a field per column", count_char(out, ',') == count_seps(row));
    ASSERT_MSG("the demangled signature follows the mangled name",
               strstr(row, ",\"saxpy(int, float, float const*, float*)\","));
  }
  free(out);
  free(err);
}

/* Fills: seq words, randf floats in [0,1), file= contents. */
static void test_fills(void) {
  char dir[4096], dx[4300], dy[4300], src[4300], args[16000];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "emulate"));
  snprintf(dx, sizeof dx, "%s/x.bin", dir);
  snprintf(dy, sizeof dy, "%s/y.bin", dir);
  snprintf(src, sizeof src, "%s/src.bin", dir);
  float xs[100];
  for (int i = 0; i < 100; i++) xs[i] = (float)i * 0.25f;
  CU_ASSERT_EQUAL_FATAL(tests_write_file(src, xs, sizeof xs), 0);
  /* n = 0: nothing changes, so the dumps show the fills themselves. */
  snprintf(args, sizeof args,
           "'%s' --kernel saxpy --grid 1 --block 32 --arg 0 --arg 1 --arg buf:1000:randf:7 "
           "--arg buf:1002:seq --dump 2='%s' --dump 3='%s' --format json",
           saxpy_file(), dx, dy);
  char *out = NULL, *err = NULL;
  CU_ASSERT_EQUAL(emulate(args, &out, &err), 0);
  free(out);
  free(err);
  size_t lx = 0, ly = 0;
  char *bx = tests_read_file(dx, &lx), *by = tests_read_file(dy, &ly);
  ASSERT_MSG("randf buffer dumped with its 1000 bytes", bx && lx == 1000);
  ASSERT_MSG("seq buffer dumped with its 1002 bytes", by && ly == 1002);
  if (bx && lx == 1000) {
    int in01 = 1, distinct = 0;
    float prev = -1;
    for (int i = 0; i < 250; i++) {
      float v;
      memcpy(&v, bx + 4 * i, 4);
      if (!(v >= 0.0f && v < 1.0f)) in01 = 0;
      if (v != prev) distinct++;
      prev = v;
    }
    ASSERT_MSG("randf gives floats in [0,1)", in01);
    ASSERT_MSG("randf values vary", distinct > 200);
    /* the documented values: word k is the float of the top 24 bits of
       splitmix64 output k from the seed, over 2^24 (the buffer is filled
       page by page as the launch reaches it; a dump reads every page) */
    uint64_t st = 7;
    int exact = 1;
    for (int i = 0; i < 250; i++) {
      uint64_t z = (st += 0x9E3779B97F4A7C15ull);
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      z ^= z >> 31;
      float want = (float)(z >> 40) / 16777216.0f, v;
      memcpy(&v, bx + 4 * i, 4);
      if (v != want) exact = 0;
    }
    ASSERT_MSG("randf:7 word k is splitmix64(7) output k's top 24 bits / 2^24", exact);
  }
  if (by && ly == 1002) {
    int ok = 1;
    for (uint32_t i = 0; i < 250; i++) {
      uint32_t w;
      memcpy(&w, by + 4 * i, 4);
      if (w != i) ok = 0;
    }
    ASSERT_MSG("seq gives 32-bit words 0, 1, 2, ...", ok);
    ASSERT_MSG("seq's partial last word holds the low bytes of 250",
               (unsigned char)by[1000] == 250 && by[1001] == 0);
  }
  free(bx);
  free(by);

  /* file= fills the front of the buffer; y = 1*x + 0. */
  snprintf(args, sizeof args,
           "'%s' --kernel saxpy --grid 1 --block 128 --arg 100 --arg 1 --arg buf:400:file='%s' "
           "--arg buf:400 --dump 3='%s'",
           saxpy_file(), src, dy);
  out = err = NULL;
  CU_ASSERT_EQUAL(emulate(args, &out, &err), 0);
  free(out);
  free(err);
  by = tests_read_file(dy, &ly);
  ASSERT_MSG("file= buffer went through saxpy unchanged", by && ly == 400 && !memcmp(by, xs, 400));
  free(by);

  /* A file larger than its buffer is a user error naming the file. */
  snprintf(args, sizeof args,
           "'%s' --kernel saxpy --grid 1 --block 32 --arg 1 --arg 1 --arg buf:100:file='%s' "
           "--arg buf:400",
           saxpy_file(), src);
  out = err = NULL;
  CU_ASSERT_EQUAL(emulate(args, &out, &err), 1);
  ASSERT_MSG("the message names the oversized file", err && strstr(err, "src.bin") &&
                                                         strstr(err, "larger"));
  free(out);
  free(err);
  remove(dx);
  remove(dy);
  remove(src);
  rmdir(dir);
}

static void test_bad_args(void) {
  char args[8192];
  char *out = NULL, *err = NULL;
  const char *f = saxpy_file();

  snprintf(args, sizeof args, "'%s' --kernel saxpy --grid 1 --block 32 --arg 12abc --arg 1 --arg buf:64 --arg buf:64", f);
  CU_ASSERT_EQUAL(emulate(args, &out, &err), 2);
  ASSERT_MSG("junk integer: the message names --arg 0 and its text",
             err && strstr(err, "--arg 0") && strstr(err, "12abc"));
  free(out); free(err); out = err = NULL;

  snprintf(args, sizeof args, "'%s' --kernel saxpy --grid 1 --block 32 --arg 1 --arg 1.5.3 --arg buf:64 --arg buf:64", f);
  CU_ASSERT_EQUAL(emulate(args, &out, &err), 2);
  ASSERT_MSG("junk float: the message names --arg 1 and its text",
             err && strstr(err, "--arg 1") && strstr(err, "1.5.3"));
  free(out); free(err); out = err = NULL;

  snprintf(args, sizeof args, "'%s' --kernel saxpy --grid 1 --block 32 --arg 4294967296 --arg 1 --arg buf:64 --arg buf:64", f);
  CU_ASSERT_EQUAL(emulate(args, &out, &err), 2);
  ASSERT_MSG("2^32 does not fit the .u32 parameter", err && strstr(err, "out of range"));
  free(out); free(err); out = err = NULL;

  snprintf(args, sizeof args, "'%s' --kernel saxpy --grid 1 --block 32 --arg 1 --arg 1 --arg buf:zz --arg buf:64", f);
  CU_ASSERT_EQUAL(emulate(args, &out, &err), 2);
  ASSERT_MSG("bad buffer size: the message names --arg 2", err && strstr(err, "--arg 2"));
  free(out); free(err); out = err = NULL;

  snprintf(args, sizeof args, "'%s' --kernel saxpy --grid 1 --block 32 --arg 1 --arg 1 --arg buf:64:bogus --arg buf:64", f);
  CU_ASSERT_EQUAL(emulate(args, &out, &err), 2);
  ASSERT_MSG("unknown fill is named", err && strstr(err, "bogus"));
  free(out); free(err); out = err = NULL;

  snprintf(args, sizeof args, "'%s' --kernel saxpy --grid 1 --block 32 --arg buf:64 --arg 1 --arg buf:64 --arg buf:64", f);
  CU_ASSERT_EQUAL(emulate(args, &out, &err), 2);
  ASSERT_MSG("a buffer for a 32-bit parameter is refused", err && strstr(err, "64-bit"));
  free(out); free(err); out = err = NULL;

  /* Wrong count: the message lists the parameters with their types. */
  snprintf(args, sizeof args, "'%s' --kernel saxpy --grid 1 --block 32 --arg 1 --arg 2 --arg buf:64", f);
  CU_ASSERT_EQUAL(emulate(args, &out, &err), 2);
  ASSERT_MSG("wrong --arg count: message says 4 parameters, got 3",
             err && strstr(err, "4 parameters") && strstr(err, "got 3"));
  ASSERT_MSG("wrong --arg count: message lists the parameter types",
             err && strstr(err, ".u32") && strstr(err, ".f32") && strstr(err, ".u64") &&
                 strstr(err, "_param_3"));
  free(out); free(err); out = err = NULL;

  snprintf(args, sizeof args, "'%s' --kernel saxpy --grid 1 --block 32 --arg 1 --arg 1 --arg buf:64 --arg buf:64 --dump 1=never-written.bin", f);
  CU_ASSERT_EQUAL(emulate(args, &out, &err), 2);
  ASSERT_MSG("--dump of a scalar parameter is refused", err && strstr(err, "not a buf"));
  free(out); free(err); out = err = NULL;

  snprintf(args, sizeof args, "'%s' --kernel saxpy --block 32 --arg 1 --arg 1 --arg buf:64 --arg buf:64", f);
  CU_ASSERT_EQUAL(emulate(args, &out, &err), 2);
  ASSERT_MSG("missing --grid is a usage error", err && strstr(err, "--grid"));
  free(out); free(err); out = err = NULL;

  snprintf(args, sizeof args, "'%s' --kernel saxpy --grid 1 --block 64,32 --arg 1 --arg 1 --arg buf:64 --arg buf:64", f);
  CU_ASSERT_EQUAL(emulate(args, &out, &err), 2);
  ASSERT_MSG("a block of more than 1024 threads is refused", err && strstr(err, "1024"));
  free(out); free(err); out = err = NULL;

  snprintf(args, sizeof args, "'%s' --grid 1 --block 32 --kernel nosuch --arg 1", f);
  CU_ASSERT_EQUAL(emulate(args, &out, &err), 1);
  ASSERT_MSG("an unknown kernel is named", err && strstr(err, "nosuch"));
  free(out); free(err);
}

/* A failed launch: exit 1, the kernel named, no dump file left behind. */
static void test_launch_errors(void) {
  char dir[4096], dump[4300], args[12000];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "emulate"));
  snprintf(dump, sizeof dump, "%s/y.bin", dir);
  snprintf(args, sizeof args,
           "'%s' --kernel saxpy --grid 8 --block 256 --arg 2000 --arg 1 --arg buf:4000 --arg buf:4000 "
           "--dump 3='%s' --threads 1",
           saxpy_file(), dump);
  char *out = NULL, *err = NULL;
  CU_ASSERT_EQUAL(emulate(args, &out, &err), 1);
  ASSERT_MSG("out of bounds: one 'kcast: ' line naming the kernel",
             err && !strncmp(err, "kcast: ", 7) && strstr(err, SAXPY) &&
                 count_char(err, '\n') == 1);
  if (err) printf("\n    %s", err);
  struct stat sb;
  ASSERT_MSG("no dump file after a failed launch", stat(dump, &sb) != 0);
  ASSERT_MSG("nothing on stdout after a failed launch", out && out[0] == 0);
  free(out);
  free(err);

  snprintf(args, sizeof args,
           "'%s' --kernel saxpy --grid 8 --block 256 --arg 2000 --arg 1 --arg buf:8000 --arg buf:8000 --budget 100",
           saxpy_file());
  out = err = NULL;
  CU_ASSERT_EQUAL(emulate(args, &out, &err), 1);
  ASSERT_MSG("an exhausted --budget is a user error naming the kernel", err && strstr(err, SAXPY));
  free(out);
  free(err);
  rmdir(dir);
}

/* --oob warn: saxpy over n = 1100 with 1000-float buffers completes, counts
   the tolerated accesses and names the first; the default stays strict. */
static void test_oob_warn(void) {
  char args[12000];
  snprintf(args, sizeof args,
           "'%s' --kernel saxpy --grid 5 --block 256 --arg 1100 --arg 2 --arg buf:4000 "
           "--arg buf:4000 --oob warn --format json", saxpy_file());
  char *out = NULL, *err = NULL;
  CU_ASSERT_EQUAL(emulate(args, &out, &err), 0);
  ASSERT_MSG("the first tolerated access is named on stderr",
             err && strstr(err, "288 out-of-bounds accesses tolerated") &&
                 strstr(err, "out-of-bounds global read of 4 bytes"));
  ASSERT_MSG("json carries the count", out && strstr(out, "\"oob_accesses\":\t288") &&
                                           strstr(out, "\"emu.oob_accesses\":\t288"));
  free(out);
  free(err);
  snprintf(args, sizeof args,
           "'%s' --kernel saxpy --grid 5 --block 256 --arg 1100 --arg 2 --arg buf:4000 "
           "--arg buf:4000", saxpy_file());
  CU_ASSERT_EQUAL(emulate(args, NULL, NULL), 1); /* --oob error by default */
  snprintf(args, sizeof args, "'%s' --kernel saxpy --grid 5 --block 256 --oob perhaps",
           saxpy_file());
  CU_ASSERT_EQUAL(emulate(args, NULL, NULL), 2);
}

static void test_sample_and_literals(void) {
  char args[8192];
  char *out = NULL, *err = NULL;
  /* 0f40000000 is 2.0 in PTX float-bit notation; -1 fits a .u32 as 2^32-1
     but here n = 4096 (0x1000). */
  snprintf(args, sizeof args,
           "'%s' --kernel saxpy --grid 16 --block 256 --arg 0x1000 --arg 0f40000000 --arg buf:16k:seqf "
           "--arg buf:16k --sample 4 --threads 2 --format json",
           saxpy_file());
  CU_ASSERT_EQUAL(emulate(args, &out, &err), 0);
  cJSON *root = out ? cJSON_Parse(out) : NULL;
  cJSON *em = cJSON_GetObjectItemCaseSensitive(root, "emulation");
  ASSERT_MSG("--sample 4: sampled is true", cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(em, "sampled")));
  cJSON *cr = cJSON_GetObjectItemCaseSensitive(em, "ctas_run");
  ASSERT_MSG("--sample 4: at most 4 of 16 CTAs ran",
             cJSON_IsNumber(cr) && cr->valuedouble >= 1 && cr->valuedouble <= 4);
  cJSON *fs = cJSON_GetObjectItemCaseSensitive(root, "features");
  cJSON *ldg = cJSON_GetObjectItemCaseSensitive(fs, "class.ld_global");
  ASSERT_MSG("sampled counts are scaled to the whole grid (2n = 8192 loads)",
             cJSON_IsNumber(ldg) && fabs(ldg->valuedouble - 8192) < 82);
  cJSON_Delete(root);
  free(out);
  free(err);
}

/* A negative literal for nvcc's `.u32 n` is stored as two's complement:
   saxpy's signed bounds check then lets no thread through.  A file with one
   kernel needs no --kernel.  `kcast help emulate` documents the fills. */
static void test_negative_default_kernel_help(void) {
  char args[8192];
  char *out = NULL, *err = NULL;
  snprintf(args, sizeof args,
           "tests/ptx/saxpy_nvcc.ptx --grid 2 --block 32 --arg -1 --arg -2.5e0 --arg buf:256 "
           "--arg buf:256 --format json");
  CU_ASSERT_EQUAL(emulate(args, &out, &err), 0);
  cJSON *root = out ? cJSON_Parse(out) : NULL;
  cJSON *k = cJSON_GetObjectItemCaseSensitive(root, "kernel");
  ASSERT_MSG("the only kernel of the file is chosen without --kernel",
             cJSON_IsString(k) && !strcmp(k->valuestring, SAXPY));
  cJSON *fs = cJSON_GetObjectItemCaseSensitive(root, "features");
  cJSON *ldg = cJSON_GetObjectItemCaseSensitive(fs, "class.ld_global");
  ASSERT_MSG("n = -1 (0xffffffff in a .u32) admits no thread: no global loads",
             !ldg || (cJSON_IsNumber(ldg) && ldg->valuedouble == 0));
  cJSON_Delete(root);
  free(out);
  free(err);

  char cmd[4200];
  snprintf(cmd, sizeof cmd, "'%s' help emulate", tests_kcast());
  out = err = NULL;
  CU_ASSERT_EQUAL(tests_run(cmd, &out, &err), 0);
  ASSERT_MSG("the usage documents buf:, seq, seqf, rand, randf and file=",
             out && strstr(out, "buf:BYTES") && strstr(out, "seqf") && strstr(out, "randf") &&
                 strstr(out, "rand[:SEED]") && strstr(out, "file=PATH") && strstr(out, "--dump"));
  free(out);
  free(err);
}

/* .cu input through clang, the extern "C" kernel by its plain name. */
static void test_cu_input(void) {
  char args[8192];
  char *out = NULL, *err = NULL;
  snprintf(args, sizeof args,
           "tests/kernels/saxpy.cu --compiler clang --kernel saxpy_c --grid 1 --block 64 "
           "--arg 64 --arg 0.5 --arg buf:256:seqf --arg buf:256 --format json");
  int rc = emulate(args, &out, &err);
  CU_ASSERT_EQUAL(rc, 0);
  if (rc) printf("\n    stderr: %s ", err ? err : "");
  cJSON *root = out ? cJSON_Parse(out) : NULL;
  cJSON *k = cJSON_GetObjectItemCaseSensitive(root, "kernel");
  ASSERT_MSG(".cu input runs kernel saxpy_c", cJSON_IsString(k) && !strcmp(k->valuestring, "saxpy_c"));
  cJSON_Delete(root);
  free(out);
  free(err);
}

/* ldmatrix and stmatrix move their rows in one pass (ldm_rows, emulator/emu_mma.c);
   under --racecheck every row goes through the general shared path.
   Both must give the same data, shared accesses and bank replays, on
   rows that conflict (tests/ptx/ldmatrix_banks.ptx). */
static double json_num(const char *json, const char *key) {
  char k[128];
  snprintf(k, sizeof k, "\"%s\":", key);
  const char *p = json ? strstr(json, k) : NULL;
  return p ? strtod(p + strlen(k), NULL) : -1;
}

static void test_ldmatrix_rows(void) {
  char args[2048], d1[1200], d2[1200], *o1 = NULL, *o2 = NULL, *err = NULL;
  snprintf(d1, sizeof d1, "%s/ldm-fast.bin", tests_build());
  snprintf(d2, sizeof d2, "%s/ldm-race.bin", tests_build());
  const char *common = "tests/ptx/ldmatrix_banks.ptx --kernel k --grid 2 --block 32 "
                       "--arg buf:256 --threads 1 --format json";
  snprintf(args, sizeof args, "%s --dump 0=%s", common, d1);
  CU_ASSERT_FATAL(emulate(args, &o1, &err) == 0);
  free(err), err = NULL;
  snprintf(args, sizeof args, "%s --dump 0=%s --racecheck", common, d2);
  CU_ASSERT_FATAL(emulate(args, &o2, &err) == 0);
  free(err);
  static const char *const keys[] = {"mem.shared_accesses", "mem.shared_bank_replays",
                                     "mem.shared_bytes"};
  int same = 1;
  for (int k = 0; k < 3; k++) same &= json_num(o1, keys[k]) == json_num(o2, keys[k]);
  ASSERT_MSG("rows in one pass and through the general path: the same shared accesses, "
             "bytes and bank replays", same && json_num(o1, keys[0]) == 42);
  ASSERT_MSG("... on rows that conflict (replays counted)", json_num(o1, keys[1]) > 0);
  size_t n1 = 0, n2 = 0;
  char *b1 = tests_read_file(d1, &n1), *b2 = tests_read_file(d2, &n2);
  ASSERT_MSG("... and the same data", b1 && b2 && n1 == 256 && n1 == n2 && !memcmp(b1, b2, n1));
  free(b1), free(b2), free(o1), free(o2);
}

/* --racecheck on the corpus's racing kernels (tests/kernels/races.cu):
   the first race on stderr, the count in the JSON and as emu.races, exit
   status 1; a correct kernel under the check: exit 0, "races 0". */
static void test_racecheck(void) {
  char path[4200], args[8192];
  char *out = NULL, *err = NULL;
  struct stat sb;
  snprintf(path, sizeof path, "%s/corpus/races.nvcc.ptx", tests_build());
  if (stat(path, &sb)) snprintf(path, sizeof path, "%s/corpus/races.clang.ptx", tests_build());
  if (stat(path, &sb)) {
    printf("\n    (note: no races corpus file, skipped) ");
    return;
  }
  snprintf(args, sizeof args, "'%s' --kernel chunk_store --grid 8 --block 64 --arg buf:64k "
           "--arg 256 --arg 200 --racecheck --threads 1 --format json", path);
  CU_ASSERT_EQUAL(emulate(args, &out, &err), 1); /* a race: exit status 1 */
  ASSERT_MSG("the JSON counts the racing words and carries the first race and emu.races",
             out && strstr(out, "\"races\":\t392") && strstr(out, "\"emu.races\":\t392") &&
                 strstr(out, "\"race_first\":"));
  ASSERT_MSG("stderr names the race: kind, space, both CTAs, the store, the allocation",
             err && strstr(err, "kcast emulate: data race (--racecheck): 392 racing words") &&
                 strstr(err, "CTA (1,0,0) thread (0,0,0)") &&
                 strstr(err, "st.global.f32: write-write race between CTAs in global memory") &&
                 strstr(err, "that CTA (0,0,0) writes too") && strstr(err, "(allocation 0x"));
  free(out), free(err);
  /* heartwall's pattern: shared memory, the other warp's store named */
  snprintf(args, sizeof args, "'%s' --kernel scan_nosync --grid 2 --block 64 --arg buf:512:seqf "
           "--arg buf:512 --racecheck", path);
  CU_ASSERT_EQUAL(emulate(args, &out, &err), 1);
  ASSERT_MSG("the table has the count, stderr the race between warps 0 and 1",
             out && strstr(out, "races") && strstr(out, "2 (2 in shared memory)") && err &&
                 strstr(err, "thread (32,0,0)") &&
                 strstr(err, "read-write race between warps in shared memory") &&
                 strstr(err, "that warp 0 wrote ("));
  free(out), free(err);
  /* fixed: no race, exit 0 */
  snprintf(args, sizeof args, "'%s' --kernel scan_sync --grid 2 --block 64 --arg buf:512:seqf "
           "--arg buf:512 --racecheck", path);
  CU_ASSERT_EQUAL(emulate(args, &out, &err), 0);
  ASSERT_MSG("the fixed kernel: races 0, nothing on stderr about races",
             out && strstr(out, "0 (0 in shared memory)") && err && !strstr(err, "race"));
  free(out), free(err);
  /* without the option the racing kernel passes silently, as before */
  snprintf(args, sizeof args, "'%s' --kernel scan_nosync --grid 2 --block 64 --arg buf:512:seqf "
           "--arg buf:512", path);
  CU_ASSERT_EQUAL(emulate(args, &out, &err), 0);
  ASSERT_MSG("without --racecheck no race is looked for", out && !strstr(out, "races"));
  free(out), free(err);
}

TEST_SUITES(register_cli_emulate) {
  CU_pSuite s = tests_suite("cli_emulate");
  TEST_ADD(s, test_dump_and_json);
  TEST_ADD(s, test_table_and_csv);
  TEST_ADD(s, test_fills);
  TEST_ADD(s, test_bad_args);
  TEST_ADD(s, test_launch_errors);
  TEST_ADD(s, test_oob_warn);
  TEST_ADD(s, test_racecheck);
  TEST_ADD(s, test_ldmatrix_rows);
  TEST_ADD(s, test_sample_and_literals);
  TEST_ADD(s, test_negative_default_kernel_help);
  TEST_ADD(s, test_cu_input);
}
