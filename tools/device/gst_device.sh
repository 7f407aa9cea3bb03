#!/usr/bin/env bash
# The GStreamer element histeq on the GPU machine: its frames on CUDA memory after
# nvh264dec and in system memory are histeq export's, and its frame rates beside `histeq play
# --hwdec nvdec --max-speed` on the same 1080p H.264 clip. Run there with .carry carried (made here
# by tools/device/prepare_gst.sh; carry .carry/gst.tar.xz, about 20 MB):
#   OUT=$OUT bash tools/device/gst_device.sh
# With .carry/gst_old.tgz carried as well (prepare_gst.sh with HISTEQ_OLD_BUILD), the element of that
# other build is timed beside this one's, alternated run by run on the same pipelines (old/new ratio).
# Writes $OUT/gst_device.log (everything) and $OUT/gst_device.json (the figures). Exit 1 when a
# check fails or an element is missing.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/histeq-gst-out}
mkdir -p "$out"
log=$out/gst_device.log
exec > >(tee "$log") 2>&1
# shellcheck source=tools/device/gst_env.sh
source tools/device/gst_env.sh || exit 1
clip=$G/clip1080.mp4
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
failed=0
for e in nvh264dec histeq cudadownload fpsdisplaysink parsebin; do
  gst-inspect-1.0 "$e" >/dev/null 2>&1 || { echo "FAIL: the element $e does not load:"; gst-inspect-1.0 "$e" 2>&1 | tail -n 5; failed=1; }
done
[ $failed = 0 ] || exit 1
frames=$(cat "$G/clip1080.frames")
dec="filesrc location=$clip ! parsebin ! nvh264dec"
# shellcheck disable=SC2086
if ! gst-launch-1.0 -q $dec ! fakesink >/dev/null 2>&1; then
  echo "note: parsebin ! nvh264dec failed; qtdemux ! h264parse ! nvh264dec instead"
  dec="filesrc location=$clip ! qtdemux ! h264parse ! nvh264dec"
fi
cuda="video/x-raw(memory:CUDAMemory)"

# ---- frames: the CUDA-memory and the system-memory paths equal histeq export (md5 of raw I420) ----
md5_gst() {  # md5_gst "PIPELINE (ending in raw video)" [FORMAT, default I420]: the md5 of its frames in that format
  # shellcheck disable=SC2086
  gst-launch-1.0 -q $1 ! videoconvert dither=none ! video/x-raw,format=${2:-I420} ! fdsink fd=1 | md5sum | cut -d' ' -f1
}
check_frames() {  # check_frames NAME "HISTEQ PROPERTIES" "EXPORT FLAGS"
  local name=$1 props=$2 flags=$3 ref cudamd5 sysmd5
  "$H" export "$clip" -o /tmp/ref.yuv -y --codec rawvideo --pix-fmt yuv420p --progress none $flags || { echo "FAIL: histeq export $flags"; failed=1; return; }
  ref=$(md5sum </tmp/ref.yuv | cut -d' ' -f1)
  cudamd5=$(md5_gst "$dec ! $cuda ! histeq $props ! cudadownload")
  sysmd5=$(md5_gst "$dec ! video/x-raw ! histeq $props")
  echo "frames $name: export $ref, CUDA memory $cudamd5, system memory $sysmd5 ($(stat -c %s /tmp/ref.yuv) bytes)"
  [ "$ref" = "$cudamd5" ] && [ "$ref" = "$sysmd5" ] || { echo "FAIL: frames $name differ from histeq export"; failed=1; }
  rm -f /tmp/ref.yuv
}
check_frames defaults "" ""
# Every format on CUDA memory (cudaupload) equals system memory, compared in the format itself
# (videoconvert passes it through). GStreamer 1.22's cudaupload has no Y444_10LE.
for fmt in I420 NV12 NV21 Y42B Y444 I420_10LE I422_10LE P010_10LE; do
  src="videotestsrc num-buffers=60 pattern=ball ! video/x-raw,format=$fmt,width=1920,height=1080"
  as=$fmt; [[ $fmt == P010_10LE ]] && as=I420_10LE
  a=$(md5_gst "$src ! cudaupload ! histeq mode=clahe ! cudadownload" $as)
  b=$(md5_gst "$src ! histeq mode=clahe" $as)
  echo "frames $fmt clahe: CUDA memory $a, system memory $b"
  [ "$a" = "$b" ] || { echo "FAIL: $fmt on CUDA memory differs from system memory"; failed=1; }
done
check_frames clahe "mode=clahe" "--mode clahe"
check_frames plain "mode=global clip-limit=0 temporal=0 chroma=keep" "--plain"

