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
#define KCAST_VERSION_MINOR 4
#define KCAST_VERSION_PATCH 0
#define KCAST_VERSION_STRING "0.4.0"

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

/* The library's version string ("0.2.0").  Static storage. */
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

/* ------------------------------------------------------- feature sets -- */

typedef struct kcast_features kcast_features;

/* An empty feature set.  [out] *fs: free with kcast_features_free. */
kcast_status kcast_features_new(kcast_features **fs);
/* Free a feature set.  Accepts NULL. */
void kcast_features_free(kcast_features *fs);
/* Set name to value (insert or overwrite).  name non-empty, value finite
   (KCAST_E_FEATURE otherwise). */
kcast_status kcast_features_set(kcast_features *fs, const char *name, double value);
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
                               scaled to the whole grid; 0 = 64 (all when the
                               grid is smaller); >= the grid = all */
  const kcast_arg *args;    /* one per kernel parameter, in order */
  size_t nargs;
  uint64_t insn_budget;     /* stop after this many thread-instructions; 0 = none */
  double time_limit_s;      /* stop after this many seconds; 0 = none */
  int threads;              /* emulator threads; 0 = OpenMP's default */
  int oob;                  /* out-of-bounds policy: KCAST_OOB_ERROR (0) or
                               KCAST_OOB_WARN (1), see below */
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
  {sizeof(kcast_launch_config), {1, 1, 1}, {1, 1, 1}, 0, 0, 0, 0, 0, 0, 0, 0}

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
 * single GPU, NULL means that GPU.  For a GPU the model was not trained on,
 * the interval comes from the model's calibration for unseen GPUs when it
 * has one (`kcast train` on several GPUs makes it).  KCAST_E_NOTFOUND for a
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
  KCAST_CHECK_UNSEEN_GPU = 1u << 1    /* the model was not trained on the GPU */
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
 * The analytic (roofline) estimate of the launch fs describes on the GPU
 * called gpu_name (case-insensitive; see kcast_gpu_name): time (ns) and
 * average power (W), each with its band as lo/hi and source
 * KCAST_SOURCE_ANALYTIC.  Needs launch.ctas and the block size in fs
 * (KCAST_E_FEATURE otherwise); KCAST_E_NOTFOUND for an unknown GPU.  Either
 * out pointer may be NULL.  A rough estimate, not a trained model.
 */
kcast_status kcast_predict_analytic(const char *gpu_name, const kcast_features *fs,
                                    kcast_prediction *time_out, kcast_prediction *power_out);

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
