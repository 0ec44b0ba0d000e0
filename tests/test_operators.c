/*
 * test_operators.c -- operator launches: the opr.* features (model/opr.c),
 * their analytic estimate (model/analytic_op.c), the importer of the
 * NeuSight format (datasets/ds_neusight.c, `kcast dataset
 * import-neusight`), a model adapted to a new GPU from shots
 * (model/rf_adapt.c, `kcast cv --shots`, `kcast calibrate`, the model file
 * version 4), `kcast predict --op` and kcast_features_from_op().
 *
 * Small inputs the tests write (always run), and the real training set at
 * ../shared/data/neusight-train from the repository root (skipped with a
 * note when absent): every assumed launch configuration checked against
 * the recorded ones, the import of one file against its rows.
 */
#include "tests.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "datasets/ds.h"
#include "include/kcast.h"
#include "model/model.h"
#include "model/opr.h"
#include "model/rf_int.h"

#define CHECK_MSG(msg, cond) \
  CU_assertImplementation(!!(cond), __LINE__, (msg), __FILE__, "", CU_FALSE)

#define NS_DATA "../shared/data/neusight-train"

/* The value of feature name of v (opr_feature_names order), NAN when none. */
static double fv(const double *v, const char *name) {
  for (size_t k = 0; k < OPR_NFEAT; k++)
    if (!strcmp(opr_feature_names[k], name)) return v[k];
  return NAN;
}

/* --------------------------------------------------------- descriptions -- */

