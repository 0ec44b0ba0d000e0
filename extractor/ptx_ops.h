/*
 * ptx_ops.h -- the one table that describes the PTX instruction set.
 *
 * Each row: enum suffix, mnemonic, min and max top-level operand count, and
 * property bits.  The parser recognises mnemonics from this table (anything
 * else is "unknown instruction"), the printer and the feature extractor read
 * the names, and the emulator dispatches on the enum.  ORDER OP: the enum and
 * ptx_op_info[] are both generated from PTX_OPS, so they cannot drift apart.
 *
 * Operand counts are checked by the parser (a guard is not an operand; a
 * vector {a,b} or a call list (a,b) counts as one).  -1 as max = unbounded.
 */
#ifndef KCAST_PTX_OPS_H
#define KCAST_PTX_OPS_H

#include <stdint.h>

/* Property bits. */
enum {
  PTX_OPF_NODST   = 1u << 0,  /* first operand is not a destination */
  PTX_OPF_BRANCH  = 1u << 1,  /* transfers control within the function */
  PTX_OPF_CALL    = 1u << 2,
  PTX_OPF_RET     = 1u << 3,  /* ret: leave the current function */
  PTX_OPF_EXIT    = 1u << 4,  /* exit, trap: retire the thread */
  PTX_OPF_LOAD    = 1u << 5,  /* reads memory through an address operand */
  PTX_OPF_STORE   = 1u << 6,  /* writes memory through an address operand */
  PTX_OPF_ATOMIC  = 1u << 7,  /* read-modify-write */
  PTX_OPF_BARRIER = 1u << 8,  /* CTA-wide synchronisation */
  PTX_OPF_WARP    = 1u << 9,  /* warp-synchronous: sees the other lanes */
  PTX_OPF_FENCE   = 1u << 10, /* memory ordering only */
  PTX_OPF_TYPED   = 1u << 11, /* needs a type modifier */
  PTX_OPF_ASYNC   = 1u << 12, /* asynchronous copy / tensor-memory family */
  PTX_OPF_TEX     = 1u << 13  /* texture/surface family */
};

