/*
 * cmd_emulate.c -- `kcast emulate`: run one kernel launch on the CPU
 * emulator and print its dynamic features (docs/features.md) with the
 * emulation statistics.
 *
 * Pipeline: fe_to_ptx (front end by extension) -> ptx_parse -> kernel
 * selection (cli_select_kernels, the rule `kcast extract` uses) -> typing of
 * the --arg list against the kernel's PTX parameters -> emu_device_new,
 * emu_module_load, one emu_malloc per buffer argument, filled as the spec
 * says -> emu_launch -> --dump files -> output.
 *
 * Why the arguments are typed by the PTX and not by the C++ signature: the
 * PTX is what runs, it is available for every input (.ptx has no source),
 * and it is what fixes the argument buffer's layout (emu_param_layout).
 * nvcc declares an `int n` as `.param .u32`, so every integer literal
 * accepts the range [-2^(w-1), 2^w - 1] of its width and is stored as its
 * two's complement.
 *
 * Output goes to stdout only after the launch succeeded, so a failed launch
 * never leaves half a table; a --dump file is written under a temporary name
 * and renamed, so it is either complete or absent.  Device printf goes to
 * stdout with the table format and to stderr with csv/json, which keeps
 * machine output parseable.
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

#include <cjson/cJSON.h>

#include "extractor/emu.h"
#include "extractor/features.h"
#include "extractor/frontend.h"
#include "extractor/ptx.h"

const char cmd_emulate_usage[] =
    "usage: kcast emulate FILE.{cu,ptx,ll,bc} --kernel K --grid X[,Y,Z] --block X[,Y,Z]\n"
    "                     [--shared BYTES] [--arg SPEC]... [--dump N=PATH]...\n"
    "                     [--sample CTAS] [--threads N] [--budget INSNS] [--timeout SECONDS]\n"
    "                     [--compiler nvcc|clang] [--arch sm_XX] [--format table|csv|json]\n"
    "\n"
    "Run one launch of kernel K on the CPU emulator and print its dynamic\n"
    "features (launch.*, op.*, class.*, mem.*, ctrl.*; see docs/features.md)\n"
    "and the emulation statistics.\n"
    "\n"
    "  --kernel K      mangled name or source name (optional when FILE has one kernel)\n"
    "  --grid X[,Y,Z]  CTAs per dimension (missing dimensions are 1)\n"
    "  --block X[,Y,Z] threads per CTA per dimension (product at most 1024)\n"
    "  --shared BYTES  dynamic shared memory (the third <<<>>> argument)\n"
    "  --arg SPEC      one per kernel parameter, in order (see below)\n"
    "  --dump N=PATH   after the launch, write the buffer of parameter N (0-based)\n"
    "                  to PATH (written to a temporary file, then renamed)\n"
    "  --sample CTAS   emulate this many CTAs spread over the grid, scale counts\n"
    "  --threads N     OpenMP threads (default: OpenMP's default)\n"
    "  --budget INSNS  stop with an error after this many thread-instructions\n"
    "  --timeout SECS  stop with an error after this many seconds\n"
    "  --compiler C    compiler for .cu input: nvcc (default) or clang\n"
    "  --arch sm_XX    target architecture for .cu/.ll/.bc (default " FE_DEFAULT_ARCH ")\n"
    "  --format F      table (default), csv (header + one row) or json\n"
    "\n"
    "Argument SPECs (typed by the kernel's PTX parameter):\n"
    "  LITERAL                     a scalar: decimal or 0x-hex integer for .u/.s/.b\n"
    "                              parameters (negative values are stored as two's\n"
    "                              complement), a decimal/hex float, inf or nan for\n"
    "                              .f32/.f64 (0fXXXXXXXX / 0dXXXXXXXXXXXXXXXX give\n"
    "                              the bits, as in PTX)\n"
    "  hex:HEXBYTES                raw bytes in memory order, exactly the parameter's\n"
    "                              size (for .b8 arrays: structs passed by value)\n"
    "  buf:BYTES[:FILL]            a zero-initialised device buffer of BYTES bytes\n"
    "                              (suffix k, M or G multiplies by 1024, 1024^2,\n"
    "                              1024^3); the 64-bit parameter gets its address.\n"
    "                              FILL is one of\n"
    "      zero                    all bytes 0 (the default)\n"
    "      seq                     32-bit little-endian words 0, 1, 2, ...\n"
    "      seqf                    32-bit floats 0.0, 1.0, 2.0, ...\n"
    "      rand[:SEED]             pseudo-random bytes (splitmix64, SEED default 1)\n"
    "      randf[:SEED]            32-bit floats uniform in [0,1) (24-bit mantissa)\n"
    "      file=PATH               the bytes of PATH (at most BYTES; the rest 0)\n"
    "  A trailing partial word of seq/seqf/randf gets the low bytes of the next\n"
    "  value.  Every fill is deterministic: same spec, same bytes.\n"
    "\n"
    "Device printf output goes to stdout with --format table, to stderr with\n"
    "csv and json.\n"
    "\n"
    "Exit status: 0 ok, 1 bad input or failed launch (out-of-bounds access,\n"
    "budget, timeout: one line naming kernel, CTA, thread, PTX line and\n"
    "address), 2 bad command line (options, --arg text, --arg count).\n";

#define CMD "emulate"

/* ------------------------------------------------------------ arg specs -- */

