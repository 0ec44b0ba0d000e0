/*
 * test_rf.c -- the forest module: accuracy on known functions, determinism
 * across thread counts, the model file's round trip and its refusal of
 * damaged files, intervals and their calibration, importance, metrics, CV,
 * the CSV loader and allocation failures.  Everything is synthetic and seeded, except one
 * test on the dedispersion tuning data when ../shared/data holds it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "model/model.h"
#include "model/rf_int.h"
#include "tests.h"

/* Assertions whose report is the statement they prove. */
#define CHECK_MSG(msg, cond) \
  CU_assertImplementation(!!(cond), __LINE__, (msg), __FILE__, "", CU_FALSE)
#define CHECK_EQ(a, b, msg) CHECK_MSG(msg, (a) == (b))
#define CHECK_STR(a, b, msg) CHECK_MSG(msg, strcmp((a), (b)) == 0)
#define CHECK_NN(p, msg) CHECK_MSG(msg, (p) != NULL)

/* Small deterministic generator for the synthetic data (not rf's). */
static uint64_t lcg_state;
static double urand(void) {
  lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(lcg_state >> 11) * 0x1.0p-53;
}
static double nrand(void) {
  double u = urand(), v = urand();
  return sqrt(-2 * log(u + 1e-300)) * cos(2 * M_PI * v);
}

/* y = 10 x0 + 5 sin(3 x1) + noise*N(0,1); x2..x4 are noise features. */
static void make_data(rf_data *d, size_t n, double noise, uint64_t seed) {
  lcg_state = seed;
  CU_ASSERT_FATAL(rf_data_alloc(d, n, 5, 1) == 0);
  for (size_t j = 0; j < 5; j++) {
    char name[8];
    snprintf(name, sizeof name, "x%zu", j);
    d->names[j] = strdup(name);
  }
  d->target = strdup("y");
  for (size_t i = 0; i < n; i++) {
    for (size_t j = 0; j < 5; j++) d->x[j * n + i] = urand();
    d->y[i] = 10 * d->x[i] + 5 * sin(3 * d->x[n + i]) + noise * nrand();
  }
}

static double r2_on(const rf_forest *f, const rf_data *t) {
  double *pred = malloc(t->n_rows * sizeof *pred);
  rf_metrics m;
  CU_ASSERT_FATAL(rf_predict_batch(f, t, 0.9, pred, NULL, NULL, 2) == 0);
  rf_metrics_compute(t->y, pred, NULL, NULL, t->n_rows, &m);
  free(pred);
  return m.r2;
}

static rf_params params(unsigned trees) {
  rf_params p;
  rf_params_default(&p);
  p.n_trees = trees;
  p.seed = 42;
  p.created = 1700000000;
  p.n_threads = 2;
  p.max_features = 0.6; /* 3 of 5 features are noise: try 3 per split */
  return p;
}

static void test_forest_learns_known_function(void) {
  rf_data tr, te;
  make_data(&tr, 3000, 0.1, 1);
  make_data(&te, 1000, 0.0, 2);
  rf_params p = params(60);
  rf_forest *f = NULL;
  CU_ASSERT_FATAL(rf_train(&tr, &p, &f) == 0);
  double r2 = r2_on(f, &te);
  CHECK_MSG("random forest reaches R^2 > 0.95 on y = 10 x0 + 5 sin(3 x1)", r2 > 0.95);
  const rf_info *in = rf_get_info(f);
  CHECK_MSG("OOB R^2 is computed and high", in->summary.oob_r2 > 0.9);
  int top = 0;
  for (size_t j = 1; j < in->n_features; j++)
    if (in->mdi[j] > in->mdi[top]) top = (int)j;
  CHECK_EQ(top, 0, "impurity importance ranks the informative x0 first");
  rf_free(f);

  p.extra_trees = 1;
  CU_ASSERT_FATAL(rf_train(&tr, &p, &f) == 0);
  CHECK_MSG("extra trees reach R^2 > 0.95 too", r2_on(f, &te) > 0.95);
  CHECK_EQ(rf_get_info(f)->params.bootstrap, 0, "extra trees default to no bootstrap");
  CHECK_MSG("no bootstrap: no OOB error", isnan(rf_get_info(f)->summary.oob_mse));
  rf_free(f);
  rf_data_free(&tr);
  rf_data_free(&te);
}

static void test_log_target_predicts_geometric_mean(void) {
  rf_data d;
  make_data(&d, 1500, 0.05, 3);
  for (size_t i = 0; i < d.n_rows; i++) d.y[i] = exp(d.y[i] / 4);
  rf_params p = params(40);
  p.transform = RF_TRANSFORM_LOG;
  rf_forest *f = NULL;
  CU_ASSERT_FATAL(rf_train(&d, &p, &f) == 0);
  rf_data te;
  make_data(&te, 500, 0.0, 30);
  for (size_t i = 0; i < te.n_rows; i++) te.y[i] = exp(te.y[i] / 4);
  double *pr = malloc(te.n_rows * sizeof *pr);
  CU_ASSERT_FATAL(rf_predict_batch(f, &te, 0.9, pr, NULL, NULL, 2) == 0);
  rf_metrics m;
  rf_metrics_compute(te.y, pr, NULL, NULL, te.n_rows, &m);
  CHECK_MSG("log-target forest predicts exp(f(x)) with median APE below 5 %", m.median_ape < 5);
  free(pr);
  rf_data_free(&te);
  rf_free(f);
  /* one unsplit tree without bootstrap: its prediction is exp(mean log y) */
  rf_params one = params(1);
  one.transform = RF_TRANSFORM_LOG;
  one.bootstrap = 0;
  one.min_leaf = (unsigned)d.n_rows;
  CU_ASSERT_FATAL(rf_train(&d, &one, &f) == 0);
  double slog = 0;
  for (size_t i = 0; i < d.n_rows; i++) slog += log(d.y[i]);
  CU_ASSERT_DOUBLE_EQUAL(rf_predict(f, d.x), exp(slog / (double)d.n_rows), 1e-9 * exp(slog / (double)d.n_rows));
  rf_free(f);
  d.y[7] = -1;
  CU_ASSERT_EQUAL(rf_train(&d, &p, &f), -1);
  CHECK_NN(strstr(rf_last_error(), "row 8"),
                                 "a non-positive target under --log-target is refused, naming its row");
  rf_data_free(&d);
}

static char *tmpfile_path(char *buf, size_t cap, const char *name) {
  char dir[1024];
  CU_ASSERT_FATAL(tests_tmpdir(dir, sizeof dir, "rf") != NULL);
  snprintf(buf, cap, "%s/%s", dir, name);
  return buf;
}

static void test_model_identical_for_any_thread_count(void) {
  rf_data d;
  make_data(&d, 2000, 0.2, 4);
  char a[1200], b[1200];
  tmpfile_path(a, sizeof a, "t1.kcm");
  tmpfile_path(b, sizeof b, "t2.kcm");
  for (int extra = 0; extra < 2; extra++) {
    rf_params p = params(24);
    p.extra_trees = extra;
    p.perm_importance = 1;
    p.calibrate = RF_CALIBRATE_ON; /* OOB table (RF), inner 5-fold table (ET) */
    rf_forest *f1 = NULL, *f2 = NULL;
    p.n_threads = 1;
    CU_ASSERT_FATAL(rf_train(&d, &p, &f1) == 0);
    p.n_threads = 2;
    CU_ASSERT_FATAL(rf_train(&d, &p, &f2) == 0);
    CU_ASSERT_FATAL(rf_save(f1, a) == 0 && rf_save(f2, b) == 0);
    size_t la, lb;
    char *ca = tests_read_file(a, &la), *cb = tests_read_file(b, &lb);
    CU_ASSERT_FATAL(ca && cb);
    CHECK_MSG("1 and 2 threads write byte-identical model files",
                      la == lb && memcmp(ca, cb, la) == 0);
    CHECK_MSG("the model files hold a calibration table",
              rf_get_info(f1)->n_cal > 0 &&
                  rf_get_info(f1)->cal_method == (extra ? RF_CALIB_KFOLD : RF_CALIB_OOB));
    free(ca);
    free(cb);
    rf_free(f1);
    rf_free(f2);
  }
  rf_data_free(&d);
}

/*
 * The training's partition (rf__part_rows) against the scheme it replaces
 * without its loop: the two-pointer replay below, the model's partition
 * since its first version (a row going left stays, one going right swaps
 * with the last unsettled row).  Every side pattern up to 14 rows, then
 * random ones of every density up to 300 rows; both arrays must come out
 * in the same order.
 */
static void replay_partition(uint32_t *ix, double *yy, const uint8_t *gf, uint32_t n,
                             uint32_t *oi, double *oy) {
  uint32_t fr = 0, bk = n - 1, nl = 0, rp = n - 1, st = 0;
  for (uint32_t k = 0; k < n; k++) {
    uint32_t src = st ? bk : fr, gl = gf[src], dst = gl ? nl : rp;
    oi[dst] = ix[src];
    oy[dst] = yy[src];
    fr += st ^ 1;
    bk -= st;
    nl += gl;
    rp -= gl ^ 1;
    st = gl ^ 1;
  }
  memcpy(ix, oi, n * sizeof *ix);
  memcpy(yy, oy, n * sizeof *yy);
}

static void test_partition_matches_two_pointer_replay(void) {
  enum { N = 300 };
  uint32_t ia[N], ib[N], oi[N], fl[N + 1];
  double ya[N], yb[N], oy[N];
  uint8_t gf[N];
  long bad = 0, cases = 0;
  lcg_state = 77;
  for (uint32_t n = 1; n <= 14; n++)
    for (uint32_t pat = 0; pat < (1u << n); pat++) {
      uint32_t nl = 0;
      for (uint32_t k = 0; k < n; k++) {
        gf[k] = pat >> k & 1;
        nl += gf[k];
        ia[k] = ib[k] = 1000 + k;
        ya[k] = yb[k] = 0.5 * k - 3;
      }
      replay_partition(ia, ya, gf, n, oi, oy);
      rf__part_rows(ib, yb, gf, n, nl, fl);
      bad += memcmp(ia, ib, n * sizeof *ia) != 0 || memcmp(ya, yb, n * sizeof *ya) != 0;
      cases++;
    }
  for (int r = 0; r < 20000; r++) {
    uint32_t n = 1 + (uint32_t)(urand() * N), nl = 0;
    double left = urand();
    if (n > N) n = N;
    for (uint32_t k = 0; k < n; k++) {
      gf[k] = urand() < left;
      nl += gf[k];
      ia[k] = ib[k] = (uint32_t)(urand() * 1e9);
      ya[k] = yb[k] = nrand();
    }
    replay_partition(ia, ya, gf, n, oi, oy);
    rf__part_rows(ib, yb, gf, n, nl, fl);
    bad += memcmp(ia, ib, n * sizeof *ia) != 0 || memcmp(ya, yb, n * sizeof *ya) != 0;
    cases++;
  }
  CHECK_MSG("the partition puts rows where the two-pointer replay puts them", bad == 0);
  CHECK_MSG("every pattern up to 14 rows was tried", cases > 32000);
}

/*
 * The training's fast paths -- bins of rows of <= 8 features moved with
 * the rows, features known constant on a node skipped, passes that add
 * straight to the histogram -- against its plain paths (rf__plain_training)
 * on data that takes each of them: a tuning grid (few values per
 * parameter, one of them constant, rows in grid order, as Kernel Tuner
 * writes them) with 6 features, the same with 4 noise columns (bins
 * through the row index) and 2 features tried per split, and 5 continuous
 * features (every feature over 64 bins).  Random forests with leaves of 1
 * and 5 samples, with and without the log target, and extra trees on
 * each set (on codes, build_codes, against the value rows): the model
 * files must be the same to the byte.
 */
static void make_grid(rf_data *d, size_t extra, uint64_t seed) {
  static const unsigned levels[6] = {6, 29, 1, 4, 8, 2};
  size_t n = 6 * 29 * 4 * 8 * 2 / 2, p = 6 + extra, i = 0;
  lcg_state = seed;
  CU_ASSERT_FATAL(rf_data_alloc(d, n, p, 1) == 0);
  for (size_t j = 0; j < p; j++) {
    char name[24];
    snprintf(name, sizeof name, "g%zu", j);
    d->names[j] = strdup(name);
  }
  d->target = strdup("t");
  for (unsigned a = 0; a < levels[0]; a++)
    for (unsigned b = 0; b < levels[1]; b++)
      for (unsigned c = 0; c < levels[3]; c++)
        for (unsigned e = 0; e < levels[4]; e++)
          for (unsigned g = 0; g < levels[5]; g++) {
            if (urand() < 0.5 || i >= n) continue; /* half the grid, as a tuner's valid set */
            double v[6] = {32.0 * (a + 1), b + 1, 1, 1 << c, e + 1, g};
            for (size_t j = 0; j < 6; j++) d->x[j * n + i] = v[j];
            for (size_t j = 6; j < p; j++) d->x[j * n + i] = urand();
            d->y[i] = 5 + v[0] / v[1] + 3 * (c == 2) + 0.3 * e * g + 0.05 * nrand();
            d->y[i] = d->y[i] > 0.1 ? d->y[i] : 0.1;
            i++;
          }
  d->n_rows = i; /* the columns stay where they are: x is strided by n */
  CU_ASSERT_FATAL(i > 1000);
  /* compact the columns to the rows kept */
  for (size_t j = 1; j < p; j++) memmove(d->x + j * i, d->x + j * n, i * sizeof(double));
}

static int same_model(const rf_data *d, const rf_params *p, const char *a, const char *b) {
  rf_forest *f1 = NULL, *f2 = NULL;
  rf__plain_training = 1;
  int rc = rf_train(d, p, &f1);
  rf__plain_training = 0;
  rf__codes_always = 1; /* extra trees on codes even on small data */
  rc |= rf_train(d, p, &f2);
  rf__codes_always = 0;
  CU_ASSERT_FATAL(rc == 0);
  CU_ASSERT_FATAL(rf_save(f1, a) == 0 && rf_save(f2, b) == 0);
  size_t la, lb;
  char *ca = tests_read_file(a, &la), *cb = tests_read_file(b, &lb);
  CU_ASSERT_FATAL(ca && cb);
  int same = la == lb && memcmp(ca, cb, la) == 0;
  free(ca);
  free(cb);
  rf_free(f1);
  rf_free(f2);
  return same;
}

static void test_fast_training_paths_match_plain(void) {
  char a[1200], b[1200];
  tmpfile_path(a, sizeof a, "plain.kcm");
  tmpfile_path(b, sizeof b, "fast.kcm");
  rf_data g, g10, c;
  make_grid(&g, 0, 5);
  make_grid(&g10, 4, 6);
  make_data(&c, 1500, 0.2, 7);
  int all = 1, runs = 0;
  const rf_data *sets[3] = {&g, &g10, &c};
  for (int k = 0; k < 3; k++)
    for (int ml = 1; ml <= 5; ml += 4)
      for (int lg = 0; lg < 2; lg++) {
        rf_params p = params(12);
        p.max_features = k == 1 ? 2 : 1.0 / 3.0;
        p.min_leaf = (unsigned)ml;
        p.transform = lg ? RF_TRANSFORM_LOG : RF_TRANSFORM_NONE;
        all &= same_model(sets[k], &p, a, b);
        runs++;
      }
  /* extra trees on codes (one byte a cell on the grids, two on the
     continuous set, whose values are not floats), every feature or some
     tried per split, against the value rows of the plain path */
  int eruns = 0;
  for (int k = 0; k < 3; k++)
    for (int some = 0; some < 2; some++) {
      rf_params e = params(8);
      e.extra_trees = 1;
      e.max_features = some ? (k == 1 ? 2 : 1.0 / 3.0) : 1.0;
      e.min_leaf = some ? 3 : 1;
      all &= same_model(sets[k], &e, a, b);
      eruns++;
    }
  CHECK_MSG("fast and plain training paths write byte-identical model files",
            all && runs == 12 && eruns == 6);
  rf_data_free(&g);
  rf_data_free(&g10);
  rf_data_free(&c);
}

