/*
 * test_ptx.c -- the PTX lexer, parser and printer (extractor/ptx_*.c).
 *
 * What is checked, and against what:
 *  - every committed sample (tests/ptx/ *.ptx), the compiled kernel corpus
 *    ($KCAST_BUILD/corpus/ *.ptx) and tests/ptx/src/ *.cu compiled now with
 *    nvcc and clang-22 (skipped with a note when a compiler is missing) parse;
 *  - round trip: every instruction printed by ptx_insn_print equals its
 *    source statement with whitespace normalised.  The statements come from
 *    an independent scanner in this file (comments stripped, split at ';',
 *    '{' and '}', labels and directives dropped), not from the lexer;
 *  - static opcode counts by key equal a count made by that scanner;
 *  - malformed inputs fail with the expected message at the expected
 *    line:column, in the form FILE:LINE:COL: error: ...;
 *  - a line of many megabytes (comment, initialiser) parses;
 *  - special forms decode to the right fields and bits.
 */
#include "tests.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "extractor/ptx.h"

/* ------------------------------------------------------------ helpers -- */

static ptx_module *parse_text(const char *text, ptx_error *err) {
  return ptx_parse(text, strlen(text), "t.ptx", err);
}

/* A minimal module around a kernel body. */
static char *wrap_kernel(const char *decls, const char *body) {
  const char *fmt =
      ".version 9.0\n.target sm_90\n.address_size 64\n%s\n"
      ".visible .entry k(\n\t.param .u64 k_param_0\n)\n{\n%s\n}\n";
  size_t n = strlen(fmt) + strlen(decls) + strlen(body) + 1;
  char *s = malloc(n);
  snprintf(s, n, fmt, decls, body);
  return s;
}

/* Normalise: whitespace runs become one space, none next to , ( ) { } [ ] |. */
static void normalise(const char *in, char *out, size_t cap) {
  size_t o = 0;
  int pend = 0;
  const char *glue = ",(){}[]|";
  for (const char *p = in; *p && o + 2 < cap; p++) {
    if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') { pend = 1; continue; }
    if (pend && o > 0 && !strchr(glue, out[o - 1]) && !strchr(glue, *p)) out[o++] = ' ';
    pend = 0;
    out[o++] = *p;
  }
  out[o] = 0;
}

/* Independent statement scanner: instruction statements in source order. */
typedef struct stmts { char **s; size_t n, cap; } stmts;

static void stmts_add(stmts *st, const char *b, size_t n) {
  while (n && (*b == ' ' || *b == '\t' || *b == '\n' || *b == '\r')) { b++; n--; }
  /* drop leading labels "name:" */
  for (;;) {
    size_t i = 0;
    while (i < n && (b[i] == '_' || b[i] == '$' || b[i] == '%' || (b[i] >= 'a' && b[i] <= 'z') ||
                     (b[i] >= 'A' && b[i] <= 'Z') || (i && b[i] >= '0' && b[i] <= '9')))
      i++;
    size_t j = i;
    while (j < n && (b[j] == ' ' || b[j] == '\t')) j++;
    if (i && j < n && b[j] == ':' && (j + 1 >= n || b[j + 1] != ':')) {
      b += j + 1;
      n -= j + 1;
      while (n && (*b == ' ' || *b == '\t' || *b == '\n' || *b == '\r')) { b++; n--; }
      continue;
    }
    break;
  }
  if (!n || *b == '.') return;
  if (st->n == st->cap) {
    st->cap = st->cap ? st->cap * 2 : 256;
    st->s = realloc(st->s, st->cap * sizeof *st->s);
  }
  char *raw = malloc(n + 1);
  memcpy(raw, b, n);
  raw[n] = 0;
  char *norm = malloc(n + 2);
  normalise(raw, norm, n + 2);
  free(raw);
  st->s[st->n++] = norm;
}

static void stmts_free(stmts *st) {
  for (size_t i = 0; i < st->n; i++) free(st->s[i]);
  free(st->s);
}

static stmts scan_statements(const char *text) {
  stmts st = {0};
  size_t len = strlen(text);
  char *t = malloc(len + 1);
  size_t o = 0;
  /* pass 1: comments and line directives without ';' become blanks */
  for (size_t i = 0; i < len;) {
    if (text[i] == '"') {
      t[o++] = text[i++];
      while (i < len && text[i] != '"') t[o++] = text[i++];
      if (i < len) t[o++] = text[i++];
    } else if (text[i] == '/' && i + 1 < len && text[i + 1] == '/') {
      while (i < len && text[i] != '\n') i++;
    } else if (text[i] == '/' && i + 1 < len && text[i + 1] == '*') {
      i += 2;
      while (i + 1 < len && !(text[i] == '*' && text[i + 1] == '/')) i++;
      i += 2;
    } else {
      size_t ls = i;
      while (ls > 0 && text[ls - 1] != '\n' && (text[ls - 1] == ' ' || text[ls - 1] == '\t')) ls--;
      int at_line_start = ls == 0 || text[ls - 1] == '\n';
      const char *line_dirs[] = {".loc", ".file", ".version", ".target", ".address_size", "@@"};
      int skip = 0;
      for (size_t d = 0; at_line_start && d < sizeof line_dirs / sizeof *line_dirs; d++)
        if (strncmp(text + i, line_dirs[d], strlen(line_dirs[d])) == 0) skip = 1;
      if (skip) {
        while (i < len && text[i] != '\n') i++;
      } else {
        t[o++] = text[i++];
      }
    }
  }
  t[o] = 0;
  /* pass 2: split into statements */
  size_t start = 0;
  int init_depth = 0;
  for (size_t i = 0; i < o; i++) {
    char c = t[i];
    size_t b = start;
    while (b < i && (t[b] == ' ' || t[b] == '\t' || t[b] == '\n' || t[b] == '\r')) b++;
    int in_insn = b < i && t[b] != '.';
    int in_decl = b < i && t[b] == '.';
    if (c == '"') {
      for (i++; i < o && t[i] != '"'; i++) {}
      continue;
    }
    if (init_depth) {
      if (c == '{') init_depth++;
      else if (c == '}') init_depth--;
      continue;
    }
    if (c == ';') {
      stmts_add(&st, t + start, i - start);
      start = i + 1;
    } else if (c == '{' || c == '}') {
      if (in_insn) {
        /* vector operand braces; but a label line followed by '{' is a scope */
        size_t k = i;
        while (k > b && (t[k - 1] == ' ' || t[k - 1] == '\t' || t[k - 1] == '\n')) k--;
        if (k > b && t[k - 1] == ':') { start = i + 1; continue; }
        continue;
      }
      if (in_decl && c == '{' && memchr(t + b, '=', i - b)) { init_depth = 1; continue; }
      start = i + 1; /* scope brace: ends a function header */
    }
  }
  free(t);
  return st;
}

typedef struct insn_ref { const ptx_func *f; const ptx_insn *i; } insn_ref;

static int insn_ref_cmp(const void *a, const void *b) {
  const ptx_insn *x = ((const insn_ref *)a)->i, *y = ((const insn_ref *)b)->i;
  if (x->line != y->line) return x->line < y->line ? -1 : 1;
  return x->col < y->col ? -1 : x->col > y->col;
}

/* All instructions of a module in source order. */
static insn_ref *module_insns(const ptx_module *m, size_t *n) {
  size_t tot = 0;
  for (uint32_t i = 0; i < m->nfuncs; i++) tot += m->funcs[i].ninsns;
  insn_ref *r = malloc((tot ? tot : 1) * sizeof *r);
  size_t k = 0;
  for (uint32_t i = 0; i < m->nfuncs; i++)
    for (uint32_t j = 0; j < m->funcs[i].ninsns; j++) {
      r[k].f = &m->funcs[i];
      r[k++].i = &m->funcs[i].insns[j];
    }
  qsort(r, k, sizeof *r, insn_ref_cmp);
  *n = k;
  return r;
}

