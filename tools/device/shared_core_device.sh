#!/usr/bin/env bash
# The shared core on the GPU machine: libhisteq-core.so with the shared CUDA runtime beside it, as
# the normal build and the Debian package have them (docs/api.md), where the GPU machine has no
# FFmpeg: FFmpeg is the static one of tools/device/static-ffmpeg.sh without libx264 (HISTEQ_FFMPEG_LGPL=1:
# Debian's libx264.a cannot go into a shared library), linked into libhisteq-core (HISTEQ_STATIC
# with HISTEQ_SHARED_CORE).
#   bash tools/device/shared_core_device.sh prepare     here: build-shared-static, staged in .carry/shared/
#                                                 (the CLI, the GPU tests, libhisteq-core, libcudart)
#   bash tools/device/shared_core_device.sh run [ARGS]   there (carry .carry/shared): histeq --version and
#                                                 info, then the GPU tests (ARGS: gtest's, e.g. a filter)
# Exit: the GPU tests' status; 1 when a program does not load or a CUDA symbol is its own.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=.carry/shared

if [[ ${1:-} == run ]]; then
  shift
  export LD_LIBRARY_PATH=$PWD/$out/lib
  "$out/bin/histeq" --version
  "$out/bin/histeq" info | sed -n '/^GPU/,/^default kernel/p'
  exec "$out/bin/histeq_gpu_tests" --gtest_brief=1 "$@"
fi
[[ ${1:-} == prepare ]] || { echo "usage: $0 prepare | run [gtest arguments]" >&2; exit 2; }
prefix=$(HISTEQ_FFMPEG_LGPL=1 bash tools/device/static-ffmpeg.sh)
PKG_CONFIG_PATH=$prefix/lib/pkgconfig cmake -S . -B build-shared-static -G Ninja -DHISTEQ_STATIC=ON \
  -DHISTEQ_SHARED_CORE=ON -DHISTEQ_GUI=OFF -DCMAKE_CUDA_ARCHITECTURES="${HISTEQ_DEVICE_ARCH:-90}" >/dev/null
ninja -C build-shared-static histeq histeq_gpu_tests
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib"
strip -o "$out/bin/histeq" build-shared-static/app/histeq
strip -o "$out/bin/histeq_gpu_tests" build-shared-static/tests/histeq_gpu_tests
core=$(readlink -f build-shared-static/core/libhisteq-core.so)
strip -o "$out/lib/$(objdump -p "$core" | awk '$1 == "SONAME" {print $2}')" "$core"
# NVIDIA's runtime unmodified (its licence: share/doc/histeq/cuda-runtime-licence.txt), under its SONAME.
cudart=$(ldd build-shared-static/core/libhisteq-core.so | awk '$1 ~ /^libcudart/ {print $3}')
cp -L "$cudart" "$out/lib/$(objdump -p "$cudart" | awk '$1 == "SONAME" {print $2}')"
# One CUDA runtime a process: the programs define no CUDA function of their own, and nothing but
# the C and C++ runtimes and histeq's own libraries is needed there.
for b in app/histeq tests/histeq_gpu_tests; do
  if nm --defined-only "build-shared-static/$b" | grep -qE " [Tt] (cuda|__cuda)"; then
    echo "$b carries a CUDA runtime of its own" >&2
    exit 1
  fi
done
if LD_LIBRARY_PATH=$out/lib ldd "$out"/bin/* "$out"/lib/* | awk '{print $1}' | grep -vE "^(/|$out|linux-vdso|ld-linux)" |
   grep -vE "^(libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s)\.so|^libhisteq|^libcudart|:$" | sort -u | grep .; then
  echo "shared_core_device.sh: the programs above need more than the C and C++ runtimes" >&2
  exit 1
fi
du -sh "$out"
