/*
 * emu_eng.h -- the engine's prepared program, shared by the files of the
 * engine: emu_load.c prepares a loaded module into these structures
 * (emu_module_load), emu.c runs launches over them.  Not part of any
 * public interface; the ALU's half of the contract is emu_int.h.
 */
#ifndef KCAST_EMU_ENG_H
#define KCAST_EMU_ENG_H

#include <stdint.h>

#include "emulator/emu.h"
#include "emulator/emu_int.h"

#define NONE UINT32_MAX
#define RECURSIVE_STACK (16u * 1024u) /* per-thread local bytes when recursive */
/* The CTA's reserved shared memory (1 KiB on sm_80 and newer), after its
   window; %reserved_smem_offset_0 and _1 point at its two halves. */
#define EMU_RESERVED_SMEM 1024u

/* Engine opcodes (eop.k). */
enum {
  K_ALU, K_NOP, K_LD, K_ST, K_ATOM, K_CVTA, K_ISSPACEP, K_BRA, K_BRX, K_CALL,
  K_PRINTF, K_RET, K_EXIT, K_TRAP, K_BAR, K_SHFL, K_VOTE, K_MATCH,
  K_ACTIVEMASK, K_REDUX, K_ELECT, K_ASSERT, K_TEX, K_SULD, K_SUST
};

/* eop.clock of an op of emu_mma.c (tensor cores, matrix loads,
   asynchronous copies): a K_ALU whose clock flag sends it down the ALU
   case's rare branch (eop_is_xop), so that no case of its own changes how
   run_warp's other cases compile. */
#define EMU_CLOCK_XOP 2

/* A slot the engine fills when a frame starts. */
typedef struct cslot {
  uint32_t slot;
  uint8_t kind;    /* CS_* */
  uint64_t v;      /* CS_IMM: value; CS_FRAME: offset added to the frame
                      base; CS_SREG: ptx_sreg */
} cslot;
enum { CS_IMM, CS_FRAME, CS_SREG };

struct efunc;

/* Argument or return value of a call: a caller variable or a slot. */
typedef struct carg {
  uint8_t isvar;   /* 1: caller's function-scope var v; 0: slot v */
  uint32_t v;
} carg;

typedef struct ecall {
  struct efunc *callee;  /* NULL for vprintf */
  uint32_t nargs, nrets;
  carg *args, *rets;
} ecall;

/* One prepared instruction. */
typedef struct eop {
  emu_op o;            /* the ALU contract part (d/s slots, handler) */
  uint8_t k;           /* K_* */
  uint8_t gneg;        /* guard negated */
  uint8_t space;       /* memory/cvta/isspacep space */
  uint8_t size;        /* element bytes of a memory access */
  uint8_t vec;         /* elements per lane */
  uint8_t sext;        /* a load sign-extends */
  uint8_t clock;       /* reads %clock-like slots: refresh them first (1);
                          EMU_CLOCK_XOP: an emu_mma.c op */
  uint8_t isred;       /* red (no destination), bar.red */
  uint8_t a32;         /* the address base is a 32-bit register: the
                          address (base + offset) wraps modulo 2^32 */
  uint8_t geom;        /* tex/suld/sust: EMU_GEOM_* */
  uint8_t ncoord;      /* tex/suld/sust: coordinates in s[0..ncoord) (for
                          a1d/a2d the layer first); sust's values follow */
  uint8_t smode;       /* suld/sust: EMU_SURF_* */
  uint8_t dw[EMU_MAX_DST]; /* destination register widths in bytes */
  uint32_t guard;      /* guard slot or NONE */
  uint32_t abase;      /* address base slot */
  int64_t aoff;        /* address offset */
  uint32_t x;          /* bra: target instruction */
  union {
    const ptx_label *tab; /* brx.idx: its .branchtargets table (ntargets >= 1,
                             every target's insn <= ninsns) */
    emu_xop *xop;         /* eop_is_xop: its operands (owned; NULL: refused) */
  };
  uint32_t mbytes;     /* bytes per lane for mem.* counts */
  uint32_t arun;       /* K_ALU: plain ALU ops (unguarded, no clock) from
                          this one to the end of the run in its block,
                          which run_warp calls back to back; else 0 */
  ecall *call;         /* K_CALL / K_PRINTF */
} eop;

static inline int eop_is_xop(const eop *e) { return e->k == K_ALU && e->clock == EMU_CLOCK_XOP; }

typedef struct efunc {
  const ptx_func *f;
  uint32_t idx;        /* index in ptx_module.funcs */
  eop *ops;            /* f->ninsns */
  uint32_t nslots;     /* registers + constants + specials + cc + sink */
  uint32_t ncs;
  cslot *cs;           /* slots filled per frame */
  uint32_t nclock;
  uint32_t *clock_cs;  /* indices into cs of clock-like specials */
  uint32_t cc_slot, sink_slot;
  uint32_t *bstart;    /* ninsns+1: block index when pc starts a block */
  uint32_t *bend;      /* per block: one past its last instruction */
  uint32_t *brpc;      /* per block: reconvergence instruction or NONE */
  uint64_t *voff;      /* per var: frame offset, shared offset or param
                          buffer offset */
  uint64_t frame;      /* local frame bytes */
  uint64_t stack;      /* frame + deepest callee chain */
  uint64_t sh_static;  /* kernels: end of the static shared variables it
                          reaches (its window without dynamic memory) */
  uint64_t sh_dyn;     /* kernels: offset of dynamic shared memory */
  uint32_t cbase;      /* first block counter */
  uint32_t nzr;
  uint32_t *zr;        /* nzr (first slot, count) runs that a new frame
                          zeroes: see zero_plan */
  uint8_t visiting, done, recursive;
  char *bad;           /* owned; EMU_LOAD_PARTIAL: why it cannot run (its first
                          unsupported instruction), NULL when it can */
} efunc;

struct emu_module {
  emu_device *d;
  ptx_module *m;
  efunc *fn;               /* m->nfuncs */
  uint32_t nblocks;        /* block counters over all functions */
  uint64_t *vaddr;         /* per module var: device address, shared offset */
  uint64_t *galloc_base;   /* per module var: allocation base or 0 */
  char **kop;               /* per opcode key: its feature name "op.<key>" */
  uint8_t *kcls;            /* per opcode key: feat_class_of_key */
  char *clsname[FEAT_C_COUNT]; /* "class.<name>" per class */
  char *names;              /* the block kop and clsname point into (owned) */
  double *kflops;           /* per opcode key: tensor.flops per thread-level
                              execution (emu_key_tensor_flops); NULL when the
                              module has no matrix instruction */
  uint32_t nbad;            /* functions that cannot run (efunc.bad) */
  uint8_t resv;             /* an instruction reads %reserved_smem_offset_*:
                              each CTA gets EMU_RESERVED_SMEM more bytes */
  struct wcache *cache;    /* the calling thread's worker buffers between
                              launches (launches of a device never overlap) */
};

/* Free the calling thread's cached worker buffers (emu_launch.c). */
void emu__wcache_free(struct wcache *c);

static inline int is_clock_sreg(uint32_t s) {
  return s == PTX_SR_CLOCK || s == PTX_SR_CLOCK_HI || s == PTX_SR_CLOCK64 ||
         s == PTX_SR_GLOBALTIMER || s == PTX_SR_GLOBALTIMER_LO ||
         s == PTX_SR_GLOBALTIMER_HI;
}

static inline int type_signed(unsigned t) {
  return t == PTX_T_S8 || t == PTX_T_S16 || t == PTX_T_S32 || t == PTX_T_S64;
}

#endif
