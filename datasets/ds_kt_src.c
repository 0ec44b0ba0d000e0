/*
 * ds_kt_src.c -- the text of a tunable kernel's source as the Kernel Tuner
 * import writes it, once per configuration (datasets/ds_kt_int.h).
 *
 * A group of configurations is compiled as one translation unit, each copy
 * of the source in its own namespace.  Namespaces keep C++ names apart, but
 * not names of C linkage: Kernel Tuner's sources often hold the tuned
 * kernel and a `_naive` reference kernel in one `extern "C" { ... }` block
 * (with the __constant__ arrays they read), and two copies of that block
 * define every name twice, so that such a source could only be compiled one
 * configuration at a time (about 9 s each).  So the source is scanned once:
 * the names declared at the top of an extern "C" region, and the kernel's
 * own name, are renamed NAME__kcast_cfgN in copy N -- token by token, never
 * a member after '.' or '->', never inside a comment, string or character
 * literal -- which is a rename a macro could not do (`#define x x__...`
 * would rename threadIdx.x).  Macros the source defines are #undef'd after
 * each copy (the next copy defines them again: an include guard in the
 * source would otherwise empty every later copy).
 *
 * The scan is a tokenizer, not a parser: it follows braces, parentheses,
 * brackets and template angle brackets far enough to find the declarator
 * of each declaration at the top of a region (the last identifier before
 * its first '(', '[', '=', ',', ';' or '{'), skipping attributes
 * (__launch_bounds__(...), __align__(...), __attribute__((...)), alignas).
 * A source it misreads still compiles one configuration at a time, as
 * before.
 *
 * loop_unroll_factor parameters (Kernel Tuner's rule): their value replaces
 * the argument of `#pragma unroll NAME` -- the parameter becomes `constexpr
 * int NAME = VALUE;` (ds_kt.c) -- and a value of 0 removes the pragma.
 */
#include "datasets/ds_kt_int.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- buffer -- */

int kt_sb_add(kt_sbuf *b, const char *t, size_t n) {
  if (b->n + n + 1 > b->cap) {
    size_t nc = b->cap ? b->cap : 4096;
    while (nc < b->n + n + 1) nc *= 2;
    char *p = realloc(b->s, nc);
    if (!p) return -1;
    b->s = p;
    b->cap = nc;
  }
  memcpy(b->s + b->n, t, n);
  b->n += n;
  b->s[b->n] = 0;
  return 0;
}

int kt_sb_printf(kt_sbuf *b, const char *fmt, ...) {
  char tmp[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0) return -1;
  if ((size_t)n < sizeof tmp) return kt_sb_add(b, tmp, (size_t)n);
  char *big = malloc((size_t)n + 1);
  if (!big) return -1;
  va_start(ap, fmt);
  vsnprintf(big, (size_t)n + 1, fmt, ap);
  va_end(ap);
  int rc = kt_sb_add(b, big, (size_t)n);
  free(big);
  return rc;
}

int kt_sb_cstr(kt_sbuf *b, const char *s) {
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    char t[8];
    if (c == '"' || c == '\\') snprintf(t, sizeof t, "\\%c", c);
    else if (c < 32 || c == 127) snprintf(t, sizeof t, "\\%03o", c);
    else { t[0] = (char)c; t[1] = 0; }
    if (kt_sb_add(b, t, strlen(t))) return -1;
  }
  return 0;
}

int kt_is_unroll(const char *name) { return strstr(name, "loop_unroll_factor") != NULL; }

int kt_is_identifier(const char *s) {
  if (!s || !(isalpha((unsigned char)*s) || *s == '_')) return 0;
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && *s != '_') return 0;
  return 1;
}

/* ------------------------------------------------------------- tokenizer -- */

enum { T_ID, T_STR, T_NUM, T_PUNCT };

typedef struct tok {
  size_t at, len;
  int kind;
  char c;          /* T_PUNCT: the character */
  int member;      /* T_ID after '.' or '->' */
} tok;

typedef struct toks { tok *v; size_t n, cap; } toks;

static int push_tok(toks *t, tok k) {
  if (t->n == t->cap) {
    size_t nc = t->cap ? 2 * t->cap : 1024;
    tok *p = realloc(t->v, nc * sizeof *p);
    if (!p) return -1;
    t->v = p;
    t->cap = nc;
  }
  t->v[t->n++] = k;
  return 0;
}

typedef struct strs { char **v; size_t n, cap; } strs;

static int has_str(const strs *s, const char *p, size_t n) {
  for (size_t i = 0; i < s->n; i++)
    if (strlen(s->v[i]) == n && !strncmp(s->v[i], p, n)) return 1;
  return 0;
}

