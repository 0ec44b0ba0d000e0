/*
 * ptx.h -- the parsed PTX module: what the parser produces and what the CFG
 * builder, the static feature extractor and the emulator consume.
 *
 * A module is parsed once into flat arrays.  Every instruction is pre-decoded:
 * its opcode is an enum (ptx_ops.h), its dot-modifiers are decoded into typed
 * fields (types, state space, comparison, rounding, flags), its operands refer
 * to register slots by index, and its opcode key (the mnemonic with every
 * dot-modifier as written, e.g. "ld.global.nc.f32") is interned so that
 * counting by key is an array increment.  Nothing downstream parses text.
 *
 * Ownership: a ptx_module owns every array and string reachable from it; all
 * of it is released by ptx_module_free().  Pointers into a module stay valid
 * until then.  A module is immutable after ptx_parse() returns, except for the
 * CFG, which ptx_cfg_build() fills in once; a built module may be read from
 * many threads at once.
 */
#ifndef KCAST_PTX_H
#define KCAST_PTX_H

#include <stddef.h>
#include <stdint.h>

#include "ptx_ops.h"

/* ---------------------------------------------------------------- types -- */

/* Scalar data types as written after a dot.  ORDER TYPE: ptx_type_name[]. */
typedef enum ptx_type {
  PTX_T_NONE = 0,
  PTX_T_PRED,
  PTX_T_B8, PTX_T_B16, PTX_T_B32, PTX_T_B64, PTX_T_B128,
  PTX_T_U8, PTX_T_U16, PTX_T_U32, PTX_T_U64,
  PTX_T_S8, PTX_T_S16, PTX_T_S32, PTX_T_S64,
  PTX_T_F16, PTX_T_F16X2, PTX_T_BF16, PTX_T_BF16X2,
  PTX_T_TF32, PTX_T_F32, PTX_T_F64,
  PTX_T_E4M3X2, PTX_T_E5M2X2,
  PTX_T_U16X2, PTX_T_S16X2, /* min/max SIMD pairs (PTX 8.0, sm_90) */
  PTX_T_COUNT
} ptx_type;

/* Size in bytes of one value of type t (pred: 1; none: 0). */
unsigned ptx_type_size(ptx_type t);
/* Name without the dot ("f32"); "" for PTX_T_NONE. */
const char *ptx_type_name(ptx_type t);

/* State spaces.  GENERIC means no space modifier on a memory instruction. */
typedef enum ptx_space {
  PTX_SP_NONE = 0, PTX_SP_GENERIC, PTX_SP_GLOBAL, PTX_SP_SHARED,
  PTX_SP_SHARED_CLUSTER, PTX_SP_LOCAL, PTX_SP_PARAM, PTX_SP_CONST,
  PTX_SP_TEX, PTX_SP_REG,
  PTX_SP_COUNT
} ptx_space;
const char *ptx_space_name(ptx_space s);

/* Comparison operators of setp/set/slct (and the bool op combine of setp). */
typedef enum ptx_cmp {
  PTX_CMP_NONE = 0,
  PTX_CMP_EQ, PTX_CMP_NE, PTX_CMP_LT, PTX_CMP_LE, PTX_CMP_GT, PTX_CMP_GE,
  PTX_CMP_LO, PTX_CMP_LS, PTX_CMP_HI, PTX_CMP_HS,
  PTX_CMP_EQU, PTX_CMP_NEU, PTX_CMP_LTU, PTX_CMP_LEU, PTX_CMP_GTU,
  PTX_CMP_GEU, PTX_CMP_NUM, PTX_CMP_NAN
} ptx_cmp;

/* Rounding modifiers. */
typedef enum ptx_rnd {
  PTX_RND_NONE = 0,
  PTX_RND_RN, PTX_RND_RZ, PTX_RND_RM, PTX_RND_RP, PTX_RND_RNA, PTX_RND_RS,
  PTX_RND_RNI, PTX_RND_RZI, PTX_RND_RMI, PTX_RND_RPI
} ptx_rnd;

