/*
 * fm_fit.c -- feature models: the dynamic features of a kernel's launch as
 * functions of the launch (grid, block, dynamic shared bytes, the scalar
 * arguments the kernel reads), fitted from the launches of that kernel at
 * a few sizes, evaluated in well under a microsecond per feature.
 *
 * Why these forms.  A kernel's instruction counts are sums over threads of
 * per-thread trip counts; for the suite's kernels a thread's work is a
 * polynomial of low degree in the problem size (an argument) and the
 * launch shape, and the grid is chosen from the size: gemm's FMA count is
 * threads * n, a stencil's threads * 9, a tree reduction's threads *
 * log2(block).  So each count is first tried as an exact polynomial: one
 * or two monomials of degree <= 3 in the launch's quantities (fm_int.h)
 * whose least-squares coefficients reproduce every training launch to
 * 1e-7 relative, with more distinct launches than terms so that the fit
 * is a check and not an interpolation.  An exact form extrapolates
 * exactly as far as the polynomial holds (piecewise forms break at the
 * pieces' seams, e.g. a loop bound clamped by min(n, tile)).  A count
 * that no such polynomial reproduces (sampled launches, data-dependent
 * work, boundary effects) gets a product of real powers fitted by least
 * squares on log(count) -- the usual scaling law, which is good at
 * interpolation and moderate extrapolation -- or, when it is zero at some
 * launches, which log space cannot take, the least-squares monomial.
 * Among candidates the fewest terms and the lowest degree win, then the
 * quantity order of pref[] (threads first: most counts are per thread).
 *
 * Counts that need more terms: a kernel whose work is set by the
 * difference of two arguments (lu's pivot step k: the trailing matrix has
 * (n-k-1)^2 elements, 2n^2 - 4nk + 2k^2 - 4n + 4k + 2 as a polynomial)
 * has no one- or two-term form.  Such a count is tried next on the full
 * basis of degree <= 2 in the arguments (and template variables) plus the
 * launch's threads, CTAs and warps (fit_basis): least squares, kept only
 * when it reproduces every training launch to the exact tolerance with at
 * least FM_BASIS_CHECK more distinct launches than independent columns,
 * so the fit is checked on points it was not forced through.
 *
 * Quantities that are constant over the training launches are left out
 * (their effect is in the coefficient), and so is any quantity
 * proportional to an earlier one (square grids make grid_x and grid_y the
 * same column).  A new launch that moves such a quantity is answered from
 * the others and flagged FM_EXTRAPOLATED by the range check.
 *
 * Validation (fm_validate) leaves one size out at a time; the error of
 * the class.* and mem.* features decides whether the kernel is modelled
 * at all (FM_UNRELIABLE otherwise: bfs's work depends on the graph, not
 * on the launch).
 */
#include "model/fm_int.h"
#include "model/rf_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Relative tolerance of an exact fit. */
#define FM_EXACT_TOL 1e-7
/* Distinct launches an exact two-term candidate is screened on first. */
#define FM_SCREEN 6
/* Fitted quantities at most (the candidates grow with the cube).  10 left
   the block dimensions out of nn_layer's matmul, whose 7 arguments come
   first: its K/TILE tiles per thread need ctas*block_x*K (16.9 % held-out
   error with 10, 5.8 % with 14; no other suite kernel has that many, and
   none of their figures moved). */
#define FM_MAX_ACTIVE 14
/* Distinct launches a two-term exact fit needs: 3 leaves it one point to
   check itself on, and with 3 training sizes some pass by chance (hotspot:
   1.0833*threads + 42.67*ctas, 17 % off at the held-out size).  Requiring
   4 was measured on the suite dataset: 34 instead of 33 kernels within
   5 %, but atax, mvt, hotspot, stencil3d, nbody lose their exact forms and
   transpose's time error rises from 0.0 to 12 %; so 3. */
#define FM_TWO_TERM_MIN 3
/* The full basis (fit_basis): at most this many argument variables, and
   this many distinct launches beyond its independent columns. */
#define FM_BASIS_VARS 4
#define FM_BASIS_CHECK 3

static const char *const launch_names[FM_L_N] = {
    "launch.grid_x", "launch.grid_y", "launch.grid_z", "launch.block_x", "launch.block_y",
    "launch.block_z", "launch.ctas", "launch.threads", "launch.shared_bytes"};

double fm_rel_error(double pred, double truth) {
  double d = fabs(truth) > 1 ? fabs(truth) : 1;
  return fabs(pred - truth) / d;
}

void fm_free(fm_model *m) {
  if (!m) return;
  for (size_t i = 0; i < m->nout; i++) rf__free(m->out[i].name);
  rf__free(m->out);
  rf__free(m->q);
  rf__free(m->arg_param);
  rf__free(m->inst_t);
  rf__free(m->inst_b);
  rf__free(m->kernel);
  rf__free(m->app);
  rf__free(m);
}

/* The instances of a template model's training rows and each one's block
   (m->inst_*): left empty when an instance ran with two blocks, or when
   there are more than FM_MAX_INST.  tcol[t]: the column of tpl.t.  -1 out
   of memory. */
static int instances(fm_model *m, const fm_rows *r, const uint8_t *use, const long *tcol) {
  size_t cap = 0;
  for (size_t i = 0; i < r->n; i++) {
    if (use && !use[i]) continue;
    double tv[FM_MAX_TPL];
    for (size_t t = 0; t < m->ntpl; t++) tv[t] = r->x[i * r->nf + (size_t)tcol[t]];
    size_t k = 0;
    for (; k < m->ninst; k++)
      if (!memcmp(m->inst_t + k * m->ntpl, tv, m->ntpl * sizeof *tv)) break;
    const uint32_t *b = r->block + 3 * i;
    if (k < m->ninst) {
      if (memcmp(m->inst_b + 3 * k, b, 3 * sizeof *b)) goto free_block; /* two blocks: free */
      continue;
    }
    if (m->ninst == FM_MAX_INST) goto free_block;
    if (m->ninst == cap) {
      size_t nc = cap ? 2 * cap : 16;
      double *nt = rf__realloc(m->inst_t, nc * m->ntpl * sizeof *nt);
      if (!nt) return rf__nomem();
      m->inst_t = nt;
      uint32_t *nb = rf__realloc(m->inst_b, nc * 3 * sizeof *nb);
      if (!nb) return rf__nomem();
      m->inst_b = nb;
      cap = nc;
    }
    memcpy(m->inst_t + m->ninst * m->ntpl, tv, m->ntpl * sizeof *tv);
    memcpy(m->inst_b + 3 * m->ninst, b, 3 * sizeof *b);
    m->ninst++;
  }
  return 0;
free_block:
  rf__free(m->inst_t);
  rf__free(m->inst_b);
  m->inst_t = NULL;
  m->inst_b = NULL;
  m->ninst = 0;
  return 0;
}

unsigned fm__block_check(const fm_model *m, const fm_launch *l) {
  if (!m->ninst || !l->targs || l->ntargs != m->ntpl) return 0;
  for (size_t k = 0; k < m->ninst; k++)
    if (!memcmp(m->inst_t + k * m->ntpl, l->targs, m->ntpl * sizeof *l->targs))
      return memcmp(m->inst_b + 3 * k, l->block, 3 * sizeof *l->block)
                 ? FM_OTHER_BLOCK | FM_EXTRAPOLATED : 0;
  /* an instance nobody ran: each dimension constant over the instances, or
     equal to one template variable in every one of them; else unknown */
  for (int d = 0; d < 3; d++) {
    int constant = 1;
    for (size_t k = 1; k < m->ninst; k++) constant &= m->inst_b[3 * k + d] == m->inst_b[d];
    if (constant) {
      if (l->block[d] != m->inst_b[d]) return FM_OTHER_BLOCK | FM_EXTRAPOLATED;
      continue;
    }
    size_t v = 0;
    for (; v < m->ntpl; v++) {
      size_t k = 0;
      while (k < m->ninst && (double)m->inst_b[3 * k + d] == m->inst_t[k * m->ntpl + v]) k++;
      if (k == m->ninst) break;
    }
    if (v == m->ntpl || (double)l->block[d] != l->targs[v]) return FM_OTHER_BLOCK | FM_EXTRAPOLATED;
  }
  return 0;
}

void fm__index(fm_model *m) {
  m->warp_out = -1;
  for (size_t i = 0; i < m->nout; i++) {
    m->out[i].is_class = !strncmp(m->out[i].name, "class.", 6);
    if (!strcmp(m->out[i].name, "ctrl.warp_insns")) m->warp_out = (long)i;
  }
}

