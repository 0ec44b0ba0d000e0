/*
 * cmd_report.c -- `kcast report`: one self-contained HTML file that shows
 * how good the predictions are, for a dataset and a model or for a
 * cross-validation run (`kcast cv --predictions FILE`).
 *
 * What it draws (inline SVG, no script, no style sheet or font from
 * anywhere, so it opens offline and prints as it shows):
 *   1. predicted against measured on log-log axes, each point with its
 *      interval as a vertical bar, the diagonal and the 2x band;
 *   2. the error by application and by GPU (median and mean APE bars);
 *   3. the interval coverage against the nominal (a model is asked at
 *      several nominal levels; a CV run has the one it was run at);
 *   4. the model's feature importance (impurity, top 20), with --model;
 *   5. the dataset's work per launch (thread-instructions: the sum of the
 *      class.* counts), a histogram on a log axis, with a dataset.
 * Every plot has a title, labelled axes and units.  Sizes: at most
 * MAX_POINTS points are drawn (every k-th row, said under the plot);
 * the figures above each plot use every row.
 *
 * Inputs: `DB --model MODEL` predicts every measured launch of DB for the
 * model's target on the model's GPUs, loading the rows as `kcast train`
 * does (cli_rf_load: the same derived features, per row's GPU); `--cv
 * FILE` reads cv's predictions (measured, predicted, lo, hi and the key
 * columns app and gpu when present).  The file is written whole or not
 * at all (cli_out).
 */
#include "cli/cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "datasets/ds.h"
#include "include/kcast.h"
#include "model/model.h"

const char cmd_report_usage[] =
    "usage: kcast report DB --model MODEL [--gpu G[,G...]] [-o FILE.html]\n"
    "       kcast report --cv PREDICTIONS.csv [DB] [--model MODEL] [--coverage C]\n"
    "                    [--unit UNIT] [-o FILE.html]\n"
    "\n"
    "Write one self-contained HTML file (inline SVG; no script, nothing fetched)\n"
    "showing the predictions against the measurements: predicted vs measured on\n"
    "log-log axes with the intervals, the error by application and by GPU, the\n"
    "interval coverage against the nominal, the model's feature importance and\n"
    "the dataset's work per launch (thread-instructions).\n"
    "\n"
    "  DB              a kcast dataset: with --model (and no --cv) every launch\n"
    "                  measured on the model's GPUs is predicted; with --cv it\n"
    "                  gives the work-per-launch histogram\n"
    "  --model MODEL   the model to evaluate (DB mode) or whose importance to show\n"
    "  --gpu G,...     with DB: the GPUs to predict for (default: the model's)\n"
    "  --cv FILE       the predictions of 'kcast cv --predictions FILE'\n"
    "  --coverage C    nominal interval coverage (0.9; for --cv: what cv ran with)\n"
    "  --unit UNIT     unit of the measured values for the axes: one of ns, us,\n"
    "                  ms, s, W, mW, J, mJ, and never one that contradicts the\n"
    "                  data (DB mode: ns, W or J from the target; --cv: the unit\n"
    "                  cv recorded in the file)\n"
    "  --title TEXT    the report's title\n"
    "  -o FILE         the HTML file to write (report.html)\n"
    "\n"
    "Exit status: 0 ok, 1 bad input, 2 bad command line.\n";

#define MAX_POINTS 20000

typedef struct report {
  const char *title, *source, *target, *unit;
  size_t n;                      /* rows */
  const double *y, *pred, *lo, *hi;
  const char *const *app;        /* n labels or NULL */
  const char *const *gpu;        /* n labels or NULL; gpu1 names all when NULL */
  const char *gpu1;
  double nominal;
  size_t ncov;
  double cov_nom[8], cov_obs[8];
  size_t nimp;
  const char *const *imp_name;
  const double *imp;
  size_t nwork;
  double *work;                  /* per launch, > 0 */
  const char *work_what;
  int in_sample;                 /* DB mode: the model may have seen the rows */
} report;

/* ---------------------------------------------------------- html text -- */

static void esc(FILE *f, const char *s) {
  for (; s && *s; s++) {
    switch (*s) {
      case '<': fputs("&lt;", f); break;
      case '>': fputs("&gt;", f); break;
      case '&': fputs("&amp;", f); break;
      case '"': fputs("&quot;", f); break;
      default: fputc(*s, f);
    }
  }
}