/* Instruction flag bits (ptx_insn.flags), one per modifier that is a switch. */
enum {
  PTX_F_FTZ      = 1u << 0,  /* .ftz */
  PTX_F_SAT      = 1u << 1,  /* .sat (also .satfinite) */
  PTX_F_APPROX   = 1u << 2,  /* .approx */
  PTX_F_FULL     = 1u << 3,  /* .full */
  PTX_F_UNI      = 1u << 4,  /* .uni on bra/call/ret */
  PTX_F_NC       = 1u << 5,  /* .nc on ld */
  PTX_F_WIDE     = 1u << 6,  /* .wide on mul/mad */
  PTX_F_HI       = 1u << 7,  /* .hi */
  PTX_F_LO       = 1u << 8,  /* .lo */
  PTX_F_VOLATILE = 1u << 9,  /* .volatile */
  PTX_F_SYNC     = 1u << 10, /* .sync (shfl.sync, vote.sync, bar.sync ...) */
  PTX_F_ALIGNED  = 1u << 11, /* .aligned */
  PTX_F_TO       = 1u << 12, /* .to on cvta */
  PTX_F_CC       = 1u << 13, /* .cc (carry out) */
  PTX_F_SHIFTAMT = 1u << 14, /* .shiftamt on bfind */
  PTX_F_CLAMP    = 1u << 15, /* .clamp on shf */
  PTX_F_WRAP     = 1u << 16, /* .wrap on shf */
  PTX_F_RELU     = 1u << 17, /* .relu */
  PTX_F_NAN      = 1u << 18, /* .NaN on min/max */
  PTX_F_ARRIVE   = 1u << 19, /* .arrive (bar.arrive, barrier.arrive) */
  PTX_F_RED      = 1u << 20, /* .red (bar.red) */
  PTX_F_LEFT     = 1u << 21, /* .l on shf */
  PTX_F_RIGHT    = 1u << 22, /* .r on shf */
  PTX_F_NOFTZ    = 1u << 23, /* .noftz */
  PTX_F_PACK     = 1u << 24  /* .pack on cvt */
};

/* Sub-operation (ptx_insn.aux): its meaning depends on the opcode. */
typedef enum ptx_aux {
  PTX_AUX_NONE = 0,
  /* atom / red / redux / bar.red: */
  PTX_AUX_ADD, PTX_AUX_MIN, PTX_AUX_MAX, PTX_AUX_INC, PTX_AUX_DEC,
  PTX_AUX_CAS, PTX_AUX_EXCH, PTX_AUX_AND, PTX_AUX_OR, PTX_AUX_XOR,
  PTX_AUX_POPC,
  /* shfl: */
  PTX_AUX_UP, PTX_AUX_DOWN, PTX_AUX_BFLY, PTX_AUX_IDX,
  /* vote / match: */
  PTX_AUX_ALL, PTX_AUX_ANY, PTX_AUX_UNIALL, PTX_AUX_BALLOT,
  /* match uses PTX_AUX_ANY / PTX_AUX_ALL */
  /* prmt modes: */
  PTX_AUX_F4E, PTX_AUX_B4E, PTX_AUX_RC8, PTX_AUX_ECL, PTX_AUX_ECR,
  PTX_AUX_RC16,
  /* membar / fence scope: */
  PTX_AUX_CTA, PTX_AUX_GL, PTX_AUX_SYS, PTX_AUX_GPU, PTX_AUX_CLUSTER,
  /* testp property: */
  PTX_AUX_FINITE, PTX_AUX_INFINITE, PTX_AUX_NUMBER, PTX_AUX_NOTANUMBER,
  PTX_AUX_NORMAL, PTX_AUX_SUBNORMAL
} ptx_aux;

/* ------------------------------------------------------------ operands -- */

