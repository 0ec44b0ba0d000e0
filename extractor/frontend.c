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
 * are started with posix_spawnp and an argv array, with stdin from
 * /dev/null and stdout/stderr redirected into a private mkdtemp folder that
 * is removed afterwards.  posix_spawn rather than fork keeps this safe in
 * the multithreaded (OpenMP) processes kcast runs in.
 *
 * nvcc runs its own stages (gcc -E, cicc, ptxas) through a shell, with file
 * names pasted into double-quoted command lines: a name holding $(...) or a
 * backquote would run.  So nvcc never sees a name the user chose: the
 * source is copied to TMP/in.cu behind a `#line 1 "NAME"` directive (so
 * messages and __FILE__ still say NAME), TMP/src is a symbolic link to the
 * source's folder and comes first among the quote-include folders
 * (-iquote through -Xcompiler; `#include "x.h"` finds what it found next
 * to the source), TMPDIR is TMP (nvcc's own intermediates go there), and
 * every remaining mention of TMP/in.cu or TMP/src/ in nvcc's messages is
 * mapped back.  TMP itself and every extra argument must consist of
 * characters no shell interprets, or the run is refused.  clang runs its
 * stages in-process and gets the real name.
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
#include <stdint.h>
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

/* ----------------------------------------------- architectures -- */

int fe_nvcc_gencode(const char *nvcc, char (*words)[64], size_t max, char *err, size_t errcap) {
  int fd[2];
  if (pipe(fd) < 0) return fe__fail(err, errcap, "cannot make a pipe: %s", strerror(errno));
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    close(fd[0]);
    close(fd[1]);
    return fe__fail(err, errcap, "cannot fork: %s", strerror(errno));
  }
  if (pid == 0) {
    dup2(fd[1], STDOUT_FILENO);
    close(fd[0]);
    close(fd[1]);
    int nul = open("/dev/null", O_RDWR);
    if (nul >= 0) dup2(nul, STDIN_FILENO), dup2(nul, STDERR_FILENO);
    execlp(nvcc, nvcc, "--list-gpu-code", (char *)NULL);
    _exit(127);
  }
  close(fd[1]);
  char out[4096];
  size_t n = 0;
  ssize_t r;
  while (n + 1 < sizeof out && ((r = read(fd[0], out + n, sizeof out - 1 - n)) > 0 ||
                                (r < 0 && errno == EINTR)))
    if (r > 0) n += (size_t)r;
  out[n] = 0;
  close(fd[0]);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
    return fe__fail(err, errcap, "%s --list-gpu-code failed (exit %d): cannot tell the "
                    "architectures it builds for (set NVCC to nvcc's path)", nvcc,
                    WIFEXITED(st) ? WEXITSTATUS(st) : -1);
  static const unsigned want[] = {FE_GPU_ARCHS};
  unsigned have[sizeof want / sizeof *want];
  size_t nh = 0;
  for (size_t k = 0; k < sizeof want / sizeof *want; k++) {
    char name[16];
    snprintf(name, sizeof name, "sm_%u", want[k]);
    size_t l = strlen(name);
    for (const char *p = out; (p = strstr(p, name)); p += l)
      if ((p == out || p[-1] == '\n' || p[-1] == ' ') &&
          (p[l] == '\n' || p[l] == '\r' || p[l] == ' ' || p[l] == 0)) {
        have[nh++] = want[k];
        break;
      }
  }
  if (!nh)
    return fe__fail(err, errcap, "%s --list-gpu-code lists none of sm_70 to sm_90", nvcc);
  if (2 * nh > max) return fe__fail(err, errcap, "too many architectures");
  for (size_t k = 0; k < nh; k++) {
    snprintf(words[2 * k], 64, "-gencode");
    if (k + 1 < nh)
      snprintf(words[2 * k + 1], 64, "arch=compute_%u,code=sm_%u", have[k], have[k]);
    else
      snprintf(words[2 * k + 1], 64, "arch=compute_%u,code=[sm_%u,compute_%u]", have[k], have[k],
               have[k]);
  }
  return (int)(2 * nh);
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
void fe__remove_tmpdir(const char *dir) {
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

/* nvcc writes "FILE(12): error: ..."; make it "FILE:12: error: ..." (FILE
   being the source or a header it includes). */
static void normalise_nvcc_line(char *line, size_t cap) {
  char *p, *q = NULL;
  for (p = strchr(line, '('); p; p = strchr(p + 1, '(')) {
    for (q = p + 1; isdigit((unsigned char)*q); q++) {}
    if (p > line && q > p + 1 && q[0] == ')' && q[1] == ':') break;
  }
  if (!p) return;
  char tmp[1024];
  snprintf(tmp, sizeof tmp, "%.*s:%.*s%s", (int)(p - line), line, (int)(q - p - 1), p + 1, q + 1);
  snprintf(line, cap, "%s", tmp);
}

/* text with every occurrence of from replaced by to (malloc'd; text itself
   when from does not occur or memory runs out). */
static char *replace_all(char *text, const char *from, const char *to) {
  size_t fl = strlen(from), tl = strlen(to), n = 0;
  if (!text || !fl) return text;
  for (const char *p = strstr(text, from); p; p = strstr(p + fl, from)) n++;
  if (!n) return text;
  size_t len = strlen(text);
  if (tl > fl && n > (SIZE_MAX - len - 1) / (tl - fl)) return text;
  char *out = malloc(len + n * (tl > fl ? tl - fl : 0) + 1), *o = out;
  if (!out) return text;
  const char *p = text;
  for (const char *q = strstr(p, from); q; q = strstr(p, from)) {
    memcpy(o, p, (size_t)(q - p));
    o += q - p;
    memcpy(o, to, tl);
    o += tl;
    p = q + fl;
  }
  strcpy(o, p);
  free(text);
  return out;
}


/*
 * Run argv (argv[0] looked up on PATH) with stdout/stderr into files in dir
 * and environment envp.  On a failed start or a non-zero exit writes err and
 * returns -1; *diag gets the child's stderr (malloc'd, may be NULL, names
 * mapped through map) either way when it ran.
 */
int fe__run_tool(char *const *argv, char *const *envp, const name_map *map,
                    const char *tool, const char *dir, const char *path, char **diag,
                    char *err, size_t errcap) {
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
  if (!rc) rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, envp);
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
  for (int k = 0; map && k < 2; k++)
    if (map->from[k]) text = replace_all(text, map->from[k], map->to[k]);
  *diag = text;
  if (WIFSIGNALED(st))
    return fe__fail(err, errcap, "%s: %s killed by signal %d", path, tool, WTERMSIG(st));
  if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return 0;

  char line[1024];
  pick_error_line(text, line, sizeof line);
  normalise_nvcc_line(line, sizeof line);
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

/* Can s be pasted into a shell command line, quoted or not, and mean
   itself?  Letters, digits and / . _ + = : @ % - only (no comma either:
   -Xcompiler splits its value at commas). */
static int shell_safe(const char *s) {
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && !strchr("/._+=:@%-", *s)) return 0;
  return 1;
}

/* Write s as a C string literal body (for #line). */
static void put_c_string(FILE *f, const char *s) {
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
    else if (c < 32 || c == 127) fprintf(f, "\\%03o", c);
    else fputc(c, f);
  }
}

