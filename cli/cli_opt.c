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
 *  - a flag takes no value (--search=1 is refused, not silently read);
 *  - an option that takes one value is given once: `--time A.db --time
 *    B.db` stored B's times under A's GPU name without a word when the
 *    last one won; options that collect values (--arg, -I) are marked in
 *    their tables (CLI_OPT_MANY, or '*' in the short options);
 *  - a misspelled long option gets "did you mean" (cli_suggest: a prefix,
 *    else the closest name by edit distance).
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
#include <strings.h>
#include <unistd.h>

#include "model/model.h"

const struct option cli_gpus_longopts[] = {
  {"gpus", required_argument, NULL, CLI_OPT_GPUS},
  {NULL, 0, NULL, 0},
};

const struct option cli_tool_longopts[] = {
  {"tool-timeout", required_argument, NULL, CLI_OPT_TOOL_TIMEOUT},
  {NULL, 0, NULL, 0},
};

void cli_unknown_gpu(const char *where, const char *name, int or_all) {
  char names[2048];
  an_gpu_names(names, sizeof names);
  cli_error("%s%sunknown GPU '%s' (known: %s%s; --gpus FILE adds GPUs, 'kcast gpus' lists them)",
            where ? where : "", where ? ": " : "", name, names, or_all ? ", or all" : "");
}

void cli_note_gpu_key(const char *name) {
  if (!name || !*name || an_gpu_find(name)) return;
  const char *names[256];
  size_t n = 0;
  for (size_t i = 0; i < an_gpu_count() && n < 256; i++) names[n++] = an_gpu_at(i)->name;
  const char *near = cli_suggest(name, strlen(name), names, n);
  fprintf(stderr, "kcast: note: GPU '%s' is not in the GPU table%s%s%s: its measurements are "
          "stored under that name, and models of it get no analytic estimate (--gpus FILE adds "
          "a GPU; 'kcast gpus' lists them)\n", name, near ? " (did you mean " : "",
          near ? near : "", near ? "?)" : "");
}

int cli_gpu_list(const char *spec, const an_gpu **out, size_t cap, size_t *n) {
  *n = 0;
  if (!strcasecmp(spec, "all")) {
    for (size_t i = 0; i < an_gpu_count() && *n < cap; i++) out[(*n)++] = an_gpu_at(i);
    return 0;
  }
  for (const char *t = spec;;) {
    const char *e = strchr(t, ',');
    size_t l = e ? (size_t)(e - t) : strlen(t);
    char name[256];
    snprintf(name, sizeof name, "%.*s", (int)(l < sizeof name ? l : sizeof name - 1), t);
    const an_gpu *g = l ? an_gpu_find(name) : NULL;
    if (!g) {
      if (l) cli_unknown_gpu(NULL, name, 1);
      else cli_error("--gpu '%s': an empty GPU name in the list", spec);
      return -1;
    }
    size_t k = 0;
    while (k < *n && out[k] != g) k++;
    if (k == *n) {
      if (*n == cap) {
        cli_error("--gpu '%s': more than %zu GPUs", spec, cap);
        return -1;
      }
      out[(*n)++] = g;
    }
    if (!e) return 0;
    t = e + 1;
  }
}

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
     missing value its own return, so the message can say so.  A '*' after
     an option's ':' (ours, not getopt's) marks it as one that may repeat. */
  size_t n = (size_t)snprintf(o->so, sizeof o->so, "%s:", in_order ? "+" : "-"), nm = 0;
  for (const char *p = shortopts ? shortopts : ""; *p && n + 1 < sizeof o->so; p++) {
    if (*p == '*') {
      if (p > shortopts && p[-1] == ':' && p - 1 > shortopts && nm + 1 < sizeof o->many_short)
        o->many_short[nm++] = p[-2];
      continue;
    }
    o->so[n++] = *p;
  }
  o->so[n] = 0;
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

/* Optimal string alignment distance of a[0..na) and b (insertions,
   deletions, substitutions, transpositions of neighbours), capped: any
   distance above 3 is reported as 4. */
static size_t edit_distance(const char *a, size_t na, const char *b) {
  size_t nb = strlen(b);
  if (na > 62 || nb > 62 || (na > nb ? na - nb : nb - na) > 3) return 4;
  size_t d[64][64];
  for (size_t i = 0; i <= na; i++) d[i][0] = i;
  for (size_t j = 0; j <= nb; j++) d[0][j] = j;
  for (size_t i = 1; i <= na; i++)
    for (size_t j = 1; j <= nb; j++) {
      size_t cost = a[i - 1] != b[j - 1], v = d[i - 1][j - 1] + cost;
      if (d[i - 1][j] + 1 < v) v = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < v) v = d[i][j - 1] + 1;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
        v = d[i - 2][j - 2] + 1;
      d[i][j] = v;
    }
  return d[na][nb] > 3 ? 4 : d[na][nb];
}

