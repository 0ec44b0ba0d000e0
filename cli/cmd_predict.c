/*
 * cmd_predict.c -- `kcast predict`, two modes:
 *
 *  - `--model MODEL --features CSV`: one line per input row with the
 *    forest's prediction and its interval.  The CSV's columns are matched to
 *    the model's feature names by name, so their order does not matter; a
 *    feature the model needs and the file lacks is an error naming it,
 *    except a derived one (mg.*, an.*), which model/derived.c computes from
 *    the row's raw columns as libkcast does; columns the model does not use
 *    (nor a derivation) are ignored (not even parsed) with one note on
 *    stderr listing them.
 *  - `FILE --kernel K --grid .. --block .. [--arg SPEC].. (--gpu G|all |
 *    --model MODEL)`: emulate the launch (cli_launch.c, the code of `kcast
 *    emulate`; sampled to 64 CTAs by default), add the kernel's static
 *    features, and print one row per GPU with time, power, energy and which
 *    model answered each.  With --gpu the analytic estimate
 *    (model/analytic.c) answers both; with --model the forest answers its
 *    target (time, power or energy) and the analytic estimate, on the
 *    model's GPU (or --gpu), the other quantity, labelled "analytic".
 */
#include "cli/cli.h"

#include <cjson/cJSON.h>
#include <csv.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "datasets/ds.h"
#include "extractor/features.h"
#include "model/model.h"
#include "model/opr.h"

const char cmd_predict_usage[] =
    "usage: kcast predict --model MODEL --features CSV [--gpu G] [--coverage C]\n"
    "                     [--measured COLUMN] [--id COL,...] [--format csv|table|json]\n"
    "       kcast predict --gpu G|--gpu-column COL --features CSV [--measured COLUMN\n"
    "                     [--measured-unit U]] [--id COL,...]\n"
    "                     [--format csv|table|json]\n"
    "       kcast predict FILE.{cu,ptx,ll,bc} --kernel K --grid X[,Y,Z] --block X[,Y,Z]\n"
    "                     [--arg SPEC]... [--shared BYTES] [--sample CTAS]\n"
    "                     [--oob error|warn] [--tool-timeout SECS]\n"
    "                     (--gpu G[,G...]|all | --model MODEL [--gpu G[,G...]])\n"
    "                     [--coverage C] [--format table|csv|json]\n"
    "       kcast predict --op 'OPERATOR NAME=VALUE...' [--op ...] [--gpu G[,G...]|all]\n"
    "                     [--model MODEL] [--coverage C] [--format table|csv|json]\n"
    "       kcast predict --op list\n"
    "       kcast predict --featmodel K.kcf [--kernel INSTANCE] --grid X[,Y,Z]\n"
    "                     --block X[,Y,Z] [--shared BYTES] [--arg VALUE]...\n"
    "                     (--gpu G|all | --model MODEL [--gpu G]) [--coverage C]\n"
    "                     [--format table|csv|json]\n"
    "\n"
    "With --model and --features: predict every row of CSV with the forest in\n"
    "MODEL.  Columns are matched to the model's features by name; extra columns\n"
    "are ignored (noted on stderr), a missing feature is an error, except a\n"
    "derived one (mg.*, an.*, work.*, occ.*, gpu.*: docs/features.md), which is\n"
    "computed per row from the row's launch.*, op.*, class.*, mem.*, ctrl.*,\n"
    "static.* and ptxas.* columns on the model's GPU or --gpu G; a derived\n"
    "column the CSV gives is used as given; an empty count cell reads as 0.\n"
    "Output: prediction,lo,hi,unit per row (default csv), where [lo, hi] is the\n"
    "interval at coverage C (0.9) and unit that of the model's target (ns, W, J\n"
    "for a dataset's time, power, energy; for a CSV column the unit its name\n"
    "spells, as ms in time_ms_median, else 'unit of COLUMN'); json gives it\n"
    "once (\"unit\"), the table in its header.  With a list of GPUs (--gpu\n"
    "H100,A100) each row is predicted for each, a gpu column first.  When a\n"
    "row's features lie outside the ranges the model was trained on, a last\n"
    "column outside names the most important such feature (empty for the\n"
    "rows within; json: \"outside\", and \"unseen_gpu\": true for a GPU the\n"
    "model was not trained on) and a note counts them.  A model with a base\n"
    "answers such a row shrunk toward the median ratio of its training rows to\n"
    "their base (docs/formats.md, version 6).  A model whose base is another\n"
    "version of the analytic estimate than this kcast's (trained by another\n"
    "kcast) answers with a warning and, in json, \"other_estimate\": true\n"
    "(docs/formats.md, version 9).\n"
    "\n"
    "With --gpu G[,G...] (or --gpu-column COL, each row's GPU) and --features\n"
    "but no model: the analytic estimate of every row on each GPU: time (us)\n"
    "and power (W) with their bands, energy (mJ) and the bound.\n"
    "\n"
    "  --gpu G[,G...]      the GPUs to predict for (names as 'kcast gpus' lists\n"
    "                      them, any case, or an alias: t4, Tesla T4): needed for a\n"
    "                      model trained on several GPUs, and any GPU of 'kcast\n"
    "                      gpus' may be given:\n"
    "                      for one the model was not trained on, a note says so\n"
    "                      and the interval comes from the model's calibration for\n"
    "                      unseen GPUs; a model of one GPU predicts for that GPU\n"
    "                      only (another is refused)\n"
    "  --gpus FILE         GPUs to add to or replace in the GPU table (as\n"
    "                      KCAST_GPUS=FILE; 'kcast help gpus')\n"
    "  --measured COLUMN   also compare the predictions with the CSV's COLUMN: one\n"
    "                      line on stderr with MAPE, median APE, Spearman's rho,\n"
    "                      Kendall's tau, the top-1 and top-5 regret (the measured\n"
    "                      value of the row predicted lowest, and the lowest\n"
    "                      measured of the five predicted lowest, over the lowest\n"
    "                      measured), the share within 2x and the interval\n"
    "                      coverage; then one line per GPU (--gpu-column) or\n"
    "                      per value of --group's column.  COLUMN's values are\n"
    "                      converted to the predictions' unit from the unit its\n"
    "                      name spells (time_ms_median: ms; time_ns@T4: ns) or\n"
    "                      --measured-unit, else taken to be in the predictions'\n"
    "                      unit (us for the analytic estimate) with a note; a\n"
    "                      column of another quantity (power_w against a time\n"
    "                      model) or of another GPU (time_ns@K80 against\n"
    "                      predictions for T4), and a row whose gpu column\n"
    "                      names another GPU than the one predicted for, are\n"
    "                      errors\n"
    "  --group COLUMN      with --measured: the figures per value of COLUMN too\n"
    "  --measured-unit U   COLUMN's unit when its name spells none (ns, us, ms, s,\n"
    "                      W, mW, J, mJ; one that contradicts the name is an error)\n"
    "  --id COL,...        print these CSV columns (shell patterns) before each\n"
    "                      prediction, so its row can be joined to the input\n"
    "                      (e.g. --id id,app,kernel for a dataset export)\n"
    "\n"
    "With FILE: emulate one launch of kernel K (the options and --arg SPECs of\n"
    "'kcast emulate', -I, -D, -std and --cflags for .cu input included;\n"
    "--sample defaults to auto, as for 'kcast emulate'), then print the\n"
    "kernel (mangled and demangled), grid and block, and one row per GPU\n"
    "(default table): predicted time (us) with its\n"
    "band, average power (W) with its band, energy (mJ = time x power) and the\n"
    "model that answered each quantity; the table's first line and the JSON\n"
    "(ctas, ctas_emulated, sample_rse) say how many CTAs were emulated and\n"
    "the counts' relative standard error when sampled (a note on stderr\n"
    "with csv when sampled); --oob and --tool-timeout as for 'kcast emulate':\n"
    "  --gpu G|all     the analytic estimate on GPU G (see 'kcast gpus') or on\n"
    "                  every GPU: a rough roofline estimate from datasheet\n"
    "                  figures, band x0.5..x2 (time) and x0.7..x1.3 (power);\n"
    "                  not a trained model (docs/gpus.md)\n"
    "  --model MODEL   the forest answers its target (time, power or energy)\n"
    "                  with its interval at coverage C; the other quantity comes\n"
    "                  from the analytic estimate on the model's GPU (or --gpu G)\n"
    "                  and is labelled \"analytic\"; an answer that rests on a\n"
    "                  feature outside the model's training range says so in a\n"
    "                  note naming it (json: \"outside\"), here and with --op\n"
    "                  and --featmodel\n"
    "\n"
    "With --op: an operator launch -- a library kernel described by its operator\n"
    "and shape ('bmm B=8 M=512 N=512 K=64'; --op list lists the operators and\n"
    "their parameters), optionally kernel=NAME, grid=X,Y,Z, block=X,Y,Z and\n"
    "kernels=N as a profiler records them; what is not given is assumed as the\n"
    "libraries choose it and said in a note (a GEMM without kernel, grid and\n"
    "block: on each GPU the one of cuBLAS's SGEMM tiles predicted fastest there,\n"
    "as cuBLAS's heuristics choose; csv gives it per row, json per prediction,\n"
    "its operator's features being kcast_features_from_op's) -- predicted\n"
    "on the GPUs of --gpu (a\n"
    "list too), or on every GPU (default), one block of rows per --op (csv: one\n"
    "row per operator and GPU; json: {\"operators\": [...]}, each with its\n"
    "features).  The forest is --model, else the operator model `make models`\n"
    "trains (models/operators-time.kcm beside the kcast binary, or\n"
    "KCAST_OP_MODEL; KCAST_OP_MODEL= turns it off), else none: the analytic\n"
    "estimate answers (docs/gpus.md).  A description that is not one launch is\n"
    "refused: a grid beyond CUDA's limits (given or assumed: x at most 2^31-1,\n"
    "y and z at most 65535), a kernel= of another operator class (relu by an\n"
    "sgemm), a GEMM grid with fewer CTAs than the tiles of its kernel; tensors\n"
    "larger than a GPU's memory are said in a note.\n"
    "\n"
    "With --featmodel K.kcf (from 'kcast featmodel fit'): the same rows for a\n"
    "launch of K's kernel without emulating it: the feature model gives the\n"
    "launch's features from --grid, --block, --shared and the arguments, one\n"
    "--arg VALUE per kernel parameter in order (a number; anything else, e.g.\n"
    "buf:4M, for a pointer parameter, whose value the model ignores).  A launch\n"
    "outside the fitted sizes is answered with a note that it is an\n"
    "extrapolation; a kernel the model could not validate (data-dependent\n"
    "work) with a warning to emulate it instead.  The model of a kernel\n"
    "template (featmodel fit --kernel 'k<T>') needs --kernel INSTANCE, the\n"
    "instance to answer for: its mangled name or its source name with\n"
    "numbers ('gemm_tiled_kernel<16>'), which need not be one it was fitted on;\n"
    "an instance beyond the fitted template arguments is an extrapolation.\n"
    "The table's first line says that nothing was emulated (JSON:\n"
    "ctas_emulated null); a template's rows name the instance.\n"
    "\n"
    "Exit status: 0 ok, 1 bad input (unknown GPU, failed launch, bad model),\n"
    "2 bad command line.\n";

/* -------------------------------------------------------- kernel mode -- */

/* One output row. */
typedef struct pred_row {
  const char *gpu;
  double t, t_lo, t_hi;      /* us; NaN when unknown */
  double p, p_lo, p_hi;      /* W; NaN when unknown */
  double e;                  /* mJ; NaN when unknown */
  const char *t_model, *p_model;
  const char *bound;         /* analytic bound or "" */
  const char *outside;       /* the forest's most important feature of the
                                launch outside its training range (owned by
                                the model), NULL when none or no forest */
  int other_estimate;        /* the forest corrects another version of the
                                analytic estimate (rf_base_stale) */
} pred_row;

/*
 * One note for the rows r[0..n) whose forest answer extrapolates: the
 * feature (of the first such row) and the GPUs, so that a prediction
 * resting on values the model never saw says so in every mode (predict
 * --features marks such rows in its column outside).
 */
static void outside_note(const char *what, const pred_row *r, size_t n) {
  size_t k = 0;
  const char *feat = NULL;
  for (size_t i = 0; i < n; i++)
    if (r[i].outside) {
      if (!feat) feat = r[i].outside;
      k++;
    }
  if (!feat) return;
  fprintf(stderr, "kcast: note: %s: the forest's answer%s for", what, k == 1 ? "" : "s");
  if (k == n && n > 2)
    fprintf(stderr, " every GPU");
  else
    for (size_t i = 0, m = 0; i < n; i++)
      if (r[i].outside) fprintf(stderr, "%s %s", m++ ? "," : "", r[i].gpu);
  fprintf(stderr, " rest%s on %s outside the model's training range: an extrapolation (the "
          "interval assumes the training rows' range)\n", k == 1 ? "s" : "", feat);
}