/*
 * Stage path for nvcc in dir (see the top of the file): dir/in.cu, a copy
 * behind `#line 1 "path"`, and dir/src, a link to the source's folder.  The
 * folder's name for messages goes to srcdir.
 */
static int nvcc_stage(const char *path, const char *src, size_t srclen, const char *dir,
                      char *in, size_t incap, char *link, size_t linkcap, char *srcdir,
                      size_t srccap, char *err, size_t errcap) {
  char *text = NULL;
  size_t n = 0;
  if (src) {
    if (!(text = malloc(srclen + 1))) return fe__fail(err, errcap, "%s: out of memory", path);
    memcpy(text, src, srclen);
    n = srclen;
  } else if (read_all(path, &text, &n, err, errcap)) {
    return -1;
  }
  snprintf(in, incap, "%s/in.cu", dir);
  snprintf(link, linkcap, "%s/src", dir);
  FILE *f = fopen(in, "wb");
  if (!f) {
    free(text);
    return fe__fail(err, errcap, "%s: cannot write %s: %s", path, in, strerror(errno));
  }
  fputs("#line 1 \"", f);
  put_c_string(f, path);
  fputs("\"\n", f);
  size_t w = fwrite(text, 1, n, f);
  free(text);
  int bad = w != n || ferror(f);
  int e = errno;
  if (fclose(f) || bad)
    return fe__fail(err, errcap, "%s: cannot write %s: %s", path, in, strerror(bad ? e : errno));
  /* The folder as the user named it (for messages) and as it is (the link). */
  const char *slash = strrchr(path, '/');
  if (slash) snprintf(srcdir, srccap, "%.*s/", (int)(slash - path), path);
  else srcdir[0] = 0;
  char real[4096];
  char *folder = slash ? strndup(path, (size_t)(slash - path) + (slash == path)) : strdup(".");
  if (!folder || !realpath(folder, real)) {
    int e2 = errno;
    free(folder);
    return fe__fail(err, errcap, "%s: cannot resolve its folder: %s", path, strerror(e2));
  }
  free(folder);
  if (symlink(real, link))
    return fe__fail(err, errcap, "%s: cannot link %s: %s", path, link, strerror(errno));
  return 0;
}

