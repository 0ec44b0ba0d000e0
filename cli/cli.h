/*
 * cli.h -- the kcast command line: one cmd_<name>() per file, a command
 * table in main.c, shared helpers for output and errors.
 *
 * Exit codes: KCAST_EXIT_OK on success, KCAST_EXIT_USER for a user error
 * (bad input, missing file: one line on stderr saying what and where),
 * KCAST_EXIT_USAGE for a bad command line.  Help goes to stdout, errors to
 * stderr prefixed with "kcast: ".
 */
#ifndef KCAST_CLI_H
#define KCAST_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "emulator/emu.h"
#include "extractor/frontend.h"

enum { KCAST_EXIT_OK = 0, KCAST_EXIT_USER = 1, KCAST_EXIT_USAGE = 2,
       KCAST_EXIT_LAUNCH = 4 /* kcast run: a launch failed in the emulator */,
       KCAST_EXIT_RACE = 5 /* kcast run --racecheck: a data race was found */,
       KCAST_EXIT_UNSUPPORTED = 6 /* kcast run: the program called a CUDA runtime
                                     function kcast does not implement */ };

/* A subcommand: argv[0] is the command name. */
typedef int (*cmd_fn)(int argc, char **argv);

typedef struct cmd_entry {
  const char *name;
  cmd_fn fn;
  const char *summary;  /* one line for `kcast help` */
  const char *usage;    /* full help text for `kcast help NAME` */
} cmd_entry;

int cmd_extract(int argc, char **argv);
int cmd_dataset(int argc, char **argv);

extern const char cmd_extract_usage[];
extern const char cmd_dataset_usage[];

/* Model commands (cmd_train.c, cmd_cv.c, cmd_predict.c, cmd_model.c). */
int cmd_train(int argc, char **argv);
int cmd_cv(int argc, char **argv);
int cmd_predict(int argc, char **argv);
int cmd_model(int argc, char **argv);
extern const char cmd_train_usage[];
extern const char cmd_cv_usage[];
extern const char cmd_predict_usage[];
extern const char cmd_model_usage[];

/* The option parser of every command (cli_opt.c): getopt_long with
   --opt V, --opt=V, -o V, -oV and -o=V; long names written out whole, no
   empty values, no value for a flag; operands anywhere (collected at
   argv[first_operand..end)), or with in_order the first operand ends the
   options (run, profile: PROGRAM ARGS).  Usage:
     cli_opts o; cli_opts_init(&o, "cv", argc, argv, "o:", 0);
     cli_opts_add(&o, own_table); cli_opts_add(&o, cli_rf_longopts);
     while ((c = cli_opts_next(&o)) != CLI_OPT_END) {
       if (c == CLI_OPT_ERR) return KCAST_EXIT_USAGE;   (message printed)
       ... o.name is the option as "--folds" or "-o", o.arg its value ...
     }
   Ids: a short option's character; long-only ones from CLI_OPT_OWN (a
   command's own), CLI_OPT_RF (cli_rfdata.c) and CLI_OPT_LAUNCH
   (cli_launch.c).
   An option that takes a value takes one: given twice (also as -o and
   --output) it is a usage error naming both values, so a script's second
   --time never silently replaces its first.  An option that collects
   values (--arg, -I) says so: CLI_OPT_MANY or'ed into its table entry's
   id (cli_opts_next returns the id without it), and for a short option
   without a long name a '*' after its ':' in shortopts ("I:*"). */
#include <getopt.h>
enum { CLI_OPT_END = -1, CLI_OPT_ERR = -2, CLI_OPT_OWN = 0x100, CLI_OPT_RF = 0x200,
       CLI_OPT_LAUNCH = 0x300, CLI_OPT_FILTER = 0x380, CLI_OPT_FE = 0x3c0,
       CLI_OPT_GPUS = 0x3f0, CLI_OPT_PROGRESS = 0x3f1, CLI_OPT_QUIET = 0x3f2,
       CLI_OPT_KERNEL_NAME = 0x3f3, CLI_OPT_TOOL_TIMEOUT = 0x3f4, CLI_OPTS_MAX = 96,
       CLI_OPT_MANY = 0x10000 };
/* --gpus FILE (commands that look GPUs up add this table): the GPUs of FILE
   added to or replacing those of the GPU table, as KCAST_GPUS=FILE does;
   handled by cli_opts_next itself.  Whichever names the table, a file that
   cannot be read ends the parse with its error (status KCAST_EXIT_USER). */