static int push_str(strs *s, const char *p, size_t n) {
  if (has_str(s, p, n)) return 0;
  if (s->n == s->cap) {
    size_t nc = s->cap ? 2 * s->cap : 16;
    char **q = realloc(s->v, nc * sizeof *q);
    if (!q) return -1;
    s->v = q;
    s->cap = nc;
  }
  char *c = malloc(n + 1);
  if (!c) return -1;
  memcpy(c, p, n);
  c[n] = 0;
  s->v[s->n++] = c;
  return 0;
}

static void free_strs(strs *s) {
  for (size_t i = 0; i < s->n; i++) free(s->v[i]);
  free(s->v);
}

static int id_start(int c) { return isalpha(c) || c == '_'; }
static int id_char(int c) { return isalnum(c) || c == '_'; }

/* Past a string or character literal opening at t[i] (quote q). */
static size_t skip_quoted(const char *t, size_t len, size_t i, char q) {
  for (i++; i < len && t[i] != q && t[i] != '\n'; i++)
    if (t[i] == '\\' && i + 1 < len) i++;
  return i < len && t[i] == q ? i + 1 : i;
}

/* Past a raw string R"delim( ... )delim" whose quote is at t[i]. */
static size_t skip_raw(const char *t, size_t len, size_t i) {
  size_t d = i + 1;
  while (d < len && t[d] != '(' && d - i <= 17) d++;
  if (d >= len || t[d] != '(') return skip_quoted(t, len, i, '"');
  size_t dl = d - i - 1;
  for (size_t k = d + 1; k + dl + 1 < len; k++)
    if (t[k] == ')' && !strncmp(t + k + 1, t + i + 1, dl) && t[k + 1 + dl] == '"')
      return k + dl + 2;
  return len;
}

/* Past the identifier at t[p] (p itself when there is none). */
static size_t skip_id(const char *t, size_t e, size_t p) {
  if (p < e && id_start((unsigned char)t[p]))
    while (p < e && id_char((unsigned char)t[p])) p++;
  return p;
}
static size_t skip_blanks(const char *t, size_t e, size_t p) {
  while (p < e && (t[p] == ' ' || t[p] == '\t')) p++;
  return p;
}

/* One preprocessor directive starting at t[i] ('#' first on its line,
   which starts at line0): its identifiers (not the directive's name,
   nothing of an #include) go to dir, a #define's name to macros, a
   `#pragma unroll NAME` of a loop_unroll_factor NAME to prag.  Returns the
   offset of its end (the line break that ends it); *oom on ENOMEM. */
static size_t directive(const char *t, size_t len, size_t line0, size_t i, toks *dir,
                        strs *macros, kt_pragma **prag, size_t *nprag, size_t *pcap, int *oom) {
  size_t e = i;
  while (e < len && !(t[e] == '\n' && (e == 0 || t[e - 1] != '\\'))) e++;
  size_t ns = skip_blanks(t, e, i + 1), p = skip_id(t, e, ns), nl = p - ns;
  if (nl == 7 && !strncmp(t + ns, "include", 7)) return e;
  if (nl == 6 && !strncmp(t + ns, "define", 6)) {
    size_t ms = skip_blanks(t, e, p), me = skip_id(t, e, ms);
    if (me > ms && push_str(macros, t + ms, me - ms)) *oom = 1;
    p = me;
  } else if (nl == 6 && !strncmp(t + ns, "pragma", 6)) {
    size_t us = skip_blanks(t, e, p), ue = skip_id(t, e, us);
    if (ue - us == 6 && !strncmp(t + us, "unroll", 6)) {
      size_t as = skip_blanks(t, e, ue), ae = skip_id(t, e, as);
      char nm[256];
      if (ae > as && ae - as < sizeof nm) {
        memcpy(nm, t + as, ae - as);
        nm[ae - as] = 0;
        if (kt_is_unroll(nm)) {
          if (*nprag == *pcap) {
            size_t nc = *pcap ? 2 * *pcap : 8;
            kt_pragma *q = realloc(*prag, nc * sizeof *q);
            if (!q) { *oom = 1; return e; }
            *prag = q;
            *pcap = nc;
          }
          char *c = strdup(nm);
          if (!c) { *oom = 1; return e; }
          (*prag)[(*nprag)++] = (kt_pragma){line0, ae, c};
        }
      }
    }
  }
  while (p < e) {
    unsigned char c = (unsigned char)t[p];
    if (c == '/' && p + 1 < e && t[p + 1] == '/') break;
    if (c == '/' && p + 1 < e && t[p + 1] == '*') {
      size_t q = p + 2;
      while (q + 1 < e && !(t[q] == '*' && t[q + 1] == '/')) q++;
      p = q + 2;
      continue;
    }
    if (c == '"' || c == '\'') { p = skip_quoted(t, e, p, (char)c); continue; }
    if (id_start(c)) {
      size_t st = p;
      p = skip_id(t, e, p);
      int member = (st > 0 && t[st - 1] == '.') || (st > 1 && t[st - 1] == '>' && t[st - 2] == '-');
      if (push_tok(dir, (tok){st, p - st, T_ID, 0, member})) *oom = 1;
      continue;
    }
    if (isdigit(c)) {
      while (p < e && (id_char((unsigned char)t[p]) || t[p] == '.')) p++;
      continue;
    }
    p++;
  }
  return e;
}