/* environ with TMPDIR=dir (malloc'd array; the strings but *tmpvar are
   environ's). */
static char **env_with_tmpdir(const char *dir, char **tmpvar) {
  size_t n = 0;
  while (environ[n]) n++;
  char **env = calloc(n + 2, sizeof *env);
  if (!env || asprintf(tmpvar, "TMPDIR=%s", dir) < 0) {
    free(env);
    *tmpvar = NULL;
    return NULL;
  }
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (strncmp(environ[i], "TMPDIR=", 7)) env[k++] = environ[i];
  env[k++] = *tmpvar;
  env[k] = NULL;
  return env;
}

/* .cu -> PTX through nvcc or clang; src (srclen bytes) is compiled in
   place of path's contents when non-NULL. */
static int cu_to_ptx(const char *path, const char *src, size_t srclen, const fe_options *o,
                     char **ptx, size_t *len, char *err, size_t errcap) {
  const char *arch = fe__arch(o, path, err, errcap);
  if (!arch) return -1;
  int use_clang = o && o->compiler == FE_CLANG;
  const char *tool = use_clang ? getenv("KCAST_CLANG") : "nvcc";
  if (!tool || !*tool) tool = FE_DEFAULT_CLANG;
  size_t nextra = (o && o->extra) ? o->nextra : 0;
  if (!use_clang)
    for (size_t i = 0; i < nextra; i++)
      if (o->extra[i] && !shell_safe(o->extra[i]))
        return fe__fail(err, errcap,
                        "%s: nvcc argument '%s' holds characters nvcc's shell would interpret",
                        path, o->extra[i]);

  const char *base = getenv("TMPDIR");
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/kcast-fe-XXXXXX", base && *base ? base : "/tmp");
  if (!mkdtemp(dir))
    return fe__fail(err, errcap, "%s: cannot create a temporary folder in %s: %s", path,
                    base && *base ? base : "/tmp", strerror(errno));
  if (!use_clang && !shell_safe(dir)) {
    fe__remove_tmpdir(dir);
    return fe__fail(err, errcap,
                    "%s: the temporary folder %s holds characters nvcc's shell would "
                    "interpret; set TMPDIR to a plain folder name", path, dir);
  }

  char outp[4200], archopt[128], cudaopt[4200], root[4096], file[4200], link[4200];
  char srcdir[4200], linkslash[4300];
  snprintf(outp, sizeof outp, "%s/out.ptx", dir);
  /* A name starting with '-' would read as an option. */
  snprintf(file, sizeof file, "%s%s", path[0] == '-' ? "./" : "", path);
  name_map map = {{NULL, NULL}, {NULL, NULL}};
  char **env = environ, *tmpvar = NULL;
  if (use_clang && src) {
    /* clang reads the text from the private folder; quoted includes still
       find the source's folder (clang runs no shell: any name is fine). */
    if (nvcc_stage(path, src, srclen, dir, file, sizeof file, link, sizeof link, srcdir,
                   sizeof srcdir, err, errcap)) {
      fe__remove_tmpdir(dir);
      return -1;
    }
  } else if (!use_clang) {
    if (nvcc_stage(path, src, srclen, dir, file, sizeof file, link, sizeof link, srcdir,
                   sizeof srcdir, err, errcap) ||
        !(env = env_with_tmpdir(dir, &tmpvar))) {
      if (env == NULL) fe__fail(err, errcap, "%s: out of memory", path);
      fe__remove_tmpdir(dir);
      return -1;
    }
    snprintf(linkslash, sizeof linkslash, "%s/", link);
    map = (name_map){{file, linkslash}, {path, srcdir}};
  }

  const char **argv = calloc(16 + nextra, sizeof *argv);
  if (!argv) {
    if (env != environ) free(env);
    free(tmpvar);
    fe__remove_tmpdir(dir);
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
    if (src) {
      argv[a++] = "-iquote";
      argv[a++] = link;
    }
  } else {
    snprintf(archopt, sizeof archopt, "-arch=%s", arch);
    argv[a++] = "-ptx";
    argv[a++] = archopt;
    argv[a++] = "-Xcompiler";
    argv[a++] = "-iquote";
    argv[a++] = "-Xcompiler";
    argv[a++] = link;
  }
  for (size_t i = 0; i < nextra; i++)
    if (o->extra[i]) argv[a++] = o->extra[i];
  argv[a++] = file;
  argv[a++] = "-o";
  argv[a++] = outp;
  argv[a] = NULL;

  char *diag = NULL;
  int rc = fe__run_tool((char *const *)argv, env, &map, tool, dir, path, &diag, err, errcap);
  free(argv);
  free(diag);
  if (env != environ) free(env);
  free(tmpvar);
  char *text = NULL;
  size_t n = 0;
  if (rc == 0 && read_all(outp, &text, &n, NULL, 0) != 0)
    rc = fe__fail(err, errcap, "%s: %s reported success but wrote no PTX", path, tool);
  fe__remove_tmpdir(dir);
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
  if (!strcasecmp(ext, "cu")) return cu_to_ptx(path, NULL, 0, o, ptx, len, err, errcap);
  if (!strcasecmp(ext, "ll") || !strcasecmp(ext, "bc"))
    return fe__llvm_to_ptx(path, o, ptx, len, err, errcap);
  return fe__fail(err, errcap, "%s: unknown input type '%s%s' (expected .cu, .ptx, .ll or .bc)",
                  path, dot ? "." : "", ext);
}

int fe_cu_text_to_ptx(const char *text, size_t textlen, const char *path, const fe_options *o,
                      char **ptx, size_t *len, char *err, size_t errcap) {
  if (err && errcap) err[0] = 0;
  if (!text || !path || !*path || !ptx)
    return fe__fail(err, errcap, "fe_cu_text_to_ptx: no source given");
  *ptx = NULL;
  if (len) *len = 0;
  return cu_to_ptx(path, text, textlen, o, ptx, len, err, errcap);
}