static void test_parse(void) {
  opr_launch l;
  CHECK_MSG("a bmm description parses", opr_parse("bmm B=8 M=512 N=256 K=64", &l) == 0);
  CHECK_MSG("... its operator and shape in the table's order",
            l.op && !strcmp(l.op->name, "bmm") && l.dim[0] == 8 && l.dim[1] == 512 &&
                l.dim[2] == 256 && l.dim[3] == 64);
  CHECK_MSG("... with nothing of the launch known", !l.kernel[0] && !l.grid[0] && !l.block[0]);
  CHECK_MSG("parameters in any order, kernel quoted, grid and block given",
            opr_parse("softmax H=168 B=127 kernel='void softmax_warp_forward<float, float, "
                      "float, 8, false, false>(float*)' grid=32 block=32,4", &l) == 0 &&
                l.dim[0] == 127 && l.dim[1] == 168 && l.grid[0] == 32 && l.grid[1] == 1 &&
                l.block[0] == 32 && l.block[1] == 4 && strstr(l.kernel, "softmax_warp_forward<"));
  CHECK_MSG("conv takes the dataset's spellings of its parameters",
            opr_parse("conv B=2 Input_Channel=3 Output_Channel=8 Kernel_Szie=3 Input_Size=32 "
                      "Stride=1 Padding=0", &l) == 0 && l.dim[1] == 3 && l.dim[3] == 3);
  static const struct { const char *text, *says; } bad[] = {
    {"", "empty"},
    {"matmul B=1", "unknown operator 'matmul'"},
    {"bmm B=8 M=512 N=256", "needs K="},
    {"bmm B=8 M=512 N=256 K=64 Q=1", "no parameter 'Q'"},
    {"bmm B=8 B=9 M=512 N=256 K=64", "B given twice"},
    {"bmm B=8 M=51.5 N=256 K=64", "'51.5' is not a whole number"},
    {"bmm B=0 M=1 N=1 K=1", "'0' is not a whole number in 1.."},
    {"add B=2 H=3 block=2048", "more than 1024 threads"},
    {"add B=2 H=3 kernel='abc", "unterminated"},
    {"add B=2 H", "is not KEY=VALUE"},
    {"conv B=1 Cin=1 Cout=1 Kernel=9 Size=4 Stride=1 Padding=0", "larger than Size"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    int rc = opr_parse(bad[i].text, &l);
    char msg[256];
    snprintf(msg, sizeof msg, "'%s' is refused, saying '%s' (%s)", bad[i].text, bad[i].says,
             rc ? rf_last_error() : "accepted");
    CHECK_MSG(msg, rc == -1 && strstr(rf_last_error(), bad[i].says));
  }
}

static void test_kernel_names(void) {
  unsigned m, n, s;
  CHECK_MSG("ampere_sgemm_128x64_nn: 128 along the output's columns, 64 along its rows",
            opr_kernel_tile("ampere_sgemm_128x64_nn", &m, &n, &s) == 1 && n == 128 && m == 64 &&
                s == 1);
  CHECK_MSG("volta_sgemm_32x32_sliced1x4_tn: a 32x32 tile sliced 4 ways in K",
            opr_kernel_tile("volta_sgemm_32x32_sliced1x4_tn", &m, &n, &s) == 1 && m == 32 &&
                n == 32 && s == 4);
  CHECK_MSG("sgemm_32x32x32_NN: the AxBxC form",
            opr_kernel_tile("sgemm_32x32x32_NN", &m, &n, &s) == 1 && m == 32 && n == 32);
  CHECK_MSG("cuBLAS's xmma kernels: tilesize64x128x8 is cuBLAS's m x n (64 along the output's "
            "columns), the warp shape after it no tile",
            opr_kernel_tile("sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x128x8_stage3_"
                            "warpsize1x2x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas",
                            &m, &n, &s) == 1 && n == 64 && m == 128 && s == 1);
  CHECK_MSG("cuDNN's scudnn_128x32 tile",
            opr_kernel_tile("cudnn_infer_volta_scudnn_128x32_relu_small_nn_v1", &m, &n, &s) == 1 &&
                n == 128 && m == 32);
  CHECK_MSG("an elementwise kernel has no tile",
            opr_kernel_tile("void at::native::vectorized_elementwise_kernel<4, "
                            "at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >",
                            &m, &n, &s) == 0 && m == 0 && n == 0);
  CHECK_MSG("winograd transforms around an SGEMM are Winograd",
            opr_kernel_algo(";void cudnn::winograd_nonfused::winogradforwarddata4x4<float, "
                            "float>;volta_sgemm_64x64_nn") == OPR_ALGO_WINOGRAD);
  CHECK_MSG("scudnn kernels are implicit GEMM",
            opr_kernel_algo("cudnn_infer_volta_scudnn_128x64_relu_small_nn_v1") == OPR_ALGO_IMPLICIT);
  CHECK_MSG("im2col then SGEMM is the GEMM path",
            opr_kernel_algo("im2col4d_kernel;maxwell_sgemm_128x64_nn") == OPR_ALGO_GEMM);
}

static void test_features(void) {
  opr_launch l;
  double v[OPR_NFEAT];
  /* a row of bmm on a T4 (the NeuSight file): output M x K = 33 x 84,
     reduction N = 13, split 2 ways in x */
  CHECK_MSG("a recorded GEMM launch parses",
            opr_parse("bmm B=20 M=33 N=13 K=84 kernel=volta_sgemm_64x64_nn grid=2,1,20 block=64",
                      &l) == 0);
  CHECK_MSG("... and has its features", opr_features(&l, v) == 0);
  CHECK_MSG("flops = 2 B M N K", fv(v, "opr.flops") == 2.0 * 20 * 33 * 13 * 84);
  CHECK_MSG("bytes = 4 B (MN + NK + MK)",
            fv(v, "opr.bytes") == 4.0 * 20 * (33 * 13 + 13 * 84 + 33 * 84));
  CHECK_MSG("the GEMM view: m = M, n = K, k = N",
            fv(v, "opr.m") == 33 && fv(v, "opr.n") == 84 && fv(v, "opr.k") == 13 &&
                fv(v, "opr.batch") == 20);
  CHECK_MSG("tile 64x64 from the name, 2 x 1 x 20 = 40 CTAs",
            fv(v, "opr.tile_m") == 64 && fv(v, "opr.tile_n") == 64 && fv(v, "launch.ctas") == 40);
  CHECK_MSG("1 x 2 tiles of the output a batch: 40, no split-K, all 13 of K per CTA",
            fv(v, "opr.tiles") == 40 && fv(v, "opr.split_k") == 1 && fv(v, "opr.tile_k") == 13);
  CHECK_MSG("the tiles' share of output", fabs(fv(v, "opr.tile_fill") - 33.0 * 84 / (64 * 128)) < 1e-12);
  CHECK_MSG("features without a grid are refused",
            opr_parse("add B=2 H=3", &l) == 0 && opr_features(&l, v) == -1);
  CHECK_MSG("linear reads its weight once", opr_parse("linear B=4 M=10 N=20 K=30 grid=1 block=256",
                                                      &l) == 0 && opr_features(&l, v) == 0 &&
                                                fv(v, "opr.bytes") == 4.0 * (4 * 10 * 20 + 20 * 30 + 4 * 10 * 30));
  CHECK_MSG("an elementwise launch: two inputs and an output of B x H",
            opr_parse("add B=127 H=168", &l) == 0 && opr_complete(&l, NULL, 0) == 0 &&
                opr_features(&l, v) == 0 && fv(v, "opr.bytes") == 12.0 * 127 * 168 &&
                fv(v, "opr.vector") == 4 && fv(v, "opr.class") == OPR_ELEMENTWISE);
  CHECK_MSG("conv: the implicit GEMM of output pixels x filters x taps",
            opr_parse("conv B=2 Cin=3 Cout=8 Kernel=3 Size=32 Stride=1 Padding=1", &l) == 0 &&
                opr_complete(&l, NULL, 0) == 0 && opr_features(&l, v) == 0 &&
                fv(v, "opr.m") == 2 * 32 * 32 && fv(v, "opr.n") == 8 && fv(v, "opr.k") == 27 &&
                fv(v, "opr.flops") == 2.0 * 2 * 8 * 32 * 32 * 27);
}

static void test_assumptions(void) {
  opr_launch l;
  char note[600];
  CHECK_MSG("softmax of rows of 168: a warp per row, 4 rows a CTA",
            opr_parse("softmax B=127 H=168", &l) == 0 && opr_complete(&l, note, sizeof note) == 0 &&
                l.grid[0] == 32 && l.block[0] == 32 && l.block[1] == 4);
  CHECK_MSG("... and the note says what was assumed",
            strstr(note, "kernel softmax_warp_forward<float, float, float, 8") &&
                strstr(note, "grid 32,1,1") && strstr(note, "block 32,4,1"));
  CHECK_MSG("softmax of rows of 3: 4 lanes a row, two rows a warp",
            opr_parse("softmax B=77 H=3", &l) == 0 && opr_complete(&l, NULL, 0) == 0 &&
                l.grid[0] == 2 && l.block[0] == 4 && l.block[1] == 32);
  CHECK_MSG("a given kernel, grid and block are kept, and nothing is noted",
            opr_parse("add B=2 H=3 kernel=k grid=5 block=64", &l) == 0 &&
                opr_complete(&l, note, sizeof note) == 0 && !note[0] && l.grid[0] == 5 &&
                l.block[0] == 64 && !strcmp(l.kernel, "k"));
  CHECK_MSG("a GEMM large enough gets the 128x128 tile",
            opr_parse("bmm B=8 M=512 N=64 K=512", &l) == 0 && opr_complete(&l, NULL, 0) == 0 &&
                !strcmp(l.kernel, "sgemm_128x128_nn") && l.grid[0] == 4 && l.grid[1] == 4 &&
                l.grid[2] == 8 && l.block[0] == 256);
  CHECK_MSG("a small one a smaller tile (more CTAs)",
            opr_parse("bmm B=1 M=256 N=64 K=256", &l) == 0 && opr_complete(&l, NULL, 0) == 0 &&
                !strcmp(l.kernel, "sgemm_64x64_nn") && l.grid[0] == 4 && l.grid[1] == 4);
  CHECK_MSG("a tiny one the sliced 32x32 tile",
            opr_parse("bmm B=1 M=20 N=64 K=30", &l) == 0 && opr_complete(&l, NULL, 0) == 0 &&
                strstr(l.kernel, "32x32_sliced1x4"));
}

/* Every softmax, layer-norm and elementwise row of a real file: the
   configuration assumed from the shape alone is the one recorded. */
static void test_assumptions_real(void) {
  static const char *const files[] = {"softmax__Tesla_T4.csv.gz", "ln__Tesla_T4.csv.gz",
                                      "add__Tesla_T4.csv.gz", "gelu__Tesla_T4.csv.gz"};
  char path[512];
  snprintf(path, sizeof path, "%s/%s", NS_DATA, files[0]);
  if (access(path, R_OK)) {
    printf("\n  [skip: %s not found (NeuSight training data)] ", NS_DATA);
    return;
  }
  for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
    snprintf(path, sizeof path, "%s/%s", NS_DATA, files[f]);
    gzFile gz = gzopen(path, "rb");
    CHECK_MSG("the file opens", gz != NULL);
    if (!gz) continue;
    char line[8192];
    long rows = 0, same = 0;
    int cb = -1, ch = -1, cgx = -1, cbx = -1;
    for (long ln = 0; gzgets(gz, line, sizeof line); ln++) {
      /* the fields of these files hold no commas before the shape
         columns except inside the quoted kernel name: split by hand */
      char *fields[40];
      int nf = 0, q = 0;
      char *s = line;
      fields[nf++] = s;
      for (; *s && nf < 40; s++) {
        if (*s == '"') q = !q;
        else if (*s == ',' && !q) { *s = 0; fields[nf++] = s + 1; }
        else if (*s == '\n' || *s == '\r') *s = 0;
      }
      if (ln == 0) {
        for (int k = 0; k < nf; k++) {
          if (!strcmp(fields[k], "B")) cb = k;
          if (!strcmp(fields[k], "H")) ch = k;
          if (!strcmp(fields[k], "Grid x")) cgx = k;
          if (!strcmp(fields[k], "Block x")) cbx = k;
        }
        continue;
      }
      if (cb < 0 || ch < 0 || cgx < 0 || cbx < 0 || nf <= cb || nf <= ch) break;
      char desc[128];
      snprintf(desc, sizeof desc, "%s B=%s H=%s", files[f][0] == 's' ? "softmax"
                                                : files[f][0] == 'l'   ? "ln"
                                                : files[f][0] == 'a'   ? "add"
                                                                       : "gelu",
               fields[cb], fields[ch]);
      opr_launch l;
      if (opr_parse(desc, &l) || opr_complete(&l, NULL, 0)) break;
      rows++;
      same += l.grid[0] == (uint32_t)atol(fields[cgx]) &&
              l.grid[1] == (uint32_t)atol(fields[cgx + 1]) &&
              l.block[0] == (uint32_t)atol(fields[cbx]) &&
              l.block[1] == (uint32_t)atol(fields[cbx + 1]);
    }
    gzclose(gz);
    char msg[256];
    snprintf(msg, sizeof msg, "%s: the assumed grid and block are the recorded ones in every "
             "row (%ld of %ld)", files[f], same, rows);
    CHECK_MSG(msg, rows > 1000 && same == rows);
  }
}

