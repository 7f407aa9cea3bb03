#!/usr/bin/python3
"""The Debian package, as a machine without histeq's build would get it. CTest runs one test per case
in a shared work folder; `deb` (the fixture of the others) makes the package with CPack from the
build, unpacks it with `dpkg -x` into WORK/root (never installing it on this machine) and checks what
is in it; the other cases run only what is in that root:

  deb         histeq_VERSION_amd64.deb from `cpack -G DEB --config BUILD/CPackConfig.cmake`: its
              control fields, every file the package must hold, binaries stripped, the Debian
              copyright file naming MIT, Installed-Size <= 80 MB; prints the contents
  depends     every library a packaged ELF file needs (readelf NEEDED) is in the package or comes
              from a package its Depends names (dpkg -S), so dpkg-shlibdeps missed nothing
  cli         root/usr/bin/histeq --version and info, its libraries found in the root (ldd), and a
              small export on the CPU
  gstreamer   gst-inspect-1.0 histeq with GST_PLUGIN_SYSTEM_PATH naming only the package's
              gstreamer-1.0 folder and a fresh registry; then a pipeline through the element
  pkgconfig   examples/equalize_host.c built with `pkg-config --cflags --libs histeq` where only the
              package's histeq.pc is visible (PKG_CONFIG_LIBDIR), as on a machine without FFmpeg's
              development packages; its frames equal to the packaged `histeq export`'s

  test_package.py --build BUILD --source SRC --work WORK --version V [--gstreamer] CASE
  test_package.py --list
"""
import argparse
import glob
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "install"))
from test_install import run  # noqa: E402  (the install test's: a command that must succeed, its output kept)

A = None  # the parsed arguments
MAX_INSTALLED_KIB = 80 * 1024


def work(*parts):
    """WORK/parts: the package, the unpacked root and what the cases make."""
    return os.path.join(A.work, *parts)


def root(*parts):
    return os.path.join(A.work, "root", *parts)


def deb_path():
    return work(f"histeq_{A.version}_amd64.deb")


def triplet():
    return run(["dpkg-architecture", "-qDEB_HOST_MULTIARCH"]).stdout.strip()


def clean_env(**extra):
    """Nothing of the build tree or of this machine's search paths: only what each case names."""
    drop = ("LD_LIBRARY_PATH", "PKG_CONFIG_PATH", "PKG_CONFIG_LIBDIR", "PKG_CONFIG_SYSROOT_DIR", "CMAKE_PREFIX_PATH",
            "GST_PLUGIN_PATH", "GST_PLUGIN_PATH_1_0", "GST_PLUGIN_SYSTEM_PATH", "GST_PLUGIN_SYSTEM_PATH_1_0",
            "GST_REGISTRY", "GST_REGISTRY_1_0", "PYTHONPATH")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(extra)
    return env


def elf_files():
    out = []
    for d, _, files in os.walk(root()):
        for f in files:
            p = os.path.join(d, f)
            if os.path.islink(p) or not os.path.isfile(p):
                continue
            with open(p, "rb") as fh:
                if fh.read(4) == b"\x7fELF":
                    out.append(p)
    return sorted(out)


def field(name):
    return run(["dpkg-deb", "-f", deb_path(), name]).stdout.strip()


# ---- deb: make it, unpack it, check what it holds -------------------------------------------------

def expected_files():
    lib = f"usr/lib/{triplet()}"
    files = ["usr/bin/histeq", f"{lib}/libhisteq.so", f"{lib}/libhisteq.so.{A.version}",
             f"{lib}/histeq/libhisteq-core.so.{A.version}", "usr/include/histeq/histeq.h", "usr/include/histeq/histeq.hpp",
             f"{lib}/cmake/histeq/histeqConfig.cmake", f"{lib}/cmake/histeq/histeqConfigVersion.cmake",
             f"{lib}/cmake/histeq/histeqTargets.cmake", f"{lib}/pkgconfig/histeq.pc", "usr/share/man/man1/histeq.1",
             "usr/share/bash-completion/completions/histeq", "usr/share/zsh/vendor-completions/_histeq",
             "usr/share/fish/vendor_completions.d/histeq.fish", "usr/share/doc/histeq/copyright",
             "usr/share/histeq/quality.py", "usr/share/histeq/plot_paper.py"]
    if A.gstreamer:
        files.append(f"{lib}/gstreamer-1.0/libgsthisteq.so")
    return files


