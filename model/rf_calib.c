/*
 * rf_calib.c -- prediction intervals: the quantile-regression-forest
 * quantiles (Meinshausen 2006) and their calibration by conformalized
 * quantile regression (CQR, Romano, Patterson & Candes 2019).
 *
 * Why calibrate: a forest's leaf samples are training targets, fitted by
 * the very trees that hold them.  With small leaves and no bootstrap
 * (extra trees, min_leaf 1) every leaf holds the one row that made it, the
 * leaf-sample spread around a new row is the spread of its nearest
 * training neighbours, and the interval ignores the model's own error:
 * 90 % intervals covered 33-37 % of held-out GPU Mangrove launches.
 *
 * CQR on held-out rows of the training data.  For every row r held out --
 * out of bag (bootstrap forests: only the trees whose bag missed r vote,
 * no refit) or in the held-out fold of an inner RF_CALIB_FOLDS-fold split
 * (forests without bootstrap: one forest of at most RF_CALIB_TREES trees
 * per fold) -- and every coverage c of a fixed grid, the QRF interval at c
 * is computed in the transformed space exactly as rf_predict_interval does
 * and stretched to hold the point prediction m (the voting trees' mean):
 * [lo, hi] = [min(qlo, m), max(qhi, m)].  The conformity score is
 *
 *     s = max(lo - y, y - hi)        (> 0 outside, <= 0 inside)
 *
 * is recorded.  q(c) is the ceil((m+1) c)-th smallest of the m scores (the
 * largest when that rank exceeds m: split conformal's guarantee would need
 * an infinite bound there; the grid's 0.99 with fewer than 99 rows).  A
 * prediction at coverage c widens that band to [lo - q, hi + q]; q < 0
 * narrows an over-wide one (and the result is stretched again to hold m,
 * only ever adding coverage).  Between grid points q is linear in c; below
 * 0.5 and above 0.99 it is the end point's value.  Why stretch: with
 * single-sample leaves the mean of skewed neighbour targets often lies
 * outside their middle half, and a band that excludes its own estimate
 * is useless to a scheduler; stretching before scoring keeps the table
 * honest for the band actually returned (stretching after it over-covered
 * 50 % bands: 0.56 on the dedispersion rows).
 * The guarantee is CQR's when the held-out rows are exchangeable with new
 * rows (k-fold CV); the table is stored in the model (docs/formats.md) and
 * applied by rf_predict_interval.
 *
 * Unseen groups (rf_params.calib_groups): rows of one application are
 * alike, so rows held out at random are predicted from their own
 * application's rows and the table fits that error, not the error on an
 * application the forest has never seen (leave-one-app-out coverage of
 * 90 % bands: 0.77 on the T4 tutorial data).  With calib_groups the inner
 * folds deal whole groups instead (min(groups, RF_CALIB_FOLDS) folds of
 * shuffled groups, for bootstrap forests too), so the scores are errors on
 * unseen groups, exchangeable over groups rather than rows.
 *
 * The same held-out rows also tell whether a forest with a base should be
 * trusted on a group it has not seen: each GPU runs some kernels faster or
 * slower against the analytic estimate than the others do, and a forest
 * hands a new GPU the other GPUs' corrections, which can be worse than
 * none.  choose_shrink picks how far the answers move toward the estimate
 * (or the median correction), no worse in any held-out group than the
 * forest's own; rf_calib.shrink keeps it with the table.  Measured with
 * `kcast cv --group gpu`, one seed: NeuSight's bmm and linear launches
 * over five GPUs, MAPE 32.3 -> 27.9 % (median 26.8 -> 25.5); the
 * convolution (milo) on three GPUs, median APE 19.5 -> 18.0 %; the older
 * convolution on four 22.3 -> 24.5 % (its 2080 Ti 9.4 -> 15.6 %); pnpoly
 * (two GPUs: one group an inner fold, nothing to choose on) and the
 * tutorial's applications the same.
 *
 * Cost: OOB scoring walks each sampled row through its ~37 % OOB trees
 * once and selects all grid points from its leaf samples at once: 0.02 s
 * (measured when the samples were sorted) on one
 * thread for the 11,130 dedispersion rows, 3-6 % of a 100-tree forest's
 * training there, less on larger data (the rows scored are capped).  The
 * k-fold path trains RF_CALIB_FOLDS forests of at most RF_CALIB_TREES
 * trees on 4/5 of the rows: 2-3x the training time of 100 extra trees.
 *
 * Determinism: rows are scored in parallel, each into its own slot; the
 * inner forests are seeded from (seed, fold); the scores are then sorted,
 * so the table is the same for any thread count.
 */
#include "model/rf_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HAVE_TAILS_SSE41 1
#endif

/* The coverage grid of every table this build makes. */
static const double grid[] = {0.5, 0.68, 0.8, 0.9, 0.95, 0.99};
#define NG (sizeof grid / sizeof grid[0])
/* Fewer scored rows than this (tiny training sets; rows drawn into every
   bag have no OOB vote and are not scored): the model stays uncalibrated. */
#define MIN_ROWS 10

/* -------------------------------------------------------------- quantiles -- */

/*
 * All trees walked together, one level a round, as rf__raw_mean does: the
 * loads of one round are independent, so the memory system overlaps them
 * (a tree-by-tree walk waits on every node: 49 us against 12 us a row for
 * 100 trees on the dedispersion rows, measured in one run).
 */
#define WALK_BATCH 256
void rf__walk(const rf_forest *f, const double *row, const rf_node **leaf) {
  size_t T = f->n_trees;
  for (size_t t0 = 0; t0 < T; t0 += WALK_BATCH) {
    size_t nb = T - t0 < WALK_BATCH ? T - t0 : WALK_BATCH, na = 0;
    const rf_node **cur = leaf + t0;
    const rf_tree *tr = f->trees + t0;
    uint16_t act[WALK_BATCH];
    for (size_t t = 0; t < nb; t++)
      if (cur[t]) act[na++] = (uint16_t)t;
    while (na) {
      size_t k = 0;
      for (size_t a = 0; a < na; a++) {
        unsigned t = act[a];
        const rf_node *nd = cur[t];
        if (nd->feature < 0) continue;
        const rf_node *nx = tr[t].nodes + nd->left + (row[nd->feature] > nd->v);
        __builtin_prefetch(nx);
        cur[t] = nx;
        act[k++] = (uint16_t)t;
      }
      na = k;
    }
  }
}

/*
 * Sorting the weighted leaf samples.  Each sample is packed into one u64,
 * an order-preserving key of its value above the bits of its weight, and
 * sorted by a stable LSD radix sort on the key (a pass is skipped when
 * every key has the same digit: log-time targets share their top byte),
 * insertion sort for short lists.  qsort with a comparison callback cost
 * 100 us a row for 100 trees of 7-sample leaves (the dedispersion rows)
 * and made OOB calibration double the training time; a heap merge of the
 * already sorted leaves still cost 38 us (pointer-chasing sifts).  Ties
 * keep tree order with either sort, so the order is a pure function of
 * the leaves.
 */
static inline uint64_t pack(float v, float w) {
  uint32_t u, wb;
  memcpy(&u, &v, 4);
  memcpy(&wb, &w, 4);
  u = u >> 31 ? ~u : u | 0x80000000u;
  return (uint64_t)u << 32 | wb;
}

static inline float unpack_v(uint64_t x) {
  uint32_t u = (uint32_t)(x >> 32);
  u = u >> 31 ? u & 0x7fffffffu : ~u;
  float v;
  memcpy(&v, &u, 4);
  return v;
}

static inline float unpack_w(uint64_t x) {
  uint32_t u = (uint32_t)x;
  float w;
  memcpy(&w, &u, 4);
  return w;
}

/* Stable sort of a[0..m) by the upper 32 bits; b is scratch of m.  Returns
   the array that holds the result (a or b). */
