/*
 * test_reliability.c -- `make reliability`: hostile and careless input,
 * faults, kills, full disks and concurrent writers.  Each case is one of
 * the ways kcast used to lose data, run a user's string through a shell or
 * leave something behind, and checks that it no longer does: one clear
 * error line, a non-zero exit, nothing lost, nothing left over.
 *
 * The cases drive the CLI (KCAST_BIN) where the fault is the CLI's and the
 * library where it is the library's.  A full disk is a tiny tmpfs where
 * this process may mount one (root in a private mount namespace) and
 * /dev/full otherwise; cases that need something this machine lacks (nvcc,
 * the suite programs, a mount) say so and skip.
 */
#include "tests.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "include/kcast.h"
#include "model/model.h"
#include "model/rf_int.h"
#include "runtime/rt.h"

#define CHECK_MSG(msg, cond) \
  CU_assertImplementation(!!(cond), __LINE__, (msg), __FILE__, "", CU_FALSE)

/* Run a printf-formatted shell command; see tests_run. */
__attribute__((format(printf, 3, 4)))
static int sh(char **out, char **err, const char *fmt, ...) {
  char cmd[16384];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(cmd, sizeof cmd, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= sizeof cmd) return -1;
  return tests_run(cmd, out, err);
}

static int exists(const char *dir, const char *name) {
  char p[8192];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  struct stat sb;
  return lstat(p, &sb) == 0;
}

static int have_tool(const char *name) {
  char cmd[256];
  snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", name);
  return tests_run(cmd, NULL, NULL) == 0;
}

/* Absolute path of a file of the tree (tests run from the repository root). */
static const char *abs_path(const char *rel, char *buf, size_t cap) {
  char cwd[4096];
  if (!getcwd(cwd, sizeof cwd)) return rel;
  if ((size_t)snprintf(buf, cap, "%s/%.*s", cwd, 1000, rel) >= cap) return rel;
  return buf;
}

/* Number of lines of s (a last line without newline counts). */
static unsigned count_lines(const char *s) {
  unsigned n = 0;
  for (const char *p = s; p && *p; p++)
    if (*p == '\n' || !p[1]) n++;
  return n;
}

/* ------------------------------------------------ 1. names and shells -- */

/*
 * nvcc runs its stages through a shell with the file name pasted into the
 * command lines: a name holding $(...) must still be only a name, for
 * extract, emulate, predict FILE.cu and kcast_features_from_ptx, and
 * nvcc's messages must name the user's file (and the header it includes).
 */
static void test_file_name_never_reaches_a_shell(void) {
  if (!have_tool("nvcc")) {
    fprintf(stderr, "(nvcc not on PATH: skipped) ");
    return;
  }
  char dir[4096], saxpy[8192], kcast[8192];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "rel-inj"));
  abs_path("tests/kernels/saxpy.cu", saxpy, sizeof saxpy);
  snprintf(kcast, sizeof kcast, "%s", tests_kcast());
  if (kcast[0] != '/') abs_path(tests_kcast(), kcast, sizeof kcast);
  /* A source whose name runs a command, and a folder whose name does,
     holding a source that includes a header next to it. */
  CU_ASSERT_EQUAL_FATAL(sh(NULL, NULL,
      "cd '%s' && cp '%s' 'x$(touch PWNED1).cu' && mkdir 'd$(touch PWNED2)' && "
      "printf '#define SCALE 2.0f\\n' > 'd$(touch PWNED2)/h.h' && "
      "printf '#include \"h.h\"\\n__global__ void k(float *x) { x[threadIdx.x] *= SCALE; }\\n' "
      "> 'd$(touch PWNED2)/k.cu' && "
      "printf '__global__ void bad(float *x) {\\n  x[0] = undefined_thing;\\n}\\n' "
      "> 'd$(touch PWNED2)/bad`touch PWNED3`.cu'", dir, saxpy), 0);
  char *out = NULL, *err = NULL;
  int rc = sh(&out, &err, "cd '%s' && '%s' extract 'x$(touch PWNED1).cu'", dir, kcast);
  CHECK_MSG("extract of a $(...) name succeeds", rc == 0 && out && strstr(out, "_Z5saxpyifPKfPf"));
  free(out), free(err);
  rc = sh(&out, &err, "cd '%s' && '%s' extract 'd$(touch PWNED2)/k.cu'", dir, kcast);
  CHECK_MSG("extract in a $(...) folder finds the header beside the source",
            rc == 0 && out && strstr(out, "_Z1kPf"));
  free(out), free(err);
  rc = sh(&out, &err, "cd '%s' && '%s' emulate 'x$(touch PWNED1).cu' --kernel saxpy_c "
          "--grid 1 --block 32 --arg 32 --arg 2.0 --arg buf:128 --arg buf:128", dir, kcast);
  CHECK_MSG("emulate of a $(...) name succeeds", rc == 0);
  free(out), free(err);
  rc = sh(&out, &err, "cd '%s' && '%s' predict 'x$(touch PWNED1).cu' --kernel saxpy_c "
          "--grid 1 --block 32 --arg 32 --arg 2.0 --arg buf:128 --arg buf:128 --gpu T4", dir, kcast);
  CHECK_MSG("predict FILE.cu of a $(...) name succeeds", rc == 0);
  free(out), free(err);
  rc = sh(&out, &err, "cd '%s' && '%s' extract 'd$(touch PWNED2)/bad`touch PWNED3`.cu'", dir,
          kcast);
  CHECK_MSG("a compile error exits 1", rc == 1);
  CHECK_MSG("the compile error names the user's file and line, on one line",
            err && strstr(err, "kcast: d$(touch PWNED2)/bad`touch PWNED3`.cu:2: error: ") &&
            strstr(err, "undefined_thing") && count_lines(err) == 1);
  free(out), free(err);
  /* kcast nvcc hands its arguments to nvcc as they are: such a name is refused. */
  rc = sh(&out, &err, "cd '%s' && '%s' nvcc -o app 'x$(touch PWNED4).cu'", dir, kcast);
  CHECK_MSG("kcast nvcc refuses a name its shell would run", rc == 1 && err &&
            strstr(err, "x$(touch PWNED4).cu") && !exists(dir, "PWNED4"));
  free(out), free(err);
  /* The library entry point compiles through the same front end. */
  char api_path[8192];
  snprintf(api_path, sizeof api_path, "%s/x$(touch PWNED1).cu", dir);
  kcast_arg args[4] = {{KCAST_ARG_SCALAR, 32, 0, 0, 0}, {KCAST_ARG_SCALAR, 0x40000000u, 0, 0, 0},
                       {KCAST_ARG_BUFFER, 0, 128, KCAST_FILL_ZERO, 0},
                       {KCAST_ARG_BUFFER, 0, 128, KCAST_FILL_ZERO, 0}};
  kcast_launch_config c = KCAST_LAUNCH_CONFIG_INIT;
  c.block[0] = 32;
  c.args = args;
  c.nargs = 4;
  kcast_features *fs = NULL;
  CHECK_MSG("kcast_features_from_ptx of a $(...) name succeeds",
            kcast_features_from_ptx(api_path, "saxpy_c", &c, &fs) == KCAST_OK);
  kcast_features_free(fs);
  char cwd[4096];
  CHECK_MSG("nothing ran in the test folder", !exists(dir, "PWNED1") && !exists(dir, "PWNED2") &&
                                                  !exists(dir, "PWNED3"));
  CHECK_MSG("nothing ran in the working folder",
            getcwd(cwd, sizeof cwd) && !exists(cwd, "PWNED1") && !exists(cwd, "PWNED3"));
  sh(NULL, NULL, "rm -rf '%s'", dir);
}

