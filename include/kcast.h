/*
 * kcast.h -- the public C API of kcast (libkcast).
 *
 * This is the only header a scheduler includes.  It builds as C (C99 and
 * later) and C++.  Everything public is named kcast_* / KCAST_*; libkcast.so
 * exports nothing else.  docs/api.md walks through it with an example.
 *
 * Objects.
 *   kcast_model     a trained random forest loaded from a .kcm file
 *                   (kcast_model_load / kcast_model_free).
 *   kcast_features  a set of named feature values describing one kernel
 *                   launch (kcast_features_new, _from_launch, _from_ptx /
 *                   kcast_features_free).  Names are those of
 *                   docs/features.md ("op.ld.global.f32", "launch.ctas").
 *   kcast_featmodel a kernel's feature model loaded from a .kcf file: the
 *                   features of a launch without emulating it
 *                   (kcast_featmodel_load / kcast_featmodel_free).
 *   kcast_table     a dataset's launches as a table (kcast_dataset_read /
 *                   kcast_table_free).
 *   kcast_tunespace the features of every configuration of a Kernel Tuner
 *                   tuning space (kcast_tunespace_compute /
 *                   kcast_tunespace_free).
 * A model is also trained from a matrix (kcast_model_train) and saved
 * (kcast_model_save).
 *
 * Errors.  Every function that can fail returns a kcast_status: KCAST_OK (0)
 * on success, a KCAST_E_* code otherwise; results go to trailing [out]
 * parameters, which are left untouched on failure unless stated.  The text of
 * the last failure is kcast_last_error(), per thread.  Invalid arguments (NULL
 * handles or out-params, out-of-range values) are reported as KCAST_E_ARG,
 * never a crash.
 *
 * Ownership.  A pointer returned by a function is owned by the object it was
 * obtained from (and valid until that object is freed) unless its doc says
 * "caller frees".  Strings passed in are copied when kept.
 *
 * Threads.  One kcast_model is read-only after kcast_model_load: any number
 * of threads may call kcast_predict / kcast_predict_batch and the
 * kcast_model_* getters on it at the same time.  A kcast_features may be read
 * by many threads at once (e.g. passed to kcast_predict), but
 * kcast_features_set needs exclusive access.  All other functions are safe to
 * call from any thread on distinct objects.
 *
 * Units.  Time is in nanoseconds, power in watts, energy in joules -- the
 * units of the dataset store (time_ns, power_w, energy_j).
 */
#ifndef KCAST_H
#define KCAST_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KCAST_VERSION_MAJOR 0
#define KCAST_VERSION_MINOR 6
#define KCAST_VERSION_PATCH 0
#define KCAST_VERSION_STRING "0.6.0"

/* ------------------------------------------------------------ statuses -- */

/* Result of every fallible call.  0 is success.  Values are stable. */
typedef enum kcast_status {
  KCAST_OK = 0,
  KCAST_E_ARG = 1,       /* invalid argument: NULL handle or out-param, bad value */
  KCAST_E_IO = 2,        /* a file cannot be opened or read */
  KCAST_E_FORMAT = 3,    /* a file is not what it should be (model, dataset, PTX) */
  KCAST_E_FEATURE = 4,   /* a feature the model needs is missing, or a bad name/value */
  KCAST_E_TARGET = 5,    /* the model predicts another quantity than asked */
  KCAST_E_NOMEM = 6,     /* out of memory */
  KCAST_E_EMULATION = 7, /* the emulated launch failed (bad access, budget, trap) */
  KCAST_E_NOTFOUND = 8,  /* unknown GPU, kernel or launch */
  KCAST_E_VERSION = 9    /* header and library do not match (kcast_check_version) */
} kcast_status;

/*
 * Text of the last failure on the calling thread, "" when there was none.
 * Owned by the library; valid until the next failing kcast_ call on the
 * same thread (copy it out to keep it).  Successful calls leave it as is.
 */
const char *kcast_last_error(void);

/* Short name of a status ("KCAST_E_FEATURE"); "unknown" for other values.
   Static storage. */
const char *kcast_status_name(kcast_status s);

/* ------------------------------------------------------------- version -- */

/* The library's version string ("0.6.0").  Static storage. */
const char *kcast_version(void);

/*
 * Check that the library matches the header a program was compiled with:
 * the same major version and the same sizeof(kcast_launch_config).  Returns
 * KCAST_OK or KCAST_E_VERSION.  Use KCAST_CHECK_VERSION().
 */
kcast_status kcast_check_version(int major, size_t sizeof_launch_config);
#define KCAST_CHECK_VERSION() \
  kcast_check_version(KCAST_VERSION_MAJOR, sizeof(kcast_launch_config))

/* ---------------------------------------------------------------- GPUs -- */

/* Number of GPUs the analytic estimate knows (model/gpus.c, docs/gpus.md). */
size_t kcast_gpu_count(void);
/* Short name of the i-th GPU ("H200"), or NULL when i >= kcast_gpu_count().
   Static storage. */
