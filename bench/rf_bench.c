/*
 * rf_bench.c -- the forest's side of the peer benchmarks (make bench,
 * driven by bench/rf_bench.sh) and its scaling table.
 *
 * Why a shared binary format: scikit-learn (numpy.fromfile) and ranger
 * (readBin) must see exactly the rows, targets and CV folds kcast sees, and
 * parsing a 200,000 x 100 CSV would cost the peers more than training.  So
 * `prep` writes every dataset once as
 *
 *   NAME.bin    i64 n, i64 p, f64 x[n*p] (row-major), f64 y[n]   (little-endian)
 *   NAME.folds  i32 fold[n] in 0..4 (seeded shuffle, the same for all peers)
 *
 * and every peer reads those.  Timings are wall-clock (CLOCK_MONOTONIC).
 * Before its timed trainings kcast trains a 2-tree forest on the first
 * rows (warm_up): the first OpenMP region of a process starts the thread
 * team, 8-9 ms on the 2-core VM the figures come from (0.03 ms with
 * OMP_WAIT_POLICY=passive), which landed in the first timed training (the
 * random forest's) only; the peers' figures likewise leave out loading
 * their libraries.
 *
 * Usage:
 *   rf_bench prep OUTDIR DEDISP_DIR|- [--quick]
 *   rf_bench run OUTDIR NAME [--quick]      TSV result lines on stdout
 *   rf_bench scale OUTDIR [--quick]         scaling TSV lines on stdout
 *   rf_bench one OUTDIR ROWS TREES RF|ET DEPTH   one timed training (tuning)
 *   rf_bench prep-scale OUTDIR ROWS         only the scaling set, ROWS rows
 *                                           (one on 1,000,000 rows: n log n)
 *
 * Result line (tab separated; what rf_bench.sh prints as the table):
 *   R  dataset  peer  method  train_s  cv_median_ape  cv_mape  latency_us  rows_per_s
 * kcast adds a tenth column, the latency with the forest hot in cache.
 *
 * Latency is the median of single-row rf_predict calls cycling through
 * 1,000 rows (the forest mostly outside L1/L2, as for occasional calls
 * in between other work); the hot figure repeats one row, so its path
 * stays cached and the branch history learns it.  RFB_HOT=1 puts the hot
 * figure in column 8 too.
 * Scaling line:  S  peer  method  rows  trees  train_s
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/model.h"

#define FOLDS 5
#define LATENCY_CALLS 10000

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void die(const char *what) {
  fprintf(stderr, "rf_bench: %s\n", what);
  exit(1);
}

static void die_rf(const char *what) {
  fprintf(stderr, "rf_bench: %s: %s\n", what, rf_last_error());
  exit(1);
}

/* splitmix64: the synthetic data and folds are a pure function of seeds. */
static uint64_t sm_state;
static uint64_t sm_next(void) {
  uint64_t z = (sm_state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
static double sm_unit(void) { return (double)(sm_next() >> 11) * 0x1.0p-53; }

/* ------------------------------------------------------------------ files -- */

static void write_bin(const char *dir, const char *name, const rf_data *d) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s.bin", dir, name);
  FILE *f = fopen(path, "wb");
  if (!f) die("cannot write a dataset file");
  int64_t n = (int64_t)d->n_rows, p = (int64_t)d->n_cols;
  fwrite(&n, 8, 1, f);
  fwrite(&p, 8, 1, f);
  double *row = malloc((size_t)p * sizeof *row);
  for (size_t i = 0; i < d->n_rows; i++) {
    for (size_t j = 0; j < d->n_cols; j++) row[j] = d->x[j * d->n_rows + i];
    fwrite(row, 8, (size_t)p, f);
  }
  fwrite(d->y, 8, d->n_rows, f);
  free(row);
  /* folds: a seeded shuffle dealt round-robin */
  uint32_t *perm = malloc(d->n_rows * sizeof *perm);
  int32_t *fold = malloc(d->n_rows * sizeof *fold);
  for (size_t i = 0; i < d->n_rows; i++) perm[i] = (uint32_t)i;
  sm_state = 0xf01d5ULL;
  for (size_t i = d->n_rows - 1; i > 0; i--) {
    size_t k = (size_t)(sm_next() % (i + 1));
    uint32_t t = perm[i];
    perm[i] = perm[k];
    perm[k] = t;
  }
  for (size_t i = 0; i < d->n_rows; i++) fold[perm[i]] = (int32_t)(i % FOLDS);
  if (fclose(f)) die("write failed");
  snprintf(path, sizeof path, "%s/%s.folds", dir, name);
  f = fopen(path, "wb");
  if (!f) die("cannot write a folds file");
  fwrite(fold, 4, d->n_rows, f);
  if (fclose(f)) die("write failed");
  free(perm);
  free(fold);
}

static void read_bin(const char *dir, const char *name, rf_data *d, int32_t **fold) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s.bin", dir, name);
  FILE *f = fopen(path, "rb");
  if (!f) die("dataset file missing (run prep first)");
  int64_t n = 0, p = 0;
  if (fread(&n, 8, 1, f) != 1 || fread(&p, 8, 1, f) != 1 || n < 2 || p < 1) die("bad dataset file");
  if (rf_data_alloc(d, (size_t)n, (size_t)p, 1)) die_rf("alloc");
  double *row = malloc((size_t)p * sizeof *row);
  for (int64_t i = 0; i < n; i++) {
    if (fread(row, 8, (size_t)p, f) != (size_t)p) die("short dataset file");
    for (int64_t j = 0; j < p; j++) d->x[j * n + i] = row[j];
  }
  if (fread(d->y, 8, (size_t)n, f) != (size_t)n) die("short dataset file");
  fclose(f);
  free(row);
  for (int64_t j = 0; j < p; j++) {
    char nm[32];
    snprintf(nm, sizeof nm, "x%lld", (long long)j);
    d->names[j] = strdup(nm);
  }
  d->target = strdup("y");
  *fold = malloc((size_t)n * sizeof **fold);
  snprintf(path, sizeof path, "%s/%s.folds", dir, name);
  f = fopen(path, "rb");
  if (!f || fread(*fold, 4, (size_t)n, f) != (size_t)n) die("folds file missing or short");
  fclose(f);
}

