/*
 * api_features.c -- feature sets from outside: a launch stored in a dataset
 * (kcast_features_from_launch) and a launch run in the PTX emulator
 * (kcast_features_from_ptx).
 *
 * from_ptx does what `kcast predict FILE` does (front end, parse, kernel
 * selection, typed arguments, sampled emulation, static features) through a
 * small typed argument interface (kcast_arg) instead of the CLI's --arg text,
 * so a library caller never formats and re-parses numbers.  It does not call
 * into cli/: the library must not print, and the CLI's helpers do.
 */
#include "api/api_int.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/ds.h"
#include "emulator/emu.h"
#include "extractor/frontend.h"
#include "extractor/ptx.h"
#include "model/model.h"
#include "model/opr.h"

/* CTAs emulated when the caller leaves sample_ctas 0 (as kcast predict):
   as many as the counts' precision needs (emu.h, "Adaptive sampling"). */
#define API_DEFAULT_SAMPLE EMU_SAMPLE_AUTO

kcast_status kcast_features_from_launch(const char *db_path, int64_t launch_id,
                                        kcast_features **fs) {
  if (!fs) return api_fail(KCAST_E_ARG, "kcast_features_from_launch: fs out-parameter is NULL");
  *fs = NULL;
  if (!db_path || !*db_path)
    return api_fail(KCAST_E_ARG, "kcast_features_from_launch: dataset path is NULL or empty");
  FILE *probe = fopen(db_path, "rb");
  if (!probe) return api_fail(KCAST_E_IO, "%s: cannot open", db_path);
  fclose(probe);
  char err[1024] = "";
  ds_db *db = NULL;
  if (ds_open(db_path, DS_READONLY, &db, err, sizeof err))
    return api_fail(KCAST_E_FORMAT, "%s", err[0] ? err : "cannot open the dataset");
  kcast_features *out = NULL;
  kcast_status st = kcast_features_new(&out);
  if (st == KCAST_OK && ds_get_features(db, launch_id, &out->v))
    st = api_fail(KCAST_E_FORMAT, "%s", ds_errmsg(db));
  if (st == KCAST_OK && out->v.n == 0)
    st = api_fail(KCAST_E_NOTFOUND, "%s: no features for launch %lld", db_path,
                  (long long)launch_id);
  ds_close(db);
  if (st) { kcast_features_free(out); return st; }
  *fs = out;
  return KCAST_OK;
}

/* ------------------------------------------------------- from PTX -- */

static int is_kernel(const ptx_func *f) { return f->is_entry && f->has_body; }

/* The kernel of m that want names (NULL: the only one): its mangled name,
   else the closest fe_name_match level that names one kernel. */
static kcast_status select_kernel(const ptx_module *m, const char *want, const char *path,
                                  const ptx_func **out) {
  const ptx_func *hit = NULL;
  unsigned nk = 0, nhit = 0;
  for (uint32_t i = 0; i < m->nfuncs; i++) {
    const ptx_func *f = &m->funcs[i];
    if (!is_kernel(f)) continue;
    nk++;
    if (!want) { hit = f; nhit++; continue; }
    if (!strcmp(f->name, want)) { *out = f; return KCAST_OK; }
  }
  for (int level = 3; want && level >= 1 && !nhit; level--)
    for (uint32_t i = 0; i < m->nfuncs; i++) {
      const ptx_func *f = &m->funcs[i];
      if (is_kernel(f) && fe_name_match(f->name, want) == level) { hit = f; nhit++; }
    }
  if (nk == 0) return api_fail(KCAST_E_NOTFOUND, "%s: no kernels (.entry) in this file", path);
  if (nhit == 1) { *out = hit; return KCAST_OK; }
  if (!want)
    return api_fail(KCAST_E_ARG, "%s: %u kernels; name one (kernel argument)", path, nk);
  if (nhit > 1)
    return api_fail(KCAST_E_ARG, "%s: kernel name '%s' is ambiguous (%u kernels); give the mangled name",
                    path, want, nhit);
  return api_fail(KCAST_E_NOTFOUND, "%s: no kernel '%s'", path, want);
}

/* A buffer's fill: the emulator fills a page when the launch first reaches
   it (emu_malloc_lazy), with the bytes the whole buffer would hold
   (emu_fill_pattern: kcast_fill's kinds are the emulator's patterns). */
_Static_assert((int)KCAST_FILL_SEQ == EMU_PAT_SEQ && (int)KCAST_FILL_SEQF == EMU_PAT_SEQF &&
                   (int)KCAST_FILL_RAND == EMU_PAT_RAND && (int)KCAST_FILL_RANDF == EMU_PAT_RANDF,
               "kcast_fill and emu_pattern kinds agree");

