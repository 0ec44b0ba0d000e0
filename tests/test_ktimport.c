/*
 * test_ktimport.c -- the Kernel Tuner import as its users need it: the
 * cachefile reader's refusals (duplicate keys, names and values that would
 * become other preprocessor lines, inputs that would take gigabytes to
 * parse, out of memory said as such) and its fuzzer; importing a source in
 * Kernel Tuner's usual shape (a `_naive` reference kernel and a constant
 * array in one extern "C" block, a loop_unroll_factor parameter) in groups;
 * finished features handed over every few seconds; the summary of failed
 * configurations; tune.* columns; the notes and defaults of train/cv and
 * predict on such data.
 */
#include "tests.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <zlib.h>

#include "datasets/ds.h"
#include "datasets/ds_kt.h"

#define ASSERT_MSG(what, cond) CU_assertImplementation((cond), __LINE__, (what), __FILE__, "", CU_FALSE)

static const char *const UNROLL_SRC = "tests/tuning/unroll_sum.cu";

static int have_nvcc(void) {
  static int v = -1;
  if (v < 0) v = tests_run("command -v nvcc >/dev/null 2>&1", NULL, NULL) == 0;
  if (!v) printf("\n  [skip: nvcc not on PATH] ");
  return v;
}

static int kcast(char **out, char **err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int kcast(char **out, char **err, const char *fmt, ...) {
  char args[8192], cmd[9000];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(args, sizeof args, fmt, ap);
  va_end(ap);
  snprintf(cmd, sizeof cmd, "'%s' %s", tests_kcast(), args);
  return tests_run(cmd, out, err);
}

/* A cachefile of unroll_sum on device: block_size_x 32, 64, 128 and
   loop_unroll_factor_k 0, 1, 2, 4; (128, 4) failed on the GPU.  Two runs
   each, in ms. */
static int write_unroll_cachefile(const char *path, const char *device) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  fprintf(f, "{\"device_name\": \"%s\", \"kernel_name\": \"unroll_sum\", \"problem_size\": 1000,"
             " \"tune_params_keys\": [\"block_size_x\", \"loop_unroll_factor_k\"],"
             " \"tune_params\": {}, \"objective\": \"time\", \"cache\": {", device);
  int first = 1;
  for (int bx = 32; bx <= 128; bx *= 2)
    for (int u = 0; u <= 4; u = u ? 2 * u : 1) {
      fprintf(f, "%s\"%d,%d\": {\"block_size_x\": %d, \"loop_unroll_factor_k\": %d, ",
              first ? "" : ",", bx, u, bx, u);
      first = 0;
      if (bx == 128 && u == 4) fprintf(f, "\"time\": \"RuntimeFailedConfig\"}");
      else fprintf(f, "\"time\": %g, \"times\": [%g, %g]}", 0.01 * bx / (u + 1),
                   0.01 * bx / (u + 1), 0.011 * bx / (u + 1));
    }
  fputs("}}\n", f);
  return fclose(f);
}

#define UNROLL_OPTS "--source tests/tuning/unroll_sum.cu --arg buf:4k --arg buf:4k:randf " \
                    "--arg 1000 --arg 64 --const weight=randf --arch sm_80"

/* The features of launch key of db, sorted, as one string (malloc'd). */
static char *features_of(const char *db, const char *app, const char *key) {
  char err[512];
  ds_db *d;
  if (ds_open(db, DS_READONLY, &d, err, sizeof err)) return NULL;
  int64_t id;
  feat_vec v;
  feat_init(&v);
  char *s = NULL;
  if (ds_find_launch(d, app, key, 0, &id) == 1 && ds_get_features(d, id, &v) == 0 && v.n) {
    feat_sort(&v);
    size_t cap = 64 + 80 * v.n, n = 0;
    s = malloc(cap);
    for (size_t i = 0; s && i < v.n; i++)
      n += (size_t)snprintf(s + n, cap - n, "%s=%.17g;", v.names[i], v.vals[i]);
  }
  feat_free(&v);
  ds_close(d);
  return s;
}

/* Copy CSV in to out with the first data row's cell of column col empty
   (fields quoted as RFC 4180 says; the header has no quotes). */
