#!/usr/bin/env bash
# The six performance targets, each figure of today in one call (the closing measurement), with the
# profiles that explain the ones missed:
#   PART=bench OUT=$OUT bash tools/device/targets_device.sh    target 1: the kernels (method2_tuned, method2,
#       cub, block_atomic, the read ceiling) at 1080p, 4K and 1 GiB on every content; target 2: the
#       whole equalization per frame (fused vs cub + LUT + apply, 8- and 10-bit); target 3: the
#       quality controls (quality --bench on real footage); Nsight Compute on method2_tuned and cub,
#       on the fused plain launch and on the folded launch (the defaults)
#   PART=profile OUT=$OUT bash tools/device/targets_device.sh  the kernels' profiles alone
#   PART=checks OUT=$OUT bash tools/device/targets_device.sh   every GPU test, memcheck and racecheck on the
#       fused, folded and temporal kernels, and the exports' MD5 on the GPU (folded, the steps) and
#       the CPU: the same sums mean the same pictures
# Carry .carry/bin.tgz (histeq, histeq_gpu_tests: tools/device/prepare_device.sh's static build),
# .carry/real.mp4 (bench/make_real_clip.sh) and .carry/qclips/*.mkv (bench/make_quality_clips.py).
# Writes $OUT/targets_device_$PART.tgz.
set -uo pipefail
cd "$(dirname "$0")/../.."
PART=${PART:-bench}
source tools/device/device_lib.sh
device_setup /tmp/targets_device
R=.carry/real.mp4
S=(--section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats --section SchedulerStats)
# Nsight Compute on method2_tuned's and cub's histogram kernels: launches past the checks and the
# warm-up, 1080p then 4K.
kernel_profiles() {
  for k in method2_tuned cub; do
    step timeout 200 "$CUDA_BIN/ncu" --kernel-name regex:'histogram_kernel|Histogram' --launch-skip 4 --launch-count 16 "${S[@]}" \
      $H bench -k $k --sizes 1080p,4k --inputs real --pitches tight --input $R --runs 3 --warmup 2 > "$OUT/ncu_kernels_$k.txt" 2>&1
  done
}

if [ "$PART" = bench ]; then
  step timeout 240 $H bench -k method2_tuned,method2,cub,block_atomic --sizes 1080p,4k,1g --pitches tight --input $R --runs 100 \
    --csv "$OUT/kernels.csv" --json "$OUT/kernels.json" > "$OUT/kernels.txt" 2>&1
  step timeout 120 $H bench --equalize --sizes 1080p,4k --input $R --runs 100 --csv "$OUT/equalize.csv" > "$OUT/equalize.txt" 2>&1
  for i in 1 2; do
    step timeout 120 $H quality --bench --sizes 1080p,4k --input $R --runs 300 --csv "$OUT/quality_$i.csv" > "$OUT/quality_$i.txt" 2>&1
  done
  kernel_profiles
  step timeout 200 "$CUDA_BIN/ncu" --kernel-name regex:'fused_kernel' --launch-skip 20 --launch-count 4 "${S[@]}" \
    $H quality --bench --sizes 1080p --input $R --runs 30 > "$OUT/ncu_fused_plain.txt" 2>&1
  step timeout 200 "$CUDA_BIN/ncu" --kernel-name regex:'fused_kernel' --launch-skip 60 --launch-count 4 "${S[@]}" \
    $H quality --bench --sizes 1080p --input $R --runs 30 > "$OUT/ncu_folded.txt" 2>&1
  cat "$OUT/equalize.txt" "$OUT/quality_2.txt" >&2
  grep -h "Duration\|Warp Cycles Per Issued\|Achieved Occupancy\|^  [a-z].*(" "$OUT"/ncu_*.txt | cut -c1-140 >&2
fi
if [ "$PART" = profile ]; then  # the kernels' profiles alone
  kernel_profiles
  grep -h "Duration\|Warp Cycles Per Issued\|Achieved Occupancy\|^  [a-z].*(" "$OUT"/ncu_*.txt | cut -c1-140 >&2
fi
if [ "$PART" = checks ]; then
  step timeout 330 /tmp/hb/histeq_gpu_tests --gtest_brief=1 --gtest_filter='-Matrix/*' > "$OUT/gpu_tests.txt" 2>&1
  tail -4 "$OUT/gpu_tests.txt" >&2
  M='GpuQualityFunctions.TheFold*:GpuQualityFunctions.TheBrightnessHold*:GpuQualityFunctions.TemporalFilterInOne*:FusedGpu.*:*IdenticalToCpu/default_folded_nv12_device'
  step timeout 240 "$CUDA_BIN/compute-sanitizer" --tool memcheck --error-exitcode 9 /tmp/hb/histeq_gpu_tests --gtest_brief=1 \
    --gtest_filter="$M" > "$OUT/memcheck.txt" 2>&1
  tail -3 "$OUT/memcheck.txt" >&2
  step timeout 240 "$CUDA_BIN/compute-sanitizer" --tool racecheck --error-exitcode 9 /tmp/hb/histeq_gpu_tests --gtest_brief=1 \
    --gtest_filter='GpuQualityFunctions.TheFolded*:GpuQualityFunctions.TheBrightnessHold*' > "$OUT/racecheck.txt" 2>&1
  tail -3 "$OUT/racecheck.txt" >&2
  for c in .carry/qclips/*.mkv; do
    for k in method2_tuned cub cpu; do
      arg=(-k $k --hwdec none); [ $k = cpu ] && arg=(--cpu)
      sum=$(timeout 120 $H export "$c" -o - -f rawvideo --codec rawvideo --an "${arg[@]}" 2>/dev/null | md5sum | cut -d' ' -f1)
      echo "$(basename "$c") defaults $k $sum" >> "$OUT/frames.txt"
    done
  done
  cat "$OUT/frames.txt" >&2
fi
tar czf "$FINAL/targets_device_$PART.tgz" -C "$OUT" .
echo "targets_device: $rc failures" >&2
exit $rc
