/*
 * rt_unsup.c -- the CUDA runtime entry points the cudart replacement does
 * not implement, and the per-thread default stream names.
 *
 * What: every function cuda_runtime_api.h declares is exported, so that a
 * program calling one that kcast cannot emulate gets an answer instead of
 * dying in the dynamic linker ("symbol lookup error", exit 127, before or
 * in the middle of its run).  Each entry point listed here returns
 * cudaErrorNotSupported (also as the last error), is named on stderr the
 * first time as "unsupported: NAME (what it belongs to)" and writes an
 * `unsupported` record, so that `kcast run` fails the run (exit status 6)
 * and names the call even when the program ignores the error: a program
 * that went on without the call may not compute what it does on a GPU.
 *
 * Why these: each list is a whole area the emulation has no counterpart
 * for (processes sharing device memory, graphics and external APIs, the
 * driver API behind the runtime, mipmapped and sparse arrays, thread block
 * clusters) or that is not implemented yet (graphs, batched copies).  The
 * lists carry each function's parameters from the CUDA 13 header so that
 * the compiler checks them against it; tests/test_run.c checks that every
 * function the header declares is exported.
 *
 * Per-thread default stream: a program built with `nvcc --default-stream
 * per-thread` calls NAME_ptds / NAME_ptsz (cuda_runtime_api.h,
 * __CUDART_API_PTDS); every operation completes before its call returns,
 * so they are the same functions: rt_ptds.ld defines each as an alias.
 */
#include "runtime/cudart/rt_cudart.h"

