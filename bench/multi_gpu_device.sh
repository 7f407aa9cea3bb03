#!/usr/bin/env bash
# Every GPU of the host, on a machine of two or more (the device tool's nvidia-h100-x2 / -x4):
#   PART=tests OUT=$OUT bash bench/multi_gpu_device.sh   the multi-GPU tests (tests/gpu/test_multi_gpu.cpp)
#       and the NVDEC ones, memcheck on them (pipelines on the last device), and the CLI on the last
#       device: export with NVDEC (frames == device 0's, by MD5 of the y4m), a batch over every GPU
#       (== one GPU's, file for file), play --headless --device N; the binary before the fix
#       (histeq_old, when carried) on the same commands
#   PART=scale OUT=$OUT bash bench/multi_gpu_device.sh   batch throughput over 1, 2, ... GPUs: NVDEC's
#       limit (--passthrough -f null: decode only), decode + equalize (-f null: the defaults, nothing
#       encoded, frames never leave the GPU), and a real encoder (libx264 ultrafast: the host's
#       bound); each case RUNS times, nvidia-smi's decoder and SM use sampled beside it
# Carry .carry/bin.tgz (histeq, histeq_gpu_tests; optionally histeq_old) and .carry/real600.mp4 (600
# frames of 1080p60 H.264, bench/make_real_clip.sh). FILES copies of it make the batch (default 56).
# Writes $OUT/multi_gpu_$PART.tgz and prints the tables.
set -uo pipefail
cd "$(dirname "$0")/.."
PART=${PART:-tests}
FILES=${FILES:-56}
RUNS=${RUNS:-3}
source bench/device_lib.sh
device_setup /tmp/multi_gpu
G=$(nvidia-smi --list-gpus | wc -l)
LAST=$((G - 1))
ALL=$(seq -s, 0 "$LAST")
CLIP=.carry/real600.mp4
echo "GPUs: $G ($ALL)" >&2

if [ "$PART" = tests ]; then
  T=/tmp/hb/histeq_gpu_tests
  step timeout 300 $T --gtest_filter='MultiGpu*:Nvdec*:GpuSynthetic*:GpuPipeline*' > "$OUT/tests.txt" 2>&1
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests ran" "$OUT/tests.txt" >&2
  step timeout 400 "$CUDA_BIN/compute-sanitizer" --tool memcheck --error-exitcode 3 $T --gtest_filter='MultiGpu*' \
    > "$OUT/memcheck.txt" 2>&1
  grep -E "ERROR SUMMARY|PASSED|FAILED" "$OUT/memcheck.txt" | tail -3 >&2
  # The CLI on the last device against device 0: the same frames (y4m: raw frames, no muxer dates or
  # random segment ids as Matroska's).
  for b in histeq histeq_old; do
    [ -x /tmp/hb/$b ] || continue
    for d in 0 "$LAST"; do
      /tmp/hb/$b export .carry/real.mp4 -o /tmp/$b-$d.y4m -y --device $d --hwdec nvdec --progress none > "$OUT/cli_${b}_$d.txt" 2>&1
      echo "$b export --device $d: exit $? $(md5sum < /tmp/$b-$d.y4m 2>/dev/null | cut -c1-12) $(tail -1 "$OUT/cli_${b}_$d.txt")" >&2
      rm -f /tmp/$b-$d.y4m
    done
    rm -rf /tmp/mg-in /tmp/mg-o1 /tmp/mg-oN && mkdir -p /tmp/mg-in
    for i in 1 2 3 4; do ln -f .carry/real.mp4 /tmp/mg-in/c$i.mp4; done  # y4m: 0.4 GB a file
    /tmp/hb/$b export /tmp/mg-in/ -o /tmp/mg-o1/ --device 0 --ext y4m --progress none > "$OUT/batch1_$b.txt" 2>&1
    echo "$b batch --device 0: exit $? $(tail -1 "$OUT/batch1_$b.txt")" >&2
    /tmp/hb/$b export /tmp/mg-in/ -o /tmp/mg-oN/ --device "$ALL" --ext y4m --progress none --report "$OUT/batchN_$b.json" \
      > "$OUT/batchN_$b.txt" 2>&1
    echo "$b batch --device $ALL: exit $? $(tail -1 "$OUT/batchN_$b.txt")" >&2
    (cd /tmp/mg-o1 && md5sum *.y4m) > /tmp/m1 2>/dev/null
    (cd /tmp/mg-oN && md5sum *.y4m) > /tmp/mN 2>/dev/null
    if [ -s /tmp/m1 ] && cmp -s /tmp/m1 /tmp/mN; then echo "$b: batch over $ALL == one GPU, file for file" >&2
    else echo "$b: batch outputs differ or are missing" >&2; fi
    rm -rf /tmp/mg-o1 /tmp/mg-oN
  done
  step timeout 60 $H play --headless --max-speed --device "$LAST" --hwdec nvdec $CLIP > "$OUT/play_last.txt" 2>&1
  grep -iE "decoded by|equaliz|frames" "$OUT/play_last.txt" | head -4 >&2