static uint64_t *sort_keys(uint64_t *a, uint64_t *b, size_t m) {
  if (m <= 48) {
    for (size_t i = 1; i < m; i++) {
      uint64_t x = a[i];
      size_t j = i;
      while (j > 0 && a[j - 1] >> 32 > x >> 32) {
        a[j] = a[j - 1];
        j--;
      }
      a[j] = x;
    }
    return a;
  }
  for (unsigned sh = 32; sh < 64; sh += 8) {
    size_t cnt[256] = {0};
    for (size_t i = 0; i < m; i++) cnt[a[i] >> sh & 255]++;
    if (cnt[a[0] >> sh & 255] == m) continue;
    size_t pos = 0;
    for (unsigned d = 0; d < 256; d++) {
      size_t c = cnt[d];
      cnt[d] = pos;
      pos += c;
    }
    for (size_t i = 0; i < m; i++) b[cnt[a[i] >> sh & 255]++] = a[i];
    uint64_t *t = a;
    a = b;
    b = t;
  }
  return a;
}

/*
 * Selection instead of sorting.  The definition above sums float weights
 * 1/c into a double in sorted order; the sum is exact, hence independent
 * of order, whenever every partial sum fits a double's 53 bits: with every
 * leaf of at most 2^L samples, each weight is a multiple of 2^-(L+23) and
 * the sum stays below used + 1, so used < 2^(30-L) suffices.  Then each
 * weight is the integer w * 2^(L+23) (packed below the key when L <= 8),
 * the cumulative weight of a sample is the weight of all samples with a
 * smaller or equal key, and a quantile is the smallest key whose
 * cumulative weight reaches the target -- found by an MSD radix
 * selection: a 64-bin weight histogram on the six bits below the highest
 * bit where the subset's keys differ, then the same on the bin holding
 * the target, moved to the front in place (at most seven rounds, usually
 * two or three; a handful of samples is sorted directly).  L is fixed at
 * 8: other forests (leaves over 256 samples, or 2^22 trees) take the
 * sort, which keeps the summation order.  Same results, bit for bit.
 * Measured on 100 trees, leaves given, cycling 1,000 rows (a shared
 * machine): 17-18 -> 7.5-8 us for 650 samples a row (a 10,000-row
 * forest, leaves of 5+ samples, most of it cache misses on leaf_off and
 * the samples), 4.6-5.0 -> 2.3-2.5 us for 150 (single-sample leaves).
 */
#define SEL_BITS 6
#define SEL_BINS (1u << SEL_BITS)
#define SEL_SMALL 16

/* Samples a[0..n) (key << 32 | integer weight) hold the answers of
   targets tgt[k0..k1), which increase; base is the weight of every sample
   below them, g the value of a weight unit. */
static void select_keys(uint64_t *a, size_t n, uint64_t base, const double *tgt, size_t k0,
                        size_t k1, double g, double *out) {
  if (n <= SEL_SMALL) {
    for (size_t i = 1; i < n; i++) {
      uint64_t x = a[i];
      size_t j = i;
      for (; j > 0 && a[j - 1] >> 32 > x >> 32; j--) a[j] = a[j - 1];
      a[j] = x;
    }
    uint64_t cum = base;
    for (size_t q = 0; q < n && k0 < k1; q++) {
      cum += (uint32_t)a[q];
      while (k0 < k1 && (double)cum * g >= tgt[k0]) out[k0++] = unpack_v(a[q]);
    }
    return;
  }
  uint32_t lo = UINT32_MAX, hi = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t k = (uint32_t)(a[i] >> 32);
    lo = k < lo ? k : lo;
    hi = k > hi ? k : hi;
  }
  if (lo == hi) {
    while (k0 < k1) out[k0++] = unpack_v(a[0]);
    return;
  }
  unsigned top = 31u - (unsigned)__builtin_clz(lo ^ hi);
  unsigned sh = 32 + (top >= SEL_BITS - 1 ? top - (SEL_BITS - 1) : 0);
  uint64_t w[SEL_BINS] = {0};
  for (size_t i = 0; i < n; i++) w[a[i] >> sh & (SEL_BINS - 1)] += (uint32_t)a[i];
  unsigned d = 0;
  while (k0 < k1) {
    /* the first non-empty bin whose cumulative weight reaches the target
       (one exists: the whole subset's does) */
    while (!(w[d] && (double)(base + w[d]) * g >= tgt[k0])) base += w[d++];
    size_t ke = k0 + 1;
    while (ke < k1 && (double)(base + w[d]) * g >= tgt[ke]) ke++;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
      if ((a[i] >> sh & (SEL_BINS - 1)) == d) {
        uint64_t t = a[i];
        a[i] = a[m];
        a[m++] = t;
      }
    select_keys(a, m, base, tgt, k0, ke, g, out);
    k0 = ke;
  }
}

/* Tree t's vote: its leaf's samples start at values[*a] and are *c; 0
   when it has none.  From node pointers (nodes) or leaf codes (nums,
   rf_int.h: numbers, or offset and count with f->cdirect). */
static inline int vote(const rf_forest *f, const rf_node *const *nodes, const uint32_t *nums,
                       size_t t, uint32_t *a, uint32_t *c) {
  uint32_t k;
  if (nodes) {
    if (!nodes[t]) return 0;
    k = nodes[t]->left;
  } else {
    k = nums[t];
    if (k == UINT32_MAX) return 0;
    if (f->cdirect) {
      *a = k >> f->cbits;
      *c = (k & ((1u << f->cbits) - 1)) + 1;
      return 1;
    }
  }
  const uint32_t *lo = f->trees[t].leaf_off;
  *a = lo[k];
  *c = lo[k + 1] - *a;
  return 1;
}

/* A leaf's samples, a sorted run, each of integer weight w. */
typedef struct run {
  const float *v;
  uint32_t c, w;
  uint32_t first, last; /* keys of v[0], v[c-1] */
} run;

/* pack's key, without a branch (signs mix in log space) */
static inline uint32_t vkey(float v) { return rf__vkey(v); }

/*
 * The selection on the runs (keys in [lo, hi], weight units of g): the
 * first round's histogram reads the samples where they are, and only the
 * bins holding targets are copied out to sel (room for every sample; a
 * run whose first and last keys miss the bin is skipped), so the samples
 * are read about once.  A run out of key order (+0 before -0, NaN) makes
 * it copy everything and select in place.
 */
static void select_runs(const run *r, size_t nr, uint32_t lo, uint32_t hi, uint64_t *sel,
                        const double *tgt, size_t np, double g, double *out) {
  unsigned top = lo < hi ? 31u - (unsigned)__builtin_clz(lo ^ hi) : 0;
  unsigned sh = top >= SEL_BITS - 1 ? top - (SEL_BITS - 1) : 0;
  /* four interleaved histograms: a run puts neighbours in one bin, and
     with one histogram each add would wait for the last */
  uint64_t w4[4][SEL_BINS], w[SEL_BINS];
  memset(w4, 0, sizeof w4);
  uint32_t unsorted = 0;
  for (size_t i = 0; i < nr; i++) {
    const float *v = r[i].v;
    uint32_t c = r[i].c, wi = r[i].w, prev = 0;
    for (uint32_t q = 0; q < c; q++) {
      uint32_t k = vkey(v[q]);
      unsorted |= k < prev;
      prev = k;
      w4[q & 3][k >> sh & (SEL_BINS - 1)] += wi;
    }
  }
  if (unsorted) {
    size_t n = 0;
    for (size_t i = 0; i < nr; i++)
      for (uint32_t q = 0; q < r[i].c; q++) sel[n++] = (uint64_t)vkey(r[i].v[q]) << 32 | r[i].w;
    select_keys(sel, n, 0, tgt, 0, np, g, out);
    return;
  }
  for (unsigned d = 0; d < SEL_BINS; d++) w[d] = w4[0][d] + w4[1][d] + w4[2][d] + w4[3][d];
  uint64_t base = 0;
  unsigned d = 0;
  size_t k0 = 0;
  while (k0 < np) {
    while (!(w[d] && (double)(base + w[d]) * g >= tgt[k0])) base += w[d++];
    size_t ke = k0 + 1;
    while (ke < np && (double)(base + w[d]) * g >= tgt[ke]) ke++;
    size_t n = 0;
    for (size_t i = 0; i < nr; i++) {
      const float *v = r[i].v;
      uint32_t c = r[i].c;
      if ((r[i].first >> sh & (SEL_BINS - 1)) > d || (r[i].last >> sh & (SEL_BINS - 1)) < d)
        continue;
      for (uint32_t q = 0; q < c; q++) {
        uint32_t k = vkey(v[q]);
        if ((k >> sh & (SEL_BINS - 1)) == d) sel[n++] = (uint64_t)k << 32 | r[i].w;
      }
    }
    select_keys(sel, n, base, tgt, k0, ke, g, out);
    k0 = ke;
  }
}

