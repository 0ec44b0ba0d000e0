/*
 * test_featmodel.c -- feature models (model/fm_fit.c, model/fm_io.c, the
 * kcast_featmodel_* API, kcast featmodel and predict --featmodel): exact
 * polynomial counts are recovered exactly and answer unseen sizes exactly;
 * data-dependent counts are flagged unreliable; launches outside the fitted
 * range are flagged; the .kcf file round-trips and every damage is refused
 * by name; the per-launch API call allocates nothing after set-up and gives
 * the same answers from many threads; the emulator records the scalar
 * arguments a kernel reads (arg.*), not its pointers.
 *
 * Suite "featmodel" (make tsan runs it under ThreadSanitizer beside "api").
 */
#include "tests.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/ds.h"
#include "extractor/features.h"
#include "extractor/frontend.h"
#include "include/kcast.h"

#include <zlib.h>
#include "model/model.h"

/* ------------------------------------------------ allocation counting -- */

/*
 * The test binary's malloc family forwards to glibc's and counts calls on
 * threads that ask (count_allocs), so a test can show that a call allocates
 * nothing.  Not under the sanitizers, whose runtimes own malloc.
 */
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define COUNT_ALLOCS 1
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
static __thread int counting;
static __thread long nallocs;
void *malloc(size_t n) {
  if (counting) nallocs++;
  return __libc_malloc(n);
}
void *calloc(size_t n, size_t s) {
  if (counting) nallocs++;
  return __libc_calloc(n, s);
}
void *realloc(void *p, size_t n) {
  if (counting) nallocs++;
  return __libc_realloc(p, n);
}
void free(void *p) { __libc_free(p); }
/* Does the counter see this thread's allocations?  Not under valgrind,
   which replaces malloc in the executable too. */
static int counter_live(void) {
  counting = 1;
  nallocs = 0;
  void *volatile p = malloc(16);
  counting = 0;
  free(p);
  return nallocs > 0;
}
#endif

/* ------------------------------------------------------ the dataset -- */

#define KERNEL "_Z6kernelPfi"
#define NOISY "_Z5noisyPi"
static const unsigned sizes[] = {1024, 4096, 16384, 65536};
#define NSIZES (sizeof sizes / sizeof sizes[0])

static char dir[4096], db_path[4200], kcf_path[4200], noisy_path[4200], tpl_db[4200];

/* What the exact kernel counts at problem size n with 256-thread blocks. */
static void exact_counts(double n, double *thr, double *ctas, double *v) {
  *ctas = n / 256;
  *thr = n;
  v[0] = 2 * n;                  /* op.ld.global.f32 */
  v[1] = 8 * n;                  /* op.fma.rn.f32 */
  v[2] = 8 * n;                  /* class.fp32 */
  v[3] = 3 * n + 2 * (n / 256);  /* class.int_arith: per thread and per CTA */
  v[4] = 12 * n;                 /* mem.global_bytes */
  v[5] = n * n / 16;             /* op.add.s32: a loop over n in every 16th thread */
  v[6] = 20 * (n / 32);          /* ctrl.warp_insns */
}
static const char *const exact_names[7] = {"op.ld.global.f32", "op.fma.rn.f32", "class.fp32",
                                           "class.int_arith", "mem.global_bytes", "op.add.s32",
                                           "ctrl.warp_insns"};

static int add_launch(ds_db *db, const char *kernel, unsigned n, int64_t lseq, unsigned seed) {
  char label[32];
  snprintf(label, sizeof label, "%u", n);
  ds_launch l = {.app = "synth", .dataset = label, .lseq = lseq, .kernel = kernel,
                 .grid = {n / 256, 1, 1}, .block = {256, 1, 1}, .shmem = 0, .source = "test"};
  feat_vec v;
  feat_init(&v);
  double thr, ctas, c[7];
  exact_counts(n, &thr, &ctas, c);
  int bad = feat_set(&v, "launch.grid_x", n / 256) | feat_set(&v, "launch.grid_y", 1) |
            feat_set(&v, "launch.grid_z", 1) | feat_set(&v, "launch.block_x", 256) |
            feat_set(&v, "launch.block_y", 1) | feat_set(&v, "launch.block_z", 1) |
            feat_set(&v, "launch.ctas", ctas) | feat_set(&v, "launch.threads", thr) |
            feat_set(&v, "launch.shared_bytes", 0) | feat_set(&v, "launch.param_bytes", 12) |
            feat_set(&v, "arg.1", n) | feat_set(&v, "emu.ctas_emulated", ctas);
  if (!strcmp(kernel, KERNEL)) {
    for (int k = 0; k < 7; k++) bad |= feat_set(&v, exact_names[k], c[k]);
    double cls = c[2] + c[3];
    bad |= feat_set(&v, "ctrl.active_lane_ratio", cls / (32 * c[6]));
  } else {
    /* work that depends on the data: a count per thread drawn at random */
    uint64_t s = seed * 2654435761u + 1;
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    double f = 1 + (double)(s >> 40) / (double)(1ull << 24) * 3;
    bad |= feat_set(&v, "class.int_arith", floor(n * f));
    bad |= feat_set(&v, "mem.global_bytes", floor(4 * n * f));
  }
  int rc = bad ? -1 : ds_insert_launch(db, &l, &v, NULL);
  feat_free(&v);
  return rc;
}

/*
 * A kernel template: tile<T>(float*, int n), 128-thread blocks, n/128 CTAs,
 * each thread looping T times: class.fp32 = n*T, class.int_arith = 3n +
 * 2*CTAs, mem.global_bytes = 8n.  App tplA runs the instances T = 8, 16,
 * 32, app tplB T = 4, 8, 32, each at n = 4096 and 16384 (labels "n T");
 * app bad has k<4> and k<float>, a template argument that is a type.
 */
static const char *tile_mangled(unsigned T) {
  switch (T) {
    case 4: return "_Z4tileILi4EEvPfi";
    case 8: return "_Z4tileILi8EEvPfi";
    case 16: return "_Z4tileILi16EEvPfi";
    default: return "_Z4tileILi32EEvPfi";
  }
}
static int add_tile(ds_db *db, const char *app, const char *kernel, unsigned T, unsigned n,
                    int64_t lseq) {
  char label[32];
  snprintf(label, sizeof label, "%u %u", n, T);
  ds_launch l = {.app = app, .dataset = label, .lseq = lseq, .kernel = kernel,
                 .grid = {n / 128, 1, 1}, .block = {128, 1, 1}, .shmem = 0, .source = "test"};
  feat_vec v;
  feat_init(&v);
  int bad = feat_set(&v, "launch.grid_x", n / 128) | feat_set(&v, "launch.block_x", 128) |
            feat_set(&v, "launch.ctas", n / 128) | feat_set(&v, "launch.threads", n) |
            feat_set(&v, "arg.1", n) | feat_set(&v, "class.fp32", (double)n * T) |
            feat_set(&v, "class.int_arith", 3.0 * n + 2.0 * (n / 128)) |
            feat_set(&v, "mem.global_bytes", 8.0 * n);
  int rc = bad ? -1 : ds_insert_launch(db, &l, &v, NULL);
  feat_free(&v);
  return rc;
}
static int tile_db(void) {
  snprintf(tpl_db, sizeof tpl_db, "%s/template.db", dir);
  char err[512];
  ds_db *db = NULL;
  if (ds_open(tpl_db, DS_CREATE, &db, err, sizeof err)) return -1;
  int rc = ds_begin(db);
  static const unsigned ta[] = {8, 16, 32}, tb[] = {4, 8, 32}, ns[] = {4096, 16384};
  int64_t lseq = 0;
  for (int i = 0; i < 3 && !rc; i++)
    for (int j = 0; j < 2 && !rc; j++) {
      rc |= add_tile(db, "tplA", tile_mangled(ta[i]), ta[i], ns[j], lseq++);
      rc |= add_tile(db, "tplB", tile_mangled(tb[i]), tb[i], ns[j], lseq++);
    }
  for (int j = 0; j < 2 && !rc; j++) {
    rc |= add_tile(db, "bad", "_Z1kILi4EEvPf", 4, ns[j], lseq++);
    rc |= add_tile(db, "bad", "_Z1kIfEvPf", 4, ns[j], lseq++);
  }
  if (!rc) rc = ds_commit(db);
  ds_close(db);
  return rc;
}

