/*
 * opr.c -- operator launches (opr.h): the table of operators, the text
 * form of a description, what a library kernel's name says, the
 * assumptions for what a description leaves out, and the opr.* features.
 *
 * Why one function for the features: an imported launch (datasets/
 * ds_neusight.c), `kcast predict --op`, kcast_features_from_op() and the
 * training matrix must agree column for column, or a model trained on one
 * predicts nonsense from another.  docs/features.md, "Operator launches",
 * defines every column; this file is its implementation.
 *
 * The work of a launch (flops, the minimum bytes moved, elements) follows
 * from the operator's class and shape alone; how the library cut it
 * (tile, split-K, vector width, rows per CTA) from its kernel name and
 * launch configuration.  Shapes are those of the NeuSight training set
 * (Lee et al., ASPLOS 2025), whose GEMMs write an M x K output and reduce
 * over N: checked on its 120,000 GEMM launches, where cuBLAS's grid is
 * ceil(K / A) x ceil(M / B) x batch (times the split-K factor) for a
 * kernel named *_AxB_*.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model/opr.h"
#include "model/rf_int.h"

/* ----------------------------------------------------------- the table -- */

/*
 * The operators.  inputs: tensors of the shape read (GEMM: 2 when both
 * operands are batched, 1 when the second is one shared weight); flops and
 * sfu: FP32 arithmetic (an FMA counts 2) and transcendental operations per
 * output element, as the PyTorch functors compute them (a division is a
 * reciprocal and its refinement; pow is exp2(y log2 x) with its fix-ups;
 * gelu's erf a polynomial and an exponential).  host_us, gap_us and
 * mem_eff are the operator as PyTorch 2.1 runs it, not any GPU's: its
 * dispatch floor, its fixed time once the GPU binds, and the share of the
 * DRAM peak its kernel sustains (docs/features.md), fitted to the
 * NeuSight training launches on the A100's, P4's and T4's machines (whose
 * floors agree to 1-2 us): the smallest launches give the floor, the
 * largest the efficiency; the others keep 12 us and 0.85, which the
 * fits did not move.  Append new rows at the end: the position is not a
 * feature, but docs/features.md lists them in this order.
 */
static const opr_info ops[] = {
  {"bmm", OPR_GEMM, "B,M,N,K", "batched matrix product: [B,M,N] x [B,N,K] -> [B,M,K]", 2, 0, 0,
   32, 24, 0.85},
  {"linear", OPR_GEMM, "B,M,N,K", "fully connected layer: [B,M,N] x weight [N,K] -> [B,M,K]", 1, 0, 0,
   47.5, 47.5, 0.85},
  {"conv", OPR_CONV, "B,Cin,Cout,Kernel,Size,Stride,Padding",
   "2-D convolution: B images of Cin x Size x Size, Cout filters of Kernel x Kernel", 1, 0, 0,
   26, 12, 0.85},
  {"add", OPR_ELEMENTWISE, "B,H", "x + y over B x H elements", 2, 1, 0, 26.5, 12, 0.85},
  {"addu", OPR_ELEMENTWISE, "B,H", "x + scalar", 1, 1, 0, 31.5, 12, 0.85},
  {"mul", OPR_ELEMENTWISE, "B,H", "x * y", 2, 1, 0, 26.5, 12, 0.85},
  {"mulu", OPR_ELEMENTWISE, "B,H", "x * scalar", 1, 1, 0, 31.5, 12, 0.85},
  {"div", OPR_ELEMENTWISE, "B,H", "x / y", 2, 4, 1, 26.5, 12, 0.85},
  {"divu", OPR_ELEMENTWISE, "B,H", "x / scalar", 1, 4, 1, 31.5, 12, 0.85},
  {"pow", OPR_ELEMENTWISE, "B,H", "x ^ y", 2, 20, 2, 27, 12, 0.85},
  {"powu", OPR_ELEMENTWISE, "B,H", "x ^ scalar", 1, 20, 2, 29.5, 12, 0.85},
  {"relu", OPR_ELEMENTWISE, "B,H", "max(x, 0)", 1, 1, 0, 32, 12, 0.85},
  {"gelu", OPR_ELEMENTWISE, "B,H", "x * (1 + erf(x / sqrt 2)) / 2", 1, 25, 1, 31, 12, 0.85},
  {"tanh", OPR_ELEMENTWISE, "B,H", "tanh(x)", 1, 8, 2, 26, 12, 0.85},
  {"softmax", OPR_SOFTMAX, "B,H", "softmax over each of B rows of H", 1, 5, 1, 33.5, 16, 0.65},
  {"ln", OPR_NORM, "B,H", "layer norm over each of B rows of H (with weight and bias)", 1, 8, 0,
   47.5, 38.5, 0.5},
};
#define N_OPS (sizeof ops / sizeof *ops)

