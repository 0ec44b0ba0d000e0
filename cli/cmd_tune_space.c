/*
 * cmd_tune_space.c -- `kcast tune-space`: the predicted time of every
 * configuration of a Kernel Tuner tuning space on one GPU, as a cachefile
 * Kernel Tuner 1.x loads in simulation mode and as a CSV ranked fastest
 * first -- the answer to "which configurations should I measure on GPU X?"
 * without the GPU.  The space is the cartesian product of --param lists
 * (Kernel Tuner's order: the last parameter varies fastest) or the
 * configurations of a cachefile measured elsewhere (--space); its features
 * come from the import's pipeline through the public API
 * (kcast_tunespace_compute), its times from a model (--model) or the
 * analytic estimate (--gpu alone).  Parses, calls, prints.
 */
#include "cli/cli.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "datasets/ds.h"
#include "include/kcast.h"

#define TS_CMD "tune-space"
#define TS_MAX_PARAMS 64
#define TS_MAX_CONFIGS 10000000ul

const char cmd_tune_space_usage[] =
    "usage: kcast tune-space --source FILE.cu (--param NAME=V,V,...... | --space CACHEFILE)\n"
    "              (--gpu G | --model MODEL [--gpu G]) [-o CACHEFILE.json] [--csv FILE|-]\n"
    "              [--kernel NAME] [--problem-size X[,Y[,Z]]] [--grid-div-x LIST]\n"
    "              [--grid-div-y LIST] [--grid-div-z LIST] [--block-size-names X[,Y[,Z]]]\n"
    "              [--arg SPEC]... [--const NAME=FILL]... [--copt OPTION]... [--arch sm_XX]\n"
    "              [--shared BYTES] [--sample CTAS] [-j JOBS] [--device-name NAME] [--top K]\n"
    "\n"
    "The predicted time of every configuration of a Kernel Tuner tuning space on\n"
    "one GPU: each configuration compiled as Kernel Tuner compiles it and emulated\n"
    "(the pipeline of dataset import-kerneltuner), then predicted by a model or the\n"
    "analytic estimate.  Written as a Kernel Tuner cachefile (-o) that\n"
    "tune_kernel(..., cache=FILE, simulation_mode=True) loads, so any of Kernel\n"
    "Tuner's strategies runs on the predicted space, and as a CSV ranked fastest\n"
    "first (--csv; default: the best --top on standard output).\n"
    "\n"
    "  --source FILE.cu      the kernel's source\n"
    "  --kernel NAME         the kernel (Kernel Tuner's kernel_name)\n"
    "  --param NAME=V,V,...  a tuning parameter and its values (repeat, in Kernel\n"
    "                        Tuner's order; the space is their cartesian product)\n"
    "  --space CACHEFILE     the configurations, kernel and problem size of a\n"
    "                        cachefile (measured on another GPU, say)\n"
    "  --problem-size, --grid-div-x/y/z, --block-size-names, --arg, --const,\n"
    "  --copt, --arch, --shared, --sample, -j   as for dataset import-kerneltuner\n"
    "  --gpu G               the GPU (the analytic estimate's without --model)\n"
    "  --model MODEL         a time model (.kcm); --gpu G for one of several GPUs (a\n"
    "                        model of one GPU answers for that one only); a note\n"
    "                        counts the predictions that rest on a feature outside\n"
    "                        the model's training range\n"
    "  -o CACHEFILE.json     the Kernel Tuner cachefile (times in ms)\n"
    "  --csv FILE|-          every configuration ranked: rank, key, the parameters,\n"
    "                        time_ns, lo_ns, hi_ns (the interval), error\n"
    "  --device-name NAME    the cachefile's device_name (default: the GPU table's\n"
    "                        full name of G, or the --space file's)\n"
    "  --top K               configurations printed when there is no --csv (10)\n";

typedef struct ts_opts {
  const char *source, *kernel, *space, *gpu, *model, *out, *csv, *device;
  const char *div[3], *bnames;
  int64_t psize[3];
  size_t pdims;
  unsigned long jobs, top;
  const char *params[TS_MAX_PARAMS];
  size_t nparams;
  const char **consts, **copts;
  size_t nconsts, ncopts;
} ts_opts;

