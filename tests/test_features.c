/*
 * test_features.c -- feature vectors, the instruction-class taxonomy, bytes
 * per memory key, and static features of kernels whose counts are known by
 * hand (saxpy from nvcc and clang, a module with .func calls and recursion).
 */
#include "tests.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "extractor/features.h"

/* A CUnit assertion whose failure report is the sentence it proves. */
#define ASSERT_MSG(msg, value) \
  CU_assertImplementation(!!(value), __LINE__, (msg), __FILE__, "", CU_FALSE)

/* ------------------------------------------------------------ feat_vec -- */

static void test_vec_basic(void) {
  feat_vec v;
  feat_init(&v);
  CU_ASSERT_EQUAL(feat_find(&v, "x"), -1);            /* empty: nothing found */
  CU_ASSERT_EQUAL(feat_get(&v, "x", 7.5), 7.5);       /* default when absent */
  CU_ASSERT_EQUAL(feat_set(&v, "a", 1.0), 0);
  CU_ASSERT_EQUAL(feat_set(&v, "a", 2.0), 0);         /* overwrite, no new name */
  CU_ASSERT_EQUAL(v.n, 1);
  CU_ASSERT_EQUAL(feat_get(&v, "a", 0), 2.0);
  CU_ASSERT_EQUAL(feat_add(&v, "b", 3.0), 0);         /* add inserts at 0 first */
  CU_ASSERT_EQUAL(feat_add(&v, "b", 0.5), 0);
  CU_ASSERT_EQUAL(feat_get(&v, "b", 0), 3.5);
  CU_ASSERT_EQUAL(feat_find(&v, "b"), 1);
  feat_free(&v);
  CU_ASSERT_EQUAL(v.n, 0);                            /* free leaves it empty... */
  CU_ASSERT_EQUAL(feat_set(&v, "c", 1.0), 0);         /* ...and reusable */
  CU_ASSERT_EQUAL(feat_get(&v, "c", 0), 1.0);
  feat_free(&v);
  feat_free(NULL);                                    /* NULL is accepted */
}

/* A reserved vector takes that many names without growing; names set
   with their hash computed once read back like any other, and the vector
   still grows past the reservation. */
static void test_vec_reserve_hashed(void) {
  feat_vec v;
  feat_init(&v);
  CU_ASSERT_EQUAL(feat_reserve(&v, 34), 0);
  size_t cap = v.cap;
  CU_ASSERT(cap >= 34 && cap < 128); /* sized for them, not the default 128 */
  CU_ASSERT_EQUAL(feat_reserve(&v, 10), 0); /* smaller: nothing changes */
  CU_ASSERT_EQUAL(v.cap, cap);
  char name[32];
  for (int i = 0; i < 34; i++) {
    snprintf(name, sizeof name, "opr.x%d", i);
    CU_ASSERT_EQUAL(feat_set_hashed(&v, name, feat_name_hash(name), i), 0);
  }
  CU_ASSERT_EQUAL(v.cap, cap); /* no growth within the reservation */
  CU_ASSERT_EQUAL(feat_set_hashed(&v, "opr.x3", feat_name_hash("opr.x3"), 30.5), 0);
  CU_ASSERT_EQUAL(v.n, 34); /* an overwrite, not a new name */
  for (int i = 34; i < 300; i++) {
    snprintf(name, sizeof name, "opr.x%d", i);
    CU_ASSERT_EQUAL_FATAL(feat_set(&v, name, i), 0);
  }
  int ok = 1;
  for (int i = 0; i < 300; i++) {
    snprintf(name, sizeof name, "opr.x%d", i);
    ok &= feat_get(&v, name, -1) == (i == 3 ? 30.5 : i);
  }
  ASSERT_MSG("names set hashed and plain read back after growing", ok && v.n == 300);
  feat_free(&v);
}

