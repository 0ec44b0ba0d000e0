/*
 * api.c -- the public C API (include/kcast.h): statuses and the per-thread
 * last error, version, GPU list, models, feature sets and predictions.
 *
 * Why a separate layer: the modules (rf_, an_, ds_, emu_) each have their
 * own conventions (0/-1 plus rf_last_error, ds_errmsg, caller buffers); a
 * scheduler needs one stable, small contract.  Every entry point checks its
 * arguments at the boundary and funnels failures through api_fail, which
 * records the text for kcast_last_error and returns the status (the
 * API_BEGIN/API_END pattern of treelite's C API).  Handles wrap the module
 * objects; nothing of theirs leaks into kcast.h.
 *
 * Threads: the last error lives in thread-local storage; a kcast_model wraps
 * an immutable rf_forest (model.h: any number of threads may predict from
 * it), and kcast_predict only reads the model and the feature set.
 * kcast_predict_batch spreads blocks of its sets over an OpenMP team, each
 * block walking the forest tree-major (rf__predict_rows), and carries the
 * error of the lowest failing set back to the caller's thread.
 */
#include "api/api_int.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "datasets/ds.h"
#include "model/model.h"
#include "model/rf_int.h"

/* ----------------------------------------------------------- errors -- */

static _Thread_local char api_errbuf[1024];

kcast_status api_fail(kcast_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(api_errbuf, sizeof api_errbuf, fmt, ap);
  va_end(ap);
  return st;
}

const char *kcast_last_error(void) { return api_errbuf; }

const char *kcast_status_name(kcast_status s) {
  switch (s) {
    case KCAST_OK: return "KCAST_OK";
    case KCAST_E_ARG: return "KCAST_E_ARG";
    case KCAST_E_IO: return "KCAST_E_IO";
    case KCAST_E_FORMAT: return "KCAST_E_FORMAT";
    case KCAST_E_FEATURE: return "KCAST_E_FEATURE";
    case KCAST_E_TARGET: return "KCAST_E_TARGET";
    case KCAST_E_NOMEM: return "KCAST_E_NOMEM";
    case KCAST_E_EMULATION: return "KCAST_E_EMULATION";
    case KCAST_E_NOTFOUND: return "KCAST_E_NOTFOUND";
    case KCAST_E_VERSION: return "KCAST_E_VERSION";
  }
  return "unknown";
}

/* ---------------------------------------------------------- version -- */

const char *kcast_version(void) { return KCAST_VERSION_STRING; }

kcast_status kcast_check_version(int major, size_t sizeof_launch_config) {
  if (major != KCAST_VERSION_MAJOR)
    return api_fail(KCAST_E_VERSION, "kcast: program built for API major version %d, library is %s",
                    major, KCAST_VERSION_STRING);
  if (sizeof_launch_config != sizeof(kcast_launch_config))
    return api_fail(KCAST_E_VERSION,
                    "kcast: program's kcast_launch_config is %zu bytes, library's is %zu "
                    "(header and library %s differ)",
                    sizeof_launch_config, sizeof(kcast_launch_config), KCAST_VERSION_STRING);
  return KCAST_OK;
}

/* ------------------------------------------------------------- GPUs -- */

size_t kcast_gpu_count(void) { return an_gpu_count(); }

const char *kcast_gpu_name(size_t i) {
  const an_gpu *g = an_gpu_at(i);
  return g ? g->name : NULL;
}

/* ----------------------------------------------------------- models -- */


static kcast_target target_of(const char *t) {
  if (!t) return KCAST_TARGET_OTHER;
  if (!strcmp(t, "time") || !strcmp(t, "time_ns")) return KCAST_TARGET_TIME;
  if (!strcmp(t, "power") || !strcmp(t, "power_w")) return KCAST_TARGET_POWER;
  if (!strcmp(t, "energy") || !strcmp(t, "energy_j")) return KCAST_TARGET_ENERGY;
  return KCAST_TARGET_OTHER;
}

static const char *target_word(kcast_target t) {
  switch (t) {
    case KCAST_TARGET_TIME: return "time";
    case KCAST_TARGET_POWER: return "power";
    case KCAST_TARGET_ENERGY: return "energy";
    case KCAST_TARGET_OTHER: break;
  }
  return "another quantity";
}

kcast_status kcast_model_load(const char *path, kcast_model **model) {
  if (!model) return api_fail(KCAST_E_ARG, "kcast_model_load: model out-parameter is NULL");
  *model = NULL;
  if (!path || !*path) return api_fail(KCAST_E_ARG, "kcast_model_load: path is NULL or empty");
  FILE *probe = fopen(path, "rb");
  if (!probe) return api_fail(KCAST_E_IO, "%s: cannot open: %s", path, strerror(errno));
  fclose(probe);
  kcast_model *m = calloc(1, sizeof *m);
  if (!m || !(m->path = strdup(path))) {
    free(m);
    return api_fail(KCAST_E_NOMEM, "%s: out of memory", path);
  }
  if (rf_load(path, &m->f)) {
    const char *why = rf_last_error();
    kcast_status st = strstr(why, "out of memory") ? KCAST_E_NOMEM : KCAST_E_FORMAT;
    api_fail(st, "%s", why && *why ? why : "cannot load the model");
    free(m->path);
    free(m);
    return st;
  }
  kcast_status st = api_model_init(m);
  if (st) return st;
  *model = m;
  return KCAST_OK;
}

