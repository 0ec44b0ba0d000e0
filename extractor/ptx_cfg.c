/*
 * ptx_cfg.c -- control-flow graph of every PTX function: basic blocks,
 * edges, dominators, immediate post-dominators, back edges, natural loops.
 *
 * Why: the emulator counts executions per basic block and reconverges
 * diverged warps at the immediate post-dominator of a branch (the classic
 * SIMT stack rule); the static features count blocks, loops and loop depth.
 *
 * Blocks.  A block starts at instruction 0, at every label that a bra names
 * or that the .branchtargets table of a brx.idx lists, and after every
 * branch, ret, exit and trap.  The label of a table is not a leader: it
 * names the list, not code.  Successors of a block, by its last instruction:
 *
 *   bra L          [L]                 @p bra L     [L, fall-through]
 *   ret/exit/trap  []   (exit block)   @p ret/exit  [fall-through] (exit block)
 *   brx.idx T      [T's targets]       @p brx.idx T [T's targets, fall-through]
 *   anything else  [fall-through]
 *
 * brx.idx's targets are in table order, each block once (a switch whose
 * cases share a body lists its label several times).  A guarded branch whose
 * target is the fall-through block has one successor for it.
 * When a branch targets a label at the very end of the body, or the last
 * instruction can fall off the end, an empty trailing block (count 0) stands
 * for "the end of the function"; it is an exit block.  A function without
 * instructions has exactly that one empty block.
 *
 * Dominators use the iterative algorithm of Cooper, Harvey and Kennedy ("A
 * Simple, Fast Dominance Algorithm", 2001) over reverse postorder.  Post-
 * dominators run the same algorithm on the reverse graph rooted at a virtual
 * exit node V, with an edge V->b for every exit block b (a block that ends in
 * ret/exit/trap, guarded or not, or falls off the end).  ipdom == V is
 * reported as PTX_EXIT_BLOCK; blocks from which V is unreachable (infinite
 * loops) get -1.
 *
 * A back edge is u->v where v dominates u; the natural loop of a header h is
 * h plus every block that reaches the source of a back edge into h without
 * passing through h.  Back edges sharing a header form one loop, so nloops is
 * the number of distinct headers and loop_depth counts the loops containing a
 * block.
 *
 * Memory: each function's CFG (struct, blocks, block_of, successor and
 * predecessor lists, back edges) is one block carved from the module's arena
 * (ptx_int.h), so ptx_module_free() releases it with everything else; the
 * scratch arrays of the build are malloc'd and freed here.
 */
#include "extractor/ptx.h"
#include "extractor/ptx_ops.h"
#include "extractor/ptx_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UNDEF UINT32_MAX

/* Compressed adjacency: node x's neighbours are adj[off[x] .. off[x+1]). */
typedef struct csr {
  uint32_t n;
  uint32_t *off;  /* n+1 entries */
  uint32_t *adj;
} csr;

static void csr_free(csr *g) {
  free(g->off);
  free(g->adj);
  g->off = g->adj = NULL;
}

/* ------------------------------------------------------------ operands -- */

/* Calls fn(label index) for every label operand of insn i, including the
 * elements of vector/list operands.  Returns the number of labels seen. */
static uint32_t insn_labels(const ptx_func *f, const ptx_insn *in,
                            void (*fn)(void *, uint32_t), void *ctx) {
  uint32_t seen = 0;
  for (unsigned j = 0; j < in->nopnd; j++) {
    const ptx_operand *o = ptx_insn_opnd(f, in, j);
    if (!o) break;
    uint32_t span = 1;
    if (o->kind == PTX_OPND_VEC || o->kind == PTX_OPND_LIST) span += o->n;
    for (uint32_t k = 0; k < span && (size_t)(o - f->opnds) + k < f->nopnds; k++) {
      const ptx_operand *e = o + k;
      if (e->kind == PTX_OPND_LABEL && e->u.label < f->nlabels) {
        seen++;
        if (fn) fn(ctx, e->u.label);
      }
    }
  }
  return seen;
}

static int is_branch(const ptx_insn *in) {
  return in->op < PTX_OP_COUNT &&
         (ptx_op_info_table[in->op].flags & PTX_OPF_BRANCH) != 0;
}
static int is_leave(const ptx_insn *in) {
  return in->op < PTX_OP_COUNT &&
         (ptx_op_info_table[in->op].flags & (PTX_OPF_RET | PTX_OPF_EXIT)) != 0;
}

