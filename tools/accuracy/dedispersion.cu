// dedispersion.cu -- brute-force dedispersion, the tuned kernel of the
// dedispersion space in ../shared/data/tuning-features/cachefiles
// (dedispersion_A100.json.gz: block_size_x/y, tile_size_x/y, tile_stride_x/y;
// problem size 25000 samples x 2048 DMs): written for kcast's accuracy runs
// from the algorithm the space tunes,
//
//   out[dm][s] = sum over channels c of in[c][s + shift(dm, c)],
//   shift(dm, c) = (dm_first + dm * dm_step) * shifts[c]  (truncated),
//
// 1536 channels of 8-bit samples, 650 samples of largest delay.  Each thread
// computes tile_size_x samples by tile_size_y DMs, its tile's elements one
// apart (tile_stride 0) or a block apart (1).  tools/accuracy.sh imports the
// cachefile with it and a shifts file it writes (the delays of a 1425-1725
// MHz band sampled every 40.96 us).
#define nr_dms 2048
#define nr_samples 25000
#define nr_channels 1536
#define max_shift 650
#define samples_per_channel (nr_samples + max_shift)
#define dm_first 0.0f
#define dm_step 0.02f
#ifndef block_size_x
#define block_size_x 32
#endif
#ifndef block_size_y
#define block_size_y 8
#endif
#ifndef tile_size_x
#define tile_size_x 1
#endif
#ifndef tile_size_y
#define tile_size_y 1
#endif
#ifndef tile_stride_x
#define tile_stride_x 0
#endif
#ifndef tile_stride_y
#define tile_stride_y 0
#endif
#if tile_stride_x
#define STEP_X block_size_x
#define THREAD_X 1
#else
#define STEP_X 1
#define THREAD_X tile_size_x
#endif
#if tile_stride_y
#define STEP_Y block_size_y
#define THREAD_Y 1
#else
#define STEP_Y 1
#define THREAD_Y tile_size_y
#endif

extern "C" __global__ void dedispersion_kernel(const unsigned char *in, float *out,
                                               const float *shifts) {
  int x0 = blockIdx.x * block_size_x * tile_size_x + threadIdx.x * THREAD_X;
  int y0 = blockIdx.y * block_size_y * tile_size_y + threadIdx.y * THREAD_Y;
  for (int a = 0; a < tile_size_x; a++) {
    int s = x0 + a * STEP_X;
    if (s >= nr_samples) continue;
    for (int b = 0; b < tile_size_y; b++) {
      int dm = y0 + b * STEP_Y;
      if (dm >= nr_dms) continue;
      float acc = 0.0f;
      for (int c = 0; c < nr_channels; c++) {
        unsigned int sh = (dm_first + dm * dm_step) * shifts[c];
        acc += in[c * samples_per_channel + s + sh];
      }
      out[dm * nr_samples + s] = acc;
    }
  }
}
