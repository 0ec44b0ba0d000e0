/*
 * cmd_suite.c -- `kcast suite run|profile MANIFEST`: every entry of a suite
 * manifest (docs/formats.md, "Suite manifest") under `kcast run` (emulator
 * features) or `kcast profile` (GPU measurements), into one dataset.
 *
 * How:
 *  - the manifest is read whole and checked first (a bad line is one
 *    FILE:LINE:COL error and nothing runs); every program is hashed (its
 *    build, FNV-1a 64 of the file's bytes);
 *  - --shard I/N keeps a deterministic part of it: entries in descending
 *    expected cost (seconds recorded for the entry in --costs DB, else the
 *    line's cost=, else the median of the known ones, else 1), ties by line,
 *    each to the shard with the least cost so far (longest processing time
 *    first), so every task of an array computes the same partition from the
 *    same manifest and costs.  Under Slurm it defaults to the array task;
 *  - an entry whose (kind, app, dataset[, gpu]) the output already records
 *    with the same build and command is skipped (resumable);
 *  - every other entry is one child `kcast run`/`kcast profile` (this binary,
 *    execv: no shell) writing a private dataset in a scratch folder beside
 *    the output, with its output in a private file; up to -j children at a
 *    time.  The parent alone writes the output: a passed entry's dataset is
 *    merged (ds_merge, the entry's results replace what the output held of
 *    its key; for run, launches of the key it no longer has are deleted)
 *    and its suite entry recorded; a failed one's is dropped.
 *    Each entry's output is appended to the log file in one block;
 *  - one line per finished entry and a summary on stdout; exit 1 when an
 *    entry failed.  SIGINT/SIGTERM/SIGHUP end the children, merge nothing
 *    more, remove the scratch folder and end kcast with the same signal.
 */
#include "cli/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "datasets/ds.h"
#include "profiler/prof.h"

const char cmd_suite_usage[] =
    "usage: kcast suite run MANIFEST [-o DB] [-j N] [--shard I/N] [--costs DB]\n"
    "                   [--bindir DIR] [--timeout SECS] [--log FILE] [--force]\n"
    "                   [--dry-run]\n"
    "       kcast suite profile MANIFEST [-o DB] [--shard I/N] [--costs DB]\n"
    "                   [--bindir DIR] [--timeout SECS] [--log FILE] [--force]\n"
    "                   [--gpu NAME] [--power] [--repeat N] [--dry-run]\n"
    "\n"
    "Run every entry of a suite manifest (docs/formats.md, \"Suite manifest\":\n"
    "one `[KEY=VALUE...] PROGRAM [ARG...]` per line) under `kcast run` (run:\n"
    "features on the CPU emulator) or `kcast profile` (profile: time and power\n"
    "on this machine's GPU) into one dataset.  Entries the dataset already\n"
    "holds from the same program build (a hash of the file) and the same\n"
    "arguments and options are skipped, so an interrupted suite resumes.  One\n"
    "line per entry and a summary go to standard output.\n"
    "\n"
    "  -o DB            dataset to write (default kcast.db); %a, %j, %h, %p and\n"
    "                   %% expand to the array task id (else the shard index),\n"
    "                   the job id (SLURM_ARRAY_JOB_ID, else SLURM_JOB_ID), the\n"
    "                   host name, the process id and %\n"
    "  -j, --jobs N     run: up to N entries at a time, each with its share of\n"
    "                   the cores (default 1; profile runs one at a time)\n"
    "  --shard I/N      run only part I of N (0 <= I < N) of the manifest, a\n"
    "                   deterministic split balanced by the expected cost of the\n"
    "                   entries; in a Slurm array job the default is the array\n"
    "                   task (SLURM_ARRAY_TASK_ID - MIN) / STEP of\n"
    "                   SLURM_ARRAY_TASK_COUNT\n"
    "  --costs DB       a dataset of an earlier suite run whose recorded entry\n"
    "                   times balance the shards (every task must give the\n"
    "                   same one)\n"
    "  --bindir DIR     folder of programs named without a '/' (default: the\n"
    "                   manifest's folder); relative paths with a '/' are taken\n"
    "                   from the manifest's folder\n"
    "  --timeout SECS   end an entry after SECS seconds (a line's timeout=\n"
    "                   wins); it fails and nothing of it is kept\n"
    "  --log FILE       append each entry's output to FILE (default DB.log;\n"
    "                   names expand as -o's)\n"
    "  --force          run entries the dataset already holds\n"
    "  -n, --dry-run    print the plan (the shard's entries, expected cost, run\n"
    "                   or skip) and run nothing\n"
    "  --progress       also when stderr is not a terminal (a Slurm log), a line\n"
    "                   saying which entries run and for how long, after a\n"
    "                   second and then every 10 s (every command's option)\n"
    "  --gpu NAME       profile: GPU key of the measurements (default: from the\n"
    "                   device name, as kcast profile)\n"
    "  --power          profile: also power and energy (kcast profile --power)\n"
    "  --repeat N       profile: executions per launch (a line's repeat= wins)\n"
    "\n"
    "Exit status: 0 when every entry passed or was skipped, 1 when one failed\n"
    "(each failure is named with its reason) or the manifest is bad, 2 on a\n"
    "bad command line.\n";

/* ------------------------------------------------------------ entries -- */

enum { ST_TODO, ST_SKIP, ST_RUNNING, ST_PASS, ST_FAIL };
enum { COST_GUESSED, COST_GIVEN, COST_RECORDED };

typedef struct entry {
  int line;               /* manifest line, from 1 */
  char *prog;             /* the program as written */
  char *path;             /* the program's file (resolved) */
  char **args;            /* nargs arguments */
  int nargs;
  char *app, *dataset;    /* launch key of the entry (defaults: kcast run's) */
  char *bench;            /* bench=, or NULL */
  long long sample;       /* sample=, 0 = none */
  long long threads;      /* threads=, 0 = default */
  long long timeout;      /* timeout=, 0 = --timeout */
  long long repeat;       /* repeat=, 0 = --repeat */
  int oob_error;          /* oob=error */
  double cost_hint;       /* cost=, < 0 = none */
  long long mem;          /* mem=, MiB the entry needs; 0 = not said */
  char *cwd_given;        /* cwd= as written, or NULL */
  char *cwd;              /* it resolved against the manifest's folder: the
                             entry's working directory; NULL = kcast's own */
  /* planning */
  char build[64];         /* hash of the program file */
  char *command;          /* canonical: what shapes its results */
  double cost;            /* expected seconds */
  int cost_src;           /* COST_* */
  int shard;              /* the shard it belongs to */
  /* outcome */
  int state;              /* ST_* */
  pid_t pid;              /* running child */
  double t0, secs;        /* start, wall seconds */
  int64_t launches;
  char reason[600];       /* why it failed, or a note */
  char tmpdb[PATH_MAX], tmplog[PATH_MAX];
} entry;

