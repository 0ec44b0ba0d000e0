/*
 * rf_predict.c -- walking a trained forest: the compact 8-byte node layout
 * built after training or loading (rf__build_fast), the single-row walk,
 * intervals from the calibration tables, the tree-major batch walk and
 * the batch walker of the API.  Growing the forest is rf_train.c; the
 * walk's steps that the out-of-bag pass shares are rf_walk.h.
 */
#include "model/rf_int.h"
#include "model/rf_walk.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

void rf__free_fast(rf_forest *f) {
  rf__free(f->cn);
  rf__free(f->cmem);
  rf__free(f->corder);
  rf__free(f->cdepth);
  f->cn = NULL;
  f->cmem = NULL;
  f->corder = NULL;
  f->cdepth = NULL;
  f->cdirect = 0;
  f->cbits = 0;
  f->csolo = 0;
  f->csorted = 0;
  f->cwide = 0;
}

#define RF_WALK_BATCH 256

/* Trees a group walks together (the rest in groups of eight, then one by
   one).  Measured on the 10,000 x 30 synthetic extra-trees forest of
   bench/api_bench (2 million nodes, most steps a miss), kcast_predict with
   interval, cycling 1,000 rows, per-run medians of two runs: 8 trees
   9.2-10.5 us, 16 trees 7.7-8.8, 24 and 32 trees no better (8.2-9.4):
   about as many misses as a core keeps in flight.  With the adc step (and
   on a machine of 2 MB of L2 a core) 32 trees gained there, 4.73-4.84 ->
   4.46-4.67 us, but not on forests within reach of the caches (the
   Mangrove T4 forest 2.11-2.15 -> 2.13-2.20 us, dedispersion A100 ET
   1.84-1.88 -> 1.88-1.91): a forest whose nodes pass RF_WIDE_BYTES walks
   RF_WALK_WIDE trees a group (f->cwide). */
#define RF_WALK_WIDTH 16
#define RF_WALK_WIDE 32
#define RF_WIDE_BYTES (16u << 20)

/*
 * Blocked layout of one tree (rf_int.h): node k goes to slot pos[2k], a
 * leaf's mean to slot pos[2k+1]; returns the number of blocks.  Block 0
 * starts with the root; every block is filled from its first pair, the
 * pair below it with the most training samples (wt: a node's samples)
 * next, each pair taken with its leaves' means or not at all; a pair that
 * does not fit starts a later block (queue q, n_nodes).  Filled breadth-
 * first instead, a path through a 10,000-row extra tree crossed 7.49
 * blocks (2.21 levels a block, paths weighted by samples); heaviest first
 * 6.85 (2.42), and 3.43 -> 3.13 on the 43-row Mangrove forest.
 */
static uint32_t place_tree(const rf_tree *t, const uint32_t *wt, uint32_t *pos, uint32_t *q) {
  const rf_node *nd = t->nodes;
  uint32_t nb = 1, block = 0, used = 1, qh = 0, qt = 0;
  pos[0] = 0;
  if (nd[0].feature < 0) {
    pos[1] = 1;
    return 1;
  }
  uint32_t first = nd[0].left;
  for (;;) {
    /* candidates: at most CBLOCK / 2 pairs are taken and each adds 2 */
    uint32_t loc[CBLOCK + 2];
    unsigned nl = 0;
    loc[nl++] = first;
    while (nl) {
      unsigned bi = 0; /* the heaviest pair, the first of equals */
      for (unsigned i = 1; i < nl; i++)
        if ((uint64_t)wt[loc[i]] + wt[loc[i] + 1] > (uint64_t)wt[loc[bi]] + wt[loc[bi] + 1]) bi = i;
      uint32_t a = loc[bi];
      memmove(loc + bi, loc + bi + 1, (nl - bi - 1) * sizeof *loc);
      nl--;
      unsigned leaves = (nd[a].feature < 0) + (nd[a + 1].feature < 0);
      if (used + 2 + leaves > CBLOCK) {
        q[qt++] = a;
        continue;
      }
      uint32_t at = block * CBLOCK + used;
      pos[2 * (size_t)a] = at;
      pos[2 * (size_t)a + 2] = at + 1;
      used += 2;
      for (uint32_t c = a; c <= a + 1; c++) {
        if (nd[c].feature < 0) pos[2 * (size_t)c + 1] = block * CBLOCK + used++;
        else loc[nl++] = nd[c].left;
      }
    }
    if (qh == qt) break;
    first = q[qh++];
    block = nb++;
    used = 0;
  }
  return nb;
}

/* wt[k]: the training samples below node k (children have higher
   indices than their parent). */
static void node_weights(const rf_tree *t, uint32_t *wt) {
  for (uint32_t k = t->n_nodes; k-- > 0;) {
    const rf_node *nd = &t->nodes[k];
    wt[k] = nd->feature < 0 ? t->leaf_off[nd->left + 1] - t->leaf_off[nd->left]
                            : wt[nd->left] + wt[nd->left + 1];
  }
}

/*
 * Rounds of the branch-free walk for a tree: the depth that 3/4 of the
 * training rows reach a leaf by (leaves weighted by their stored values,
 * about their row counts).  Walking every tree to its full depth wasted a
 * third of the steps on trees already at a leaf; the rows still inside a
 * tree after these rounds finish in a short tail (rf__raw_mean).
 * d: scratch of n_nodes, w: of n_nodes + 1; children have higher indices
 * than their parent.
 */