/* X(name, (typed params)) */
#define RT_GRAPH_LIST(X)                                                                          \
  X(cudaDeviceGetGraphMemAttribute,                                                               \
    (int device, enum cudaGraphMemAttributeType attr, void *value))                               \
  X(cudaDeviceGraphMemTrim, (int device))                                                         \
  X(cudaDeviceSetGraphMemAttribute,                                                               \
    (int device, enum cudaGraphMemAttributeType attr, void *value))                               \
  X(cudaGraphAddChildGraphNode,                                                                   \
    (cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *pDependencies,        \
     size_t numDependencies, cudaGraph_t childGraph))                                             \
  X(cudaGraphAddDependencies,                                                                     \
    (cudaGraph_t graph, const cudaGraphNode_t *from, const cudaGraphNode_t *to,                   \
     const cudaGraphEdgeData *edgeData, size_t numDependencies))                                  \
  X(cudaGraphAddEmptyNode,                                                                        \
    (cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *pDependencies,        \
     size_t numDependencies))                                                                     \
  X(cudaGraphAddEventRecordNode,                                                                  \
    (cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *pDependencies,        \
     size_t numDependencies, cudaEvent_t event))                                                  \
  X(cudaGraphAddEventWaitNode,                                                                    \
    (cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *pDependencies,        \
     size_t numDependencies, cudaEvent_t event))                                                  \
  X(cudaGraphAddExternalSemaphoresSignalNode,                                                     \
    (cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *pDependencies,        \
     size_t numDependencies, const struct cudaExternalSemaphoreSignalNodeParams *nodeParams))     \
  X(cudaGraphAddExternalSemaphoresWaitNode,                                                       \
    (cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *pDependencies,        \
     size_t numDependencies, const struct cudaExternalSemaphoreWaitNodeParams *nodeParams))       \
  X(cudaGraphAddHostNode,                                                                         \
    (cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *pDependencies,        \
     size_t numDependencies, const struct cudaHostNodeParams *pNodeParams))                       \
  X(cudaGraphAddKernelNode,                                                                       \
    (cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *pDependencies,        \
     size_t numDependencies, const struct cudaKernelNodeParams *pNodeParams))                     \
  X(cudaGraphAddMemAllocNode,                                                                     \
    (cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *pDependencies,        \
     size_t numDependencies, struct cudaMemAllocNodeParams *nodeParams))                          \
  X(cudaGraphAddMemFreeNode,                                                                      \
    (cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *pDependencies,        \
     size_t numDependencies, void *dptr))                                                         \
  X(cudaGraphAddMemcpyNode,                                                                       \
    (cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *pDependencies,        \
     size_t numDependencies, const struct cudaMemcpy3DParms *pCopyParams))                        \
  X(cudaGraphAddMemcpyNode1D,                                                                     \
    (cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *pDependencies,        \
     size_t numDependencies, void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)) \
  X(cudaGraphAddMemcpyNodeFromSymbol,                                                             \
    (cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *pDependencies,        \
     size_t numDependencies, void *dst, const void *symbol, size_t count, size_t offset,          \
     enum cudaMemcpyKind kind))                                                                   \
  X(cudaGraphAddMemcpyNodeToSymbol,                                                               \
    (cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *pDependencies,        \
     size_t numDependencies, const void *symbol, const void *src, size_t count, size_t offset,    \
     enum cudaMemcpyKind kind))                                                                   \
  X(cudaGraphAddMemsetNode,                                                                       \
    (cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *pDependencies,        \
     size_t numDependencies, const struct cudaMemsetParams *pMemsetParams))                       \
  X(cudaGraphAddNode,                                                                             \
    (cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *pDependencies,        \
     const cudaGraphEdgeData *dependencyData, size_t numDependencies,                             \
     struct cudaGraphNodeParams *nodeParams))                                                     \
  X(cudaGraphChildGraphNodeGetGraph, (cudaGraphNode_t node, cudaGraph_t *pGraph))                 \
  X(cudaGraphClone, (cudaGraph_t *pGraphClone, cudaGraph_t originalGraph))                        \
  X(cudaGraphConditionalHandleCreate,                                                             \
    (cudaGraphConditionalHandle *pHandle_out, cudaGraph_t graph, unsigned int defaultLaunchValue, \
     unsigned int flags))                                                                         \
  X(cudaGraphCreate, (cudaGraph_t *pGraph, unsigned int flags))                                   \
  X(cudaGraphDebugDotPrint, (cudaGraph_t graph, const char *path, unsigned int flags))            \
  X(cudaGraphDestroy, (cudaGraph_t graph))                                                        \
  X(cudaGraphDestroyNode, (cudaGraphNode_t node))                                                 \
  X(cudaGraphEventRecordNodeGetEvent, (cudaGraphNode_t node, cudaEvent_t *event_out))             \
  X(cudaGraphEventRecordNodeSetEvent, (cudaGraphNode_t node, cudaEvent_t event))                  \
  X(cudaGraphEventWaitNodeGetEvent, (cudaGraphNode_t node, cudaEvent_t *event_out))               \
  X(cudaGraphEventWaitNodeSetEvent, (cudaGraphNode_t node, cudaEvent_t event))                    \
  X(cudaGraphExecChildGraphNodeSetParams,                                                         \
    (cudaGraphExec_t hGraphExec, cudaGraphNode_t node, cudaGraph_t childGraph))                   \
  X(cudaGraphExecDestroy, (cudaGraphExec_t graphExec))                                            \
  X(cudaGraphExecEventRecordNodeSetEvent,                                                         \
    (cudaGraphExec_t hGraphExec, cudaGraphNode_t hNode, cudaEvent_t event))                       \
  X(cudaGraphExecEventWaitNodeSetEvent,                                                           \
    (cudaGraphExec_t hGraphExec, cudaGraphNode_t hNode, cudaEvent_t event))                       \
  X(cudaGraphExecExternalSemaphoresSignalNodeSetParams,                                           \
    (cudaGraphExec_t hGraphExec, cudaGraphNode_t hNode,                                           \
     const struct cudaExternalSemaphoreSignalNodeParams *nodeParams))                             \
  X(cudaGraphExecExternalSemaphoresWaitNodeSetParams,                                             \
    (cudaGraphExec_t hGraphExec, cudaGraphNode_t hNode,                                           \
     const struct cudaExternalSemaphoreWaitNodeParams *nodeParams))                               \
  X(cudaGraphExecGetFlags, (cudaGraphExec_t graphExec, unsigned long long *flags))                \
  X(cudaGraphExecHostNodeSetParams,                                                               \
    (cudaGraphExec_t hGraphExec, cudaGraphNode_t node,                                            \
     const struct cudaHostNodeParams *pNodeParams))                                               \
  X(cudaGraphExecKernelNodeSetParams,                                                             \
    (cudaGraphExec_t hGraphExec, cudaGraphNode_t node,                                            \
     const struct cudaKernelNodeParams *pNodeParams))                                             \
  X(cudaGraphExecMemcpyNodeSetParams,                                                             \
    (cudaGraphExec_t hGraphExec, cudaGraphNode_t node,                                            \
     const struct cudaMemcpy3DParms *pNodeParams))                                                \
  X(cudaGraphExecMemcpyNodeSetParams1D,                                                           \
    (cudaGraphExec_t hGraphExec, cudaGraphNode_t node, void *dst, const void *src, size_t count,  \
     enum cudaMemcpyKind kind))                                                                   \
  X(cudaGraphExecMemcpyNodeSetParamsFromSymbol,                                                   \
    (cudaGraphExec_t hGraphExec, cudaGraphNode_t node, void *dst, const void *symbol,             \
     size_t count, size_t offset, enum cudaMemcpyKind kind))                                      \
  X(cudaGraphExecMemcpyNodeSetParamsToSymbol,                                                     \
    (cudaGraphExec_t hGraphExec, cudaGraphNode_t node, const void *symbol, const void *src,       \
     size_t count, size_t offset, enum cudaMemcpyKind kind))                                      \
  X(cudaGraphExecMemsetNodeSetParams,                                                             \
    (cudaGraphExec_t hGraphExec, cudaGraphNode_t node,                                            \
     const struct cudaMemsetParams *pNodeParams))                                                 \
  X(cudaGraphExecNodeSetParams,                                                                   \
    (cudaGraphExec_t graphExec, cudaGraphNode_t node, struct cudaGraphNodeParams *nodeParams))    \
  X(cudaGraphExecUpdate,                                                                          \
    (cudaGraphExec_t hGraphExec, cudaGraph_t hGraph, cudaGraphExecUpdateResultInfo *resultInfo))  \
  X(cudaGraphExternalSemaphoresSignalNodeGetParams,                                               \
    (cudaGraphNode_t hNode, struct cudaExternalSemaphoreSignalNodeParams *params_out))            \
  X(cudaGraphExternalSemaphoresSignalNodeSetParams,                                               \
    (cudaGraphNode_t hNode, const struct cudaExternalSemaphoreSignalNodeParams *nodeParams))      \
  X(cudaGraphExternalSemaphoresWaitNodeGetParams,                                                 \
    (cudaGraphNode_t hNode, struct cudaExternalSemaphoreWaitNodeParams *params_out))              \
  X(cudaGraphExternalSemaphoresWaitNodeSetParams,                                                 \
    (cudaGraphNode_t hNode, const struct cudaExternalSemaphoreWaitNodeParams *nodeParams))        \
  X(cudaGraphGetEdges,                                                                            \
    (cudaGraph_t graph, cudaGraphNode_t *from, cudaGraphNode_t *to, cudaGraphEdgeData *edgeData,  \
     size_t *numEdges))                                                                           \
  X(cudaGraphGetNodes, (cudaGraph_t graph, cudaGraphNode_t *nodes, size_t *numNodes))             \
  X(cudaGraphGetRootNodes,                                                                        \
    (cudaGraph_t graph, cudaGraphNode_t *pRootNodes, size_t *pNumRootNodes))                      \
  X(cudaGraphHostNodeGetParams, (cudaGraphNode_t node, struct cudaHostNodeParams *pNodeParams))   \
  X(cudaGraphHostNodeSetParams,                                                                   \
    (cudaGraphNode_t node, const struct cudaHostNodeParams *pNodeParams))                         \
  X(cudaGraphInstantiate,                                                                         \
    (cudaGraphExec_t *pGraphExec, cudaGraph_t graph, unsigned long long flags))                   \
  X(cudaGraphInstantiateWithFlags,                                                                \
    (cudaGraphExec_t *pGraphExec, cudaGraph_t graph, unsigned long long flags))                   \
  X(cudaGraphInstantiateWithParams,                                                               \
    (cudaGraphExec_t *pGraphExec, cudaGraph_t graph,                                              \
     cudaGraphInstantiateParams *instantiateParams))                                              \
  X(cudaGraphKernelNodeCopyAttributes, (cudaGraphNode_t hDst, cudaGraphNode_t hSrc))              \
  X(cudaGraphKernelNodeGetAttribute,                                                              \
    (cudaGraphNode_t hNode, cudaKernelNodeAttrID attr, cudaKernelNodeAttrValue *value_out))       \
  X(cudaGraphKernelNodeGetParams,                                                                 \
    (cudaGraphNode_t node, struct cudaKernelNodeParams *pNodeParams))                             \
  X(cudaGraphKernelNodeSetAttribute,                                                              \
    (cudaGraphNode_t hNode, cudaKernelNodeAttrID attr, const cudaKernelNodeAttrValue *value))     \
  X(cudaGraphKernelNodeSetParams,                                                                 \
    (cudaGraphNode_t node, const struct cudaKernelNodeParams *pNodeParams))                       \
  X(cudaGraphLaunch, (cudaGraphExec_t graphExec, cudaStream_t stream))                            \
  X(cudaGraphMemAllocNodeGetParams,                                                               \
    (cudaGraphNode_t node, struct cudaMemAllocNodeParams *params_out))                            \
  X(cudaGraphMemFreeNodeGetParams, (cudaGraphNode_t node, void *dptr_out))                        \
  X(cudaGraphMemcpyNodeGetParams, (cudaGraphNode_t node, struct cudaMemcpy3DParms *pNodeParams))  \
  X(cudaGraphMemcpyNodeSetParams,                                                                 \
    (cudaGraphNode_t node, const struct cudaMemcpy3DParms *pNodeParams))                          \
  X(cudaGraphMemcpyNodeSetParams1D,                                                               \
    (cudaGraphNode_t node, void *dst, const void *src, size_t count, enum cudaMemcpyKind kind))   \
  X(cudaGraphMemcpyNodeSetParamsFromSymbol,                                                       \
    (cudaGraphNode_t node, void *dst, const void *symbol, size_t count, size_t offset,            \
     enum cudaMemcpyKind kind))                                                                   \
  X(cudaGraphMemcpyNodeSetParamsToSymbol,                                                         \
    (cudaGraphNode_t node, const void *symbol, const void *src, size_t count, size_t offset,      \
     enum cudaMemcpyKind kind))                                                                   \
  X(cudaGraphMemsetNodeGetParams, (cudaGraphNode_t node, struct cudaMemsetParams *pNodeParams))   \
  X(cudaGraphMemsetNodeSetParams,                                                                 \
    (cudaGraphNode_t node, const struct cudaMemsetParams *pNodeParams))                           \
  X(cudaGraphNodeFindInClone,                                                                     \
    (cudaGraphNode_t *pNode, cudaGraphNode_t originalNode, cudaGraph_t clonedGraph))              \
  X(cudaGraphNodeGetDependencies,                                                                 \
    (cudaGraphNode_t node, cudaGraphNode_t *pDependencies, cudaGraphEdgeData *edgeData,           \
     size_t *pNumDependencies))                                                                   \
  X(cudaGraphNodeGetDependentNodes,                                                               \
    (cudaGraphNode_t node, cudaGraphNode_t *pDependentNodes, cudaGraphEdgeData *edgeData,         \
     size_t *pNumDependentNodes))                                                                 \
  X(cudaGraphNodeGetEnabled,                                                                      \
    (cudaGraphExec_t hGraphExec, cudaGraphNode_t hNode, unsigned int *isEnabled))                 \
  X(cudaGraphNodeGetType, (cudaGraphNode_t node, enum cudaGraphNodeType *pType))                  \
  X(cudaGraphNodeSetEnabled,                                                                      \
    (cudaGraphExec_t hGraphExec, cudaGraphNode_t hNode, unsigned int isEnabled))                  \
  X(cudaGraphNodeSetParams, (cudaGraphNode_t node, struct cudaGraphNodeParams *nodeParams))       \
  X(cudaGraphReleaseUserObject, (cudaGraph_t graph, cudaUserObject_t object, unsigned int count)) \
  X(cudaGraphRemoveDependencies,                                                                  \
    (cudaGraph_t graph, const cudaGraphNode_t *from, const cudaGraphNode_t *to,                   \
     const cudaGraphEdgeData *edgeData, size_t numDependencies))                                  \
  X(cudaGraphRetainUserObject,                                                                    \
    (cudaGraph_t graph, cudaUserObject_t object, unsigned int count, unsigned int flags))         \
  X(cudaGraphUpload, (cudaGraphExec_t graphExec, cudaStream_t stream))                            \
  X(cudaStreamBeginCapture, (cudaStream_t stream, enum cudaStreamCaptureMode mode))               \
  X(cudaStreamBeginCaptureToGraph,                                                                \
    (cudaStream_t stream, cudaGraph_t graph, const cudaGraphNode_t *dependencies,                 \
     const cudaGraphEdgeData *dependencyData, size_t numDependencies,                             \
     enum cudaStreamCaptureMode mode))                                                            \
  X(cudaStreamEndCapture, (cudaStream_t stream, cudaGraph_t *pGraph))                             \
  X(cudaStreamUpdateCaptureDependencies,                                                          \
    (cudaStream_t stream, cudaGraphNode_t *dependencies, const cudaGraphEdgeData *dependencyData, \
     size_t numDependencies, unsigned int flags))                                                 \
  X(cudaUserObjectCreate,                                                                         \
    (cudaUserObject_t *object_out, void *ptr, cudaHostFn_t destroy, unsigned int initialRefcount, \
     unsigned int flags))                                                                         \
  X(cudaUserObjectRelease, (cudaUserObject_t object, unsigned int count))                         \
  X(cudaUserObjectRetain, (cudaUserObject_t object, unsigned int count))

