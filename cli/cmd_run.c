/*
 * cmd_run.c -- `kcast run`: run an unmodified CUDA program on the CPU and
 * store every kernel launch's dynamic features in a dataset; `kcast nvcc`:
 * build a program so that it can be run that way.
 *
 * How: the program (nvcc-built with -cudart shared) starts with
 * LD_LIBRARY_PATH naming the folder of kcast's libcudart.so.13 first
 * ($(BUILD)/cudart next to the kcast binary, PREFIX/lib/kcast/cudart for
 * an installed one; KCAST_CUDART overrides), so the replacement
 * (runtime/cudart/) serves its CUDA calls on the emulator and appends a
 * record per launch to the records file (KCAST_RUN_OUT).
 *
 * Order matters for "nothing written unless it worked":
 *  1. check the library is there and that DB can be written (an existing
 *     one is a writable dataset, a new one's folder takes files) before
 *     the program runs;
 *  2. run the program; stdout, stderr and exit status pass through;
 *     --timeout kills it after S seconds;
 *  3. a program killed by a signal (crash, kill -9) leaves the dataset
 *     untouched, and kcast says so; one killed by --timeout has its
 *     finished launches written (a torn last record dropped) and the run
 *     marked partial (ds_mark_partial: how far it got); records the
 *     library could not write (a full disk: rt_status.records_errno) leave
 *     it untouched too; otherwise (any exit status) the records are read;
 *  4. all launches are written in one transaction, keyed (app, dataset,
 *     lseq) exactly like `kcast profile` (prof_default_keys), waiting up
 *     to --lock-wait seconds for other writers; when that still fails they
 *     go to a new dataset next to DB (DB.pending-PID.db) for `kcast
 *     dataset merge`, and kcast says so and exits 1.
 * A summary (kernel, launches, CTAs emulated of the grids', thread-
 * instructions, emulation seconds; tolerated out-of-bounds accesses; data
 * races under --racecheck) goes to stderr.  The exit status says whether
 * a launch failed (exit_status), else whether a race was found.
 *
 * --racecheck (KCAST_RUN_RACECHECK=1 to the library) turns on the
 * emulator's race check in every launch.  A race does not fail the launch
 * -- the program ran and gets the answer the emulator's order gave, as it
 * would get one of the possible answers on a GPU -- but each racing
 * launch is named on stderr by the library, recorded with emu.races and a
 * `race` record, summarised here, and the run exits 5 so that scripts
 * notice.
 *
 * The out-of-bounds policy defaults to warn: kcast run collects features
 * of programs that run on GPUs, and a GPU does not notice a read a few
 * bytes past a buffer (allocations are carved from 2 MiB pages), while
 * failing the launch there would lose its features and poison the
 * program's context for every later call -- the rest of the run's
 * features too.  Nothing is silent: each such launch carries
 * emu.oob_accesses, the first access is named on stderr, and --oob error
 * restores the strict check.
 *
 * Nothing outlives kcast run (run_child): the program runs in its own
 * process group (with the terminal when kcast has it), SIGINT, SIGTERM,
 * SIGHUP and SIGQUIT are forwarded to that group (SIGKILL after 5 s more),
 * and the program gets SIGKILL when kcast dies (a parent-death signal, so
 * kill -9 too).  The program's own children do not inherit that signal,
 * so a watcher (a small child of kcast, outside the group, blocked on a
 * pipe only kcast holds) kills the whole group when the pipe closes
 * without a word: kcast died, of whatever.  kcast is the subreaper of the
 * program's descendants; processes the program leaves running in its
 * group when it exits get RUN_GRACE_S to end (their launch records are
 * still being written), then are killed, and kcast says so.  No scratch has a name (run_scratch): the records file is
 * created unlinked in the temporary folder (O_TMPFILE, else mkstemp +
 * unlink) and the status page is memory (memfd), both inherited and named
 * to the program as /proc/self/fd/N, so nothing stays in the temporary
 * folder whatever ends the run.  kcast itself, interrupted, cleans up and
 * dies of the same signal.
 */
#include "cli/cli.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "datasets/ds.h"
#include "profiler/prof.h"
#include "runtime/rt.h"

const char cmd_run_usage[] =
    "usage: kcast run [-o DB] [--app NAME] [--dataset LABEL] [--bench LABEL]\n"
    "                 [--sample CTAS] [--threads N] [--timeout SECONDS]\n"
    "                 [--oob error|warn] [--racecheck] [--keep-going]\n"
    "                 [--lock-wait SECS] [--kernel REGEX | -k NAME]\n"
    "                 [--launch-skip N] [--launch-count N]\n"
    "                 [--summary FILE [--format csv|json]] -- PROGRAM [ARGS]\n"
    "\n"
    "Run a CUDA program on the CPU: kcast's libcudart.so.13 replaces the CUDA\n"
    "runtime and every kernel launch runs on the PTX emulator.  Each launch's\n"
    "dynamic features (docs/features.md) go to the dataset, keyed (app,\n"
    "dataset, lseq) like `kcast profile`, in one transaction after the program\n"
    "exits.  The program must be linked with -cudart shared and carry PTX:\n"
    "build it with `kcast nvcc`.\n"
    "\n"
    "  -o DB            dataset to write (default kcast.db; created if missing or\n"
    "                   empty)\n"
    "  --app NAME       app key (default: the program's file name)\n"
    "  --dataset LABEL  input label (default: the arguments joined by spaces)\n"
    "  --bench LABEL    suite label stored with the launches\n"
    "  --sample CTAS    emulate this many CTAs per launch and scale the counts\n"
    "                   ('auto': as many as the counts' precision needs, as for\n"
    "                   emulate)\n"
    "                   (the program's results are then wrong: its own checks\n"
    "                   may fail; the features are still recorded)\n"
    "  --threads N      OpenMP threads per launch (default: OpenMP's default; a\n"
    "                   launch too small to pay for them runs on one); idle\n"
    "                   threads sleep between launches (OMP_WAIT_POLICY=passive\n"
    "                   unless OMP_WAIT_POLICY or GOMP_SPINCOUNT is set)\n"
    "  --timeout SECS   stop the program after SECS seconds: the running launch\n"
    "                   is recorded from its CTAs that finished (emu.partial),\n"
    "                   the launches before it as they are, the run is marked\n"
    "                   partial and the program killed\n"
    "  --oob warn       (default) what a GPU lets through is tolerated: a global\n"
    "                   access in the 2 MiB pages the buffers map (it reads what\n"
    "                   is there, zeros until written), to freed memory (zeros,\n"
    "                   dropped), shared memory past the CTA's window, a bad\n"
    "                   texture handle (zeros); the launch is recorded with\n"
    "                   emu.oob_accesses, the first one is named on stderr\n"
    "  --oob error      such an access fails the launch (cudaErrorIllegalAddress)\n"
    "  --racecheck      look for data races in every launch: two CTAs of a launch\n"
    "                   accessing the same global bytes, one writing, or two warps\n"
    "                   of a CTA doing so in shared memory with no barrier between\n"
    "                   (plain loads and stores; atomics and volatile accesses are\n"
    "                   not races); a race does not fail the launch (the program\n"
    "                   gets the answer the emulator's order gives), its launch is\n"
    "                   recorded with emu.races, the first race is named on\n"
    "                   stderr (kernel, CTA, thread, line, address, the other CTA\n"
    "                   or warp) and the run exits 5; with --sample only the CTAs\n"
    "                   run are checked against each other\n"
    "  --keep-going     a failed launch or an unsupported call does not change\n"
    "                   the exit status\n"
    "  --lock-wait SECS wait up to SECS seconds for other writers of DB\n"
    "                   (default 600); if DB still cannot be written, the\n"
    "                   launches go to DB.pending-PID.db beside it, for\n"
    "                   `kcast dataset merge DB DB.pending-PID.db` (exit 1)\n"
    "  --kernel REGEX   store only launches of kernels whose mangled name or\n"
    "                   demangled signature matches REGEX (POSIX extended)\n"
    "  -k, --kernel-name NAME  as Nsight Compute's: only launches of the kernel\n"
    "                   named NAME exactly (mangled, demangled signature or source\n"
    "                   name, gemm_tiled_kernel<16>), or with regex:EXPR as --kernel\n"
    "  --launch-skip N  pass over the first N matching launches\n"
    "  --launch-count N store at most N matching launches (every launch still\n"
    "                   runs: the program needs its results)\n"
    "  --summary FILE   also write the per-kernel summary to FILE (- for standard\n"
    "                   output): CSV, or with --format json one object that also\n"
    "                   holds the run's keys, its counts, the launches not\n"
    "                   recorded (kernel, lseq, why) and the unsupported calls\n"
    "\n"
    "Every process of the program is recorded: a child it forks and a program it\n"
    "execs continue its launch sequence.  Exit status: the program's when it is\n"
    "not 0; else 4 when a launch was not recorded (a bad access, a failed\n"
    "assertion, a trap, a refused configuration, a kernel kcast could not load:\n"
    "each kernel is named with why; the program saw the CUDA error a GPU\n"
    "returns) unless --keep-going, or when processes the program left running\n"
    "had to be killed 5 s after it exited (the run is marked partial); else 6\n"
    "when the program called a CUDA runtime function kcast does not implement\n"
    "(CUDA graphs, IPC, interop, the driver API, ...: each named on stderr as\n"
    "'unsupported: NAME'; it returned cudaErrorNotSupported) unless\n"
    "--keep-going; else 5 when --racecheck found a data race; else 0.\n"
    "docs/runtime.md lists what the CUDA runtime replacement supports.\n"
    "A program killed by --timeout exits 137.  A program killed by a signal\n"
    "otherwise (a crash, kill) leaves the dataset as it was.  DB must be writable before the program starts.  Killing kcast run\n"
    "(SIGINT, SIGTERM, SIGHUP, SIGQUIT; SIGKILL too) ends the program with it\n"
    "and leaves nothing behind.  On a terminal (or in a log with --progress),\n"
    "stderr shows the launches done, the kernel running and the emulation rate\n"
    "while the program runs; --quiet turns that off.\n";