static void test_vec_many_and_sort(void) {
  feat_vec v;
  feat_init(&v);
  char name[64];
  const int N = 5000;
  for (int i = 0; i < N; i++) {
    snprintf(name, sizeof name, "op.key%05d.f32", (i * 7919) % N);
    CU_ASSERT_EQUAL_FATAL(feat_set(&v, name, i), 0);
  }
  CU_ASSERT_EQUAL(v.n, (size_t)N);                    /* all distinct names kept */
  int ok = 1;
  for (int i = 0; i < N; i++) {
    snprintf(name, sizeof name, "op.key%05d.f32", (i * 7919) % N);
    if (feat_get(&v, name, -1) != i) ok = 0;
  }
  ASSERT_MSG("every one of 5000 names reads back its value", ok);
  feat_sort(&v);
  int sorted = 1, indexed = 1;
  for (size_t i = 1; i < v.n; i++) if (strcmp(v.names[i - 1], v.names[i]) >= 0) sorted = 0;
  for (size_t i = 0; i < v.n; i++) if (feat_find(&v, v.names[i]) != (long)i) indexed = 0;
  ASSERT_MSG("feat_sort orders names bytewise", sorted);
  ASSERT_MSG("the index still finds every name at its new position", indexed);
  /* Values travelled with their names. */
  ok = 1;
  for (int i = 0; i < N; i++) {
    snprintf(name, sizeof name, "op.key%05d.f32", (i * 7919) % N);
    if (feat_get(&v, name, -1) != i) ok = 0;
  }
  ASSERT_MSG("values stay attached to their names after sorting", ok);
  CU_ASSERT_EQUAL(feat_add(&v, "aaa", 1), 0);         /* inserts still work after a sort */
  CU_ASSERT_EQUAL(feat_get(&v, "aaa", 0), 1);
  feat_free(&v);
}

/* ------------------------------------------------------------- classes -- */

static const struct { const char *key; feat_class c; } class_table[] = {
  {"ld.global.f32", FEAT_C_LD_GLOBAL},    {"ld.global.b32", FEAT_C_LD_GLOBAL},
  {"ld.global.nc.f32", FEAT_C_LD_GLOBAL}, {"ld.global.nc.v4.f32", FEAT_C_LD_GLOBAL},
  {"ld.volatile.global.f32", FEAT_C_LD_GLOBAL},
  {"ld.relaxed.gpu.global.b32", FEAT_C_LD_GLOBAL},
  {"ldu.global.f32", FEAT_C_LD_GLOBAL},   {"ld.param.u32", FEAT_C_LD_PARAM},
  {"ld.param.b64", FEAT_C_LD_PARAM},      {"st.param.b32", FEAT_C_ST_PARAM},
  {"ld.shared.b32", FEAT_C_LD_SHARED},    {"ld.shared::cta.u32", FEAT_C_LD_SHARED},
  {"st.shared.f32", FEAT_C_ST_SHARED},    {"ld.local.u32", FEAT_C_LD_LOCAL},
  {"st.local.b32", FEAT_C_ST_LOCAL},      {"ld.const.f32", FEAT_C_LD_CONST},
  {"ld.f32", FEAT_C_LD_GENERIC},          {"st.u32", FEAT_C_ST_GENERIC},
  {"st.global.f32", FEAT_C_ST_GLOBAL},    {"st.global.b32", FEAT_C_ST_GLOBAL},
  {"mov.b32", FEAT_C_MOVE},               {"mov.f32", FEAT_C_MOVE},
  {"mov.u32", FEAT_C_MOVE},               {"mov.b64", FEAT_C_MOVE},
  {"fma.rn.f32", FEAT_C_FP32},            {"fma.rn.f64", FEAT_C_FP64},
  {"add.f32", FEAT_C_FP32},               {"add.rn.ftz.f32", FEAT_C_FP32},
  {"mul.f32", FEAT_C_FP32},               {"neg.f32", FEAT_C_FP32},
  {"min.f32", FEAT_C_FP32},               {"div.rn.f64", FEAT_C_FP64},
  {"add.f16x2", FEAT_C_FP16},             {"abs.bf16", FEAT_C_FP16},
  {"fma.rn.f16", FEAT_C_FP16},
  {"mad.lo.s32", FEAT_C_INT_ARITH},       {"mul.wide.s32", FEAT_C_INT_ARITH},
  {"add.s64", FEAT_C_INT_ARITH},          {"div.s32", FEAT_C_INT_ARITH},
  {"max.u32", FEAT_C_INT_ARITH},          {"mul24.lo.u32", FEAT_C_INT_ARITH},
  {"bra.uni", FEAT_C_CONTROL},            {"bra", FEAT_C_CONTROL},
  {"ret", FEAT_C_CONTROL},                {"call.uni", FEAT_C_CONTROL},
  {"exit", FEAT_C_CONTROL},
  {"setp.ge.s32", FEAT_C_COMPARE},        {"setp.lt.f32", FEAT_C_COMPARE},
  {"selp.b32", FEAT_C_COMPARE},           {"cvta.to.global.u64", FEAT_C_CONVERT},
  {"cvt.rn.f32.s32", FEAT_C_CONVERT},     {"cvt.rzi.s32.f32", FEAT_C_CONVERT},
  {"atom.global.add.f32", FEAT_C_ATOMIC_GLOBAL},
  {"atom.add.f32", FEAT_C_ATOMIC_GLOBAL}, {"red.global.add.u32", FEAT_C_ATOMIC_GLOBAL},
  {"atom.shared.add.u32", FEAT_C_ATOMIC_SHARED},
  {"bar.sync", FEAT_C_SYNC},              {"membar.gl", FEAT_C_SYNC},
  {"fence.acq_rel.gpu", FEAT_C_SYNC},
  {"shfl.sync.down.b32", FEAT_C_WARP},    {"vote.sync.any.pred", FEAT_C_WARP},
  {"sqrt.rn.f32", FEAT_C_SPECIAL},        {"rsqrt.approx.f64", FEAT_C_SPECIAL},
  {"sin.approx.ftz.f32", FEAT_C_SPECIAL}, {"ex2.approx.f16", FEAT_C_SPECIAL},
  {"and.pred", FEAT_C_LOGIC},             {"shl.b32", FEAT_C_LOGIC},
  {"and.b32", FEAT_C_LOGIC},              {"not.pred", FEAT_C_LOGIC},
  {"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", FEAT_C_TENSOR},
  {"tex.2d.v4.f32.f32", FEAT_C_TEXTURE},  {"cp.async.ca.shared.global", FEAT_C_LD_GLOBAL},
  {"prefetch.global.L2", FEAT_C_OTHER},   {"nosuchop.f32", FEAT_C_OTHER},
  {"", FEAT_C_OTHER},
};