static void num_out(FILE *f, double x, const char *fmt) {
  if (isnan(x)) fputs("", f);
  else fprintf(f, fmt, x);
}

static int rows_out(int fmt, const char *kernel, const unsigned grid[3], const unsigned block[3],
                    double ctas, double emulated, double rse, const pred_row *r, size_t n) {
  char *dm = fe_demangle(kernel);
  const char *demangled = dm ? dm : kernel;
  char gb[96];
  snprintf(gb, sizeof gb, "%u,%u,%u,%u,%u,%u", grid[0], grid[1], grid[2], block[0], block[1],
           block[2]);
  if (fmt == CLI_FMT_JSON) {
    cJSON *root = cJSON_CreateObject(), *ga = NULL, *ba = NULL;
    int ok = root && cJSON_AddStringToObject(root, "kernel", kernel) &&
             cJSON_AddStringToObject(root, "demangled", demangled) &&
             (ga = cJSON_AddArrayToObject(root, "grid")) &&
             (ba = cJSON_AddArrayToObject(root, "block"));
    for (int k = 0; ok && k < 3; k++)
      ok = cJSON_AddItemToArray(ga, cJSON_CreateNumber(grid[k])) &&
           cJSON_AddItemToArray(ba, cJSON_CreateNumber(block[k]));
    ok = ok && cJSON_AddNumberToObject(root, "ctas", ctas) &&
         (isnan(emulated) ? cJSON_AddNullToObject(root, "ctas_emulated")
                          : cJSON_AddNumberToObject(root, "ctas_emulated", emulated)) &&
         (isnan(rse) || cJSON_AddNumberToObject(root, "sample_rse", rse));
    cJSON *arr = ok ? cJSON_AddArrayToObject(root, "predictions") : NULL;
    ok = arr != NULL;
    for (size_t i = 0; ok && i < n; i++) {
      cJSON *o = cJSON_CreateObject();
      ok = o && cJSON_AddItemToArray(arr, o) && cJSON_AddStringToObject(o, "gpu", r[i].gpu);
      const char *keys[] = {"time_us", "time_lo_us", "time_hi_us", "power_w", "power_lo_w",
                            "power_hi_w", "energy_mj"};
      double v[] = {r[i].t, r[i].t_lo, r[i].t_hi, r[i].p, r[i].p_lo, r[i].p_hi, r[i].e};
      for (int k = 0; ok && k < 7; k++)
        ok = (isnan(v[k]) ? cJSON_AddNullToObject(o, keys[k])
                          : cJSON_AddNumberToObject(o, keys[k], v[k])) != NULL;
      ok = ok && cJSON_AddStringToObject(o, "time_model", r[i].t_model) &&
           cJSON_AddStringToObject(o, "power_model", r[i].p_model) &&
           cJSON_AddStringToObject(o, "bound", r[i].bound) &&
           (!r[i].outside || cJSON_AddStringToObject(o, "outside", r[i].outside)) &&
           (!r[i].other_estimate || cJSON_AddTrueToObject(o, "other_estimate"));
    }
    char *s = ok ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    if (!s) { free(dm); return -1; }
    puts(s);
    cJSON_free(s);
  } else if (fmt == CLI_FMT_CSV) {
    puts("kernel,demangled,grid_x,grid_y,grid_z,block_x,block_y,block_z,gpu,time_us,time_lo_us,"
         "time_hi_us,power_w,power_lo_w,power_hi_w,energy_mj,time_model,power_model,bound");
    for (size_t i = 0; i < n; i++) {
      double v[] = {r[i].t, r[i].t_lo, r[i].t_hi, r[i].p, r[i].p_lo, r[i].p_hi, r[i].e};
      cli_csv_field(stdout, kernel);
      putchar(',');
      cli_csv_field(stdout, demangled);
      printf(",%s,", gb);
      fputs(r[i].gpu, stdout);
      for (int k = 0; k < 7; k++) { putchar(','); num_out(stdout, v[k], "%.6g"); }
      printf(",%s,%s,%s\n", r[i].t_model, r[i].p_model, r[i].bound);
    }
  } else {
    printf("kernel %s%s%s\n", kernel, dm ? "  " : "", dm ? dm : "");
    if (isnan(emulated))
      printf("grid %u,%u,%u  block %u,%u,%u  (%.0f CTAs; features from the feature model, "
             "nothing emulated)\n", grid[0], grid[1], grid[2], block[0], block[1], block[2], ctas);
    else
      printf("grid %u,%u,%u  block %u,%u,%u  (emulated %.0f of %.0f CTAs%s", grid[0],
             grid[1], grid[2], block[0], block[1], block[2], emulated, ctas,
             emulated < ctas ? ", counts scaled to the grid" : "");
    if (!isnan(emulated)) {
      if (!isnan(rse)) printf(", relative standard error %.2f %%", 100 * rse);
      puts(")");
    }
    printf("%-10s %10s %21s %8s %17s %11s  %-8s %s\n", "gpu", "time_us", "band_us", "power_w",
           "band_w", "energy_mj", "bound", "model (time / power)");
    for (size_t i = 0; i < n; i++) {
      char band_t[136] = "-", band_p[48] = "-", t[64] = "-", p[24] = "-", e[64] = "-";
      char n1[64], n2[64];
      if (!isnan(r[i].t)) {
        cli_num(t, sizeof t, r[i].t, 3);
        snprintf(band_t, sizeof band_t, "%s..%s", cli_num(n1, sizeof n1, r[i].t_lo, 3),
                 cli_num(n2, sizeof n2, r[i].t_hi, 3));
      }
      if (!isnan(r[i].p)) {
        snprintf(p, sizeof p, "%.0f", r[i].p);
        snprintf(band_p, sizeof band_p, "%.0f..%.0f", r[i].p_lo, r[i].p_hi);
      }
      if (!isnan(r[i].e)) cli_num(e, sizeof e, r[i].e, 3);
      printf("%-10s %10s %21s %8s %17s %11s  %-8s %s / %s\n", r[i].gpu, t, band_t, p, band_p, e,
             r[i].bound, r[i].t_model, r[i].p_model);
    }
  }
  free(dm);
  return 0;
}


/* Fill r from the analytic estimate on g; -1 after printing the error. */
static int analytic_row(const an_gpu *g, const feat_vec *v, pred_row *r) {
  an_estimate est;
  if (an_estimate_launch(g, (const char *const *)v->names, v->vals, v->n, &est)) {
    cli_error("analytic estimate on %s: %s", g->name, rf_last_error());
    return -1;
  }
  r->gpu = g->name;
  r->t = est.time_us, r->t_lo = est.time_lo_us, r->t_hi = est.time_hi_us;
  r->p = est.power_w, r->p_lo = est.power_lo_w, r->p_hi = est.power_hi_w;
  r->e = est.energy_mj;
  r->t_model = r->p_model = "analytic";
  r->bound = est.bound;
  return 0;
}

/*
 * The GPU a model predicts for: want (--gpu) when given, else the model's
 * own when it was trained on one; a model of several GPUs needs --gpu.
 * *unseen: the model was not trained on that GPU (a note says so; its
 * intervals then come from the unseen-GPU table when it has one).  -1 after
 * printing the error.
 */
static int model_gpu(const char *path, const rf_forest *f, const char *want, const char **gpu,
                     int *unseen) {
  const char *mg = rf_get_info(f)->gpu;
  *unseen = 0;
  if (!want || !*want) {
    if (mg && strchr(mg, ',')) {
      cli_error("%s was trained on GPUs %s: give --gpu G (any GPU of 'kcast gpus')", path, mg);
      return -1;
    }
    *gpu = mg;
    return 0;
  }
  *gpu = want;
  if (mg && *mg && !strchr(mg, ',') && !an_gpu_in_list(mg, want)) {
    /* a model of one GPU knows nothing of another: its answer labelled
       with the other GPU would be the first GPU's figure */
    cli_error("%s was trained on %s only, not on %s: it cannot predict for another GPU "
              "(give --gpu %s, or train on several GPUs: 'kcast train DB --gpu all')",
              path, mg, want, mg);
    return -1;
  }
  if (mg && *mg && !an_gpu_in_list(mg, want)) {
    *unseen = 1;
    fprintf(stderr, "kcast: note: %s was trained on %s, not on %s: a GPU it has not seen%s\n",
            path, mg, want,
            rf_get_info(f)->n_cal_unseen ? " (intervals calibrated for unseen GPUs)"
                                         : " (its intervals are calibrated for the GPUs it saw)");
  }
  return 0;
}

/* One GPU a prediction answers for: its row of the GPU table (NULL: a
   model's GPU the table lacks), the name the model is asked for and
   whether the model has not seen it. */
typedef struct gpu_target {
  const an_gpu *g;
  const char *name;
  int unseen;
} gpu_target;
#define MAX_TARGETS 128

/* The GPUs of --gpu (all, or a list: cli_gpu_list, the table's names) or,
   with a model and no --gpu, the model's one; with a model each is checked
   against it (model_gpu).  -1 after printing the error. */
static int gpu_targets(const char *gpu, const char *model, const rf_forest *f, gpu_target *t,
                       size_t *n) {
  *n = 0;
  if (gpu) {
    const an_gpu *gl[MAX_TARGETS];
    size_t ng = 0;
    if (cli_gpu_list(gpu, gl, MAX_TARGETS, &ng)) return -1;
    for (size_t k = 0; k < ng; k++) {
      t[k].g = gl[k];
      t[k].name = gl[k]->name;
      t[k].unseen = 0;
      if (f && model_gpu(model, f, gl[k]->name, &t[k].name, &t[k].unseen)) return -1;
    }
    *n = ng;
    return 0;
  }
  if (!f) return 0;
  const char *fgpu = NULL;
  int unseen = 0;
  if (model_gpu(model, f, NULL, &fgpu, &unseen)) return -1;
  t[0].g = fgpu && *fgpu ? an_gpu_find(fgpu) : NULL;
  t[0].name = fgpu;
  t[0].unseen = 0;
  *n = 1;
  return 0;
}

/* The forest's answer on v, merged into r (which holds the analytic row or
   NaNs); -1 after printing the error. */
static int forest_row(const char *path, const rf_forest *f, const char *gpu, int unseen,
                      const feat_vec *v, double coverage, char *label, pred_row *r) {
  const rf_info *info = rf_get_info(f);
  const char *tg = info->target ? info->target : "";
  int kind = !strcmp(tg, "time") || !strcmp(tg, "time_ns")     ? 0
             : !strcmp(tg, "power") || !strcmp(tg, "power_w")  ? 1
             : !strcmp(tg, "energy") || !strcmp(tg, "energy_j") ? 2
                                                                : -1;
  if (kind < 0) {
    cli_error("%s: the model predicts '%s'; kcast predict FILE needs a time, power or energy "
              "model", path, tg);
    return -1;
  }
  double *row = malloc((info->n_features ? info->n_features : 1) * sizeof *row);
  if (!row) { cli_error("out of memory"); return -1; }
  size_t missing = 0;
  md_cache dc = {0};
  for (size_t j = 0; j < info->n_features; j++) {
    long at = feat_find(v, info->features[j]);
    /* derived columns (mg.*, an.*) from the launch's raw features */
    int got = at >= 0 ? 0
                      : md_value(&dc, info->features[j], gpu, (const char *const *)v->names,
                                 v->vals, v->n, &row[j]);
    if (got < 0) {
      cli_error("%s: feature %s: %s", path, info->features[j], rf_last_error());
      free(row);
      return -1;
    }
    if (got) continue;
    row[j] = at >= 0 ? v->vals[at] : 0; /* absent features count 0 (docs/features.md) */
    if (at < 0 && strncmp(info->features[j], "op.", 3) && strncmp(info->features[j], "static.op.", 10)) {
      if (!missing++) fprintf(stderr, "kcast: note: %s: features the launch lacks (counted 0):", path);
      if (missing <= 8) fprintf(stderr, " %s", info->features[j]);
    }
  }
  if (missing > 8) fprintf(stderr, " ... (%zu in all)", missing);
  if (missing) fputc('\n', stderr);
  double pr, lo, hi, adapt;
  int rc = rf_predict_interval_on(f, row, coverage, unseen, &pr, &lo, &hi);
  long out = rc ? -1 : rf_outside(f, row, NULL);
  r->outside = out >= 0 ? info->features[out] : NULL;
  r->other_estimate = rf_base_stale(f, NULL, 0);
  free(row);
  if (rc) { cli_error("%s: %s", path, rf_last_error()); return -1; }
  /* a model adapted to this GPU with measured shots (kcast calibrate) */
  if (rf_adapt_launch(f, gpu, (const char *const *)v->names, v->vals, v->n, &adapt)) {
    pr *= adapt;
    lo *= adapt;
    hi *= adapt;
  }
  if (kind == 0) { /* ns -> us */
    r->t = pr / 1e3, r->t_lo = lo / 1e3, r->t_hi = hi / 1e3;
    r->t_model = label;
    if (!isnan(r->p)) r->e = r->t * r->p / 1e3;
  } else if (kind == 1) {
    r->p = pr, r->p_lo = lo, r->p_hi = hi;
    r->p_model = label;
    if (!isnan(r->t)) r->e = r->t * r->p / 1e3;
  } else { /* J -> mJ; power = energy / time (analytic time) */
    r->e = pr * 1e3;
    r->p_model = label;
    if (!isnan(r->t) && r->t > 0) {
      r->p = r->e * 1e3 / r->t;
      r->p_lo = lo * 1e6 / r->t, r->p_hi = hi * 1e6 / r->t;
    } else {
      r->p = r->p_lo = r->p_hi = NAN;
    }
  }
  return 0;
}

