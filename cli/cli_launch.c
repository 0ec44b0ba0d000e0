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
 * The argument specs themselves (syntax, typing against the PTX, buffer
 * and constant fills, a launch on a worker's device) are the emulator's
 * (emulator/emu_args.h), shared with the Kernel Tuner importer.
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
#include "emulator/emu_args.h"
#include "extractor/features.h"
#include "extractor/frontend.h"
#include "extractor/ptx.h"

/* ------------------------------------------------------------ arg specs -- */

/*
 * Syntax of one --arg (the parameter type is checked later).  Returns 0, or
 * -1 after printing a usage error naming the argument.
 */
static int parse_arg_syntax(const char *cmd, cli_arg_spec *a, unsigned idx) {
  char why[512];
  if (emu_arg_parse(a, why, sizeof why)) {
    cli_usage_error(cmd, "--arg %u '%s': %s", idx, a->text, why);
    return -1;
  }
  return 0;
}

/* Allocate and fill the buffer of a; 0, or -1 after printing the error. */
static int make_buffer(emu_device *d, cli_arg_spec *a, unsigned idx) {
  char err[1024] = "";
  if (emu_arg_buffer(d, a, idx, &a->addr, err, sizeof err)) {
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
/* The source name of parameter i of kernel k (mangled) for messages: for
   .cu input the front end's listing (libclang, asked once), else NULL. */
static const char *src_param(cli_launch *L, const ptx_func *k, uint32_t i) {
  if (!L->src_tried) {
    L->src_tried = 1;
    size_t n = strlen(L->path ? L->path : "");
    char err[512];
    if (n > 3 && !strcasecmp(L->path + n - 3, ".cu") &&
        fe_list_kernels(L->path, &L->fo, &L->src_kernels, &L->nsrc_kernels, err, sizeof err)) {
      L->src_kernels = NULL;
      L->nsrc_kernels = 0;
    }
  }
  for (size_t j = 0; j < L->nsrc_kernels; j++) {
    const fe_kernel *sk = &L->src_kernels[j];
    if (fe_same_function(sk->mangled, k->name) && i < sk->nparams &&
        sk->params[i].name && sk->params[i].name[0])
      return sk->params[i].name;
  }
  return NULL;
}

static char *param_list(cli_launch *L, const ptx_func *k) {
  uint32_t shown = k->nparams < PARAM_LIST_MAX ? k->nparams : PARAM_LIST_MAX;
  size_t cap = 64;
  for (uint32_t i = 0; i < shown; i++)
    cap += strnlen(k->params[i].name ? k->params[i].name : "", 256) + 48 + 256;
  char *s = malloc(cap);
  if (!s) return NULL;
  size_t len = 0;
  s[0] = 0;
  for (uint32_t i = 0; i < shown && len < cap; i++) {
    const ptx_var *p = &k->params[i];
    char dim[32] = "";
    if (p->count != 1) snprintf(dim, sizeof dim, "[%" PRIu64 "]", p->count);
    const char *sn = src_param(L, k, i);
    len += (size_t)snprintf(s + len, cap - len, "%s%u: %s%.256s%s.%s%s %.256s%s", i ? ", " : "",
                            i, sn ? "'" : "", sn ? sn : "", sn ? "' (" : "", param_type_name(p),
                            dim, p->name ? p->name : "", sn ? ")" : "");
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
  {"arg", required_argument, NULL, O_ARG | CLI_OPT_MANY},
  {"sample", required_argument, NULL, O_SAMPLE},
  {"threads", required_argument, NULL, O_THREADS},
  {"budget", required_argument, NULL, O_BUDGET},
  {"timeout", required_argument, NULL, O_TIMEOUT},
  {"oob", required_argument, NULL, O_OOB},
  {"tool-timeout", required_argument, NULL, CLI_OPT_TOOL_TIMEOUT}, /* cli_opts_next's */
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
      if (emu_parse_size(val, strlen(val), &u) || u > SIZE_MAX / 2) {
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
      if (!strcmp(val, "auto")) {
        L->cfg.sample_ctas = EMU_SAMPLE_AUTO;
        return 1;
      }
      /* fall through */
    case O_THREADS:
    case O_BUDGET:
      if (emu_parse_u64(val, &u) || (which != O_BUDGET && u == 0) ||
          (which == O_THREADS && u > 4096)) {
        cli_usage_error(cmd, "bad %s '%s' (expected a positive integer%s)", o->name, val,
                        which == O_SAMPLE ? " or auto" : "");
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
    char *plist = param_list(L, k);
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
    if (emu_arg_encode(p, a->text, L->pbuf + L->offs[i], &why))
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

/* A fault's address ("at 0x...") in or past one of the --arg buffers:
   which, by the parameter's source name where known, into buf as " (...)";
   "" when the message names no address near a buffer. */
static void buffer_of(cli_launch *L, const char *msg, char *buf, size_t cap) {
  buf[0] = 0;
  const char *at = strstr(msg, " at 0x");
  if (!at || !L->k) return;
  uint64_t a = strtoull(at + 4, NULL, 16);
  long best = -1;
  uint64_t bd = 0;
  for (unsigned i = 0; i < L->nargs; i++) {
    const cli_arg_spec *s = &L->args[i];
    if (!s->is_buf || !s->addr || a < s->addr) continue;
    uint64_t d = a - s->addr;
    if (best < 0 || d < bd) best = (long)i, bd = d;
  }
  if (best < 0) return;
  const cli_arg_spec *s = &L->args[best];
  if (bd >= s->bytes && bd - s->bytes > (16u << 20)) return; /* nowhere near it */
  const char *sn = src_param(L, L->k, (uint32_t)best);
  char name[300];
  if (sn) snprintf(name, sizeof name, "parameter %ld '%s'", best, sn);
  else snprintf(name, sizeof name, "parameter %ld", best);
  if (bd < s->bytes)
    snprintf(buf, cap, " (byte %llu of the buffer of %s, --arg %s)", (unsigned long long)bd, name,
             s->text);
  else
    snprintf(buf, cap, " (%llu bytes past the end of the buffer of %s, --arg %s: %llu bytes)",
             (unsigned long long)(bd - s->bytes), name, s->text, (unsigned long long)s->bytes);
}

int cli_launch_run(cli_launch *L, FILE *printf_out, feat_vec *features, emu_stats *st) {
  char ferr[1024] = "";
  emu_stats local;
  if (!st) st = &local;
  memset(st, 0, sizeof *st);
  L->cfg.params = L->pbuf;
  L->cfg.params_size = L->ptotal;
  L->cfg.printf_out = printf_out;
  L->cfg.partial = 1; /* stopped by --budget or --timeout: what finished */
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
    char who[1024] = "";
    buffer_of(L, ferr, who, sizeof who);
    cli_error("%s%s", ferr[0] ? ferr : "launch failed", who);
    return KCAST_EXIT_USER;
  }
  if (st->partial)
    cli_error("%s; the features are of the %" PRIu64 " of %" PRIu64 " CTAs that finished, "
              "scaled to the grid (emu.partial = 1)", ferr, st->ctas_run, st->ctas_total);
  if (st->oob_accesses)
    fprintf(stderr, "kcast %s: %" PRIu64 " out-of-bounds access%s tolerated (--oob warn: as on a "
            "GPU); the first: %s\n", L->cmd, st->oob_accesses,
            st->oob_accesses == 1 ? "" : "es", st->oob_first);
  if (L->cfg.racecheck && st->races)
    fprintf(stderr, "kcast %s: data race (--racecheck): %" PRIu64 " racing word%s (%" PRIu64
            " in shared memory); the first: %s\n", L->cmd, st->races, st->races == 1 ? "" : "s",
            st->races_shared, st->race_first);
  if (L->cfg.racecheck && st->race_note[0])
    fprintf(stderr, "kcast %s: race check: %s\n", L->cmd, st->race_note);
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
  fe_kernels_free(L->src_kernels, L->nsrc_kernels);
  memset(L, 0, sizeof *L);
}

/* ------------------------------------------- launches on worker threads -- */

int cli_parse_const(const char *cmd, const char *text, cli_const_spec *out) {
  char tail[512];
  if (emu_const_parse(text, out, tail, sizeof tail)) {
    cli_usage_error(cmd, "bad --const '%s'%s", text, tail);
    return -1;
  }
  return 0;
}
