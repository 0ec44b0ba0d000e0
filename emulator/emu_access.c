/*
 * emu_access.c -- the emulator engine's memory: a warp's loads, stores and
 * atomics (mem_op and its fast paths), the accesses of emu_mma.c's
 * instructions, textures, surfaces, and the device services that read
 * emulated memory (printf, assert).  The address windows are described in
 * emu.c.
 *
 * Memory accesses.  A warp's access is resolved once for the whole warp
 * when its lowest and highest lane addresses resolve to one region (the
 * same allocation, the shared window, the parameter buffer or the lanes'
 * frames) and every address is aligned: then every lane between is in
 * bounds too.  Otherwise lanes are resolved one by one, which also names the
 * first faulting lane.  Global allocations are found through a four-entry
 * cache per thread (a triad alternates between three buffers), and the
 * footprint bitmap (emu_mem.c) is set once per run of adjacent lanes, a
 * word at a time.  Measured (make bench, triad, one thread): 141 M
 * thread-instructions/s with a per-lane path and a byte-by-byte bitmap,
 * 404 M with this one.
 *
 * Race check (cfg->racecheck; emu_race.c has the design).  Off, mem_op
 * tests one worker flag; on, its plain loads and stores go to race_mem
 * (the fast paths that skip mem_op's lane list -- mem_shared32,
 * x_shared_vec, mem_uniform_ld -- step aside), which updates the launch's
 * global shadow by run index and the worker's shared shadow by warp; a
 * released barrier and a new CTA start a new interval of the latter.
 * Races are counted per worker and named like tolerated accesses: the
 * first of the lowest CTA.
 */
#include "emulator/emu_run.h"

#define OOB_SLACK 4096 /* bytes around an allocation that count as out of bounds, not unmapped */
#define SPAN_WORDS 32 /* a global access's lanes within 2 KiB: sectors and footprint by bitmap */

/* ------------------------------------------------------------ memory -- */

/* Resolved access of one lane. */
enum { R_GLOBAL, R_SHARED, R_LOCAL, R_PARAM, R_CONST, R_NONE };
enum { E_OK, E_UNMAPPED, E_OOB, E_MISALIGNED, E_READONLY, E_FREED };

typedef struct acc {
  uint8_t *p;
  uint8_t rs;      /* R_* */
  uint8_t perlane; /* p lies in the lane's local stack (local, .func param) */
  long g;          /* allocation index for global/const; on E_FREED the
                      index in the device's freed ranges */
} lacc;

/* An access of n bytes at offset off of shared memory past the CTA's
   window (resolve): inside the SM's shared memory (the largest a CTA may
   have) a GPU lets it through (EMU_OOB_WARN: out->p set). */
static __attribute__((noinline, cold)) int shared_past(worker *W, uint64_t off, unsigned n,
                                                       lacc *out) {
  const launch *L = W->L;
  if (L->cfg->oob == EMU_OOB_WARN && off <= EMU_MAX_SHARED && n <= EMU_MAX_SHARED - off) {
    if (!W->shext) { /* zeros for this CTA, made when first used */
      memset(W->sh + L->shsize, 0, EMU_MAX_SHARED - L->shsize);
      W->shext = 1;
    }
    out->p = W->sh + off;
  }
  return E_OOB;
}

/* The allocation nearest address a, however far, for the message of an
   unmapped access (resolve): b is the last one below a (-1: none). */
static __attribute__((noinline, cold)) long nearest_alloc(const emu_device *d, long b,
                                                         uint64_t a) {
  if (b >= 0 && (b + 1 >= (long)d->n || a - (d->a[b].base + d->a[b].size) < d->a[b + 1].base - a))
    return b;
  return b + 1 < (long)d->n ? b + 1 : -1;
}

/* Allocation containing a through the worker's MRU cache, or -1.  A kernel
   alternating between buffers (triad reads b and c, writes a) hits. */
static long find_alloc(worker *W, const emu_device *d, uint64_t a) {
  for (int i = 0; i < GC_WAYS; i++) {
    long gi = W->gc[i];
    if (gi >= 0 && a - d->a[gi].base < d->a[gi].size) {
      for (; i > 0; i--) W->gc[i] = W->gc[i - 1];
      W->gc[0] = gi;
      return gi;
    }
  }
  long gi = emu_galloc_find(d, a);
  if (gi >= 0) {
    memmove(W->gc + 1, W->gc, (GC_WAYS - 1) * sizeof *W->gc);
    W->gc[0] = gi;
  }
  return gi;
}

static int resolve(worker *W, const warp *w, uint32_t lane, unsigned space,
                   uint64_t a, unsigned n, int write, lacc *out) {
  launch *L = W->L;
  out->rs = R_NONE;
  if (n > 1 && (a & (n - 1))) return E_MISALIGNED;
  unsigned sp = space;
  uint64_t off = a;
  if (sp == PTX_SP_GENERIC) {
    if (a - EMU_SHARED_WIN < EMU_WIN_SIZE) { sp = PTX_SP_SHARED; off = a - EMU_SHARED_WIN; }
    else if (a - EMU_LOCAL_WIN < EMU_WIN_SIZE) { sp = PTX_SP_LOCAL; off = a - EMU_LOCAL_WIN; }
    else if (a - EMU_PARAM_WIN < EMU_WIN_SIZE) { sp = PTX_SP_PARAM; }
    else sp = PTX_SP_GLOBAL;
  } else if (sp == PTX_SP_SHARED && a - EMU_SHARED_WIN < EMU_WIN_SIZE) {
    off = a - EMU_SHARED_WIN;
  } else if (sp == PTX_SP_LOCAL && a - EMU_LOCAL_WIN < EMU_WIN_SIZE) {
    off = a - EMU_LOCAL_WIN;
  }
  out->perlane = 0;
  switch (sp) {
    case PTX_SP_SHARED:
      out->rs = R_SHARED;
      if (off > L->shsize || n > L->shsize - off) return shared_past(W, off, n, out);
      out->p = W->sh + off;
      return E_OK;
    case PTX_SP_PARAM:
      if (a - EMU_PARAM_WIN < EMU_WIN_SIZE) {
        if (write) return E_READONLY;
        off = a - EMU_PARAM_WIN;
        if (off > L->cfg->params_size || n > L->cfg->params_size - off) return E_OOB;
        out->p = (uint8_t *)L->cfg->params + off;
        out->rs = R_PARAM;
        return E_OK;
      }
      /* a .func parameter: the thread's local frame */
      /* fallthrough */
    case PTX_SP_LOCAL: {
      uint64_t top = w->fr[w->nf - 1].ltop;
      if (off > top || n > top - off) return E_OOB;
      out->p = lane_local(W, w, lane) + off;
      out->rs = sp == PTX_SP_PARAM ? R_PARAM : R_LOCAL;
      out->perlane = 1;
      return E_OK;
    }
    default: {
      const emu_device *d = L->em->d;
      long gi = find_alloc(W, d, a);
      out->rs = sp == PTX_SP_CONST ? R_CONST : R_GLOBAL;
      if (gi < 0) {
        /* not mapped: near (within OOB_SLACK of) a live or a freed
           allocation, whichever is nearer, or unmapped */
        uint64_t fd = UINT64_MAX, ld = UINT64_MAX;
        long fi = emu_freed_near(d, a, OOB_SLACK, &fd), li = -1;
        long b = emu_galloc_below(d, a);
        if (b >= 0 && a - d->a[b].base < d->a[b].size + OOB_SLACK)
          li = b, ld = a - (d->a[b].base + d->a[b].size) + 1;
        if (b + 1 < (long)d->n && d->a[b + 1].base - a <= OOB_SLACK && d->a[b + 1].base - a < ld)
          li = b + 1, ld = d->a[b + 1].base - a;
        if (fi >= 0 && fd <= ld) {
          out->g = fi;
          return E_FREED;
        }
        out->g = li;
        if (li >= 0) return E_OOB;
        out->g = nearest_alloc(d, b, a); /* for the message */
        return E_UNMAPPED;
      }
      const galloc *g = &d->a[gi];
      out->g = gi;
      if (n > g->size - (a - g->base)) return E_OOB;
      emu_lazy_fill(g, a - g->base, n);
      out->p = g->host + (a - g->base);
      out->rs = sp == PTX_SP_CONST ? R_CONST : R_GLOBAL;
      return E_OK;
    }
  }
}

static const char *space_word(unsigned space, uint64_t a) {
  switch (space) {
    case PTX_SP_SHARED: return "shared";
    case PTX_SP_LOCAL: return "local";
    case PTX_SP_PARAM: return "param";
    case PTX_SP_CONST: return "const";
    case PTX_SP_GLOBAL: return "global";
    default:
      if (a - EMU_SHARED_WIN < EMU_WIN_SIZE) return "generic (shared)";
      if (a - EMU_LOCAL_WIN < EMU_WIN_SIZE) return "generic (local)";
      if (a - EMU_PARAM_WIN < EMU_WIN_SIZE) return "generic (param)";
      return "generic (global)";
  }
}

/* "N bytes past the end of allocation B+S" / "N bytes before allocation
   B+S" for address a and allocation gi. */
static void near_alloc(const emu_device *d, long gi, uint64_t a, char *buf, size_t cap) {
  const galloc *g = &d->a[gi];
  if (a >= g->base + g->size)
    snprintf(buf, cap, "%llu bytes past the end of allocation 0x%llx+%llu",
             (unsigned long long)(a - (g->base + g->size)), (unsigned long long)g->base,
             (unsigned long long)g->size);
  else if (a < g->base)
    snprintf(buf, cap, "%llu bytes before allocation 0x%llx+%llu",
             (unsigned long long)(g->base - a), (unsigned long long)g->base,
             (unsigned long long)g->size);
  else
    snprintf(buf, cap, "allocation 0x%llx+%llu, offset %llu", (unsigned long long)g->base,
             (unsigned long long)g->size, (unsigned long long)(a - g->base));
}

