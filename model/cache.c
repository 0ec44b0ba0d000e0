/*
 * cache.c -- the memory-hierarchy model: where a launch's global loads are
 * served on a given GPU (L1, L2, DRAM) and what DRAM moves, from the
 * emulator's hardware-independent reuse and sharing features
 * (emulator/emu_trace.c; docs/features.md "Reuse and sharing") and the
 * launch's residency on the GPU (analytic.c).  The analytic estimate
 * charges each level at its own bandwidth and latency, and the derived
 * family cache.* gives the figures to the forests.
 *
 * The model (docs/features.md, "cache.*", states each assumption):
 *
 *  L1, per SM.  Capacity: the GPU's L1 data cache less the shared-memory
 *  carve-out its resident CTAs need (cc >= 7.0: one array; before, the
 *  L1/texture cache caches read-only loads only).  R CTAs resident on an SM
 *  interleave their streams, so a reuse within one CTA hits when its stack
 *  distance is below C1 / R (each CTA's share; Mattson's LRU stack property
 *  per CTA, sharing by the fraction of distinct data each brings in).  Data
 *  the whole grid reads (share_far) is brought in by one of the R and hit
 *  by the others.  Grid neighbours run on other SMs: no L1 sharing.
 *
 *  L2, shared.  The L1 misses reach it.  A CTA's reuse beyond its L1 share
 *  hits when within C2 / (CTAs running at once): the L2 share of each CTA
 *  of a wave.  Data a CTA first touches and its x neighbour (one CTA back,
 *  running at the same time) also read hits; a y or z neighbour's (gx or
 *  gx * gy CTAs back) hits when what the CTAs between bring in -- that many
 *  CTAs times the footprint per CTA -- fits in L2, else in proportion.
 *  Grid-wide data hits.  A footprint that fits in L2 makes every
 *  non-compulsory load a hit.
 *
 *  DRAM.  Reads: the L2 load misses, at least the loaded footprint
 *  (compulsory).  Writes: the distinct stored bytes (L2 is write-back and
 *  merges repeated stores).
 *
 *  Without the reuse features (launches recorded before them, CUDA Flux
 *  counts), the rule the estimate used before: DRAM moves the footprint
 *  once and the stores when the footprint fits in L2, every sector
 *  otherwise; no L1 hits.
 */
#include <math.h>
#include <string.h>

#include "model/an_int.h"
#include "model/rf_int.h"

/* Shared-memory carve-outs the driver chooses from (KB), cc >= 7.0: the
   smallest that holds the resident CTAs' shared memory (the CUDA C++
   Programming Guide, "Shared Memory" per compute capability; capped by the
   GPU's largest). */
static double carveout_kb(const an_gpu *g, double need_kb) {
  static const double steps[] = {0, 8, 16, 32, 64, 96, 100, 132, 164, 196, 228};
  int cc = g->cc_major * 10 + g->cc_minor;
  double lo = cc == 75 ? 32 : 0; /* Turing: 32 or 64 KB */
  for (size_t i = 0; i < sizeof steps / sizeof *steps; i++)
    if (steps[i] >= lo && steps[i] >= need_kb && steps[i] <= g->smem_per_sm_kb) return steps[i];
  return g->smem_per_sm_kb;
}

/* The fraction of load sectors reused within x bytes of distinct data:
   the reuse bins interpolated in log2(x); below the first bin in
   proportion, above the last the reuse at any distance counts once x is
   4x beyond it. */
static double reuse_within(const an_in *in, double x) {
  if (!(x > 0)) return 0;
  const double *f = &in->v[K_REUSE0];
  double lx = log2(x / 512.0);
  if (lx <= 0) return f[0] * x / 512.0;
  if (lx >= AN_REUSE_BINS - 1) {
    double extra = fmin(1.0, (lx - (AN_REUSE_BINS - 1)) / 2.0);
    double all = fmax(in->v[K_CTAREUSE], f[AN_REUSE_BINS - 1]);
    return f[AN_REUSE_BINS - 1] + (all - f[AN_REUSE_BINS - 1]) * extra;
  }
  int b = (int)lx;
  double t = lx - b;
  return f[b] + (f[b + 1] - f[b]) * t;
}

