#!/usr/bin/env bash
# How many real-time 1080p60 streams one GPU holds (target 6 of the performance work), and what one
# process serving them all gains over one process per stream. Run on the GPU machine with
# .carry/gst.tar.xz (made here by tools/device/prepare_gst.sh: histeq with the static FFmpeg, the GStreamer
# element and the GStreamer it needs) and a 1080p60 H.264 clip (.carry/real600.mp4: `ffmpeg -stream_loop 4 -i
# .carry/real.mp4 -c copy .carry/real600.mp4`, 600 frames) carried:
#   OUT=$OUT [STREAMS=48,64,72,80] [GST_STREAMS=64,72,80,96] bash tools/device/streams_device.sh
# Writes $OUT/streams.log and $OUT/streams_{processes,gst}{,_max}.json (bench/streams.py's).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/histeq-streams-out}
mkdir -p "$out"
exec > >(tee "$out/streams.log") 2>&1
# shellcheck source=tools/device/gst_env.sh
source tools/device/gst_env.sh || exit 1
clip=${CLIP:-.carry/real600.mp4}
[ -f "$clip" ] || { echo "streams_device.sh: $clip is missing"; exit 1; }
frames=${CLIP_FRAMES:-600}
pcounts=${STREAMS:-48,64,72,80}
gcounts=${GST_STREAMS:-64,72,80,96}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
echo "cores: $(nproc)"
echo "== one process per stream (histeq play --headless --hwdec nvdec), real time"
python3 bench/streams.py --histeq "$H" --clip "$clip" --hwdec nvdec --streams "$pcounts" --json "$out/streams_processes.json"
echo "== one process for every stream (gst-launch-1.0, the histeq element on CUDA memory), real time"
python3 bench/streams.py --gst --clip "$clip" --clip-frames "$frames" --streams "$gcounts" --json "$out/streams_gst.json"
echo "== as fast as they go, 32 streams both ways"
python3 bench/streams.py --histeq "$H" --clip "$clip" --hwdec nvdec --streams 32 --max-speed --json "$out/streams_processes_max.json"
python3 bench/streams.py --gst --clip "$clip" --clip-frames "$frames" --streams 32 --max-speed --json "$out/streams_gst_max.json"
