/*
 * sched.c -- a small dispatcher built on kcast's public API (kcast.h) only.
 *
 * What.  It takes a queue of kernel launches (the launches of a kcast
 * dataset) and a set of heterogeneous GPUs, predicts each launch's time and
 * power on every GPU (a trained forest per GPU where one is given, the
 * analytic estimate otherwise), places the launches with three policies --
 * round-robin, greedy earliest-finish-time (EFT) in queue order, and EFT in
 * longest-first order (LPT) -- and, where the dataset holds measured times on
 * every GPU for every launch, with an oracle that runs the same EFT/LPT
 * policies on the measured times.  Every placement is then evaluated with
 * the "true" figures: measured medians where the dataset has them, the
 * predictions elsewhere (the report says which), giving makespan, busy
 * energy and per-GPU busy time, each against round-robin, plus lower bounds
 * no placement can beat.
 *
 * Why.  It is the use the library exists for (DESIGN.md: "a small library
 * that schedulers call before they dispatch a kernel"), written the way a
 * user would write it: the only kcast header is kcast.h and the program
 * links against libkcast.so, whose exports are kcast_* alone.  The dataset
 * file format is public (docs/formats.md), so the launch list and the
 * measurements are read with plain SQLite; features come through
 * kcast_features_from_launch.  Launches of sizes nobody ran (--unseen) get
 * their features from a feature model (kcast_featmodel_fill_instance), which is how
 * a scheduler predicts work before anyone has run it.
 *
 * Model.  Launches are independent jobs, all ready at time 0, run one at a
 * time per GPU without preemption; a GPU's finish time is the sum of the
 * times of its launches, the makespan the largest finish time.  Energy is
 * the sum over launches of time x power on the GPU that ran the launch (a
 * measured energy_j replaces the product where present); idle GPUs are not
 * charged.  Greedy EFT places each launch, in turn, on the GPU where it
 * would finish first given the work already placed (ties: the GPU listed
 * first); LPT is the same after sorting the launches by their shortest
 * time over the GPUs, longest first.  Neither is optimal; the lower bounds
 * are max(largest shortest time, sum of shortest times / GPUs) for the
 * makespan and the sum of each launch's smallest energy for the energy.
 *
 * Exit status: 0 ok, 1 bad input (file, GPU, model, prediction), 2 bad
 * command line.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sqlite3.h>

#include "kcast.h"

#define EXIT_USER 1
#define EXIT_USAGE 2
#define MAX_GPUS 32
#define MAX_MODELS 64
#define MAX_FILTERS 64
#define MAX_UNSEEN 64
#define MAX_ARGS 32
#define KCAST_APP_ID 0x4B435354 /* PRAGMA application_id of a dataset ("KCST") */

static const char usage_text[] =
    "usage: sched [options] [DB]\n"
    "\n"
    "Place the launches of dataset DB (default datasets/data/suite-features.db)\n"
    "on a set of GPUs with round-robin, predicted earliest-finish-time (eft),\n"
    "eft longest-first (lpt) and, where DB has measured times on every GPU, an\n"
    "oracle running eft and lpt on the measured times; report makespan, energy\n"
    "and per-GPU busy time of each, evaluated with measured figures where DB\n"
    "has them and predicted ones elsewhere.\n"
    "\n"
    "  --gpu NAME        a GPU of the set (repeat; a name may repeat).  Default:\n"
    "                    the GPUs named by --model, else T4 A100 H100 RTX4090\n"
    "  --model [GPU=]M   forest M (.kcm, from kcast train) for GPU's time or\n"
    "                    power (its target decides; GPU defaults to the one M\n"
    "                    was trained for).  Without one: the analytic estimate\n"
    "  -n N              the first N launches of the queue (default: all)\n"
    "  --seed S          shuffle the queue with seed S first (0, the default:\n"
    "                    DB order)\n"
    "  --app A[,A...]    only launches of these programs (repeatable)\n"
    "  --dataset L[,L...]  only launches with these input labels (repeatable)\n"
    "  --unseen KCF:GRID:BLOCK:ARGS[:<T,...>]  add a launch of a size nobody\n"
    "                    ran: its features from feature model KCF (kcast\n"
    "                    featmodel fit), GRID and BLOCK as X[,Y,Z], ARGS one\n"
    "                    value per kernel parameter, comma-separated (p for a\n"
    "                    pointer); for a kernel template's model <T,...> the\n"
    "                    instance's template arguments ('<16>'); repeat it.\n"
    "                    -n 0 leaves only these in the queue\n"
    "  --op 'OPERATOR NAME=VALUE...'  add an operator launch (a library kernel\n"
    "                    by operator and shape, 'bmm B=8 M=512 N=512 K=64'; kcast\n"
    "                    predict --op list): its features on each GPU from\n"
    "                    kcast_features_from_op_gpu; repeat it.  A model trained on\n"
    "                    several GPUs (the operator model of make models) is\n"
    "                    given as --model FILE and answers for every --gpu\n"
    "  --format F        table (default) or csv\n"
    "  -h, --help        this text\n"
    "\n"
    "csv: policy,gpu,launches,time_ns,predicted_time_ns,energy_j; a row per GPU\n"
    "(time = busy time) and one with gpu 'all' (time = makespan) per policy, and\n"
    "a 'lower-bound' row.  Notes go to stderr in csv mode.\n";

/* ---------------------------------------------------------- reporting -- */

