#!/usr/bin/env python3
"""Fails on an #include that goes up a layer (or sideways between siblings), or into another
module's private header.

core/:  cuda <- image <- {histogram, video, gl} <- equalize <- pipeline <- api
lab/:   the lab (the measuring the CLI's bench and quality --bench link): above all of core/, below
        app/ (app/ may include lab/; core/ may not); it never includes app/.
app/:   core, lab <- common <- player <- commands <- main.cpp
A file may include its own folder and any lower layer, never a higher one or a sibling of its own
layer; core/ and the lab never include app/, SDL or ImGui, nor bench/ (the benchmark programs).

Front ends. python/ (the nanobind module) and app/gstreamer/ (the GStreamer element) use only the
public API, include/histeq ("histeq/..."), and their own files: an #include of core/, app/, lab/ or
bench/ there is a violation, except the named ones in FRONT_END_EXCEPTIONS (each with its reason; an
exception that no longer occurs fails too, so the list only shrinks).

Private headers. A module is a folder of core/ or app/ (core/histogram, app/player, ...). A header
of a module is private to it when it lies under a folder named kernels/, detail/ or internal/
inside the module (core/histogram/kernels/common.cuh), or when its name ends in _impl (x_impl.h,
x_impl.cuh). Only files of the same module may include it; every other file of core/, app/,
lab/, bench/, python/ and tests/ goes through the module's public headers (for device code: core/histogram/agent/).

  check_layers.py ROOT          check the tree at ROOT
  check_layers.py --self-test   plant violations in a scratch tree and check they are caught
"""
import os
import re
import sys
import tempfile

CORE = {"cuda": 0, "image": 1, "histogram": 2, "video": 2, "gl": 2, "equalize": 3, "pipeline": 4, "api": 5}
APP = {"common": 0, "player": 1, "commands": 2}
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^">]+)[">]')
SOURCES = (".h", ".hpp", ".cpp", ".cu", ".cuh", ".def")
PRIVATE_DIRS = {"kernels", "detail", "internal"}
PRIVATE_SUFFIX = "_impl"
FRONT_ENDS = ("python/", "app/gstreamer/")
PROJECT_DIRS = ("core/", "app/", "lab/", "bench/")
# (file, include): why this front-end file may include a private header of the project.
FRONT_END_EXCEPTIONS = {
    ("python/src/convert.cpp", "core/image/fork_join.h"):
        "the module's frame conversions run on the core's shared CPU pool (image::shared_pool, "
        "image::for_rows), the threads the CPU equalizer uses; the public API offers no pool, and a "
        "pool of the module's own would double the threads",
}


def layer_of(path):
    """('core', 'video', 2) for core/video/frame.h; ('app', 'main', 3) for app/main.cpp; None elsewhere."""
    parts = path.split("/")
    if len(parts) >= 3 and parts[0] == "core" and parts[1] in CORE:
        return ("core", parts[1], CORE[parts[1]])
    if len(parts) >= 3 and parts[0] == "app" and parts[1] in APP:
        return ("app", parts[1], APP[parts[1]])
    if len(parts) == 2 and parts[0] == "app":
        return ("app", "main", 3)
    if len(parts) >= 2 and parts[0] == "lab":
        return ("lab", "lab", 0)
    return None


def module_of(path):
    """'core/histogram' for core/histogram/kernels/common.cuh; None outside core/ and app/ modules."""
    parts = path.split("/")
    if len(parts) >= 3 and parts[0] in ("core", "app"):
        return parts[0] + "/" + parts[1]
    return None


def is_private(path):
    """Whether `path` (core/... or app/...) is a private header of its module (see the docstring)."""
    parts = path.split("/")
    if module_of(path) is None:
        return False
    stem = os.path.splitext(parts[-1])[0]
    return bool(PRIVATE_DIRS.intersection(parts[2:-1])) or stem.endswith(PRIVATE_SUFFIX)


def private_violation(src, inc):
    if not inc.startswith(("core/", "app/")) or not is_private(inc):
        return None
    if module_of(src) == module_of(inc):
        return None
    return f"includes a private header of {module_of(inc)} (kernels/, detail/, internal/ or *_impl): use its public headers"


def front_end_violation(src, inc):
    """A front end (python/, app/gstreamer/) including the project's private headers."""
    if not src.startswith(FRONT_ENDS) or not inc.startswith(PROJECT_DIRS):
        return None
    return "a front end includes " + inc.split("/")[0] + "/: front ends use only include/histeq (the public API)"


def violation(src, inc):
    s = layer_of(src)
    if s is None:
        return None
    if s[0] in ("core", "lab"):
        if inc.startswith("app/"):
            return s[0] + " includes app/"
        if inc.startswith("SDL") or inc.startswith("imgui"):
            return s[0] + " includes a UI library (" + inc + ")"
    if s[0] == "core" and inc.startswith("lab/"):
        return "core includes lab/ (the lab sits above the core)"
    if s[0] in ("core", "lab") and inc.startswith("bench/"):
        return s[0] + " includes bench/ (the benchmark programs sit above the product)"
    t = layer_of(inc) if inc.startswith(("core/", "app/")) else None
    if t is None:
        return None
    if s[0] == "core" and t[0] == "app":
        return "core includes app/"
    if s[0] in ("app", "lab") and t[0] == "core":
        return None  # the app and the lab may use any of the core
    if (s[0], s[1]) == (t[0], t[1]):
        return None
    if t[2] > s[2]:
        return f"{s[0]}/{s[1]} (layer {s[2]}) includes {t[0]}/{t[1]} (layer {t[2]}): upward"
    if t[2] == s[2]:
        return f"{s[0]}/{s[1]} includes its sibling {t[0]}/{t[1]} (layer {t[2]})"
    return None


