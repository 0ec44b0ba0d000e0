/*
 * prof_inject.c -- libkcast_inject.so, the CUDA injection library behind
 * `kcast profile` (docs/formats.md "Profiling" is normative for what it
 * writes; prof.h for the environment it reads).
 *
 * The CUDA driver loads the library named by CUDA_INJECTION64_PATH during
 * cuInit and calls its InitializeInjection(), whether the program links
 * cudart statically or dynamically.  We then:
 *
 *  - count kernel launches in API call order: every outermost call of a
 *    launch entry point (runtime cudaLaunchKernel*, cudaLaunchCooperative*,
 *    CUDA 13's __cudaLaunchKernel, or driver cuLaunchKernel*,
 *    cuLaunchCooperativeKernel*) on any thread takes the next lseq from one
 *    process-wide counter; launch calls nested inside it (the runtime
 *    calling the driver) take no number.  Every correlation id seen inside
 *    the call maps to that lseq, so the kernel activity record joins to it
 *    whichever layer's id CUPTI gives it;
 *  - collect CUPTI concurrent-kernel activity records (start/end on the
 *    GPU, grid, block, shared memory, registers, stream, correlation id);
 *  - with KCAST_PROFILE_REPEAT=N>1, execute each launch N-1 more times
 *    without changing the program's results: all tracked device
 *    allocations of the context are copied aside, the repeats run, the
 *    copies are written back (the "Repeat method" in docs/formats.md);
 *    launches where that is not safe are recorded as low-confidence;
 *  - with KCAST_PROFILE_POWER=1, sample NVML board power and the energy
 *    counter from a thread, timestamped with cuptiGetTimestamp (the clock
 *    of the activity records); with KCAST_PROFILE_WINDOW_MS=W as well, run
 *    each launch back to back until W ms have passed (a power window,
 *    inside the same save/restore as the repeats) and record the window's
 *    bounds and count; its kernel records are dropped, not stored
 *    (KCAST_PROFILE_WINDOW_MAX=N: at most N windows per launch
 *    configuration, i.e. function, grid, block and shared memory);
 *  - at exit, flush CUPTI and write everything to KCAST_PROFILE_OUT
 *    atomically (PATH.tmp.PID, fsync, rename).
 *
 * Nothing here links against CUDA: libcupti, libcuda and libnvidia-ml are
 * opened with dlopen so that kcast builds and runs its CPU parts on
 * machines without a GPU driver.  The CUPTI/CUDA headers supply the types.
 *
 * Re-entrancy: CUDA calls made by this library trigger our own callbacks;
 * the thread-local tl_internal and tl_rep tell them apart.  Two mutexes:
 * g_map_mu (correlation map, records, lowconf list) and g_alloc_mu
 * (allocation table, snapshot pool); g_alloc_mu may be held while a
 * callback takes g_map_mu, never the other way round.
 */
#include <cupti.h>

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define BUF_SIZE (8u << 20)   /* CUPTI activity buffer */
#define SNAPSHOT_MARGIN (256ull << 20) /* free memory kept besides the pool */
#define WINDOW_MAX_RUNS 1000000ll      /* executions in one power window */

int InitializeInjection(void) EXPORT;

/* ---------------------------------------------------- run-time symbols -- */

/* CUPTI */
static CUptiResult (*p_cuptiSubscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
static CUptiResult (*p_cuptiEnableCallback)(uint32_t, CUpti_SubscriberHandle,
                                            CUpti_CallbackDomain, CUpti_CallbackId);
static CUptiResult (*p_cuptiActivityEnable)(CUpti_ActivityKind);
static CUptiResult (*p_cuptiActivityRegisterCallbacks)(CUpti_BuffersCallbackRequestFunc,
                                                       CUpti_BuffersCallbackCompleteFunc);
static CUptiResult (*p_cuptiActivityFlushAll)(uint32_t);
static CUptiResult (*p_cuptiActivityGetNextRecord)(uint8_t *, size_t, CUpti_Activity **);
static CUptiResult (*p_cuptiActivityGetNumDroppedRecords)(CUcontext, uint32_t, size_t *);
static CUptiResult (*p_cuptiGetTimestamp)(uint64_t *);
static CUptiResult (*p_cuptiGetResultString)(CUptiResult, const char **);
static CUptiResult (*p_cuptiGetVersion)(uint32_t *);

/* Driver (already loaded by the program when we run) */
typedef CUresult (*fn_launch)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                              unsigned, unsigned, unsigned, CUstream, void **, void **);
typedef CUresult (*fn_launch_ex)(const CUlaunchConfig *, CUfunction, void **, void **);
typedef CUresult (*fn_launch_coop)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                                   unsigned, unsigned, unsigned, CUstream, void **);
static fn_launch p_cuLaunchKernel, p_cuLaunchKernel_ptsz;
static fn_launch_ex p_cuLaunchKernelEx, p_cuLaunchKernelEx_ptsz;
static fn_launch_coop p_cuLaunchCooperativeKernel, p_cuLaunchCooperativeKernel_ptsz;
static CUresult (*p_cuMemAlloc)(CUdeviceptr *, size_t);
static CUresult (*p_cuMemFree)(CUdeviceptr);
static CUresult (*p_cuMemcpyDtoD)(CUdeviceptr, CUdeviceptr, size_t);
static CUresult (*p_cuMemGetInfo)(size_t *, size_t *);
static CUresult (*p_cuCtxSynchronize)(void);
static CUresult (*p_cuCtxGetCurrent)(CUcontext *);
static CUresult (*p_cuCtxGetDevice)(CUdevice *);
static CUresult (*p_cuStreamIsCapturing)(CUstream, CUstreamCaptureStatus *);
static CUresult (*p_cuPointerGetAttribute)(void *, CUpointer_attribute, CUdeviceptr);
static CUresult (*p_cuFuncGetParamInfo)(CUfunction, size_t, size_t *, size_t *);
static CUresult (*p_cuKernelGetParamInfo)(CUkernel, size_t, size_t *, size_t *);
static CUresult (*p_cuDeviceGetName)(char *, int, CUdevice);
static CUresult (*p_cuDeviceGetAttribute)(int *, CUdevice_attribute, CUdevice);
static CUresult (*p_cuDeviceTotalMem)(size_t *, CUdevice);
static CUresult (*p_cuDriverGetVersion)(int *);
static CUresult (*p_cuDeviceGetPCIBusId)(char *, int, CUdevice);
/* Runtime, only when the program exports it (shared cudart) */
static int (*p_cudaGetFuncBySymbol)(CUfunction *, const void *);

/* NVML (declared here: the toolkit has no nvml.h) */
typedef struct nvmlDevice_st *nvmlDevice_t;
static int (*p_nvmlInit)(void);
static int (*p_nvmlDeviceGetHandleByPciBusId)(const char *, nvmlDevice_t *);
static int (*p_nvmlDeviceGetHandleByIndex)(unsigned, nvmlDevice_t *);
static int (*p_nvmlDeviceGetPowerUsage)(nvmlDevice_t, unsigned *);
static int (*p_nvmlDeviceGetTotalEnergyConsumption)(nvmlDevice_t, unsigned long long *);
static int (*p_nvmlDeviceGetPowerManagementLimitConstraints)(nvmlDevice_t, unsigned *, unsigned *);
static int (*p_nvmlDeviceGetEnforcedPowerLimit)(nvmlDevice_t, unsigned *);
static int (*p_nvmlDeviceGetMaxClockInfo)(nvmlDevice_t, int, unsigned *);
static int (*p_nvmlSystemGetDriverVersion)(char *, unsigned);
enum { NVML_CLOCK_SM_ = 1, NVML_CLOCK_MEM_ = 2 };

