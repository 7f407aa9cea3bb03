#!/usr/bin/python3
"""The installed histeq, run by CTest, one test per case, in a shared work folder.

`prefix` (the fixture of the others) installs the build with `cmake --install` into a staging
folder and MOVES it to WORK/prefix (so everything after it proves the install relocatable), checks
its layout, and makes the clips with the ffmpeg CLI and their references with the installed
`histeq export` (rawvideo). The other cases use that prefix and never the source or build tree:

  examples_cmake        examples/ built with find_package(histeq); equalize_host (C++) and
                        equalize_host_c (C) on every clip, frames equal to `histeq export`'s bit for bit
  examples_pkgconfig    the same, built with examples/Makefile (pkg-config)
  examples_device       equalize_device (CUDA device frames) the same way; skipped without a GPU
  quality_uses_share    the installed `histeq quality` from a folder outside the source tree runs
                        share/histeq/quality.py, and fails (naming that folder) once it is gone,
                        although the source tree still has bench/quality.py
  completion            the installed bash, zsh and fish completions offer commands, options and
                        choices (zsh in a pseudo-terminal, fish's `complete -C`), and are what
                        `histeq completion SHELL` prints (every option of `histeq CMD --help`)
  man_page              share/man/man1/histeq.1 has a section per command of `histeq --help`, EXIT
                        STATUS and EXAMPLES (whose options the commands have), no line over 80
                        columns as `man` shows it at 80
  pip_install           `pip install SRC` into a fresh venv (an isolated build: scikit-build-core and
                        nanobind from PyPI), then the module's CPU tests (tests/python/test_api.py, test_frames.py,
                        test_export_match.py) on that installed module, with the prefix's `histeq
                        export` as the reference

  test_install.py --build BUILD --source SRC --work WORK CASE     (exit 77 = skipped)
  test_install.py --list
  test_install.py --work WORK --device-bundle DIR                 (tests/install/device_example.sh)
"""
import argparse
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys

SKIP = 77
A = None  # the parsed arguments


class Skip(Exception):
    pass


def run(args, timeout=300, check=True, **kw):
    r = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=timeout, **kw)
    if check:
        assert r.returncode == 0, f"{' '.join(map(str, args))} failed ({r.returncode}):\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r


def work(*parts):
    return os.path.join(A.work, *parts)


def prefix(*parts):
    return work("prefix", *parts)


def histeq_bin():
    return prefix("bin", "histeq")


def cache_value(name):
    """A variable of the build's CMakeCache.txt ("" when absent)."""
    m = re.search(rf"^{name}:[A-Z]+=(.*)$", open(os.path.join(A.build, "CMakeCache.txt")).read(), re.M)
    return m.group(1) if m else ""


def libdir():
    """LIBDIR relative to the prefix: lib/<triplet> on Debian (the top CMakeLists.txt), lib elsewhere."""
    return cache_value("CMAKE_INSTALL_LIBDIR") or "lib"


def shared_core():
    return cache_value("HISTEQ_SHARED_CORE").upper() in ("ON", "1", "TRUE", "YES")


def clean_env():
    """No LD_LIBRARY_PATH and no CMake or pkg-config search paths from outside: only what the test names."""
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "CMAKE_PREFIX_PATH", "PKG_CONFIG_PATH")}
    return env


# ---- the clips: (name, how to make it, controls for the examples and for `histeq export`) --------

CLIPS = {
    # name: (ffmpeg input args, output args, pixel format, controls)
    "testsrc2": (["-f", "lavfi", "-i", "testsrc2=size=160x90:rate=25"], ["-frames:v", "6", "-pix_fmt", "yuv420p"], "yuv420p", {}),
    "odd_clahe": (["-f", "lavfi", "-i", "testsrc2=size=160x96:rate=30"],
                  ["-frames:v", "5", "-vf", "scale=161:91", "-pix_fmt", "yuv420p"], "yuv420p", {"mode": "clahe", "clip-limit": "2"}),
    # ffmpeg's y4m muxer writes odd-width 16-bit chroma rows one byte short: an even width here.
    "ten_bit_full": (["-f", "lavfi", "-i", "testsrc2=size=160x96:rate=25"],
                     ["-frames:v", "4", "-vf", "scale=96:55,format=yuv420p10le", "-color_range", "pc", "-strict", "-1"],
                     "yuv420p10le", {}),
}


