#!/usr/bin/env bash
# Builds what tools/device/python_device.sh needs on the GPU machine (CPython 3.12, no FFmpeg, no
# registry) and packs it as .carry/py/py.tgz (about 8 MB; name .carry/py in the device tool's `carry`):
#   site/histeq/    the package from `pip wheel .` for CPython 3.12, FFmpeg and the C++ runtime
#                   linked in (HISTEQ_STATIC), machine code for sm_90
#   bin/histeq_api_bench, lib/libhisteq.so.*, lib/libcudart.so.*   the C++ API's benchmark
# Needs a CPython 3.12 with its headers (PY312=..., else python3.12 on PATH or pyenv's 3.12) and
# the static FFmpeg of tools/device/static-ffmpeg.sh. Compiles the core twice (module, library) for one
# architecture; ccache makes the second a copy.
set -euo pipefail
cd "$(dirname "$0")/../.."
arch=${HISTEQ_DEVICE_ARCH:-90}
py=
for c in ${PY312:-} python3.12 "$HOME"/.pyenv/versions/3.12*/bin/python3; do  # the first that runs (pyenv's shim may not)
  if "$c" -c 'import sys; assert sys.version_info[:2] == (3, 12)' 2>/dev/null; then py=$c; break; fi
done
[ -n "$py" ] || { echo "prepare_python_device.sh: no CPython 3.12 (set PY312=/path/to/python3.12)" >&2; exit 1; }
prefix=$(bash tools/device/static-ffmpeg.sh)
venv=build/py312-venv
[ -x $venv/bin/python ] || "$py" -m venv $venv
$venv/bin/python -m pip install --quiet "nanobind==3.1.0" "scikit-build-core>=0.10"
launch=()
command -v ccache >/dev/null && for l in C CXX CUDA; do launch+=(--config-settings="cmake.define.CMAKE_${l}_COMPILER_LAUNCHER=ccache"); done
rm -rf build/py312-wheel
PKG_CONFIG_PATH=$prefix/lib/pkgconfig CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) \
  $venv/bin/python -m pip wheel . --no-build-isolation --no-deps -w build/py312-wheel --config-settings=build-dir=build/pip-py312-static \
  --config-settings=cmake.define.HISTEQ_STATIC=ON --config-settings=cmake.define.CMAKE_CUDA_ARCHITECTURES="$arch" "${launch[@]}" >/dev/null
# The C++ API's benchmark, in a static build of the usual kind (same flags: ccache hits).
PKG_CONFIG_PATH=$prefix/lib/pkgconfig cmake -S . -B build/device-static -G Ninja -DHISTEQ_STATIC=ON -DHISTEQ_BUILD_TESTS=OFF \
  -DCMAKE_CUDA_ARCHITECTURES="$arch" -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache \
  -DCMAKE_C_COMPILER_LAUNCHER=ccache >/dev/null
ninja -C build/device-static histeq_api_bench >/dev/null
st=build/py-stage
rm -rf $st .carry/py
mkdir -p $st/site $st/bin $st/lib .carry/py
$venv/bin/python -m zipfile -e build/py312-wheel/histeq-*.whl $st/site
strip $st/site/histeq/_histeq*.so
strip -o $st/bin/histeq_api_bench build/device-static/bench/histeq_api_bench
for l in build/device-static/core/libhisteq.so.*.*.*; do strip -o "$st/lib/$(basename "$l")" "$l"; done
(cd $st/lib && for l in libhisteq.so.*.*.*; do ln -sf "$l" "${l%.*}"; done)
cudart=$(ldd $st/bin/histeq_api_bench | awk '/libcudart/ {print $3}')
[ -n "$cudart" ] && cp -L "$cudart" $st/lib/
# Nothing of FFmpeg may be needed there, nor this machine's C++ runtime by the module.
if ldd $st/site/histeq/_histeq*.so $st/lib/libhisteq.so.* | grep -E "libav|libsw|libx264" ||
   ldd $st/site/histeq/_histeq*.so | grep libstdc; then
  echo "prepare_python_device.sh: a carried library links FFmpeg (or the module libstdc++) dynamically" >&2
  exit 1
fi
tar czf .carry/py/py.tgz -C $st site bin lib
du -sh .carry/py