const char *kcast_gpu_name(size_t i);

/* One GPU of the table (docs/gpus.md).  Set size = sizeof(kcast_gpu_desc)
   before kcast_gpu_info; later versions append fields. */
typedef struct kcast_gpu_desc {
  size_t size;            /* sizeof(kcast_gpu_desc) */
  const char *name;       /* short name ("H200"); static storage */
  const char *full_name;  /* "NVIDIA H200 SXM 141GB" */
  const char *aliases;    /* ';'-separated names the driver reports, or "" */
  int cc_major, cc_minor; /* compute capability */
  int sms;                /* streaming multiprocessors */
  double boost_mhz, fp32_gflops, fp64_gflops;
  double mem_bw_gbs;      /* DRAM bandwidth, GB/s */
  double mem_gb, l2_mb;   /* DRAM (GB) and L2 (MiB) */
  double tdp_w;           /* board power limit */
} kcast_gpu_desc;
/* [out] *d: GPU i of the table (d->size must be set); KCAST_E_NOTFOUND when
   i >= kcast_gpu_count(), KCAST_E_ARG for a NULL d or a size too small. */
kcast_status kcast_gpu_info(size_t i, kcast_gpu_desc *d);

/* -------------------------------------------------------------- models -- */

typedef struct kcast_model kcast_model;

/* What a model predicts. */
typedef enum kcast_target {
  KCAST_TARGET_OTHER = 0,  /* a model trained on another CSV column */
  KCAST_TARGET_TIME = 1,   /* kernel time, ns ("time" / "time_ns") */
  KCAST_TARGET_POWER = 2,  /* average power, W ("power" / "power_w") */
  KCAST_TARGET_ENERGY = 3  /* energy, J ("energy" / "energy_j") */
} kcast_target;

/*
 * Load a model file (.kcm, written by `kcast train`).  The whole file is
 * validated.  [out] *model: free with kcast_model_free; set to NULL on
 * failure.  KCAST_E_IO when the file cannot be opened, KCAST_E_FORMAT when
 * it is not a valid model, KCAST_E_NOMEM.
 */
kcast_status kcast_model_load(const char *path, kcast_model **model);
/* Free a model.  Accepts NULL. */
void kcast_model_free(kcast_model *model);

/* The model's target; KCAST_TARGET_OTHER for NULL. */
kcast_target kcast_model_target(const kcast_model *model);
/*
 * KCAST_OK when model predicts want, else KCAST_E_TARGET naming both (or
 * KCAST_E_ARG for a NULL model).  For callers that load a model chosen by a
 * user and need, say, a time model.
 */
kcast_status kcast_model_expect(const kcast_model *model, kcast_target want);
/* The GPU the model was trained for ("" when unknown, NULL for a NULL
   model); a model trained on several GPUs lists them, comma-separated.
   Owned by the model. */
const char *kcast_model_gpu(const kcast_model *model);
/* Number of features the model reads (0 for NULL). */
size_t kcast_model_nfeatures(const kcast_model *model);
/* Name of feature i, or NULL when out of range.  Owned by the model. */
const char *kcast_model_feature_name(const kcast_model *model, size_t i);
/* The target's name as trained ("time", a CSV column; NULL for NULL).
   Owned by the model. */
const char *kcast_model_target_name(const kcast_model *model);
/* Trees of the forest (0 for NULL). */
size_t kcast_model_ntrees(const kcast_model *model);
/* Rows the model was trained on (0 for NULL). */
uint64_t kcast_model_nrows(const kcast_model *model);
/* Impurity importance of feature i (they sum to 1); NaN out of range. */
double kcast_model_importance(const kcast_model *model, size_t i);

/* ------------------------------------------------------------ training -- */

/*
 * How kcast_model_train trains.  Initialise with KCAST_TRAIN_PARAMS_INIT:
 * kcast's defaults, those of `kcast train` (docs/accuracy.md: extremely
 * randomized trees, every feature tried at each split, leaves of one
 * sample, a log target when every target is positive, intervals
 * calibrated on held-out rows).  Later versions append fields; the
 * library reads only the first size bytes.
 */