def make_photo_clip(path):
    """A pan over skimage's astronaut photograph (6 frames of 180x120), when skimage is installed."""
    try:
        import numpy as np
        from skimage import data
    except ImportError:
        return False
    img = data.astronaut()
    frames = np.stack([img[100 + 3 * i:220 + 3 * i, 150 + 7 * i:330 + 7 * i] for i in range(6)])
    p = subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", "180x120",
                        "-r", "25", "-i", "-", "-pix_fmt", "yuv420p", path], input=frames.tobytes(), capture_output=True)
    assert p.returncode == 0, p.stderr
    return True


def clips():
    """[(name, y4m path, ffmpeg pixel format, controls)] of the clips the fixture made."""
    out = []
    for name, (_, _, fmt, controls) in CLIPS.items():
        out.append((name, work("clips", name + ".y4m"), fmt, controls))
    if os.path.exists(work("clips", "photo.y4m")):
        out.append(("photo", work("clips", "photo.y4m"), "yuv420p", {"temporal": "0.2"}))
    return out


def raw(path, fmt):
    """The frames of a video file as ffmpeg decodes them, at `fmt`, unconverted."""
    r = subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-i", path, "-f", "rawvideo", "-pix_fmt", fmt, "-"],
                       capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


def make_clips_and_references():
    os.makedirs(work("clips"))
    for name, (inp, outp, _, _) in CLIPS.items():
        run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y"] + inp + outp + [work("clips", name + ".y4m")])
    make_photo_clip(work("clips", "photo.y4m"))
    for name, path, fmt, controls in clips():
        args = [a for k, v in controls.items() for a in ("--" + k, v)]
        ref = work("clips", name + ".ref.mkv")  # FFV1: lossless, and in every FFmpeg build histeq uses
        run([histeq_bin(), "export", path, "-o", ref, "-c", "ffv1", "--progress", "none", "--cpu"] + args, env=clean_env())
        frames = raw(ref, fmt)
        assert frames and frames != raw(path, fmt), f"{name}: the export equalized nothing"
        with open(work("clips", name + ".ref.raw"), "wb") as f:
            f.write(frames)


# ---- cases ----------------------------------------------------------------------------------------

