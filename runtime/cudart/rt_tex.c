/*
 * rt_tex.c -- the cudart replacement's CUDA arrays, texture objects and
 * surface objects, and the 3-D copies and pitched allocations that go with
 * them.
 *
 * A CUDA array is emulated device memory laid out row-major without
 * padding (pitch = width * element size, slice = pitch * height); its
 * handle (cudaArray_t, an opaque pointer to the runtime) points at a
 * struct cudaArray defined here.  A texture or surface object is an
 * emulator texture (emulator/emu_tex.c: sampling, address modes, filtering,
 * read modes) over an array, linear memory or pitched 2-D memory; its
 * handle is the emulator's, which is what kernels receive.
 *
 * Copies to and from arrays go through rt_copy with the array's device
 * address, so they get the same checks and unified addressing as any copy.
 * Mipmapped arrays, cubemaps, texture references (removed from CUDA 12)
 * and formats other than 1, 2 or 4 channels of 8, 16 or 32 bits are not
 * supported (cudaErrorNotSupported or cudaErrorInvalidChannelDescriptor).
 */
#include "runtime/cudart/rt_cudart.h"


#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The runtime's CUDA array (cuda_runtime_api.h only declares it). */
struct cudaArray {
  uint64_t addr;                      /* device address of element (0,0,0) */
  struct cudaChannelFormatDesc desc;
  size_t width, height, depth;        /* elements; height/depth 0 when unused, as given */
  unsigned flags;                     /* cudaArrayLayered, cudaArraySurfaceLoadStore, ... */
  size_t elem, pitch, slice;          /* bytes */
  struct cudaArray *next;             /* all live arrays */
};

static struct cudaArray *arrays;      /* guarded by rt_lock */

static struct cudaArray *find_array(const void *p) {
  for (struct cudaArray *a = arrays; a; a = a->next)
    if (a == p) return a;
  return NULL;
}

struct cudaChannelFormatDesc CUDARTAPI cudaCreateChannelDesc(int x, int y, int z, int w,
                                                            enum cudaChannelFormatKind f) {
  struct cudaChannelFormatDesc d = {x, y, z, w, f};
  return d;
}

/* Channels, bits and kind of a format; 0, -1 when invalid, -2 for the
   kinds a GPU has and the emulation lacks (normalized-integer and
   compressed formats, NV12). */
static int format_of(const struct cudaChannelFormatDesc *d, unsigned *channels, unsigned *bits,
                     int *kind) {
  if (d->f != cudaChannelFormatKindSigned && d->f != cudaChannelFormatKindUnsigned &&
      d->f != cudaChannelFormatKindFloat && d->f != cudaChannelFormatKindNone)
    return -2;
  int b[4] = {d->x, d->y, d->z, d->w}, n = 0;
  while (n < 4 && b[n]) n++;
  for (int i = 1; i < n; i++)
    if (b[i] != b[0]) return -1;
  for (int i = n; i < 4; i++)
    if (b[i]) return -1;
  if ((n != 1 && n != 2 && n != 4) || (b[0] != 8 && b[0] != 16 && b[0] != 32)) return -1;
  switch (d->f) {
  case cudaChannelFormatKindSigned: *kind = EMU_TEX_SIGNED; break;
  case cudaChannelFormatKindUnsigned: *kind = EMU_TEX_UNSIGNED; break;
  case cudaChannelFormatKindFloat:
    if (b[0] == 8) return -1;
    *kind = EMU_TEX_FLOAT;
    break;
  default: return -1;
  }
  *channels = (unsigned)n;
  *bits = (unsigned)b[0];
  return 0;
}

