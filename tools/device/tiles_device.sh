#!/usr/bin/env bash
# method2_tuned's tiled form (CLAHE's tile histograms), its evidence on the device:
#   PART=bench OUT=$OUT bash tools/device/tiles_device.sh     timings, frame identity, the profile
#   PART=checks OUT=$OUT bash tools/device/tiles_device.sh    GPU tests, memcheck, racecheck
#   PART=sweep OUT=$OUT bash tools/device/tiles_device.sh     the tiled plan's sweep (policy::Method2Tuned)
#   PART=apply OUT=$OUT bash tools/device/tiles_device.sh     the clahe apply against histeq_prev (carried
#                         too: the binary before the apply's change), frames, tests, profile
#   PART=profile OUT=$OUT bash tools/device/tiles_device.sh   Nsight Compute on every kernel of global +
#                         every control and clahe + every control at 1080p (ncu_global_all.txt,
#                         ncu_clahe_all.txt: where target 3's time goes)
# Carry .carry/bin.tgz (histeq, histeq_before: the binary before the change, histeq_gpu_tests,
# histeq_unit_tests; static, tools/device/prepare_device.sh's build), .carry/real.mp4 and
# .carry/qclips/*.mkv (bench/make_quality_clips.py). Writes $OUT/tiles_device_$PART.tgz:
#   bench_tiles_{8x8,32x32}.{csv,json,txt}  histeq bench --tiles: the tiled kernels side by side,
#                         every tile checked against cpu_reference before timing
#   bench_plain_{new,before}.*  method2_tuned and cub on whole planes, both binaries (the plain
#                         launch was refactored with the tiled one)
#   qb_{new,method2,before}_N.*  quality --bench: the new default (method2_tuned tiles), the new
#                         binary with -k method2 (the old tiled kernel), and the binary before
#   frames.txt            MD5 of the GPU clahe exports of the quality clips, both binaries
#   ncu_tiles.txt         Nsight Compute on the tiled kernel at 1080p (8x8 tiles)
#   ncu_clahe_stages_{new,before}.txt  the clahe stages' kernels of quality --bench at 1080p
#   clips_{new,before}.{txt,json}  quality --no-metrics on the quality clips: per-frame GPU times
#   gpu_tests.txt, matrix_m2t.txt, memcheck.txt, racecheck.txt (PART=checks)
#   sweep_{8x8,16x16,32x32}.*  method2_tuned's tiled plan: units per lane x (policy grid, one block
#                         a tile), 8-bit, 1080p and 4K; ref_*: method2 and block_atomic (PART=sweep)
set -uo pipefail
cd "$(dirname "$0")/../.."
PART=${PART:-bench}
source tools/device/device_lib.sh
device_setup /tmp/tiles_device
B=/tmp/hb/histeq_before
CONTENTS=uniform,degenerate,natural,real,gaussian8
# The MD5 of the raw frames of each quality clip's GPU export in clahe and global mode, the new
# binary and the one of a148b8c (frames.txt): the same sums mean the same pictures.
frame_sums() {
  for c in .carry/qclips/*.mkv; do
    for b in new before; do
      exe=$H; [ $b = before ] && exe=$B
      for m in clahe global; do
        sum=$(timeout 60 $exe export "$c" -o - -f rawvideo --codec rawvideo --an --mode $m 2>/dev/null | md5sum | cut -d' ' -f1)
        echo "$(basename "$c") $m $b $sum" >> "$OUT/frames.txt"
      done
    done
  done
  cat "$OUT/frames.txt" >&2
}

if [ "$PART" = bench ]; then
  for t in 8x8 16x16 32x32; do
    step timeout 150 $H bench --tiles $t -k method2_tuned,method2,block_atomic --sizes 1080p,4k --pitches tight \
      --inputs $CONTENTS --input .carry/real.mp4 --runs 200 \
      --csv "$OUT/bench_tiles_$t.csv" --json "$OUT/bench_tiles_$t.json" > "$OUT/bench_tiles_$t.txt" 2>&1
  done
  for b in new before; do
    exe=$H; [ $b = before ] && exe=$B
    step timeout 120 $exe bench -k method2_tuned,cub --sizes 1080p,4k --pitches tight --inputs $CONTENTS \
      --input .carry/real.mp4 --runs 200 \
      --csv "$OUT/bench_plain_$b.csv" --json "$OUT/bench_plain_$b.json" > "$OUT/bench_plain_$b.txt" 2>&1
  done
  for r in 1 2; do
    for b in new method2 before; do
      exe=$H; extra=(); [ $b = before ] && exe=$B; [ $b = method2 ] && extra=(-k method2)
      step timeout 90 $exe quality --bench "${extra[@]}" --sizes 1080p,4k --input .carry/real.mp4 --runs 300 \
        --csv "$OUT/qb_${b}_$r.csv" --json "$OUT/qb_${b}_$r.json" > "$OUT/qb_${b}_$r.txt" 2>&1
    done
  done
  grep -h -E 'clahe' "$OUT"/qb_*_1.txt >&2
  # Real footage frame after frame: the quality clips through the GPU path, per-frame stage times.
  for b in new before; do
    exe=$H; [ $b = before ] && exe=$B
    step timeout 120 $exe quality .carry/qclips/*.mkv -o "/tmp/clips_$b" --configs default,clahe --no-metrics > "$OUT/clips_$b.txt" 2>&1
    cp "/tmp/clips_$b/histeq_runs.json" "$OUT/clips_$b.json"
  done
  frame_sums
  step timeout 120 "$CUDA_BIN/ncu" --kernel-name regex:tiles_kernel --launch-skip 20 --launch-count 1 \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis \
    $H bench --tiles 8x8 -k method2_tuned --sizes 1080p --pitches tight --inputs natural --runs 30 > "$OUT/ncu_tiles.txt" 2>&1
  grep -E "Duration|Throughput|Achieved Occupancy|Registers|Block Size|Grid Size|Warp Cycles Per Issued" "$OUT/ncu_tiles.txt" >&2
  # The clahe stages' kernels, one frame of each binary (the tile LUTs, the reductions, the applies).
  for b in new before; do
    exe=$H; [ $b = before ] && exe=$B
    # quality --bench's cases in order: plain, global + all (40 frames: 20 warm-up, 20 timed), clahe
    # (5 matching kernels a frame), clahe + all: skip to clahe's 13th frame, then clahe + all's colour.
    step timeout 120 "$CUDA_BIN/ncu" --kernel-name regex:"tile_lut|tiles_reduce|tiles_kernel|apply_tiles" \
      --launch-skip 60 --launch-count 15 --section SpeedOfLight \
      $exe quality --bench --sizes 1080p --runs 20 > "$OUT/ncu_clahe_stages_$b.txt" 2>&1
    step timeout 120 "$CUDA_BIN/ncu" --kernel-name regex:"colour_kernel" --launch-skip 50 --launch-count 3 --section SpeedOfLight \
      $exe quality --bench --sizes 1080p --runs 20 > "$OUT/ncu_colour_$b.txt" 2>&1
  done
  grep -h -E "^  [a-z_].*\(|Duration" "$OUT"/ncu_clahe_stages_*.txt "$OUT"/ncu_colour_*.txt | sed 's/(.*//' >&2
elif [ "$PART" = apply ]; then
  P=/tmp/hb/histeq_prev
  for r in 1 2; do
    for b in new prev; do
      exe=$H; [ $b = prev ] && exe=$P
      step timeout 90 $exe quality --bench --sizes 1080p,4k --input .carry/real.mp4 --runs 300 \
        --csv "$OUT/qb_${b}_$r.csv" > "$OUT/qb_${b}_$r.txt" 2>&1
    done
  done
  grep -h -E 'clahe' "$OUT"/qb_*_1.txt >&2
  frame_sums
  for b in new prev; do
    exe=$H; [ $b = prev ] && exe=$P
    step timeout 120 "$CUDA_BIN/ncu" --kernel-name regex:"apply_tiles" --launch-skip 12 --launch-count 3 --section SpeedOfLight \
      --section MemoryWorkloadAnalysis $exe quality --bench --sizes 1080p --runs 20 > "$OUT/ncu_apply_$b.txt" 2>&1
  done
  # The colour pass: global + every control's frames 11-13, then clahe + every control's.
  for b in new prev; do
    exe=$H; [ $b = prev ] && exe=$P
    for skip in 10 50; do
      step timeout 120 "$CUDA_BIN/ncu" --kernel-name regex:"colour_kernel" --launch-skip $skip --launch-count 3 \
        --section SpeedOfLight --section WarpStateStats $exe quality --bench --sizes 1080p --runs 20 > "$OUT/ncu_colour_${b}_$skip.txt" 2>&1
    done
  done
  grep -h -E "^  void|Duration|L1/TEX Cache Throughput" "$OUT"/ncu_apply_*.txt "$OUT"/ncu_colour_*.txt | sed 's/(.*//' >&2
  step timeout 240 /tmp/hb/histeq_gpu_tests --gtest_brief=1 --gtest_filter='-Matrix/*' > "$OUT/gpu_tests.txt" 2>&1
  tail -3 "$OUT/gpu_tests.txt" >&2
  step timeout 200 "$CUDA_BIN/compute-sanitizer" --tool memcheck /tmp/hb/histeq_gpu_tests --gtest_brief=1 \
    --gtest_filter='GpuQualityFunctions.TileAndColour*' > "$OUT/memcheck.txt" 2>&1
  tail -2 "$OUT/memcheck.txt" >&2
elif [ "$PART" = profile ]; then
  SECTIONS=(--section SpeedOfLight --section WarpStateStats --section LaunchStats --section Occupancy)
  # quality --bench's cases: plain (the fused kernel), global + all (4 kernels a frame), clahe (5),
  # clahe + all: 20 warm-up and 20 timed frames each. Frames 11 and 12 of global + all, then of
  # clahe + all (the tiled histogram, two reductions, the tile LUTs, the temporal cluster, colour).
  step timeout 150 "$CUDA_BIN/ncu" --kernel-name regex:"histogram_kernel|clipped_lut|temporal|colour_kernel" \
    --launch-skip 40 --launch-count 8 "${SECTIONS[@]}" $H quality --bench --sizes 1080p --runs 20 > "$OUT/ncu_global_all.txt" 2>&1
  step timeout 150 "$CUDA_BIN/ncu" --kernel-name regex:"tiles_kernel|tiles_reduce|tile_lut|temporal|colour_kernel" \
    --launch-skip 320 --launch-count 12 "${SECTIONS[@]}" $H quality --bench --sizes 1080p --runs 20 > "$OUT/ncu_clahe_all.txt" 2>&1
  grep -h -E "^  void|Duration|Compute \(SM\) Throughput|L1/TEX Cache Throughput|Achieved Occupancy|Warp Cycles Per Issued|Grid Size|Block Size" \
    "$OUT"/ncu_global_all.txt "$OUT"/ncu_clahe_all.txt | sed 's/(.*//' >&2
elif [ "$PART" = sweep ]; then
  for t in 8x8 16x16 32x32; do
    n=$(( ${t%x*} * ${t#*x} ))
    step timeout 200 $H bench --tiles $t -k method2_tuned --units-per-lane 1,2,4,8,16,32 --max-blocks 0,$n \
      --sizes 1080p,4k --pitches tight --inputs natural,real --input .carry/real.mp4 --runs 100 \
      --csv "$OUT/sweep_$t.csv" --json "$OUT/sweep_$t.json" > "$OUT/sweep_$t.txt" 2>&1
    step timeout 100 $H bench --tiles $t -k method2,block_atomic --sizes 1080p,4k --pitches tight --inputs natural,real \
      --input .carry/real.mp4 --runs 100 --csv "$OUT/ref_$t.csv" > "$OUT/ref_$t.txt" 2>&1
    grep -A40 "^predictability" "$OUT/sweep_$t.txt" | grep -E "^(1080p|4k)" | sort -k1,1 -k6,6n | head -40 >&2
  done
  step timeout 120 "$CUDA_BIN/ncu" --kernel-name regex:"tile_lut|tiles_reduce|tiles_kernel" --launch-skip 30 --launch-count 6 \
    --section SpeedOfLight --section LaunchStats \
    $H quality --bench --sizes 1080p --runs 20 > "$OUT/ncu_clahe_stages.txt" 2>&1
  grep -E "^  [a-z_].*\(|Duration" "$OUT/ncu_clahe_stages.txt" >&2
else
  step timeout 240 /tmp/hb/histeq_gpu_tests --gtest_brief=1 --gtest_filter='-Matrix/*' > "$OUT/gpu_tests.txt" 2>&1
  tail -4 "$OUT/gpu_tests.txt" >&2
  step timeout 120 /tmp/hb/histeq_gpu_tests --gtest_brief=1 --gtest_filter='Matrix/*method2_tuned*' > "$OUT/matrix_m2t.txt" 2>&1
  tail -2 "$OUT/matrix_m2t.txt" >&2
  step timeout 120 /tmp/hb/histeq_unit_tests --gtest_brief=1 --gtest_filter='Lab.*:Quality.*' > "$OUT/unit_tests.txt" 2>&1
  tail -2 "$OUT/unit_tests.txt" >&2
  step timeout 200 "$CUDA_BIN/compute-sanitizer" --tool memcheck /tmp/hb/histeq_gpu_tests --gtest_brief=1 \
    --gtest_filter='GpuTiles.*' > "$OUT/memcheck.txt" 2>&1
  tail -3 "$OUT/memcheck.txt" >&2
  step timeout 150 "$CUDA_BIN/compute-sanitizer" --tool racecheck $H bench --tiles 8x8 -k method2_tuned \
    --sizes 640x360,333x201 --inputs uniform --runs 2 --warmup 1 > "$OUT/racecheck.txt" 2>&1
  tail -3 "$OUT/racecheck.txt" >&2
fi
tar czf "$FINAL/tiles_device_$PART.tgz" -C "$OUT" .
echo "steps failed: $rc" >&2
exit $rc
