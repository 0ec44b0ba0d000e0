/*
 * emu_trace.h -- the address streams of traced CTAs (emu_trace.c): what the
 * memory-hierarchy model needs (docs/features.md, "Reuse and sharing").
 * Internal to the emulator.
 *
 * A worker traces the global loads and stores of the CTAs the launch picks
 * (emu_launch.c: at most EMU_TRACE_CTAS spread over the grid, plus the grid
 * neighbours of one or two of them), one CTA at a time: every warp-level
 * access appends its 128-byte lines with a mask of the 32-byte sectors it
 * touched, tagged with the warp's count of memory instructions so far.  At
 * the CTA's end the loads are put in the order a GPU's schedulers would
 * interleave the warps (round robin: by that count, then by warp), and
 * the stack distance of every reuse -- the distinct lines touched since the
 * line's previous access -- is binned by the bytes those lines hold.
 */
#ifndef KCAST_EMU_TRACE_H
#define KCAST_EMU_TRACE_H

#include <stddef.h>
#include <stdint.h>

/* Reuse-distance bins: reuse within 512 B, 1 KiB, ... 4 MiB of distinct
   data (bin b: below 512 << b bytes). */
#define EMU_TRACE_BINS 14
/* CTAs traced per launch (besides the neighbour probes). */
#define EMU_TRACE_CTAS 16
/* Load lines a CTA's stack distances are computed on exactly; above it, a
   spatially hashed sample of about this many (Waldspurger et al., SHARDS,
   FAST 2015): every access of a sampled line is kept, distances are scaled
   by the sampling rate. */
#define EMU_TRACE_SAMPLE 32768u

/* What one traced CTA did. */
typedef struct emu_trace_res {
  uint64_t cta;            /* linear index */
  unsigned role;           /* EMU_TRACE_* bits */
  double load_sectors;     /* load sector requests (all of them, not sampled) */
  double reuse[EMU_TRACE_BINS]; /* of those: reuse of a sector the CTA loaded
                              before, within bin b's bytes of distinct data
                              (cumulative over b) */
  double reused;           /* reuse at any distance */
  double store_sectors;    /* distinct 32-byte sectors the CTA stored to */
  uint32_t thr;            /* the line sample: lines whose hash is <= thr */
  uint64_t *lines;         /* distinct sampled load lines, ascending:
                              line << 4 | sector mask (owned) */
  size_t nlines;
} emu_trace_res;

enum { EMU_TRACE_MAIN = 1, /* one of the spread CTAs: its reuse counts */
       EMU_TRACE_PROBE = 2 /* a neighbour: its lines count for sharing */ };

typedef struct emu_trace emu_trace;

emu_trace *emu_trace_new(void);
void emu_trace_free(emu_trace *t);
/* Start tracing CTA cta of nwarps warps; -1 on ENOMEM. */
int emu_trace_begin(emu_trace *t, uint64_t cta, unsigned role, uint32_t nwarps);
/* One warp-level access of warp w: sectors s0..s1 (inclusive), or the n
   sectors of sec[] (ascending, duplicates allowed); store: a store or an
   atomic (not a load). */
void emu_trace_range(emu_trace *t, uint32_t w, int store, uint64_t s0, uint64_t s1);
void emu_trace_list(emu_trace *t, uint32_t w, int store, const uint64_t *sec, unsigned n);
/* The CTA's results into *out (out->lines owned by out); -1 on ENOMEM. */
int emu_trace_end(emu_trace *t, emu_trace_res *out);
void emu_trace_res_free(emu_trace_res *r);

/* The launch's reuse and sharing features from the traced CTAs' results
   (n of them; ntotal CTAs in the grid, gdim its shape), into out[]:
   EMU_TRACE_BINS reuse fractions, then mem.cta_reuse, mem.share_x,
   mem.share_y, mem.share_z, mem.share_far, mem.store_footprint_bytes
   (EMU_TRACE_NFEAT values, names in emu_trace_feat_name).  0 or -1
   (ENOMEM). */
#define EMU_TRACE_NFEAT (EMU_TRACE_BINS + 6)
extern const char *const emu_trace_feat_name[EMU_TRACE_NFEAT];
int emu_trace_features(const emu_trace_res *r, size_t n, uint64_t ntotal, const uint32_t gdim[3],
                       double out[EMU_TRACE_NFEAT]);

#endif
