/*
 * frontend_demangle.c -- kernel names as users wrote them: the toolchain's
 * Itanium demangler (__cxa_demangle of libstdc++, the one c++filt and gdb
 * agree with) for the full signature, and the source name cut out of it.
 *
 * The demangled form of a template kernel carries its return type
 * ("void gemm_tiled_kernel<16>(int, float, ...)"), a plain one does not
 * ("saxpy(int, float, float const*, float*)"); fe_demangled_name() drops
 * both the return type and the parameter list, keeping namespaces and
 * template arguments ("ns::k<float, 4>"), which is what --kernel matches.
 */
#include "extractor/frontend.h"

#include <stdlib.h>
#include <string.h>

/* libstdc++'s C entry point (cxxabi.h is C++ only). */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

char *fe_demangle(const char *mangled) {
  if (!mangled || strncmp(mangled, "_Z", 2)) return NULL;
  int status = 0;
  char *d = __cxa_demangle(mangled, NULL, NULL, &status);
  if (status) {
    free(d);
    return NULL;
  }
  return d;
}

/* "(anonymous namespace)" is the one parenthesis a name holds. */
static const char anon[] = "(anonymous namespace)";

size_t fe_demangled_name(const char *d, char *buf, size_t cap) {
  if (!cap) return 0;
  buf[0] = 0;
  if (!d) return 0;
  /* end: the '(' of the parameter list at template depth 0 */
  size_t start = 0, end = strlen(d);
  int depth = 0;
  for (size_t i = 0; d[i]; i++) {
    if (!strncmp(d + i, anon, sizeof anon - 1)) {
      i += sizeof anon - 2;
      continue;
    }
    if (d[i] == '<') depth++;
    else if (d[i] == '>' && depth > 0) depth--;
    else if (depth == 0 && d[i] == ' ') start = i + 1; /* after a return type */
    else if (depth == 0 && d[i] == '(') {
      end = i;
      break;
    }
  }
  size_t n = end > start ? end - start : 0;
  if (n >= cap) n = cap - 1;
  memcpy(buf, d + start, n);
  buf[n] = 0;
  return n;
}

/* a and b equal when spaces are ignored ("k<float,4>" is "k<float, 4>"). */
static int same_spaced(const char *a, const char *b) {
  for (;; a++, b++) {
    while (*a == ' ') a++;
    while (*b == ' ') b++;
    if (*a != *b) return 0;
    if (!*a) return 1;
  }
}

/* name without its template arguments (outermost <...> removed). */
static void strip_templates(const char *name, char *buf, size_t cap) {
  size_t n = 0;
  int depth = 0;
  for (const char *p = name; *p && n + 1 < cap; p++) {
    if (*p == '<') depth++;
    else if (*p == '>' && depth > 0) depth--;
    else if (!depth) buf[n++] = *p;
  }
  buf[n] = 0;
}

int fe_name_match(const char *mangled, const char *want) {
  char *d = fe_demangle(mangled);
  if (!d) return 0;
  char src[1024], bare[1024];
  fe_demangled_name(d, src, sizeof src);
  int level = 0;
  if (same_spaced(d, want) || same_spaced(src, want)) level = 3;
  free(d);
  if (level) return level;
  strip_templates(src, bare, sizeof bare);
  if (same_spaced(bare, want)) return 2;
  const char *last = bare;
  for (const char *p = bare; (p = strstr(p, "::")); p += 2) last = p + 2;
  return same_spaced(last, want) ? 1 : 0;
}

