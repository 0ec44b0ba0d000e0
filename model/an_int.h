/*
 * an_int.h -- internals the analytic estimate (analytic.c) and the
 * memory-hierarchy model (cache.c) share: the features of one launch
 * gathered in one pass, and the model of where its memory requests are
 * served.  Not part of any public interface.
 */
#ifndef KCAST_AN_INT_H
#define KCAST_AN_INT_H

#include "model/model.h"

/* The features the estimate reads (key_name in analytic.c, same order). */
enum {
  K_ATOMG, K_CMP, K_CONVERT, K_FP16, K_FP32, K_FP64, K_INT, K_LDCONST, K_LDG, K_LDSH,
  K_LOGIC, K_SPECIAL, K_STG, K_STSH, K_LDLOC, K_STLOC, K_MOVE, K_LDPARAM, K_STPARAM,
  K_TEXTURE, K_WARP, K_TENSOR, K_LDGEN, K_STGEN, K_ATOMSH, K_CONTROL, K_SYNC, K_OTHER,
  K_ALR, K_WI, K_ILP,
  K_BX, K_BY, K_BZ, K_CTAS, K_GX, K_GY, K_LSHARED, K_THREADS,
  K_FOOT, K_GACC, K_GBYTES, K_GLBYTES, K_GSECT, K_GLSECT, K_GSTORE, K_LBYTES, K_SHACC,
  K_REPLAYS, K_CACC, K_CREPLAY, K_STFOOT, K_CTAREUSE, K_SHX, K_SHY, K_SHZ, K_SHFAR,
  K_REUSE0, /* mem.reuse_lt_512 ... K_REUSE0 + AN_REUSE_BINS - 1: mem.reuse_lt_4m */
  K_SSHARED = K_REUSE0 + 14, K_SINSNS,
  K_N
};
#define AN_REUSE_BINS 14 /* emulator/emu_trace.h EMU_TRACE_BINS: 512 B << b */

/* The ptxas.sm_XY.<what> columns read. */
enum { P_SMEM, P_REGS, P_SST, P_SLD, P_N };

/* Corrections from opcode keys (op.*) to the class counts, thread-level:
   what the machine code does differently from one instruction per PTX
   instruction (analytic.c, "Instructions"). */
typedef struct an_ops {
  double fp32, fp64, intg, sfu, cvt; /* instructions added to each pipe */
  double cvt_int;   /* integer-to-integer cvt: an integer instruction, not a
                       conversion (counted in class.convert) */
  double free_ops;  /* instructions the machine code does not issue: cvta,
                       predicate logic (folded into the setp) */
  double logic_free;/* of free_ops, the class.logic part */
  double nc;        /* read-only global loads (ld.global.nc, ldu.global) */
} an_ops;

typedef struct an_in {
  double v[K_N];            /* 0 when absent */
  unsigned char have[K_N];
  double class_sum;         /* the class.* values summed in the names' order */
  double ptx[P_N];          /* NAN when the launch has no such column */
  int ptx_score[P_N];
  an_ops ops;
} an_in;

/* Gather the features of one launch on a GPU of compute capability cc
   (major * 10 + minor: picks the ptxas columns). */
void an__gather(const char *const *names, const double *vals, size_t n, int cc, an_in *in);
/* an_occupancy_of on gathered features (-1 with rf_last_error). */
int an__occupancy(const an_gpu *g, const an_in *in, an_occupancy *o);

/*
 * Where a launch's global memory requests are served on GPU g with the
 * residency o (cache.c; docs/features.md "cache.*").  Sectors are 32
 * bytes; counts are whole-launch totals.
 */
typedef struct an_mem {
  int modelled;            /* 1: from the emulator's reuse and sharing
                              features; 0: those are absent, the footprint
                              rule of older launches (cache.c) */
  double load_sectors;     /* load sector requests */
  double store_sectors;    /* store and atomic sector requests */
  double l1_bytes;         /* L1 data cache per SM after the shared carve-out */
  double l1_hits;          /* load sectors served by L1 */
  double l2_requests;      /* sectors that reach L2: L1 load misses, stores,
                              atomics */
  double l2_hits;          /* load sectors L2 serves */
  double dram_read;        /* bytes read from DRAM */
  double dram_write;       /* bytes written to DRAM */
} an_mem;

int an__mem(const an_gpu *g, const an_in *in, const an_occupancy *o, an_mem *out);

#endif
