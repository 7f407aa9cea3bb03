#!/usr/bin/python3
"""End-to-end tests of histeq in Unix pipes, run by CTest (one test per case) with
e2e.py's helpers: real shell pipes between the ffmpeg/ffprobe binaries and histeq, every frame
counted, the frames compared with a file-to-file export (lossless or raw, so that equal means
bit-identical).

  pipes.py --histeq build/app/histeq CASE     (exit 77 = skipped: no ffmpeg/ffprobe)
  pipes.py --list
"""
import json
import os
import shlex
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402
from e2e import ffmpeg, frame_md5s, no_output_left, packet_md5, path, streams, video_frames  # noqa: E402

FF = "ffmpeg -nostdin -hide_banner -loglevel error"


def q(s):
    return shlex.quote(str(s))


def hq():
    return q(e2e.HISTEQ)


def shell(*stages, timeout=120):
    """Runs `stages` as one bash pipeline (stage 1 | stage 2 | ...), stdout into a file: each
    stage's exit status, its stderr, and the last stage's stdout (bytes)."""
    out = path("pipe.out")
    errs = [path(f"pipe.err{i}") for i in range(len(stages))]
    line = " | ".join(f"{s} 2>{q(e)}" for s, e in zip(stages, errs)) + f" >{q(out)}"
    r = subprocess.run(["bash", "-c", line + '; echo "${PIPESTATUS[*]}"'], capture_output=True, text=True, timeout=timeout)
    codes = [int(c) for c in r.stdout.split()]
    assert len(codes) == len(stages), r
    with open(out, "rb") as f:
        data = f.read()
    return codes, [open(e, errors="replace").read() for e in errs], data


def md5_lines(data):
    return [l.split(",")[-1].strip() for l in data.decode().splitlines() if l and not l.startswith("#")]


def h264_ts(name, frames, size="320x240", audio=False):
    """An H.264 MPEG-TS file of `frames` frames at 30 fps (and a sine in AAC with `audio`)."""
    args = ["-f", "lavfi", "-i", f"testsrc2=s={size}:r=30:d={frames / 30},eq=contrast=0.4"]
    if audio:
        args += ["-f", "lavfi", "-i", f"sine=f=440:d={frames / 30}", "-c:a", "aac"]
    ffmpeg(*args, "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", path(name))
    return path(name)


def histeq_err_lines(err):
    return [l for l in err.splitlines() if l.startswith("histeq:")]


# --- standard input --------------------------------------------------------------------------------

def case_stdin_export_keeps_every_frame():
    # A regression: stdin went through the live path, which drops frames when the pipeline
    # is full and lost the tail: 55 of 90 frames written, exit 0, "55 frames in, 55 out".
    n = 120
    src = h264_ts("src.ts", n, size="640x360")
    out = path("out.mp4")
    codes, errs, _ = shell(f"{FF} -i {q(src)} -c copy -f mpegts -", f"{hq()} export - -o {q(out)} --cpu --progress plain")
    assert codes == [0, 0], (codes, errs)
    assert video_frames(out) == n, (video_frames(out), errs[1])
    assert f"{n} frames in, {n} out" in errs[1], errs[1]
    # play reads it to its end too: every frame presented, none dropped at the source.
    js = path("play.json")
    codes, errs, _ = shell(f"{FF} -i {q(src)} -c copy -f mpegts -",
                           f"{hq()} play --headless --quiet --cpu --max-speed --stats-json {q(js)} -")
    assert codes == [0, 0], (codes, errs)
    c = json.load(open(js))["counters"]
    assert c["frames"] == n and c.get("dropped_source", 0) == 0, c


