/*
 * frontend.c -- fe_to_ptx: whatever the user has (.ptx, .cu, .ll, .bc)
 * becomes PTX text for the parser.
 *
 *   .ptx        read as bytes (the parser rejects what is not PTX)
 *   .cu/nvcc    nvcc -ptx -arch=ARCH EXTRA... FILE -o TMP
 *   .cu/clang   clang-22 -x cuda --cuda-device-only -S -O3 --cuda-gpu-arch=ARCH
 *               --cuda-path=ROOT -Wno-unknown-cuda-version EXTRA... FILE -o TMP
 *   .ll/.bc     frontend_llvm.c (LLVM C API, no child process)
 *
 * Why child processes: nvcc is only a program, and clang's CUDA driver (the
 * device-only job, libdevice linking, the CUDA headers) is what users run,
 * so running the same binary gives the same PTX they would get.  Children
 * are started with posix_spawnp and an argv array -- never a shell string,
 * so file names with spaces or quotes are just names -- with stdin from
 * /dev/null and stdout/stderr redirected into a private mkdtemp folder that
 * is removed afterwards.  posix_spawn rather than fork keeps this safe in
 * the multithreaded (OpenMP) processes kcast runs in.
 *
 * Errors: one line.  A compiler failure reports the compiler's first line
 * that mentions an error; nvcc's "FILE(LINE): error: ..." is rewritten to
 * the "FILE:LINE: error: ..." form clang uses, so both read alike.
 *
 * clang needs --cuda-path to find libdevice (sqrt, sin, exp come from it);
 * a PTX that still declares `.extern .func __nv_*` means libdevice was not
 * linked, and is reported as an error rather than handed to the parser.
 *
 * The clang binary is $KCAST_CLANG when set, else clang-22; nvcc is found
 * on PATH.
 */
#include "frontend_int.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define FE_DEFAULT_CLANG "clang-22"

int fe__fail(char *err, size_t errcap, const char *fmt, ...) {
  if (err && errcap) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errcap, fmt, ap);
    va_end(ap);
  }
  return -1;
}

const char *fe__arch(const fe_options *o, const char *path, char *err,
                     size_t errcap) {
  const char *a = (o && o->arch && *o->arch) ? o->arch : FE_DEFAULT_ARCH;
  const char *p = a;
  int ok = strncmp(p, "sm_", 3) == 0;
  if (ok) {
    p += 3;
    if (!isdigit((unsigned char)*p)) ok = 0;
    while (isdigit((unsigned char)*p)) p++;
    if (ok && isalpha((unsigned char)*p)) p++;
    if (*p) ok = 0;
  }
  if (!ok) {
    fe__fail(err, errcap, "%s: bad target architecture '%s' (expected sm_NN, e.g. sm_90)",
             path, a);
    return NULL;
  }
  return a;
}

/* Is there an executable `name` in one of PATH's folders?  Writes the full
   path into buf when found. */
static int find_on_path(const char *name, char *buf, size_t cap) {
  const char *path = getenv("PATH");
  if (!path) return 0;
  while (*path) {
    const char *end = strchr(path, ':');
    size_t n = end ? (size_t)(end - path) : strlen(path);
    if (n > 0) {
      int w = snprintf(buf, cap, "%.*s/%s", (int)n, path, name);
      if (w > 0 && (size_t)w < cap && access(buf, X_OK) == 0) return 1;
    }
    if (!end) break;
    path = end + 1;
  }
  return 0;
}

char *fe__cuda_root(char *buf, size_t cap) {
  const char *env = getenv("CUDA_PATH");
  if (!env || !*env) env = getenv("CUDA_HOME");
  if (env && *env) {
    snprintf(buf, cap, "%s", env);
    return buf;
  }
  if (find_on_path("nvcc", buf, cap)) {
    /* dirname(dirname(.../bin/nvcc)) */
    for (int k = 0; k < 2; k++) {
      char *slash = strrchr(buf, '/');
      if (!slash) break;
      if (slash == buf) slash[1] = 0; else *slash = 0;
    }
    if (*buf) return buf;
  }
  snprintf(buf, cap, "/usr/local/cuda");
  return buf;
}

