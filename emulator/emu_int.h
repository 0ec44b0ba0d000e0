/*
 * emu_int.h -- emulator internals shared by the engine (emu.c and friends)
 * and the arithmetic unit (emu_alu.c).  Not part of any public interface.
 *
 * The contract between the two halves:
 *
 *   The engine prepares every instruction of a loaded module into an emu_op:
 *   each operand becomes a *slot* in the warp's register file.  Registers
 *   map to their ptx_func.regs index; immediates, symbol addresses and most
 *   special registers map to extra slots that the engine fills (all 32 lanes)
 *   before the warp runs, so an ALU handler never looks at operand kinds.
 *
 *   Register file of one warp (slot-major, lane-minor):
 *
 *        slot s, lane l  ->  r[s * EMU_LANES + l]      (uint64_t)
 *
 *   Value encoding in a slot (handlers read and must write exactly this):
 *     pred            0 or 1
 *     8/16/32-bit     the low bits, upper bits zero (a signed value is stored
 *                     as its two's complement bit pattern of that width,
 *                     NOT sign-extended to 64 bits)
 *     f16 / bf16      the 16-bit pattern in the low bits
 *     f16x2 / bf16x2  the 32-bit pattern
 *     f32             the IEEE single bit pattern in the low 32 bits
 *     64-bit, f64     all 64 bits
 *   A handler reading a slot narrower than its type's width may see zero
 *   upper bits; it must truncate/extend per its own source type (this is
 *   what lets mov.b32 %f1, %r1 and friends be plain copies).
 *
 *   For ALU instructions the engine calls op->alu(r, op, mask) once per warp
 *   instruction with mask = the lanes that are active and whose guard is
 *   true.  The handler updates d[] slots for exactly the lanes in mask.
 *
 *   Flattening rule (no per-opcode exceptions): d[] holds every destination
 *   operand in order, a vector destination {a,b} contributing its elements
 *   and a pipe destination (setp %p|%q) its second register; s[] holds every
 *   source operand in order, vector sources flattened.  Examples:
 *     setp.lt.and.s32 %p|%q, a, b, !c   d={p,q} s={a,b,c} sneg=0b100
 *     mov.b64 %rd1, {%r1,%r2}           d={rd1} s={r1,r2}
 *     mov.b64 {%r1,%r2}, %rd1           d={r1,r2} s={rd1}
 *     lop3.b32 d, a, b, c, 0x96         d={d} s={a,b,c,imm}
 *     add.cc.u32 d, a, b                d={d} s={a,b} cc=carry slot
 *   Special registers (%tid.x, %clock ...), symbol and function addresses
 *   and immediates are slots like any other, so mov of any of them is an
 *   ALU instruction.
 *
 *   Which instructions are ALU instructions is decided by emu_alu_select():
 *   it returns a handler, or NULL with *why set when the instruction is valid
 *   for the ALU but a form it does not support (reported at load time), or
 *   NULL with *why == NULL when the instruction is not the ALU's business
 *   (memory, control, warp-collective, barriers, fences, cvta, isspacep: the
 *   engine executes those).
 */
#ifndef KCAST_EMU_INT_H
#define KCAST_EMU_INT_H

#include <stddef.h>
#include <stdint.h>

#include "emulator/emu.h"
#include "extractor/ptx.h"

#define EMU_LANES 32
#define EMU_NOSLOT UINT32_MAX
#define EMU_MAX_DST 4   /* mov/unpack {a,b,c,d}, setp p|q, carry-out */
#define EMU_MAX_SRC 8   /* mov pack {a,b,c,d}; lop3/bfi 4 + immediates */

typedef struct emu_op emu_op;
typedef void (*emu_alu_fn)(uint64_t *restrict r, const emu_op *op,
                           uint32_t mask);

struct emu_op {
  emu_alu_fn alu;             /* ALU handler; NULL: the engine executes it */
  const ptx_insn *insn;       /* the decoded instruction */
  uint32_t d[EMU_MAX_DST];    /* destination slots in operand order; for a
                                 vector destination {a,b} its elements; for a
                                 pipe destination (setp %p|%q) the second */
  uint32_t s[EMU_MAX_SRC];    /* source slots in operand order, vector sources
                                 flattened into consecutive entries */
  uint8_t nd, ns;             /* used entries of d and s */
  uint8_t sneg;               /* bit j: source j was written !%p (negate) */
  uint8_t pad;
  uint32_t cc;                /* slot of the warp's carry flag (0/1 per lane)
                                 for .cc producers and addc/subc/madc
                                 consumers; EMU_NOSLOT otherwise */
};

