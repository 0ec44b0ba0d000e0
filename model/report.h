/*
 * report.h -- the accuracy report (model/report.c): one self-contained
 * HTML page (inline SVG, a style element, no script, nothing fetched) of
 * predictions against measurements, for `kcast report` and any caller
 * that holds predictions (a library user, the Python package).
 *
 * The caller gives the rows (measured, predicted, interval, keys, work)
 * and what to say about them (settings, importance, coverage levels);
 * rp_write_html draws every panel the data allows and says which it left
 * out and why.  Not thread-safe per report; separate reports are
 * independent.
 */
#ifndef KCAST_REPORT_H
#define KCAST_REPORT_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One line of the settings table in the page's header. */
typedef struct rp_setting {
  const char *name, *value;
} rp_setting;

typedef struct rp_report {
  const char *title;              /* the page's title (escaped when written) */
  const char *source;             /* what was evaluated ("dataset d.db, model m.kcm") */
  const char *version;            /* kcast version string */
  const char *date;               /* when written, or "" */
  const char *target, *unit;      /* "time", "ns" */
  size_t n;                       /* rows */
  const double *y, *pred;         /* n measured and predicted values */
  const double *lo, *hi;          /* n interval bounds, or NULL */
  const char *const *app;         /* n labels each, or NULL; NULL entries are "" */
  const char *const *dataset;
  const char *const *kernel;      /* shown as given (demangle before) */
  const char *const *gpu;         /* NULL: every row is gpu1's */
  const char *gpu1;
  const double *work;             /* n thread-instructions per row (<= 0 or NaN:
                                     unknown), or NULL */
  const char *work_what;          /* "thread-instructions" */
  double nominal;                 /* interval coverage asked for */
  size_t ncov;                    /* coverage levels (<= 8) */
  double cov_nom[8], cov_obs[8];
  size_t nimp;                    /* feature importance (0: none) */
  const char *const *imp_name;
  const double *imp;
  size_t nhist;                   /* the dataset's work per launch (all its
                                     launches) for the histogram, or 0 */
  const double *hist;
  size_t nsettings;               /* the header's settings table */
  const rp_setting *settings;
  int in_sample;                  /* the model may have been trained on the rows */
  size_t worst;                   /* rows in the worst-rows table (0: 20) */
} rp_report;

/* Write the page to f.  0, or -1 out of memory (rf_last_error); the
   caller checks f for write errors. */
int rp_write_html(FILE *f, const rp_report *r);

/* Numbers for people: 3 significant digits, magnitudes below 1e-9 as 0,
   no exponent between 1e-3 and 1e6.  Into buf (cap bytes); returns buf. */
char *rp_num(double v, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif

#endif
