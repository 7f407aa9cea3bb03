#!/usr/bin/env bash
# The sanitizer build (ASan + UBSan, HISTEQ_SANITIZE) of the CLI and the CPU unit tests, beside the
# main build: no player window, and the CUDA code as PTX for one architecture only (never run here;
# compiled because the libraries hold it), which keeps the build short.
#   build.sh SOURCE_DIR BUILD_DIR [CUDA_COMPILER] [LAUNCHER]
set -euo pipefail
src=$1 bin=$2 cuda=${3:-} launcher=${4:-}
args=(-S "$src" -B "$bin" -G Ninja -DCMAKE_BUILD_TYPE=Release -DHISTEQ_SANITIZE=ON -DHISTEQ_GUI=OFF
      -DCMAKE_CUDA_ARCHITECTURES=90-virtual)
[ -n "$cuda" ] && args+=(-DCMAKE_CUDA_COMPILER="$cuda")
[ -n "$launcher" ] && args+=(-DCMAKE_CXX_COMPILER_LAUNCHER="$launcher" -DCMAKE_C_COMPILER_LAUNCHER="$launcher"
                             -DCMAKE_CUDA_COMPILER_LAUNCHER="$launcher")
cmake "${args[@]}" >/dev/null
exec cmake --build "$bin" --target histeq histeq_unit_tests