/*
 * The targets tg[0..k1) (increasing, none beyond the total weight tw) by
 * merging the sorted runs from their ends: the lower half's targets from
 * the smallest samples up, the upper half's from the largest down, each
 * end a binary heap of the runs' next keys.  An interval's quantiles lie
 * a few samples from the ends (5 % of 50 trees' weight: at most 20
 * samples of leaves of 8), where select_runs reads every sample twice.
 * The answer of a target is the smallest key whose weight with every
 * smaller key reaches it, whatever the order among equal keys, so this is
 * select_runs's bit for bit.  0 (out partly written) when a target lies
 * more than MERGE_POPS samples inside or the runs are too many.
 * Measured on the operator model of `make models` (50 trees, leaves of
 * up to 8 samples: about 400 a row), kcast_predict_gpu with interval on a
 * GPU it has not seen, 8 descriptions cycled: the quantiles of a call
 * 24.7k -> 15.3k instructions (callgrind; about 20 pops an end), the
 * call with kcast_features_from_op 5.37-5.43 -> 5.02-5.06 us (alternated
 * runs of 40,000 calls).
 */
#define MERGE_POPS 96
#define MERGE_RUNS 512

static void heap_down(uint64_t *h, size_t n, size_t i) {
  uint64_t x = h[i];
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && h[c + 1] < h[c]) c++;
    if (h[c] >= x) break;
    h[i] = h[c];
    i = c;
  }
  h[i] = x;
}

static void heap_make(uint64_t *h, size_t n) {
  for (size_t i = n / 2; i-- > 0;) heap_down(h, n, i);
}

static int merge_tails(const run *r, size_t nr, uint64_t tw, const double *tg, size_t k1,
                       double g, double *out) {
  if (nr > MERGE_RUNS || !nr) return 0;
  uint64_t h[MERGE_RUNS];
  uint32_t pos[MERGE_RUNS];
  double half = (double)tw * g / 2;
  size_t kb = 0, pops = 0;
  while (kb < k1 && tg[kb] <= half) kb++;
  if (kb) { /* the lower targets: the smallest keys first */
    for (size_t i = 0; i < nr; i++) {
      h[i] = (uint64_t)r[i].first << 32 | i;
      pos[i] = 0;
    }
    size_t n = nr, k = 0;
    heap_make(h, n);
    uint64_t cum = 0;
    while (k < kb) {
      if (pops++ == MERGE_POPS || !n) return 0;
      uint32_t i = (uint32_t)h[0];
      uint64_t key = h[0] >> 32 << 32;
      cum += r[i].w;
      while (k < kb && (double)cum * g >= tg[k]) out[k++] = unpack_v(key);
      if (++pos[i] < r[i].c) h[0] = (uint64_t)vkey(r[i].v[pos[i]]) << 32 | i;
      else h[0] = h[--n];
      heap_down(h, n, 0);
    }
  }
  if (kb < k1) { /* the upper ones: the largest keys first (~key in a
                    min-heap); a sample's cumulative weight is tw less
                    the weight of those above it */
    for (size_t i = 0; i < nr; i++) {
      h[i] = (uint64_t)~r[i].last << 32 | i;
      pos[i] = 0;
    }
    size_t n = nr, k = k1;
    heap_make(h, n);
    uint64_t above = 0;
    uint32_t prev = 0;
    for (;;) {
      if (!n) { /* every sample taken: the smallest answers the rest */
        while (k > kb) out[--k] = unpack_v((uint64_t)prev << 32);
        break;
      }
      uint32_t i = (uint32_t)h[0];
      uint64_t cum = tw - above;
      while (k > kb && !((double)cum * g >= tg[k - 1])) out[--k] = unpack_v((uint64_t)prev << 32);
      if (k == kb) break;
      if (pops++ == MERGE_POPS) return 0;
      prev = ~(uint32_t)(h[0] >> 32);
      above += r[i].w;
      if (++pos[i] < r[i].c) h[0] = (uint64_t)~vkey(r[i].v[r[i].c - 1 - pos[i]]) << 32 | i;
      else h[0] = h[--n];
      heap_down(h, n, 0);
    }
  }
  return 1;
}

/* The exact case: leaves of at most 2^SEL_L samples and fewer than
   2^(30-SEL_L) trees; weights in units of 2^-(SEL_L+23). */
#define SEL_L 8
#define STACK_WORDS 1024
#define SEL_COPY 256 /* samples: at most this many are copied (quantiles) */
int rf__sel_runs, rf__sel_keys, rf__sel_scalar, rf__sel_merge_off;

/* Tails this short are kept in a sorted buffer by order_stat; a target
   further inside takes select_keys. */
#define SEL_TAIL 32

/* The q-th smallest key (1 <= q <= n) of sel[0..n) when q or n + 1 - q
   is at most SEL_TAIL: one pass keeps the q smallest (or largest) keys
   seen in a sorted buffer; a key joins it only when it beats the buffer's
   last, a few times a pass (about q ln(n/q)). */
static uint32_t order_stat(const uint64_t *sel, size_t n, size_t q) {
  uint32_t b[SEL_TAIL];
  int low = q <= SEL_TAIL;
  size_t m = low ? q : n + 1 - q;
  uint32_t flip = low ? 0 : UINT32_MAX; /* the largest as the smallest of ~key */
  for (size_t i = 0; i < m; i++) {
    uint32_t k = (uint32_t)(sel[i] >> 32) ^ flip;
    size_t j = i;
    for (; j > 0 && b[j - 1] > k; j--) b[j] = b[j - 1];
    b[j] = k;
  }
  uint32_t last = b[m - 1];
  for (size_t i = m; i < n; i++) {
    uint32_t k = (uint32_t)(sel[i] >> 32) ^ flip;
    if (k >= last) continue;
    size_t j = m - 1;
    for (; j > 0 && b[j - 1] > k; j--) b[j] = b[j - 1];
    b[j] = k;
    last = b[m - 1];
  }
  return last ^ flip;
}

#ifdef HAVE_TAILS_SSE41
/*
 * The 8 smallest and the 8 largest keys of sel[0..n) at once (lo
 * ascending, hi descending; slots beyond n hold UINT32_MAX and 0), without
 * a branch: each key enters two sorted vectors of eight as b = min(b,
 * max(b shifted up a lane, key)).  order_stat's buffer mispredicted about
 * once a key that joined it: 12 % of kcast_predict on the 10,000 x 30
 * forest (perf), for its two tails of 5 and 6 of 100 samples.  With
 * these, kcast_predict with interval cycling that forest's 1,000 sets
 * 4.4-4.65 -> 3.83-3.92 us (medians of three alternated runs; main before
 * these changes 4.98-5.23 in the same runs); the Mangrove T4 forest
 * 2.11-2.17 -> 1.95-1.97 us.
 */
__attribute__((target("sse4.1"))) static void tails8(const uint64_t *sel, size_t n, uint32_t *lo,
                                                     uint32_t *hi) {
  __m128i l0 = _mm_set1_epi32(-1), l1 = l0, h0 = l0, h1 = l0; /* hi as ~key */
  for (size_t i = 0; i < n; i++) {
    uint32_t k = (uint32_t)(sel[i] >> 32);
    __m128i v = _mm_set1_epi32((int)k), w = _mm_set1_epi32((int)~k);
    l1 = _mm_min_epu32(l1, _mm_max_epu32(_mm_alignr_epi8(l1, l0, 12), v));
    l0 = _mm_min_epu32(l0, _mm_max_epu32(_mm_slli_si128(l0, 4), v));
    h1 = _mm_min_epu32(h1, _mm_max_epu32(_mm_alignr_epi8(h1, h0, 12), w));
    h0 = _mm_min_epu32(h0, _mm_max_epu32(_mm_slli_si128(h0, 4), w));
  }
  __m128i ones = _mm_set1_epi32(-1);
  _mm_storeu_si128((__m128i *)(void *)lo, l0);
  _mm_storeu_si128((__m128i *)(void *)(lo + 4), l1);
  _mm_storeu_si128((__m128i *)(void *)hi, _mm_xor_si128(h0, ones));
  _mm_storeu_si128((__m128i *)(void *)(hi + 4), _mm_xor_si128(h1, ones));
}