#define RT_IPC_LIST(X)                                                                            \
  X(cudaIpcCloseMemHandle, (void *devPtr))                                                        \
  X(cudaIpcGetEventHandle, (cudaIpcEventHandle_t *handle, cudaEvent_t event))                     \
  X(cudaIpcGetMemHandle, (cudaIpcMemHandle_t *handle, void *devPtr))                              \
  X(cudaIpcOpenEventHandle, (cudaEvent_t *event, cudaIpcEventHandle_t handle))                    \
  X(cudaIpcOpenMemHandle, (void **devPtr, cudaIpcMemHandle_t handle, unsigned int flags))         \
  X(cudaMemPoolExportPointer, (struct cudaMemPoolPtrExportData *exportData, void *ptr))           \
  X(cudaMemPoolExportToShareableHandle,                                                           \
    (void *shareableHandle, cudaMemPool_t memPool, enum cudaMemAllocationHandleType handleType,   \
     unsigned int flags))                                                                         \
  X(cudaMemPoolImportFromShareableHandle,                                                         \
    (cudaMemPool_t *memPool, void *shareableHandle, enum cudaMemAllocationHandleType handleType,  \
     unsigned int flags))                                                                         \
  X(cudaMemPoolImportPointer,                                                                     \
    (void **ptr, cudaMemPool_t memPool, struct cudaMemPoolPtrExportData *exportData))

