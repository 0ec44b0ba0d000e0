/*
 * emu_trace.c -- reuse distances and sharing of the traced CTAs' global
 * accesses, for the memory-hierarchy model (model/cache.c; docs/features.md
 * "Reuse and sharing").
 *
 * Why: a launch's sectors say what it asks of memory, not where the
 * answers come from.  A kernel that re-reads its data (a sliding window, a
 * stencil's neighbours, a tile every CTA reads) is served by L1 and L2 and
 * runs at their speed; charged as if every sector came from DRAM it looks
 * memory-bound, and its configurations rank backwards.  Which level serves
 * a re-read depends on the GPU (cache sizes, CTAs resident per SM), so the
 * emulator records what does not: how far apart in distinct data the
 * re-reads of each CTA are (an LRU cache of C bytes hits exactly the reuses
 * within C: Mattson et al. 1970), and how much of each CTA's data its grid
 * neighbours and the rest of the grid also read.  model/cache.c turns them
 * into hits per level on a given GPU.
 *
 * Order.  The engine runs a CTA's warps one after another up to each
 * barrier, while a GPU interleaves them.  Each access is tagged with its
 * warp's count of memory instructions so far; sorting by that count (warp
 * order breaking ties) gives the round-robin interleaving, in which warp 1
 * re-reading what warp 0 read a moment before is a reuse at a short
 * distance, not one a whole warp's lifetime later.
 *
 * Granularity.  Lines of 128 bytes, each access with a mask of the 32-byte
 * sectors it touched (L1 and L2 allocate lines and fill sectors): a sector
 * re-read in a line seen before is a reuse at the line's distance, a new
 * sector of a seen line is a first touch.
 *
 * Cost.  A CTA's first EMU_TRACE_SAMPLE lines are exact; beyond, the lines
 * whose hash falls below a threshold are kept (spatial sampling, SHARDS:
 * every access of a kept line, distances scaled by the sampled share), and
 * the threshold is a function of the line only, so two CTAs' samples
 * intersect as their sets do.  Stack distances by a Fenwick tree over the
 * access positions (Bennett and Kruskal 1975): O(n log n) per CTA.
 */
