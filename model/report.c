/*
 * report.c -- the accuracy report (report.h): predictions against
 * measurements as one HTML page a user can act on.
 *
 * What it draws (inline SVG in a two-column grid; a panel the data does
 * not allow is left out and named in the "not shown" list at the end, so
 * the page has no empty boxes):
 *   - the header: what was evaluated, kcast's version, the figures over
 *     every row, and the settings table (CV scheme, folds, seed, feature
 *     families, forest parameters, as the caller read them from the model
 *     and the predictions file);
 *   - predicted against measured on log-log axes, each point coloured by
 *     its application (the 9 with the most rows, the rest grey) and titled
 *     with its keys and error (the browser shows the title on hover), its
 *     interval as a vertical bar, the diagonal and the 2x lines, and a
 *     legend that says what each mark is; under it, the table of the worst
 *     rows with their keys;
 *   - the interval coverage against the nominal;
 *   - the error by application and by GPU (each only with two or more);
 *   - the error against the work per launch (thread-instructions, log-log);
 *   - for tuning spaces (an application on a GPU with 20 or more rows), the
 *     predicted rank against the measured rank with the top-1 and top-5
 *     regret and Spearman's rho (rf_metrics, as kcast cv prints them);
 *   - the model's feature importance; the dataset's work per launch.
 * At most MAX_POINTS points per plot (every k-th row, said under it); the
 * figures use every row.  Value labels are written with rp_num and placed
 * so that no two overlap (one per bar row, bars 11 px apart).
 */
#include "model/report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "model/rf_int.h"

#define MAX_POINTS 20000
#define NCOLOURS 10  /* 9 applications and "other" */
#define RANK_MIN_ROWS 20
#define RANK_MAX_PANELS 4
/* Backgrounds of the legend and of the worst-rows table's header, used
   nowhere else (tests/test_report.c counts them on a screenshot). */
#define LEGEND_BG "#f4f1e4"
#define WORST_BG "#e3ecf7"

/* Point colours: the first is the plots' blue, the last the grey of
   "other"; none is the interval bars' light blue or the mean bars' orange. */
static const char *const colour[NCOLOURS] = {"#1f5f9f", "#d62728", "#2ca02c", "#9467bd",
                                             "#8c564b", "#e377c2", "#17becf", "#bcbd22",
                                             "#ff7f0e", "#7f7f7f"};

/* ---------------------------------------------------------- text -- */

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

char *rp_num(double v, char *buf, size_t cap) {
  if (isnan(v)) snprintf(buf, cap, "-");
  else if (isinf(v)) snprintf(buf, cap, v > 0 ? "inf" : "-inf");
  else if (fabs(v) < 1e-9) snprintf(buf, cap, "0");
  else if (fabs(v) >= 1e-3 && fabs(v) < 1e6) {
    /* 3 significant digits without an exponent */
    int digits = 2 - (int)floor(log10(fabs(v)));
    if (digits < 0) digits = 0;
    snprintf(buf, cap, "%.*f", digits, v);
  } else {
    snprintf(buf, cap, "%.3g", v);
  }
  return buf;
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

static const char *lab(const char *const *v, size_t i) { return v && v[i] ? v[i] : ""; }

/* ------------------------------------------------------ the page -- */

/* What the writer works out once: each row's colour, the distinct labels. */
typedef struct page {
  const rp_report *r;
  FILE *f;
  unsigned char *col;          /* n colour indices */
  const char *app_of[NCOLOURS]; /* the label of each colour (NULL unused) */
  size_t napps;                /* distinct applications */
  char notes[16][200];         /* panels not shown, and why */
  size_t nnotes;
} page;

static void note(page *pg, const char *fmt, const char *what) {
  if (pg->nnotes < 16) snprintf(pg->notes[pg->nnotes++], sizeof pg->notes[0], fmt, what);
}

/* Distinct labels of v (n rows) into names (malloc'd array of pointers into
   v), their counts; -1 out of memory. */
static int distinct(const char *const *v, size_t n, const char ***names, size_t **cnt,
                    size_t *nd) {
  *names = rf__calloc(n + 1, sizeof **names);
  *cnt = rf__calloc(n + 1, sizeof **cnt);
  *nd = 0;
  if (!*names || !*cnt) {
    rf__free(*names);
    rf__free(*cnt);
    return rf__nomem();
  }
  for (size_t i = 0; i < n; i++) {
    const char *l = lab(v, i);
    size_t k = 0;
    while (k < *nd && strcmp((*names)[k], l)) k++;
    if (k == *nd) (*names)[(*nd)++] = l;
    (*cnt)[k]++;
  }
  return 0;
}

static int colours(page *pg) {
  const rp_report *r = pg->r;
  if (!(pg->col = rf__calloc(r->n + 1, 1))) return rf__nomem();
  if (!r->app) return 0;
  const char **names;
  size_t *cnt, nd;
  if (distinct(r->app, r->n, &names, &cnt, &nd)) return -1;
  pg->napps = nd;
  /* the 9 largest get their own colour, in order of size then name */
  size_t top = nd <= NCOLOURS ? nd : NCOLOURS - 1;
  for (size_t c = 0; c < top; c++) {
    size_t best = nd;
    for (size_t k = 0; k < nd; k++) {
      if (!cnt[k]) continue;
      if (best == nd || cnt[k] > cnt[best] || (cnt[k] == cnt[best] && strcmp(names[k], names[best]) < 0))
        best = k;
    }
    pg->app_of[c] = names[best];
    cnt[best] = 0;
  }
  for (size_t i = 0; i < r->n; i++) {
    const char *l = lab(r->app, i);
    size_t c = 0;
    while (c < top && strcmp(pg->app_of[c], l)) c++;
    pg->col[i] = (unsigned char)(c < top ? c : NCOLOURS - 1);
  }
  if (nd > top) pg->app_of[NCOLOURS - 1] = "other applications";
  rf__free(names);
  rf__free(cnt);
  return 0;
}

/* The point's hover title: keys, measured, predicted, APE. */
static void point_title(const page *pg, size_t i) {
  const rp_report *r = pg->r;
  FILE *f = pg->f;
  char a[32], b[32], c[32];
  fputs("<title>", f);
  const char *keys[4] = {lab(r->app, i), lab(r->dataset, i), lab(r->kernel, i),
                         r->gpu ? lab(r->gpu, i) : r->gpu1 ? r->gpu1 : ""};
  static const char *const kn[4] = {"app", "dataset", "kernel", "GPU"};
  for (int k = 0; k < 4; k++) {
    if (!*keys[k]) continue;
    fprintf(f, "%s: ", kn[k]);
    esc(f, keys[k]);
    fputs("&#10;", f);
  }
  fprintf(f, "measured %s %s, predicted %s %s, APE %s %%</title>", rp_num(r->y[i], a, sizeof a),
          r->unit, rp_num(r->pred[i], b, sizeof b), r->unit, rp_num(ape(r->y[i], r->pred[i]), c, sizeof c));
}

/* Plot area inside a W x h SVG. */
enum { W = 640, H = 420, ML = 80, MR = 20, MT = 40, MB = 60 };

static void svg_open(FILE *f, const char *id, const char *title, int w, int h) {
  fprintf(f, "<svg id=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
          "viewBox=\"0 0 %d %d\" role=\"img\">\n<title>", id, w, h, w, h);
  esc(f, title);
  fprintf(f, "</title>\n<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n"
          "<text x=\"%d\" y=\"22\" font-size=\"14\" text-anchor=\"middle\" font-weight=\"bold\">",
          w, h, w / 2);
  esc(f, title);
  fputs("</text>\n", f);
}

static void axis_labels(FILE *f, const char *xl, const char *yl, int w, int h, int mb) {
  fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"13\" text-anchor=\"middle\">", ML + (w - ML - MR) / 2,
          h - mb + 40);
  esc(f, xl);
  fprintf(f, "</text>\n<text x=\"18\" y=\"%d\" font-size=\"13\" text-anchor=\"middle\" "
          "transform=\"rotate(-90 18 %d)\">", MT + (h - MT - mb) / 2, MT + (h - MT - mb) / 2);
  esc(f, yl);
  fputs("</text>\n", f);
}