#define SYM(lib, var, name) (*(void **)&(var) = dlsym((lib), (name)))

/* ------------------------------------------------------------- state -- */

static int g_active;               /* InitializeInjection succeeded */
static int g_repeat = 1;           /* executions per launch */
static int g_power;                /* sample NVML */
static uint64_t g_window_ns;       /* power window per launch; 0 none */
static int g_rerun;                /* repeats or windows: save/restore */
static long g_window_max;          /* windows per launch configuration; 0 any */
static long g_period_us = 2000;    /* sampling period */
static char g_out[4096];           /* records file */
static atomic_llong g_nlaunch;     /* next lseq */

static _Thread_local int tl_internal;   /* > 0: our own CUDA calls */
static _Thread_local int tl_rep;        /* > 0: launching repeat tl_rep */
static _Thread_local int tl_depth;      /* nesting of launch API calls */
static _Thread_local int64_t tl_lseq;   /* lseq of the outermost call */
static _Thread_local int tl_repeated;   /* repeats handled for tl_lseq */
static _Thread_local long tl_window = -1; /* >= 0: in power window tl_window */

static pthread_mutex_t g_map_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t g_alloc_mu = PTHREAD_MUTEX_INITIALIZER;

/* Correlation id -> (lseq, rep): open addressing, key 0 = empty slot. */
typedef struct corr_slot { uint32_t corr; int32_t rep; int64_t lseq; } corr_slot;
static corr_slot *g_map;
static size_t g_map_cap, g_map_n;

/* Kernel activity, copied out of CUPTI's buffers. */
typedef struct krec {
  uint64_t start, end;
  uint32_t device, stream, corr;
  int32_t grid[3], block[3];
  int32_t sshm, dshm;
  uint32_t regs;
  char *name;
} krec;
static krec *g_recs;
static size_t g_nrecs, g_recs_cap;
static size_t g_dropped;

/* Power windows, in the order run (serialised by g_alloc_mu), so their
   correlation ranges [clo, chi] ascend; clo = UINT32_MAX until the first
   launch of the window. */
typedef struct window {
  int64_t lseq;
  uint64_t t0, t1;      /* cuptiGetTimestamp, GPU idle at both */
  long long n;          /* executions */
  uint32_t clo, chi;    /* correlation ids of its launches */
} window;
static window *g_win;
static size_t g_nwin, g_win_cap;
/* Launch configurations that had windows (g_alloc_mu). */
typedef struct wconf { CUfunction f; unsigned dim[6], shared; long n; } wconf;
static wconf *g_wconf;
static size_t g_nwconf, g_wconf_cap;
static size_t g_win_dropped;     /* kernel records of windows, not kept */

typedef struct lowconf { int64_t lseq; const char *why; } lowconf;
static lowconf *g_low;
static size_t g_nlow, g_low_cap;

/* Device allocations the program made (base, size, context). */
typedef struct alloc { CUdeviceptr base; size_t size; CUcontext ctx; } alloc;
static alloc *g_allocs;
static size_t g_nallocs, g_allocs_cap;
static CUdeviceptr g_pool;       /* snapshot pool */
static size_t g_pool_size;
static CUcontext g_pool_ctx;

/* Sampler */
typedef struct sample { uint64_t t; unsigned long long v; } sample;
static sample *g_pw, *g_en;
static size_t g_npw, g_nen, g_pw_cap, g_en_cap;
static pthread_t g_sampler;
static atomic_int g_stop;
static int g_sampler_on;
static nvmlDevice_t g_nvml_dev;
static int g_sampled_device = -1;

/* GPU descriptors, filled once when a context is current. */
static atomic_int g_info_done;
static char g_gpu_name[256], g_driver[96];
static int g_cc[2], g_sms, g_bus, g_cuda_ver;
static double g_sm_mhz, g_mem_mhz, g_plim_w, g_pmin_w, g_pmax_w;
static long long g_mem_bytes, g_l2;
static char g_nvml_note[160];

static int grow(void **arr, size_t *cap, size_t n, size_t sz) {
  if (n < *cap) return 0;
  size_t nc = *cap ? *cap * 2 : 256;
  void *p = realloc(*arr, nc * sz);
  if (!p) return -1;
  *arr = p;
  *cap = nc;
  return 0;
}

/* ------------------------------------------------------ correlation map -- */

static size_t map_slot(uint32_t corr, size_t cap) {
  return (size_t)(corr * 2654435761u) & (cap - 1);
}

static void map_put_locked(uint32_t corr, int64_t lseq, int rep) {
  if (!corr) return;
  if ((g_map_n + 1) * 2 > g_map_cap) {
    size_t nc = g_map_cap ? g_map_cap * 2 : 4096;
    corr_slot *m = calloc(nc, sizeof *m);
    if (!m) return;
    for (size_t i = 0; i < g_map_cap; i++) {
      if (!g_map[i].corr) continue;
      size_t j = map_slot(g_map[i].corr, nc);
      while (m[j].corr) j = (j + 1) & (nc - 1);
      m[j] = g_map[i];
    }
    free(g_map);
    g_map = m;
    g_map_cap = nc;
  }
  size_t j = map_slot(corr, g_map_cap);
  while (g_map[j].corr && g_map[j].corr != corr) j = (j + 1) & (g_map_cap - 1);
  if (!g_map[j].corr) g_map_n++;
  g_map[j].corr = corr;
  g_map[j].lseq = lseq;
  g_map[j].rep = rep;
}

static void map_put(uint32_t corr, int64_t lseq, int rep) {
  pthread_mutex_lock(&g_map_mu);
  map_put_locked(corr, lseq, rep);
  pthread_mutex_unlock(&g_map_mu);
}

static const corr_slot *map_get(uint32_t corr) {
  if (!corr || !g_map_cap) return NULL;
  size_t j = map_slot(corr, g_map_cap);
  while (g_map[j].corr) {
    if (g_map[j].corr == corr) return &g_map[j];
    j = (j + 1) & (g_map_cap - 1);
  }
  return NULL;
}

static void add_lowconf(int64_t lseq, const char *why) {
  pthread_mutex_lock(&g_map_mu);
  if (!grow((void **)&g_low, &g_low_cap, g_nlow, sizeof *g_low)) {
    g_low[g_nlow].lseq = lseq;
    g_low[g_nlow].why = why;
    g_nlow++;
  }
  pthread_mutex_unlock(&g_map_mu);
}

/* A power window's launch: not in the map (repeats and the program's own
   launches are), inside a window's correlation range.  g_map_mu held. */
static int in_window(uint32_t corr) {
  if (!g_nwin || map_get(corr)) return 0;
  size_t lo = 0, hi = g_nwin;  /* first window with clo > corr */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (g_win[mid].clo <= corr) lo = mid + 1; else hi = mid;
  }
  return lo > 0 && corr <= g_win[lo - 1].chi;
}

static void window_note_corr(uint32_t corr) {
  pthread_mutex_lock(&g_map_mu);
  window *w = &g_win[tl_window];
  if (w->clo == UINT32_MAX) w->clo = corr;
  if (corr > w->chi || w->chi == UINT32_MAX) w->chi = corr;
  pthread_mutex_unlock(&g_map_mu);
}

/* ------------------------------------------------------ activity buffers -- */

static void CUPTIAPI buf_requested(uint8_t **buffer, size_t *size, size_t *maxrec) {
  *buffer = aligned_alloc(8, BUF_SIZE);
  *size = *buffer ? BUF_SIZE : 0;
  *maxrec = 0;
}