#include "emulator/emu_trace.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Most load and store entries one CTA records; a longer trace keeps its
   prefix (its counts scaled to all the CTA's sectors). */
#define MAX_LD (1u << 21)
#define MAX_ST (1u << 20)

const char *const emu_trace_feat_name[EMU_TRACE_NFEAT] = {
    "mem.reuse_lt_512", "mem.reuse_lt_1k",   "mem.reuse_lt_2k",   "mem.reuse_lt_4k",
    "mem.reuse_lt_8k",  "mem.reuse_lt_16k",  "mem.reuse_lt_32k",  "mem.reuse_lt_64k",
    "mem.reuse_lt_128k", "mem.reuse_lt_256k", "mem.reuse_lt_512k", "mem.reuse_lt_1m",
    "mem.reuse_lt_2m",  "mem.reuse_lt_4m",   "mem.cta_reuse",     "mem.share_x",
    "mem.share_y",      "mem.share_z",       "mem.share_far",     "mem.store_footprint_bytes"};

typedef struct ent {
  uint64_t key;  /* line << 4 | sector mask */
  uint32_t seq;  /* the warp's memory instructions before this one */
  uint32_t warp;
} ent;

struct emu_trace {
  uint64_t cta;
  unsigned role;
  uint32_t nwarps;
  uint32_t *seq;           /* per warp */
  uint32_t cseq;
  ent *ld;                 /* load entries, in emulation order */
  size_t nld, cld;
  uint64_t *st;            /* store entries (line << 4 | mask) */
  size_t nst, cst;
  double ld_sectors;       /* every load sector request of the CTA */
  double ld_kept;          /* of those, in ld[] (a full trace stops adding) */
  /* scratch of emu_trace_end */
  ent *tmp;
  size_t ctmp;
  uint32_t *cnt;
  size_t ccnt;
  uint64_t *hkey;          /* line + 1, 0 = empty */
  uint32_t *hpos;
  uint8_t *hmask;
  size_t hcap;             /* slots allocated */
  size_t hsize;            /* slots in use: a power of two, >= 2 x lines */
  uint32_t *fen;
  size_t cfen;
};

/* A line's sampling hash (splitmix64's finaliser, top 32 bits). */
static inline uint32_t line_hash(uint64_t line) {
  uint64_t z = line + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return (uint32_t)((z ^ (z >> 31)) >> 32);
}

emu_trace *emu_trace_new(void) { return calloc(1, sizeof(emu_trace)); }

void emu_trace_free(emu_trace *t) {
  if (!t) return;
  free(t->seq);
  free(t->ld);
  free(t->st);
  free(t->tmp);
  free(t->cnt);
  free(t->hkey);
  free(t->hpos);
  free(t->hmask);
  free(t->fen);
  free(t);
}

void emu_trace_res_free(emu_trace_res *r) {
  if (!r) return;
  free(r->lines);
  r->lines = NULL;
  r->nlines = 0;
}

int emu_trace_begin(emu_trace *t, uint64_t cta, unsigned role, uint32_t nwarps) {
  if (t->cseq < nwarps) {
    uint32_t *s = realloc(t->seq, nwarps * sizeof *s);
    if (!s) return -1;
    t->seq = s;
    t->cseq = nwarps;
  }
  memset(t->seq, 0, nwarps * sizeof *t->seq);
  t->nwarps = nwarps;
  t->cta = cta;
  t->role = role;
  t->nld = t->nst = 0;
  t->ld_sectors = t->ld_kept = 0;
  return 0;
}

/* Append one line of one access; a full buffer drops it. */
static void add(emu_trace *t, uint32_t w, int store, uint64_t line, unsigned mask) {
  uint64_t key = line << 4 | mask;
  if (store) {
    if (t->nst == t->cst) {
      size_t nc = t->cst ? 2 * t->cst : 1024;
      if (nc > MAX_ST) return;
      uint64_t *s = realloc(t->st, nc * sizeof *s);
      if (!s) return;
      t->st = s;
      t->cst = nc;
    }
    t->st[t->nst++] = key;
    return;
  }
  if (t->nld == t->cld) {
    size_t nc = t->cld ? 2 * t->cld : 4096;
    if (nc > MAX_LD) return;
    ent *e = realloc(t->ld, nc * sizeof *e);
    if (!e) return;
    t->ld = e;
    t->cld = nc;
  }
  t->ld[t->nld++] = (ent){key, t->seq[w], w};
  t->ld_kept += __builtin_popcount(mask);
}

void emu_trace_range(emu_trace *t, uint32_t w, int store, uint64_t s0, uint64_t s1) {
  if (w >= t->nwarps) return;
  for (uint64_t l = s0 >> 2; l <= s1 >> 2; l++) {
    unsigned a = l == s0 >> 2 ? (unsigned)(s0 & 3) : 0, b = l == s1 >> 2 ? (unsigned)(s1 & 3) : 3;
    add(t, w, store, l, ((2u << b) - 1) & ~((1u << a) - 1));
  }
  if (!store) t->ld_sectors += (double)(s1 - s0 + 1);
  t->seq[w]++;
}

void emu_trace_list(emu_trace *t, uint32_t w, int store, const uint64_t *sec, unsigned n) {
  if (w >= t->nwarps || !n) return;
  uint64_t line = sec[0] >> 2, prev = sec[0];
  unsigned mask = 1u << (sec[0] & 3), distinct = 1;
  for (unsigned i = 1; i < n; i++) {
    if (sec[i] == prev) continue;
    prev = sec[i];
    distinct++;
    if (sec[i] >> 2 != line) {
      add(t, w, store, line, mask);
      line = sec[i] >> 2;
      mask = 0;
    }
    mask |= 1u << (sec[i] & 3);
  }
  add(t, w, store, line, mask);
  if (!store) t->ld_sectors += distinct;
  t->seq[w]++;
}

static int grow(void **p, size_t *cap, size_t need, size_t size) {
  if (*cap >= need) return 0;
  void *q = realloc(*p, need * size);
  if (!q) return -1;
  *p = q;
  *cap = need;
  return 0;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* Slot of line in the hash table (its slot or the empty one to fill). */
static inline size_t hslot(const emu_trace *t, uint64_t line) {
  size_t m = t->hsize - 1, h = (size_t)(line * 0x9e3779b97f4a7c15ull >> 20) & m;
  while (t->hkey[h] && t->hkey[h] != line + 1) h = (h + 1) & m;
  return h;
}

/* Fenwick tree over positions 1..n: add v at i, sum of 1..i. */
static inline void fen_add(uint32_t *f, size_t n, size_t i, int v) {
  for (; i <= n; i += i & -i) f[i] = (uint32_t)((int)f[i] + v);
}
static inline uint64_t fen_sum(const uint32_t *f, size_t i) {
  uint64_t s = 0;
  for (; i; i -= i & -i) s += f[i];
  return s;
}

int emu_trace_end(emu_trace *t, emu_trace_res *out) {
  memset(out, 0, sizeof *out);
  out->cta = t->cta;
  out->role = t->role;
  out->load_sectors = t->ld_sectors;
  out->thr = UINT32_MAX;
  /* distinct stored sectors: the store lines merged */
  if (t->nst) {
    qsort(t->st, t->nst, sizeof *t->st, cmp_u64);
    double s = 0;
    for (size_t i = 0; i < t->nst;) {
      uint64_t line = t->st[i] >> 4;
      unsigned m = 0;
      for (; i < t->nst && t->st[i] >> 4 == line; i++) m |= (unsigned)(t->st[i] & 15);
      s += __builtin_popcount(m);
    }
    out->store_sectors = s;
  }
  size_t n = t->nld;
  if (!n) return 0;
  /* the line sample */
  uint32_t thr = UINT32_MAX;
  if (n > EMU_TRACE_SAMPLE) {
    double f = (double)EMU_TRACE_SAMPLE / (double)n * 4294967296.0;
    thr = f < 1 ? 1 : (uint32_t)f;
  }
  out->thr = thr;
  /* kept entries, ordered by (seq, warp): counting sort by seq of the
     entries in emulation order, whose warps ascend within a seq only when
     the warps ran in order -- ties are sorted by warp below */
  uint32_t maxseq = 0;
  size_t k = 0;
  double kept_sec = 0;
  for (size_t i = 0; i < n; i++) {
    if (thr != UINT32_MAX && line_hash(t->ld[i].key >> 4) > thr) continue;
    if (t->ld[i].seq > maxseq) maxseq = t->ld[i].seq;
    t->ld[k++] = t->ld[i];
    kept_sec += __builtin_popcount((unsigned)(t->ld[k - 1].key & 15));
  }
  if (grow((void **)&t->tmp, &t->ctmp, k ? k : 1, sizeof *t->tmp) ||
      grow((void **)&t->cnt, &t->ccnt, (size_t)maxseq + 2, sizeof *t->cnt))
    return -1;
  memset(t->cnt, 0, ((size_t)maxseq + 2) * sizeof *t->cnt);
  for (size_t i = 0; i < k; i++) t->cnt[t->ld[i].seq + 1]++;
  for (uint32_t s = 1; s <= maxseq + 1; s++) t->cnt[s] += t->cnt[s - 1];
  for (size_t i = 0; i < k; i++) t->tmp[t->cnt[t->ld[i].seq]++] = t->ld[i];
  /* within one seq, warps in ascending order (a barrier makes warp 0's
     later accesses come after warp 1's earlier ones in emulation order) */
  for (size_t a = 0; a < k;) {
    size_t b = a + 1;
    int sorted = 1;
    while (b < k && t->tmp[b].seq == t->tmp[a].seq) {
      if (t->tmp[b].warp < t->tmp[b - 1].warp) sorted = 0;
      b++;
    }
    if (!sorted) /* insertion sort, stable: a run is one seq's accesses */
      for (size_t i = a + 1; i < b; i++) {
        ent x = t->tmp[i];
        size_t j = i;
        while (j > a && t->tmp[j - 1].warp > x.warp) { t->tmp[j] = t->tmp[j - 1]; j--; }
        t->tmp[j] = x;
      }
    a = b;
  }
  /* hash table of the lines, Fenwick tree of their last accesses */
  size_t hc = 1024;
  while (hc < 2 * k) hc <<= 1;
  if (t->hcap < hc) {
    free(t->hkey);
    free(t->hpos);
    free(t->hmask);
    t->hkey = malloc(hc * sizeof *t->hkey);
    t->hpos = malloc(hc * sizeof *t->hpos);
    t->hmask = malloc(hc);
    t->hcap = t->hkey && t->hpos && t->hmask ? hc : 0;
    if (!t->hcap) return -1;
  }
  t->hsize = hc;
  memset(t->hkey, 0, hc * sizeof *t->hkey);
  int dist = (t->role & EMU_TRACE_MAIN) != 0;
  if (dist) {
    if (grow((void **)&t->fen, &t->cfen, k + 1, sizeof *t->fen)) return -1;
    memset(t->fen, 0, (k + 1) * sizeof *t->fen);
  }
  double scale_d = thr == UINT32_MAX ? 1 : 4294967296.0 / ((double)thr + 1);
  double bins[EMU_TRACE_BINS] = {0}, reused = 0;
  size_t nlines = 0;
  for (size_t i = 0; i < k; i++) {
    uint64_t line = t->tmp[i].key >> 4;
    unsigned m = (unsigned)(t->tmp[i].key & 15);
    size_t h = hslot(t, line);
    if (!t->hkey[h]) {
      t->hkey[h] = line + 1;
      t->hpos[h] = (uint32_t)i;
      t->hmask[h] = (uint8_t)m;
      nlines++;
      if (dist) fen_add(t->fen, k, i + 1, 1);
      continue;
    }
    unsigned again = m & t->hmask[h];
    if (again && dist) {
      uint32_t p = t->hpos[h];
      double d = (double)(fen_sum(t->fen, i) - fen_sum(t->fen, (size_t)p + 1));
      double bytes = d * 128.0 * scale_d;
      double c = __builtin_popcount(again);
      reused += c;
      for (int b = 0; b < EMU_TRACE_BINS; b++)
        if (bytes < (double)(512u << b)) { bins[b] += c; break; }
    }
    if (dist) {
      fen_add(t->fen, k, (size_t)t->hpos[h] + 1, -1);
      fen_add(t->fen, k, i + 1, 1);
    }
    t->hpos[h] = (uint32_t)i;
    t->hmask[h] |= (uint8_t)m;
  }
  /* counts of the kept entries stand for all the CTA's load sectors */
  double sc = kept_sec > 0 ? t->ld_sectors / kept_sec : 0;
  double cum = 0;
  for (int b = 0; b < EMU_TRACE_BINS; b++) {
    cum += bins[b];
    out->reuse[b] = cum * sc;
  }
  out->reused = reused * sc;
  out->lines = malloc((nlines ? nlines : 1) * sizeof *out->lines);
  if (!out->lines) return -1;
  for (size_t h = 0; h < hc; h++)
    if (t->hkey[h]) out->lines[out->nlines++] = (t->hkey[h] - 1) << 4 | t->hmask[h];
  qsort(out->lines, out->nlines, sizeof *out->lines, cmp_u64);
  return 0;
}

/* The sectors of a (under threshold thr) that b also has, and a's. */
static void overlap(const emu_trace_res *a, const emu_trace_res *b, uint32_t thr, double *both,
                    double *all) {
  size_t j = 0;
  for (size_t i = 0; i < a->nlines; i++) {
    uint64_t line = a->lines[i] >> 4;
    if (thr != UINT32_MAX && line_hash(line) > thr) continue;
    unsigned m = (unsigned)(a->lines[i] & 15);
    *all += __builtin_popcount(m);
    while (j < b->nlines && b->lines[j] >> 4 < line) j++;
    if (j < b->nlines && b->lines[j] >> 4 == line)
      *both += __builtin_popcount(m & (unsigned)(b->lines[j] & 15));
  }
}

static const emu_trace_res *find(const emu_trace_res *r, size_t n, uint64_t cta) {
  for (size_t i = 0; i < n; i++)
    if (r[i].cta == cta) return &r[i];
  return NULL;
}

int emu_trace_features(const emu_trace_res *r, size_t n, uint64_t ntotal, const uint32_t gdim[3],
                       double out[EMU_TRACE_NFEAT]) {
  memset(out, 0, EMU_TRACE_NFEAT * sizeof *out);
  double ld = 0, reuse[EMU_TRACE_BINS] = {0}, reused = 0, stores = 0;
  size_t nmain = 0;
  uint32_t thr_all = UINT32_MAX;
  for (size_t i = 0; i < n; i++) {
    if (!(r[i].role & EMU_TRACE_MAIN)) continue;
    nmain++;
    ld += r[i].load_sectors;
    for (int b = 0; b < EMU_TRACE_BINS; b++) reuse[b] += r[i].reuse[b];
    reused += r[i].reused;
    stores += r[i].store_sectors;
    if (r[i].thr < thr_all) thr_all = r[i].thr;
  }
  if (!nmain) return 0;
  for (int b = 0; b < EMU_TRACE_BINS && ld > 0; b++) out[b] = reuse[b] / ld;
  out[EMU_TRACE_BINS] = ld > 0 ? reused / ld : 0;
  out[EMU_TRACE_BINS + 5] = stores * 32.0 * (double)ntotal / (double)nmain;
  /* the neighbours one back in x, y and z of the CTAs that have them */
  uint64_t gx = gdim[0], gxy = (uint64_t)gdim[0] * gdim[1];
  for (int d = 0; d < 3; d++) {
    double both = 0, all = 0;
    for (size_t i = 0; i < n; i++) {
      if (!(r[i].role & EMU_TRACE_MAIN)) continue;
      uint64_t c = r[i].cta, step = d == 0 ? 1 : d == 1 ? gx : gxy;
      uint64_t coord = d == 0 ? c % gx : d == 1 ? c / gx % gdim[1] : c / gxy;
      if (!coord) continue;
      const emu_trace_res *nb = find(r, n, c - step);
      if (!nb) continue;
      overlap(&r[i], nb, r[i].thr < nb->thr ? r[i].thr : nb->thr, &both, &all);
    }
    out[EMU_TRACE_BINS + 1 + d] = all > 0 ? both / all : 0;
  }
  /* the rest of the grid: sectors another spread CTA (not a neighbour)
     also loads */
  size_t tot = 0;
  for (size_t i = 0; i < n; i++)
    if (r[i].role & EMU_TRACE_MAIN) tot += r[i].nlines;
  uint64_t *v = malloc((tot ? tot : 1) * 2 * sizeof *v);
  if (!v) return -1;
  size_t m = 0, idx = 0;
  const emu_trace_res **who = malloc((nmain ? nmain : 1) * sizeof *who);
  if (!who) {
    free(v);
    return -1;
  }
  for (size_t i = 0; i < n; i++) {
    if (!(r[i].role & EMU_TRACE_MAIN)) continue;
    who[idx] = &r[i];
    for (size_t j = 0; j < r[i].nlines; j++) {
      if (thr_all != UINT32_MAX && line_hash(r[i].lines[j] >> 4) > thr_all) continue;
      v[2 * m] = r[i].lines[j];
      v[2 * m + 1] = idx;
      m++;
    }
    idx++;
  }
  /* sort (line, mask, owner) pairs by line */
  uint64_t *pairs = v;
  {
    /* pack owner into the low bits below the mask: key = line << 16 |
       owner << 4 | mask; owners < 4096 */
    for (size_t i = 0; i < m; i++)
      pairs[i] = (pairs[2 * i] >> 4) << 16 | (pairs[2 * i + 1] & 0xfff) << 4 | (pairs[2 * i] & 15);
    qsort(pairs, m, sizeof *pairs, cmp_u64);
  }
  double both = 0, all = 0;
  for (size_t a = 0; a < m;) {
    size_t b = a;
    while (b < m && pairs[b] >> 16 == pairs[a] >> 16) b++;
    for (size_t i = a; i < b; i++) {
      unsigned mi = (unsigned)(pairs[i] & 15), others = 0;
      uint64_t ci = who[(pairs[i] >> 4) & 0xfff]->cta;
      for (size_t j = a; j < b; j++) {
        if (j == i) continue;
        uint64_t cj = who[(pairs[j] >> 4) & 0xfff]->cta, dc = ci > cj ? ci - cj : cj - ci;
        if (dc == 1 || dc == gx || dc == gxy) continue; /* a neighbour: share_x/y/z */
        others |= (unsigned)(pairs[j] & 15);
      }
      all += __builtin_popcount(mi);
      both += __builtin_popcount(mi & others);
    }
    a = b;
  }
  out[EMU_TRACE_BINS + 4] = all > 0 ? both / all : 0;
  free(v);
  free(who);
  return 0;
}