static int have_sse41(void) {
  static int v = -1; /* racing threads store the same value */
  int c = __atomic_load_n(&v, __ATOMIC_RELAXED);
  if (c < 0) {
    __builtin_cpu_init();
    c = __builtin_cpu_supports("sse4.1") ? 1 : 0;
    __atomic_store_n(&v, c, __ATOMIC_RELAXED);
  }
  return c;
}
#endif

/* The quantiles of the samples sel[0..n) (key << 32 | integer weight,
   total weight tw) for used voting trees: the targets and the largest
   sample for those beyond the total weight, as the runs' path forms them.
   equal: every sample weighs the same (leaves of one size: one sample
   each in an extra-trees forest of min-leaf 1), so a target's answer is
   the q-th smallest key, q the fewest samples whose weight reaches it:
   found by tails8 or order_stat.  On the 10,000 x 30 extra-trees forest of
   bench/api_bench (100 one-sample leaves, coverage 0.9) the quantiles of
   a call took 13.7k -> 11.5k instructions (callgrind); on the Mangrove T4
   forest kcast_predict's mean 2.40-2.45 -> 2.25-2.28 us, its p90 3.0-3.2
   -> 2.4 us (cycling its 43 sets; sets of only one-sample leaves). */
static int select_copy(uint64_t *sel, size_t n, uint64_t tw, size_t used, int equal,
                       const double *probs, size_t np, double *out) {
  double g = 0x1p-31, tgt[64], *tg = np <= 64 ? tgt : rf__mallocn(np, sizeof(double));
  if (!tg) return rf__nomem();
  size_t k1 = np;
  for (size_t k = 0; k < np; k++) tg[k] = probs[k] * (double)used;
  while (k1 > 0 && !((double)tw * g >= tg[k1 - 1])) k1--;
  if (k1 < np) {
    uint32_t kmax = 0;
    for (size_t i = 0; i < n; i++) kmax = (uint32_t)(sel[i] >> 32) > kmax ? (uint32_t)(sel[i] >> 32) : kmax;
    for (size_t k = k1; k < np; k++) out[k] = unpack_v((uint64_t)kmax << 32);
  }
  size_t k0 = 0;
  if (equal && !rf__sel_keys) {
    /* the weight of q samples, q * w, is exact in a double (q <= SEL_COPY) */
    uint64_t w = (uint32_t)sel[0];
    size_t qs[64];
    int near8 = 1; /* every target within 8 of an end: tails8 */
    for (size_t k = 0; k < k1 && k < 64; k++) {
      double est = ceil(tg[k] / ((double)w * g));
      size_t q = est >= (double)n ? n : est > 1 ? (size_t)est : 1;
      while (q > 1 && (double)((q - 1) * w) * g >= tg[k]) q--;
      while (q < n && !((double)(q * w) * g >= tg[k])) q++;
      qs[k] = q;
      near8 &= q <= 8 || n + 1 - q <= 8;
    }
#ifdef HAVE_TAILS_SSE41
    if (near8 && k1 <= 64 && !rf__sel_scalar && have_sse41()) {
      uint32_t lo[8], hi[8];
      tails8(sel, n, lo, hi);
      for (; k0 < k1; k0++)
        out[k0] = unpack_v((uint64_t)(qs[k0] <= 8 ? lo[qs[k0] - 1] : hi[n - qs[k0]]) << 32);
    }
#endif
    for (; k0 < k1 && k0 < 64; k0++) {
      size_t q = qs[k0];
      if (q > SEL_TAIL && n + 1 - q > SEL_TAIL) break; /* the rest: select_keys */
      out[k0] = unpack_v((uint64_t)order_stat(sel, n, q) << 32);
    }
  }
  if (k0 < k1) select_keys(sel, n, 0, tg, k0, k1, g, out);
  if (tg != tgt) rf__free(tg);
  return 0;
}

static int quantiles(const rf_forest *f, const rf_node *const *nodes, const uint32_t *nums,
                     const double *means, const double *probs, size_t np, double *out,
                     void **scratch, size_t *cap) {
  size_t T = f->n_trees, used = 0, total = 0;
  uint32_t cmax = 0;
  /* one-sample leaves read their sample from the mean: no cache miss on
     the tree's samples (a 10,000-row extra-trees forest has only those) */
  int solo = means && f->csolo && f->cdirect;
  if (solo && nums && T && T <= SEL_COPY && !rf__sel_runs) {
    /* every tree voting with a one-sample leaf (count bits 0; extra trees
       of min-leaf 1): the samples are the means, of one weight each, and
       the copy below is made without its two passes over the trees (the
       quantiles of a call on the 10,000 x 30 forest: 11.5k -> 5.1k
       instructions, callgrind; kcast_predict with interval 4.5-4.9 ->
       4.1-4.6 us, cycling its 1,000 sets) */
    uint32_t cm = (1u << f->cbits) - 1, many = 0;
    for (size_t t = 0; t < T; t++) many |= (nums[t] & cm) | (nums[t] == UINT32_MAX);
    if (!many) {
      uint64_t sel[SEL_COPY];
      for (size_t t = 0; t < T; t++) sel[t] = (uint64_t)vkey((float)means[t]) << 32 | 1u << 31;
      return select_copy(sel, T, (uint64_t)T << 31, T, 1, probs, np, out);
    }
  }
  for (size_t t = 0; t < T; t++) {
    uint32_t a, c;
    if (!vote(f, nodes, nums, t, &a, &c)) continue;
    if (!(solo && c == 1)) __builtin_prefetch(f->trees[t].values + a);
    used++;
    total += c;
    cmax = c > cmax ? c : cmax;
  }
  int exact = total && cmax <= (1u << SEL_L) && used < (1u << (30 - SEL_L));
  if (exact && total <= SEL_COPY && !rf__sel_runs) {
    /* few samples: copied out in one pass, the selection on the copy
       (select_runs's histogram and its pass per target bin over the runs
       cost more below this: 21.8k -> 12.4k instructions a call of the
       quantiles on the Mangrove T4 forest, 100 trees of 1-2 samples a
       leaf, callgrind) */
    uint64_t sel[SEL_COPY], tw = 0;
    size_t n = 0;
    uint32_t cmin = UINT32_MAX;
    for (size_t t = 0; t < T; t++) {
      uint32_t a, c;
      if (!vote(f, nodes, nums, t, &a, &c)) continue;
      float one = solo && c == 1 ? (float)means[t] : 0;
      const float *v = solo && c == 1 ? &one : f->trees[t].values + a;
      /* exact: 1/c >= 2^-8 */
      uint32_t w = (uint32_t)(1.0f / (float)c * 0x1p31f);
      tw += (uint64_t)c * w;
      cmin = c < cmin ? c : cmin;
      for (uint32_t q = 0; q < c; q++) sel[n++] = (uint64_t)vkey(v[q]) << 32 | w;
    }
    return select_copy(sel, n, tw, used, cmin == cmax, probs, np, out);
  }
  /* exact: the runs (three words each), the samples and the solo leaves'
     floats; else the sort's two arrays */
  size_t need = exact ? 3 * used + total + (solo ? used / 2 + 1 : 0) : 2 * total;
  uint64_t stackbuf[STACK_WORDS], *buf = stackbuf;
  void *mine = NULL;
  if (need > STACK_WORDS) {
    if (!scratch) {
      buf = mine = rf__mallocn(need, sizeof(uint64_t));
      if (!buf) return rf__nomem();
    } else {
      if (need > *cap || !*scratch) {
        size_t want = need > *cap ? need : *cap;
        uint64_t *nb = rf__realloc(*scratch, want * sizeof(uint64_t));
        if (!nb) return rf__nomem();
        *scratch = nb;
        *cap = want;
      }
      buf = *scratch;
    }
  }
  if (exact) {
    _Static_assert(sizeof(run) == 3 * sizeof(uint64_t), "a run is three words");
    run *r = (run *)(void *)buf;
    float *one = (float *)(void *)(buf + 3 * used + total); /* solo samples */
    size_t nr = 0;
    uint64_t tw = 0;
    uint32_t lo = UINT32_MAX, hi = 0;
    for (size_t t = 0; t < T; t++) {
      uint32_t a, c;
      if (!vote(f, nodes, nums, t, &a, &c)) continue;
      const rf_tree *tr = &f->trees[t];
      float w = 1.0f / (float)c;
      if (solo && c == 1) {
        *one = (float)means[t];
        r[nr].v = one++;
      } else {
        r[nr].v = tr->values + a;
      }
      r[nr].c = c;
      r[nr].w = (uint32_t)(w * 0x1p31f); /* exact: w >= 2^-8 */
      tw += (uint64_t)c * r[nr].w;
      r[nr].first = vkey(r[nr].v[0]);
      r[nr].last = vkey(r[nr].v[c - 1]);
      lo = r[nr].first < lo ? r[nr].first : lo;
      hi = r[nr].last > hi ? r[nr].last : hi;
      nr++;
    }
    double g = 0x1p-31, tgt[64], *tg = np <= 64 ? tgt : NULL;
    _Static_assert(SEL_L + 23 == 31, "g is the weight unit");
    if (!tg && !(tg = rf__mallocn(np, sizeof(double)))) {
      rf__free(mine);
      return rf__nomem();
    }
    /* targets beyond the total weight take the largest sample */
    size_t k1 = np;
    for (size_t k = 0; k < np; k++) tg[k] = probs[k] * (double)used;
    while (k1 > 0 && !((double)tw * g >= tg[k1 - 1])) k1--;
    if (k1 < np) {
      uint32_t kmax = 0;
      for (size_t i = 0; i < nr; i++)
        for (uint32_t q = 0; q < r[i].c; q++) kmax = vkey(r[i].v[q]) > kmax ? vkey(r[i].v[q]) : kmax;
      for (size_t k = k1; k < np; k++) out[k] = unpack_v((uint64_t)kmax << 32);
    }
    if (k1 && !(f->csorted && !rf__sel_runs && !rf__sel_merge_off &&
                merge_tails(r, nr, tw, tg, k1, g, out)))
      select_runs(r, nr, lo, hi, buf + 3 * nr, tg, k1, g, out);
    if (tg != tgt) rf__free(tg);
    rf__free(mine);
    return 0;
  }
  size_t m = 0;
  for (size_t t = 0; t < T; t++) {
    uint32_t a, c;
    if (!vote(f, nodes, nums, t, &a, &c)) continue;
    const rf_tree *tr = &f->trees[t];
    uint32_t e = a + c;
    float w = 1.0f / (float)(e - a);
    for (uint32_t q = a; q < e; q++) buf[m++] = pack(tr->values[q], w);
  }
  const uint64_t *sorted = sort_keys(buf, buf + m, m);
  double cum = 0, last = m ? unpack_v(sorted[m - 1]) : NAN;
  size_t k = 0;
  for (size_t q = 0; q < m && k < np; q++) {
    cum += unpack_w(sorted[q]);
    while (k < np && cum >= probs[k] * (double)used) out[k++] = unpack_v(sorted[q]);
  }
  while (k < np) out[k++] = last;
  rf__free(mine);
  return 0;
}

