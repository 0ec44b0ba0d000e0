// nbody_fp64.cu -- the fp64 variant of nbody.cu: the same all-pairs tiled
// n-body in double precision (rsqrt(double)); same usage and launch count,
// reference in long double, tolerance scaled to double.
// usage: nbody_fp64 N [BLOCK] [ITERS]
#define SUITE_FP64 1
#include "nbody.cu"