static double ape(double y, double p) { return y != 0 ? 100 * fabs(p - y) / fabs(y) : NAN; }

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, size_t n) {
  if (!n) return NAN;
  qsort(v, n, sizeof *v, cmp_d);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* --------------------------------------------------------------- plots -- */

/* Plot area inside a W x H SVG. */
enum { W = 640, H = 420, ML = 80, MR = 20, MT = 40, MB = 60 };

static void svg_open(FILE *f, const char *id, const char *title, int h) {
  fprintf(f, "<svg id=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
          "viewBox=\"0 0 %d %d\" role=\"img\">\n<title>", id, W, h, W, h);
  esc(f, title);
  fprintf(f, "</title>\n<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n"
          "<text x=\"%d\" y=\"22\" font-size=\"15\" text-anchor=\"middle\" "
          "font-weight=\"bold\">", W, h, W / 2);
  esc(f, title);
  fputs("</text>\n", f);
}

static void axis_labels(FILE *f, const char *xl, const char *yl, int h) {
  fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"13\" text-anchor=\"middle\">", ML + (W - ML - MR) / 2,
          h - 15);
  esc(f, xl);
  fprintf(f, "</text>\n<text x=\"18\" y=\"%d\" font-size=\"13\" text-anchor=\"middle\" "
          "transform=\"rotate(-90 18 %d)\">", MT + (h - MT - MB) / 2, MT + (h - MT - MB) / 2);
  esc(f, yl);
  fputs("</text>\n", f);
}

/* Decades [lo, hi] covering v's positive values (at least one). */
static void decades(const double *a, const double *b, const double *c, size_t n, int *lo, int *hi) {
  double mn = INFINITY, mx = -INFINITY;
  const double *v[3] = {a, b, c};
  for (int k = 0; k < 3; k++)
    for (size_t i = 0; v[k] && i < n; i++)
      if (v[k][i] > 0 && isfinite(v[k][i])) {
        if (v[k][i] < mn) mn = v[k][i];
        if (v[k][i] > mx) mx = v[k][i];
      }
  if (!(mn <= mx)) mn = 1, mx = 10;
  *lo = (int)floor(log10(mn));
  *hi = (int)ceil(log10(mx));
  if (*hi <= *lo) *hi = *lo + 1;
}

static void scatter(FILE *f, const report *r) {
  char title[256], xl[256], yl[256];
  snprintf(title, sizeof title, "Predicted vs measured %s, %zu rows", r->target, r->n);
  snprintf(xl, sizeof xl, "measured %s (%s, log scale)", r->target, r->unit);
  snprintf(yl, sizeof yl, "predicted %s (%s, log scale)", r->target, r->unit);
  svg_open(f, "scatter", title, H);
  int lo, hi;
  decades(r->y, r->pred, NULL, r->n, &lo, &hi);
  double pw = W - ML - MR, ph = H - MT - MB;
#define SX(v) (ML + (log10(v) - lo) / (hi - lo) * pw)
#define SY(v) (MT + ph - (log10(v) - lo) / (hi - lo) * ph)
  fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" stroke=\"#444\"/>\n",
          ML, MT, pw, ph);
  for (int d = lo; d <= hi; d++) {
    double v = pow(10, d);
    fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#ddd\"/>"
            "<text x=\"%.1f\" y=\"%.0f\" font-size=\"11\" text-anchor=\"middle\">1e%d</text>\n",
            SX(v), MT, SX(v), MT + ph, SX(v), MT + ph + 16, d);
    fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
            "<text x=\"%d\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">1e%d</text>\n",
            ML, SY(v), ML + pw, SY(v), ML - 6, SY(v) + 4, d);
  }
  /* the diagonal and the 2x band */
  double a = pow(10, lo), b = pow(10, hi);
  fprintf(f, "<line class=\"diag\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000\"/>\n",
          SX(a), SY(a), SX(b), SY(b));
  fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\" "
          "stroke-dasharray=\"4 3\"/>\n", SX(a), SY(2 * a), SX(b / 2), SY(b));
  fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\" "
          "stroke-dasharray=\"4 3\"/>\n", SX(2 * a), SY(a), SX(b), SY(b / 2));
  size_t step = r->n > MAX_POINTS ? (r->n + MAX_POINTS - 1) / MAX_POINTS : 1;
  fputs("<g class=\"points\">\n", f);
  for (size_t i = 0; i < r->n; i += step) {
    double y = r->y[i], p = r->pred[i];
    if (!(y > 0 && p > 0)) continue;
    double l = r->lo ? r->lo[i] : NAN, h = r->hi ? r->hi[i] : NAN;
    if (l > 0 && h > 0)
      fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#9cc3e6\"/>", SX(y),
              SY(fmax(l, a)), SX(y), SY(fmin(h, b)));
    fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.2\" fill=\"#1f5f9f\"/>\n", SX(y), SY(p));
  }
  fputs("</g>\n", f);