extern const struct option cli_gpus_longopts[];
/* --tool-timeout SECS (commands that compile: extract adds this table,
   cli_launch_longopts holds the entry): the time limit of every nvcc,
   clang and ptxas run (fe_set_tool_timeout), handled by cli_opts_next
   itself; a value that is not seconds > 0 is a usage error. */
extern const struct option cli_tool_longopts[];
/* The one "unknown GPU" message (cli_error): where (a file and place, or
   NULL), the name, the table's GPUs (", or all" with or_all) and how to
   add one (--gpus FILE). */
void cli_unknown_gpu(const char *where, const char *name, int or_all);
/* A note on stderr when name, a GPU key measurements are stored under
   (import --gpu, profile --gpu), is not in the GPU table: a typo ("Z80",
   did you mean K80?) or a GPU to add with --gpus FILE. */
void cli_note_gpu_key(const char *name);
/* The table's GPUs a --gpu value names: "all", or a comma list resolved
   by an_gpu_find (case-insensitive, aliases; duplicates once), at most
   cap into out.  -1 after the message naming an unknown one. */
struct an_gpu;
int cli_gpu_list(const char *spec, const struct an_gpu **out, size_t cap, size_t *n);
/* --progress and --quiet, which every command takes (cli_opts_init adds
   them, cli_opts_next handles them): progress lines on stderr also when it
   is not a terminal (a log: whole lines, no redrawing, at most one per
   CLI_PROGRESS_LOG_S seconds), or none at all, not even on a terminal.
   Without either, progress is shown on a terminal only.  The style to use
   now: */
enum { CLI_PROGRESS_NONE = 0, CLI_PROGRESS_TTY, CLI_PROGRESS_LINES };
#define CLI_PROGRESS_LOG_S 10.0
int cli_progress_style(void);
/* -k NAME / --kernel-name NAME, Nsight Compute's kernel filter: NAME is
   exact (the mangled name, the demangled signature or the source name,
   fe_name_match's rule) unless it is regex:EXPR (POSIX extended, searched
   in the mangled name and the demangled signature).  A table holding an
   option with id CLI_OPT_KERNEL_NAME brings the short form -k with it;
   cli_opts_next returns CLI_OPT_KERNEL_NAME for both, the regex checked.
   Its meaning: */
typedef struct cli_kernel_name {
  const char *exact;   /* NULL, or the exact name */
  const char *regex;   /* NULL, or the expression after "regex:" */
} cli_kernel_name;
void cli_kernel_name_parse(const char *value, cli_kernel_name *out);
typedef struct cli_opts {
  const char *cmd;          /* command name for messages */
  int argc;
  char **argv;              /* operands are moved to its front (not in_order) */
  struct option lo[CLI_OPTS_MAX];  /* the long options, zero-terminated */
  size_t nlo;
  char so[64];              /* getopt's optstring */
  int in_order, started, done;
  const char *name;         /* the current option ("--folds", "-o") */
  char namebuf[64];
  const char *arg;          /* its value; NULL for a flag */
  int status;               /* after CLI_OPT_ERR: the exit code (usage, or
                               KCAST_EXIT_USER for an unreadable --gpus) */
  int first_operand, end;   /* operands: argv[first_operand..end) after CLI_OPT_END */
  char many_short[16];      /* short options marked '*' (may repeat) */
  struct cli_opt_seen {     /* single-value options given so far */
    int id;
    const char *val;        /* its value (an argv string) */
    char name[40];          /* as it was written ("-o", "--output") */
  } seen[CLI_OPTS_MAX];
  size_t nseen;
} cli_opts;
void cli_opts_init(cli_opts *o, const char *cmd, int argc, char **argv, const char *shortopts,
                   int in_order);
/* Append a zero-terminated table; -1 (a bug) when CLI_OPTS_MAX is exceeded. */
int cli_opts_add(cli_opts *o, const struct option *table);
/* The next option's id, CLI_OPT_END, or CLI_OPT_ERR after a usage error. */
int cli_opts_next(cli_opts *o);
/* The word after the current option (consumed), or NULL at the end: for a
   value an option takes from the next word itself. */
