#!/usr/bin/env bash
# The temporal filter's GPU evidence in one device call:  OUT=$OUT bash tools/device/temporal_device.sh
# Carry .carry/bin.tgz (histeq, histeq_before: the binary before the change, histeq_gpu_tests,
# histeq_unit_tests; static, tools/device/prepare_device.sh's build), .carry/real.mp4 and optionally
# .carry/qclips/*.mkv (bench/make_quality_clips.py). Writes, packed
# into $OUT/temporal_device.tgz (a call brings back few files):
#   gpu_tests.txt         every GPU test but the kernel matrix (GPU == CPU bit for bit in every mode)
#   memcheck.txt          compute-sanitizer memcheck on GpuQualityFunctions.* (the temporal kernels)
#   racecheck.txt         compute-sanitizer racecheck over every quality kernel: quality --bench
#   qb_gpu_{new,before}_N.{csv,json}  quality --bench on the GPU, the two binaries alternated
#   qb_cpu_{new,before}_N.{csv,json}  the same with --cpu (the host's cores)
#   unit_tests.txt        the CPU unit tests of the quality controls on this host
#   clips_{new,before}.json  quality --no-metrics on .carry/qclips/*.mkv (when carried): per-frame
#                         GPU times of the defaults and clahe on real footage, each binary
set -uo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-2}  # SANITIZE=0 leaves out memcheck and racecheck
source tools/device/device_lib.sh
device_setup /tmp/temporal_device
step timeout 240 /tmp/hb/histeq_gpu_tests --gtest_brief=1 --gtest_filter='-Matrix/*' > "$OUT/gpu_tests.txt" 2>&1
tail -4 "$OUT/gpu_tests.txt" >&2
step timeout 120 /tmp/hb/histeq_unit_tests --gtest_brief=1 --gtest_filter='Quality.*:QualityPipeline.*' > "$OUT/unit_tests.txt" 2>&1
tail -2 "$OUT/unit_tests.txt" >&2
for r in $(seq 1 "$ROUNDS"); do
  for b in new before; do
    exe=/tmp/hb/histeq; [ $b = before ] && exe=/tmp/hb/histeq_before
    step timeout 90 $exe quality --bench --sizes 1080p,4k --input .carry/real.mp4 --runs 300 \
      --csv "$OUT/qb_gpu_${b}_$r.csv" --json "$OUT/qb_gpu_${b}_$r.json" > "$OUT/qb_gpu_${b}_$r.txt" 2>&1
    step timeout 90 $exe quality --bench --cpu --sizes 1080p --input .carry/real.mp4 --runs 100 \
      --csv "$OUT/qb_cpu_${b}_$r.csv" --json "$OUT/qb_cpu_${b}_$r.json" > "$OUT/qb_cpu_${b}_$r.txt" 2>&1
  done
done
grep -h -E 'clahe|global' "$OUT"/qb_gpu_*_1.txt >&2
# Real footage, frame after frame (the bench's frames jump between pictures, so its hold works at
# every frame): the quality clips through the GPU path, per-frame times of each binary.
if ls .carry/qclips/*.mkv > /dev/null 2>&1; then
  for b in new before; do
    exe=/tmp/hb/histeq; [ $b = before ] && exe=/tmp/hb/histeq_before
    step timeout 120 $exe quality .carry/qclips/*.mkv -o "/tmp/clips_$b" --configs default,clahe --no-metrics > "$OUT/clips_$b.txt" 2>&1
    cp "/tmp/clips_$b/histeq_runs.json" "$OUT/clips_$b.json"
  done
fi
if [ "${SANITIZE:-1}" = 1 ]; then
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
step timeout 150 "$SAN" --tool memcheck /tmp/hb/histeq_gpu_tests --gtest_brief=1 --gtest_filter='GpuQualityFunctions.*' > "$OUT/memcheck.txt" 2>&1
tail -3 "$OUT/memcheck.txt" >&2
step timeout 150 "$SAN" --tool racecheck /tmp/hb/histeq quality --bench --sizes 1080p --runs 10 > "$OUT/racecheck.txt" 2>&1
tail -3 "$OUT/racecheck.txt" >&2
fi
tar czf "$FINAL/temporal_device.tgz" -C "$OUT" .
echo "steps failed: $rc" >&2
exit $rc