/* ------------------------------------------------------ 3. the output -- */

/* A small CSV with a learnable target (y = 2 a + b). */
static int write_train_csv(const char *path, unsigned rows) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  fprintf(f, "a,b,y\n");
  for (unsigned i = 0; i < rows; i++)
    fprintf(f, "%u,%u,%u\n", i % 17, (i * 7) % 5, 2 * (i % 17) + (i * 7) % 5);
  return fclose(f);
}

/*
 * Every command's standard output on a full device: the command must fail
 * (non-zero) with a line saying the output could not be written, whether
 * the output is short (caught at the final flush) or long (caught by the
 * stream's error flag).
 */
static void test_output_to_a_full_device_fails(void) {
  char dir[4096], csv[4200], model[4200], feats[4200];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "rel-full"));
  snprintf(csv, sizeof csv, "%s/train.csv", dir);
  snprintf(model, sizeof model, "%s/m.kcm", dir);
  snprintf(feats, sizeof feats, "%s/rows.csv", dir);
  CU_ASSERT_EQUAL_FATAL(write_train_csv(csv, 60), 0);
  CU_ASSERT_EQUAL_FATAL(tests_write_file(feats, "a,b\n1,2\n3,4\n", 12), 0);
  CU_ASSERT_EQUAL_FATAL(sh(NULL, NULL, "'%s' train --csv '%s' --target y --trees 10 -o '%s'",
                           tests_kcast(), csv, model), 0);
  /* $M, $C and $F are the model, the training CSV and the rows above. */
  static const char *const cmds[] = {
      "version", "help", "help run", "gpus", "predict --model \"$M\" --features \"$F\"",
      "dataset stats datasets/data/suite-features.db",
      "dataset export datasets/data/suite-features.db --format csv", "model info \"$M\"",
      "model importance \"$M\"", "cv --csv \"$C\" --target y --trees 10 --folds 3",
      "train --csv \"$C\" --target y --trees 10 -o \"$M.2\"", "extract tests/ptx/saxpy_nvcc.ptx",
      "extract tests/kernels/saxpy.cu --list",
      "emulate tests/ptx/saxpy_nvcc.ptx --grid 1 --block 32 --arg 32 "
      "--arg 2.0 --arg buf:128 --arg buf:128"};
  for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
    if (strstr(cmds[i], "--list") && !have_tool("nvcc")) continue;
    char *err = NULL, msg[8400];
    int ok = sh(NULL, NULL, "M='%s' C='%s' F='%s'; '%s' %s > /dev/null", model, csv, feats,
                tests_kcast(), cmds[i]) == 0;
    int rc = sh(NULL, &err, "M='%s' C='%s' F='%s'; '%s' %s > /dev/full", model, csv, feats,
                tests_kcast(), cmds[i]);
    snprintf(msg, sizeof msg, "kcast %s > /dev/full exits 1 saying the output was lost (rc %d: %.300s)",
             cmds[i], rc, err ? err : "");
    CHECK_MSG(msg, ok && rc == 1 && err && strstr(err, "standard output") &&
                       strstr(err, "No space left on device"));
    free(err);
  }
  sh(NULL, NULL, "rm -rf '%s'", dir);
}

/* ------------------------------------------------ helpers for kcast run -- */

/* A suite program built with -cudart shared (make test builds SUITE_FAST). */
static const char *suite_prog(const char *name, char *buf, size_t cap) {
  char rel[4096];
  snprintf(rel, sizeof rel, "%s/suite/%s", tests_build(), name);
  if (rel[0] != '/') abs_path(rel, buf, cap);
  else snprintf(buf, cap, "%s", rel);
  if (access(buf, X_OK) != 0) {
    fprintf(stderr, "(%s not built: skipped) ", buf);
    return NULL;
  }
  return buf;
}

static const char *kcast_abs(char *buf, size_t cap) {
  if (tests_kcast()[0] == '/') snprintf(buf, cap, "%s", tests_kcast());
  else abs_path(tests_kcast(), buf, cap);
  return buf;
}

/* Launches in a dataset (sqlite3's shell), optionally of one dataset label;
   -1 when it cannot be read. */
static long count_launches(const char *db, const char *label) {
  char *out = NULL;
  int rc = label ? sh(&out, NULL, "sqlite3 '%s' \"SELECT count(*) FROM launches WHERE "
                      "dataset = '%s'\"", db, label)
                 : sh(&out, NULL, "sqlite3 '%s' 'SELECT count(*) FROM launches'", db);
  long n = rc == 0 && out ? strtol(out, NULL, 10) : -1;
  free(out);
  return n;
}

/*
 * Run script (sh) with a tmpfs of fs_kb KiB mounted at fs, in a private
 * mount namespace (root: unshare -m; others: unshare -rm).  Returns 0 when
 * it ran with the mount, 1 when no such mount can be made here (skip).
 */