static void test_save_load_round_trip(void) {
  rf_data d, te;
  make_data(&d, 1500, 0.3, 5);
  make_data(&te, 200, 0.3, 6);
  rf_params p = params(30);
  rf_forest *f = NULL, *g = NULL;
  CU_ASSERT_FATAL(rf_train(&d, &p, &f) == 0);
  CU_ASSERT_FATAL(rf_set_gpu(f, "NVIDIA A100") == 0);
  char path[1200];
  tmpfile_path(path, sizeof path, "rt.kcm");
  CU_ASSERT_FATAL(rf_save(f, path) == 0);
  CU_ASSERT_FATAL(rf_load(path, &g) == 0);
  const rf_info *a = rf_get_info(f), *b = rf_get_info(g);
  CU_ASSERT_STRING_EQUAL(b->gpu, "NVIDIA A100");
  CU_ASSERT_STRING_EQUAL(b->target, "y");
  CU_ASSERT_STRING_EQUAL(b->features[4], "x4");
  CU_ASSERT_EQUAL(a->n_nodes, b->n_nodes);
  CU_ASSERT_EQUAL(b->summary.created, 1700000000);
  CU_ASSERT_DOUBLE_EQUAL(a->summary.oob_mse, b->summary.oob_mse, 0);
  int same = 1;
  for (size_t i = 0; i < te.n_rows; i++) {
    double row[5], p1, l1, h1, p2, l2, h2;
    for (size_t j = 0; j < 5; j++) row[j] = te.x[j * te.n_rows + i];
    rf_predict_interval(f, row, 0.8, &p1, &l1, &h1);
    rf_predict_interval(g, row, 0.8, &p2, &l2, &h2);
    same &= p1 == p2 && l1 == l2 && h1 == h2 && rf_predict(g, row) == p1;
  }
  CHECK_MSG("a loaded model predicts exactly what the saved one did (points and intervals)", same);
  CHECK_MSG("a bootstrap forest is calibrated on its OOB rows by default",
            a->n_cal == 6 && a->cal_method == RF_CALIB_OOB && a->cal_rows > 1000);
  int table = b->n_cal == a->n_cal && b->cal_method == a->cal_method && b->cal_rows == a->cal_rows &&
              b->params.calibrate == RF_CALIBRATE_ON;
  for (size_t k = 0; table && k < a->n_cal; k++)
    table = a->cal_coverage[k] == b->cal_coverage[k] && a->cal_q[k] == b->cal_q[k];
  CHECK_MSG("the calibration table survives save and load bit for bit", table);
  rf_free(f);
  rf_free(g);
  rf_data_free(&d);
  rf_data_free(&te);
}

/* Rewrite the CRC trailer after editing a model image. */
static void fix_crc(unsigned char *buf, size_t len) {
  uint32_t c = (uint32_t)crc32(crc32(0L, Z_NULL, 0), buf, (uInt)(len - 4));
  memcpy(buf + len - 4, &c, 4);
}

static int load_bytes(const char *path, const unsigned char *buf, size_t len) {
  rf_forest *f = NULL;
  CU_ASSERT_FATAL(tests_write_file(path, buf, len) == 0);
  int rc = rf_load(path, &f);
  rf_free(f);
  return rc;
}

#define ERR_HAS(s) (strstr(rf_last_error(), (s)) != NULL)

static void test_damaged_files_are_refused_by_name(void) {
  rf_data d;
  make_data(&d, 300, 0.3, 7);
  rf_params p = params(5);
  rf_forest *f = NULL;
  CU_ASSERT_FATAL(rf_train(&d, &p, &f) == 0);
  char path[1200], bad[1300];
  tmpfile_path(path, sizeof path, "ok.kcm");
  snprintf(bad, sizeof bad, "%s.bad", path);
  CU_ASSERT_FATAL(rf_save(f, path) == 0);
  rf_free(f);
  size_t len;
  unsigned char *orig = (unsigned char *)tests_read_file(path, &len);
  unsigned char *b = malloc(len);
  CU_ASSERT_FATAL(orig && b);

  CU_ASSERT_EQUAL(load_bytes(bad, orig, len - 100), -1);
  char want[128];
  snprintf(want, sizeof want, "expected %zu bytes, the file has %zu", len, len - 100);
  CHECK_MSG("a cut file is 'truncated' with expected and present sizes", ERR_HAS("truncated") && ERR_HAS(want));
  CU_ASSERT_EQUAL(load_bytes(bad, orig, 10), -1);
  CHECK_MSG("a file cut inside the header is truncated too", ERR_HAS("truncated"));

  memcpy(b, orig, len);
  b[0] = 'X';
  CU_ASSERT_EQUAL(load_bytes(bad, b, len), -1);
  CHECK_MSG("another magic is 'bad magic'", ERR_HAS("bad magic"));

  memcpy(b, orig, len);
  b[8] = RF_FORMAT_VERSION + 1;
  fix_crc(b, len);
  CU_ASSERT_EQUAL(load_bytes(bad, b, len), -1);
  char unsup[64];
  snprintf(unsup, sizeof unsup, "unsupported version %d", RF_FORMAT_VERSION + 1);
  CHECK_MSG("the version after this build's is an unsupported version", ERR_HAS(unsup));

  memcpy(b, orig, len);
  for (int k = 0; k < 4; k++) b[12 + k] = orig[15 - k];
  fix_crc(b, len);
  CU_ASSERT_EQUAL(load_bytes(bad, b, len), -1);
  CHECK_MSG("a byte-swapped marker is 'wrong endianness'", ERR_HAS("wrong endianness"));

  memcpy(b, orig, len);
  b[len / 2] ^= 0x40;
  CU_ASSERT_EQUAL(load_bytes(bad, b, len), -1);
  CHECK_MSG("one flipped bit is a CRC mismatch", ERR_HAS("CRC mismatch"));

  /* Offset of tree 0's root node, by the documented layout: header 24,
     target "y" 4+1, gpu "" 4, transform 4, n_features 4, names 5 x (4+2),
     hyperparameters 48, summary 64, MDI 5 x 8, perm flag 4 (no perm),
     tree header 12. */
  size_t nodes_at = 24 + 5 + 4 + 4 + 4 + 30 + 48 + 64 + 40 + 4 + 12;
  int32_t root_feature;
  uint32_t root_left;
  memcpy(&root_feature, orig + nodes_at + 8, 4);
  memcpy(&root_left, orig + nodes_at + 12, 4);
  CHECK_MSG("the root sits where docs/formats.md says (a split with children 1, 2)",
                    root_feature >= 0 && root_feature < 5 && root_left == 1);
  CU_ASSERT_FATAL(nodes_at < len - 4);
  memcpy(b, orig, len);
  uint32_t huge = 1000000;
  memcpy(b + nodes_at + 12, &huge, 4);
  fix_crc(b, len);
  CU_ASSERT_EQUAL(load_bytes(bad, b, len), -1);
  CHECK_MSG("a child index past the tree is named", ERR_HAS("child index 1000000 out of range"));
  memcpy(b, orig, len);
  int32_t feat = 77;
  memcpy(b + nodes_at + 8, &feat, 4);
  fix_crc(b, len);
  CU_ASSERT_EQUAL(load_bytes(bad, b, len), -1);
  CHECK_MSG("a feature index past the features is named", ERR_HAS("feature index 77 out of range"));
  uint32_t zero = 0;
  memcpy(b, orig, len);
  memcpy(b + nodes_at + 12, &zero, 4);
  fix_crc(b, len);
  CU_ASSERT_EQUAL(load_bytes(bad, b, len), -1);
  CHECK_MSG("a child pointing back (a loop) is refused", ERR_HAS("child index 0"));

  /* The version 4 tail closes the payload: u32 has_ranges = 1, then
     (f64 lo, f64 hi) for each of the 5 features. */
  size_t v4 = 4 + 5 * 16, ranges = len - 4 - v4;
  uint32_t has;
  double lo0, hi0;
  memcpy(&has, orig + ranges, 4);
  memcpy(&lo0, orig + ranges + 4, 8);
  memcpy(&hi0, orig + ranges + 12, 8);
  CHECK_MSG("the version 4 tail: the training ranges, feature 0's in [0, 1)",
            has == 1 && lo0 >= 0 && hi0 < 1 && lo0 < hi0);
  memcpy(b, orig, len);
  uint32_t two = 2;
  memcpy(b + ranges, &two, 4);
  fix_crc(b, len);
  CU_ASSERT_EQUAL(load_bytes(bad, b, len), -1);
  CHECK_MSG("a training-range flag of 2 is refused by name", ERR_HAS("training-range flag is 2"));
  memcpy(b, orig, len);
  memcpy(b + ranges + 4, &hi0, 8);
  memcpy(b + ranges + 12, &lo0, 8);
  fix_crc(b, len);
  CU_ASSERT_EQUAL(load_bytes(bad, b, len), -1);
  CHECK_MSG("a range whose lo exceeds its hi is refused, naming the feature",
            ERR_HAS("training range") && ERR_HAS("is empty or not finite"));
  /* a version 3 file (no ranges) still loads, and tests nothing */
  {
    size_t n3 = ranges;
    memcpy(b, orig, n3);
    uint32_t v3 = 3;
    uint64_t L3 = n3 - 24;
    memcpy(b + 8, &v3, 4);
    memcpy(b + 16, &L3, 8);
    fix_crc(b, n3 + 4);
    rf_forest *v3m = NULL;
    CU_ASSERT_FATAL(tests_write_file(bad, b, n3 + 4) == 0);
    CHECK_EQ(rf_load(bad, &v3m), 0, "a version 3 file still loads");
    if (v3m) {
      double far[5] = {1e9, 1e9, 1e9, 1e9, 1e9};
      CHECK_MSG("a version 3 model has no ranges: nothing is out of range",
                rf_outside(v3m, far, NULL) == -1);
      rf_free(v3m);
    }
  }
  /* The version 3 part before it: i32 base feature, then the unseen-GPU
     table (u32 n = 0 here). */
  size_t tail = len - 4 - v4 - 8;
  int32_t base;
  uint32_t n2;
  memcpy(&base, orig + tail, 4);
  memcpy(&n2, orig + tail + 4, 4);
  CHECK_MSG("the version 3 tail: no base feature, no unseen-GPU table", base == -1 && n2 == 0);
  memcpy(b, orig, len);
  int32_t b77 = 77;
  memcpy(b + tail, &b77, 4);
  fix_crc(b, len);
  CU_ASSERT_EQUAL(load_bytes(bad, b, len), -1);
  CHECK_MSG("a base feature index past the features is named", ERR_HAS("base feature index 77"));
  memcpy(b, orig, len);
  int32_t b0 = 0;
  memcpy(b + tail, &b0, 4);
  fix_crc(b, len);
  CU_ASSERT_EQUAL(load_bytes(bad, b, len), -1);
  CHECK_MSG("a base feature without the log transform is refused", ERR_HAS("needs the log transform"));
  /* a version 2 file (no tail) still loads, without a base */
  memcpy(b, orig, tail);
  uint32_t v2 = 2;
  uint64_t Lv2 = tail - 24;
  memcpy(b + 8, &v2, 4);
  memcpy(b + 16, &Lv2, 8);
  fix_crc(b, tail + 4);
  rf_forest *v2m = NULL;
  CU_ASSERT_FATAL(tests_write_file(bad, b, tail + 4) == 0);
  CHECK_EQ(rf_load(bad, &v2m), 0, "a version 2 file still loads");
  if (v2m) {
    CHECK_MSG("a version 2 model has no base feature", rf_get_info(v2m)->params.base_feature == -1);
    rf_free(v2m);
  }

  /* The calibration table comes before the tail (version 2): u32 n_cal = 6,
     u32 method, u32 folds, u64 rows, then (f64 coverage, f64 q) x 6. */
  size_t tab = tail - (4 + 4 + 4 + 8 + 6 * 16);
  uint32_t ncal, method;
  memcpy(&ncal, orig + tab, 4);
  memcpy(&method, orig + tab + 4, 4);
  CHECK_MSG("the calibration table sits where docs/formats.md says (6 points, OOB)",
            ncal == 6 && method == 1);
  memcpy(b, orig, len);
  uint32_t v32 = 99;
  memcpy(b + tab, &v32, 4);
  fix_crc(b, len);
  CU_ASSERT_EQUAL(load_bytes(bad, b, len), -1);
  CHECK_MSG("a table of 99 points is refused by name", ERR_HAS("calibration table: 99 grid points"));
  memcpy(b, orig, len);
  v32 = 7;
  memcpy(b + tab + 4, &v32, 4);
  fix_crc(b, len);
  CU_ASSERT_EQUAL(load_bytes(bad, b, len), -1);
  CHECK_MSG("an unknown calibration method is named", ERR_HAS("calibration table: unknown method 7"));
  memcpy(b, orig, len);
  memcpy(b + tab + 20 + 2 * 16, b + tab + 20 + 16, 8); /* point 2's coverage = point 1's */
  fix_crc(b, len);
  CU_ASSERT_EQUAL(load_bytes(bad, b, len), -1);
  CHECK_MSG("coverages that do not increase are refused", ERR_HAS("coverage 0.68 at point 2 is not increasing"));
  memcpy(b, orig, len);
  double nan_q = NAN;
  memcpy(b + tab + 20 + 8, &nan_q, 8);
  fix_crc(b, len);
  CU_ASSERT_EQUAL(load_bytes(bad, b, len), -1);
  CHECK_MSG("a NaN widening is refused", ERR_HAS("widening at point 0 is not finite"));

  /* Version 1 (no table) still loads, uncalibrated: the same image cut at
     the table, with version and payload length patched. */
  memcpy(b, orig, tab);
  uint32_t v1 = 1;
  uint64_t L1 = tab - 24;
  memcpy(b + 8, &v1, 4);
  memcpy(b + 16, &L1, 8);
  fix_crc(b, tab + 4);
  rf_forest *old = NULL;
  CU_ASSERT_FATAL(tests_write_file(bad, b, tab + 4) == 0);
  CHECK_EQ(rf_load(bad, &old), 0, "a version 1 file still loads");
  if (old) {
    CHECK_MSG("a version 1 model is uncalibrated",
              rf_get_info(old)->n_cal == 0 && rf_get_info(old)->cal_method == RF_CALIB_NONE);
    rf_free(old);
  }
  memcpy(b, orig, len);
  memcpy(b + 8, &v1, 4);
  fix_crc(b, len);
  CU_ASSERT_EQUAL(load_bytes(bad, b, len), -1);
  CHECK_MSG("a version 1 file with a table has bytes left over after the last tree",
            ERR_HAS("left over after the last tree"));
  memcpy(b, orig, tab);
  uint64_t L2 = tab - 24;
  memcpy(b + 8, &v2, 4);
  memcpy(b + 16, &L2, 8);
  fix_crc(b, tab + 4);
  CU_ASSERT_EQUAL(load_bytes(bad, b, tab + 4), -1);
  CHECK_MSG("a version 2 file without its table is refused by name",
            ERR_HAS("calibration table") && ERR_HAS("runs past the end"));

  /* every truncation point is refused without a crash */
  int all = 1;
  for (size_t cut = 0; cut < len; cut += 1 + len / 97) all &= load_bytes(bad, orig, cut) == -1;
  CHECK_MSG("every prefix of a model file is refused", all);
  CU_ASSERT_EQUAL(load_bytes(bad, orig, len), 0);
  free(orig);
  free(b);
  rf_data_free(&d);
}

static void test_intervals_cover_nominal_rate(void) {
  rf_data tr, te;
  make_data(&tr, 4000, 1.0, 8);
  make_data(&te, 2000, 1.0, 9);
  rf_params p = params(60);
  p.min_leaf = 10;
  rf_forest *f = NULL;
  CU_ASSERT_FATAL(rf_train(&tr, &p, &f) == 0);
  size_t n = te.n_rows;
  double *pr = malloc(n * 8), *lo = malloc(n * 8), *hi = malloc(n * 8);
  CU_ASSERT_FATAL(rf_predict_batch(f, &te, 0.9, pr, lo, hi, 2) == 0);
  rf_metrics m;
  rf_metrics_compute(te.y, pr, lo, hi, n, &m);
  CHECK_MSG("90 % intervals cover 85..97 % of held-out noisy rows",
                    m.coverage > 0.85 && m.coverage < 0.97);
  int ordered = 1;
  for (size_t i = 0; i < n; i++) ordered &= lo[i] <= hi[i];
  CHECK_MSG("lo <= hi for every row", ordered);
  CU_ASSERT_EQUAL(rf_predict_interval(f, te.x, 1.5, NULL, NULL, NULL), -1);
  CHECK_MSG("coverage outside (0,1) is refused", ERR_HAS("coverage"));
  free(pr);
  free(lo);
  free(hi);
  rf_free(f);
  rf_data_free(&tr);
  rf_data_free(&te);
}