/* What went wrong with one lane's access (the body of the message). */
static void mem_msg(const worker *W, const eop *e, int code, uint64_t a, unsigned n,
                    int write, const lacc *ac, char *body, size_t cap) {
  const char *what = e->k == K_ATOM ? "atomic" : write ? "write" : "read";
  const char *sp = space_word(e->space, a);
  const emu_device *d = W->L->em->d;
  switch (code) {
    case E_MISALIGNED:
      snprintf(body, cap, "misaligned %s %s of %u bytes at 0x%llx (address %% %u != 0)", sp,
               what, n, (unsigned long long)a, n);
      break;
    case E_READONLY:
      snprintf(body, cap, "write of %u bytes at 0x%llx to the read-only kernel parameters", n,
               (unsigned long long)a);
      break;
    case E_UNMAPPED:
      if (ac->g >= 0 && (size_t)ac->g < d->n) {
        char near[160];
        near_alloc(d, ac->g, a, near, sizeof near);
        snprintf(body, cap, "unmapped %s %s of %u bytes at 0x%llx (%s, the nearest)", sp,
                 what, n, (unsigned long long)a, near);
      } else {
        snprintf(body, cap, "unmapped %s %s of %u bytes at 0x%llx (no allocation)", sp, what, n,
                 (unsigned long long)a);
      }
      break;
    case E_FREED:
      snprintf(body, cap, "%s %s of %u bytes at 0x%llx: use after free (allocation 0x%llx+%llu "
               "was freed)", sp, what, n, (unsigned long long)a,
               (unsigned long long)d->freed[ac->g].base, (unsigned long long)d->freed[ac->g].size);
      break;
    default:
      if (ac->g >= 0 && (size_t)ac->g < d->n && strstr(sp, "global")) {
        snprintf(body, cap, "out-of-bounds %s %s of %u bytes at 0x%llx (allocation 0x%llx+%llu)",
                 sp, what, n, (unsigned long long)a, (unsigned long long)d->a[ac->g].base,
                 (unsigned long long)d->a[ac->g].size);
      } else if (ac->rs == R_SHARED) {
        snprintf(body, cap, "out-of-bounds %s %s of %u bytes at 0x%llx (the CTA's shared "
                 "window is %llu bytes)", sp, what, n, (unsigned long long)a,
                 (unsigned long long)W->L->shsize);
      } else {
        snprintf(body, cap, "out-of-bounds %s %s of %u bytes at 0x%llx", sp, what, n,
                 (unsigned long long)a);
      }
  }
}

static void mem_fail(worker *W, const warp *w, uint32_t lane, const eop *e,
                     int code, uint64_t a, unsigned n, int write,
                     const lacc *ac) {
  char body[512];
  mem_msg(W, e, code, a, n, write, ac, body, sizeof body);
  W->kind = code == E_MISALIGNED ? EMU_FAULT_MISALIGNED : EMU_FAULT_ADDRESS;
  eng_fail(W, w, (int)lane, e->o.insn, 0, "%s", body);
}

/* An access a GPU tolerates (EMU_OOB_WARN): global, out of bounds but in
   a page the allocations map (emu_mapped_page; within 4 KiB of one always
   counts) or to freed memory; shared, past the CTA's window inside the
   SM's shared memory (resolve set ac->p).  Counted; the first of the
   lowest CTA is kept. */
static int tolerated(const worker *W, int code, const lacc *ac, uint64_t a) {
  if (W->L->cfg->oob != EMU_OOB_WARN) return 0;
  if (ac->rs == R_SHARED) return code == E_OOB && ac->p;
  return ac->rs == R_GLOBAL &&
         (code == E_OOB || code == E_FREED ||
          (code == E_UNMAPPED && emu_mapped_page(W->L->em->d, a)));
}

/* Count a tolerated access; keep the first of the lowest CTA, its text
   from mem_msg (body NULL) or body. */
static void note_tolerated(worker *W, const warp *w, uint32_t lane, const eop *e, int code,
                           uint64_t a, unsigned n, int write, const lacc *ac, const char *text) {
  launch *L = W->L;
  W->oob++;
  if (W->oob_seen == W->cta + 1 || W->cta > __atomic_load_n(&L->oob_cta, __ATOMIC_RELAXED))
    return;
  W->oob_seen = W->cta + 1;
  char body[512], msg[768];
  if (text) snprintf(body, sizeof body, "%s", text);
  else mem_msg(W, e, code, a, n, write, ac, body, sizeof body);
  eng_compose(W, w, (int)lane, e->o.insn, body, msg, sizeof msg);
#pragma omp critical(emu_error)
  {
    if (W->cta < L->oob_cta) {
      L->oob_cta = W->cta;
      snprintf(L->oob_msg, sizeof L->oob_msg, "%s", msg);
    }
  }
}

static void note_oob(worker *W, const warp *w, uint32_t lane, const eop *e, int code,
                     uint64_t a, unsigned n, int write, const lacc *ac) {
  note_tolerated(W, w, lane, e, code, a, n, write, ac, NULL);
}

static inline uint64_t load_n(const uint8_t *p, unsigned n) {
  switch (n) {
    case 1: return *p;
    case 2: { uint16_t v; memcpy(&v, p, 2); return v; }
    case 4: { uint32_t v; memcpy(&v, p, 4); return v; }
    default: { uint64_t v; memcpy(&v, p, 8); return v; }
  }
}

static inline void store_n(uint8_t *p, uint64_t v, unsigned n) {
  switch (n) {
    case 1: *p = (uint8_t)v; break;
    case 2: { uint16_t x = (uint16_t)v; memcpy(p, &x, 2); break; }
    case 4: { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); break; }
    default: memcpy(p, &v, 8);
  }
}

static inline uint64_t extend(uint64_t v, unsigned size, int sext, unsigned dw) {
  if (sext && size < 8) {
    uint64_t sign = 1ull << (size * 8 - 1);
    v = (v ^ sign) - sign;
  }
  if (dw < 8) v &= (1ull << (dw * 8)) - 1;
  return v;
}

static float f32_of(uint32_t b) { float f; memcpy(&f, &b, 4); return f; }
static uint32_t bits_f32(float f) { uint32_t b; memcpy(&b, &f, 4); return b; }
static double f64_of(uint64_t b) { double f; memcpy(&f, &b, 8); return f; }
static uint64_t bits_f64(double f) { uint64_t b; memcpy(&b, &f, 8); return b; }

/* New value of an atomic read-modify-write. */
static uint64_t atom_new(unsigned aux, unsigned type, unsigned size,
                         uint64_t old, uint64_t b, uint64_t c) {
  int fl = type == PTX_T_F32 || type == PTX_T_F64;
  int sg = type_signed(type);
  if (aux != PTX_AUX_CAS && (type == PTX_T_F16 || type == PTX_T_BF16 || type == PTX_T_F16X2 ||
                             type == PTX_T_BF16X2))
    return emu_half_atom(aux, type, old, b);
  switch (aux) {
    case PTX_AUX_ADD:
      if (type == PTX_T_F32) return bits_f32(f32_of((uint32_t)old) + f32_of((uint32_t)b));
      if (type == PTX_T_F64) return bits_f64(f64_of(old) + f64_of(b));
      return old + b;
    case PTX_AUX_MIN: case PTX_AUX_MAX: {
      int less;
      if (fl && size == 4) less = f32_of((uint32_t)b) < f32_of((uint32_t)old);
      else if (fl) less = f64_of(b) < f64_of(old);
      else if (sg && size == 4) less = (int32_t)b < (int32_t)old;
      else if (sg) less = (int64_t)b < (int64_t)old;
      else less = b < old;
      if (aux == PTX_AUX_MIN) return less ? b : old;
      int greater;
      if (fl && size == 4) greater = f32_of((uint32_t)b) > f32_of((uint32_t)old);
      else if (fl) greater = f64_of(b) > f64_of(old);
      else if (sg && size == 4) greater = (int32_t)b > (int32_t)old;
      else if (sg) greater = (int64_t)b > (int64_t)old;
      else greater = b > old;
      return greater ? b : old;
    }
    case PTX_AUX_INC: return (uint32_t)old >= (uint32_t)b ? 0 : old + 1;
    case PTX_AUX_DEC:
      return ((uint32_t)old == 0 || (uint32_t)old > (uint32_t)b) ? b : old - 1;
    case PTX_AUX_CAS: return old == b ? c : old;
    case PTX_AUX_EXCH: return b;
    case PTX_AUX_AND: return old & b;
    case PTX_AUX_OR: return old | b;
    case PTX_AUX_XOR: return old ^ b;
    default: return old;
  }
}