static int with_small_fs(const char *dir, const char *fs, unsigned fs_kb, const char *script) {
  char path[8192], mark[8192];
  snprintf(path, sizeof path, "%s/script.sh", dir);
  snprintf(mark, sizeof mark, "%s/mounted", dir);
  FILE *f = fopen(path, "w");
  if (!f) return 1;
  fprintf(f, "mkdir -p '%s' && mount -t tmpfs -o size=%uk tmpfs '%s' && touch '%s' || exit 99\n"
             "%s\n", fs, fs_kb, fs, mark, script);
  if (fclose(f)) return 1;
  sh(NULL, NULL, "unshare %s -m sh '%s' 2>/dev/null", geteuid() == 0 ? "" : "-r", path);
  if (access(mark, F_OK) != 0) {
    fprintf(stderr, "(no private tmpfs mount here: skipped) ");
    return 1;
  }
  return 0;
}

/* ------------------------------------------- 2. a full temporary folder -- */

/*
 * TMPDIR on a full (then a nearly full) disk: the launch records cannot be
 * written.  kcast run must say so (the file, the cause), exit non-zero and
 * leave the dataset as it was; it used to exit 0 with "0 launches
 * recorded", or blame an interrupted program.
 */
static void test_full_tmpdir_is_an_error(void) {
  char dir[4096], prog[8192], kcast[8192], db[4200], fs[4200], script[65536];
  if (!suite_prog("stencil2d", prog, sizeof prog)) return;
  kcast_abs(kcast, sizeof kcast);
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "rel-tmpfull"));
  snprintf(db, sizeof db, "%s/t.db", dir);
  snprintf(fs, sizeof fs, "%s/fs", dir);
  CU_ASSERT_EQUAL_FATAL(sh(NULL, NULL, "'%s' run -o '%s' --dataset base -- '%s' 64 8 10 "
                           ">/dev/null 2>&1", kcast, db, prog), 0);
  long before = count_launches(db, NULL);
  CU_ASSERT_EQUAL_FATAL(before, 10);
  /* 0 KiB left, then 4 KiB (the first records fit, a later one is torn). */
  snprintf(script, sizeof script,
           "for left in 0 4; do\n"
           "  rm -f '%s/fill'; dd if=/dev/zero of='%s/fill' bs=1k count=$((64 - left)) 2>/dev/null\n"
           "  TMPDIR='%s' '%s' run -o '%s' --dataset full$left -- '%s' 64 8 10 >/dev/null "
           "2>'%s/err'$left; echo $? > '%s/rc'$left\n"
           "  ls -A '%s' > '%s/left'$left\n"
           "done\n", fs, fs, fs, kcast, db, prog, dir, dir, fs, dir);
  if (with_small_fs(dir, fs, 64, script)) goto out;
  for (int left = 0; left <= 4; left += 4) {
    char p[8192], msg[512];
    snprintf(p, sizeof p, "%s/rc%d", dir, left);
    char *rc = tests_read_file(p, NULL);
    snprintf(p, sizeof p, "%s/err%d", dir, left);
    char *err = tests_read_file(p, NULL);
    snprintf(p, sizeof p, "%s/left%d", dir, left);
    char *rest = tests_read_file(p, NULL);
    snprintf(msg, sizeof msg, "%d KiB free: kcast run exits 1 (%s)", left, rc ? rc : "?");
    CHECK_MSG(msg, rc && atoi(rc) == 1);
    snprintf(msg, sizeof msg, "%d KiB free: the error names the records, the folder and the "
             "cause: %.300s", left, err ? err : "");
    CHECK_MSG(msg, err && strstr(err, "kcast: cannot write the launch records in ") &&
                       strstr(err, fs) && strstr(err, "No space left on device"));
    snprintf(msg, sizeof msg, "%d KiB free: nothing left in the temporary folder", left);
    CHECK_MSG(msg, rest && !strcmp(rest, "fill\n"));
    free(rc), free(err), free(rest);
  }
  CHECK_MSG("the dataset kept its launches and got none of the failed runs",
            count_launches(db, NULL) == before);
out:
  if (!getenv("KEEP")) sh(NULL, NULL, "rm -rf '%s'", dir);
}

/* --------------------------------------------- 6. killing kcast run -- */

/* State letter of a process from /proc (0 when there is none). */
static char proc_state(pid_t pid) {
  char p[64], buf[1024];
  snprintf(p, sizeof p, "/proc/%ld/stat", (long)pid);
  FILE *f = fopen(p, "r");
  if (!f) return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  char *rp = strrchr(buf, ')');
  return rp && rp[1] == ' ' ? rp[2] : 0;
}

static int proc_alive(pid_t pid) {
  char s = proc_state(pid);
  return s && s != 'Z' && s != 'X';
}

/* A child of parent (from /proc), or 0. */
static pid_t child_of(pid_t parent) {
  DIR *d = opendir("/proc");
  if (!d) return 0;
  pid_t found = 0;
  struct dirent *e;
  while (!found && (e = readdir(d))) {
    char *end;
    long pid = strtol(e->d_name, &end, 10);
    if (*end || pid <= 0) continue;
    char p[64], buf[1024];
    snprintf(p, sizeof p, "/proc/%ld/stat", pid);
    FILE *f = fopen(p, "r");
    if (!f) continue;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *rp = strrchr(buf, ')');
    long ppid = 0;
    if (rp && sscanf(rp + 2, "%*c %ld", &ppid) == 1 && ppid == parent) found = (pid_t)pid;
  }
  closedir(d);
  return found;
}

static double mono_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/*
 * SIGTERM, SIGHUP, SIGINT or SIGKILL to kcast run while the program runs:
 * the program must end with it (not run on under init), the temporary
 * folder must hold nothing afterwards, the dataset must not be written,
 * and kcast must end of the signal it was sent.
 */