typedef enum ptx_opnd_kind {
  PTX_OPND_NONE = 0,
  PTX_OPND_REG,      /* a register slot: u.reg (index into ptx_func.regs) */
  PTX_OPND_SREG,     /* a special register: u.sreg (ptx_sreg) */
  PTX_OPND_IMM_INT,  /* integer immediate: u.i (two's complement, 64 bits) */
  PTX_OPND_IMM_F32,  /* 0fXXXXXXXX or a decimal float in f32 context: u.f32bits */
  PTX_OPND_IMM_F64,  /* 0dXXXXXXXXXXXXXXXX or a decimal float: u.f64bits */
  PTX_OPND_SYM,      /* a module/function symbol used as a value: u.sym */
  PTX_OPND_LABEL,    /* a branch target: u.label (index into ptx_func.labels) */
  PTX_OPND_FUNC,     /* a called function: u.func (index into ptx_module.funcs) */
  PTX_OPND_ADDR,     /* [base + offset]: u.addr */
  PTX_OPND_VEC,      /* {a, b, ...}: u.vec (elements are following operands) */
  PTX_OPND_LIST,     /* (a, b, ...) of call: u.vec, like VEC */
  PTX_OPND_SINK      /* _ */
} ptx_opnd_kind;

/* Special registers.  ORDER SREG: ptx_sreg_name[]. x/y/z are consecutive. */
typedef enum ptx_sreg {
  PTX_SR_TID_X, PTX_SR_TID_Y, PTX_SR_TID_Z,
  PTX_SR_NTID_X, PTX_SR_NTID_Y, PTX_SR_NTID_Z,
  PTX_SR_CTAID_X, PTX_SR_CTAID_Y, PTX_SR_CTAID_Z,
  PTX_SR_NCTAID_X, PTX_SR_NCTAID_Y, PTX_SR_NCTAID_Z,
  PTX_SR_LANEID, PTX_SR_WARPID, PTX_SR_NWARPID, PTX_SR_SMID, PTX_SR_NSMID,
  PTX_SR_GRIDID,
  PTX_SR_LANEMASK_EQ, PTX_SR_LANEMASK_LE, PTX_SR_LANEMASK_LT,
  PTX_SR_LANEMASK_GE, PTX_SR_LANEMASK_GT,
  PTX_SR_CLOCK, PTX_SR_CLOCK_HI, PTX_SR_CLOCK64, PTX_SR_GLOBALTIMER,
  PTX_SR_GLOBALTIMER_LO, PTX_SR_GLOBALTIMER_HI,
  PTX_SR_DYNAMIC_SMEM_SIZE, PTX_SR_TOTAL_SMEM_SIZE,
  PTX_SR_CLUSTERID_X, PTX_SR_CLUSTERID_Y, PTX_SR_CLUSTERID_Z,
  PTX_SR_NCLUSTERID_X, PTX_SR_NCLUSTERID_Y, PTX_SR_NCLUSTERID_Z,
  PTX_SR_CLUSTER_CTAID_X, PTX_SR_CLUSTER_CTAID_Y, PTX_SR_CLUSTER_CTAID_Z,
  PTX_SR_CLUSTER_NCTAID_X, PTX_SR_CLUSTER_NCTAID_Y, PTX_SR_CLUSTER_NCTAID_Z,
  PTX_SR_CLUSTER_CTARANK, PTX_SR_CLUSTER_NCTARANK,
  /* the CTA's reserved shared memory (sm_80+: cooperative groups' scratch,
     read by code nvcc -G keeps) and the registers ptxas accepts beside it */
  PTX_SR_RESERVED_SMEM_BEGIN, PTX_SR_RESERVED_SMEM_END, PTX_SR_RESERVED_SMEM_CAP,
  PTX_SR_RESERVED_SMEM_0, PTX_SR_RESERVED_SMEM_1,
  PTX_SR_AGGR_SMEM_SIZE, PTX_SR_IS_EXPLICIT_CLUSTER, PTX_SR_CURRENT_GRAPH_EXEC,
  PTX_SR_ENVREG0, /* %envreg0..31 follow consecutively */
  PTX_SR_COUNT = PTX_SR_ENVREG0 + 32
} ptx_sreg;
const char *ptx_sreg_name(ptx_sreg s);

