/*
 * emu_race.c -- the race check (emu_launch_cfg.racecheck): shadow memory
 * that says which CTA, or which warp, read and wrote each byte, so that a
 * launch whose answer depends on the order its CTAs or warps run in is
 * named instead of giving a wrong answer without a word.
 *
 * Why.  The engine runs a CTA's warps one after another up to each
 * barrier and spreads CTAs over OpenMP threads; a GPU interleaves both.
 * A program with a data race gets one of the answers a GPU could give,
 * and often not the one the GPU usually gives: Parboil histo's CTAs write
 * overlapping ranges (its output changed with the thread count), Rodinia
 * heartwall's warp 1 reads what warp 0 had not yet written, because a
 * __syncthreads is missing (wrong on every run).  Both are the programs'
 * bugs; this check says so, and where.
 *
 * What is a race here.  Global memory: two different CTAs of one launch
 * access the same byte, at least one of them writes it, and both do so
 * with plain ld/st (a kernel boundary orders everything, so launches are
 * checked one at a time).  Shared memory: two different warps of one CTA
 * access the same byte between two barriers (bar.sync, bar.red,
 * barrier.sync; a barrier that releases starts a new interval for the
 * whole CTA), at least one writes.  Lanes of one warp never race with
 * each other (the warp runs in lockstep), nor does a CTA with itself in
 * global memory.  Not plain, so never racing: atomics (atom, red) and the
 * strong accesses (.volatile, .relaxed, .acquire, .release, .mmio), which
 * the PTX memory model does not count as data races among themselves
 * (emu_access.c leaves them out, and mixed pairs too: no false report).
 *
 * Byte, not word.  A store of one byte is its own memory location in
 * CUDA's model: Parboil histo's byte-packed counts and a byte array whose
 * neighbours other CTAs store are correct programs, and a word-granular
 * shadow would report them.  So both shadows decide by byte.
 *
 * Global shadow.  One 64-bit word per 4-byte word of data, in chunks of
 * 16,384 (64 KiB of data, 128 KiB of shadow) made when an access first
 * reaches them, per allocation; the allocation table does not change
 * during a launch.  A word in compact form:
 *
 *     63        38 37        12 11 10  9  8  7   4 3   0
 *     +-----------+-----------+--+--+--+--+------+-----+
 *     |    rid    |    wid    |  |E |R |M |  rm  | wm  |
 *     +-----------+-----------+--+--+--+--+------+-----+
 *
 *   wid, wm   the one CTA (id + 1; 0 none) that wrote the word so far and
 *             the bytes it wrote;
 *   rid, rm   the one CTA that read it and the bytes it read, or with M
 *             set (rid 0): every byte of rm was read by two CTAs or more;
 *   R         raced: counted, no longer tracked;
 *   E         split: bits 12..63 are the index of four per-byte words in
 *             the same form (masks of one bit) in a pool, made when the
 *             compact form cannot say which CTA touched which byte (two
 *             CTAs writing disjoint bytes, readers of different bytes).
 *             The split is rare (sub-word data shared between CTAs) and
 *             costs 32 bytes more.
 *
 * A new access by CTA c to bytes m decides from the word alone: a write
 * races when another CTA wrote or read one of them (M: some reader is not
 * c), a read when another CTA wrote one.  The word summarises exactly
 * what those questions need for every byte (the sets of writers and
 * readers per byte, cut off at "two or more"), and those sets do not
 * depend on the order the accesses came in: whichever access of a racing
 * pair comes second sees the first.  So the words that race, and their
 * count, are the same on any number of threads in any order; only which
 * pair is named first may differ.
 *
 * Threads.  CTAs on different threads update one word at the same time:
 * each update is a compare-and-swap of the whole word (a word's own
 * history is all that decides), retried when another thread got there
 * first; a word that needs no change (a CTA re-reading, the usual case)
 * is only loaded.  A split fills its four pool words before one
 * compare-and-swap publishes the index (release; loads of the word
 * acquire), and they are updated by compare-and-swap each.  Marking a word raced is
 * part of the swap that finds the race, so exactly one access counts it.
 * A scheme without atomics -- each CTA's read and write ranges, intersected
 * after the launch -- was the other candidate: exact too, but its memory
 * grows with the accesses rather than the data (a tiled GEMM's CTAs read
 * the same panels many times over: 4096 CTAs x 1040 ranges at n = 1024),
 * and it needs a sort of all of them at the end.
 *
 * Limits.  CTA numbers are 26 bits (EMU_RACE_IDS CTAs run per launch);
 * the shadow and the pool together take at most EMU_RACE_MAX_BYTES, and
 * past it accesses to words not yet shadowed (or needing a split) are not
 * checked, which emu_race_incomplete reports.  No false report either way.
 *
 * Shared shadow.  One worker runs a CTA at a time, so no atomics: one
 * 64-bit entry per byte of the CTA's window,
 *
 *     63         45 44 43    38 37    32 31                    0
 *     +------------+--+--------+--------+-----------------------+
 *     |    insn    |R |  rwarp |  wwarp |        stamp          |
 *     +------------+--+--------+--------+-----------------------+
 *
 * stamp the barrier interval the entry belongs to (an entry of an older
 * one reads as empty: no clearing per barrier or per CTA; the stamp grows
 * across CTAs, and the shadow is cleared when it wraps), wwarp the warp
 * (+ 1) that wrote the byte in the interval, rwarp the one that read it
 * (63: several), R raced, insn the instruction of the write (else of the
 * first read), for the message.  A window of W bytes takes 8 W (1.8 MiB
 * at the 227 KiB most a CTA may have).  An access decides a word at once
 * when its four entries agree (they do unless its bytes were used apart),
 * and emu_access.c skips a lane at the bytes of the lane before it (a broadcast).
 *
 * Cost (kcast run of the suite's programs at their second size, best of
 * two, emulation seconds): 1.7x unchecked in all, median 1.8x a program,
 * 3.8x at most (triad: a compare-and-swap per word for three words a
 * thread of ten instructions).
 */