def case_live_flag_opts_into_the_live_path():
    n = 90
    src = h264_ts("live.ts", n)
    # export --live: a frame is either written or dropped and counted, never lost without a word.
    out = path("live.mkv")
    codes, errs, data = shell(f"{FF} -i {q(src)} -c copy -f mpegts -",
                              f"{hq()} export --live - -o {q(out)} --cpu --progress json")
    assert codes == [0, 0], (codes, errs)
    done = [json.loads(l) for l in data.decode().splitlines() if '"done"' in l]
    assert len(done) == 1, errs
    d = done[0]
    assert d["frames_in"] + d["dropped_frames"] == n and d["frames_out"] == video_frames(out) == d["frames_in"], d
    assert (d["dropped_frames"] > 0) == any("frames dropped" in l for l in histeq_err_lines(errs[1])), (d, errs[1])
    # play --live: live frames carry a capture time (the glass-to-glass figure); a pipe without
    # --live is a file, whose frames do not.
    for live in (True, False):
        js = path(f"play{live}.json")
        codes, errs, _ = shell(f"{FF} -i {q(src)} -c copy -f mpegts -",
                               f"{hq()} play --headless --quiet --cpu --max-speed --stats-json {q(js)} {'--live' if live else ''} -")
        assert codes == [0, 0], (live, codes, errs)
        frames = json.load(open(js))["frames"]
        assert any("glass-to-glass" in f for f in frames) == live, (live, frames[:2])


def case_mpegts_stdin_with_and_without_audio():
    n = 60
    for audio in (True, False):
        src = h264_ts(f"a{audio}.ts", n, audio=audio)
        out = path(f"a{audio}.mkv")
        codes, errs, _ = shell(f"{FF} -i {q(src)} -c copy -f mpegts -", f"{hq()} export - -o {q(out)} --cpu --progress none")
        assert codes == [0, 0], (audio, codes, errs)
        kinds = [s["codec_type"] for s in streams(out)]
        assert kinds == (["video", "audio"] if audio else ["video"]), kinds
        assert video_frames(out) == n, video_frames(out)
        if audio:  # copied packet for packet, as from the file
            ref = path("aref.mkv")
            assert e2e.histeq("export", src, "-o", ref, "-y", "--cpu", "--progress", "none").returncode == 0
            assert packet_md5(out, "a:0") == packet_md5(ref, "a:0")
            a_out, a_src = (int(streams(f)[1]["nb_read_packets"]) for f in (out, src))
            assert a_out == a_src > 0, (a_out, a_src)
        # The same through standard output in MPEG-TS, counted by ffprobe at the end of the pipe.
        codes, errs, data = shell(f"{FF} -i {q(src)} -c copy -f mpegts -", f"{hq()} export - -o - -f mpegts --cpu --progress none",
                                  "ffprobe -v error -count_packets -show_entries stream=codec_type,nb_read_packets -of json -")
        assert codes == [0, 0, 0], (codes, errs)
        got = {s["codec_type"]: int(s["nb_read_packets"]) for s in json.loads(data)["streams"]}
        want = {s["codec_type"]: int(s["nb_read_packets"]) for s in streams(src)}
        assert got == want and got["video"] == n, (got, want)


# --- standard output -------------------------------------------------------------------------------

def case_nut_pipe_is_bit_identical_to_a_file_export():
    n = 75
    src = h264_ts("nut.ts", n)
    ref = path("ref.nut")
    r = e2e.histeq("export", src, "-o", ref, "-c", "rawvideo", "--cpu", "--progress", "none")
    assert r.returncode == 0, r.stderr
    want = frame_md5s(ref)
    assert len(want) == n
    # ffmpeg | histeq | ffmpeg, with every print path of export on: progress as JSON lines (which
    # must go to stderr, as the video owns stdout), notes, the header and the last line.
    for progress in ("json", "plain"):
        codes, errs, data = shell(f"{FF} -i {q(src)} -c copy -f mpegts -",
                                  f"{hq()} export - -o - -f nut -c rawvideo --cpu --progress {progress}",
                                  f"{FF} -f nut -i - -f framemd5 -")
        assert codes == [0, 0, 0], (progress, codes, errs)
        got = md5_lines(data)
        assert len(got) == n, (progress, len(got))
        assert got == want, progress
        if progress == "json":
            events = [json.loads(l)["event"] for l in errs[1].splitlines() if l.startswith("{")]
            assert events[0] == "start" and events[-1] == "done", events
        else:
            assert f"wrote standard output: {n} frames in, {n} out" in errs[1], errs[1]
    # The default encoder through the pipe: the same packets as into a file (x264 is deterministic).
    ref264 = path("ref264.nut")
    assert e2e.histeq("export", src, "-o", ref264, "--cpu", "--progress", "none").returncode == 0
    codes, errs, data = shell(f"{FF} -i {q(src)} -c copy -f mpegts -", f"{hq()} export - -o - -f nut --cpu --progress none")
    assert codes == [0, 0], (codes, errs)
    with open(path("pipe264.nut"), "wb") as f:
        f.write(data)
    assert video_frames(path("pipe264.nut")) == n
    assert packet_md5(path("pipe264.nut"), "v:0") == packet_md5(ref264, "v:0")


