/*
 * rt_cudart.c -- the cudart replacement's core: fatbinary registration,
 * device memory, symbols and kernel launches on the PTX emulator.
 *
 * What: an nvcc program linked with `-cudart shared` finds this library
 * first through LD_LIBRARY_PATH (`kcast run` sets it) and runs unchanged on
 * the CPU.  Its static constructors register each fatbinary
 * (__cudaRegisterFatBinary), its kernels (__cudaRegisterFunction: host stub
 * -> mangled name) and its __device__/__constant__ globals
 * (__cudaRegisterVar: host shadow address -> module symbol).  Each
 * fatbinary's PTX (runtime/rt_fatbin.c) is parsed and loaded onto one
 * emulated device at registration; a module that cannot load is reported
 * once, with how to rebuild, and its launches fail.  A kernel using what
 * the emulator lacks (device malloc, an instruction it does not know) is
 * loaded as unrunnable (EMU_LOAD_PARTIAL): its launches are refused with
 * cudaErrorNotSupported, naming why, and the module's other kernels run.
 * Relocatable device code (-rdc, wrapper version 2) is refused by name.
 *
 * Addresses: cudaMalloc returns the emulator's device addresses
 * (0x1_0000_0000 and up), which are not host pointers.  Programs may pass
 * them around and do arithmetic on them; every copy translates.  As with
 * unified addressing on a GPU, every copy decides its direction per
 * pointer, by whether it falls inside an emulated allocation, whatever
 * cudaMemcpyKind the program passed.  Pinned host memory (cudaMallocHost)
 * is whole pages mapped like managed memory, below; registered host
 * memory (cudaHostRegister) is mapped where it lies.
 *
 * Managed and pinned memory: cudaMallocManaged maps anonymous host memory at exactly
 * the next free address of the emulator's external window (EMU_EXT_BASE
 * up, MAP_FIXED_NOREPLACE, one unmapped page between two) and registers it
 * with emu_map_external, so the pointer is both the host address and the
 * device address; copies with cudaMemcpyDefault see it as device memory.
 * cudaFree unregisters and unmaps it.  Prefetch and advice are no-ops (one
 * memory).  A __managed__ variable is the module's own .global variable:
 * its host handle (__cudaRegisterManagedVar's void **) is pointed at the
 * emulator's storage of it, so host code and kernels share its value; its
 * address taken on the host is that storage, not a device address, so
 * passing &var to a kernel faults as an unmapped address (a known gap).
 *
 * Launches (<<<>>> = __cudaPushCallConfiguration, __cudaGetKernel,
 * __cudaPopCallConfiguration, __cudaLaunchKernel; or cudaLaunchKernel) run
 * synchronously: every stream is in order and already complete when the
 * launch returns.  cudaLaunchKernelEx's attributes are hints but for a
 * cooperative launch and clusters: a cooperative launch of a kernel that
 * synchronises the grid, and clusters of more than one CTA, are refused
 * (cudaErrorNotSupported, named).  Each launch call takes the next lseq (docs/formats.md,
 * "Launch keying"), also when it fails, from the status page's counter that
 * every process of a `kcast run` shares (a forked child and an exec'd
 * program continue the parent's sequence), and every launch call writes a
 * record: its features, or an error line saying why it has none (a fault,
 * a refused configuration, a kernel whose module could not be loaded, a
 * context lost to an earlier fault), so kcast run can count and name them.  With KCAST_RUN_OUT set, a record
 * line per launch (features from emu_launch) is appended to that file; a
 * record that cannot be written ends the recording and is reported
 * (runtime/rt.h).  A
 * failed launch (out-of-bounds access, trap) is printed on stderr and
 * becomes a sticky cudaErrorLaunchFailure, as a real device fault is.
 */
#include "runtime/cudart/rt_cudart.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runtime/rt.h"

#define ERRCAP 1024
#define CONFIG_DEPTH 16
enum { RT_MAP_MANAGED, RT_MAP_PINNED, RT_MAP_REGISTERED };

static struct {
  pthread_mutex_t mu;
  emu_device *dev;
  rt_mod **mods;
  size_t nmods, capmods;
  rt_func *funcs;
  size_t nfuncs, capfuncs;
  struct rt_var {
    const void *host;
    char *name;
    rt_mod *mod;
  } *vars;
  size_t nvars, capvars;
  struct rt_managed {
    uint64_t addr;       /* host address == device address of the mapping */
    size_t len;          /* bytes mapped (whole pages; registered: 256-byte units) */
    int kind;            /* RT_MAP_MANAGED, RT_MAP_PINNED or RT_MAP_REGISTERED */
    uint64_t user;       /* the pointer the program got or registered (addr but
                            for registered memory, which starts inside) */
    unsigned flags;      /* cudaHostAlloc / cudaHostRegister flags */
  } *managed;            /* managed and pinned mappings in the emulator's external
                            window, registered host memory where it lies */
  size_t nmanaged, capmanaged;
  uint64_t mnext;        /* next managed address, 0 before the first */
  int64_t lseq;          /* next launch sequence number */
  cudaError_t sticky;    /* a device fault: every later call returns it */
  double clock;          /* emulated kernel seconds so far */
  int out_fd;            /* records file, -1 when not recording */
  uint64_t sample;       /* CTAs per launch, 0 = all */
  int threads;
  int oob;               /* EMU_OOB_* (KCAST_RUN_OOB) */
  unsigned oob_notes;    /* out-of-bounds notes printed */
  int racecheck;         /* the race check (KCAST_RUN_RACECHECK) */
  unsigned race_notes;   /* race and race-check notes printed */
  rt_status *status;     /* progress for kcast run (KCAST_RUN_STATUS), or NULL */
  int out_failed;        /* a record could not be written: no more */
} S = {PTHREAD_MUTEX_INITIALIZER, .out_fd = -1};

static _Thread_local cudaError_t last_error = cudaSuccess;

static void record(char *line);

void rt_lock(void) { pthread_mutex_lock(&S.mu); }
void rt_unlock(void) { pthread_mutex_unlock(&S.mu); }

cudaError_t rt_err(cudaError_t e) {
  if (e != cudaSuccess) last_error = e;
  return e;
}

double rt_clock(void) { return S.clock; }

cudaError_t CUDARTAPI cudaPeekAtLastError(void) {
  return last_error ? last_error : rt_sticky();
}

cudaError_t CUDARTAPI cudaGetLastError(void) {
  cudaError_t e = cudaPeekAtLastError();
  last_error = cudaSuccess; /* a sticky fault stays (cudaPeekAtLastError) */
  return e;
}

/* rt_unsupported with the lock held. */
static void unsupported_locked(const char *name, const char *what, int *once) {
  if (__atomic_exchange_n(once, 1, __ATOMIC_RELAXED)) return;
  fprintf(stderr, "kcast-cudart: unsupported: %s (%s) is not implemented by kcast's CPU "
                  "emulation; it returned cudaErrorNotSupported\n", name, what);
  if (S.out_fd >= 0) record(rt_records_unsupported_line(name, what));
}

cudaError_t rt_unsupported(const char *name, const char *what, int *once) {
  rt_lock();
  unsupported_locked(name, what, once);
  rt_unlock();
  return rt_err(cudaErrorNotSupported);
}

/* The records cannot be written (e: errno): say so on stderr and to kcast
   run (the status page, memory), once, and record nothing more (a later
   line would hide the gap). */
static void record_failed(int e) {
  if (S.out_failed) return;
  S.out_failed = 1;
  fprintf(stderr, "kcast-cudart: cannot write the launch records: %s (this run cannot be "
                  "recorded)\n", strerror(e));
  if (S.status) {
    int32_t none = 0;
    __atomic_compare_exchange_n(&S.status->records_errno, &none, (int32_t)e, 0,
                                __ATOMIC_RELEASE, __ATOMIC_RELAXED);
  }
}

/* Append one line to the records file (one write: complete or absent). */
static void record(char *line) {
  if (!line) return;
  if (S.out_fd >= 0 && !S.out_failed) {
    size_t len = strlen(line), off = 0;
    while (off < len) {
      ssize_t w = write(S.out_fd, line + off, len - off);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        record_failed(w < 0 ? errno : EIO);
        break;
      }
      off += (size_t)w;
    }
  }
  free(line);
}

/* ---------------------------------------------------------- progress -- */

/* The status page kcast run reads for its progress line (rt.h): mapped
   shared from the file it names; a sequence count makes torn reads
   detectable. */
static void status_open(const char *path) {
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) return;
  void *p = mmap(NULL, sizeof(rt_status), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED) return;
  S.status = p;
  S.status->lseq = -1;
}

static void status_begin(int64_t lseq, const char *kernel) {
  rt_status *t = S.status;
  __atomic_add_fetch(&t->seq, 1, __ATOMIC_RELEASE);
  t->lseq = lseq;
  t->insns_now = 0;
  snprintf(t->kernel, sizeof t->kernel, "%s", kernel);
  __atomic_add_fetch(&t->seq, 1, __ATOMIC_RELEASE);
}

