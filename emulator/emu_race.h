/*
 * emu_race.h -- the race check of a launch (emu_launch_cfg.racecheck;
 * emu_race.c has the design).  Internal to the emulator: emu_access.c calls it
 * from its memory path and emu_launch.c names what it finds.
 *
 * Two shadows, both by byte, never by word:
 *   global  one per launch, shared by the workers (OpenMP threads): for
 *           each 4-byte word of the allocations the launch touches, which
 *           CTA wrote which of its bytes and which read them (atomic
 *           words); a word two CTAs write, or one writes and another
 *           reads, with plain loads and stores, is a race;
 *   shared  one per worker, for the CTA it runs: for each byte of the
 *           CTA's shared window, which warp wrote and which read it since
 *           the last barrier; a byte one warp writes and another reads or
 *           writes in the same barrier interval is a race.
 * Each racing word is counted once (global: per launch; shared: per CTA
 * and barrier interval), whatever the order the CTAs ran in.
 */
#ifndef KCAST_EMU_RACE_H
#define KCAST_EMU_RACE_H

#include <stddef.h>
#include <stdint.h>

/* CTAs one launch's global shadow can tell apart (ids 1 .. EMU_RACE_IDS):
   its words hold 26-bit CTA numbers.  A launch running more CTAs than this
   is not checked in global memory (said in the launch's note). */
#define EMU_RACE_IDS ((1u << 26) - 2)
/* The most memory the global shadow of a launch takes: 8 bytes per 4-byte
   word touched, plus 32 bytes per word that two CTAs share byte by byte.
   Past it the accesses to words not yet shadowed go unchecked (said). */
#define EMU_RACE_MAX_BYTES (1ull << 30)

/* What the other side of a race was. */
enum {
  EMU_RACE_WW = 1, /* both wrote */
  EMU_RACE_RW,     /* this access reads what the other wrote */
  EMU_RACE_WR      /* this access writes what the other read */
};
/* emu_race_hit.other when more than one CTA or warp read the bytes. */
#define EMU_RACE_MANY UINT32_MAX

/* The first race one check call found. */
typedef struct emu_race_hit {
  int kind;        /* EMU_RACE_* */
  uint32_t other;  /* the other CTA's id (global) or warp + 1 (shared), or
                      EMU_RACE_MANY */
  uint64_t off;    /* the first racing byte: offset in the allocation
                      (global) or in the shared window */
  uint32_t oinsn;  /* shared: the other access's instruction id
                      (emu_race_sh_check), 0 when not known */
} emu_race_hit;

/* ------------------------------------------------------------ global -- */

typedef struct emu_race emu_race;

/* The global shadow of a launch over a device of nalloc allocations of the
   sizes given (copied); NULL on ENOMEM. */
emu_race *emu_race_new(size_t nalloc, const uint64_t *sizes);
void emu_race_free(emu_race *r);

/* A worker's last shadow chunk (as emu_tcache). */
typedef struct emu_race_cache {
  long gi;
  uint64_t chunk;
  uint64_t *p;
} emu_race_cache;

/*
 * CTA id (1 .. EMU_RACE_IDS) read (write = 0) or wrote bytes [off, off +
 * len) of allocation gi with plain accesses.  Returns the words newly found
 * racing (each counted by the one call that finds it), the first of them
 * in *hit.  Thread-safe.
 */
unsigned emu_race_global(emu_race *r, emu_race_cache *c, long gi, uint64_t off, uint64_t len,
                         uint32_t id, int write, emu_race_hit *hit);
/* 1 once some access went unchecked for want of shadow memory. */
int emu_race_incomplete(const emu_race *r);

/* ------------------------------------------------------------ shared -- */

typedef struct emu_race_sh {
  uint64_t *e;     /* per byte of the window: stamp, writer, reader (emu_race.c) */
  uint64_t size;   /* bytes of the window shadowed */
  uint32_t stamp;  /* the running CTA's barrier interval */
} emu_race_sh;

/* Shadow a shared window of size bytes (size may be 0); -1 on ENOMEM. */
int emu_race_sh_init(emu_race_sh *s, uint64_t size);
void emu_race_sh_free(emu_race_sh *s);
/* A new barrier interval: a barrier released, or a new CTA began. */
void emu_race_sh_next(emu_race_sh *s);
/*
 * Warp w (0-based) read or wrote bytes [off, off + len) of the window
 * (inside it) with a plain access of instruction id insn (0: none; ids
 * above 2^19 - 1 are not kept).  Returns the words newly found racing in
 * this interval, the first in *hit.
 */
unsigned emu_race_sh_check(emu_race_sh *s, uint64_t off, uint64_t len, uint32_t w, uint32_t insn,
                           int write, emu_race_hit *hit);

#endif