static void errorf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("sched: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

static int usage_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("sched: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputs(" (sched --help)\n", stderr);
  va_end(ap);
  return EXIT_USAGE;
}

/* Informational line: stdout for the table, stderr in csv mode. */
static FILE *note_out;
static void notef(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vfprintf(note_out, fmt, ap);
  fputc('\n', note_out);
  va_end(ap);
}

/* ------------------------------------------------------------- inputs -- */

/* One GPU of the set. */
typedef struct gpu {
  const char *name;          /* as given; borrowed from argv or a literal */
  char label[48];            /* name, "#k" appended for a repeated name */
  kcast_model *time_model;   /* borrowed from the model table; NULL: analytic */
  kcast_model *power_model;  /* ditto */
  const char *time_file;     /* paths of those models, for the report */
  const char *power_file;
  int time_cross, power_cross; /* the model is one of several GPUs: it is
                                asked for this GPU (kcast_predict_gpu) */
  size_t n_mtime, n_mpower;  /* queue launches with a measured time / power
                                (or energy) on this GPU */
} gpu;

/* One --model option after loading. */
typedef struct model_arg {
  char gpu[64];              /* the GPU it is for */
  const char *path;          /* borrowed from argv */
  kcast_model *m;            /* owned */
  kcast_target target;       /* TIME or POWER */
} model_arg;

/* One launch of the queue. */
typedef struct launch {
  int64_t id;                /* launches.id in DB; -1 for an unseen launch */
  char *app, *dataset;       /* owned */
  int64_t lseq;
  long unseen;               /* index into options.unseen, -1 for a DB launch */
  long op;                   /* index into options.ops, -1 for another launch */
} launch;

/* One --unseen launch: a size nobody ran, its features from a feature
   model (kcast featmodel fit) instead of a dataset. */
typedef struct unseen_launch {
  const char *spec;          /* as given (borrowed from argv) */
  char path[1024];           /* the .kcf */
  unsigned grid[3], block[3];
  double args[MAX_ARGS];     /* per kernel parameter; NAN for a pointer */
  size_t nargs;
  double targs[MAX_ARGS];    /* a template's instance: its template arguments */
  size_t ntargs;
  kcast_featmodel *fm;       /* owned */
  kcast_features *fs;        /* owned: laid out by kcast_featmodel_features_new */
  unsigned flags;            /* KCAST_FEATMODEL_* of its fill */
} unseen_launch;

/* Figures of one launch on one GPU: cell (i, g) of an n x G table. */
typedef struct cell {
  double pt, pp;             /* predicted time (ns) and power (W), > 0 */
  double mt, mp, me;         /* measured medians (ns, W, J); NAN: none */
} cell;

typedef struct options {
  const char *db;
  gpu gpus[MAX_GPUS];
  size_t ngpus;
  model_arg models[MAX_MODELS];
  size_t nmodels;
  const char *apps[MAX_FILTERS];      /* comma lists as given */
  size_t napps;
  const char *datasets[MAX_FILTERS];
  size_t ndatasets;
  unseen_launch unseen[MAX_UNSEEN];   /* --unseen, appended to the queue */
  size_t nunseen;
  const char *ops[MAX_UNSEEN];        /* --op descriptions, appended after them */
  kcast_features *opfs[MAX_UNSEEN];   /* their feature sets (owned) */
  size_t nops;
  long long limit;                    /* -n; < 0: all */
  unsigned long long seed;            /* 0: DB order */
  int csv;
} options;

/* 1 when word is one of the comma-separated items of any list in lists. */
static int in_lists(const char *word, const char *const *lists, size_t n) {
  size_t wl = strlen(word);
  for (size_t k = 0; k < n; k++) {
    const char *p = lists[k];
    while (*p) {
      const char *e = strchr(p, ',');
      size_t len = e ? (size_t)(e - p) : strlen(p);
      if (len == wl && !strncmp(p, word, wl)) return 1;
      p += len;
      if (*p == ',') p++;
    }
  }
  return 0;
}

static int parse_count(const char *s, long long *out) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || end == s || *end || v < 0) return -1;
  *out = v;
  return 0;
}

static int analytic_knows(const char *name) {
  for (size_t i = 0; i < kcast_gpu_count(); i++)
    if (!strcasecmp(kcast_gpu_name(i), name)) return 1;
  return 0;
}

/* "K80, V100, ..." into buf. */
static const char *known_gpus(char *buf, size_t cap) {
  size_t len = 0;
  buf[0] = 0;
  for (size_t i = 0; i < kcast_gpu_count() && len < cap; i++) {
    int w = snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", kcast_gpu_name(i));
    if (w < 0) break;
    len += (size_t)w;
  }
  return buf;
}

/* X[,Y,Z] of positive integers into d (missing ones 1). */
static int parse_dim3(const char *s, size_t len, unsigned d[3]) {
  d[0] = d[1] = d[2] = 1;
  size_t k = 0;
  const char *p = s, *end = s + len;
  while (p < end) {
    if (k == 3) return -1;
    char *e;
    errno = 0;
    unsigned long v = strtoul(p, &e, 10);
    if (errno || e == p || v == 0 || v > 0x7fffffffUL || e > end) return -1;
    d[k++] = (unsigned)v;
    p = e;
    if (p < end && *p++ != ',') return -1;
  }
  return k ? 0 : -1;
}

/* Comma-separated numbers [p, end) into x[0..MAX_ARGS) (pointers: "p"
   reads NAN when allow_p); their count, -1 when one is not a number. */
static long parse_numbers(const char *p, const char *end, int allow_p, double *x) {
  long n = 0;
  while (p < end) {
    if (n == MAX_ARGS) return -1;
    const char *e = memchr(p, ',', (size_t)(end - p));
    size_t len = e ? (size_t)(e - p) : (size_t)(end - p);
    char tok[64];
    if (len >= sizeof tok) return -1;
    memcpy(tok, p, len);
    tok[len] = 0;
    char *te;
    double v = strtod(tok, &te);
    if (allow_p && !strcmp(tok, "p")) v = NAN;
    else if (!len || *te || !isfinite(v)) return -1;
    x[n++] = v;
    p += len;
    if (p < end && *p == ',') p++;
  }
  return n;
}

/* KCF:GRID:BLOCK:ARGS[:<TARGS>] into u (the fields split at ':' from the
   right, so the path may hold ':'; a last field in <...> is the template
   arguments of the instance, for a template's model). */
