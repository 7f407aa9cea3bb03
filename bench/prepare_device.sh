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
for b in app/histeq tests/histeq_gpu_tests tests/histeq_unit_tests tests/histeq_gl_tests; do
  strip -o ".carry/bin/$(basename $b)" "build-static/$b"
done
# The GL tests need an EGL/GL loader there (the NVIDIA driver brings only its vendor libraries):
# Debian's glvnd loaders and libepoxy, unpacked on the device (device_run.sh does it).
if [ ! -f .carry/gl/.done ]; then
  mkdir -p .carry/gl /tmp/amd64-lists/partial
  o=(-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64-lists)
  apt-get "${o[@]}" update -qq
  (cd .carry/gl && apt-get "${o[@]}" download libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2 libepoxy0 >/dev/null)
  touch .carry/gl/.done
fi
[ -f .carry/real.mp4 ] || bench/make_real_clip.sh .carry/real.mp4 120
du -sh .carry