#define RT_INTEROP_LIST(X)                                                                        \
  X(cudaDestroyExternalMemory, (cudaExternalMemory_t extMem))                                     \
  X(cudaDestroyExternalSemaphore, (cudaExternalSemaphore_t extSem))                               \
  X(cudaDeviceGetNvSciSyncAttributes, (void *nvSciSyncAttrList, int device, int flags))           \
  X(cudaExternalMemoryGetMappedBuffer,                                                            \
    (void **devPtr, cudaExternalMemory_t extMem,                                                  \
     const struct cudaExternalMemoryBufferDesc *bufferDesc))                                      \
  X(cudaExternalMemoryGetMappedMipmappedArray,                                                    \
    (cudaMipmappedArray_t *mipmap, cudaExternalMemory_t extMem,                                   \
     const struct cudaExternalMemoryMipmappedArrayDesc *mipmapDesc))                              \
  X(cudaGraphicsMapResources,                                                                     \
    (int count, cudaGraphicsResource_t *resources, cudaStream_t stream))                          \
  X(cudaGraphicsResourceGetMappedMipmappedArray,                                                  \
    (cudaMipmappedArray_t *mipmappedArray, cudaGraphicsResource_t resource))                      \
  X(cudaGraphicsResourceGetMappedPointer,                                                         \
    (void **devPtr, size_t *size, cudaGraphicsResource_t resource))                               \
  X(cudaGraphicsResourceSetMapFlags, (cudaGraphicsResource_t resource, unsigned int flags))       \
  X(cudaGraphicsSubResourceGetMappedArray,                                                        \
    (cudaArray_t *array, cudaGraphicsResource_t resource, unsigned int arrayIndex,                \
     unsigned int mipLevel))                                                                      \
  X(cudaGraphicsUnmapResources,                                                                   \
    (int count, cudaGraphicsResource_t *resources, cudaStream_t stream))                          \
  X(cudaGraphicsUnregisterResource, (cudaGraphicsResource_t resource))                            \
  X(cudaImportExternalMemory,                                                                     \
    (cudaExternalMemory_t *extMem_out, const struct cudaExternalMemoryHandleDesc *memHandleDesc)) \
  X(cudaImportExternalSemaphore,                                                                  \
    (cudaExternalSemaphore_t *extSem_out,                                                         \
     const struct cudaExternalSemaphoreHandleDesc *semHandleDesc))                                \
  X(cudaSignalExternalSemaphoresAsync,                                                            \
    (const cudaExternalSemaphore_t *extSemArray,                                                  \
     const struct cudaExternalSemaphoreSignalParams *paramsArray, unsigned int numExtSems,        \
     cudaStream_t stream))                                                                        \
  X(cudaWaitExternalSemaphoresAsync,                                                              \
    (const cudaExternalSemaphore_t *extSemArray,                                                  \
     const struct cudaExternalSemaphoreWaitParams *paramsArray, unsigned int numExtSems,          \
     cudaStream_t stream))

