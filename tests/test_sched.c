/*
 * test_sched.c -- the scheduler example (examples/scheduler/sched.c), run as
 * a program the way a user runs it: $KCAST_BUILD/examples/sched.
 *
 * What it checks, in csv mode (one row per policy and GPU plus an "all"
 * row): every launch is placed exactly once; the "all" row is the largest
 * busy time and the sum of the energies; no placement beats the lower
 * bounds; with one GPU every policy gives the same figures; with no
 * measurements the evaluation is the prediction itself; bad input gives one
 * error line naming what is wrong.  On the GPU Mangrove tutorial data
 * (../shared/data/mangrove-tutorial, skipped with a note when absent) it
 * runs examples/scheduler/run-mangrove.sh and checks the oracle rows and
 * the measured evaluation against medians computed here with raw SQLite.
 *
 * Suite "sched".
 */
#include "tests.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#define SUITE_DB "datasets/data/suite-features.db"
#define MG_DATA "../shared/data/mangrove-tutorial"
#define MAX_ROWS 64

/* One csv row. */
typedef struct row {
  char policy[32];
  char gpu[48];
  long launches;
  double t, pt, e; /* time_ns, predicted_time_ns, energy_j */
} row;

typedef struct report {
  row rows[MAX_ROWS];
  int n;
  int parsed;              /* 1: stdout was well-formed csv */
  char err[8192];          /* stderr (notes in csv mode), truncated */
} report;

/* Run the scheduler with args (printf-style); stdout and stderr into *out and *err
   (caller frees).  Returns the exit status. */
static int sched(char **out, char **err, const char *fmt, ...) {
  char args[16384], cmd[20000];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(args, sizeof args, fmt, ap);
  va_end(ap);
  snprintf(cmd, sizeof cmd, "%s/examples/sched %s", tests_build(), args);
  return tests_run(cmd, out, err);
}

/* Parse csv output; 0 when the header and every row are well formed. */
static int parse(const char *csv, report *r) {
  r->n = 0;
  const char *hdr = "policy,gpu,launches,time_ns,predicted_time_ns,energy_j\n";
  if (!csv || strncmp(csv, hdr, strlen(hdr))) return -1;
  const char *p = csv + strlen(hdr);
  while (*p) {
    if (r->n == MAX_ROWS) return -1;
    row *w = &r->rows[r->n];
    int used = 0;
    if (sscanf(p, "%31[^,],%47[^,],%ld,%lf,%lf,%lf%n", w->policy, w->gpu, &w->launches, &w->t,
               &w->pt, &w->e, &used) != 6)
      return -1;
    p += used;
    if (*p != '\n') return -1;
    p++;
    r->n++;
  }
  return 0;
}

/* Run the scheduler in csv mode with args; the parsed report and stderr go
   to *r (nothing left to free, so a fatal assertion leaks nothing).
   Returns the exit status. */
static int sched_csv(report *r, const char *fmt, ...) {
  char args[16384];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(args, sizeof args, fmt, ap);
  va_end(ap);
  char *o = NULL, *e = NULL;
  int rc = sched(&o, &e, "--format csv %s", args);
  r->parsed = parse(o, r) == 0;
  snprintf(r->err, sizeof r->err, "%s", e ? e : "");
  free(o);
  free(e);
  return rc;
}

static const row *find(const report *r, const char *policy, const char *gpu) {
  for (int i = 0; i < r->n; i++)
    if (!strcmp(r->rows[i].policy, policy) && !strcmp(r->rows[i].gpu, gpu)) return &r->rows[i];
  return NULL;
}

static int close_rel(double a, double b, double tol) {
  return fabs(a - b) <= tol * fmax(fabs(a), fabs(b));
}

/* The accounting every policy must satisfy: launches placed once, the
   "all" row = largest busy time and summed energy, figures positive and
   finite, no better than the lower bounds.  Returns the number of
   policies checked. */
