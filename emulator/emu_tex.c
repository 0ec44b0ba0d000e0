/*
 * emu_tex.c -- texture and surface objects of the emulated device: the
 * table behind emu_texture_new/emu_texture_free, and what the engine's tex,
 * suld and sust instructions read and write through them.
 *
 * A texture object is a handle (what cudaCreateTextureObject returns and a
 * kernel receives as a .u64 parameter) for a described region of global
 * memory: elements of 1, 2 or 4 channels of 8, 16 or 32 bits, in rows of
 * `pitch` bytes and slices of `slice` bytes.  Sampling follows the CUDA
 * programming guide's texture-fetching appendix:
 *
 *   - float coordinates are scaled by the size when normalized; nearest-
 *     point sampling takes element floor(x); linear filtering takes the
 *     elements around x - 0.5 with weights in 8-bit fixed point (the
 *     hardware's 9-bit format with 8 fraction bits), so results match a
 *     GPU's, not an exact interpolation;
 *   - address modes apply per element index: clamp, border (the border
 *     colour outside), and, with normalized coordinates only, wrap and
 *     mirror (with unnormalized ones they clamp, as on a GPU);
 *   - integer coordinates (tex1Dfetch) fetch the element without filtering;
 *     outside a linear resource they give zeros;
 *   - the read mode "normalized float" turns 8- and 16-bit integer data
 *     into [0, 1] (unsigned) or [-1, 1] (signed); 16-bit float channels are
 *     halves; channels a format lacks read as 0.
 *
 * Surfaces (suld.b / sust.b) address bytes in x and rows in y; out of
 * bounds they trap (the launch fails), clamp, or read zeros / drop the
 * store, as the instruction's mode says.
 *
 * Every element read or written counts in the footprint bitmap of the
 * allocation holding it; texture instructions add nothing to mem.global_*.
 */
#include "emulator/emu.h"
#include "emulator/emu_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


/* ---------------------------------------------------------------- table -- */

int emu_texture_new(emu_device *d, const emu_texture *t, uint64_t *handle, char *err,
                    size_t cap) {
  if (!d || !t || !handle) return emu_errf(err, cap, "emu_texture_new: null argument");
  if (t->channels != 1 && t->channels != 2 && t->channels != 4)
    return emu_errf(err, cap, "texture: %u channels (1, 2 or 4)", t->channels);
  if (t->bits != 8 && t->bits != 16 && t->bits != 32)
    return emu_errf(err, cap, "texture: %u bits per channel (8, 16 or 32)", t->bits);
  if (t->kind == EMU_TEX_FLOAT && t->bits == 8)
    return emu_errf(err, cap, "texture: 8-bit float channels do not exist");
  if (t->dims < 1 || t->dims > 3 || !t->width || !t->height || !t->depth)
    return emu_errf(err, cap, "texture: bad dimensions %d (%llu x %llu x %llu)", t->dims,
                (unsigned long long)t->width, (unsigned long long)t->height,
                (unsigned long long)t->depth);
  uint64_t elem = (uint64_t)t->channels * t->bits / 8;
  if (t->pitch < t->width * elem || (t->depth > 1 && t->slice < t->pitch * t->height))
    return emu_errf(err, cap, "texture: pitch %llu or slice %llu smaller than a row or a slice",
                (unsigned long long)t->pitch, (unsigned long long)t->slice);
  if (d->ntex == d->captex) {
    size_t nc = d->captex ? 2 * d->captex : 8;
    emu_texent *n = realloc(d->tex, nc * sizeof *n);
    if (!n) return emu_errf(err, cap, "out of memory");
    d->tex = n;
    d->captex = nc;
  }
  emu_texent *e = &d->tex[d->ntex++];
  e->handle = ++d->next_tex;
  e->t = *t;
  *handle = e->handle;
  return 0;
}

int emu_texture_free(emu_device *d, uint64_t handle, char *err, size_t cap) {
  if (!d) return emu_errf(err, cap, "emu_texture_free: null device");
  for (size_t i = 0; i < d->ntex; i++)
    if (d->tex[i].handle == handle) {
      d->tex[i] = d->tex[--d->ntex];
      return 0;
    }
  return emu_errf(err, cap, "no texture or surface object %llu", (unsigned long long)handle);
}

int emu_texview_open(emu_device *d, uint64_t handle, emu_texview *v, char *why, size_t cap) {
  const emu_texture *t = NULL;
  for (size_t i = 0; i < d->ntex && !t; i++)
    if (d->tex[i].handle == handle) t = &d->tex[i].t;
  if (!t) return emu_errf(why, cap, "%llu is not a texture or surface object", (unsigned long long)handle);
  uint64_t elem = (uint64_t)t->channels * t->bits / 8;
  uint64_t span = (t->depth - 1) * t->slice + (t->height - 1) * t->pitch + t->width * elem;
  long gi = emu_galloc_find(d, t->addr);
  if (gi < 0 || span > d->a[gi].size - (t->addr - d->a[gi].base))
    return emu_errf(why, cap, "texture or surface object %llu: its memory [0x%llx, +%llu) is not "
                "(or no longer) allocated", (unsigned long long)handle,
                (unsigned long long)t->addr, (unsigned long long)span);
  v->handle = handle;
  v->t = t;
  v->gi = gi;
  emu_lazy_fill(&d->a[gi], t->addr - d->a[gi].base, span ? span : 1);
  v->host = d->a[gi].host + (t->addr - d->a[gi].base);
  v->off = t->addr - d->a[gi].base;
  v->elem = elem;
  return 0;
}