typedef struct kcast_train_params {
  size_t size;            /* sizeof(kcast_train_params) */
  unsigned n_trees;       /* trees (100) */
  double max_features;    /* features tried per split: a fraction in (0, 1]
                             or a whole count >= 1; 0: every feature for
                             extra trees, a third for a random forest */
  unsigned min_leaf;      /* smallest leaf, in samples (1) */
  unsigned max_depth;     /* 0: unlimited */
  int extra_trees;        /* 1: extremely randomized trees, 0: a random
                             forest (CART on bootstrap samples) */
  int bootstrap;          /* -1: the default of the kind (off for extra
                             trees), 0, 1 */
  int log_target;         /* -1: log when every target is > 0, 0, 1 */
  int calibrate;          /* 1: calibrate the intervals on held-out rows
                             (an inner 5-fold CV), 0: plain quantiles */
  unsigned bins;          /* histogram bins per feature, 2..256 (256) */
  uint64_t seed;          /* 1; the same seed, rows and params give the
                             same model whatever the threads */
  int threads;            /* OpenMP threads; 0: the runtime's default */
  const char *base;       /* NULL: none; a column whose value is the
                             target's base (the forest learns target/base;
                             needs the log target), e.g. an.time_us */
  const char *target;     /* the target's name stored in the model: "time"
                             (ns), "power" (W), "energy" (J) make
                             kcast_model_target say so; NULL: "y" */
  const char *gpu;        /* the GPU the rows were measured on, recorded in
                             the model (comma list for several), or NULL */
} kcast_train_params;
#define KCAST_TRAIN_PARAMS_INIT \
  {sizeof(kcast_train_params), 100, 0, 1, 0, 1, -1, -1, 1, 256, 1, 0, NULL, NULL, NULL}

/*
 * Train a forest on n_rows rows of n_cols features: x row-major (row i's
 * values at x[i * row_stride .. + n_cols), row_stride >= n_cols, in doubles),
 * names[j] the name of column j (unique, non-empty), y[i] the target.
 * Values must be finite (KCAST_E_FEATURE naming the row and column; y must
 * be > 0 for a log target).  At least 2 rows.  [out] *model: free with
 * kcast_model_free.  Thread-safe (separate calls are independent).
 */
kcast_status kcast_model_train(const double *x, size_t n_rows, size_t n_cols, size_t row_stride,
                               const char *const *names, const double *y,
                               const kcast_train_params *params, kcast_model **model);
/* Write model to path (.kcm, atomically: a temporary file renamed), the
   file `kcast train` writes and kcast_model_load reads.  KCAST_E_IO. */
kcast_status kcast_model_save(const kcast_model *model, const char *path);

/*
 * The k-fold assignment `kcast cv` makes (--folds k, --seed seed) of n rows
 * in their order: [out] fold[i] in 0..k-1.  Training on the rows of every
 * other fold with the same parameters gives the forest `kcast cv` trains
 * for fold f, so its out-of-fold predictions can be reproduced exactly.
 * KCAST_E_ARG unless 2 <= k <= n.
 */
kcast_status kcast_cv_folds(size_t n, unsigned k, uint64_t seed, uint32_t *fold);

/* ------------------------------------------------------- feature sets -- */

typedef struct kcast_features kcast_features;

/* An empty feature set.  [out] *fs: free with kcast_features_free. */
kcast_status kcast_features_new(kcast_features **fs);
/* Free a feature set.  Accepts NULL. */
void kcast_features_free(kcast_features *fs);
/* Set name to value (insert or overwrite).  name non-empty, value finite
   (KCAST_E_FEATURE otherwise). */
kcast_status kcast_features_set(kcast_features *fs, const char *name, double value);
/* Set the value of the i-th feature (insertion order, as kcast_features_name
   numbers them) without looking its name up: refilling a set laid out once.
   KCAST_E_ARG for i out of range, KCAST_E_FEATURE for a value not finite. */
kcast_status kcast_features_set_at(kcast_features *fs, size_t i, double value);
/* [out] *value of name; KCAST_E_NOTFOUND when fs has no such feature. */
kcast_status kcast_features_get(const kcast_features *fs, const char *name, double *value);
/* Number of features in fs (0 for NULL). */
size_t kcast_features_count(const kcast_features *fs);
/* Name of the i-th feature (insertion order), NULL when out of range.
   Owned by fs; valid until fs changes. */
const char *kcast_features_name(const kcast_features *fs, size_t i);

/*
 * The stored features of launch launch_id of the dataset at db_path (a
 * SQLite file written by `kcast run` / `kcast dataset`), opened read-only.
 * [out] *fs: free with kcast_features_free.  KCAST_E_IO / KCAST_E_FORMAT for
 * a file that cannot be opened or is not a dataset, KCAST_E_NOTFOUND when
 * the dataset has no features for launch_id.
 */
kcast_status kcast_features_from_launch(const char *db_path, int64_t launch_id,
                                        kcast_features **fs);

/* One kernel argument of kcast_features_from_ptx. */
typedef enum kcast_arg_kind {
  KCAST_ARG_SCALAR = 0,  /* a value of the parameter's size (<= 8 bytes) */
  KCAST_ARG_BUFFER = 1   /* a device buffer; the parameter gets its address */
} kcast_arg_kind;

/* Contents of a KCAST_ARG_BUFFER. */
typedef enum kcast_fill {
  KCAST_FILL_ZERO = 0,   /* zero bytes */
  KCAST_FILL_SEQ = 1,    /* 32-bit words 0, 1, 2, ... */
  KCAST_FILL_SEQF = 2,   /* floats 0.0, 1.0, 2.0, ... */
  KCAST_FILL_RAND = 3,   /* random bytes from seed: 8-byte word k is
                            output k of splitmix64 (little-endian) */
  KCAST_FILL_RANDF = 4   /* random floats in [0, 1) from seed: word k is
                            output k's top 24 bits / 2^24 */
} kcast_fill;