static int suite_init(void) {
  if (!tests_tmpdir(dir, sizeof dir, "featmodel")) return -1;
  snprintf(db_path, sizeof db_path, "%s/synth.db", dir);
  snprintf(kcf_path, sizeof kcf_path, "%s/kernel.kcf", dir);
  snprintf(noisy_path, sizeof noisy_path, "%s/noisy.kcf", dir);
  char err[512];
  ds_db *db = NULL;
  if (ds_open(db_path, DS_CREATE, &db, err, sizeof err)) return -1;
  int rc = ds_begin(db);
  int64_t lseq = 0;
  for (size_t i = 0; i < NSIZES && !rc; i++) {
    rc |= add_launch(db, KERNEL, sizes[i], lseq++, 0);
    rc |= add_launch(db, NOISY, sizes[i], lseq++, (unsigned)i + 1);
  }
  if (!rc) rc = ds_commit(db);
  ds_close(db);
  return rc ? rc : tile_db();
}

/* The fm_rows of one kernel of the synthetic dataset (owned by *h). */
typedef struct rows_holder {
  fm_rows r;
  uint32_t grid[3 * NSIZES], block[3 * NSIZES];
  uint64_t shmem[NSIZES];
  char label[NSIZES][16];
  const char *size[NSIZES];
  const char *names[16];
  double x[NSIZES * 16];
} rows_holder;

static void exact_rows(rows_holder *h, size_t skip) {
  memset(h, 0, sizeof *h);
  size_t n = 0;
  static const char *const extra[] = {"launch.ctas", "launch.threads", "arg.1",
                                      "ctrl.active_lane_ratio"};
  size_t nf = 0;
  for (int k = 0; k < 7; k++) h->names[nf++] = exact_names[k];
  for (int k = 0; k < 4; k++) h->names[nf++] = extra[k];
  for (size_t i = 0; i < NSIZES; i++) {
    if (i == skip) continue;
    double thr, ctas, c[7];
    exact_counts(sizes[i], &thr, &ctas, c);
    h->grid[3 * n] = sizes[i] / 256, h->grid[3 * n + 1] = h->grid[3 * n + 2] = 1;
    h->block[3 * n] = 256, h->block[3 * n + 1] = h->block[3 * n + 2] = 1;
    snprintf(h->label[n], sizeof h->label[n], "%u", sizes[i]);
    h->size[n] = h->label[n];
    for (int k = 0; k < 7; k++) h->x[n * nf + (size_t)k] = c[k];
    h->x[n * nf + 7] = ctas, h->x[n * nf + 8] = thr, h->x[n * nf + 9] = sizes[i];
    h->x[n * nf + 10] = (c[2] + c[3]) / (32 * c[6]);
    n++;
  }
  h->r.n = n;
  h->r.grid = h->grid;
  h->r.block = h->block;
  h->r.shmem = h->shmem;
  h->r.size = h->size;
  h->r.nf = nf;
  h->r.names = h->names;
  h->r.x = h->x;
}

static long out_index(const fm_model *m, const char *name) {
  for (size_t i = 0; i < fm_nout(m); i++)
    if (!strcmp(fm_out_name(m, i), name)) return (long)i;
  return -1;
}

/* ---------------------------------------------------------- the fitter -- */

static void test_exact_forms(void) {
  rows_holder h;
  exact_rows(&h, 3); /* fit on 1024, 4096, 16384; answer 65536 */
  fm_model *m = NULL;
  CU_ASSERT_EQUAL_FATAL(fm_fit(&h.r, NULL, KERNEL, "synth", &m), 0);
  fm_info in;
  fm_get_info(m, &in);
  CU_ASSERT_EQUAL(in.nargs, 1);                 /* arg.1 is an input */
  CU_ASSERT_EQUAL(in.arg_param[0], 1u);
  CU_ASSERT_EQUAL(in.n_exact, 7);               /* every count polynomial is found exactly */
  CU_ASSERT_EQUAL(in.nsizes, 3);
  double args[2] = {NAN, 65536};
  fm_launch l = {{256, 1, 1}, {256, 1, 1}, 0, args, 2, NULL, 0};
  double *out = malloc(fm_nout(m) * sizeof *out);
  unsigned fl = 0;
  CU_ASSERT_EQUAL_FATAL(fm_eval(m, &l, out, &fl), 0);
  double thr, ctas, c[7];
  exact_counts(65536, &thr, &ctas, c);
  for (int k = 0; k < 7; k++) {
    long at = out_index(m, exact_names[k]);
    CU_ASSERT_FATAL(at >= 0);
    CU_ASSERT(fabs(out[at] - c[k]) <= 1e-6 * c[k]); /* unseen size answered exactly */
  }
  CU_ASSERT(fl & FM_EXTRAPOLATED);              /* 65536 is beyond the fitted 16384 */
  CU_ASSERT(fl & FM_UNRELIABLE);                /* no held-out error set yet */
  long lr = out_index(m, "ctrl.active_lane_ratio");
  CU_ASSERT(lr >= 0 && fabs(out[lr] - (c[2] + c[3]) / (32 * c[6])) < 1e-9); /* ratio derived */
  long lt = out_index(m, "launch.threads");
  CU_ASSERT(lt >= 0 && out[lt] == 65536);       /* launch features come from the launch */
  /* inside the range: no extrapolation flag */
  args[1] = 4096;
  l.grid[0] = 16;
  CU_ASSERT_EQUAL(fm_eval(m, &l, out, &fl), 0);
  CU_ASSERT_FALSE(fl & FM_EXTRAPOLATED);
  /* too few arguments: refused, naming the parameter */
  l.nargs = 1;
  CU_ASSERT_EQUAL(fm_eval(m, &l, out, &fl), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(rf_last_error(), "parameter 1"));
  free(out);
  fm_free(m);
}

static void test_validate(void) {
  rows_holder h;
  exact_rows(&h, NSIZES);
  double err;
  unsigned ns;
  CU_ASSERT_EQUAL(fm_validate(&h.r, &err, &ns, NULL, NULL), 0);
  CU_ASSERT_EQUAL(ns, NSIZES);                  /* every size held out once */
  CU_ASSERT(err >= 0 && err < 1e-9);            /* exact counts: no held-out error */
  /* one distinct configuration cannot be fitted */
  h.r.n = 1;
  fm_model *m = NULL;
  CU_ASSERT_EQUAL(fm_fit(&h.r, NULL, KERNEL, NULL, &m), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(rf_last_error(), "at least 2"));
  CU_ASSERT_EQUAL(fm_rel_error(0, 0), 0);
  CU_ASSERT_DOUBLE_EQUAL(fm_rel_error(110, 100), 0.1, 1e-12);
}

