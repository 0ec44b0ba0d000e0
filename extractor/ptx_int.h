/*
 * ptx_int.h -- internals shared by the PTX lexer, parser and printer.
 *
 * Not part of the extractor's interface: only ptx_lex.c, ptx_parse.c,
 * ptx_print.c and ptx_ops.c include it.  It holds the arena that owns a
 * module's memory, the token the lexer hands to the parser, and the lookups
 * of special-register names.
 *
 * The lexer works on the raw text (pointer + length, no NUL needed) and never
 * allocates: a token is a (pointer, length) view into the text plus its line
 * and column.  Words are scanned together with their FNV-1a hash so that the
 * parser's symbol tables never hash a name twice.
 */
#ifndef KCAST_PTX_INT_H
#define KCAST_PTX_INT_H

#include <stddef.h>
#include <stdint.h>

#include "ptx.h"

/* ---------------------------------------------------------------- arena -- */

/* Bump allocator: chunks of memory released all at once by arena_free.
   Every string and array of a module lives in its arena. */
typedef struct ptx_arena_chunk {
  struct ptx_arena_chunk *next;
  size_t cap, used;
  /* payload follows, 16-byte aligned */
} ptx_arena_chunk;

struct ptx_arena {
  ptx_arena_chunk *head;  /* chunk being filled */
  ptx_arena_chunk *big;   /* dedicated chunks of large allocations */
  size_t total;           /* bytes obtained from malloc */
};

struct ptx_arena *ptx_arena_new(void);
void ptx_arena_free(struct ptx_arena *a);
/* n bytes, 16-byte aligned, uninitialised; NULL when out of memory. */
void *ptx_arena_alloc(struct ptx_arena *a, size_t n);
/* Copy of s[0..len) plus a NUL; NULL when out of memory. */
char *ptx_arena_strndup(struct ptx_arena *a, const char *s, size_t len);

/* ---------------------------------------------------------------- lexer -- */

typedef enum ptx_tok_kind {
  PTX_TK_EOF = 0,
  PTX_TK_WORD,    /* identifier, directive (.reg), register (%r1), mnemonic
                     with its dot-modifiers (ld.global.f32), label ($L__BB0_1) */
  PTX_TK_NUM,     /* number as written: 12, 0x1F, 0f3F800000, 1.5e-3, 7U */
  PTX_TK_STR,     /* "..." including the quotes */
  PTX_TK_PUNCT    /* one character: ; , { } ( ) [ ] < > + - ! @ | = : */
} ptx_tok_kind;

typedef struct ptx_tok {
  const char *p;     /* first byte in the text */
  uint32_t len;      /* bytes */
  uint32_t hash;     /* FNV-1a of the bytes (words only) */
  uint8_t kind;      /* ptx_tok_kind */
  char c;            /* PUNCT: the character; WORD: first byte */
  uint32_t line, col;
} ptx_tok;

typedef struct ptx_lexer {
  const char *text, *end;  /* the whole input */
  const char *pos;         /* next unread byte */
  const char *linestart;   /* first byte of the current line */
  uint32_t line;           /* 1-based line of pos */
  /* set when the lexer meets a byte it cannot tokenise or an unterminated
     comment/string; the token returned is then EOF */
  const char *bad;         /* where; NULL when no error */
  const char *badmsg;      /* what */
  uint32_t badline, badcol;
} ptx_lexer;

void ptx_lex_init(ptx_lexer *L, const char *text, size_t len);
/* Scan the next token into *t.  On a lexical error returns PTX_TK_EOF with
   L->bad set. */
int ptx_lex_next(ptx_lexer *L, ptx_tok *t);
/* Skip the rest of the current line (for .loc, .file, @@DWARF). */
void ptx_lex_skip_line(ptx_lexer *L);
/* Next non-blank byte on the current line without consuming it; 0 if none. */
int ptx_lex_peek_char(const ptx_lexer *L);

static inline uint32_t ptx_hash_bytes(const char *s, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)s[i]) * 16777619u;
  return h;
}

/* ------------------------------------------------------ name lookups -- */

/* Special register for a name such as "%tid.x"; -1 when not special. */
int ptx_sreg_lookup(const char *s, unsigned len);

#endif
