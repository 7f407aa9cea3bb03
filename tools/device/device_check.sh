#!/usr/bin/env bash
# One device call after a merge: the GPU tests, memcheck on the quality kernels, the kernel and
# equalization benchmarks, the cost of the quality controls, and the CPU path's frame rate with
# the defaults against --plain on all cores and on two. Needs the static binaries of
# tools/device/prepare_device.sh packed as .carry/bin.tgz (histeq, histeq_gpu_tests). Writes to $OUT.
# Optional, when carried: histeq_old in .carry/bin.tgz (the binary before a change: its quality bench
# runs beside the new one's, alternating, twice, GPU and CPU), .carry/py (tools/device/prepare_python_device.sh:
# then tools/device/python_device.sh runs too). PLAY_RUNS=0 skips the CPU play runs (3 by default).
# PART=tests runs only the tests (GPU, GL, memcheck, racecheck, the Python module's), PART=bench only
# the benchmarks, so that each fits one call; both by default.
set -uo pipefail
cd "$(dirname "$0")/../.."
FINAL=${OUT:-/tmp/out}
OUT=/tmp/device_check  # everything here, packed into $FINAL/device_check.tgz at the end (a call returns few files)
rm -rf "$OUT"
mkdir -p "$OUT" "$FINAL" /tmp/hb
tar xzf .carry/bin.tgz -C /tmp/hb
H=/tmp/hb/histeq T=/tmp/hb/histeq_gpu_tests
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > "$OUT/device.txt"
nproc >> "$OUT/device.txt"
rc=0
step() { echo "== $*" >&2; "$@" || { echo "FAILED($?): $*" >&2; rc=$((rc + 1)); }; }
tests() {
step timeout 240 $T --gtest_brief=1 --gtest_filter="${GPU_TESTS:--Matrix/*}" > "$OUT/gpu_tests.txt" 2>&1
tail -5 "$OUT/gpu_tests.txt" >&2
# The example operation of docs/architecture.md (a build with -DHISTEQ_EXAMPLE_OPERATION=ON), when carried.
if [ -x /tmp/hb/histeq_gpu_tests_example ]; then
  step timeout 120 /tmp/hb/histeq_gpu_tests_example --gtest_brief=1 --gtest_filter='GpuExampleOperation.*:GpuQuality*' \
    > "$OUT/gpu_tests_example.txt" 2>&1
  tail -3 "$OUT/gpu_tests_example.txt" >&2
fi
# The GL tests (EGL, CUDA-GL interop) with the loaders of .carry/gl (prepare_device.sh), when carried.
if [ -x /tmp/hb/histeq_gl_tests ] && [ -d .carry/gl ]; then
  for f in .carry/gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
  [ -f /usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json ] &&
    export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
  step timeout 120 /tmp/hb/histeq_gl_tests --gtest_brief=1 > "$OUT/gl_tests.txt" 2>&1
  tail -4 "$OUT/gl_tests.txt" >&2
fi
step timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --error-exitcode 9 $T --gtest_brief=1 \
  --gtest_filter='GpuQualityFunctions.*:GpuAgents*' > "$OUT/memcheck.txt" 2>&1
tail -3 "$OUT/memcheck.txt" >&2
step timeout 200 /usr/local/cuda/bin/compute-sanitizer --tool racecheck --error-exitcode 9 $T --gtest_brief=1 \
  --gtest_filter='GpuQualityFunctions.TemporalFilter*:GpuQualityFunctions.ClippedAndTileLuts*' > "$OUT/racecheck.txt" 2>&1
tail -3 "$OUT/racecheck.txt" >&2
if [ -f .carry/py/py.tgz ]; then
  OUT=$OUT/python step timeout 300 bash tools/device/python_device.sh > "$OUT/python_device.log" 2>&1
  tail -8 "$OUT/python_device.log" >&2
fi
}
benches() {
if [ -x /tmp/hb/histeq_old ]; then
  for r in 1 2; do
    for b in old new; do
      exe=$H; [ $b = old ] && exe=/tmp/hb/histeq_old
      step timeout 120 $exe quality --bench --sizes 1080p,4k --runs 200 --input .carry/real.mp4 --csv "$OUT/qb_gpu_${b}_$r.csv" \
        > "$OUT/qb_gpu_${b}_$r.txt" 2>&1
      step timeout 120 $exe quality --bench --cpu --sizes 1080p --runs 100 --input .carry/real.mp4 --csv "$OUT/qb_cpu_${b}_$r.csv" \
        > "$OUT/qb_cpu_${b}_$r.txt" 2>&1
    done
  done
  grep -h "1080p" "$OUT"/qb_gpu_*_2.txt "$OUT"/qb_cpu_*_2.txt >&2
fi
step timeout 120 $H bench --quick -k method2_tuned,cub,block_atomic,global_atomic --csv "$OUT/kernels.csv" > "$OUT/kernels.txt" 2>&1
step timeout 120 $H bench --equalize --sizes 1080p,4k --csv "$OUT/equalize.csv" > "$OUT/equalize.txt" 2>&1
step timeout 120 $H quality --bench --sizes 1080p,4k --runs 200 --csv "$OUT/quality_bench.csv" > "$OUT/quality_bench.txt" 2>&1
step timeout 60 $H quality --bench --cpu --sizes 1080p --runs 30 --csv "$OUT/quality_bench_cpu.csv" > "$OUT/quality_bench_cpu.txt" 2>&1
for cores in $( [ "${PLAY_RUNS:-3}" = 0 ] || echo all 2); do
  pin=(); [ "$cores" = 2 ] && pin=(taskset -c 0,1)
  for look in plain default chroma_keep; do
    o=(); [ "$look" = plain ] && o=(--plain); [ "$look" = chroma_keep ] && o=(--chroma keep)
    for r in $(seq "${PLAY_RUNS:-3}"); do
      "${pin[@]}" timeout 60 $H play --headless --cpu --max-speed --duration 10 "${o[@]}" > /tmp/p.txt 2>&1
      fps=$(grep -o "[0-9.]* fps;" /tmp/p.txt | head -1 | cut -d' ' -f1)
      echo "$cores,$look,$r,$fps" >> "$OUT/cpu_play.csv"
    done
  done
done
[ -f "$OUT/cpu_play.csv" ] && cat "$OUT/cpu_play.csv" >&2
}
[ "${PART:-all}" = bench ] || tests
[ "${PART:-all}" = tests ] || benches
tar czf "$FINAL/device_check.tgz" -C "$OUT" .
exit $rc