#undef SX
#undef SY
  axis_labels(f, xl, yl, H);
  fputs("</svg>\n", f);
  if (step > 1) fprintf(f, "<p class=\"note\">Every %zu-th row is drawn (%zu rows).</p>\n", step, r->n);
}

/* Horizontal bars: n labels with up to two values (median, mean APE). */
static void bars(FILE *f, const char *id, const char *title, const char *xl, char **names,
                 const double *v1, const double *v2, size_t n, const char *l1, const char *l2) {
  int h = MT + MB + (int)n * 22 + 10;
  svg_open(f, id, title, h);
  double mx = 0;
  for (size_t i = 0; i < n; i++) {
    if (isfinite(v1[i]) && v1[i] > mx) mx = v1[i];
    if (v2 && isfinite(v2[i]) && v2[i] > mx) mx = v2[i];
  }
  if (!(mx > 0)) mx = 1;
  int left = 170;
  double pw = W - left - MR - 50;
  for (size_t i = 0; i < n; i++) {
    double y = MT + 10 + 22.0 * (double)i;
    fprintf(f, "<text x=\"%d\" y=\"%.0f\" font-size=\"11\" text-anchor=\"end\">", left - 6, y + 13);
    char shown[40];
    snprintf(shown, sizeof shown, "%.36s%s", names[i], strlen(names[i]) > 36 ? "..." : "");
    esc(f, shown);
    fputs("</text>", f);
    double w1 = isfinite(v1[i]) ? v1[i] / mx * pw : 0;
    fprintf(f, "<rect class=\"bar\" x=\"%d\" y=\"%.0f\" width=\"%.1f\" height=\"%d\" fill=\"#1f5f9f\"/>"
            "<text x=\"%.1f\" y=\"%.0f\" font-size=\"10\">%.3g</text>", left, y + 1, w1, v2 ? 9 : 18,
            left + w1 + 4, y + 9, v1[i]);
    if (v2) {
      double w2 = isfinite(v2[i]) ? v2[i] / mx * pw : 0;
      fprintf(f, "<rect class=\"bar\" x=\"%d\" y=\"%.0f\" width=\"%.1f\" height=\"9\" fill=\"#e6a23c\"/>"
              "<text x=\"%.1f\" y=\"%.0f\" font-size=\"10\">%.3g</text>", left, y + 10, w2,
              left + w2 + 4, y + 18, v2[i]);
    }
    fputc('\n', f);
  }
  fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#444\"/>\n", left, MT, left, h - MB + 6);
  if (l1) {
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"#1f5f9f\"/><text x=\"%d\" "
            "y=\"%d\" font-size=\"11\">%s</text>\n", left, h - MB + 14, left + 14, h - MB + 23, l1);
    if (l2)
      fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"#e6a23c\"/><text x=\"%d\" "
              "y=\"%d\" font-size=\"11\">%s</text>\n", left + 150, h - MB + 14, left + 164, h - MB + 23,
              l2);
  }
  fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"13\" text-anchor=\"middle\">", left + (int)pw / 2, h - 12);
  esc(f, xl);
  fputs("</text>\n</svg>\n", f);
}

/* Error per label (app or gpu): median and mean APE; -1 out of memory. */
static int error_by(FILE *f, const report *r, const char *const *lab, const char *id,
                    const char *what) {
  char **names = calloc(r->n + 1, sizeof *names);
  size_t *cnt = calloc(r->n + 1, sizeof *cnt), nl = 0;
  double *med = calloc(r->n + 1, sizeof *med), *mean = calloc(r->n + 1, sizeof *mean),
         *tmp = malloc((r->n + 1) * sizeof *tmp);
  int rc = -1;
  if (!names || !cnt || !med || !mean || !tmp) goto out;
  for (size_t i = 0; i < r->n; i++) {
    const char *l = lab ? (lab[i] ? lab[i] : "") : r->gpu1;
    size_t k = 0;
    while (k < nl && strcmp(names[k], l)) k++;
    if (k == nl) names[nl++] = (char *)l;
  }
  for (size_t k = 0; k < nl; k++) {
    size_t m = 0;
    double s = 0;
    for (size_t i = 0; i < r->n; i++) {
      const char *l = lab ? (lab[i] ? lab[i] : "") : r->gpu1;
      double e = ape(r->y[i], r->pred[i]);
      if (strcmp(l, names[k]) || !isfinite(e)) continue;
      tmp[m++] = e;
      s += e;
    }
    cnt[k] = m;
    mean[k] = m ? s / (double)m : NAN;
    med[k] = median(tmp, m);
  }
  char title[160], xl[64];
  snprintf(title, sizeof title, "Error by %s (%zu %s%s)", what, nl, what, nl == 1 ? "" : "s");
  snprintf(xl, sizeof xl, "absolute percentage error (%%)");
  size_t shown = nl > 40 ? 40 : nl;
  bars(f, id, title, xl, names, med, mean, shown, "median APE", "mean APE (MAPE)");
  if (shown < nl) fprintf(f, "<p class=\"note\">The first %zu of %zu are drawn.</p>\n", shown, nl);
  rc = 0;
out:
  free(names);
  free(cnt);
  free(med);
  free(mean);
  free(tmp);
  return rc;
}