/* The batch walks blocks of rows tree by tree; every value must be the
   one the single-row calls give, bit for bit, for row counts that end a
   block early, a group of eight early, or hold one row, with 1 and 2
   threads, with and without intervals, with a log target and a base
   feature. */
static void test_batch_equals_single_rows_bit_for_bit(void) {
  rf_data tr, te;
  make_data(&tr, 3000, 1.0, 21);
  make_data(&te, 203, 1.0, 22);
  for (size_t i = 0; i < tr.n_rows; i++) tr.y[i] += 20; /* positive for the log */
  for (size_t i = 0; i < te.n_rows; i++) te.x[te.n_rows + i] += 0.5; /* base x1 > 0 */
  for (size_t i = 0; i < tr.n_rows; i++) tr.x[tr.n_rows + i] += 0.5;
  for (int variant = 0; variant < 2; variant++) {
    rf_params p = params(37); /* not a multiple of eight trees */
    if (variant) {
      p.transform = RF_TRANSFORM_LOG;
      p.base_feature = 1;
      p.extra_trees = 1;
    }
    rf_forest *f = NULL;
    CU_ASSERT_FATAL(rf_train(&tr, &p, &f) == 0);
    static const size_t counts[] = {1, 7, 64, 65, 203};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
      size_t n = counts[c];
      rf_data d;
      size_t *sel = malloc(n * sizeof *sel);
      for (size_t i = 0; i < n; i++) sel[i] = i;
      CU_ASSERT_FATAL(rf__subset(&te, sel, n, &d) == 0);
      free(sel);
      double *pr = malloc(n * 8), *lo = malloc(n * 8), *hi = malloc(n * 8), *pp = malloc(n * 8);
      double row[5];
      for (int th = 1; th <= 2; th++) {
        CU_ASSERT_FATAL(rf_predict_batch(f, &d, 0.8, pp, NULL, NULL, th) == 0);
        CU_ASSERT_FATAL(rf_predict_batch(f, &d, 0.8, pr, lo, hi, th) == 0);
        int same = 1;
        for (size_t i = 0; i < n; i++) {
          for (size_t j = 0; j < 5; j++) row[j] = d.x[j * n + i];
          double a, b, e, v = rf_predict(f, row);
          CU_ASSERT_FATAL(rf_predict_interval(f, row, 0.8, &e, &a, &b) == 0);
          same &= memcmp(&v, &pp[i], 8) == 0 && memcmp(&e, &pr[i], 8) == 0 &&
                  memcmp(&a, &lo[i], 8) == 0 && memcmp(&b, &hi[i], 8) == 0;
        }
        CHECK_MSG("batch predictions and intervals equal the single-row ones bit for bit", same);
      }
      free(pr);
      free(lo);
      free(hi);
      free(pp);
      rf_data_free(&d);
    }
    rf_free(f);
  }
  rf_data_free(&tr);
  rf_data_free(&te);
}

/* The batch walks read a row's keys at (feature byte & M), M + 1 the power
   of two above the features (rf_walk.h, key_stride): feature counts on
   both sides of a power of two, with the last feature the one that
   matters (a row whose leaf read a real key would step on), every batch
   value bit for bit the single-row one. */
static void test_batch_key_strides(void) {
  static const size_t widths[] = {1, 3, 7, 8, 15, 16, 31, 32};
  for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
    size_t P = widths[w], n = 400, m = 70;
    rf_data d;
    lcg_state = 100 + P;
    CU_ASSERT_FATAL(rf_data_alloc(&d, n, P, 1) == 0);
    for (size_t j = 0; j < P; j++) {
      char name[16];
      snprintf(name, sizeof name, "x%u", (unsigned)j);
      d.names[j] = strdup(name);
    }
    d.target = strdup("y");
    for (size_t i = 0; i < n; i++) {
      for (size_t j = 0; j < P; j++) d.x[j * n + i] = urand();
      d.y[i] = 8 * d.x[(P - 1) * n + i] + d.x[i] + 0.1 * nrand();
    }
    rf_params p = params(19);
    p.min_leaf = 1 + (unsigned)(P & 1);
    rf_forest *f = NULL;
    CU_ASSERT_FATAL(rf_train(&d, &p, &f) == 0);
    rf_data t;
    size_t *sel = malloc(m * sizeof *sel);
    for (size_t i = 0; i < m; i++) sel[i] = (i * 37) % n;
    CU_ASSERT_FATAL(rf__subset(&d, sel, m, &t) == 0);
    free(sel);
    double *pr = malloc(m * 8), *lo = malloc(m * 8), *hi = malloc(m * 8), *row = malloc(P * 8);
    CU_ASSERT_FATAL(rf_predict_batch(f, &t, 0.8, pr, lo, hi, 1) == 0);
    int same = 1;
    for (size_t i = 0; i < m; i++) {
      for (size_t j = 0; j < P; j++) row[j] = t.x[j * m + i];
      double a, b, e;
      CU_ASSERT_FATAL(rf_predict_interval(f, row, 0.8, &e, &a, &b) == 0);
      same &= memcmp(&e, &pr[i], 8) == 0 && memcmp(&a, &lo[i], 8) == 0 &&
              memcmp(&b, &hi[i], 8) == 0;
    }
    CHECK_MSG("batch values equal the single-row ones at every key stride", same);
    free(pr);
    free(lo);
    free(hi);
    free(row);
    rf_data_free(&t);
    rf_data_free(&d);
    rf_free(f);
  }
}

/* y = 4 x0 + 2 sin(6 x1) + (0.2 + 1.5 x0) N(0,1): the noise grows with x0.
   Dense in two dimensions and noise-dominated: single-sample leaves give
   a new row the targets of its one or two nearest training rows, whose
   spread misses its own noise (a third draw falls between two others one
   time in three). */
static void make_hetero(rf_data *d, size_t n, uint64_t seed) {
  lcg_state = seed;
  CU_ASSERT_FATAL(rf_data_alloc(d, n, 2, 1) == 0);
  d->names[0] = strdup("x0");
  d->names[1] = strdup("x1");
  d->target = strdup("y");
  for (size_t i = 0; i < n; i++) {
    double x0 = urand(), x1 = urand();
    d->x[i] = x0;
    d->x[n + i] = x1;
    d->y[i] = 4 * x0 + 2 * sin(6 * x1) + (0.2 + 1.5 * x0) * nrand();
  }
}

/* Out-of-fold coverage (5-fold CV) at nominal cov, and the mean width. */
static double cv_coverage(const rf_data *d, int extra, int calibrate, double cov, double *width) {
  rf_params p = params(50);
  p.max_features = 0;
  p.extra_trees = extra;
  p.min_leaf = 1;
  p.calibrate = calibrate;
  rf_cv_opts o = {.size = sizeof o, .folds = 5, .coverage = cov};
  rf_cv_result r;
  CU_ASSERT_FATAL(rf_cv(d, &p, &o, &r) == 0);
  double w = 0;
  for (size_t i = 0; i < r.n; i++) w += r.hi[i] - r.lo[i];
  if (width) *width = w / (double)r.n;
  double c = r.overall.coverage;
  rf_cv_result_free(&r);
  return c;
}

/*
 * Calibration in cross-validation: every fold's forest is calibrated on its
 * own training rows only (inner 5-fold for extra trees, OOB rows for the
 * random forest), so the out-of-fold coverage is an honest measure.
 */
static void test_calibration_reaches_nominal_coverage(void) {
  rf_data d;
  make_hetero(&d, 800, 5);
  double w_off, w_on;
  double et_off = cv_coverage(&d, 1, RF_CALIBRATE_OFF, 0.9, &w_off);
  double et_on = cv_coverage(&d, 1, RF_CALIBRATE_ON, 0.9, &w_on);
  CHECK_MSG("extra trees, min_leaf 1, uncalibrated: 90 % intervals cover under 75 %", et_off < 0.75);
  CHECK_MSG("extra trees, min_leaf 1, calibrated: 90 % intervals cover 85..95 %",
            fabs(et_on - 0.9) < 0.05);
  CHECK_MSG("calibration widens the under-covering intervals", w_on > 1.2 * w_off);
  double et_half = cv_coverage(&d, 1, RF_CALIBRATE_ON, 0.5, NULL);
  CHECK_MSG("extra trees, calibrated: 50 % intervals cover 43..57 %", fabs(et_half - 0.5) < 0.07);
  double rf_off = cv_coverage(&d, 0, RF_CALIBRATE_OFF, 0.9, NULL);
  double rf_on = cv_coverage(&d, 0, RF_CALIBRATE_DEFAULT, 0.9, NULL);
  CHECK_MSG("random forest, min_leaf 1, uncalibrated: 90 % intervals cover under 85 %", rf_off < 0.85);
  CHECK_MSG("random forest, calibrated by default (OOB): 90 % intervals cover 85..95 %",
            fabs(rf_on - 0.9) < 0.05);
  rf_data_free(&d);
}

/* The widening rule: the interval stretched to hold the point prediction
   p, then [lo - q, hi + q] in the transformed space with q interpolated
   linearly between grid points and held at the ends (and p held again);
   an interval narrowed past empty is the point prediction. */
static void test_calibration_widens_by_the_table(void) {
  rf_data d, te;
  make_hetero(&d, 600, 6);
  make_hetero(&te, 50, 7);
  rf_params p = params(30);
  p.max_features = 0;
  p.extra_trees = 1;
  p.min_leaf = 1;
  rf_forest *off = NULL, *on = NULL, *bent = NULL;
  p.calibrate = RF_CALIBRATE_DEFAULT;
  CU_ASSERT_FATAL(rf_train(&d, &p, &off) == 0);
  CHECK_EQ(rf_get_info(off)->n_cal, 0, "extra trees are not calibrated by default (an inner CV costs)");
  p.calibrate = RF_CALIBRATE_ON;
  CU_ASSERT_FATAL(rf_train(&d, &p, &on) == 0);
  const rf_info *in = rf_get_info(on);
  CU_ASSERT_FATAL(in->n_cal == 6);
  CHECK_MSG("the table is on the grid 0.5 0.68 0.8 0.9 0.95 0.99, made by an inner 5-fold CV",
            in->cal_coverage[0] == 0.5 && in->cal_coverage[3] == 0.9 && in->cal_coverage[5] == 0.99 &&
                in->cal_method == RF_CALIB_KFOLD && in->cal_folds == 5 && in->cal_rows == 600);
  int rising = 1;
  for (size_t k = 1; k < 6; k++) rising &= in->cal_q[k] >= in->cal_q[k - 1];
  CHECK_MSG("widenings grow with the coverage", rising);
  const double *q = in->cal_q;
  const double covs[5] = {0.3, 0.5, 0.85, 0.9, 0.995};
  const double want[5] = {q[0], q[0], q[2] + 0.5 * (q[3] - q[2]), q[3], q[5]};
  int exact = 1, points = 1;
  for (size_t i = 0; i < te.n_rows; i++) {
    double row[2] = {te.x[i], te.x[te.n_rows + i]};
    for (int c = 0; c < 5; c++) {
      double p0, l0, h0, p1, l1, h1;
      CU_ASSERT_FATAL(rf_predict_interval(off, row, covs[c], &p0, &l0, &h0) == 0);
      CU_ASSERT_FATAL(rf_predict_interval(on, row, covs[c], &p1, &l1, &h1) == 0);
      points &= p0 == p1;
      double el = fmin(fmin(l0, p0) - want[c], p0), eh = fmax(fmax(h0, p0) + want[c], p0);
      exact &= fabs(l1 - el) < 1e-9 && fabs(h1 - eh) < 1e-9;
    }
  }
  CHECK_MSG("calibration leaves the trees and point predictions alone", points);
  CHECK_MSG("min(lo, p) - q, max(hi, p) + q with q interpolated in coverage, held at 0.5 below "
            "and 0.99 above", exact);

  /* a table that narrows past empty: the interval is the point prediction */
  char path[1200];
  tmpfile_path(path, sizeof path, "bent.kcm");
  CU_ASSERT_FATAL(rf_save(on, path) == 0);
  size_t len;
  unsigned char *buf = (unsigned char *)tests_read_file(path, &len);
  CU_ASSERT_FATAL(buf != NULL);
  double neg = -1e6;
  /* q at 0.9, before the version 3 tail and the version 4 ranges of 2 features */
  memcpy(buf + len - 4 - (4 + 2 * 16) - 8 - 6 * 16 + 3 * 16 + 8, &neg, 8);
  fix_crc(buf, len);
  CU_ASSERT_FATAL(tests_write_file(path, buf, len) == 0);
  free(buf);
  CU_ASSERT_FATAL(rf_load(path, &bent) == 0);
  double row[2] = {0.5, 0.5}, p1, l1, h1, l2, h2;
  CU_ASSERT_FATAL(rf_predict_interval(bent, row, 0.9, &p1, &l1, &h1) == 0);
  CHECK_MSG("an interval narrowed past empty is the point prediction", l1 == p1 && h1 == p1);
  CU_ASSERT_FATAL(rf_predict_interval(bent, row, 0.8, NULL, &l2, &h2) == 0);
  CHECK_MSG("other coverages keep their own widening", l2 < h2);
  rf_free(off);
  rf_free(on);
  rf_free(bent);
  rf_data_free(&d);
  rf_data_free(&te);
}

/* n rows of two features, x0 and x1name, target tname, and room for a
   group label a row. */
static void grouped_alloc(rf_data *d, size_t n, const char *x1name, const char *tname) {
  CU_ASSERT_FATAL(rf_data_alloc(d, n, 2, 1) == 0);
  d->names[0] = strdup("x0");
  d->names[1] = strdup(x1name);
  d->target = strdup(tname);
  d->groups = calloc(n, sizeof(char *));
  CU_ASSERT_FATAL(d->groups != NULL);
}

/* 30 applications of 24 rows: y = 3 x0 + off[g] + 0.1 N(0,1), where the
   offset of application g (N(0, 2)) is told only by x1 = g / 30, a value
   no other application shares.  Within an application the forest learns
   the offset; for an unseen one it can only borrow a neighbour's. */
static void make_groups(rf_data *d, uint64_t seed) {
  size_t G = 30, per = 24, n = G * per;
  lcg_state = seed;
  double off[30];
  for (size_t g = 0; g < G; g++) off[g] = 2 * nrand();
  grouped_alloc(d, n, "x1", "y");
  for (size_t i = 0; i < n; i++) {
    size_t g = i / per;
    char name[8];
    snprintf(name, sizeof name, "g%02zu", g);
    d->groups[i] = strdup(name);
    d->x[i] = urand();
    d->x[n + i] = (double)g / (double)G;
    d->y[i] = 3 * d->x[i] + off[g] + 0.1 * nrand();
  }
}

static double logo_coverage(const rf_data *d, int by_group_cal, double cov) {
  rf_params p = params(30);
  p.max_features = 0;
  p.extra_trees = 1;
  p.min_leaf = 1;
  p.calibrate = RF_CALIBRATE_ON;
  p.calib_groups = by_group_cal;
  rf_cv_opts o = {.size = sizeof o, .by_group = 1, .coverage = cov};
  rf_cv_result r;
  CU_ASSERT_FATAL(rf_cv(d, &p, &o, &r) == 0);
  double c = r.overall.coverage;
  rf_cv_result_free(&r);
  return c;
}

/*
 * Two groups whose times differ by 22 % (0.2 in log space): left one out,
 * the other is all the calibration data has.  Calibrated by its rows
 * alone the intervals miss the new group; with the prior spread of groups
 * (RF_UNSEEN_SIGMA, sqrt(2) of it for one known group: 0.35 at 0.9) they
 * hold it, and the result says how many groups calibrated.
 */