static uint32_t walk_rounds(const rf_tree *t, uint32_t *d, uint64_t *w) {
  uint64_t total = 0, below = 0;
  uint32_t mx = 0;
  d[0] = 0;
  w[0] = 0;
  for (uint32_t k = 0; k < t->n_nodes; k++) {
    const rf_node *nd = &t->nodes[k];
    if (nd->feature >= 0) {
      d[nd->left] = d[nd->left + 1] = d[k] + 1;
      if (d[k] + 1 > mx) w[++mx] = 0;
    } else {
      uint32_t c = t->leaf_off[nd->left + 1] - t->leaf_off[nd->left];
      w[d[k]] += c;
      total += c;
    }
  }
  for (uint32_t r = 0; r < mx; r++) {
    below += w[r];
    if (4 * below >= 3 * total) return r;
  }
  return mx;
}

int rf__leaf_numbers;

/* Trees are independent: both passes run in parallel (this runs after
   every training and load). */
int rf__build_fast(rf_forest *f) {
  rf__free_fast(f);
  if (f->n_features >= RF_CLEAF || f->n_trees == 0) return 0;
  size_t T = f->n_trees;
  uint32_t max_nodes = 0;
  size_t *pofs = rf__mallocn(T + 1, sizeof(size_t)); /* pos of tree t at 2*pofs[t] */
  size_t *off = rf__mallocn(T + 1, sizeof(size_t));
  if (!pofs || !off) goto nomem;
  pofs[0] = 0;
  for (size_t t = 0; t < T; t++) {
    const rf_tree *tr = &f->trees[t];
    if (tr->n_nodes >= (1u << 24)) goto none;
    if (tr->n_nodes > max_nodes) max_nodes = tr->n_nodes;
    pofs[t + 1] = pofs[t] + tr->n_nodes;
  }
  uint32_t *pos = rf__mallocn(pofs[T], 2 * sizeof(uint32_t));
  f->cn = rf__calloc(T, sizeof *f->cn);
  f->corder = rf__mallocn(T, sizeof(uint32_t));
  f->cdepth = rf__mallocn(T, sizeof(uint32_t));
  int nt = rf__nthreads(0), failed = 0, big = 0;
  uint32_t maxc = 0, maxv = 0, minc = UINT32_MAX; /* leaf counts, samples a tree */
  int notsolo = 0; /* a one-sample leaf whose sample is not its mean as float */
  if (!pos || !f->cn || !f->corder || !f->cdepth) {
    rf__free(pos);
    goto nomem;
  }
  /* pass 1: every threshold a float (checked here, in parallel, while the
     tree is read anyway: a serial pass over the nodes of 100 trees cost
     1.3 ms after the training had left them out of cache), placement,
     sizes and rounds */
  int unsorted = 0; /* a leaf whose samples are out of key order (+0 before -0) */
#pragma omp parallel num_threads(nt) reduction(| : failed, big, notsolo, unsorted) \
    reduction(max : maxc, maxv) reduction(min : minc)
  {
    uint32_t *q = rf__mallocn(max_nodes, sizeof(uint32_t));
    uint64_t *w = rf__mallocn(max_nodes, sizeof(uint64_t));
    uint32_t *wt = rf__mallocn(max_nodes, sizeof(uint32_t));
    if (!q || !w || !wt) failed = 1;
#pragma omp for schedule(dynamic, 4)
    for (size_t t = 0; t < T; t++) {
      if (!q || !w || !wt) continue;
      const rf_tree *tr = &f->trees[t];
      for (uint32_t k = 0; k < tr->n_nodes; k++)
        big |= tr->nodes[k].feature >= 0 && (double)(float)tr->nodes[k].v != tr->nodes[k].v;
      for (uint32_t k = 0; k < tr->n_leaves; k++) {
        uint32_t c = tr->leaf_off[k + 1] - tr->leaf_off[k];
        maxc = c > maxc ? c : maxc;
        minc = c < minc ? c : minc;
      }
      for (uint32_t k = 0; k < tr->n_nodes; k++) {
        const rf_node *nd = &tr->nodes[k];
        if (nd->feature >= 0) continue;
        uint32_t a = tr->leaf_off[nd->left];
        if (tr->leaf_off[nd->left + 1] - a != 1) continue;
        float m = (float)nd->v;
        notsolo |= memcmp(&m, &tr->values[a], sizeof m) != 0;
      }
      for (uint32_t k = 0; k < tr->n_leaves; k++)
        for (uint32_t s = tr->leaf_off[k] + 1; s < tr->leaf_off[k + 1]; s++)
          unsorted |= rf__vkey(tr->values[s]) < rf__vkey(tr->values[s - 1]);
      maxv = tr->n_values > maxv ? tr->n_values : maxv;
      node_weights(tr, wt);
      uint32_t nb = place_tree(tr, wt, pos + 2 * pofs[t], q);
      big |= (uint64_t)nb * CBLOCK >= (1u << 24);
      off[t + 1] = (size_t)nb * CBLOCK;
      f->corder[t] = (uint32_t)t;
      f->cdepth[t] = walk_rounds(&f->trees[t], q, w);
    }
    rf__free(q);
    rf__free(w);
    rf__free(wt);
  }
  if (failed || big) {
    rf__free(pos);
    if (failed) goto nomem;
    goto none;
  }
  off[0] = 0;
  for (size_t t = 0; t < T; t++) off[t + 1] += off[t];
  /* direct leaf codes (rf_int.h) when offsets and counts fit 29 bits */
  {
    unsigned cb = maxc > 1 ? 32u - (unsigned)__builtin_clz(maxc - 1) : 0;
    unsigned ob = maxv > 1 ? 32u - (unsigned)__builtin_clz(maxv - 1) : 0;
    f->cdirect = minc >= 1 && cb + ob <= 32 - CSLOT_BITS && !rf__leaf_numbers;
    f->cbits = cb;
    f->csolo = !notsolo;
    f->csorted = !unsorted;
  }
  /* walk order: by decreasing rounds within each batch (stable) */
  for (size_t t0 = 0; t0 < T; t0 += RF_WALK_BATCH) {
    size_t e = T - t0 < RF_WALK_BATCH ? T : t0 + RF_WALK_BATCH;
    for (size_t i = t0 + 1; i < e; i++) {
      uint32_t o = f->corder[i], d = f->cdepth[i];
      size_t k = i;
      for (; k > t0 && f->cdepth[k - 1] < d; k--) {
        f->corder[k] = f->corder[k - 1];
        f->cdepth[k] = f->cdepth[k - 1];
      }
      f->corder[k] = o;
      f->cdepth[k] = d;
    }
  }
  /* pass 2: one 64-byte aligned arena, unused slots zero */
  f->cmem = rf__calloc(off[T] + CBLOCK, sizeof(rf_cnode));
  if (!f->cmem) {
    rf__free(pos);
    goto nomem;
  }
  f->cwide = off[T] * sizeof(rf_cnode) > RF_WIDE_BYTES ? RF_WALK_WIDE : RF_WALK_WIDTH;
  rf_cnode *arena = (rf_cnode *)(((uintptr_t)f->cmem + CBLOCK_BYTES - 1) & ~(uintptr_t)(CBLOCK_BYTES - 1));
  rf__want_hugepages(arena, off[T] * sizeof(rf_cnode));
#pragma omp parallel for num_threads(nt) schedule(dynamic, 4)
  for (size_t t = 0; t < T; t++) {
    const rf_tree *tr = &f->trees[t];
    const uint32_t *ps = pos + 2 * pofs[t];
    rf_cnode *c = arena + off[t];
    f->cn[t] = c;
    for (uint32_t k = 0; k < tr->n_nodes; k++) {
      const rf_node *nd = &tr->nodes[k];
      rf_cnode *o = &c[ps[2 * (size_t)k]];
      if (nd->feature < 0) {
        uint32_t vs = ps[2 * (size_t)k + 1];
        uint32_t code = nd->left; /* leaf number, or offset and count */
        if (f->cdirect) {
          uint32_t a = tr->leaf_off[nd->left], cnt = tr->leaf_off[nd->left + 1] - a;
          code = a << f->cbits | (cnt - 1);
        }
        o->key = code << CSLOT_BITS | (vs & (CBLOCK - 1)); /* leaf code, mean's slot */
        o->kw = RF_CLEAF; /* kid offset 0: steps to itself */
        memcpy(&c[vs], &nd->v, sizeof nd->v);
      } else {
        o->key = fkey((float)nd->v);
        o->kw = (ps[2 * (size_t)nd->left] - ps[2 * (size_t)k]) << 8 | (uint32_t)nd->feature;
      }
    }
  }
  rf__free(pos);
  rf__free(pofs);
  rf__free(off);
  return 0;
none:
  rf__free(pofs);
  rf__free(off);
  rf__free_fast(f);
  return 0;
nomem:
  rf__free(pofs);
  rf__free(off);
  rf__free_fast(f);
  return -1;
}


