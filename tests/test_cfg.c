/*
 * test_cfg.c -- the control-flow graph: hand-built kernels with known shapes
 * (diamond, loop, nested loops, early return, infinite loop, unreachable
 * code, a label at the end) and graph invariants checked on every PTX file
 * we have (the committed tests/ptx files and the corpus under $KCAST_BUILD
 * when present).
 *
 * The invariants are verified independently of the builder's algorithms:
 * dominance by "removing the dominator disconnects the block from the
 * entry", post-dominance by "removing the post-dominator disconnects the
 * block from every exit".
 */
#include "tests.h"

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "extractor/ptx.h"

/* A CUnit assertion whose failure report is the sentence it proves. */
#define ASSERT_MSG(msg, value) \
  CU_assertImplementation(!!(value), __LINE__, (msg), __FILE__, "", CU_FALSE)

#define HDR ".version 8.0\n.target sm_90\n.address_size 64\n"

static ptx_module *parse_str(const char *text) {
  ptx_error err;
  memset(&err, 0, sizeof err);
  ptx_module *m = ptx_parse(text, strlen(text), "cfg_test.ptx", &err);
  if (!m) {
    fprintf(stderr, "\n  parse failed: %s\n", err.msg);
    return NULL;
  }
  if (ptx_cfg_build(m, &err)) {
    fprintf(stderr, "\n  cfg failed: %s\n", err.msg);
    ptx_module_free(m);
    return NULL;
  }
  return m;
}

/* ---------------------------------------------------------- invariants -- */

static int is_exit_block(const ptx_func *f, const ptx_block *b) {
  if (b->count == 0) return 1; /* the empty end-of-function block */
  uint32_t fl = ptx_op_info_table[f->insns[b->first + b->count - 1].op].flags;
  return (fl & (PTX_OPF_RET | PTX_OPF_EXIT)) != 0;
}

/* Blocks reachable from `from` without entering `avoid` (-1: none). */
static void reach_fwd(const ptx_cfg *g, uint32_t from, long avoid, uint8_t *seen) {
  uint32_t *st = malloc((g->nblocks + 1) * sizeof *st), sp = 0;
  memset(seen, 0, g->nblocks);
  if ((long)from == avoid) { free(st); return; }
  seen[from] = 1;
  st[sp++] = from;
  while (sp) {
    const ptx_block *b = &g->blocks[st[--sp]];
    for (uint32_t i = 0; i < b->nsucc; i++) {
      uint32_t s = b->succ[i];
      if ((long)s == avoid || seen[s]) continue;
      seen[s] = 1;
      st[sp++] = s;
    }
  }
  free(st);
}

static int reaches_exit(const ptx_func *f, uint32_t from, long avoid, uint8_t *seen) {
  reach_fwd(f->cfg, from, avoid, seen);
  for (uint32_t b = 0; b < f->cfg->nblocks; b++)
    if (seen[b] && is_exit_block(f, &f->cfg->blocks[b])) return 1;
  return 0;
}

static int dominates(const ptx_cfg *g, uint32_t d, uint32_t b) {
  for (long x = b; x >= 0; x = g->blocks[x].idom)
    if ((uint32_t)x == d) return 1;
  return 0;
}

