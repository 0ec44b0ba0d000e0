/*
 * analytic.c -- the analytic estimate of a launch's time and power on a GPU
 * of the table (gpus.c), from the launch's dynamic features alone.
 *
 * Why: a trained forest needs measurements on the GPU in question; this
 * answers for every GPU of the table from datasheet figures and the
 * architecture's documented rates, so `kcast predict --gpu` has something
 * to say before any data exists, and a forest trained on some GPUs and
 * kernels learns the ratio of the measured time to this one (its base),
 * which is what lets it speak of a kernel or a GPU it has not seen.  It
 * must above all *rank* the configurations of one kernel on one GPU, which
 * is what a tuner and a scheduler ask.  It is not fitted to measurements:
 * its band (x0.5..x2 for time, x0.7..x1.3 for power) says so.
 *
 * The model (docs/gpus.md, "The analytic estimate"), per SM:
 *
 *   instructions  the machine code's instructions from the PTX counts:
 *                 one per PTX instruction of a class, none for register
 *                 moves, parameter loads, address-space conversions and
 *                 predicate logic (folded by ptxas), several for the PTX
 *                 instructions ptxas expands (IEEE division and square
 *                 root, integer division: an_ops);
 *   pipes         each class on its functional unit at the architecture's
 *                 rate (the CUDA C++ Programming Guide's throughput table,
 *                 lanes_of); inactive lanes of a warp cost as active ones;
 *   issue         one warp instruction a clock per scheduler;
 *   memory unit   every warp-level shared, global, local, texture and
 *                 indexed-constant access takes at least LSU_MIN clocks
 *                 of the SM's load/store path, a conflicted shared access
 *                 one per wavefront, a global one one per 128 bytes;
 *   latency       a warp's dependent chain: its instructions over its
 *                 instruction-level parallelism, each ALU_LAT clocks, and
 *                 its loads at the latency of the level that serves them
 *                 (cache.c) over the same parallelism; R resident CTAs
 *                 hide each other's chains;
 *   rounds        an SM runs its CTAs in rounds of R: a round takes the
 *                 larger of its throughput (the SM terms above, combined
 *                 as an L_P norm: they overlap, but not perfectly) and
 *                 one warp's chain; the last round is partial (the tail);
 *   GPU-wide      L2 and DRAM bandwidth for the traffic cache.c says
 *                 reaches them;
 *   time        = OVERHEAD + the L_P norm of the SM time, the L2 time and
 *                 the DRAM time.
 *
 * Power = idle + (TDP - idle) x utilisation, where utilisation weighs the
 * compute and memory terms' share of the body time, the fraction of SMs
 * with work and the share of the time not spent in the fixed overhead.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "model/an_int.h"
#include "model/model.h"
#include "model/rf_int.h"

/* Constants of the estimate (documented in docs/gpus.md). */
#define OVERHEAD_US 2.0      /* launch + drain of an empty kernel */
#define BW_EFF 0.85          /* sustained / peak DRAM bandwidth */
#define L2_BW 3.0            /* L2 bandwidth as a multiple of DRAM peak */
#define LAT_L1 33.0          /* load latency, cycles: L1 hit */
#define LAT_L2 230.0         /* L2 hit */
#define LAT_DRAM 500.0       /* DRAM */
#define LAT_SHARED 28.0      /* shared-memory load */
#define LAT_ALU 5.0          /* a dependent arithmetic instruction */
#define LSU_MIN 2.0          /* clocks per warp-level memory access (cc >= 7.0) */
#define NORM_P 2.0           /* the L_P norm of overlapping terms */
#define ILP_DEFAULT 2.0      /* a launch without ctrl.ilp */

/*
 * The features the estimate reads, gathered in one pass over the launch's
 * names: it looked each one up by a scan of them all, some forty scans a
 * call, which were half of a kcast_predict with a forest whose base is
 * an.time_us.  key_find looks a name up in key_name; the first
 * occurrence of a name counts, as the scans found it.  (The K_* order is
 * an_int.h's.)
 */