/*
 * The walk's keys of x[0..n): k[j] = fkey of the smallest float >= x[j]
 * (+inf above the float range), 0 for NaN.  Computed that way (the float,
 * nextafterf up when it is below x[j]) it branched on whether the float
 * is below the double, at random for data that is not float already:
 * 1,045 ns for a row of 100 random doubles in a loop; branch-free 300 ns,
 * four at a time with SSE2 75 ns.  Checked equal to the definition on 2e8
 * doubles (any bits, floats, doubles within 2^29 ulps of a float) and the
 * special values (and in tests/test_rf.c).
 */
void rf__row_keys(const double *x, size_t n, uint32_t *k) {
  size_t j = 0;
#ifdef __SSE2__
  const __m128i one = _mm_set1_epi32(1), sign = _mm_set1_epi32((int)0x80000000u);
  for (; j + 4 <= n; j += 4) {
    __m128d v0 = _mm_loadu_pd(x + j), v1 = _mm_loadu_pd(x + j + 2);
    __m128 f = _mm_movelh_ps(_mm_cvtpd_ps(v0), _mm_cvtpd_ps(v1));
    __m128d f0 = _mm_cvtps_pd(f), f1 = _mm_cvtps_pd(_mm_movehl_ps(f, f));
    /* the 64-bit masks of the two pairs as four 32-bit lanes */
    __m128i up = _mm_castps_si128(_mm_shuffle_ps(_mm_castpd_ps(_mm_cmplt_pd(f0, v0)),
                                                 _mm_castpd_ps(_mm_cmplt_pd(f1, v1)),
                                                 _MM_SHUFFLE(2, 0, 2, 0)));
    __m128i ok = _mm_castps_si128(_mm_shuffle_ps(_mm_castpd_ps(_mm_cmpord_pd(v0, v0)),
                                                 _mm_castpd_ps(_mm_cmpord_pd(v1, v1)),
                                                 _MM_SHUFFLE(2, 0, 2, 0)));
    __m128i u = _mm_castps_si128(f);
    u = _mm_add_epi32(u, _mm_and_si128(up, _mm_or_si128(_mm_srai_epi32(u, 31), one)));
    u = _mm_andnot_si128(_mm_cmpeq_epi32(u, sign), u);
    u = _mm_xor_si128(u, _mm_or_si128(_mm_srai_epi32(u, 31), sign));
    _mm_storeu_si128((__m128i *)(void *)(k + j), _mm_and_si128(u, ok));
  }
#endif
  for (; j < n; j++) k[j] = key_up(x[j]);
}

