/*
 * cmd_emulate.c -- `kcast emulate`: run one kernel launch on the CPU
 * emulator and print its dynamic features (docs/features.md) with the
 * emulation statistics.
 *
 * Pipeline (cli_launch.c, shared with `kcast predict FILE`): fe_to_ptx
 * (front end by extension) -> ptx_parse -> kernel selection
 * (cli_select_kernels, the rule `kcast extract` uses) -> typing of the --arg
 * list against the kernel's PTX parameters -> emu_device_new,
 * emu_module_load, one emu_malloc per buffer argument, filled as the spec
 * says -> emu_launch; then here: --dump files -> output.
 *
 * Output goes to stdout only after the launch succeeded, so a failed launch
 * never leaves half a table; a --dump file is written under a temporary name
 * and renamed, so it is either complete or absent.  Device printf goes to
 * stdout with the table format and to stderr with csv/json, which keeps
 * machine output parseable.
 */
#include "cli/cli.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "emulator/emu.h"
#include "extractor/features.h"
#include "extractor/ptx.h"

const char cmd_emulate_usage[] =
    "usage: kcast emulate FILE.{cu,ptx,ll,bc} --kernel K --grid X[,Y,Z] --block X[,Y,Z]\n"
    "                     [--shared BYTES] [--arg SPEC]... [--dump N=PATH]...\n"
    "                     [--sample CTAS] [--threads N] [--budget INSNS] [--timeout SECONDS]\n"
    "                     [--oob error|warn] [--racecheck] [--compiler nvcc|clang]\n"
    "                     [--arch sm_XX]\n"
    "                     [--format table|csv|json] [-I DIR] [-D NAME[=V]] [-std VERSION]\n"
    "                     [--cflags \"WORDS\"] [--tool-timeout SECS]\n"
    "\n"
    "Run one launch of kernel K on the CPU emulator and print its dynamic\n"
    "features (launch.*, op.*, class.*, mem.*, ctrl.*; arg.*: the scalar\n"
    "arguments the kernel reads; emu.*: how they were obtained; see\n"
    "docs/features.md) and the emulation statistics.\n"
    "\n"
    "  --kernel K      mangled name, demangled signature or source name ('k<16>'\n"
    "                  for a template instance); optional when FILE has one kernel\n"
    "  --grid X[,Y,Z]  CTAs per dimension (missing dimensions are 1)\n"
    "  --block X[,Y,Z] threads per CTA per dimension (product at most 1024)\n"
    "  --shared BYTES  dynamic shared memory (the third <<<>>> argument)\n"
    "  --arg SPEC      one per kernel parameter, in order (see below)\n"
    "  --dump N=PATH   after the launch, write the buffer of parameter N (0-based)\n"
    "                  to PATH (written to a temporary file, then renamed)\n"
    "  --sample CTAS   emulate this many CTAs spread over the grid, scale counts\n"
    "                  (the footprint is estimated: docs/features.md); 'auto':\n"
    "                  as many as a 0.5 % relative standard error of the counts\n"
    "                  needs (16 to 1,296; every CTA of a grid of at most 32),\n"
    "                  the error reached in emu.sample_rse\n"
    "  --threads N     OpenMP threads (default: OpenMP's default)\n"
    "  --budget INSNS  stop after this many thread-instructions, --timeout SECS\n"
    "                  after this many seconds: the features of the CTAs that\n"
    "                  finished are printed, scaled to the grid and marked\n"
    "                  emu.partial, the reason on stderr, exit status 1 (an\n"
    "                  error when none finished)\n"
    "  --tool-timeout SECS  the time limit of each compiler run for .cu input\n"
    "                  (600; KCAST_TOOL_TIMEOUT too; as for extract)\n"
    "  --oob error     (default) an out-of-bounds or freed access fails the launch\n"
    "  --oob warn      what a GPU lets through is tolerated: a global access in\n"
    "                  the 2 MiB pages the buffers map (reads what is there,\n"
    "                  zeros until written), to freed memory (zeros, dropped),\n"
    "                  shared memory past the CTA's window, a bad texture handle\n"
    "                  (zeros); counted (emu.oob_accesses), the first named on\n"
    "                  stderr\n"
    "  --racecheck     look for data races: two CTAs of the launch accessing the\n"
    "                  same global bytes, one writing, or two warps of a CTA\n"
    "                  doing so in shared memory with no barrier between (plain\n"
    "                  loads and stores; atomics and volatile accesses are not\n"
    "                  races); the racing 4-byte words are counted (emu.races),\n"
    "                  the first race is named on stderr (kernel, CTA, thread,\n"
    "                  line, address, the other CTA or warp) and the exit status\n"
    "                  is 1; a sampled launch is checked between the CTAs it runs\n"
    "  --compiler C    compiler for .cu input: nvcc (default) or clang\n"
    "  --arch sm_XX    target architecture for .cu/.ll/.bc (default " FE_DEFAULT_ARCH ")\n"
    "  -I DIR, -D NAME[=VALUE], -std VERSION\n"
    "                  for .cu input: an include folder, a macro, the C++\n"
    "                  standard (-std=c++20), passed to nvcc or clang in order\n"
    "  --cflags \"WORDS\" more compiler options for .cu input, split at blanks\n"
    "                  (no shell runs them; quotes are not interpreted)\n"
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
    "address) or a data race found by --racecheck (the features are printed),\n"
    "2 bad command line (options, --arg text, --arg count).\n";