static int strcmp_p(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Round trip and key counts of one file; returns the number of mismatches. */
static int check_file(const char *path) {
  char *text = tests_read_file(path, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(text);
  ptx_error err;
  ptx_module *m = ptx_parse(text, strlen(text), path, &err);
  if (!m) fprintf(stderr, "\n  %s\n", err.msg);
  CU_ASSERT_PTR_NOT_NULL(m); /* the file parses */
  if (!m) { free(text); return 1; }
  stmts st = scan_statements(text);
  size_t n;
  insn_ref *r = module_insns(m, &n);
  int bad = 0;
  /* the scanner and the parser see the same number of instructions */
  CU_ASSERT_EQUAL(n, st.n);
  if (n != st.n) {
    fprintf(stderr, "\n  %s: parser %zu instructions, scanner %zu\n", path, n, st.n);
    bad++;
  }
  char buf[4096], norm[4096];
  for (size_t k = 0; k < n && k < st.n; k++) {
    ptx_insn_print(m, r[k].f, r[k].i, buf, sizeof buf);
    normalise(buf, norm, sizeof norm);
    if (strcmp(norm, st.s[k]) != 0) {
      if (bad < 5)
        fprintf(stderr, "\n  %s:%u: printed '%s', source '%s'\n", path, r[k].i->line, norm,
                st.s[k]);
      bad++;
    }
  }
  /* every printed instruction equals its source text */
  CU_ASSERT_EQUAL(bad, 0);
  /* opcode counts by key: parser vs. first word of each scanned statement */
  char **a = malloc((n + 1) * sizeof *a), **b = malloc((st.n + 1) * sizeof *b);
  for (size_t k = 0; k < n; k++) a[k] = (char *)ptx_insn_key(m, r[k].i);
  for (size_t k = 0; k < st.n; k++) {
    const char *s = st.s[k];
    if (*s == '@') { s = strchr(s, ' '); s = s ? s + 1 : st.s[k]; }
    size_t w = strcspn(s, " ;({[");
    b[k] = malloc(w + 1);
    memcpy(b[k], s, w);
    b[k][w] = 0;
  }
  qsort(a, n, sizeof *a, strcmp_p);
  qsort(b, st.n, sizeof *b, strcmp_p);
  int keys_equal = n == st.n;
  for (size_t k = 0; keys_equal && k < n; k++) keys_equal = strcmp(a[k], b[k]) == 0;
  /* the multiset of opcode keys equals the independent count */
  CU_ASSERT_TRUE(keys_equal);
  if (!keys_equal) bad++;
  for (size_t k = 0; k < st.n; k++) free(b[k]);
  free(a);
  free(b);
  free(r);
  stmts_free(&st);
  ptx_module_free(m);
  free(text);
  return bad;
}

/* Check every *.ptx in dir; returns how many files were checked. */
static int check_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  int n = 0;
  struct dirent *e;
  char path[4096];
  while ((e = readdir(d))) {
    size_t l = strlen(e->d_name);
    if (l < 5 || strcmp(e->d_name + l - 4, ".ptx") != 0) continue;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    check_file(path);
    n++;
  }
  closedir(d);
  return n;
}

/* ---------------------------------------------------------------- tests -- */

static void test_committed_samples(void) {
  int n = check_dir("tests/ptx");
  /* the committed samples are there (saxpy, reduce, trig64, clang) */
  CU_ASSERT_TRUE(n >= 4);
  ptx_error err;
  ptx_module *m = ptx_parse_file("tests/ptx/saxpy_nvcc.ptx", &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  /* module directives are read */
  CU_ASSERT_EQUAL(m->version_major, 9);
  CU_ASSERT_EQUAL(m->version_minor, 0);
  CU_ASSERT_STRING_EQUAL(m->target, "sm_90");
  CU_ASSERT_EQUAL(m->address_size, 64);
  ptx_func *f = ptx_find_func(m, "_Z5saxpyifPKfPf");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  /* the kernel has four params, params alias the start of vars */
  CU_ASSERT_TRUE(f->is_entry && f->has_body);
  CU_ASSERT_EQUAL(f->nparams, 4);
  CU_ASSERT_PTR_EQUAL(f->params, f->vars);
  CU_ASSERT_EQUAL(f->params[1].type, PTX_T_F32);
  CU_ASSERT_EQUAL(f->params[1].space, PTX_SP_PARAM);
  CU_ASSERT_PTR_NULL(ptx_find_func(m, "nope"));
  ptx_module_free(m);

  m = ptx_parse_file("tests/ptx/reduce_nvcc.ptx", &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  /* the extern vprintf prototype is a function without body */
  f = ptx_find_func(m, "vprintf");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  CU_ASSERT_TRUE(f->is_extern && !f->has_body);
  CU_ASSERT_EQUAL(f->nparams, 2);
  CU_ASSERT_EQUAL(f->nrets, 1);
  CU_ASSERT_PTR_EQUAL(f->rets, f->vars + 2);
  /* the byte-list initialiser {0, 0, 128, 63, ...} is the float table */
  const ptx_var *tab = NULL;
  for (uint32_t i = 0; i < m->nvars; i++)
    if (!strcmp(m->vars[i].name, "table")) tab = &m->vars[i];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tab);
  CU_ASSERT_EQUAL(tab->size, 16);
  CU_ASSERT_PTR_NOT_NULL_FATAL(tab->init);
  float t1;
  memcpy(&t1, tab->init + 4, 4);
  CU_ASSERT_EQUAL(t1, 2.0f);
  ptx_module_free(m);
}

static int have(const char *tool) {
  char cmd[256];
  snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", tool);
  return tests_run(cmd, NULL, NULL) == 0;
}

static void test_compiled_corpus(void) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/corpus", tests_build());
  int n = check_dir(dir);
  if (n == 0) fprintf(stderr, "\n  note: no compiled corpus in %s\n", dir);
  char tmp[4096];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(tmp, sizeof tmp, "ptxsrc"));
  const char *srcs[] = {"saxpy", "reduce", "trig64"};
  int compiled = 0;
  for (size_t i = 0; i < sizeof srcs / sizeof *srcs; i++) {
    char cmd[8192];
    if (have("nvcc")) {
      snprintf(cmd, sizeof cmd, "nvcc -ptx -arch=sm_90 -o '%s/%s_nvcc.ptx' tests/ptx/src/%s.cu",
               tmp, srcs[i], srcs[i]);
      int rc = tests_run(cmd, NULL, NULL);
      /* nvcc compiles the sample source */
      CU_ASSERT_EQUAL(rc, 0);
      compiled += rc == 0;
    }
    if (have("clang-22")) {
      snprintf(cmd, sizeof cmd,
               "clang-22 --cuda-device-only -S --cuda-gpu-arch=sm_90 -O2 "
               "-Wno-unknown-cuda-version -o '%s/%s_clang.ptx' tests/ptx/src/%s.cu",
               tmp, srcs[i], srcs[i]);
      int rc = tests_run(cmd, NULL, NULL);
      if (rc != 0) fprintf(stderr, "\n  note: clang-22 could not compile %s.cu\n", srcs[i]);
      compiled += rc == 0;
    }
  }
  if (!compiled) fprintf(stderr, "\n  note: neither nvcc nor clang-22 available, skipped\n");
  int m = check_dir(tmp);
  /* every file the compilers produced was checked */
  CU_ASSERT_EQUAL(m, compiled);
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
  tests_run(cmd, NULL, NULL);
}

typedef struct bad_case {
  const char *what;
  const char *text;
  size_t len;          /* 0: strlen(text) */
  const char *expect;  /* substring of the message */
  uint32_t line, col;
} bad_case;

#define HDR ".version 9.0\n.target sm_90\n.address_size 64\n"
#define K(body) HDR ".visible .entry k()\n{\n\t.reg .b32 %r<5>;\n" body "\n}\n"