static void test_class_table(void) {
  int ok = 1;
  for (size_t i = 0; i < sizeof class_table / sizeof *class_table; i++) {
    feat_class c = feat_class_of_key(class_table[i].key);
    if (c != class_table[i].c) {
      ok = 0;
      fprintf(stderr, "\n  %s -> %s, expected %s\n", class_table[i].key,
              feat_class_name(c), feat_class_name(class_table[i].c));
    }
  }
  ASSERT_MSG("every key of the table maps to its documented class", ok);
  CU_ASSERT_EQUAL(feat_class_of_key(NULL), FEAT_C_OTHER);
}

static void test_class_untyped_spelling(void) {
  /* clang writes .b32/.b64 where nvcc writes .f32/.u64: same classes. */
  const char *pairs[][2] = {
    {"ld.global.b32", "ld.global.f32"}, {"st.global.b32", "st.global.f32"},
    {"ld.param.b32", "ld.param.f32"},   {"ld.param.b64", "ld.param.u64"},
    {"mov.b32", "mov.f32"},             {"ld.shared.b32", "ld.shared.f32"},
    {"st.shared.b64", "st.shared.f64"}, {"ld.global.nc.b32", "ld.global.nc.f32"},
    {"ld.local.b64", "ld.local.u64"},   {"st.param.b32", "st.param.f32"},
  };
  for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++)
    CU_ASSERT_EQUAL(feat_class_of_key(pairs[i][0]), feat_class_of_key(pairs[i][1]));
}

/* Every opcode of ptx_ops.h maps to a class consistent with its property
 * bits, for a bare key and for typed/spaced variants. */
