#!/usr/bin/python3
"""Tests of the GStreamer element `histeq` (libgsthisteq.so, app/gstreamer/), run by CTest (one test
per case, label gstreamer) with the real gst-launch-1.0 / gst-inspect-1.0 and, for the cases that
drive a pipeline while it plays, GStreamer's Python bindings (python3-gi).

The frames the element writes are compared with `histeq export --codec rawvideo` of the same input
and settings: they must be bit-identical (defaults, plain, CLAHE; 8-bit I420, NV12, NV21, Y42B,
Y444, 10-bit I420_10LE, I422_10LE, Y444_10LE and P010_10LE; a full-range clip). The element is
also held to what its peers (videobalance, gamma) do: controllable numbers (GstController), an int
device, one refusal path (a bus warning, the old value kept), READY-only properties refused while
playing, enum values that say what they mean, a licence, numbers that ignore the locale.

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
    """A low-contrast moving clip (60 frames at 30 fps) made with the ffmpeg CLI: H.264 in MP4, or
    lossless FFV1 for a name ending in .mkv (the 4:2:2 and 4:4:4 layouts)."""
    out = path(name)
    codec = ["-c:v", "ffv1"] if name.endswith(".mkv") else ["-c:v", "libx264", "-preset", "ultrafast"]
    ffmpeg("-f", "lavfi", "-i", f"testsrc2=size={W}x{H}:rate={FPS}:duration={FRAMES / FPS},eq=contrast=0.4:brightness=-0.1",
           *codec, "-pix_fmt", pix_fmt, *extra, out)
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


def frame_bytes(pix_fmt):
    """Bytes of one W x H frame of an FFmpeg planar YUV pix_fmt (yuv420p, yuv422p10le, ...)."""
    chroma = {"420": W * H // 2, "422": W * H, "444": 2 * W * H}[re.search(r"4[24][024]", pix_fmt).group(0)]
    return (W * H + chroma) * (2 if "10" in pix_fmt else 1)


# ---- gst-inspect and plain runs ------------------------------------------------------------------

def control_names():
    r = run([HISTEQ, "controls", "--markdown"])
    assert r.returncode == 0, r.stderr
    names = re.findall(r"^\| `--([a-z-]+)`", r.stdout, re.M)
    assert len(names) >= 8, "histeq controls --markdown lists too few controls:\n" + r.stdout
    return names + ["kernel", "strength"]


def inspect():
    r = run(["gst-inspect-1.0", "histeq"])
    assert r.returncode == 0, "gst-inspect-1.0 histeq failed: " + r.stderr
    return r.stdout


def prop_block(text, name):
    """gst-inspect-1.0's lines of one property."""
    m = re.search(r"^  " + re.escape(name) + r"\s+: .*?(?=^  \S|\Z)", text.split("Element Properties:")[1], re.M | re.S)
    assert m, f"gst-inspect-1.0 histeq does not list the property {name}"
    return m.group(0)


def case_inspect_licence_mit():
    assert re.search(r"^\s+License\s+MIT/X11$", inspect(), re.M), "the plugin's licence is not MIT/X11:\n" + inspect()


def case_inspect_properties_as_peers():
    text = inspect()
    numbers = ("clip-limit", "temporal", "scene-cut", "chroma-limit", "denoise", "strength")
    for name in numbers:
        b = prop_block(text, name)
        assert "Double" in b and "controllable" in b, f"{name} is not a controllable double, as videobalance's are:\n{b}"
    device = prop_block(text, "device")
    assert re.search(r"Integer\. Range: -1 - \d+ Default: -1", device), "device is not an int with -1 = auto:\n" + device
    for name in ("device", "backend"):
        b = prop_block(text, name)
        assert "changeable only in NULL or READY state" in b and "controllable" not in b, b
    # Enum values: the nick the command line takes, and what it means.
    mode = prop_block(text, "mode")
    assert re.search(r"\(0\): global\s+- one curve a frame", mode) and re.search(r"\(1\): clahe\s+- a curve per tile", mode), mode
    for name in ("range", "chroma", "backend", "kernel"):
        values = re.findall(r"\(\d+\): (\S+)\s+- (.+)", prop_block(text, name))
        assert len(values) >= 2 and all(desc.strip() != nick for nick, desc in values), f"{name}'s values say nothing more than their nicks: {values}"