/* Check every invariant of one function's CFG; counts failures by CU. */
static void check_func(const ptx_module *m, const ptx_func *f, const char *what) {
  const ptx_cfg *g = f->cfg;
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT_TRUE_FATAL(g->nblocks >= 1);
  uint8_t *seen = calloc(g->nblocks + 1, 1), *seen2 = calloc(g->nblocks + 1, 1);
  uint32_t *cover = calloc(f->ninsns + 1, sizeof *cover);
  int ok_cover = 1, ok_mutual = 1, ok_dom = 1, ok_pdom = 1, ok_back = 1, ok_reach = 1;
  int ok_brx = 1;

  /* block_of covers every instruction exactly once, blocks in order. */
  uint32_t next = 0;
  for (uint32_t b = 0; b < g->nblocks; b++) {
    const ptx_block *B = &g->blocks[b];
    if (B->first != next) ok_cover = 0;
    for (uint32_t i = B->first; i < B->first + B->count && i < f->ninsns; i++) {
      cover[i]++;
      if (g->block_of[i] != b) ok_cover = 0;
    }
    next = B->first + B->count;
  }
  for (uint32_t i = 0; i < f->ninsns; i++) if (cover[i] != 1) ok_cover = 0;
  if (next != f->ninsns) ok_cover = 0;
  ASSERT_MSG("block_of covers every instruction exactly once", ok_cover);

  /* Successors and predecessors are mutual. */
  for (uint32_t b = 0; b < g->nblocks; b++) {
    const ptx_block *B = &g->blocks[b];
    for (uint32_t i = 0; i < B->nsucc; i++) {
      uint32_t s = B->succ[i], hits = 0;
      if (s >= g->nblocks) { ok_mutual = 0; continue; }
      for (uint32_t j = 0; j < g->blocks[s].npred; j++) hits += g->blocks[s].pred[j] == b;
      if (hits != 1) ok_mutual = 0;
    }
    for (uint32_t i = 0; i < B->npred; i++) {
      uint32_t p = B->pred[i], hits = 0;
      if (p >= g->nblocks) { ok_mutual = 0; continue; }
      for (uint32_t j = 0; j < g->blocks[p].nsucc; j++) hits += g->blocks[p].succ[j] == b;
      if (hits != 1) ok_mutual = 0;
    }
  }
  ASSERT_MSG("every successor edge appears once as a predecessor edge and back", ok_mutual);

  /* A block ending in brx.idx goes to the blocks its table lists, each once,
   * in table order, then (guarded) to the fall-through: nothing else. */
  for (uint32_t b = 0; b < g->nblocks; b++) {
    const ptx_block *B = &g->blocks[b];
    if (!B->count || f->insns[B->first + B->count - 1].op != PTX_OP_BRX) continue;
    const ptx_insn *in = &f->insns[B->first + B->count - 1];
    const ptx_operand *o = ptx_insn_opnd(f, in, 1);
    if (!o || o->kind != PTX_OPND_LABEL || !f->labels[o->u.label].ntargets) { ok_brx = 0; continue; }
    const ptx_label *t = &f->labels[o->u.label];
    uint32_t want[64], nw = 0;
    for (uint32_t k = 0; k < t->ntargets && nw < 63; k++) {
      uint32_t at = f->labels[t->targets[k]].insn;
      uint32_t tb = at < f->ninsns ? g->block_of[at] : g->nblocks - 1;
      int dup = 0;
      for (uint32_t j = 0; j < nw; j++) dup |= want[j] == tb;
      if (!dup) want[nw++] = tb;
    }
    if (in->guard >= 0 && b + 1 < g->nblocks) {
      int dup = 0;
      for (uint32_t j = 0; j < nw; j++) dup |= want[j] == b + 1;
      if (!dup) want[nw++] = b + 1;
    }
    if (t->ntargets >= 63) continue; /* too large to compare here */
    if (B->nsucc != nw) { ok_brx = 0; continue; }
    for (uint32_t j = 0; j < nw; j++) if (B->succ[j] != want[j]) ok_brx = 0;
  }
  ASSERT_MSG("brx.idx blocks go to their table's targets in table order and nowhere else", ok_brx);

  /* Reachability and dominators. */
  CU_ASSERT_EQUAL(g->blocks[0].idom, -1);
  reach_fwd(g, 0, -1, seen);
  for (uint32_t b = 0; b < g->nblocks; b++) {
    const ptx_block *B = &g->blocks[b];
    if (B->reachable != seen[b]) ok_reach = 0;
    if (b == 0 || !B->reachable) {
      if (B->idom != -1) ok_dom = 0;
      continue;
    }
    if (B->idom < 0 || (uint32_t)B->idom >= g->nblocks || !g->blocks[B->idom].reachable) {
      ok_dom = 0;
      continue;
    }
    /* The idom really dominates: without it, b is cut off from the entry. */
    reach_fwd(g, 0, B->idom, seen2);
    if (seen2[b]) ok_dom = 0;
    if (!dominates(g, 0, b)) ok_dom = 0;
  }
  ASSERT_MSG("reachable flags agree with a search from the entry", ok_reach);
  ASSERT_MSG("each idom is reachable and removing it cuts the block off the entry", ok_dom);

  /* Post-dominators: -1 exactly when no exit is reachable; a block ipdom
   * lies on every path to an exit. */
  for (uint32_t b = 0; b < g->nblocks; b++) {
    const ptx_block *B = &g->blocks[b];
    int can_exit = reaches_exit(f, b, -1, seen2);
    if (!can_exit) { if (B->ipdom != -1) ok_pdom = 0; continue; }
    if (B->ipdom == -1) { ok_pdom = 0; continue; }
    if (B->ipdom == PTX_EXIT_BLOCK) continue;
    if (B->ipdom < 0 || (uint32_t)B->ipdom >= g->nblocks || (uint32_t)B->ipdom == b) {
      ok_pdom = 0;
      continue;
    }
    if (reaches_exit(f, b, B->ipdom, seen2)) ok_pdom = 0;
  }
  ASSERT_MSG("ipdom is -1 exactly for blocks that cannot exit, and lies on every path to exit", ok_pdom);

  /* Back edges go to dominating loop headers; loop depth is consistent. */
  for (uint32_t e = 0; e < g->nback; e++) {
    uint32_t u = g->back[e].from, v = g->back[e].to;
    int is_edge = 0;
    for (uint32_t i = 0; i < g->blocks[u].nsucc; i++) is_edge |= g->blocks[u].succ[i] == v;
    if (!is_edge || !dominates(g, v, u) || g->blocks[v].loop_depth < 1 ||
        g->blocks[u].loop_depth < 1)
      ok_back = 0;
  }
  if (g->nloops > g->nback || (g->nback && !g->nloops)) ok_back = 0;
  for (uint32_t b = 0; b < g->nblocks; b++)
    if (g->blocks[b].loop_depth > g->nloops || (!g->blocks[b].reachable && g->blocks[b].loop_depth))
      ok_back = 0;
  ASSERT_MSG("back edges are edges into dominating headers inside loops", ok_back);

  if (!(ok_cover && ok_mutual && ok_dom && ok_pdom && ok_back && ok_reach && ok_brx))
    fprintf(stderr, "\n  CFG invariant failed in %s, function %s (%s)\n", what, f->name,
            m->filename);
  free(seen);
  free(seen2);
  free(cover);
}