static void status_end(int failed, uint64_t insns) {
  rt_status *t = S.status;
  __atomic_add_fetch(&t->seq, 1, __ATOMIC_RELEASE);
  t->launches++;
  t->failed += (uint64_t)failed;
  t->insns_done += insns;
  t->insns_now = 0;
  t->lseq = -1;
  __atomic_add_fetch(&t->seq, 1, __ATOMIC_RELEASE);
}

__attribute__((constructor)) static void rt_init(void) {
  const char *out = getenv(RT_ENV_OUT), *s = getenv(RT_ENV_SAMPLE), *t = getenv(RT_ENV_THREADS);
  const char *oob = getenv(RT_ENV_OOB), *status = getenv(RT_ENV_STATUS);
  const char *race = getenv(RT_ENV_RACECHECK);
  if (s) S.sample = !strcmp(s, "auto") ? EMU_SAMPLE_AUTO : strtoull(s, NULL, 10);
  if (t) S.threads = atoi(t);
  if (oob && !strcmp(oob, "warn")) S.oob = EMU_OOB_WARN;
  if (race && !strcmp(race, "1")) S.racecheck = 1;
  if (status && *status) status_open(status);
  if (out && *out) {
    S.out_fd = open(out, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (S.out_fd < 0) record_failed(errno);
    char *hello = NULL;
    if (asprintf(&hello, "kcast-run 1 %ld\n", (long)getpid()) >= 0) record(hello);
  }
}

emu_device *rt_device(void) {
  if (!S.dev) S.dev = emu_device_new();
  return S.dev;
}

static void *grow(void *p, size_t *cap, size_t n, size_t elem) {
  if (n < *cap) return p;
  size_t nc = *cap ? *cap * 2 : 16;
  void *q = realloc(p, nc * elem);
  if (q) *cap = nc;
  return q;
}

/* ------------------------------------------------------- registration -- */

void **__cudaRegisterFatBinary(void *fatCubin) {
  rt_lock();
  rt_mod *m = calloc(1, sizeof *m);
  if (!m) {
    rt_unlock();
    return NULL;
  }
  m->wrapper = fatCubin;
  char err[ERRCAP] = "";
  const uint32_t *w = fatCubin;
  const void *fb = NULL;
  if (!w || w[0] != RT_FATBIN_WRAPPER_MAGIC) {
    snprintf(err, sizeof err, "fatbinary wrapper has magic 0x%08x, not 0x%08x", w ? w[0] : 0,
             RT_FATBIN_WRAPPER_MAGIC);
  } else if (w[1] != 1) {
    static int rdc_once;
    unsupported_locked("__cudaRegisterLinkedBinary",
                       "relocatable device code, nvcc -rdc=true with device linking", &rdc_once);
    snprintf(err, sizeof err,
             "unsupported: relocatable device code (fatbinary wrapper version %u: nvcc -rdc=true "
             "or -dc with device linking); kcast runs a program's device code as one PTX module "
             "and does not link PTX across files: rebuild without -rdc (device functions and "
             "variables used by kernels of another file must then move into that file)", w[1]);
  } else {
    memcpy(&fb, (const char *)fatCubin + 8, sizeof fb);
  }
  size_t size = fb ? rt_fatbin_size(fb) : 0;
  size_t len = 0;
  unsigned arch = 0;
  if (fb && !size) snprintf(err, sizeof err, "fatbinary: bad magic (expected 0x%08x)", RT_FATBIN_MAGIC);
  if (!err[0] && rt_fatbin_ptx(fb, size, &m->ptx, &len, &arch, err, sizeof err) == 0) {
    ptx_error pe;
    char name[64];
    snprintf(name, sizeof name, "<fatbinary compute_%u>", arch);
    m->pm = ptx_parse(m->ptx, len, name, &pe);
    if (!m->pm) {
      snprintf(err, sizeof err, "%s", pe.msg);
    } else if (!rt_device() ||
               emu_module_load_ex(S.dev, m->pm, EMU_LOAD_PARTIAL, &m->em, err, sizeof err) < 0) {
      if (!err[0]) snprintf(err, sizeof err, "out of memory");
      ptx_module_free(m->pm);
      m->pm = NULL;
      m->em = NULL;
    }
  }
  if (err[0]) {
    m->error = strdup(err);
    fprintf(stderr, "kcast-cudart: %s\n", err);
    m->reported = 1;
  }
  rt_mod **mods = grow(S.mods, &S.capmods, S.nmods, sizeof *mods);
  if (mods) {
    S.mods = mods;
    S.mods[S.nmods++] = m;
  }
  rt_unlock();
  return (void **)m;
}

void __cudaRegisterFatBinaryEnd(void **handle) { (void)handle; }

char __cudaInitModule(void **handle) {
  (void)handle;
  return 1;
}

void __cudaUnregisterFatBinary(void **handle) {
  /* Kept until exit: atexit handlers registered later (a global
     destructor calling cudaFree, a final launch) may still need it. */
  (void)handle;
}

void __cudaRegisterFunction(void **handle, const char *hostFun, char *deviceFun,
                            const char *deviceName, int thread_limit, uint3 *tid, uint3 *bid,
                            dim3 *bDim, dim3 *gDim, int *wSize) {
  rt_lock();
  rt_func *f = grow(S.funcs, &S.capfuncs, S.nfuncs, sizeof *f);
  if (f) {
    S.funcs = f;
    f = &S.funcs[S.nfuncs];
    f->host = hostFun;
    f->name = strdup(deviceName ? deviceName : deviceFun);
    f->mod = (rt_mod *)handle;
    f->max_dyn_shared = -1;
    f->cluster[0] = f->cluster[1] = f->cluster[2] = 0;
    if (f->name) S.nfuncs++;
  }
  rt_unlock();
}

void __cudaRegisterVar(void **handle, char *hostVar, char *deviceAddress,
                       const char *deviceName, int ext, size_t size, int constant,
                       int global) {
  rt_lock();
  struct rt_var *v = grow(S.vars, &S.capvars, S.nvars, sizeof *v);
  if (v) {
    S.vars = v;
    v = &S.vars[S.nvars];
    v->host = hostVar;
    v->name = strdup(deviceName ? deviceName : deviceAddress);
    v->mod = (rt_mod *)handle;
    if (v->name) S.nvars++;
  }
  rt_unlock();
}

void __cudaRegisterManagedVar(void **handle, void **hostVarPtrAddress, char *deviceAddress,
                              const char *deviceName, int ext, size_t size, int constant,
                              int global) {
  rt_lock();
  rt_mod *m = (rt_mod *)handle;
  const char *name = deviceName ? deviceName : deviceAddress;
  uint64_t addr = 0;
  size_t have = 0;
  char err[ERRCAP] = "";
  void *host = NULL;
  if (m && m->em && name && hostVarPtrAddress &&
      emu_symbol(m->em, name, &addr, &have, err, sizeof err) == 0)
    host = emu_host_ptr(S.dev, addr, have);
  if (host && have >= size) {
    *hostVarPtrAddress = host;
  } else if (m && m->em) {
    /* a loaded module without the variable: the program's accesses would
       crash on the NULL handle, so say why first */
    fprintf(stderr, "kcast-cudart: __managed__ variable %s: %s\n", name ? name : "?",
            err[0] ? err : "not in the program's PTX");
  }
  rt_unlock();
}

rt_func *rt_find_func(const void *p) {
  for (size_t i = 0; i < S.nfuncs; i++)
    if (S.funcs[i].host == p || (const void *)&S.funcs[i] == p) return &S.funcs[i];
  return NULL;
}

const ptx_func *rt_func_ptx(rt_func *f) {
  rt_mod *m = f->mod;
  if (!m || !m->pm) {
    if (m && !m->reported) {
      fprintf(stderr, "kcast-cudart: %s\n", m->error ? m->error : "module not loaded");
      m->reported = 1;
    }
    return NULL;
  }
  const ptx_func *k = ptx_find_func(m->pm, f->name);
  if (!k || !k->is_entry) {
    fprintf(stderr, "kcast-cudart: kernel %s is not in the program's PTX\n", f->name);
    return NULL;
  }
  return k;
}

/* Module symbol of a registered host shadow variable. */
static cudaError_t find_symbol(const void *symbol, uint64_t *addr, size_t *size) {
  for (size_t i = 0; i < S.nvars; i++) {
    struct rt_var *v = &S.vars[i];
    if (v->host != symbol) continue;
    if (!v->mod || !v->mod->em) return cudaErrorInvalidSymbol;
    char err[ERRCAP];
    if (emu_symbol(v->mod->em, v->name, addr, size, err, sizeof err) < 0) {
      fprintf(stderr, "kcast-cudart: %s\n", err);
      return cudaErrorInvalidSymbol;
    }
    return cudaSuccess;
  }
  return cudaErrorInvalidSymbol;
}

/* ----------------------------------------------------------- memory -- */

static uint64_t dev_addr(const void *p) { return (uint64_t)(uintptr_t)p; }

/* 1 when p lies inside an emulated device allocation. */
static int is_device(const void *p) {
  return S.dev && p && emu_host_ptr(S.dev, dev_addr(p), 1) != NULL;
}

cudaError_t CUDARTAPI cudaMalloc(void **devPtr, size_t size) {
  if (!devPtr) return rt_err(cudaErrorInvalidValue);
  rt_lock();
  cudaError_t e = S.sticky;
  uint64_t a = 0;
  char err[ERRCAP];
  if (!e && !rt_device()) e = cudaErrorMemoryAllocation;
  if (!e && emu_malloc(S.dev, size ? size : 1, &a, err, sizeof err) < 0)
    e = cudaErrorMemoryAllocation;
  if (!e) *devPtr = (void *)(uintptr_t)a;
  rt_unlock();
  return rt_err(e);
}

cudaError_t CUDARTAPI cudaMallocPitch(void **devPtr, size_t *pitch, size_t width,
                                      size_t height) {
  if (!pitch) return rt_err(cudaErrorInvalidValue);
  size_t p = (width + 511) / 512 * 512;
  if (!p) p = 512;
  cudaError_t e = cudaMalloc(devPtr, p * (height ? height : 1));
  if (!e) *pitch = p;
  return e;
}

static cudaError_t pool_malloc(void **devPtr, size_t size, cudaMemPool_t pool);
static void pool_forget(uint64_t addr);

cudaError_t CUDARTAPI cudaMallocAsync(void **devPtr, size_t size, cudaStream_t hStream) {
  return pool_malloc(devPtr, size, NULL);
}

/*
 * Map size bytes of anonymous memory at the next free address of the
 * external window (host address == device address) and register it with
 * the emulator.  kind: RT_MAP_MANAGED or RT_MAP_PINNED.  Lock held.
 */
static cudaError_t map_window(size_t size, int kind, void **out, const char *what) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE), n = size ? size : 1;
  if (n > EMU_EXT_SIZE) return cudaErrorMemoryAllocation;
  size_t len = (n + page - 1) / page * page;
  char err[ERRCAP];
  struct rt_managed *mm = NULL;
  if (!S.mnext) S.mnext = EMU_EXT_BASE;
  if (!rt_device()) return cudaErrorMemoryAllocation;
  if (len > EMU_EXT_BASE + EMU_EXT_SIZE - S.mnext) {
    fprintf(stderr, "kcast-cudart: %s: the window for managed and pinned memory is exhausted\n",
            what);
    return cudaErrorMemoryAllocation;
  }
  if (!(mm = grow(S.managed, &S.capmanaged, S.nmanaged, sizeof *mm)))
    return cudaErrorMemoryAllocation;
  S.managed = mm;
  void *want = (void *)(uintptr_t)S.mnext;
  void *p = mmap(want, len, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  if (p != want) { /* refused, or an old kernel took the address as a hint */
    fprintf(stderr, "kcast-cudart: %s: cannot map %zu bytes at %p: %s\n", what, len, want,
            p == MAP_FAILED ? strerror(errno) : "address taken");
    if (p != MAP_FAILED) munmap(p, len);
    return cudaErrorMemoryAllocation;
  }
  /* the device sees whole pages too: a pinned buffer is used to its end */
  if (emu_map_external(S.dev, S.mnext, p, kind == RT_MAP_PINNED ? len : n, err, sizeof err) < 0) {
    fprintf(stderr, "kcast-cudart: %s: %s\n", what, err);
    munmap(p, len);
    return cudaErrorMemoryAllocation;
  }
  S.managed[S.nmanaged++] = (struct rt_managed){S.mnext, len, kind, S.mnext, 0};
  S.mnext += len + page; /* an unmapped page after each: overruns fault */
  *out = p;
  return cudaSuccess;
}

