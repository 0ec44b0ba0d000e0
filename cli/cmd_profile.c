/*
 * cmd_profile.c -- `kcast profile`: run a CUDA program under the injection
 * library (profiler/inject/prof_inject.c) and store its kernels' time, and
 * optionally power and energy, in a dataset (docs/formats.md, "Profiling").
 *
 * Order matters for "nothing written unless it worked":
 *  1. check for a GPU before running anything (dlopen libcuda.so.1, cuInit,
 *     cuDeviceGetCount) and that an existing DB is a dataset;
 *  2. run the program with CUDA_INJECTION64_PATH set; its stdout, stderr
 *     and exit status pass through;
 *  3. read the records file it left; none, or one without kernels, is an
 *     error and nothing is written;
 *  4. prof_ingest writes every row in one transaction.
 * The DB file is only created in step 4.
 */
#include "cli/cli.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "datasets/ds.h"
#include "profiler/prof.h"

const char cmd_profile_usage[] =
    "usage: kcast profile [-o DB] [--app NAME] [--dataset LABEL] [--bench LABEL]\n"
    "                     [--gpu NAME] [--power] [--power-window MS]\n"
    "                     [--windows-per-config N] [--repeat N] [--rep-offset K]\n"
    "                     [--kernel REGEX | -k NAME] [--launch-skip N] [--launch-count N]\n"
    "                     -- PROGRAM [ARGS]\n"
    "\n"
    "Run a CUDA program on this machine's GPU under CUPTI and record every\n"
    "kernel launch's execution time (and with --power its board power and\n"
    "energy from NVML) in a dataset.  Launches are keyed (app, dataset, lseq):\n"
    "lseq counts the program's kernel launch calls from 0 in call order, the\n"
    "same key `kcast run` uses, so features and measurements join.\n"
    "\n"
    "  -o DB            dataset to write (default kcast.db; created if missing)\n"
    "  --app NAME       app key (default: the program's file name)\n"
    "  --dataset LABEL  input label (default: the arguments joined by spaces)\n"
    "  --bench LABEL    suite label for launches this command creates\n"
    "  --gpu NAME       GPU key in measurements (default: from the device name,\n"
    "                   'NVIDIA H200' -> H200)\n"
    "  --power          sample NVML power and energy; adds power_w and energy_j\n"
    "  --power-window MS  with --power, run each launch back to back for MS\n"
    "                   milliseconds (device memory saved and restored) and\n"
    "                   take its power over that window (default 100; 0: over\n"
    "                   its repeats or its own run; under 100 ms rows are\n"
    "                   low-confidence)\n"
    "  --windows-per-config N  with --power, at most N power windows per launch\n"
    "                   configuration (kernel, grid, block, shared memory) in\n"
    "                   the run; later launches of it get power from their\n"
    "                   repeats or own run, low-confidence when short\n"
    "                   (default 0: no limit)\n"
    "  --repeat N       execute every launch N times (device memory is saved and\n"
    "                   restored around the extra runs); time_ns per run\n"
    "  --rep-offset K   number the runs from K (keeps the rows of an earlier\n"
    "                   profile of the same program: measurements are keyed by\n"
    "                   (launch, gpu, metric, rep))\n"
    "  --kernel REGEX   store only launches of kernels whose mangled name or\n"
    "                   demangled signature matches REGEX (POSIX extended)\n"
    "  -k, --kernel-name NAME  as Nsight Compute's: only launches of the kernel\n"
    "                   named NAME exactly (mangled, demangled signature or source\n"
    "                   name, gemm_tiled_kernel<16>), or with regex:EXPR as --kernel\n"
    "  --launch-skip N  pass over the first N matching launches (in lseq order)\n"
    "  --launch-count N store at most N matching launches\n"
    "\n"
    "The program's output and exit status pass through.  Without a usable GPU\n"
    "kcast exits 1 before running it; if it ran but no kernel records came\n"
    "back, nothing is written.\n";

/* Injection library next to the kcast binary, or $KCAST_INJECT. */
static int find_inject(char *out, size_t cap) {
  const char *env = getenv("KCAST_INJECT");
  if (env && *env) {
    snprintf(out, cap, "%s", env);
    return access(out, R_OK) == 0 ? 0 : -1;
  }
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return -1;
  self[n] = 0;
  char *slash = strrchr(self, '/');
  if (slash) *slash = 0;
  /* an installed tree keeps it in PREFIX/lib/kcast */
  snprintf(out, cap, "%s/../lib/kcast/libkcast_inject.so", self);
  if (access(out, R_OK) == 0) return 0;
  snprintf(out, cap, "%s/libkcast_inject.so", self);
  return access(out, R_OK) == 0 ? 0 : -1;
}