typedef struct ptx_operand {
  uint8_t kind;    /* ptx_opnd_kind */
  uint8_t neg;     /* 1 if written with '!' (predicate negation) */
  uint8_t fmt;     /* immediates: how it was written (PTX_IMMFMT_*), for printing */
  uint8_t pipe;    /* 1 if this operand was joined to the previous one by '|'
                      (shfl %r|%p); it is a top-level operand of its own,
                      counted in ptx_insn.nopnd but not in the op table's
                      min/max check */
  uint8_t sym_local; /* SYM, and ADDR with a symbol base: 1 when the symbol
                        is function-scope (index into ptx_func.vars, which
                        begins with the params), 0 for ptx_module.vars.
                        Mirrors u.addr.sym_local, which SYM cannot use */
  uint32_t n;      /* VEC/LIST: number of element operands that follow;
                      ADDR: elements of a texture coordinate vector written
                      inside the brackets ([%rd1, {%f1, %f2}]), 0 otherwise */
  union {
    uint32_t reg;       /* REG: slot in ptx_func.regs */
    uint32_t sreg;      /* SREG: ptx_sreg */
    int64_t i;          /* IMM_INT */
    uint32_t f32bits;   /* IMM_F32 */
    uint64_t f64bits;   /* IMM_F64 */
    uint32_t sym;       /* SYM: index into ptx_module.vars, or into the function's
                           local vars when sym_local is set (see ptx_addr) */
    uint32_t label;     /* LABEL */
    uint32_t func;      /* FUNC (also a function name used as a value) */
    struct ptx_addr {
      uint8_t base_kind;  /* PTX_OPND_REG, PTX_OPND_SYM or PTX_OPND_IMM_INT (absolute) */
      uint8_t sym_local;  /* base symbol is a function-local var (ptx_func.vars) */
      uint32_t base;      /* register slot or symbol index */
      int64_t offset;     /* byte offset added to the base */
    } addr;
  } u;
} ptx_operand;

/* Immediate spelling, so that printing reproduces the source.  The low four
   bits are the base (PTX_IMMFMT_KIND), the high bits are flags. */
enum { PTX_IMMFMT_DEC = 0, PTX_IMMFMT_HEX, PTX_IMMFMT_OCT, PTX_IMMFMT_BIN,
       PTX_IMMFMT_FHEX /* 0f/0d */, PTX_IMMFMT_FDEC /* 1.5, 1e3 */,
       PTX_IMMFMT_KIND = 0x0F,
       PTX_IMMFMT_UPPER = 0x10    /* hex digits written A-F */,
       PTX_IMMFMT_UPPREFIX = 0x20 /* prefix written 0X / 0F / 0D / 0B */,
       PTX_IMMFMT_NEG = 0x40      /* written with a leading '-' */,
       PTX_IMMFMT_UNSIGNED = 0x80 /* suffix U */ };

/* Address spelling (ptx_operand.fmt of an ADDR). */
enum { PTX_ADDRFMT_OFFSET = 1 /* an offset was written, even +0 */,
       PTX_ADDRFMT_MINUS = 2  /* written base-N rather than base+-N */ };

/* --------------------------------------------------------- instructions -- */