/* Index in S.managed of the mapping the program knows as p (what
   cudaMallocManaged or cudaMallocHost returned, what it registered), or
   S.nmanaged. */
static size_t find_mapping(const void *p) {
  size_t i = 0;
  while (i < S.nmanaged && S.managed[i].user != dev_addr(p)) i++;
  return i;
}

/* Index of the mapping that holds p, or S.nmanaged. */
static size_t mapping_of(const void *p) {
  size_t i = 0;
  while (i < S.nmanaged && dev_addr(p) - S.managed[i].addr >= S.managed[i].len) i++;
  return i;
}

cudaError_t CUDARTAPI cudaMallocManaged(void **devPtr, size_t size, unsigned int flags) {
  if (!devPtr || (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost))
    return rt_err(cudaErrorInvalidValue);
  rt_lock();
  cudaError_t e = S.sticky;
  if (!e) e = map_window(size, RT_MAP_MANAGED, devPtr, "cudaMallocManaged");
  rt_unlock();
  return rt_err(e);
}

cudaError_t CUDARTAPI cudaFree(void *devPtr) {
  if (!devPtr) return cudaSuccess;
  rt_lock();
  char err[ERRCAP];
  cudaError_t e = S.sticky;
  uint64_t a = dev_addr(devPtr);
  size_t mi = find_mapping(devPtr);
  if (!e && mi < S.nmanaged && S.managed[mi].kind != RT_MAP_MANAGED)
    e = cudaErrorInvalidValue; /* host memory: cudaFreeHost, cudaHostUnregister */
  if (!e && (!S.dev || emu_free(S.dev, a, err, sizeof err) < 0)) {
    fprintf(stderr, "kcast-cudart: cudaFree(%p): %s\n", devPtr, err);
    e = cudaErrorInvalidValue;
  }
  if (!e && mi < S.nmanaged) { /* managed: unregistered above, now unmapped */
    munmap(devPtr, S.managed[mi].len);
    S.managed[mi] = S.managed[--S.nmanaged];
  }
  if (!e) pool_forget(a);
  rt_unlock();
  return rt_err(e);
}

cudaError_t CUDARTAPI cudaMemPrefetchAsync(const void *devPtr, size_t count,
                                           struct cudaMemLocation location, unsigned int flags,
                                           cudaStream_t stream) {
  return cudaSuccess; /* host and device share the memory: nothing to move */
}

