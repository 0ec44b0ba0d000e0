/*
 * prof.h -- the CPU side of `kcast profile`: read the records file that the
 * injection library (profiler/inject/prof_inject.c) writes inside a profiled
 * program, attribute power and energy to launches, and write dataset rows.
 *
 * Why a file in between: the injection library runs inside somebody else's
 * process, at exit, possibly after the program has damaged its heap; it
 * should do as little as possible there (collect, write one file
 * atomically).  Everything that can fail on bad data -- parsing, keying,
 * SQLite -- happens here, in kcast's own process, and is testable without a
 * GPU from synthetic files (tests/test_prof.c).  docs/formats.md
 * ("Profiling") is the normative description of the file and the rules.
 *
 * Conventions as in datasets/ds.h: 0 success, -1 failure with one line in
 * err ("FILE:LINE: problem" for the reader); strings handed out are owned by
 * the structure that holds them.
 */
#ifndef KCAST_PROF_H
#define KCAST_PROF_H

#include <stddef.h>
#include <stdint.h>

#include "datasets/ds.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Version of the records file this build reads ("kcast-records 1"). */
#define PROF_RECORDS_VERSION 1
/* Environment of the injection library (set by `kcast profile`). */
#define PROF_ENV_OUT "KCAST_PROFILE_OUT"       /* records file path */
#define PROF_ENV_REPEAT "KCAST_PROFILE_REPEAT" /* executions per launch */
#define PROF_ENV_POWER "KCAST_PROFILE_POWER"   /* 1: sample NVML */
#define PROF_ENV_PERIOD "KCAST_PROFILE_PERIOD_US" /* sampling period */
#define PROF_ENV_WINDOW "KCAST_PROFILE_WINDOW_MS" /* power window, ms */
#define PROF_ENV_WINDOW_MAX "KCAST_PROFILE_WINDOW_MAX" /* windows per config */
/* `kcast profile --power` runs each launch back to back for this long
   (ms) to measure its power, unless --power-window says otherwise. */
#define PROF_WINDOW_MS_DEFAULT 100
/* Shortest interval whose power/energy is not low-confidence, and the
   shortest for which the energy counter difference is used (ns). */
#define PROF_POWER_MIN_NS 100000000ull
/* measurements.tool values; a low-confidence row appends PROF_LOWCONF. */
#define PROF_TOOL_TIME "kcast-profile:cupti"
#define PROF_TOOL_ENERGY "kcast-profile:nvml-energy"
#define PROF_TOOL_POWER "kcast-profile:nvml-power"
#define PROF_LOWCONF ":lowconf"
/* launches.source of a row the profiler creates. */
#define PROF_SOURCE "kcast profile"

/* One kernel execution (a CUPTI concurrent-kernel record, already keyed). */
typedef struct prof_kernel {
  int64_t lseq;          /* launch position, >= 0 (docs/formats.md) */
  int rep;               /* 0 = the program's own launch, 1.. = repeats */
  uint64_t start, end;   /* GPU timestamps, ns, end >= start */
  uint32_t device;       /* CUDA device ordinal */
  uint32_t stream;       /* CUPTI stream id */
  uint32_t corr;         /* CUPTI correlation id */
  uint32_t grid[3], block[3];
  int64_t static_shmem, dyn_shmem; /* bytes */
  int regs;              /* registers per thread */
  char *name;            /* mangled kernel name, owned */
  int has_dur;           /* dur_ns holds the duration exactly (Nsight
                            exports print fractions of a ns) */
  double dur_ns;         /* then the time measured, else end - start */
} prof_kernel;

/* A timestamped sample: power in W, or the energy counter in J. */
typedef struct prof_sample {
  uint64_t t;            /* ns, same clock as prof_kernel.start */
  double v;
} prof_sample;

/* A power window: executions of one launch back to back, bounded by host
   timestamps (same clock) taken with the GPU idle; power only. */
typedef struct prof_window {
  int64_t lseq;
  uint64_t start, end;   /* ns, end > start */
  int64_t count;         /* executions inside, >= 1 */
} prof_window;

typedef struct prof_lowconf {
  int64_t lseq;
  char reason[64];       /* one word, e.g. "managed-memory" */
} prof_lowconf;

/* A whole records file. */
typedef struct prof_records {
  int version;
  ds_gpu gpu;            /* descriptors; gpu.name = device name as reported */
  int bus_width;         /* memory bus width, bits; 0 unknown */
  double power_min_w, power_max_w; /* board power-limit range; 0 unknown */
  int repeat;            /* executions requested per launch (>= 1) */
  int sampled;           /* 1 when NVML was sampled */
  int sampled_device;    /* CUDA ordinal NVML sampled; -1 none */
  size_t nkernels;
  prof_kernel *kernels;  /* in file order */
  size_t nlowconf;
  prof_lowconf *lowconf;
  size_t npower, nenergy;
  prof_sample *power;    /* ascending t */
  prof_sample *energy;   /* ascending t */
  size_t nwindows;
  prof_window *windows;  /* at most one per lseq is used: the first */
  int window_ms;         /* power window asked for; 0 none */
  size_t nunmatched;     /* kernel records without a launch (graphs, ...) */
  int64_t launches;      /* launch API calls the library counted */
} prof_records;

/* Read path into *r (zeroed first).  Refuses, naming file and line: an
   unknown tag, a bad or missing field, a wrong version, samples out of
   order, a missing or disagreeing `end` line (truncated file). */