/* Does the kernel driver list a GPU (/proc/driver/nvidia/gpus/<bus id>)? */
static int proc_lists_gpu(void) {
  DIR *d = opendir("/proc/driver/nvidia/gpus");
  if (!d) return 0;
  struct dirent *e;
  int found = 0;
  while (!found && (e = readdir(d))) found = e->d_name[0] != '.';
  closedir(d);
  return found;
}

/* 0 when a CUDA device is usable; else a reason in why.  Where the kernel
   driver lists a GPU, that and a loadable libcuda.so.1 suffice: cuInit in
   kcast's own process would add the driver's start-up to every profiled
   run's wall time (the program pays it once more itself).  Elsewhere
   (containers without /proc/driver/nvidia) cuInit and cuDeviceGetCount
   decide. */
static int gpu_present(char *why, size_t cap) {
  void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!h) {
    snprintf(why, cap, "libcuda.so.1 not found: no NVIDIA driver");
    return -1;
  }
  if (proc_lists_gpu()) {
    dlclose(h);
    return 0;
  }
  int (*init)(unsigned) = NULL;
  int (*count)(int *) = NULL;
  *(void **)&init = dlsym(h, "cuInit");
  *(void **)&count = dlsym(h, "cuDeviceGetCount");
  int n = 0, rc = -1;
  if (!init || !count) snprintf(why, cap, "libcuda.so.1 lacks cuInit/cuDeviceGetCount");
  else if ((rc = init(0)) != 0) snprintf(why, cap, "cuInit failed with CUDA error %d", rc);
  else if ((rc = count(&n)) != 0) snprintf(why, cap, "cuDeviceGetCount failed with CUDA error %d", rc);
  else if (n < 1) snprintf(why, cap, "the driver reports no device");
  dlclose(h);
  return rc == 0 && n >= 1 ? 0 : -1;
}

int cli_gpu_key(char *key, size_t cap, char *why, size_t wcap) {
  if (gpu_present(why, wcap) < 0) return -1;
  void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  int (*init)(unsigned) = NULL;
  int (*get)(int *, int) = NULL;
  int (*name)(char *, int, int) = NULL;
  if (h) {
    *(void **)&init = dlsym(h, "cuInit");
    *(void **)&get = dlsym(h, "cuDeviceGet");
    *(void **)&name = dlsym(h, "cuDeviceGetName");
  }
  char dev_name[256] = "";
  int dev = 0, rc = -1;
  if (!init || !get || !name) snprintf(why, wcap, "libcuda.so.1 lacks cuDeviceGetName");
  else if ((rc = init(0)) != 0) snprintf(why, wcap, "cuInit failed with CUDA error %d", rc);
  else if ((rc = get(&dev, 0)) != 0) snprintf(why, wcap, "cuDeviceGet failed with CUDA error %d", rc);
  else if ((rc = name(dev_name, (int)sizeof dev_name, dev)) != 0)
    snprintf(why, wcap, "cuDeviceGetName failed with CUDA error %d", rc);
  if (h) dlclose(h);
  if (rc != 0) return -1;
  prof_gpu_key(dev_name, key, cap);
  return 0;
}

/* A decimal integer in [lo, hi]. */
static int parse_int(const char *s, long lo, long hi, int *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end || v < lo || v > hi) return -1;
  *out = (int)v;
  return 0;
}

/* Run argv with the profiling environment; returns the exit status the
   shell would report (128+signal), or -1 when it could not start. */