typedef struct kcast_arg {
  kcast_arg_kind kind;
  uint64_t bits;         /* SCALAR: the value's bytes (little-endian, low
                            bytes used), e.g. an int, or a float's bits */
  uint64_t bytes;        /* BUFFER: size in bytes (> 0) */
  kcast_fill fill;       /* BUFFER: contents */
  uint64_t seed;         /* BUFFER: seed of the RAND fills */
} kcast_arg;

/*
 * One launch to emulate.  Zero-initialise, set size = sizeof(kcast_launch_
 * config), then the fields you need (KCAST_LAUNCH_CONFIG_INIT does the
 * first two).  Later versions append fields; the library reads only the
 * first size bytes and takes zero for the rest.
 */
typedef struct kcast_launch_config {
  size_t size;              /* sizeof(kcast_launch_config) */
  unsigned grid[3];         /* CTAs per dimension; 0 counts as 1 */
  unsigned block[3];        /* threads per dimension; 0 counts as 1; product <= 1024 */
  uint64_t shared_bytes;    /* dynamic shared memory */
  uint64_t sample_ctas;     /* CTAs to emulate, spread over the grid, counts
                               scaled to the whole grid; 0 = as many as a
                               0.5 % relative standard error of the counts
                               needs (16 to 1,296, all of a grid of at most
                               32; emu.sample_rse says what was reached);
                               >= the grid = all */
  const kcast_arg *args;    /* one per kernel parameter, in order */
  size_t nargs;
  uint64_t insn_budget;     /* stop after this many thread-instructions; 0 = none */
  double time_limit_s;      /* stop after this many seconds; 0 = none */
  int threads;              /* emulator threads; 0 = OpenMP's default */
  int oob;                  /* out-of-bounds policy: KCAST_OOB_ERROR (0) or
                               KCAST_OOB_WARN (1), see below */
  int racecheck;            /* 1: look for data races between the launch's
                               CTAs (global memory) and between a CTA's
                               warps within a barrier interval (shared
                               memory); the launch still succeeds, and its
                               features carry emu.races, the 4-byte words
                               found racing (absent: none).  `kcast emulate
                               --racecheck` describes the first one.
                               Since 0.4.1 */
} kcast_launch_config;

/*
 * Out-of-bounds policy of an emulated launch.  KCAST_OOB_ERROR: an access
 * out of bounds or to freed memory fails it (KCAST_E_EMULATION).
 * KCAST_OOB_WARN: a global access within 4 KiB of a buffer, or to freed
 * memory, reads zeros or is dropped, as a GPU tolerates it; the launch
 * completes and its features carry emu.oob_accesses (docs/features.md).
 */
enum { KCAST_OOB_ERROR = 0, KCAST_OOB_WARN = 1 };

/* Initialiser: size set, 1x1x1 grid and block, everything else zero. */
#define KCAST_LAUNCH_CONFIG_INIT \
  {sizeof(kcast_launch_config), {1, 1, 1}, {1, 1, 1}, 0, 0, 0, 0, 0, 0, 0, 0, 0}

/*
 * Features of one launch of kernel in path (.ptx, .cu, .ll or .bc; a .cu is
 * compiled with nvcc, an .ll/.bc through LLVM), measured by running it in
 * the PTX emulator as cfg says, plus the kernel's static features -- what
 * `kcast predict FILE` computes.  kernel is the mangled .entry name, the
 * demangled signature or the source name ("gemm_tiled_kernel<16>" for a
 * template instance); NULL selects the only kernel of the file.  Device printf
 * output is discarded.  [out] *fs: free with kcast_features_free.
 * Errors: KCAST_E_IO / KCAST_E_FORMAT (input, compile, parse, unsupported
 * instruction), KCAST_E_NOTFOUND (kernel), KCAST_E_ARG (config, argument
 * count or kind against the kernel's parameters), KCAST_E_EMULATION (the
 * launch faulted or hit a limit; the message names CTA, thread and line).
 */
kcast_status kcast_features_from_ptx(const char *path, const char *kernel,
                                     const kcast_launch_config *cfg, kcast_features **fs);

/*
 * The features of an operator launch -- a library kernel (cuBLAS GEMM,
 * cuDNN convolution, PyTorch elementwise, softmax or layer norm) described
 * by its operator and shape instead of PTX -- from a description such as
 * "bmm B=8 M=512 N=512 K=64": the operator (`kcast predict --op list`
 * lists them with their shape parameters), its parameters as KEY=VALUE,
 * and optionally kernel=NAME (the library's kernel, as a profiler names
 * it; quote a name with blanks: kernel='void ...'), grid=X[,Y[,Z]],
 * block=X[,Y[,Z]] and kernels=N (the kernels the operator launches).
 * What the description leaves out is assumed as the libraries choose it
 * (docs/features.md, "Operator launches"), and said in assumed (cap
 * bytes, NUL-terminated; "" when nothing was assumed; may be NULL).  The
 * set holds launch.* and opr.* features for kcast_predict_gpu with a model
 * trained on operator launches (`kcast dataset import-neusight`), or for
 * kcast_predict_analytic.  [out] *fs: free with kcast_features_free.
 * KCAST_E_ARG for a description that is not one (the message names the
 * word and the problem), KCAST_E_NOMEM.  Thread-safe.
 */