/* ------------------------------------------------------------ files -- */

/* Read a whole file, binary-safe: *out is malloc'd and NUL-terminated. */
static int read_all(const char *path, char **out, size_t *len, char *err,
                    size_t errcap) {
  FILE *f = fopen(path, "rb");
  if (!f) return fe__fail(err, errcap, "%s: %s", path, strerror(errno));
  size_t cap = 1 << 16, n = 0;
  char *s = malloc(cap);
  if (!s) {
    fclose(f);
    return fe__fail(err, errcap, "%s: out of memory", path);
  }
  for (;;) {
    if (cap - n < 2) {
      if (cap > ((size_t)-1) / 2) {
        free(s);
        fclose(f);
        return fe__fail(err, errcap, "%s: file too large", path);
      }
      char *t = realloc(s, cap * 2);
      if (!t) {
        free(s);
        fclose(f);
        return fe__fail(err, errcap, "%s: out of memory", path);
      }
      s = t;
      cap *= 2;
    }
    size_t r = fread(s + n, 1, cap - n - 1, f);
    n += r;
    if (r == 0) break;
  }
  int bad = ferror(f);
  int e = errno;
  fclose(f);
  if (bad) {
    free(s);
    return fe__fail(err, errcap, "%s: read error: %s", path, strerror(e));
  }
  s[n] = 0;
  *out = s;
  if (len) *len = n;
  return 0;
}

/* Remove a flat temporary folder and everything in it. */
static void remove_tmpdir(const char *dir) {
  DIR *d = opendir(dir);
  if (d) {
    struct dirent *e;
    char p[4096];
    while ((e = readdir(d)) != NULL) {
      if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
      if (snprintf(p, sizeof p, "%s/%s", dir, e->d_name) < (int)sizeof p) unlink(p);
    }
    closedir(d);
  }
  rmdir(dir);
}

/* ------------------------------------------------------ child runs -- */

/*
 * The line of a compiler's stderr that best says what went wrong: the first
 * one mentioning "error", else the first mentioning "fatal", else the first
 * non-empty one.  Copied into buf without its newline; "" when none.
 */
static void pick_error_line(const char *text, char *buf, size_t cap) {
  static const char *const keys[] = {"error", "fatal", ""};
  buf[0] = 0;
  if (!text) return;
  for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
    for (const char *l = text; *l;) {
      const char *e = strchr(l, '\n');
      size_t n = e ? (size_t)(e - l) : strlen(l);
      while (n && isspace((unsigned char)l[n - 1])) n--;
      const char *hit = NULL;
      if (n) {
        /* memmem keeps the search inside this line. */
        hit = *keys[k] ? memmem(l, n, keys[k], strlen(keys[k])) : l;
      }
      if (hit) {
        snprintf(buf, cap, "%.*s", (int)n, l);
        return;
      }
      if (!e) break;
      l = e + 1;
    }
  }
}

/* nvcc writes "FILE(12): error: ..."; make it "FILE:12: error: ...". */
static void normalise_nvcc_line(char *line, size_t cap, const char *path) {
  size_t pl = strlen(path);
  if (strncmp(line, path, pl) != 0 || line[pl] != '(') return;
  char *p = line + pl + 1, *q = p;
  while (isdigit((unsigned char)*q)) q++;
  if (q == p || q[0] != ')' || q[1] != ':') return;
  char tmp[1024];
  snprintf(tmp, sizeof tmp, "%s:%.*s%s", path, (int)(q - p), p, q + 1);
  snprintf(line, cap, "%s", tmp);
}