# ---- frame rates: fpsdisplaysink's average (frames since the first one) and the frames over the
# time gst-launch reports from PLAYING to EOS (the start, the CUDA context and the decoder's set-up,
# is before it, in the preroll) ----
json=$out/gst_device.json
echo "{" >"$json"
fps_of() {  # fps_of KEY "PIPELINE"; three runs, the median of each figure
  local key=$1 p=$2 avgs=() runs=()
  for i in 1 2 3; do
    local msg t
    # shellcheck disable=SC2086
    msg=$(gst-launch-1.0 -v $p ! fpsdisplaysink video-sink=fakesink text-overlay=false sync=false fps-update-interval=100 2>&1)
    t=$(grep -o 'Execution ended after [0-9:.]*' <<<"$msg" | awk '{split($4, a, ":"); print a[1] * 3600 + a[2] * 60 + a[3]}')
    if [ -z "$t" ]; then echo "FAIL: $key: $p"; tail -n 5 <<<"$msg"; failed=1; return; fi
    avgs+=("$(grep -o 'average: [0-9.]*' <<<"$msg" | tail -n 1 | cut -d' ' -f2)")
    runs+=("$(awk -v n="$frames" -v t="$t" 'BEGIN {printf "%.1f", n / t}')")
  done
  local avg run
  avg=$(printf '%s\n' "${avgs[@]}" | sort -g | sed -n 2p)
  run=$(printf '%s\n' "${runs[@]}" | sort -g | sed -n 2p)
  echo "fps $key: ${avg:-?} (fpsdisplaysink average; runs ${avgs[*]}), $run (frames / PLAYING..EOS; runs ${runs[*]})"
  echo "  \"$key\": {\"fps\": ${avg:-null}, \"fps_playing\": $run}," >>"$json"
}
fps_of decode_only_cuda "$dec ! $cuda"
fps_of histeq_cuda "$dec ! $cuda ! histeq"
fps_of histeq_cuda_clahe "$dec ! $cuda ! histeq mode=clahe"
fps_of histeq_cuda_plain "$dec ! $cuda ! histeq mode=global clip-limit=0 temporal=0 chroma=keep"
fps_of decode_only_system "$dec ! video/x-raw"
fps_of histeq_system "$dec ! video/x-raw ! histeq"
fps_of histeq_system_clahe "$dec ! video/x-raw ! histeq mode=clahe"
play_fps() {  # play_fps KEY FLAGS...
  local key=$1 line
  shift
  line=$("$H" play "$clip" --hwdec nvdec --max-speed --headless "$@" 2>&1 | grep "done in" | tail -n 1)
  echo "histeq play $*: $line"
  echo "  \"$key\": {\"fps\": $(grep -o '[0-9.]* fps' <<<"$line" | cut -d' ' -f1)}," >>"$json"
}
play_fps play_nvdec
play_fps play_nvdec_clahe --mode clahe
# ---- the other build's element beside this one's (.carry/gst_old.tgz): the same pipelines,
# alternated, five runs each; frames over the PLAYING..EOS time ----
playing_fps() {  # playing_fps "PIPELINE": frames / the PLAYING..EOS time of one run
  local msg t
  # shellcheck disable=SC2086
  msg=$(gst-launch-1.0 $1 ! fakesink sync=false 2>&1)
  t=$(grep -o 'Execution ended after [0-9:.]*' <<<"$msg" | awk '{split($4, a, ":"); print a[1] * 3600 + a[2] * 60 + a[3]}')
  [ -n "$t" ] && awk -v n="$frames" -v t="$t" 'BEGIN {printf "%.1f", n / t}'
}
compare_old() {
  local o=/tmp/histeq-gst-old key p
  rm -rf $o && mkdir -p $o/plugins && tar -C $o -xzf .carry/gst_old.tgz || return 1
  for f in "$G"/plugins/*.so; do [ "$(basename "$f")" = libgsthisteq.so ] || ln -s "$f" $o/plugins/; done
  echo "old element: $(cat $o/COMMIT)"
  for key in defaults clahe; do
    p="$dec ! $cuda ! histeq"; [ $key = clahe ] && p="$p mode=clahe"
    local news=() olds=() n v
    for i in 1 2 3 4 5; do
      n=$(playing_fps "$p")
      v=$(GST_PLUGIN_SYSTEM_PATH_1_0=$o/plugins GST_REGISTRY_1_0=$o/registry.bin LD_LIBRARY_PATH=$o/lib:$LD_LIBRARY_PATH playing_fps "$p")
      news+=("${n:-0}"); olds+=("${v:-0}")
    done
    n=$(printf '%s\n' "${news[@]}" | sort -g | sed -n 3p); v=$(printf '%s\n' "${olds[@]}" | sort -g | sed -n 3p)
    echo "fps CUDA memory $key: new $n (runs ${news[*]}), old $v (runs ${olds[*]}), new/old $(awk -v a="$n" -v b="$v" 'BEGIN {if (b > 0) printf "%.3f", a / b}')"
    echo "  \"old_vs_new_$key\": {\"new_fps\": $n, \"old_fps\": $v}," >>"$json"
  done
}
[ -f .carry/gst_old.tgz ] && { compare_old || { echo "FAIL: the old element"; failed=1; }; }
echo "  \"frames\": ${frames:-0}, \"clip\": \"1920x1080 H.264\", \"failed\": $failed" >>"$json"
echo "}" >>"$json"
cat "$json"
exit $failed