cudaError_t CUDARTAPI cudaMemAdvise(const void *devPtr, size_t count,
                                    enum cudaMemoryAdvise advice,
                                    struct cudaMemLocation location) {
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaFreeAsync(void *devPtr, cudaStream_t hStream) {
  return cudaFree(devPtr);
}

/* ----------------------------------------------------- memory pools -- */

/*
 * Stream-ordered allocation (cudaMallocAsync, cudaMallocFromPoolAsync)
 * from memory pools: every operation is complete when its call returns, so
 * a pool allocates with cudaMalloc and frees at once; what a pool adds is
 * its attributes.  The reuse policies and the release threshold are kept
 * and read back (they change when memory returns to the system, never what
 * a program computes); the used and reserved bytes are counted per pool
 * (reserved = used: nothing is held back) with their high-water marks.
 * Pools on the device (pinned, no export handles) are supported, the
 * device's default pool included; host-located and exportable ones are
 * not (unsupported).
 */
struct CUmemPoolHandle_st {
  int reuse[3];          /* cudaMemPoolReuse* (attributes 1-3), 1 by default */
  uint64_t threshold;    /* cudaMemPoolAttrReleaseThreshold */
  uint64_t used, used_high, reserved_high; /* bytes of live allocations, high marks */
  struct CUmemPoolHandle_st *next; /* created pools */
};

static struct CUmemPoolHandle_st default_pool = {{1, 1, 1}, 0, 0, 0, 0, NULL};
static struct CUmemPoolHandle_st *pools;       /* cudaMemPoolCreate'd, guarded by rt_lock */
static cudaMemPool_t current_pool = &default_pool;

static struct pool_alloc {
  uint64_t addr;
  size_t size;
  cudaMemPool_t pool;
} *pallocs;                                    /* live allocations from pools */
static size_t npallocs, cappallocs;

/* The pool p (NULL: none), if it is one.  Lock held. */
static int is_pool(cudaMemPool_t p) {
  if (p == &default_pool) return 1;
  for (cudaMemPool_t q = pools; q; q = q->next)
    if (q == p) return 1;
  return 0;
}

static cudaError_t pool_malloc(void **devPtr, size_t size, cudaMemPool_t pool) {
  rt_lock();
  if (!pool) pool = current_pool;
  int ok = is_pool(pool);
  rt_unlock();
  if (!ok || !devPtr) return rt_err(cudaErrorInvalidValue);
  cudaError_t e = cudaMalloc(devPtr, size);
  if (e) return e;
  rt_lock();
  struct pool_alloc *pa = grow(pallocs, &cappallocs, npallocs, sizeof *pa);
  if (pa) {
    pallocs = pa;
    pallocs[npallocs++] = (struct pool_alloc){dev_addr(*devPtr), size, pool};
    pool->used += size;
    if (pool->used > pool->used_high) pool->used_high = pool->used;
    if (pool->used > pool->reserved_high) pool->reserved_high = pool->used;
  }
  rt_unlock();
  if (!pa) {
    cudaFree(*devPtr);
    return rt_err(cudaErrorMemoryAllocation);
  }
  return cudaSuccess;
}

/* cudaFree of addr: its pool's bytes go down.  Lock held. */
static void pool_forget(uint64_t addr) {
  for (size_t i = 0; i < npallocs; i++)
    if (pallocs[i].addr == addr) {
      pallocs[i].pool->used -= pallocs[i].size;
      pallocs[i] = pallocs[--npallocs];
      return;
    }
}

cudaError_t CUDARTAPI cudaMallocFromPoolAsync(void **ptr, size_t size, cudaMemPool_t memPool,
                                              cudaStream_t stream) {
  if (!memPool) return rt_err(cudaErrorInvalidValue);
  return pool_malloc(ptr, size, memPool);
}

cudaError_t CUDARTAPI cudaDeviceGetDefaultMemPool(cudaMemPool_t *memPool, int device) {
  if (!memPool) return rt_err(cudaErrorInvalidValue);
  if (device != 0) return rt_err(cudaErrorInvalidDevice);
  *memPool = &default_pool;
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaDeviceGetMemPool(cudaMemPool_t *memPool, int device) {
  if (!memPool) return rt_err(cudaErrorInvalidValue);
  if (device != 0) return rt_err(cudaErrorInvalidDevice);
  rt_lock();
  *memPool = current_pool;
  rt_unlock();
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaDeviceSetMemPool(int device, cudaMemPool_t memPool) {
  if (device != 0) return rt_err(cudaErrorInvalidDevice);
  rt_lock();
  int ok = is_pool(memPool);
  if (ok) current_pool = memPool;
  rt_unlock();
  return ok ? cudaSuccess : rt_err(cudaErrorInvalidValue);
}

/* The device's pool of location and type (CUDA 13's cudaMemGetMemPool and
   friends); the host's, and managed pools, are not supported. */
static cudaError_t pool_place(const char *fn, const struct cudaMemLocation *loc,
                              enum cudaMemAllocationType type) {
  static int once;
  if (!loc) return rt_err(cudaErrorInvalidValue);
  if (loc->type == cudaMemLocationTypeDevice && loc->id != 0) return rt_err(cudaErrorInvalidDevice);
  if (loc->type != cudaMemLocationTypeDevice || type != cudaMemAllocationTypePinned)
    return rt_unsupported(fn, "memory pools other than the device's", &once);
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaMemGetDefaultMemPool(cudaMemPool_t *memPool,
                                               struct cudaMemLocation *location,
                                               enum cudaMemAllocationType type) {
  cudaError_t e = memPool ? pool_place("cudaMemGetDefaultMemPool", location, type)
                          : rt_err(cudaErrorInvalidValue);
  if (!e) *memPool = &default_pool;
  return e;
}

cudaError_t CUDARTAPI cudaMemGetMemPool(cudaMemPool_t *memPool, struct cudaMemLocation *location,
                                        enum cudaMemAllocationType type) {
  cudaError_t e = memPool ? pool_place("cudaMemGetMemPool", location, type)
                          : rt_err(cudaErrorInvalidValue);
  return e ? e : cudaDeviceGetMemPool(memPool, 0);
}

cudaError_t CUDARTAPI cudaMemSetMemPool(struct cudaMemLocation *location,
                                        enum cudaMemAllocationType type, cudaMemPool_t memPool) {
  cudaError_t e = pool_place("cudaMemSetMemPool", location, type);
  return e ? e : cudaDeviceSetMemPool(0, memPool);
}

cudaError_t CUDARTAPI cudaMemPoolCreate(cudaMemPool_t *memPool,
                                        const struct cudaMemPoolProps *poolProps) {
  static int once;
  if (!memPool || !poolProps) return rt_err(cudaErrorInvalidValue);
  cudaError_t e = pool_place("cudaMemPoolCreate", &poolProps->location, poolProps->allocType);
  if (e) return e;
  if (poolProps->handleTypes != cudaMemHandleTypeNone)
    return rt_unsupported("cudaMemPoolCreate", "exportable memory pools (IPC handles)", &once);
  struct CUmemPoolHandle_st *p = calloc(1, sizeof *p);
  if (!p) return rt_err(cudaErrorMemoryAllocation);
  p->reuse[0] = p->reuse[1] = p->reuse[2] = 1;
  rt_lock();
  p->next = pools;
  pools = p;
  rt_unlock();
  *memPool = p;
  return cudaSuccess;
}

/* As on a GPU, a pool's live allocations keep it until they are freed;
   here they simply lose their pool's accounting. */
cudaError_t CUDARTAPI cudaMemPoolDestroy(cudaMemPool_t memPool) {
  rt_lock();
  cudaMemPool_t *pp = &pools;
  while (*pp && *pp != memPool) pp = &(*pp)->next;
  cudaMemPool_t p = *pp;
  if (p) {
    *pp = p->next;
    for (size_t i = 0; i < npallocs;)
      if (pallocs[i].pool == p) pallocs[i] = pallocs[--npallocs];
      else i++;
    if (current_pool == p) current_pool = &default_pool;
  }
  rt_unlock();
  if (!p) return rt_err(cudaErrorInvalidValue); /* the default pool, or none */
  free(p);
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaMemPoolSetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr,
                                              void *value) {
  if (!value) return rt_err(cudaErrorInvalidValue);
  rt_lock();
  cudaError_t e = is_pool(memPool) ? cudaSuccess : cudaErrorInvalidValue;
  uint64_t v64 = 0;
  if (attr >= cudaMemPoolAttrReleaseThreshold) memcpy(&v64, value, sizeof v64);
  if (!e) switch (attr) {
    case cudaMemPoolReuseFollowEventDependencies: case cudaMemPoolReuseAllowOpportunistic:
    case cudaMemPoolReuseAllowInternalDependencies:
      memPool->reuse[attr - 1] = *(const int *)value != 0;
      break;
    case cudaMemPoolAttrReleaseThreshold: memPool->threshold = v64; break;
    case cudaMemPoolAttrReservedMemHigh: case cudaMemPoolAttrUsedMemHigh:
      if (v64) e = cudaErrorInvalidValue; /* only resets (to the current value) */
      else if (attr == cudaMemPoolAttrUsedMemHigh) memPool->used_high = memPool->used;
      else memPool->reserved_high = memPool->used;
      break;
    default: e = cudaErrorInvalidValue; break; /* read-only or unknown */
    }
  rt_unlock();
  return rt_err(e);
}

cudaError_t CUDARTAPI cudaMemPoolGetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr,
                                              void *value) {
  if (!value) return rt_err(cudaErrorInvalidValue);
  rt_lock();
  cudaError_t e = is_pool(memPool) ? cudaSuccess : cudaErrorInvalidValue;
  uint64_t v64 = 0;
  if (!e) switch (attr) {
    case cudaMemPoolReuseFollowEventDependencies: case cudaMemPoolReuseAllowOpportunistic:
    case cudaMemPoolReuseAllowInternalDependencies:
      *(int *)value = memPool->reuse[attr - 1];
      break;
    case cudaMemPoolAttrReleaseThreshold: v64 = memPool->threshold; break;
    case cudaMemPoolAttrReservedMemCurrent: case cudaMemPoolAttrUsedMemCurrent:
      v64 = memPool->used;
      break;
    case cudaMemPoolAttrReservedMemHigh: v64 = memPool->reserved_high; break;
    case cudaMemPoolAttrUsedMemHigh: v64 = memPool->used_high; break;
    default: e = cudaErrorInvalidValue; break;
    }
  if (!e && attr >= cudaMemPoolAttrReleaseThreshold) memcpy(value, &v64, sizeof v64);
  rt_unlock();
  return rt_err(e);
}

/* Nothing is held back: trimming frees nothing. */
cudaError_t CUDARTAPI cudaMemPoolTrimTo(cudaMemPool_t memPool, size_t minBytesToKeep) {
  rt_lock();
  int ok = is_pool(memPool);
  rt_unlock();
  return ok ? cudaSuccess : rt_err(cudaErrorInvalidValue);
}

/* One device: it has read-write access to its pools, no other can. */
cudaError_t CUDARTAPI cudaMemPoolSetAccess(cudaMemPool_t memPool,
                                           const struct cudaMemAccessDesc *descList,
                                           size_t count) {
  rt_lock();
  int ok = is_pool(memPool);
  rt_unlock();
  if (!ok || (count && !descList)) return rt_err(cudaErrorInvalidValue);
  for (size_t i = 0; i < count; i++)
    if (descList[i].location.type != cudaMemLocationTypeDevice || descList[i].location.id != 0)
      return rt_err(cudaErrorInvalidDevice);
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaMemPoolGetAccess(enum cudaMemAccessFlags *flags, cudaMemPool_t memPool,
                                           struct cudaMemLocation *location) {
  if (!flags || !location) return rt_err(cudaErrorInvalidValue);
  rt_lock();
  int ok = is_pool(memPool);
  rt_unlock();
  if (!ok) return rt_err(cudaErrorInvalidValue);
  *flags = location->type == cudaMemLocationTypeDevice && location->id == 0
               ? cudaMemAccessFlagsProtReadWrite : cudaMemAccessFlagsProtNone;
  return cudaSuccess;
}

/*
 * Pinned host memory: whole pages, as the real runtime hands out (a program
 * that writes past a small cudaMallocHost buffer survives there), mapped
 * into the device's address space at the same address (unified
 * addressing: a kernel may use it, cudaHostGetDevicePointer returns it,
 * copies find its side from the pointer).
 */
static cudaError_t host_alloc(void **ptr, size_t size, unsigned flags, const char *what) {
  if (!ptr || (flags & ~(unsigned)(cudaHostAllocPortable | cudaHostAllocMapped |
                                   cudaHostAllocWriteCombined)))
    return rt_err(cudaErrorInvalidValue);
  rt_lock();
  cudaError_t e = map_window(size, RT_MAP_PINNED, ptr, what);
  if (!e) S.managed[S.nmanaged - 1].flags = flags;
  rt_unlock();
  return rt_err(e);
}

cudaError_t CUDARTAPI cudaMallocHost(void **ptr, size_t size) {
  return host_alloc(ptr, size, cudaHostAllocDefault, "cudaMallocHost");
}

cudaError_t CUDARTAPI cudaHostAlloc(void **pHost, size_t size, unsigned int flags) {
  return host_alloc(pHost, size, flags, "cudaHostAlloc");
}

cudaError_t CUDARTAPI cudaFreeHost(void *ptr) {
  if (!ptr) return cudaSuccess;
  rt_lock();
  size_t mi = find_mapping(ptr);
  cudaError_t e = cudaSuccess;
  char err[ERRCAP];
  if (mi == S.nmanaged || S.managed[mi].kind != RT_MAP_PINNED) {
    e = cudaErrorInvalidValue;
  } else if (emu_free(S.dev, dev_addr(ptr), err, sizeof err) < 0) {
    fprintf(stderr, "kcast-cudart: cudaFreeHost(%p): %s\n", ptr, err);
    e = cudaErrorInvalidValue;
  } else {
    munmap(ptr, S.managed[mi].len);
    S.managed[mi] = S.managed[--S.nmanaged];
  }
  rt_unlock();
  return rt_err(e);
}

cudaError_t CUDARTAPI cudaHostGetDevicePointer(void **pDevice, void *pHost, unsigned int flags) {
  if (!pDevice || flags) return rt_err(cudaErrorInvalidValue);
  rt_lock();
  int ok = S.dev && emu_host_ptr(S.dev, dev_addr(pHost), 1) == pHost;
  rt_unlock();
  if (!ok) return rt_err(cudaErrorInvalidValue);
  *pDevice = pHost; /* unified addressing: the same address */
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaHostGetFlags(unsigned int *pFlags, void *pHost) {
  if (!pFlags) return rt_err(cudaErrorInvalidValue);
  rt_lock();
  size_t mi = mapping_of(pHost);
  int ok = mi < S.nmanaged && S.managed[mi].kind != RT_MAP_MANAGED;
  if (ok) *pFlags = S.managed[mi].flags;
  rt_unlock();
  return ok ? cudaSuccess : rt_err(cudaErrorInvalidValue);
}

cudaError_t CUDARTAPI cudaPointerGetAttributes(struct cudaPointerAttributes *attr,
                                               const void *ptr) {
  if (!attr) return rt_err(cudaErrorInvalidValue);
  rt_lock();
  memset(attr, 0, sizeof *attr);
  size_t mi = mapping_of(ptr);
  if (mi < S.nmanaged) {
    attr->type = S.managed[mi].kind == RT_MAP_MANAGED ? cudaMemoryTypeManaged : cudaMemoryTypeHost;
    attr->devicePointer = (void *)(uintptr_t)ptr;
    attr->hostPointer = (void *)(uintptr_t)ptr;
  } else if (is_device(ptr)) {
    attr->type = cudaMemoryTypeDevice;
    attr->devicePointer = (void *)(uintptr_t)ptr;
  } else {
    attr->type = cudaMemoryTypeUnregistered;
    attr->device = -2;
    attr->hostPointer = (void *)(uintptr_t)ptr;
  }
  rt_unlock();
  return cudaSuccess;
}

/*
 * Registered host memory: the range (widened to 256-byte units, which stay
 * inside its pages) is mapped into the device's address space where it
 * lies, so kernels may use the host pointer (unified addressing; the
 * device pointer cudaHostGetDevicePointer returns is the same) and copies
 * see it as pinned.  The memory stays the program's.
 */
cudaError_t CUDARTAPI cudaHostRegister(void *ptr, size_t size, unsigned int flags) {
  static int io_once;
  if (!ptr || !size || (flags & ~(unsigned)(cudaHostRegisterPortable | cudaHostRegisterMapped |
                                            cudaHostRegisterIoMemory | cudaHostRegisterReadOnly)))
    return rt_err(cudaErrorInvalidValue);
  if (flags & cudaHostRegisterIoMemory)
    return rt_unsupported("cudaHostRegister", "I/O memory (cudaHostRegisterIoMemory)", &io_once);
  uint64_t user = dev_addr(ptr), base = user & ~(uint64_t)255;
  if (size > EMU_HOST_END || user > EMU_HOST_END - size) return rt_err(cudaErrorInvalidValue);
  uint64_t end = (user + size + 255) & ~(uint64_t)255;
  rt_lock();
  cudaError_t e = S.sticky;
  char err[ERRCAP];
  struct rt_managed *mm = NULL;
  for (size_t i = 0; !e && i < S.nmanaged; i++)
    if (S.managed[i].addr < end && base < S.managed[i].addr + S.managed[i].len)
      e = cudaErrorHostMemoryAlreadyRegistered;
  if (!e && !rt_device()) e = cudaErrorMemoryAllocation;
  if (!e && !(mm = grow(S.managed, &S.capmanaged, S.nmanaged, sizeof *mm)))
    e = cudaErrorMemoryAllocation;
  if (!e) S.managed = mm;
  if (!e && emu_map_external(S.dev, base, (void *)(uintptr_t)base, end - base, err,
                             sizeof err) < 0) {
    fprintf(stderr, "kcast-cudart: cudaHostRegister(%p, %zu): %s\n", ptr, size, err);
    e = strstr(err, "overlaps the allocation") ? cudaErrorHostMemoryAlreadyRegistered
                                               : cudaErrorInvalidValue;
  }
  if (!e) S.managed[S.nmanaged++] = (struct rt_managed){base, end - base, RT_MAP_REGISTERED,
                                                        user, flags};
  rt_unlock();
  return rt_err(e);
}

cudaError_t CUDARTAPI cudaHostUnregister(void *ptr) {
  rt_lock();
  size_t mi = find_mapping(ptr);
  char err[ERRCAP];
  cudaError_t e = cudaSuccess;
  if (mi == S.nmanaged || S.managed[mi].kind != RT_MAP_REGISTERED) {
    e = cudaErrorHostMemoryNotRegistered;
  } else if (emu_free(S.dev, S.managed[mi].addr, err, sizeof err) < 0) {
    fprintf(stderr, "kcast-cudart: cudaHostUnregister(%p): %s\n", ptr, err);
    e = cudaErrorInvalidValue;
  } else {
    S.managed[mi] = S.managed[--S.nmanaged];
  }
  rt_unlock();
  return rt_err(e);
}

/* 1 when the first and last pages of [p, p+n) are mapped host memory. */
static int host_mapped(const void *p, size_t n) {
  uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), a = (uintptr_t)p & ~(page - 1);
  uintptr_t b = ((uintptr_t)p + (n ? n - 1 : 0)) & ~(page - 1);
  unsigned char v;
  return mincore((void *)a, page, &v) == 0 && mincore((void *)b, page, &v) == 0;
}

/* One copy of n bytes; the caller holds the lock. */
cudaError_t rt_copy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind) {
  if (S.sticky) return S.sticky;
  if (!n) return cudaSuccess;
  if (!dst || !src) return cudaErrorInvalidValue;
  if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault)
    return cudaErrorInvalidMemcpyDirection;
  /* unified addressing: the pointers say where they point, whatever kind
     the program passed (a device source with cudaMemcpyHostToDevice works
     on a GPU) */
  int dd = emu_is_device_addr(S.dev, dev_addr(dst)), sd = emu_is_device_addr(S.dev, dev_addr(src));
  /* a side the kind calls device memory that is neither device memory nor
     mapped host memory (a stray pointer): an error, as on a GPU, not a
     fault in the program */
  int kd = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice,
      ks = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
  if ((kd && !dd && !host_mapped(dst, n)) || (ks && !sd && !host_mapped(src, n))) {
    fprintf(stderr, "kcast-cudart: cudaMemcpy: the %s %p is neither device memory nor host "
                    "memory (cudaErrorInvalidValue)\n", kd && !dd ? "destination" : "source",
            kd && !dd ? dst : src);
    return cudaErrorInvalidValue;
  }
  kind = dd ? (sd ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice)
            : (sd ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost);
  char err[ERRCAP];
  int rc = 0;
  emu_device *d = rt_device();
  if (!d) return cudaErrorMemoryAllocation;
  switch (kind) {
  case cudaMemcpyHostToHost: memmove(dst, src, n); break;
  case cudaMemcpyHostToDevice: rc = emu_memcpy_htod(d, dev_addr(dst), src, n, err, sizeof err); break;
  case cudaMemcpyDeviceToHost: rc = emu_memcpy_dtoh(d, dst, dev_addr(src), n, err, sizeof err); break;
  case cudaMemcpyDeviceToDevice:
    rc = emu_memcpy_dtod(d, dev_addr(dst), dev_addr(src), n, err, sizeof err);
    break;
  default: return cudaErrorInvalidMemcpyDirection;
  }
  if (rc < 0) {
    fprintf(stderr, "kcast-cudart: cudaMemcpy: %s\n", err);
    return cudaErrorInvalidValue;
  }
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaMemcpy(void *dst, const void *src, size_t count,
                                 enum cudaMemcpyKind kind) {
  rt_lock();
  cudaError_t e = rt_copy(dst, src, count, kind);
  rt_unlock();
  return rt_err(e);
}

cudaError_t CUDARTAPI cudaMemcpyAsync(void *dst, const void *src, size_t count,
                                      enum cudaMemcpyKind kind, cudaStream_t stream) {
  return cudaMemcpy(dst, src, count, kind);
}

cudaError_t CUDARTAPI cudaMemcpyPeer(void *dst, int dstDevice, const void *src, int srcDevice,
                                     size_t count) {
  if (dstDevice || srcDevice) return rt_err(cudaErrorInvalidDevice);
  return cudaMemcpy(dst, src, count, cudaMemcpyDeviceToDevice);
}

cudaError_t CUDARTAPI cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src,
                                          int srcDevice, size_t count, cudaStream_t stream) {
  return cudaMemcpyPeer(dst, dstDevice, src, srcDevice, count);
}

cudaError_t CUDARTAPI cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch,
                                   size_t width, size_t height, enum cudaMemcpyKind kind) {
  if (width > dpitch || width > spitch) return rt_err(cudaErrorInvalidPitchValue);
  rt_lock();
  cudaError_t e = cudaSuccess;
  for (size_t r = 0; r < height && !e; r++)
    e = rt_copy((char *)dst + r * dpitch, (const char *)src + r * spitch, width, kind);
  rt_unlock();
  return rt_err(e);
}

cudaError_t CUDARTAPI cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src,
                                        size_t spitch, size_t width, size_t height,
                                        enum cudaMemcpyKind kind, cudaStream_t stream) {
  return cudaMemcpy2D(dst, dpitch, src, spitch, width, height, kind);
}

