/*
 * api_tune.c -- Kernel Tuner tuning spaces (kcast_tunespace_*): the
 * features of every configuration of a tunable kernel, computed by the
 * import's pipeline (datasets/ds_kt.h: Kernel Tuner's geometry, grouped
 * compilation, worker threads), and the space written back as a Kernel
 * Tuner cachefile with predicted times (ds_kt_write_cachefile), which
 * Kernel Tuner loads in simulation mode.  `kcast tune-space` and the Python
 * package's kcast.kerneltuner call these.
 */
#include "api/api_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "datasets/ds.h"
#include "datasets/ds_kt.h"
#include "emulator/emu_args.h"

typedef struct ts_cfg {
  char *key;                 /* values joined by commas */
  ds_kt_job job;             /* its computation (names/values into ts) */
  kcast_features *fs;        /* its features, NULL when it failed */
  char *err;                 /* why it failed */
} ts_cfg;

struct kcast_tunespace {
  char *kernel;
  int64_t psize[3];
  size_t pdims;
  int scalar;
  size_t nparams;
  char **names;              /* nparams */
  char **values;             /* n * nparams, owned */
  size_t n;
  ts_cfg *cfg;
};

void kcast_tunespace_free(kcast_tunespace *ts) {
  if (!ts) return;
  for (size_t i = 0; i < ts->n; i++) {
    free(ts->cfg[i].key);
    ds_kt_job_free(&ts->cfg[i].job);
    kcast_features_free(ts->cfg[i].fs);
    free(ts->cfg[i].err);
  }
  free(ts->cfg);
  for (size_t i = 0; ts->values && i < ts->n * ts->nparams; i++) free(ts->values[i]);
  free(ts->values);
  for (size_t p = 0; ts->names && p < ts->nparams; p++) free(ts->names[p]);
  free(ts->names);
  free(ts->kernel);
  free(ts);
}

size_t kcast_tunespace_count(const kcast_tunespace *ts) { return ts ? ts->n : 0; }

const char *kcast_tunespace_key(const kcast_tunespace *ts, size_t i) {
  return ts && i < ts->n ? ts->cfg[i].key : NULL;
}

const kcast_features *kcast_tunespace_features(const kcast_tunespace *ts, size_t i) {
  return ts && i < ts->n ? ts->cfg[i].fs : NULL;
}

const char *kcast_tunespace_error(const kcast_tunespace *ts, size_t i) {
  return ts && i < ts->n ? ts->cfg[i].err : NULL;
}

kcast_status kcast_tunespace_geometry(const kcast_tunespace *ts, size_t i, unsigned grid[3],
                                      unsigned block[3]) {
  if (!ts || i >= ts->n || !grid || !block)
    return api_fail(KCAST_E_ARG, "kcast_tunespace_geometry: %s",
                    !ts ? "ts is NULL" : i >= ts->n ? "index out of range" : "grid/block is NULL");
  memcpy(grid, ts->cfg[i].job.grid, 3 * sizeof *grid);
  memcpy(block, ts->cfg[i].job.block, 3 * sizeof *block);
  return KCAST_OK;
}

/* Keep the features as they finish (the pipeline frees nothing itself). */
static int keep_done(void *ctx, ds_kt_job *const *done, size_t n) {
  (void)ctx;
  (void)done;
  (void)n;
  return 0;
}

