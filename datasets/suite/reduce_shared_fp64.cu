// reduce_shared_fp64.cu -- the fp64 variant of reduce_shared.cu: the same
// multi-pass shared-memory tree reduction over doubles (same usage, same launch
// count, tolerance scaled to double's epsilon).
// usage: reduce_shared_fp64 N [BLOCK]
#define SUITE_FP64 1
#include "reduce_shared.cu"
