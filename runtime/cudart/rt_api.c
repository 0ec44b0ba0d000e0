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
 * Entry points the replacement does not implement: rt_unsup.c.
 */
#include "runtime/cudart/rt_cudart.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RT_DEVICE_NAME "kcast emulated GPU"

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

/* The messages of the CUDA runtime for the errors programs meet (a program
   may print them or compare them); the others read as their names. */
const char *CUDARTAPI cudaGetErrorString(cudaError_t error) {
  switch (error) {
  case cudaSuccess: return "no error";
  case cudaErrorInvalidValue: return "invalid argument";
  case cudaErrorMemoryAllocation: return "out of memory";
  case cudaErrorInitializationError: return "initialization error";
  case cudaErrorCudartUnloading: return "driver shutting down";
  case cudaErrorInvalidConfiguration: return "invalid configuration argument";
  case cudaErrorInvalidPitchValue: return "invalid pitch argument";
  case cudaErrorInvalidSymbol: return "invalid device symbol";
  case cudaErrorInvalidHostPointer: return "invalid host pointer";
  case cudaErrorInvalidDevicePointer: return "invalid device pointer";
  case cudaErrorInvalidTexture: return "invalid texture reference";
  case cudaErrorInvalidChannelDescriptor: return "invalid channel descriptor";
  case cudaErrorInvalidMemcpyDirection: return "invalid copy direction for memcpy";
  case cudaErrorInvalidFilterSetting: return "invalid filter setting";
  case cudaErrorInvalidNormSetting: return "invalid normalized float setting";
  case cudaErrorInsufficientDriver:
    return "CUDA driver version is insufficient for CUDA runtime version";
  case cudaErrorInvalidSurface: return "invalid surface reference";
  case cudaErrorMissingConfiguration: return "__global__ function call is not configured";
  case cudaErrorInvalidDeviceFunction: return "invalid device function";
  case cudaErrorNoDevice: return "no CUDA-capable device is detected";
  case cudaErrorInvalidDevice: return "invalid device ordinal";
  case cudaErrorInvalidKernelImage: return "device kernel image is invalid";
  case cudaErrorNoKernelImageForDevice:
    return "no kernel image is available for execution on the device (no PTX the emulator can run)";
  case cudaErrorUnsupportedLimit: return "limit is not supported on this architecture";
  case cudaErrorInvalidPtx: return "a PTX JIT compilation failed";
  case cudaErrorSymbolNotFound: return "named symbol not found";
  case cudaErrorNotReady: return "device not ready";
  case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
  case cudaErrorLaunchOutOfResources: return "too many resources requested for launch";
  case cudaErrorLaunchTimeout: return "the launch timed out and was terminated";
  case cudaErrorPeerAccessAlreadyEnabled: return "peer access is already enabled";
  case cudaErrorPeerAccessNotEnabled: return "peer access has not been enabled";
  case cudaErrorContextIsDestroyed: return "context is destroyed";
  case cudaErrorAssert: return "device-side assert triggered";
  case cudaErrorHostMemoryAlreadyRegistered:
    return "part or all of the requested memory range is already mapped";
  case cudaErrorHostMemoryNotRegistered:
    return "pointer does not correspond to a registered memory region";
  case cudaErrorHardwareStackError: return "hardware stack error";
  case cudaErrorIllegalInstruction: return "an illegal instruction was encountered";
  case cudaErrorMisalignedAddress: return "misaligned address";
  case cudaErrorInvalidAddressSpace:
    return "operation not supported on global/shared address space";
  case cudaErrorInvalidPc: return "invalid program counter";
  case cudaErrorLaunchFailure: return "unspecified launch failure";
  case cudaErrorCooperativeLaunchTooLarge: return "too many blocks in cooperative launch";
  case cudaErrorNotPermitted: return "operation not permitted";
  case cudaErrorNotSupported: return "operation not supported (by the kcast CPU emulation)";
  case cudaErrorStreamCaptureUnsupported: return "operation not permitted when stream is capturing";
  case cudaErrorTimeout: return "wait operation timed out";
  case cudaErrorInvalidResourceHandle: return "invalid resource handle";
  case cudaErrorIllegalState: return "the operation cannot be performed in the present state";
  case cudaErrorUnknown: return "unknown error";
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
  p->canMapHostMemory = 1;
  /* texture and surface limits of an sm_90 board (deviceQuery) */
  p->maxTexture1D = 131072;
  p->maxTexture1DMipmap = 32768;
  p->maxTexture2D[0] = 131072, p->maxTexture2D[1] = 65536;
  p->maxTexture2DMipmap[0] = 32768, p->maxTexture2DMipmap[1] = 32768;
  p->maxTexture2DLinear[0] = 131072, p->maxTexture2DLinear[1] = 65000;
  p->maxTexture2DLinear[2] = 2097120;
  p->maxTexture2DGather[0] = 32768, p->maxTexture2DGather[1] = 32768;
  p->maxTexture3D[0] = p->maxTexture3D[1] = p->maxTexture3D[2] = 16384;
  p->maxTexture3DAlt[0] = 8192, p->maxTexture3DAlt[1] = 8192, p->maxTexture3DAlt[2] = 32768;
  p->maxTextureCubemap = 32768;
  p->maxTexture1DLayered[0] = 32768, p->maxTexture1DLayered[1] = 2048;
  p->maxTexture2DLayered[0] = 32768, p->maxTexture2DLayered[1] = 32768;
  p->maxTexture2DLayered[2] = 2048;
  p->maxTextureCubemapLayered[0] = 32768, p->maxTextureCubemapLayered[1] = 2046;
  p->maxSurface1D = 32768;
  p->maxSurface2D[0] = 131072, p->maxSurface2D[1] = 65536;
  p->maxSurface3D[0] = p->maxSurface3D[1] = p->maxSurface3D[2] = 16384;
  p->maxSurface1DLayered[0] = 32768, p->maxSurface1DLayered[1] = 2048;
  p->maxSurface2DLayered[0] = 32768, p->maxSurface2DLayered[1] = 32768;
  p->maxSurface2DLayered[2] = 2048;
  p->maxSurfaceCubemap = 32768;
  p->maxSurfaceCubemapLayered[0] = 32768, p->maxSurfaceCubemapLayered[1] = 2046;
  p->surfaceAlignment = 512;
  p->concurrentKernels = 1;
  p->asyncEngineCount = 1;
  p->unifiedAddressing = 1;
  p->memoryBusWidth = 5120;
  p->l2CacheSize = 50 * 1024 * 1024;
  p->persistingL2CacheMaxSize = p->l2CacheSize / 4 * 3;
  p->maxThreadsPerMultiProcessor = 2048;
  p->streamPrioritiesSupported = 1;
  p->globalL1CacheSupported = 1;
  p->localL1CacheSupported = 1;
  p->sharedMemPerMultiprocessor = RT_SHARED_PER_SM;
  p->regsPerMultiprocessor = 65536;
  p->managedMemory = 1;
  p->multiGpuBoardGroupID = 0;
  /* one memory, every operation synchronous: host and kernels never touch
     managed memory at the same time */
  p->concurrentManagedAccess = 1;
  p->computePreemptionSupported = 1;
  /* registered host memory is mapped at its own address (cudaHostRegister) */
  p->canUseHostPointerForRegisteredMem = 1;
  /* kernels cannot reach pageable host memory (malloc), nor can a grid
     synchronise (cooperative groups' grid.sync) or form clusters */
  p->pageableMemoryAccess = 0;
  p->cooperativeLaunch = 0;
  p->clusterLaunch = 0;
  p->sharedMemPerBlockOptin = RT_SHARED_OPTIN;
  p->maxBlocksPerMultiProcessor = 32;
  p->accessPolicyMaxWindowSize = 134213632;
  p->reservedSharedMemPerBlock = 1024;
  p->hostRegisterSupported = 1;
  p->hostRegisterReadOnlySupported = 1;
  p->memoryPoolsSupported = 1;
  p->deviceNumaId = -1;
  p->hostNumaId = -1;
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

/* Every attribute of CUDA 13's cudaDeviceAttr, from the same properties
   cudaGetDeviceProperties returns (so the two never disagree); one not in
   the enumeration is cudaErrorInvalidValue, as on a GPU. */
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
  case cudaDevAttrClockRate: v = 1980000; break; /* kHz */
  case cudaDevAttrTextureAlignment: v = (int)p.textureAlignment; break;
  case cudaDevAttrGpuOverlap: v = 1; break;
  case cudaDevAttrMultiProcessorCount: v = p.multiProcessorCount; break;
  case cudaDevAttrKernelExecTimeout: v = 0; break;
  case cudaDevAttrIntegrated: v = p.integrated; break;
  case cudaDevAttrCanMapHostMemory: v = p.canMapHostMemory; break;
  case cudaDevAttrComputeMode: v = cudaComputeModeDefault; break;
  case cudaDevAttrMaxTexture1DWidth: v = p.maxTexture1D; break;
  case cudaDevAttrMaxTexture2DWidth: v = p.maxTexture2D[0]; break;
  case cudaDevAttrMaxTexture2DHeight: v = p.maxTexture2D[1]; break;
  case cudaDevAttrMaxTexture3DWidth: v = p.maxTexture3D[0]; break;
  case cudaDevAttrMaxTexture3DHeight: v = p.maxTexture3D[1]; break;
  case cudaDevAttrMaxTexture3DDepth: v = p.maxTexture3D[2]; break;
  case cudaDevAttrMaxTexture2DLayeredWidth: v = p.maxTexture2DLayered[0]; break;
  case cudaDevAttrMaxTexture2DLayeredHeight: v = p.maxTexture2DLayered[1]; break;
  case cudaDevAttrMaxTexture2DLayeredLayers: v = p.maxTexture2DLayered[2]; break;
  case cudaDevAttrSurfaceAlignment: v = (int)p.surfaceAlignment; break;
  case cudaDevAttrConcurrentKernels: v = p.concurrentKernels; break;
  case cudaDevAttrEccEnabled: v = p.ECCEnabled; break;
  case cudaDevAttrPciBusId: v = p.pciBusID; break;
  case cudaDevAttrPciDeviceId: v = p.pciDeviceID; break;
  case cudaDevAttrTccDriver: v = p.tccDriver; break;
  case cudaDevAttrMemoryClockRate: v = 2619000; break; /* kHz */
  case cudaDevAttrGlobalMemoryBusWidth: v = p.memoryBusWidth; break;
  case cudaDevAttrL2CacheSize: v = p.l2CacheSize; break;
  case cudaDevAttrMaxThreadsPerMultiProcessor: v = p.maxThreadsPerMultiProcessor; break;
  case cudaDevAttrAsyncEngineCount: v = p.asyncEngineCount; break;
  case cudaDevAttrUnifiedAddressing: v = p.unifiedAddressing; break;
  case cudaDevAttrMaxTexture1DLayeredWidth: v = p.maxTexture1DLayered[0]; break;
  case cudaDevAttrMaxTexture1DLayeredLayers: v = p.maxTexture1DLayered[1]; break;
  case cudaDevAttrMaxTexture2DGatherWidth: v = p.maxTexture2DGather[0]; break;
  case cudaDevAttrMaxTexture2DGatherHeight: v = p.maxTexture2DGather[1]; break;
  case cudaDevAttrMaxTexture3DWidthAlt: v = p.maxTexture3DAlt[0]; break;
  case cudaDevAttrMaxTexture3DHeightAlt: v = p.maxTexture3DAlt[1]; break;
  case cudaDevAttrMaxTexture3DDepthAlt: v = p.maxTexture3DAlt[2]; break;
  case cudaDevAttrPciDomainId: v = p.pciDomainID; break;
  case cudaDevAttrTexturePitchAlignment: v = (int)p.texturePitchAlignment; break;
  case cudaDevAttrMaxTextureCubemapWidth: v = p.maxTextureCubemap; break;
  case cudaDevAttrMaxTextureCubemapLayeredWidth: v = p.maxTextureCubemapLayered[0]; break;
  case cudaDevAttrMaxTextureCubemapLayeredLayers: v = p.maxTextureCubemapLayered[1]; break;
  case cudaDevAttrMaxSurface1DWidth: v = p.maxSurface1D; break;
  case cudaDevAttrMaxSurface2DWidth: v = p.maxSurface2D[0]; break;
  case cudaDevAttrMaxSurface2DHeight: v = p.maxSurface2D[1]; break;
  case cudaDevAttrMaxSurface3DWidth: v = p.maxSurface3D[0]; break;
  case cudaDevAttrMaxSurface3DHeight: v = p.maxSurface3D[1]; break;
  case cudaDevAttrMaxSurface3DDepth: v = p.maxSurface3D[2]; break;
  case cudaDevAttrMaxSurface1DLayeredWidth: v = p.maxSurface1DLayered[0]; break;
  case cudaDevAttrMaxSurface1DLayeredLayers: v = p.maxSurface1DLayered[1]; break;
  case cudaDevAttrMaxSurface2DLayeredWidth: v = p.maxSurface2DLayered[0]; break;
  case cudaDevAttrMaxSurface2DLayeredHeight: v = p.maxSurface2DLayered[1]; break;
  case cudaDevAttrMaxSurface2DLayeredLayers: v = p.maxSurface2DLayered[2]; break;
  case cudaDevAttrMaxSurfaceCubemapWidth: v = p.maxSurfaceCubemap; break;
  case cudaDevAttrMaxSurfaceCubemapLayeredWidth: v = p.maxSurfaceCubemapLayered[0]; break;
  case cudaDevAttrMaxSurfaceCubemapLayeredLayers: v = p.maxSurfaceCubemapLayered[1]; break;
  case cudaDevAttrMaxTexture1DLinearWidth: v = 1 << 28; break;
  case cudaDevAttrMaxTexture2DLinearWidth: v = p.maxTexture2DLinear[0]; break;
  case cudaDevAttrMaxTexture2DLinearHeight: v = p.maxTexture2DLinear[1]; break;
  case cudaDevAttrMaxTexture2DLinearPitch: v = p.maxTexture2DLinear[2]; break;
  case cudaDevAttrMaxTexture2DMipmappedWidth: v = p.maxTexture2DMipmap[0]; break;
  case cudaDevAttrMaxTexture2DMipmappedHeight: v = p.maxTexture2DMipmap[1]; break;
  case cudaDevAttrComputeCapabilityMajor: v = p.major; break;
  case cudaDevAttrComputeCapabilityMinor: v = p.minor; break;
  case cudaDevAttrMaxTexture1DMipmappedWidth: v = p.maxTexture1DMipmap; break;
  case cudaDevAttrStreamPrioritiesSupported: v = p.streamPrioritiesSupported; break;
  case cudaDevAttrGlobalL1CacheSupported: v = p.globalL1CacheSupported; break;
  case cudaDevAttrLocalL1CacheSupported: v = p.localL1CacheSupported; break;
  case cudaDevAttrMaxSharedMemoryPerMultiprocessor: v = (int)p.sharedMemPerMultiprocessor; break;
  case cudaDevAttrMaxRegistersPerMultiprocessor: v = p.regsPerMultiprocessor; break;
  case cudaDevAttrManagedMemory: v = p.managedMemory; break;
  case cudaDevAttrIsMultiGpuBoard: v = p.isMultiGpuBoard; break;
  case cudaDevAttrMultiGpuBoardGroupID: v = p.multiGpuBoardGroupID; break;
  case cudaDevAttrHostNativeAtomicSupported: v = p.hostNativeAtomicSupported; break;
  case cudaDevAttrSingleToDoublePrecisionPerfRatio: v = 2; break;
  case cudaDevAttrPageableMemoryAccess: v = p.pageableMemoryAccess; break;
  case cudaDevAttrConcurrentManagedAccess: v = p.concurrentManagedAccess; break;
  case cudaDevAttrComputePreemptionSupported: v = p.computePreemptionSupported; break;
  case cudaDevAttrCanUseHostPointerForRegisteredMem: v = p.canUseHostPointerForRegisteredMem; break;
  case cudaDevAttrCooperativeLaunch: v = p.cooperativeLaunch; break;
  case cudaDevAttrMaxSharedMemoryPerBlockOptin: v = (int)p.sharedMemPerBlockOptin; break;
  case cudaDevAttrCanFlushRemoteWrites: v = 0; break;
  case cudaDevAttrHostRegisterSupported: v = p.hostRegisterSupported; break;
  case cudaDevAttrPageableMemoryAccessUsesHostPageTables:
    v = p.pageableMemoryAccessUsesHostPageTables;
    break;
  case cudaDevAttrDirectManagedMemAccessFromHost: v = p.directManagedMemAccessFromHost; break;
  case cudaDevAttrMaxBlocksPerMultiprocessor: v = p.maxBlocksPerMultiProcessor; break;
  case cudaDevAttrMaxPersistingL2CacheSize: v = p.persistingL2CacheMaxSize; break;
  case cudaDevAttrMaxAccessPolicyWindowSize: v = p.accessPolicyMaxWindowSize; break;
  case cudaDevAttrReservedSharedMemoryPerBlock: v = (int)p.reservedSharedMemPerBlock; break;
  case cudaDevAttrSparseCudaArraySupported: v = p.sparseCudaArraySupported; break;
  case cudaDevAttrHostRegisterReadOnlySupported: v = p.hostRegisterReadOnlySupported; break;
  case cudaDevAttrTimelineSemaphoreInteropSupported: v = p.timelineSemaphoreInteropSupported; break;
  case cudaDevAttrMemoryPoolsSupported: v = p.memoryPoolsSupported; break;
  case cudaDevAttrGPUDirectRDMASupported: v = p.gpuDirectRDMASupported; break;
  case cudaDevAttrGPUDirectRDMAFlushWritesOptions:
    v = (int)p.gpuDirectRDMAFlushWritesOptions;
    break;
  case cudaDevAttrGPUDirectRDMAWritesOrdering: v = p.gpuDirectRDMAWritesOrdering; break;
  case cudaDevAttrMemoryPoolSupportedHandleTypes: v = (int)p.memoryPoolSupportedHandleTypes; break;
  case cudaDevAttrClusterLaunch: v = p.clusterLaunch; break;
  case cudaDevAttrDeferredMappingCudaArraySupported:
    v = p.deferredMappingCudaArraySupported;
    break;
  case cudaDevAttrIpcEventSupport: v = p.ipcEventSupported; break;
  case cudaDevAttrMemSyncDomainCount: v = 1; break;
  case cudaDevAttrNumaConfig: v = p.deviceNumaConfig; break;
  case cudaDevAttrNumaId: v = p.deviceNumaId; break;
  case cudaDevAttrMpsEnabled: v = p.mpsEnabled; break;
  case cudaDevAttrHostNumaId: v = p.hostNumaId; break;
  case cudaDevAttrD3D12CigSupported: case cudaDevAttrVulkanCigSupported: v = 0; break;
  case cudaDevAttrGpuPciDeviceId: v = (int)p.gpuPciDeviceID; break;
  case cudaDevAttrGpuPciSubsystemId: v = (int)p.gpuPciSubsystemID; break;
  case cudaDevAttrHostNumaMemoryPoolsSupported: case cudaDevAttrHostNumaMultinodeIpcSupported:
  case cudaDevAttrHostMemoryPoolsSupported: case cudaDevAttrOnlyPartialHostNativeAtomicSupported:
    v = 0;
    break;
  default: return rt_err(cudaErrorInvalidValue); /* reserved or unknown */
  }
  *value = v;
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaDeviceSynchronize(void) { return rt_err(rt_sticky()); }

cudaError_t CUDARTAPI cudaDeviceReset(void) {
  rt_reset();
  return cudaSuccess;
}

/* Limits read back as set (defaults of a GPU).  The emulator needs none of
   them: its stacks and printf buffer grow as needed. */
static size_t limits[] = {
    [cudaLimitStackSize] = 1024,
    [cudaLimitPrintfFifoSize] = 1 << 20,
    [cudaLimitMallocHeapSize] = 8 << 20,
    [cudaLimitDevRuntimeSyncDepth] = 2,
    [cudaLimitDevRuntimePendingLaunchCount] = 2048,
    [cudaLimitMaxL2FetchGranularity] = 64,
    [cudaLimitPersistingL2CacheSize] = 0,
};

cudaError_t CUDARTAPI cudaDeviceSetLimit(enum cudaLimit limit, size_t value) {
  if ((unsigned)limit >= sizeof limits / sizeof limits[0]) return rt_err(cudaErrorUnsupportedLimit);
  if (limit == cudaLimitMaxL2FetchGranularity && value > 128) value = 128;
  rt_lock();
  limits[limit] = value;
  rt_unlock();
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaDeviceGetLimit(size_t *pValue, enum cudaLimit limit) {
  if (!pValue) return rt_err(cudaErrorInvalidValue);
  if ((unsigned)limit >= sizeof limits / sizeof limits[0]) return rt_err(cudaErrorUnsupportedLimit);
  rt_lock();
  *pValue = limits[limit];
  rt_unlock();
  return cudaSuccess;
}

/* One device: no peer can be reached, as on a machine with one GPU. */
cudaError_t CUDARTAPI cudaDeviceCanAccessPeer(int *canAccessPeer, int device, int peerDevice) {
  if (!canAccessPeer) return rt_err(cudaErrorInvalidValue);
  if (device != 0 || peerDevice != 0) return rt_err(cudaErrorInvalidDevice);
  *canAccessPeer = 0;
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaDeviceEnablePeerAccess(int peerDevice, unsigned int flags) {
  if (flags) return rt_err(cudaErrorInvalidValue);
  return rt_err(cudaErrorInvalidDevice); /* the device itself, or none */
}

cudaError_t CUDARTAPI cudaDeviceDisablePeerAccess(int peerDevice) {
  return rt_err(peerDevice == 0 ? cudaErrorPeerAccessNotEnabled : cudaErrorInvalidDevice);
}

cudaError_t CUDARTAPI cudaDeviceGetP2PAttribute(int *value, enum cudaDeviceP2PAttr attr,
                                                int srcDevice, int dstDevice) {
  if (!value) return rt_err(cudaErrorInvalidValue);
  return rt_err(cudaErrorInvalidDevice); /* needs two devices */
}

cudaError_t CUDARTAPI cudaSetValidDevices(int *device_arr, int len) {
  for (int i = 0; device_arr && i < len; i++)
    if (device_arr[i] != 0) return rt_err(cudaErrorInvalidDevice);
  return cudaSuccess;
}

#define RT_PCI_BUS_ID "0000:00:00.0"

cudaError_t CUDARTAPI cudaDeviceGetPCIBusId(char *pciBusId, int len, int device) {
  if (!pciBusId || len <= 0) return rt_err(cudaErrorInvalidValue);
  if (device != 0) return rt_err(cudaErrorInvalidDevice);
  snprintf(pciBusId, (size_t)len, "%s", RT_PCI_BUS_ID);
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaDeviceGetByPCIBusId(int *device, const char *pciBusId) {
  if (!device || !pciBusId) return rt_err(cudaErrorInvalidValue);
  /* domain:bus:device[.function], the domain optional, in hex */
  unsigned dom = 0, bus = 1, dev = 1;
  if (sscanf(pciBusId, "%x:%x:%x", &dom, &bus, &dev) != 3 &&
      sscanf(pciBusId, "%x:%x", &bus, &dev) != 2)
    return rt_err(cudaErrorInvalidValue);
  if (dom || bus || dev) return rt_err(cudaErrorInvalidDevice);
  *device = 0;
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaDeviceGetTexture1DLinearMaxWidth(
    size_t *maxWidthInElements, const struct cudaChannelFormatDesc *fmtDesc, int device) {
  if (!maxWidthInElements || !fmtDesc) return rt_err(cudaErrorInvalidValue);
  if (device != 0) return rt_err(cudaErrorInvalidDevice);
  *maxWidthInElements = (size_t)1 << 28;
  return cudaSuccess;
}

/* Deprecated bank-size settings: banks are 4 bytes wide on every GPU since
   Maxwell; the emulator's bank-conflict counts use 4. */
cudaError_t CUDARTAPI cudaDeviceGetSharedMemConfig(enum cudaSharedMemConfig *pConfig) {
  if (!pConfig) return rt_err(cudaErrorInvalidValue);
  *pConfig = cudaSharedMemBankSizeFourByte;
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaDeviceSetSharedMemConfig(enum cudaSharedMemConfig config) {
  return (unsigned)config > cudaSharedMemBankSizeEightByte ? rt_err(cudaErrorInvalidValue)
                                                           : cudaSuccess;
}

/* Cache and flush hints: nothing is cached across launches or devices. */
cudaError_t CUDARTAPI cudaCtxResetPersistingL2Cache(void) { return cudaSuccess; }

cudaError_t CUDARTAPI cudaDeviceFlushGPUDirectRDMAWrites(
    enum cudaFlushGPUDirectRDMAWritesTarget target, enum cudaFlushGPUDirectRDMAWritesScope scope) {
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

/*
 * Stream and event handles are small owned objects on live lists, so that
 * a handle is checked before use: a destroyed or foreign one is
 * cudaErrorInvalidResourceHandle, as the real runtime reports it, not a
 * crash.  The built-in streams (0 = legacy default, cudaStreamLegacy,
 * cudaStreamPerThread) are always valid and cannot be destroyed.  Lists
 * are guarded by rt_lock.
 */
#define RT_STREAM_MAGIC 0x6b737472u /* "kstr" */
#define RT_EVENT_MAGIC 0x6b657674u  /* "kevt" */
#define RT_STREAM_ATTRS 32          /* cudaLaunchAttributeID values kept per stream */

typedef struct rt_stream {
  uint32_t magic;                 /* RT_STREAM_MAGIC while live */
  unsigned flags;                 /* cudaStreamDefault or cudaStreamNonBlocking */
  int priority;                   /* as created, clamped to the device's range */
  unsigned long long id;          /* unique in the process, never reused */
  cudaLaunchAttributeValue attr[RT_STREAM_ATTRS]; /* cudaStreamSetAttribute values */
  struct rt_stream *next;
} rt_stream;

typedef struct rt_event {
  uint32_t magic;                 /* RT_EVENT_MAGIC while live */
  unsigned flags;                 /* cudaEventDisableTiming, ... */
  double t;                       /* rt_clock() at the last record */
  int recorded;
  struct rt_event *next;
} rt_event;

static rt_stream *streams;
static rt_event *events;
static unsigned long long next_stream_id = 3; /* 0-2: the built-in streams */

/* The greatest (numerically least) stream priority; the least is 0. */
#define RT_PRIO_GREATEST (-5)

static int builtin_stream(cudaStream_t s) {
  return s == 0 || s == cudaStreamLegacy || s == cudaStreamPerThread;
}

/* The live stream s, or NULL (built-in streams too).  Lock held. */
static rt_stream *find_stream(cudaStream_t s) {
  for (rt_stream *t = streams; t; t = t->next)
    if ((cudaStream_t)(void *)t == s) return t;
  return NULL;
}

/* cudaSuccess when s names a stream (built-in or live). */
static cudaError_t check_stream(cudaStream_t s) {
  if (builtin_stream(s)) return cudaSuccess;
  rt_lock();
  int ok = find_stream(s) != NULL;
  rt_unlock();
  return ok ? cudaSuccess : cudaErrorInvalidResourceHandle;
}

static rt_event *find_event(cudaEvent_t e) {
  for (rt_event *t = events; t; t = t->next)
    if ((cudaEvent_t)(void *)t == e) return t;
  return NULL;
}

static cudaError_t new_stream(cudaStream_t *s, unsigned flags, int priority) {
  if (!s || (flags & ~(unsigned)cudaStreamNonBlocking)) return rt_err(cudaErrorInvalidValue);
  rt_stream *t = calloc(1, sizeof *t);
  if (!t) return rt_err(cudaErrorMemoryAllocation);
  t->magic = RT_STREAM_MAGIC;
  t->flags = flags;
  t->priority = priority > 0 ? 0 : priority < RT_PRIO_GREATEST ? RT_PRIO_GREATEST : priority;
  rt_lock();
  t->id = next_stream_id++;
  t->next = streams;
  streams = t;
  rt_unlock();
  *s = (cudaStream_t)(void *)t;
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaStreamCreate(cudaStream_t *pStream) {
  return new_stream(pStream, cudaStreamDefault, 0);
}

cudaError_t CUDARTAPI cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags) {
  return new_stream(pStream, flags, 0);
}

cudaError_t CUDARTAPI cudaStreamCreateWithPriority(cudaStream_t *pStream, unsigned int flags,
                                                   int priority) {
  return new_stream(pStream, flags, priority);
}

cudaError_t CUDARTAPI cudaDeviceGetStreamPriorityRange(int *leastPriority,
                                                       int *greatestPriority) {
  if (leastPriority) *leastPriority = 0;
  if (greatestPriority) *greatestPriority = RT_PRIO_GREATEST;
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaStreamDestroy(cudaStream_t stream) {
  if (builtin_stream(stream)) return rt_err(cudaErrorInvalidResourceHandle);
  rt_lock();
  rt_stream **pp = &streams;
  while (*pp && (cudaStream_t)(void *)*pp != stream) pp = &(*pp)->next;
  rt_stream *t = *pp;
  if (t) *pp = t->next;
  rt_unlock();
  if (!t) return rt_err(cudaErrorInvalidResourceHandle);
  t->magic = 0;
  free(t);
  return cudaSuccess;
}

/* A stream's flags, priority and id (built-in streams: 0, 0 and 0-2). */
static cudaError_t stream_info(cudaStream_t s, unsigned *flags, int *prio,
                               unsigned long long *id) {
  cudaError_t e = cudaSuccess;
  unsigned f = 0;
  int p = 0;
  unsigned long long i = s == 0 ? 0 : s == cudaStreamLegacy ? 1 : 2;
  if (!builtin_stream(s)) {
    rt_lock();
    rt_stream *t = find_stream(s);
    if (t) f = t->flags, p = t->priority, i = t->id;
    else e = cudaErrorInvalidResourceHandle;
    rt_unlock();
  }
  if (flags) *flags = f;
  if (prio) *prio = p;
  if (id) *id = i;
  return rt_err(e);
}

cudaError_t CUDARTAPI cudaStreamGetFlags(cudaStream_t hStream, unsigned int *flags) {
  if (!flags) return rt_err(cudaErrorInvalidValue);
  return stream_info(hStream, flags, NULL, NULL);
}

cudaError_t CUDARTAPI cudaStreamGetPriority(cudaStream_t hStream, int *priority) {
  if (!priority) return rt_err(cudaErrorInvalidValue);
  return stream_info(hStream, NULL, priority, NULL);
}

cudaError_t CUDARTAPI cudaStreamGetId(cudaStream_t hStream, unsigned long long *streamId) {
  if (!streamId) return rt_err(cudaErrorInvalidValue);
  return stream_info(hStream, NULL, NULL, streamId);
}

cudaError_t CUDARTAPI cudaStreamGetDevice(cudaStream_t hStream, int *device) {
  if (!device) return rt_err(cudaErrorInvalidValue);
  cudaError_t e = stream_info(hStream, NULL, NULL, NULL);
  if (!e) *device = 0;
  return e;
}

/* Stream attributes are scheduling and cache hints (access policy window,
   synchronisation policy, priority, memory sync domain): kept and read
   back, with no effect on what the stream computes.  Built-in streams keep
   none (their values read as zero). */
cudaError_t CUDARTAPI cudaStreamSetAttribute(cudaStream_t stream, cudaStreamAttrID attr,
                                             const cudaStreamAttrValue *param) {
  if (!param || (unsigned)attr >= RT_STREAM_ATTRS) return rt_err(cudaErrorInvalidValue);
  if (builtin_stream(stream)) return cudaSuccess;
  rt_lock();
  rt_stream *t = find_stream(stream);
  if (t) t->attr[attr] = *param;
  if (t && attr == cudaLaunchAttributePriority) t->priority = param->priority;
  rt_unlock();
  return t ? cudaSuccess : rt_err(cudaErrorInvalidResourceHandle);
}

cudaError_t CUDARTAPI cudaStreamGetAttribute(cudaStream_t stream, cudaStreamAttrID attr,
                                             cudaStreamAttrValue *value) {
  if (!value || (unsigned)attr >= RT_STREAM_ATTRS) return rt_err(cudaErrorInvalidValue);
  memset(value, 0, sizeof *value);
  if (builtin_stream(stream)) return cudaSuccess;
  rt_lock();
  rt_stream *t = find_stream(stream);
  if (t) *value = t->attr[attr];
  if (t && attr == cudaLaunchAttributePriority) value->priority = t->priority;
  rt_unlock();
  return t ? cudaSuccess : rt_err(cudaErrorInvalidResourceHandle);
}

cudaError_t CUDARTAPI cudaStreamCopyAttributes(cudaStream_t dst, cudaStream_t src) {
  rt_lock();
  rt_stream *d = find_stream(dst), *s = find_stream(src);
  cudaError_t e = (!d && !builtin_stream(dst)) || (!s && !builtin_stream(src))
                      ? cudaErrorInvalidResourceHandle : cudaSuccess;
  if (!e && d && s) memcpy(d->attr, s->attr, sizeof d->attr);
  else if (!e && d) memset(d->attr, 0, sizeof d->attr);
  rt_unlock();
  return rt_err(e);
}

/* Every operation is complete when its call returns: a stream is idle. */
cudaError_t CUDARTAPI cudaStreamSynchronize(cudaStream_t stream) {
  cudaError_t e = check_stream(stream);
  return rt_err(e ? e : rt_sticky());
}

cudaError_t CUDARTAPI cudaStreamQuery(cudaStream_t stream) {
  cudaError_t e = check_stream(stream);
  return rt_err(e ? e : rt_sticky());
}

cudaError_t CUDARTAPI cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event,
                                          unsigned int flags) {
  cudaError_t e = check_stream(stream);
  if (!e) {
    rt_lock();
    if (!find_event(event)) e = cudaErrorInvalidResourceHandle;
    rt_unlock();
  }
  return rt_err(e);
}

/* Managed memory is one memory: attaching it to a stream changes nothing. */
cudaError_t CUDARTAPI cudaStreamAttachMemAsync(cudaStream_t stream, void *devPtr, size_t length,
                                               unsigned int flags) {
  return rt_err(check_stream(stream));
}

/* Nothing is ever captured (stream capture is not supported, rt_unsup.c):
   every stream reports cudaStreamCaptureStatusNone, which is the truth. */
cudaError_t CUDARTAPI cudaStreamIsCapturing(cudaStream_t stream,
                                            enum cudaStreamCaptureStatus *pCaptureStatus) {
  if (!pCaptureStatus) return rt_err(cudaErrorInvalidValue);
  cudaError_t e = check_stream(stream);
  if (!e) *pCaptureStatus = cudaStreamCaptureStatusNone;
  return rt_err(e);
}

cudaError_t CUDARTAPI cudaStreamGetCaptureInfo(cudaStream_t stream,
                                               enum cudaStreamCaptureStatus *captureStatus_out,
                                               unsigned long long *id_out, cudaGraph_t *graph_out,
                                               const cudaGraphNode_t **dependencies_out,
                                               const cudaGraphEdgeData **edgeData_out,
                                               size_t *numDependencies_out) {
  if (!captureStatus_out) return rt_err(cudaErrorInvalidValue);
  cudaError_t e = check_stream(stream);
  if (!e) *captureStatus_out = cudaStreamCaptureStatusNone;
  return rt_err(e);
}

static _Thread_local enum cudaStreamCaptureMode capture_mode = cudaStreamCaptureModeGlobal;

cudaError_t CUDARTAPI cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode) {
  if (!mode || (unsigned)*mode > cudaStreamCaptureModeRelaxed)
    return rt_err(cudaErrorInvalidValue);
  enum cudaStreamCaptureMode old = capture_mode;
  capture_mode = *mode;
  *mode = old;
  return cudaSuccess;
}

/* Callbacks and host functions run at once, in the calling thread: the
   stream's earlier work is complete, its later work not yet issued. */
cudaError_t CUDARTAPI cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback,
                                            void *userData, unsigned int flags) {
  if (!callback || flags) return rt_err(cudaErrorInvalidValue);
  cudaError_t e = check_stream(stream);
  if (e) return rt_err(e);
  callback(stream, rt_sticky(), userData);
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *userData) {
  if (!fn) return rt_err(cudaErrorInvalidValue);
  cudaError_t e = check_stream(stream);
  if (e) return rt_err(e);
  if ((e = rt_sticky())) return rt_err(e); /* a lost context runs no more work */
  fn(userData);
  return cudaSuccess;
}

static cudaError_t new_event(cudaEvent_t *e, unsigned flags) {
  if (!e || (flags & ~(unsigned)(cudaEventBlockingSync | cudaEventDisableTiming |
                                 cudaEventInterprocess)))
    return rt_err(cudaErrorInvalidValue);
  static int ipc_once;
  if (flags & cudaEventInterprocess)
    return rt_unsupported("cudaEventCreateWithFlags", "interprocess events (IPC)", &ipc_once);
  rt_event *ev = calloc(1, sizeof *ev);
  if (!ev) return rt_err(cudaErrorMemoryAllocation);
  ev->magic = RT_EVENT_MAGIC;
  ev->flags = flags;
  rt_lock();
  ev->next = events;
  events = ev;
  rt_unlock();
  *e = (cudaEvent_t)(void *)ev;
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaEventCreate(cudaEvent_t *event) { return new_event(event, 0); }

cudaError_t CUDARTAPI cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags) {
  return new_event(event, flags);
}

cudaError_t CUDARTAPI cudaEventDestroy(cudaEvent_t event) {
  rt_lock();
  rt_event **pp = &events;
  while (*pp && (cudaEvent_t)(void *)*pp != event) pp = &(*pp)->next;
  rt_event *ev = *pp;
  if (ev) *pp = ev->next;
  rt_unlock();
  if (!ev) return rt_err(cudaErrorInvalidResourceHandle);
  ev->magic = 0;
  free(ev);
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  cudaError_t e = check_stream(stream);
  if (e) return rt_err(e);
  rt_lock();
  rt_event *ev = find_event(event);
  if (ev) {
    ev->t = rt_clock();
    ev->recorded = 1;
  }
  rt_unlock();
  return ev ? cudaSuccess : rt_err(cudaErrorInvalidResourceHandle);
}

cudaError_t CUDARTAPI cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream,
                                               unsigned int flags) {
  if (flags & ~(unsigned)cudaEventRecordExternal) return rt_err(cudaErrorInvalidValue);
  return cudaEventRecord(event, stream);
}

/* An event's work is done when its record returns: complete (also one
   never recorded, as the real runtime says). */
static cudaError_t check_event(cudaEvent_t event) {
  rt_lock();
  int ok = find_event(event) != NULL;
  rt_unlock();
  return ok ? rt_sticky() : cudaErrorInvalidResourceHandle;
}

cudaError_t CUDARTAPI cudaEventQuery(cudaEvent_t event) { return rt_err(check_event(event)); }

cudaError_t CUDARTAPI cudaEventSynchronize(cudaEvent_t event) {
  return rt_err(check_event(event));
}

/* Emulated time between the records (see the note at the top).  As on a
   GPU: either event never recorded, or created with cudaEventDisableTiming,
   is cudaErrorInvalidResourceHandle. */
cudaError_t CUDARTAPI cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end) {
  if (!ms) return rt_err(cudaErrorInvalidValue);
  rt_lock();
  const rt_event *a = find_event(start), *b = find_event(end);
  cudaError_t e = !a || !b || !a->recorded || !b->recorded ||
                          ((a->flags | b->flags) & cudaEventDisableTiming)
                      ? cudaErrorInvalidResourceHandle : cudaSuccess;
  if (!e) *ms = (float)((b->t - a->t) * 1e3);
  rt_unlock();
  return rt_err(e);
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
    attr->requiredClusterWidth = (int)(f->cluster[0] ? f->cluster[0] : k->reqnctapercluster[0]);
    attr->requiredClusterHeight = (int)(f->cluster[1] ? f->cluster[1] : k->reqnctapercluster[1]);
    attr->requiredClusterDepth = (int)(f->cluster[2] ? f->cluster[2] : k->reqnctapercluster[2]);
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
   more is cudaErrorInvalidValue); a required cluster size is kept (its
   launches are then refused: clusters are not supported); the other
   attributes are hints, accepted. */
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
  } else if (!e && (attr == cudaFuncAttributeRequiredClusterWidth ||
                    attr == cudaFuncAttributeRequiredClusterHeight ||
                    attr == cudaFuncAttributeRequiredClusterDepth)) {
    if (value < 0 || value > 16) e = cudaErrorInvalidValue;
    else f->cluster[attr - cudaFuncAttributeRequiredClusterWidth] = (unsigned)value;
  }
  rt_unlock();
  return rt_err(e);
}

/* The kernel of a host stub or cudaKernel_t with its PTX, or the error a
   GPU gives (not a kernel; a module that could not be loaded).  Lock held. */
static cudaError_t func_of(const void *func, rt_func **f, const ptx_func **k) {
  *f = rt_find_func(func);
  *k = *f ? rt_func_ptx(*f) : NULL;
  return !*f ? cudaErrorInvalidDeviceFunction : !*k ? cudaErrorNoKernelImageForDevice
                                                   : cudaSuccess;
}

/* A cache preference is a hint: accepted for a kernel. */
cudaError_t CUDARTAPI cudaFuncSetCacheConfig(const void *func, enum cudaFuncCache cacheConfig) {
  rt_lock();
  rt_func *f;
  const ptx_func *k;
  cudaError_t e = func_of(func, &f, &k);
  rt_unlock();
  return rt_err(e);
}

cudaError_t CUDARTAPI cudaFuncSetSharedMemConfig(const void *func,
                                                 enum cudaSharedMemConfig config) {
  if ((unsigned)config > cudaSharedMemBankSizeEightByte) return rt_err(cudaErrorInvalidValue);
  return cudaFuncSetCacheConfig(func, cudaFuncCachePreferNone);
}

cudaError_t CUDARTAPI cudaKernelSetAttributeForDevice(cudaKernel_t kernel,
                                                      enum cudaFuncAttribute attr, int value,
                                                      int device) {
  if (device != 0) return rt_err(cudaErrorInvalidDevice);
  return cudaFuncSetAttribute((const void *)kernel, attr, value);
}

/* The kernel's mangled name, as the GPU runtime gives it; owned by the
   runtime, valid for the process. */
cudaError_t CUDARTAPI cudaFuncGetName(const char **name, const void *func) {
  if (!name) return rt_err(cudaErrorInvalidValue);
  rt_lock();
  rt_func *f = rt_find_func(func);
  if (f) *name = f->name;
  rt_unlock();
  return f ? cudaSuccess : rt_err(cudaErrorInvalidDeviceFunction);
}

/* Offset and size of parameter paramIndex in the kernel's argument buffer
   (the PTX .param layout the emulator uses). */
cudaError_t CUDARTAPI cudaFuncGetParamInfo(const void *func, size_t paramIndex,
                                           size_t *paramOffset, size_t *paramSize) {
  rt_lock();
  rt_func *f;
  const ptx_func *k;
  cudaError_t e = func_of(func, &f, &k);
  if (!e && paramIndex >= k->nparams) e = cudaErrorInvalidValue;
  if (!e) {
    size_t *off = calloc(k->nparams + 1, sizeof *off);
    if (!off) {
      e = cudaErrorMemoryAllocation;
    } else {
      ptx_param_layout(k, off, NULL, NULL);
      if (paramOffset) *paramOffset = off[paramIndex];
      if (paramSize) *paramSize = k->params[paramIndex].size;
      free(off);
    }
  }
  rt_unlock();
  return rt_err(e);
}

int rt_occupancy(const ptx_func *k, int block, size_t dyn) {
  if (block <= 0 || block > 1024) return 0;
  int warps = (block + 31) / 32;
  int n = 64 / warps; /* 2048 threads = 64 warps per SM */
  if (n > 32) n = 32;
  size_t smem = rt_static_shared(k) + dyn + 1024; /* each block reserves 1 KiB */
  if ((int)(RT_SHARED_PER_SM / smem) < n) n = (int)(RT_SHARED_PER_SM / smem);
  return n;
}

cudaError_t CUDARTAPI cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    int *numBlocks, const void *func, int blockSize, size_t dynamicSMemSize,
    unsigned int flags) {
  if (!numBlocks || blockSize <= 0 || blockSize > 1024) return rt_err(cudaErrorInvalidValue);
  rt_lock();
  rt_func *f;
  const ptx_func *k;
  cudaError_t e = func_of(func, &f, &k);
  if (!e) *numBlocks = rt_occupancy(k, blockSize, dynamicSMemSize);
  rt_unlock();
  return rt_err(e);
}