/* Allocate an array of w x h x d elements (h, d 0 = unused). */
static cudaError_t new_array(const char *fn, cudaArray_t *out,
                             const struct cudaChannelFormatDesc *desc, size_t w, size_t h,
                             size_t d, unsigned flags) {
  unsigned ch, bits;
  int kind, fr;
  static int fmt_once, flags_once;
  if (!out || !desc || !w) return rt_err(cudaErrorInvalidValue);
  if ((fr = format_of(desc, &ch, &bits, &kind)) == -2)
    return rt_unsupported(fn, "normalized-integer, compressed and NV12 channel formats",
                          &fmt_once);
  if (fr) return rt_err(cudaErrorInvalidChannelDescriptor);
  if (flags & ~(unsigned)(cudaArrayLayered | cudaArraySurfaceLoadStore | cudaArrayTextureGather))
    return rt_unsupported(fn, "cubemap, sparse and deferred-mapping arrays", &flags_once);
  size_t elem = ch * bits / 8, hh = h ? h : 1, dd = d ? d : 1;
  if (w > ((size_t)1 << 32) || hh > ((size_t)1 << 32) || dd > ((size_t)1 << 16) ||
      w * elem > (((size_t)1 << 40) / hh / dd))
    return rt_err(cudaErrorInvalidValue);
  struct cudaArray *a = calloc(1, sizeof *a);
  if (!a) return rt_err(cudaErrorMemoryAllocation);
  a->desc = *desc;
  a->width = w, a->height = h, a->depth = d, a->flags = flags;
  a->elem = elem;
  a->pitch = w * elem;
  a->slice = a->pitch * hh;
  char err[512];
  rt_lock();
  cudaError_t e = rt_sticky_locked();
  emu_device *dev = e ? NULL : rt_device();
  if (!e && (!dev || emu_malloc(dev, a->slice * dd, &a->addr, err, sizeof err) < 0))
    e = cudaErrorMemoryAllocation;
  if (!e) {
    a->next = arrays;
    arrays = a;
    *out = a;
  }
  rt_unlock();
  if (e) free(a);
  return rt_err(e);
}

cudaError_t CUDARTAPI cudaMallocArray(cudaArray_t *array, const struct cudaChannelFormatDesc *desc,
                                      size_t width, size_t height, unsigned int flags) {
  return new_array("cudaMallocArray", array, desc, width, height, 0, flags);
}

cudaError_t CUDARTAPI cudaMalloc3DArray(cudaArray_t *array,
                                        const struct cudaChannelFormatDesc *desc,
                                        struct cudaExtent extent, unsigned int flags) {
  if ((flags & cudaArrayLayered) && !extent.depth) return rt_err(cudaErrorInvalidValue);
  return new_array("cudaMalloc3DArray", array, desc, extent.width, extent.height, extent.depth,
                   flags);
}

cudaError_t CUDARTAPI cudaFreeArray(cudaArray_t array) {
  if (!array) return cudaSuccess;
  rt_lock();
  struct cudaArray **pp = &arrays;
  while (*pp && *pp != array) pp = &(*pp)->next;
  cudaError_t e = *pp ? cudaSuccess : cudaErrorInvalidResourceHandle;
  if (!e) {
    *pp = array->next;
    emu_free(rt_device(), array->addr, NULL, 0);
    free(array);
  }
  rt_unlock();
  return rt_err(e);
}

cudaError_t CUDARTAPI cudaArrayGetInfo(struct cudaChannelFormatDesc *desc,
                                       struct cudaExtent *extent, unsigned int *flags,
                                       cudaArray_t array) {
  rt_lock();
  struct cudaArray *a = find_array(array);
  if (a) {
    if (desc) *desc = a->desc;
    if (extent) {
      extent->width = a->width;
      extent->height = a->height;
      extent->depth = a->depth;
    }
    if (flags) *flags = a->flags;
  }
  rt_unlock();
  return rt_err(a ? cudaSuccess : cudaErrorInvalidResourceHandle);
}

cudaError_t CUDARTAPI cudaGetChannelDesc(struct cudaChannelFormatDesc *desc,
                                         cudaArray_const_t array) {
  if (!desc) return rt_err(cudaErrorInvalidValue);
  rt_lock();
  struct cudaArray *a = find_array(array);
  if (a) *desc = a->desc;
  rt_unlock();
  return rt_err(a ? cudaSuccess : cudaErrorInvalidResourceHandle);
}

/* --------------------------------------------------------------- copies -- */

/* Device pointer of byte (x, y, z) of a. */
static void *array_at(const struct cudaArray *a, size_t x, size_t y, size_t z) {
  return (void *)(uintptr_t)(a->addr + z * a->slice + y * a->pitch + x);
}

/* Rows of `width` bytes between an array at byte (x, y) and pitched host or
   device memory; to_array says which way.  Lock held. */