size_t opr_count(void) { return N_OPS; }

const opr_info *opr_at(size_t i) { return i < N_OPS ? &ops[i] : NULL; }

const opr_info *opr_find(const char *name) {
  for (size_t i = 0; name && i < N_OPS; i++)
    if (!strcmp(ops[i].name, name)) return &ops[i];
  return NULL;
}

size_t opr_ndims(const opr_info *op) {
  if (!op) return 0;
  size_t n = 1;
  for (const char *s = op->dims; *s; s++) n += *s == ',';
  return n;
}

const char *opr_dim_name(const opr_info *op, size_t i, char *buf, size_t cap) {
  if (!op || !cap) return NULL;
  const char *s = op->dims;
  for (size_t k = 0; k < i && s; k++) {
    s = strchr(s, ',');
    if (s) s++;
  }
  if (!s) return NULL;
  size_t l = strcspn(s, ",");
  if (l >= cap) l = cap - 1;
  memcpy(buf, s, l);
  buf[l] = 0;
  return buf;
}

/* Other spellings of conv's parameters: the NeuSight files' columns. */
static const struct { const char *alias, *dim; } dim_alias[] = {
  {"Input_Channel", "Cin"}, {"Output_Channel", "Cout"}, {"Kernel_Size", "Kernel"},
  {"Kernel_Szie", "Kernel"}, {"Input_Size", "Size"},
};

int opr_dim_index(const opr_info *op, const char *dim) {
  if (!op || !dim) return -1;
  if (op->cls == OPR_CONV)
    for (size_t a = 0; a < sizeof dim_alias / sizeof *dim_alias; a++)
      if (!strcasecmp(dim, dim_alias[a].alias)) dim = dim_alias[a].dim;
  /* compared where they stand in op->dims: no copy of each name */
  size_t dl = strlen(dim);
  const char *s = op->dims;
  for (int i = 0;; i++) {
    size_t l = strcspn(s, ",");
    if (l == dl && !strncasecmp(s, dim, l)) return i;
    if (!s[l]) return -1;
    s += l + 1;
  }
}

/* ------------------------------------------------------- kernel names -- */

/* Is the text at s[0..len) "AxB" or "AxBxC" with whole numbers? */
static int tile_word(const char *s, size_t len, unsigned *a, unsigned *b) {
  unsigned v[3] = {0, 0, 0};
  int nv = 0;
  size_t i = 0;
  while (i < len && nv < 3) {
    if (!isdigit((unsigned char)s[i])) return 0;
    unsigned long x = 0;
    while (i < len && isdigit((unsigned char)s[i])) {
      x = x * 10 + (unsigned)(s[i] - '0');
      if (x > 65536) return 0;
      i++;
    }
    v[nv++] = (unsigned)x;
    if (i < len && s[i] != 'x') return 0;
    if (i < len) i++;
    else break;
  }
  if (i != len || nv < 2 || !v[0] || !v[1]) return 0;
  *a = v[0];
  *b = v[1];
  return 1;
}

int opr_kernel_tile(const char *kernel, unsigned *tile_m, unsigned *tile_n, unsigned *slices) {
  unsigned a = 0, b = 0, sl = 1;
  if (tile_m) *tile_m = 0;
  if (tile_n) *tile_n = 0;
  if (slices) *slices = 1;
  if (!kernel) return 0;
  /* words between '_' (and the name's ends); the first AxB word is the
     tile (cuBLAS's xmma and CUTLASS kernels: tilesizeAxBxK, as cuBLAS's
     m x n), a word slicedAxB the K slicing */
  int found = 0;
  for (const char *s = kernel; *s;) {
    size_t l = strcspn(s, "_ <>,()");
    if (!found && tile_word(s, l, &a, &b)) found = 1;
    if (!found && l > 8 && !strncmp(s, "tilesize", 8) && tile_word(s + 8, l - 8, &a, &b)) found = 1;
    unsigned p, q;
    if (l > 6 && !strncmp(s, "sliced", 6) && tile_word(s + 6, l - 6, &p, &q)) sl = p * q;
    s += l;
    if (*s) s++;
  }
  if (!found) return 0;
  /* cuBLAS's AxB: A along the output's columns (cuBLAS's m: PyTorch's
     row-major output is its column-major transpose), B along its rows */
  if (tile_n) *tile_n = a;
  if (tile_m) *tile_m = b;
  if (slices) *slices = sl;
  return 1;
}