static void CUPTIAPI buf_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
                                   size_t size, size_t valid) {
  CUpti_Activity *rec = NULL;
  pthread_mutex_lock(&g_map_mu);
  while (valid && p_cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
    if (rec->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL &&
        rec->kind != CUPTI_ACTIVITY_KIND_KERNEL)
      continue;
    const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)rec;
    if (in_window(k->correlationId)) {
      g_win_dropped++;
      continue;
    }
    if (grow((void **)&g_recs, &g_recs_cap, g_nrecs, sizeof *g_recs)) break;
    krec *r = &g_recs[g_nrecs];
    r->start = k->start;
    r->end = k->end;
    r->device = k->deviceId;
    r->stream = k->streamId;
    r->corr = k->correlationId;
    r->grid[0] = k->gridX; r->grid[1] = k->gridY; r->grid[2] = k->gridZ;
    r->block[0] = k->blockX; r->block[1] = k->blockY; r->block[2] = k->blockZ;
    r->sshm = k->staticSharedMemory;
    r->dshm = k->dynamicSharedMemory;
    r->regs = k->registersPerThread;
    r->name = strdup(k->name ? k->name : "?");
    if (!r->name) break;
    g_nrecs++;
  }
  size_t dropped = 0;
  if (p_cuptiActivityGetNumDroppedRecords &&
      p_cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS)
    g_dropped += dropped;
  pthread_mutex_unlock(&g_map_mu);
  free(buffer);
}

/* ---------------------------------------------------------- GPU + NVML -- */

static void *open_first(const char *const *names) {
  for (size_t i = 0; names[i]; i++) {
    void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (h) return h;
  }
  return NULL;
}

static void nvml_open(CUdevice dev) {
  static const char *const names[] = {"libnvidia-ml.so.1", "libnvidia-ml.so", NULL};
  void *h = open_first(names);
  if (!h) {
    snprintf(g_nvml_note, sizeof g_nvml_note, "libnvidia-ml.so.1 not found");
    return;
  }
  SYM(h, p_nvmlInit, "nvmlInit_v2");
  SYM(h, p_nvmlDeviceGetHandleByPciBusId, "nvmlDeviceGetHandleByPciBusId_v2");
  SYM(h, p_nvmlDeviceGetHandleByIndex, "nvmlDeviceGetHandleByIndex_v2");
  SYM(h, p_nvmlDeviceGetPowerUsage, "nvmlDeviceGetPowerUsage");
  SYM(h, p_nvmlDeviceGetTotalEnergyConsumption, "nvmlDeviceGetTotalEnergyConsumption");
  SYM(h, p_nvmlDeviceGetPowerManagementLimitConstraints,
      "nvmlDeviceGetPowerManagementLimitConstraints");
  SYM(h, p_nvmlDeviceGetEnforcedPowerLimit, "nvmlDeviceGetEnforcedPowerLimit");
  SYM(h, p_nvmlDeviceGetMaxClockInfo, "nvmlDeviceGetMaxClockInfo");
  SYM(h, p_nvmlSystemGetDriverVersion, "nvmlSystemGetDriverVersion");
  if (!p_nvmlInit || p_nvmlInit() != 0) {
    snprintf(g_nvml_note, sizeof g_nvml_note, "nvmlInit failed");
    return;
  }
  char bus[64] = "";
  int ok = 0;
  if (p_cuDeviceGetPCIBusId && p_cuDeviceGetPCIBusId(bus, sizeof bus, dev) == CUDA_SUCCESS &&
      p_nvmlDeviceGetHandleByPciBusId)
    ok = p_nvmlDeviceGetHandleByPciBusId(bus, &g_nvml_dev) == 0;
  if (!ok && p_nvmlDeviceGetHandleByIndex)
    ok = p_nvmlDeviceGetHandleByIndex((unsigned)dev, &g_nvml_dev) == 0;
  if (!ok) {
    snprintf(g_nvml_note, sizeof g_nvml_note, "no NVML handle for PCI %s", bus);
    g_nvml_dev = NULL;
    return;
  }
  unsigned a = 0, b = 0;
  if (p_nvmlDeviceGetPowerManagementLimitConstraints &&
      p_nvmlDeviceGetPowerManagementLimitConstraints(g_nvml_dev, &a, &b) == 0) {
    g_pmin_w = a / 1000.0;
    g_pmax_w = b / 1000.0;
  }
  if (p_nvmlDeviceGetEnforcedPowerLimit && p_nvmlDeviceGetEnforcedPowerLimit(g_nvml_dev, &a) == 0)
    g_plim_w = a / 1000.0;
  if (p_nvmlDeviceGetMaxClockInfo && p_nvmlDeviceGetMaxClockInfo(g_nvml_dev, NVML_CLOCK_SM_, &a) == 0)
    g_sm_mhz = a;
  if (p_nvmlDeviceGetMaxClockInfo && p_nvmlDeviceGetMaxClockInfo(g_nvml_dev, NVML_CLOCK_MEM_, &a) == 0)
    g_mem_mhz = a;
  if (p_nvmlSystemGetDriverVersion) p_nvmlSystemGetDriverVersion(g_driver, sizeof g_driver);
}

static void *sampler_main(void *arg) {
  (void)arg;
  struct timespec ts = {g_period_us / 1000000, (g_period_us % 1000000) * 1000};
  while (!atomic_load(&g_stop)) {
    uint64_t t = 0;
    unsigned mw = 0;
    unsigned long long mj = 0;
    if (p_nvmlDeviceGetPowerUsage && p_nvmlDeviceGetPowerUsage(g_nvml_dev, &mw) == 0 &&
        p_cuptiGetTimestamp(&t) == CUPTI_SUCCESS &&
        !grow((void **)&g_pw, &g_pw_cap, g_npw, sizeof *g_pw)) {
      g_pw[g_npw].t = t;
      g_pw[g_npw].v = mw;
      g_npw++;
    }
    if (p_nvmlDeviceGetTotalEnergyConsumption &&
        p_nvmlDeviceGetTotalEnergyConsumption(g_nvml_dev, &mj) == 0 &&
        p_cuptiGetTimestamp(&t) == CUPTI_SUCCESS &&
        !grow((void **)&g_en, &g_en_cap, g_nen, sizeof *g_en)) {
      g_en[g_nen].t = t;
      g_en[g_nen].v = mj;
      g_nen++;
    }
    nanosleep(&ts, NULL);
  }
  return NULL;
}

/* The driver's version from the kernel module's banner (the first token
   shaped like 580.159.03 in /proc/driver/nvidia/version): what NVML would
   say, without initialising NVML inside a time-only run. */
static void driver_from_proc(void) {
  FILE *f = fopen("/proc/driver/nvidia/version", "r");
  if (!f) return;
  char line[512], tok[96];
  if (fgets(line, sizeof line, f)) {
    for (char *p = line; *p;) {
      int n = 0;
      if (sscanf(p, "%95s%n", tok, &n) != 1 || n <= 0) break;
      p += n;
      unsigned a, b;
      char rest[96];
      if (sscanf(tok, "%u.%u%95s", &a, &b, rest) >= 2 && strspn(tok, "0123456789.") == strlen(tok)) {
        snprintf(g_driver, sizeof g_driver, "%s", tok);
        break;
      }
    }
  }
  fclose(f);
}

/* Once, from a launch callback with a current context: descriptors, NVML
   (power runs only: its start-up would add to a time-only run's wall
   time) and the sampler.  Runs with tl_internal set. */