/* ------------------------------------------------------------- the CLI -- */

static void test_cli_fit_info(void) {
  char cmd[16384], *out = NULL, *err = NULL;
  snprintf(cmd, sizeof cmd, "'%s' featmodel fit '%s' --kernel kernel -o '%s'", tests_kcast(),
           db_path, kcf_path);
  CU_ASSERT_EQUAL(tests_run(cmd, &out, &err), 0);   /* fit by source name */
  CU_ASSERT_PTR_NOT_NULL(err && strstr(err, "held-out error 0.00 %"));
  free(out), free(err);
  snprintf(cmd, sizeof cmd, "'%s' featmodel info '%s' --forms", tests_kcast(), kcf_path);
  CU_ASSERT_EQUAL(tests_run(cmd, &out, &err), 0);
  CU_ASSERT_PTR_NOT_NULL(out && strstr(out, "arg.1"));                 /* argument listed */
  CU_ASSERT_PTR_NOT_NULL(out && strstr(out, "exact: 8*threads"));      /* form shown */
  CU_ASSERT_PTR_NOT_NULL(out && strstr(out, "0.00 % median error"));
  free(out), free(err);
  snprintf(cmd, sizeof cmd, "'%s' featmodel fit '%s' --kernel noisy -o '%s'", tests_kcast(),
           db_path, noisy_path);
  CU_ASSERT_EQUAL(tests_run(cmd, &out, &err), 0);
  CU_ASSERT_PTR_NOT_NULL(err && strstr(err, "flagged unreliable")); /* data-dependent */
  free(out), free(err);
  /* errors: unknown kernel (1), missing -o (2), a dataset that is not one (1) */
  snprintf(cmd, sizeof cmd, "'%s' featmodel fit '%s' --kernel nosuch -o '%s/x.kcf'",
           tests_kcast(), db_path, dir);
  CU_ASSERT_EQUAL(tests_run(cmd, &out, &err), 1);
  CU_ASSERT_PTR_NOT_NULL(err && strstr(err, "no launches of kernel 'nosuch'"));
  free(out), free(err);
  snprintf(cmd, sizeof cmd, "'%s' featmodel fit '%s' --kernel kernel", tests_kcast(), db_path);
  CU_ASSERT_EQUAL(tests_run(cmd, &out, &err), 2);
  free(out), free(err);
  snprintf(cmd, sizeof cmd, "'%s' featmodel info '%s'", tests_kcast(), db_path);
  CU_ASSERT_EQUAL(tests_run(cmd, &out, &err), 1);  /* a dataset is not a feature model */
  CU_ASSERT_PTR_NOT_NULL(err && strstr(err, "not a kcast feature model"));
  free(out), free(err);
  snprintf(cmd, sizeof cmd, "'%s' featmodel validate '%s' --format csv", tests_kcast(), db_path);
  CU_ASSERT_EQUAL(tests_run(cmd, &out, &err), 0);
  CU_ASSERT_PTR_NOT_NULL(out && strstr(out, "synth," KERNEL ",1,4,4,1,0,"));
  CU_ASSERT_PTR_NOT_NULL(out && strstr(out, "not modelled: held-out error above the limit"));
  free(out), free(err);
}

static void test_cli_predict(void) {
  char cmd[16384], *out = NULL, *err = NULL;
  snprintf(cmd, sizeof cmd, "'%s' predict --featmodel '%s' --grid 64 --block 256 --arg buf:4M "
           "--arg 16384 --gpu H200 --format json", tests_kcast(), kcf_path);
  CU_ASSERT_EQUAL(tests_run(cmd, &out, &err), 0);
  CU_ASSERT_PTR_NOT_NULL(out && strstr(out, "\"time_us\""));
  CU_ASSERT_PTR_NOT_NULL(out && strstr(out, "\"ctas_emulated\":\tnull")); /* none ran */
  CU_ASSERT_PTR_NULL(err && strstr(err, "extrapolated"));     /* a fitted size */
  free(out), free(err);
  snprintf(cmd, sizeof cmd, "'%s' predict --featmodel '%s' --grid 4096 --block 256 --arg buf "
           "--arg 1048576 --gpu H200", tests_kcast(), kcf_path);
  CU_ASSERT_EQUAL(tests_run(cmd, &out, &err), 0);
  CU_ASSERT_PTR_NOT_NULL(err && strstr(err, "extrapolated"));  /* answered and flagged */
  free(out), free(err);
  snprintf(cmd, sizeof cmd, "'%s' predict --featmodel '%s' --grid 4 --block 256 --arg buf "
           "--arg 1024 --gpu H200", tests_kcast(), noisy_path);
  CU_ASSERT_EQUAL(tests_run(cmd, &out, &err), 0);
  CU_ASSERT_PTR_NOT_NULL(err && strstr(err, "emulate it"));    /* unreliable: says so */
  free(out), free(err);
  snprintf(cmd, sizeof cmd, "'%s' predict --featmodel '%s' --grid 4 --block 256 --gpu H200",
           tests_kcast(), kcf_path);
  CU_ASSERT_EQUAL(tests_run(cmd, &out, &err), 1);              /* the argument it reads is missing */
  CU_ASSERT_PTR_NOT_NULL(err && strstr(err, "reads parameter 1"));
  free(out), free(err);
  snprintf(cmd, sizeof cmd, "'%s' predict --featmodel '%s' --block 256 --arg 1 --gpu H200",
           tests_kcast(), kcf_path);
  CU_ASSERT_EQUAL(tests_run(cmd, &out, &err), 2);              /* no --grid */
  free(out), free(err);
}

/* ---------------------------------------------------------- the file -- */

static void test_file_damage(void) {
  size_t len = 0;
  unsigned char *buf = (unsigned char *)tests_read_file(kcf_path, &len);
  CU_ASSERT_FATAL(buf && len > 40);
  char path[4300];
  snprintf(path, sizeof path, "%s/damaged.kcf", dir);
  fm_model *m = NULL;
  /* a flipped payload byte: the checksum */
  buf[len / 2] ^= 0x40;
  CU_ASSERT_EQUAL(tests_write_file(path, buf, len), 0);
  CU_ASSERT_EQUAL(fm_load(path, &m), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(rf_last_error(), "checksum"));
  buf[len / 2] ^= 0x40;
  /* truncated */
  CU_ASSERT_EQUAL(tests_write_file(path, buf, len - 9), 0);
  CU_ASSERT_EQUAL(fm_load(path, &m), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(rf_last_error(), "truncated"));
  /* a newer version */
  unsigned char v = buf[8];
  buf[8] = 99;
  CU_ASSERT_EQUAL(tests_write_file(path, buf, len), 0);
  CU_ASSERT_EQUAL(fm_load(path, &m), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(rf_last_error(), "unsupported feature model version 99"));
  buf[8] = v;
  /* the original loads, and a save of it is byte-identical */
  CU_ASSERT_EQUAL_FATAL(fm_load(kcf_path, &m), 0);
  CU_ASSERT_EQUAL(fm_save(m, path), 0);
  size_t len2 = 0;
  char *again = tests_read_file(path, &len2);
  CU_ASSERT(again && len2 == len && !memcmp(again, buf, len));
  free(again);
  fm_free(m);
  /* the API reports the format error with its code */
  snprintf(path, sizeof path, "%s/damaged.kcf", dir);
  buf[len / 3] ^= 1;
  CU_ASSERT_EQUAL(tests_write_file(path, buf, len), 0);
  kcast_featmodel *fm = NULL;
  CU_ASSERT_EQUAL(kcast_featmodel_load(path, &fm), KCAST_E_FORMAT);
  CU_ASSERT_PTR_NULL(fm);
  CU_ASSERT_EQUAL(kcast_featmodel_load("/nonexistent/x.kcf", &fm), KCAST_E_IO);
  free(buf);
}

