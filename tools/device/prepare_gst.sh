#!/usr/bin/env bash
# The GStreamer element on the GPU machine, which has no GStreamer and no package registry: builds
# the element (libgsthisteq.so, with libhisteq.so) and histeq against the static FFmpeg
# (tools/device/static-ffmpeg.sh), downloads Debian 12's GStreamer debs (apt-get download) and stages the
# smallest set that runs `filesrc ! parsebin ! nvh264dec ! histeq ! fakesink` there, packed into
# .carry/gst.tar.xz (about 20 MB), which holds gst/:
#   .carry/gst/bin        gst-launch-1.0, gst-inspect-1.0 (gstreamer1.0-tools); histeq (static FFmpeg)
#   .carry/gst/libexec    gst-plugin-scanner (libgstreamer1.0-0)
#   .carry/gst/plugins    coreelements; typefindfunctions, playback (parsebin, decodebin), videotestsrc,
#                         videoconvertscale, app (plugins-base); isomp4 (plugins-good: qtdemux);
#                         videoparsersbad (h264parse), nvcodec (nvh264dec, cudadownload),
#                         debugutilsbad (fpsdisplaysink) (plugins-bad); histeq (this tree)
#   .carry/gst/lib        every shared library those need (GStreamer's, libgstcuda-1.0 from
#                         libgstreamer-plugins-bad1.0-0, GLib, liborc, the glvnd GL loaders that
#                         libgstgl-1.0 links, ...), taken from the debs; libhisteq.so
#   .carry/gst/PACKAGES   the debs (name and version) the files come from
#   .carry/gst/clip1080.mp4  10 s of 1080p30 H.264 (High, yuv420p); clip1080.frames its frame count
# The C runtime, libstdc++, libgcc_s and the NVIDIA driver's libraries (libcuda, libnvcuvid) are
# the device's own. Then, there: OUT=$OUT bash tools/device/gst_device.sh (carry .carry/gst.tar.xz).
# HISTEQ_OLD_BUILD=DIR (another tree's static build folder, its gsthisteq built there, e.g. of the
# commit before a change) also packs that element and its libhisteq into .carry/gst_old.tgz (about
# 8 MB), which gst_device.sh then times beside this tree's element (carry it too).
set -euo pipefail
cd "$(dirname "$0")/../.."
prefix=$(bash tools/device/static-ffmpeg.sh)
PKG_CONFIG_PATH=$prefix/lib/pkgconfig cmake -S . -B build-static -G Ninja -DHISTEQ_STATIC=ON -DHISTEQ_GSTREAMER=ON \
  -DCMAKE_CUDA_ARCHITECTURES="${HISTEQ_DEVICE_ARCH:-90}" >/dev/null
ninja -C build-static histeq gsthisteq
stage_out=$(mktemp -d)
out=$stage_out/gst
mkdir -p "$out/bin" "$out/libexec" "$out/plugins" "$out/lib" .carry
strip -o "$out/bin/histeq" build-static/app/histeq
strip --strip-unneeded -o "$out/plugins/libgsthisteq.so" build-static/app/gstreamer/libgsthisteq.so
strip --strip-unneeded -o "$out/lib/$(objdump -p build-static/app/gstreamer/libgsthisteq.so | awk '/SONAME|NEEDED/ && $2 ~ /^libhisteq/ {print $2}')" \
  "$(readlink -f build-static/core/libhisteq.so)"

sys=/usr/lib/x86_64-linux-gnu
plugins=(coreelements typefindfunctions playback videoconvertscale videotestsrc app isomp4 videoparsersbad nvcodec debugutilsbad)
programs=(/usr/bin/gst-launch-1.0 /usr/bin/gst-inspect-1.0 $sys/gstreamer1.0/gstreamer-1.0/gst-plugin-scanner)
for p in "${plugins[@]}"; do programs+=("$sys/gstreamer-1.0/libgst$p.so"); done
# The shared libraries they need, but the C runtime, the C++ runtime and the driver's.
skip='^(linux-vdso|ld-linux|libc\.so|libm\.so|libdl\.so|libpthread\.so|librt\.so|libgcc_s|libstdc\+\+|libcuda|libnvidia|libnvcuvid)'
libs=$( (for f in "${programs[@]}" build-static/app/gstreamer/libgsthisteq.so; do ldd "$f"; done) |
        awk '$3 ~ /^\// {print $1, $3}' | sort -u | while read -r name path; do [[ $name =~ $skip ]] || echo "$name $path"; done)