static void test_killing_kcast_run_leaves_nothing(void) {
  static const int sigs[] = {SIGTERM, SIGHUP, SIGINT, SIGKILL};
  char dir[4096], prog[8192], kcast[8192], tmp[4200], db[4200], msg[256];
  if (!suite_prog("stencil2d", prog, sizeof prog)) return;
  kcast_abs(kcast, sizeof kcast);
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "rel-kill"));
  snprintf(tmp, sizeof tmp, "%s/tmp", dir);
  snprintf(db, sizeof db, "%s/t.db", dir);
  CU_ASSERT_EQUAL_FATAL(mkdir(tmp, 0700), 0);
  for (size_t k = 0; k < sizeof sigs / sizeof sigs[0]; k++) {
    int sig = sigs[k];
    pid_t kp = fork();
    CU_ASSERT_FATAL(kp >= 0);
    if (kp == 0) {
      for (int s = 1; s < 32; s++) signal(s, SIG_DFL);
      sigset_t none;
      sigemptyset(&none);
      sigprocmask(SIG_SETMASK, &none, NULL);
      setenv("TMPDIR", tmp, 1);
      int nul = open("/dev/null", O_RDWR);
      dup2(nul, 0), dup2(nul, 1), dup2(nul, 2);
      /* 10,000 sweeps of 256x256: minutes on the emulator */
      execl(kcast, kcast, "run", "-o", db, "--", prog, "256", "8", "10000", (char *)NULL);
      _exit(127);
    }
    pid_t pp = 0;
    for (double t0 = mono_s(); !pp && mono_s() - t0 < 20;) {
      pp = child_of(kp);
      if (!pp) usleep(20000);
    }
    CHECK_MSG("kcast run started the program", pp > 0);
    usleep(500000); /* into its launches */
    kill(kp, sig);
    int st = 0;
    pid_t w = 0;
    for (double t0 = mono_s(); w == 0 && mono_s() - t0 < 15;) {
      w = waitpid(kp, &st, WNOHANG);
      if (!w) usleep(20000);
    }
    if (w == 0) {
      kill(kp, SIGKILL);
      waitpid(kp, &st, 0);
    }
    snprintf(msg, sizeof msg, "kcast ends of signal %d it was sent", sig);
    CHECK_MSG(msg, w == kp && WIFSIGNALED(st) && WTERMSIG(st) == sig);
    int alive = pp > 0;
    for (double t0 = mono_s(); alive && mono_s() - t0 < 3;) {
      alive = proc_alive(pp);
      if (alive) usleep(20000);
    }
    snprintf(msg, sizeof msg, "signal %d: the program ended with kcast", sig);
    CHECK_MSG(msg, !alive);
    if (alive) kill(pp, SIGKILL);
    char *left = NULL;
    sh(&left, NULL, "ls -A '%s'", tmp);
    snprintf(msg, sizeof msg, "signal %d: nothing left in the temporary folder (%.100s)", sig,
             left ? left : "");
    CHECK_MSG(msg, left && !*left);
    free(left);
    sh(NULL, NULL, "rm -rf '%s'/*", tmp);
    snprintf(msg, sizeof msg, "signal %d: no dataset written", sig);
    CHECK_MSG(msg, access(db, F_OK) != 0);
  }
  sh(NULL, NULL, "rm -rf '%s'", dir);
}

/* ------------------------------------------- 7. concurrent writers -- */

/*
 * Where the results cannot go (a folder that does not exist, a path
 * through a file, a dataset the user cannot write), kcast run says so
 * before the program runs.
 */
static void test_unwritable_output_is_found_before_the_run(void) {
  char dir[4096], kcast[8192], db[4200], ran[4200];
  kcast_abs(kcast, sizeof kcast);
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "rel-ro"));
  snprintf(ran, sizeof ran, "%s/RAN", dir);
  snprintf(db, sizeof db, "%s/ro.db", dir);
  chmod(dir, 01777); /* the program, run as another user, could write RAN */
  /* an empty dataset nobody but its owner may write */
  CU_ASSERT_EQUAL_FATAL(sh(NULL, NULL, "'%s' dataset merge '%s' datasets/data/suite-features.db "
                           ">/dev/null 2>&1 && chmod 0644 '%s'", kcast, db, db), 0);
  const char *cases[] = {"%s/missing/t.db", "%s/ro.db/t.db", "%s/ro.db"};
  for (size_t k = 0; k < 3; k++) {
    char out_db[4300], msg[8192], *err = NULL;
    snprintf(out_db, sizeof out_db, cases[k], dir);
    /* Another user for the read-only case when this is root (root writes
       anything); a read-only mode otherwise. */
    const char *as = "";
    if (k == 2) {
      if (geteuid() == 0) {
        if (!have_tool("setpriv")) continue;
        as = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
        /* that user must reach kcast and its build folder (a checkout
           under a private folder is out of its reach) */
        if (sh(NULL, NULL, "%ssh -c 'test -x \"$1\" && test -r \"${1%%/*}/cudart/libcudart.so.13\"' "
                           "sh '%s' 2>/dev/null", as, kcast) != 0) {
          fprintf(stderr, "\n  (skipped the other-user case: user 65534 cannot reach %s)\n", kcast);
          continue;
        }
      } else {
        chmod(db, 0444);
      }
    }
    int rc = sh(NULL, &err, "%s'%s' run -o '%s' -- sh -c 'touch \"%s\"'", as, kcast, out_db, ran);
    snprintf(msg, sizeof msg, "-o %s: refused before the program runs (rc %d: %.200s)", out_db,
             rc, err ? err : "");
    CHECK_MSG(msg, rc == 1 && access(ran, F_OK) != 0 && err && strstr(err, out_db) &&
                       count_lines(err) == 1);
    free(err);
    unlink(ran);
  }
  sh(NULL, NULL, "rm -rf '%s'", dir);
}

/* Shell lines that hold the write lock of a dataset for %d seconds in the
   background and return once it is held. */
#define LOCK_SCRIPT                                                                    \
  "{ echo 'BEGIN IMMEDIATE;'; sleep %d; echo 'COMMIT;'; } | sqlite3 -cmd '.timeout 30000' "  \
  "'%s' &\n"                                                                           \
  "n=0; while sqlite3 '%s' 'BEGIN IMMEDIATE; ROLLBACK;' 2>/dev/null && [ $n -lt 600 ]; do " \
  "sleep 0.05; n=$((n + 1)); done\n"

/*
 * Four kcast run -o same.db at once while another connection holds the
 * write lock for 7 s (longer than SQLite's old 5 s timeout): all four
 * wait and all their launches arrive.  With --lock-wait 1 against a 5 s
 * lock, the launches go to a side file that `kcast dataset merge` adds.
 */
