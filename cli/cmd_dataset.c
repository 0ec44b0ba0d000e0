/*
 * cmd_dataset.c -- `kcast dataset stats|export|merge`: look into, flatten and
 * combine SQLite datasets (docs/formats.md describes the file).
 *
 * stats   counts per table, per app and per (gpu, metric); a table, or CSV
 *         (one tidy table: a `kind` column says which count a row holds) or
 *         JSON (one object).
 * export  one CSV row per launch: its columns, one column per feature name
 *         (union, sorted; empty where the launch lacks it), then the median of
 *         every (gpu, metric) as `metric@gpu`.  Built from ds_query_matrix
 *         (features only, missing = NAN) and ds_query_target, merged by
 *         launch id, so it never reaches past ds.h.
 * merge   OUT IN...: every input is checked before any is merged; each merge
 *         is one transaction (ds_merge).
 * import-mangrove  GPU Mangrove's fluxmetrics/kerneltime/kernelpower
 *         databases into a dataset, in one transaction (ds_import_mangrove).
 *
 * Numbers are printed with the fewest digits that read back to the same
 * double; CSV fields are quoted only when they need it (libcsv writes the
 * quoted form).
 */
#include "cli/cli.h"

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>
#include <csv.h>

#include "datasets/ds.h"

const char cmd_dataset_usage[] =
    "usage: kcast dataset stats DB [--format table|csv|json]\n"
    "       kcast dataset export DB [--format csv] [-o FILE] [--kernel REGEX | -k NAME]\n"
    "                     [--launch-skip N] [--launch-count N]\n"
    "       kcast dataset merge [--replace] OUT IN...\n"
    "       kcast dataset import-mangrove --features FLUX.db [--time T.db]\n"
    "                     [--power P.db] [--gpu NAME] -o DB\n"
    "       kcast dataset import-kerneltuner CACHEFILE... -o DB [--source FILE.cu] [options]\n"
    "       kcast dataset import-nsys FILE -o DB [--app NAME] [--dataset LABEL]\n"
    "                     [--gpu NAME] [--rep-offset N] [-- PROGRAM [ARGS]]\n"
    "       kcast dataset import-ncu FILE -o DB [the options of import-nsys]\n"
    "       kcast dataset import-neusight FILE... -o DB\n"
    "\n"
    "Inspect and combine kcast datasets (SQLite files; see docs/formats.md).\n"
    "\n"
    "  stats    launches, feature values and kernels per app; measurements per\n"
    "           GPU and metric\n"
    "  export   one CSV row per launch: id, bench, app, dataset, lseq, kernel,\n"
    "           grid, block, shmem, a column per feature (empty where a launch\n"
    "           lacks it; train --csv and predict --features read an empty count\n"
    "           as 0), the median of each measured metric per GPU as METRIC@GPU\n"
    "           (e.g. time_ns@H200), and last the kernel's demangled signature\n"
    "  merge    add the launches, features, measurements, GPUs, runs and\n"
    "           suite entries of each IN to OUT (created if missing), one\n"
    "           transaction per IN; a launch present in both is matched by\n"
    "           (app, dataset, lseq).  Where both hold features of a launch\n"
    "           (or a measurement of the same GPU, metric and rep), they must\n"
    "           agree: a conflict is an error naming its keys, and nothing of\n"
    "           that IN is merged.  Merging a file again changes nothing\n"
    "           (runs already in OUT are not added twice)\n"
    "  import-mangrove\n"
    "           add GPU Mangrove databases to DB (created if missing): the\n"
    "           launches and opcode counts of FLUX.db (table fluxmetrics) and\n"
    "           the times (kerneltime, us) and powers (kernelpower, W) that\n"
    "           T.db/P.db recorded on GPU NAME (--gpu is needed with them;\n"
    "           a NAME the GPU table does not know, here and in the other\n"
    "           imports, gets a note naming the nearest one)\n"
    "  import-kerneltuner\n"
    "           Kernel Tuner cachefiles (.json or .json.gz) into DB (created if\n"
    "           missing): one launch per configuration (app = --app or the\n"
    "           kernel's name, dataset = the configuration's key, lseq 0), one\n"
    "           time_ns per entry of its `times`, on the GPU the file names (the\n"
    "           key kcast profile derives: \"NVIDIA A100-PCIE-40GB\" -> A100-PCIE-40GB;\n"
    "           a gpus row from the GPU table when it knows the device); with\n"
    "           --source, the features kcast emulate gives for the kernel\n"
    "           compiled with the configuration's parameters prepended as\n"
    "           #define lines (grid_size_x..z, the block sizes, every parameter,\n"
    "           kernel_tuner 1, as Kernel Tuner does; a loop_unroll_factor_*\n"
    "           parameter is `constexpr int`, the argument of `#pragma unroll\n"
    "           NAME`, and 0 removes the pragma).  Parameter names must be C\n"
    "           identifiers and values numbers, identifiers or simple\n"
    "           expressions on one line; a key given twice is refused.  Every\n"
    "           numeric parameter is a tune.* feature (not used for training\n"
    "           unless named: --features tune).  Times are written first, in one\n"
    "           transaction; features after, whatever finished at least every\n"
    "           2 s in its own, so an interrupted import resumes where it\n"
    "           stopped, and cachefiles of the same kernel on other GPUs reuse\n"
    "           the features.  Failed configurations of the file are skipped,\n"
    "           configurations whose features fail here keep their times: both\n"
    "           summarized by reason with their first keys\n"
    "    --source FILE.cu      the kernel's source (without it: times only)\n"
    "    --kernel NAME         the kernel (default: the file's kernel_name)\n"
    "    --app NAME            the launches' app (default: the kernel's name)\n"
    "    --gpu NAME            measurements.gpu (one cachefile only)\n"
    "    --problem-size X[,Y[,Z]]  default: the file's problem_size\n"
    "    --grid-div-x LIST     comma list of parameter names or integers whose\n"
    "    --grid-div-y LIST     product divides the problem size (rounded up):\n"
    "    --grid-div-z LIST     Kernel Tuner's grid_div_*; default block_size_x,\n"
    "                          block_size_y, block_size_z (a block size that is not\n"
    "                          a parameter is 1)\n"
    "    --block-size-names X[,Y[,Z]]  the block's parameters (default\n"
    "                          block_size_x,block_size_y,block_size_z)\n"
    "    --arg SPEC            a kernel argument, as for kcast emulate\n"
    "    --const NAME=FILL     fill constant-memory symbol NAME (FILL as buf:'s:\n"
    "                          zero, seq, seqf, rand[:S], randf[:S], file=PATH)\n"
    "    --copt OPTION         a compiler option (-O3, -DN=4, -I...; repeat)\n"
    "    --compiler, --arch, --shared, --budget, --timeout, --oob, --tool-timeout\n"
    "                                                              as for emulate\n"
    "    --sample CTAS         CTAs emulated per configuration (default auto,\n"
    "                          as for emulate)\n"
    "    --configs N --seed S  a seeded sample of N valid configurations\n"
    "    -j JOBS               worker threads (default: the CPUs)\n"
    "    --batch N             configurations per compiler run (default: the\n"
    "                          work split over 2 x JOBS groups, at most 48; 1: one\n"
    "                          run per configuration)\n"
    "    --no-ptxas            no ptxas columns (default: each configuration's\n"
    "                          registers, spills, stack and static shared memory\n"
    "                          for the architecture of every GPU of the files:\n"
    "                          ptxas.sm_XY.*, docs/features.md; the kernel's\n"
    "                          static.* features are always added)\n"
    "    --failures FILE.csv   every failed configuration: key, gpu (empty when\n"
    "                          its features failed here), reason\n"
    "  import-nsys, import-ncu\n"
    "           kernel durations Nsight measured for a program, as time_ns of\n"
    "           the launches a kcast run of it recorded: FILE is the CSV of\n"
    "           `nsys stats --report cuda_gpu_trace --format csv` or an `nsys\n"
    "           export --type sqlite` file, or the CSV of `ncu --csv --page raw`\n"
    "           (gpu__time_duration.sum).  Launches are matched by their order\n"
    "           (nsys: correlation id; ncu: ID) to (app, dataset, lseq) and\n"
    "           checked by kernel name, grid and block as kcast profile checks;\n"
    "           a mismatch names the launch and writes nothing.  app and\n"
    "           dataset are --app/--dataset, or come from the program and its\n"
    "           arguments after -- (kcast run's rule)\n"
    "    --gpu NAME            measurements.gpu (default: from the file's device)\n"
    "    --rep-offset N        first rep number (several runs of one program)\n"
    "  import-neusight\n"
    "           operator launches in the NeuSight training set's format (CSV or\n"
    "           .csv.gz: OPName, Latency in ms, Device, Kernel Name, Grid x..z,\n"
    "           Block x..z, Kernels, and the operator's shape columns) into DB\n"
    "           (created if missing): one launch per operator, shape and GPU\n"
    "           (app = the operator, dataset = 'SHAPE @GPU', lseq = the main\n"
    "           kernel's place among the operator's kernels), the operator's\n"
    "           opr.* and launch.* features (docs/features.md), time_ns on the\n"
    "           GPU the Device column names (found in the GPU table by name or\n"
    "           alias).  One transaction: a bad row names FILE:LINE and writes\n"
    "           nothing\n"
    "\n"
    "  --format F   output format (stats: table, csv, json; export: csv)\n"
    "  -o FILE      write the export to FILE instead of standard output\n"
    "  --replace    merge: IN's launch columns, features and measurements win\n"
    "               over OUT's conflicting ones instead of failing\n"
    "  --kernel REGEX  export only launches of kernels whose mangled name or\n"
    "               demangled signature matches REGEX (POSIX extended)\n"
    "  -k, --kernel-name NAME  only launches of the kernel named NAME exactly\n"
    "               (Nsight Compute's meaning; regex:EXPR as --kernel)\n"
    "  --launch-skip N, --launch-count N  of those, pass over the first N\n"
    "               (in launch id order), then export at most N\n"
    "\n"
    "Exit status: 0 ok, 1 unreadable or foreign file, 2 bad command line.\n";

