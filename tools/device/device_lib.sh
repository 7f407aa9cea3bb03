# Shared start of the device scripts that run the carried static binaries (sourced, not run):
#   source tools/device/device_lib.sh; device_setup /tmp/NAME
# Unpacks .carry/bin.tgz into /tmp/hb, makes OUT (emptied) and FINAL (= $OUT of the device call,
# where the packed results go), records the GPU and the host's cores in OUT/device.txt, sets H (the
# carried histeq) and CUDA_BIN (the folder of compute-sanitizer and ncu), and gives step(): runs a
# command, logs it to stderr, and counts failures in rc instead of stopping.
device_setup() {
  FINAL=${OUT:-/tmp/out}
  OUT=$1
  rm -rf "$OUT" /tmp/hb
  mkdir -p "$OUT" "$FINAL" /tmp/hb
  tar xzf .carry/bin.tgz -C /tmp/hb
  rc=0
  export HISTEQ_TEST_CLIP=.carry/real.mp4
  nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader > "$OUT/device.txt" 2>&1
  nproc >> "$OUT/device.txt"
  H=/tmp/hb/histeq
  CUDA_BIN=$(dirname "$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)")
}
step() { echo "== $*" >&2; "$@" || { echo "FAILED($?): $*" >&2; rc=$((rc + 1)); }; }