def check_copyright():
    text = open(root("usr", "share", "doc", "histeq", "copyright")).read()
    assert text.startswith("Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/"), text[:200]
    first = text.split("\n\n")[1]  # the first Files paragraph: histeq's own
    assert "Files: *" in first and "License: MIT" in first, first
    for stanza in re.findall(r"^License: (\S.*)$", text, re.M):
        for name in re.split(r" and | or ", stanza):
            assert re.search(rf"^License: {re.escape(name)}\n ", text, re.M), f"the copyright file has no text of '{name}'"


def check_stripped():
    for f in elf_files():
        if os.path.basename(f).startswith("libcudart"):
            continue  # NVIDIA's file, shipped unmodified as its licence asks
        sections = run(["readelf", "-S", "-W", f]).stdout
        assert ".symtab" not in sections, f"{f} is not stripped"


def case_deb():
    shutil.rmtree(A.work, ignore_errors=True)
    os.makedirs(A.work)
    r = run(["cpack", "-G", "DEB", "--config", os.path.join(A.build, "CPackConfig.cmake"), "-B", A.work], timeout=1200)
    assert os.path.exists(deb_path()), f"no {os.path.basename(deb_path())}:\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"
    run(["dpkg-deb", "--info", deb_path()])  # a well-formed archive
    run(["dpkg", "-x", deb_path(), root()])
    assert field("Package") == "histeq" and field("Version") == A.version and field("Architecture") == "amd64"
    depends = field("Depends")
    assert "libc6" in depends and "libavcodec" in depends, f"Depends from dpkg-shlibdeps missing: {depends!r}"
    missing = [f for f in expected_files() if not os.path.exists(root(f))]
    assert not missing, f"not in the package: {missing}"
    check_copyright()
    check_stripped()
    installed = int(field("Installed-Size"))
    listing = run(["dpkg-deb", "-c", deb_path()]).stdout
    print(listing)
    print(f"Depends: {depends}")
    print(f"Installed-Size: {installed} KiB ({installed / 1024:.1f} MiB); the .deb: {os.path.getsize(deb_path()) / 2**20:.1f} MiB")
    assert installed <= MAX_INSTALLED_KIB, f"installed size {installed} KiB is over {MAX_INSTALLED_KIB} KiB"


# ---- depends: the declared dependencies cover what the ELF files need ------------------------------

def system_library_paths():
    """soname -> path of this machine's x86-64 libraries (ldconfig's cache)."""
    paths = {}
    for line in run(["ldconfig", "-p"]).stdout.splitlines():
        m = re.match(r"\s*(\S+) \(([^)]*)\) => (\S+)", line)
        if m and "x86-64" in m.group(2):
            paths.setdefault(m.group(1), m.group(3))
    return paths


def owning_package(path):
    """The package that ships `path` (dpkg -S), trying the /usr-merged spellings of it."""
    real = os.path.realpath(path)
    candidates = [path, real] + [p.replace("/usr/lib/", "/lib/", 1) for p in (path, real) if p.startswith("/usr/lib/")]
    candidates += [p.replace("/lib/", "/usr/lib/", 1) for p in (path, real) if p.startswith("/lib/")]
    for c in candidates:
        r = run(["dpkg", "-S", c], check=False)
        if r.returncode == 0:
            return r.stdout.split(":")[0].split(",")[0].strip()
    return None


