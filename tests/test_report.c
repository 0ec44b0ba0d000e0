/*
 * test_report.c -- `kcast report` on a dataset the test builds (ds_ API)
 * with a model trained on it, and on a cross-validation run's predictions;
 * then the HTML in a real headless browser (Debian's chromium): the DOM it
 * builds holds the plots' SVG elements, a screenshot shows them drawn (the
 * plot colours' pixels counted in the decoded PNG), and the browser's
 * network log shows that the page asked for nothing -- checked against the
 * same page with one external image added, which the log must catch.
 * Without a chromium that starts, the browser half is skipped with a
 * message.  Every point carries a hover title with its keys and error (in
 * the file and in the browser's DOM), the legend and the worst-rows table
 * are found on the screenshot by their own background colours, and the
 * same holds for a report of the shared tuning data (../shared/data:
 * tuning-features, tuning-rtx) where it is present.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "datasets/ds.h"
#include "include/kcast.h"
#include "model/model.h"
#include "model/report.h"
#include "tests.h"

#define CHECK_MSG(msg, cond) \
  CU_assertImplementation(!!(cond), __LINE__, (msg), __FILE__, "", CU_FALSE)

static char dir[1024];

static int kc(char **out, char **err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int kc(char **out, char **err, const char *fmt, ...) {
  char args[8192], cmd[9000];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(args, sizeof args, fmt, ap);
  va_end(ap);
  snprintf(cmd, sizeof cmd, "'%s' %s", tests_kcast(), args);
  return tests_run(cmd, out, err);
}

/* 90 launches of three apps (one named with HTML's special characters),
   time measured on H200 and T4 (time grows with the work). */
static int make_db(const char *path) {
  char err[512];
  ds_db *db;
  if (ds_open(path, DS_CREATE, &db, err, sizeof err) < 0) return -1;
  int rc = ds_begin(db);
  static const char *const apps[] = {"alpha", "beta", "<b>&gamma"};
  for (int i = 0; i < 90; i++) {
    feat_vec fv;
    feat_init(&fv);
    double ctas = 8 << (i % 12), fp = ctas * 256 * (1 + i % 5);
    feat_set(&fv, "launch.ctas", ctas);
    feat_set(&fv, "launch.block_x", 256);
    feat_set(&fv, "launch.threads", ctas * 256);
    feat_set(&fv, "class.fp32", fp);
    feat_set(&fv, "class.ld_global", ctas * 512);
    ds_launch l = {0};
    l.app = apps[i % 3];
    char ds[32];
    snprintf(ds, sizeof ds, "n%d", i);
    l.dataset = ds;
    l.kernel = "_Z6kernelPfi";
    l.grid[0] = (unsigned)ctas, l.grid[1] = l.grid[2] = 1;
    l.block[0] = 256, l.block[1] = l.block[2] = 1;
    int64_t id = 0;
    rc |= ds_insert_launch(db, &l, &fv, &id);
    double t = 3000 + fp * 0.01 * (1 + 0.1 * (i % 7));
    for (int r = 0; r < 3; r++) {
      rc |= ds_insert_measurement(db, id, "H200", "time_ns", t * (1 + 0.01 * r), r, "t");
      rc |= ds_insert_measurement(db, id, "T4", "time_ns", 4 * t * (1 + 0.01 * r), r, "t");
    }
    feat_free(&fv);
  }
  rc |= ds_commit(db);
  ds_close(db);
  return rc ? -1 : 0;
}

static int count(const char *s, const char *needle) {
  int n = 0;
  for (const char *p = s; p && (p = strstr(p, needle)); p += strlen(needle)) n++;
  return n;
}