int rf__leaf_quantiles(const rf_forest *f, const rf_node *const *leaf, const double *probs,
                       size_t np, double *out, void **scratch, size_t *cap) {
  return quantiles(f, leaf, NULL, NULL, probs, np, out, scratch, cap);
}

int rf__leaf_quantiles_n(const rf_forest *f, const uint32_t *leaf, const double *means,
                         const double *probs, size_t np, double *out, void **scratch,
                         size_t *cap) {
  return quantiles(f, NULL, leaf, means, probs, np, out, scratch, cap);
}

double rf__calib_q(const rf_calib *c, double coverage) {
  if (c->n == 0) return 0;
  if (coverage <= c->cov[0]) return c->q[0];
  if (coverage >= c->cov[c->n - 1]) return c->q[c->n - 1];
  unsigned k = 1;
  while (coverage > c->cov[k]) k++;
  double u = (coverage - c->cov[k - 1]) / (c->cov[k] - c->cov[k - 1]);
  return c->q[k - 1] + u * (c->q[k] - c->q[k - 1]);
}

/* ---------------------------------------------------------------- scoring -- */

/* The 2*NG quantile levels, increasing: lows of the widest first. */
static void grid_probs(double *probs) {
  for (size_t k = 0; k < NG; k++) {
    double alpha = (1 - grid[k]) / 2; /* as rf_predict_interval computes it */
    probs[NG - 1 - k] = alpha;
    probs[NG + k] = 1 - alpha;
  }
}

/* Per-thread scratch for scoring rows. */
typedef struct scorer {
  double *row;             /* p features */
  const rf_node **leaf;    /* one per tree of the scoring forest */
  void *buf;               /* rf__leaf_quantiles scratch */
  size_t cap;
} scorer;

static int scorer_init(scorer *s, size_t p, size_t T) {
  memset(s, 0, sizeof *s);
  s->row = rf__mallocn(p ? p : 1, sizeof(double));
  s->leaf = rf__mallocn(T ? T : 1, sizeof *s->leaf);
  return s->row && s->leaf ? 0 : -1;
}

static void scorer_free(scorer *s) {
  rf__free(s->row);
  rf__free(s->leaf);
  rf__free(s->buf);
}

/* Scores of row i (leaves in s->leaf) into sc[k * n + i]: the band is the
   QRF interval stretched to hold the voting trees' mean, as
   rf_predict_interval forms it. */
static int score_row(const rf_forest *g, scorer *s, const double *probs, double y, size_t n,
                     size_t i, double *sc, double *ab, double *pv) {
  double qv[2 * NG], m = 0;
  size_t used = 0;
  for (size_t t = 0; t < g->n_trees; t++)
    if (s->leaf[t]) {
      m += s->leaf[t]->v;
      used++;
    }
  m /= (double)used;
  /* a row beyond g's training ranges (a held-out group's) is answered
     shifted (rf__extrap_shift): score it as it will be answered.  OOB rows
     are in range, and the forest has no ranges yet then. */
  double ex = rf__extrap_shift(g, s->row, m);
  y -= ex;
  if (pv) pv[i] = m + ex;
  if (rf__leaf_quantiles(g, s->leaf, probs, 2 * NG, qv, &s->buf, &s->cap)) return -1;
  for (size_t k = 0; k < NG; k++) {
    double lo = qv[NG - 1 - k] < m ? qv[NG - 1 - k] : m, hi = qv[NG + k] > m ? qv[NG + k] : m;
    sc[k * n + i] = lo - y > y - hi ? lo - y : y - hi;
    if (ab) ab[2 * k * n + i] = lo - y, ab[(2 * k + 1) * n + i] = y - hi;
  }
  return 0;
}

static void get_row(const rf_data *d, size_t i, double *row) {
  for (size_t j = 0; j < d->n_cols; j++) row[j] = d->x[j * d->n_rows + i];
}

/*
 * Bootstrap forests: rows through the trees that did not draw them.  At
 * most RF_CALIB_ROWS rows are scored, a seeded draw without replacement
 * when there are more: the table's quantiles need a few thousand scores
 * (the binomial error of a coverage over 2,000 rows is 0.007 at 0.9), and
 * scoring every row cost 18-32 % of a random forest's training time on the
 * 11,130 dedispersion rows.
 */