/* L holds the launch options and the input file; freed here. */
static int predict_kernel(cli_launch *L, const char *model, const char *gpu, double coverage,
                          int fmt) {
  feat_vec feats;
  feat_init(&feats);
  rf_forest *f = NULL;
  pred_row *rows = NULL;
  char *label = NULL;
  size_t nrows = 0;
  int rc;
  if ((rc = cli_launch_check(L)) != KCAST_EXIT_OK) goto out;
  if (!model && !gpu) { rc = cli_usage_error("predict", "give --gpu G|all or --model MODEL"); goto out; }
  rc = KCAST_EXIT_USER;
  int all = gpu && !strcasecmp(gpu, "all");
  if (all && model) { rc = cli_usage_error("predict", "--gpu all goes without --model"); goto out; }
  gpu_target tg[MAX_TARGETS];
  size_t nt = 0;
  if (model) {
    if (cli_model_load(model, &f)) { cli_error("%s", rf_last_error()); goto out; }
    size_t ll = strlen(model) + 8;
    label = malloc(ll);
    if (!label) { cli_error("out of memory"); goto out; }
    snprintf(label, ll, "forest:%s", model);
  }
  if (gpu_targets(gpu, model, f, tg, &nt)) goto out;

  /* Emulate (sampled), then add the static features. */
  uint64_t ctas = (uint64_t)L->cfg.grid[0] * L->cfg.grid[1] * L->cfg.grid[2];
  if (!L->cfg.sample_ctas) L->cfg.sample_ctas = EMU_SAMPLE_AUTO;
  if ((rc = cli_launch_load(L)) != KCAST_EXIT_OK) goto out;
  if ((rc = cli_launch_device(L)) != KCAST_EXIT_OK) goto out;
  if ((rc = cli_launch_run(L, stderr, &feats, NULL)) != KCAST_EXIT_OK) goto out;
  rc = KCAST_EXIT_USER;
  ptx_error perr;
  memset(&perr, 0, sizeof perr);
  if (feat_static(L->m, L->k, &feats, &perr)) {
    cli_error("%s", perr.msg[0] ? perr.msg : "cannot compute static features");
    goto out;
  }
  /* the registers of the kernel for the GPUs answered for (the occupancy
     features and the analytic estimate read them; without a ptxas a note) */
  {
    char archs[512] = "";
    size_t al = 0;
    for (size_t i = 0; i < nt; i++) {
      const an_gpu *gi = tg[i].g;
      if (!gi) continue;
      char a[16];
      snprintf(a, sizeof a, "sm_%d%d", gi->cc_major, gi->cc_minor);
      if (!strstr(archs, a) && al + sizeof a < sizeof archs)
        al += (size_t)snprintf(archs + al, sizeof archs - al, "%s%s", al ? "," : "", a);
    }
    const ptx_func *ks[1] = {L->k};
    feat_vec *vs[1] = {&feats};
    if (al && cli_ptxas_features(L->text, L->len, L->path, archs, ks, vs, 1, 1) < 0) goto out;
  }

  rows = calloc(nt + 1, sizeof *rows);
  if (!rows) { cli_error("out of memory"); goto out; }
  for (size_t i = 0; i < nt; i++) {
    const an_gpu *gi = tg[i].g;
    pred_row *r = &rows[nrows++];
    if (gi) {
      if (analytic_row(gi, &feats, r)) goto out;
    } else { /* a model for a GPU the table lacks: no analytic side */
      const char *mg = rf_get_info(f)->gpu;
      r->gpu = mg && *mg ? mg : "?";
      r->t = r->t_lo = r->t_hi = r->p = r->p_lo = r->p_hi = r->e = NAN;
      r->t_model = r->p_model = "-";
      r->bound = "";
    }
    if (f && forest_row(model, f, tg[i].name, tg[i].unseen, &feats, coverage, label, r)) goto out;
  }
  long ce = feat_find(&feats, "emu.ctas_emulated"), ct = feat_find(&feats, "launch.ctas");
  double nct = ct >= 0 ? feats.vals[ct] : (double)ctas, nce = ce >= 0 ? feats.vals[ce] : nct;
  if (fmt == CLI_FMT_CSV && nce < nct)
    fprintf(stderr, "kcast: note: emulated %.0f of %.0f CTAs, counts scaled to the grid\n", nce, nct);
  outside_note(L->k->name, rows, nrows);
  if (rows_out(fmt, L->k->name, L->cfg.grid, L->cfg.block, nct, nce,
               feat_get(&feats, "emu.sample_rse", NAN), rows, nrows)) { cli_error("out of memory writing output"); goto out; }
  rc = KCAST_EXIT_OK;
out:
  free(rows);
  free(label);
  rf_free(f);
  feat_free(&feats);
  cli_launch_free(L);
  return rc;
}

/* ------------------------------------------------------ operator mode -- */

/* The operator model kcast uses when --op is given without --model:
   KCAST_OP_MODEL, else models/operators-time.kcm beside the kcast binary
   (the build folder, where `make models` writes it), else
   ../lib/kcast/models/ of an installed tree.  "" when there is none. */
static void default_op_model(char *out, size_t cap) {
  out[0] = 0;
  const char *env = getenv("KCAST_OP_MODEL");
  if (env) {
    snprintf(out, cap, "%s", env); /* "" turns the default off */
    return;
  }
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return;
  self[n] = 0;
  char *slash = strrchr(self, '/');
  if (slash) *slash = 0;
  static const char *const where[] = {"/models/operators-time.kcm",
                                      "/../lib/kcast/models/operators-time.kcm"};
  for (int k = 0; k < 2; k++) {
    char p[4200];
    snprintf(p, sizeof p, "%s%s", self, where[k]);
    if (access(p, R_OK) == 0) {
      snprintf(out, cap, "%s", p);
      return;
    }
  }
}

/* `kcast predict --op list`: the operators and their shape parameters. */
static int list_ops(int fmt) {
  if (fmt == CLI_FMT_JSON) {
    cJSON *root = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(root, "operators");
    for (size_t i = 0; i < opr_count(); i++) {
      const opr_info *o = opr_at(i);
      cJSON *x = cJSON_CreateObject();
      cJSON_AddStringToObject(x, "name", o->name);
      cJSON_AddNumberToObject(x, "class", o->cls);
      cJSON_AddStringToObject(x, "parameters", o->dims);
      cJSON_AddStringToObject(x, "what", o->what);
      cJSON_AddItemToArray(arr, x);
    }
    char *s = cJSON_Print(root);
    cJSON_Delete(root);
    if (!s) return KCAST_EXIT_USER;
    puts(s);
    cJSON_free(s);
    return KCAST_EXIT_OK;
  }
  if (fmt == CLI_FMT_CSV) puts("operator,class,parameters,what");
  else printf("%-8s %-5s %-40s %s\n", "operator", "class", "parameters", "what");
  for (size_t i = 0; i < opr_count(); i++) {
    const opr_info *o = opr_at(i);
    if (fmt == CLI_FMT_CSV) {
      printf("%s,%d,", o->name, o->cls);
      cli_csv_field(stdout, o->dims);
      putchar(',');
      cli_csv_field(stdout, o->what);
      putchar('\n');
    } else {
      printf("%-8s %-5d %-40s %s\n", o->name, o->cls, o->dims, o->what);
    }
  }
  if (fmt == CLI_FMT_TABLE)
    puts("(give each parameter as NAME=VALUE; optionally kernel=NAME, grid=X,Y,Z, block=X,Y,Z, "
         "kernels=N)");
  return KCAST_EXIT_OK;
}

/* One operator's rows on every GPU asked for, as table, CSV rows or a
   JSON object added to arr. */
/* The row of an operator launch's features v on GPU g: the analytic
   estimate, then the forest f (of model, trained on the GPUs mg) when
   there is one.  0, or -1 after its error line. */
static int op_row(const char *model, const rf_forest *f, const char *mg, const an_gpu *g,
                  const double *v, double coverage, char *label, pred_row *r) {
  feat_vec fv;
  feat_init(&fv);
  int bad = 0;
  for (size_t j = 0; j < OPR_NFEAT && !bad; j++) bad = feat_set(&fv, opr_feature_names[j], v[j]);
  if (bad) { feat_free(&fv); cli_error("out of memory"); return -1; }
  int rc = analytic_row(g, &fv, r);
  int unseen = mg && *mg && !an_gpu_in_list(mg, g->name);
  if (!rc && f) rc = forest_row(model, f, g->name, unseen, &fv, coverage, label, r);
  feat_free(&fv);
  return rc;
}