static void check_module(const ptx_module *m, const char *what) {
  for (uint32_t i = 0; i < m->nfuncs; i++)
    if (m->funcs[i].has_body) check_func(m, &m->funcs[i], what);
}

static int check_glob(const char *pattern) {
  glob_t gl;
  int n = 0;
  if (glob(pattern, 0, NULL, &gl)) return 0;
  for (size_t i = 0; i < gl.gl_pathc; i++) {
    ptx_error err;
    memset(&err, 0, sizeof err);
    ptx_module *m = ptx_parse_file(gl.gl_pathv[i], &err);
    if (!m) continue; /* the parser's own tests judge parse failures */
    CU_ASSERT_EQUAL(ptx_cfg_build(m, &err), 0);
    CU_ASSERT_EQUAL(ptx_cfg_build(m, &err), 0); /* idempotent */
    check_module(m, gl.gl_pathv[i]);
    ptx_module_free(m);
    n++;
  }
  globfree(&gl);
  return n;
}

static void test_invariants_committed(void) {
  int n = check_glob("tests/ptx/*.ptx");
  ASSERT_MSG("the committed tests/ptx files were found and parsed", n >= 4);
}

static void test_invariants_corpus(void) {
  char pat[4096];
  snprintf(pat, sizeof pat, "%s/corpus/*.ptx", tests_build());
  check_glob(pat); /* the corpus is optional; each file found is checked */
  snprintf(pat, sizeof pat, "%s/corpus/*/*.ptx", tests_build());
  check_glob(pat);
}

/* ------------------------------------------------------------- shapes -- */

