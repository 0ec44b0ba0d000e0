/*
 * cli_launch.c -- one kernel launch on the CPU emulator from command-line
 * options, shared by `kcast emulate` and `kcast predict FILE`.
 *
 * What it owns: the launch options (--kernel --grid --block --shared --arg
 * --sample --threads --budget --timeout --oob --compiler --arch and the input
 * file), the typing of the --arg list against the kernel's PTX parameters,
 * the device with one buffer per buf: argument, and the launch itself with a
 * watcher that says on stderr when a launch runs for more than a second.
 * Why one place: both commands must accept exactly the same argument specs
 * and fill buffers with exactly the same bytes, so that features emulated by
 * one are the features predicted by the other.
 *
 * Why the arguments are typed by the PTX and not by the C++ signature: the
 * PTX is what runs, it is available for every input (.ptx has no source),
 * and it is what fixes the argument buffer's layout (emu_param_layout).
 * nvcc declares an `int n` as `.param .u32`, so every integer literal
 * accepts the range [-2^(w-1), 2^w - 1] of its width and is stored as its
 * two's complement.
 *
 * Errors are printed here (cli/ may print) with the command's name; the
 * functions return the exit code to use.
 */
#include "cli/cli.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "emulator/emu.h"
#include "extractor/features.h"
#include "extractor/frontend.h"
#include "extractor/ptx.h"

/* ------------------------------------------------------------ arg specs -- */

