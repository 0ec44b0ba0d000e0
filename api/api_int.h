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

/* A feature set: a feat_vec the handle owns. */
struct kcast_features {
  feat_vec v;          /* unique names, finite values; owned */
  const void *layout;  /* the fm_model whose outputs are v's first entries,
                          in its order (kcast_featmodel_features_new), or
                          NULL; names are never removed from a set, so the
                          layout holds until the set is freed */
};

/*
 * Record the failure text of the calling thread (printf-style) and return
 * st, so that every entry point fails as `return api_fail(KCAST_E_ARG, ...)`.
 */
kcast_status api_fail(kcast_status st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