/* ------------------------------------------------------- the estimate -- */

/* The estimate of description desc (completed) on GPU gpu. */
static int estimate(const char *desc, const char *gpu, an_estimate *e) {
  opr_launch l;
  double v[OPR_NFEAT];
  if (opr_parse(desc, &l) || opr_complete(&l, NULL, 0) || opr_features(&l, v)) return -1;
  return an_estimate_launch(an_gpu_find(gpu), opr_feature_names, v, OPR_NFEAT, e);
}

static void test_estimate(void) {
  an_estimate a, b, c;
  CHECK_MSG("a tiny elementwise launch is bound by the host's dispatch: add's floor, 26.5 us",
            estimate("add B=2 H=3", "T4", &a) == 0 && !strcmp(a.bound, "host") &&
                a.time_us == 26.5 && an_overhead_share(&a) == 1);
  CHECK_MSG("... a tiny layer norm by its own, 47.5 us, on every GPU",
            estimate("ln B=2 H=3", "T4", &b) == 0 && !strcmp(b.bound, "host") &&
                b.time_us == 47.5 && estimate("ln B=2 H=3", "H100", &c) == 0 && c.time_us == 47.5);
  {
    /* a launch imported before the operator's software columns: the old
       figures (26 us floor) for every operator */
    opr_launch ol;
    double ov[OPR_NFEAT];
    opr_parse("ln B=2 H=3", &ol);
    opr_complete(&ol, NULL, 0);
    opr_features(&ol, ov);
    CHECK_MSG("the features carry the operator's floor, fixed time and memory efficiency",
              fv(ov, "opr.host_us") == 47.5 && fv(ov, "opr.gap_us") == 38.5 &&
                  fv(ov, "opr.mem_eff") == 0.5);
    CHECK_MSG("... and without them a layer norm's floor is the old 26 us",
              an_estimate_launch(an_gpu_find("T4"), opr_feature_names, ov, OPR_NFEAT - 3, &c) == 0 &&
                  c.time_us == 26);
  }
  CHECK_MSG("a large one by memory, its time the bytes over the bandwidth and more",
            estimate("add B=4096 H=16384", "T4", &b) == 0 && !strcmp(b.bound, "memory") &&
                b.time_us > 12.0 * 4096 * 16384 / 320e3 && an_overhead_share(&b) < 0.05);
  CHECK_MSG("... and faster on the H100's bandwidth",
            estimate("add B=4096 H=16384", "H100", &c) == 0 && c.time_us < b.time_us / 5);
  CHECK_MSG("a large GEMM is bound by compute",
            estimate("bmm B=16 M=2048 N=2048 K=2048", "A100-PCIE", &a) == 0 &&
                !strcmp(a.bound, "compute") && a.time_us > 2.0 * 16 * 2048.0 * 2048 * 2048 / 19.5e6);
  CHECK_MSG("... twice the work takes about twice the time",
            estimate("bmm B=32 M=2048 N=2048 K=2048", "A100-PCIE", &b) == 0 &&
                b.time_us > 1.8 * a.time_us && b.time_us < 2.2 * a.time_us);
  CHECK_MSG("an operator launch's power lies in the GPU's band",
            a.power_w >= an_gpu_find("A100-PCIE")->idle_w && a.power_w <= 250);
  /* the per-GPU family */
  opr_launch l;
  double v[OPR_NFEAT], out[MD_OPR_N];
  opr_parse("bmm B=8 M=512 N=64 K=512", &l);
  opr_complete(&l, NULL, 0);
  opr_features(&l, v);
  CHECK_MSG("opr.waves on a T4: 128 CTAs over 40 SMs of the CTAs that fit",
            md_operator("T4", opr_feature_names, v, OPR_NFEAT, out) == 0 && out[0] >= 1 &&
                fabs(out[1] - 128 / (40 * out[0])) < 1e-12 && out[3] == 1);
  static const char *const pn[] = {"launch.ctas", "launch.block_x"};
  double pv[] = {64, 128};
  CHECK_MSG("a launch without opr.class has no operator waves (all 0)",
            md_operator("T4", pn, pv, 2, out) == 0 && out[1] == 0 && out[0] == 0);
  CHECK_MSG("an unknown GPU is an error", md_operator("NOPE", opr_feature_names, v, OPR_NFEAT, out) == -1);
}

/* A low-power card's FP32-bound GEMM runs under its power limit: the T4
   (70 W) and the L4 (72 W) slow, the A100 and the H100 do not, and a
   kernel shorter than the limiter's window keeps most of its boost. */
static void test_power_limit(void) {
  const an_gpu *t4 = an_gpu_find("T4"), *a100 = an_gpu_find("A100-PCIE"), *h100 = an_gpu_find("H100"),
               *l4 = an_gpu_find("L4");
  CU_ASSERT_FATAL(t4 && a100 && h100 && l4);
  double st4 = an__power_slowdown(t4, 1), sl4 = an__power_slowdown(l4, 1);
  CHECK_MSG("the T4's FP32 pipes need 2-2.5x its board power at boost",
            st4 > 2.0 && st4 < 2.5);
  CHECK_MSG("... the L4's more than 2x, the A100's and H100's fit theirs",
            sl4 > 2.0 && an__power_slowdown(a100, 1) == 1 && an__power_slowdown(h100, 1) == 1);
  CHECK_MSG("... and an idle pipe draws nothing to limit",
            an__power_slowdown(t4, 0) == 1 && an__power_slowdown(t4, 0.3) < st4);
  CHECK_MSG("a 10 ms kernel's time approaches the slowdown, a 10 us one keeps its own",
            an__power_limited_us(10000, st4) > 0.9 * st4 * 10000 &&
                an__power_limited_us(10, st4) < 10.2 && an__power_limited_us(10, 1) == 10);
  an_estimate a, b;
  const char *big = "bmm B=16 M=2048 N=2048 K=2048";
  double flops = 2.0 * 16 * 2048 * 2048 * 2048;
  CHECK_MSG("a large GEMM on the T4 takes about twice its time at the boost clock's peak",
            estimate(big, "T4", &a) == 0 && a.time_us > 1.8 * flops / (t4->fp32_gflops * 1e3) &&
                a.time_us < 2.8 * flops / (t4->fp32_gflops * 1e3));
  CHECK_MSG("... the A100 runs it near its peak",
            estimate(big, "A100-PCIE", &b) == 0 && b.time_us < 1.3 * flops / (a100->fp32_gflops * 1e3));
  CHECK_MSG("a memory-bound launch on the T4 is not slowed by the limit",
            estimate("add B=4096 H=16384", "T4", &a) == 0 && !strcmp(a.bound, "memory") &&
                a.time_us < 1.3 * 12.0 * 4096 * 16384 / (320e3 * 0.85));
}