/* What the file itself says: self-contained, escaped, every plot there. */
static void check_html(const char *html, const char *what, int two_gpus) {
  char msg[256];
  static const char *const ids[] = {"id=\"scatter\"", "id=\"coverage\"", "id=\"by-app\"",
                                    "id=\"importance\"", "id=\"work\"", "id=\"legend\"",
                                    "id=\"worst\"", "id=\"error-work\"", "id=\"settings\""};
  for (size_t k = 0; k < sizeof ids / sizeof *ids; k++) {
    snprintf(msg, sizeof msg, "%s: the page has the plot %s", what, ids[k]);
    CHECK_MSG(msg, html && strstr(html, ids[k]));
  }
  snprintf(msg, sizeof msg, "%s: %s", what, two_gpus ? "two GPUs: the error by GPU is drawn"
                                                    : "one GPU: no error-by-GPU panel, said why");
  CHECK_MSG(msg, html && (two_gpus ? strstr(html, "id=\"by-gpu\"") != NULL
                                   : !strstr(html, "id=\"by-gpu\"") && strstr(html, "error by GPU: one GPU")));
  /* every point of the scatter has its title: keys, measured, predicted, APE */
  const char *sc = html ? strstr(html, "id=\"scatter\"") : NULL, *se = sc ? strstr(sc, "</svg>") : NULL;
  int circles = 0, titled = 0;
  for (const char *p = sc; p && p < se && (p = strstr(p, "<circle")) && p < se; p++) {
    circles++;
    const char *t = strstr(p, "<title>app: "), *c = strstr(p, "</circle>");
    titled += t && c && t < c && strstr(t, "measured ") && strstr(t, "APE ") < c;
  }
  snprintf(msg, sizeof msg, "%s: every scatter point has a hover title with its keys (%d of %d)", what,
           titled, circles);
  CHECK_MSG(msg, circles >= 90 && titled == circles);
  snprintf(msg, sizeof msg, "%s: the legend explains the colours, the diagonal, the 2x lines and the "
           "interval bars", what);
  CHECK_MSG(msg, html && strstr(html, "predicted = measured") && strstr(html, "2x off") &&
                     strstr(html, "prediction interval, 90 % nominal") && strstr(html, ">alpha</text>"));
  snprintf(msg, sizeof msg, "%s: the worst-rows table lists 20 rows with their keys", what);
  const char *w = html ? strstr(html, "<table id=\"worst\">") : NULL;
  CHECK_MSG(msg, w && strstr(w, "<th>app</th><th>dataset</th><th>kernel</th>") &&
                     strstr(w, "<tr><td>20</td>") && !strstr(w, "<tr><td>21</td>"));
  snprintf(msg, sizeof msg, "%s: tuning spaces (30 rows per app and GPU) get rank panels with regrets", what);
  CHECK_MSG(msg, html && strstr(html, "id=\"ranks\"") && strstr(html, "top-1 regret ") &&
                     strstr(html, "top-5 regret "));
  snprintf(msg, sizeof msg, "%s: no script, no link, no external source", what);
  CHECK_MSG(msg, html && !strstr(html, "<script") && !strstr(html, "src=") && !strstr(html, "href=") &&
                     !strstr(html, "url(") && !strstr(html, "@import"));
  /* the one URI is the SVG namespace name, which nothing fetches */
  snprintf(msg, sizeof msg, "%s: no URL but the SVG namespace", what);
  CHECK_MSG(msg, html && count(html, "http") == count(html, "http://www.w3.org/2000/svg"));
  snprintf(msg, sizeof msg, "%s: an app named <b>&gamma is escaped", what);
  CHECK_MSG(msg, html && strstr(html, "&lt;b&gt;&amp;gamma") && !strstr(html, "<b>&gamma"));
  snprintf(msg, sizeof msg, "%s: axes say what and in which unit", what);
  CHECK_MSG(msg, html && strstr(html, "(ns, log scale)") && strstr(html, "nominal coverage") &&
                     strstr(html, "thread-instructions per launch (log scale)"));
}

/* ------------------------------------------------------------ PNG -- */