/* The code tokens of text (comments, literals' insides and directives
   out; directives' identifiers into dir). */
static int tokenize(const char *t, size_t len, toks *code, toks *dir, strs *macros,
                    kt_pragma **prag, size_t *nprag, size_t *pcap) {
  int oom = 0, bol = 1;
  size_t line0 = 0;
  for (size_t i = 0; i < len && !oom;) {
    unsigned char c = (unsigned char)t[i];
    if (c == '\n') { bol = 1; line0 = ++i; continue; }
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') { i++; continue; }
    if (c == '\\' && i + 1 < len && t[i + 1] == '\n') { i += 2; continue; }
    if (c == '#' && bol) {
      i = directive(t, len, line0, i, dir, macros, prag, nprag, pcap, &oom);
      continue;
    }
    bol = 0;
    if (c == '/' && i + 1 < len && t[i + 1] == '/') {
      while (i < len && t[i] != '\n') i++;
      continue;
    }
    if (c == '/' && i + 1 < len && t[i + 1] == '*') {
      size_t q = i + 2;
      while (q + 1 < len && !(t[q] == '*' && t[q + 1] == '/')) q++;
      i = q + 2 < len ? q + 2 : len;
      continue;
    }
    if (c == '"' || c == '\'') {
      size_t s = i;
      i = skip_quoted(t, len, i, (char)c);
      if (push_tok(code, (tok){s, i - s, T_STR, 0, 0})) oom = 1;
      continue;
    }
    if (id_start(c)) {
      size_t s = i;
      i = skip_id(t, len, i);
      /* string prefixes: R"(...)", u8"...", L"..." */
      if (i < len && t[i] == '"') {
        size_t pl = i - s;
        if (t[i - 1] == 'R' && pl <= 3) { i = skip_raw(t, len, i); continue; }
        if (pl <= 2) { i = skip_quoted(t, len, i, '"'); continue; }
      }
      int member = 0;
      if (code->n) {
        const tok *p = &code->v[code->n - 1];
        member = p->kind == T_PUNCT && (p->c == '.' || (p->c == '>' && p->at > 0 &&
                                                         t[p->at - 1] == '-'));
      }
      if (push_tok(code, (tok){s, i - s, T_ID, 0, member})) oom = 1;
      continue;
    }
    if (isdigit(c) || (c == '.' && i + 1 < len && isdigit((unsigned char)t[i + 1]))) {
      size_t s = i;
      while (i < len) {
        unsigned char d = (unsigned char)t[i];
        if (id_char(d) || d == '.' || (d == '\'' && i + 1 < len && isalnum((unsigned char)t[i + 1])))
          i++;
        else if ((d == '+' || d == '-') && strchr("eEpP", t[i - 1]))
          i++;
        else
          break;
      }
      if (push_tok(code, (tok){s, i - s, T_NUM, 0, 0})) oom = 1;
      continue;
    }
    if (push_tok(code, (tok){i, 1, T_PUNCT, (char)c, 0})) oom = 1;
    i++;
  }
  return oom ? -1 : 0;
}

static int is_punct(const tok *k, char c) { return k->kind == T_PUNCT && k->c == c; }

static int tok_is(const char *t, const tok *k, const char *w) {
  return k->kind == T_ID && strlen(w) == k->len && !strncmp(t + k->at, w, k->len);
}

/* Past the group opened by the token at v[i] ('(', '[', '{' or '<'). */
static size_t skip_group(const char *t, const toks *v, size_t i) {
  char open = v->v[i].c, close = open == '(' ? ')' : open == '[' ? ']' : open == '{' ? '}' : '>';
  int depth = 0;
  for (; i < v->n; i++) {
    const tok *k = &v->v[i];
    if (k->kind != T_PUNCT) continue;
    if (k->c == open) depth++;
    else if (k->c == close && !(close == '>' && k->at > 0 && t[k->at - 1] == '-') &&
             --depth == 0)
      return i + 1;
    /* angle brackets do not span a statement */
    if (open == '<' && (k->c == ';' || k->c == '{')) return i;
  }
  return i;
}

