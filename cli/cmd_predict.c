/*
 * cmd_predict.c -- `kcast predict --model MODEL --features CSV`: one line
 * per input row with the prediction and its interval.
 *
 * The CSV's columns are matched to the model's feature names by name, so
 * their order does not matter; a feature the model needs and the file
 * lacks is an error naming it; columns the model does not use are ignored
 * (not even parsed) with one note on stderr listing them.
 */
#include "cli/cli.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"

const char cmd_predict_usage[] =
    "usage: kcast predict --model MODEL --features CSV [--coverage C] [--format csv|table|json]\n"
    "\n"
    "Predict every row of CSV with the forest in MODEL.  Columns are matched to\n"
    "the model's features by name; extra columns are ignored (noted on stderr),\n"
    "a missing feature is an error.  Output: prediction,lo,hi per row, where\n"
    "[lo, hi] is the interval at coverage C (0.9).\n";

int cmd_predict(int argc, char **argv) {
  const char *model = NULL, *csv = NULL;
  double coverage = 0.9;
  int fmt = CLI_FMT_CSV;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (i + 1 >= argc && a[0] == '-') return cli_usage_error("predict", "%s needs a value", a);
    if (!strcmp(a, "--model")) model = argv[++i];
    else if (!strcmp(a, "--features")) csv = argv[++i];
    else if (!strcmp(a, "--coverage")) {
      char *e;
      coverage = strtod(argv[++i], &e);
      if (*e || !(coverage > 0 && coverage < 1))
        return cli_usage_error("predict", "--coverage '%s' is not in (0,1)", argv[i]);
    } else if (!strcmp(a, "--format")) {
      fmt = cli_parse_format(argv[++i]);
      if (fmt < 0) return cli_usage_error("predict", "--format is csv, table or json, not '%s'", argv[i]);
    } else if (!strcmp(a, "--gpu")) {
      cli_error("predict --gpu (a model chosen by GPU) is not available yet; give --model MODEL");
      return KCAST_EXIT_USER;
    } else {
      return cli_usage_error("predict", "unexpected argument '%s'", a);
    }
  }
  if (!model) return cli_usage_error("predict", "--model MODEL is required");
  if (!csv) {
    cli_error("predict from a kernel (FILE --kernel ...) is not available yet; give --features CSV");
    return KCAST_EXIT_USER;
  }
  rf_forest *f = NULL;
  if (rf_load(model, &f)) {
    cli_error("%s", rf_last_error());
    return KCAST_EXIT_USER;
  }
  const rf_info *info = rf_get_info(f);
  rf_csv_opts o = {.size = sizeof o, .no_target = 1, .keep = info->features, .n_keep = info->n_features};
  rf_data d;
  int rc = KCAST_EXIT_USER;
  double *pred = NULL, *lo = NULL, *hi = NULL;
  if (rf_data_load_csv(&d, csv, &o)) {
    cli_error("%s", rf_last_error());
    rf_free(f);
    return rc;
  }
  if (d.n_extra) {
    fprintf(stderr, "kcast: note: %s: ignoring %zu column%s the model does not use:", csv,
            d.n_extra, d.n_extra == 1 ? "" : "s");
    for (size_t k = 0; k < d.n_extra; k++) fprintf(stderr, "%s %s", k ? "," : "", d.extra[k]);
    fputc('\n', stderr);
  }
  pred = malloc(d.n_rows * sizeof *pred);
  lo = malloc(d.n_rows * sizeof *lo);
  hi = malloc(d.n_rows * sizeof *hi);
  if (!pred || !lo || !hi) {
    cli_error("out of memory");
    goto out;
  }
  if (rf_predict_batch(f, &d, coverage, pred, lo, hi, 0)) {
    cli_error("%s: %s", csv, rf_last_error());
    goto out;
  }
  if (fmt == CLI_FMT_JSON) {
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "target", info->target);
    cJSON_AddNumberToObject(root, "coverage", coverage);
    cJSON *arr = cJSON_AddArrayToObject(root, "predictions");
    for (size_t i = 0; i < d.n_rows; i++) {
      cJSON *r = cJSON_CreateObject();
      cJSON_AddNumberToObject(r, "prediction", pred[i]);
      cJSON_AddNumberToObject(r, "lo", lo[i]);
      cJSON_AddNumberToObject(r, "hi", hi[i]);
      cJSON_AddItemToArray(arr, r);
    }
    char *txt = cJSON_PrintUnformatted(root);
    if (txt) puts(txt);
    free(txt);
    cJSON_Delete(root);
  } else if (fmt == CLI_FMT_TABLE) {
    printf("%6s %14s %14s %14s\n", "row", "prediction", "lo", "hi");
    for (size_t i = 0; i < d.n_rows; i++)
      printf("%6zu %14.6g %14.6g %14.6g\n", i + 1, pred[i], lo[i], hi[i]);
  } else {
    printf("prediction,lo,hi\n");
    for (size_t i = 0; i < d.n_rows; i++) printf("%.9g,%.9g,%.9g\n", pred[i], lo[i], hi[i]);
  }
  rc = KCAST_EXIT_OK;
out:
  free(pred);
  free(lo);
  free(hi);
  rf_data_free(&d);
  rf_free(f);
  return rc;
}