/* Everything one from_ptx call owns; freed by ptx_job_free. */
typedef struct ptx_job {
  char *text;          /* PTX text */
  size_t len;
  ptx_module *m;
  size_t *offs;        /* parameter offsets */
  unsigned char *pbuf; /* argument buffer */
  size_t ptotal;
  emu_device *dev;
  emu_module *em;
  FILE *devnull;       /* device printf sink */
} ptx_job;

static void ptx_job_free(ptx_job *j) {
  emu_module_free(j->em);
  emu_device_free(j->dev);
  free(j->pbuf);
  free(j->offs);
  ptx_module_free(j->m);
  free(j->text);
  if (j->devnull) fclose(j->devnull);
}

/* Type the arguments, allocate the buffers, write the argument buffer. */
static kcast_status setup_args(ptx_job *j, const ptx_func *k, const kcast_launch_config *c,
                               const char *path) {
  char err[1024] = "";
  if (c->nargs != k->nparams)
    return api_fail(KCAST_E_ARG, "%s: kernel %s takes %u parameter%s, got %zu arguments", path,
                    k->name, k->nparams, k->nparams == 1 ? "" : "s", c->nargs);
  if (c->nargs && !c->args)
    return api_fail(KCAST_E_ARG, "%s: kcast_launch_config.args is NULL with nargs %zu", path,
                    c->nargs);
  if (!(j->offs = calloc(k->nparams + 1, sizeof *j->offs)))
    return api_fail(KCAST_E_NOMEM, "%s: out of memory", path);
  if (emu_param_layout(k, j->offs, &j->ptotal))
    return api_fail(KCAST_E_FORMAT, "%s: cannot lay out the parameters of %s", path, k->name);
  if (!(j->pbuf = calloc(j->ptotal ? j->ptotal : 1, 1)))
    return api_fail(KCAST_E_NOMEM, "%s: out of memory", path);
  for (size_t i = 0; i < c->nargs; i++) {
    const ptx_var *p = &k->params[i];
    const kcast_arg *a = &c->args[i];
    const char *pname = p->name ? p->name : "";
    if (a->kind == KCAST_ARG_SCALAR) {
      if (p->size == 0 || p->size > 8)
        return api_fail(KCAST_E_ARG, "%s: argument %zu: parameter %s is %llu bytes; a scalar "
                        "argument fills at most 8", path, i, pname, (unsigned long long)p->size);
      for (uint64_t b = 0; b < p->size; b++)
        j->pbuf[j->offs[i] + b] = (unsigned char)(a->bits >> (8 * b));
    } else if (a->kind == KCAST_ARG_BUFFER) {
      if (p->size != 8 || p->count != 1)
        return api_fail(KCAST_E_ARG, "%s: argument %zu: parameter %s cannot hold a device "
                        "address (needs a 64-bit parameter)", path, i, pname);
      if (a->bytes == 0 || a->bytes > SIZE_MAX / 2)
        return api_fail(KCAST_E_ARG, "%s: argument %zu: buffer size %llu is out of range", path,
                        i, (unsigned long long)a->bytes);
      if ((unsigned)a->fill > KCAST_FILL_RANDF)
        return api_fail(KCAST_E_ARG, "%s: argument %zu: unknown fill %d", path, i, (int)a->fill);
      uint64_t addr = 0;
      size_t n = (size_t)a->bytes;
      emu_pattern fsp = {(unsigned)a->fill, a->seed};
      if (a->fill == KCAST_FILL_ZERO ? emu_malloc(j->dev, n, &addr, err, sizeof err)
                                     : emu_malloc_lazy(j->dev, n, emu_fill_pattern, &fsp, sizeof fsp,
                                                       &addr, err, sizeof err))
        return api_fail(KCAST_E_NOMEM, "%s: argument %zu: %s", path, i, err);
      for (int b = 0; b < 8; b++) j->pbuf[j->offs[i] + (size_t)b] = (unsigned char)(addr >> (8 * b));
    } else {
      return api_fail(KCAST_E_ARG, "%s: argument %zu: unknown kind %d", path, i, (int)a->kind);
    }
  }
  return KCAST_OK;
}