/*
 * Mean leaf value over the trees.  Walking one tree after the other makes
 * every node load wait for the previous one (about 1,500 dependent loads
 * for 100 full-depth trees, most of them cache misses), so trees are
 * walked together and their loads overlap.  On the 8-byte nodes a leaf
 * steps to itself, so the walk needs no test for leaves (that test
 * mispredicted as trees finished at different rounds): sixteen trees at a
 * time (RF_WALK_WIDTH) step for the rounds of the deepest of them
 * (walk_rounds: the depth most rows are done by; trees sorted by it), and
 * the few still inside a tree then finish in an interleaved tail.  Leaf
 * values are summed in tree order afterwards, so the result is bit-
 * identical to the sequential walk over the 16-byte nodes.  Blocks of
 * two levels per cache line (rf_int.h) halve the lines a walk touches.
 * Measured against the previous walk (active list, breadth-first 8-byte
 * nodes) on the dedispersion data, 100 trees, one process: 2.15 -> 1.63
 * us with one row repeated, 4.8 -> 3.5 us cycling through 1,000 rows;
 * on a 430-row forest 1.3 -> 1.0 and 2.5 -> 1.7 us.  On a larger forest
 * (20,000 x 100 synthetic rows, 637,000 nodes) only the repeated row gains
 * (3.0 -> 2.1-2.9 us); cycling rows stay at 7-10 us, bound by misses.
 */
static double fast_leaves(const rf_forest *f, const double *row, uint32_t *leaf, double *mean);
/* A step adds the comparison to the kid offset in 64 bits before scaling
   it (o += key < x; p += o): gcc then emits cmp and adc and one lea, 8
   instructions a step instead of 10 (setb, movzx, shl, lea, add).  rf
   bench's single-row latency, cycling 1,000 rows, 100 trees, medians of
   5 x 2 alternated runs: synthetic RF 1.97 -> 1.89 us, ET 1.93 -> 1.85,
   dedispersion A100 RF 1.96 -> 1.88, ET 1.98 -> 1.87; kcast_predict with
   interval on the 10,000 x 30 forest 4.8-5.2 -> 4.6-4.9 us (one set
   repeated 2.62 -> 2.37). */

double rf__raw_mean(const rf_forest *f, const double *row) {
  size_t T = f->n_trees;
  double s = 0;
  if (f->cn) return fast_leaves(f, row, NULL, NULL) / (double)T;
  for (size_t t0 = 0; t0 < T; t0 += RF_WALK_BATCH) {
    size_t nb = T - t0 < RF_WALK_BATCH ? T - t0 : RF_WALK_BATCH;
    const rf_tree *tr = f->trees + t0;
    const rf_node *cur[RF_WALK_BATCH];
    double val[RF_WALK_BATCH];
    uint16_t act[RF_WALK_BATCH];
    for (size_t t = 0; t < nb; t++) {
      cur[t] = tr[t].nodes;
      act[t] = (uint16_t)t;
    }
    size_t na = nb;
    while (na) {
      size_t k = 0;
      for (size_t a = 0; a < na; a++) {
        unsigned t = act[a];
        const rf_node *nd = cur[t];
        if (nd->feature < 0) {
          val[t] = nd->v;
          continue;
        }
        const rf_node *nx = tr[t].nodes + nd->left + (row[nd->feature] > nd->v);
        __builtin_prefetch(nx);
        cur[t] = nx;
        act[k++] = (uint16_t)t;
      }
      na = k;
    }
    for (size_t t = 0; t < nb; t++) s += val[t];
  }
  return s / (double)T;
}

/*
 * The leaf of every tree (leaf[t], its number; leaf may be NULL) and the
 * sum of their means in tree order, on the 8-byte nodes: the walk
 * rf__raw_mean's comment describes (eight trees in registers for their
 * rounds, then the tail).  rf_predict_interval walked tree by tree over the
 * 16-byte nodes before: 4.3-4.8 us for 100 trees of a 43-row forest,
 * 17-29 us for one of 10,000 rows (cycling 1,000 rows on a shared
 * machine; the trees interleaved on the 16-byte nodes: 2.4-2.9 and 4.3-
 * 6.5 us; this walk costs what the point prediction does, 1.2-2 and 4-6
 * us).
 */