/* ------------------------------------------------------------ the import -- */

static const char *HDR =
    "OPName,Latency,Device,Torch Version,Kernel Name,Warps per SM,Blocks per SM,Grid x,Grid y,"
    "Grid z,Block x,Block y,Block z,CUDA Version,Kernels,B,M,N,K\n";

static int write_gz(const char *path, const char *text) {
  gzFile g = gzopen(path, "wb");
  if (!g) return -1;
  int n = gzwrite(g, text, (unsigned)strlen(text));
  return gzclose(g) == Z_OK && n == (int)strlen(text) ? 0 : -1;
}

/* Launch count, feature count and time rows of a dataset, with raw SQL
   through the store. */
static void counts(const char *db, int64_t *launches, int64_t *meas) {
  ds_db *d = NULL;
  ds_stats st;
  *launches = *meas = -1;
  if (ds_open(db, DS_READONLY, &d, NULL, 0) || ds_get_stats(d, &st)) { ds_close(d); return; }
  *launches = st.launches;
  *meas = st.measurements;
  ds_stats_free(&st);
  ds_close(d);
}

static void test_import(void) {
  char dir[1024], f1[1100], f2[1100], bad[1100], db[1100], cmd[4096];
  CHECK_MSG("a scratch folder", tests_tmpdir(dir, sizeof dir, "ns") != NULL);
  snprintf(f1, sizeof f1, "%s/bmm__Tesla_T4.csv", dir);
  snprintf(f2, sizeof f2, "%s/bmm__A100.csv.gz", dir);
  snprintf(db, sizeof db, "%s/ops.db", dir);
  char text[4096];
  snprintf(text, sizeof text,
           "%sbmm,0.05,Tesla T4,p2.1.0,volta_sgemm_64x64_nn,1,1,2,1,20,64,1,1,cu121,"
           ";volta_sgemm_64x64_nn,20,33,13,84\n"
           "bmm,0.07,Tesla T4,p2.1.0,volta_sgemm_64x64_nn,1,1,2,1,20,64,1,1,cu121,"
           ";volta_sgemm_64x64_nn,20,33,13,84\n"
           "bmm,0.5,Tesla T4,p2.1.0,volta_sgemm_128x64_nn,1,1,4,4,8,128,1,1,cu121,"
           ";volta_sgemm_128x64_nn,8,512,64,512\n", HDR);
  CHECK_MSG("a plain CSV written", tests_write_file(f1, text, strlen(text)) == 0);
  snprintf(text, sizeof text,
           "%sbmm,0.03,NVIDIA A100-PCIE-40GB,p2.1.0,ampere_sgemm_128x128_nn,1,1,1,1,20,256,1,1,"
           "cu121,;ampere_sgemm_128x128_nn,20,33,13,84\n", HDR);
  CHECK_MSG("a gzip CSV written", write_gz(f2, text) == 0);
  ds_db *d = NULL;
  CHECK_MSG("a new dataset", ds_open(db, DS_CREATE, &d, NULL, 0) == 0);
  const char *paths[] = {f1, f2};
  ds_neusight_report r;
  CHECK_MSG("both files import", ds_import_neusight(d, paths, 2, "test", &r) == 0);
  CHECK_MSG("... 4 rows, 3 launches (a repeated shape is a repetition), 4 times",
            r.files == 2 && r.rows == 4 && r.launches == 3 && r.time_rows == 4);
  CHECK_MSG("... on the table's names of both GPUs", !strcmp(r.gpus, "T4,A100-PCIE"));
  int64_t id;
  CHECK_MSG("the key: app = operator, dataset = shape @GPU, lseq = the main kernel's place",
            ds_find_launch(d, "bmm", "B=20 M=33 N=13 K=84 @T4", 0, &id) == 1);
  feat_vec v;
  feat_init(&v);
  CHECK_MSG("its features are opr_features' (zeros not stored)",
            ds_get_features(d, id, &v) == 0 && feat_get(&v, "opr.tiles", 0) == 40 &&
                feat_get(&v, "opr.flops", 0) == 2.0 * 20 * 33 * 13 * 84 &&
                feat_get(&v, "launch.ctas", 0) == 40 && feat_find(&v, "opr.sfu") < 0);
  feat_free(&v);
  ds_target t;
  CHECK_MSG("the repeated row is rep 1: the median of 50 and 70 us is 60 us",
            ds_query_target(d, "T4", "time_ns", DS_AGG_MEDIAN, &t) == 0 && t.n == 2 &&
                fabs(t.value[0] - 60000) < 1e-6);
  ds_target_free(&t);
  CHECK_MSG("the same shape on the A100 is its own launch",
            ds_find_launch(d, "bmm", "B=20 M=33 N=13 K=84 @A100-PCIE", 0, &id) == 1);
  ds_gpu g;
  CHECK_MSG("a gpus row with the table's figures", ds_get_gpu(d, "T4", &g) == 1 && g.sm_count == 40);
  /* importing again rewrites the same rows */
  CHECK_MSG("a second import", ds_import_neusight(d, paths, 2, "again", &r) == 0);
  ds_close(d);
  int64_t nl, nm;
  counts(db, &nl, &nm);
  CHECK_MSG("... changes no count", nl == 3 && nm == 4);

  /* refusals leave the dataset as it was */
  static const struct { const char *row, *says; } refuse[] = {
    {"bmm,0.05,Tesla Q9,p,volta_sgemm_64x64_nn,1,1,1,1,1,64,1,1,c,;x,1,2,3,4\n",
     ":3: column Device: GPU 'Tesla Q9' is not in the GPU table"},
    {"bmm,-1,Tesla T4,p,volta_sgemm_64x64_nn,1,1,1,1,1,64,1,1,c,;x,1,2,3,4\n",
     ":3: column Latency: '-1' is not a positive number"},
    {"bmm,0.05,Tesla T4,p,volta_sgemm_64x64_nn,1,1,1.5,1,1,64,1,1,c,;x,1,2,3,4\n",
     ":3: column Grid x: '1.5' is not a whole number"},
    {"mm,0.05,Tesla T4,p,volta_sgemm_64x64_nn,1,1,1,1,1,64,1,1,c,;x,1,2,3,4\n",
     ":3: column OPName: unknown operator 'mm'"},
    {"bmm,0.05,Tesla T4,p,volta_sgemm_64x64_nn,1,1,1,1,1,64,1,1,c,;x,1,2,3\n",
     ":3: 18 fields, the header has 19"},
    {"bmm,0.05,Tesla T4,p,volta_sgemm_64x64_nn,1,1,1,1,1,64,1,1,c,;x,1,2,3,x\n",
     ":3: K 'x' is not a whole number"},
    {"bmm,0.05,Tesla T4,p,volta_sgemm_128x64_nn,1,1,1,1,1,64,1,1,c,;x,20,33,13,85\n"
     "bmm,0.05,Tesla T4,p,volta_sgemm_64x64_nn,1,1,1,1,1,64,1,1,c,;x,20,33,13,85\n",
     ":4: bmm B=20 M=33 N=13 K=85 @T4: another kernel, grid or block than the same shape on line 3"},
  };
  snprintf(bad, sizeof bad, "%s/bad.csv", dir);
  for (size_t i = 0; i < sizeof refuse / sizeof *refuse; i++) {
    snprintf(text, sizeof text, "%sbmm,0.05,Tesla T4,p,volta_sgemm_64x64_nn,1,1,2,1,20,64,1,1,"
             "c,;volta_sgemm_64x64_nn,2,3,4,5\n%s", HDR, refuse[i].row);
    tests_write_file(bad, text, strlen(text));
    CHECK_MSG("the dataset opens", ds_open(db, 0, &d, NULL, 0) == 0);
    const char *p1[] = {f1, bad};
    int rc = ds_import_neusight(d, p1, 2, "bad", &r);
    char msg[512];
    snprintf(msg, sizeof msg, "refused naming the file and line: '%s' (got '%s')", refuse[i].says,
             rc ? ds_errmsg(d) : "accepted");
    CHECK_MSG(msg, rc == -1 && strstr(ds_errmsg(d), bad) && strstr(ds_errmsg(d), refuse[i].says));
    ds_close(d);
    counts(db, &nl, &nm);
    CHECK_MSG("... and the dataset is as it was (the good file's rows are not kept)",
              nl == 3 && nm == 4);
  }
  snprintf(text, sizeof text, "OPName,Latency\nbmm,1\n");
  tests_write_file(bad, text, strlen(text));
  ds_open(db, 0, &d, NULL, 0);
  const char *p2[] = {bad};
  CHECK_MSG("a file without the columns is not an operator file",
            ds_import_neusight(d, p2, 1, NULL, &r) == -1 &&
                strstr(ds_errmsg(d), "not an operator launch file: the header has no column 'Device'"));
  const char *p3[] = {"/nonexistent/x.csv.gz"};
  CHECK_MSG("a missing file names itself",
            ds_import_neusight(d, p3, 1, NULL, &r) == -1 && strstr(ds_errmsg(d), "/nonexistent/x.csv.gz"));
  ds_close(d);

  /* the CLI: one line, exit 1, an output it created removed */
  char *out = NULL, *err = NULL;
  snprintf(cmd, sizeof cmd, "'%s' dataset import-neusight '%s' -o '%s/new.db'", tests_kcast(),
           bad, dir);
  int rc = tests_run(cmd, &out, &err);
  char nd[1100];
  snprintf(nd, sizeof nd, "%s/new.db", dir);
  CHECK_MSG("kcast dataset import-neusight of a bad file exits 1 with one error line",
            rc == 1 && err && strstr(err, "kcast: ") && strchr(err, '\n') == strrchr(err, '\n'));
  CHECK_MSG("... and leaves no output file", access(nd, F_OK) != 0);
  free(out);
  free(err);
  snprintf(cmd, sizeof cmd, "'%s' dataset import-neusight '%s' '%s' -o '%s'", tests_kcast(), f1,
           f2, nd);
  rc = tests_run(cmd, &out, &err);
  CHECK_MSG("the CLI imports the good files and says what it wrote",
            rc == 0 && out && strstr(out, "2 files, 4 rows: 3 launches"));
  free(out);
  free(err);
  /* its export, estimated row by row by `kcast predict --gpu --features`,
     gives the estimate of the stored operator features (the opr.* columns
     were once dropped there: every row an empty launch of 2 us) */
  double want = -1;
  if (ds_open(nd, 0, &d, NULL, 0) == 0) {
    feat_vec fv;
    feat_init(&fv);
    an_estimate e;
    if (ds_find_launch(d, "bmm", "B=8 M=512 N=64 K=512 @T4", 0, &id) == 1 &&
        ds_get_features(d, id, &fv) == 0 &&
        an_estimate_launch(an_gpu_find("T4"), (const char *const *)fv.names, fv.vals, fv.n,
                           &e) == 0)
      want = e.time_us;
    feat_free(&fv);
    ds_close(d);
  }
  CHECK_MSG("the large launch's estimate is above the host's floor", want > 26);
  snprintf(cmd, sizeof cmd, "'%s' dataset export '%s' --format csv -o '%s/x.csv' && "
           "'%s' predict --gpu T4 --features '%s/x.csv' --id dataset --format csv", tests_kcast(),
           nd, dir, tests_kcast(), dir);
  rc = tests_run(cmd, &out, &err);
  const char *line = out ? strstr(out, "B=8 M=512 N=64 K=512 @T4,T4,") : NULL;
  double got = line ? strtod(line + strlen("B=8 M=512 N=64 K=512 @T4,T4,"), NULL) : -1;
  char msg[256];
  snprintf(msg, sizeof msg, "predict --features of the export: %g us, the estimate %g us", got, want);
  CHECK_MSG(msg, rc == 0 && fabs(got - want) <= 1e-6 * want);
  CHECK_MSG("... and the small ones are bound by the host: bmm's floor, 32 us", out && strstr(out, "@T4,T4,32,"));
  free(out);
  free(err);
  snprintf(cmd, sizeof cmd, "'%s' dataset import-neusight -o '%s'", tests_kcast(), nd);
  rc = tests_run(cmd, NULL, &err);
  CHECK_MSG("no FILE is a usage error (2)", rc == 2 && err && strstr(err, "at least one FILE"));
  free(err);
}