static const char *const key_name[K_N] = {
  "class.atomic_global", "class.compare", "class.convert", "class.fp16", "class.fp32",
  "class.fp64", "class.int_arith", "class.ld_const", "class.ld_global", "class.ld_shared",
  "class.logic", "class.special", "class.st_global", "class.st_shared", "class.ld_local",
  "class.st_local", "class.move", "class.ld_param", "class.st_param", "class.texture",
  "class.warp", "class.tensor", "class.ld_generic", "class.st_generic", "class.atomic_shared",
  "class.control", "class.sync", "class.other",
  "ctrl.active_lane_ratio", "ctrl.warp_insns", "ctrl.ilp",
  "launch.block_x", "launch.block_y", "launch.block_z", "launch.ctas", "launch.grid_x",
  "launch.grid_y", "launch.shared_bytes", "launch.threads",
  "mem.footprint_bytes", "mem.global_accesses", "mem.global_bytes", "mem.global_load_bytes",
  "mem.global_sectors", "mem.global_load_sectors", "mem.global_store_bytes", "mem.local_bytes",
  "mem.shared_accesses", "mem.shared_bank_replays", "mem.const_accesses", "mem.const_replays",
  "mem.store_footprint_bytes", "mem.cta_reuse", "mem.share_x", "mem.share_y", "mem.share_z",
  "mem.share_far",
  "mem.reuse_lt_512", "mem.reuse_lt_1k", "mem.reuse_lt_2k", "mem.reuse_lt_4k",
  "mem.reuse_lt_8k", "mem.reuse_lt_16k", "mem.reuse_lt_32k", "mem.reuse_lt_64k",
  "mem.reuse_lt_128k", "mem.reuse_lt_256k", "mem.reuse_lt_512k", "mem.reuse_lt_1m",
  "mem.reuse_lt_2m", "mem.reuse_lt_4m",
  "static.shared_bytes", "static.insns", "tensor.flops",
};

/*
 * key_name by a hash of the name's length and three of its characters (no
 * pass over the whole name), in a table of KEY_SLOTS built once; one
 * memcmp confirms.  A binary search of key_name (strcmp at each of about
 * five steps for each of a launch's sixty-odd names) was a fifth of a
 * kcast_predict on the Mangrove T4 forest.
 */
#define KEY_SLOTS 256 /* a power of two, over 2 x K_N */
static unsigned char key_slot[KEY_SLOTS]; /* key + 1, 0 when empty */
static unsigned char key_len[K_N];
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

static inline unsigned key_hash(const char *c, size_t len) {
  return (unsigned)(len * 37u + (unsigned char)c[len - 1] * 11u + (unsigned char)c[len - 2] * 5u +
                    (unsigned char)c[len / 2] * 3u) & (KEY_SLOTS - 1);
}

static void key_build(void) {
  for (int k = 0; k < K_N; k++) {
    size_t len = strlen(key_name[k]);
    key_len[k] = (unsigned char)len;
    unsigned s = key_hash(key_name[k], len);
    while (key_slot[s]) s = (s + 1) & (KEY_SLOTS - 1);
    key_slot[s] = (unsigned char)(k + 1);
  }
}

static long key_find(const char *c) {
  size_t len = strlen(c);
  if (len < 2) return -1;
  for (unsigned s = key_hash(c, len);; s = (s + 1) & (KEY_SLOTS - 1)) {
    int k = key_slot[s] - 1;
    if (k < 0) return -1;
    if (key_len[k] == len && !memcmp(c, key_name[k], len)) return k;
  }
}

/* The ptxas.sm_XY.<what> columns read (ptxas_pick). */
static const char *const ptx_what[P_N] = {"smem_bytes", "registers", "spill_store_bytes",
                                          "spill_load_bytes"};

/*
 * A ptxas.sm_XY.<what> column (c + 9 is past "ptxas.sm_") for the
 * architecture nearest to cc: XY itself, else the newest one of the same
 * major version not newer than cc, else the newest one not newer, else the
 * oldest one (register counts change little between neighbouring
 * architectures; docs/features.md).  The best-ranked column wins, the
 * first of equals.
 */
static void ptxas_pick(an_in *in, const char *c, double v, int cc) {
  char *e;
  long a = strtol(c, &e, 10);
  if (e == c || a <= 0 || a > 999 || e[0] != '.') return;
  for (int k = 0; k < P_N; k++) {
    if (strcmp(e + 1, ptx_what[k])) continue;
    /* rank: exact 4, same major and older 3, older 2, newer 1 (then by
       closeness) */
    int arch = (int)a;
    int rank = arch == cc ? 4 : arch < cc && arch / 10 == cc / 10 ? 3 : arch < cc ? 2 : 1;
    int score = rank * 1000 + (arch <= cc ? arch : 999 - arch);
    if (score > in->ptx_score[k]) {
      in->ptx_score[k] = score;
      in->ptx[k] = v;
    }
    return;
  }
}