static cudaError_t array_rows(struct cudaArray *a, size_t x, size_t y, size_t z, void *mem,
                              size_t pitch, size_t width, size_t height, int to_array,
                              enum cudaMemcpyKind kind) {
  size_t hh = a->height ? a->height : 1, dd = a->depth ? a->depth : 1;
  if (x + width > a->pitch || y + height > hh || z >= dd || (height > 1 && width > pitch))
    return cudaErrorInvalidValue;
  cudaError_t e = cudaSuccess;
  for (size_t r = 0; r < height && !e; r++) {
    char *m = (char *)mem + r * pitch;
    void *p = array_at(a, x, y + r, z);
    e = to_array ? rt_copy(p, m, width, kind) : rt_copy(m, p, width, kind);
  }
  return e;
}

cudaError_t CUDARTAPI cudaMemcpy2DToArray(cudaArray_t dst, size_t wOffset, size_t hOffset,
                                          const void *src, size_t spitch, size_t width,
                                          size_t height, enum cudaMemcpyKind kind) {
  rt_lock();
  struct cudaArray *a = find_array(dst);
  cudaError_t e = !a ? cudaErrorInvalidResourceHandle
                     : array_rows(a, wOffset, hOffset, 0, (void *)(uintptr_t)src, spitch, width,
                                  height, 1, kind);
  rt_unlock();
  return rt_err(e);
}

cudaError_t CUDARTAPI cudaMemcpy2DFromArray(void *dst, size_t dpitch, cudaArray_const_t src,
                                            size_t wOffset, size_t hOffset, size_t width,
                                            size_t height, enum cudaMemcpyKind kind) {
  rt_lock();
  struct cudaArray *a = find_array(src);
  cudaError_t e = !a ? cudaErrorInvalidResourceHandle
                     : array_rows(a, wOffset, hOffset, 0, dst, dpitch, width, height, 0, kind);
  rt_unlock();
  return rt_err(e);
}

cudaError_t CUDARTAPI cudaMemcpy2DToArrayAsync(cudaArray_t dst, size_t wOffset, size_t hOffset,
                                               const void *src, size_t spitch, size_t width,
                                               size_t height, enum cudaMemcpyKind kind,
                                               cudaStream_t stream) {
  return cudaMemcpy2DToArray(dst, wOffset, hOffset, src, spitch, width, height, kind);
}

cudaError_t CUDARTAPI cudaMemcpy2DFromArrayAsync(void *dst, size_t dpitch, cudaArray_const_t src,
                                                 size_t wOffset, size_t hOffset, size_t width,
                                                 size_t height, enum cudaMemcpyKind kind,
                                                 cudaStream_t stream) {
  return cudaMemcpy2DFromArray(dst, dpitch, src, wOffset, hOffset, width, height, kind);
}

/* count bytes from byte (wOffset, hOffset) on, row after row (the arrays
   have no padding, so the bytes are contiguous). */
static cudaError_t linear_array_copy(struct cudaArray *a, size_t wOffset, size_t hOffset,
                                     void *mem, size_t count, int to_array,
                                     enum cudaMemcpyKind kind) {
  size_t total = a->slice * (a->depth ? a->depth : 1), off = hOffset * a->pitch + wOffset;
  if (wOffset > a->pitch || off > total || count > total - off) return cudaErrorInvalidValue;
  void *p = array_at(a, off, 0, 0);
  return to_array ? rt_copy(p, mem, count, kind) : rt_copy(mem, p, count, kind);
}

static cudaError_t array_linear(const void *arr, size_t wOffset, size_t hOffset, void *mem,
                                size_t count, int to_array, enum cudaMemcpyKind kind) {
  rt_lock();
  struct cudaArray *a = find_array(arr);
  cudaError_t e = !a ? cudaErrorInvalidResourceHandle
                     : linear_array_copy(a, wOffset, hOffset, mem, count, to_array, kind);
  rt_unlock();
  return rt_err(e);
}

cudaError_t CUDARTAPI cudaMemcpyToArray(cudaArray_t dst, size_t wOffset, size_t hOffset,
                                        const void *src, size_t count, enum cudaMemcpyKind kind) {
  return array_linear(dst, wOffset, hOffset, (void *)(uintptr_t)src, count, 1, kind);
}

cudaError_t CUDARTAPI cudaMemcpyFromArray(void *dst, cudaArray_const_t src, size_t wOffset,
                                          size_t hOffset, size_t count, enum cudaMemcpyKind kind) {
  return array_linear(src, wOffset, hOffset, dst, count, 0, kind);
}