def case_prefix():
    shutil.rmtree(A.work, ignore_errors=True)
    os.makedirs(A.work)
    staged = work("staged")
    run(["cmake", "--install", A.build, "--prefix", staged])
    os.rename(staged, prefix())  # relocated: nothing may remember where it was installed
    version = run([histeq_bin(), "--version"], env=clean_env()).stdout.split()[1]  # "histeq 0.1.0\n..."
    lib = libdir()
    files = ["bin/histeq", "include/histeq/histeq.hpp", "include/histeq/histeq.h", f"{lib}/cmake/histeq/histeqConfig.cmake",
             f"{lib}/cmake/histeq/histeqConfigVersion.cmake", f"{lib}/cmake/histeq/histeqTargets.cmake", f"{lib}/pkgconfig/histeq.pc",
             "share/histeq/quality.py", "share/histeq/plot_paper.py", "share/man/man1/histeq.1",
             "share/bash-completion/completions/histeq", "share/zsh/vendor-completions/_histeq",
             "share/fish/vendor_completions.d/histeq.fish", "share/doc/histeq/copyright",
             f"{lib}/libhisteq.so", f"{lib}/libhisteq.so." + version]
    if shared_core():  # the one copy of the core, and the CUDA runtime the programs share
        files += [f"{lib}/histeq/libhisteq-core.so." + version, "share/doc/histeq/cuda-runtime-licence.txt"]
    for f in files:
        assert os.path.exists(prefix(f)), f"not installed: {f}"
    soname = re.search(r"SONAME\s+(\S+)", run(["objdump", "-p", prefix(lib, "libhisteq.so")]).stdout)
    major_minor = ".".join(version.split(".")[:2])
    assert soname and soname.group(1).startswith("libhisteq.so." + major_minor), soname
    runpath = re.search(r"(?:RUNPATH|RPATH)\s+(\S+)", run(["objdump", "-p", histeq_bin()]).stdout)
    want = f"$ORIGIN/../{lib}/histeq" if shared_core() else f"$ORIGIN/../{lib}"
    assert runpath and runpath.group(1) == want, runpath
    if shared_core():  # the CLI and libhisteq load the same core, from the prefix
        for f in (histeq_bin(), prefix(lib, "libhisteq.so")):
            needed = run(["ldd", f], env=clean_env()).stdout
            core = re.findall(r"libhisteq-core\S* => (\S+)", needed)
            assert core and os.path.realpath(core[0]).startswith(prefix(lib, "histeq") + os.sep), f"{f}: {core}"
            assert "not found" not in needed, needed
    for f in glob.glob(prefix(lib, "cmake", "histeq", "*.cmake")) + [prefix(lib, "pkgconfig", "histeq.pc")]:
        text = open(f).read()
        for tree in (A.source, A.build, staged):
            assert os.path.abspath(tree) not in text, f"{f} names {tree}: not relocatable"
    make_clips_and_references()


def check_examples(folder, names, label):
    """Runs each example of `names` in `folder` on every clip and compares with the references."""
    for name, path, fmt, controls in clips():
        ref = open(work("clips", name + ".ref.raw"), "rb").read()
        for exe in names:
            out = work(f"{label}_{exe}_{name}.y4m")
            r = run([os.path.join(folder, exe), path, out] + [f"{k}={v}" for k, v in controls.items()], env=clean_env(),
                    check=False)
            if r.returncode == SKIP:
                raise Skip(f"{exe}: {r.stderr.strip()}")
            assert r.returncode == 0, f"{exe} {name}: {r.stderr}"
            got = raw(out, fmt)
            assert got == ref, f"{exe} on {name}: {len(got)} bytes differ from histeq export's {len(ref)}"
            print(f"{label} {exe} {name}: {len(got)} bytes equal to histeq export's")


def build_with_cmake():
    """examples/ with CMake against the prefix (once; the device case reuses it)."""
    b = work("examples-cmake")
    if not os.path.exists(os.path.join(b, "equalize_host")):
        gen = ["-G", "Ninja"] if shutil.which("ninja") else []
        run(["cmake", "-S", os.path.join(A.source, "examples"), "-B", b, "-DCMAKE_BUILD_TYPE=Release",
             "-DCMAKE_PREFIX_PATH=" + prefix()] + gen, env=clean_env())
        run(["cmake", "--build", b], env=clean_env())
        cache = open(os.path.join(b, "CMakeCache.txt")).read()
        assert "histeq_DIR:PATH=" + prefix(libdir(), "cmake", "histeq") in cache, "find_package(histeq) found another histeq"
    return b


def case_examples_cmake():
    b = build_with_cmake()
    check_examples(b, ["equalize_host", "equalize_host_c"], "cmake")


def case_examples_pkgconfig():
    b = work("examples-pkgconfig")
    os.makedirs(b, exist_ok=True)
    env = dict(clean_env(), PKG_CONFIG_PATH=prefix(libdir(), "pkgconfig"))
    run(["make", "-s", "-C", os.path.join(A.source, "examples"), "OUT=" + b, "all"], env=env)  # PKG_CONFIG_PATH from the environment
    for exe in ("equalize_host", "equalize_host_c"):
        needed = run(["objdump", "-p", os.path.join(b, exe)]).stdout
        assert re.search(r"NEEDED\s+libhisteq\.so\.", needed), f"{exe} does not link libhisteq"
    check_examples(b, ["equalize_host", "equalize_host_c"], "pkg-config")


