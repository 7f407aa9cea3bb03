#!/usr/bin/env bash
# The GPU machine's whole job in one call (see docs/performance.md): device facts, the GPU and CPU
# test suites, then the full `histeq bench` matrix. Expects the static binaries in .carry/bin and the
# real clips in .carry/ (tools/device/prepare_device.sh makes them); writes everything under $OUT.
#   bash tools/device/device_run.sh [tests|sweep|paper|kernels|bench|all]   kernels: tests, sweep, paper, bench
#   bash tools/device/device_run.sh gpuvideo                  the GPU video path and the stage list:
#       GPU tests but the kernel matrix (NVDEC, GPU synthetic source, P010, stages, device
#       frames, NVENC refusal, pipeline), play --headless on NVDEC and on the GPU source (1080p, 4K,
#       8K), export timings GPU/CPU/passthrough with and without NVDEC, and concurrent streams
#   bash tools/device/device_run.sh playeripc                 the player window driven through mpv's JSON IPC
#       (tools/device/player_ipc_device.py; carried as for `window`)
#   bash tools/device/device_run.sh pipeline                  the video pipeline: GPU equalizer tests (GPU vs
#       CPU bit-identical, on the real clip too), play --headless 1080p60 stage tables (real time and
#       max speed, GPU and CPU), and the export benchmark's GPU and CPU paths (7 files)
set -uo pipefail
what=${1:-all}
bin=.carry/bin
out=${OUT:-/tmp/histeq-out}
mkdir -p "$out"
# At most 8 files come back from the device: keep the outputs few.
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader; "$bin/histeq" info; } | tee "$out/info.txt"
rc=0
# export_rounds HISTEQ CLIP ROUNDS CONFIG...: wall time of `histeq export` of CLIP (x264 veryfast crf
# 20) with each CONFIG (one string of options), ROUNDS times over, and the done event's figures.
export_rounds() {
  local histeq=$1 clip=$2 rounds=$3 r cfg s e
  shift 3
  for r in $(seq "$rounds"); do
    for cfg in "$@"; do
      s=$(date +%s%N)
      "$histeq" export "$clip" -o /tmp/x.mp4 -y --preset veryfast --crf 20 --progress json $cfg > /tmp/x.json 2>/tmp/x.err || echo "FAILED $cfg: $(tail -1 /tmp/x.err)"
      e=$(date +%s%N)
      echo "round $r | $cfg | wall $(( (e - s) / 1000000 )) ms | $(grep '"event":"done"' /tmp/x.json | python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); print("open %.3f run %.3f fps %.1f" % (d["open_s"], d["elapsed_s"], d["fps"]))')"
    done
  done
}
# EGL/GL loaders for the GL tests (see prepare_device.sh).
if [ -d .carry/gl ]; then
  for f in .carry/gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
  [ -f /usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json ] &&
    export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
fi
if [[ $what == tests || $what == all ]]; then
  echo "== GPU tests"
  timeout "${TESTS_TIMEOUT:-330}" "$bin/histeq_gpu_tests" --gtest_brief=1 > "$out/tests.txt" 2>&1 || rc=1
  grep -E "PASSED|FAILED|SKIPPED|tests ran" "$out/tests.txt" | tail -15
  echo "== CPU tests"
  "$bin/histeq_unit_tests" --gtest_brief=1 > /tmp/unit_tests.txt 2>&1 || rc=1
  cat /tmp/unit_tests.txt >> "$out/tests.txt"
  grep -E "PASSED|FAILED|tests ran" /tmp/unit_tests.txt | tail -5
  echo "== GL tests (EGL, CUDA-GL interop)"
  "$bin/histeq_gl_tests" > /tmp/gl_tests.txt 2>&1 || rc=1
  cat /tmp/gl_tests.txt >> "$out/tests.txt"
  grep -E "OK|PASSED|FAILED|SKIPPED|Skipped|no headless|renderer" /tmp/gl_tests.txt | tail -12
fi
if [[ $what == sweep || $what == all ]]; then
  echo "== grid sweep (workload per thread, as Nugteren 5.3): method2, block_atomic"
  "$bin/histeq" bench --kernel method2,block_atomic --sizes 1080p,1g --pitches tight --inputs natural,uniform \
    --max-blocks 0,132,264,396,528,792,1056,1716 --csv "$out/sweep.csv" > "$out/sweep.txt" 2>&1 || rc=1
  grep -E "method2|block_atomic" "$out/sweep.txt" | awk '{printf "%s %s %s %s %s\n", $1, $3, $4, $5, $7}'
