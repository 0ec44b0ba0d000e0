/*
 * emu_args.c -- kernel arguments and constant fills given as text, typed
 * against a kernel's PTX parameters and made on an emulated device
 * (emulator/emu_args.h).
 *
 * Why the arguments are typed by the PTX and not by the C++ signature: the
 * PTX is what runs, it is available for every input (.ptx has no source),
 * and it is what fixes the argument buffer's layout (emu_param_layout).
 * nvcc declares an `int n` as `.param .u32`, so every integer literal
 * accepts the range [-2^(w-1), 2^w - 1] of its width and is stored as its
 * two's complement.
 */
#include "emulator/emu_args.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ arg specs -- */

/* BYTES with an optional k/M/G suffix; 0 on success. */
int emu_parse_size(const char *s, size_t len, uint64_t *out) {
  if (len == 0 || !isdigit((unsigned char)s[0])) return -1;
  uint64_t v = 0;
  size_t i = 0;
  for (; i < len && isdigit((unsigned char)s[i]); i++) {
    unsigned dgt = (unsigned)(s[i] - '0');
    if (v > (UINT64_MAX - dgt) / 10) return -1;
    v = v * 10 + dgt;
  }
  unsigned shift = 0;
  if (i < len) {
    if (i + 1 != len) return -1;
    switch (s[i]) {
      case 'k': case 'K': shift = 10; break;
      case 'm': case 'M': shift = 20; break;
      case 'g': case 'G': shift = 30; break;
      default: return -1;
    }
  }
  if (shift && v > (UINT64_MAX >> shift)) return -1;
  *out = v << shift;
  return 0;
}

/* Unsigned decimal (or 0x hex) that must span the whole string. */
int emu_parse_u64(const char *s, uint64_t *out) {
  if (!*s || *s == '-' || *s == '+' || isspace((unsigned char)*s)) return -1;
  int base = (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) ? 16 : 10;
  char *e;
  errno = 0;
  unsigned long long v = strtoull(s, &e, base);
  if (errno || *e || e == s) return -1;
  *out = v;
  return 0;
}

/* FILL of a buffer (zero, seq, seqf, rand[:SEED], randf[:SEED],
   file=PATH) into a; 0, or -1 with why set. */
static int parse_fill(const char *f, emu_arg_spec *a, const char **why) {
  a->fill = EMU_FILL_ZERO;
  a->seed = 1;
  a->file = NULL;
  if (!strncmp(f, "file=", 5)) {
    a->fill = EMU_FILL_FILE;
    a->file = f + 5;
    if (!*a->file) { *why = "file= needs a path"; return -1; }
    return 0;
  }
  const char *c2 = strchr(f, ':'), *seed = NULL;
  size_t fl = c2 ? (size_t)(c2 - f) : strlen(f);
  if (c2) seed = c2 + 1;
  if (fl == 4 && !strncmp(f, "zero", 4)) a->fill = EMU_FILL_ZERO;
  else if (fl == 3 && !strncmp(f, "seq", 3)) a->fill = EMU_FILL_SEQ;
  else if (fl == 4 && !strncmp(f, "seqf", 4)) a->fill = EMU_FILL_SEQF;
  else if (fl == 4 && !strncmp(f, "rand", 4)) a->fill = EMU_FILL_RAND;
  else if (fl == 5 && !strncmp(f, "randf", 5)) a->fill = EMU_FILL_RANDF;
  else {
    *why = "unknown fill (zero, seq, seqf, rand[:SEED], randf[:SEED], file=PATH)";
    return -1;
  }
  if (seed) {
    if (a->fill != EMU_FILL_RAND && a->fill != EMU_FILL_RANDF) {
      *why = "only rand and randf take a seed";
      return -1;
    }
    if (emu_parse_u64(seed, &a->seed)) { *why = "bad seed (an unsigned integer)"; return -1; }
  }
  return 0;
}

int emu_arg_parse(emu_arg_spec *a, char *why, size_t cap) {
  const char *t = a->text;
  memset(a, 0, sizeof *a);
  a->text = t;
  if (strncmp(t, "buf:", 4)) return 0; /* a literal; typed later */
  a->is_buf = 1;
  a->fill = EMU_FILL_ZERO;
  a->seed = 1;
  a->file = NULL;
  const char *p = t + 4, *c = strchr(p, ':');
  size_t n = c ? (size_t)(c - p) : strlen(p);
  if (emu_parse_size(p, n, &a->bytes) || a->bytes == 0) {
    snprintf(why, cap, "bad buffer size '%.*s' (bytes > 0, optional k/M/G)", (int)n, p);
    return -1;
  }
  if (!c) return 0;
  const char *w = NULL;
  if (parse_fill(c + 1, a, &w)) {
    snprintf(why, cap, "%s", w);
    return -1;
  }
  return 0;
}