/* Options shared by the subcommands; positional arguments in pos[]. */
typedef struct opts {
  int format;          /* cli_format, -1 = default */
  const char *output;  /* -o FILE or NULL */
  int replace;         /* --replace (merge) */
  cli_filter filter;   /* export: --kernel, --launch-skip, --launch-count */
  int npos;
  char **pos;
} opts;

/* argv[0] is the subcommand. */
static int parse_opts(int argc, char **argv, opts *o) {
  static const struct option lo[] = {
    {"format", required_argument, NULL, 'f'},
    {"output", required_argument, NULL, 'o'},
    {"replace", no_argument, NULL, 'r'},
    {NULL, 0, NULL, 0},
  };
  o->format = -1;
  o->output = NULL;
  o->replace = 0;
  memset(&o->filter, 0, sizeof o->filter);
  cli_opts g;
  cli_opts_init(&g, "dataset", argc, argv, "o:", 0);
  cli_opts_add(&g, lo);
  if (!strcmp(argv[0], "export")) cli_opts_add(&g, cli_filter_longopts);
  for (int c; (c = cli_opts_next(&g)) != CLI_OPT_END;) {
    if (c == CLI_OPT_ERR) return g.status;
    int fr = cli_filter_option(&o->filter, &g, c);
    if (fr < 0) return KCAST_EXIT_USAGE;
    if (fr) continue;
    if (c == 'f') {
      o->format = cli_parse_format(g.arg);
      if (o->format < 0) return cli_usage_error("dataset", "unknown format '%s'", g.arg);
    } else if (c == 'r') {
      o->replace = 1;
    } else if (c == 'o') {
      o->output = g.arg;
    }
  }
  o->npos = CLI_NOPERANDS(&g);
  o->pos = CLI_OPERANDS(&g);
  return KCAST_EXIT_OK;
}