/* ----------------------------------------------------------- the API -- */

static void test_api_fill(void) {
  kcast_featmodel *fm = NULL;
  CU_ASSERT_EQUAL_FATAL(kcast_featmodel_load(kcf_path, &fm), KCAST_OK);
  CU_ASSERT_STRING_EQUAL(kcast_featmodel_kernel(fm), KERNEL);
  CU_ASSERT_EQUAL(kcast_featmodel_nargs(fm), 1);
  CU_ASSERT_EQUAL(kcast_featmodel_arg_param(fm, 0), 1);
  CU_ASSERT_EQUAL(kcast_featmodel_arg_param(fm, 1), -1);
  CU_ASSERT(kcast_featmodel_heldout_error(fm) < 1e-9);
  kcast_features *fs = NULL;
  CU_ASSERT_EQUAL_FATAL(kcast_featmodel_features_new(fm, &fs), KCAST_OK);
  unsigned grid[3] = {128, 1, 1}, block[3] = {256, 1, 1}, fl = 99;
  double args[2] = {0, 32768};
  CU_ASSERT_EQUAL(kcast_featmodel_fill(fm, grid, block, 0, args, 2, fs, &fl), KCAST_OK);
  CU_ASSERT_EQUAL(fl, 0u);                     /* inside the range, reliable */
  double v = 0;
  CU_ASSERT_EQUAL(kcast_features_get(fs, "op.add.s32", &v), KCAST_OK);
  CU_ASSERT_DOUBLE_EQUAL(v, 32768.0 * 32768 / 16, 1e-3); /* an unseen size, exactly */
#ifdef COUNT_ALLOCS
  int live = counter_live();
  if (!live) fprintf(stderr, "(malloc not countable here: allocation checks skipped) ");
  counting = 1;
  nallocs = 0;
  for (int i = 0; i < 1000; i++) {
    args[1] = 1024 + i;
    kcast_featmodel_fill(fm, grid, block, 0, args, 2, fs, &fl);
  }
  counting = 0;
  CU_ASSERT_EQUAL(nallocs, 0);                 /* no allocation after set-up */
#endif
  /* a plain set is filled too (it gets every name, which allocates: the
     counter above sees allocations) */
  kcast_features *plain = NULL;
  CU_ASSERT_EQUAL_FATAL(kcast_features_new(&plain), KCAST_OK);
#ifdef COUNT_ALLOCS
  counting = 1;
  nallocs = 0;
#endif
  CU_ASSERT_EQUAL(kcast_featmodel_fill(fm, grid, block, 0, args, 2, plain, NULL), KCAST_OK);
#ifdef COUNT_ALLOCS
  counting = 0;
  if (live) CU_ASSERT(nallocs > 0);
#endif
  CU_ASSERT_EQUAL(kcast_features_count(plain), kcast_features_count(fs));
  /* misuse: codes, not crashes */
  unsigned zero[3] = {0, 1, 1};
  CU_ASSERT_EQUAL(kcast_featmodel_fill(fm, zero, block, 0, args, 2, fs, &fl), KCAST_E_ARG);
  CU_ASSERT_EQUAL(kcast_featmodel_fill(fm, grid, block, 0, args, 1, fs, &fl), KCAST_E_ARG);
  CU_ASSERT_PTR_NOT_NULL(strstr(kcast_last_error(), "parameter 1"));
  CU_ASSERT_EQUAL(kcast_featmodel_fill(NULL, grid, block, 0, args, 2, fs, &fl), KCAST_E_ARG);
  kcast_features *none = (kcast_features *)&fl;
  CU_ASSERT_EQUAL(kcast_featmodel_features_new(NULL, &none), KCAST_E_ARG);
  CU_ASSERT_PTR_NULL(none);                    /* the out-parameter is cleared */
  /* the filled set predicts: the analytic estimate reads its launch.* and counts */
  kcast_prediction t;
  CU_ASSERT_EQUAL(kcast_featmodel_fill(fm, grid, block, 0, args, 2, fs, &fl), KCAST_OK);
  CU_ASSERT_EQUAL(kcast_predict_analytic("H200", fs, &t, NULL), KCAST_OK);
  CU_ASSERT(t.value > 0);
  kcast_features_free(plain);
  kcast_features_free(fs);
  kcast_featmodel_free(fm);
  kcast_featmodel_free(NULL);
  /* the noisy kernel's answers carry the unreliable flag */
  CU_ASSERT_EQUAL_FATAL(kcast_featmodel_load(noisy_path, &fm), KCAST_OK);
  CU_ASSERT_EQUAL_FATAL(kcast_featmodel_features_new(fm, &fs), KCAST_OK);
  unsigned g4[3] = {4, 1, 1};
  double a4[2] = {0, 1024};
  CU_ASSERT_EQUAL(kcast_featmodel_fill(fm, g4, block, 0, a4, 2, fs, &fl), KCAST_OK);
  CU_ASSERT(fl & KCAST_FEATMODEL_UNRELIABLE);
  kcast_features_free(fs);
  kcast_featmodel_free(fm);
}

#define NTHREADS 4
#define NCALLS 20000
typedef struct worker {
  const kcast_featmodel *fm;
  int bad;        /* answers that differ from the expected counts */
  long allocs;    /* allocations in the loop */
} worker;

static void *work(void *p) {
  worker *w = p;
  kcast_features *fs = NULL;
  if (kcast_featmodel_features_new(w->fm, &fs)) {
    w->bad = -1;
    return NULL;
  }
  unsigned block[3] = {256, 1, 1};
#ifdef COUNT_ALLOCS
  counting = 1;
#endif
  for (int i = 0; i < NCALLS; i++) {
    unsigned n = 256u * (1 + (unsigned)(i % 64));
    unsigned grid[3] = {n / 256, 1, 1}, fl;
    double args[2] = {0, n}, v = -1;
    if (kcast_featmodel_fill(w->fm, grid, block, 0, args, 2, fs, &fl) ||
        kcast_features_get(fs, "class.int_arith", &v) || v != 3.0 * n + 2.0 * (n / 256))
      w->bad++;
  }
#ifdef COUNT_ALLOCS
  counting = 0;
  w->allocs = nallocs;
#endif
  kcast_features_free(fs);
  return NULL;
}

static void test_api_threads(void) {
  kcast_featmodel *fm = NULL;
  CU_ASSERT_EQUAL_FATAL(kcast_featmodel_load(kcf_path, &fm), KCAST_OK);
  pthread_t t[NTHREADS];
  worker w[NTHREADS];
  for (int i = 0; i < NTHREADS; i++) {
    w[i].fm = fm, w[i].bad = 0, w[i].allocs = 0;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, work, &w[i]), 0);
  }
  for (int i = 0; i < NTHREADS; i++) {
    pthread_join(t[i], NULL);
    CU_ASSERT_EQUAL(w[i].bad, 0);     /* every thread's answers are exact */
    CU_ASSERT_EQUAL(w[i].allocs, 0);  /* and none of them allocated */
  }
  kcast_featmodel_free(fm);
}

