/*
 * features.h -- named feature vectors, the instruction-class taxonomy and the
 * static features of a kernel.
 *
 * A feature vector maps names ("op.ld.global.f32", "class.fp32",
 * "launch.threads") to doubles.  It is what the extractor and the emulator
 * produce, what the dataset store keeps and what a model reads.  Names are
 * copied into the vector; the vector owns them.  docs/features.md is the
 * normative list of names and the taxonomy.
 */
#ifndef KCAST_FEATURES_H
#define KCAST_FEATURES_H

#include <stddef.h>

#include "ptx.h"

typedef struct feat_vec {
  size_t n;        /* number of features */
  size_t cap;      /* allocated slots */
  char **names;    /* NUL-terminated, unique; stored in the vector's arena
                      (never freed one by one: feat_free frees them all) */
  double *vals;
  size_t *hash;    /* open-addressing index over names (cap*2 slots), private */
  size_t hcap;
  char *arena;     /* private: the newest block of names (its first word
                      links the block before), and the bytes left in it */
  size_t arena_left;
} feat_vec;

void feat_init(feat_vec *v);
/* Free names and arrays; leaves an empty vector.  Accepts NULL. */
void feat_free(feat_vec *v);
/* Set name to value (insert or overwrite).  0 on success, -1 on ENOMEM. */
int feat_set(feat_vec *v, const char *name, double value);
/* Add value to name (inserting it at 0 first).  0 on success, -1 on ENOMEM. */
int feat_add(feat_vec *v, const char *name, double value);
/* Value of name, or dflt when absent. */
double feat_get(const feat_vec *v, const char *name, double dflt);
/* Index of name, or -1 when absent. */
long feat_find(const feat_vec *v, const char *name);
/* feat_find with h = feat_name_hash(name) computed once by the caller, for
   names looked up again and again (a model's features, every prediction). */
size_t feat_name_hash(const char *name);
long feat_find_hashed(const feat_vec *v, const char *name, size_t h);
/* feat_set with h = feat_name_hash(name) computed once by the caller. */
int feat_set_hashed(feat_vec *v, const char *name, size_t h, double value);
/* Room for n names without growing (a set whose size is known: an
   operator launch's 34); 0, or -1 on ENOMEM. */
int feat_reserve(feat_vec *v, size_t n);
/* Sort by name (bytewise); keeps the index valid. */
void feat_sort(feat_vec *v);

/* ---------------------------------------------------- instruction classes -- */

/*
 * Every opcode key maps to exactly one class.  The class depends on the
 * opcode and its semantic modifiers (state space, data kind), never on the
 * spelling of an untyped move (ld.global.b32 and ld.global.f32 are both
 * "ld_global").  ORDER CLASS: feat_class_names[] in features.c.
 */
typedef enum feat_class {
  FEAT_C_INT_ARITH,   /* integer add/sub/mul/mad/div/rem/abs/neg/min/max/sad... */
  FEAT_C_FP16,        /* half/bfloat16 arithmetic */
  FEAT_C_FP32,        /* single precision add/sub/mul/fma/div/min/max/abs/neg */
  FEAT_C_FP64,        /* double precision arithmetic */
  FEAT_C_SPECIAL,     /* sqrt rsqrt rcp sin cos ex2 lg2 tanh (any precision) */
  FEAT_C_LOGIC,       /* and or xor not cnot lop3 shl shr shf bfe bfi brev popc clz bfind prmt */
  FEAT_C_COMPARE,     /* setp set selp slct testp */
  FEAT_C_CONVERT,     /* cvt cvta */
  FEAT_C_MOVE,        /* mov */
  FEAT_C_LD_GLOBAL, FEAT_C_ST_GLOBAL,
  FEAT_C_LD_SHARED, FEAT_C_ST_SHARED,
  FEAT_C_LD_LOCAL,  FEAT_C_ST_LOCAL,
  FEAT_C_LD_PARAM,  FEAT_C_ST_PARAM,
  FEAT_C_LD_CONST,
  FEAT_C_LD_GENERIC, FEAT_C_ST_GENERIC,
  FEAT_C_ATOMIC_GLOBAL, /* atom/red in global (or generic) space */
  FEAT_C_ATOMIC_SHARED,
  FEAT_C_CONTROL,     /* bra brx call ret exit trap */
  FEAT_C_SYNC,        /* bar barrier membar fence */
  FEAT_C_WARP,        /* shfl vote match activemask redux elect */
  FEAT_C_TENSOR,      /* mma wmma wgmma ldmatrix stmatrix */
  FEAT_C_TEXTURE,     /* tex tld4 txq suld sust sured suq */
  FEAT_C_OTHER,       /* everything else (prefetch, nanosleep, ...) */
  FEAT_C_COUNT
} feat_class;

/* Class name without prefix ("fp32"); the feature is "class.<name>". */
const char *feat_class_name(feat_class c);
/* Class of an opcode key ("ld.global.nc.f32"); FEAT_C_OTHER for unknown. */
feat_class feat_class_of_key(const char *key);
/*
 * Bytes one thread moves for a memory opcode key (ld/st/atom/red/ldu; vector
 * width times element size), 0 for keys that do not access memory.
 */
unsigned feat_mem_bytes_of_key(const char *key);

/* ------------------------------------------------------ static features -- */

struct fe_ptxas_kernel;
/* The ptxas.<arch>.* features (registers, spill_store_bytes,
   spill_load_bytes, stack_bytes, smem_bytes) of one kernel's ptxas report
   (extractor/frontend.h, fe_ptxas) into out.  0, or -1 out of memory. */
int feat_ptxas(const struct fe_ptxas_kernel *k, const char *arch, feat_vec *out);

/*
 * Static features of kernel k (a .entry of m with a body): every name with
 * prefix "static.".  Counts include the .funcs k can call (transitively, each
 * callee counted once per call site).  Builds the CFG if needed.  Returns 0,
 * or -1 with err filled in.
 */
int feat_static(ptx_module *m, const ptx_func *k, feat_vec *out,
                ptx_error *err);

#endif
