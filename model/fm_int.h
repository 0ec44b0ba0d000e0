/*
 * fm_int.h -- the feature model behind fm_model (model.h), shared by the
 * fitter (fm_fit.c) and the file reader/writer (fm_io.c).  Not part of any
 * interface.
 *
 * A model evaluates its quantities for a launch (fm_qty: grid and block
 * dimensions, dynamic shared bytes, CTAs, threads, warps, log2 of the block
 * size, the scalar arguments it reads, and for a kernel template the
 * integer template arguments of the instance), then each output from them
 * (fm_out).  Outputs of the fitted kinds are sums of at most FM_MAX_TERMS
 * terms, each a coefficient times a product of at most FM_MAX_FACTORS
 * quantities raised to exponents:
 *
 *   EXACT   sum of coef * prod q^e, integer e in [0, 3]: fits every
 *           training launch to 1e-7 relative (one or two monomials, or
 *           up to FM_MAX_TERMS of a full low-degree basis in the
 *           arguments)
 *   POWER   exp(coef + sum e * log q), real e: least squares in log space
 *   LINEAR  coef * prod q^e, one term, least squares (a count that is zero
 *           at some training launches, which log space cannot take)
 */
#ifndef KCAST_FM_INT_H
#define KCAST_FM_INT_H

#include "model/model.h"

/* Quantity kinds (file values; append only). */
enum {
  FM_Q_GX = 0, FM_Q_GY, FM_Q_GZ, FM_Q_BX, FM_Q_BY, FM_Q_BZ,
  FM_Q_SHMEM,     /* dynamic shared bytes */
  FM_Q_CTAS,      /* gx*gy*gz */
  FM_Q_BTHREADS,  /* bx*by*bz */
  FM_Q_THREADS,   /* CTAs * block threads */
  FM_Q_WARPS,     /* CTAs * ceil(block threads / 32) */
  FM_Q_LOG2B,     /* log2(block threads) */
  FM_Q_ARG,       /* argument a of the model's list (fm_model.arg_param[a]) */
  FM_Q_TARG,      /* template variable a (T<a>; format version 2) */
  FM_Q_DIFF,      /* argument (a >> 8) minus argument (a & 0xff) of the list
                     (format version 2) */
  FM_Q_NKINDS
};
/* The launch quantities every model has, as indices 0..FM_NQ_LAUNCH-1
   (index == kind); arguments follow, then template variables, then
   differences of two arguments. */
#define FM_NQ_LAUNCH FM_Q_ARG

/* Output kinds (file values; append only). */
enum {
  FM_O_CONST = 0, /* t[0].coef */
  FM_O_EXACT,     /* sum of terms, integer exponents */
  FM_O_POWER,     /* exp(t[0].coef + sum e log q) */
  FM_O_LINEAR,    /* one term, least squares */
  FM_O_LAUNCH,    /* launch feature aux (FM_L_*) */
  FM_O_ARG,       /* argument aux of the model's list */
  FM_O_LANES,     /* ctrl.active_lane_ratio: class.* sum / (32 warp_insns) */
  FM_O_NKINDS
};
/* launch.* outputs (fm_out.aux of FM_O_LAUNCH). */
enum { FM_L_GX = 0, FM_L_GY, FM_L_GZ, FM_L_BX, FM_L_BY, FM_L_BZ, FM_L_CTAS, FM_L_THREADS,
       FM_L_SHARED, FM_L_N };

#define FM_MAX_TERMS 16
#define FM_MAX_FACTORS 3
/* Arguments a model reads at most (fm_eval keeps its quantities on the
   stack). */
#define FM_MAX_ARGS 64
/* Largest |exponent| a file may hold. */
#define FM_MAX_EXP 8.0
/* Differences of two arguments a model may have (pairs of the first 4). */
#define FM_MAX_DIFF 6

typedef struct fm_term {
  double coef;                /* finite */
  uint32_t nf;                /* factors, <= FM_MAX_FACTORS */
  uint32_t q[FM_MAX_FACTORS]; /* quantity indices < fm_model.nq */
  double e[FM_MAX_FACTORS];   /* exponents, |e| <= FM_MAX_EXP; integers in EXACT/LINEAR */
} fm_term;

typedef struct fm_out {
  char *name;                 /* owned, unique within the model */
  uint32_t kind;              /* FM_O_* */
  uint32_t aux;               /* LAUNCH: FM_L_*; ARG: argument index */
  uint32_t nterms;            /* fitted kinds: 1..FM_MAX_TERMS; CONST 1 */
  fm_term t[FM_MAX_TERMS];
  uint8_t is_class;           /* name starts with "class." (for FM_O_LANES) */
} fm_out;

typedef struct fm_qty {
  uint32_t kind;              /* FM_Q_* */
  uint32_t a;                 /* ARG: index into arg_param; else 0 */
  double lo, hi;              /* range over the training launches */
  uint8_t used;               /* some output reads it: range checked */
} fm_qty;

struct fm_model {
  char *kernel, *app;         /* owned; app "" when not given */
  size_t nargs;
  uint32_t *arg_param;        /* nargs parameter indices, ascending, < FM_MAX_PARAM */
  size_t ntpl;                /* template variables, <= FM_MAX_TPL (0: not a
                                 template; else kernel is its template key) */
  size_t ndiff;               /* differences of two arguments, <= FM_MAX_DIFF */
  size_t nq;                  /* FM_NQ_LAUNCH + nargs + ntpl + ndiff */
  fm_qty *q;                  /* q[i].kind == i for i < FM_NQ_LAUNCH */
  size_t nout;
  fm_out *out;
  long warp_out;              /* output index of ctrl.warp_insns, -1 when none */
  size_t nsizes, nlaunches;   /* training sizes and launches */
  double heldout;             /* median held-out error, NaN when not measured */
  unsigned heldout_sizes;
  double limit;               /* FM_UNRELIABLE above it */
  int64_t created;
  size_t ninst;               /* template instances of the training launches,
                                 each with the one block it ran with (format
                                 3); 0 when not a template, or when an
                                 instance ran with several blocks (the block
                                 is then a free quantity, range-checked) */
  double *inst_t;             /* ninst * ntpl template values */
  uint32_t *inst_b;           /* ninst * 3 block dimensions, >= 1 */
};
/* Instances a model records at most. */
#define FM_MAX_INST 4096
/* FM_OTHER_BLOCK for launch l of a template model (0 when m has no
   instance table). */
unsigned fm__block_check(const fm_model *m, const fm_launch *l);

/* Quantities of launch l for model m into q[0..m->nq); -1 (rf_last_error)
   when l lacks an argument or has a zero dimension. */
int fm__quantities(const fm_model *m, const fm_launch *l, double *q);
/* Refresh the derived fields after a load (is_class, warp_out). */
void fm__index(fm_model *m);

#endif
