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

#include <stdio.h>

enum { KCAST_EXIT_OK = 0, KCAST_EXIT_USER = 1, KCAST_EXIT_USAGE = 2 };

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