static void op_out(int fmt, const char *desc, const opr_launch *l, const char *assumed,
                   const double *v, const pred_row *r, size_t n, const opr_launch *per,
                   cJSON *arr) {
  char *dm = fe_demangle(l->kernel);
  const char *demangled = dm ? dm : l->kernel;
  if (fmt == CLI_FMT_JSON) {
    cJSON *o = cJSON_CreateObject(), *ga = cJSON_CreateArray(), *ba = cJSON_CreateArray();
    cJSON_AddStringToObject(o, "op", desc);
    cJSON_AddStringToObject(o, "kernel", l->kernel);
    cJSON_AddStringToObject(o, "demangled", demangled);
    for (int k = 0; k < 3; k++) {
      cJSON_AddItemToArray(ga, cJSON_CreateNumber(l->grid[k]));
      cJSON_AddItemToArray(ba, cJSON_CreateNumber(l->block[k]));
    }
    cJSON_AddItemToObject(o, "grid", ga);
    cJSON_AddItemToObject(o, "block", ba);
    cJSON_AddNumberToObject(o, "ctas", v[6]);
    cJSON_AddNullToObject(o, "ctas_emulated");
    cJSON_AddStringToObject(o, "assumed", assumed);
    cJSON *feats = cJSON_AddObjectToObject(o, "features");
    for (size_t k = 0; k < OPR_NFEAT; k++) cJSON_AddNumberToObject(feats, opr_feature_names[k], v[k]);
    cJSON *pa = cJSON_AddArrayToObject(o, "predictions");
    for (size_t i = 0; i < n; i++) {
      cJSON *x = cJSON_CreateObject();
      cJSON_AddStringToObject(x, "gpu", r[i].gpu);
      const char *keys[] = {"time_us", "time_lo_us", "time_hi_us", "power_w", "power_lo_w",
                            "power_hi_w", "energy_mj"};
      double w[] = {r[i].t, r[i].t_lo, r[i].t_hi, r[i].p, r[i].p_lo, r[i].p_hi, r[i].e};
      for (int k = 0; k < 7; k++)
        if (isnan(w[k])) cJSON_AddNullToObject(x, keys[k]);
        else cJSON_AddNumberToObject(x, keys[k], w[k]);
      cJSON_AddStringToObject(x, "time_model", r[i].t_model);
      cJSON_AddStringToObject(x, "power_model", r[i].p_model);
      cJSON_AddStringToObject(x, "bound", r[i].bound);
      if (r[i].outside) cJSON_AddStringToObject(x, "outside", r[i].outside);
      if (r[i].other_estimate) cJSON_AddTrueToObject(x, "other_estimate");
      if (per) { /* the kernel assumed on this GPU */
        cJSON *g2 = cJSON_CreateArray(), *b2 = cJSON_CreateArray();
        cJSON_AddStringToObject(x, "kernel", per[i].kernel);
        for (int k = 0; k < 3; k++) {
          cJSON_AddItemToArray(g2, cJSON_CreateNumber(per[i].grid[k]));
          cJSON_AddItemToArray(b2, cJSON_CreateNumber(per[i].block[k]));
        }
        cJSON_AddItemToObject(x, "grid", g2);
        cJSON_AddItemToObject(x, "block", b2);
      }
      cJSON_AddItemToArray(pa, x);
    }
    cJSON_AddItemToArray(arr, o);
  } else if (fmt == CLI_FMT_CSV) {
    for (size_t i = 0; i < n; i++) {
      double w[] = {r[i].t, r[i].t_lo, r[i].t_hi, r[i].p, r[i].p_lo, r[i].p_hi, r[i].e};
      const opr_launch *li = per ? &per[i] : l;
      cli_csv_field(stdout, desc);
      putchar(',');
      cli_csv_field(stdout, li->kernel);
      printf(",%u,%u,%u,%u,%u,%u,%s", li->grid[0], li->grid[1], li->grid[2], li->block[0],
             li->block[1], li->block[2], r[i].gpu);
      for (int k = 0; k < 7; k++) { putchar(','); num_out(stdout, w[k], "%.6g"); }
      printf(",%s,%s,%s\n", r[i].t_model, r[i].p_model, r[i].bound);
    }
  } else {
    if (per)
      printf("op %s\nkernel per GPU: the fastest predicted of cuBLAS's SGEMM tiles (assumed)\n",
             desc);
    else
      printf("op %s\nkernel %s\ngrid %u,%u,%u  block %u,%u,%u  (%.0f CTAs; %s)\n", desc,
             demangled, l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2],
             v[6], assumed[0] ? "assumed where not given" : "as given");
    printf("%-14s %10s %21s %8s %17s %11s  %-8s %s\n", "gpu", "time_us", "band_us", "power_w",
           "band_w", "energy_mj", "bound", "model (time / power)");
    for (size_t i = 0; i < n; i++) {
      char band_t[48] = "-", band_p[48] = "-", t[24] = "-", p[24] = "-", e[24] = "-";
      if (!isnan(r[i].t)) {
        snprintf(t, sizeof t, "%.4g", r[i].t);
        snprintf(band_t, sizeof band_t, "%.4g..%.4g", r[i].t_lo, r[i].t_hi);
      }
      if (!isnan(r[i].p)) {
        snprintf(p, sizeof p, "%.0f", r[i].p);
        snprintf(band_p, sizeof band_p, "%.0f..%.0f", r[i].p_lo, r[i].p_hi);
      }
      if (!isnan(r[i].e)) snprintf(e, sizeof e, "%.3g", r[i].e);
      printf("%-14s %10s %21s %8s %17s %11s  %-8s %s / %s", r[i].gpu, t, band_t, p, band_p, e,
             r[i].bound, r[i].t_model, r[i].p_model);
      if (per)
        printf("  %s grid %u,%u,%u block %u", per[i].kernel, per[i].grid[0], per[i].grid[1],
               per[i].grid[2], per[i].block[0]);
      putchar('\n');
    }
  }
  free(dm);
}

/* `kcast predict --op DESC...`: operator launches described by operator
   and shape (model/opr.h), on GPU gpu (NULL or all: every GPU the model
   answers for), by the forest of model (or the shipped operator model;
   "" none) and the analytic estimate. */
static int predict_ops(char **ops, size_t nops, const char *model, const char *gpu,
                       double coverage, int fmt) {
  if (nops == 1 && !strcmp(ops[0], "list")) return list_ops(fmt);
  int rc = KCAST_EXIT_USER;
  rf_forest *f = NULL;
  pred_row *rows = NULL;
  char *label = NULL;
  opr_launch *l = malloc(sizeof *l), *per = NULL;
  cJSON *root = NULL, *arr = NULL;
  char defmodel[4300];
  if (!l) { cli_error("out of memory"); return rc; }
  if (!model) {
    default_op_model(defmodel, sizeof defmodel);
    if (defmodel[0]) {
      model = defmodel;
      fprintf(stderr, "kcast: note: the operator model %s answers (--model to choose another)\n",
              model);
    } else {
      fprintf(stderr, "kcast: note: no operator model (make models trains it): the analytic "
              "estimate answers\n");
    }
  }
  const char *mg = NULL;
  if (model && *model) {
    if (cli_model_load(model, &f)) { cli_error("%s", rf_last_error()); goto out; }
    mg = rf_get_info(f)->gpu;
    size_t ll = strlen(model) + 8;
    if (!(label = malloc(ll))) { cli_error("out of memory"); goto out; }
    snprintf(label, ll, "forest:%s", model);
  }
  int all = !gpu || !strcasecmp(gpu, "all");
  int one_gpu_model = mg && *mg && !strchr(mg, ',');
  /* the GPUs answered for: --gpu's (a list too), else every GPU the model
     answers for */
  const an_gpu *gl[256];
  size_t ng = 0;
  if (!all) {
    if (cli_gpu_list(gpu, gl, 256, &ng)) goto out;
    for (size_t i = 0; i < ng; i++)
      if (one_gpu_model && !an_gpu_in_list(mg, gl[i]->name)) {
        cli_error("%s was trained on %s only, not on %s: it cannot predict for another GPU",
                  model, mg, gl[i]->name);
        goto out;
      }
  } else {
    for (size_t i = 0; i < an_gpu_count() && ng < 256; i++) {
      const an_gpu *gi = an_gpu_at(i);
      if (!one_gpu_model || an_gpu_in_list(mg, gi->name)) gl[ng++] = gi;
    }
  }
  if (f && mg && *mg && !one_gpu_model) {
    char unseen[1024] = "";
    size_t ul = 0;
    for (size_t i = 0; i < ng; i++)
      if (!an_gpu_in_list(mg, gl[i]->name) && ul + 40 < sizeof unseen)
        ul += (size_t)snprintf(unseen + ul, sizeof unseen - ul, "%s%s", ul ? ", " : "",
                               gl[i]->name);
    if (ul)
      fprintf(stderr, "kcast: note: %s was trained on %s; GPUs it has not seen: %s\n", model, mg,
              unseen);
  }
  rows = calloc(ng ? ng : 1, sizeof *rows);
  if (!rows) { cli_error("out of memory"); goto out; }
  if (fmt == CLI_FMT_JSON) {
    root = cJSON_CreateObject();
    arr = cJSON_AddArrayToObject(root, "operators");
  } else if (fmt == CLI_FMT_CSV) {
    puts("op,kernel,grid_x,grid_y,grid_z,block_x,block_y,block_z,gpu,time_us,time_lo_us,"
         "time_hi_us,power_w,power_lo_w,power_hi_w,energy_mj,time_model,power_model,bound");
  }
  for (size_t k = 0; k < nops; k++) {
    char assumed[600];
    double v[OPR_NFEAT];
    if (opr_parse(ops[k], l)) {
      cli_error("--op '%s': %s", ops[k], rf_last_error());
      goto out;
    }
    /* a GEMM without its kernel: on each GPU the candidate tile predicted
       fastest, as cuBLAS's heuristics choose (model/opr.h) */
    opr_launch cand[OPR_GEMM_CANDIDATES];
    size_t nc = opr_gemm_candidates(l, cand, OPR_GEMM_CANDIDATES);
    if (opr_complete(l, assumed, sizeof assumed) || opr_features(l, v)) {
      cli_error("--op '%s': %s", ops[k], rf_last_error());
      goto out;
    }
    /* the note: what opr_complete assumed (the operator's features, as
       kcast_features_from_op gives them), or each GPU's kernel */
    char pergpu[600];
    const char *note = assumed;
    if (nc) {
      if (!per) per = malloc((ng ? ng : 1) * sizeof *per);
      if (!per) { cli_error("out of memory"); goto out; }
      size_t al = (size_t)snprintf(pergpu, sizeof pergpu,
                                   "on each GPU the kernel predicted fastest of cuBLAS's %zu SGEMM "
                                   "tiles:", nc);
      note = pergpu;
      for (size_t i = 0; i < ng; i++) {
        int have = 0;
        for (size_t c = 0; c < nc; c++) {
          double cv[OPR_NFEAT];
          pred_row cr;
          if (opr_features(&cand[c], cv) || op_row(model, f, mg, gl[i], cv, coverage, label, &cr))
            goto out;
          if (!have || cr.t < rows[i].t) {
            rows[i] = cr;
            per[i] = cand[c];
            have = 1;
          }
        }
        if (al + 80 < sizeof pergpu)
          al += (size_t)snprintf(pergpu + al, sizeof pergpu - al, "%s %s %s", i ? "," : "",
                                 gl[i]->name, per[i].kernel);
      }
    } else {
      for (size_t i = 0; i < ng; i++)
        if (op_row(model, f, mg, gl[i], v, coverage, label, &rows[i])) goto out;
    }
    if (note[0]) fprintf(stderr, "kcast: note: %s: assumed %s\n", ops[k], note);
    outside_note(ops[k], rows, ng);
    /* tensors larger than a GPU's memory: no such launch runs there */
    {
      char big[1024] = "";
      size_t bl = 0;
      double bytes = 0; /* opr.bytes: the tensors read and written */
      for (size_t j = 0; j < OPR_NFEAT; j++)
        if (!strcmp(opr_feature_names[j], "opr.bytes")) bytes = v[j];
      for (size_t i = 0; i < ng; i++)
        if (gl[i]->mem_gb > 0 && bytes > gl[i]->mem_gb * 1e9 && bl + 40 < sizeof big)
          bl += (size_t)snprintf(big + bl, sizeof big - bl, "%s%s (%.0f GB)", bl ? ", " : "",
                                 gl[i]->name, gl[i]->mem_gb);
      if (bl)
        fprintf(stderr, "kcast: note: %s: its tensors take %.3g GB, more than the memory of %s: "
                "no such launch runs there, the answer is an extrapolation\n", ops[k],
                bytes / 1e9, big);
    }
    if (k && fmt == CLI_FMT_TABLE) putchar('\n');
    op_out(fmt, ops[k], l, assumed, v, rows, ng, nc ? per : NULL, arr);
  }
  if (root) {
    char *s = cJSON_Print(root);
    if (!s) { cli_error("out of memory writing output"); goto out; }
    puts(s);
    cJSON_free(s);
  }
  rc = KCAST_EXIT_OK;
out:
  cJSON_Delete(root);
  free(rows);
  free(per);
  free(label);
  free(l);
  rf_free(f);
  return rc;
}

/* ---------------------------------------------------- feature-model mode -- */

/* A launch of a feature model's kernel: the model's features instead of an
   emulation, then the rows of the kernel mode.  L holds the launch options
   (--grid, --block, --shared, --arg); each --arg is the next parameter, a
   number, or anything else (buf:4M) for a pointer, which the model does
   not read. */