kcast_status kcast_tunespace_compute(const kcast_tunespace_spec *s, kcast_tunespace **out) {
  static const char fn[] = "kcast_tunespace_compute";
  if (!out) return api_fail(KCAST_E_ARG, "%s: ts out-parameter is NULL", fn);
  *out = NULL;
  if (!s || s->size < sizeof *s)
    return api_fail(KCAST_E_ARG, "%s: %s", fn, !s ? "spec is NULL" : "spec->size too small");
  if (!s->source || !s->kernel || !s->param_names || (s->nconfigs && !s->values) ||
      (s->nargs && !s->args) || (s->nconsts && !s->consts) ||
      (s->ncompiler_options && !s->compiler_options))
    return api_fail(KCAST_E_ARG, "%s: a field of the spec is NULL (source, kernel, "
                    "param_names, values, args, consts, compiler_options)", fn);
  if (!s->nconfigs) return api_fail(KCAST_E_ARG, "%s: no configurations", fn);
  if (access(s->source, R_OK)) return api_fail(KCAST_E_IO, "%s: %s", s->source, strerror(errno));
  if (!ds_kt_valid_name(s->kernel))
    return api_fail(KCAST_E_ARG, "%s: kernel name '%.200s' is not a C identifier", fn, s->kernel);
  for (size_t p = 0; p < s->nparams; p++) {
    if (!s->param_names[p] || !ds_kt_valid_name(s->param_names[p]))
      return api_fail(KCAST_E_ARG, "%s: parameter %zu '%.200s' is not a C identifier", fn, p,
                      s->param_names[p] ? s->param_names[p] : "(null)");
    for (size_t q = 0; q < p; q++)
      if (!strcmp(s->param_names[q], s->param_names[p]))
        return api_fail(KCAST_E_ARG, "%s: parameter %s is named twice", fn, s->param_names[p]);
  }
  for (size_t i = 0; i < s->nconfigs * s->nparams; i++)
    if (!s->values[i] || !ds_kt_valid_value(s->values[i]))
      return api_fail(KCAST_E_ARG, "%s: configuration %zu: %s = '%.80s' is not a number, "
                      "identifier or simple expression on one line", fn, i / s->nparams,
                      s->param_names[i % s->nparams], s->values[i] ? s->values[i] : "(null)");
  int64_t ps[3];
  size_t pdims = 0;
  for (int d = 0; d < 3; d++) {
    ps[d] = s->problem_size[d] ? s->problem_size[d] : 1;
    if (ps[d] < 1) return api_fail(KCAST_E_ARG, "%s: problem_size[%d] < 1", fn, d);
    if (s->problem_size[d]) pdims = (size_t)d + 1;
  }
  if (!pdims) return api_fail(KCAST_E_ARG, "%s: no problem size", fn);
  /* launch arguments and constant fills, as kcast emulate reads them */
  emu_arg_spec *args = calloc(s->nargs + 1, sizeof *args);
  emu_const_spec *consts = calloc(s->nconsts + 1, sizeof *consts);
  kcast_tunespace *ts = calloc(1, sizeof *ts);
  ds_kt_job **jobs = calloc(s->nconfigs, sizeof *jobs);
  char *kname = NULL;
  kcast_status st = KCAST_E_NOMEM;
  if (!args || !consts || !ts || !jobs) goto nomem;
  for (size_t a = 0; a < s->nargs; a++) {
    char why[512];
    args[a].text = s->args[a];
    if (!s->args[a] || emu_arg_parse(&args[a], why, sizeof why)) {
      st = api_fail(KCAST_E_ARG, "%s: argument %zu '%s': %s", fn, a,
                    s->args[a] ? s->args[a] : "(null)", s->args[a] ? why : "NULL");
      goto out;
    }
  }
  for (size_t c = 0; c < s->nconsts; c++) {
    char tail[512];
    if (!s->consts[c] || emu_const_parse(s->consts[c], &consts[c], tail, sizeof tail)) {
      st = api_fail(KCAST_E_ARG, "%s: constant fill '%s'%s", fn,
                    s->consts[c] ? s->consts[c] : "(null)", s->consts[c] ? tail : ": NULL");
      goto out;
    }
  }
  memcpy(ts->psize, ps, sizeof ps);
  ts->pdims = pdims;
  ts->scalar = s->problem_size_scalar && pdims == 1;
  ts->nparams = s->nparams;
  if (!(ts->kernel = strdup(s->kernel)) ||
      !(ts->names = calloc(s->nparams + 1, sizeof *ts->names)) ||
      !(ts->values = calloc(s->nconfigs * s->nparams + 1, sizeof *ts->values)) ||
      !(ts->cfg = calloc(s->nconfigs, sizeof *ts->cfg)))
    goto nomem;
  for (size_t p = 0; p < s->nparams; p++)
    if (!(ts->names[p] = strdup(s->param_names[p]))) goto nomem;
  ts->n = s->nconfigs;
  for (size_t i = 0; i < s->nconfigs * s->nparams; i++)
    if (!(ts->values[i] = strdup(s->values[i]))) goto nomem;
  /* Kernel Tuner's geometry; a configuration no GPU launches fails alone */
  const char *bnames = s->block_size_names ? s->block_size_names
                                           : "block_size_x,block_size_y,block_size_z";
  char bn[3][256];
  ds_kt_source src;
  memset(&src, 0, sizeof src);
  for (int d = 0; d < 3; d++) {
    const char *p = bnames;
    for (int k = 0; k < d && p; k++) p = (p = strchr(p, ',')) ? p + 1 : NULL;
    size_t l = p ? strcspn(p, ",") : 0;
    if (l && l < sizeof bn[d]) {
      memcpy(bn[d], p, l);
      bn[d][l] = 0;
      src.bnames[d] = bn[d];
    }
  }
  if (!src.bnames[0]) { st = api_fail(KCAST_E_ARG, "%s: bad block_size_names '%s'", fn, bnames); goto out; }
  ds_kt_grid g;
  memset(&g, 0, sizeof g);
  g.bnames = bnames;
  for (int d = 0; d < 3; d++) g.div[d] = s->grid_div[d] ? s->grid_div[d] : src.bnames[d];
  memcpy(g.psize, ps, sizeof ps);
  size_t njobs = 0;
  for (size_t i = 0; i < ts->n; i++) {
    ts_cfg *c = &ts->cfg[i];
    size_t kl = 1;
    for (size_t p = 0; p < s->nparams; p++) kl += strlen(ts->values[i * s->nparams + p]) + 1;
    if (!(c->key = malloc(kl))) goto nomem;
    c->key[0] = 0;
    for (size_t p = 0; p < s->nparams; p++) {
      if (p) strcat(c->key, ",");
      strcat(c->key, ts->values[i * s->nparams + p]);
    }
    c->job.key = c->key;
    c->job.nparams = s->nparams;
    c->job.names = (const char *const *)ts->names;
    c->job.values = (const char *const *)ts->values + i * s->nparams;
    char why[400];
    if (ds_kt_geometry(&g, c->job.names, c->job.values, s->nparams, c->job.grid, c->job.block,
                       why, sizeof why)) {
      if (!(c->err = strdup(why))) goto nomem;
      continue;
    }
    if ((uint64_t)c->job.block[0] * c->job.block[1] * c->job.block[2] > 1024) {
      snprintf(why, sizeof why, "a block of %u x %u x %u threads (more than 1024)",
               c->job.block[0], c->job.block[1], c->job.block[2]);
      if (!(c->err = strdup(why))) goto nomem;
      continue;
    }
    jobs[njobs++] = &c->job;
  }
  src.path = s->source;
  src.kernel = s->kernel;
  src.fo.compiler = FE_NVCC;
  src.fo.arch = s->arch;
  src.copts = s->compiler_options;
  src.ncopts = s->ncompiler_options;
  src.args = args;
  src.nargs = (unsigned)s->nargs;
  src.consts = consts;
  src.nconsts = s->nconsts;
  emu_launch_cfg_init(&src.cfg);
  src.cfg.shared_bytes = (size_t)s->shared_bytes;
  src.cfg.sample_ctas = s->sample_ctas ? s->sample_ctas : EMU_SAMPLE_AUTO;
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  src.jobs = s->jobs ? s->jobs : (unsigned long)(ncpu > 0 ? ncpu : 1);
  if (njobs) {
    char err[2048] = "";
    ds_kt_stats kst;
    int crc = ds_kt_compute(&src, jobs, njobs, keep_done, NULL, &kname, &kst, err, sizeof err);
    if (crc == 1) { st = api_fail(KCAST_E_ARG, "%s", err); goto out; }
    if (crc) { st = api_fail(KCAST_E_FORMAT, "%s", err); goto out; }
  }
  for (size_t i = 0; i < ts->n; i++) {
    ts_cfg *c = &ts->cfg[i];
    if (c->err) continue;
    if (c->job.status != 1) {
      if (!(c->err = strdup(c->job.err ? c->job.err : "failed"))) goto nomem;
      continue;
    }
    if (ds_kt_tune_features(&c->job, &c->job.feats) || kcast_features_new(&c->fs)) goto nomem;
    c->fs->v = c->job.feats; /* moved */
    feat_init(&c->job.feats);
  }
  *out = ts;
  ts = NULL;
  st = KCAST_OK;
  goto out;
nomem:
  st = api_fail(KCAST_E_NOMEM, "%s: out of memory", fn);
out:
  free(kname);
  free(jobs);
  free(args);
  free(consts);
  kcast_tunespace_free(ts);
  return st;
}