static cudaError_t fill(void *devPtr, int value, size_t count) {
  if (S.sticky) return S.sticky;
  char err[ERRCAP];
  if (!count) return cudaSuccess;
  if (!S.dev || emu_memset(S.dev, dev_addr(devPtr), value, count, err, sizeof err) < 0)
    return cudaErrorInvalidValue;
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaMemset(void *devPtr, int value, size_t count) {
  rt_lock();
  cudaError_t e = fill(devPtr, value, count);
  rt_unlock();
  return rt_err(e);
}

cudaError_t CUDARTAPI cudaMemsetAsync(void *devPtr, int value, size_t count,
                                      cudaStream_t stream) {
  return cudaMemset(devPtr, value, count);
}

cudaError_t CUDARTAPI cudaMemset2D(void *devPtr, size_t pitch, int value, size_t width,
                                   size_t height) {
  if (width > pitch) return rt_err(cudaErrorInvalidPitchValue);
  rt_lock();
  cudaError_t e = cudaSuccess;
  for (size_t r = 0; r < height && !e; r++) e = fill((char *)devPtr + r * pitch, value, width);
  rt_unlock();
  return rt_err(e);
}

cudaError_t CUDARTAPI cudaMemset2DAsync(void *devPtr, size_t pitch, int value, size_t width,
                                        size_t height, cudaStream_t stream) {
  return cudaMemset2D(devPtr, pitch, value, width, height);
}

/* extent.width bytes of each of extent.height rows of each of extent.depth
   slices (a slice is p.ysize rows of p.pitch bytes). */
cudaError_t CUDARTAPI cudaMemset3D(struct cudaPitchedPtr p, int value, struct cudaExtent extent) {
  if (extent.width > p.pitch || (extent.depth > 1 && extent.height > p.ysize))
    return rt_err(cudaErrorInvalidValue);
  rt_lock();
  cudaError_t e = cudaSuccess;
  for (size_t z = 0; z < extent.depth && !e; z++)
    for (size_t y = 0; y < extent.height && !e; y++)
      e = fill((char *)p.ptr + (z * p.ysize + y) * p.pitch, value, extent.width);
  rt_unlock();
  return rt_err(e);
}

cudaError_t CUDARTAPI cudaMemset3DAsync(struct cudaPitchedPtr p, int value,
                                        struct cudaExtent extent, cudaStream_t stream) {
  return cudaMemset3D(p, value, extent);
}

cudaError_t CUDARTAPI cudaMemGetInfo(size_t *free_bytes, size_t *total) {
  struct cudaDeviceProp p;
  rt_fill_props(&p);
  if (free_bytes) *free_bytes = p.totalGlobalMem;
  if (total) *total = p.totalGlobalMem;
  return cudaSuccess;
}

/* ---------------------------------------------------------- symbols -- */

static cudaError_t symbol_copy(const void *symbol, void *host, size_t count, size_t offset,
                               enum cudaMemcpyKind kind, int to_symbol) {
  rt_lock();
  uint64_t addr = 0;
  size_t size = 0;
  cudaError_t e = S.sticky ? S.sticky : find_symbol(symbol, &addr, &size);
  if (!e && (offset > size || count > size - offset)) e = cudaErrorInvalidValue;
  void *sym = (void *)(uintptr_t)(addr + offset);
  if (!e) e = to_symbol ? rt_copy(sym, host, count, kind) : rt_copy(host, sym, count, kind);
  rt_unlock();
  return rt_err(e);
}

cudaError_t CUDARTAPI cudaMemcpyToSymbol(const void *symbol, const void *src, size_t count,
                                         size_t offset, enum cudaMemcpyKind kind) {
  return symbol_copy(symbol, (void *)(uintptr_t)src, count, offset, kind, 1);
}

cudaError_t CUDARTAPI cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t count,
                                           size_t offset, enum cudaMemcpyKind kind) {
  return symbol_copy(symbol, dst, count, offset, kind, 0);
}

