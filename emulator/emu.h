/*
 * emu.h -- the PTX emulator: run a kernel launch on the CPU and count what it
 * does (the dynamic features of docs/features.md).
 *
 * Model.  A device (emu_device) owns a table of allocations in one emulated
 * address space.  A parsed PTX module is loaded onto a device (emu_module):
 * its module-scope .global/.const variables are allocated and initialised,
 * every instruction is checked to be supported (an unsupported one is named,
 * with its line, at load time, never in the middle of a run) and prepared for
 * execution.  A launch runs a grid of CTAs; each CTA's warps of 32 lanes run in
 * lockstep with an active mask and a reconvergence stack (reconvergence at the
 * immediate post-dominator, ptx_block.ipdom).  CTAs run in parallel with
 * OpenMP; results and counts do not depend on the thread count, except for
 * kernels whose control flow depends on the interleaving of CTAs (a
 * compare-and-swap retry loop on global memory retries more often when CTAs
 * run at the same time, so its op.bra count varies; its results do not).
 * A program with a data race gets no such promise.  Between CTAs the race
 * is run as it comes: two CTAs storing different values to the same bytes
 * leave the one that stored last, which differs from run to run with more
 * than one thread (Parboil histo with a histogram of fewer than 24,576 bins
 * copies each CTA's last bins over the next CTA's first ones).  Within a
 * CTA the warps run one after another, each until it reaches a barrier or
 * exits, so a missing __syncthreads gives the same answer on every run,
 * one a GPU, whose warps advance together, rarely shows (Rodinia
 * heartwall's second cumulative sum reads the other warps' elements before
 * they subtract them, and every point moves by (-5, -5) a frame).  The
 * race check (cfg.racecheck, below) names such races.
 *
 * Addresses.  Device addresses are 64-bit values in the emulated space, not
 * host pointers.  Generic addressing works: global allocations, the CTA's
 * shared window and the thread's local window occupy disjoint ranges (see
 * emu.c), and cvta converts between them.  Every access is checked: out of
 * bounds, misaligned, unmapped or freed stops the launch with kernel, CTA,
 * thread, PTX line and address in one message -- except that under
 * EMU_OOB_WARN what a GPU lets through is tolerated: a global access
 * outside every allocation but inside the 2 MiB pages they map reads what
 * is there (zeros until written; writes stick, emu_int.h, emu_slack_ptr),
 * one to freed memory reads zeros and writes nothing, shared memory past
 * the CTA's window inside the SM's (EMU_MAX_SHARED) is the CTA's for the
 * CTA, a bad texture or surface handle reads zeros; the launch completes
 * and counts them (emu_stats.oob_accesses, the first one in oob_first).
 * An unmapped access names the nearest allocation and the distance.
 *
 * Race check (cfg.racecheck; emu_race.c has the design).  A launch whose
 * result depends on the order its CTAs or warps run in is named: in
 * global memory, two CTAs of the launch that access the same byte, one of
 * them writing (a write-write or a read-write race); in shared memory,
 * two warps of a CTA that do so between two barriers.  Plain ld/st only:
 * atomics and strong accesses (.volatile, .relaxed, .acquire, .release)
 * are not data races; lanes of one warp, or one CTA with itself in global
 * memory, never race.  Decided by byte (a store of one byte is its own
 * location).  Each racing 4-byte word counts once, whatever the thread
 * count (emu_stats.races, feature emu.races); the first race of the lowest
 * CTA is described in emu_stats.race_first.  Not seen: global races
 * between warps of one CTA; textures and surfaces; the CTAs a sampled
 * launch does not run; accesses between CTAs of a kernel that orders them
 * with gpu-scope fences or acquire/release accesses (a last-block
 * reduction: such a kernel's global memory is not checked, race_note says
 * so).  Off, it costs the memory path one test.
 *
 * Errors.  Functions return 0 on success and -1 on failure with one line in
 * the caller's err buffer.
 *
 * Threads.  One device may be used by one launch at a time; separate devices
 * are independent.
 */
#ifndef KCAST_EMU_H
#define KCAST_EMU_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "extractor/features.h"
#include "extractor/ptx.h"

typedef struct emu_device emu_device;
typedef struct emu_module emu_module;

/* ------------------------------------------------------------- memory -- */

emu_device *emu_device_new(void);
/* Free the device, every allocation and every module loaded on it.  NULL ok. */
void emu_device_free(emu_device *d);