static void gpu_info_once(void) {
  if (atomic_load(&g_info_done)) return;
  CUdevice dev;
  if (!p_cuCtxGetDevice || p_cuCtxGetDevice(&dev) != CUDA_SUCCESS) return;
  int expected = 0;
  if (!atomic_compare_exchange_strong(&g_info_done, &expected, 1)) return;
  if (p_cuDeviceGetName) p_cuDeviceGetName(g_gpu_name, sizeof g_gpu_name, dev);
  if (p_cuDeviceGetAttribute) {
    int v;
    if (p_cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev) == 0) g_cc[0] = v;
    if (p_cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev) == 0) g_cc[1] = v;
    if (p_cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev) == 0) g_sms = v;
    if (p_cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, dev) == 0) g_bus = v;
    if (p_cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev) == 0) g_l2 = v;
    if (p_cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, dev) == 0 && v > 0)
      g_sm_mhz = v / 1000.0;
    if (p_cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, dev) == 0 && v > 0)
      g_mem_mhz = v / 1000.0;
  }
  size_t total = 0;
  if (p_cuDeviceTotalMem && p_cuDeviceTotalMem(&total, dev) == 0) g_mem_bytes = (long long)total;
  if (p_cuDriverGetVersion) p_cuDriverGetVersion(&g_cuda_ver);
  if (g_power)
    nvml_open(dev);  /* NVML's max clocks, when present, replace the driver's */
  else
    driver_from_proc();
  if (g_power && g_nvml_dev) {
    g_sampled_device = (int)dev;
    if (pthread_create(&g_sampler, NULL, sampler_main, NULL) == 0) g_sampler_on = 1;
  }
}

/* ----------------------------------------------------------- allocations -- */

static void track_alloc(CUdeviceptr base, size_t size) {
  if (!base || !size) return;
  CUcontext ctx = NULL;
  tl_internal++;
  if (p_cuCtxGetCurrent) p_cuCtxGetCurrent(&ctx);
  tl_internal--;
  pthread_mutex_lock(&g_alloc_mu);
  size_t i;
  for (i = 0; i < g_nallocs; i++)
    if (g_allocs[i].base == base) break;
  if (i == g_nallocs && !grow((void **)&g_allocs, &g_allocs_cap, g_nallocs, sizeof *g_allocs))
    g_nallocs++;
  if (i < g_nallocs) {
    g_allocs[i].base = base;
    g_allocs[i].size = size;
    g_allocs[i].ctx = ctx;
  }
  pthread_mutex_unlock(&g_alloc_mu);
}

static void untrack_alloc(CUdeviceptr base) {
  pthread_mutex_lock(&g_alloc_mu);
  for (size_t i = 0; i < g_nallocs; i++)
    if (g_allocs[i].base == base) {
      g_allocs[i] = g_allocs[--g_nallocs];
      break;
    }
  pthread_mutex_unlock(&g_alloc_mu);
}

static int ok_rt(const CUpti_CallbackData *cb) {
  return cb->functionReturnValue && *(const int *)cb->functionReturnValue == 0;
}

static void on_alloc(CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
                     const CUpti_CallbackData *cb) {
  const void *p = cb->functionParams;
  if (cb->callbackSite != CUPTI_API_EXIT || !ok_rt(cb)) return;
  if (dom == CUPTI_CB_DOMAIN_RUNTIME_API) {
    switch (cbid) {
    case CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020: {
      const cudaMalloc_v3020_params *a = p;
      if (a->devPtr) track_alloc((CUdeviceptr)(uintptr_t)*a->devPtr, a->size);
      break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaMallocPitch_v3020: {
      const cudaMallocPitch_v3020_params *a = p;
      if (a->devPtr && a->pitch)
        track_alloc((CUdeviceptr)(uintptr_t)*a->devPtr, *a->pitch * a->height);
      break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_ptsz_v11020: {
      const cudaMallocAsync_v11020_params *a = p;
      if (a->devPtr) track_alloc((CUdeviceptr)(uintptr_t)*a->devPtr, a->size);
      break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020:
      untrack_alloc((CUdeviceptr)(uintptr_t)((const cudaFree_v3020_params *)p)->devPtr);
      break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_ptsz_v11020:
      untrack_alloc((CUdeviceptr)(uintptr_t)((const cudaFreeAsync_v11020_params *)p)->devPtr);
      break;
    default:
      break;
    }
    return;
  }
  switch (cbid) {
  case CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2: {
    const cuMemAlloc_v2_params *a = p;
    if (a->dptr) track_alloc(*a->dptr, a->bytesize);
    break;
  }
  case CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2: {
    const cuMemAllocPitch_v2_params *a = p;
    if (a->dptr && a->pPitch) track_alloc(*a->dptr, *a->pPitch * a->Height);
    break;
  }
  case CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync:
  case CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz: {
    const cuMemAllocAsync_params *a = p;
    if (a->dptr) track_alloc(*a->dptr, a->bytesize);
    break;
  }
  case CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync:
  case CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync_ptsz: {
    const cuMemAllocFromPoolAsync_params *a = p;
    if (a->dptr) track_alloc(*a->dptr, a->bytesize);
    break;
  }
  case CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2:
    untrack_alloc(((const cuMemFree_v2_params *)p)->dptr);
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync:
  case CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync_ptsz:
    untrack_alloc(((const cuMemFreeAsync_params *)p)->dptr);
    break;
  default:
    break;
  }
}

/* ---------------------------------------------------------------- repeat -- */

/* A launch to repeat: the driver entry and its parameter block. */
typedef struct relaunch {
  int which;                /* CUPTI driver cbid of the entry to call */
  cuLaunchKernel_params k;  /* for cuLaunchKernel*, cuLaunchCooperativeKernel* */
  const cuLaunchKernelEx_params *ex; /* for cuLaunchKernelEx* */
} relaunch;

static CUresult do_launch(const relaunch *l) {
  const cuLaunchKernel_params *k = &l->k;
  switch (l->which) {
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz: {
    fn_launch fn = l->which == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel ? p_cuLaunchKernel
                                                                     : p_cuLaunchKernel_ptsz;
    if (!fn) return CUDA_ERROR_NOT_SUPPORTED;
    return fn(k->f, k->gridDimX, k->gridDimY, k->gridDimZ, k->blockDimX, k->blockDimY,
              k->blockDimZ, k->sharedMemBytes, k->hStream, k->kernelParams, k->extra);
  }
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz: {
    fn_launch_coop fn = l->which == CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel
                            ? p_cuLaunchCooperativeKernel
                            : p_cuLaunchCooperativeKernel_ptsz;
    if (!fn) return CUDA_ERROR_NOT_SUPPORTED;
    return fn(k->f, k->gridDimX, k->gridDimY, k->gridDimZ, k->blockDimX, k->blockDimY,
              k->blockDimZ, k->sharedMemBytes, k->hStream, k->kernelParams);
  }
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
    fn_launch_ex fn = l->which == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx ? p_cuLaunchKernelEx
                                                                         : p_cuLaunchKernelEx_ptsz;
    if (!fn) return CUDA_ERROR_NOT_SUPPORTED;
    return fn(l->ex->config, l->ex->f, l->ex->kernelParams, l->ex->extra);
  }
  default:
    return CUDA_ERROR_NOT_SUPPORTED;
  }
}

static const alloc *find_alloc(CUdeviceptr p, CUcontext ctx) {
  for (size_t i = 0; i < g_nallocs; i++)
    if (g_allocs[i].ctx == ctx && p >= g_allocs[i].base &&
        p - g_allocs[i].base < g_allocs[i].size)
      return &g_allocs[i];
  return NULL;
}

/* Why repeating this launch could change the program's results, or NULL.
   Every 8-byte word of every parameter that CUDA recognises as a pointer
   must lie in a tracked device allocation of ctx.  g_alloc_mu held. */
static const char *check_params(CUfunction f, void **kparams, void **extra, CUcontext ctx) {
  if (!kparams) return extra ? "packed-params" : NULL;
  if (!p_cuPointerGetAttribute) return "no-pointer-query";
  for (size_t i = 0; i < 4096; i++) {
    size_t off = 0, size = 0;
    CUresult r = CUDA_ERROR_NOT_SUPPORTED;
    if (p_cuFuncGetParamInfo) r = p_cuFuncGetParamInfo(f, i, &off, &size);
    if (r != CUDA_SUCCESS && p_cuKernelGetParamInfo)
      r = p_cuKernelGetParamInfo((CUkernel)(void *)f, i, &off, &size);
    if (r != CUDA_SUCCESS) {
      if (i == 0 && !p_cuFuncGetParamInfo && !p_cuKernelGetParamInfo) return "no-param-info";
      break;  /* past the last parameter */
    }
    const unsigned char *val = kparams[i];
    if (!val) return "null-param";
    for (size_t w = 0; w + 8 <= size; w += 8) {
      uint64_t x;
      memcpy(&x, val + w, 8);
      if (x < 65536) continue;
      unsigned mt = 0;
      if (p_cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)x) !=
          CUDA_SUCCESS)
        continue;  /* not memory CUDA knows: a plain number */
      int managed = 0;
      if (p_cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, (CUdeviceptr)x) ==
              CUDA_SUCCESS && managed)
        return "managed-memory";
      if (mt == CU_MEMORYTYPE_HOST) return "host-mapped-memory";
      if (mt != CU_MEMORYTYPE_DEVICE) return "unknown-allocation";
      if (!find_alloc((CUdeviceptr)x, ctx)) return "unknown-allocation";
    }
  }
  return NULL;
}