def check(root, exceptions=None):
    """The violations under ROOT, and the front-end exceptions that no longer occur."""
    exceptions = FRONT_END_EXCEPTIONS if exceptions is None else exceptions
    problems, seen = [], set()
    for top in ("core", "app", "lab", "bench", "python", "tests"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not name.endswith(SOURCES):
                    continue
                full = os.path.join(dirpath, name)
                rel = os.path.relpath(full, root).replace(os.sep, "/")
                with open(full, encoding="utf-8", errors="replace") as f:
                    for n, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        inc = m.group(1)
                        why = violation(rel, inc) or private_violation(rel, inc)
                        if not why and (rel, inc) in exceptions:
                            seen.add((rel, inc))
                            continue
                        why = why or front_end_violation(rel, inc)
                        if why:
                            problems.append(f"{rel}:{n}: #include \"{inc}\": {why}")
    for rel, inc in sorted(set(exceptions) - seen):
        problems.append(f"{rel}: #include \"{inc}\": listed in FRONT_END_EXCEPTIONS but no longer there: remove it")
    return problems


def self_test():
    planted = {
        "core/video/frame.h": '#include "core/pipeline/stats.h"\n',      # upward
        "core/histogram/h.h": '#include "core/video/frame.h"\n',         # sibling
        "core/image/p.h": '#include "app/common/run_common.h"\n',        # core -> app
        "core/gl/w.cpp": "#include <SDL.h>\n",                           # UI library in core
        "app/player/p.cpp": '#include "app/commands/commands.h"\n',      # upward in app
        "app/common/c.cpp": '#include "app/player/player.h"\n',          # upward in app
        "lab/a.cpp": '#include "app/commands/commands.h"\n',            # the lab -> app
        "lab/c.cpp": '#include "bench/sweep/sweep.h"\n',                # the lab -> the benchmarks
        "core/equalize/b.cpp": '#include "lab/engine.h"\n',             # core -> the lab
        "python/src/p.cpp": '#include "core/video/frame.h"\n',          # a front end -> core
        "python/src/q.cu": '#include "core/cuda/hd.h"\n',               # a front end -> core
        "app/gstreamer/g.cpp": '#include "core/api/settings.h"\n',     # a front end -> core
        "app/gstreamer/h.cpp": '#include "app/common/run_common.h"\n', # a front end -> app
        "python/src/ok.cpp": '#include "histeq/histeq.hpp"\n#include "arrays.h"\n#include <cstdint>\n',
        "python/src/ok_excused.cpp": '#include "core/image/fork_join.h"\n',  # a listed exception
        "app/gstreamer/ok.cpp": '#include "histeq/histeq.h"\n#include "properties.h"\n#include <gst/gst.h>\n',
        "core/pipeline/ok.cpp": '#include "core/video/frame.h"\n#include "core/cuda/status.h"\n',
        "lab/ok.cpp": '#include "core/pipeline/equalizer.h"\n#include "lab/engine.h"\n',
        "app/player/ok.cpp": '#include "lab/matrix.h"\n',
        "app/commands/ok_lab.cpp": '#include "lab/frame_cost.h"\n',
        "app/commands/ok.cpp": '#include "app/player/player.h"\n#include "core/pipeline/pipeline.h"\n',
        "core/equalize/f.cuh": '#include "core/histogram/kernels/method2_tuned.cuh"\n',  # another module's kernels/
        "bench/sweep/s.h": '#include "core/histogram/kernels/common.cuh"\n',         # private, from outside core/
        "tests/gpu/t.cpp": '#include "core/video/detail/demux.h"\n',                 # detail/
        "app/player/q.cpp": '#include "core/pipeline/session_impl.h"\n',             # *_impl
        "core/histogram/kernels/ok.cu": '#include "core/histogram/kernels/common.cuh"\n',  # its own module
        "core/histogram/ok.cpp": '#include "core/histogram/kernels.def"\n',          # a file, not a folder
        "core/equalize/ok.cu": '#include "core/histogram/agent/method2_tuned.cuh"\n',   # public agent
    }
    with tempfile.TemporaryDirectory() as d:
        for rel, text in planted.items():
            os.makedirs(os.path.dirname(os.path.join(d, rel)), exist_ok=True)
            with open(os.path.join(d, rel), "w") as f:
                f.write(text)
        excused = {("python/src/ok_excused.cpp", "core/image/fork_join.h"): "planted",
                   ("python/src/gone.cpp", "core/cuda/hd.h"): "planted: no longer occurs"}
        found = {p.split(":")[0] for p in check(d, excused)}
    want = {k for k in planted if "ok." not in k and "ok_" not in k} | {"python/src/gone.cpp"}
    if found != want:
        print(f"self-test failed: caught {sorted(found)}, planted {sorted(want)}", file=sys.stderr)
        return 1
    print(f"self-test: all {len(want)} planted violations caught, the allowed includes passed")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    problems = check(sys.argv[1])
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} include(s) break the layers (see tests/docs/check_layers.py)", file=sys.stderr)
        return 1
    print("layers hold: no upward or sideways #include in core/, lab/ and app/, no private header of another module "
          "included, the front ends (python/, app/gstreamer/) on the public API only")
    for (rel, inc), why in sorted(FRONT_END_EXCEPTIONS.items()):
        print(f"  known exception: {rel} includes {inc}: {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
