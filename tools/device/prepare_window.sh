#!/usr/bin/env bash
# The player window on the GPU machine, which has no display, no X server and no SDL: builds histeq
# with the window (SDL2 + OpenGL + Dear ImGui) against the static FFmpeg (tools/device/static-ffmpeg.sh)
# and packs it with the shared libraries it and an X server need (SDL2, epoxy, the X libraries,
# Xvfb with its keyboard maps) into .carry-gui/window.tar.xz, for the
# device tool's `carry`. tools/device/device_run.sh window unpacks it there, starts Xvfb and plays with
# the NVIDIA GLX vendor library (__GLX_VENDOR_LIBRARY_NAME=nvidia), the CUDA-GL interop on.
set -euo pipefail
cd "$(dirname "$0")/../.."
prefix=$(bash tools/device/static-ffmpeg.sh)
PKG_CONFIG_PATH=$prefix/lib/pkgconfig cmake -S . -B build-gui -G Ninja -DHISTEQ_STATIC=ON -DHISTEQ_GUI=ON \
  -DHISTEQ_BUILD_TESTS=OFF -DCMAKE_CUDA_ARCHITECTURES="${HISTEQ_DEVICE_ARCH:-90}" >/dev/null
ninja -C build-gui histeq
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib" "$stage/share"
strip -o "$stage/bin/histeq" build-gui/app/histeq
cp "$(command -v Xvfb)" "$(command -v xkbcomp)" "$stage/bin/"
# No Mesa: its software rasterizer brings LLVM (over 150 MB with its libraries, past what a device
# call carries); the client side of GLX is NVIDIA's (__GLX_VENDOR_LIBRARY_NAME=nvidia).
cp -r /usr/share/X11/xkb "$stage/share/xkb"
mkdir -p "$stage/share/fonts"
cp /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf /usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf "$stage/share/fonts/"
# Every shared library of these programs but the C runtime and the GL loaders (the device's
# driver brings its own vendor libraries; the glvnd loaders come from .carry/gl).
skip='^(linux-vdso|ld-linux|libc\.so|libm\.so|libdl\.so|libpthread\.so|librt\.so|libgcc_s|libstdc\+\+|libGL\.so|libGLX\.so|libEGL\.so|libOpenGL|libGLdispatch|libcuda|libnvidia)'
for f in "$stage/bin/histeq" "$stage/bin/Xvfb" "$stage/bin/xkbcomp" /usr/lib/x86_64-linux-gnu/libSDL2-2.0.so.0; do
  [ -f "$f" ] || continue
  ldd "$f" | awk '$3 ~ /^\// {print $1, $3}' | while read -r name path; do
    [[ $name =~ $skip ]] && continue
    cp -nL "$path" "$stage/lib/$name"
  done
done
cp -nL /usr/lib/x86_64-linux-gnu/libSDL2-2.0.so.0 "$stage/lib/"
mkdir -p .carry-gui
tar -C "$stage" -cf - . | xz -T2 -6 > .carry-gui/window.tar.xz
du -sh .carry-gui/window.tar.xz
