#!/usr/bin/env bash
# Every GPU of the host, on a machine of two or more (the device tool's nvidia-h100-x2 / -x4):
#   PART=tests OUT=$OUT bash tools/device/multi_gpu_device.sh   the multi-GPU tests (tests/gpu/test_multi_gpu.cpp)
#       and the NVDEC ones, memcheck on them (pipelines on the last device), and the CLI on the last
#       device: export with NVDEC (frames == device 0's, by MD5 of the y4m), a batch over every GPU
#       (== one GPU's, file for file), play --headless --device N; the binary before the fix
#       (histeq_old, when carried) on the same commands
#   PART=gpus OUT=$OUT bash tools/device/multi_gpu_device.sh    the defaults over 1, 2, ... every GPU, long files
#   PART=scale OUT=$OUT bash tools/device/multi_gpu_device.sh   batch throughput over 1, 2, ... GPUs: NVDEC's
#       limit (--passthrough -f null: decode only), decode + equalize (-f null: the defaults, nothing
#       encoded, frames never leave the GPU), and a real encoder (libx264 ultrafast: the host's
#       bound); each case RUNS times, nvidia-smi's decoder and SM use sampled beside it
# Carry .carry/bin.tgz (histeq, histeq_gpu_tests; optionally histeq_old) and .carry/real600.mp4 (600
# frames of 1080p60 H.264, bench/make_real_clip.sh). FILES copies of it make the batch (default 56).
# Writes $OUT/multi_gpu_$PART.tgz and prints the tables.
set -uo pipefail
cd "$(dirname "$0")/../.."
PART=${PART:-tests}
FILES=${FILES:-56}
RUNS=${RUNS:-3}
source tools/device/device_lib.sh
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
  # The CLI on the last device against device 0: the same frames (raw .yuv frames: no muxer dates or
  # random segment ids as Matroska's).
  for b in histeq histeq_old; do
    [ -x /tmp/hb/$b ] || continue
    for d in 0 "$LAST"; do
      /tmp/hb/$b export .carry/real.mp4 -o /tmp/$b-$d.yuv -y --device $d --hwdec nvdec --progress none > "$OUT/cli_${b}_$d.txt" 2>&1
      echo "$b export --device $d: exit $? $(md5sum < /tmp/$b-$d.yuv 2>/dev/null | cut -c1-12) $(tail -1 "$OUT/cli_${b}_$d.txt")" >&2
      rm -f /tmp/$b-$d.yuv
    done
    rm -rf /tmp/mg-in /tmp/mg-o1 /tmp/mg-oN && mkdir -p /tmp/mg-in
    for i in 1 2 3 4; do ln -f .carry/real.mp4 /tmp/mg-in/c$i.mp4; done  # raw: 0.4 GB a file
    /tmp/hb/$b export /tmp/mg-in/ -o /tmp/mg-o1/ --device 0 --ext yuv --progress none > "$OUT/batch1_$b.txt" 2>&1
    echo "$b batch --device 0: exit $? $(tail -1 "$OUT/batch1_$b.txt")" >&2
    /tmp/hb/$b export /tmp/mg-in/ -o /tmp/mg-oN/ --device "$ALL" --ext yuv --progress none --report "$OUT/batchN_$b.json" \
      > "$OUT/batchN_$b.txt" 2>&1
    echo "$b batch --device $ALL: exit $? $(tail -1 "$OUT/batchN_$b.txt")" >&2
    (cd /tmp/mg-o1 && md5sum *.yuv) > /tmp/m1 2>/dev/null
    (cd /tmp/mg-oN && md5sum *.yuv) > /tmp/mN 2>/dev/null
    if [ -s /tmp/m1 ] && cmp -s /tmp/m1 /tmp/mN; then echo "$b: batch over $ALL == one GPU, file for file" >&2
    else echo "$b: batch outputs differ or are missing" >&2; fi
    rm -rf /tmp/mg-o1 /tmp/mg-oN
  done
  step timeout 60 $H play --headless --max-speed --device "$LAST" --hwdec nvdec $CLIP > "$OUT/play_last.txt" 2>&1
  grep -iE "decoded by|equaliz|frames" "$OUT/play_last.txt" | head -4 >&2
fi