#define CMD "emulate"

typedef struct dump_spec {
  unsigned long param;  /* 0-based parameter index */
  const char *path;     /* destination (points into argv) */
} dump_spec;

/* Unsigned decimal (or 0x hex) that must span the whole string. */
static int parse_index(const char *s, unsigned long *out) {
  if (!*s || *s < '0' || *s > '9') return -1;
  int base = (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) ? 16 : 10;
  char *e;
  errno = 0;
  unsigned long v = strtoul(s, &e, base);
  if (errno || *e) return -1;
  *out = v;
  return 0;
}

/* ------------------------------------------------------------- output -- */

static void print_number(FILE *f, double x) {
  if (x == (double)(long long)x && x < 1e15 && x > -1e15) fprintf(f, "%lld", (long long)x);
  else fprintf(f, "%.17g", x);
}

static void out_table(const char *kname, const feat_vec *v, const emu_stats *st, int race) {
  size_t w = 12;
  for (size_t j = 0; j < v->n; j++)
    if (strlen(v->names[j]) > w) w = strlen(v->names[j]);
  char *d = fe_demangle(kname);
  printf("kernel %s%s%s\n", kname, d ? "  " : "", d ? d : "");
  free(d);
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
  if (st->oob_accesses)
    printf("  %-*s  %" PRIu64 " (tolerated, --oob warn)\n", (int)w, "oob_accesses",
           st->oob_accesses);
  if (race)
    printf("  %-*s  %" PRIu64 " (%" PRIu64 " in shared memory)\n", (int)w, "races", st->races,
           st->races_shared);
}

static void out_csv(const char *kname, const feat_vec *v, const emu_stats *st) {
  fputs("kernel,demangled", stdout);
  for (size_t j = 0; j < v->n; j++) { putchar(','); cli_csv_field(stdout, v->names[j]); }
  fputs(",emulation.ctas_total,emulation.ctas_run,emulation.thread_insns,"
        "emulation.warp_insns,emulation.seconds,emulation.sampled\n", stdout);
  char *d = fe_demangle(kname);
  cli_csv_field(stdout, kname);
  putchar(',');
  cli_csv_field(stdout, d ? d : kname);
  free(d);
  for (size_t j = 0; j < v->n; j++) { putchar(','); print_number(stdout, v->vals[j]); }
  printf(",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.9g,%d\n", st->ctas_total,
         st->ctas_run, st->thread_insns, st->warp_insns, st->seconds, st->sampled ? 1 : 0);
}

static int out_json(const char *kname, const feat_vec *v, const emu_stats *st, int race) {
  cJSON *root = cJSON_CreateObject();
  char *d = fe_demangle(kname);
  int ok = root && cJSON_AddStringToObject(root, "kernel", kname) &&
           cJSON_AddStringToObject(root, "demangled", d ? d : kname);
  free(d);
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
       cJSON_AddBoolToObject(em, "sampled", st->sampled ? 1 : 0) &&
       cJSON_AddNumberToObject(em, "oob_accesses", (double)st->oob_accesses) &&
       (!st->oob_accesses || cJSON_AddStringToObject(em, "oob_first", st->oob_first)) &&
       (!race || (cJSON_AddNumberToObject(em, "races", (double)st->races) &&
                  cJSON_AddNumberToObject(em, "races_shared", (double)st->races_shared) &&
                  (!st->races || cJSON_AddStringToObject(em, "race_first", st->race_first)) &&
                  (!st->race_note[0] || cJSON_AddStringToObject(em, "race_note", st->race_note))));
  char *s = ok ? cJSON_Print(root) : NULL;
  cJSON_Delete(root);
  if (!s) return -1;
  puts(s);
  cJSON_free(s);
  return 0;
}