static int parse_unseen(const char *v, unseen_launch *u) {
  memset(u, 0, sizeof *u);
  u->spec = v;
  const char *c3 = strrchr(v, ':');
  if (!c3) return -1;
  const char *vend = v + strlen(v);
  if (c3[1] == '<' && vend[-1] == '>') { /* :<16> or :<16,2> */
    long k = parse_numbers(c3 + 2, vend - 1, 0, u->targs);
    if (k <= 0) return -1;
    u->ntargs = (size_t)k;
    vend = c3;
    while (c3 > v && *--c3 != ':') {}
    if (*c3 != ':') return -1;
  }
  const char *c2 = c3;
  while (c2 > v && *--c2 != ':') {}
  if (c2 == v) return -1;
  const char *c1 = c2;
  while (c1 > v && *--c1 != ':') {}
  if (c1 == v || *c1 != ':' || (size_t)(c1 - v) >= sizeof u->path) return -1;
  memcpy(u->path, v, (size_t)(c1 - v));
  u->path[c1 - v] = 0;
  if (parse_dim3(c1 + 1, (size_t)(c2 - c1 - 1), u->grid) ||
      parse_dim3(c2 + 1, (size_t)(c3 - c2 - 1), u->block))
    return -1;
  long k = parse_numbers(c3 + 1, vend, 1, u->args);
  if (k < 0) return -1;
  u->nargs = (size_t)k;
  return 0;
}

/* Parse argv into o; returns 0, or an exit status after printing why. */
static int parse_args(int argc, char **argv, options *o) {
  o->limit = -1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      fputs(usage_text, stdout);
      return -1;
    } else if (!strcmp(a, "--gpu")) {
      if (!v || !*v) return usage_error("--gpu needs a GPU name");
      if (o->ngpus == MAX_GPUS) return usage_error("at most %d GPUs", MAX_GPUS);
      o->gpus[o->ngpus++].name = v;
      i++;
    } else if (!strcmp(a, "--model")) {
      if (!v || !*v) return usage_error("--model needs [GPU=]MODEL.kcm");
      if (o->nmodels == MAX_MODELS) return usage_error("at most %d models", MAX_MODELS);
      model_arg *m = &o->models[o->nmodels++];
      const char *eq = strchr(v, '=');
      if (eq && !memchr(v, '/', (size_t)(eq - v))) {
        if (eq == v || (size_t)(eq - v) >= sizeof m->gpu)
          return usage_error("--model '%s': bad GPU name before '='", v);
        memcpy(m->gpu, v, (size_t)(eq - v));
        m->gpu[eq - v] = 0;
        m->path = eq + 1;
        if (!*m->path) return usage_error("--model '%s': no model file after '='", v);
      } else {
        m->path = v;
      }
      i++;
    } else if (!strcmp(a, "-n")) {
      if (!v || parse_count(v, &o->limit))
        return usage_error("-n needs a count >= 0, not '%s'", v ? v : "");
      i++;
    } else if (!strcmp(a, "--seed")) {
      long long s;
      if (!v || parse_count(v, &s)) return usage_error("--seed needs an integer >= 0, not '%s'", v ? v : "");
      o->seed = (unsigned long long)s;
      i++;
    } else if (!strcmp(a, "--app") || !strcmp(a, "--dataset")) {
      if (!v || !*v) return usage_error("%s needs a name", a);
      int is_app = a[2] == 'a';
      size_t *n = is_app ? &o->napps : &o->ndatasets;
      if (*n == MAX_FILTERS) return usage_error("too many %s options", a);
      (is_app ? o->apps : o->datasets)[(*n)++] = v;
      i++;
    } else if (!strcmp(a, "--unseen")) {
      if (!v) return usage_error("--unseen needs KCF:GRID:BLOCK:ARGS");
      if (o->nunseen == MAX_UNSEEN) return usage_error("at most %d --unseen launches", MAX_UNSEEN);
      if (parse_unseen(v, &o->unseen[o->nunseen]))
        return usage_error("--unseen '%s' is not KCF:X[,Y,Z]:X[,Y,Z]:ARG,... (numbers, p for a "
                           "pointer)", v);
      o->nunseen++;
      i++;
    } else if (!strcmp(a, "--op")) {
      if (!v || !*v) return usage_error("--op needs an operator description");
      if (o->nops == MAX_UNSEEN) return usage_error("at most %d --op launches", MAX_UNSEEN);
      o->ops[o->nops++] = v;
      i++;
    } else if (!strcmp(a, "--format")) {
      if (!v || (strcmp(v, "table") && strcmp(v, "csv")))
        return usage_error("--format is table or csv, not '%s'", v ? v : "");
      o->csv = !strcmp(v, "csv");
      i++;
    } else if (a[0] == '-' && a[1]) {
      return usage_error("unknown option '%s'", a);
    } else {
      if (o->db) return usage_error("one dataset only ('%s' and '%s')", o->db, a);
      o->db = a;
    }
  }
  if (!o->db) o->db = "datasets/data/suite-features.db";
  return 0;
}

/* Load the --model files and attach them to the GPUs (choosing the default
   set when no --gpu was given).  0 or EXIT_USER. */