/* Decades [lo, hi] covering the positive finite values of a and b. */
static void decades(const double *a, const double *b, size_t n, int *lo, int *hi) {
  double mn = INFINITY, mx = -INFINITY;
  const double *v[2] = {a, b};
  for (int k = 0; k < 2; k++)
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

/* Decade grid of a log-log plot in the box (x0, y0, pw, ph). */
static void log_grid(FILE *f, int xlo, int xhi, int ylo, int yhi, double pw, double ph) {
  fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" stroke=\"#444\"/>\n",
          ML, MT, pw, ph);
  int xs = (xhi - xlo + 7) / 8, ys = (yhi - ylo + 7) / 8; /* at most 9 labels an axis */
  for (int d = xlo; d <= xhi; d++) {
    double x = ML + (double)(d - xlo) / (xhi - xlo) * pw;
    fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#ddd\"/>", x, MT, x, MT + ph);
    if ((d - xlo) % xs == 0)
      fprintf(f, "<text x=\"%.1f\" y=\"%.0f\" font-size=\"11\" text-anchor=\"middle\">1e%d</text>", x,
              MT + ph + 16, d);
    fputc('\n', f);
  }
  for (int d = ylo; d <= yhi; d++) {
    double y = MT + ph - (double)(d - ylo) / (yhi - ylo) * ph;
    fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"#ddd\"/>", ML, y, ML + pw, y);
    if ((d - ylo) % ys == 0)
      fprintf(f, "<text x=\"%d\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">1e%d</text>", ML - 6,
              y + 4, d);
    fputc('\n', f);
  }
}

