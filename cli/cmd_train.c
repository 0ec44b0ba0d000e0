/*
 * cmd_train.c -- `kcast train`: fit a random forest on a CSV file or a
 * dataset and write a .kcm model; also the option parsing, data loading
 * and progress display that `kcast cv` shares.
 *
 * Input is either `--csv FILE --target COLUMN` (any numeric table; the
 * dedispersion tuning data, exports) or `DB --gpu G --target time|power`
 * (a kcast dataset: datasets/ds.h's matrix query, features of every family,
 * median of the repeated measurements, group = the launch's app).
 */
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "datasets/ds.h"
#include "model/model.h"

const char cmd_train_usage[] =
    "usage: kcast train --csv FILE --target COLUMN [options]\n"
    "       kcast train DB --gpu G[,G...]|all [--target time|power|energy] [options]\n"
    "\n"
    "Train a random forest and write it as a model file.  The defaults are the\n"
    "settings docs/accuracy.md measured best on real GPU timings: extra trees\n"
    "(every feature tried at each split, leaves of one sample, 100 trees), a\n"
    "log target when every target is positive, intervals calibrated on held-out\n"
    "rows, every loaded column plus the derived families work, occ and analytic\n"
    "(occ and analytic for a model of one GPU), and for a time or energy\n"
    "target the analytic estimate as the base: the forest learns the ratio of\n"
    "the measured value to it, which carries each GPU's and each launch's\n"
    "scale (so a model trained on several GPUs predicts for others).\n"
    "\n"
    "input:\n"
    "  --csv FILE          CSV with a header row; every other numeric column is a\n"
    "                      feature (columns whose first value is text are not)\n"
    "  --target COLUMN     the column to predict (CSV) or time|power|energy (DB;\n"
    "                      default time)\n"
    "  --gpu NAME[,...]    the GPU of every row (a CSV: a gpu column of the file\n"
    "                      must agree), or the GPUs whose measurements to train\n"
    "                      on (DB; all = every GPU with some; one GPU's names\n"
    "                      must be one): one row per launch and GPU; recorded in\n"
    "                      the model\n"
    "  --gpu-column COL    CSV column naming each row's GPU (default: gpu, when\n"
    "                      the file has one and --gpu is not given)\n"
    "  --ignore COL,...    CSV columns that are not features (shell patterns:\n"
    "                      'tune.*')\n"
    "  --group COLUMN      CSV column of group labels (not a feature); a DB's\n"
    "                      groups are app (default) or gpu\n"
    "  --app LIST          DB: only the launches of these apps (comma list; the\n"
    "                      operators of an import-neusight dataset: --app bmm)\n"
    "  --drop-constant     drop feature columns with a single value\n"
    "  --features F,...    feature families to use: all (every loaded column),\n"
    "                      launch, op, class, mem, ctrl, static, ptxas (the part\n"
    "                      of a name before its first dot), tune (a Kernel Tuner\n"
    "                      import's tuning parameters: only when named), and\n"
    "                      derived families\n"
    "                      computed from them (docs/features.md): work (ratios of\n"
    "                      work per thread, warp and CTA, coalescing, conflicts),\n"
    "                      occ (registers, residency, waves on the row's GPU), gpu\n"
    "                      (the GPU's descriptor), analytic (the analytic\n"
    "                      estimate and its terms), mangrove (GPU Mangrove's\n"
    "                      twelve), opr (an operator launch's stored opr.*\n"
    "                      features and its waves and tail on the row's GPU)\n"
    "  --gpus FILE         GPUs to add to or replace in the GPU table (a CSV of\n"
    "                      the columns of 'kcast gpus --format csv'; as\n"
    "                      KCAST_GPUS=FILE)\n"
    "  --base COLUMN|none  the target's base (default: an.time_us for time,\n"
    "                      an.energy_mj for energy when every row's GPU is known;\n"
    "                      none for power, where it measured worse)\n"
    "hyperparameters:\n"
    "  --trees N           number of trees (100)\n"
    "  --extra-trees       extremely randomized trees (the default)\n"
    "  --random-forest     bootstrap CART trees (random forest)\n"
    "  --max-features F    features tried per split: fraction in (0,1] or a count\n"
    "                      (default 1.0 with extra trees, 1/3 with a random forest)\n"
    "  --min-leaf N        smallest leaf in samples (1)\n"
    "  --leaf-cap N        leaf samples kept for the intervals (32; fewer: a\n"
    "                      smaller model file, coarser intervals)\n"
    "  --max-depth D       deepest split level, 0 = unlimited (0)\n"
    "  --log-target        fit log(target) (the default when every target > 0)\n"
    "  --no-log-target     fit the target itself (no base then)\n"
    "  --bootstrap on|off  override the bootstrap default\n"
    "  --bins N            histogram bins per feature, 2..256 (256)\n"
    "  --calibrate         calibrate the prediction intervals on held-out rows\n"
    "                      (conformalized quantile regression; the default): OOB\n"
    "                      rows for a bootstrap forest, else an inner 5-fold CV of\n"
    "                      50-tree forests (2-3x the training time); 'kcast cv'\n"
    "                      calibrates inside each training fold\n"
    "  --calibrate-groups  calibrate for groups the forest has not seen: the\n"
    "                      inner folds hold out whole groups (--group, or the\n"
    "                      app of a dataset's rows), for intervals on new\n"
    "                      applications or GPUs; implies --calibrate\n"
    "  --no-calibrate      plain quantile-regression-forest intervals\n"
    "  --seed S            random seed (1)\n"
    "  --threads N         OpenMP threads (default: all)\n"
    "output:\n"
    "  -o MODEL            model file to write (model.kcm)\n"
    "  --cv K              also run K-fold CV and record its figures in the model\n"
    "  --perm-importance   also compute permutation importance (OOB)\n";

