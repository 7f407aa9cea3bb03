#!/usr/bin/env bash
# The device example (examples/equalize_device.cpp: frames in pitched CUDA memory, equalized there
# on the caller's stream) on the GPU machine, which has no FFmpeg and no compilers:
#   bash tests/install/device_example.sh prepare [BUILD]   here: BUILD (default build-static, as
#        tools/device/prepare_device.sh configures it) installed into a prefix, equalize_device built against
#        it with pkg-config, the install test's clips and their references (histeq export's frames)
#        -> .carry/example/ (about 13 MiB)
#   bash tests/install/device_example.sh run               there (carry .carry/example): each clip
#        through equalize_device, compared byte for byte with the reference; memcheck on one clip
# Exit: 0 all equal, 1 a difference or a failure, 77 no GPU (skipped).
set -uo pipefail
cd "$(dirname "$0")/../.."
bundle=.carry/example

if [[ ${1:-} == prepare ]]; then
  set -e
  build=${2:-build-static}
  # What `cmake --install` installs (the GStreamer element too, where the build has it).
  ninja -C "$build" histeq histeq_lib histeq_cli_docs $(ninja -C "$build" -t targets all | grep -o '^gsthisteq:' | tr -d :)
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  /usr/bin/python3 tests/install/test_install.py --build "$build" --source . --work "$work/t" prefix
  rm -rf "$bundle"
  mkdir -p "$bundle/lib"
  /usr/bin/python3 tests/install/test_install.py --work "$work/t" --device-bundle "$bundle/clips"
  # LIBDIR: lib/<triplet> on Debian (the top CMakeLists.txt), lib elsewhere.
  pc=$(find "$work/t/prefix" -name histeq.pc -path "*/pkgconfig/*" | head -1)
  make -s -C examples OUT="$work" PKG_CONFIG_PATH="$(dirname "$pc")" device
  strip -o "$bundle/equalize_device" "$work/equalize_device"
  # Under its SONAME, the name the program asks for (a plain file: a carry may drop symbolic links).
  lib=$(readlink -f "$(dirname "$(dirname "$pc")")/libhisteq.so")
  soname=$(objdump -p "$lib" | awk '$1 == "SONAME" {print $2}')
  strip -o "$bundle/lib/$soname" "$lib"
  # Over a shared core (HISTEQ_SHARED_CORE) libhisteq needs LIBDIR/histeq/: the core, stripped, and
  # NVIDIA's runtime as it is.
  for f in "$(dirname "$lib")"/histeq/*.so.*; do
    [[ -e $f ]] || continue
    case $(basename "$f") in libcudart*) cp -L "$f" "$bundle/lib/" ;; *) strip -o "$bundle/lib/$(basename "$f")" "$f" ;; esac
  done
  du -sh "$bundle"
  exit 0
fi
[[ ${1:-} == run ]] || { echo "usage: $0 prepare [BUILD] | run" >&2; exit 2; }
[[ -x $bundle/equalize_device ]] || { echo "no $bundle/equalize_device: run '$0 prepare' first and carry $bundle" >&2; exit 1; }
export LD_LIBRARY_PATH=$PWD/$bundle/lib
out=$(mktemp -d)
fails=0
while read -r name controls; do
  # shellcheck disable=SC2086  # the controls are separate words
  "$bundle/equalize_device" "$bundle/clips/$name.y4m" "$out/$name.y4m" $controls
  rc=$?
  if ((rc == 77)); then echo "SKIP: no CUDA device"; exit 77; fi
  if ((rc == 0)) && cmp -s "$out/$name.y4m" "$bundle/clips/$name.ref.y4m"; then
    echo "PASS $name ($controls): $(stat -c %s "$out/$name.y4m") bytes equal to histeq export's frames"
  else
    echo "FAIL $name ($controls): exit $rc; $(cmp "$out/$name.y4m" "$bundle/clips/$name.ref.y4m" 2>&1)"
    fails=$((fails + 1))
  fi
done < "$bundle/clips/cases.txt"
sanitizer=/usr/local/cuda/bin/compute-sanitizer
if [[ -x $sanitizer ]]; then
  first=$(head -1 "$bundle/clips/cases.txt" | cut -d' ' -f1)
  if "$sanitizer" --tool memcheck --error-exitcode 9 "$bundle/equalize_device" "$bundle/clips/$first.y4m" "$out/m.y4m" > "$out/memcheck.txt" 2>&1; then
    echo "PASS memcheck on $first"
  else
    echo "FAIL memcheck on $first:"; tail -20 "$out/memcheck.txt"; fails=$((fails + 1))
  fi
fi
rm -rf "$out"
exit $((fails > 0))