def case_inspect_lists_every_control():
    r = run(["gst-inspect-1.0", "histeq"])
    assert r.returncode == 0, "gst-inspect-1.0 histeq failed: " + r.stderr
    props = r.stdout.split("Element Properties:")[1]
    for name in control_names():
        m = re.search(r"^  " + re.escape(name) + r"\s+: (.+)\n\s+flags: ([^\n]+)", props, re.M)
        assert m, f"gst-inspect-1.0 histeq does not document the property {name}:\n{props}"
        assert len(m.group(1)) > 10, f"{name}: no help text"
        assert "PLAYING" in m.group(2), f"{name} cannot be changed while playing: {m.group(2)}"
    for caps in ("video/x-raw(memory:CUDAMemory)", "I420_10LE", "P010_10LE", "NV12", "GRAY8") + NEW_FORMATS:
        assert re.search(r"(?<![\w(])" + re.escape(caps) + r"(?!\w)", r.stdout), "the pad templates lack " + caps


def case_videotestsrc_120_buffers():
    gst_launch("videotestsrc num-buffers=120 ! histeq ! fakesink")


NEW_FORMATS = ("NV21", "Y42B", "Y444", "I422_10LE", "Y444_10LE")


def case_every_format_and_setting_runs():
    for fmt in ("GRAY8", "I420", "NV12", "I420_10LE", "P010_10LE") + NEW_FORMATS:
        for props in ("", "mode=clahe tiles=4x3 clip-limit=2", "temporal=0 chroma=keep denoise=3 strength=0.5"):
            gst_launch(f"videotestsrc num-buffers=12 pattern=ball ! video/x-raw,format={fmt},width=97,height=61 ! histeq {props} ! fakesink")


def case_bad_settings_warn_and_keep_the_old_value():
    # A value the control refuses: one warning on the bus, naming it and what stays; the stream runs
    # with the old value (the frames of the defaults), and GLib has nothing to say.
    def frames(props):
        out = path("refused.yuv")
        r = run(["gst-launch-1.0", "videotestsrc", "num-buffers=4", "pattern=ball", "!", "video/x-raw,width=160,height=120", "!",
                 "histeq", "mode=clahe", *props, "!", "filesink", "location=" + out])
        assert r.returncode == 0 and "ERROR" not in r.stdout + r.stderr, "the pipeline failed: " + r.stdout + r.stderr
        with open(out, "rb") as f:
            return f.read(), r.stdout + r.stderr
    refused, log = frames(["tiles=40x2"])
    warnings = [l for l in log.splitlines() if l.startswith("WARNING: from element") and "histeq" in l]
    assert len(warnings) == 1 and "tiles must be 1..32" in warnings[0] and "tiles stays 8x8" in warnings[0], log
    assert "GLib" not in log and "CRITICAL" not in log, "a GLib warning besides the bus's:\n" + log
    assert refused == frames([])[0], "the refused tiles changed the frames"
    assert refused == frames(["tiles=40x2", "tiles=8x8"])[0]
    if not os.path.exists("/dev/nvidia0"):
        r = run(["gst-launch-1.0", "-q", "videotestsrc", "num-buffers=3", "!", "histeq", "kernel=cub", "backend=cpu", "!", "fakesink"])
        assert r.returncode != 0, "kernel cub on the CPU backend ran"
        lines = [l for l in (r.stdout + r.stderr).splitlines() if "cub" in l]
        assert lines, "no line names the kernel: " + r.stdout + r.stderr


