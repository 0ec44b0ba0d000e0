/*
 * api_bench.c -- what a scheduler pays for a prediction, measured through
 * the public API (include/kcast.h) only:
 *
 *   latency     kcast_predict (interval at coverage 0.9), 10,000 timed
 *               calls after 1,000 warm-up calls, for a 100-tree forest:
 *               (i) trained on the GPU Mangrove tutorial data (imported
 *               with `kcast dataset import-mangrove`, T4 times), when that
 *               data is beside the project; (ii) trained on a synthetic
 *               CSV of 10,000 rows x 30 features.  "cycled" calls walk
 *               through up to 1,000 different feature sets (a cold-ish
 *               path through the trees); "same row" repeats one set (the
 *               tree paths stay in cache).  p10 / median / p90 in us.
 *   batch       kcast_predict_batch over 10,000 sets, 1 and 2 OpenMP
 *               threads (the caller's team size, omp_set_num_threads),
 *               best of 3..30 runs (about a second), predictions per second.
 *   ptx         from a suite kernel's PTX to a prediction:
 *               kcast_features_from_ptx with CTA sampling (the library's
 *               default of 64 CTAs), then kcast_predict_analytic and, when
 *               a Mangrove model was trained, kcast_predict; median of 3
 *               runs per kernel, with the sampled and total CTA counts.
 *               The PTX comes from nvcc -ptx -arch=sm_90 (NVCC overrides
 *               the compiler); without nvcc this part is skipped.
 *   featmodel   the same launches without emulation: a feature model
 *               fitted by `kcast featmodel fit` on the suite dataset
 *               (datasets/data/suite-features.db), then
 *               kcast_featmodel_fill + kcast_predict_analytic (+
 *               kcast_predict with the Mangrove model), 10,000 timed calls
 *               on one thread after 1,000 warm-up calls: p10 / median /
 *               p90 in us beside the emulated path's total ms.
 *
 * Why here and not in rf_bench: rf_bench measures the forest (rf_*) against
 * its peers; this measures the library surface a scheduler links --
 * feature lookup by name, defaults for absent counts, intervals, the error
 * funnel -- including the emulation step that produces the features.
 *
 * The models are prepared by the CLI (`kcast train`), as a user would.
 * Timings are wall clock (CLOCK_MONOTONIC).  The whole run takes a few
 * seconds plus the PTX emulations.
 *
 * usage: api_bench BUILD_DIR [MANGROVE_DIR]   (run from the repository
 * root: the suite kernels are read from datasets/suite)
 */
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "kcast.h"

#define COVERAGE 0.9
#define LAT_CALLS 10000
#define LAT_WARMUP 1000
#define LAT_WARMUP_PASSES 10
#define MAX_SETS 1000
#define BATCH_N 10000
#define BATCH_REPS_MIN 3  /* runs per thread count: at least this many, */
#define BATCH_REPS_MAX 30 /* at most this many, */
#define BATCH_SECONDS 1.0 /* and more only while within this time */
#define PTX_RUNS 3
#define SYN_ROWS 10000
#define SYN_COLS 30

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* q-quantile of sorted v[0..n) (nearest rank). */
static double quantile(const double *v, size_t n, double q) {
  size_t k = (size_t)(q * (double)(n - 1) + 0.5);
  return v[k < n ? k : n - 1];
}

static int file_exists(const char *p) {
  struct stat st;
  return stat(p, &st) == 0;
}

/* Run a shell command quietly; its output goes to log.  0 on success. */
static int sh(const char *log, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int sh(const char *log, const char *fmt, ...) {
  char cmd[8192];
  va_list ap;
  va_start(ap, fmt);
  int w = vsnprintf(cmd, sizeof cmd - 64, fmt, ap);
  va_end(ap);
  if (w < 0 || (size_t)w >= sizeof cmd - 64) return -1;
  snprintf(cmd + w, sizeof cmd - (size_t)w, " >>'%s' 2>&1", log);
  return system(cmd);
}

/* ------------------------------------------------------- models -- */

/* Deterministic generator for the synthetic data (xorshift64*). */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static double rnd(void) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return (double)((rng_state * 0x2545F4914F6CDD1Dull) >> 11) * 0x1.0p-53;
}

