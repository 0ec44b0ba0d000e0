/*
 * test_analytic.c -- the GPU table (model/gpus.c), the analytic estimate
 * (model/analytic.c), `kcast gpus` and `kcast predict FILE` end to end.
 *
 * The estimate is not compared with measurements (there are none to compare
 * with here); what is checked is that the table holds every GPU the docs
 * list with sane figures, and that the estimate moves the right way: more
 * memory traffic is slower, more SMs are not slower, one CTA is not slower
 * than many, power stays between idle and TDP.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "include/kcast.h"
#include "model/model.h"
#include "tests.h"

#define CHECK_MSG(msg, cond) \
  CU_assertImplementation(!!(cond), __LINE__, (msg), __FILE__, "", CU_FALSE)

/* ---------------------------------------------------------------- table -- */

static void test_table(void) {
  static const char *const want[] = {"K80", "T4", "V100", "A100", "A4000", "A6000",
                                     "L4", "RTX4090", "H100", "H200"};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
    CHECK_MSG("every GPU of the brief is in the table", an_gpu_find(want[i]) != NULL);
  CHECK_MSG("names are found case-insensitively", an_gpu_find("h200") == an_gpu_find("H200"));
  CHECK_MSG("an unknown name is NULL", an_gpu_find("NOPE") == NULL && an_gpu_find(NULL) == NULL);
  CHECK_MSG("an index past the end is NULL", an_gpu_at(an_gpu_count()) == NULL);
  int all_positive = 1, idle_below_tdp = 1, unique = 1;
  for (size_t i = 0; i < an_gpu_count(); i++) {
    const an_gpu *g = an_gpu_at(i);
    if (!(g->sms > 0 && g->boost_mhz > 0 && g->fp32_gflops > 0 && g->fp64_gflops > 0 &&
          g->mem_bw_gbs > 0 && g->mem_gb > 0 && g->l2_mb > 0 && g->smem_per_sm_kb > 0 &&
          g->max_threads_per_sm > 0 && g->max_ctas_per_sm > 0 && g->tdp_w > 0 && g->idle_w > 0 &&
          g->cc_major >= 3))
      all_positive = 0;
    if (!(g->idle_w < g->tdp_w)) idle_below_tdp = 0;
    if (an_gpu_find(g->name) != g) unique = 0;
  }
  CHECK_MSG("every figure of every GPU is positive", all_positive);
  CHECK_MSG("idle power is below TDP on every GPU", idle_below_tdp);
  CHECK_MSG("names are unique", unique);
  const an_gpu *h100 = an_gpu_find("H100"), *h200 = an_gpu_find("H200"),
               *t4 = an_gpu_find("T4"), *a100 = an_gpu_find("A100");
  CHECK_MSG("H200 has more bandwidth than H100", h200->mem_bw_gbs > h100->mem_bw_gbs);
  CHECK_MSG("H200 has more memory than H100", h200->mem_gb > h100->mem_gb);
  CHECK_MSG("the FP32 peak matches SMs x clock x lanes: 128 FP32 lanes per SM on H100",
            fabs(h100->fp32_gflops / (2 * h100->sms * h100->boost_mhz / 1e3) - 128) < 2);
  CHECK_MSG("T4's FP64 is 1/32 of its FP32", fabs(t4->fp32_gflops / t4->fp64_gflops - 32) < 1);
  CHECK_MSG("A100's FP64 is half its FP32", fabs(a100->fp32_gflops / a100->fp64_gflops - 2) < 0.1);
}

/* ------------------------------------------------------------- estimate -- */

/* A launch: ctas x 256 threads, saxpy-like counts per thread scaled by k. */
typedef struct launch {
  const char *names[16];
  double vals[16];
  size_t n;
} launch;

static void set(launch *l, const char *name, double v) {
  for (size_t i = 0; i < l->n; i++)
    if (!strcmp(l->names[i], name)) { l->vals[i] = v; return; }
  l->names[l->n] = name;
  l->vals[l->n++] = v;
}

static double get(const launch *l, const char *name) {
  for (size_t i = 0; i < l->n; i++)
    if (!strcmp(l->names[i], name)) return l->vals[i];
  return 0;
}

static launch streaming(double ctas) {
  launch l;
  memset(&l, 0, sizeof l);
  double threads = ctas * 256, warps = threads / 32;
  set(&l, "launch.ctas", ctas);
  set(&l, "launch.block_x", 256);
  set(&l, "launch.block_y", 1);
  set(&l, "launch.block_z", 1);
  set(&l, "class.fp32", threads);
  set(&l, "class.int_arith", 6 * threads);
  set(&l, "ctrl.warp_insns", 14 * warps);
  set(&l, "mem.global_accesses", 3 * warps);
  set(&l, "mem.global_sectors", 3 * warps * 4);
  set(&l, "mem.global_bytes", 12 * threads);
  return l;
}

static an_estimate est(const an_gpu *g, const launch *l) {
  an_estimate e;
  memset(&e, 0, sizeof e);
  int rc = an_estimate_launch(g, l->names, l->vals, l->n, &e);
  CHECK_MSG("the estimate succeeds on a well-formed launch", rc == 0);
  return e;
}