static void coverage_plot(FILE *f, const report *r) {
  svg_open(f, "coverage", "Interval coverage against the nominal", H);
  double pw = W - ML - MR, ph = H - MT - MB;
  double x0 = 0.4, x1 = 1.0;
#define CX(v) (ML + ((v) - x0) / (x1 - x0) * pw)
#define CY(v) (MT + ph - ((v) - x0) / (x1 - x0) * ph)
  fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" stroke=\"#444\"/>\n",
          ML, MT, pw, ph);
  for (int t = 4; t <= 10; t++) {
    double v = t / 10.0;
    fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#ddd\"/><text x=\"%.1f\" "
            "y=\"%.0f\" font-size=\"11\" text-anchor=\"middle\">%.1f</text>\n",
            CX(v), MT, CX(v), MT + ph, CX(v), MT + ph + 16, v);
    fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"#ddd\"/><text x=\"%d\" "
            "y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%.1f</text>\n",
            ML, CY(v), ML + pw, CY(v), ML - 6, CY(v) + 4, v);
  }
  fprintf(f, "<line class=\"diag\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000\"/>\n",
          CX(x0), CY(x0), CX(x1), CY(x1));
  fputs("<g class=\"points\">\n", f);
  for (size_t k = 0; k < r->ncov; k++) {
    double o = fmax(x0, r->cov_obs[k]);
    if (k) fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#1f5f9f\"/>",
                   CX(r->cov_nom[k - 1]), CY(fmax(x0, r->cov_obs[k - 1])), CX(r->cov_nom[k]), CY(o));
    fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"#1f5f9f\"/><text x=\"%.1f\" y=\"%.1f\" "
            "font-size=\"11\">%.3f</text>\n", CX(r->cov_nom[k]), CY(o), CX(r->cov_nom[k]) + 8,
            o > 0.95 ? CY(o) + 16 : CY(o) - 6, r->cov_obs[k]);
  }
  fputs("</g>\n", f);
#undef CX
#undef CY
  axis_labels(f, "nominal coverage (share of rows the interval should hold)",
              "observed coverage (share of rows inside)", H);
  fputs("</svg>\n", f);
}

static int cmp_rank(const void *a, const void *b) {
  const double *x = *(const double *const *)a, *y = *(const double *const *)b;
  return (*x < *y) - (*x > *y);
}

static int importance_plot(FILE *f, const report *r) {
  const double **p = malloc((r->nimp + 1) * sizeof *p);
  char **names = calloc(r->nimp + 1, sizeof *names);
  double *v = calloc(r->nimp + 1, sizeof *v);
  if (!p || !names || !v) { free(p); free(names); free(v); return -1; }
  for (size_t j = 0; j < r->nimp; j++) p[j] = &r->imp[j];
  qsort(p, r->nimp, sizeof *p, cmp_rank);
  size_t n = r->nimp < 20 ? r->nimp : 20;
  for (size_t k = 0; k < n; k++) {
    size_t j = (size_t)(p[k] - r->imp);
    names[k] = (char *)r->imp_name[j];
    v[k] = r->imp[j];
  }
  char title[128];
  snprintf(title, sizeof title, "Feature importance (top %zu of %zu)", n, r->nimp);
  bars(f, "importance", title, "impurity importance (MDI, share of 1)", names, v, NULL, n, NULL,
       NULL);
  free(p);
  free(names);
  free(v);
  return 0;
}