int opr_kernel_algo(const char *names) {
  if (!names) return OPR_ALGO_UNKNOWN;
  char low[OPR_KERNEL_MAX];
  size_t n = 0;
  for (; names[n] && n + 1 < sizeof low; n++) low[n] = (char)tolower((unsigned char)names[n]);
  low[n] = 0;
  /* cuDNN's names: winograd (fused and nonfused, the latter with an SGEMM
     in the transformed domain), FFT, the implicit-GEMM scudnn kernels, the
     explicit im2col + SGEMM path, and the direct kernels */
  if (strstr(low, "winograd")) return OPR_ALGO_WINOGRAD;
  if (strstr(low, "fft")) return OPR_ALGO_FFT;
  if (strstr(low, "implicit") || strstr(low, "scudnn") || strstr(low, "xmma")) return OPR_ALGO_IMPLICIT;
  if (strstr(low, "explicit") || strstr(low, "im2col") || strstr(low, "gemm")) return OPR_ALGO_GEMM;
  if (strstr(low, "conv")) return OPR_ALGO_DIRECT;
  return OPR_ALGO_UNKNOWN;
}

/* The integer template argument number idx (0-based) after the first
   '<' following key in name; -1 when there is none. */
static long template_int(const char *name, const char *key, int idx) {
  const char *s = strstr(name, key);
  if (!s) return -1;
  s = strchr(s, '<');
  if (!s) return -1;
  s++;
  for (int i = 0; i < idx; i++) {
    int depth = 0;
    for (; *s && !(depth == 0 && *s == ','); s++) {
      if (*s == '<' || *s == '(') depth++;
      if (*s == '>' || *s == ')') { if (!depth) return -1; depth--; }
    }
    if (*s != ',') return -1;
    s++;
  }
  while (*s == ' ') s++;
  char *e;
  long v = strtol(s, &e, 10);
  if (e == s || (*e != ',' && *e != '>' && *e != ' ')) return -1;
  return v;
}

/* ------------------------------------------------------------ parsing -- */

/* One blank-separated word of text at *p into w (quotes removed); 0 at
   the end, -1 for an unterminated quote or a word too long. */
static int next_word(const char **p, char *w, size_t cap) {
  const char *s = *p;
  while (*s == ' ' || *s == '\t' || *s == '\n') s++;
  if (!*s) { *p = s; return 0; }
  size_t n = 0;
  while (*s && *s != ' ' && *s != '\t' && *s != '\n') {
    if (*s == '\'' || *s == '"') {
      char q = *s++;
      const char *e = strchr(s, q);
      if (!e) return rf__err("unterminated %c quote", q);
      size_t l = (size_t)(e - s);
      if (n + l >= cap) return rf__err("a word of more than %zu characters", cap - 1);
      memcpy(w + n, s, l);
      n += l;
      s = e + 1;
      continue;
    }
    if (n + 1 >= cap) return rf__err("a word of more than %zu characters", cap - 1);
    w[n++] = *s++;
  }
  w[n] = 0;
  *p = s;
  return 1;
}

/* Names of the operator classes, for messages. */
static const char *class_word(int cls) {
  switch (cls) {
    case OPR_GEMM: return "matrix product";
    case OPR_CONV: return "convolution";
    case OPR_ELEMENTWISE: return "elementwise";
    case OPR_SOFTMAX: return "softmax";
    case OPR_NORM: return "normalisation";
  }
  return "unknown";
}

int opr_kernel_class(const char *kernel) {
  char low[OPR_KERNEL_MAX];
  size_t n = 0;
  for (; kernel && kernel[n] && n + 1 < sizeof low; n++)
    low[n] = (char)tolower((unsigned char)kernel[n]);
  low[n] = 0;
  /* the most specific words first: cuDNN runs SGEMMs (implicit_convolve_
     sgemm), PyTorch's names carry the operator */
  if (strstr(low, "softmax")) return OPR_SOFTMAX;
  if (strstr(low, "layer_norm") || strstr(low, "norm_kernel")) return OPR_NORM;
  if (strstr(low, "elementwise")) return OPR_ELEMENTWISE;
  if (strstr(low, "convolv") || strstr(low, "conv_") || strstr(low, "dconv") ||
      strstr(low, "cudnn") || strstr(low, "winograd"))
    return OPR_CONV;
  if (strstr(low, "gemm")) return OPR_GEMM;
  return 0;
}