#include "emulator/emu_race.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ global -- */

#define CH_SHIFT 16                     /* data bytes per shadow chunk: 64 KiB */
#define CH_WORDS (1u << (CH_SHIFT - 2)) /* shadow words per chunk */
#define POOL_SHIFT 16
#define POOL_ENTRIES (1u << POOL_SHIFT) /* per-byte words per pool chunk */
#define POOL_CHUNKS 1024u               /* at most 64M per-byte words */

#define WM(s) ((unsigned)(s)&15u)
#define RM(s) ((unsigned)((s) >> 4) & 15u)
#define F_MANY (1ull << 8)
#define F_RACED (1ull << 9)
#define F_SPLIT (1ull << 10)
#define ID_MASK ((1ull << 26) - 1)
#define WID(s) ((uint32_t)(((s) >> 12) & ID_MASK))
#define RID(s) ((uint32_t)(((s) >> 38) & ID_MASK))
#define SPLIT_IDX(s) ((s) >> 12)
#define SPLIT_NONE ((1ull << 52) - 1) /* a split that found no pool room: untracked */

struct emu_race {
  size_t n;              /* allocations */
  uint64_t *size;        /* their sizes */
  uint64_t ***g;         /* per allocation: its chunk pointers, NULL until the
                            first access (installed by compare-and-swap) */
  uint64_t *pool[POOL_CHUNKS]; /* chunks of per-byte words, made on first use */
  uint64_t pool_next;    /* next free per-byte word (atomic; groups of 4) */
  uint64_t used;         /* bytes of shadow and pool made (atomic) */
  int incomplete;        /* an access went unchecked: memory limit (atomic) */
};

emu_race *emu_race_new(size_t nalloc, const uint64_t *sizes) {
  emu_race *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  r->n = nalloc;
  r->size = malloc((nalloc ? nalloc : 1) * sizeof *r->size);
  r->g = calloc(nalloc ? nalloc : 1, sizeof *r->g);
  if (!r->size || !r->g) {
    emu_race_free(r);
    return NULL;
  }
  if (nalloc) memcpy(r->size, sizes, nalloc * sizeof *sizes);
  return r;
}

void emu_race_free(emu_race *r) {
  if (!r) return;
  for (size_t i = 0; r->g && i < r->n; i++) {
    if (!r->g[i]) continue;
    for (uint64_t c = 0; c <= r->size[i] >> CH_SHIFT; c++) free(r->g[i][c]);
    free(r->g[i]);
  }
  for (unsigned c = 0; c < POOL_CHUNKS; c++) free(r->pool[c]);
  free(r->g);
  free(r->size);
  free(r);
}

int emu_race_incomplete(const emu_race *r) {
  return __atomic_load_n(&r->incomplete, __ATOMIC_RELAXED);
}

/* Zeroed memory of n bytes within the budget, else NULL (and the launch's
   check is incomplete). */
