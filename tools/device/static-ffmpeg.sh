#!/usr/bin/env bash
# histeq's static FFmpeg for the GPU machine: ../shared/tools/static-ffmpeg.sh's build (the same
# 5.1 release as Debian's libav*-dev, from Debian's source package, libx264, NVDEC) plus what histeq's
# GPU-video work needs there: the NVENC encoders (h264_nvenc, hevc_nvenc: refused with one clear line
# on GPUs without the engine, such as the H100/H200) and the network inputs (udp, rtp, rtsp, tcp,
# http, HLS, MPEG-TS). Usage:
#   tools/device/static-ffmpeg.sh [PREFIX]      (default: $HOME/.cache/static-ffmpeg-histeq)
# then configure with  PKG_CONFIG_PATH=PREFIX/lib/pkgconfig  and link with `pkg-config --static`:
# the result needs only libc/libm at run time (libx264 is linked in). Strip it before carrying it.
# Idempotent: a finished PREFIX is reused. Takes about 6 minutes on 2 cores.
# HISTEQ_FFMPEG_LGPL=1: without libx264 (and so without --enable-gpl; default PREFIX
# $HOME/.cache/static-ffmpeg-histeq-lgpl): every archive then is position-independent code, which a
# shared library may link (Debian's libx264.a is not): tools/device/shared_core_device.sh links it into
# libhisteq-core.so. Exports then encode with mpeg4, ffv1 or NVENC.
set -euo pipefail
lgpl=${HISTEQ_FFMPEG_LGPL:-0}
if [[ $lgpl == 1 ]]; then prefix=${1:-$HOME/.cache/static-ffmpeg-histeq-lgpl}; else prefix=${1:-$HOME/.cache/static-ffmpeg-histeq}; fi
if [[ -f $prefix/.done ]]; then echo "$prefix"; exit 0; fi
export DEBIAN_FRONTEND=noninteractive
need=(build-essential nasm pkg-config libx264-dev libffmpeg-nvenc-dev xz-utils dpkg-dev)
missing=$(dpkg-query -W -f='${Status} ${Package}\n' "${need[@]}" 2>/dev/null | grep -vc "install ok installed" || true)
if [[ $missing != 0 ]] || [[ $(dpkg-query -W -f='${Status}\n' "${need[@]}" 2>/dev/null | wc -l) -lt ${#need[@]} ]]; then
  apt-get update -qq && apt-get install -y -qq "${need[@]}" >/dev/null
fi
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/parts"
cat > "$work/parts/src.sources" <<SRC
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
apt_src=(-o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$work/parts" -o Dir::State::Lists="$work/lists")
apt-get "${apt_src[@]}" update -qq 2>/dev/null
(cd "$work" && apt-get "${apt_src[@]}" source --download-only ffmpeg >/dev/null 2>&1)
tar -C "$work" -xf "$work"/ffmpeg_*.orig.tar.xz
cd "$work"/ffmpeg-*/
gpl=(--enable-gpl --enable-libx264)
x264=libx264,
if [[ $lgpl == 1 ]]; then gpl=(); x264=; fi
./configure --prefix="$prefix" --pkg-config-flags=--static \
  --disable-everything --disable-programs --disable-doc --disable-autodetect \
  --enable-static --disable-shared --enable-pic "${gpl[@]}" \
  --enable-ffnvcodec --enable-nvdec --enable-cuvid --enable-nvenc \
  --enable-hwaccel=h264_nvdec,hevc_nvdec,vp9_nvdec,av1_nvdec,mpeg2_nvdec,mpeg4_nvdec \
  --enable-decoder=h264,hevc,vp8,vp9,mpeg4,msmpeg4v3,mpeg2video,mjpeg,cinepak,rawvideo,png,prores,ffv1,aac,mp3,pcm_s16le,h264_cuvid,hevc_cuvid \
  --enable-encoder=${x264}mpeg4,ffv1,rawvideo,aac,png,h264_nvenc,hevc_nvenc \
  --enable-demuxer=mov,matroska,avi,mpegts,yuv4mpegpipe,rawvideo,image2,h264,hevc,mp3,aac,wav,hls,rtsp,sdp,rtp \
  --enable-muxer=mp4,mov,matroska,avi,yuv4mpegpipe,rawvideo,null,image2,mpegts \
  --enable-parser=h264,hevc,vp8,vp9,mpeg4video,mpegvideo,mjpeg,aac,mpegaudio,png \
  --enable-bsf=h264_mp4toannexb,hevc_mp4toannexb,aac_adtstoasc,vp9_superframe \
  --enable-protocol=file,pipe,udp,rtp,tcp,http,hls --enable-network --enable-indev=v4l2 --enable-swscale --enable-swresample \
  --enable-filter=scale,format,null,copy,aresample,atempo,aformat,abuffer,abuffersink >"$work/configure.log" 2>&1 || { tail -20 "$work/configure.log"; exit 1; }
make -j"$(nproc)" >"$work/make.log" 2>&1 || { tail -40 "$work/make.log"; exit 1; }
make install >/dev/null 2>&1
# libx264.a beside the FFmpeg archives: -L$prefix/lib then finds it before the system libx264.so
[[ $lgpl == 1 ]] || cp /usr/lib/x86_64-linux-gnu/libx264.a "$prefix/lib/"
touch "$prefix/.done"
echo "$prefix"