const char *cli_opts_take_next(cli_opts *o);
/* "Did you mean": of names[0..n) (NULL entries skipped), the one that
   word[0..len) abbreviates, else the closest by edit distance (at most 1
   edit for a word under 5 letters, 2 under 9, else 3); NULL when none is
   that close.  For misspelled options, commands and subcommands. */
const char *cli_suggest(const char *word, size_t len, const char *const *names, size_t n);
/* The usage error of an unknown subcommand of cmd, with the closest of
   subs[0..n) and the list; returns KCAST_EXIT_USAGE. */
int cli_unknown_subcommand(const char *cmd, const char *sub, const char *const *subs, size_t n);
#define CLI_OPERANDS(o) ((o)->argv + (o)->first_operand)
#define CLI_NOPERANDS(o) ((o)->end - (o)->first_operand)

/* Training input shared by train, cv and report (cli_rfdata.c): the
   options, and the loading of datasets/ds_train.h. */
#include "datasets/ds_train.h"
typedef ds_train_input cli_rf_input;
/* A whole number in 0..max (no sign); -1 when s is not one. */
int cli_parse_uint(const char *s, unsigned long max, unsigned long *out);
/* kcast's training defaults into *p and a cleared *in. */
void cli_rf_defaults(struct rf_params *p, cli_rf_input *in);
/* The input and hyperparameter options of train and cv, and the handling
   of one (id from cli_opts_next): 1 consumed, 0 not one of them, -1 usage
   error already printed. */
extern const struct option cli_rf_longopts[];
int cli_rf_option(cli_opts *o, int id, struct rf_params *p, cli_rf_input *in);
/* Load the matrix (CSV or dataset), its derived columns, and choose the
   target transform and base column into *p; -1 after printing the error. */
int cli_rf_load(const char *cmd, cli_rf_input *in, struct rf_data *d, struct rf_params *p);
/* rf_load of a model that answers, and a note on stderr when its base
   comes from another analytic estimate than this build's (rf_base_stale);
   rf_load's status. */
struct rf_forest;
int cli_model_load(const char *path, struct rf_forest **f);
/* Progress on stderr ("trees 40/100") once a job has run for a second. */
typedef struct cli_progress { const char *label; double start, last; int shown; } cli_progress;
void cli_progress_init(cli_progress *p, const char *label);
void cli_progress_fn(void *ctx, unsigned done, unsigned total);
/* Monotonic seconds. */
double cli_now_s(void);

/* Kernel selection shared by extract and emulate (cli_kernel.c): every
   .entry with a body when want is NULL, else the one kernel want names (its
   mangled name, or its source name).  sel has room for m->nfuncs entries.
   Returns the number selected, or -1 after printing the error (unknown or
   ambiguous name, with the candidates). */
struct ptx_module;
struct ptx_func;
long cli_select_kernels(const struct ptx_module *m, const char *want,
                        const struct ptx_func **sel, const char *path);

/* ncu-style launch selection shared by run, profile and dataset export
   (cli_kernel.c): --kernel REGEX (POSIX extended, searched in the mangled
   name and in the demangled signature) or -k/--kernel-name NAME (ncu's
   meaning, cli_kernel_name_parse), --launch-skip N (matching launches
   passed over first), --launch-count N (at most N taken).  Feed launches
   in order to cli_filter_take, then cli_filter_free (the options only
   check the pattern: nothing to free before the first take). */
#include <regex.h>
typedef struct cli_filter {
  const char *pattern;         /* --kernel, or -k regex:EXPR; NULL = every kernel */
  const char *exact;           /* -k/--kernel-name NAME (fe_name_match's rule) */
  const char *given;           /* the option that chose the kernel, for messages */
  regex_t re;                  /* the pattern, compiled by the first take */
  int compiled;
  unsigned long skip, count;   /* --launch-skip; --launch-count, 0 = no limit */
  unsigned long matched, taken;
} cli_filter;
extern const struct option cli_filter_longopts[];
/* 1 consumed, 0 not a filter option, -1 usage error printed. */
int cli_filter_option(cli_filter *f, const cli_opts *o, int id);
/* Any option given? */
int cli_filter_active(const cli_filter *f);
/* Should the next launch of kernel mangled be taken? */
int cli_filter_take(cli_filter *f, const char *mangled);
void cli_filter_free(cli_filter *f);