static int predict_featmodel(cli_launch *L, const char *fmpath, const char *model,
                             const char *gpu, double coverage, int fmt) {
  int rc = KCAST_EXIT_USAGE;
  fm_model *fm = NULL;
  rf_forest *f = NULL;
  pred_row *rows = NULL;
  char *label = NULL;
  double *args = NULL, *vals = NULL;
  feat_vec feats;
  feat_init(&feats);
  if (L->path) {
    cli_usage_error("predict", "--featmodel takes no input FILE ('%s')", L->path);
    goto out;
  }
  if (!L->have_grid || !L->have_block) {
    cli_usage_error("predict", "--featmodel needs --grid X[,Y,Z] and --block X[,Y,Z]");
    goto out;
  }
  if ((uint64_t)L->cfg.block[0] * L->cfg.block[1] * L->cfg.block[2] > 1024) {
    cli_usage_error("predict", "--block %ux%ux%u has more than 1024 threads", L->cfg.block[0],
                    L->cfg.block[1], L->cfg.block[2]);
    goto out;
  }
  if (!model && !gpu) { cli_usage_error("predict", "give --gpu G|all or --model MODEL"); goto out; }
  rc = KCAST_EXIT_USER;
  size_t nargs = L->nargs;
  args = calloc(nargs + 1, sizeof *args);
  if (!args) { cli_error("out of memory"); goto out; }
  for (size_t i = 0; i < nargs; i++) {
    char *e;
    const char *t = L->args[i].text;
    double v = L->args[i].is_buf ? NAN : strtod(t, &e);
    args[i] = (L->args[i].is_buf || *e || e == t || !isfinite(v)) ? NAN : v;
  }
  if (fm_load(fmpath, &fm)) { cli_error("%s", rf_last_error()); goto out; }
  fm_info fi;
  fm_get_info(fm, &fi);
  for (size_t a = 0; a < fi.nargs; a++) {
    uint32_t p = fi.arg_param[a];
    if (p >= nargs || isnan(args[p])) {
      cli_error("%s: kernel %s reads parameter %u: give it as a number (--arg number %u%s)",
                fmpath, fi.kernel, p, p + 1,
                p >= nargs ? "; each --arg is the next parameter" : ", not a buffer");
      goto out;
    }
  }
  vals = malloc((fm_nout(fm) + 1) * sizeof *vals);
  if (!vals) { cli_error("out of memory"); goto out; }
  /* a template's model: the instance (--kernel) gives its variables */
  double targs[FM_MAX_TPL];
  size_t ntargs = 0;
  if (fi.ntpl) {
    char why[512];
    int tm = L->kernel ? fe_template_args(L->kernel, fi.kernel, targs, FM_MAX_TPL, &ntargs, why,
                                          sizeof why)
                       : 0;
    if (tm < 0 || (tm == 1 && ntargs != fi.ntpl)) {
      cli_error("%s: --kernel '%s': %s", fmpath, L->kernel,
                tm < 0 ? why : "another number of template arguments than the template's");
      goto out;
    }
    if (tm == 0) {
      char src[1024];
      fe_demangled_name(fi.kernel, src, sizeof src);
      cli_error("%s: the model is of the template %s: give --kernel with the instance "
                "(its mangled name, or %s with numbers)%s%s%s", fmpath, src, src,
                L->kernel ? "; '" : "", L->kernel ? L->kernel : "",
                L->kernel ? "' is none of its instances" : "");
      goto out;
    }
  } else if (L->kernel && strcmp(L->kernel, fi.kernel) && !fe_name_match(fi.kernel, L->kernel)) {
    cli_error("%s: the model is of kernel %s, not '%s'", fmpath, fi.kernel, L->kernel);
    goto out;
  }
  fm_launch l = {{L->cfg.grid[0], L->cfg.grid[1], L->cfg.grid[2]},
                 {L->cfg.block[0], L->cfg.block[1], L->cfg.block[2]},
                 L->cfg.shared_bytes, args, nargs, targs, ntargs};
  unsigned flags = 0;
  if (fm_eval(fm, &l, vals, &flags)) { cli_error("%s: %s", fmpath, rf_last_error()); goto out; }
  for (size_t i = 0; i < fm_nout(fm); i++)
    if (feat_set(&feats, fm_out_name(fm, i), vals[i])) { cli_error("out of memory"); goto out; }
  if (flags & FM_EXTRAPOLATED)
    fprintf(stderr, "kcast: note: %s: the launch lies outside the sizes the model was fitted on "
            "(extrapolated)\n", fmpath);
  if (flags & FM_UNRELIABLE) {
    if (isnan(fi.heldout_error))
      fprintf(stderr, "kcast: warning: %s: the model's error could not be measured (fewer than "
              "3 sizes): its features are unreliable; emulate the launch (kcast predict FILE)\n",
              fmpath);
    else
      fprintf(stderr, "kcast: warning: %s: held-out error %.1f %% is above %.1f %%: the kernel's "
              "work does not follow from the launch; emulate it (kcast predict FILE)\n", fmpath,
              100 * fi.heldout_error, 100 * fi.limit);
  }
  int all = gpu && !strcasecmp(gpu, "all");
  if (all && model) { rc = cli_usage_error("predict", "--gpu all goes without --model"); goto out; }
  if (model) {
    if (cli_model_load(model, &f)) { cli_error("%s", rf_last_error()); goto out; }
    size_t ll = strlen(model) + 8;
    if (!(label = malloc(ll))) { cli_error("out of memory"); goto out; }
    snprintf(label, ll, "forest:%s", model);
  }
  gpu_target tg[MAX_TARGETS];
  size_t nt = 0, nrows = 0;
  if (gpu_targets(gpu, model, f, tg, &nt)) goto out;
  if (!(rows = calloc(nt + 1, sizeof *rows))) { cli_error("out of memory"); goto out; }
  for (size_t i = 0; i < nt; i++) {
    const an_gpu *gi = tg[i].g;
    pred_row *r = &rows[nrows++];
    if (gi) {
      if (analytic_row(gi, &feats, r)) goto out;
    } else {
      const char *mg = rf_get_info(f)->gpu;
      r->gpu = mg && *mg ? mg : "?";
      r->t = r->t_lo = r->t_hi = r->p = r->p_lo = r->p_hi = r->e = NAN;
      r->t_model = r->p_model = "-";
      r->bound = "";
    }
    if (f && forest_row(model, f, tg[i].name, tg[i].unseen, &feats, coverage, label, r)) goto out;
  }
  double ctas = (double)L->cfg.grid[0] * L->cfg.grid[1] * L->cfg.grid[2];
  /* a template's rows name the instance asked for */
  const char *kname = fi.ntpl && L->kernel ? L->kernel : fi.kernel;
  outside_note(kname, rows, nrows);
  if (rows_out(fmt, kname, L->cfg.grid, L->cfg.block, ctas, NAN, NAN, rows, nrows)) {
    cli_error("out of memory writing output");
    goto out;
  }
  rc = KCAST_EXIT_OK;
out:
  free(rows);
  free(label);
  free(args);
  free(vals);
  rf_free(f);
  fm_free(fm);
  feat_free(&feats);
  cli_launch_free(L);
  return rc;
}

/* ------------------------------------------------------- key columns -- */

/* --id COL,...: the CSV's columns passed through beside each prediction
   (loaded as text, rf_csv_opts.text), so a row can be joined to its input. */
typedef struct id_cols {
  size_t n;
  long col[64];       /* text columns of the loaded data */
} id_cols;

static int in_list(const char *list, const char *name) {
  for (const char *t = list; t && *t;) {
    const char *e = strchr(t, ',');
    size_t l = e ? (size_t)(e - t) : strlen(t);
    char pat[256];
    if (l < sizeof pat) {
      memcpy(pat, t, l);
      pat[l] = 0;
      if (!fnmatch(pat, name, 0)) return 1;
    }
    if (!e) break;
    t = e + 1;
  }
  return 0;
}

/* The text columns of d that ids names, in file order. */
static void ids_find(id_cols *ic, const rf_data *d, const char *ids) {
  ic->n = 0;
  for (size_t k = 0; ids && k < d->n_text && ic->n < 64; k++)
    if (in_list(ids, d->text_names[k])) ic->col[ic->n++] = (long)k;
}

/* One CSV cell and its comma. */
static void csv_cell(const char *v) {
  cli_csv_field(stdout, v);
  putchar(',');
}

static void ids_csv_head(const id_cols *ic, const rf_data *d) {
  for (size_t k = 0; k < ic->n; k++) csv_cell(d->text_names[ic->col[k]]);
}

static void ids_csv_row(const id_cols *ic, const rf_data *d, size_t i) {
  for (size_t k = 0; k < ic->n; k++)
    csv_cell(d->text[ic->col[k]][i] ? d->text[ic->col[k]][i] : "");
}

static void ids_table(const id_cols *ic, const rf_data *d, size_t i) {
  for (size_t k = 0; k < ic->n; k++)
    printf(" %-12s", i == (size_t)-1 ? d->text_names[ic->col[k]]
                                     : (d->text[ic->col[k]][i] ? d->text[ic->col[k]][i] : ""));
}

static int ids_json(const id_cols *ic, const rf_data *d, size_t i, cJSON *r) {
  for (size_t k = 0; k < ic->n; k++) {
    const char *v = d->text[ic->col[k]][i];
    if (!cJSON_AddStringToObject(r, d->text_names[ic->col[k]], v ? v : "")) return -1;
  }
  return 0;
}

/* ------------------------------------------------------ features mode -- */

/* The first record of a CSV file, read with the loader's CSV reader. */
typedef struct csv_head {
  char **names;   /* n column names, owned */
  size_t n, cap;
  int done;       /* the first record has ended: later fields are ignored */
  int failed;     /* out of memory */
} csv_head;

static void head_field(void *s, size_t len, void *ctx) {
  csv_head *h = ctx;
  if (h->done || h->failed) return;
  if (h->n == h->cap) {
    size_t nc = h->cap ? h->cap * 2 : 64;
    char **t = realloc(h->names, nc * sizeof *t);
    if (!t) { h->failed = 1; return; }
    h->names = t;
    h->cap = nc;
  }
  char *name = malloc(len + 1);
  if (!name) { h->failed = 1; return; }
  memcpy(name, s, len);
  name[len] = 0;
  h->names[h->n++] = name;
}

static void head_end(int c, void *ctx) {
  (void)c;
  ((csv_head *)ctx)->done = 1;
}

static void head_free(csv_head *h) {
  for (size_t i = 0; i < h->n; i++) free(h->names[i]);
  free(h->names);
  memset(h, 0, sizeof *h);
}

/* Read path's header into h; -1 when the file cannot be read (the loader
   then reports why). */
static int head_read(const char *path, csv_head *h) {
  memset(h, 0, sizeof *h);
  FILE *fp = fopen(path, "rb");
  if (!fp) return -1;
  struct csv_parser p;
  if (csv_init(&p, CSV_APPEND_NULL)) { fclose(fp); return -1; }
  char buf[8192];
  size_t n;
  int bad = 0;
  while (!h->done && !h->failed && !bad && (n = fread(buf, 1, sizeof buf, fp)) > 0)
    bad = csv_parse(&p, buf, n, head_field, head_end, h) != n;
  if (!h->done && !h->failed && !bad && !ferror(fp)) csv_fini(&p, head_field, head_end, h);
  csv_free(&p);
  fclose(fp);
  if (h->failed || bad || !h->n) { head_free(h); return -1; }
  return 0;
}

/* Is name one of the derived columns of model/derived.c (mg.*, an.*,
   work.*, occ.*, gpu.*)? */
static int is_derived(const char *name) { return md_family_of(name) >= 0; }

/* A raw feature column the derived ones are computed from (the families
   of docs/features.md; model/derived.c reads no other).  opr.*, an
   operator launch's work, is what its estimate reads (analytic_op.c):
   without it an exported operator dataset's rows were estimated as empty
   launches, 2 us each, and nothing said so. */
static int is_raw(const char *name) {
  static const char *const fam[] = {"launch.", "op.", "opr.", "class.", "mem.", "ctrl.",
                                     "static.", "ptxas.", "tensor."};
  for (size_t k = 0; k < sizeof fam / sizeof *fam; k++)
    if (!strncmp(name, fam[k], strlen(fam[k]))) return 1;
  return 0;
}

static int in_names(const char *const *v, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (!strcmp(v[i], name)) return 1;
  return 0;
}

/*
 * The columns of csv to load for the model: each of its features, but a
 * derived one (mg.*, an.*) only when the header has it; when some derived
 * feature is absent, also every raw column of the header, to compute it
 * from.  *keep (owned, strings borrowed from info and h) has *n_keep names;
 * *derive says whether some feature is to be computed.  -1 when out of
 * memory.
 */
static int load_list(const rf_info *info, const csv_head *h, const char ***keep, size_t *n_keep,
                     int *derive) {
  const char **k = malloc((info->n_features + h->n + 1) * sizeof *k);
  if (!k) return -1;
  size_t n = 0;
  *derive = 0;
  for (size_t j = 0; j < info->n_features; j++) {
    const char *f = info->features[j];
    if (is_derived(f) && !in_names((const char *const *)h->names, h->n, f)) *derive = 1;
    else k[n++] = f;
  }
  for (size_t i = 0; *derive && i < h->n; i++)
    if (is_raw(h->names[i]) && !in_names(k, n, h->names[i])) k[n++] = h->names[i];
  *keep = k;
  *n_keep = n;
  return 0;
}

/*
 * The model's matrix from the loaded columns of src: a column src has is
 * taken as given; a derived one it lacks is computed per row from the
 * row's raw columns with model/derived.c (an.* on the model's GPU), as
 * libkcast's kcast_predict does.  -1 after printing one error line naming
 * the file, the line and the derived column.
 */