/*
 * Synthetic regression: features uniform on a 1/1024 grid (exact in float
 * and double), a positive target from 6 of them plus noise; the other
 * features carry nothing.
 */
static void make_synth(rf_data *d, size_t n, size_t p) {
  if (rf_data_alloc(d, n, p, 1)) die_rf("alloc");
  sm_state = 20240601ULL;
  for (size_t i = 0; i < n; i++) {
    for (size_t j = 0; j < p; j++) d->x[j * n + i] = (double)(sm_next() >> 54) / 1024.0;
    const double *x = d->x;
    double x0 = x[i], x1 = x[n + i], x2 = x[2 * n + i], x3 = x[3 * n + i], x4 = x[4 * n + i],
           x5 = x[5 * n + i];
    d->y[i] = 10 + 8 * x0 * x1 + 5 * sin(6.283185307179586 * x2) + 4 * x3 * x3 + 2 * x4 +
              3 * (x5 > 0.5) + (sm_unit() - 0.5);
  }
}

/* Sizes: the peers train 100 trees on every dataset and again in 5-fold
   CV, so the synthetic sets are what decide how long `make bench` takes
   (scikit-learn alone took over 40 minutes on 200,000 x 100 rows and its
   50,000-row CV; at 20,000 and 10,000 rows scikit-learn and ranger took
   3.5 and 4 minutes).  Every peer gets the same smaller sets: SYNTH_ROWS
   for the timed training, latency and batch figures (about the size of
   the dedispersion sets), SYNTH_CV_ROWS for CV, and SYNTH_SCALE_ROWS
   only for the scaling table (first rows of it; the peers' points are
   the small ones). */
#define SYNTH_ROWS 10000
#define SYNTH_CV_ROWS 5000
#define SYNTH_SCALE_ROWS 100000

static void prep_synth(const char *out, const char *name, size_t n) {
  rf_data d = {0};
  make_synth(&d, n, 100);
  write_bin(out, name, &d);
  rf_data_free(&d);
}