cudaError_t CUDARTAPI cudaMemcpyToArrayAsync(cudaArray_t dst, size_t wOffset, size_t hOffset,
                                             const void *src, size_t count,
                                             enum cudaMemcpyKind kind, cudaStream_t stream) {
  return array_linear(dst, wOffset, hOffset, (void *)(uintptr_t)src, count, 1, kind);
}

cudaError_t CUDARTAPI cudaMemcpyFromArrayAsync(void *dst, cudaArray_const_t src, size_t wOffset,
                                               size_t hOffset, size_t count,
                                               enum cudaMemcpyKind kind, cudaStream_t stream) {
  return array_linear(src, wOffset, hOffset, dst, count, 0, kind);
}

/* height rows of width bytes from array src at byte (ws, hs) to array dst
   at byte (wd, hd): device to device, row by row (the two may differ in
   width). */
cudaError_t CUDARTAPI cudaMemcpy2DArrayToArray(cudaArray_t dst, size_t wOffsetDst,
                                               size_t hOffsetDst, cudaArray_const_t src,
                                               size_t wOffsetSrc, size_t hOffsetSrc,
                                               size_t width, size_t height,
                                               enum cudaMemcpyKind kind) {
  rt_lock();
  struct cudaArray *d = find_array(dst), *a = find_array(src);
  cudaError_t e = !d || !a ? cudaErrorInvalidResourceHandle : cudaSuccess;
  if (!e && (wOffsetDst + width > d->pitch || wOffsetSrc + width > a->pitch ||
             hOffsetDst + height > (d->height ? d->height : 1) ||
             hOffsetSrc + height > (a->height ? a->height : 1)))
    e = cudaErrorInvalidValue;
  for (size_t r = 0; r < height && !e; r++)
    e = rt_copy(array_at(d, wOffsetDst, hOffsetDst + r, 0),
                array_at(a, wOffsetSrc, hOffsetSrc + r, 0), width, kind);
  rt_unlock();
  return rt_err(e);
}

/* count bytes from array src at byte (ws, hs) on to array dst at (wd, hd),
   row after row as cudaMemcpyToArray reads them. */
cudaError_t CUDARTAPI cudaMemcpyArrayToArray(cudaArray_t dst, size_t wOffsetDst,
                                             size_t hOffsetDst, cudaArray_const_t src,
                                             size_t wOffsetSrc, size_t hOffsetSrc, size_t count,
                                             enum cudaMemcpyKind kind) {
  rt_lock();
  struct cudaArray *d = find_array(dst), *a = find_array(src);
  cudaError_t e = !d || !a ? cudaErrorInvalidResourceHandle : cudaSuccess;
  size_t dt = d ? d->slice * (d->depth ? d->depth : 1) : 0;
  size_t at = a ? a->slice * (a->depth ? a->depth : 1) : 0;
  size_t doff = d ? hOffsetDst * d->pitch + wOffsetDst : 0;
  size_t aoff = a ? hOffsetSrc * a->pitch + wOffsetSrc : 0;
  if (!e && (doff > dt || count > dt - doff || aoff > at || count > at - aoff))
    e = cudaErrorInvalidValue;
  if (!e) e = rt_copy(array_at(d, doff, 0, 0), array_at(a, aoff, 0, 0), count, kind);
  rt_unlock();
  return rt_err(e);
}

/* Pitched 3-D allocation: rows padded to 512 bytes, as cudaMallocPitch. */
cudaError_t CUDARTAPI cudaMalloc3D(struct cudaPitchedPtr *p, struct cudaExtent extent) {
  if (!p) return rt_err(cudaErrorInvalidValue);
  size_t pitch = (extent.width + 511) / 512 * 512, rows = extent.height ? extent.height : 1;
  void *d = NULL;
  cudaError_t e = cudaMalloc(&d, (pitch ? pitch : 512) * rows * (extent.depth ? extent.depth : 1));
  if (!e) {
    p->ptr = d;
    p->pitch = pitch ? pitch : 512;
    p->xsize = extent.width;
    p->ysize = extent.height;
  }
  return e;
}

/* Where row (y, z) of a cudaMemcpy3D side starts: in array a (its width
   in elements from pos.x; NULL when the row is outside it) or in pitched
   memory p (pos.x in bytes). */