/* ------------------------------------------------------- the emulator -- */

static void test_emulator_args(void) {
  char cmd[8192], *out = NULL;
  snprintf(cmd, sizeof cmd, "'%s' emulate tests/kernels/saxpy.cu --kernel saxpy --grid 4 "
           "--block 256 --arg 1000 --arg 2.5 --arg buf:4K:randf --arg buf:4K:randf --format json",
           tests_kcast());
  int rc = tests_run(cmd, &out, NULL);
  if (rc != 0) { /* no nvcc: the PTX of the corpus */
    free(out);
    snprintf(cmd, sizeof cmd, "'%s' emulate '%s/corpus/saxpy.nvcc.ptx' --kernel saxpy --grid 4 "
             "--block 256 --arg 1000 --arg 2.5 --arg buf:4K:randf --arg buf:4K:randf "
             "--format json", tests_kcast(), tests_build());
    rc = tests_run(cmd, &out, NULL);
  }
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"arg.0\":\t1000"));  /* the int the kernel reads */
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"arg.1\":\t2.5"));   /* the float */
  CU_ASSERT_PTR_NULL(strstr(out, "\"arg.2\""));           /* pointers are not arguments */
  CU_ASSERT_PTR_NULL(strstr(out, "\"arg.3\""));
  free(out);
}

/* ------------------------------------------------------- templates -- */

static void test_template_names(void) {
  char key[512], why[256];
  double v[4];
  size_t n = 0;
  CU_ASSERT_EQUAL(fe_template_key("_Z5mixedIfLi8EEvPfi", key, sizeof key, v, 4), 1);
  CU_ASSERT_STRING_EQUAL(key, "void mixed<float, T0>(float*, int)"); /* the integer is T0 */
  CU_ASSERT_EQUAL(v[0], 8);
  CU_ASSERT_EQUAL(fe_template_key("_Z1kIfEvPf", key, sizeof key, v, 4), 0); /* no integer */
  CU_ASSERT_EQUAL(fe_template_key("_Z6kernelPfi", key, sizeof key, v, 4), 0); /* no template */
  CU_ASSERT_EQUAL(fe_template_args("mixed<float, 8>", "mixed<float, N>", v, 4, &n, why,
                                   sizeof why), 1);
  CU_ASSERT(n == 1 && v[0] == 8);                       /* a fixed type, a variable */
  CU_ASSERT_EQUAL(fe_template_args("mixed<double, 8>", "mixed<float, N>", v, 4, &n, why,
                                   sizeof why), 0);     /* another fixed argument */
  CU_ASSERT_EQUAL(fe_template_args("ns::tile<16u>", "tile<T>", v, 4, &n, why, sizeof why), 1);
  CU_ASSERT(n == 1 && v[0] == 16);                      /* last component, suffix */
  CU_ASSERT_EQUAL(fe_template_args("tile<4, 2>", "tile<T>", v, 4, &n, why, sizeof why), 0);
  CU_ASSERT_EQUAL(fe_template_args("k<float>", "k<T>", v, 4, &n, why, sizeof why), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(why, "'float'"));        /* says which argument */
  CU_ASSERT_EQUAL(fe_template_args("_Z4tileILi4EEvPfi", "void tile<T0>(float*, int)", v, 4, &n,
                                   why, sizeof why), 1); /* mangled against a key */
  CU_ASSERT(n == 1 && v[0] == 4);
  CU_ASSERT_EQUAL(fe_template_args("_Z4tileILi4EEvPfi", "void tile<T0>(double*, int)", v, 4, &n,
                                   why, sizeof why), 0); /* other parameters: not this key */
}

static void test_template_cli(void) {
  char cmd[16384], kcf[4300], *out = NULL, *err = NULL;
  snprintf(kcf, sizeof kcf, "%s/tplA.kcf", dir);
  snprintf(cmd, sizeof cmd, "'%s' featmodel fit '%s' --kernel 'tile<T>' --app tplA -o '%s'",
           tests_kcast(), tpl_db, kcf);
  CU_ASSERT_EQUAL(tests_run(cmd, &out, &err), 0);
  CU_ASSERT_PTR_NOT_NULL(err && strstr(err, "6 launches at 6 sizes of 3 instances"));
  CU_ASSERT_PTR_NOT_NULL(err && strstr(err, "held-out error 0.00 %")); /* exact in T */
  free(out), free(err);
  snprintf(cmd, sizeof cmd, "'%s' featmodel info '%s' --forms", tests_kcast(), kcf);
  CU_ASSERT_EQUAL(tests_run(cmd, &out, &err), 0);
  CU_ASSERT_PTR_NOT_NULL(out && strstr(out, "void tile<T0>(float*, int)")); /* the template */
  CU_ASSERT_PTR_NOT_NULL(out && strstr(out, "1 variable: T0 in [8, 32]"));
  CU_ASSERT_PTR_NOT_NULL(out && strstr(out, "exact: 1*threads*T0"));        /* T0 in a form */
  free(out), free(err);
  snprintf(kcf, sizeof kcf, "%s/tplB.kcf", dir);
  snprintf(cmd, sizeof cmd, "'%s' featmodel fit '%s' --kernel 'tile<N>' --app tplB -o '%s'",
           tests_kcast(), tpl_db, kcf);
  CU_ASSERT_EQUAL(tests_run(cmd, &out, &err), 0);
  free(out), free(err);
  /* the source name alone names three kernels: the message names the template */
  snprintf(cmd, sizeof cmd, "'%s' featmodel fit '%s' --kernel tile --app tplA -o '%s/x.kcf'",
           tests_kcast(), tpl_db, dir);
  CU_ASSERT_EQUAL(tests_run(cmd, &out, &err), 1);
  CU_ASSERT_PTR_NOT_NULL(err && strstr(err, "--kernel 'tile<T0>'"));
  free(out), free(err);
  /* a type where the pattern has a variable: one clear error */
  snprintf(cmd, sizeof cmd, "'%s' featmodel fit '%s' --kernel 'k<T>' --app bad -o '%s/x.kcf'",
           tests_kcast(), tpl_db, dir);
  CU_ASSERT_EQUAL(tests_run(cmd, &out, &err), 1);
  CU_ASSERT_PTR_NOT_NULL(err && strstr(err, "template argument 'float' of k<float> (for T) is "
                                            "not an integer"));
  free(out), free(err);
  /* a template nobody launched */
  snprintf(cmd, sizeof cmd, "'%s' featmodel fit '%s' --kernel 'nosuch<T>' -o '%s/x.kcf'",
           tests_kcast(), tpl_db, dir);
  CU_ASSERT_EQUAL(tests_run(cmd, &out, &err), 1);
  CU_ASSERT_PTR_NOT_NULL(err && strstr(err, "no launches of kernel 'nosuch<T>'"));
  free(out), free(err);
  /* validate: the template is one kernel with its instances' sizes ... */
  snprintf(cmd, sizeof cmd, "'%s' featmodel validate '%s' --app tplA --format csv",
           tests_kcast(), tpl_db);
  CU_ASSERT_EQUAL(tests_run(cmd, &out, &err), 0);
  CU_ASSERT_PTR_NOT_NULL(out && strstr(out, "tile<T0>(float*, int)\",3,6,6,2,0,"));
  CU_ASSERT_PTR_NOT_NULL(out && strstr(out, ",modelled"));
  CU_ASSERT_PTR_NOT_NULL(err && strstr(err, "1 of the kernels is a template (3 instances"));
  free(out), free(err);
  /* ... and with --instances each instance is a kernel of 2 sizes */
  snprintf(cmd, sizeof cmd, "'%s' featmodel validate '%s' --app tplA --instances --format csv",
           tests_kcast(), tpl_db);
  CU_ASSERT_EQUAL(tests_run(cmd, &out, &err), 0);
  CU_ASSERT_PTR_NOT_NULL(out && strstr(out, "tplA,_Z4tileILi16EEvPfi,1,2,2,1,"));
  CU_ASSERT_PTR_NULL(out && strstr(out, "tile<T0>"));
  free(out), free(err);
  /* predict answers an instance nobody ran, flagged beyond the fitted T */
  snprintf(kcf, sizeof kcf, "%s/tplA.kcf", dir);
  snprintf(cmd, sizeof cmd, "'%s' predict --featmodel '%s' --kernel 'tile<4>' --grid 32 "
           "--block 128 --arg buf --arg 4096 --gpu H200", tests_kcast(), kcf);
  CU_ASSERT_EQUAL(tests_run(cmd, &out, &err), 0);
  CU_ASSERT_PTR_NOT_NULL(err && strstr(err, "extrapolated"));
  CU_ASSERT_PTR_NOT_NULL(out && strstr(out, "kernel tile<4>\n"));   /* the instance asked */
  CU_ASSERT_PTR_NOT_NULL(out && strstr(out, "nothing emulated"));
  free(out), free(err);
  snprintf(cmd, sizeof cmd, "'%s' predict --featmodel '%s' --grid 32 --block 128 --arg buf "
           "--arg 4096 --gpu H200", tests_kcast(), kcf);
  CU_ASSERT_EQUAL(tests_run(cmd, &out, &err), 1);   /* which instance? */
  CU_ASSERT_PTR_NOT_NULL(err && strstr(err, "give --kernel with the instance"));
  free(out), free(err);
}