static void test_diamond(void) {
  ptx_module *m = parse_str(HDR
      ".visible .entry diamond(.param .u32 n)\n{\n"
      "  .reg .pred %p<2>;\n  .reg .b32 %r<4>;\n"
      "  ld.param.u32 %r1, [n];\n"
      "  setp.lt.s32 %p1, %r1, 0;\n"
      "  @%p1 bra $L_else;\n"
      "  add.s32 %r2, %r1, 1;\n"
      "  bra.uni $L_join;\n"
      "$L_else:\n"
      "  sub.s32 %r2, %r1, 1;\n"
      "$L_join:\n"
      "  ret;\n}\n");
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  const ptx_cfg *g = m->funcs[0].cfg;
  CU_ASSERT_EQUAL_FATAL(g->nblocks, 4);
  CU_ASSERT_EQUAL(g->blocks[0].count, 3);
  CU_ASSERT_EQUAL_FATAL(g->blocks[0].nsucc, 2);
  CU_ASSERT_EQUAL(g->blocks[0].succ[0], 2); /* taken: the else block */
  CU_ASSERT_EQUAL(g->blocks[0].succ[1], 1); /* fall-through: the then block */
  CU_ASSERT_EQUAL(g->blocks[0].ipdom, 3);   /* reconverge at the join */
  CU_ASSERT_EQUAL(g->blocks[1].ipdom, 3);
  CU_ASSERT_EQUAL(g->blocks[2].ipdom, 3);
  CU_ASSERT_EQUAL(g->blocks[3].ipdom, PTX_EXIT_BLOCK);
  CU_ASSERT_EQUAL(g->blocks[3].idom, 0);    /* the join is dominated by the branch */
  CU_ASSERT_EQUAL(g->blocks[3].npred, 2);
  CU_ASSERT_EQUAL(g->nback, 0);
  CU_ASSERT_EQUAL(g->nloops, 0);
  check_module(m, "diamond");
  ptx_module_free(m);
}

static void test_loop(void) {
  ptx_module *m = parse_str(HDR
      ".visible .entry loop()\n{\n"
      "  .reg .pred %p<2>;\n  .reg .b32 %r<4>;\n"
      "  mov.u32 %r1, 0;\n"
      "$L_loop:\n"
      "  add.s32 %r1, %r1, 1;\n"
      "  setp.lt.s32 %p1, %r1, 10;\n"
      "  @%p1 bra $L_loop;\n"
      "  ret;\n}\n");
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  const ptx_cfg *g = m->funcs[0].cfg;
  CU_ASSERT_EQUAL_FATAL(g->nblocks, 3);
  CU_ASSERT_EQUAL(g->nback, 1);
  CU_ASSERT_EQUAL(g->nloops, 1);
  CU_ASSERT_EQUAL_FATAL(g->nback, 1);
  CU_ASSERT_EQUAL(g->back[0].from, 1);
  CU_ASSERT_EQUAL(g->back[0].to, 1);
  CU_ASSERT_EQUAL(g->blocks[0].loop_depth, 0);
  CU_ASSERT_EQUAL(g->blocks[1].loop_depth, 1); /* the loop body */
  CU_ASSERT_EQUAL(g->blocks[2].loop_depth, 0);
  CU_ASSERT_EQUAL_FATAL(g->blocks[1].nsucc, 2);
  CU_ASSERT_EQUAL(g->blocks[1].succ[0], 1);   /* taken: back to the header */
  CU_ASSERT_EQUAL(g->blocks[1].succ[1], 2);
  CU_ASSERT_EQUAL(g->blocks[1].ipdom, 2);     /* the loop exit */
  check_module(m, "loop");
  ptx_module_free(m);
}

static void test_nested_loops(void) {
  ptx_module *m = parse_str(HDR
      ".visible .entry nest()\n{\n"
      "  .reg .pred %p<3>;\n  .reg .b32 %r<4>;\n"
      "  mov.u32 %r1, 0;\n"
      "$L_outer:\n"
      "  mov.u32 %r2, 0;\n"
      "$L_inner:\n"
      "  add.s32 %r2, %r2, 1;\n"
      "  setp.lt.s32 %p1, %r2, 10;\n"
      "  @%p1 bra $L_inner;\n"
      "  add.s32 %r1, %r1, 1;\n"
      "  setp.lt.s32 %p2, %r1, 10;\n"
      "  @%p2 bra $L_outer;\n"
      "  ret;\n}\n");
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  const ptx_cfg *g = m->funcs[0].cfg;
  CU_ASSERT_EQUAL_FATAL(g->nblocks, 5);
  CU_ASSERT_EQUAL(g->nback, 2);
  CU_ASSERT_EQUAL(g->nloops, 2);
  CU_ASSERT_EQUAL(g->blocks[0].loop_depth, 0);
  CU_ASSERT_EQUAL(g->blocks[1].loop_depth, 1); /* outer header */
  CU_ASSERT_EQUAL(g->blocks[2].loop_depth, 2); /* inner body */
  CU_ASSERT_EQUAL(g->blocks[3].loop_depth, 1); /* outer latch */
  CU_ASSERT_EQUAL(g->blocks[4].loop_depth, 0);
  CU_ASSERT_EQUAL(g->blocks[2].idom, 1);
  CU_ASSERT_EQUAL(g->blocks[2].ipdom, 3);
  CU_ASSERT_EQUAL(g->blocks[3].ipdom, 4);
  check_module(m, "nested");
  ptx_module_free(m);
}

