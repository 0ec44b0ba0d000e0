/*
 * ptx_ops.c -- the instruction table and the name tables of ptx.h.
 *
 * ptx_op_info_table is generated from the PTX_OPS X-macro of ptx_ops.h, so
 * the enum and the table cannot drift apart (ORDER OP).  ptx_op_lookup maps a
 * mnemonic to its enum through a small open-addressing hash table that is
 * filled once (pthread_once) from the same X-macro; the parser calls it once
 * per distinct opcode key, so the lookup is far from the hot path anyway.
 *
 * The type, space and special-register name tables are indexed by their
 * enums (ORDER TYPE, ORDER SREG in ptx.h).
 */
#include "ptx_int.h"

#include <pthread.h>
#include <string.h>

const ptx_op_info ptx_op_info_table[PTX_OP_COUNT] = {
#define PTX_OP_ROW(e, name, mn, mx, fl) {name, mn, mx, fl},
  PTX_OPS(PTX_OP_ROW)
#undef PTX_OP_ROW
};

/* ------------------------------------------------------ mnemonic hash -- */

#define OP_HASH_SIZE 512 /* power of two, > 3 * PTX_OP_COUNT */
static int16_t op_hash[OP_HASH_SIZE];
static pthread_once_t op_hash_once = PTHREAD_ONCE_INIT;

static void op_hash_build(void) {
  for (unsigned i = 0; i < OP_HASH_SIZE; i++) op_hash[i] = -1;
  for (int op = 0; op < PTX_OP_COUNT; op++) {
    const char *n = ptx_op_info_table[op].name;
    uint32_t h = ptx_hash_bytes(n, strlen(n)) & (OP_HASH_SIZE - 1);
    while (op_hash[h] >= 0) h = (h + 1) & (OP_HASH_SIZE - 1);
    op_hash[h] = (int16_t)op;
  }
}

int ptx_op_lookup(const char *mnemonic, unsigned len) {
  pthread_once(&op_hash_once, op_hash_build);
  uint32_t h = ptx_hash_bytes(mnemonic, len) & (OP_HASH_SIZE - 1);
  for (;;) {
    int op = op_hash[h];
    if (op < 0) return -1;
    const char *n = ptx_op_info_table[op].name;
    if (strncmp(n, mnemonic, len) == 0 && n[len] == 0) return op;
    h = (h + 1) & (OP_HASH_SIZE - 1);
  }
}

/* -------------------------------------------------------------- types -- */

/* ORDER TYPE */
static const char *const type_names[PTX_T_COUNT] = {
  "", "pred",
  "b8", "b16", "b32", "b64", "b128",
  "u8", "u16", "u32", "u64",
  "s8", "s16", "s32", "s64",
  "f16", "f16x2", "bf16", "bf16x2",
  "tf32", "f32", "f64",
  "e4m3x2", "e5m2x2",
  "u16x2", "s16x2",
};

static const uint8_t type_sizes[PTX_T_COUNT] = {
  0, 1,
  1, 2, 4, 8, 16,
  1, 2, 4, 8,
  1, 2, 4, 8,
  2, 4, 2, 4,
  4, 4, 8,
  2, 2,
  4, 4,
};

unsigned ptx_type_size(ptx_type t) {
  return (unsigned)t < PTX_T_COUNT ? type_sizes[t] : 0;
}

const char *ptx_type_name(ptx_type t) {
  return (unsigned)t < PTX_T_COUNT ? type_names[t] : "";
}

static const char *const space_names[PTX_SP_COUNT] = {
  "", "generic", "global", "shared", "shared::cluster", "local", "param",
  "const", "tex", "reg",
};

const char *ptx_space_name(ptx_space s) {
  return (unsigned)s < PTX_SP_COUNT ? space_names[s] : "";
}

/* ---------------------------------------------------- special registers -- */

/* ORDER SREG (the 32 %envregN names are generated). */
static const char *const sreg_names[PTX_SR_ENVREG0] = {
  "%tid.x", "%tid.y", "%tid.z",
  "%ntid.x", "%ntid.y", "%ntid.z",
  "%ctaid.x", "%ctaid.y", "%ctaid.z",
  "%nctaid.x", "%nctaid.y", "%nctaid.z",
  "%laneid", "%warpid", "%nwarpid", "%smid", "%nsmid",
  "%gridid",
  "%lanemask_eq", "%lanemask_le", "%lanemask_lt",
  "%lanemask_ge", "%lanemask_gt",
  "%clock", "%clock_hi", "%clock64", "%globaltimer",
  "%globaltimer_lo", "%globaltimer_hi",
  "%dynamic_smem_size", "%total_smem_size",
  "%clusterid.x", "%clusterid.y", "%clusterid.z",
  "%nclusterid.x", "%nclusterid.y", "%nclusterid.z",
  "%cluster_ctaid.x", "%cluster_ctaid.y", "%cluster_ctaid.z",
  "%cluster_nctaid.x", "%cluster_nctaid.y", "%cluster_nctaid.z",
  "%cluster_ctarank", "%cluster_nctarank",
  "%reserved_smem_offset_begin", "%reserved_smem_offset_end", "%reserved_smem_offset_cap",
  "%reserved_smem_offset_0", "%reserved_smem_offset_1",
  "%aggr_smem_size", "%is_explicit_cluster", "%current_graph_exec",
};

static const char *const envreg_names[32] = {
  "%envreg0", "%envreg1", "%envreg2", "%envreg3", "%envreg4", "%envreg5",
  "%envreg6", "%envreg7", "%envreg8", "%envreg9", "%envreg10", "%envreg11",
  "%envreg12", "%envreg13", "%envreg14", "%envreg15", "%envreg16",
  "%envreg17", "%envreg18", "%envreg19", "%envreg20", "%envreg21",
  "%envreg22", "%envreg23", "%envreg24", "%envreg25", "%envreg26",
  "%envreg27", "%envreg28", "%envreg29", "%envreg30", "%envreg31",
};

const char *ptx_sreg_name(ptx_sreg s) {
  if ((unsigned)s < PTX_SR_ENVREG0) return sreg_names[s];
  if ((unsigned)s < PTX_SR_COUNT) return envreg_names[s - PTX_SR_ENVREG0];
  return "";
}

int ptx_sreg_lookup(const char *s, unsigned len) {
  if (len < 2 || s[0] != '%') return -1;
  for (int i = 0; i < PTX_SR_COUNT; i++) {
    const char *n = ptx_sreg_name((ptx_sreg)i);
    if (n[1] == s[1] && strncmp(n, s, len) == 0 && n[len] == 0) return i;
  }
  return -1;
}