def case_examples_device():
    if shutil.which("nvidia-smi") is None or run(["nvidia-smi", "-L"], check=False).returncode != 0:
        raise Skip("no GPU (nvidia-smi finds none)")
    b = build_with_cmake()
    if not os.path.exists(os.path.join(b, "equalize_device")):
        raise Skip("equalize_device was not built (no CUDA toolkit)")
    check_examples(b, ["equalize_device"], "device")


def case_quality_uses_share():
    elsewhere = work("elsewhere")  # not in the source tree, and no bench/ in it
    os.makedirs(elsewhere, exist_ok=True)
    clip = work("clips", "testsrc2.y4m")
    cmd = [histeq_bin(), "quality", clip, "-o", "out", "--peers", "none", "--configs", "plain,default"]
    r = run(cmd, cwd=elsewhere, env=clean_env())
    assert os.path.exists(os.path.join(elsewhere, "out", "quality.csv")), r.stdout + r.stderr
    script = prefix("share", "histeq", "quality.py")
    assert os.path.exists(os.path.join(A.source, "bench", "quality.py"))
    os.rename(script, script + ".away")
    try:
        r = run(cmd[:4] + ["out2"] + cmd[5:], cwd=elsewhere, env=clean_env(), check=False)
    finally:
        os.rename(script + ".away", script)
    assert r.returncode != 0 and prefix("share", "histeq") in r.stderr, \
        f"without share/histeq/quality.py the installed histeq did not fail naming it: {r.returncode} {r.stderr}"
    print("quality: ran share/histeq/quality.py; without it:", r.stderr.strip())


COMPLETIONS = {  # shell: the installed script
    "bash": ("share", "bash-completion", "completions", "histeq"),
    "zsh": ("share", "zsh", "vendor-completions", "_histeq"),
    "fish": ("share", "fish", "vendor_completions.d", "histeq.fish"),
}


def complete(words, shell="bash"):
    """What the installed completion of `shell` offers for the command line `words` (the last one
    being typed): bash's function called as bash calls it; zsh in a pseudo-terminal, Tab pressed
    (tests/install/zsh_complete.zsh); fish's own `complete -C`."""
    script = prefix(*COMPLETIONS[shell])
    if shell == "bash":
        quoted = " ".join("'" + w + "'" for w in words)
        r = run(["bash", "-c", f"source '{script}'; COMP_WORDS=({quoted}); COMP_CWORD={len(words) - 1}; _histeq; "
                               "printf '%s\\n' \"${COMPREPLY[@]}\""])
        return r.stdout.split()
    if shell == "zsh":
        harness = os.path.join(A.source, "tests", "install", "zsh_complete.zsh")
        r = run(["zsh", "-f", harness, os.path.dirname(script)] + words, timeout=60)
        return r.stdout.split()
    line = " ".join(words)
    r = run(["fish", "--no-config", "-c", f"source {script}; complete -C {shlex.quote(line)}"], timeout=60)
    return [l.split("\t")[0] for l in r.stdout.splitlines()]