/* ------------------------------------------------------------ CSV output -- */

/* Shortest decimal that reads back as v; nothing for NAN (missing). */
static void csv_num(FILE *f, double v) {
  if (isnan(v)) return;
  if (v == floor(v) && fabs(v) < 9007199254740992.0) {
    fprintf(f, "%" PRId64, (int64_t)v);
    return;
  }
  char buf[40];
  for (int prec = 15; prec <= 17; prec++) {
    snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (strtod(buf, NULL) == v) break;
  }
  fputs(buf, f);
}

/* ------------------------------------------------------------------ stats -- */

static int stats_table(const char *path, const ds_stats *s) {
  printf("dataset         %s\n", path);
  printf("launches        %" PRId64 "\n", s->launches);
  printf("feature values  %" PRId64 "\n", s->feature_rows);
  printf("feature names   %" PRId64 "\n", s->feature_names);
  printf("measurements    %" PRId64 "\n", s->measurements);
  printf("gpus            %" PRId64 "\n", s->gpus);
  printf("runs            %" PRId64, s->runs);
  if (s->partial_runs) printf(" (%" PRId64 " partial: did not finish)", s->partial_runs);
  printf("\n");
  int w = 3;
  for (size_t i = 0; i < s->napps; i++)
    if ((int)strlen(s->apps[i].app) > w) w = (int)strlen(s->apps[i].app);
  if (s->napps) {
    printf("\n%-*s  %10s  %8s  %7s  %14s\n", w, "app", "launches", "datasets",
           "kernels", "feature values");
    for (size_t i = 0; i < s->napps; i++)
      printf("%-*s  %10" PRId64 "  %8" PRId64 "  %7" PRId64 "  %14" PRId64 "\n",
             w, s->apps[i].app, s->apps[i].launches, s->apps[i].datasets,
             s->apps[i].kernels, s->apps[i].feature_rows);
  }
  if (s->nmeas) {
    w = 3;
    for (size_t i = 0; i < s->nmeas; i++)
      if ((int)strlen(s->meas[i].gpu) > w) w = (int)strlen(s->meas[i].gpu);
    printf("\n%-*s  %-8s  %10s  %12s\n", w, "gpu", "metric", "launches",
           "measurements");
    for (size_t i = 0; i < s->nmeas; i++)
      printf("%-*s  %-8s  %10" PRId64 "  %12" PRId64 "\n", w, s->meas[i].gpu,
             s->meas[i].metric, s->meas[i].launches, s->meas[i].values);
  } else {
    printf("\nno measurements\n");
  }
  return KCAST_EXIT_OK;
}

