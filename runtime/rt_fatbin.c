/*
 * rt_fatbin.c -- find the PTX inside an nvcc fatbinary.
 *
 * What: nvcc embeds device code as a fatbinary container and registers it
 * through a wrapper { magic 0x466243b1, version, data, ... } with
 * __cudaRegisterFatBinary.  The cudart replacement needs the PTX text of
 * that container to load it into the emulator.
 *
 * Layout (little endian; checked on CUDA 13.0 output, and agreeing with
 * public reverse-engineering notes of the format):
 *
 *   container header, 16 bytes
 *     u32 magic 0xBA55ED50 | u16 version 1 | u16 header size 16 | u64 bytes after it
 *   entries, back to back until the end of the container
 *     +0  u16 kind (1 PTX, 2 ELF)   +2 u16 ?        +4  u32 entry header size
 *     +8  u64 payload bytes (8-aligned, padding included)
 *     +16 u32 compressed bytes      +20 u32 ?
 *     +24 u16 minor +26 u16 major (PTX ISA / ELF version)   +28 u32 arch (75)
 *     +32 u32 name offset           +36 u32 name length
 *     +40 u64 flags (0x1 64-bit, 0x10 linux, 0x2000 LZ4, 0x8000 zstd)
 *     +48 u64 ?                     +56 u64 uncompressed bytes
 *     payload at entry + header size; next entry after the payload.
 *
 * Compression (the finding): CUDA 13's nvcc compresses PTX by default with
 * zstd (payload starts with the zstd frame magic 28 b5 2f fd, flag 0x8000);
 * CUDA 11/12 used an LZ4 block (flag 0x2000).  zstd is decoded with the
 * system's libzstd.so.1, loaded with dlopen at the first need (no build
 * dependency; Debian's dpkg itself depends on it); LZ4 blocks are decoded
 * by liblz4 (LZ4_decompress_safe, linked).  Without libzstd the error
 * says to rebuild with `kcast nvcc` (which passes --no-compress).
 *
 * Every offset and size is checked against the container before use:
 * a fatbinary is input.
 */
#include "runtime/rt.h"

#include <dlfcn.h>
#include <limits.h>
#include <lz4.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define ENTRY_MIN 64u

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t rd64(const uint8_t *p) { return rd32(p) | (uint64_t)rd32(p + 4) << 32; }

size_t rt_fatbin_size(const void *fb) {
  const uint8_t *p = fb;
  if (!p || rd32(p) != RT_FATBIN_MAGIC) return 0;
  uint64_t hs = rd16(p + 6), body = rd64(p + 8);
  if (hs < 16 || body > (uint64_t)1 << 40) return 0;
  return (size_t)(hs + body);
}

int rt_fatbin_list(const void *fb, size_t size, rt_fatbin_entry *out, size_t cap,
                   size_t *n, char *err, size_t cap_err) {
  const uint8_t *p = fb;
  *n = 0;
  if (!p || size < 16 || rd32(p) != RT_FATBIN_MAGIC) {
    snprintf(err, cap_err, "fatbinary: bad magic (expected 0x%08x)", RT_FATBIN_MAGIC);
    return -1;
  }
  size_t total = rt_fatbin_size(p);
  if (!total || total > size) {
    snprintf(err, cap_err, "fatbinary: header gives %zu bytes, %zu available", total, size);
    return -1;
  }
  size_t off = rd16(p + 6);
  while (off < total) {
    if (total - off < ENTRY_MIN) {
      snprintf(err, cap_err, "fatbinary: truncated entry at offset %zu", off);
      return -1;
    }
    const uint8_t *e = p + off;
    uint32_t hs = rd32(e + 4);
    uint64_t payload = rd64(e + 8);
    if (hs < ENTRY_MIN || hs > total - off || payload > total - off - hs) {
      snprintf(err, cap_err, "fatbinary: entry at offset %zu overruns the container", off);
      return -1;
    }
    rt_fatbin_entry x;
    x.kind = rd16(e);
    x.arch = rd32(e + 28);
    x.flags = rd64(e + 40);
    x.data = e + hs;
    x.stored = payload;
    x.raw = payload;
    if (x.flags & (RT_FATBIN_FLAG_LZ4 | RT_FATBIN_FLAG_ZSTD)) {
      uint32_t c = rd32(e + 16);
      if (c && c <= payload) x.stored = c;
      x.raw = rd64(e + 56);
    }
    if (*n < cap) out[*n] = x;
    (*n)++;
    off += hs + payload;
  }
  return 0;
}

long rt_lz4_block(const uint8_t *in, size_t n, uint8_t *out, size_t cap) {
  /* liblz4's bounds-checked decoder: never reads past n nor writes past cap */
  if (n > INT_MAX || cap > INT_MAX) return -1;
  int got = LZ4_decompress_safe((const char *)in, (char *)out, (int)n, (int)cap);
  return got < 0 ? -1 : (long)got;
}