int fm__quantities(const fm_model *m, const fm_launch *l, double *q) {
  for (int i = 0; i < 3; i++)
    if (!l->grid[i] || !l->block[i])
      return rf__err("%s: a zero grid or block dimension", m->kernel);
  double ctas = (double)l->grid[0] * l->grid[1] * l->grid[2];
  double b = (double)l->block[0] * l->block[1] * l->block[2];
  q[FM_Q_GX] = l->grid[0], q[FM_Q_GY] = l->grid[1], q[FM_Q_GZ] = l->grid[2];
  q[FM_Q_BX] = l->block[0], q[FM_Q_BY] = l->block[1], q[FM_Q_BZ] = l->block[2];
  q[FM_Q_SHMEM] = (double)l->shmem;
  q[FM_Q_CTAS] = ctas;
  q[FM_Q_BTHREADS] = b;
  q[FM_Q_THREADS] = ctas * b;
  q[FM_Q_WARPS] = ctas * ceil(b / 32);
  q[FM_Q_LOG2B] = log2(b);
  for (size_t a = 0; a < m->nargs; a++) {
    uint32_t p = m->arg_param[a];
    if (!l->args || p >= l->nargs)
      return rf__err("%s: reads argument %u (parameter %u), the launch passes %zu", m->kernel, p,
                     p, l->args ? l->nargs : 0);
    if (!isfinite(l->args[p]))
      return rf__err("%s: argument %u is not a finite number", m->kernel, p);
    q[FM_NQ_LAUNCH + a] = l->args[p];
  }
  if (l->ntargs != m->ntpl || (m->ntpl && !l->targs))
    return rf__err("%s: %s %zu template argument%s, the launch gives %zu", m->kernel,
                   m->ntpl ? "a template of" : "not a template: takes", m->ntpl,
                   m->ntpl == 1 ? "" : "s", l->targs ? l->ntargs : 0);
  for (size_t t = 0; t < m->ntpl; t++) {
    if (!isfinite(l->targs[t]))
      return rf__err("%s: template argument T%zu is not a finite number", m->kernel, t);
    q[FM_NQ_LAUNCH + m->nargs + t] = l->targs[t];
  }
  for (size_t i = FM_NQ_LAUNCH + m->nargs + m->ntpl; i < m->nq; i++) /* differences */
    q[i] = q[FM_NQ_LAUNCH + (m->q[i].a >> 8)] - q[FM_NQ_LAUNCH + (m->q[i].a & 0xff)];
  return 0;
}

/* Integer power, e in [0, 3] mostly; any integer e >= 0. */
static double ipow(double x, int e) {
  double r = 1;
  while (e-- > 0) r *= x;
  return r;
}

static double term_value(const fm_term *t, const double *q) {
  double v = t->coef;
  for (uint32_t k = 0; k < t->nf; k++) v *= ipow(q[t->q[k]], (int)t->e[k]);
  return v;
}

int fm_eval(const fm_model *m, const fm_launch *l, double *out, unsigned *flags) {
  double qq[FM_NQ_LAUNCH + FM_MAX_ARGS + FM_MAX_TPL + FM_MAX_DIFF]; /* nq <= this: fit and load
                                                                     keep to it */
  if (fm__quantities(m, l, qq)) return -1;
  unsigned fl = 0;
  for (size_t i = 0; i < m->nq; i++) {
    const fm_qty *Q = &m->q[i];
    if (!Q->used) continue;
    double slack = 1e-9 * (fabs(Q->lo) > fabs(Q->hi) ? fabs(Q->lo) : fabs(Q->hi));
    if (qq[i] < Q->lo - slack || qq[i] > Q->hi + slack) fl |= FM_EXTRAPOLATED;
  }
  fl |= fm__block_check(m, l);
  double cls = 0;
  for (size_t i = 0; i < m->nout; i++) {
    const fm_out *o = &m->out[i];
    double v = 0;
    switch (o->kind) {
      case FM_O_CONST: v = o->t[0].coef; break;
      case FM_O_EXACT: case FM_O_LINEAR:
        for (uint32_t k = 0; k < o->nterms; k++) v += term_value(&o->t[k], qq);
        break;
      case FM_O_POWER: {
        double s = o->t[0].coef;
        for (uint32_t k = 0; k < o->t[0].nf; k++) {
          double x = qq[o->t[0].q[k]];
          s = x > 0 ? s + o->t[0].e[k] * log(x) : -INFINITY;
        }
        v = exp(s);
        break;
      }
      case FM_O_LAUNCH:
        switch (o->aux) {
          case FM_L_GX: case FM_L_GY: case FM_L_GZ: v = qq[FM_Q_GX + o->aux]; break;
          case FM_L_BX: case FM_L_BY: case FM_L_BZ: v = qq[FM_Q_BX + o->aux - FM_L_BX]; break;
          case FM_L_CTAS: v = qq[FM_Q_CTAS]; break;
          case FM_L_THREADS: v = qq[FM_Q_THREADS]; break;
          default: v = qq[FM_Q_SHMEM]; break;
        }
        break;
      case FM_O_ARG: v = qq[FM_NQ_LAUNCH + o->aux]; break;
      default: v = 0; break; /* FM_O_LANES: below */
    }
    if (o->kind <= FM_O_LINEAR) {
      /* counts: never negative, never NaN or infinite (a power of a
         quantity that is 0 at this launch gives 0) */
      if (!isfinite(v)) v = 0, fl |= FM_EXTRAPOLATED;
      else if (v < 0) v = 0;
    }
    if (o->is_class) cls += v;
    out[i] = v;
  }
  for (size_t i = 0; i < m->nout; i++)
    if (m->out[i].kind == FM_O_LANES) {
      double w = m->warp_out >= 0 ? out[m->warp_out] : 0;
      double r = w > 0 ? cls / (32 * w) : 0;
      out[i] = r > 1 ? 1 : r;
    }
  if (!(m->heldout <= m->limit)) fl |= FM_UNRELIABLE;
  if (flags) *flags = fl;
  return 0;
}

/* ------------------------------------------------------------ fitting -- */

/* Quantities in the order ties are broken in (most counts are per thread). */
static const int pref_launch[] = {FM_Q_THREADS, FM_Q_CTAS,  FM_Q_BTHREADS, FM_Q_WARPS,
                                  FM_Q_GX,      FM_Q_GY,    FM_Q_GZ,       FM_Q_BX,
                                  FM_Q_BY,      FM_Q_BZ,    FM_Q_SHMEM,    FM_Q_LOG2B};

typedef struct mono {
  uint8_t n, deg;
  uint8_t q[FM_MAX_FACTORS]; /* active-quantity indices */
  uint8_t e[FM_MAX_FACTORS];
} mono;

/* The fitting workspace of one model: distinct training points. */
typedef struct fitws {
  size_t nd;          /* distinct points (launch configurations + arguments) */
  size_t nq;
  double *qv;         /* nd*nq quantities */
  size_t *pt_of_row;  /* per used row: its point */
  size_t *rows;       /* used rows */
  size_t nrows;
  size_t na;          /* active quantities */
  int act[FM_MAX_ACTIVE];   /* their model quantity indices */
  int actpos[FM_MAX_ACTIVE];/* all > 0 at every point (log space usable) */
  size_t nm;
  mono *m;            /* monomials over the active quantities, by degree */
  double *mv;         /* nm*nd monomial values */
} fitws;

static double qv_at(const fitws *w, size_t p, int qi) { return w->qv[p * w->nq + (size_t)qi]; }

/* Is column a (over points) constant, or proportional to column b? */
static int col_const(const fitws *w, int a) {
  for (size_t p = 1; p < w->nd; p++)
    if (qv_at(w, p, a) != qv_at(w, 0, a)) return 0;
  return 1;
}
static int col_prop(const fitws *w, int a, int b) {
  /* a = k*b at every point, k fixed */
  double k = NAN;
  for (size_t p = 0; p < w->nd; p++) {
    double x = qv_at(w, p, a), y = qv_at(w, p, b);
    if (y == 0 || x == 0) {
      if (x != y) return 0;
      continue;
    }
    double r = x / y;
    if (isnan(k)) k = r;
    else if (fabs(r - k) > 1e-12 * fabs(k)) return 0;
  }
  return 1;
}