/* Words that are never a declarator's name. */
static int reserved(const char *t, const tok *k) {
  static const char *const words[] = {
      "void", "char", "short", "int", "long", "float", "double", "signed", "unsigned", "bool",
      "const", "volatile", "static", "inline", "extern", "auto", "register", "struct", "class",
      "union", "enum", "typedef", "template", "typename", "operator", "return", "constexpr",
      "namespace", "using", "friend", "virtual", "mutable", "explicit", "decltype", "sizeof",
      "__restrict__", "restrict", "__forceinline__", "__noinline__", "__inline__", "main",
      "size_t", NULL};
  if (k->len >= 2 && t[k->at] == '_' && t[k->at + 1] == '_') return 1;
  for (size_t i = 0; words[i]; i++)
    if (tok_is(t, k, words[i])) return 1;
  return 0;
}

/* Attributes written as NAME(...) before or inside a declaration. */
static int attribute(const char *t, const tok *k) {
  return tok_is(t, k, "__launch_bounds__") || tok_is(t, k, "__align__") ||
         tok_is(t, k, "__attribute__") || tok_is(t, k, "__declspec") ||
         tok_is(t, k, "alignas") || tok_is(t, k, "__grid_constant__") ||
         tok_is(t, k, "__cluster_dims__");
}

/*
 * The names declared at the top of the extern "C" regions of the code
 * tokens v into names.  A region is `extern "C" { ... }` or `extern "C"`
 * before one declaration.
 */
static int extern_c_names(const char *t, const toks *v, strs *names) {
  size_t i = 0;
  while (i < v->n) {
    const tok *k = &v->v[i];
    if (!(tok_is(t, k, "extern") && i + 1 < v->n && v->v[i + 1].kind == T_STR &&
          v->v[i + 1].len == 3 && !strncmp(t + v->v[i + 1].at, "\"C\"", 3))) {
      i++;
      continue;
    }
    i += 2;
    int block = i < v->n && is_punct(&v->v[i], '{');
    if (block) i++;
    /* declarations until the region's closing brace (or one of them) */
    while (i < v->n) {
      if (block && is_punct(&v->v[i], '}')) { i++; break; }
      /* one declaration: each declarator's name (the last identifier
         before '(', '[', '=', ',', ';' or '{' at depth 0) */
      const tok *last = NULL;
      int named = 0, done = 0;
      while (i < v->n && !done) {
        const tok *d = &v->v[i];
        if (d->kind == T_ID) {
          if (attribute(t, d) && i + 1 < v->n && is_punct(&v->v[i + 1], '(')) {
            i = skip_group(t, v, i + 1);
            continue;
          }
          if (tok_is(t, d, "template") && i + 1 < v->n && is_punct(&v->v[i + 1], '<')) {
            i = skip_group(t, v, i + 1);
            continue;
          }
          last = reserved(t, d) ? NULL : d;
          i++;
          continue;
        }
        if (d->kind != T_PUNCT) { i++; continue; }
        char c = d->c;
        if (c == '<' && last) { i = skip_group(t, v, i); continue; }
        if (c == '(' || c == '[' || c == '=' || c == ',' || c == ';' || c == '{') {
          if (last && !named && push_str(names, t + last->at, last->len)) return -1;
          named = 1;
          last = NULL;
        }
        if (c == '(' || c == '[') {
          i = skip_group(t, v, i);
          continue;
        }
        if (c == '=') {
          /* the initializer, to the next ',' or ';' at depth 0 */
          for (i++; i < v->n; i++) {
            const tok *x = &v->v[i];
            if (is_punct(x, '(') || is_punct(x, '[') || is_punct(x, '{')) {
              i = skip_group(t, v, i) - 1;
              continue;
            }
            if (is_punct(x, ',') || is_punct(x, ';') || (block && is_punct(x, '}'))) break;
          }
          continue;
        }
        if (c == ',') { named = 0; i++; continue; }
        if (c == ';') { i++; done = 1; continue; }
        if (c == '{') {
          /* a function's body or a type's: the declaration ends with it
             unless a declarator follows (struct S {...} s;) */
          i = skip_group(t, v, i);
          if (i < v->n && (v->v[i].kind == T_ID || is_punct(&v->v[i], ';'))) {
            named = 0;
            continue;
          }
          done = 1;
          continue;
        }
        if (c == '}') { done = 1; continue; } /* the region's end: the outer loop sees it */
        i++;
      }
      if (!block) break;
    }
  }
  return 0;
}