/* A whole number in [lo, hi] from s; -1 naming what after the error. */
static int whole(const char *what, const char *s, double lo, double hi, double *out) {
  char *e;
  errno = 0;
  double v = strtod(s, &e);
  if (e == s || *e || errno || !isfinite(v) || v != floor(v) || v < lo || v > hi)
    return rf__err("%s '%s' is not a whole number in %.0f..%.0f", what, s, lo, hi);
  *out = v;
  return 0;
}

/* X[,Y[,Z]] into v[3] (missing ones 1). */
static int dims3(const char *what, const char *s, uint32_t v[3]) {
  v[0] = v[1] = v[2] = 1;
  char buf[96];
  snprintf(buf, sizeof buf, "%s", s);
  int k = 0;
  for (char *t = buf, *e; t && k < 3; k++, t = e) {
    e = strchr(t, ',');
    if (e) *e++ = 0;
    double d;
    if (whole(what, t, 1, 4294967295.0, &d)) return -1;
    v[k] = (uint32_t)d;
    if (!e) { k++; break; }
    if (k == 2) return rf__err("%s '%s' has more than three dimensions", what, s);
  }
  return 0;
}

/* Largest shape value: a GEMM of 2^31 on a side is far past any GPU. */
#define DIM_MAX 2147483647.0

int opr_parse(const char *text, opr_launch *out) {
  if (!text || !out) return rf__err("opr_parse: NULL argument");
  memset(out, 0, sizeof *out);
  const char *p = text;
  char w[OPR_KERNEL_MAX + 16];
  int r = next_word(&p, w, sizeof w);
  if (r < 0) return -1;
  if (!r) return rf__err("empty operator description (give e.g. 'bmm B=8 M=512 N=512 K=64')");
  out->op = opr_find(w);
  if (!out->op) {
    char known[512];
    size_t n = 0;
    for (size_t i = 0; i < N_OPS && n + 16 < sizeof known; i++)
      n += (size_t)snprintf(known + n, sizeof known - n, "%s%s", i ? ", " : "", ops[i].name);
    return rf__err("unknown operator '%s' (known: %s)", w, known);
  }
  size_t nd = opr_ndims(out->op);
  unsigned have = 0, have_kernel = 0, have_grid = 0, have_block = 0, have_nk = 0;
  while ((r = next_word(&p, w, sizeof w)) > 0) {
    char *eq = strchr(w, '=');
    if (!eq || eq == w || !eq[1])
      return rf__err("%s: '%s' is not KEY=VALUE", out->op->name, w);
    *eq = 0;
    const char *key = w, *val = eq + 1;
    unsigned *flag = NULL;
    if (!strcmp(key, "kernel")) {
      flag = &have_kernel;
      if (strlen(val) >= sizeof out->kernel)
        return rf__err("%s: kernel name of more than %zu characters", out->op->name,
                       sizeof out->kernel - 1);
      snprintf(out->kernel, sizeof out->kernel, "%s", val);
    } else if (!strcmp(key, "grid")) {
      flag = &have_grid;
      if (dims3("grid", val, out->grid)) return -1;
      if (out->grid[0] > OPR_GRID_X_MAX || out->grid[1] > OPR_GRID_YZ_MAX ||
          out->grid[2] > OPR_GRID_YZ_MAX)
        return rf__err("grid %s is beyond CUDA's limits (x at most %.0f, y and z at most %.0f)",
                       val, (double)OPR_GRID_X_MAX, (double)OPR_GRID_YZ_MAX);
    } else if (!strcmp(key, "block")) {
      flag = &have_block;
      if (dims3("block", val, out->block)) return -1;
      if ((double)out->block[0] * out->block[1] * out->block[2] > 1024)
        return rf__err("block %s has more than 1024 threads", val);
    } else if (!strcmp(key, "kernels")) {
      flag = &have_nk;
      double d;
      if (whole("kernels", val, 1, 100000, &d)) return -1;
      out->nkernels = (unsigned)d;
    } else {
      int i = opr_dim_index(out->op, key);
      if (i < 0)
        return rf__err("%s has no parameter '%s' (it takes %s, and optionally kernel=, grid=, "
                       "block=, kernels=)", out->op->name, key, out->op->dims);
      if (have & (1u << i)) return rf__err("%s: %s given twice", out->op->name, key);
      have |= 1u << i;
      char dn[32];
      opr_dim_name(out->op, (size_t)i, dn, sizeof dn);
      int pad = out->op->cls == OPR_CONV && !strcmp(dn, "Padding");
      if (whole(dn, val, pad ? 0 : 1, DIM_MAX, &out->dim[i])) return -1;
      continue;
    }
    if (*flag) return rf__err("%s: %s given twice", out->op->name, key);
    *flag = 1;
  }
  if (r < 0) return -1;
  for (size_t i = 0; i < nd; i++)
    if (!(have & (1u << i))) {
      char dn[32];
      return rf__err("%s needs %s=N (its parameters: %s)", out->op->name,
                     opr_dim_name(out->op, i, dn, sizeof dn), out->op->dims);
    }
  if (out->kernel[0]) {
    /* a library kernel of another operator (relu run by an SGEMM) describes
       another launch: its features would be the wrong operator's */
    int kc = opr_kernel_class(out->kernel);
    int fits = !kc || kc == out->op->cls || (out->op->cls == OPR_CONV && kc == OPR_GEMM);
    if (!fits)
      return rf__err("%s: kernel %.200s belongs to another operator class (%s), not to %s's "
                     "(%s)", out->op->name, out->kernel, class_word(kc), out->op->name,
                     class_word(out->op->cls));
  }
  if (out->op->cls == OPR_CONV) {
    /* Kernel <= Size + 2 Padding, or the output is empty */
    if (out->dim[3] > out->dim[4] + 2 * out->dim[6])
      return rf__err("conv: Kernel %.0f is larger than Size + 2 Padding (%.0f)", out->dim[3],
                     out->dim[4] + 2 * out->dim[6]);
  }
  return 0;
}

