/*
 * gpus.c -- the GPU table: public figures of the GPUs kcast knows, for the
 * analytic estimate (analytic.c), `kcast gpus` and `kcast predict --gpu`.
 *
 * Sources (by kind): NVIDIA product datasheets for clocks, peak FP32/FP64,
 * memory size and bandwidth, and board power (TDP / max board power); NVIDIA
 * architecture whitepapers (Kepler GK110/GK210, Volta, Turing, Ampere
 * GA100 and GA102, Ada AD102, Hopper) and the CUDA C++ Programming Guide's
 * table of compute-capability limits for SM counts, L2 size, shared memory
 * per SM and resident threads/CTAs per SM.  Peaks are the non-tensor
 * (CUDA-core) figures at the boost clock.  The K80 is a board of two GK210;
 * one CUDA device is one GK210, so its row is per GPU (half the board's
 * bandwidth, memory and power).
 *
 * idle_w is NOT a datasheet figure: it is an estimate of the power an idle,
 * clocked-up device draws (roughly 8-15% of the board limit, as nvidia-smi
 * shows on idle data-centre GPUs), documented as such in docs/gpus.md.
 *
 * The table is ordered by release; names are unique case-insensitively.
 */
#include <stddef.h>
#include <strings.h>

#include "model/model.h"

/*  name, full name, cc, SMs, boost MHz, FP32 GFLOP/s, FP64 GFLOP/s, GB/s,
    memory GB, L2 MB, shared KB/SM, threads/SM, CTAs/SM, TDP W, idle W */
static const an_gpu gpus[] = {
  {"K80", "NVIDIA Tesla K80 (one GK210 of the board)", 3, 7, 13, 875, 4368, 1456, 240,
   12, 1.5, 112, 2048, 16, 150, 25},
  {"V100", "NVIDIA Tesla V100 SXM2 16GB", 7, 0, 80, 1530, 15700, 7800, 900,
   16, 6, 96, 2048, 32, 300, 40},
  {"T4", "NVIDIA T4", 7, 5, 40, 1590, 8141, 254, 320,
   16, 4, 64, 1024, 16, 70, 10},
  {"A100", "NVIDIA A100 SXM4 40GB", 8, 0, 108, 1410, 19500, 9700, 1555,
   40, 40, 164, 2048, 32, 400, 50},
  {"A100-PCIE", "NVIDIA A100 PCIe 40GB", 8, 0, 108, 1410, 19500, 9700, 1555,
   40, 40, 164, 2048, 32, 250, 35},
  {"A4000", "NVIDIA RTX A4000", 8, 6, 48, 1560, 19170, 300, 448,
   16, 4, 100, 1536, 16, 140, 12},
  {"A6000", "NVIDIA RTX A6000", 8, 6, 84, 1800, 38710, 605, 768,
   48, 6, 100, 1536, 16, 300, 25},
  {"L4", "NVIDIA L4", 8, 9, 58, 2040, 30300, 473, 300,
   24, 48, 100, 1536, 24, 72, 16},
  {"RTX4090", "NVIDIA GeForce RTX 4090", 8, 9, 128, 2520, 82580, 1290, 1008,
   24, 72, 100, 1536, 24, 450, 25},
  {"H100", "NVIDIA H100 SXM5 80GB", 9, 0, 132, 1980, 66900, 33500, 3350,
   80, 50, 228, 2048, 32, 700, 70},
  {"H200", "NVIDIA H200 SXM 141GB", 9, 0, 132, 1980, 66900, 33500, 4800,
   141, 50, 228, 2048, 32, 700, 75},
};

size_t an_gpu_count(void) { return sizeof gpus / sizeof gpus[0]; }

const an_gpu *an_gpu_at(size_t i) { return i < an_gpu_count() ? &gpus[i] : NULL; }

const an_gpu *an_gpu_find(const char *name) {
  if (!name) return NULL;
  for (size_t i = 0; i < an_gpu_count(); i++)
    if (!strcasecmp(gpus[i].name, name)) return &gpus[i];
  return NULL;
}