/* One real file: every row becomes a launch or a repetition. */
static void test_import_real(void) {
  char path[512], dir[1024], db[1100];
  snprintf(path, sizeof path, "%s/softmax__Tesla_P4.csv.gz", NS_DATA);
  if (access(path, R_OK)) {
    printf("\n  [skip: %s not found (NeuSight training data)] ", NS_DATA);
    return;
  }
  tests_tmpdir(dir, sizeof dir, "nsr");
  snprintf(db, sizeof db, "%s/softmax.db", dir);
  ds_db *d = NULL;
  ds_open(db, DS_CREATE, &d, NULL, 0);
  const char *p[] = {path};
  ds_neusight_report r;
  CHECK_MSG("the real softmax file of the P4 imports", ds_import_neusight(d, p, 1, NULL, &r) == 0);
  CHECK_MSG("... 1,750 rows: 1,749 shapes and one repeated",
            r.rows == 1750 && r.launches == 1749 && r.time_rows == 1750 && !strcmp(r.gpus, "P4"));
  ds_close(d);
}

/* -------------------------------------------------------- adaptation -- */

static void test_adapt_fit(void) {
  /* y = p (h 1.7 + (1 - h) 0.9): the factors come back */
  double p[40], y[40], h[40];
  for (int i = 0; i < 40; i++) {
    p[i] = 10 + i;
    h[i] = (i % 5) / 4.0;
    y[i] = p[i] * (h[i] * 1.7 + (1 - h[i]) * 0.9);
  }
  rf_adapt a;
  CHECK_MSG("40 shots fit", rf_adapt_fit(p, y, h, 40, &a) == 0);
  CHECK_MSG("... host and device factors near 1.7 and 0.9 (the ridge pulls a little to 1)",
            fabs(a.host - 1.7) < 0.05 && fabs(a.device - 0.9) < 0.03 && a.shots == 40);
  CHECK_MSG("the factor of a launch mixes them by its overhead share",
            fabs(rf_adapt_factor(&a, 0.5) - (a.host + a.device) / 2) < 1e-12);
  CHECK_MSG("one shot bound by the device says nothing of the host",
            rf_adapt_fit(p, y, h, 1, &a) == 0 && a.host == 1 && a.device < 1 && a.device > 0.9);
  double bad[1] = {-1};
  CHECK_MSG("a non-positive prediction is refused", rf_adapt_fit(bad, y, h, 1, &a) == -1);
  CHECK_MSG("no shot is refused", rf_adapt_fit(p, y, h, 0, &a) == -1);
}