typedef struct suite {
  const char *manifest;
  entry *e;
  size_t n;
} suite;

static void suite_free(suite *s) {
  for (size_t i = 0; i < s->n; i++) {
    entry *e = &s->e[i];
    free(e->prog);
    free(e->path);
    for (int k = 0; k < e->nargs; k++) free(e->args[k]);
    free(e->args);
    free(e->app);
    free(e->dataset);
    free(e->bench);
    free(e->cwd_given);
    free(e->cwd);
    free(e->command);
  }
  free(s->e);
  s->e = NULL;
  s->n = 0;
}

/* --------------------------------------------------------- the manifest -- */

/* One token of a manifest line, from *p: blanks end it, '...' quotes
   literally, "..." quotes with \" and \\ escapes; pieces join (a"b c"d).
   Returns the malloc'd token, NULL at the end of the line (a '#' at a
   token's start begins a comment), or sets *bad to the problem. */
static char *next_token(const char **p, int *col, const char *line0, const char **bad) {
  const char *s = *p;
  while (*s == ' ' || *s == '\t' || *s == '\r') s++;
  *col = (int)(s - line0) + 1;
  if (!*s || *s == '#') {
    *p = s;
    return NULL;
  }
  size_t cap = strlen(s) + 1, n = 0;
  char *t = malloc(cap);
  if (!t) {
    *bad = "out of memory";
    return NULL;
  }
  while (*s && *s != ' ' && *s != '\t' && *s != '\r') {
    if (*s == '\'') {
      const char *e = strchr(s + 1, '\'');
      if (!e) {
        *bad = "unterminated ' quote";
        free(t);
        return NULL;
      }
      memcpy(t + n, s + 1, (size_t)(e - s - 1));
      n += (size_t)(e - s - 1);
      s = e + 1;
    } else if (*s == '"') {
      s++;
      while (*s && *s != '"') {
        if (*s == '\\' && (s[1] == '"' || s[1] == '\\')) s++;
        t[n++] = *s++;
      }
      if (*s != '"') {
        *bad = "unterminated \" quote";
        free(t);
        return NULL;
      }
      s++;
    } else {
      t[n++] = *s++;
    }
  }
  t[n] = 0;
  *p = s;
  return t;
}

/* Is tok a KEY=VALUE option (a lower-case word before '=')? */
static int is_option(const char *tok) {
  const char *q = tok;
  while (*q >= 'a' && *q <= 'z') q++;
  return q > tok && *q == '=';
}

static int parse_ll(const char *s, long long lo, long long hi, long long *out) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || !*s || *end || v < lo || v > hi) return -1;
  *out = v;
  return 0;
}

/* Quote s for the canonical command (the manifest's own "..." syntax)
   when it needs it. */
static void put_word(char **buf, size_t *len, size_t *cap, const char *s) {
  int quote = !*s || strpbrk(s, " \t\r'\"#\\") != NULL;
  size_t need = *len + 2 * strlen(s) + 4;
  if (need > *cap) {
    size_t nc = need * 2;
    char *nb = realloc(*buf, nc);
    if (!nb) return;
    *buf = nb;
    *cap = nc;
  }
  char *o = *buf + *len;
  if (*len) *o++ = ' ';
  if (quote) *o++ = '"';
  for (; *s; s++) {
    if (quote && (*s == '"' || *s == '\\')) *o++ = '\\';
    *o++ = *s;
  }
  if (quote) *o++ = '"';
  *o = 0;
  *len = (size_t)(o - *buf);
}

/* FNV-1a 64 of the file's bytes and its size: the entry's build. */
static int hash_file(const char *path, char *out, size_t cap, char *err, size_t ecap) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    snprintf(err, ecap, "%s", strerror(errno));
    return -1;
  }
  uint64_t h = 1469598103934665603ULL, size = 0;
  unsigned char buf[1 << 16];
  ssize_t r;
  while ((r = read(fd, buf, sizeof buf)) > 0) {
    for (ssize_t i = 0; i < r; i++) h = (h ^ buf[i]) * 1099511628211ULL;
    size += (uint64_t)r;
  }
  int e = errno;
  close(fd);
  if (r < 0) {
    snprintf(err, ecap, "%s", strerror(e));
    return -1;
  }
  snprintf(out, cap, "fnv1a64:%016" PRIx64 ":%" PRIu64, h, size);
  return 0;
}

typedef struct suite_opts {
  int profile;             /* kcast suite profile */
  const char *bindir;      /* --bindir or NULL */
  long long timeout;       /* --timeout, 0 = none */
  long long repeat;        /* --repeat (profile) */
  int power;               /* --power (profile) */
  const char *gpu;         /* --gpu (profile) */
} suite_opts;

/* Fill e's key, path and canonical command; 0 or -1 after the error. */
static int entry_finish(const suite *s, entry *e, const char *mdir, const suite_opts *o) {
  char *app = NULL;
  if (!e->app) {
    const char *slash = strrchr(e->prog, '/');
    app = strdup(slash ? slash + 1 : e->prog);
    e->app = app;
  }
  if (!e->dataset) {
    size_t n = 1;
    for (int k = 0; k < e->nargs; k++) n += strlen(e->args[k]) + 1;
    e->dataset = malloc(n);
    if (e->dataset) {
      e->dataset[0] = 0;
      for (int k = 0; k < e->nargs; k++) {
        if (k) strcat(e->dataset, " ");
        strcat(e->dataset, e->args[k]);
      }
    }
  }
  const char *base = strchr(e->prog, '/') ? (e->prog[0] == '/' ? NULL : mdir)
                                          : (o->bindir ? o->bindir : mdir);
  if (base) {
    if (asprintf(&e->path, "%s/%s", base, e->prog) < 0) e->path = NULL;
  } else {
    e->path = strdup(e->prog);
  }
  if (!e->app || !e->dataset || !e->path) {
    cli_error("out of memory");
    return -1;
  }
  if (!*e->app) {
    cli_error("%s:%d: empty app name", s->manifest, e->line);
    return -1;
  }
  if (e->cwd_given) {
    /* the entry runs there: its folder must exist now, and the program is
       named by its absolute path (it is found before the chdir) */
    char *rel = NULL, abs[PATH_MAX];
    if (e->cwd_given[0] != '/' && asprintf(&rel, "%s/%s", mdir, e->cwd_given) < 0) rel = NULL;
    const char *want = e->cwd_given[0] == '/' ? e->cwd_given : rel;
    struct stat sb;
    const char *why = !want ? "out of memory" : NULL;
    if (!why && !realpath(want, abs)) why = strerror(errno);
    if (!why && (stat(abs, &sb) < 0 || !S_ISDIR(sb.st_mode))) why = "not a folder";
    if (why) {
      cli_error("%s:%d: cwd=%s: %s", s->manifest, e->line, e->cwd_given, why);
      free(rel);
      return -1;
    }
    free(rel);
    if (!(e->cwd = strdup(abs))) {
      cli_error("out of memory");
      return -1;
    }
    char pabs[PATH_MAX];
    if (realpath(e->path, pabs)) {
      free(e->path);
      if (!(e->path = strdup(pabs))) {
        cli_error("out of memory");
        return -1;
      }
    }
  }
  /* What shapes the results: options first, in a fixed order, then the
     program as written and its arguments. */
  size_t len = 0, cap = 0;
  char *c = NULL, num[64];
  if (e->cwd_given) {
    char *w = NULL;
    if (asprintf(&w, "cwd=%s", e->cwd_given) < 0) w = NULL;
    if (w) put_word(&c, &len, &cap, w);
    free(w);
  }
  if (e->sample && !o->profile) {
    snprintf(num, sizeof num, "sample=%lld", e->sample);
    put_word(&c, &len, &cap, num);
  }
  if (e->oob_error && !o->profile) put_word(&c, &len, &cap, "oob=error");
  if (o->profile) {
    snprintf(num, sizeof num, "repeat=%lld", e->repeat ? e->repeat : o->repeat);
    put_word(&c, &len, &cap, num);
    if (o->power) put_word(&c, &len, &cap, "power=1");
  }
  put_word(&c, &len, &cap, e->prog);
  for (int k = 0; k < e->nargs; k++) put_word(&c, &len, &cap, e->args[k]);
  if (!c) {
    cli_error("out of memory");
    return -1;
  }
  e->command = c;
  return 0;
}