/* The legend: one swatch per application colour, then the marks. */
static int legend(const page *pg, int y0, int draw) {
  const rp_report *r = pg->r;
  FILE *f = pg->f;
  struct item { int kind; const char *c; char text[120]; } it[NCOLOURS + 3];
  size_t n = 0;
  for (int c = 0; c < NCOLOURS; c++) {
    if (!pg->app_of[c]) continue;
    it[n].kind = 0, it[n].c = colour[c];
    snprintf(it[n].text, sizeof it[n].text, "%.40s%s", pg->app_of[c], strlen(pg->app_of[c]) > 40 ? "..." : "");
    n++;
  }
  if (!n) {
    it[n].kind = 0, it[n].c = colour[0];
    snprintf(it[n].text, sizeof it[n].text, "a row");
    n++;
  }
  it[n].kind = 1, it[n].c = "#000";
  snprintf(it[n++].text, sizeof it[0].text, "predicted = measured");
  it[n].kind = 2, it[n].c = "#888";
  snprintf(it[n++].text, sizeof it[0].text, "2x off (half or twice the measured)");
  if (r->lo && r->hi) {
    it[n].kind = 3, it[n].c = "#9cc3e6";
    snprintf(it[n++].text, sizeof it[0].text, "prediction interval, %g %% nominal",
             100 * r->nominal);
  }
  int rows = (int)(n + 1) / 2;
  if (!draw) return rows * 18 + 14;
  /* a box of its own colour (LEGEND_BG), which the browser test finds */
  fprintf(f, "<g id=\"legend\" font-size=\"11\">\n<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
          "fill=\"" LEGEND_BG "\" stroke=\"#ccc\"/>\n", ML - 8, y0 - 6, W - ML - MR + 8, rows * 18 + 4);
  for (size_t k = 0; k < n; k++) {
    int x = ML + (int)(k % 2) * 280, y = y0 + (int)(k / 2) * 18;
    switch (it[k].kind) {
      case 0:
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>", x, y, it[k].c);
        break;
      case 1:
        fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#000\" stroke-width=\"2\"/>",
                x, y + 6, x + 12, y + 6);
        break;
      case 2:
        fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#888\" stroke-width=\"2\" "
                "stroke-dasharray=\"4 3\"/>", x, y + 6, x + 12, y + 6);
        break;
      default:
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"4\" height=\"12\" fill=\"#9cc3e6\"/>", x + 4, y);
    }
    fprintf(f, "<text x=\"%d\" y=\"%d\">", x + 18, y + 10);
    esc(f, it[k].text);
    fputs("</text>\n", f);
  }
  fputs("</g>\n", f);
  return rows * 18 + 14;
}

static void scatter(page *pg) {
  const rp_report *r = pg->r;
  FILE *f = pg->f;
  char title[256], xl[256], yl[256];
  snprintf(title, sizeof title, "Predicted vs measured %s, %zu rows", r->target, r->n);
  snprintf(xl, sizeof xl, "measured %s (%s, log scale)", r->target, r->unit);
  snprintf(yl, sizeof yl, "predicted %s (%s, log scale)", r->target, r->unit);
  int lh = legend(pg, 0, 0), h = H + lh;
  svg_open(f, "scatter", title, W, h);
  int lo, hi;
  decades(r->y, r->pred, r->n, &lo, &hi);
  double pw = W - ML - MR, ph = H - MT - MB;
#define SX(v) (ML + (log10(v) - lo) / (hi - lo) * pw)
#define SY(v) (MT + ph - (log10(v) - lo) / (hi - lo) * ph)
  log_grid(f, lo, hi, lo, hi, pw, ph);
  double a = pow(10, lo), b = pow(10, hi);
  fprintf(f, "<line class=\"diag\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000\"/>\n",
          SX(a), SY(a), SX(b), SY(b));
  fprintf(f, "<line class=\"band\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\" "
          "stroke-dasharray=\"4 3\"/>\n", SX(a), SY(2 * a), SX(b / 2), SY(b));
  fprintf(f, "<line class=\"band\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\" "
          "stroke-dasharray=\"4 3\"/>\n", SX(2 * a), SY(a), SX(b), SY(b / 2));
  size_t step = r->n > MAX_POINTS ? (r->n + MAX_POINTS - 1) / MAX_POINTS : 1;
  fputs("<g class=\"intervals\">\n", f);
  for (size_t i = 0; r->lo && r->hi && i < r->n; i += step) {
    double y = r->y[i], l = r->lo[i], u = r->hi[i];
    if (y > 0 && l > 0 && u > 0)
      fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#9cc3e6\"/>\n", SX(y),
              SY(fmax(l, a)), SX(y), SY(fmin(u, b)));
  }
  fputs("</g>\n<g class=\"points\">\n", f);
  for (size_t i = 0; i < r->n; i += step) {
    double y = r->y[i], p = r->pred[i];
    if (!(y > 0 && p > 0)) continue;
    fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.4\" fill=\"%s\">", SX(y), SY(p), colour[pg->col[i]]);
    point_title(pg, i);
    fputs("</circle>\n", f);
  }
  fputs("</g>\n", f);
#undef SX
#undef SY
  axis_labels(f, xl, yl, W, H, MB);
  legend(pg, H, 1);
  fputs("</svg>\n", f);
  if (step > 1) fprintf(f, "<p class=\"note\">Every %zu-th row is drawn (%zu rows).</p>\n", step, r->n);
}

