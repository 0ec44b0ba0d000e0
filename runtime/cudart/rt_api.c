/*
 * rt_api.c -- the cudart replacement's device, stream, event, error,
 * function-attribute and occupancy entry points, and the list of entry
 * points it does not implement.
 *
 * The emulated device: one device, "kcast emulated GPU", with sm_90-like
 * properties (compute capability 9.0, 132 SMs, 2048 threads and 32 blocks
 * per SM, 228 KiB shared memory per SM, 64 K registers, 50 MiB L2, 80 GiB),
 * filled into CUDA 13's own struct cudaDeviceProp.  Its numbers describe no
 * real board's speed; kcast's features do not depend on them.
 *
 * Streams and events: every operation completes before its call returns
 * (launches and copies are synchronous), so streams are in order and
 * always idle.  An event records the emulated clock: the sum of the
 * emulation wall time of the launches so far.  cudaEventElapsedTime
 * therefore returns emulated time -- CPU seconds spent emulating kernels
 * between the two events -- not GPU time.
 *
 * Unsupported entry points: RT_UNSUPPORTED_LIST names each with its real
 * prototype's parameters; each returns cudaErrorNotSupported and names
 * itself on stderr the first time.  Adding one is one line.
 */
#include "runtime/cudart/rt_cudart.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RT_DEVICE_NAME "kcast emulated GPU"
#define RT_SMS 132
#define RT_SHARED_PER_SM (228u * 1024u)

/* ----------------------------------------------------------- errors -- */

