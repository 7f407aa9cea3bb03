#!/usr/bin/python3
"""`histeq --version` and the top of `histeq info`: what a bug report needs, checked against the
facts: the version, the git commit of the source tree, the FFmpeg libraries (running: those of this
machine, as the ffmpeg CLI reports them), the CUDA runtime and driver ("none" without one, the
driver's versions as nvidia-smi reports them otherwise), and what the build made (its CMakeCache).
Run by CTest with e2e.py's conventions, one test per case.

  version.py --histeq build/app/histeq CASE     (exit 77 = skipped)
  version.py --list
"""
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402
from e2e import Skip, histeq, run  # noqa: E402

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIBRARIES = ["libavutil", "libavcodec", "libavformat", "libavdevice", "libswscale", "libswresample"]


def version_lines():
    r = histeq("--version")
    assert r.returncode == 0 and not r.stderr, (r.returncode, r.stderr)
    return r.stdout


def value(text, key):
    m = re.search(rf"^{re.escape(key)}\s+(.*)$", text, re.M)
    assert m, f"no '{key}' line in:\n{text}"
    return m.group(1)


def build_dir():
    """The build folder of the binary under test (the one holding CMakeCache.txt), or None."""
    d = os.path.dirname(e2e.HISTEQ)
    while d != os.path.dirname(d):
        if os.path.exists(os.path.join(d, "CMakeCache.txt")):
            return d
        d = os.path.dirname(d)
    return None


def check_git(text):
    commit = value(text, "git commit")
    r = run(["git", "-C", SOURCE, "rev-parse", "--short=12", "HEAD"])
    if r.returncode != 0 or shutil.which("git") is None:
        assert commit == "unknown", commit
        return
    # The build's commit is the checkout's (the tests run on what was just built).
    assert r.stdout.strip() in commit, f"--version says {commit}, the source tree is at {r.stdout.strip()}"


def check_ffmpeg(text):
    for lib in LIBRARIES:
        m = re.search(rf"^  {lib}\s+(\d+\.\d+\.\d+) \(compiled against (\d+\.\d+\.\d+)\)$", text, re.M)
        assert m, f"no {lib} line in:\n{text}"
    if "linked statically" in value(text, "FFmpeg"):
        return
    # Shared FFmpeg: the running libraries are this machine's, as its ffmpeg CLI loads them too.
    listing = run(["ffmpeg", "-hide_banner", "-version"]).stdout
    for lib in LIBRARIES:
        m = re.search(rf"^{lib}\s+[\d. ]+/\s*(\d+)\.\s*(\d+)\.\s*(\d+)", listing, re.M)
        if m:
            running = re.search(rf"^  {lib}\s+(\S+)", text, re.M).group(1)
            assert running == ".".join(m.groups()), f"{lib}: histeq runs {running}, this machine has {'.'.join(m.groups())}"


def check_cuda(text):
    runtime = value(text, "CUDA runtime")
    assert re.fullmatch(r"\d+\.\d+ \(compiled against \d+\.\d+\)", runtime), runtime
    driver = value(text, "CUDA driver")
    smi = run(["nvidia-smi"]) if shutil.which("nvidia-smi") else None
    if smi is None or smi.returncode != 0:
        if not os.path.exists("/proc/driver/nvidia/version"):
            assert driver == "none", f"no NVIDIA driver here, yet: CUDA driver {driver}"
        return
    cuda = re.search(r"CUDA Version: (\d+\.\d+)", smi.stdout)
    module = run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"]).stdout.split()
    assert cuda and driver.startswith(cuda.group(1)), f"CUDA driver {driver}, nvidia-smi: {cuda and cuda.group(1)}"
    assert module and f"(NVIDIA {module[0]})" in driver, f"CUDA driver {driver}, nvidia-smi: {module}"


def check_built(text):
    built = value(text, "built with")
    b = build_dir()
    if b is None:
        return
    cache = open(os.path.join(b, "CMakeCache.txt")).read()
    gui = re.search(r"^HISTEQ_GUI:BOOL=(\S+)", cache, re.M)
    want = {
        "window": gui is not None and gui.group(1).upper() in ("ON", "1", "TRUE", "YES"),
        "GStreamer element": os.path.exists(os.path.join(b, "app", "gstreamer", "libgsthisteq.so")),
        "Python module": bool([f for f in os.listdir(os.path.join(b, "python", "histeq")) if f.startswith("_histeq")])
        if os.path.isdir(os.path.join(b, "python", "histeq")) else False,
    }
    for name, on in want.items():
        assert f"{name} {'yes' if on else 'no'}" in built, f"built with: {built}; the build has {name}: {on}"


def case_fields():
    text = version_lines()
    print(text)
    first = text.splitlines()[0]
    cmake = open(os.path.join(SOURCE, "CMakeLists.txt")).read()
    assert first == "histeq " + re.search(r"project\(histeq VERSION ([0-9.]+)", cmake).group(1), first
    check_git(text)
    check_ffmpeg(text)
    check_cuda(text)
    check_built(text)
    assert value(text, "core")


def case_info_starts_with_the_version():
    text = version_lines()
    r = histeq("info")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(text + "\n"), f"histeq info does not start with --version's lines:\n{r.stdout[:800]}"
    assert re.search(r"^GPU\s", r.stdout, re.M) and "cpu_parallel" in r.stdout


def case_no_git_outside_a_checkout():
    """The build script says "unknown" for a source tree that is no git checkout, even one inside
    another checkout (a tarball unpacked in a repository)."""
    with_git = e2e.path("repo")
    src = os.path.join(with_git, "histeq-0.1.0")
    os.makedirs(src)
    assert run(["git", "init", "-q", with_git]).returncode == 0
    out = e2e.path("histeq_git.h")
    r = run(["cmake", f"-DSOURCE_DIR={src}", f"-DOUT={out}", "-P", os.path.join(SOURCE, "cmake", "git_describe.cmake")])
    assert r.returncode == 0, r.stderr
    assert '#define HISTEQ_GIT_DESCRIBE "unknown"' in open(out).read(), open(out).read()
    r = run(["cmake", f"-DSOURCE_DIR={SOURCE}", f"-DOUT={out}", "-P", os.path.join(SOURCE, "cmake", "git_describe.cmake")])
    head = run(["git", "-C", SOURCE, "rev-parse", "--short=12", "HEAD"])
    if head.returncode == 0:
        assert head.stdout.strip() in open(out).read(), open(out).read()


CASES = {k[5:]: v for k, v in sorted(globals().items()) if k.startswith("case_")}

if __name__ == "__main__":
    if shutil.which("git") is None and len(sys.argv) > 1 and sys.argv[-1] == "no_git_outside_a_checkout":
        print("skipped: no git")
        sys.exit(77)
    sys.exit(e2e.main(CASES))
