/*
 * rf_walk.h -- the steps of a walk through a forest's trees, shared by
 * prediction (rf_predict.c) and the out-of-bag pass of training
 * (rf_train.c): the plain node walk, the 8-byte nodes' keys and means,
 * and eight rows stepping through one tree together.  Internal.
 */
#ifndef KCAST_RF_WALK_H
#define KCAST_RF_WALK_H

#include "model/rf_int.h"

#include <string.h>

/* Leaf for row i of column-major x (n rows), with feature j read as vj. */
static inline const rf_node *leaf_of_col(const rf_tree *t, const double *x, size_t n, size_t i,
                                         int j, double vj) {
  const rf_node *nd = t->nodes;
  uint32_t k = 0;
  while (nd[k].feature >= 0) {
    int f = nd[k].feature;
    double v = f == j ? vj : x[(size_t)f * n + i];
    k = nd[k].left + (v > nd[k].v);
  }
  return &nd[k];
}

/*
 * Order key of a float: for floats a, b (not NaN), a > b <=> fkey(a) >
 * fkey(b).  -0 becomes +0 first (they compare equal as floats).  Lets the
 * walk compare unsigned integers, one instruction fewer per step.
 */
static inline uint32_t fkey(float v) {
  v += 0.0f;
  uint32_t u;
  memcpy(&u, &v, sizeof u);
  return u >> 31 ? ~u : u | 0x80000000u;
}

_Static_assert(sizeof(rf_cnode) == 8 && sizeof(double) == 8, "8-byte slots");
#define CSLOT_BITS 3 /* 64-byte blocks: 128 measured no faster (7.98 against 7.98 us) */
#define CBLOCK (1u << CSLOT_BITS)          /* slots of a block */
#define CBLOCK_BYTES (CBLOCK * sizeof(rf_cnode))

/* The mean of leaf p: in p's own block, at the slot in key's low bits
   (rf_int.h). */
static inline double cmean(const rf_cnode *p) {
  double v;
  memcpy(&v, (const rf_cnode *)((uintptr_t)p & ~(uintptr_t)(CBLOCK_BYTES - 1)) + (p->key & (CBLOCK - 1)),
         sizeof v);
  return v;
}

/* rf__row_keys of one value, without a branch: the float's bits one step up
   (+1, or -1 when negative) when it is below v, -0 made +0, fkey's flip,
   0 for NaN. */
static inline uint32_t key_up(double v) {
  float x = (float)v;
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  u += -(uint32_t)((double)x < v) & (1u | -(u >> 31));
  u &= -(uint32_t)(u != 0x80000000u);
  u ^= (uint32_t)((int32_t)u >> 31) | 0x80000000u;
  return u & -(uint32_t)(v == v);
}

/*
 * Keys a row takes in the batch walks: the power of two above its
 * features, M = that - 1, so that a step reads key (feature byte & M): a
 * feature's own (features < M), and for a leaf's byte, RF_CLEAF, key M,
 * which is 0.  The byte was clamped to the row's last key before (a
 * compare and a move a step; rows of P + 1 keys): the batch without
 * intervals, one thread, best of 20: the 10,000 x 100 synthetic forests
 * 0.47-0.49 -> 0.47-0.50 M rows/s, the dedispersion A100 forests 0.79-
 * 0.83 -> 0.93-0.99 (the keys of 8 features now fill a line, 16 keys).
 */
static size_t key_stride(size_t P) {
  size_t s = 1;
  while (s < P + 1) s <<= 1;
  return s;
}
#define BSTEP(p, xk, M)                                   \
  do {                                                    \
    uint32_t kw_ = (p)->kw;                               \
    uint64_t o_ = kw_ >> 8;                                \
    o_ += (p)->key < (xk)[kw_ & (M)];                      \
    (p) += o_;                                             \
  } while (0)

/*
 * Eight rows through one tree, row q's keys at x[q] (key_stride: a
 * leaf's feature byte reads x[q][M], 0): R rounds (walk_rounds) in step, then
 * on in step until all eight are at a leaf, which the AND of their
 * feature bytes tells (RF_CLEAF only when every one is a leaf; a leaf
 * steps to itself).  Each row finishing its tail alone waited on every
 * step's load and mispredicted its loop's end once a row: on the 10,000 x
 * 100 synthetic forest the batch went 0.45 -> 0.47 M rows/s, on the
 * dedispersion A100 forests 0.73-0.78 -> 0.84-0.86 (one thread).
 */
static inline __attribute__((always_inline)) void walk8(const rf_cnode *root, uint32_t R, uint32_t M,
                                                         const uint32_t *const x[8],
                                                         const rf_cnode *out[8]) {
  const uint32_t *x0 = x[0], *x1 = x[1], *x2 = x[2], *x3 = x[3], *x4 = x[4], *x5 = x[5],
                 *x6 = x[6], *x7 = x[7];
  const rf_cnode *p0 = root, *p1 = root, *p2 = root, *p3 = root, *p4 = root, *p5 = root,
                 *p6 = root, *p7 = root;
#define ROUND()      \
  do {               \
    BSTEP(p0, x0, M); \
    BSTEP(p1, x1, M); \
    BSTEP(p2, x2, M); \
    BSTEP(p3, x3, M); \
    BSTEP(p4, x4, M); \
    BSTEP(p5, x5, M); \
    BSTEP(p6, x6, M); \
    BSTEP(p7, x7, M); \
  } while (0)
  for (uint32_t k = 0; k < R; k++) ROUND();
  while (((p0->kw & p1->kw & p2->kw & p3->kw & p4->kw & p5->kw & p6->kw & p7->kw) & 0xFF) !=
         RF_CLEAF)
    ROUND();
#undef ROUND
  out[0] = p0;
  out[1] = p1;
  out[2] = p2;
  out[3] = p3;
  out[4] = p4;
  out[5] = p5;
  out[6] = p6;
  out[7] = p7;
}

#endif