typedef enum { FILL_ZERO, FILL_SEQ, FILL_SEQF, FILL_RAND, FILL_RANDF, FILL_FILE } fill_kind;

typedef struct arg_spec {
  const char *text;     /* as given on the command line (not owned) */
  int is_buf;           /* buf:... */
  uint64_t bytes;       /* buffer size (is_buf) */
  fill_kind fill;       /* buffer contents (is_buf) */
  uint64_t seed;        /* rand/randf seed */
  const char *file;     /* FILL_FILE path, points into text */
  uint64_t addr;        /* device address once allocated, 0 before */
} arg_spec;

typedef struct dump_spec {
  unsigned long param;  /* 0-based parameter index */
  const char *path;     /* destination (points into argv) */
} dump_spec;

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

/*
 * Syntax of one --arg (the parameter type is checked later).  Returns 0, or
 * -1 after printing a usage error naming the argument.
 */
static int parse_arg_syntax(arg_spec *a, unsigned idx) {
  const char *t = a->text;
  memset(a, 0, sizeof *a);
  a->text = t;
  if (strncmp(t, "buf:", 4)) return 0; /* a literal; typed later */
  a->is_buf = 1;
  a->fill = FILL_ZERO;
  a->seed = 1;
  a->file = NULL;
  const char *p = t + 4, *c = strchr(p, ':');
  size_t n = c ? (size_t)(c - p) : strlen(p);
  if (parse_size(p, n, &a->bytes) || a->bytes == 0) {
    cli_usage_error(CMD, "--arg %u '%s': bad buffer size '%.*s' (bytes > 0, optional k/M/G)",
                    idx, t, (int)n, p);
    return -1;
  }
  if (!c) return 0;
  const char *f = c + 1, *seed = NULL;
  if (!strncmp(f, "file=", 5)) {
    a->fill = FILL_FILE;
    a->file = f + 5;
    if (!*a->file) {
      cli_usage_error(CMD, "--arg %u '%s': file= needs a path", idx, t);
      return -1;
    }
    return 0;
  }
  const char *c2 = strchr(f, ':');
  size_t fl = c2 ? (size_t)(c2 - f) : strlen(f);
  if (c2) seed = c2 + 1;
  if (fl == 4 && !strncmp(f, "zero", 4)) a->fill = FILL_ZERO;
  else if (fl == 3 && !strncmp(f, "seq", 3)) a->fill = FILL_SEQ;
  else if (fl == 4 && !strncmp(f, "seqf", 4)) a->fill = FILL_SEQF;
  else if (fl == 4 && !strncmp(f, "rand", 4)) a->fill = FILL_RAND;
  else if (fl == 5 && !strncmp(f, "randf", 5)) a->fill = FILL_RANDF;
  else {
    cli_usage_error(CMD, "--arg %u '%s': unknown fill '%.*s' (zero, seq, seqf, rand[:SEED], "
                    "randf[:SEED], file=PATH)", idx, t, (int)fl, f);
    return -1;
  }
  if (seed) {
    if (a->fill != FILL_RAND && a->fill != FILL_RANDF) {
      cli_usage_error(CMD, "--arg %u '%s': only rand and randf take a seed", idx, t);
      return -1;
    }
    if (parse_u64_full(seed, &a->seed)) {
      cli_usage_error(CMD, "--arg %u '%s': bad seed '%s' (an unsigned integer)", idx, t, seed);
      return -1;
    }
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

static uint64_t splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Fill host bytes b[0..n) as a says (not FILL_FILE). */
static void fill_bytes(const arg_spec *a, unsigned char *b, size_t n) {
  uint64_t st = a->seed;
  if (a->fill == FILL_RAND) {
    for (size_t i = 0; i < n; i += 8) {
      uint64_t r = splitmix64(&st);
      for (size_t k = 0; k < 8 && i + k < n; k++) b[i + k] = (unsigned char)(r >> (8 * k));
    }
    return;
  }
  for (size_t i = 0; i < n; i += 4) {
    uint32_t w = 0;
    float f = 0;
    switch (a->fill) {
      case FILL_SEQ: w = (uint32_t)(i / 4); break;
      case FILL_SEQF: f = (float)(i / 4); memcpy(&w, &f, 4); break;
      case FILL_RANDF:
        f = (float)(splitmix64(&st) >> 40) * (1.0f / 16777216.0f);
        memcpy(&w, &f, 4);
        break;
      default: break;
    }
    for (size_t k = 0; k < 4 && i + k < n; k++) b[i + k] = (unsigned char)(w >> (8 * k));
  }
}

/* Allocate and fill the buffer of a; 0, or -1 after printing the error. */
static int make_buffer(emu_device *d, arg_spec *a, unsigned idx) {
  char err[512] = "";
  if (a->bytes > SIZE_MAX / 2) {
    cli_error("--arg %u '%s': buffer too large", idx, a->text);
    return -1;
  }
  size_t n = (size_t)a->bytes;
  if (emu_malloc(d, n, &a->addr, err, sizeof err)) {
    cli_error("--arg %u '%s': %s", idx, a->text, err);
    return -1;
  }
  if (a->fill == FILL_ZERO) return 0; /* emu_malloc zero-fills */
  unsigned char *host = emu_host_ptr(d, a->addr, n), *tmp = NULL;
  if (!host) {
    host = tmp = calloc(1, n);
    if (!tmp) { cli_error("--arg %u: out of memory", idx); return -1; }
  }
  int rc = 0;
  if (a->fill == FILL_FILE) {
    FILE *f = fopen(a->file, "rb");
    if (!f) {
      cli_error("%s: cannot open (--arg %u): %s", a->file, idx, strerror(errno));
      rc = -1;
    } else {
      size_t got = fread(host, 1, n, f);
      int more = got == n && fgetc(f) != EOF;
      if (ferror(f)) {
        cli_error("%s: read error (--arg %u)", a->file, idx);
        rc = -1;
      } else if (more) {
        cli_error("%s: file is larger than the buffer of --arg %u (%zu bytes)", a->file, idx, n);
        rc = -1;
      }
      fclose(f);
    }
  } else {
    fill_bytes(a, host, n);
  }
  if (!rc && tmp && emu_memcpy_htod(d, a->addr, tmp, n, err, sizeof err)) {
    cli_error("--arg %u: %s", idx, err);
    rc = -1;
  }
  free(tmp);
  return rc;
}

/* --------------------------------------------------------------- dumps -- */

/* Write n bytes to path atomically (temp file + rename); 0 or -1 printed. */
static int write_atomic(const char *path, const void *data, size_t n) {
  size_t pl = strlen(path);
  char *tmp = malloc(pl + 16);
  if (!tmp) { cli_error("out of memory"); return -1; }
  memcpy(tmp, path, pl);
  memcpy(tmp + pl, ".tmp.XXXXXX", 12);
  int fd = mkstemp(tmp);
  if (fd < 0) {
    cli_error("%s: cannot create a temporary file next to it: %s", path, strerror(errno));
    free(tmp);
    return -1;
  }
  FILE *f = fdopen(fd, "wb");
  int ok = f != NULL;
  if (!f) close(fd);
  if (ok && n && fwrite(data, 1, n, f) != n) ok = 0;
  if (f && fclose(f)) ok = 0;
  if (ok && rename(tmp, path)) ok = 0;
  if (!ok) {
    cli_error("%s: cannot write: %s", path, strerror(errno));
    unlink(tmp);
  }
  free(tmp);
  return ok ? 0 : -1;
}

static int do_dump(emu_device *d, const arg_spec *a, const dump_spec *ds) {
  size_t n = (size_t)a->bytes;
  char err[512] = "";
  const void *src = emu_host_ptr(d, a->addr, n);
  void *tmp = NULL;
  if (!src) {
    tmp = malloc(n);
    if (!tmp) { cli_error("out of memory"); return -1; }
    if (emu_memcpy_dtoh(d, tmp, a->addr, n, err, sizeof err)) {
      cli_error("--dump %lu: %s", ds->param, err);
      free(tmp);
      return -1;
    }
    src = tmp;
  }
  int rc = write_atomic(ds->path, src, n);
  free(tmp);
  return rc;
}

/* ----------------------------------------------------------- progress -- */

/* A watcher thread says on stderr that a long launch is running (the
   emulator has no progress callback; this keeps the user informed). */
typedef struct watcher {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int done;
  int shown;
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
    fprintf(stderr, "kcast emulate: emulating %s (%" PRIu64 " CTAs)...\n", w->kernel, w->ctas);
    fflush(stderr);
  }
  pthread_mutex_unlock(&w->mu);
  return NULL;
}

/* ------------------------------------------------------------- output -- */

static void print_number(FILE *f, double x) {
  if (x == (double)(long long)x && x < 1e15 && x > -1e15) fprintf(f, "%lld", (long long)x);
  else fprintf(f, "%.17g", x);
}

static void csv_field(const char *s) {
  if (!strpbrk(s, ",\"\n\r")) { fputs(s, stdout); return; }
  putchar('"');
  for (; *s; s++) {
    if (*s == '"') putchar('"');
    putchar(*s);
  }
  putchar('"');
}

static void out_table(const char *kname, const feat_vec *v, const emu_stats *st) {
  size_t w = 12;
  for (size_t j = 0; j < v->n; j++)
    if (strlen(v->names[j]) > w) w = strlen(v->names[j]);
  printf("kernel %s\n", kname);
  for (size_t j = 0; j < v->n; j++) {
    printf("  %-*s  ", (int)w, v->names[j]);
    print_number(stdout, v->vals[j]);
    putchar('\n');
  }
  printf("emulation\n");
  printf("  %-*s  %" PRIu64 "/%" PRIu64 "%s\n", (int)w, "ctas", st->ctas_run, st->ctas_total,
         st->sampled ? " (sampled; counts scaled)" : "");
  printf("  %-*s  %" PRIu64 "\n", (int)w, "thread_insns", st->thread_insns);
  printf("  %-*s  %" PRIu64 "\n", (int)w, "warp_insns", st->warp_insns);
  printf("  %-*s  %.6f\n", (int)w, "seconds", st->seconds);
  if (st->seconds > 0)
    printf("  %-*s  %.1f M/s\n", (int)w, "insns/second", (double)st->thread_insns / st->seconds / 1e6);
}

static void out_csv(const char *kname, const feat_vec *v, const emu_stats *st) {
  fputs("kernel", stdout);
  for (size_t j = 0; j < v->n; j++) { putchar(','); csv_field(v->names[j]); }
  fputs(",emulation.ctas_total,emulation.ctas_run,emulation.thread_insns,"
        "emulation.warp_insns,emulation.seconds,emulation.sampled\n", stdout);
  csv_field(kname);
  for (size_t j = 0; j < v->n; j++) { putchar(','); print_number(stdout, v->vals[j]); }
  printf(",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.9g,%d\n", st->ctas_total,
         st->ctas_run, st->thread_insns, st->warp_insns, st->seconds, st->sampled ? 1 : 0);
}

static int out_json(const char *kname, const feat_vec *v, const emu_stats *st) {
  cJSON *root = cJSON_CreateObject();
  int ok = root && cJSON_AddStringToObject(root, "kernel", kname);
  cJSON *fs = ok ? cJSON_AddObjectToObject(root, "features") : NULL;
  ok = fs != NULL;
  for (size_t j = 0; ok && j < v->n; j++)
    ok = cJSON_AddNumberToObject(fs, v->names[j], v->vals[j]) != NULL;
  cJSON *em = ok ? cJSON_AddObjectToObject(root, "emulation") : NULL;
  ok = em && cJSON_AddNumberToObject(em, "ctas_total", (double)st->ctas_total) &&
       cJSON_AddNumberToObject(em, "ctas_run", (double)st->ctas_run) &&
       cJSON_AddNumberToObject(em, "thread_insns", (double)st->thread_insns) &&
       cJSON_AddNumberToObject(em, "warp_insns", (double)st->warp_insns) &&
       cJSON_AddNumberToObject(em, "seconds", st->seconds) &&
       cJSON_AddBoolToObject(em, "sampled", st->sampled ? 1 : 0);
  char *s = ok ? cJSON_Print(root) : NULL;
  cJSON_Delete(root);
  if (!s) return -1;
  puts(s);
  cJSON_free(s);
  return 0;
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

/* "0 .u32 name, 1 .f32 name, ..." into a malloc'd string (NULL on ENOMEM). */
static char *param_list(const ptx_func *k) {
  size_t cap = 32;
  for (uint32_t i = 0; i < k->nparams; i++)
    cap += strlen(k->params[i].name ? k->params[i].name : "") + 48;
  char *s = malloc(cap);
  if (!s) return NULL;
  size_t len = 0;
  s[0] = 0;
  for (uint32_t i = 0; i < k->nparams; i++) {
    const ptx_var *p = &k->params[i];
    char dim[32] = "";
    if (p->count != 1) snprintf(dim, sizeof dim, "[%" PRIu64 "]", p->count);
    len += (size_t)snprintf(s + len, cap - len, "%s%u: .%s%s %s", i ? ", " : "", i,
                            param_type_name(p), dim, p->name ? p->name : "");
  }
  if (k->nparams == 0) snprintf(s, cap, "(none)");
  return s;
}

int cmd_emulate(int argc, char **argv) {
  const char *path = NULL, *kernel = NULL, *arch = NULL;
  int fmt = CLI_FMT_TABLE;
  fe_options fo = {FE_NVCC, NULL, NULL, 0};
  emu_launch_cfg cfg;
  emu_launch_cfg_init(&cfg);
  int have_grid = 0, have_block = 0;

  int rc = KCAST_EXIT_USER;
  arg_spec *args = calloc((size_t)argc + 1, sizeof *args);
  dump_spec *dumps = calloc((size_t)argc + 1, sizeof *dumps);
  unsigned nargs = 0, ndumps = 0;
  char *text = NULL, *plist = NULL;
  unsigned char *pbuf = NULL;
  size_t *offs = NULL;
  size_t len = 0;
  ptx_module *m = NULL;
  const ptx_func **sel = NULL;
  emu_device *dev = NULL;
  emu_module *em = NULL;
  feat_vec feats;
  feat_init(&feats);
  char ferr[1024] = "";
  if (!args || !dumps) { cli_error("out of memory"); goto out; }

  static const char *const opts[] = {"--kernel", "--format", "--compiler", "--arch",
                                     "--grid", "--block", "--shared", "--arg",
                                     "--dump", "--sample", "--threads", "--budget",
                                     "--timeout"};
  enum { O_KERNEL, O_FORMAT, O_COMPILER, O_ARCH, O_GRID, O_BLOCK, O_SHARED, O_ARG,
         O_DUMP, O_SAMPLE, O_THREADS, O_BUDGET, O_TIMEOUT, O_N };
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *val = NULL;
    int which = -1;
    for (int o = 0; o < O_N; o++) {
      size_t l = strlen(opts[o]);
      if (!strncmp(a, opts[o], l) && (a[l] == 0 || a[l] == '=')) {
        which = o;
        if (a[l] == '=') val = a + l + 1;
        else if (i + 1 < argc) val = argv[++i];
        else { rc = cli_usage_error(CMD, "option %s needs a value", opts[o]); goto out; }
        break;
      }
    }
    uint64_t u = 0;
    switch (which) {
      case O_KERNEL: kernel = val; break;
      case O_FORMAT:
        fmt = cli_parse_format(val);
        if (fmt < 0) { rc = cli_usage_error(CMD, "unknown format '%s' (table, csv or json)", val); goto out; }
        break;
      case O_COMPILER:
        if (!strcmp(val, "nvcc")) fo.compiler = FE_NVCC;
        else if (!strcmp(val, "clang")) fo.compiler = FE_CLANG;
        else { rc = cli_usage_error(CMD, "unknown compiler '%s' (nvcc or clang)", val); goto out; }
        break;
      case O_ARCH:
        if (strncmp(val, "sm_", 3) || !isdigit((unsigned char)val[3])) {
          rc = cli_usage_error(CMD, "bad --arch '%s' (expected sm_XX)", val);
          goto out;
        }
        arch = val;
        break;
      case O_GRID:
      case O_BLOCK:
        if (parse_dims(val, which == O_GRID ? cfg.grid : cfg.block)) {
          rc = cli_usage_error(CMD, "bad %s '%s' (expected X[,Y,Z], each a positive integer)",
                               opts[which], val);
          goto out;
        }
        if (which == O_GRID) have_grid = 1; else have_block = 1;
        break;
      case O_SHARED:
        if (parse_size(val, strlen(val), &u) || u > SIZE_MAX / 2) {
          rc = cli_usage_error(CMD, "bad --shared '%s' (bytes, optional k suffix)", val);
          goto out;
        }
        cfg.shared_bytes = (size_t)u;
        break;
      case O_ARG:
        args[nargs].text = val;
        if (parse_arg_syntax(&args[nargs], nargs)) { rc = KCAST_EXIT_USAGE; goto out; }
        nargs++;
        break;
      case O_DUMP: {
        const char *eq = strchr(val, '=');
        char num[32];
        size_t nl = eq ? (size_t)(eq - val) : 0;
        if (!eq || nl == 0 || nl >= sizeof num || !eq[1]) {
          rc = cli_usage_error(CMD, "bad --dump '%s' (expected N=PATH)", val);
          goto out;
        }
        memcpy(num, val, nl);
        num[nl] = 0;
        if (parse_u64_full(num, &u) || u > 4096) {
          rc = cli_usage_error(CMD, "bad --dump '%s': '%s' is not a parameter index", val, num);
          goto out;
        }
        dumps[ndumps].param = (unsigned long)u;
        dumps[ndumps].path = eq + 1;
        ndumps++;
        break;
      }
      case O_SAMPLE:
      case O_THREADS:
      case O_BUDGET:
        if (parse_u64_full(val, &u) || (which != O_BUDGET && u == 0) ||
            (which == O_THREADS && u > 4096)) {
          rc = cli_usage_error(CMD, "bad %s '%s' (expected a positive integer)", opts[which], val);
          goto out;
        }
        if (which == O_SAMPLE) cfg.sample_ctas = u;
        else if (which == O_THREADS) cfg.threads = (int)u;
        else cfg.insn_budget = u;
        break;
      case O_TIMEOUT: {
        char *e;
        errno = 0;
        double t = strtod(val, &e);
        if (errno || *e || e == val || !(t > 0) || !isfinite(t)) {
          rc = cli_usage_error(CMD, "bad --timeout '%s' (expected seconds > 0)", val);
          goto out;
        }
        cfg.time_limit_s = t;
        break;
      }
      default:
        if (a[0] == '-' && a[1]) { rc = cli_usage_error(CMD, "unknown option '%s'", a); goto out; }
        if (path) {
          rc = cli_usage_error(CMD, "only one input file (got '%s' and '%s')", path, a);
          goto out;
        }
        path = a;
    }
  }
  if (!path) { rc = cli_usage_error(CMD, "missing input file"); goto out; }
  if (!have_grid) { rc = cli_usage_error(CMD, "missing --grid X[,Y,Z]"); goto out; }
  if (!have_block) { rc = cli_usage_error(CMD, "missing --block X[,Y,Z]"); goto out; }
  if ((uint64_t)cfg.block[0] * cfg.block[1] * cfg.block[2] > 1024) {
    rc = cli_usage_error(CMD, "--block %ux%ux%u has more than 1024 threads", cfg.block[0],
                         cfg.block[1], cfg.block[2]);
    goto out;
  }
  fo.arch = arch;

  /* Front end, parse, kernel. */
  ptx_error perr;
  memset(&perr, 0, sizeof perr);
  if (fe_to_ptx(path, &fo, &text, &len, ferr, sizeof ferr)) {
    cli_error("%s", ferr[0] ? ferr : "cannot read input");
    goto out;
  }
  m = ptx_parse(text, len, path, &perr);
  if (!m) {
    cli_error("%s", perr.msg[0] ? perr.msg : "cannot parse PTX");
    goto out;
  }
  sel = calloc(m->nfuncs ? m->nfuncs : 1, sizeof *sel);
  if (!sel) { cli_error("out of memory"); goto out; }
  long nsel = cli_select_kernels(m, kernel, sel, path);
  if (nsel < 0) goto out;
  if (nsel == 0) { cli_error("%s: no kernels (.entry) in this file", path); goto out; }
  if (nsel > 1) {
    cli_error("%s: %ld kernels; choose one with --kernel (see 'kcast extract %s --list')", path,
              nsel, path);
    goto out;
  }
  const ptx_func *k = sel[0];

  /* Type the arguments against the kernel's parameters. */
  if (nargs != k->nparams) {
    plist = param_list(k);
    rc = cli_usage_error(CMD, "kernel %s takes %u parameter%s, got %u --arg: %s", k->name,
                         k->nparams, k->nparams == 1 ? "" : "s", nargs, plist ? plist : "");
    goto out;
  }
  size_t ptotal = 0;
  offs = calloc(k->nparams + 1, sizeof *offs);
  if (!offs) { cli_error("out of memory"); goto out; }
  if (emu_param_layout(k, offs, &ptotal)) {
    cli_error("%s: cannot lay out the parameters of %s", path, k->name);
    goto out;
  }
  pbuf = calloc(ptotal ? ptotal : 1, 1);
  if (!pbuf) { cli_error("out of memory"); goto out; }
  for (unsigned i = 0; i < nargs; i++) {
    const ptx_var *p = &k->params[i];
    if (args[i].is_buf) {
      if (p->size != 8 || p->count != 1) {
        rc = cli_usage_error(CMD, "--arg %u '%s': parameter %u (.%s %s) cannot hold a device "
                             "address (needs a 64-bit parameter)", i, args[i].text, i,
                             param_type_name(p), p->name ? p->name : "");
        goto out;
      }
      continue;
    }
    const char *why = NULL;
    if (encode_literal(p, args[i].text, pbuf + offs[i], &why)) {
      rc = cli_usage_error(CMD, "--arg %u '%s': %s (parameter %u is .%s %s)", i, args[i].text,
                           why, i, param_type_name(p), p->name ? p->name : "");
      goto out;
    }
  }
  for (unsigned j = 0; j < ndumps; j++) {
    if (dumps[j].param >= nargs || !args[dumps[j].param].is_buf) {
      rc = cli_usage_error(CMD, "--dump %lu=%s: parameter %lu is not a buf: argument",
                           dumps[j].param, dumps[j].path, dumps[j].param);
      goto out;
    }
  }

  /* Device, module, buffers. */
  dev = emu_device_new();
  if (!dev) { cli_error("out of memory"); goto out; }
  if (emu_module_load(dev, m, &em, ferr, sizeof ferr)) {
    cli_error("%s", ferr);
    goto out;
  }
  for (unsigned i = 0; i < nargs; i++) {
    if (!args[i].is_buf) continue;
    if (make_buffer(dev, &args[i], i)) goto out;
    for (int b = 0; b < 8; b++) pbuf[offs[i] + (size_t)b] = (unsigned char)(args[i].addr >> (8 * b));
  }

  /* Launch. */
  cfg.params = pbuf;
  cfg.params_size = ptotal;
  cfg.printf_out = fmt == CLI_FMT_TABLE ? stdout : stderr;
  emu_stats st;
  memset(&st, 0, sizeof st);
  watcher w;
  memset(&w, 0, sizeof w);
  pthread_mutex_init(&w.mu, NULL);
  pthread_cond_init(&w.cv, NULL);
  w.kernel = k->name;
  w.ctas = (uint64_t)cfg.grid[0] * cfg.grid[1] * cfg.grid[2];
  pthread_t wt;
  int have_watch = pthread_create(&wt, NULL, watch_fn, &w) == 0;
  int lrc = emu_launch(em, k->name, &cfg, &feats, &st, ferr, sizeof ferr);
  pthread_mutex_lock(&w.mu);
  w.done = 1;
  pthread_cond_signal(&w.cv);
  pthread_mutex_unlock(&w.mu);
  if (have_watch) pthread_join(wt, NULL);
  pthread_cond_destroy(&w.cv);
  pthread_mutex_destroy(&w.mu);
  if (w.shown) fprintf(stderr, "kcast emulate: %s %s after %.1f s\n", k->name,
                       lrc ? "stopped" : "finished", st.seconds);
  if (lrc) {
    cli_error("%s", ferr[0] ? ferr : "launch failed");
    goto out;
  }
  fflush(stdout); /* device printf before the report */

  for (unsigned j = 0; j < ndumps; j++)
    if (do_dump(dev, &args[dumps[j].param], &dumps[j])) goto out;

  feat_sort(&feats);
  int orc = 0;
  switch (fmt) {
    case CLI_FMT_CSV: out_csv(k->name, &feats, &st); break;
    case CLI_FMT_JSON: orc = out_json(k->name, &feats, &st); break;
    default: out_table(k->name, &feats, &st); break;
  }
  if (orc) { cli_error("out of memory writing output"); goto out; }
  if (fflush(stdout)) { cli_error("cannot write output"); goto out; }
  rc = KCAST_EXIT_OK;

out:
  feat_free(&feats);
  emu_module_free(em);
  emu_device_free(dev);
  free(pbuf);
  free(offs);
  free(plist);
  free(sel);
  ptx_module_free(m);
  free(text);
  free(args);
  free(dumps);
  return rc;
}