static void test_class_exhaustive(void) {
  int ok = 1;
  char key[128];
  const char *suffixes[] = {"", ".f32", ".b32", ".global.f32", ".shared.u32", ".s64"};
  for (int op = 0; op < PTX_OP_COUNT; op++) {
    const ptx_op_info *oi = &ptx_op_info_table[op];
    for (size_t s = 0; s < sizeof suffixes / sizeof *suffixes; s++) {
      snprintf(key, sizeof key, "%s%s", oi->name, suffixes[s]);
      feat_class c = feat_class_of_key(key);
      int good = (unsigned)c < FEAT_C_COUNT;
      if (oi->flags & (PTX_OPF_BRANCH | PTX_OPF_CALL | PTX_OPF_RET | PTX_OPF_EXIT))
        good &= c == FEAT_C_CONTROL;
      if (oi->flags & (PTX_OPF_BARRIER | PTX_OPF_FENCE)) good &= c == FEAT_C_SYNC;
      if (oi->flags & PTX_OPF_TEX) good &= c == FEAT_C_TEXTURE;
      if ((oi->flags & PTX_OPF_WARP) && !(oi->flags & PTX_OPF_LOAD) &&
          !(oi->flags & PTX_OPF_STORE) && !(oi->flags & PTX_OPF_ASYNC))
        good &= c == FEAT_C_WARP || c == FEAT_C_TENSOR;
      if ((oi->flags & PTX_OPF_ATOMIC) && !(oi->flags & PTX_OPF_TEX))
        good &= c == FEAT_C_ATOMIC_GLOBAL || c == FEAT_C_ATOMIC_SHARED;
      if (op == PTX_OP_LD || op == PTX_OP_LDU)
        good &= c >= FEAT_C_LD_GLOBAL && c <= FEAT_C_ST_GENERIC && c != FEAT_C_ST_GLOBAL &&
                c != FEAT_C_ST_SHARED && c != FEAT_C_ST_LOCAL && c != FEAT_C_ST_PARAM &&
                c != FEAT_C_ST_GENERIC;
      if (op == PTX_OP_ST)
        good &= c == FEAT_C_ST_GLOBAL || c == FEAT_C_ST_SHARED || c == FEAT_C_ST_LOCAL ||
                c == FEAT_C_ST_PARAM || c == FEAT_C_ST_GENERIC;
      /* A known mnemonic is recognised: only the explicit "other" list may
       * land in class other. */
      if (c == FEAT_C_OTHER) {
        static const int others[] = {
          PTX_OP_ALLOCA, PTX_OP_APPLYPRIORITY, PTX_OP_BRKPT, PTX_OP_CREATEPOLICY,
          PTX_OP_DISCARD, PTX_OP_GETCTARANK, PTX_OP_MAPA, PTX_OP_MULTIMEM,
          PTX_OP_NANOSLEEP, PTX_OP_PMEVENT, PTX_OP_PREFETCH, PTX_OP_PREFETCHU,
          PTX_OP_SETMAXNREG, PTX_OP_STACKRESTORE, PTX_OP_STACKSAVE, PTX_OP_CP};
        int listed = 0;
        for (size_t j = 0; j < sizeof others / sizeof *others; j++) listed |= others[j] == op;
        good &= listed;
      }
      if (!good) {
        ok = 0;
        fprintf(stderr, "\n  %s -> %s contradicts its op-table flags\n", key, feat_class_name(c));
      }
    }
  }
  ASSERT_MSG("every ptx_ops.h opcode maps to a class consistent with its flags", ok);
  /* Class names are distinct and non-empty. */
  int distinct = 1;
  for (int a = 0; a < FEAT_C_COUNT; a++) {
    if (!*feat_class_name((feat_class)a)) distinct = 0;
    for (int b = a + 1; b < FEAT_C_COUNT; b++)
      if (!strcmp(feat_class_name((feat_class)a), feat_class_name((feat_class)b))) distinct = 0;
  }
  ASSERT_MSG("class names are distinct and non-empty", distinct);
  CU_ASSERT_STRING_EQUAL(feat_class_name(FEAT_C_FP32), "fp32");
  CU_ASSERT_STRING_EQUAL(feat_class_name(FEAT_C_LD_GLOBAL), "ld_global");
  CU_ASSERT_STRING_EQUAL(feat_class_name(FEAT_C_COUNT), "other");
}