static void *side_row(const struct cudaArray *a, struct cudaPitchedPtr p, struct cudaPos pos,
                      size_t width, size_t y, size_t z) {
  if (a) {
    if ((pos.x + width) * a->elem > a->pitch || pos.y + y >= (a->height ? a->height : 1) ||
        pos.z + z >= (a->depth ? a->depth : 1))
      return NULL;
    return array_at(a, pos.x * a->elem, pos.y + y, pos.z + z);
  }
  return (char *)p.ptr + (pos.z + z) * p.pitch * p.ysize + (pos.y + y) * p.pitch + pos.x;
}

/*
 * cudaMemcpy3D: an array or a pitched pointer on each side.  With an array
 * the extent's width and the position's x count elements, else bytes (as
 * documented); rows are copied one by one.
 */
cudaError_t CUDARTAPI cudaMemcpy3D(const struct cudaMemcpy3DParms *p) {
  if (!p || (!p->srcArray == !p->srcPtr.ptr) || (!p->dstArray == !p->dstPtr.ptr))
    return rt_err(cudaErrorInvalidValue);
  rt_lock();
  struct cudaArray *sa = p->srcArray ? find_array(p->srcArray) : NULL;
  struct cudaArray *da = p->dstArray ? find_array(p->dstArray) : NULL;
  cudaError_t e = (p->srcArray && !sa) || (p->dstArray && !da) ? cudaErrorInvalidResourceHandle
                                                              : cudaSuccess;
  size_t elem = sa ? sa->elem : da ? da->elem : 1;
  size_t wbytes = p->extent.width * elem, h = p->extent.height ? p->extent.height : 1,
         d = p->extent.depth ? p->extent.depth : 1;
  for (size_t z = 0; z < d && !e; z++)
    for (size_t y = 0; y < h && !e; y++) {
      void *sp = side_row(sa, p->srcPtr, p->srcPos, p->extent.width, y, z);
      void *dp = side_row(da, p->dstPtr, p->dstPos, p->extent.width, y, z);
      e = sp && dp ? rt_copy(dp, sp, wbytes, p->kind) : cudaErrorInvalidValue;
    }
  rt_unlock();
  return rt_err(e);
}

cudaError_t CUDARTAPI cudaMemcpy3DAsync(const struct cudaMemcpy3DParms *p, cudaStream_t stream) {
  return cudaMemcpy3D(p);
}

/* One device: a peer copy is a copy on it. */
cudaError_t CUDARTAPI cudaMemcpy3DPeer(const struct cudaMemcpy3DPeerParms *p) {
  if (!p) return rt_err(cudaErrorInvalidValue);
  if (p->srcDevice != 0 || p->dstDevice != 0) return rt_err(cudaErrorInvalidDevice);
  struct cudaMemcpy3DParms q;
  memset(&q, 0, sizeof q);
  q.srcArray = p->srcArray, q.srcPos = p->srcPos, q.srcPtr = p->srcPtr;
  q.dstArray = p->dstArray, q.dstPos = p->dstPos, q.dstPtr = p->dstPtr;
  q.extent = p->extent;
  q.kind = cudaMemcpyDefault;
  return cudaMemcpy3D(&q);
}

cudaError_t CUDARTAPI cudaMemcpy3DPeerAsync(const struct cudaMemcpy3DPeerParms *p,
                                            cudaStream_t stream) {
  return cudaMemcpy3DPeer(p);
}

/* ------------------------------------------------ texture, surface objects -- */

/* The emulator texture a resource describes; an error for what is not
   supported.  Lock held. */
