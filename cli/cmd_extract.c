/*
 * cmd_extract.c -- `kcast extract`: static features of the kernels in a
 * .ptx/.cu/.ll/.bc file.
 *
 * Pipeline: fe_to_ptx (front end by extension) -> ptx_parse -> ptx_cfg_build
 * -> feat_static per .entry.  Output is a table per kernel (default), CSV (a
 * header row `kernel,<feature>...`, the union of names over the selected
 * kernels with 0 where a kernel lacks one, one row per kernel) or JSON as
 * DESIGN.md fixes it: {"kernels": [{"name": MANGLED, "features": {...}}]}.
 *
 * --kernel K follows the rule of cli_select_kernels() (cli_kernel.c):
 * mangled name, else source name; an ambiguous name lists the candidates.
 */
#include "cli/cli.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "extractor/features.h"
#include "extractor/frontend.h"
#include "extractor/ptx.h"

const char cmd_extract_usage[] =
    "usage: kcast extract FILE.{ptx,cu,ll,bc} [--kernel K] [--format table|csv|json]\n"
    "                     [--list] [--compiler nvcc|clang] [--arch sm_XX]\n"
    "                     [--ptxas sm_XY[,sm_XY...]|all] [-I DIR] [-D NAME[=V]]\n"
    "                     [-std VERSION] [--cflags \"WORDS\"] [--tool-timeout SECS]\n"
    "\n"
    "Static features (static.*) of every kernel (.entry) in FILE; see\n"
    "docs/features.md for the names.  Every output gives the demangled\n"
    "signature beside the mangled name (csv: column demangled).\n"
    "\n"
    "  --kernel K      only kernel K: its mangled name, its demangled signature,\n"
    "                  or its source name, with template arguments to pick one\n"
    "                  instance ('gemm_tiled_kernel<16>')\n"
    "  --format F      table (default), csv (one row per kernel) or json\n"
    "  --list          list the kernels with their parameters instead (a .cu\n"
    "                  file's template instances from its compiled PTX; all its\n"
    "                  kernels, with a note, when libclang cannot read it)\n"
    "  --compiler C    compiler for .cu input: nvcc (default) or clang\n"
    "  --arch sm_XX    target architecture for .cu/.ll/.bc (default " FE_DEFAULT_ARCH ")\n"
    "  -I DIR, -D NAME[=VALUE], -std VERSION\n"
    "                  for .cu input: an include folder, a macro, the C++\n"
    "                  standard (-std=c++20), passed to nvcc or clang in order\n"
    "  --cflags \"WORDS\" more compiler options for .cu input, split at blanks\n"
    "                  (no shell runs them; quotes are not interpreted)\n"
    "  --ptxas ARCHS   also what ptxas reports for each kernel assembled for those\n"
    "                  architectures: ptxas.sm_XY.registers, spill_store_bytes,\n"
    "                  spill_load_bytes, stack_bytes, smem_bytes (all: every\n"
    "                  architecture of 'kcast gpus' this ptxas supports)\n"
    "  --gpus FILE     GPUs to add to the GPU table ('kcast help gpus')\n"
    "  --tool-timeout SECS  the time limit of each nvcc, clang and ptxas run (600;\n"
    "                  KCAST_TOOL_TIMEOUT too): a compiler still running then is\n"
    "                  killed with its children, and the command fails saying so\n"
    "\n"
    "Exit status: 0 ok, 1 bad input or unknown kernel, 2 bad command line.\n";

typedef struct kfeat {
  const ptx_func *k;
  feat_vec v;
} kfeat;

static void print_number(FILE *f, double x) {
  if (x == (double)(long long)x && x < 1e15 && x > -1e15) fprintf(f, "%lld", (long long)x);
  else fprintf(f, "%.17g", x);
}

static void out_table(kfeat *kf, long n) {
  for (long i = 0; i < n; i++) {
    size_t w = 0;
    for (size_t j = 0; j < kf[i].v.n; j++)
      if (strlen(kf[i].v.names[j]) > w) w = strlen(kf[i].v.names[j]);
    char *d = fe_demangle(kf[i].k->name);
    printf("%skernel %s%s%s\n", i ? "\n" : "", kf[i].k->name, d ? "  " : "", d ? d : "");
    free(d);
    for (size_t j = 0; j < kf[i].v.n; j++) {
      printf("  %-*s  ", (int)w, kf[i].v.names[j]);
      print_number(stdout, kf[i].v.vals[j]);
      putchar('\n');
    }
  }
}