const char cmd_nvcc_usage[] =
    "usage: kcast nvcc NVCC-ARGS...\n"
    "\n"
    "Run nvcc ($NVCC, default nvcc) with what makes the program runnable by\n"
    "`kcast run`: -cudart shared (unless -cudart is given), --no-compress,\n"
    "-lineinfo (line information, so that kcast run names the source line of a\n"
    "fault; unless -lineinfo or -G is given), and unless an -arch, -gencode or\n"
    "-code option is given, machine code for every GPU generation from sm_70 to\n"
    "sm_90 that this nvcc makes (`nvcc --list-gpu-code`; CUDA 13: sm_75, sm_80,\n"
    "sm_86, sm_89, sm_90) and compute_90 PTX for newer GPUs and the emulator, so\n"
    "the program runs on a T4, A100, A10, L4 or H100 node alike.  nvcc's output\n"
    "and exit status pass through.  nvcc runs its stages through a shell, so an\n"
    "argument holding $, `, \", \\ or a newline is refused.\n";

/* Folder holding kcast's libcudart.so.13, or -1. */
static int find_cudart(char *out, size_t cap) {
  const char *env = getenv("KCAST_CUDART");
  char self[PATH_MAX];
  if (env && *env) {
    snprintf(out, cap, "%s", env);
  } else {
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return -1;
    self[n] = 0;
    char *slash = strrchr(self, '/');
    if (slash) *slash = 0;
    /* the build folder (cudart/ beside kcast), then an installed tree
       (PREFIX/bin/kcast, PREFIX/lib/kcast/cudart/) */
    static const char *const where[] = {"/cudart", "/../lib/kcast/cudart"};
    for (int k = 0; k < 2; k++) {
      if ((size_t)snprintf(out, cap, "%s%s", self, where[k]) >= cap) return -1;
      char lib[PATH_MAX + 64];
      snprintf(lib, sizeof lib, "%s/libcudart.so.13", out);
      if (access(lib, R_OK) == 0) return 0;
    }
    if ((size_t)snprintf(out, cap, "%s/cudart", self) >= cap) out[0] = 0;
    return -1;
  }
  char lib[PATH_MAX + 32];
  snprintf(lib, sizeof lib, "%s/libcudart.so.13", out);
  return access(lib, R_OK) == 0 ? 0 : -1;
}

static int parse_count(const char *s, long long lo, long long hi, long long *out) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || !*s || *end || v < lo || v > hi) return -1;
  *out = v;
  return 0;
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* ------------------------------------------------ the launch records -- */

/*
 * The run's scratch, none of it with a name: the records file the program
 * appends to (created unlinked in the temporary folder) and the status
 * page (memory).  The program inherits both descriptors and opens them
 * as /proc/self/fd/N (RT_ENV_OUT, RT_ENV_STATUS), so whatever ends the
 * run -- kill -9 of kcast included -- nothing remains once the program is
 * gone.
 */
typedef struct run_scratch {
  int fd;                      /* records file, -1 when none */
  int status_fd;               /* status page (memfd), -1 when none */
  char where[PATH_MAX];        /* the folder of the records, for messages */
  char records[64], status[64];/* their /proc/self/fd names */
} run_scratch;

static void scratch_close(run_scratch *sc) {
  if (sc->fd >= 0) close(sc->fd);
  if (sc->status_fd >= 0) close(sc->status_fd);
  sc->fd = sc->status_fd = -1;
}

static int scratch_open(run_scratch *sc) {
  sc->fd = sc->status_fd = -1;
  const char *tmpdir = getenv("TMPDIR");
  snprintf(sc->where, sizeof sc->where, "%s", tmpdir && *tmpdir ? tmpdir : "/tmp");
  int fd = open(sc->where, O_TMPFILE | O_RDWR | O_APPEND, 0600);
  if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
    char name[PATH_MAX + 32];
    snprintf(name, sizeof name, "%s/kcast-run-XXXXXX", sc->where);
    fd = mkstemp(name);
    if (fd >= 0) {
      unlink(name);
      fcntl(fd, F_SETFL, O_APPEND);
    }
  }
  if (fd < 0) {
    cli_error("cannot create the launch records in %s: %s", sc->where, strerror(errno));
    return -1;
  }
  sc->fd = fd;
  if ((sc->status_fd = memfd_create("kcast-run-status", 0)) < 0 ||
      ftruncate(sc->status_fd, sizeof(rt_status)) < 0) {
    cli_error("cannot create the run's status page: %s", strerror(errno));
    scratch_close(sc);
    return -1;
  }
  snprintf(sc->records, sizeof sc->records, "/proc/self/fd/%d", sc->fd);
  snprintf(sc->status, sizeof sc->status, "/proc/self/fd/%d", sc->status_fd);
  return 0;
}

/* Read the records back (after the program exited). */
static int scratch_read(run_scratch *sc, rt_records *r, unsigned flags, char *err, size_t cap) {
  char name[PATH_MAX + 32];
  snprintf(name, sizeof name, "launch records (in %s)", sc->where);
  int fd = dup(sc->fd);
  FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
  if (!f) {
    if (fd >= 0) close(fd);
    snprintf(err, cap, "%.1000s: %s", name, strerror(errno));
    return -1;
  }
  rewind(f);
  int rc = rt_records_read_file(f, name, r, flags, err, cap);
  fclose(f);
  return rc;
}

/* --------------------------------------------------- the program's run -- */

