/*
 * cli_opt.c -- the one option parser of every kcast command: getopt_long
 * over the command's table (its own options plus the shared groups of
 * cli_rfdata.c and cli_launch.c), with the rules users bring from GNU tools:
 *
 *   --opt VALUE   --opt=VALUE   -o VALUE   -oVALUE   -o=VALUE
 *
 * and a few of kcast's own, each one usage error naming the option:
 *  - a long name is written out whole: getopt_long would take a unique
 *    prefix (--fold for --folds), which changes meaning the day an option
 *    with the same prefix is added, so scripts written today would break;
 *  - a required value is not empty (--csv= is a mistake, not a file name);
 *  - a flag takes no value (--search=1 is refused, not silently read).
 *
 * Operands (files, subcommand arguments) may come anywhere among the
 * options, whatever POSIXLY_CORRECT says ("-" mode of getopt: they are
 * returned in order and collected at the front of argv); after "--" every
 * word is an operand.  A command that runs a program (run, profile) asks
 * for in-order parsing: the first operand ends the options and the program
 * and its arguments are left as they are.
 */
#include "cli/cli.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/model.h"

const struct option cli_gpus_longopts[] = {
  {"gpus", required_argument, NULL, CLI_OPT_GPUS},
  {NULL, 0, NULL, 0},
};

/* ------------------------------------------------ options of every command -- */

/* --progress, --quiet: one setting for the process (a command parses its
   options once). */
static const struct option common_longopts[] = {
  {"progress", no_argument, NULL, CLI_OPT_PROGRESS},
  {"quiet", no_argument, NULL, CLI_OPT_QUIET},
  {NULL, 0, NULL, 0},
};
static int progress_flag; /* 0 neither, CLI_OPT_PROGRESS or CLI_OPT_QUIET */

int cli_progress_style(void) {
  if (progress_flag == CLI_OPT_QUIET) return CLI_PROGRESS_NONE;
  if (isatty(STDERR_FILENO)) return CLI_PROGRESS_TTY;
  return progress_flag == CLI_OPT_PROGRESS ? CLI_PROGRESS_LINES : CLI_PROGRESS_NONE;
}

void cli_kernel_name_parse(const char *value, cli_kernel_name *out) {
  out->exact = out->regex = NULL;
  if (!strncmp(value, "regex:", 6)) out->regex = value + 6;
  else out->exact = value;
}

/* One of the options above, or -k/--kernel-name: 1 handled (the parse goes
   on), 0 return it to the command, -1 a usage error (printed). */
static int common_option(cli_opts *o, int c) {
  if (c == CLI_OPT_PROGRESS || c == CLI_OPT_QUIET) {
    if (progress_flag && progress_flag != c) {
      cli_usage_error(o->cmd, "--progress and --quiet exclude each other");
      return -1;
    }
    progress_flag = c;
    return 1;
  }
  if (c == CLI_OPT_KERNEL_NAME) {
    cli_kernel_name kn;
    cli_kernel_name_parse(o->arg, &kn);
    if (kn.regex) {
      regex_t re;
      int e = *kn.regex ? regcomp(&re, kn.regex, REG_EXTENDED | REG_NOSUB) : REG_BADPAT;
      if (e) {
        char msg[256] = "empty";
        if (*kn.regex) regerror(e, &re, msg, sizeof msg);
        if (*kn.regex) regfree(&re);
        cli_usage_error(o->cmd, "%s '%s': not a regular expression after 'regex:': %s", o->name,
                        o->arg, msg);
        return -1;
      }
      regfree(&re);
    }
  }
  return 0;
}

void cli_opts_init(cli_opts *o, const char *cmd, int argc, char **argv, const char *shortopts,
                   int in_order) {
  memset(o, 0, sizeof *o);
  o->cmd = cmd;
  o->argc = argc;
  o->argv = argv;
  o->in_order = in_order;
  /* '-' or '+' fixes the mode whatever the environment says; ':' makes a
     missing value its own return, so the message can say so */
  snprintf(o->so, sizeof o->so, "%s:%s", in_order ? "+" : "-", shortopts ? shortopts : "");
  o->first_operand = 1;
  o->end = 1;
  o->status = KCAST_EXIT_USAGE;
  cli_opts_add(o, common_longopts);
}

int cli_opts_add(cli_opts *o, const struct option *table) {
  for (const struct option *t = table; t && t->name; t++) {
    if (o->nlo + 1 >= CLI_OPTS_MAX) return -1;
    o->lo[o->nlo++] = *t;
    /* --kernel-name brings -k (Nsight Compute's short form) */
    if (t->val == CLI_OPT_KERNEL_NAME && !strchr(o->so, 'k') && strlen(o->so) + 3 <= sizeof o->so)
      strcat(o->so, "k:");
  }
  o->lo[o->nlo] = (struct option){0, 0, 0, 0};
  return 0;
}

/* The table entry of long option text s ("name" or "name=value"). */
static const struct option *find_long(const cli_opts *o, const char *s) {
  size_t n = strcspn(s, "=");
  for (size_t k = 0; k < o->nlo; k++)
    if (strlen(o->lo[k].name) == n && !strncmp(o->lo[k].name, s, n)) return &o->lo[k];
  return NULL;
}