static int out_csv(kfeat *kf, long n) {
  feat_vec cols;
  feat_init(&cols);
  for (long i = 0; i < n; i++)
    for (size_t j = 0; j < kf[i].v.n; j++)
      if (feat_set(&cols, kf[i].v.names[j], 0)) { feat_free(&cols); return -1; }
  feat_sort(&cols);
  fputs("kernel,demangled", stdout);
  for (size_t c = 0; c < cols.n; c++) { putchar(','); cli_csv_field(stdout, cols.names[c]); }
  putchar('\n');
  for (long i = 0; i < n; i++) {
    char *d = fe_demangle(kf[i].k->name);
    cli_csv_field(stdout, kf[i].k->name);
    putchar(',');
    cli_csv_field(stdout, d ? d : kf[i].k->name);
    free(d);
    for (size_t c = 0; c < cols.n; c++) {
      putchar(',');
      print_number(stdout, feat_get(&kf[i].v, cols.names[c], 0));
    }
    putchar('\n');
  }
  feat_free(&cols);
  return 0;
}

static int out_json(kfeat *kf, long n) {
  cJSON *root = cJSON_CreateObject();
  cJSON *arr = root ? cJSON_AddArrayToObject(root, "kernels") : NULL;
  if (!arr) { cJSON_Delete(root); return -1; }
  for (long i = 0; i < n; i++) {
    cJSON *k = cJSON_CreateObject();
    if (!k) { cJSON_Delete(root); return -1; }
    cJSON_AddItemToArray(arr, k);
    char *d = fe_demangle(kf[i].k->name);
    int ok = cJSON_AddStringToObject(k, "name", kf[i].k->name) &&
             cJSON_AddStringToObject(k, "demangled", d ? d : kf[i].k->name);
    free(d);
    if (!ok) { cJSON_Delete(root); return -1; }
    cJSON *fs = cJSON_AddObjectToObject(k, "features");
    if (!fs) { cJSON_Delete(root); return -1; }
    for (size_t j = 0; j < kf[i].v.n; j++)
      if (!cJSON_AddNumberToObject(fs, kf[i].v.names[j], kf[i].v.vals[j])) {
        cJSON_Delete(root);
        return -1;
      }
  }
  char *s = cJSON_Print(root);
  cJSON_Delete(root);
  if (!s) return -1;
  puts(s);
  cJSON_free(s);
  return 0;
}

/* --list for PTX input: entries with parameter names and PTX types. */
static void list_ptx(const ptx_module *m) {
  for (uint32_t i = 0; i < m->nfuncs; i++) {
    const ptx_func *f = &m->funcs[i];
    if (!f->is_entry) continue;
    printf("%s(", f->name);
    for (uint32_t p = 0; p < f->nparams; p++) {
      const ptx_var *v = &f->params[p];
      printf("%s.%s%s %s", p ? ", " : "", ptx_type_name((ptx_type)v->type),
             v->count > 1 ? "[]" : "", v->name ? v->name : "");
    }
    char *d = fe_demangle(f->name);
    printf(")%s%s\n", d ? "  " : "", d ? d : "");
    free(d);
  }
}

/* --list for .cu input: the kernels libclang sees (source names, parameter
   names, lines), then the template instances, which exist only in the
   compiled PTX (demangled signature and mangled name).  Each kernel is
   printed with the name of its .entry in the PTX, which is what --kernel
   takes: libclang mangles a static kernel _ZL3fooPf where nvcc's entry is
   _Z3fooPf (fe_same_function).  libclang is stricter than nvcc (C++17
   rejects `register`, which nvcc accepts): when it cannot read a file that
   compiles, the kernels are listed from the PTX alone, with a note. */