/* The worst rows by APE, with their keys. */
static int worst_table(page *pg) {
  const rp_report *r = pg->r;
  FILE *f = pg->f;
  size_t want = r->worst ? r->worst : 20, m = 0;
  size_t *idx = rf__calloc(r->n + 1, sizeof *idx);
  double *e = rf__calloc(r->n + 1, sizeof *e);
  if (!idx || !e) {
    rf__free(idx);
    rf__free(e);
    return rf__nomem();
  }
  for (size_t i = 0; i < r->n; i++) {
    e[i] = ape(r->y[i], r->pred[i]);
    if (isfinite(e[i])) idx[m++] = i;
  }
  /* partial selection of the largest errors (want is small) */
  size_t k = want < m ? want : m;
  for (size_t a = 0; a < k; a++) {
    size_t best = a;
    for (size_t b = a + 1; b < m; b++)
      if (e[idx[b]] > e[idx[best]]) best = b;
    size_t t = idx[a];
    idx[a] = idx[best];
    idx[best] = t;
  }
  fprintf(f, "<table id=\"worst\"><caption>The %zu rows with the largest error (of %zu)</caption>\n"
          "<tr><th>#</th>", k, r->n);
  if (r->app) fputs("<th>app</th>", f);
  if (r->dataset) fputs("<th>dataset</th>", f);
  if (r->kernel) fputs("<th>kernel</th>", f);
  if (r->gpu) fputs("<th>GPU</th>", f);
  fprintf(f, "<th>measured (%s)</th><th>predicted</th><th>APE %%</th></tr>\n", r->unit);
  for (size_t a = 0; a < k; a++) {
    size_t i = idx[a];
    char b1[32], b2[32], b3[32];
    fprintf(f, "<tr><td>%zu</td>", a + 1);
    const char *const *cols[4] = {r->app, r->dataset, r->kernel, r->gpu};
    for (int c = 0; c < 4; c++) {
      if (!cols[c]) continue;
      fputs("<td class=\"key\">", f);
      esc(f, lab(cols[c], i));
      fputs("</td>", f);
    }
    fprintf(f, "<td>%s</td><td>%s</td><td>%s</td></tr>\n", rp_num(r->y[i], b1, sizeof b1),
            rp_num(r->pred[i], b2, sizeof b2), rp_num(e[i], b3, sizeof b3));
  }
  fputs("</table>\n", f);
  rf__free(idx);
  rf__free(e);
  return 0;
}

/* Horizontal bars: n labels with one or two values (median, mean APE). */
static void bars(FILE *f, const char *id, const char *title, const char *xl, const char *const *names,
                 const double *v1, const double *v2, size_t n, const char *l1, const char *l2) {
  int rowh = v2 ? 26 : 18;
  int h = MT + MB + (int)n * rowh + 10;
  svg_open(f, id, title, W, h);
  double mx = 0;
  for (size_t i = 0; i < n; i++) {
    if (isfinite(v1[i]) && v1[i] > mx) mx = v1[i];
    if (v2 && isfinite(v2[i]) && v2[i] > mx) mx = v2[i];
  }
  if (!(mx > 0)) mx = 1;
  int left = 190;
  double pw = W - left - MR - 60;
  for (size_t i = 0; i < n; i++) {
    double y = MT + 10 + (double)rowh * (double)i;
    char shown[48], b[32];
    snprintf(shown, sizeof shown, "%.36s%s", names[i], strlen(names[i]) > 36 ? "..." : "");
    fprintf(f, "<text x=\"%d\" y=\"%.0f\" font-size=\"11\" text-anchor=\"end\">", left - 6,
            y + (v2 ? 15 : 12));
    esc(f, shown);
    fputs("</text>", f);
    double w1 = isfinite(v1[i]) ? v1[i] / mx * pw : 0;
    fprintf(f, "<rect class=\"bar\" x=\"%d\" y=\"%.0f\" width=\"%.1f\" height=\"%d\" fill=\"#1f5f9f\"/>"
            "<text x=\"%.1f\" y=\"%.0f\" font-size=\"10\">%s</text>", left, y + 1, w1, v2 ? 11 : 14,
            left + w1 + 4, y + 10, rp_num(v1[i], b, sizeof b));
    if (v2) {
      double w2 = isfinite(v2[i]) ? v2[i] / mx * pw : 0;
      fprintf(f, "<rect class=\"bar\" x=\"%d\" y=\"%.0f\" width=\"%.1f\" height=\"11\" fill=\"#e6a23c\"/>"
              "<text x=\"%.1f\" y=\"%.0f\" font-size=\"10\">%s</text>", left, y + 13, w2,
              left + w2 + 4, y + 22, rp_num(v2[i], b, sizeof b));
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

/* Error per label (app or GPU): median and mean APE; -1 out of memory. */
static int error_by(page *pg, const char *const *labels, const char *id, const char *what,
                    const char *whats) {
  const rp_report *r = pg->r;
  const char **names;
  size_t *cnt, nl;
  if (distinct(labels, r->n, &names, &cnt, &nl)) return -1;
  double *med = rf__calloc(nl + 1, sizeof *med), *mean = rf__calloc(nl + 1, sizeof *mean),
         *tmp = rf__calloc(r->n + 1, sizeof *tmp);
  int rc = -1;
  if (!med || !mean || !tmp) {
    rf__nomem();
    goto out;
  }
  for (size_t k = 0; k < nl; k++) {
    size_t m = 0;
    double s = 0;
    for (size_t i = 0; i < r->n; i++) {
      double e = ape(r->y[i], r->pred[i]);
      if (strcmp(lab(labels, i), names[k]) || !isfinite(e)) continue;
      tmp[m++] = e;
      s += e;
    }
    mean[k] = m ? s / (double)m : NAN;
    med[k] = median(tmp, m);
  }
  char title[160];
  snprintf(title, sizeof title, "Error by %s (%zu %s)", what, nl, whats);
  size_t shown = nl > 40 ? 40 : nl;
  bars(pg->f, id, title, "absolute percentage error (%)", names, med, mean, shown, "median APE",
       "mean APE (MAPE)");
  if (shown < nl) fprintf(pg->f, "<p class=\"note\">The first %zu of %zu are drawn.</p>\n", shown, nl);
  rc = 0;
out:
  rf__free(names);
  rf__free(cnt);
  rf__free(med);
  rf__free(mean);
  rf__free(tmp);
  return rc;
}

static void coverage_plot(page *pg) {
  const rp_report *r = pg->r;
  FILE *f = pg->f;
  svg_open(f, "coverage", "Interval coverage against the nominal", W, H);
  double pw = W - ML - MR, ph = H - MT - MB, x0 = 0.4, x1 = 1.0;
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
    char b[32];
    if (k)
      fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#1f5f9f\"/>",
              CX(r->cov_nom[k - 1]), CY(fmax(x0, r->cov_obs[k - 1])), CX(r->cov_nom[k]), CY(o));
    /* labels alternate above and below the line, so neighbours never meet */
    double ly = k % 2 ? CY(o) + 16 : CY(o) - 8;
    if (ly < MT + 12) ly = CY(o) + 16;
    fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"#1f5f9f\"><title>nominal %g, observed "
            "%s</title></circle><text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\">%s"
            "</text>\n", CX(r->cov_nom[k]), CY(o), r->cov_nom[k], rp_num(r->cov_obs[k], b, sizeof b),
            CX(r->cov_nom[k]), ly, b);
  }
  fputs("</g>\n", f);
#undef CX
#undef CY
  axis_labels(f, "nominal coverage (share of rows the interval should hold)",
              "observed coverage (share of rows inside)", W, H, MB);
  fputs("</svg>\n", f);
}