static int stats_csv(const ds_stats *s) {
  FILE *f = stdout;
  fputs("kind,app,gpu,metric,launches,datasets,kernels,feature_values,"
        "measurements\n", f);
  fprintf(f, "total,,,,%" PRId64 ",,,%" PRId64 ",%" PRId64 "\n", s->launches,
          s->feature_rows, s->measurements);
  for (size_t i = 0; i < s->napps; i++) {
    fputs("app,", f);
    cli_csv_field(f, s->apps[i].app);
    fprintf(f, ",,,%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",\n",
            s->apps[i].launches, s->apps[i].datasets, s->apps[i].kernels,
            s->apps[i].feature_rows);
  }
  for (size_t i = 0; i < s->nmeas; i++) {
    fputs("gpu,,", f);
    cli_csv_field(f, s->meas[i].gpu);
    fputc(',', f);
    cli_csv_field(f, s->meas[i].metric);
    fprintf(f, ",%" PRId64 ",,,,%" PRId64 "\n", s->meas[i].launches,
            s->meas[i].values);
  }
  return KCAST_EXIT_OK;
}

static int stats_json(const char *path, const ds_stats *s) {
  cJSON *o = cJSON_CreateObject(), *apps = NULL, *meas = NULL;
  if (!o) goto nomem;
  cJSON_AddStringToObject(o, "file", path);
  cJSON_AddNumberToObject(o, "launches", (double)s->launches);
  cJSON_AddNumberToObject(o, "feature_values", (double)s->feature_rows);
  cJSON_AddNumberToObject(o, "feature_names", (double)s->feature_names);
  cJSON_AddNumberToObject(o, "measurements", (double)s->measurements);
  cJSON_AddNumberToObject(o, "gpus", (double)s->gpus);
  cJSON_AddNumberToObject(o, "runs", (double)s->runs);
  cJSON_AddNumberToObject(o, "partial_runs", (double)s->partial_runs);
  if (!(apps = cJSON_AddArrayToObject(o, "apps")) ||
      !(meas = cJSON_AddArrayToObject(o, "measured")))
    goto nomem;
  for (size_t i = 0; i < s->napps; i++) {
    cJSON *a = cJSON_CreateObject();
    if (!a || !cJSON_AddItemToArray(apps, a)) goto nomem;
    cJSON_AddStringToObject(a, "app", s->apps[i].app);
    cJSON_AddNumberToObject(a, "launches", (double)s->apps[i].launches);
    cJSON_AddNumberToObject(a, "datasets", (double)s->apps[i].datasets);
    cJSON_AddNumberToObject(a, "kernels", (double)s->apps[i].kernels);
    cJSON_AddNumberToObject(a, "feature_values", (double)s->apps[i].feature_rows);
  }
  for (size_t i = 0; i < s->nmeas; i++) {
    cJSON *m = cJSON_CreateObject();
    if (!m || !cJSON_AddItemToArray(meas, m)) goto nomem;
    cJSON_AddStringToObject(m, "gpu", s->meas[i].gpu);
    cJSON_AddStringToObject(m, "metric", s->meas[i].metric);
    cJSON_AddNumberToObject(m, "launches", (double)s->meas[i].launches);
    cJSON_AddNumberToObject(m, "measurements", (double)s->meas[i].values);
  }
  char *txt = cJSON_Print(o);
  if (!txt) goto nomem;
  puts(txt);
  cJSON_free(txt);
  cJSON_Delete(o);
  return KCAST_EXIT_OK;
nomem:
  cJSON_Delete(o);
  cli_error("out of memory");
  return KCAST_EXIT_USER;
}