static void test_estimate_shape(void) {
  const an_gpu *g = an_gpu_find("H200");
  launch l = streaming(1 << 14);
  an_estimate e = est(g, &l);
  CHECK_MSG("a large streaming launch is DRAM bound", !strcmp(e.bound, "dram"));
  CHECK_MSG("time is at least the launch overhead", e.time_us >= e.t_overhead_us);
  double big = fmax(fmax(fmax(e.t_compute_us, e.t_issue_us), e.t_lsu_us),
                    fmax(e.t_l2_us, e.t_dram_us));
  CHECK_MSG("time = overhead + the L2 norm of the SM, L2 and DRAM times: at least the largest "
            "term, at most sqrt(3) x it",
            e.time_us - e.t_overhead_us >= big - 1e-9 &&
                e.time_us - e.t_overhead_us <= sqrt(3.0) * fmax(big, e.t_latency_us) + 1e-9);
  CHECK_MSG("the memory term is the larger of the L2 and DRAM terms",
            e.t_memory_us == fmax(e.t_l2_us, e.t_dram_us));
  CHECK_MSG("the time band is x0.5 .. x2", fabs(e.time_lo_us * 2 - e.time_us) < 1e-9 &&
                                               fabs(e.time_hi_us / 2 - e.time_us) < 1e-9);
  CHECK_MSG("power lies in [idle, TDP] with lo <= point <= hi",
            e.power_lo_w >= g->idle_w && e.power_lo_w <= e.power_w && e.power_w <= e.power_hi_w &&
                e.power_hi_w <= g->tdp_w);
  CHECK_MSG("energy is time x power", fabs(e.energy_mj - e.time_us * e.power_w / 1e3) < 1e-9);
  /* 16384 CTAs x 12 KB = 201 MB at 0.85 x 4.8 TB/s is about 49 us. */
  CHECK_MSG("the memory term is the traffic over 85% of the peak bandwidth",
            fabs(e.t_memory_us - (1 << 14) * 256 * 12.0 / (4800e9 * 0.85) * 1e6) < 0.01);
  CHECK_MSG("256-thread CTAs: 8 resident per SM on H200 (2048 threads)", e.resident_ctas == 8);
  CHECK_MSG("waves = ceil(16384 / (132 x 8)) = 16", e.waves == 16);
}

static void test_estimate_monotone(void) {
  const an_gpu *g = an_gpu_find("H100");
  launch l = streaming(1 << 14);
  an_estimate e1 = est(g, &l);
  set(&l, "mem.global_sectors", 2 * get(&l, "mem.global_sectors"));
  an_estimate e2 = est(g, &l);
  CHECK_MSG("doubling mem.global_sectors of a memory-bound launch increases time",
            e2.time_us > e1.time_us);
  CHECK_MSG("... and roughly doubles its memory term", fabs(e2.t_memory_us / e1.t_memory_us - 2) < 1e-6);

  an_gpu more = *g;
  more.sms = 2 * g->sms;
  launch c = streaming(1 << 14);
  set(&c, "class.fp32", 2000 * (1 << 14) * 256.0); /* compute heavy */
  set(&c, "ctrl.warp_insns", 2100 * (1 << 14) * 8.0);
  an_estimate base = est(g, &c), wide = est(&more, &c);
  CHECK_MSG("a compute-heavy launch is compute or issue bound",
            !strcmp(base.bound, "compute") || !strcmp(base.bound, "issue"));
  CHECK_MSG("more SMs are not slower", wide.time_us <= base.time_us);
  CHECK_MSG("twice the SMs are faster on a compute-bound launch", wide.time_us < base.time_us);
  an_estimate ws = est(&more, &l), ns = est(g, &l);
  CHECK_MSG("more SMs are not slower on a memory-bound launch", ws.time_us <= ns.time_us);

  an_gpu slow = *g;
  slow.mem_bw_gbs = g->mem_bw_gbs / 2;
  CHECK_MSG("half the bandwidth is slower on a memory-bound launch",
            est(&slow, &l).time_us > est(g, &l).time_us);
}

/* Matrix instructions' tensor.flops run at the tensor cores' rate: 15x
   the FP32 rate on H100 (cc 9.0), the FP32 rate itself on K80 (none). */
static void test_estimate_tensor(void) {
  const an_gpu *h = an_gpu_find("H100"), *k = an_gpu_find("K80");
  launch l = streaming(h->sms);
  an_estimate e0 = est(h, &l);
  set(&l, "tensor.flops", 1e12);
  an_estimate e1 = est(h, &l);
  double want = 1e12 / (h->fp32_gflops * 1e9 * 15) * 1e6;
  CHECK_MSG("1e12 tensor flops on H100's SMs take flops / (15 x FP32 peak)",
            fabs(e1.t_compute_us - want) < 1e-6 * want && e1.time_us > e0.time_us);
  CHECK_MSG("... and make the launch compute bound", !strcmp(e1.bound, "compute"));
  launch m = streaming(k->sms);
  set(&m, "tensor.flops", 1e12);
  an_estimate e2 = est(k, &m);
  double want2 = 1e12 / (k->fp32_gflops * 1e9) * 1e6;
  CHECK_MSG("without tensor cores (K80) the flops take the FP32 pipe",
            fabs(e2.t_compute_us - want2) < 1e-6 * want2);
}

static void test_estimate_waves(void) {
  const an_gpu *g = an_gpu_find("A100");
  launch one = streaming(1), many = streaming(108 * 8 * 3);
  an_estimate e1 = est(g, &one), em = est(g, &many);
  CHECK_MSG("one CTA is one wave", e1.waves == 1);
  CHECK_MSG("3 x SMs x resident CTAs are three waves", em.waves == 3);
  CHECK_MSG("one CTA is faster than 2592 CTAs of the same work each", e1.time_us < em.time_us);
  CHECK_MSG("one CTA uses less power than a full device", e1.power_w < em.power_w);
  launch two = streaming(2);
  CHECK_MSG("two CTAs on two SMs take no longer than one CTA's work twice",
            est(g, &two).time_us <= 2 * e1.time_us);

  launch big = streaming(1000);
  set(&big, "launch.shared_bytes", 100 * 1024); /* one CTA per SM by shared memory */
  an_estimate eb = est(g, &big);
  CHECK_MSG("100 KB of shared memory per CTA leaves 1 resident CTA per SM on A100",
            eb.resident_ctas == 1);
  CHECK_MSG("so 1000 CTAs take ceil(1000/108) = 10 waves", eb.waves == 10);
}