static int score_oob(const rf_forest *f, const rf_data *d, const double *ty,
                     uint64_t *const *inbag, int nt, const double *probs, double *sc,
                     unsigned char *ok) {
  size_t n = d->n_rows, T = f->n_trees, m = n < RF_CALIB_ROWS ? n : RF_CALIB_ROWS;
  uint32_t *rows = rf__mallocn(n, sizeof(uint32_t));
  if (!rows) return rf__nomem();
  for (size_t i = 0; i < n; i++) rows[i] = (uint32_t)i;
  if (m < n) {
    rf_rng rng;
    rf__rng_seed(&rng, f->params.seed, 0x43414c52ULL); /* "CALR" */
    for (size_t i = 0; i < m; i++) {
      size_t k = i + (size_t)rf__rng_below(&rng, n - i);
      uint32_t t = rows[i];
      rows[i] = rows[k];
      rows[k] = t;
    }
    /* back to row order: rows are then read in memory order */
    unsigned char *pick = rf__calloc(n, 1);
    if (!pick) {
      rf__free(rows);
      return rf__nomem();
    }
    for (size_t i = 0; i < m; i++) pick[rows[i]] = 1;
    for (size_t i = 0, r = 0; i < n; i++)
      if (pick[i]) rows[r++] = (uint32_t)i;
    rf__free(pick);
  }
  int failed = 0;
#pragma omp parallel num_threads(nt) reduction(| : failed)
  {
    scorer s;
    int mine = scorer_init(&s, d->n_cols, T);
    if (mine) failed = 1;
#pragma omp for schedule(dynamic, 16)
    for (size_t r = 0; r < m; r++) {
      if (mine) continue;
      size_t i = rows[r];
      get_row(d, i, s.row);
      size_t used = 0;
      for (size_t t = 0; t < T; t++) {
        int in = (int)(inbag[t][i >> 6] >> (i & 63) & 1);
        s.leaf[t] = in ? NULL : f->trees[t].nodes;
        used += !in;
      }
      if (!used) continue;
      rf__walk(f, s.row, s.leaf);
      if (score_row(f, &s, probs, ty[i], n, i, sc, NULL, NULL)) {
        mine = failed = 1;
        continue;
      }
      ok[i] = 1;
    }
    scorer_free(&s);
  }
  rf__free(rows);
  return failed ? rf__nomem() : 0;
}

/* Inner folds by group: the distinct groups of d, shuffled with the seed,
   dealt to K = min(groups, RF_CALIB_FOLDS) folds; every row takes its
   group's fold.  Returns K; 0 with fewer than 2 groups; -1 out of memory. */
static int group_folds(const rf_data *d, uint64_t seed, size_t *fold) {
  size_t n = d->n_rows, ng = 0;
  char **names = rf__mallocn(n, sizeof(char *));
  size_t *gid = rf__mallocn(n, sizeof(size_t)), *perm = rf__mallocn(n, sizeof(size_t));
  size_t *gfold = rf__mallocn(n, sizeof(size_t));
  int K = -1;
  if (!names || !gid || !perm || !gfold) {
    rf__nomem();
    goto out;
  }
  rf__group_index(d, gid, names, &ng);
  K = 0;
  if (ng < 2) goto out;
  K = ng < RF_CALIB_FOLDS ? (int)ng : RF_CALIB_FOLDS;
  rf__shuffled_folds(ng, (unsigned)K, seed, 0x43414c47ULL /* "CALG" */, perm, gfold);
  for (size_t i = 0; i < n; i++) fold[i] = gfold[gid[i]];
out:
  rf__free(names);
  rf__free(gid);
  rf__free(perm);
  rf__free(gfold);
  return K;
}

/* Forests without bootstrap, or calibration for unseen groups: an inner
   K-fold on the training rows (fold[i] in 0..K-1). */
static int score_kfold(const rf_data *d, const double *ty, const rf_params *p, int nt,
                       const double *probs, double *sc, unsigned char *ok,
                       const size_t *fold, unsigned K, double *ab, double *pv, double *med) {
  size_t n = d->n_rows;
  size_t *sel = rf__mallocn(n, sizeof(size_t)); /* a fold's training rows */
  rf_data dtr;
  memset(&dtr, 0, sizeof dtr);
  rf_forest *g = NULL;
  int rc = -1;
  if (!sel) {
    rf__nomem();
    goto out;
  }
  for (unsigned k = 0; k < K; k++) {
    size_t ntr = 0;
    for (size_t i = 0; i < n; i++)
      if (fold[i] != k) sel[ntr++] = i;
    if (rf__subset(d, sel, ntr, &dtr)) goto out;
    rf_params q = *p;
    q.calibrate = RF_CALIBRATE_OFF;
    q.n_trees = p->n_trees < RF_CALIB_TREES ? p->n_trees : RF_CALIB_TREES;
    q.seed = p->seed ^ (0x9e3779b97f4a7c15ULL * (k + 1));
    q.n_threads = nt;
    q.perm_importance = 0;
    q.progress = NULL;
    q.progress_ctx = NULL;
    q.created = 1;
    if (rf_train(&dtr, &q, &g)) goto out;
    rf_data_free(&dtr);
    int failed = 0;
#pragma omp parallel num_threads(nt) reduction(| : failed)
    {
      scorer s;
      int mine = scorer_init(&s, d->n_cols, g->n_trees);
      if (mine) failed = 1;
#pragma omp for schedule(dynamic, 64)
      for (size_t i = 0; i < n; i++) {
        if (mine || fold[i] != k) continue;
        get_row(d, i, s.row);
        for (size_t t = 0; t < g->n_trees; t++) s.leaf[t] = g->trees[t].nodes;
        rf__walk(g, s.row, s.leaf);
        if (score_row(g, &s, probs, ty[i], n, i, sc, ab, pv)) {
          mine = failed = 1;
          continue;
        }
        if (med) med[i] = g->base_med;
        ok[i] = 1;
      }
      scorer_free(&s);
    }
    rf_free(g);
    g = NULL;
    if (failed) {
      rf__nomem();
      goto out;
    }
  }
  rc = 0;
out:
  rf_free(g);
  rf_data_free(&dtr);
  rf__free(sel);
  return rc;
}

/* The rank of a split-conformal quantile at coverage c among m scores
   (1-based; m when it would exceed them). */
static size_t conf_rank(size_t m, double c) {
  double r = ceil((double)(m + 1) * c - 1e-9);
  return r > (double)m ? m : r < 1 ? 1 : (size_t)r;
}

/* Unseen groups: the scores of one held-out group's rows are not
   independent (they share the group's offset), so a quantile pooled over
   rows counts a large group many times and three groups as thousands of
   rows.  Per grid coverage c: each group's c-quantile of its own rows'
   scores, then the conformal quantile of those over the groups (the
   largest group's when (G+1) c exceeds G, as it does for G < 9 at 0.9).
   qg[k] is left alone when fewer than 2 groups were scored. */
static int group_quantiles(const rf_data *d, const double *sc, const unsigned char *ok,
                           double *qg) {
  size_t n = d->n_rows, ng = 0;
  char **names = rf__mallocn(n, sizeof(char *));
  size_t *gid = rf__mallocn(n, sizeof(size_t)), *cnt = NULL, *at = NULL;
  double *buf = rf__mallocn(n, sizeof(double)), *gq = NULL;
  int rc = -1;
  if (!names || !gid || !buf) {
    rf__nomem();
    goto out;
  }
  rf__group_index(d, gid, names, &ng);
  cnt = rf__calloc(ng + 1, sizeof(size_t));
  at = rf__calloc(ng + 1, sizeof(size_t));
  gq = rf__mallocn(ng + 1, sizeof(double));
  if (!cnt || !at || !gq) {
    rf__nomem();
    goto out;
  }
  for (size_t i = 0; i < n; i++)
    if (ok[i]) cnt[gid[i]]++;
  for (size_t g = 1; g <= ng; g++) at[g] = at[g - 1] + cnt[g - 1];
  for (size_t k = 0; k < NG; k++) {
    const double *s = sc + k * n;
    /* bucket the scored rows by group */
    size_t *fill = rf__calloc(ng ? ng : 1, sizeof(size_t));
    if (!fill) {
      rf__nomem();
      goto out;
    }
    for (size_t i = 0; i < n; i++)
      if (ok[i]) buf[at[gid[i]] + fill[gid[i]]++] = s[i];
    rf__free(fill);
    size_t G = 0;
    for (size_t g = 0; g < ng; g++) {
      if (!cnt[g]) continue;
      double *b = buf + at[g];
      qsort(b, cnt[g], sizeof *b, rf__cmp_double);
      gq[G++] = b[conf_rank(cnt[g], grid[k]) - 1];
    }
    if (G < 2) continue;
    qsort(gq, G, sizeof *gq, rf__cmp_double);
    qg[k] = gq[conf_rank(G, grid[k]) - 1];
  }
  rc = 0;
out:
  rf__free(names);
  rf__free(gid);
  rf__free(cnt);
  rf__free(at);
  rf__free(buf);
  rf__free(gq);
  return rc;
}

/* ------------------------------------------------------------ calibration -- */

