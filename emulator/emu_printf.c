/*
 * emu_printf.c -- device printf (vprintf) for the emulator.
 *
 * What: CUDA's printf compiles to a call of the external function
 * `vprintf(const char *fmt, void *args)`: the format string lives in global
 * memory, the arguments are packed into the calling thread's local memory,
 * each at an offset aligned to its own size (int 4, long/double/pointer 8;
 * float is promoted to double by C's variadic rules).  This file walks the
 * format conversion by conversion, fetches each argument from the buffer
 * through the engine's checked reader and formats it with the host's
 * snprintf, so widths, precisions and flags behave as in C.
 *
 * Why here: the engine buffers the text per CTA and emits it in CTA order
 * after the launch (deterministic whatever the thread count); this file only
 * turns one call into text.
 */
#include "emulator/emu_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FMT_MAX 4096  /* longest format or %s string read from the device */

int emu_strbuf_append(emu_strbuf *b, const char *s, size_t n) {
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n + 1) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) return -1;
    b->p = p;
    b->cap = cap;
  }
  memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = '\0';
  return 0;
}

/* Read a NUL-terminated string of at most FMT_MAX bytes from the device. */
static int read_str(emu_read_fn rd, void *ctx, uint64_t addr, char *buf,
                    size_t cap) {
  size_t i = 0;
  for (; i + 1 < cap; i++) {
    char ch;
    if (rd(ctx, addr + i, &ch, 1) != 0) return -1;
    buf[i] = ch;
    if (!ch) return 0;
  }
  buf[i] = '\0';
  return 0;
}

/* snprintf of one conversion, appended to out. */
static int emit(emu_strbuf *out, const char *spec, ...) {
  char small[256];
  va_list ap;
  va_start(ap, spec);
  int n = vsnprintf(small, sizeof small, spec, ap);
  va_end(ap);
  if (n < 0) return -1;
  if ((size_t)n < sizeof small) return emu_strbuf_append(out, small, (size_t)n);
  char *big = malloc((size_t)n + 1);
  if (!big) return -1;
  va_start(ap, spec);
  vsnprintf(big, (size_t)n + 1, spec, ap);
  va_end(ap);
  int rc = emu_strbuf_append(out, big, (size_t)n);
  free(big);
  return rc;
}