static void add_mono(fitws *w, const uint8_t *q, const uint8_t *e, int n) {
  mono *mo = &w->m[w->nm++];
  memset(mo, 0, sizeof *mo);
  mo->n = (uint8_t)n;
  for (int k = 0; k < n; k++) mo->q[k] = q[k], mo->e[k] = e[k], mo->deg = (uint8_t)(mo->deg + e[k]);
}

static int cmp_mono(const void *a, const void *b) {
  const mono *x = a, *y = b;
  if (x->deg != y->deg) return x->deg - y->deg;
  for (int k = 0; k < FM_MAX_FACTORS; k++) {
    if (x->q[k] != y->q[k]) return x->q[k] - y->q[k];
    if (x->e[k] != y->e[k]) return y->e[k] - x->e[k];
  }
  return 0;
}

static void ws_free(fitws *w) {
  rf__free(w->qv);
  rf__free(w->pt_of_row);
  rf__free(w->rows);
  rf__free(w->m);
  rf__free(w->mv);
  memset(w, 0, sizeof *w);
}

/* Value of row i's feature column j: NaN reads 0 (a count that did not
   happen). */
static double yval(const fm_rows *r, size_t i, size_t j) {
  double v = r->x[i * r->nf + j];
  return isfinite(v) ? v : 0;
}

/* Build the workspace: quantities per used row, distinct points, active
   quantities, monomials. */
static int ws_build(fitws *w, const fm_model *M, const fm_rows *r, const uint8_t *use,
                    const long *argcol) {
  memset(w, 0, sizeof *w);
  w->nq = M->nq;
  size_t n = 0;
  for (size_t i = 0; i < r->n; i++) n += !use || use[i];
  w->rows = rf__mallocn(n ? n : 1, sizeof *w->rows);
  w->pt_of_row = rf__mallocn(n ? n : 1, sizeof *w->pt_of_row);
  w->qv = rf__mallocn(n ? n : 1, w->nq * sizeof(double));
  double *qrow = rf__mallocn(w->nq, sizeof(double));
  double *args = rf__mallocn(FM_MAX_PARAM, sizeof(double));
  if (!w->rows || !w->pt_of_row || !w->qv || !qrow || !args) {
    rf__free(qrow);
    rf__free(args);
    return rf__nomem();
  }
  for (size_t i = 0; i < r->n; i++) {
    if (use && !use[i]) continue;
    fm_launch l;
    memset(&l, 0, sizeof l);
    memcpy(l.grid, r->grid + 3 * i, sizeof l.grid);
    memcpy(l.block, r->block + 3 * i, sizeof l.block);
    l.shmem = r->shmem[i];
    for (size_t a = 0; a < M->nargs; a++) args[M->arg_param[a]] = r->x[i * r->nf + (size_t)argcol[a]];
    l.args = args;
    l.nargs = FM_MAX_PARAM;
    double targs[FM_MAX_TPL];
    for (size_t t = 0; t < M->ntpl; t++) targs[t] = r->x[i * r->nf + (size_t)argcol[M->nargs + t]];
    l.targs = targs;
    l.ntargs = M->ntpl;
    if (fm__quantities(M, &l, qrow)) {
      rf__free(qrow);
      rf__free(args);
      return -1;
    }
    size_t p;
    for (p = 0; p < w->nd; p++)
      if (!memcmp(w->qv + p * w->nq, qrow, w->nq * sizeof(double))) break;
    if (p == w->nd) memcpy(w->qv + w->nd++ * w->nq, qrow, w->nq * sizeof(double));
    w->rows[w->nrows] = i;
    w->pt_of_row[w->nrows++] = p;
  }
  rf__free(qrow);
  rf__free(args);
  /* active quantities, in preference order: launch ones first by pref,
     arguments and template variables right after the per-thread ones */
  int order[FM_NQ_LAUNCH + FM_MAX_ARGS + FM_MAX_TPL];
  size_t no = 0;
  for (int k = 0; k < 4; k++) order[no++] = pref_launch[k];
  for (size_t a = 0; a < M->nargs + M->ntpl; a++) order[no++] = (int)(FM_NQ_LAUNCH + a);
  for (int k = 4; k < FM_NQ_LAUNCH; k++) order[no++] = pref_launch[k];
  for (size_t k = 0; k < no && w->na < FM_MAX_ACTIVE; k++) {
    int qi = order[k];
    if (col_const(w, qi)) continue;
    int dup = 0;
    for (size_t j = 0; j < w->na && !dup; j++) dup = col_prop(w, qi, w->act[j]);
    if (dup) continue;
    int pos = 1;
    for (size_t p = 0; p < w->nd; p++) pos &= qv_at(w, p, qi) > 0;
    w->actpos[w->na] = pos;
    w->act[w->na++] = qi;
  }
  /* monomials of degree <= 3 over the active quantities */
  size_t A = w->na, cap = 1 + A + A * A + A * A * A;
  w->m = rf__mallocn(cap, sizeof *w->m);
  if (!w->m) return rf__nomem();
  uint8_t q[3], e[3];
  add_mono(w, q, e, 0);
  for (size_t i = 0; i < A; i++) {
    for (int d = 1; d <= 3; d++) {
      q[0] = (uint8_t)i, e[0] = (uint8_t)d;
      add_mono(w, q, e, 1);
    }
    for (size_t j = i + 1; j < A; j++) {
      q[0] = (uint8_t)i, q[1] = (uint8_t)j;
      e[0] = 1, e[1] = 1;
      add_mono(w, q, e, 2);
      e[0] = 2, e[1] = 1;
      add_mono(w, q, e, 2);
      e[0] = 1, e[1] = 2;
      add_mono(w, q, e, 2);
      for (size_t k = j + 1; k < A; k++) {
        q[2] = (uint8_t)k;
        e[0] = e[1] = e[2] = 1;
        add_mono(w, q, e, 3);
      }
    }
  }
  qsort(w->m, w->nm, sizeof *w->m, cmp_mono);
  w->mv = rf__mallocn(w->nm ? w->nm : 1, w->nd * sizeof(double));
  if (!w->mv) return rf__nomem();
  for (size_t k = 0; k < w->nm; k++)
    for (size_t p = 0; p < w->nd; p++) {
      double v = 1;
      for (int f = 0; f < w->m[k].n; f++) v *= ipow(qv_at(w, p, w->act[w->m[k].q[f]]), w->m[k].e[f]);
      w->mv[k * w->nd + p] = v;
    }
  return 0;
}

static void set_term_mono(const fitws *w, const mono *mo, double c, fm_term *t) {
  memset(t, 0, sizeof *t);
  t->coef = c;
  t->nf = mo->n;
  for (int f = 0; f < mo->n; f++) t->q[f] = (uint32_t)w->act[mo->q[f]], t->e[f] = mo->e[f];
}

/* Least squares c1*a + c2*b ~ y over the points idx[0..k); 0 when singular. */
static int solve2(const double *a, const double *b, const double *y, const size_t *idx, size_t k,
                  double *c1, double *c2) {
  double saa = 0, sab = 0, sbb = 0, say = 0, sby = 0;
  for (size_t t = 0; t < k; t++) {
    size_t p = idx[t];
    saa += a[p] * a[p], sab += a[p] * b[p], sbb += b[p] * b[p];
    say += a[p] * y[p], sby += b[p] * y[p];
  }
  double det = saa * sbb - sab * sab;
  if (!(fabs(det) > 1e-12 * saa * sbb) || !isfinite(det)) return 0;
  *c1 = (say * sbb - sby * sab) / det;
  *c2 = (sby * saa - say * sab) / det;
  return isfinite(*c1) && isfinite(*c2);
}

static int exact_at(const double *y, const double *a, double c1, const double *b, double c2,
                    const size_t *idx, size_t k, double tol) {
  for (size_t t = 0; t < k; t++) {
    size_t p = idx[t];
    double v = c1 * a[p] + (b ? c2 * b[p] : 0);
    if (!(fabs(v - y[p]) <= tol)) return 0;
  }
  return 1;
}

/* A column of a basis: a product of at most 2 model quantities (-1 none)
   with their exponents. */
typedef struct bcol {
  int q[2];
  int e[2];
} bcol;

/* Value of basis column C at point p. */
static double bcol_at(const fitws *w, const bcol *C, size_t p) {
  double x = 1;
  for (int f = 0; f < 2; f++)
    if (C->q[f] >= 0) x *= ipow(qv_at(w, p, C->q[f]), C->e[f]);
  return x;
}