/* Allocate bytes (zero-filled, 256-byte aligned); *addr is the device address. */
int emu_malloc(emu_device *d, size_t bytes, uint64_t *addr, char *err, size_t cap);
/*
 * The contents of a lazily filled allocation (emu_malloc_lazy): write bytes
 * [off, off + n) to dst.  off is a multiple of EMU_FILL_PAGE and n is
 * EMU_FILL_PAGE except for the allocation's last page.  The bytes must
 * depend on (ctx, off, n) alone: pages are filled in any order, from any
 * thread of a launch, each exactly once.
 */
#define EMU_FILL_PAGE 4096u
typedef void (*emu_fill_fn)(const void *ctx, uint64_t off, uint8_t *dst, size_t n);
/*
 * Allocate bytes like emu_malloc, with contents given by fill: a page is
 * filled the first time anything reads or writes it (an emulated access,
 * emu_host_ptr, a copy), so a launch that samples a few CTAs of a large
 * buffer pays for the pages it reaches.  The ctx_size bytes at ctx are
 * copied (the caller's copy may go).
 */
int emu_malloc_lazy(emu_device *d, size_t bytes, emu_fill_fn fill, const void *ctx,
                    size_t ctx_size, uint64_t *addr, char *err, size_t cap);
/*
 * The pattern fills of kcast_fill and the CLI's --arg fills, as an
 * emu_fill_fn whose ctx is an emu_pattern (any page, any order):
 *   EMU_PAT_SEQ    4-byte word k = k;  EMU_PAT_SEQF: the float k
 *   EMU_PAT_RAND   8-byte word k = output k of splitmix64 from seed
 *                  (little-endian)
 *   EMU_PAT_RANDF  4-byte word k = the float of output k's top 24 bits / 2^24
 * Other kinds write zeros.
 */
enum { EMU_PAT_ZERO, EMU_PAT_SEQ, EMU_PAT_SEQF, EMU_PAT_RAND, EMU_PAT_RANDF };
typedef struct emu_pattern {
  unsigned kind;
  uint64_t seed;
} emu_pattern;
void emu_fill_pattern(const void *ctx, uint64_t off, uint8_t *dst, size_t n);
/* Free an allocation by its base address (0 is a no-op); an external
   mapping (emu_map_external) is unregistered, its memory left alone.  The
   range is remembered: a later access to it, or a copy, is reported as a
   use of freed memory. */
int emu_free(emu_device *d, uint64_t addr, char *err, size_t cap);
/* Copies and fills; every byte of the range must lie in one allocation. */
int emu_memcpy_htod(emu_device *d, uint64_t dst, const void *src, size_t n,
                    char *err, size_t cap);
int emu_memcpy_dtoh(emu_device *d, void *dst, uint64_t src, size_t n,
                    char *err, size_t cap);
int emu_memcpy_dtod(emu_device *d, uint64_t dst, uint64_t src, size_t n,
                    char *err, size_t cap);
int emu_memset(emu_device *d, uint64_t dst, int value, size_t n, char *err,
               size_t cap);
/*
 * Host pointer for [addr, addr+n) when the range lies in one allocation, else
 * NULL.  Valid until that allocation is freed.  The range of a lazily
 * filled allocation is filled first.
 */
void *emu_host_ptr(emu_device *d, uint64_t addr, size_t n);

/*
 * 1 when addr is an address of the emulated device's global memory: inside
 * an allocation, a freed one, or the ranges where allocations and external
 * mappings are placed (below 16 TiB and the external window), so that a
 * stale device pointer is still recognised as one.  Host addresses of
 * position-independent programs lie above both.
 */
int emu_is_device_addr(const emu_device *d, uint64_t addr);

/* The external window: device addresses emu_map_external accepts (disjoint
   from the engine's own global, shared, local, param and function ranges;
   see emu.c). */
#define EMU_EXT_BASE 0x0000500000000000ull
#define EMU_EXT_SIZE 0x0000010000000000ull
/* The end of x86-64 user space: no host address lies at or above it. */
#define EMU_HOST_END 0x0000800000000000ull
/*
 * Register n bytes of caller-owned host memory as a global allocation at
 * device address addr (256-byte aligned, overlapping no allocation, the
 * whole range in the external window or above it below EMU_HOST_END, or
 * below the engine's global allocations: host addresses, never the
 * engine's own ranges).  Kernels, copies, access checks and the footprint
 * treat it like emu_malloc memory.  The engine never frees host:
 * emu_free(d, addr) unregisters it and emu_device_free forgets it; the
 * caller releases the memory afterwards.  Used for managed and pinned
 * memory (mapped in the window, host pointer == addr) and for registered
 * host memory (cudaHostRegister: mapped where it is).
 */