static void test_concurrent_writers_lose_nothing(void) {
  char dir[4096], prog[8192], kcast[8192], db[4200], script[16384];
  if (!suite_prog("stencil2d", prog, sizeof prog)) return;
  if (!have_tool("sqlite3")) {
    fprintf(stderr, "(sqlite3 shell missing: skipped) ");
    return;
  }
  kcast_abs(kcast, sizeof kcast);
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "rel-lock"));
  snprintf(db, sizeof db, "%s/same.db", dir);
  CU_ASSERT_EQUAL_FATAL(sh(NULL, NULL, "'%s' run -o '%s' --dataset base -- '%s' 64 8 10 "
                           ">/dev/null 2>&1", kcast, db, prog), 0);
  /* hold the lock (until it is taken, nothing else starts; the holder
     waits out the probe's own brief lock, the probe gives up after 30 s) */
  snprintf(script, sizeof script, LOCK_SCRIPT, 7, db, db);
  char cmd[65536];
  snprintf(cmd, sizeof cmd, "%sfor i in 1 2 3 4; do ( '%s' run -o '%s' --dataset w$i -- '%s' "
           "64 8 10 >/dev/null 2>'%s/err'$i; echo $? > '%s/rc'$i ) & done; wait", script, kcast,
           db, prog, dir, dir);
  sh(NULL, NULL, "%s", cmd);
  for (int i = 1; i <= 4; i++) {
    char p[8192], label[16], msg[512];
    snprintf(p, sizeof p, "%s/rc%d", dir, i);
    char *rc = tests_read_file(p, NULL);
    snprintf(p, sizeof p, "%s/err%d", dir, i);
    char *err = tests_read_file(p, NULL);
    snprintf(msg, sizeof msg, "writer %d waited for the lock and succeeded (%.300s)", i,
             err ? err : "");
    CHECK_MSG(msg, rc && atoi(rc) == 0);
    snprintf(label, sizeof label, "w%d", i);
    snprintf(msg, sizeof msg, "writer %d's 10 launches are in the dataset", i);
    CHECK_MSG(msg, count_launches(db, label) == 10);
    free(rc), free(err);
  }
  /* the lock outlasts --lock-wait: a side file */
  snprintf(script, sizeof script, LOCK_SCRIPT, 4, db, db);
  char *err = NULL;
  int rc = sh(NULL, &err, "%s'%s' run -o '%s' --lock-wait 1 --dataset side -- '%s' 64 8 10 "
              ">/dev/null; rc=$?; wait; exit $rc", script, kcast, db, prog);
  CHECK_MSG("a lock that outlasts --lock-wait is an error", rc == 1);
  char side[4400] = "";
  const char *s = err ? strstr(err, "kept in ") : NULL;
  if (s) sscanf(s + 8, "%4399[^:]", side);
  CHECK_MSG("the error names the side file and the merge command",
            s && err && strstr(err, "database is locked") && strstr(err, "kcast dataset merge"));
  CHECK_MSG("the side file holds the run's launches", side[0] && count_launches(side, "side") == 10);
  CHECK_MSG("the dataset has none of them yet", count_launches(db, "side") == 0);
  CHECK_MSG("kcast dataset merge takes the side file",
            side[0] && sh(NULL, NULL, "'%s' dataset merge '%s' '%s' >/dev/null 2>&1", kcast, db,
                          side) == 0 && count_launches(db, "side") == 10);
  free(err);
  sh(NULL, NULL, "rm -rf '%s'", dir);
}

/* ------------------------------------------------- also: models -- */

/* A small forest on y = 2 a + b (rows rows), transform as given. */
static rf_forest *small_forest(int transform) {
  rf_data d;
  if (rf_data_alloc(&d, 64, 2, 1)) return NULL;
  d.names[0] = strdup("a");
  d.names[1] = strdup("b");
  for (size_t i = 0; i < 64; i++) {
    d.x[i] = (double)(i % 17);
    d.x[64 + i] = (double)((i * 7) % 5);
    d.y[i] = 1.0 + 2 * d.x[i] + d.x[64 + i];
  }
  rf_params p;
  rf_params_default(&p);
  p.n_trees = 4;
  p.transform = transform;
  rf_forest *f = NULL;
  if (rf_train(&d, &p, &f)) f = NULL;
  rf_data_free(&d);
  return f;
}

/* The first leaf node of tree 0. */
static rf_node *first_leaf(rf_forest *f) {
  for (uint32_t k = 0; k < f->trees[0].n_nodes; k++)
    if (f->trees[0].nodes[k].feature == -1) return &f->trees[0].nodes[k];
  return NULL;
}

/*
 * A model file whose CRC is right but whose leaves are NaN, infinite, or
 * infinite once transformed back (a log-target leaf of 800) must be refused
 * by name, by the loader and by every command that reads it.
 */
static void test_model_with_bad_leaves_is_refused(void) {
  char dir[4096], path[4200];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "rel-leaf"));
  snprintf(path, sizeof path, "%s/bad.kcm", dir);
  static const char *const what[] = {"a NaN leaf value", "an infinite leaf value",
                                     "an infinite leaf sample", "a leaf beyond exp's range",
                                     "a widening beyond exp's range"};
  for (int c = 0; c < 5; c++) {
    rf_forest *f = small_forest(c >= 3 ? RF_TRANSFORM_LOG : RF_TRANSFORM_NONE);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    rf_node *leaf = first_leaf(f);
    CU_ASSERT_PTR_NOT_NULL_FATAL(leaf);
    if (c == 0) leaf->v = NAN;
    if (c == 1) leaf->v = INFINITY;
    if (c == 2) f->trees[0].values[0] = INFINITY;
    if (c == 3) leaf->v = 800; /* exp(800) overflows */
    if (c == 4) {
      /* the widest interval, exp(leaf + q), overflows */
      CU_ASSERT_FATAL(f->cal.n > 0);
      f->cal.q[0] = 800;
    }
    CU_ASSERT_EQUAL_FATAL(rf_save(f, path), 0);
    rf_free(f);
    char msg[256], *err = NULL;
    rf_forest *g = NULL;
    snprintf(msg, sizeof msg, "rf_load refuses %s", what[c]);
    CHECK_MSG(msg, rf_load(path, &g) == -1 && g == NULL && strstr(rf_last_error(), path) &&
                       (strstr(rf_last_error(), "leaf") || strstr(rf_last_error(), "widening")));
    rf_free(g);
    int rc = sh(NULL, &err, "'%s' model info '%s'", tests_kcast(), path);
    snprintf(msg, sizeof msg, "kcast model info refuses %s with one line", what[c]);
    CHECK_MSG(msg, rc == 1 && err && (strstr(err, "leaf") || strstr(err, "widening")) &&
                       count_lines(err) == 1);
    free(err);
  }
  sh(NULL, NULL, "rm -rf '%s'", dir);
}

