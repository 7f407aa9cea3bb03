#!/usr/bin/env bash
# The fold's serial chain (the last block's curve: clipped LUT, figures, states, brightness hold)
# on the device: is it bound by cold instruction fetch? (target 3 of the performance work)
#   PART=bench OUT=$OUT bash tools/device/chain_device.sh    quality --bench of every carried histeq*,
#                                                     three rounds in turn, in one call
#   PART=profile OUT=$OUT bash tools/device/chain_device.sh  Nsight Compute's warp states on the one-block
#                                                     temporal kernel (the steps) and the folded
#                                                     launch, and the code size of each kernel
#   PART=source OUT=$OUT bash tools/device/chain_device.sh   Nsight Compute's warp samples line by line on
#                                                     the steps' one-block kernels and the fold
# Carry .carry/bin.tgz (histeq = the change, histeq_prev = the binary before, other histeq_* =
# variants), .carry/real.mp4, and for PART=source .carry/q.cubin (below). Writes
# $OUT/chain_device_$PART.tgz.
set -uo pipefail
cd "$(dirname "$0")/../.."
PART=${PART:-bench}
RUNS=${RUNS:-300}
source tools/device/device_lib.sh
device_setup /tmp/chain_device

if [ "$PART" = bench ]; then
  for i in 1 2 3; do
    for exe in /tmp/hb/histeq /tmp/hb/histeq_*; do
      b=$(basename "$exe"); [ "$b" = histeq_gpu_tests ] && continue
      step timeout 150 "$exe" quality --bench --sizes 1080p,4k --input .carry/real.mp4 --runs "$RUNS" \
        --csv "$OUT/qb_${b}_$i.csv" > "$OUT/qb_${b}_$i.txt" 2>&1
    done
  done
  grep -H "global+all\|plain" "$OUT"/qb_*.txt | sed 's/  */ /g' >&2
fi
if [ "$PART" = profile ]; then
  for exe in /tmp/hb/histeq /tmp/hb/histeq_prev; do
    b=$(basename "$exe")
    step timeout 200 "$CUDA_BIN/ncu" --kernel-name regex:'temporal_ref|clipped_lut' --launch-skip 20 --launch-count 4 \
      --section WarpStateStats --section SchedulerStats --section InstructionStats --section SpeedOfLight \
      "$exe" quality --bench --sizes 1080p --input .carry/real.mp4 --runs 30 > "$OUT/ncu_steps_$b.txt" 2>&1
    step timeout 200 "$CUDA_BIN/ncu" --kernel-name regex:'fused_kernel' --launch-skip 60 --launch-count 4 \
      --section WarpStateStats --section SchedulerStats --section InstructionStats --section SpeedOfLight \
      "$exe" quality --bench --sizes 1080p --input .carry/real.mp4 --runs 30 > "$OUT/ncu_fold_$b.txt" 2>&1
    step timeout 100 "$CUDA_BIN/cuobjdump" -res-usage "$exe" > "$OUT/res_usage_$b.txt" 2>&1
  done
  grep -h "Stall No Instruction\|No Instruction\|Warp Cycles Per Issued\|Duration\|temporal_ref\|fused_kernel<" "$OUT"/ncu_*.txt | cut -c1-160 >&2
fi
if [ "$PART" = source ]; then
  # Per-line warp samples need the sources where -lineinfo recorded them (the build machine's
  # /work/main): a link to this checkout.
  mkdir -p /work 2>/dev/null && { [ -e /work/main ] || ln -s "$PWD" /work/main; }
  args=(quality --bench --sizes 1080p --input .carry/real.mp4 --runs 30)
  step timeout 200 "$CUDA_BIN/ncu" --kernel-name regex:'temporal_ref|clipped_lut' --launch-skip 20 --launch-count 10 \
    --warp-sampling-interval 0 --section SourceCounters --section WarpStateStats --section InstructionStats --import-source yes -f -o "$OUT/steps" $H "${args[@]}"
  step timeout 200 "$CUDA_BIN/ncu" --kernel-name regex:'fused_kernel' --launch-skip 60 --launch-count 4 \
    --warp-sampling-interval 0 --section SourceCounters --section WarpStateStats --import-source yes -f -o "$OUT/fold" $H "${args[@]}"
  # The SASS with its source lines (.carry/q.cubin: core/equalize/ops/temporal/temporal_gpu.cu compiled here with the build's
  # flags, -cubin -arch=sm_90: the same code as the binary's), to put the samples on lines.
  [ -f .carry/q.cubin ] && "$CUDA_BIN/nvdisasm" -g -c .carry/q.cubin > "$OUT/q_sass_lines.txt" 2>&1
  for r in steps fold; do
    for how in sass cuda,sass; do
      "$CUDA_BIN/ncu" --import "$OUT/$r.ncu-rep" --page source --csv --print-source $how > "$OUT/src_${r}_${how/,/_}.csv" 2> "$OUT/src_${r}_${how/,/_}.err"
      echo "$r $how: $(wc -l < "$OUT/src_${r}_${how/,/_}.csv") lines, $(head -c 300 "$OUT/src_${r}_${how/,/_}.err")" >&2
    done
    "$CUDA_BIN/ncu" --import "$OUT/$r.ncu-rep" --page details --print-details all > "$OUT/details_$r.txt" 2>&1
  done
fi
tar czf "$FINAL/chain_device_$PART.tgz" -C "$OUT" .
echo "chain_device: $rc failures" >&2
exit $rc