/* Signals that end kcast run; they are forwarded to the program's group. */
static const int fwd_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define NFWD (sizeof fwd_signals / sizeof fwd_signals[0])
static volatile sig_atomic_t got_signal; /* the last one kcast received, 0 = none */
static volatile pid_t child_group;       /* the program's process group, 0 = none */
/* After forwarding a signal, how long the program may take to end. */
#define RUN_GRACE_S 5.0
/* After --timeout asked the library to stop the running launch: how long
   it has to record it and exit before SIGKILL. */
#define STOP_GRACE_S 2.0

/* Set the status page's stop flag (the library's running launch ends, as
   at a time limit, and is recorded from its finished CTAs); 1 when set. */
static int stop_launches(const run_scratch *sc) {
  if (sc->status_fd < 0) return 0;
  rt_status *st = mmap(NULL, sizeof *st, PROT_READ | PROT_WRITE, MAP_SHARED, sc->status_fd, 0);
  if (st == MAP_FAILED) return 0;
  __atomic_store_n(&st->stop, 1, __ATOMIC_RELEASE);
  munmap(st, sizeof *st);
  return 1;
}

static void on_signal(int sig) {
  got_signal = sig;
  if (child_group > 0) kill(-child_group, sig);
}

/* Give the terminal on stdin to process group g (kcast is a background
   group while the program has it: SIGTTOU must not stop it). */
static void tty_give(pid_t g) {
  sigset_t ttou, old;
  sigemptyset(&ttou);
  sigaddset(&ttou, SIGTTOU);
  sigprocmask(SIG_BLOCK, &ttou, &old);
  if (tcsetpgrp(STDIN_FILENO, g) < 0) { /* no longer ours: nothing to give */ }
  sigprocmask(SIG_SETMASK, &old, NULL);
}

/* Die of sig, as kcast was asked to, once everything is cleaned up. */
static void die_of(int sig) {
  fflush(stdout);
  signal(sig, SIG_DFL);
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, sig);
  sigprocmask(SIG_UNBLOCK, &one, NULL);
  raise(sig);
  _exit(128 + sig);
}

/*
 * The watcher of process group g: a child of kcast, outside the group,
 * that blocks reading a pipe whose only write end kcast keeps.  kcast ends
 * it with one byte (unwatch_group); the pipe closing without one means
 * kcast died (kill -9 too), and the watcher kills the group.  Returns the
 * write end, -1 when no watcher could be started (the parent-death signal
 * of the program still holds).
 */
static pid_t watcher_pid;
static int watch_group(pid_t g) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) < 0) return -1;
  pid_t w = fork();
  if (w < 0) {
    close(p[0]);
    close(p[1]);
    return -1;
  }
  if (w == 0) {
    /* async-signal-safe calls only (kcast may have threads) */
    static const int quiet[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP, SIGTTIN, SIGTTOU};
    for (size_t k = 0; k < sizeof quiet / sizeof *quiet; k++) signal(quiet[k], SIG_IGN);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    close(p[1]);
    char c;
    ssize_t r;
    while ((r = read(p[0], &c, 1)) < 0 && errno == EINTR) {}
    if (r <= 0) kill(-g, SIGKILL);
    _exit(0);
  }
  close(p[0]);
  watcher_pid = w;
  return p[1];
}

