/*
 * cli_rfdata.c -- the training options of `kcast train`, `kcast cv` and
 * `kcast report` (--csv, --target, --gpu, --features, the forest's
 * hyperparameters ...) and progress lines.  Loading the input they
 * describe is the library's (datasets/ds_train.h), which the C API and the
 * Python package call alike; docs/accuracy.md says why its defaults are
 * what they are.
 */
#include "cli/cli.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "datasets/ds.h"
#include "model/model.h"

/* ------------------------------------------------------------- helpers -- */

int cli_parse_uint(const char *s, unsigned long max, unsigned long *out) {
  char *e;
  if (!s || !*s || *s == '-') return -1;
  unsigned long long v = strtoull(s, &e, 10);
  if (*e || v > max) return -1;
  *out = (unsigned long)v;
  return 0;
}

/* ---------------------------------------------------------------- options -- */

enum {
  RF_CSV = CLI_OPT_RF, RF_TARGET, RF_GPU, RF_GPU_COLUMN, RF_IGNORE, RF_GROUP, RF_BASE,
  RF_DROP_CONSTANT, RF_FEATURES, RF_LOG_TARGET, RF_NO_LOG_TARGET, RF_EXTRA_TREES,
  RF_RANDOM_FOREST, RF_CALIBRATE, RF_NO_CALIBRATE, RF_CALIBRATE_GROUPS, RF_BOOTSTRAP,
  RF_MAX_FEATURES, RF_TREES, RF_MIN_LEAF, RF_MAX_DEPTH, RF_SEED, RF_THREADS, RF_BINS, RF_APP,
  RF_LEAF_CAP
};

const struct option cli_rf_longopts[] = {
  {"csv", required_argument, NULL, RF_CSV},
  {"target", required_argument, NULL, RF_TARGET},
  {"gpu", required_argument, NULL, RF_GPU},
  {"gpu-column", required_argument, NULL, RF_GPU_COLUMN},
  {"ignore", required_argument, NULL, RF_IGNORE},
  {"group", required_argument, NULL, RF_GROUP},
  {"base", required_argument, NULL, RF_BASE},
  {"drop-constant", no_argument, NULL, RF_DROP_CONSTANT},
  {"features", required_argument, NULL, RF_FEATURES},
  {"log-target", no_argument, NULL, RF_LOG_TARGET},
  {"no-log-target", no_argument, NULL, RF_NO_LOG_TARGET},
  {"extra-trees", no_argument, NULL, RF_EXTRA_TREES},
  {"random-forest", no_argument, NULL, RF_RANDOM_FOREST},
  {"calibrate", no_argument, NULL, RF_CALIBRATE},
  {"no-calibrate", no_argument, NULL, RF_NO_CALIBRATE},
  {"calibrate-groups", no_argument, NULL, RF_CALIBRATE_GROUPS},
  {"bootstrap", required_argument, NULL, RF_BOOTSTRAP},
  {"max-features", required_argument, NULL, RF_MAX_FEATURES},
  {"trees", required_argument, NULL, RF_TREES},
  {"min-leaf", required_argument, NULL, RF_MIN_LEAF},
  {"max-depth", required_argument, NULL, RF_MAX_DEPTH},
  {"seed", required_argument, NULL, RF_SEED},
  {"threads", required_argument, NULL, RF_THREADS},
  {"bins", required_argument, NULL, RF_BINS},
  {"app", required_argument, NULL, RF_APP},
  {"leaf-cap", required_argument, NULL, RF_LEAF_CAP},
  {NULL, 0, NULL, 0},
};