static int blank_cell(const char *in, const char *out, const char *col) {
  size_t len = 0;
  char *t = tests_read_file(in, &len);
  if (!t) return -1;
  char *nl = strchr(t, '\n');
  if (!nl) { free(t); return -1; }
  long idx = -1, k = 0;
  for (char *p = t; p < nl; k++) {
    char *e = memchr(p, ',', (size_t)(nl - p));
    size_t n = e ? (size_t)(e - p) : (size_t)(nl - p);
    if (n == strlen(col) && !strncmp(p, col, n)) idx = k;
    if (!e) break;
    p = e + 1;
  }
  if (idx < 0) { free(t); return -1; }
  char *p = nl + 1, *start = p;
  int q = 0;
  for (long f = 0; *p && *p != '\n'; p++) {
    if (*p == '"') q = !q;
    else if (*p == ',' && !q) {
      if (f == idx) break;
      f++;
      start = p + 1;
    }
  }
  FILE *o = fopen(out, "w");
  if (!o) { free(t); return -1; }
  fwrite(t, 1, (size_t)(start - t), o);
  fputs(p, o);
  free(t);
  return fclose(o);
}

/* ------------------------------------------------------------ the reader -- */

static int read_text(const char *dir, const char *text, char *err, size_t cap) {
  char p[2200];
  snprintf(p, sizeof p, "%s/c.json", dir);
  tests_write_file(p, text, strlen(text));
  ds_kt_file f;
  int rc = ds_kt_read(p, &f, err, cap);
  if (!rc) ds_kt_free(&f);
  return rc;
}

#define HEAD "{\"device_name\": \"NVIDIA A100-PCIE-40GB\", \"kernel_name\": \"k\", " \
             "\"problem_size\": [64], \"tune_params_keys\": [%s], \"cache\": {%s}}"

static void test_reader_refusals(void) {
  char dir[2048], err[1200], t[4096];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "ktrefuse"));
  snprintf(t, sizeof t, HEAD, "\"bx\"", "\"16\": {\"bx\": 16, \"time\": 1}");
  ASSERT_MSG("a well-formed file reads", read_text(dir, t, err, sizeof err) == 0);
  snprintf(t, sizeof t, HEAD, "\"bx\"",
           "\"16\": {\"bx\": 16, \"time\": 1}, \"32\": {\"bx\": 32, \"time\": 2},"
           " \"16\": {\"bx\": 64, \"time\": 3}");
  ASSERT_MSG("a configuration key given twice is refused, naming it",
             read_text(dir, t, err, sizeof err) < 0 && strstr(err, "'16' appears twice"));
  snprintf(t, sizeof t, HEAD, "\"bx\"", "\"16\": {\"bx\": 16, \"bx\": 32, \"time\": 1}");
  ASSERT_MSG("a parameter given twice in an entry is refused",
             read_text(dir, t, err, sizeof err) < 0 && strstr(err, "'16' gives tuning parameter 'bx' twice"));
  snprintf(t, sizeof t, HEAD, "\"bx\", \"bx\"", "");
  ASSERT_MSG("a parameter name listed twice is refused",
             read_text(dir, t, err, sizeof err) < 0 && strstr(err, "names 'bx' twice"));
  static const char *const names[] = {"\"b x\"", "\"1bx\"", "\"bx\\n#include <x>\"", "\"a-b\""};
  for (size_t i = 0; i < 4; i++) {
    snprintf(t, sizeof t, HEAD, names[i], "");
    ASSERT_MSG("a parameter name that is not a C identifier is refused",
               read_text(dir, t, err, sizeof err) < 0 && strstr(err, "is not a C identifier"));
  }
  static const char *const bad[] = {
      "\"0\\n#include \\\"/etc/passwd\\\"\"", "\"0 /*\"", "\"1 \\\\\"", "\"x // y\"",
      "\"\\\"s\\\"\"", "\"(1\"", "\"1)\"", "\"#x\"", "\"\"", "\"a;b\"", "\"{1}\""};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char e[300];
    snprintf(e, sizeof e, "\"16\": {\"bx\": %s, \"time\": 1}", bad[i]);
    snprintf(t, sizeof t, HEAD, "\"bx\"", e);
    char msg[400];
    snprintf(msg, sizeof msg, "the value %s is refused, naming the key and the parameter", bad[i]);
    ASSERT_MSG(msg, read_text(dir, t, err, sizeof err) < 0 && strstr(err, "cache entry '16'") &&
               strstr(err, "parameter 'bx'") && strstr(err, "simple expression"));
  }
  static const char *const good[] = {"\"float\"", "\"(a+1)*2\"", "\"-1.5e-3\"", "true",
                                     "\"x < y ? 1 : 2\"", "\"min(a, b)\""};
  for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
    char e[300];
    snprintf(e, sizeof e, "\"16\": {\"bx\": %s, \"time\": 1}", good[i]);
    snprintf(t, sizeof t, HEAD, "\"bx\"", e);
    char msg[400];
    snprintf(msg, sizeof msg, "the value %s (what Kernel Tuner accepts) reads", good[i]);
    ASSERT_MSG(msg, read_text(dir, t, err, sizeof err) == 0);
  }
}