/* ---------------------------------------------------------------- train -- */

int cmd_train(int argc, char **argv) {
  rf_params p;
  cli_rf_input in;
  cli_rf_defaults(&p, &in);
  const char *out = "model.kcm";
  unsigned long cv_folds = 0;
  enum { T_CV = CLI_OPT_OWN, T_PERM };
  static const struct option own[] = {
    {"output", required_argument, NULL, 'o'},
    {"cv", required_argument, NULL, T_CV},
    {"perm-importance", no_argument, NULL, T_PERM},
    {NULL, 0, NULL, 0},
  };
  cli_opts o;
  cli_opts_init(&o, "train", argc, argv, "o:", 0);
  cli_opts_add(&o, own);
  cli_opts_add(&o, cli_gpus_longopts);
  cli_opts_add(&o, cli_rf_longopts);
  for (int c; (c = cli_opts_next(&o)) != CLI_OPT_END;) {
    if (c == CLI_OPT_ERR) return o.status;
    int r = cli_rf_option(&o, c, &p, &in);
    if (r < 0) return KCAST_EXIT_USAGE;
    if (r) continue;
    if (c == 'o') {
      out = o.arg;
    } else if (c == T_CV) {
      if (cli_parse_uint(o.arg, 1000, &cv_folds) || cv_folds < 2)
        return cli_usage_error("train", "--cv needs a fold count of at least 2");
    } else if (c == T_PERM) {
      p.perm_importance = 1;
    }
  }
  if (CLI_NOPERANDS(&o) > 1)
    return cli_usage_error("train", "unexpected argument '%s'", CLI_OPERANDS(&o)[1]);
  if (CLI_NOPERANDS(&o)) in.db = CLI_OPERANDS(&o)[0];
  rf_data d;
  if (cli_rf_load("train", &in, &d, &p)) return in.target ? KCAST_EXIT_USER : KCAST_EXIT_USAGE;
  if (in.notes[0])
    fprintf(stderr, "kcast: note: %s: columns holding text are not features: %s (--ignore or "
            "--group them to say so)\n", in.csv, in.notes);
  int rc = KCAST_EXIT_USER;
  rf_forest *f = NULL;
  rf_metrics cvm;
  int have_cv = 0;
  if (cv_folds) {
    cli_progress pg;
    cli_progress_init(&pg, "cv folds");
    rf_cv_opts co = {.size = sizeof co, .folds = (unsigned)cv_folds, .coverage = 0.9,
                     .progress = cli_progress_fn, .progress_ctx = &pg};
    rf_cv_result cr;
    if (rf_cv(&d, &p, &co, &cr)) {
      cli_error("%s: cross-validation: %s", in.csv ? in.csv : in.db, rf_last_error());
      goto out;
    }
    cvm = cr.overall;
    have_cv = 1;
    rf_cv_result_free(&cr);
  }
  cli_progress pg;
  cli_progress_init(&pg, "trees");
  p.progress = cli_progress_fn;
  p.progress_ctx = &pg;
  double t0 = cli_now_s();
  if (rf_train(&d, &p, &f)) {
    cli_error("%s: %s", in.csv ? in.csv : in.db, rf_last_error());
    goto out;
  }
  double dt = cli_now_s() - t0;
  if ((in.gpus[0] && rf_set_gpu(f, in.gpus)) || rf_set_target(f, in.target)) {
    cli_error("%s", rf_last_error());
    goto out;
  }
  if (have_cv) rf_set_cv(f, &cvm);
  /* a model of several GPUs: a second table for the GPUs it has not seen */
  int unseen = strchr(in.gpus, ',') && in.gpu_col >= 0 && p.calibrate != RF_CALIBRATE_OFF;
  if (unseen && rf_calibrate_unseen(f, &d, d.text[in.gpu_col], p.n_threads)) {
    cli_error("%s: calibrating for unseen GPUs: %s", in.csv ? in.csv : in.db, rf_last_error());
    goto out;
  }
  if (rf_save(f, out)) {
    cli_error("%s", rf_last_error());
    goto out;
  }
  const rf_info *info = rf_get_info(f);
  printf("trained %zu trees (%zu nodes) on %zu rows x %zu features in %.2f s\n", info->n_trees,
         info->n_nodes, d.n_rows, d.n_cols, dt);
  if (info->params.bootstrap)
    printf("OOB: MAPE %.2f %%, R^2 %.4f, MSE %.4g%s\n", info->summary.oob_mape, info->summary.oob_r2,
           info->summary.oob_mse, p.transform == RF_TRANSFORM_LOG ? " (log space)" : "");
  if (info->n_cal) {
    size_t k = 0;
    while (k + 1 < info->n_cal && info->cal_coverage[k] < 0.9) k++;
    printf("intervals calibrated on %llu %s rows (widening at %.3g: %+.4g%s)\n",
           (unsigned long long)info->cal_rows,
           info->cal_method == RF_CALIB_OOB      ? "out-of-bag"
           : info->cal_method == RF_CALIB_GROUPS ? "group-held-out"
                                                 : "held-out",
           info->cal_coverage[k],
           info->cal_q[k], p.transform == RF_TRANSFORM_LOG ? " in log space" : "");
  }
  if (info->n_cal_unseen)
    printf("intervals for GPUs outside %s calibrated on %llu rows of held-out GPUs\n", in.gpus,
           (unsigned long long)info->cal_unseen_rows);
  if (have_cv)
    printf("CV (%lu-fold): MAPE %.2f %%, median APE %.2f %%, coverage %.3f\n", cv_folds,
           cvm.mape, cvm.median_ape, cvm.coverage);
  printf("wrote %s\n", out);
  rc = KCAST_EXIT_OK;
out:
  rf_free(f);
  rf_data_free(&d);
  return rc;
}