/* The power window of launch l (tl_lseq): executions back to back, in
   batches sized from the rate measured so far, until g_window_ns have
   passed or WINDOW_MAX_RUNS ran; bounded by timestamps taken with the
   context idle before and after.  Called inside run_repeats's save/restore
   with g_alloc_mu held.  NULL or why it failed. */
static const char *power_window(const relaunch *l) {
  pthread_mutex_lock(&g_map_mu);
  int full = grow((void **)&g_win, &g_win_cap, g_nwin, sizeof *g_win);
  if (!full) {
    window *w = &g_win[g_nwin];
    memset(w, 0, sizeof *w);
    w->lseq = tl_lseq;
    w->clo = w->chi = UINT32_MAX;
    tl_window = (long)g_nwin++;
  }
  pthread_mutex_unlock(&g_map_mu);
  if (full) return "out-of-memory";
  const char *why = NULL;
  uint64_t t0 = 0, t1 = 0;
  long long n = 0, batch = 1;
  p_cuptiGetTimestamp(&t0);
  for (;;) {
    for (long long i = 0; i < batch; i++) {
      if (do_launch(l) != CUDA_SUCCESS) { why = "window-launch-failed"; break; }
      n++;
    }
    tl_internal++;
    if (p_cuCtxSynchronize() != CUDA_SUCCESS && !why) why = "sync-failed";
    tl_internal--;
    p_cuptiGetTimestamp(&t1);
    if (why || t1 - t0 >= g_window_ns || n >= WINDOW_MAX_RUNS) break;
    double per = (double)(t1 - t0) / (double)n;  /* ns per execution */
    double need = ((double)g_window_ns - (double)(t1 - t0)) / (per > 1 ? per : 1) * 1.05 + 1;
    batch = need >= (double)(WINDOW_MAX_RUNS - n) ? WINDOW_MAX_RUNS - n : (long long)need;
  }
  pthread_mutex_lock(&g_map_mu);
  window *w = &g_win[tl_window];
  w->t0 = t0;
  w->t1 = t1;
  w->n = why ? 0 : n;
  /* No launch noted: drop it (it is the last), keeping the ranges sorted. */
  if (w->clo == UINT32_MAX && (size_t)tl_window + 1 == g_nwin) g_nwin--;
  pthread_mutex_unlock(&g_map_mu);
  tl_window = -1;
  return why;
}

/* May launch l have a power window under KCAST_PROFILE_WINDOW_MAX?  Counts
   the window it grants.  g_alloc_mu held. */
static int window_allowed(const relaunch *l) {
  if (g_window_max <= 0) return 1;
  wconf k;
  memset(&k, 0, sizeof k);
  if (l->ex && l->ex->config) {
    const CUlaunchConfig *c = l->ex->config;
    k.f = l->ex->f;
    k.dim[0] = c->gridDimX; k.dim[1] = c->gridDimY; k.dim[2] = c->gridDimZ;
    k.dim[3] = c->blockDimX; k.dim[4] = c->blockDimY; k.dim[5] = c->blockDimZ;
    k.shared = c->sharedMemBytes;
  } else {
    k.f = l->k.f;
    k.dim[0] = l->k.gridDimX; k.dim[1] = l->k.gridDimY; k.dim[2] = l->k.gridDimZ;
    k.dim[3] = l->k.blockDimX; k.dim[4] = l->k.blockDimY; k.dim[5] = l->k.blockDimZ;
    k.shared = l->k.sharedMemBytes;
  }
  for (size_t i = 0; i < g_nwconf; i++) {
    wconf *c = &g_wconf[i];
    if (c->f != k.f || c->shared != k.shared || memcmp(c->dim, k.dim, sizeof k.dim)) continue;
    if (c->n >= g_window_max) return 0;
    c->n++;
    return 1;
  }
  if (!grow((void **)&g_wconf, &g_wconf_cap, g_nwconf, sizeof *g_wconf)) {
    k.n = 1;
    g_wconf[g_nwconf++] = k;
  }
  return 1;
}

/* Run repeats 1..g_repeat-1 of launch l for tl_lseq, then its power window
   when one is asked for and the repeats were shorter, with every tracked
   allocation of the current context saved before and restored after. */