#define RT_DRIVER_LIST(X)                                                                         \
  X(cudaGetDriverEntryPoint,                                                                      \
    (const char *symbol, void **funcPtr, unsigned long long flags,                                \
     enum cudaDriverEntryPointQueryResult *driverStatus))                                         \
  X(cudaGetDriverEntryPointByVersion,                                                             \
    (const char *symbol, void **funcPtr, unsigned int cudaVersion, unsigned long long flags,      \
     enum cudaDriverEntryPointQueryResult *driverStatus))                                         \
  X(cudaGetExportTable, (const void **ppExportTable, const cudaUUID_t *pExportTableId))           \
  X(cudaGetFuncBySymbol, (cudaFunction_t *functionPtr, const void *symbolPtr))                    \
  X(cudaLibraryEnumerateKernels,                                                                  \
    (cudaKernel_t *kernels, unsigned int numKernels, cudaLibrary_t lib))                          \
  X(cudaLibraryGetGlobal, (void **dptr, size_t *bytes, cudaLibrary_t library, const char *name))  \
  X(cudaLibraryGetKernel, (cudaKernel_t *pKernel, cudaLibrary_t library, const char *name))       \
  X(cudaLibraryGetKernelCount, (unsigned int *count, cudaLibrary_t lib))                          \
  X(cudaLibraryGetManaged, (void **dptr, size_t *bytes, cudaLibrary_t library, const char *name)) \
  X(cudaLibraryGetUnifiedFunction, (void **fptr, cudaLibrary_t library, const char *symbol))      \
  X(cudaLibraryLoadData,                                                                          \
    (cudaLibrary_t *library, const void *code, enum cudaJitOption *jitOptions,                    \
     void **jitOptionsValues, unsigned int numJitOptions, enum cudaLibraryOption *libraryOptions, \
     void** libraryOptionValues, unsigned int numLibraryOptions))                                 \
  X(cudaLibraryLoadFromFile,                                                                      \
    (cudaLibrary_t *library, const char *fileName, enum cudaJitOption *jitOptions,                \
     void **jitOptionsValues, unsigned int numJitOptions, enum cudaLibraryOption *libraryOptions, \
     void **libraryOptionValues, unsigned int numLibraryOptions))                                 \
  X(cudaLibraryUnload, (cudaLibrary_t library))