def check_completion(shell):
    c = lambda words: complete(words, shell)  # noqa: E731
    assert "export" in c(["histeq", "ex"]) and "quality" in c(["histeq", ""]), (shell, c(["histeq", ""]))
    assert c(["histeq", "export", "--clip-l"]) == ["--clip-limit"], (shell, c(["histeq", "export", "--clip-l"]))
    assert sorted(c(["histeq", "export", "--mode", ""])) == ["clahe", "global"], (shell, c(["histeq", "export", "--mode", ""]))
    assert "cpu_parallel" in c(["histeq", "export", "-k", "cpu_"]), (shell, c(["histeq", "export", "-k", "cpu_"]))
    assert "--clip-limit" not in c(["histeq", "info", "--"]), shell
    installed = open(prefix(*COMPLETIONS[shell])).read()
    assert installed == run([histeq_bin(), "completion", shell], env=clean_env()).stdout, f"the {shell} completion is stale"
    for cmd in ("export", "play", "quality", "bench"):
        helptext = run([histeq_bin(), cmd, "--help"], env=clean_env()).stdout
        offered = set(c(["histeq", cmd, "--"]))
        for opt in set(re.findall(r"^\s+(?:-\w,)?(--[a-z0-9-]+)", helptext, re.M)):
            assert opt in offered, f"{shell}: histeq {cmd} {opt} is not completed"
    print(f"{shell}: commands, options, choices and kernels completed")


def case_completion():
    missing = [s for s in COMPLETIONS if shutil.which(s) is None]
    assert not missing, f"no {missing} to try the completions with (scripts/setup.sh installs them)"
    for shell in COMPLETIONS:
        check_completion(shell)


def man_text(width):
    env = dict(clean_env(), MANWIDTH=str(width), MANPAGER="cat", PAGER="cat", MAN_KEEP_FORMATTING="")
    return run(["man", "-l", prefix("share", "man", "man1", "histeq.1")], env=env).stdout


def check_man_examples(text):
    """Every `histeq CMD ...` line of EXAMPLES uses options that `histeq CMD --help` names."""
    examples = text.split("\nEXAMPLES\n")[1].split("\n\n\n")[0]
    lines = [l.strip() for l in examples.splitlines() if l.strip().startswith("histeq ")]
    assert len(lines) >= 6, examples
    for line in lines:
        words = line.split()
        helptext = run([histeq_bin(), words[1], "--help"], env=clean_env()).stdout
        for w in words[2:]:
            if w.startswith("-") and w != "-":
                assert re.search(rf"(^|[\s,]){re.escape(w)}([\s=,]|$)", helptext, re.M), f"EXAMPLES: {line}: no {w} in histeq {words[1]} --help"


def case_man_page():
    page = open(prefix("share", "man", "man1", "histeq.1")).read()
    listing = run([histeq_bin(), "--help"], env=clean_env()).stdout.split("Subcommands:")[1]
    commands = re.findall(r"^  ([a-z]+) ", listing, re.M)
    assert "export" in commands
    for c in commands:
        assert f'.SH "HISTEQ {c.upper()}"' in page, f"no section for histeq {c}"
    for section in ("EXIT STATUS", "EXAMPLES"):
        assert re.search(rf'^\.SH "?{section}"?$', page, re.M), f"no {section} section"
    assert "\\-\\-clip\\-limit" in page
    assert shutil.which("man"), "no man to read the page with (man-db)"
    text = man_text(80)
    assert "HISTEQ EXPORT" in text and "--clip-limit" in text and "EXIT STATUS" in text
    long = [l for l in text.splitlines() if len(l) > 80]
    assert not long, f"{len(long)} lines over 80 columns, e.g.:\n" + "\n".join(long[:5])
    check_man_examples(text)


def pip_settings():
    """pip's --config-settings for the build: its own build folder in WORK; the main build's CUDA
    architecture when it has one (a GPU machine's), else the first of its list (only the CPU runs
    here), and its compiler launchers (ccache)."""
    cache = open(os.path.join(A.build, "CMakeCache.txt")).read()
    settings = ["--config-settings=build-dir=" + work("pip-build")]
    for var in ("CMAKE_CUDA_ARCHITECTURES", "CMAKE_C_COMPILER_LAUNCHER", "CMAKE_CXX_COMPILER_LAUNCHER", "CMAKE_CUDA_COMPILER_LAUNCHER"):
        m = re.search(rf"^{var}:[A-Z]+=(.+)$", cache, re.M)
        if m:
            settings.append(f"--config-settings=cmake.define.{var}={m.group(1).split(';')[0]}")
    return settings