/* Compiler options for .cu input (cli_kernel.c), shared by extract,
   emulate and predict FILE: -I DIR, -D NAME[=V], -std VER (-std=VER,
   --std VER) and --cflags "WORDS" (split at blanks, no shell, no quotes),
   passed in order to nvcc or clang as fe_options.extra.  Add
   CLI_FE_SHORTOPTS to the command's short options. */
#define CLI_FE_SHORTOPTS "I:*D:*s:"
#define CLI_FE_MAXARGS 256
typedef struct cli_fe_args {
  const char *v[CLI_FE_MAXARGS];  /* the words (into argv or buf) */
  size_t n;
  char buf[8192];                 /* -std=VER and the split --cflags */
  size_t used;
} cli_fe_args;
extern const struct option cli_fe_longopts[];
/* 1 consumed, 0 not a compiler option, -1 usage error printed. */
int cli_fe_option(cli_fe_args *a, cli_opts *o, int id);

/* Add what ptxas reports for the architectures of archs ("sm_80,sm_86", or
   "all": those of the GPU table) to the features v[i] of kernels k[i]
   (ptxas.<arch>.*, docs/features.md).  An architecture ptxas refuses is an
   error, or with lenient (and always with "all") a note on stderr.
   Returns how many architectures were assembled, -1 after the error. */
struct feat_vec;
int cli_ptxas_features(const char *ptx, size_t len, const char *src, const char *archs,
                       const struct ptx_func *const *k, struct feat_vec *const *v, size_t nk,
                       int lenient);

/* kcast featmodel fit|info|validate (cmd_featmodel.c). */
int cmd_featmodel(int argc, char **argv);
extern const char cmd_featmodel_usage[];

/* kcast dataset import-kerneltuner (cmd_import_kt.c); argv[0] is the
   subcommand's name. */
int cmd_import_kerneltuner(int argc, char **argv);
extern const char cmd_import_kt_usage[];

/* kcast tune-space (cmd_tune_space.c): a Kernel Tuner space predicted. */
int cmd_tune_space(int argc, char **argv);
extern const char cmd_tune_space_usage[];

/* kcast dataset import-nsys / import-ncu (cmd_import_nsight.c). */
int cmd_import_nsight(int argc, char **argv);
extern const char cmd_import_nsight_usage[];
/* The gpus row of GPU key (measurements.gpu) for a device the driver
   called device: the name, and the GPU table's descriptors when the table
   knows device or key (cmd_import_kt.c). */
struct ds_gpu;
void cli_gpu_row(const char *key, const char *device, struct ds_gpu *g);

/* kcast emulate (cmd_emulate.c). */
int cmd_emulate(int argc, char **argv);
extern const char cmd_emulate_usage[];

/* kcast report (cmd_report.c): the predictions against the measurements
   as one self-contained HTML file. */
int cmd_report(int argc, char **argv);
extern const char cmd_report_usage[];

/* kcast calibrate (cmd_calibrate.c): a model adapted to a new GPU from
   launches measured there. */
int cmd_calibrate(int argc, char **argv);
extern const char cmd_calibrate_usage[];

/* kcast gpus (cmd_gpus.c): the GPU table of the analytic estimate. */
int cmd_gpus(int argc, char **argv);
extern const char cmd_gpus_usage[];

/* kcast profile (cmd_profile.c). */
int cmd_profile(int argc, char **argv);
extern const char cmd_profile_usage[];
/* The GPU key `kcast profile` gives this machine's first CUDA device
   (prof_gpu_key of its name) into key; -1 with the reason in why when no
   GPU is usable. */
int cli_gpu_key(char *key, size_t cap, char *why, size_t wcap);

/* kcast suite (cmd_suite.c): a manifest's entries under run or profile. */
int cmd_suite(int argc, char **argv);
extern const char cmd_suite_usage[];

/* kcast run and kcast nvcc (cmd_run.c). */
int cmd_run(int argc, char **argv);
int cmd_nvcc(int argc, char **argv);
extern const char cmd_run_usage[];
extern const char cmd_nvcc_usage[];

/* One kernel launch from command-line options (cli_launch.c), shared by
   kcast emulate and kcast predict FILE.  Usage: cli_launch_init; for each
   argv[i] the command does not handle itself, cli_launch_option; then
   cli_launch_load (front end, parse, kernel, --arg typing),
   cli_launch_device (device and buffers), cli_launch_run; always
   cli_launch_free.  Every function prints its own error and returns a
   KCAST_EXIT_* code (cli_launch_option: 1 consumed, 0 not a launch option,
   -1 usage error printed).  The input file is the command's operand. */
