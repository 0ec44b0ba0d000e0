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
