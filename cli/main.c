/*
 * main.c -- kcast's entry point: the command table and dispatch.
 *
 * `kcast CMD ARGS` runs cmd_CMD; `kcast CMD --help` and `kcast help CMD`
 * print CMD's usage on stdout.
 *
 * Standard output is checked here, once for every command: a write that
 * failed on the way (the stream's error flag), the final flush and the
 * close.  Any of them failing (a full disk, /dev/full, an I/O error) is one
 * error line and a non-zero exit, whatever the command returned; commands
 * need not check each printf.
 */
#include "cli/cli.h"

#include "model/model.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/kcast.h"

static const cmd_entry commands[] = {
  {"extract", cmd_extract, "static features of the kernels in a .ptx/.cu/.ll/.bc file", cmd_extract_usage},
  {"emulate", cmd_emulate, "run one kernel launch on the CPU emulator: dynamic features", cmd_emulate_usage},
  {"dataset", cmd_dataset, "inspect, export, merge and import SQLite datasets (stats, export, merge; imports from GPU Mangrove, Kernel Tuner, Nsight)", cmd_dataset_usage},
  {"run", cmd_run, "run an unmodified CUDA program on the CPU: features of every launch", cmd_run_usage},
  {"nvcc", cmd_nvcc, "build a CUDA program for kcast run (nvcc -cudart shared, PTX kept)", cmd_nvcc_usage},
  {"suite", cmd_suite, "run a suite manifest under kcast run or profile: shards, resume, one dataset", cmd_suite_usage},
  {"profile", cmd_profile, "run a CUDA program under CUPTI/NVML: time and power per launch", cmd_profile_usage},
  {"train", cmd_train, "train a random forest (CSV or dataset) into a .kcm model", cmd_train_usage},
  {"cv", cmd_cv, "cross-validate a forest: MAPE, median APE, R^2, coverage", cmd_cv_usage},
  {"predict", cmd_predict, "predict with a model, with intervals", cmd_predict_usage},
  {"calibrate", cmd_calibrate, "adapt a cross-GPU model to a new GPU from a few launches measured there", cmd_calibrate_usage},
  {"model", cmd_model, "show a model file (info, importance)", cmd_model_usage},
  {"featmodel", cmd_featmodel, "feature models: a kernel's features at unseen sizes without emulation (fit, info, validate)", cmd_featmodel_usage},
  {"report", cmd_report, "an HTML report: predicted vs measured, errors, coverage, importance", cmd_report_usage},
  {"tune-space", cmd_tune_space, "a Kernel Tuner tuning space predicted on a GPU: a cachefile for simulation mode and a ranked CSV", cmd_tune_space_usage},
  {"gpus", cmd_gpus, "list the GPUs of the analytic estimate with their datasheet figures", cmd_gpus_usage},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

void cli_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("kcast: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

/* Usage errors printed: a command that printed one and then fails exits
   with KCAST_EXIT_USAGE whatever it returned (dispatch), so every usage
   error exits 2, however deep in a command it was found. */
static int usage_errors;

int cli_usage_error(const char *cmd, const char *fmt, ...) {
  usage_errors++;
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "kcast %s: ", cmd);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  fprintf(stderr, "Try 'kcast help %s'.\n", cmd);
  return KCAST_EXIT_USAGE;
}

int cli_wants_help(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--")) return 0;
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) return 1;
  }
  return 0;
}

int cli_parse_format(const char *s) {
  if (!s) return -1;
  if (!strcmp(s, "table")) return CLI_FMT_TABLE;
  if (!strcmp(s, "csv")) return CLI_FMT_CSV;
  if (!strcmp(s, "json")) return CLI_FMT_JSON;
  return -1;
}

static void print_overview(FILE *f) {
  fprintf(f, "kcast %s -- predict execution time and power of CUDA kernel launches\n\n",
          KCAST_VERSION_STRING);
  fprintf(f, "usage: kcast COMMAND [ARGS]\n\ncommands:\n");
  for (size_t i = 0; i < NCOMMANDS; i++)
    fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
  fprintf(f, "  %-10s %s\n", "help", "show help for a command");
  fprintf(f, "  %-10s %s\n", "version", "print the version");
  fputs("\noptions: --opt VALUE, --opt=VALUE, -o VALUE, -oVALUE and -o=VALUE are the same\n"
        "for every command; long names are written out whole; an option that takes\n"
        "one value takes it once (--arg, -I, -D and the like collect values);\n"
        "options and operands mix freely, and after -- every word is an operand\n"
        "(run and profile: the options end at PROGRAM).  'kcast help COMMAND' or\n"
        "'kcast COMMAND --help' shows a command's options.  Every command also takes\n"
        "--progress (progress lines on stderr even when it is not a terminal: a log\n"
        "gets a whole line at most every 10 s) and --quiet (no progress, not even on\n"
        "a terminal); without them progress shows on a terminal only.\n", f);
}