static int check_accounting(const report *r, long n) {
  const row *lb = find(r, "lower-bound", "all");
  CU_ASSERT_PTR_NOT_NULL_FATAL(lb);               /* the bounds are reported */
  CU_ASSERT(lb->t > 0 && isfinite(lb->t));
  CU_ASSERT(lb->e > 0 && isfinite(lb->e));
  int policies = 0;
  for (int i = 0; i < r->n; i++) {
    const row *a = &r->rows[i];
    if (strcmp(a->gpu, "all") || !strcmp(a->policy, "lower-bound")) continue;
    policies++;
    long placed = 0;
    double busiest = 0, energy = 0, pbusiest = 0;
    for (int j = 0; j < r->n; j++) {
      const row *g = &r->rows[j];
      if (strcmp(g->policy, a->policy) || !strcmp(g->gpu, "all")) continue;
      placed += g->launches;
      busiest = fmax(busiest, g->t);
      pbusiest = fmax(pbusiest, g->pt);
      energy += g->e;
      CU_ASSERT(g->t >= 0 && isfinite(g->t) && g->e >= 0 && isfinite(g->e));
      CU_ASSERT((g->launches == 0) == (g->t == 0)); /* busy iff it got launches */
    }
    CU_ASSERT_EQUAL(a->launches, n);              /* the queue's size */
    CU_ASSERT_EQUAL(placed, n);                   /* every launch placed exactly once */
    CU_ASSERT_EQUAL(a->t, busiest);               /* makespan = largest busy time */
    CU_ASSERT_EQUAL(a->pt, pbusiest);             /* ... also under predictions */
    CU_ASSERT(close_rel(a->e, energy, 1e-12));    /* energy = sum over GPUs */
    CU_ASSERT(a->e > 0 && isfinite(a->e));
    CU_ASSERT(a->t >= lb->t * (1 - 1e-12));       /* no placement beats the makespan bound */
    CU_ASSERT(a->e >= lb->e * (1 - 1e-12));       /* ... nor the energy bound */
  }
  return policies;
}

/* ------------------------------------------------------ suite dataset -- */

static report r; /* the last csv run (large: kept off the stack) */

static void test_suite_analytic(void) {
  CU_ASSERT_EQUAL(sched_csv(&r, "-n 40 --seed 7 --gpu T4 --gpu A100 --gpu H100 " SUITE_DB), 0);
  CU_ASSERT_FATAL(r.parsed);                      /* well-formed csv */
  CU_ASSERT_EQUAL(check_accounting(&r, 40), 3);   /* round-robin, eft, lpt; no oracle */
  CU_ASSERT_PTR_NULL(find(&r, "oracle-eft", "all"));
  CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "oracle: no measurements for GPU T4, skipped"));
  CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "prediction vs prediction"));
  /* no measurements: the evaluation is the prediction */
  for (int i = 0; i < r.n; i++) CU_ASSERT_EQUAL(r.rows[i].t, r.rows[i].pt);
  /* round-robin deals 40 launches to 3 GPUs as 14, 13, 13 */
  const row *t4 = find(&r, "round-robin", "T4"), *h100 = find(&r, "round-robin", "H100");
  CU_ASSERT(t4 && t4->launches == 14 && h100 && h100->launches == 13);
}

static void test_single_gpu_policies_agree(void) {
  CU_ASSERT_EQUAL(sched_csv(&r, "-n 40 --seed 3 --gpu A100 " SUITE_DB), 0);
  CU_ASSERT_FATAL(r.parsed);
  CU_ASSERT_EQUAL(check_accounting(&r, 40), 3);
  const row *rr = find(&r, "round-robin", "all");
  CU_ASSERT_PTR_NOT_NULL_FATAL(rr);
  const char *pol[] = {"eft", "lpt", "lower-bound"};
  for (int k = 0; k < 3; k++) {
    const row *x = find(&r, pol[k], "all");
    CU_ASSERT_PTR_NOT_NULL_FATAL(x);
    CU_ASSERT(close_rel(x->t, rr->t, 1e-12));     /* one GPU: every policy, same makespan */
    CU_ASSERT(close_rel(x->e, rr->e, 1e-12));     /* ... and the same energy */
  }
}