static int open_db(const char *path, int flags, ds_db **db) {
  char err[1100];
  if (ds_open(path, flags, db, err, sizeof err) < 0) {
    cli_error("%s", err);
    return KCAST_EXIT_USER;
  }
  return KCAST_EXIT_OK;
}

static int sub_stats(opts *o) {
  if (o->npos != 1)
    return cli_usage_error("dataset", "stats needs exactly one DB");
  if (o->output)
    return cli_usage_error("dataset", "stats writes to standard output (no -o)");
  ds_db *db;
  int rc = open_db(o->pos[0], DS_READONLY, &db);
  if (rc) return rc;
  ds_stats s;
  if (ds_get_stats(db, &s) < 0) {
    cli_error("%s", ds_errmsg(db));
    ds_close(db);
    return KCAST_EXIT_USER;
  }
  switch (o->format < 0 ? CLI_FMT_TABLE : o->format) {
    case CLI_FMT_CSV: rc = stats_csv(&s); break;
    case CLI_FMT_JSON: rc = stats_json(o->pos[0], &s); break;
    default: rc = stats_table(o->pos[0], &s); break;
  }
  ds_stats_free(&s);
  ds_close(db);
  return rc;
}

/* ----------------------------------------------------------------- export -- */

typedef struct export_data {
  ds_matrix m;       /* every launch, features only, missing = NAN */
  ds_stats st;       /* the (gpu, metric) pairs */
  ds_target *t;      /* st.nmeas medians */
  size_t *tpos;      /* merge cursor per target */
} export_data;

static void export_free(export_data *e) {
  for (size_t i = 0; e->t && i < e->st.nmeas; i++) ds_target_free(&e->t[i]);
  free(e->t);
  free(e->tpos);
  ds_stats_free(&e->st);
  ds_matrix_free(&e->m);
}

static int export_load(ds_db *db, export_data *e) {
  ds_query q;
  ds_query_init(&q);
  q.missing = DS_MISSING_NAN;
  q.include_empty = 1;
  q.with_tune = 1; /* the tuning parameters of a Kernel Tuner import */
  if (ds_query_matrix(db, &q, &e->m) < 0 || ds_get_stats(db, &e->st) < 0)
    return -1;
  e->t = calloc(e->st.nmeas ? e->st.nmeas : 1, sizeof *e->t);
  e->tpos = calloc(e->st.nmeas ? e->st.nmeas : 1, sizeof *e->tpos);
  if (!e->t || !e->tpos) return -2;
  for (size_t i = 0; i < e->st.nmeas; i++)
    if (ds_query_target(db, e->st.meas[i].gpu, e->st.meas[i].metric,
                        DS_AGG_MEDIAN, &e->t[i]) < 0)
      return -1;
  return 0;
}