/*
 * Select the handler for instruction i (with nd destination and ns source
 * operands as the engine flattened them).  Returns the handler, or NULL (see
 * the contract above).  *why, when set, is a static string such as
 * "cvt.rn.f16.f64: rounding mode not supported".
 */
emu_alu_fn emu_alu_select(const ptx_insn *i, unsigned nd, unsigned ns,
                          const char **why);

/* New value of a half-precision atom/red (emu_alu_f16.c): old op b for
   aux PTX_AUX_ADD (round to nearest, no flush), _MIN or _MAX on a .f16,
   .bf16 (16 bits) or .f16x2, .bf16x2 (32 bits) type. */
uint64_t emu_half_atom(unsigned aux, unsigned type, uint64_t old, uint64_t b);

/* ------------------------- matrix and asynchronous-copy families -- */

/*
 * Tensor-core, matrix-load and asynchronous-copy instructions (mma,
 * wmma, ldmatrix, stmatrix, cp.async, cp.async.bulk) live in emu_mma.c:
 * the loader hands each instruction to emu_xop_prepare, which keeps its
 * own operand lists (an mma reads up to 16 registers) in an emu_xop the
 * eop owns; the engine runs it with emu_xop_exec and lends it its memory
 * path (emu_x_access: the same checks, counts and footprint as ld/st).
 */
typedef struct emu_xop emu_xop;

/* What emu_xop_prepare may ask of the loader (emu_load.c). */
typedef struct emu_xprep {
  void *ctx;
  const ptx_module *m;
  const ptx_func *f;
  /* a value operand (register, immediate, special register, symbol) as a
     slot: 0, 1 with *why when unsupported, -1 on ENOMEM */
  int (*value)(void *ctx, const ptx_operand *o, uint32_t *slot, const char **why);
  /* an address operand [base + off]: its base as a slot and the offset */
  int (*address)(void *ctx, const ptx_operand *o, uint32_t *slot, int64_t *off,
                 const char **why);
  /* n consecutive fresh slots (scratch of the instruction); the first, or
     EMU_NOSLOT on ENOMEM */
  uint32_t (*scratch)(void *ctx, unsigned n);
} emu_xprep;

/* 0: not an instruction of these families; 1: prepared into *out, or
   refused (*out NULL, *why says why); -1 on ENOMEM. */
int emu_xop_prepare(const emu_xprep *p, const ptx_insn *in, emu_xop **out, const char **why);
void emu_xop_free(emu_xop *x);
/* The slots x reads (defs = 0) or writes for every lane it runs (defs =
   1), for zero_plan's liveness; at most cap of them into out, their
   number returned. */
unsigned emu_xop_slots(const emu_xop *x, int defs, uint32_t *out, unsigned cap);
/* Floating-point (and integer multiply-add) operations per thread-level
   execution of the instruction with opcode key `key`: 2*m*n*k / 32 for
   mma and wmma.mma, 0 for everything else (tensor.flops). */
double emu_key_tensor_flops(const char *key);

/* The engine's side, during a launch (emu_access.c). */
typedef struct emu_xctx emu_xctx;
/* One access by every lane of the mask: lane l's address in slot addr,
   vec elements of size bytes to or from slots data[0..vec). */
typedef struct emu_xacc {
  uint8_t write, space, size, vec;
  uint32_t addr;
  uint32_t data[4];
} emu_xacc;
/* 0, or -1 when the access failed (reported, as an ld/st failure is). */
int emu_x_access(emu_xctx *x, uint64_t *r, const emu_xacc *a, uint32_t mask);
/* The CTA's shared memory (size bytes: its window) for an instruction that
   moves rows itself (ldmatrix, stmatrix), or NULL when its accesses must go
   through emu_x_access (the race check is on). */