static const cmd_entry *find_command(const char *name) {
  for (size_t i = 0; i < NCOMMANDS; i++)
    if (!strcmp(commands[i].name, name)) return &commands[i];
  return NULL;
}

/* "no such command", with the closest one when a command is that close. */
static int no_such_command(const char *name) {
  const char *names[NCOMMANDS + 2];
  for (size_t i = 0; i < NCOMMANDS; i++) names[i] = commands[i].name;
  names[NCOMMANDS] = "help";
  names[NCOMMANDS + 1] = "version";
  const char *s = cli_suggest(name, strlen(name), names, NCOMMANDS + 2);
  if (s) cli_error("no such command '%s' (did you mean '%s'? see 'kcast help')", name, s);
  else cli_error("no such command '%s' (see 'kcast help')", name);
  return KCAST_EXIT_USAGE;
}

/* Flush and close stdout; a failure anywhere on it turns rc into an error. */
static int finish_stdout(int rc) {
  int bad = ferror(stdout) != 0;
  /* a write that failed on the way left its errno, unless something after
     it set another: the best word for what happened */
  int e0 = bad ? errno : 0;
  errno = 0;
  if (fflush(stdout) != 0) bad = 1;
  int e = errno ? errno : e0;
  if (fclose(stdout) != 0 && !bad) {
    bad = 1;
    e = errno;
  }
  if (!bad) return rc;
  if (e) cli_error("cannot write the output (standard output): %s", strerror(e));
  else cli_error("cannot write the output (standard output): write error");
  return rc == KCAST_EXIT_OK ? KCAST_EXIT_USER : rc;
}

static int dispatch(int argc, char **argv) {
  if (argc < 2) {
    print_overview(stderr);
    return KCAST_EXIT_USAGE;
  }
  const char *name = argv[1];
  if (!strcmp(name, "--help") || !strcmp(name, "-h")) {
    print_overview(stdout);
    return KCAST_EXIT_OK;
  }
  if (!strcmp(name, "version") || !strcmp(name, "--version")) {
    printf("kcast %s\n", KCAST_VERSION_STRING);
    return KCAST_EXIT_OK;
  }
  if (!strcmp(name, "help")) {
    if (argc < 3) {
      print_overview(stdout);
      return KCAST_EXIT_OK;
    }
    if (!strcmp(argv[2], "help") || !strcmp(argv[2], "version")) {
      printf(!strcmp(argv[2], "help")
                 ? "usage: kcast help [COMMAND]\n\nWithout COMMAND, the list of commands and the "
                   "option conventions;\nwith one, its usage (as 'kcast COMMAND --help').\n"
                 : "usage: kcast version (or kcast --version)\n\nPrint kcast's version.\n");
      return KCAST_EXIT_OK;
    }
    const cmd_entry *c = find_command(argv[2]);
    if (!c) return no_such_command(argv[2]);
    fputs(c->usage, stdout);
    return KCAST_EXIT_OK;
  }
  const cmd_entry *c = find_command(name);
  if (!c) return no_such_command(name);
  if (cli_wants_help(argc - 1, argv + 1)) {
    fputs(c->usage, stdout);
    return KCAST_EXIT_OK;
  }
  /* (a GPU table given by KCAST_GPUS or --gpus is checked when the
     command's options are parsed, cli_opt.c) */
  int rc = c->fn(argc - 1, argv + 1);
  return rc == KCAST_EXIT_USER && usage_errors ? KCAST_EXIT_USAGE : rc;
}

/* SIGINT, SIGTERM, SIGHUP, SIGQUIT: the compilers running are killed and
   the scratch folders removed (fe_cleanup: async-signal-safe), then kcast
   dies of the signal.  Commands that run programs (run, suite) install
   their own handlers while they do, and put these back.  A signal kcast
   was started ignoring (nohup) stays ignored. */
static void on_fatal_signal(int sig) {
  fe_cleanup();
  signal(sig, SIG_DFL);
  raise(sig);
}

static void install_cleanup(void) {
  static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
  for (size_t k = 0; k < sizeof sigs / sizeof *sigs; k++) {
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fatal_signal;
    sa.sa_flags = SA_RESETHAND;
    if (sigaction(sigs[k], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
      sigaction(sigs[k], &sa, NULL);
  }
}

int main(int argc, char **argv) {
  install_cleanup();
  return finish_stdout(dispatch(argc, argv));
}