static int setup_gpus(options *o) {
  char known[512];
  for (size_t k = 0; k < o->nmodels; k++) {
    model_arg *m = &o->models[k];
    if (kcast_model_load(m->path, &m->m)) {
      errorf("%s", kcast_last_error());
      return EXIT_USER;
    }
    m->target = kcast_model_target(m->m);
    if (m->target != KCAST_TARGET_TIME && m->target != KCAST_TARGET_POWER) {
      errorf("%s: the model predicts neither time nor power", m->path);
      return EXIT_USER;
    }
    const char *mg = kcast_model_gpu(m->m);
    if (!m->gpu[0] && mg && strchr(mg, ',')) {
      /* trained on several GPUs: it answers for any GPU of the set */
      snprintf(m->gpu, sizeof m->gpu, "*");
      continue;
    }
    if (!m->gpu[0]) {
      if (!mg || !*mg) {
        errorf("%s: the model records no GPU; give it as --model GPU=%s", m->path, m->path);
        return EXIT_USER;
      }
      snprintf(m->gpu, sizeof m->gpu, "%s", mg);
    } else if (mg && *mg && strcasecmp(mg, m->gpu)) {
      errorf("%s: the model was trained for GPU %s, not %s", m->path, mg, m->gpu);
      return EXIT_USER;
    }
  }
  if (o->ngpus == 0) {
    for (size_t k = 0; k < o->nmodels; k++) {
      if (!strcmp(o->models[k].gpu, "*")) continue;
      int seen = 0;
      for (size_t g = 0; g < o->ngpus; g++) seen |= !strcasecmp(o->gpus[g].name, o->models[k].gpu);
      if (seen) continue;
      if (o->ngpus == MAX_GPUS) {
        errorf("models for more than %d GPUs", MAX_GPUS);
        return EXIT_USER;
      }
      o->gpus[o->ngpus++].name = o->models[k].gpu;
    }
    if (o->ngpus == 0) {
      static const char *const deflt[] = {"T4", "A100", "H100", "RTX4090"};
      for (size_t g = 0; g < sizeof deflt / sizeof deflt[0]; g++) o->gpus[o->ngpus++].name = deflt[g];
    }
  }
  for (size_t k = 0; k < o->nmodels; k++) {
    model_arg *m = &o->models[k];
    int used = 0, cross = !strcmp(m->gpu, "*");
    for (size_t g = 0; g < o->ngpus; g++) {
      gpu *u = &o->gpus[g];
      if (!cross && strcasecmp(u->name, m->gpu)) continue;
      if (cross && (m->target == KCAST_TARGET_TIME ? u->time_model : u->power_model))
        continue; /* a model of this GPU alone wins */
      kcast_model **slot = m->target == KCAST_TARGET_TIME ? &u->time_model : &u->power_model;
      if (*slot && *slot != m->m) {
        errorf("%s: a second %s model for GPU %s", m->path,
               m->target == KCAST_TARGET_TIME ? "time" : "power", m->gpu);
        return EXIT_USER;
      }
      *slot = m->m;
      if (m->target == KCAST_TARGET_TIME) u->time_file = m->path, u->time_cross = cross;
      else u->power_file = m->path, u->power_cross = cross;
      used = 1;
    }
    if (!used && !cross) {
      errorf("%s: model for GPU %s, which is not among the --gpu GPUs", m->path, m->gpu);
      return EXIT_USER;
    }
  }
  for (size_t g = 0; g < o->ngpus; g++) {
    gpu *u = &o->gpus[g];
    if ((!u->time_model || !u->power_model) && !analytic_knows(u->name)) {
      errorf("unknown GPU '%s': the analytic estimate knows %s; another GPU needs "
             "--model %s=TIME.kcm and --model %s=POWER.kcm", u->name,
             known_gpus(known, sizeof known), u->name, u->name);
      return EXIT_USER;
    }
    size_t same = 0;
    for (size_t h = 0; h < g; h++) same += !strcasecmp(o->gpus[h].name, u->name);
    if (same) snprintf(u->label, sizeof u->label, "%.40s#%zu", u->name, same + 1);
    else snprintf(u->label, sizeof u->label, "%.47s", u->name);
  }
  return 0;
}

/* ------------------------------------------------------------ dataset -- */

/* Open db read-only and check it is a kcast dataset.  0 or EXIT_USER. */
static int open_dataset(const char *path, sqlite3 **db) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    errorf("%s: cannot open: %s", path, strerror(errno));
    return EXIT_USER;
  }
  fclose(f);
  if (sqlite3_open_v2(path, db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
    errorf("%s: cannot open: %s", path, *db ? sqlite3_errmsg(*db) : "out of memory");
    return EXIT_USER;
  }
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(*db, "PRAGMA application_id", -1, &st, NULL);
  int ok = rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW &&
           sqlite3_column_int64(st, 0) == KCAST_APP_ID;
  const char *why = rc == SQLITE_OK ? "not a kcast dataset (docs/formats.md)" : sqlite3_errmsg(*db);
  if (!ok) errorf("%s: %s", path, why);
  sqlite3_finalize(st);
  return ok ? 0 : EXIT_USER;
}

static void free_queue(launch *q, size_t n) {
  for (size_t i = 0; q && i < n; i++) {
    free(q[i].app);
    free(q[i].dataset);
  }
  free(q);
}

/* splitmix64: a portable, seedable shuffle. */
static uint64_t next_rand(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* The queue: launches with features, filtered, shuffled, cut to -n.
   [out] *q (caller frees with free_queue), *n, *nfiltered (matched the
   filters before the cut).  0 or EXIT_USER. */
static int load_queue(sqlite3 *db, const options *o, launch **q, size_t *n, size_t *nfiltered) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db,
                         "SELECT l.id, l.app, l.dataset, l.lseq FROM launches l WHERE EXISTS"
                         " (SELECT 1 FROM features f WHERE f.launch_id = l.id) ORDER BY l.id",
                         -1, &st, NULL) != SQLITE_OK) {
    errorf("%s: %s", o->db, sqlite3_errmsg(db));
    return EXIT_USER;
  }
  size_t cap = 0, len = 0;
  launch *v = NULL;
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    const char *app = (const char *)sqlite3_column_text(st, 1);
    const char *ds = (const char *)sqlite3_column_text(st, 2);
    if (!app) app = "";
    if (!ds) ds = "";
    if (o->napps && !in_lists(app, o->apps, o->napps)) continue;
    if (o->ndatasets && !in_lists(ds, o->datasets, o->ndatasets)) continue;
    if (len == cap) {
      size_t nc = cap ? 2 * cap : 256;
      launch *t = realloc(v, nc * sizeof *t);
      if (!t) break;
      v = t;
      cap = nc;
    }
    launch *l = &v[len];
    l->id = sqlite3_column_int64(st, 0);
    l->lseq = sqlite3_column_int64(st, 3);
    l->unseen = -1;
    l->op = -1;
    l->app = strdup(app);
    l->dataset = strdup(ds);
    len++;
    if (!l->app || !l->dataset) break;
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) {
    errorf("%s: %s", o->db, rc == SQLITE_ROW ? "out of memory" : sqlite3_errmsg(db));
    free_queue(v, len);
    return EXIT_USER;
  }
  if (len == 0 && !o->nunseen && !o->nops) {
    errorf("%s: no launch with features%s", o->db,
           o->napps || o->ndatasets ? " matches --app/--dataset" : "");
    free_queue(v, len);
    return EXIT_USER;
  }
  if (o->seed) {
    uint64_t s = o->seed;
    for (size_t i = len - 1; i > 0; i--) {
      size_t j = (size_t)(next_rand(&s) % (i + 1));
      launch t = v[i];
      v[i] = v[j];
      v[j] = t;
    }
  }
  *nfiltered = len;
  if (o->limit >= 0 && (size_t)o->limit < len) {
    for (size_t i = (size_t)o->limit; i < len; i++) {
      free(v[i].app);
      free(v[i].dataset);
    }
    len = (size_t)o->limit;
  }
  if (len == 0 && !o->nunseen && !o->nops) {
    errorf("-n 0: the queue is empty");
    free_queue(v, len);
    return EXIT_USER;
  }
  *q = v;
  *n = len;
  return 0;
}