kcast_status api_model_init(kcast_model *m) {
  m->target = target_of(rf_get_info(m->f)->target);
  m->ngpus = an_gpu_list(rf_get_info(m->f)->gpu, m->gpus, sizeof m->gpus / sizeof m->gpus[0]);
  const rf_info *info = rf_get_info(m->f);
  size_t nf = info->n_features ? info->n_features : 1;
  m->fhash = malloc(nf * sizeof *m->fhash);
  m->fhint = malloc(nf * sizeof *m->fhint);
  m->dfam = malloc(nf * sizeof *m->dfam);
  m->didx = malloc(nf * sizeof *m->didx);
  if (!m->fhash || !m->fhint || !m->dfam || !m->didx) {
    const char *path = m->path;
    kcast_status st = api_fail(KCAST_E_NOMEM, "%s: out of memory", path);
    kcast_model_free(m);
    return st;
  }
  for (size_t j = 0; j < info->n_features; j++) {
    m->fhash[j] = feat_name_hash(info->features[j]);
    m->fhint[j] = (uint32_t)j; /* a set built in the model's order */
    int fam;
    size_t k;
    m->dfam[j] = -1;
    m->didx[j] = 0;
    if (md_locate(info->features[j], &fam, &k)) {
      m->dfam[j] = (int16_t)fam;
      m->didx[j] = (uint16_t)k;
    }
  }
  return KCAST_OK;
}

void kcast_model_free(kcast_model *model) {
  if (!model) return;
  rf_free(model->f);
  free(model->path);
  free(model->fhash);
  free(model->fhint);
  free(model->dfam);
  free(model->didx);
  free(model);
}

kcast_target kcast_model_target(const kcast_model *model) {
  return model ? model->target : KCAST_TARGET_OTHER;
}

kcast_status kcast_model_expect(const kcast_model *model, kcast_target want) {
  if (!model) return api_fail(KCAST_E_ARG, "kcast_model_expect: model is NULL");
  if (model->target == want) return KCAST_OK;
  const char *t = rf_get_info(model->f)->target;
  return api_fail(KCAST_E_TARGET, "%s: the model predicts '%s', not %s", model->path,
                  t ? t : "", target_word(want));
}

const char *kcast_model_gpu(const kcast_model *model) {
  if (!model) return NULL;
  const char *g = rf_get_info(model->f)->gpu;
  return g ? g : "";
}

size_t kcast_model_nfeatures(const kcast_model *model) {
  return model ? rf_get_info(model->f)->n_features : 0;
}

const char *kcast_model_feature_name(const kcast_model *model, size_t i) {
  if (!model) return NULL;
  const rf_info *info = rf_get_info(model->f);
  return i < info->n_features ? info->features[i] : NULL;
}

/* ----------------------------------------------------- feature sets -- */

kcast_status kcast_features_new(kcast_features **fs) {
  if (!fs) return api_fail(KCAST_E_ARG, "kcast_features_new: fs out-parameter is NULL");
  *fs = calloc(1, sizeof **fs);
  if (!*fs) return api_fail(KCAST_E_NOMEM, "kcast_features_new: out of memory");
  feat_init(&(*fs)->v);
  return KCAST_OK;
}

void kcast_features_free(kcast_features *fs) {
  if (!fs) return;
  feat_free(&fs->v);
  free(fs);
}

kcast_status kcast_features_set(kcast_features *fs, const char *name, double value) {
  if (!fs) return api_fail(KCAST_E_ARG, "kcast_features_set: fs is NULL");
  if (!name || !*name) return api_fail(KCAST_E_FEATURE, "kcast_features_set: feature name is NULL or empty");
  if (!isfinite(value))
    return api_fail(KCAST_E_FEATURE, "kcast_features_set: feature %s: value %g is not finite",
                    name, value);
  if (feat_set(&fs->v, name, value))
    return api_fail(KCAST_E_NOMEM, "kcast_features_set: feature %s: out of memory", name);
  return KCAST_OK;
}

kcast_status kcast_features_set_at(kcast_features *fs, size_t i, double value) {
  if (!fs) return api_fail(KCAST_E_ARG, "kcast_features_set_at: fs is NULL");
  if (i >= fs->v.n)
    return api_fail(KCAST_E_ARG, "kcast_features_set_at: index %zu of a set of %zu", i, fs->v.n);
  if (!isfinite(value))
    return api_fail(KCAST_E_FEATURE, "kcast_features_set_at: %s = %g is not finite",
                    fs->v.names[i], value);
  fs->v.vals[i] = value;
  return KCAST_OK;
}