int emu_printf_format(emu_strbuf *out, uint64_t fmt_addr, uint64_t args,
                      emu_read_fn rd, void *ctx, char *err, size_t cap) {
  char *fmt = malloc(FMT_MAX), *sarg = malloc(FMT_MAX);
  int rc = -1;
  if (!fmt || !sarg) {
    snprintf(err, cap, "printf: out of memory");
    goto out;
  }
  if (read_str(rd, ctx, fmt_addr, fmt, FMT_MAX) != 0) {
    snprintf(err, cap, "printf: unreadable format string at 0x%llx",
             (unsigned long long)fmt_addr);
    goto out;
  }
  uint64_t off = 0;  /* next argument's offset in the buffer */
  const char *p = fmt;
  while (*p) {
    if (*p != '%') {
      const char *q = strchr(p, '%');
      size_t n = q ? (size_t)(q - p) : strlen(p);
      if (emu_strbuf_append(out, p, n) != 0) goto nomem;
      p += n;
      continue;
    }
    if (p[1] == '%') {
      if (emu_strbuf_append(out, "%", 1) != 0) goto nomem;
      p += 2;
      continue;
    }
    /* %[flags][width][.prec][length]conv */
    char spec[64];
    size_t k = 0;
    const char *q = p + 1;
    spec[k++] = '%';
    while (*q && strchr("-+ #0", *q) && k < 20) spec[k++] = *q++;
    int star_w = 0, star_p = 0;
    if (*q == '*') { star_w = 1; spec[k++] = *q++; }
    while (*q >= '0' && *q <= '9' && k < 40) spec[k++] = *q++;
    if (*q == '.') {
      spec[k++] = *q++;
      if (*q == '*') { star_p = 1; spec[k++] = *q++; }
      while (*q >= '0' && *q <= '9' && k < 50) spec[k++] = *q++;
    }
    int lng = 0; /* 0 int, 1 long, 2 long long, -1 short, -2 char */
    while (*q == 'l' || *q == 'h' || *q == 'z' || *q == 'j' || *q == 't' ||
           *q == 'L') {
      if (*q == 'l' || *q == 'z' || *q == 'j' || *q == 't' || *q == 'L') lng++;
      else lng--;
      q++;
    }
    char conv = *q;
    if (!conv || !strchr("diuxXocsfFeEgGaAp", conv)) {
      /* not a conversion we know: print it as written */
      size_t n = (size_t)(q - p) + (conv ? 1 : 0);
      if (emu_strbuf_append(out, p, n) != 0) goto nomem;
      p += n;
      continue;
    }
    q++;
    int wv = 0, pv = 0;
    if (star_w || star_p) {
      int32_t v;
      if (star_w) {
        off = (off + 3) & ~(uint64_t)3;
        if (rd(ctx, args + off, &v, 4) != 0) goto badarg;
        off += 4;
        wv = v;
      }
      if (star_p) {
        off = (off + 3) & ~(uint64_t)3;
        if (rd(ctx, args + off, &v, 4) != 0) goto badarg;
        off += 4;
        pv = v;
      }
    }
    int e;
    if (conv == 'f' || conv == 'F' || conv == 'e' || conv == 'E' ||
        conv == 'g' || conv == 'G' || conv == 'a' || conv == 'A') {
      double v;
      off = (off + 7) & ~(uint64_t)7;
      if (rd(ctx, args + off, &v, 8) != 0) goto badarg;
      off += 8;
      spec[k++] = conv;
      spec[k] = '\0';
      if (star_w && star_p) e = emit(out, spec, wv, pv, v);
      else if (star_w) e = emit(out, spec, wv, v);
      else if (star_p) e = emit(out, spec, pv, v);
      else e = emit(out, spec, v);
    } else if (conv == 's' || conv == 'p') {
      uint64_t v;
      off = (off + 7) & ~(uint64_t)7;
      if (rd(ctx, args + off, &v, 8) != 0) goto badarg;
      off += 8;
      if (conv == 'p') {
        /* 0x-prefixed hex, as the device prints pointers */
        spec[k++] = '#';
        spec[k++] = 'l';
        spec[k++] = 'l';
        spec[k++] = 'x';
        spec[k] = '\0';
        e = star_w ? emit(out, spec, wv, (unsigned long long)v)
                   : emit(out, spec, (unsigned long long)v);
      } else {
        if (!v) strcpy(sarg, "(null)");
        else if (read_str(rd, ctx, v, sarg, FMT_MAX) != 0) goto badarg;
        spec[k++] = 's';
        spec[k] = '\0';
        if (star_w && star_p) e = emit(out, spec, wv, pv, sarg);
        else if (star_w) e = emit(out, spec, wv, sarg);
        else if (star_p) e = emit(out, spec, pv, sarg);
        else e = emit(out, spec, sarg);
      }
    } else {
      /* integers and %c */
      uint64_t v = 0;
      unsigned size = lng >= 1 ? 8 : 4;
      off = (off + size - 1) & ~(uint64_t)(size - 1);
      if (rd(ctx, args + off, &v, size) != 0) goto badarg;
      off += size;
      int is_signed = conv == 'd' || conv == 'i';
      long long sv;
      unsigned long long uv;
      if (size == 4) {
        sv = (int32_t)(uint32_t)v;
        uv = (uint32_t)v;
      } else {
        sv = (long long)v;
        uv = v;
      }
      if (lng == -1) { sv = (short)sv; uv = (unsigned short)uv; }
      if (lng == -2) { sv = (signed char)sv; uv = (unsigned char)uv; }
      if (conv == 'c') {
        spec[k++] = 'c';
        spec[k] = '\0';
        e = star_w ? emit(out, spec, wv, (int)uv) : emit(out, spec, (int)uv);
      } else {
        spec[k++] = 'l';
        spec[k++] = 'l';
        spec[k++] = conv;
        spec[k] = '\0';
        if (is_signed) {
          if (star_w && star_p) e = emit(out, spec, wv, pv, sv);
          else if (star_w) e = emit(out, spec, wv, sv);
          else if (star_p) e = emit(out, spec, pv, sv);
          else e = emit(out, spec, sv);
        } else {
          if (star_w && star_p) e = emit(out, spec, wv, pv, uv);
          else if (star_w) e = emit(out, spec, wv, uv);
          else if (star_p) e = emit(out, spec, pv, uv);
          else e = emit(out, spec, uv);
        }
      }
    }
    if (e != 0) goto nomem;
    p = q;
  }
  rc = 0;
  goto out;
nomem:
  snprintf(err, cap, "printf: out of memory");
  goto out;
badarg:
  snprintf(err, cap, "printf: argument %llu bytes into the buffer at 0x%llx is "
           "unreadable", (unsigned long long)off, (unsigned long long)args);
out:
  free(fmt);
  free(sarg);
  return rc;
}
