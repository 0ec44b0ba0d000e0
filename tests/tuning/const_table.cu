/*
 * const_table.cu -- a tunable kernel reading a __constant__ table whose
 * size is a tuning parameter (table_words floats).  Every copy of a group
 * compiled together holds its own table, and ptxas takes at most 64 KiB
 * of them in one module: tests/test_ktimport.c imports a space of it.
 */
extern "C" {
__constant__ float table[table_words];

__global__ void const_table(float *out, int n) {
  int i = blockIdx.x * block_size_x + threadIdx.x;
  if (i < n) out[i] = table[i % table_words] * 2.0f;
}
}