static void test_mem_bytes(void) {
  static const struct { const char *key; unsigned bytes; } t[] = {
    {"ld.global.v4.f32", 16}, {"st.shared.u8", 1},     {"atom.global.add.f32", 4},
    {"ld.global.b32", 4},     {"ld.global.f64", 8},    {"st.global.v2.f64", 16},
    {"atom.global.cas.b64", 8}, {"red.global.add.u32", 4}, {"ld.global.nc.v4.u32", 16},
    {"ldu.global.v2.f32", 8}, {"ld.global.b128", 16},  {"ld.param.u64", 8},
    {"st.global.v4.b16", 8},  {"add.f32", 0},          {"bra.uni", 0},
    {"mov.b64", 0},           {"", 0},
  };
  for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
    unsigned b = feat_mem_bytes_of_key(t[i].key);
    if (b != t[i].bytes)
      fprintf(stderr, "\n  %s: %u bytes, expected %u\n", t[i].key, b, t[i].bytes);
    CU_ASSERT_EQUAL(b, t[i].bytes);
  }
}

/* ------------------------------------------------------ static features -- */

static ptx_module *load(const char *path) {
  ptx_error err;
  memset(&err, 0, sizeof err);
  ptx_module *m = ptx_parse_file(path, &err);
  if (!m) fprintf(stderr, "\n  %s\n", err.msg);
  return m;
}

static int static_of(ptx_module *m, const char *kernel, feat_vec *v) {
  feat_init(v);
  const ptx_func *k = ptx_find_func(m, kernel);
  if (!k) return -1;
  ptx_error err;
  memset(&err, 0, sizeof err);
  return feat_static(m, k, v, &err);
}

static void test_static_saxpy(void) {
  ptx_module *m = load("tests/ptx/saxpy_nvcc.ptx");
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  feat_vec v;
  CU_ASSERT_EQUAL_FATAL(static_of(m, "_Z5saxpyifPKfPf", &v), 0);
  /* Counted by hand from the file. */
  CU_ASSERT_EQUAL(feat_get(&v, "static.op.ld.global.f32", -1), 2);
  CU_ASSERT_EQUAL(feat_get(&v, "static.op.st.global.f32", -1), 1);
  CU_ASSERT_EQUAL(feat_get(&v, "static.op.fma.rn.f32", -1), 1);
  CU_ASSERT_EQUAL(feat_get(&v, "static.op.ld.param.u64", -1), 2);
  CU_ASSERT_EQUAL(feat_get(&v, "static.op.mov.u32", -1), 3);
  CU_ASSERT_EQUAL(feat_get(&v, "static.op.bra", -1), 1);
  CU_ASSERT_EQUAL(feat_get(&v, "static.op.ret", -1), 1);
  CU_ASSERT_EQUAL(feat_get(&v, "static.op.add.f32", -1), -1); /* absent keys are absent */
  CU_ASSERT_EQUAL(feat_get(&v, "static.insns", -1), 20);
  CU_ASSERT_EQUAL(feat_get(&v, "static.blocks", -1), 3);
  CU_ASSERT_EQUAL(feat_get(&v, "static.loops", -1), 0);
  CU_ASSERT_EQUAL(feat_get(&v, "static.max_loop_depth", -1), 0);
  CU_ASSERT_EQUAL(feat_get(&v, "static.branches", -1), 1);
  CU_ASSERT_EQUAL(feat_get(&v, "static.calls", -1), 0);
  CU_ASSERT_EQUAL(feat_get(&v, "static.class.ld_global", -1), 2);
  CU_ASSERT_EQUAL(feat_get(&v, "static.class.st_global", -1), 1);
  CU_ASSERT_EQUAL(feat_get(&v, "static.class.ld_param", -1), 4);
  CU_ASSERT_EQUAL(feat_get(&v, "static.class.fp32", -1), 1);
  CU_ASSERT_EQUAL(feat_get(&v, "static.class.int_arith", -1), 4); /* mad, mul.wide, 2 add.s64 */
  CU_ASSERT_EQUAL(feat_get(&v, "static.class.move", -1), 3);
  CU_ASSERT_EQUAL(feat_get(&v, "static.class.compare", -1), 1);
  CU_ASSERT_EQUAL(feat_get(&v, "static.class.convert", -1), 2);
  CU_ASSERT_EQUAL(feat_get(&v, "static.class.control", -1), 2);
  CU_ASSERT_EQUAL(feat_get(&v, "static.class.fp64", -1), 0);  /* every class is present */
  CU_ASSERT_EQUAL(feat_get(&v, "static.regs.pred", -1), 2);
  CU_ASSERT_EQUAL(feat_get(&v, "static.regs.f32", -1), 5);
  CU_ASSERT_EQUAL(feat_get(&v, "static.regs.b32", -1), 6);
  CU_ASSERT_EQUAL(feat_get(&v, "static.regs.b64", -1), 8);
  CU_ASSERT_EQUAL(feat_get(&v, "static.params", -1), 4);
  CU_ASSERT_EQUAL(feat_get(&v, "static.param_bytes", -1), 24); /* u32 f32 | u64 u64 */
  CU_ASSERT_EQUAL(feat_get(&v, "static.shared_bytes", -1), 0);
  CU_ASSERT_EQUAL(feat_get(&v, "static.local_bytes", -1), 0);
  /* Every name carries the static. prefix. */
  int prefixed = 1;
  for (size_t i = 0; i < v.n; i++) if (strncmp(v.names[i], "static.", 7)) prefixed = 0;
  ASSERT_MSG("every static feature name starts with static.", prefixed);
  feat_free(&v);
  ptx_module_free(m);
}

