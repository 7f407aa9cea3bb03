#!/usr/bin/env bash
# Remakes the player screenshots of docs/screenshots/ (README, "Player"): a dimmed, low-contrast
# version of bench/make_real_clip.sh's photographs is played in a 1280x720 window under Xvfb, paused
# on chosen frames by --keys, captured with --screenshot, and stored as 256-colour PNGs (libimagequant
# through Debian's python3-pil) so each stays well under 500 KB. docs/screenshots/previous/ keeps the
# player as it was before paused changes showed at once, the OSD and mpv's keys (this script's
# earlier images).
#   bash scripts/player_screenshots.sh [BUILD=build]
# Needs: a build with the player window (HISTEQ_GUI), Xvfb, the ffmpeg CLI, python3-skimage, python3-pil.
set -euo pipefail
cd "$(dirname "$0")/.."
histeq=${1:-build}/app/histeq
out=docs/screenshots
tmp=$(mktemp -d)
xvfb=""
cleanup() {
  [ -n "$xvfb" ] && kill "$xvfb" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
mkdir -p "$out"

bench/make_real_clip.sh "$tmp/real.mp4" 180 1280x720 30
ffmpeg -nostdin -loglevel error -y -i "$tmp/real.mp4" -vf "eq=contrast=0.42:brightness=-0.13:saturation=0.8" \
  -c:v libx264 -preset veryfast -crf 18 "$tmp/dim.mp4"

Xvfb -displayfd 3 -screen 0 1280x720x24 -nolisten tcp 3>"$tmp/display" 2>/dev/null &
xvfb=$!
for _ in $(seq 100); do [ -s "$tmp/display" ] && break; sleep 0.1; done
export DISPLAY=":$(cat "$tmp/display")"

play() { "$histeq" play "$tmp/dim.mp4" --window 1280x720 --max-speed "$@" >/dev/null; }
# --max-speed: every frame is drawn (no drops on a busy machine); paused on the frame to show.
play --split 0.5 --frames 175 --keys "162:space" --screenshot "$tmp/overview.png"      # the rocket
play --split 0.42 --no-overlay --frames 50 --keys "44:space" --screenshot "$tmp/split.png"  # the coffee
play --frames 110 --keys "60:k,95:space,100:h" --screenshot "$tmp/help.png"             # the coins
# The statistics panel (i) beside the main panel.
play --frames 140 --keys "100:i,130:space" --screenshot "$tmp/stats.png"               # the camera man
# Settings B (plain equalization) left of the divider, the defaults right.
play --split 0.5 --compare plain --no-overlay --frames 50 --keys "44:space" --screenshot "$tmp/compare.png"
# Paused, the overlay hidden, g: the frame on screen made again in clahe mode, and the OSD says so.
play --no-overlay --frames 64 --keys "44:space,56:g" --screenshot "$tmp/osd.png"

/usr/bin/python3 - "$tmp" "$out" <<'PY'
import sys
from PIL import Image
tmp, out = sys.argv[1], sys.argv[2]
for name in ("overview", "split", "help", "compare", "stats", "osd"):
    im = Image.open(f"{tmp}/{name}.png").convert("RGB")
    q = im.quantize(colors=256, method=Image.Quantize.LIBIMAGEQUANT, dither=Image.Dither.FLOYDSTEINBERG)
    q.save(f"{out}/player-{name}.png", optimize=True)
PY
ls -l "$out"/player-*.png