static int list_cu(const char *path, const fe_options *o) {
  fe_kernel *ks = NULL;
  size_t n = 0;
  char err[1024] = "", lerr[1024] = "";
  int listed = fe_list_kernels(path, o, &ks, &n, lerr, sizeof lerr) == 0;
  char *text = NULL;
  size_t len = 0;
  ptx_error perr;
  memset(&perr, 0, sizeof perr);
  ptx_module *m = NULL;
  int rc = KCAST_EXIT_OK;
  if (fe_to_ptx(path, o, &text, &len, err, sizeof err)) {
    if (!listed) {
      cli_error("%s", lerr[0] ? lerr : "cannot list kernels");
      free(text);
      return KCAST_EXIT_USER;
    }
    rc = KCAST_EXIT_USER;
  } else if (!(m = ptx_parse(text, len, path, &perr))) {
    if (!listed) {
      cli_error("%s", lerr[0] ? lerr : "cannot list kernels");
      free(text);
      return KCAST_EXIT_USER;
    }
    rc = KCAST_EXIT_USER;
  }
  if (!listed)
    fprintf(stderr, "kcast: note: libclang cannot read it (%s); the kernels are listed from "
            "the compiled PTX, without source names or lines\n",
            lerr[0] ? lerr : path);
  for (size_t i = 0; i < n; i++) {
    const char *entry = ks[i].mangled ? ks[i].mangled : "";
    for (uint32_t j = 0; m && j < m->nfuncs; j++) {
      const ptx_func *f = &m->funcs[j];
      if (f->is_entry && f->has_body && fe_same_function(f->name, ks[i].mangled)) {
        entry = f->name;
        break;
      }
    }
    printf("%s(", ks[i].name);
    for (size_t p = 0; p < ks[i].nparams; p++)
      printf("%s%s%s%s", p ? ", " : "", ks[i].params[p].type,
             ks[i].params[p].name[0] ? " " : "", ks[i].params[p].name);
    printf(")  %s  line %u\n", entry, ks[i].line);
  }
  if (rc != KCAST_EXIT_OK) {
    if (!m && text)
      cli_error("%s", perr.msg[0] ? perr.msg : "cannot parse PTX");
    else
      cli_error("%s (template instances are listed from the compiled PTX)", err[0] ? err : path);
  } else {
    for (uint32_t i = 0; i < m->nfuncs; i++) {
      const ptx_func *f = &m->funcs[i];
      if (!f->is_entry || !f->has_body) continue;
      size_t k = 0;
      while (k < n && !fe_same_function(ks[k].mangled, f->name)) k++;
      if (k < n) continue;
      char *d = fe_demangle(f->name);
      printf("%s  %s  %s\n", d ? d : f->name, f->name, listed ? "template instance" : "from PTX");
      free(d);
    }
  }
  ptx_module_free(m);
  free(text);
  fe_kernels_free(ks, n);
  return rc;
}

static int has_ext(const char *path, const char *ext) {
  size_t n = strlen(path), e = strlen(ext);
  return n > e && !strcasecmp(path + n - e, ext);
}