static void test_queue_order_filters_repeats(void) {
  char *a = NULL, *b = NULL, *c = NULL;
  CU_ASSERT_EQUAL(sched(&a, NULL, "--format csv -n 10 --seed 11 --gpu T4 --gpu H100 " SUITE_DB), 0);
  CU_ASSERT_EQUAL(sched(&b, NULL, "--format csv -n 10 --seed 11 --gpu T4 --gpu H100 " SUITE_DB), 0);
  CU_ASSERT_EQUAL(sched(&c, NULL, "--format csv -n 10 --seed 12 --gpu T4 --gpu H100 " SUITE_DB), 0);
  CU_ASSERT(a && b && !strcmp(a, b));             /* same seed, same report */
  CU_ASSERT(a && c && strcmp(a, c));              /* another seed, another queue */
  free(a); free(b); free(c);

  /* --app: gemm_naive has 5 launches in the suite dataset */
  CU_ASSERT_EQUAL(sched_csv(&r, "--app gemm_naive,nosuchapp --gpu L4 " SUITE_DB), 0);
  CU_ASSERT_FATAL(r.parsed);
  CU_ASSERT_EQUAL(check_accounting(&r, 5), 3);
  CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "queue: 5 of 5 launches"));

  /* a GPU named twice is two machines; round-robin alternates */
  CU_ASSERT_EQUAL(sched_csv(&r, "-n 20 --gpu A100 --gpu A100 " SUITE_DB), 0);
  CU_ASSERT_FATAL(r.parsed);
  const row *g1 = find(&r, "round-robin", "A100"), *g2 = find(&r, "round-robin", "A100#2");
  CU_ASSERT(g1 && g2 && g1->launches == 10 && g2->launches == 10);

  /* the table format carries the same policies */
  char *o = NULL, *e = NULL;
  CU_ASSERT_EQUAL(sched(&o, &e, "-n 8 --gpu T4 --gpu A100 " SUITE_DB), 0);
  CU_ASSERT(o && strstr(o, "round-robin") && strstr(o, "lpt") && strstr(o, "lower bound"));
  CU_ASSERT(o && strstr(o, "oracle: no measurements for GPU A100, skipped"));
  free(o); free(e);
}

/* Exactly one line on stderr. */
static int one_line(const char *s) {
  if (!s) return 0;
  const char *nl = strchr(s, '\n');
  return nl && nl[1] == 0;
}

static void test_bad_input(void) {
  char *o = NULL, *e = NULL;
  CU_ASSERT_EQUAL(sched(&o, &e, "--gpu T4 --gpu NoSuchGPU " SUITE_DB), 1);
  CU_ASSERT(one_line(e));                               /* one error line */
  CU_ASSERT(e && strstr(e, "unknown GPU 'NoSuchGPU'")); /* naming the GPU */
  CU_ASSERT(o && o[0] == 0);                            /* and no report */
  free(o); free(e);

  char dir[2048], path[2300];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "sched"));
  snprintf(path, sizeof path, "%s/missing.db", dir);
  CU_ASSERT_EQUAL(sched(&o, &e, "'%s'", path), 1);
  CU_ASSERT(one_line(e));
  CU_ASSERT(e && strstr(e, "missing.db: cannot open"));   /* names the file */
  free(o); free(e);

  snprintf(path, sizeof path, "%s/text.db", dir);
  CU_ASSERT_EQUAL_FATAL(tests_write_file(path, "not a database\n", 15), 0);
  CU_ASSERT_EQUAL(sched(&o, &e, "'%s'", path), 1);
  CU_ASSERT(one_line(e));
  CU_ASSERT(e && strstr(e, "text.db: "));                  /* names the file */
  free(o); free(e);

  CU_ASSERT_EQUAL(sched(&o, &e, "--gpu T4 --model '%s' " SUITE_DB, path), 1);
  CU_ASSERT(one_line(e));
  CU_ASSERT(e && strstr(e, "text.db"));   /* a model file that is not one */
  free(o); free(e);

  CU_ASSERT_EQUAL(sched(&o, &e, "--app nosuchapp " SUITE_DB), 1);
  CU_ASSERT(one_line(e));
  CU_ASSERT(e && strstr(e, "no launch with features matches"));
  free(o); free(e);

  CU_ASSERT_EQUAL(sched(&o, &e, "-n lots " SUITE_DB), 2);  /* usage errors exit 2 */
  CU_ASSERT(one_line(e));
  free(o); free(e);
  CU_ASSERT_EQUAL(sched(&o, &e, "--bogus"), 2);
  CU_ASSERT(e && strstr(e, "'--bogus'"));
  free(o); free(e);
  CU_ASSERT_EQUAL(sched(&o, &e, "--help"), 0);
  CU_ASSERT(o && strstr(o, "usage: sched"));
  free(o); free(e);
}

/* ---------------------------------------------- measured ground truth -- */

/* Sum over launches of the median time (ns) on gpu, and of median time x
   median power (J), read with raw SQLite; -1 on failure. */