/* Load the --unseen feature models (set-up: one feature set each) and
   append their launches to the queue.  0 or EXIT_USER. */
static int add_unseen(options *o, launch **q, size_t *n) {
  if (!o->nunseen) return 0;
  launch *v = realloc(*q, (*n + o->nunseen) * sizeof *v);
  if (!v) {
    errorf("out of memory");
    return EXIT_USER;
  }
  *q = v;
  for (size_t k = 0; k < o->nunseen; k++) {
    unseen_launch *u = &o->unseen[k];
    if (kcast_featmodel_load(u->path, &u->fm) || kcast_featmodel_features_new(u->fm, &u->fs)) {
      errorf("--unseen %s: %s", u->spec, kcast_last_error());
      return EXIT_USER;
    }
    char label[96];
    snprintf(label, sizeof label, "unseen %u,%u,%u x %u,%u,%u", u->grid[0], u->grid[1],
             u->grid[2], u->block[0], u->block[1], u->block[2]);
    launch *l = &v[*n];
    l->id = -1;
    l->lseq = (int64_t)k;
    l->unseen = (long)k;
    l->op = -1;
    l->app = strdup(kcast_featmodel_kernel(u->fm));
    l->dataset = strdup(label);
    (*n)++;
    if (!l->app || !l->dataset) {
      errorf("out of memory");
      return EXIT_USER;
    }
  }
  return 0;
}

/* The --op launches: their features (kcast_features_from_op, which also
   says what it assumed), appended to the queue.  0 or EXIT_USER. */
static int add_ops(options *o, launch **q, size_t *n) {
  if (!o->nops) return 0;
  launch *v = realloc(*q, (*n + o->nops) * sizeof *v);
  if (!v) {
    errorf("out of memory");
    return EXIT_USER;
  }
  *q = v;
  for (size_t k = 0; k < o->nops; k++) {
    char assumed[512];
    if (kcast_features_from_op(o->ops[k], assumed, sizeof assumed, &o->opfs[k])) {
      errorf("--op '%s': %s", o->ops[k], kcast_last_error());
      return EXIT_USER;
    }
    if (assumed[0]) notef("--op '%s': assumed %s", o->ops[k], assumed);
    launch *l = &v[*n];
    l->id = -1;
    l->lseq = (int64_t)k;
    l->unseen = -1;
    l->op = (long)k;
    size_t w = strcspn(o->ops[k], " \t");
    l->app = strndup(o->ops[k], w);
    l->dataset = strdup(o->ops[k] + w + strspn(o->ops[k] + w, " \t"));
    (*n)++;
    if (!l->app || !l->dataset) {
      errorf("out of memory");
      return EXIT_USER;
    }
  }
  return 0;
}

/* Queue position of launch id, by binary search in (id, pos) pairs. */
typedef struct id_pos {
  int64_t id;
  size_t pos;
} id_pos;

static int cmp_id_pos(const void *a, const void *b) {
  int64_t x = ((const id_pos *)a)->id, y = ((const id_pos *)b)->id;
  return (x > y) - (x < y);
}

static double median_sorted(const double *v, size_t n) {
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Store a finished group's median into the cell field its metric names. */
static void put_median(cell *c, const char *metric, const double *v, size_t n) {
  if (!c || n == 0) return;
  double m = median_sorted(v, n);
  if (!strcmp(metric, "time_ns")) c->mt = m;
  else if (!strcmp(metric, "power_w")) c->mp = m;
  else if (!strcmp(metric, "energy_j")) c->me = m;
}

/* Medians of the measured time, power and energy of every queue launch on
   GPU g into column g of cells.  0 or EXIT_USER. */
static int load_measurements(sqlite3 *db, const char *path, const launch *q, size_t n,
                             const gpu *u, size_t g, size_t ngpus, cell *cells) {
  id_pos *ix = malloc(n * sizeof *ix);
  if (!ix) {
    errorf("out of memory");
    return EXIT_USER;
  }
  for (size_t i = 0; i < n; i++) ix[i] = (id_pos){q[i].id, i};
  qsort(ix, n, sizeof *ix, cmp_id_pos);
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db,
                              "SELECT launch_id, metric, value FROM measurements WHERE gpu = ?1"
                              " COLLATE NOCASE AND metric IN ('time_ns', 'power_w', 'energy_j')"
                              " ORDER BY launch_id, metric, value",
                              -1, &st, NULL);
  if (rc != SQLITE_OK) {
    errorf("%s: %s", path, sqlite3_errmsg(db));
    free(ix);
    return EXIT_USER;
  }
  sqlite3_bind_text(st, 1, u->name, -1, SQLITE_STATIC);
  double *buf = NULL;
  size_t cap = 0, len = 0;
  int64_t cur_id = INT64_MIN;
  char cur_metric[16] = "";
  cell *cur = NULL;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    int64_t id = sqlite3_column_int64(st, 0);
    const char *metric = (const char *)sqlite3_column_text(st, 1);
    double val = sqlite3_column_double(st, 2);
    if (!metric) continue;
    if (id != cur_id || strcmp(metric, cur_metric)) {
      put_median(cur, cur_metric, buf, len);
      len = 0;
      cur_id = id;
      snprintf(cur_metric, sizeof cur_metric, "%s", metric);
      id_pos key = {id, 0};
      const id_pos *hit = bsearch(&key, ix, n, sizeof *ix, cmp_id_pos);
      cur = hit ? &cells[hit->pos * ngpus + g] : NULL;
    }
    if (!cur || !isfinite(val)) continue;
    if (len == cap) {
      size_t nc = cap ? 2 * cap : 64;
      double *t = realloc(buf, nc * sizeof *t);
      if (!t) {
        rc = SQLITE_NOMEM;
        break;
      }
      buf = t;
      cap = nc;
    }
    buf[len++] = val;
  }
  if (rc == SQLITE_DONE) put_median(cur, cur_metric, buf, len);
  else errorf("%s: %s", path, rc == SQLITE_NOMEM ? "out of memory" : sqlite3_errmsg(db));
  sqlite3_finalize(st);
  free(buf);
  free(ix);
  return rc == SQLITE_DONE ? 0 : EXIT_USER;
}