/* A small two-feature dataset with groups g0..g2, one of them slow. */
static void toy(rf_data *d, size_t n) {
  rf_data_alloc(d, n, 2, 1);
  d->names[0] = strdup("x");
  d->names[1] = strdup("base");
  d->target = strdup("y");
  d->groups = calloc(n, sizeof(char *));
  d->group_name = strdup("gpu");
  for (size_t i = 0; i < n; i++) {
    double x = (double)(i % 50) + 1;
    int g = (int)(i % 3);
    d->x[i] = x;
    d->x[n + i] = x;
    d->y[i] = x * (g == 2 ? 1.8 : 1.0) * (1 + 0.01 * (double)((i * 7) % 5));
    char name[8];
    snprintf(name, sizeof name, "g%d", g);
    d->groups[i] = strdup(name);
  }
}

static void test_cv_shots(void) {
  rf_data d;
  toy(&d, 600);
  rf_params p;
  rf_params_default(&p);
  p.transform = RF_TRANSFORM_LOG;
  p.base_feature = 1;
  p.n_trees = 20;
  p.calibrate = RF_CALIBRATE_OFF;
  rf_cv_opts o = {.size = sizeof o, .by_group = 1};
  rf_cv_result r0, r5;
  CHECK_MSG("leave one group out without shots", rf_cv(&d, &p, &o, &r0) == 0);
  o.shots = 5;
  CHECK_MSG("... and with 5 shots of the held-out group", rf_cv(&d, &p, &o, &r5) == 0);
  size_t nshot = 0;
  for (size_t i = 0; i < d.n_rows; i++) nshot += r5.shot[i];
  CHECK_MSG("5 shots a group, left out of the figures", nshot == 15 && r5.overall.n == 585);
  CHECK_MSG("the slow group's error drops from about 40 % to a few",
            r0.groups[2].m.mape > 25 && r5.groups[2].m.mape < 8);
  CHECK_MSG("its fitted factor is about 1.8 over the model's",
            r5.fold_adapt[2 * RF_ADAPT_CLASSES].device > 1.6 &&
                r5.fold_adapt[2 * RF_ADAPT_CLASSES].device < 1.9);
  o.by_group = 0;
  rf_cv_result rk;
  CHECK_MSG("shots without leaving groups out are refused",
            rf_cv(&d, &p, &o, &rk) == -1 && strstr(rf_last_error(), "leave-one-group-out"));
  rf_cv_result_free(&r0);
  rf_cv_result_free(&r5);
  rf_data_free(&d);
}

static void test_model_v4(void) {
  rf_data d;
  toy(&d, 300);
  rf_params p;
  rf_params_default(&p);
  p.n_trees = 5;
  rf_forest *f = NULL;
  char dir[1024], path[1100], v3[1100];
  tests_tmpdir(dir, sizeof dir, "v4");
  snprintf(path, sizeof path, "%s/a.kcm", dir);
  snprintf(v3, sizeof v3, "%s/b.kcm", dir);
  CHECK_MSG("a forest", rf_train(&d, &p, &f) == 0);
  CHECK_MSG("saved without adaptations", rf_save(f, v3) == 0);
  size_t len;
  unsigned char *b = (unsigned char *)tests_read_file(v3, &len);
  CHECK_MSG("... as version 4 (builds that read 4 still read it)", b && b[8] == 4);
  free(b);
  rf_adapt a = {.host = 1.5, .device = 0.8, .shots = 20, .rmse_log = 0.1};
  CHECK_MSG("adapted to the L4", rf_set_adapt(f, "L4", &a) == 0);
  rf_adapt a3 = {.cls = OPR_ELEMENTWISE, .host = 2.0, .device = 0.5, .shots = 5, .rmse_log = 0.2};
  CHECK_MSG("... and its elementwise launches on their own", rf_set_adapt(f, "L4", &a3) == 0);
  CHECK_MSG("found by any of its names", rf_get_adapt(f, "NVIDIA L4", 0) != NULL &&
                                             rf_get_adapt(f, "T4", 0) == NULL);
  CHECK_MSG("a class without its own gets the GPU's class 0",
            rf_get_adapt(f, "L4", OPR_GEMM) && rf_get_adapt(f, "L4", OPR_GEMM)->host == 1.5 &&
                rf_get_adapt(f, "L4", OPR_ELEMENTWISE)->host == 2.0);
  CHECK_MSG("saved", rf_save(f, path) == 0);
  b = (unsigned char *)tests_read_file(path, &len);
  CHECK_MSG("... as version 5", b && b[8] == 5);
  free(b);
  rf_free(f);
  f = NULL;
  CHECK_MSG("it loads", rf_load(path, &f) == 0);
  const rf_adapt *g = f ? rf_get_adapt(f, "L4", 0) : NULL;
  CHECK_MSG("... with the L4's factors", g && g->host == 1.5 && g->device == 0.8 && g->shots == 20 &&
                                             rf_get_info(f)->n_adapt == 2 &&
                                             rf_get_adapt(f, "L4", OPR_ELEMENTWISE)->device == 0.5);
  static const char *const ln[] = {"launch.ctas", "launch.block_x"};
  double lv[] = {64, 128}, c;
  CHECK_MSG("a launch on the L4 without work is all overhead: the host's factor",
            rf_adapt_launch(f, "L4", ln, lv, 2, &c) == 1 && c == 1.5);
  CHECK_MSG("one on another GPU none", rf_adapt_launch(f, "T4", ln, lv, 2, &c) == 0 && c == 1);
  rf_free(f);
  rf_data_free(&d);
}

/* ------------------------------------------------------------- the CLI -- */

