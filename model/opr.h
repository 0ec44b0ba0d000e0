/*
 * opr.h -- operator launches: library kernels (cuBLAS GEMMs, cuDNN
 * convolutions, PyTorch's elementwise, softmax and layer-norm kernels)
 * described by the operator and its shape instead of by PTX.
 *
 * There is no PTX to emulate for such a launch, but its work follows from
 * the operator and the shape (a GEMM's flops and the bytes it must move),
 * and the library's kernel name and launch configuration say how the work
 * is cut (cuBLAS's tile is in the name: ampere_sgemm_128x64_nn).  One
 * function, opr_features(), turns a description into the opr.* family
 * and the launch.* columns (docs/features.md, "Operator launches"): the
 * importer (datasets/ds_neusight.c), `kcast predict --op`, the C API
 * (kcast_features_from_op) and, through the stored features, training all
 * use it, so a model trained on imported launches reads the same columns
 * a prediction computes.  The columns that depend on the GPU (waves, the
 * tail) are a derived family, computed per GPU by model/analytic_op.c
 * (md_operator), and so is the analytic estimate of an operator launch.
 *
 * Adding an operator: one row of the table in opr.c (name, class, shape
 * parameters, and for the elementwise and row classes the tensors read,
 * the arithmetic and the transcendental operations per element); a new
 * class needs its work formula in opr_features and its estimate in
 * analytic_op.c.  docs/features.md says how, step by step.
 *
 * Every function returns 0 on success and -1 with rf_last_error() set;
 * nothing allocates, and every function is thread-safe.
 */
#ifndef KCAST_OPR_H
#define KCAST_OPR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Operator classes (the value of opr.class; docs/features.md). */
enum {
  OPR_GEMM = 1,        /* batched matrix product: bmm, linear */
  OPR_CONV = 2,        /* 2-D convolution */
  OPR_ELEMENTWISE = 3, /* one output per element: add, relu, gelu, ... */
  OPR_SOFTMAX = 4,     /* softmax over rows */
  OPR_NORM = 5         /* normalisation over rows: layer norm */
};

/* Convolution algorithms (opr.algo), from the kernel names. */
enum { OPR_ALGO_UNKNOWN = 0, OPR_ALGO_IMPLICIT = 1, OPR_ALGO_WINOGRAD = 2,
       OPR_ALGO_GEMM = 3, OPR_ALGO_FFT = 4, OPR_ALGO_DIRECT = 5 };

/* CUDA's largest grid: x, and y and z. */
#define OPR_GRID_X_MAX 2147483647u
#define OPR_GRID_YZ_MAX 65535u

/* Most shape parameters of an operator. */
#define OPR_MAX_DIMS 8
/* Longest kernel name kept (longer ones are cut: only the tile and the
   template arguments near the start are read). */
#define OPR_KERNEL_MAX 1024

/* One operator of the table. */
typedef struct opr_info {
  const char *name;       /* "bmm" */
  int cls;                /* OPR_* */
  const char *dims;       /* its shape parameters, comma-separated: "B,M,N,K" */
  const char *what;       /* one line for `kcast predict --op list` */
  double inputs;          /* elementwise, softmax, norm: tensors of the
                             shape read (2 for add, 1 for addu) */
  double flops;           /* arithmetic per output element (FMA = 2) */
  double sfu;             /* transcendental operations per output element */
  double host_us;         /* the framework's dispatch floor of one call (us):
                             no call takes less, whatever the GPU */
  double gap_us;          /* the call's fixed time beyond its kernels' work
                             once the GPU is the bound (us) */
  double mem_eff;         /* the share of the DRAM peak its kernels sustain */
} opr_info;

size_t opr_count(void);
/* The i-th operator, NULL past the end. */
const opr_info *opr_at(size_t i);
/* The operator called name (case-sensitive), NULL when unknown. */
const opr_info *opr_find(const char *name);
/* Index of shape parameter dim of op (case-insensitive; the dataset's
   spellings "Input_Channel", "Kernel_Szie" ... are accepted for conv), -1
   when op has none of that name. */
int opr_dim_index(const opr_info *op, const char *dim);
/* The number of shape parameters of op and the name of the i-th
   (written into buf). */