#define RT_ARRAY_LIST(X)                                                                          \
  X(cudaArrayGetMemoryRequirements,                                                               \
    (struct cudaArrayMemoryRequirements *memoryRequirements, cudaArray_t array, int device))      \
  X(cudaArrayGetPlane, (cudaArray_t *pPlaneArray, cudaArray_t hArray, unsigned int planeIdx))     \
  X(cudaArrayGetSparseProperties,                                                                 \
    (struct cudaArraySparseProperties *sparseProperties, cudaArray_t array))                      \
  X(cudaFreeMipmappedArray, (cudaMipmappedArray_t mipmappedArray))                                \
  X(cudaGetMipmappedArrayLevel,                                                                   \
    (cudaArray_t *levelArray, cudaMipmappedArray_const_t mipmappedArray, unsigned int level))     \
  X(cudaGetTextureObjectResourceViewDesc,                                                         \
    (struct cudaResourceViewDesc *pResViewDesc, cudaTextureObject_t texObject))                   \
  X(cudaMallocMipmappedArray,                                                                     \
    (cudaMipmappedArray_t *mipmappedArray, const struct cudaChannelFormatDesc *desc,              \
     struct cudaExtent extent, unsigned int numLevels, unsigned int flags))                       \
  X(cudaMipmappedArrayGetMemoryRequirements,                                                      \
    (struct cudaArrayMemoryRequirements *memoryRequirements, cudaMipmappedArray_t mipmap,         \
     int device))                                                                                 \
  X(cudaMipmappedArrayGetSparseProperties,                                                        \
    (struct cudaArraySparseProperties *sparseProperties, cudaMipmappedArray_t mipmap))

