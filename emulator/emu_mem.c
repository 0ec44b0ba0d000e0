/*
 * emu_mem.c -- the emulated device's memory: the allocation table (global
 * allocations and external mappings in one emulated 64-bit space), copies,
 * fills and host pointers.  emu_access.c looks addresses up here.
 *
 * The address windows are drawn in emu.c's header; emu_int.h names them.
 * Global allocations are 256-aligned, never reused, with at least 256
 * unmapped bytes between two (an overrun by a few bytes is not silently
 * another allocation's data).  Global allocations and external mappings
 * share one table sorted by base.
 */
#include "emulator/emu.h"
#include "emulator/emu_int.h"

#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int emu_errf(char *err, size_t cap, const char *fmt, ...) {
  if (err && cap) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
  }
  return -1;
}


static void free_touch(galloc *g);

emu_device *emu_device_new(void) {
  emu_device *d = calloc(1, sizeof *d);
  if (d) d->next = EMU_GLOBAL_BASE;
  return d;
}

/* Index of the allocation containing addr, or -1. */
long emu_galloc_find(const emu_device *d, uint64_t addr) {
  size_t lo = 0, hi = d->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (d->a[mid].base <= addr) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0) return -1;
  const galloc *g = &d->a[lo - 1];
  return addr - g->base < g->size ? (long)(lo - 1) : -1;
}

/* Nearest allocation at or below addr (for messages), or -1. */
long emu_galloc_below(const emu_device *d, uint64_t addr) {
  size_t lo = 0, hi = d->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (d->a[mid].base <= addr) lo = mid + 1;
    else hi = mid;
  }
  return (long)lo - 1;
}

static void free_lazy(struct emu_lazy *z) {
  if (!z) return;
  free(z->ctx);
  free(z->state);
  free(z);
}

/* emu_malloc with the allocation's lazy fill z (NULL: none); z is the
   allocation's on success, freed on failure. */
static int alloc_global(emu_device *d, size_t bytes, struct emu_lazy *z, uint64_t *addr,
                        char *err, size_t cap) {
  if (!d || !addr) {
    free_lazy(z);
    return emu_errf(err, cap, "emu_malloc: null argument");
  }
  int rc = -1;
  uint8_t *h = NULL;
  uint64_t size = bytes ? bytes : 1;
  if (size > (1ull << 40)) {
    emu_errf(err, cap, "emu_malloc: %zu bytes is too large", bytes);
    goto fail;
  }
  if (d->n == d->cap) {
    size_t nc = d->cap ? d->cap * 2 : 16;
    galloc *na = realloc(d->a, nc * sizeof *na);
    if (!na) {
      emu_errf(err, cap, "emu_malloc: out of memory");
      goto fail;
    }
    d->a = na;
    d->cap = nc;
  }
  if (d->next + size > EMU_SHARED_WIN) {
    emu_errf(err, cap, "emu_malloc: the emulated global space is exhausted");
    goto fail;
  }
  if (z && !(z->state = calloc((size + EMU_FILL_PAGE - 1) / EMU_FILL_PAGE, 1))) {
    emu_errf(err, cap, "emu_malloc: cannot allocate %zu bytes", bytes);
    goto fail;
  }
  /* calloc: the C library takes large blocks from fresh (zero) pages */
  h = calloc(1, size);
  if (!h) {
    emu_errf(err, cap, "emu_malloc: cannot allocate %zu bytes", bytes);
    goto fail;
  }
  /* bases only grow and stay below EMU_SHARED_WIN < EMU_EXT_BASE, so global allocations sort
     before every external mapping: insert after the last global one */
  size_t at = (size_t)(emu_galloc_below(d, d->next) + 1);
  memmove(&d->a[at + 1], &d->a[at], (d->n - at) * sizeof *d->a);
  d->n++;
  galloc *g = &d->a[at];
  g->external = 0;
  g->base = d->next;
  g->size = size;
  g->host = h;
  g->lazy = z;
  g->touch = NULL;
  d->next = emu_align_up(g->base + size + EMU_GLOBAL_GAP, 256);
  *addr = g->base;
  rc = 0;
  z = NULL;
fail:
  free_lazy(z);
  return rc;
}