static void test_early_return(void) {
  ptx_module *m = parse_str(HDR
      ".visible .entry early(.param .u32 n)\n{\n"
      "  .reg .pred %p<2>;\n  .reg .b32 %r<4>;\n"
      "  ld.param.u32 %r1, [n];\n"
      "  setp.lt.s32 %p1, %r1, 0;\n"
      "  @%p1 ret;\n"
      "  add.s32 %r2, %r1, 1;\n"
      "  ret;\n}\n");
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  const ptx_cfg *g = m->funcs[0].cfg;
  CU_ASSERT_EQUAL_FATAL(g->nblocks, 2);
  CU_ASSERT_EQUAL(g->blocks[0].count, 3);
  CU_ASSERT_EQUAL_FATAL(g->blocks[0].nsucc, 1); /* guarded ret falls through */
  CU_ASSERT_EQUAL(g->blocks[0].succ[0], 1);
  CU_ASSERT_EQUAL(g->blocks[0].ipdom, PTX_EXIT_BLOCK); /* it may leave directly */
  CU_ASSERT_EQUAL(g->blocks[1].ipdom, PTX_EXIT_BLOCK);
  CU_ASSERT_EQUAL(g->blocks[1].nsucc, 0);
  check_module(m, "early return");
  ptx_module_free(m);
}

static void test_infinite_and_unreachable(void) {
  ptx_module *m = parse_str(HDR
      ".visible .entry spin(.param .u32 n)\n{\n"
      "  .reg .pred %p<2>;\n  .reg .b32 %r<4>;\n"
      "  ld.param.u32 %r1, [n];\n"
      "  setp.lt.s32 %p1, %r1, 0;\n"
      "  @%p1 bra $L_spin;\n"
      "  ret;\n"
      "  add.s32 %r3, %r1, 7;\n"   /* unreachable: after ret, no label */
      "  ret;\n"
      "$L_spin:\n"
      "  add.s32 %r2, %r1, 1;\n"
      "  bra.uni $L_spin;\n}\n");
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  const ptx_cfg *g = m->funcs[0].cfg;
  CU_ASSERT_EQUAL_FATAL(g->nblocks, 4);
  CU_ASSERT_EQUAL(g->blocks[2].reachable, 0);
  CU_ASSERT_EQUAL(g->blocks[2].idom, -1);
  CU_ASSERT_EQUAL(g->blocks[3].reachable, 1);
  CU_ASSERT_EQUAL(g->blocks[3].ipdom, -1);    /* no path to any exit */
  CU_ASSERT_EQUAL(g->blocks[0].ipdom, 1);     /* the only exiting path */
  CU_ASSERT_EQUAL(g->blocks[3].loop_depth, 1);
  CU_ASSERT_EQUAL(g->nloops, 1);
  check_module(m, "infinite loop");
  ptx_module_free(m);
}

static void test_label_at_end(void) {
  ptx_module *m = parse_str(HDR
      ".visible .entry tail(.param .u32 n)\n{\n"
      "  .reg .pred %p<2>;\n  .reg .b32 %r<4>;\n"
      "  ld.param.u32 %r1, [n];\n"
      "  setp.lt.s32 %p1, %r1, 0;\n"
      "  @%p1 bra $L_end;\n"
      "  add.s32 %r2, %r1, 1;\n"
      "$L_end:\n}\n"
      ".visible .entry empty()\n{\n}\n");
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  const ptx_cfg *g = m->funcs[0].cfg;
  CU_ASSERT_EQUAL_FATAL(g->nblocks, 3);
  CU_ASSERT_EQUAL(g->blocks[2].count, 0);       /* the end-of-function block */
  CU_ASSERT_EQUAL(g->blocks[0].succ[0], 2);
  CU_ASSERT_EQUAL(g->blocks[0].ipdom, 2);
  CU_ASSERT_EQUAL(g->blocks[1].ipdom, 2);
  CU_ASSERT_EQUAL(g->blocks[2].ipdom, PTX_EXIT_BLOCK);
  const ptx_func *e = ptx_find_func(m, "empty");
  CU_ASSERT_PTR_NOT_NULL_FATAL(e);
  CU_ASSERT_PTR_NOT_NULL_FATAL(e->cfg);
  CU_ASSERT_EQUAL(e->cfg->nblocks, 1);          /* one empty exit block */
  CU_ASSERT_EQUAL(e->cfg->blocks[0].ipdom, PTX_EXIT_BLOCK);
  check_module(m, "label at end");
  ptx_module_free(m);
}