/* A long option whose name starts with s (for "did you mean"). */
static const char *prefix_of(const cli_opts *o, const char *s) {
  size_t n = strcspn(s, "=");
  for (size_t k = 0; k < o->nlo && n; k++)
    if (!strncmp(o->lo[k].name, s, n)) return o->lo[k].name;
  return NULL;
}

static void set_name(cli_opts *o, const char *text, size_t n, int is_long) {
  if (n > sizeof o->namebuf - 3) n = sizeof o->namebuf - 3;
  snprintf(o->namebuf, sizeof o->namebuf, "%s%.*s", is_long ? "--" : "-", (int)n, text);
  o->name = o->namebuf;
}

int cli_opts_next(cli_opts *o) {
  if (o->done) return CLI_OPT_END;
  if (!o->started) {
    o->started = 1;
    optind = 0; /* glibc: start afresh (a test may parse twice) */
  }
  opterr = 0;
  int li = -1;
  /* optind of 0 means "initialise" to glibc; the first word is argv[1] */
  int before = optind ? optind : 1;
  int c = getopt_long(o->argc, o->argv, o->so, o->lo, &li);
  o->arg = NULL;
  o->name = NULL;
  if (c == -1) {
    /* after "--" (or, in order, at the first operand): the rest are operands */
    o->done = 1;
    if (o->in_order) {
      o->first_operand = optind;
      o->end = o->argc;
    } else {
      for (int k = optind; k < o->argc; k++) o->argv[o->end++] = o->argv[k];
    }
    /* a GPU table the user gave (--gpus, KCAST_GPUS) that cannot be read is
       an error before any work, not a silently smaller table */
    const char *gerr = getenv("KCAST_GPUS") ? an_gpu_table_error() : "";
    if (*gerr) {
      cli_error("%s", gerr);
      o->status = KCAST_EXIT_USER;
      return CLI_OPT_ERR;
    }
    return CLI_OPT_END;
  }
  if (c == 1) {
    /* an operand (return-in-order mode): collect it at the front; every
       word before it is consumed, so nothing getopt still reads moves */
    o->argv[o->end++] = optarg;
    return cli_opts_next(o);
  }
  const char *tok = o->argv[optind - 1];
  if (c == '?' || c == ':') {
    /* the word that failed: for a missing value the last one */
    tok = o->argv[optind - 1 >= before ? optind - 1 : before];
    if (tok[0] == '-' && tok[1] == '-') {
      const struct option *lo = find_long(o, tok + 2);
      set_name(o, tok + 2, strcspn(tok + 2, "="), 1);
      if (c == ':') {
        cli_usage_error(o->cmd, "%s needs a value", o->name);
      } else if (lo && lo->has_arg == no_argument && strchr(tok, '=')) {
        cli_usage_error(o->cmd, "%s takes no value (got '%s')", o->name, tok);
      } else {
        const char *p = prefix_of(o, tok + 2);
        if (p) cli_usage_error(o->cmd, "unknown option '%s' (did you mean --%s?)", o->namebuf, p);
        else cli_usage_error(o->cmd, "unknown option '%s'", o->namebuf);
      }
    } else {
      char sh = (char)(optopt ? optopt : '?');
      set_name(o, &sh, 1, 0);
      if (c == ':') cli_usage_error(o->cmd, "%s needs a value", o->name);
      else cli_usage_error(o->cmd, "unknown option '%s'", o->name);
    }
    o->done = 1;
    return CLI_OPT_ERR;
  }
  o->arg = optarg;
  /* the option's own word: the one before a separate value */
  int separate = optarg && optind >= 2 && optarg == o->argv[optind - 1];
  tok = o->argv[optind - 1 - separate];
  if (li >= 0) {
    const char *lname = o->lo[li].name;
    set_name(o, lname, strlen(lname), 1);
    size_t n = strcspn(tok + 2, "=");
    if (strncmp(tok, "--", 2) || n != strlen(lname) || strncmp(tok + 2, lname, n)) {
      cli_usage_error(o->cmd, "unknown option '--%.*s' (did you mean %s?)", (int)n, tok + 2,
                      o->name);
      o->done = 1;
      return CLI_OPT_ERR;
    }
  } else {
    char sh = (char)c;
    set_name(o, &sh, 1, 0);
    /* -o=FILE: the '=' joins option and value, as in the long form */
    if (optarg && !separate && optarg[0] == '=') o->arg = optarg + 1;
  }
  if (o->arg && !*o->arg) {
    cli_usage_error(o->cmd, "%s needs a value (got an empty one)", o->name);
    o->done = 1;
    return CLI_OPT_ERR;
  }
  if (c == CLI_OPT_GPUS) {
    /* read on the first lookup, after the options (the table is built once) */
    setenv("KCAST_GPUS", o->arg, 1);
    return cli_opts_next(o);
  }
  if (c == 'k' && li < 0) {
    for (size_t k = 0; k < o->nlo; k++)
      if (o->lo[k].val == CLI_OPT_KERNEL_NAME) c = CLI_OPT_KERNEL_NAME;
  }
  int common = common_option(o, c);
  if (common < 0) {
    o->done = 1;
    return CLI_OPT_ERR;
  }
  if (common) return cli_opts_next(o);
  return c;
}

const char *cli_opts_take_next(cli_opts *o) {
  if (optind >= o->argc) return NULL;
  return o->argv[optind++];
}