static int export_write(ds_db *db, export_data *e, FILE *f, cli_filter *flt) {
  static const char *const fixed[] = {
    "id", "bench", "app", "dataset", "lseq", "kernel", "grid_x", "grid_y",
    "grid_z", "block_x", "block_y", "block_z", "shmem"};
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
    fprintf(f, "%s%s", i ? "," : "", fixed[i]);
  for (size_t j = 0; j < e->m.cols; j++) {
    fputc(',', f);
    cli_csv_field(f, e->m.colnames[j]);
  }
  for (size_t i = 0; i < e->st.nmeas; i++) {
    char name[512];
    snprintf(name, sizeof name, "%s@%s", e->st.meas[i].metric,
             e->st.meas[i].gpu);
    fputc(',', f);
    cli_csv_field(f, name);
  }
  /* last, so the columns before it keep their places for readers that
     split at every comma */
  fputs(",demangled\n", f);
  ds_iter *it;
  if (ds_iter_launches(db, NULL, NULL, &it) < 0) return -1;
  int64_t id;
  ds_launch l;
  size_t r = 0;
  int rc;
  while ((rc = ds_iter_next(it, &id, &l)) == 1) {
    if (cli_filter_active(flt) && !cli_filter_take(flt, l.kernel ? l.kernel : "")) continue;
    fprintf(f, "%" PRId64 ",", id);
    cli_csv_field(f, l.bench);
    fputc(',', f);
    cli_csv_field(f, l.app);
    fputc(',', f);
    cli_csv_field(f, l.dataset);
    fprintf(f, ",%" PRId64 ",", l.lseq);
    cli_csv_field(f, l.kernel);
    fprintf(f, ",%u,%u,%u,%u,%u,%u,%" PRId64, l.grid[0], l.grid[1], l.grid[2],
            l.block[0], l.block[1], l.block[2], l.shmem);
    /* The matrix has the same launches by id (include_empty); a launch
       added by another writer since then simply gets empty cells. */
    while (r < e->m.rows && e->m.launch_id[r] < id) r++;
    int have = r < e->m.rows && e->m.launch_id[r] == id;
    for (size_t j = 0; j < e->m.cols; j++) {
      fputc(',', f);
      if (have) csv_num(f, e->m.x[r * e->m.cols + j]);
    }
    for (size_t i = 0; i < e->st.nmeas; i++) {
      const ds_target *t = &e->t[i];
      size_t *p = &e->tpos[i];
      while (*p < t->n && t->launch_id[*p] < id) (*p)++;
      fputc(',', f);
      if (*p < t->n && t->launch_id[*p] == id) csv_num(f, t->value[*p]);
    }
    fputc(',', f);
    char *dm = fe_demangle(l.kernel);
    cli_csv_field(f, dm ? dm : l.kernel);
    free(dm);
    fputc('\n', f);
  }
  ds_iter_free(it);
  return rc < 0 ? -1 : 0;
}

static int sub_export(opts *o) {
  if (o->npos != 1)
    return cli_usage_error("dataset", "export needs exactly one DB");
  if (o->format >= 0 && o->format != CLI_FMT_CSV)
    return cli_usage_error("dataset", "export writes csv only");
  ds_db *db;
  int rc = open_db(o->pos[0], DS_READONLY, &db);
  if (rc) return rc;
  export_data e;
  memset(&e, 0, sizeof e);
  cli_out out;
  memset(&out, 0, sizeof out);
  int lrc = export_load(db, &e);
  if (lrc < 0) {
    if (lrc == -2) cli_error("out of memory");
    else cli_error("%s", ds_errmsg(db));
    rc = KCAST_EXIT_USER;
    goto out;
  }
  /* -o FILE: whole or not at all; stdout is checked by main. */
  if (o->output && cli_out_open(&out, o->output)) {
    rc = KCAST_EXIT_USER;
    goto out;
  }
  if (export_write(db, &e, o->output ? out.f : stdout, &o->filter) < 0) {
    cli_error("%s", ds_errmsg(db));
    rc = KCAST_EXIT_USER;
  }
  if (o->output && cli_out_close(&out, rc == 0) && !rc) rc = KCAST_EXIT_USER;
out:
  export_free(&e);
  ds_close(db);
  return rc;
}

/* ------------------------------------------------------------------ merge -- */