static void work_plot(FILE *f, const report *r) {
  enum { NB = 30 };
  double mn = INFINITY, mx = -INFINITY;
  for (size_t i = 0; i < r->nwork; i++) {
    double l = log10(r->work[i]);
    if (l < mn) mn = l;
    if (l > mx) mx = l;
  }
  int lo = (int)floor(mn), hi = (int)ceil(mx);
  if (hi <= lo) hi = lo + 1;
  size_t cnt[NB] = {0}, top = 1;
  for (size_t i = 0; i < r->nwork; i++) {
    int b = (int)((log10(r->work[i]) - lo) / (hi - lo) * NB);
    if (b >= NB) b = NB - 1;
    if (b < 0) b = 0;
    if (++cnt[b] > top) top = cnt[b];
  }
  char title[200], xl[200];
  snprintf(title, sizeof title, "Work per launch: %zu launches, 1e%.1f to 1e%.1f %s", r->nwork, mn,
           mx, r->work_what);
  snprintf(xl, sizeof xl, "%s per launch (log scale)", r->work_what);
  svg_open(f, "work", title, H);
  double pw = W - ML - MR, ph = H - MT - MB, bw = pw / NB;
  fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" stroke=\"#444\"/>\n",
          ML, MT, pw, ph);
  for (int d = lo; d <= hi; d++) {
    double x = ML + (double)(d - lo) / (hi - lo) * pw;
    fprintf(f, "<text x=\"%.1f\" y=\"%.0f\" font-size=\"11\" text-anchor=\"middle\">1e%d</text>\n", x,
            MT + ph + 16, d);
  }
  /* whole-number ticks: step launches apart, the axis up to a multiple */
  size_t step = (top + 3) / 4;
  top = step * ((top + step - 1) / step);
  for (size_t c = 0; c <= top; c += step) {
    double y = MT + ph - (double)c / (double)top * ph;
    fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"#ddd\"/><text x=\"%d\" "
            "y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%zu</text>\n", ML, y, ML + pw, y, ML - 6,
            y + 4, c);
  }
  for (int b = 0; b < NB; b++) {
    double h = (double)cnt[b] / top * ph;
    if (cnt[b])
      fprintf(f, "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
              "fill=\"#1f5f9f\"/>\n", ML + b * bw + 1, MT + ph - h, bw - 2, h);
  }
  axis_labels(f, xl, "launches", H);
  fputs("</svg>\n", f);
}

/* ------------------------------------------------------------ the page -- */

static int write_report(FILE *f, const report *r) {
  size_t n2 = 0, inside = 0, nint = 0, m = 0;
  double *e = malloc((r->n + 1) * sizeof *e), s = 0;
  if (!e) return -1;
  for (size_t i = 0; i < r->n; i++) {
    double a = ape(r->y[i], r->pred[i]);
    if (isfinite(a)) e[m++] = a, s += a;
    if (r->y[i] > 0 && r->pred[i] > 0 && r->pred[i] / r->y[i] <= 2 && r->y[i] / r->pred[i] <= 2) n2++;
    if (r->lo && r->hi && isfinite(r->lo[i]) && isfinite(r->hi[i])) {
      nint++;
      inside += r->y[i] >= r->lo[i] && r->y[i] <= r->hi[i];
    }
  }
  double mape = m ? s / (double)m : NAN, med = median(e, m);
  free(e);
  time_t now = time(NULL);
  struct tm tm;
  char date[64] = "";
  if (gmtime_r(&now, &tm)) strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", &tm);
  fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>", f);
  esc(f, r->title);
  fputs("</title>\n<style>body{font-family:sans-serif;margin:24px;color:#222;max-width:1340px}"
        "section{display:inline-block;vertical-align:top;margin:0 16px 24px 0}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}"
        ".note{color:#555;font-size:13px}</style>\n</head>\n<body>\n<h1>", f);
  esc(f, r->title);
  fputs("</h1>\n<p>", f);
  esc(f, r->source);
  fprintf(f, " &mdash; written by kcast %s, %s</p>\n", KCAST_VERSION_STRING, date);
  fputs("<table id=\"summary\"><tr><th>rows</th><th>MAPE %</th><th>median APE %</th>"
        "<th>within 2x</th><th>interval coverage</th><th>nominal</th></tr>\n", f);
  fprintf(f, "<tr><td>%zu</td><td>%.2f</td><td>%.2f</td><td>%.3f</td>", r->n, mape, med,
          r->n ? (double)n2 / (double)r->n : NAN);
  if (nint) fprintf(f, "<td>%.3f</td>", (double)inside / (double)nint);
  else fputs("<td>-</td>", f);
  fprintf(f, "<td>%.3g</td></tr></table>\n", r->nominal);
  if (r->in_sample)
    fputs("<p class=\"note\">The model predicts the rows of the dataset; where it was trained on\n"
          "them this shows its fit, not its accuracy on new launches ('kcast cv --predictions'\n"
          "and 'kcast report --cv' show that).</p>\n", f);
  fputs("<section>\n", f);
  scatter(f, r);
  fputs("</section>\n<section>\n", f);
  if (r->ncov) coverage_plot(f, r);
  else fputs("<p class=\"note\">No intervals: no coverage plot.</p>\n", f);
  fputs("</section>\n<section>\n", f);
  if (r->app) {
    if (error_by(f, r, r->app, "by-app", "application")) return -1;
  } else {
    fputs("<p class=\"note\">No application column: no error by application.</p>\n", f);
  }
  fputs("</section>\n<section>\n", f);
  if (error_by(f, r, r->gpu, "by-gpu", "GPU")) return -1;
  fputs("</section>\n<section>\n", f);
  if (r->nimp) {
    if (importance_plot(f, r)) return -1;
  } else {
    fputs("<p class=\"note\">No model given (--model): no feature importance.</p>\n", f);
  }
  fputs("</section>\n<section>\n", f);
  if (r->nwork) work_plot(f, r);
  else fputs("<p class=\"note\">No dataset given: no work-per-launch histogram.</p>\n", f);
  fputs("</section>\n</body>\n</html>\n", f);
  return 0;
}