uint8_t *emu_x_shared(emu_xctx *x, uint64_t *size);
/* Count what such an instruction moved, as emu_x_access counts a shared
   access: bytes, accesses (one a matrix of 8 rows) and bank-conflict
   replays. */
void emu_x_shared_count(emu_xctx *x, uint64_t bytes, uint64_t accesses, uint64_t replays);
/* Fail the launch naming the instruction and lane (-1: the warp). */
void emu_x_fail(emu_xctx *x, int lane, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Run x for the lanes in mask on register file r: 0 or -1 (failed). */
int emu_xop_exec(emu_xctx *ctx, const emu_xop *x, uint64_t *r, uint32_t mask);

/* One error line into err (when non-NULL); returns -1.  For the emulator's
   files (emu_mem.c defines it). */
int emu_errf(char *err, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static inline uint64_t emu_align_up(uint64_t v, uint64_t a) {
  return a > 1 ? (v + a - 1) / a * a : v;
}

/* ------------------------------------------------ device memory -- */

/* Address windows of the emulated space (drawn in emu.c's header). */
#define EMU_GLOBAL_BASE 0x0000000100000000ull
#define EMU_GLOBAL_GAP 256ull
#define EMU_SHARED_WIN 0x0000100000000000ull
#define EMU_LOCAL_WIN 0x0000200000000000ull
#define EMU_PARAM_WIN 0x0000300000000000ull
#define EMU_FUNC_WIN 0x0000400000000000ull
#define EMU_WIN_SIZE 0x0000010000000000ull

/* One allocation (emu_malloc) or external mapping (emu_map_external). */
typedef struct galloc {
  uint64_t base;   /* device address, 256-aligned */
  uint64_t size;   /* bytes (>= 1) */
  uint8_t *host;   /* size bytes; owned unless external */
  int external;    /* registered by emu_map_external: host not freed here */
  struct emu_lazy *lazy; /* emu_malloc_lazy: the fill and its pages' state;
                            NULL: host holds every byte already */
  uint64_t **touch; /* footprint during a launch: NULL until the launch's
                       first access, then (size >> EMU_TCHUNK_SHIFT) + 1
                       chunk pointers, each NULL until its first access and
                       then EMU_TCHUNK_WORDS words, bit i of the chunk for
                       its byte i (emu_touch) */
} galloc;

/* A lazily filled allocation's fill (emu_malloc_lazy). */
struct emu_lazy {
  emu_fill_fn fill;
  void *ctx;        /* the caller's bytes, copied; owned */
  uint8_t *state;   /* per EMU_FILL_PAGE page: 0 unfilled, 1 being filled,
                       2 filled (atomic) */
};

void emu_lazy_fill_range(const galloc *g, uint64_t off, uint64_t len);
/* Make bytes [off, off+len) of g hold their contents before an access
   (len >= 1, inside g); nothing to do unless g is lazily filled. */
static inline void emu_lazy_fill(const galloc *g, uint64_t off, uint64_t len) {
  if (!g->lazy) return;
  uint64_t p0 = off / EMU_FILL_PAGE;
  if (p0 == (off + len - 1) / EMU_FILL_PAGE &&
      __atomic_load_n(&g->lazy->state[p0], __ATOMIC_ACQUIRE) == 2)
    return; /* one page, filled already: the common case, kept inline */
  emu_lazy_fill_range(g, off, len);
}

/* Footprint chunks: 64 KiB of data per 8 KiB bitmap, allocated on first
   access, so a launch pays for the data it touches, not for every
   allocation on the device. */
#define EMU_TCHUNK_SHIFT 16
#define EMU_TCHUNK_WORDS ((1u << EMU_TCHUNK_SHIFT) / 64)

struct emu_module;

/* The device (emu_mem.c); launches read the table, never change it. */
struct emu_device {
  galloc *a;             /* sorted by base; bases increase, never reused */
  size_t n, cap;
  uint64_t next;         /* next free device address */
  struct emu_module **mods; /* loaded modules (freed with the device) */
  size_t nmods, capmods;
  struct emu_freed {
    uint64_t base, size;
  } *freed;              /* ranges of freed allocations, sorted by base; a
                            range is never reallocated (bases only grow,
                            external addresses are the caller's and the
                            cudart never reuses them) */
  size_t nfreed, capfreed;
  uint64_t **spare;      /* zeroed footprint chunks kept for the next launch */
  size_t nspare, capspare;
  struct emu_slack *slack; /* memory of the mapped pages outside every
                             allocation (emu_slack_ptr), NULL until first used */
  struct emu_texent *tex; /* texture and surface objects (emu_tex.c) */
  size_t ntex, captex;
  uint64_t next_tex;     /* last handle handed out */
};



/*
 * Pages a GPU maps (EMU_OOB_WARN).  Allocations are carved from 2 MiB
 * pages; an access outside every allocation but inside a page one of them
 * lies in faults nowhere on a GPU: it reads what is there and writes
 * stick.  emu_mapped_page says whether addr is in such a page;
 * emu_slack_ptr gives the bytes [addr, addr + n) (n <= 16, addr aligned to
 * n, so they lie in one of its 4 KiB pieces) of that memory, which starts
 * as zeros and keeps what is written, for the device's life: for a read
 * (create 0) a shared page of zeros where nothing was written, for a write
 * the piece, made on first use.  NULL when the addresses are not mapped or
 * on ENOMEM (or past EMU_SLACK_MAX pieces).  Thread-safe.
 */
#define EMU_MAP_PAGE (2ull << 20)
#define EMU_SLACK_PIECE 4096u
#define EMU_SLACK_MAX 65536u /* pieces (256 MiB) */
int emu_mapped_page(const struct emu_device *d, uint64_t addr);
uint8_t *emu_slack_ptr(struct emu_device *d, uint64_t addr, int create);

/* Index of the allocation containing addr, or -1. */
long emu_galloc_find(const struct emu_device *d, uint64_t addr);
/* Index of the last allocation whose base is <= addr (for messages), or -1. */
long emu_galloc_below(const struct emu_device *d, uint64_t addr);
/* Index in d->freed of the freed range containing addr, or -1. */
long emu_freed_find(const struct emu_device *d, uint64_t addr);
/* The freed range nearest to addr, containing it or at most slack bytes
   before or after it (*dist: 0 inside, else the bytes outside); -1 if none. */
long emu_freed_near(const struct emu_device *d, uint64_t addr, uint64_t slack, uint64_t *dist);

/* The last footprint chunk a thread touched (emu_touch's cache). */
typedef struct emu_tcache {
  long gi;          /* allocation index, -1 = none */
  uint64_t chunk;   /* chunk index in it */
  uint64_t *p;      /* its words */
} emu_tcache;

/*
 * Mark bytes [off, off+len) of allocation gi touched (len >= 1, inside the
 * allocation).  Thread-safe: chunks are installed with compare-and-swap and
 * words set with atomic OR, skipped when already set.  0, or -1 on ENOMEM.
 */
int emu_touch(struct emu_device *d, long gi, uint64_t off, uint64_t len, emu_tcache *tc);
/* The same for the bytes set in map[0..nw): bit j of map[i] is byte
   off + 64 i + j of allocation gi (off a multiple of 64). */
int emu_touch_map(struct emu_device *d, long gi, uint64_t off, const uint64_t *map, unsigned nw,
                  emu_tcache *tc);
/* Free every allocation's footprint bitmap (before and after a launch). */
void emu_touch_clear(struct emu_device *d);

/* What the bitmap of one allocation holds (emu_foot_scan). */
typedef struct emu_foot {
  uint64_t bytes;     /* bytes touched */
  uint64_t sectors;   /* 32-byte sectors with at least one touched byte */
  uint64_t lo, hi;    /* first and last touched sector index (from the
                         allocation's base); lo > hi when none */
  uint64_t hist[33];  /* touched sectors by their touched bytes (1..32) */
} emu_foot;
void emu_foot_scan(const galloc *g, emu_foot *f);

/* Bits set in x, without a library call (the build does not assume the
   popcnt instruction). */
static inline unsigned emu_popc64(uint64_t x) {
  x = x - ((x >> 1) & 0x5555555555555555ull);
  x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
  return (unsigned)((x * 0x0101010101010101ull) >> 56);
}
static inline unsigned emu_popc32(uint32_t x) {
  x = x - ((x >> 1) & 0x55555555u);
  x = (x & 0x33333333u) + ((x >> 2) & 0x33333333u);
  x = (x + (x >> 4)) & 0x0f0f0f0fu;
  return (x * 0x01010101u) >> 24;
}

/* --------------------------------------------- textures and surfaces -- */

/* A registered texture or surface object. */
typedef struct emu_texent {
  uint64_t handle;
  emu_texture t;
} emu_texent;

/* A texture resolved for a launch: its memory checked once. */
typedef struct emu_texview {
  uint64_t handle;
  const emu_texture *t;
  long gi;           /* the allocation holding it */
  uint8_t *host;     /* host pointer of element (0,0,0) */
  uint64_t off;      /* its offset in the allocation */
  uint64_t elem;     /* bytes per element */
} emu_texview;

/* Texture geometries (tex.1d ...) and surface out-of-bounds modes. */
enum { EMU_GEOM_1D = 1, EMU_GEOM_2D, EMU_GEOM_3D, EMU_GEOM_A1D, EMU_GEOM_A2D };
enum { EMU_SURF_TRAP, EMU_SURF_CLAMP, EMU_SURF_ZERO };

/* Resolve handle; 0, or -1 with why (not a handle, memory gone). */
int emu_texview_open(struct emu_device *d, uint64_t handle, emu_texview *v, char *why, size_t cap);
/* Sample: coord[0..dims) (float, or integer values when int_coords),
   layer for a1d/a2d; out receives the four channels.  0, or -1 on ENOMEM. */
int emu_tex_sample(struct emu_device *d, const emu_texview *v, int geom, const double *coord,
                   int layer, int int_coords, emu_tcache *tc, double out[4]);
/* Surface access of `bytes` at byte x and rows/slices (coord), or layer:
   *p the element's bytes (NULL: mode zero, out of bounds).  0, 1 when out
   of bounds under EMU_SURF_TRAP, -1 on ENOMEM. */
int emu_surf_access(struct emu_device *d, const emu_texview *v, const int64_t *coord, int layer,
                    int geom, unsigned bytes, int mode, uint8_t **p, emu_tcache *tc);

/* ------------------------------------------------ engine-side helpers -- */

/* A growable text buffer (device printf output of one CTA). */
typedef struct emu_strbuf {
  char *p;      /* NUL-terminated when non-NULL; owned */
  size_t len;   /* bytes used, excluding the NUL */
  size_t cap;   /* bytes allocated */
} emu_strbuf;

/* Append n bytes of s.  0, or -1 on ENOMEM (b unchanged). */
int emu_strbuf_append(emu_strbuf *b, const char *s, size_t n);

/* Checked read of n bytes at device address addr (generic); 0 or -1. */
typedef int (*emu_read_fn)(void *ctx, uint64_t addr, void *dst, size_t n);

/*
 * Format one device printf (vprintf): the format string at fmt_addr, the
 * packed argument buffer at args (each argument aligned to its size), both
 * read through rd.  Appends the text to out.  0, or -1 with err filled in.
 * Defined in emu_printf.c.
 */
int emu_printf_format(emu_strbuf *out, uint64_t fmt_addr, uint64_t args,
                      emu_read_fn rd, void *ctx, char *err, size_t cap);

/* Test hook (tests/test_emu.c): the warps whose buffers em keeps for the
   calling thread's next launch (emu_launch.c's worker cache); 0 when none. */
uint32_t emu__cached_warps(const struct emu_module *em);

/* Test hook (tests/emu_fix.c, tests/test_emu.c): on != 0 makes every
   later launch with cfg.threads > 1 (or OpenMP's default above 1) and two
   CTAs or more run them on a team from its first CTA, whatever the work
   (emu_launch.c, "Scheduling": small launches otherwise stay on the calling
   thread, and a comparison of 1 and 2 threads would compare one thread
   with itself).  Process-wide; returns the previous setting. */
int emu__team_always(int on);

/* Test hook (tests/test_emu_tensor.c): != 0 sends every mma.sync through
   the general path (a gather map, then the product), never the vector path
   of the half-precision forms (emu_mma.c, mma_half_fast). */
extern int emu__mma_general;

#endif