/* A target a model cannot hold (1e308 untransformed: its leaves are 32-bit
   floats, its mean over trees overflows) is refused at training, naming
   the row.  (A log target holds it: log(1e308) = 709.) */
static void test_huge_targets_are_refused_at_training(void) {
  char dir[4096], csv[4200], model[4200];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "rel-huge"));
  snprintf(csv, sizeof csv, "%s/big.csv", dir);
  snprintf(model, sizeof model, "%s/big.kcm", dir);
  static const char text[] = "a,y\n1,1\n2,1e308\n3,5\n4,2\n";
  CU_ASSERT_EQUAL_FATAL(tests_write_file(csv, text, sizeof text - 1), 0);
  char *err = NULL;
  int rc = sh(NULL, &err, "'%s' train --csv '%s' --target y --no-log-target --min-leaf 1 -o '%s'",
              tests_kcast(), csv, model);
  CHECK_MSG("kcast train refuses a target of 1e308, naming the row",
            rc == 1 && err && strstr(err, "row 2") && strstr(err, "out of range"));
  CHECK_MSG("and writes no model", access(model, F_OK) != 0);
  free(err);
  sh(NULL, NULL, "rm -rf '%s'", dir);
}

/* kcast_predict_batch with n = (size_t)-1 (a count no array has) used to
   return KCAST_OK having predicted nothing. */
static void test_predict_batch_refuses_an_impossible_count(void) {
  char dir[4096], path[4200];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "rel-batch"));
  snprintf(path, sizeof path, "%s/m.kcm", dir);
  rf_forest *f = small_forest(RF_TRANSFORM_NONE);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  CU_ASSERT_EQUAL_FATAL(rf_save(f, path), 0);
  rf_free(f);
  kcast_model *m = NULL;
  kcast_features *fs = NULL;
  CU_ASSERT_EQUAL_FATAL(kcast_model_load(path, &m), KCAST_OK);
  CU_ASSERT_EQUAL_FATAL(kcast_features_new(&fs), KCAST_OK);
  kcast_features_set(fs, "a", 3);
  kcast_features_set(fs, "b", 1);
  const kcast_features *sets[1] = {fs};
  kcast_prediction out[1];
  CHECK_MSG("n = SIZE_MAX is KCAST_E_ARG",
            kcast_predict_batch(m, sets, (size_t)-1, 0.9, out) == KCAST_E_ARG &&
                strstr(kcast_last_error(), "kcast_predict_batch"));
  CHECK_MSG("n = 1 still predicts", kcast_predict_batch(m, sets, 1, 0.9, out) == KCAST_OK &&
                                        isfinite(out[0].value));
  kcast_features_free(fs);
  kcast_model_free(m);
  sh(NULL, NULL, "rm -rf '%s'", dir);
}

/* ---------------------------------------------------- also: CSV -- */

/*
 * A UTF-8 byte-order mark is not part of the first column's name; a NUL
 * inside a cell is an error (not the number before it); a header of
 * 200,000 columns is read in linear time (the duplicate check was
 * quadratic: 269 s), and so is the model's column lookup when predicting.
 */
static void test_csv_bom_nul_and_wide_headers(void) {
  char dir[4096], bom[4200], nul[4200], wide[4200], model[4200], *err = NULL;
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "rel-csv"));
  snprintf(bom, sizeof bom, "%s/bom.csv", dir);
  snprintf(nul, sizeof nul, "%s/nul.csv", dir);
  snprintf(wide, sizeof wide, "%s/wide.csv", dir);
  snprintf(model, sizeof model, "%s/m.kcm", dir);
  static const char btext[] = "\xEF\xBB\xBF" "a,b,y\n1,2,3\n2,3,4\n3,1,5\n4,4,6\n";
  CU_ASSERT_EQUAL_FATAL(tests_write_file(bom, btext, sizeof btext - 1), 0);
  int rc = sh(NULL, &err, "'%s' train --csv '%s' --target a --trees 3 -o '%s'", tests_kcast(),
              bom, model);
  CHECK_MSG("a BOM is not part of the first column's name (--target a finds it)", rc == 0);
  free(err);
  rf_data d;
  rf_csv_opts o;
  memset(&o, 0, sizeof o);
  o.size = sizeof o;
  o.target = "y";
  CHECK_MSG("rf_data_load_csv names the first column 'a'",
            rf_data_load_csv(&d, bom, &o) == 0 && d.n_cols == 2 && !strcmp(d.names[0], "a"));
  rf_data_free(&d);
  static const char ntext[] = "a,b,y\n1\0x,2,3\n2,3,4\n3,1,5\n";
  CU_ASSERT_EQUAL_FATAL(tests_write_file(nul, ntext, sizeof ntext - 1), 0);
  rc = sh(NULL, &err, "'%s' train --csv '%s' --target y --trees 3 -o '%s.2'", tests_kcast(), nul,
          model);
  char want[4300];
  snprintf(want, sizeof want, "%s:2: column a:", nul);
  CHECK_MSG("a NUL in a cell is an error naming file, line and column",
            rc == 1 && err && strstr(err, want) && strstr(err, "NUL"));
  free(err);
  /* 200,000 feature columns and a target, three rows */
  FILE *f = fopen(wide, "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  for (int i = 0; i < 200000; i++) fprintf(f, "c%d,", i);
  fprintf(f, "y\n");
  for (int r = 0; r < 3; r++) {
    for (int i = 0; i < 200000; i++) fprintf(f, "%d,", (i + r) % 7);
    fprintf(f, "%d\n", r);
  }
  CU_ASSERT_EQUAL_FATAL(fclose(f), 0);
  /* 60 s: far above linear time (about a second), far below quadratic */
  rc = sh(NULL, &err, "timeout 60 '%s' train --csv '%s' --target y --trees 2 --min-leaf 1 "
          "-o '%s.3' && timeout 60 '%s' predict --model '%s.3' --features '%s' > /dev/null",
          tests_kcast(), wide, model, tests_kcast(), model, wide);
  CHECK_MSG("a 200,000-column CSV trains and predicts within 60 s", rc == 0);
  free(err);
  sh(NULL, NULL, "rm -rf '%s'", dir);
}