static int measured_sums(const char *db_path, const char *gpu, double *time_ns, double *energy) {
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(db, "SELECT launch_id, metric, value FROM measurements WHERE gpu = ?1"
                         " AND metric IN ('time_ns', 'power_w')"
                         " ORDER BY launch_id, metric, value", -1, &st, NULL) != SQLITE_OK) {
    sqlite3_close(db);
    return -1;
  }
  sqlite3_bind_text(st, 1, gpu, -1, SQLITE_STATIC);
  double vals[64], med[2] = {0, 0};
  int nv = 0;
  long long cur = -1;
  int cur_m = -1;
  *time_ns = *energy = 0;
  int rc, bad = 0;
  for (;;) {
    rc = sqlite3_step(st);
    long long id = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -2;
    int m = rc == SQLITE_ROW ? strcmp((const char *)sqlite3_column_text(st, 1), "time_ns") != 0 : -2;
    if (id != cur || m != cur_m) {
      if (nv) med[cur_m] = nv % 2 ? vals[nv / 2] : 0.5 * (vals[nv / 2 - 1] + vals[nv / 2]);
      if (id != cur && cur >= 0) {
        *time_ns += med[0];
        *energy += med[0] * 1e-9 * med[1];
        med[0] = med[1] = 0;
      }
      cur = id;
      cur_m = m;
      nv = 0;
    }
    if (rc != SQLITE_ROW) break;
    if (nv == 64) { bad = 1; break; }
    vals[nv++] = sqlite3_column_double(st, 2);
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return bad || rc != SQLITE_DONE ? -1 : 0;
}

static int have_tutorial(void) {
  struct stat sb;
  if (stat(MG_DATA "/cuda_flux_metrics.db", &sb) == 0) return 1;
  printf("\n  [skip: %s not found (GPU Mangrove tutorial data)] ", MG_DATA);
  return 0;
}

static void test_mangrove_oracle(void) {
  if (!have_tutorial()) return;
  char dir[1024], cmd[4096];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "sched-mg"));
  snprintf(cmd, sizeof cmd, "examples/scheduler/run-mangrove.sh '%s' '%s'", tests_build(), dir);
  char *o = NULL, *e = NULL;
  CU_ASSERT_EQUAL(tests_run(cmd, &o, &e), 0);             /* the documented script runs */
  CU_ASSERT(o && strstr(o, "== in-sample"));
  CU_ASSERT(o && strstr(o, "oracle-lpt"));   /* ... with an oracle */
  if (tests_run("command -v sqlite3", NULL, NULL) == 0)
    CU_ASSERT(o && strstr(o, "== cross-fitted"));
  free(o); free(e);

  char db[1100], models[8192];
  snprintf(db, sizeof db, "%s/mangrove.db", dir);
  snprintf(models, sizeof models,
           "--model T4='%s/all-T4-time.kcm' --model T4='%s/all-T4-power.kcm'"
           " --model K80='%s/all-K80-time.kcm' --model K80='%s/all-K80-power.kcm'",
           dir, dir, dir, dir);
  CU_ASSERT_EQUAL(sched_csv(&r, "'%s' %s", db, models), 0);
  CU_ASSERT_FATAL(r.parsed);
  CU_ASSERT_EQUAL(check_accounting(&r, 43), 5);            /* rr, eft, lpt + two oracle rows */
  CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "measured times and powers"));
  CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "time 43/43, power 43/43"));

  /* One GPU: the evaluated makespan is the sum of the measured medians and
     the energy the sum of median time x median power, whatever was
     predicted (computed here from the dataset independently). */
  double t_sum = 0, e_sum = 0;
  CU_ASSERT_EQUAL_FATAL(measured_sums(db, "T4", &t_sum, &e_sum), 0);
  CU_ASSERT(t_sum > 0 && e_sum > 0);
  CU_ASSERT_EQUAL(sched_csv(&r, "'%s' --model T4='%s/all-T4-time.kcm'", db, dir), 0);
  CU_ASSERT_FATAL(r.parsed);
  const char *pol[] = {"round-robin", "eft", "lpt", "oracle-eft", "oracle-lpt"};
  for (int k = 0; k < 5; k++) {
    const row *x = find(&r, pol[k], "all");
    CU_ASSERT_PTR_NOT_NULL_FATAL(x);
    CU_ASSERT(close_rel(x->t, t_sum, 1e-9));                /* measured time, not predicted */
    CU_ASSERT(close_rel(x->e, e_sum, 1e-9));                /* measured power too */
    CU_ASSERT(!close_rel(x->pt, t_sum, 1e-9));              /* (the prediction differs) */
  }

  /* The cross-fitted split: --dataset keeps the launches of those sizes. */
  CU_ASSERT_EQUAL(sched_csv(&r, "'%s' --dataset s2,s4 %s", db, models), 0);
  CU_ASSERT_FATAL(r.parsed);
  CU_ASSERT_EQUAL(check_accounting(&r, 19), 5);            /* 19 launches of sizes s2, s4 */
}