/* --------------------------------------------------------- prediction -- */

/* Predicted time and power of launch l (features fs) on GPU u into c.
   0 or EXIT_USER with the reason printed. */
static int predict_cell(const char *db, const launch *l, const kcast_features *fs, const gpu *u,
                        cell *c) {
  kcast_prediction t = {0}, p = {0};
  kcast_status s = KCAST_OK;
  if (!u->time_model || !u->power_model)
    s = kcast_predict_analytic(u->name, fs, u->time_model ? NULL : &t, u->power_model ? NULL : &p);
  if (!s && u->time_model)
    s = u->time_cross ? kcast_predict_gpu(u->time_model, u->name, fs, 0.9, &t)
                      : kcast_predict(u->time_model, fs, 0.9, &t);
  if (!s && u->power_model)
    s = u->power_cross ? kcast_predict_gpu(u->power_model, u->name, fs, 0.9, &p)
                       : kcast_predict(u->power_model, fs, 0.9, &p);
  if (s) {
    errorf("%s: launch %lld (%s, %s, %lld) on %s: %s", db, (long long)l->id, l->app, l->dataset,
           (long long)l->lseq, u->name, kcast_last_error());
    return EXIT_USER;
  }
  if (!(t.value > 0) || !isfinite(t.value) || !(p.value > 0) || !isfinite(p.value)) {
    errorf("%s: launch %lld (%s, %s, %lld) on %s: predicted time %g ns, power %g W (need > 0)",
           db, (long long)l->id, l->app, l->dataset, (long long)l->lseq, u->name, t.value, p.value);
    return EXIT_USER;
  }
  c->pt = t.value;
  c->pp = p.value;
  return 0;
}

/* ------------------------------------------------------------ placing -- */

/* Which figures a policy plans with or a placement is evaluated on. */
enum view { PREDICTED, TRUE_FIGS, MEASURED };

static double time_of(const cell *c, enum view v) {
  if (v == PREDICTED) return c->pt;
  if (v == MEASURED) return c->mt;
  return isnan(c->mt) ? c->pt : c->mt;
}

/* Joules: ns x W x 1e-9. */
static double energy_of(const cell *c, enum view v) {
  if (v == PREDICTED) return c->pt * 1e-9 * c->pp;
  if (!isnan(c->me)) return c->me;
  return time_of(c, TRUE_FIGS) * 1e-9 * (isnan(c->mp) ? c->pp : c->mp);
}

typedef struct keyed {
  double key;
  size_t i;
} keyed;

/* Longest first; equal keys keep queue order. */
static int cmp_keyed_desc(const void *a, const void *b) {
  const keyed *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? 1 : -1;
  return (x->i > y->i) - (x->i < y->i);
}

static void place_round_robin(size_t n, size_t ngpus, int *where) {
  for (size_t i = 0; i < n; i++) where[i] = (int)(i % ngpus);
}

/* Greedy earliest finish time on the figures of view v, visiting launches
   in queue order, or longest-shortest-time first when lpt.  0 or -1 (out
   of memory). */
static int place_eft(const cell *cells, size_t n, size_t ngpus, enum view v, int lpt, int *where) {
  keyed *order = malloc(n * sizeof *order);
  double *finish = calloc(ngpus, sizeof *finish);
  if (!order || !finish) {
    free(order);
    free(finish);
    return -1;
  }
  for (size_t i = 0; i < n; i++) {
    double m = INFINITY;
    for (size_t g = 0; g < ngpus; g++) m = fmin(m, time_of(&cells[i * ngpus + g], v));
    order[i] = (keyed){m, i};
  }
  if (lpt) qsort(order, n, sizeof *order, cmp_keyed_desc);
  for (size_t k = 0; k < n; k++) {
    size_t i = order[k].i, best = 0;
    double best_end = INFINITY;
    for (size_t g = 0; g < ngpus; g++) {
      double end = finish[g] + time_of(&cells[i * ngpus + g], v);
      if (end < best_end) {
        best_end = end;
        best = g;
      }
    }
    where[i] = (int)best;
    finish[best] = best_end;
  }
  free(order);
  free(finish);
  return 0;
}

/* A placement evaluated. */
typedef struct result {
  const char *policy;
  int *where;                /* GPU per queue position; owned */
  double busy[MAX_GPUS];     /* ns, true figures */
  double pbusy[MAX_GPUS];    /* ns, predicted figures */
  double energy[MAX_GPUS];   /* J, true figures */
  size_t count[MAX_GPUS];
  double makespan, pmakespan, total_energy;
} result;

static void evaluate(const cell *cells, size_t n, size_t ngpus, result *r) {
  memset(r->busy, 0, sizeof r->busy);
  memset(r->pbusy, 0, sizeof r->pbusy);
  memset(r->energy, 0, sizeof r->energy);
  memset(r->count, 0, sizeof r->count);
  for (size_t i = 0; i < n; i++) {
    size_t g = (size_t)r->where[i];
    const cell *c = &cells[i * ngpus + g];
    r->busy[g] += time_of(c, TRUE_FIGS);
    r->pbusy[g] += time_of(c, PREDICTED);
    r->energy[g] += energy_of(c, TRUE_FIGS);
    r->count[g]++;
  }
  r->makespan = r->pmakespan = r->total_energy = 0;
  for (size_t g = 0; g < ngpus; g++) {
    r->makespan = fmax(r->makespan, r->busy[g]);
    r->pmakespan = fmax(r->pmakespan, r->pbusy[g]);
    r->total_energy += r->energy[g];
  }
}