fi
if [[ $what == paper || $what == all ]]; then
  echo "== bench --paper"
  timeout "${PAPER_TIMEOUT:-300}" "$bin/histeq" bench --paper /tmp/paper .carry/real.mp4 > "$out/paper.txt" 2>&1 || rc=1
  sed -n '/^experiment /,$p' "$out/paper.txt"
  grep -E "FAILED|error" "$out/paper.txt" | head -20
  tar czf "$out/paper.tgz" -C /tmp/paper .
fi
if [[ $what == kernels || $what == all ]]; then
  echo "== bench: the kernels the paper experiments do not cover, beside method2 and cub"
  timeout 200 "$bin/histeq" bench --kernel privatized8_merge,privatized8_avoid,collision_free,hybrid,collision,collision_reduced,method2,cub \
    --sizes 1080p,8k --pitches tight --input .carry/real.mp4 --csv "$out/kernels256.csv" > "$out/kernels.txt" 2>&1 || rc=1
  timeout 100 "$bin/histeq" bench --kernel podlozhnyuk64,block_atomic,cub --bins 64 --sizes 1080p,8k --pitches tight \
    --input .carry/real.mp4 --csv "$out/kernels64.csv" >> "$out/kernels.txt" 2>&1 || rc=1
  timeout 100 "$bin/histeq" bench --weighted --kernel collision_free,collision,collision_reduced,hybrid --sizes 1080p,8k --pitches tight \
    --input .carry/real.mp4 --csv "$out/weighted.csv" >> "$out/kernels.txt" 2>&1 || rc=1
  grep -E "FAILED|error" "$out/kernels.txt" | head
  grep -E "^8k " "$out/kernels.txt" | cut -c1-110
fi
if [[ $what == bench || $what == all ]]; then
  echo "== bench: GPU kernels, full matrix"
  # The bench histograms 256 bins: no aliases (they repeat their target), no 64-bin-only kernel.
  gpu_kernels=${BENCH_KERNELS:-global_atomic,block_atomic,method2,cub}
  timeout "${BENCH_TIMEOUT:-420}" "$bin/histeq" bench --kernel "$gpu_kernels" --input .carry/real.mp4 \
    --csv "$out/bench_gpu.csv" --json "$out/bench_gpu.json" > "$out/bench_gpu.txt" 2>&1 || rc=1
  echo "== bench: CPU kernels beside cub, small sizes"
  timeout 120 "$bin/histeq" bench --kernel cpu_reference,cpu_parallel,cub --sizes 1080p,4k --pitches tight \
    --input .carry/real.mp4 --cpu-budget 1 > "$out/bench_cpu.txt" 2>&1 || rc=1
  grep -E "^(size|1080p|1g) " "$out/bench_gpu.txt" | grep -v " padded " | cut -c1-100
  tail -3 "$out/bench_gpu.txt"
fi
if [[ $what == gpuvideo ]]; then
  echo "== GPU tests (all but the kernel matrix, which kernels mode runs)"
  HISTEQ_TEST_CLIP=.carry/real.mp4 HISTEQ_TEST_HEVC10=.carry/hevc10.mp4 timeout 200 "$bin/histeq_gpu_tests" --gtest_brief=1 \
    --gtest_filter='-Matrix/*:*Weighted*' > "$out/gpu_tests.txt" 2>&1 || rc=1
  grep -E "PASSED|FAILED|SKIPPED|tests ran|Failure|nvenc:" "$out/gpu_tests.txt" | head -40
  echo "== GL tests"
  timeout 60 "$bin/histeq_gl_tests" 2>&1 | grep -E "OK|PASSED|FAILED|SKIPPED" | tail -8
  {
    for args in "--max-speed" "--max-speed --synthetic-on cpu" "--max-speed --size 4k" "--max-speed --size 4k --synthetic-on cpu" \
                "--size 4k" "--max-speed --size 7680x4320" "--size 7680x4320"; do
      echo "### play --headless --quiet $args"
      timeout 40 "$bin/histeq" play --headless --quiet --duration 5 $args 2>&1 | grep -E "decoded by|done in|^  (decode|upload|histogram|lut|apply|present) "
    done
    for clip in .carry/real600.mp4 .carry/real4k.mp4 .carry/real8k.mp4; do
      [ -f "$clip" ] || continue
      for hw in nvdec none; do
        for speed in "--max-speed" ""; do
          echo "### play --headless --quiet --hwdec $hw $speed $clip"
          timeout 40 "$bin/histeq" play --headless --quiet --hwdec $hw $speed "$clip" 2>&1 | grep -E "decoded by|note|done in|^  (decode|convert|upload|histogram|lut|apply|present|latency) "
        done
      done
    done
  } > "$out/play.txt" 2>&1
  cat "$out/play.txt"
  echo "== export: wall time per path (3 rounds each), 600-frame 1080p60 clip, x264 veryfast"
  export_rounds "$bin/histeq" .carry/real600.mp4 3 "--hwdec none --cpu" "--hwdec none" "--hwdec nvdec" \
    "--hwdec none --passthrough" "--hwdec nvdec --passthrough" > "$out/export.txt" 2>&1
  cat "$out/export.txt"
  echo "== streams: concurrent 1080p60 players on the real clip (NVDEC, GPU equalizer)"
  timeout 150 python3 bench/streams.py --histeq "$bin/histeq" --clip .carry/real600.mp4 --streams 1,8,16 --json "$out/streams.json" 2>&1 | tee "$out/streams.txt"
  timeout 60 python3 bench/streams.py --histeq "$bin/histeq" --clip .carry/real600.mp4 --streams 8 --max-speed --json "$out/streams_max.json" 2>&1 | tee -a "$out/streams.txt"