static double term_at(const fitws *w, const fm_term *t, size_t p) {
  double x = t->coef;
  for (uint32_t f = 0; f < t->nf; f++) x *= ipow(qv_at(w, p, (int)t->q[f]), (int)t->e[f]);
  return x;
}

/* Does every argument-like quantity (argument, template variable,
   difference) of form t take at least its degree + 2 distinct values over
   the points: one more than its polynomial needs, so that the fit is
   checked along each variable (srad's three sizes share n within each:
   a quadratic in n through three values is an interpolation)? */
static int enough_values(const fitws *w, const fm_out *t) {
  for (uint32_t k = 0; k < t->nterms; k++)
    for (uint32_t f = 0; f < t->t[k].nf; f++) {
      int qi = (int)t->t[k].q[f];
      if (qi < FM_NQ_LAUNCH) continue;
      int deg = 0;
      for (uint32_t k2 = 0; k2 < t->nterms; k2++)
        for (uint32_t f2 = 0; f2 < t->t[k2].nf; f2++)
          if ((int)t->t[k2].q[f2] == qi && (int)t->t[k2].e[f2] > deg) deg = (int)t->t[k2].e[f2];
      size_t need = (size_t)deg + 2, nv = 0;
      double seen[8];
      for (size_t p = 0; p < w->nd && nv < need; p++) {
        double v = qv_at(w, p, qi);
        size_t j;
        for (j = 0; j < nv; j++)
          if (seen[j] == v) break;
        if (j == nv) seen[nv++] = v;
      }
      if (nv < need) return 0;
    }
  return 1;
}

/* Rows of an nd x r matrix (row-major) compared for distinct_rows. */
static int cmp_row(const void *a, const void *b, void *ctx) {
  const double *m = ((const double *const *)ctx)[0];
  size_t r = (size_t)((const double *const *)ctx)[1][0];
  const double *x = m + *(const size_t *)a * r, *y = m + *(const size_t *)b * r;
  for (size_t k = 0; k < r; k++)
    if (x[k] != y[k]) return x[k] < y[k] ? -1 : 1;
  return 0;
}

/* Distinct rows of the nd x r matrix m (row-major); idx: nd scratch. */
static size_t distinct_rows(const double *m, size_t nd, size_t r, size_t *idx) {
  double rr = (double)r;
  const double *ctx[2] = {m, &rr};
  for (size_t p = 0; p < nd; p++) idx[p] = p;
  qsort_r(idx, nd, sizeof *idx, cmp_row, ctx);
  size_t n = nd ? 1 : 0;
  for (size_t p = 1; p < nd; p++) n += cmp_row(&idx[p - 1], &idx[p], ctx) != 0;
  return n;
}

/*
 * Least squares of y on the columns cols[c] with use[c] over the points:
 * modified Gram-Schmidt on the columns scaled to a largest value of 1,
 * twice for stability, dropping a column that the earlier ones already
 * span (square grids, threads = n^2); coefficients by back substitution.
 * The non-zero terms into *t (kind EXACT); 1 when it reproduces every
 * point p to FM_EXACT_TOL * max(|y[p]|, 1) with at least FM_BASIS_CHECK
 * points more than independent columns -- points distinct in those
 * columns: srad's launches differ in a float argument, but threads, CTAs
 * and warps take one value per size, three in a fold) -- or without that
 * check when check is 0 -- else 0.  ws: nc*nd + nc*nc + 2*nc doubles.
 */
static int basis_solve(const fitws *w, const double *y, const bcol *cols, const uint8_t *use,
                       size_t nc, double *ws, int check, fm_out *t) {
  size_t nd = w->nd, r = 0;
  double *Q = ws, *R = Q + nc * nd, *sc = R + nc * nc, *keep = sc + nc;
  for (size_t c = 0; c < nc; c++) {
    if (!use[c]) continue;
    double *v = Q + r * nd, mx = 0;
    for (size_t p = 0; p < nd; p++) {
      v[p] = bcol_at(w, &cols[c], p);
      mx = fabs(v[p]) > mx ? fabs(v[p]) : mx;
    }
    if (!(mx > 0) || !isfinite(mx)) continue;
    double n0 = 0;
    for (size_t p = 0; p < nd; p++) v[p] /= mx, n0 += v[p] * v[p];
    double *Rc = R + r * nc; /* column r of R: Rc[k] = R[k][r] */
    memset(Rc, 0, nc * sizeof *Rc);
    for (int pass = 0; pass < 2; pass++)
      for (size_t k = 0; k < r; k++) {
        const double *u = Q + k * nd;
        double d = 0;
        for (size_t p = 0; p < nd; p++) d += u[p] * v[p];
        for (size_t p = 0; p < nd; p++) v[p] -= d * u[p];
        Rc[k] += d;
      }
    double n1 = 0;
    for (size_t p = 0; p < nd; p++) n1 += v[p] * v[p];
    if (!(n1 > 1e-18 * n0)) continue; /* spanned by the earlier columns */
    n1 = sqrt(n1);
    for (size_t p = 0; p < nd; p++) v[p] /= n1;
    Rc[r] = n1;
    sc[r] = mx;
    keep[r++] = (double)c;
  }
  if (r == 0 || r > FM_MAX_TERMS || (check && r + FM_BASIS_CHECK > nd)) return 0;
  if (check) {
    double *m = rf__mallocn(nd * r, sizeof(double));
    size_t *idx = rf__mallocn(nd, sizeof(size_t));
    size_t de = 0;
    if (m && idx) {
      for (size_t p = 0; p < nd; p++)
        for (size_t k = 0; k < r; k++) m[p * r + k] = bcol_at(w, &cols[(size_t)keep[k]], p);
      de = distinct_rows(m, nd, r, idx);
    }
    rf__free(m);
    rf__free(idx);
    if (r + FM_BASIS_CHECK > de) return 0;
  }
  double b[FM_MAX_TERMS];
  for (size_t k = 0; k < r; k++) {
    double d = 0;
    for (size_t p = 0; p < nd; p++) d += Q[k * nd + p] * y[p];
    b[k] = d;
  }
  for (size_t k = r; k-- > 0;) {
    for (size_t j = k + 1; j < r; j++) b[k] -= R[j * nc + k] * b[j];
    b[k] /= R[k * nc + k];
    if (!isfinite(b[k])) return 0;
  }
  memset(t, 0, sizeof *t);
  t->kind = FM_O_EXACT;
  for (size_t k = 0; k < r; k++) {
    double coef = b[k] / sc[k];
    if (coef == 0 || !isfinite(coef)) continue;
    fm_term *T = &t->t[t->nterms++];
    T->coef = coef;
    const bcol *C = &cols[(size_t)keep[k]];
    for (int f = 0; f < 2; f++)
      if (C->q[f] >= 0) T->q[T->nf] = (uint32_t)C->q[f], T->e[T->nf++] = C->e[f];
  }
  if (t->nterms == 0) return 0;
  /* the check, computed as fm_eval computes it */
  for (size_t p = 0; p < nd; p++) {
    double v = 0;
    for (uint32_t k = 0; k < t->nterms; k++) v += term_at(w, &t->t[k], p);
    if (!(fabs(v - y[p]) <= FM_EXACT_TOL * (fabs(y[p]) > 1 ? fabs(y[p]) : 1))) return 0;
  }
  return 1;
}

/* use[c] = 1 for the columns of t's terms, 0 for the others. */
static void mark_use(const bcol *cols, size_t nc, const fm_out *t, uint8_t *use) {
  memset(use, 0, nc);
  for (uint32_t k = 0; k < t->nterms; k++)
    for (size_t c = 0; c < nc; c++) {
      uint32_t nf = 0;
      int same = 1;
      for (int f = 0; f < 2; f++)
        if (cols[c].q[f] >= 0) {
          same &= nf < t->t[k].nf && (int)t->t[k].q[nf] == cols[c].q[f] &&
                  (int)t->t[k].e[nf] == cols[c].e[f];
          nf++;
        }
      if (same && nf == t->t[k].nf) use[c] = 1;
    }
}

/* Fit y on cols[0..nc) (basis_solve), then drop terms while the rest still
   reproduces every point (the smallest contribution tried first): what the
   least squares spreads over columns that do not matter (1e-11 * d^2) is
   gone before the checks, so that a form exact only through its launch
   quantities meets the distinct-rows check as that, and no noise term
   grows when a launch extrapolates.  1 (*o set) when exact and checked
   (basis_solve's check, enough_values). */