static void test_estimate_errors(void) {
  const an_gpu *g = an_gpu_find("T4");
  an_estimate e;
  const char *names[] = {"class.fp32"};
  double vals[] = {100};
  CHECK_MSG("a launch without launch.ctas is refused",
            an_estimate_launch(g, names, vals, 1, &e) == -1 &&
                strstr(rf_last_error(), "launch.ctas") != NULL);
  launch l = streaming(4);
  set(&l, "class.fp32", NAN);
  CHECK_MSG("a NaN feature is refused, naming it",
            an_estimate_launch(g, l.names, l.vals, l.n, &e) == -1 &&
                strstr(rf_last_error(), "class.fp32") != NULL);
  set(&l, "class.fp32", 1);
  set(&l, "launch.block_x", 2048);
  CHECK_MSG("more than 1024 threads per CTA is refused",
            an_estimate_launch(g, l.names, l.vals, l.n, &e) == -1);
  an_gpu bad = *g;
  bad.sms = 0;
  set(&l, "launch.block_x", 256);
  CHECK_MSG("a GPU with 0 SMs is refused", an_estimate_launch(&bad, l.names, l.vals, l.n, &e) == -1);
}

/* ------------------------------------------------------------------ CLI -- */

static int run(const char *args, char **out, char **err) {
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "'%s' %s", tests_kcast(), args);
  return tests_run(cmd, out, err);
}

#define SAXPY "predict tests/kernels/saxpy.cu --kernel saxpy_c --grid 4096 --block 256 " \
              "--arg 1048576 --arg 2.0 --arg buf:4M:randf --arg buf:4M:randf"

static void test_cli_gpus(void) {
  char *out = NULL, *err = NULL;
  CHECK_MSG("kcast gpus exits 0", run("gpus", &out, &err) == 0);
  int every = out != NULL;
  for (size_t i = 0; every && i < an_gpu_count(); i++)
    if (!strstr(out, an_gpu_at(i)->name)) every = 0;
  CHECK_MSG("kcast gpus lists every GPU of the table", every);
  free(out), free(err), out = err = NULL;
  CHECK_MSG("kcast gpus --format json exits 0", run("gpus --format json", &out, &err) == 0);
  cJSON *j = out ? cJSON_Parse(out) : NULL;
  CHECK_MSG("its output is a JSON array with one object per GPU",
            cJSON_IsArray(j) && (size_t)cJSON_GetArraySize(j) == an_gpu_count());
  cJSON *h = NULL, *it;
  cJSON_ArrayForEach(it, j) {
    cJSON *nm = cJSON_GetObjectItem(it, "name");
    if (cJSON_IsString(nm) && !strcmp(nm->valuestring, "H200")) h = it;
  }
  CHECK_MSG("the H200 object carries its bandwidth (4800 GB/s)",
            h && cJSON_GetNumberValue(cJSON_GetObjectItem(h, "mem_bw_gbs")) == 4800);
  cJSON_Delete(j);
  free(out), free(err), out = err = NULL;
  CHECK_MSG("kcast gpus --format csv has a header and one line per GPU",
            run("gpus --format csv", &out, &err) == 0 && out && !strncmp(out, "name,", 5));
  size_t lines = 0;
  for (const char *p = out ? out : ""; *p; p++) lines += *p == '\n';
  CHECK_MSG("... 1 + GPUs lines", lines == 1 + an_gpu_count());
  free(out), free(err), out = err = NULL;
  CHECK_MSG("kcast gpus --format xml is a usage error (2)", run("gpus --format xml", &out, &err) == 2);
  free(out), free(err);
}

static void test_cli_predict_all(void) {
  char *out = NULL, *err = NULL;
  int rc = run(SAXPY " --gpu all", &out, &err);
  CHECK_MSG("predict saxpy --gpu all exits 0", rc == 0);
  if (rc) fprintf(stderr, "\n%s", err ? err : "");
  int rows = 1;
  for (size_t i = 0; out && i < an_gpu_count(); i++) {
    char pfx[64];
    snprintf(pfx, sizeof pfx, "\n%s ", an_gpu_at(i)->name);
    if (!strstr(out, pfx)) rows = 0;
  }
  CHECK_MSG("the table has a row for every GPU", out && rows);
  CHECK_MSG("the rows say the analytic estimate answered", out && strstr(out, "analytic / analytic"));
  free(out), free(err), out = err = NULL;

  rc = run(SAXPY " --gpu all --format json", &out, &err);
  CHECK_MSG("predict --format json exits 0", rc == 0);
  cJSON *j = out ? cJSON_Parse(out) : NULL;
  cJSON *preds = cJSON_GetObjectItem(j, "predictions");
  CHECK_MSG("the JSON parses and holds one prediction per GPU",
            cJSON_IsArray(preds) && (size_t)cJSON_GetArraySize(preds) == an_gpu_count());
  double t_h200 = 0, t_t4 = 0;
  int sane = cJSON_IsArray(preds);
  cJSON *it;
  cJSON_ArrayForEach(it, preds) {
    double t = cJSON_GetNumberValue(cJSON_GetObjectItem(it, "time_us"));
    double lo = cJSON_GetNumberValue(cJSON_GetObjectItem(it, "time_lo_us"));
    double hi = cJSON_GetNumberValue(cJSON_GetObjectItem(it, "time_hi_us"));
    double p = cJSON_GetNumberValue(cJSON_GetObjectItem(it, "power_w"));
    if (!(lo < t && t < hi && p > 0)) sane = 0;
    const char *g = cJSON_GetStringValue(cJSON_GetObjectItem(it, "gpu"));
    if (g && !strcmp(g, "H200")) t_h200 = t;
    if (g && !strcmp(g, "T4")) t_t4 = t;
  }
  CHECK_MSG("every row has lo < time < hi and a positive power", sane);
  CHECK_MSG("saxpy of 1M floats is faster on H200 than on T4", t_h200 > 0 && t_h200 < t_t4);
  cJSON_Delete(j);
  free(out), free(err);
}