/* Parse one non-empty line into e; 1 = an entry, 0 = blank, -1 = error. */
static int parse_line(const suite *s, const char *line, int lineno, entry *e) {
  memset(e, 0, sizeof *e);
  e->line = lineno;
  e->cost_hint = -1;
  const char *p = line, *bad = NULL;
  int col;
  char *tok;
  size_t acap = 0;
  while ((tok = next_token(&p, &col, line, &bad))) {
    if (!e->prog && is_option(tok)) {
      char *v = strchr(tok, '=') + 1;
      size_t kl = (size_t)(v - 1 - tok);
      long long *num = NULL, lo = 1, hi = LLONG_MAX;
      char **str = NULL;
      if (kl == 6 && !strncmp(tok, "sample", kl)) num = &e->sample;
      else if (kl == 7 && !strncmp(tok, "threads", kl)) num = &e->threads, hi = 4096;
      else if (kl == 7 && !strncmp(tok, "timeout", kl)) num = &e->timeout, hi = 86400 * 365;
      else if (kl == 6 && !strncmp(tok, "repeat", kl)) num = &e->repeat, hi = 10000;
      else if (kl == 3 && !strncmp(tok, "app", kl)) str = &e->app;
      else if (kl == 7 && !strncmp(tok, "dataset", kl)) str = &e->dataset;
      else if (kl == 5 && !strncmp(tok, "bench", kl)) str = &e->bench;
      else if (kl == 3 && !strncmp(tok, "cwd", kl)) str = &e->cwd_given;
      else if (kl == 3 && !strncmp(tok, "mem", kl)) num = &e->mem, hi = 1LL << 30;
      if (num) {
        if (parse_ll(v, lo, hi, num) < 0) {
          cli_error("%s:%d:%d: %.*s= needs a whole number in %lld..%lld, not '%s'", s->manifest,
                    lineno, col, (int)kl, tok, lo, hi, v);
          goto fail;
        }
      } else if (str) {
        if (*str) {
          cli_error("%s:%d:%d: %.*s= given twice", s->manifest, lineno, col, (int)kl, tok);
          goto fail;
        }
        if (!*v) {
          cli_error("%s:%d:%d: %.*s= needs a value", s->manifest, lineno, col, (int)kl, tok);
          goto fail;
        }
        if (!(*str = strdup(v))) goto nomem;
      } else if (kl == 3 && !strncmp(tok, "oob", kl)) {
        if (strcmp(v, "warn") && strcmp(v, "error")) {
          cli_error("%s:%d:%d: oob= takes warn or error, not '%s'", s->manifest, lineno, col, v);
          goto fail;
        }
        e->oob_error = !strcmp(v, "error");
      } else if (kl == 4 && !strncmp(tok, "cost", kl)) {
        char *end;
        errno = 0;
        double d = strtod(v, &end);
        if (errno || end == v || *end || !(d >= 0) || !isfinite(d)) {
          cli_error("%s:%d:%d: cost= needs seconds (a number >= 0), not '%s'", s->manifest,
                    lineno, col, v);
          goto fail;
        }
        e->cost_hint = d;
      } else {
        cli_error("%s:%d:%d: unknown option '%.*s' (app, dataset, bench, sample, threads, "
                  "timeout, oob, repeat, cost, mem, cwd)", s->manifest, lineno, col, (int)kl, tok);
        goto fail;
      }
      free(tok);
      continue;
    }
    if (!e->prog) {
      if (!*tok) {
        cli_error("%s:%d:%d: empty program name", s->manifest, lineno, col);
        goto fail;
      }
      e->prog = tok;
      continue;
    }
    if ((size_t)e->nargs + 1 >= acap) {
      size_t nc = acap ? acap * 2 : 8;
      char **na = realloc(e->args, nc * sizeof *na);
      if (!na) goto nomem;
      e->args = na;
      acap = nc;
    }
    e->args[e->nargs++] = tok;
  }
  if (bad) {
    cli_error("%s:%d:%d: %s", s->manifest, lineno, col, bad);
    return -1;
  }
  if (!e->prog) {
    if (e->app || e->dataset || e->bench || e->sample || e->threads || e->timeout ||
        e->repeat || e->oob_error || e->cost_hint >= 0 || e->mem || e->cwd_given) {
      cli_error("%s:%d:%d: options but no program", s->manifest, lineno, col);
      return -1;
    }
    return 0;
  }
  return 1;
nomem:
  cli_error("out of memory");
fail:
  free(tok);
  return -1;
}

/* Read and check the whole manifest; 0, or -1 after the error.  An entry
   left half-made is freed by suite_free. */