const char *cli_suggest(const char *word, size_t len, const char *const *names, size_t n) {
  if (!word || !len) return NULL;
  /* a name the word begins (an abbreviation), else the closest one: at
     most one edit in a short word, two from five letters, three from nine */
  for (size_t k = 0; k < n; k++)
    if (names[k] && strlen(names[k]) > len && !strncmp(names[k], word, len)) return names[k];
  size_t best = 4, limit = len < 5 ? 1 : len < 9 ? 2 : 3;
  const char *pick = NULL;
  for (size_t k = 0; k < n; k++) {
    if (!names[k]) continue;
    size_t dist = edit_distance(word, len, names[k]);
    if (dist <= limit && dist < best) best = dist, pick = names[k];
  }
  return pick;
}

int cli_unknown_subcommand(const char *cmd, const char *sub, const char *const *subs, size_t n) {
  char list[512];
  size_t len = 0;
  list[0] = 0;
  for (size_t k = 0; k < n && len + 1 < sizeof list; k++)
    len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", k ? ", " : "", subs[k]);
  const char *s = cli_suggest(sub, strlen(sub), subs, n);
  if (s) return cli_usage_error(cmd, "unknown subcommand '%s' (did you mean '%s'? %s)", sub, s, list);
  return cli_usage_error(cmd, "unknown subcommand '%s' (%s)", sub, list);
}

/* The long option closest to s (for "did you mean"). */
static const char *suggest_long(const cli_opts *o, const char *s) {
  const char *names[CLI_OPTS_MAX];
  for (size_t k = 0; k < o->nlo; k++) names[k] = o->lo[k].name;
  return cli_suggest(s, strcspn(s, "="), names, o->nlo);
}

/* May option id (a short option's character or a long option's id without
   CLI_OPT_MANY) be given more than once? */
static int may_repeat(const cli_opts *o, int id) {
  if (id > 0 && id < 0x100 && strchr(o->many_short, id)) return 1;
  for (size_t k = 0; k < o->nlo; k++)
    if ((o->lo[k].val & ~CLI_OPT_MANY) == id) return (o->lo[k].val & CLI_OPT_MANY) != 0;
  return 0;
}

/* A second value for an option that takes one: the usage error; 0 when
   this is its first. */
static int second_value(cli_opts *o, int id) {
  if (!o->arg || may_repeat(o, id)) return 0;
  for (size_t k = 0; k < o->nseen; k++) {
    if (o->seen[k].id != id) continue;
    if (!strcmp(o->seen[k].name, o->name))
      cli_usage_error(o->cmd, "%s given twice ('%s', then '%s'): it takes one value", o->name,
                      o->seen[k].val, o->arg);
    else
      cli_usage_error(o->cmd, "%s and %s are one option, given twice ('%s', then '%s'): it "
                      "takes one value", o->seen[k].name, o->name, o->seen[k].val, o->arg);
    return -1;
  }
  if (o->nseen < CLI_OPTS_MAX) {
    struct cli_opt_seen *e = &o->seen[o->nseen++];
    e->id = id;
    e->val = o->arg;
    snprintf(e->name, sizeof e->name, "%s", o->name);
  }
  return 0;
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
        const char *p = suggest_long(o, tok + 2);
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
  c &= ~CLI_OPT_MANY;
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
    /* -std=VER and -std VER (as compilers spell it) reach getopt as -s
       with "td=VER": they are the long option std, so that -std and --std
       given twice are one option given twice */
    const struct option *std = find_long(o, "std");
    if (c == 's' && std && optarg && !separate && !strncmp(optarg, "td", 2) &&
        (!optarg[2] || optarg[2] == '=')) {
      o->arg = optarg[2] ? optarg + 3 : cli_opts_take_next(o);
      o->name = "-std";
      c = std->val & ~CLI_OPT_MANY;
      if (!o->arg || !*o->arg) {
        cli_usage_error(o->cmd, "-std needs a value (c++17, c++20, ...)");
        o->done = 1;
        return CLI_OPT_ERR;
      }
    }
  }
  if (o->arg && !*o->arg) {
    cli_usage_error(o->cmd, "%s needs a value (got an empty one)", o->name);
    o->done = 1;
    return CLI_OPT_ERR;
  }
  /* -k is --kernel-name (one option for the check below) */
  if (c == 'k' && li < 0) {
    for (size_t k = 0; k < o->nlo; k++)
      if (o->lo[k].val == CLI_OPT_KERNEL_NAME) c = CLI_OPT_KERNEL_NAME;
  }
  if (second_value(o, c)) {
    o->done = 1;
    return CLI_OPT_ERR;
  }
  if (c == CLI_OPT_TOOL_TIMEOUT) {
    char *e;
    double t = strtod(o->arg, &e);
    if (*e || e == o->arg || !(t > 0) || t > 1e7) {
      cli_usage_error(o->cmd, "--tool-timeout '%s': give seconds > 0", o->arg);
      o->done = 1;
      return CLI_OPT_ERR;
    }
    fe_set_tool_timeout(t);
    return cli_opts_next(o);
  }
  if (c == CLI_OPT_GPUS) {
    /* read on the first lookup, after the options (the table is built once) */
    setenv("KCAST_GPUS", o->arg, 1);
    return cli_opts_next(o);
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