static int basis_try(const fitws *w, const double *y, const bcol *cols, size_t nc, double *ws,
                     fm_out *o) {
  uint8_t use[FM_MAX_TERMS + 8];
  if (nc > sizeof use) return 0;
  memset(use, 1, nc);
  fm_out t, t2;
  if (!basis_solve(w, y, cols, use, nc, ws, 0, &t)) return 0;
  mark_use(cols, nc, &t, use);
  for (int improved = 1; improved;) {
    improved = 0;
    double contrib[FM_MAX_TERMS + 8];
    for (size_t c = 0; c < nc; c++) {
      contrib[c] = 0;
      if (!use[c]) continue;
      for (size_t p = 0; p < w->nd; p++) contrib[c] = fmax(contrib[c], fabs(bcol_at(w, &cols[c], p)));
      for (uint32_t k = 0; k < t.nterms; k++) { /* times its coefficient */
        uint8_t one[FM_MAX_TERMS + 8];
        fm_out tk = t;
        tk.nterms = 1;
        tk.t[0] = t.t[k];
        mark_use(cols, nc, &tk, one);
        if (one[c]) contrib[c] *= fabs(t.t[k].coef);
      }
    }
    for (size_t tries = 0; tries < nc && !improved; tries++) {
      size_t best = nc;
      for (size_t c = 0; c < nc; c++)
        if (use[c] && contrib[c] >= 0 && (best == nc || contrib[c] < contrib[best])) best = c;
      if (best == nc) break;
      contrib[best] = -1; /* tried */
      use[best] = 0;
      if (basis_solve(w, y, cols, use, nc, ws, 0, &t2)) {
        t = t2;
        mark_use(cols, nc, &t, use);
        improved = 1;
      } else {
        use[best] = 1;
      }
    }
  }
  if (!basis_solve(w, y, cols, use, nc, ws, 1, &t) || !enough_values(w, &t)) return 0;
  memcpy(o->t, t.t, sizeof o->t);
  o->nterms = t.nterms;
  o->kind = FM_O_EXACT;
  return 1;
}

/*
 * Counts no one- or two-term polynomial reproduces, on fuller bases, each
 * tried in turn (basis_try):
 *  1. degree <= 2 in the argument quantities (arguments and template
 *     variables, at most FM_BASIS_VARS of the active ones);
 *  2. for each difference of two arguments d (FM_Q_DIFF): 1, d, d^2 and
 *     the launch's threads, CTAs and warps -- the work of lu's step k on
 *     the trailing (n-k-1)^2 matrix, of which (1) cannot be checked on
 *     three sizes (three values of n) while d takes n values per size.
 * Launch quantities stay out of (1): with them three sizes fit nw's tiles
 * "exactly" by a form that is wrong at the fourth (measured: nw's time
 * error 29 -> 61 %).  1 (o set) or 0.
 */
static int fit_basis(const fitws *w, const fm_model *M, const double *y, fm_out *o) {
  size_t nd = w->nd;
  if (nd < FM_BASIS_CHECK + 2) return 0;
  int av[FM_BASIS_VARS], nav = 0, lv[3], nlv = 0;
  for (size_t i = 0; i < w->na; i++) {
    int qi = w->act[i];
    if (qi >= FM_NQ_LAUNCH && nav < FM_BASIS_VARS) av[nav++] = qi;
    else if (qi == FM_Q_THREADS || qi == FM_Q_CTAS || qi == FM_Q_WARPS) lv[nlv++] = qi;
  }
  if (nav == 0) return 0;
  bcol cols[FM_MAX_TERMS + 8];
  double *ws = rf__mallocn((FM_MAX_TERMS + 8) * (nd + FM_MAX_TERMS + 10), sizeof(double));
  if (!ws) return 0;
  int ok = 0;
  size_t nc = 0;
  cols[nc++] = (bcol){{-1, -1}, {0, 0}};
  for (int a = 0; a < nav; a++) cols[nc++] = (bcol){{av[a], -1}, {1, 0}};
  for (int a = 0; a < nav; a++)
    for (int b = a; b < nav; b++)
      cols[nc++] = a == b ? (bcol){{av[a], -1}, {2, 0}} : (bcol){{av[a], av[b]}, {1, 1}};
  ok = basis_try(w, y, cols, nc, ws, o);
  size_t d0 = FM_NQ_LAUNCH + M->nargs + M->ntpl;
  for (size_t d = d0; d < M->nq && !ok; d++) {
    if (col_const(w, (int)d)) continue;
    nc = 0;
    cols[nc++] = (bcol){{-1, -1}, {0, 0}};
    cols[nc++] = (bcol){{(int)d, -1}, {1, 0}};
    cols[nc++] = (bcol){{(int)d, -1}, {2, 0}};
    for (int l = 0; l < nlv; l++) cols[nc++] = (bcol){{lv[l], -1}, {1, 0}};
    ok = basis_try(w, y, cols, nc, ws, o);
  }
  rf__free(ws);
  return ok;
}

/*
 * Fit output o to the point values y[0..nd) (consistent: every row of a
 * point had the same value, so an exact form is possible).
 */