static void test_calibration_prior_for_few_groups(void) {
  size_t per = 150, n = 2 * per;
  rf_data d;
  lcg_state = 99;
  CU_ASSERT_FATAL(rf_data_alloc(&d, n, 2, 1) == 0);
  d.names[0] = strdup("x0");
  d.names[1] = strdup("x1");
  d.target = strdup("t");
  d.groups = calloc(n, sizeof(char *));
  for (size_t i = 0; i < n; i++) {
    d.groups[i] = strdup(i < per ? "gpuA" : "gpuB");
    d.x[i] = urand();
    d.x[n + i] = urand();
    d.y[i] = exp(2 * d.x[i] + (i < per ? 0 : 0.2) + 0.02 * nrand());
  }
  rf_params p = params(30);
  p.extra_trees = 1;
  p.max_features = 0;
  p.min_leaf = 1;
  p.transform = RF_TRANSFORM_LOG;
  p.calibrate = RF_CALIBRATE_ON;
  rf_cv_opts o = {.size = sizeof o, .by_group = 1, .coverage = 0.9};
  rf_cv_result r;
  CU_ASSERT_FATAL(rf_cv(&d, &p, &o, &r) == 0);
  double rows = r.overall.coverage;
  CHECK_MSG("without calibration for unseen groups: nothing says the count",
            r.groups_calibrated == SIZE_MAX);
  rf_cv_result_free(&r);
  p.calib_groups = 1;
  CU_ASSERT_FATAL(rf_cv(&d, &p, &o, &r) == 0);
  printf("\n  two groups, leave one out, 90 %% bands: by rows %.3f, with the prior %.3f ", rows,
         r.overall.coverage);
  CHECK_MSG("row-calibrated bands miss the other group's 22 % offset (< 0.5)", rows < 0.5);
  CHECK_MSG("widened by the prior spread of groups they hold it (>= 0.85)",
            r.overall.coverage >= 0.85);
  CHECK_MSG("the result says one group calibrated each fold", r.groups_calibrated == 1);
  rf_cv_result_free(&r);
  rf_data_free(&d);
}

/*
 * Group calibration counts groups, not rows: one large group the forest
 * predicts well (400 rows) and two small ones whose times sit 65 % above
 * and 40 % below it (20 rows each, nothing in the features says so).
 * Pooled over rows, 91 % of the held-out scores are the large group's
 * (held out, it sits inside the wide band the two others give), and the
 * 0.5 quantile narrows the band (-0.27 in log space); by group it is the
 * median group's own median (a held-out small group lies 0.5 from what
 * the others predict), and at 0.9 the worst group's.
 */
static void test_calibration_counts_groups(void) {
  size_t big = 400, small = 20, n = big + 2 * small;
  rf_data d;
  lcg_state = 7;
  CU_ASSERT_FATAL(rf_data_alloc(&d, n, 2, 1) == 0);
  d.names[0] = strdup("x0");
  d.names[1] = strdup("x1");
  d.target = strdup("t");
  d.groups = calloc(n, sizeof(char *));
  CU_ASSERT_FATAL(d.groups != NULL);
  for (size_t i = 0; i < n; i++) {
    int g = i < big ? 0 : i < big + small ? 1 : 2;
    d.groups[i] = strdup(g == 0 ? "large" : g == 1 ? "slow" : "fast");
    d.x[i] = urand();
    d.x[n + i] = urand();
    d.y[i] = exp(2 * d.x[i] + (g == 1 ? 0.5 : g == 2 ? -0.5 : 0) + 0.01 * nrand());
  }
  rf_params p = params(30);
  p.extra_trees = 1;
  p.max_features = 0;
  p.min_leaf = 1;
  p.transform = RF_TRANSFORM_LOG;
  p.calibrate = RF_CALIBRATE_ON;
  p.calib_groups = 1;
  rf_forest *f = NULL;
  CU_ASSERT_FATAL(rf_train(&d, &p, &f) == 0);
  const rf_info *in = rf_get_info(f);
  CU_ASSERT_FATAL(in->n_cal == 6 && in->cal_method == RF_CALIB_GROUPS);
  printf("\n  one large and two small offset groups: 0.9 quantile %.3f, 0.5 %.3f ", in->cal_q[3],
         in->cal_q[0]);
  CHECK_MSG("the 0.5 quantile is the median group's (>= 0.3), not the pooled rows' (< 0)",
            in->cal_q[0] >= 0.3);
  CHECK_MSG("the 0.9 quantile holds the worst group (>= 0.4)", in->cal_q[3] >= 0.4);
  CHECK_MSG("quantiles do not fall with coverage", in->cal_q[0] <= in->cal_q[3]);
  rf_free(f);
  rf_data_free(&d);
}

/* Five groups of 120 rows whose time over the base is exp(0.8 sin(2 pi
   (x0 + g / 5))): each group its own phase (`same`: all the phase of
   group 0), which no feature tells.  Held out, a group's pattern is the
   negative of the mean of the others' (the five sum to 0 at every x0). */
static void make_phases(rf_data *d, int same) {
  size_t per = 120, n = 5 * per;
  lcg_state = 11;
  grouped_alloc(d, n, "base", "t");
  for (size_t i = 0; i < n; i++) {
    size_t g = i / per;
    char nm[8];
    snprintf(nm, sizeof nm, "g%zu", g);
    d->groups[i] = strdup(nm);
    d->x[i] = urand();
    d->x[n + i] = exp(3 * urand());
    double ph = same ? 0 : (double)g / 5;
    d->y[i] = d->x[n + i] * exp(0.8 * sin(2 * M_PI * (d->x[i] + ph)) + 0.01 * nrand());
  }
}

/* Extra trees of leaves of one on a log target with column 1 as the base,
   calibrated for unseen groups: what the shrinks are chosen for. */
static rf_params shrink_params(void) {
  rf_params p = params(30);
  p.extra_trees = 1;
  p.max_features = 0;
  p.min_leaf = 1;
  p.transform = RF_TRANSFORM_LOG;
  p.base_feature = 1;
  p.calibrate = RF_CALIBRATE_ON;
  p.calib_groups = 1;
  return p;
}

static double logo_median_ape(rf_data *d, const rf_params *p, unsigned *shrunk) {
  rf_cv_opts o = {.size = sizeof o, .by_group = 1, .coverage = 0.9};
  rf_cv_result r;
  if (rf_cv(d, p, &o, &r)) return -1;
  double m = r.overall.median_ape;
  *shrunk = r.shrunk_folds;
  rf_cv_result_free(&r);
  return m;
}

/*
 * A table made on held-out groups moves the answers of a forest with a
 * base toward the base (or the median correction) when that answers the
 * held-out groups better in every one of them (rf_calib.c, choose_shrink):
 * groups whose corrections of the base differ in ways nothing tells are
 * better answered by the base than by the other groups' corrections.
 * Where the groups share their correction the forest's answer stays; the
 * shrink survives save and load (file version 7).
 */
static void test_group_shrink(void) {
  rf_params p = shrink_params();
  rf_data d;
  make_phases(&d, 0);
  rf_forest *f = NULL, *g = NULL;
  CU_ASSERT_FATAL(rf_train(&d, &p, &f) == 0);
  const rf_info *in = rf_get_info(f);
  printf("\n  five groups, phases of their own: shrink %.3f toward %d ", in->cal_shrink,
         in->cal_toward);
  CHECK_MSG("their answers are moved (shrink >= 0.5)", in->cal_shrink >= 0.5);
  char path[1200];
  tmpfile_path(path, sizeof path, "shrink.kcm");
  CU_ASSERT_FATAL(rf_save(f, path) == 0);
  CU_ASSERT_FATAL(rf_load(path, &g) == 0);
  CHECK_MSG("the shrink survives save and load",
            rf_get_info(g)->cal_shrink == in->cal_shrink &&
                rf_get_info(g)->cal_toward == in->cal_toward);
  double row[2] = {0.9, 10};
  CHECK_MSG("... and so do the answers", rf_predict(g, row) == rf_predict(f, row));
  /* the file ends ... base_med, (f64 shrink, u32 toward) x 2, CRC */
  size_t len;
  unsigned char *img = (unsigned char *)tests_read_file(path, &len);
  CU_ASSERT_FATAL(img != NULL && len > 40);
  uint32_t ver;
  memcpy(&ver, img + 8, 4);
  CHECK_EQ(ver, 7, "a model whose table shrinks is written as version 7");
  char bad[1300];
  snprintf(bad, sizeof bad, "%s.bad", path);
  double two = 2, half = 0.5;
  memcpy(img + len - 28, &two, 8);
  fix_crc(img, len);
  CU_ASSERT_EQUAL(load_bytes(bad, img, len), -1);
  CHECK_MSG("a shrink above 1 is refused by name", ERR_HAS("calibration table: shrink 2"));
  memcpy(img + len - 28, &in->cal_shrink, 8);
  memcpy(img + len - 16, &half, 8);
  fix_crc(img, len);
  CU_ASSERT_EQUAL(load_bytes(bad, img, len), -1);
  CHECK_MSG("a shrink for an unseen-GPU table that is not there is refused",
            ERR_HAS("unseen-GPU table: shrink 0.5"));
  free(img);
  rf_free(g);
  rf_free(f);
  unsigned sw = 0, so = 0;
  double with = logo_median_ape(&d, &p, &sw);
  setenv("KCAST_GROUP_SHRINK", "0", 1);
  double without = logo_median_ape(&d, &p, &so);
  unsetenv("KCAST_GROUP_SHRINK");
  CHECK_MSG("the CV result counts the folds that moved their answers (all 5; none when off)",
            sw == 5 && so == 0);
  printf("leave one group out, median APE %.2f %% (without the shrink %.2f %%) ", with, without);
  CHECK_MSG("leaving a group out, the shrink answers it better", with >= 0 && with < 0.9 * without);
  rf_data_free(&d);

  make_phases(&d, 1);
  CU_ASSERT_FATAL(rf_train(&d, &p, &f) == 0);
  printf("one shared phase: shrink %.3f ", rf_get_info(f)->cal_shrink);
  CHECK_MSG("a correction the groups share is kept (no shrink)", rf_get_info(f)->cal_shrink == 0);
  rf_free(f);
  rf_data_free(&d);
}

/* Five groups of 240 rows, half of each of class 1 and half of class 2
   (column opr.class): class 1's correction of the base has a phase of its
   own in every group, class 2's is the same in all of them. */
static void make_classes(rf_data *d) {
  size_t per = 240, n = 5 * per;
  lcg_state = 17;
  CU_ASSERT_FATAL(rf_data_alloc(d, n, 3, 1) == 0);
  d->names[0] = strdup("x0");
  d->names[1] = strdup("base");
  d->names[2] = strdup(RF_SHRINK_KEY);
  d->target = strdup("t");
  d->groups = calloc(n, sizeof(char *));
  CU_ASSERT_FATAL(d->groups != NULL);
  for (size_t i = 0; i < n; i++) {
    size_t g = i / per;
    char nm[8];
    snprintf(nm, sizeof nm, "g%zu", g);
    d->groups[i] = strdup(nm);
    int cls = 1 + (int)(i % 2);
    d->x[i] = urand();
    d->x[n + i] = exp(3 * urand());
    d->x[2 * n + i] = cls;
    double ph = cls == 1 ? (double)g / 5 : 0;
    d->y[i] = d->x[n + i] * exp(0.8 * sin(2 * M_PI * (d->x[i] + ph)) + 0.01 * nrand());
  }
}

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median APE of class cls's rows, leaving one group out. */
static double logo_class_ape(rf_data *d, const rf_params *p, int cls) {
  rf_cv_opts o = {.size = sizeof o, .by_group = 1, .coverage = 0.9};
  rf_cv_result r;
  if (rf_cv(d, p, &o, &r)) return -1;
  size_t n = d->n_rows, m = 0;
  double *e = malloc(n * sizeof *e);
  for (size_t i = 0; e && i < n; i++)
    if (d->x[2 * n + i] == cls) e[m++] = fabs(r.pred[i] - d->y[i]) / d->y[i];
  qsort(e, m, sizeof *e, cmp_dbl);
  double med = m ? 100 * (m % 2 ? e[m / 2] : (e[m / 2 - 1] + e[m / 2]) / 2) : -1;
  free(e);
  rf_cv_result_free(&r);
  return med;
}

/*
 * Shrinks per class (file version 8): where the rows carry an opr.class
 * column, each class is moved toward the base as far as answers its own
 * held-out rows best -- a class whose correction no other group tells
 * (class 1 here) toward the base, one whose correction every group shares
 * (class 2) not at all -- where one move for all rows must compromise.
 * The classes survive save and load and a damaged class entry is refused
 * by name.
 */
static void test_class_shrink(void) {
  rf_params p = shrink_params();
  rf_data d;
  make_classes(&d);
  rf_forest *f = NULL, *g = NULL;
  CU_ASSERT_FATAL(rf_train(&d, &p, &f) == 0);
  const rf_info *in = rf_get_info(f);
  CU_ASSERT_FATAL(in->cal_n_keyed == 2);
  printf("\n  class 1 shrink %.3f, class 2 %.3f, one for all %.3f ", in->cal_key_shrink[0],
         in->cal_key_shrink[1], in->cal_shrink);
  CHECK_MSG("two classes, named by their column",
            in->cal_key && !strcmp(in->cal_key, RF_SHRINK_KEY) && in->cal_key_val[0] == 1 &&
                in->cal_key_val[1] == 2);
  CHECK_MSG("the class no other group tells is moved toward the base (>= 0.5)",
            in->cal_key_shrink[0] >= 0.5);
  CHECK_MSG("the class every group shares keeps the forest's answers", in->cal_key_shrink[1] == 0);
  char path[1200];
  tmpfile_path(path, sizeof path, "classes.kcm");
  CU_ASSERT_FATAL(rf_save(f, path) == 0);
  CU_ASSERT_FATAL(rf_load(path, &g) == 0);
  const rf_info *gi = rf_get_info(g);
  CHECK_MSG("the class shrinks survive save and load",
            gi->cal_n_keyed == 2 && gi->cal_key_shrink[0] == in->cal_key_shrink[0] &&
                gi->cal_key_shrink[1] == in->cal_key_shrink[1] &&
                gi->cal_key_toward[0] == in->cal_key_toward[0] && !strcmp(gi->cal_key, in->cal_key));
  double r1[3] = {0.3, 5, 1}, r2[3] = {0.3, 5, 2}, r3[3] = {0.3, 5, 7};
  CHECK_MSG("... and so do the answers of either class and of a class not listed",
            rf_predict(g, r1) == rf_predict(f, r1) && rf_predict(g, r2) == rf_predict(f, r2) &&
                rf_predict(g, r3) == rf_predict(f, r3));
  size_t len;
  unsigned char *img = (unsigned char *)tests_read_file(path, &len);
  CU_ASSERT_FATAL(img != NULL && len > 80);
  uint32_t ver;
  memcpy(&ver, img + 8, 4);
  CHECK_EQ(ver, 8, "a model with class shrinks is written as version 8");
  /* the file ends ... (u32 2, u32 key, (f64 value, f64 shrink, u32
     toward) x 2) for the calibration table, u32 0 for the unseen-GPU
     one, CRC */
  char bad[1300];
  snprintf(bad, sizeof bad, "%s.bad", path);
  double two = 2, one = 1;
  memcpy(img + len - 20, &two, 8);
  fix_crc(img, len);
  CU_ASSERT_EQUAL(load_bytes(bad, img, len), -1);
  CHECK_MSG("a class shrink above 1 is refused by name", ERR_HAS("calibration table: class 2 shrinks 2"));
  memcpy(img + len - 20, &in->cal_key_shrink[1], 8);
  memcpy(img + len - 28, &one, 8);
  fix_crc(img, len);
  CU_ASSERT_EQUAL(load_bytes(bad, img, len), -1);
  CHECK_MSG("a class given twice is refused by name", ERR_HAS("class 1 given twice"));
  memcpy(img + len - 28, &two, 8);
  uint32_t key = 3;
  memcpy(img + len - 52, &key, 4);
  fix_crc(img, len);
  CU_ASSERT_EQUAL(load_bytes(bad, img, len), -1);
  CHECK_MSG("a class column past the features is refused by name", ERR_HAS("class column 3 of 3"));
  free(img);
  rf_free(g);
  rf_free(f);
  double with1 = logo_class_ape(&d, &p, 1), with2 = logo_class_ape(&d, &p, 2);
  setenv("KCAST_GROUP_SHRINK", "1", 1);
  double one1 = logo_class_ape(&d, &p, 1), one2 = logo_class_ape(&d, &p, 2);
  CU_ASSERT_FATAL(rf_train(&d, &p, &f) == 0);
  CHECK_MSG("KCAST_GROUP_SHRINK=1 makes one shrink for all", rf_get_info(f)->cal_n_keyed == 0);
  rf_free(f);
  unsetenv("KCAST_GROUP_SHRINK");
  printf("leave one group out, median APE class 1 %.2f %%, class 2 %.2f %% (one move for all "
         "%.2f %%, %.2f %%) ", with1, with2, one1, one2);
  CHECK_MSG("leaving a group out, the class no other group tells is answered better than by one "
            "move for all (which the other class holds back)",
            with1 >= 0 && with1 < 0.9 * one1);
  CHECK_MSG("... and the class every group shares no worse", with2 >= 0 && with2 <= one2 + 1e-9);
  rf_data_free(&d);
}