/* Target of the synthetic rows: interactions, a power and noise. */
static double syn_target(const double *x) {
  return 1000 + x[0] * x[1] + 50 * x[2] + pow(x[3], 1.5) + 20 * (x[4] > 50) * x[5] +
         10 * rnd();
}

static int write_synthetic_csv(const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "api_bench: %s: %s\n", path, strerror(errno));
    return -1;
  }
  for (int j = 0; j < SYN_COLS; j++) fprintf(f, "x%02d,", j);
  fprintf(f, "y\n");
  double x[SYN_COLS];
  for (int i = 0; i < SYN_ROWS; i++) {
    for (int j = 0; j < SYN_COLS; j++) {
      x[j] = 100 * rnd();
      fprintf(f, "%.5f,", x[j]);
    }
    fprintf(f, "%.4f\n", syn_target(x));
  }
  return fclose(f) ? -1 : 0;
}

/* MAX_SETS fresh synthetic rows as feature sets (not training rows). */
static size_t synthetic_sets(kcast_features **sets) {
  size_t n = 0;
  for (; n < MAX_SETS; n++) {
    if (kcast_features_new(&sets[n])) break;
    for (int j = 0; j < SYN_COLS; j++) {
      char name[8];
      snprintf(name, sizeof name, "x%02d", j);
      kcast_features_set(sets[n], name, 100 * rnd());
    }
  }
  return n;
}

/* The stored launches 1, 2, ... of a dataset until one is missing. */
static size_t dataset_sets(const char *db, kcast_features **sets) {
  size_t n = 0;
  while (n < MAX_SETS && kcast_features_from_launch(db, (int64_t)n + 1, &sets[n]) == KCAST_OK) n++;
  return n;
}

static kcast_model *load(const char *path) {
  kcast_model *m = NULL;
  if (kcast_model_load(path, &m)) fprintf(stderr, "api_bench: %s\n", kcast_last_error());
  return m;
}

/* ------------------------------------------------------ latency -- */

typedef struct lat {
  double p10, p50, p90; /* us */
} lat;

/* LAT_CALLS timed kcast_predict calls; stride 1 cycles the sets, 0 repeats
   set 0.  -1 when a call fails.  The calls before them pass LAT_WARMUP_PASSES
   times over the sets (at least LAT_WARMUP calls): a forest loaded just now
   is not in the caches yet, and one pass over 1,000 sets of the 10,000 x 30
   forest (33 MB of nodes) left the first timed calls slow: their median
   swung 3.9-5.0 us from run to run, 3.6-3.9 us after ten passes. */
static int latency(const kcast_model *m, kcast_features *const *sets, size_t nsets, int stride,
                   lat *out) {
  static double t[LAT_CALLS];
  kcast_prediction p;
  double sink = 0;
  size_t warm = stride ? LAT_WARMUP_PASSES * nsets : 0;
  if (warm < LAT_WARMUP) warm = LAT_WARMUP;
  for (size_t i = 0; i < warm; i++) {
    if (kcast_predict(m, sets[(i * (size_t)stride) % nsets], COVERAGE, &p)) goto fail;
    sink += p.value;
  }
  for (size_t i = 0; i < LAT_CALLS; i++) {
    const kcast_features *fs = sets[(i * (size_t)stride) % nsets];
    double t0 = now_s();
    kcast_status st = kcast_predict(m, fs, COVERAGE, &p);
    t[i] = (now_s() - t0) * 1e6;
    if (st) goto fail;
    sink += p.value;
  }
  qsort(t, LAT_CALLS, sizeof t[0], cmp_double);
  out->p10 = quantile(t, LAT_CALLS, 0.10);
  out->p50 = quantile(t, LAT_CALLS, 0.50);
  out->p90 = quantile(t, LAT_CALLS, 0.90);
  return sink == sink ? 0 : -1;
fail:
  fprintf(stderr, "api_bench: kcast_predict: %s\n", kcast_last_error());
  return -1;
}

/* Best predictions/s of kcast_predict_batch with nthreads over a few runs
   (the best run is the least disturbed one on a shared machine). */
