/*
 * nsight_fuzz.h -- the one body of the nsys and ncu fuzz targets
 * (nsys_fuzz.c, ncu_fuzz.c; make fuzz).
 *
 * Arbitrary bytes go to the reader as a file: prof_nsys_read takes them as
 * a cuda_gpu_trace CSV or, when they begin with SQLite's magic, as an
 * nsys SQLite export (read through ds_foreign: bounded, tables only);
 * prof_ncu_read as an ncu raw-page CSV.  A refused file must have a
 * message that names it; a read one must have kernels numbered in order,
 * each with a name, a geometry of positive dimensions, end >= start and a
 * finite duration >= 0.
 */
#ifndef KCAST_NSIGHT_FUZZ_H
#define KCAST_NSIGHT_FUZZ_H

#include <math.h>
#include <string.h>

#include "profiler/prof.h"
#include "tests/fuzz/fuzz_util.h"

typedef int (*nsight_reader)(const char *path, prof_records *r, char *err, size_t cap);

static inline int nsight_fuzz_one(nsight_reader read, const uint8_t *data, size_t size) {
  const char *path = fuzz_memfile(data, size);
  if (!path) return 0;
  prof_records r;
  char err[2048];
  if (read(path, &r, err, sizeof err)) {
    if (!strstr(err, path)) abort();
    return 0;
  }
  if (!r.nkernels) abort();
  for (size_t i = 0; i < r.nkernels; i++) {
    const prof_kernel *k = &r.kernels[i];
    if (!k->name || k->lseq != (int64_t)i || k->end < k->start) abort();
    if (k->has_dur && !(isfinite(k->dur_ns) && k->dur_ns >= 0)) abort();
    for (int q = 0; q < 3; q++)
      if (!k->grid[q] || !k->block[q]) abort();
  }
  prof_records_free(&r);
  return 0;
}

#endif