static void unwatch_group(int wfd) {
  if (wfd < 0) return;
  /* a watcher that is gone (killed) makes the write EPIPE: no SIGPIPE */
  sigset_t pipe_sig, old;
  sigemptyset(&pipe_sig);
  sigaddset(&pipe_sig, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_sig, &old);
  ssize_t r;
  while ((r = write(wfd, "q", 1)) < 0 && errno == EINTR) {}
  if (r < 0) {
    struct timespec zero = {0, 0};
    while (sigtimedwait(&pipe_sig, NULL, &zero) < 0 && errno == EINTR) {}
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  close(wfd);
  while (watcher_pid > 0 && waitpid(watcher_pid, NULL, 0) < 0 && errno == EINTR) {}
  watcher_pid = 0;
}

/* Reap what is left of group g (zombies of its processes, kcast being
   their subreaper). */
static void reap_group(pid_t g) {
  while (waitpid(-g, NULL, WNOHANG) > 0) {}
}

/* After the program exited: processes it left running in its group get
   RUN_GRACE_S to end (a forked child still launching), then are killed;
   returns how many were still running then (0: none left). */
static int end_leftovers(pid_t g, const char *prog) {
  double t0 = now_s();
  for (;;) {
    reap_group(g);
    if (kill(-g, 0) < 0) return 0; /* none left */
    if (now_s() - t0 >= RUN_GRACE_S) break;
    struct timespec nap = {0, 10 * 1000 * 1000};
    nanosleep(&nap, NULL);
  }
  int n = 0;
  for (pid_t w; (w = waitpid(-g, NULL, WNOHANG)) > 0;) {}
  kill(-g, SIGKILL);
  for (double t1 = now_s(); now_s() - t1 < RUN_GRACE_S;) {
    pid_t w = waitpid(-g, NULL, WNOHANG);
    if (w > 0) { n++; continue; }
    if (w < 0 && errno == ECHILD) break;
    struct timespec nap = {0, 5 * 1000 * 1000};
    nanosleep(&nap, NULL);
  }
  cli_error("%s left %s running %.0f s after it exited; %s killed (launches they had not "
            "finished are not recorded)", prog, n == 1 ? "a process" : "processes", RUN_GRACE_S,
            n == 1 ? "it was" : "they were");
  return n ? n : 1;
}

/*
 * Run prog in its own process group; *sig = the signal that ended it (0 =
 * exited), *timed_out, *killed = the signal kcast itself received (the
 * program was then told too).  Returns the exit status, or -1 when it could
 * not be started.
 */
static int run_child(char **prog, const char *libdir, const run_scratch *sc, long long sample,
                     long long threads, double timeout, int *sig, int *timed_out, int *killed,
                     int *left, int *not_started) {
  *not_started = 0;
  *sig = 0;
  *timed_out = 0;
  *killed = 0;
  *left = 0;
  /* orphans of the program become kcast's children, so its group can be
     reaped and nothing is left to init */
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  got_signal = 0;
  /* Handlers first, with the signals blocked until the child's group is
     known, so that none is lost or hits a half-made child. */
  sigset_t block, old;
  sigemptyset(&block);
  for (size_t k = 0; k < NFWD; k++) sigaddset(&block, fwd_signals[k]);
  sigprocmask(SIG_BLOCK, &block, &old);
  struct sigaction sa, saved[NFWD];
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sa.sa_mask = block;
  for (size_t k = 0; k < NFWD; k++) {
    sigaction(fwd_signals[k], NULL, &saved[k]);
    /* A signal kcast was started ignoring (nohup, a background job's
       SIGINT) stays ignored, for kcast and the program alike. */
    if (saved[k].sa_handler != SIG_IGN) sigaction(fwd_signals[k], &sa, NULL);
  }
  int tty = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
  double t_stop = 0; /* when the stop flag was set, 0 when not */
  pid_t parent = getpid();
  fflush(stdout);
  fflush(stderr);
  /* the program's exec failing comes back as its errno on this pipe (it
     closes on a successful exec): one message, not a second about a
     library the program never loaded */
  int ep[2] = {-1, -1};
  if (pipe2(ep, O_CLOEXEC) < 0) ep[0] = ep[1] = -1;
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    if (ep[0] >= 0) close(ep[0]), close(ep[1]);
    for (size_t k = 0; k < NFWD; k++) sigaction(fwd_signals[k], &saved[k], NULL);
    sigprocmask(SIG_SETMASK, &old, NULL);
    cli_error("cannot fork: %s", strerror(e));
    return -1;
  }
  if (pid == 0) {
    for (size_t k = 0; k < NFWD; k++) sigaction(fwd_signals[k], &saved[k], NULL);
    setpgid(0, 0);
    if (tty) tty_give(getpid());
    sigprocmask(SIG_SETMASK, &old, NULL);
    /* Die with kcast, even of SIGKILL; it may have died already. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    const char *oldpath = getenv("LD_LIBRARY_PATH");
    char *path = NULL, num[32];
    if (asprintf(&path, "%s%s%s", libdir, oldpath && *oldpath ? ":" : "",
                 oldpath ? oldpath : "") < 0)
      _exit(127);
    setenv("LD_LIBRARY_PATH", path, 1);
    setenv(RT_ENV_OUT, sc->records, 1);
    setenv(RT_ENV_STATUS, sc->status, 1);
    if (sample) {
      if (sample < 0) snprintf(num, sizeof num, "auto");
      else snprintf(num, sizeof num, "%lld", sample);
      setenv(RT_ENV_SAMPLE, num, 1);
    }
    if (threads > 0) {
      snprintf(num, sizeof num, "%lld", threads);
      setenv(RT_ENV_THREADS, num, 1);
    }
    /* The emulator's OpenMP team waits for the next launch asleep, not
       spinning: a program of many small launches left the worker spinning
       between them, on a loaded machine taking the core the launching
       thread needed.  A policy the user set stays. */
    if (!getenv("OMP_WAIT_POLICY") && !getenv("GOMP_SPINCOUNT")) setenv("OMP_WAIT_POLICY", "passive", 0);
    execvp(prog[0], prog);
    int e = errno;
    if (ep[1] >= 0) {
      ssize_t w = write(ep[1], &e, sizeof e);
      (void)w;
    } else {
      fprintf(stderr, "kcast: cannot run %s: %s\n", prog[0], strerror(e));
    }
    _exit(127);
  }
  if (ep[1] >= 0) close(ep[1]);
  setpgid(pid, pid); /* also here: whichever runs first */
  child_group = pid;
  int wfd = watch_group(pid);
  sigprocmask(SIG_SETMASK, &old, NULL);
  if (ep[0] >= 0) {
    int e = 0;
    ssize_t n;
    while ((n = read(ep[0], &e, sizeof e)) < 0 && errno == EINTR) {}
    close(ep[0]);
    if (n == (ssize_t)sizeof e) {
      int st;
      while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
      reap_group(pid);
      child_group = 0;
      unwatch_group(wfd);
      if (tty) tty_give(getpgrp());
      for (size_t k = 0; k < NFWD; k++) sigaction(fwd_signals[k], &saved[k], NULL);
      cli_error("cannot run %s: %s (nothing run)", prog[0], strerror(e));
      *not_started = 1;
      return 127;
    }
  }
  double t0 = now_s(), told = 0;
  int st = 0, rc = 0;
  for (;;) {
    pid_t r = waitpid(pid, &st, WNOHANG | WUNTRACED);
    if (r == pid && WIFSTOPPED(st)) {
      /* ^Z on the terminal stopped the program: stop kcast too, and give
         the program the terminal back when the shell continues kcast. */
      if (tty) {
        tty_give(getpgrp());
        raise(SIGSTOP);
        tty_give(pid);
        kill(-pid, SIGCONT);
      }
      continue;
    }
    if (r == pid) break;
    if (r < 0 && errno != EINTR) {
      cli_error("waiting for %s: %s", prog[0], strerror(errno));
      rc = -1;
      break;
    }
    double t = now_s();
    if (got_signal && !told) told = t;
    if (told && t - told >= RUN_GRACE_S) {
      kill(-pid, SIGKILL); /* asked to end and did not */
      told = t + 1e9;
    }
    if (timeout > 0 && t - t0 >= timeout) {
      /* first ask the library to stop the running launch, so that it is
         recorded from the CTAs that finished; SIGKILL after a grace */
      if (stop_launches(sc)) t_stop = t;
      else kill(-pid, SIGKILL);
      *timed_out = 1;
      timeout = 0; /* now wait for it */
    }
    if (t_stop > 0 && t - t_stop >= STOP_GRACE_S) {
      kill(-pid, SIGKILL);
      t_stop = 0;
    }
    struct timespec nap = {0, 10 * 1000 * 1000};
    nanosleep(&nap, NULL);
  }
  if (got_signal || *timed_out) kill(-pid, SIGKILL); /* what the program left running */
  else if (rc == 0) *left = end_leftovers(pid, prog[0]);
  reap_group(pid);
  child_group = 0;
  unwatch_group(wfd);
  if (tty) tty_give(getpgrp());
  for (size_t k = 0; k < NFWD; k++) sigaction(fwd_signals[k], &saved[k], NULL);
  *killed = got_signal;
  if (rc < 0) return -1;
  if (*timed_out) { /* however it ended after the stop: the status --timeout gives */
    *sig = SIGKILL;
    return 128 + SIGKILL;
  }
  if (WIFSIGNALED(st)) {
    *sig = WTERMSIG(st);
    return 128 + *sig;
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
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

/* ---------------------------------------------------------- progress -- */

/*
 * While the program runs: on a terminal, one line on stderr redrawn four
 * times a second once a second has passed -- launches done, the kernel
 * running, thread-instructions and their rate -- read from the status page
 * the replacement library updates (runtime/rt.h, rt_status); with
 * --progress and stderr not a terminal, the same as a whole line every
 * CLI_PROGRESS_LOG_S seconds (a log); nothing otherwise, or with --quiet.
 * A thread of its own, so the wait for the program is not involved.
 */
typedef struct progress {
  const rt_status *st;   /* mapped status page, NULL: no progress */
  pthread_t th;
  int started;
  int stop;              /* atomic: the program ended */
  double t0;
} progress;

/* A consistent copy of the status page (0), or -1 after a few torn reads. */
static int status_read(const rt_status *st, rt_status *out) {
  for (int tries = 0; tries < 8; tries++) {
    uint64_t s1 = __atomic_load_n(&st->seq, __ATOMIC_ACQUIRE);
    if (s1 & 1) continue;
    memcpy(out, (const void *)st, sizeof *out);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (__atomic_load_n(&st->seq, __ATOMIC_ACQUIRE) == s1) return 0;
  }
  return -1;
}

static void human(double v, char *buf, size_t cap) {
  static const char *const unit[] = {"", "k", "M", "G", "T"};
  int u = 0;
  while (v >= 1000 && u < 4) v /= 1000, u++;
  snprintf(buf, cap, u ? "%.1f %s" : "%.0f", v, unit[u]);
}

static void *progress_fn(void *arg) {
  progress *p = arg;
  int shown = 0, lines = cli_progress_style() == CLI_PROGRESS_LINES;
  double last_t = p->t0, rate = 0, last_line = 0;
  uint64_t last_insns = 0;
  while (!__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE)) {
    struct timespec nap = {0, 250 * 1000 * 1000};
    nanosleep(&nap, NULL);
    double t = now_s();
    rt_status s;
    if (t - p->t0 < 1.0 || status_read(p->st, &s) < 0) continue;
    if (lines && last_line > 0 && t - last_line < CLI_PROGRESS_LOG_S) continue;
    uint64_t insns = s.insns_done + s.insns_now;
    if (t > last_t) rate = (double)(insns - last_insns) / (t - last_t);
    last_t = t;
    last_insns = insns;
    char ni[32], nr[32], cur[96] = "between launches";
    human((double)insns, ni, sizeof ni);
    human(rate, nr, sizeof nr);
    if (s.lseq >= 0)
      snprintf(cur, sizeof cur, "launch %" PRId64 " %.40s", s.lseq, s.kernel);
    fprintf(stderr, "%skcast run: %" PRIu64 " launches done%s, %s, %s thread-insns, %s/s, %.0f s%s",
            lines ? "" : "\r", s.launches, s.failed ? " (some failed)" : "", cur, ni, nr,
            t - p->t0, lines ? "\n" : "\033[K");
    fflush(stderr);
    shown = 1;
    last_line = t;
  }
  if (shown && !lines) {
    fputs("\r\033[K", stderr);
    fflush(stderr);
  }
  return NULL;
}

/* Map the status page (fd, sizeof(rt_status) bytes: run_scratch) for
   reading (0), and start the display when stderr is a terminal. */
static int progress_start(progress *p, int fd) {
  memset(p, 0, sizeof *p);
  void *m = mmap(NULL, sizeof(rt_status), PROT_READ, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED) return -1;
  p->st = m;
  p->t0 = now_s();
  if (cli_progress_style() != CLI_PROGRESS_NONE)
    p->started = pthread_create(&p->th, NULL, progress_fn, p) == 0;
  return 0;
}

static void progress_stop(progress *p) {
  if (p->started) {
    __atomic_store_n(&p->stop, 1, __ATOMIC_RELEASE);
    pthread_join(p->th, NULL);
  }
  p->started = 0;
}

static void progress_free(progress *p) {
  progress_stop(p);
  if (p->st) munmap((void *)p->st, sizeof(rt_status));
  p->st = NULL;
}

/* ---------------------------------------------------------- selection -- */

/* Reorder r's launches so the ones f takes come first (in launch order);
   returns how many. */
static size_t select_launches(rt_records *r, cli_filter *f) {
  size_t k = 0;
  for (size_t i = 0; i < r->n; i++) {
    if (!cli_filter_take(f, r->l[i].kernel)) continue;
    rt_launch_rec t = r->l[i];
    memmove(&r->l[k + 1], &r->l[k], (i - k) * sizeof t);
    r->l[k++] = t;
  }
  return k;
}

/* ----------------------------------------------------------- summary -- */

/* Summary per kernel on stderr, in order of first launch: launches, CTAs
   emulated of the grids' (they differ when sampled), thread-instructions,
   emulation seconds, the demangled name; with csv_path also there (written
   whole or not at all; "-": stdout), as CSV, or with json as one object
   that also holds the run's keys and counts (sj) and the launches not
   recorded by kernel.  -1 when the file could not be written (printed). */
typedef struct summary_run {
  const char *app, *dataset, *db;
  size_t written, selected, total, failed, sampled;
  int status;           /* the program's exit status */
} summary_run;

static int summary(const rt_records *r, const char *csv_path, int json, const summary_run *sj) {
  size_t nk = 0;
  struct row {
    const char *k;
    size_t n;
    double insns, secs, ctas, emulated;
  } *rows = calloc(r->n + 1, sizeof *rows);
  if (!rows) { cli_error("out of memory"); return -1; }
  for (size_t i = 0; i < r->n; i++) {
    const rt_launch_rec *l = &r->l[i];
    if (l->error) continue;
    size_t j = 0;
    while (j < nk && strcmp(rows[j].k, l->kernel)) j++;
    if (j == nk) rows[nk++].k = l->kernel;
    double ctas = (double)l->grid[0] * l->grid[1] * l->grid[2];
    rows[j].n++;
    rows[j].insns += (double)l->insns;
    rows[j].secs += l->seconds;
    rows[j].ctas += ctas;
    rows[j].emulated += feat_get(&l->feats, "emu.ctas_emulated", ctas);
  }
  cli_out o;
  int rc = 0;
  if (csv_path && cli_out_open(&o, csv_path)) rc = -1, csv_path = NULL;
  cJSON *root = NULL, *ka = NULL;
  if (csv_path && json) {
    root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "app", sj->app);
    cJSON_AddStringToObject(root, "dataset", sj->dataset);
    cJSON_AddStringToObject(root, "output", sj->db);
    cJSON_AddNumberToObject(root, "launches_recorded", (double)sj->written);
    cJSON_AddNumberToObject(root, "launches_selected", (double)sj->selected);
    cJSON_AddNumberToObject(root, "launches", (double)sj->total);
    cJSON_AddNumberToObject(root, "launches_not_recorded", (double)sj->failed);
    cJSON_AddNumberToObject(root, "launches_sampled", (double)sj->sampled);
    cJSON_AddNumberToObject(root, "program_status", sj->status);
    ka = cJSON_AddArrayToObject(root, "kernels");
    cJSON *ua = cJSON_AddArrayToObject(root, "unsupported");
    for (size_t i = 0; ua && i < r->nunsup; i++)
      cJSON_AddItemToArray(ua, cJSON_CreateString(r->unsup[i]));
    cJSON *na = cJSON_AddArrayToObject(root, "not_recorded");
    for (size_t i = 0; na && i < r->n; i++) {
      const rt_launch_rec *l = &r->l[i];
      if (!l->error) continue;
      cJSON *e = cJSON_CreateObject();
      cJSON_AddNumberToObject(e, "lseq", (double)l->lseq);
      cJSON_AddStringToObject(e, "kernel", l->kernel);
      cJSON_AddStringToObject(e, "reason", l->error);
      cJSON_AddItemToArray(na, e);
    }
  } else if (csv_path) {
    fputs("kernel,demangled,launches,ctas_emulated,ctas,thread_insns,emu_seconds\n", o.f);
  }
  fprintf(stderr, "%-40s %8s %21s %18s %12s  %s\n", "kernel", "launches", "CTAs emulated/grid",
          "thread-insns", "emu-seconds", "name");
  for (size_t j = 0; j < nk; j++) {
    char c[48], name[512];
    char *d = fe_demangle(rows[j].k);
    fe_demangled_name(d, name, sizeof name);
    snprintf(c, sizeof c, "%.0f/%.0f", rows[j].emulated, rows[j].ctas);
    fprintf(stderr, "%-40s %8zu %21s %18.0f %12.3f  %s\n", rows[j].k, rows[j].n, c,
            rows[j].insns, rows[j].secs, d ? name : rows[j].k);
    if (ka) {
      cJSON *e = cJSON_CreateObject();
      cJSON_AddStringToObject(e, "kernel", rows[j].k);
      cJSON_AddStringToObject(e, "demangled", d ? d : rows[j].k);
      cJSON_AddNumberToObject(e, "launches", (double)rows[j].n);
      cJSON_AddNumberToObject(e, "ctas_emulated", rows[j].emulated);
      cJSON_AddNumberToObject(e, "ctas", rows[j].ctas);
      cJSON_AddNumberToObject(e, "thread_insns", rows[j].insns);
      cJSON_AddNumberToObject(e, "emu_seconds", rows[j].secs);
      cJSON_AddItemToArray(ka, e);
    } else if (csv_path) {
      cli_csv_field(o.f, rows[j].k);
      fputc(',', o.f);
      cli_csv_field(o.f, d ? d : rows[j].k);
      fprintf(o.f, ",%zu,%.0f,%.0f,%.0f,%.6f\n", rows[j].n, rows[j].emulated, rows[j].ctas,
              rows[j].insns, rows[j].secs);
    }
    free(d);
  }
  int ok = 1;
  if (root) {
    char *txt = cJSON_Print(root);
    cJSON_Delete(root);
    if (txt) fprintf(o.f, "%s\n", txt);
    else cli_error("out of memory"), ok = 0;
    free(txt);
  }
  if (csv_path && cli_out_close(&o, ok)) rc = -1;
  if (!ok) rc = -1;
  free(rows);
  return rc;
}

