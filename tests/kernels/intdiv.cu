// intdiv.cu -- integer division and remainder, signed and unsigned, 32 and
// 64 bit.  Results follow C: truncation toward zero, remainder takes the
// dividend's sign.  Corner cases the caller can feed: negative operands,
// INT_MIN / -1 (guarded: it would overflow), division by zero (guarded:
// the result is defined here as 0).
__global__ void intdiv32(const int *a, const int *b, int *q, int *r, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int x = a[i], y = b[i];
  if (y == 0 || (x == (-2147483647 - 1) && y == -1)) {
    q[i] = 0;
    r[i] = 0;
  } else {
    q[i] = x / y;
    r[i] = x % y;
  }
}

__global__ void udiv32(const unsigned *a, const unsigned *b, unsigned *q,
                       unsigned *r, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned x = a[i], y = b[i];
  q[i] = y ? x / y : 0u;
  r[i] = y ? x % y : 0u;
}

__global__ void intdiv64(const long long *a, const long long *b, long long *q,
                         long long *r, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  long long x = a[i], y = b[i];
  if (y == 0 || (x == (-9223372036854775807LL - 1) && y == -1)) {
    q[i] = 0;
    r[i] = 0;
  } else {
    q[i] = x / y;
    r[i] = x % y;
  }
}

__global__ void udiv64(const unsigned long long *a,
                       const unsigned long long *b, unsigned long long *q,
                       unsigned long long *r, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned long long x = a[i], y = b[i];
  q[i] = y ? x / y : 0ull;
  r[i] = y ? x % y : 0ull;
}

// Division by constants: compilers turn these into multiply-high and shifts.
__global__ void div_const(const int *a, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int x = a[i];
  out[i] = x / 7 + x % 10 + (int)((unsigned)x / 3u);
}