/* ------------------------------------------------------------ the data -- */

/* Work per launch of every launch in db: the sum of its class.* counts
   (thread-instructions), else launch.threads.  *w malloc'd. */
static int dataset_work(const char *path, double **w, size_t *n, const char **what) {
  char err[1100];
  ds_db *db = NULL;
  *w = NULL;
  *n = 0;
  if (ds_open(path, DS_READONLY, &db, err, sizeof err)) {
    cli_error("%s", err);
    return -1;
  }
  ds_query q;
  ds_query_init(&q);
  q.missing = DS_MISSING_NAN;
  ds_matrix m;
  memset(&m, 0, sizeof m);
  int rc = -1;
  if (ds_query_matrix(db, &q, &m) < 0) {
    cli_error("%s", ds_errmsg(db));
    goto out;
  }
  int have_class = 0;
  long thr = -1;
  for (size_t j = 0; j < m.cols; j++) {
    if (!strncmp(m.colnames[j], "class.", 6)) have_class = 1;
    if (!strcmp(m.colnames[j], "launch.threads")) thr = (long)j;
  }
  *what = have_class ? "thread-instructions" : "threads";
  if (!(*w = malloc((m.rows + 1) * sizeof **w))) { cli_error("out of memory"); goto out; }
  for (size_t i = 0; i < m.rows; i++) {
    double s = 0;
    for (size_t j = 0; j < m.cols; j++) {
      double v = m.x[i * m.cols + j];
      if (have_class ? !strncmp(m.colnames[j], "class.", 6) : (long)j == thr)
        if (isfinite(v)) s += v;
    }
    if (s > 0) (*w)[(*n)++] = s;
  }
  rc = 0;
out:
  ds_matrix_free(&m);
  ds_close(db);
  return rc;
}

static long col_of(const rf_data *d, const char *name) {
  for (size_t j = 0; j < d->n_cols; j++)
    if (!strcmp(d->names[j], name)) return (long)j;
  return -1;
}

/* The coverage levels a model is asked at. */
static const double levels[] = {0.5, 0.6, 0.7, 0.8, 0.9, 0.95};
#define NLEVELS (sizeof levels / sizeof *levels)

