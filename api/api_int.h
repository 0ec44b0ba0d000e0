/*
 * api_int.h -- internals shared by the files of the public API (api/):
 * the feature-set struct behind the opaque kcast_features handle and the
 * per-thread last-error setter.  Not installed; include/kcast.h is the
 * interface.  Internal names carry the api_ prefix and are not exported from
 * libkcast.so (api/libkcast.map exports kcast_* only).
 */
#ifndef KCAST_API_INT_H
#define KCAST_API_INT_H

#include "include/kcast.h"
#include "extractor/features.h"
#include "model/model.h"

/* A feature set: a feat_vec the handle owns. */
struct kcast_features {
  feat_vec v;          /* unique names, finite values; owned */
  const void *layout;  /* the fm_model whose outputs are v's first entries,
                          in its order (kcast_featmodel_features_new), or
                          NULL; names are never removed from a set, so the
                          layout holds until the set is freed */
};

/* A model: the forest and what predictions look up in it. */
struct kcast_model {
  rf_forest *f;        /* owned, immutable after load */
  kcast_target target; /* from the model's target name */
  char *path;          /* file it came from, for messages (owned) */
  const an_gpu *gpus[32]; /* the GPU-table rows of the GPUs it was trained
                             on (those the table knows) */
  size_t ngpus;
  size_t *fhash;       /* feat_name_hash of each feature name (fill_row) */
  uint32_t *fhint;     /* where fill_row last found each feature in a set
                          (relaxed atomics: threads share the model) */
  int16_t *dfam;       /* each feature's derived family (MD_FAM_*), -1 for
                          a raw one, and its index in the family (md_locate) */
  uint16_t *didx;
};

/* Fill the rest of m from m->f (its target, GPUs, name hashes); m->path is
   its label in messages.  On failure m is freed and the status returned. */
kcast_status api_model_init(kcast_model *m);

/*
 * Record the failure text of the calling thread (printf-style) and return
 * st, so that every entry point fails as `return api_fail(KCAST_E_ARG, ...)`.
 */
kcast_status api_fail(kcast_status st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