/* A gzip file of prefix, then n copies of unit, then suffix. */
static int write_bomb(const char *path, const char *prefix, const char *unit, size_t n,
                      const char *suffix) {
  gzFile g = gzopen(path, "wb9");
  if (!g) return -1;
  gzputs(g, prefix);
  char block[65536];
  size_t ul = strlen(unit), per = sizeof block / ul;
  for (size_t i = 0; i < per; i++) memcpy(block + i * ul, unit, ul);
  for (size_t done = 0; done < n; done += per) {
    size_t k = n - done < per ? n - done : per;
    if (gzwrite(g, block, (unsigned)(k * ul)) != (int)(k * ul)) { gzclose(g); return -1; }
  }
  gzputs(g, suffix);
  return gzclose(g) == Z_OK ? 0 : -1;
}

static void test_reader_memory(void) {
  char dir[2048], p[2200], err[1200];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "ktmem"));
  snprintf(p, sizeof p, "%s/bomb.json.gz", dir);
  /* 64 M values in about 200 KB: gigabytes of parse for cJSON */
  CU_ASSERT_EQUAL_FATAL(write_bomb(p, "{\"cache\": [", "0,", (size_t)64 << 20, "0]}"), 0);
  struct stat sb;
  stat(p, &sb);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  ds_kt_file f;
  int rc = ds_kt_read(p, &f, err, sizeof err);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double s = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
  printf("\n    a %lld-byte gzip of 128 MiB of JSON refused in %.2f s: %s", (long long)sb.st_size,
         s, err);
  ASSERT_MSG("a gzip bomb of JSON values is refused by the memory limit, not parsed",
             rc < 0 && strstr(err, "too large") && strstr(err, "1024 MiB limit"));
  ASSERT_MSG("... before it is read whole (under 2 s here)", s < 2.0);
  /* the limit is what the parse takes: a small limit refuses a small file */
  snprintf(p, sizeof p, "%s/small.json", dir);
  static const char small[] = "{\"device_name\": \"x\", \"kernel_name\": \"k\", "
                              "\"tune_params_keys\": [], \"cache\": {}, \"pad\": [0,0,0,0,0,0,0,0]}";
  tests_write_file(p, small, sizeof small - 1);
  ds_kt_set_memory_limit(1000);
  rc = ds_kt_read(p, &f, err, sizeof err);
  ds_kt_set_memory_limit(0);
  ASSERT_MSG("a limit below the parse's needs refuses it", rc < 0 && strstr(err, "too large"));
  ASSERT_MSG("... and the default limit reads it", ds_kt_read(p, &f, err, sizeof err) == 0);
  ds_kt_free(&f);
#if defined(__SANITIZE_ADDRESS__)
  printf("\n    [skip: out of memory under an address-space limit: not under ASan] ");
#else
  /* under the limit, but not in this process's memory: "out of memory" */
  snprintf(p, sizeof p, "%s/big.json.gz", dir);
  CU_ASSERT_EQUAL_FATAL(write_bomb(p, "{\"cache\": [", "0,", (size_t)4 << 20, "0]}"), 0);
  int fd[2];
  CU_ASSERT_EQUAL_FATAL(pipe(fd), 0);
  pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    struct rlimit rl = {(rlim_t)160 << 20, (rlim_t)160 << 20};
    setrlimit(RLIMIT_AS, &rl);
    char e2[1200] = "";
    ds_kt_file g;
    int r = ds_kt_read(p, &g, e2, sizeof e2);
    if (write(fd[1], e2, strlen(e2) + 1) < 0) _exit(3);
    _exit(r ? 1 : 0);
  }
  close(fd[1]);
  char got[1200] = "";
  ssize_t n = read(fd[0], got, sizeof got - 1);
  close(fd[0]);
  got[n > 0 ? n : 0] = 0;
  int st = 0;
  waitpid(pid, &st, 0);
  ASSERT_MSG("a parse that runs out of memory says \"out of memory\", not bad JSON",
             WIFEXITED(st) && WEXITSTATUS(st) == 1 && strstr(got, "out of memory") &&
             !strstr(got, "not valid JSON"));
  if (!strstr(got, "out of memory")) printf("\n    got: %s", got);