def case_depends():
    declared = set()
    for alternative in field("Depends").split(","):
        for name in alternative.split("|"):
            declared.add(name.strip().split(" ")[0].split(":")[0])
    inside = {os.path.basename(f) for f in glob.glob(root("usr", "lib", "**", "*.so*"), recursive=True)}
    system = system_library_paths()
    problems, seen = [], {}
    for f in elf_files():
        for needed in re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", run(["readelf", "-d", f]).stdout):
            if needed in inside:
                seen[needed] = "the package itself"
                continue
            path = system.get(needed)
            pkg = owning_package(path) if path else None
            if pkg is None:
                problems.append(f"{os.path.relpath(f, root())} needs {needed}, which no Debian package here ships")
            elif pkg not in declared:
                problems.append(f"{os.path.relpath(f, root())} needs {needed} ({pkg}), not in Depends")
            seen[needed] = pkg
    for needed in sorted(seen):
        print(f"{needed:32} {seen[needed]}")
    assert not problems, "\n".join(problems)


# ---- cli ------------------------------------------------------------------------------------------

def case_cli():
    exe = root("usr", "bin", "histeq")
    for line in run(["ldd", exe], env=clean_env()).stdout.splitlines():
        if "libhisteq" in line or "libcudart" in line:
            assert root() in line, f"histeq loads a library from outside the package: {line.strip()}"
        assert "not found" not in line, line
    version = run([exe, "--version"], env=clean_env()).stdout
    print(version)
    assert version.startswith(f"histeq {A.version}\n") and "git commit" in version and "libavcodec" in version, version
    info = run([exe, "info"], env=clean_env()).stdout
    assert info.startswith(version.rstrip("\n") + "\n\n"), "histeq info does not start with histeq --version's lines"
    assert re.search(r"^cpu_parallel\s", info, re.M), "histeq info lists no kernel"
    if shutil.which("ffmpeg") is None:
        print("no ffmpeg: the export is not tried")
        return
    clip = work("cli.y4m")
    run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=160x90:rate=25",
         "-frames:v", "5", "-pix_fmt", "yuv420p", clip])
    out = work("cli_out.mkv")
    run([exe, "export", clip, "-o", out, "-c", "ffv1", "--cpu", "--progress", "none"], env=clean_env())
    assert os.path.getsize(out) > 0


# ---- gstreamer --------------------------------------------------------------------------------------

def gst_env(system_path, registry):
    return clean_env(GST_PLUGIN_SYSTEM_PATH=system_path, GST_PLUGIN_SYSTEM_PATH_1_0=system_path,
                     GST_REGISTRY=registry, GST_REGISTRY_1_0=registry, GST_REGISTRY_FORK="no")


def case_gstreamer():
    if not A.gstreamer:
        print("skipped: the build has no GStreamer element")
        return 77
    folder = root("usr", "lib", triplet(), "gstreamer-1.0")
    for r in glob.glob(work("registry*.bin")):
        os.remove(r)
    r = run(["gst-inspect-1.0", "histeq"], env=gst_env(folder, work("registry-package.bin")))
    print(r.stdout)
    filename = re.search(r"^\s*Filename\s+(\S+)", r.stdout, re.M)
    assert filename and filename.group(1).startswith(folder), f"the element is not the package's: {filename}"
    assert re.search(rf"^\s*Version\s+{re.escape(A.version)}$", r.stdout, re.M), "the element's version"
    licence = re.search(r"^\s*License\s+(.*)$", r.stdout, re.M)
    assert licence and licence.group(1).strip() == "MIT/X11", f"the packaged element's licence: {licence and licence.group(1)}"
    # The element at work, beside the system's plugins (videotestsrc, fakesink).
    system = run(["pkg-config", "--variable=pluginsdir", "gstreamer-1.0"], env=clean_env()).stdout.strip()
    pipeline = ["gst-launch-1.0", "-q", "videotestsrc", "num-buffers=5", "!", "video/x-raw,format=I420,width=64,height=48",
                "!", "histeq", "!", "fakesink"]
    run(pipeline, env=gst_env(folder + ":" + system, work("registry-pipeline.bin")), timeout=120)


# ---- pkgconfig ------------------------------------------------------------------------------------