/* Copy of the version-3 file at path as version 1 (no template variable
   and difference counts, no instance count at the end) into path1; 0 on
   success. */
static int as_version1(const char *path, const char *path1) {
  size_t len = 0;
  unsigned char *b = (unsigned char *)tests_read_file(path, &len);
  if (!b) return -1;
  size_t pos = 24;
  uint32_t n;
  for (int k = 0; k < 2; k++) { /* kernel, app */
    memcpy(&n, b + pos, 4);
    pos += 4 + n;
  }
  pos += 8 + 8 + 8 + 8 + 4 + 8; /* created, sizes, launches, held-out, its sizes, limit */
  memcpy(&n, b + pos, 4);
  pos += 4 + 4 * (size_t)n;     /* the argument list; the counts of version 2 follow */
  uint32_t nt, ndf;
  memcpy(&nt, b + pos, 4);
  memcpy(&ndf, b + pos + 4, 4);
  int rc = -1;
  uint32_t ninst = 1;
  memcpy(&ninst, b + len - 8, 4); /* version 3's instance count, before the CRC */
  if (nt == 0 && ndf == 0 && ninst == 0) {
    memmove(b + len - 8, b + len - 4, 4);
    len -= 4;
    memmove(b + pos, b + pos + 8, len - pos - 8);
    len -= 8;
    uint32_t v1 = 1;
    uint64_t L = len - 28;
    memcpy(b + 8, &v1, 4);
    memcpy(b + 16, &L, 8);
    uint32_t crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), b, (uInt)(len - 4));
    memcpy(b + len - 4, &crc, 4);
    rc = tests_write_file(path1, b, len);
  }
  free(b);
  return rc;
}

static void test_template_file(void) {
  char kcf[4300], again[4300], v1[4300];
  snprintf(kcf, sizeof kcf, "%s/tplA.kcf", dir);
  snprintf(again, sizeof again, "%s/tplA-again.kcf", dir);
  fm_model *m = NULL;
  CU_ASSERT_EQUAL_FATAL(fm_load(kcf, &m), 0);
  fm_info in;
  fm_get_info(m, &in);
  CU_ASSERT_EQUAL(in.ntpl, 1);                         /* the variable survives the file */
  CU_ASSERT_STRING_EQUAL(in.kernel, "void tile<T0>(float*, int)");
  double lo, hi;
  fm_tpl_range(m, 0, &lo, &hi);
  CU_ASSERT(lo == 8 && hi == 32);                      /* with its fitted range */
  CU_ASSERT_EQUAL(fm_save(m, again), 0);
  size_t l1 = 0, l2 = 0;
  char *a = tests_read_file(kcf, &l1), *b = tests_read_file(again, &l2);
  CU_ASSERT(a && b && l1 == l2 && !memcmp(a, b, l1));  /* save(load(f)) == f */
  free(a), free(b);
  /* evaluation needs the template argument, exactly one */
  double args[2] = {0, 4096}, t16 = 16, out[64];
  fm_launch l = {{32, 1, 1}, {128, 1, 1}, 0, args, 2, NULL, 0};
  CU_ASSERT_EQUAL(fm_eval(m, &l, out, NULL), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(rf_last_error(), "template of 1 template argument"));
  l.targs = &t16, l.ntargs = 1;
  CU_ASSERT_FATAL(fm_nout(m) <= 64);
  CU_ASSERT_EQUAL(fm_eval(m, &l, out, NULL), 0);
  fm_free(m);
  /* a version-1 file (before templates) still loads */
  snprintf(v1, sizeof v1, "%s/kernel-v1.kcf", dir);
  CU_ASSERT_EQUAL_FATAL(as_version1(kcf_path, v1), 0);
  CU_ASSERT_EQUAL(fm_load(v1, &m), 0);
  if (m) {
    fm_get_info(m, &in);
    CU_ASSERT_EQUAL(in.ntpl, 0);
    CU_ASSERT_STRING_EQUAL(in.kernel, KERNEL);
    fm_free(m);
  }
}

