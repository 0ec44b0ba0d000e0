/*
 * cmd_gpus.c -- `kcast gpus`: the GPU table of the analytic estimate
 * (model/gpus.c, docs/gpus.md) as a table, CSV or JSON.
 */
#include "cli/cli.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"

const char cmd_gpus_usage[] =
    "usage: kcast gpus [--format table|csv|json] [--gpus FILE]\n"
    "\n"
    "List the GPUs kcast knows (the GPU table, docs/gpus.md), with the\n"
    "datasheet figures the analytic estimate and the per-GPU features use:\n"
    "compute capability, SMs, boost clock (MHz), peak FP32 and FP64 (GFLOP/s),\n"
    "memory bandwidth (GB/s), memory (GB), L2 (MB), shared memory per SM (KB),\n"
    "resident threads and CTAs per SM, TDP (W) and estimated idle power (W);\n"
    "csv and json add the aliases (driver names), shared memory per CTA,\n"
    "registers per SM and per thread.  --gpus FILE (or KCAST_GPUS=FILE, for\n"
    "every command) adds or replaces GPUs from a CSV of the columns\n"
    "`--format csv` prints; train, cv, predict and extract take --gpus too.\n"
    "A GPU is found by its name, an alias, or the name CUDA reports for the\n"
    "device ('NVIDIA A100-SXM4-40GB', 'Tesla T4').\n";

int cmd_gpus(int argc, char **argv) {
  int fmt = CLI_FMT_TABLE;
  static const struct option lo[] = {{"format", required_argument, NULL, 'f'},
                                      {NULL, 0, NULL, 0}};
  cli_opts op;
  cli_opts_init(&op, "gpus", argc, argv, "", 0);
  cli_opts_add(&op, lo);
  cli_opts_add(&op, cli_gpus_longopts);
  for (int c; (c = cli_opts_next(&op)) != CLI_OPT_END;) {
    if (c == CLI_OPT_ERR) return op.status;
    fmt = cli_parse_format(op.arg);
    if (fmt < 0) return cli_usage_error("gpus", "--format is table, csv or json, not '%s'", op.arg);
  }
  if (CLI_NOPERANDS(&op))
    return cli_usage_error("gpus", "unexpected argument '%s'", CLI_OPERANDS(&op)[0]);
  size_t n = an_gpu_count();
  if (fmt == CLI_FMT_JSON) {
    cJSON *arr = cJSON_CreateArray();
    int ok = arr != NULL;
    for (size_t i = 0; ok && i < n; i++) {
      const an_gpu *g = an_gpu_at(i);
      cJSON *o = cJSON_CreateObject();
      ok = o && cJSON_AddItemToArray(arr, o);
      char cc[16];
      snprintf(cc, sizeof cc, "%d.%d", g->cc_major, g->cc_minor);
      ok = ok && cJSON_AddStringToObject(o, "name", g->name) &&
           cJSON_AddStringToObject(o, "full_name", g->full_name) &&
           cJSON_AddStringToObject(o, "compute_capability", cc) &&
           cJSON_AddNumberToObject(o, "sms", g->sms) &&
           cJSON_AddNumberToObject(o, "boost_mhz", g->boost_mhz) &&
           cJSON_AddNumberToObject(o, "fp32_gflops", g->fp32_gflops) &&
           cJSON_AddNumberToObject(o, "fp64_gflops", g->fp64_gflops) &&
           cJSON_AddNumberToObject(o, "mem_bw_gbs", g->mem_bw_gbs) &&
           cJSON_AddNumberToObject(o, "mem_gb", g->mem_gb) &&
           cJSON_AddNumberToObject(o, "l2_mb", g->l2_mb) &&
           cJSON_AddStringToObject(o, "aliases", g->aliases) &&
           cJSON_AddNumberToObject(o, "smem_per_sm_kb", g->smem_per_sm_kb) &&
           cJSON_AddNumberToObject(o, "smem_per_cta_kb", g->smem_per_cta_kb) &&
           cJSON_AddNumberToObject(o, "smem_reserved_b", g->smem_reserved_b) &&
           cJSON_AddNumberToObject(o, "regs_per_sm", g->regs_per_sm) &&
           cJSON_AddNumberToObject(o, "max_regs_per_thread", g->max_regs_per_thread) &&
           cJSON_AddNumberToObject(o, "max_threads_per_sm", g->max_threads_per_sm) &&
           cJSON_AddNumberToObject(o, "max_ctas_per_sm", g->max_ctas_per_sm) &&
           cJSON_AddNumberToObject(o, "tdp_w", g->tdp_w) &&
           cJSON_AddNumberToObject(o, "idle_w", g->idle_w) &&
           cJSON_AddNumberToObject(o, "l1_kb", g->l1_kb);
    }
    char *s = ok ? cJSON_Print(arr) : NULL;
    cJSON_Delete(arr);
    if (!s) { cli_error("out of memory"); return KCAST_EXIT_USER; }
    puts(s);
    cJSON_free(s);
  } else if (fmt == CLI_FMT_CSV) {
    /* the columns of model/gpus.csv, so the output can seed a KCAST_GPUS file */
    puts("name,full_name,aliases,cc,sms,boost_mhz,fp32_gflops,fp64_gflops,mem_bw_gbs,mem_gb,"
         "l2_mb,smem_per_sm_kb,smem_per_cta_kb,smem_reserved_b,regs_per_sm,max_regs_per_thread,"
         "max_threads_per_sm,max_ctas_per_sm,tdp_w,idle_w,l1_kb");
    for (size_t i = 0; i < n; i++) {
      const an_gpu *g = an_gpu_at(i);
      const char *text[3] = {g->name, g->full_name, g->aliases};
      for (int k = 0; k < 3; k++) {
        cli_csv_field(stdout, text[k]);
        putchar(',');
      }
      printf("%d.%d,%d,%g,%g,%g,%g,%g,%g,%g,%g,%g,%d,%d,%d,%d,%g,%g,%g\n", g->cc_major, g->cc_minor, g->sms, g->boost_mhz,
             g->fp32_gflops, g->fp64_gflops, g->mem_bw_gbs, g->mem_gb, g->l2_mb,
             g->smem_per_sm_kb, g->smem_per_cta_kb, g->smem_reserved_b, g->regs_per_sm,
             g->max_regs_per_thread, g->max_threads_per_sm, g->max_ctas_per_sm, g->tdp_w,
             g->idle_w, g->l1_kb);
    }
  } else {
    printf("%-10s %4s %4s %6s %8s %8s %6s %5s %5s %5s %6s %7s %6s %5s %5s\n", "gpu", "cc",
           "sms", "mhz", "fp32_gf", "fp64_gf", "gb/s", "mem", "l1kb", "l2mb", "smemkb", "thr/sm",
           "cta/sm", "tdp", "idle");
    for (size_t i = 0; i < n; i++) {
      const an_gpu *g = an_gpu_at(i);
      printf("%-10s %2d.%d %4d %6.0f %8.0f %8.0f %6.0f %5.0f %5.0f %5.1f %6.0f %7d %6d %5.0f %5.0f\n",
             g->name, g->cc_major, g->cc_minor, g->sms, g->boost_mhz, g->fp32_gflops,
             g->fp64_gflops, g->mem_bw_gbs, g->mem_gb, g->l1_kb, g->l2_mb, g->smem_per_sm_kb,
             g->max_threads_per_sm, g->max_ctas_per_sm, g->tdp_w, g->idle_w);
    }
  }
  return KCAST_EXIT_OK;
}