def y4m_frames(path):
    """The frames' bytes of a 4:2:0 .y4m file."""
    data = open(path, "rb").read()
    header, rest = data.split(b"\n", 1)
    w = int(re.search(rb" W(\d+)", header).group(1))
    h = int(re.search(rb" H(\d+)", header).group(1))
    size = w * h + 2 * ((w + 1) // 2) * ((h + 1) // 2)
    frames = []
    while rest:
        line, rest = rest.split(b"\n", 1)
        assert line.startswith(b"FRAME"), line[:20]
        frames.append(rest[:size])
        rest = rest[size:]
    return frames


def write_clip(path, w=96, h=54, n=4):
    """A small 4:2:0 clip with a low-contrast gradient (equalization has work to do), no ffmpeg needed."""
    with open(path, "wb") as f:
        f.write(b"YUV4MPEG2 W%d H%d F25:1 Ip A1:1 C420jpeg\n" % (w, h))
        for k in range(n):
            y = bytes(90 + (x + 2 * r + 3 * k) % 40 for r in range(h) for x in range(w))
            c = bytes(128 + (x - r) % 7 for r in range((h + 1) // 2) for x in range((w + 1) // 2))
            f.write(b"FRAME\n" + y + c + c)


def case_pkgconfig():
    pcdir = root("usr", "lib", triplet(), "pkgconfig")
    env = clean_env(PKG_CONFIG_LIBDIR=pcdir)
    flags = run(["pkg-config", "--cflags", "--libs", "histeq"], env=env).stdout.split()
    libdir = run(["pkg-config", "--variable=libdir", "histeq"], env=env).stdout.strip()
    print("pkg-config --cflags --libs histeq:", " ".join(flags))
    assert os.path.realpath(libdir) == os.path.realpath(root("usr", "lib", triplet())), libdir
    assert run(["pkg-config", "--modversion", "histeq"], env=env).stdout.strip() == A.version
    assert run(["pkg-config", "--exists", "libavcodec"], env=env, check=False).returncode != 0, \
        "FFmpeg's .pc is visible: the case proves nothing"
    exe = work("equalize_host_c")
    run([os.environ.get("CC", "cc"), "-std=c99", "-O2", "-Wall", "-Werror", os.path.join(A.source, "examples", "equalize_host.c"),
         "-o", exe] + flags + ["-Wl,-rpath," + libdir], env=env)
    for line in run(["ldd", exe], env=clean_env()).stdout.splitlines():
        if "libhisteq" in line:
            assert root() in line, f"the program loads libhisteq from outside the package: {line.strip()}"
    clip, out, ref = work("pc.y4m"), work("pc_out.y4m"), work("pc_ref.y4m")
    write_clip(clip)
    run([exe, clip, out], env=clean_env())
    run([root("usr", "bin", "histeq"), "export", clip, "-o", ref, "-y", "--cpu", "--progress", "none"], env=clean_env())
    got, want, source = y4m_frames(out), y4m_frames(ref), y4m_frames(clip)
    assert len(got) == len(source) == 4 and got != source, "the program equalized nothing"
    assert got == want, "the library's frames differ from the packaged histeq export's"
    print(f"{exe}: {len(got)} frames equal to the packaged histeq export's")


CASES = {k[5:]: v for k, v in sorted(globals().items()) if k.startswith("case_")}


def main():
    global A
    ap = argparse.ArgumentParser()
    for value in ("--build", "--source", "--work", "--version"):
        ap.add_argument(value)
    for flag in ("--gstreamer", "--list"):
        ap.add_argument(flag, action="store_true")
    ap.add_argument("case", nargs="?")
    A = ap.parse_args()
    if A.list:
        print("\n".join(["deb"] + [c for c in CASES if c != "deb"]))
        return 0
    A.work = os.path.abspath(A.work)
    if A.case != "deb" and not os.path.isdir(root()):
        print("the unpacked package is missing (the package.deb test failed)")
        return 1
    return CASES[A.case]() or 0


if __name__ == "__main__":
    sys.exit(main())