static double fast_leaves(const rf_forest *f, const double *row, uint32_t *leaf, double *mean) {
  size_t T = f->n_trees;
  uint32_t xk[RF_CLEAF + 1];
  rf__row_keys(row, f->n_features, xk);
  xk[RF_CLEAF] = 0;
  double s = 0;
  for (size_t t0 = 0; t0 < T; t0 += RF_WALK_BATCH) {
    size_t nb = T - t0 < RF_WALK_BATCH ? T - t0 : RF_WALK_BATCH, i = 0;
    const uint32_t *ord = f->corder + t0, *rounds = f->cdepth + t0;
    const rf_cnode *cur[RF_WALK_BATCH];
    double val[RF_WALK_BATCH];
#define STEP(p)                                \
  do {                                         \
    uint32_t kw_ = (p)->kw;                    \
    uint64_t o_ = kw_ >> 8;                    \
    o_ += (p)->key < xk[kw_ & 0xFF];           \
    (p) += o_;                                 \
  } while (0)
#define GROUPS(W)                                                \
  for (; i + (W) <= nb; i += (W)) {                              \
    const rf_cnode *pw[W];                                       \
    for (unsigned q = 0; q < (W); q++) pw[q] = f->cn[ord[i + q]]; \
    for (uint32_t r = 0; r < rounds[i]; r++) {                   \
      _Pragma("GCC unroll 32") for (unsigned q = 0; q < (W); q++) STEP(pw[q]); \
    }                                                            \
    for (unsigned q = 0; q < (W); q++) cur[i + q] = pw[q];       \
  }
    if (f->cwide == RF_WALK_WIDE) GROUPS(RF_WALK_WIDE)
    GROUPS(RF_WALK_WIDTH)
#undef GROUPS
    for (; i + 8 <= nb; i += 8) { /* named, so that they stay in registers */
      const rf_cnode *p0 = f->cn[ord[i]], *p1 = f->cn[ord[i + 1]], *p2 = f->cn[ord[i + 2]],
                     *p3 = f->cn[ord[i + 3]], *p4 = f->cn[ord[i + 4]], *p5 = f->cn[ord[i + 5]],
                     *p6 = f->cn[ord[i + 6]], *p7 = f->cn[ord[i + 7]];
      for (uint32_t r = 0; r < rounds[i]; r++) {
        STEP(p0);
        STEP(p1);
        STEP(p2);
        STEP(p3);
        STEP(p4);
        STEP(p5);
        STEP(p6);
        STEP(p7);
      }
      cur[i] = p0;
      cur[i + 1] = p1;
      cur[i + 2] = p2;
      cur[i + 3] = p3;
      cur[i + 4] = p4;
      cur[i + 5] = p5;
      cur[i + 6] = p6;
      cur[i + 7] = p7;
    }
    if (i < nb) { /* the last few together too: one by one, each step of
                     theirs waited for the last (10 % of a prediction on a
                     10,000 x 30 forest of 100 trees, perf, for 4 trees) */
      size_t e = nb;
      for (size_t q = i; q < e; q++) cur[q] = f->cn[ord[q]];
      for (uint32_t r = 0; r < rounds[i]; r++)
        for (size_t q = i; q < e; q++) STEP(cur[q]);
      i = e;
    }
#undef STEP
    uint16_t act[RF_WALK_BATCH];
    size_t na = 0;
    for (i = 0; i < nb; i++) {
      act[na] = (uint16_t)i;
      na += (cur[i]->kw & 0xFF) != RF_CLEAF;
    }
    while (na) {
      size_t k = 0;
      for (size_t a = 0; a < na; a++) {
        const rf_cnode *nd = cur[act[a]];
        uint32_t kw = nd->kw;
        if ((kw & 0xFF) == RF_CLEAF) continue;
        uint64_t o = kw >> 8;
        o += nd->key < xk[kw & 0xFF];
        cur[act[a]] = nd + o;
        act[k++] = act[a];
      }
      na = k;
    }
    for (i = 0; i < nb; i++) {
      val[ord[i] - t0] = cmean(cur[i]);
      if (leaf) leaf[ord[i]] = cur[i]->key >> CSLOT_BITS;
    }
    if (mean) memcpy(mean + t0, val, nb * sizeof *val);
    for (i = 0; i < nb; i++) s += val[i];
  }
  return s;
}

double rf_predict(const rf_forest *f, const double *row) {
  double m = rf__raw_mean(f, row);
  return rf__untransform(f->params.transform, m + rf__offset(f, row) + rf__shift(f, &f->cal, row, m));
}

/* The prediction and interval of a row from its leaves (codes on the
   8-byte nodes, else nodes) and s, the sum of their means in tree order;
   means: those means by tree, or NULL; off is the row's base offset.  A
   row beyond the training ranges, and every row answered by a table with
   a shrink, moves prediction and interval alike (rf__shift). */
static int interval_of(const rf_forest *f, const double *row, const rf_calib *cal,
                       double coverage, double s, double off, const void *leaves,
                       const double *means, double *pred, double *lo, double *hi) {
  size_t T = f->n_trees;
  off += rf__shift(f, cal, row, s / (double)T);
  if (pred) *pred = rf__untransform(f->params.transform, s / (double)T + off);
  if (lo || hi) {
    /* QRF quantiles and the calibration's widening: model/rf_calib.c */
    double alpha = (1 - coverage) / 2, probs[2] = {alpha, 1 - alpha}, v[2];
    if (f->cn ? rf__leaf_quantiles_n(f, leaves, means, probs, 2, v, NULL, NULL)
              : rf__leaf_quantiles(f, leaves, probs, 2, v, NULL, NULL))
      return -1;
    double vlo = v[0], vhi = v[1];
    if (cal->n) { /* calibrated: hold the point prediction, widen by q */
      double q = rf__calib_q(cal, coverage), m = s / (double)T;
      vlo = (vlo < m ? vlo : m) - q;
      vhi = (vhi > m ? vhi : m) + q;
      if (vlo > vhi) vlo = vhi = m;
      if (vlo > m) vlo = m;
      if (vhi < m) vhi = m;
    }
    if (lo) *lo = rf__untransform(f->params.transform, vlo + off);
    if (hi) *hi = rf__untransform(f->params.transform, vhi + off);
  }
  return 0;
}