/* APE against the work per launch, log-log, coloured as the scatter. */
static int error_work(page *pg) {
  const rp_report *r = pg->r;
  FILE *f = pg->f;
  double *e = rf__calloc(r->n + 1, sizeof *e);
  if (!e) return rf__nomem();
  size_t known = 0;
  for (size_t i = 0; i < r->n; i++) {
    e[i] = ape(r->y[i], r->pred[i]);
    if (r->work[i] > 0 && isfinite(r->work[i]) && isfinite(e[i])) known++;
    /* an exact prediction sits on the lowest decade */
    if (isfinite(e[i]) && e[i] < 1e-3) e[i] = 1e-3;
  }
  if (known < 2) {
    rf__free(e);
    note(pg, "error against work per launch: %s", "fewer than two rows with a known work");
    return 0;
  }
  int xlo, xhi, ylo, yhi;
  decades(r->work, NULL, r->n, &xlo, &xhi);
  decades(e, NULL, r->n, &ylo, &yhi);
  char title[200], xl[200];
  snprintf(title, sizeof title, "Error against work per launch, %zu rows", known);
  snprintf(xl, sizeof xl, "%s per launch (log scale)", r->work_what ? r->work_what : "work");
  svg_open(f, "error-work", title, W, H);
  double pw = W - ML - MR, ph = H - MT - MB;
  log_grid(f, xlo, xhi, ylo, yhi, pw, ph);
  size_t step = r->n > MAX_POINTS ? (r->n + MAX_POINTS - 1) / MAX_POINTS : 1;
  fputs("<g class=\"points\">\n", f);
  for (size_t i = 0; i < r->n; i += step) {
    if (!(r->work[i] > 0 && isfinite(r->work[i]) && isfinite(e[i]))) continue;
    double x = ML + (log10(r->work[i]) - xlo) / (xhi - xlo) * pw,
           y = MT + ph - (log10(e[i]) - ylo) / (yhi - ylo) * ph;
    fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.4\" fill=\"%s\">", x, y, colour[pg->col[i]]);
    point_title(pg, i);
    fputs("</circle>\n", f);
  }
  fputs("</g>\n", f);
  axis_labels(f, xl, "absolute percentage error (%, log scale)", W, H, MB);
  fputs("</svg>\n", f);
  rf__free(e);
  return 0;
}

/* Ranks (1 = lowest) of v[idx[0..m)] into rank[0..m), ties averaged. */
static const double *rank_key;
static int cmp_idx(const void *a, const void *b) {
  double x = rank_key[*(const size_t *)a], y = rank_key[*(const size_t *)b];
  return (x > y) - (x < y);
}
static void ranks(const double *v, const size_t *idx, size_t m, double *rank, size_t *tmp) {
  for (size_t k = 0; k < m; k++) tmp[k] = idx[k];
  rank_key = v;
  qsort(tmp, m, sizeof *tmp, cmp_idx);
  for (size_t a = 0; a < m;) {
    size_t b = a;
    while (b + 1 < m && v[tmp[b + 1]] == v[tmp[a]]) b++;
    for (size_t k = a; k <= b; k++)
      for (size_t j = 0; j < m; j++)
        if (idx[j] == tmp[k]) rank[j] = 0.5 * (double)(a + b) + 1;
    a = b + 1;
  }
}

/* Predicted rank against measured rank per tuning space (an application
   on a GPU with RANK_MIN_ROWS rows or more), the largest RANK_MAX_PANELS. */