static void test_template_api(void) {
  char kcf[4300];
  snprintf(kcf, sizeof kcf, "%s/tplA.kcf", dir);
  kcast_featmodel *fm = NULL;
  CU_ASSERT_EQUAL_FATAL(kcast_featmodel_load(kcf, &fm), KCAST_OK);
  CU_ASSERT_STRING_EQUAL(kcast_featmodel_kernel(fm), "void tile<T0>(float*, int)");
  kcast_features *fs = NULL;
  CU_ASSERT_EQUAL_FATAL(kcast_featmodel_features_new(fm, &fs), KCAST_OK);
  unsigned grid[3] = {32, 1, 1}, block[3] = {128, 1, 1}, fl = 0;
  double args[2] = {0, 4096}, v = 0;
  /* fitted on T = 8, 16, 32: tile<4> is answered, exactly, and flagged */
  CU_ASSERT_EQUAL(kcast_featmodel_fill_instance(fm, "tile<4>", NULL, 0, grid, block, 0, args, 2,
                                                fs, &fl), KCAST_OK);
  CU_ASSERT(fl & KCAST_FEATMODEL_EXTRAPOLATED);
  CU_ASSERT(kcast_features_get(fs, "class.fp32", &v) == KCAST_OK && v == 4096.0 * 4);
  /* by its mangled name alike */
  v = 0;
  CU_ASSERT_EQUAL(kcast_featmodel_fill_instance(fm, "_Z4tileILi4EEvPfi", NULL, 0, grid, block, 0,
                                                args, 2, fs, &fl), KCAST_OK);
  CU_ASSERT(kcast_features_get(fs, "class.fp32", &v) == KCAST_OK && v == 4096.0 * 4);
  /* by its template arguments: inside the fitted range, no flag, no allocation */
  double t16 = 16;
  unsigned g2[3] = {64, 1, 1};
  args[1] = 8192;
  CU_ASSERT_EQUAL(kcast_featmodel_fill_instance(fm, NULL, &t16, 1, g2, block, 0, args, 2, fs,
                                                &fl), KCAST_OK);
  CU_ASSERT_EQUAL(fl, 0u);
  CU_ASSERT(kcast_features_get(fs, "class.fp32", &v) == KCAST_OK && v == 8192.0 * 16);
  CU_ASSERT(kcast_features_get(fs, "class.int_arith", &v) == KCAST_OK &&
            fabs(v - (3.0 * 8192 + 2.0 * 64)) < 1e-6);
#ifdef COUNT_ALLOCS
  if (counter_live()) {
    counting = 1;
    nallocs = 0;
    for (int i = 0; i < 1000; i++) {
      t16 = 8 + i % 24;
      kcast_featmodel_fill_instance(fm, NULL, &t16, 1, g2, block, 0, args, 2, fs, &fl);
    }
    counting = 0;
    CU_ASSERT_EQUAL(nallocs, 0);                 /* template arguments given: no allocation */
  }
#endif
  /* misuse: the plain fill, another template, a type, two arguments */
  CU_ASSERT_EQUAL(kcast_featmodel_fill(fm, grid, block, 0, args, 2, fs, &fl), KCAST_E_ARG);
  CU_ASSERT_PTR_NOT_NULL(strstr(kcast_last_error(), "template"));
  CU_ASSERT_EQUAL(kcast_featmodel_fill_instance(fm, "other<4>", NULL, 0, grid, block, 0, args, 2,
                                                fs, &fl), KCAST_E_ARG);
  CU_ASSERT_PTR_NOT_NULL(strstr(kcast_last_error(), "not an instance"));
  CU_ASSERT_EQUAL(kcast_featmodel_fill_instance(fm, "tile<float>", NULL, 0, grid, block, 0, args,
                                                2, fs, &fl), KCAST_E_ARG);
  CU_ASSERT_PTR_NOT_NULL(strstr(kcast_last_error(), "not an integer"));
  double two[2] = {4, 4};
  CU_ASSERT_EQUAL(kcast_featmodel_fill_instance(fm, NULL, two, 2, grid, block, 0, args, 2, fs,
                                                &fl), KCAST_E_ARG);
  kcast_features_free(fs);
  kcast_featmodel_free(fm);
  /* fitted on T = 4, 8, 32: tile<16> lies between, answered exactly, no flag */
  snprintf(kcf, sizeof kcf, "%s/tplB.kcf", dir);
  CU_ASSERT_EQUAL_FATAL(kcast_featmodel_load(kcf, &fm), KCAST_OK);
  CU_ASSERT_EQUAL_FATAL(kcast_featmodel_features_new(fm, &fs), KCAST_OK);
  unsigned g3[3] = {128, 1, 1};
  args[1] = 16384;
  CU_ASSERT_EQUAL(kcast_featmodel_fill_instance(fm, "tile<16>", NULL, 0, g3, block, 0, args, 2,
                                                fs, &fl), KCAST_OK);
  CU_ASSERT_EQUAL(fl, 0u);
  CU_ASSERT(kcast_features_get(fs, "class.fp32", &v) == KCAST_OK && v == 16384.0 * 16);
  /* a model that is not a template takes its own kernel's name or none */
  kcast_features_free(fs);
  kcast_featmodel_free(fm);
  CU_ASSERT_EQUAL_FATAL(kcast_featmodel_load(kcf_path, &fm), KCAST_OK);
  CU_ASSERT_EQUAL_FATAL(kcast_featmodel_features_new(fm, &fs), KCAST_OK);
  unsigned g4[3] = {16, 1, 1}, b4[3] = {256, 1, 1};
  args[1] = 4096;
  CU_ASSERT_EQUAL(kcast_featmodel_fill_instance(fm, "kernel", NULL, 0, g4, b4, 0, args, 2, fs,
                                                &fl), KCAST_OK);
  CU_ASSERT_EQUAL(kcast_featmodel_fill_instance(fm, "tile<4>", NULL, 0, g4, b4, 0, args, 2, fs,
                                                &fl), KCAST_E_ARG);
  kcast_features_free(fs);
  kcast_featmodel_free(fm);
}

/* A template's instances each ran with one block (the suite's gemm_tiled:
   block T0 x T0): a fill with another block is flagged, for an instance
   the model saw and, by the rule the blocks follow, for one it did not. */
static void test_template_block(void) {
  char kcf[4300], cmd[9000];
  snprintf(kcf, sizeof kcf, "%s/gemm-block.kcf", dir);
  snprintf(cmd, sizeof cmd, "'%s' featmodel fit datasets/data/suite-features.db --kernel "
           "'gemm_tiled_kernel<T>' -o '%s'", tests_kcast(), kcf);
  CU_ASSERT_EQUAL_FATAL(tests_run(cmd, NULL, NULL), 0);
  kcast_featmodel *fm = NULL;
  kcast_features *fs = NULL;
  CU_ASSERT_EQUAL_FATAL(kcast_featmodel_load(kcf, &fm), KCAST_OK);
  CU_ASSERT_EQUAL_FATAL(kcast_featmodel_features_new(fm, &fs), KCAST_OK);
  double args[6] = {128, 1.5, 0.5, 0, 0, 0}, t;
  unsigned grid[3] = {8, 8, 1}, b16[3] = {16, 16, 1}, b8[3] = {8, 8, 1}, b12[3] = {12, 12, 1}, fl;
  fl = 99;
  CU_ASSERT_EQUAL(kcast_featmodel_fill_instance(fm, "gemm_tiled_kernel<16>", NULL, 0, grid, b16, 0,
                                                args, 6, fs, &fl), KCAST_OK);
  CU_ASSERT_FALSE(fl & KCAST_FEATMODEL_OTHER_BLOCK); /* the block it ran with */
  CU_ASSERT_EQUAL(kcast_featmodel_fill_instance(fm, "gemm_tiled_kernel<16>", NULL, 0, grid, b8, 0,
                                                args, 6, fs, &fl), KCAST_OK);
  CU_ASSERT(fl & KCAST_FEATMODEL_OTHER_BLOCK);       /* <16> launched with 8 x 8 */
  CU_ASSERT(fl & KCAST_FEATMODEL_EXTRAPOLATED);
  t = 12;                                            /* an instance nobody ran */
  unsigned g12[3] = {11, 11, 1};
  CU_ASSERT_EQUAL(kcast_featmodel_fill_instance(fm, NULL, &t, 1, g12, b12, 0, args, 6, fs, &fl),
                  KCAST_OK);
  CU_ASSERT_FALSE(fl & KCAST_FEATMODEL_OTHER_BLOCK); /* block = T0 x T0 x 1, as every instance */
  CU_ASSERT_EQUAL(kcast_featmodel_fill_instance(fm, NULL, &t, 1, g12, b16, 0, args, 6, fs, &fl),
                  KCAST_OK);
  CU_ASSERT(fl & KCAST_FEATMODEL_OTHER_BLOCK);       /* <12> with 16 x 16 breaks the rule */
  kcast_features_free(fs);
  kcast_featmodel_free(fm);
  /* the file keeps the instances: save(load(f)) == f, and info says so */
  fm_model *m = NULL;
  CU_ASSERT_EQUAL_FATAL(fm_load(kcf, &m), 0);
  fm_info in;
  fm_get_info(m, &in);
  CU_ASSERT(in.ninst >= 3);
  fm_free(m);
  char *out = NULL;
  snprintf(cmd, sizeof cmd, "'%s' featmodel info '%s'", tests_kcast(), kcf);
  CU_ASSERT_EQUAL(tests_run(cmd, &out, NULL), 0);
  CU_ASSERT_PTR_NOT_NULL(out && strstr(out, "each instance ran with one block"));
  free(out);
}