cudaError_t CUDARTAPI cudaMemcpyToSymbolAsync(const void *symbol, const void *src,
                                              size_t count, size_t offset,
                                              enum cudaMemcpyKind kind, cudaStream_t stream) {
  return cudaMemcpyToSymbol(symbol, src, count, offset, kind);
}

cudaError_t CUDARTAPI cudaMemcpyFromSymbolAsync(void *dst, const void *symbol, size_t count,
                                                size_t offset, enum cudaMemcpyKind kind,
                                                cudaStream_t stream) {
  return cudaMemcpyFromSymbol(dst, symbol, count, offset, kind);
}

cudaError_t CUDARTAPI cudaGetSymbolAddress(void **devPtr, const void *symbol) {
  rt_lock();
  uint64_t addr = 0;
  size_t size = 0;
  cudaError_t e = find_symbol(symbol, &addr, &size);
  if (!e && devPtr) *devPtr = (void *)(uintptr_t)addr;
  rt_unlock();
  return rt_err(e);
}

cudaError_t CUDARTAPI cudaGetSymbolSize(size_t *size, const void *symbol) {
  rt_lock();
  uint64_t addr = 0;
  size_t sz = 0;
  cudaError_t e = find_symbol(symbol, &addr, &sz);
  if (!e && size) *size = sz;
  rt_unlock();
  return rt_err(e);
}

/* ---------------------------------------------------------- launches -- */

typedef struct call_config {
  dim3 grid, block;
  size_t shmem;
  cudaStream_t stream;
} call_config;
static _Thread_local call_config config_stack[CONFIG_DEPTH];
static _Thread_local int config_depth;

unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
                                     struct CUstream_st *stream) {
  if (config_depth >= CONFIG_DEPTH) return 1;
  call_config *c = &config_stack[config_depth++];
  c->grid = gridDim;
  c->block = blockDim;
  c->shmem = sharedMem;
  c->stream = stream;
  return 0;
}

cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem,
                                       void *stream) {
  if (config_depth <= 0) return cudaErrorInvalidConfiguration;
  call_config *c = &config_stack[--config_depth];
  if (gridDim) *gridDim = c->grid;
  if (blockDim) *blockDim = c->block;
  if (sharedMem) *sharedMem = c->shmem;
  if (stream) memcpy(stream, &c->stream, sizeof c->stream);
  return cudaSuccess;
}

cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *hostFun) {
  rt_lock();
  rt_func *f = rt_find_func(hostFun);
  if (f && kernel) *kernel = (cudaKernel_t)(void *)f;
  rt_unlock();
  return rt_err(f ? cudaSuccess : cudaErrorInvalidDeviceFunction);
}