static const bad_case bad_cases[] = {
  {"empty file", "", 0, "empty input", 1, 1},
  {"comments only", "// nothing\n/* here */\n", 0, "no PTX in input", 1, 1},
  {"unknown instruction", K("\tfoo.bar %r1;"), 0, "unknown instruction 'foo.bar'", 7, 2},
  {"unknown directive", HDR ".bogus 1\n", 0, "unknown directive '.bogus'", 4, 1},
  {"unknown body directive", K("\t.frob 3;"), 0, "unknown directive '.frob'", 7, 2},
  {"truncated body", HDR ".visible .entry k()\n{\n\tret;\n", 0, "unexpected end of file", 7, 1},
  {"truncated instruction", K("\tadd.s32 %r1, %r2,"), 0, "expected an operand", 8, 1},
  {"unbalanced braces", K("\tret;") "}\n", 0, "unbalanced '}'", 9, 1},
  {"NUL bytes", HDR "\0\0\0binary", sizeof(HDR) + 8, "NUL byte", 4, 1},
  {"non-text byte", HDR "\x01\x02", 0, "invalid character '\\x01'", 4, 1},
  {"missing semicolon", K("\tadd.s32 %r1, %r2, %r3\n\tret;"), 0,
   "expected ',' or ';' after operand, found 'ret'", 8, 2},
  {"missing semicolon after ret", K("\tret\n\tret;"), 0, "expected ';' after 'ret'", 8, 2},
  {"bad register", K("\tmov.u32 %r9, %r1;"), 0, "undeclared register '%r9'", 7, 10},
  {"bad guard register", K("\t@%p1 ret;"), 0, "undeclared register '%p1'", 7, 3},
  {"bad hex immediate", K("\tmov.u32 %r1, 0x1G;"), 0, "bad immediate '0x1G'", 7, 15},
  {"bad float immediate", K("\tmov.b32 %r1, 0f3F80;"), 0, "bad immediate '0f3F80'", 7, 15},
  {"immediate overflow", K("\tmov.u64 %r1, 99999999999999999999;"), 0, "bad immediate", 7, 15},
  {"unknown label", K("\tbra.uni $L_nowhere;"), 0, "unknown label '$L_nowhere'", 7, 10},
  {"duplicate label", K("$L1:\n$L1:\n\tret;"), 0, "duplicate label '$L1'", 8, 1},
  {"too few operands", K("\tadd.s32 %r1, %r2;"), 0, "'add.s32' takes 3 operands, found 2", 7, 2},
  {"too many operands", K("\tmov.u32 %r1, %r2, %r3;"), 0, "'mov.u32' takes 2 operands, found 3",
   7, 2},
  {"unknown symbol", K("\tmov.u32 %r1, nosuch;"), 0, "unknown symbol 'nosuch'", 7, 15},
  {"redeclared register", K("\t.reg .b32 %r3;"), 0, "'%r3' is already declared", 7, 12},
  {"unterminated comment", K("\t/* open"), 0, "unterminated comment", 7, 2},
  {"unterminated string", K("\t.pragma \"nounroll;"), 0, "unterminated string", 7, 10},
  {"too many initialisers", HDR ".global .b8 x[2] = {1, 2, 3};\n", 0,
   "too many initialisers for 'x'", 4, 27},
  {"unknown symbol in initialiser", HDR ".global .u64 p = generic(q);\n", 0,
   "unknown symbol 'q'", 4, 26},
  {"register without type", K("\t.reg %q;"), 0, "register declaration without a type", 7, 7},
  {"instruction at module level", HDR "ret;\n", 0, "expected a directive, found 'ret'", 4, 1},
  {"function redefinition", HDR ".func f()\n{\n\tret;\n}\n.func f()\n{\n\tret;\n}\n", 0,
   "redefinition of function 'f'", 8, 7},
  {"bad address", K("\tld.global.u32 %r1, [;"), 0, "expected an address, found ';'", 7, 22},
  {"unknown mnemonic with guard", K("\t.reg .pred %p;\n\t@%p frob;"), 0,
   "unknown instruction 'frob'", 8, 6},
  {"bad version", ".version 9.x\n", 0, "bad version '9.x'", 1, 10},
  {"undefined jump-table target", K("\t$T: .branchtargets $L_a, $L_nowhere;\n"
                                    "\tbrx.idx %r1, $T;\n$L_a:\n\tret;"), 0,
   "unknown label '$L_nowhere'", 7, 27},
  {"empty jump table", K("\t$T: .branchtargets ;"), 0,
   "expected a label in .branchtargets, found ';'", 7, 21},
  {"jump table without ';'", K("\t$T: .branchtargets $L_a\n$L_a:\n\tret;"), 0,
   "expected ',' or ';' in .branchtargets, found '$L_a'", 8, 1},
  {"brx naming a code label", K("\tbrx.idx %r1, $L_a;\n$L_a:\n\tret;"), 0,
   "brx.idx names '$L_a', which is not a .branchtargets table", 7, 2},
  {"brx naming a register", K("\tbrx.idx %r1, %r2;"), 0,
   "brx.idx needs a .branchtargets label as its last operand", 7, 2},
  {"bra naming a jump table", K("\t$T: .branchtargets $L_a;\n\tbra.uni $T;\n$L_a:\n\tret;"), 0,
   "bra names '$T', a .branchtargets table, not a code label", 8, 2},
  {"jump table listing a jump table", K("\t$T: .branchtargets $U;\n$U: .branchtargets $L_a;\n"
                                        "\tbrx.idx %r1, $T;\n$L_a:\n\tret;"), 0,
   ".branchtargets entry '$U' is a jump table, not a code label", 7, 21},
};

static void test_malformed(void) {
  for (size_t i = 0; i < sizeof bad_cases / sizeof *bad_cases; i++) {
    const bad_case *c = &bad_cases[i];
    ptx_error err;
    size_t len = c->len ? c->len : strlen(c->text);
    ptx_module *m = ptx_parse(c->text, len, "t.ptx", &err);
    char prefix[64];
    snprintf(prefix, sizeof prefix, "t.ptx:%u:%u: error: ", c->line, c->col);
    int ok = m == NULL && strncmp(err.msg, prefix, strlen(prefix)) == 0 &&
             strstr(err.msg, c->expect) != NULL && err.line == c->line && err.col == c->col;
    if (!ok)
      fprintf(stderr, "\n  case '%s': got '%s', want '%s...%s'\n", c->what,
              m ? "(parsed)" : err.msg, prefix, c->expect);
    /* the malformed input is rejected with FILE:LINE:COL and the expected text */
    CU_ASSERT_TRUE(ok);
    ptx_module_free(m);
  }
  /* a missing file is an error naming the file, not a crash */
  ptx_error err;
  CU_ASSERT_PTR_NULL(ptx_parse_file("tests/ptx/does-not-exist.ptx", &err));
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "does-not-exist.ptx"));
  /* NULL err is allowed */
  CU_ASSERT_PTR_NULL(ptx_parse("x", 1, "t.ptx", NULL));
}