static int run_program(char **argv, const char *inject, const char *records, int repeat,
                       int power, int window_ms, int window_max) {
  char rep[32], win[32], wmax[32];
  snprintf(rep, sizeof rep, "%d", repeat);
  snprintf(win, sizeof win, "%d", power ? window_ms : 0);
  snprintf(wmax, sizeof wmax, "%d", window_max);
  pid_t pid = fork();
  if (pid < 0) {
    cli_error("cannot fork: %s", strerror(errno));
    return -1;
  }
  if (pid == 0) {
    setenv("CUDA_INJECTION64_PATH", inject, 1);
    setenv(PROF_ENV_OUT, records, 1);
    setenv(PROF_ENV_REPEAT, rep, 1);
    setenv(PROF_ENV_POWER, power ? "1" : "0", 1);
    setenv(PROF_ENV_WINDOW, win, 1);
    setenv(PROF_ENV_WINDOW_MAX, wmax, 1);
    execvp(argv[0], argv);
    fprintf(stderr, "kcast: cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  /* The program gets terminal signals itself; kcast waits for it. */
  signal(SIGINT, SIG_IGN);
  signal(SIGQUIT, SIG_IGN);
  int st;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR) return -1;
  signal(SIGINT, SIG_DFL);
  signal(SIGQUIT, SIG_DFL);
  if (WIFEXITED(st)) return WEXITSTATUS(st);
  if (WIFSIGNALED(st)) return 128 + WTERMSIG(st);
  return -1;
}

static char *join_args(int argc, char **argv) {
  size_t n = 1;
  for (int i = 0; i < argc; i++) n += strlen(argv[i]) + 1;
  char *s = malloc(n);
  if (!s) return NULL;
  s[0] = 0;
  for (int i = 0; i < argc; i++) {
    if (i) strcat(s, " ");
    strcat(s, argv[i]);
  }
  return s;
}

static int filter_take(void *ctx, const char *kernel) { return cli_filter_take(ctx, kernel); }

int cmd_profile(int argc, char **argv) {
  const char *db_path = "kcast.db", *app = NULL, *dataset = NULL, *gpu = NULL,
             *bench = NULL;
  int power = 0, repeat = 1, rep_offset = 0, window_ms = -1, window_max = -1, i;
  enum { F_APP = CLI_OPT_OWN, F_DATASET, F_GPU, F_BENCH, F_POWER, F_REPEAT, F_WINDOW,
         F_WINDOWS_PER_CONFIG, F_REP_OFFSET };
  static const struct option lo[] = {
    {"output", required_argument, NULL, 'o'},
    {"app", required_argument, NULL, F_APP},
    {"dataset", required_argument, NULL, F_DATASET},
    {"gpu", required_argument, NULL, F_GPU},
    {"bench", required_argument, NULL, F_BENCH},
    {"power", no_argument, NULL, F_POWER},
    {"repeat", required_argument, NULL, F_REPEAT},
    {"power-window", required_argument, NULL, F_WINDOW},
    {"windows-per-config", required_argument, NULL, F_WINDOWS_PER_CONFIG},
    {"rep-offset", required_argument, NULL, F_REP_OFFSET},
    {NULL, 0, NULL, 0},
  };
  cli_opts o;
  cli_opts_init(&o, "profile", argc, argv, "o:", 1);
  cli_opts_add(&o, lo);
  cli_opts_add(&o, cli_filter_longopts);
  cli_filter flt;
  memset(&flt, 0, sizeof flt);
  for (int c; (c = cli_opts_next(&o)) != CLI_OPT_END;) {
    int fr = cli_filter_option(&flt, &o, c);
    if (fr < 0) return KCAST_EXIT_USAGE;
    if (fr) continue;
    switch (c) {
      case CLI_OPT_ERR: return o.status;
      case 'o': db_path = o.arg; break;
      case F_APP: app = o.arg; break;
      case F_DATASET: dataset = o.arg; break;
      case F_GPU: gpu = o.arg; break;
      case F_BENCH: bench = o.arg; break;
      case F_POWER: power = 1; break;
      case F_REPEAT:
        if (parse_int(o.arg, 1, 10000, &repeat))
          return cli_usage_error("profile", "--repeat needs an integer 1..10000");
        break;
      case F_WINDOW:
        if (parse_int(o.arg, 0, 60000, &window_ms))
          return cli_usage_error("profile", "--power-window needs milliseconds 0..60000");
        break;
      case F_WINDOWS_PER_CONFIG:
        if (parse_int(o.arg, 0, 1000000, &window_max))
          return cli_usage_error("profile", "--windows-per-config needs a count 0..1000000");
        break;
      case F_REP_OFFSET:
        if (parse_int(o.arg, 1, 10000, &rep_offset))
          return cli_usage_error("profile", "--rep-offset needs an integer 1..10000");
        break;
    }
  }
  i = o.first_operand;
  if ((window_ms >= 0 || window_max >= 0) && !power)
    return cli_usage_error("profile", "%s needs --power",
                           window_ms >= 0 ? "--power-window" : "--windows-per-config");
  if (window_ms < 0) window_ms = PROF_WINDOW_MS_DEFAULT;
  if (window_max < 0) window_max = 0;
  if (i >= argc) return cli_usage_error("profile", "no program given (kcast profile [OPTIONS] -- PROGRAM [ARGS])");
  if ((app && !*app) || (gpu && !*gpu) || !*db_path)
    return cli_usage_error("profile", "--app, --gpu and -o need non-empty values");
  char **prog = argv + i;
  int pargc = argc - i;

  /* 1. Preconditions: a GPU, the injection library, a sane DB. */
  char why[256];
  if (gpu_present(why, sizeof why) < 0) {
    cli_error("no CUDA device found (%s); nothing run, nothing written", why);
    return KCAST_EXIT_USER;
  }
  char inject[PATH_MAX + 32];
  if (find_inject(inject, sizeof inject) < 0) {
    cli_error("injection library not found (%s); build it with make", inject);
    return KCAST_EXIT_USER;
  }
  struct stat sb;
  if (stat(db_path, &sb) == 0) {
    char err[1024];
    ds_db *db = NULL;
    if (ds_open(db_path, 0, &db, err, sizeof err) < 0) {
      cli_error("%s", err);
      return KCAST_EXIT_USER;
    }
    ds_close(db);
  }

  char app_buf[1024], ds_buf[8192];
  prof_default_keys(pargc, prog, app_buf, sizeof app_buf, ds_buf, sizeof ds_buf);
  if (!app) app = app_buf;
  if (!dataset) dataset = ds_buf;
  if (!*app) return cli_usage_error("profile", "empty program name");

  /* 2. Run. */
  const char *tmpdir = getenv("TMPDIR");
  char dir[PATH_MAX], records[PATH_MAX + 32];
  snprintf(dir, sizeof dir, "%s/kcast-profile-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
  if (!mkdtemp(dir)) {
    cli_error("cannot create a temporary folder %s: %s", dir, strerror(errno));
    return KCAST_EXIT_USER;
  }
  snprintf(records, sizeof records, "%s/records.txt", dir);
  int status = run_program(prog, inject, records, repeat, power, window_ms, window_max);
  int rc = KCAST_EXIT_USER;
  prof_records r;
  memset(&r, 0, sizeof r);
  char err[2048];
  if (status < 0) goto out;
  if (access(records, F_OK) != 0) {
    cli_error("%s ran (exit status %d) but no profile records came back "
              "(no CUDA initialisation, an early _exit or crash, or the injection "
              "library failed: see its 'kcast-inject:' lines above); nothing written",
              prog[0], status);
    goto out;
  }
  /* 3. Read. */
  if (prof_records_read(records, &r, err, sizeof err) < 0) {
    cli_error("%s", err);
    goto out;
  }
  if (r.nkernels == 0) {
    cli_error("%s ran (exit status %d) but no kernel records came back "
              "(%lld launch calls seen); nothing written",
              prog[0], status, (long long)r.launches);
    goto out;
  }
  /* --kernel, --launch-skip, --launch-count */
  size_t nlaunch = 0;
  long taken = -2;
  if (cli_filter_active(&flt)) {
    taken = prof_records_keep(&r, filter_take, &flt, &nlaunch);
    cli_filter_free(&flt);
    if (taken < 0) {
      cli_error("out of memory");
      goto out;
    }
    if (taken == 0) {
      cli_error("none of the %zu launches of %s was selected by --kernel/--launch-skip/"
                "--launch-count; nothing written", nlaunch, prog[0]);
      goto out;
    }
  }
  /* 4. Write. */
  char *cmdline = join_args(argc + 1, argv - 1);
  prof_keys k = {app, dataset, gpu, bench, cmdline, power, rep_offset, NULL, NULL};
  prof_summary sum;
  ds_db *db = NULL;
  if (ds_open(db_path, DS_CREATE, &db, err, sizeof err) < 0) {
    cli_error("%s", err);
    free(cmdline);
    goto out;
  }
  if (prof_ingest(db, &r, &k, &sum, err, sizeof err) < 0) {
    cli_error("%s: %s", db_path, err);
    ds_close(db);
    free(cmdline);
    goto out;
  }
  ds_close(db);
  free(cmdline);
  fprintf(stderr, "kcast profile: %zu launches (%zu new) of %s, %zu times", sum.launches,
          sum.created, app, sum.times);
  if (power)
  {
    fprintf(stderr, ", power for %zu (%zu over power windows, %zu without samples)", sum.powers,
            sum.windows, sum.unattributed);
    if (sum.energy_step_ms > 0)
      fprintf(stderr, ", energy counter steps every %.1f ms", sum.energy_step_ms);
  }
  if (sum.lowconf) fprintf(stderr, ", %zu low-confidence rows", sum.lowconf);
  if (sum.unmatched) fprintf(stderr, ", %zu kernel records without a launch call", sum.unmatched);
  if (taken >= 0) fprintf(stderr, ", %ld of %zu launches selected", taken, nlaunch);
  fprintf(stderr, " on %s -> %s\n", sum.gpu, db_path);
  rc = status ? status : KCAST_EXIT_OK;
out:
  prof_records_free(&r);
  unlink(records);
  rmdir(dir);
  return status > 0 ? status : rc;
}
