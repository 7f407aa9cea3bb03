#!/usr/bin/python3
"""End-to-end tests of `histeq play` and `histeq export`, run by CTest (one test per case).

Every case makes its own input with the ffmpeg CLI (small, in a fresh temporary folder) and runs
the histeq binary on it. Bad input must give ONE line "histeq: <file>: <cause>" on stderr, a
non-zero exit, no crash, no hang (every run has a timeout) and no output file.

  e2e.py --histeq build/app/histeq CASE     (exit 77 = skipped: no ffmpeg/numpy, or no GPU)
  e2e.py --list
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SKIP = 77
HISTEQ = None
TMP = None


class Skip(Exception):
    pass


def run(args, timeout=120, **kw):
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, **kw)


def histeq(*args, timeout=120):
    return run([HISTEQ] + [str(a) for a in args], timeout=timeout)


def ffmpeg(*args):
    r = run(["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y"] + [str(a) for a in args])
    assert r.returncode == 0, "ffmpeg failed: " + r.stderr
    return r


def path(name):
    return os.path.join(TMP, name)


def probe(file, entries, select=None, count=False):
    args = ["ffprobe", "-v", "error", "-of", "json", "-show_entries", entries]
    if select:
        args += ["-select_streams", select]
    if count:
        args += ["-count_packets"]
    r = run(args + [file])
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def streams(file):
    return probe(file, "stream=index,codec_type,codec_name,width,height,pix_fmt,r_frame_rate,avg_frame_rate,"
                       "color_range,color_space,color_primaries,color_transfer,nb_read_packets:stream_side_data",
                 count=True)["streams"]


def video_frames(file):
    return int(probe(file, "stream=nb_read_packets", select="v:0", count=True)["streams"][0]["nb_read_packets"])


def frame_md5s(file, stream="v:0"):
    r = run(["ffmpeg", "-nostdin", "-v", "error", "-i", file, "-map", "0:" + stream, "-f", "framemd5", "-"])
    assert r.returncode == 0, r.stderr
    return [l.split(",")[-1].strip() for l in r.stdout.splitlines() if l and not l.startswith("#")]


def packet_md5(file, stream):
    r = run(["ffmpeg", "-nostdin", "-v", "error", "-i", file, "-map", "0:" + stream, "-c", "copy", "-f", "md5", "-"])
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def luma_ks(file, width, height):
    """Kolmogorov-Smirnov distance between the luma histogram and the uniform one (0 = flat)."""
    import numpy as np
    r = subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-i", file, "-f", "rawvideo", "-pix_fmt", "gray", "-"],
                       capture_output=True, timeout=120)
    assert r.returncode == 0
    y = np.frombuffer(r.stdout, dtype=np.uint8)
    h = np.bincount(y, minlength=256).astype(np.float64)
    cdf = np.cumsum(h) / h.sum()
    return float(np.max(np.abs(cdf - (np.arange(256) + 1) / 256.0)))


def low_contrast_clip(name, size="320x180", rate=30, seconds=2, audio=True, extra=(), codec=("-c:v", "libx264", "-preset", "ultrafast")):
    out = path(name)
    args = ["-f", "lavfi", "-i", f"testsrc2=s={size}:r={rate}:d={seconds},eq=contrast=0.35:brightness=-0.1"]
    if audio:
        args += ["-f", "lavfi", "-i", f"sine=f=440:d={seconds}", "-c:a", "aac"]
    ffmpeg(*args, *codec, "-pix_fmt", "yuv420p", *extra, out)
    return out


def one_line_error(r, file, *words):
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert r.returncode not in (0, None) and r.returncode > 0, f"exit {r.returncode}, want a failure; stderr: {r.stderr}"
    assert len(lines) == 1, f"want one line, got {lines}"
    assert lines[0].startswith(f"histeq: {file}: "), lines[0]
    for w in words:
        assert w in lines[0], f"'{w}' not in '{lines[0]}'"
    return lines[0]


def no_output_left(out):
    folder = os.path.dirname(out) or "."
    assert not os.path.exists(out), out + " exists"
    if os.path.isdir(folder):
        left = [f for f in os.listdir(folder) if f.startswith("." + os.path.basename(out) + ".")]
        assert not left, f"temporary files left: {left}"


def bad_input(file, *words):
    out = path("out.mp4")
    r = histeq("export", file, "-o", out)
    line = one_line_error(r, file, *words)
    no_output_left(out)
    r = histeq("play", "--headless", "--max-speed", file)
    one_line_error(r, file, *words)
    return line


# --- bad input -----------------------------------------------------------------------------------

def case_missing_file():
    bad_input(path("nope.mp4"), "no such file")


def case_empty_file():
    f = path("empty.mp4")
    open(f, "wb").close()
    bad_input(f, "empty")


def case_truncated_file():
    clip = low_contrast_clip("whole.mp4")
    data = open(clip, "rb").read()
    f = path("cut.mp4")  # moov atom at the end: the index is lost
    open(f, "wb").write(data[: len(data) // 2])
    bad_input(f, "truncated")
    fs = low_contrast_clip("whole_fs.mp4", extra=("-movflags", "+faststart"))
    data = open(fs, "rb").read()
    f = path("cut_faststart.mp4")  # index first: the data ends early
    open(f, "wb").write(data[: len(data) // 2])
    bad_input(f, "truncated")


def case_truncated_inside_the_header():
    # An MP4 with its index first (+faststart) cut inside that index: FFmpeg's "End of file (error
    # reading header)" was the whole message.
    fs = low_contrast_clip("whole_fs.mp4", extra=("-movflags", "+faststart"))
    data = open(fs, "rb").read()
    moov = data.index(b"moov") - 4
    f = path("cut_in_moov.mp4")
    said = set()
    for cut in range(moov + 200, moov + int.from_bytes(data[moov:moov + 4], "big"), 400):
        open(f, "wb").write(data[:cut])
        line = bad_input(f, "MP4/MOV file", "index (moov atom)")
        assert "End of file" not in line and "error reading header" not in line.split("(")[0], line
        said.add(line.split(": ", 2)[2])
    assert said == {"truncated MP4/MOV file: it ends inside its index (moov atom)"}, said  # whatever part of it is left


def case_cpu_denoiser_reads_no_uninitialised_memory():
    # The denoiser's first frame starts over (the state is multiplied by 0), but its state was
    # never initialised: valgrind then reported every frame after it as uninitialised (the
    # histogram indexed by it), hiding real reports. A small clip through the CPU path, --denoise on.
    if shutil.which("valgrind") is None:
        raise Skip("no valgrind (scripts/setup.sh installs it)")
    clip = path("tiny.mkv")
    ffmpeg("-f", "lavfi", "-i", "testsrc2=s=64x48:r=10:d=0.5", "-c:v", "ffv1", clip)
    out = path("tiny_eq.mkv")
    r = run(["valgrind", "--error-exitcode=99", "-q", HISTEQ, "export", clip, "-o", out, "--cpu", "--denoise", "3", "-c", "ffv1",
             "--progress", "none"], timeout=170)
    assert r.returncode == 0, (r.returncode, r.stderr[-3000:])
    assert video_frames(out) == 5


def case_random_bytes():
    import random
    rng = random.Random(1234)
    f = path("noise.mp4")
    open(f, "wb").write(bytes(rng.getrandbits(8) for _ in range(300000)))
    bad_input(f)
    f = path("noise.bin")
    open(f, "wb").write(bytes(rng.getrandbits(8) for _ in range(300000)))
    bad_input(f)


def case_text_named_mp4():
    f = path("notes.mp4")
    open(f, "w").write("These are my holiday notes, not a video.\n" * 50)
    bad_input(f, "not a video file")


def case_no_video_stream():
    f = path("audio.m4a")
    ffmpeg("-f", "lavfi", "-i", "sine=d=1", "-c:a", "aac", f)
    bad_input(f, "no video stream", "audio")


def case_unsupported_codec():
    avi = path("mpeg4.avi")
    ffmpeg("-f", "lavfi", "-i", "testsrc2=s=64x48:d=0.5", "-c:v", "mpeg4", avi)
    data = open(avi, "rb").read()
    assert data.count(b"FMP4") >= 1
    f = path("unknown.avi")  # a fourcc no decoder knows
    open(f, "wb").write(data.replace(b"FMP4", b"ZZZZ"))
    bad_input(f, "unsupported video codec", "ZZZZ")


def case_unwritable_output():
    clip = low_contrast_clip("in.mp4", seconds=1)
    for out in [path("no/such/folder/out.mp4"), os.path.join(clip, "out.mp4")]:
        r = histeq("export", clip, "-o", out)
        one_line_error(r, out, "cannot write")
        no_output_left(out)
    r = histeq("export", clip, "-o", TMP)
    one_line_error(r, TMP, "folder")
    if os.geteuid() != 0:  # root writes anywhere
        ro = path("readonly")
        os.mkdir(ro, 0o555)
        r = histeq("export", clip, "-o", os.path.join(ro, "out.mp4"))
        one_line_error(r, os.path.join(ro, "out.mp4"), "cannot write")
    r = histeq("export", clip, "-o", clip, "-y")
    one_line_error(r, clip, "input")
    out = path("exists.mp4")
    open(out, "w").write("keep me")
    r = histeq("export", clip, "-o", out)
    one_line_error(r, out, "exists")
    assert open(out).read() == "keep me"


def case_corrupt_packets():
    ts = low_contrast_clip("clean.ts", size="320x240", seconds=4, audio=False, extra=("-f", "mpegts"))
    data = bytearray(open(ts, "rb").read())
    n = len(data)
    for k in range(5):  # five damaged stretches in the middle
        p = int(n * (0.3 + 0.1 * k))
        for i in range(p, p + 1500):
            data[i] = (i * 131 + 7) & 0xFF
    bad = path("damaged.ts")
    open(bad, "wb").write(bytes(data))
    out = path("fixed.mp4")
    r = histeq("export", bad, "-o", out, "--progress", "json")
    assert r.returncode == 0, r.stderr
    m = re.search(r"(\d+) corrupt packets skipped, (\d+) damaged frames kept", r.stderr)
    assert m and int(m.group(1)) + int(m.group(2)) > 0, r.stderr
    done = [json.loads(l) for l in r.stdout.splitlines() if '"done"' in l][0]
    assert done["corrupt_packets"] == int(m.group(1))
    assert done["frames_in"] == done["frames_out"] == video_frames(out), (done, video_frames(out))
    assert done["frames_out"] >= 100, done  # most of the 120 frames survive


# --- odd sizes: these must work ------------------------------------------------------------------

def odd_size(w, h):
    src = path(f"odd{w}x{h}.mkv")
    ffmpeg("-f", "lavfi", "-i", f"testsrc2=s=320x240:d=0.5,eq=contrast=0.4,scale={w}:{h}", "-c:v", "ffv1",
           "-pix_fmt", "yuv420p", src)
    s = streams(src)[0]
    assert (s["width"], s["height"]) == (w, h), s
    for out in (path(f"odd{w}x{h}.mp4"), path(f"odd{w}x{h}_out.mkv")):
        r = histeq("export", src, "-o", out)
        assert r.returncode == 0, r.stderr
        o = streams(out)[0]
        assert (o["width"], o["height"]) == (w, h), o
        assert video_frames(out) == video_frames(src)
        if out.endswith(".mp4") and (w % 2 or h % 2):
            assert "4:4:4" in r.stderr and o["pix_fmt"] == "yuv444p", (r.stderr, o)
    r = histeq("play", "--headless", "--max-speed", src)
    assert r.returncode == 0, r.stderr


def case_odd_size_1921x1081():
    odd_size(1921, 1081)


def case_size_1x1():
    odd_size(1, 1)


# --- end to end ----------------------------------------------------------------------------------

def case_frames_audio_and_flatness():
    clip = low_contrast_clip("talk.mp4", size="640x360", seconds=3)
    out = path("talk_eq.mp4")
    r = histeq("export", clip, "-o", out, "--progress", "plain", "--plain")  # plain equalization flattens
    assert r.returncode == 0, r.stderr
    assert "frame " in r.stderr and "fps" in r.stderr and "ETA" in r.stderr, r.stderr
    assert video_frames(out) == video_frames(clip) == 90
    ins, outs = streams(clip), streams(out)
    assert [s["codec_type"] for s in outs] == ["video", "audio"], outs
    assert outs[1]["nb_read_packets"] == ins[1]["nb_read_packets"]
    assert packet_md5(clip, "a:0") == packet_md5(out, "a:0"), "audio packets changed"
    before, after = luma_ks(clip, 640, 360), luma_ks(out, 640, 360)
    assert after < before / 2, (before, after)


def case_joined_ts_parts():
    # A regression: `cat a.ts a.ts` restarts the timestamps half-way; the copied audio went back in time
    # and the muxer refused it ("non monotonically increasing dts"), exit 1.
    part = low_contrast_clip("part.ts", size="320x240", seconds=3, extra=("-g", "30", "-f", "mpegts"))
    joined = path("joined.ts")
    with open(joined, "wb") as f, open(part, "rb") as a:
        data = a.read()
        f.write(data + data)
    out = path("joined_eq.mkv")
    r = histeq("export", joined, "-o", out, "--progress", "plain")
    assert r.returncode == 0, r.stderr
    for done, total in re.findall(r"frame (\d+)/(\d+)", r.stderr):  # the container's estimate is 90: never "107/90"
        assert int(done) <= int(total), r.stderr
    assert video_frames(out) == 2 * video_frames(part), (video_frames(out), video_frames(part))
    ins, outs = streams(part), streams(out)
    assert int(outs[1]["nb_read_packets"]) == 2 * int(ins[1]["nb_read_packets"]), (outs, ins)
    def times(sel, key):
        pk = probe(out, "packet=pts_time,dts_time", select=sel)["packets"]
        return [float(p[key]) for p in pk if p.get(key) not in (None, "N/A")]
    adts, vpts = times("a:0", "dts_time"), sorted(times("v:0", "pts_time"))
    assert all(b > a for a, b in zip(adts, adts[1:])), "audio decode times go back"
    assert all(0 < b - a < 0.05 for a, b in zip(vpts, vpts[1:])), "video times jump"
    # The second part follows the first, audio and video together (within two audio frames).
    assert 5.8 < vpts[-1] - vpts[0] < 6.1, (vpts[0], vpts[-1])
    assert abs((adts[-1] - adts[0]) - (vpts[-1] - vpts[0])) < 0.1, (adts[0], adts[-1], vpts[0], vpts[-1])


def case_timing_colour_rotation_kept():
    clip = low_contrast_clip("tagged.mp4", rate="30000/1001", seconds=2, extra=(
        "-color_primaries", "bt709", "-color_trc", "bt709", "-colorspace", "bt709", "-color_range", "tv"))
    data = bytearray(open(clip, "rb").read())
    # Rotate the video track by 90 degrees: its tkhd matrix becomes [0 1 0; -1 0 0; 0 0 1].
    t = data.find(b"tkhd")
    ident = bytes.fromhex("00010000" "00000000" "00000000" "00000000" "00010000" "00000000" "00000000" "00000000" "40000000")
    at = data.find(ident, t)
    assert t > 0 and 0 < at - t < 100
    data[at:at + 36] = bytes.fromhex("00000000" "00010000" "00000000" "FFFF0000" "00000000" "00000000" "00000000" "00000000" "40000000")
    rot = path("rotated.mp4")
    open(rot, "wb").write(bytes(data))
    rotation = lambda f: [sd.get("rotation") for sd in streams(f)[0].get("side_data_list", [])]
    assert rotation(rot) and rotation(rot)[0] in (90, -90), rotation(rot)
    out = path("rotated_eq.mp4")
    r = histeq("export", rot, "-o", out)
    assert r.returncode == 0, r.stderr
    a, b = streams(rot)[0], streams(out)[0]
    for k in ("r_frame_rate", "avg_frame_rate", "color_range", "color_space", "color_primaries", "color_transfer"):
        assert a.get(k) == b.get(k), (k, a.get(k), b.get(k))
    assert rotation(out) == rotation(rot)
    pts = lambda f: [round(float(p["pts_time"]), 3) for p in
                     probe(f, "packet=pts_time", select="v:0").get("packets", [])]
    assert sorted(pts(rot)) == sorted(pts(out)), "timestamps changed"


def case_subtitles_kept():
    srt = path("subs.srt")
    open(srt, "w").write("1\n00:00:00,000 --> 00:00:01,000\nhello\n\n2\n00:00:01,000 --> 00:00:02,000\nworld\n")
    clip = path("subs.mkv")
    ffmpeg("-f", "lavfi", "-i", "testsrc2=s=160x120:d=2,eq=contrast=0.4", "-f", "lavfi", "-i", "sine=d=2", "-i", srt,
           "-map", "0", "-map", "1", "-map", "2", "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "libopus", "-c:s", "srt", clip)
    out = path("subs_eq.mkv")
    r = histeq("export", clip, "-o", out)
    assert r.returncode == 0, r.stderr
    assert [s["codec_type"] for s in streams(out)] == ["video", "audio", "subtitle"], streams(out)
    for st in ("a:0", "s:0"):
        assert packet_md5(clip, st) == packet_md5(out, st), st
    # MP4 cannot hold SubRip: the export says so in a note and keeps the rest.
    out = path("subs_eq.mp4")
    r = histeq("export", clip, "-o", out)
    assert r.returncode == 0 and "not copied" in r.stderr, r.stderr


def case_ten_bit():
    src = path("ten.mkv")
    ffmpeg("-f", "lavfi", "-i", "testsrc2=s=320x180:d=1,eq=contrast=0.35", "-c:v", "ffv1", "-pix_fmt", "yuv420p10le", src)
    out = path("ten_eq.mkv")
    r = histeq("export", src, "-o", out)
    assert r.returncode == 0, r.stderr
    assert streams(out)[0]["pix_fmt"] == "yuv420p10le", streams(out)[0]
    assert video_frames(out) == video_frames(src)
    r = histeq("play", "--headless", "--max-speed", src, "--stats-json", path("ten.json"))
    assert r.returncode == 0, r.stderr
    assert json.load(open(path("ten.json")))["equalizer"]["bins"] == 1024


def case_strength_zero_is_lossless_identity():
    src = path("plain.mkv")
    ffmpeg("-f", "lavfi", "-i", "testsrc2=s=176x144:d=1", "-c:v", "ffv1", "-pix_fmt", "yuv420p", src)
    out = path("same.mkv")
    r = histeq("export", src, "-o", out, "--codec", "ffv1", "--strength", "0")
    assert r.returncode == 0, r.stderr
    assert frame_md5s(src) == frame_md5s(out)
    r = histeq("export", src, "-o", path("x.mkv"), "--strength", "1.5")
    assert r.returncode != 0 and "strength" in r.stderr


def case_old_control_name_warns_and_backend_is_cpus_long_form():
    src = path("old_name.mkv")
    ffmpeg("-f", "lavfi", "-i", "testsrc2=s=176x144:d=0.5", "-c:v", "ffv1", "-pix_fmt", "yuv420p", src)
    # chroma-limit's old name: the same frames as the new one, and one warning line on stderr.
    old, new = path("old.mkv"), path("new.mkv")
    r = histeq("export", src, "-o", old, "--codec", "ffv1", "--cpu", "--limit", "2")
    assert r.returncode == 0, r.stderr
    warnings = [l for l in r.stderr.splitlines() if "warning" in l]
    assert warnings == ["histeq: warning: --limit: 'limit' is an old name of 'chroma-limit' and will go: use 'chroma-limit'"], r.stderr
    r = histeq("export", src, "-o", new, "--codec", "ffv1", "--backend", "cpu", "--chroma-limit", "2")
    assert r.returncode == 0, r.stderr
    assert "warning" not in r.stderr, r.stderr
    assert frame_md5s(old) == frame_md5s(new)
    r = histeq("export", src, "-o", path("both.mkv"), "--cpu", "--backend", "cpu")
    assert r.returncode != 0 and "excludes" in r.stderr, r.stderr


def case_progress_json():
    clip = low_contrast_clip("p.mp4", seconds=2)
    r = histeq("export", clip, "-o", path("p_eq.mp4"), "--progress", "json")
    assert r.returncode == 0, r.stderr
    events = [json.loads(l) for l in r.stdout.splitlines()]
    assert events[0]["event"] == "start" and events[-1]["event"] == "done", events
    assert events[-1]["frames_in"] == events[-1]["frames_out"] == 60
    r = histeq("export", path("missing.mp4"), "-o", path("q.mp4"), "--progress", "json")
    assert r.returncode == 1 and json.loads(r.stdout.splitlines()[-1])["event"] == "error"


def interrupted(args, after_s):
    """Runs histeq with `args`, sends SIGINT after `after_s` seconds; its stderr once it is done."""
    p = subprocess.Popen([HISTEQ] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(after_s)
    assert p.poll() is None, "finished before the signal: make the input longer"
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130, (p.returncode, err)
    return err


def case_sigint_leaves_nothing():
    clip = low_contrast_clip("long.mp4", size="1280x720", seconds=8, audio=True)
    out = path("long_eq.mp4")
    err = interrupted(["export", clip, "-o", out, "--preset", "veryslow", "--progress", "plain"], 1.5)
    assert "interrupted" in err.splitlines()[-1], err
    no_output_left(out)
    # A second Ctrl-C does not wait for the clean stop, and still leaves nothing behind.
    p = subprocess.Popen([HISTEQ, "export", clip, "-o", out, "--preset", "veryslow", "--progress", "none"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)
    p.send_signal(signal.SIGINT)
    p.send_signal(signal.SIGINT)
    p.communicate(timeout=60)
    assert p.returncode in (130, -signal.SIGINT), p.returncode
    no_output_left(out)


def case_kernels_and_backends():
    clip = low_contrast_clip("k.mp4", seconds=1, audio=False)
    r = histeq("export", clip, "-o", path("k1.mkv"), "--kernel", "cpu_reference", "--codec", "ffv1")
    assert r.returncode == 0, r.stderr
    r = histeq("export", clip, "-o", path("k2.mkv"), "--cpu", "--codec", "ffv1")
    assert r.returncode == 0, r.stderr
    assert frame_md5s(path("k1.mkv")) == frame_md5s(path("k2.mkv")), "cpu_reference and cpu_parallel differ"
    r = histeq("export", clip, "-o", path("k3.mkv"), "--kernel", "no_such_kernel")
    assert r.returncode == 1 and "unknown kernel" in r.stderr and "method2" in r.stderr, r.stderr
    if not have_gpu():
        r = histeq("export", clip, "-o", path("k4.mkv"), "--kernel", "method2")
        assert r.returncode == 1 and "CUDA device" in r.stderr, r.stderr
    r = histeq("export", clip, "-o", path("k5.mkv"), "--codec", "no_such_codec")
    assert r.returncode == 1 and "no_such_codec" in r.stderr, r.stderr


def have_gpu():
    r = histeq("info")
    return r.returncode == 0 and not re.search(r"no (usable )?CUDA device", r.stdout + r.stderr)


def case_gpu_cpu_identical():
    if not have_gpu():
        raise Skip("no CUDA device")
    for pix in ("yuv420p", "yuv420p10le"):
        src = path(f"g_{pix}.mkv")
        ffmpeg("-f", "lavfi", "-i", "testsrc2=s=1921x1081:d=1,eq=contrast=0.4", "-c:v", "ffv1", "-pix_fmt", pix, src)
        a, b = path(f"cpu_{pix}.mkv"), path(f"gpu_{pix}.mkv")
        assert histeq("export", src, "-o", a, "--cpu", "--codec", "ffv1").returncode == 0
        r = histeq("export", src, "-o", b, "--codec", "ffv1", "--progress", "plain")
        assert r.returncode == 0 and "GPU" in r.stderr, r.stderr
        assert frame_md5s(a) == frame_md5s(b), pix


# --- picture quality (--mode, --clip-limit, --temporal, --chroma; histeq quality) -------------------

def yuv_frames(file, w, h, depth=8):
    """Every frame's planes (Y, U, V) as stored: 4:2:0, no range conversion."""
    import numpy as np
    pix = "yuv420p" if depth == 8 else "yuv420p10le"
    r = subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-i", file, "-f", "rawvideo", "-pix_fmt", pix, "-"],
                       capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr
    cw, ch = (w + 1) // 2, (h + 1) // 2
    a = np.frombuffer(r.stdout, dtype=np.uint8 if depth == 8 else np.uint16).reshape(-1, w * h + 2 * cw * ch)
    return (a[:, :w * h].reshape(-1, h, w), a[:, w * h:w * h + cw * ch].reshape(-1, ch, cw),
            a[:, w * h + cw * ch:].reshape(-1, ch, cw))