def case_y4m_pipe_both_ways():
    n = 40
    for pix in ("yuv420p", "yuv420p10le"):
        src = path(f"src_{pix}.y4m")
        ffmpeg("-f", "lavfi", "-i", f"testsrc2=s=176x144:r=25:d={n / 25},eq=contrast=0.4", "-pix_fmt", pix, "-strict", "-1", src)
        ref = path(f"ref_{pix}.y4m")
        r = e2e.histeq("export", src, "-o", ref, "--cpu", "--progress", "none")  # y4m: its own raw encoder by default
        assert r.returncode == 0, r.stderr
        want = frame_md5s(ref)
        codes, errs, data = shell(f"{FF} -i {q(src)} -strict -1 -f yuv4mpegpipe -",
                                  f"{hq()} export - -o - -f yuv4mpegpipe --cpu --progress none",
                                  f"{FF} -f yuv4mpegpipe -i - -f framemd5 -")
        assert codes == [0, 0, 0], (pix, codes, errs)
        got = md5_lines(data)
        assert len(got) == n and got == want, (pix, len(got), len(want))
        s = streams(ref)[0]
        assert s["pix_fmt"] == pix and s["r_frame_rate"] == "25/1", s


def case_mp4_on_a_pipe_says_so():
    n = 30
    mp4 = path("tail.mp4")  # the muxer's default: the index (moov) after the samples
    ffmpeg("-f", "lavfi", "-i", f"testsrc2=s=160x120:r=30:d={n / 30}", "-c:v", "libx264", "-preset", "ultrafast", mp4)
    out = path("tail.mkv")
    for cmd in (f"export - -o {q(out)} --cpu", "play --headless --max-speed --cpu -"):
        codes, errs, data = shell(f"cat {q(mp4)}", f"{hq()} {cmd}")
        assert codes[1] == 1, (cmd, codes, errs)
        lines = [l for l in errs[1].splitlines() if l.strip()]
        assert len(lines) == 1 and lines[0].startswith("histeq: -: "), lines
        for w in ("index (moov atom) is at the end", "pipe", "-f mpegts", "nut", "matroska"):
            assert w in lines[0], (w, lines[0])
        no_output_left(out)
    # An MP4 with its index first (+faststart) streams: every frame comes through the pipe.
    fast = path("fast.mp4")
    ffmpeg("-i", mp4, "-c", "copy", "-movflags", "+faststart", fast)
    codes, errs, _ = shell(f"cat {q(fast)}", f"{hq()} export - -o {q(out)} --cpu --progress none")
    assert codes == [0, 0], (codes, errs)
    assert video_frames(out) == n


