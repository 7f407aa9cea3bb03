#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine for histeq and builds it (Release) into build/.
#   bash scripts/setup.sh            install what is missing, configure, build
# Needs: root (or sudo) for apt-get, and the CUDA toolkit (nvcc) under /usr/local/cuda or on PATH.
# Idempotent: a second run installs nothing and only rebuilds what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake ninja-build pkg-config git
  libavformat-dev libavcodec-dev libavdevice-dev libswscale-dev libswresample-dev libavutil-dev libavfilter-dev ffmpeg libffmpeg-nvenc-dev
  libsdl2-dev libimgui-dev libstb-dev libepoxy-dev libgl-dev libegl-dev libegl-mesa0 libgl1-mesa-dri fonts-dejavu-core
  libcli11-dev nlohmann-json3-dev libgtest-dev libbenchmark-dev
  python3-skimage python3-matplotlib python3-opencv xvfb xauth
  slurm-wlm munge valgrind
  help2man man-db zsh fish dpkg-dev file
  libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev libgstreamer-plugins-bad1.0-dev gstreamer1.0-tools
  gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-plugins-bad gstreamer1.0-plugins-ugly
  gstreamer1.0-libav python3-gi gir1.2-gst-plugins-base-1.0
  python3-dev python3-venv python3-pytest python3-numpy python3-av locales
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v nvcc >/dev/null; then
  for d in /usr/local/cuda/bin /usr/local/cuda-*/bin; do
    [ -x "$d/nvcc" ] && export PATH="$d:$PATH" && break
  done
fi
command -v nvcc >/dev/null || { echo "setup: the CUDA toolkit (nvcc) is required and was not found" >&2; exit 1; }
export CUDACXX=${CUDACXX:-$(command -v nvcc)}

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build