kcast_status kcast_features_get(const kcast_features *fs, const char *name, double *value) {
  if (!fs || !name || !value)
    return api_fail(KCAST_E_ARG, "kcast_features_get: %s is NULL",
                    !fs ? "fs" : !name ? "name" : "value out-parameter");
  long at = feat_find(&fs->v, name);
  if (at < 0) return api_fail(KCAST_E_NOTFOUND, "kcast_features_get: no feature %s", name);
  *value = fs->v.vals[at];
  return KCAST_OK;
}

size_t kcast_features_count(const kcast_features *fs) { return fs ? fs->v.n : 0; }

const char *kcast_features_name(const kcast_features *fs, size_t i) {
  return fs && i < fs->v.n ? fs->v.names[i] : NULL;
}

/* ------------------------------------------------------- prediction -- */

/* "feature set IDX: " for a batch element (idx >= 0), else "". */
static const char *set_label(char buf[48], long idx) {
  if (idx < 0) return "";
  snprintf(buf, 48, "feature set %ld: ", idx);
  return buf;
}

/* Row of model m from fs into row[n_features]; KCAST_E_FEATURE naming the
   first missing non-count feature.  idx >= 0 names a batch element. */
static kcast_status fill_row(const kcast_model *m, const char *gpu, const kcast_features *fs,
                             double *row, long idx) {
  const rf_info *info = rf_get_info(m->f);
  md_cache dc = {0};
  for (size_t j = 0; j < info->n_features; j++) {
    const char *name = info->features[j];
    /* Sets are often built alike: where the last one had the name is
       checked first (names are unique in a set, so a match is the one);
       else the set's index, on a cold set a cache miss in its table for
       most names: kcast_predict with interval on the 10,000 x 30 forest,
       cycling 1,000 sets, 4.52-4.71 -> 4.37-4.52 us in a slow phase of
       the machine (alternated runs). */
    uint32_t h = __atomic_load_n(&m->fhint[j], __ATOMIC_RELAXED);
    long at;
    if (h < fs->v.n && !strcmp(fs->v.names[h], name)) {
      at = h;
    } else {
      at = feat_find_hashed(&fs->v, name, m->fhash[j]);
      if (at >= 0 && (uint64_t)at < UINT32_MAX) __atomic_store_n(&m->fhint[j], (uint32_t)at, __ATOMIC_RELAXED);
    }
    if (at >= 0) { row[j] = fs->v.vals[at]; continue; }
    /* Derived columns (model/derived.c) come from the raw features, as at
       training time; an.* on the model's GPU. */
    int got = m->dfam[j] < 0 ? 0
                              : md_value_at(&dc, m->dfam[j], m->didx[j], gpu,
                                            (const char *const *)fs->v.names, fs->v.vals,
                                            fs->v.n, &row[j]);
    if (got < 0) {
      char where[48];
      return api_fail(KCAST_E_FEATURE, "%s: %sfeature %s: %s", m->path, set_label(where, idx),
                      name, rf_last_error());
    }
    if (got) continue;
    double d = ds_feature_default(info->features[j]);
    if (isnan(d)) {
      if (idx >= 0)
        return api_fail(KCAST_E_FEATURE,
                        "%s: feature set %ld lacks feature %s (%zu features read by the model)",
                        m->path, idx, info->features[j], info->n_features);
      return api_fail(KCAST_E_FEATURE, "%s: the feature set lacks feature %s (%zu features read by the model)",
                      m->path, info->features[j], info->n_features);
    }
    row[j] = d;
  }
  return KCAST_OK;
}

/*
 * The GPU a prediction is for: gpu when given, else the model's own; a
 * model trained on several GPUs needs one.  *unseen: the model was not
 * trained on it.  KCAST_E_ARG / KCAST_E_NOTFOUND naming the problem.
 */
static kcast_status resolve_gpu(const kcast_model *m, const char *fn, const char *gpu,
                                const char **use, int *unseen) {
  const char *mg = rf_get_info(m->f)->gpu;
  *unseen = 0;
  if (!gpu) {
    if (mg && strchr(mg, ','))
      return api_fail(KCAST_E_ARG, "%s: %s was trained on GPUs %s: name the GPU (kcast_predict_gpu)",
                      fn, m->path, mg);
    *use = mg;
    return KCAST_OK;
  }
  const an_gpu *g = an_gpu_find(gpu);
  if (!g) return api_fail(KCAST_E_NOTFOUND, "%s: unknown GPU '%s'", fn, gpu);
  *use = g->name;
  if (!mg || !*mg) return KCAST_OK;
  /* a model of one GPU knows nothing of another: its answer labelled with
     the other GPU would be the first GPU's ratios on the other's estimate
     (kcast predict refuses it alike) */
  if (!strchr(mg, ',') && !an_gpu_in_list(mg, g->name))
    return api_fail(KCAST_E_ARG, "%s: %s was trained on %s only, not on %s: a model of one GPU "
                    "cannot predict for another (train on several GPUs)", fn, m->path, mg,
                    g->name);
  *unseen = 1;
  for (size_t k = 0; k < m->ngpus; k++) *unseen &= m->gpus[k] != g;
  return KCAST_OK;
}