static int cmd_prep(const char *out, const char *dd, int quick) {
  rf_data d = {0};
  /* each set is the first rows of the same seeded stream */
  prep_synth(out, "synth", quick ? SYNTH_ROWS / 2 : SYNTH_ROWS);
  prep_synth(out, "synth_cv", quick ? SYNTH_CV_ROWS / 2 : SYNTH_CV_ROWS);
  prep_synth(out, "synth_scale", quick ? SYNTH_SCALE_ROWS / 2 : SYNTH_SCALE_ROWS);
  printf("synth synth_cv synth_scale");
  static const char *gpus[] = {"A100", "A4000", "A6000"};
  for (int g = 0; dd && strcmp(dd, "-") && g < 3; g++) {
    char path[1024], nm[64];
    snprintf(path, sizeof path, "%s/%s.csv", dd, gpus[g]);
    rf_csv_opts o = {.size = sizeof o, .target = "time_ms_median", .ignore = "time_ms_mean,repeats"};
    if (rf_data_load_csv(&d, path, &o)) {
      fprintf(stderr, "rf_bench: skipping dedispersion %s: %s\n", gpus[g], rf_last_error());
      continue;
    }
    snprintf(nm, sizeof nm, "dedisp_%s", gpus[g]);
    write_bin(out, nm, &d);
    rf_data_free(&d);
    printf(" %s", nm);
  }
  printf("\n");
  return 0;
}

/* The scaling set alone with more rows than prep writes (its first rows
   are prep's: the same seeded stream), for `one` at 1,000,000 rows. */
static int cmd_prep_scale(const char *out, size_t rows) {
  if (rows < 2) die("prep-scale: ROWS must be at least 2");
  prep_synth(out, "synth_scale", rows);
  return 0;
}

/* ---------------------------------------------------------------- kcast -- */

static rf_params bench_params(int extra, unsigned trees) {
  rf_params p;
  rf_params_default(&p);
  p.n_trees = trees;
  p.extra_trees = extra;
  p.max_features = extra ? 1.0 : 1.0 / 3.0;
  p.min_leaf = 5;
  p.transform = RF_TRANSFORM_LOG;
  p.seed = 1;
  p.n_threads = 2;
  p.created = 1;
  return p;
}