/* The .branchtargets table a brx.idx names (its last label operand; the
   parser guarantees one); NULL when there is none. */
static const ptx_label *brx_table(const ptx_func *f, const ptx_insn *in) {
  const ptx_operand *o = in->nopnd ? ptx_insn_opnd(f, in, in->nopnd - 1u) : NULL;
  if (!o || o->kind != PTX_OPND_LABEL || o->u.label >= f->nlabels) return NULL;
  const ptx_label *t = &f->labels[o->u.label];
  return t->ntargets ? t : NULL;
}

/* Calls fn(label index) for every label a branch can go to: the labels a
   bra names, the entries of a brx.idx's table. */
static void branch_labels(const ptx_func *f, const ptx_insn *in,
                          void (*fn)(void *, uint32_t), void *ctx) {
  if (in->op != PTX_OP_BRX) {
    insn_labels(f, in, fn, ctx);
    return;
  }
  const ptx_label *t = brx_table(f, in);
  for (uint32_t k = 0; t && k < t->ntargets; k++)
    if (t->targets[k] < f->nlabels) fn(ctx, t->targets[k]);
}

/* ---------------------------------------------------------- dominators -- */

/*
 * Immediate dominators of the graph (succ, pred) rooted at root, by Cooper-
 * Harvey-Kennedy.  idom[root] = root; UNDEF for nodes not reachable from root.
 * order_out (n entries) receives the reachable nodes in reverse postorder,
 * *norder their number.  0, or -1 on allocation failure.
 */
static int dom_tree(const csr *succ, const csr *pred, uint32_t root,
                    uint32_t *idom, uint32_t *order_out, uint32_t *norder) {
  uint32_t n = succ->n;
  uint32_t *rpo = malloc((size_t)n * sizeof *rpo);
  uint32_t *stack = malloc((size_t)n * sizeof *stack);
  uint32_t *edge = malloc((size_t)n * sizeof *edge);
  uint32_t *post = malloc((size_t)n * sizeof *post);
  if (!rpo || !stack || !edge || !post) {
    free(rpo); free(stack); free(edge); free(post);
    return -1;
  }
  for (uint32_t i = 0; i < n; i++) { rpo[i] = UNDEF; idom[i] = UNDEF; edge[i] = 0; }
  /* Iterative DFS: postorder into post[]. */
  uint32_t sp = 0, np = 0;
  uint8_t *vis = calloc(n ? n : 1, 1);
  if (!vis) { free(rpo); free(stack); free(edge); free(post); return -1; }
  stack[sp++] = root;
  vis[root] = 1;
  while (sp) {
    uint32_t x = stack[sp - 1];
    if (edge[x] < succ->off[x + 1] - succ->off[x]) {
      uint32_t y = succ->adj[succ->off[x] + edge[x]++];
      if (!vis[y]) { vis[y] = 1; stack[sp++] = y; }
    } else {
      post[np++] = x;
      sp--;
    }
  }
  free(vis);
  /* Reverse postorder: order[k] = node, rpo[node] = k. */
  for (uint32_t k = 0; k < np; k++) {
    uint32_t x = post[np - 1 - k];
    rpo[x] = k;
    order_out[k] = x;
  }
  *norder = np;
  idom[root] = root;
  int changed = 1;
  while (changed) {
    changed = 0;
    for (uint32_t k = 1; k < np; k++) {
      uint32_t b = order_out[k], nd = UNDEF;
      for (uint32_t e = pred->off[b]; e < pred->off[b + 1]; e++) {
        uint32_t p = pred->adj[e];
        if (rpo[p] == UNDEF || idom[p] == UNDEF) continue;
        if (nd == UNDEF) { nd = p; continue; }
        uint32_t a = p, c = nd;
        while (a != c) {
          while (rpo[a] > rpo[c]) a = idom[a];
          while (rpo[c] > rpo[a]) c = idom[c];
        }
        nd = a;
      }
      if (nd != UNDEF && idom[b] != nd) { idom[b] = nd; changed = 1; }
    }
  }
  free(rpo); free(stack); free(edge); free(post);
  return 0;
}

/* ------------------------------------------------------------- builder -- */

typedef struct label_ctx {
  const ptx_func *f;
  uint8_t *lead;
  int target_end; /* some branch targets the end of the body */
} label_ctx;