size_t opr_ndims(const opr_info *op);
const char *opr_dim_name(const opr_info *op, size_t i, char *buf, size_t cap);

/* One operator launch: the operator, its shape, and what is known of the
   library's kernel and launch.  Zero-initialise, or fill with opr_parse. */
typedef struct opr_launch {
  const opr_info *op;
  double dim[OPR_MAX_DIMS];   /* shape, in op->dims order (whole numbers >= 1;
                                 conv's Padding may be 0) */
  char kernel[OPR_KERNEL_MAX];/* the main kernel's name as recorded, "" unknown */
  char others[OPR_KERNEL_MAX];/* every kernel of the operator, ';'-separated,
                                 as recorded ("" unknown): a convolution's
                                 name its algorithm (winograd transforms
                                 around an SGEMM) */
  uint32_t grid[3], block[3]; /* 0 = unknown */
  unsigned nkernels;          /* kernels the operator launches, 0 = unknown */
} opr_launch;

/*
 * Parse a description such as "bmm B=8 M=512 N=512 K=64": the operator
 * name, then KEY=VALUE words separated by blanks: every shape parameter of
 * the operator, and optionally kernel=NAME, grid=X[,Y[,Z]],
 * block=X[,Y[,Z]], kernels=N.  A value may be quoted ('...' or "...") to
 * hold blanks (a demangled kernel name).  A missing or unknown parameter,
 * a value that is not a whole number in range, or a word given twice is an
 * error naming it.
 */
int opr_parse(const char *text, opr_launch *out);

/*
 * Fill in what a description left out, the way the libraries choose (docs/
 * features.md): a GEMM's tile (the largest cuBLAS SGEMM tile that still
 * cuts the output into at least 80 CTAs, so it suits GPUs of 40-132 SMs),
 * its kernel name and grid; an elementwise kernel's 128 threads of 4
 * elements; the warp- or block-per-row softmax; one 128-thread CTA per row
 * for layer norm; a convolution as an implicit GEMM of 128x64 tiles.  A
 * note of what was assumed goes to note ("" when nothing was); note may
 * be NULL.
 */
int opr_complete(opr_launch *l, char *note, size_t cap);
/*
 * The launches a GEMM operator without kernel= may be on a GPU: one per
 * SGEMM tile of cuBLAS's kernels (OPR_GEMM_CANDIDATES at most; the
 * sliced ones only without a batch), each completed as opr_complete does
 * with that kernel.  cuBLAS's heuristics
 * pick the fastest for the shape and GPU, which is what `kcast predict
 * --op` assumes: the candidate its model predicts fastest there.  The
 * count (0 for another class, or a launch that gives its kernel, grid or
 * block: opr_complete's assumption then).
 */
#define OPR_GEMM_CANDIDATES 8
size_t opr_gemm_candidates(const opr_launch *l, opr_launch *out, size_t cap);

/* The feature columns opr_features gives: launch.* then opr.*. */
#define OPR_NFEAT 34
extern const char *const opr_feature_names[OPR_NFEAT];
/*
 * The features of a complete launch (grid and block known: opr_complete
 * first) into out[OPR_NFEAT] in opr_feature_names order.  Every column is
 * given for every operator (0 where it does not apply), so launches of
 * different operators share one matrix.
 */
int opr_features(const opr_launch *l, double out[OPR_NFEAT]);

/* The tile of a library kernel name: cuBLAS/cuDNN's "_128x64_" (also
   "_32x32x32_"), and the K slicing of "sliced1x4" (4); 0 when the name
   has no tile.  slices may be NULL. */
int opr_kernel_tile(const char *kernel, unsigned *tile_m, unsigned *tile_n, unsigned *slices);
/* The operator class (OPR_*) whose library kernels a kernel name belongs
   to by its words (softmax, layer_norm or norm_kernel, elementwise;
   convolv, conv_, dconv, cudnn or winograd; gemm: any case), 0 when it
   says none (a kernel of one's own: "convert_relu" is none). */
int opr_kernel_class(const char *kernel);
/* The convolution algorithm (OPR_ALGO_*) that a kernel name, or a list of
   them, names. */
int opr_kernel_algo(const char *names);

#ifdef __cplusplus
}
#endif

#endif