/* Every cudaError_t of CUDA 13's driver_types.h (ORDER: any). */
#define RT_ERRORS(X) \
  X(cudaSuccess) \
  X(cudaErrorInvalidValue) \
  X(cudaErrorMemoryAllocation) \
  X(cudaErrorInitializationError) \
  X(cudaErrorCudartUnloading) \
  X(cudaErrorProfilerDisabled) \
  X(cudaErrorProfilerNotInitialized) \
  X(cudaErrorProfilerAlreadyStarted) \
  X(cudaErrorProfilerAlreadyStopped) \
  X(cudaErrorInvalidConfiguration) \
  X(cudaErrorInvalidPitchValue) \
  X(cudaErrorInvalidSymbol) \
  X(cudaErrorInvalidHostPointer) \
  X(cudaErrorInvalidDevicePointer) \
  X(cudaErrorInvalidTexture) \
  X(cudaErrorInvalidTextureBinding) \
  X(cudaErrorInvalidChannelDescriptor) \
  X(cudaErrorInvalidMemcpyDirection) \
  X(cudaErrorAddressOfConstant) \
  X(cudaErrorTextureFetchFailed) \
  X(cudaErrorTextureNotBound) \
  X(cudaErrorSynchronizationError) \
  X(cudaErrorInvalidFilterSetting) \
  X(cudaErrorInvalidNormSetting) \
  X(cudaErrorMixedDeviceExecution) \
  X(cudaErrorNotYetImplemented) \
  X(cudaErrorMemoryValueTooLarge) \
  X(cudaErrorStubLibrary) \
  X(cudaErrorInsufficientDriver) \
  X(cudaErrorCallRequiresNewerDriver) \
  X(cudaErrorInvalidSurface) \
  X(cudaErrorDuplicateVariableName) \
  X(cudaErrorDuplicateTextureName) \
  X(cudaErrorDuplicateSurfaceName) \
  X(cudaErrorDevicesUnavailable) \
  X(cudaErrorIncompatibleDriverContext) \
  X(cudaErrorMissingConfiguration) \
  X(cudaErrorPriorLaunchFailure) \
  X(cudaErrorLaunchMaxDepthExceeded) \
  X(cudaErrorLaunchFileScopedTex) \
  X(cudaErrorLaunchFileScopedSurf) \
  X(cudaErrorSyncDepthExceeded) \
  X(cudaErrorLaunchPendingCountExceeded) \
  X(cudaErrorInvalidDeviceFunction) \
  X(cudaErrorNoDevice) \
  X(cudaErrorInvalidDevice) \
  X(cudaErrorDeviceNotLicensed) \
  X(cudaErrorSoftwareValidityNotEstablished) \
  X(cudaErrorStartupFailure) \
  X(cudaErrorInvalidKernelImage) \
  X(cudaErrorDeviceUninitialized) \
  X(cudaErrorMapBufferObjectFailed) \
  X(cudaErrorUnmapBufferObjectFailed) \
  X(cudaErrorArrayIsMapped) \
  X(cudaErrorAlreadyMapped) \
  X(cudaErrorNoKernelImageForDevice) \
  X(cudaErrorAlreadyAcquired) \
  X(cudaErrorNotMapped) \
  X(cudaErrorNotMappedAsArray) \
  X(cudaErrorNotMappedAsPointer) \
  X(cudaErrorECCUncorrectable) \
  X(cudaErrorUnsupportedLimit) \
  X(cudaErrorDeviceAlreadyInUse) \
  X(cudaErrorPeerAccessUnsupported) \
  X(cudaErrorInvalidPtx) \
  X(cudaErrorInvalidGraphicsContext) \
  X(cudaErrorNvlinkUncorrectable) \
  X(cudaErrorJitCompilerNotFound) \
  X(cudaErrorUnsupportedPtxVersion) \
  X(cudaErrorJitCompilationDisabled) \
  X(cudaErrorUnsupportedExecAffinity) \
  X(cudaErrorUnsupportedDevSideSync) \
  X(cudaErrorContained) \
  X(cudaErrorInvalidSource) \
  X(cudaErrorFileNotFound) \
  X(cudaErrorSharedObjectSymbolNotFound) \
  X(cudaErrorSharedObjectInitFailed) \
  X(cudaErrorOperatingSystem) \
  X(cudaErrorInvalidResourceHandle) \
  X(cudaErrorIllegalState) \
  X(cudaErrorLossyQuery) \
  X(cudaErrorSymbolNotFound) \
  X(cudaErrorNotReady) \
  X(cudaErrorIllegalAddress) \
  X(cudaErrorLaunchOutOfResources) \
  X(cudaErrorLaunchTimeout) \
  X(cudaErrorLaunchIncompatibleTexturing) \
  X(cudaErrorPeerAccessAlreadyEnabled) \
  X(cudaErrorPeerAccessNotEnabled) \
  X(cudaErrorSetOnActiveProcess) \
  X(cudaErrorContextIsDestroyed) \
  X(cudaErrorAssert) \
  X(cudaErrorTooManyPeers) \
  X(cudaErrorHostMemoryAlreadyRegistered) \
  X(cudaErrorHostMemoryNotRegistered) \
  X(cudaErrorHardwareStackError) \
  X(cudaErrorIllegalInstruction) \
  X(cudaErrorMisalignedAddress) \
  X(cudaErrorInvalidAddressSpace) \
  X(cudaErrorInvalidPc) \
  X(cudaErrorLaunchFailure) \
  X(cudaErrorCooperativeLaunchTooLarge) \
  X(cudaErrorTensorMemoryLeak) \
  X(cudaErrorNotPermitted) \
  X(cudaErrorNotSupported) \
  X(cudaErrorSystemNotReady) \
  X(cudaErrorSystemDriverMismatch) \
  X(cudaErrorCompatNotSupportedOnDevice) \
  X(cudaErrorMpsConnectionFailed) \
  X(cudaErrorMpsRpcFailure) \
  X(cudaErrorMpsServerNotReady) \
  X(cudaErrorMpsMaxClientsReached) \
  X(cudaErrorMpsMaxConnectionsReached) \
  X(cudaErrorMpsClientTerminated) \
  X(cudaErrorCdpNotSupported) \
  X(cudaErrorCdpVersionMismatch) \
  X(cudaErrorStreamCaptureUnsupported) \
  X(cudaErrorStreamCaptureInvalidated) \
  X(cudaErrorStreamCaptureMerge) \
  X(cudaErrorStreamCaptureUnmatched) \
  X(cudaErrorStreamCaptureUnjoined) \
  X(cudaErrorStreamCaptureIsolation) \
  X(cudaErrorStreamCaptureImplicit) \
  X(cudaErrorCapturedEvent) \
  X(cudaErrorStreamCaptureWrongThread) \
  X(cudaErrorTimeout) \
  X(cudaErrorGraphExecUpdateFailure) \
  X(cudaErrorExternalDevice) \
  X(cudaErrorInvalidClusterSize) \
  X(cudaErrorFunctionNotLoaded) \
  X(cudaErrorInvalidResourceType) \
  X(cudaErrorInvalidResourceConfiguration) \
  X(cudaErrorUnknown) \
  X(cudaErrorApiFailureBase) \