static void test_guarded_branch_to_next(void) {
  ptx_module *m = parse_str(HDR
      ".visible .entry nop(.param .u32 n)\n{\n"
      "  .reg .pred %p<2>;\n  .reg .b32 %r<4>;\n"
      "  ld.param.u32 %r1, [n];\n"
      "  setp.lt.s32 %p1, %r1, 0;\n"
      "  @%p1 bra $L_next;\n"
      "$L_next:\n"
      "  ret;\n}\n");
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  const ptx_cfg *g = m->funcs[0].cfg;
  CU_ASSERT_EQUAL_FATAL(g->nblocks, 2);
  CU_ASSERT_EQUAL(g->blocks[0].nsucc, 1); /* taken == fall-through: one edge */
  CU_ASSERT_EQUAL(g->blocks[1].npred, 1);
  check_module(m, "branch to next");
  ptx_module_free(m);
}

/* A switch diamond: brx.idx to three case blocks that meet at a join.  The
   table lists its targets out of block order and one twice. */
static void test_brx(void) {
  ptx_module *m = parse_str(HDR
      ".visible .entry sw(.param .u32 n)\n{\n"
      "  .reg .b32 %r<4>;\n"
      "  ld.param.u32 %r1, [n];\n"
      "  $L_tbl: .branchtargets $L_c, $L_a, $L_c, $L_b;\n"
      "  brx.idx %r1, $L_tbl;\n"             /* block 0: ld, brx */
      "$L_a:\n"
      "  add.s32 %r2, %r1, 1;\n"             /* block 1 */
      "  bra.uni $L_join;\n"
      "$L_b:\n"
      "  sub.s32 %r2, %r1, 1;\n"             /* block 2 */
      "  bra.uni $L_join;\n"
      "$L_c:\n"
      "  mul.lo.s32 %r2, %r1, 3;\n"          /* block 3, falls into the join */
      "$L_join:\n"
      "  ret;\n}\n");                        /* block 4 */
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  const ptx_cfg *g = m->funcs[0].cfg;
  /* the table's label starts no block: ld and brx.idx share block 0 */
  CU_ASSERT_EQUAL_FATAL(g->nblocks, 5);
  CU_ASSERT_EQUAL(g->blocks[0].count, 2);
  /* successors are the table's distinct targets in table order: c, a, b */
  CU_ASSERT_EQUAL_FATAL(g->blocks[0].nsucc, 3);
  CU_ASSERT_EQUAL(g->blocks[0].succ[0], 3);
  CU_ASSERT_EQUAL(g->blocks[0].succ[1], 1);
  CU_ASSERT_EQUAL(g->blocks[0].succ[2], 2);
  /* the join is the immediate post-dominator of the brx block (where the
     emulator reconverges) and of each case; the brx block dominates all */
  CU_ASSERT_EQUAL(g->blocks[0].ipdom, 4);
  for (uint32_t b = 1; b <= 3; b++) {
    CU_ASSERT_EQUAL(g->blocks[b].ipdom, 4);
    CU_ASSERT_EQUAL(g->blocks[b].idom, 0);
  }
  CU_ASSERT_EQUAL(g->blocks[4].idom, 0);
  CU_ASSERT_EQUAL(g->blocks[4].npred, 3);
  CU_ASSERT_EQUAL(g->nloops, 0);
  check_module(m, "brx");
  ptx_module_free(m);

  /* Guarded, with the table after the brx: targets, then the fall-through. */
  m = parse_str(HDR
      ".visible .entry g(.param .u32 n)\n{\n"
      "  .reg .pred %p<2>;\n"
      "  .reg .b32 %r<4>;\n"
      "  ld.param.u32 %r1, [n];\n"
      "  setp.lt.u32 %p1, %r1, 2;\n"
      "  @%p1 brx.idx %r1, $L_tbl;\n"        /* block 0 */
      "  mov.u32 %r2, 7;\n"                  /* block 1: fall-through */
      "  bra.uni $L_join;\n"
      "  $L_tbl: .branchtargets $L_b, $L_a;\n"
      "$L_a:\n"
      "  mov.u32 %r2, 1;\n"                  /* block 2 */
      "  bra.uni $L_join;\n"
      "$L_b:\n"
      "  mov.u32 %r2, 2;\n"                  /* block 3 */
      "$L_join:\n"
      "  ret;\n}\n");                        /* block 4 */
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  g = m->funcs[0].cfg;
  CU_ASSERT_EQUAL_FATAL(g->nblocks, 5);
  CU_ASSERT_EQUAL_FATAL(g->blocks[0].nsucc, 3);
  /* a guarded brx.idx: its table (b, a), then the fall-through */
  CU_ASSERT_EQUAL(g->blocks[0].succ[0], 3);
  CU_ASSERT_EQUAL(g->blocks[0].succ[1], 2);
  CU_ASSERT_EQUAL(g->blocks[0].succ[2], 1);
  CU_ASSERT_EQUAL(g->blocks[0].ipdom, 4);
  check_module(m, "guarded brx");
  ptx_module_free(m);
}