fi

if [ "$PART" = scale ]; then
  mkdir -p /tmp/mg-in
  for i in $(seq -w 1 "$FILES"); do ln -f $CLIP /tmp/mg-in/c$i.mp4; done
  frames=$((FILES * 600))
  nvidia-smi dmon -s u -o T > "$OUT/dmon.txt" 2>&1 &
  dmon=$!
  # case LABEL ARGS...: RUNS batches, one line each: wall, fps, per-GPU fps (the report's devices).
  run_case() {
    local label=$1 r s e
    shift
    for r in $(seq "$RUNS"); do
      rm -rf /tmp/mg-out
      echo "$(date +%T) start $label $r" >> "$OUT/dmon.txt"
      s=$(date +%s%N)
      $H export /tmp/mg-in/ -o /tmp/mg-out/ -y --progress none --report /tmp/rep.json "$@" > /tmp/case.txt 2>&1 ||
        echo "FAILED $label: $(tail -2 /tmp/case.txt)" >&2
      e=$(date +%s%N)
      python3 - "$label" "$r" $((e - s)) "$frames" /tmp/rep.json <<'PY' | tee -a "$OUT/scale.txt" >&2
import json, sys
label, r, ns, frames, rep = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
d = json.load(open(rep))
per = " ".join("gpu%d=%.0f" % (g["device"], g["fps"]) for g in d.get("devices", []))
print("%-34s run %s | wall %6.2f s | %6.0f fps | jobs %s | ok %d/%d | %s" % (label, r, ns / 1e9, frames / (ns / 1e9),
      d.get("jobs"), d["files_ok"], d["files_total"], per))
PY
    done
  }
  for n in $(seq 1 "$G"); do
    devs=$(seq -s, 0 $((n - 1)))
    run_case "decode only (NVDEC limit), $n GPU" --passthrough -f null --device "$devs"
    run_case "decode+equalize, $n GPU" -f null --device "$devs"
  done
  run_case "decode+equalize, 1 GPU, 1 job" -f null --device 0 --jobs 1
  run_case "decode+equalize, 1 GPU, 14 jobs" -f null --device 0 --jobs 14
  run_case "decode+equalize, $G GPU, $G jobs" -f null --device "$ALL" --jobs "$G"
  FILES_X264=$((FILES / 4))
  rm -f /tmp/mg-in/*; for i in $(seq -w 1 "$FILES_X264"); do ln -f $CLIP /tmp/mg-in/c$i.mp4; done
  frames=$((FILES_X264 * 600))
  run_case "x264 ultrafast, 1 GPU" --device 0 -c libx264 --preset ultrafast
  run_case "x264 ultrafast, $G GPU" --device "$ALL" -c libx264 --preset ultrafast
  kill $dmon 2>/dev/null
  nproc >&2
fi
tar czf "$FINAL/multi_gpu_$PART.tgz" -C "$OUT" .
exit $rc