typedef struct ptx_insn {
  uint16_t op;        /* ptx_op (ptx_ops.h) */
  uint8_t type;       /* primary type (ptx_type): the only type modifier, or
                         with several the first one (the destination's) */
  uint8_t type2;      /* the other type of two-type instructions: for cvt and
                         cvt-like forms the source type (dst is `type`); for
                         setp/set the comparison type and `type` the result
                         (PTX_T_PRED for setp, the first type of set) */
  uint8_t space;      /* ptx_space for memory instructions, cvta and isspacep */
  uint8_t cmp;        /* ptx_cmp of setp/set/slct */
  uint8_t boolop;     /* setp/set combine: PTX_AUX_AND/OR/XOR or 0 */
  uint8_t rnd;        /* ptx_rnd */
  uint8_t aux;        /* ptx_aux: atom/red op, shfl mode, vote mode, prmt mode,
                         membar/fence scope, testp property */
  uint8_t vec;        /* vector width: 1, 2, 4 or 8 */
  uint8_t nopnd;      /* number of top-level operands (a '|'-joined one
                         counts; see ptx_operand.pipe) */
  uint8_t guard_neg;  /* 1 when the guard is @!%p */
  uint32_t flags;     /* PTX_F_* */
  int32_t guard;      /* register slot of the guard predicate, -1 when none */
  uint32_t key;       /* opcode key: index into ptx_module.keys */
  uint32_t opnd;      /* first operand: index into ptx_func.opnds; the operands
                         of one instruction are contiguous; VEC/LIST elements
                         (and the n coordinates of a texture ADDR) follow
                         their header and are not counted in nopnd; use
                         ptx_insn_opnd() to index top-level operands */
  uint32_t line;      /* 1-based source line of the mnemonic */
  uint32_t col;       /* 1-based source column of the mnemonic */
  uint32_t src_line;  /* the program's source line (the .loc before it, as
                         nvcc -lineinfo and clang -gline-directives-only
                         write them); 0 when the PTX has none */
  uint32_t src_file;  /* that .loc's file number (ptx_module.files) */
} ptx_insn;

/* ------------------------------------------------------------ variables -- */

typedef struct ptx_var {
  const char *name;
  uint8_t space;      /* ptx_space: GLOBAL, SHARED, CONST, LOCAL, PARAM */
  uint8_t type;       /* element type */
  uint8_t vec;        /* .v2/.v4 element vector width, 1 otherwise */
  uint8_t is_extern;  /* .extern */
  uint8_t is_visible; /* .visible */
  uint8_t is_weak;    /* .weak */
  uint8_t is_ptr;     /* param with .ptr attribute */
  uint8_t ptr_space;  /* .ptr.global etc.: ptx_space, NONE when unspecified */
  uint32_t align;     /* .align N, 0 when absent */
  uint64_t count;     /* array elements (product of all dims); 1 for a scalar;
                         0 for an unsized extern array `[]` */
  uint64_t size;      /* bytes = count * ptx_type_size(type) * vec */
  uint8_t *init;      /* initialiser bytes (size bytes, little endian), or
                         NULL when the variable has none */
  uint32_t init_syms; /* number of entries in init_reloc (generic(sym) /
                         symbol addresses inside an initialiser) */
  struct ptx_reloc {
    uint64_t offset;  /* byte offset in init where the address goes */
    uint32_t sym;     /* ptx_module.vars index, or ptx_module.funcs when is_func */
    int64_t addend;   /* sym+8 -> 8 */
    uint8_t is_func;  /* the symbol is a function (function-pointer table) */
    uint8_t generic;  /* written generic(sym) */
  } *init_reloc;
  uint32_t line;
} ptx_var;

/* A declared register slot.  `%r<6>` declares slots %r0 .. %r5. */
typedef struct ptx_reg {
  const char *name;   /* full name, e.g. "%r5" (interned in the module) */
  uint8_t type;       /* ptx_type */
  uint8_t vec;        /* 1, 2 or 4 for .v2/.v4 registers */
} ptx_reg;

/* Branch targets; jump tables (`$L_brx_0: .branchtargets $L_a, $L_b;`),
   which brx.idx names as its last operand (a LABEL); and the names of
   `.callprototype` declarations (`prototype_0: .callprototype ...`), which
   an indirect call names as its last operand (a LABEL).  The parser checks
   that every brx.idx names a table, that no bra names one, and that a table
   lists only code labels (never a table). */