kcast_status kcast_features_from_op(const char *description, char *assumed, size_t cap,
                                    kcast_features **fs);
/*
 * kcast_features_from_op for GPU gpu_name: a GEMM (bmm, linear) described
 * without kernel, grid and block gets the one of cuBLAS's SGEMM tiles that
 * model predicts fastest on that GPU (its time; the analytic estimate when
 * model is NULL or predicts no time), as cuBLAS's heuristics choose per
 * shape and GPU -- one tile for every GPU is 2-4x off for thin linear
 * layers (docs/accuracy.md).  Other descriptions get kcast_features_from_op's
 * launch.  assumed as there, naming the kernel chosen.  Errors as
 * kcast_features_from_op, and kcast_predict_gpu's for the model and GPU
 * (KCAST_E_NOTFOUND for an unknown GPU).  Thread-safe.  Since 0.5.0
 */
kcast_status kcast_features_from_op_gpu(const char *description, const kcast_model *model,
                                        const char *gpu_name, char *assumed, size_t cap,
                                        kcast_features **fs);

/* ---------------------------------------------------------- prediction -- */

/* Where a prediction came from. */
typedef enum kcast_source {
  KCAST_SOURCE_FOREST = 1,   /* a trained model (kcast_predict) */
  KCAST_SOURCE_ANALYTIC = 2  /* the analytic estimate (kcast_predict_analytic) */
} kcast_source;

typedef struct kcast_prediction {
  double value;   /* point prediction in the target's unit */
  double lo, hi;  /* interval at the requested coverage (analytic: its band) */
  int source;     /* KCAST_SOURCE_* */
} kcast_prediction;

/*
 * Predict model's target for the launch fs describes, with the interval at
 * coverage in (0, 1) (0.9: 5th to 95th percentile of the quantile
 * regression forest, widened by the model's calibration table when it has
 * one: docs/formats.md).  Features of fs the model does not read are ignored.
 * A feature the model reads but fs lacks counts 0 when it is a count
 * (families op., class., mem., static. -- as in the dataset store: a kernel
 * without a barrier has no op.bar.sync); derived columns (mg.*, an.*:
 * docs/features.md) are computed from fs's other features; any other
 * missing feature (launch.*, ctrl.*, a CSV column) is KCAST_E_FEATURE,
 * naming the first one in the model's order.  [out] *out.  Thread-safe on
 * one model.
 */
kcast_status kcast_predict(const kcast_model *model, const kcast_features *fs,
                           double coverage, kcast_prediction *out);
/*
 * kcast_predict for the GPU called gpu_name (a name of kcast_gpu_name, or a
 * name the driver reports, e.g. "NVIDIA A100-PCIE-40GB"): the model's
 * per-GPU features (docs/features.md: occ.*, gpu.*, an.*) are computed for
 * that GPU.  A model trained on several GPUs (kcast_model_gpu lists them,
 * comma-separated) needs it (KCAST_E_ARG with NULL); for one trained on a
 * single GPU, NULL means that GPU and another GPU is KCAST_E_ARG (its answer
 * would be that GPU's; `kcast predict` refuses it too).  For a GPU a model
 * of several GPUs was not trained on, the interval comes from the model's
 * calibration for unseen GPUs when it has one (`kcast train` on several
 * GPUs makes it).  KCAST_E_NOTFOUND for a
 * GPU the table does not know.  Thread-safe on one model.
 */
kcast_status kcast_predict_gpu(const kcast_model *model, const char *gpu_name,
                               const kcast_features *fs, double coverage, kcast_prediction *out);
/*
 * kcast_predict for fs[0..n) into out[0..n), spread over OpenMP threads
 * (OMP_NUM_THREADS; batches under 64 sets run on the calling thread).  Each
 * out[i] equals kcast_predict's answer for fs[i].  On failure the status of
 * the lowest failing index is returned and the calling thread's
 * kcast_last_error names that index; out[i] for every earlier i is filled,
 * later ones are unspecified.  n = 0 is KCAST_OK; an n larger than any
 * array can hold (more than PTRDIFF_MAX bytes of predictions) is KCAST_E_ARG.
 */
kcast_status kcast_predict_batch(const kcast_model *model, const kcast_features *const *fs,
                                 size_t n, double coverage, kcast_prediction *out);