int rf__calibrate(rf_forest *f, const rf_data *d, const double *ty, const rf_params *p,
                  uint64_t *const *inbag, int nt) {
  return rf__calibrate_into(f, d, ty, p, inbag, nt, &f->cal);
}

int rf_calibrate_unseen(rf_forest *f, const rf_data *d, char **groups, int n_threads) {
  if (!f || !d || !d->y || !groups) return rf__err("rf_calibrate_unseen: NULL argument");
  if (d->n_cols != f->n_features)
    return rf__err("data has %zu feature columns, the model %zu", d->n_cols, f->n_features);
  rf_data g = *d; /* a view with the given groups; nothing is freed */
  g.groups = groups;
  double *ty = NULL;
  if (rf__transformed_y(&f->params, d, &ty)) return -1;
  rf_params p = f->params;
  p.calibrate = RF_CALIBRATE_ON;
  p.calib_groups = 1;
  int calib = f->params.calibrate;
  int rc = rf__calibrate_into(f, &g, ty, &p, NULL, rf__nthreads(n_threads), &f->cal_unseen);
  if (!rc) rf__calib_prior(&f->cal_unseen, f->cal_unseen.folds);
  f->params.calibrate = calib; /* the table of seen GPUs stays as it was */
  rf__free(ty);
  rf__fill_info(f);
  return rc;
}

/* KCAST_GROUP_SHRINK=0 turns the shrink off (to measure what it does). */
static int no_shrink(void) {
  const char *e = getenv("KCAST_GROUP_SHRINK");
  return e && !strcmp(e, "0");
}

/*
 * The shrink of a table made on held-out groups (rf_calib.shrink): each
 * scored row i was answered pv[i] (transformed space: log(y / base)) by
 * the forest of the folds without its group, whose base_med was med[i];
 * an answer moved s of the way toward the base (0) or toward med[i] is
 * scored by its mean absolute error against ty[i] in each group, for s in
 * steps of 1/8.  A candidate counts only when it is no worse than the
 * forest's own answers in every group: a GPU's offset against the
 * estimate that the other GPUs do not share is what it corrects, and a
 * gain on average that one group pays for is noise of a few groups (on
 * the tutorial's seven applications such a choice cost 12 points).  The
 * counted one with the lowest mean over the rows is kept.
 *
 * pick() makes that choice over the rows whose column key holds kv (key <
 * 0: every row), against the reference move *s_io toward *t_io (0: the
 * forest's own answers): a move replaces it only when no worse in every
 * group and better on the mean.  1 when one did, 0 when the reference
 * stays, -1 when no row was scored.  gl, g0 and gc are scratch of ng + 1
 * slots.
 */
static int pick(const rf_data *d, const double *ty, const unsigned char *ok, const double *pv,
                const double *med, const size_t *gid, size_t ng, long key, double kv,
                double *gl, double *g0, size_t *gc, double *s_io, int *t_io) {
  size_t n = d->n_rows;
  const double *kx = key >= 0 ? d->x + (size_t)key * n : NULL;
  double best = HUGE_VAL, s_ref = *s_io;
  int t_ref = *t_io, rc = 0;
  memset(gc, 0, (ng + 1) * sizeof *gc);
  /* the reference first (k = -1), then every move */
  for (int c = -1; c < 17; c++) {
    int t = c < 0 ? t_ref : c > 8;
    double s = c < 0 ? s_ref : (c > 8 ? c - 8 : c) / 8.0;
    if (c >= 0 && s == s_ref && (t == t_ref || s == 0)) continue;
    double sum = 0;
    size_t m = 0;
    memset(gl, 0, (ng + 1) * sizeof *gl);
    for (size_t i = 0; i < n; i++) {
      double to = t ? med[i] : 0;
      if (!ok[i] || !isfinite(pv[i]) || !isfinite(to) || (kx && kx[i] != kv)) continue;
      double e = fabs(pv[i] + s * (to - pv[i]) - ty[i]);
      sum += e;
      gl[gid[i]] += e;
      m++;
      if (c < 0) gc[gid[i]]++;
    }
    if (!m) return -1;
    if (c < 0) {
      memcpy(g0, gl, (ng + 1) * sizeof *gl);
      best = sum / (double)m;
      continue;
    }
    int all = 1;
    for (size_t g = 0; g < ng && all; g++)
      if (gc[g] && gl[g] > g0[g]) all = 0;
    if (all && sum / (double)m < best) {
      best = sum / (double)m;
      *s_io = s;
      *t_io = t;
      rc = 1;
    }
  }
  return rc;
}

/* KCAST_GROUP_SHRINK=1 chooses one shrink for every row, as file version
   7 did (to measure what the classes add). */
static int one_shrink(void) {
  const char *e = getenv("KCAST_GROUP_SHRINK");
  return e && !strcmp(e, "1");
}

/*
 * The table's shrinks: one over every row (out->shrink, out->toward), and
 * where the data has an RF_SHRINK_KEY column whose scored rows hold 2 to
 * RF_SHRINK_CLASSES distinct values, one per value, chosen on that class's
 * rows alone (out->key_*).  Why per class: left out a GPU at a time, the
 * NeuSight launches' GEMMs and softmax were answered better moved toward
 * the estimate, the convolutions (whose estimate is the worst: cuDNN's
 * algorithms) and layer norm worse; one move for all cost those two 5
 * points (docs/accuracy.md).  1 when any shrink was chosen; -1 out of
 * memory.
 */
static int choose_shrink(const rf_data *d, const double *ty, const unsigned char *ok,
                         const double *pv, const double *med, rf_calib *out) {
  size_t n = d->n_rows, ng = 0;
  size_t *gid = rf__mallocn(n, sizeof(size_t));
  char **names = rf__mallocn(n, sizeof(char *));
  double *gl = NULL, *g0 = NULL;
  size_t *gc = NULL;
  int rc = -1;
  if (!gid || !names) {
    rf__nomem();
    goto out;
  }
  rf__group_index(d, gid, names, &ng);
  gl = rf__calloc(ng + 1, sizeof(double));
  g0 = rf__calloc(ng + 1, sizeof(double));
  gc = rf__calloc(ng + 1, sizeof(size_t));
  if (!gl || !g0 || !gc) {
    rf__nomem();
    goto out;
  }
  rc = 0;
  out->shrink = 0;
  out->toward = 0;
  if (pick(d, ty, ok, pv, med, gid, ng, -1, 0, gl, g0, gc, &out->shrink, &out->toward) < 0)
    goto out;
  rc = out->shrink > 0;
  /* the classes */
  long key = -1;
  for (size_t j = 0; d->names && j < d->n_cols && key < 0; j++)
    if (d->names[j] && !strcmp(d->names[j], RF_SHRINK_KEY)) key = (long)j;
  if (key < 0 || one_shrink()) goto out;
  double vals[RF_SHRINK_CLASSES];
  unsigned nv = 0;
  const double *kx = d->x + (size_t)key * n;
  for (size_t i = 0; i < n && nv <= RF_SHRINK_CLASSES; i++) {
    if (!ok[i] || !isfinite(kx[i])) continue;
    unsigned k = 0;
    while (k < nv && vals[k] != kx[i]) k++;
    if (k < nv) continue;
    if (nv == RF_SHRINK_CLASSES) { nv++; break; } /* too many: no classes */
    vals[nv++] = kx[i];
  }
  if (nv < 2 || nv > RF_SHRINK_CLASSES) goto out;
  qsort(vals, nv, sizeof *vals, rf__cmp_double);
  out->key = (int)key;
  for (unsigned k = 0; k < nv; k++) {
    double s = out->shrink; /* a class departs from the one move only where */
    int t = out->toward;    /* that is no worse in every group of its rows */
    if (pick(d, ty, ok, pv, med, gid, ng, key, vals[k], gl, g0, gc, &s, &t) < 0) continue;
    out->key_val[out->n_keyed] = vals[k];
    out->key_shrink[out->n_keyed] = s;
    out->key_toward[out->n_keyed] = t;
    out->n_keyed++;
    if (s > 0) rc = 1;
  }
  /* classes that all keep the one move add nothing */
  unsigned same = 0;
  for (unsigned k = 0; k < out->n_keyed; k++)
    same += out->key_shrink[k] == out->shrink &&
            (out->key_toward[k] == out->toward || out->shrink == 0);
  if (same == out->n_keyed) out->n_keyed = 0;
out:
  rf__free(gid);
  rf__free(names);
  rf__free(gl);
  rf__free(g0);
  rf__free(gc);
  return rc;
}