cudaError_t CUDARTAPI cudaGetKernel(cudaKernel_t *kernelPtr, const void *entryFuncAddr) {
  return __cudaGetKernel(kernelPtr, entryFuncAddr);
}

/* The CUDA error a GPU returns for a launch that failed this way; all but
   a refused configuration are sticky (the context is lost). */
static cudaError_t fault_error(emu_fault f) {
  switch (f) {
  case EMU_FAULT_ADDRESS: return cudaErrorIllegalAddress;
  case EMU_FAULT_MISALIGNED: return cudaErrorMisalignedAddress;
  case EMU_FAULT_ASSERT: return cudaErrorAssert;
  case EMU_FAULT_LIMIT: return cudaErrorLaunchTimeout;
  case EMU_FAULT_CONFIG: return cudaErrorInvalidConfiguration;
  case EMU_FAULT_UNSUPPORTED: return cudaErrorNotSupported;
  default: return cudaErrorLaunchFailure;
  }
}

/* A launch that does not run: its error record (kcast run counts and
   names it), and e returned. */
static cudaError_t not_run(int64_t lseq, const char *kernel, cudaError_t e, const char *why) {
  if (S.out_fd >= 0) record(rt_records_error_line(lseq, kernel, why));
  return e;
}

/* The next launch's lseq: the run's shared counter when kcast run gave a
   status page, else this process's own. */
static int64_t next_lseq(void) {
  if (S.status) return __atomic_fetch_add(&S.status->next_lseq, 1, __ATOMIC_RELAXED);
  return S.lseq++;
}

/* A launch the runtime refuses before it runs (as the real one does): named
   on stderr, an error record (kcast run counts it as a launch not
   recorded), the error returned (not sticky). */
static cudaError_t refuse(int64_t lseq, const rt_func *f, cudaError_t e, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static cudaError_t refuse(int64_t lseq, const rt_func *f, cudaError_t e, const char *fmt, ...) {
  char why[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  fprintf(stderr, "kcast-cudart: launch %" PRId64 " (%s) refused: %s (%s)\n", lseq, f->name, why,
          cudaGetErrorName(e));
  char line[512];
  snprintf(line, sizeof line, "refused: %s (%s)", why, cudaGetErrorName(e));
  return not_run(lseq, f->name, e, line);
}

/* Warnings about tolerated out-of-bounds accesses printed so far. */
#define OOB_NOTES 10
#define RACE_NOTES 10 /* race notes a run prints on stderr (all are recorded) */

/* 1 when k, or a function it calls, reads the grid workspace that a
   cooperative launch provides (%envreg1/%envreg2: cooperative groups'
   grid_group, whose sync() waits for every CTA of the grid).  seen: one
   flag per function of the module, zeroed. */
static int reads_grid_workspace(const ptx_module *m, const ptx_func *k, uint8_t *seen) {
  size_t fi = (size_t)(k - m->funcs);
  if (fi < m->nfuncs) {
    if (seen[fi]) return 0;
    seen[fi] = 1;
  }
  for (uint32_t i = 0; i < k->ninsns; i++) {
    const ptx_insn *in = &k->insns[i];
    for (unsigned j = 0; j < in->nopnd; j++) {
      const ptx_operand *o = ptx_insn_opnd(k, in, j);
      if (!o) continue;
      if (o->kind == PTX_OPND_SREG &&
          (o->u.sreg == PTX_SR_ENVREG0 + 1 || o->u.sreg == PTX_SR_ENVREG0 + 2))
        return 1;
      if (o->kind == PTX_OPND_FUNC && o->u.func < m->nfuncs && m->funcs[o->u.func].has_body &&
          reads_grid_workspace(m, &m->funcs[o->u.func], seen))
        return 1;
    }
  }
  return 0;
}

/* How a launch was asked for beyond grid, block and shared memory. */
typedef struct launch_opts {
  int cooperative;       /* cudaLaunchCooperativeKernel, cudaLaunchAttributeCooperative */
  unsigned cluster[3];   /* cudaLaunchAttributeClusterDimension; 0 = none */
} launch_opts;

/* Run one launch: takes the next lseq whatever happens.  Lock held. */
static cudaError_t launch(rt_func *f, dim3 g, dim3 b, void **args, size_t shmem,
                          const launch_opts *o) {
  int64_t lseq = next_lseq();
  if (!f) return not_run(lseq, "?", cudaErrorInvalidDeviceFunction,
                         "not a registered kernel (cudaErrorInvalidDeviceFunction)");
  if (S.sticky) {
    char why[256];
    snprintf(why, sizeof why, "not run: an earlier launch's fault lost the context (%s)",
             cudaGetErrorName(S.sticky));
    return not_run(lseq, f->name, S.sticky, why);
  }
  const ptx_func *k = rt_func_ptx(f);
  if (!k) {
    char why[ERRCAP + 64];
    snprintf(why, sizeof why, "the kernel could not be loaded: %s",
             f->mod && f->mod->error ? f->mod->error
             : f->mod && f->mod->pm  ? "it is not in the program's PTX"
                                     : "module not loaded");
    return not_run(lseq, f->name, cudaErrorNoKernelImageForDevice, why);
  }
  const char *unsup = emu_kernel_unsupported(f->mod->em, f->name);
  if (unsup)
    return refuse(lseq, f, cudaErrorNotSupported, "unsupported: the kernel cannot run: %s", unsup);
  uint64_t threads = (uint64_t)b.x * b.y * b.z;
  if (!g.x || !g.y || !g.z || !b.x || !b.y || !b.z)
    return refuse(lseq, f, cudaErrorInvalidConfiguration, "a zero grid or block dimension");
  if (g.x > EMU_MAX_GRID_X || g.y > EMU_MAX_GRID_YZ || g.z > EMU_MAX_GRID_YZ)
    return refuse(lseq, f, cudaErrorInvalidConfiguration, "grid (%u,%u,%u) exceeds (%u,%u,%u)",
                  g.x, g.y, g.z, EMU_MAX_GRID_X, EMU_MAX_GRID_YZ, EMU_MAX_GRID_YZ);
  if (b.x > 1024 || b.y > 1024 || b.z > 64 || threads > 1024)
    return refuse(lseq, f, cudaErrorInvalidConfiguration,
                  "block (%u,%u,%u) exceeds 1024 threads or (1024,1024,64)", b.x, b.y, b.z);
  /* thread block clusters: a kernel's __cluster_dims__ or the launch's */
  unsigned cl[3];
  for (int i = 0; i < 3; i++)
    cl[i] = o && o->cluster[i] ? o->cluster[i] : f->cluster[i] ? f->cluster[i]
                                                                : k->reqnctapercluster[i];
  unsigned cx = cl[0], cy = cl[1], cz = cl[2];
  if ((cx ? cx : 1) * (cy ? cy : 1) * (cz ? cz : 1) > 1)
    return refuse(lseq, f, cudaErrorNotSupported,
                  "unsupported: thread block clusters of (%u,%u,%u) CTAs (the emulator runs "
                  "every CTA as a cluster of one)", cx ? cx : 1, cy ? cy : 1, cz ? cz : 1);
  if (o && o->cooperative) {
    uint8_t *seen = calloc(f->mod->pm->nfuncs + 1, 1);
    int sync = seen && reads_grid_workspace(f->mod->pm, k, seen);
    free(seen);
    if (sync)
      return refuse(lseq, f, cudaErrorNotSupported,
                    "unsupported: a cooperative launch of a kernel that synchronises the grid "
                    "(cooperative groups' grid_group: this_grid().sync()); the emulator does not "
                    "run all CTAs of a grid at once");
    int per_sm = rt_occupancy(k, (int)threads, shmem);
    uint64_t ctas = (uint64_t)g.x * g.y * g.z;
    if ((uint64_t)per_sm * RT_SMS < ctas)
      return refuse(lseq, f, cudaErrorCooperativeLaunchTooLarge,
                    "a cooperative launch of %" PRIu64 " CTAs, more than can be resident at "
                    "once (%d per SM, %d SMs)", ctas, per_sm, RT_SMS);
  }
  if (shmem > rt_max_dynamic_shared(f, k))
    return refuse(lseq, f, cudaErrorInvalidValue,
                  "%zu bytes of dynamic shared memory, the kernel may use %zu (more needs "
                  "cudaFuncSetAttribute(cudaFuncAttributeMaxDynamicSharedMemorySize), at most "
                  "%u in all)", shmem, rt_max_dynamic_shared(f, k), RT_SHARED_OPTIN);
  size_t *off = calloc(k->nparams + 1, sizeof *off), total = 0;
  if (!off) return not_run(lseq, f->name, cudaErrorMemoryAllocation, "out of memory");
  ptx_param_layout(k, off, NULL, &total);
  uint8_t *buf = calloc(total + 1, 1);
  if (!buf) {
    free(off);
    return not_run(lseq, f->name, cudaErrorMemoryAllocation, "out of memory");
  }
  if (k->nparams && !args) {
    free(off);
    free(buf);
    return not_run(lseq, f->name, cudaErrorInvalidValue, "no arguments for its parameters");
  }
  for (uint32_t i = 0; i < k->nparams; i++)
    if (args[i]) memcpy(buf + off[i], args[i], k->params[i].size);
  free(off);
  emu_launch_cfg cfg;
  emu_launch_cfg_init(&cfg);
  cfg.grid[0] = g.x, cfg.grid[1] = g.y, cfg.grid[2] = g.z;
  cfg.block[0] = b.x, cfg.block[1] = b.y, cfg.block[2] = b.z;
  cfg.shared_bytes = shmem;
  cfg.params = buf;
  cfg.params_size = total;
  cfg.sample_ctas = S.sample;
  cfg.threads = S.threads;
  cfg.oob = S.oob;
  cfg.racecheck = S.racecheck;
  if (S.status) {
    status_begin(lseq, f->name);
    cfg.progress = &S.status->insns_now;
    cfg.stop = &S.status->stop; /* kcast run's --timeout */
    cfg.partial = 1;
  }
  fflush(stdout); /* device printf after what the host printed before */
  rt_launch_rec r;
  memset(&r, 0, sizeof r);
  feat_init(&r.feats);
  emu_stats st;
  memset(&st, 0, sizeof st);
  char err[ERRCAP];
  int rc = emu_launch(f->mod->em, f->name, &cfg, &r.feats, &st, err, sizeof err);
  free(buf);
  cudaError_t e = cudaSuccess;
  if (rc < 0) {
    e = fault_error(st.fault);
    fprintf(stderr, "kcast-cudart: launch %" PRId64 " (%s) failed: %s (%s)\n", lseq, f->name,
            err, cudaGetErrorName(e));
    if (S.out_fd >= 0) record(rt_records_error_line(lseq, f->name, err));
    if (e != cudaErrorInvalidConfiguration && e != cudaErrorNotSupported) S.sticky = e;
  } else {
    S.clock += st.seconds;
    if (st.oob_accesses && S.oob_notes++ < OOB_NOTES)
      fprintf(stderr, "kcast-cudart: launch %" PRId64 " (%s): %" PRIu64 " out-of-bounds "
              "access%s tolerated (as on a GPU); the first: %s%s\n",
              lseq, f->name, st.oob_accesses, st.oob_accesses == 1 ? "" : "es", st.oob_first,
              S.oob_notes == OOB_NOTES ? " (further such notes are not printed)" : "");
    /* a race is not a failure: the program ran and gets cudaSuccess */
    if (st.races && S.race_notes++ < RACE_NOTES)
      fprintf(stderr, "kcast-cudart: launch %" PRId64 " (%s): data race (--racecheck): %" PRIu64
              " racing word%s; the first: %s%s\n", lseq, f->name, st.races,
              st.races == 1 ? "" : "s", st.race_first,
              S.race_notes == RACE_NOTES ? " (further race notes are not printed)" : "");
    if (st.race_note[0] && S.race_notes++ < RACE_NOTES)
      fprintf(stderr, "kcast-cudart: launch %" PRId64 " (%s): race check: %s%s\n", lseq, f->name,
              st.race_note, S.race_notes == RACE_NOTES ? " (further race notes are not printed)" : "");
    if (S.out_fd >= 0) {
      r.lseq = lseq;
      r.grid[0] = g.x, r.grid[1] = g.y, r.grid[2] = g.z;
      r.block[0] = b.x, r.block[1] = b.y, r.block[2] = b.z;
      r.shmem = (int64_t)shmem;
      r.sampled = st.sampled;
      r.insns = st.thread_insns;
      r.seconds = st.seconds;
      r.kernel = f->name;
      record(rt_records_launch_line(&r));
      if (st.oob_accesses) record(rt_records_warn_line(lseq, st.oob_first));
      if (st.races) record(rt_records_race_line(lseq, st.race_first));
    }
    if (st.partial) { /* stopped (--timeout): recorded from what finished, an error to the program */
      e = fault_error(st.fault);
      fprintf(stderr, "kcast-cudart: launch %" PRId64 " (%s) stopped: %s; recorded from the %" PRIu64
              " of %" PRIu64 " CTAs that finished (emu.partial) (%s)\n", lseq, f->name, err,
              st.ctas_run, st.ctas_total, cudaGetErrorName(e));
      S.sticky = e;
    }
  }
  if (S.status) status_end(rc < 0, st.thread_insns);
  feat_free(&r.feats);
  return e;
}

cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
                               size_t sharedMem, cudaStream_t stream) {
  rt_lock();
  cudaError_t e = launch(rt_find_func(kernel), gridDim, blockDim, args, sharedMem, NULL);
  rt_unlock();
  return rt_err(e);
}

cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,
                                    void **args, size_t sharedMem, cudaStream_t stream) {
  return __cudaLaunchKernel(kernel, gridDim, blockDim, args, sharedMem, stream);
}

