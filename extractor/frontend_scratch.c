/*
 * frontend_scratch.c -- scratch folders and child process groups that do
 * not outlive kcast (frontend.h, "Scratch and children").
 *
 * Why: a SIGTERM or SIGKILL of `import-kerneltuner --source` left its
 * kcast-fe-* folders in TMPDIR, a SIGKILL of `suite run` its .kcast-suite-*
 * folder beside the output, and later runs never cleaned them; a compiler
 * that hung (an #include of a FIFO) hung kcast with it.
 *
 *  - Every scratch folder is named PREFIX-HOST-PID-XXXXXX (fe_scratch_make):
 *    the host and process that own it.  The first folder a process makes
 *    with a prefix in a base folder sweeps that base of the prefix's
 *    folders whose owner, on this host, is no longer running (a folder of
 *    another host on a shared file system is never touched; a live
 *    process's never).
 *  - Live folders and the process groups of running tools are kept in a
 *    small registry that fe_cleanup reads with async-signal-safe calls
 *    only (kill, openat, getdents64, unlinkat), so a signal handler may
 *    call it and then die of its signal: kcast's main does that for
 *    SIGINT, SIGTERM, SIGHUP and SIGQUIT.
 *  - Tools run in a process group of their own (fe__run_tool), so the time
 *    limit (fe_tool_timeout, default FE_TOOL_TIMEOUT_S) and the cleanup
 *    kill the compiler's whole tree (nvcc's cicc, ptxas, the host cc1plus).
 *
 * Removal walks the tree with fixed buffers (no malloc: the same code
 * serves the signal handler) to a depth of 16; links are removed, never
 * followed.
 */
#include "frontend_int.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SCRATCH_MAX 64   /* live scratch folders at once */
#define GROUPS_MAX 64    /* tool process groups at once */
#define RM_DEPTH 16

static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
/* a slot's path is complete before its used flag is set, and the flag is
   cleared before the path is reused: a handler sees whole paths only */
static char reg_dir[SCRATCH_MAX][4096];
static volatile sig_atomic_t reg_used[SCRATCH_MAX];
static volatile pid_t reg_group[GROUPS_MAX];

/* ------------------------------------------------------------- removal -- */

struct linux_dirent64 {
  unsigned long long d_ino;
  long long d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[];
};

/* Remove name (in folder dirfd) and, for a folder, what it holds.
   Async-signal-safe. */
static void rm_at(int dirfd, const char *name, int depth) {
  if (unlinkat(dirfd, name, 0) == 0 || errno == ENOENT) return;
  if (depth >= RM_DEPTH) return;
  int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  char buf[4096] __attribute__((aligned(8)));
  /* entries removed while the listing is read may shift it: passes over
     the folder until one finds nothing left or removes nothing */
  for (int pass = 0; pass < 4; pass++) {
    int seen = 0, gone = 0;
    lseek(fd, 0, SEEK_SET);
    for (;;) {
      long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
      if (n <= 0) break;
      for (long off = 0; off < n;) {
        struct linux_dirent64 *e = (struct linux_dirent64 *)(buf + off);
        off += e->d_reclen;
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        seen++;
        if (e->d_type == DT_DIR || (unlinkat(fd, e->d_name, 0) < 0 && errno == EISDIR))
          rm_at(fd, e->d_name, depth + 1);
        if (faccessat(fd, e->d_name, F_OK, AT_SYMLINK_NOFOLLOW) < 0) gone++;
      }
    }
    if (!seen || !gone) break;
  }
  close(fd);
  unlinkat(dirfd, name, AT_REMOVEDIR);
}

static void rm_tree(const char *dir) { rm_at(AT_FDCWD, dir, 0); }

void fe_scratch_remove(const char *dir) { fe__remove_tmpdir(dir); }

void fe__remove_tmpdir(const char *dir) {
  if (!dir || !*dir) return;
  rm_tree(dir);
  pthread_mutex_lock(&reg_mu);
  for (int k = 0; k < SCRATCH_MAX; k++)
    if (reg_used[k] && !strcmp(reg_dir[k], dir)) reg_used[k] = 0;
  pthread_mutex_unlock(&reg_mu);
}

/* ------------------------------------------------------------ naming -- */

/* This host's name as a file-name part: letters, digits, '-' and '.'
   (others become '-'), at most 40 bytes; "host" when unknown. */
static void host_part(char *buf, size_t cap) {
  char h[256] = "";
  if (gethostname(h, sizeof h - 1) != 0 || !h[0]) snprintf(h, sizeof h, "host");
  size_t n = 0;
  for (const char *p = h; *p && n + 1 < cap && n < 40; p++)
    buf[n++] = isalnum((unsigned char)*p) || *p == '.' ? *p : '-';
  buf[n] = 0;
}