static void run_repeats(const relaunch *l, CUfunction f, void **kparams, void **extra) {
  const char *why = NULL;
  CUcontext ctx = NULL;
  size_t total = 0;
  pthread_mutex_lock(&g_alloc_mu);
  tl_internal++;
  if (!p_cuCtxGetCurrent || p_cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || !ctx) why = "no-context";
  /* A launch into a stream being captured runs nothing now, and a context
     synchronisation would break the capture. */
  CUstream st = l->ex && l->ex->config ? l->ex->config->hStream : l->k.hStream;
  CUstreamCaptureStatus cap = CU_STREAM_CAPTURE_STATUS_NONE;
  if (!why && (!p_cuStreamIsCapturing || p_cuStreamIsCapturing(st, &cap) != CUDA_SUCCESS))
    why = "capture-status-unknown";
  if (!why && cap != CU_STREAM_CAPTURE_STATUS_NONE) why = "stream-capture";
  if (!why) why = check_params(f, kparams, extra, ctx);
  for (size_t i = 0; !why && i < g_nallocs; i++)
    if (g_allocs[i].ctx == ctx) total += (g_allocs[i].size + 255) & ~(size_t)255;
  if (!why && (g_pool_size < total || g_pool_ctx != ctx)) {
    size_t fr = 0, tot = 0;
    if (g_pool && g_pool_ctx == ctx) { p_cuMemFree(g_pool); g_pool = 0; g_pool_size = 0; }
    if (p_cuMemGetInfo(&fr, &tot) != CUDA_SUCCESS || fr < total + SNAPSHOT_MARGIN)
      why = "snapshot-too-large";
    else if (p_cuMemAlloc(&g_pool, total ? total : 256) != CUDA_SUCCESS)
      why = "snapshot-alloc-failed";
    else {
      g_pool_size = total ? total : 256;
      g_pool_ctx = ctx;
    }
  }
  if (!why && p_cuCtxSynchronize() != CUDA_SUCCESS) why = "sync-failed";
  size_t off = 0;
  for (size_t i = 0; !why && i < g_nallocs; i++) {
    if (g_allocs[i].ctx != ctx) continue;
    if (p_cuMemcpyDtoD(g_pool + off, g_allocs[i].base, g_allocs[i].size) != CUDA_SUCCESS)
      why = "snapshot-failed";
    off += (g_allocs[i].size + 255) & ~(size_t)255;
  }
  if (!why && p_cuCtxSynchronize() != CUDA_SUCCESS) why = "sync-failed";
  tl_internal--;
  if (!why) {
    uint64_t ta = 0, tb = 0;
    p_cuptiGetTimestamp(&ta);
    for (int r = 1; r < g_repeat; r++) {
      tl_rep = r;
      CUresult res = do_launch(l);
      tl_rep = 0;
      if (res != CUDA_SUCCESS) { why = "relaunch-failed"; break; }
    }
    tl_internal++;
    p_cuCtxSynchronize();
    tl_internal--;
    p_cuptiGetTimestamp(&tb);
    /* A window unless the repeats alone lasted that long. */
    if (!why && g_power && g_window_ns && (g_repeat < 2 || tb - ta < g_window_ns) &&
        window_allowed(l))
      why = power_window(l);
    tl_internal++;
    off = 0;
    for (size_t i = 0; i < g_nallocs; i++) {
      if (g_allocs[i].ctx != ctx) continue;
      if (p_cuMemcpyDtoD(g_allocs[i].base, g_pool + off, g_allocs[i].size) != CUDA_SUCCESS)
        why = "restore-failed";
      off += (g_allocs[i].size + 255) & ~(size_t)255;
    }
    p_cuCtxSynchronize();
    tl_internal--;
  }
  pthread_mutex_unlock(&g_alloc_mu);
  if (why) {
    add_lowconf(tl_lseq, why);
    if (!strcmp(why, "restore-failed"))
      fprintf(stderr, "kcast-inject: restoring device memory after repeats failed; "
                      "the program's results may be wrong\n");
  }
}

/* Driver launch entry: repeats before the program's own launch runs, with
   the exact parameter block the caller passed. */
static void repeat_driver(CUpti_CallbackId cbid, const void *params) {
  relaunch l;
  memset(&l, 0, sizeof l);
  l.which = (int)cbid;
  switch (cbid) {
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
    l.k = *(const cuLaunchKernel_params *)params;
    run_repeats(&l, l.k.f, l.k.kernelParams, l.k.extra);
    return;
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz: {
    const cuLaunchCooperativeKernel_params *c = params;
    l.k.f = c->f;
    l.k.gridDimX = c->gridDimX; l.k.gridDimY = c->gridDimY; l.k.gridDimZ = c->gridDimZ;
    l.k.blockDimX = c->blockDimX; l.k.blockDimY = c->blockDimY; l.k.blockDimZ = c->blockDimZ;
    l.k.sharedMemBytes = c->sharedMemBytes;
    l.k.hStream = c->hStream;
    l.k.kernelParams = c->kernelParams;
    run_repeats(&l, c->f, c->kernelParams, NULL);
    return;
  }
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
    l.ex = params;
    run_repeats(&l, l.ex->f, l.ex->kernelParams, l.ex->extra);
    return;
  default:
    add_lowconf(tl_lseq, "unsupported-entry");
  }
}

/* Runtime launch exit, when no driver launch callback fired inside the
   call: the program's launch has been queued, so the snapshot is the state
   after it; the repeats run on that state and it is restored after. */
static void repeat_runtime(CUpti_CallbackId cbid, const void *params) {
  relaunch l;
  memset(&l, 0, sizeof l);
  const cudaLaunchKernel_v7000_params *p = params;
  int ptsz = 0;
  CUfunction f = NULL;
  switch (cbid) {
  case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000:
  case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000:
    ptsz = 1;
    /* fall through */
  case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
  case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000:
    if (!p_cudaGetFuncBySymbol) { add_lowconf(tl_lseq, "no-function-handle"); return; }
    tl_internal++;
    if (p_cudaGetFuncBySymbol(&f, p->func) != 0) f = NULL;
    tl_internal--;
    break;
  case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000:
    ptsz = 1;
    /* fall through */
  case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000:
    /* Same parameter layout as cudaLaunchKernel with a cudaKernel_t (a
       CUkernel, which cuLaunchKernel accepts) in place of the stub. */
    f = (CUfunction)(void *)p->func;
    break;
  default:
    add_lowconf(tl_lseq, "launch-attributes");
    return;
  }
  if (!f) { add_lowconf(tl_lseq, "no-function-handle"); return; }
  int coop = cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000 ||
             cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000;
  l.which = coop ? (ptsz ? CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz
                         : CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel)
                 : (ptsz ? CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz
                         : CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);
  l.k.f = f;
  l.k.gridDimX = p->gridDim.x; l.k.gridDimY = p->gridDim.y; l.k.gridDimZ = p->gridDim.z;
  l.k.blockDimX = p->blockDim.x; l.k.blockDimY = p->blockDim.y; l.k.blockDimZ = p->blockDim.z;
  l.k.sharedMemBytes = (unsigned)p->sharedMem;
  l.k.hStream = (CUstream)p->stream;
  l.k.kernelParams = p->args;
  run_repeats(&l, f, p->args, NULL);
}

/* -------------------------------------------------------------- callback -- */

static int is_rt_launch(CUpti_CallbackId id) {
  switch (id) {
  case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
  case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000:
  case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060:
  case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060:
  case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000:
  case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000:
  case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000:
  case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000:
    return 1;
  default:
    return 0;
  }
}

static int is_drv_launch(CUpti_CallbackId id) {
  switch (id) {
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
    return 1;
  default:
    return 0;
  }
}

static void CUPTIAPI on_callback(void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
                                 const void *data) {
  (void)ud;
  if (tl_internal) return;
  if (dom != CUPTI_CB_DOMAIN_RUNTIME_API && dom != CUPTI_CB_DOMAIN_DRIVER_API) return;
  const CUpti_CallbackData *cb = data;
  int launch = dom == CUPTI_CB_DOMAIN_RUNTIME_API ? is_rt_launch(cbid) : is_drv_launch(cbid);
  if (tl_window >= 0) {  /* a power window's launch: its range, no map entry */
    if (launch && cb->callbackSite == CUPTI_API_ENTER) window_note_corr(cb->correlationId);
    return;
  }
  if (tl_rep > 0) {  /* one of our repeats (or a call nested in it) */
    if (launch && cb->callbackSite == CUPTI_API_ENTER)
      map_put(cb->correlationId, tl_lseq, tl_rep);
    return;
  }
  if (!launch) {
    on_alloc(dom, cbid, cb);
    return;
  }
  if (cb->callbackSite == CUPTI_API_ENTER) {
    if (tl_depth++ == 0) {
      tl_lseq = atomic_fetch_add(&g_nlaunch, 1);
      tl_repeated = 0;
    }
    map_put(cb->correlationId, tl_lseq, 0);
    tl_internal++;
    gpu_info_once();
    tl_internal--;
    if (dom == CUPTI_CB_DOMAIN_DRIVER_API && g_rerun && !tl_repeated) {
      tl_repeated = 1;
      repeat_driver(cbid, cb->functionParams);
    }
  } else {
    if (dom == CUPTI_CB_DOMAIN_RUNTIME_API && tl_depth == 1 && g_rerun && !tl_repeated) {
      tl_repeated = 1;
      if (ok_rt(cb)) repeat_runtime(cbid, cb->functionParams);
    }
    if (tl_depth > 0) tl_depth--;
  }
}