/* Critical paths: a chain of three dependent adds beside an independent
   one, a vector load feeding two uses, setp's second destination, and a
   register written in an earlier block counting as ready. */
static void test_block_chains(void) {
  const char *src = HDR
      ".visible .entry k(.param .u64 p)\n{\n"
      "  .reg .b32 %r<12>; .reg .b64 %rd<3>; .reg .pred %p<3>;\n"
      "  ld.param.u64 %rd1, [p];\n"            /* 1 */
      "  add.s32 %r1, %r0, 1;\n"               /* 1 */
      "  add.s32 %r2, %r1, 1;\n"               /* 2 */
      "  add.s32 %r3, %r2, 1;\n"               /* 3 */
      "  add.s32 %r4, %r0, 2;\n"               /* 1 */
      "  ld.global.v2.u32 {%r5, %r6}, [%rd1];\n" /* 2: reads %rd1 */
      "  add.s32 %r7, %r5, %r6;\n"             /* 3 */
      "  setp.lt.s32 %p1|%p2, %r7, %r3;\n"     /* 4 */
      "  @%p2 bra L;\n"                         /* 5: reads the guard */
      "L:\n"
      "  add.s32 %r8, %r7, %r4;\n"             /* 1: %r7, %r4 from the block before */
      "  add.s32 %r9, %r8, 1;\n"               /* 2 */
      "  st.global.u32 [%rd1], %r9;\n"         /* 3 */
      "  ret;\n}\n";
  ptx_module *m = parse_str(src);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  const ptx_cfg *g = m->funcs[0].cfg;
  CU_ASSERT_FATAL(g && g->nblocks >= 2);
  ASSERT_MSG("the first block's critical path: ld -> add -> setp (|%p2) -> bra, 5 steps",
             g->blocks[0].chain == 5 && g->blocks[0].count == 9);
  ASSERT_MSG("registers from an earlier block are ready: add -> add -> st, 3 steps",
             g->blocks[1].chain == 3);
  ptx_module_free(m);
}

TEST_SUITES(cfg_suites) {
  CU_pSuite s = tests_suite("cfg");
  TEST_ADD(s, test_diamond);
  TEST_ADD(s, test_loop);
  TEST_ADD(s, test_nested_loops);
  TEST_ADD(s, test_early_return);
  TEST_ADD(s, test_infinite_and_unreachable);
  TEST_ADD(s, test_label_at_end);
  TEST_ADD(s, test_guarded_branch_to_next);
  TEST_ADD(s, test_brx);
  TEST_ADD(s, test_block_chains);
  TEST_ADD(s, test_invariants_committed);
  TEST_ADD(s, test_invariants_corpus);
}