static kcast_status predict_one(const kcast_model *m, const char *gpu, int unseen,
                                const kcast_features *fs, double coverage, kcast_prediction *out,
                                long idx) {
  const rf_info *info = rf_get_info(m->f);
  double stackrow[256];
  double *row = stackrow;
  if (info->n_features > sizeof stackrow / sizeof stackrow[0]) {
    row = malloc(info->n_features * sizeof *row);
    if (!row) {
      if (idx >= 0)
        return api_fail(KCAST_E_NOMEM, "kcast_predict_batch: feature set %ld: out of memory", idx);
      return api_fail(KCAST_E_NOMEM, "kcast_predict: out of memory");
    }
  }
  kcast_status st = fill_row(m, gpu, fs, row, idx);
  if (st == KCAST_OK) {
    double pr, lo, hi;
    if (rf_predict_interval_on(m->f, row, coverage, unseen, &pr, &lo, &hi)) {
      char where[48];
      st = api_fail(KCAST_E_ARG, "%s: %s%s", m->path, set_label(where, idx), rf_last_error());
    } else {
      /* a model adapted to this GPU with measured shots (kcast calibrate) */
      double c = 1;
      if (unseen && m->f->n_adapt)
        rf_adapt_launch(m->f, gpu, (const char *const *)fs->v.names, fs->v.vals, fs->v.n, &c);
      out->value = pr * c;
      out->lo = lo * c;
      out->hi = hi * c;
      out->source = KCAST_SOURCE_FOREST;
    }
  }
  if (row != stackrow) free(row);
  return st;
}

static kcast_status check_coverage(const char *fn, double coverage) {
  if (!(coverage > 0 && coverage < 1))
    return api_fail(KCAST_E_ARG, "%s: coverage %g is not in (0, 1)", fn, coverage);
  return KCAST_OK;
}

kcast_status kcast_predict_gpu(const kcast_model *model, const char *gpu_name,
                               const kcast_features *fs, double coverage, kcast_prediction *out) {
  if (!model || !fs || !out)
    return api_fail(KCAST_E_ARG, "kcast_predict: %s is NULL",
                    !model ? "model" : !fs ? "feature set" : "out-parameter");
  if (check_coverage("kcast_predict", coverage)) return KCAST_E_ARG;
  const char *use = NULL;
  int unseen = 0;
  kcast_status st = resolve_gpu(model, "kcast_predict", gpu_name, &use, &unseen);
  if (st) return st;
  return predict_one(model, use, unseen, fs, coverage, out, -1);
}

kcast_status kcast_predict(const kcast_model *model, const kcast_features *fs, double coverage,
                           kcast_prediction *out) {
  return kcast_predict_gpu(model, NULL, fs, coverage, out);
}

kcast_status kcast_predict_check(const kcast_model *model, const char *gpu_name,
                                 const kcast_features *fs, unsigned *flags, const char **feature) {
  if (feature) *feature = NULL;
  if (!model || !fs || !flags)
    return api_fail(KCAST_E_ARG, "kcast_predict_check: %s is NULL",
                    !model ? "model" : !fs ? "feature set" : "flags");
  *flags = 0;
  const char *use = NULL;
  int unseen = 0;
  kcast_status st = resolve_gpu(model, "kcast_predict_check", gpu_name, &use, &unseen);
  if (st) return st;
  const rf_info *info = rf_get_info(model->f);
  double *row = malloc((info->n_features ? info->n_features : 1) * sizeof *row);
  if (!row) return api_fail(KCAST_E_NOMEM, "kcast_predict_check: out of memory");
  st = fill_row(model, use, fs, row, -1);
  if (st == KCAST_OK) {
    long j = rf_outside(model->f, row, NULL);
    if (j >= 0) {
      *flags |= KCAST_CHECK_OUT_OF_RANGE;
      if (feature) *feature = info->features[j];
    }
    if (unseen) *flags |= KCAST_CHECK_UNSEEN_GPU;
    if (rf_base_stale(model->f, NULL, 0)) *flags |= KCAST_CHECK_OTHER_ESTIMATE;
  }
  free(row);
  return st;
}

/* Batches smaller than this run on the calling thread: starting a team
   costs a few microseconds, about one prediction of a 100-tree forest. */