/*
 * Run argv (argv[0] looked up on PATH) with stdout/stderr into files in dir.
 * On a failed start or a non-zero exit writes err and returns -1; *diag gets
 * the child's stderr (malloc'd, may be NULL) either way when it ran.
 */
static int run_tool(char *const *argv, const char *tool, const char *dir,
                    const char *path, char **diag, char *err, size_t errcap) {
  char outp[4200], errp[4200];
  snprintf(outp, sizeof outp, "%s/stdout", dir);
  snprintf(errp, sizeof errp, "%s/stderr", dir);
  *diag = NULL;

  posix_spawn_file_actions_t fa;
  if (posix_spawn_file_actions_init(&fa) != 0)
    return fe__fail(err, errcap, "%s: cannot run %s: out of memory", path, tool);
  int rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  if (!rc) rc = posix_spawn_file_actions_addopen(&fa, 1, outp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (!rc) rc = posix_spawn_file_actions_addopen(&fa, 2, errp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  pid_t pid = 0;
  if (!rc) rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc == ENOENT)
    return fe__fail(err, errcap, "%s: %s not found%s", path, argv[0],
                    strchr(argv[0], '/') ? "" : " on PATH");
  if (rc) return fe__fail(err, errcap, "%s: cannot run %s: %s", path, argv[0], strerror(rc));

  int st = 0;
  while (waitpid(pid, &st, 0) < 0) {
    if (errno != EINTR)
      return fe__fail(err, errcap, "%s: waiting for %s: %s", path, tool, strerror(errno));
  }
  char *text = NULL;
  if (read_all(errp, &text, NULL, NULL, 0) != 0) text = NULL;
  *diag = text;
  if (WIFSIGNALED(st))
    return fe__fail(err, errcap, "%s: %s killed by signal %d", path, tool, WTERMSIG(st));
  if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return 0;

  char line[1024];
  pick_error_line(text, line, sizeof line);
  normalise_nvcc_line(line, sizeof line, path);
  int code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  if (!line[0])
    return fe__fail(err, errcap, "%s: %s failed (exit status %d)", path, tool, code);
  if (strncmp(line, path, strlen(path)) == 0)
    return fe__fail(err, errcap, "%s (%s)", line, tool);
  return fe__fail(err, errcap, "%s: %s failed: %s", path, tool, line);
}

/* A libdevice function clang left undefined, or NULL.  Writes its name. */
static const char *unresolved_libdevice(const char *ptx, char *name, size_t cap) {
  for (const char *l = ptx; l && *l;) {
    const char *e = strchr(l, '\n');
    size_t n = e ? (size_t)(e - l) : strlen(l);
    while (n && (*l == ' ' || *l == '\t')) l++, n--;
    if (n > 13 && strncmp(l, ".extern .func", 13) == 0) {
      const char *nv = memmem(l, n, "__nv_", 5);
      if (nv) {
        size_t k = 0;
        while (nv + k < l + n && (isalnum((unsigned char)nv[k]) || nv[k] == '_')) k++;
        snprintf(name, cap, "%.*s", (int)k, nv);
        return name;
      }
    }
    if (!e) break;
    l = e + 1;
  }
  return NULL;
}

/* .cu -> PTX through nvcc or clang. */
static int cu_to_ptx(const char *path, const fe_options *o, char **ptx,
                     size_t *len, char *err, size_t errcap) {
  const char *arch = fe__arch(o, path, err, errcap);
  if (!arch) return -1;
  int use_clang = o && o->compiler == FE_CLANG;
  const char *tool = use_clang ? getenv("KCAST_CLANG") : "nvcc";
  if (!tool || !*tool) tool = FE_DEFAULT_CLANG;

  const char *base = getenv("TMPDIR");
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/kcast-fe-XXXXXX", base && *base ? base : "/tmp");
  if (!mkdtemp(dir))
    return fe__fail(err, errcap, "%s: cannot create a temporary folder in %s: %s", path,
                    base && *base ? base : "/tmp", strerror(errno));

  char outp[4200], archopt[128], cudaopt[4200], root[4096], file[4200];
  snprintf(outp, sizeof outp, "%s/out.ptx", dir);
  /* A name starting with '-' would read as an option. */
  snprintf(file, sizeof file, "%s%s", path[0] == '-' ? "./" : "", path);

  size_t nextra = (o && o->extra) ? o->nextra : 0;
  const char **argv = calloc(16 + nextra, sizeof *argv);
  if (!argv) {
    remove_tmpdir(dir);
    return fe__fail(err, errcap, "%s: out of memory", path);
  }
  size_t a = 0;
  argv[a++] = tool;
  if (use_clang) {
    snprintf(archopt, sizeof archopt, "--cuda-gpu-arch=%s", arch);
    snprintf(cudaopt, sizeof cudaopt, "--cuda-path=%s", fe__cuda_root(root, sizeof root));
    argv[a++] = "-x";
    argv[a++] = "cuda";
    argv[a++] = "--cuda-device-only";
    argv[a++] = "-S";
    argv[a++] = "-O3";
    argv[a++] = archopt;
    argv[a++] = cudaopt;
    argv[a++] = "-Wno-unknown-cuda-version";
  } else {
    snprintf(archopt, sizeof archopt, "-arch=%s", arch);
    argv[a++] = "-ptx";
    argv[a++] = archopt;
  }
  for (size_t i = 0; i < nextra; i++)
    if (o->extra[i]) argv[a++] = o->extra[i];
  argv[a++] = file;
  argv[a++] = "-o";
  argv[a++] = outp;
  argv[a] = NULL;

  char *diag = NULL;
  int rc = run_tool((char *const *)argv, tool, dir, path, &diag, err, errcap);
  free(argv);
  free(diag);
  char *text = NULL;
  size_t n = 0;
  if (rc == 0 && read_all(outp, &text, &n, NULL, 0) != 0)
    rc = fe__fail(err, errcap, "%s: %s reported success but wrote no PTX", path, tool);
  remove_tmpdir(dir);
  if (rc) return rc;

  char fn[128];
  if (use_clang && unresolved_libdevice(text, fn, sizeof fn)) {
    free(text);
    return fe__fail(err, errcap,
                    "%s: %s left libdevice function %s unresolved (no libdevice under "
                    "--cuda-path=%s? set CUDA_PATH)",
                    path, tool, fn, root);
  }
  *ptx = text;
  if (len) *len = n;
  return 0;
}

/* ------------------------------------------------------- interface -- */

int fe_to_ptx(const char *path, const fe_options *o, char **ptx, size_t *len,
              char *err, size_t errcap) {
  if (err && errcap) err[0] = 0;
  if (!path || !*path || !ptx)
    return fe__fail(err, errcap, "fe_to_ptx: no input file given");
  *ptx = NULL;
  if (len) *len = 0;

  struct stat sb;
  if (stat(path, &sb) != 0) return fe__fail(err, errcap, "%s: %s", path, strerror(errno));
  if (S_ISDIR(sb.st_mode)) return fe__fail(err, errcap, "%s: is a directory", path);

  const char *slash = strrchr(path, '/');
  const char *dot = strrchr(slash ? slash + 1 : path, '.');
  const char *ext = dot ? dot + 1 : "";
  if (!strcasecmp(ext, "ptx")) return read_all(path, ptx, len, err, errcap);
  if (!strcasecmp(ext, "cu")) return cu_to_ptx(path, o, ptx, len, err, errcap);
  if (!strcasecmp(ext, "ll") || !strcasecmp(ext, "bc"))
    return fe__llvm_to_ptx(path, o, ptx, len, err, errcap);
  return fe__fail(err, errcap, "%s: unknown input type '%s%s' (expected .cu, .ptx, .ll or .bc)",
                  path, dot ? "." : "", ext);
}