static void test_truncations(void) {
  /* every prefix of a real file either parses or fails cleanly */
  char *text = tests_read_file("tests/ptx/reduce_nvcc.ptx", NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(text);
  size_t len = strlen(text);
  int failures = 0, wellformed = 1;
  for (size_t cut = 0; cut < len; cut += 7) {
    ptx_error err;
    char *copy = malloc(cut + 1); /* exact size: ASan catches over-reads */
    memcpy(copy, text, cut);
    ptx_module *m = ptx_parse(copy, cut, "cut.ptx", &err);
    if (!m) {
      failures++;
      if (strncmp(err.msg, "cut.ptx:", 8) != 0 || !strstr(err.msg, ": error: ")) wellformed = 0;
    }
    ptx_module_free(m);
    free(copy);
  }
  /* truncated files fail, and every message has the FILE:LINE:COL form */
  CU_ASSERT_TRUE(failures > 0);
  CU_ASSERT_TRUE(wellformed);
  free(text);
}

static void test_long_lines(void) {
  size_t nb = 3u << 20; /* 3 Mi initialiser bytes on one line */
  size_t cap = nb * 5 + (4u << 20) + 4096;
  char *s = malloc(cap);
  size_t o = (size_t)snprintf(s, cap, HDR "// ");
  memset(s + o, 'c', 4u << 20); /* a 4 MiB comment line */
  o += 4u << 20;
  o += (size_t)snprintf(s + o, cap - o, "\n.global .align 1 .b8 big[%zu] = {", nb);
  for (size_t i = 0; i < nb; i++)
    o += (size_t)snprintf(s + o, cap - o, i ? ", %u" : "%u", (unsigned)(i * 7 % 251));
  o += (size_t)snprintf(s + o, cap - o, "};\n.global .b8 rest[] = {1, 2, 3};\n");
  ptx_error err;
  ptx_module *m = ptx_parse(s, o, "long.ptx", &err);
  if (!m) fprintf(stderr, "\n  %s\n", err.msg);
  /* a file with a 4 MiB comment line and a 15 MB initialiser line parses */
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_EQUAL(m->nvars, 2);
  CU_ASSERT_EQUAL(m->vars[0].size, nb);
  int same = 1;
  for (size_t i = 0; i < nb; i += 4099) same &= m->vars[0].init[i] == (uint8_t)(i * 7 % 251);
  same &= m->vars[0].init[nb - 1] == (uint8_t)((nb - 1) * 7 % 251);
  /* every sampled initialiser byte is the value written */
  CU_ASSERT_TRUE(same);
  /* an unsized array takes its size from the initialiser */
  CU_ASSERT_EQUAL(m->vars[1].count, 3);
  CU_ASSERT_EQUAL(m->vars[1].init[2], 3);
  ptx_module_free(m);
  free(s);
}

/* Parse a kernel body and return its module (fatal on failure). */
static ptx_module *kernel(const char *decls, const char *body, ptx_func **f) {
  char *s = wrap_kernel(decls, body);
  ptx_error err;
  ptx_module *m = parse_text(s, &err);
  if (!m) fprintf(stderr, "\n  %s\n", err.msg);
  free(s);
  *f = m ? ptx_find_func(m, "k") : NULL;
  return m;
}

static const char *print_insn(const ptx_module *m, const ptx_func *f, uint32_t i) {
  static char buf[512];
  ptx_insn_print(m, f, &f->insns[i], buf, sizeof buf);
  return buf;
}

/* .branchtargets: kept on the table's label, in table order, with targets
   and even the table itself defined after the brx.idx that uses them. */
static void test_jump_tables(void) {
  ptx_func *f;
  ptx_module *m = kernel("",
      "\t.reg .b32 %r<4>;\n\t.reg .pred %p<2>;\n"
      "\tld.param.u32 %r1, [k_param_0];\n"                        /* 0 */
      "\t$L_brx_0: .branchtargets\n\t\t$L_c,\n\t\t$L_a,\n\t\t$L_c;\n"
      "\tbrx.idx %r1, $L_brx_0;\n"                                /* 1 */
      "$L_a:\n\tsetp.eq.u32 %p1, %r1, 0;\n"                        /* 2 */
      "\t@%p1 brx.idx %r1, $L_late;\n"                            /* 3 */
      "\tbra.uni $L_c;\n"                                         /* 4 */
      "$L_late: .branchtargets $L_a;\n"
      "$L_c:\n\tret;", &f);                                      /* 5 */
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  CU_ASSERT_EQUAL_FATAL(f->ninsns, 6);
  const ptx_operand *o = ptx_insn_opnd(f, &f->insns[1], 1);
  /* brx.idx's last operand is a LABEL naming the table */
  CU_ASSERT_EQUAL_FATAL(o->kind, PTX_OPND_LABEL);
  const ptx_label *t = &f->labels[o->u.label];
  CU_ASSERT_STRING_EQUAL(t->name, "$L_brx_0");
  /* the table keeps its three entries in source order, repeats included,
     although $L_c and $L_a were not defined yet where it was written */
  CU_ASSERT_EQUAL_FATAL(t->ntargets, 3);
  CU_ASSERT_STRING_EQUAL(f->labels[t->targets[0]].name, "$L_c");
  CU_ASSERT_STRING_EQUAL(f->labels[t->targets[1]].name, "$L_a");
  CU_ASSERT_EQUAL(t->targets[2], t->targets[0]);
  CU_ASSERT_EQUAL(f->labels[t->targets[0]].insn, 5);
  CU_ASSERT_EQUAL(f->labels[t->targets[1]].insn, 2);
  /* a table named before it is written resolves too */
  o = ptx_insn_opnd(f, &f->insns[3], 1);
  CU_ASSERT_EQUAL_FATAL(o->kind, PTX_OPND_LABEL);
  CU_ASSERT_EQUAL_FATAL(f->labels[o->u.label].ntargets, 1);
  CU_ASSERT_EQUAL(f->labels[f->labels[o->u.label].targets[0]].insn, 2);
  /* code labels carry no table */
  CU_ASSERT_EQUAL(f->labels[t->targets[1]].ntargets, 0);
  CU_ASSERT_PTR_NULL(f->labels[t->targets[1]].targets);
  /* the printer writes brx.idx with the table's name, as the source does */
  CU_ASSERT_STRING_EQUAL(print_insn(m, f, 1), "brx.idx %r1, $L_brx_0");
  CU_ASSERT_STRING_EQUAL(print_insn(m, f, 3), "@%p1 brx.idx %r1, $L_late");
  ptx_module_free(m);
}

static void test_registers_and_scopes(void) {
  ptx_func *f;
  ptx_module *m = kernel("",
      "\t.reg .b32 %r<6>;\n\t.reg .pred %p;\n\t.reg .b32 plain, other;\n"
      "\tmov.u32 %r5, %r0;\n"
      "\t{\n\t.param .b32 param0;\n\tst.param.b32 [param0+0], %r1;\n"
      "\t{\n\t.param .b32 param0;\n\tst.param.b32 [param0], %r2;\n\t}\n"
      "\tst.param.b32 [param0+4], plain;\n\t}\n"
      "\t{\n\t.param .b32 param0;\n\t.reg .b32 plain;\n\tst.param.b32 [param0], plain;\n\t}\n"
      "\tret;", &f);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  /* %r<6> declares %r0..%r5, then %p, plain, other, and the inner plain */
  CU_ASSERT_EQUAL(f->nregs, 10);
  CU_ASSERT_STRING_EQUAL(f->regs[0].name, "%r0");
  CU_ASSERT_STRING_EQUAL(f->regs[5].name, "%r5");
  CU_ASSERT_EQUAL(f->regs[5].type, PTX_T_B32);
  CU_ASSERT_EQUAL(f->regs[6].type, PTX_T_PRED);
  const ptx_operand *o = ptx_insn_opnd(f, &f->insns[0], 0);
  /* operands resolve to their register slots */
  CU_ASSERT_EQUAL(o->kind, PTX_OPND_REG);
  CU_ASSERT_EQUAL(o->u.reg, 5);
  /* each .param param0 is its own var after the kernel param */
  CU_ASSERT_EQUAL(f->nvars, 4);
  uint32_t b1 = ptx_insn_opnd(f, &f->insns[1], 0)->u.addr.base;
  uint32_t b2 = ptx_insn_opnd(f, &f->insns[2], 0)->u.addr.base;
  uint32_t b3 = ptx_insn_opnd(f, &f->insns[3], 0)->u.addr.base;
  uint32_t b4 = ptx_insn_opnd(f, &f->insns[4], 0)->u.addr.base;
  /* the innermost declaration wins, the outer one is back after '}' */
  CU_ASSERT_EQUAL(b1, 1);
  CU_ASSERT_EQUAL(b2, 2);
  CU_ASSERT_EQUAL(b3, 1);
  CU_ASSERT_EQUAL(b4, 3);
  CU_ASSERT_TRUE(ptx_insn_opnd(f, &f->insns[1], 0)->u.addr.sym_local);
  CU_ASSERT_EQUAL(ptx_insn_opnd(f, &f->insns[4], 1)->u.reg, 9); /* inner plain */
  CU_ASSERT_EQUAL(ptx_insn_opnd(f, &f->insns[3], 1)->u.reg, 7); /* outer plain */
  CU_ASSERT_STRING_EQUAL(print_insn(m, f, 1), "st.param.b32 [param0+0], %r1");
  CU_ASSERT_STRING_EQUAL(print_insn(m, f, 2), "st.param.b32 [param0], %r2");
  ptx_module_free(m);
}

/* What nvcc's own headers and -G emit: cuda_fp16.h's inline assembly
   declares ".reg.b32 f, C;" (directive and type in one word) inside nested
   scopes, with plain register names; cooperative groups reads
   %reserved_smem_offset_1 (kept by -G). */
static void test_toolchain_forms(void) {
  ptx_func *f;
  ptx_module *m = kernel("",
      "\t.reg .b16 %rs<3>;\n\t.reg .b32 %r<2>;\n"
      "\t{.reg.b32         f, C;\n\t .reg.b16 h,r;\n"
      "\t  mov.b16 h,%rs1;\n\t  cvt.f32.f16 f,h;\n"
      "\t{.reg.b16 spc, p;\n\t  mov.b16 spc,0X1F79U;\n\t  set.eq.f16.f16 p,h, spc;\n\t}\n"
      "\t  cvt.rn.f16.f32 r,f;\n\t  mov.b16 %rs2,r;\n\t}\n"
      "\t{ .reg .u32 start;\n\t mov.u32 start, %reserved_smem_offset_1;\n"
      "\t mov.u32 %r1, %reserved_smem_offset_cap;\n\t}\n"
      "\tret;", &f);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  CU_ASSERT_EQUAL_FATAL(f->ninsns, 9);
  /* .reg.b32 declares f and C as .b32, .reg.b16 h and r as .b16 */
  const ptx_operand *o = ptx_insn_opnd(f, &f->insns[1], 0);
  CU_ASSERT_EQUAL_FATAL(o->kind, PTX_OPND_REG);
  CU_ASSERT_STRING_EQUAL(f->regs[o->u.reg].name, "f");
  CU_ASSERT_EQUAL(f->regs[o->u.reg].type, PTX_T_B32);
  o = ptx_insn_opnd(f, &f->insns[1], 1);
  CU_ASSERT_STRING_EQUAL(f->regs[o->u.reg].name, "h");
  CU_ASSERT_EQUAL(f->regs[o->u.reg].type, PTX_T_B16);
  CU_ASSERT_STRING_EQUAL(print_insn(m, f, 3), "set.eq.f16.f16 p, h, spc");
  /* the reserved shared-memory registers are special registers */
  o = ptx_insn_opnd(f, &f->insns[6], 1);
  CU_ASSERT_EQUAL(o->kind, PTX_OPND_SREG);
  CU_ASSERT_EQUAL(o->u.sreg, PTX_SR_RESERVED_SMEM_1);
  CU_ASSERT_EQUAL(ptx_insn_opnd(f, &f->insns[7], 1)->u.sreg, PTX_SR_RESERVED_SMEM_CAP);
  CU_ASSERT_STRING_EQUAL(print_insn(m, f, 6), "mov.u32 start, %reserved_smem_offset_1");
  ptx_module_free(m);
  /* a word that merely begins like the directive is still refused */
  ptx_error err;
  char *s = wrap_kernel("", "\t.regs .b32 x;\n\tret;");
  m = parse_text(s, &err);
  free(s);
  CU_ASSERT_PTR_NULL(m);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "unknown directive '.regs'"));
  ptx_module_free(m);
}