static int suite_load(suite *s, const char *path, const suite_opts *o) {
  memset(s, 0, sizeof *s);
  s->manifest = path;
  FILE *f = fopen(path, "r");
  if (!f) {
    cli_error("%s: %s", path, strerror(errno));
    return -1;
  }
  char *copy = strdup(path);
  char mdir[PATH_MAX];
  snprintf(mdir, sizeof mdir, "%s", copy ? dirname(copy) : ".");
  free(copy);
  char *line = NULL;
  size_t lcap = 0, cap = 0;
  ssize_t len;
  int lineno = 0, rc = 0;
  while ((len = getline(&line, &lcap, f)) >= 0) {
    lineno++;
    if ((size_t)len != strlen(line)) {
      cli_error("%s:%d: a NUL byte in the line", path, lineno);
      rc = -1;
      break;
    }
    if (len && line[len - 1] == '\n') line[--len] = 0;
    if (s->n == cap) {
      size_t nc = cap ? cap * 2 : 64;
      entry *ne = realloc(s->e, nc * sizeof *ne);
      if (!ne) {
        cli_error("out of memory");
        rc = -1;
        break;
      }
      s->e = ne;
      cap = nc;
    }
    int r = parse_line(s, line, lineno, &s->e[s->n]);
    if (r != 0) s->n++; /* also a failed one: suite_free frees what it holds */
    if (r < 0 || (r > 0 && entry_finish(s, &s->e[s->n - 1], mdir, o) < 0)) {
      rc = -1;
      break;
    }
  }
  if (!rc && ferror(f)) {
    cli_error("%s: %s", path, strerror(errno));
    rc = -1;
  }
  free(line);
  fclose(f);
  if (rc) return -1;
  if (!s->n) {
    cli_error("%s: no entry (each line is [KEY=VALUE...] PROGRAM [ARG...])", path);
    return -1;
  }
  /* One entry per launch key: two would write the same launches. */
  for (size_t i = 0; i < s->n; i++)
    for (size_t j = 0; j < i; j++)
      if (!strcmp(s->e[i].app, s->e[j].app) && !strcmp(s->e[i].dataset, s->e[j].dataset)) {
        cli_error("%s:%d: same app '%s' and dataset '%s' as line %d (set app= or dataset= "
                  "to tell them apart)", path, s->e[i].line, s->e[i].app, s->e[i].dataset,
                  s->e[j].line);
        return -1;
      }
  /* Every program exists: checked before anything runs.  Each distinct
     file is hashed once. */
  for (size_t i = 0; i < s->n; i++) {
    entry *e = &s->e[i];
    size_t j = 0;
    while (j < i && strcmp(s->e[j].path, e->path)) j++;
    if (j < i) {
      memcpy(e->build, s->e[j].build, sizeof e->build);
      continue;
    }
    char err[256];
    struct stat sb;
    if (stat(e->path, &sb) == 0 && !S_ISREG(sb.st_mode)) snprintf(err, sizeof err, "not a file");
    else if (hash_file(e->path, e->build, sizeof e->build, err, sizeof err) == 0) continue;
    cli_error("%s:%d: program %s: %s (build it, or give --bindir)", path, e->line, e->path, err);
    return -1;
  }
  return 0;
}

/* --------------------------------------------------------- planning -- */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static const suite *sort_suite; /* for cmp_cost (qsort has no context) */
static int cmp_cost(const void *a, const void *b) {
  const entry *x = &sort_suite->e[*(const size_t *)a], *y = &sort_suite->e[*(const size_t *)b];
  if (x->cost != y->cost) return x->cost > y->cost ? -1 : 1;
  return x->line - y->line;
}

/* Expected costs, then the shards (every entry's e->shard); order[] gets
   the entries by descending cost.  -1 after the error. */
static int plan(suite *s, const char *costs, int kind_profile, int nshards, size_t *order) {
  ds_db *db = NULL;
  char err[1100];
  if (costs && ds_open(costs, DS_READONLY, &db, err, sizeof err) < 0) {
    cli_error("--costs: %s", err);
    return -1;
  }
  double *known = calloc(s->n + 1, sizeof *known);
  size_t nk = 0;
  if (!known) {
    ds_close(db);
    cli_error("out of memory");
    return -1;
  }
  for (size_t i = 0; i < s->n; i++) {
    entry *e = &s->e[i];
    e->cost_src = COST_GUESSED;
    ds_suite_entry r;
    int f = db ? ds_suite_find(db, kind_profile ? "profile" : "run", e->app, e->dataset, NULL, &r)
               : 0;
    if (f < 0) {
      cli_error("--costs: %s", ds_errmsg(db));
      free(known);
      ds_close(db);
      return -1;
    }
    if (f) e->cost = r.seconds, e->cost_src = COST_RECORDED;
    else if (e->cost_hint >= 0) e->cost = e->cost_hint, e->cost_src = COST_GIVEN;
    if (e->cost_src != COST_GUESSED) known[nk++] = e->cost;
  }
  ds_close(db);
  double guess = 1.0;
  if (nk) {
    qsort(known, nk, sizeof *known, cmp_double);
    guess = nk % 2 ? known[nk / 2] : 0.5 * (known[nk / 2 - 1] + known[nk / 2]);
  }
  free(known);
  for (size_t i = 0; i < s->n; i++) {
    if (s->e[i].cost_src == COST_GUESSED) s->e[i].cost = guess;
    order[i] = i;
  }
  sort_suite = s;
  qsort(order, s->n, sizeof *order, cmp_cost);
  double *load = calloc((size_t)nshards, sizeof *load);
  if (!load) {
    cli_error("out of memory");
    return -1;
  }
  for (size_t k = 0; k < s->n; k++) {
    int best = 0;
    for (int j = 1; j < nshards; j++)
      if (load[j] < load[best]) best = j;
    s->e[order[k]].shard = best;
    load[best] += s->e[order[k]].cost;
  }
  free(load);
  return 0;
}

/* --shard I/N, or the Slurm array task; *n = 1 when neither. */
static int shard_of(const char *arg, int *i, int *n) {
  if (arg) {
    long long a, b;
    const char *slash = strchr(arg, '/');
    char first[32];
    if (!slash || (size_t)(slash - arg) >= sizeof first) return -1;
    memcpy(first, arg, (size_t)(slash - arg));
    first[slash - arg] = 0;
    if (parse_ll(first, 0, 1000000, &a) || parse_ll(slash + 1, 1, 1000000, &b) || a >= b)
      return -1;
    *i = (int)a;
    *n = (int)b;
    return 0;
  }
  const char *id = getenv("SLURM_ARRAY_TASK_ID"), *cnt = getenv("SLURM_ARRAY_TASK_COUNT");
  *i = 0;
  *n = 1;
  if (!id || !cnt) return 0;
  const char *mn = getenv("SLURM_ARRAY_TASK_MIN"), *st = getenv("SLURM_ARRAY_TASK_STEP");
  long long vid, vcnt, vmin = 0, vstep = 1;
  if (parse_ll(id, 0, LLONG_MAX, &vid) || parse_ll(cnt, 1, 1000000, &vcnt) ||
      (mn && parse_ll(mn, 0, LLONG_MAX, &vmin)) || (st && parse_ll(st, 1, LLONG_MAX, &vstep)) ||
      vid < vmin || (vid - vmin) % vstep || (vid - vmin) / vstep >= vcnt)
    return -2;
  *i = (int)((vid - vmin) / vstep);
  *n = (int)vcnt;
  return 0;
}