/* ------------------------------------------------------------ command -- */

int cmd_emulate(int argc, char **argv) {
  int fmt = CLI_FMT_TABLE;
  cli_launch L;
  feat_vec feats;
  feat_init(&feats);
  dump_spec *dumps = calloc((size_t)argc + 1, sizeof *dumps);
  unsigned ndumps = 0;
  int rc = cli_launch_init(&L, CMD, argc);
  if (rc) goto out;
  rc = KCAST_EXIT_USER;
  if (!dumps) { cli_error("out of memory"); goto out; }

  enum { E_FORMAT = CLI_OPT_OWN, E_DUMP, E_RACECHECK };
  static const struct option own[] = {
    {"format", required_argument, NULL, E_FORMAT},
    {"dump", required_argument, NULL, E_DUMP | CLI_OPT_MANY},
    {"racecheck", no_argument, NULL, E_RACECHECK},
    {NULL, 0, NULL, 0},
  };
  cli_opts o;
  cli_opts_init(&o, CMD, argc, argv, CLI_FE_SHORTOPTS, 0);
  cli_opts_add(&o, own);
  cli_opts_add(&o, cli_fe_longopts);
  cli_opts_add(&o, cli_launch_longopts);
  for (int c; (c = cli_opts_next(&o)) != CLI_OPT_END;) {
    const char *val = o.arg;
    if (c == CLI_OPT_ERR) { rc = o.status; goto out; }
    if (c == E_FORMAT) {
      fmt = cli_parse_format(val);
      if (fmt < 0) { rc = cli_usage_error(CMD, "unknown format '%s' (table, csv or json)", val); goto out; }
      continue;
    }
    if (c == E_RACECHECK) {
      L.cfg.racecheck = 1;
      continue;
    }
    if (c == E_DUMP) {
      const char *eq = strchr(val, '=');
      char num[32];
      size_t nl = eq ? (size_t)(eq - val) : 0;
      unsigned long u = 0;
      if (!eq || nl == 0 || nl >= sizeof num || !eq[1]) {
        rc = cli_usage_error(CMD, "bad --dump '%s' (expected N=PATH)", val);
        goto out;
      }
      memcpy(num, val, nl);
      num[nl] = 0;
      if (parse_index(num, &u) || u > 4096) {
        rc = cli_usage_error(CMD, "bad --dump '%s': '%s' is not a parameter index", val, num);
        goto out;
      }
      dumps[ndumps].param = u;
      dumps[ndumps].path = eq + 1;
      ndumps++;
      continue;
    }
    if (cli_launch_option(&L, &o, c) < 0) { rc = KCAST_EXIT_USAGE; goto out; }
  }
  if ((rc = cli_launch_operands(&L, &o)) != KCAST_EXIT_OK) goto out;
  if ((rc = cli_launch_check(&L)) != KCAST_EXIT_OK) goto out;
  if ((rc = cli_launch_load(&L)) != KCAST_EXIT_OK) goto out;
  rc = KCAST_EXIT_USER;
  for (unsigned j = 0; j < ndumps; j++) {
    if (dumps[j].param >= L.nargs || !L.args[dumps[j].param].is_buf) {
      rc = cli_usage_error(CMD, "--dump %lu=%s: parameter %lu is not a buf: argument",
                           dumps[j].param, dumps[j].path, dumps[j].param);
      goto out;
    }
  }
  if ((rc = cli_launch_device(&L)) != KCAST_EXIT_OK) goto out;
  emu_stats st;
  rc = cli_launch_run(&L, fmt == CLI_FMT_TABLE ? stdout : stderr, &feats, &st);
  if (rc) goto out;
  rc = KCAST_EXIT_USER;
  fflush(stdout); /* device printf before the report */

  for (unsigned j = 0; j < ndumps; j++)
    if (cli_launch_dump(&L, dumps[j].param, dumps[j].path)) goto out;

  feat_sort(&feats);
  int orc = 0;
  switch (fmt) {
    case CLI_FMT_CSV: out_csv(L.k->name, &feats, &st); break;
    case CLI_FMT_JSON: orc = out_json(L.k->name, &feats, &st, L.cfg.racecheck); break;
    default: out_table(L.k->name, &feats, &st, L.cfg.racecheck); break;
  }
  if (orc) { cli_error("out of memory writing output"); goto out; }
  /* stopped, or a race found: said on stderr */
  rc = st.partial || st.races ? KCAST_EXIT_USER : KCAST_EXIT_OK;

out:
  feat_free(&feats);
  cli_launch_free(&L);
  free(dumps);
  return rc;
}