static int rank_panels(page *pg) {
  const rp_report *r = pg->r;
  FILE *f = pg->f;
  /* group key "app\001gpu" per row */
  char **key = rf__calloc(r->n + 1, sizeof *key);
  if (!key) return rf__nomem();
  int rc = -1;
  const char **names = NULL;
  size_t *cnt = NULL, ng = 0, *idx = NULL, *tmp = NULL;
  double *ry = NULL, *rp = NULL, *gy = NULL, *gp = NULL;
  for (size_t i = 0; i < r->n; i++) {
    const char *a = lab(r->app, i), *g = r->gpu ? lab(r->gpu, i) : r->gpu1 ? r->gpu1 : "";
    size_t l = strlen(a) + strlen(g) + 2;
    if (!(key[i] = rf__malloc(l))) { rf__nomem(); goto out; }
    snprintf(key[i], l, "%s\001%s", a, g);
  }
  if (distinct((const char *const *)key, r->n, &names, &cnt, &ng)) goto out;
  idx = rf__calloc(r->n + 1, sizeof *idx), tmp = rf__calloc(r->n + 1, sizeof *tmp);
  ry = rf__calloc(r->n + 1, sizeof *ry), rp = rf__calloc(r->n + 1, sizeof *rp);
  gy = rf__calloc(r->n + 1, sizeof *gy), gp = rf__calloc(r->n + 1, sizeof *gp);
  if (!idx || !tmp || !ry || !rp || !gy || !gp) { rf__nomem(); goto out; }
  size_t drawn = 0, spaces = 0;
  for (size_t k = 0; k < ng; k++) spaces += cnt[k] >= RANK_MIN_ROWS;
  if (!spaces) {
    note(pg, "predicted rank against measured rank: %s",
         "no application on a GPU has 20 rows or more (a tuning space)");
    rc = 0;
    goto out;
  }
  fprintf(f, "<section>\n<div id=\"ranks\"><h2>Tuning spaces: predicted rank against measured rank "
          "(%zu space%s)</h2>\n", spaces, spaces == 1 ? "" : "s");
  while (drawn < RANK_MAX_PANELS) {
    size_t best = ng;
    for (size_t k = 0; k < ng; k++)
      if (cnt[k] >= RANK_MIN_ROWS && (best == ng || cnt[k] > cnt[best])) best = k;
    if (best == ng) break;
    size_t m = 0;
    for (size_t i = 0; i < r->n; i++)
      if (!strcmp(key[i], names[best]) && isfinite(r->y[i]) && isfinite(r->pred[i])) idx[m++] = i;
    cnt[best] = 0;
    if (m < 2) continue;
    ranks(r->y, idx, m, ry, tmp);
    ranks(r->pred, idx, m, rp, tmp);
    for (size_t j = 0; j < m; j++) gy[j] = r->y[idx[j]], gp[j] = r->pred[idx[j]];
    /* the regrets of kcast cv and predict --measured (rf_metrics: the
       measured value of the pick over the best; shown as % slower) */
    rf_metrics mm;
    rf_metrics_compute(gy, gp, NULL, NULL, m, &mm);
    double t1 = mm.top1_regret - 1, t5 = mm.top5_regret - 1;
    const char *sep = strchr(names[best], '\001');
    char title[300], b1[32], b2[32], b3[32];
    /* the GPU first; an application's name cut to fit the panel */
    int al = (int)(sep - names[best]);
    if (!al)
      snprintf(title, sizeof title, "%.30s: %zu rows", sep[1] ? sep + 1 : "all rows", m);
    else
      snprintf(title, sizeof title, "%.26s, %.*s%s: %zu rows", sep + 1, al > 14 ? 12 : al, names[best],
               al > 14 ? ".." : "", m);
    int w = 325, h = 330, pw = w - ML - 25, ph = h - MT - MB - 20;
    fprintf(f, "<svg class=\"rank\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\" role=\"img\">\n<title>", w, h, w, h);
    esc(f, title);
    fprintf(f, "</title>\n<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n<text x=\"%d\" "
            "y=\"20\" font-size=\"13\" text-anchor=\"middle\" font-weight=\"bold\">", w, h, w / 2);
    esc(f, title);
    fprintf(f, "</text>\n<text class=\"regret\" x=\"%d\" y=\"36\" font-size=\"11\" text-anchor=\"middle\">"
            "top-1 regret %s %%, top-5 regret %s %%, Spearman %s</text>\n", w / 2,
            rp_num(100 * t1, b1, sizeof b1), rp_num(100 * t5, b2, sizeof b2),
            rp_num(mm.spearman, b3, sizeof b3));
    int top = MT + 10;
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#444\"/>\n"
            "<line class=\"diag\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#000\"/>\n",
            ML, top, pw, ph, ML, top + ph, ML + pw, top);
    for (int t = 0; t <= 4; t++) {
      double v = 1 + (double)(m - 1) * t / 4;
      fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\">%.0f</text>"
              "<text x=\"%d\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%.0f</text>\n",
              ML + pw * t / 4.0, top + ph + 16, v, ML - 6, top + ph - ph * t / 4.0 + 4, v);
    }
    size_t step = m > MAX_POINTS ? (m + MAX_POINTS - 1) / MAX_POINTS : 1;
    for (size_t j = 0; j < m; j += step) {
      double x = ML + (ry[j] - 1) / (double)(m > 1 ? m - 1 : 1) * pw,
             y = top + ph - (rp[j] - 1) / (double)(m > 1 ? m - 1 : 1) * ph;
      fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2\" fill=\"%s\">", x, y, colour[pg->col[idx[j]]]);
      point_title(pg, idx[j]);
      fputs("</circle>\n", f);
    }
    fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\">measured rank "
            "(1 = fastest)</text><text x=\"16\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\" "
            "transform=\"rotate(-90 16 %d)\">predicted rank</text>\n</svg>\n", ML + pw / 2,
            top + ph + 36, top + ph / 2, top + ph / 2);
    drawn++;
  }
  fprintf(f, "<p class=\"note\">Top-k regret: how much slower the fastest of the k configurations "
          "ranked best by the predictions is than the fastest measured (0 %%: it was among them)."
          "%s</p></div>\n</section>\n", spaces > drawn ? " The largest spaces are drawn." : "");
  rc = 0;