/* ------------------------------------------------------------- shapes -- */

/* The GEMM view of a launch: batch, output rows m, columns n, reduction
   k; and the elements, flops, transcendental ops and minimum bytes. */
typedef struct work {
  double batch, m, n, k, elements, flops, sfu, bytes, filter;
} work;

static void work_of(const opr_launch *l, work *w) {
  const opr_info *op = l->op;
  const double *d = l->dim;
  memset(w, 0, sizeof *w);
  w->batch = 1;
  switch (op->cls) {
    case OPR_GEMM: /* B, M, N, K: [B,M,N] x [N,K] -> [B,M,K] */
      w->batch = d[0];
      w->m = d[1];
      w->n = d[3];
      w->k = d[2];
      w->elements = d[0] * d[1] * d[3];
      w->flops = 2 * d[0] * d[1] * d[2] * d[3];
      /* A, B (once per batch when both are batched, once when shared), C */
      w->bytes = 4 * (d[0] * d[1] * d[2] + (op->inputs >= 2 ? d[0] : 1) * d[2] * d[3] +
                      d[0] * d[1] * d[3]);
      break;
    case OPR_CONV: { /* B, Cin, Cout, Kernel, Size, Stride, Padding */
      double b = d[0], ci = d[1], co = d[2], r = d[3], h = d[4], s = d[5], pad = d[6];
      double ho = floor((h + 2 * pad - r) / s) + 1;
      /* the implicit GEMM: rows = output pixels, columns = filters,
         reduction = one filter's taps */
      w->m = b * ho * ho;
      w->n = co;
      w->k = ci * r * r;
      w->filter = r;
      w->elements = b * co * ho * ho;
      w->flops = 2 * w->elements * ci * r * r;
      w->bytes = 4 * (b * ci * h * h + co * ci * r * r + w->elements);
      break;
    }
    case OPR_ELEMENTWISE:
    case OPR_SOFTMAX:
    case OPR_NORM: /* B rows of H */
      w->m = d[0];
      w->n = d[1];
      w->elements = d[0] * d[1];
      w->flops = op->flops * w->elements;
      w->sfu = op->sfu * w->elements;
      w->bytes = 4 * w->elements * (op->inputs + 1);
      /* layer norm also reads its weight and bias and writes each row's
         mean and reciprocal deviation */
      if (op->cls == OPR_NORM) w->bytes += 4 * (2 * d[1] + 2 * d[0]);
      break;
  }
}

/* ------------------------------------------------------- assumptions -- */

/* cuBLAS SGEMM tiles kcast assumes, largest first: the name's A (along
   the output's columns) x B (rows), the threads, the K slicing. */
static const struct { unsigned a, b, threads, slices; } gemm_tiles[] = {
  {128, 128, 256, 1}, {128, 64, 128, 1}, {64, 64, 64, 1}, {32, 32, 128, 4}};
/* Every SGEMM tile of cuBLAS's kernels that PyTorch's GEMMs ran on the
   NeuSight data's GPUs (Pascal to Ampere), with its threads as recorded:
   the candidates of opr_gemm_candidates, and the threads of a kernel=
   given without block= */