def case_old_control_name_warns_and_works():
    # A renamed control's old name (chroma-limit was limit): a deprecated property that sets the
    # control, with one warning on the bus saying what to use; the frames are the new name's.
    assert "deprecated" in prop_block(inspect(), "limit"), prop_block(inspect(), "limit")

    def frames(props):
        out = path("old_name.yuv")
        r = run(["gst-launch-1.0", "videotestsrc", "num-buffers=4", "pattern=smpte", "!", "video/x-raw,width=160,height=120", "!",
                 "histeq", "chroma=auto", "temporal=0", *props, "!", "filesink", "location=" + out])
        assert r.returncode == 0 and "ERROR" not in r.stdout + r.stderr, "the pipeline failed: " + r.stdout + r.stderr
        with open(out, "rb") as f:
            return f.read(), r.stdout + r.stderr
    old, log = frames(["limit=1.4", "limit=1.5"])  # warned once per element, not per setting
    warnings = [l for l in log.splitlines() if l.startswith("WARNING: from element") and "histeq" in l]
    assert len(warnings) == 1 and "'limit' is an old name of 'chroma-limit'" in warnings[0], log
    new, log_new = frames(["chroma-limit=1.5"])
    assert "WARNING" not in log_new, log_new
    assert old == new, "limit=1.5 and chroma-limit=1.5 gave different frames"
    assert old != frames(["chroma-limit=1.0"])[0], "the chroma limit changed nothing on this picture (the test says nothing)"


def case_bad_caps_are_refused():
    r = run(["gst-launch-1.0", "-q", "videotestsrc", "num-buffers=3", "!", "video/x-raw,format=RGB", "!", "histeq", "!", "fakesink"])
    assert r.returncode != 0, "RGB was accepted"
    assert "could not link" in (r.stdout + r.stderr).lower(), r.stdout + r.stderr


# ---- bit-identical to histeq export --------------------------------------------------------------

def identical(flags, props, pix_fmt="yuv420p", caps="", back="", encode=False, extra=(), container="mp4"):
    """The element's frames of a clip (decodebin ! [caps] ! histeq props ! [back] ! raw file) equal
    `histeq export` of the clip with `flags`, and differ from the input."""
    src = clip("in." + container, pix_fmt, extra)
    branch = "tee name=t t. ! queue ! x264enc ! mp4mux ! filesink location=" + path("gst.mp4") + \
             " t. ! queue max-size-buffers=0 max-size-time=0 max-size-bytes=0 ! " if encode else ""
    gst_launch(f"filesrc location={src} ! decodebin ! {caps} histeq {props} ! {back} {branch} filesink location={path('gst.yuv')}")
    with open(path("gst.yuv"), "rb") as f:
        got = f.read()
    want = export_raw(src, flags, pix_fmt, "ref")
    diff = first_difference(got, want, frame_bytes(pix_fmt))
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


def case_export_identical_nv21():
    # NV21 goes as NV12 (V before U: the chroma follow scales both alike).
    identical(["--mode", "clahe"], "mode=clahe", caps="videoconvert ! video/x-raw,format=NV21 !",
              back="videoconvert ! video/x-raw,format=I420 !")


def case_export_identical_422_and_444():
    # FFV1 clips in the layout itself: decodebin gives Y42B, Y444, I422_10LE and Y444_10LE.
    for pix_fmt, fmt in (("yuv422p", "Y42B"), ("yuv444p", "Y444"), ("yuv422p10le", "I422_10LE"), ("yuv444p10le", "Y444_10LE")):
        for flags, props in (([], ""), (["--mode", "clahe", "--tiles", "5x3"], "mode=clahe tiles=5x3")):
            identical(flags, props, pix_fmt=pix_fmt, caps=f"video/x-raw,format={fmt} !", container="mkv")


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
    # Those cudaupload takes (GStreamer 1.22's has no Y444_10LE).
    upload = run(["gst-inspect-1.0", "cudaupload"]).stdout
    for fmt in [f for f in ("I420", "NV12", "I420_10LE", "P010_10LE") + NEW_FORMATS if re.search(r"\b" + f + r"\b", upload)]:
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
    diff = first_difference(got, export_raw(src, [], "yuv420p", "ref"), frame_bytes("yuv420p"))
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
    n = frame_bytes("yuv420p")
    diff = first_difference(b"".join(after), fresh, n)
    assert not diff, "the frames after the seek are not those of a fresh start there: " + diff
    _, continuous = play(Gst, src, "temporal=2")
    assert continuous[start] != after[0], "the temporal state makes no difference at that frame: the case cannot tell"