#define BATCH_PARALLEL_MIN 64
/*
 * Sets a block: their rows are filled, then walk the trees together
 * (rf__predict_rows), each tree's upper levels in cache for the whole
 * block, as rf_predict_batch walks its rows; at least four blocks a thread
 * when there are sets enough, and a thread's scratch (the rows, their keys,
 * 12 bytes a tree for the leaf codes and means) within BATCH_BLOCK_BYTES.
 * Measured (bench/api_bench, 10,000 sets, one thread, medians of three
 * runs beside predict_one's set-by-set walk, on a shared two-core machine):
 * the synthetic 10,000 x 30 forest 93.1 k -> 130.7 k sets/s (its 1,000
 * sets cycled, so a block meets most twice; 10,000 distinct sets 82.9 k ->
 * 98.4 k); the Mangrove T4 forest stays in cache and is walked row by row
 * as before (rf_predict.c, RF_ROWS_CACHED: 402 k and 417 k).  With two
 * threads both forests made what they made before (134 k and 132 k, 120 k
 * and 116 k distinct; 591 k and 588 k).
 */
#define BATCH_BLOCK_MAX 2048
#define BATCH_BLOCK_MIN 32
#define BATCH_BLOCK_BYTES (4u << 20)

/* The lowest failing index of a batch and what went wrong there, shared by
   the workers.  first only decreases; the status and text belong to it. */
typedef struct batch_fail {
  size_t first;          /* n while nothing failed */
  kcast_status st;       /* status of the failure at first */
  char msg[sizeof api_errbuf]; /* its text, from the worker's last error */
} batch_fail;

/* Record a failure at i (the worker's api_errbuf holds its text) unless a
   lower index already failed. */
static void batch_record(batch_fail *bf, size_t i, kcast_status st) {
#pragma omp critical(kcast_batch_fail)
  {
    if (i < bf->first) {
#pragma omp atomic write
      bf->first = i;
      bf->st = st;
      snprintf(bf->msg, sizeof bf->msg, "%s", api_errbuf);
    }
  }
}

kcast_status kcast_predict_batch(const kcast_model *model, const kcast_features *const *fs,
                                 size_t n, double coverage, kcast_prediction *out) {
  return kcast_predict_batch_gpu(model, NULL, fs, n, coverage, out);
}

kcast_status kcast_predict_batch_gpu(const kcast_model *model, const char *gpu_name,
                                     const kcast_features *const *fs, size_t n, double coverage,
                                     kcast_prediction *out) {
  if (!model) return api_fail(KCAST_E_ARG, "kcast_predict_batch: model is NULL");
  if (n == 0) return KCAST_OK;
  if (!fs || !out)
    return api_fail(KCAST_E_ARG, "kcast_predict_batch: %s is NULL",
                    !fs ? "feature-set array" : "out array");
  if (check_coverage("kcast_predict_batch", coverage)) return KCAST_E_ARG;
  /* No array holds more (the loop index would also turn negative). */
  if (n > (size_t)PTRDIFF_MAX / sizeof *out)
    return api_fail(KCAST_E_ARG, "kcast_predict_batch: n = %zu is more than any array holds", n);
  const char *use = NULL;
  int unseen = 0;
  kcast_status gst = resolve_gpu(model, "kcast_predict_batch", gpu_name, &use, &unseen);
  if (gst) return gst;
  /* Every index below the first failure is predicted; a block that starts
     above the lowest failure seen so far is skipped, as it cannot matter.
     Errors are raised on the worker that met them (kcast_last_error is per
     thread), so the text of the lowest one is copied out and raised again
     here, on the caller's thread. */
  batch_fail bf;
  bf.first = n;
  bf.st = KCAST_OK;
  bf.msg[0] = 0;
  const rf_forest *f = model->f;
  size_t P = rf_get_info(f)->n_features, blk = n;
  if (n >= BATCH_PARALLEL_MIN) {
    size_t T = rf_get_info(f)->n_trees, per_row = 12 * (P + T) + 64;
    size_t cap = BATCH_BLOCK_BYTES / per_row;
    blk = n / (4 * (size_t)omp_get_max_threads());
    blk = blk > BATCH_BLOCK_MAX ? BATCH_BLOCK_MAX : blk;
    blk = blk > cap ? cap : blk;
    blk = blk < BATCH_BLOCK_MIN ? BATCH_BLOCK_MIN : blk;
  }
  long long nblocks = (long long)((n + blk - 1) / blk);
#pragma omp parallel if (n >= BATCH_PARALLEL_MIN)
  {
    /* a block's rows (one after another) and answers, and the walker */
    double *rows = malloc(blk * (P ? P : 1) * sizeof *rows);
    double *pv = malloc(3 * blk * sizeof *pv);
    rf_rows *w = rf__rows_new(f, blk);
    int ok = rows && pv && w;
#pragma omp for schedule(dynamic, 1)
    for (long long b = 0; b < nblocks; b++) {
      size_t i0 = (size_t)b * blk, i1 = n - i0 < blk ? n : i0 + blk;
      size_t first;
#pragma omp atomic read
      first = bf.first;
      if (i0 > first) continue;
      if (!ok) {
        batch_record(&bf, i0, api_fail(KCAST_E_NOMEM,
                                       "kcast_predict_batch: feature set %zu: out of memory", i0));
        continue;
      }
      /* rows up to the block's first bad set, which fails after them */
      size_t k = i0;
      kcast_status st = KCAST_OK;
      for (; k < i1; k++) {
        if (!fs[k]) st = api_fail(KCAST_E_ARG, "kcast_predict_batch: feature set %zu is NULL", k);
        else st = fill_row(model, use, fs[k], rows + (k - i0) * P, (long)k);
        if (st) break;
      }
      size_t nr = k - i0;
      size_t done =
          nr ? rf__predict_rows(f, w, rows, nr, coverage, unseen, pv, pv + blk, pv + 2 * blk) : 0;
      for (size_t r = 0; r < done; r++) {
        /* a model adapted to this GPU with measured shots (kcast calibrate) */
        double c = 1;
        if (unseen && f->n_adapt)
          rf_adapt_launch(f, use, (const char *const *)fs[i0 + r]->v.names, fs[i0 + r]->v.vals,
                          fs[i0 + r]->v.n, &c);
        out[i0 + r].value = pv[r] * c;
        out[i0 + r].lo = pv[blk + r] * c;
        out[i0 + r].hi = pv[2 * blk + r] * c;
        out[i0 + r].source = KCAST_SOURCE_FOREST;
      }
      if (done < nr) {
        char where[48];
        batch_record(&bf, i0 + done,
                     api_fail(KCAST_E_ARG, "%s: %s%s", model->path,
                              set_label(where, (long)(i0 + done)), rf_last_error()));
      } else if (st) {
        batch_record(&bf, k, st);
      }
    }
    free(rows);
    free(pv);
    rf__rows_free(w);
  }
  if (bf.first < n) return api_fail(bf.st, "%s", bf.msg);
  return KCAST_OK;
}