static void fit_one(const fitws *w, const fm_model *M, const double *y, int consistent,
                    fm_out *o) {
  size_t nd = w->nd;
  double ymax = 0, ymin = INFINITY, ysum = 0;
  for (size_t p = 0; p < nd; p++) {
    ymax = fabs(y[p]) > ymax ? fabs(y[p]) : ymax;
    ymin = y[p] < ymin ? y[p] : ymin;
    ysum += y[p];
  }
  int all_same = 1;
  for (size_t p = 1; p < nd; p++) all_same &= y[p] == y[0];
  o->nterms = 1;
  memset(o->t, 0, sizeof o->t);
  if (all_same && consistent) {
    o->kind = FM_O_CONST;
    o->t[0].coef = y[0];
    return;
  }
  double tol = FM_EXACT_TOL * ymax + 1e-9;
  size_t *all = rf__mallocn(nd, sizeof *all);
  if (!all) { /* out of memory: the mean, flagged by validation */
    o->kind = FM_O_CONST;
    o->t[0].coef = ysum / (double)nd;
    return;
  }
  for (size_t p = 0; p < nd; p++) all[p] = p;
  if (consistent && nd >= 2) {
    /* one monomial (not the constant: the values differ) */
    for (size_t k = 1; k < w->nm; k++) {
      const double *a = w->mv + k * nd;
      double saa = 0, say = 0;
      for (size_t p = 0; p < nd; p++) saa += a[p] * a[p], say += a[p] * y[p];
      if (!(saa > 0)) continue;
      double c = say / saa;
      if (exact_at(y, a, c, NULL, 0, all, nd, tol)) {
        o->kind = FM_O_EXACT;
        set_term_mono(w, &w->m[k], c, &o->t[0]);
        rf__free(all);
        return;
      }
    }
    /* two monomials, lowest (highest degree, degree sum) first */
    if (nd >= FM_TWO_TERM_MIN) {
      size_t scr[FM_SCREEN], ns = nd < FM_SCREEN ? nd : FM_SCREEN;
      for (size_t t = 0; t < ns; t++) scr[t] = t * (nd - 1) / (ns > 1 ? ns - 1 : 1);
      int best_hi = 99, best_sum = 99;
      size_t bk1 = 0, bk2 = 0;
      double bc1 = 0, bc2 = 0;
      for (size_t k2 = 1; k2 < w->nm; k2++) {
        int d2 = w->m[k2].deg;
        if (d2 > best_hi) break;
        for (size_t k1 = 0; k1 < k2; k1++) {
          int sum = d2 + w->m[k1].deg;
          if (d2 == best_hi && sum >= best_sum) break;
          const double *a = w->mv + k1 * nd, *b = w->mv + k2 * nd;
          double c1, c2;
          if (ns > 2 && ns < nd) {
            if (!solve2(a, b, y, scr, ns, &c1, &c2)) continue;
            if (!exact_at(y, a, c1, b, c2, scr, ns, tol)) continue;
          }
          if (!solve2(a, b, y, all, nd, &c1, &c2)) continue;
          if (!exact_at(y, a, c1, b, c2, all, nd, tol)) continue;
          if (c1 == 0 || c2 == 0) continue; /* a one-term fit in disguise */
          best_hi = d2, best_sum = sum, bk1 = k1, bk2 = k2, bc1 = c1, bc2 = c2;
          break;
        }
      }
      if (best_hi < 99) {
        o->kind = FM_O_EXACT;
        o->nterms = 2;
        set_term_mono(w, &w->m[bk1], bc1, &o->t[0]);
        set_term_mono(w, &w->m[bk2], bc2, &o->t[1]);
        rf__free(all);
        return;
      }
    }
    if (fit_basis(w, M, y, o)) {
      rf__free(all);
      return;
    }
  }
  rf__free(all);
  if (ymin > 0) {
    /* product of powers: log y = c + sum e log q over 0, 1 or 2 quantities */
    double ly[64], *lyp = nd <= 64 ? ly : rf__mallocn(nd, sizeof(double));
    if (!lyp) {
      o->kind = FM_O_CONST;
      o->t[0].coef = ysum / (double)nd;
      return;
    }
    double mean = 0;
    for (size_t p = 0; p < nd; p++) lyp[p] = log(y[p]), mean += lyp[p];
    mean /= (double)nd;
    double best = 0;
    for (size_t p = 0; p < nd; p++) best += (lyp[p] - mean) * (lyp[p] - mean);
    o->kind = FM_O_POWER;
    o->t[0].coef = mean;
    o->t[0].nf = 0;
    double best1 = INFINITY;
    int bi = -1;
    double bc = 0, be = 0;
    for (size_t i = 0; i < w->na; i++) {
      if (!w->actpos[i]) continue;
      double sx = 0, sy = 0, sxx = 0, sxy = 0;
      for (size_t p = 0; p < nd; p++) {
        double x = log(qv_at(w, p, w->act[i]));
        sx += x, sy += lyp[p], sxx += x * x, sxy += x * lyp[p];
      }
      double den = (double)nd * sxx - sx * sx;
      if (!(den > 1e-12)) continue;
      double e = ((double)nd * sxy - sx * sy) / den, c = (sy - e * sx) / (double)nd;
      if (!(fabs(e) <= FM_MAX_EXP)) continue;
      double sse = 0;
      for (size_t p = 0; p < nd; p++) {
        double r = lyp[p] - c - e * log(qv_at(w, p, w->act[i]));
        sse += r * r;
      }
      if (sse < best1 - 1e-12) best1 = sse, bi = (int)i, bc = c, be = e;
    }
    if (bi >= 0 && best1 < best) {
      best = best1;
      o->t[0].coef = bc;
      o->t[0].nf = 1;
      o->t[0].q[0] = (uint32_t)w->act[bi];
      o->t[0].e[0] = be;
    }
    if (nd >= 4 && bi >= 0) {
      /* two quantities, when they explain much more than one */
      double b2 = INFINITY, c2[3] = {0};
      int bj = -1, bk = -1;
      for (size_t i = 0; i < w->na; i++)
        for (size_t j = i + 1; j < w->na; j++) {
          if (!w->actpos[i] || !w->actpos[j]) continue;
          /* normal equations of [1, xi, xj] */
          double S[3][3] = {{0}}, T[3] = {0};
          for (size_t p = 0; p < nd; p++) {
            double v[3] = {1, log(qv_at(w, p, w->act[i])), log(qv_at(w, p, w->act[j]))};
            for (int a = 0; a < 3; a++) {
              T[a] += v[a] * lyp[p];
              for (int b = 0; b < 3; b++) S[a][b] += v[a] * v[b];
            }
          }
          double det = S[0][0] * (S[1][1] * S[2][2] - S[1][2] * S[2][1]) -
                       S[0][1] * (S[1][0] * S[2][2] - S[1][2] * S[2][0]) +
                       S[0][2] * (S[1][0] * S[2][1] - S[1][1] * S[2][0]);
          if (!(fabs(det) > 1e-9)) continue;
          double c[3];
          for (int a = 0; a < 3; a++) {
            double Mx[3][3];
            memcpy(Mx, S, sizeof Mx);
            for (int r = 0; r < 3; r++) Mx[r][a] = T[r];
            c[a] = (Mx[0][0] * (Mx[1][1] * Mx[2][2] - Mx[1][2] * Mx[2][1]) -
                    Mx[0][1] * (Mx[1][0] * Mx[2][2] - Mx[1][2] * Mx[2][0]) +
                    Mx[0][2] * (Mx[1][0] * Mx[2][1] - Mx[1][1] * Mx[2][0])) / det;
          }
          if (!(fabs(c[1]) <= FM_MAX_EXP && fabs(c[2]) <= FM_MAX_EXP)) continue;
          double sse = 0;
          for (size_t p = 0; p < nd; p++) {
            double r = lyp[p] - c[0] - c[1] * log(qv_at(w, p, w->act[i])) -
                       c[2] * log(qv_at(w, p, w->act[j]));
            sse += r * r;
          }
          if (sse < b2) b2 = sse, bj = (int)i, bk = (int)j, memcpy(c2, c, sizeof c2);
        }
      if (bj >= 0 && b2 < 0.25 * best) {
        o->t[0].coef = c2[0];
        o->t[0].nf = 2;
        o->t[0].q[0] = (uint32_t)w->act[bj], o->t[0].e[0] = c2[1];
        o->t[0].q[1] = (uint32_t)w->act[bk], o->t[0].e[1] = c2[2];
      }
    }
    if (lyp != ly) rf__free(lyp);
    return;
  }
  /* zeros among the values: the least-squares monomial (or the mean) */
  double best = INFINITY, bc = 0;
  size_t bk = 0;
  for (size_t k = 0; k < w->nm; k++) {
    const double *a = w->mv + k * nd;
    double saa = 0, say = 0;
    for (size_t p = 0; p < nd; p++) saa += a[p] * a[p], say += a[p] * y[p];
    if (!(saa > 0)) continue;
    double c = say / saa, sse = 0;
    for (size_t p = 0; p < nd; p++) sse += (y[p] - c * a[p]) * (y[p] - c * a[p]);
    if (sse < best * (1 - 1e-9)) best = sse, bc = c, bk = k;
  }
  o->kind = FM_O_LINEAR;
  set_term_mono(w, &w->m[bk], bc, &o->t[0]);
}