static int ts_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int ts_usage_error(const char *fmt, ...) {
  char msg[1200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return cli_usage_error(TS_CMD, "%s", msg);
}

/* The space: names[np] and values[n * np] (strings into bufs or a file). */
typedef struct space {
  size_t np, n;
  char *names[TS_MAX_PARAMS];
  char **values;                 /* n * np, owned */
} space;

static void space_free(space *s) {
  for (size_t p = 0; p < s->np; p++) free(s->names[p]);
  for (size_t i = 0; s->values && i < s->n * s->np; i++) free(s->values[i]);
  free(s->values);
  memset(s, 0, sizeof *s);
}

/* --param NAME=V,V,... items into the cartesian product; 0, -1 (printed)
   or -2 (a usage error, printed). */
static int product(const ts_opts *o, space *s) {
  size_t nv[TS_MAX_PARAMS];
  char **vals[TS_MAX_PARAMS];
  memset(vals, 0, sizeof vals);
  size_t total = 1;
  int rc = -1;
  for (size_t p = 0; p < o->nparams; p++) {
    const char *t = o->params[p], *eq = strchr(t, '=');
    if (!eq || eq == t || !eq[1]) {
      ts_usage_error("--param '%s': expected NAME=V[,V...]", t);
      rc = -2;
      goto out;
    }
    if (!(s->names[p] = strndup(t, (size_t)(eq - t)))) goto nomem;
    s->np = p + 1;
    nv[p] = 0;
    for (const char *v = eq + 1;;) {
      const char *e = strchr(v, ',');
      size_t l = e ? (size_t)(e - v) : strlen(v);
      char **nvp = realloc(vals[p], (nv[p] + 1) * sizeof *nvp);
      if (!nvp) goto nomem;
      vals[p] = nvp;
      if (!(vals[p][nv[p]++] = strndup(v, l))) goto nomem;
      if (!e) break;
      v = e + 1;
    }
    if (total > TS_MAX_CONFIGS / nv[p]) {
      ts_usage_error("the space has more than %lu configurations", TS_MAX_CONFIGS);
      rc = -2;
      goto out;
    }
    total *= nv[p];
  }
  s->n = total;
  if (!(s->values = calloc(total * s->np + 1, sizeof *s->values))) goto nomem;
  for (size_t i = 0; i < total; i++) {
    size_t r = i;
    for (size_t p = s->np; p-- > 0;) { /* the last parameter varies fastest */
      if (!(s->values[i * s->np + p] = strdup(vals[p][r % nv[p]]))) goto nomem;
      r /= nv[p];
    }
  }
  rc = 0;
  goto out;
nomem:
  cli_error("out of memory");
out:
  for (size_t p = 0; p < o->nparams; p++) {
    for (size_t k = 0; vals[p] && k < nv[p]; k++) free(vals[p][k]);
    free(vals[p]);
  }
  return rc;
}

/* The configurations of a cachefile. */
static int from_cachefile(const char *path, space *s, ds_kt_file *f) {
  char err[1200];
  if (ds_kt_read(path, f, err, sizeof err)) { cli_error("%s", err); return -1; }
  if (f->nparams > TS_MAX_PARAMS) { cli_error("%s: more than %d parameters", path, TS_MAX_PARAMS); return -1; }
  s->np = f->nparams;
  s->n = f->nconfigs;
  if (!s->n) { cli_error("%s: no configurations", path); return -1; }
  if (!(s->values = calloc(s->n * s->np + 1, sizeof *s->values))) { cli_error("out of memory"); return -1; }
  for (size_t p = 0; p < s->np; p++)
    if (!(s->names[p] = strdup(f->params[p]))) { cli_error("out of memory"); return -1; }
  for (size_t i = 0; i < s->n; i++)
    for (size_t p = 0; p < s->np; p++)
      if (!(s->values[i * s->np + p] = strdup(f->configs[i].values[p]))) {
        cli_error("out of memory");
        return -1;
      }
  return 0;
}

typedef struct ranked { size_t i; double t; } ranked;
static int cmp_ranked(const void *a, const void *b) {
  const ranked *x = a, *y = b;
  if (isnan(x->t) != isnan(y->t)) return isnan(x->t) ? 1 : -1;
  if (x->t != y->t) return x->t < y->t ? -1 : 1;
  return x->i < y->i ? -1 : x->i > y->i;
}

int cmd_tune_space(int argc, char **argv) {
  enum { O_SOURCE = CLI_OPT_OWN, O_KERNEL, O_PARAM, O_SPACE, O_GPU, O_MODEL, O_CSV, O_DEVICE,
         O_PSIZE, O_DIVX, O_DIVY, O_DIVZ, O_BNAMES, O_CONST, O_COPT, O_JOBS, O_TOP, O_OUT,
         O_HELP };
  static const struct option lopts[] = {
      {"source", required_argument, NULL, O_SOURCE}, {"param", required_argument, NULL, O_PARAM | CLI_OPT_MANY},
      {"space", required_argument, NULL, O_SPACE},   {"gpu", required_argument, NULL, O_GPU},
      {"model", required_argument, NULL, O_MODEL},   {"csv", required_argument, NULL, O_CSV},
      {"device-name", required_argument, NULL, O_DEVICE},
      {"problem-size", required_argument, NULL, O_PSIZE},
      {"grid-div-x", required_argument, NULL, O_DIVX},
      {"grid-div-y", required_argument, NULL, O_DIVY},
      {"grid-div-z", required_argument, NULL, O_DIVZ},
      {"block-size-names", required_argument, NULL, O_BNAMES},
      {"const", required_argument, NULL, O_CONST | CLI_OPT_MANY},
      {"copt", required_argument, NULL, O_COPT | CLI_OPT_MANY},
      {"jobs", required_argument, NULL, O_JOBS},     {"top", required_argument, NULL, O_TOP},
      {"output", required_argument, NULL, O_OUT},    {"help", no_argument, NULL, O_HELP},
      {NULL, 0, NULL, 0}};
  ts_opts o;
  memset(&o, 0, sizeof o);
  o.top = 10;
  space sp;
  memset(&sp, 0, sizeof sp);
  ds_kt_file kf;
  memset(&kf, 0, sizeof kf);
  cli_launch L;
  kcast_tunespace *ts = NULL;
  kcast_model *model = NULL;
  double *tn = NULL, *tlo = NULL, *thi = NULL;
  ranked *rk = NULL;
  int rc = cli_launch_init(&L, TS_CMD, argc * 2 + 2);
  if (rc) return rc;
  o.consts = calloc((size_t)argc + 1, sizeof *o.consts);
  o.copts = calloc((size_t)argc + 1, sizeof *o.copts);
  rc = KCAST_EXIT_USER;
  if (!o.consts || !o.copts) { cli_error("out of memory"); goto out; }
  rc = KCAST_EXIT_USAGE;
  cli_opts po;
  cli_opts_init(&po, TS_CMD, argc, argv, "o:j:h", 0);
  if (cli_opts_add(&po, lopts) || cli_opts_add(&po, cli_launch_longopts) ||
      cli_opts_add(&po, cli_gpus_longopts)) {
    cli_error("internal: too many options");
    goto out;
  }
  int sample_set = 0, c;
  while ((c = cli_opts_next(&po)) != CLI_OPT_END) {
    const char *v = po.arg;
    unsigned long u = 0;
    if (c == CLI_OPT_ERR) { rc = po.status; goto out; }
    if (c >= CLI_OPT_LAUNCH && c < CLI_OPT_GPUS) {
      if (!strcmp(po.name, "--grid") || !strcmp(po.name, "--block")) {
        ts_usage_error("%s: the launch geometry follows from the space (--problem-size, "
                       "--grid-div-x/y/z, --block-size-names)", po.name);
        goto out;
      }
      if (!strcmp(po.name, "--kernel")) { o.kernel = v; continue; }
      if (!strcmp(po.name, "--sample")) sample_set = 1;
      if (cli_launch_option(&L, &po, c) != 1) goto out;
      continue;
    }
    switch (c) {
      case 'o': case O_OUT: o.out = v; break;
      case 'h': case O_HELP: fputs(cmd_tune_space_usage, stdout); rc = KCAST_EXIT_OK; goto out;
      case O_SOURCE: o.source = v; break;
      case O_KERNEL: o.kernel = v; break;
      case O_PARAM:
        if (o.nparams == TS_MAX_PARAMS) { ts_usage_error("more than %d --param", TS_MAX_PARAMS); goto out; }
        o.params[o.nparams++] = v;
        break;
      case O_SPACE: o.space = v; break;
      case O_GPU: o.gpu = v; break;
      case O_MODEL: o.model = v; break;
      case O_CSV: o.csv = v; break;
      case O_DEVICE: o.device = v; break;
      case O_PSIZE: {
        o.pdims = 0;
        const char *p = v;
        while (o.pdims < 3) {
          char *e;
          errno = 0;
          long long x = isdigit((unsigned char)*p) ? strtoll(p, &e, 10) : -1;
          if (x < 1 || errno) break;
          o.psize[o.pdims++] = x;
          if (!*e) { p = NULL; break; }
          if (*e != ',') break;
          p = e + 1;
        }
        if (p) { ts_usage_error("bad --problem-size '%s' (X[,Y[,Z]], positive integers)", v); goto out; }
        break;
      }
      case O_DIVX: case O_DIVY: case O_DIVZ: o.div[c - O_DIVX] = v; break;
      case O_BNAMES: o.bnames = v; break;
      case O_CONST: o.consts[o.nconsts++] = v; break;
      case O_COPT: o.copts[o.ncopts++] = v; break;
      case 'j': case O_JOBS: case O_TOP:
        if (cli_parse_uint(v, 100000, &u) || u == 0) {
          ts_usage_error("bad %s '%s' (expected a positive integer)", po.name, v);
          goto out;
        }
        if (c == O_TOP) o.top = u; else o.jobs = u;
        break;
      default: ts_usage_error("unknown option '%s'", po.name ? po.name : "?"); goto out;
    }
  }
  if (CLI_NOPERANDS(&po)) { ts_usage_error("unexpected argument '%s'", CLI_OPERANDS(&po)[0]); goto out; }
  if (!o.source) { ts_usage_error("needs --source FILE.cu"); goto out; }
  if (!o.nparams == !o.space) { ts_usage_error("give --param NAME=V,... or --space CACHEFILE"); goto out; }
  if (!o.gpu && !o.model) { ts_usage_error("needs --gpu G (the analytic estimate) or --model MODEL"); goto out; }
  if (!o.space && !o.kernel) { ts_usage_error("needs --kernel NAME (or --space)"); goto out; }
  if (!o.space && !o.pdims) { ts_usage_error("needs --problem-size (or --space)"); goto out; }
  rc = KCAST_EXIT_USER;
  int src = o.space ? from_cachefile(o.space, &sp, &kf) : product(&o, &sp);
  if (src) {
    rc = src == -2 ? KCAST_EXIT_USAGE : KCAST_EXIT_USER;
    goto out;
  }
  if (o.model && kcast_model_load(o.model, &model)) { cli_error("%s", kcast_last_error()); goto out; }
  if (model && kcast_model_expect(model, KCAST_TARGET_TIME)) { cli_error("%s", kcast_last_error()); goto out; }
  const char *gpu = o.gpu ? o.gpu : model ? kcast_model_gpu(model) : NULL;
  /* the GPU: its table row names the device */
  const char *device = o.device;
  char devbuf[256] = "";
  if (!device && o.space) device = kf.device_name;
  if (!device) {
    kcast_gpu_desc d;
    d.size = sizeof d;
    for (size_t i = 0; i < kcast_gpu_count() && !devbuf[0]; i++)
      if (!kcast_gpu_info(i, &d) && gpu && !strcasecmp(d.name, gpu))
        snprintf(devbuf, sizeof devbuf, "%s", d.full_name);
    device = devbuf[0] ? devbuf : gpu ? gpu : "unknown";
  }

  const char *args[1024];
  if (L.nargs > 1024) { cli_error("more than 1024 --arg"); goto out; }
  for (unsigned a = 0; a < L.nargs; a++) args[a] = L.args[a].text;
  kcast_tunespace_spec s;
  memset(&s, 0, sizeof s);
  s.size = sizeof s;
  s.source = o.source;
  s.kernel = o.kernel ? o.kernel : kf.kernel_name;
  if (o.pdims) {
    memcpy(s.problem_size, o.psize, o.pdims * sizeof *o.psize);
    s.problem_size_scalar = o.pdims == 1;
  } else {
    if (!kf.ndims) { cli_error("%s: problem_size is not a list of numbers; give --problem-size", o.space); goto out; }
    memcpy(s.problem_size, kf.problem_size, kf.ndims * sizeof *kf.problem_size);
    s.problem_size_scalar = 0;
  }
  for (int d = 0; d < 3; d++) s.grid_div[d] = o.div[d];
  s.block_size_names = o.bnames;
  s.nparams = sp.np;
  s.param_names = (const char *const *)sp.names;
  s.nconfigs = sp.n;
  s.values = (const char *const *)sp.values;
  s.args = args;
  s.nargs = L.nargs;
  s.consts = o.consts;
  s.nconsts = o.nconsts;
  s.compiler_options = o.copts;
  s.ncompiler_options = o.ncopts;
  s.arch = L.fo.arch;
  s.shared_bytes = L.cfg.shared_bytes;
  s.sample_ctas = sample_set ? L.cfg.sample_ctas : 0; /* 0: adaptive */
  s.jobs = (unsigned)o.jobs;
  if (kcast_tunespace_compute(&s, &ts)) {
    cli_error("%s", kcast_last_error());
    goto out;
  }
  size_t n = kcast_tunespace_count(ts), nok = 0, nout = 0, other = 0;
  const char *out_feat = NULL; /* the first answer's feature outside the model's range */
  tn = malloc((n + 1) * sizeof *tn);
  tlo = malloc((n + 1) * sizeof *tlo);
  thi = malloc((n + 1) * sizeof *thi);
  rk = malloc((n + 1) * sizeof *rk);
  if (!tn || !tlo || !thi || !rk) { cli_error("out of memory"); goto out; }
  for (size_t i = 0; i < n; i++) {
    const kcast_features *fs = kcast_tunespace_features(ts, i);
    kcast_prediction p;
    tn[i] = tlo[i] = thi[i] = NAN;
    if (fs) {
      kcast_status st = model ? kcast_predict_gpu(model, o.gpu, fs, 0.9, &p)
                              : kcast_predict_analytic(gpu, fs, &p, NULL);
      if (st) { cli_error("configuration %s: %s", kcast_tunespace_key(ts, i), kcast_last_error()); goto out; }
      /* what the forest's answer rests on: a feature outside its training
         range (an operator model on a PTX kernel has every opr.* at 0) */
      unsigned fl = 0;
      const char *feat = NULL;
      if (model && !kcast_predict_check(model, o.gpu, fs, &fl, &feat)) {
        if ((fl & KCAST_CHECK_OUT_OF_RANGE) && !nout++) out_feat = feat;
        /* a model of another analytic estimate: said once (as kcast
           predict says it) */
        if ((fl & KCAST_CHECK_OTHER_ESTIMATE) && !other++)
          fprintf(stderr, "kcast: warning: %s: its base comes from another version of the "
                  "analytic estimate than this kcast's: its corrections may not fit (train it "
                  "again)\n", o.model);
      }
      tn[i] = p.value;
      tlo[i] = p.lo;
      thi[i] = p.hi;
      nok++;
    }
    rk[i].i = i;
    rk[i].t = tn[i];
  }
  qsort(rk, n, sizeof *rk, cmp_ranked);
  if (o.out && kcast_tunespace_write(ts, o.out, device, tn)) { cli_error("%s", kcast_last_error()); goto out; }
  /* the ranked list */
  cli_out co = {0};
  FILE *f = stdout;
  int to_file = o.csv && strcmp(o.csv, "-");
  if (to_file) {
    if (cli_out_open(&co, o.csv)) goto out;
    f = co.f;
  }
  size_t shown = o.csv ? n : (o.top < n ? o.top : n);
  fputs("rank,key", f);
  for (size_t p = 0; p < sp.np; p++) { fputc(',', f); cli_csv_field(f, sp.names[p]); }
  fputs(",time_ns,lo_ns,hi_ns,error\n", f);
  for (size_t r = 0; r < shown; r++) {
    size_t i = rk[r].i;
    if (!isnan(tn[i])) fprintf(f, "%zu", r + 1);
    fputc(',', f);
    cli_csv_field(f, kcast_tunespace_key(ts, i));
    for (size_t p = 0; p < sp.np; p++) { fputc(',', f); cli_csv_field(f, sp.values[i * sp.np + p]); }
    if (isnan(tn[i])) fputs(",,,,", f);
    else fprintf(f, ",%.9g,%.9g,%.9g,", tn[i], tlo[i], thi[i]);
    cli_csv_field(f, kcast_tunespace_error(ts, i) ? kcast_tunespace_error(ts, i) : "");
    fputc('\n', f);
  }
  if (to_file && cli_out_close(&co, !ferror(co.f))) goto out;
  fprintf(stderr, "kcast: %zu configurations of %s, %zu predicted on %s (%s)%s%s\n", n, s.kernel,
          nok, gpu ? gpu : "?", model ? o.model : "the analytic estimate", o.out ? "; cachefile " : "",
          o.out ? o.out : "");
  if (nout)
    fprintf(stderr, "kcast: note: %zu of %zu predictions rest on a feature outside the training "
            "range of %s (the first: %s): extrapolations, whose ranking may not hold\n", nout,
            nok, o.model, out_feat ? out_feat : "?");
  if (nok < n)
    fprintf(stderr, "kcast: %zu configurations failed (their error is in the ranked list; the "
            "cachefile holds RuntimeFailedConfig)\n", n - nok);
  rc = nok ? KCAST_EXIT_OK : KCAST_EXIT_USER;
out:
  free(tn);
  free(tlo);
  free(thi);
  free(rk);
  kcast_tunespace_free(ts);
  kcast_model_free(model);
  space_free(&sp);
  ds_kt_free(&kf);
  free(o.consts);
  free(o.copts);
  cli_launch_free(&L);
  return rc;
}
