#!/usr/bin/env bash
# One device call for the library and the GStreamer element after their merges: the GPU tests (the
# public API's among them), memcheck on the API's device path, the CPU quality bench, the GStreamer
# element (tools/device/gst_device.sh) and the Python module's GPU tests with a crash trace.
# Carry: .carry/bin.tgz, .carry/py, .carry/gst.tar.xz.
#   OUT=$OUT bash tools/device/device_round.sh      (everything lands in $OUT/round.tgz)
set -uo pipefail
cd "$(dirname "$0")/../.."
FINAL=${OUT:-/tmp/out}
D=/tmp/round; rm -rf $D; mkdir -p $D $FINAL /tmp/hb
tar xzf .carry/bin.tgz -C /tmp/hb
rc=0
step() { echo "== $*" >&2; "$@" || { echo "FAILED($?): $*" >&2; rc=$((rc + 1)); }; }
step timeout 200 /tmp/hb/histeq_gpu_tests --gtest_brief=1 --gtest_filter='-Matrix/*' > $D/gpu_tests.txt 2>&1
tail -4 $D/gpu_tests.txt >&2
step timeout 120 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/hb/histeq_gpu_tests \
  --gtest_brief=1 --gtest_filter='ApiGpu.*' > $D/memcheck_api.txt 2>&1
tail -2 $D/memcheck_api.txt >&2
step timeout 60 /tmp/hb/histeq quality --bench --cpu --sizes 1080p --runs 30 > $D/quality_bench_cpu.txt 2>&1
cat $D/quality_bench_cpu.txt >&2
OUT=$D step timeout 200 bash tools/device/gst_device.sh > $D/gst_run.log 2>&1
tail -12 $D/gst_run.log >&2
P=/tmp/histeq-py; rm -rf $P; mkdir -p $P; tar xzf .carry/py/py.tgz -C $P
export PYTHONPATH=$P/site PYTHONFAULTHANDLER=1
step timeout 150 python3 -m pytest -p no:cacheprovider -rs -v tests/python/test_gpu.py > $D/py_gpu.txt 2>&1
tail -25 $D/py_gpu.txt >&2
cat > /tmp/min_np.py <<'PY'
import numpy as np, histeq
eq = histeq.Equalizer()
y = np.random.default_rng(0).integers(0, 255, (1080, 1920), dtype=np.uint8)
print(eq(y).mean(), flush=True)
PY
cat > /tmp/min_torch.py <<'PY'
import torch, histeq
eq = histeq.Equalizer()
y = torch.randint(0, 255, (1080, 1920), dtype=torch.uint8, device="cuda")
r = eq(y); torch.cuda.synchronize(); print(r.float().mean().item(), flush=True)
PY
for m in np torch; do
  timeout 60 python3 /tmp/min_$m.py > $D/min_$m.txt 2>&1; echo "rc=$?" >> $D/min_$m.txt
  tail -3 $D/min_$m.txt >&2
done
if ! grep -q "rc=0" $D/min_torch.txt; then
  timeout 120 /usr/local/cuda/bin/cuda-gdb -batch -ex run -ex bt --args python3 /tmp/min_torch.py > $D/gdb_torch.txt 2>&1
  grep -A25 "SIGSEGV" $D/gdb_torch.txt | head -40 >&2
fi
tar czf $FINAL/round.tgz -C $D .
exit $rc