kcast_status kcast_predict_analytic(const char *gpu_name, const kcast_features *fs,
                                    kcast_prediction *time_out, kcast_prediction *power_out) {
  if (!gpu_name || !fs)
    return api_fail(KCAST_E_ARG, "kcast_predict_analytic: %s is NULL",
                    !gpu_name ? "GPU name" : "feature set");
  const an_gpu *g = an_gpu_find(gpu_name);
  if (!g) {
    char known[512] = "";
    size_t len = 0;
    for (size_t i = 0; i < an_gpu_count() && len + 1 < sizeof known; i++) {
      int w = snprintf(known + len, sizeof known - len, "%s%s", i ? " " : "", an_gpu_at(i)->name);
      if (w < 0) break;
      len += (size_t)w;
    }
    return api_fail(KCAST_E_NOTFOUND, "kcast_predict_analytic: unknown GPU '%s' (known: %s)",
                    gpu_name, known);
  }
  an_estimate est;
  if (an_estimate_launch(g, (const char *const *)fs->v.names, fs->v.vals, fs->v.n, &est))
    return api_fail(KCAST_E_FEATURE, "kcast_predict_analytic: %s: %s", g->name, rf_last_error());
  if (time_out) {
    time_out->value = est.time_us * 1e3;
    time_out->lo = est.time_lo_us * 1e3;
    time_out->hi = est.time_hi_us * 1e3;
    time_out->source = KCAST_SOURCE_ANALYTIC;
  }
  if (power_out) {
    power_out->value = est.power_w;
    power_out->lo = est.power_lo_w;
    power_out->hi = est.power_hi_w;
    power_out->source = KCAST_SOURCE_ANALYTIC;
  }
  return KCAST_OK;
}

/* --------------------------------------------------- matrices of rows -- */

/* Where each feature the model reads comes from in a matrix: a column
   (>= 0), a derived column computed from the row (MX_DERIVED), or a
   count the matrix lacks (MX_ZERO). */
enum { MX_DERIVED = -1, MX_ZERO = -2 };

/* Row i of x into row[] in the model's order (src: the plan); 0, or the
   status after api_fail naming the row. */
static kcast_status matrix_row(const kcast_model *m, const long *src, const char *gpu,
                               const double *xi, size_t n_cols, const char *const *names,
                               size_t i, double *row) {
  const rf_info *info = rf_get_info(m->f);
  md_cache dc = {0};
  for (size_t j = 0; j < info->n_features; j++) {
    double v;
    if (src[j] >= 0) {
      v = xi[src[j]];
    } else if (src[j] == MX_ZERO) {
      v = 0;
    } else {
      int got = md_value(&dc, info->features[j], gpu, names, xi, n_cols, &v);
      if (got != 1)
        return api_fail(KCAST_E_FEATURE, "%s: row %zu: feature %s: %s", m->path, i,
                        info->features[j], got < 0 ? rf_last_error() : "cannot be derived");
    }
    if (!isfinite(v))
      return api_fail(KCAST_E_FEATURE, "%s: row %zu: feature %s is %s%s", m->path, i,
                      info->features[j], isnan(v) ? "NaN" : "infinite",
                      src[j] >= 0 ? "" : " (derived from a value that is not finite)");
    row[j] = v;
  }
  return KCAST_OK;
}