/* ---------------------------------------------------- also: PTX -- */

/*
 * PTX that ptxas rejects: operand types that do not agree with the
 * instruction, conflicting modifiers, an unknown target.  One error line
 * FILE:LINE:COL at the operand or the instruction.
 */
static void test_ptx_the_assembler_rejects_is_rejected(void) {
  static const struct { const char *insn, *target, *where, *what; } cases[] = {
      {"add.f32 %f4, %r2, %rd1;", "sm_90", ":11:21: error: ", "'%rd1' is .b64"},
      {"add.s32 %r3, %f1, %r1;", "sm_90", ":11:16: error: ", "'%f1' is .f32"},
      {"ld.global.u64 %r1, [%rd1];", "sm_90", ":11:17: error: ", "'%r1' is .b32"},
      {"setp.lt.s32 %p1, %f1, %r1;", "sm_90", ":11:20: error: ", "'%f1' is .f32"},
      {"cvt.rn.rz.f32.f64 %f1, %fd1;", "sm_90", ":11:3: error: ", "rounding modifiers .rn and .rz"},
      {"cvt.f32.s32 %f1, %r1;", "sm_90", ":11:3: error: ", "needs a rounding modifier"},
      {"setp.lt.gt.s32 %p1, %r1, %r1;", "sm_90", ":11:3: error: ", "comparisons .lt and .gt"},
      {"add.f32 %f4, %f2, %f1;", "sm_999", ":2:9: error: ", "unknown target 'sm_999'"},
  };
  char dir[4096], path[4200];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "rel-ptx"));
  snprintf(path, sizeof path, "%s/k.ptx", dir);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char text[2048], msg[512], want[4400], *err = NULL;
    int n = snprintf(text, sizeof text,
                     ".version 8.0\n.target %s\n.address_size 64\n"
                     ".visible .entry k(.param .u64 p) {\n  .reg .pred %%p<3>;\n"
                     "  .reg .b32 %%r<4>;\n  .reg .f32 %%f<5>;\n  .reg .b64 %%rd<3>;\n"
                     "  .reg .f64 %%fd<2>;\n  .reg .b16 %%rs<2>;\n  %s\n  ret;\n}\n",
                     cases[i].target, cases[i].insn);
    CU_ASSERT_EQUAL_FATAL(tests_write_file(path, text, (size_t)n), 0);
    int rc = sh(NULL, &err, "'%s' extract '%s'", tests_kcast(), path);
    snprintf(want, sizeof want, "kcast: %s%s", path, cases[i].where);
    snprintf(msg, sizeof msg, "%s (.target %s) is refused at %s: %.200s", cases[i].insn,
             cases[i].target, cases[i].where, err ? err : "");
    CHECK_MSG(msg, rc == 1 && err && !strncmp(err, want, strlen(want)) &&
                       strstr(err, cases[i].what) && count_lines(err) == 1);
    free(err);
  }
  sh(NULL, NULL, "rm -rf '%s'", dir);
}

/* A kernel of 100,000 parameters called with none: the usage error lists a
   few of them and counts the rest, instead of a 2 MB line. */
static void test_parameter_list_in_errors_is_capped(void) {
  char dir[4096], path[4200], *err = NULL;
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "rel-params"));
  snprintf(path, sizeof path, "%s/many.ptx", dir);
  FILE *f = fopen(path, "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fprintf(f, ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(");
  for (int i = 0; i < 100000; i++) fprintf(f, "%s.param .u32 p%d", i ? ", " : "", i);
  fprintf(f, ") {\n  ret;\n}\n");
  CU_ASSERT_EQUAL_FATAL(fclose(f), 0);
  int rc = sh(NULL, &err, "'%s' emulate '%s' --grid 1 --block 1", tests_kcast(), path);
  CHECK_MSG("a missing-arguments error of a 100,000-parameter kernel is short",
            rc == 2 && err && strlen(err) < 2000 && strstr(err, "takes 100000 parameters") &&
                strstr(err, "and 99984 more"));
  free(err);
  sh(NULL, NULL, "rm -rf '%s'", dir);
}

/* ------------------------------------------ also: export on a full disk -- */

/* dataset export -o FILE on a full disk: an error, no partial file, an
   existing FILE as it was. */
static void test_export_to_a_full_disk_leaves_no_partial_file(void) {
  char dir[4096], kcast[8192], fs[4200], script[65536];
  kcast_abs(kcast, sizeof kcast);
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "rel-export"));
  snprintf(fs, sizeof fs, "%s/fs", dir);
  char src[8192];
  abs_path("datasets/data/suite-features.db", src, sizeof src);
  snprintf(script, sizeof script,
           "echo previous > '%s/out.csv'\n"
           "'%s' dataset export '%s' --format csv -o '%s/out.csv' 2>'%s/err'; echo $? > '%s/rc'\n"
           "cat '%s/out.csv' > '%s/after'; ls -A '%s' > '%s/left'\n",
           fs, kcast, src, fs, dir, dir, fs, dir, fs, dir);
  if (with_small_fs(dir, fs, 64, script)) goto out;
  char p[8192];
  snprintf(p, sizeof p, "%s/rc", dir);
  char *rc = tests_read_file(p, NULL);
  snprintf(p, sizeof p, "%s/err", dir);
  char *err = tests_read_file(p, NULL);
  snprintf(p, sizeof p, "%s/after", dir);
  char *after = tests_read_file(p, NULL);
  snprintf(p, sizeof p, "%s/left", dir);
  char *left = tests_read_file(p, NULL);
  CHECK_MSG("export to a full disk exits 1 naming the file and the cause",
            rc && atoi(rc) == 1 && err && strstr(err, "out.csv") &&
                strstr(err, "No space left on device"));
  CHECK_MSG("the existing file is as it was", after && !strcmp(after, "previous\n"));
  CHECK_MSG("no temporary file is left", left && !strcmp(left, "out.csv\n"));
  free(rc), free(err), free(after), free(left);