static void mark_label(void *ctx, uint32_t l) {
  label_ctx *c = ctx;
  if (c->f->labels[l].insn <= c->f->ninsns) c->lead[c->f->labels[l].insn] = 1;
  if (c->f->labels[l].insn == c->f->ninsns) c->target_end = 1;
}

/* Growable successor edge list used while building. */
typedef struct edge_buf {
  ptx_edge *e;
  size_t n, cap;
} edge_buf;

/* Append from->to unless it is already there.  Edges are appended grouped
   by from; seen (one entry per target node, UNDEF at first), when given,
   remembers the last from of each target, so that a brx with a large table
   costs one lookup per entry instead of a scan of the group. */
static int edge_push(edge_buf *b, uint32_t from, uint32_t to, uint32_t *seen) {
  if (seen) {
    if (seen[to] == from) return 0; /* duplicate successor */
    seen[to] = from;
  } else {
    for (size_t i = b->n; i > 0 && b->e[i - 1].from == from; i--)
      if (b->e[i - 1].to == to) return 0; /* duplicate successor */
  }
  if (b->n == b->cap) {
    size_t nc = b->cap ? b->cap * 2 : 16;
    ptx_edge *t = realloc(b->e, nc * sizeof *t);
    if (!t) return -1;
    b->e = t;
    b->cap = nc;
  }
  b->e[b->n].from = from;
  b->e[b->n].to = to;
  b->n++;
  return 0;
}

typedef struct target_ctx {
  edge_buf *eb;
  const ptx_func *f;
  const uint32_t *blk_at; /* insn index (0..ninsns) -> block */
  uint32_t *seen;         /* edge_push's duplicate filter */
  uint32_t from;
  int fail;
} target_ctx;

static void push_label(void *ctx, uint32_t l) {
  target_ctx *c = ctx;
  if (c->f->labels[l].insn > c->f->ninsns) return;
  if (edge_push(c->eb, c->from, c->blk_at[c->f->labels[l].insn], c->seen)) c->fail = 1;
}