/* BYTES with an optional k/M/G suffix; 0 on success. */
static int parse_size(const char *s, size_t len, uint64_t *out) {
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
static int parse_u64_full(const char *s, uint64_t *out) {
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
static int parse_fill(const char *f, cli_arg_spec *a, const char **why) {
  a->fill = CLI_FILL_ZERO;
  a->seed = 1;
  a->file = NULL;
  if (!strncmp(f, "file=", 5)) {
    a->fill = CLI_FILL_FILE;
    a->file = f + 5;
    if (!*a->file) { *why = "file= needs a path"; return -1; }
    return 0;
  }
  const char *c2 = strchr(f, ':'), *seed = NULL;
  size_t fl = c2 ? (size_t)(c2 - f) : strlen(f);
  if (c2) seed = c2 + 1;
  if (fl == 4 && !strncmp(f, "zero", 4)) a->fill = CLI_FILL_ZERO;
  else if (fl == 3 && !strncmp(f, "seq", 3)) a->fill = CLI_FILL_SEQ;
  else if (fl == 4 && !strncmp(f, "seqf", 4)) a->fill = CLI_FILL_SEQF;
  else if (fl == 4 && !strncmp(f, "rand", 4)) a->fill = CLI_FILL_RAND;
  else if (fl == 5 && !strncmp(f, "randf", 5)) a->fill = CLI_FILL_RANDF;
  else {
    *why = "unknown fill (zero, seq, seqf, rand[:SEED], randf[:SEED], file=PATH)";
    return -1;
  }
  if (seed) {
    if (a->fill != CLI_FILL_RAND && a->fill != CLI_FILL_RANDF) {
      *why = "only rand and randf take a seed";
      return -1;
    }
    if (parse_u64_full(seed, &a->seed)) { *why = "bad seed (an unsigned integer)"; return -1; }
  }
  return 0;
}

/*
 * Syntax of one --arg (the parameter type is checked later).  Returns 0, or
 * -1 after printing a usage error naming the argument.
 */
static int parse_arg_syntax(const char *cmd, cli_arg_spec *a, unsigned idx) {
  const char *t = a->text;
  memset(a, 0, sizeof *a);
  a->text = t;
  if (strncmp(t, "buf:", 4)) return 0; /* a literal; typed later */
  a->is_buf = 1;
  a->fill = CLI_FILL_ZERO;
  a->seed = 1;
  a->file = NULL;
  const char *p = t + 4, *c = strchr(p, ':');
  size_t n = c ? (size_t)(c - p) : strlen(p);
  if (parse_size(p, n, &a->bytes) || a->bytes == 0) {
    cli_usage_error(cmd, "--arg %u '%s': bad buffer size '%.*s' (bytes > 0, optional k/M/G)",
                    idx, t, (int)n, p);
    return -1;
  }
  if (!c) return 0;
  const char *why = NULL;
  if (parse_fill(c + 1, a, &why)) {
    cli_usage_error(cmd, "--arg %u '%s': %s", idx, t, why);
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

/*
 * Encode literal text for parameter p into out (p->size bytes).  Returns 0,
 * or -1 with why filled in.
 */
static int encode_literal(const ptx_var *p, const char *s, unsigned char *out,
                          const char **why) {
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
    if (parse_u64_full(d, &mag)) { *why = "not an integer (decimal or 0x-hex)"; return -1; }
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
static emu_pattern pattern_of(const cli_arg_spec *a) {
  emu_pattern p = {EMU_PAT_ZERO, a->seed};
  switch (a->fill) {
    case CLI_FILL_SEQ: p.kind = EMU_PAT_SEQ; break;
    case CLI_FILL_SEQF: p.kind = EMU_PAT_SEQF; break;
    case CLI_FILL_RAND: p.kind = EMU_PAT_RAND; break;
    case CLI_FILL_RANDF: p.kind = EMU_PAT_RANDF; break;
    default: break;
  }
  return p;
}

/* Fill n device bytes at addr as a says; 0, or -1 with the reason in err
   (what names the argument in messages: "--arg 2"). */
static int fill_region(emu_device *d, const cli_arg_spec *a, uint64_t addr, size_t n,
                       const char *what, char *err, size_t cap) {
  if (a->fill == CLI_FILL_ZERO && a->is_buf) return 0; /* emu_malloc zero-fills */
  char e2[512] = "";
  unsigned char *host = emu_host_ptr(d, addr, n), *tmp = NULL;
  if (!host) {
    host = tmp = calloc(1, n ? n : 1);
    if (!tmp) { snprintf(err, cap, "%s: out of memory", what); return -1; }
  }
  int rc = 0;
  if (a->fill == CLI_FILL_FILE) {
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
  } else if (a->fill == CLI_FILL_ZERO) {
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

/* Allocate and fill the buffer of a at *addr; 0, or -1 with err set. */
static int make_buffer_err(emu_device *d, const cli_arg_spec *a, unsigned idx, uint64_t *addr,
                           char *err, size_t cap) {
  char e2[512] = "", what[32];
  if (a->bytes > SIZE_MAX / 2) {
    snprintf(err, cap, "--arg %u '%s': buffer too large", idx, a->text);
    return -1;
  }
  size_t n = (size_t)a->bytes;
  /* a pattern buffer is filled page by page as the launch reaches it */
  int lazy = a->fill != CLI_FILL_ZERO && a->fill != CLI_FILL_FILE;
  emu_pattern p = pattern_of(a);
  if (lazy ? emu_malloc_lazy(d, n, emu_fill_pattern, &p, sizeof p, addr, e2, sizeof e2)
           : emu_malloc(d, n, addr, e2, sizeof e2)) {
    snprintf(err, cap, "--arg %u '%s': %s", idx, a->text, e2);
    return -1;
  }
  if (lazy) return 0;
  snprintf(what, sizeof what, "--arg %u", idx);
  return fill_region(d, a, *addr, n, what, err, cap);
}

/* Allocate and fill the buffer of a; 0, or -1 after printing the error. */
static int make_buffer(emu_device *d, cli_arg_spec *a, unsigned idx) {
  char err[1024] = "";
  if (make_buffer_err(d, a, idx, &a->addr, err, sizeof err)) {
    cli_error("%s", err);
    return -1;
  }
  return 0;
}

/* --------------------------------------------------------------- dumps -- */

/* Write n bytes to path atomically (temp file + rename); 0 or -1 printed. */
static int write_atomic(const char *path, const void *data, size_t n) {
  cli_out o;
  if (cli_out_open(&o, path)) return -1;
  int ok = !n || fwrite(data, 1, n, o.f) == n;
  return cli_out_close(&o, ok) == 0 && ok ? 0 : -1;
}

static int do_dump(emu_device *d, const cli_arg_spec *a, unsigned long param, const char *path) {
  size_t n = (size_t)a->bytes;
  char err[512] = "";
  const void *src = emu_host_ptr(d, a->addr, n);
  void *tmp = NULL;
  if (!src) {
    tmp = malloc(n);
    if (!tmp) { cli_error("out of memory"); return -1; }
    if (emu_memcpy_dtoh(d, tmp, a->addr, n, err, sizeof err)) {
      cli_error("--dump %lu: %s", param, err);
      free(tmp);
      return -1;
    }
    src = tmp;
  }
  int rc = write_atomic(path, src, n);
  free(tmp);
  return rc;
}

/* ----------------------------------------------------------- progress -- */

/* A watcher thread says on stderr that a long launch is running (the
   emulator has no progress callback; this keeps the user informed), when
   stderr is a terminal or --progress asks. */
typedef struct watcher {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int done;
  int shown;
  const char *cmd;
  const char *kernel;
  uint64_t ctas;
} watcher;

static void *watch_fn(void *arg) {
  watcher *w = arg;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_sec += 1;
  pthread_mutex_lock(&w->mu);
  while (!w->done) {
    if (pthread_cond_timedwait(&w->cv, &w->mu, &ts) == ETIMEDOUT) break;
  }
  if (!w->done) {
    w->shown = 1;
    fprintf(stderr, "kcast %s: emulating %s (%" PRIu64 " CTAs)...\n", w->cmd, w->kernel, w->ctas);
    fflush(stderr);
  }
  pthread_mutex_unlock(&w->mu);
  return NULL;
}

/* ------------------------------------------------------------ options -- */

/* X[,Y,Z]: each a positive integer that fits in unsigned; 0 on success. */
static int parse_dims(const char *s, unsigned out[3]) {
  out[0] = out[1] = out[2] = 1;
  const char *p = s;
  for (int i = 0; i < 3; i++) {
    if (!isdigit((unsigned char)*p)) return -1;
    char *e;
    errno = 0;
    unsigned long v = strtoul(p, &e, 10);
    if (errno || v == 0 || v > UINT_MAX) return -1;
    out[i] = (unsigned)v;
    if (!*e) return 0;
    if (*e != ',') return -1;
    p = e + 1;
  }
  return -1;
}

static const char *param_type_name(const ptx_var *p) {
  return ptx_type_name((ptx_type)p->type);
}

/* Parameters an error message lists at most (the rest are counted). */
#define PARAM_LIST_MAX 16

/* "0 .u32 name, 1 .f32 name, ..." into a malloc'd string (NULL on ENOMEM);
   past PARAM_LIST_MAX, "... and N more". */
static char *param_list(const ptx_func *k) {
  uint32_t shown = k->nparams < PARAM_LIST_MAX ? k->nparams : PARAM_LIST_MAX;
  size_t cap = 64;
  for (uint32_t i = 0; i < shown; i++)
    cap += strnlen(k->params[i].name ? k->params[i].name : "", 256) + 48;
  char *s = malloc(cap);
  if (!s) return NULL;
  size_t len = 0;
  s[0] = 0;
  for (uint32_t i = 0; i < shown && len < cap; i++) {
    const ptx_var *p = &k->params[i];
    char dim[32] = "";
    if (p->count != 1) snprintf(dim, sizeof dim, "[%" PRIu64 "]", p->count);
    len += (size_t)snprintf(s + len, cap - len, "%s%u: .%s%s %.256s", i ? ", " : "", i,
                            param_type_name(p), dim, p->name ? p->name : "");
  }
  if (shown < k->nparams && len < cap)
    snprintf(s + len, cap - len, ", ... and %u more", k->nparams - shown);
  if (k->nparams == 0) snprintf(s, cap, "(none)");
  return s;
}

/* ----------------------------------------------------------- the launch -- */

int cli_launch_init(cli_launch *L, const char *cmd, int argc) {
  memset(L, 0, sizeof *L);
  L->cmd = cmd;
  L->fo.compiler = FE_NVCC;
  emu_launch_cfg_init(&L->cfg);
  L->args = calloc((size_t)argc + 1, sizeof *L->args);
  if (!L->args) { cli_error("out of memory"); return KCAST_EXIT_USER; }
  return KCAST_EXIT_OK;
}

enum { O_KERNEL = CLI_OPT_LAUNCH, O_COMPILER, O_ARCH, O_GRID, O_BLOCK, O_SHARED, O_ARG,
       O_SAMPLE, O_THREADS, O_BUDGET, O_TIMEOUT, O_OOB };

const struct option cli_launch_longopts[] = {
  {"kernel", required_argument, NULL, O_KERNEL},
  {"compiler", required_argument, NULL, O_COMPILER},
  {"arch", required_argument, NULL, O_ARCH},
  {"grid", required_argument, NULL, O_GRID},
  {"block", required_argument, NULL, O_BLOCK},
  {"shared", required_argument, NULL, O_SHARED},
  {"arg", required_argument, NULL, O_ARG},
  {"sample", required_argument, NULL, O_SAMPLE},
  {"threads", required_argument, NULL, O_THREADS},
  {"budget", required_argument, NULL, O_BUDGET},
  {"timeout", required_argument, NULL, O_TIMEOUT},
  {"oob", required_argument, NULL, O_OOB},
  {NULL, 0, NULL, 0},
};

int cli_launch_option(cli_launch *L, cli_opts *o, int which) {
  const char *cmd = L->cmd, *val = o->arg;
  uint64_t u = 0;
  int fr = cli_fe_option(&L->fa, o, which);
  if (fr) {
    L->fo.extra = L->fa.v;
    L->fo.nextra = L->fa.n;
    return fr;
  }
  switch (which) {
    case O_KERNEL: L->kernel = val; return 1;
    case O_COMPILER:
      if (!strcmp(val, "nvcc")) L->fo.compiler = FE_NVCC;
      else if (!strcmp(val, "clang")) L->fo.compiler = FE_CLANG;
      else { cli_usage_error(cmd, "unknown compiler '%s' (nvcc or clang)", val); return -1; }
      return 1;
    case O_ARCH:
      if (strncmp(val, "sm_", 3) || !isdigit((unsigned char)val[3])) {
        cli_usage_error(cmd, "bad --arch '%s' (expected sm_XX)", val);
        return -1;
      }
      L->fo.arch = val;
      return 1;
    case O_GRID:
    case O_BLOCK:
      if (parse_dims(val, which == O_GRID ? L->cfg.grid : L->cfg.block)) {
        cli_usage_error(cmd, "bad %s '%s' (expected X[,Y,Z], each a positive integer)",
                        o->name, val);
        return -1;
      }
      if (which == O_GRID) L->have_grid = 1; else L->have_block = 1;
      return 1;
    case O_SHARED:
      if (parse_size(val, strlen(val), &u) || u > SIZE_MAX / 2) {
        cli_usage_error(cmd, "bad --shared '%s' (bytes, optional k suffix)", val);
        return -1;
      }
      L->cfg.shared_bytes = (size_t)u;
      return 1;
    case O_ARG:
      L->args[L->nargs].text = val;
      if (parse_arg_syntax(cmd, &L->args[L->nargs], L->nargs)) return -1;
      L->nargs++;
      return 1;
    case O_SAMPLE:
    case O_THREADS:
    case O_BUDGET:
      if (parse_u64_full(val, &u) || (which != O_BUDGET && u == 0) ||
          (which == O_THREADS && u > 4096)) {
        cli_usage_error(cmd, "bad %s '%s' (expected a positive integer)", o->name, val);
        return -1;
      }
      if (which == O_SAMPLE) L->cfg.sample_ctas = u;
      else if (which == O_THREADS) L->cfg.threads = (int)u;
      else L->cfg.insn_budget = u;
      return 1;
    case O_TIMEOUT: {
      char *e;
      errno = 0;
      double t = strtod(val, &e);
      if (errno || *e || e == val || !(t > 0) || !isfinite(t)) {
        cli_usage_error(cmd, "bad --timeout '%s' (expected seconds > 0)", val);
        return -1;
      }
      L->cfg.time_limit_s = t;
      return 1;
    }
    case O_OOB:
      if (!strcmp(val, "error")) L->cfg.oob = EMU_OOB_ERROR;
      else if (!strcmp(val, "warn")) L->cfg.oob = EMU_OOB_WARN;
      else { cli_usage_error(cmd, "bad --oob '%s' (error or warn)", val); return -1; }
      return 1;
    default:
      return 0;
  }
}

int cli_launch_operands(cli_launch *L, const cli_opts *o) {
  if (CLI_NOPERANDS(o) > 1)
    return cli_usage_error(L->cmd, "only one input file (got '%s' and '%s')", CLI_OPERANDS(o)[0],
                           CLI_OPERANDS(o)[1]);
  if (CLI_NOPERANDS(o)) L->path = CLI_OPERANDS(o)[0];
  return KCAST_EXIT_OK;
}

int cli_launch_check(cli_launch *L) {
  const char *cmd = L->cmd;
  if (!L->path) return cli_usage_error(cmd, "missing input file");
  if (!L->have_grid) return cli_usage_error(cmd, "missing --grid X[,Y,Z]");
  if (!L->have_block) return cli_usage_error(cmd, "missing --block X[,Y,Z]");
  const unsigned *b = L->cfg.block;
  if ((uint64_t)b[0] * b[1] * b[2] > 1024)
    return cli_usage_error(cmd, "--block %ux%ux%u has more than 1024 threads", b[0], b[1], b[2]);
  return KCAST_EXIT_OK;
}

int cli_launch_load(cli_launch *L) {
  const char *cmd = L->cmd, *path = L->path;
  char ferr[1024] = "";
  ptx_error perr;
  memset(&perr, 0, sizeof perr);
  if (fe_to_ptx(path, &L->fo, &L->text, &L->len, ferr, sizeof ferr)) {
    cli_error("%s", ferr[0] ? ferr : "cannot read input");
    return KCAST_EXIT_USER;
  }
  L->m = ptx_parse(L->text, L->len, path, &perr);
  if (!L->m) {
    cli_error("%s", perr.msg[0] ? perr.msg : "cannot parse PTX");
    return KCAST_EXIT_USER;
  }
  const ptx_func **sel = calloc(L->m->nfuncs ? L->m->nfuncs : 1, sizeof *sel);
  if (!sel) { cli_error("out of memory"); return KCAST_EXIT_USER; }
  long nsel = cli_select_kernels(L->m, L->kernel, sel, path);
  const ptx_func *k = nsel == 1 ? sel[0] : NULL;
  free(sel);
  if (nsel < 0) return KCAST_EXIT_USER;
  if (nsel == 0) { cli_error("%s: no kernels (.entry) in this file", path); return KCAST_EXIT_USER; }
  if (nsel > 1) {
    cli_error("%s: %ld kernels; choose one with --kernel (see 'kcast extract %s --list')", path,
              nsel, path);
    return KCAST_EXIT_USER;
  }
  L->k = k;

  /* Type the arguments against the kernel's parameters. */
  if (L->nargs != k->nparams) {
    char *plist = param_list(k);
    int rc = cli_usage_error(cmd, "kernel %s takes %u parameter%s, got %u --arg: %s", k->name,
                             k->nparams, k->nparams == 1 ? "" : "s", L->nargs,
                             plist ? plist : "");
    free(plist);
    return rc;
  }
  L->offs = calloc(k->nparams + 1, sizeof *L->offs);
  if (!L->offs) { cli_error("out of memory"); return KCAST_EXIT_USER; }
  if (emu_param_layout(k, L->offs, &L->ptotal)) {
    cli_error("%s: cannot lay out the parameters of %s", path, k->name);
    return KCAST_EXIT_USER;
  }
  L->pbuf = calloc(L->ptotal ? L->ptotal : 1, 1);
  if (!L->pbuf) { cli_error("out of memory"); return KCAST_EXIT_USER; }
  for (unsigned i = 0; i < L->nargs; i++) {
    const ptx_var *p = &k->params[i];
    const cli_arg_spec *a = &L->args[i];
    if (a->is_buf) {
      if (p->size != 8 || p->count != 1)
        return cli_usage_error(cmd, "--arg %u '%s': parameter %u (.%s %s) cannot hold a device "
                               "address (needs a 64-bit parameter)", i, a->text, i,
                               param_type_name(p), p->name ? p->name : "");
      continue;
    }
    const char *why = NULL;
    if (encode_literal(p, a->text, L->pbuf + L->offs[i], &why))
      return cli_usage_error(cmd, "--arg %u '%s': %s (parameter %u is .%s %s)", i, a->text, why,
                             i, param_type_name(p), p->name ? p->name : "");
  }
  return KCAST_EXIT_OK;
}

int cli_launch_device(cli_launch *L) {
  char ferr[1024] = "";
  L->dev = emu_device_new();
  if (!L->dev) { cli_error("out of memory"); return KCAST_EXIT_USER; }
  if (emu_module_load(L->dev, L->m, &L->em, ferr, sizeof ferr)) {
    cli_error("%s", ferr);
    return KCAST_EXIT_USER;
  }
  for (unsigned i = 0; i < L->nargs; i++) {
    cli_arg_spec *a = &L->args[i];
    if (!a->is_buf) continue;
    if (make_buffer(L->dev, a, i)) return KCAST_EXIT_USER;
    for (int b = 0; b < 8; b++) L->pbuf[L->offs[i] + (size_t)b] = (unsigned char)(a->addr >> (8 * b));
  }
  return KCAST_EXIT_OK;
}

int cli_launch_run(cli_launch *L, FILE *printf_out, feat_vec *features, emu_stats *st) {
  char ferr[1024] = "";
  emu_stats local;
  if (!st) st = &local;
  memset(st, 0, sizeof *st);
  L->cfg.params = L->pbuf;
  L->cfg.params_size = L->ptotal;
  L->cfg.printf_out = printf_out;
  watcher w;
  memset(&w, 0, sizeof w);
  pthread_mutex_init(&w.mu, NULL);
  pthread_cond_init(&w.cv, NULL);
  w.cmd = L->cmd;
  w.kernel = L->k->name;
  w.ctas = (uint64_t)L->cfg.grid[0] * L->cfg.grid[1] * L->cfg.grid[2];
  pthread_t wt;
  /* the note is for a person watching, or a log that asked (--progress) */
  int have_watch = cli_progress_style() != CLI_PROGRESS_NONE &&
                   pthread_create(&wt, NULL, watch_fn, &w) == 0;
  int lrc = emu_launch(L->em, L->k->name, &L->cfg, features, st, ferr, sizeof ferr);
  pthread_mutex_lock(&w.mu);
  w.done = 1;
  pthread_cond_signal(&w.cv);
  pthread_mutex_unlock(&w.mu);
  if (have_watch) pthread_join(wt, NULL);
  pthread_cond_destroy(&w.cv);
  pthread_mutex_destroy(&w.mu);
  if (w.shown) fprintf(stderr, "kcast %s: %s %s after %.1f s\n", L->cmd, L->k->name,
                       lrc ? "stopped" : "finished", st->seconds);
  if (lrc) {
    cli_error("%s", ferr[0] ? ferr : "launch failed");
    return KCAST_EXIT_USER;
  }
  if (st->oob_accesses)
    fprintf(stderr, "kcast %s: %" PRIu64 " out-of-bounds access%s tolerated (--oob warn: reads "
            "gave 0, writes were dropped); the first: %s\n", L->cmd, st->oob_accesses,
            st->oob_accesses == 1 ? "" : "es", st->oob_first);
  return KCAST_EXIT_OK;
}

int cli_launch_dump(cli_launch *L, unsigned long param, const char *path) {
  if (param >= L->nargs || !L->args[param].is_buf || !L->dev) {
    cli_error("--dump %lu=%s: parameter %lu is not a buf: argument", param, path, param);
    return KCAST_EXIT_USER;
  }
  return do_dump(L->dev, &L->args[param], param, path) ? KCAST_EXIT_USER : KCAST_EXIT_OK;
}

void cli_launch_free(cli_launch *L) {
  if (!L) return;
  emu_module_free(L->em);
  emu_device_free(L->dev);
  free(L->pbuf);
  free(L->offs);
  ptx_module_free(L->m);
  free(L->text);
  free(L->args);
  memset(L, 0, sizeof *L);
}

/* ------------------------------------------- launches on worker threads -- */

int cli_parse_const(const char *cmd, const char *text, cli_const_spec *out) {
  memset(out, 0, sizeof *out);
  out->text = text;
  const char *eq = strchr(text, '=');
  size_t n = eq ? (size_t)(eq - text) : 0;
  const char *why = NULL;
  if (!eq || n == 0 || n >= sizeof out->name || !eq[1]) {
    cli_usage_error(cmd, "bad --const '%s' (expected NAME=FILL)", text);
    return -1;
  }
  for (size_t i = 0; i < n; i++)
    if (!isalnum((unsigned char)text[i]) && text[i] != '_' && text[i] != '$') {
      cli_usage_error(cmd, "bad --const '%s': '%.*s' is not a symbol name", text, (int)n, text);
      return -1;
    }
  memcpy(out->name, text, n);
  out->name[n] = 0;
  out->fill.text = text;
  if (parse_fill(eq + 1, &out->fill, &why)) {
    cli_usage_error(cmd, "bad --const '%s': %s", text, why);
    return -1;
  }
  return 0;
}

/* Address and size of the module variable name, declared in C++ namespace
   ns when ns is set (then its PTX name is mangled: _ZN<ns><name>E). */
static int find_const(emu_module *em, const char *name, const char *ns, uint64_t *addr,
                      size_t *size, char *err, size_t cap) {
  char mangled[600];
  if (ns) snprintf(mangled, sizeof mangled, "_ZN%zu%s%zu%sE", strlen(ns), ns, strlen(name), name);
  char e2[512] = "";
  if (emu_symbol(em, ns ? mangled : name, addr, size, e2, sizeof e2) == 0) return 0;
  snprintf(err, cap, "--const %s: the kernel's module has no .const or .global variable %s", name,
           name);
  return -1;
}

int cli_launch_kernel(const cli_launch *L, emu_device *dev, emu_module *em, const ptx_func *k,
                      const cli_const_spec *consts, size_t nconsts, const char *ns,
                      const emu_launch_cfg *cfg, feat_vec *features, emu_stats *st, char *err,
                      size_t cap) {
  char e2[1024] = "";
  int rc = -1;
  if (L->nargs != k->nparams) {
    snprintf(err, cap, "kernel %s takes %u parameter%s, got %u --arg", k->name, k->nparams,
             k->nparams == 1 ? "" : "s", L->nargs);
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
  for (unsigned i = 0; i < L->nargs; i++) {
    const ptx_var *p = &k->params[i];
    const cli_arg_spec *a = &L->args[i];
    const char *why = NULL;
    if (a->is_buf) {
      if (p->size != 8 || p->count != 1) {
        snprintf(err, cap, "--arg %u '%s': parameter %u (.%s) cannot hold a device address", i,
                 a->text, i, param_type_name(p));
        rc = 1;
        goto out;
      }
      if (make_buffer_err(dev, a, i, &addrs[i], err, cap)) goto out;
      for (int b = 0; b < 8; b++) pbuf[offs[i] + (size_t)b] = (unsigned char)(addrs[i] >> (8 * b));
    } else if (encode_literal(p, a->text, pbuf + offs[i], &why)) {
      snprintf(err, cap, "--arg %u '%s': %s (parameter %u is .%s)", i, a->text, why, i,
               param_type_name(p));
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
    if (fill_region(dev, &consts[c].fill, addr, size, what, err, cap)) goto out;
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
  for (unsigned i = 0; addrs && i < L->nargs; i++)
    if (addrs[i]) emu_free(dev, addrs[i], e2, sizeof e2);
  free(pbuf);
  free(addrs);
  free(offs);
  return rc;
}