static void test_cli_predict_errors(void) {
  char *out = NULL, *err = NULL;
  CHECK_MSG("--gpu NOPE exits 1", run(SAXPY " --gpu NOPE", &out, &err) == 1);
  CHECK_MSG("... naming the GPU and the known ones",
            err && strstr(err, "NOPE") && strstr(err, "H200") && strstr(err, "T4"));
  free(out), free(err), out = err = NULL;
  CHECK_MSG("neither --gpu nor --model is a usage error (2)", run(SAXPY, &out, &err) == 2);
  free(out), free(err), out = err = NULL;
  CHECK_MSG("a wrong --arg count is a usage error (2)",
            run("predict tests/kernels/saxpy.cu --kernel saxpy_c --grid 4 --block 32 --arg 1 --gpu T4",
                &out, &err) == 2);
  free(out), free(err), out = err = NULL;
  CHECK_MSG("--gpu without a FILE is a usage error (2)", run("predict --gpu T4", &out, &err) == 2);
  free(out), free(err);
}

static void test_cli_predict_model(void) {
  char dir[1024], csv[1200], model[1200], args[4096], *out = NULL, *err = NULL;
  CU_ASSERT_FATAL(tests_tmpdir(dir, sizeof dir, "analytic") != NULL);
  snprintf(csv, sizeof csv, "%s/t.csv", dir);
  snprintf(model, sizeof model, "%s/t.kcm", dir);
  FILE *f = fopen(csv, "w");
  CU_ASSERT_FATAL(f != NULL);
  fprintf(f, "launch.ctas,class.fp32,time\n");
  for (int i = 1; i <= 60; i++) fprintf(f, "%d,%d,%d\n", i * 100, i * 25600, 1000 + 50 * i);
  fclose(f);
  snprintf(args, sizeof args, "train --csv %s --target time --trees 10 -o %s", csv, model);
  CU_ASSERT_FATAL(run(args, &out, &err) == 0);
  free(out), free(err), out = err = NULL;
  snprintf(args, sizeof args, SAXPY " --model %s --gpu H200 --format csv", model);
  int rc = run(args, &out, &err);
  CHECK_MSG("predict --model MODEL --gpu H200 exits 0", rc == 0);
  if (rc) fprintf(stderr, "\n%s", err ? err : "");
  CHECK_MSG("time comes from the forest, power from the analytic estimate",
            out && strstr(out, ",forest:") && strstr(out, "t.kcm,analytic,"));
  double t = 0;
  const char *row = out ? strstr(out, ",H200,") : NULL; /* after kernel, grid and block */
  if (row) t = strtod(row + 6, NULL);
  CHECK_MSG("the CSV row names the kernel, its grid and its block first",
            out && strstr(out, "\nsaxpy_c,saxpy_c,4096,1,1,256,1,1,H200,"));
  CHECK_MSG("the forest's time (ns targets) is printed in us: within 1..4.1 us", t >= 1 && t <= 4.1);
  free(out), free(err), out = err = NULL;
  snprintf(args, sizeof args, SAXPY " --model %s --gpu all", model);
  CHECK_MSG("--model with --gpu all is a usage error (2)", run(args, &out, &err) == 2);
  free(out), free(err);
}

/* ------------------------------------------------- the pinned answers -- */

/*
 * The estimate's answers for 16 fixed launches (tests/analytic/
 * launches.csv: ten suite launches as `kcast run` recorded them, six
 * operator launches as kcast_features_from_op builds them) on nine GPUs,
 * against tests/analytic/estimates.csv, written by the estimate of
 * version AN_VERSION.  A model trained on one version corrects that
 * version's answers (rf_base_stale): a change that moves them must raise
 * AN_VERSION.  When this test fails: raise AN_VERSION in model/model.h if
 * the change is meant, then rewrite the figures with
 * KCAST_PIN_WRITE=1 build/kcast-tests analytic.
 */
#define PIN_LAUNCHES "tests/analytic/launches.csv"
#define PIN_ESTIMATES "tests/analytic/estimates.csv"
#define PIN_MAX 24
#define PIN_FEATS 256
static const char *const pin_gpus[] = {"K80", "P4", "T4", "V100", "A100-PCIE", "A4000",
                                       "L4", "H100", "H200"};
#define PIN_NGPUS (sizeof pin_gpus / sizeof pin_gpus[0])

typedef struct pin_launch {
  char name[32];
  char *names[PIN_FEATS];
  double vals[PIN_FEATS];
  size_t n;
} pin_launch;

static size_t pin_read(pin_launch *L) {
  FILE *f = fopen(PIN_LAUNCHES, "r");
  CU_ASSERT_FATAL(f != NULL);
  char line[512];
  size_t nl = 0;
  while (fgets(line, sizeof line, f)) {
    char *c1 = strchr(line, ','), *c2 = c1 ? strchr(c1 + 1, ',') : NULL;
    if (!c2) continue;
    *c1 = *c2 = 0;
    if (!nl || strcmp(L[nl - 1].name, line)) {
      CU_ASSERT_FATAL(nl < PIN_MAX);
      memset(&L[nl], 0, sizeof L[nl]);
      snprintf(L[nl].name, sizeof L[nl].name, "%.31s", line);
      nl++;
    }
    pin_launch *p = &L[nl - 1];
    CU_ASSERT_FATAL(p->n < PIN_FEATS);
    p->names[p->n] = strdup(c1 + 1);
    p->vals[p->n++] = strtod(c2 + 1, NULL);
  }
  fclose(f);
  return nl;
}