/* Bits of kcast_predict_check's flags. */
enum {
  KCAST_CHECK_OUT_OF_RANGE = 1u << 0, /* a feature the forest splits on lies
                                         outside its training values: the
                                         answer extrapolates */
  KCAST_CHECK_UNSEEN_GPU = 1u << 1,   /* the model was not trained on the GPU */
  KCAST_CHECK_OTHER_ESTIMATE = 1u << 2 /* the model's base is another version of
                                         the analytic estimate than this
                                         library computes (a model trained
                                         by an older kcast): its corrections
                                         may not fit; train it again */
};
/*
 * What kcast_predict_gpu's answer for the launch fs on the GPU called
 * gpu_name (NULL as there) rests on.  [out] *flags: KCAST_CHECK_* bits, 0
 * when the launch lies within what the model was trained on; *feature
 * (may be NULL): with KCAST_CHECK_OUT_OF_RANGE the most important feature
 * outside its training range (owned by the model), else NULL.  Models
 * written before training ranges were stored (file version < 4) never set
 * KCAST_CHECK_OUT_OF_RANGE.  The errors of kcast_predict_gpu.  Thread-safe
 * on one model.
 */
kcast_status kcast_predict_check(const kcast_model *model, const char *gpu_name,
                                 const kcast_features *fs, unsigned *flags, const char **feature);
/* kcast_predict_batch for the GPU called gpu_name (as kcast_predict_gpu). */
kcast_status kcast_predict_batch_gpu(const kcast_model *model, const char *gpu_name,
                                     const kcast_features *const *fs, size_t n, double coverage,
                                     kcast_prediction *out);
/*
 * Predict n_rows launches given as a matrix, as from a numpy array: x
 * row-major (row i at x[i * row_stride], row_stride >= n_cols), names[j]
 * the feature in column j (any order, any superset of what the model
 * reads).  A feature the model reads that no column holds is filled as
 * kcast_predict fills one a set lacks (0 for a count; derived columns
 * computed from the row; KCAST_E_FEATURE otherwise, before any row is
 * predicted); a NaN or an infinity in a column the model reads is
 * KCAST_E_FEATURE naming the row.  gpu_name as kcast_predict_gpu (NULL: the model's GPU).
 * [out] pred[i], and lo[i]/hi[i] at coverage when lo and hi are not NULL.
 * threads OpenMP threads (0: the runtime's default; small batches stay on
 * the calling thread).  Answers equal kcast_predict's bit for bit.
 */
kcast_status kcast_predict_matrix(const kcast_model *model, const char *gpu_name,
                                  const double *x, size_t n_rows, size_t n_cols,
                                  size_t row_stride, const char *const *names, double coverage,
                                  double *pred, double *lo, double *hi, int threads);
/*
 * The analytic (roofline) estimate of the launch fs describes on the GPU
 * called gpu_name (case-insensitive; see kcast_gpu_name): time (ns) and
 * average power (W), each with its band as lo/hi and source
 * KCAST_SOURCE_ANALYTIC.  Needs launch.ctas and the block size in fs
 * (KCAST_E_FEATURE otherwise); KCAST_E_NOTFOUND for an unknown GPU.  Either
 * out pointer may be NULL.  A rough estimate, not a trained model.
 */
kcast_status kcast_predict_analytic(const char *gpu_name, const kcast_features *fs,
                                    kcast_prediction *time_out, kcast_prediction *power_out);

/* ------------------------------------------------------------ datasets -- */

/*
 * A dataset's launches as a table, the columns `kcast dataset export`
 * writes: id, app, dataset, lseq, kernel, then every feature (sorted by
 * name; NaN where a launch lacks it), then one column per GPU and metric
 * measured, named METRIC@GPU ("time_ns@A100"): the median of the launch's
 * measurements, NaN where it has none.  app, dataset and kernel are text
 * columns, the rest numbers.  Read-only, any number of threads.
 */
typedef struct kcast_table kcast_table;
/* Read the dataset at path (opened read-only).  [out] *t: free with
   kcast_table_free.  KCAST_E_IO / KCAST_E_FORMAT as kcast_features_from_launch. */
kcast_status kcast_dataset_read(const char *path, kcast_table **t);
/* Free a table.  Accepts NULL. */
void kcast_table_free(kcast_table *t);
/* Rows (launches, by id) and columns (0 for NULL). */
size_t kcast_table_nrows(const kcast_table *t);
size_t kcast_table_ncols(const kcast_table *t);
/* Name of column j, NULL out of range.  Owned by t. */
const char *kcast_table_colname(const kcast_table *t, size_t j);
/* Column j's n_rows values, NULL for a text column or out of range.
   Owned by t. */
const double *kcast_table_numbers(const kcast_table *t, size_t j);
/* Row i of text column j, NULL for a number column or out of range.
   Owned by t. */
const char *kcast_table_text(const kcast_table *t, size_t j, size_t i);

/* -------------------------------------------------- Kernel Tuner spaces -- */