static int derive_rows(const char *path, const rf_info *info, const char *gpu, const rf_data *src,
                       rf_data *m) {
  size_t n = src->n_rows, p = src->n_cols;
  long *at = malloc((info->n_features + 1) * sizeof *at);
  double *row = malloc((p + 1) * sizeof *row);
  if (!at || !row || rf_data_alloc(m, n, info->n_features, 0)) {
    free(at);
    free(row);
    cli_error("out of memory");
    return -1;
  }
  for (size_t j = 0; j < info->n_features; j++) {
    at[j] = -1;
    for (size_t c = 0; c < p && at[j] < 0; c++)
      if (!strcmp(src->names[c], info->features[j])) at[j] = (long)c;
  }
  int rc = 0;
  /* an empty cell (NaN: rf_csv_opts.empty_missing) is a feature the row
     lacks: an error in a column the model reads, left out of what the
     derived features are computed from (as libkcast's set would lack it) */
  const char **nm = malloc((p + 1) * sizeof *nm);
  double *rv = malloc((p + 1) * sizeof *rv);
  if (!nm || !rv) { cli_error("out of memory"); rc = -1; }
  for (size_t i = 0; i < n && !rc; i++) {
    size_t q = 0;
    for (size_t c = 0; c < p; c++) {
      row[c] = src->x[c * n + i];
      if (isnan(row[c])) continue;
      nm[q] = src->names[c];
      rv[q++] = row[c];
    }
    md_cache dc = {0};
    for (size_t j = 0; j < info->n_features && !rc; j++) {
      double *v = &m->x[j * n + i];
      if (at[j] >= 0) {
        *v = row[at[j]];
        if (isnan(*v)) {
          cli_error("%s:%zu: column %s: '' is not a number (the model reads it)", path, i + 2,
                    info->features[j]);
          rc = -1;
        }
        continue;
      }
      if (md_value(&dc, info->features[j], gpu, nm, rv, q, v) != 1) {
        /* line i + 2: the header is line 1, as in the loader's messages */
        cli_error("%s:%zu: cannot derive %s: %s", path, i + 2, info->features[j],
                  rf_last_error());
        rc = -1;
      }
    }
  }
  free(nm);
  free(rv);
  free(at);
  free(row);
  if (rc) rf_data_free(m);
  return rc;
}

/* ------------------------------------------------ measured summaries -- */

/*
 * The factor that brings --measured COLUMN's values into the predictions'
 * unit pu (NULL: the model's target names none, nothing to convert), and
 * the check that COLUMN measures what is predicted where it is predicted:
 * its unit is --measured-unit (given), else the one its name spells
 * (time_ns@T4: ns), else taken to be deflt, said in a note; a unit of
 * another quantity (W against ns) is an error, and so is a METRIC@GPU
 * column of a GPU other than one predicted for (gpus[0..ng), NULL entries
 * skipped).  -1 after printing the error.
 */
static int measured_scale(const char *csv, const char *col, const char *given, const char *pu,
                          const char *deflt, const char *const *gpus, size_t ng, double *scale) {
  *scale = 1;
  const char *mg = rf_column_gpu(col);
  for (size_t k = 0; mg && k < ng; k++) {
    if (!gpus[k] || !strcasecmp(gpus[k], mg) || an_gpu_in_list(gpus[k], mg)) continue;
    cli_error("%s: --measured %s was measured on %s, but the predictions are for %s: the "
              "figures would compare two GPUs (--measured METRIC@%s, or --gpu %s)", csv, col, mg,
              gpus[k], gpus[k], mg);
    return -1;
  }
  if (!pu) return 0;
  /* a unit spelled in a part after the first (a bare "time" spells none) */
  const char *named = strpbrk(col, "_@.-") ? rf_target_unit(col) : NULL;
  const char *mu = given ? given : named;
  double same;
  if (given && named && (rf_unit_factor(given, named, &same) || same != 1)) {
    cli_error("%s: --measured-unit %s contradicts the name of --measured %s, which says %s",
              csv, given, col, named);
    return -1;
  }
  if (!mu) {
    mu = deflt;
    fprintf(stderr, "kcast: note: %s: the name of --measured %s spells no unit: its values are "
            "taken to be in %s (--measured-unit U says otherwise)\n", csv, col, mu);
  }
  if (rf_unit_factor(mu, pu, scale)) {
    cli_error("%s: --measured %s holds values in %s, but the predictions are in %s: they "
              "measure different things", csv, col, mu, pu);
    return -1;
  }
  return 0;
}

/* One summary line of rows sel[0..k) (all rows when sel is NULL). */
static int measured_line(const char *csv, const char *col, const char *group, const double *y,
                         double scale, const double *pred, const double *lo, const double *hi,
                         const size_t *sel, size_t k, double *buf) {
  double *ys = buf, *ps = buf + k, *ls = buf + 2 * k, *hs = buf + 3 * k;
  size_t in2 = 0;
  for (size_t t = 0; t < k; t++) {
    size_t i = sel ? sel[t] : t;
    ys[t] = y[i] * scale;
    ps[t] = pred[i];
    ls[t] = lo ? lo[i] : NAN;
    hs[t] = hi ? hi[i] : NAN;
    in2 += ys[t] > 0 && ps[t] / ys[t] >= 0.5 && ps[t] / ys[t] <= 2;
  }
  rf_metrics m;
  if (rf_metrics_compute(ys, ps, lo ? ls : NULL, hi ? hs : NULL, k, &m)) {
    cli_error("%s", rf_last_error());
    return -1;
  }
  fprintf(stderr, "kcast: %s: against %s%s%s (%zu rows): MAPE %.2f %%, median APE %.2f %%, "
          "Spearman %.4f, Kendall %.4f, top-1 regret %.3fx, top-5 regret %.3fx, within 2x "
          "%.3f, coverage %.3f\n", csv, col, group ? ", " : "", group ? group : "", k, m.mape,
          m.median_ape, m.spearman, m.kendall, m.top1_regret, m.top5_regret,
          (double)in2 / (double)(k ? k : 1), m.coverage);
  return 0;
}

static int cmp_label(const void *a, const void *b) {
  const char *const *x = a, *const *y = b;
  return strcmp(*x ? *x : "", *y ? *y : "");
}

/*
 * --measured COLUMN: the predictions against the file's measured values
 * (scaled by scale to the predictions' unit), one summary line on stderr:
 * MAPE, median APE, Spearman's rho, Kendall's tau, the top-1 and top-5
 * regret (the measured value of the row predicted lowest, and the lowest
 * measured of the five predicted lowest, over the lowest measured), the
 * share within a factor of 2 and the interval coverage; then one such line
 * per group when groups (a label per row: the row's GPU, --group's column)
 * hold more than one.  Rows whose measured value is 0 count in the rank
 * figures only.
 */
static int measured_summary(const char *csv, const char *col, const double *y, double scale,
                            const double *pred, const double *lo, const double *hi, size_t n,
                            char *const *groups, const char *group_name) {
  double *buf = malloc((4 * n + 1) * sizeof *buf);
  size_t *sel = malloc((n + 1) * sizeof *sel);
  const char **lab = malloc((n + 1) * sizeof *lab);
  int rc = -1;
  if (!buf || !sel || !lab) { cli_error("out of memory"); goto out; }
  if (measured_line(csv, col, NULL, y, scale, pred, lo, hi, NULL, n, buf)) goto out;
  if (groups && n) {
    for (size_t i = 0; i < n; i++) lab[i] = groups[i];
    qsort(lab, n, sizeof *lab, cmp_label);
    if (strcmp(lab[0] ? lab[0] : "", lab[n - 1] ? lab[n - 1] : "")) {
      for (size_t a = 0; a < n;) {
        size_t b = a + 1;
        while (b < n && !cmp_label(&lab[a], &lab[b])) b++;
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
          if (!cmp_label(&groups[i], &lab[a])) sel[k++] = i;
        char g[300];
        snprintf(g, sizeof g, "%s %s", group_name, lab[a] ? lab[a] : "");
        if (measured_line(csv, col, g, y, scale, pred, lo, hi, sel, k, buf)) goto out;
        a = b;
      }
    }
  }
  rc = 0;
out:
  free(buf);
  free(sel);
  free(lab);
  return rc;
}

/* ------------------------------------------------- analytic on a CSV -- */

/*
 * `kcast predict --gpu G --features CSV` (or --gpu-column COL): the analytic
 * estimate of every row (its launch.*, op.*, class.*, mem.*, ctrl.*,
 * static.* and ptxas.* columns) on G or on the row's GPU, one output row
 * per input row: time (us) with its band, power (W) with its band, energy
 * (mJ) and the bound.  Text columns are ignored.
 */