/* Build the CFG of one function.  Returns NULL on allocation failure. */
static ptx_cfg *cfg_of(struct ptx_arena *arena, const ptx_func *f) {
  uint32_t ni = f->ninsns;
  ptx_cfg *cfg = NULL;
  uint8_t *lead = calloc((size_t)ni + 1, 1);
  uint32_t *blk_at = malloc(((size_t)ni + 1) * sizeof *blk_at);
  uint32_t *first = NULL;
  uint8_t *exits = NULL;
  uint32_t *idom = NULL, *ipdom = NULL, *order = NULL, *depth = NULL;
  uint32_t *mark = NULL, *work = NULL, *seen = NULL;
  edge_buf eb = {0}, back = {0};
  csr fs = {0}, fp = {0}, rs = {0}, rp = {0};
  if (!lead || !blk_at) goto fail;

  /* 1. Leaders. */
  label_ctx lc = {f, lead, 0};
  if (ni) lead[0] = 1;
  for (uint32_t i = 0; i < ni; i++) {
    const ptx_insn *in = &f->insns[i];
    if (is_branch(in)) {
      branch_labels(f, in, mark_label, &lc);
      lead[i + 1] = 1;
    } else if (is_leave(in)) {
      lead[i + 1] = 1;
    }
  }
  int falls_off = ni == 0;
  if (ni) {
    const ptx_insn *last = &f->insns[ni - 1];
    falls_off = last->guard >= 0 || !(is_branch(last) || is_leave(last));
  }
  int need_end = lc.target_end || falls_off;

  /* 2. Blocks. */
  uint32_t nb = 0;
  for (uint32_t i = 0; i < ni; i++) if (lead[i]) nb++;
  uint32_t ncode = nb;
  if (need_end) nb++;
  first = malloc(((size_t)nb + 1) * sizeof *first);
  exits = calloc((size_t)nb, 1);
  if (!first || !exits) goto fail;
  {
    uint32_t b = 0;
    for (uint32_t i = 0; i < ni; i++) {
      if (lead[i]) first[b++] = i;
      blk_at[i] = b - 1;
    }
    first[ncode] = ni;     /* end of the last code block */
    blk_at[ni] = need_end ? ncode : UNDEF;
    if (need_end) { first[nb] = ni; exits[ncode] = 1; }
  }

  /* 3. Successors. */
  seen = malloc((size_t)nb * sizeof *seen);
  if (!seen) goto fail;
  for (uint32_t b = 0; b < nb; b++) seen[b] = UNDEF;
  for (uint32_t b = 0; b < ncode; b++) {
    uint32_t lasti = first[b + 1] - 1;
    const ptx_insn *in = &f->insns[lasti];
    uint32_t next = b + 1 < nb ? b + 1 : UNDEF; /* fall-through block */
    int guarded = in->guard >= 0;
    if (is_branch(in)) {
      target_ctx tc = {&eb, f, blk_at, seen, b, 0};
      branch_labels(f, in, push_label, &tc);
      if (tc.fail) goto fail;
      if (guarded && next != UNDEF && edge_push(&eb, b, next, seen)) goto fail;
    } else if (is_leave(in)) {
      exits[b] = 1;
      if (guarded && next != UNDEF && edge_push(&eb, b, next, seen)) goto fail;
    } else if (next != UNDEF) {
      if (edge_push(&eb, b, next, seen)) goto fail;
    }
  }

  /* 4. CSR forms: forward successors and predecessors. */
  fs.n = fp.n = nb;
  fs.off = calloc((size_t)nb + 1, sizeof *fs.off);
  fp.off = calloc((size_t)nb + 1, sizeof *fp.off);
  fs.adj = malloc((eb.n ? eb.n : 1) * sizeof *fs.adj);
  fp.adj = malloc((eb.n ? eb.n : 1) * sizeof *fp.adj);
  if (!fs.off || !fp.off || !fs.adj || !fp.adj) goto fail;
  for (size_t e = 0; e < eb.n; e++) { fs.off[eb.e[e].from + 1]++; fp.off[eb.e[e].to + 1]++; }
  for (uint32_t b = 0; b < nb; b++) { fs.off[b + 1] += fs.off[b]; fp.off[b + 1] += fp.off[b]; }
  {
    uint32_t *fill = calloc((size_t)nb + 1, sizeof *fill);
    if (!fill) goto fail;
    for (size_t e = 0; e < eb.n; e++) fs.adj[e] = eb.e[e].to; /* eb is in block order */
    for (size_t e = 0; e < eb.n; e++) {
      uint32_t t = eb.e[e].to;
      fp.adj[fp.off[t] + fill[t]++] = eb.e[e].from;
    }
    free(fill);
  }

  /* 5. Dominators from block 0. */
  idom = malloc((size_t)nb * sizeof *idom);
  order = malloc(((size_t)nb + 1) * sizeof *order);
  if (!idom || !order) goto fail;
  uint32_t nreach = 0;
  if (dom_tree(&fs, &fp, 0, idom, order, &nreach)) goto fail;

  /* 6. Post-dominators: reverse graph plus virtual exit V = nb. */
  {
    uint32_t V = nb, nexit = 0;
    for (uint32_t b = 0; b < nb; b++) nexit += exits[b];
    rs.n = rp.n = nb + 1;
    rs.off = calloc((size_t)nb + 2, sizeof *rs.off);
    rp.off = calloc((size_t)nb + 2, sizeof *rp.off);
    rs.adj = malloc((eb.n + nexit + 1) * sizeof *rs.adj);
    rp.adj = malloc((eb.n + nexit + 1) * sizeof *rp.adj);
    if (!rs.off || !rp.off || !rs.adj || !rp.adj) goto fail;
    uint32_t k = 0;
    for (uint32_t b = 0; b < nb; b++) {            /* rs[b] = preds of b */
      rs.off[b] = k;
      for (uint32_t e = fp.off[b]; e < fp.off[b + 1]; e++) rs.adj[k++] = fp.adj[e];
    }
    rs.off[V] = k;
    for (uint32_t b = 0; b < nb; b++) if (exits[b]) rs.adj[k++] = b;
    rs.off[V + 1] = k;
    k = 0;
    for (uint32_t b = 0; b < nb; b++) {            /* rp[b] = succs of b (+V) */
      rp.off[b] = k;
      for (uint32_t e = fs.off[b]; e < fs.off[b + 1]; e++) rp.adj[k++] = fs.adj[e];
      if (exits[b]) rp.adj[k++] = V;
    }
    rp.off[V] = rp.off[V + 1] = k;
    ipdom = malloc(((size_t)nb + 1) * sizeof *ipdom);
    uint32_t *porder = malloc(((size_t)nb + 1) * sizeof *porder);
    uint32_t np = 0;
    if (!ipdom || !porder || dom_tree(&rs, &rp, V, ipdom, porder, &np)) {
      free(porder);
      goto fail;
    }
    free(porder);
  }

  /* 7. Back edges and natural loops. */
  depth = calloc((size_t)nb, sizeof *depth);
  mark = malloc((size_t)nb * sizeof *mark);
  work = malloc(((size_t)nb + 1) * sizeof *work);
  if (!depth || !mark || !work) goto fail;
  for (size_t e = 0; e < eb.n; e++) {
    uint32_t u = eb.e[e].from, v = eb.e[e].to;
    if (idom[u] == UNDEF || idom[v] == UNDEF) continue;
    for (uint32_t x = u;; x = idom[x]) {
      if (x == v) { if (edge_push(&back, u, v, NULL)) goto fail; break; }
      if (idom[x] == x) break; /* reached the entry */
    }
  }
  uint32_t nloops = 0;
  for (uint32_t b = 0; b < nb; b++) mark[b] = UNDEF;
  for (size_t i = 0; i < back.n; i++) {
    uint32_t h = back.e[i].to;
    if (mark[h] == h) continue; /* this header's loop is done */
    int dup = 0;
    for (size_t j = 0; j < i; j++) if (back.e[j].to == h) dup = 1;
    if (dup) continue;
    nloops++;
    /* Body: h plus everything reaching a back-edge source without h. */
    uint32_t sp = 0;
    mark[h] = h;
    depth[h]++;
    for (size_t j = i; j < back.n; j++) {
      uint32_t u = back.e[j].from;
      if (back.e[j].to != h || mark[u] == h) continue;
      mark[u] = h;
      depth[u]++;
      work[sp++] = u;
    }
    while (sp) {
      uint32_t x = work[--sp];
      for (uint32_t e = fp.off[x]; e < fp.off[x + 1]; e++) {
        uint32_t p = fp.adj[e];
        if (mark[p] == h || idom[p] == UNDEF) continue;
        mark[p] = h;
        depth[p]++;
        work[sp++] = p;
      }
    }
  }

  /* 8. Pack into one allocation. */
  {
    size_t sz = sizeof(ptx_cfg);
    size_t off_blocks = sz;
    sz += (size_t)nb * sizeof(ptx_block);
    size_t off_back = sz;
    sz += back.n * sizeof(ptx_edge);
    size_t off_u32 = sz;
    sz += ((size_t)ni + 2 * eb.n) * sizeof(uint32_t);
    char *mem = ptx_arena_alloc(arena, sz);
    if (!mem) goto fail;
    memset(mem, 0, sz);
    cfg = (ptx_cfg *)mem;
    cfg->nblocks = nb;
    cfg->blocks = (ptx_block *)(mem + off_blocks);
    cfg->nback = (uint32_t)back.n;
    cfg->back = back.n ? (ptx_edge *)(mem + off_back) : NULL;
    if (back.n) memcpy(cfg->back, back.e, back.n * sizeof(ptx_edge));
    cfg->nloops = nloops;
    uint32_t *u32 = (uint32_t *)(mem + off_u32);
    cfg->block_of = u32;
    memcpy(cfg->block_of, blk_at, (size_t)ni * sizeof(uint32_t));
    uint32_t *sp = u32 + ni, *pp = sp + eb.n;
    for (uint32_t b = 0; b < nb; b++) {
      ptx_block *B = &cfg->blocks[b];
      B->first = b < ncode ? first[b] : ni;
      B->count = b < ncode ? first[b + 1] - first[b] : 0;
      B->nsucc = fs.off[b + 1] - fs.off[b];
      B->succ = sp;
      memcpy(sp, fs.adj + fs.off[b], B->nsucc * sizeof(uint32_t));
      sp += B->nsucc;
      B->npred = fp.off[b + 1] - fp.off[b];
      B->pred = pp;
      memcpy(pp, fp.adj + fp.off[b], B->npred * sizeof(uint32_t));
      pp += B->npred;
      B->reachable = idom[b] != UNDEF;
      B->idom = (idom[b] == UNDEF || idom[b] == b) ? -1 : (int32_t)idom[b];
      if (ipdom[b] == UNDEF) B->ipdom = -1;
      else if (ipdom[b] == nb) B->ipdom = PTX_EXIT_BLOCK;
      else B->ipdom = (int32_t)ipdom[b];
      B->loop_depth = depth[b];
    }
  }

fail:
  free(lead); free(blk_at); free(first); free(exits); free(seen);
  free(idom); free(ipdom); free(order); free(depth); free(mark); free(work);
  free(eb.e); free(back.e);
  csr_free(&fs); csr_free(&fp); csr_free(&rs); csr_free(&rp);
  return cfg;
}

