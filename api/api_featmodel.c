/*
 * api_featmodel.c -- feature models in the public API: load a .kcf and
 * fill a kcast_features for a launch without emulating it.
 *
 * The per-launch call is the hot path of a scheduler: on a set laid out by
 * kcast_featmodel_features_new (the model's outputs first, in its order,
 * recorded in kcast_features.layout) fm_eval writes the values straight
 * into the set's array -- no lookup, no allocation, nothing shared written,
 * so threads filling their own sets from one model never contend.
 */
#include "api/api_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "extractor/frontend.h"
#include "model/model.h"

struct kcast_featmodel {
  fm_model *m;  /* owned, immutable */
};

kcast_status kcast_featmodel_load(const char *path, kcast_featmodel **fm) {
  if (!fm) return api_fail(KCAST_E_ARG, "kcast_featmodel_load: fm out-parameter is NULL");
  *fm = NULL;
  if (!path || !*path) return api_fail(KCAST_E_ARG, "kcast_featmodel_load: path is NULL or empty");
  FILE *probe = fopen(path, "rb");
  if (!probe) return api_fail(KCAST_E_IO, "%s: cannot open", path);
  fclose(probe);
  kcast_featmodel *h = calloc(1, sizeof *h);
  if (!h) return api_fail(KCAST_E_NOMEM, "kcast_featmodel_load: out of memory");
  if (fm_load(path, &h->m)) {
    free(h);
    const char *e = rf_last_error();
    return api_fail(strstr(e, "out of memory") ? KCAST_E_NOMEM : KCAST_E_FORMAT, "%s", e);
  }
  *fm = h;
  return KCAST_OK;
}

void kcast_featmodel_free(kcast_featmodel *fm) {
  if (!fm) return;
  fm_free(fm->m);
  free(fm);
}

const char *kcast_featmodel_kernel(const kcast_featmodel *fm) {
  if (!fm) return NULL;
  fm_info in;
  fm_get_info(fm->m, &in);
  return in.kernel;
}

size_t kcast_featmodel_nargs(const kcast_featmodel *fm) {
  if (!fm) return 0;
  fm_info in;
  fm_get_info(fm->m, &in);
  return in.nargs;
}

long kcast_featmodel_arg_param(const kcast_featmodel *fm, size_t i) {
  if (!fm) return -1;
  fm_info in;
  fm_get_info(fm->m, &in);
  return i < in.nargs ? (long)in.arg_param[i] : -1;
}

double kcast_featmodel_heldout_error(const kcast_featmodel *fm) {
  if (!fm) return NAN;
  fm_info in;
  fm_get_info(fm->m, &in);
  return in.heldout_error;
}

kcast_status kcast_featmodel_features_new(const kcast_featmodel *fm, kcast_features **fs) {
  if (!fs) return api_fail(KCAST_E_ARG, "kcast_featmodel_features_new: fs out-parameter is NULL");
  *fs = NULL;
  if (!fm) return api_fail(KCAST_E_ARG, "kcast_featmodel_features_new: feature model is NULL");
  kcast_features *out = NULL;
  kcast_status st = kcast_features_new(&out);
  if (st) return st;
  size_t n = fm_nout(fm->m);
  for (size_t i = 0; i < n; i++)
    if (feat_set(&out->v, fm_out_name(fm->m, i), 0)) {
      kcast_features_free(out);
      return api_fail(KCAST_E_NOMEM, "kcast_featmodel_features_new: out of memory");
    }
  out->layout = fm->m;
  *fs = out;
  return KCAST_OK;
}

/* The fill of both entry points: targs[0..ntargs) the template arguments
   (none for a kernel that is not a template). */