/* c starts with p (a literal: the loop unrolls; it stops at c's end, as
   strncmp, but with no call for each of a launch's names). */
static inline int starts(const char *c, const char *p) {
  for (; *p; c++, p++)
    if (*c != *p) return 0;
  return 1;
}

/* The last dot-separated token of key k ("f32" of "div.rn.f32"). */
static const char *last_tok(const char *k) {
  const char *d = strrchr(k, '.');
  return d ? d + 1 : k;
}

/* A type token is a float ("f16", "f32", "f64", "bf16", "tf32", ...). */
static inline int is_float_tok(const char *t) {
  return t[0] == 'f' || (t[0] == 'b' && t[1] == 'f') || (t[0] == 't' && t[1] == 'f');
}

/* 64 bits: "s64", "u64", "b64", "f64". */
static inline int is_64(const char *t) { return strstr(t, "64") != NULL; }

/*
 * The machine code of opcode key k (after "op."), executed v times: what
 * it adds to or takes from the class counts (an_ops; docs/gpus.md
 * "Instructions").  The expansions are ptxas's for the IEEE-rounded forms
 * with default flags: a division is a reciprocal on the special-function
 * unit refined by fused multiply-adds and a range check, an integer
 * division a float reciprocal, conversions and a multiply-subtract
 * correction, a 64-bit one a called routine.  Keys the machine code does
 * not execute as instructions of their own: cvta (an address), predicate
 * and/or/xor/not (the setp that makes the predicate absorbs them).
 */
static void op_fix(an_ops *o, const char *k, double v) {
  const char *t = last_tok(k);
  switch (k[0]) {
    case 'd':
      if (!starts(k, "div.")) return;
      if (is_float_tok(t)) {
        if (is_64(t)) { o->fp64 += 7 * v; o->sfu += v; o->intg += 2 * v; }
        else if (strstr(k, ".approx") || strstr(k, ".full")) o->sfu += v;
        else { o->fp32 += 5 * v; o->sfu += v; o->intg += 2 * v; }
      } else if (is_64(t)) {
        o->intg += 45 * v;
      } else {
        o->intg += 9 * v; o->cvt += 2 * v; o->sfu += v;
      }
      return;
    case 'r':
      if (starts(k, "rem.")) {
        if (is_64(t)) o->intg += 45 * v;
        else { o->intg += 10 * v; o->cvt += 2 * v; o->sfu += v; }
      } else if (starts(k, "rcp.") && !strstr(k, ".approx")) {
        if (is_64(t)) o->fp64 += 4 * v;
        else { o->fp32 += 4 * v; o->intg += v; }
      }
      return;
    case 's':
      if (starts(k, "sqrt.") && !strstr(k, ".approx")) {
        if (is_64(t)) { o->fp64 += 8 * v; o->intg += 2 * v; }
        else { o->fp32 += 4 * v; o->intg += 2 * v; }
      }
      return;
    case 'c':
      if (starts(k, "cvta")) {
        o->free_ops += v;
      } else if (starts(k, "cvt.")) {
        /* the last two tokens are the destination and source types */
        const char *b = t, *a = b - 2;
        while (a > k && *a != '.') a--;
        if (*a == '.') a++;
        if (!is_float_tok(a) && !is_float_tok(b)) o->cvt_int += v;
      }
      return;
    case 'a': case 'o': case 'x': case 'n':
      if (!strcmp(t, "pred") && (starts(k, "and.") || starts(k, "or.") || starts(k, "xor.") ||
                                 starts(k, "not."))) {
        o->free_ops += v;
        o->logic_free += v;
      }
      return;
    case 'l':
      if (starts(k, "ld.global.nc") || starts(k, "ldu.")) o->nc += v;
      return;
  }
}