/*
 * Calibration for unseen groups (rf_params.calib_groups): the inner folds
 * hold out whole groups, so leave-one-group-out intervals cover near their
 * nominal rate where row-wise calibration, fitted to the error on rows of
 * known groups, falls far short.  The table records how it was made and
 * survives save and load; without labels, or with one group, training
 * refuses by name; allocation failures report "out of memory".
 */
static void test_calibration_for_unseen_groups(void) {
  rf_data d;
  make_groups(&d, 21);
  double rows90 = logo_coverage(&d, 0, 0.9), grp90 = logo_coverage(&d, 1, 0.9);
  double grp50 = logo_coverage(&d, 1, 0.5);
  printf("\n  leave-one-group-out coverage at 0.9: row calibration %.3f, group calibration "
         "%.3f; at 0.5: %.3f ", rows90, grp90, grp50);
  CHECK_MSG("row-wise calibration under-covers unseen groups (< 0.6 at 0.9)", rows90 < 0.6);
  CHECK_MSG("group calibration covers unseen groups near the nominal rate (0.8..1 at 0.9)",
            grp90 >= 0.8);
  CHECK_MSG("group calibration does not just widen everything (0.3..0.75 at 0.5)",
            grp50 > 0.3 && grp50 < 0.75);

  rf_params p = params(20);
  p.extra_trees = 1;
  p.max_features = 0;
  p.calibrate = RF_CALIBRATE_ON;
  p.calib_groups = 1;
  rf_forest *f = NULL, *g = NULL;
  CU_ASSERT_FATAL(rf_train(&d, &p, &f) == 0);
  const rf_info *in = rf_get_info(f);
  CHECK_MSG("the table says: by group, 5 group folds, every row scored",
            in->n_cal == 6 && in->cal_method == RF_CALIB_GROUPS && in->cal_folds == 5 &&
                in->cal_rows == d.n_rows);
  char path[1200];
  tmpfile_path(path, sizeof path, "groups.kcm");
  CU_ASSERT_FATAL(rf_save(f, path) == 0);
  CU_ASSERT_FATAL(rf_load(path, &g) == 0);
  CHECK_MSG("a group-calibrated table survives save and load",
            rf_get_info(g)->cal_method == RF_CALIB_GROUPS && rf_get_info(g)->cal_folds == 5 &&
                rf_get_info(g)->cal_q[3] == in->cal_q[3]);
  rf_free(g);
  rf_free(f);

  /* a bootstrap forest calibrates by group too (not on its OOB rows) */
  p.extra_trees = 0;
  p.bootstrap = 1;
  CU_ASSERT_FATAL(rf_train(&d, &p, &f) == 0);
  CHECK_EQ(rf_get_info(f)->cal_method, RF_CALIB_GROUPS, "a bootstrap forest calibrates by group");
  rf_free(f);
  f = NULL;

  int ok = 1, succeeded = 0;
  p.n_trees = 3;
  for (long k = 1; k < 4000 && !succeeded; k++) {
    rf_test_fail_alloc(k);
    int rc = rf_train(&d, &p, &f);
    rf_test_fail_alloc(0);
    if (rc) ok &= strcmp(rf_last_error(), "out of memory") == 0;
    else succeeded = rf_get_info(f)->cal_method == RF_CALIB_GROUPS;
    rf_free(f);
    f = NULL;
  }
  CHECK_MSG("every failing allocation in a group calibration reports 'out of memory'",
            ok && succeeded);

  for (size_t i = 0; i < d.n_rows; i++) {  /* one group */
    free(d.groups[i]);
    d.groups[i] = strdup("same");
  }
  CHECK_EQ(rf_train(&d, &p, &f), -1, "one group cannot calibrate for unseen groups");
  CHECK_MSG("... and says so", strstr(rf_last_error(), "at least 2 groups") != NULL);
  for (size_t i = 0; i < d.n_rows; i++) free(d.groups[i]);
  free(d.groups);
  d.groups = NULL;
  CHECK_EQ(rf_train(&d, &p, &f), -1, "no group labels: refused");
  CHECK_MSG("... naming what is missing", strstr(rf_last_error(), "needs group labels") != NULL);
  rf_data_free(&d);

  /* the CLI: kcast train --calibrate-groups, kcast model info */
  char dir[1024], csv[1200], model[1200], cmd[4096];
  CU_ASSERT_FATAL(tests_tmpdir(dir, sizeof dir, "rfgrp") != NULL);
  snprintf(csv, sizeof csv, "%s/groups.csv", dir);
  snprintf(model, sizeof model, "%s/groups.kcm", dir);
  make_groups(&d, 22);
  char *text = malloc(80 * d.n_rows + 64);
  CU_ASSERT_FATAL(text != NULL);
  size_t len = (size_t)sprintf(text, "app,x0,x1,y\n");
  for (size_t i = 0; i < d.n_rows; i++)
    len += (size_t)sprintf(text + len, "%s,%.17g,%.17g,%.17g\n", d.groups[i], d.x[i],
                           d.x[d.n_rows + i], d.y[i]);
  CU_ASSERT_FATAL(tests_write_file(csv, text, len) == 0);
  free(text);
  rf_data_free(&d);
  char *out = NULL, *err = NULL;
  snprintf(cmd, sizeof cmd, "%s train --csv %s --target y --group app --extra-trees --trees 10 "
           "--calibrate-groups -o %s && %s model info %s", tests_kcast(), csv, model,
           tests_kcast(), model);
  CHECK_EQ(tests_run(cmd, &out, &err), 0, "train --calibrate-groups succeeds");
  CHECK_MSG("train and model info say the table is for unseen groups",
            out && strstr(out, "on 720 group-held-out rows") &&
                strstr(out, "calibrated (CQR) for unseen groups: 720 rows held out by group in 5 "
                            "group folds"));
  free(out);
  free(err);
  snprintf(cmd, sizeof cmd, "%s train --csv %s --target y --ignore app --calibrate-groups -o %s",
           tests_kcast(), csv, model);
  CHECK_MSG("without --group the CLI refuses with one error naming the need",
            tests_run(cmd, &out, &err) == 1 && err && strstr(err, "group labels"));
  free(out);
  free(err);
}

/* kcast train --calibrate / --no-calibrate, kcast model info's table and
   kcast cv --calibrate. */
static void test_cli_calibration(void) {
  char dir[1024], csv[1200], model[1200], cmd[4096];
  CU_ASSERT_FATAL(tests_tmpdir(dir, sizeof dir, "rfcal") != NULL);
  snprintf(csv, sizeof csv, "%s/het.csv", dir);
  snprintf(model, sizeof model, "%s/het.kcm", dir);
  rf_data d;
  make_hetero(&d, 300, 8);
  char *text = malloc(64 * 300 + 64);
  CU_ASSERT_FATAL(text != NULL);
  size_t len = (size_t)sprintf(text, "x0,x1,y\n");
  for (size_t i = 0; i < d.n_rows; i++)
    len += (size_t)sprintf(text + len, "%.17g,%.17g,%.17g\n", d.x[i], d.x[d.n_rows + i], d.y[i]);
  CU_ASSERT_FATAL(tests_write_file(csv, text, len) == 0);
  free(text);
  rf_data_free(&d);
  char *out = NULL, *err = NULL;
  snprintf(cmd, sizeof cmd, "%s train --csv %s --target y --extra-trees --min-leaf 1 --trees 20 "
           "--calibrate -o %s", tests_kcast(), csv, model);
  CHECK_EQ(tests_run(cmd, &out, &err), 0, "train --calibrate succeeds");
  CHECK_MSG("train says the intervals are calibrated on held-out rows",
            out && strstr(out, "intervals calibrated on 300 held-out rows"));
  free(out);
  free(err);
  snprintf(cmd, sizeof cmd, "%s model info %s", tests_kcast(), model);
  CHECK_EQ(tests_run(cmd, &out, &err), 0, "model info reads a calibrated model");
  CHECK_MSG("model info says how the model was calibrated",
            out && strstr(out, "calibrated (CQR) on 300 held-out rows of an inner 5-fold CV"));
  CHECK_MSG("model info shows the table", out && strstr(out, "calibration  coverage -> widening q:") &&
                                              strstr(out, " 0.9 +") && strstr(out, " 0.99 "));
  free(out);
  free(err);
  snprintf(cmd, sizeof cmd, "%s train --csv %s --target y --trees 10 --no-calibrate -o %s && "
           "%s model info %s", tests_kcast(), csv, model, tests_kcast(), model);
  CHECK_EQ(tests_run(cmd, &out, &err), 0, "train --no-calibrate succeeds");
  CHECK_MSG("--no-calibrate leaves a random forest uncalibrated",
            out && strstr(out, "intervals    uncalibrated") && !strstr(out, "intervals calibrated"));
  free(out);
  free(err);
  snprintf(cmd, sizeof cmd, "%s cv --csv %s --target y --extra-trees --min-leaf 1 --trees 20 "
           "--calibrate --folds 3 --format json", tests_kcast(), csv);
  CHECK_EQ(tests_run(cmd, &out, &err), 0, "cv --calibrate succeeds");
  CHECK_MSG("cv --calibrate reports a coverage", out && strstr(out, "\"coverage\":0."));
  free(out);
  free(err);
}

static void test_permutation_importance(void) {
  rf_data tr, te;
  make_data(&tr, 1500, 0.1, 10);
  make_data(&te, 500, 0.1, 11);
  rf_params p = params(30);
  p.perm_importance = 1;
  rf_forest *f = NULL;
  CU_ASSERT_FATAL(rf_train(&tr, &p, &f) == 0);
  const rf_info *in = rf_get_info(f);
  CU_ASSERT_PTR_NOT_NULL_FATAL(in->perm);
  CHECK_MSG("OOB permutation importance: x0 > x1 > every noise feature",
                    in->perm[0] > in->perm[1] && in->perm[1] > in->perm[2] &&
                        in->perm[1] > in->perm[3] && in->perm[1] > in->perm[4]);
  double imp[5];
  CU_ASSERT_FATAL(rf_permutation_importance(f, &te, 3, 2, imp) == 0);
  CHECK_MSG("held-out permutation importance ranks x0 first and noise near 0",
                    imp[0] > imp[1] && imp[1] > 10 * fabs(imp[3]));
  rf_free(f);
  rf_data_free(&tr);
  rf_data_free(&te);
}