static void subset(const rf_data *d, const int32_t *fold, int k, int keep_eq, rf_data *o) {
  size_t m = 0, n = d->n_rows;
  for (size_t i = 0; i < n; i++) m += (fold[i] == k) == keep_eq;
  if (rf_data_alloc(o, m, d->n_cols, 1)) die_rf("alloc");
  for (size_t j = 0; j < d->n_cols; j++) o->names[j] = strdup(d->names[j]);
  o->target = strdup("y");
  size_t r = 0;
  for (size_t i = 0; i < n; i++) {
    if ((fold[i] == k) != keep_eq) continue;
    for (size_t j = 0; j < d->n_cols; j++) o->x[j * m + r] = d->x[j * n + i];
    o->y[r++] = d->y[i];
  }
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median single-row latency over LATENCY_CALLS calls, cycling through
   1,000 rows of d (hot: repeating one row). */
static double latency_us(const rf_forest *f, const rf_data *d, int hot) {
  size_t p = d->n_cols, n = d->n_rows, rows = n < 1000 ? n : 1000;
  if (hot) rows = 1;
  double *r = malloc(rows * p * sizeof *r), *t = malloc(LATENCY_CALLS * sizeof *t);
  for (size_t i = 0; i < rows; i++)
    for (size_t j = 0; j < p; j++) r[i * p + j] = d->x[j * n + i * (n / rows)];
  volatile double sink = 0;
  for (int c = 0; c < 1000; c++) sink += rf_predict(f, r + (size_t)(c % (int)rows) * p);
  for (int c = 0; c < LATENCY_CALLS; c++) {
    const double *row = r + (size_t)c % rows * p;
    double t0 = now_s();
    sink += rf_predict(f, row);
    t[c] = now_s() - t0;
  }
  (void)sink;
  qsort(t, LATENCY_CALLS, sizeof *t, cmp_d);
  double med = t[LATENCY_CALLS / 2] * 1e6;
  free(r);
  free(t);
  return med;
}

static void run_one(const char *name, const rf_data *d, const rf_data *cvd, const int32_t *fold,
                    int extra) {
  rf_params p = bench_params(extra, 100);
  rf_forest *f = NULL;
  double t0 = now_s();
  if (rf_train(d, &p, &f)) die_rf("train");
  double train = now_s() - t0;
  double hot = latency_us(f, d, 1), lat = getenv("RFB_HOT") ? hot : latency_us(f, d, 0);
  double *pred = malloc(d->n_rows * sizeof *pred);
  t0 = now_s();
  if (rf_predict_batch(f, d, 0.9, pred, NULL, NULL, 2)) die_rf("predict");
  double rps = (double)d->n_rows / (now_s() - t0);
  free(pred);
  rf_free(f);
  /* CV on the fold file */
  double *cvp = malloc(cvd->n_rows * sizeof *cvp);
  for (int k = 0; k < FOLDS; k++) {
    rf_data tr = {0}, te = {0};
    subset(cvd, fold, k, 0, &tr);
    subset(cvd, fold, k, 1, &te);
    if (rf_train(&tr, &p, &f)) die_rf("cv train");
    double *pp = malloc(te.n_rows * sizeof *pp);
    if (rf_predict_batch(f, &te, 0.9, pp, NULL, NULL, 2)) die_rf("cv predict");
    size_t r = 0;
    for (size_t i = 0; i < cvd->n_rows; i++)
      if (fold[i] == k) cvp[i] = pp[r++];
    free(pp);
    rf_free(f);
    rf_data_free(&tr);
    rf_data_free(&te);
  }
  rf_metrics m;
  rf_metrics_compute(cvd->y, cvp, NULL, NULL, cvd->n_rows, &m);
  free(cvp);
  printf("R\t%s\tkcast\t%s\t%.3f\t%.2f\t%.2f\t%.2f\t%.0f\t%.2f\n", name, extra ? "ET" : "RF", train,
         m.median_ape, m.mape, lat, rps, hot);
  fflush(stdout);
}

/* A 2-tree forest on at most 256 rows of d, so that the OpenMP team is
   running before anything is timed (header comment). */
static void warm_up(const rf_data *d) {
  size_t rows = d->n_rows < 256 ? d->n_rows : 256;
  rf_data s = {0};
  if (rf_data_alloc(&s, rows, d->n_cols, 1)) die_rf("alloc");
  for (size_t j = 0; j < d->n_cols; j++) {
    memcpy(s.x + j * rows, d->x + j * d->n_rows, rows * sizeof(double));
    s.names[j] = strdup(d->names[j]);
  }
  memcpy(s.y, d->y, rows * sizeof(double));
  s.target = strdup("y");
  rf_params p = bench_params(0, 2);
  rf_forest *f = NULL;
  if (rf_train(&s, &p, &f)) die_rf("warm-up train");
  rf_free(f);
  rf_data_free(&s);
}

static int cmd_run(const char *dir, const char *name, int quick) {
  rf_data d = {0}, cvd = {0};
  int32_t *fold = NULL, *cvfold = NULL;
  read_bin(dir, name, &d, &fold);
  const rf_data *cv = &d;
  const int32_t *cf = fold;
  if (!strcmp(name, "synth")) {
    read_bin(dir, "synth_cv", &cvd, &cvfold);
    cv = &cvd;
    cf = cvfold;
  }
  (void)quick;
  warm_up(&d);
  for (int extra = 0; extra <= 1; extra++) run_one(name, &d, cv, cf, extra);
  rf_data_free(&d);
  rf_data_free(&cvd);
  free(fold);
  free(cvfold);
  return 0;
}

/* The scaling points: the peers' (sklearn_bench.py trains the same ones)
   and kcast's own larger ones at 25 trees up to the full scaling set, for
   the n log n check.  Quick halves the rows. */
static const struct { size_t rows; unsigned trees; } SCALE_POINTS[] = {
    {5000, 100}, {10000, 100}, {10000, 25}, {25000, 25}, {50000, 25}, {100000, 25}};

static int cmd_scale(const char *dir, int quick) {
  rf_data d = {0};
  int32_t *fold = NULL;
  read_bin(dir, "synth_scale", &d, &fold);
  warm_up(&d);
  for (int extra = 0; extra <= 1; extra++)
    for (size_t a = 0; a < sizeof SCALE_POINTS / sizeof SCALE_POINTS[0]; a++) {
      size_t rows = quick ? SCALE_POINTS[a].rows / 2 : SCALE_POINTS[a].rows;
      if (rows > d.n_rows) continue;
      rf_data s = {0};
      if (rf_data_alloc(&s, rows, d.n_cols, 1)) die_rf("alloc");
      for (size_t j = 0; j < d.n_cols; j++) {
        memcpy(s.x + j * rows, d.x + j * d.n_rows, rows * sizeof(double));
        s.names[j] = strdup(d.names[j]);
      }
      memcpy(s.y, d.y, rows * sizeof(double));
      s.target = strdup("y");
      rf_params p = bench_params(extra, SCALE_POINTS[a].trees);
      rf_forest *f = NULL;
      double t0 = now_s();
      if (rf_train(&s, &p, &f)) die_rf("train");
      printf("S\tkcast\t%s\t%zu\t%u\t%.3f\n", extra ? "ET" : "RF", rows, p.n_trees, now_s() - t0);
      fflush(stdout);
      rf_free(f);
      rf_data_free(&s);
    }
  rf_data_free(&d);
  free(fold);
  return 0;
}

/* One training on the first ROWS synthetic rows, with the latency and the
   batch rate of the model (for before/after measurements of a change). */
static int cmd_one(const char *dir, size_t rows, unsigned trees, int extra, unsigned depth) {
  rf_data d = {0}, s = {0};
  int32_t *fold = NULL;
  read_bin(dir, "synth_scale", &d, &fold);
  if (rows > d.n_rows) rows = d.n_rows;
  if (rf_data_alloc(&s, rows, d.n_cols, 1)) die_rf("alloc");
  for (size_t j = 0; j < d.n_cols; j++) {
    memcpy(s.x + j * rows, d.x + j * d.n_rows, rows * sizeof(double));
    s.names[j] = strdup(d.names[j]);
  }
  memcpy(s.y, d.y, rows * sizeof(double));
  s.target = strdup("y");
  warm_up(&s);
  rf_params p = bench_params(extra, trees);
  p.max_depth = depth;
  rf_forest *f = NULL;
  double t0 = now_s();
  clock_t c0 = clock();
  if (rf_train(&s, &p, &f)) die_rf("train");
  double tt = now_s() - t0, cpu = (double)(clock() - c0) / CLOCKS_PER_SEC;
  const rf_info *in = rf_get_info(f);
  /* batch rows/s over the training rows, best of 3, 1 and 2 threads */
  double bps[2] = {0, 0}, *pred = malloc(rows * sizeof *pred);
  for (int th = 1; th <= 2; th++)
    for (int rep = 0; rep < 3; rep++) {
      double b0 = now_s();
      if (rf_predict_batch(f, &s, 0.9, pred, NULL, NULL, th)) die_rf("predict");
      double r = (double)rows / (now_s() - b0);
      if (r > bps[th - 1]) bps[th - 1] = r;
    }
  free(pred);
  printf("%s rows=%zu trees=%u train=%.3f s cpu=%.3f s nodes=%zu oob_mape=%.3f latency=%.3f us"
         " (hot %.3f us) batch=%.0f rows/s (2 threads %.0f)\n",
         extra ? "ET" : "RF", rows, trees, tt, cpu, in->n_nodes, in->summary.oob_mape, latency_us(f, &s, 0),
         latency_us(f, &s, 1), bps[0], bps[1]);
  rf_free(f);
  rf_data_free(&s);
  rf_data_free(&d);
  free(fold);
  return 0;
}

int main(int argc, char **argv) {
  int quick = 0;
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--quick")) quick = 1;
  if (argc >= 4 && !strcmp(argv[1], "prep")) return cmd_prep(argv[2], argv[3], quick);
  if (argc >= 4 && !strcmp(argv[1], "run")) return cmd_run(argv[2], argv[3], quick);
  if (argc >= 7 && !strcmp(argv[1], "one"))
    return cmd_one(argv[2], strtoul(argv[3], NULL, 10), (unsigned)strtoul(argv[4], NULL, 10),
                   !strcmp(argv[5], "ET"), (unsigned)strtoul(argv[6], NULL, 10));
  if (argc >= 3 && !strcmp(argv[1], "scale")) return cmd_scale(argv[2], quick);
  if (argc >= 4 && !strcmp(argv[1], "prep-scale"))
    return cmd_prep_scale(argv[2], strtoul(argv[3], NULL, 10));
  fprintf(stderr,
          "usage: rf_bench prep OUTDIR DEDISP_DIR|- [--quick]\n"
          "       rf_bench run OUTDIR NAME [--quick]\n"
          "       rf_bench scale OUTDIR [--quick]\n"
          "       rf_bench one OUTDIR ROWS TREES RF|ET DEPTH\n"
          "       rf_bench prep-scale OUTDIR ROWS\n");
  return 2;
}