static int predict_csv_analytic(const char *csv, const char *gpu, const char *gpu_column,
                                const char *ids, const char *measured, const char *group_col,
                                const char *munit, int fmt) {
  if (gpu && gpu_column) return cli_usage_error("predict", "give --gpu or --gpu-column, not both");
  const an_gpu *gl[MAX_TARGETS];
  size_t ng = 1;
  gl[0] = NULL;
  if (gpu && cli_gpu_list(gpu, gl, MAX_TARGETS, &ng)) return KCAST_EXIT_USER;
  char text[1024];
  snprintf(text, sizeof text, "%s%s%s%s%s", gpu_column ? gpu_column : "",
           gpu_column && ids ? "," : "", ids ? ids : "", (gpu_column || ids) && group_col ? "," : "",
           group_col ? group_col : "");
  /* only the columns the estimate reads (a measurement column with empty
     cells, an id or a tuning parameter is none of its business) */
  csv_head h;
  const char **keep = NULL;
  size_t n_keep = 0;
  int have_head = head_read(csv, &h) == 0;
  if (have_head) {
    keep = malloc((h.n + 1) * sizeof *keep);
    if (!keep) { head_free(&h); cli_error("out of memory"); return KCAST_EXIT_USER; }
    for (size_t j = 0; j < h.n; j++)
      if (is_raw(h.names[j]) && !(measured && !strcmp(h.names[j], measured)) &&
          !in_names(keep, n_keep, h.names[j]))
        keep[n_keep++] = h.names[j];
  }
  /* with --measured on one GPU, the file's gpu column (each row's GPU, where
     its measured value comes from) is read to check it */
  int check_gpu = measured && gpu && ng == 1 && !gpu_column && have_head &&
                  in_names((const char *const *)h.names, h.n, "gpu") &&
                  !(ids && strstr(ids, "gpu")) && !(group_col && !strcmp(group_col, "gpu"));
  if (check_gpu) {
    size_t tl = strlen(text);
    snprintf(text + tl, sizeof text - tl, "%sgpu", tl ? "," : "");
  }
  rf_csv_opts o = {.size = sizeof o, .no_target = !measured, .target = measured,
                   .text = text[0] ? text : NULL, .text_auto = 1,
                   .keep = n_keep ? keep : NULL, .n_keep = n_keep,
                   .empty_value = ds_feature_default};
  rf_data d;
  int lrc = rf_data_load_csv(&d, csv, &o);
  free(keep);
  if (have_head) head_free(&h);
  if (lrc) {
    cli_error("%s", rf_last_error());
    return KCAST_EXIT_USER;
  }
  id_cols ic;
  ids_find(&ic, &d, ids);
  long gc = gpu_column ? rf_data_text_col(&d, gpu_column) : -1;
  long group = group_col ? rf_data_text_col(&d, group_col) : -1;
  /* the measured values in the estimate's unit (us), of the GPUs estimated */
  double mscale = 1;
  if (measured) {
    const char *names[MAX_TARGETS];
    for (size_t k = 0; k < ng && gl[k]; k++) names[k] = gl[k]->name;
    int mrc = gc >= 0 ? measured_scale(csv, measured, munit, "us", "us",
                                       (const char *const *)d.text[gc], d.n_rows, &mscale)
                      : measured_scale(csv, measured, munit, "us", "us", names, gl[0] ? ng : 0,
                                       &mscale);
    if (mrc) {
      rf_data_free(&d);
      return KCAST_EXIT_USER;
    }
  }
  long fgc = check_gpu ? rf_data_text_col(&d, "gpu") : -1;
  for (size_t i = 0; fgc >= 0 && i < d.n_rows; i++) {
    const char *g = d.text[fgc][i];
    if (!g || !*g || an_gpu_find(g) == gl[0] || !strcasecmp(g, gl[0]->name)) continue;
    cli_error("%s: row %zu: column gpu says '%s', but the estimates are for %s: --measured %s "
              "would compare two GPUs (--gpu-column gpu estimates each row on its own GPU)",
              csv, i + 1, g, gl[0]->name, measured);
    rf_data_free(&d);
    return KCAST_EXIT_USER;
  }
  double *row = malloc((d.n_cols + 1) * sizeof *row);
  /* rows x GPUs estimates, for --measured (each row against each GPU's) */
  size_t nout = d.n_rows * ng;
  double *tp = malloc((nout + 1) * 3 * sizeof *tp), *ym = malloc((nout + 1) * sizeof *ym);
  int rc = KCAST_EXIT_USER;
  if (!row || !tp || !ym) { cli_error("out of memory"); goto out; }
  if (fmt == CLI_FMT_CSV) {
    ids_csv_head(&ic, &d);
    puts("gpu,time_us,time_lo_us,time_hi_us,power_w,power_lo_w,power_hi_w,energy_mj,bound");
  } else if (fmt == CLI_FMT_TABLE) {
    printf("%6s", "row");
    ids_table(&ic, &d, (size_t)-1);
    printf(" %-10s %12s %12s %12s %8s %8s %8s %11s %s\n", "gpu", "time_us", "lo", "hi",
           "power_w", "lo", "hi", "energy_mj", "bound");
  }
  cJSON *root = fmt == CLI_FMT_JSON ? cJSON_CreateObject() : NULL;
  cJSON *arr = root ? cJSON_AddArrayToObject(root, "predictions") : NULL;
  if (fmt == CLI_FMT_JSON && !arr) { cJSON_Delete(root); cli_error("out of memory"); goto out; }
  size_t at = 0;
  for (size_t i = 0; i < d.n_rows; i++)
  for (size_t gk = 0; gk < ng; gk++, at++) {
    const an_gpu *gi = gl[gk];
    if (gc >= 0 && !(gi = an_gpu_find(d.text[gc][i]))) {
      char where[4200];
      snprintf(where, sizeof where, "%s:%zu: column %s", csv, i + 2, gpu_column);
      cli_unknown_gpu(where, d.text[gc][i], 0);
      cJSON_Delete(root);
      goto out;
    }
    for (size_t j = 0; j < d.n_cols; j++) row[j] = d.x[j * d.n_rows + i];
    an_estimate e;
    if (an_estimate_launch(gi, (const char *const *)d.names, row, d.n_cols, &e)) {
      cli_error("%s:%zu: %s", csv, i + 2, rf_last_error());
      cJSON_Delete(root);
      goto out;
    }
    double v[7] = {e.time_us, e.time_lo_us, e.time_hi_us, e.power_w, e.power_lo_w, e.power_hi_w,
                   e.energy_mj};
    tp[at] = e.time_us, tp[nout + at] = e.time_lo_us, tp[2 * nout + at] = e.time_hi_us;
    ym[at] = measured ? d.y[i] : 0;
    if (fmt == CLI_FMT_CSV) {
      ids_csv_row(&ic, &d, i);
      printf("%s", gi->name);
      for (int k = 0; k < 7; k++) printf(",%.9g", v[k]);
      printf(",%s\n", e.bound);
    } else if (fmt == CLI_FMT_TABLE) {
      char nb[7][64];
      for (int k = 0; k < 7; k++) cli_num(nb[k], sizeof nb[k], v[k], k >= 3 && k < 6 ? 4 : 6);
      printf("%6zu", i + 1);
      ids_table(&ic, &d, i);
      printf(" %-10s %12s %12s %12s %8s %8s %8s %11s %s\n", gi->name, nb[0], nb[1], nb[2],
             nb[3], nb[4], nb[5], nb[6], e.bound);
    } else {
      cJSON *r = cJSON_CreateObject();
      static const char *const keys[7] = {"time_us", "time_lo_us", "time_hi_us", "power_w",
                                          "power_lo_w", "power_hi_w", "energy_mj"};
      int ok = r && cJSON_AddItemToArray(arr, r) && !ids_json(&ic, &d, i, r) &&
               cJSON_AddStringToObject(r, "gpu", gi->name);
      for (int k = 0; ok && k < 7; k++) ok = cJSON_AddNumberToObject(r, keys[k], v[k]) != NULL;
      if (!ok || !cJSON_AddStringToObject(r, "bound", e.bound)) {
        cJSON_Delete(root);
        cli_error("out of memory");
        goto out;
      }
    }
  }
  if (root) {
    char *txt = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    if (!txt) { cli_error("out of memory"); goto out; }
    puts(txt);
    free(txt);
  }
  /* the analytic time is in us; mscale brings the measured values there */
  if (measured) {
    /* each row's group: --group's column, else its GPU's (--gpu-column, or
       the GPU of the list it was estimated on) */
    char **gr = (group >= 0 || gc >= 0 || ng > 1) ? malloc((nout + 1) * sizeof *gr) : NULL;
    for (size_t i = 0; gr && i < d.n_rows; i++)
      for (size_t gk = 0; gk < ng; gk++)
        gr[i * ng + gk] = group >= 0 ? d.text[group][i] : gc >= 0 ? d.text[gc][i]
                                                                  : (char *)gl[gk]->name;
    int mrc = measured_summary(csv, measured, ym, mscale, tp, tp + nout, tp + 2 * nout,
                               nout, gr, group >= 0 ? group_col : gc >= 0 ? gpu_column
                                                  : gr ? "gpu" : NULL);
    free(gr);
    if (mrc) goto out;
  }
  rc = KCAST_EXIT_OK;
out:
  free(row);
  free(tp);
  free(ym);
  rf_data_free(&d);
  return rc;
}

/* ----------------------------------------------------------- command -- */

/* A usage error (printed) before the launch ran. */
static int usage_fail(cli_launch *L) {
  cli_launch_free(L);
  return KCAST_EXIT_USAGE;
}