/* Tolerated out-of-bounds accesses (--oob warn): how many launches, how
   many accesses, the first. */
static void oob_note(const rt_records *r) {
  size_t nl = 0;
  double acc = 0;
  const rt_launch_rec *first = NULL;
  for (size_t i = 0; i < r->n; i++) {
    double a = r->l[i].error ? 0 : feat_get(&r->l[i].feats, "emu.oob_accesses", 0);
    if (a <= 0) continue;
    nl++;
    acc += a;
    if (!first) first = &r->l[i];
  }
  if (!nl) return;
  fprintf(stderr, "kcast run: %zu launch%s made %.0f out-of-bounds access%s that a GPU "
          "tolerates (--oob warn: as on a GPU, mapped memory read and written, freed memory "
          "read as zeros; each such launch has "
          "emu.oob_accesses); the first, launch %" PRId64 ": %s\n", nl, nl == 1 ? "" : "es", acc,
          acc == 1 ? "" : "es", first->lseq, first->warn ? first->warn : "?");
}

/* Data races (--racecheck): how many launches, how many racing words, the
   first; 1 when there were any. */
static int race_note(const rt_records *r) {
  size_t nl = 0;
  double words = 0;
  const rt_launch_rec *first = NULL;
  for (size_t i = 0; i < r->n; i++) {
    double a = r->l[i].error ? 0 : feat_get(&r->l[i].feats, "emu.races", 0);
    if (a <= 0) continue;
    nl++;
    words += a;
    if (!first) first = &r->l[i];
  }
  if (!nl) return 0;
  fprintf(stderr, "kcast run: data races (--racecheck) in %zu launch%s: %.0f racing word%s (the "
          "program's answer depends on the order its CTAs or warps run in; each such launch has "
          "emu.races); the first, launch %" PRId64 ": %s\n", nl, nl == 1 ? "" : "es", words,
          words == 1 ? "" : "s", first->lseq, first->race ? first->race : "?");
  return 1;
}