static uint32_t be32(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Decode an 8-bit RGB/RGBA non-interlaced PNG into RGB (malloc'd). */
static unsigned char *png_rgb(const unsigned char *b, size_t n, uint32_t *w, uint32_t *h) {
  if (n < 33 || memcmp(b, "\x89PNG\r\n\x1a\n", 8)) return NULL;
  size_t at = 8, zl = 0, zc = 0;
  unsigned char *z = NULL;
  int ch = 0;
  while (at + 12 <= n) {
    uint32_t len = be32(b + at);
    const unsigned char *type = b + at + 4, *data = b + at + 8;
    if (at + 12 + len > n) break;
    if (!memcmp(type, "IHDR", 4)) {
      *w = be32(data), *h = be32(data + 4);
      if (data[8] != 8 || data[12] != 0 || (data[9] != 2 && data[9] != 6)) return free(z), NULL;
      ch = data[9] == 6 ? 4 : 3;
    } else if (!memcmp(type, "IDAT", 4)) {
      if (zl + len > zc) {
        zc = (zl + len) * 2;
        unsigned char *t = realloc(z, zc);
        if (!t) return free(z), NULL;
        z = t;
      }
      memcpy(z + zl, data, len);
      zl += len;
    }
    at += 12 + len;
  }
  if (!ch || !z || *w == 0 || *h == 0 || *w > 20000 || *h > 20000) return free(z), NULL;
  size_t stride = (size_t)*w * (size_t)ch;
  uLongf rawlen = (uLongf)((stride + 1) * *h);
  unsigned char *raw = malloc(rawlen), *rgb = malloc((size_t)*w * *h * 3);
  if (!raw || !rgb || uncompress(raw, &rawlen, z, zl) != Z_OK || rawlen != (stride + 1) * *h) {
    free(z), free(raw), free(rgb);
    return NULL;
  }
  free(z);
  for (uint32_t y = 0; y < *h; y++) {
    unsigned char *row = raw + y * (stride + 1) + 1, *prev = y ? row - (stride + 1) : NULL;
    int ft = row[-1];
    for (size_t x = 0; x < stride; x++) {
      int a = x >= (size_t)ch ? row[x - ch] : 0, up = prev ? prev[x] : 0,
          c = prev && x >= (size_t)ch ? prev[x - ch] : 0, pr;
      switch (ft) {
        case 1: pr = a; break;
        case 2: pr = up; break;
        case 3: pr = (a + up) / 2; break;
        case 4: {
          int p = a + up - c, pa = abs(p - a), pb = abs(p - up), pc = abs(p - c);
          pr = pa <= pb && pa <= pc ? a : pb <= pc ? up : c;
          break;
        }
        default: pr = 0;
      }
      row[x] = (unsigned char)(row[x] + pr);
    }
    for (uint32_t x = 0; x < *w; x++)
      memcpy(rgb + ((size_t)y * *w + x) * 3, row + (size_t)x * ch, 3);
  }
  free(raw);
  return rgb;
}

static size_t pixels_of(const unsigned char *rgb, uint32_t w, uint32_t h, unsigned colour) {
  size_t n = 0;
  for (size_t i = 0; i < (size_t)w * h; i++)
    n += rgb[3 * i] == (colour >> 16 & 255) && rgb[3 * i + 1] == (colour >> 8 & 255) &&
         rgb[3 * i + 2] == (colour & 255);
  return n;
}

/* --------------------------------------------------------- browser -- */

static const char *chromium(void) {
  static const char *const c[] = {"/usr/bin/chromium", "/usr/bin/chromium-browser"};
  for (size_t k = 0; k < 2; k++)
    if (access(c[k], X_OK) == 0) return c[k];
  return NULL;
}

/* chromium headless on html with every outgoing request sent to a closed
   port; the network log in netlog, the DOM (--dump-dom) or a screenshot. */
static int browse(const char *html, const char *netlog, const char *shot, char **dom) {
  char cmd[8192];
  snprintf(cmd, sizeof cmd,
           "timeout 120 '%s' --headless --no-sandbox --disable-gpu --no-first-run "
           "--user-data-dir='%s/profile' --proxy-server=http://127.0.0.1:9 %s%s%s "
           "--log-net-log='%s' %s 'file://%s'",
           chromium(), dir, shot ? "--window-size=1400,1800 --screenshot='" : "", shot ? shot : "",
           shot ? "'" : "", netlog, shot ? "" : "--dump-dom", html);
  return tests_run(cmd, dom, NULL);
}

/* Requests the page made for anything but file: URL_REQUEST_START_JOB
   events keyed to the file:// site (the browser's own background requests
   have no page site); -1 when the log cannot be read. */
static int page_requests(const char *netlog) {
  char *txt = tests_read_file(netlog, NULL);
  cJSON *j = txt ? cJSON_Parse(txt) : NULL;
  free(txt);
  if (!j) {
    /* chromium may leave the closing of the JSON undone when killed */
    return -1;
  }
  cJSON *types = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "constants"), "logEventTypes");
  cJSON *start = cJSON_GetObjectItem(types, "URL_REQUEST_START_JOB");
  int n = -1;
  if (cJSON_IsNumber(start)) {
    n = 0;
    cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(j, "events")) {
      cJSON *t = cJSON_GetObjectItem(e, "type"), *p = cJSON_GetObjectItem(e, "params");
      if (!cJSON_IsNumber(t) || t->valueint != start->valueint) continue;
      cJSON *url = cJSON_GetObjectItem(p, "url"), *nik = cJSON_GetObjectItem(p, "network_isolation_key");
      if (cJSON_IsString(url) && strncmp(url->valuestring, "file:", 5) && cJSON_IsString(nik) &&
          strstr(nik->valuestring, "file://"))
        n++;
    }
  }
  cJSON_Delete(j);
  return n;
}

