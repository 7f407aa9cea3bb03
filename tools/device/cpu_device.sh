#!/usr/bin/env bash
# The CPU path's figures on the GPU machine's host cores, one call:  OUT=$OUT bash tools/device/cpu_device.sh
# Carry .carry/bin.tgz (histeq, histeq_old: the binary before the change), .carry/py
# (tools/device/prepare_python_device.sh) and .carry/real.mp4, .carry/real600.mp4. Writes to $OUT:
#   cpu.txt                the host's CPU (lscpu, SMT siblings, gather mitigation)
#   qb_cpu_{new,old}_N.*   quality --bench --cpu, the two binaries alternated (N = 1, 2)
#   python_bench_host.json bench/python_bench.py host: histeq against OpenCV, side by side
#   export_cpu.*           bench/export_bench.py --extra-histeq=--cpu, new binary (passthrough floor)
#   cpu_play.csv           play --headless --cpu --max-speed, plain and defaults, all cores and
#                          `taskset -c 0,1`, both binaries (PLAY_RUNS rounds, 2 by default)
#   unit_tests.txt         the CPU unit tests of the colour and LUT paths (when histeq_unit_tests is
#                          in bin.tgz: this host has AVX-512 VBMI, the development machine may not)
#   apply_mb.txt           the tiled apply's row variants (when apply_mb is in bin.tgz: an experiment)
# Everything is packed into $OUT/cpu_device.tgz (a call brings back few files).
set -uo pipefail
cd "$(dirname "$0")/../.."
FINAL=${OUT:-/tmp/out}
OUT=/tmp/cpu_device
rm -rf "$OUT"
mkdir -p "$OUT" "$FINAL" /tmp/hb
tar xzf .carry/bin.tgz -C /tmp/hb
rc=0
step() { echo "== $*" >&2; "$@" || { echo "FAILED($?): $*" >&2; rc=$((rc + 1)); }; }
{
  lscpu
  echo "siblings of cpu0: $(cat /sys/devices/system/cpu/cpu0/topology/thread_siblings_list 2>/dev/null)"
  grep -H . /sys/devices/system/cpu/vulnerabilities/gather_data_sampling 2>/dev/null
} > "$OUT/cpu.txt" 2>&1
grep -E "Model name|^CPU\(s\)|Thread|siblings|gather" "$OUT/cpu.txt" >&2
if [ -x /tmp/hb/histeq_unit_tests ]; then
  step timeout 300 /tmp/hb/histeq_unit_tests --gtest_brief=1 --gtest_filter='ColourThreads.*:ForkJoin.*:Quality.*:QualityPipeline.*' \
    > "$OUT/unit_tests.txt" 2>&1
  tail -3 "$OUT/unit_tests.txt" >&2
fi
[ -x /tmp/hb/apply_mb ] && { /tmp/hb/apply_mb > "$OUT/apply_mb.txt" 2>&1; cat "$OUT/apply_mb.txt" >&2; }
for r in 1 2; do
  for b in new old; do
    exe=/tmp/hb/histeq; [ $b = old ] && exe=/tmp/hb/histeq_old
    [ -x $exe ] || continue
    step timeout 120 $exe quality --bench --cpu --sizes 1080p --runs 100 --input .carry/real.mp4 --csv "$OUT/qb_cpu_${b}_$r.csv" \
      > "$OUT/qb_cpu_${b}_$r.txt" 2>&1
  done
done
grep -h "1080p" "$OUT"/qb_cpu_*_2.txt >&2
if [ -f .carry/py/py.tgz ]; then
  rm -rf /tmp/histeq-py && mkdir -p /tmp/histeq-py && tar xzf .carry/py/py.tgz -C /tmp/histeq-py
  PYTHONPATH=/tmp/histeq-py/site step timeout 300 python3 bench/python_bench.py host --calls ${PY_CALLS:-400} \
    --json "$OUT/python_bench_host.json" > "$OUT/python_bench_host.txt" 2>&1
  grep -E "histeq_over_opencv|median" "$OUT/python_bench_host.json" | head -20 >&2
fi
if [ -f .carry/real600.mp4 ] && [ "${EXPORT:-1}" = 1 ]; then
  step timeout 400 python3 bench/export_bench.py --clip .carry/real600.mp4 --histeq /tmp/hb/histeq --methods passthrough,histeq,strength0 \
    --rounds ${EXPORT_ROUNDS:-5} --extra-histeq=--cpu --json "$OUT/export_cpu.json" > "$OUT/export_cpu.txt" 2>&1
  tail -6 "$OUT/export_cpu.txt" >&2
fi
for r in $(seq "${PLAY_RUNS:-2}"); do
  for cores in all 2; do
    pin=(); [ "$cores" = 2 ] && pin=(taskset -c 0,1)
    for b in new old; do
      exe=/tmp/hb/histeq; [ $b = old ] && exe=/tmp/hb/histeq_old
      [ -x $exe ] || continue
      for look in plain default clahe; do
        o=(); [ "$look" = plain ] && o=(--plain); [ "$look" = clahe ] && o=(--mode clahe)
        "${pin[@]}" timeout 60 $exe play --headless --cpu --max-speed --duration ${PLAY_S:-5} "${o[@]}" > /tmp/p.txt 2>&1
        fps=$(grep -o "[0-9.]* fps;" /tmp/p.txt | head -1 | cut -d' ' -f1)
        echo "$cores,$b,$look,$r,$fps" >> "$OUT/cpu_play.csv"
      done
    done
  done
done
[ -f "$OUT/cpu_play.csv" ] && cat "$OUT/cpu_play.csv" >&2
tar czf "$FINAL/cpu_device.tgz" -C "$OUT" .
exit $rc