out:
  for (size_t i = 0; i < r->n; i++) rf__free(key[i]);
  rf__free(key);
  rf__free(names);
  rf__free(cnt);
  rf__free(idx);
  rf__free(tmp);
  rf__free(ry);
  rf__free(rp);
  rf__free(gy);
  rf__free(gp);
  return rc;
}

static int cmp_rank(const void *a, const void *b) {
  const double *x = *(const double *const *)a, *y = *(const double *const *)b;
  return (*x < *y) - (*x > *y);
}

static int importance_plot(page *pg) {
  const rp_report *r = pg->r;
  const double **p = rf__calloc(r->nimp + 1, sizeof *p);
  const char **names = rf__calloc(r->nimp + 1, sizeof *names);
  double *v = rf__calloc(r->nimp + 1, sizeof *v);
  if (!p || !names || !v) {
    rf__free(p);
    rf__free(names);
    rf__free(v);
    return rf__nomem();
  }
  for (size_t j = 0; j < r->nimp; j++) p[j] = &r->imp[j];
  qsort(p, r->nimp, sizeof *p, cmp_rank);
  size_t n = r->nimp < 20 ? r->nimp : 20;
  for (size_t k = 0; k < n; k++) {
    size_t j = (size_t)(p[k] - r->imp);
    names[k] = r->imp_name[j];
    v[k] = r->imp[j];
  }
  char title[128];
  snprintf(title, sizeof title, "Feature importance (top %zu of %zu)", n, r->nimp);
  bars(pg->f, "importance", title, "impurity importance (MDI, share of 1)", names, v, NULL, n, NULL,
       NULL);
  rf__free(p);
  rf__free(names);
  rf__free(v);
  return 0;
}

static void work_hist(page *pg) {
  const rp_report *r = pg->r;
  FILE *f = pg->f;
  enum { NB = 30 };
  double mn = INFINITY, mx = -INFINITY;
  for (size_t i = 0; i < r->nhist; i++) {
    double l = log10(r->hist[i]);
    if (l < mn) mn = l;
    if (l > mx) mx = l;
  }
  int lo = (int)floor(mn), hi = (int)ceil(mx);
  if (hi <= lo) hi = lo + 1;
  size_t cnt[NB] = {0}, top = 1;
  for (size_t i = 0; i < r->nhist; i++) {
    int b = (int)((log10(r->hist[i]) - lo) / (hi - lo) * NB);
    if (b >= NB) b = NB - 1;
    if (b < 0) b = 0;
    if (++cnt[b] > top) top = cnt[b];
  }
  char title[200], xl[200];
  snprintf(title, sizeof title, "Work per launch: %zu launches, 1e%.1f to 1e%.1f %s", r->nhist, mn,
           mx, r->work_what);
  snprintf(xl, sizeof xl, "%s per launch (log scale)", r->work_what);
  svg_open(f, "work", title, W, H);
  double pw = W - ML - MR, ph = H - MT - MB, bw = pw / NB;
  fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" stroke=\"#444\"/>\n",
          ML, MT, pw, ph);
  int xs = (hi - lo + 7) / 8;
  for (int d = lo; d <= hi; d += xs) {
    double x = ML + (double)(d - lo) / (hi - lo) * pw;
    fprintf(f, "<text x=\"%.1f\" y=\"%.0f\" font-size=\"11\" text-anchor=\"middle\">1e%d</text>\n", x,
            MT + ph + 16, d);
  }
  size_t step = (top + 3) / 4;
  top = step * ((top + step - 1) / step);
  for (size_t c = 0; c <= top; c += step) {
    double y = MT + ph - (double)c / (double)top * ph;
    fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"#ddd\"/><text x=\"%d\" "
            "y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%zu</text>\n", ML, y, ML + pw, y, ML - 6,
            y + 4, c);
  }
  for (int b = 0; b < NB; b++) {
    double h = (double)cnt[b] / (double)top * ph;
    if (cnt[b])
      fprintf(f, "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
              "fill=\"#1f5f9f\"/>\n", ML + b * bw + 1, MT + ph - h, bw - 2, h);
  }
  axis_labels(f, xl, "launches", W, H, MB);
  fputs("</svg>\n", f);
}