typedef struct ptx_label {
  const char *name;
  uint32_t insn;      /* index of the first instruction after the label
                         (== ninsns when the label ends the body); for a
                         table, of the one after the directive, which is not
                         a branch target */
  uint32_t ntargets;  /* .branchtargets: entries of the jump table (>= 1);
                         0 for every other label */
  uint32_t *targets;  /* .branchtargets: label indices of the jump table in
                         table order (owned by the module's arena); NULL for
                         every other label */
} ptx_label;

/* ------------------------------------------------------------- the CFG -- */

typedef struct ptx_block {
  uint32_t first;     /* first instruction (index into ptx_func.insns) */
  uint32_t count;     /* number of instructions */
  uint32_t nsucc;     /* 0, 1 or 2 successors; brx.idx: the distinct
                         targets of its table, plus the fall-through when
                         guarded */
  uint32_t *succ;     /* successor block indices; for a conditional branch
                         succ[0] is the taken target, succ[1] the fall-through;
                         for brx.idx the table's targets in table order (a
                         block listed again is not repeated), then the
                         fall-through */
  uint32_t npred;
  uint32_t *pred;
  int32_t idom;       /* immediate dominator, -1 for the entry and unreachable */
  int32_t ipdom;      /* immediate post-dominator; PTX_EXIT_BLOCK when the
                         block reaches exit directly; -1 when no path to exit */
  uint32_t loop_depth;/* number of natural loops containing the block */
  uint32_t chain;     /* critical path of the block: the most instructions in
                         one chain where each reads a register an earlier one
                         of the chain wrote, every instruction counting 1
                         (>= 1 for a non-empty block); count / chain is the
                         block's instruction-level parallelism */
  uint8_t reachable;  /* reachable from the entry */
} ptx_block;

#define PTX_EXIT_BLOCK (-2)

typedef struct ptx_edge { uint32_t from, to; } ptx_edge;

typedef struct ptx_cfg {
  uint32_t nblocks;
  ptx_block *blocks;      /* block 0 is the entry */
  uint32_t *block_of;     /* instruction index -> block index */
  uint32_t nback;         /* back edges (to a dominating header) */
  ptx_edge *back;
  uint32_t nloops;        /* natural loops = distinct back-edge headers */
} ptx_cfg;

/* ------------------------------------------------------------ functions -- */

typedef struct ptx_func {
  const char *name;
  uint8_t is_entry;       /* .entry (kernel) vs .func */
  uint8_t is_extern;      /* declared only (.extern or prototype without body) */
  uint8_t is_visible;
  uint8_t is_weak;
  uint8_t has_body;
  uint32_t nparams;
  ptx_var *params;        /* space PARAM, in order */
  uint32_t nrets;
  ptx_var *rets;          /* .func return params */
  uint32_t nregs;
  ptx_reg *regs;          /* all register slots, including nested scopes */
  uint32_t nvars;
  ptx_var *vars;          /* every function-scope symbol: first the nparams
                             params (params == vars), then the nrets return
                             params (rets == vars + nparams), then the body's
                             .local/.shared/.param/.const declarations in
                             source order (each nested-scope redeclaration,
                             e.g. nvcc's per-callseq `param0`, is its own) */
  uint32_t ninsns;
  ptx_insn *insns;
  uint32_t nopnds;
  ptx_operand *opnds;
  uint32_t nlabels;
  ptx_label *labels;
  /* performance directives; 0 when absent */
  uint32_t maxntid[3], reqntid[3], minnctapersm, maxnreg, maxclusterrank;
  uint32_t reqnctapercluster[3]; /* __cluster_dims__: CTAs per cluster */
  uint32_t line;          /* line of the .entry/.func directive */
  ptx_cfg *cfg;           /* NULL until ptx_cfg_build() */
} ptx_func;