fi

if [[ $what == nvdec ]]; then
  echo "== NVDEC, GPU source, P010 and NVENC tests"
  HISTEQ_TEST_CLIP=.carry/real.mp4 HISTEQ_TEST_HEVC10=.carry/hevc10.mp4 timeout 120 "$bin/histeq_gpu_tests" --gtest_brief=1 \
    --gtest_filter='Nvdec*:Nvenc*:GpuSynthetic*:GpuPipeline.EqualizesP010*:GpuPipeline.EqualizesDeviceFrames*:GpuStages*' \
    > "$out/gpu_tests.txt" 2>&1 || rc=1
  grep -E "PASSED|FAILED|SKIPPED|Skipped|tests ran|Failure|nvenc:|no NVDEC" "$out/gpu_tests.txt" | head -30
  {
    for clip in .carry/real600.mp4 .carry/real4k.mp4 .carry/hevc10.mp4; do
      for hw in nvdec none; do
        for speed in "--max-speed" ""; do
          echo "### play --headless --quiet --hwdec $hw $speed $clip"
          timeout 40 "$bin/histeq" play --headless --quiet --hwdec $hw $speed "$clip" 2>&1 | grep -E "decoded by|note|done in|^  (decode|convert|upload|equalize|histogram|apply|download|present|latency) "
        done
      done
    done
    echo "### play --headless --quiet --size 7680x4320 (GPU source, real time)"
    timeout 40 "$bin/histeq" play --headless --quiet --size 7680x4320 2>&1 | grep -E "decoded by|done in|^  (decode|equalize|present) "
  } > "$out/play.txt" 2>&1
  cat "$out/play.txt"
  echo "== export: wall time per path (3 rounds), 600-frame 1080p60 clip, x264 veryfast crf 20"
  export_rounds "$bin/histeq" .carry/real600.mp4 3 "--hwdec none --cpu" "--hwdec none" "--hwdec nvdec" \
    "--hwdec none --passthrough" "--hwdec nvdec --passthrough" > "$out/export.txt" 2>&1
  cat "$out/export.txt"
  echo "== streams: concurrent real-time 1080p60 players on the real clip, NVDEC then software decode"
  timeout 200 python3 bench/streams.py --histeq "$bin/histeq" --clip .carry/real600.mp4 --streams 1,16,24,32 --json "$out/streams.json" 2>&1 | tee "$out/streams.txt"
  timeout 60 python3 bench/streams.py --histeq "$bin/histeq" --clip .carry/real600.mp4 --streams 16 --hwdec none --json "$out/streams_sw.json" 2>&1 | tee -a "$out/streams.txt"
fi