#endif
}

/* The cachefile fuzzer runs clean over its seeds (make fuzz runs it for a
   minute). */
static void test_kt_fuzzer(void) {
  char bin[4096];
  snprintf(bin, sizeof bin, "%s/fuzz/kt_fuzz", tests_build());
  if (access(bin, X_OK)) { printf("\n  [skip: %s not built (clang-22)] ", bin); return; }
  char dir[2048], p[2200], cmd[8192];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "ktfuzz"));
  snprintf(p, sizeof p, "%s/unroll.json", dir);
  CU_ASSERT_EQUAL_FATAL(write_unroll_cachefile(p, "NVIDIA A100-PCIE-40GB"), 0);
  snprintf(p, sizeof p, "%s/bomb.json.gz", dir);
  CU_ASSERT_EQUAL_FATAL(write_bomb(p, "{\"cache\": [", "0,", (size_t)1 << 20, "0]}"), 0);
  snprintf(cmd, sizeof cmd, "'%s' -runs=3000 -seed=1 -rss_limit_mb=2048 -max_len=65536 '%s'",
           bin, dir);
  char *out = NULL;
  int rc = tests_run(cmd, NULL, &out);
  ASSERT_MSG("the Kernel Tuner cachefile fuzzer runs clean on its seeds", rc == 0);
  if (rc) printf("\n%.2000s", out ? out : "");
  free(out);
}

/* --------------------------------------------------------------- imports -- */

