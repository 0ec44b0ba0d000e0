#!/usr/bin/env bash
# gpu_bundle.sh -- `make gpu-bundle`: everything `make gpu-check` runs, built
# here, in one folder for a GPU machine that has the NVIDIA driver but not
# the build's packages (no compiler, no LLVM, no SQLite headers, no network).
#
#   gpu_bundle.sh BUILD OUT
#
# OUT/bin       kcast and libkcast_inject.so (kcast finds the library beside
#               itself)
# OUT/lib       the shared libraries kcast needs beyond the C library (ldd),
#               and the CUDA runtime the suite programs link (-cudart shared)
# OUT/cupti     libcupti.so.13 of this toolkit, used only where the GPU
#               machine has none of its own
# OUT/programs  tests/programs (gpu_check, ...), OUT/suite the kernel suite
# OUT/MANIFEST  what was built from which tree, with which compiler
#
# gpu_check.sh runs from it with KCAST_BUNDLE=OUT (docs/gpu-check.md).
set -eu -o pipefail
BUILD=$1 OUT=$2
CUDA_ROOT=${CUDA_ROOT:-$(dirname "$(dirname "$(command -v nvcc)")")}
tmp=$OUT.tmp.$$
rm -rf "$tmp"
mkdir -p "$tmp/bin" "$tmp/lib" "$tmp/cupti" "$tmp/programs" "$tmp/suite"
trap 'rm -rf "$tmp"' EXIT

cp "$BUILD/kcast" "$BUILD/libkcast_inject.so" "$tmp/bin/"
cp "$BUILD"/programs/* "$tmp/programs/"
cp "$BUILD"/suite/* "$tmp/suite/"

# Libraries outside the C runtime, as the loader resolves them here.
ldd "$BUILD/kcast" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | while read -r so; do
  case $(basename "$so") in
    libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|ld-linux*|libgcc_s.so.*) ;;
    *) cp -L "$so" "$tmp/lib/" ;;
  esac
done
for so in libcudart.so.13 libcupti.so.13; do
  src=""
  for d in "$CUDA_ROOT/lib64" "$CUDA_ROOT/lib" "$CUDA_ROOT/extras/CUPTI/lib64"; do
    [ -f "$d/$so" ] && { src=$d/$so; break; }
  done
  if [ -z "$src" ]; then echo "gpu-bundle: $so not found under $CUDA_ROOT" >&2; exit 1; fi
  case $so in libcupti*) cp -L "$src" "$tmp/cupti/" ;; *) cp -L "$src" "$tmp/lib/" ;; esac
done

# Nothing may need a library the bundle lacks (beyond the C runtime).
missing=$(LD_LIBRARY_PATH=$tmp/lib ldd "$tmp/bin/kcast" "$tmp"/suite/* 2>/dev/null |
          grep 'not found' || true)
if [ -n "$missing" ]; then echo "gpu-bundle: unresolved libraries: $missing" >&2; exit 1; fi

{
  echo "kcast gpu bundle"
  echo "tree: $(git describe --always --dirty 2>/dev/null || echo unknown)"
  echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -m)"
  echo "nvcc: $(nvcc --version | sed -n 's/.*release \([0-9.]*\), \(V[0-9.]*\).*/\1 \2/p')"
  echo "kcast: $("$BUILD/kcast" version 2>/dev/null)"
  # the newest C library version any file asks for: the oldest glibc it runs on
  echo "glibc: $(find "$tmp" -type f ! -name MANIFEST -exec objdump -T {} \; 2>/dev/null |
                 grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -n 1 | sed 's/GLIBC_//') or newer"
  echo "files:"
  (cd "$tmp" && find . -type f | sort | while read -r f; do
     printf '  %s %s\n' "$(stat -c %s "$f")" "${f#./}"; done)
} >"$tmp/MANIFEST"

rm -rf "$OUT"
mv "$tmp" "$OUT"
trap - EXIT
echo "gpu-bundle: $OUT ($(du -sh "$OUT" | cut -f1)): $(ls "$OUT/programs" | wc -l) test programs," \
     "$(ls "$OUT/suite" | wc -l) suite programs, $(ls "$OUT/lib" | wc -l) libraries"