kcast_status kcast_predict_matrix(const kcast_model *model, const char *gpu_name,
                                  const double *x, size_t n_rows, size_t n_cols,
                                  size_t row_stride, const char *const *names, double coverage,
                                  double *pred, double *lo, double *hi, int threads) {
  static const char fn[] = "kcast_predict_matrix";
  if (!model) return api_fail(KCAST_E_ARG, "%s: model is NULL", fn);
  if (n_rows == 0) return KCAST_OK;
  if (!x || !names || !pred)
    return api_fail(KCAST_E_ARG, "%s: %s is NULL", fn, !x ? "x" : !names ? "names" : "pred");
  if (!lo != !hi) return api_fail(KCAST_E_ARG, "%s: give both lo and hi, or neither", fn);
  if (row_stride < n_cols)
    return api_fail(KCAST_E_ARG, "%s: row_stride %zu is less than n_cols %zu", fn, row_stride,
                    n_cols);
  if (n_rows > (size_t)PTRDIFF_MAX / sizeof *pred / (row_stride ? row_stride : 1))
    return api_fail(KCAST_E_ARG, "%s: %zu rows are more than any array holds", fn, n_rows);
  if (check_coverage(fn, coverage)) return KCAST_E_ARG;
  if (threads < 0) return api_fail(KCAST_E_ARG, "%s: threads %d < 0", fn, threads);
  for (size_t c = 0; c < n_cols; c++)
    if (!names[c] || !*names[c])
      return api_fail(KCAST_E_ARG, "%s: column %zu has no name", fn, c);
  const char *use = NULL;
  int unseen = 0;
  kcast_status gst = resolve_gpu(model, fn, gpu_name, &use, &unseen);
  if (gst) return gst;
  const rf_forest *f = model->f;
  const rf_info *info = rf_get_info(f);
  size_t P = info->n_features;
  long *src = malloc((P ? P : 1) * sizeof *src);
  if (!src) return api_fail(KCAST_E_NOMEM, "%s: out of memory", fn);
  /* the plan: each feature's column, before any row (one error, not n);
     names compared by hash first (one row from Python: the plan is most of
     the call) */
  size_t hstack[256];
  size_t *ch = n_cols <= 256 ? hstack : malloc(n_cols * sizeof *ch);
  if (!ch) { free(src); return api_fail(KCAST_E_NOMEM, "%s: out of memory", fn); }
  for (size_t c = 0; c < n_cols; c++) ch[c] = feat_name_hash(names[c]);
  for (size_t j = 0; j < P; j++) {
    const char *name = info->features[j];
    src[j] = MX_DERIVED;
    for (size_t c = 0; c < n_cols; c++)
      if (ch[c] == model->fhash[j] && !strcmp(names[c], name)) {
        if (src[j] >= 0) {
          long prev = src[j];
          free(src);
          if (ch != hstack) free(ch);
          return api_fail(KCAST_E_ARG, "%s: columns %ld and %zu are both %s", fn, prev, c, name);
        }
        src[j] = (long)c;
      }
    if (src[j] >= 0 || md_family_of(name) >= 0) continue;
    if (isnan(ds_feature_default(name))) {
      free(src);
      if (ch != hstack) free(ch);
      return api_fail(KCAST_E_FEATURE, "%s: no column holds feature %s (%zu features read by "
                      "the model)", model->path, name, P);
    }
    src[j] = MX_ZERO;
  }
  if (ch != hstack) free(ch);
  if (n_rows < BATCH_PARALLEL_MIN) {
    /* a few rows (one, from Python): row by row on this thread, without
       the blocked walker's set-up */
    double stackrow[256];
    double *row = P <= 256 ? stackrow : malloc(P * sizeof *row);
    kcast_status st = row ? KCAST_OK : api_fail(KCAST_E_NOMEM, "%s: out of memory", fn);
    for (size_t i = 0; i < n_rows && !st; i++) {
      st = matrix_row(model, src, use, x + i * row_stride, n_cols, names, i, row);
      double a, l, h;
      if (!st && rf_predict_interval_on(f, row, coverage, unseen, &a, lo ? &l : NULL,
                                        lo ? &h : NULL))
        st = api_fail(KCAST_E_ARG, "%s: row %zu: %s", model->path, i, rf_last_error());
      if (!st) {
        pred[i] = a;
        if (lo) { lo[i] = l; hi[i] = h; }
      }
    }
    if (row != stackrow) free(row);
    free(src);
    return st;
  }
  batch_fail bf;
  bf.first = n_rows;
  bf.st = KCAST_OK;
  bf.msg[0] = 0;
  size_t blk = n_rows, n = n_rows;
  int team = threads ? threads : omp_get_max_threads();
  if (n >= BATCH_PARALLEL_MIN) {
    size_t T = info->n_trees, per_row = 12 * (P + T) + 64;
    size_t cap = BATCH_BLOCK_BYTES / per_row;
    blk = n / (4 * (size_t)team);
    blk = blk > BATCH_BLOCK_MAX ? BATCH_BLOCK_MAX : blk;
    blk = blk > cap ? cap : blk;
    blk = blk < BATCH_BLOCK_MIN ? BATCH_BLOCK_MIN : blk;
  }
  long long nblocks = (long long)((n + blk - 1) / blk);
#pragma omp parallel if (n >= BATCH_PARALLEL_MIN) num_threads(team)
  {
    double *rows = malloc(blk * (P ? P : 1) * sizeof *rows);
    double *pv = malloc(3 * blk * sizeof *pv);
    rf_rows *w = rf__rows_new(f, blk);
    int ok = rows && pv && w;
#pragma omp for schedule(dynamic, 1)
    for (long long b = 0; b < nblocks; b++) {
      size_t i0 = (size_t)b * blk, i1 = n - i0 < blk ? n : i0 + blk;
      size_t first;
#pragma omp atomic read
      first = bf.first;
      if (i0 > first) continue;
      if (!ok) {
        batch_record(&bf, i0, api_fail(KCAST_E_NOMEM, "%s: row %zu: out of memory", fn, i0));
        continue;
      }
      size_t k = i0;
      kcast_status st = KCAST_OK;
      for (; k < i1; k++) {
        st = matrix_row(model, src, use, x + k * row_stride, n_cols, names, k,
                        rows + (k - i0) * P);
        if (st) break;
      }
      size_t nr = k - i0;
      size_t done =
          nr ? rf__predict_rows(f, w, rows, nr, coverage, unseen, pv, pv + blk, pv + 2 * blk) : 0;
      for (size_t r = 0; r < done; r++) {
        pred[i0 + r] = pv[r];
        if (lo) {
          lo[i0 + r] = pv[blk + r];
          hi[i0 + r] = pv[2 * blk + r];
        }
      }
      if (done < nr)
        batch_record(&bf, i0 + done, api_fail(KCAST_E_ARG, "%s: row %zu: %s", model->path,
                                              i0 + done, rf_last_error()));
      else if (st)
        batch_record(&bf, k, st);
    }
    free(rows);
    free(pv);
    rf__rows_free(w);
  }
  free(src);
  if (bf.first < n) return api_fail(bf.st, "%s", bf.msg);
  return KCAST_OK;
}

