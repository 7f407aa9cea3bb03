#!/usr/bin/python3
"""End-to-end tests of inputs that end early, run by CTest (one test per case) with e2e.py's helpers:
a clip cut in half (the byte count halved, as a copy that stopped or a download cut short) in each
container, and the same clip whole.

An export whose input ends early says so in one note line, and its result is "short" wherever a
result is written (--report, the batch's report, --progress json's "done" line, --stats-json's
counters), with frames_expected beside frames_in; it exits 0, or 1 with --strict (then nothing is
written). A whole clip is "ok" and prints no note: no false "short". MP4 cut in half has lost its
index (the moov atom comes last): it cannot be read at all and fails as "truncated", as before.

  short_inputs.py --histeq build/app/histeq CASE     (exit 77 = skipped: no ffmpeg/ffprobe)
  short_inputs.py --list
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402
from e2e import ffmpeg, histeq, no_output_left, one_line_error, path, video_frames  # noqa: E402

FRAMES = 90  # 3 s at 30 fps
CODECS = {  # container -> the clip's video (and audio) encoding
    "mkv": ["-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac"],
    "webm": ["-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "300k", "-c:a", "libopus"],
    "avi": ["-c:v", "libx264", "-preset", "ultrafast", "-c:a", "mp3"],
    "ts": ["-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac"],
    "mp4": ["-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac"],
}


def clip(ext, cut=False):
    """A 3-second clip with audio in container `ext`; with `cut`, its first half (bytes)."""
    whole = path(f"whole.{ext}")
    if not os.path.exists(whole):
        ffmpeg("-f", "lavfi", "-i", f"testsrc2=s=320x180:r=30:d={FRAMES / 30},eq=contrast=0.4", "-f", "lavfi", "-i",
               f"sine=f=440:d={FRAMES / 30}", *CODECS[ext], "-pix_fmt", "yuv420p", whole)
    if not cut:
        return whole
    data = open(whole, "rb").read()
    half = path(f"half.{ext}")
    open(half, "wb").write(data[:len(data) // 2])
    return half


def export(inp, *extra, out=None):
    """histeq export INP -o OUT (ffv1 in Matroska: fast, lossless) with --report, --stats-json and
    JSON progress: (the run, the report's entry, the stats' counters, the "done" event)."""
    out = out or path("out.mkv")
    rep, stats = path("report.json"), path("stats.json")
    for f in (out, rep, stats):
        if os.path.exists(f):
            os.remove(f)
    r = histeq("export", inp, "-o", out, "-c", "ffv1", "--cpu", "--progress", "json", "--report", rep, "--stats-json", stats,
               *extra)
    entry = json.load(open(rep))["files"][0] if os.path.exists(rep) else None
    counters = json.load(open(stats))["counters"] if os.path.exists(stats) else None
    events = [json.loads(l) for l in r.stdout.splitlines() if l.startswith("{")]
    done = [e for e in events if e["event"] == "done"]
    return r, entry, counters, done[-1] if done else None


def notes(r):
    return [l for l in r.stderr.splitlines() if "ends early" in l]


def check_whole(ext):
    r, entry, counters, done = export(clip(ext))
    assert r.returncode == 0, (ext, r.returncode, r.stderr)
    assert not notes(r), (ext, "a whole file called short", r.stderr)
    assert entry["result"] == "ok" and done["result"] == "ok", (ext, entry, done)
    assert entry["frames_in"] == entry["frames_out"] == FRAMES, (ext, entry)
    assert entry["frames_expected"] == done["frames_expected"] == counters["frames_expected"], (ext, entry, done, counters)
    assert abs(entry["frames_expected"] - FRAMES) <= 2, (ext, entry)  # exact (index, header) or duration x rate
    assert counters["short_input"] == 0, counters


def check_half(ext):
    inp = clip(ext, cut=True)
    out = path("out.mkv")
    r, entry, counters, done = export(inp, out=out)
    assert r.returncode == 0, (ext, r.returncode, r.stderr)
    lines = notes(r)
    assert len(lines) == 1 and lines[0].startswith(f"histeq: note: {inp}: the input ends early"), (ext, r.stderr)
    assert entry["result"] == "short" and done["result"] == "short" and counters["short_input"] == 1, (ext, entry, done, counters)
    assert entry["message"].startswith(f"{inp}: the input ends early"), entry
    n = video_frames(out)
    assert entry["frames_in"] == entry["frames_out"] == done["frames_in"] == counters["frames_in"] == n, (ext, entry, n)
    assert n < 0.75 * FRAMES, (ext, n)  # about half
    # Said by the count (a container that records its length), or by the cut the data shows.
    assert entry["frames_expected"] >= 0.95 * FRAMES or "the data ends inside" in lines[0], (ext, entry, lines)
    # --strict: the same input fails its export, in one line, and nothing is written.
    os.remove(out)
    r = histeq("export", inp, "-o", out, "-c", "ffv1", "--cpu", "--strict", "--progress", "none")
    one_line_error(r, inp, "ends early")
    no_output_left(out)
    return entry, lines[0]


# --- one per container: whole "ok", half "short" -------------------------------------------------------

def case_mkv_cut_in_half_is_short():
    check_whole("mkv")
    entry, line = check_half("mkv")
    # The Duration element says 90 frames; the demuxer met the end inside a cluster.
    assert abs(entry["frames_expected"] - FRAMES) <= 2 and "Matroska" in line, (entry, line)


def case_webm_cut_in_half_is_short():
    check_whole("webm")
    entry, line = check_half("webm")
    assert abs(entry["frames_expected"] - FRAMES) <= 2, entry


def case_avi_cut_in_half_is_short():
    check_whole("avi")
    entry, line = check_half("avi")
    assert abs(entry["frames_expected"] - FRAMES) <= 2 and "frames the container lists" in line, (entry, line)  # its header's count


def case_ts_cut_in_half_is_short():
    # A transport stream says nothing of its length (the duration is estimated from the file's last
    # timestamps): what shows the cut is the last 188-byte packet, cut in the middle.
    check_whole("ts")
    inp = clip("ts", cut=True)
    assert os.path.getsize(inp) % 188 != 0
    entry, line = check_half("ts")
    assert "transport stream packet" in line, line
    # Cut on a packet boundary: nothing in the packets shows it, but the last frame is incomplete.
    data = open(inp, "rb").read()
    aligned = path("aligned.ts")
    open(aligned, "wb").write(data[:len(data) // 188 * 188])
    r, entry, _, _ = export(aligned)
    assert r.returncode == 0 and entry["result"] == "short", (entry, r.stderr)
    assert "the last frame is incomplete" in notes(r)[0], r.stderr


def case_mp4_cut_in_half_fails_as_truncated():
    check_whole("mp4")
    out = path("out.mkv")
    os.remove(out)
    r = histeq("export", clip("mp4", cut=True), "-o", out, "-c", "ffv1", "--cpu")
    one_line_error(r, path("half.mp4"), "truncated")
    no_output_left(out)


# --- where the result is said ---------------------------------------------------------------------------

def case_batch_and_pipe_say_short():
    # A batch: the short file is written, its result "short", the batch exits 0 (1 with --strict).
    folder = path("in")
    os.mkdir(folder)
    os.rename(clip("mkv", cut=True), os.path.join(folder, "a.mkv"))
    os.rename(clip("mkv"), os.path.join(folder, "b.mkv"))
    dest, rep = path("dest"), path("batch.json")
    r = histeq("export", folder, "-o", dest + "/", "-c", "ffv1", "--cpu", "--report", rep, "--progress", "json")
    assert r.returncode == 0, r.stderr
    j = json.load(open(rep))
    results = {os.path.basename(f["input"]): f["result"] for f in j["files"]}
    assert results == {"a.mkv": "short", "b.mkv": "ok"} and j["files_short"] == 1 and j["files_ok"] == 1, j
    events = [json.loads(l) for l in r.stdout.splitlines()]
    done = {os.path.basename(e["file"]): e["result"] for e in events if e["event"] == "done"}
    assert done == results, events
    assert [e for e in events if e["event"] == "summary"][0]["files_short"] == 1
    assert len([l for l in r.stderr.splitlines() if "ends early" in l]) == 1, r.stderr
    r = histeq("export", folder, "-o", path("dest2") + "/", "-c", "ffv1", "--cpu", "--strict", "--progress", "none")
    assert r.returncode == 1 and "a.mkv: the input ends early" in r.stderr, (r.returncode, r.stderr)
    assert sorted(os.listdir(path("dest2"))) == [".b.mkv.histeq", "b.mkv"], os.listdir(path("dest2"))
    # Standard input: the same cut file through a pipe.
    cut = os.path.join(folder, "a.mkv")
    out = path("piped.mkv")
    with open(cut, "rb") as f:
        p = subprocess.run([e2e.HISTEQ, "export", "-", "-o", out, "-c", "ffv1", "--cpu", "--progress", "json"], stdin=f,
                           capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    done = [json.loads(l) for l in p.stdout.splitlines() if '"done"' in l][-1]
    assert done["result"] == "short" and done["frames_out"] == video_frames(out), done
    assert len(notes(p)) == 1 and notes(p)[0].startswith("histeq: note: -: the input ends early"), p.stderr


CASES = {k[5:]: v for k, v in sorted(globals().items()) if k.startswith("case_")}


if __name__ == "__main__":
    sys.exit(e2e.main(CASES))