/* Dynamic shared memory a block may use when numBlocks blocks of blockSize
   threads share an SM: the SM's shared memory split between them, less the
   reserved and static bytes of each, within the kernel's limit; 0 when that
   many blocks cannot be resident at all. */
cudaError_t CUDARTAPI cudaOccupancyAvailableDynamicSMemPerBlock(size_t *dynamicSmemSize,
                                                                const void *func, int numBlocks,
                                                                int blockSize) {
  if (!dynamicSmemSize || numBlocks <= 0 || blockSize <= 0 || blockSize > 1024)
    return rt_err(cudaErrorInvalidValue);
  rt_lock();
  rt_func *f;
  const ptx_func *k;
  cudaError_t e = func_of(func, &f, &k);
  if (!e) {
    size_t st = rt_static_shared(k), per = RT_SHARED_PER_SM / (size_t)numBlocks, avail = 0;
    int warps = (blockSize + 31) / 32;
    if (numBlocks <= 32 && numBlocks * warps <= 64 && per > st + 1024) avail = per - st - 1024;
    size_t cap = RT_SHARED_OPTIN > st ? RT_SHARED_OPTIN - st : 0;
    *dynamicSmemSize = avail < cap ? avail : cap;
  }
  rt_unlock();
  return rt_err(e);
}

cudaError_t CUDARTAPI cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks,
                                                                    const void *func,
                                                                    int blockSize,
                                                                    size_t dynamicSMemSize) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, func, blockSize,
                                                                dynamicSMemSize, 0);
}