static void *budget_calloc(emu_race *r, size_t n) {
  if (__atomic_add_fetch(&r->used, n, __ATOMIC_RELAXED) > EMU_RACE_MAX_BYTES) {
    __atomic_sub_fetch(&r->used, n, __ATOMIC_RELAXED);
    __atomic_store_n(&r->incomplete, 1, __ATOMIC_RELAXED);
    return NULL;
  }
  void *p = calloc(1, n);
  if (!p) {
    __atomic_sub_fetch(&r->used, n, __ATOMIC_RELAXED);
    __atomic_store_n(&r->incomplete, 1, __ATOMIC_RELAXED);
  }
  return p;
}

/* Install *slot = fresh unless another thread did; the winner's. */
static void *install(void **slot, void *fresh, emu_race *r, size_t n) {
  void *old = NULL;
  if (__atomic_compare_exchange_n(slot, &old, fresh, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
    return fresh;
  free(fresh);
  __atomic_sub_fetch(&r->used, n, __ATOMIC_RELAXED);
  return old;
}

/* Shadow words of chunk c of allocation gi, made on first use; NULL when
   the budget is spent. */
static uint64_t *chunk(emu_race *r, long gi, uint64_t c) {
  uint64_t **arr = __atomic_load_n(&r->g[gi], __ATOMIC_ACQUIRE);
  if (!arr) {
    size_t n = ((r->size[gi] >> CH_SHIFT) + 1) * sizeof *arr;
    uint64_t **na = budget_calloc(r, n);
    if (!na) return NULL;
    arr = install((void **)&r->g[gi], na, r, n);
  }
  uint64_t *p = __atomic_load_n(&arr[c], __ATOMIC_ACQUIRE);
  if (!p) {
    size_t n = CH_WORDS * sizeof *p;
    uint64_t *np = budget_calloc(r, n);
    if (!np) return NULL;
    p = install((void **)&arr[c], np, r, n);
  }
  return p;
}

/* Four per-byte words (their index), or SPLIT_NONE when out of room. */
static uint64_t pool_take(emu_race *r) {
  uint64_t k = __atomic_fetch_add(&r->pool_next, 4, __ATOMIC_RELAXED);
  if (k + 4 > (uint64_t)POOL_CHUNKS * POOL_ENTRIES) {
    __atomic_store_n(&r->incomplete, 1, __ATOMIC_RELAXED);
    return SPLIT_NONE;
  }
  uint64_t **slot = &r->pool[k >> POOL_SHIFT];
  if (!__atomic_load_n(slot, __ATOMIC_ACQUIRE)) {
    size_t n = POOL_ENTRIES * sizeof(uint64_t);
    uint64_t *np = budget_calloc(r, n);
    if (!np) return SPLIT_NONE;
    install((void **)slot, np, r, n);
  }
  return k;
}

static uint64_t *pool_at(emu_race *r, uint64_t k) {
  return __atomic_load_n(&r->pool[k >> POOL_SHIFT], __ATOMIC_ACQUIRE) + (k & (POOL_ENTRIES - 1));
}

/* What an access does to a word. */
enum { ST_SAME, ST_NEW, ST_RACE, ST_SPLIT };

/*
 * CTA c's access to bytes m of a compact word s: ST_SAME (nothing to
 * record), ST_NEW (*ns to store), ST_RACE (*h: kind, other; *rm: the
 * racing bytes), ST_SPLIT (the compact form cannot hold the result).
 */
static int step(uint64_t s, uint32_t c, unsigned m, int write, uint64_t *ns, emu_race_hit *h,
                unsigned *racing) {
  uint32_t wid = WID(s), rid = RID(s);
  unsigned wm = WM(s), rm = RM(s);
  int many = (s & F_MANY) != 0;
  if (wid && wid != c && (wm & m)) {
    h->kind = write ? EMU_RACE_WW : EMU_RACE_RW;
    h->other = wid;
    *racing = wm & m;
    return ST_RACE;
  }
  if (write) {
    if ((rm & m) && (many || rid != c)) {
      h->kind = EMU_RACE_WR;
      h->other = many ? EMU_RACE_MANY : rid;
      *racing = rm & m;
      return ST_RACE;
    }
    if (wid && wid != c) return ST_SPLIT; /* a second writer, of other bytes */
    if (wid == c && (wm | m) == wm) return ST_SAME;
    *ns = (s & ~(15ull | (ID_MASK << 12))) | (uint64_t)c << 12 | wm | m;
    return ST_NEW;
  }
  if (!rm) { /* the first reader */
    *ns = s | (uint64_t)m << 4 | (uint64_t)c << 38;
    return ST_NEW;
  }
  if (many) return (m & ~rm) ? ST_SPLIT : ST_SAME;
  if (rid == c) {
    if ((rm | m) == rm) return ST_SAME;
    *ns = s | (uint64_t)m << 4;
    return ST_NEW;
  }
  if (m == rm) { /* a second reader of the same bytes */
    *ns = (s & ~(ID_MASK << 38)) | F_MANY;
    return ST_NEW;
  }
  return ST_SPLIT;
}

/* The per-byte word of byte b (0..3) of compact word s. */
static uint64_t byte_of(uint64_t s, unsigned b) {
  uint64_t e = 0;
  if (WM(s) >> b & 1) e |= (uint64_t)WID(s) << 12 | 1u;
  if (RM(s) >> b & 1) e |= ((s & F_MANY) ? F_MANY : (uint64_t)RID(s) << 38) | 1u << 4;
  return e;
}

/*
 * CTA c's access to bytes m of the word at p (of data word `word` of the
 * allocation): 1 when it found the word racing (and counted it: *h set),
 * else 0.
 */
static unsigned word_check(emu_race *r, uint64_t *p, uint64_t word, unsigned m, uint32_t c,
                           int write, emu_race_hit *h) {
  uint64_t s = __atomic_load_n(p, __ATOMIC_ACQUIRE), ns = 0, split = SPLIT_NONE;
  unsigned racing = 0;
  emu_race_hit t;
  for (;;) {
    if (s & F_RACED) return 0;
    if (s & F_SPLIT) break;
    int k = step(s, c, m, write, &ns, &t, &racing);
    if (k == ST_SAME) return 0;
    if (k == ST_NEW) {
      if (__atomic_compare_exchange_n(p, &s, ns, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return 0;
      continue;
    }
    if (k == ST_RACE) {
      if (!__atomic_compare_exchange_n(p, &s, s | F_RACED, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        continue;
      *h = t;
      h->off = word * 4 + (unsigned)__builtin_ctz(racing);
      h->oinsn = 0;
      return 1;
    }
    /* ST_SPLIT: four per-byte words from s, then published */
    if (split == SPLIT_NONE) split = pool_take(r);
    if (split == SPLIT_NONE) {
      /* no room: the word is no longer checked (the launch says so) */
      if (__atomic_compare_exchange_n(p, &s, F_SPLIT | SPLIT_NONE << 12, 0, __ATOMIC_ACQ_REL,
                                      __ATOMIC_ACQUIRE))
        return 0;
      continue;
    }
    uint64_t *q = pool_at(r, split);
    for (unsigned b = 0; b < 4; b++) __atomic_store_n(&q[b], byte_of(s, b), __ATOMIC_RELAXED);
    if (__atomic_compare_exchange_n(p, &s, F_SPLIT | split << 12, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE))
      s = F_SPLIT | split << 12;
    /* lost: another access changed s (the pool words are redone from it) */
  }
  uint64_t idx = SPLIT_IDX(s);
  if (idx == SPLIT_NONE) return 0;
  uint64_t *q = pool_at(r, idx);
  for (unsigned b = 0; b < 4; b++) {
    if (!(m >> b & 1)) continue;
    uint64_t e = __atomic_load_n(&q[b], __ATOMIC_RELAXED);
    for (;;) {
      int k = step(e, c, 1, write, &ns, &t, &racing);
      if (k == ST_NEW) {
        if (!__atomic_compare_exchange_n(&q[b], &e, ns, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
          continue;
        break;
      }
      if (k == ST_RACE) {
        /* the word is raced: its first finder counts it */
        uint64_t old = __atomic_fetch_or(p, F_RACED, __ATOMIC_RELAXED);
        if (old & F_RACED) return 0;
        *h = t;
        h->off = word * 4 + b;
        h->oinsn = 0;
        return 1;
      }
      break; /* ST_SAME; ST_SPLIT cannot happen with one byte */
    }
  }
  return 0;
}

unsigned emu_race_global(emu_race *r, emu_race_cache *c, long gi, uint64_t off, uint64_t len,
                         uint32_t id, int write, emu_race_hit *hit) {
  if (!len || gi < 0 || (size_t)gi >= r->n) return 0;
  unsigned found = 0;
  uint64_t end = off + len;
  for (uint64_t w = off >> 2; w <= (end - 1) >> 2; w++) {
    uint64_t ch = w >> (CH_SHIFT - 2);
    uint64_t *p;
    if (c->gi == gi && c->chunk == ch && c->p) {
      p = c->p;
    } else {
      p = chunk(r, gi, ch);
      if (!p) continue; /* over the budget: unchecked (incomplete) */
      c->gi = gi;
      c->chunk = ch;
      c->p = p;
    }
    uint64_t b0 = w * 4 < off ? off - w * 4 : 0, b1 = w * 4 + 4 > end ? end - w * 4 : 4;
    unsigned m = (unsigned)(((1u << b1) - 1) & ~((1u << b0) - 1));
    emu_race_hit t;
    if (word_check(r, &p[w & (CH_WORDS - 1)], w, m, id, write, &t) && !found++) *hit = t;
  }
  return found;
}

/* ------------------------------------------------------------ shared -- */

#define SH_W(e) ((uint32_t)((e) >> 32) & 63u)
#define SH_R(e) ((uint32_t)((e) >> 38) & 63u)
#define SH_MANY 63u
#define SH_RACED (1ull << 44)
#define SH_INSN(e) ((uint32_t)((e) >> 45))
#define SH_INSN_MAX ((1u << 19) - 1)

int emu_race_sh_init(emu_race_sh *s, uint64_t size) {
  memset(s, 0, sizeof *s);
  s->stamp = 1;
  if (!size) return 0;
  if (!(s->e = calloc(size, sizeof *s->e))) return -1;
  s->size = size;
  return 0;
}

void emu_race_sh_free(emu_race_sh *s) {
  free(s->e);
  memset(s, 0, sizeof *s);
}

void emu_race_sh_next(emu_race_sh *s) {
  if (++s->stamp == 0) { /* wrapped after 2^32 intervals: old stamps would match */
    if (s->e) memset(s->e, 0, s->size * sizeof *s->e);
    s->stamp = 1;
  }
}

/*
 * Warp c's (w + 1) access to a byte whose entry is e (of this interval,
 * st; in the instruction id): 0 and the new entry in *ne, or the race's
 * kind (EMU_RACE_*) with the other warp and its instruction in *h.
 */
static int sh_step(uint64_t e, uint32_t c, uint64_t in, int write, uint64_t *ne,
                   emu_race_hit *h) {
  uint32_t ew = SH_W(e), er = SH_R(e);
  if (ew && ew != c) {
    h->kind = write ? EMU_RACE_WW : EMU_RACE_RW;
    h->other = ew;
    h->oinsn = SH_INSN(e);
    return h->kind;
  }
  if (write && er && er != c) {
    h->kind = EMU_RACE_WR;
    h->other = er == SH_MANY ? EMU_RACE_MANY : er;
    h->oinsn = ew ? 0 : SH_INSN(e); /* the insn is a reader's only while none wrote */
    return h->kind;
  }
  if (write) {
    *ne = (e & ~(63ull << 32) & ~((uint64_t)SH_INSN_MAX << 45)) | (uint64_t)c << 32 | in << 45;
  } else {
    uint32_t nr = er == 0 || er == c ? c : SH_MANY;
    if (!ew && !er) e |= in << 45;
    *ne = (e & ~(63ull << 38)) | (uint64_t)nr << 38;
  }
  return 0;
}

/* Mark the word of byte b raced for this interval (counted once). */
static void sh_raced(emu_race_sh *s, uint64_t b) {
  uint64_t q0 = b & ~3ull;
  for (uint64_t q = q0; q < q0 + 4 && q < s->size; q++) {
    uint64_t eq = s->e[q];
    if ((uint32_t)eq != s->stamp) eq = s->stamp;
    s->e[q] = eq | SH_RACED;
  }
}

unsigned emu_race_sh_check(emu_race_sh *s, uint64_t off, uint64_t len, uint32_t w, uint32_t insn,
                           int write, emu_race_hit *hit) {
  uint32_t c = w + 1, st = s->stamp;
  uint64_t fresh = st, in = insn <= SH_INSN_MAX ? insn : 0, end = off + len, ne = 0;
  unsigned found = 0;
  emu_race_hit h;
  if (off > s->size || len > s->size - off) return 0;
  for (uint64_t b = off; b < end;) {
    uint64_t *q = &s->e[b];
    /* a whole word whose four entries agree (the usual case): decided once */
    unsigned span = !(b & 3) && end - b >= 4 && q[0] == q[1] && q[0] == q[2] && q[0] == q[3] ? 4
                                                                                           : 1;
    uint64_t e = q[0];
    if ((uint32_t)e != st) e = fresh;
    if (!(e & SH_RACED)) {
      if (sh_step(e, c, in, write, &ne, &h)) {
        sh_raced(s, b);
        if (!found++) {
          *hit = h;
          hit->off = b;
        }
      } else {
        for (unsigned k = 0; k < span; k++) q[k] = ne;
      }
    }
    b += span;
  }
  return found;
}