int emu_malloc(emu_device *d, size_t bytes, uint64_t *addr, char *err, size_t cap) {
  return alloc_global(d, bytes, NULL, addr, err, cap);
}

int emu_malloc_lazy(emu_device *d, size_t bytes, emu_fill_fn fill, const void *ctx,
                    size_t ctx_size, uint64_t *addr, char *err, size_t cap) {
  if (!fill || (ctx_size && !ctx)) return emu_errf(err, cap, "emu_malloc_lazy: null argument");
  struct emu_lazy *z = calloc(1, sizeof *z);
  if (!z || !(z->ctx = malloc(ctx_size ? ctx_size : 1))) {
    free(z);
    return emu_errf(err, cap, "emu_malloc_lazy: out of memory");
  }
  if (ctx_size) memcpy(z->ctx, ctx, ctx_size);
  z->fill = fill;
  return alloc_global(d, bytes, z, addr, err, cap);
}

/* Output k (0, 1, ...) of the splitmix64 sequence started at seed: the
   sequence is a counter (seed + (k + 1) * gamma) through a mixer, so any
   element can be had without its predecessors. */
static uint64_t splitmix64_at(uint64_t seed, uint64_t k) {
  uint64_t z = seed + (k + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void emu_fill_pattern(const void *ctx, uint64_t off, uint8_t *b, size_t n) {
  const emu_pattern *a = ctx;
  if (a->kind == EMU_PAT_RAND) {
    /* word k of these bytes is word off / 8 + k of the whole fill when off
       is a multiple of 8 (emu_malloc_lazy's pages are) */
    for (size_t i = 0; i < n; i += 8) {
      uint64_t r = splitmix64_at(a->seed, (off + i) / 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
      if (n - i >= 8) {
        memcpy(b + i, &r, 8);
        continue;
      }
#endif
      for (size_t k = 0; k < 8 && i + k < n; k++) b[i + k] = (uint8_t)(r >> (8 * k));
    }
    return;
  }
  for (size_t i = 0; i < n; i += 4) {
    uint64_t k = (off + i) / 4;
    uint32_t w = 0;
    float f;
    switch (a->kind) {
      case EMU_PAT_SEQ: w = (uint32_t)k; break;
      case EMU_PAT_SEQF: f = (float)k; memcpy(&w, &f, 4); break;
      case EMU_PAT_RANDF:
        f = (float)(splitmix64_at(a->seed, k) >> 40) * (1.0f / 16777216.0f);
        memcpy(&w, &f, 4);
        break;
      default: break;
    }
    for (size_t q = 0; q < 4 && i + q < n; q++) b[i + q] = (uint8_t)(w >> (8 * q));
  }
}

void emu_lazy_fill_range(const galloc *g, uint64_t off, uint64_t len) {
  struct emu_lazy *z = g->lazy;
  for (uint64_t pg = off / EMU_FILL_PAGE; pg <= (off + len - 1) / EMU_FILL_PAGE; pg++) {
    uint8_t s = __atomic_load_n(&z->state[pg], __ATOMIC_ACQUIRE);
    if (s == 2) continue;
    s = 0;
    if (__atomic_compare_exchange_n(&z->state[pg], &s, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
      uint64_t at = pg * EMU_FILL_PAGE, n = g->size - at < EMU_FILL_PAGE ? g->size - at : EMU_FILL_PAGE;
      z->fill(z->ctx, at, g->host + at, (size_t)n);
      __atomic_store_n(&z->state[pg], 2, __ATOMIC_RELEASE);
      continue;
    }
    /* another thread of the launch is filling it: a page's fill is short */
    while (__atomic_load_n(&z->state[pg], __ATOMIC_ACQUIRE) != 2) sched_yield();
  }
}

long emu_freed_near(const emu_device *d, uint64_t addr, uint64_t slack, uint64_t *dist) {
  size_t lo = 0, hi = d->nfreed;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (d->freed[mid].base <= addr) lo = mid + 1;
    else hi = mid;
  }
  long best = -1;
  uint64_t bd = UINT64_MAX;
  if (lo > 0) { /* the range at or below addr */
    const struct emu_freed *f = &d->freed[lo - 1];
    uint64_t dd = addr - f->base < f->size ? 0 : addr - (f->base + f->size) + 1;
    if (dd <= slack) best = (long)lo - 1, bd = dd;
  }
  if (lo < d->nfreed && d->freed[lo].base - addr <= slack && d->freed[lo].base - addr < bd)
    best = (long)lo, bd = d->freed[lo].base - addr;
  if (dist) *dist = bd;
  return best;
}

long emu_freed_find(const emu_device *d, uint64_t addr) {
  uint64_t dd;
  long i = emu_freed_near(d, addr, 0, &dd);
  return i >= 0 && dd == 0 ? i : -1;
}

/* Remember [base, base+size) as freed; -1 on ENOMEM. */
static int add_freed(emu_device *d, uint64_t base, uint64_t size) {
  if (d->nfreed == d->capfreed) {
    size_t nc = d->capfreed ? 2 * d->capfreed : 16;
    struct emu_freed *nf = realloc(d->freed, nc * sizeof *nf);
    if (!nf) return -1;
    d->freed = nf;
    d->capfreed = nc;
  }
  size_t at = d->nfreed;
  while (at > 0 && d->freed[at - 1].base > base) at--;
  memmove(&d->freed[at + 1], &d->freed[at], (d->nfreed - at) * sizeof *d->freed);
  d->freed[at].base = base;
  d->freed[at].size = size;
  d->nfreed++;
  return 0;
}

int emu_free(emu_device *d, uint64_t addr, char *err, size_t cap) {
  if (!d) return emu_errf(err, cap, "emu_free: null device");
  if (!addr) return 0;
  long i = emu_galloc_find(d, addr);
  if (i < 0 || d->a[i].base != addr) {
    long f = emu_freed_find(d, addr);
    if (f >= 0 && d->freed[f].base == addr)
      return emu_errf(err, cap, "emu_free: 0x%llx was freed already", (unsigned long long)addr);
    return emu_errf(err, cap, "emu_free: 0x%llx is not the base of an allocation",
                (unsigned long long)addr);
  }
  if (add_freed(d, d->a[i].base, d->a[i].size) < 0)
    return emu_errf(err, cap, "emu_free: out of memory");
  if (!d->a[i].external) free(d->a[i].host);
  free_lazy(d->a[i].lazy);
  free_touch(&d->a[i]);
  memmove(&d->a[i], &d->a[i + 1], (d->n - (size_t)i - 1) * sizeof *d->a);
  d->n--;
  return 0;
}

int emu_map_external(emu_device *d, uint64_t addr, void *host, size_t n, char *err,
                     size_t cap) {
  if (!d || !host || !n) return emu_errf(err, cap, "emu_map_external: null argument or size 0");
  if (addr % 256)
    return emu_errf(err, cap, "emu_map_external: 0x%llx is not 256-byte aligned",
                (unsigned long long)addr);
  /* the external window and host addresses above it, or below the global
     allocations (a program's heap without PIE); never the engine's own
     ranges in between, nor past user space */
  if (n > EMU_HOST_END || addr > EMU_HOST_END - n ||
      (addr < EMU_EXT_BASE && addr + n > EMU_GLOBAL_BASE))
    return emu_errf(err, cap,
                "emu_map_external: [0x%llx, +%zu) overlaps the engine's address ranges "
                "[0x%llx, 0x%llx) or lies past 0x%llx", (unsigned long long)addr, n,
                (unsigned long long)EMU_GLOBAL_BASE, (unsigned long long)EMU_EXT_BASE,
                (unsigned long long)EMU_HOST_END);
  long b = emu_galloc_below(d, addr + n - 1); /* last allocation starting in or before the range */
  if (b >= 0 && d->a[b].base + d->a[b].size > addr)
    return emu_errf(err, cap,
                "emu_map_external: [0x%llx, +%zu) overlaps the allocation [0x%llx, +%llu)",
                (unsigned long long)addr, n, (unsigned long long)d->a[b].base,
                (unsigned long long)d->a[b].size);
  if (d->n == d->cap) {
    size_t nc = d->cap ? d->cap * 2 : 16;
    galloc *na = realloc(d->a, nc * sizeof *na);
    if (!na) return emu_errf(err, cap, "emu_map_external: out of memory");
    d->a = na;
    d->cap = nc;
  }
  size_t at = (size_t)(b + 1);
  memmove(&d->a[at + 1], &d->a[at], (d->n - at) * sizeof *d->a);
  d->n++;
  d->a[at] = (galloc){.base = addr, .size = n, .host = host, .external = 1, .lazy = NULL,
                     .touch = NULL};
  return 0;
}

int emu_is_device_addr(const emu_device *d, uint64_t addr) {
  if (!d) return 0;
  return (addr >= EMU_GLOBAL_BASE && addr < EMU_SHARED_WIN) ||
         addr - EMU_EXT_BASE < EMU_EXT_SIZE || emu_galloc_find(d, addr) >= 0;
}

void *emu_host_ptr(emu_device *d, uint64_t addr, size_t n) {
  if (!d) return NULL;
  long i = emu_galloc_find(d, addr);
  if (i < 0) return NULL;
  const galloc *g = &d->a[i];
  if (n > g->size - (addr - g->base)) return NULL;
  emu_lazy_fill(g, addr - g->base, n ? n : 1);
  return g->host + (addr - g->base);
}

/* ----------------------------------------------------------- footprint -- */

/* Chunks kept zeroed between launches: allocating and freeing one per
   launch put it at the top of the heap, which the C library then trimmed
   and page-faulted back in every launch (a fifth of a small launch's
   time). */
#define SPARE_CHUNKS 256

/* Release g's bitmap; its chunks go to d's spares (zeroed) when d is
   given and has room, else are freed. */
static void drop_touch(emu_device *d, galloc *g) {
  if (!g->touch) return;
  for (uint64_t c = 0; c <= g->size >> EMU_TCHUNK_SHIFT; c++) {
    uint64_t *p = g->touch[c];
    if (!p) continue;
    if (d && d->nspare < SPARE_CHUNKS) {
      if (d->nspare == d->capspare) {
        size_t nc = d->capspare ? 2 * d->capspare : 16;
        uint64_t **ns = realloc(d->spare, nc * sizeof *ns);
        if (ns) d->spare = ns, d->capspare = nc;
      }
      if (d->nspare < d->capspare) {
        memset(p, 0, EMU_TCHUNK_WORDS * sizeof *p);
        d->spare[d->nspare++] = p;
        continue;
      }
    }
    free(p);
  }
  free(g->touch);
  g->touch = NULL;
}

static void free_touch(galloc *g) { drop_touch(NULL, g); }

void emu_touch_clear(emu_device *d) {
  for (size_t i = 0; i < d->n; i++) drop_touch(d, &d->a[i]);
}

/* A zeroed chunk: a spare when there is one (taken atomically: several
   threads of a launch may ask at once), else a new one. */
static uint64_t *new_chunk(emu_device *d) {
  size_t n = __atomic_load_n(&d->nspare, __ATOMIC_ACQUIRE);
  while (n > 0) {
    if (__atomic_compare_exchange_n(&d->nspare, &n, n - 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
      return d->spare[n - 1];
  }
  return calloc(EMU_TCHUNK_WORDS, sizeof(uint64_t));
}

/* Words of chunk c of g's bitmap, installed on first use; NULL on ENOMEM. */
static uint64_t *tchunk(emu_device *d, galloc *g, uint64_t c) {
  uint64_t **arr = __atomic_load_n(&g->touch, __ATOMIC_ACQUIRE);
  if (!arr) {
    uint64_t **na = calloc((g->size >> EMU_TCHUNK_SHIFT) + 1, sizeof *na), **old = NULL;
    if (!na) return NULL;
    if (__atomic_compare_exchange_n(&g->touch, &old, na, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
      arr = na;
    } else {
      free(na);
      arr = old;
    }
  }
  uint64_t *p = __atomic_load_n(&arr[c], __ATOMIC_ACQUIRE);
  if (!p) {
    uint64_t *np = new_chunk(d), *old = NULL;
    if (!np) return NULL;
    if (__atomic_compare_exchange_n(&arr[c], &old, np, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
      p = np;
    } else {
      free(np);
      p = old;
    }
  }
  return p;
}

int emu_touch(emu_device *d, long gi, uint64_t off, uint64_t len, emu_tcache *tc) {
  galloc *g = &d->a[gi];
  const uint64_t cmask = (1ull << EMU_TCHUNK_SHIFT) - 1;
  uint64_t end = off + len;
  if (len && len <= 64 && tc->gi == gi && tc->chunk == off >> EMU_TCHUNK_SHIFT &&
      (off & ~63ull) == ((end - 1) & ~63ull)) {
    /* one word of the cached chunk (a texture element, a small access):
       the loop below without its bounds */
    uint64_t *w = &tc->p[(off & cmask) >> 6];
    uint64_t mask = (len == 64 ? ~0ull : (1ull << len) - 1) << (off & 63);
    if ((__atomic_load_n(w, __ATOMIC_RELAXED) & mask) != mask)
      __atomic_fetch_or(w, mask, __ATOMIC_RELAXED);
    return 0;
  }
  while (off < end) {
    uint64_t c = off >> EMU_TCHUNK_SHIFT, *p;
    if (tc->gi == gi && tc->chunk == c) {
      p = tc->p;
    } else {
      if (!(p = tchunk(d, g, c))) return -1;
      tc->gi = gi;
      tc->chunk = c;
      tc->p = p;
    }
    uint64_t cend = (c + 1) << EMU_TCHUNK_SHIFT;
    if (cend > end) cend = end;
    /* bits [b, e) of the chunk, word by word */
    uint64_t b = off & cmask, e = b + (cend - off);
    for (uint64_t wi = b >> 6; wi <= (e - 1) >> 6; wi++) {
      unsigned lo = wi == b >> 6 ? (unsigned)(b & 63) : 0;
      unsigned hi = wi == (e - 1) >> 6 ? (unsigned)((e - 1) & 63) + 1 : 64;
      uint64_t mask = hi - lo == 64 ? ~0ull : ((1ull << (hi - lo)) - 1) << lo;
      if ((__atomic_load_n(&p[wi], __ATOMIC_RELAXED) & mask) != mask)
        __atomic_fetch_or(&p[wi], mask, __ATOMIC_RELAXED);
    }
    off = cend;
  }
  return 0;
}

int emu_touch_map(emu_device *d, long gi, uint64_t off, const uint64_t *map, unsigned nw,
                  emu_tcache *tc) {
  galloc *g = &d->a[gi];
  const uint64_t cmask = (1ull << EMU_TCHUNK_SHIFT) - 1;
  for (unsigned i = 0; i < nw; i++, off += 64) {
    uint64_t mask = map[i];
    if (!mask) continue;
    uint64_t c = off >> EMU_TCHUNK_SHIFT;
    if (tc->gi != gi || tc->chunk != c) {
      uint64_t *p = tchunk(d, g, c);
      if (!p) return -1;
      tc->gi = gi;
      tc->chunk = c;
      tc->p = p;
    }
    uint64_t *w = &tc->p[(off & cmask) >> 6];
    if ((__atomic_load_n(w, __ATOMIC_RELAXED) & mask) != mask)
      __atomic_fetch_or(w, mask, __ATOMIC_RELAXED);
  }
  return 0;
}

void emu_foot_scan(const galloc *g, emu_foot *f) {
  memset(f->hist, 0, sizeof f->hist);
  f->bytes = f->sectors = 0;
  f->lo = UINT64_MAX;
  f->hi = 0;
  if (!g->touch) return;
  for (uint64_t c = 0; c <= g->size >> EMU_TCHUNK_SHIFT; c++) {
    const uint64_t *p = g->touch[c];
    if (!p) continue;
    for (uint64_t w8 = 0; w8 < EMU_TCHUNK_WORDS; w8 += 8) {
      /* eight words (512 bytes) at a time past untouched data: a small
         launch's chunks are mostly zero, and the word-by-word scan was a
         tenth of its cost outside emulation */
      if (!p[w8]) {
        uint64_t any = 0;
        for (unsigned q = 1; q < 8; q++) any |= p[w8 + q];
        if (!any) continue;
      }
      for (uint64_t wi = w8; wi < w8 + 8; wi++) {
        uint64_t x = p[wi];
        if (!x) continue;
        unsigned bl = emu_popc32((uint32_t)x), bh = emu_popc32((uint32_t)(x >> 32));
        f->bytes += bl + bh;
        /* one word covers 64 bytes: sectors 2*wi (low half) and 2*wi+1 */
        uint64_t s0 = ((c << EMU_TCHUNK_SHIFT) >> 5) + 2 * wi;
        unsigned lo = bl != 0, hi = bh != 0;
        f->hist[bl] += lo;
        f->hist[bh] += hi;
        f->sectors += lo + hi;
        uint64_t first = lo ? s0 : s0 + 1, last = hi ? s0 + 1 : s0;
        if (first < f->lo) f->lo = first;
        if (last > f->hi) f->hi = last;
      }
    }
  }
}

static uint8_t *range_ptr(emu_device *d, uint64_t addr, size_t n, char *err,
                          size_t cap, const char *what) {
  uint8_t *p = emu_host_ptr(d, addr, n ? n : 1);
  if (p) return p;
  long f = emu_freed_find(d, addr);
  if (f >= 0)
    emu_errf(err, cap, "%s: [0x%llx, +%zu) is freed memory (allocation 0x%llx+%llu was freed)",
         what, (unsigned long long)addr, n, (unsigned long long)d->freed[f].base,
         (unsigned long long)d->freed[f].size);
  else
    emu_errf(err, cap, "%s: [0x%llx, +%zu) does not lie in one allocation", what,
         (unsigned long long)addr, n);
  return NULL;
}

int emu_memcpy_htod(emu_device *d, uint64_t dst, const void *src, size_t n,
                    char *err, size_t cap) {
  if (!n) return 0;
  uint8_t *p = range_ptr(d, dst, n, err, cap, "memcpy host to device");
  if (!p) return -1;
  memcpy(p, src, n);
  return 0;
}

int emu_memcpy_dtoh(emu_device *d, void *dst, uint64_t src, size_t n,
                    char *err, size_t cap) {
  if (!n) return 0;
  uint8_t *p = range_ptr(d, src, n, err, cap, "memcpy device to host");
  if (!p) return -1;
  memcpy(dst, p, n);
  return 0;
}

int emu_memcpy_dtod(emu_device *d, uint64_t dst, uint64_t src, size_t n,
                    char *err, size_t cap) {
  if (!n) return 0;
  uint8_t *s = range_ptr(d, src, n, err, cap, "memcpy device to device");
  if (!s) return -1;
  uint8_t *t = range_ptr(d, dst, n, err, cap, "memcpy device to device");
  if (!t) return -1;
  memmove(t, s, n);
  return 0;
}

int emu_memset(emu_device *d, uint64_t dst, int value, size_t n, char *err,
               size_t cap) {
  if (!n) return 0;
  uint8_t *p = range_ptr(d, dst, n, err, cap, "memset");
  if (!p) return -1;
  memset(p, value, n);
  return 0;
}

/* --------------------------------------------------- mapped pages -- */

/* The slack store: pieces keyed by piece index + 1 in an open-addressing
   table; a key is claimed by compare-and-swap, its memory published after
   it (readers that see the key wait for the pointer). */
struct emu_slack {
  uint64_t key[2 * EMU_SLACK_MAX];
  uint8_t *mem[2 * EMU_SLACK_MAX];
  uint32_t used;
};

static const uint8_t slack_zero[EMU_SLACK_PIECE];

int emu_mapped_page(const emu_device *d, uint64_t addr) {
  long b = emu_galloc_below(d, addr);
  uint64_t pg = addr / EMU_MAP_PAGE;
  if (b >= 0) {
    const galloc *g = &d->a[b];
    if (g->base / EMU_MAP_PAGE <= pg && pg <= (g->base + g->size - 1) / EMU_MAP_PAGE) return 1;
  }
  if (b + 1 < (long)d->n && d->a[b + 1].base / EMU_MAP_PAGE == pg) return 1;
  return 0;
}

uint8_t *emu_slack_ptr(emu_device *d, uint64_t addr, int create) {
  if (!emu_mapped_page(d, addr)) return NULL;
  struct emu_slack *s = __atomic_load_n(&d->slack, __ATOMIC_ACQUIRE);
  if (!s) {
    if (!create) return (uint8_t *)slack_zero + addr % EMU_SLACK_PIECE;
    struct emu_slack *n = calloc(1, sizeof *n), *old = NULL;
    if (!n) return NULL;
    if (__atomic_compare_exchange_n(&d->slack, &old, n, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) s = n;
    else { free(n); s = old; }
  }
  uint64_t key = addr / EMU_SLACK_PIECE + 1;
  uint32_t mask = 2 * EMU_SLACK_MAX - 1, i = (uint32_t)(key * 0x9E3779B97F4A7C15ull >> 40) & mask;
  for (;; i = (i + 1) & mask) {
    uint64_t k = __atomic_load_n(&s->key[i], __ATOMIC_ACQUIRE);
    if (k == 0) {
      if (!create) return (uint8_t *)slack_zero + addr % EMU_SLACK_PIECE;
      if (__atomic_add_fetch(&s->used, 1, __ATOMIC_RELAXED) > EMU_SLACK_MAX) {
        __atomic_sub_fetch(&s->used, 1, __ATOMIC_RELAXED);
        return NULL;
      }
      if (!__atomic_compare_exchange_n(&s->key[i], &k, key, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        __atomic_sub_fetch(&s->used, 1, __ATOMIC_RELAXED);
        if (k != key) continue; /* another piece took the slot */
      } else {
        uint8_t *m = calloc(1, EMU_SLACK_PIECE);
        /* on ENOMEM the slot stays claimed without memory: later uses of
           the piece fail too (NULL below) */
        __atomic_store_n(&s->mem[i], m ? m : (uint8_t *)slack_zero, __ATOMIC_RELEASE);
        if (!m) return NULL;
        return m + addr % EMU_SLACK_PIECE;
      }
    }
    if (k != key) continue;
    uint8_t *m;
    while (!(m = __atomic_load_n(&s->mem[i], __ATOMIC_ACQUIRE))) sched_yield();
    if (m == slack_zero && create) return NULL;
    return m + addr % EMU_SLACK_PIECE;
  }
}

static void free_slack(struct emu_slack *s) {
  if (!s) return;
  for (uint32_t i = 0; i < 2 * EMU_SLACK_MAX; i++)
    if (s->mem[i] != slack_zero) free(s->mem[i]);
  free(s);
}

void emu_device_free(emu_device *d) {
  if (!d) return;
  free_slack(d->slack);
  while (d->nmods) emu_module_free(d->mods[d->nmods - 1]);
  for (size_t i = 0; i < d->n; i++) {
    if (!d->a[i].external) free(d->a[i].host);
    free_lazy(d->a[i].lazy);
    free_touch(&d->a[i]);
  }
  for (size_t i = 0; i < d->nspare; i++) free(d->spare[i]);
  free(d->spare);
  free(d->a);
  free(d->mods);
  free(d->freed);
  free(d->tex);
  free(d);
}
