/*
 * rt_cudart.h -- internals shared by the files of the cudart replacement
 * (runtime/cudart/, built as $(BUILD)/cudart/libcudart.so.13).
 *
 * The library is compiled against the toolkit's real cuda_runtime_api.h, so
 * every definition is checked against CUDA 13's own prototype.  The
 * registration entry points nvcc's host stubs call (crt/host_runtime.h,
 * crt/device_functions.h; C++ only there) are declared here with the same
 * C types.  Nothing but the CUDA API is exported (libcudart.map).
 *
 * Locking: one process-wide mutex guards all state (rt_lock/rt_unlock);
 * the emulator runs one launch at a time, so launches serialise anyway.
 */
#ifndef KCAST_RT_CUDART_H
#define KCAST_RT_CUDART_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#include "emulator/emu.h"
#include "extractor/ptx.h"

/* Registration and launch entry points of nvcc-generated host code. */
void **__cudaRegisterFatBinary(void *fatCubin);
void __cudaRegisterFatBinaryEnd(void **handle);
void __cudaUnregisterFatBinary(void **handle);
void __cudaRegisterVar(void **handle, char *hostVar, char *deviceAddress,
                       const char *deviceName, int ext, size_t size, int constant,
                       int global);
void __cudaRegisterManagedVar(void **handle, void **hostVarPtrAddress, char *deviceAddress,
                              const char *deviceName, int ext, size_t size, int constant,
                              int global);
char __cudaInitModule(void **handle);
void __cudaRegisterFunction(void **handle, const char *hostFun, char *deviceFun,
                            const char *deviceName, int thread_limit, uint3 *tid, uint3 *bid,
                            dim3 *bDim, dim3 *gDim, int *wSize);
unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
                                     struct CUstream_st *stream);
cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem,
                                       void *stream);
cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *hostFun);
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
                               size_t sharedMem, cudaStream_t stream);
cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,
                                    void **args, size_t sharedMem, cudaStream_t stream);

/* A registered fatbinary: one PTX module on the emulated device. */
typedef struct rt_mod {
  const void *wrapper;   /* first: the handle nvcc keeps points here */
  char *ptx;             /* owned PTX text */
  ptx_module *pm;        /* owned; NULL when loading failed */
  emu_module *em;        /* on the device; NULL when loading failed */
  char *error;           /* owned; why the module cannot run */
  int reported;          /* error printed on stderr already */
} rt_mod;

/* A registered kernel (the host stub's address -> mangled name). */
typedef struct rt_func {
  const void *host;      /* host stub address (what <<<>>> and cudaLaunchKernel pass) */
  char *name;            /* owned mangled name */
  rt_mod *mod;
  int max_dyn_shared;    /* cudaFuncAttributeMaxDynamicSharedMemorySize; -1: unset */
  unsigned cluster[3];   /* cudaFuncAttributeRequiredCluster{Width,Height,Depth}; 0: unset */
} rt_func;

void rt_lock(void);
void rt_unlock(void);
/* Record e as the last error (unless cudaSuccess); returns e. */
cudaError_t rt_err(cudaError_t e);
/* The emulated device (created on first use); NULL only when out of memory. */
emu_device *rt_device(void);
/* The kernel registered for a host stub or cudaKernel_t; NULL when none. */
rt_func *rt_find_func(const void *p);
/* Loaded PTX function of f, or NULL after reporting why (once). */
const ptx_func *rt_func_ptx(rt_func *f);
/* Seconds of emulated kernel time so far (what events measure). */
double rt_clock(void);
/* An entry point (or a use of one) the replacement does not implement,
   `what` saying what it belongs to ("CUDA graphs"): the first time (once[0]
   is its flag) named on stderr as "unsupported: NAME" and in an
   `unsupported` record, so that kcast run fails the run (runtime/rt.h);
   returns cudaErrorNotSupported, also as the last error.  Lock not held. */
cudaError_t rt_unsupported(const char *name, const char *what, int *once);

/* Copy n bytes between host and emulated device memory, the direction from
   the pointers (unified addressing; kind is only checked).  Lock held. */
cudaError_t rt_copy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind);

/* The sticky device fault (cudaSuccess when none), for synchronising calls. */
cudaError_t rt_sticky(void);
/* The same with the lock held. */
cudaError_t rt_sticky_locked(void);
/* cudaDeviceReset: clears the fault (allocations and modules stay). */
void rt_reset(void);
cudaError_t CUDARTAPI cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim,
                                            void **args, size_t sharedMem,
                                            cudaStream_t stream);

/* Device properties of the emulated GPU (rt_api.c). */
void rt_fill_props(struct cudaDeviceProp *p);
/* Multiprocessors and shared memory per multiprocessor of the emulated device. */
#define RT_SMS 132
#define RT_SHARED_PER_SM (228u * 1024u)
/* Blocks of `block` threads with dyn bytes of dynamic shared memory that
   can be resident on one SM at once (cudaOccupancy*); 0 when none. */
int rt_occupancy(const ptx_func *k, int block, size_t dyn);
/* Opt-in shared memory per block (cudaDevAttrMaxSharedMemoryPerBlockOptin). */
#define RT_SHARED_OPTIN (227u * 1024u)
/* Static shared bytes of kernel k (its .shared variables, not extern). */
size_t rt_static_shared(const ptx_func *k);
/* Dynamic shared bytes a launch of f may ask for: 48 KiB less the static
   ones, or what cudaFuncSetAttribute set. */
size_t rt_max_dynamic_shared(const rt_func *f, const ptx_func *k);

#endif