kcast_status kcast_tunespace_write(const kcast_tunespace *ts, const char *path,
                                   const char *device_name, const double *time_ns) {
  static const char fn[] = "kcast_tunespace_write";
  if (!ts || !path || !*path || !device_name || !time_ns)
    return api_fail(KCAST_E_ARG, "%s: %s is NULL", fn,
                    !ts ? "ts" : !path || !*path ? "path" : !device_name ? "device_name" : "time_ns");
  const char **keys = malloc((ts->n + 1) * sizeof *keys);
  double *ms = malloc((ts->n + 1) * sizeof *ms);
  if (!keys || !ms) {
    free(keys);
    free(ms);
    return api_fail(KCAST_E_NOMEM, "%s: out of memory", fn);
  }
  for (size_t i = 0; i < ts->n; i++) {
    keys[i] = ts->cfg[i].key;
    ms[i] = ts->cfg[i].fs && isfinite(time_ns[i]) && time_ns[i] >= 0 ? time_ns[i] / 1e6 : NAN;
  }
  char err[1200] = "";
  int rc = ds_kt_write_cachefile(path, device_name, ts->kernel, ts->psize, ts->pdims, ts->scalar,
                                 (const char *const *)ts->names, ts->nparams, keys,
                                 (const char *const *)ts->values, ms, ts->n, err, sizeof err);
  free(keys);
  free(ms);
  return rc ? api_fail(KCAST_E_IO, "%s", err) : KCAST_OK;
}