static double batch_rate(const kcast_model *m, kcast_features *const *sets, size_t nsets,
                         int nthreads) {
  const kcast_features **ptrs = malloc(BATCH_N * sizeof *ptrs);
  kcast_prediction *out = malloc(BATCH_N * sizeof *out);
  double best = 0;
  if (!ptrs || !out) goto done;
  for (size_t i = 0; i < BATCH_N; i++) ptrs[i] = sets[i % nsets];
  int before = omp_get_max_threads();
  omp_set_num_threads(nthreads);
  double t_end = now_s() + BATCH_SECONDS;
  for (int r = 0; r < BATCH_REPS_MAX && (r < BATCH_REPS_MIN || now_s() < t_end); r++) {
    double t0 = now_s();
    if (kcast_predict_batch(m, ptrs, BATCH_N, COVERAGE, out)) {
      fprintf(stderr, "api_bench: kcast_predict_batch: %s\n", kcast_last_error());
      best = 0;
      break;
    }
    double rate = BATCH_N / (now_s() - t0);
    if (rate > best) best = rate;
  }
  omp_set_num_threads(before);
done:
  free(ptrs);
  free(out);
  return best;
}

/* One model's rows of the latency and batch tables. */
static void bench_model(const char *label, const kcast_model *m, kcast_features *const *sets,
                        size_t nsets) {
  lat cyc, same;
  if (latency(m, sets, nsets, 1, &cyc) || latency(m, sets, nsets, 0, &same)) return;
  double b1 = batch_rate(m, sets, nsets, 1), b2 = batch_rate(m, sets, nsets, 2);
  printf("%-22s %5zu  %6.2f %6.2f %6.2f   %6.2f %6.2f %6.2f   %9.0f %9.0f  x%.2f\n", label, nsets,
         cyc.p10, cyc.p50, cyc.p90, same.p10, same.p50, same.p90, b1, b2, b1 > 0 ? b2 / b1 : 0);
}

/* ----------------------------------------------------------- ptx -- */

typedef struct kernel_case {
  const char *label;  /* table label */
  const char *source; /* suite program (datasets/suite/NAME.cu) */
  const char *kernel; /* .entry name */
  unsigned grid[3], block[3];
  kcast_arg args[6];
  size_t nargs;
  double argv[6];     /* the scalar arguments as numbers (feature model) */
  double emu_ms;      /* PTX to prediction, median (set by bench_ptx) */
  const char *fm_kernel; /* --kernel of the feature model fit (NULL: kernel);
                            a template's ("gemm_tiled_kernel<T>") */
  double targs[1];    /* the instance's template arguments, ntargs of them */
  size_t ntargs;
} kernel_case;

static char kcast_cli[4200]; /* the CLI that fits the feature models */

/* The feature-model path of one launch: fit K's model from the suite
   dataset (the CLI, as a user would), then, single thread and warm,
   FM_CALLS timed calls after FM_WARMUP of: kcast_featmodel_fill_instance
   alone (the template's instance by its arguments; kcast_featmodel_fill's
   path for a kernel that is not a template)
   (med[0]), fill + kcast_predict_analytic (med[1]) and, with m, fill +
   kcast_predict (med[2]); medians in us.  *pred_us the analytic time;
   -1 when no model can be fitted. */
#define FM_CALLS 10000
#define FM_WARMUP 1000
static int bench_featmodel(const char *work, const char *log, const kernel_case *k,
                           const kcast_model *m, const char *gpu, double med[3],
                           double *pred_us, unsigned *flags) {
  char kcf[8192];
  snprintf(kcf, sizeof kcf, "%s/%s.kcf", work, k->source);
  if (sh(log, "'%s' featmodel fit datasets/data/suite-features.db --kernel '%s' -o '%s'",
         kcast_cli, k->fm_kernel ? k->fm_kernel : k->kernel, kcf))
    return -1;
  kcast_featmodel *fm = NULL;
  kcast_features *fs = NULL;
  static double t[FM_CALLS];
  int rc = -1;
  if (kcast_featmodel_load(kcf, &fm) || kcast_featmodel_features_new(fm, &fs)) goto out;
  kcast_prediction pt, pf;
  med[2] = NAN;
  for (int mode = 0; mode < (m ? 3 : 2); mode++) {
    for (int i = 0; i < FM_WARMUP + FM_CALLS; i++) {
      double t0 = now_s();
      if (kcast_featmodel_fill_instance(fm, NULL, k->targs, k->ntargs, k->grid, k->block, 0,
                                        k->argv, k->nargs, fs, flags) ||
          (mode == 1 && kcast_predict_analytic(gpu, fs, &pt, NULL)) ||
          (mode == 2 && kcast_predict(m, fs, COVERAGE, &pf)))
        goto out;
      if (i >= FM_WARMUP) t[i - FM_WARMUP] = (now_s() - t0) * 1e6;
    }
    qsort(t, FM_CALLS, sizeof t[0], cmp_double);
    med[mode] = quantile(t, FM_CALLS, 0.50);
  }
  *pred_us = pt.value / 1e3;
  rc = 0;
out:
  if (rc && fm) fprintf(stderr, "api_bench: %s: %s\n", kcf, kcast_last_error());
  kcast_features_free(fs);
  kcast_featmodel_free(fm);
  return rc;
}

