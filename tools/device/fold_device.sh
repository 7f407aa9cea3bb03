#!/usr/bin/env bash
# Global mode's curve folded into the histogram's launch (planner.h, temporal_fold_gpu) and the
# brightness hold's probing search (core/equalize/ops/temporal/temporal_gpu.cu, ProbeSearch), their evidence on the device:
#   PART=bench OUT=$OUT bash tools/device/fold_device.sh    timings, frame identity, the profile
#   PART=checks OUT=$OUT bash tools/device/fold_device.sh   GPU tests, memcheck, racecheck
# Carry .carry/bin.tgz (histeq, histeq_prev: the binary before the fold, histeq_gpu_tests: static,
# tools/device/prepare_device.sh's build), .carry/real.mp4 and
# .carry/qclips/*.mkv (bench/make_quality_clips.py). Writes $OUT/fold_device_$PART.tgz:
#   qb_{new,prev}_N.{txt,csv,json}  quality --bench on real footage, three runs of each binary in
#                         turn: "global+all" (folded) beside "global+steps" (the same binary, the
#                         steps apart) in each
#   frames.txt            MD5 of the exports of the quality clips in global mode (the defaults, and
#                         without the clip and the colour pass): the GPU with method2_tuned (folded),
#                         with cub (the steps) and the CPU; the same sums mean the same pictures
#   gpu_tests.txt         every GPU test; memcheck.txt, racecheck.txt: the fold's, the brightness
#                         hold's and the temporal filter's tests under compute-sanitizer
#   ncu_fold.txt          Nsight Compute on the folded launch at 1080p (the plain case's 50 launches
#                         skipped, then global+all's: one a frame)
set -uo pipefail
cd "$(dirname "$0")/../.."
PART=${PART:-bench}
source tools/device/device_lib.sh
device_setup /tmp/fold_device

if [ "$PART" = bench ]; then
for i in 1 2 3; do
  for b in new prev; do
    exe=$H; [ $b = prev ] && exe=/tmp/hb/histeq_prev
    [ -x "$exe" ] || continue
    step timeout 150 $exe quality --bench --sizes 1080p,4k --input .carry/real.mp4 --runs 300 \
      --csv "$OUT/qb_${b}_$i.csv" --json "$OUT/qb_${b}_$i.json" > "$OUT/qb_${b}_$i.txt" 2>&1
  done
done
cat "$OUT"/qb_*_1.txt >&2
for c in .carry/qclips/*.mkv; do
  for cfg in defaults noclip; do
    q=(); [ $cfg = noclip ] && q=(--clip-limit 0 --chroma keep)
    for k in method2_tuned cub cpu; do
      arg=(-k $k --hwdec none); [ $k = cpu ] && arg=(--cpu)
      sum=$(timeout 120 $H export "$c" -o - -f rawvideo --codec rawvideo --an "${q[@]}" "${arg[@]}" 2>/dev/null | md5sum | cut -d' ' -f1)
      echo "$(basename "$c") $cfg $k $sum" >> "$OUT/frames.txt"
    done
  done
done
cat "$OUT/frames.txt" >&2
step timeout 200 "$CUDA_BIN/ncu" --kernel-name regex:'fused_kernel|temporal_ref|clipped_lut|m2t|colour' --launch-skip 60 --launch-count 12 \
  --section SpeedOfLight --section LaunchStats --section Occupancy $H quality --bench --sizes 1080p --input .carry/real.mp4 --runs 30 \
  > "$OUT/ncu_fold.txt" 2>&1
fi
if [ "$PART" = checks ]; then
step timeout 420 /tmp/hb/histeq_gpu_tests --gtest_brief=1 > "$OUT/gpu_tests.txt" 2>&1
tail -5 "$OUT/gpu_tests.txt" >&2
F='GpuQualityFunctions.TheFold*:GpuQualityFunctions.TheBrightnessHold*:GpuQualityFunctions.TemporalFilterInOne*:*IdenticalToCpu/default_folded_nv12_device:*IdenticalToCpu/temporal_only_folded'
step timeout 300 "$CUDA_BIN/compute-sanitizer" --tool memcheck --error-exitcode 9 /tmp/hb/histeq_gpu_tests --gtest_filter="$F" > "$OUT/memcheck.txt" 2>&1
tail -3 "$OUT/memcheck.txt" >&2
step timeout 300 "$CUDA_BIN/compute-sanitizer" --tool racecheck --error-exitcode 9 /tmp/hb/histeq_gpu_tests \
  --gtest_filter='GpuQualityFunctions.TheFolded*:GpuQualityFunctions.TheBrightnessHold*' > "$OUT/racecheck.txt" 2>&1
tail -3 "$OUT/racecheck.txt" >&2
fi
tar czf "$FINAL/fold_device_$PART.tgz" -C "$OUT" .
echo "fold_device: $rc failures" >&2
exit $rc