/* ------------------------------------------------------------- elements -- */

static float half_to_float(uint16_t h) {
  uint32_t s = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 31, m = h & 1023, b;
  if (e == 0) {
    if (!m) {
      b = s;
    } else { /* subnormal: normalise */
      e = 113;
      while (!(m & 1024)) m <<= 1, e--;
      b = s | e << 23 | (m & 1023) << 13;
    }
  } else if (e == 31) {
    b = s | 0x7f800000u | m << 13;
  } else {
    b = s | (e + 112) << 23 | m << 13;
  }
  float f;
  memcpy(&f, &b, 4);
  return f;
}

/* Channel c of the element at p, as the read mode gives it. */
static double channel(const emu_texture *t, const uint8_t *p, unsigned c) {
  if (c >= t->channels) return 0;
  const uint8_t *q = p + c * (t->bits / 8);
  if (t->kind == EMU_TEX_FLOAT) {
    if (t->bits == 16) {
      uint16_t h;
      memcpy(&h, q, 2);
      return half_to_float(h);
    }
    float f;
    memcpy(&f, q, 4);
    return f;
  }
  int sg = t->kind == EMU_TEX_SIGNED;
  double v;
  switch (t->bits) {
    case 8: v = sg ? (double)(int8_t)*q : (double)*q; break;
    case 16: {
      uint16_t x;
      memcpy(&x, q, 2);
      v = sg ? (double)(int16_t)x : (double)x;
      break;
    }
    default: {
      uint32_t x;
      memcpy(&x, q, 4);
      v = sg ? (double)(int32_t)x : (double)x;
    }
  }
  if (t->read_normalized && t->bits < 32) {
    double mx = sg ? (t->bits == 8 ? 127.0 : 32767.0) : (t->bits == 8 ? 255.0 : 65535.0);
    v /= mx;
    if (v < -1) v = -1;
  }
  return v;
}

/* Index i of a dimension of n elements under address mode m (normalized:
   the coordinates were normalized); -1 for the border. */
static int64_t wrap_index(int64_t i, int64_t n, int m, int normalized) {
  if (!normalized && (m == EMU_TEX_WRAP || m == EMU_TEX_MIRROR)) m = EMU_TEX_CLAMP;
  if (i >= 0 && i < n) return i;
  switch (m) {
    case EMU_TEX_WRAP: return ((i % n) + n) % n;
    case EMU_TEX_MIRROR: {
      int64_t r = ((i % (2 * n)) + 2 * n) % (2 * n);
      return r < n ? r : 2 * n - 1 - r;
    }
    case EMU_TEX_BORDER: return -1;
    default: return i < 0 ? 0 : n - 1;
  }
}

/* The four channels of element (x, y, z) -- z the depth or the layer --
   after the address modes; the border colour outside.  0, or -1 when the
   footprint cannot be recorded (ENOMEM). */
static int fetch(emu_device *d, const emu_texview *v, int64_t x, int64_t y, int64_t z,
                 int linear_res, emu_tcache *tc, double out[4]) {
  const emu_texture *t = v->t;
  int nc = t->normalized_coords;
  int64_t ix = linear_res ? (x >= 0 && (uint64_t)x < t->width ? x : -1)
                          : wrap_index(x, (int64_t)t->width, t->address[0], nc);
  int64_t iy = wrap_index(y, (int64_t)t->height, t->address[1], nc);
  int64_t iz = t->layered ? (z < 0 ? 0 : z >= (int64_t)t->depth ? (int64_t)t->depth - 1 : z)
                          : wrap_index(z, (int64_t)t->depth, t->address[2], nc);
  if (ix < 0 || iy < 0 || iz < 0) {
    for (int c = 0; c < 4; c++) out[c] = linear_res ? 0 : t->border[c];
    return 0;
  }
  uint64_t off = (uint64_t)iz * t->slice + (uint64_t)iy * t->pitch + (uint64_t)ix * v->elem;
  for (unsigned c = 0; c < 4; c++) out[c] = channel(t, v->host + off, c);
  return emu_touch(d, v->gi, v->off + off, v->elem, tc);
}

/* Linear-filter position: lower element and its weight's complement in
   the hardware's 8-bit fraction. */
static void lin_pos(double u, int64_t *i0, double *a) {
  u -= 0.5;
  double f = floor(u);
  *i0 = (int64_t)f;
  *a = floor((u - f) * 256.0 + 0.5) / 256.0;
}