int an__mem(const an_gpu *g, const an_in *in, const an_occupancy *o, an_mem *m) {
  memset(m, 0, sizeof *m);
  const double *v = in->v;
  double sectors = in->have[K_GSECT] ? v[K_GSECT] : v[K_GBYTES] / 32;
  /* the loads' sectors: counted, else in proportion to the load bytes
     (else to what the stores leave), else all */
  double loads = sectors;
  if (in->have[K_GLSECT]) loads = v[K_GLSECT];
  else if (in->have[K_GLBYTES] && v[K_GBYTES] > 0) loads = sectors * v[K_GLBYTES] / v[K_GBYTES];
  else if (in->have[K_GSTORE] && v[K_GBYTES] > 0)
    loads = sectors * fmax(0, 1 - v[K_GSTORE] / v[K_GBYTES]);
  if (loads > sectors) loads = sectors;
  m->load_sectors = loads;
  m->store_sectors = sectors - loads;
  int cc = g->cc_major * 10 + g->cc_minor;
  double l2 = g->l2_mb * 1048576.0, foot = v[K_FOOT];
  double l1kb = g->l1_kb;
  if (cc >= 70) {
    double per_sm = fmax(1, fmin(o->ctas_per_sm, ceil(v[K_CTAS] / g->sms)));
    double need = per_sm * (o->shared > 0 ? o->shared + g->smem_reserved_b : 0) / 1024;
    l1kb = fmax(0, g->l1_kb - carveout_kb(g, need));
  }
  m->l1_bytes = l1kb * 1024;
  double stored = in->have[K_STFOOT] ? v[K_STFOOT] : v[K_GSTORE];
  m->dram_write = stored;
  m->modelled = in->have[K_REUSE0];
  if (!m->modelled) {
    /* the footprint rule (see the top) */
    double once = foot + v[K_GSTORE];
    if (foot > 0 && once < sectors * 32 && foot <= l2) {
      m->dram_read = foot;
      m->l2_hits = fmax(0, loads - foot / 32);
    } else {
      m->dram_read = loads * 32;
    }
    m->l2_requests = sectors;
    return 0;
  }
  /* CTAs sharing an SM: resident ones, no more than the grid gives it */
  double ctas = v[K_CTAS], sms = g->sms, R = fmin(o->ctas_per_sm, ceil(ctas / sms));
  if (R < 1) R = 1;
  /* read-only loads before cc 7.0: the L1/texture cache caches those alone */
  double cached = 1;
  if (cc < 70) {
    double ldg = v[K_LDG];
    cached = ldg > 0 ? fmin(1.0, in->ops.nc / ldg) : 0;
  }
  double cold = loads * (1 - fmin(1.0, v[K_CTAREUSE]));
  double c1 = m->l1_bytes / R;
  double hit1 = loads * reuse_within(in, c1) * cached;
  double far = cold * fmin(1.0, v[K_SHFAR]);
  double far1 = m->l1_bytes > 0 ? far * (R - 1) / R * cached : 0;
  m->l1_hits = fmin(loads, hit1 + far1);
  double miss1 = loads - m->l1_hits;
  /* L2 */
  double running = fmin(ctas, sms * R);
  double c2 = l2 / (running > 1 ? running : 1);
  double hit2 = fmax(0, loads * reuse_within(in, fmax(c1, c2)) - hit1);
  double per_cta = ctas > 0 ? foot / ctas : 0;
  double gx = v[K_GX] > 0 ? v[K_GX] : 1, gy = v[K_GY] > 0 ? v[K_GY] : 1;
  double py = gx * per_cta <= l2 ? 1 : l2 / (gx * per_cta);
  double pz = gx * gy * per_cta <= l2 ? 1 : l2 / (gx * gy * per_cta);
  double sx = fmin(1.0, v[K_SHX]), sy = fmin(1.0, v[K_SHY]), sz = fmin(1.0, v[K_SHZ]);
  double ux = sx, uy = (1 - sx) * sy, uz = (1 - sx) * (1 - sy) * sz;
  double uf = (1 - sx) * (1 - sy) * (1 - sz) * fmin(1.0, v[K_SHFAR]);
  hit2 += cold * (ux + uy * py + uz * pz) + fmax(0, cold * uf - far1);
  m->l2_hits = fmin(miss1, hit2);
  double compulsory = fmax(0, foot - (in->have[K_STFOOT] ? v[K_STFOOT] : 0));
  double dram = (miss1 - m->l2_hits) * 32;
  if (foot > 0 && foot <= l2) dram = fmin(dram, compulsory);
  m->dram_read = fmax(dram, fmin(compulsory, loads * 32));
  m->l2_hits = fmin(miss1, fmax(0, miss1 - m->dram_read / 32));
  m->l2_requests = miss1 + m->store_sectors;
  return 0;
}