/* The launches that have no features (error records), by kernel, on
   stderr: how many and the first reason each, so a run that lost launches
   says which (a kernel that could not be loaded, a fault, a refusal). */
static void failed_note(const rt_records *r) {
  size_t shown = 0, nk = 0;
  for (size_t i = 0; i < r->n; i++) {
    const rt_launch_rec *l = &r->l[i];
    if (!l->error) continue;
    int seen = 0;
    for (size_t j = 0; j < i && !seen; j++) seen = r->l[j].error && !strcmp(r->l[j].kernel, l->kernel);
    if (seen) continue;
    nk++;
    if (shown == 5) continue;
    size_t n = 0;
    for (size_t j = i; j < r->n; j++) n += r->l[j].error && !strcmp(r->l[j].kernel, l->kernel);
    char name[512];
    char *d = fe_demangle(l->kernel);
    fe_demangled_name(d, name, sizeof name);
    fprintf(stderr, "kcast run: %zu launch%s of %s%s%s%s not recorded; the first, launch %" PRId64
            ": %s\n", n, n == 1 ? "" : "es", l->kernel, d ? " (" : "", d ? name : "", d ? ")" : "",
            l->lseq, l->error);
    free(d);
    shown++;
  }
  if (nk > shown) fprintf(stderr, "kcast run: ... and launches of %zu more kernels\n", nk - shown);
}

/* CUDA runtime calls the program made that kcast does not implement
   (unsupported records): named on stderr; 1 when there were any. */