static void test_operands(void) {
  ptx_func *f;
  ptx_module *m = kernel(
      ".global .align 4 .b8 gtab[64];\n"
      ".func (.param .b32 func_retval0) _Z2sqf(.param .b32 _Z2sqf_param_0);\n"
      ".func _Z3fooii(.param .b32 a, .param .b32 b);\n",
      "\t.reg .b32 %r<20>;\n\t.reg .f32 %f<4>;\n\t.reg .b64 %rd<4>;\n\t.reg .pred %p<6>;\n"
      "\t.reg .b64 %SP;\n"
      "\tld.global.f32 %f1, [%rd2+4];\n"                          /* 0 */
      "\tst.shared.v2.f32 [%r5], {%f1, %f2};\n"                   /* 1 */
      "\tshfl.sync.down.b32 %r19|%p5, %r14, %r17, %r16, %r18;\n"  /* 2 */
      "\t@%p1 bra $L__BB1_2;\n"                                   /* 3 */
      "\t@!%p1 bra.uni $L__BB1_2;\n"                              /* 4 */
      "$L__BB1_2:\n"
      "\t{\n\t.param .b32 param0;\n\t.param .b32 retval0;\n"
      "\tcall.uni (retval0), _Z2sqf, (param0);\n\t}\n"            /* 5 */
      "\t{\n\t.param .b32 param0;\n\t.param .b32 param1;\n"
      "\tcall.uni _Z3fooii, (param0, param1);\n\t}\n"             /* 6 */
      "\tld.global.u32 %r1, [%rd1+-4];\n"                         /* 7 */
      "\tld.global.u32 %r1, [%rd1-4];\n"                          /* 8 */
      "\tld.global.u32 %r1, [gtab+8];\n"                          /* 9 */
      "\tld.global.u32 %r1, [123];\n"                             /* 10 */
      "\tld.local.u32 %r1, [%SP+0];\n"                            /* 11 */
      "\tmov.u64 %rd1, gtab;\n"                                   /* 12 */
      "\tselp.b32 %r1, %r2, %r3, !%p2;\n"                         /* 13 */
      "\tld.global.v4.u32 {%r1, _, %r3, _}, [%rd1];\n"            /* 14 */
      "\tmov.u32 %r1, %tid.x;\n"                                  /* 15 */
      "\tmov.u32 %r1, %envreg7;\n"                                /* 16 */
      "\tmov.u64 %rd1, %clock64;\n"                               /* 17 */
      "\tmov.u32 %r1, %lanemask_lt;\n"                            /* 18 */
      "\tmov.u32 %r1, %dynamic_smem_size;\n"                      /* 19 */
      "\tsetp.lt.s32 %p1|%p2, %r1, %r2;\n"                        /* 20 */
      "\tret;", &f);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  const char *want[] = {
    "ld.global.f32 %f1, [%rd2+4]",
    "st.shared.v2.f32 [%r5], {%f1, %f2}",
    "shfl.sync.down.b32 %r19|%p5, %r14, %r17, %r16, %r18",
    "@%p1 bra $L__BB1_2",
    "@!%p1 bra.uni $L__BB1_2",
    "call.uni (retval0), _Z2sqf, (param0)",
    "call.uni _Z3fooii, (param0, param1)",
    "ld.global.u32 %r1, [%rd1+-4]",
    "ld.global.u32 %r1, [%rd1-4]",
    "ld.global.u32 %r1, [gtab+8]",
    "ld.global.u32 %r1, [123]",
    "ld.local.u32 %r1, [%SP+0]",
    "mov.u64 %rd1, gtab",
    "selp.b32 %r1, %r2, %r3, !%p2",
    "ld.global.v4.u32 {%r1, _, %r3, _}, [%rd1]",
    "mov.u32 %r1, %tid.x",
    "mov.u32 %r1, %envreg7",
    "mov.u64 %rd1, %clock64",
    "mov.u32 %r1, %lanemask_lt",
    "mov.u32 %r1, %dynamic_smem_size",
    "setp.lt.s32 %p1|%p2, %r1, %r2",
    "ret",
  };
  CU_ASSERT_EQUAL_FATAL(f->ninsns, sizeof want / sizeof *want);
  for (uint32_t i = 0; i < f->ninsns; i++) {
    const char *got = print_insn(m, f, i);
    if (strcmp(got, want[i])) fprintf(stderr, "\n  printed '%s', want '%s'\n", got, want[i]);
    /* the printer reproduces the instruction as nvcc writes it */
    CU_ASSERT_STRING_EQUAL(got, want[i]);
  }
  const ptx_insn *I = &f->insns[1];
  /* a vector operand is a header with its elements after it */
  CU_ASSERT_EQUAL(I->nopnd, 2);
  CU_ASSERT_EQUAL(ptx_insn_opnd(f, I, 1)->kind, PTX_OPND_VEC);
  CU_ASSERT_EQUAL(ptx_insn_opnd(f, I, 1)->n, 2);
  CU_ASSERT_EQUAL(f->opnds[I->opnd + 2].kind, PTX_OPND_REG);
  CU_ASSERT_EQUAL(I->vec, 2);
  I = &f->insns[2];
  /* the pipe destination is its own operand, marked pipe, not counted by the table */
  CU_ASSERT_EQUAL(I->nopnd, 6);
  CU_ASSERT_EQUAL(ptx_insn_opnd(f, I, 1)->pipe, 1);
  CU_ASSERT_EQUAL(ptx_insn_opnd(f, I, 2)->pipe, 0);
  I = &f->insns[3];
  /* guard and label resolve to the predicate slot and the label index */
  CU_ASSERT_EQUAL(I->guard, (int32_t)(20 + 4 + 4 + 1));
  CU_ASSERT_EQUAL(I->guard_neg, 0);
  CU_ASSERT_EQUAL(f->insns[4].guard_neg, 1);
  CU_ASSERT_EQUAL(ptx_insn_opnd(f, I, 0)->kind, PTX_OPND_LABEL);
  CU_ASSERT_EQUAL(f->labels[ptx_insn_opnd(f, I, 0)->u.label].insn, 5);
  CU_ASSERT_TRUE(f->insns[4].flags & PTX_F_UNI);
  I = &f->insns[5];
  /* call: (ret list), function, (arg list) */
  CU_ASSERT_EQUAL(I->nopnd, 3);
  CU_ASSERT_EQUAL(ptx_insn_opnd(f, I, 0)->kind, PTX_OPND_LIST);
  CU_ASSERT_EQUAL(ptx_insn_opnd(f, I, 1)->kind, PTX_OPND_FUNC);
  CU_ASSERT_STRING_EQUAL(m->funcs[ptx_insn_opnd(f, I, 1)->u.func].name, "_Z2sqf");
  CU_ASSERT_EQUAL(ptx_insn_opnd(f, I, 2)->kind, PTX_OPND_LIST);
  CU_ASSERT_EQUAL(f->insns[6].nopnd, 2);
  /* address forms */
  CU_ASSERT_EQUAL(ptx_insn_opnd(f, &f->insns[7], 1)->u.addr.offset, -4);
  CU_ASSERT_EQUAL(ptx_insn_opnd(f, &f->insns[8], 1)->u.addr.offset, -4);
  const ptx_operand *a = ptx_insn_opnd(f, &f->insns[9], 1);
  CU_ASSERT_EQUAL(a->u.addr.base_kind, PTX_OPND_SYM);
  CU_ASSERT_EQUAL(a->u.addr.sym_local, 0);
  CU_ASSERT_STRING_EQUAL(m->vars[a->u.addr.base].name, "gtab");
  CU_ASSERT_EQUAL(a->u.addr.offset, 8);
  a = ptx_insn_opnd(f, &f->insns[10], 1);
  CU_ASSERT_EQUAL(a->u.addr.base_kind, PTX_OPND_IMM_INT);
  CU_ASSERT_EQUAL(a->u.addr.offset, 123);
  CU_ASSERT_EQUAL(ptx_insn_opnd(f, &f->insns[12], 1)->kind, PTX_OPND_SYM);
  CU_ASSERT_EQUAL(ptx_insn_opnd(f, &f->insns[13], 3)->neg, 1);
  CU_ASSERT_EQUAL(f->opnds[f->insns[14].opnd + 2].kind, PTX_OPND_SINK);
  /* special registers */
  CU_ASSERT_EQUAL(ptx_insn_opnd(f, &f->insns[15], 1)->u.sreg, PTX_SR_TID_X);
  CU_ASSERT_EQUAL(ptx_insn_opnd(f, &f->insns[16], 1)->u.sreg, PTX_SR_ENVREG0 + 7);
  CU_ASSERT_EQUAL(ptx_insn_opnd(f, &f->insns[17], 1)->u.sreg, PTX_SR_CLOCK64);
  CU_ASSERT_EQUAL(ptx_insn_opnd(f, &f->insns[18], 1)->u.sreg, PTX_SR_LANEMASK_LT);
  CU_ASSERT_EQUAL(ptx_insn_opnd(f, &f->insns[19], 1)->u.sreg, PTX_SR_DYNAMIC_SMEM_SIZE);
  /* operand index past the end is NULL */
  CU_ASSERT_PTR_NULL(ptx_insn_opnd(f, &f->insns[15], 2));
  /* mnemonic position */
  CU_ASSERT_EQUAL(f->insns[0].col, 2);
  ptx_module_free(m);
}