#define RT_BATCH_LIST(X)                                                                          \
  X(cudaMemDiscardAndPrefetchBatchAsync,                                                          \
    (void **dptrs, size_t *sizes, size_t count, struct cudaMemLocation *prefetchLocs,             \
     size_t *prefetchLocIdxs, size_t numPrefetchLocs, unsigned long long flags,                   \
     cudaStream_t stream))                                                                        \
  X(cudaMemDiscardBatchAsync,                                                                     \
    (void **dptrs, size_t *sizes, size_t count, unsigned long long flags, cudaStream_t stream))   \
  X(cudaMemPrefetchBatchAsync,                                                                    \
    (void **dptrs, size_t *sizes, size_t count, struct cudaMemLocation *prefetchLocs,             \
     size_t *prefetchLocIdxs, size_t numPrefetchLocs, unsigned long long flags,                   \
     cudaStream_t stream))                                                                        \
  X(cudaMemRangeGetAttribute,                                                                     \
    (void *data, size_t dataSize, enum cudaMemRangeAttribute attribute, const void *devPtr,       \
     size_t count))                                                                               \
  X(cudaMemRangeGetAttributes,                                                                    \
    (void **data, size_t *dataSizes, enum cudaMemRangeAttribute *attributes,                      \
     size_t numAttributes, const void *devPtr, size_t count))                                     \
  X(cudaMemcpy3DBatchAsync,                                                                       \
    (size_t numOps, struct cudaMemcpy3DBatchOp *opList, unsigned long long flags,                 \
     cudaStream_t stream))                                                                        \
  X(cudaMemcpyBatchAsync,                                                                         \
    (void *const *dsts, const void *const *srcs, const size_t *sizes, size_t count,               \
     struct cudaMemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs,                      \
     cudaStream_t stream))

