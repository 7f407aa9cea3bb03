#!/usr/bin/env bash
# Builds the method2_tuned sweep harness (no FFmpeg needed): bench/sweep/build.sh OUT_BINARY
# Objects compile in parallel (JOBS, default 2). The binary runs on any sm_90 machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-build/sweep/m2t_sweep}
obj=$(dirname "$out")/obj
mkdir -p "$obj"
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
flags=(-O3 -std=c++17 -I. --expt-relaxed-constexpr -gencode=arch=compute_90,code=sm_90 -lineinfo)
srcs=(bench/sweep/sweep_main.cu bench/sweep/instances_h8a.cu bench/sweep/instances_h8b.cu bench/sweep/instances_h10.cu
      bench/sweep/instances_f8.cu bench/sweep/instances_f10.cu core/equalize/ops/equalize/fused_gpu.cu
      core/equalize/ops/lut/lut_gpu.cu core/equalize/ops/apply/apply_gpu.cu core/equalize/ops/lut/lut_cpu.cpp
      core/equalize/ops/apply/apply_cpu.cpp core/image/fork_join.cpp core/histogram/kernels/read_ceiling.cu core/image/synthetic.cu core/image/synthetic.cpp core/cuda/status.cpp
      core/cuda/device.cpp core/cuda/resources.cpp)
compile() {
  local f=$1 o=$obj/$(echo "$1" | tr / _).o
  if [ -f "$o" ] && [ -z "${FORCE:-}" ]; then  # up to date with the source and the headers it shares
    local newer=0
    for d in "$f" core/histogram/agent/method2_tuned.cuh core/histogram/agent/plane.cuh core/histogram/kernels/common.cuh core/histogram/policy.h \
             core/equalize/ops/equalize/fused_gpu.cuh core/equalize/ops/equalize/fused_gpu.h bench/sweep/sweep.h bench/sweep/instances.cuh; do
      [ "$d" -nt "$o" ] && newer=1
    done
    [ $newer = 0 ] && return 0
  fi
  case $f in
    *.cpp) g++ -O2 -std=c++17 -I. -I/usr/local/cuda/include -c "$f" -o "$o" ;;
    *) "$nvcc" "${flags[@]}" -c "$f" -o "$o" -Xptxas -warn-spills ;;
  esac
}
pids=()
for f in "${srcs[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "${JOBS:-2}" ]; do sleep 0.5; done
  compile "$f" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done  # set -e: a failed compile stops the build
"$nvcc" "${flags[@]}" -o "$out" "$obj"/*.o -lpthread
echo "built $out"