/* The error of a row whose base value is not > 0 and finite (-1). */
static int bad_base(const rf_forest *f, const double *row) {
  return rf__err("feature %s, the model's base, is %g; it must be positive",
                 f->features[f->params.base_feature], row[f->params.base_feature]);
}

int rf_predict_interval(const rf_forest *f, const double *row, double coverage, double *pred,
                        double *lo, double *hi) {
  return rf_predict_interval_on(f, row, coverage, 0, pred, lo, hi);
}

int rf_predict_interval_on(const rf_forest *f, const double *row, double coverage, int unseen,
                           double *pred, double *lo, double *hi) {
  const rf_calib *cal = !unseen ? &f->cal : f->cal_unseen.n ? &f->cal_unseen : &f->cal_prior;
  if (!(coverage > 0 && coverage < 1)) return rf__err("coverage %g is not in (0, 1)", coverage);
  double off = rf__offset(f, row);
  if (isnan(off)) return bad_base(f, row);
  size_t T = f->n_trees;
  /* the leaves: their codes (8-byte nodes) or nodes (16-byte ones); the
     means by tree on the 8-byte nodes */
  union {
    uint32_t num[512];
    const rf_node *node[512];
  } st;
  double stmean[512], *means = NULL;
  void *leaves = T <= 512 ? (void *)&st : rf__mallocn(T, f->cn ? sizeof(uint32_t) : sizeof(rf_node *));
  if (!leaves) return rf__nomem();
  double s = 0;
  if (f->cn) {
    means = T <= 512 ? stmean : rf__mallocn(T, sizeof *means);
    if (!means) {
      if (leaves != (void *)&st) rf__free(leaves);
      return rf__nomem();
    }
    s = fast_leaves(f, row, leaves, means);
  } else {
    const rf_node **nd = leaves;
    for (size_t t = 0; t < T; t++) nd[t] = f->trees[t].nodes;
    rf__walk(f, row, nd);
    for (size_t t = 0; t < T; t++) s += nd[t]->v;
  }
  int rc = interval_of(f, row, cal, coverage, s, off, leaves, means, pred, lo, hi);
  if (leaves != (void *)&st) rf__free(leaves);
  if (means != stmean) rf__free(means);
  return rc;
}

/*
 * Batch prediction on the 8-byte nodes, tree-major: a block of rows (up
 * to RF_BLOCK_MAX, their keys within RF_BLOCK_BYTES) goes through tree 0,
 * then tree 1, ..., so each tree's upper levels stay in cache for the
 * whole block instead of every row walking every tree, most steps a miss
 * (the row-by-row walk reached 127,000 rows/s on a forest of 200,000
 * synthetic rows).  Within a tree, eight rows step together for the
 * tree's rounds (walk_rounds), their loads overlapping as the trees of
 * fast_leaves do, and on together until all eight are at a leaf (walk8,
 * a change measured there); the OOB
 * predictions (oob_fast) walk the same way.  The bound is the steps: on
 * the dedispersion A100 forests (100 trees; 1,372 rounds a row for bootstrap
 * trees of min-leaf 5, 1,745 for the default extra trees) one thread made
 * 0.49-0.77 and 0.37-0.54 M rows/s, about 1e9 steps a second, a few
 * cycles each (three loads, a compare and adds); 10 M rows/s on two
 * cores would need under 200 steps a row.  Tried and measured slower or no
 * faster (200,000 rows, one thread, those forests): sixteen rows stepping
 * together (0.96-1.1x) and sixteen rows a step through AVX-512 gathers
 * (0.6-0.7x: gathers are slow on this CPU).  Each row's sum adds its
 * leaf means in tree order from 0, as fast_leaves does, so every
 * prediction is bit-identical to rf_predict's and rf_predict_interval's.
 */
#define RF_BLOCK_MAX 2048
#define RF_BLOCK_MIN 64
#define RF_BLOCK_BYTES (256 << 10) /* a block's keys: well inside L2 */


typedef struct bwalk {
  uint32_t *xk;    /* rows x key_stride(n_features) keys */
  double *s;       /* rows sums */
  uint32_t *leaf;  /* rows x n_trees leaf numbers, or NULL */
  double *mean;    /* rows x n_trees leaf means, or NULL */
} bwalk;

/* nr rows through every tree, feature j of row r at x[r * rs + j * cs]:
   a column-major block of nr <= RF_BLOCK_MAX rows (rs 1, cs the column
   length) or rows one after another (rs n_features, cs 1).  Sums in
   B->s, leaf numbers in B->leaf[r * T + t] and means in B->mean[r * T +
   t] when they are there.  rounds[t]: tree t's rounds. */