kcast_status kcast_features_from_ptx(const char *path, const char *kernel,
                                     const kcast_launch_config *cfg, kcast_features **fs) {
  if (!fs) return api_fail(KCAST_E_ARG, "kcast_features_from_ptx: fs out-parameter is NULL");
  *fs = NULL;
  if (!path || !*path) return api_fail(KCAST_E_ARG, "kcast_features_from_ptx: path is NULL or empty");
  if (!cfg) return api_fail(KCAST_E_ARG, "kcast_features_from_ptx: cfg is NULL");
  if (cfg->size < sizeof(size_t) + 6 * sizeof(unsigned))
    return api_fail(KCAST_E_ARG, "kcast_features_from_ptx: cfg->size %zu is too small (set it to "
                    "sizeof(kcast_launch_config))", cfg->size);
  /* Read the caller's struct up to its size; newer fields stay zero. */
  kcast_launch_config c;
  memset(&c, 0, sizeof c);
  memcpy(&c, cfg, cfg->size < sizeof c ? cfg->size : sizeof c);

  emu_launch_cfg ec;
  emu_launch_cfg_init(&ec);
  uint64_t ctas = 1, threads = 1;
  for (int d = 0; d < 3; d++) {
    ec.grid[d] = c.grid[d] ? c.grid[d] : 1;
    ec.block[d] = c.block[d] ? c.block[d] : 1;
    ctas *= ec.grid[d];
    threads *= ec.block[d];
  }
  if (threads > 1024)
    return api_fail(KCAST_E_ARG, "%s: block %ux%ux%u has %llu threads (at most 1024)", path,
                    ec.block[0], ec.block[1], ec.block[2], (unsigned long long)threads);
  if (c.time_limit_s < 0 || c.time_limit_s != c.time_limit_s)
    return api_fail(KCAST_E_ARG, "%s: time limit %g is not a number >= 0", path, c.time_limit_s);
  if (c.shared_bytes > SIZE_MAX / 2)
    return api_fail(KCAST_E_ARG, "%s: shared_bytes %llu is out of range", path,
                    (unsigned long long)c.shared_bytes);
  ec.shared_bytes = (size_t)c.shared_bytes;
  ec.sample_ctas = c.sample_ctas ? c.sample_ctas : API_DEFAULT_SAMPLE;
  if (c.sample_ctas >= ctas) ec.sample_ctas = 0;
  ec.insn_budget = c.insn_budget;
  ec.time_limit_s = c.time_limit_s;
  ec.threads = c.threads;
  if (c.oob != KCAST_OOB_ERROR && c.oob != KCAST_OOB_WARN)
    return api_fail(KCAST_E_ARG, "%s: oob policy %d is neither KCAST_OOB_ERROR nor KCAST_OOB_WARN",
                    path, c.oob);
  ec.oob = c.oob == KCAST_OOB_WARN ? EMU_OOB_WARN : EMU_OOB_ERROR;
  if (c.racecheck != 0 && c.racecheck != 1)
    return api_fail(KCAST_E_ARG, "%s: racecheck %d is neither 0 nor 1", path, c.racecheck);
  ec.racecheck = c.racecheck;

  ptx_job j;
  memset(&j, 0, sizeof j);
  kcast_features *out = NULL;
  char err[1024] = "";
  kcast_status st = KCAST_OK;
  fe_options fo;
  memset(&fo, 0, sizeof fo);
  if (fe_to_ptx(path, &fo, &j.text, &j.len, err, sizeof err)) {
    FILE *probe = fopen(path, "rb");
    st = api_fail(probe ? KCAST_E_FORMAT : KCAST_E_IO, "%s", err[0] ? err : "cannot read input");
    if (probe) fclose(probe);
    goto out;
  }
  ptx_error perr;
  memset(&perr, 0, sizeof perr);
  if (!(j.m = ptx_parse(j.text, j.len, path, &perr))) {
    st = api_fail(KCAST_E_FORMAT, "%s", perr.msg[0] ? perr.msg : "cannot parse PTX");
    goto out;
  }
  const ptx_func *k = NULL;
  if ((st = select_kernel(j.m, kernel, path, &k))) goto out;
  if (!(j.dev = emu_device_new())) { st = api_fail(KCAST_E_NOMEM, "%s: out of memory", path); goto out; }
  if (emu_module_load(j.dev, j.m, &j.em, err, sizeof err)) {
    st = api_fail(KCAST_E_FORMAT, "%s", err);
    goto out;
  }
  if ((st = setup_args(&j, k, &c, path))) goto out;
  if (!(j.devnull = fopen("/dev/null", "w"))) {
    st = api_fail(KCAST_E_IO, "cannot open /dev/null for device printf");
    goto out;
  }
  ec.params = j.pbuf;
  ec.params_size = j.ptotal;
  ec.printf_out = j.devnull;
  if ((st = kcast_features_new(&out))) goto out;
  if (emu_launch(j.em, k->name, &ec, &out->v, NULL, err, sizeof err)) {
    st = api_fail(KCAST_E_EMULATION, "%s", err[0] ? err : "launch failed");
    goto out;
  }
  memset(&perr, 0, sizeof perr);
  if (feat_static(j.m, k, &out->v, &perr)) {
    st = api_fail(KCAST_E_FORMAT, "%s", perr.msg[0] ? perr.msg : "cannot compute static features");
    goto out;
  }
out:
  ptx_job_free(&j);
  if (st) { kcast_features_free(out); return st; }
  *fs = out;
  return KCAST_OK;
}

/* ----------------------------------------------------- from an operator -- */