/* Scatter points with a hover title in a DOM (the browser's, after parsing). */
static int titled_points(const char *dom, int *circles) {
  const char *sc = dom ? strstr(dom, "id=\"scatter\"") : NULL, *se = sc ? strstr(sc, "</svg>") : NULL;
  int titled = 0;
  *circles = 0;
  for (const char *p = sc; p && p < se && (p = strstr(p, "<circle")) && p < se; p++) {
    (*circles)++;
    const char *t = strstr(p, "<title>"), *c = strstr(p, "</circle>");
    titled += t && c && t < c && strstr(t, "APE ") && strstr(t, "APE ") < c;
  }
  return titled;
}

static void in_browser(const char *html_path, int min_points, int control) {
  if (!chromium()) {
    printf("\n    (no chromium: the browser checks are skipped; make deps installs it) ");
    return;
  }
  char netlog[1200], shot[1200], bad[1200], cmd[4096];
  snprintf(netlog, sizeof netlog, "%s/net.json", dir);
  snprintf(shot, sizeof shot, "%s/shot.png", dir);
  snprintf(bad, sizeof bad, "%s/external.html", dir);
  char *dom = NULL;
  int rc = browse(html_path, netlog, NULL, &dom);
  if (rc != 0 || !dom || !strstr(dom, "<svg")) {
    printf("\n    (chromium did not start (exit %d): the browser checks are skipped) ", rc);
    free(dom);
    return;
  }
  CHECK_MSG("the browser's DOM holds the scatter plot's points",
            count(dom, "<circle") >= min_points && strstr(dom, "id=\"scatter\""));
  int circles = 0, titled = titled_points(dom, &circles);
  CHECK_MSG("in the browser's DOM every scatter point holds its hover title",
            circles >= min_points && titled == circles);
  CHECK_MSG("the browser's DOM holds the legend and the worst-rows table",
            strstr(dom, "id=\"legend\"") && strstr(dom, "id=\"worst\""));
  if (control)
    CHECK_MSG("the browser's DOM holds the bars of the error, importance and work plots",
              count(dom, "class=\"bar\"") >= 10);
  free(dom);
  int req = page_requests(netlog);
  CHECK_MSG("the page asked the network for nothing (netlog)", req == 0);
  if (!control) goto shot;
  /* the same page with one external image: the log must show it */
  char *html = tests_read_file(html_path, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(html);
  char *end = strstr(html, "</body>");
  CU_ASSERT_PTR_NOT_NULL_FATAL(end);
  FILE *f = fopen(bad, "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fprintf(f, "%.*s<img src=\"http://203.0.113.7/x.png\">%s", (int)(end - html), html, end);
  fclose(f);
  free(html);
  rc = browse(bad, netlog, NULL, &dom);
  free(dom);
  CHECK_MSG("the check sees a request when the page makes one (control)", page_requests(netlog) >= 1);
shot:

  rc = browse(html_path, netlog, shot, NULL);
  size_t len = 0;
  unsigned char *png = (unsigned char *)tests_read_file(shot, &len);
  uint32_t w = 0, h = 0;
  unsigned char *rgb = png ? png_rgb(png, len, &w, &h) : NULL;
  CHECK_MSG("chromium's screenshot decodes (1400 pixels wide)", rgb && w == 1400);
  if (rgb) {
    size_t blue = pixels_of(rgb, w, h, 0x1f5f9f), orange = pixels_of(rgb, w, h, 0xe6a23c),
           light = pixels_of(rgb, w, h, 0x9cc3e6), leg = pixels_of(rgb, w, h, 0xf4f1e4),
           worst = pixels_of(rgb, w, h, 0xe3ecf7);
    /* the legend's box (LEGEND_BG) and the worst table's header (WORST_BG):
       at least a strip of each, drawn where the screenshot shows */
    CHECK_MSG("the legend is drawn (its background's pixels)", leg > 5000);
    CHECK_MSG("the worst-rows table is drawn (its header's pixels)", worst > 2000);
    if (leg <= 5000 || worst <= 2000) printf("\n    legend %zu worst %zu ", leg, worst);
    CHECK_MSG("the points and bars are drawn (plot blue pixels)", blue > 1500);
    CHECK_MSG("the mean-APE bars are drawn (orange pixels)", orange > 300);
    CHECK_MSG("the intervals are drawn (light blue pixels)", light > 30);
    if (blue <= 1500 || orange <= 300 || light <= 30)
      printf("\n    blue %zu orange %zu light %zu ", blue, orange, light);
  }
  free(rgb);
  free(png);
  snprintf(cmd, sizeof cmd, "rm -rf '%s/profile'", dir);
  tests_run(cmd, NULL, NULL);
}

static void test_report(void) {
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "report"));
  char db[1200], model[1200], pred[1200], html[1200], cvhtml[1200];
  snprintf(db, sizeof db, "%s/d.db", dir);
  snprintf(model, sizeof model, "%s/m.kcm", dir);
  snprintf(pred, sizeof pred, "%s/p.csv", dir);
  snprintf(html, sizeof html, "%s/model.html", dir);
  snprintf(cvhtml, sizeof cvhtml, "%s/cv.html", dir);
  CU_ASSERT_EQUAL_FATAL(make_db(db), 0);
  char *out = NULL, *err = NULL;
  CU_ASSERT_EQUAL_FATAL(kc(&out, &err, "train '%s' --gpu H200 --target time --trees 30 -o '%s'", db, model), 0);
  free(out); free(err);
  int rc = kc(&out, &err, "report '%s' --model '%s' -o '%s'", db, model, html);
  CHECK_MSG("report DB --model MODEL writes the page", rc == 0 && out && strstr(out, "(90 rows)"));
  free(out); free(err);
  char *txt = tests_read_file(html, NULL);
  check_html(txt, "model report", 0);
  CHECK_MSG("the model report's header names the model's forest", txt && strstr(txt, "model: forest") &&
            strstr(txt, "30 extra trees, max features 1, min leaf 1, seed 1"));
  CHECK_MSG("the model report asks the model at six nominal levels", txt && count(txt, "<circle cx") >= 90 + 6);
  free(txt);

  rc = kc(&out, &err, "cv '%s' --gpu all --target time --group app --trees 20 --predictions '%s'", db, pred);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  free(out); free(err);
  txt = tests_read_file(pred, NULL);
  CHECK_MSG("cv --predictions of a dataset gives each row's demangled kernel after its APE",
            txt && strstr(txt, ",ape_pct,demangled,") && strstr(txt, ",\"kernel(float*, int)\","));
  CHECK_MSG("cv --predictions records each row's work and its settings, last (docs/formats.md)",
            txt && strstr(txt, ",gpu,row,measured,predicted,lo,hi,ape_pct,demangled,work,settings\n") &&
                strstr(txt, "\"kcast=" KCAST_VERSION_STRING ";scheme=group by app;folds=3;seed=1;") &&
                strstr(txt, ";trees=20;") && strstr(txt, ";unit=ns;"));
  free(txt);
  rc = kc(&out, &err, "report --cv '%s' '%s' --model '%s' --unit ns --title 'CV <two GPUs>' -o '%s'",
          pred, db, model, cvhtml);
  CHECK_MSG("report --cv PREDICTIONS DB writes the page", rc == 0 && out && strstr(out, "(180 rows)"));
  free(out); free(err);
  txt = tests_read_file(cvhtml, NULL);
  check_html(txt, "cv report", 1);
  CHECK_MSG("the cv report's header has the CV's settings from the predictions file",
            txt && strstr(txt, "<th class=\"key\">CV scheme</th><td>group by app</td>") &&
                strstr(txt, "<th class=\"key\">folds</th><td>3</td>") &&
                strstr(txt, "<th class=\"key\">seed</th><td>1</td>") &&
                strstr(txt, "<th class=\"key\">feature families</th>") &&
                strstr(txt, "<th class=\"key\">trees</th><td>20</td>") &&
                strstr(txt, "<th class=\"key\">kcast version of the CV</th><td>" KCAST_VERSION_STRING));
  CHECK_MSG("the cv report has one bar pair per GPU and the escaped title",
            txt && strstr(txt, "Error by GPU (2 GPUs)") && strstr(txt, "CV &lt;two GPUs&gt;"));
  free(txt);

  rc = kc(&out, &err, "report --cv '%s' -o '%s/x.html'", db, dir);
  CHECK_MSG("a file that is not cv predictions is an error naming it", rc == 1 && err && strstr(err, "d.db"));
  free(out); free(err);
  rc = kc(&out, &err, "report '%s'", db);
  CHECK_MSG("a dataset without --model is a usage error", rc == 2);
  free(out); free(err);
  rc = kc(&out, &err, "report '%s' --model '%s' -o '%s/no/such/r.html'", db, model, dir);
  CHECK_MSG("an unwritable output is an error, nothing left", rc == 1);
  free(out); free(err);

  in_browser(cvhtml, 90, 1);
}