/* ------------------------------------------------------------------ exit -- */

static int cmp_sample(const void *a, const void *b) {
  const sample *x = a, *y = b;
  return x->t < y->t ? -1 : x->t > y->t;
}

static void write_records(void) {
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", g_out, (long)getpid());
  FILE *f = fopen(tmp, "w");
  if (!f) {
    fprintf(stderr, "kcast-inject: cannot write %s: %s\n", tmp, strerror(errno));
    return;
  }
  fprintf(f, "kcast-records 1\n");
  uint32_t ver = 0;
  if (p_cuptiGetVersion && p_cuptiGetVersion(&ver) == CUPTI_SUCCESS)
    fprintf(f, "note cupti api version %u (built against %u)\n", ver, (unsigned)CUPTI_API_VERSION);
  if (g_gpu_name[0]) fprintf(f, "gpu name %s\n", g_gpu_name);
  if (g_cc[0]) fprintf(f, "gpu cc %d %d\n", g_cc[0], g_cc[1]);
  if (g_sms) fprintf(f, "gpu sms %d\n", g_sms);
  if (g_sm_mhz > 0) fprintf(f, "gpu sm_clock_mhz %.0f\n", g_sm_mhz);
  if (g_mem_mhz > 0) fprintf(f, "gpu mem_clock_mhz %.0f\n", g_mem_mhz);
  if (g_mem_bytes) fprintf(f, "gpu mem_bytes %lld\n", g_mem_bytes);
  if (g_bus) fprintf(f, "gpu bus_width %d\n", g_bus);
  if (g_l2) fprintf(f, "gpu l2_bytes %lld\n", g_l2);
  if (g_plim_w > 0) fprintf(f, "gpu power_limit_w %.3f\n", g_plim_w);
  if (g_pmin_w > 0) fprintf(f, "gpu power_min_w %.3f\n", g_pmin_w);
  if (g_pmax_w > 0) fprintf(f, "gpu power_max_w %.3f\n", g_pmax_w);
  if (g_driver[0]) fprintf(f, "gpu driver %s\n", g_driver);
  if (g_cuda_ver) fprintf(f, "gpu cuda %d.%d\n", g_cuda_ver / 1000, (g_cuda_ver % 1000) / 10);
  if (g_nvml_note[0]) fprintf(f, "note nvml: %s\n", g_nvml_note);
  if (g_dropped) fprintf(f, "note cupti dropped %zu records\n", g_dropped);
  fprintf(f, "opt repeat %d\nopt power %d\nopt sampled_device %d\nopt launches %lld\n",
          g_repeat, g_power, g_sampled_device, (long long)atomic_load(&g_nlaunch));
  fprintf(f, "opt window_ms %llu\nopt windows_per_config %ld\n",
          (unsigned long long)(g_window_ns / 1000000ull), g_window_max);
  if (g_nwin) fprintf(f, "note %zu power windows; %zu of their kernel records dropped\n",
                      g_nwin, g_win_dropped);
  for (size_t i = 0; i < g_nwin; i++)
    if (g_win[i].n > 0)
      fprintf(f, "pwin %" PRId64 " %" PRIu64 " %" PRIu64 " %lld\n", g_win[i].lseq,
              g_win[i].t0, g_win[i].t1, g_win[i].n);
  for (size_t i = 0; i < g_nlow; i++)
    fprintf(f, "lowconf %" PRId64 " %s\n", g_low[i].lseq, g_low[i].why);
  size_t nk = 0, incomplete = 0;
  for (size_t i = 0; i < g_nrecs; i++) {
    const krec *r = &g_recs[i];
    const corr_slot *s = map_get(r->corr);
    if (!r->start || r->end < r->start) {  /* incomplete record */
      incomplete++;
      continue;
    }
    if (!s) {
      fprintf(f, "unmatched %u %s\n", r->corr, r->name);
      continue;
    }
    fprintf(f, "kernel %" PRId64 " %d %" PRIu64 " %" PRIu64 " %u %u %u %d %d %d %d %d %d %d %d %u %s\n",
            s->lseq, s->rep, r->start, r->end, r->device, r->stream, r->corr, r->grid[0],
            r->grid[1], r->grid[2], r->block[0], r->block[1], r->block[2], r->sshm, r->dshm,
            r->regs, r->name);
    nk++;
  }
  if (incomplete) fprintf(f, "note %zu kernel records without timestamps skipped\n", incomplete);
  qsort(g_pw, g_npw, sizeof *g_pw, cmp_sample);
  qsort(g_en, g_nen, sizeof *g_en, cmp_sample);
  for (size_t i = 0; i < g_npw; i++) fprintf(f, "power %" PRIu64 " %llu\n", g_pw[i].t, g_pw[i].v);
  for (size_t i = 0; i < g_nen; i++) fprintf(f, "energy %" PRIu64 " %llu\n", g_en[i].t, g_en[i].v);
  fprintf(f, "end %zu %zu %zu\n", nk, g_npw, g_nen);
  int bad = fflush(f) != 0 || fsync(fileno(f)) != 0;
  bad |= fclose(f) != 0;
  if (bad || rename(tmp, g_out) != 0) {
    fprintf(stderr, "kcast-inject: cannot write %s: %s\n", g_out, strerror(errno));
    unlink(tmp);
  }
}

static void at_exit(void) {
  if (!g_active) return;
  g_active = 0;
  tl_internal++;
  if (g_sampler_on) {
    atomic_store(&g_stop, 1);
    pthread_join(g_sampler, NULL);
  }
  p_cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  pthread_mutex_lock(&g_map_mu);
  write_records();
  pthread_mutex_unlock(&g_map_mu);
}

/* ---------------------------------------------------------------- init -- */

static void *open_cupti(void) {
  char path[4096];
  const char *env = getenv("KCAST_CUPTI_PATH");
  if (env && *env) {
    void *h = dlopen(env, RTLD_NOW | RTLD_LOCAL);
    if (h) return h;
  }
  void *h = dlopen("libcupti.so.13", RTLD_NOW | RTLD_LOCAL);
  if (h) return h;
  const char *roots[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda",
                         "/usr/local/cuda-13.0", "/usr/local/cuda-13", "/opt/cuda"};
  const char *subs[] = {"lib64", "lib", "extras/CUPTI/lib64", "targets/x86_64-linux/lib"};
  for (size_t i = 0; i < sizeof roots / sizeof *roots; i++) {
    if (!roots[i] || !*roots[i]) continue;
    for (size_t j = 0; j < sizeof subs / sizeof *subs; j++) {
      snprintf(path, sizeof path, "%s/%s/libcupti.so.13", roots[i], subs[j]);
      if ((h = dlopen(path, RTLD_NOW | RTLD_LOCAL))) return h;
    }
  }
  if ((h = dlopen("libcupti.so", RTLD_NOW | RTLD_LOCAL))) return h;
  env = getenv("KCAST_CUPTI_FALLBACK");  /* last: one carried along */
  return env && *env ? dlopen(env, RTLD_NOW | RTLD_LOCAL) : NULL;
}

