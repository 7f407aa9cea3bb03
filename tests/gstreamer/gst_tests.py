#!/usr/bin/python3
"""Tests of the GStreamer element `histeq` (libgsthisteq.so, app/gstreamer/), run by CTest (one test
per case, label gstreamer) with the real gst-launch-1.0 / gst-inspect-1.0 and, for the cases that
drive a pipeline while it plays, GStreamer's Python bindings (python3-gi).

The frames the element writes are compared with `histeq export --codec rawvideo` of the same input
and settings: they must be bit-identical (defaults, plain, CLAHE; 8-bit I420, NV12, 10-bit
I420_10LE and P010_10LE; a full-range clip).

  gst_tests.py --plugin-dir build/app/gstreamer --histeq build/app/histeq CASE   (77 = skipped)
  gst_tests.py --list
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
HISTEQ = None
TMP = None
BUILD_DIR = None
W, H, FPS, FRAMES = 320, 240, 30, 60


class Skip(Exception):
    pass


def run(args, timeout=180):
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=timeout)


def path(name):
    return os.path.join(TMP, name)


def ffmpeg(*args):
    r = run(["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y"] + list(args))
    assert r.returncode == 0, "ffmpeg failed: " + r.stderr


def gst_launch(pipeline):
    """Runs a gst-launch-1.0 pipeline (a string); fails the case with its stderr on an error."""
    r = run(["gst-launch-1.0", "-q"] + pipeline.split())
    assert r.returncode == 0 and "ERROR" not in r.stderr, "gst-launch-1.0 " + pipeline + " failed:\n" + r.stdout + r.stderr
    return r


def clip(name, pix_fmt="yuv420p", extra=()):
    """A low-contrast moving clip (H.264 in MP4, 60 frames at 30 fps) made with the ffmpeg CLI."""
    out = path(name)
    ffmpeg("-f", "lavfi", "-i", f"testsrc2=size={W}x{H}:rate={FPS}:duration={FRAMES / FPS},eq=contrast=0.4:brightness=-0.1",
           "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", pix_fmt, *extra, out)
    return out


def raw_of(file, pix_fmt, out):
    ffmpeg("-i", file, "-f", "rawvideo", "-pix_fmt", pix_fmt, path(out))
    with open(path(out), "rb") as f:
        return f.read()


def export_raw(src, flags, pix_fmt, name):
    """`histeq export --codec rawvideo` of `src` with `flags`, as raw `pix_fmt` bytes."""
    out = path(name + ".nut")
    r = run([HISTEQ, "export", src, "-o", out, "-y", "--codec", "rawvideo", "--progress", "none"] + flags)
    assert r.returncode == 0, "histeq export failed: " + r.stderr
    return raw_of(out, pix_fmt, name + ".yuv")


def first_difference(a, b, frame_bytes):
    """'' when equal, else which frame differs first and where."""
    if a == b:
        return ""
    if len(a) != len(b):
        return f"sizes differ: {len(a)} vs {len(b)} bytes ({len(a) / frame_bytes:g} vs {len(b) / frame_bytes:g} frames)"
    i = next(k for k in range(len(a)) if a[k] != b[k])
    return f"first difference in frame {i // frame_bytes}, byte {i % frame_bytes}"


def frame_bytes(depth):
    return W * H * 3 // 2 * (2 if depth > 8 else 1)


# ---- gst-inspect and plain runs ------------------------------------------------------------------

def control_names():
    r = run([HISTEQ, "controls", "--markdown"])
    assert r.returncode == 0, r.stderr
    names = re.findall(r"^\| `--([a-z-]+)`", r.stdout, re.M)
    assert len(names) >= 8, "histeq controls --markdown lists too few controls:\n" + r.stdout
    return names + ["kernel", "strength"]


def case_inspect_lists_every_control():
    r = run(["gst-inspect-1.0", "histeq"])
    assert r.returncode == 0, "gst-inspect-1.0 histeq failed: " + r.stderr
    props = r.stdout.split("Element Properties:")[1]
    for name in control_names():
        m = re.search(r"^  " + re.escape(name) + r"\s+: (.+)\n\s+flags: ([^\n]+)", props, re.M)
        assert m, f"gst-inspect-1.0 histeq does not document the property {name}:\n{props}"
        assert len(m.group(1)) > 10, f"{name}: no help text"
        assert "PLAYING" in m.group(2), f"{name} cannot be changed while playing: {m.group(2)}"
    for caps in ("video/x-raw(memory:CUDAMemory)", "I420_10LE", "P010_10LE", "NV12", "GRAY8"):
        assert caps in r.stdout, "the pad templates lack " + caps


def case_videotestsrc_120_buffers():
    gst_launch("videotestsrc num-buffers=120 ! histeq ! fakesink")


def case_every_format_and_setting_runs():
    for fmt in ("GRAY8", "I420", "NV12", "I420_10LE", "P010_10LE"):
        for props in ("", "mode=clahe tiles=4x3 clip-limit=2", "temporal=0 chroma=keep denoise=3 strength=0.5"):
            gst_launch(f"videotestsrc num-buffers=12 pattern=ball ! video/x-raw,format={fmt},width=97,height=61 ! histeq {props} ! fakesink")


def case_bad_settings_fail_in_one_line():
    # A value the control refuses before the stream starts fails the stream, naming it.
    r = run(["gst-launch-1.0", "-q", "videotestsrc", "num-buffers=3", "!", "histeq", "tiles=40x2", "!", "fakesink"])
    assert r.returncode != 0 and re.search(r"ERROR: from element .*histeq.*tiles must be 1..32", r.stdout + r.stderr), \
        "tiles=40x2 was not refused: " + r.stdout + r.stderr
    # ... unless a good value replaced it.
    gst_launch("videotestsrc num-buffers=3 ! histeq tiles=40x2 tiles=4x4 ! fakesink")
    if not os.path.exists("/dev/nvidia0"):
        r = run(["gst-launch-1.0", "-q", "videotestsrc", "num-buffers=3", "!", "histeq", "kernel=cub", "backend=cpu", "!", "fakesink"])
        assert r.returncode != 0, "kernel cub on the CPU backend ran"
        lines = [l for l in (r.stdout + r.stderr).splitlines() if "cub" in l]
        assert lines, "no line names the kernel: " + r.stdout + r.stderr


def case_bad_caps_are_refused():
    r = run(["gst-launch-1.0", "-q", "videotestsrc", "num-buffers=3", "!", "video/x-raw,format=RGB", "!", "histeq", "!", "fakesink"])
    assert r.returncode != 0, "RGB was accepted"
    assert "could not link" in (r.stdout + r.stderr).lower(), r.stdout + r.stderr


# ---- bit-identical to histeq export --------------------------------------------------------------

def identical(flags, props, pix_fmt="yuv420p", caps="", back="", encode=False, extra=()):
    """The element's frames of a clip (decodebin ! [caps] ! histeq props ! [back] ! raw file) equal
    `histeq export` of the clip with `flags`, and differ from the input."""
    depth = 10 if "10" in pix_fmt else 8
    src = clip("in.mp4", pix_fmt, extra)
    branch = "tee name=t t. ! queue ! x264enc ! mp4mux ! filesink location=" + path("gst.mp4") + \
             " t. ! queue max-size-buffers=0 max-size-time=0 max-size-bytes=0 ! " if encode else ""
    gst_launch(f"filesrc location={src} ! decodebin ! {caps} histeq {props} ! {back} {branch} filesink location={path('gst.yuv')}")
    with open(path("gst.yuv"), "rb") as f:
        got = f.read()
    want = export_raw(src, flags, pix_fmt, "ref")
    diff = first_difference(got, want, frame_bytes(depth))
    assert not diff, f"histeq {props} differs from histeq export {' '.join(flags)}: {diff}"
    assert got != raw_of(src, pix_fmt, "src.yuv"), "the element left the frames as they were"
    if encode:
        r = run(["ffprobe", "-v", "error", "-count_frames", "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", path("gst.mp4")])
        assert r.stdout.strip() == str(FRAMES), f"the encoded MP4 has {r.stdout.strip()} frames, not {FRAMES}: {r.stderr}"


def case_export_identical_defaults_through_x264enc_mp4mux():
    identical([], "", encode=True)


def case_export_identical_plain():
    identical(["--plain"], "mode=global clip-limit=0 temporal=0 chroma=keep")


def case_export_identical_clahe():
    identical(["--mode", "clahe", "--tiles", "4x3", "--clip-limit", "2.5", "--chroma-limit", "1.5"],
              "mode=clahe tiles=4x3 clip-limit=2.5 chroma-limit=1.5")


def case_export_identical_nv12():
    identical(["--mode", "clahe"], "mode=clahe", caps="videoconvert ! video/x-raw,format=NV12 !",
              back="videoconvert ! video/x-raw,format=I420 !")


def case_export_identical_10bit_i420_10le():
    identical([], "", pix_fmt="yuv420p10le", caps="video/x-raw,format=I420_10LE !")


def case_export_identical_10bit_p010_clahe():
    identical(["--mode", "clahe", "--temporal", "1"], "mode=clahe temporal=1", pix_fmt="yuv420p10le",
              caps="videoconvert dither=none ! video/x-raw,format=P010_10LE !",
              back="videoconvert dither=none ! video/x-raw,format=I420_10LE !")


def case_export_identical_full_range():
    # The frame's colorimetry range (0-255 here) is the image's range tag, as FFmpeg's pc tag for export.
    identical([], "", extra=("-color_range", "pc"))


# ---- CUDA memory (skipped without nvcodec's elements and a GPU) ----------------------------------

def need_cuda_elements(*names):
    for n in names:
        if run(["gst-inspect-1.0", n]).returncode != 0:
            raise Skip(f"no {n} here (GStreamer's nvcodec needs an NVIDIA GPU and driver)")


def raw_md5(pipeline):
    """The frames of `pipeline` (ending in raw video) as I420/I420_10LE bytes in a file: its content."""
    gst_launch(pipeline + " ! filesink location=" + path("md5.yuv"))
    with open(path("md5.yuv"), "rb") as f:
        return f.read()


def case_cuda_memory_frames_equal_system_memory():
    need_cuda_elements("cudaupload", "cudadownload")
    for fmt in ("I420", "NV12", "I420_10LE", "P010_10LE"):
        src = f"videotestsrc num-buffers=20 pattern=ball ! video/x-raw,format={fmt},width=640,height=360"
        for props in ("", "mode=clahe"):
            on_gpu = raw_md5(f"{src} ! cudaupload ! histeq {props} ! cudadownload")
            on_host = raw_md5(f"{src} ! histeq {props}")
            assert on_gpu == on_host, f"{fmt} {props}: CUDA memory frames differ from system memory frames"


def case_nvh264dec_cuda_memory_identical_to_export():
    need_cuda_elements("nvh264dec", "cudadownload")
    src = clip("in.mp4")
    got = raw_md5(f"filesrc location={src} ! parsebin ! nvh264dec ! video/x-raw(memory:CUDAMemory) ! histeq ! "
                  "cudadownload ! videoconvert ! video/x-raw,format=I420")
    diff = first_difference(got, export_raw(src, [], "yuv420p", "ref"), frame_bytes(8))
    assert not diff, "nvh264dec ! histeq on CUDA memory differs from histeq export: " + diff


# ---- while playing: property changes and seeks (python3-gi) --------------------------------------

def gst_modules():
    try:
        import gi
        gi.require_version("Gst", "1.0")
        gi.require_version("GstApp", "1.0")
        from gi.repository import Gst, GstApp  # noqa: F401
    except (ImportError, ValueError) as e:
        raise Skip(f"GStreamer's Python bindings (python3-gi) are missing: {e}")
    Gst.init(None)
    return Gst


def pull_frames(Gst, pipeline, sink, count=None):
    """Frames (bytes) from the appsink until EOS or `count` of them."""
    frames = []
    while count is None or len(frames) < count:
        sample = sink.emit("pull-sample")
        if sample is None:
            break
        buf = sample.get_buffer()
        ok, info = buf.map(Gst.MapFlags.READ)
        assert ok
        frames.append(bytes(info.data))
        buf.unmap(info)
    return frames


def play(Gst, src, props, on_buffer=None, seek_after=None, seek_to=0.0):
    """The frames of `src` through histeq `props` into an appsink; `on_buffer(element, n)` runs in
    the streaming thread before histeq sees buffer n; with `seek_after`, a flushing accurate seek
    to `seek_to` seconds after that many frames (the frames before it are returned apart)."""
    p = Gst.parse_launch(f"filesrc location={src} ! decodebin ! video/x-raw,format=I420 ! histeq name=h {props} ! "
                         "appsink name=s sync=false max-buffers=4")
    h, sink = p.get_by_name("h"), p.get_by_name("s")
    if on_buffer:
        counter = [0]

        def probe(pad, info):
            on_buffer(h, counter[0])
            counter[0] += 1
            return Gst.PadProbeReturn.OK
        h.get_static_pad("sink").add_probe(Gst.PadProbeType.BUFFER, probe)
    p.set_state(Gst.State.PLAYING)
    before = []
    if seek_after is not None:
        before = pull_frames(Gst, p, sink, seek_after)
        ok = p.seek_simple(Gst.Format.TIME, Gst.SeekFlags.FLUSH | Gst.SeekFlags.ACCURATE, int(seek_to * Gst.SECOND))
        assert ok, "the seek was refused"
    frames = pull_frames(Gst, p, sink)
    msg = p.get_bus().pop_filtered(Gst.MessageType.ERROR)
    p.set_state(Gst.State.NULL)
    assert msg is None, "the pipeline failed: " + str(msg.parse_error())
    return before, frames


def case_property_change_while_playing():
    Gst = gst_modules()
    src = clip("in.mp4")
    # temporal=0: every frame depends on its own picture and the settings only, so the frames of
    # one run that changes mode at frame 20 are those of a global run before it and of a CLAHE run after.
    _, global_run = play(Gst, src, "temporal=0")
    _, clahe_run = play(Gst, src, "temporal=0 mode=clahe")
    assert global_run[20] != clahe_run[20], "global and CLAHE give the same frame: the case cannot tell"

    def change(h, n):
        if n == 20:
            h.set_property("mode", "clahe")
            h.set_property("clip-limit", 0.5)  # refused (0 or 1..64): the old value stays
            assert h.get_property("clip-limit") == 1.1, "clip-limit 0.5 was taken"
        if n == 40:
            # A GPU kernel: taken on a GPU (the same frames), refused with a warning on the CPU
            # backend, where the frames go on as before; the pipeline never stops for it.
            h.set_property("kernel", "cub")
    _, changed = play(Gst, src, "temporal=0", on_buffer=change)
    assert len(changed) == FRAMES, f"{len(changed)} frames, not {FRAMES}"
    wrong = [n for n in range(FRAMES) if changed[n] != (global_run[n] if n < 20 else clahe_run[n])]
    assert not wrong, f"frames {wrong[:8]} are not those of the settings set before them (the change is at frame 20)"


def case_seek_resets_temporal_state():
    Gst = gst_modules()
    src = clip("in.mp4")
    start = 30
    before, after = play(Gst, src, "temporal=2", seek_after=20, seek_to=start / FPS)
    assert len(before) == 20 and len(after) == FRAMES - start, f"{len(before)} + {len(after)} frames"
    # A fresh start at that frame: histeq export --start, frame-exact.
    fresh = export_raw(src, ["--temporal", "2", "--start", f"{start / FPS:.6f}"], "yuv420p", "fresh")
    n = frame_bytes(8)
    diff = first_difference(b"".join(after), fresh, n)
    assert not diff, "the frames after the seek are not those of a fresh start there: " + diff
    _, continuous = play(Gst, src, "temporal=2")
    assert continuous[start] != after[0], "the temporal state makes no difference at that frame: the case cannot tell"


def case_install_puts_the_element_in_gstreamers_folder():
    if not BUILD_DIR:
        raise Skip("no build folder given")
    prefix = path("prefix")
    r = run(["cmake", "--install", BUILD_DIR, "--prefix", prefix])
    assert r.returncode == 0, "cmake --install failed: " + r.stdout + r.stderr
    r = run(["pkg-config", "--variable=pluginsdir", "gstreamer-1.0"])
    r2 = run(["pkg-config", "--variable=prefix", "gstreamer-1.0"])
    rel = os.path.relpath(r.stdout.strip(), r2.stdout.strip())
    plugin = os.path.join(prefix, rel, "libgsthisteq.so")
    assert os.path.isfile(plugin), f"cmake --install did not write {plugin}"
    libs = [os.path.dirname(os.path.join(d, f)) for d, _, fs in os.walk(prefix) for f in fs if f.startswith("libhisteq.so")]
    os.environ["LD_LIBRARY_PATH"] = ":".join(libs + [os.path.dirname(os.path.realpath(HISTEQ)) + "/../core"])
    os.environ["GST_PLUGIN_PATH"] = os.path.dirname(plugin)
    r = run(["gst-inspect-1.0", "histeq"])
    assert r.returncode == 0 and plugin in r.stdout, "gst-inspect-1.0 does not load the installed element: " + r.stdout + r.stderr


def case_qos_and_latency_pass():
    Gst = gst_modules()
    # A live source at 30 fps and a sink 60 ms late on each frame: the sink's QoS events reach
    # histeq, which drops the frames already late before equalizing them (and says so on the bus);
    # the latency query goes through it to the source.
    p = Gst.parse_launch("videotestsrc is-live=true num-buffers=60 ! video/x-raw,framerate=30/1,width=320,height=240 ! "
                         "histeq name=h ! identity sleep-time=60000 ! fakesink sync=true qos=true")
    p.set_state(Gst.State.PLAYING)
    bus, dropped, latency = p.get_bus(), 0, None
    kinds = Gst.MessageType.EOS | Gst.MessageType.ERROR | Gst.MessageType.QOS | Gst.MessageType.ASYNC_DONE
    while True:
        m = bus.timed_pop_filtered(20 * Gst.SECOND, kinds)
        if m is None or m.type in (Gst.MessageType.EOS, Gst.MessageType.ERROR):
            break
        if m.type == Gst.MessageType.ASYNC_DONE and latency is None:
            q = Gst.Query.new_latency()
            latency = q.parse_latency() if p.query(q) else False
        if m.type == Gst.MessageType.QOS and m.src.get_name() == "h":
            dropped = max(dropped, m.parse_qos_stats()[2])
    p.set_state(Gst.State.NULL)
    assert m is not None and m.type == Gst.MessageType.EOS, "the live pipeline did not end: " + str(m and m.type)
    assert latency, "the latency query failed through histeq"
    live, lo, _ = latency
    assert live and lo >= Gst.SECOND // 30, f"latency {latency}: the live source's frame is missing"
    assert dropped > 0, "histeq dropped no late frame (QoS)"


CASES = {name[5:]: fn for name, fn in sorted(globals().items()) if name.startswith("case_")}


def main():
    global HISTEQ, TMP, BUILD_DIR
    ap = argparse.ArgumentParser()
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--histeq")
    ap.add_argument("--plugin-dir", default="")
    ap.add_argument("--build-dir", default="")
    ap.add_argument("case", nargs="?")
    a = ap.parse_args()
    if a.list:
        print("\n".join(CASES))
        return 0
    for tool in ("gst-launch-1.0", "gst-inspect-1.0", "ffmpeg", "ffprobe"):
        if not shutil.which(tool):
            print(f"SKIP: {tool} is not installed")
            return SKIP
    if not a.plugin_dir or not os.path.isfile(os.path.join(a.plugin_dir, "libgsthisteq.so")):
        print("SKIP: the element was not built (HISTEQ_GSTREAMER off: GStreamer's development packages are missing)")
        return SKIP
    HISTEQ, BUILD_DIR = a.histeq, a.build_dir
    TMP = tempfile.mkdtemp(prefix="histeq-gst-")
    os.environ["GST_PLUGIN_PATH"] = a.plugin_dir
    # A registry of this run's own: the element is the one just built, never a stale cached one.
    os.environ["GST_REGISTRY"] = path("registry.bin")
    try:
        CASES[a.case]()
    except Skip as e:
        print("SKIP:", e)
        return SKIP
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