#define PTX_OPS(X) \
  X(ABS,        "abs",        2, 2, PTX_OPF_TYPED) \
  X(ACTIVEMASK, "activemask", 1, 1, PTX_OPF_WARP) \
  X(ADD,        "add",        3, 3, PTX_OPF_TYPED) \
  X(ADDC,       "addc",       3, 3, PTX_OPF_TYPED) \
  X(ALLOCA,     "alloca",     2, 3, 0) \
  X(AND,        "and",        3, 3, PTX_OPF_TYPED) \
  X(APPLYPRIORITY, "applypriority", 2, 2, PTX_OPF_NODST) \
  X(ATOM,       "atom",       3, 5, PTX_OPF_LOAD | PTX_OPF_STORE | PTX_OPF_ATOMIC | PTX_OPF_TYPED) \
  X(BAR,        "bar",        0, 3, PTX_OPF_NODST | PTX_OPF_BARRIER) \
  X(BARRIER,    "barrier",    0, 3, PTX_OPF_NODST | PTX_OPF_BARRIER) \
  X(BFE,        "bfe",        4, 4, PTX_OPF_TYPED) \
  X(BFI,        "bfi",        5, 5, PTX_OPF_TYPED) \
  X(BFIND,      "bfind",      2, 2, PTX_OPF_TYPED) \
  X(BMSK,       "bmsk",       3, 3, PTX_OPF_TYPED) \
  X(BRA,        "bra",        1, 1, PTX_OPF_NODST | PTX_OPF_BRANCH) \
  X(BREV,       "brev",       2, 2, PTX_OPF_TYPED) \
  X(BRKPT,      "brkpt",      0, 0, PTX_OPF_NODST) \
  X(BRX,        "brx",        2, 2, PTX_OPF_NODST | PTX_OPF_BRANCH) \
  X(CALL,       "call",       1, 4, PTX_OPF_NODST | PTX_OPF_CALL) \
  X(CLZ,        "clz",        2, 2, PTX_OPF_TYPED) \
  X(CNOT,       "cnot",       2, 2, PTX_OPF_TYPED) \
  X(COPYSIGN,   "copysign",   3, 3, PTX_OPF_TYPED) \
  X(COS,        "cos",        2, 2, PTX_OPF_TYPED) \
  X(CP,         "cp",         0, 6, PTX_OPF_NODST | PTX_OPF_LOAD | PTX_OPF_STORE | PTX_OPF_ASYNC) \
  X(CREATEPOLICY, "createpolicy", 2, 4, 0) \
  X(CVT,        "cvt",        2, 4, PTX_OPF_TYPED) \
  X(CVTA,       "cvta",       2, 2, PTX_OPF_TYPED) \
  X(DISCARD,    "discard",    2, 2, PTX_OPF_NODST) \
  X(DIV,        "div",        3, 3, PTX_OPF_TYPED) \
  X(DP2A,       "dp2a",       4, 4, 0) \
  X(DP4A,       "dp4a",       4, 4, 0) \
  X(ELECT,      "elect",      2, 2, PTX_OPF_WARP) \
  X(EX2,        "ex2",        2, 2, PTX_OPF_TYPED) \
  X(EXIT,       "exit",       0, 0, PTX_OPF_NODST | PTX_OPF_EXIT) \
  X(FENCE,      "fence",      0, 2, PTX_OPF_NODST | PTX_OPF_FENCE) \
  X(FMA,        "fma",        4, 4, PTX_OPF_TYPED) \
  X(FNS,        "fns",        4, 4, 0) \
  X(GETCTARANK, "getctarank", 2, 2, 0) \
  X(GRIDDEPCONTROL, "griddepcontrol", 0, 0, PTX_OPF_NODST) \
  X(ISSPACEP,   "isspacep",   2, 2, 0) \
  X(ISTYPEOF,   "istypeof",   3, 3, 0) \
  X(LD,         "ld",         2, 4, PTX_OPF_LOAD | PTX_OPF_TYPED) \
  X(LDMATRIX,   "ldmatrix",   2, 2, PTX_OPF_LOAD | PTX_OPF_WARP) \
  X(LDU,        "ldu",        2, 2, PTX_OPF_LOAD | PTX_OPF_TYPED) \
  X(LG2,        "lg2",        2, 2, PTX_OPF_TYPED) \
  X(LOP3,       "lop3",       5, 5, PTX_OPF_TYPED) \
  X(MAD,        "mad",        4, 4, PTX_OPF_TYPED) \
  X(MAD24,      "mad24",      4, 4, PTX_OPF_TYPED) \
  X(MADC,       "madc",       4, 4, PTX_OPF_TYPED) \
  X(MAPA,       "mapa",       3, 3, 0) \
  X(MATCH,      "match",      3, 4, PTX_OPF_WARP | PTX_OPF_TYPED) \
  X(MAX,        "max",        3, 4, PTX_OPF_TYPED) \
  X(MBARRIER,   "mbarrier",   1, 4, PTX_OPF_LOAD | PTX_OPF_STORE | PTX_OPF_ASYNC) \
  X(MEMBAR,     "membar",     0, 0, PTX_OPF_NODST | PTX_OPF_FENCE) \
  X(MIN,        "min",        3, 4, PTX_OPF_TYPED) \
  X(MMA,        "mma",        4, 6, PTX_OPF_WARP) \
  X(MOV,        "mov",        2, 2, PTX_OPF_TYPED) \
  X(MUL,        "mul",        3, 3, PTX_OPF_TYPED) \
  X(MUL24,      "mul24",      3, 3, PTX_OPF_TYPED) \
  X(MULTIMEM,   "multimem",   2, 3, PTX_OPF_LOAD | PTX_OPF_STORE) \
  X(NANOSLEEP,  "nanosleep",  1, 1, PTX_OPF_NODST) \
  X(NEG,        "neg",        2, 2, PTX_OPF_TYPED) \
  X(NOT,        "not",        2, 2, PTX_OPF_TYPED) \
  X(OR,         "or",         3, 3, PTX_OPF_TYPED) \
  X(PMEVENT,    "pmevent",    1, 1, PTX_OPF_NODST) \
  X(POPC,       "popc",       2, 2, PTX_OPF_TYPED) \
  X(PREFETCH,   "prefetch",   1, 1, PTX_OPF_NODST) \
  X(PREFETCHU,  "prefetchu",  1, 1, PTX_OPF_NODST) \
  X(PRMT,       "prmt",       4, 4, PTX_OPF_TYPED) \
  X(RCP,        "rcp",        2, 2, PTX_OPF_TYPED) \
  X(RED,        "red",        2, 3, PTX_OPF_NODST | PTX_OPF_LOAD | PTX_OPF_STORE | PTX_OPF_ATOMIC | PTX_OPF_TYPED) \
  X(REDUX,      "redux",      3, 3, PTX_OPF_WARP | PTX_OPF_TYPED) \
  X(REM,        "rem",        3, 3, PTX_OPF_TYPED) \
  X(RET,        "ret",        0, 0, PTX_OPF_NODST | PTX_OPF_RET) \
  X(RSQRT,      "rsqrt",      2, 2, PTX_OPF_TYPED) \
  X(SAD,        "sad",        4, 4, PTX_OPF_TYPED) \
  X(SELP,       "selp",       4, 4, PTX_OPF_TYPED) \
  X(SET,        "set",        3, 4, PTX_OPF_TYPED) \
  X(SETMAXNREG, "setmaxnreg", 1, 1, PTX_OPF_NODST) \
  X(SETP,       "setp",       3, 4, PTX_OPF_TYPED) \
  X(SHF,        "shf",        4, 4, PTX_OPF_TYPED) \
  X(SHFL,       "shfl",       4, 5, PTX_OPF_WARP | PTX_OPF_TYPED) \
  X(SHL,        "shl",        3, 3, PTX_OPF_TYPED) \
  X(SHR,        "shr",        3, 3, PTX_OPF_TYPED) \
  X(SIN,        "sin",        2, 2, PTX_OPF_TYPED) \
  X(SLCT,       "slct",       4, 4, PTX_OPF_TYPED) \
  X(SQRT,       "sqrt",       2, 2, PTX_OPF_TYPED) \
  X(STACKRESTORE, "stackrestore", 1, 1, PTX_OPF_NODST) \
  X(STACKSAVE,  "stacksave",  1, 1, 0) \
  X(ST,         "st",         2, 3, PTX_OPF_NODST | PTX_OPF_STORE | PTX_OPF_TYPED) \
  X(STMATRIX,   "stmatrix",   2, 2, PTX_OPF_NODST | PTX_OPF_STORE | PTX_OPF_WARP) \
  X(SUB,        "sub",        3, 3, PTX_OPF_TYPED) \
  X(SUBC,       "subc",       3, 3, PTX_OPF_TYPED) \
  X(SULD,       "suld",       2, 2, PTX_OPF_LOAD | PTX_OPF_TEX) \
  X(SUQ,        "suq",        2, 2, PTX_OPF_TEX) \
  X(SURED,      "sured",      2, 2, PTX_OPF_NODST | PTX_OPF_ATOMIC | PTX_OPF_TEX) \
  X(SUST,       "sust",       2, 2, PTX_OPF_NODST | PTX_OPF_STORE | PTX_OPF_TEX) \
  X(SZEXT,      "szext",      3, 3, PTX_OPF_TYPED) \
  X(TANH,       "tanh",       2, 2, PTX_OPF_TYPED) \
  X(TESTP,      "testp",      2, 2, PTX_OPF_TYPED) \
  X(TEX,        "tex",        2, 4, PTX_OPF_LOAD | PTX_OPF_TEX) \
  X(TLD4,       "tld4",       2, 4, PTX_OPF_LOAD | PTX_OPF_TEX) \
  X(TRAP,       "trap",       0, 0, PTX_OPF_NODST | PTX_OPF_EXIT) \
  X(TXQ,        "txq",        2, 3, PTX_OPF_TEX) \
  X(VABSDIFF,   "vabsdiff",   3, 4, 0) \
  X(VADD,       "vadd",       3, 4, 0) \
  X(VMAD,       "vmad",       4, 4, 0) \
  X(VMAX,       "vmax",       3, 4, 0) \
  X(VMIN,       "vmin",       3, 4, 0) \
  X(VOTE,       "vote",       2, 3, PTX_OPF_WARP) \
  X(VSET,       "vset",       3, 4, 0) \
  X(VSHL,       "vshl",       3, 4, 0) \
  X(VSHR,       "vshr",       3, 4, 0) \
  X(VSUB,       "vsub",       3, 4, 0) \
  X(WGMMA,      "wgmma",      0, 8, PTX_OPF_WARP | PTX_OPF_ASYNC) \
  X(WMMA,       "wmma",       2, 5, PTX_OPF_WARP) \
  X(XOR,        "xor",        3, 3, PTX_OPF_TYPED)

typedef enum ptx_op {
#define PTX_OP_ENUM(e, name, mn, mx, fl) PTX_OP_##e,
  PTX_OPS(PTX_OP_ENUM)
#undef PTX_OP_ENUM
  PTX_OP_COUNT
} ptx_op;

typedef struct ptx_op_info {
  const char *name;   /* mnemonic */
  int8_t min_opnds;   /* fewest top-level operands */
  int8_t max_opnds;   /* most top-level operands, -1 = unbounded */
  uint32_t flags;     /* PTX_OPF_* */
} ptx_op_info;

/* Indexed by ptx_op; defined in ptx_ops.c. */
extern const ptx_op_info ptx_op_info_table[PTX_OP_COUNT];

/* Opcode for a mnemonic (the text before the first dot); -1 when unknown. */
int ptx_op_lookup(const char *mnemonic, unsigned len);

#endif