static const struct { cudaError_t code; const char *name; } error_names[] = {
#define RT_ERR_ENTRY(e) {e, #e},
    RT_ERRORS(RT_ERR_ENTRY)
#undef RT_ERR_ENTRY
};

const char *CUDARTAPI cudaGetErrorName(cudaError_t error) {
  for (size_t i = 0; i < sizeof error_names / sizeof error_names[0]; i++)
    if (error_names[i].code == error) return error_names[i].name;
  return "cudaErrorUnknown";
}

const char *CUDARTAPI cudaGetErrorString(cudaError_t error) {
  switch (error) {
  case cudaSuccess: return "no error";
  case cudaErrorInvalidValue: return "invalid argument";
  case cudaErrorMemoryAllocation: return "out of memory";
  case cudaErrorInvalidConfiguration: return "invalid configuration argument";
  case cudaErrorInvalidDevice: return "invalid device ordinal";
  case cudaErrorInvalidSymbol: return "invalid device symbol";
  case cudaErrorInvalidDeviceFunction: return "invalid device function";
  case cudaErrorInvalidMemcpyDirection: return "invalid copy direction for memcpy";
  case cudaErrorInvalidPitchValue: return "invalid pitch argument";
  case cudaErrorLaunchFailure: return "unspecified launch failure (emulated launch failed)";
  case cudaErrorNoKernelImageForDevice:
    return "no kernel image is available for execution on the device (no PTX the emulator can run)";
  case cudaErrorNotSupported: return "operation not supported (by the kcast CPU emulation)";
  case cudaErrorInvalidResourceHandle: return "invalid resource handle";
  default: break;
  }
  const char *n = cudaGetErrorName(error);
  return strcmp(n, "cudaErrorUnknown") ? n + 9 : "unrecognized error code";
}

/* ----------------------------------------------------------- device -- */

void rt_fill_props(struct cudaDeviceProp *p) {
  memset(p, 0, sizeof *p);
  snprintf(p->name, sizeof p->name, "%s", RT_DEVICE_NAME);
  memcpy(p->uuid.bytes, "kcast-emulated-0", 16);
  p->totalGlobalMem = (size_t)80 << 30;
  p->sharedMemPerBlock = 48 * 1024;
  p->regsPerBlock = 65536;
  p->warpSize = 32;
  p->memPitch = (size_t)1 << 31;
  p->maxThreadsPerBlock = 1024;
  p->maxThreadsDim[0] = 1024, p->maxThreadsDim[1] = 1024, p->maxThreadsDim[2] = 64;
  p->maxGridSize[0] = 2147483647, p->maxGridSize[1] = 65535, p->maxGridSize[2] = 65535;
  p->totalConstMem = 65536;
  p->major = 9;
  p->minor = 0;
  p->textureAlignment = 512;
  p->texturePitchAlignment = 32;
  p->multiProcessorCount = RT_SMS;
  p->surfaceAlignment = 512;
  p->concurrentKernels = 1;
  p->managedMemory = 1;
  p->asyncEngineCount = 1;
  p->unifiedAddressing = 1;
  p->memoryBusWidth = 5120;
  p->l2CacheSize = 50 * 1024 * 1024;
  p->maxThreadsPerMultiProcessor = 2048;
  p->streamPrioritiesSupported = 1;
  p->globalL1CacheSupported = 1;
  p->localL1CacheSupported = 1;
  p->sharedMemPerMultiprocessor = RT_SHARED_PER_SM;
  p->regsPerMultiprocessor = 65536;
  p->cooperativeLaunch = 0;
  p->sharedMemPerBlockOptin = RT_SHARED_OPTIN;
  p->maxBlocksPerMultiProcessor = 32;
  p->reservedSharedMemPerBlock = 1024;
  p->hostRegisterSupported = 1;
}