static int cmp_off(const void *a, const void *b) {
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  return x < y ? -1 : x > y;
}

void kt_scan_free(kt_scan *s) {
  if (!s) return;
  free(s->ren);
  for (size_t i = 0; i < s->nrenamed; i++) free(s->renamed[i]);
  free(s->renamed);
  for (size_t i = 0; i < s->nprag; i++) free(s->prag[i].param);
  free(s->prag);
  for (size_t i = 0; i < s->nmacros; i++) free(s->macros[i]);
  free(s->macros);
  memset(s, 0, sizeof *s);
}

int kt_scan_source(const char *text, size_t len, const char *kernel, const char *const *params,
                   size_t nparams, kt_scan *out) {
  memset(out, 0, sizeof *out);
  toks code = {0}, dir = {0};
  strs macros = {0}, names = {0}, keep = {0};
  size_t pcap = 0;
  int rc = -1;
  if (tokenize(text, len, &code, &dir, &macros, &out->prag, &out->nprag, &pcap)) goto out;
  if (push_str(&names, kernel, strlen(kernel))) goto out;
  if (extern_c_names(text, &code, &names)) goto out;
  /* what is renamed: not a macro, not a parameter, not Kernel Tuner's own */
  for (size_t i = 0; i < names.n; i++) {
    const char *n = names.v[i];
    int skip = has_str(&macros, n, strlen(n)) || !strcmp(n, "kernel_tuner") ||
               !strncmp(n, "grid_size_", 10) || !strncmp(n, "block_size_", 11);
    for (size_t j = 0; j < nparams && !skip; j++) skip = !strcmp(params[j], n);
    if (!skip && push_str(&keep, n, strlen(n))) goto out;
  }
  size_t cap = 64;
  out->ren = malloc(cap * sizeof *out->ren);
  if (!out->ren) goto out;
  const toks *lists[2] = {&code, &dir};
  for (int l = 0; l < 2; l++)
    for (size_t i = 0; i < lists[l]->n; i++) {
      const tok *k = &lists[l]->v[i];
      if (k->kind != T_ID || k->member || !has_str(&keep, text + k->at, k->len)) continue;
      if (out->nren == cap) {
        size_t *p = realloc(out->ren, 2 * cap * sizeof *p);
        if (!p) goto out;
        out->ren = p;
        cap *= 2;
      }
      out->ren[out->nren++] = k->at + k->len;
    }
  qsort(out->ren, out->nren, sizeof *out->ren, cmp_off);
  out->renamed = keep.v;
  out->nrenamed = keep.n;
  keep.v = NULL;
  keep.n = 0;
  out->macros = macros.v;
  out->nmacros = macros.n;
  macros.v = NULL;
  macros.n = 0;
  rc = 0;
out:
  free(code.v);
  free(dir.v);
  free_strs(&macros);
  free_strs(&names);
  free_strs(&keep);
  if (rc) kt_scan_free(out);
  return rc;
}

/* Is pragma p's parameter 0 in this configuration? */
static int pragma_off(const kt_pragma *p, const char *const *names, const char *const *values,
                      size_t n) {
  for (size_t j = 0; j < n; j++)
    if (!strcmp(names[j], p->param)) return !strcmp(values[j], "0");
  return 0;
}

int kt_copy_text(kt_sbuf *b, const char *text, size_t len, const kt_scan *s, const char *ns,
                 const char *const *names, const char *const *values, size_t n) {
  size_t at = 0, r = 0, p = 0;
  char suffix[64];
  size_t sl = ns ? (size_t)snprintf(suffix, sizeof suffix, "__%s", ns) : 0;
  for (;;) {
    size_t next_r = ns && r < s->nren ? s->ren[r] : (size_t)-1;
    size_t next_p = p < s->nprag ? s->prag[p].start : (size_t)-1;
    size_t next = next_r < next_p ? next_r : next_p;
    if (next == (size_t)-1 || next > len) break;
    if (kt_sb_add(b, text + at, next - at)) return -1;
    at = next;
    if (next_r <= next_p) {
      if (kt_sb_add(b, suffix, sl)) return -1;
      r++;
    } else {
      if (pragma_off(&s->prag[p], names, values, n)) {
        /* the renames inside the removed text go with it */
        at = s->prag[p].end;
        while (r < s->nren && s->ren[r] <= at) r++;
      }
      p++;
    }
  }
  return kt_sb_add(b, text + at, len - at);
}