# The debs those files come from (Debian 12's, the versions installed here).
files=("${programs[@]}")
while read -r name path; do [[ $name == libhisteq* ]] || files+=("$(readlink -f "$path")"); done <<<"$libs"
pkgs=$(for f in "${files[@]}"; do dpkg -S "$f" 2>/dev/null || dpkg -S "${f/#\/usr\/lib//lib}"; done | cut -d: -f1 | sort -u)
debs=.cache/gst-debs
mkdir -p "$debs" /tmp/amd64-lists/partial
o=(-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64-lists -oAPT::Sandbox::User=root)
[ -f "$debs/.updated" ] || { apt-get "${o[@]}" update -qq; touch "$debs/.updated"; }
# The installed version, or the archive's current one where a point release replaced it (the same ABI).
(cd "$debs" && for p in $pkgs; do
  v=$(dpkg-query -W -f='${Version}' "$p")
  ls "${p%:*}_"*.deb >/dev/null 2>&1 || apt-get "${o[@]}" download -qq "$p=$v" 2>/dev/null || apt-get "${o[@]}" download -qq "$p"
done)
stage=$(mktemp -d)
trap 'rm -rf "$stage" "$stage_out"' EXIT
for f in "$debs"/*.deb; do dpkg -x "$f" "$stage"; basename "$f" .deb; done >"$out/PACKAGES"
# From the debs: each file under its own name (the loader looks the sonames up).
from_debs() {  # from_debs FILE-ON-THIS-MACHINE DEST (under /usr or / in the debs: usrmerge)
  local f=${1#/} c
  f=${f#usr/}
  for c in "usr/$f" "$f"; do
    [ -e "$stage/$c" ] && { cp -L "$stage/$c" "$2"; return; }
  done
  echo "prepare_gst.sh: $1 is in none of the debs" >&2
  exit 1
}
from_debs /usr/bin/gst-launch-1.0 "$out/bin/"
from_debs /usr/bin/gst-inspect-1.0 "$out/bin/"
from_debs "$sys/gstreamer1.0/gstreamer-1.0/gst-plugin-scanner" "$out/libexec/"
for p in "${plugins[@]}"; do from_debs "$sys/gstreamer-1.0/libgst$p.so" "$out/plugins/"; done
while read -r name path; do
  [[ $name == libhisteq* ]] && continue
  from_debs "$(dirname "$path")/$name" "$out/lib/$name"
done <<<"$libs"
# A 1080p H.264 clip for the frame rates (qtdemux ! h264parse ! nvh264dec there).
[ -f .cache/clip1080.mp4 ] || bench/make_real_clip.sh .cache/clip1080.mp4 300 1920x1080 30
cp .cache/clip1080.mp4 "$out/clip1080.mp4"
ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 "$out/clip1080.mp4" >"$out/clip1080.frames"
# xz: about 20 MB to carry instead of 60 (a device call carries 64 MiB at most).
tar -C "$stage_out" -cf - gst | xz -T2 -6 >.carry/gst.tar.xz
du -sh "$out" .carry/gst.tar.xz
if [ -n "${HISTEQ_OLD_BUILD:-}" ]; then
  old=$(mktemp -d)
  mkdir -p "$old/plugins" "$old/lib"
  strip --strip-unneeded -o "$old/plugins/libgsthisteq.so" "$HISTEQ_OLD_BUILD/app/gstreamer/libgsthisteq.so"
  strip --strip-unneeded -o "$old/lib/$(objdump -p "$HISTEQ_OLD_BUILD/app/gstreamer/libgsthisteq.so" | awk '/NEEDED/ && $2 ~ /^libhisteq/ {print $2}')" \
    "$(readlink -f "$HISTEQ_OLD_BUILD/core/libhisteq.so")"
  git -C "$HISTEQ_OLD_BUILD/.." rev-parse --short HEAD >"$old/COMMIT" 2>/dev/null || echo unknown >"$old/COMMIT"
  tar -C "$old" -czf .carry/gst_old.tgz plugins lib COMMIT
  rm -rf "$old"
  du -sh .carry/gst_old.tgz
fi