cudaError_t CUDARTAPI cudaGetDeviceCount(int *count) {
  if (!count) return rt_err(cudaErrorInvalidValue);
  *count = 1;
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaGetDevice(int *device) {
  if (!device) return rt_err(cudaErrorInvalidValue);
  *device = 0;
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaSetDevice(int device) {
  return device == 0 ? cudaSuccess : rt_err(cudaErrorInvalidDevice);
}

cudaError_t CUDARTAPI cudaInitDevice(int device, unsigned int deviceFlags, unsigned int flags) {
  return cudaSetDevice(device);
}

cudaError_t CUDARTAPI cudaSetDeviceFlags(unsigned int flags) { return cudaSuccess; }

cudaError_t CUDARTAPI cudaGetDeviceFlags(unsigned int *flags) {
  if (flags) *flags = 0;
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaChooseDevice(int *device, const struct cudaDeviceProp *prop) {
  return cudaGetDevice(device);
}

cudaError_t CUDARTAPI cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device) {
  if (!prop) return rt_err(cudaErrorInvalidValue);
  if (device != 0) return rt_err(cudaErrorInvalidDevice);
  rt_fill_props(prop);
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device) {
  if (!value) return rt_err(cudaErrorInvalidValue);
  if (device != 0) return rt_err(cudaErrorInvalidDevice);
  struct cudaDeviceProp p;
  rt_fill_props(&p);
  int v;
  switch (attr) {
  case cudaDevAttrMaxThreadsPerBlock: v = p.maxThreadsPerBlock; break;
  case cudaDevAttrMaxBlockDimX: v = p.maxThreadsDim[0]; break;
  case cudaDevAttrMaxBlockDimY: v = p.maxThreadsDim[1]; break;
  case cudaDevAttrMaxBlockDimZ: v = p.maxThreadsDim[2]; break;
  case cudaDevAttrMaxGridDimX: v = p.maxGridSize[0]; break;
  case cudaDevAttrMaxGridDimY: v = p.maxGridSize[1]; break;
  case cudaDevAttrMaxGridDimZ: v = p.maxGridSize[2]; break;
  case cudaDevAttrMaxSharedMemoryPerBlock: v = (int)p.sharedMemPerBlock; break;
  case cudaDevAttrTotalConstantMemory: v = (int)p.totalConstMem; break;
  case cudaDevAttrWarpSize: v = p.warpSize; break;
  case cudaDevAttrMaxPitch: v = (int)(p.memPitch - 1); break;
  case cudaDevAttrMaxRegistersPerBlock: v = p.regsPerBlock; break;
  case cudaDevAttrClockRate: v = 1980000; break;
  case cudaDevAttrMemoryClockRate: v = 2619000; break;
  case cudaDevAttrTextureAlignment: v = (int)p.textureAlignment; break;
  case cudaDevAttrMultiProcessorCount: v = p.multiProcessorCount; break;
  case cudaDevAttrComputeCapabilityMajor: v = p.major; break;
  case cudaDevAttrComputeCapabilityMinor: v = p.minor; break;
  case cudaDevAttrGlobalMemoryBusWidth: v = p.memoryBusWidth; break;
  case cudaDevAttrL2CacheSize: v = p.l2CacheSize; break;
  case cudaDevAttrMaxThreadsPerMultiProcessor: v = p.maxThreadsPerMultiProcessor; break;
  case cudaDevAttrMaxSharedMemoryPerMultiprocessor: v = (int)p.sharedMemPerMultiprocessor; break;
  case cudaDevAttrMaxRegistersPerMultiprocessor: v = p.regsPerMultiprocessor; break;
  case cudaDevAttrMaxSharedMemoryPerBlockOptin: v = (int)p.sharedMemPerBlockOptin; break;
  case cudaDevAttrMaxBlocksPerMultiprocessor: v = p.maxBlocksPerMultiProcessor; break;
  case cudaDevAttrConcurrentKernels: v = p.concurrentKernels; break;
  case cudaDevAttrAsyncEngineCount: v = p.asyncEngineCount; break;
  case cudaDevAttrStreamPrioritiesSupported: v = 1; break;
  case cudaDevAttrGlobalL1CacheSupported: case cudaDevAttrLocalL1CacheSupported: v = 1; break;
  case cudaDevAttrReservedSharedMemoryPerBlock: v = (int)p.reservedSharedMemPerBlock; break;
  case cudaDevAttrManagedMemory: v = 1; break;
  case cudaDevAttrUnifiedAddressing: case cudaDevAttrCanMapHostMemory: v = 1; break;
  default: v = 0; break; /* capabilities the emulation lacks: peers, ... */
  }
  *value = v;
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaDeviceSynchronize(void) { return rt_err(rt_sticky()); }

cudaError_t CUDARTAPI cudaDeviceReset(void) {
  rt_reset();
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaDeviceSetLimit(enum cudaLimit limit, size_t value) { return cudaSuccess; }

cudaError_t CUDARTAPI cudaDeviceGetLimit(size_t *pValue, enum cudaLimit limit) {
  if (!pValue) return rt_err(cudaErrorInvalidValue);
  *pValue = limit == cudaLimitStackSize ? 1024 : limit == cudaLimitPrintfFifoSize ? 1 << 20 : 0;
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaDeviceSetCacheConfig(enum cudaFuncCache cacheConfig) {
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaDeviceGetCacheConfig(enum cudaFuncCache *pCacheConfig) {
  if (pCacheConfig) *pCacheConfig = cudaFuncCachePreferNone;
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaRuntimeGetVersion(int *runtimeVersion) {
  if (!runtimeVersion) return rt_err(cudaErrorInvalidValue);
  *runtimeVersion = CUDART_VERSION;
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaDriverGetVersion(int *driverVersion) {
  if (!driverVersion) return rt_err(cudaErrorInvalidValue);
  *driverVersion = CUDART_VERSION;
  return cudaSuccess;
}

/* --------------------------------------------------- streams, events -- */

/* A stream or event handle: a small owned object (never dereferenced by
   programs).  Events carry the emulated clock of their last record. */
typedef struct rt_event {
  double t;       /* rt_clock() at record */
  int recorded;
} rt_event;

static cudaError_t new_stream(cudaStream_t *s) {
  if (!s) return rt_err(cudaErrorInvalidValue);
  void *h = malloc(16);
  if (!h) return rt_err(cudaErrorMemoryAllocation);
  *s = (cudaStream_t)h;
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaStreamCreate(cudaStream_t *pStream) { return new_stream(pStream); }

cudaError_t CUDARTAPI cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags) {
  return new_stream(pStream);
}

cudaError_t CUDARTAPI cudaStreamCreateWithPriority(cudaStream_t *pStream, unsigned int flags,
                                                   int priority) {
  return new_stream(pStream);
}

cudaError_t CUDARTAPI cudaStreamDestroy(cudaStream_t stream) {
  free((void *)stream);
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaStreamSynchronize(cudaStream_t stream) { return rt_err(rt_sticky()); }

cudaError_t CUDARTAPI cudaStreamQuery(cudaStream_t stream) { return rt_err(rt_sticky()); }

cudaError_t CUDARTAPI cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event,
                                          unsigned int flags) {
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback,
                                            void *userData, unsigned int flags) {
  if (!callback) return rt_err(cudaErrorInvalidValue);
  callback(stream, rt_sticky(), userData);
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *userData) {
  if (!fn) return rt_err(cudaErrorInvalidValue);
  fn(userData);
  return cudaSuccess;
}

static cudaError_t new_event(cudaEvent_t *e) {
  if (!e) return rt_err(cudaErrorInvalidValue);
  rt_event *ev = calloc(1, sizeof *ev);
  if (!ev) return rt_err(cudaErrorMemoryAllocation);
  *e = (cudaEvent_t)(void *)ev;
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaEventCreate(cudaEvent_t *event) { return new_event(event); }

cudaError_t CUDARTAPI cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags) {
  return new_event(event);
}

cudaError_t CUDARTAPI cudaEventDestroy(cudaEvent_t event) {
  free((void *)event);
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  rt_event *ev = (rt_event *)(void *)event;
  if (!ev) return rt_err(cudaErrorInvalidResourceHandle);
  rt_lock();
  ev->t = rt_clock();
  rt_unlock();
  ev->recorded = 1;
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream,
                                               unsigned int flags) {
  return cudaEventRecord(event, stream);
}

cudaError_t CUDARTAPI cudaEventQuery(cudaEvent_t event) { return rt_err(rt_sticky()); }

cudaError_t CUDARTAPI cudaEventSynchronize(cudaEvent_t event) { return rt_err(rt_sticky()); }

cudaError_t CUDARTAPI cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end) {
  const rt_event *a = (const rt_event *)(void *)start, *b = (const rt_event *)(void *)end;
  if (!ms) return rt_err(cudaErrorInvalidValue);
  if (!a || !b) return rt_err(cudaErrorInvalidResourceHandle);
  if (!a->recorded || !b->recorded) return rt_err(cudaErrorInvalidResourceHandle);
  *ms = (float)((b->t - a->t) * 1e3);
  return cudaSuccess;
}

/* --------------------------------------------- functions, occupancy -- */

size_t rt_static_shared(const ptx_func *k) {
  size_t s = 0;
  for (uint32_t i = 0; i < k->nvars; i++)
    if (k->vars[i].space == PTX_SP_SHARED && !(k->vars[i].is_extern && !k->vars[i].count))
      s += k->vars[i].size;
  return s;
}

cudaError_t CUDARTAPI cudaFuncGetAttributes(struct cudaFuncAttributes *attr, const void *func) {
  if (!attr) return rt_err(cudaErrorInvalidValue);
  rt_lock();
  rt_func *f = rt_find_func(func);
  const ptx_func *k = f ? rt_func_ptx(f) : NULL;
  cudaError_t e = !f ? cudaErrorInvalidDeviceFunction : !k ? cudaErrorNoKernelImageForDevice
                                                           : cudaSuccess;
  if (!e) {
    memset(attr, 0, sizeof *attr);
    attr->sharedSizeBytes = rt_static_shared(k);
    unsigned limit = 1024;
    if (k->maxntid[0]) limit = k->maxntid[0] * (k->maxntid[1] ? k->maxntid[1] : 1) *
                               (k->maxntid[2] ? k->maxntid[2] : 1);
    if (k->reqntid[0]) limit = k->reqntid[0] * (k->reqntid[1] ? k->reqntid[1] : 1) *
                               (k->reqntid[2] ? k->reqntid[2] : 1);
    attr->maxThreadsPerBlock = (int)(limit > 1024 ? 1024 : limit);
    attr->numRegs = 32;
    attr->ptxVersion = (int)(f->mod->pm->version_major * 10 + f->mod->pm->version_minor);
    attr->binaryVersion = 90;
    attr->maxDynamicSharedSizeBytes = (int)rt_max_dynamic_shared(f, k);
  }
  rt_unlock();
  return rt_err(e);
}

size_t rt_max_dynamic_shared(const rt_func *f, const ptx_func *k) {
  if (f->max_dyn_shared >= 0) return (size_t)f->max_dyn_shared;
  size_t st = rt_static_shared(k), dflt = 48u * 1024u; /* sharedMemPerBlock */
  return st < dflt ? dflt - st : 0;
}

/* cudaFuncAttributeMaxDynamicSharedMemorySize raises the dynamic shared
   memory a kernel may launch with up to the opt-in limit (as on a GPU:
   more is cudaErrorInvalidValue); other attributes are accepted. */
cudaError_t CUDARTAPI cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr,
                                           int value) {
  rt_lock();
  rt_func *f = rt_find_func(func);
  const ptx_func *k = f ? rt_func_ptx(f) : NULL;
  cudaError_t e = !f ? cudaErrorInvalidDeviceFunction : !k ? cudaErrorNoKernelImageForDevice
                                                           : cudaSuccess;
  if (!e && attr == cudaFuncAttributeMaxDynamicSharedMemorySize) {
    size_t st = rt_static_shared(k);
    if (value < 0 || (size_t)value + st > RT_SHARED_OPTIN) e = cudaErrorInvalidValue;
    else f->max_dyn_shared = value;
  }
  rt_unlock();
  return rt_err(e);
}

cudaError_t CUDARTAPI cudaFuncSetCacheConfig(const void *func, enum cudaFuncCache cacheConfig) {
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    int *numBlocks, const void *func, int blockSize, size_t dynamicSMemSize,
    unsigned int flags) {
  if (!numBlocks || blockSize <= 0 || blockSize > 1024) return rt_err(cudaErrorInvalidValue);
  struct cudaFuncAttributes a;
  cudaError_t e = cudaFuncGetAttributes(&a, func);
  if (e) return e;
  int warps = (blockSize + 31) / 32;
  int n = 64 / warps; /* 2048 threads = 64 warps per SM */
  if (n > 32) n = 32;
  size_t smem = a.sharedSizeBytes + dynamicSMemSize + 1024;
  if (smem && (int)(RT_SHARED_PER_SM / smem) < n) n = (int)(RT_SHARED_PER_SM / smem);
  *numBlocks = n;
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks,
                                                                    const void *func,
                                                                    int blockSize,
                                                                    size_t dynamicSMemSize) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, func, blockSize,
                                                                dynamicSMemSize, 0);
}

/* ------------------------------------------------ unsupported entries -- */

/* X(name, (typed params)); each returns cudaErrorNotSupported. */
#define RT_UNSUPPORTED_LIST(X) \
  X(cudaGraphCreate, (cudaGraph_t *pGraph, unsigned int flags)) \
  X(cudaGraphLaunch, (cudaGraphExec_t graphExec, cudaStream_t stream)) \
  X(cudaGraphDestroy, (cudaGraph_t graph)) \
  X(cudaGraphExecDestroy, (cudaGraphExec_t graphExec)) \
  X(cudaStreamBeginCapture, (cudaStream_t stream, enum cudaStreamCaptureMode mode)) \
  X(cudaStreamEndCapture, (cudaStream_t stream, cudaGraph_t *pGraph)) \
  X(cudaDeviceCanAccessPeer, (int *canAccessPeer, int device, int peerDevice)) \
  X(cudaDeviceEnablePeerAccess, (int peerDevice, unsigned int flags)) \
  X(cudaIpcGetMemHandle, (cudaIpcMemHandle_t *handle, void *devPtr)) \
  X(cudaLaunchKernelExC, (const cudaLaunchConfig_t *config, const void *func, void **args))

#define RT_DEFINE_UNSUPPORTED(name, params)      \
  cudaError_t CUDARTAPI name params {            \
    static int once;                             \
    return rt_unsupported(#name, &once);         \
  }
RT_UNSUPPORTED_LIST(RT_DEFINE_UNSUPPORTED)
