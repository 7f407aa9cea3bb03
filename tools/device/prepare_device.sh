#!/usr/bin/env bash
# Builds the headless binaries against the static FFmpeg of ../shared/tools/static-ffmpeg.sh (the GPU
# machine has no FFmpeg) and stages them, with real clips, in .carry/ for the device tool's `carry`:
#   .carry/bin/{histeq,histeq_gpu_tests,histeq_gl_tests}, .carry/gl (EGL loaders)
#   .carry/real.mp4      120 frames of bench/make_real_clip.sh (bench --input, the GPU export test)
#   .carry/real600.mp4   600 frames, 1080p60: the export benchmark's clip (bench/export_bench.py)
#   .carry/hevc10.mp4    2 s of 10-bit HEVC (NVDEC's P010 output)
#   .carry/quality/      the clips of histeq quality (bench/make_quality_clips.py), for device_quality.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
prefix=$(bash tools/device/static-ffmpeg.sh)  # ../shared/tools' build plus NVENC and the network inputs
PKG_CONFIG_PATH=$prefix/lib/pkgconfig cmake -S . -B build-static -G Ninja -DHISTEQ_STATIC=ON \
  -DCMAKE_CUDA_ARCHITECTURES="${HISTEQ_DEVICE_ARCH:-90}" >/dev/null
ninja -C build-static histeq histeq_gpu_tests histeq_gl_tests
# The CPU tests run here (and in CI); the device gets what needs a GPU (64 MiB travel at most).
mkdir -p .carry/bin
rm -f .carry/bin/histeq_unit_tests
for b in app/histeq tests/histeq_gpu_tests tests/histeq_gl_tests; do
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
# The binaries must not need FFmpeg's shared libraries (the device has none).
if ldd .carry/bin/histeq | grep -E "libav|libsw|libx264"; then
  echo "prepare_device.sh: .carry/bin/histeq links FFmpeg dynamically" >&2
  exit 1
fi
[ -f .carry/real.mp4 ] || bench/make_real_clip.sh .carry/real.mp4 120
# 10-bit HEVC (Main 10): NVDEC decodes it into P010 device frames (Debian's ffmpeg CLI has libx265).
[ -f .carry/hevc10.mp4 ] || ffmpeg -loglevel error -y -f lavfi -i "testsrc2=s=1280x720:r=30:d=2,format=yuv420p10le" \
  -c:v libx265 -x265-params log-level=error -pix_fmt yuv420p10le .carry/hevc10.mp4
if [ ! -f .carry/real600.mp4 ]; then
  if [ -f .cache/real1080p60_600.mp4 ]; then cp .cache/real1080p60_600.mp4 .carry/real600.mp4
  else bench/make_real_clip.sh .carry/real600.mp4 600 1920x1080 60; fi
fi
# The clips of `histeq quality` (docs/quality.md), for tools/device/device_quality.sh (under 1 MB).
[ -f .carry/quality/cut.mkv ] || /usr/bin/python3 bench/make_quality_clips.py .carry/quality
du -sh .carry