#include "emulator/emu_args.h"
typedef emu_arg_spec cli_arg_spec;     /* emulator/emu_args.h */
typedef emu_const_spec cli_const_spec;
typedef struct cli_launch {
  const char *cmd;           /* command name for messages ("emulate") */
  const char *path, *kernel; /* input file and --kernel (argv strings) */
  fe_options fo;             /* front end (compiler, arch, fa's words) */
  cli_fe_args fa;            /* -I, -D, -std, --cflags */
  emu_launch_cfg cfg;        /* grid, block, shared, sample, limits */
  int have_grid, have_block;
  cli_arg_spec *args;        /* nargs specs, room for argc (owned) */
  unsigned nargs;
  /* Set by cli_launch_load / cli_launch_device (owned): */
  char *text;                /* PTX text */
  size_t len;
  ptx_module *m;
  const struct ptx_func *k;  /* the selected kernel (in m) */
  size_t *offs;              /* parameter offsets in pbuf */
  unsigned char *pbuf;       /* argument buffer */
  size_t ptotal;
  emu_device *dev;
  emu_module *em;
  /* the kernel's parameters as the source names them (.cu input: the front
     end's listing, asked once, for messages only) */
  fe_kernel *src_kernels;
  size_t nsrc_kernels;
  int src_tried;
} cli_launch;
/* KCAST_EXIT_OK, or KCAST_EXIT_USER when out of memory (printed). */
int cli_launch_init(cli_launch *L, const char *cmd, int argc);
extern const struct option cli_launch_longopts[];
int cli_launch_option(cli_launch *L, cli_opts *o, int id);
/* The input file from the parser's operands (at most one). */
int cli_launch_operands(cli_launch *L, const cli_opts *o);
/* Usage error when the file, --grid or --block is missing or the block too large. */
int cli_launch_check(cli_launch *L);
int cli_launch_load(cli_launch *L);
int cli_launch_device(cli_launch *L);
/* Run the launch; features/st may be NULL.  printf_out: device printf. */
int cli_launch_run(cli_launch *L, FILE *printf_out, feat_vec *features, emu_stats *st);
/* Write the buffer of buf: parameter param to path (atomically). */
int cli_launch_dump(cli_launch *L, unsigned long param, const char *path);
void cli_launch_free(cli_launch *L);

/* Parse --const NAME=FILL (emu_const_parse); 0, or -1 after printing a
   usage error. */
int cli_parse_const(const char *cmd, const char *text, cli_const_spec *out);

/* A file written whole or not at all (cli_file.c): cli_out_open creates a
   temporary file beside path (write to o->f); cli_out_close(o, 1) renames
   it over path when every write succeeded, cli_out_close(o, 0) (or any
   failure) removes it, leaving path as it was.  Both print their error and
   return 0 or -1. */
typedef struct cli_out { FILE *f; char *tmp; const char *path; } cli_out;
/* (path "-" is standard output: no temporary file, nothing renamed.) */
int cli_out_open(cli_out *o, const char *path);
int cli_out_close(cli_out *o, int ok);

/* One CSV field on f as RFC 4180 wants it (cli_file.c): as is, or quoted
   by libcsv (csv_fwrite) when it holds a comma, quote or line break or
   starts or ends with a blank; nothing for NULL. */
void cli_csv_field(FILE *f, const char *s);

/* v for a table: sig significant digits as a plain decimal, never an
   exponent (1207900, not 1.2079e+06; 0.00012), trailing zeros dropped;
   "nan", "inf".  Into buf (cap bytes, 64 for any value up to 1e60; one
   that does not fit is printed with an exponent); returns buf. */
const char *cli_num(char *buf, size_t cap, double v, int sig);

/* Print "kcast: " + message + newline on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print the command's usage on stderr after an error; returns KCAST_EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* True when argv holds -h or --help before any "--". */
int cli_wants_help(int argc, char **argv);
/* Output formats shared by commands. */
typedef enum { CLI_FMT_TABLE, CLI_FMT_CSV, CLI_FMT_JSON } cli_format;
/* Parse "table|csv|json"; -1 on anything else. */
int cli_parse_format(const char *s);

#endif