static void test_unroll_and_groups(void) {
  if (!have_nvcc()) return;
  char dir[2048], cf[2200], db[2200], db1[2200], fails[2200];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "ktunroll"));
  snprintf(cf, sizeof cf, "%s/unroll_A100.json", dir);
  snprintf(db, sizeof db, "%s/u.db", dir);
  snprintf(db1, sizeof db1, "%s/one.db", dir);
  snprintf(fails, sizeof fails, "%s/failures.csv", dir);
  CU_ASSERT_EQUAL_FATAL(write_unroll_cachefile(cf, "NVIDIA A100-PCIE-40GB"), 0);
  char *out = NULL, *err = NULL;
  int rc = kcast(&out, &err, "dataset import-kerneltuner '%s' -o '%s' " UNROLL_OPTS
                 " -j 2 --failures '%s'", cf, db, fails);
  ASSERT_MSG("a source with a loop_unroll_factor and a second extern \"C\" kernel imports",
             rc == 0 && out && strstr(out, "11 configurations") &&
             strstr(out, "11 computed, 0 kept, 0 failed"));
  ASSERT_MSG("... compiled in groups (no group fell back to one by one)",
             out && !strstr(out, "one by one"));
  if (rc || !out || strstr(out, "one by one")) printf("\n%s\n%s", out ? out : "", err ? err : "");
  ASSERT_MSG("the configuration that failed on the GPU is summarized with its key",
             err && strstr(err, "1 configuration skipped (RuntimeFailedConfig on A100-PCIE-40GB): 128,4"));
  free(out); free(err);
  char *ff = tests_read_file(fails, NULL);
  ASSERT_MSG("--failures lists it: key, GPU, reason",
             ff && strstr(ff, "key,gpu,reason\n") && strstr(ff, "\"128,4\",A100-PCIE-40GB,RuntimeFailedConfig"));
  free(ff);
  char *u1 = features_of(db, "unroll_sum", "64,1"), *u4 = features_of(db, "unroll_sum", "64,4"),
       *u0 = features_of(db, "unroll_sum", "64,0");
  ASSERT_MSG("unroll factors 1 and 4 give different code (the value is the pragma's argument)",
             u1 && u4 && strcmp(u1, u4));
  ASSERT_MSG("... and 0 (the pragma removed) is not unroll 1", u0 && u1 && strcmp(u0, u1));
  ASSERT_MSG("the tuning parameters are tune.* features",
             u4 && strstr(u4, "tune.block_size_x=64;") && strstr(u4, "tune.loop_unroll_factor_k=4;"));
  /* one compiler run per configuration: the same features */
  rc = kcast(&out, NULL, "dataset import-kerneltuner '%s' -o '%s' " UNROLL_OPTS " --batch 1",
             cf, db1);
  free(out);
  int same = rc == 0;
  static const char *const keys[] = {"32,0", "32,2", "64,1", "64,4", "128,0", "128,2"};
  for (size_t i = 0; same && i < 6; i++) {
    char *a = features_of(db, "unroll_sum", keys[i]), *b = features_of(db1, "unroll_sum", keys[i]);
    same = a && b && !strcmp(a, b);
    if (!same) printf("\n    %s:\n    grouped %.300s\n    alone   %.300s", keys[i], a, b);
    free(a); free(b);
  }
  ASSERT_MSG("grouped (renamed extern \"C\" names) and one-by-one compilation agree", same);
  free(u0); free(u1); free(u4);

  /* the export carries tune.*; cv without --target is time; tune.* is
     not a feature unless asked for */
  char *ex = NULL;
  rc = kcast(&ex, NULL, "dataset export '%s'", db);
  ASSERT_MSG("the export has the tune.* columns",
             rc == 0 && ex && strstr(ex, "tune.block_size_x") && strstr(ex, "tune.loop_unroll_factor_k"));
  free(ex);
  rc = kcast(&out, &err, "cv '%s' --gpu A100-PCIE-40GB --folds 2 --trees 5 --format json", db);
  ASSERT_MSG("kcast cv DB --gpu G without --target cross-validates time",
             rc == 0 && out && strstr(out, "\"rows\":11"));
  if (rc) printf("\n%s", err ? err : "");
  free(out); free(err);
  char m[2300];
  snprintf(m, sizeof m, "%s/t.kcm", dir);
  rc = kcast(&out, NULL, "train '%s' --gpu A100-PCIE-40GB --trees 5 -o '%s' && '%s' model info '%s'",
             db, m, tests_kcast(), m);
  ASSERT_MSG("a model of the defaults reads no tune.* column", rc == 0 && out && !strstr(out, "tune."));
  free(out);
  rc = kcast(&out, &err, "train '%s' --gpu A100-PCIE-40GB --features tune --base none --trees 5 "
             "-o '%s' && '%s' model importance '%s'", db, m, tests_kcast(), m);
  ASSERT_MSG("--features tune trains on the tuning parameters", rc == 0 && out &&
             strstr(out, "tune.loop_unroll_factor_k") && strstr(out, "tune.block_size_x"));
  if (rc) printf("\n%s", err ? err : "");
  free(out); free(err);

  /* predict --features: empty cells in columns the model does not read */
  char csv[2300], csv2[2300];
  snprintf(csv, sizeof csv, "%s/rows.csv", dir);
  snprintf(csv2, sizeof csv2, "%s/rows2.csv", dir);
  snprintf(m, sizeof m, "%s/d.kcm", dir);
  rc = kcast(NULL, NULL, "train '%s' --gpu A100-PCIE-40GB --trees 5 -o '%s' && '%s' dataset "
             "export '%s' | awk -F, 'BEGIN{OFS=\",\"} NR==1{print $0, \"ptxas.sm_99.registers\", "
             "\"mem.unused_bytes\"; next} {print $0, \"\", \"\"}' > '%s'", db, m, tests_kcast(), db,
             csv);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  rc = kcast(&out, &err, "predict --model '%s' --features '%s' --format csv", m, csv);
  ASSERT_MSG("predict --features takes empty cells in raw columns the model does not read",
             rc == 0 && out && strstr(out, "prediction,lo,hi"));
  if (rc) printf("\n%s", err ? err : "");
  free(out); free(err);
  /* ... but not in one it reads */
  CU_ASSERT_EQUAL_FATAL(blank_cell(csv, csv2, "launch.ctas"), 0);
  rc = kcast(NULL, &err, "predict --model '%s' --features '%s' --format csv", m, csv2);
  ASSERT_MSG("... and refuses one in a column it reads, naming it", rc == 1 && err &&
             strstr(err, "launch.ctas") && strstr(err, "the model reads it"));
  free(err);
  rc = kcast(&out, NULL, "predict --gpu A100 --features '%s' --format csv", csv);
  ASSERT_MSG("the analytic estimate of the same rows takes them too", rc == 0 && out &&
             strstr(out, "time_us"));
  free(out);
}

