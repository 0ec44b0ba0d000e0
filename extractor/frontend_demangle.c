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

#include <stdio.h>
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

int fe_same_function(const char *a, const char *b) {
  if (!a || !b) return 0;
  if (!strcmp(a, b)) return 1;
  char *da = fe_demangle(a), *db = da ? fe_demangle(b) : NULL;
  int same = da && db && !strcmp(da, db);
  free(da);
  free(db);
  return same;
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


/* ------------------------------------------------------- templates -- */

/*
 * A kernel template's instances differ only in their integer template
 * arguments (gemm_tiled_kernel<4>, <8>, ...): one feature model covers
 * them with those arguments as variables.  The template's own argument
 * list is the last <...> of the source name at depth 0 (a class's or
 * namespace's arguments before it belong to the scope).  Integer
 * arguments as __cxa_demangle writes them: "16", "-3", "16u", "16ul",
 * "(char)65", "true", "false".
 */

/* Range [*b, *e) of the last top-level template argument list of source
   name s (inside the brackets); 0 when s has none. */
static int last_targs(const char *s, size_t *b, size_t *e) {
  int depth = 0, found = 0;
  size_t open = 0;
  for (size_t i = 0; s[i]; i++) {
    if (!strncmp(s + i, anon, sizeof anon - 1)) {
      i += sizeof anon - 2;
      continue;
    }
    if (s[i] == '<') {
      if (depth++ == 0) open = i;
    } else if (s[i] == '>' && depth > 0) {
      if (--depth == 0) *b = open + 1, *e = i, found = 1;
    } else if (depth == 0 && found && s[i] == ':') {
      found = 0; /* a scope's arguments, a later component follows */
    }
  }
  return found;
}

/* Next argument of the list [p, end): its trimmed range; returns the
   position after its comma (or end). */
static const char *next_targ(const char *p, const char *end, const char **ab, const char **ae) {
  int depth = 0;
  const char *q = p;
  for (; q < end; q++) {
    if (*q == '<' || *q == '(') depth++;
    else if ((*q == '>' || *q == ')') && depth > 0) depth--;
    else if (*q == ',' && depth == 0) break;
  }
  const char *s = p, *t = q;
  while (s < t && *s == ' ') s++;
  while (t > s && t[-1] == ' ') t--;
  *ab = s, *ae = t;
  return q < end ? q + 1 : end;
}

/* Is [s, e) an integer as the demangler writes one?  Its value in *v. */
static int int_literal(const char *s, const char *e, double *v) {
  size_t n = (size_t)(e - s);
  if (n == 4 && !strncmp(s, "true", 4)) return *v = 1, 1;
  if (n == 5 && !strncmp(s, "false", 5)) return *v = 0, 1;
  if (s < e && *s == '(') { /* (type)N */
    while (s < e && *s != ')') s++;
    if (s == e) return 0;
    s++;
  }
  int neg = s < e && *s == '-';
  if (neg) s++;
  if (s == e || *s < '0' || *s > '9') return 0;
  double x = 0;
  for (; s < e && *s >= '0' && *s <= '9'; s++) x = 10 * x + (*s - '0');
  while (s < e && (*s == 'u' || *s == 'U' || *s == 'l' || *s == 'L')) s++;
  if (s != e) return 0;
  *v = neg ? -x : x;
  return 1;
}

static int is_ident(const char *s, const char *e) {
  if (s == e || !((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_')) return 0;
  for (; s < e; s++)
    if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
          *s == '_'))
      return 0;
  return 1;
}

/* Is [s, e) a fundamental type's keyword (a fixed argument, never a
   variable)? */
static int is_type_word(const char *s, const char *e) {
  static const char *const w[] = {"bool", "char", "short", "int", "long", "float", "double",
                                  "void", "signed", "unsigned", "wchar_t", "char16_t",
                                  "char32_t", "__half", "half", "__nv_bfloat16", NULL};
  for (int i = 0; w[i]; i++)
    if (strlen(w[i]) == (size_t)(e - s) && !strncmp(w[i], s, (size_t)(e - s))) return 1;
  return 0;
}

/* [a, ae) and [b, be) equal when spaces are ignored. */
static int same_range(const char *a, const char *ae, const char *b, const char *be) {
  for (;; a++, b++) {
    while (a < ae && *a == ' ') a++;
    while (b < be && *b == ' ') b++;
    if (a == ae || b == be) return a == ae && b == be;
    if (*a != *b) return 0;
  }
}

size_t fe_template_key(const char *mangled, char *key, size_t cap, double *targs, size_t max) {
  if (cap) key[0] = 0;
  char *d = fe_demangle(mangled);
  if (!d) return 0;
  /* the source name's place in d: after a return type, before '(' */
  char src[1024];
  size_t sl = fe_demangled_name(d, src, sizeof src);
  const char *at = sl ? strstr(d, src) : NULL;
  size_t b, e, n = 0;
  if (!at || !last_targs(src, &b, &e)) {
    free(d);
    return 0;
  }
  size_t off = (size_t)(at - d), len = 0;
  const char *p = src + b, *end = src + e;
  char tmp[2048];
  /* d up to the argument list, then each argument or its placeholder */
#define KPUT(s_, n_) \
  do { \
    size_t m_ = (n_); \
    if (len + m_ < sizeof tmp) memcpy(tmp + len, (s_), m_), len += m_; \
    else len = sizeof tmp; \
  } while (0)
  KPUT(d, off + b);
  for (int first = 1; p < end; first = 0) {
    const char *ab, *ae;
    if (!first) KPUT(", ", 2);
    const char *nx = next_targ(p, end, &ab, &ae);
    double v;
    if (n < max && int_literal(ab, ae, &v)) {
      char ph[16];
      int k = snprintf(ph, sizeof ph, "T%zu", n);
      targs[n++] = v;
      KPUT(ph, (size_t)k);
    } else {
      KPUT(ab, (size_t)(ae - ab));
    }
    p = nx;
  }
  KPUT(d + off + e, strlen(d + off + e));
#undef KPUT
  free(d);
  if (n == 0 || len >= sizeof tmp || len >= cap) return 0;
  memcpy(key, tmp, len);
  key[len] = 0;
  return n;
}

int fe_template_args(const char *name, const char *pattern, double *targs, size_t max,
                     size_t *n, char *why, size_t whycap) {
  *n = 0;
  if (whycap) why[0] = 0;
  size_t pb, pe, ib, ie;
  char src[1024];
  char *d = NULL;
  if (!strncmp(name, "_Z", 2) && strchr(pattern, '(')) {
    /* a mangled instance against a template key: the same key */
    char key[2048];
    double v[64];
    size_t k = fe_template_key(name, key, sizeof key, v, 64);
    if (k == 0 || !same_spaced(key, pattern)) return 0;
    if (k > max) {
      if (whycap) snprintf(why, whycap, "%s has more than %zu template variables", name, max);
      return -1;
    }
    memcpy(targs, v, k * sizeof *v);
    *n = k;
    return 1;
  }
  if (!strncmp(name, "_Z", 2)) {
    if (!(d = fe_demangle(name))) return 0;
    fe_demangled_name(d, src, sizeof src);
  } else {
    fe_demangled_name(name, src, sizeof src);
  }
  free(d);
  char psrc[1024];
  fe_demangled_name(pattern, psrc, sizeof psrc);
  if (!last_targs(psrc, &pb, &pe) || !last_targs(src, &ib, &ie)) return 0;
  /* the names before the lists: equal, or the pattern is the last component */
  char pn[1024], in[1024];
  snprintf(pn, sizeof pn, "%.*s", (int)(pb - 1), psrc);
  snprintf(in, sizeof in, "%.*s", (int)(ib - 1), src);
  if (!same_spaced(pn, in)) {
    const char *last = in;
    for (const char *p = in; (p = strstr(p, "::")); p += 2) last = p + 2;
    if (strstr(pn, "::") || !same_spaced(pn, last)) return 0;
  }
  const char *p = psrc + pb, *pend = psrc + pe, *q = src + ib, *qend = src + ie;
  size_t nv = 0;
  int bad = 0;
  while (p < pend || q < qend) {
    if (p >= pend || q >= qend) return 0; /* another number of arguments */
    const char *ab, *ae, *bb, *be;
    p = next_targ(p, pend, &ab, &ae);
    q = next_targ(q, qend, &bb, &be);
    if (same_range(ab, ae, bb, be)) continue; /* a fixed argument */
    if (!is_ident(ab, ae) || is_type_word(ab, ae)) return 0;
    double v;
    if (!int_literal(bb, be, &v)) {
      if (!bad && whycap)
        snprintf(why, whycap, "template argument '%.*s' of %s (for %.*s) is not an integer",
                 (int)(be - bb), bb, src, (int)(ae - ab), ab);
      bad = 1;
      continue;
    }
    if (nv == max) {
      if (!bad && whycap) snprintf(why, whycap, "%s has more than %zu template variables", src, max);
      bad = 1;
      continue;
    }
    targs[nv++] = v;
  }
  if (bad) return -1;
  *n = nv;
  return 1;
}