static void test_static_compiler_independent(void) {
  /* nvcc and clang spell saxpy differently; the class mix is the same. */
  ptx_module *a = load("tests/ptx/saxpy_nvcc.ptx"), *b = load("tests/ptx/saxpy_clang.ptx");
  CU_ASSERT_PTR_NOT_NULL_FATAL(a);
  CU_ASSERT_PTR_NOT_NULL_FATAL(b);
  feat_vec va, vb;
  CU_ASSERT_EQUAL_FATAL(static_of(a, "_Z5saxpyifPKfPf", &va), 0);
  CU_ASSERT_EQUAL_FATAL(static_of(b, "_Z5saxpyifPKfPf", &vb), 0);
  CU_ASSERT_EQUAL(feat_get(&vb, "static.op.ld.global.b32", -1), 2);
  int same = 1;
  char name[128];
  for (int c = 0; c < FEAT_C_COUNT; c++) {
    snprintf(name, sizeof name, "static.class.%s", feat_class_name((feat_class)c));
    if (feat_get(&va, name, -1) != feat_get(&vb, name, -2)) {
      same = 0;
      fprintf(stderr, "\n  %s: nvcc %g clang %g\n", name, feat_get(&va, name, -1),
              feat_get(&vb, name, -2));
    }
  }
  ASSERT_MSG("saxpy's class counts agree between nvcc and clang PTX", same);
  CU_ASSERT_EQUAL(feat_get(&va, "static.insns", -1), feat_get(&vb, "static.insns", -2));
  feat_free(&va);
  feat_free(&vb);
  ptx_module_free(a);
  ptx_module_free(b);
}