/* Does entry name belong to a dead process of this host (prefix "P-"
   given as pre, this host as host)?  1 yes, 0 no (another host, a live or
   unknown owner, another name). */
static int stale(const char *name, const char *pre, const char *host) {
  size_t pl = strlen(pre), hl = strlen(host);
  if (strncmp(name, pre, pl) || name[pl] != '-') return 0;
  const char *p = name + pl + 1;
  if (strncmp(p, host, hl) || p[hl] != '-') return 0;
  p += hl + 1;
  char *end;
  errno = 0;
  long pid = strtol(p, &end, 10);
  if (errno || end == p || *end != '-' || pid <= 0 || pid > INT_MAX) return 0;
  if (pid == (long)getpid()) return 0;
  return kill((pid_t)pid, 0) < 0 && errno == ESRCH;
}

int fe_scratch_sweep(const char *base, const char *prefix) {
  char host[64];
  host_part(host, sizeof host);
  DIR *d = opendir(base && *base ? base : ".");
  if (!d) return 0;
  int fd = dirfd(d), n = 0;
  struct dirent *e;
  char names[32][256];
  int nn = 0;
  /* collect first: removing while reading would skip entries */
  while ((e = readdir(d)) != NULL && nn < 32)
    if (stale(e->d_name, prefix, host)) snprintf(names[nn++], sizeof names[0], "%s", e->d_name);
  for (int k = 0; k < nn; k++, n++) rm_at(fd, names[k], 0);
  closedir(d);
  return n;
}

/* (base, prefix) pairs already swept by this process. */
static char swept[8][512];
static int nswept;

int fe_scratch_make(const char *base, const char *prefix, char *dir, size_t cap, char *err,
                    size_t errcap) {
  if (!base || !*base) base = "/tmp";
  char key[512];
  snprintf(key, sizeof key, "%s\n%s", base, prefix);
  pthread_mutex_lock(&reg_mu);
  int done = 0;
  for (int k = 0; k < nswept && !done; k++) done = !strcmp(swept[k], key);
  if (!done && nswept < 8) snprintf(swept[nswept++], sizeof swept[0], "%s", key);
  pthread_mutex_unlock(&reg_mu);
  if (!done) fe_scratch_sweep(base, prefix);
  char host[64];
  host_part(host, sizeof host);
  if ((size_t)snprintf(dir, cap, "%s/%s-%s-%ld-XXXXXX", base, prefix, host, (long)getpid()) >=
      cap)
    return fe__fail(err, errcap, "the temporary folder name in %s is too long", base);
  if (!mkdtemp(dir))
    return fe__fail(err, errcap, "cannot create a temporary folder in %s: %s", base,
                    strerror(errno));
  pthread_mutex_lock(&reg_mu);
  for (int k = 0; k < SCRATCH_MAX; k++)
    if (!reg_used[k]) {
      snprintf(reg_dir[k], sizeof reg_dir[k], "%s", dir);
      __atomic_thread_fence(__ATOMIC_SEQ_CST);
      reg_used[k] = 1;
      break;
    }
  pthread_mutex_unlock(&reg_mu);
  return 0;
}

/* ---------------------------------------------------- tool children -- */

void fe__group_add(pid_t g) {
  for (int k = 0; k < GROUPS_MAX; k++) {
    pid_t none = 0;
    if (__atomic_compare_exchange_n(&reg_group[k], &none, g, 0, __ATOMIC_SEQ_CST,
                                    __ATOMIC_SEQ_CST))
      return;
  }
}

void fe__group_del(pid_t g) {
  for (int k = 0; k < GROUPS_MAX; k++) {
    pid_t want = g;
    if (__atomic_compare_exchange_n(&reg_group[k], &want, 0, 0, __ATOMIC_SEQ_CST,
                                    __ATOMIC_SEQ_CST))
      return;
  }
}

void fe_cleanup(void) {
  for (int k = 0; k < GROUPS_MAX; k++) {
    pid_t g = reg_group[k];
    if (g > 0) kill(-g, SIGKILL);
  }
  for (int k = 0; k < SCRATCH_MAX; k++)
    if (reg_used[k]) rm_tree(reg_dir[k]);
}

/* ------------------------------------------------------- time limit -- */

static double tool_timeout; /* 0: not set (KCAST_TOOL_TIMEOUT or the default) */

void fe_set_tool_timeout(double seconds) {
  __atomic_store(&tool_timeout, &seconds, __ATOMIC_RELAXED);
}

double fe_tool_timeout(void) {
  double t;
  __atomic_load(&tool_timeout, &t, __ATOMIC_RELAXED);
  if (t > 0) return t;
  const char *e = getenv("KCAST_TOOL_TIMEOUT");
  char *end;
  if (e && *e && (t = strtod(e, &end)) > 0 && !*end) return t;
  return FE_TOOL_TIMEOUT_S;
}