out:
  sh(NULL, NULL, "rm -rf '%s'", dir);
}

/* ----------------------------------------------------- 4. the fuzzers -- */

/* A fatbinary whose one compressed PTX entry claims 3.5 GB (found by the
   fatbinary fuzzer: the reader allocated whatever an entry claimed). */
static size_t oversized_fatbin(uint8_t *fb) {
  memset(fb, 0, 144);
  uint32_t magic = RT_FATBIN_MAGIC, hs = 64, stored = 64, arch = 90;
  uint16_t one = 1, hdr = 16;
  uint64_t body = 128, payload = 64, flags = RT_FATBIN_FLAG_LZ4, raw = 3500000000ull;
  memcpy(fb, &magic, 4), memcpy(fb + 4, &one, 2), memcpy(fb + 6, &hdr, 2);
  memcpy(fb + 8, &body, 8);
  uint8_t *e = fb + 16;
  memcpy(e, &one, 2), memcpy(e + 4, &hs, 4), memcpy(e + 8, &payload, 8);
  memcpy(e + 16, &stored, 4), memcpy(e + 28, &arch, 4), memcpy(e + 40, &flags, 8);
  memcpy(e + 56, &raw, 8);
  memset(e + 64, 0x11, 64);
  return 144;
}

/*
 * make test builds the four fuzzers (PTX parser, model loader, CSV reader,
 * fatbinary reader) with clang-22 and -Werror, and each runs clean over
 * seeds for a moment (make fuzz runs them for a minute each).
 */
static void test_fuzzers_build_and_run(void) {
  uint8_t fb[144];
  size_t n = oversized_fatbin(fb);
  char *ptx = NULL, err[512] = "";
  size_t len = 0;
  unsigned arch = 0;
  CHECK_MSG("a fatbinary entry claiming 3.5 GB is refused before allocating",
            rt_fatbin_ptx(fb, n, &ptx, &len, &arch, err, sizeof err) == -1 &&
                strstr(err, "claims 3500000000 bytes"));
  free(ptx);
  if (!have_tool("clang-22")) {
    fprintf(stderr, "(clang-22 missing: fuzzers skipped) ");
    return;
  }
  char dir[4096], seeds[4200], bin[8192], prog[8192];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "rel-fuzz"));
  static const char *const names[] = {"ptx", "model", "csv", "fatbin"};
  for (size_t i = 0; i < 4; i++) {
    snprintf(seeds, sizeof seeds, "%s/%s", dir, names[i]);
    CU_ASSERT_EQUAL_FATAL(mkdir(seeds, 0700), 0);
  }
  sh(NULL, NULL, "cp tests/ptx/*.ptx '%s/ptx/'", dir);
  char p[8192];
  rf_forest *f = small_forest(RF_TRANSFORM_LOG);
  snprintf(p, sizeof p, "%s/model/log.kcm", dir);
  CU_ASSERT_FATAL(f && rf_save(f, p) == 0);
  rf_free(f);
  sh(NULL, NULL, "'%s' featmodel fit datasets/data/suite-features.db --kernel triad -o "
     "'%s/model/seed.kcf'", tests_kcast(), dir); /* a feature model beside it */
  static const char csv[] = "\xEF\xBB\xBF" "a,b,y\n1,2,3\n2,0.5,4\n3,1e3,5\n";
  snprintf(p, sizeof p, "%s/csv/seed.csv", dir);
  CU_ASSERT_EQUAL_FATAL(tests_write_file(p, csv, sizeof csv - 1), 0);
  snprintf(p, sizeof p, "%s/fatbin/oversized.fatbin", dir);
  CU_ASSERT_EQUAL_FATAL(tests_write_file(p, fb, n), 0);
  if (suite_prog("scan", prog, sizeof prog))
    sh(NULL, NULL, "objcopy -O binary --only-section=.nv_fatbin '%s' '%s/fatbin/scan.fatbin'",
       prog, dir);
  for (size_t i = 0; i < 4; i++) {
    char msg[8400], *out = NULL;
    snprintf(bin, sizeof bin, "%s/fuzz/%s_fuzz", tests_build(), names[i]);
    snprintf(msg, sizeof msg, "make test built %s", bin);
    CHECK_MSG(msg, access(bin, X_OK) == 0);
    int rc = sh(NULL, &out, "'%s' -runs=3000 -seed=1 -rss_limit_mb=2048 -max_len=65536 '%s/%s'",
                bin, dir, names[i]);
    snprintf(msg, sizeof msg, "the %s fuzzer runs clean on its seeds (rc %d)", names[i], rc);
    CHECK_MSG(msg, rc == 0);
    if (rc) fprintf(stderr, "%.2000s\n", out ? out : "");
    free(out);
  }
  sh(NULL, NULL, "rm -rf '%s'", dir);
}

/* --------------------------------------------------------------- suites -- */

TEST_SUITES(register_reliability) {
  CU_pSuite s = tests_suite("reliability");
  TEST_ADD(s, test_file_name_never_reaches_a_shell);
  TEST_ADD(s, test_output_to_a_full_device_fails);
  TEST_ADD(s, test_fuzzers_build_and_run);
  TEST_ADD(s, test_full_tmpdir_is_an_error);
  TEST_ADD(s, test_killing_kcast_run_leaves_nothing);
  TEST_ADD(s, test_unwritable_output_is_found_before_the_run);
  TEST_ADD(s, test_concurrent_writers_lose_nothing);
  TEST_ADD(s, test_model_with_bad_leaves_is_refused);
  TEST_ADD(s, test_huge_targets_are_refused_at_training);
  TEST_ADD(s, test_predict_batch_refuses_an_impossible_count);
  TEST_ADD(s, test_csv_bom_nul_and_wide_headers);
  TEST_ADD(s, test_ptx_the_assembler_rejects_is_rejected);
  TEST_ADD(s, test_parameter_list_in_errors_is_capped);
  TEST_ADD(s, test_export_to_a_full_disk_leaves_no_partial_file);
}