static cudaError_t describe(const struct cudaResourceDesc *r, emu_texture *t) {
  memset(t, 0, sizeof *t);
  const struct cudaChannelFormatDesc *desc;
  if (r->resType == cudaResourceTypeArray) {
    struct cudaArray *a = find_array(r->res.array.array);
    if (!a) return cudaErrorInvalidResourceHandle;
    desc = &a->desc;
    t->addr = a->addr;
    t->width = a->width;
    t->layered = (a->flags & cudaArrayLayered) != 0;
    t->height = a->height ? a->height : 1;
    t->depth = a->depth ? a->depth : 1;
    t->dims = t->layered ? (a->height ? 2 : 1) : a->depth ? 3 : a->height ? 2 : 1;
    t->pitch = a->pitch;
    t->slice = a->slice;
  } else if (r->resType == cudaResourceTypeLinear) {
    desc = &r->res.linear.desc;
    t->addr = (uint64_t)(uintptr_t)r->res.linear.devPtr;
    t->dims = 1;
    t->linear = 1;
    t->height = t->depth = 1;
  } else if (r->resType == cudaResourceTypePitch2D) {
    desc = &r->res.pitch2D.desc;
    t->addr = (uint64_t)(uintptr_t)r->res.pitch2D.devPtr;
    t->dims = 2;
    t->width = r->res.pitch2D.width;
    t->height = r->res.pitch2D.height;
    t->depth = 1;
    t->pitch = r->res.pitch2D.pitchInBytes;
  } else {
    return cudaErrorNotSupported; /* mipmapped arrays */
  }
  if (format_of(desc, &t->channels, &t->bits, &t->kind)) return cudaErrorInvalidChannelDescriptor;
  uint64_t elem = t->channels * t->bits / 8;
  if (t->linear) {
    t->width = r->res.linear.sizeInBytes / elem;
    t->pitch = t->width * elem;
    if (!t->width) return cudaErrorInvalidValue;
  }
  if (!t->slice) t->slice = t->pitch * t->height;
  return cudaSuccess;
}

/* The descriptors each live texture or surface object was made from, for
   cudaGetTextureObjectResourceDesc and friends.  Guarded by rt_lock. */
static struct tex_desc {
  uint64_t handle;
  int surface;
  struct cudaResourceDesc res;
  struct cudaTextureDesc tex;
  struct tex_desc *next;
} *tex_descs;

static void keep_desc(uint64_t h, int surface, const struct cudaResourceDesc *r,
                      const struct cudaTextureDesc *t) {
  struct tex_desc *d = calloc(1, sizeof *d);
  if (!d) return; /* its getters then say cudaErrorInvalidValue */
  d->handle = h, d->surface = surface, d->res = *r;
  if (t) d->tex = *t;
  d->next = tex_descs;
  tex_descs = d;
}

static struct tex_desc *find_desc(uint64_t h, int surface) {
  for (struct tex_desc *d = tex_descs; d; d = d->next)
    if (d->handle == h && d->surface == surface) return d;
  return NULL;
}

static void drop_desc(uint64_t h) {
  for (struct tex_desc **pp = &tex_descs; *pp; pp = &(*pp)->next)
    if ((*pp)->handle == h) {
      struct tex_desc *d = *pp;
      *pp = d->next;
      free(d);
      return;
    }
}

cudaError_t CUDARTAPI cudaCreateTextureObject(cudaTextureObject_t *pTexObject,
                                              const struct cudaResourceDesc *pResDesc,
                                              const struct cudaTextureDesc *pTexDesc,
                                              const struct cudaResourceViewDesc *pResViewDesc) {
  if (!pTexObject || !pResDesc || !pTexDesc) return rt_err(cudaErrorInvalidValue);
  static int view_once, mip_once;
  if (pResViewDesc)
    return rt_unsupported("cudaCreateTextureObject", "resource views (pResViewDesc)", &view_once);
  if (pResDesc->resType == cudaResourceTypeMipmappedArray)
    return rt_unsupported("cudaCreateTextureObject", "mipmapped arrays", &mip_once);
  const struct cudaChannelFormatDesc *fd =
      pResDesc->resType == cudaResourceTypeLinear    ? &pResDesc->res.linear.desc
      : pResDesc->resType == cudaResourceTypePitch2D ? &pResDesc->res.pitch2D.desc
                                                     : NULL;
  unsigned ch, bits;
  int kind;
  static int fmt_once;
  if (fd && format_of(fd, &ch, &bits, &kind) == -2)
    return rt_unsupported("cudaCreateTextureObject",
                          "normalized-integer, compressed and NV12 channel formats", &fmt_once);
  rt_lock();
  emu_texture t;
  cudaError_t e = describe(pResDesc, &t);
  if (!e) {
    for (int i = 0; i < 3; i++) t.address[i] = (int)pTexDesc->addressMode[i];
    t.filter_linear = pTexDesc->filterMode == cudaFilterModeLinear;
    t.read_normalized = pTexDesc->readMode == cudaReadModeNormalizedFloat;
    t.normalized_coords = pTexDesc->normalizedCoords != 0;
    memcpy(t.border, pTexDesc->borderColor, sizeof t.border);
    /* as on a GPU: no linear filtering of integers read as integers */
    if (t.filter_linear && t.kind != EMU_TEX_FLOAT && !t.read_normalized)
      e = cudaErrorInvalidFilterSetting;
    if (t.read_normalized && (t.kind == EMU_TEX_FLOAT || t.bits == 32))
      e = cudaErrorInvalidNormSetting;
  }
  char err[512];
  uint64_t h = 0;
  emu_device *dev = rt_device();
  if (!e && (!dev || emu_texture_new(dev, &t, &h, err, sizeof err) < 0)) {
    fprintf(stderr, "kcast-cudart: cudaCreateTextureObject: %s\n", dev ? err : "out of memory");
    e = cudaErrorInvalidValue;
  }
  if (!e) {
    *pTexObject = h;
    keep_desc(h, 0, pResDesc, pTexDesc);
  }
  rt_unlock();
  return rt_err(e);
}