static void test_metrics_known_values(void) {
  double y[] = {1, 2, 3, 4}, pr[] = {1.1, 1.8, 3.3, 4}, lo[] = {0, 0, 3.5, 3}, hi[] = {2, 3, 4, 5};
  rf_metrics m;
  CU_ASSERT_FATAL(rf_metrics_compute(y, pr, lo, hi, 4, &m) == 0);
  CU_ASSERT_DOUBLE_EQUAL(m.mape, 7.5, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(m.median_ape, 10, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(m.spearman, 1, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(m.coverage, 0.75, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(m.r2, 1 - (0.01 + 0.04 + 0.09) / 5.0, 1e-12);
  double l = sqrt((pow(log(1.1), 2) + pow(log(0.9), 2) + pow(log(1.1), 2)) / 4);
  CU_ASSERT_DOUBLE_EQUAL(m.rmse_log, l, 1e-12);
  double rev[] = {4, 3, 2, 1};
  rf_metrics_compute(y, rev, NULL, NULL, 4, &m);
  CU_ASSERT_DOUBLE_EQUAL(m.spearman, -1, 1e-12);
  CHECK_MSG("no intervals: coverage is NaN", isnan(m.coverage));
}

/* Kendall's tau-b by the definition, O(n^2). */
static double kendall_naive(const double *a, const double *b, size_t n) {
  double c = 0, d = 0, ta = 0, tb = 0;
  for (size_t i = 0; i < n; i++)
    for (size_t j = i + 1; j < n; j++) {
      double x = (a[i] > a[j]) - (a[i] < a[j]), y = (b[i] > b[j]) - (b[i] < b[j]);
      if (x == 0 && y == 0) continue;
      if (x == 0) { ta++; continue; }
      if (y == 0) { tb++; continue; }
      if (x == y) c++; else d++;
    }
  return (c - d) / sqrt((c + d + ta) * (c + d + tb));
}

/* rf_outside: the training ranges a model keeps, and a row beyond them. */
static void test_training_ranges(void) {
  rf_data d;
  make_data(&d, 300, 0.1, 5);
  rf_params p = params(20);
  rf_forest *f = NULL;
  CU_ASSERT_FATAL(rf_train(&d, &p, &f) == 0);
  double in[5] = {0.5, 0.5, 0.5, 0.5, 0.5}, out[5] = {0.5, 0.5, 0.5, 0.5, 0.5};
  size_t k = 9;
  CHECK_MSG("a row inside every training range is not flagged",
            rf_outside(f, in, &k) == -1 && k == 0);
  out[0] = 3.0; /* x0 drives y: the forest splits on it */
  long j = rf_outside(f, out, &k);
  CHECK_MSG("x0 three times its largest training value is flagged, by its index",
            j == 0 && k == 1);
  out[1] = -2.0;
  j = rf_outside(f, out, &k);
  CHECK_MSG("two features outside: both counted, the more important one named",
            k == 2 && j == (rf_get_info(f)->mdi[0] >= rf_get_info(f)->mdi[1] ? 0 : 1));
  char path[1200];
  tmpfile_path(path, sizeof path, "ranges.kcm");
  rf_forest *g = NULL;
  CU_ASSERT_FATAL(rf_save(f, path) == 0 && rf_load(path, &g) == 0);
  CHECK_MSG("the ranges survive the model file (version 4)",
            rf_outside(g, out, &k) == j && k == 2 && rf_outside(g, in, NULL) == -1);
  rf_free(f);
  rf_free(g);
  rf_data_free(&d);
}

static void test_ranking_metrics(void) {
  /* a tuner's view: the row predicted fastest (index 2, 1.0) measures 6,
     the best measured is 3 (index 0); of the five predicted fastest
     (2, 4, 1, 0, 5) the best measures 3 */
  double y[] = {3, 5, 6, 9, 4, 8, 7}, pr[] = {4, 2, 1, 9, 1.5, 5, 8};
  rf_metrics m;
  CU_ASSERT_FATAL(rf_metrics_compute(y, pr, NULL, NULL, 7, &m) == 0);
  CHECK_MSG("top-1 regret: the measured value of the row predicted lowest over the best (6/3)",
            fabs(m.top1_regret - 2.0) < 1e-12);
  CHECK_MSG("top-5 regret: the best measured among the five predicted lowest over the best (3/3)",
            fabs(m.top5_regret - 1.0) < 1e-12);
  CHECK_MSG("Kendall's tau equals the definition's pair count",
            fabs(m.kendall - kendall_naive(y, pr, 7)) < 1e-12);
  double tied[] = {1, 1, 5, 5, 5, 2, 3};
  CU_ASSERT_FATAL(rf_metrics_compute(y, tied, NULL, NULL, 7, &m) == 0);
  CHECK_MSG("top-1 regret with a tie at the lowest prediction is the tied rows' mean ((3+5)/2/3)",
            fabs(m.top1_regret - 4.0 / 3.0) < 1e-12);
  CHECK_MSG("Kendall's tau-b with ties in the predictions equals the definition's",
            fabs(m.kendall - kendall_naive(y, tied, 7)) < 1e-12);
  /* random rows with many ties on both sides */
  size_t n = 500;
  double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
  uint64_t st = 12345;
  for (size_t i = 0; i < n; i++) {
    st = st * 6364136223846793005ULL + 1442695040888963407ULL;
    a[i] = (double)(st >> 60) + 1;
    st = st * 6364136223846793005ULL + 1442695040888963407ULL;
    b[i] = (double)(st >> 59) + a[i] * 0.5;
  }
  CU_ASSERT_FATAL(rf_metrics_compute(a, b, NULL, NULL, n, &m) == 0);
  CHECK_MSG("Kendall's tau-b of 500 tied rows: the merge-sort count equals the O(n^2) one",
            fabs(m.kendall - kendall_naive(a, b, n)) < 1e-12);
  CHECK_MSG("predicting the measured values exactly: tau 1, regrets 1",
            rf_metrics_compute(y, y, NULL, NULL, 7, &m) == 0 && fabs(m.kendall - 1) < 1e-12 &&
                m.top1_regret == 1 && m.top5_regret == 1);
  double neg[] = {1, -2, 3};
  CHECK_MSG("regrets are NaN when a measured value is not positive",
            rf_metrics_compute(neg, neg, NULL, NULL, 3, &m) == 0 && isnan(m.top1_regret) &&
                isnan(m.top5_regret));
  double same[] = {2, 2, 2};
  CHECK_MSG("tau is NaN when the predictions are constant",
            rf_metrics_compute(y, same, NULL, NULL, 3, &m) == 0 && isnan(m.kendall));
  free(a);
  free(b);
}

static void test_cross_validation(void) {
  rf_data d;
  make_data(&d, 900, 0.1, 12);
  d.groups = calloc(d.n_rows, sizeof(char *));
  for (size_t i = 0; i < d.n_rows; i++) d.groups[i] = strdup(i % 3 == 0 ? "a" : i % 3 == 1 ? "b" : "c");
  rf_params p = params(20);
  rf_cv_opts o = {.size = sizeof o, .folds = 4};
  rf_cv_result r;
  CU_ASSERT_FATAL(rf_cv(&d, &p, &o, &r) == 0);
  CU_ASSERT_EQUAL(r.n_folds, 4);
  CHECK_MSG("4-fold CV on a smooth function: R^2 > 0.9", r.overall.r2 > 0.9);
  size_t tot = 0;
  for (unsigned k = 0; k < r.n_folds; k++) tot += r.fold[k].n;
  CHECK_EQ(tot, d.n_rows, "every row is predicted out of fold exactly once");
  CU_ASSERT_EQUAL(r.n_groups, 3);
  CU_ASSERT_STRING_EQUAL(r.groups[0].name, "a");
  CU_ASSERT_EQUAL(r.groups[1].m.n, 300);
  rf_cv_result_free(&r);

  o.by_group = 1;
  o.search = 1;
  CU_ASSERT_FATAL(rf_cv(&d, &p, &o, &r) == 0);
  CHECK_EQ(r.n_folds, 3, "leave-one-group-out has one fold per group");
  int in_grid = 1;
  for (unsigned k = 0; k < r.n_folds; k++)
    in_grid &= (r.fold_leaf[k] == 1 || r.fold_leaf[k] == 5 || r.fold_leaf[k] == 10) &&
               r.fold_mf[k] > 0.3 && r.fold_mf[k] <= 1;
  CHECK_MSG("search picks from the documented grid", in_grid);
  CHECK_MSG("coverage is reported", r.overall.coverage > 0.5);
  rf_cv_result_free(&r);
  o.folds = 1000;
  o.by_group = 0;
  o.search = 0;
  CU_ASSERT_EQUAL(rf_cv(&d, &p, &o, &r), -1);
  CHECK_MSG("more folds than rows is refused", ERR_HAS("folds"));
  rf_data_free(&d);
}

static int load_csv_text(const char *text, rf_csv_opts *o, rf_data *d, char *path, size_t cap) {
  tmpfile_path(path, cap, "in.csv");
  CU_ASSERT_FATAL(tests_write_file(path, text, strlen(text)) == 0);
  return rf_data_load_csv(d, path, o);
}

static void test_csv_loader(void) {
  char path[1200], want[1400];
  rf_data d;
  rf_csv_opts o = {.size = sizeof o, .target = "t", .group = "app", .ignore = "junk"};
  CU_ASSERT_FATAL(load_csv_text("a,app,t,junk,b\n1,x,10,q,2\n3,y,20,r,4\n5,x,30,s,6\n", &o, &d, path, sizeof path) == 0);
  CU_ASSERT_EQUAL(d.n_rows, 3);
  CHECK_EQ(d.n_cols, 2, "group, target and ignored columns are not features");
  CU_ASSERT_STRING_EQUAL(d.names[1], "b");
  CU_ASSERT_DOUBLE_EQUAL(d.x[1 * 3 + 2], 6, 0);
  CU_ASSERT_DOUBLE_EQUAL(d.y[1], 20, 0);
  CU_ASSERT_STRING_EQUAL(d.groups[1], "y");
  rf_data_free(&d);

  rf_csv_opts o2 = {.size = sizeof o2, .target = "t"};
  CU_ASSERT_EQUAL(load_csv_text("a,t\n1,2\nabc,3\n", &o2, &d, path, sizeof path), -1);
  snprintf(want, sizeof want, "%s:3: column a: 'abc' is not a number", path);
  CHECK_STR(rf_last_error(), want, "a text cell names FILE:LINE, column and value");
  CU_ASSERT_EQUAL(load_csv_text("a,t\n1,2\nnan,3\n", &o2, &d, path, sizeof path), -1);
  CHECK_MSG("NaN cells are refused", ERR_HAS(":3: column a: 'nan' is not a finite number"));
  CU_ASSERT_EQUAL(load_csv_text("a,t\n1,2\n", &o2, &d, path, sizeof path), -1);
  CHECK_MSG("one row is too few", ERR_HAS("only one data row"));
  CU_ASSERT_EQUAL(load_csv_text("a,t\n", &o2, &d, path, sizeof path), -1);
  CHECK_MSG("a header alone has no data rows", ERR_HAS("no data rows"));
  CU_ASSERT_EQUAL(load_csv_text("", &o2, &d, path, sizeof path), -1);
  CHECK_MSG("an empty file is named as such", ERR_HAS("empty file"));
  CU_ASSERT_EQUAL(load_csv_text("a,b\n1,2\n3,4\n", &o2, &d, path, sizeof path), -1);
  CHECK_MSG("a missing target column is named", ERR_HAS("no column 't' (the target)"));
  CU_ASSERT_EQUAL(load_csv_text("a,t\n1,2\n3\n", &o2, &d, path, sizeof path), -1);
  CHECK_MSG("a short record is refused with its line", ERR_HAS(":3: 1 fields, the header has 2"));

  o2.drop_constant = 1;
  CU_ASSERT_FATAL(load_csv_text("a,c,t\n1,7,2\n3,7,4\n", &o2, &d, path, sizeof path) == 0);
  CHECK_EQ(d.n_cols, 1, "--drop-constant removes the constant column");
  CU_ASSERT_EQUAL(d.n_extra, 1);
  CU_ASSERT_STRING_EQUAL(d.extra[0], "c");
  rf_data_free(&d);

  const char *keep[] = {"b", "a"};
  rf_csv_opts o3 = {.size = sizeof o3, .no_target = 1, .keep = keep, .n_keep = 2};
  CU_ASSERT_FATAL(load_csv_text("a,name,b\n1,zz,2\n", &o3, &d, path, sizeof path) == 0);
  CHECK_MSG("a keep list loads columns in its own order, skipping text columns",
                    d.n_cols == 2 && d.x[0] == 2 && d.x[1] == 1 && d.n_extra == 1);
  rf_data_free(&d);
  const char *keep2[] = {"a", "zz"};
  o3.keep = keep2;
  CU_ASSERT_EQUAL(load_csv_text("a,b\n1,2\n", &o3, &d, path, sizeof path), -1);
  CHECK_MSG("a missing model feature is named", ERR_HAS("missing feature column 'zz'"));
}

static void test_allocation_failures_are_reported(void) {
  rf_data d;
  make_data(&d, 200, 0.1, 13);
  rf_params p = params(4);
  p.perm_importance = 1;
  char path[1200];
  tmpfile_path(path, sizeof path, "alloc.kcm");
  int ok = 1, succeeded = 0;
  for (long k = 1; k < 400 && !succeeded; k++) {
    rf_forest *f = NULL;
    rf_test_fail_alloc(k);
    int rc = rf_train(&d, &p, &f);
    if (rc == 0) rc = rf_save(f, path);
    rf_test_fail_alloc(0);
    if (rc) ok &= strcmp(rf_last_error(), "out of memory") == 0;
    else succeeded = 1;
    rf_free(f);
  }
  CHECK_MSG("every failing allocation in training and saving reports 'out of memory'", ok);
  CHECK_MSG("training succeeds once allocations stop failing", succeeded);
  rf_params e = params(3);
  e.extra_trees = 1;
  e.calibrate = RF_CALIBRATE_ON;
  ok = 1;
  succeeded = 0;
  for (long k = 1; k < 3000 && !succeeded; k++) {
    rf_forest *f = NULL;
    rf_test_fail_alloc(k);
    int rc = rf_train(&d, &e, &f);
    rf_test_fail_alloc(0);
    if (rc) ok &= strcmp(rf_last_error(), "out of memory") == 0;
    else succeeded = rf_get_info(f)->n_cal > 0;
    rf_free(f);
  }
  CHECK_MSG("every failing allocation in an inner-CV calibration reports 'out of memory'",
            ok && succeeded);
  ok = 1;
  succeeded = 0;
  for (long k = 1; k < 200 && !succeeded; k++) {
    rf_forest *f = NULL;
    rf_test_fail_alloc(k);
    int rc = rf_load(path, &f);
    rf_test_fail_alloc(0);
    if (rc) ok &= strcmp(rf_last_error(), "out of memory") == 0;
    else succeeded = 1;
    rf_free(f);
  }
  CHECK_MSG("every failing allocation in loading reports 'out of memory'", ok && succeeded);
  rf_data_free(&d);
}

static void test_dedispersion_data(void) {
  const char *path = "../shared/data/tuning-dedispersion/A100.csv";
  FILE *fp = fopen(path, "r");
  if (!fp) {
    fprintf(stderr, "\n  (skipped: %s not present)\n", path);
    return;
  }
  fclose(fp);
  rf_data d;
  rf_csv_opts o = {.size = sizeof o, .target = "time_ms_median", .ignore = "time_ms_mean,repeats"};
  CU_ASSERT_FATAL(rf_data_load_csv(&d, path, &o) == 0);
  CU_ASSERT_EQUAL(d.n_rows, 11130);
  CU_ASSERT_EQUAL(d.n_cols, 8);
  rf_params p = params(30);
  p.transform = RF_TRANSFORM_LOG;
  rf_cv_opts co = {.size = sizeof co, .folds = 3};
  rf_cv_result r;
  CU_ASSERT_FATAL(rf_cv(&d, &p, &co, &r) == 0);
  CHECK_MSG("dedispersion A100, 3-fold CV: median APE below 5 %", r.overall.median_ape < 5);
  CHECK_MSG("and Spearman above 0.8", r.overall.spearman > 0.8);
  rf_cv_result_free(&r);
  rf_data_free(&d);
}

/*
 * The fast prediction layout (cache-blocked 8-byte nodes with float
 * thresholds, the row rounded up to float, trees walked eight at a time)
 * must give exactly what the plain walk over the 16-byte nodes gives: the
 * same point (sum in tree order) and the same interval, for every row and
 * both kinds of forest.  The same forest is asked before and after its
 * fast layout is dropped (rf__free_fast), which forces the plain walk.
 */
static void test_fast_prediction_matches_plain_walk(void) {
  rf_data tr, te;
  make_data(&tr, 1500, 0.3, 21);
  make_data(&te, 400, 0.3, 22);
  /* rows off the training grid, and a NaN, which goes left everywhere */
  te.x[0] = NAN;
  te.x[te.n_rows + 1] = 1e300;
  te.x[2] = -1e300;
  size_t n = te.n_rows;
  double *fast = malloc(4 * n * sizeof *fast), *row = malloc(5 * sizeof *row);
  CU_ASSERT_PTR_NOT_NULL_FATAL(fast);
  CU_ASSERT_PTR_NOT_NULL_FATAL(row);
  for (int extra = 0; extra < 2; extra++) {
    rf_params p = params(40);
    p.extra_trees = extra;
    p.min_leaf = 1;
    rf_forest *f = NULL;
    CU_ASSERT_FATAL(rf_train(&tr, &p, &f) == 0);
    CHECK_MSG("a trained forest has the fast layout", f->cn != NULL);
    CHECK_MSG("its leaves carry their samples' offset and count (direct leaf codes)",
              f->cdirect);
    CHECK_MSG("its one-sample leaves' samples are their means as floats", f->csolo);
    for (int pass = 0; pass < 4; pass++) {
      if (pass == 1) f->csolo = 0; /* the samples from the tree's array */
      if (pass == 2) { /* leaves coded by number, samples through leaf_off */
        rf__leaf_numbers = 1;
        CU_ASSERT_FATAL(rf__build_fast(f) == 0);
        rf__leaf_numbers = 0;
        CHECK_MSG("the test hook turns the direct leaf codes off", f->cn && !f->cdirect);
      }
      if (pass == 3) rf__free_fast(f); /* from here on: the 16-byte walk */
      size_t same = 0;
      for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < 5; j++) row[j] = te.x[j * n + i];
        double r[4] = {rf_predict(f, row), NAN, NAN, NAN};
        CU_ASSERT_FATAL(rf_predict_interval(f, row, 0.9, &r[1], &r[2], &r[3]) == 0);
        if (pass == 0) memcpy(fast + 4 * i, r, sizeof r);
        else same += memcmp(fast + 4 * i, r, sizeof r) == 0;
        if (pass == 0) same += memcmp(&r[0], &r[1], sizeof r[0]) == 0;
      }
      CHECK_MSG(pass == 0   ? "rf_predict and rf_predict_interval give the same point on every row"
                : pass == 1 ? "samples read from the trees give the solo leaves' interval"
                : pass == 2 ? "leaves coded by number give the direct codes' point and interval"
                            : "the fast layout gives the plain walk's point and interval on every row",
                same == n);
    }
    rf_free(f);
  }
  free(row);
  free(fast);
  rf_data_free(&tr);
  rf_data_free(&te);
}

/* The walk's key of v by its definition: the smallest float >= v (NaN
   stays NaN), -0 as +0, its bits ordered as unsigned integers; NaN 0. */
static uint32_t key_by_definition(double v) {
  if (v != v) return 0;
  float x = (float)v;
  if ((double)x < v) x = nextafterf(x, INFINITY);
  x += 0.0f;
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u >> 31 ? ~u : u | 0x80000000u;
}

/* rf__row_keys (branch-free, four at a time) against the definition on
   any bit patterns, floats and doubles near floats, special values, and
   every length 0..9 (the vector loop's tail). */
static void test_row_keys_match_definition(void) {
  enum { N = 4096 };
  static double x[N];
  static uint32_t k[N + 1];
  uint64_t s = 0x9E3779B97F4A7C15ull;
  size_t bad = 0, checked = 0;
  for (int round = 0; round < 200; round++) {
    for (size_t j = 0; j < N; j++) {
      s ^= s << 13, s ^= s >> 7, s ^= s << 17;
      uint32_t fu = (uint32_t)(s >> 32);
      float f;
      memcpy(&f, &fu, sizeof f);
      double d = (double)f;
      switch (s & 3) {
      case 0: memcpy(&d, &s, sizeof d); break; /* any double */
      case 1: break;                           /* a float */
      default: {                               /* near a float */
        uint64_t du;
        memcpy(&du, &d, sizeof du);
        du += (uint64_t)((int64_t)(s >> 8 & 0x3fffffff) - 0x1fffffff);
        memcpy(&d, &du, sizeof d);
      }
      }
      x[j] = d;
    }
    static const double special[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, -NAN, 1e-320, -1e-320,
                                     3.4028235677973366e38, -3.4028235677973366e38,
                                     1.401298464324817e-45, 7e-46, -7e-46, 1.0, -1.0, 1e300};
    if (round == 10) /* the first of full length */
      for (size_t j = 0; j < sizeof special / sizeof special[0]; j++) x[j * 3] = special[j];
    size_t len = round < 10 ? (size_t)round : N;
    k[len] = 0xDEADBEEFu;
    rf__row_keys(x, len, k);
    for (size_t j = 0; j < len; j++) bad += k[j] != key_by_definition(x[j]);
    bad += k[len] != 0xDEADBEEFu; /* nothing past the end written */
    checked += len;
  }
  CHECK_MSG("rf__row_keys equals the definition on every value (and writes n keys only)",
            bad == 0 && checked > 700000);
}

/*
 * The QRF quantiles of a few samples (at most SEL_COPY, model/rf_calib.c)
 * are selected on a copy of them; the selection on the leaves' runs must
 * give the same intervals bit for bit, at every coverage, for one-sample
 * leaves (their samples from the means) and leaves of several samples,
 * through the fast layout and the 16-byte walk.
 */
static void test_few_samples_copy_matches_runs(void) {
  rf_data tr, te;
  make_data(&tr, 800, 0.3, 31);
  make_data(&te, 200, 0.3, 32);
  size_t n = te.n_rows;
  static const double cov[] = {0.05, 0.5, 0.8, 0.9, 0.99};
  double row[5];
  for (int kind = 0; kind < 3; kind++) {
    /* 100 one-sample leaves: coverages whose quantiles lie more than
       SEL_TAIL samples inside take select_keys */
    rf_params p = params(kind == 0 ? 100 : 30);
    p.extra_trees = kind != 2;
    p.min_leaf = kind == 0 ? 1 : 3; /* solo leaves; 3+ samples (ET); bootstrap */
    rf_forest *f = NULL;
    CU_ASSERT_FATAL(rf_train(&tr, &p, &f) == 0);
    for (int walk = 0; walk < 2; walk++) {
      if (walk) rf__free_fast(f);
      size_t same = 0, same_keys = 0, total = 0, differ_by_cov = 0;
      for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < 5; j++) row[j] = te.x[j * n + i];
        double prev_lo = NAN;
        for (size_t c = 0; c < sizeof cov / sizeof cov[0]; c++) {
          double a[3], b[3];
          CU_ASSERT_FATAL(rf_predict_interval(f, row, cov[c], &a[0], &a[1], &a[2]) == 0);
          rf__sel_runs = 1;
          CU_ASSERT_FATAL(rf_predict_interval(f, row, cov[c], &b[0], &b[1], &b[2]) == 0);
          rf__sel_runs = 0;
          same += memcmp(a, b, sizeof a) == 0;
          /* equal weights (one-sample leaves): order statistics against
             select_keys on the same copy */
          rf__sel_keys = 1;
          CU_ASSERT_FATAL(rf_predict_interval(f, row, cov[c], &b[0], &b[1], &b[2]) == 0);
          rf__sel_keys = 0;
          same_keys += memcmp(a, b, sizeof a) == 0;
          rf__sel_scalar = 1; /* order_stat instead of the SSE4.1 tails */
          CU_ASSERT_FATAL(rf_predict_interval(f, row, cov[c], &b[0], &b[1], &b[2]) == 0);
          rf__sel_scalar = 0;
          same_keys += memcmp(a, b, sizeof a) == 0;
          differ_by_cov += c && a[1] != prev_lo;
          prev_lo = a[1];
          total++;
        }
      }
      CHECK_MSG(kind == 0   ? "one-sample leaves: the copy's intervals are the runs' bit for bit"
                : kind == 1 ? "leaves of several samples: the copy's intervals are the runs'"
                            : "bootstrap leaves: the copy's intervals are the runs'",
                same == total);
      CHECK_MSG("the coverages give different intervals (the check sees the quantiles)",
                differ_by_cov > n);
      CHECK_MSG("the order statistics of equal weights are select_keys's bit for bit",
                same_keys == 2 * total);
    }
    rf_free(f);
  }
  rf_data_free(&tr);
  rf_data_free(&te);
}