static uint64_t fbits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

static kcast_arg scalar(uint64_t bits) {
  kcast_arg a;
  memset(&a, 0, sizeof a);
  a.kind = KCAST_ARG_SCALAR;
  a.bits = bits;
  return a;
}

static kcast_arg buffer(uint64_t bytes, kcast_fill fill) {
  kcast_arg a;
  memset(&a, 0, sizeof a);
  a.kind = KCAST_ARG_BUFFER;
  a.bytes = bytes;
  a.fill = fill;
  a.seed = 7;
  return a;
}

static void bench_ptx(const char *work, const kcast_model *m, const char *log) {
  const char *nvcc = getenv("NVCC");
  if (!nvcc || !*nvcc) nvcc = "nvcc";
  enum { TRIAD_N = 8388608, GEMM_N = 1024 };
  kernel_case cases[3];
  memset(cases, 0, sizeof cases);
  cases[0] = (kernel_case){"triad n=8M", "triad", "triad", {TRIAD_N / 256, 1, 1}, {256, 1, 1},
                           {{0}}, 5, {0}, 0, NULL, {0}, 0};
  cases[0].args[0] = buffer((uint64_t)TRIAD_N * 4, KCAST_FILL_ZERO);
  cases[0].args[1] = buffer((uint64_t)TRIAD_N * 4, KCAST_FILL_RANDF);
  cases[0].args[2] = buffer((uint64_t)TRIAD_N * 4, KCAST_FILL_RANDF);
  cases[0].args[3] = scalar(fbits(3.0f));
  cases[0].args[4] = scalar(TRIAD_N);
  cases[1] = (kernel_case){"gemm_tiled n=1024 t16", "gemm_tiled",
                           "_Z17gemm_tiled_kernelILi16EEviffPKfS1_Pf",
                           {GEMM_N / 16, GEMM_N / 16, 1}, {16, 16, 1}, {{0}}, 6, {0}, 0,
                           "gemm_tiled_kernel<T>", {16}, 1};
  cases[1].args[0] = scalar(GEMM_N);
  cases[1].args[1] = scalar(fbits(1.5f));
  cases[1].args[2] = scalar(fbits(0.5f));
  cases[1].args[3] = buffer((uint64_t)GEMM_N * GEMM_N * 4, KCAST_FILL_RANDF);
  cases[1].args[4] = buffer((uint64_t)GEMM_N * GEMM_N * 4, KCAST_FILL_RANDF);
  cases[1].args[5] = buffer((uint64_t)GEMM_N * GEMM_N * 4, KCAST_FILL_RANDF);
  enum { ST_N = 2048 };
  cases[2] = (kernel_case){"stencil2d n=2048 b16", "stencil2d", "_Z16stencil2d_kerneliPKfPf",
                           {ST_N / 16, ST_N / 16, 1}, {16, 16, 1}, {{0}}, 3, {0}, 0, NULL, {0},
                           0};
  cases[2].args[0] = scalar(ST_N);
  cases[2].args[1] = buffer((uint64_t)ST_N * ST_N * 4, KCAST_FILL_RANDF);
  cases[2].args[2] = buffer((uint64_t)ST_N * ST_N * 4, KCAST_FILL_ZERO);
  cases[0].kernel = "_Z5triadPfPKfS1_fi";
  cases[0].argv[3] = 3.0, cases[0].argv[4] = TRIAD_N;
  cases[1].argv[0] = GEMM_N, cases[1].argv[1] = 1.5, cases[1].argv[2] = 0.5;
  cases[2].argv[0] = ST_N;

  const char *gpu = m && *kcast_model_gpu(m) ? kcast_model_gpu(m) : "H200";
  printf("\nfrom PTX to a prediction (median of %d runs; analytic on %s%s)\n", PTX_RUNS, gpu,
         m ? ", forest: the Mangrove time model" : ", no forest: Mangrove data absent");
  printf("%-22s %12s %11s %11s %9s %8s  %s\n", "kernel", "sampled/ctas", "features_ms",
         "analytic_us", "forest_us", "total_ms", "predicted time us (analytic, forest)");
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    kernel_case *k = &cases[c];
    char ptx[8192];
    snprintf(ptx, sizeof ptx, "%s/%s.ptx", work, k->source);
    if (sh(log, "%s -ptx -arch=sm_90 -o '%s' datasets/suite/%s.cu", nvcc, ptx, k->source)) {
      printf("%-22s skipped: %s -ptx failed or is not installed (see %s)\n", k->label, nvcc, log);
      continue;
    }
    kcast_launch_config cfg = KCAST_LAUNCH_CONFIG_INIT;
    memcpy(cfg.grid, k->grid, sizeof cfg.grid);
    memcpy(cfg.block, k->block, sizeof cfg.block);
    cfg.args = k->args;
    cfg.nargs = k->nargs;
    double tf[PTX_RUNS], ta[PTX_RUNS], tp[PTX_RUNS], tt[PTX_RUNS], ctas = 0, an = NAN, rf = NAN;
    int ok = 1;
    for (int r = 0; r < PTX_RUNS && ok; r++) {
      kcast_features *fs = NULL;
      kcast_prediction pt, pf;
      double t0 = now_s();
      ok = kcast_features_from_ptx(ptx, k->kernel, &cfg, &fs) == KCAST_OK;
      double t1 = now_s();
      ok = ok && kcast_predict_analytic(gpu, fs, &pt, NULL) == KCAST_OK;
      double t2 = now_s();
      ok = ok && (!m || kcast_predict(m, fs, COVERAGE, &pf) == KCAST_OK);
      double t3 = now_s();
      if (!ok) fprintf(stderr, "api_bench: %s: %s\n", k->label, kcast_last_error());
      if (ok) kcast_features_get(fs, "launch.ctas", &ctas);
      if (ok) an = pt.value;
      if (ok && m) rf = pf.value;
      kcast_features_free(fs);
      tf[r] = (t1 - t0) * 1e3;
      ta[r] = (t2 - t1) * 1e6;
      tp[r] = (t3 - t2) * 1e6;
      tt[r] = (t3 - t0) * 1e3;
    }
    if (!ok) {
      printf("%-22s failed (see above)\n", k->label);
      continue;
    }
    qsort(tf, PTX_RUNS, sizeof tf[0], cmp_double);
    qsort(ta, PTX_RUNS, sizeof ta[0], cmp_double);
    qsort(tp, PTX_RUNS, sizeof tp[0], cmp_double);
    qsort(tt, PTX_RUNS, sizeof tt[0], cmp_double);
    /* The library samples 64 CTAs by default (kcast.h), all when fewer. */
    double sampled = ctas > 64 ? 64 : ctas;
    char sc[32];
    snprintf(sc, sizeof sc, "%.0f/%.0f", sampled, ctas);
    printf("%-22s %12s %11.1f %11.1f %9.1f %8.1f  %.1f, %.1f\n", k->label, sc, tf[PTX_RUNS / 2],
           ta[PTX_RUNS / 2], m ? tp[PTX_RUNS / 2] : 0.0, tt[PTX_RUNS / 2], an / 1e3, rf / 1e3);
    k->emu_ms = tt[PTX_RUNS / 2];
  }
  printf("\nthe same launches from a feature model (kcast featmodel fit on the suite dataset),\n"
         "median us of %d calls after %d, one thread: kcast_featmodel_fill alone, + the\n"
         "analytic estimate, + kcast_predict%s; emulated: PTX to prediction above\n",
         FM_CALLS, FM_WARMUP, m ? " (the Mangrove forest)" : " (no forest)");
  printf("%-22s %8s %10s %9s %12s %10s  %s\n", "kernel", "fill", "+analytic", "+forest",
         "emulated_ms", "emu/fm", "analytic time us (flags)");
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    kernel_case *k = &cases[c];
    double med[3], pu;
    unsigned fl = 0;
    if (bench_featmodel(work, log, k, m, gpu, med, &pu, &fl)) {
      printf("%-22s no feature model: the dataset holds fewer than 2 configurations of it\n",
             k->label);
      continue;
    }
    double best = m ? med[2] : med[1];
    printf("%-22s %8.2f %10.2f %9.2f %12.1f %10.0f  %.1f%s%s\n", k->label, med[0], med[1],
           m ? med[2] : 0.0, k->emu_ms, k->emu_ms > 0 ? k->emu_ms * 1e3 / best : 0.0, pu,
           fl & KCAST_FEATMODEL_EXTRAPOLATED ? " extrapolated" : "",
           fl & KCAST_FEATMODEL_UNRELIABLE ? " unreliable" : "");
  }
}

