/*
 * rt_host.cu -- host-side behaviour the real runtime has with unified
 * addressing (tests/test_run.c):
 *   - cudaMallocHost hands out whole pages: the program writes 4000 bytes
 *     into a 10-byte pinned buffer (sloppy, but it survives on a GPU);
 *   - a kernel reads and writes pinned memory directly through
 *     cudaHostGetDevicePointer (zero-copy);
 *   - cudaMemcpy takes its direction from the pointers: a device source
 *     with cudaMemcpyHostToDevice, a device destination with
 *     cudaMemcpyDeviceToHost, and host-to-host with cudaMemcpyDeviceToDevice
 *     all copy correctly;
 *   - cudaPointerGetAttributes tells device, host (pinned) and unregistered
 *     memory apart; cudaFreeHost of a device pointer is an error.
 * Every result is compared with the CPU's; prints "PASS host".
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CHECK(x)                                                  \
  do {                                                            \
    cudaError_t e_ = (x);                                         \
    if (e_ != cudaSuccess) {                                      \
      printf("FAIL %s: %s\n", #x, cudaGetErrorName(e_));          \
      return 1;                                                   \
    }                                                             \
  } while (0)

__global__ void twice(const int *in, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 2 * in[i];
}

int main() {
  enum { N = 1000 };
  char *small;
  CHECK(cudaMallocHost((void **)&small, 10));
  memset(small, 0x5a, 4000); /* past the 10 bytes, inside the page */
  for (int i = 0; i < 4000; i++)
    if (small[i] != 0x5a) { printf("FAIL pinned page\n"); return 1; }
  int *pin_in, *pin_out, *dpin_in, *dpin_out;
  CHECK(cudaHostAlloc((void **)&pin_in, N * sizeof(int), cudaHostAllocMapped));
  CHECK(cudaHostAlloc((void **)&pin_out, N * sizeof(int), cudaHostAllocMapped));
  for (int i = 0; i < N; i++) pin_in[i] = i * 7 - 3;
  CHECK(cudaHostGetDevicePointer((void **)&dpin_in, pin_in, 0));
  CHECK(cudaHostGetDevicePointer((void **)&dpin_out, pin_out, 0));
  twice<<<(N + 127) / 128, 128>>>(dpin_in, dpin_out, N);
  CHECK(cudaDeviceSynchronize());
  for (int i = 0; i < N; i++)
    if (pin_out[i] != 2 * pin_in[i]) { printf("FAIL zero-copy %d\n", i); return 1; }
  int *d1, *d2, h[N], back[N], h2[N];
  for (int i = 0; i < N; i++) h[i] = i ^ 0x55;
  CHECK(cudaMalloc(&d1, sizeof h));
  CHECK(cudaMalloc(&d2, sizeof h));
  CHECK(cudaMemcpy(d1, h, sizeof h, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d2, d1, sizeof h, cudaMemcpyHostToDevice));   /* really device to device */
  CHECK(cudaMemcpy(back, d2, sizeof h, cudaMemcpyHostToDevice));  /* really device to host */
  CHECK(cudaMemcpy(h2, back, sizeof h, cudaMemcpyDeviceToDevice)); /* really host to host */
  for (int i = 0; i < N; i++)
    if (back[i] != h[i] || h2[i] != h[i]) { printf("FAIL copy direction %d\n", i); return 1; }
  cudaPointerAttributes a;
  CHECK(cudaPointerGetAttributes(&a, d1));
  if (a.type != cudaMemoryTypeDevice) { printf("FAIL attributes of device memory\n"); return 1; }
  CHECK(cudaPointerGetAttributes(&a, pin_in));
  if (a.type != cudaMemoryTypeHost) { printf("FAIL attributes of pinned memory\n"); return 1; }
  CHECK(cudaPointerGetAttributes(&a, h));
  if (a.type != cudaMemoryTypeUnregistered) { printf("FAIL attributes of host memory\n"); return 1; }
  if (cudaFreeHost(d1) == cudaSuccess) { printf("FAIL cudaFreeHost of device memory\n"); return 1; }
  CHECK(cudaFreeHost(small));
  CHECK(cudaFreeHost(pin_in));
  CHECK(cudaFreeHost(pin_out));
  CHECK(cudaFree(d1));
  CHECK(cudaFree(d2));
  printf("PASS host\n");
  return 0;
}