static void test_immediates(void) {
  ptx_func *f;
  ptx_module *m = kernel("",
      "\t.reg .b32 %r<4>;\n\t.reg .f32 %f<2>;\n\t.reg .f64 %fd<2>;\n\t.reg .b64 %rd<2>;\n"
      "\tmov.b32 %r1, 0f3F800000;\n"   /* 0 */
      "\tmov.s32 %r1, -1;\n"           /* 1 */
      "\tmov.u32 %r1, 0xFFFFFFFF;\n"   /* 2 */
      "\tmov.u32 %r1, 017;\n"          /* 3 */
      "\tmov.u32 %r1, 0b101;\n"        /* 4 */
      "\tmov.f64 %fd1, 0d3FF0000000000000;\n" /* 5 */
      "\tadd.f32 %f1, %f1, 1.5;\n"     /* 6 */
      "\tmov.u32 %r1, 7U;\n"           /* 7 */
      "\tmov.u32 %r1, 0xdeadbeef;\n"   /* 8 */
      "\tadd.f64 %fd1, %fd1, 2.5e-1;\n" /* 9 */
      "\tmov.u64 %rd1, 18446744073709551615;\n" /* 10 */
      "\tmov.s32 %r1, -0x10;\n"        /* 11 */
      "\tret;", &f);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  const ptx_operand *o;
  o = ptx_insn_opnd(f, &f->insns[0], 1);
  /* 0f3F800000 is the f32 bit pattern 0x3F800000 */
  CU_ASSERT_EQUAL(o->kind, PTX_OPND_IMM_F32);
  CU_ASSERT_EQUAL(o->u.f32bits, 0x3F800000u);
  o = ptx_insn_opnd(f, &f->insns[1], 1);
  CU_ASSERT_EQUAL(o->kind, PTX_OPND_IMM_INT);
  CU_ASSERT_EQUAL(o->u.i, -1);
  CU_ASSERT_EQUAL(ptx_insn_opnd(f, &f->insns[2], 1)->u.i, 0xFFFFFFFFll);
  CU_ASSERT_EQUAL(ptx_insn_opnd(f, &f->insns[3], 1)->u.i, 15);
  CU_ASSERT_EQUAL(ptx_insn_opnd(f, &f->insns[4], 1)->u.i, 5);
  o = ptx_insn_opnd(f, &f->insns[5], 1);
  CU_ASSERT_EQUAL(o->kind, PTX_OPND_IMM_F64);
  CU_ASSERT_EQUAL(o->u.f64bits, 0x3FF0000000000000ull);
  o = ptx_insn_opnd(f, &f->insns[6], 2);
  /* a decimal float in f32 context is an f32 immediate */
  CU_ASSERT_EQUAL(o->kind, PTX_OPND_IMM_F32);
  CU_ASSERT_EQUAL(o->u.f32bits, 0x3FC00000u);
  o = ptx_insn_opnd(f, &f->insns[9], 2);
  CU_ASSERT_EQUAL(o->kind, PTX_OPND_IMM_F64);
  CU_ASSERT_EQUAL(o->u.f64bits, 0x3FD0000000000000ull);
  CU_ASSERT_TRUE(ptx_insn_opnd(f, &f->insns[7], 1)->fmt & PTX_IMMFMT_UNSIGNED);
  CU_ASSERT_EQUAL(ptx_insn_opnd(f, &f->insns[10], 1)->u.i, -1);
  CU_ASSERT_EQUAL(ptx_insn_opnd(f, &f->insns[11], 1)->u.i, -16);
  /* immediates print as written */
  const char *want[] = {"mov.b32 %r1, 0f3F800000", "mov.s32 %r1, -1",
                        "mov.u32 %r1, 0xFFFFFFFF", "mov.u32 %r1, 017", "mov.u32 %r1, 0b101",
                        "mov.f64 %fd1, 0d3FF0000000000000", "add.f32 %f1, %f1, 1.5",
                        "mov.u32 %r1, 7U", "mov.u32 %r1, 0xdeadbeef",
                        "add.f64 %fd1, %fd1, 0.25", "mov.u64 %rd1, 18446744073709551615",
                        "mov.s32 %r1, -0x10"};
  for (uint32_t i = 0; i < sizeof want / sizeof *want; i++)
    CU_ASSERT_STRING_EQUAL(print_insn(m, f, i), want[i]);
  ptx_module_free(m);
}