static const struct { unsigned a, b, threads, slices; } sgemm_kernels[] = {
  {128, 128, 256, 1}, {128, 64, 128, 1}, {64, 64, 64, 1},  {128, 32, 256, 1},
  {32, 128, 256, 1},  {32, 32, 128, 4},  {64, 32, 256, 4}, {128, 32, 256, 4}};
#define N_SGEMM (sizeof sgemm_kernels / sizeof *sgemm_kernels)

/* The threads of a kernel with tile a x b (the name's order) and slices:
   the recorded ones for cuBLAS's, else by the tile's size. */
static unsigned tile_threads(unsigned a, unsigned b, unsigned sl) {
  for (size_t i = 0; i < N_SGEMM; i++)
    if (sgemm_kernels[i].a == a && sgemm_kernels[i].b == b && sgemm_kernels[i].slices == sl)
      return sgemm_kernels[i].threads;
  return a * b >= 128 * 128 ? 256 : a * b >= 128 * 64 ? 128 : 64;
}
/* Fewest CTAs a tile must give to be chosen: enough for GPUs of 40-132
   SMs, as cuBLAS's heuristics trade tile efficiency for parallelism. */
#define MIN_TILES 80

static double cdiv(double a, double b) { return ceil(a / b); }

/* Append "; " and text to note (when there is room). */
static void add_note(char *note, size_t cap, const char *text) {
  if (!note || !cap) return;
  size_t n = strlen(note);
  if (n + 2 >= cap) return;
  snprintf(note + n, cap - n, "%s%s", n ? "; " : "", text);
}

