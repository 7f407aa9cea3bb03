#!/usr/bin/env bash
# method2_tuned's verification on the GPU machine, in one call (docs/performance.md, "method2_tuned"):
# the GPU test suite, compute-sanitizer memcheck and racecheck on method2_tuned's and the fused
# path's tests, the bench matrix with predictability (method2_tuned, method2, cub, block_atomic at
# 1080p, 4k, 8k and 1 GiB, every content), the whole-equalization timing (fused vs unfused, 8- and
# 10-bit), bench --paper's predictability experiment, and the sweep harness (bench/sweep/).
#   DIR=folder-with-bin/-real.mp4-m2t_sweep bash tools/device/method2_tuned_device.sh      (outputs under $OUT)
# DIR holds histeq and histeq_gpu_tests (tools/device/prepare_device.sh builds them, static FFmpeg), the
# real clip and the m2t_sweep binary (bench/sweep/build.sh). Each step has a time limit; the
# outputs of all steps come back in one archive.
set -uo pipefail
dir=${DIR:-.devk9}
out=${OUT:-/tmp/method2-tuned-out}
o=/tmp/method2-tuned
mkdir -p "$o" "$out"
bin=$dir/bin
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv
  "$bin/histeq" info | head -8; } > "$o/info.txt" 2>&1
step() {  # step NAME SECONDS command...
  local name=$1 secs=$2; shift 2
  local t0=$SECONDS
  timeout "$secs" "$@" > "$o/$name.txt" 2>&1
  local rc=$?
  echo "== $name: rc=$rc, $((SECONDS - t0)) s" | tee -a "$o/steps.txt"
}
export HISTEQ_TEST_CLIP=$dir/real.mp4
step tests 150 "$bin/histeq_gpu_tests"
grep -E "tests ran|PASSED  \]|FAILED  \]|SKIPPED \]" "$o/tests.txt" | tail -12
step bench 170 "$bin/histeq" bench --kernel method2_tuned,method2,cub,block_atomic --sizes 1080p,4k,8k,1g --pitches tight \
  --inputs uniform,degenerate,natural,real,gaussian8 --input "$dir/real.mp4" --csv "$o/bench.csv" --json "$o/bench.json"
sed -n '/^predictability/,$p' "$o/bench.txt" | head -24
step equalize 60 "$bin/histeq" bench --equalize --inputs uniform,degenerate,natural,real,gaussian8 --input "$dir/real.mp4" \
  --csv "$o/equalize.csv" --json "$o/equalize.json"
grep -E "fused|lut\+apply" "$o/equalize.txt" | awk '{print $1, $4, $5, $6, $7}' | head -40
small='*GpuKernel.MatchesReference/method2_tuned__*31x17*:*method2_tuned__natural_1x4097_column*:*FusedShapes*/3:*FusedShapes*/12:*FusedGpu.EmptyPlanes*'
step memcheck 60 compute-sanitizer --tool memcheck --error-exitcode 3 "$bin/histeq_gpu_tests" --gtest_brief=1 \
  --gtest_filter='*method2_tuned*:*Fused*-*8192*:*4096x4096*:*3840*'
step racecheck 60 compute-sanitizer --tool racecheck --error-exitcode 3 "$bin/histeq_gpu_tests" --gtest_brief=1 --gtest_filter="$small"
tail -n 2 "$o/memcheck.txt" "$o/racecheck.txt"
step paper 40 "$bin/histeq" bench --paper "$o/paper" --experiments predictability --runs 20 "$dir/real.mp4"
step sweep 60 "$dir/m2t_sweep" "$o" --stages 0AD --runs 20
grep -E "^stage 0|^done|bestA" "$o/sweep.txt"
cp "$o/bench.csv" "$o/equalize.csv" "$out/" 2>/dev/null
tar czf "$out/method2_tuned.tgz" -C "$o" .
cat "$o/steps.txt"