static void test_cli_predict_op(void) {
  char cmd[2048], *out = NULL, *err = NULL;
  snprintf(cmd, sizeof cmd, "KCAST_OP_MODEL= '%s' predict --op 'bmm B=8 M=512 N=64 K=512' "
           "--gpu H100", tests_kcast());
  int rc = tests_run(cmd, &out, &err);
  CHECK_MSG("predict --op on the H100 answers", rc == 0 && out && strstr(out, "H100"));
  CHECK_MSG("... with the kernel it assumed on the GPU, said on stderr",
            err && strstr(err, "predicted fastest of cuBLAS's 5 SGEMM tiles: H100 sgemm_"));
  CHECK_MSG("... by the analytic estimate without an operator model",
            strstr(out, "analytic / analytic") && strstr(err, "no operator model"));
  free(out);
  free(err);
  {
    /* the GEMM's assumed kernel on each GPU is the candidate predicted
       fastest there: no candidate named explicitly is faster */
    opr_launch gl, cand[OPR_GEMM_CANDIDATES];
    CU_ASSERT_FATAL(opr_parse("linear B=1 M=178 N=3860 K=1550", &gl) == 0);
    size_t nc = opr_gemm_candidates(&gl, cand, OPR_GEMM_CANDIDATES);
    CHECK_MSG("eight candidate kernels for a linear, each _tn and complete",
              nc == 8 && strstr(cand[5].kernel, "sliced1x4_tn") && cand[5].block[0] == 128 &&
                  cand[3].block[0] == 256 && cand[0].grid[0] == 13 && cand[0].grid[1] == 2);
    CHECK_MSG("... five for a batched product: no sliced kernel",
              opr_parse("bmm B=4 M=178 N=3860 K=1550", &gl) == 0 &&
                  opr_gemm_candidates(&gl, cand, OPR_GEMM_CANDIDATES) == 5 &&
                  !strstr(cand[4].kernel, "sliced") && opr_parse("bmm B=1 M=1 N=2 K=3", &gl) == 0 &&
                  opr_gemm_candidates(&gl, cand, OPR_GEMM_CANDIDATES) == 8);
    CHECK_MSG("... none for a launch that names its kernel, nor for a softmax",
              opr_parse("bmm B=2 M=64 N=64 K=64 kernel=volta_sgemm_64x64_nn", &gl) == 0 &&
                  opr_gemm_candidates(&gl, cand, 8) == 0 &&
                  opr_parse("softmax B=2 H=64", &gl) == 0 && opr_gemm_candidates(&gl, cand, 8) == 0);
    snprintf(cmd, sizeof cmd, "KCAST_OP_MODEL= '%s' predict --op 'linear B=1 M=178 N=3860 K=1550' "
             "--gpu T4,A100-PCIE --format csv", tests_kcast());
    rc = tests_run(cmd, &out, &err);
    double best[2] = {0, 0};
    char kern[2][64] = {"", ""};
    for (int g = 0; g < 2 && rc == 0 && out; g++) {
      const char *row = strstr(out, g ? ",A100-PCIE," : ",T4,");
      const char *k0 = row;
      while (k0 && k0 > out && k0[-1] != '\n') k0--;
      if (row && k0 && sscanf(k0, "linear B=1 M=178 N=3860 K=1550,%63[^,]", kern[g]) == 1)
        best[g] = atof(row + strlen(g ? ",A100-PCIE," : ",T4,"));
    }
    CHECK_MSG("the CSV gives each GPU its own assumed kernel and time",
              rc == 0 && best[0] > 0 && best[1] > 0 && strstr(kern[0], "sgemm_"));
    free(out);
    free(err);
    int none_faster = 1;
    for (size_t c = 0; c < nc && best[0] > 0; c++) {
      snprintf(cmd, sizeof cmd, "KCAST_OP_MODEL= '%s' predict --op 'linear B=1 M=178 N=3860 "
               "K=1550 kernel=%s' --gpu T4,A100-PCIE --format csv", tests_kcast(), cand[c].kernel);
      out = err = NULL;
      if (tests_run(cmd, &out, &err) == 0 && out) {
        const char *t4 = strstr(out, ",T4,"), *a100 = strstr(out, ",A100-PCIE,");
        if (t4 && atof(t4 + 4) < best[0] * (1 - 1e-9)) none_faster = 0;
        if (a100 && atof(a100 + 11) < best[1] * (1 - 1e-9)) none_faster = 0;
      } else {
        none_faster = 0;
      }
      free(out);
      free(err);
    }
    CHECK_MSG("... the fastest of the candidates named one by one", none_faster);
  }
  snprintf(cmd, sizeof cmd, "KCAST_OP_MODEL= '%s' predict --op 'add B=2 H=3' --op 'ln B=4 H=1024' "
           "--format json", tests_kcast());
  rc = tests_run(cmd, &out, &err);
  CHECK_MSG("several --op as one JSON object: an operator a member, every GPU each",
            rc == 0 && out && strstr(out, "\"operators\"") && strstr(out, "\"op\":\t\"ln B=4 H=1024\"") &&
                strstr(out, "\"opr.flops\""));
  free(out);
  free(err);
  snprintf(cmd, sizeof cmd, "'%s' predict --op list --format csv", tests_kcast());
  rc = tests_run(cmd, &out, NULL);
  CHECK_MSG("--op list names every operator", rc == 0 && out && strstr(out, "\nsoftmax,4,") &&
                                                  strstr(out, "\nconv,2,"));
  free(out);
  snprintf(cmd, sizeof cmd, "'%s' predict --op 'bmm B=8' --gpu T4", tests_kcast());
  rc = tests_run(cmd, NULL, &err);
  CHECK_MSG("a bad description exits 1 naming what is missing",
            rc == 1 && err && strstr(err, "bmm needs M=N"));
  free(err);
  snprintf(cmd, sizeof cmd, "'%s' predict --op 'add B=2 H=3' --features x.csv", tests_kcast());
  rc = tests_run(cmd, NULL, &err);
  CHECK_MSG("--op with --features is a usage error", rc == 2);
  free(err);
}

/* Train on two GPUs' launches, adapt to a third with kcast calibrate,
   predict through the factors. */
static void test_cli_calibrate(void) {
  char dir[1024], f[1100], db[1100], m[1100], m2[1100], cmd[8192];
  tests_tmpdir(dir, sizeof dir, "cal");
  snprintf(f, sizeof f, "%s/add.csv", dir);
  snprintf(db, sizeof db, "%s/add.db", dir);
  snprintf(m, sizeof m, "%s/m.kcm", dir);
  snprintf(m2, sizeof m2, "%s/m2.kcm", dir);
  static const char *const dev[] = {"Tesla T4", "Tesla V100-PCIE-32GB", "Tesla P4"};
  static const double slow[] = {1.0, 1.0, 2.0};
  size_t cap = 1 << 20, len = 0;
  char *t = malloc(cap);
  len += (size_t)snprintf(t + len, cap - len,
                          "OPName,Latency,Device,Kernel Name,Grid x,Grid y,Grid z,Block x,Block y,"
                          "Block z,B,H\n");
  for (int g = 0; g < 3; g++)
    for (int i = 1; i <= 60; i++) {
      double B = 64 * i, H = 4096, bytes = 12 * B * H;
      const an_gpu *gp = an_gpu_find(dev[g]);
      double us = fmax(26, 12 + bytes / (gp->mem_bw_gbs * 1e3 * 0.85)) * slow[g];
      len += (size_t)snprintf(t + len, cap - len,
                              "add,%.6f,%s,vectorized_elementwise_kernel<4>,%.0f,1,1,128,1,1,%.0f,%.0f\n",
                              us / 1000, dev[g], ceil(B * H / 512), B, H);
    }
  tests_write_file(f, t, len);
  free(t);
  char *out = NULL, *err = NULL;
  snprintf(cmd, sizeof cmd, "'%s' dataset import-neusight '%s' -o '%s' && '%s' train '%s' --gpu "
           "T4,V100-PCIE --target time --trees 20 -o '%s'", tests_kcast(), f, db, tests_kcast(),
           db, m);
  int rc = tests_run(cmd, &out, &err);
  CHECK_MSG("a model of the T4 and the V100 trains on imported operator launches", rc == 0);
  free(out);
  free(err);
  snprintf(cmd, sizeof cmd, "'%s' cv '%s' --gpu all --target time --group gpu --trees 10 "
           "--no-calibrate --shots 0,5,20 --per-app --format json", tests_kcast(), db);
  rc = tests_run(cmd, &out, &err);
  CHECK_MSG("cv --shots 0,5,20 --per-app: the figures of each further shot count, per operator",
            rc == 0 && out && strstr(out, "\"shots_more\":[{") && strstr(out, "\"shots\":20") &&
                strstr(out, "\"per_launch_app\":{\"add\":"));
  char *five = out ? strstr(out, "\"shots\":5") : NULL;
  CHECK_MSG("... the slow P4 held out gains from its shots (JSON in shot order)", five != NULL);
  free(out);
  free(err);
  snprintf(cmd, sizeof cmd, "'%s' cv '%s' --gpu all --target time --shots 5", tests_kcast(), db);
  rc = tests_run(cmd, NULL, &err);
  CHECK_MSG("--shots without --group is a usage error", rc == 2 && err && strstr(err, "needs --group"));
  free(err);
  snprintf(cmd, sizeof cmd, "'%s' calibrate '%s' '%s' --gpu P4 --shots 10 -o '%s'", tests_kcast(),
           m, db, m2);
  rc = tests_run(cmd, &out, &err);
  CHECK_MSG("kcast calibrate adapts it to the P4 with 10 of its launches",
            rc == 0 && out && strstr(out, "adapted to P4 with 10 launches"));
  free(out);
  free(err);
  snprintf(cmd, sizeof cmd, "'%s' calibrate '%s' '%s' --gpu T4 -o '%s'", tests_kcast(), m, db, m2);
  rc = tests_run(cmd, NULL, &err);
  CHECK_MSG("calibrating for a GPU the model was trained on is refused",
            rc == 1 && err && strstr(err, "was trained on T4"));
  free(err);
  /* the P4 (twice as slow as its figures say) through both models */
  double p1 = 0, p2 = 0;
  for (int k = 0; k < 2; k++) {
    snprintf(cmd, sizeof cmd, "'%s' predict --op 'add B=3200 H=4096' --gpu P4 --model '%s' "
             "--format csv", tests_kcast(), k ? m2 : m);
    rc = tests_run(cmd, &out, &err);
    char *row = out ? strstr(out, ",P4,") : NULL;
    double v = row ? atof(row + 4) : 0;
    if (k) p2 = v; else p1 = v;
    free(out);
    free(err);
  }
  CHECK_MSG("the adapted model predicts the slow P4 about twice the unadapted one",
            p1 > 0 && p2 > 1.6 * p1 && p2 < 2.4 * p1);
}

