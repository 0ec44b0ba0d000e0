/*
 * ds_int.h -- internals the dataset store shares with its importers
 * (ds_mangrove.c).  Nothing outside datasets/ includes it; everything else
 * goes through ds.h.
 *
 * Why: an importer reports problems in files other than the dataset (its
 * inputs), so it needs to set the handle's message verbatim instead of the
 * "DATASET: ..." form ds.c's own failures take; ds_errmsg() then reads it
 * the same way as any other failure.
 */
#ifndef KCAST_DS_INT_H
#define KCAST_DS_INT_H

#include "datasets/ds.h"

/* Set ds_errmsg(db) to the formatted text, as is (no file prefix added). */
void ds_set_errmsg(ds_db *db, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