/* ------------------------------------------------- fuller polynomials -- */

/* Rows of a pivot-step kernel k(int n, int k): per size n (label), one
   launch per step k = 0 .. n-2, 1-D blocks of 32 over the n-k-1 trailing
   elements; class.fp32 = 2 (n-k-1)^2, class.int_arith = 11 (n-k-1)^2 + 5
   threads; and a count n^2 + 3n + 7 set by n alone (mem.global_bytes). */
typedef struct pivot_rows {
  fm_rows r;
  size_t n;
  uint32_t grid[3 * 512], block[3 * 512];
  uint64_t shmem[512];
  char label[512][8];
  const char *size[512];
  const char *names[6];
  double x[512 * 6];
} pivot_rows;

static void pivot_rows_make(pivot_rows *h, const unsigned *ns, size_t nn) {
  memset(h, 0, sizeof *h);
  static const char *const nm[6] = {"arg.0", "arg.1", "class.fp32", "class.int_arith",
                                    "mem.global_bytes", "launch.threads"};
  for (int j = 0; j < 6; j++) h->names[j] = nm[j];
  for (size_t s = 0; s < nn; s++)
    for (unsigned k = 0; k + 1 < ns[s] && h->n < 512; k++) {
      size_t i = h->n++;
      double d = ns[s] - k - 1, n = ns[s];
      unsigned ctas = (unsigned)((d + 31) / 32);
      h->grid[3 * i] = ctas, h->grid[3 * i + 1] = h->grid[3 * i + 2] = 1;
      h->block[3 * i] = 32, h->block[3 * i + 1] = h->block[3 * i + 2] = 1;
      snprintf(h->label[i], sizeof h->label[i], "%u", ns[s]);
      h->size[i] = h->label[i];
      double *x = h->x + i * 6;
      x[0] = n, x[1] = k, x[2] = 2 * d * d, x[3] = 11 * d * d + 5.0 * ctas * 32;
      x[4] = n * n + 3 * n + 7, x[5] = ctas * 32.0;
    }
  h->r.n = h->n;
  h->r.grid = h->grid;
  h->r.block = h->block;
  h->r.shmem = h->shmem;
  h->r.size = h->size;
  h->r.nf = 6;
  h->r.names = h->names;
  h->r.x = h->x;
}

static void test_difference_basis(void) {
  static pivot_rows h;
  static const unsigned three[] = {16, 32, 48}, six[] = {12, 16, 20, 24, 32, 40};
  pivot_rows_make(&h, three, 3);
  fm_model *m = NULL;
  CU_ASSERT_EQUAL_FATAL(fm_fit(&h.r, NULL, "_Z5pivotii", NULL, &m), 0);
  long f = out_index(m, "class.fp32"), ia = out_index(m, "class.int_arith"),
       gb = out_index(m, "mem.global_bytes");
  CU_ASSERT_FATAL(f >= 0 && ia >= 0 && gb >= 0);
  char form[512];
  fm_out_form(m, (size_t)ia, form, sizeof form);
  CU_ASSERT_PTR_NOT_NULL(strstr(form, "(arg.1-arg.0)^2"));  /* found over the difference */
  /* a size nobody ran: n = 64, step 10 */
  double args[2] = {64, 10}, out[32];
  fm_launch l = {{2, 1, 1}, {32, 1, 1}, 0, args, 2, NULL, 0};
  CU_ASSERT_FATAL(fm_nout(m) <= 32);
  CU_ASSERT_EQUAL(fm_eval(m, &l, out, NULL), 0);
  CU_ASSERT_DOUBLE_EQUAL(out[f], 2.0 * 53 * 53, 1e-6);         /* exact beyond the sizes */
  CU_ASSERT_DOUBLE_EQUAL(out[ia], 11.0 * 53 * 53 + 5 * 64, 1e-6);
  /* n^2 + 3n + 7 through three values of n is an interpolation: not exact */
  fm_out_form(m, (size_t)gb, form, sizeof form);
  CU_ASSERT_PTR_NULL(strstr(form, "exact: 7"));
  CU_ASSERT(fabs(out[gb] - (64.0 * 64 + 3 * 64 + 7)) > 1e-6 * 4295);
  fm_free(m);
  /* six values of n, three beyond the form's three terms, check it: exact */
  pivot_rows_make(&h, six, 6);
  CU_ASSERT_EQUAL_FATAL(fm_fit(&h.r, NULL, "_Z5pivotii", NULL, &m), 0);
  gb = out_index(m, "mem.global_bytes");
  CU_ASSERT_EQUAL(fm_eval(m, &l, out, NULL), 0);
  CU_ASSERT_DOUBLE_EQUAL(out[gb], 64.0 * 64 + 3 * 64 + 7, 1e-6);
  /* and the difference survives the file */
  char path[4300];
  snprintf(path, sizeof path, "%s/pivot.kcf", dir);
  CU_ASSERT_EQUAL(fm_save(m, path), 0);
  fm_model *m2 = NULL;
  CU_ASSERT_EQUAL_FATAL(fm_load(path, &m2), 0);
  double out2[32];
  CU_ASSERT_EQUAL(fm_eval(m2, &l, out2, NULL), 0);
  CU_ASSERT(!memcmp(out, out2, fm_nout(m) * sizeof *out));   /* the same answers */
  fm_free(m2);
  fm_free(m);
}

TEST_SUITES(register_featmodel) {
  CU_pSuite s = CU_add_suite("featmodel", suite_init, NULL);
  if (!s) return;
  TEST_ADD(s, test_exact_forms);
  TEST_ADD(s, test_validate);
  TEST_ADD(s, test_cli_fit_info);
  TEST_ADD(s, test_cli_predict);
  TEST_ADD(s, test_file_damage);
  TEST_ADD(s, test_api_fill);
  TEST_ADD(s, test_api_threads);
  TEST_ADD(s, test_emulator_args);
  TEST_ADD(s, test_template_names);
  TEST_ADD(s, test_template_cli);
  TEST_ADD(s, test_template_file);
  TEST_ADD(s, test_template_api);
  TEST_ADD(s, test_template_block);
  TEST_ADD(s, test_difference_basis);
}