/* Launches of sizes nobody ran, their features from a feature model. */
static void test_unseen_sizes(void) {
  char dir[2048], kcf[2300], cmd[8192];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "sched-unseen"));
  snprintf(kcf, sizeof kcf, "%s/triad.kcf", dir);
  snprintf(cmd, sizeof cmd, "'%s' featmodel fit " SUITE_DB " --kernel triad -o '%s'",
           tests_kcast(), kcf);
  CU_ASSERT_EQUAL_FATAL(tests_run(cmd, NULL, NULL), 0);
  /* triad's suite sizes are 1,024 to 8,388,608 elements; 2^24 is beyond */
  CU_ASSERT_EQUAL(sched_csv(&r, "-n 0 --gpu T4 --gpu H100 --unseen '%s:65536:256:p,p,p,3,16777216' "
                            "--unseen '%s:1024:256:p,p,p,3,262144' --unseen "
                            "'%s:8192:256:p,p,p,3,2097152' " SUITE_DB, kcf, kcf, kcf), 0);
  CU_ASSERT_FATAL(r.parsed);
  CU_ASSERT(check_accounting(&r, 3) == 3);        /* the three unseen launches placed */
  CU_ASSERT(strstr(r.err, "features from") && strstr(r.err, "no emulation"));
  CU_ASSERT(strstr(r.err, "grid 65536,1,1 block 256,1,1") &&
            strstr(r.err, "extrapolated"));     /* the size beyond the fitted ones says so */
  const row *e = find(&r, "eft", "all"), *rr = find(&r, "round-robin", "all");
  CU_ASSERT(e && rr && e->t <= rr->t);          /* prediction-placed: no worse than round-robin */
  /* beside the dataset's launches */
  CU_ASSERT_EQUAL(sched_csv(&r, "-n 5 --gpu A100 --unseen '%s:4096:256:p,p,p,3,1048576' " SUITE_DB,
                            kcf), 0);
  CU_ASSERT(r.parsed && check_accounting(&r, 6) == 3);
  /* bad specs: usage errors; a missing model: one error line naming it */
  char *o = NULL, *err = NULL;
  CU_ASSERT_EQUAL(sched(&o, &err, "--unseen '%s:0:256:1' " SUITE_DB, kcf), 2);
  free(o); free(err);
  CU_ASSERT_EQUAL(sched(&o, &err, "--unseen '%s:64:256:1,x' " SUITE_DB, kcf), 2);
  free(o); free(err);
  CU_ASSERT_EQUAL(sched(&o, &err, "--gpu T4 --unseen '%s/none.kcf:64:256:p,p,p,3,1' " SUITE_DB, dir), 1);
  CU_ASSERT(one_line(err) && strstr(err, "none.kcf"));
  free(o); free(err);
  /* a kernel template's model: each launch names its instance's tile */
  snprintf(kcf, sizeof kcf, "%s/gemm_tiled.kcf", dir);
  snprintf(cmd, sizeof cmd, "'%s' featmodel fit " SUITE_DB " --kernel 'gemm_tiled_kernel<T>' "
           "-o '%s'", tests_kcast(), kcf);
  CU_ASSERT_EQUAL_FATAL(tests_run(cmd, NULL, NULL), 0);
  CU_ASSERT_EQUAL(sched_csv(&r, "-n 0 --gpu H100 --unseen '%s:6,6:8,8:48,1.5,0.5,p,p,p:<8>' "
                            "--unseen '%s:6,6:16,16:96,1.5,0.5,p,p,p:<16>' " SUITE_DB, kcf, kcf),
                  0);
  CU_ASSERT(r.parsed && check_accounting(&r, 2) == 3); /* both instances placed */
  CU_ASSERT(strstr(r.err, "gemm_tiled_kernel<T0>") && !strstr(r.err, "extrapolated"));
  CU_ASSERT_EQUAL(sched(&o, &err, "--gpu H100 --unseen '%s:6,6:16,16:96,1.5,0.5,p,p,p' " SUITE_DB,
                        kcf), 1);                      /* which instance? one line says */
  CU_ASSERT(one_line(err) && strstr(err, "template"));
  free(o); free(err);
  CU_ASSERT_EQUAL(sched(&o, &err, "--unseen '%s:6:16:96:<x>' " SUITE_DB, kcf), 2);
  free(o); free(err);
}

TEST_SUITES(register_sched) {
  CU_pSuite s = tests_suite("sched");
  TEST_ADD(s, test_suite_analytic);
  TEST_ADD(s, test_single_gpu_policies_agree);
  TEST_ADD(s, test_queue_order_filters_repeats);
  TEST_ADD(s, test_bad_input);
  TEST_ADD(s, test_unseen_sizes);
  TEST_ADD(s, test_mangrove_oracle);
}
