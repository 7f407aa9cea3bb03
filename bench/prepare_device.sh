#!/usr/bin/env bash
# Builds the headless binaries against the static FFmpeg of ../shared/tools/static-ffmpeg.sh (the GPU
# machine has no FFmpeg) and stages them, with a real clip, in .carry/ for the device tool's `carry`.
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=$(bash ../shared/tools/static-ffmpeg.sh)
PKG_CONFIG_PATH=$prefix/lib/pkgconfig cmake -S . -B build-static -G Ninja -DHISTEQ_STATIC=ON \
  -DCMAKE_CUDA_ARCHITECTURES="${HISTEQ_DEVICE_ARCH:-90}" >/dev/null
ninja -C build-static
mkdir -p .carry/bin
for b in app/histeq tests/histeq_gpu_tests tests/histeq_unit_tests; do
  strip -o ".carry/bin/$(basename $b)" "build-static/$b"
done
[ -f .carry/real.mp4 ] || bench/make_real_clip.sh .carry/real.mp4 120
du -sh .carry