/* ------------------------------------------- features handed over early -- */

typedef struct done_log {
  double t[64];
  size_t n[64], calls;
  double start;
} done_log;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int on_done(void *ctx, ds_kt_job *const *done, size_t n) {
  done_log *l = ctx;
  if (l->calls < 64) {
    l->t[l->calls] = now_s() - l->start;
    l->n[l->calls] = n;
  }
  l->calls++;
  for (size_t i = 0; i < n; i++) feat_free(&done[i]->feats);
  return 0;
}

/* Seven configurations of about a second each, six in one group on one
   worker: the group's first results are handed over (written, by the
   import) while the group still runs, every 2 s, not when it ends. */
/* A cachefile of const_table: block_size_x 32..32n, table_words words. */
static int write_table_cachefile(const char *path, unsigned n, unsigned words) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  fprintf(f, "{\"device_name\": \"NVIDIA A100-PCIE-40GB\", \"kernel_name\": \"const_table\","
             " \"problem_size\": 1000, \"tune_params_keys\": [\"block_size_x\", \"table_words\"],"
             " \"tune_params\": {}, \"objective\": \"time\", \"cache\": {");
  for (unsigned i = 1; i <= n; i++)
    fprintf(f, "%s\"%u,%u\": {\"block_size_x\": %u, \"table_words\": %u, \"time\": 0.01, "
               "\"times\": [0.01]}", i > 1 ? "," : "", 32 * i, words, 32 * i, words);
  fputs("}}\n", f);
  return fclose(f);
}

/* Groups stay within the constant data ptxas takes in one module: eight
   configurations of a 24 KB table, in groups of four without the cap
   (96 KB: ptxas refused each group, and all but the first configuration
   lost their ptxas.* columns, silently); a table no module can hold is
   named in a note. */
static void test_groups_fit_the_constant_bank(void) {
  if (!have_nvcc()) return;
  char dir[2048], cf[2200], db[2200];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "ktconst"));
  snprintf(cf, sizeof cf, "%s/table_A100.json", dir);
  snprintf(db, sizeof db, "%s/t.db", dir);
  CU_ASSERT_EQUAL_FATAL(write_table_cachefile(cf, 8, 6000), 0);
  char *out = NULL, *err = NULL;
  int rc = kcast(&out, &err, "dataset import-kerneltuner '%s' -o '%s' --source "
                 "tests/tuning/const_table.cu --arg buf:4k --arg 1000 --const table=randf "
                 "--arch sm_80 -j 1", cf, db);
  ASSERT_MSG("eight configurations of a 24 KB table import",
             rc == 0 && out && strstr(out, "8 computed, 0 kept, 0 failed"));
  ASSERT_MSG("... in groups (none one by one), without a ptxas note",
             out && !strstr(out, "one by one") && err && !strstr(err, "ptxas failed"));
  if (rc) printf("\n%s\n%s", out ? out : "", err ? err : "");
  free(out); free(err);
  int all = 1;
  for (unsigned i = 1; i <= 8; i++) {
    char key[32];
    snprintf(key, sizeof key, "%u,6000", 32 * i);
    char *f = features_of(db, "const_table", key);
    if (!f || !strstr(f, "ptxas.sm_80.registers=")) all = 0;
    free(f);
  }
  ASSERT_MSG("every configuration has its ptxas.sm_80.* columns", all);
  /* 80 KB: ptxas refuses every module; the import says so */
  snprintf(db, sizeof db, "%s/t2.db", dir);
  CU_ASSERT_EQUAL_FATAL(write_table_cachefile(cf, 3, 20000), 0);
  rc = kcast(&out, &err, "dataset import-kerneltuner '%s' -o '%s' --source "
             "tests/tuning/const_table.cu --arg buf:4k --arg 1000 --const table=randf "
             "--arch sm_80 -j 1", cf, db);
  ASSERT_MSG("a table no module holds: the features without ptxas.* columns, and a note "
             "naming ptxas's error",
             rc == 0 && err && strstr(err, "ptxas failed 3 times") &&
                 strstr(err, "too much global constant data"));
  if (rc || !err || !strstr(err, "ptxas failed")) printf("\n%s\n%s", out ? out : "", err ? err : "");
  free(out); free(err);
}