cudaError_t CUDARTAPI cudaDestroyTextureObject(cudaTextureObject_t texObject) {
  if (!texObject) return cudaSuccess;
  rt_lock();
  emu_device *dev = rt_device();
  cudaError_t e = dev && emu_texture_free(dev, texObject, NULL, 0) == 0
                      ? cudaSuccess : cudaErrorInvalidValue;
  if (!e) drop_desc(texObject);
  rt_unlock();
  return rt_err(e);
}

cudaError_t CUDARTAPI cudaCreateSurfaceObject(cudaSurfaceObject_t *pSurfObject,
                                              const struct cudaResourceDesc *pResDesc) {
  if (!pSurfObject || !pResDesc) return rt_err(cudaErrorInvalidValue);
  rt_lock();
  emu_texture t;
  cudaError_t e = pResDesc->resType != cudaResourceTypeArray ? cudaErrorInvalidValue
                                                             : describe(pResDesc, &t);
  struct cudaArray *a = e ? NULL : find_array(pResDesc->res.array.array);
  if (a && !(a->flags & cudaArraySurfaceLoadStore)) e = cudaErrorInvalidValue;
  char err[512];
  uint64_t h = 0;
  emu_device *dev = rt_device();
  if (!e && (!dev || emu_texture_new(dev, &t, &h, err, sizeof err) < 0)) e = cudaErrorInvalidValue;
  if (!e) {
    *pSurfObject = h;
    keep_desc(h, 1, pResDesc, NULL);
  }
  rt_unlock();
  return rt_err(e);
}

cudaError_t CUDARTAPI cudaDestroySurfaceObject(cudaSurfaceObject_t surfObject) {
  return cudaDestroyTextureObject(surfObject);
}

/* What an object was made from (as given). */
static cudaError_t get_desc(uint64_t h, int surface, struct cudaResourceDesc *res,
                            struct cudaTextureDesc *tex) {
  rt_lock();
  struct tex_desc *d = find_desc(h, surface);
  if (d && res) *res = d->res;
  if (d && tex) *tex = d->tex;
  rt_unlock();
  return d ? cudaSuccess : rt_err(cudaErrorInvalidValue);
}

cudaError_t CUDARTAPI cudaGetTextureObjectResourceDesc(struct cudaResourceDesc *pResDesc,
                                                       cudaTextureObject_t texObject) {
  if (!pResDesc) return rt_err(cudaErrorInvalidValue);
  return get_desc(texObject, 0, pResDesc, NULL);
}

cudaError_t CUDARTAPI cudaGetTextureObjectTextureDesc(struct cudaTextureDesc *pTexDesc,
                                                      cudaTextureObject_t texObject) {
  if (!pTexDesc) return rt_err(cudaErrorInvalidValue);
  return get_desc(texObject, 0, NULL, pTexDesc);
}

cudaError_t CUDARTAPI cudaGetSurfaceObjectResourceDesc(struct cudaResourceDesc *pResDesc,
                                                       cudaSurfaceObject_t surfObject) {
  if (!pResDesc) return rt_err(cudaErrorInvalidValue);
  return get_desc(surfObject, 1, pResDesc, NULL);
}