/* Numbers for people, and the regret of a ranking (model/). */
static void test_numbers_and_regret(void) {
  char b[32];
  CHECK_MSG("3.9e-13 % is written 0", !strcmp(rp_num(3.9e-13, b, sizeof b), "0"));
  CHECK_MSG("12.345 is written 12.3", !strcmp(rp_num(12.345, b, sizeof b), "12.3"));
  CHECK_MSG("0.00123 keeps its 3 digits", !strcmp(rp_num(0.00123, b, sizeof b), "0.00123"));
  CHECK_MSG("1234567 gets an exponent", !strcmp(rp_num(1234567, b, sizeof b), "1.23e+06"));
  CHECK_MSG("NaN is a dash", !strcmp(rp_num(NAN, b, sizeof b), "-"));
  /* five configurations: the best measured (1) is ranked last */
  const double y[] = {5, 1, 3, 2, 4}, p[] = {1, 5, 2, 3, 4};
  double r1 = -1, r2 = -1, r5 = -1;
  CU_ASSERT_EQUAL(rf_rank_regret(y, p, 5, 1, &r1), 0);
  CU_ASSERT_EQUAL(rf_rank_regret(y, p, 5, 2, &r2), 0);
  CU_ASSERT_EQUAL(rf_rank_regret(y, p, 5, 5, &r5), 0);
  CHECK_MSG("top-1 regret: the row ranked best measures 5 against the best 1", fabs(r1 - 4) < 1e-12);
  CHECK_MSG("top-2 regret: the better of the two ranked best measures 3", fabs(r2 - 2) < 1e-12);
  CHECK_MSG("top-5 regret of five rows is 0", r5 == 0);
  const double yn[] = {NAN, 2, 4}, pn[] = {0, 1, 3};
  CU_ASSERT_EQUAL(rf_rank_regret(yn, pn, 3, 1, &r1), 0);
  CHECK_MSG("a row without a measurement is left out", r1 == 0);
  CHECK_MSG("k = 0 is an error", rf_rank_regret(y, p, 5, 0, &r1) == -1);
  const double y0[] = {0, 1};
  CHECK_MSG("a best measurement of 0 is an error (no ratio)", rf_rank_regret(y0, p, 2, 1, &r1) == -1);
}