/*
 * A Kernel Tuner tuning space as kcast sees it: the features of every
 * configuration of a tunable kernel, each compiled as Kernel Tuner
 * compiles it (its parameters prepended as #define lines) and emulated,
 * grouped into shared compiler runs over worker threads -- the pipeline of
 * `kcast dataset import-kerneltuner` (docs/formats.md).  With a model or
 * the analytic estimate, the predicted time of every configuration, and a
 * cachefile Kernel Tuner loads in simulation mode (kcast_tunespace_write).
 */
typedef struct kcast_tunespace kcast_tunespace;
typedef struct kcast_tunespace_spec {
  size_t size;                     /* sizeof(kcast_tunespace_spec) */
  const char *source;              /* the kernel's .cu file */
  const char *kernel;              /* its name (Kernel Tuner's kernel_name) */
  int64_t problem_size[3];         /* 1 for unused dimensions */
  int problem_size_scalar;         /* 1: Kernel Tuner was given one number
                                      (written so in the cachefile) */
  const char *grid_div[3];         /* comma lists of parameter names or
                                      integers; NULL: the block size names */
  const char *block_size_names;    /* NULL: block_size_x,block_size_y,block_size_z */
  size_t nparams;
  const char *const *param_names;  /* nparams C identifiers, Kernel Tuner's order */
  size_t nconfigs;
  const char *const *values;       /* nconfigs x nparams values as the #define
                                      text (and the cache key's parts) */
  const char *const *args;         /* one per kernel parameter, as kcast
                                      emulate --arg ("buf:4M:randf", "1000") */
  size_t nargs;
  const char *const *consts;       /* NAME=FILL constant fills, or NULL */
  size_t nconsts;
  const char *const *compiler_options; /* e.g. "-O3", or NULL */
  size_t ncompiler_options;
  const char *arch;                /* "sm_80"; NULL: the default */
  uint64_t shared_bytes;           /* dynamic shared memory */
  uint64_t sample_ctas;            /* CTAs emulated; 0: adaptive, as
                                      kcast_launch_config's */
  unsigned jobs;                   /* worker threads; 0: one per CPU */
} kcast_tunespace_spec;

/*
 * Compile and emulate every configuration of spec.  A configuration that
 * fails (does not compile, faults, a block over 1024 threads) is kept with
 * its reason (kcast_tunespace_error); the call fails only when the source,
 * the options or the arguments fail for every configuration
 * (KCAST_E_FORMAT, KCAST_E_ARG, naming the problem).  Parameter names must
 * be C identifiers and values one-line numbers, identifiers or simple
 * expressions (KCAST_E_ARG).  [out] *ts: free with kcast_tunespace_free.
 */
kcast_status kcast_tunespace_compute(const kcast_tunespace_spec *spec, kcast_tunespace **ts);
void kcast_tunespace_free(kcast_tunespace *ts);
size_t kcast_tunespace_count(const kcast_tunespace *ts);
/* Configuration i's cache key (the values joined by commas, Kernel
   Tuner's key).  Owned by ts. */
const char *kcast_tunespace_key(const kcast_tunespace *ts, size_t i);
/* Its features (launch.*, op.*, ..., tune.*), or NULL when it failed.
   Owned by ts. */
const kcast_features *kcast_tunespace_features(const kcast_tunespace *ts, size_t i);
/* Why it failed, or NULL. */
const char *kcast_tunespace_error(const kcast_tunespace *ts, size_t i);
/* Its launch geometry (Kernel Tuner's rules). */
kcast_status kcast_tunespace_geometry(const kcast_tunespace *ts, size_t i, unsigned grid[3],
                                      unsigned block[3]);
/*
 * Write the space as a Kernel Tuner cachefile (JSON, Kernel Tuner 1.x's
 * format): device_name, kernel_name, problem_size, tune_params_keys,
 * tune_params, objective "time", and per configuration its parameters,
 * time and times (time_ns[i] / 10^6 ms) and zero compile, verification and
 * benchmark times; a configuration that failed, or whose time_ns is NaN,
 * holds "RuntimeFailedConfig".  Written atomically.  KCAST_E_IO.
 */
kcast_status kcast_tunespace_write(const kcast_tunespace *ts, const char *path,
                                   const char *device_name, const double *time_ns);

/* ------------------------------------------------------ feature models -- */

/*
 * A feature model (.kcf, written by `kcast featmodel fit`) gives the
 * dynamic features of one kernel's launch -- what the emulator would count
 * -- from the launch alone: grid, block, dynamic shared bytes and the
 * scalar arguments the kernel reads.  It is learned from the kernel's
 * launches at other sizes (docs/formats.md, docs/accuracy.md), so a
 * scheduler can predict a launch nobody has run in microseconds:
 *
 *   set-up:    kcast_featmodel_load, kcast_featmodel_features_new
 *   per call:  kcast_featmodel_fill, then kcast_predict on the same set
 *
 * Threads: a kcast_featmodel is read-only after loading; any number of
 * threads may fill their own feature sets from one model at once.
 */