int emu_map_external(emu_device *d, uint64_t addr, void *host, size_t n, char *err,
                     size_t cap);

/* ------------------------------------------------- textures, surfaces -- */

/* Channel data kinds, address modes (the order of cudaTextureAddressMode). */
enum { EMU_TEX_SIGNED = 0, EMU_TEX_UNSIGNED = 1, EMU_TEX_FLOAT = 2 };
enum { EMU_TEX_WRAP = 0, EMU_TEX_CLAMP = 1, EMU_TEX_MIRROR = 2, EMU_TEX_BORDER = 3 };

/*
 * A texture or surface object over global memory (emu_tex.c describes the
 * sampling).  Elements of `channels` channels of `bits` bits, row-major:
 * element (x, y, z) at addr + z*slice + y*pitch + x*element bytes.
 */
typedef struct emu_texture {
  uint64_t addr;            /* device address of element (0,0,0) */
  uint64_t width, height, depth; /* elements per dimension, 1 when unused;
                               depth counts the layers of a layered one */
  uint64_t pitch;           /* bytes between rows (>= width * element) */
  uint64_t slice;           /* bytes between slices or layers */
  unsigned channels;        /* 1, 2 or 4 */
  unsigned bits;            /* per channel: 8, 16 or 32 (16-bit float: half) */
  int kind;                 /* EMU_TEX_SIGNED, _UNSIGNED or _FLOAT */
  int dims;                 /* 1, 2 or 3 */
  int layered;              /* a layered 1-D or 2-D array */
  int linear;               /* a linear-memory resource (tex1Dfetch) */
  int address[3];           /* EMU_TEX_WRAP ... per dimension */
  int filter_linear;        /* linear filtering, else nearest point */
  int read_normalized;      /* 8/16-bit integers read as [0,1] / [-1,1] floats */
  int normalized_coords;    /* coordinates in [0, 1) */
  float border[4];          /* the border colour */
} emu_texture;

/* Register a texture or surface object; *handle is what kernels receive
   (never 0, never reused).  The memory must stay allocated while kernels
   use it (a launch using a handle whose memory is gone fails, naming it). */
int emu_texture_new(emu_device *d, const emu_texture *t, uint64_t *handle, char *err,
                    size_t cap);
int emu_texture_free(emu_device *d, uint64_t handle, char *err, size_t cap);

/* ------------------------------------------------------------- modules -- */

/*
 * Load a parsed module onto a device (builds its CFG if needed).  The module
 * must outlive the emu_module.  Fails, naming instruction and line, when the
 * module uses an instruction the emulator does not support.
 */
int emu_module_load(emu_device *d, ptx_module *m, emu_module **out, char *err,
                    size_t cap);
/*
 * The same with flags.  EMU_LOAD_PARTIAL: a function using an unsupported
 * instruction does not fail the load; the kernels that reach it cannot run
 * (emu_kernel_unsupported says why, emu_launch refuses them with
 * EMU_FAULT_UNSUPPORTED), the module's other kernels run.  For a program's
 * whole module, where one kernel kcast cannot run must not take the
 * others with it.
 */
#define EMU_LOAD_PARTIAL 1u
int emu_module_load_ex(emu_device *d, ptx_module *m, unsigned flags, emu_module **out,
                       char *err, size_t cap);
/* Why kernel cannot run (its or a callee's first unsupported instruction,
   owned by em), or NULL when it can or is not in em. */
const char *emu_kernel_unsupported(const emu_module *em, const char *kernel);
/* Unload (frees its globals).  NULL ok. */
void emu_module_free(emu_module *em);
/* Device address and size of a module-scope .global/.const variable. */
int emu_symbol(emu_module *em, const char *name, uint64_t *addr, size_t *size,
               char *err, size_t cap);

/*
 * Kernel parameter layout: byte offset of each parameter in the argument
 * buffer (natural or .align alignment) and the buffer's total size.  offsets
 * has room for k->nparams entries.
 */