static int unsupported_note(const rt_records *r) {
  if (!r->nunsup) return 0;
  fprintf(stderr, "kcast run: the program called %zu CUDA runtime function%s that kcast does "
          "not support (each returned cudaErrorNotSupported: the program did not run as on a "
          "GPU):\n", r->nunsup, r->nunsup == 1 ? "" : "s");
  for (size_t i = 0; i < r->nunsup; i++) fprintf(stderr, "  unsupported: %s\n", r->unsup[i]);
  return 1;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

/* Two records of one lseq (processes that did not share the run's
   counter): they would overwrite each other in the dataset.  The first
   such lseq, or -1. */
static int64_t duplicate_lseq(const rt_records *r) {
  int64_t *v = malloc((r->n + 1) * sizeof *v);
  if (!v) return -1;
  for (size_t i = 0; i < r->n; i++) v[i] = r->l[i].lseq;
  qsort(v, r->n, sizeof *v, cmp_i64);
  int64_t dup = -1;
  for (size_t i = 1; i < r->n && dup < 0; i++)
    if (v[i] == v[i - 1]) dup = v[i];
  free(v);
  return dup;
}

/* kcast run's exit status (usage text): the program's when it failed,
   else KCAST_EXIT_LAUNCH when a launch failed and not --keep-going. */
static int exit_status(int status, size_t failed, int keep_going) {
  if (status) return status;
  return failed && !keep_going ? KCAST_EXIT_LAUNCH : KCAST_EXIT_OK;
}

/* Write every launch in one transaction, waiting up to wait_s for the
   lock; a partial run (reason non-NULL) is marked so.  On failure the
   message goes to err (not printed). */
static int ingest(const char *db_path, const rt_records *r, const char *app, const char *dataset,
                  const char *bench, const char *cmdline, const char *partial, double wait_s,
                  size_t *written, char *err, size_t cap) {
  ds_db *db = NULL;
  int64_t run_id = 0;
  *written = 0;
  if (ds_open(db_path, DS_CREATE, &db, err, cap) < 0) return -1;
  ds_set_busy_timeout(db, wait_s * 1000 > INT_MAX ? INT_MAX : (int)(wait_s * 1000));
  if (ds_begin_bulk(db) < 0 || ds_record_run(db, cmdline, &run_id) < 0) goto fail;
  if (partial && ds_mark_partial(db, run_id, partial) < 0) goto fail;
  for (size_t i = 0; i < r->n; i++) {
    const rt_launch_rec *l = &r->l[i];
    if (l->error) continue;
    ds_launch dl = {bench, app, dataset, l->lseq, l->kernel,
                    {l->grid[0], l->grid[1], l->grid[2]},
                    {l->block[0], l->block[1], l->block[2]}, l->shmem, RT_SOURCE};
    if (ds_insert_launch(db, &dl, &l->feats, NULL) < 0) goto fail;
    (*written)++;
  }
  if (ds_commit(db) < 0) goto fail;
  ds_close(db);
  return 0;
fail:
  snprintf(err, cap, "%s", ds_errmsg(db));
  ds_rollback(db);
  ds_close(db);
  *written = 0;
  return -1;
}

/* --------------------------------------------------------- the dataset -- */

/* Can the run's results go to db_path?  Checked before the program runs:
   an existing file must be a dataset that can be written (and its folder
   take SQLite's journal), a new one's folder must exist and take files.
   Prints the error. */
static int check_output(const char *db_path) {
  char err[2048], *copy = strdup(db_path);
  if (!copy) {
    cli_error("out of memory");
    return -1;
  }
  char folder[PATH_MAX];
  snprintf(folder, sizeof folder, "%s", dirname(copy));
  free(copy);
  struct stat sb;
  /* a dataset (a journal an interrupted writer left rolled back first), or
     an empty file, which becomes one as a new file would */
  int state = ds_probe(db_path, err, sizeof err);
  if (state < 0) {
    cli_error("%s (nothing run)", err);
    return -1;
  }
  int exists = state != DS_PROBE_NONE;
  if (exists) {
    if (access(db_path, W_OK) < 0) {
      cli_error("%s: cannot be written: %s (nothing run)", db_path, strerror(errno));
      return -1;
    }
  }
  if (stat(folder, &sb) < 0 || !S_ISDIR(sb.st_mode)) {
    cli_error("%s: cannot be created: folder %s: %s (nothing run)", db_path, folder,
              stat(folder, &sb) < 0 ? strerror(errno) : "not a directory");
    return -1;
  }
  if (access(folder, W_OK | X_OK) < 0) {
    cli_error("%s: cannot be %s: folder %s: %s (nothing run)", db_path,
              exists ? "written (SQLite keeps its journal beside it)" : "created", folder,
              strerror(errno));
    return -1;
  }
  return 0;
}

/*
 * Store the launches in db_path; when that fails (the lock still held after
 * wait_s, a full disk), in a new dataset beside it that `kcast dataset
 * merge` takes.  Prints what happened; 0 only when db_path has them.
 */
static int store(const char *db_path, const rt_records *r, const char *app, const char *dataset,
                 const char *bench, const char *cmdline, const char *partial, double wait_s,
                 size_t *written) {
  char err[2048], err2[2048], side[PATH_MAX + 64];
  if (ingest(db_path, r, app, dataset, bench, cmdline, partial, wait_s, written, err,
             sizeof err) == 0)
    return 0;
  struct stat sb;
  for (int k = 0; k < 100; k++) {
    if (k) snprintf(side, sizeof side, "%s.pending-%ld-%d.db", db_path, (long)getpid(), k);
    else snprintf(side, sizeof side, "%s.pending-%ld.db", db_path, (long)getpid());
    if (stat(side, &sb) < 0) break;
  }
  size_t kept = 0;
  if (ingest(side, r, app, dataset, bench, cmdline, partial, 0, &kept, err2, sizeof err2) == 0) {
    cli_error("%s (waited up to %.0f s); the %zu launches are kept in %s: add them with "
              "`kcast dataset merge %s %s`", err, wait_s, kept, side, db_path, side);
  } else {
    unlink(side);
    cli_error("%s (waited up to %.0f s); nor could they be kept in %s: %s; nothing written",
              err, wait_s, side, err2);
  }
  return -1;
}

/* Why a timed-out run is partial, for the dataset: how far it got. */
static void partial_reason(char *buf, size_t cap, long long timeout, const rt_records *r,
                           const progress *p) {
  rt_status s;
  memset(&s, 0, sizeof s);
  s.lseq = -1;
  int have = p->st && status_read(p->st, &s) == 0;
  int n = snprintf(buf, cap, "timed out after %lld s (--timeout): %zu launches finished", timeout,
                   r->n);
  if (have && s.lseq >= 0 && n > 0 && (size_t)n < cap)
    snprintf(buf + n, cap - (size_t)n, ", launch %" PRId64 " (%s) was running", s.lseq, s.kernel);
}

int cmd_run(int argc, char **argv) {
  const char *db_path = "kcast.db", *app = NULL, *dataset = NULL, *bench = NULL, *oob = "warn";
  long long sample = 0, threads = 0, timeout = 0, lock_wait = 600;
  int keep_going = 0, summary_json = 0, racecheck = 0;
  const char *summary_csv = NULL;
  enum { R_APP = CLI_OPT_OWN, R_DATASET, R_BENCH, R_OOB, R_SAMPLE, R_THREADS, R_TIMEOUT,
         R_LOCK_WAIT, R_KEEP_GOING, R_SUMMARY, R_FORMAT, R_RACECHECK };
  static const struct option lo[] = {
    {"output", required_argument, NULL, 'o'},
    {"app", required_argument, NULL, R_APP},
    {"dataset", required_argument, NULL, R_DATASET},
    {"bench", required_argument, NULL, R_BENCH},
    {"oob", required_argument, NULL, R_OOB},
    {"sample", required_argument, NULL, R_SAMPLE},
    {"threads", required_argument, NULL, R_THREADS},
    {"timeout", required_argument, NULL, R_TIMEOUT},
    {"lock-wait", required_argument, NULL, R_LOCK_WAIT},
    {"keep-going", no_argument, NULL, R_KEEP_GOING},
    {"racecheck", no_argument, NULL, R_RACECHECK},
    {"summary", required_argument, NULL, R_SUMMARY},
    {"format", required_argument, NULL, R_FORMAT},
    {NULL, 0, NULL, 0},
  };
  cli_opts o;
  cli_opts_init(&o, "run", argc, argv, "o:", 1);
  cli_opts_add(&o, lo);
  cli_opts_add(&o, cli_filter_longopts);
  cli_filter flt;
  memset(&flt, 0, sizeof flt);
  for (int c; (c = cli_opts_next(&o)) != CLI_OPT_END;) {
    long long *num = NULL, hi = 0;
    int fr = cli_filter_option(&flt, &o, c);
    if (fr < 0) return KCAST_EXIT_USAGE;
    if (c == CLI_OPT_ERR) return o.status;
    if (fr) continue;
    switch (c) {
      case 'o': db_path = o.arg; break;
      case R_APP: app = o.arg; break;
      case R_DATASET: dataset = o.arg; break;
      case R_BENCH: bench = o.arg; break;
      case R_OOB: oob = o.arg; break;
      case R_KEEP_GOING: keep_going = 1; break;
      case R_RACECHECK: racecheck = 1; break;
      case R_SUMMARY: summary_csv = o.arg; break;
      case R_FORMAT:
        if (strcmp(o.arg, "csv") && strcmp(o.arg, "json"))
          return cli_usage_error("run", "--format is csv or json (of --summary), not '%s'", o.arg);
        summary_json = !strcmp(o.arg, "json");
        break;
      case R_SAMPLE:
        if (!strcmp(o.arg, "auto")) sample = -1; /* adaptive: RT_ENV_SAMPLE=auto */
        else num = &sample, hi = LLONG_MAX;
        break;
      case R_THREADS: num = &threads, hi = 4096; break;
      case R_TIMEOUT: num = &timeout, hi = 86400 * 365; break;
      case R_LOCK_WAIT: num = &lock_wait, hi = 86400; break;
    }
    if (num && parse_count(o.arg, 1, hi, num))
      return cli_usage_error("run", "%s needs a positive integer, not '%s'", o.name, o.arg);
  }
  int i = o.first_operand;
  if (i >= argc) return cli_usage_error("run", "no program given (kcast run [OPTIONS] -- PROGRAM [ARGS])");
  if ((app && !*app) || !*db_path) return cli_usage_error("run", "--app and -o need non-empty values");
  if (strcmp(oob, "warn") && strcmp(oob, "error"))
    return cli_usage_error("run", "--oob takes error or warn, not '%s'", oob);
  if (summary_json && !summary_csv)
    return cli_usage_error("run", "--format is the format of --summary FILE: give it too");
  char **prog = argv + i;
  int pargc = argc - i;

  char libdir[PATH_MAX];
  if (find_cudart(libdir, sizeof libdir) < 0) {
    cli_error("kcast's libcudart.so.13 not found in %s (build it with make; KCAST_CUDART "
              "names another folder)", libdir);
    return KCAST_EXIT_USER;
  }
  char err[2048];
  if (check_output(db_path) < 0) return KCAST_EXIT_USER;
  char app_buf[1024], ds_buf[8192];
  prof_default_keys(pargc, prog, app_buf, sizeof app_buf, ds_buf, sizeof ds_buf);
  if (!app) app = app_buf;
  if (!dataset) dataset = ds_buf;
  if (!*app) return cli_usage_error("run", "empty program name");

  run_scratch sc;
  if (scratch_open(&sc) < 0) return KCAST_EXIT_USER;
  progress pr;
  if (progress_start(&pr, sc.status_fd) < 0) {
    cli_error("cannot map the run's status page: %s", strerror(errno));
    scratch_close(&sc);
    return KCAST_EXIT_USER;
  }
  /* the program inherits this (run_child sets the rest) */
  setenv(RT_ENV_OOB, oob, 1);
  if (racecheck) setenv(RT_ENV_RACECHECK, "1", 1);
  else unsetenv(RT_ENV_RACECHECK);
  int sig, timed_out, killed, left, not_started;
  int status = run_child(prog, libdir, &sc, sample, threads, (double)timeout, &sig,
                         &timed_out, &killed, &left, &not_started);
  progress_stop(&pr);
  int rc = KCAST_EXIT_USER;
  rt_records r;
  memset(&r, 0, sizeof r);
  size_t total = 0; /* launches read, r.n before the selection */
  if (killed) {
    cli_error("interrupted by %s: %s ended; %s left unchanged", strsignal(killed), prog[0],
              db_path);
    progress_free(&pr);
    scratch_close(&sc);
    die_of(killed);
  }
  if (status < 0) goto out;
  if (not_started) {
    rc = status;
    goto out;
  }
  if (sig && !timed_out) {
    cli_error("%s was killed by signal %d (%s); %s left unchanged", prog[0], sig,
              strsignal(sig), db_path);
    rc = status;
    goto out;
  }
  int werr = __atomic_load_n(&pr.st->records_errno, __ATOMIC_ACQUIRE);
  if (werr) {
    cli_error("cannot write the launch records in %s: %s; %s left unchanged", sc.where,
              strerror(werr), db_path);
    rc = status ? status : KCAST_EXIT_USER;
    goto out;
  }
  /* processes killed after the program (left) may have been writing */
  if (scratch_read(&sc, &r, timed_out || left ? RT_READ_TORN_OK : 0, err, sizeof err) < 0) {
    cli_error("%s; %s left unchanged", err, db_path);
    rc = status ? status : KCAST_EXIT_USER;
    goto out;
  }
  if (!r.loaded) {
    if (timed_out)
      cli_error("%s timed out after %lld s and was killed before it loaded kcast's "
                "libcudart.so.13; %s left unchanged", prog[0], timeout, db_path);
    else
      cli_error("%s (exit status %d) did not load kcast's libcudart.so.13: it is not a CUDA "
                "program linked with -cudart shared (rebuild it with `kcast nvcc`); nothing "
                "written", prog[0], status);
    rc = status ? status : KCAST_EXIT_USER;
    goto out;
  }
  size_t failed = 0, sampled = 0, written = 0;
  for (size_t k = 0; k < r.n; k++) {
    if (r.l[k].error) failed++;
    else if (r.l[k].sampled) sampled++;
  }
  int64_t dup = duplicate_lseq(&r);
  if (dup >= 0) {
    cli_error("%s: two launches were numbered %" PRId64 " (processes of the program that did "
              "not share kcast run's launch counter); they would overwrite each other; %s left "
              "unchanged", prog[0], dup, db_path);
    rc = status ? status : KCAST_EXIT_USER;
    goto out;
  }
  /* --kernel, --launch-skip, --launch-count: the taken launches first, in
     order; the others stay behind r.n until freed */
  total = r.n;
  size_t nsel = total;
  if (cli_filter_active(&flt)) {
    nsel = select_launches(&r, &flt);
    cli_filter_free(&flt);
    r.n = nsel;
  }
  char partial[512];
  if (timed_out) partial_reason(partial, sizeof partial, timeout, &r, &pr);
  else if (left)
    snprintf(partial, sizeof partial, "the program left processes running; they were killed "
             "%.0f s after it exited: %zu launches finished", RUN_GRACE_S, r.n);
  char *cmdline = join_args(argc + 1, argv - 1);
  if (store(db_path, &r, app, dataset, bench, cmdline, timed_out || left ? partial : NULL,
            (double)lock_wait, &written) < 0) {
    free(cmdline);
    rc = status ? status : KCAST_EXIT_USER;
    goto out;
  }
  free(cmdline);
  summary_run sj = {app, dataset, db_path, written, nsel, total, failed, sampled, status};
  int src = summary(&r, summary_csv, summary_json, &sj);
  oob_note(&r);
  int raced = race_note(&r);
  if (timed_out)
    cli_error("%s timed out after %lld s and was killed; the run is marked partial in %s "
              "(%s)", prog[0], timeout, db_path, partial);
  fprintf(stderr, "kcast run: %zu launches of %s recorded in %s", written, app, db_path);
  if (nsel != total)
    fprintf(stderr, " (%zu of %zu launches selected by --kernel/-k/--launch-skip/--launch-count)",
            nsel, total);
  if (failed)
    fprintf(stderr, "; %zu launch%s failed in the emulator or could not run (not recorded; the "
            "program got the CUDA error a GPU returns)%s", failed, failed == 1 ? "" : "es",
            keep_going ? "" : ": exit status 4");
  if (sampled)
    fprintf(stderr, "; %zu launches sampled (features scaled; the program's results are not "
                    "valid)", sampled);
  if (status) fprintf(stderr, "; the program exited with status %d", status);
  fputc('\n', stderr);
  if (failed) failed_note(&r);
  int unsup = unsupported_note(&r);
  rc = exit_status(status, failed, keep_going);
  if (left && rc == KCAST_EXIT_OK) rc = KCAST_EXIT_LAUNCH; /* launches may be missing */
  if (src && rc == KCAST_EXIT_OK) rc = KCAST_EXIT_USER;
  if (unsup && !keep_going && rc == KCAST_EXIT_OK) {
    cli_error("the program called CUDA runtime functions kcast does not support: exit status %d",
              KCAST_EXIT_UNSUPPORTED);
    rc = KCAST_EXIT_UNSUPPORTED;
  }
  if (raced && rc == KCAST_EXIT_OK) {
    cli_error("a data race was found (--racecheck): exit status %d", KCAST_EXIT_RACE);
    rc = KCAST_EXIT_RACE;
  }
out:
  if (total > r.n) r.n = total;
  progress_free(&pr);
  rt_records_free(&r);
  scratch_close(&sc);
  return rc;
}

/* ---------------------------------------------------------- kcast nvcc -- */

int cmd_nvcc(int argc, char **argv) {
  int has_cudart = 0, has_arch = 0, has_compress = 0, has_lines = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    /* nvcc pastes file names into double-quoted shell command lines for
       its stages: these would break out of the quotes and run. */
    if (strpbrk(a, "$`\"\\\n")) {
      cli_error("nvcc argument '%s' holds a character nvcc's shell would interpret "
                "($, `, \", \\ or a newline); rename the file", a);
      return KCAST_EXIT_USER;
    }
    if (!strncmp(a, "-cudart", 7) || !strncmp(a, "--cudart", 8)) has_cudart = 1;
    if (!strncmp(a, "-arch", 5) || !strncmp(a, "--gpu-architecture", 18) ||
        !strncmp(a, "-gencode", 8) || !strncmp(a, "--generate-code", 15) ||
        !strncmp(a, "-code", 5) || !strncmp(a, "--gpu-code", 10))
      has_arch = 1;
    if (a[0] == '-' && strstr(a, "compress")) has_compress = 1;
    if (!strcmp(a, "-lineinfo") || !strcmp(a, "--generate-line-info") || !strcmp(a, "-G") ||
        !strcmp(a, "--device-debug"))
      has_lines = 1;
  }
  const char *nvcc = getenv("NVCC");
  if (!nvcc || !*nvcc) nvcc = "nvcc";
  char **av = calloc((size_t)argc + 24, sizeof *av);
  if (!av) return KCAST_EXIT_USER;
  int n = 0;
  av[n++] = (char *)nvcc;
  if (!has_cudart) av[n++] = "-cudart", av[n++] = "shared";
  if (!has_compress) av[n++] = "--no-compress";
  /* line information: kcast run's messages name source lines (the code
     is the same) */
  if (!has_lines) av[n++] = "-lineinfo";
  char gencode[16][64];
  if (!has_arch) {
    char err[512];
    int ng = fe_nvcc_gencode(nvcc, gencode, 16, err, sizeof err);
    if (ng < 0) {
      cli_error("%s", err);
      free(av);
      return KCAST_EXIT_USER;
    }
    for (int k = 0; k < ng; k++) av[n++] = gencode[k];
  }
  for (int i = 1; i < argc; i++) av[n++] = argv[i];
  av[n] = NULL;
  fflush(stdout);
  execvp(nvcc, av);
  cli_error("cannot run %s: %s (set NVCC to nvcc's path)", nvcc, strerror(errno));
  free(av);
  return KCAST_EXIT_USER;
}