typedef struct ptx_module {
  const char *filename;   /* as passed to ptx_parse (for messages) */
  uint32_t version_major, version_minor; /* .version */
  char target[64];        /* .target list as written, e.g. "sm_90" */
  uint32_t address_size;  /* 32 or 64 */
  uint32_t nvars;
  ptx_var *vars;          /* module-scope variables, in order */
  uint32_t nfuncs;
  ptx_func *funcs;        /* in order; prototypes and definitions of the same
                             name are merged into one entry */
  uint32_t nkeys;
  const char **keys;      /* interned opcode keys ("ld.global.f32") */
  uint32_t nfiles;
  const char **files;     /* .file N "NAME": files[N] (NULL where none was
                             declared), for ptx_insn.src_file */
  struct ptx_arena *arena;/* owns all strings and arrays */
  uint8_t cfg_built;      /* every function with a body has its CFG
                             (ptx_cfg_build succeeded once) */
} ptx_module;

/* Where instruction i came from, for messages: "FILE:LINE (PTX line N)" of
   the program's source when the PTX has line information for it
   (.loc/.file), else "PTXFILE:LINE" (m->filename, the PTX line), into buf;
   returns buf. */
const char *ptx_insn_where(const ptx_module *m, const ptx_insn *i, char *buf, size_t cap);

/* ------------------------------------------------------------- the API -- */

/* Error details of a failed parse.  msg reads "FILE:LINE:COL: error: ..." */
typedef struct ptx_error {
  uint32_t line, col;
  char msg[512];
} ptx_error;

/*
 * Parse PTX text (len bytes, need not be NUL-terminated).  filename is used
 * in messages only.  Returns a module, or NULL with *err filled in (err may
 * be NULL).  Never reads past text+len; accepts lines of any length.
 */
ptx_module *ptx_parse(const char *text, size_t len, const char *filename,
                      ptx_error *err);

/* Read a whole file and parse it.  I/O errors are reported through err. */
ptx_module *ptx_parse_file(const char *path, ptx_error *err);

/* Free a module and everything it owns.  Accepts NULL. */
void ptx_module_free(ptx_module *m);

/* Look up a function (kernel or .func) by name; NULL when absent. */
ptx_func *ptx_find_func(const ptx_module *m, const char *name);

/*
 * Print instruction i of f as PTX text (guard, key, operands; no trailing
 * semicolon) into buf (cap bytes, always NUL-terminated).  Returns the length
 * the full text needs, like snprintf.
 */
size_t ptx_insn_print(const ptx_module *m, const ptx_func *f,
                      const ptx_insn *i, char *buf, size_t cap);

/*
 * Argument-buffer layout of f's parameters: each parameter at its natural
 * alignment or its .align (a `.ptr .align N` attribute is the pointee's
 * alignment and does not move the pointer itself).  offsets (room for
 * f->nparams entries) may be NULL.  *end is the end of the last parameter
 * (no trailing padding); *total is that rounded up to the largest alignment.
 * Either may be NULL.
 */
void ptx_param_layout(const ptx_func *f, size_t *offsets, size_t *end,
                      size_t *total);

/* Opcode key text of an instruction. */
static inline const char *ptx_insn_key(const ptx_module *m, const ptx_insn *i) {
  return m->keys[i->key];
}

/* Operand j (0-based, top level) of instruction i. */
const ptx_operand *ptx_insn_opnd(const ptx_func *f, const ptx_insn *i,
                                 unsigned j);

/*
 * Build the CFG of every function with a body (blocks, edges, dominators,
 * immediate post-dominators, back edges, loop depth).  Idempotent.  Returns 0,
 * or -1 with *err filled in (a branch to an unknown label is caught by the
 * parser, so this fails only on allocation failure).
 */
int ptx_cfg_build(ptx_module *m, ptx_error *err);

#endif