/*
 * More samples than SEL_COPY: the quantiles merge the leaves' runs from
 * their ends (merge_tails, model/rf_calib.c) where the targets lie near
 * them, and select on the runs otherwise; both must give select_runs's
 * intervals bit for bit at every coverage (0.05: targets near the middle,
 * past the merge's reach).  A leaf out of key order (-0 after +0) turns
 * the merge off for the forest.
 */
static void test_merged_tails_match_runs(void) {
  rf_data tr, te;
  make_data(&tr, 1500, 0.3, 41);
  make_data(&te, 150, 0.3, 42);
  size_t n = te.n_rows;
  static const double cov[] = {0.05, 0.5, 0.8, 0.9, 0.95, 0.99};
  double row[5];
  rf_params p = params(60);
  p.extra_trees = 1;
  p.min_leaf = 6; /* leaves of 6-11 samples: 60 trees vote with ~400 */
  rf_forest *f = NULL;
  CU_ASSERT_FATAL(rf_train(&tr, &p, &f) == 0);
  CHECK_MSG("the forest has the fast layout and sorted leaves", f->cn && f->csorted);
  size_t same = 0, total = 0, moved = 0;
  for (size_t i = 0; i < n; i++) {
    for (size_t j = 0; j < 5; j++) row[j] = te.x[j * n + i];
    double prev[3] = {NAN, NAN, NAN};
    for (size_t c = 0; c < sizeof cov / sizeof cov[0]; c++) {
      double a[3], b[3];
      CU_ASSERT_FATAL(rf_predict_interval(f, row, cov[c], &a[0], &a[1], &a[2]) == 0);
      rf__sel_merge_off = 1;
      CU_ASSERT_FATAL(rf_predict_interval(f, row, cov[c], &b[0], &b[1], &b[2]) == 0);
      rf__sel_merge_off = 0;
      same += memcmp(a, b, sizeof a) == 0;
      moved += c && (a[1] != prev[1] || a[2] != prev[2]);
      memcpy(prev, a, sizeof a);
      total++;
    }
  }
  CHECK_MSG("merged tails give select_runs's intervals bit for bit", same == total);
  CHECK_MSG("the coverages move the bounds (the check sees the quantiles)", moved > n * 4);
  /* a leaf of several samples given -0 after +0 (equal floats, keys out
     of order): the rebuilt layout turns the merge off */
  int done = 0;
  for (size_t t = 0; t < f->n_trees && !done; t++) {
    rf_tree *tt = &f->trees[t];
    for (uint32_t k = 0; k < tt->n_leaves && !done; k++)
      if (tt->leaf_off[k + 1] - tt->leaf_off[k] >= 2) {
        tt->values[tt->leaf_off[k]] = 0.0f;
        tt->values[tt->leaf_off[k] + 1] = -0.0f;
        done = 1;
      }
  }
  CU_ASSERT_FATAL(done);
  CU_ASSERT_FATAL(rf__build_fast(f) == 0);
  CHECK_MSG("a leaf out of key order: no merge", f->cn && !f->csorted);
  rf_free(f);
  rf_data_free(&tr);
  rf_data_free(&te);
}

/*
 * Thresholds at the limit of float precision: training values 1 and the
 * next double above it can only be split at the float 1.0, and a row of
 * that next double (which rounds to 1.0f to nearest) must still go right.
 * Values 0.1 and the next double have no float between them: the forest
 * keeps the double threshold (and the 16-byte walk); both answers exact.
 */
static void test_split_exact_at_float_precision(void) {
  const double lo[2] = {1.0, 0.1};
  for (int c = 0; c < 2; c++) {
    rf_data d;
    CU_ASSERT_FATAL(rf_data_alloc(&d, 20, 1, 1) == 0);
    d.names[0] = strdup("x");
    d.target = strdup("y");
    double hi = nextafter(lo[c], 2.0);
    for (size_t i = 0; i < 20; i++) {
      d.x[i] = i % 2 ? hi : lo[c];
      d.y[i] = i % 2 ? 10 : 0;
    }
    rf_params p = params(1);
    p.max_features = 1;
    p.min_leaf = 1;
    p.bootstrap = 0;
    rf_forest *f = NULL;
    CU_ASSERT_FATAL(rf_train(&d, &p, &f) == 0);
    CHECK_MSG("the lower value goes left (leaf mean 0)", rf_predict(f, &lo[c]) == 0);
    CHECK_MSG("the next double up goes right (leaf mean 10)", rf_predict(f, &hi) == 10);
    double below = nextafter(lo[c], 0.0);
    CHECK_MSG("a value below both goes left", rf_predict(f, &below) == 0);
    rf_free(f);
    rf_data_free(&d);
  }
}

/*
 * `--features mangrove` (cli/cmd_train.c): a table of launch/op/class
 * columns becomes GPU Mangrove's twelve features, and a table without the
 * launch configuration is refused by name.
 */
static void test_cli_mangrove_features(void) {
  char dir[1024], csv[1200], bad[1200], model[1200], cmd[4096];
  CU_ASSERT_FATAL(tests_tmpdir(dir, sizeof dir, "rfmg") != NULL);
  snprintf(csv, sizeof csv, "%s/mg.csv", dir);
  snprintf(bad, sizeof bad, "%s/bad.csv", dir);
  snprintf(model, sizeof model, "%s/mg.kcm", dir);
  char text[8192];
  size_t len = (size_t)snprintf(text, sizeof text,
                                "launch.block_x,launch.block_y,launch.block_z,launch.ctas,"
                                "op.ld.global.v4.f32,op.add.f32,class.fp32,t\n");
  for (int i = 1; i <= 40; i++)
    len += (size_t)snprintf(text + len, sizeof text - len, "%d,2,1,%d,%d,%d,%d,%d\n", 32 * (i % 4 + 1),
                            i, 10 * i, 7 * i, 7 * i, 100 + 16 * 10 * i);
  CU_ASSERT_FATAL(tests_write_file(csv, text, len) == 0);
  const char *badtext = "op.add.f32,t\n1,2\n2,3\n3,4\n";
  CU_ASSERT_FATAL(tests_write_file(bad, badtext, strlen(badtext)) == 0);
  snprintf(cmd, sizeof cmd, "%s train --csv %s --target t --features mangrove --trees 5 -o %s",
           tests_kcast(), csv, model);
  char *out = NULL, *err = NULL;
  CHECK_EQ(tests_run(cmd, &out, &err), 0, "train --features mangrove succeeds on launch/op/class columns");
  free(out);
  free(err);
  snprintf(cmd, sizeof cmd, "%s model importance %s", tests_kcast(), model);
  CHECK_EQ(tests_run(cmd, &out, &err), 0, "the model's importance lists its features");
  CHECK_MSG("the model is trained on mg.global_bytes",
            out && strstr(out, "mg.global_bytes") != NULL);
  CHECK_MSG("the model is trained on mg.arith_intensity",
            out && strstr(out, "mg.arith_intensity") != NULL);
  CHECK_MSG("the raw op.* columns are gone", out && strstr(out, "op.add.f32") == NULL);
  free(out);
  free(err);
  snprintf(cmd, sizeof cmd, "%s train --csv %s --target t --features mangrove -o %s", tests_kcast(),
           bad, model);
  CHECK_EQ(tests_run(cmd, &out, &err), 1, "a table without launch columns is refused (exit 1)");
  CHECK_MSG("the refusal names the file and the missing columns",
            err && strstr(err, "bad.csv") && strstr(err, "launch.block_x"));
  free(out);
  free(err);
}

/* --features FAMILY,...: only the columns of the listed families (the part
   of a name before its first dot) are features; an unknown family is a
   usage error and a selection that leaves no column is refused. */
static void test_cli_feature_families(void) {
  char dir[1024], csv[1200], model[1200], cmd[4096];
  CU_ASSERT_FATAL(tests_tmpdir(dir, sizeof dir, "rffam") != NULL);
  snprintf(csv, sizeof csv, "%s/fam.csv", dir);
  snprintf(model, sizeof model, "%s/fam.kcm", dir);
  char text[8192];
  size_t len = (size_t)snprintf(text, sizeof text, "launch.ctas,op.add.f32,class.fp32,mem.global_bytes,t\n");
  for (int i = 1; i <= 40; i++)
    len += (size_t)snprintf(text + len, sizeof text - len, "%d,%d,%d,%d,%d\n", i, 3 * i, 3 * i,
                            (i * 37) % 11, 10 * i);
  CU_ASSERT_FATAL(tests_write_file(csv, text, len) == 0);
  char *out = NULL, *err = NULL;
  snprintf(cmd, sizeof cmd, "%s train --csv %s --target t --features launch,class --trees 5 -o %s",
           tests_kcast(), csv, model);
  CHECK_EQ(tests_run(cmd, &out, &err), 0, "train --features launch,class succeeds");
  free(out);
  free(err);
  snprintf(cmd, sizeof cmd, "%s model importance %s", tests_kcast(), model);
  CHECK_EQ(tests_run(cmd, &out, &err), 0, "the model's importance lists its features");
  CHECK_MSG("launch.ctas is a feature", out && strstr(out, "launch.ctas") != NULL);
  CHECK_MSG("class.fp32 is a feature", out && strstr(out, "class.fp32") != NULL);
  CHECK_MSG("op.* is not selected", out && strstr(out, "op.add.f32") == NULL);
  CHECK_MSG("mem.* is not selected", out && strstr(out, "mem.global_bytes") == NULL);
  free(out);
  free(err);
  snprintf(cmd, sizeof cmd, "%s train --csv %s --target t --features launch,bogus -o %s",
           tests_kcast(), csv, model);
  CHECK_EQ(tests_run(cmd, &out, &err), 1, "a family no column has is an error (exit 1)");
  CHECK_MSG("the error names the family and the file", err && strstr(err, "bogus") && strstr(err, csv));
  free(out);
  free(err);
  snprintf(cmd, sizeof cmd, "%s train --csv %s --target t --features 'launch,a-b' -o %s",
           tests_kcast(), csv, model);
  CHECK_EQ(tests_run(cmd, &out, &err), 2, "a family that is not a word is a usage error (exit 2)");
  free(out);
  free(err);
  snprintf(cmd, sizeof cmd, "%s train --csv %s --target t --features ctrl -o %s", tests_kcast(),
           csv, model);
  CHECK_EQ(tests_run(cmd, &out, &err), 1, "a selection with no column is refused (exit 1)");
  CHECK_MSG("the refusal names the file and the families",
            err && strstr(err, "fam.csv") && strstr(err, "ctrl"));
  free(out);
  free(err);
}

/* ------------------------------------------------------ base feature -- */

/* y = b x (1 + x0): b spans 1..10 in training; a forest of log(y/b)
   predicts b = 100 within a few percent, a plain log forest cannot leave
   the training range. */