static void test_estimate_pinned(void) {
  static pin_launch L[PIN_MAX];
  size_t nl = pin_read(L);
  CHECK_MSG("the pinned launches are read (16)", nl == 16);
  int writing = getenv("KCAST_PIN_WRITE") != NULL;
  FILE *f = fopen(PIN_ESTIMATES, writing ? "w" : "r");
  CU_ASSERT_FATAL(f != NULL);
  unsigned ver = 0;
  if (writing) fprintf(f, "# written by the analytic estimate of AN_VERSION %u\n", AN_VERSION);
  else CU_ASSERT_FATAL(fscanf(f, "# written by the analytic estimate of AN_VERSION %u\n", &ver) == 1);
  size_t checked = 0, moved = 0;
  char first[160] = "";
  for (size_t i = 0; i < nl; i++)
    for (size_t k = 0; k < PIN_NGPUS; k++) {
      an_estimate e;
      const an_gpu *g = an_gpu_find(pin_gpus[k]);
      CU_ASSERT_FATAL(g != NULL);
      int rc = an_estimate_launch(g, (const char *const *)L[i].names, L[i].vals, L[i].n, &e);
      if (rc) printf("\n  %s on %s: %s ", L[i].name, pin_gpus[k], rf_last_error());
      CU_ASSERT_FATAL(rc == 0);
      if (writing) {
        fprintf(f, "%s,%s,%.17g,%.17g\n", L[i].name, pin_gpus[k], e.time_us, e.power_w);
        continue;
      }
      char ln[64], gn[32];
      double t = 0, w = 0;
      CU_ASSERT_FATAL(fscanf(f, "%63[^,],%31[^,],%lf,%lf\n", ln, gn, &t, &w) == 4);
      CU_ASSERT_FATAL(!strcmp(ln, L[i].name) && !strcmp(gn, pin_gpus[k]));
      checked++;
      if (fabs(e.time_us - t) > 1e-9 * t || fabs(e.power_w - w) > 1e-9 * w) {
        if (!moved++)
          snprintf(first, sizeof first, "%.31s on %.15s: %.6g us %.6g W, pinned %.6g us %.6g W",
                   L[i].name, pin_gpus[k], e.time_us, e.power_w, t, w);
      }
    }
  fclose(f);
  for (size_t i = 0; i < nl; i++)
    for (size_t j = 0; j < L[i].n; j++) free(L[i].names[j]);
  if (writing) {
    printf("\n  wrote %s for AN_VERSION %u ", PIN_ESTIMATES, AN_VERSION);
    return;
  }
  if (moved)
    printf("\n  the estimate moved on %zu of %zu (first: %s): raise AN_VERSION (model/model.h) "
           "and rewrite the figures (KCAST_PIN_WRITE=1 build/kcast-tests analytic) ", moved,
           checked, first);
  CHECK_MSG("the estimate gives the pinned answers of its version (else: raise AN_VERSION and "
            "rewrite tests/analytic/estimates.csv)", ver == AN_VERSION && moved == 0);
  CHECK_MSG("every launch on every GPU was compared", checked == nl * PIN_NGPUS);
}

/*
 * A time model records the version of the estimate its base came from
 * (file version 9); one from another version (a model trained by another
 * kcast) still answers, with a warning from the CLI, a line in `kcast
 * model info` and KCAST_CHECK_OTHER_ESTIMATE from kcast_predict_check.
 */