def case_stdout_refusals_are_one_line():
    src = h264_ts("ref.ts", 10)
    cases = [
        (["-o", "-", "-f", "mp4"], 1, "standard output: the mp4 container cannot be written to a pipe"),
        (["-o", "-", "-f", "mov"], 1, "standard output: the mov container cannot be written to a pipe"),
        (["-o", "-", "-f", "image2"], 1, "standard output: the image2 container writes files of its own"),
        (["-o", "-", "-f", "nosuch"], 1, "-f nosuch: no such container in this FFmpeg"),
        (["-o", "-", "-f", "yuv4mpegpipe", "-c", "libx264"], 1, "holds only uncompressed video"),
        (["-o", "-", src], 2, "standard input and output (-) are for one export, not a batch"),
        (["-o", path("dir") + "/"], 2, "standard input and output (-) are for one export, not a batch"),
    ]
    for extra, code, words in cases:
        first = "-" if extra[-1].endswith("/") else src
        r = subprocess.run([e2e.HISTEQ, "export", first, *extra, "--cpu"], capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
        err = r.stderr.decode()
        lines = [l for l in err.splitlines() if l.strip()]
        assert r.returncode == code, (extra, r.returncode, err)
        assert len(lines) == 1 and words in lines[0], (extra, lines)
        assert r.stdout == b"", (extra, r.stdout[:80])  # nothing half-written to the pipe
    # quality reads each clip once per configuration: standard input cannot be one.
    r = e2e.histeq("quality", "-", "-o", path("q"), "--no-metrics")
    assert r.returncode == 2 and r.stderr.strip() == "histeq: -: quality reads each clip once per configuration: give a file, " \
                                                      "not standard input", r.stderr
    # Without -f, standard output gets matroska, said in a note.
    codes, errs, data = shell(f"{hq()} export {q(src)} -o - --cpu --progress none",
                              "ffprobe -v error -count_packets -show_entries format=format_name:stream=nb_read_packets -of json -")
    assert codes == [0, 0], (codes, errs)
    j = json.loads(data)
    assert j["format"]["format_name"].startswith("matroska") and int(j["streams"][0]["nb_read_packets"]) == 10, j
    assert "histeq: note: standard output: matroska (-f picks another container" in errs[0], errs[0]


def case_broken_pipe_ends_with_a_line():
    src = h264_ts("long.ts", 300, size="640x360")
    # The reader takes 100 kB (a frame and a bit of raw 640x360) and exits: histeq's next write fails.
    codes, errs, data = shell(f"{hq()} export {q(src)} -o - -f nut -c rawvideo --cpu --progress none", "head -c 100000", timeout=60)
    assert len(data) == 100000
    lines = [l for l in errs[0].splitlines() if l.strip()]
    assert codes[0] == 1, (codes, errs)
    assert len(lines) == 1 and lines[0].startswith("histeq: standard output: the reader closed the pipe (broken pipe) after "), lines


def case_interrupted_stdout_export_says_the_output_is_incomplete():
    src = h264_ts("int.ts", 300, size="640x360")
    p = subprocess.Popen([e2e.HISTEQ, "export", src, "-o", "-", "-f", "nut", "--preset", "veryslow", "--cpu", "--progress", "none"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert len(p.stdout.read(64)) == 64  # the header is out: the export is running
    p.send_signal(signal.SIGINT)
    p.stdout.read()
    err = p.stderr.read().decode()
    assert p.wait(timeout=60) == 130, (p.returncode, err)
    lines = [l for l in err.splitlines() if l.strip()]
    assert lines == ["histeq: standard output: interrupted; the output is incomplete"], lines


# --- damaged and unusual input on standard input ----------------------------------------------------

def pes_starts(data, stream_ids):
    """Offsets of the PES headers (00 00 01 ID) that start a 188-byte TS packet's payload."""
    out = []
    for off in range(0, len(data) - 187, 188):
        p = data[off:off + 188]
        if p[0] != 0x47 or not p[1] & 0x40:
            continue
        i = 4 + (1 + p[4] if (p[3] >> 4) & 2 else 0)
        if i + 9 < 188 and p[i:i + 3] == b"\x00\x00\x01" and p[i + 3] in stream_ids:
            out.append(off + i)
    return out


def case_damaged_ts_audio_without_timestamps_through_a_pipe():
    # Audio PES headers whose timestamps are lost (their PTS flags cleared) in a codec with no
    # parser to count durations (SMPTE 302M): the copied packets come without a decode time, which
    # slipped past the writer's check and made the muxer fail ("non monotonically increasing dts
    # to muxer in stream 1"). Now each gets the end of the one before it: every packet is written.
    src = path("s302m.ts")
    ffmpeg("-f", "lavfi", "-i", "testsrc2=s=160x90:r=30:d=3", "-f", "lavfi", "-i", "sine=d=3:sample_rate=48000", "-c:v", "libx264",
           "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "s302m", "-strict", "-2", "-ac", "2", src)
    data = bytearray(open(src, "rb").read())
    starts = pes_starts(data, (0xBD, 0xC0))
    assert len(starts) > 30, len(starts)
    for s in starts[len(starts) // 3:len(starts) // 3 + 5]:
        data[s + 7] &= 0x3F  # PTS_DTS_flags: none
    damaged = path("damaged.ts")
    open(damaged, "wb").write(data)
    audio = int(e2e.probe(damaged, "stream=nb_read_packets", select="a:0", count=True)["streams"][0]["nb_read_packets"])
    for out in ("-", path("by_name.ts")):
        if out == "-":
            codes, errs, data = shell(f"cat {q(damaged)}", f"{hq()} export - -o - -f mpegts --cpu --progress none")
            open(path("piped.ts"), "wb").write(data)
            written = path("piped.ts")
        else:
            r = e2e.histeq("export", damaged, "-o", out, "--cpu", "--progress", "none")
            codes, errs, written = [0, r.returncode], ["", r.stderr], out
        assert codes == [0, 0], (out, codes, errs)
        assert video_frames(written) == 90, out
        got = int(e2e.probe(written, "stream=nb_read_packets", select="a:0", count=True)["streams"][0]["nb_read_packets"])
        assert got == audio, (out, got, audio)


def case_unreadable_stdin_says_why():
    out = path("o.mkv")
    # Empty: said so (it was "not a video stream"), for a pipe and for /dev/null.
    for producer in ("true", "cat /dev/null"):
        codes, errs, _ = shell(producer, f"{hq()} export - -o {q(out)} --cpu")
        lines = [l for l in errs[1].splitlines() if l.strip()]
        assert codes[1] == 1 and lines == ["histeq: -: standard input is empty: no data came (did the command before the | "
                                           "fail?)"], (producer, codes, lines)
        no_output_left(out)
    r = subprocess.run([e2e.HISTEQ, "play", "--headless", "--cpu", "-"], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 1 and "standard input is empty" in r.stderr, r.stderr
    # A WebM whose Segment ID is damaged: by name the demuxer skips the damage and seeks back to
    # resync; a pipe cannot seek, and the skip ran to the end of the data ("-: End of file").
    webm = path("seg.webm")
    # (Larger than the reader's buffer: a small file fits in it, and the demuxer goes back there.)
    ffmpeg("-f", "lavfi", "-i", "testsrc2=s=320x180:r=30:d=3", "-f", "lavfi", "-i", "sine=d=3", "-c:v", "libvpx-vp9", "-deadline",
           "realtime", "-cpu-used", "8", "-c:a", "libopus", webm)
    data = bytearray(open(webm, "rb").read())
    at = data.index(b"\x18\x53\x80\x67")
    data[at + 3] = 0x27  # the Segment element's ID, one bit off
    bad = path("bad_segment.webm")
    open(bad, "wb").write(data)
    r = e2e.histeq("export", bad, "-o", out, "-c", "ffv1", "--cpu", "--progress", "none")
    assert r.returncode == 0 and video_frames(out) == 90, r.stderr
    os.remove(out)
    codes, errs, _ = shell(f"cat {q(bad)}", f"{hq()} export - -o {q(out)} --cpu")
    lines = [l for l in errs[1].splitlines() if l.strip()]
    assert codes[1] == 1 and len(lines) == 1 and lines[0].startswith("histeq: -: cannot read this Matroska / WebM from a pipe"), lines
    for w in ("header", "seeking", "give the file's name"):
        assert w in lines[0], (w, lines[0])
    no_output_left(out)


def case_gpu_pipe_matches_the_cpu_file_export():
    # On a GPU machine: standard input decoded by NVDEC (--hwdec auto) and equalized on the GPU,
    # written to standard output: the CPU's file-to-file frames, bit for bit.
    if not e2e.have_gpu():
        raise e2e.Skip("no CUDA device")
    n = 60
    src = h264_ts("gpu.ts", n, size="1280x720")
    ref = path("gpu_ref.nut")
    assert e2e.histeq("export", src, "-o", ref, "-c", "rawvideo", "--cpu", "--progress", "none").returncode == 0
    codes, errs, data = shell(f"{FF} -i {q(src)} -c copy -f mpegts -", f"{hq()} export - -o - -f nut -c rawvideo --progress plain",
                              f"{FF} -f nut -i - -f framemd5 -")
    assert codes == [0, 0, 0], (codes, errs)
    assert "GPU" in errs[1], errs[1]
    got = md5_lines(data)
    assert len(got) == n and got == frame_md5s(ref), (len(got), errs[1])
    print(errs[1].splitlines()[1].strip())  # the decoder: NVDEC where it took the stream


CASES = {k[5:]: v for k, v in sorted(globals().items()) if k.startswith("case_")}

if __name__ == "__main__":
    sys.exit(e2e.main(CASES))