static void test_decoded_fields(void) {
  ptx_func *f;
  ptx_module *m = kernel("",
      "\t.reg .b32 %r<8>;\n\t.reg .f32 %f<4>;\n\t.reg .b64 %rd<4>;\n\t.reg .pred %p<4>;\n"
      "\tcvt.rn.f32.s32 %f1, %r1;\n"                   /* 0 */
      "\tsetp.lt.s32 %p1, %r1, %r2;\n"                 /* 1 */
      "\tsetp.lo.u32 %p1, %r1, %r2;\n"                 /* 2 */
      "\tsetp.ltu.and.f32 %p1, %f1, %f2, %p2;\n"       /* 3 */
      "\tatom.global.add.f32 %f1, [%rd1], %f2;\n"      /* 4 */
      "\tatom.shared.cas.b32 %r1, [%r2], %r3, %r4;\n"  /* 5 */
      "\tshfl.sync.bfly.b32 %r1, %r2, %r3, %r4, %r5;\n" /* 6 */
      "\tld.global.nc.v4.f32 {%f0, %f1, %f2, %f3}, [%rd1];\n" /* 7 */
      "\tld.f32 %f1, [%rd1];\n"                        /* 8 */
      "\tmul.wide.s32 %rd1, %r1, 4;\n"                 /* 9 */
      "\tvote.sync.ballot.b32 %r1, %p1, %r2;\n"        /* 10 */
      "\tmembar.gl;\n"                                 /* 11 */
      "\tprmt.b32.f4e %r1, %r2, %r3, %r4;\n"           /* 12 */
      "\tbar.red.popc.u32 %r1, 0, %p1;\n"              /* 13 */
      "\tcvta.to.global.u64 %rd1, %rd2;\n"             /* 14 */
      "\tld.shared::cluster.u32 %r1, [%r2];\n"         /* 15 */
      "\tset.gt.u32.f32 %r1, %f1, %f2;\n"              /* 16 */
      "\tmad.lo.s32 %r1, %r2, %r3, %r4;\n"             /* 17 */
      "\tfma.rn.ftz.sat.f32 %f1, %f2, %f3, %f0;\n"     /* 18 */
      "\tred.global.max.u32 [%rd1], %r1;\n"            /* 19 */
      "\tshf.l.wrap.b32 %r1, %r2, %r3, %r4;\n"         /* 20 */
      "\tfence.sc.gpu;\n"                              /* 21 */
      "\tld.global.L1::evict_last.L2::cache_hint.u32 %r1, [%rd1], %rd2;\n" /* 22 */
      "\tbar.sync 0;\n"                                /* 23 */
      "\tret;", &f);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  const ptx_insn *I = f->insns;
  /* cvt: type is the destination, type2 the source, rounding decoded */
  CU_ASSERT_EQUAL(I[0].op, PTX_OP_CVT);
  CU_ASSERT_EQUAL(I[0].type, PTX_T_F32);
  CU_ASSERT_EQUAL(I[0].type2, PTX_T_S32);
  CU_ASSERT_EQUAL(I[0].rnd, PTX_RND_RN);
  /* setp: type pred, comparison type in type2 */
  CU_ASSERT_EQUAL(I[1].type, PTX_T_PRED);
  CU_ASSERT_EQUAL(I[1].type2, PTX_T_S32);
  CU_ASSERT_EQUAL(I[1].cmp, PTX_CMP_LT);
  CU_ASSERT_EQUAL(I[2].cmp, PTX_CMP_LO);
  CU_ASSERT_EQUAL(I[3].cmp, PTX_CMP_LTU);
  CU_ASSERT_EQUAL(I[3].boolop, PTX_AUX_AND);
  /* atom: space and operation */
  CU_ASSERT_EQUAL(I[4].space, PTX_SP_GLOBAL);
  CU_ASSERT_EQUAL(I[4].aux, PTX_AUX_ADD);
  CU_ASSERT_EQUAL(I[4].type, PTX_T_F32);
  CU_ASSERT_EQUAL(I[5].aux, PTX_AUX_CAS);
  CU_ASSERT_EQUAL(I[5].space, PTX_SP_SHARED);
  CU_ASSERT_EQUAL(I[6].aux, PTX_AUX_BFLY);
  CU_ASSERT_TRUE(I[6].flags & PTX_F_SYNC);
  /* ld: space, .nc and vector width */
  CU_ASSERT_EQUAL(I[7].space, PTX_SP_GLOBAL);
  CU_ASSERT_TRUE(I[7].flags & PTX_F_NC);
  CU_ASSERT_EQUAL(I[7].vec, 4);
  CU_ASSERT_EQUAL(I[8].space, PTX_SP_GENERIC);
  CU_ASSERT_EQUAL(I[8].vec, 1);
  CU_ASSERT_TRUE(I[9].flags & PTX_F_WIDE);
  CU_ASSERT_EQUAL(I[9].type, PTX_T_S32);
  CU_ASSERT_EQUAL(I[10].aux, PTX_AUX_BALLOT);
  CU_ASSERT_EQUAL(I[11].aux, PTX_AUX_GL);
  CU_ASSERT_EQUAL(I[12].aux, PTX_AUX_F4E);
  CU_ASSERT_TRUE(I[13].flags & PTX_F_RED);
  CU_ASSERT_EQUAL(I[13].aux, PTX_AUX_POPC);
  CU_ASSERT_EQUAL(I[14].space, PTX_SP_GLOBAL);
  CU_ASSERT_TRUE(I[14].flags & PTX_F_TO);
  CU_ASSERT_EQUAL(I[15].space, PTX_SP_SHARED_CLUSTER);
  CU_ASSERT_EQUAL(I[16].type, PTX_T_U32);
  CU_ASSERT_EQUAL(I[16].type2, PTX_T_F32);
  CU_ASSERT_EQUAL(I[16].cmp, PTX_CMP_GT);
  CU_ASSERT_TRUE(I[17].flags & PTX_F_LO);
  CU_ASSERT_EQUAL(I[18].flags & (PTX_F_FTZ | PTX_F_SAT), PTX_F_FTZ | PTX_F_SAT);
  CU_ASSERT_EQUAL(I[19].aux, PTX_AUX_MAX);
  CU_ASSERT_EQUAL(I[19].op, PTX_OP_RED);
  CU_ASSERT_EQUAL(I[20].flags & (PTX_F_LEFT | PTX_F_WRAP), PTX_F_LEFT | PTX_F_WRAP);
  CU_ASSERT_EQUAL(I[21].aux, PTX_AUX_GPU);
  /* unknown modifiers stay in the key */
  CU_ASSERT_STRING_EQUAL(ptx_insn_key(m, &I[22]), "ld.global.L1::evict_last.L2::cache_hint.u32");
  CU_ASSERT_STRING_EQUAL(ptx_insn_key(m, &I[7]), "ld.global.nc.v4.f32");
  /* keys are interned: one entry per distinct key */
  CU_ASSERT_EQUAL(I[23].op, PTX_OP_BAR);
  uint32_t distinct = 0;
  for (uint32_t i = 0; i < m->nkeys; i++) distinct += strcmp(m->keys[i], "ld.f32") == 0;
  CU_ASSERT_EQUAL(distinct, 1);
  ptx_module_free(m);
}

