#!/usr/bin/env bash
# The Python module on the GPU machine, one command:  OUT=$OUT bash tools/device/python_device.sh
# Needs .carry/py/py.tgz from tools/device/prepare_python_device.sh (carry: .carry/py), and the machine's
# python3 (3.12) with numpy, torch and cupy. Writes to $OUT:
#   python_device.txt         the GPU, the interpreter, the libraries, the module's equalizer
#   python_pytest.txt         tests/python/test_gpu.py and test_api.py (-rs: every skip's reason)
#   python_bench_device.json  bench/python_bench.py device: Python eq(frame) vs the C++ call
#   api_bench.json            histeq_api_bench (bench/api_bench.cpp), the C++ API's own benchmark
#   python_bench_host.json    bench/python_bench.py host, where OpenCV is installed
# The exit status counts the steps that failed.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
PKG=/tmp/histeq-py
rm -rf $PKG && mkdir -p $PKG && tar xzf .carry/py/py.tgz -C $PKG || { echo "python_device.sh: no .carry/py/py.tgz" >&2; exit 1; }
export PYTHONPATH=$PKG/site${PYTHONPATH:+:$PYTHONPATH}
# histeq_api_bench links libhisteq.so (carried) and the CUDA runtime (the toolkit's, or the one
# PyTorch brought with it).
cudart=$($PY - <<'PY' 2>/dev/null
import glob, site
for d in site.getsitepackages():
    for f in glob.glob(d + "/nvidia/**/libcudart.so.1*", recursive=True):
        print(f.rsplit("/", 1)[0]); raise SystemExit
PY
)
export LD_LIBRARY_PATH=$PKG/lib:/usr/local/cuda/lib64${cudart:+:$cudart}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
rc=0
step() { echo "== $*" >&2; "$@" || { echo "FAILED($?): $*" >&2; rc=$((rc + 1)); }; }
{
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
  nproc
  $PY - <<'PY'
import sys
print(sys.version)
for m in ("numpy", "torch", "cupy", "cv2"):
    try:
        print(m, __import__(m).__version__)
    except Exception as e:
        print(m, "missing:", e)
import histeq
print("histeq", histeq.__version__, "gpu_available", histeq.gpu_available(), histeq.Equalizer().info)
PY
} > "$OUT/python_device.txt" 2>&1
cat "$OUT/python_device.txt" >&2
step timeout 300 $PY -m pytest -p no:cacheprovider -rs -v tests/python/test_gpu.py tests/python/test_api.py > "$OUT/python_pytest.txt" 2>&1
tail -15 "$OUT/python_pytest.txt" >&2
step timeout 300 $PY bench/python_bench.py device --calls 500 --json "$OUT/python_bench_device.json" > /dev/null 2> "$OUT/python_bench_device.err"
$PY - "$OUT/python_bench_device.json" <<'PY' >&2 || true
import json, sys
d = json.load(open(sys.argv[1]))
if "skipped" in d:
    print("device benchmark skipped:", d["skipped"]); raise SystemExit
for lib, r in d.items():
    if not isinstance(r, dict):  # the command and the date
        continue
    if "skipped" in r:
        print(lib, "skipped:", r["skipped"]); continue
    for k, v in r.items():
        if isinstance(v, dict) and "events" in v:
            print(f"{lib:6} {k:58} events median {v['events']['median_us']:8.2f} us  p99 {v['events']['p99_us']:8.2f}  host median {v['host']['median_us']:8.2f}")
    print(f"{lib:6} overhead (median, events): {r['overhead_median_us']} us (target {r['target_us']})")
PY
step timeout 300 $PKG/bin/histeq_api_bench > "$OUT/api_bench.json" 2> "$OUT/api_bench.err"
cat "$OUT/api_bench.json" >&2
if $PY -c "import cv2" 2>/dev/null; then
  step timeout 300 $PY bench/python_bench.py host --json "$OUT/python_bench_host.json" > /dev/null
fi
echo "python_device.sh: $rc step(s) failed" >&2
exit $rc