def appsink_frames(Gst, description, setup=None):
    """The frames (bytes) of `description` ending in `histeq name=h ... ! appsink name=s`; setup(h)
    runs before it plays. Returns the frames and the bus's warnings from histeq."""
    p = Gst.parse_launch(description)
    h, sink = p.get_by_name("h"), p.get_by_name("s")
    if setup:
        setup(h)
    p.set_state(Gst.State.PLAYING)
    frames = pull_frames(Gst, p, sink)
    bus = p.get_bus()
    errors, warnings = [], []
    while (m := bus.pop_filtered(Gst.MessageType.ERROR | Gst.MessageType.WARNING)) is not None:
        (errors if m.type == Gst.MessageType.ERROR else warnings).append(str(m.parse_error()[0].message if m.type ==
                                                                          Gst.MessageType.ERROR else m.parse_warning()[0].message))
    p.set_state(Gst.State.NULL)
    assert not errors, "the pipeline failed: " + "; ".join(errors)
    return frames, warnings


def case_controller_drives_strength():
    Gst = gst_modules()
    try:
        import gi
        gi.require_version("GstController", "1.0")
        from gi.repository import GstController
    except (ImportError, ValueError) as e:
        raise Skip(f"GStreamer's controller bindings are missing: {e}")
    # temporal=0: each frame depends on its own picture and strength alone. A linear curve from 0 at
    # t = 0 to 1 at t = 2 s: frame n (t = n / 30 s) has strength n / 60.
    n_frames = 60
    src = (f"videotestsrc num-buffers={n_frames} pattern=ball ! video/x-raw,format=I420,width=160,height=120,framerate=30/1 ! "
           "histeq name=h temporal=0 mode=clahe {props} ! appsink name=s sync=false")

    def control(h):
        cs = GstController.InterpolationControlSource()
        cs.set_property("mode", GstController.InterpolationMode.LINEAR)
        assert cs.set(0, 0.0) and cs.set(2 * Gst.SECOND, 1.0)
        assert h.add_control_binding(GstController.DirectControlBinding.new_absolute(h, "strength", cs))
    driven, warnings = appsink_frames(Gst, src.format(props=""), control)
    assert len(driven) == n_frames and not warnings, (len(driven), warnings)
    checked = (0, 9, 20, 30, 45, 59)
    for n in checked:
        fixed, _ = appsink_frames(Gst, src.format(props=f"strength={n / 60!r}"))
        assert driven[n] == fixed[n], f"frame {n}: not the frame of strength {n / 60:.4f} (the controller's value there)"
    plain, _ = appsink_frames(Gst, src.format(props="strength=1"))
    assert driven[0] != plain[0] and driven[59] != driven[30], "the strength makes no difference: the case cannot tell"


def case_refused_while_playing_warns_and_reads_back_the_old_value():
    Gst = gst_modules()
    p = Gst.parse_launch("videotestsrc is-live=true ! video/x-raw,width=160,height=120,framerate=30/1 ! histeq name=h ! fakesink")
    h, bus = p.get_by_name("h"), p.get_bus()

    def warning_after(change):
        change()
        m = bus.timed_pop_filtered(5 * Gst.SECOND, Gst.MessageType.WARNING | Gst.MessageType.ERROR)
        assert m is not None and m.type == Gst.MessageType.WARNING, "no warning on the bus"
        return m.parse_warning()[0].message
    for state in (Gst.State.PAUSED, Gst.State.PLAYING):
        assert p.set_state(state) != Gst.StateChangeReturn.FAILURE
        p.get_state(5 * Gst.SECOND)
        # Out of the control's range: refused at once.
        old_clip = h.get_property("clip-limit")
        text = warning_after(lambda: h.set_property("clip-limit", 0.5))
        assert "clip limit" in text and f"clip-limit stays {old_clip:g}" in text, text
        assert h.get_property("clip-limit") == old_clip
        # READY-only: the backend and the device choose the equalizer.
        for name, value, old in (("backend", "cpu", "auto"), ("device", 3, -1)):
            text = warning_after(lambda: h.set_property(name, value))
            assert name in text and "READY" in text, text
            got = h.get_property(name)
            assert (got.value_nick if hasattr(got, "value_nick") else got) == old, f"{name} reads back {got} after the refusal"
        # Live values are taken.
        h.set_property("clip-limit", old_clip + 1)
        assert h.get_property("clip-limit") == old_clip + 1
    # A value the running equalizer refuses (a GPU kernel on the CPU): the same path, read back at
    # the next frame.
    if not os.path.exists("/dev/nvidia0"):
        text = warning_after(lambda: h.set_property("kernel", "cub"))
        assert "cub" in text and "kernel stays auto" in text, text
        assert h.get_property("kernel").value_nick == "auto"
    p.set_state(Gst.State.READY)
    p.get_state(5 * Gst.SECOND)
    h.set_property("backend", "cpu")
    h.set_property("device", 0)
    assert h.get_property("backend").value_nick == "cpu" and h.get_property("device") == 0
    h.set_property("device", -1)
    assert h.get_property("device") == -1
    assert bus.pop_filtered(Gst.MessageType.WARNING) is None, "READY took the backend and the device with a warning"
    p.set_state(Gst.State.NULL)