int emu_param_layout(const ptx_func *k, size_t *offsets, size_t *total);

/* ------------------------------------------------------------ launches -- */

/* Launch limits every CUDA GPU since compute capability 3.0 enforces, and
   the largest shared memory per CTA any of them offers (227 KiB opt-in:
   sm_80, sm_90, sm_100); emu_launch refuses more. */
#define EMU_MAX_GRID_X 2147483647u
#define EMU_MAX_GRID_YZ 65535u
#define EMU_MAX_SHARED (227u * 1024u)

/* What a launch does with an out-of-bounds global access (emu.h, top). */
enum { EMU_OOB_ERROR = 0, EMU_OOB_WARN = 1 };

/* Why a launch failed (emu_stats.fault). */
typedef enum emu_fault {
  EMU_FAULT_NONE = 0,
  EMU_FAULT_ADDRESS,     /* out of bounds, unmapped, freed, read-only */
  EMU_FAULT_MISALIGNED,  /* an access not aligned to its size */
  EMU_FAULT_ASSERT,      /* a device assert() failed */
  EMU_FAULT_TRAP,        /* trap / __trap() */
  EMU_FAULT_LIMIT,       /* instruction budget or time limit */
  EMU_FAULT_CONFIG,      /* a launch configuration no GPU accepts */
  EMU_FAULT_UNSUPPORTED, /* the kernel uses what the emulator lacks (EMU_LOAD_PARTIAL) */
  EMU_FAULT_OTHER        /* deadlock, bad index, out of memory, internal */
} emu_fault;

typedef struct emu_launch_cfg {
  unsigned grid[3];        /* CTAs per dimension, each >= 1; x < 2^31,
                              y and z <= 65535 */
  unsigned block[3];       /* threads per dimension, each >= 1, x and y
                              <= 1024, z <= 64, product <= 1024 */
  size_t shared_bytes;     /* dynamic shared memory */
  const void *params;      /* argument buffer laid out by emu_param_layout */
  size_t params_size;
  uint64_t sample_ctas;    /* emulate this many CTAs spread over the grid and
                              scale the counts; 0 = all CTAs;
                              EMU_SAMPLE_AUTO = as many as the precision
                              below needs (see "Adaptive sampling") */
  double sample_rse;       /* EMU_SAMPLE_AUTO: the relative standard error
                              to reach; 0 = EMU_AUTO_RSE */
  uint64_t sample_min;     /* EMU_SAMPLE_AUTO: CTAs at least (>= 2) and at */
  uint64_t sample_max;     /* most; 0 = EMU_AUTO_MIN, EMU_AUTO_MAX */
  uint64_t insn_budget;    /* stop after this many thread-instructions; 0 = none */
  double time_limit_s;     /* stop after this many seconds; 0 = none */
  int threads;             /* OpenMP threads; 0 = OpenMP's default */
  FILE *printf_out;        /* device printf; NULL = stdout */
  int oob;                 /* EMU_OOB_ERROR (default) or EMU_OOB_WARN */
  uint64_t *progress;      /* when set: thread-instructions executed so far
                              are added here while the launch runs (atomic,
                              in steps of about 2^16 per thread), for a
                              progress display on another thread */
  const int *stop;         /* when set: the launch stops, as at its time
                              limit, once another thread makes *stop nonzero */
  int partial;             /* 1: a launch stopped by its budget, time limit
                              or stop flag still gives the features of the
                              CTAs that finished (emu_launch) */
  int racecheck;           /* 1: look for data races ("Race check" below);
                              found ones are counted in emu_stats.races,
                              the launch still succeeds */
} emu_launch_cfg;