void an__gather(const char *const *names, const double *vals, size_t n, int cc, an_in *in) {
  pthread_once(&key_once, key_build);
  memset(in, 0, sizeof *in);
  for (int k = 0; k < P_N; k++) {
    in->ptx[k] = NAN;
    in->ptx_score[k] = -1;
  }
  for (size_t i = 0; i < n; i++) {
    const char *c = names[i];
    /* every name read starts with one of these (arg.*, emu.*, ... read
       none) */
    if (!c || (c[0] != 'c' && c[0] != 'l' && c[0] != 'm' && c[0] != 'p' && c[0] != 's' &&
               c[0] != 'o' && c[0] != 't'))
      continue;
    if (c[0] == 'o') {
      if (c[1] == 'p' && c[2] == '.') op_fix(&in->ops, c + 3, vals[i]);
      continue;
    }
    if (c[0] == 'p' && starts(c, "ptxas.sm_")) {
      ptxas_pick(in, c + 9, vals[i], cc);
      continue;
    }
    if (c[0] == 'c' && starts(c, "class.")) in->class_sum += vals[i];
    long k = key_find(c);
    if (k >= 0 && !in->have[k]) {
      in->have[k] = 1;
      in->v[k] = vals[i];
    }
  }
}

/* Value of key k, dflt when absent. */
static inline double in_or(const an_in *in, int k, double dflt) {
  return in->have[k] ? in->v[k] : dflt;
}

/* Threads per CTA: block_x x block_y x block_z (an absent y or z counts
   1), else launch.threads / ctas. */
static double threads_per_cta(const an_in *in, double ctas) {
  double tpc = in->v[K_BX] * in_or(in, K_BY, 1) * in_or(in, K_BZ, 1);
  if (!(tpc > 0) && ctas > 0) tpc = in->v[K_THREADS] / ctas;
  return tpc;
}

/* The launch's CTAs and threads per CTA, checked; -1 naming what is wrong. */
static int launch_shape(const an_in *in, double *ctas, double *tpc) {
  *ctas = in->v[K_CTAS];
  *tpc = threads_per_cta(in, *ctas);
  if (!(*ctas >= 1) || !(*tpc >= 1))
    return rf__err("the features need launch.ctas and launch.block_x/y/z (positive)");
  if (*tpc > 1024) return rf__err("launch has %.0f threads per CTA (at most 1024)", *tpc);
  return 0;
}

/* an_occupancy_of on gathered features. */
int an__occupancy(const an_gpu *g, const an_in *in, an_occupancy *o) {
  memset(o, 0, sizeof *o);
  double ctas, tpc;
  if (launch_shape(in, &ctas, &tpc)) return -1;
  double smem = in->ptx[P_SMEM], regs = in->ptx[P_REGS], sst = in->ptx[P_SST],
         sld = in->ptx[P_SLD];
  o->tpc = tpc;
  o->wpc = ceil(tpc / 32);
  o->shared = in->v[K_LSHARED] + (isnan(smem) ? in->v[K_SSHARED] : smem);
  o->regs = isnan(regs) || regs < 0 ? 0 : regs;
  o->spill_bytes = (isnan(sst) ? 0 : sst) + (isnan(sld) ? 0 : sld);
  o->fits = 1;
  double res = g->max_ctas_per_sm;
  o->limiter = AN_LIMIT_CTAS;
  double by_threads = floor(g->max_threads_per_sm / (o->wpc * 32));
  if (by_threads < res) { res = by_threads; o->limiter = AN_LIMIT_THREADS; }
  if (o->regs > 0) {
    /* registers are allocated per warp in units of 256 */
    double per_warp = ceil(o->regs * 32 / 256) * 256;
    double by_regs = floor(g->regs_per_sm / (per_warp * o->wpc));
    if (o->regs > g->max_regs_per_thread) by_regs = 0;
    if (by_regs < res) { res = by_regs; o->limiter = AN_LIMIT_REGS; }
  }
  if (o->shared > 0) {
    /* the system's reservation per CTA, in allocation units (128 bytes
       from cc 8.0, 256 before) */
    double unit = g->cc_major >= 8 ? 128 : 256;
    double per_cta = ceil((o->shared + g->smem_reserved_b) / unit) * unit;
    double by_smem = floor(g->smem_per_sm_kb * 1024 / per_cta);
    if (o->shared > g->smem_per_cta_kb * 1024) by_smem = 0;
    if (by_smem < res) { res = by_smem; o->limiter = AN_LIMIT_SHARED; }
  }
  if (res < 1) { res = 1; o->fits = 0; } /* the launch would fail; counted as one */
  o->ctas_per_sm = res;
  o->warps_per_sm = res * o->wpc;
  o->occupancy = o->warps_per_sm / (g->max_threads_per_sm / 32.0);
  o->waves = ctas / (g->sms * res);
  o->tail = ceil(o->waves) - o->waves;
  o->busy_sms = fmin(1.0, ctas / g->sms);
  return 0;
}