static int sub_merge(opts *o) {
  if (o->npos < 2)
    return cli_usage_error("dataset", "merge needs OUT and at least one IN");
  if (o->format >= 0 || o->output)
    return cli_usage_error("dataset", "merge takes no --format or -o");

  /* Check every input first, so a bad one merges nothing. */
  for (int i = 1; i < o->npos; i++) {
    ds_db *in;
    int rc = open_db(o->pos[i], DS_READONLY, &in);
    if (rc) return rc;
    ds_close(in);
  }
  ds_db *db;
  int rc = open_db(o->pos[0], DS_CREATE, &db);
  if (rc) return rc;
  for (int i = 1; i < o->npos && !rc; i++) {
    if (ds_merge(db, o->pos[i], o->replace ? DS_MERGE_REPLACE : 0) < 0) {
      cli_error("%s", ds_errmsg(db));
      rc = KCAST_EXIT_USER;
    }
  }
  ds_close(db);
  return rc;
}

/* -------------------------------------------------------- import-mangrove -- */

/* The command line as one string for the runs table (malloc'd; NULL on
   ENOMEM, then no run is recorded). */
static char *join_argv(int argc, char **argv) {
  size_t n = sizeof "kcast";
  for (int i = 0; i < argc; i++) n += strlen(argv[i]) + 1;
  char *s = malloc(n);
  if (!s) return NULL;
  strcpy(s, "kcast");
  for (int i = 0; i < argc; i++) {
    strcat(s, " ");
    strcat(s, argv[i]);
  }
  return s;
}

static int sub_import_mangrove(int argc, char **argv) {
  ds_mangrove_opts mo;
  memset(&mo, 0, sizeof mo);
  const char *out = NULL;
  /* the command line as typed, before the parser reorders argv */
  char *cmdline = join_argv(argc, argv);
  enum { M_FEATURES = CLI_OPT_OWN, M_TIME, M_POWER, M_GPU };
  static const struct option lo[] = {
    {"features", required_argument, NULL, M_FEATURES},
    {"time", required_argument, NULL, M_TIME},
    {"power", required_argument, NULL, M_POWER},
    {"gpu", required_argument, NULL, M_GPU},
    {"output", required_argument, NULL, 'o'},
    {NULL, 0, NULL, 0},
  };
  cli_opts g;
  cli_opts_init(&g, "dataset", argc - 1, argv + 1, "o:", 0);
  cli_opts_add(&g, lo);
  for (int c; (c = cli_opts_next(&g)) != CLI_OPT_END;) {
    if (c == CLI_OPT_ERR) { free(cmdline); return g.status; }
    switch (c) {
      case M_FEATURES: mo.features = g.arg; break;
      case M_TIME: mo.time = g.arg; break;
      case M_POWER: mo.power = g.arg; break;
      case M_GPU: mo.gpu = g.arg; break;
      case 'o': out = g.arg; break;
    }
  }
  int rc = KCAST_EXIT_USAGE;
  if (CLI_NOPERANDS(&g))
    cli_usage_error("dataset", "import-mangrove: unexpected argument '%s'", CLI_OPERANDS(&g)[0]);
  else if (!mo.features)
    cli_usage_error("dataset", "import-mangrove needs --features FLUX.db");
  else if (!out)
    cli_usage_error("dataset", "import-mangrove needs -o DB");
  else if ((mo.time || mo.power) && !mo.gpu)
    cli_usage_error("dataset", "import-mangrove: --time and --power need --gpu NAME");
  else
    rc = KCAST_EXIT_OK;
  if (rc) { free(cmdline); return rc; }
  cli_note_gpu_key(mo.gpu);
  /* A file this command creates is removed again when the import fails:
     the output is then exactly as it was (absent). */
  struct stat sb;
  int existed = stat(out, &sb) == 0;
  ds_db *db;
  rc = open_db(out, DS_CREATE, &db);
  if (rc) { free(cmdline); return rc; }
  mo.command = cmdline;
  ds_import_report r;
  if (ds_import_mangrove(db, &mo, &r) < 0) {
    cli_error("%s", ds_errmsg(db));
    rc = KCAST_EXIT_USER;
  } else {
    if (r.time_skipped)
      fprintf(stderr, "kcast: %s: %" PRId64 " measurement rows have no"
              " matching launch in %s; skipped\n", mo.time, r.time_skipped,
              mo.features);
    if (r.power_skipped)
      fprintf(stderr, "kcast: %s: %" PRId64 " measurement rows have no"
              " matching launch in %s; skipped\n", mo.power, r.power_skipped,
              mo.features);
    printf("%s: %" PRId64 " launches (%" PRId64 " feature values)",
           out, r.launches, r.features);
    if (mo.time) printf(", %" PRId64 " time_ns", r.time_rows);
    if (mo.power) printf(", %" PRId64 " power_w", r.power_rows);
    if (mo.gpu && (mo.time || mo.power)) printf(" values on %s", mo.gpu);
    printf("\n");
  }
  free(cmdline);
  ds_close(db);
  if (rc && !existed) remove(out);
  return rc;
}