/*
 * Adaptive sampling (cfg.sample_ctas = EMU_SAMPLE_AUTO).  The first and
 * the last CTA run first, a stratum of their own counted once each (a
 * grid's odd CTAs are there: bfs's root, a partial last CTA); then CTAs
 * spread over the grid run in rounds of sample_min, 3x, 9x ... (in a 1-D grid
 * each round's picks include the previous round's; a last round that would
 * pass sample_max is thinned to it), the counts of every CTA run so far
 * scaled to the CTAs but the edges as a sample's.
 * After each round the relative standard error of the grid totals is
 * estimated from the per-CTA counts that decide the features:
 * thread-instructions, those of each opcode (op.*) and class (class.*),
 * global sectors and shared bank replays, as s / (mean sqrt(n))
 * sqrt(1 - n/N) over the n CTAs run of N, s^2 the successive-difference
 * variance of a systematic sample (the CTAs in index order: a trend over
 * the grid the sample follows is not counted as variance).  An opcode or
 * class is measured against the larger of its own mean and 1 % of the
 * thread-instructions', replays against 1 % of the shared accesses' (an
 * opcode of 0.1 % of the instructions needs no 0.5 % of its own).  The
 * rounds stop when the largest of these (over the CTAs but the edges) is
 * at most sample_rse, or at sample_max CTAs besides the edges; emu_stats.sample_rse and the feature
 * emu.sample_rse give what was reached.  A grid of at most 2 x sample_min
 * CTAs runs whole, exactly as with sample_ctas = 0, and in a grid of at
 * most sample_max CTAs a round that would reach half of it runs every CTA
 * left (counts exact, not scaled).
 */
#define EMU_SAMPLE_AUTO UINT64_MAX
#define EMU_AUTO_RSE 0.005
#define EMU_AUTO_MIN 16u
#define EMU_AUTO_MAX 1296u /* 16 x 3^4: the rounds stay nested */

/* Fill cfg with defaults (1x1x1 grid and block, no limits). */
void emu_launch_cfg_init(emu_launch_cfg *cfg);

typedef struct emu_stats {
  uint64_t ctas_total;     /* CTAs in the grid */
  uint64_t ctas_run;       /* CTAs emulated (< total when sampled) */
  uint64_t thread_insns;   /* thread-instructions executed (not scaled) */
  uint64_t warp_insns;     /* warp-instructions executed (not scaled) */
  double seconds;          /* wall time of the launch */
  int sampled;             /* 1 when counts were scaled from a sample */
  double sample_rse;       /* EMU_SAMPLE_AUTO and sampled: the relative
                              standard error reached; 0 else */
  uint64_t oob_accesses;   /* lane accesses tolerated under EMU_OOB_WARN,
                              in the CTAs emulated (not scaled) */
  char oob_first[768];     /* the first of them (lowest CTA): kernel, CTA,
                              thread, PTX line, address; "" when none */
  emu_fault fault;         /* a failed launch: why; EMU_FAULT_NONE else */
  int partial;             /* cfg.partial and stopped: the features are of the
                              ctas_run CTAs that finished (fault says why) */
  int team;                /* threads the CTAs ran on (the most of any
                              round): 1 when the calling thread ran them all,
                              as it does while the work is small */
  uint64_t races;          /* cfg.racecheck: 4-byte words found racing, in
                              the CTAs emulated (not scaled): in global
                              memory between CTAs, each word once a launch,
                              and in shared memory between warps, once a
                              CTA and barrier interval */
  uint64_t races_shared;   /* of which in shared memory */
  char race_first[1024];   /* the first race (lowest CTA): kernel, CTA,
                              thread, PTX and source line, kind, space,
                              address (allocation and offset), the other
                              CTA or warp; "" when none */
  char race_note[256];     /* what the check could not see in this launch
                              (a kernel ordering its CTAs with fences, a
                              sample, the shadow's limit); "" when nothing */
} emu_stats;

/*
 * Run kernel (mangled .entry name) with cfg.  On success, features receives
 * the dynamic features (launch.*, op.*, class.*, mem.*, ctrl.*; scaled to the
 * whole grid when sampled; emu.*: how they were obtained) and st the
 * statistics; either may be NULL.  On a failed launch (bad access, failed
 * assertion, budget, time limit, trap, a configuration no GPU accepts)
 * nothing is added to features, st->fault says why and err names kernel,
 * CTA, thread, PTX line and address/cause.  Memory written before the
 * failure stays written.  Except with cfg->partial: a launch stopped by a
 * budget, time limit or stop flag after at least one CTA finished returns
 * 0 with the features of the CTAs that finished, scaled to the grid as a
 * sample's are (emu.ctas_emulated of them, emu.partial = 1; the stopped
 * CTAs' counts are taken back, their footprint stays), st->partial set,
 * st->fault EMU_FAULT_LIMIT and the reason in err.
 */
int emu_launch(emu_module *em, const char *kernel, const emu_launch_cfg *cfg,
               feat_vec *features, emu_stats *st, char *err, size_t cap);

#endif
