/*
 * rt_api_device.cu -- device queries as programs use them to size their
 * launches (tests/test_run.c): the device count and selection, every
 * property programs read, every cudaDeviceGetAttribute answer agreeing
 * with cudaGetDeviceProperties, limits read back as set, versions, one
 * device's peer and PCI answers, error names and the runtime's messages,
 * and sticky versus non-sticky errors.  Prints "PASS device".
 */
#include "rt_check.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations" /* cudaDeviceGetSharedMemConfig */

int main() {
  int n = -1, dev = -1;
  CHECK(cudaGetDeviceCount(&n));
  EXPECT(n == 1, "one device: %d", n);
  CHECK(cudaGetDevice(&dev));
  EXPECT(dev == 0, "device 0 is current");
  CHECK(cudaSetDevice(0));
  CHECK(cudaInitDevice(0, 0, 0));
  EXPECT(cudaSetDevice(1) == cudaErrorInvalidDevice, "cudaSetDevice(1) on one device");
  EXPECT(cudaGetLastError() == cudaErrorInvalidDevice, "... is the last error");
  EXPECT(cudaGetLastError() == cudaSuccess, "... and is not sticky");

  cudaDeviceProp p;
  CHECK(cudaGetDeviceProperties(&p, 0));
  EXPECT(p.multiProcessorCount > 0 && p.maxThreadsPerBlock == 1024 &&
             p.sharedMemPerBlock == 48 * 1024 && p.warpSize == 32 && p.major >= 7 &&
             p.maxThreadsDim[0] == 1024 && p.maxGridSize[1] == 65535 &&
             p.sharedMemPerBlockOptin > p.sharedMemPerBlock && p.totalGlobalMem > 0 &&
             p.maxThreadsPerMultiProcessor >= 1024 && p.regsPerBlock > 0,
         "the properties programs size launches by");
  EXPECT(p.maxTexture1D > 0 && p.maxTexture2D[0] > 0 && p.maxTexture3D[2] > 0 &&
             p.maxSurface2D[1] > 0,
         "texture and surface limits");
  EXPECT_ERR(cudaGetDeviceProperties(&p, 1), cudaErrorInvalidDevice);

  /* every attribute agrees with the properties */
  struct {
    cudaDeviceAttr a;
    long want;
    const char *n;
  } at[] = {
      {cudaDevAttrMaxThreadsPerBlock, p.maxThreadsPerBlock, "MaxThreadsPerBlock"},
      {cudaDevAttrMaxBlockDimX, p.maxThreadsDim[0], "MaxBlockDimX"},
      {cudaDevAttrMaxBlockDimZ, p.maxThreadsDim[2], "MaxBlockDimZ"},
      {cudaDevAttrMaxGridDimX, p.maxGridSize[0], "MaxGridDimX"},
      {cudaDevAttrMaxGridDimY, p.maxGridSize[1], "MaxGridDimY"},
      {cudaDevAttrMaxSharedMemoryPerBlock, (long)p.sharedMemPerBlock, "MaxSharedMemoryPerBlock"},
      {cudaDevAttrTotalConstantMemory, (long)p.totalConstMem, "TotalConstantMemory"},
      {cudaDevAttrWarpSize, p.warpSize, "WarpSize"},
      {cudaDevAttrMaxRegistersPerBlock, p.regsPerBlock, "MaxRegistersPerBlock"},
      {cudaDevAttrMultiProcessorCount, p.multiProcessorCount, "MultiProcessorCount"},
      {cudaDevAttrIntegrated, p.integrated, "Integrated"},
      {cudaDevAttrCanMapHostMemory, p.canMapHostMemory, "CanMapHostMemory"},
      {cudaDevAttrMaxTexture1DWidth, p.maxTexture1D, "MaxTexture1DWidth"},
      {cudaDevAttrMaxTexture2DWidth, p.maxTexture2D[0], "MaxTexture2DWidth"},
      {cudaDevAttrMaxTexture3DDepth, p.maxTexture3D[2], "MaxTexture3DDepth"},
      {cudaDevAttrMaxSurface2DWidth, p.maxSurface2D[0], "MaxSurface2DWidth"},
      {cudaDevAttrConcurrentKernels, p.concurrentKernels, "ConcurrentKernels"},
      {cudaDevAttrEccEnabled, p.ECCEnabled, "EccEnabled"},
      {cudaDevAttrPciBusId, p.pciBusID, "PciBusId"},
      {cudaDevAttrTccDriver, p.tccDriver, "TccDriver"},
      {cudaDevAttrGlobalMemoryBusWidth, p.memoryBusWidth, "GlobalMemoryBusWidth"},
      {cudaDevAttrL2CacheSize, p.l2CacheSize, "L2CacheSize"},
      {cudaDevAttrMaxThreadsPerMultiProcessor, p.maxThreadsPerMultiProcessor,
       "MaxThreadsPerMultiProcessor"},
      {cudaDevAttrAsyncEngineCount, p.asyncEngineCount, "AsyncEngineCount"},
      {cudaDevAttrUnifiedAddressing, p.unifiedAddressing, "UnifiedAddressing"},
      {cudaDevAttrComputeCapabilityMajor, p.major, "ComputeCapabilityMajor"},
      {cudaDevAttrComputeCapabilityMinor, p.minor, "ComputeCapabilityMinor"},
      {cudaDevAttrStreamPrioritiesSupported, p.streamPrioritiesSupported,
       "StreamPrioritiesSupported"},
      {cudaDevAttrMaxSharedMemoryPerMultiprocessor, (long)p.sharedMemPerMultiprocessor,
       "MaxSharedMemoryPerMultiprocessor"},
      {cudaDevAttrMaxRegistersPerMultiprocessor, p.regsPerMultiprocessor,
       "MaxRegistersPerMultiprocessor"},
      {cudaDevAttrManagedMemory, p.managedMemory, "ManagedMemory"},
      {cudaDevAttrIsMultiGpuBoard, p.isMultiGpuBoard, "IsMultiGpuBoard"},
      {cudaDevAttrHostNativeAtomicSupported, p.hostNativeAtomicSupported,
       "HostNativeAtomicSupported"},
      {cudaDevAttrPageableMemoryAccess, p.pageableMemoryAccess, "PageableMemoryAccess"},
      {cudaDevAttrConcurrentManagedAccess, p.concurrentManagedAccess, "ConcurrentManagedAccess"},
      {cudaDevAttrCanUseHostPointerForRegisteredMem, p.canUseHostPointerForRegisteredMem,
       "CanUseHostPointerForRegisteredMem"},
      {cudaDevAttrCooperativeLaunch, p.cooperativeLaunch, "CooperativeLaunch"},
      {cudaDevAttrMaxSharedMemoryPerBlockOptin, (long)p.sharedMemPerBlockOptin,
       "MaxSharedMemoryPerBlockOptin"},
      {cudaDevAttrHostRegisterSupported, p.hostRegisterSupported, "HostRegisterSupported"},
      {cudaDevAttrDirectManagedMemAccessFromHost, p.directManagedMemAccessFromHost,
       "DirectManagedMemAccessFromHost"},
      {cudaDevAttrMaxBlocksPerMultiprocessor, p.maxBlocksPerMultiProcessor,
       "MaxBlocksPerMultiprocessor"},
      {cudaDevAttrMaxPersistingL2CacheSize, p.persistingL2CacheMaxSize,
       "MaxPersistingL2CacheSize"},
      {cudaDevAttrMaxAccessPolicyWindowSize, p.accessPolicyMaxWindowSize,
       "MaxAccessPolicyWindowSize"},
      {cudaDevAttrReservedSharedMemoryPerBlock, (long)p.reservedSharedMemPerBlock,
       "ReservedSharedMemoryPerBlock"},
      {cudaDevAttrMemoryPoolsSupported, p.memoryPoolsSupported, "MemoryPoolsSupported"},
      {cudaDevAttrClusterLaunch, p.clusterLaunch, "ClusterLaunch"},
  };
  for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
    int v = -12345;
    CHECK(cudaDeviceGetAttribute(&v, at[i].a, 0));
    EXPECT(v == at[i].want, "cudaDevAttr%s is %d, the property %ld", at[i].n, v, at[i].want);
  }
  int v = 0;
  CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrClockRate, 0));
  EXPECT(v > 0, "a clock rate");
  EXPECT_ERR(cudaDeviceGetAttribute(&v, cudaDevAttrWarpSize, 3), cudaErrorInvalidDevice);
  EXPECT_ERR(cudaDeviceGetAttribute(&v, (cudaDeviceAttr)100000, 0), cudaErrorInvalidValue);

  /* limits read back as set */
  size_t lim = 0;
  CHECK(cudaDeviceGetLimit(&lim, cudaLimitMallocHeapSize));
  EXPECT(lim == 8 << 20, "the default malloc heap is 8 MiB: %zu", lim);
  CHECK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 64 << 20));
  CHECK(cudaDeviceSetLimit(cudaLimitStackSize, 4096));
  CHECK(cudaDeviceGetLimit(&lim, cudaLimitMallocHeapSize));
  EXPECT(lim == 64 << 20, "cudaLimitMallocHeapSize reads back: %zu", lim);
  CHECK(cudaDeviceGetLimit(&lim, cudaLimitStackSize));
  EXPECT(lim == 4096, "cudaLimitStackSize reads back: %zu", lim);
  EXPECT_ERR(cudaDeviceSetLimit((cudaLimit)99, 1), cudaErrorUnsupportedLimit);

  int rv = 0, dv = 0;
  CHECK(cudaRuntimeGetVersion(&rv));
  CHECK(cudaDriverGetVersion(&dv));
  EXPECT(rv >= 13000 && dv >= rv, "runtime %d, driver %d", rv, dv);

  /* one device: no peers */
  int can = -1;
  CHECK(cudaDeviceCanAccessPeer(&can, 0, 0));
  EXPECT(can == 0, "a device is not its own peer");
  EXPECT_ERR(cudaDeviceCanAccessPeer(&can, 0, 1), cudaErrorInvalidDevice);
  EXPECT_ERR(cudaDeviceEnablePeerAccess(1, 0), cudaErrorInvalidDevice);
  EXPECT_ERR(cudaDeviceDisablePeerAccess(0), cudaErrorPeerAccessNotEnabled);
  char bus[32] = "";
  CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, 0));
  int back = -1;
  CHECK(cudaDeviceGetByPCIBusId(&back, bus));
  EXPECT(back == 0, "the device's PCI bus id %s names it", bus);
  cudaSharedMemConfig smc;
  CHECK(cudaDeviceGetSharedMemConfig(&smc));
  EXPECT(smc == cudaSharedMemBankSizeFourByte, "4-byte shared memory banks");
  CHECK(cudaDeviceSetCacheConfig(cudaFuncCachePreferShared));
  CHECK(cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync));

  /* error names and the runtime's messages */
  EXPECT(!strcmp(cudaGetErrorName(cudaErrorInvalidValue), "cudaErrorInvalidValue"), "a name");
  EXPECT(!strcmp(cudaGetErrorString(cudaErrorMemoryAllocation), "out of memory"), "oom");
  EXPECT(!strcmp(cudaGetErrorString(cudaErrorIllegalAddress),
                 "an illegal memory access was encountered"),
         "illegal address: %s", cudaGetErrorString(cudaErrorIllegalAddress));
  EXPECT(!strcmp(cudaGetErrorString(cudaErrorAssert), "device-side assert triggered"),
         "assert: %s", cudaGetErrorString(cudaErrorAssert));
  EXPECT(!strcmp(cudaGetErrorString(cudaErrorLaunchFailure), "unspecified launch failure"),
         "launch failure: %s", cudaGetErrorString(cudaErrorLaunchFailure));
  EXPECT(!strcmp(cudaGetErrorString((cudaError_t)12345), "unrecognized error code"), "unknown");

  /* an allocation too large is an error, and not sticky */
  void *big = NULL;
  EXPECT_ERR(cudaMalloc(&big, (size_t)1 << 50), cudaErrorMemoryAllocation);
  EXPECT(cudaGetLastError() == cudaSuccess, "an allocation failure is not sticky");
  EXPECT_ERR(cudaFree((void *)0x1234), cudaErrorInvalidValue);
  CHECK(cudaDeviceSynchronize());
  DONE("device");
}