cudaError_t CUDARTAPI cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim,
                                       void **args, size_t sharedMem, cudaStream_t stream) {
  return __cudaLaunchKernel((cudaKernel_t)(uintptr_t)func, gridDim, blockDim, args, sharedMem,
                            stream);
}

cudaError_t CUDARTAPI cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim,
                                            void **args, size_t sharedMem,
                                            cudaStream_t stream) {
  return cudaLaunchKernel(func, gridDim, blockDim, args, sharedMem, stream);
}

/* A cooperative launch runs like any other unless the kernel synchronises
   the grid, which the emulator cannot do (refused, naming it); the device
   says so too (cudaDevAttrCooperativeLaunch 0). */
cudaError_t CUDARTAPI cudaLaunchCooperativeKernel(const void *func, dim3 gridDim,
                                                  dim3 blockDim, void **args,
                                                  size_t sharedMem, cudaStream_t stream) {
  launch_opts o = {.cooperative = 1};
  rt_lock();
  cudaError_t e = launch(rt_find_func(func), gridDim, blockDim, args, sharedMem, &o);
  rt_unlock();
  return rt_err(e);
}

/*
 * cudaLaunchKernelEx (cuda_runtime.h) and cudaLaunchKernelExC: a launch
 * with attributes.  Scheduling and cache hints (access policy window,
 * priority, memory sync domains, carveout, programmatic serialization --
 * every launch completes before the next starts anyway) are accepted;
 * programmatic and launch-completion events are recorded at the launch;
 * cooperative launches as cudaLaunchCooperativeKernel; clusters of more
 * than one CTA are refused (unsupported).
 */
cudaError_t CUDARTAPI cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *func,
                                          void **args) {
  if (!config || (config->numAttrs && !config->attrs)) return rt_err(cudaErrorInvalidValue);
  launch_opts o = {0};
  for (unsigned i = 0; i < config->numAttrs; i++) {
    const cudaLaunchAttribute *a = &config->attrs[i];
    switch (a->id) {
    case cudaLaunchAttributeCooperative: o.cooperative = a->val.cooperative != 0; break;
    case cudaLaunchAttributeClusterDimension:
      o.cluster[0] = a->val.clusterDim.x, o.cluster[1] = a->val.clusterDim.y;
      o.cluster[2] = a->val.clusterDim.z;
      break;
    case cudaLaunchAttributeProgrammaticEvent:
      if (cudaEventRecord(a->val.programmaticEvent.event, config->stream))
        return cudaErrorInvalidResourceHandle;
      break;
    case cudaLaunchAttributeLaunchCompletionEvent:
      if (cudaEventRecord(a->val.launchCompletionEvent.event, config->stream))
        return cudaErrorInvalidResourceHandle;
      break;
    case cudaLaunchAttributeDeviceUpdatableKernelNode:
      return rt_err(cudaErrorInvalidValue); /* graphs only */
    case cudaLaunchAttributeIgnore: case cudaLaunchAttributeAccessPolicyWindow:
    case cudaLaunchAttributeSynchronizationPolicy:
    case cudaLaunchAttributeClusterSchedulingPolicyPreference:
    case cudaLaunchAttributeProgrammaticStreamSerialization: case cudaLaunchAttributePriority:
    case cudaLaunchAttributeMemSyncDomainMap: case cudaLaunchAttributeMemSyncDomain:
    case cudaLaunchAttributePreferredClusterDimension:
    case cudaLaunchAttributePreferredSharedMemoryCarveout:
    case cudaLaunchAttributeNvlinkUtilCentricScheduling:
      break;
    default: return rt_err(cudaErrorInvalidValue);
    }
  }
  rt_lock();
  cudaError_t e = launch(rt_find_func(func), config->gridDim, config->blockDim, args,
                         config->dynamicSmemBytes, &o);
  rt_unlock();
  return rt_err(e);
}

cudaError_t rt_sticky_locked(void) { return S.sticky; }

cudaError_t rt_sticky(void) {
  rt_lock();
  cudaError_t e = S.sticky;
  rt_unlock();
  return e;
}

void rt_reset(void) {
  rt_lock();
  S.sticky = cudaSuccess;
  rt_unlock();
}