# run_case LABEL ARGS...: RUNS batches of /tmp/mg-in/ (FRAMES frames in all), one line each: wall, fps,
# the host's CPU time (user + system, in cores), per-GPU fps (the report's devices). With TOP set,
# the busiest threads a few seconds in (top -H) go to $OUT/top_N.txt.
run_case() {
  local label=$1 r
  shift
  for r in $(seq "$RUNS"); do
    rm -rf /tmp/mg-out
    [ -n "${TOP:-}" ] && (sleep 4; top -b -H -n 1 -w 160 | head -45 > "$OUT/top_$TOP.txt") &
    python3 - "$label" "$r" "$FRAMES" "$H" "$@" <<'PY' | tee -a "$OUT/scale.txt" >&2
import json, resource, subprocess, sys, time
label, r, frames, histeq, args = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5:]
t = time.monotonic()
p = subprocess.run([histeq, "export", "/tmp/mg-in/", "-o", "/tmp/mg-out/", "-y", "--progress", "none",
                    "--report", "/tmp/rep.json"] + args, capture_output=True, text=True)
wall = time.monotonic() - t
u = resource.getrusage(resource.RUSAGE_CHILDREN)
if p.returncode != 0:
    print("FAILED %s: %s" % (label, p.stderr.strip().splitlines()[-1:]))
d = json.load(open("/tmp/rep.json"))
per = " ".join("gpu%d=%.0f" % (g["device"], g["fps"]) for g in d.get("devices", []))
print("%-36s run %s | wall %6.2f s | %6.0f fps | cpu %5.1f cores | jobs %s | ok %d/%d | %s" % (label, r, wall, frames / wall,
      (u.ru_utime + u.ru_stime) / wall, d.get("jobs"), d["files_ok"], d["files_total"], per))
PY
  done
}
# batch_of CLIP N: the batch folder, N links to CLIP; FRAMES set.
batch_of() {
  rm -rf /tmp/mg-in && mkdir -p /tmp/mg-in
  local i
  for i in $(seq -w 1 "$2"); do ln -f "$1" /tmp/mg-in/c$i.mp4; done
  FRAMES=$(($2 * $3))
}

if [ "$PART" = scale ] || [ "$PART" = probe ] || [ "$PART" = gpus ]; then
  nvidia-smi dmon -s u -o T > "$OUT/dmon.txt" 2>&1 &
  dmon=$!
fi
if [ "$PART" = scale ]; then
  batch_of $CLIP "$FILES" 600
  for n in $(seq 1 "$G"); do
    devs=$(seq -s, 0 $((n - 1)))
    run_case "decode only (NVDEC limit), $n GPU" --passthrough -f null --device "$devs"
    run_case "decode+equalize, $n GPU" -f null --device "$devs"
  done
  RUNS=1 run_case "decode+equalize, 1 GPU, 1 job" -f null --device 0 --jobs 1
  run_case "decode+equalize, 1 GPU, 14 jobs" -f null --device 0 --jobs 14
  RUNS=1 run_case "decode+equalize, $G GPU, $G jobs" -f null --device "$ALL" --jobs "$G"
  batch_of $CLIP $((FILES / 4)) 600
  run_case "x264 ultrafast, 1 GPU" --device 0 -c libx264 --preset ultrafast
  run_case "x264 ultrafast, $G GPU" --device "$ALL" -c libx264 --preset ultrafast
fi
# PART=probe: long files (LONG: .carry/long.mp4, 3,000 frames), so that a file's start and end weigh
# little: where the batch's time goes with several GPUs.
if [ "$PART" = probe ]; then
  batch_of .carry/long.mp4 "${LONG_FILES:-14}" 3000
  RUNS=1
  run_case "long: decode only, 1 GPU" --passthrough -f null --device 0
  TOP=1 run_case "long: decode only, $G GPU" --passthrough -f null --device "$ALL"
  run_case "long: decode+equalize, 1 GPU" -f null --device 0
  TOP=2 run_case "long: decode+equalize, $G GPU" -f null --device "$ALL"
  run_case "long: decode+equalize, 1 GPU, 14 jobs" -f null --device 0 --jobs 14
  run_case "long: decode+equalize, $G GPU, 28 jobs" -f null --device "$ALL" --jobs 28
fi
# PART=gpus: the defaults (two jobs an NVDEC engine, every GPU warmed at once) over 1, 2, ... G GPUs
# on long files (LONG_FILES copies of .carry/long.mp4, default 8 a GPU): the scaling table of
# docs/performance.md, decode only beside it at 1 and G GPUs.
if [ "$PART" = gpus ]; then
  batch_of .carry/long.mp4 "${LONG_FILES:-$((8 * G))}" 3000
  RUNS=1
  for n in $(seq 1 "$G"); do
    run_case "long: decode+equalize, $n GPU" -f null --device "$(seq -s, 0 $((n - 1)))"
  done
  run_case "long: decode only, 1 GPU" --passthrough -f null --device 0
  run_case "long: decode only, $G GPU" --passthrough -f null --device "$ALL"
fi
if [ -n "${dmon:-}" ]; then kill "$dmon" 2>/dev/null; fi
tar czf "$FINAL/multi_gpu_$PART.tgz" -C "$OUT" .
exit $rc