static void test_features_handed_over_every_few_seconds(void) {
  if (!have_nvcc()) return;
  static const char *const names[] = {"block_size_x", "loop_unroll_factor_k"};
  static const char *const values[] = {"64", "1"};
  static const char *const argt[] = {"buf:4k", "buf:4k:randf", "1000", "60000"};
  emu_arg_spec args[4];
  char why[256];
  for (int i = 0; i < 4; i++) {
    memset(&args[i], 0, sizeof args[i]);
    args[i].text = argt[i];
    CU_ASSERT_EQUAL_FATAL(emu_arg_parse(&args[i], why, sizeof why), 0);
  }
  emu_const_spec c;
  CU_ASSERT_EQUAL_FATAL(emu_const_parse("weight=randf", &c, why, sizeof why), 0);
  ds_kt_source s;
  memset(&s, 0, sizeof s);
  s.path = UNROLL_SRC;
  s.kernel = "unroll_sum";
  s.bnames[0] = "block_size_x";
  s.fo.compiler = FE_NVCC;
  s.fo.arch = "sm_80";
  s.args = args;
  s.nargs = 4;
  s.consts = &c;
  s.nconsts = 1;
  emu_launch_cfg_init(&s.cfg);
  s.cfg.threads = 1;
  s.jobs = 1;
  s.batch = 6;
  ds_kt_job jobs[7], *jp[7];
  char keys[7][16];
  for (int i = 0; i < 7; i++) {
    memset(&jobs[i], 0, sizeof jobs[i]);
    snprintf(keys[i], sizeof keys[i], "k%d", i);
    jobs[i].key = keys[i];
    jobs[i].nparams = 2;
    jobs[i].names = names;
    jobs[i].values = values;
    jobs[i].grid[0] = 16; jobs[i].grid[1] = jobs[i].grid[2] = 1;
    jobs[i].block[0] = 64; jobs[i].block[1] = jobs[i].block[2] = 1;
    jp[i] = &jobs[i];
  }
  done_log log;
  memset(&log, 0, sizeof log);
  log.start = now_s();
  char *kname = NULL, err[1200] = "";
  ds_kt_stats st;
  int rc = ds_kt_compute(&s, jp, 7, on_done, &log, &kname, &st, err, sizeof err);
  double total = now_s() - log.start;
  ASSERT_MSG("the seven configurations compute", rc == 0 && kname);
  if (rc) printf("\n    %s", err);
  int ok = 1;
  for (int i = 0; i < 7; i++) ok = ok && jobs[i].status == 1;
  ASSERT_MSG("... every one of them", ok);
  size_t handed = 0;
  for (size_t i = 0; i < log.calls && i < 64; i++) handed += log.n[i];
  ASSERT_MSG("each handed over exactly once", handed == 7);
  printf("\n    %zu hand-overs in %.1f s:", log.calls, total);
  for (size_t i = 0; i < log.calls && i < 64; i++) printf(" %zu at %.1f s", log.n[i], log.t[i]);
  /* the group (six configurations) took total minus the probe; when it
     ran past twice the interval, some of it must have come before its end */
  double group = total - (log.calls ? log.t[0] : 0);
  if (group > 5.0)
    ASSERT_MSG("results of a running group are handed over before the group ends",
               log.calls >= 3 && log.t[1] < total - 1.0);
  else
    printf(" [the group took %.1f s: too fast to tell] ", group);
  for (size_t gap = 1; gap < log.calls && gap < 64; gap++)
    ASSERT_MSG("no two hand-overs are closer than the interval",
               log.t[gap] - log.t[gap - 1] > 1.9 || gap == log.calls - 1);
  for (int i = 0; i < 7; i++) ds_kt_job_free(&jobs[i]);
  free(kname);
}

/* ------------------------------------------- notes, merges, summaries -- */

