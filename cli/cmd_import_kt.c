/*
 * cmd_import_kt.c -- `kcast dataset import-kerneltuner`: Kernel Tuner
 * cachefiles (measured times of every configuration of a tunable kernel)
 * and the kernel's source become a trainable dataset.  The import itself
 * is the library's (datasets/ds_kt.h: the launch geometry, the grouped
 * compile-and-emulate pipeline, the transactions); this file parses the
 * options and prints.
 */
#include "cli/cli.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "datasets/ds.h"
#include "datasets/ds_kt.h"

#define KT_CMD "dataset import-kerneltuner"

typedef struct kt_opts {
  const char *out, *source, *app, *gpu, *failures;
  const char *div[3], *bnames;
  int64_t psize[3];
  size_t pdims;
  unsigned long configs, seed, jobs, batch;
  int no_ptxas;
  cli_const_spec *consts;
  size_t nconsts;
  const char **copts;
  size_t ncopts;
} kt_opts;

static int parse_dims64(const char *s, int64_t out[3], size_t *n) {
  *n = 0;
  const char *p = s;
  while (*n < 3) {
    if (!isdigit((unsigned char)*p)) return -1;
    char *e;
    errno = 0;
    long long v = strtoll(p, &e, 10);
    if (errno || v < 1) return -1;
    out[(*n)++] = v;
    if (!*e) return 0;
    if (*e != ',') return -1;
    p = e + 1;
  }
  return -1;
}

/* The i-th comma-separated item of list into buf; 0 when absent. */
static int list_item(const char *list, size_t i, char *buf, size_t cap) {
  const char *p = list;
  for (size_t k = 0; k < i; k++) {
    p = strchr(p, ',');
    if (!p) return 0;
    p++;
  }
  size_t n = strcspn(p, ",");
  if (n == 0 || n >= cap) return 0;
  memcpy(buf, p, n);
  buf[n] = 0;
  return 1;
}

/* ------------------------------------------------------------ the command -- */

const char cmd_import_kt_usage[] =
    "usage: kcast dataset import-kerneltuner CACHEFILE... -o DB [--source FILE.cu]\n"
    "              [--kernel NAME] [--app NAME] [--gpu NAME] [--problem-size X[,Y[,Z]]]\n"
    "              [--grid-div-x LIST] [--grid-div-y LIST] [--grid-div-z LIST]\n"
    "              [--block-size-names X[,Y[,Z]]] [--arg SPEC]... [--const NAME=FILL]...\n"
    "              [--copt OPTION]... [--compiler nvcc|clang] [--arch sm_XX] [--shared BYTES]\n"
    "              [--sample CTAS] [--configs N] [--seed S] [-j JOBS] [--batch N]\n"
    "              [--budget INSNS] [--timeout SECONDS] [--oob error|warn]\n"
    "              [--tool-timeout SECONDS] [--failures FILE.csv] [--no-ptxas]\n";

static void kt_usage(FILE *f) {
  fputs(cmd_import_kt_usage, f);
}

static int kt_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int kt_usage_error(const char *fmt, ...) {
  char msg[1200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, "kcast: %s: %s\n", KT_CMD, msg);
  kt_usage(stderr);
  return KCAST_EXIT_USAGE;
}

void cli_gpu_row(const char *key, const char *device, ds_gpu *g) { ds_kt_gpu_row(key, device, g); }

static char *join_args(int argc, char **argv) {
  size_t n = sizeof "kcast dataset";
  for (int i = 0; i < argc; i++) n += strlen(argv[i]) + 1;
  char *s = malloc(n);
  if (!s) return NULL;
  strcpy(s, "kcast dataset");
  for (int i = 0; i < argc; i++) {
    strcat(s, " ");
    strcat(s, argv[i]);
  }
  return s;
}

/* The report's failed configurations as CSV (key, gpu, reason; gpu empty
   for a failure of the features' computation); 0, or -1 printed. */
static int write_failures(const char *path, const ds_kt_import_report *r) {
  cli_out f;
  if (cli_out_open(&f, path)) return -1;
  fputs("key,gpu,reason\n", f.f);
  for (size_t i = 0; i < r->nfails; i++) {
    const ds_kt_failure *x = &r->fails[i];
    cli_csv_field(f.f, x->key);
    fputc(',', f.f);
    cli_csv_field(f.f, x->gpu ? x->gpu : "");
    fputc(',', f.f);
    char one[2048];
    size_t n = 0;
    for (const char *p = x->reason; *p && n + 1 < sizeof one; p++) one[n++] = *p == '\n' ? ' ' : *p;
    one[n] = 0;
    cli_csv_field(f.f, one);
    fputc('\n', f.f);
  }
  return cli_out_close(&f, !ferror(f.f));
}

static void kt_note(void *ctx, const char *line) {
  (void)ctx;
  fprintf(stderr, "%s\n", line);
}