int an_occupancy_of(const an_gpu *g, const char *const *names, const double *vals, size_t n,
                    an_occupancy *o) {
  if (!g || !o || (n && (!names || !vals))) return rf__err("an_occupancy_of: NULL argument");
  an_in in;
  an__gather(names, vals, n, g->cc_major * 10 + g->cc_minor, &in);
  return an__occupancy(g, &in, o);
}

/* Results per clock per SM of each pipe on compute capability cc (the
   CUDA C++ Programming Guide's table of arithmetic instruction
   throughput), and whether FP32 and integer instructions share half of
   the FP32 lanes (GA10x, AD10x). */
typedef struct lanes {
  double fp32, fp16, fp64, intg, sfu, cvt, shfl, issue;
  int fp_int_shared;
} lanes;

/*
 * The power limit.  Boost clocks are set for the card's power limit only
 * where that card's FP32 work fits it: a low-power card of an architecture
 * (T4, P4, L4: 70-75 W) runs a long FP32-bound kernel at a fraction of its
 * boost clock.  The dynamic power of that work at the boost clock is the
 * architecture's energy per FP32 flop (pj_per_flop: its full-power cards'
 * board power over idle divided by their FP32 peak, the cards that run SGEMM
 * at their limit, rounded down so that those fit theirs) times the peak and
 * the busy share; over tdp_w - idle_w the clock, and with it the FP32 rate,
 * drops by that ratio (power taken
 * proportional to the clock, as near the lowest voltages).  The limiter
 * averages power over AN_POWER_TAU_US: a shorter kernel runs near the boost
 * clock, a longer one approaches the reduced clock.  Measured on NeuSight's
 * GEMMs (docs/gpus.md): longer than 10 ms, the T4 runs 2.1-2.5x and the P4
 * 1.8-2.8x the estimate at boost, 1.3x and 1.1x at 300 us; the P100, V100
 * and A100 within 1.1x at every length.
 */
#define AN_POWER_TAU_US 600.0

static double pj_per_flop(const an_gpu *g) {
  int cc = g->cc_major * 10 + g->cc_minor;
  if (cc < 60) return 28.0;  /* Kepler, Maxwell (28 nm): K80 */
  if (cc < 70) return 24.0;  /* Pascal (16 nm): P100 PCIe */
  if (cc < 80) return 15.5;  /* Volta, Turing (12 nm): V100 PCIe */
  if (cc == 80) return 11.0; /* A100 (7 nm): A100 PCIe */
  if (cc < 89) return 6.6;   /* GA10x (8 nm): RTX A4000 */
  return 5.1;                /* Ada, Hopper, Blackwell (4 nm): RTX 4090 */
}

double an__power_slowdown(const an_gpu *g, double busy) {
  double avail = g->tdp_w - g->idle_w;
  if (!(avail > 0) || !(busy > 0)) return 1.0;
  double need = pj_per_flop(g) * 1e-12 * g->fp32_gflops * 1e9 * fmin(busy, 1.0);
  return fmax(1.0, need / avail);
}

double an__power_limited_us(double t0_us, double s) {
  if (!(s > 1) || !(t0_us > 0)) return t0_us;
  /* the clock falls from boost to boost / s as 1 - exp(-t / tau): the work
     of t0 at boost takes s t0 - (s - 1) tau (1 - exp(-t0 / tau)) */
  return s * t0_us - (s - 1) * AN_POWER_TAU_US * (1 - exp(-t0_us / AN_POWER_TAU_US));
}