/* Expand %a %j %h %p %% of pattern into out; -1 after the error. */
static int expand_name(const char *what, const char *pat, int shard, char *out, size_t cap) {
  size_t n = 0;
  for (const char *p = pat; *p; p++) {
    char val[320];
    if (*p != '%') {
      val[0] = *p;
      val[1] = 0;
    } else {
      p++;
      const char *env;
      switch (*p) {
        case '%': snprintf(val, sizeof val, "%%"); break;
        case 'p': snprintf(val, sizeof val, "%ld", (long)getpid()); break;
        case 'h':
          if (gethostname(val, sizeof val - 1) < 0) snprintf(val, sizeof val, "localhost");
          val[sizeof val - 1] = 0;
          break;
        case 'a':
          env = getenv("SLURM_ARRAY_TASK_ID");
          if (env && *env) snprintf(val, sizeof val, "%.300s", env);
          else snprintf(val, sizeof val, "%d", shard);
          break;
        case 'j':
          env = getenv("SLURM_ARRAY_JOB_ID");
          if (!env || !*env) env = getenv("SLURM_JOB_ID");
          if (!env || !*env) {
            cli_error("%s '%s': %%j needs a Slurm job (SLURM_JOB_ID is not set)", what, pat);
            return -1;
          }
          snprintf(val, sizeof val, "%.300s", env);
          break;
        default:
          cli_error("%s '%s': unknown %%%s (%%a, %%j, %%h, %%p, %%%%)", what, pat,
                    *p ? (char[]){*p, 0} : "at the end");
          return -1;
      }
      if (strchr(val, '/')) {
        cli_error("%s '%s': %%%c expands to '%s', which holds a '/'", what, pat, *p, val);
        return -1;
      }
    }
    size_t l = strlen(val);
    if (n + l + 1 > cap) {
      cli_error("%s '%s': the expanded name is too long", what, pat);
      return -1;
    }
    memcpy(out + n, val, l + 1);
    n += l;
  }
  if (!n) {
    cli_error("%s: empty file name", what);
    return -1;
  }
  return 0;
}

/* ------------------------------------------------------------ running -- */

static volatile sig_atomic_t got_signal;
static void on_signal(int sig) { got_signal = sig; }

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

typedef struct runner {
  const suite_opts *o;
  const char *self;        /* this kcast binary */
  const char *manifest;    /* for the log */
  const char *out;         /* the output dataset */
  const char *dir;         /* scratch folder */
  const char *gpu;         /* profile: the GPU key */
  long long threads;       /* run: --threads for each child, 0 = default */
  FILE *log;
} runner;

/* Start entry e: a child kcast run/profile with its own dataset and output
   file in the scratch folder.  0, or -1 with e failed. */
static int start_entry(runner *r, entry *e) {
  snprintf(e->tmpdb, sizeof e->tmpdb, "%s/line%d.db", r->dir, e->line);
  snprintf(e->tmplog, sizeof e->tmplog, "%s/line%d.log", r->dir, e->line);
  char *av[40 + e->nargs];
  char num[3][32];
  int n = 0;
  av[n++] = "kcast";
  av[n++] = r->o->profile ? "profile" : "run";
  av[n++] = "-o", av[n++] = e->tmpdb;
  av[n++] = "--app", av[n++] = e->app;
  av[n++] = "--dataset", av[n++] = e->dataset;
  if (e->bench) av[n++] = "--bench", av[n++] = e->bench;
  long long timeout = e->timeout ? e->timeout : r->o->timeout;
  if (r->o->profile) {
    if (r->gpu) av[n++] = "--gpu", av[n++] = (char *)r->gpu;
    if (r->o->power) av[n++] = "--power";
    snprintf(num[0], sizeof num[0], "%lld", e->repeat ? e->repeat : r->o->repeat);
    av[n++] = "--repeat", av[n++] = num[0];
  } else {
    if (e->sample) {
      snprintf(num[0], sizeof num[0], "%lld", e->sample);
      av[n++] = "--sample", av[n++] = num[0];
    }
    long long th = e->threads ? e->threads : r->threads;
    if (th) {
      snprintf(num[1], sizeof num[1], "%lld", th);
      av[n++] = "--threads", av[n++] = num[1];
    }
    if (timeout) {
      snprintf(num[2], sizeof num[2], "%lld", timeout);
      av[n++] = "--timeout", av[n++] = num[2];
    }
    if (e->oob_error) av[n++] = "--oob", av[n++] = "error";
  }
  av[n++] = "--";
  av[n++] = e->path;
  for (int k = 0; k < e->nargs; k++) av[n++] = e->args[k];
  av[n] = NULL;
  int lfd = open(e->tmplog, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (lfd < 0) {
    snprintf(e->reason, sizeof e->reason, "cannot create %.400s: %s", e->tmplog, strerror(errno));
    e->state = ST_FAIL;
    return -1;
  }
  fflush(stdout);
  fflush(stderr);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    snprintf(e->reason, sizeof e->reason, "cannot fork: %s", strerror(errno));
    close(lfd);
    e->state = ST_FAIL;
    return -1;
  }
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(127);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    int nul = open("/dev/null", O_RDONLY);
    if (nul >= 0) dup2(nul, STDIN_FILENO);
    dup2(lfd, STDOUT_FILENO);
    dup2(lfd, STDERR_FILENO);
    if (e->cwd && chdir(e->cwd) < 0) {
      fprintf(stderr, "kcast: cwd=%s: %s\n", e->cwd, strerror(errno));
      _exit(127);
    }
    execv(r->self, av);
    fprintf(stderr, "kcast: cannot run %s: %s\n", r->self, strerror(errno));
    _exit(127);
  }
  setpgid(pid, pid);
  close(lfd);
  e->pid = pid;
  e->t0 = now_s();
  e->state = ST_RUNNING;
  return 0;
}

/* The last line of the entry's output that kcast wrote ("kcast: ..."), or
   its last line, into buf. */
static void last_message(const char *log, char *buf, size_t cap) {
  buf[0] = 0;
  FILE *f = fopen(log, "r");
  if (!f) return;
  char line[1024], last[1024] = "";
  while (fgets(line, sizeof line, f)) {
    size_t l = strlen(line);
    while (l && (line[l - 1] == '\n' || line[l - 1] == '\r')) line[--l] = 0;
    if (!l) continue;
    if (!strncmp(line, "kcast: ", 7)) snprintf(buf, cap, "%.500s", line + 7);
    snprintf(last, sizeof last, "%s", line);
  }
  fclose(f);
  if (!buf[0]) snprintf(buf, cap, "%.500s", last);
}

/* Append the entry's output to the log, as one block. */
static void append_log(runner *r, const entry *e, int status) {
  if (!r->log) return;
  fprintf(r->log, "== %s:%d: %s (%s, exit %d, %.1f s)\n", r->manifest, e->line, e->command,
          r->o->profile ? "kcast profile" : "kcast run", status, e->secs);
  FILE *f = fopen(e->tmplog, "r");
  if (f) {
    char buf[8192];
    size_t k;
    while ((k = fread(buf, 1, sizeof buf, f)) > 0) fwrite(buf, 1, k, r->log);
    fclose(f);
  }
  fflush(r->log);
}

