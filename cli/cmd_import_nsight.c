/*
 * cmd_import_nsight.c -- `kcast dataset import-nsys` and `import-ncu`:
 * kernel durations that Nsight Systems or Nsight Compute measured for a
 * program become time_ns measurements of the launches a `kcast run` of the
 * same program recorded.
 *
 * The readers (profiler/prof_nsight.c) turn the export into the same
 * records `kcast profile` produces, and prof_ingest writes them: the same
 * join by (app, dataset, lseq), the same check of kernel name, grid and
 * block against the stored launch, one transaction, so a mismatch names
 * the launch and writes nothing.  Launches the dataset lacks are created
 * (times without features) as kcast profile creates them.
 *
 * Keys: --app and --dataset, or the program and its arguments after `--`
 * (the rule kcast run and kcast profile use: app = the program's base
 * name, dataset = its arguments joined by spaces).
 */
#include "cli/cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "datasets/ds.h"
#include "profiler/prof.h"

const char cmd_import_nsight_usage[] =
    "usage: kcast dataset import-nsys FILE -o DB [--app NAME] [--dataset LABEL] [--gpu NAME]\n"
    "              [--rep-offset N] [-- PROGRAM [ARGS]]\n"
    "       kcast dataset import-ncu FILE -o DB [same options]\n";

int cmd_import_nsight(int argc, char **argv) {
  const int ncu = !strcmp(argv[0], "import-ncu");
  const char *cmd = ncu ? "dataset import-ncu" : "dataset import-nsys";
  enum { O_APP = CLI_OPT_OWN, O_DATASET, O_GPU, O_REP };
  /* -o and --output share an id, so that both given is one option twice */
  static const struct option lopts[] = {
      {"output", required_argument, NULL, 'o'},  {"app", required_argument, NULL, O_APP},
      {"dataset", required_argument, NULL, O_DATASET}, {"gpu", required_argument, NULL, O_GPU},
      {"rep-offset", required_argument, NULL, O_REP}, {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0}};
  const char *out = NULL, *app = NULL, *dataset = NULL, *gpu = NULL;
  unsigned long rep = 0;
  /* Operands: FILE, then (after --) the program and its arguments. */
  cli_opts po;
  cli_opts_init(&po, "dataset", argc, argv, "o:h", 0);
  if (cli_opts_add(&po, lopts)) return KCAST_EXIT_USAGE;
  int c;
  while ((c = cli_opts_next(&po)) != CLI_OPT_END) {
    switch (c) {
      case CLI_OPT_ERR: return po.status;
      case 'o': out = po.arg; break;
      case 'h': fputs(cmd_import_nsight_usage, stdout); return KCAST_EXIT_OK;
      case O_APP: app = po.arg; break;
      case O_DATASET: dataset = po.arg; break;
      case O_GPU: gpu = po.arg; break;
      case O_REP:
        if (cli_parse_uint(po.arg, 1000000, &rep))
          return cli_usage_error("dataset", "%s: bad --rep-offset '%s'", cmd, po.arg);
        break;
      default: return cli_usage_error("dataset", "%s: unknown option '%s'", cmd, po.name);
    }
  }
  char **ops = CLI_OPERANDS(&po);
  int nops = CLI_NOPERANDS(&po);
  const char *file = nops > 0 ? ops[0] : NULL;
  int nprog = nops > 1 ? nops - 1 : 0;
  if (!file) return cli_usage_error("dataset", "%s: no input file", cmd);
  if (!out || !*out) return cli_usage_error("dataset", "%s needs -o DB", cmd);
  char dapp[512], ddata[4096];
  if (nprog > 0) {
    prof_default_keys(nprog, ops + 1, dapp, sizeof dapp, ddata, sizeof ddata);
    if (!app) app = dapp;
    if (!dataset) dataset = ddata;
  }
  if (!app || !*app)
    return cli_usage_error("dataset", "%s: name the program: --app NAME or -- PROGRAM [ARGS]",
                           cmd);
  if (!dataset) dataset = "";

  char err[1200];
  prof_records r;
  if ((ncu ? prof_ncu_read : prof_nsys_read)(file, &r, err, sizeof err)) {
    cli_error("%s", err);
    return KCAST_EXIT_USER;
  }
  int rc = KCAST_EXIT_USER;
  char key[128];
  if (gpu) snprintf(key, sizeof key, "%s", gpu), cli_note_gpu_key(gpu);
  else if (r.gpu.name[0]) prof_gpu_key(r.gpu.name, key, sizeof key);
  else {
    prof_records_free(&r);
    return cli_usage_error("dataset", "%s: %s does not name its GPU; give --gpu NAME", cmd, file);
  }
  char device[128];
  snprintf(device, sizeof device, "%s", r.gpu.name[0] ? r.gpu.name : key);
  cli_gpu_row(key, device, &r.gpu);

  struct stat sb;
  int existed = stat(out, &sb) == 0;
  ds_db *db = NULL;
  if (ds_open(out, DS_CREATE, &db, err, sizeof err)) {
    cli_error("%s", err);
    prof_records_free(&r);
    return KCAST_EXIT_USER;
  }
  size_t n = sizeof "kcast dataset";
  for (int i = 0; i < argc; i++) n += strlen(argv[i]) + 1;
  char *cmdline = malloc(n);
  if (cmdline) {
    strcpy(cmdline, "kcast dataset");
    for (int i = 0; i < argc; i++) strcat(strcat(cmdline, " "), argv[i]);
  }
  char source[64];
  snprintf(source, sizeof source, "kcast %s", cmd);
  prof_keys k = {app, dataset, key, NULL, cmdline, 0, (int)rep, source, ncu ? "ncu" : "nsys"};
  prof_summary sum;
  if (prof_ingest(db, &r, &k, &sum, err, sizeof err)) {
    cli_error("%s: %s", file, err);
  } else {
    printf("%s: %zu launches of (%s, '%s') timed on %s by %s", out, sum.launches, app, dataset,
           sum.gpu, ncu ? "ncu" : "nsys");
    if (sum.created)
      printf(" (%zu not in the dataset: created without features)", sum.created);
    printf("\n");
    rc = KCAST_EXIT_OK;
  }
  free(cmdline);
  ds_close(db);
  prof_records_free(&r);
  if (rc && !existed) remove(out);
  return rc;
}