static void test_module_forms(void) {
  const char *src =
      HDR
      "@@DWARF .section .debug_abbrev\n"
      ".file 1 \"/tmp/x.cu\"\n"
      ".global .texref tex0;\n"
      ".global .align 4 .f32 fc[3] = {0f3F800000, 1.5, 2};\n"
      ".global .align 4 .u32 mat[2][2] = {{1, 2}, {3}};\n"
      ".global .align 8 .u64 ptrs[2] = {generic(fc), mat+4};\n"
      ".const .align 8 .f64 dd = 0d4000000000000000;\n"
      ".global .s32 neg = -2;\n"
      ".weak .global .align 4 .b8 wk[4];\n"
      ".func (.param .b32 func_retval0) proto(.param .b32 proto_param_0);\n"
      ".visible .entry k(\n"
      "\t.param .u64 .ptr .global .align 16 k_param_0,\n"
      "\t.param .u64 .ptr.global.align 8 k_param_1,\n"
      "\t.param .align 8 .b8 k_param_2[16]\n"
      ")\n.maxntid 256, 1, 1\n.minnctapersm 2\n.maxnreg 40\n.explicitcluster\n"
      ".maxclusterrank 4\n{\n"
      "\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<3>;\n"
      "\t.pragma \"nounroll\";\n"
      "\t.loc 1 12 3\n"
      "\t.local .align 4 .b8 __local_depot0[8];\n"
      "\tld.param.u64 %rd1, [k_param_0];\n"
      "\tmov.u64 %rd2, k_param_2;\n"
      "\tmov.u64 %rd1, proto;\n"
      "\t{\n\t.param .b32 param0;\n\t.param .b32 retval0;\n"
      "\tprototype_0 : .callprototype (.param .b32 _) _ (.param .b32 _);\n"
      "\tcall (retval0), %rd1, (param0), prototype_0;\n\t}\n"
      "\tret;\n}\n"
      ".func (.param .b32 func_retval0) proto(.param .b32 p)\n.noreturn\n{\n"
      "\tst.param.b32 [func_retval0+0], 0;\n\tret;\n}\n"
      ".section .debug_info\n{\n.b32 123\n.b8 1, 2, 3\n$Ltmp:\n.b64 $Ltmp\n}\n";
  ptx_error err;
  ptx_module *m = parse_text(src, &err);
  if (!m) fprintf(stderr, "\n  %s\n", err.msg);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  /* texref, float, nested, relocated, const, negative and weak variables */
  CU_ASSERT_EQUAL(m->nvars, 7);
  CU_ASSERT_EQUAL(m->vars[0].space, PTX_SP_TEX);
  const ptx_var *fc = &m->vars[1];
  float v[3];
  memcpy(v, fc->init, 12);
  CU_ASSERT_EQUAL(v[0], 1.0f);
  CU_ASSERT_EQUAL(v[1], 1.5f);
  CU_ASSERT_EQUAL(v[2], 2.0f);
  const ptx_var *mat = &m->vars[2];
  uint32_t mv[4];
  memcpy(mv, mat->init, 16);
  /* nested initialiser rows pad with zeros */
  CU_ASSERT_EQUAL(mat->count, 4);
  CU_ASSERT_EQUAL(mv[0], 1);
  CU_ASSERT_EQUAL(mv[1], 2);
  CU_ASSERT_EQUAL(mv[2], 3);
  CU_ASSERT_EQUAL(mv[3], 0);
  const ptx_var *pt = &m->vars[3];
  /* generic(sym) and sym+4 become relocations */
  CU_ASSERT_EQUAL(pt->init_syms, 2);
  CU_ASSERT_EQUAL(pt->init_reloc[0].sym, 1);
  CU_ASSERT_EQUAL(pt->init_reloc[0].generic, 1);
  CU_ASSERT_EQUAL(pt->init_reloc[1].offset, 8);
  CU_ASSERT_EQUAL(pt->init_reloc[1].sym, 2);
  CU_ASSERT_EQUAL(pt->init_reloc[1].addend, 4);
  double dd;
  memcpy(&dd, m->vars[4].init, 8);
  CU_ASSERT_EQUAL(dd, 2.0);
  CU_ASSERT_EQUAL(m->vars[4].space, PTX_SP_CONST);
  int32_t ng;
  memcpy(&ng, m->vars[5].init, 4);
  CU_ASSERT_EQUAL(ng, -2);
  CU_ASSERT_TRUE(m->vars[6].is_weak);
  CU_ASSERT_PTR_NULL(m->vars[6].init);
  /* the prototype and its later definition are one function */
  CU_ASSERT_EQUAL(m->nfuncs, 2);
  ptx_func *p = ptx_find_func(m, "proto");
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  CU_ASSERT_TRUE(p->has_body);
  CU_ASSERT_FALSE(p->is_extern);
  CU_ASSERT_STRING_EQUAL(p->params[0].name, "p");
  ptx_func *k = ptx_find_func(m, "k");
  CU_ASSERT_PTR_NOT_NULL_FATAL(k);
  /* .ptr attributes and performance directives */
  CU_ASSERT_TRUE(k->params[0].is_ptr);
  CU_ASSERT_EQUAL(k->params[0].ptr_space, PTX_SP_GLOBAL);
  CU_ASSERT_EQUAL(k->params[0].align, 16);
  CU_ASSERT_EQUAL(k->params[1].ptr_space, PTX_SP_GLOBAL);
  CU_ASSERT_EQUAL(k->params[1].align, 8);
  CU_ASSERT_EQUAL(k->params[2].size, 16);
  CU_ASSERT_EQUAL(k->maxntid[0], 256);
  CU_ASSERT_EQUAL(k->maxntid[1], 1);
  CU_ASSERT_EQUAL(k->minnctapersm, 2);
  CU_ASSERT_EQUAL(k->maxnreg, 40);
  CU_ASSERT_EQUAL(k->maxclusterrank, 4);
  /* a param used as a value is a function-local symbol */
  const ptx_operand *o = ptx_insn_opnd(k, &k->insns[1], 1);
  CU_ASSERT_EQUAL(o->kind, PTX_OPND_SYM);
  CU_ASSERT_EQUAL(o->sym_local, 1);
  CU_ASSERT_EQUAL(o->u.sym, 2);
  CU_ASSERT_EQUAL(ptx_insn_opnd(k, &k->insns[2], 1)->kind, PTX_OPND_FUNC);
  /* indirect call through a register with a prototype label */
  const ptx_insn *c = &k->insns[3];
  CU_ASSERT_EQUAL(c->op, PTX_OP_CALL);
  CU_ASSERT_EQUAL(c->nopnd, 4);
  CU_ASSERT_EQUAL(ptx_insn_opnd(k, c, 1)->kind, PTX_OPND_REG);
  CU_ASSERT_EQUAL(ptx_insn_opnd(k, c, 3)->kind, PTX_OPND_LABEL);
  char buf[256];
  ptx_insn_print(m, k, c, buf, sizeof buf);
  CU_ASSERT_STRING_EQUAL(buf, "call (retval0), %rd1, (param0), prototype_0");
  /* a short buffer is truncated and NUL-terminated, the full length returned */
  size_t need = ptx_insn_print(m, k, c, buf, 5);
  CU_ASSERT_EQUAL(need, strlen("call (retval0), %rd1, (param0), prototype_0"));
  CU_ASSERT_STRING_EQUAL(buf, "call");
  ptx_module_free(m);
}

static void test_ops_table(void) {
  /* the op table and the lookup agree for every row */
  int ok = 1;
  for (int op = 0; op < PTX_OP_COUNT; op++) {
    const char *n = ptx_op_info_table[op].name;
    ok &= ptx_op_lookup(n, (unsigned)strlen(n)) == op;
  }
  CU_ASSERT_TRUE(ok);
  CU_ASSERT_EQUAL(ptx_op_lookup("ld.global", 2), PTX_OP_LD);
  CU_ASSERT_EQUAL(ptx_op_lookup("frob", 4), -1);
  CU_ASSERT_EQUAL(ptx_op_lookup("", 0), -1);
  /* names and sizes */
  CU_ASSERT_EQUAL(ptx_type_size(PTX_T_F64), 8);
  CU_ASSERT_EQUAL(ptx_type_size(PTX_T_PRED), 1);
  CU_ASSERT_EQUAL(ptx_type_size(PTX_T_NONE), 0);
  CU_ASSERT_EQUAL(ptx_type_size(PTX_T_B128), 16);
  CU_ASSERT_STRING_EQUAL(ptx_type_name(PTX_T_BF16X2), "bf16x2");
  CU_ASSERT_STRING_EQUAL(ptx_type_name(PTX_T_NONE), "");
  CU_ASSERT_STRING_EQUAL(ptx_space_name(PTX_SP_SHARED), "shared");
  CU_ASSERT_STRING_EQUAL(ptx_sreg_name(PTX_SR_NCTAID_Z), "%nctaid.z");
  CU_ASSERT_STRING_EQUAL(ptx_sreg_name(PTX_SR_CLUSTER_NCTARANK), "%cluster_nctarank");
  CU_ASSERT_STRING_EQUAL(ptx_sreg_name((ptx_sreg)(PTX_SR_ENVREG0 + 31)), "%envreg31");
  CU_ASSERT_STRING_EQUAL(ptx_sreg_name(PTX_SR_COUNT), "");
}

TEST_SUITES(register_ptx_tests) {
  CU_pSuite s = tests_suite("ptx_parse");
  TEST_ADD(s, test_ops_table);
  TEST_ADD(s, test_committed_samples);
  TEST_ADD(s, test_compiled_corpus);
  TEST_ADD(s, test_malformed);
  TEST_ADD(s, test_truncations);
  TEST_ADD(s, test_long_lines);
  TEST_ADD(s, test_registers_and_scopes);
  TEST_ADD(s, test_toolchain_forms);
  TEST_ADD(s, test_jump_tables);
  TEST_ADD(s, test_operands);
  TEST_ADD(s, test_immediates);
  TEST_ADD(s, test_decoded_fields);
  TEST_ADD(s, test_module_forms);
}