int opr_complete(opr_launch *l, char *note, size_t cap) {
  if (!l || !l->op) return rf__err("opr_complete: no operator");
  if (note && cap) note[0] = 0;
  work w;
  work_of(l, &w);
  int have_grid = l->grid[0] > 0, have_block = l->block[0] > 0, have_kernel = l->kernel[0] != 0;
  /* a GEMM's grid that cannot cover its output with the kernel's tile
     (cuBLAS's grids never have fewer CTAs than output tiles; more split K) */
  unsigned ktm, ktn;
  if (have_grid && l->op->cls == OPR_GEMM && have_kernel &&
      opr_kernel_tile(l->kernel, &ktm, &ktn, NULL)) {
    double tiles = cdiv(w.m, ktm) * cdiv(w.n, ktn) * w.batch;
    double ctas = (double)l->grid[0] * l->grid[1] * l->grid[2];
    if (ctas < tiles)
      return rf__err("%s: grid %u,%u,%u has %.0f CTAs, fewer than the %.0f tiles of %ux%u that "
                     "kernel %.200s needs for this shape: the grid, the kernel or the shape is "
                     "not this launch's", l->op->name, l->grid[0], l->grid[1], l->grid[2], ctas,
                     tiles, ktn, ktm, l->kernel);
  }
  if (have_grid && have_block && (have_kernel || (l->op->cls != OPR_GEMM && l->op->cls != OPR_CONV)))
    return 0;
  char kname[160];
  kname[0] = 0;
  double grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  switch (l->op->cls) {
    case OPR_GEMM:
    case OPR_CONV: {
      unsigned tm = 0, tn = 0, sl = 1, th = 0;
      if (have_kernel && opr_kernel_tile(l->kernel, &tm, &tn, &sl)) {
        th = tile_threads(tn, tm, sl);
      } else {
        size_t t = 0;
        size_t nt = sizeof gemm_tiles / sizeof *gemm_tiles;
        while (t + 1 < nt &&
               cdiv(w.n, gemm_tiles[t].a) * cdiv(w.m, gemm_tiles[t].b) * w.batch < MIN_TILES)
          t++;
        /* the smallest tile only where the output is that small */
        if (t + 1 == nt && (w.m > 32 || w.n > 32)) t--;
        tn = gemm_tiles[t].a;
        tm = gemm_tiles[t].b;
        sl = gemm_tiles[t].slices;
        th = gemm_tiles[t].threads;
        if (l->op->cls == OPR_GEMM)
          snprintf(kname, sizeof kname, sl > 1 ? "sgemm_%ux%u_sliced1x%u_nn" : "sgemm_%ux%u_nn",
                   tn, tm, sl);
        else
          snprintf(kname, sizeof kname, "implicit_convolve_sgemm_%ux%u", tn, tm);
      }
      grid[0] = cdiv(w.n, tn);
      grid[1] = cdiv(w.m, tm);
      grid[2] = w.batch;
      block[0] = th;
      break;
    }
    case OPR_ELEMENTWISE:
      /* PyTorch's vectorized_elementwise_kernel<4>: 128 threads, 4
         elements each */
      block[0] = 128;
      grid[0] = cdiv(w.elements, 512);
      snprintf(kname, sizeof kname, "vectorized_elementwise_kernel<4, %s>", l->op->name);
      break;
    case OPR_SOFTMAX:
      if (w.n <= 1024) {
        /* softmax_warp_forward: a warp (of up to 32 lanes) per row,
           rows padded to 2^log2 elements, 128 threads a CTA, two rows
           a warp up to 128 elements */
        int log2 = 0;
        while ((1 << log2) < w.n) log2++;
        unsigned warp = (1u << log2) < 32 ? (1u << log2) : 32;
        unsigned batch = log2 <= 7 ? 2 : 1;
        block[0] = warp;
        block[1] = 128 / warp;
        grid[0] = cdiv(w.m, (128 / warp) * batch);
        snprintf(kname, sizeof kname, "softmax_warp_forward<float, float, float, %d, false, false>",
                 log2);
      } else {
        /* cunn_SoftMaxForward<4>: a CTA per row, the next power of two
           of H / 8 threads, 32 to 1024 */
        double want = floor(fmin(floor(w.n / 4), 1024) / 2); /* integer halving */
        unsigned b = 1;
        while (b < want) b *= 2;
        block[0] = b < 32 ? 32 : b;
        grid[0] = w.m;
        snprintf(kname, sizeof kname, "cunn_SoftMaxForward<4, float, float, float>");
      }
      break;
    case OPR_NORM:
      /* vectorized_layer_norm_kernel: a CTA of 32 x 4 threads per row */
      block[0] = 32;
      block[1] = 4;
      grid[0] = w.m;
      snprintf(kname, sizeof kname, "vectorized_layer_norm_kernel<float, float>");
      break;
  }
  /* a grid CUDA cannot launch: the libraries split such work over several
     launches, which one launch's features do not describe */
  if (!have_grid && (grid[0] > OPR_GRID_X_MAX || grid[1] > OPR_GRID_YZ_MAX ||
                     grid[2] > OPR_GRID_YZ_MAX))
    return rf__err("%s: the shape needs a grid of %.0f x %.0f x %.0f CTAs, beyond CUDA's "
                   "limits (x at most %.0f, y and z at most %.0f): no one launch covers it",
                   l->op->name, grid[0], grid[1], grid[2], (double)OPR_GRID_X_MAX,
                   (double)OPR_GRID_YZ_MAX);
  char text[200];
  int noting = note && cap; /* the notes' text only where they are wanted */
  if (!have_kernel && kname[0]) {
    snprintf(l->kernel, sizeof l->kernel, "%s", kname);
    if (noting) {
      snprintf(text, sizeof text, "kernel %s", kname);
      add_note(note, cap, text);
    }
  }
  if (!have_grid) {
    for (int k = 0; k < 3; k++) l->grid[k] = (uint32_t)grid[k];
    if (noting) {
      snprintf(text, sizeof text, "grid %u,%u,%u", l->grid[0], l->grid[1], l->grid[2]);
      add_note(note, cap, text);
    }
  }
  if (!have_block) {
    memcpy(l->block, block, sizeof block);
    if (noting) {
      snprintf(text, sizeof text, "block %u,%u,%u", block[0], block[1], block[2]);
      add_note(note, cap, text);
    }
  }
  if (!l->nkernels && (!have_kernel || !have_grid)) l->nkernels = 1;
  return 0;
}

size_t opr_gemm_candidates(const opr_launch *l, opr_launch *out, size_t cap) {
  if (!l || !l->op || l->op->cls != OPR_GEMM || l->kernel[0] || l->grid[0] || l->block[0] || !out)
    return 0;
  /* PyTorch's linear multiplies by the transposed weight (cuBLAS's _tn
     kernels in every row of the data), its bmm without (_nn) */
  const char *lay = !strcmp(l->op->name, "linear") ? "tn" : "nn";
  /* a batched product never ran a sliced kernel (none of the data's 88,000
     bmm launches of a batch above 1, on any of its five GPUs) */
  work w;
  work_of(l, &w);
  size_t n = 0;
  for (size_t i = 0; i < N_SGEMM && n < cap; i++) {
    if (w.batch > 1 && sgemm_kernels[i].slices > 1) continue;
    opr_launch c = *l;
    if (sgemm_kernels[i].slices > 1)
      snprintf(c.kernel, sizeof c.kernel, "sgemm_%ux%u_sliced1x%u_%s", sgemm_kernels[i].a,
               sgemm_kernels[i].b, sgemm_kernels[i].slices, lay);
    else
      snprintf(c.kernel, sizeof c.kernel, "sgemm_%ux%u_%s", sgemm_kernels[i].a, sgemm_kernels[i].b,
               lay);
    if (opr_complete(&c, NULL, 0)) continue; /* a grid beyond CUDA's limits */
    out[n++] = c;
  }
  return n;
}