static void test_unknown_gpu_and_merge(void) {
  if (!have_nvcc()) return;
  char dir[2048], cf[2200], cfa[2200], t[2200], f[2200];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "ktnote"));
  snprintf(cf, sizeof cf, "%s/unroll_X.json", dir);
  snprintf(cfa, sizeof cfa, "%s/unroll_A100.json", dir);
  snprintf(t, sizeof t, "%s/times.db", dir);
  snprintf(f, sizeof f, "%s/feat.db", dir);
  CU_ASSERT_EQUAL_FATAL(write_unroll_cachefile(cf, "NVIDIA Imaginary 9000"), 0);
  CU_ASSERT_EQUAL_FATAL(write_unroll_cachefile(cfa, "NVIDIA A100-PCIE-40GB"), 0);
  char *out = NULL, *err = NULL;
  int rc = kcast(&out, &err, "dataset import-kerneltuner '%s' -o '%s'", cf, t);
  ASSERT_MSG("a GPU the table does not know imports, with a note saying what it costs",
             rc == 0 && err && strstr(err, "is not in the GPU table") &&
             strstr(err, "analytic base") && strstr(err, "occupancy"));
  free(out); free(err);
  char *row = features_of(t, "unroll_sum", "64,4");
  ASSERT_MSG("a times-only import stores the tuning parameters (tune.* only)",
             row && strstr(row, "tune.loop_unroll_factor_k=4;") && !strstr(row, "class."));
  free(row);
  rc = kcast(&out, &err, "dataset import-kerneltuner '%s' -o '%s' " UNROLL_OPTS " -j 2", cf, t);
  ASSERT_MSG("... and a launch with tune.* only still gets its features computed",
             rc == 0 && out && strstr(out, "11 computed, 0 kept"));
  free(out); free(err);
  rc = kcast(&out, &err, "cv '%s' --gpu Imaginary-9000 --folds 2 --trees 5", t);
  ASSERT_MSG("cv on it notes that the analytic base and the occupancy features are left out",
             rc == 0 && err && strstr(err, "'Imaginary-9000' not in the GPU table") &&
             strstr(err, "analytic base") && strstr(err, "occupancy"));
  if (rc) printf("\n%s", err ? err : "");
  free(out); free(err);
  rc = kcast(&out, &err, "cv '%s' --gpu Imaginary-9000 --folds 2 --trees 5 --base none "
             "--features all", t);
  ASSERT_MSG("... and says nothing when neither was asked for", rc == 0 && err &&
             !strstr(err, "GPU table"));
  free(out); free(err);

  /* merges: a times-only dataset never replaces computed features */
  rc = kcast(NULL, NULL, "dataset import-kerneltuner '%s' -o '%s' " UNROLL_OPTS " -j 2", cfa, f);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  char *before = features_of(f, "unroll_sum", "32,2");
  char ta[2300];
  snprintf(ta, sizeof ta, "%s/times-a100.db", dir);
  CU_ASSERT_EQUAL_FATAL(kcast(NULL, NULL, "dataset import-kerneltuner '%s' -o '%s'", cfa, ta), 0);
  rc = kcast(NULL, &err, "dataset merge '%s' '%s'", f, ta);
  ASSERT_MSG("merging the same configurations' times-only dataset in succeeds", rc == 0);
  if (rc) printf("\n%s", err ? err : "");
  free(err);
  char *after = features_of(f, "unroll_sum", "32,2");
  ASSERT_MSG("... and keeps the computed features", before && after && !strcmp(before, after) &&
             strstr(after, "class."));
  rc = kcast(NULL, &err, "dataset merge '%s' '%s'", ta, f);
  char *into = features_of(ta, "unroll_sum", "32,2");
  ASSERT_MSG("the other way round, the computed features come in", rc == 0 && into && after &&
             !strcmp(into, after));
  free(err);
  free(before); free(after); free(into);
}

TEST_SUITES(register_ktimport) {
  CU_pSuite s = tests_suite("ktimport");
  TEST_ADD(s, test_reader_refusals);
  TEST_ADD(s, test_reader_memory);
  TEST_ADD(s, test_kt_fuzzer);
  TEST_ADD(s, test_unroll_and_groups);
  TEST_ADD(s, test_groups_fit_the_constant_bank);
  TEST_ADD(s, test_features_handed_over_every_few_seconds);
  TEST_ADD(s, test_unknown_gpu_and_merge);
}