/* Lower bounds of any placement under view v: makespan and energy. */
static void lower_bounds(const cell *cells, size_t n, size_t ngpus, enum view v, double *ms,
                         double *en) {
  double longest = 0, sum = 0, e = 0;
  for (size_t i = 0; i < n; i++) {
    double t = INFINITY, ei = INFINITY;
    for (size_t g = 0; g < ngpus; g++) {
      t = fmin(t, time_of(&cells[i * ngpus + g], v));
      ei = fmin(ei, energy_of(&cells[i * ngpus + g], v));
    }
    longest = fmax(longest, t);
    sum += t;
    e += ei;
  }
  *ms = fmax(longest, sum / (double)ngpus);
  *en = e;
}

/* ------------------------------------------------------------- output -- */

static void print_table(const options *o, const result *res, size_t nres, double lb_ms,
                        double lb_en, double plb_ms) {
  const result *rr = &res[0];
  printf("\n%-11s %12s %12s %11s %7s %7s", "policy", "makespan ms", "predicted ms", "energy J",
         "ms/rr", "J/rr");
  for (size_t g = 0; g < o->ngpus; g++) printf("  %16s", o->gpus[g].label);
  printf("\n");
  for (size_t k = 0; k < nres; k++) {
    const result *r = &res[k];
    printf("%-11s %12.3f %12.3f %11.4f %7.3f %7.3f", r->policy, r->makespan * 1e-6,
           r->pmakespan * 1e-6, r->total_energy, r->makespan / rr->makespan,
           r->total_energy / rr->total_energy);
    for (size_t g = 0; g < o->ngpus; g++) {
      char cellbuf[48];
      snprintf(cellbuf, sizeof cellbuf, "%.3f ms/%zu", r->busy[g] * 1e-6, r->count[g]);
      printf("  %16s", cellbuf);
    }
    printf("\n");
  }
  printf("%-11s %12.3f %12.3f %11.4f %7.3f %7.3f\n", "lower bound", lb_ms * 1e-6, plb_ms * 1e-6,
         lb_en, lb_ms / rr->makespan, lb_en / rr->total_energy);
  printf("(per GPU: busy time / launches; ms/rr and J/rr: ratio to round-robin)\n");
}

static void print_csv(const options *o, const result *res, size_t nres, size_t n, double lb_ms,
                      double lb_en, double plb_ms) {
  printf("policy,gpu,launches,time_ns,predicted_time_ns,energy_j\n");
  for (size_t k = 0; k < nres; k++) {
    const result *r = &res[k];
    for (size_t g = 0; g < o->ngpus; g++)
      printf("%s,%s,%zu,%.17g,%.17g,%.17g\n", r->policy, o->gpus[g].label, r->count[g],
             r->busy[g], r->pbusy[g], r->energy[g]);
    printf("%s,all,%zu,%.17g,%.17g,%.17g\n", r->policy, n, r->makespan, r->pmakespan,
           r->total_energy);
  }
  printf("lower-bound,all,%zu,%.17g,%.17g,%.17g\n", n, lb_ms, plb_ms, lb_en);
}

/* --------------------------------------------------------------- main -- */