static void remove_db(const char *path) {
  char j[PATH_MAX + 16];
  unlink(path);
  snprintf(j, sizeof j, "%s-journal", path);
  unlink(j);
}

/* A finished child: decide, merge, record. */
static void finish_entry(runner *r, entry *e, int st, int timed_out) {
  e->secs = now_s() - e->t0;
  e->pid = 0;
  int status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
  append_log(r, e, status);
  char msg[512];
  last_message(e->tmplog, msg, sizeof msg);
  unlink(e->tmplog);
  /* What the child's own dataset holds. */
  ds_db *db = NULL;
  ds_stats stt;
  memset(&stt, 0, sizeof stt);
  char err[1100];
  e->launches = 0;
  int have = access(e->tmpdb, F_OK) == 0 && ds_open(e->tmpdb, DS_READONLY, &db, err, sizeof err) == 0 &&
             ds_get_stats(db, &stt) == 0;
  ds_close(db);
  char gpu[256] = "";
  if (have) {
    e->launches = r->o->profile && stt.nmeas ? stt.meas[0].launches : stt.launches;
    if (stt.nmeas) snprintf(gpu, sizeof gpu, "%s", stt.meas[0].gpu);
  }
  int nmeas = (int)stt.nmeas;
  ds_stats_free(&stt);
  long long timeout = e->timeout ? e->timeout : r->o->timeout;
  e->state = ST_FAIL;
  if (timed_out || (!r->o->profile && status == 137 && timeout))
    snprintf(e->reason, sizeof e->reason, "timed out after %lld s (nothing of it kept)", timeout);
  else if (WIFSIGNALED(st))
    snprintf(e->reason, sizeof e->reason, "kcast %s killed by signal %d (%s)",
             r->o->profile ? "profile" : "run", WTERMSIG(st), strsignal(WTERMSIG(st)));
  else if (!have || e->launches == 0)
    snprintf(e->reason, sizeof e->reason, "exit status %d, no launch recorded%s%s", status,
             msg[0] ? ": " : "", msg);
  else if (r->o->profile && nmeas > 1)
    snprintf(e->reason, sizeof e->reason, "measurements of more than one GPU");
  else if (status != 0 && !(e->sample && !r->o->profile && status != KCAST_EXIT_LAUNCH))
    snprintf(e->reason, sizeof e->reason, "exit status %d%s%s", status, msg[0] ? ": " : "", msg);
  else {
    e->state = ST_PASS;
    if (status) /* sampled: the program checked results it could not have */
      snprintf(e->reason, sizeof e->reason, "sampled, %lld CTAs per launch; the program's own "
               "check does not apply (exit %d)", e->sample, status);
    else if (e->sample)
      snprintf(e->reason, sizeof e->reason, "sampled, %lld CTAs per launch", e->sample);
  }
  if (e->state == ST_PASS) {
    /* Into the output: the entry's results replace what it held of the
       entry's key (a rebuilt program's features), then the entry. */
    ds_db *out = NULL;
    if (ds_open(r->out, DS_CREATE, &out, err, sizeof err) < 0) {
      snprintf(e->reason, sizeof e->reason, "%.590s", err);
      e->state = ST_FAIL;
    } else {
      ds_set_busy_timeout(out, 600 * 1000);
      ds_suite_entry se = {r->o->profile ? "profile" : "run", e->app, e->dataset,
                           r->o->profile ? gpu : "", e->build, e->command, e->secs,
                           e->launches};
      /* run: the entry's launches are its whole run (a rebuilt program
         with fewer launches leaves none of the old ones behind); profile
         measures what ran and leaves the rest to the features' owner */
      unsigned mf = DS_MERGE_REPLACE | (r->o->profile ? 0 : DS_MERGE_WHOLE_RUNS);
      if (ds_merge(out, e->tmpdb, mf) < 0 || ds_suite_record(out, &se) < 0) {
        snprintf(e->reason, sizeof e->reason, "%.590s", ds_errmsg(out));
        e->state = ST_FAIL;
      }
      ds_close(out);
    }
  }
  remove_db(e->tmpdb);
}

static const char *entry_label(const entry *e, char *buf, size_t cap) {
  snprintf(buf, cap, "%s%s%s", e->app, *e->dataset ? " " : "", e->dataset);
  return buf;
}

/* Kill and reap every running child (interrupted). */
static void stop_all(suite *s, int sig) {
  for (size_t i = 0; i < s->n; i++)
    if (s->e[i].state == ST_RUNNING && s->e[i].pid > 0) kill(-s->e[i].pid, sig);
  double t0 = now_s();
  for (;;) {
    int left = 0;
    for (size_t i = 0; i < s->n; i++) {
      entry *e = &s->e[i];
      if (e->state != ST_RUNNING || e->pid <= 0) continue;
      int st;
      pid_t w = waitpid(e->pid, &st, WNOHANG);
      if (w == e->pid || (w < 0 && errno == ECHILD)) {
        e->state = ST_FAIL;
        snprintf(e->reason, sizeof e->reason, "interrupted");
        unlink(e->tmplog);
        remove_db(e->tmpdb);
      } else {
        left++;
      }
    }
    if (!left) break;
    if (now_s() - t0 > 10) { /* they had their chance to clean up */
      for (size_t i = 0; i < s->n; i++)
        if (s->e[i].state == ST_RUNNING && s->e[i].pid > 0) kill(-s->e[i].pid, SIGKILL);
      t0 = now_s() + 1e9;
    }
    struct timespec nap = {0, 20 * 1000 * 1000};
    nanosleep(&nap, NULL);
  }
}

/* Cores this process may use. */
static int cores(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    int c = CPU_COUNT(&set);
    if (c > 0) return c;
  }
  long c = sysconf(_SC_NPROCESSORS_ONLN);
  return c > 0 ? (int)c : 1;
}

/* ------------------------------------------------------------ command -- */

