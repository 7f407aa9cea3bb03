#!/usr/bin/env bash
# The operation list after a change to how it is driven or laid out (the Runner, the operations'
# folders, the control specs): the same frames and the same speed as the binary before it.
#   PART=frames OUT=$OUT bash tools/device/operations_device.sh
#       every clip of CLIPS (default .carry/q36) exported to raw frames under each standard setting
#       (below) three ways: this tree's histeq on the GPU, the same on the CPU (--cpu), and the binary
#       before it on the GPU; writes frames.txt (clip, setting, the three MD5s) and exits 1 when
#       one differs from the others
#   PART=bench OUT=$OUT bash tools/device/operations_device.sh
#       `quality --bench` and `bench --equalize` of both binaries, alternated, ROUNDS rounds (default
#       2): quality_{before,new}_N.txt, equalize_{before,new}_N.txt
# Needs .carry/bin.tgz (tools/device/prepare_device.sh: this tree's histeq), and BEFORE (default
# .carry/pre36.tgz, a .tgz holding histeq_before, the stripped static histeq of the commit before the
# change). Packs everything into $OUT/operations_$PART.tgz.
set -uo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tools/device/device_lib.sh
source tools/device/device_lib.sh
device_setup /tmp/operations-device
PART=${PART:-frames}
tar xzf "${BEFORE:-.carry/pre36.tgz}" -C /tmp/hb || { echo "operations_device.sh: no ${BEFORE:-.carry/pre36.tgz}" >&2; exit 1; }
B=/tmp/hb/histeq_before
"$B" --version > "$OUT/before_version.txt" 2>&1
"$H" --version > "$OUT/new_version.txt" 2>&1

# The standard settings, one per path of the plan: the folded defaults, plain (the fused launch),
# plain on cub (the steps), clahe, clahe with the colour and a clip limit, the temporal filter on
# cub (steps, not folded), the denoiser, OpenCV's clahe (textbook levels, full range).
SETTINGS=(
  "defaults|"
  "plain|--plain"
  "plain_cub|--plain -k cub"
  "clahe|--mode clahe"
  "clahe_colour|--mode clahe --clip-limit 2 --chroma auto"
  "temporal_cub|--temporal 0.3 -k cub"
  "denoise|--denoise 3"
  "textbook_clahe|--mode clahe --textbook --range full"
)

export_md5() {  # export_md5 BINARY CLIP FLAGS...: the MD5 of the raw frames (or "failed")
  local exe=$1 clip=$2 sum
  shift 2
  # shellcheck disable=SC2068
  sum=$(set -o pipefail; timeout 120 "$exe" export "$clip" -o - -f rawvideo --codec rawvideo --an --progress none $@ 2>/dev/null |
        md5sum | cut -d' ' -f1) && echo "$sum" || echo failed
}
export -f export_md5

if [ "$PART" = frames ]; then
  jobs=$OUT/jobs.txt
  : > "$jobs"
  for c in "${CLIPS:-.carry/q36}"/*; do
    for s in "${SETTINGS[@]}"; do
      printf '%s\t%s\t%s\n' "$c" "${s%%|*}" "${s#*|}" >> "$jobs"
    done
  done
  # One line a job: clip, setting, new GPU, new CPU, before GPU. Jobs run side by side (the CPU
  # exports take longest); the MD5s do not depend on it. The CPU runs its own kernel (a GPU kernel's
  # -k is dropped): every kernel counts the same histogram.
  # shellcheck disable=SC2016
  xargs -P "${JOBS:-6}" -d '\n' -I{} bash -c '
    IFS=$'"'"'\t'"'"' read -r c name flags <<<"{}"
    g=$(export_md5 '"$H"' "$c" --hwdec none $flags)
    p=$(export_md5 '"$H"' "$c" --cpu $(sed -E "s/-k [a-z0-9_]+//" <<<"$flags"))
    b=$(export_md5 '"$B"' "$c" --hwdec none $flags)
    same=same; { [ "$g" = "$p" ] && [ "$g" = "$b" ] && [ "$g" != failed ]; } || same=DIFFERENT
    echo "$(basename "$c") $name gpu $g cpu $p before $b $same"' < "$jobs" | sort > "$OUT/frames.txt"
  cat "$OUT/frames.txt" >&2
  n=$(wc -l < "$OUT/frames.txt")
  bad=$(grep -c DIFFERENT "$OUT/frames.txt")
  echo "frames: $n clip x setting cases, $bad differ" >&2
  [ "$bad" = 0 ] || rc=$((rc + 1))
fi

if [ "$PART" = bench ]; then
  for r in $(seq 1 "${ROUNDS:-2}"); do
    for b in before new; do
      exe=$H; [ $b = before ] && exe=$B
      step timeout 120 "$exe" quality --bench --sizes 1080p,4k --runs 200 --input .carry/real.mp4 > "$OUT/quality_${b}_$r.txt" 2>&1
      step timeout 60 "$exe" bench --equalize --sizes 1080p,4k > "$OUT/equalize_${b}_$r.txt" 2>&1
    done
  done
fi

tar czf "$FINAL/operations_$PART.tgz" -C "$OUT" .
echo "operations_device: $rc failures" >&2
exit $rc