/* ------------------------------------------------------- model facts -- */

const char *kcast_model_target_name(const kcast_model *model) {
  return model ? rf_get_info(model->f)->target : NULL;
}

size_t kcast_model_ntrees(const kcast_model *model) {
  return model ? rf_get_info(model->f)->n_trees : 0;
}

uint64_t kcast_model_nrows(const kcast_model *model) {
  return model ? rf_get_info(model->f)->summary.n_rows : 0;
}

double kcast_model_importance(const kcast_model *model, size_t i) {
  if (!model) return NAN;
  const rf_info *info = rf_get_info(model->f);
  return i < info->n_features && info->mdi ? info->mdi[i] : NAN;
}

kcast_status kcast_gpu_info(size_t i, kcast_gpu_desc *d) {
  if (!d) return api_fail(KCAST_E_ARG, "kcast_gpu_info: d is NULL");
  if (d->size < sizeof *d)
    return api_fail(KCAST_E_ARG, "kcast_gpu_info: d->size %zu < %zu (set it to "
                    "sizeof(kcast_gpu_desc))", d->size, sizeof *d);
  const an_gpu *g = an_gpu_at(i);
  if (!g) return api_fail(KCAST_E_NOTFOUND, "kcast_gpu_info: GPU %zu of %zu", i, an_gpu_count());
  d->name = g->name;
  d->full_name = g->full_name;
  d->aliases = g->aliases ? g->aliases : "";
  d->cc_major = g->cc_major;
  d->cc_minor = g->cc_minor;
  d->sms = g->sms;
  d->boost_mhz = g->boost_mhz;
  d->fp32_gflops = g->fp32_gflops;
  d->fp64_gflops = g->fp64_gflops;
  d->mem_bw_gbs = g->mem_bw_gbs;
  d->mem_gb = g->mem_gb;
  d->l2_mb = g->l2_mb;
  d->tdp_w = g->tdp_w;
  return KCAST_OK;
}
