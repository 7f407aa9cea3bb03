#!/usr/bin/env bash
# Makes a clip of real footage for benches and tests: slow pans and zooms over the photographs that
# Debian's python3-skimage ships (astronaut, coffee, camera, coins, ...), encoded with x264.
#   bench/make_real_clip.sh OUT.mp4 [FRAMES=240] [WxH=1920x1080] [FPS=60]
# Needs the ffmpeg CLI and python3-skimage (scripts/setup.sh installs both).
set -euo pipefail
out=${1:?usage: make_real_clip.sh OUT.mp4 [FRAMES] [WxH] [FPS]}
frames=${2:-240}
size=${3:-1920x1080}
fps=${4:-60}
data=/usr/share/skimage-data
[ -d "$data" ] || data=/usr/lib/python3/dist-packages/skimage/data
photos=(astronaut.png coffee.png camera.png coins.png chelsea.png rocket.jpg)
inputs=()
filters=""
n=0
per=$(( (frames + ${#photos[@]} - 1) / ${#photos[@]} ))
for p in "${photos[@]}"; do
  [ -f "$data/$p" ] || continue
  inputs+=(-loop 1 -framerate "$fps" -i "$data/$p")
  # Upscale, then a slow zoom towards a point that drifts across the picture.
  filters+="[$n:v]format=yuv420p,scale=3840:-2:flags=bicubic,zoompan=z='1.0+0.3*on/$per':x='(iw-iw/zoom)*on/$per':y='(ih-ih/zoom)*(1-on/$per)/2':d=$per:s=$size:fps=$fps,setsar=1,trim=end_frame=$per,setpts=PTS-STARTPTS[v$n];"
  n=$((n + 1))
done
[ "$n" -gt 0 ] || { echo "make_real_clip.sh: no skimage photographs found in $data" >&2; exit 1; }
concat=""
for i in $(seq 0 $((n - 1))); do concat+="[v$i]"; done
filters+="${concat}concat=n=$n:v=1:a=0,trim=end_frame=$frames[out]"
tmp="$out.part.mp4"
ffmpeg -nostdin -loglevel error -y "${inputs[@]}" -filter_complex "$filters" -map '[out]' \
  -c:v libx264 -preset veryfast -crf 20 -pix_fmt yuv420p -r "$fps" "$tmp"
mv "$tmp" "$out"