/*
 * The critical path of every block of f (ptx_block.chain), in one pass per
 * block: an instruction's depth is 1 + the deepest depth among the last
 * writers, earlier in the block, of the registers it reads (sources, vector
 * elements, an address's base register, the guard), 1 when none; it then
 * becomes the depth of the registers it writes (the first operand unless
 * the op has none, a vector's elements, a '|'-joined second destination).
 * Registers written before the block count as ready.  Unit latency: a
 * count of dependent steps, not of cycles (docs/features.md, ctrl.ilp).
 */
static int block_chains(ptx_func *f, ptx_cfg *cfg) {
  uint32_t nr = f->nregs ? f->nregs : 1;
  uint32_t *dep = calloc(nr, sizeof *dep), *stamp = calloc(nr, sizeof *stamp);
  if (!dep || !stamp) {
    free(dep);
    free(stamp);
    return -1;
  }
  for (uint32_t b = 0; b < cfg->nblocks; b++) {
    ptx_block *B = &cfg->blocks[b];
    uint32_t gen = b + 1, chain = 0;
    for (uint32_t i = B->first; i < B->first + B->count; i++) {
      const ptx_insn *in = &f->insns[i];
      int nodst = (ptx_op_info_table[in->op].flags & PTX_OPF_NODST) != 0;
      uint32_t d = 1, wr[16], nw = 0;
#define READ(r)                                                     \
  do {                                                              \
    uint32_t r_ = (r);                                              \
    if (r_ < nr && stamp[r_] == gen && dep[r_] + 1 > d) d = dep[r_] + 1; \
  } while (0)
      if (in->guard >= 0) READ((uint32_t)in->guard);
      uint32_t k = in->opnd;
      for (unsigned j = 0; j < in->nopnd && k < f->nopnds; j++) {
        const ptx_operand *o = &f->opnds[k];
        int dst = (j == 0 && !nodst) || (j == 1 && o->pipe && !nodst);
        uint32_t ne = (o->kind == PTX_OPND_VEC || o->kind == PTX_OPND_LIST ||
                       o->kind == PTX_OPND_ADDR) ? o->n : 0;
        if (o->kind == PTX_OPND_REG) {
          if (dst) { if (nw < 16) wr[nw++] = o->u.reg; }
          else READ(o->u.reg);
        } else if (o->kind == PTX_OPND_ADDR && o->u.addr.base_kind == PTX_OPND_REG) {
          READ(o->u.addr.base);
        }
        for (uint32_t e = 1; e <= ne && k + e < f->nopnds; e++) {
          const ptx_operand *el = &f->opnds[k + e];
          if (el->kind != PTX_OPND_REG) continue;
          if (dst && o->kind == PTX_OPND_VEC) { if (nw < 16) wr[nw++] = el->u.reg; }
          else READ(el->u.reg);
        }
        k += 1 + ne;
      }
#undef READ
      for (uint32_t w = 0; w < nw; w++)
        if (wr[w] < nr) {
          stamp[wr[w]] = gen;
          dep[wr[w]] = d;
        }
      if (d > chain) chain = d;
    }
    B->chain = chain;
  }
  free(dep);
  free(stamp);
  return 0;
}

int ptx_cfg_build(ptx_module *m, ptx_error *err) {
  if (!m) return -1;
  /* Callers (feat_static per kernel) call this once per kernel: without the
     flag a module of N kernels paid N scans of its functions. */
  if (m->cfg_built) return 0;
  for (uint32_t i = 0; i < m->nfuncs; i++) {
    ptx_func *f = &m->funcs[i];
    if (!f->has_body || f->cfg) continue;
    f->cfg = cfg_of(m->arena, f);
    if (f->cfg && block_chains(f, f->cfg)) f->cfg = NULL;
    if (!f->cfg) {
      if (err) {
        err->line = f->line;
        err->col = 1;
        snprintf(err->msg, sizeof err->msg,
                 "%s:%u:1: error: out of memory building the CFG of %s",
                 m->filename ? m->filename : "<ptx>", f->line,
                 f->name ? f->name : "?");
      }
      return -1;
    }
  }
  m->cfg_built = 1;
  return 0;
}