int cli_rf_option(cli_opts *o, int id, struct rf_params *p, cli_rf_input *in) {
  const char *cmd = o->cmd, *v = o->arg;
  unsigned long u;
  switch (id) {
    case RF_CSV: in->csv = v; return 1;
    case RF_TARGET: in->target = v; return 1;
    case RF_GPU: in->gpu = v; return 1;
    case RF_GPU_COLUMN: in->gpu_column = v; return 1;
    case RF_IGNORE: in->ignore = v; return 1;
    case RF_GROUP: in->group = v; return 1;
    case RF_BASE: in->base = v; return 1;
    case RF_APP: in->app = v; return 1;
    case RF_LEAF_CAP:
      if (cli_parse_uint(v, 65536, &u) || u < 2) {
        cli_usage_error(cmd, "--leaf-cap '%s': give a whole number in 2..65536", v);
        return -1;
      }
      p->leaf_cap = (unsigned)u;
      return 1;
    case RF_DROP_CONSTANT: in->drop_constant = 1; return 1;
    case RF_FEATURES:
      if (!ds_train_valid_families(v)) {
        cli_usage_error(cmd, "--features '%s': give a comma list of families: all, launch, op, "
                        "class, mem, ctrl, static, ptxas, tune, a CSV's own prefix, or derived: "
                        "mangrove, analytic, work, occ, gpu, opr", v);
        return -1;
      }
      in->features = v;
      return 1;
    case RF_LOG_TARGET: in->log_target = 1; return 1;
    case RF_NO_LOG_TARGET: in->log_target = 0; return 1;
    case RF_EXTRA_TREES: p->extra_trees = 1; return 1;
    case RF_RANDOM_FOREST: p->extra_trees = 0; return 1;
    case RF_CALIBRATE: p->calibrate = RF_CALIBRATE_ON; in->calib_set = 1; return 1;
    case RF_NO_CALIBRATE:
      p->calibrate = RF_CALIBRATE_OFF;
      p->calib_groups = 0;
      in->calib_set = 1;
      return 1;
    case RF_CALIBRATE_GROUPS:
      p->calibrate = RF_CALIBRATE_ON;
      p->calib_groups = 1;
      in->calib_set = 1;
      return 1;
    case RF_BOOTSTRAP:
      if (!strcmp(v, "on")) p->bootstrap = 1;
      else if (!strcmp(v, "off")) p->bootstrap = 0;
      else { cli_usage_error(cmd, "--bootstrap takes on or off, not '%s'", v); return -1; }
      return 1;
    case RF_MAX_FEATURES: {
      char *e;
      double d = strtod(v, &e);
      if (*e || !(d > 0) || d > 1e9 || (d > 1 && d != (double)(long)d)) {
        cli_usage_error(cmd, "--max-features '%s': give a fraction in (0,1] or a whole count", v);
        return -1;
      }
      p->max_features = d;
      return 1;
    }
    case RF_TREES: case RF_MIN_LEAF: case RF_MAX_DEPTH: case RF_SEED: case RF_THREADS:
    case RF_BINS: {
      static const unsigned long lim[][2] = {
        {1, 100000}, {1, 1000000}, {0, 100000}, {0, ~0UL}, {1, 4096}, {2, 256}};
      const unsigned long *l = lim[id - RF_TREES];
      if (cli_parse_uint(v, l[1], &u) || u < l[0]) {
        cli_usage_error(cmd, "%s '%s': give a whole number in %lu..%lu", o->name, v, l[0], l[1]);
        return -1;
      }
      switch (id) {
        case RF_TREES: p->n_trees = (unsigned)u; break;
        case RF_MIN_LEAF: p->min_leaf = (unsigned)u; break;
        case RF_MAX_DEPTH: p->max_depth = (unsigned)u; break;
        case RF_SEED: p->seed = u; break;
        case RF_THREADS: p->n_threads = (int)u; break;
        default: p->n_bins = (unsigned)u; break;
      }
      return 1;
    }
    default: return 0;
  }
}

void cli_rf_defaults(rf_params *p, cli_rf_input *in) { ds_train_defaults(p, in); }

int cli_rf_load(const char *cmd, cli_rf_input *in, rf_data *d, rf_params *p) {
  char err[1600];
  int rc = ds_train_load(in, d, p, err, sizeof err);
  if (rc == -2) cli_usage_error(cmd, "%s", err);
  else if (rc) cli_error("%s", err);
  if (rc) return -1;
  const char *src = in->csv ? in->csv : in->db;
  if (in->gpu_note[0]) fprintf(stderr, "kcast: note: %s: %s\n", src, in->gpu_note);
  if (in->left_out[0])
    fprintf(stderr, "kcast: note: %s: measurements and row keys are not features: %s "
            "(--features NAME makes one a feature)\n", src, in->left_out);
  return 0;
}

/* --------------------------------------------------------------- progress -- */

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

double cli_now_s(void) { return now_s(); }

void cli_progress_init(cli_progress *p, const char *label) {
  p->label = label;
  p->start = now_s();
  p->last = 0;
  p->shown = 0;
}

/* On a terminal one line redrawn at most five times a second; in a log
   (--progress) a whole line at most every CLI_PROGRESS_LOG_S seconds and
   the last one; either only once the job has run for a second. */
void cli_progress_fn(void *ctx, unsigned done, unsigned total) {
  cli_progress *p = ctx;
  int style = cli_progress_style();
  if (style == CLI_PROGRESS_NONE) return;
  double t = now_s();
  if (t - p->start < 1.0 && done < total) return;
  if (!p->shown && done == total) return; /* finished within a second */
  double every = style == CLI_PROGRESS_TTY ? 0.2 : CLI_PROGRESS_LOG_S;
  if (done < total && p->shown && t - p->last < every) return;
  p->last = t;
  p->shown = 1;
  if (style == CLI_PROGRESS_TTY) {
    fprintf(stderr, "\r%s %u/%u", p->label, done, total);
    if (done == total) fputc('\n', stderr);
  } else {
    fprintf(stderr, "%s %u/%u, %.0f s\n", p->label, done, total, t - p->start);
  }
  fflush(stderr);
}

int cli_model_load(const char *path, rf_forest **f) {
  if (rf_load(path, f)) return -1;
  char why[512];
  if (rf_base_stale(*f, why, sizeof why)) fprintf(stderr, "kcast: warning: %s: %s\n", path, why);
  return 0;
}
