/*
 * rf_int.h -- internals of the forest module shared by its .c files: the
 * forest and tree structs, the packed node, the allocator with its fault
 * hook, the error buffer and the random generator.  Nothing outside model/
 * includes this header.
 */
#ifndef KCAST_RF_INT_H
#define KCAST_RF_INT_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

/*
 * A packed node, 16 bytes, four to a cache line:
 *
 *   +--------------------+-------------+-------------+
 *   | v (f64)            | feature i32 | left u32    |
 *   +--------------------+-------------+-------------+
 *
 * Split (feature >= 0): x[feature] <= v goes to node `left`, else to
 * `left + 1`; children are always allocated as a pair after their parent
 * (left > own index), so a walk strictly increases the index and ends.
 * Leaf (feature == -1): v is the mean of the (transformed) in-bag targets,
 * `left` is the leaf number, indexing leaf_off.
 */
typedef struct rf_node {
  double v;
  int32_t feature;
  uint32_t left;
} rf_node;

typedef struct rf_tree {
  uint32_t n_nodes;    /* >= 1; nodes[0] is the root */
  uint32_t n_leaves;   /* leaves numbered 0..n_leaves-1 */
  uint32_t n_values;   /* stored leaf samples in total */
  rf_node *nodes;      /* n_nodes, owned */
  uint32_t *leaf_off;  /* n_leaves+1: leaf k's samples are
                          values[leaf_off[k] .. leaf_off[k+1]), sorted */
  float *values;       /* n_values transformed targets, owned */
} rf_tree;

/*
 * Prediction layout, 8 bytes a node, built in memory from the nodes when
 * a forest is trained or loaded (never stored):
 *
 *   +--------------+----------------------+----------+
 *   | thr: f32     | kid: u24             | feat: u8 |
 *   +--------------+----------------------+----------+
 *
 * Split: go to kid (left) when xf[feat] <= thr, else kid+1, where xf is
 * the row rounded up to float.  Exact: every threshold the trainer makes
 * is a float (rf_train.c), and for a float t, x <= t <=> roundup(x) <= t.
 * Leaf: feat == RF_CLEAF, kid = leaf number; its mean is leafv[kid].
 * Used when every threshold is a float, features <= 255 and a tree has
 * < 2^24 nodes; otherwise (e.g. files from another trainer) the 16-byte
 * nodes are walked.
 */
typedef struct rf_cnode {
  float thr;
  uint32_t kw;  /* kid << 8 | feat */
} rf_cnode;
#define RF_CLEAF 0xFFu

struct rf_forest {
  char *target;        /* owned, never NULL */
  char *gpu;           /* owned, never NULL ("" unknown) */
  size_t n_features;
  char **features;     /* owned */
  rf_params params;    /* resolved hyperparameters */
  rf_summary summary;
  size_t n_trees;
  rf_tree *trees;      /* n_trees, owned */
  double *mdi;         /* n_features */
  double *perm;        /* n_features, or NULL */
  rf_info info;        /* view filled by rf__fill_info */
  rf_cnode **cn;       /* n_trees compact node arrays, or NULL (no fast path) */
  double **leafv;      /* n_trees leaf means by leaf number */
};

/* Build the compact layout when the forest allows it (0; -1 out of
   memory).  Called by rf_train and rf_load. */
int rf__build_fast(rf_forest *f);
void rf__free_fast(rf_forest *f);

/* Allocation through the fault hook; sizes are checked for overflow. */
void *rf__malloc(size_t n);
void *rf__calloc(size_t n, size_t size);
void *rf__mallocn(size_t n, size_t size);
void *rf__realloc(void *p, size_t n);
char *rf__strdup(const char *s);
void rf__free(void *p);

/* Set the per-thread error (printf format); returns -1. */
int rf__err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The error says "out of memory"; returns -1. */
int rf__nomem(void);

/* Threads to use: n when n > 0, else the OpenMP default. */
int rf__nthreads(int n);

/* Free a tree's arrays. */
void rf__tree_free(rf_tree *t);
/* Refresh f->info from the fields. */
void rf__fill_info(rf_forest *f);
/* Sum of the leaf values of row across trees (transformed space). */
double rf__raw_mean(const rf_forest *f, const double *row);
double rf__untransform(int transform, double v);

/* xoshiro256** seeded by splitmix64: the same streams on every platform. */
typedef struct rf_rng { uint64_t s[4]; } rf_rng;
void rf__rng_seed(rf_rng *r, uint64_t seed, uint64_t stream);
uint64_t rf__rng_next(rf_rng *r);
/* Uniform in [0, n), n >= 1 (Lemire's unbiased method). */
uint64_t rf__rng_below(rf_rng *r, uint64_t n);
/* Uniform in [0, 1). */
double rf__rng_unit(rf_rng *r);

#endif