static const char calls_ptx[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".func (.param .b32 ret0) twice(.param .b32 a)\n{\n"
    "  .reg .b32 %r<3>;\n"
    "  ld.param.b32 %r1, [a];\n"
    "  shl.b32 %r2, %r1, 1;\n"
    "  st.param.b32 [ret0], %r2;\n"
    "  ret;\n}\n"
    ".func spin(.param .b32 a)\n{\n"
    "  .reg .b32 %r<3>;\n  .reg .pred %p<2>;\n"
    "  ld.param.b32 %r1, [a];\n"
    "  setp.eq.s32 %p1, %r1, 0;\n"
    "  @%p1 bra $L_done;\n"
    "  sub.s32 %r2, %r1, 1;\n"
    "  {\n  .param .b32 q;\n  st.param.b32 [q], %r2;\n  call.uni spin, (q);\n  }\n"
    "$L_done:\n"
    "  ret;\n}\n"
    ".visible .entry k(.param .u32 n)\n{\n"
    "  .reg .b32 %r<4>;\n"
    "  ld.param.u32 %r1, [n];\n"
    "  {\n  .param .b32 p0;\n  .param .b32 r0;\n  st.param.b32 [p0], %r1;\n"
    "  call.uni (r0), twice, (p0);\n  ld.param.b32 %r2, [r0];\n  }\n"
    "  {\n  .param .b32 p1;\n  .param .b32 r1;\n  st.param.b32 [p1], %r2;\n"
    "  call.uni (r1), twice, (p1);\n  ld.param.b32 %r3, [r1];\n  }\n"
    "  {\n  .param .b32 p2;\n  st.param.b32 [p2], %r3;\n  call.uni spin, (p2);\n  }\n"
    "  ret;\n}\n";

static void test_static_calls(void) {
  ptx_error err;
  memset(&err, 0, sizeof err);
  ptx_module *m = ptx_parse(calls_ptx, strlen(calls_ptx), "calls.ptx", &err);
  if (!m) fprintf(stderr, "\n  %s\n", err.msg);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  feat_vec v;
  CU_ASSERT_EQUAL_FATAL(static_of(m, "k", &v), 0);
  CU_ASSERT_EQUAL(feat_get(&v, "static.op.shl.b32", -1), 2);   /* twice() per call site */
  CU_ASSERT_EQUAL(feat_get(&v, "static.op.sub.s32", -1), 1);   /* recursion counted once */
  CU_ASSERT_EQUAL(feat_get(&v, "static.op.call.uni", -1), 4);  /* 3 in k, 1 in spin */
  CU_ASSERT_EQUAL(feat_get(&v, "static.calls", -1), 4);
  CU_ASSERT_EQUAL(feat_get(&v, "static.op.ret", -1), 4);       /* k, twice x2, spin */
  CU_ASSERT_EQUAL(feat_get(&v, "static.insns", -1), 25);       /* 10 + 2*4 + 7 */
  CU_ASSERT_EQUAL(feat_get(&v, "static.blocks", -1), 6);       /* 1 + 2*1 + 3 */
  CU_ASSERT_EQUAL(feat_get(&v, "static.branches", -1), 1);
  CU_ASSERT_EQUAL(feat_get(&v, "static.params", -1), 1);
  CU_ASSERT_EQUAL(feat_get(&v, "static.param_bytes", -1), 4);
  feat_free(&v);
  /* The .func alone: its own counts, nothing from its caller. */
  CU_ASSERT_EQUAL_FATAL(static_of(m, "twice", &v), 0);
  CU_ASSERT_EQUAL(feat_get(&v, "static.insns", -1), 4);
  feat_free(&v);
  ptx_module_free(m);
}

static void test_static_memory(void) {
  ptx_module *m = load("tests/ptx/reduce_nvcc.ptx");
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  feat_vec v;
  CU_ASSERT_EQUAL_FATAL(static_of(m, "_Z6reducePKfPfi", &v), 0);
  /* warpsum[32] floats; buf[] is unsized (dynamic) and adds nothing. */
  CU_ASSERT_EQUAL(feat_get(&v, "static.shared_bytes", -1), 128);
  /* note() has an 8-byte local depot and is reachable through a call. */
  CU_ASSERT_EQUAL(feat_get(&v, "static.local_bytes", -1), 8);
  /* scale() reads table[] with ld.global.f32: counted into the kernel. */
  CU_ASSERT_TRUE(feat_get(&v, "static.op.ld.global.f32", 0) >= 3);
  CU_ASSERT_EQUAL(feat_get(&v, "static.calls", -1), 3);         /* scale, note, vprintf */
  CU_ASSERT_EQUAL(feat_get(&v, "static.loops", -1), 1);         /* the s-loop; shuffles unrolled */
  CU_ASSERT_TRUE(feat_get(&v, "static.class.atomic_global", 0) >= 3);
  CU_ASSERT_TRUE(feat_get(&v, "static.class.warp", 0) >= 5);
  feat_free(&v);
  ptx_module_free(m);
}

TEST_SUITES(features_suites) {
  CU_pSuite s = tests_suite("features");
  TEST_ADD(s, test_vec_basic);
  TEST_ADD(s, test_vec_reserve_hashed);
  TEST_ADD(s, test_vec_many_and_sort);
  TEST_ADD(s, test_class_table);
  TEST_ADD(s, test_class_untyped_spelling);
  TEST_ADD(s, test_class_exhaustive);
  TEST_ADD(s, test_mem_bytes);
  TEST_ADD(s, test_static_saxpy);
  TEST_ADD(s, test_static_compiler_independent);
  TEST_ADD(s, test_static_calls);
  TEST_ADD(s, test_static_memory);
}
