#!/usr/bin/env bash
# The GPU code in CUB's shape (one launch helper, agents, per-architecture
# policies): the GPU tests of this tree, and the kernels' time before and after the reorganisation in
# one run on one device. Two steps:
#
#   bash tools/device/gpu_shape_device.sh prepare [BASE]   here (FFmpeg, 2 cores): static builds of BASE
#       (default: the branch's base, 7328910) and of this tree against tools/device/static-ffmpeg.sh's
#       FFmpeg (-DHISTEQ_STATIC=ON, as tools/device/prepare_device.sh), stripped and xz-compressed into
#       .carry/gpu_shape/ (three binaries of ~24 MB fit the device tool's 64 MiB only compressed)
#   bash tools/device/gpu_shape_device.sh run              on the GPU machine (carry .carry/gpu_shape):
#       histeq_gpu_tests of this tree (the matrix left out, as in the brief), then `histeq bench`
#       of method2_tuned, cub, block_atomic and global_atomic and `histeq bench --equalize` (the
#       fused equalizer) at 1080p and 4K, before and after alternately (3 rounds), into $OUT
#
# The device has no FFmpeg and cannot build histeq: every binary comes from `prepare`. The GPU test
# binary links histeq_core (video included), so it needs the static FFmpeg too.
set -euo pipefail
cd "$(dirname "$0")/../.."
what=${1:-run}
stage=.carry/gpu_shape
if [[ $what == prepare ]]; then
  base=${2:-7328910}
  prefix=$(bash tools/device/static-ffmpeg.sh)
  configure() {  # configure SRC BUILD
    PKG_CONFIG_PATH=$prefix/lib/pkgconfig cmake -S "$1" -B "$2" -G Ninja -DHISTEQ_STATIC=ON -DHISTEQ_GUI=OFF \
      -DCMAKE_CUDA_ARCHITECTURES="${HISTEQ_DEVICE_ARCH:-90}" -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
      -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache > /dev/null
  }
  # The base in a worktree under .cache/ (ignored; under ccache's base_dir like the checkout).
  git worktree remove --force .cache/gpu-shape-base 2>/dev/null || rm -rf .cache/gpu-shape-base
  git worktree add -f --detach .cache/gpu-shape-base "$base" > /dev/null
  configure .cache/gpu-shape-base .cache/gpu-shape-base/build-static
  nice ninja -j2 -C .cache/gpu-shape-base/build-static histeq
  configure . build-static
  nice ninja -j2 -C build-static histeq histeq_gpu_tests
  mkdir -p "$stage"
  strip -o /tmp/histeq-before .cache/gpu-shape-base/build-static/app/histeq
  strip -o /tmp/histeq-after build-static/app/histeq
  strip -o /tmp/histeq_gpu_tests build-static/tests/histeq_gpu_tests
  for b in histeq-before histeq-after histeq_gpu_tests; do xz -T2 -6 -c "/tmp/$b" > "$stage/$b.xz"; done
  git worktree remove --force .cache/gpu-shape-base
  if ldd /tmp/histeq-after | grep -E "libav|libsw|libx264"; then echo "gpu_shape_device: histeq links FFmpeg dynamically" >&2; exit 1; fi
  du -sh "$stage"
  exit 0
fi
[[ $what == run ]] || { echo "usage: bash tools/device/gpu_shape_device.sh prepare [BASE] | run" >&2; exit 2; }
set +e  # from here on a failure is counted in rc, and the other steps still run
out=${OUT:-/tmp/gpu-shape-out}
bin=/tmp/gpu-shape-bin
mkdir -p "$out" "$bin"
for b in histeq-before histeq-after histeq_gpu_tests; do xz -d -c "$stage/$b.xz" > "$bin/$b" && chmod +x "$bin/$b"; done
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; "$bin/histeq-after" info; } > "$out/info.txt" 2>&1
head -3 "$out/info.txt"
rc=0
echo "== GPU tests (after)"
timeout 400 "$bin/histeq_gpu_tests" --gtest_brief=1 --gtest_filter='-Matrix/*' > "$out/tests.txt" 2>&1 || rc=1
grep -E "PASSED|FAILED|SKIPPED|tests ran" "$out/tests.txt" | tail -15
echo "== bench, before and after alternately, 3 rounds (the median of the rounds' medians, us)"
for round in 1 2 3; do
  for side in before after; do
    "$bin/histeq-$side" bench --kernel method2_tuned,cub,block_atomic,global_atomic --sizes 1080p,4k --pitches tight \
      --inputs natural,uniform --runs 100 --csv "$out/kernels_${side}_$round.csv" > /dev/null 2>> "$out/bench_stderr.txt" || rc=1
    "$bin/histeq-$side" bench --equalize --sizes 1080p,4k --depths 8,10 --inputs natural --runs 100 \
      --csv "$out/equalize_${side}_$round.csv" > /dev/null 2>> "$out/bench_stderr.txt" || rc=1
  done
done
python3 - "$out" <<'PY' | tee "$out/summary.txt"
import csv, glob, os, statistics, sys
out = sys.argv[1]
rows = {}
for path in sorted(glob.glob(os.path.join(out, "*_*_*.csv"))):
    what, side, _ = os.path.basename(path)[:-4].split("_")
    with open(path) as f:
        for r in csv.DictReader(line for line in f if not line.startswith("#")):
            if r.get("status", "ok") != "ok" or r.get("kernel") == "read_ceiling":
                continue
            key = (what, r.get("kernel") or r.get("method") or r.get("path", ""), r.get("size", ""), r.get("bits", ""),
                   r.get("input", ""))
            rows.setdefault(key, {}).setdefault(side, []).append(float(r["median_us"]))
print(f"{'bench':9} {'kernel / path':28} {'size':6} {'bits':5} {'input':8} {'before':>8} {'after':>8} {'after/before':>12}")
for key, sides in sorted(rows.items()):
    b, a = (statistics.median(sides.get(s, [float("nan")])) for s in ("before", "after"))
    print(f"{key[0]:9} {key[1]:28} {key[2]:6} {key[3]:5} {key[4]:8} {b:8.2f} {a:8.2f} {a / b:12.3f}")
PY
tail -5 "$out/bench_stderr.txt" 2>/dev/null
(cd "$out" && ls ./*.csv > /dev/null 2>&1 && tar czf raw.tgz ./*.csv && rm -f ./*.csv)
exit $rc