static void test_model_estimate_version(void) {
  char dir[1024], csv[1200], model[1200], old[1200], args[4096], *out = NULL, *err = NULL;
  CU_ASSERT_FATAL(tests_tmpdir(dir, sizeof dir, "anversion") != NULL);
  snprintf(csv, sizeof csv, "%s/t.csv", dir);
  snprintf(model, sizeof model, "%s/t.kcm", dir);
  snprintf(old, sizeof old, "%s/old.kcm", dir);
  FILE *f = fopen(csv, "w");
  CU_ASSERT_FATAL(f != NULL);
  fprintf(f, "launch.ctas,launch.block_x,class.fp32,gpu,time\n");
  for (int i = 1; i <= 60; i++)
    fprintf(f, "%d,256,%d,%s,%d\n", i * 100, i * 25600, i % 2 ? "H100" : "A100-PCIE", 1000 + 50 * i);
  fclose(f);
  snprintf(args, sizeof args, "train --csv %s --target time --trees 10 -o %s", csv, model);
  int rc = run(args, &out, &err);
  CHECK_MSG("a time model of two GPUs is trained", rc == 0);
  if (rc) fprintf(stderr, "\n%s", err ? err : "");
  free(out), free(err), out = err = NULL;
  size_t len = 0;
  unsigned char *img = (unsigned char *)tests_read_file(model, &len);
  CU_ASSERT_FATAL(img != NULL && len > 32);
  uint32_t ver = 0, av = 0;
  memcpy(&ver, img + 8, 4);
  memcpy(&av, img + len - 8, 4);
  CHECK_MSG("its file is version 9, the estimate's version last", ver == 9 && av == AN_VERSION);
  snprintf(args, sizeof args, "model info %s", model);
  CU_ASSERT(run(args, &out, &err) == 0);
  char want[160];
  snprintf(want, sizeof want, "version %u of the analytic estimate (this kcast: %u)", AN_VERSION,
           AN_VERSION);
  CHECK_MSG("model info says which estimate the base came from", out && strstr(out, want));
  CHECK_MSG("... and warns of nothing", err && !strstr(err, "warning"));
  free(out), free(err), out = err = NULL;

  /* the same model as if trained by a kcast of the next version */
  uint32_t next = AN_VERSION + 1;
  memcpy(img + len - 8, &next, 4);
  uint32_t crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), img, (uInt)(len - 4));
  memcpy(img + len - 4, &crc, 4);
  CU_ASSERT_FATAL(tests_write_file(old, img, len) == 0);
  snprintf(args, sizeof args, SAXPY " --model %s --gpu H100 --format csv", old);
  rc = run(args, &out, &err);
  CHECK_MSG("a model of another estimate still answers (exit 0)", rc == 0);
  snprintf(want, sizeof want, "version %u of the analytic estimate, this kcast computes version %u",
           next, AN_VERSION);
  CHECK_MSG("... with a warning naming both versions", err && strstr(err, "warning") &&
                                                           strstr(err, want) && strstr(err, old));
  free(out), free(err), out = err = NULL;
  snprintf(args, sizeof args, SAXPY " --model %s --gpu H100 --format json", old);
  CU_ASSERT(run(args, &out, &err) == 0);
  CHECK_MSG("... and its JSON says \"other_estimate\": true",
            out && strstr(out, "\"other_estimate\":\ttrue"));
  free(out), free(err), out = err = NULL;
  snprintf(args, sizeof args, SAXPY " --model %s --gpu H100 --format json", model);
  CU_ASSERT(run(args, &out, &err) == 0);
  CHECK_MSG("(the model of this estimate's JSON does not)", out && !strstr(out, "other_estimate"));
  free(out), free(err), out = err = NULL;
  snprintf(args, sizeof args, SAXPY " --model %s --gpu H100 --format csv", model);
  CU_ASSERT(run(args, &out, &err) == 0);
  CHECK_MSG("the model of this estimate: no warning", err && !strstr(err, "warning"));
  free(out), free(err), out = err = NULL;

  kcast_model *m = NULL, *mo = NULL;
  kcast_features *fs = NULL;
  CU_ASSERT_FATAL(kcast_model_load(model, &m) == KCAST_OK &&
                  kcast_model_load(old, &mo) == KCAST_OK && kcast_features_new(&fs) == KCAST_OK);
  kcast_features_set(fs, "launch.ctas", 1000);
  kcast_features_set(fs, "launch.block_x", 256);
  kcast_features_set(fs, "class.fp32", 256000);
  unsigned fl = 0, flo = 0;
  CU_ASSERT(kcast_predict_check(m, "H100", fs, &fl, NULL) == KCAST_OK);
  CU_ASSERT(kcast_predict_check(mo, "H100", fs, &flo, NULL) == KCAST_OK);
  CHECK_MSG("kcast_predict_check: KCAST_CHECK_OTHER_ESTIMATE for the other estimate's model only",
            !(fl & KCAST_CHECK_OTHER_ESTIMATE) && (flo & KCAST_CHECK_OTHER_ESTIMATE));
  kcast_features_free(fs);
  kcast_model_free(m);
  kcast_model_free(mo);

  /* version 0 is no version: refused by name */
  uint32_t zero = 0;
  memcpy(img + len - 8, &zero, 4);
  crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), img, (uInt)(len - 4));
  memcpy(img + len - 4, &crc, 4);
  CU_ASSERT_FATAL(tests_write_file(old, img, len) == 0);
  snprintf(args, sizeof args, "model info %s", old);
  rc = run(args, &out, &err);
  CHECK_MSG("a recorded estimate version 0 is refused, naming it",
            rc != 0 && err && strstr(err, "analytic estimate version 0"));
  free(out), free(err);
  free(img);
}

/* ------------------------------------------------- the table as data -- */

static void test_table_names(void) {
  const an_gpu *pcie = an_gpu_find("A100-PCIE");
  CHECK_MSG("the driver's name finds its GPU", an_gpu_find("NVIDIA A100-PCIE-40GB") == pcie);
  CHECK_MSG("kcast profile's key of a driver name finds it too", an_gpu_find("A100-PCIE-40GB") == pcie);
  CHECK_MSG("a Tesla prefix and case do not matter",
            an_gpu_find("Tesla T4") == an_gpu_find("T4") && an_gpu_find("nvidia h200") == an_gpu_find("H200"));
  CHECK_MSG("the SXM4 A100 is not the PCIe one", an_gpu_find("NVIDIA A100-SXM4-40GB") == an_gpu_find("A100") &&
                                                    an_gpu_find("A100") != pcie);
  CHECK_MSG("a name that is no GPU's stays unknown", an_gpu_find("RTX-A9999") == NULL && an_gpu_find("") == NULL);
  CHECK_MSG("the built-in table parses without error", an_gpu_table_error()[0] == 0);
  const an_gpu *k80 = an_gpu_find("K80"), *a4000 = an_gpu_find("A4000");
  CHECK_MSG("a GK210 SM has 131072 registers, later ones 65536",
            k80->regs_per_sm == 131072 && a4000->regs_per_sm == 65536);
  CHECK_MSG("cc 8.x reserves 1 KB of shared memory per CTA, cc 7.x none",
            a4000->smem_reserved_b == 1024 && an_gpu_find("T4")->smem_reserved_b == 0);
}

/* KCAST_GPUS: `kcast gpus --format csv` is the file format; a file adds and
   replaces rows; a bad one stops every command with file:line. */