typedef struct kcast_featmodel kcast_featmodel;

/* Bits of kcast_featmodel_fill's flags. */
#define KCAST_FEATMODEL_EXTRAPOLATED 1u /* a launch quantity (threads, CTAs,
                                           an argument, ...) lies outside the
                                           sizes the model was fitted on */
#define KCAST_FEATMODEL_UNRELIABLE 2u   /* the kernel's work does not follow
                                           from the launch (its held-out error
                                           is above the model's limit, or it
                                           had fewer than 3 sizes): emulate it
                                           instead (kcast_features_from_ptx) */
#define KCAST_FEATMODEL_OTHER_BLOCK 4u  /* (0.2) a template instance launched with
                                           a block other than its instances were
                                           fitted with (each ran with one block,
                                           e.g. block = T0 x T0): also flagged
                                           EXTRAPOLATED */

/*
 * Load a feature model file.  The whole file is checked.  [out] *fm: free
 * with kcast_featmodel_free; NULL on failure.  KCAST_E_IO, KCAST_E_FORMAT
 * (not a .kcf, damaged, unsupported version), KCAST_E_NOMEM.
 */
kcast_status kcast_featmodel_load(const char *path, kcast_featmodel **fm);
/* Free a feature model.  Accepts NULL. */
void kcast_featmodel_free(kcast_featmodel *fm);
/* The kernel it models (mangled name), or for a kernel template (`kcast
   featmodel fit --kernel 'k<T>'`) the template: its instances' demangled
   signature with their integer template arguments named T0, T1, ... in
   order ("void gemm_tiled_kernel<T0>(int, float, ...)"); NULL for NULL.
   Owned by fm. */
const char *kcast_featmodel_kernel(const kcast_featmodel *fm);
/* Number of scalar arguments the kernel reads (0 for NULL). */
size_t kcast_featmodel_nargs(const kcast_featmodel *fm);
/* Parameter index of the i-th argument read (ascending), -1 when out of
   range: args[index] of kcast_featmodel_fill must hold its value. */
long kcast_featmodel_arg_param(const kcast_featmodel *fm, size_t i);
/* Median relative error of the class.* and mem.* features when each
   training size was held out; NaN when it could not be measured. */
double kcast_featmodel_heldout_error(const kcast_featmodel *fm);

/*
 * Set-up: a feature set holding every feature fm gives, for
 * kcast_featmodel_fill.  [out] *fs: free with kcast_features_free.
 */
kcast_status kcast_featmodel_features_new(const kcast_featmodel *fm, kcast_features **fs);

/*
 * Fill fs with the features of one launch of fm's kernel: grid and block
 * (each dimension >= 1), dynamic shared bytes, and args[i] the value of
 * kernel parameter i as a number (ints and floats alike; entries of
 * pointer parameters are ignored), nargs entries -- more than the largest
 * kcast_featmodel_arg_param.  [out] *flags (may be NULL):
 * KCAST_FEATMODEL_* bits; values are filled whatever the flags say.
 * On a set from kcast_featmodel_features_new for fm the call allocates
 * nothing and takes well under a microsecond; on another set it sets each
 * feature (kcast_features_set), which may allocate.  Thread-safe on one fm
 * with distinct sets.  KCAST_E_ARG for a NULL handle, a zero dimension,
 * too few arguments (naming the parameter), or a template's model (its
 * instance is needed: kcast_featmodel_fill_instance).
 */
kcast_status kcast_featmodel_fill(const kcast_featmodel *fm, const unsigned grid[3],
                                  const unsigned block[3], uint64_t shared_bytes,
                                  const double *args, size_t nargs, kcast_features *fs,
                                  unsigned *flags);

/*
 * kcast_featmodel_fill for one instance of a kernel template's model:
 * instance names it -- its mangled name, or its source name with numbers
 * ("gemm_tiled_kernel<4>") -- or, with instance NULL, targs[0..ntargs)
 * gives its template arguments T0, T1, ... (ntargs exactly the template's
 * count).  The instance need not be one the model was fitted on; one beyond
 * the fitted template arguments is flagged KCAST_FEATMODEL_EXTRAPOLATED.
 * With targs the call allocates nothing (as kcast_featmodel_fill); with a
 * name it demangles the name, which allocates: a scheduler that fills one
 * instance often passes its arguments.  For a model that is not a
 * template, instance must name its kernel (or be NULL with ntargs 0).
 * KCAST_E_ARG as kcast_featmodel_fill, and for a name that is no instance
 * of the template or has a non-integer argument where the template has a
 * variable (the message says which).
 */
kcast_status kcast_featmodel_fill_instance(const kcast_featmodel *fm, const char *instance,
                                           const double *targs, size_t ntargs,
                                           const unsigned grid[3], const unsigned block[3],
                                           uint64_t shared_bytes, const double *args,
                                           size_t nargs, kcast_features *fs, unsigned *flags);

#ifdef __cplusplus
}
#endif

#endif