int main(int argc, char **argv) {
  static options o;
  note_out = stdout;
  int status = parse_args(argc, argv, &o);
  if (status) return status < 0 ? 0 : status;
  if (o.csv) note_out = stderr;
  if (KCAST_CHECK_VERSION()) {
    errorf("%s", kcast_last_error());
    return EXIT_USER;
  }

  sqlite3 *db = NULL;
  launch *q = NULL;
  cell *cells = NULL;
  result res[5];
  size_t nres = 0, n = 0, nfiltered = 0;
  memset(res, 0, sizeof res);

  if ((status = setup_gpus(&o)) || (status = open_dataset(o.db, &db)) ||
      (status = load_queue(db, &o, &q, &n, &nfiltered)))
    goto out;
  if ((status = add_unseen(&o, &q, &n)) || (status = add_ops(&o, &q, &n))) goto out;
  size_t G = o.ngpus;
  cells = malloc(n * G * sizeof *cells);
  if (!cells) {
    errorf("out of memory");
    status = EXIT_USER;
    goto out;
  }
  for (size_t c = 0; c < n * G; c++) cells[c] = (cell){0, 0, NAN, NAN, NAN};

  /* Predictions: each launch's stored features, then every GPU. */
  for (size_t i = 0; i < n; i++) {
    kcast_features *fs = NULL;
    if (q[i].op >= 0) {
      /* an operator launch: its features on each GPU (a GEMM given
         without its kernel runs the tile cuBLAS would choose there: the
         fastest the GPU's time model predicts); else those set up */
      for (size_t g = 0; g < G && !status; g++) {
        kcast_features *gf = NULL;
        const gpu *u = &o.gpus[g];
        if (kcast_features_from_op_gpu(o.ops[q[i].op], u->time_cross ? u->time_model : NULL,
                                       u->name, NULL, 0, &gf)) {
          errorf("--op '%s' on %s: %s", o.ops[q[i].op], u->name, kcast_last_error());
          status = EXIT_USER;
          break;
        }
        status = predict_cell(o.db, &q[i], gf, u, &cells[i * G + g]);
        kcast_features_free(gf);
      }
      if (status) goto out;
      continue;
    }
    if (q[i].unseen >= 0) {
      /* a size nobody ran: the feature model answers, no emulation */
      unseen_launch *u = &o.unseen[q[i].unseen];
      if (kcast_featmodel_fill_instance(u->fm, NULL, u->targs, u->ntargs, u->grid, u->block, 0,
                                        u->args, u->nargs, u->fs, &u->flags)) {
        errorf("--unseen %s: %s", u->spec, kcast_last_error());
        status = EXIT_USER;
        goto out;
      }
      for (size_t g = 0; g < G && !status; g++)
        status = predict_cell(o.db, &q[i], u->fs, &o.gpus[g], &cells[i * G + g]);
      if (status) goto out;
      continue;
    }
    if (kcast_features_from_launch(o.db, q[i].id, &fs)) {
      errorf("%s", kcast_last_error());
      status = EXIT_USER;
      goto out;
    }
    for (size_t g = 0; g < G && !status; g++)
      status = predict_cell(o.db, &q[i], fs, &o.gpus[g], &cells[i * G + g]);
    kcast_features_free(fs);
    if (status) goto out;
  }
  for (size_t g = 0; g < G; g++) {
    if ((status = load_measurements(db, o.db, q, n, &o.gpus[g], g, G, cells))) goto out;
    for (size_t i = 0; i < n; i++) {
      const cell *c = &cells[i * G + g];
      o.gpus[g].n_mtime += !isnan(c->mt);
      o.gpus[g].n_mpower += !isnan(c->mp) || !isnan(c->me);
    }
  }

  /* Header: what was read and where every figure comes from. */
  char order[96];
  if (o.seed) snprintf(order, sizeof order, "shuffled with seed %llu", o.seed);
  else snprintf(order, sizeof order, "in dataset order");
  notef("queue: %zu of %zu launches of %s%s (%s), %zu GPU%s", n - o.nunseen - o.nops, nfiltered,
        o.db, o.napps || o.ndatasets ? " matching --app/--dataset" : "", order, G,
        G == 1 ? "" : "s");
  for (size_t k = 0; k < o.nops; k++)
    notef("  operator: %s: features from its shape on each GPU (kcast_features_from_op_gpu)", o.ops[k]);
  for (size_t k = 0; k < o.nunseen; k++) {
    const unseen_launch *u = &o.unseen[k];
    notef("  unseen: %s grid %u,%u,%u block %u,%u,%u: features from %s, no emulation%s%s",
          kcast_featmodel_kernel(u->fm), u->grid[0], u->grid[1], u->grid[2], u->block[0],
          u->block[1], u->block[2], u->path,
          u->flags & KCAST_FEATMODEL_EXTRAPOLATED ? " (outside the fitted sizes: extrapolated)" : "",
          u->flags & KCAST_FEATMODEL_UNRELIABLE ? " (unreliable: the kernel's work does not follow "
                                                  "from the launch)" : "");
  }
  size_t measured_t = 0, measured_p = 0;
  for (size_t g = 0; g < G; g++) {
    const gpu *u = &o.gpus[g];
    notef("  %-10s time: %s; power: %s; measured: time %zu/%zu, power %zu/%zu", u->label,
          u->time_file ? u->time_file : "analytic", u->power_file ? u->power_file : "analytic",
          u->n_mtime, n, u->n_mpower, n);
    measured_t += u->n_mtime;
    measured_p += u->n_mpower;
  }
  if (measured_t == 0 && measured_p == 0)
    notef("evaluation: no measurements for these launches on these GPUs: every figure is a "
          "prediction (prediction vs prediction)");
  else if (measured_t == n * G && measured_p == n * G)
    notef("evaluation: measured times and powers (median over repetitions) of every launch on "
          "every GPU");
  else
    notef("evaluation: measured figures where the dataset has them (counts above), predicted "
          "ones elsewhere");
  notef("energy: sum of time x power of each launch on the GPU that ran it (idle GPUs not charged)");

  /* Placements. */
  static const char *const names[] = {"round-robin", "eft", "lpt", "oracle-eft", "oracle-lpt"};
  int oracle = 1;
  for (size_t g = 0; g < G; g++) oracle &= o.gpus[g].n_mtime == n;
  for (size_t k = 0; k < (oracle ? 5u : 3u); k++) {
    res[k].policy = names[k];
    res[k].where = malloc(n * sizeof *res[k].where);
    if (!res[k].where) {
      errorf("out of memory");
      status = EXIT_USER;
      goto out;
    }
    nres = k + 1;
    if (k == 0) place_round_robin(n, G, res[k].where);
    else if (place_eft(cells, n, G, k < 3 ? PREDICTED : MEASURED, k % 2 == 0, res[k].where)) {
      errorf("out of memory");
      status = EXIT_USER;
      goto out;
    }
    evaluate(cells, n, G, &res[k]);
  }
  if (!oracle) {
    for (size_t g = 0; g < G; g++)
      if (o.gpus[g].n_mtime < n) {
        if (o.gpus[g].n_mtime == 0) notef("oracle: no measurements for GPU %s, skipped", o.gpus[g].label);
        else notef("oracle: measured times for %zu of %zu launches on GPU %s, skipped",
                   o.gpus[g].n_mtime, n, o.gpus[g].label);
      }
  }
  double lb_ms, lb_en, plb_ms, plb_en;
  lower_bounds(cells, n, G, TRUE_FIGS, &lb_ms, &lb_en);
  lower_bounds(cells, n, G, PREDICTED, &plb_ms, &plb_en);
  if (o.csv) print_csv(&o, res, nres, n, lb_ms, lb_en, plb_ms);
  else print_table(&o, res, nres, lb_ms, lb_en, plb_ms);
  if (fflush(stdout) || ferror(stdout)) {
    errorf("cannot write the report: %s", strerror(errno));
    status = EXIT_USER;
  }

out:
  for (size_t k = 0; k < nres; k++) free(res[k].where);
  free(cells);
  free_queue(q, n);
  sqlite3_close(db);
  for (size_t k = 0; k < o.nmodels; k++) kcast_model_free(o.models[k].m);
  for (size_t k = 0; k < o.nunseen; k++) {
    kcast_features_free(o.unseen[k].fs);
    kcast_featmodel_free(o.unseen[k].fm);
  }
  for (size_t k = 0; k < o.nops; k++) kcast_features_free(o.opfs[k]);
  return status;
}