/* libzstd, loaded once on first need. */
typedef size_t (*zstd_dec_fn)(void *, size_t, const void *, size_t);
typedef unsigned (*zstd_iserr_fn)(size_t);
static zstd_dec_fn zstd_dec;
static zstd_iserr_fn zstd_iserr;
static pthread_once_t zstd_once = PTHREAD_ONCE_INIT;
static void zstd_load(void) {
  void *h = dlopen("libzstd.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) return;
  *(void **)&zstd_dec = dlsym(h, "ZSTD_decompress");
  *(void **)&zstd_iserr = dlsym(h, "ZSTD_isError");
  if (!zstd_dec || !zstd_iserr) zstd_dec = NULL;
}

static const char rebuild[] =
    "rebuild with `kcast nvcc` (or nvcc -cudart shared "
    "-gencode arch=compute_90,code=[sm_90,compute_90])";

/* Decompress (or copy) entry x into a NUL-terminated malloc'd string. */
static int entry_text(const rt_fatbin_entry *x, char **text, size_t *len, char *err,
                      size_t cap) {
  /* The size is the entry's own claim: bound it before allocating.  No
     real PTX compresses 1024-fold (nvcc's reach 3-10). */
  if (x->raw > ((uint64_t)1 << 32) || (x->raw > x->stored && x->raw / 1024 > x->stored)) {
    snprintf(err, cap, "fatbinary: PTX entry claims %llu bytes from %llu stored",
             (unsigned long long)x->raw, (unsigned long long)x->stored);
    return -1;
  }
  uint8_t *buf = malloc(x->raw + 1);
  if (!buf) {
    snprintf(err, cap, "fatbinary: out of memory");
    return -1;
  }
  long got;
  int zstd_magic = x->stored >= 4 && rd32(x->data) == 0xFD2FB528u;
  if (x->flags & RT_FATBIN_FLAG_ZSTD || ((x->flags & RT_FATBIN_FLAG_LZ4) && zstd_magic)) {
    pthread_once(&zstd_once, zstd_load);
    if (!zstd_dec) {
      free(buf);
      snprintf(err, cap,
               "fatbinary: the PTX (compute_%u) is zstd-compressed and libzstd.so.1 "
               "could not be loaded; %s, which adds --no-compress", x->arch, rebuild);
      return -1;
    }
    size_t r = zstd_dec(buf, x->raw, x->data, x->stored);
    got = zstd_iserr(r) ? -1 : (long)r;
  } else if (x->flags & RT_FATBIN_FLAG_LZ4) {
    got = rt_lz4_block(x->data, x->stored, buf, x->raw);
  } else {
    memcpy(buf, x->data, x->raw);
    got = (long)x->raw;
  }
  if (got < 0) {
    free(buf);
    snprintf(err, cap, "fatbinary: the compressed PTX (compute_%u) is malformed; %s, "
             "which adds --no-compress", x->arch, rebuild);
    return -1;
  }
  buf[got] = 0;
  *len = strlen((char *)buf); /* padding NULs are not text */
  *text = (char *)buf;
  return 0;
}

int rt_fatbin_ptx(const void *fb, size_t size, char **ptx, size_t *len, unsigned *arch,
                  char *err, size_t cap) {
  rt_fatbin_entry e[64];
  size_t n;
  *ptx = NULL;
  if (rt_fatbin_list(fb, size, e, 64, &n, err, cap) < 0) return -1;
  if (n > 64) n = 64;
  long best = -1;
  for (size_t i = 0; i < n; i++) {
    if (e[i].kind != RT_FATBIN_PTX) continue;
    if (best < 0) {
      best = (long)i;
      continue;
    }
    unsigned a = e[i].arch, b = e[best].arch;
    int a_ok = a <= RT_MAX_ARCH, b_ok = b <= RT_MAX_ARCH;
    if ((a_ok && (!b_ok || a > b)) || (!a_ok && !b_ok && a < b)) best = (long)i;
  }
  if (best < 0) {
    char archs[128] = "";
    size_t used = 0;
    for (size_t i = 0; i < n && used < sizeof archs - 16; i++)
      used += (size_t)snprintf(archs + used, sizeof archs - used, "%ssm_%u", used ? ", " : "",
                               e[i].arch);
    snprintf(err, cap,
             "the program's device code is machine code only (%s), no PTX the emulator "
             "can run; %s, or keep PTX with -gencode arch=compute_XX,code=compute_XX",
             used ? archs : "no entries", rebuild);
    return -1;
  }
  if (entry_text(&e[best], ptx, len, err, cap) < 0) return -1;
  *arch = e[best].arch;
  return 0;
}