static void walk_block(const rf_forest *f, const double *x, size_t rs, size_t cs, size_t nr,
                       const uint32_t *rounds, bwalk *B) {
  size_t T = f->n_trees, P = f->n_features, stride = key_stride(P);
  uint32_t M = (uint32_t)stride - 1;
  if (cs == 1) { /* rows one after another: a row's keys at once */
    for (size_t r = 0; r < nr; r++) rf__row_keys(x + r * rs, P, B->xk + r * stride);
  } else { /* a column's keys at once (contiguous), then into the rows */
    uint32_t col[RF_BLOCK_MAX];
    for (size_t j = 0; j < P; j++) {
      rf__row_keys(x + j * cs, nr, col);
      for (size_t r = 0; r < nr; r++) B->xk[r * stride + j] = col[r];
    }
  }
  for (size_t r = 0; r < nr; r++) {
    B->xk[r * stride + M] = 0;
    B->s[r] = 0;
  }
  for (size_t t = 0; t < T; t++) {
    const rf_cnode *root = f->cn[t];
    uint32_t R = rounds[t];
    size_t r = 0;
    for (; r + 8 <= nr; r += 8) {
      const uint32_t *x8[8];
      const rf_cnode *pp[8];
      for (unsigned q = 0; q < 8; q++) x8[q] = B->xk + (r + q) * stride;
      walk8(root, R, M, x8, pp);
      for (unsigned q = 0; q < 8; q++) {
        const rf_cnode *p = pp[q];
        double v = cmean(p);
        B->s[r + q] += v;
        if (B->leaf) B->leaf[(r + q) * T + t] = p->key >> CSLOT_BITS;
        if (B->mean) B->mean[(r + q) * T + t] = v;
      }
    }
    for (; r < nr; r++) {
      const rf_cnode *p = root;
      const uint32_t *xq = B->xk + r * stride;
      while ((p->kw & 0xFF) != RF_CLEAF) BSTEP(p, xq, M);
      double v = cmean(p);
      B->s[r] += v;
      if (B->leaf) B->leaf[r * T + t] = p->key >> CSLOT_BITS;
      if (B->mean) B->mean[r * T + t] = v;
    }
  }
}

int rf_predict_batch(const rf_forest *f, const rf_data *d, double coverage, double *pred,
                     double *lo, double *hi, int n_threads) {
  if (d->n_cols != f->n_features)
    return rf__err("data has %zu feature columns, the model %zu", d->n_cols, f->n_features);
  int want_iv = lo || hi;
  if (want_iv && !(coverage > 0 && coverage < 1))
    return rf__err("coverage %g is not in (0, 1)", coverage);
  size_t n = d->n_rows, p = d->n_cols, T = f->n_trees;
  int failed = 0;
  uint32_t *rounds = NULL;
  if (f->cn) { /* each tree's rounds, by tree */
    if (!(rounds = rf__mallocn(T ? T : 1, sizeof *rounds))) return rf__nomem();
    for (size_t i = 0; i < T; i++) rounds[f->corder[i]] = f->cdepth[i];
  }
  /* rows per block: their keys within RF_BLOCK_BYTES, and at least four
     blocks a thread when there are rows enough */
  int nt = rf__nthreads(n_threads);
  size_t blk_rows = RF_BLOCK_BYTES / (4 * key_stride(p)), even = n / (4 * (size_t)nt);
  if (blk_rows > RF_BLOCK_MAX) blk_rows = RF_BLOCK_MAX;
  if (blk_rows > even) blk_rows = even;
  if (blk_rows < RF_BLOCK_MIN) blk_rows = RF_BLOCK_MIN;
  size_t nblocks = (n + blk_rows - 1) / blk_rows;
  if ((size_t)nt > nblocks) nt = nblocks ? (int)nblocks : 1;
#pragma omp parallel num_threads(nt) reduction(| : failed)
  {
    double *row = rf__mallocn(p ? p : 1, sizeof(double));
    bwalk B = {0};
    if (f->cn) {
      B.xk = rf__mallocn(blk_rows * key_stride(p), sizeof *B.xk);
      B.s = rf__mallocn(blk_rows, sizeof *B.s);
      if (want_iv) B.leaf = rf__mallocn(blk_rows * (T ? T : 1), sizeof *B.leaf);
    }
    int ok = row && (!f->cn || (B.xk && B.s && (!want_iv || B.leaf)));
    if (!ok) failed = 1;
#pragma omp for schedule(dynamic, 1)
    for (size_t blk = 0; blk < nblocks; blk++) {
      if (!ok || failed) continue;
      size_t i0 = blk * blk_rows, nr = n - i0 < blk_rows ? n - i0 : blk_rows;
      if (f->cn) walk_block(f, d->x + i0, 1, n, nr, rounds, &B);
      for (size_t r = 0; r < nr; r++) {
        size_t i = i0 + r;
        for (size_t j = 0; j < p; j++) row[j] = d->x[j * n + i];
        /* a bad base value is the caller's data (2); the error text of a
           worker thread would not reach the caller, so it is made below */
        double off = rf__offset(f, row);
        if (isnan(off)) {
          failed |= 2;
          continue;
        }
        if (!f->cn) {
          if (want_iv) {
            double a = 0, b = 0;
            if (rf_predict_interval(f, row, coverage, &pred[i], &a, &b)) failed |= 1;
            if (lo) lo[i] = a;
            if (hi) hi[i] = b;
          } else {
            pred[i] = rf_predict(f, row);
          }
        } else if (want_iv) {
          double a = 0, b = 0;
          if (interval_of(f, row, &f->cal, coverage, B.s[r], off, B.leaf + r * T, NULL, &pred[i],
                          &a, &b))
            failed |= 1;
          if (lo) lo[i] = a;
          if (hi) hi[i] = b;
        } else {
          double m = B.s[r] / (double)T;
          pred[i] = rf__untransform(f->params.transform, m + off + rf__shift(f, &f->cal, row, m));
        }
      }
    }
    rf__free(row);
    rf__free(B.xk);
    rf__free(B.s);
    rf__free(B.leaf);
  }
  rf__free(rounds);
  if (failed & 2) {
    int b = f->params.base_feature;
    for (size_t i = 0; i < n; i++) {
      double x = d->x[(size_t)b * n + i];
      if (!(x > 0) || !isfinite(x))
        return rf__err("row %zu: feature %s, the model's base, is %g; it must be positive", i + 1,
                       f->features[b], x);
    }
  }
  return failed ? rf__nomem() : 0;
}