int cmd_report(int argc, char **argv) {
  const char *out = "report.html", *model = NULL, *cv = NULL, *gpu = NULL, *unit = NULL,
             *title = NULL;
  double nominal = 0.9;
  enum { R_MODEL = CLI_OPT_OWN, R_CV, R_GPU, R_COVERAGE, R_UNIT, R_TITLE };
  static const struct option lo[] = {
    {"output", required_argument, NULL, 'o'},
    {"model", required_argument, NULL, R_MODEL},
    {"cv", required_argument, NULL, R_CV},
    {"gpu", required_argument, NULL, R_GPU},
    {"coverage", required_argument, NULL, R_COVERAGE},
    {"unit", required_argument, NULL, R_UNIT},
    {"title", required_argument, NULL, R_TITLE},
    {NULL, 0, NULL, 0},
  };
  cli_opts o;
  cli_opts_init(&o, "report", argc, argv, "o:", 0);
  cli_opts_add(&o, lo);
  cli_opts_add(&o, cli_gpus_longopts);
  for (int c; (c = cli_opts_next(&o)) != CLI_OPT_END;) {
    char *e;
    switch (c) {
      case CLI_OPT_ERR: return o.status;
      case 'o': out = o.arg; break;
      case R_MODEL: model = o.arg; break;
      case R_CV: cv = o.arg; break;
      case R_GPU: gpu = o.arg; break;
      case R_UNIT:
        if (!(unit = rf_unit_canonical(o.arg)))
          return cli_usage_error("report", "--unit '%s' is none of " RF_UNITS, o.arg);
        break;
      case R_TITLE: title = o.arg; break;
      case R_COVERAGE:
        nominal = strtod(o.arg, &e);
        if (*e || !(nominal > 0 && nominal < 1))
          return cli_usage_error("report", "--coverage '%s' is not in (0,1)", o.arg);
        break;
    }
  }
  if (CLI_NOPERANDS(&o) > 1)
    return cli_usage_error("report", "unexpected argument '%s'", CLI_OPERANDS(&o)[1]);
  const char *db = CLI_NOPERANDS(&o) ? CLI_OPERANDS(&o)[0] : NULL;
  if (!cv && !(db && model))
    return cli_usage_error("report", "give DB --model MODEL, or --cv PREDICTIONS.csv");
  if (gpu && cv) return cli_usage_error("report", "--gpu goes with DB --model, not --cv");

  report r;
  memset(&r, 0, sizeof r);
  r.nominal = nominal;
  rf_forest *f = NULL;
  rf_data d;
  memset(&d, 0, sizeof d);
  double *pred = NULL, *plo = NULL, *phi = NULL, *lv = NULL, *hv = NULL;
  rf_data in;
  memset(&in, 0, sizeof in);
  char *src = NULL;
  int rc = KCAST_EXIT_USER;
  if (model && rf_load(model, &f)) {
    cli_error("%s", rf_last_error());
    goto done;
  }
  const rf_info *info = f ? rf_get_info(f) : NULL;
  if (info) {
    r.nimp = info->n_features;
    r.imp_name = info->features;
    r.imp = info->mdi;
  }
  size_t slen = 64 + strlen(cv ? cv : "") + strlen(db ? db : "") + strlen(model ? model : "");
  if (!(src = malloc(slen))) { cli_error("out of memory"); goto done; }
  if (cv) {
    /* cv --predictions: key columns, row, measured, predicted, lo, hi, ape_pct */
    rf_csv_opts co = {.size = sizeof co, .target = "measured", .ignore = "ape_pct",
                      .text_auto = 1};
    if (rf_data_load_csv(&d, cv, &co)) {
      cli_error("%s", rf_last_error());
      goto done;
    }
    long pc = col_of(&d, "predicted"), lc = col_of(&d, "lo"), hc = col_of(&d, "hi");
    if (pc < 0 || lc < 0 || hc < 0) {
      cli_error("%s: not a 'kcast cv --predictions' file (needs columns measured, predicted, "
                "lo, hi)", cv);
      goto done;
    }
    r.n = d.n_rows;
    r.y = d.y;
    r.pred = d.x + (size_t)pc * d.n_rows;
    r.lo = d.x + (size_t)lc * d.n_rows;
    r.hi = d.x + (size_t)hc * d.n_rows;
    long ac = rf_data_text_col(&d, "app"), gc = rf_data_text_col(&d, "gpu");
    r.app = ac >= 0 ? (const char *const *)d.text[ac] : NULL;
    r.gpu = gc >= 0 ? (const char *const *)d.text[gc] : NULL;
    r.gpu1 = "(one GPU)";
    r.target = "value";
    /* the unit cv recorded (its unit column); --unit may not contradict it */
    long uc = rf_data_text_col(&d, "unit");
    const char *fu = uc >= 0 && d.n_rows ? d.text[uc][0] : NULL, *fc = rf_unit_canonical(fu);
    if (unit && fc && strcmp(unit, fc)) {
      cli_error("%s: --unit %s contradicts the predictions, which are in %s", cv, unit, fc);
      goto done;
    }
    r.unit = unit ? unit : fu && *fu ? fu : "the measured column's unit";
    size_t inside = 0;
    for (size_t i = 0; i < r.n; i++) inside += r.y[i] >= r.lo[i] && r.y[i] <= r.hi[i];
    r.ncov = 1;
    r.cov_nom[0] = nominal;
    r.cov_obs[0] = r.n ? (double)inside / (double)r.n : NAN;
    snprintf(src, slen, "cross-validation predictions %s%s%s", cv, model ? ", model " : "",
             model ? model : "");
  } else {
    /* the dataset's measured launches, loaded as kcast train loads them,
       the columns the model reads, in its order */
    const char *tg = info->target ? info->target : "";
    if (strcmp(tg, "time") && strcmp(tg, "power") && strcmp(tg, "energy")) {
      cli_error("%s predicts '%s', a CSV column: a report on a dataset needs a time, power or "
                "energy model (or give --cv)", model, tg);
      goto done;
    }
    cli_rf_input ri;
    rf_params p;
    cli_rf_defaults(&p, &ri);
    ri.db = db;
    ri.target = tg;
    ri.gpu = gpu ? gpu : info->gpu;
    if (!ri.gpu || !*ri.gpu) {
      cli_error("%s names no GPU: give --gpu G", model);
      goto done;
    }
    /* a model of one GPU answers for that GPU only (as kcast predict) */
    if (gpu && info->gpu && *info->gpu && !strchr(info->gpu, ',') && !an_gpu_in_list(info->gpu, gpu)) {
      cli_error("%s was trained on %s only, not on %s: it cannot predict for another GPU", model,
                info->gpu, gpu);
      goto done;
    }
    char fams[256] = "all";
    for (size_t j = 0; j < info->n_features; j++) {
      int fam = md_family_of(info->features[j]);
      const char *w = fam >= 0 ? md_family_word(fam) : NULL;
      if (w && !strstr(fams, w) && strlen(fams) + strlen(w) + 2 < sizeof fams)
        strcat(strcat(fams, ","), w);
    }
    ri.features = fams;
    if (cli_rf_load("report", &ri, &d, &p)) goto done;
    if (rf_data_alloc(&in, d.n_rows, info->n_features, 0)) { cli_error("out of memory"); goto done; }
    for (size_t j = 0; j < info->n_features; j++) {
      long c = col_of(&d, info->features[j]);
      if (c < 0) {
        cli_error("%s: the model reads %s, which the dataset's launches do not give", db,
                  info->features[j]);
        goto done;
      }
      memcpy(in.x + j * d.n_rows, d.x + (size_t)c * d.n_rows, d.n_rows * sizeof *in.x);
      if (!(in.names[j] = strdup(info->features[j]))) { cli_error("out of memory"); goto done; }
    }
    size_t n = d.n_rows;
    pred = malloc((n + 1) * sizeof *pred), plo = malloc((n + 1) * sizeof *plo),
    phi = malloc((n + 1) * sizeof *phi), lv = malloc((n + 1) * sizeof *lv),
    hv = malloc((n + 1) * sizeof *hv);
    if (!pred || !plo || !phi || !lv || !hv) { cli_error("out of memory"); goto done; }
    for (size_t k = 0; k < NLEVELS; k++) {
      if (rf_predict_batch(f, &in, levels[k], pred, lv, hv, 0)) {
        cli_error("%s: %s", model, rf_last_error());
        goto done;
      }
      size_t inside = 0;
      for (size_t i = 0; i < n; i++) inside += d.y[i] >= lv[i] && d.y[i] <= hv[i];
      r.cov_nom[r.ncov] = levels[k];
      r.cov_obs[r.ncov++] = n ? (double)inside / (double)n : NAN;
    }
    if (rf_predict_batch(f, &in, nominal, pred, plo, phi, 0)) {
      cli_error("%s: %s", model, rf_last_error());
      goto done;
    }
    r.n = n;
    r.y = d.y;
    r.pred = pred, r.lo = plo, r.hi = phi;
    r.app = (const char *const *)d.groups;
    r.gpu = ri.gpu_col >= 0 ? (const char *const *)d.text[ri.gpu_col] : NULL;
    r.gpu1 = ri.gpu;
    r.target = tg;
    if (unit && strcmp(unit, rf_target_unit(tg))) {
      cli_error("%s: --unit %s contradicts the dataset's %s measurements, which are in %s", db,
                unit, tg, rf_target_unit(tg));
      goto done;
    }
    r.unit = rf_target_unit(tg);
    snprintf(src, slen, "dataset %s, model %s", db, model);
    r.in_sample = 1;
  }
  if (db && dataset_work(db, &r.work, &r.nwork, &r.work_what)) goto done;
  r.title = title ? title : cv ? "kcast: cross-validation report" : "kcast: model report";
  r.source = src;
  cli_out co;
  if (cli_out_open(&co, out)) goto done;
  int wrc = write_report(co.f, &r);
  if (wrc) cli_error("out of memory writing %s", out);
  if (cli_out_close(&co, wrc == 0) || wrc) goto done;
  printf("wrote %s (%zu rows)\n", out, r.n);
  rc = KCAST_EXIT_OK;
done:
  free(src);
  free(r.work);
  free(pred);
  free(plo);
  free(phi);
  free(lv);
  free(hv);
  rf_data_free(&in);
  rf_data_free(&d);
  rf_free(f);
  return rc;
}