#define RT_MISC_LIST(X)                                                                           \
  X(cudaDeviceGetHostAtomicCapabilities,                                                          \
    (unsigned int *capabilities, const enum cudaAtomicOperation *operations, unsigned int count,  \
     int device))                                                                                 \
  X(cudaDeviceGetP2PAtomicCapabilities,                                                           \
    (unsigned int *capabilities, const enum cudaAtomicOperation *operations, unsigned int count,  \
     int srcDevice, int dstDevice))                                                               \
  X(cudaDeviceRegisterAsyncNotification,                                                          \
    (int device, cudaAsyncCallback callbackFunc, void *userData,                                  \
     cudaAsyncCallbackHandle_t *callback))                                                        \
  X(cudaDeviceUnregisterAsyncNotification, (int device, cudaAsyncCallbackHandle_t callback))      \
  X(cudaLogsCurrent, (cudaLogIterator *iterator_out, unsigned int flags))                         \
  X(cudaLogsDumpToFile, (cudaLogIterator *iterator, const char *pathToFile, unsigned int flags))  \
  X(cudaLogsDumpToMemory,                                                                         \
    (cudaLogIterator *iterator, char *buffer, size_t *size, unsigned int flags))                  \
  X(cudaLogsRegisterCallback,                                                                     \
    (cudaLogsCallback_t callbackFunc, void *userData, cudaLogsCallbackHandle *callback_out))      \
  X(cudaLogsUnregisterCallback, (cudaLogsCallbackHandle callback))                                \
  X(cudaOccupancyMaxActiveClusters,                                                               \
    (int *numClusters, const void *func, const cudaLaunchConfig_t *launchConfig))                 \
  X(cudaOccupancyMaxPotentialClusterSize,                                                         \
    (int *clusterSize, const void *func, const cudaLaunchConfig_t *launchConfig))
#define RT_DEFINE_UNSUPPORTED(name, params, what) \
  cudaError_t CUDARTAPI name params {             \
    static int once;                              \
    return rt_unsupported(#name, what, &once);    \
  }
#define RT_GRAPH(name, params) RT_DEFINE_UNSUPPORTED(name, params, "CUDA graphs and stream capture")
#define RT_IPC(name, params) \
  RT_DEFINE_UNSUPPORTED(name, params, "memory shared between processes, IPC")
#define RT_INTEROP(name, params) \
  RT_DEFINE_UNSUPPORTED(name, params, "graphics and external memory interoperability")
#define RT_DRIVER(name, params) \
  RT_DEFINE_UNSUPPORTED(name, params, "the driver API and code loaded at run time")
#define RT_ARRAY(name, params) \
  RT_DEFINE_UNSUPPORTED(name, params, "mipmapped, sparse and planar arrays, resource views")
#define RT_BATCH(name, params) \
  RT_DEFINE_UNSUPPORTED(name, params, "batched copies and managed memory range queries")
#define RT_MISC(name, params) \
  RT_DEFINE_UNSUPPORTED(name, params, "clusters, logs, notifications, atomic capabilities")

RT_GRAPH_LIST(RT_GRAPH)
RT_IPC_LIST(RT_IPC)
RT_INTEROP_LIST(RT_INTEROP)
RT_DRIVER_LIST(RT_DRIVER)
RT_ARRAY_LIST(RT_ARRAY)
RT_BATCH_LIST(RT_BATCH)
RT_MISC_LIST(RT_MISC)