int emu_tex_sample(emu_device *d, const emu_texview *v, int geom, const double *coord,
                   int layer, int int_coords, emu_tcache *tc, double out[4]) {
  const emu_texture *t = v->t;
  if (int_coords && geom == EMU_GEOM_1D && t->linear && t->dims == 1 && t->height == 1 &&
      t->depth == 1) {
    /* tex1Dfetch, what most programs that use textures do (Rodinia
       kmeans, ...): the element, or zeros outside; what the general path
       below gives, without its corners and address modes.  With the
       one-word path of emu_touch and tex_view inline: make bench's
       texture loop 225 -> 390 M thread-insns/s on one thread (best of 3,
       each build run twice in turn) */
    int64_t x = (int64_t)coord[0];
    if (x < 0 || (uint64_t)x >= t->width) {
      out[0] = out[1] = out[2] = out[3] = 0;
      return 0;
    }
    uint64_t off = (uint64_t)x * v->elem;
    const uint8_t *p = v->host + off;
    if (t->kind == EMU_TEX_FLOAT && t->bits == 32) {
      /* each channel by a fixed-size copy: a copy of channels x 4 bytes
         into a float[4] read back whole stalled on store forwarding */
      for (unsigned c = 0; c < 4; c++) {
        float f = 0;
        if (c < t->channels) memcpy(&f, p + 4 * c, 4);
        out[c] = f;
      }
    } else {
      for (unsigned c = 0; c < 4; c++) out[c] = channel(t, p, c);
    }
    return emu_touch(d, v->gi, v->off + off, v->elem, tc);
  }
  int n = geom == EMU_GEOM_3D ? 3 : geom == EMU_GEOM_2D || geom == EMU_GEOM_A2D ? 2 : 1;
  int layered = geom == EMU_GEOM_A1D || geom == EMU_GEOM_A2D;
  int linear_res = t->dims == 1 && t->height == 1 && t->depth == 1 && t->linear;
  double size[3] = {(double)t->width, (double)t->height, (double)t->depth};
  int64_t i0[3] = {0, 0, layered ? layer : 0};
  double w[3] = {0, 0, 0};
  int filt = t->filter_linear && !int_coords &&
             (t->kind == EMU_TEX_FLOAT || t->read_normalized);
  for (int k = 0; k < n; k++) {
    if (int_coords) {
      i0[k] = (int64_t)coord[k];
      continue;
    }
    double u = coord[k];
    if (t->normalized_coords) u *= size[k];
    if (isnan(u)) u = 0;
    if (u > 1e18) u = 1e18;
    if (u < -1e18) u = -1e18;
    if (filt) lin_pos(u, &i0[k], &w[k]);
    else i0[k] = (int64_t)floor(u);
  }
  if (layered && n == 1) i0[1] = 0;
  for (int c = 0; c < 4; c++) out[c] = 0;
  /* corners of the filter cell: 1, 2, 4 or 8 elements */
  int corners = filt ? 1 << n : 1;
  for (int m = 0; m < corners; m++) {
    double wt = 1, e[4];
    int64_t p[3] = {i0[0], i0[1], i0[2]};
    for (int k = 0; k < n && filt; k++) {
      int hi = (m >> k) & 1;
      p[k] += hi;
      wt *= hi ? w[k] : 1 - w[k];
    }
    if (wt == 0) continue;
    if (fetch(d, v, p[0], p[1], p[2], linear_res, tc, e)) return -1;
    for (int c = 0; c < 4; c++) out[c] += wt * e[c];
  }
  return 0;
}

int emu_surf_access(emu_device *d, const emu_texview *v, const int64_t *coord, int layer,
                    int geom, unsigned bytes, int mode, uint8_t **p, emu_tcache *tc) {
  const emu_texture *t = v->t;
  int n = geom == EMU_GEOM_3D ? 3 : geom == EMU_GEOM_2D || geom == EMU_GEOM_A2D ? 2 : 1;
  int64_t x = coord[0], y = n > 1 ? coord[1] : 0, z = n > 2 ? coord[2] : layer;
  int64_t w = (int64_t)(t->width * v->elem), h = (int64_t)t->height, dd = (int64_t)t->depth;
  int out = x < 0 || x + (int64_t)bytes > w || y < 0 || y >= h || z < 0 || z >= dd;
  if (out) {
    if (mode == EMU_SURF_TRAP) return 1;
    if (mode == EMU_SURF_ZERO) {
      *p = NULL;
      return 0;
    }
    x = x < 0 ? 0 : x + (int64_t)bytes > w ? w - (int64_t)bytes : x;
    y = y < 0 ? 0 : y >= h ? h - 1 : y;
    z = z < 0 ? 0 : z >= dd ? dd - 1 : z;
    if (x < 0) return 1; /* an access wider than a row */
  }
  uint64_t off = (uint64_t)z * t->slice + (uint64_t)y * t->pitch + (uint64_t)x;
  *p = v->host + off;
  return emu_touch(d, v->gi, v->off + off, bytes, tc) ? -1 : 0;
}