/* ----------------------------------------------------------- features -- */

const char *const opr_feature_names[OPR_NFEAT] = {
  "launch.grid_x", "launch.grid_y", "launch.grid_z", "launch.block_x", "launch.block_y",
  "launch.block_z", "launch.ctas", "launch.threads",
  "opr.class", "opr.batch", "opr.m", "opr.n", "opr.k", "opr.elements", "opr.flops", "opr.sfu",
  "opr.bytes", "opr.intensity", "opr.kernels", "opr.algo", "opr.filter",
  "opr.tile_m", "opr.tile_n", "opr.slices", "opr.tiles", "opr.split_k", "opr.tile_k",
  "opr.tile_fill", "opr.vector", "opr.elems_per_thread", "opr.rows_per_cta", "opr.host_us",
  "opr.gap_us", "opr.mem_eff"};

int opr_features(const opr_launch *l, double out[OPR_NFEAT]) {
  if (!l || !l->op || !out) return rf__err("opr_features: NULL argument");
  for (int k = 0; k < 3; k++)
    if (!l->grid[k] || !l->block[k])
      return rf__err("%s: grid and block are needed (opr_complete assumes them)", l->op->name);
  double tpc = (double)l->block[0] * l->block[1] * l->block[2];
  if (tpc > 1024) return rf__err("%s: block of %.0f threads (at most 1024)", l->op->name, tpc);
  work w;
  work_of(l, &w);
  double ctas = (double)l->grid[0] * l->grid[1] * l->grid[2];
  double *o = out;
  memset(o, 0, OPR_NFEAT * sizeof *o);
  for (int k = 0; k < 3; k++) {
    o[k] = l->grid[k];
    o[3 + k] = l->block[k];
  }
  o[6] = ctas;
  o[7] = ctas * tpc;
  o[8] = l->op->cls;
  o[9] = w.batch;
  o[10] = w.m;
  o[11] = w.n;
  o[12] = w.k;
  o[13] = w.elements;
  o[14] = w.flops;
  o[15] = w.sfu;
  o[16] = w.bytes;
  o[17] = w.bytes > 0 ? w.flops / w.bytes : 0;
  o[18] = l->nkernels ? l->nkernels : 1;
  if (l->op->cls == OPR_CONV) {
    int a = opr_kernel_algo(l->others);
    o[19] = a ? a : opr_kernel_algo(l->kernel);
  }
  o[20] = w.filter;
  double vector = 1, rows_per_cta = 0;
  if (l->op->cls == OPR_GEMM || l->op->cls == OPR_CONV) {
    unsigned tm, tn, sl;
    if (opr_kernel_tile(l->kernel, &tm, &tn, &sl)) {
      double tiles = cdiv(w.m, tm) * cdiv(w.n, tn) * w.batch;
      double split = ctas / tiles;
      o[21] = tm;
      o[22] = tn;
      o[23] = sl;
      o[24] = tiles;
      o[25] = split;
      o[26] = w.k / (split >= 1 ? split : 1);
      o[27] = w.m * w.n * w.batch / (tiles * tm * tn);
    }
  } else {
    long v = -1;
    if (l->op->cls == OPR_ELEMENTWISE) v = template_int(l->kernel, "elementwise_kernel", 0);
    if (l->op->cls == OPR_NORM) v = strstr(l->kernel, "vectorized") ? 4 : 1;
    if (l->op->cls == OPR_SOFTMAX) {
      long lg = template_int(l->kernel, "softmax_warp_forward", 3);
      if (lg >= 0 && lg < 31) {
        /* elements a lane holds of its row */
        double per_row = (double)(1L << lg), warp = per_row < 32 ? per_row : 32;
        v = (long)(per_row / warp);
      } else {
        v = template_int(l->kernel, "SoftMaxForward", 0);
      }
    }
    if (v > 0 && v <= 64) vector = (double)v;
    rows_per_cta = w.m / ctas;
  }
  o[28] = vector;
  o[29] = w.elements / (ctas * tpc);
  o[30] = rows_per_cta;
  o[31] = l->op->host_us;
  o[32] = l->op->gap_us;
  o[33] = l->op->mem_eff;
  for (int k = 0; k < OPR_NFEAT; k++)
    if (!isfinite(o[k])) return rf__err("%s: %s is not finite", l->op->name, opr_feature_names[k]);
  return 0;
}