/* ---------------------------------------------------------- main -- */

/* Operator launches: from a description to a prediction.  The operator
   model of `make models` (BUILD/models/operators-time.kcm) when it was
   made, else the analytic estimate; descriptions of several operators
   cycled, each call building its feature set (kcast_features_from_op),
   predicting on a GPU the model has not seen and freeing the set. */
#define OP_CALLS 20000
static void bench_op(const char *build) {
  static const char *const desc[] = {
    "bmm B=8 M=512 N=512 K=64", "linear B=1 M=128 N=1024 K=4096", "softmax B=4096 H=1024",
    "ln B=2048 H=768", "gelu B=1024 H=4096", "add B=64 H=65536",
    "conv B=32 Cin=64 Cout=128 Kernel=3 Size=56 Stride=1 Padding=1",
    "bmm B=16 M=1024 N=64 K=1024 kernel=ampere_sgemm_128x64_nn grid=8,16,16 block=128"};
  const size_t nd = sizeof desc / sizeof *desc;
  char path[4200];
  snprintf(path, sizeof path, "%s/models/operators-time.kcm", build);
  kcast_model *m = file_exists(path) ? load(path) : NULL;
  printf("\noperator launches (%s; median over %d calls, descriptions of %zu operators cycled, "
         "H100: a GPU it has not seen), us\n", m ? path : "no operator model: make models",
         OP_CALLS, nd);
  static double t_f[OP_CALLS], t_p[OP_CALLS], t_a[OP_CALLS];
  int ok = 1;
  for (int i = 0; i < OP_CALLS && ok; i++) {
    kcast_features *fs = NULL;
    kcast_prediction pr, an;
    double t0 = now_s();
    ok = kcast_features_from_op(desc[i % nd], NULL, 0, &fs) == KCAST_OK;
    double t1 = now_s();
    ok = ok && (!m || kcast_predict_gpu(m, "H100", fs, 0.9, &pr) == KCAST_OK);
    double t2 = now_s();
    ok = ok && kcast_predict_analytic("H100", fs, &an, NULL) == KCAST_OK;
    double t3 = now_s();
    kcast_features_free(fs);
    t_f[i] = (t1 - t0) * 1e6;
    t_p[i] = (t2 - t1) * 1e6 + t_f[i];
    t_a[i] = (t3 - t2) * 1e6 + t_f[i];
  }
  if (!ok) {
    printf("  failed: %s\n", kcast_last_error());
  } else {
    qsort(t_f, OP_CALLS, sizeof *t_f, cmp_double);
    qsort(t_p, OP_CALLS, sizeof *t_p, cmp_double);
    qsort(t_a, OP_CALLS, sizeof *t_a, cmp_double);
    printf("  kcast_features_from_op          %6.2f\n", quantile(t_f, OP_CALLS, 0.5));
    printf("  + the analytic estimate         %6.2f\n", quantile(t_a, OP_CALLS, 0.5));
    if (m)
      printf("  + the forest (kcast_predict_gpu) %6.2f  (p90 %.2f)\n", quantile(t_p, OP_CALLS, 0.5),
             quantile(t_p, OP_CALLS, 0.9));
  }
  kcast_model_free(m);
}

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: api_bench BUILD_DIR [MANGROVE_DIR]\n");
    return 2;
  }
  if (KCAST_CHECK_VERSION()) {
    fprintf(stderr, "api_bench: %s\n", kcast_last_error());
    return 1;
  }
  const char *build = argv[1], *mangrove = argc > 2 ? argv[2] : "";
  char work[4096], log[4200], kcast[4200], csv[4200], syn[4200], db[4200], mkcm[4200];
  snprintf(work, sizeof work, "%s/bench/api", build);
  snprintf(kcast, sizeof kcast, "%s/kcast", build);
  snprintf(kcast_cli, sizeof kcast_cli, "%s", kcast);
  snprintf(log, sizeof log, "%s/prep.log", work);
  snprintf(csv, sizeof csv, "%s/synthetic.csv", work);
  snprintf(syn, sizeof syn, "%s/synthetic.kcm", work);
  snprintf(db, sizeof db, "%s/mangrove-T4.db", work);
  snprintf(mkcm, sizeof mkcm, "%s/mangrove-T4-time.kcm", work);
  char mk[8400];
  snprintf(mk, sizeof mk, "mkdir -p '%s' && rm -f '%s'", work, log);
  if (system(mk)) {
    fprintf(stderr, "api_bench: cannot create %s\n", work);
    return 1;
  }
  double t_start = now_s();

  /* Models, through the CLI. */
  if (write_synthetic_csv(csv) ||
      sh(log, "'%s' train --csv '%s' --target y --trees 100 -o '%s'", kcast, csv, syn)) {
    fprintf(stderr, "api_bench: training the synthetic model failed (see %s)\n", log);
    return 1;
  }
  char flux[4200], tdb[4200];
  snprintf(flux, sizeof flux, "%s/cuda_flux_metrics.db", mangrove);
  snprintf(tdb, sizeof tdb, "%s/kernel_time_T4.db", mangrove);
  int have_mangrove = *mangrove && file_exists(flux) && file_exists(tdb);
  if (have_mangrove) {
    remove(db);
    if (sh(log, "'%s' dataset import-mangrove --features '%s' --time '%s' --gpu T4 -o '%s'",
           kcast, flux, tdb, db) ||
        sh(log,
           "'%s' train '%s' --gpu T4 --target time --trees 100 --log-target --extra-trees "
           "--min-leaf 1 --features launch,class -o '%s'",
           kcast, db, mkcm)) {
      fprintf(stderr, "api_bench: preparing the Mangrove model failed (see %s)\n", log);
      have_mangrove = 0;
    }
  }

  printf("kcast API benchmark (libkcast %s, %d processors)\n", kcast_version(),
         omp_get_num_procs());
  printf("kcast_predict latency in us (p10 median p90, %d calls, coverage %.1f); "
         "kcast_predict_batch of %d sets in predictions/s\n",
         LAT_CALLS, COVERAGE, BATCH_N);
  printf("%-22s %5s  %-20s   %-20s   %9s %9s  %s\n", "model (100 trees)", "sets",
         "cycled sets", "same set", "batch 1t", "batch 2t", "2t/1t");

  static kcast_features *sets[MAX_SETS];
  kcast_model *mm = NULL;
  if (have_mangrove && (mm = load(mkcm))) {
    size_t n = dataset_sets(db, sets);
    if (n) bench_model("Mangrove T4 time", mm, sets, n);
    else fprintf(stderr, "api_bench: %s: no launches read\n", db);
    for (size_t i = 0; i < n; i++) kcast_features_free(sets[i]);
  } else if (!have_mangrove) {
    printf("%-22s skipped: %s has no GPU Mangrove tutorial data\n", "Mangrove T4 time",
           *mangrove ? mangrove : "(no folder given)");
  }
  kcast_model *sm = load(syn);
  if (sm) {
    size_t n = synthetic_sets(sets);
    bench_model("synthetic 10000x30", sm, sets, n);
    for (size_t i = 0; i < n; i++) kcast_features_free(sets[i]);
  }
  kcast_model_free(sm);

  bench_ptx(work, mm, log);
  kcast_model_free(mm);
  bench_op(build);
  printf("\napi bench: %.1f s\n", now_s() - t_start);
  return 0;
}
