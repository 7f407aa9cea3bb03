#!/usr/bin/env bash
# The GPU side of the picture-quality work in one call, under 9 minutes: every GPU test
# (the quality operations first, the kernel matrix last), the cost bench, the documented clips
# through the GPU path, and headless plays with the defaults (NVDEC 8-bit and P010 included).
# Expects the static binaries in .carry/bin and the clips in .carry/ (tools/device/prepare_device.sh makes
# them: .carry/real.mp4, .carry/hevc10.mp4, .carry/quality/*.mkv). Writes under $OUT:
#   quality_tests.txt    device facts, then histeq_gpu_tests: the quality operations and every
#                        other GPU test but the kernel matrix (tiled histograms of every tiled
#                        kernel against cpu_reference per tile, every function against its CPU
#                        form, whole equalizers in every mode (8/10-bit, NV12, P010, host and device
#                        frames) bit-identical to the CPU, live switching of every control with no
#                        frame lost, the comparison; NVDEC, the fused path, the pipeline)
#   matrix_tests.txt     the kernel matrix (every kernel x shape x content against cpu_reference)
#   quality_bench.txt    histeq quality --bench: plain (method2_tuned: the fused launch), global with
#   quality_bench.json   every control, clahe 8x8 (and with every control) at 1080p and 4K, for
#                        method2_tuned (the default) and method2; CUDA events, median and p99 over 300
#   quality_runs.json    histeq quality --no-metrics on the four clips, GPU: per-frame stage times
#                        of each configuration (the metrics need Python, done on the build machine)
#   play.txt             play --headless with the defaults: real.mp4 at its rate and at full speed,
#                        clahe, NVDEC 8-bit and 10-bit (P010) with the defaults
set -uo pipefail
bin=.carry/bin
out=${OUT:-/tmp/histeq-out}
mkdir -p "$out"
rc=0
export HISTEQ_TEST_CLIP=.carry/real.mp4 HISTEQ_TEST_HEVC10=.carry/hevc10.mp4
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
  "$bin/histeq" info | head -12
  echo "== histeq_gpu_tests (all but the kernel matrix)"
  timeout 200 "$bin/histeq_gpu_tests" --gtest_brief=1 --gtest_filter='-Matrix/*'
  echo "tests exit: $?"
} > "$out/quality_tests.txt" 2>&1 || rc=1
grep -q "tests exit: 0" "$out/quality_tests.txt" || rc=1
grep -E "PASSED|FAILED|SKIPPED|tests ran|exit|Failure" "$out/quality_tests.txt" | tail -25

echo "== histeq quality --bench (GPU, CUDA events)"
{
  for k in method2_tuned method2; do
    timeout 60 "$bin/histeq" quality --bench --kernel "$k" --sizes 1080p,4k --input .carry/real.mp4 --runs 300 \
      --json "/tmp/quality_bench_$k.json" || echo "bench $k exit: $?"
  done
} > "$out/quality_bench.txt" 2>&1 || rc=1
python3 - "$out/quality_bench.json" /tmp/quality_bench_method2_tuned.json /tmp/quality_bench_method2.json <<'EOF' || rc=1
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

echo "== play --headless with the defaults"
{
  for args in ".carry/real.mp4" "--max-speed .carry/real.mp4" "--max-speed --mode clahe .carry/real.mp4" \
              "--max-speed --plain .carry/real.mp4" "--hwdec nvdec --max-speed .carry/real.mp4" \
              "--hwdec nvdec --max-speed --mode clahe .carry/real.mp4" "--hwdec nvdec --max-speed .carry/hevc10.mp4" \
              "--hwdec nvdec --max-speed --mode clahe .carry/hevc10.mp4" "--max-speed --size 4k --duration 5"; do
    echo "### play --headless --quiet $args"
    timeout 40 "$bin/histeq" play --headless --quiet $args 2>&1 | grep -E "decoded by|note|error|done in|dropped|^  (decode|upload|equalize|histogram|lut|temporal|apply|download|present) "
  done
} > "$out/play.txt" 2>&1 || rc=1
cat "$out/play.txt"

echo "== the kernel matrix"
timeout "${MATRIX_TIMEOUT:-150}" "$bin/histeq_gpu_tests" --gtest_brief=1 --gtest_filter='Matrix/*' > "$out/matrix_tests.txt" 2>&1 || rc=1
grep -E "PASSED|FAILED|SKIPPED|tests ran|Failure" "$out/matrix_tests.txt" | tail -12
exit $rc
