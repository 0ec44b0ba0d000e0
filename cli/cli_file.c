/*
 * cli_file.c -- output files written whole or not at all.
 *
 * A command that writes a file the user named (-o, --dump) writes it under
 * a temporary name beside it (same folder, so the rename cannot cross file
 * systems) and renames it over the target only when every write, the
 * flush, the fsync and the close succeeded.  A full disk or an I/O error
 * then leaves no partial file and an existing target as it was.  The
 * name "-" is standard output (as for every tool that takes -o), never a
 * file called "-".
 *
 * Numbers in tables are plain decimals (cli_num): 1207900, not 1.2079e+06.
 */
#include "cli/cli.h"

#include <csv.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cli_out_open(cli_out *o, const char *path) {
  memset(o, 0, sizeof *o);
  o->path = path;
  if (!strcmp(path, "-")) {
    o->f = stdout;
    return 0;
  }
  size_t pl = strlen(path);
  if (!(o->tmp = malloc(pl + 16))) {
    cli_error("out of memory");
    return -1;
  }
  memcpy(o->tmp, path, pl);
  memcpy(o->tmp + pl, ".tmp.XXXXXX", 12);
  int fd = mkstemp(o->tmp);
  if (fd < 0) {
    cli_error("%s: cannot create a temporary file next to it: %s", path, strerror(errno));
    free(o->tmp);
    o->tmp = NULL;
    return -1;
  }
  /* mkstemp makes 0600; the file gets the mode a plain create would */
  mode_t mask = umask(0);
  umask(mask);
  if (fchmod(fd, 0666 & ~mask)) { /* keeps 0600 */ }
  if (!(o->f = fdopen(fd, "wb"))) {
    cli_error("%s: %s", o->tmp, strerror(errno));
    close(fd);
    unlink(o->tmp);
    free(o->tmp);
    o->tmp = NULL;
    return -1;
  }
  return 0;
}

int cli_out_close(cli_out *o, int ok) {
  if (!o->f) return -1;
  int e = 0;
  if (!o->tmp) { /* standard output: main.c checks its flush and close */
    o->f = NULL;
    return ok ? 0 : -1;
  }
  if (ok && (ferror(o->f) || fflush(o->f) || fsync(fileno(o->f)))) e = errno ? errno : EIO;
  if (fclose(o->f) && ok && !e) e = errno ? errno : EIO;
  o->f = NULL;
  if (ok && !e && rename(o->tmp, o->path)) e = errno;
  if (!ok || e) unlink(o->tmp);
  if (ok && e) cli_error("%s: cannot write: %s (the file is left as it was)", o->path, strerror(e));
  free(o->tmp);
  o->tmp = NULL;
  return ok && !e ? 0 : -1;
}

void cli_csv_field(FILE *f, const char *s) {
  if (!s) return;
  size_t n = strlen(s);
  if (n && (strpbrk(s, ",\"\r\n") || s[0] == ' ' || s[n - 1] == ' ')) csv_fwrite(f, s, n);
  else fputs(s, f);
}

const char *cli_num(char *buf, size_t cap, double v, int sig) {
  if (isnan(v)) return snprintf(buf, cap, "nan"), buf;
  if (isinf(v)) return snprintf(buf, cap, "%s", v < 0 ? "-inf" : "inf"), buf;
  if (v == 0) return snprintf(buf, cap, "0"), buf;
  if (sig < 1) sig = 1;
  int e = (int)floor(log10(fabs(v))), dec = sig - 1 - e;
  if (dec < 0) { /* round to sig digits: 1207912.3 at 4 -> 1208000 */
    double q = pow(10, -dec);
    v = round(v / q) * q;
    dec = 0;
  }
  if (dec > 40) dec = 40;
  int n = snprintf(buf, cap, "%.*f", dec, v);
  if (n < 0 || (size_t)n >= cap) return snprintf(buf, cap, "%.*g", sig, v), buf; /* > 1e60 */
  if (strchr(buf, '.')) {
    while (n > 0 && buf[n - 1] == '0') buf[--n] = 0;
    if (n > 0 && buf[n - 1] == '.') buf[--n] = 0;
  }
  if (!strcmp(buf, "-0")) snprintf(buf, cap, "0");
  return buf;
}