def case_refused_before_the_bus_warns_at_ready():
    Gst = gst_modules()
    h = Gst.ElementFactory.make("histeq", "h")
    h.set_property("scene-cut", 0.5)
    h.set_property("clip-limit", 0.5)  # no bus yet: the warning waits
    assert h.get_property("clip-limit") == 1.1 and h.get_property("scene-cut") == 0.5
    p = Gst.Pipeline.new("p")
    p.add(h)
    p.set_state(Gst.State.READY)
    m = p.get_bus().pop_filtered(Gst.MessageType.WARNING)
    p.set_state(Gst.State.NULL)
    assert m is not None and "clip-limit stays 1.1" in m.parse_warning()[0].message, "the refusal made before the bus was lost"


def decimal_comma_env():
    """An environment with a decimal-comma locale (de_DE.UTF-8) made here with localedef."""
    if not shutil.which("localedef"):
        raise Skip("localedef is missing (libc-bin)")
    loc = path("locales")
    os.makedirs(loc, exist_ok=True)
    r = run(["localedef", "-i", "de_DE", "-f", "UTF-8", os.path.join(loc, "de_DE.UTF-8")])
    if not os.path.isdir(os.path.join(loc, "de_DE.UTF-8")):
        raise Skip("localedef could not make de_DE.UTF-8 (the locales package's sources are missing): " + r.stderr)
    env = dict(os.environ, LOCPATH=loc, LC_ALL="de_DE.UTF-8", LANG="de_DE.UTF-8")
    r = subprocess.run([sys.executable, "-c", "import locale; locale.setlocale(locale.LC_ALL, ''); print(locale.localeconv()['decimal_point'])"],
                       env=env, capture_output=True, text=True)
    assert r.stdout.strip() == ",", "the locale made has no decimal comma: " + r.stdout + r.stderr
    return env


def case_decimal_comma_locale():
    env = decimal_comma_env()
    out = path("locale.yuv")

    def launch(environment):
        r = subprocess.run(["gst-launch-1.0", "videotestsrc", "num-buffers=4", "pattern=ball", "!", "video/x-raw,width=160,height=120",
                            "!", "histeq", "clip-limit=1.5", "chroma-limit=1.25", "strength=0.75", "!", "filesink", "location=" + out],
                           env=environment, capture_output=True, text=True, timeout=120)
        # gst-launch-1.0 speaks the locale's language: any message of the element names it.
        assert r.returncode == 0 and "GstHisteq:" not in r.stdout + r.stderr, \
            f"gst-launch-1.0 ! histeq clip-limit=1.5 under LC_ALL={environment.get('LC_ALL', '')}:\n{r.stdout}{r.stderr}"
        with open(out, "rb") as f:
            return f.read()
    assert launch(env) == launch(dict(os.environ, LC_ALL="C")), "the frames differ under de_DE.UTF-8"


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