/* The operator features' names hashed once (a set of them is built for
   every operator prediction). */
static size_t op_hash[OPR_NFEAT];
static pthread_once_t op_hash_once = PTHREAD_ONCE_INIT;
static void op_hash_init(void) {
  for (size_t k = 0; k < OPR_NFEAT; k++) op_hash[k] = feat_name_hash(opr_feature_names[k]);
}

/* A set holding the operator features v. */
static kcast_status op_set(const double *v, const char *who, kcast_features **fs) {
  pthread_once(&op_hash_once, op_hash_init);
  kcast_features *out = NULL;
  kcast_status st = kcast_features_new(&out);
  if (st) return st;
  int bad = feat_reserve(&out->v, OPR_NFEAT);
  for (size_t k = 0; k < OPR_NFEAT && !bad; k++)
    bad = feat_set_hashed(&out->v, opr_feature_names[k], op_hash[k], v[k]);
  if (bad) {
    kcast_features_free(out);
    return api_fail(KCAST_E_NOMEM, "%s: out of memory", who);
  }
  *fs = out;
  return KCAST_OK;
}

kcast_status kcast_features_from_op_gpu(const char *description, const kcast_model *model,
                                        const char *gpu_name, char *assumed, size_t cap,
                                        kcast_features **fs) {
  static const char who[] = "kcast_features_from_op_gpu";
  if (assumed && cap) assumed[0] = 0;
  if (!fs) return api_fail(KCAST_E_ARG, "%s: fs out-parameter is NULL", who);
  *fs = NULL;
  if (!description) return api_fail(KCAST_E_ARG, "%s: description is NULL", who);
  if (!gpu_name) return api_fail(KCAST_E_ARG, "%s: gpu_name is NULL", who);
  opr_launch *l = malloc((1 + OPR_GEMM_CANDIDATES) * sizeof *l);
  if (!l) return api_fail(KCAST_E_NOMEM, "%s: out of memory", who);
  opr_launch *cand = l + 1;
  kcast_status st = KCAST_OK;
  size_t nc = 0;
  if (opr_parse(description, l)) st = api_fail(KCAST_E_ARG, "%s: %s", who, rf_last_error());
  else nc = opr_gemm_candidates(l, cand, OPR_GEMM_CANDIDATES);
  if (!st && !nc) {
    free(l);
    return kcast_features_from_op(description, assumed, cap, fs);
  }
  int forest = model && kcast_model_target(model) == KCAST_TARGET_TIME;
  double best = 0;
  size_t bi = 0;
  for (size_t c = 0; c < nc && !st; c++) {
    double v[OPR_NFEAT];
    kcast_features *cf = NULL;
    kcast_prediction p;
    if (opr_features(&cand[c], v)) st = api_fail(KCAST_E_ARG, "%s: %s", who, rf_last_error());
    else if (!(st = op_set(v, who, &cf)))
      st = forest ? kcast_predict_gpu(model, gpu_name, cf, 0.9, &p)
                  : kcast_predict_analytic(gpu_name, cf, &p, NULL);
    if (!st && (c == 0 || p.value < best)) {
      best = p.value;
      bi = c;
      kcast_features_free(*fs);
      *fs = cf;
      cf = NULL;
    }
    kcast_features_free(cf);
  }
  if (!st && assumed && cap)
    snprintf(assumed, cap, "kernel %s (of cuBLAS's %zu SGEMM tiles the fastest predicted on %s); "
             "grid %u,%u,%u; block %u,%u,%u", cand[bi].kernel, nc, gpu_name, cand[bi].grid[0],
             cand[bi].grid[1], cand[bi].grid[2], cand[bi].block[0], cand[bi].block[1],
             cand[bi].block[2]);
  free(l);
  if (st) {
    kcast_features_free(*fs);
    *fs = NULL;
  }
  return st;
}

kcast_status kcast_features_from_op(const char *description, char *assumed, size_t cap,
                                    kcast_features **fs) {
  if (assumed && cap) assumed[0] = 0;
  if (!fs) return api_fail(KCAST_E_ARG, "kcast_features_from_op: fs out-parameter is NULL");
  *fs = NULL;
  if (!description) return api_fail(KCAST_E_ARG, "kcast_features_from_op: description is NULL");
  opr_launch *l = malloc(sizeof *l);
  if (!l) return api_fail(KCAST_E_NOMEM, "kcast_features_from_op: out of memory");
  double v[OPR_NFEAT];
  kcast_status st = KCAST_OK;
  if (opr_parse(description, l) || opr_complete(l, assumed, cap) || opr_features(l, v))
    st = api_fail(KCAST_E_ARG, "kcast_features_from_op: %s", rf_last_error());
  free(l);
  if (st) return st;
  return op_set(v, "kcast_features_from_op", fs);
}