def case_pip_install():
    venv = work("pip-venv")
    shutil.rmtree(venv, ignore_errors=True)
    run([sys.executable, "-m", "venv", "--system-site-packages", venv])  # numpy and pytest: Debian's
    py = os.path.join(venv, "bin", "python3")
    env = dict(clean_env(), CMAKE_BUILD_PARALLEL_LEVEL=str(os.cpu_count() or 2))
    env.pop("PYTHONPATH", None)
    run([py, "-m", "pip", "install", "--quiet", A.source] + pip_settings(), timeout=3000, env=env)
    where = run([py, "-c", "import histeq; print(histeq.__file__, len(histeq.kernels()))"], cwd=work(), env=env).stdout.split()
    assert where[0].startswith(venv + os.sep), f"imported {where[0]}, not the installed module"
    assert int(where[1]) > 0, "the installed module lists no kernels"
    stubs = glob.glob(os.path.join(os.path.dirname(where[0]), "*.pyi"))
    assert stubs, "the installed module has no type stubs"
    tests = [os.path.join(A.source, "tests", "python", f) for f in ("test_api.py", "test_frames.py", "test_export_match.py")]
    r = run([py, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rs"] + tests, cwd=work(), timeout=900, check=False,
            env=dict(env, HISTEQ_BIN=histeq_bin()))
    print(r.stdout[-3000:])
    assert r.returncode == 0, f"the module's tests failed on the pip-installed module:\n{r.stdout[-3000:]}\n{r.stderr[-2000:]}"
    assert " passed" in r.stdout, "no test passed"


CASES = {k[5:]: v for k, v in sorted(globals().items()) if k.startswith("case_")}


def device_bundle(folder):
    """For a GPU machine without FFmpeg or compilers (tests/install/device_example.sh): the clips of
    the prefix case, each with its reference as the .y4m equalize_device must write byte for byte
    (the input's header, then histeq export's frames), and cases.txt: NAME CONTROL=VALUE ..."""
    os.makedirs(folder, exist_ok=True)
    lines = []
    for name, path, fmt, controls in clips():
        data = open(path, "rb").read()
        header = data[:data.index(b"\n") + 1]
        ref = open(work("clips", name + ".ref.raw"), "rb").read()
        frames = data.count(b"FRAME")
        size = len(ref) // frames
        assert size * frames == len(ref), name
        shutil.copy(path, os.path.join(folder, name + ".y4m"))
        with open(os.path.join(folder, name + ".ref.y4m"), "wb") as f:
            f.write(header + b"".join(b"FRAME\n" + ref[i * size:(i + 1) * size] for i in range(frames)))
        lines.append(" ".join([name] + [f"{k}={v}" for k, v in controls.items()]))
    with open(os.path.join(folder, "cases.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    global A
    ap = argparse.ArgumentParser()
    ap.add_argument("--build")
    ap.add_argument("--source")
    ap.add_argument("--work")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--device-bundle", metavar="DIR", help="after the prefix case: write the device example's clips to DIR")
    ap.add_argument("case", nargs="?")
    A = ap.parse_args()
    if A.list:
        print("\n".join(CASES))
        return 0
    if A.device_bundle:
        A.work = os.path.abspath(A.work)
        device_bundle(A.device_bundle)
        return 0
    for tool in ("ffmpeg", "cmake", "objdump"):
        if shutil.which(tool) is None:
            print(f"skipped: no {tool}")
            return SKIP
    A.work = os.path.abspath(A.work)
    if A.case != "prefix" and not os.path.exists(histeq_bin()):
        print("the prefix is missing (the install.prefix test failed)")
        return 1
    try:
        CASES[A.case]()
    except Skip as s:
        print(f"skipped: {s}")
        return SKIP
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