static int hexval(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* Bits of a PTX float spelling 0fXXXXXXXX (digits == 8) or 0dX..X (16). */
static int parse_ptx_fbits(const char *s, char pfx, unsigned digits, uint64_t *bits) {
  if (s[0] != '0' || (s[1] != pfx && s[1] != (char)toupper((unsigned char)pfx))) return -1;
  if (strlen(s + 2) != digits) return -1;
  uint64_t v = 0;
  for (unsigned i = 0; i < digits; i++) {
    int h = hexval((unsigned char)s[2 + i]);
    if (h < 0) return -1;
    v = v << 4 | (uint64_t)h;
  }
  *bits = v;
  return 0;
}

int emu_arg_encode(const ptx_var *p, const char *s, unsigned char *out, const char **why) {
  uint64_t size = p->size;
  if (!strncmp(s, "hex:", 4)) {
    const char *h = s + 4;
    if (strlen(h) != 2 * size) {
      *why = "hex: needs exactly two hex digits per parameter byte";
      return -1;
    }
    for (uint64_t i = 0; i < size; i++) {
      int hi = hexval((unsigned char)h[2 * i]), lo = hexval((unsigned char)h[2 * i + 1]);
      if (hi < 0 || lo < 0) { *why = "not a hex digit"; return -1; }
      out[i] = (unsigned char)(hi << 4 | lo);
    }
    return 0;
  }
  ptx_type t = (ptx_type)p->type;
  if (p->count != 1 || p->vec != 1 || size > 8) {
    *why = "an aggregate parameter takes hex:BYTES";
    return -1;
  }
  if (!*s || isspace((unsigned char)*s)) { *why = "empty value"; return -1; }
  uint64_t bits = 0;
  if (t == PTX_T_F32 || t == PTX_T_F64) {
    if (t == PTX_T_F32 && !parse_ptx_fbits(s, 'f', 8, &bits)) {
    } else if (t == PTX_T_F64 && !parse_ptx_fbits(s, 'd', 16, &bits)) {
    } else {
      char *e;
      errno = 0;
      if (t == PTX_T_F32) {
        float f = strtof(s, &e);
        if (*e || e == s) { *why = "not a number (expected a float)"; return -1; }
        if (errno == ERANGE && isinf(f)) { *why = "out of range for .f32"; return -1; }
        uint32_t b;
        memcpy(&b, &f, 4);
        bits = b;
      } else {
        double d = strtod(s, &e);
        if (*e || e == s) { *why = "not a number (expected a float)"; return -1; }
        if (errno == ERANGE && isinf(d)) { *why = "out of range for .f64"; return -1; }
        memcpy(&bits, &d, 8);
      }
    }
  } else if (t == PTX_T_F16 || t == PTX_T_BF16 || t == PTX_T_F16X2 || t == PTX_T_BF16X2 ||
             t == PTX_T_PRED || t == PTX_T_NONE || t == PTX_T_B128) {
    *why = "this parameter type takes hex:BYTES";
    return -1;
  } else {
    unsigned w = 8 * ptx_type_size(t);
    if (w == 0 || w > 64 || size * 8 != w) { *why = "this parameter type takes hex:BYTES"; return -1; }
    int neg = s[0] == '-';
    const char *d = neg ? s + 1 : s;
    uint64_t mag;
    if (emu_parse_u64(d, &mag)) { *why = "not an integer (decimal or 0x-hex)"; return -1; }
    uint64_t umax = w == 64 ? UINT64_MAX : ((uint64_t)1 << w) - 1;
    uint64_t nmax = (uint64_t)1 << (w - 1); /* largest magnitude of a negative */
    if (neg ? mag > nmax : mag > umax) { *why = "out of range for the parameter's width"; return -1; }
    bits = neg ? (uint64_t)0 - mag : mag;
  }
  for (uint64_t i = 0; i < size; i++) out[i] = (unsigned char)(bits >> (8 * i));
  return 0;
}

/* ----------------------------------------------------------- buffer fill -- */

/* The emulator's pattern of a fill other than zero and file. */
static emu_pattern pattern_of(const emu_arg_spec *a) {
  emu_pattern p = {EMU_PAT_ZERO, a->seed};
  switch (a->fill) {
    case EMU_FILL_SEQ: p.kind = EMU_PAT_SEQ; break;
    case EMU_FILL_SEQF: p.kind = EMU_PAT_SEQF; break;
    case EMU_FILL_RAND: p.kind = EMU_PAT_RAND; break;
    case EMU_FILL_RANDF: p.kind = EMU_PAT_RANDF; break;
    default: break;
  }
  return p;
}

int emu_arg_fill(emu_device *d, const emu_arg_spec *a, uint64_t addr, size_t n, const char *what,
                 char *err, size_t cap) {
  if (a->fill == EMU_FILL_ZERO && a->is_buf) return 0; /* emu_malloc zero-fills */
  char e2[512] = "";
  unsigned char *host = emu_host_ptr(d, addr, n), *tmp = NULL;
  if (!host) {
    host = tmp = calloc(1, n ? n : 1);
    if (!tmp) { snprintf(err, cap, "%s: out of memory", what); return -1; }
  }
  int rc = 0;
  if (a->fill == EMU_FILL_FILE) {
    FILE *f = fopen(a->file, "rb");
    if (!f) {
      snprintf(err, cap, "%s: cannot open (%s): %s", a->file, what, strerror(errno));
      rc = -1;
    } else {
      size_t got = fread(host, 1, n, f);
      int more = got == n && fgetc(f) != EOF;
      if (ferror(f)) {
        snprintf(err, cap, "%s: read error (%s)", a->file, what);
        rc = -1;
      } else if (more) {
        snprintf(err, cap, "%s: file is larger than the memory of %s (%zu bytes)", a->file, what,
                 n);
        rc = -1;
      } else if (got < n) {
        memset(host + got, 0, n - got);
      }
      fclose(f);
    }
  } else if (a->fill == EMU_FILL_ZERO) {
    memset(host, 0, n);
  } else {
    emu_pattern p = pattern_of(a);
    emu_fill_pattern(&p, 0, host, n);
  }
  if (!rc && tmp && emu_memcpy_htod(d, addr, tmp, n, e2, sizeof e2)) {
    snprintf(err, cap, "%s: %s", what, e2);
    rc = -1;
  }
  free(tmp);
  return rc;
}

int emu_arg_buffer(emu_device *d, const emu_arg_spec *a, unsigned idx, uint64_t *addr, char *err,
                   size_t cap) {
  char e2[512] = "", what[32];
  if (a->bytes > SIZE_MAX / 2) {
    snprintf(err, cap, "--arg %u '%s': buffer too large", idx, a->text);
    return -1;
  }
  size_t n = (size_t)a->bytes;
  /* a pattern buffer is filled page by page as the launch reaches it */
  int lazy = a->fill != EMU_FILL_ZERO && a->fill != EMU_FILL_FILE;
  emu_pattern p = pattern_of(a);
  if (lazy ? emu_malloc_lazy(d, n, emu_fill_pattern, &p, sizeof p, addr, e2, sizeof e2)
           : emu_malloc(d, n, addr, e2, sizeof e2)) {
    snprintf(err, cap, "--arg %u '%s': %s", idx, a->text, e2);
    return -1;
  }
  if (lazy) return 0;
  snprintf(what, sizeof what, "--arg %u", idx);
  return emu_arg_fill(d, a, *addr, n, what, err, cap);
}

/* ------------------------------------------------------ constant fills -- */

int emu_const_parse(const char *text, emu_const_spec *out, char *tail, size_t cap) {
  memset(out, 0, sizeof *out);
  out->text = text;
  const char *eq = strchr(text, '=');
  size_t n = eq ? (size_t)(eq - text) : 0;
  const char *why = NULL;
  if (!eq || n == 0 || n >= sizeof out->name || !eq[1]) {
    snprintf(tail, cap, " (expected NAME=FILL)");
    return -1;
  }
  for (size_t i = 0; i < n; i++)
    if (!isalnum((unsigned char)text[i]) && text[i] != '_' && text[i] != '$') {
      snprintf(tail, cap, ": '%.*s' is not a symbol name", (int)n, text);
      return -1;
    }
  memcpy(out->name, text, n);
  out->name[n] = 0;
  out->fill.text = text;
  if (parse_fill(eq + 1, &out->fill, &why)) {
    snprintf(tail, cap, ": %s", why);
    return -1;
  }
  return 0;
}

/* Address and size of the module variable name, declared in C++ namespace
   ns when ns is set: its PTX name is then mangled (_ZN<ns><name>E), or it
   is NAME__ns, plain or mangled, when the Kernel Tuner importer's grouped
   compilation renamed it (an extern "C" symbol). */
static int find_const(emu_module *em, const char *name, const char *ns, uint64_t *addr,
                      size_t *size, char *err, size_t cap) {
  char cand[4][600];
  int nc = 0;
  if (ns) {
    char ren[300];
    snprintf(ren, sizeof ren, "%s__%s", name, ns);
    snprintf(cand[nc++], sizeof cand[0], "_ZN%zu%s%zu%sE", strlen(ns), ns, strlen(name), name);
    snprintf(cand[nc++], sizeof cand[0], "%s", ren);
    snprintf(cand[nc++], sizeof cand[0], "_ZN%zu%s%zu%sE", strlen(ns), ns, strlen(ren), ren);
  } else {
    snprintf(cand[nc++], sizeof cand[0], "%s", name);
  }
  for (int i = 0; i < nc; i++) {
    char e2[512] = "";
    if (emu_symbol(em, cand[i], addr, size, e2, sizeof e2) == 0) return 0;
  }
  snprintf(err, cap, "--const %s: the kernel's module has no .const or .global variable %s", name,
           name);
  return -1;
}

/* ------------------------------------------------------------ a launch -- */

int emu_launch_args(emu_device *dev, emu_module *em, const ptx_func *k, const emu_arg_spec *args,
                    unsigned nargs, const emu_const_spec *consts, size_t nconsts, const char *ns,
                    const emu_launch_cfg *cfg, feat_vec *features, emu_stats *st, char *err,
                    size_t cap) {
  char e2[1024] = "";
  int rc = -1;
  if (nargs != k->nparams) {
    snprintf(err, cap, "kernel %s takes %u parameter%s, got %u --arg", k->name, k->nparams,
             k->nparams == 1 ? "" : "s", nargs);
    return 1;
  }
  size_t *offs = calloc(k->nparams + 1, sizeof *offs), total = 0;
  uint64_t *addrs = calloc(k->nparams + 1, sizeof *addrs);
  unsigned char *pbuf = NULL;
  if (!offs || !addrs || emu_param_layout(k, offs, &total) ||
      !(pbuf = calloc(total ? total : 1, 1))) {
    snprintf(err, cap, "out of memory");
    goto out;
  }
  for (unsigned i = 0; i < nargs; i++) {
    const ptx_var *p = &k->params[i];
    const emu_arg_spec *a = &args[i];
    const char *why = NULL;
    if (a->is_buf) {
      if (p->size != 8 || p->count != 1) {
        snprintf(err, cap, "--arg %u '%s': parameter %u (.%s) cannot hold a device address", i,
                 a->text, i, ptx_type_name((ptx_type)p->type));
        rc = 1;
        goto out;
      }
      if (emu_arg_buffer(dev, a, i, &addrs[i], err, cap)) goto out;
      for (int b = 0; b < 8; b++) pbuf[offs[i] + (size_t)b] = (unsigned char)(addrs[i] >> (8 * b));
    } else if (emu_arg_encode(p, a->text, pbuf + offs[i], &why)) {
      snprintf(err, cap, "--arg %u '%s': %s (parameter %u is .%s)", i, a->text, why, i,
               ptx_type_name((ptx_type)p->type));
      rc = 1;
      goto out;
    }
  }
  for (size_t c = 0; c < nconsts; c++) {
    uint64_t addr = 0;
    size_t size = 0;
    char what[300];
    if (find_const(em, consts[c].name, ns, &addr, &size, err, cap)) { rc = 1; goto out; }
    snprintf(what, sizeof what, "--const %s", consts[c].name);
    if (emu_arg_fill(dev, &consts[c].fill, addr, size, what, err, cap)) goto out;
  }
  emu_launch_cfg run = *cfg;
  run.params = pbuf;
  run.params_size = total;
  if (emu_launch(em, k->name, &run, features, st, e2, sizeof e2)) {
    snprintf(err, cap, "%s", e2[0] ? e2 : "launch failed");
    goto out;
  }
  rc = 0;
out:
  for (unsigned i = 0; addrs && i < nargs; i++)
    if (addrs[i]) emu_free(dev, addrs[i], e2, sizeof e2);
  free(pbuf);
  free(addrs);
  free(offs);
  return rc;
}
