#!/usr/bin/env bash
# The GPU side of the picture-quality work (issue 8) in one call, under 4 minutes: the GPU tests of
# the new operations, the cost bench, the documented clips through the GPU path, and a headless
# play with the defaults. Expects the static binaries in .carry/bin and the clips in .carry/ (bench/
# prepare_device.sh makes them: .carry/real.mp4, .carry/quality/*.mkv). Writes 5 files under $OUT:
#   quality_tests.txt    device facts, then histeq_gpu_tests on the new operations and on what
#                        they touch (method2's and block_atomic's plain histograms, the plain
#                        equalizer with every kernel): tiled histograms of every tiled kernel against
#                        cpu_reference per tile (8/16-bit, odd sizes, pitches, misaligned tiles,
#                        one block a tile), every function against its CPU form, whole equalizers in
#                        every mode (8/10-bit, NV12, host and device frames) bit-identical to the
#                        CPU, live switching of every control with no frame lost, the comparison
#   quality_bench.txt    histeq quality --bench: plain, global with every control, clahe 8x8 (and
#                        with every control) at 1080p and 4K, method2 and block_atomic, CUDA events,
#                        median and p99 over 300 frames (+ the same as JSON below)
#   quality_bench.json
#   quality_runs.json    histeq quality --no-metrics on the four clips, GPU: per-frame stage times
#                        of each configuration (the metrics need Python, done on the build machine)
#   play.txt             play --headless at the source's rate and at full speed with the defaults
#                        (real.mp4, 1080p): the stage table with the temporal row, dropped frames
set -uo pipefail
bin=.carry/bin
out=${OUT:-/tmp/histeq-out}
mkdir -p "$out"
rc=0
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
  "$bin/histeq" info | head -12
  echo "== histeq_gpu_tests (quality)"
  # The new tests, then what the change touched: the refactored method2 and block_atomic kernels
  # (their plain histograms), the plain equalizer paths with every kernel, live kernel switching.
  timeout 130 "$bin/histeq_gpu_tests" --gtest_brief=1 \
    --gtest_filter='GpuTiles*:GpuQualityFunctions*:Modes/GpuQualityPipeline*:GpuQualityLive*:GpuLut*:Shapes/GpuApply*:GpuStages*:*GpuLiveControls*:GpuPipeline.*'
  echo "tests exit: $?"
  timeout 60 "$bin/histeq_gpu_tests" --gtest_brief=1 --gtest_filter='Matrix/GpuKernel.*method2*:Matrix/GpuKernel.*block*:Kernels/GpuPipeline.*'
  echo "tests exit: $?"
} > "$out/quality_tests.txt" 2>&1 || rc=1
[ "$(grep -c "tests exit: 0" "$out/quality_tests.txt")" = 2 ] || rc=1
grep -E "PASSED|FAILED|SKIPPED|tests ran|exit" "$out/quality_tests.txt" | tail -20

echo "== histeq quality --bench (GPU, CUDA events)"
{
  for k in method2 block_atomic; do
    timeout 60 "$bin/histeq" quality --bench --kernel "$k" --sizes 1080p,4k --input .carry/real.mp4 --runs 300 \
      --json "/tmp/quality_bench_$k.json" || echo "bench $k exit: $?"
  done
} > "$out/quality_bench.txt" 2>&1 || rc=1
python3 - "$out/quality_bench.json" /tmp/quality_bench_method2.json /tmp/quality_bench_block_atomic.json <<'EOF' || rc=1
import json, sys
runs = [json.load(open(p)) for p in sys.argv[2:]]
json.dump({"runs": runs}, open(sys.argv[1], "w"), indent=1)
EOF
cat "$out/quality_bench.txt"

echo "== the clips through the GPU path (stage times per frame)"
clips=(.carry/quality/trailer.mkv .carry/quality/street.mkv .carry/quality/dark.mkv .carry/quality/cut.mkv)
timeout 90 "$bin/histeq" quality "${clips[@]}" -o /tmp/quality-gpu --configs plain,default,clahe --no-metrics > /tmp/quality-gpu.txt 2>&1 || rc=1
cp /tmp/quality-gpu/histeq_runs.json "$out/quality_runs.json" 2>/dev/null || rc=1
tail -14 /tmp/quality-gpu.txt

echo "== play --headless with the defaults, 1080p"
{
  timeout 30 "$bin/histeq" play --headless --quiet .carry/real.mp4
  timeout 30 "$bin/histeq" play --headless --quiet --max-speed .carry/real.mp4
  timeout 30 "$bin/histeq" play --headless --quiet --max-speed --mode clahe .carry/real.mp4
} > "$out/play.txt" 2>&1 || rc=1
grep -A12 "^histeq play: done" "$out/play.txt" | head -45
exit $rc