static lanes lanes_of(const an_gpu *g) {
  int cc = g->cc_major * 10 + g->cc_minor;
  double clock = g->boost_mhz * 1e6;
  lanes l = {.fp32 = g->fp32_gflops * 1e9 / (2 * g->sms * clock), .fp16 = 256, .intg = 64,
             .sfu = 16, .cvt = 16, .shfl = 32, .issue = 4};
  l.fp64 = g->fp64_gflops > 0 ? g->fp64_gflops * 1e9 / (2 * g->sms * clock) : 1.0 / 32;
  if (cc < 50) { /* Kepler */
    l.intg = 160, l.sfu = 32, l.cvt = 32, l.issue = 6, l.fp16 = l.fp32;
  } else if (cc < 70) {
    l.intg = cc == 60 ? 64 : 128, l.sfu = cc == 60 ? 16 : 32, l.cvt = cc == 60 ? 16 : 32;
    l.fp16 = cc == 60 ? 128 : cc == 61 ? 2 : l.fp32;
  } else if (cc < 80) {
    l.fp16 = 128;
  }
  l.fp_int_shared = cc == 86 || cc == 87 || cc == 89 || cc >= 120;
  return l;
}

/* Dense f16 tensor-core throughput (f32 accumulate) over the FP32 rate,
   by compute capability (datasheets; docs/gpus.md); 0 without tensor
   cores (the flops then run on the FP32 lanes). */
static double tensor_ratio(const an_gpu *g) {
  int major = g->cc_major, minor = g->cc_minor;
  if (major < 7) return 0;
  if (major == 7) return 8;
  if (major == 8) return minor == 0 ? 16 : 4;
  if (major == 9) return 15;
  return 30;
}

/* The L_P norm of n terms: their maximum when one dominates, more when
   several are close (they overlap, but a scheduler does not keep every
   unit busy at once). */
static double norm_p(const double *t, int n) {
  double m = 0, s = 0;
  for (int i = 0; i < n; i++) m = fmax(m, t[i]);
  if (!(m > 0)) return 0;
  for (int i = 0; i < n; i++) s += pow(t[i] / m, NORM_P);
  return m * pow(s, 1.0 / NORM_P);
}

