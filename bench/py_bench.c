/*
 * py_bench.c -- the C side of the Python package's figures (make bench,
 * BENCHES=py; py_bench.py prints both): on one model and one CSV of rows,
 * kcast_predict's latency on a prepared feature set, and the rows per
 * second of kcast_predict_batch and kcast_predict_matrix on 2 threads.
 *   py_bench MODEL ROWS.csv     (ROWS.csv: a header of feature names, numbers)
 * Prints "c_predict_ns N", "c_batch_rows_per_s N", "c_matrix_rows_per_s N".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kcast.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  if (argc != 3) { fprintf(stderr, "usage: py_bench MODEL ROWS.csv\n"); return 2; }
  kcast_model *m = NULL;
  if (kcast_model_load(argv[1], &m)) { fprintf(stderr, "%s\n", kcast_last_error()); return 1; }
  FILE *f = fopen(argv[2], "r");
  if (!f) { perror(argv[2]); return 1; }
  static char line[1 << 16];
  if (!fgets(line, sizeof line, f)) return 1;
  char *names[512];
  size_t nc = 0;
  for (char *t = strtok(line, ",\n"); t && nc < 512; t = strtok(NULL, ",\n")) names[nc++] = strdup(t);
  size_t cap = 1024, n = 0;
  double *x = malloc(cap * nc * sizeof *x);
  while (fgets(line, sizeof line, f)) {
    if (n == cap) x = realloc(x, (cap *= 2) * nc * sizeof *x);
    char *p = line;
    for (size_t j = 0; j < nc; j++) x[n * nc + j] = strtod(p, &p), p += *p == ',';
    n++;
  }
  fclose(f);
  kcast_features **fs = malloc(n * sizeof *fs);
  for (size_t i = 0; i < n; i++) {
    kcast_features_new(&fs[i]);
    for (size_t j = 0; j < nc; j++) kcast_features_set(fs[i], names[j], x[i * nc + j]);
  }
  kcast_prediction p, *out = malloc(n * sizeof *out);
  double best = 1e30;
  for (int rep = 0; rep < 20; rep++) {
    size_t calls = 20000;
    double t0 = now(), sink = 0;
    for (size_t i = 0; i < calls; i++) {
      kcast_predict(m, fs[i % n], 0.9, &p);
      sink += p.value;
    }
    double t = (now() - t0) / (double)calls * 1e9;
    if (t < best) best = t;
    if (sink < 0) puts("");
  }
  printf("c_predict_ns %.1f\n", best);
  if (getenv("PY_BENCH_LATENCY_ONLY")) return 0;
  double bb = 0, bm = 0, *pr = malloc(n * 3 * sizeof *pr);
  const char **nm = (const char **)names;
  for (int rep = 0; rep < 5; rep++) {
    double t0 = now();
    for (int k = 0; k < 5; k++) kcast_predict_batch(m, (const kcast_features *const *)fs, n, 0.9, out);
    double r = 5.0 * (double)n / (now() - t0);
    if (r > bb) bb = r;
    t0 = now();
    for (int k = 0; k < 5; k++)
      kcast_predict_matrix(m, NULL, x, n, nc, nc, nm, 0.9, pr, pr + n, pr + 2 * n, 2);
    r = 5.0 * (double)n / (now() - t0);
    if (r > bm) bm = r;
  }
  printf("c_batch_rows_per_s %.0f\nc_matrix_rows_per_s %.0f\n", bb, bm);
  return 0;
}