/* The scores of the rows as the shrink answers them: moving the answer
   and its band by delta is moving the target by -delta. */
static void rescore(const rf_data *d, const unsigned char *ok, const double *pv,
                    const double *med, const rf_calib *c, const double *ab, double *sc) {
  size_t n = d->n_rows;
  for (size_t i = 0; i < n; i++) {
    if (!ok[i]) continue;
    double s = c->shrink;
    int t = c->toward;
    if (c->n_keyed) rf__class_shrink(c, d->x[(size_t)c->key * n + i], &s, &t);
    double to = t ? med[i] : 0;
    double delta = s * (to - pv[i]);
    for (size_t k = 0; k < NG; k++) {
      double a = ab[2 * k * n + i] + delta, b = ab[(2 * k + 1) * n + i] - delta;
      sc[k * n + i] = a > b ? a : b;
    }
  }
}

int rf__calibrate_into(rf_forest *f, const rf_data *d, const double *ty, const rf_params *p,
                       uint64_t *const *inbag, int nt, rf_calib *out) {
  memset(out, 0, sizeof *out);
  int mode = p->calibrate;
  int want = mode == RF_CALIBRATE_ON || (mode == RF_CALIBRATE_DEFAULT && p->bootstrap);
  f->params.calibrate = RF_CALIBRATE_OFF;
  if (!want) return 0;
  size_t n = d->n_rows;
  if (p->calib_groups && !d->groups)
    return rf__err("calibration for unseen groups needs group labels");
  if ((!p->bootstrap || p->calib_groups) && n < MIN_ROWS) return 0;
  double probs[2 * NG];
  grid_probs(probs);
  double *sc = rf__mallocn(n, NG * sizeof(double));
  unsigned char *ok = rf__calloc(n, 1);
  size_t *fold = NULL;
  double *ab = NULL, *pv = NULL, *med = NULL;
  int rc = -1, K = 0, method = p->bootstrap ? RF_CALIB_OOB : RF_CALIB_KFOLD;
  if (!sc || !ok) {
    rf__nomem();
    goto out;
  }
  /* unseen groups of a forest with a base: what the shrink is chosen on */
  if (p->calib_groups && p->base_feature >= 0 && p->transform == RF_TRANSFORM_LOG &&
      !no_shrink()) {
    ab = rf__mallocn(n, 2 * NG * sizeof(double));
    pv = rf__mallocn(n, sizeof(double));
    med = rf__mallocn(n, sizeof(double));
    if (!ab || !pv || !med) {
      rf__nomem();
      goto out;
    }
  }
  if (p->calib_groups || !p->bootstrap) {
    if (!(fold = rf__mallocn(n, sizeof(size_t)))) {
      rf__nomem();
      goto out;
    }
    if (p->calib_groups) {
      if ((K = group_folds(d, p->seed, fold)) < 0) goto out;
      if (K < 2) {
        rf__err("calibration for unseen groups needs at least 2 groups");
        goto out;
      }
      method = RF_CALIB_GROUPS;
    } else {
      size_t *scratch = rf__mallocn(n, sizeof(size_t));
      if (!scratch) {
        rf__nomem();
        goto out;
      }
      K = RF_CALIB_FOLDS;
      rf__shuffled_folds(n, (unsigned)K, p->seed, 0x43414c42ULL /* "CALB" */, scratch, fold);
      rf__free(scratch);
    }
  }
  if (method == RF_CALIB_OOB ? score_oob(f, d, ty, inbag, nt, probs, sc, ok)
                             : score_kfold(d, ty, p, nt, probs, sc, ok, fold, (unsigned)K, ab,
                                           pv, med))
    goto out;
  if (ab) {
    int ch = choose_shrink(d, ty, ok, pv, med, out);
    if (ch < 0) goto out;
    if (ch) rescore(d, ok, pv, med, out, ab, sc);
  }
  size_t m = 0;
  for (size_t i = 0; i < n; i++) m += ok[i];
  if (m >= MIN_ROWS) {
    rf_calib *c = out;
    /* unseen groups: the group-level quantile first (it reads the scores
       in row order, before they are compacted) */
    double qg[NG];
    for (size_t k = 0; k < NG; k++) qg[k] = -HUGE_VAL;
    if (method == RF_CALIB_GROUPS && group_quantiles(d, sc, ok, qg)) goto out;
    for (size_t k = 0; k < NG; k++) {
      double *s = sc + k * n; /* compact the scored rows to the front, in row order */
      size_t r = 0;
      for (size_t i = 0; i < n; i++)
        if (ok[i]) s[r++] = s[i];
      qsort(s, m, sizeof *s, rf__cmp_double);
      double want_rank = ceil((double)(m + 1) * grid[k] - 1e-9);
      size_t rank = want_rank > (double)m ? m : (size_t)want_rank;
      c->cov[k] = grid[k];
      c->q[k] = fmax(s[rank - 1], qg[k]);
    }
    c->n = (unsigned)NG;
    c->method = method;
    c->folds = method == RF_CALIB_OOB ? 0 : (unsigned)K;
    c->rows = m;
    f->params.calibrate = RF_CALIBRATE_ON;
  } else {
    out->shrink = 0; /* no table, no shrink */
  }
  rc = 0;
out:
  rf__free(sc);
  rf__free(ok);
  rf__free(fold);
  rf__free(ab);
  rf__free(pv);
  rf__free(med);
  return rc;
}

/* z of the standard normal's central band at each grid coverage. */
static const double zgrid[NG] = {0.67449, 0.99446, 1.28155, 1.64485, 1.95996, 2.57583};

void rf__calib_prior(rf_calib *c, size_t groups) {
  if (!c->n || groups >= 3 || c->n != NG) return;
  /* the new group's offset against the mean of `groups` known ones:
     sigma x sqrt(1 + 1/groups); a table made by rows knows no group
     spread at all (its widening is added to), one of two groups a little
     (the prior is its floor) */
  double k = groups ? (double)groups : 1;
  for (unsigned i = 0; i < c->n; i++) {
    double w = zgrid[i] * RF_UNSEEN_SIGMA * sqrt(1 + 1 / k);
    c->q[i] = groups <= 1 ? c->q[i] + w : fmax(c->q[i], w);
  }
}

void rf__calib_info(rf_forest *f) {
  /* the table for an unseen GPU of a model that has none of its own */
  f->cal_prior = f->cal;
  if (f->cal.method != RF_CALIB_GROUPS) rf__calib_prior(&f->cal_prior, 1);
  else rf__calib_prior(&f->cal_prior, f->cal.folds);
  rf_info *in = &f->info;
  in->cal_method = f->cal.n ? f->cal.method : RF_CALIB_NONE;
  in->cal_folds = f->cal.folds;
  in->cal_rows = f->cal.rows;
  in->n_cal = f->cal.n;
  in->cal_coverage = f->cal.cov;
  in->cal_q = f->cal.q;
  in->n_cal_unseen = f->cal_unseen.n;
  in->cal_unseen_rows = f->cal_unseen.rows;
  in->cal_unseen_folds = f->cal_unseen.folds;
  in->cal_unseen_q = f->cal_unseen.q;
  in->cal_shrink = f->cal.shrink;
  in->cal_toward = f->cal.toward;
  in->cal_unseen_shrink = f->cal_unseen.shrink;
  in->cal_unseen_toward = f->cal_unseen.toward;
  in->cal_n_keyed = f->cal.n_keyed;
  in->cal_key = f->cal.n_keyed ? f->features[f->cal.key] : NULL;
  in->cal_key_val = f->cal.key_val;
  in->cal_key_shrink = f->cal.key_shrink;
  in->cal_key_toward = f->cal.key_toward;
  in->cal_unseen_n_keyed = f->cal_unseen.n_keyed;
  in->cal_unseen_key = f->cal_unseen.n_keyed ? f->features[f->cal_unseen.key] : NULL;
  in->cal_unseen_key_val = f->cal_unseen.key_val;
  in->cal_unseen_key_shrink = f->cal_unseen.key_shrink;
  in->cal_unseen_key_toward = f->cal_unseen.key_toward;
}