static void test_api(void) {
  kcast_features *fs = NULL;
  char assumed[256];
  CHECK_MSG("kcast_features_from_op builds a set",
            kcast_features_from_op("softmax B=127 H=168", assumed, sizeof assumed, &fs) == KCAST_OK);
  double v = 0;
  CHECK_MSG("... with opr.* and launch.* features",
            kcast_features_get(fs, "opr.elements", &v) == KCAST_OK && v == 127 * 168 &&
                kcast_features_get(fs, "launch.ctas", &v) == KCAST_OK && v == 32);
  CHECK_MSG("... and says what it assumed", strstr(assumed, "grid 32,1,1"));
  kcast_prediction t;
  CHECK_MSG("the analytic estimate answers for it",
            kcast_predict_analytic("L4", fs, &t, NULL) == KCAST_OK && t.value >= 26000);
  kcast_features_free(fs);
  fs = NULL;
  CHECK_MSG("a bad description is KCAST_E_ARG with the reason",
            kcast_features_from_op("softmax B=1", NULL, 0, &fs) == KCAST_E_ARG && !fs &&
                strstr(kcast_last_error(), "softmax needs H="));
  /* on one GPU: a GEMM without its kernel gets the candidate predicted
     fastest there, the one kcast predict --op names */
  const char *lin = "linear B=1 M=178 N=3860 K=1550";
  CHECK_MSG("kcast_features_from_op_gpu picks a kernel for a linear on the T4",
            kcast_features_from_op_gpu(lin, NULL, "T4", assumed, sizeof assumed, &fs) == KCAST_OK &&
                fs && strstr(assumed, "the fastest predicted on T4"));
  double best = 0;
  CHECK_MSG("... no candidate is faster there by the analytic estimate",
            kcast_predict_analytic("T4", fs, &t, NULL) == KCAST_OK && (best = t.value) > 0);
  kcast_features_free(fs);
  opr_launch gl, cand[OPR_GEMM_CANDIDATES];
  opr_parse(lin, &gl);
  size_t nc = opr_gemm_candidates(&gl, cand, OPR_GEMM_CANDIDATES);
  int none_faster = nc == 8;
  for (size_t c = 0; c < nc; c++) {
    double cv[OPR_NFEAT];
    kcast_features *cf = NULL;
    opr_features(&cand[c], cv);
    kcast_features_new(&cf);
    for (size_t k = 0; k < OPR_NFEAT; k++) kcast_features_set(cf, opr_feature_names[k], cv[k]);
    if (kcast_predict_analytic("T4", cf, &t, NULL) != KCAST_OK || t.value < best) none_faster = 0;
    kcast_features_free(cf);
  }
  CHECK_MSG("... no candidate is faster there by the analytic estimate (each one alone)", none_faster);
  char cmd[1024], *out = NULL, kname[64] = "", want[80];
  sscanf(assumed, "kernel %63s", kname);
  snprintf(want, sizeof want, ",%s,", kname);
  snprintf(cmd, sizeof cmd, "KCAST_OP_MODEL= '%s' predict --op '%s' --gpu T4 --format csv",
           tests_kcast(), lin);
  CHECK_MSG("... the kernel kcast predict --op names on the T4",
            tests_run(cmd, &out, NULL) == 0 && out && !strncmp(kname, "sgemm_", 6) &&
                strstr(out, want));
  free(out);
  fs = NULL;
  CHECK_MSG("a softmax gets kcast_features_from_op's set",
            kcast_features_from_op_gpu("softmax B=127 H=168", NULL, "T4", assumed, sizeof assumed,
                                       &fs) == KCAST_OK && strstr(assumed, "grid 32,1,1"));
  kcast_features_free(fs);
  fs = NULL;
  CHECK_MSG("an unknown GPU is KCAST_E_NOTFOUND, nothing returned",
            kcast_features_from_op_gpu(lin, NULL, "NOPE", NULL, 0, &fs) == KCAST_E_NOTFOUND && !fs);
  CHECK_MSG("a NULL GPU is KCAST_E_ARG",
            kcast_features_from_op_gpu(lin, NULL, NULL, NULL, 0, &fs) == KCAST_E_ARG && !fs);
}

TEST_SUITES(register_operators) {
  CU_pSuite s = tests_suite("operators");
  TEST_ADD(s, test_parse);
  TEST_ADD(s, test_kernel_names);
  TEST_ADD(s, test_features);
  TEST_ADD(s, test_assumptions);
  TEST_ADD(s, test_assumptions_real);
  TEST_ADD(s, test_estimate);
  TEST_ADD(s, test_power_limit);
  TEST_ADD(s, test_import);
  TEST_ADD(s, test_import_real);
  TEST_ADD(s, test_adapt_fit);
  TEST_ADD(s, test_cv_shots);
  TEST_ADD(s, test_model_v4);
  TEST_ADD(s, test_cli_predict_op);
  TEST_ADD(s, test_cli_calibrate);
  TEST_ADD(s, test_api);
}