/* ------------------------------------------------------- import-neusight -- */

static int sub_import_neusight(int argc, char **argv) {
  const char *out = NULL;
  char *cmdline = join_argv(argc, argv);
  static const struct option lo[] = {
    {"output", required_argument, NULL, 'o'},
    {NULL, 0, NULL, 0},
  };
  cli_opts g;
  cli_opts_init(&g, "dataset", argc - 1, argv + 1, "o:", 0);
  cli_opts_add(&g, lo);
  cli_opts_add(&g, cli_gpus_longopts);
  for (int c; (c = cli_opts_next(&g)) != CLI_OPT_END;) {
    if (c == CLI_OPT_ERR) { free(cmdline); return g.status; }
    if (c == 'o') out = g.arg;
  }
  int rc = KCAST_EXIT_OK;
  if (!CLI_NOPERANDS(&g))
    rc = cli_usage_error("dataset", "import-neusight needs at least one FILE (.csv or .csv.gz)");
  else if (!out)
    rc = cli_usage_error("dataset", "import-neusight needs -o DB");
  if (rc) { free(cmdline); return rc; }
  struct stat sb;
  int existed = stat(out, &sb) == 0;
  ds_db *db;
  rc = open_db(out, DS_CREATE, &db);
  if (rc) { free(cmdline); return rc; }
  ds_neusight_report r;
  if (ds_import_neusight(db, (const char *const *)CLI_OPERANDS(&g), (size_t)CLI_NOPERANDS(&g),
                         cmdline, &r) < 0) {
    cli_error("%s", ds_errmsg(db));
    rc = KCAST_EXIT_USER;
  } else {
    printf("%s: %" PRId64 " files, %" PRId64 " rows: %" PRId64 " launches (%" PRId64
           " feature values), %" PRId64 " time_ns values on %s\n", out, r.files, r.rows,
           r.launches, r.features, r.time_rows, r.gpus[0] ? r.gpus : "no GPU");
  }
  free(cmdline);
  ds_close(db);
  if (rc && !existed) remove(out);
  return rc;
}

int cmd_dataset(int argc, char **argv) {
  if (argc < 2)
    return cli_usage_error("dataset", "missing subcommand (stats, export, merge,"
                           " import-mangrove, import-kerneltuner, import-nsys, import-ncu,"
                           " import-neusight)");
  const char *sub = argv[1];
  if (!strcmp(sub, "import-mangrove")) return sub_import_mangrove(argc, argv);
  if (!strcmp(sub, "import-neusight")) return sub_import_neusight(argc, argv);
  if (!strcmp(sub, "import-kerneltuner")) return cmd_import_kerneltuner(argc - 1, argv + 1);
  if (!strcmp(sub, "import-nsys") || !strcmp(sub, "import-ncu"))
    return cmd_import_nsight(argc - 1, argv + 1);
  int (*fn)(opts *) = !strcmp(sub, "stats")    ? sub_stats
                      : !strcmp(sub, "export") ? sub_export
                      : !strcmp(sub, "merge")  ? sub_merge
                                               : NULL;
  static const char *const subs[] = {"stats", "export", "merge", "import-mangrove",
                                      "import-kerneltuner", "import-nsys", "import-ncu",
                                      "import-neusight"};
  if (!fn) return cli_unknown_subcommand("dataset", sub, subs, sizeof subs / sizeof *subs);
  opts o;
  int rc = parse_opts(argc - 1, argv + 1, &o);
  if (rc == KCAST_EXIT_OK && o.replace && fn != sub_merge)
    rc = cli_usage_error("dataset", "--replace is an option of merge");
  if (rc == KCAST_EXIT_OK) rc = fn(&o);
  cli_filter_free(&o.filter);
  return rc;
}