int cmd_suite(int argc, char **argv) {
  if (argc < 2)
    return cli_usage_error("suite", "missing subcommand (run, profile)");
  suite_opts o;
  memset(&o, 0, sizeof o);
  o.repeat = 1;
  if (!strcmp(argv[1], "profile")) o.profile = 1;
  else if (strcmp(argv[1], "run"))
    return cli_usage_error("suite", "unknown subcommand '%s' (run, profile)", argv[1]);
  const char *sub = argv[1];
  const char *out_pat = "kcast.db", *log_pat = NULL, *shard_arg = NULL, *costs = NULL;
  long long jobs = 1;
  int force = 0, dry = 0;
  enum { O_SHARD = CLI_OPT_OWN, O_COSTS, O_BINDIR, O_TIMEOUT, O_LOG, O_FORCE, O_GPU, O_POWER,
         O_REPEAT };
  static const struct option longopts[] = {
    {"output", required_argument, NULL, 'o'},   {"jobs", required_argument, NULL, 'j'},
    {"shard", required_argument, NULL, O_SHARD}, {"costs", required_argument, NULL, O_COSTS},
    {"bindir", required_argument, NULL, O_BINDIR},
    {"timeout", required_argument, NULL, O_TIMEOUT}, {"log", required_argument, NULL, O_LOG},
    {"force", no_argument, NULL, O_FORCE},       {"dry-run", no_argument, NULL, 'n'},
    {"gpu", required_argument, NULL, O_GPU},     {"power", no_argument, NULL, O_POWER},
    {"repeat", required_argument, NULL, O_REPEAT}, {NULL, 0, NULL, 0}};
  cli_opts g;
  /* argv[0] is the subcommand: options and the manifest follow it */
  cli_opts_init(&g, "suite", argc - 1, argv + 1, "o:j:n", 0);
  cli_opts_add(&g, longopts);
  for (int c; (c = cli_opts_next(&g)) != CLI_OPT_END;) {
    const char *v = g.arg;
    switch (c) {
      case CLI_OPT_ERR: return g.status;
      case 'o': out_pat = v; break;
      case 'j':
        if (parse_ll(v, 1, 1024, &jobs))
          return cli_usage_error("suite", "%s needs a whole number in 1..1024, not '%s'", g.name, v);
        break;
      case O_SHARD: shard_arg = v; break;
      case O_COSTS: costs = v; break;
      case O_BINDIR: o.bindir = v; break;
      case O_TIMEOUT:
        if (parse_ll(v, 1, 86400LL * 365, &o.timeout))
          return cli_usage_error("suite", "--timeout needs seconds (a whole number > 0), not '%s'", v);
        break;
      case O_LOG: log_pat = v; break;
      case O_FORCE: force = 1; break;
      case 'n': dry = 1; break;
      case O_GPU: o.gpu = v; break;
      case O_POWER: o.power = 1; break;
      case O_REPEAT:
        if (parse_ll(v, 1, 10000, &o.repeat))
          return cli_usage_error("suite", "--repeat needs a whole number in 1..10000, not '%s'", v);
        break;
      default: break;
    }
  }
  if (CLI_NOPERANDS(&g) < 1) return cli_usage_error("suite", "%s needs a MANIFEST", sub);
  if (CLI_NOPERANDS(&g) > 1)
    return cli_usage_error("suite", "one MANIFEST only ('%s' is extra)", CLI_OPERANDS(&g)[1]);
  const char *manifest = CLI_OPERANDS(&g)[0];
  if (!o.profile && (o.gpu || o.power || o.repeat != 1))
    return cli_usage_error("suite", "--gpu, --power and --repeat are options of suite profile");
  if (o.profile && jobs > 1)
    return cli_usage_error("suite", "profile runs one entry at a time (-j 1): entries sharing "
                           "a GPU would disturb each other's times");
  int si, sn;
  int sr = shard_of(shard_arg, &si, &sn);
  if (sr == -1)
    return cli_usage_error("suite", "--shard takes I/N with 0 <= I < N, not '%s'", shard_arg);
  if (sr == -2) {
    cli_error("cannot tell the shard from SLURM_ARRAY_TASK_ID=%s, SLURM_ARRAY_TASK_COUNT=%s "
              "(give --shard I/N)", getenv("SLURM_ARRAY_TASK_ID"),
              getenv("SLURM_ARRAY_TASK_COUNT"));
    return KCAST_EXIT_USER;
  }
  char out[PATH_MAX], logp[PATH_MAX + 8];
  if (expand_name("-o", out_pat, si, out, sizeof out) < 0) return KCAST_EXIT_USAGE;
  if (log_pat) {
    if (expand_name("--log", log_pat, si, logp, sizeof logp) < 0) return KCAST_EXIT_USAGE;
  } else {
    snprintf(logp, sizeof logp, "%s.log", out);
  }

  suite s;
  int rc = KCAST_EXIT_USER;
  size_t *order = NULL;
  runner r;
  memset(&r, 0, sizeof r);
  char dir[PATH_MAX] = "", gpu[256] = "";
  if (suite_load(&s, manifest, &o) < 0) goto out;
  if (!(order = calloc(s.n, sizeof *order))) {
    cli_error("out of memory");
    goto out;
  }
  if (plan(&s, costs, o.profile, sn, order) < 0) goto out;
  /* The GPU comes first for profile: without one nothing runs. */
  if (o.profile) {
    char why[512];
    if (o.gpu) snprintf(gpu, sizeof gpu, "%s", o.gpu);
    else if (cli_gpu_key(gpu, sizeof gpu, why, sizeof why) < 0) {
      cli_error("no GPU to profile on (%s)%s; nothing run", why,
                dry ? "; give --gpu NAME to plan for one" : "");
      goto out;
    }
  }
  /* What the output holds already. */
  ds_db *have = NULL;
  char err[1100];
  struct stat sb;
  if (stat(out, &sb) == 0) {
    if (ds_open(out, DS_READONLY, &have, err, sizeof err) < 0) {
      cli_error("%s (nothing run)", err);
      goto out;
    }
  } else if (errno != ENOENT) {
    cli_error("%s: %s (nothing run)", out, strerror(errno));
    goto out;
  }
  size_t mine = 0, todo = 0;
  double cost_mine = 0, cost_all = 0;
  for (size_t k = 0; k < s.n; k++) {
    entry *e = &s.e[order[k]];
    cost_all += e->cost;
    if (e->shard != si) {
      e->state = -1; /* another shard's */
      continue;
    }
    mine++;
    cost_mine += e->cost;
    ds_suite_entry f;
    int fr = have ? ds_suite_find(have, o.profile ? "profile" : "run", e->app, e->dataset,
                                  o.profile ? gpu : "", &f) : 0;
    if (fr < 0) {
      cli_error("%s", ds_errmsg(have));
      ds_close(have);
      goto out;
    }
    if (fr && !force && !strcmp(f.build, e->build) && !strcmp(f.command, e->command)) {
      e->state = ST_SKIP;
      e->launches = f.launches;
      e->secs = f.seconds;
    } else {
      e->state = ST_TODO;
      todo++;
    }
  }
  ds_close(have);
  if (dry) {
    static const char *const src[] = {"guessed", "given", "recorded"};
    /* memory: the most an entry said (mem=) times the entries at a time */
    long long mem = 0;
    for (size_t k = 0; k < s.n; k++)
      if (s.e[k].state >= 0 && s.e[k].mem > mem) mem = s.e[k].mem;
    printf("shard %d/%d of %s: %zu of %zu entries, expected %.1f s of %.1f s; %zu to run -> %s",
           si, sn, manifest, mine, s.n, cost_mine, cost_all, todo, out);
    if (mem) printf("; memory %lld MiB", mem * (o.profile ? 1 : jobs));
    putchar('\n');
    for (size_t k = 0; k < s.n; k++) {
      entry *e = &s.e[order[k]];
      if (e->state < 0) continue;
      char lb[512];
      printf("line %d  %-40s  %8.2f s %-8s  %s\n", e->line, entry_label(e, lb, sizeof lb),
             e->cost, src[e->cost_src], e->state == ST_SKIP ? "skip (same build)" : "run");
    }
    rc = KCAST_EXIT_OK;
    goto out;
  }
  /* The output must take files: checked before anything runs. */
  {
    char *copy = strdup(out);
    char odir[PATH_MAX];
    snprintf(odir, sizeof odir, "%s", copy ? dirname(copy) : ".");
    free(copy);
    if (snprintf(dir, sizeof dir, "%s/.kcast-suite-XXXXXX", odir) >= (int)sizeof dir ||
        !mkdtemp(dir)) {
      cli_error("%s: cannot create a scratch folder in %s: %s (nothing run)", out, odir,
                strerror(errno));
      dir[0] = 0;
      goto out;
    }
    /* absolute: an entry with cwd= runs elsewhere and writes there */
    char adir[PATH_MAX];
    if (realpath(dir, adir)) snprintf(dir, sizeof dir, "%s", adir);
  }
  char self[PATH_MAX];
  ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
  if (sl <= 0) {
    cli_error("cannot find the kcast binary (/proc/self/exe): %s", strerror(errno));
    goto out;
  }
  self[sl] = 0;
  r.o = &o;
  r.self = self;
  r.manifest = manifest;
  r.out = out;
  r.dir = dir;
  r.gpu = o.profile ? gpu : NULL;
  if (jobs > 1) r.threads = cores() / jobs > 1 ? cores() / jobs : 1;
  if (todo && !(r.log = fopen(logp, "a"))) {
    cli_error("%s: %s (nothing run)", logp, strerror(errno));
    goto out;
  }

  struct sigaction sa, old[3];
  static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  got_signal = 0;
  for (int k = 0; k < 3; k++) sigaction(sigs[k], &sa, &old[k]);
  /* the first progress line after a second, then every CLI_PROGRESS_LOG_S */
  double t0 = now_s(), last_progress = t0 + 1.0 - CLI_PROGRESS_LOG_S;
  int progress_lines = cli_progress_style() == CLI_PROGRESS_LINES;
  size_t next = 0, running = 0, done = 0, passed = 0, failed = 0, skipped = 0;
  for (size_t k = 0; k < s.n; k++) {
    entry *e = &s.e[order[k]];
    if (e->state != ST_SKIP) continue;
    char lb[512];
    done++;
    skipped++;
    printf("[%zu/%zu] %-40s skipped (in %s from the same build, %" PRId64 " launch%s)\n",
           done, mine, entry_label(e, lb, sizeof lb), out, e->launches,
           e->launches == 1 ? "" : "es");
  }
  fflush(stdout);
  while (!got_signal) {
    while (running < (size_t)jobs && next < s.n) {
      entry *e = &s.e[order[next++]];
      if (e->state != ST_TODO) continue;
      if (start_entry(&r, e) == 0) {
        running++;
        continue;
      }
      char lb[512];
      done++;
      failed++;
      printf("[%zu/%zu] %-40s FAILED: %s\n", done, mine, entry_label(e, lb, sizeof lb), e->reason);
      fflush(stdout);
    }
    if (!running) break;
    int st;
    pid_t w = waitpid(-1, &st, WNOHANG);
    if (w < 0 && errno != EINTR && errno != ECHILD) break;
    double t = now_s();
    for (size_t k = 0; k < s.n; k++) {
      entry *e = &s.e[k];
      if (e->state != ST_RUNNING) continue;
      long long timeout = e->timeout ? e->timeout : o.timeout;
      int timed_out = 0;
      if (w == e->pid) {
        finish_entry(&r, e, st, 0);
      } else if (timeout && t - e->t0 > (double)timeout + (o.profile ? 0 : 60)) {
        /* profile has no --timeout of its own; run's gets a grace */
        kill(-e->pid, SIGKILL);
        while (waitpid(e->pid, &st, 0) < 0 && errno == EINTR) {}
        timed_out = 1;
        finish_entry(&r, e, st, timed_out);
      } else {
        continue;
      }
      running--;
      done++;
      char lb[512];
      if (e->state == ST_PASS) {
        passed++;
        printf("[%zu/%zu] %-40s passed, %" PRId64 " launch%s, %.1f s%s%s\n", done, mine,
               entry_label(e, lb, sizeof lb), e->launches, e->launches == 1 ? "" : "es",
               e->secs, e->reason[0] ? "; " : "", e->reason);
      } else {
        failed++;
        printf("[%zu/%zu] %-40s FAILED after %.1f s: %s\n", done, mine,
               entry_label(e, lb, sizeof lb), e->secs, e->reason);
      }
      fflush(stdout);
    }
    /* --progress in a log: what runs (the per-entry lines come only when
       an entry ends) */
    if (progress_lines && running && t - last_progress >= CLI_PROGRESS_LOG_S) {
      last_progress = t;
      fprintf(stderr, "kcast suite %s: %zu/%zu done, running:", sub, done, mine);
      for (size_t k = 0; k < s.n; k++) {
        char lb[512];
        if (s.e[k].state == ST_RUNNING)
          fprintf(stderr, " %s (%.0f s)", entry_label(&s.e[k], lb, sizeof lb), t - s.e[k].t0);
      }
      fputc('\n', stderr);
      fflush(stderr);
    }
    if (w <= 0) {
      struct timespec nap = {0, 20 * 1000 * 1000};
      nanosleep(&nap, NULL);
    }
  }
  int sig = got_signal;
  if (sig) stop_all(&s, sig);
  for (int k = 0; k < 3; k++) sigaction(sigs[k], &old[k], NULL);
  double wall = now_s() - t0;
  printf("kcast suite %s: %zu entries", sub, mine);
  if (sn > 1) printf(" (shard %d/%d of %zu)", si, sn, s.n);
  printf(": %zu passed, %zu failed, %zu skipped", passed, failed, skipped);
  if (sig) printf(", %zu not run (interrupted by %s)", mine - done, strsignal(sig));
  printf("; %.1f s -> %s\n", wall, out);
  for (size_t k = 0; k < s.n; k++) {
    const entry *e = &s.e[k];
    char lb[512];
    if (e->state == ST_FAIL && strcmp(e->reason, "interrupted"))
      printf("  failed: %s:%d %s: %s\n", manifest, e->line, entry_label(e, lb, sizeof lb),
             e->reason);
  }
  fflush(stdout);
  rc = failed || sig ? KCAST_EXIT_USER : KCAST_EXIT_OK;
  if (sig) {
    if (r.log) fclose(r.log);
    r.log = NULL;
    rmdir(dir);
    suite_free(&s);
    free(order);
    fflush(stdout);
    signal(sig, SIG_DFL);
    raise(sig);
    return 128 + sig;
  }
out:
  if (r.log) fclose(r.log);
  if (dir[0]) rmdir(dir);
  suite_free(&s);
  free(order);
  return rc;
}