/* The shared tuning data (../shared/data, READMEs there): a 5-fold CV of
   the convolution's 1,293 rows on three GPUs, and of tuning-rtx's
   convolution dataset on four, each reported and opened in chromium. */
static void test_shared_tuning_data(void) {
  const char *csv = "../shared/data/tuning-features/conv_milo.csv",
             *rtx = "../shared/data/tuning-rtx/convolution.db";
  int have_csv = access(csv, R_OK) == 0, have_rtx = access(rtx, R_OK) == 0;
  if (!have_csv && !have_rtx) {
    printf("\n    (no ../shared/data/tuning-features or tuning-rtx: skipped) ");
    return;
  }
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "report-tuning"));
  char *out = NULL, *err = NULL, pred[1200], html[1200];
  for (int k = 0; k < 2; k++) {
    if (k == 0 && !have_csv) continue;
    if (k == 1 && !have_rtx) continue;
    snprintf(pred, sizeof pred, "%s/p%d.csv", dir, k);
    snprintf(html, sizeof html, "%s/r%d.html", dir, k);
    int rc = k == 0 ? kc(&out, &err, "cv --csv %s --target time_ms_median --ignore 'key,device_name,"
                         "time_ms_mean,repeats,tune.*,ptxas.*' --trees 20 --predictions '%s'", csv, pred)
                    : kc(&out, &err, "cv %s --gpus ../shared/data/tuning-rtx/gpus-rtx.csv --gpu all "
                         "--target time --trees 20 --predictions '%s'", rtx, pred);
    CHECK_MSG(k ? "cv of tuning-rtx/convolution.db writes its predictions"
                : "cv of tuning-features/conv_milo.csv writes its predictions", rc == 0);
    if (rc) printf("\n    %s", err ? err : "");
    free(out); free(err);
    if (rc) continue;
    rc = kc(&out, &err, "report --cv '%s' %s -o '%s'", pred, k ? rtx : "--unit ms", html);
    CHECK_MSG("the tuning data's report is written", rc == 0);
    free(out); free(err);
    char *txt = tests_read_file(html, NULL);
    int circles = 0, titled = titled_points(txt, &circles);
    CHECK_MSG("tuning data: every scatter point has a hover title", circles >= 600 && titled == circles);
    CHECK_MSG("tuning data: one rank panel per GPU, with the regrets",
              txt && count(txt, "<svg class=\"rank\"") == (k ? 4 : 3) && strstr(txt, "top-5 regret"));
    CHECK_MSG("tuning data: the legend, the worst rows and the settings are there",
              txt && strstr(txt, "id=\"legend\"") && strstr(txt, "<table id=\"worst\">") &&
                  strstr(txt, "<th class=\"key\">CV scheme</th><td>kfold</td>"));
    free(txt);
    in_browser(html, 600, 0);
  }
}

TEST_SUITES(report_suites) {
  CU_pSuite s = tests_suite("report");
  TEST_ADD(s, test_report);
  TEST_ADD(s, test_numbers_and_regret);
  TEST_ADD(s, test_shared_tuning_data);
}