int an_estimate_launch(const an_gpu *g, const char *const *names, const double *vals,
                       size_t n, an_estimate *o) {
  if (!g || !o || (n && (!names || !vals))) return rf__err("an_estimate_launch: NULL argument");
  if (g->sms <= 0 || !(g->boost_mhz > 0) || !(g->fp32_gflops > 0) || !(g->mem_bw_gbs > 0) ||
      g->max_threads_per_sm <= 0 || g->max_ctas_per_sm <= 0)
    return rf__err("GPU %s: figures must be positive", g->name ? g->name : "?");
  for (size_t i = 0; i < n; i++)
    if (!isfinite(vals[i])) return rf__err("feature %s is not finite", names[i] ? names[i] : "?");
  /* a library kernel described by its operator (model/opr.h) has its own
     estimate (analytic_op.c) */
  if (an__op_class(names, vals, n) != 0) return an__estimate_op(g, names, vals, n, o);
  memset(o, 0, sizeof *o);
  an_in in;
  int cc = g->cc_major * 10 + g->cc_minor;
  an__gather(names, vals, n, cc, &in);
#define F(k) in.v[k]
  double ctas, tpc;
  if (launch_shape(&in, &ctas, &tpc)) return -1;
  an_occupancy occ;
  if (an__occupancy(g, &in, &occ)) return -1;
  double res = occ.ctas_per_sm, wpc = occ.wpc, warps = ctas * wpc;
  double sms = g->sms, clock = g->boost_mhz * 1e6; /* Hz */
  o->resident_ctas = (int)res;
  o->waves = ceil(ctas / (sms * res));
  double ctas_sm = ceil(ctas / sms); /* CTAs of the busiest SM */
  const an_ops *op = &in.ops;
  lanes L = lanes_of(g);

  /* Instructions.  Thread-level counts; a warp instruction with idle
     lanes occupies a unit as a full one, so the counts are divided by
     the active-lane ratio. */
  double alr = F(K_ALR) > 0 ? fmin(F(K_ALR), 1.0) : 1;
  double fp32 = (F(K_FP32) + op->fp32) / alr, fp16 = F(K_FP16) / alr;
  double fp64 = (F(K_FP64) + op->fp64) / alr;
  double intg = (F(K_INT) + F(K_LOGIC) - op->logic_free + F(K_CMP) + op->cvt_int + op->intg) / alr;
  double sfu = (F(K_SPECIAL) + op->sfu) / alr;
  double cvt = fmax(0, F(K_CONVERT) - op->cvt_int - (op->free_ops - op->logic_free) + op->cvt) / alr;
  double shfl = F(K_WARP) / alr;
  /* pipes: cycles the whole launch would take on one SM */
  double pipe[7];
  pipe[0] = L.fp_int_shared ? fmax(fmax(fp32 / L.fp32, intg / L.intg), (fp32 + intg) / L.fp32)
                            : fmax(fp32 / L.fp32, intg / L.intg);
  pipe[1] = fp16 / L.fp16;
  pipe[2] = fp64 / L.fp64;
  pipe[3] = sfu / L.sfu;
  pipe[4] = cvt / L.cvt;
  pipe[5] = shfl / L.shfl;
  /* tensor cores: the matrix instructions' flops over the dense f16 rate
     per SM and clock, a multiple of the FP32 rate (docs/gpus.md) */
  double tratio = tensor_ratio(g);
  pipe[6] = F(K_TFLOPS) / (2 * L.fp32 * (tratio > 0 ? tratio : 1));
  double c_pipe = 0;
  for (int i = 0; i < 7; i++) c_pipe = fmax(c_pipe, pipe[i]);
  /* issue: the machine code's warp instructions (ctrl.warp_insns scaled
     by machine instructions per PTX instruction, thread-level; else the
     thread-level counts over 32 active lanes).  Constant loads leave the
     count (an operand, or the LDC of mem.const_accesses added back). */
  double cls = in.class_sum;
  double sass = cls - F(K_MOVE) - F(K_LDPARAM) - F(K_LDCONST) - op->free_ops + op->fp32 +
                op->fp64 + op->intg + op->sfu + op->cvt;
  double ratio = cls > 0 ? fmax(sass, 0) / cls : 1;
  double wi = F(K_WI) > 0 ? F(K_WI) : cls / 32 / alr;
  double wsass = wi * ratio + F(K_CACC);
  double c_issue = wsass / L.issue;
  /* the load/store path: warp-level accesses */
  double lsu_min = cc >= 70 ? LSU_MIN : 1;
  double shacc = F(K_SHACC) > 0 ? F(K_SHACC) : (F(K_LDSH) + F(K_STSH)) / 32 / alr;
  double gacc = F(K_GACC);
  if (!(gacc > 0)) /* thread-level counts only (e.g. CUDA Flux): full warps */
    gacc = (F(K_LDG) + F(K_STG) + F(K_ATOMG)) / 32 / alr;
  double gsect = in.have[K_GSECT] ? F(K_GSECT) : F(K_GBYTES) / 32;
  double local = (F(K_LDLOC) + F(K_STLOC)) / 32 / alr;
  /* spills ptxas reports: their share of the code's instructions, run as
     often as the rest (4-byte accesses per thread) */
  double spill = in.ptx[P_SST] + in.ptx[P_SLD];
  if (isfinite(spill) && spill > 0 && F(K_SINSNS) > 0) local += spill / 4 / F(K_SINSNS) * wi;
  double c_lsu = fmax(lsu_min * shacc, shacc + F(K_REPLAYS)) + fmax(lsu_min * gacc, gsect / 4) +
                 lsu_min * (local + F(K_TEXTURE) / 32 / alr) + F(K_CACC) + F(K_CREPLAY);
  /* memory levels */
  an_mem mem;
  if (an__mem(g, &in, &occ, &mem)) return -1;
  double bw = g->mem_bw_gbs * 1e9;
  double t_l2 = (mem.l2_requests * 32 + F(K_LBYTES)) / (bw * L2_BW);
  double t_dram = (mem.dram_read + mem.dram_write) / (bw * BW_EFF);
  /* latency: one warp's chain per round */
  double ilp = F(K_ILP) > 0 ? fmax(F(K_ILP), 1) : ILP_DEFAULT;
  double loads = mem.load_sectors > 0 ? mem.load_sectors : 0;
  /* the loads' mean latency by the level that serves them; without the
     reuse features nothing says which, and L2's latency stands for the
     mix (every load at DRAM latency made a stencil's re-reads of its
     neighbours two to three times too slow) */
  double lat = !mem.modelled ? LAT_L2
               : loads > 0   ? (mem.l1_hits * LAT_L1 + mem.l2_hits * LAT_L2 +
                                fmax(0, loads - mem.l1_hits - mem.l2_hits) * LAT_DRAM) / loads
                             : LAT_DRAM;
  double ld_share = gsect > 0 ? loads / gsect : 1;
  double chain = (wsass / warps / ilp) * LAT_ALU + (gacc * ld_share / warps) * lat / ilp +
                 (shacc / warps) * LAT_SHARED / ilp;
  /* rounds of resident CTAs on the busiest SM */
  /* every instruction takes an issue slot; the units work side by side:
     each unit's time with the issue time, the largest of those */
  double ti[2] = {c_issue, c_pipe}, tl[2] = {c_issue, c_lsu};
  double c_thr = fmax(norm_p(ti, 2), norm_p(tl, 2));
  double c_cta = c_thr / ctas; /* cycles of one CTA's throughput */
  double full = floor(ctas_sm / res), last = ctas_sm - full * res;
  double c_sm = full * fmax(c_cta * res, chain) + (last > 0 ? fmax(c_cta * last, chain) : 0);
  double t_sm = c_sm / clock;
  double load = ctas_sm / ctas; /* the busiest SM's share of the launch */
  o->t_compute_us = c_pipe * load / clock * 1e6;
  o->t_issue_us = c_issue * load / clock * 1e6;
  o->t_lsu_us = c_lsu * load / clock * 1e6;
  o->t_l2_us = t_l2 * 1e6;
  o->t_dram_us = t_dram * 1e6;
  o->t_memory_us = fmax(t_l2, t_dram) * 1e6;
  o->t_latency_us = (full + (last > 0)) * chain / clock * 1e6;
  o->l1_hit_rate = loads > 0 ? mem.l1_hits / loads : 0;
  o->l2_hit_rate = mem.l2_requests > 0 ? mem.l2_hits / mem.l2_requests : 0;
  o->dram_bytes = mem.dram_read + mem.dram_write;
  /* the power limit: the SMs' and the L2's work slow as a low-power
     card's clock drops under its pipes' load */
  {
    double parts0[3] = {t_sm, t_l2, t_dram};
    double b0 = norm_p(parts0, 3);
    double busy = b0 > 0 ? fmin(1.0, c_pipe * load / clock / b0) * fmin(1.0, ctas / sms) : 0;
    double s = an__power_slowdown(g, busy);
    t_sm = an__power_limited_us(t_sm * 1e6, s) / 1e6;
    t_l2 = an__power_limited_us(t_l2 * 1e6, s) / 1e6;
  }
  double parts[3] = {t_sm, t_l2, t_dram};
  double body = norm_p(parts, 3);
  /* the bound: the largest term */
  const char *bn[6] = {"compute", "issue", "lsu", "latency", "l2", "dram"};
  double bv[6] = {o->t_compute_us, o->t_issue_us, o->t_lsu_us,
                  t_sm * 1e6 > c_thr * load / clock * 1e6 * 1.0001 ? o->t_latency_us : 0,
                  o->t_l2_us, o->t_dram_us};
  int bi = 0;
  for (int i = 1; i < 6; i++)
    if (bv[i] > bv[bi]) bi = i;
  o->bound = bn[bi];
  o->t_overhead_us = OVERHEAD_US;
  o->time_us = OVERHEAD_US + body * 1e6;
  o->time_lo_us = o->time_us * AN_TIME_BAND_LO;
  o->time_hi_us = o->time_us * AN_TIME_BAND_HI;

  /* Power. */
  double u = 0, bus = body * 1e6;
  if (bus > 0) {
    double r_comp = fmin(1.0, fmax(fmax(o->t_compute_us, o->t_issue_us), o->t_lsu_us) / bus);
    double r_mem = fmin(1.0, o->t_memory_us / bus);
    u = fmin(1.0, 0.25 + 0.5 * r_comp + 0.35 * r_mem);
    u *= fmin(1.0, ctas / sms);
    u *= bus / (bus + OVERHEAD_US);
  }
  o->utilisation = u;
  double idle = g->idle_w, span = g->tdp_w - g->idle_w;
  o->power_w = idle + span * u;
  o->power_lo_w = fmax(idle, o->power_w * AN_POWER_BAND_LO);
  o->power_hi_w = fmin(g->tdp_w, o->power_w * AN_POWER_BAND_HI);
  o->energy_mj = o->time_us * o->power_w / 1000;
#undef F
  return 0;
}