static kcast_status fill(const char *fn, const kcast_featmodel *fm, const double *targs,
                         size_t ntargs, const unsigned grid[3], const unsigned block[3],
                         uint64_t shared_bytes, const double *args, size_t nargs,
                         kcast_features *fs, unsigned *flags) {
  if (!fm || !fs || !grid || !block)
    return api_fail(KCAST_E_ARG, "%s: NULL %s", fn,
                    !fm ? "feature model" : !fs ? "feature set" : !grid ? "grid" : "block");
  if (nargs && !args) return api_fail(KCAST_E_ARG, "%s: args is NULL", fn);
  if (ntargs && !targs) return api_fail(KCAST_E_ARG, "%s: targs is NULL", fn);
  fm_launch l;
  for (int i = 0; i < 3; i++) l.grid[i] = grid[i], l.block[i] = block[i];
  l.shmem = shared_bytes;
  l.args = args;
  l.nargs = nargs;
  l.targs = targs;
  l.ntargs = ntargs;
  unsigned fl = 0;
  size_t n = fm_nout(fm->m);
  if (fs->layout == fm->m && fs->v.n >= n) {
    if (fm_eval(fm->m, &l, fs->v.vals, &fl))
      return api_fail(KCAST_E_ARG, "%s: %s", fn, rf_last_error());
  } else {
    double *tmp = malloc((n ? n : 1) * sizeof *tmp);
    if (!tmp) return api_fail(KCAST_E_NOMEM, "%s: out of memory", fn);
    if (fm_eval(fm->m, &l, tmp, &fl)) {
      free(tmp);
      return api_fail(KCAST_E_ARG, "%s: %s", fn, rf_last_error());
    }
    for (size_t i = 0; i < n; i++)
      if (feat_set(&fs->v, fm_out_name(fm->m, i), tmp[i])) {
        free(tmp);
        return api_fail(KCAST_E_NOMEM, "%s: out of memory", fn);
      }
    free(tmp);
  }
  if (flags) *flags = (fl & FM_EXTRAPOLATED ? KCAST_FEATMODEL_EXTRAPOLATED : 0) |
                      (fl & FM_UNRELIABLE ? KCAST_FEATMODEL_UNRELIABLE : 0) |
                      (fl & FM_OTHER_BLOCK ? KCAST_FEATMODEL_OTHER_BLOCK : 0);
  return KCAST_OK;
}

kcast_status kcast_featmodel_fill(const kcast_featmodel *fm, const unsigned grid[3],
                                  const unsigned block[3], uint64_t shared_bytes,
                                  const double *args, size_t nargs, kcast_features *fs,
                                  unsigned *flags) {
  return fill("kcast_featmodel_fill", fm, NULL, 0, grid, block, shared_bytes, args, nargs, fs,
              flags);
}

kcast_status kcast_featmodel_fill_instance(const kcast_featmodel *fm, const char *instance,
                                           const double *targs, size_t ntargs,
                                           const unsigned grid[3], const unsigned block[3],
                                           uint64_t shared_bytes, const double *args,
                                           size_t nargs, kcast_features *fs, unsigned *flags) {
  static const char fn[] = "kcast_featmodel_fill_instance";
  if (!fm) return api_fail(KCAST_E_ARG, "%s: NULL feature model", fn);
  if (!instance) return fill(fn, fm, targs, ntargs, grid, block, shared_bytes, args, nargs, fs, flags);
  fm_info in;
  fm_get_info(fm->m, &in);
  double v[FM_MAX_TPL];
  size_t nv = 0;
  if (!in.ntpl) { /* not a template: the instance is the kernel itself */
    if (strcmp(instance, in.kernel) && !fe_name_match(in.kernel, instance))
      return api_fail(KCAST_E_ARG, "%s: '%s' is not the model's kernel %s", fn, instance,
                      in.kernel);
    return fill(fn, fm, NULL, 0, grid, block, shared_bytes, args, nargs, fs, flags);
  }
  char why[512];
  int tm = fe_template_args(instance, in.kernel, v, FM_MAX_TPL, &nv, why, sizeof why);
  if (tm < 0) return api_fail(KCAST_E_ARG, "%s: %s", fn, why);
  if (tm == 0 || nv != in.ntpl)
    return api_fail(KCAST_E_ARG, "%s: '%s' is not an instance of the template %s", fn, instance,
                    in.kernel);
  return fill(fn, fm, v, nv, grid, block, shared_bytes, args, nargs, fs, flags);
}