static void test_table_file(void) {
  char dir[512], path[700], cmd[2048];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "gpus"));
  char *out = NULL, *err = NULL;
  CU_ASSERT_EQUAL_FATAL(run("gpus --format csv", &out, NULL), 0);
  snprintf(path, sizeof path, "%s/all.csv", dir);
  CU_ASSERT_EQUAL_FATAL(tests_write_file(path, out, strlen(out)), 0);
  char *again = NULL;
  snprintf(cmd, sizeof cmd, "KCAST_GPUS='%s' '%s' gpus --format csv", path, tests_kcast());
  CHECK_MSG("the table read back from its own CSV is the same table",
            tests_run(cmd, &again, NULL) == 0 && again && !strcmp(again, out));
  free(again);
  /* one row: T4 with 41 SMs (replaces), and a new GPU */
  const char *hdr = strchr(out, '\n');
  char head[1024];
  snprintf(head, sizeof head, "%.*s", (int)(hdr - out + 1), out);
  char body[4096];
  snprintf(body, sizeof body,
           "%sT4,NVIDIA T4,Tesla T4,7.5,41,1590,8141,254,320,16,4,64,64,0,65536,255,1024,16,70,10,\n"
           "LAB1,Lab GPU,LAB GPU ONE,8.6,10,1000,2000,100,100,8,2,100,99,1024,65536,255,1536,16,100,10,200\n",
           head);
  snprintf(path, sizeof path, "%s/lab.csv", dir);
  CU_ASSERT_EQUAL_FATAL(tests_write_file(path, body, strlen(body)), 0);
  snprintf(cmd, sizeof cmd, "KCAST_GPUS='%s' '%s' gpus --format csv", path, tests_kcast());
  CU_ASSERT_EQUAL(tests_run(cmd, &again, NULL), 0);
  CHECK_MSG("a row with a known name replaces that GPU", again && strstr(again, "\nT4,") &&
                                                            strstr(strstr(again, "\nT4,"), ",7.5,41,"));
  CHECK_MSG("a row with a new name adds a GPU", again && strstr(again, "\nLAB1,"));
  CHECK_MSG("an empty l1_kb cell takes the architecture's L1 (96 KB on cc 7.5)",
            again && strstr(again, "\nT4,") && strstr(strstr(again, "\nT4,"), ",70,10,96\n"));
  CHECK_MSG("a given l1_kb is kept", again && strstr(again, ",100,10,200\n"));
  free(again);

  snprintf(cmd, sizeof cmd, "KCAST_GPUS='%s' '%s' predict --gpu 'LAB GPU ONE' --features /dev/null",
           path, tests_kcast());
  CHECK_MSG("an added GPU is found by its alias", tests_run(cmd, NULL, &err) == 1 && err &&
                                                      !strstr(err, "unknown GPU"));
  free(err);
  char old[760];
  snprintf(old, sizeof old, "%s/old.csv", dir);
  /* a table of the columns before l1_kb (KCAST_GPUS files written before it) */
  snprintf(body, sizeof body,
           "name,full_name,aliases,cc,sms,boost_mhz,fp32_gflops,fp64_gflops,mem_bw_gbs,mem_gb,"
           "l2_mb,smem_per_sm_kb,smem_per_cta_kb,smem_reserved_b,regs_per_sm,max_regs_per_thread,"
           "max_threads_per_sm,max_ctas_per_sm,tdp_w,idle_w\n"
           "LAB2,Lab GPU 2,,8.0,10,1000,2000,100,100,8,2,164,163,1024,65536,255,2048,32,100,10\n"
           "LAB3,Lab GPU 3,,9.0,10,1000,2000,100,100,8,2,228,227,1024,65536,255,2048,32,100,10\n"
           "LAB4,Lab GPU 4,,6.0,10,1000,2000,100,100,8,2,64,48,0,65536,255,2048,32,100,10\n");
  CU_ASSERT_EQUAL_FATAL(tests_write_file(old, body, strlen(body)), 0);
  snprintf(cmd, sizeof cmd, "KCAST_GPUS='%s' '%s' gpus --format csv", old, tests_kcast());
  CU_ASSERT_EQUAL(tests_run(cmd, &again, &err), 0);
  CHECK_MSG("a table without the l1_kb column loads; L1 comes from the compute capability "
            "(192 KB on 8.0, 256 on 9.0, 24 on 6.0)",
            again && strstr(again, ",100,10,192\n") && strstr(again, ",100,10,256\n") &&
                strstr(again, ",100,10,24\n"));
  free(again);
  free(err);
  static const struct { const char *row, *says; } bad[] = {
      {"T4,NVIDIA T4,Tesla T4,7.5,forty,1590,8141,254,320,16,4,64,64,0,65536,255,1024,16,70,10,96\n",
       "sms: 'forty' is not a positive number"},
      {"T4,NVIDIA T4,Tesla T4,7.5,40\n", "5 fields, the header has 21"},
      {"T4,NVIDIA T4,Tesla T4,7.5,40,1590,8141,254,320,16,4,64,64,0,65536,255,1024,16,70,10,big\n",
       "l1_kb: 'big' is not a positive number"},
      {"T4,NVIDIA T4,Tesla T4,seven,40,1590,8141,254,320,16,4,64,64,0,65536,255,1024,16,70,10,96\n",
       "cc 'seven' is not a compute capability"},
      {"T4,NVIDIA T4,Tesla T4,7.5,40,1590,8141,254,320,16,4,64,64,0,65536,255,1024,16,70,80,96\n",
       "idle_w is not below tdp_w"},
  };
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    snprintf(body, sizeof body, "%s%s", head, bad[k].row);
    CU_ASSERT_EQUAL_FATAL(tests_write_file(path, body, strlen(body)), 0);
    snprintf(cmd, sizeof cmd, "KCAST_GPUS='%s' '%s' gpus", path, tests_kcast());
    char *o = NULL;
    int rc = tests_run(cmd, &o, &err);
    char where[800];
    snprintf(where, sizeof where, "%s:2: ", path);
    CHECK_MSG("a bad row: exit 1, nothing on stdout, one line naming file:line and the problem",
              rc == 1 && o && !*o && err && strstr(err, where) && strstr(err, bad[k].says));
    free(o);
    free(err);
  }
  snprintf(body, sizeof body, "name,sms,bogus\nT4,40,1\n");
  CU_ASSERT_EQUAL_FATAL(tests_write_file(path, body, strlen(body)), 0);
  CU_ASSERT_EQUAL(tests_run(cmd, NULL, &err), 1);
  CHECK_MSG("an unknown column is named", err && strstr(err, "unknown column 'bogus'"));
  free(err);
  snprintf(cmd, sizeof cmd, "KCAST_GPUS='%s/none.csv' '%s' gpus", dir, tests_kcast());
  CU_ASSERT_EQUAL(tests_run(cmd, NULL, &err), 1);
  CHECK_MSG("a missing file is named", err && strstr(err, "none.csv") && strstr(err, "KCAST_GPUS"));
  free(err);
  free(out);
}