static const char *cupti_err(CUptiResult r) {
  const char *s = NULL;
  if (p_cuptiGetResultString) p_cuptiGetResultString(r, &s);
  return s ? s : "unknown CUPTI error";
}

int InitializeInjection(void) {
  const char *out = getenv("KCAST_PROFILE_OUT");
  if (!out || !*out) return 1;  /* loaded outside kcast profile: do nothing */
  snprintf(g_out, sizeof g_out, "%s", out);
  const char *s = getenv("KCAST_PROFILE_REPEAT");
  if (s && atoi(s) > 1) g_repeat = atoi(s);
  s = getenv("KCAST_PROFILE_POWER");
  g_power = s && atoi(s) > 0;
  s = getenv("KCAST_PROFILE_PERIOD_US");
  if (s && atol(s) >= 100) g_period_us = atol(s);
  s = getenv("KCAST_PROFILE_WINDOW_MS");
  if (g_power && s && atol(s) > 0) g_window_ns = (uint64_t)atol(s) * 1000000ull;
  s = getenv("KCAST_PROFILE_WINDOW_MAX");
  if (s && atol(s) > 0) g_window_max = atol(s);

  void *cupti = open_cupti();
  if (!cupti) {
    fprintf(stderr, "kcast-inject: libcupti.so.13 not found (set KCAST_CUPTI_PATH): %s\n",
            dlerror());
    return 0;
  }
  SYM(cupti, p_cuptiSubscribe, "cuptiSubscribe");
  SYM(cupti, p_cuptiEnableCallback, "cuptiEnableCallback");
  SYM(cupti, p_cuptiActivityEnable, "cuptiActivityEnable");
  SYM(cupti, p_cuptiActivityRegisterCallbacks, "cuptiActivityRegisterCallbacks");
  SYM(cupti, p_cuptiActivityFlushAll, "cuptiActivityFlushAll");
  SYM(cupti, p_cuptiActivityGetNextRecord, "cuptiActivityGetNextRecord");
  SYM(cupti, p_cuptiActivityGetNumDroppedRecords, "cuptiActivityGetNumDroppedRecords");
  SYM(cupti, p_cuptiGetTimestamp, "cuptiGetTimestamp");
  SYM(cupti, p_cuptiGetResultString, "cuptiGetResultString");
  SYM(cupti, p_cuptiGetVersion, "cuptiGetVersion");
  if (!p_cuptiSubscribe || !p_cuptiEnableCallback || !p_cuptiActivityEnable ||
      !p_cuptiActivityRegisterCallbacks || !p_cuptiActivityFlushAll ||
      !p_cuptiActivityGetNextRecord || !p_cuptiGetTimestamp) {
    fprintf(stderr, "kcast-inject: libcupti lacks an entry point this library needs\n");
    return 0;
  }
  void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!cuda) cuda = dlopen("libcuda.so.1", RTLD_NOW);
  if (!cuda) {
    fprintf(stderr, "kcast-inject: libcuda.so.1 not loaded: %s\n", dlerror());
    return 0;
  }
  SYM(cuda, p_cuLaunchKernel, "cuLaunchKernel");
  SYM(cuda, p_cuLaunchKernel_ptsz, "cuLaunchKernel_ptsz");
  SYM(cuda, p_cuLaunchKernelEx, "cuLaunchKernelEx");
  SYM(cuda, p_cuLaunchKernelEx_ptsz, "cuLaunchKernelEx_ptsz");
  SYM(cuda, p_cuLaunchCooperativeKernel, "cuLaunchCooperativeKernel");
  SYM(cuda, p_cuLaunchCooperativeKernel_ptsz, "cuLaunchCooperativeKernel_ptsz");
  SYM(cuda, p_cuMemAlloc, "cuMemAlloc_v2");
  SYM(cuda, p_cuMemFree, "cuMemFree_v2");
  SYM(cuda, p_cuMemcpyDtoD, "cuMemcpyDtoD_v2");
  SYM(cuda, p_cuMemGetInfo, "cuMemGetInfo_v2");
  SYM(cuda, p_cuCtxSynchronize, "cuCtxSynchronize");
  SYM(cuda, p_cuCtxGetCurrent, "cuCtxGetCurrent");
  SYM(cuda, p_cuCtxGetDevice, "cuCtxGetDevice");
  SYM(cuda, p_cuStreamIsCapturing, "cuStreamIsCapturing");
  SYM(cuda, p_cuPointerGetAttribute, "cuPointerGetAttribute");
  SYM(cuda, p_cuFuncGetParamInfo, "cuFuncGetParamInfo");
  SYM(cuda, p_cuKernelGetParamInfo, "cuKernelGetParamInfo");
  SYM(cuda, p_cuDeviceGetName, "cuDeviceGetName");
  SYM(cuda, p_cuDeviceGetAttribute, "cuDeviceGetAttribute");
  SYM(cuda, p_cuDeviceTotalMem, "cuDeviceTotalMem_v2");
  SYM(cuda, p_cuDriverGetVersion, "cuDriverGetVersion");
  SYM(cuda, p_cuDeviceGetPCIBusId, "cuDeviceGetPCIBusId");
  SYM(RTLD_DEFAULT, p_cudaGetFuncBySymbol, "cudaGetFuncBySymbol");
  if (g_repeat > 1 && (!p_cuMemAlloc || !p_cuMemFree || !p_cuMemcpyDtoD || !p_cuMemGetInfo ||
                       !p_cuCtxSynchronize || !p_cuCtxGetCurrent)) {
    fprintf(stderr, "kcast-inject: libcuda lacks memory entry points; --repeat disabled\n");
    g_repeat = 1;
  }
  if (g_window_ns && (!p_cuMemAlloc || !p_cuMemFree || !p_cuMemcpyDtoD || !p_cuMemGetInfo ||
                      !p_cuCtxSynchronize || !p_cuCtxGetCurrent)) {
    fprintf(stderr, "kcast-inject: libcuda lacks memory entry points; power windows disabled\n");
    g_window_ns = 0;
  }
  g_rerun = g_repeat > 1 || g_window_ns > 0;

  CUpti_SubscriberHandle sub;
  CUptiResult r = p_cuptiSubscribe(&sub, (CUpti_CallbackFunc)on_callback, NULL);
  if (r != CUPTI_SUCCESS) {
    fprintf(stderr, "kcast-inject: cuptiSubscribe: %s (another CUPTI tool active?)\n",
            cupti_err(r));
    return 0;
  }
  static const CUpti_CallbackId rt[] = {
      CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
      CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
      CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
      CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
      CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
      CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
      CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
      CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000,
      CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020,
      CUPTI_RUNTIME_TRACE_CBID_cudaMallocPitch_v3020,
      CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020,
      CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_ptsz_v11020,
      CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020,
      CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020,
      CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_ptsz_v11020,
  };
  static const CUpti_CallbackId drv[] = {
      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2,
      CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2,
      CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync,
      CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync,
      CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2,
      CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync,
      CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync_ptsz,
  };
  for (size_t i = 0; i < sizeof rt / sizeof *rt; i++)
    p_cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API, rt[i]);
  for (size_t i = 0; i < sizeof drv / sizeof *drv; i++)
    p_cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, drv[i]);
  r = p_cuptiActivityRegisterCallbacks(buf_requested, buf_completed);
  if (r == CUPTI_SUCCESS) r = p_cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (r != CUPTI_SUCCESS) {
    fprintf(stderr, "kcast-inject: CUPTI activity setup: %s\n", cupti_err(r));
    return 0;
  }
  g_active = 1;
  atexit(at_exit);
  return 1;
}