# The player window on the GPU: a carried Xvfb (no display here), the NVIDIA GLX vendor library,
# the CUDA-GL interop; tools/device/prepare_window.sh makes .carry-gui/window.tar.xz (histeq with the
# window, static FFmpeg), beside it the EGL/GL loaders, the clips and the GPU tests.
unpack_window() {
  c=.carry-gui
  for f in $c/gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
  mkdir -p /opt/hq /usr/share/fonts/truetype/dejavu
  tar -C /opt/hq -xJf $c/window.tar.xz
  cp /opt/hq/share/fonts/*.ttf /usr/share/fonts/truetype/dejavu/ 2>/dev/null
}
start_xvfb() {
  export LD_LIBRARY_PATH=/opt/hq/lib
  /opt/hq/bin/Xvfb :7 -screen 0 1920x1080x24 -xkbdir /opt/hq/share/xkb +extension GLX -nolisten tcp > /tmp/xvfb.txt 2>&1 &
  sleep 2
  export DISPLAY=:7 __GLX_VENDOR_LIBRARY_NAME=nvidia SDL_AUDIODRIVER=dummy
}

if [[ $what == playeripc ]]; then
  # The player through mpv's JSON IPC on the GPU (tools/device/player_ipc_device.py): paused changes shown
  # at once (screenshots, time-pos unmoved), every kernel live, 2x speed, headless IPC.
  unpack_window
  start_xvfb
  timeout 300 python3 tools/device/player_ipc_device.py --histeq /opt/hq/bin/histeq --clip $c/real600.mp4 --out "$out" 2>&1 |
    tee "$out/player_ipc.txt" || rc=1
  echo "== Xvfb"; tail -5 /tmp/xvfb.txt
fi

if [[ $what == window ]]; then
  unpack_window
  echo "== NVDEC tests (HEVC 10-bit: P010), then NVDEC play and export"
  HISTEQ_TEST_CLIP=$c/real.mp4 HISTEQ_TEST_HEVC10=$c/hevc10.mp4 timeout 90 $c/bin/histeq_gpu_tests --gtest_brief=1 \
    --gtest_filter='Nvdec*:GpuPipeline.EqualizesP010*' > "$out/gpu_tests.txt" 2>&1 || rc=1
  grep -E "PASSED|FAILED|SKIPPED|Skipped|Failure|no NVDEC" "$out/gpu_tests.txt" | head -20
  export LD_LIBRARY_PATH=/opt/hq/lib
  {
    for clip in $c/real600.mp4 $c/real4k.mp4 $c/hevc10.mp4; do
      for speed in "--max-speed" ""; do
        echo "### play --headless --quiet --hwdec nvdec $speed $clip"
        timeout 30 /opt/hq/bin/histeq play --headless --quiet --hwdec nvdec $speed "$clip" 2>&1 | grep -E "decoded by|note|done in|^  (decode|convert|upload|equalize|download|present|latency) "
      done
    done
    export_rounds /opt/hq/bin/histeq $c/real600.mp4 2 "--hwdec none --cpu" "--hwdec none" "--hwdec nvdec" "--hwdec nvdec --passthrough" |
      sed 's/^round/export round/'
  } > "$out/nvdec.txt" 2>&1
  cat "$out/nvdec.txt"
  timeout 100 python3 bench/streams.py --histeq /opt/hq/bin/histeq --clip $c/real600.mp4 --streams 16,32 --json "$out/streams.json" 2>&1 | tee "$out/streams.txt"
  start_xvfb
  echo "== the window, built-in source drawn on the GPU, every kernel switched live"
  timeout 60 /opt/hq/bin/histeq play --window 1600x900 --no-vsync --frames 400 --kernel-sequence all --switch-every 12 \
    --split 0.5 --screenshot "$out/window_synthetic.png" 2>&1 | tail -25 | tee "$out/window.txt"
  echo "== the window on the real clip, NVDEC"
  timeout 60 /opt/hq/bin/histeq play $c/real600.mp4 --window 1600x900 --no-vsync --frames 300 --split 0.5 \
    --screenshot "$out/window_real.png" 2>&1 | tail -25 | tee -a "$out/window.txt"
  echo "== Xvfb"; tail -5 /tmp/xvfb.txt
fi

if [[ $what == pipeline ]]; then
  echo "== GPU equalizer and pipeline tests (LUT, apply, every GPU kernel, device frames, export GPU vs CPU)"
  HISTEQ_TEST_CLIP=.carry/real.mp4 "$bin/histeq_gpu_tests" --gtest_brief=1 \
    --gtest_filter='GpuLut*:*GpuApply*:*GpuPipeline*:GpuExport*' > "$out/pipeline_tests.txt" 2>&1 || rc=1
  grep -E "PASSED|FAILED|SKIPPED|tests ran" "$out/pipeline_tests.txt" | tail -12
  echo "== play --headless: synthetic 1080p60 (10 s, real time) and the real clip, GPU then CPU"
  {
    "$bin/histeq" play --headless --stats-json "$out/play_stats.json"
    "$bin/histeq" play --headless --max-speed --quiet
    "$bin/histeq" play --headless --max-speed --quiet .carry/real600.mp4
    "$bin/histeq" play --headless --quiet --cpu
    "$bin/histeq" play --headless --max-speed --quiet --cpu .carry/real600.mp4
  } > "$out/play.txt" 2>&1 || rc=1
  grep -A12 "^histeq play: done" "$out/play.txt" | head -60
  echo "== export benchmark (no ffmpeg CLI here: the floor is histeq --passthrough, same decode and encode)"
  {
    python3 bench/export_bench.py --clip .carry/real600.mp4 --histeq "$bin/histeq" --methods passthrough,histeq,strength0 \
      --rounds 3 --json "$out/export_gpu.json"
    python3 bench/export_bench.py --clip .carry/real600.mp4 --histeq "$bin/histeq" --methods passthrough,histeq,strength0 \
      --rounds 3 --extra-histeq=--cpu --json "$out/export_cpu.json"
  } > "$out/export.txt" 2>&1 || rc=1
  cat "$out/export.txt"
fi
exit $rc