int rp_write_html(FILE *f, const rp_report *r) {
  page pg;
  memset(&pg, 0, sizeof pg);
  pg.r = r;
  pg.f = f;
  if (colours(&pg)) return -1;
  size_t n2 = 0, inside = 0, nint = 0, m = 0;
  double *e = rf__calloc(r->n + 1, sizeof *e), s = 0;
  if (!e) {
    rf__free(pg.col);
    return rf__nomem();
  }
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
  rf__free(e);
  char b1[32], b2[32], b3[32], b4[32];
  fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>", f);
  esc(f, r->title);
  fputs("</title>\n<style>body{font-family:sans-serif;margin:24px;color:#222;max-width:1340px}"
        "main{display:grid;grid-template-columns:repeat(auto-fill,minmax(660px,1fr));gap:16px 8px}"
        "section{min-width:0}h2{font-size:15px;margin:4px 0}"
        "table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:2px 7px;"
        "text-align:right}td.key,th.key{text-align:left}caption{text-align:left;font-weight:bold;"
        "padding:4px 0}#worst{margin-top:6px}#worst th{background:" WORST_BG "}#worst td.key{max-width:420px;text-align:left}"
        "section.wide{grid-column:1/-1}#settings td{text-align:left}.note{color:#555;font-size:13px}"
        "header{display:flex;flex-wrap:wrap;gap:12px 32px;align-items:flex-start}</style>\n"
        "</head>\n<body>\n<h1>", f);
  esc(f, r->title);
  fputs("</h1>\n<p>", f);
  esc(f, r->source);
  fputs(" &mdash; written by kcast ", f);
  esc(f, r->version);
  if (r->date && *r->date) {
    fputs(", ", f);
    esc(f, r->date);
  }
  fputs("</p>\n<header>\n<table id=\"summary\"><caption>Over every row</caption><tr><th>rows</th>"
        "<th>MAPE %</th><th>median APE %</th><th>within 2x</th><th>interval coverage</th>"
        "<th>nominal</th></tr>\n", f);
  fprintf(f, "<tr><td>%zu</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%g</td></tr></table>\n",
          r->n, rp_num(mape, b1, sizeof b1), rp_num(med, b2, sizeof b2),
          rp_num(r->n ? (double)n2 / (double)r->n : NAN, b3, sizeof b3),
          rp_num(nint ? (double)inside / (double)nint : NAN, b4, sizeof b4), r->nominal);
  if (r->nsettings) {
    fputs("<table id=\"settings\"><caption>What is shown</caption>\n", f);
    for (size_t k = 0; k < r->nsettings; k++) {
      fputs("<tr><th class=\"key\">", f);
      esc(f, r->settings[k].name);
      fputs("</th><td>", f);
      esc(f, r->settings[k].value);
      fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
  }
  fputs("</header>\n", f);
  if (r->in_sample)
    fputs("<p class=\"note\">The model predicts the rows of the dataset; where it was trained on\n"
          "them this shows its fit, not its accuracy on new launches ('kcast cv --predictions'\n"
          "and 'kcast report --cv' show that).</p>\n", f);
  int rc = -1;
  fputs("<main>\n<section>\n", f);
  scatter(&pg);
  fputs("</section>\n", f);
  if (r->ncov) {
    fputs("<section>\n", f);
    coverage_plot(&pg);
    fputs("</section>\n", f);
  } else {
    note(&pg, "interval coverage: %s", "no intervals");
  }
  /* the worst rows under the scatter, the page's width (long keys) */
  fputs("<section class=\"wide\">\n", f);
  if (worst_table(&pg)) goto out;
  fputs("</section>\n", f);
  if (r->app && pg.napps >= 2) {
    fputs("<section>\n", f);
    if (error_by(&pg, r->app, "by-app", "application", "applications")) goto out;
    fputs("</section>\n", f);
  } else {
    note(&pg, "error by application: %s", r->app ? "one application" : "no application column");
  }
  size_t ngpu = 1;
  if (r->gpu) {
    const char **names;
    size_t *cnt;
    if (distinct(r->gpu, r->n, &names, &cnt, &ngpu)) goto out;
    rf__free(names);
    rf__free(cnt);
  }
  if (ngpu >= 2) {
    fputs("<section>\n", f);
    if (error_by(&pg, r->gpu, "by-gpu", "GPU", "GPUs")) goto out;
    fputs("</section>\n", f);
  } else {
    note(&pg, "error by GPU: %s", "one GPU");
  }
  if (r->work) {
    fputs("<section>\n", f);
    if (error_work(&pg)) goto out;
    fputs("</section>\n", f);
  } else {
    note(&pg, "error against work per launch: %s", "no work per row (class.* counts)");
  }
  if (rank_panels(&pg)) goto out;
  if (r->nimp) {
    fputs("<section>\n", f);
    if (importance_plot(&pg)) goto out;
    fputs("</section>\n", f);
  } else {
    note(&pg, "feature importance: %s", "no model given (--model)");
  }
  if (r->nhist) {
    fputs("<section>\n", f);
    work_hist(&pg);
    fputs("</section>\n", f);
  } else {
    note(&pg, "work-per-launch histogram: %s", "no dataset given");
  }
  fputs("</main>\n", f);
  if (pg.nnotes) {
    fputs("<p class=\"note\" id=\"not-shown\">Not shown: ", f);
    for (size_t k = 0; k < pg.nnotes; k++) {
      if (k) fputs("; ", f);
      esc(f, pg.notes[k]);
    }
    fputs(".</p>\n", f);
  }
  fputs("</body>\n</html>\n", f);
  rc = 0;
out:
  rf__free(pg.col);
  return rc;
}