int cmd_predict(int argc, char **argv) {
  const char *model = NULL, *csv = NULL, *gpu = NULL, *gpu_column = NULL, *measured = NULL;
  const char *featmodel = NULL;
  const char *munit = NULL;
  double coverage = 0.9;
  int fmt = CLI_FMT_CSV, have_fmt = 0, kernel_mode = 0;
  /* predict's own options, and the launch options of the kernel mode (an
     input FILE), which cli_launch.c parses */
  enum { P_MODEL = CLI_OPT_OWN, P_FEATURES, P_GPU, P_GPU_COLUMN, P_MEASURED, P_MEASURED_UNIT,
         P_COVERAGE, P_FORMAT, P_FEATMODEL, P_ID, P_GROUP, P_OP };
  static const struct option own[] = {
    {"model", required_argument, NULL, P_MODEL},
    {"features", required_argument, NULL, P_FEATURES},
    {"gpu", required_argument, NULL, P_GPU},
    {"gpu-column", required_argument, NULL, P_GPU_COLUMN},
    {"measured", required_argument, NULL, P_MEASURED},
    {"measured-unit", required_argument, NULL, P_MEASURED_UNIT},
    {"coverage", required_argument, NULL, P_COVERAGE},
    {"format", required_argument, NULL, P_FORMAT},
    {"featmodel", required_argument, NULL, P_FEATMODEL},
    {"id", required_argument, NULL, P_ID},
    {"group", required_argument, NULL, P_GROUP},
    {"op", required_argument, NULL, P_OP | CLI_OPT_MANY},
    {NULL, 0, NULL, 0},
  };
  const char *ids = NULL, *group_col = NULL;
  char **opv = calloc((size_t)argc + 1, sizeof *opv);
  size_t nop = 0;
  if (!opv) { cli_error("out of memory"); return KCAST_EXIT_USER; }
  cli_launch L;
  if (cli_launch_init(&L, "predict", argc)) return KCAST_EXIT_USER;
  cli_opts op;
  cli_opts_init(&op, "predict", argc, argv, CLI_FE_SHORTOPTS, 0);
  cli_opts_add(&op, own);
  cli_opts_add(&op, cli_gpus_longopts);
  cli_opts_add(&op, cli_fe_longopts);
  cli_opts_add(&op, cli_launch_longopts);
  for (int c; (c = cli_opts_next(&op)) != CLI_OPT_END;) {
    const char *v = op.arg;
    char *e;
    switch (c) {
      case CLI_OPT_ERR: free(opv); cli_launch_free(&L); return op.status;
      case P_MODEL: model = v; break;
      case P_FEATMODEL: featmodel = v; break;
      case P_FEATURES: csv = v; break;
      case P_GPU: gpu = v; break;
      case P_GPU_COLUMN: gpu_column = v; break;
      case P_MEASURED: measured = v; break;
      case P_ID: ids = v; break;
      case P_OP: opv[nop++] = (char *)v; break;
      case P_GROUP: group_col = v; break;
      case P_MEASURED_UNIT:
        if (!(munit = rf_unit_canonical(v))) {
          cli_usage_error("predict", "--measured-unit is one of " RF_UNITS ", not '%s'", v);
          { free(opv); return usage_fail(&L); }
        }
        break;
      case P_COVERAGE:
        coverage = strtod(v, &e);
        if (*e || e == v || !(coverage > 0 && coverage < 1)) {
          cli_usage_error("predict", "--coverage '%s' is not in (0,1)", v);
          { free(opv); return usage_fail(&L); }
        }
        break;
      case P_FORMAT:
        fmt = cli_parse_format(v);
        if (fmt < 0) {
          cli_usage_error("predict", "--format is csv, table or json, not '%s'", v);
          { free(opv); return usage_fail(&L); }
        }
        have_fmt = 1;
        break;
      default:
        if (cli_launch_option(&L, &op, c) < 0) { free(opv); return usage_fail(&L); }
        kernel_mode = 1;
        break;
    }
  }
  if (cli_launch_operands(&L, &op)) { free(opv); return usage_fail(&L); }
  if (nop) {
    int bad = kernel_mode || L.path || csv || featmodel || measured || ids || gpu_column || group_col;
    cli_launch_free(&L);
    if (bad) {
      free(opv);
      return cli_usage_error("predict", "--op goes without an input FILE, its launch options, "
                             "--features, --featmodel, --measured, --id and --gpu-column");
    }
    int rc = predict_ops(opv, nop, model, gpu, coverage, have_fmt ? fmt : CLI_FMT_TABLE);
    free(opv);
    return rc;
  }
  free(opv);
  if (featmodel && csv) {
    cli_launch_free(&L);
    return cli_usage_error("predict", "--featmodel goes without --features");
  }
  if (featmodel)
    return predict_featmodel(&L, featmodel, model, gpu, coverage, have_fmt ? fmt : CLI_FMT_TABLE);
  if (L.path) kernel_mode = 1;
  if (ids && !csv) {
    cli_usage_error("predict", "--id needs --features CSV");
    return usage_fail(&L);
  }
  if (kernel_mode && !csv)
    return predict_kernel(&L, model, gpu, coverage, have_fmt ? fmt : CLI_FMT_TABLE);
  cli_launch_free(&L);
  if (kernel_mode)
    return cli_usage_error("predict", "--features CSV goes without an input FILE or its launch "
                           "options (--kernel, --grid, --block, --arg...)");
  if (!model && gpu_column && !csv) return cli_usage_error("predict", "--gpu-column needs --features CSV");
  if (measured && !csv) return cli_usage_error("predict", "--measured needs --features CSV");
  if (group_col && !measured) return cli_usage_error("predict", "--group needs --measured");
  if (munit && !measured) return cli_usage_error("predict", "--measured-unit needs --measured");
  if (!model && csv && (gpu || gpu_column))
    return predict_csv_analytic(csv, gpu, gpu_column, ids, measured, group_col,
                                munit, fmt);
  if (!model) return cli_usage_error("predict", "--model MODEL is required");
  if (gpu_column) return cli_usage_error("predict", "--gpu-column goes without --model (give --gpu G)");
  if (!csv) return cli_usage_error("predict", "give --features CSV or an input FILE");
  rf_forest *f = NULL;
  if (cli_model_load(model, &f)) {
    cli_error("%s", rf_last_error());
    return KCAST_EXIT_USER;
  }
  const rf_info *info = rf_get_info(f);
  /* the GPUs to answer for: the model's (none or one), or --gpu's (a list
     too), each name resolved against the model's GPUs, then the table */
  const char *tgpu[MAX_TARGETS];
  int tunseen[MAX_TARGETS];
  char gbuf[MAX_TARGETS][256];
  size_t nt = 0;
  if (!gpu) {
    if (model_gpu(model, f, NULL, &tgpu[0], &tunseen[0])) {
      rf_free(f);
      return KCAST_EXIT_USER;
    }
    nt = 1;
  } else {
    const char *mgs[MAX_TARGETS];
    char mbuf[MAX_TARGETS][256];
    size_t nm = 0;
    for (const char *t = info->gpu ? info->gpu : ""; *t && nm < MAX_TARGETS;) {
      size_t l = strcspn(t, ",");
      snprintf(mbuf[nm], sizeof mbuf[nm], "%.*s", (int)(l < 255 ? l : 255), t);
      mgs[nm] = mbuf[nm];
      nm++;
      t += l + (t[l] == ',');
    }
    for (const char *t = gpu;;) {
      size_t l = strcspn(t, ",");
      char name[256];
      snprintf(name, sizeof name, "%.*s", (int)(l < 255 ? l : 255), t);
      const char *m = an_gpu_match(name, mgs, nm);
      const an_gpu *tg = m ? NULL : an_gpu_find(name);
      if (!m && !tg) {
        cli_unknown_gpu(NULL, name, 0);
        rf_free(f);
        return KCAST_EXIT_USER;
      }
      if (nt == MAX_TARGETS) {
        cli_error("--gpu '%s': more than %d GPUs", gpu, MAX_TARGETS);
        rf_free(f);
        return KCAST_EXIT_USER;
      }
      snprintf(gbuf[nt], sizeof gbuf[nt], "%s", m ? m : tg->name);
      int dup = 0;
      for (size_t k = 0; k < nt; k++) dup |= !strcmp(gbuf[k], gbuf[nt]);
      if (!dup) {
        if (model_gpu(model, f, gbuf[nt], &tgpu[nt], &tunseen[nt])) {
          rf_free(f);
          return KCAST_EXIT_USER;
        }
        nt++;
      }
      if (!t[l]) break;
      t += l + 1;
    }
  }
  int listed = gpu && strchr(gpu, ',');
  /* every prediction names its unit: the target's (rf_target_unit), or
     that of the column the model was trained on */
  const char *tu = rf_target_unit(info->target);
  char unit[300];
  if (tu) snprintf(unit, sizeof unit, "%s", tu);
  else snprintf(unit, sizeof unit, "unit of %s", info->target ? info->target : "the target");
  /* Derived features the file lacks need its raw columns: read the header
     to know them (when it cannot be read, the loader says why). */
  csv_head h;
  const char **keep = NULL;
  size_t n_keep = info->n_features;
  int derive = 0, file_gpu = 0;
  if (!head_read(csv, &h)) {
    file_gpu = in_names((const char *const *)h.names, h.n, "gpu");
    if (load_list(info, &h, &keep, &n_keep, &derive)) {
      head_free(&h);
      rf_free(f);
      cli_error("out of memory");
      return KCAST_EXIT_USER;
    }
  }
  /* with --measured and one GPU, the file's gpu column (each row's GPU,
     where its measured value comes from) is read to check it */
  int check_gpu = measured && nt == 1 && file_gpu && tgpu[0] &&
                  !(ids && strstr(ids, "gpu")) && !(group_col && !strcmp(group_col, "gpu"));
  char text[1024];
  snprintf(text, sizeof text, "%s%s%s%s%s", ids ? ids : "", ids && group_col ? "," : "",
           group_col ? group_col : "", check_gpu && (ids || group_col) ? "," : "",
           check_gpu ? "gpu" : "");
  rf_csv_opts o = {.size = sizeof o, .no_target = !measured, .target = measured,
                   .keep = keep ? keep : (const char *const *)info->features, .n_keep = n_keep,
                   .text = text[0] ? text : NULL, .empty_value = ds_feature_default,
                   .empty_missing = derive};
  rf_data d, dm;
  memset(&dm, 0, sizeof dm);
  int rc = KCAST_EXIT_USER;
  double *pred = NULL, *lo = NULL, *hi = NULL, *ym = NULL;
  const char **outside = NULL; /* per output row: the model's most important
                                  feature outside its training range, or NULL */
  double *orow = NULL;
  size_t n_outside = 0;
  int lrc = rf_data_load_csv(&d, csv, &o);
  free(keep);
  head_free(&h);
  if (lrc) {
    cli_error("%s", rf_last_error());
    rf_free(f);
    return rc;
  }
  id_cols ic;
  ids_find(&ic, &d, ids);
  long gcol = group_col ? rf_data_text_col(&d, group_col) : -1;
  /* the measured values in the predictions' unit, of the GPUs predicted */
  double mscale = 1;
  if (measured && measured_scale(csv, measured, munit, tu, tu, tgpu, nt, &mscale)) {
    rf_data_free(&d);
    rf_free(f);
    return rc;
  }
  long fgc = measured && nt == 1 && file_gpu && tgpu[0] ? rf_data_text_col(&d, "gpu") : -1;
  for (size_t i = 0; fgc >= 0 && i < d.n_rows; i++) {
    const char *g = d.text[fgc][i];
    if (!g || !*g || !strcasecmp(g, tgpu[0]) || an_gpu_in_list(tgpu[0], g)) continue;
    cli_error("%s: row %zu: column gpu says '%s', but the predictions are for %s: --measured "
              "%s would compare two GPUs (give only %s's rows)", csv, i + 1, g, tgpu[0], measured,
              tgpu[0]);
    rf_data_free(&d);
    rf_free(f);
    return rc;
  }
  size_t n = d.n_rows, nout = n * nt;
  /* pred[g * n + i]: row i on target GPU g */
  pred = malloc((nout + 1) * sizeof *pred);
  lo = malloc((nout + 1) * sizeof *lo);
  hi = malloc((nout + 1) * sizeof *hi);
  ym = malloc((nout + 1) * sizeof *ym);
  outside = calloc(nout + 1, sizeof *outside);
  orow = malloc((info->n_features + 1) * sizeof *orow);
  if (!pred || !lo || !hi || !ym || !outside || !orow) {
    cli_error("out of memory");
    goto out;
  }
  for (size_t g = 0; g < nt; g++) {
    rf_data_free(&dm);
    if (derive && derive_rows(csv, info, tgpu[g], &d, &dm)) goto out;
    const rf_data *in = derive ? &dm : &d; /* the model's columns, in its order */
    double *pg = pred + g * n, *lg = lo + g * n, *hg = hi + g * n;
    if (tunseen[g]) {
      double *row = malloc((in->n_cols + 1) * sizeof *row);
      double *raw = malloc((d.n_cols + 1) * sizeof *raw);
      int adapted = rf_get_info(f)->n_adapt > 0;
      if (!row || !raw) { free(row); free(raw); cli_error("out of memory"); goto out; }
      for (size_t i = 0; i < in->n_rows; i++) {
        for (size_t j = 0; j < in->n_cols; j++) row[j] = in->x[j * in->n_rows + i];
        if (rf_predict_interval_on(f, row, coverage, 1, &pg[i], &lg[i], &hg[i])) {
          cli_error("%s:%zu: %s", csv, i + 2, rf_last_error());
          free(row);
          free(raw);
          goto out;
        }
        /* a model adapted to this GPU with measured shots (kcast calibrate) */
        double c = 1;
        if (adapted) {
          for (size_t j = 0; j < d.n_cols; j++) raw[j] = d.x[j * d.n_rows + i];
          rf_adapt_launch(f, tgpu[g], (const char *const *)d.names, raw, d.n_cols, &c);
        }
        pg[i] *= c;
        lg[i] *= c;
        hg[i] *= c;
      }
      free(row);
      free(raw);
    } else if (rf_predict_batch(f, in, coverage, pg, lg, hg, 0)) {
      cli_error("%s: %s", csv, rf_last_error());
      goto out;
    }
    for (size_t i = 0; i < n; i++) ym[g * n + i] = measured ? d.y[i] : 0;
    /* what each prediction rests on: a feature outside the training
       ranges (rf_outside), a GPU the model was not trained on */
    for (size_t i = 0; i < n && in->n_cols == info->n_features; i++) {
      for (size_t j = 0; j < in->n_cols; j++) orow[j] = in->x[j * in->n_rows + i];
      long j = rf_outside(f, orow, NULL);
      if (j >= 0) {
        outside[g * n + i] = info->features[j];
        n_outside++;
      }
    }
  }
  if (n_outside)
    fprintf(stderr, "kcast: note: %s: %zu of %zu predictions rest on a feature outside the "
            "model's training range (column outside names the most important one; the "
            "intervals assume the training rows' range)\n", csv, n_outside, nout);
  if (d.n_extra) {
    fprintf(stderr, "kcast: note: %s: ignoring %zu column%s the model does not use:", csv,
            d.n_extra, d.n_extra == 1 ? "" : "s");
    for (size_t k = 0; k < d.n_extra; k++) fprintf(stderr, "%s %s", k ? "," : "", d.extra[k]);
    fputc('\n', stderr);
  }
  if (fmt == CLI_FMT_JSON) {
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "target", info->target);
    cJSON_AddStringToObject(root, "unit", unit);
    cJSON_AddNumberToObject(root, "coverage", coverage);
    /* the model corrects another version of the analytic estimate */
    if (rf_base_stale(f, NULL, 0)) cJSON_AddTrueToObject(root, "other_estimate");
    cJSON *arr = cJSON_AddArrayToObject(root, "predictions");
    for (size_t i = 0; i < n; i++)
      for (size_t g = 0; g < nt; g++) {
        cJSON *r = cJSON_CreateObject();
        ids_json(&ic, &d, i, r);
        if (listed) cJSON_AddStringToObject(r, "gpu", tgpu[g]);
        cJSON_AddNumberToObject(r, "prediction", pred[g * n + i]);
        cJSON_AddNumberToObject(r, "lo", lo[g * n + i]);
        cJSON_AddNumberToObject(r, "hi", hi[g * n + i]);
        if (outside[g * n + i]) cJSON_AddStringToObject(r, "outside", outside[g * n + i]);
        if (tunseen[g]) cJSON_AddBoolToObject(r, "unseen_gpu", 1);
        cJSON_AddItemToArray(arr, r);
      }
    char *txt = cJSON_PrintUnformatted(root);
    if (txt) puts(txt);
    free(txt);
    cJSON_Delete(root);
  } else if (fmt == CLI_FMT_TABLE) {
    char hp[320], hl[320], hh[320], nb[3][64];
    snprintf(hp, sizeof hp, "prediction (%s)", unit);
    snprintf(hl, sizeof hl, "lo (%s)", unit);
    snprintf(hh, sizeof hh, "hi (%s)", unit);
    printf("%6s", "row");
    ids_table(&ic, &d, (size_t)-1);
    if (listed) printf(" %-10s", "gpu");
    printf(" %16s %16s %16s%s\n", hp, hl, hh, n_outside ? "  outside" : "");
    for (size_t i = 0; i < n; i++)
      for (size_t g = 0; g < nt; g++) {
        printf("%6zu", i + 1);
        ids_table(&ic, &d, i);
        if (listed) printf(" %-10s", tgpu[g]);
        printf(" %16s %16s %16s", cli_num(nb[0], sizeof nb[0], pred[g * n + i], 6),
               cli_num(nb[1], sizeof nb[1], lo[g * n + i], 6),
               cli_num(nb[2], sizeof nb[2], hi[g * n + i], 6));
        if (outside[g * n + i]) printf("  %s", outside[g * n + i]);
        putchar('\n');
      }
  } else {
    ids_csv_head(&ic, &d);
    /* outside (a feature's name, empty when none) only when some row is */
    printf("%sprediction,lo,hi,unit%s\n", listed ? "gpu," : "", n_outside ? ",outside" : "");
    for (size_t i = 0; i < n; i++)
      for (size_t g = 0; g < nt; g++) {
        ids_csv_row(&ic, &d, i);
        if (listed) printf("%s,", tgpu[g]);
        printf("%.9g,%.9g,%.9g,", pred[g * n + i], lo[g * n + i], hi[g * n + i]);
        cli_csv_field(stdout, unit);
        if (n_outside) {
          putchar(',');
          if (outside[g * n + i]) cli_csv_field(stdout, outside[g * n + i]);
        }
        putchar('\n');
      }
  }
  /* predictions are in the model's target unit: mscale converts the
     measured values to it (measured_scale) */
  if (measured) {
    /* each row's group: --group's column, else with a GPU list its GPU */
    char **gr = (gcol >= 0 || nt > 1) ? malloc((nout + 1) * sizeof *gr) : NULL;
    for (size_t g = 0; gr && g < nt; g++)
      for (size_t i = 0; i < n; i++)
        gr[g * n + i] = gcol >= 0 ? d.text[gcol][i] : (char *)tgpu[g];
    int mrc = measured_summary(csv, measured, ym, mscale, pred, lo, hi, nout, gr,
                               gcol >= 0 ? group_col : gr ? "gpu" : NULL);
    free(gr);
    if (mrc) goto out;
  }
  rc = KCAST_EXIT_OK;
out:
  free(pred);
  free(lo);
  free(hi);
  free(ym);
  free(outside);
  free(orow);
  rf_data_free(&dm);
  rf_data_free(&d);
  rf_free(f);
  return rc;
}