/* out of line: the atomics path must not change how mem_op's hot paths compile */
static __attribute__((noinline)) uint64_t atom_do(const eop *e, uint8_t *p, uint64_t b, uint64_t c) {
  const ptx_insn *in = e->o.insn;
  unsigned t = in->type;
  int intadd = in->aux == PTX_AUX_ADD && t != PTX_T_F32 && t != PTX_T_F64 && t != PTX_T_F16X2 &&
               t != PTX_T_BF16X2;
  if (e->size == 2) { /* halves and cas.b16 */
    uint16_t *q = (uint16_t *)(void *)p;
    uint16_t old = __atomic_load_n(q, __ATOMIC_RELAXED);
    for (;;) {
      uint16_t nv = (uint16_t)atom_new(in->aux, t, 2, old, (uint16_t)b, (uint16_t)c);
      if (nv == old) return old;
      if (__atomic_compare_exchange_n(q, &old, nv, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        return old;
    }
  }
  if (e->size == 4) {
    uint32_t *q = (uint32_t *)(void *)p;
    if (intadd) return __atomic_fetch_add(q, (uint32_t)b, __ATOMIC_RELAXED);
    if (in->aux == PTX_AUX_EXCH) return __atomic_exchange_n(q, (uint32_t)b, __ATOMIC_RELAXED);
    uint32_t old = __atomic_load_n(q, __ATOMIC_RELAXED);
    for (;;) {
      uint32_t nv = (uint32_t)atom_new(in->aux, t, 4, old, (uint32_t)b, (uint32_t)c);
      if (nv == old) return old;
      if (__atomic_compare_exchange_n(q, &old, nv, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        return old;
    }
  }
  uint64_t *q = (uint64_t *)(void *)p;
  if (intadd) return __atomic_fetch_add(q, b, __ATOMIC_RELAXED);
  if (in->aux == PTX_AUX_EXCH) return __atomic_exchange_n(q, b, __ATOMIC_RELAXED);
  uint64_t old = __atomic_load_n(q, __ATOMIC_RELAXED);
  for (;;) {
    uint64_t nv = atom_new(in->aux, t, 8, old, b, c);
    if (nv == old) return old;
    if (__atomic_compare_exchange_n(q, &old, nv, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
      return old;
  }
}

/* Shared-memory words a warp access may span for the bitmap count of
   its bank replays (mem_op): 64 x 16 = 1024 words, 4 KiB. */
#define SH_SPAN_WORDS 16

/* Distinct values in v[0..n) (small n); sorts v. */
static unsigned count_distinct(uint64_t *v, unsigned n) {
  unsigned cut = 0; /* the first descent, 0 when ascending */
  for (unsigned i = 1; i < n; i++)
    if (v[i] < v[i - 1]) { cut = i; break; }
  int two = cut > 0 && n <= 2 * EMU_LANES;
  for (unsigned i = cut + 1; two && i < n; i++) two = v[i] >= v[i - 1];
  if (two) { /* two ascending runs (a warp whose halves read the same
                rows, as a wmma fragment's do): merged */
    uint64_t t[2 * EMU_LANES];
    unsigned a = 0, b = cut, o = 0;
    while (a < cut && b < n) t[o++] = v[b] < v[a] ? v[b++] : v[a++];
    while (a < cut) t[o++] = v[a++];
    while (b < n) t[o++] = v[b++];
    memcpy(v, t, n * sizeof *v);
  } else if (cut)
    for (unsigned i = 1; i < n; i++) {
      uint64_t x = v[i];
      unsigned j = i;
      while (j > 0 && v[j - 1] > x) { v[j] = v[j - 1]; j--; }
      v[j] = x;
    }
  unsigned d = n ? 1 : 0;
  for (unsigned i = 1; i < n; i++) d += v[i] != v[i - 1];
  return d;
}

static emu_device *d_of(const worker *W) { return W->L->em->d; }

/* Fill the pages the lanes m of a lazily filled allocation g reach. */
static __attribute__((noinline)) void lazy_lanes(const galloc *g, const uint64_t *addr,
                                                 uint32_t m, unsigned n) {
  for (uint32_t mm = m; mm; mm &= mm - 1) {
    uint32_t l = (uint32_t)__builtin_ctz(mm);
    emu_lazy_fill(g, addr[l] - g->base, n);
  }
}

static int touch_lanes(worker *W, const uint64_t *addr, const long *gidx, long g1,
                       uint32_t gl, unsigned n, int mono);

/* A constant load whose address comes from a register (an LDC of the
   machine code), not from a symbol and an offset (an operand of the
   instruction that uses it). */
static inline int const_indexed(const warp *w, const eop *e) {
  return e->abase < w->fr[w->nf - 1].fn->f->nregs;
}

/*
 * A full warp loading n bytes at the one address a (mem_op): resolved and
 * read once, the value given to every lane, counted as the lane-by-lane
 * path counts it (global: one sector, n bytes of footprint).  0 when done,
 * 1 when the lanes must go the general way (local or shared memory, or an
 * error to report there), -1 on failure.
 */
static int mem_uniform_ld(worker *W, warp *w, uint64_t *r, const eop *e, uint64_t a, unsigned n) {
  if (W->racing) return 1; /* the lanes go where race_mem sees them */
  lacc ac;
  ac.g = -1;
  if (resolve(W, w, 0, e->space, a, n, 0, &ac) != E_OK || ac.perlane || ac.rs == R_SHARED)
    return 1;
  for (unsigned k = 0; k < e->vec; k++) { /* .v2 / .v4: each element to its register */
    uint64_t v = extend(load_n(ac.p + (size_t)k * e->size, e->size), e->size, e->sext, e->dw[k]);
    uint64_t *dst = r + (size_t)e->o.d[k] * EMU_LANES;
    for (uint32_t l = 0; l < EMU_LANES; l++) dst[l] = v;
  }
  if (ac.rs == R_CONST && const_indexed(w, e)) W->st[S_CACC]++;
  if (ac.rs != R_GLOBAL) return 0;
  uint64_t bytes = (uint64_t)EMU_LANES * e->mbytes;
  W->st[S_GBYTES] += bytes;
  W->st[S_GLOAD] += bytes;
  W->st[S_GACC]++;
  unsigned us = 1 + (((a + n - 1) >> 5) != (a >> 5));
  W->st[S_GSECT] += us;
  W->st[S_GSECT_LD] += us;
  if (W->tracing) emu_trace_range(W->tr, w->idx, 0, a >> 5, (a + n - 1) >> 5);
  if (touch_lanes(W, &a, NULL, ac.g, 1, n, 1)) {
    W->oom = 1;
    eng_fail(W, w, -1, e->o.insn, 1, "out of memory for the footprint bitmap");
    return -1;
  }
  return 0;
}

/*
 * All lanes of m in one region (resolve() of the lowest and the highest
 * address agree: the same space, the same allocation, both in bounds,
 * every address aligned): fill p[] and return 1.  Regions are contiguous,
 * so every address between the two is in bounds too.  0 when the lanes
 * must be resolved one by one (an error to report, or mixed regions).
 */
static inline __attribute__((always_inline)) int warp_region(worker *W, const warp *w, const eop *e, const uint64_t *addr,
                       uint32_t m, uint64_t lo, uint64_t hi, uint64_t orv, unsigned n,
                       int write, uint8_t **p, lacc *ac) {
  if (n > 1 && (orv & (n - 1))) return 0;
  uint32_t l0 = (uint32_t)__builtin_ctz(m);
  lacc h;
  ac->g = h.g = -1;
  if (resolve(W, w, l0, e->space, lo, n, write, ac) != E_OK) return 0;
  if (hi != lo) {
    if (resolve(W, w, l0, e->space, hi, n, write, &h) != E_OK || h.rs != ac->rs ||
        h.perlane != ac->perlane || h.g != ac->g || h.p - ac->p != (ptrdiff_t)(hi - lo))
      return 0;
  }
  if (ac->perlane) {
    ptrdiff_t off = ac->p - lane_local(W, w, l0);
    for (uint32_t mm = m; mm; mm &= mm - 1) {
      uint32_t l = (uint32_t)__builtin_ctz(mm);
      p[l] = lane_local(W, w, l) + off + (addr[l] - lo);
    }
  } else {
    for (uint32_t mm = m; mm; mm &= mm - 1) {
      uint32_t l = (uint32_t)__builtin_ctz(mm);
      p[l] = ac->p + (addr[l] - lo);
    }
    if (ac->g >= 0 && (ac->rs == R_GLOBAL || ac->rs == R_CONST) && d_of(W)->a[ac->g].lazy)
      lazy_lanes(&d_of(W)->a[ac->g], addr, m, n); /* resolve() filled the ends only */
  }
  return 1;
}

/*
 * The block [lo, hi + n) of a unit-stride warp (mem_op) in one region:
 * global, shared or constant memory (not a lane's local stack), both ends
 * in bounds in the same allocation, lo aligned.  1 with ac filled in, 0
 * when the lanes must go through warp_region (which reports errors).
 */
static int warp_block(worker *W, const warp *w, const eop *e, uint64_t lo, uint64_t hi,
                      unsigned n, int write, lacc *ac) {
  if (n > 1 && (lo & (n - 1))) return 0;
  lacc h;
  ac->g = h.g = -1;
  if (resolve(W, w, 0, e->space, lo, n, write, ac) != E_OK || ac->perlane) return 0;
  if (resolve(W, w, 0, e->space, hi, n, write, &h) != E_OK || h.rs != ac->rs ||
      h.perlane || h.g != ac->g || h.p - ac->p != (ptrdiff_t)(hi - lo))
    return 0;
  if (ac->g >= 0 && (ac->rs == R_GLOBAL || ac->rs == R_CONST)) {
    /* resolve() filled the ends of a lazily filled allocation; the middle */
    const galloc *g = &d_of(W)->a[ac->g];
    emu_lazy_fill(g, lo - g->base, hi + n - lo);
  }
  return 1;
}

/* Footprint of the global lanes gl: one touch per run of adjacent or
   overlapping accesses when the addresses ascend with the lane (a
   coalesced warp is one run), else one per lane.  0, or -1 on ENOMEM. */
static int touch_lanes(worker *W, const uint64_t *addr, const long *gidx, long g1,
                       uint32_t gl, unsigned n, int mono) {
  emu_device *d = W->L->em->d;
  if (mono && g1 >= 0) {
    uint64_t s = 0, e = 0;
    int open = 0;
    for (uint32_t mm = gl; mm; mm &= mm - 1) {
      uint64_t a = addr[__builtin_ctz(mm)];
      if (open && a <= e) {
        if (a + n > e) e = a + n;
        continue;
      }
      if (open && emu_touch(d, g1, s - d->a[g1].base, e - s, &W->tc)) return -1;
      s = a;
      e = a + n;
      open = 1;
    }
    if (open && emu_touch(d, g1, s - d->a[g1].base, e - s, &W->tc)) return -1;
    return 0;
  }
  for (uint32_t mm = gl; mm; mm &= mm - 1) {
    uint32_t l = (uint32_t)__builtin_ctz(mm);
    long gi = gidx ? gidx[l] : g1;
    if (emu_touch(d, gi, addr[l] - d->a[gi].base, n, &W->tc)) return -1;
  }
  return 0;
}

/*
 * ld.shared and st.shared of one 32-bit element a lane (a load
 * zero-extended; the tiles of a tiled kernel: two of every three
 * instructions of gemm_tiled's inner loop are such loads), in one pass
 * over the lanes for their accesses and the bank count mem_op makes: 0
 * when done; 1 when mem_op must do it, before anything is read or written
 * (a lane out of bounds or misaligned, which it reports, or words 64 or
 * more apart).  Offsets as resolve() takes them: in the shared window or
 * from 0; lanes store in ascending order, as mem_op's do.  mem_op went
 * over the lanes four times (addresses, their region, the accesses, a
 * list of their words for the banks): kcast_features_from_ptx of
 * gemm_tiled n=1024 (64 CTAs sampled), medians of 5, 170-172 -> 83-87 ms
 * with the loads alone; the suite's 190,394 feature values the same.
 */
static __attribute__((noinline)) int mem_shared32(worker *W, uint64_t *r, const eop *e, uint32_t m) {
  if (W->racing) return 1; /* the lanes go where race_mem sees them */
  const uint64_t *base = r + (size_t)e->abase * EMU_LANES;
  uint64_t shs = W->L->shsize, bad = 0, wlo = UINT64_MAX, whi = 0;
  uint64_t off[EMU_LANES];
  for (uint32_t mm = m; mm; mm &= mm - 1) {
    uint32_t l = (uint32_t)__builtin_ctz(mm);
    uint64_t a = base[l] + (uint64_t)e->aoff;
    if (e->a32) a = (uint32_t)a;
    uint64_t o = a - EMU_SHARED_WIN < EMU_WIN_SIZE ? a - EMU_SHARED_WIN : a;
    bad |= (a & 3) | (uint64_t)(o > shs || 4 > shs - o);
    off[l] = o;
    wlo = o >> 2 < wlo ? o >> 2 : wlo;
    whi = o >> 2 > whi ? o >> 2 : whi;
  }
  if (bad || whi - wlo >= 64) return 1;
  uint64_t x = 0;
  if (e->k == K_LD) {
    uint64_t *dst = r + (size_t)e->o.d[0] * EMU_LANES;
    for (uint32_t mm = m; mm; mm &= mm - 1) {
      uint32_t l = (uint32_t)__builtin_ctz(mm), v;
      memcpy(&v, W->sh + off[l], 4);
      dst[l] = v;
      x |= 1ull << ((off[l] >> 2) - wlo);
    }
  } else {
    const uint64_t *src = r + (size_t)e->o.s[0] * EMU_LANES;
    for (uint32_t mm = m; mm; mm &= mm - 1) {
      uint32_t l = (uint32_t)__builtin_ctz(mm), v = (uint32_t)src[l];
      memcpy(W->sh + off[l], &v, 4);
      x |= 1ull << ((off[l] >> 2) - wlo);
    }
  }
  W->st[S_SBYTES] += (uint64_t)emu_popc32(m) * e->mbytes;
  W->st[S_SACC]++;
  W->st[S_SREPLAY] += ((uint32_t)x & (uint32_t)(x >> 32)) != 0; /* mem_op's map word */
  return 0;
}

/* What mem_refused made of a lane's refused access. */
enum { MR_SHARED, MR_SLACK, MR_DROP };

/*
 * Lane l's access at a that resolve refused (rc, ac): tolerated (EMU_OOB_WARN
 * and its kinds, tolerated) and noted, or the launch fails (-1).  Tolerated:
 * MR_SHARED, shared memory past the window (*pl its bytes); MR_SLACK, the
 * mapped pages' memory (*pl: what is there); MR_DROP, not performed (freed,
 * or beyond the mapped pages: loads give zeros).  Out of line: mem_op's
 * loop compiles as without it.
 */
static __attribute__((noinline, cold)) int mem_refused(worker *W, warp *w, uint32_t l,
                                                       const eop *e, int rc, uint64_t a,
                                                       unsigned n, int write, lacc *ac,
                                                       uint8_t **pl) {
  if (!tolerated(W, rc, ac, a)) {
    mem_fail(W, w, l, e, rc, a, n, write, ac);
    return -1;
  }
  note_oob(W, w, l, e, rc, a, n, write, ac);
  if (ac->rs == R_SHARED) { /* the SM's memory past the window */
    *pl = ac->p;
    return MR_SHARED;
  }
  /* the mapped pages' memory: what is there (freed: zeros, dropped) */
  uint8_t *sp = rc != E_FREED ? emu_slack_ptr(d_of(W), a, write) : NULL;
  if (!sp) return MR_DROP;
  *pl = sp;
  return MR_SLACK;
}

/* ------------------------------------------------------ race check -- */

/* Instruction id of in, running in function fn (emu_race_sh_check): the
   ids of the functions before it, then its index, from 1; 0 when in is
   not fn's. */
static uint32_t race_insn_id(const launch *L, const efunc *fn, const ptx_insn *in) {
  const ptx_func *f = fn->f;
  if (in < f->insns || in >= f->insns + f->ninsns) return 0;
  return L->race_fbase[fn->idx] + (uint32_t)(in - f->insns) + 1;
}

/* The instruction of id (race_insn_id), or NULL. */
static const ptx_insn *race_insn_of(const launch *L, uint32_t id) {
  const ptx_module *m = L->em->m;
  for (uint32_t fi = 0; id && fi < m->nfuncs; fi++)
    if (id > L->race_fbase[fi] && id - L->race_fbase[fi] <= m->funcs[fi].ninsns)
      return &m->funcs[fi].insns[id - L->race_fbase[fi] - 1];
  return NULL;
}

/* "CTA (x,y,z)" of global shadow id (run index + 1). */
static void race_cta_name(const launch *L, uint32_t id, char *buf, size_t cap) {
  uint64_t c = L->race_map ? L->race_map[id - 1] : (uint64_t)id - 1;
  snprintf(buf, cap, "CTA (%u,%u,%u)", (unsigned)(c % L->gdim[0]),
           (unsigned)(c / L->gdim[0] % L->gdim[1]),
           (unsigned)(c / ((uint64_t)L->gdim[0] * L->gdim[1])));
}

/*
 * The `count` words that lane's access of n bytes at address a (global:
 * in allocation gi; shared: gi < 0 and a the window offset) found racing,
 * the first described by h: counted, and the first race of the lowest CTA
 * described in L->race_msg (as note_tolerated keeps the first tolerated
 * access).
 */
static __attribute__((noinline, cold)) void race_found(worker *W, const warp *w, uint32_t lane,
                                                       const eop *e, long gi, uint64_t a,
                                                       unsigned n, const emu_race_hit *h,
                                                       unsigned count) {
  launch *L = W->L;
  int shared = gi < 0;
  if (shared) W->race_s += count;
  else W->race_g += count;
  if (W->race_seen == W->cta + 1 || W->cta > __atomic_load_n(&L->race_cta, __ATOMIC_RELAXED))
    return;
  W->race_seen = W->cta + 1;
  const char *kind = h->kind == EMU_RACE_WW ? "write-write" : "read-write";
  const char *verb = h->kind == EMU_RACE_RW ? "reads" : "writes";
  char where[64], other[768], body[1024], msg[1024];
  if (shared) {
    snprintf(where, sizeof where, "shared offset %llu", (unsigned long long)a);
    const ptx_insn *oi = race_insn_of(L, h->oinsn);
    char at[600] = "";
    if (oi) {
      char loc[512];
      snprintf(at, sizeof at, " (%s: %s)", ptx_insn_where(L->em->m, oi, loc, sizeof loc),
               L->em->m->keys[oi->key]);
    }
    if (h->other == EMU_RACE_MANY)
      snprintf(other, sizeof other, "other warps read%s", at);
    else
      snprintf(other, sizeof other, "warp %u %s%s", h->other - 1,
               h->kind == EMU_RACE_WR ? "read" : "wrote", at);
    snprintf(body, sizeof body, "%s race between warps in shared memory: it %s %u bytes at %s "
             "that %s, with no barrier between (the warps' order decides the result)", kind, verb,
             n, where, other);
  } else {
    char near[160], oc[128] = "other CTAs read";
    near_alloc(L->em->d, gi, a, near, sizeof near);
    if (h->other != EMU_RACE_MANY) {
      char c[64];
      race_cta_name(L, h->other, c, sizeof c);
      snprintf(oc, sizeof oc, "%s %s", c,
               h->kind == EMU_RACE_WW ? "writes too" : h->kind == EMU_RACE_RW ? "writes" : "reads");
    }
    snprintf(body, sizeof body, "%s race between CTAs in global memory: it %s %u bytes at 0x%llx "
             "(%s) that %s in the same launch (the CTAs' order decides the result)", kind, verb,
             n, (unsigned long long)a, near, oc);
  }
  eng_compose(W, w, (int)lane, e->o.insn, body, msg, sizeof msg);
#pragma omp critical(emu_error)
  {
    if (W->cta < L->race_cta) {
      L->race_cta = W->cta;
      snprintf(L->race_msg, sizeof L->race_msg, "%s", msg);
    }
  }
}

/* The lane of lanes m whose n bytes at addr[l] hold byte x. */
static uint32_t race_lane(uint32_t m, const uint64_t *addr, uint64_t x, unsigned n) {
  for (uint32_t mm = m; mm; mm &= mm - 1) {
    uint32_t l = (uint32_t)__builtin_ctz(mm);
    if (x - addr[l] < n) return l;
  }
  return m ? (uint32_t)__builtin_ctz(m) : 0;
}

/*
 * The race check of one ld or st (mem_op; not an atomic): the global
 * lanes gl at addr[] (in allocation g1, or gidx[l] each; unit: the block
 * [lo, hi + n) in g1), the shared lanes sl at p[].  Out of line and cold:
 * with the check off, mem_op pays one test.
 */
static __attribute__((noinline, cold)) void race_mem(worker *W, const warp *w, const eop *e,
                                                     const uint64_t *addr, uint8_t *const *p,
                                                     const long *gidx, long g1, uint32_t gl,
                                                     uint32_t sl, int unit, uint64_t lo,
                                                     uint64_t hi, unsigned n, int mono) {
  launch *L = W->L;
  if (L->race_skip[e->o.insn->key]) return;
  int write = e->k == K_ST;
  emu_race_hit h;
  unsigned c;
  if (gl && L->race) {
    const emu_device *d = L->em->d;
    if (unit || (mono && g1 >= 0)) {
      /* runs of adjacent or overlapping lanes (a coalesced warp is one) */
      uint64_t s = lo, t = hi + n;
      int open = unit;
      for (uint32_t mm = unit ? 0 : gl; mm; mm &= mm - 1) {
        uint64_t a = addr[__builtin_ctz(mm)];
        if (open && a <= t) {
          if (a + n > t) t = a + n;
          continue;
        }
        if (open && (c = emu_race_global(L->race, &W->rc, g1, s - d->a[g1].base, t - s,
                                         W->race_id, write, &h))) {
          uint64_t x = d->a[g1].base + h.off;
          uint32_t l = race_lane(gl, addr, x, n);
          race_found(W, w, l, e, g1, addr[l], n, &h, c);
        }
        s = a;
        t = a + n;
        open = 1;
      }
      if (open && (c = emu_race_global(L->race, &W->rc, g1, s - d->a[g1].base, t - s,
                                       W->race_id, write, &h))) {
        uint64_t x = d->a[g1].base + h.off;
        uint32_t l = race_lane(gl, addr, x, n);
        race_found(W, w, l, e, g1, addr[l], n, &h, c);
      }
    } else {
      for (uint32_t mm = gl; mm; mm &= mm - 1) {
        uint32_t l = (uint32_t)__builtin_ctz(mm);
        long gi = gidx ? gidx[l] : g1;
        if ((c = emu_race_global(L->race, &W->rc, gi, addr[l] - d->a[gi].base, n, W->race_id,
                                 write, &h)))
          race_found(W, w, l, e, gi, addr[l], n, &h, c);
      }
    }
  }
  if (sl) {
    const efunc *fn = w->fr[w->nf - 1].fn;
    uint32_t id = race_insn_id(L, fn, e->o.insn);
    uint64_t prev = UINT64_MAX;
    for (uint32_t mm = sl; mm; mm &= mm - 1) {
      uint32_t l = (uint32_t)__builtin_ctz(mm);
      uint64_t o = (uint64_t)(p[l] - W->sh);
      /* a lane at the previous lane's bytes (a broadcast) changes nothing:
         the same warp, the same access */
      if (o == prev) continue;
      prev = o;
      /* past the window (tolerated under EMU_OOB_WARN): not shadowed */
      if (o < W->rsh.size && n <= W->rsh.size - o &&
          (c = emu_race_sh_check(&W->rsh, o, n, w->idx, id, write, &h)))
        race_found(W, w, l, e, -1, o, n, &h, c);
    }
  }
}

/* ld / st / atom / red for the lanes in m. */
int eng_mem_op(worker *W, warp *w, uint64_t *r, const eop *e, uint32_t m) {
  unsigned n = (unsigned)e->size * e->vec;
  if (e->space == PTX_SP_SHARED && e->vec == 1 && e->size == 4 && m &&
      ((e->k == K_LD && !e->sext && e->dw[0] >= 4) || e->k == K_ST) && !mem_shared32(W, r, e, m))
    return 0;
  int write = e->k != K_LD;
  uint64_t addr[EMU_LANES];
  uint8_t *p[EMU_LANES];
  long gidx[EMU_LANES];
  uint32_t gl = 0, sl = 0, ll = 0, cl = 0;
  const uint64_t *base = r + (size_t)e->abase * EMU_LANES;
  uint64_t lo = UINT64_MAX, hi = 0, orv = 0, prev = 0;
  int mono = 1;
  /* unit: a full warp of single-element loads or stores at consecutive
     addresses (lane l at addr[0] + l * n), the coalesced case; its lanes
     are checked, copied and counted as one block below */
  int unit = 0;
  if (m == UINT32_MAX && e->k != K_ATOM && (e->vec == 1 || e->k == K_LD)) {
    uint64_t a0 = base[0] + (uint64_t)e->aoff, bad = 0, same = 0;
    if (e->a32) a0 = (uint32_t)a0;
    for (uint32_t l = 0; l < EMU_LANES; l++) {
      uint64_t a = base[l] + (uint64_t)e->aoff;
      if (e->a32) a = (uint32_t)a;
      addr[l] = a;
      bad |= a ^ (a0 + (uint64_t)l * n);
      same |= a ^ a0;
    }
    if (!bad && e->vec == 1) unit = 1, lo = orv = a0, hi = addr[EMU_LANES - 1];
    /* a full warp loading one address (a parameter, a constant; .v2 and
       .v4 too, as pnpoly reads its polygon's vertices) */
    if (!same && e->k == K_LD) {
      int rc = mem_uniform_ld(W, w, r, e, a0, n);
      if (rc <= 0) return rc;
    }
  }
  for (uint32_t mm = unit ? 0 : m; mm; mm &= mm - 1) {
    uint32_t l = (uint32_t)__builtin_ctz(mm);
    uint64_t a = base[l] + (uint64_t)e->aoff;
    if (e->a32) a = (uint32_t)a;
    addr[l] = a;
    orv |= a;
    if (a < lo) lo = a;
    if (a > hi) hi = a;
    if (a < prev) mono = 0;
    prev = a;
  }
  lacc ac;
  long g1 = -1; /* the one allocation of the global lanes, or -1: see gidx */
  uint32_t drop = 0; /* lanes whose access is tolerated and not performed */
  uint32_t slack = 0; /* lanes tolerated in the mapped pages' memory (no footprint) */
  if (unit && warp_block(W, w, e, lo, hi, n, write, &ac)) {
    /* p[] stays unset: the block path reads and writes ac.p directly,
       except in shared memory, whose bank count wants the lanes */
    if (ac.rs == R_GLOBAL) gl = m, g1 = ac.g;
    else if (ac.rs == R_CONST) cl = m;
    else if (ac.rs == R_SHARED) {
      for (uint32_t l = 0; l < EMU_LANES; l++) p[l] = ac.p + (size_t)l * n;
      sl = m;
      unit = 0;
    }
  } else if ((unit = 0), warp_region(W, w, e, addr, m, lo, hi, orv, n, write, p, &ac)) {
    if (ac.rs == R_GLOBAL) gl = m, g1 = ac.g;
    else if (ac.rs == R_SHARED) sl = m;
    else if (ac.rs == R_LOCAL) ll = m;
    else if (ac.rs == R_CONST) cl = m;
  } else {
    for (uint32_t mm = m; mm; mm &= mm - 1) {
      uint32_t l = (uint32_t)__builtin_ctz(mm);
      ac.g = -1;
      int rc = resolve(W, w, l, e->space, addr[l], n, write, &ac);
      if (rc != E_OK) {
        int t = mem_refused(W, w, l, e, rc, addr[l], n, write, &ac, &p[l]);
        if (t < 0) return -1;
        if (t == MR_SHARED) sl |= 1u << l;
        else gl |= 1u << l, slack |= (uint32_t)(t == MR_SLACK) << l,
             drop |= (uint32_t)(t == MR_DROP) << l;
        continue;
      }
      p[l] = ac.p;
      gidx[l] = ac.g;
      if (ac.rs == R_GLOBAL) gl |= 1u << l;
      else if (ac.rs == R_SHARED) sl |= 1u << l;
      else if (ac.rs == R_LOCAL) ll |= 1u << l;
      else if (ac.rs == R_CONST) cl |= 1u << l;
    }
  }
  if (drop) {
    /* a dropped read gives zeros, a dropped atomic returns 0 */
    for (uint32_t mm = drop; mm && (e->k == K_LD || !e->isred); mm &= mm - 1) {
      uint32_t l = (uint32_t)__builtin_ctz(mm);
      for (unsigned k = 0; k < (e->k == K_LD ? e->vec : 1u) && e->o.nd; k++)
        r[(size_t)e->o.d[k] * EMU_LANES + l] = 0;
    }
    m &= ~drop;
  }
  if (unit) {
    uint64_t *dst = r + (size_t)(e->k == K_LD ? e->o.d[0] : e->o.s[0]) * EMU_LANES;
    if (e->k == K_LD && n == 4 && !e->sext && e->dw[0] >= 4) {
      for (uint32_t l = 0; l < EMU_LANES; l++) {
        uint32_t v;
        memcpy(&v, ac.p + (size_t)l * 4, 4);
        dst[l] = v;
      }
    } else if (e->k == K_LD) {
      for (uint32_t l = 0; l < EMU_LANES; l++)
        dst[l] = extend(load_n(ac.p + (size_t)l * n, n), n, e->sext, e->dw[0]);
    } else if (n == 4) {
      for (uint32_t l = 0; l < EMU_LANES; l++) {
        uint32_t v = (uint32_t)dst[l];
        memcpy(ac.p + (size_t)l * 4, &v, 4);
      }
    } else if (n == 8) {
      memcpy(ac.p, dst, 8 * EMU_LANES); /* the slots are the lanes' 64-bit values */
    } else {
      for (uint32_t l = 0; l < EMU_LANES; l++) store_n(ac.p + (size_t)l * n, dst[l], n);
    }
  } else if (e->k == K_LD && e->vec == 1 && e->size == 4 && !e->sext && e->dw[0] >= 4) {
    /* one 32-bit element a lane, zero-extended: what extend() gives */
    uint64_t *dst = r + (size_t)e->o.d[0] * EMU_LANES;
    for (uint32_t mm = m; mm; mm &= mm - 1) {
      uint32_t l = (uint32_t)__builtin_ctz(mm), v;
      memcpy(&v, p[l], 4);
      dst[l] = v;
    }
  } else if (e->k == K_LD && e->size == 4 && !e->sext && (e->vec == 2 || e->vec == 4) &&
             e->dw[0] >= 4 && e->dw[1] >= 4 && (e->vec == 2 || (e->dw[2] >= 4 && e->dw[3] >= 4))) {
    /* .v2 / .v4 of 32-bit elements, zero-extended (ld.shared.v4.f32, the
       four words an ldmatrix.x4 row gives): extend() without its cases
       and no switch an element (make bench's tensor loop 105 -> 125 M
       thread-insns/s, one thread); the registers' rows looked up once */
    uint64_t *d0 = r + (size_t)e->o.d[0] * EMU_LANES, *d1 = r + (size_t)e->o.d[1] * EMU_LANES;
    if (e->vec == 4) {
      uint64_t *d2 = r + (size_t)e->o.d[2] * EMU_LANES, *d3 = r + (size_t)e->o.d[3] * EMU_LANES;
      for (uint32_t mm = m; mm; mm &= mm - 1) {
        uint32_t l = (uint32_t)__builtin_ctz(mm), v[4];
        memcpy(v, p[l], 16);
        d0[l] = v[0], d1[l] = v[1], d2[l] = v[2], d3[l] = v[3];
      }
    } else {
      for (uint32_t mm = m; mm; mm &= mm - 1) {
        uint32_t l = (uint32_t)__builtin_ctz(mm), v[2];
        memcpy(v, p[l], 8);
        d0[l] = v[0], d1[l] = v[1];
      }
    }
  } else if (e->k == K_LD) {
    for (uint32_t mm = m; mm; mm &= mm - 1) {
      uint32_t l = (uint32_t)__builtin_ctz(mm);
      for (unsigned k = 0; k < e->vec; k++) {
        uint64_t v = load_n(p[l] + k * e->size, e->size);
        r[(size_t)e->o.d[k] * EMU_LANES + l] = extend(v, e->size, e->sext, e->dw[k]);
      }
    }
  } else if (e->k == K_ST) {
    for (uint32_t mm = m; mm; mm &= mm - 1) {
      uint32_t l = (uint32_t)__builtin_ctz(mm);
      for (unsigned k = 0; k < e->vec; k++)
        store_n(p[l] + k * e->size, r[(size_t)e->o.s[k] * EMU_LANES + l], e->size);
    }
  } else {
    const uint64_t *bs = r + (size_t)e->o.s[0] * EMU_LANES;
    const uint64_t *cs = e->o.ns > 1 ? r + (size_t)e->o.s[1] * EMU_LANES : bs;
    uint64_t mask = e->size == 4 ? 0xffffffffull : ~0ull;
    for (uint32_t mm = m; mm; mm &= mm - 1) {
      uint32_t l = (uint32_t)__builtin_ctz(mm);
      uint64_t old = atom_do(e, p[l], bs[l] & mask, cs[l] & mask);
      if (!e->isred) r[(size_t)e->o.d[0] * EMU_LANES + l] = extend(old, e->size, 0, e->dw[0]);
    }
  }
  if (__builtin_expect(W->racing, 0) && e->k != K_ATOM && (gl | sl))
    race_mem(W, w, e, addr, p, g1 >= 0 ? NULL : gidx, g1, gl & ~drop & ~slack, sl, unit, lo, hi,
             n, mono);
  /* statistics */
  if (gl) {
    unsigned cnt = emu_popc32(gl);
    uint64_t bytes = (uint64_t)cnt * e->mbytes;
    W->st[S_GBYTES] += bytes;
    W->st[e->k == K_LD ? S_GLOAD : e->k == K_ST ? S_GSTORE : S_GATOM] += bytes;
    W->st[S_GACC]++;
    if (unit) {
      /* [lo, hi + n) contiguous, every element aligned and at most 8 bytes:
         no element spans two sectors and every sector between is hit */
      W->st[S_GSECT] += (hi >> 5) - (lo >> 5) + 1;
      if (e->k == K_LD) W->st[S_GSECT_LD] += (hi >> 5) - (lo >> 5) + 1;
      if (W->tracing) emu_trace_range(W->tr, w->idx, e->k != K_LD, lo >> 5, hi >> 5);
      if (emu_touch(d_of(W), g1, lo - d_of(W)->a[g1].base, hi + n - lo, &W->tc)) {
        W->oom = 1;
        eng_fail(W, w, -1, e->o.insn, 1, "out of memory for the footprint bitmap");
        return -1;
      }
      return 0;
    }
    /* lanes within SPAN_WORDS x 64 bytes of one allocation (a gather from
       a tile, a strided or permuted access): their bytes as a bitmap from
       a 64-byte boundary, whose nonzero 32-bit halves are the distinct
       sectors and whose words go to the footprint as they are */
    emu_device *dv = d_of(W);
    uint64_t gb = g1 >= 0 ? dv->a[g1].base : 0, sb = (lo - gb) & ~63ull;
    if (g1 >= 0 && !W->tracing && !((drop | slack) & gl) && !(gb & 63) &&
        hi + n - gb - sb <= 64 * SPAN_WORDS) {
      uint64_t map[SPAN_WORDS + 1] = {0};
      uint64_t bits = (2ull << (n - 1)) - 1; /* n <= 32 bytes */
      for (uint32_t mm = gl; mm; mm &= mm - 1) {
        uint64_t o = addr[__builtin_ctz(mm)] - gb - sb;
        unsigned b = (unsigned)(o & 63);
        map[o >> 6] |= bits << b;
        if (b + n > 64) map[(o >> 6) + 1] |= bits >> (64 - b);
      }
      unsigned nw = (unsigned)((hi + n - 1 - gb - sb) >> 6) + 1, nd = 0;
      for (unsigned i = 0; i < nw; i++) nd += ((uint32_t)map[i] != 0) + ((map[i] >> 32) != 0);
      W->st[S_GSECT] += nd;
      if (e->k == K_LD) W->st[S_GSECT_LD] += nd;
      if (emu_touch_map(dv, g1, sb, map, nw, &W->tc)) {
        W->oom = 1;
        eng_fail(W, w, -1, e->o.insn, 1, "out of memory for the footprint bitmap");
        return -1;
      }
      goto global_done;
    }
    /* distinct 32-byte sectors; ascending addresses need no sort */
    uint64_t sec[2 * EMU_LANES];
    unsigned ns = 0;
    for (uint32_t mm = gl; mm; mm &= mm - 1) {
      uint64_t a = addr[__builtin_ctz(mm)];
      sec[ns++] = a >> 5;
      if (((a + n - 1) >> 5) != (a >> 5)) sec[ns++] = (a + n - 1) >> 5;
    }
    unsigned nd = count_distinct(sec, ns); /* sorts sec */
    W->st[S_GSECT] += nd;
    if (e->k == K_LD) W->st[S_GSECT_LD] += nd;
    if (W->tracing) emu_trace_list(W->tr, w->idx, e->k != K_LD, sec, ns);
    if ((gl & ~drop & ~slack) &&
        touch_lanes(W, addr, g1 >= 0 ? NULL : gidx, g1, gl & ~drop & ~slack, n, mono)) {
      W->oom = 1;
      eng_fail(W, w, -1, e->o.insn, 1, "out of memory for the footprint bitmap");
      return -1;
    }
  global_done:;
  }
  if (sl) {
    unsigned cnt = emu_popc32(sl);
    W->st[S_SBYTES] += (uint64_t)cnt * e->mbytes;
    W->st[S_SACC]++;
    /* replays: the most distinct 4-byte words any one bank (word % 32)
       serves, less one.  The usual case first: every lane's words [o >> 2,
       (o + n - 1) >> 2] within 64 of the lowest, as bits of one map word
       from it; bits j and j + 32 are one bank, so a bank serves two
       distinct words at most, and two only where both halves of the map
       have a bit.  (The word list below took 25 % of gemm_tiled's
       emulation, bank by bank.) */
    uint64_t flo = UINT64_MAX, fhi = 0, fw = 0;
    for (uint32_t mm = sl; mm; mm &= mm - 1) {
      uint64_t o = (uint64_t)(p[__builtin_ctz(mm)] - W->sh);
      uint64_t a = o >> 2, b = (o + n - 1) >> 2;
      flo = a < flo ? a : flo;
      fhi = b > fhi ? b : fhi;
      fw += b - a + 1;
    }
    if (fhi - flo < 64 && fw <= 4 * EMU_LANES) { /* the list below would hold every word */
      uint64_t x = 0;
      for (uint32_t mm = sl; mm; mm &= mm - 1) {
        uint64_t o = (uint64_t)(p[__builtin_ctz(mm)] - W->sh);
        uint64_t a = o >> 2, b = (o + n - 1) >> 2;
        x |= ((2ull << (b - a)) - 1) << (a - flo);
      }
      W->st[S_SREPLAY] += ((uint32_t)x & (uint32_t)(x >> 32)) != 0;
      goto shared_done;
    }
    uint64_t wd[4 * EMU_LANES], wlo = UINT64_MAX, whi = 0;
    unsigned nw = 0;
    for (uint32_t mm = sl; mm; mm &= mm - 1) {
      uint32_t l = (uint32_t)__builtin_ctz(mm);
      uint64_t o = (uint64_t)(p[l] - W->sh);
      for (uint64_t x = o >> 2; x <= (o + n - 1) >> 2 && nw < 4 * EMU_LANES; x++) {
        wd[nw++] = x;
        if (x < wlo) wlo = x;
        if (x > whi) whi = x;
      }
    }
    unsigned per[32] = {0}, mx = 0;
    if (whi - wlo < 64) {
      /* the usual case: one map word, kept in a register */
      uint64_t x = 0;
      for (unsigned i = 0; i < nw; i++) x |= 1ull << (wd[i] - wlo);
      for (; x; x &= x - 1) {
        unsigned b = (unsigned)__builtin_ctzll(x) & 31;
        if (++per[b] > mx) mx = per[b];
      }
    } else if (whi - wlo < 64 * SH_SPAN_WORDS) {
      /* the words as a bitmap from wlo: each set bit is one distinct word;
         bit j of a 64-bit map word is in bank (wlo + j) % 32, and shifting
         every word by wlo only renames the banks, so the maximum is the same */
      uint64_t bm[SH_SPAN_WORDS] = {0};
      for (unsigned i = 0; i < nw; i++) bm[(wd[i] - wlo) >> 6] |= 1ull << ((wd[i] - wlo) & 63);
      for (unsigned k = 0; k <= (whi - wlo) >> 6; k++)
        for (uint64_t x = bm[k]; x; x &= x - 1) {
          unsigned b = (unsigned)__builtin_ctzll(x) & 31;
          if (++per[b] > mx) mx = per[b];
        }
    } else {
      count_distinct(wd, nw); /* sorts */
      for (unsigned i = 0; i < nw; i++) {
        if (i && wd[i] == wd[i - 1]) continue;
        unsigned b = (unsigned)(wd[i] & 31);
        if (++per[b] > mx) mx = per[b];
      }
    }
    if (mx > 1) W->st[S_SREPLAY] += mx - 1;
  }
shared_done:
  if (ll) W->st[S_LBYTES] += (uint64_t)emu_popc32(ll) * e->mbytes;
  if (cl && const_indexed(w, e)) {
    /* the constant cache serves one address a clock: the distinct words */
    uint64_t cw[EMU_LANES];
    unsigned nc = 0;
    for (uint32_t mm = cl; mm; mm &= mm - 1) cw[nc++] = addr[__builtin_ctz(mm)] >> 2;
    W->st[S_CACC]++;
    W->st[S_CREPLAY] += count_distinct(cw, nc) - 1;
  }
  return 0;
}

/* ------------------------------------------- emu_mma.c's memory path -- */

/*
 * A shared access of vec = 2 or 4 words a lane (ldmatrix's and stmatrix's
 * 16-byte rows, cp.async's shared stores), every lane aligned to its n =
 * 4 vec bytes and inside the CTA's window: 0 when done; 1 when mem_op must
 * do it, before anything is read or written.  The bank count is mem_op's:
 * aligned n-byte accesses are equal or disjoint, and the one at word k
 * covers banks k % 32 .. k % 32 + vec - 1, the same vec banks as every
 * access with the same (k / vec) % (32 / vec); each bank serves as many
 * distinct words as its group has distinct accesses.  Through mem_op an
 * eop was built and the lanes went through its general paths: make
 * bench's ldmatrix + mma.sync loop spent 57 % of its time there.
 */
static int x_shared_vec(worker *W, uint64_t *r, const emu_xacc *a, uint32_t m) {
  if (W->racing) return 1; /* the lanes go where race_mem sees them */
  unsigned vec = a->vec, n = 4u * vec, sh = vec == 4 ? 4 : 3; /* n = 1 << sh */
  const uint64_t *base = r + (size_t)a->addr * EMU_LANES;
  uint64_t shs = W->L->shsize, bad = 0;
  uint64_t off[EMU_LANES], key[EMU_LANES];
  unsigned nk = 0;
  for (uint32_t mm = m; mm; mm &= mm - 1) {
    uint32_t l = (uint32_t)__builtin_ctz(mm);
    uint64_t ad = base[l];
    uint64_t o = ad - EMU_SHARED_WIN < EMU_WIN_SIZE ? ad - EMU_SHARED_WIN : ad;
    bad |= (ad & (n - 1)) | (uint64_t)(o > shs || n > shs - o);
    off[l] = o;
    /* insertion into the sorted keys (at most 32) */
    uint64_t k = o >> sh;
    unsigned i = nk++;
    while (i && key[i - 1] > k) key[i] = key[i - 1], i--;
    key[i] = k;
  }
  if (bad) return 1;
  if (a->write) {
    for (uint32_t mm = m; mm; mm &= mm - 1) {
      uint32_t l = (uint32_t)__builtin_ctz(mm);
      for (unsigned j = 0; j < vec; j++) {
        uint32_t v = (uint32_t)r[(size_t)a->data[j] * EMU_LANES + l];
        memcpy(W->sh + off[l] + 4 * j, &v, 4);
      }
    }
  } else {
    for (uint32_t mm = m; mm; mm &= mm - 1) {
      uint32_t l = (uint32_t)__builtin_ctz(mm);
      for (unsigned j = 0; j < vec; j++) {
        uint32_t v;
        memcpy(&v, W->sh + off[l] + 4 * j, 4);
        r[(size_t)a->data[j] * EMU_LANES + l] = v;
      }
    }
  }
  unsigned per[16] = {0}, mx = 0, gm = 32 / vec - 1; /* the groups: k & gm */
  for (unsigned i = 0; i < nk; i++) {
    if (i && key[i] == key[i - 1]) continue;
    unsigned g = (unsigned)(key[i] & gm);
    if (++per[g] > mx) mx = per[g];
  }
  W->st[S_SBYTES] += (uint64_t)nk * n;
  W->st[S_SACC]++;
  if (mx > 1) W->st[S_SREPLAY] += mx - 1;
  return 0;
}

uint8_t *emu_x_shared(emu_xctx *x, uint64_t *size) {
  if (x->W->racing) return NULL; /* the accesses go where race_mem sees them */
  *size = x->W->L->shsize;
  return x->W->sh;
}

void emu_x_shared_count(emu_xctx *x, uint64_t bytes, uint64_t accesses, uint64_t replays) {
  uint64_t *st = x->W->st;
  st[S_SBYTES] += bytes;
  st[S_SACC] += accesses;
  st[S_SREPLAY] += replays;
}

int emu_x_access(emu_xctx *x, uint64_t *r, const emu_xacc *a, uint32_t m) {
  if (a->space == PTX_SP_SHARED && a->size == 4 && (a->vec == 2 || a->vec == 4) && m &&
      !x_shared_vec(x->W, r, a, m))
    return 0;
  eop t;
  memset(&t, 0, sizeof t);
  t.o.insn = x->e->o.insn;
  t.o.cc = EMU_NOSLOT;
  t.k = a->write ? K_ST : K_LD;
  t.space = a->space;
  t.size = a->size;
  t.vec = a->vec;
  t.guard = NONE;
  t.abase = a->addr;
  t.mbytes = (uint32_t)a->size * a->vec;
  for (unsigned j = 0; j < a->vec; j++) {
    if (a->write) {
      t.o.s[j] = a->data[j];
    } else {
      t.o.d[j] = a->data[j];
      t.dw[j] = 8;
    }
  }
  if (a->write) t.o.ns = a->vec;
  else t.o.nd = a->vec;
  return m ? eng_mem_op(x->W, x->w, r, &t, m) : 0;
}

void emu_x_fail(emu_xctx *x, int lane, const char *fmt, ...) {
  char body[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(body, sizeof body, fmt, ap);
  va_end(ap);
  eng_fail(x->W, x->w, lane, x->e->o.insn, 0, "%s", body);
}

/* Checked read for printf (generic addresses of one lane). */
typedef struct rdctx { worker *W; warp *w; uint32_t lane; } rdctx;
static int printf_read(void *vctx, uint64_t a, void *dst, size_t n) {
  rdctx *c = vctx;
  lacc ac;
  ac.g = -1;
  for (size_t i = 0; i < n; i++) {
    if (resolve(c->W, c->w, c->lane, PTX_SP_GENERIC, a + i, 1, 0, &ac) != E_OK) return -1;
    ((uint8_t *)dst)[i] = *ac.p;
  }
  return 0;
}

/* Value of call argument j for one lane: from a caller var or a slot. */
void eng_arg_bytes(worker *W, const warp *w, const frame *fr,
                      const uint64_t *r, const carg *a, uint32_t lane,
                      void *dst, uint64_t n) {
  if (a->isvar) {
    memcpy(dst, lane_local(W, w, lane) + fr->lbase + fr->fn->voff[a->v], n);
  } else {
    uint64_t v = r[(size_t)a->v * EMU_LANES + lane];
    memcpy(dst, &v, n > 8 ? 8 : n);
  }
}

int eng_do_printf(worker *W, warp *w, const frame *fr, uint64_t *r,
                     const eop *e, uint32_t m) {
  const ecall *c = e->call;
  for (uint32_t mm = m; mm; mm &= mm - 1) {
    uint32_t l = (uint32_t)__builtin_ctz(mm);
    uint64_t fmt = 0, args = 0;
    eng_arg_bytes(W, w, fr, r, &c->args[0], l, &fmt, 8);
    eng_arg_bytes(W, w, fr, r, &c->args[1], l, &args, 8);
    rdctx rc = {W, w, l};
    char msg[256];
    size_t before = W->pf.len;
    if (emu_printf_format(&W->pf, fmt, args, printf_read, &rc, msg, sizeof msg) != 0) {
      eng_fail(W, w, (int)l, e->o.insn, 0, "%s", msg);
      return -1;
    }
    if (c->nrets) {
      int32_t cnt = (int32_t)(W->pf.len - before);
      const carg *ra = &c->rets[0];
      if (ra->isvar) {
        const ptx_var *v = &fr->fn->f->vars[ra->v];
        memcpy(lane_local(W, w, l) + fr->lbase + fr->fn->voff[ra->v], &cnt,
               v->size < 4 ? v->size : 4);
      } else {
        r[(size_t)ra->v * EMU_LANES + l] = (uint32_t)cnt;
      }
    }
  }
  return 0;
}

/* What tex_view gives for an invalid handle under EMU_OOB_WARN. */
static const emu_texview bad_texview;

/* Opens handle h for lane l (below). */
static const emu_texview *tex_view_open(worker *W, const warp *w, uint64_t h, const eop *e,
                                        uint32_t l);

/* The texture or surface object in lane l's handle register: the one the
   worker has open (inline: one test a lane), else opened. */
static inline const emu_texview *tex_view(worker *W, const warp *w, uint64_t *r, const eop *e,
                                          uint32_t l) {
  uint64_t h = r[(size_t)e->abase * EMU_LANES + l];
  if (W->tv.t && W->tv.handle == h) return &W->tv;
  return tex_view_open(W, w, h, e, l);
}

static const emu_texview *tex_view_open(worker *W, const warp *w, uint64_t h, const eop *e,
                                        uint32_t l) {
  char why[256];
  if (emu_texview_open(W->L->em->d, h, &W->tv, why, sizeof why)) {
    W->tv.t = NULL;
    if (W->L->cfg->oob == EMU_OOB_WARN) {
      /* a GPU reads zeros through a bad handle: counted, the first named */
      note_tolerated(W, w, l, e, 0, 0, 0, 0, NULL, why);
      return &bad_texview;
    }
    W->kind = EMU_FAULT_ADDRESS;
    eng_fail(W, w, (int)l, e->o.insn, 0, "%s", why);
    return NULL;
  }
  return &W->tv;
}

static int tex_oom(worker *W, const warp *w, const eop *e) {
  W->oom = 1;
  eng_fail(W, w, -1, e->o.insn, 1, "out of memory for the footprint bitmap");
  return -1;
}

/* tex.geom.v4.dtype.ctype d, [h, {c}] for the lanes in m. */
int eng_do_tex(worker *W, warp *w, uint64_t *r, const eop *e, uint32_t m) {
  const ptx_insn *in = e->o.insn;
  int layered = e->geom == EMU_GEOM_A1D || e->geom == EMU_GEOM_A2D;
  int icoord = in->type2 == PTX_T_S32;
  for (uint32_t mm = m; mm; mm &= mm - 1) {
    uint32_t l = (uint32_t)__builtin_ctz(mm);
    const emu_texview *v = tex_view(W, w, r, e, l);
    if (!v) return -1;
    if (v == &bad_texview) {
      for (unsigned k = 0; k < e->o.nd; k++) r[(size_t)e->o.d[k] * EMU_LANES + l] = 0;
      continue;
    }
    double c[4], out[4];
    int layer = 0;
    unsigned j = 0;
    if (layered) layer = (int32_t)r[(size_t)e->o.s[j++] * EMU_LANES + l];
    for (unsigned k = 0; j < e->ncoord; j++, k++) {
      uint64_t raw = r[(size_t)e->o.s[j] * EMU_LANES + l];
      c[k] = icoord ? (double)(int32_t)raw : (double)f32_of((uint32_t)raw);
    }
    if (emu_tex_sample(W->L->em->d, v, e->geom, c, layer, icoord, &W->tc, out))
      return tex_oom(W, w, e);
    for (unsigned k = 0; k < e->o.nd && k < 4; k++) {
      uint64_t bits;
      if (in->type == PTX_T_F32) bits = bits_f32((float)out[k]);
      else if (in->type == PTX_T_S32) bits = (uint32_t)(int32_t)out[k];
      else bits = (uint32_t)(out[k] < 0 ? 0 : out[k]);
      r[(size_t)e->o.d[k] * EMU_LANES + l] = bits;
    }
  }
  return 0;
}

/* suld.b / sust.b for the lanes in m. */
int eng_do_surf(worker *W, warp *w, uint64_t *r, const eop *e, uint32_t m) {
  int layered = e->geom == EMU_GEOM_A1D || e->geom == EMU_GEOM_A2D;
  unsigned bytes = (unsigned)e->size * e->vec;
  for (uint32_t mm = m; mm; mm &= mm - 1) {
    uint32_t l = (uint32_t)__builtin_ctz(mm);
    const emu_texview *v = tex_view(W, w, r, e, l);
    if (!v) return -1;
    if (v == &bad_texview) { /* a read gives zeros, a write is dropped */
      for (unsigned k = 0; e->k == K_SULD && k < e->vec; k++)
        r[(size_t)e->o.d[k] * EMU_LANES + l] = 0;
      continue;
    }
    int64_t c[4] = {0, 0, 0, 0};
    int layer = 0;
    unsigned j = 0;
    if (layered) layer = (int32_t)r[(size_t)e->o.s[j++] * EMU_LANES + l];
    for (unsigned k = 0; j < e->ncoord; j++, k++)
      c[k] = (int32_t)r[(size_t)e->o.s[j] * EMU_LANES + l];
    uint8_t *p = NULL;
    int rc = emu_surf_access(W->L->em->d, v, c, layer, e->geom, bytes, e->smode, &p, &W->tc);
    if (rc < 0) return tex_oom(W, w, e);
    if (rc > 0) {
      W->kind = EMU_FAULT_ADDRESS;
      eng_fail(W, w, (int)l, e->o.insn, 0,
           "surface %s of %u bytes out of bounds at byte %lld, row %lld, slice/layer %lld "
           "(surface %llu x %llu x %llu elements of %llu bytes)",
           e->k == K_SULD ? "read" : "write", bytes, (long long)c[0], (long long)c[1],
           (long long)(layered ? layer : c[2]), (unsigned long long)v->t->width,
           (unsigned long long)v->t->height, (unsigned long long)v->t->depth,
           (unsigned long long)v->elem);
      return -1;
    }
    for (unsigned k = 0; k < e->vec; k++) {
      if (e->k == K_SULD) {
        uint64_t x = p ? load_n(p + k * e->size, e->size) : 0;
        r[(size_t)e->o.d[k] * EMU_LANES + l] = extend(x, e->size, 0, e->dw[k]);
      } else if (p) {
        store_n(p + k * e->size, r[(size_t)e->o.s[e->ncoord + k] * EMU_LANES + l], e->size);
      }
    }
  }
  return 0;
}

/* NUL-terminated string at generic address a for one lane (truncated to
   cap - 1 bytes; "?" when unreadable). */
static void read_cstr(worker *W, warp *w, uint32_t lane, uint64_t a, char *buf, size_t cap) {
  rdctx rc = {W, w, lane};
  size_t i = 0;
  for (; i + 1 < cap; i++) {
    char ch;
    if (printf_read(&rc, a + i, &ch, 1) != 0) {
      snprintf(buf, cap, "?");
      return;
    }
    if (!(buf[i] = ch)) return;
  }
  buf[i] = 0;
}

/* A failed device assert(): __assertfail(message, file, line, function,
   charsize) fails the launch as cudaErrorAssert does, naming all four. */
void eng_do_assert(worker *W, warp *w, const frame *fr, const uint64_t *r, const eop *e,
                      uint32_t m) {
  const ecall *c = e->call;
  uint32_t l = (uint32_t)__builtin_ctz(m);
  uint64_t msg = 0, file = 0, func = 0;
  uint32_t line = 0;
  eng_arg_bytes(W, w, fr, r, &c->args[0], l, &msg, 8);
  eng_arg_bytes(W, w, fr, r, &c->args[1], l, &file, 8);
  eng_arg_bytes(W, w, fr, r, &c->args[2], l, &line, 4);
  eng_arg_bytes(W, w, fr, r, &c->args[3], l, &func, 8);
  char ms[256], fs[256], fn[256];
  read_cstr(W, w, l, msg, ms, sizeof ms);
  read_cstr(W, w, l, file, fs, sizeof fs);
  read_cstr(W, w, l, func, fn, sizeof fn);
  W->kind = EMU_FAULT_ASSERT;
  eng_fail(W, w, (int)l, e->o.insn, 0, "device assertion `%s` failed at %s:%u in %s", ms, fs, line,
       fn);
}