def plain_reference(y, depth=8):
    """The classic equalization of a luma plane (--plain --textbook): core/equalize/lut.h's integer
    formula with the textbook levels, cv2.equalizeHist's."""
    import numpy as np
    bins = 1 << depth
    h = np.bincount(y.ravel(), minlength=bins)[:bins].astype(np.int64)
    cdf = np.cumsum(h)
    n = int(cdf[-1])
    cmin = int(h[np.nonzero(h)[0][0]]) if n else 0
    if n <= cmin:
        return y.copy()
    num = (cdf - cmin) * (bins - 1)
    lut = np.where(cdf <= cmin, 0, (2 * num + (n - cmin)) // (2 * (n - cmin)))
    return lut[y].astype(y.dtype)


def limited_reference(y, depth=8):
    """--plain on limited-range video: lut.h's formula within 16..235 (x4 at 10 bits), written out
    from its definition: x = clamp(v), C(x) = N at white, cdf_min at the first counted level, the guard."""
    import numpy as np
    bins, lo, hi = 1 << depth, 16 << (depth - 8), 235 << (depth - 8)
    h = np.bincount(y.ravel(), minlength=bins)[:bins].astype(np.int64)
    cdf = np.cumsum(h)
    n = int(cdf[-1])
    x = np.clip(np.arange(bins), lo, hi)
    c = np.where(x >= hi, n, cdf[x])
    counted = np.nonzero(cdf[lo:hi] > 0)[0]
    cmin = int(cdf[lo + counted[0]]) if len(counted) else n
    if n <= cmin:
        return x[y].astype(y.dtype)
    e = np.where(c <= cmin, lo, lo + (2 * (c - cmin) * (hi - lo) + (n - cmin)) // (2 * (n - cmin)))
    inside = (x > lo) & (x < hi)
    e = np.where(inside, np.clip(e, lo + 1, hi - 1), e)
    return e[y].astype(y.dtype)


def lossless_clip(name, size="320x180", seconds=1, pix="yuv420p", vf="eq=contrast=0.35:brightness=-0.1"):
    out = path(name)
    ffmpeg("-f", "lavfi", "-i", f"testsrc2=s={size}:r=30:d={seconds},{vf}", "-c:v", "ffv1", "-pix_fmt", pix, out)
    return out


def case_plain_is_todays_equalization():
    import numpy as np
    src = lossless_clip("p.mkv")
    a, b = path("plain.mkv"), path("spelled.mkv")
    assert histeq("export", src, "-o", a, "--codec", "ffv1", "--plain", "--textbook").returncode == 0
    r = histeq("export", src, "-o", b, "--codec", "ffv1", "--mode", "global", "--temporal", "0", "--clip-limit", "0", "--chroma", "keep",
               "--textbook")
    assert r.returncode == 0, r.stderr
    assert frame_md5s(a) == frame_md5s(b)
    (yi, ui, vi), (yo, uo, vo) = yuv_frames(src, 320, 180), yuv_frames(a, 320, 180)
    assert len(yi) == len(yo) == 30
    for k in range(len(yi)):
        assert np.array_equal(yo[k], plain_reference(yi[k])), f"frame {k} is not today's equalization"
        assert np.array_equal(uo[k], ui[k]) and np.array_equal(vo[k], vi[k]), "plain changed the chroma"
    # Without --textbook, plain maps within the limited range of the (untagged) clip.
    lim = path("plain_limited.mkv")
    assert histeq("export", src, "-o", lim, "--codec", "ffv1", "--plain").returncode == 0
    yl, _, _ = yuv_frames(lim, 320, 180)
    for k in range(len(yi)):
        assert np.array_equal(yl[k], limited_reference(yi[k])), f"frame {k} is not plain within 16..235"
    assert yl.min() >= 16 and yl.max() <= 235, (yl.min(), yl.max())
    # The defaults are not plain: the clip limit keeps the stretch smaller, chroma follows.
    c = path("default.mkv")
    assert histeq("export", src, "-o", c, "--codec", "ffv1").returncode == 0
    yd, ud, _ = yuv_frames(c, 320, 180)
    assert not np.array_equal(yd, yo) and not np.array_equal(ud, ui)


def case_quality_options_bad_values():
    clip = low_contrast_clip("q.mp4", seconds=1, audio=False)
    out = path("q_eq.mp4")
    for args, word in [(["--clip-limit", "0.5"], "clip limit"), (["--tiles", "0x8"], "tiles"), (["--tiles", "8"], "tiles"),
                       (["--temporal", "-1"], "temporal"), (["--scene-cut", "2"], "scene-cut"), (["--chroma-limit", "9"], "chroma limit"),
                       (["--mode", "local"], "--mode"), (["--chroma", "vivid"], "--chroma"), (["--plain", "--mode", "clahe"], "--plain"),
                       (["--denoise", "50"], "denoise"), (["--plain", "--denoise", "0.1"], "denoise")]:
        for cmd in (["export", clip, "-o", out], ["play", "--headless", clip]):
            r = histeq(*cmd, *args)
            lines = [l for l in r.stderr.splitlines() if l.strip()]
            assert r.returncode != 0, (args, r.stderr)
            assert len(lines) == 1 and lines[0].startswith("histeq: ") and word in lines[0], (args, lines)
            no_output_left(out)


def case_clahe_matches_opencv():
    try:
        import cv2
    except ImportError:
        raise Skip("python3-opencv is not installed (scripts/setup.sh installs it)")
    import numpy as np
    # 640x480 in 8x8 or 4x4 tiles: whole tiles (tests/python/test_clahe_opencv.py has every size).
    src = lossless_clip("o.mkv", size="640x480", seconds=0.5, vf="eq=contrast=0.4:brightness=-0.2,noise=alls=6:allf=t")
    yi, _, _ = yuv_frames(src, 640, 480)
    for clip, tiles in [(2.0, (8, 8)), (4.0, (8, 8)), (2.0, (4, 4)), (0.0, (8, 8))]:
        out = path(f"clahe_{clip}_{tiles[0]}.mkv")
        r = histeq("export", src, "-o", out, "--codec", "ffv1", "--mode", "clahe", "--tiles", f"{tiles[0]}x{tiles[1]}",
                   "--clip-limit", str(clip), "--temporal", "0", "--chroma", "keep", "--textbook")
        assert r.returncode == 0, r.stderr
        yo, _, _ = yuv_frames(out, 640, 480)
        ref = cv2.createCLAHE(clipLimit=clip, tileGridSize=tiles)
        d = np.concatenate([np.abs(ref.apply(x).astype(int) - y.astype(int)).ravel() for x, y in zip(yi, yo)])
        # The tolerance (docs/quality.md): with the textbook levels the grid is OpenCV's; what is
        # left is rounding (histeq's weights in 1/1024 and LUTs rounded half up, against OpenCV's
        # float weights and LUT scale rounded to even).
        print(clip, tiles, "max", int(d.max()), "mean %.4f" % d.mean(), "within 1: %.5f" % (d <= 1).mean())
        # Unclipped tile LUTs differ more from tile to tile, and so does a weight's rounding.
        most = 1 if clip > 0 else 2
        assert d.max() <= most and d.mean() <= 0.05 and (d <= 1).mean() >= 0.999, (clip, tiles, int(d.max()), float(d.mean()))


def case_ten_bit_quality():
    import numpy as np
    src = lossless_clip("t10.mkv", pix="yuv420p10le")
    yi, ui, _ = yuv_frames(src, 320, 180, 10)
    for args in (["--mode", "clahe"], []):
        out = path("t10_" + ("clahe" if args else "default") + ".mkv")
        r = histeq("export", src, "-o", out, "--codec", "ffv1", *args)
        assert r.returncode == 0, r.stderr
        assert streams(out)[0]["pix_fmt"] == "yuv420p10le"
        yo, uo, _ = yuv_frames(out, 320, 180, 10)
        assert len(yo) == len(yi) == 30
        assert yo.max() <= 1023 and np.abs(yo.astype(int) - yi).mean() > 8, ("10-bit output not equalized", yo.std(), yi.std())
        assert not np.array_equal(uo, ui), "chroma auto changed no chroma"
    out = path("t10_plain.mkv")
    assert histeq("export", src, "-o", out, "--codec", "ffv1", "--plain", "--textbook").returncode == 0
    yo, _, _ = yuv_frames(out, 320, 180, 10)
    for k in range(len(yi)):
        assert np.array_equal(yo[k], plain_reference(yi[k], 10)), f"10-bit frame {k} is not today's equalization"
    out = path("t10_plain_limited.mkv")
    assert histeq("export", src, "-o", out, "--codec", "ffv1", "--plain").returncode == 0
    yo, _, _ = yuv_frames(out, 320, 180, 10)
    for k in range(len(yi)):
        assert np.array_equal(yo[k], limited_reference(yi[k], 10)), f"10-bit frame {k} is not plain within 64..940"


def case_scene_cut_adapts_at_once():
    import numpy as np
    # A bright shot, then a hard cut to a dark one at frame 30.
    clip = path("cut.mkv")
    ffmpeg("-f", "lavfi", "-i", "testsrc2=s=320x180:r=30:d=1,eq=brightness=0.25:contrast=0.6", "-f", "lavfi", "-i",
           "testsrc2=s=320x180:r=30:d=1,hue=s=0,eq=brightness=-0.35:contrast=0.25", "-filter_complex", "[0:v][1:v]concat=n=2:v=1[v]",
           "-map", "[v]", "-c:v", "ffv1", "-pix_fmt", "yuv420p", clip)
    a, b = path("cut_default.mkv"), path("cut_still.mkv")
    assert histeq("export", clip, "-o", a, "--codec", "ffv1").returncode == 0
    assert histeq("export", clip, "-o", b, "--codec", "ffv1", "--temporal", "0").returncode == 0
    ma = yuv_frames(a, 320, 180)[0].reshape(60, -1).mean(axis=1)
    mb = yuv_frames(b, 320, 180)[0].reshape(60, -1).mean(axis=1)
    # The filter starts over at the cut: the dark shot's exposure at once (the same frames as
    # without the filter, within 2 levels), not after the filter's half second.
    assert np.all(np.abs(ma[30:33] - mb[30:33]) <= 2.0), (ma[28:34], mb[28:34])
    # Within the shots the output's mean moves no faster than the input's (no added flicker), to
    # within what one LUT entry moves: testsrc2's flat areas put up to a fifth of a frame in one bin.
    mi = yuv_frames(clip, 320, 180)[0].reshape(60, -1).mean(axis=1)
    di, do = np.abs(np.diff(mi)), np.abs(np.diff(ma))
    keep = np.array([t + 1 != 30 for t in range(59)])
    assert np.all(do[keep] <= di[keep] + 0.25), (do[keep].max(), di[keep].max())
    mc = yuv_frames(b, 320, 180)[0].reshape(60, -1).mean(axis=1)
    assert np.abs(np.diff(mc))[keep].max() > do[keep].max(), "the filter changed nothing"


def case_modes_gpu_cpu_identical():
    if not have_gpu():
        raise Skip("no CUDA device")
    for pix in ("yuv420p", "yuv420p10le"):
        src = lossless_clip(f"m_{pix}.mkv", size="1921x1081", pix=pix)
        for args in (["--plain"], [], ["--mode", "clahe"], ["--mode", "clahe", "--tiles", "13x5", "--chroma", "keep"]):
            a, b = path("cpu.mkv"), path("gpu.mkv")
            assert histeq("export", src, "-o", a, "-y", "--cpu", "--codec", "ffv1", *args).returncode == 0
            r = histeq("export", src, "-o", b, "-y", "--codec", "ffv1", "--progress", "plain", *args)
            assert r.returncode == 0 and "GPU" in r.stderr, r.stderr
            assert frame_md5s(a) == frame_md5s(b), (pix, args)


def case_quality_command():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise Skip("no matplotlib (python3-matplotlib)")
    clip = lossless_clip("qc.mkv", seconds=1)
    with open(path("qc.json"), "w") as f:
        json.dump({"cuts": [15], "fade_frames": []}, f)
    out = path("qout")
    r = histeq("quality", clip, "-o", out, "--configs", "plain,default", "--peers", "none", "--stills", timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    rows = json.load(open(os.path.join(out, "quality.json")))["rows"]
    methods = {x["method"] for x in rows}
    assert {"input", "plain", "default", "default-t0"} <= methods, methods
    d = next(x for x in rows if x["method"] == "default")
    assert d["cut_lag_frames"] is not None and 0 <= d["cut_lag_frames"] <= 2, d
    for k in ("flicker_mean_p99_ratio", "colourfulness_ratio", "noise_ratio", "clipped_pct", "contrast_ratio", "ms_median",
              "crushed_pp", "crushed_pct", "crushed_in_pct", "shadow_detail_ratio"):
        assert isinstance(d[k], (int, float)), (k, d)
    assert d["shadow_detail_ratio"] > 0 and abs(d["crushed_pp"] - (d["crushed_pct"] - d["crushed_in_pct"])) < 1e-9, d
    assert os.path.getsize(os.path.join(out, "mean_luma.png")) > 1000
    assert os.path.getsize(os.path.join(out, "stills", "qc.png")) > 1000
    assert open(os.path.join(out, "quality.csv")).readline().startswith("clip,method,")
    r = histeq("quality", clip, "-o", out, "--configs", "nonsense")
    assert r.returncode == 2 and "nonsense" in r.stderr, r.stderr
    # The cost bench (CPU here): every mode, median and p99.
    js = path("bench.json")
    r = histeq("quality", "--bench", "--cpu", "--sizes", "320x180", "--runs", "12", "--json", js)
    assert r.returncode == 0, r.stderr
    res = json.load(open(js))["results"]
    assert [x["case"] for x in res] == ["plain", "global+all", "clahe 8x8", "clahe 8x8+all", "global+denoise"], res
    assert all(x["median_us"] > 0 and x["p99_us"] >= x["median_us"] for x in res)


def case_quality_short_clip_with_audio():
    # A 3-second clip with AAC audio crashed bench/quality.py (KeyError: 90). The export
    # (as ffmpeg's own remux) starts its video 23 ms in, behind the audio's priming samples, and a
    # constant-rate decode repeated a frame to fill the gap: an output one frame longer than its input.
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise Skip("no matplotlib (python3-matplotlib)")
    clip = low_contrast_clip("short.mp4", size="160x90", seconds=3, audio=True)
    out = path("qshort")
    r = histeq("quality", clip, "-o", out, "--configs", "default", "--peers", "none", timeout=170)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Traceback" not in r.stderr and "frames out of" not in r.stderr, r.stderr
    rows = json.load(open(os.path.join(out, "quality.json")))["rows"]
    assert {x["method"] for x in rows} == {"input", "default", "default-t0"}, rows


def case_quality_odd_size():
    # bench/quality.py read odd-sized frames with halved chroma (w // 2): every frame of a 161x91
    # clip came out shifted (and the last one short). FFmpeg's 4:2:0 chroma planes round up.
    q = quality_metrics()
    clip = path("odd.mkv")  # testsrc2 evens its size in 4:2:0; drawn in 4:4:4, then subsampled, it stays odd
    ffmpeg("-f", "lavfi", "-i", "testsrc2=s=161x91:r=30:d=1,format=yuv444p,eq=contrast=0.35,format=yuv420p",
           "-c:v", "ffv1", clip)
    assert q.probe_video(clip)[:2] == (161, 91)
    got = list(q.decode(clip, 161, 91))
    n = subprocess.run(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                        "stream=nb_read_frames", "-of", "csv=p=0", clip], capture_output=True, text=True).stdout.strip()
    assert len(got) == int(n) > 20, (len(got), n)
    y, u, v = got[-1]
    assert y.shape == (91, 161) and u.shape == (46, 81) and v.shape == (46, 81), (y.shape, u.shape, v.shape)
    ref = subprocess.run(["ffmpeg", "-v", "error", "-i", clip, "-vframes", "1", "-pix_fmt", "yuv420p", "-f", "rawvideo", "-"],
                         capture_output=True).stdout
    y0, u0, v0 = got[0]
    assert y0.tobytes() + u0.tobytes() + v0.tobytes() == ref
    out = path("qodd")
    r = histeq("quality", clip, "-o", out, "--configs", "default", "--peers", "none", timeout=170)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stdout + r.stderr


# --- blacks and shadows: bench/quality.py's crushed and shadow detail ------------------

BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench")


def quality_metrics():
    """bench/quality.py, the module `histeq quality` measures with (the same code, not a copy)."""
    if BENCH not in sys.path:
        sys.path.insert(0, BENCH)
    sys.dont_write_bytecode = True  # no __pycache__ in the source tree
    import quality
    return quality


def quality_clip(name, frames=8, size="480x270"):
    """A clip of bench/make_quality_clips.py, small and a few frames long."""
    try:
        import skimage  # noqa: F401
    except ImportError:
        raise Skip("no python3-skimage (scripts/setup.sh installs it)")
    r = run([sys.executable, os.path.join(BENCH, "make_quality_clips.py"), TMP, "--only", name, "--size", size,
             "--frames", str(frames)], timeout=170)
    assert r.returncode == 0, r.stderr
    return path(name + ".mkv")


def crush_and_detail(name, modes):
    """Each mode's export of the clip: bench/quality.py's figures against the input."""
    q = quality_metrics()
    src = quality_clip(name)
    out = {}
    for label, args in modes:
        dst = path(f"{name}_{label}.mkv")
        r = histeq("export", src, "-o", dst, "--codec", "ffv1", *args)
        assert r.returncode == 0, r.stderr
        out[label] = q.compare_files(src, dst)
        m = out[label]
        print(f"{name} {label}: crushed {m['crushed_pct']:.2f} % (input {m['crushed_in_pct']:.2f}, {m['crushed_pp']:+.2f} pp), "
              f"shadow detail x{m['shadow_detail_ratio']:.3f}, lifted black {m['lifted_black_pct']:.2f} %, "
              f"flicker p99 x{m['flicker_p99_ratio']:.3f}, colourfulness x{m['colourfulness_ratio']:.3f}")
    return out


def true_blacks(name):
    # The range-aware curves' targets: a display shows no more black or white than the input had (to half
    # a percentage point), black stays black (letterbox bars: no more than 1 % of the input's black
    # samples come out above it), and the shadows keep their detail; in the default and CLAHE
    # modes. The defaults' brightness hold adds no flicker (the mean's steps at the clip's depth).
    res = crush_and_detail(name, [("default", []), ("clahe", ["--mode", "clahe"])])
    bad = [f"{label}: crushed {m['crushed_pp']:+.2f} pp, shadow detail x{m['shadow_detail_ratio']:.3f}, "
           f"lifted black {m['lifted_black_pct']:.2f} %"
           for label, m in res.items() if not (m["crushed_pp"] <= 0.5 and m["shadow_detail_ratio"] >= 1.0 and m["lifted_black_pct"] <= 1.0)]
    assert not bad, f"{name}: want crushed <= +0.5 pp, shadow detail >= 1.0, lifted black <= 1 %; " + "; ".join(bad)
    f = res["default"]["flicker_p99_ratio"]
    assert f <= 1.0, f"{name}: default flicker p99 x{f:.3f} the input's, want <= 1.0"
    # The colour floor, in every range: chroma follow restores what the brightening takes
    # (at most x1.2), so the picture is as colourful as the input or a little more, not garish.
    bad = [f"{label}: x{m['colourfulness_ratio']:.3f}" for label, m in res.items() if not 0.9 <= m["colourfulness_ratio"] <= 1.3]
    assert not bad, f"{name}: colourfulness, want 0.9-1.3x the input's; " + "; ".join(bad)


def case_true_blacks_limited():
    true_blacks("blacks")


def case_true_blacks_full():
    true_blacks("blacks_full")


def case_true_blacks_limited_10bit():
    true_blacks("blacks10")


def case_true_blacks_full_10bit():
    true_blacks("blacks10_full")


def full_range_colour_kept(name):
    # bench/quality.py read full-range frames as limited range, so the input's shadows
    # (0..15) went to negative RGB, clipped to black with their colour: an output whose chroma is the
    # input's (--chroma keep) scored x1.14 the input's colourfulness, and the defaults x1.35. Kept
    # chroma on a brightened picture is as colourful as the input, to the little that brightening
    # takes off the display's clipping of the darkest colours.
    m = crush_and_detail(name, [("keep", ["--chroma", "keep"])])["keep"]
    assert 0.98 <= m["colourfulness_ratio"] <= 1.03, f"{name} --chroma keep: colourfulness x{m['colourfulness_ratio']:.3f}, want ~1"


def case_full_range_colourfulness():
    full_range_colour_kept("blacks_full")


def case_full_range_colourfulness_10bit():
    full_range_colour_kept("blacks10_full")


def case_dark_clip_shadow_detail():
    # A dark scene (luma 16..50) is what equalization is for: its shadows gain detail (x1.2).
    m = crush_and_detail("dark", [("default", [])])["default"]
    assert m["shadow_detail_ratio"] >= 1.2, f"dark: shadow detail x{m['shadow_detail_ratio']:.3f}, want >= 1.2"


def case_cut_clip_shadow_detail():
    # The cut clip's bright shot (its first 8 frames): a bright picture whose sparse shadows the
    # clipped curve compressed (x0.91 before the shadow floor); nothing lost in either mode, and
    # its few black samples stay black (clahe lifted all of them before).
    res = crush_and_detail("cut", [("default", []), ("clahe", ["--mode", "clahe"])])
    bad = [f"{label}: shadow detail x{m['shadow_detail_ratio']:.3f}, lifted black {m['lifted_black_pct']:.2f} %"
           for label, m in res.items() if not (m["shadow_detail_ratio"] >= 1.0 and m["lifted_black_pct"] <= 1.0)]
    assert not bad, "cut: want shadow detail >= 1.0, lifted black <= 1 %; " + "; ".join(bad)


# --- play ----------------------------------------------------------------------------------------

def case_play_headless_synthetic():
    js = path("stats.json")
    r = histeq("play", "--headless", "--max-speed", "--duration", "1", "--size", "320x180", "--stats-json", js)
    assert r.returncode == 0, r.stderr
    assert "done in" in r.stdout and "histogram" in r.stdout and "p99" in r.stdout, r.stdout
    j = json.load(open(js))
    assert j["counters"]["frames"] == 60 and len(j["frames"]) == 60
    for f in j["frames"]:
        for stage in ("decode", "histogram", "lut", "apply", "present", "latency"):
            assert stage in f, (stage, f)
    assert set(j["summary"]) >= {"decode", "histogram", "lut", "apply", "present", "latency"}


def case_play_realtime():
    # Without a display (and without --headless) play falls back to headless with a one-line note.
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    t = time.time()
    r = run([HISTEQ, "play", "--duration", "2", "--size", "160x90", "--fps", "30"], env=env)
    wall = time.time() - t
    assert r.returncode == 0, r.stderr
    assert "no player window" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert wall >= 1.9, wall  # paced at 30 fps: 60 frames take 2 s
    assert r.stdout.count("[") >= 1 and "stage" in r.stdout, r.stdout  # the table once a second
    m = re.search(r"done in [\d.]+ s: (\d+) frames", r.stdout)
    assert m and int(m.group(1)) == 60, r.stdout


def case_play_file_and_webcam():
    clip = low_contrast_clip("pf.mp4", seconds=1)
    r = histeq("play", "--headless", "--max-speed", clip)
    assert r.returncode == 0 and "30 frames" in r.stdout, r.stdout + r.stderr
    cam = "/dev/video99"
    r = histeq("play", "--headless", "--webcam", cam)
    one_line_error(r, cam, "webcam")
    r = histeq("play", "--headless", "--webcam", cam, clip)
    assert r.returncode == 2




def free_udp_port():
    import socket
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# A live producer as a user would run one: the ffmpeg CLI on the loopback address, in real time,
# stamping each frame with its capture time (wall clock) so that histeq can report glass-to-glass.
def udp_producer(port, seconds=None, fps=60):
    args = ["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-re", "-f", "lavfi",
            "-i", f"testsrc2=s=320x240:r={fps}" + (f":d={seconds}" if seconds else ""),
            "-vf", "setpts=RTCTIME/(TB*1000000),eq=contrast=0.5",
            "-c:v", "libx264", "-preset", "ultrafast", "-tune", "zerolatency", "-g", str(fps),
            "-muxdelay", "0", "-muxpreload", "0", "-flush_packets", "1",
            "-f", "mpegts", f"udp://127.0.0.1:{port}?pkt_size=1316"]
    return subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def live_stats(js):
    with open(js) as f:
        j = json.load(f)
    return j["counters"], j["summary"]


def case_live_udp_stream():
    port = free_udp_port()
    js = path("udp.json")
    viewer = subprocess.Popen([HISTEQ, "play", "--headless", "--quiet", "--cpu", "--live-timeout", "2", "--stats-json", js,
                               f"udp://127.0.0.1:{port}"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.5)
    prod = udp_producer(port, seconds=4)
    prod.wait(timeout=60)
    out, err = viewer.communicate(timeout=60)
    assert viewer.returncode == 0, err
    lines = [l for l in err.splitlines() if l.startswith("histeq:")]
    assert any("the stream stopped" in l and f"udp://127.0.0.1:{port}" in l for l in lines), err
    c, summary = live_stats(js)
    assert c["frames"] >= 120, c  # 240 sent at 60 fps; the first ones go to the probe
    # histeq's own latency (arrival -> presented) within 3 frames at 60 fps; the glass-to-glass
    # figure (capture -> presented) includes the producer's encoder and is reported.
    assert summary["latency"]["p50"] <= 50.0, summary["latency"]
    assert "glass-to-glass" in summary and summary["glass-to-glass"]["p50"] > 0, summary
    print(f"udp: {c['frames']} frames, latency p50 {summary['latency']['p50']:.1f} ms "
          f"p99 {summary['latency']['p99']:.1f} ms, glass-to-glass p50 {summary['glass-to-glass']['p50']:.1f} ms "
          f"p99 {summary['glass-to-glass']['p99']:.1f} ms")


def case_live_udp_join_mid_gop():
    # Live input: joining an MPEG-TS stream between key frames (a 3 s GOP) failed within 1.5 s with
    # "the video stream has no frame size"; now play and export wait up to --live-timeout.
    for command in ("play", "export"):
        port = free_udp_port()
        prod = subprocess.Popen(["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-re", "-f", "lavfi",
                                 "-i", "testsrc2=s=320x240:r=30:d=7", "-c:v", "libx264", "-preset", "ultrafast",
                                 "-tune", "zerolatency", "-g", "90", "-f", "mpegts", f"udp://127.0.0.1:{port}?pkt_size=1316"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(1.2)  # past the first key frame; the next is at 3 s
        out = path(f"joined_{command}.mkv")
        args = ["--headless", "--quiet", "--live-timeout", "3"] if command == "play" else ["-o", out, "--progress", "none"]
        r = histeq(command, f"udp://127.0.0.1:{port}", "--cpu", *args, timeout=60)
        prod.wait(timeout=60)
        assert r.returncode == 0, (command, r.stderr)
        assert "no frame size" not in r.stderr, r.stderr
        if command == "export":
            assert video_frames(out) >= 90, video_frames(out)  # 3 s..7 s: about 120 frames from the key frame on
    # A key frame that does not come within --live-timeout: one line that says so.
    port = free_udp_port()
    prod = subprocess.Popen(["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-re", "-f", "lavfi",
                             "-i", "testsrc2=s=320x240:r=30:d=6", "-c:v", "libx264", "-preset", "ultrafast",
                             "-tune", "zerolatency", "-g", "600", "-f", "mpegts", f"udp://127.0.0.1:{port}?pkt_size=1316"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    time.sleep(1.2)
    r = histeq("play", f"udp://127.0.0.1:{port}", "--cpu", "--headless", "--quiet", "--live-timeout", "1.5", timeout=60)
    prod.kill()
    prod.wait()
    one_line_error(r, f"udp://127.0.0.1:{port}", "no key frame", "1.5 s")


def case_live_udp_producer_killed():
    port = free_udp_port()
    js = path("killed.json")
    viewer = subprocess.Popen([HISTEQ, "play", "--headless", "--quiet", "--cpu", "--live-timeout", "1.5", "--stats-json", js,
                               f"udp://127.0.0.1:{port}"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.5)
    prod = udp_producer(port)  # endless
    time.sleep(3)
    prod.kill()
    prod.wait()
    t0 = time.monotonic()
    out, err = viewer.communicate(timeout=30)
    assert time.monotonic() - t0 < 10, "the viewer took too long to notice"
    assert viewer.returncode == 0, err
    lines = [l for l in err.splitlines() if l.startswith("histeq:")]
    assert len(lines) == 1 and "the stream stopped: nothing came for 1.5 s" in lines[0], err
    c, _ = live_stats(js)
    assert c["frames"] > 30, c


def case_live_stdin():
    n = 90
    prod = subprocess.Popen(["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i",
                             f"testsrc2=s=320x240:r=30:d={n / 30}", "-c:v", "libx264", "-preset", "ultrafast",
                             "-f", "mpegts", "-"], stdout=subprocess.PIPE)
    js = path("stdin.json")
    r = subprocess.run([HISTEQ, "play", "--headless", "--quiet", "--cpu", "--max-speed", "--stats-json", js, "--live", "-"],
                       stdin=prod.stdout, capture_output=True, text=True, timeout=60)
    prod.stdout.close()
    prod.wait()
    assert r.returncode == 0, r.stderr
    c, _ = live_stats(js)
    # Standard input read live (--live; without it, a file: tests/e2e/pipes.py): a pipe has an end,
    # and every frame is shown or counted as dropped at the source.
    assert c["frames"] + c.get("dropped_source", 0) == n, c


def case_live_bad_url():
    r = histeq("play", "--headless", "--live-timeout", "1", "udp://256.1.1.1:1234", timeout=30)
    assert r.returncode != 0
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and lines[0].startswith("histeq: udp://256.1.1.1:1234: "), r.stderr
# --- trimming ------------------------------------------------------------------------------------

def beep_flash_clip(name, seconds=6, rate=30, extra=()):
    """A white frame and a 1 kHz beep (50 ms) at every whole second, dark grey and silence between."""
    out = path(name)
    ffmpeg("-f", "lavfi", "-i", f"color=c=0x202020:s=160x90:r={rate}:d={seconds},"
           f"drawbox=x=0:y=0:w=iw:h=ih:color=white:t=fill:enable='lt(mod(t\\,1)\\,{0.9 / rate})'",
           "-f", "lavfi", "-i", f"aevalsrc='if(lt(mod(t\\,1)\\,0.05)\\,0.8*sin(2*PI*1000*t)\\,0)':s=48000:d={seconds}",
           "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", *extra, "-shortest", out)
    return out


def flash_times(file):
    """Presentation times of the white frames."""
    r = run(["ffmpeg", "-nostdin", "-v", "error", "-i", file, "-vf",
             "signalstats,metadata=print:key=lavfi.signalstats.YAVG:file=-", "-f", "null", "-"])
    assert r.returncode == 0, r.stderr
    times, t = [], None
    for line in r.stdout.splitlines():
        m = re.search(r"pts_time:([\d.]+)", line)
        if m:
            t = float(m.group(1))
        m = re.search(r"YAVG=([\d.]+)", line)
        if m and t is not None and float(m.group(1)) > 128:
            times.append(round(t, 4))
    return times


def beep_times(file):
    """Where each beep begins in the decoded audio (seconds), and the audio's length."""
    import numpy as np
    r = subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-i", file, "-map", "0:a:0", "-f", "s16le", "-ac", "1", "-ar", "48000", "-"],
                       capture_output=True, timeout=120)
    assert r.returncode == 0
    a = np.frombuffer(r.stdout, dtype=np.int16).astype(np.float64)
    loud = np.nonzero(np.abs(a) > 8000)[0]
    starts = [int(loud[i]) for i in range(len(loud)) if i == 0 or loud[i] - loud[i - 1] > 4800]
    return [s / 48000.0 for s in starts], len(a) / 48000.0


def case_trim_export_frame_exact_with_audio():
    clip = beep_flash_clip("bf.mp4")
    assert flash_times(clip) == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0], flash_times(clip)
    out = path("bf_cut.mp4")
    r = histeq("export", clip, "-o", out, "--start", "1.5", "--end", "00:00:04.200", "--progress", "plain")
    assert r.returncode == 0, r.stderr
    assert "cut to the sample" in r.stderr and "from 1.500 s to 4.200 s" in r.stderr, r.stderr
    assert video_frames(out) == 81, video_frames(out)  # frames 45 .. 125: 2.7 s at 30 fps
    pts = [float(p["pts_time"]) for p in probe(out, "packet=pts_time", select="v:0")["packets"]]
    assert min(pts) == 0.0, min(pts)
    assert flash_times(out) == [0.5, 1.5, 2.5], flash_times(out)
    src_beeps, _ = beep_times(clip)
    beeps, length = beep_times(out)
    want = [b - 1.5 for b in src_beeps if 1.5 <= b < 4.2]
    assert len(beeps) == 3 and all(abs(b - w) <= 1 / 48000 for b, w in zip(beeps, want)), (beeps, want)  # to the sample
    assert abs(length - 2.7) < 0.025, length  # cut to the sample; the encoder pads its last frame
    # A start between two frames: the first frame at or after it; none at or after the end.
    out = path("bf_cut2.mkv")
    r = histeq("export", clip, "-o", out, "--start", "2.01", "--end", "3", "--codec", "ffv1")
    assert r.returncode == 0, r.stderr
    assert video_frames(out) == 29, video_frames(out)  # 2.0333 .. 2.9667
    assert flash_times(out) == [], flash_times(out)  # the flash at 3.0 is the end: left out


def case_trim_mistakes():
    clip = low_contrast_clip("tm.mp4", seconds=2)
    out = path("tm_out.mp4")
    r = histeq("export", clip, "-o", out, "--start", "5")
    one_line_error(r, clip, "past the end")
    no_output_left(out)
    for args in (["--start", "1:xx"], ["--end", "1", "--start", "2"], ["--duration", "1", "--end", "2"], ["--duration", "-1"]):
        r = histeq("export", clip, "-o", out, *args)
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, (args, r.stderr)
        no_output_left(out)
    r = histeq("play", "--headless", "--max-speed", clip, "--start", "3")
    one_line_error(r, clip, "past the end")


def case_trim_play():
    clip = low_contrast_clip("tp.mp4", seconds=3)
    js = path("tp.json")
    r = histeq("play", "--headless", "--max-speed", clip, "--start", "0:01", "--duration", "1.5", "--stats-json", js)
    assert r.returncode == 0, r.stderr
    times = [f["time_s"] for f in json.load(open(js))["frames"]]
    assert len(times) == 45 and abs(times[0] - 1.0) < 1e-6 and times[-1] < 2.5, (len(times), times[:2], times[-1:])
    # The synthetic source keeps --duration 0 (no end) and takes --start.
    r = histeq("play", "--headless", "--max-speed", "--size", "160x90", "--start", "1", "--end", "2", "--stats-json", js)
    assert r.returncode == 0, r.stderr
    j = json.load(open(js))
    assert j["counters"]["frames"] == 60 and abs(j["frames"][0]["time_s"] - 1.0) < 1e-9, j["counters"]


# --- batch export --------------------------------------------------------------------------------

def batch_folder():
    folder = path("clips")
    os.mkdir(folder)
    shutil.copy(low_contrast_clip("b1.mp4", seconds=1), os.path.join(folder, "a.mp4"))
    open(os.path.join(folder, "b.mp4"), "w").write("not a video, a note\n" * 20)
    shutil.copy(low_contrast_clip("b3.mkv", seconds=1, extra=("-f", "matroska")), os.path.join(folder, "c.mkv"))
    open(os.path.join(folder, "readme.txt"), "w").write("not an input")
    return folder


def case_batch_export_skips_a_bad_file():
    folder = batch_folder()
    out = path("out") + "/"
    report = path("report.json")
    r = histeq("export", folder, "-o", out, "--jobs", "2", "--progress", "json", "--report", report)
    assert r.returncode == 1, (r.returncode, r.stderr)
    events = [json.loads(l) for l in r.stdout.splitlines()]
    assert events[0]["event"] == "batch" and events[0]["files"] == 3 and events[0]["jobs"] == 2, events[0]
    by = {}
    for e in events:
        if "file" in e:
            by.setdefault(os.path.basename(e["file"]), []).append(e["event"])
    assert by["a.mp4"][0] == "start" and by["a.mp4"][-1] == "done", by
    assert by["c.mkv"][-1] == "done" and by["b.mp4"] == ["error"], by
    assert any(e["event"] == "total" and "eta_s" in e for e in events), events
    assert events[-1]["event"] == "summary" and events[-1]["files_ok"] == 2 and events[-1]["files_failed"] == 1, events[-1]
    err = [l for l in r.stderr.splitlines() if l.strip()]
    assert any(l.startswith("histeq: " + os.path.join(folder, "b.mp4") + ": ") for l in err), err
    # Nothing half-written; each output with its record of completion (--resume's sidecar).
    assert sorted(os.listdir(out)) == [".a.mp4.histeq", ".c.mkv.histeq", "a.mp4", "c.mkv"], os.listdir(out)
    assert video_frames(os.path.join(out, "a.mp4")) == 30 and video_frames(os.path.join(out, "c.mkv")) == 30
    rep = json.load(open(report))
    results = {os.path.basename(f["input"]): f for f in rep["files"]}
    assert rep["files_ok"] == 2 and rep["files_failed"] == 1, rep
    assert results["a.mp4"]["result"] == "ok" and results["a.mp4"]["frames_out"] == 30
    assert results["a.mp4"]["output_bytes"] == os.path.getsize(os.path.join(out, "a.mp4")) and results["a.mp4"]["elapsed_s"] > 0
    assert results["b.mp4"]["result"] == "failed" and "not a video" in results["b.mp4"]["message"], results["b.mp4"]
    # The same again, one file at a time, as a job array's tasks run it: --list and --index.
    r = histeq("export", folder, "-o", path("out2") + "/", "--list")
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 3 and r.stdout.splitlines()[2].endswith("out2/c.mkv"), r.stdout
    for i, want in ((0, 0), (1, 1), (2, 0)):
        r = histeq("export", folder, "-o", path("out2") + "/", "--index", i, "--progress", "none")
        assert r.returncode == want, (i, r.returncode, r.stderr)
    assert sorted(os.listdir(path("out2"))) == [".a.mp4.histeq", ".c.mkv.histeq", "a.mp4", "c.mkv"]
    r = histeq("export", folder, "-o", path("out2") + "/", "--index", 3)
    assert r.returncode == 2 and "--index 3" in r.stderr, r.stderr


def case_batch_shards_and_null_output():
    # --shard K/N: a node's share of the batch (files K, K+N, ...); the shares together are the batch.
    folder = path("shards")
    os.makedirs(folder)
    for n in "abcde":
        shutil.copy(low_contrast_clip(n + ".mp4", seconds=0.5, audio=False), os.path.join(folder, n + ".mp4"))
    out = path("shards_out") + "/"
    listed = histeq("export", folder, "-o", out, "--list").stdout.splitlines()
    shares = [histeq("export", folder, "-o", out, "--shard", "%d/2" % k, "--list").stdout.splitlines() for k in (0, 1)]
    assert shares[0] == listed[0::2] and shares[1] == listed[1::2], (listed, shares)
    r = histeq("export", folder, "-o", out, "--shard", "1/2", "--progress", "none")
    assert r.returncode == 0, r.stderr
    assert sorted(f for f in os.listdir(out) if not f.startswith(".")) == ["b.mp4", "d.mp4"], os.listdir(out)
    assert histeq("export", folder, "-o", out, "--shard", "6/7", "--progress", "none").returncode == 0  # an empty share
    for bad in ("2/2", "1", "-1/2", "1/0", "a/b", "1/2x"):
        r = histeq("export", folder, "-o", out, "--shard", bad)
        assert r.returncode == 2 and "--shard" in r.stderr and len(r.stderr.strip().splitlines()) == 1, (bad, r.stderr)
    r = histeq("export", folder, "-o", out, "--shard", "0/2", "--index", "0")
    assert r.returncode == 2 and "--index and --shard" in r.stderr, r.stderr
    # -f null: every frame decoded and equalized, nothing written, the frames counted.
    nul = path("null_out") + "/"
    report = path("null.json")
    r = histeq("export", folder, "-o", nul, "-f", "null", "--report", report, "--progress", "none")
    assert r.returncode == 0, r.stderr
    assert not os.path.exists(nul), os.listdir(nul)
    rep = json.load(open(report))
    assert rep["files_ok"] == 5 and all(f["frames_out"] == 15 and f["output_bytes"] == 0 for f in rep["files"]), rep
    r = histeq("export", os.path.join(folder, "a.mp4"), "-o", "-", "-f", "null", "--progress", "none")
    assert r.returncode == 0 and r.stdout == "", (r.returncode, r.stderr)
    r = histeq("export", os.path.join(folder, "a.mp4"), "-o", "-", "-f", "null", "-c", "libx264")
    assert r.returncode != 0 and "-f null" in r.stderr, r.stderr


def case_batch_export_inputs_and_mistakes():
    a = low_contrast_clip("x.mp4", seconds=1)
    b = low_contrast_clip("y.mp4", seconds=1, audio=False)
    out = path("o")
    r = histeq("export", a, b, "-o", out, "--ext", "mkv", "--progress", "plain", "--start", "0.5")
    assert r.returncode == 0, r.stderr
    assert "total: 2 of 2 files written" in r.stderr, r.stderr
    assert sorted(os.listdir(out)) == [".x.mkv.histeq", ".y.mkv.histeq", "x.mkv", "y.mkv"]
    assert video_frames(os.path.join(out, "x.mkv")) == 15
    r = histeq("export", a, b, "-o", a)  # a file is not a folder
    assert r.returncode == 2 and "a batch writes into a folder" in r.stderr, r.stderr
    r = histeq("export", os.path.join(out, "x.mkv"), "-o", out + "/", "-y")
    assert r.returncode == 2 and "is the input" in r.stderr, r.stderr
    r = histeq("export", a, path("missing.mp4"), "-o", path("o2") + "/", "--progress", "none")
    assert r.returncode == 1 and "no such file" in r.stderr and sorted(os.listdir(path("o2"))) == [".x.mp4.histeq", "x.mp4"], r.stderr
    r = histeq("export", a, b, "-o", path("o3") + "/", "--stats-json", path("s.json"))
    assert r.returncode == 2, r.stderr
    if not have_gpu():
        r = histeq("export", a, b, "-o", path("o4") + "/", "--device", "0")
        assert r.returncode == 2 and "--device" in r.stderr, r.stderr


def case_report_single_file():
    clip = low_contrast_clip("rs.mp4", seconds=1)
    out, report = path("rs_eq.mp4"), path("rs.json")
    r = histeq("export", clip, "-o", out, "--report", report, "--progress", "none")
    assert r.returncode == 0, r.stderr
    f = json.load(open(report))["files"]
    assert len(f) == 1 and f[0]["result"] == "ok" and f[0]["frames_out"] == 30 and f[0]["output_bytes"] == os.path.getsize(out), f
    r = histeq("export", path("none.mp4"), "-o", path("none_eq.mp4"), "--report", report)
    assert r.returncode == 1, r.stderr
    f = json.load(open(report))["files"]
    assert f[0]["result"] == "failed" and "no such file" in f[0]["message"], f


def case_batch_sigint_leaves_nothing():
    folder = path("long")
    os.mkdir(folder)
    clip = low_contrast_clip("long.mp4", size="1280x720", seconds=6, audio=False)
    for n in ("a.mp4", "b.mp4", "c.mp4"):
        shutil.copy(clip, os.path.join(folder, n))
    out = path("lout")
    report = path("lrep.json")
    interrupted(["export", folder, "-o", out + "/", "--preset", "veryslow", "--progress", "plain", "--report", report], 2)
    assert os.listdir(out) == [], os.listdir(out)
    rep = json.load(open(report))
    assert [f["result"] for f in rep["files"]] == ["interrupted", "not started", "not started"], rep["files"]


CASES = {k[5:]: v for k, v in sorted(globals().items()) if k.startswith("case_")}


def main(cases=None):
    """Runs one case of `cases` (default: this file's); tests/e2e/safety.py passes its own."""
    global HISTEQ, TMP
    cases = CASES if cases is None else cases
    ap = argparse.ArgumentParser()
    ap.add_argument("--histeq")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("case", nargs="?")
    a = ap.parse_args()
    if a.list:
        print("\n".join(cases))
        return 0
    HISTEQ = os.path.abspath(a.histeq)
    for tool in ("ffmpeg", "ffprobe"):
        if shutil.which(tool) is None:
            print(f"skipped: no {tool}")
            return SKIP
    try:
        import numpy  # noqa: F401
    except ImportError:
        print("skipped: no numpy (use /usr/bin/python3)")
        return SKIP
    TMP = tempfile.mkdtemp(prefix="histeq-e2e-")
    try:
        cases[a.case]()
    except Skip as s:
        print(f"skipped: {s}")
        return SKIP
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