int prof_records_read(const char *path, prof_records *r, char *err, size_t cap);
/* Free and zero *r.  Accepts NULL. */
void prof_records_free(prof_records *r);
/* Keep the kernel records of the launches take(ctx, kernel) accepts, asked
   once per launch in lseq order (every execution of a taken launch stays;
   the others are freed): kcast profile's --kernel, --launch-skip and
   --launch-count.  *nlaunch: the launches seen.  Returns how many were
   taken, -1 out of memory. */
long prof_records_keep(prof_records *r, int (*take)(void *ctx, const char *kernel), void *ctx,
                       size_t *nlaunch);

/* How a launch's energy was derived. */
enum { PROF_ATTR_NONE = 0, PROF_ATTR_ENERGY = 1, PROF_ATTR_POWER = 2 };

typedef struct prof_attr {
  int method;            /* PROF_ATTR_* */
  double energy_j;       /* energy over the interval */
  double power_w;        /* energy_j / interval */
  int lowconf;           /* interval shorter than PROF_POWER_MIN_NS */
  size_t nsamples;       /* power samples that overlap the interval */
} prof_attr;

/*
 * Energy of [s, e] (ns).  With an energy counter that brackets the
 * interval and e - s >= PROF_POWER_MIN_NS: the counter difference,
 * linearly interpolated at s and e.  Otherwise the integral of the power
 * samples taken as piecewise constant, sample i holding over
 * (t[i-1], t[i]] (a reading describes the time just before it), which
 * needs s >= t[0] and e <= t[n-1].  method NONE when neither applies.
 * Returns 0; -1 only for e < s.
 */
int prof_attribute(const prof_sample *power, size_t npower,
                   const prof_sample *energy, size_t nenergy, uint64_t s,
                   uint64_t e, prof_attr *out);

/* Dataset keys of one profiled run.  NULL gpu = prof_gpu_key(device). */
typedef struct prof_keys {
  const char *app;       /* non-empty */
  const char *dataset;   /* non-NULL */
  const char *gpu;       /* measurements.gpu; NULL = from the records */
  const char *bench;     /* may be NULL */
  const char *command;   /* runs.command, may be NULL */
  int power;             /* write power_w/energy_j rows */
  int rep_offset;        /* added to every rep number written (>= 0) */
  const char *source;    /* launches.source of created rows and the
                            messages' prefix; NULL = PROF_SOURCE */
  const char *time_tool; /* measurements.tool of time_ns; NULL =
                            PROF_TOOL_TIME */
} prof_keys;

typedef struct prof_summary {
  size_t launches;       /* distinct lseq written */
  size_t created;        /* launch rows created (not made by kcast run) */
  size_t times;          /* time_ns rows */
  size_t powers;         /* launches with power_w/energy_j rows */
  size_t lowconf;        /* rows marked low-confidence */
  size_t unattributed;   /* launches without power (no covering samples) */
  size_t unmatched;      /* kernel records without a launch */
  size_t windows;        /* launches whose power came from a power window */
  double energy_step_ms; /* median interval between changes of the energy
                            counter (its update period); 0 unknown */
  char gpu[128];         /* the measurements.gpu used */
} prof_summary;

/*
 * Write r into db in one transaction (begun and committed here; db must not
 * be inside one): a runs row, the gpus row, per lseq the launch (created
 * with source PROF_SOURCE when missing; an existing launch must be the
 * same kernel (prof_kernel_names_match) with the same grid and block),
 * time_ns per execution (rep numbers from the file plus
 * k->rep_offset) and, with k->power, power_w and energy_j of one execution
 * (rep k->rep_offset) over the launch's power window when the file has
 * one, else over its repeats (else its own execution).  On any failure
 * nothing is written.  sum may be NULL.
 */
int prof_ingest(ds_db *db, const prof_records *r, const prof_keys *k,
                prof_summary *sum, char *err, size_t cap);

/*
 * Kernel durations of an Nsight export as records (prof_nsight.c;
 * docs/formats.md "Nsight imports"): one execution (rep 0) per launch,
 * lseq = position in launch order, names as the file spells them, the
 * device's name in gpu.name when the file has it.
 *   prof_nsys_read: `nsys stats --report cuda_gpu_trace --format csv`
 *                   output, or an `nsys export --type sqlite` file;
 *   prof_ncu_read:  `ncu --csv --page raw` output (gpu__time_duration.sum).
 * Refused with "FILE:LINE: problem": a missing column, a bad number or
 * dimension, no kernels.
 */
int prof_nsys_read(const char *path, prof_records *r, char *err, size_t cap);
int prof_ncu_read(const char *path, prof_records *r, char *err, size_t cap);
/* Do a stored (mangled) kernel name and a reported one (mangled, or
   demangled as Nsight prints it: "void k<int>(float *)") name the same
   kernel?  Equal names, else equal base names when one is demangled. */
int prof_kernel_names_match(const char *stored, const char *reported);

/* GPU key from a device name: "NVIDIA H200" -> "H200", spaces and odd
   characters -> '-' ("NVIDIA H100 80GB HBM3" -> "H100-80GB-HBM3"). */
void prof_gpu_key(const char *device_name, char *out, size_t cap);

/* Default keys of a program run: app = basename(argv[0]); dataset = the
   arguments after it joined with single spaces ("" when none).  The same
   rule `kcast run` uses. */
void prof_default_keys(int argc, char *const *argv, char *app, size_t app_cap,
                       char *dataset, size_t dataset_cap);

#ifdef __cplusplus
}
#endif

#endif