static int is_family(const char *name, const char *fam) {
  size_t n = strlen(fam);
  return !strncmp(name, fam, n) && name[n] == '.';
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

int fm_fit(const fm_rows *r, const uint8_t *use, const char *kernel, const char *app,
           fm_model **out) {
  *out = NULL;
  if (!r || !kernel) return rf__err("fm_fit: null argument");
  fm_model *M = rf__calloc(1, sizeof *M);
  if (!M) return rf__nomem();
  M->heldout = NAN;
  M->limit = 0.05;
  M->created = (int64_t)time(NULL);
  M->kernel = rf__strdup(kernel);
  M->app = rf__strdup(app ? app : "");
  long *argcol = rf__mallocn(r->nf + FM_MAX_TPL, sizeof *argcol);
  M->arg_param = rf__mallocn(r->nf ? r->nf : 1, sizeof *M->arg_param);
  M->out = rf__calloc(r->nf + FM_L_N + 1, sizeof *M->out);
  fitws w;
  memset(&w, 0, sizeof w);
  double *y = NULL;
  uint8_t *incons = NULL;
  int rc = -1;
  if (!M->kernel || !M->app || !argcol || !M->arg_param || !M->out) {
    rf__nomem();
    goto out;
  }
  /* the arguments: arg.I columns with a value in every used row */
  for (size_t j = 0; j < r->nf; j++) {
    const char *nm = r->names[j];
    if (!is_family(nm, "arg")) continue;
    char *e;
    unsigned long p = strtoul(nm + 4, &e, 10);
    if (*e || e == nm + 4 || p >= FM_MAX_PARAM) continue;
    int every = 1;
    for (size_t i = 0; i < r->n && every; i++)
      if (!use || use[i]) every = isfinite(r->x[i * r->nf + j]);
    if (!every || M->nargs == FM_MAX_ARGS) continue;
    M->arg_param[M->nargs++] = (uint32_t)p;
  }
  qsort(M->arg_param, M->nargs, sizeof *M->arg_param, cmp_u32);
  for (size_t a = 0; a < M->nargs; a++) {
    char nm[32];
    snprintf(nm, sizeof nm, "arg.%u", M->arg_param[a]);
    for (size_t j = 0; j < r->nf; j++)
      if (!strcmp(r->names[j], nm)) argcol[a] = (long)j;
  }
  /* template variables: tpl.0 .. tpl.(k-1), each with a value in every
     used row */
  for (size_t t = 0; t < FM_MAX_TPL; t++) {
    char nm[32];
    snprintf(nm, sizeof nm, "tpl.%zu", t);
    long col = -1;
    for (size_t j = 0; j < r->nf && col < 0; j++)
      if (!strcmp(r->names[j], nm)) col = (long)j;
    if (col < 0) break;
    for (size_t i = 0; i < r->n; i++)
      if ((!use || use[i]) && !isfinite(r->x[i * r->nf + (size_t)col])) {
        rf__err("%s: launch %zu has no value of template variable T%zu", kernel, i, t);
        goto out;
      }
    argcol[M->nargs + t] = col;
    M->ntpl++;
  }
  /* differences of the first FM_BASIS_VARS arguments, for fit_basis */
  size_t nda = M->nargs < FM_BASIS_VARS ? M->nargs : FM_BASIS_VARS;
  M->ndiff = nda * (nda - (nda > 0)) / 2;
  M->nq = FM_NQ_LAUNCH + M->nargs + M->ntpl + M->ndiff;
  M->q = rf__calloc(M->nq, sizeof *M->q);
  if (!M->q) {
    rf__nomem();
    goto out;
  }
  for (size_t i = 0; i < FM_NQ_LAUNCH + M->nargs + M->ntpl; i++) {
    M->q[i].kind = i < FM_NQ_LAUNCH ? (uint32_t)i
                   : i < FM_NQ_LAUNCH + M->nargs ? FM_Q_ARG : FM_Q_TARG;
    M->q[i].a = i < FM_NQ_LAUNCH ? 0
                : (uint32_t)(i - FM_NQ_LAUNCH - (M->q[i].kind == FM_Q_TARG ? M->nargs : 0));
  }
  for (size_t i = 0, k = FM_NQ_LAUNCH + M->nargs + M->ntpl; i < nda; i++)
    for (size_t j = i + 1; j < nda; j++, k++) {
      M->q[k].kind = FM_Q_DIFF;
      M->q[k].a = (uint32_t)(j << 8 | i); /* arg j - arg i: the later parameter first */
    }
  if (ws_build(&w, M, r, use, argcol)) goto out;
  if (w.nrows == 0) {
    rf__err("%s: no launches to fit", kernel);
    goto out;
  }
  if (w.nd < 2) {
    rf__err("%s: every launch has the same configuration and arguments; a feature model needs "
            "at least 2 different ones", kernel);
    goto out;
  }
  for (size_t i = 0; i < M->nq; i++) {
    M->q[i].lo = INFINITY, M->q[i].hi = -INFINITY;
    for (size_t p = 0; p < w.nd; p++) {
      double v = qv_at(&w, p, (int)i);
      if (v < M->q[i].lo) M->q[i].lo = v;
      if (v > M->q[i].hi) M->q[i].hi = v;
    }
  }
  /* sizes and launches */
  M->nlaunches = w.nrows;
  for (size_t t = 0; t < w.nrows; t++) {
    size_t i = w.rows[t];
    int seen = 0;
    for (size_t u = 0; u < t && !seen; u++)
      seen = !strcmp(r->size[w.rows[u]] ? r->size[w.rows[u]] : "", r->size[i] ? r->size[i] : "");
    M->nsizes += !seen;
  }
  y = rf__mallocn(w.nd, sizeof *y);
  incons = rf__mallocn(w.nd, 1);
  size_t *cnt = rf__mallocn(w.nd, sizeof *cnt);
  if (!y || !incons || !cnt) {
    rf__free(cnt);
    rf__nomem();
    goto out;
  }
  for (size_t j = 0; j < r->nf; j++) {
    const char *nm = r->names[j];
    fm_out *o = &M->out[M->nout];
    if (is_family(nm, "emu") || is_family(nm, "static") || is_family(nm, "arg") ||
        is_family(nm, "tpl"))
      continue;
    if (is_family(nm, "launch")) {
      int code = -1;
      for (int k = 0; k < FM_L_N; k++)
        if (!strcmp(nm, launch_names[k])) code = k;
      if (code < 0) { /* launch.param_bytes and the like: per kernel */
        o->kind = FM_O_CONST;
        o->nterms = 1;
        o->t[0].coef = yval(r, w.rows[0], j);
      } else {
        o->kind = FM_O_LAUNCH;
        o->aux = (uint32_t)code;
      }
    } else if (!strcmp(nm, "ctrl.active_lane_ratio")) {
      o->kind = FM_O_LANES;
    } else {
      memset(y, 0, w.nd * sizeof *y);
      memset(cnt, 0, w.nd * sizeof *cnt);
      memset(incons, 0, w.nd);
      for (size_t t = 0; t < w.nrows; t++) {
        size_t p = w.pt_of_row[t];
        double v = yval(r, w.rows[t], j);
        if (cnt[p] && v != y[p] / (double)cnt[p]) incons[p] = 1;
        y[p] += v;
        cnt[p]++;
      }
      int consistent = 1;
      for (size_t p = 0; p < w.nd; p++) y[p] /= (double)cnt[p], consistent &= !incons[p];
      fit_one(&w, M, y, consistent, o);
    }
    if (!(o->name = rf__strdup(nm))) {
      rf__free(cnt);
      rf__nomem();
      goto out;
    }
    M->nout++;
  }
  rf__free(cnt);
  /* launch.* the training rows lacked are still outputs: a launch has them */
  for (int k = 0; k < FM_L_N; k++) {
    int have = 0;
    for (size_t i = 0; i < M->nout && !have; i++) have = !strcmp(M->out[i].name, launch_names[k]);
    if (have) continue;
    fm_out *o = &M->out[M->nout];
    o->kind = FM_O_LAUNCH;
    o->aux = (uint32_t)k;
    if (!(o->name = rf__strdup(launch_names[k]))) {
      rf__nomem();
      goto out;
    }
    M->nout++;
  }
  for (size_t a = 0; a < M->nargs; a++) {
    fm_out *o = &M->out[M->nout];
    char nm[32];
    snprintf(nm, sizeof nm, "arg.%u", M->arg_param[a]);
    o->kind = FM_O_ARG;
    o->aux = (uint32_t)a;
    if (!(o->name = rf__strdup(nm))) {
      rf__nomem();
      goto out;
    }
    M->nout++;
  }
  for (size_t i = 0; i < M->nout; i++) {
    const fm_out *o = &M->out[i];
    if (o->kind > FM_O_LINEAR) continue;
    for (uint32_t k = 0; k < o->nterms; k++)
      for (uint32_t f = 0; f < o->t[k].nf; f++) M->q[o->t[k].q[f]].used = 1;
  }
  /* an instance beyond the fitted ones is an extrapolation whatever the
     forms read: its code is another instantiation */
  for (size_t t = 0; t < M->ntpl; t++) M->q[FM_NQ_LAUNCH + M->nargs + t].used = 1;
  /* an argument the kernel reads and no form does, whose value the launch
     configuration fixed in every training launch (n = grid x block for a
     bounds-checked kernel the sizes ran at n = threads): the forms may
     carry its effect through the configuration, so a launch with a value
     of it outside the trained ones is an extrapolation too (triad with n
     = 100 at 1024 threads stores 100 floats, not 1024) */
  for (size_t a = 0; a < M->nargs; a++) {
    size_t qi = FM_NQ_LAUNCH + a;
    if (M->q[qi].used) continue;
    int fixed = 1;
    for (size_t p = 0; p < w.nd && fixed; p++)
      for (size_t p2 = p + 1; p2 < w.nd && fixed; p2++) {
        int same = 1;
        for (size_t k = 0; k < FM_NQ_LAUNCH && same; k++)
          same = qv_at(&w, p, (int)k) == qv_at(&w, p2, (int)k);
        for (size_t t = 0; t < M->ntpl && same; t++)
          same = qv_at(&w, p, (int)(FM_NQ_LAUNCH + M->nargs + t)) ==
                 qv_at(&w, p2, (int)(FM_NQ_LAUNCH + M->nargs + t));
        if (same && qv_at(&w, p, (int)qi) != qv_at(&w, p2, (int)qi)) fixed = 0;
      }
    if (fixed) M->q[qi].used = 1;
  }
  if (M->ntpl && instances(M, r, use, argcol + M->nargs)) goto out;
  fm__index(M);
  rc = 0;
out:
  ws_free(&w);
  rf__free(y);
  rf__free(incons);
  rf__free(argcol);
  if (rc) {
    fm_free(M);
    return -1;
  }
  *out = M;
  return 0;
}

void fm_set_heldout(fm_model *m, double err, unsigned nsizes, double limit) {
  m->heldout = err;
  m->heldout_sizes = nsizes;
  m->limit = limit;
}

/* ---------------------------------------------------------- validation -- */

int fm_validate(const fm_rows *r, double *err, unsigned *nsizes, fm_heldout_fn cb, void *ctx) {
  *err = NAN;
  *nsizes = 0;
  uint8_t *use = rf__mallocn(r->n ? r->n : 1, 1);
  uint8_t *done = rf__calloc(r->n ? r->n : 1, 1);
  double *errs = rf__mallocn(r->n ? r->n : 1, r->nf * sizeof(double));
  double *pred = NULL, *args = rf__mallocn(FM_MAX_PARAM, sizeof(double));
  size_t ne = 0;
  int rc = -1;
  if (!use || !done || !errs || !args) {
    rf__nomem();
    goto out;
  }
  for (size_t s = 0; s < r->n; s++) {
    if (done[s]) continue;
    const char *lab = r->size[s] ? r->size[s] : "";
    for (size_t i = 0; i < r->n; i++) {
      use[i] = strcmp(r->size[i] ? r->size[i] : "", lab) != 0;
      if (!use[i]) done[i] = 1;
    }
    fm_model *m = NULL;
    if (fm_fit(r, use, "held-out fold", NULL, &m)) continue; /* too few configurations */
    rf__free(pred);
    pred = rf__mallocn(m->nout, sizeof *pred);
    long *col = rf__mallocn(m->nout, sizeof *col);
    if (!pred || !col) {
      rf__free(col);
      fm_free(m);
      rf__nomem();
      goto out;
    }
    for (size_t k = 0; k < m->nout; k++) {
      col[k] = -1;
      for (size_t j = 0; j < r->nf; j++)
        if (!strcmp(r->names[j], m->out[k].name)) col[k] = (long)j;
    }
    (*nsizes)++;
    for (size_t i = 0; i < r->n; i++) {
      if (use[i]) continue;
      fm_launch l;
      memset(&l, 0, sizeof l);
      memcpy(l.grid, r->grid + 3 * i, sizeof l.grid);
      memcpy(l.block, r->block + 3 * i, sizeof l.block);
      l.shmem = r->shmem[i];
      for (size_t a = 0; a < m->nargs; a++) {
        args[m->arg_param[a]] = NAN;
        for (size_t j = 0; j < r->nf; j++) {
          char nm[32];
          snprintf(nm, sizeof nm, "arg.%u", m->arg_param[a]);
          if (!strcmp(r->names[j], nm)) args[m->arg_param[a]] = r->x[i * r->nf + j];
        }
      }
      l.args = args;
      l.nargs = FM_MAX_PARAM;
      double targs[FM_MAX_TPL];
      for (size_t t = 0; t < m->ntpl; t++) {
        char nm[32];
        snprintf(nm, sizeof nm, "tpl.%zu", t);
        targs[t] = NAN;
        for (size_t j = 0; j < r->nf; j++)
          if (!strcmp(r->names[j], nm)) targs[t] = r->x[i * r->nf + j];
      }
      l.targs = targs;
      l.ntargs = m->ntpl;
      unsigned fl = 0;
      if (fm_eval(m, &l, pred, &fl)) continue; /* the held-out size lacks an argument */
      for (size_t k = 0; k < m->nout; k++) {
        const char *nm = m->out[k].name;
        if (!is_family(nm, "class") && !is_family(nm, "mem")) continue;
        double t = col[k] >= 0 ? yval(r, i, (size_t)col[k]) : 0;
        if (t == 0 && pred[k] == 0) continue;
        errs[ne++] = fm_rel_error(pred[k], t);
      }
      if (cb) cb(ctx, i, m, pred, fl);
    }
    rf__free(col);
    fm_free(m);
  }
  if (ne) {
    qsort(errs, ne, sizeof *errs, rf__cmp_double);
    *err = ne % 2 ? errs[ne / 2] : 0.5 * (errs[ne / 2 - 1] + errs[ne / 2]);
  }
  if (*nsizes < 2) *err = NAN;
  rc = 0;
out:
  rf__free(use);
  rf__free(done);
  rf__free(errs);
  rf__free(pred);
  rf__free(args);
  return rc;
}

/* ---------------------------------------------------------------- info -- */

void fm_get_info(const fm_model *m, fm_info *o) {
  memset(o, 0, sizeof *o);
  o->kernel = m->kernel;
  o->app = m->app;
  o->nout = m->nout;
  for (size_t i = 0; i < m->nout; i++) switch (m->out[i].kind) {
      case FM_O_EXACT: o->n_exact++; break;
      case FM_O_POWER: o->n_power++; break;
      case FM_O_LINEAR: o->n_linear++; break;
      case FM_O_CONST: o->n_const++; break;
      default: o->n_derived++; break;
    }
  o->nargs = m->nargs;
  o->arg_param = m->arg_param;
  o->ninst = m->ninst;
  o->ntpl = m->ntpl;
  o->nsizes = m->nsizes;
  o->nlaunches = m->nlaunches;
  o->heldout_error = m->heldout;
  o->heldout_sizes = m->heldout_sizes;
  o->limit = m->limit;
  o->created = m->created;
}

void fm_tpl_range(const fm_model *m, size_t t, double *lo, double *hi) {
  *lo = *hi = NAN;
  if (!m || t >= m->ntpl) return;
  *lo = m->q[FM_NQ_LAUNCH + m->nargs + t].lo;
  *hi = m->q[FM_NQ_LAUNCH + m->nargs + t].hi;
}

size_t fm_nout(const fm_model *m) { return m ? m->nout : 0; }
const char *fm_out_name(const fm_model *m, size_t i) {
  return m && i < m->nout ? m->out[i].name : NULL;
}

static const char *qty_name(const fm_model *m, uint32_t qi, char *buf, size_t cap) {
  static const char *const names[FM_NQ_LAUNCH] = {
      "grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z", "shared_bytes",
      "ctas", "block_threads", "threads", "warps", "log2_block"};
  if (qi < FM_NQ_LAUNCH) return names[qi];
  if (m->q[qi].kind == FM_Q_TARG) snprintf(buf, cap, "T%u", m->q[qi].a);
  else if (m->q[qi].kind == FM_Q_DIFF)
    snprintf(buf, cap, "(arg.%u-arg.%u)", m->arg_param[m->q[qi].a >> 8],
             m->arg_param[m->q[qi].a & 0xff]);
  else snprintf(buf, cap, "arg.%u", m->arg_param[m->q[qi].a]);
  return buf;
}

void fm_out_form(const fm_model *m, size_t i, char *buf, size_t cap) {
  const fm_out *o = &m->out[i];
  size_t len = 0;
  char qb[32];
#define PUT(...) \
  do { \
    int k_ = snprintf(buf + len, len < cap ? cap - len : 0, __VA_ARGS__); \
    if (k_ > 0) len += (size_t)k_; \
  } while (0)
  if (cap) buf[0] = 0;
  switch (o->kind) {
    case FM_O_CONST: PUT("constant %.10g", o->t[0].coef); break;
    case FM_O_LAUNCH: PUT("the launch's %s", launch_names[o->aux]); break;
    case FM_O_ARG: PUT("the argument"); break;
    case FM_O_LANES: PUT("class.* sum / (32 * ctrl.warp_insns)"); break;
    case FM_O_POWER:
      PUT("power: %.6g", exp(o->t[0].coef));
      for (uint32_t f = 0; f < o->t[0].nf; f++)
        PUT(" * %s^%.4f", qty_name(m, o->t[0].q[f], qb, sizeof qb), o->t[0].e[f]);
      break;
    default:
      PUT("%s: ", o->kind == FM_O_EXACT ? "exact" : "least squares");
      for (uint32_t k = 0; k < o->nterms; k++) {
        PUT("%s%.10g", k ? " + " : "", o->t[k].coef);
        for (uint32_t f = 0; f < o->t[k].nf; f++) {
          PUT("*%s", qty_name(m, o->t[k].q[f], qb, sizeof qb));
          if (o->t[k].e[f] != 1) PUT("^%g", o->t[k].e[f]);
        }
      }
      break;
  }
  if (len >= cap && cap > 4) memcpy(buf + cap - 4, "...", 4);
#undef PUT
}