int cmd_extract(int argc, char **argv) {
  const char *path = NULL, *kernel = NULL, *arch = NULL, *ptxas = NULL;
  int fmt = CLI_FMT_TABLE, list = 0;
  fe_options fo = {FE_NVCC, NULL, NULL, 0};

  enum { X_KERNEL = CLI_OPT_OWN, X_FORMAT, X_COMPILER, X_ARCH, X_PTXAS, X_LIST };
  static const struct option lo[] = {
    {"kernel", required_argument, NULL, X_KERNEL},
    {"format", required_argument, NULL, X_FORMAT},
    {"compiler", required_argument, NULL, X_COMPILER},
    {"arch", required_argument, NULL, X_ARCH},
    {"ptxas", required_argument, NULL, X_PTXAS},
    {"list", no_argument, NULL, X_LIST},
    {NULL, 0, NULL, 0},
  };
  cli_opts o;
  cli_opts_init(&o, "extract", argc, argv, CLI_FE_SHORTOPTS, 0);
  cli_opts_add(&o, lo);
  cli_opts_add(&o, cli_gpus_longopts);
  cli_opts_add(&o, cli_fe_longopts);
  cli_opts_add(&o, cli_tool_longopts);
  cli_fe_args fa;
  fa.n = fa.used = 0;
  for (int c; (c = cli_opts_next(&o)) != CLI_OPT_END;) {
    const char *val = o.arg;
    int fr = cli_fe_option(&fa, &o, c);
    if (fr < 0) return KCAST_EXIT_USAGE;
    if (fr) continue;
    switch (c) {
      case CLI_OPT_ERR: return o.status;
      case X_KERNEL: kernel = val; break;
      case X_FORMAT:
        fmt = cli_parse_format(val);
        if (fmt < 0) return cli_usage_error("extract", "unknown format '%s' (table, csv or json)", val);
        break;
      case X_COMPILER:
        if (!strcmp(val, "nvcc")) fo.compiler = FE_NVCC;
        else if (!strcmp(val, "clang")) fo.compiler = FE_CLANG;
        else return cli_usage_error("extract", "unknown compiler '%s' (nvcc or clang)", val);
        break;
      case X_ARCH:
        if (strncmp(val, "sm_", 3) || !isdigit((unsigned char)val[3]))
          return cli_usage_error("extract", "bad --arch '%s' (expected sm_XX)", val);
        arch = val;
        break;
      case X_PTXAS:
        if (strcmp(val, "all") && strncmp(val, "sm_", 3))
          return cli_usage_error("extract", "bad --ptxas '%s' (sm_XY[,sm_XY...] or all)", val);
        ptxas = val;
        break;
      case X_LIST: list = 1; break;
    }
  }
  if (CLI_NOPERANDS(&o) > 1)
    return cli_usage_error("extract", "only one input file (got '%s' and '%s')",
                           CLI_OPERANDS(&o)[0], CLI_OPERANDS(&o)[1]);
  if (CLI_NOPERANDS(&o)) path = CLI_OPERANDS(&o)[0];
  if (!path) return cli_usage_error("extract", "missing input file");
  fo.arch = arch;
  fo.extra = fa.v;
  fo.nextra = fa.n;

  if (list && has_ext(path, ".cu")) return list_cu(path, &fo);

  int rc = KCAST_EXIT_USER;
  char *text = NULL;
  size_t len = 0;
  char ferr[1024] = "";
  ptx_module *m = NULL;
  const ptx_func **sel = NULL;
  kfeat *kf = NULL;
  long n = 0;
  ptx_error perr;
  memset(&perr, 0, sizeof perr);

  if (fe_to_ptx(path, &fo, &text, &len, ferr, sizeof ferr)) {
    cli_error("%s", ferr[0] ? ferr : "cannot read input");
    goto out;
  }
  m = ptx_parse(text, len, path, &perr);
  if (!m) {
    cli_error("%s", perr.msg[0] ? perr.msg : "cannot parse PTX");
    goto out;
  }
  if (list) {
    list_ptx(m);
    rc = KCAST_EXIT_OK;
    goto out;
  }
  if (ptx_cfg_build(m, &perr)) {
    cli_error("%s", perr.msg);
    goto out;
  }
  sel = calloc(m->nfuncs ? m->nfuncs : 1, sizeof *sel);
  if (!sel) { cli_error("out of memory"); goto out; }
  n = cli_select_kernels(m, kernel, sel, path);
  if (n < 0) goto out;
  if (n == 0) {
    cli_error("%s: no kernels (.entry) in this file", path);
    goto out;
  }
  kf = calloc((size_t)n, sizeof *kf);
  if (!kf) { cli_error("out of memory"); goto out; }
  for (long i = 0; i < n; i++) {
    kf[i].k = sel[i];
    feat_init(&kf[i].v);
    if (feat_static(m, sel[i], &kf[i].v, &perr)) {
      cli_error("%s", perr.msg);
      n = i + 1;
      goto out;
    }
  }
  if (ptxas) {
    feat_vec **vs = calloc((size_t)n, sizeof *vs);
    if (!vs) { cli_error("out of memory"); goto out; }
    for (long i = 0; i < n; i++) vs[i] = &kf[i].v;
    long got = cli_ptxas_features(text, len, path, ptxas, sel, vs, (size_t)n, 0);
    free(vs);
    if (got < 0) goto out;
  }
  for (long i = 0; i < n; i++) feat_sort(&kf[i].v);
  int orc = 0;
  switch (fmt) {
    case CLI_FMT_CSV: orc = out_csv(kf, n); break;
    case CLI_FMT_JSON: orc = out_json(kf, n); break;
    default: out_table(kf, n); break;
  }
  if (orc) { cli_error("out of memory writing output"); goto out; }
  rc = KCAST_EXIT_OK;

out:
  if (kf)
    for (long i = 0; i < n; i++) feat_free(&kf[i].v);
  free(kf);
  free(sel);
  ptx_module_free(m);
  free(text);
  return rc;
}