static void test_base_feature_extrapolates(void) {
  size_t n = 400;
  rf_data d;
  lcg_state = 5;
  CU_ASSERT_FATAL(rf_data_alloc(&d, n, 2, 1) == 0);
  d.names[0] = strdup("x0");
  d.names[1] = strdup("base");
  d.target = strdup("y");
  for (size_t i = 0; i < n; i++) {
    d.x[i] = urand();
    d.x[n + i] = 1 + 9 * urand();
    d.y[i] = d.x[n + i] * (1 + d.x[i]);
  }
  rf_params p = params(50);
  p.extra_trees = 1;
  p.max_features = 0;
  p.min_leaf = 1;
  p.transform = RF_TRANSFORM_LOG;
  p.base_feature = 1;
  rf_forest *f = NULL, *plain = NULL, *g = NULL;
  CU_ASSERT_FATAL(rf_train(&d, &p, &f) == 0);
  p.base_feature = -1;
  CU_ASSERT_FATAL(rf_train(&d, &p, &plain) == 0);
  double row[2] = {0.5, 100}, want = 150, pr, lo, hi;
  CU_ASSERT_FATAL(rf_predict_interval(f, row, 0.9, &pr, &lo, &hi) == 0);
  CHECK_MSG("with the base, b = 100 (10x past the training range) is predicted within 5 %",
            fabs(pr - want) / want < 0.05 && lo <= pr && pr <= hi);
  CHECK_MSG("rf_predict agrees with the interval's point", fabs(rf_predict(f, row) - pr) < 1e-9 * pr);
  CHECK_MSG("without it the forest stays near the training maximum (y <= 20)",
            rf_predict(plain, row) < 21);
  char path[1200];
  tmpfile_path(path, sizeof path, "base.kcm");
  CU_ASSERT_FATAL(rf_save(f, path) == 0);
  CU_ASSERT_FATAL(rf_load(path, &g) == 0);
  CHECK_MSG("the base feature survives save and load",
            rf_get_info(g)->params.base_feature == 1 && rf_predict(g, row) == rf_predict(f, row));
  row[1] = 0;
  CHECK_MSG("a row whose base is 0 is refused by name",
            rf_predict_interval(g, row, 0.9, &pr, NULL, NULL) == -1 &&
                strstr(rf_last_error(), "base") && strstr(rf_last_error(), "positive"));
  CHECK_MSG("rf_predict says NaN for it", isnan(rf_predict(g, row)));
  d.x[n + 7] = -1;
  CHECK_MSG("a batch names the first row whose base is not positive",
            rf_predict_batch(g, &d, 0.9, d.y, NULL, NULL, 2) == -1 && strstr(rf_last_error(), "row 8"));
  p.base_feature = 1;
  rf_forest *bad = NULL;
  CHECK_MSG("training refuses a row whose base is not positive, by row and column",
            rf_train(&d, &p, &bad) == -1 && strstr(rf_last_error(), "row 8") &&
                strstr(rf_last_error(), "base"));
  p.transform = RF_TRANSFORM_NONE;
  d.x[n + 7] = 1;
  CHECK_MSG("a base needs the log transform", rf_train(&d, &p, &bad) == -1);
  rf_free(f);
  rf_free(plain);
  rf_free(g);
  rf_data_free(&d);
}

/* A forest with a base shrinks an answer beyond its training ranges
   toward the median of log(y / base) (rf_range.c): y = b exp(2 x0) with x0
   in [0, 1) and a noise column; x0 = 5 lies far out, and the answer's
   log(y / b) moves from the edge leaves' (about 2) by w^2 of the way to
   the median (about 1), w the share of the importance on x0.  Rows in
   range are answered as without it, bit for bit; the median is kept in
   the model file (version 6), and a version-4 file loads without it. */
static void test_extrapolation_shrinks(void) {
  size_t n = 500;
  rf_data d;
  lcg_state = 17;
  CU_ASSERT_FATAL(rf_data_alloc(&d, n, 3, 1) == 0);
  d.names[0] = strdup("x0");
  d.names[1] = strdup("noise");
  d.names[2] = strdup("base");
  d.target = strdup("y");
  double *ly = malloc(n * sizeof *ly);
  for (size_t i = 0; i < n; i++) {
    d.x[i] = urand();
    d.x[n + i] = urand();
    d.x[2 * n + i] = 1 + 9 * urand();
    d.y[i] = d.x[2 * n + i] * exp(2 * d.x[i]);
    ly[i] = log(d.y[i]) - log(d.x[2 * n + i]);
  }
  qsort(ly, n, sizeof *ly, rf__cmp_double);
  double med = 0.5 * (ly[n / 2 - 1] + ly[n / 2]);
  rf_params p = params(40);
  p.transform = RF_TRANSFORM_LOG;
  p.base_feature = 2;
  rf_forest *f = NULL, *g = NULL, *old = NULL;
  CU_ASSERT_FATAL(rf_train(&d, &p, &f) == 0);
  CHECK_MSG("the model keeps the training median of log(y / base)", fabs(f->base_med - med) < 1e-12);

  double in[3] = {0.5, 0.5, 4}, m = rf__raw_mean(f, in);
  CHECK_MSG("a row in range is answered as the forest's mean, bit for bit",
            rf_predict(f, in) == exp(m + log(4.0)));
  double out[3] = {5, 0.5, 4}, pr, lo, hi;
  m = rf__raw_mean(f, out);
  CU_ASSERT_FATAL(rf_predict_interval(f, out, 0.9, &pr, &lo, &hi) == 0);
  double tot = 0;
  for (size_t j = 0; j < 3; j++) tot += f->mdi[j] > 0 ? f->mdi[j] : 0;
  double w = f->mdi[0] / tot, got = log(pr / 4);
  CHECK_MSG("x0 carries most of the importance", w > 0.8);
  CHECK_MSG("the edge leaves answer about 2, the median is about 1", m > 1.7 && fabs(med - 1) < 0.15);
  CHECK_MSG("x0 = 5 is answered w^2 of the way from the edge leaves to the median",
            fabs(got - (m + w * w * (med - m))) < 1e-9);
  CHECK_MSG("its interval moves with it", lo <= pr && pr <= hi && log(hi / 4) < m + 0.5);
  CHECK_MSG("rf_predict agrees", fabs(rf_predict(f, out) - pr) < 1e-12 * pr);
  double bp;
  rf_data one;
  size_t sel0 = 0;
  CU_ASSERT_FATAL(rf__subset(&d, &sel0, 1, &one) == 0);
  for (size_t j = 0; j < 3; j++) one.x[j] = out[j];
  CHECK_MSG("so does the batch",
            rf_predict_batch(f, &one, 0.9, &bp, NULL, NULL, 1) == 0 && fabs(bp - pr) < 1e-12 * pr);
  rf_data_free(&one);

  char path[1200], path4[1200];
  tmpfile_path(path, sizeof path, "shrink.kcm");
  tmpfile_path(path4, sizeof path4, "shrink4.kcm");
  CU_ASSERT_FATAL(rf_save(f, path) == 0);
  size_t len;
  unsigned char *b = (unsigned char *)tests_read_file(path, &len);
  CU_ASSERT_FATAL(b != NULL && len > 40);
  CHECK_MSG("written as version 6", b[8] == 6);
  CU_ASSERT_FATAL(rf_load(path, &g) == 0);
  CHECK_MSG("the median survives save and load, and so does the answer",
            g->base_med == f->base_med && rf_predict(g, out) == rf_predict(f, out));
  /* the version 6 tail: u32 adaptations (0), f64 median, then the CRC */
  uint32_t na;
  double bm;
  memcpy(&na, b + len - 16, 4);
  memcpy(&bm, b + len - 12, 8);
  CHECK_MSG("the tail is no adaptations and the median", na == 0 && bm == f->base_med);
  double nan_ = NAN;
  memcpy(b + len - 12, &nan_, 8);
  fix_crc(b, len);
  CHECK_MSG("a NaN median is refused by name",
            load_bytes(path4, b, len) == -1 && ERR_HAS("extrapolation median"));
  /* the same model as version 4: without the tail of 12 bytes */
  memcpy(b + len - 12, &bm, 8);
  unsigned char *b4 = malloc(len - 12);
  memcpy(b4, b, len - 16);
  b4[8] = 4;
  uint64_t L;
  memcpy(&L, b4 + 16, 8);
  L -= 12;
  memcpy(b4 + 16, &L, 8);
  fix_crc(b4, len - 12);
  CU_ASSERT_FATAL(tests_write_file(path4, b4, len - 12) == 0);
  CU_ASSERT_FATAL(rf_load(path4, &old) == 0);
  CHECK_MSG("a version 4 file loads without the median and answers the edge leaves",
            isnan(old->base_med) && fabs(log(rf_predict(old, out) / 4) - m) < 1e-12 &&
                rf_predict(old, in) == rf_predict(f, in));
  free(b4);
  free(b);
  free(ly);
  rf_free(f);
  rf_free(g);
  rf_free(old);
  rf_data_free(&d);
}

/* The second table: a model of several groups (GPUs) calibrated for a
   group it has not seen widens more than for the ones it has. */
static void test_unseen_calibration(void) {
  rf_data d;
  make_groups(&d, 33);
  rf_params p = params(30);
  p.extra_trees = 1;
  p.max_features = 0;
  p.min_leaf = 1;
  p.calibrate = RF_CALIBRATE_ON;
  rf_forest *f = NULL, *g = NULL;
  CU_ASSERT_FATAL(rf_train(&d, &p, &f) == 0);
  CHECK_MSG("no unseen table until one is made", rf_get_info(f)->n_cal_unseen == 0);
  CU_ASSERT_FATAL(rf_calibrate_unseen(f, &d, d.groups, 2) == 0);
  const rf_info *in = rf_get_info(f);
  CHECK_MSG("the unseen table scored every row in group folds",
            in->n_cal_unseen == in->n_cal && in->cal_unseen_rows == d.n_rows && in->cal_unseen_folds == 5);
  CHECK_MSG("it widens more than the table of seen rows", in->cal_unseen_q[3] > in->cal_q[3]);
  double row[2] = {0.5, 0.5}, p0, l0, h0, p1, l1, h1;
  CU_ASSERT_FATAL(rf_predict_interval_on(f, row, 0.9, 0, &p0, &l0, &h0) == 0);
  CU_ASSERT_FATAL(rf_predict_interval_on(f, row, 0.9, 1, &p1, &l1, &h1) == 0);
  CHECK_MSG("same point, a wider interval for an unseen GPU", p0 == p1 && h1 - l1 > h0 - l0);
  char path[1200];
  tmpfile_path(path, sizeof path, "unseen.kcm");
  CU_ASSERT_FATAL(rf_save(f, path) == 0);
  CU_ASSERT_FATAL(rf_load(path, &g) == 0);
  CHECK_MSG("the unseen table survives save and load",
            rf_get_info(g)->n_cal_unseen == in->n_cal_unseen &&
                rf_get_info(g)->cal_unseen_q[3] == in->cal_unseen_q[3]);
  for (size_t i = 0; i < d.n_rows; i++) {
    free(d.groups[i]);
    d.groups[i] = strdup("one");
  }
  CHECK_MSG("one group cannot make it", rf_calibrate_unseen(f, &d, d.groups, 2) == -1);
  rf_free(f);
  rf_free(g);
  rf_data_free(&d);
}

/* rf_search picks by the error users read: on a noise-free step function
   small leaves win; the choice is one of the grid's. */
static void test_search_picks_small_leaves(void) {
  size_t n = 300;
  rf_data d;
  lcg_state = 9;
  CU_ASSERT_FATAL(rf_data_alloc(&d, n, 3, 1) == 0);
  d.names[0] = strdup("a");
  d.names[1] = strdup("b");
  d.names[2] = strdup("c");
  d.target = strdup("y");
  for (size_t i = 0; i < n; i++) {
    for (size_t j = 0; j < 3; j++) d.x[j * n + i] = urand();
    d.y[i] = 1 + (d.x[i] > 0.5) * 4 + floor(d.x[n + i] * 8);
  }
  rf_params p = params(50), best;
  p.min_leaf = 8; /* a poor start the search must leave */
  double ape = -1;
  CU_ASSERT_FATAL(rf_search(&d, &p, 0, &best, &ape) == 0);
  CHECK_MSG("the search leaves min_leaf 8 for a smaller leaf", best.min_leaf < 8);
  CHECK_MSG("it keeps the caller's tree count and reports its inner median APE",
            best.n_trees == 50 && ape >= 0 && ape < 5);
  rf_data_free(&d);
}

/* The CSV loader keeps text columns (named, by content, and the ignored
   ones on request), reads ignore patterns, and empty count cells. */
static double zero_for_counts(const char *c) { return !strncmp(c, "op.", 3) ? 0 : NAN; }

static void test_csv_text_columns(void) {
  char path[1200];
  tmpfile_path(path, sizeof path, "text.csv");
  const char *csv = "key,gpu,tune.a,tune.b,op.x,y\n"
                    "\"1,2\",T4,1,2,,3\n"
                    "k2,H200,3,4,5,6\n"
                    "k3,T4,5,6,7,9\n";
  CU_ASSERT_FATAL(tests_write_file(path, csv, strlen(csv)) == 0);
  rf_data d;
  rf_csv_opts o = {.size = sizeof o, .target = "y", .ignore = "tune.*", .text = "gpu",
                   .text_auto = 1, .text_ignored = 1, .empty_value = zero_for_counts};
  CU_ASSERT_FATAL(rf_data_load_csv(&d, path, &o) == 0);
  CHECK_MSG("one feature is left: op.x (tune.* ignored, key and gpu text)",
            d.n_cols == 1 && !strcmp(d.names[0], "op.x"));
  CHECK_MSG("an empty count cell reads as the callback's 0", d.x[0] == 0 && d.x[1] == 5);
  long k = rf_data_text_col(&d, "key"), g = rf_data_text_col(&d, "gpu"), t = rf_data_text_col(&d, "tune.a");
  CHECK_MSG("text columns: the named one, the one holding text, the ignored ones",
            g >= 0 && k >= 0 && t >= 0 && d.n_text == 4);
  CHECK_MSG("their values are kept per row", k >= 0 && !strcmp(d.text[k][0], "1,2") &&
                                              g >= 0 && !strcmp(d.text[g][1], "H200") &&
                                              t >= 0 && !strcmp(d.text[t][2], "5"));
  CHECK_MSG("the column found by its content is flagged", k >= 0 && d.text_auto[k] && !d.text_auto[g]);
  rf_data_free(&d);
  o.ignore = "nothing*";
  CHECK_MSG("a pattern that matches no column is an error naming it",
            rf_data_load_csv(&d, path, &o) == -1 && strstr(rf_last_error(), "nothing*"));
  o.ignore = NULL;
  o.empty_value = NULL;
  o.text_auto = 0;
  o.text = NULL;
  CHECK_MSG("without text_auto a text cell is an error naming file:line and the column",
            rf_data_load_csv(&d, path, &o) == -1 && strstr(rf_last_error(), ":2: column key"));
}

TEST_SUITES(rf_suites) {
  CU_pSuite s = tests_suite("rf");
  TEST_ADD(s, test_forest_learns_known_function);
  TEST_ADD(s, test_log_target_predicts_geometric_mean);
  TEST_ADD(s, test_model_identical_for_any_thread_count);
  TEST_ADD(s, test_partition_matches_two_pointer_replay);
  TEST_ADD(s, test_fast_training_paths_match_plain);
  TEST_ADD(s, test_save_load_round_trip);
  TEST_ADD(s, test_damaged_files_are_refused_by_name);
  TEST_ADD(s, test_intervals_cover_nominal_rate);
  TEST_ADD(s, test_batch_equals_single_rows_bit_for_bit);
  TEST_ADD(s, test_batch_key_strides);
  TEST_ADD(s, test_calibration_reaches_nominal_coverage);
  TEST_ADD(s, test_calibration_widens_by_the_table);
  TEST_ADD(s, test_calibration_for_unseen_groups);
  TEST_ADD(s, test_calibration_prior_for_few_groups);
  TEST_ADD(s, test_calibration_counts_groups);
  TEST_ADD(s, test_group_shrink);
  TEST_ADD(s, test_class_shrink);
  TEST_ADD(s, test_cli_calibration);
  TEST_ADD(s, test_permutation_importance);
  TEST_ADD(s, test_metrics_known_values);
  TEST_ADD(s, test_ranking_metrics);
  TEST_ADD(s, test_training_ranges);
  TEST_ADD(s, test_cross_validation);
  TEST_ADD(s, test_csv_loader);
  TEST_ADD(s, test_allocation_failures_are_reported);
  TEST_ADD(s, test_dedispersion_data);
  TEST_ADD(s, test_fast_prediction_matches_plain_walk);
  TEST_ADD(s, test_few_samples_copy_matches_runs);
  TEST_ADD(s, test_merged_tails_match_runs);
  TEST_ADD(s, test_row_keys_match_definition);
  TEST_ADD(s, test_cli_feature_families);
  TEST_ADD(s, test_split_exact_at_float_precision);
  TEST_ADD(s, test_cli_mangrove_features);
  TEST_ADD(s, test_base_feature_extrapolates);
  TEST_ADD(s, test_extrapolation_shrinks);
  TEST_ADD(s, test_unseen_calibration);
  TEST_ADD(s, test_search_picks_small_leaves);
  TEST_ADD(s, test_csv_text_columns);
}