int cmd_import_kerneltuner(int argc, char **argv) {
  /* Own options; the launch options (--arg, --sample, --arch, ...) are
     cli_launch.c's, so they mean what they mean to kcast emulate. */
  enum { O_SOURCE = CLI_OPT_OWN, O_APP, O_GPU, O_PSIZE, O_DIVX, O_DIVY, O_DIVZ, O_BNAMES,
         O_CONST, O_COPT, O_CONFIGS, O_SEED, O_BATCH, O_JOBS, O_OUT, O_HELP, O_FAILURES,
         O_NO_PTXAS };
  static const struct option lopts[] = {
      {"output", required_argument, NULL, O_OUT},  {"source", required_argument, NULL, O_SOURCE},
      {"app", required_argument, NULL, O_APP},     {"gpu", required_argument, NULL, O_GPU},
      {"problem-size", required_argument, NULL, O_PSIZE},
      {"grid-div-x", required_argument, NULL, O_DIVX},
      {"grid-div-y", required_argument, NULL, O_DIVY},
      {"grid-div-z", required_argument, NULL, O_DIVZ},
      {"block-size-names", required_argument, NULL, O_BNAMES},
      {"const", required_argument, NULL, O_CONST | CLI_OPT_MANY},
      {"copt", required_argument, NULL, O_COPT | CLI_OPT_MANY},
      {"configs", required_argument, NULL, O_CONFIGS},
      {"seed", required_argument, NULL, O_SEED},   {"jobs", required_argument, NULL, O_JOBS},
      {"batch", required_argument, NULL, O_BATCH}, {"help", no_argument, NULL, O_HELP},
      {"failures", required_argument, NULL, O_FAILURES},
      {"no-ptxas", no_argument, NULL, O_NO_PTXAS},
      {NULL, 0, NULL, 0}};
  kt_opts o;
  memset(&o, 0, sizeof o);
  o.div[0] = "block_size_x";
  o.div[1] = "block_size_y";
  o.div[2] = "block_size_z";
  o.bnames = "block_size_x,block_size_y,block_size_z";
  o.seed = 1;
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  o.jobs = ncpu > 0 ? (unsigned long)ncpu : 1;
  int sample_set = 0;
  cli_launch L;
  size_t nfiles = 0;
  char *cmdline = NULL;
  int rc = cli_launch_init(&L, KT_CMD, argc * 2 + 2);
  if (rc) return rc;
  o.consts = calloc((size_t)argc + 1, sizeof *o.consts);
  o.copts = calloc((size_t)argc + 1, sizeof *o.copts);
  if (!o.consts || !o.copts) { cli_error("out of memory"); rc = KCAST_EXIT_USER; goto out; }
  rc = KCAST_EXIT_USAGE;
  cli_opts po;
  cli_opts_init(&po, "dataset", argc, argv, "o:j:h", 0);
  if (cli_opts_add(&po, lopts) || cli_opts_add(&po, cli_launch_longopts)) {
    cli_error("internal: too many options");
    goto out;
  }
  int c;
  while ((c = cli_opts_next(&po)) != CLI_OPT_END) {
    unsigned long u = 0;
    const char *val = po.arg;
    if (c == CLI_OPT_ERR) { rc = po.status; goto out; }
    if (c >= CLI_OPT_LAUNCH) {
      if (!strcmp(po.name, "--grid") || !strcmp(po.name, "--block")) {
        kt_usage_error("%s: the launch geometry follows from the cachefile (--problem-size, "
                       "--grid-div-x/y/z, --block-size-names)", po.name);
        goto out;
      }
      if (!strcmp(po.name, "--sample")) sample_set = 1;
      if (cli_launch_option(&L, &po, c) != 1) goto out;
      continue;
    }
    switch (c) {
      case 'o': case O_OUT: o.out = val; break;
      case 'h': case O_HELP: kt_usage(stdout); rc = KCAST_EXIT_OK; goto out;
      case O_SOURCE: o.source = val; break;
      case O_APP: o.app = val; break;
      case O_FAILURES: o.failures = val; break;
      case O_NO_PTXAS: o.no_ptxas = 1; break;
      case O_GPU: o.gpu = val; break;
      case O_PSIZE:
        if (parse_dims64(val, o.psize, &o.pdims)) {
          kt_usage_error("bad --problem-size '%s' (X[,Y[,Z]], positive integers)", val);
          goto out;
        }
        break;
      case O_DIVX: case O_DIVY: case O_DIVZ: o.div[c - O_DIVX] = val; break;
      case O_BNAMES: o.bnames = val; break;
      case O_CONST:
        if (cli_parse_const("dataset", val, &o.consts[o.nconsts])) goto out;
        o.nconsts++;
        break;
      case O_COPT: o.copts[o.ncopts++] = val; break;
      case O_CONFIGS: case O_SEED: case 'j': case O_JOBS: case O_BATCH:
        if (cli_parse_uint(val, c == O_SEED ? ULONG_MAX : 1000000000ul, &u) ||
            (c != O_SEED && u == 0)) {
          kt_usage_error("bad %s '%s' (expected a positive integer)", po.name, val);
          goto out;
        }
        if (c == O_CONFIGS) o.configs = u;
        else if (c == O_SEED) o.seed = u;
        else if (c == 'j' || c == O_JOBS) o.jobs = u > 256 ? 256 : u;
        else o.batch = u;
        break;
      default: kt_usage_error("unknown option '%s'", po.name ? po.name : "?"); goto out;
    }
  }
  char **operands = CLI_OPERANDS(&po);
  nfiles = (size_t)CLI_NOPERANDS(&po);
  if (!nfiles) { kt_usage_error("no cachefile given"); goto out; }
  if (!o.out || !*o.out) { kt_usage_error("needs -o DB"); goto out; }
  if (o.gpu && nfiles > 1) { kt_usage_error("--gpu names one GPU: give one cachefile with it"); goto out; }
  if (!o.source && (L.nargs || o.nconsts || o.ncopts)) {
    kt_usage_error("--arg, --const and --copt need --source");
    goto out;
  }
  if (!sample_set) L.cfg.sample_ctas = EMU_SAMPLE_AUTO;
  {
    struct stat sb;
    if (o.source && stat(o.source, &sb)) {
      cli_error("%s: %s", o.source, strerror(errno));
      rc = KCAST_EXIT_USER;
      goto out;
    }
  }
  char bn[3][256];
  const char *bnames[3] = {NULL, NULL, NULL};
  for (size_t d = 0; d < 3; d++)
    if (list_item(o.bnames, d, bn[d], sizeof bn[d])) bnames[d] = bn[d];
  if (!bnames[0]) { kt_usage_error("bad --block-size-names '%s'", o.bnames); rc = 2; goto out; }

  cmdline = join_args(argc, argv);
  ds_kt_import_opts io;
  memset(&io, 0, sizeof io);
  io.files = (const char *const *)operands;
  io.nfiles = nfiles;
  io.out = o.out;
  io.app = o.app;
  io.gpu = o.gpu;
  cli_note_gpu_key(o.gpu);
  io.kernel = L.kernel;
  io.grid.bnames = o.bnames;
  for (int d = 0; d < 3; d++) io.grid.div[d] = o.div[d];
  if (o.pdims) {
    memcpy(io.grid.psize, o.psize, sizeof io.grid.psize);
    for (size_t d = o.pdims; d < 3; d++) io.grid.psize[d] = 1;
  }
  io.failures = o.failures;
  io.no_ptxas = o.no_ptxas;
  io.configs = o.configs;
  io.seed = o.seed;
  io.command = cmdline;
  io.src.path = o.source;
  for (int d = 0; d < 3; d++) io.src.bnames[d] = bnames[d];
  io.src.fo = L.fo;
  io.src.copts = o.copts;
  io.src.ncopts = o.ncopts;
  io.src.args = L.args;
  io.src.nargs = L.nargs;
  io.src.consts = o.consts;
  io.src.nconsts = o.nconsts;
  io.src.cfg = L.cfg;
  io.src.jobs = o.jobs;
  io.src.batch = o.batch;
  cli_progress pr;
  cli_progress_init(&pr, "kcast: features");
  io.note = kt_note;
  io.progress = cli_progress_fn;
  io.ctx = &pr;
  ds_kt_import_report r;
  char err[2048] = "";
  int irc = ds_kt_import(&io, &r, err, sizeof err);
  if (o.failures && (!irc || r.nfails) && write_failures(o.failures, &r) && !irc) {
    ds_kt_import_report_free(&r);
    rc = KCAST_EXIT_USER;
    goto out;
  }
  if (irc) {
    cli_error("%s", err);
    rc = irc == 2 ? KCAST_EXIT_USAGE : KCAST_EXIT_USER;
    ds_kt_import_report_free(&r);
    goto out;
  }
  printf("%s: %zu configurations of %s (app %s): %zu time_ns values on", o.out, r.configs,
         r.kernel, r.app, r.times);
  for (size_t i = 0; i < r.ngpus; i++) printf("%s %s", i ? "," : "", r.gpus[i]);
  if (o.source)
    printf("; features: %zu computed, %zu kept, %zu failed", r.computed, r.kept, r.failed);
  else
    printf("; no features (no --source)");
  if (r.skipped) printf("; %zu skipped (failed on the GPU)", r.skipped);
  if (r.fallbacks)
    printf("; %zu group%s compiled one by one", r.fallbacks, r.fallbacks == 1 ? "" : "s");
  printf("\n");
  if (r.ptxas_failed)
    fprintf(stderr, "kcast: note: ptxas failed %zu time%s, so some configurations have no "
            "ptxas.* columns (a model needs them on every row); the first: %s\n",
            r.ptxas_failed, r.ptxas_failed == 1 ? "" : "s", r.ptxas_err);
  rc = r.configs && r.tried && r.failed == r.tried ? KCAST_EXIT_USER : KCAST_EXIT_OK;
  ds_kt_import_report_free(&r);
out:
  free(cmdline);
  free(o.consts);
  free(o.copts);
  cli_launch_free(&L);
  return rc;
}