/* kcast predict --gpu G --features CSV: the estimate of every row, and
   --measured against a column. */
static void test_cli_predict_csv(void) {
  char dir[512], path[700], cmd[2048];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "an-csv"));
  snprintf(path, sizeof path, "%s/l.csv", dir);
  const char *csv =
      "name,gpu,launch.block_x,launch.block_y,launch.block_z,launch.ctas,class.fp32,op.add.f32,t_us\n"
      "a,T4,256,1,1,1000,25600000,,100\n"
      "b,H200,256,1,1,4000,102400000,1,50\n"
      "c,T4,128,1,1,10,1280,5,3\n";
  CU_ASSERT_EQUAL_FATAL(tests_write_file(path, csv, strlen(csv)), 0);
  char *out = NULL, *err = NULL;
  snprintf(cmd, sizeof cmd, "'%s' predict --gpu-column gpu --features '%s' --measured t_us",
           tests_kcast(), path);
  int rc = tests_run(cmd, &out, &err);
  int lines = 0;
  for (const char *c = out; c && *c; c++) lines += *c == '\n';
  CHECK_MSG("one CSV line per row after the header, each on the row's GPU",
            rc == 0 && lines == 4 && out && strstr(out, "\nT4,") && strstr(out, "\nH200,"));
  CHECK_MSG("an empty count cell reads as 0, text columns are not read", rc == 0);
  CHECK_MSG("--measured prints one summary line naming the column",
            err && strstr(err, "against t_us (3 rows)") && strstr(err, "Spearman"));
  CHECK_MSG("--measured gives the ranking figures: Kendall's tau, top-1 and top-5 regret",
            err && strstr(err, "Kendall") && strstr(err, "top-1 regret") &&
                strstr(err, "top-5 regret"));
  CHECK_MSG("with --gpu-column one more line per GPU",
            err && strstr(err, "against t_us, gpu T4 (2 rows)") &&
                strstr(err, "against t_us, gpu H200 (1 rows)"));
  free(out);
  free(err);
  /* (each row on its own GPU: --gpu T4 would compare T4's estimates with
     the times the gpu column says were measured on H200, an error) */
  snprintf(cmd, sizeof cmd, "'%s' predict --gpu-column gpu --features '%s' --measured t_us "
           "--group name", tests_kcast(), path);
  rc = tests_run(cmd, &out, &err);
  CHECK_MSG("--group COLUMN: a line per value of the column",
            rc == 0 && err && strstr(err, "against t_us, name a (1 rows)") &&
                strstr(err, "against t_us, name c (1 rows)"));
  free(out);
  free(err);
  snprintf(cmd, sizeof cmd, "'%s' predict --gpu T4 --features '%s' --group name", tests_kcast(),
           path);
  CHECK_MSG("--group without --measured is a usage error (exit 2)",
            tests_run(cmd, NULL, NULL) == 2);
  const char *bad = "gpu,launch.block_x,launch.ctas\nT4,32,1\nNOPE,32,1\n";
  CU_ASSERT_EQUAL_FATAL(tests_write_file(path, bad, strlen(bad)), 0);
  snprintf(cmd, sizeof cmd, "'%s' predict --gpu-column gpu --features '%s'", tests_kcast(), path);
  CU_ASSERT_EQUAL(tests_run(cmd, &out, &err), 1);
  char where[800];
  snprintf(where, sizeof where, "%s:3: column gpu: unknown GPU 'NOPE'", path);
  CHECK_MSG("an unknown GPU in the column: exit 1 naming file:line", err && strstr(err, where));
  free(out);
  free(err);
}

TEST_SUITES(register_analytic) {
  CU_pSuite s = tests_suite("analytic");
  TEST_ADD(s, test_table);
  TEST_ADD(s, test_table_names);
  TEST_ADD(s, test_estimate_shape);
  TEST_ADD(s, test_estimate_pinned);
  TEST_ADD(s, test_model_estimate_version);
  TEST_ADD(s, test_estimate_monotone);
  TEST_ADD(s, test_estimate_waves);
  TEST_ADD(s, test_estimate_tensor);
  TEST_ADD(s, test_estimate_errors);
  CU_pSuite c = tests_suite("cli_analytic");
  TEST_ADD(c, test_cli_gpus);
  TEST_ADD(c, test_table_file);
  TEST_ADD(c, test_cli_predict_csv);
  TEST_ADD(c, test_cli_predict_all);
  TEST_ADD(c, test_cli_predict_errors);
  TEST_ADD(c, test_cli_predict_model);
}
