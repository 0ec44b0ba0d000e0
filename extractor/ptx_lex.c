/*
 * ptx_lex.c -- the PTX tokeniser.
 *
 * Turns the text into words, numbers, strings and one-character punctuation,
 * skipping blanks, `//` and block comments and `@@DWARF` lines.  It works in
 * place on the caller's bytes: no allocation and no copy, a token is a view
 * (pointer, length, line, column), so a line of many megabytes costs nothing
 * but the scan.  Words keep their dots together ("ld.global.nc.f32",
 * "%tid.x", ".ptr.global.align") and their `::` sub-qualifiers
 * ("ld.shared::cluster.u32"): the parser splits them where it needs parts.
 * The FNV-1a hash of a word is computed during the same scan.
 *
 * Errors (a byte that is no PTX, an unterminated comment or string) stop the
 * lexer: it returns EOF and records where and why, and the parser reports it.
 * Reading never goes past `end`.
 */
#include "ptx_int.h"

#include <pthread.h>
#include <string.h>

/* Character classes. */
enum { C_SPACE = 1, C_WSTART = 2, C_WORD = 4, C_DIGIT = 8, C_PUNCT = 16 };

static uint8_t cclass[256];
static pthread_once_t cclass_once = PTHREAD_ONCE_INIT;

static void cclass_init(void) {
  for (int c = 0; c < 256; c++) {
    uint8_t k = 0;
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v')
      k |= C_SPACE;
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$')
      k |= C_WSTART | C_WORD;
    if (c == '%' || c == '.') k |= C_WSTART;
    if (c >= '0' && c <= '9') k |= C_DIGIT | C_WORD;
    if (c == '.') k |= C_WORD;
    if (strchr(";,{}()[]<>+-!@|=:*/", c) && c) k |= C_PUNCT;
    cclass[c] = k;
  }
}

void ptx_lex_init(ptx_lexer *L, const char *text, size_t len) {
  pthread_once(&cclass_once, cclass_init);
  L->text = text;
  L->end = text + len;
  L->pos = text;
  L->linestart = text;
  L->line = 1;
  L->bad = NULL;
  L->badmsg = NULL;
  L->badline = L->badcol = 0;
}

static int lex_fail(ptx_lexer *L, const char *at, const char *msg, ptx_tok *t) {
  /* Recompute the line of `at` when it is not on the current line. */
  uint32_t line = L->line;
  const char *ls = L->linestart;
  if (at < ls) {
    line = 1;
    ls = L->text;
    for (const char *q = L->text; q < at; q++)
      if (*q == '\n') { line++; ls = q + 1; }
  }
  L->bad = at;
  L->badmsg = msg;
  L->badline = line;
  L->badcol = (uint32_t)(at - ls) + 1;
  L->pos = L->end;
  t->kind = PTX_TK_EOF;
  t->p = L->end;
  t->len = 0;
  t->c = 0;
  t->line = line;
  t->col = L->badcol;
  return PTX_TK_EOF;
}

void ptx_lex_skip_line(ptx_lexer *L) {
  const char *nl = memchr(L->pos, '\n', (size_t)(L->end - L->pos));
  L->pos = nl ? nl : L->end;
}

int ptx_lex_peek_char(const ptx_lexer *L) {
  const char *p = L->pos;
  while (p < L->end && (*p == ' ' || *p == '\t' || *p == '\r')) p++;
  return p < L->end ? (unsigned char)*p : 0;
}

int ptx_lex_next(ptx_lexer *L, ptx_tok *t) {
  const char *p = L->pos, *end = L->end;
  for (;;) {
    /* blanks */
    while (p < end && (cclass[(uint8_t)*p] & C_SPACE)) {
      if (*p == '\n') { L->line++; L->linestart = p + 1; }
      p++;
    }
    if (p >= end) break;
    if (*p == '/' && p + 1 < end && p[1] == '/') {
      const char *nl = memchr(p, '\n', (size_t)(end - p));
      p = nl ? nl : end;
      continue;
    }
    if (*p == '/' && p + 1 < end && p[1] == '*') {
      const char *q = p + 2;
      for (;;) {
        if (q + 1 >= end) {
          L->pos = p;
          return lex_fail(L, p, "unterminated comment", t);
        }
        if (*q == '*' && q[1] == '/') break;
        if (*q == '\n') { L->line++; L->linestart = q + 1; }
        q++;
      }
      p = q + 2;
      continue;
    }
    if (*p == '@' && p + 1 < end && p[1] == '@') {
      /* @@DWARF debug lines: skipped like comments */
      const char *nl = memchr(p, '\n', (size_t)(end - p));
      p = nl ? nl : end;
      continue;
    }
    break;
  }
  t->p = p;
  t->line = L->line;
  t->col = (uint32_t)(p - L->linestart) + 1;
  t->hash = 0;
  if (p >= end) {
    L->pos = p;
    t->kind = PTX_TK_EOF;
    t->len = 0;
    t->c = 0;
    return PTX_TK_EOF;
  }
  unsigned char c = (unsigned char)*p;
  uint8_t k = cclass[c];
  const char *q = p;
  if (k & C_WSTART) {
    uint32_t h = 2166136261u;
    h = (h ^ c) * 16777619u;
    q++;
    for (;;) {
      while (q < end && (cclass[(uint8_t)*q] & C_WORD)) {
        h = (h ^ (uint8_t)*q) * 16777619u;
        q++;
      }
      /* "::" inside a dotted word: shared::cluster, mbarrier::complete_tx */
      if (q + 2 < end && q[0] == ':' && q[1] == ':' && (cclass[(uint8_t)q[2]] & C_WORD)) {
        h = (h ^ ':') * 16777619u;
        h = (h ^ ':') * 16777619u;
        q += 2;
        continue;
      }
      break;
    }
    t->kind = PTX_TK_WORD;
    t->hash = h;
  } else if (k & C_DIGIT) {
    int decimal = !(c == '0' && q + 1 < end && strchr("xXfFdDbB", q[1]) && q[1]);
    q++;
    for (;;) {
      while (q < end && (cclass[(uint8_t)*q] & C_WORD)) q++;
      if (decimal && q + 1 < end && (*q == '+' || *q == '-') &&
          (q[-1] == 'e' || q[-1] == 'E') && (cclass[(uint8_t)q[1]] & C_DIGIT)) {
        q++;
        continue;
      }
      break;
    }
    t->kind = PTX_TK_NUM;
  } else if (c == '"') {
    q++;
    while (q < end && *q != '"') {
      if (*q == '\\' && q + 1 < end) q++;
      else if (*q == '\n') break;
      q++;
    }
    if (q >= end || *q != '"') {
      L->pos = p;
      return lex_fail(L, p, "unterminated string", t);
    }
    q++;
    t->kind = PTX_TK_STR;
  } else if (k & C_PUNCT) {
    q++;
    t->kind = PTX_TK_PUNCT;
  } else {
    L->pos = p;
    return lex_fail(L, p, "invalid character", t);
  }
  t->c = (char)c;
  t->len = (uint32_t)(q - p);
  L->pos = q;
  return t->kind;
}