/* The walker of rf__predict_rows: a block's keys, sums, leaf codes and
   means, and the trees' rounds by tree (all NULL when the rows are walked
   one by one). */
struct rf_rows {
  size_t max_rows;
  uint32_t *rounds;
  bwalk B;
};

/*
 * A forest of at most this many bytes of 8-byte nodes and means stays in
 * cache whichever way it is walked, and fast_leaves' row-by-row walk is
 * the faster there: the Mangrove T4 time forest of bench/api_bench (100
 * trees, 82 KB) made 348 k sets/s through kcast_predict_batch tree-major
 * against 399 k row by row (one thread, medians of three runs), where the
 * 23 MB synthetic forest made 124 k against 93 k.
 */
#define RF_ROWS_CACHED (1u << 20)
int rf__rows_tree_major;

rf_rows *rf__rows_new(const rf_forest *f, size_t max_rows) {
  rf_rows *w = rf__calloc(1, sizeof *w);
  if (!w) return NULL;
  w->max_rows = max_rows;
  if (!f->cn) return w;
  size_t bytes = 0;
  for (size_t t = 0; t < f->n_trees; t++)
    bytes += ((size_t)f->trees[t].n_nodes + f->trees[t].n_leaves) * sizeof(rf_cnode);
  if (bytes <= RF_ROWS_CACHED && !rf__rows_tree_major) return w;
  size_t T = f->n_trees ? f->n_trees : 1, m = max_rows ? max_rows : 1;
  w->rounds = rf__mallocn(T, sizeof *w->rounds);
  w->B.xk = rf__mallocn(m, key_stride(f->n_features) * sizeof *w->B.xk);
  w->B.s = rf__mallocn(m, sizeof *w->B.s);
  w->B.leaf = rf__mallocn(m, T * sizeof *w->B.leaf);
  w->B.mean = rf__mallocn(m, T * sizeof *w->B.mean);
  if (!w->rounds || !w->B.xk || !w->B.s || !w->B.leaf || !w->B.mean) {
    rf__rows_free(w);
    return NULL;
  }
  for (size_t i = 0; i < f->n_trees; i++) w->rounds[f->corder[i]] = f->cdepth[i];
  return w;
}

void rf__rows_free(rf_rows *w) {
  if (!w) return;
  rf__free(w->rounds);
  rf__free(w->B.xk);
  rf__free(w->B.s);
  rf__free(w->B.leaf);
  rf__free(w->B.mean);
  rf__free(w);
}

/*
 * The rows of one call walk tree-major (walk_block) with their means kept,
 * so that each interval is formed from the same leaves, sum and means as
 * rf_predict_interval_on forms it, with the same calibration table: bit
 * for bit the same answer.  The 16-byte nodes and a forest within
 * RF_ROWS_CACHED take rf_predict_interval_on row by row.
 */
size_t rf__predict_rows(const rf_forest *f, rf_rows *w, const double *rows, size_t nr,
                        double coverage, int unseen, double *pred, double *lo, double *hi) {
  if (!(coverage > 0 && coverage < 1)) {
    rf__err("coverage %g is not in (0, 1)", coverage);
    return 0;
  }
  size_t P = f->n_features, T = f->n_trees;
  if (nr > w->max_rows) {
    rf__err("%zu rows, more than the walker's %zu", nr, w->max_rows);
    return 0;
  }
  if (!w->rounds) { /* the 16-byte nodes, or a forest that stays in cache */
    for (size_t r = 0; r < nr; r++)
      if (rf_predict_interval_on(f, rows + r * P, coverage, unseen, &pred[r], &lo[r], &hi[r]))
        return r;
    return nr;
  }
  const rf_calib *cal = !unseen ? &f->cal : f->cal_unseen.n ? &f->cal_unseen : &f->cal_prior;
  walk_block(f, rows, P, 1, nr, w->rounds, &w->B);
  for (size_t r = 0; r < nr; r++) {
    const double *row = rows + r * P;
    double off = rf__offset(f, row);
    if (isnan(off)) {
      bad_base(f, row);
      return r;
    }
    if (interval_of(f, row, cal, coverage, w->B.s[r], off, w->B.leaf + r * T,
                    w->B.mean + r * T, &pred[r], &lo[r], &hi[r]))
      return r;
  }
  return nr;
}
