#!/usr/bin/python3
"""End-to-end tests of the stream choice and encoder control in `histeq export`, run by
CTest (one test per case) with e2e.py's helpers and conventions: each case makes its inputs with the
ffmpeg CLI in a fresh temporary folder, runs the histeq binary and checks the output with ffprobe.

  encode.py --histeq build/app/histeq CASE     (exit 77 = skipped)
  encode.py --list
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402
from e2e import Skip, ffmpeg, frame_md5s, histeq, low_contrast_clip, no_output_left, packet_md5, path, run  # noqa: E402


def have_encoder(name):
    r = run(["ffmpeg", "-hide_banner", "-encoders"])
    return any(l.split()[1:2] == [name] for l in r.stdout.splitlines() if len(l.split()) > 1)


def need(*encoders):
    for e in encoders:
        if not have_encoder(e):
            raise Skip(f"this ffmpeg has no {e} encoder")


def stream_list(file):
    """[(codec_type, codec_name), ...] in output order."""
    r = run(["ffprobe", "-v", "error", "-of", "json", "-show_entries", "stream=codec_type,codec_name", file])
    assert r.returncode == 0, r.stderr
    return [(s["codec_type"], s["codec_name"]) for s in json.loads(r.stdout)["streams"]]


def video_stream(file):
    r = run(["ffprobe", "-v", "error", "-of", "json", "-select_streams", "v:0", "-show_entries",
             "stream=codec_name,profile,pix_fmt,bit_rate,codec_tag_string,color_range,color_primaries,color_transfer,color_space",
             file])
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["streams"][0]


def key_frames(file):
    """Display-order indices of the key frames."""
    r = run(["ffprobe", "-v", "error", "-of", "json", "-select_streams", "v:0", "-show_entries", "frame=key_frame", file])
    assert r.returncode == 0, r.stderr
    return [i for i, f in enumerate(json.loads(r.stdout)["frames"]) if f["key_frame"] == 1]


def audio_end(file):
    """Where the first audio stream's last packet ends, in seconds."""
    r = run(["ffprobe", "-v", "error", "-of", "json", "-select_streams", "a:0", "-show_entries", "packet=pts_time,duration_time", file])
    assert r.returncode == 0, r.stderr
    return max(float(p["pts_time"]) + float(p.get("duration_time", 0)) for p in json.loads(r.stdout)["packets"])


def export_ok(*args):
    r = histeq("export", *args, "--cpu", "--progress", "none")
    assert r.returncode == 0, r.stderr
    return r


def refused(out, *args, code=None, words=()):
    """One line "histeq: ...", a non-zero exit (`code` when given), and no output or temporary file."""
    r = histeq("export", *args, "-o", out, "--cpu", "--progress", "none")
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert r.returncode > 0 and (code is None or r.returncode == code), f"exit {r.returncode}; stderr: {r.stderr}"
    assert len(lines) == 1 and lines[0].startswith("histeq: "), lines
    for w in words:
        assert w in lines[0], f"'{w}' not in '{lines[0]}'"
    no_output_left(out)
    return lines[0]


def multi_stream_clip():
    """H.264 video, two AAC tracks (440 Hz, 880 Hz) and SubRip subtitles, in Matroska."""
    srt = path("subs.srt")
    open(srt, "w").write("1\n00:00:00,000 --> 00:00:01,000\nhello\n\n2\n00:00:01,000 --> 00:00:02,000\nworld\n")
    clip = path("multi.mkv")
    ffmpeg("-f", "lavfi", "-i", "testsrc2=s=160x120:r=30:d=2,eq=contrast=0.4", "-f", "lavfi", "-i", "sine=f=440:d=2",
           "-f", "lavfi", "-i", "sine=f=880:d=2", "-i", srt, "-map", "0", "-map", "1", "-map", "2", "-map", "3",
           "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac", "-c:s", "srt", clip)
    return clip


# --- audio and streams --------------------------------------------------------------------------

def case_webm_with_aac_transcodes_to_opus():
    need("libvpx-vp9", "libopus")
    clip = low_contrast_clip("aac.mp4", size="160x120", seconds=1)
    for extra in (["-c", "libvpx-vp9"], []):  # named, and the default that suits webm
        out = path("out.webm")
        r = export_ok(clip, "-o", out, "-y", *extra)
        assert stream_list(out) == [("video", "vp9"), ("audio", "opus")], (extra, stream_list(out))
        assert "encoded again with libopus" in r.stderr and "webm container cannot hold aac" in r.stderr, r.stderr
    # The opus track ends where the AAC one does (nothing dropped): within 60 ms.
    assert abs(audio_end(out) - audio_end(clip)) < 0.06, (audio_end(out), audio_end(clip))


def case_an_sn_and_map():
    clip = multi_stream_clip()
    base = path("all.mkv")
    export_ok(clip, "-o", base)
    assert [t for t, _ in stream_list(base)] == ["video", "audio", "audio", "subtitle"], stream_list(base)
    cases = {
        ("-an",): (["video", "subtitle"], None),
        ("-sn",): (["video", "audio", "audio"], None),
        ("-an", "-sn"): (["video"], None),
        ("-map", "0:v", "-map", "0:a:1"): (["video", "audio"], "a:1"),
        ("-map", "0", "-map", "-0:a:0"): (["video", "audio", "subtitle"], "a:1"),
        ("-map", "0:2"): (["video", "audio"], "a:1"),
        ("-map", "0:s", "-map", "0:a:7?"): (["video", "subtitle"], None),
    }
    for args, (types, kept_audio) in cases.items():
        out = path("map.mkv")
        export_ok(clip, "-o", out, "-y", *args)
        assert [t for t, _ in stream_list(out)] == types, (args, stream_list(out))
        if kept_audio:  # the chosen track, copied packet for packet
            assert packet_md5(out, "a:0") == packet_md5(clip, kept_audio), args
        assert frame_md5s(out) == frame_md5s(base), args  # the equalized frames do not depend on the streams
    # Before the input, each -map and --encoder-opt takes one value (the input is not taken for one).
    r = histeq("export", "-map", "0:a:1", "--encoder-opt", "tune=film", clip, "-o", path("pre.mkv"), "--cpu", "--progress", "none")
    assert r.returncode == 0, r.stderr
    assert [t for t, _ in stream_list(path("pre.mkv"))] == ["video", "audio"]
    refused(path("bad.mkv"), clip, "-map", "0:a:5", words=("-map 0:a:5", "no such stream"))
    refused(path("bad.mkv"), clip, "-map", "1:a", code=2, words=("there is one input",))
    refused(path("bad.mkv"), clip, "-map", "0:x", code=2, words=("-map '0:x'",))


def case_audio_codec_and_containers():
    need("libopus")
    clip = multi_stream_clip()
    out = path("opus.mkv")
    export_ok(clip, "-o", out, "--audio-codec", "libopus", "-sn")
    assert stream_list(out) == [("video", "h264"), ("audio", "opus"), ("audio", "opus")], stream_list(out)
    out = path("copy.mkv")
    export_ok(clip, "-o", out, "--audio-codec", "copy")
    assert packet_md5(out, "a:0") == packet_md5(clip, "a:0")
    # A container that holds no audio: left out with a note by default, an error when asked for.
    y4m = path("out.y4m")
    r = export_ok(clip, "-o", y4m)
    assert stream_list(y4m) == [("video", "rawvideo")], stream_list(y4m)
    assert r.stderr.count("is left out: the yuv4mpegpipe container holds no audio") == 2, r.stderr
    os.remove(y4m)
    refused(y4m, clip, "-map", "0:a:0", words=("yuv4mpegpipe", "-an"))
    # A container that can hold neither a copy nor the named codec: an error before any work.
    refused(path("bad.webm"), clip, "--audio-codec", "copy", "-sn", words=("webm container cannot hold aac",))
    refused(path("bad.webm"), clip, "--audio-codec", "aac", "-sn", words=("webm container cannot hold aac",))
    refused(path("bad.mkv"), clip, "--audio-codec", "nosuchcodec", words=("no encoder of that name",))
    refused(path("bad.mkv"), clip, "--audio-codec", "libx264", words=("not an audio encoder",))
    # Subtitles MP4 cannot hold: a note by default, an error when named.
    r = export_ok(clip, "-o", path("subs.mp4"))
    assert "not copied: the mp4 container cannot hold it" in r.stderr, r.stderr
    refused(path("subs2.mp4"), clip, "-map", "0:s", words=("cannot be written", "mp4 container cannot hold it"))


# --- the default codec ------------------------------------------------------------------------------

def case_default_codec_follows_the_input():
    need("libx265")
    # 10-bit HEVC, fully tagged (BT.709, tv range), and one tagged with the range only.
    full = path("hevc10.mp4")
    ffmpeg("-f", "lavfi", "-i", "testsrc2=s=320x180:r=30:d=1,eq=contrast=0.35", "-c:v", "libx265", "-x265-params", "log-level=error",
           "-pix_fmt", "yuv420p10le", "-color_range", "tv", "-color_primaries", "bt709", "-color_trc", "bt709", "-colorspace", "bt709", full)
    range_only = path("hevc10r.mkv")
    ffmpeg("-f", "lavfi", "-i", "testsrc2=s=320x180:r=30:d=1,eq=contrast=0.35", "-c:v", "libx265", "-x265-params", "log-level=error",
           "-pix_fmt", "yuv420p10le", "-color_range", "tv", range_only)
    for src, out in ((full, path("o_full.mp4")), (range_only, path("o_range.mp4")), (range_only, path("o_range.mkv"))):
        r = export_ok(src, "-o", out)
        if "has no libx265 encoder" in r.stderr:  # histeq's own FFmpeg libraries (a static build) may lack it
            raise Skip("histeq's FFmpeg has no libx265")
        v = video_stream(out)
        assert v["codec_name"] == "hevc" and v["pix_fmt"] == "yuv420p10le", (out, v)
        assert v.get("color_range") == "tv", (out, v)
        assert "x265 [" not in r.stderr, r.stderr  # x265's own banner stays quiet
    v = video_stream(path("o_full.mp4"))
    assert (v["color_primaries"], v["color_transfer"], v["color_space"]) == ("bt709", "bt709", "bt709"), v
    # H.264 in: libx264 as before, the same frames as naming it.
    h264 = low_contrast_clip("h264.mp4", size="160x120", seconds=1, audio=False)
    export_ok(h264, "-o", path("d.mp4"))
    export_ok(h264, "-o", path("x.mp4"), "-c", "libx264")
    assert video_stream(path("d.mp4"))["codec_name"] == "h264"
    assert frame_md5s(path("d.mp4")) == frame_md5s(path("x.mp4"))


def case_batch_of_webm_inputs():
    need("libvpx-vp9", "libopus")
    folder = path("webm")
    os.makedirs(folder)
    for i in range(2):
        ffmpeg("-f", "lavfi", "-i", f"testsrc2=s=160x120:r=15:d=1,eq=contrast=0.3{i}", "-f", "lavfi", "-i", "sine=d=1",
               "-c:v", "libvpx-vp9", "-deadline", "realtime", "-c:a", "libopus", os.path.join(folder, f"c{i}.webm"))
    out = path("out")
    r = histeq("export", folder, "-o", out + "/", "--cpu", "--progress", "none")
    assert r.returncode == 0, r.stderr
    for i in range(2):
        assert stream_list(os.path.join(out, f"c{i}.webm")) == [("video", "vp9"), ("audio", "opus")]
    # And H.264 inputs written as .webm (--ext): the container's VP9, the audio as Opus.
    h264 = path("h264")
    os.makedirs(h264)
    low_contrast_clip("h264/a.mp4", size="160x120", seconds=1)
    r = histeq("export", h264, "-o", path("out2") + "/", "--ext", "webm", "--cpu", "--progress", "none")
    assert r.returncode == 0, r.stderr
    assert stream_list(path("out2/a.webm")) == [("video", "vp9"), ("audio", "opus")]


# --- encoder control --------------------------------------------------------------------------------

def case_bitrate_and_gop():
    noisy = path("noisy.mp4")
    ffmpeg("-f", "lavfi", "-i", "testsrc2=s=320x180:r=30:d=3,noise=alls=30:allf=t,eq=contrast=0.5", "-c:v", "libx264", "-crf", "10",
           "-preset", "ultrafast", noisy)
    out = path("rate.mp4")
    export_ok(noisy, "-o", out, "--bitrate", "300k")
    rate = int(video_stream(out)["bit_rate"])
    assert 150_000 < rate < 450_000, rate
    crf = path("crf.mp4")
    export_ok(noisy, "-o", crf)
    assert int(video_stream(crf)["bit_rate"]) > 2 * rate  # the option changed something
    out = path("gop.mp4")
    export_ok(noisy, "-o", out, "--gop", "10", "--encoder-opt", "sc_threshold=0")
    assert key_frames(out) == list(range(0, 90, 10)), key_frames(out)
    assert len(key_frames(crf)) < 9, key_frames(crf)  # not the encoder's default


def case_pix_fmt_tag_and_encoder_opts():
    need("libx265")
    clip = low_contrast_clip("c.mp4", size="160x120", seconds=1, audio=False)
    for fmt in ("yuv444p", "yuv420p10le", "yuv422p"):
        out = path(f"p_{fmt}.mkv")
        export_ok(clip, "-o", out, "--pix-fmt", fmt)
        assert video_stream(out)["pix_fmt"] == fmt, (fmt, video_stream(out))
    out = path("tag.mp4")
    export_ok(clip, "-o", out, "-c", "libx265", "--tag", "hvc1")
    v = video_stream(out)
    assert (v["codec_name"], v["codec_tag_string"]) == ("hevc", "hvc1"), v
    export_ok(clip, "-o", path("tag2.mp4"), "-c", "libx265")
    assert video_stream(path("tag2.mp4"))["codec_tag_string"] == "hev1"  # the muxer's own without --tag
    out = path("base.mp4")
    export_ok(clip, "-o", out, "--encoder-opt", "profile=baseline", "--encoder-opt", "x264-params=keyint=5")
    assert video_stream(out)["profile"] == "Constrained Baseline", video_stream(out)
    assert key_frames(out)[:3] == [0, 5, 10], key_frames(out)


def case_bad_encoder_settings():
    clip = low_contrast_clip("c.mp4", size="160x120", seconds=1, audio=False)
    out = path("bad.mp4")
    refused(out, clip, "--encoder-opt", "nosuchkey=1", code=1, words=("--encoder-opt nosuchkey", "libx264", "no option"))
    refused(out, clip, "--encoder-opt", "crf=abc", code=1, words=("--encoder-opt crf=abc", "refuses"))
    refused(out, clip, "--encoder-opt", "novalue", code=2, words=("KEY=VALUE",))
    # With -c named, checked before any input is opened (a usage error), a batch's too.
    refused(out, clip, "-c", "libx264", "--encoder-opt", "nosuchkey=1", code=2, words=("--encoder-opt nosuchkey", "no option"))
    refused(out, clip, "--pix-fmt", "rgb24", code=1, words=("--pix-fmt rgb24", "does not take it"))
    refused(out, clip, "--pix-fmt", "nosuchfmt", code=1, words=("no such pixel format",))
    refused(out, clip, "--pix-fmt", "nv12", code=1, words=("planar YUV",))
    refused(out, clip, "--bitrate", "fast", code=2, words=("--bitrate 'fast'",))
    refused(out, clip, "--tag", "hvc", code=2, words=("four characters",))
    refused(out, clip, "--tag", "hvc1", "-c", "libx264", code=1, words=("hvc1",))  # H.264 in MP4 cannot be tagged hvc1
    folder = path("batch")
    os.makedirs(folder)
    os.rename(clip, os.path.join(folder, "c.mp4"))
    r = histeq("export", folder, "-o", path("out") + "/", "-c", "libx264", "--encoder-opt", "nosuchkey=1", "--cpu")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, (r.returncode, r.stderr)
    assert not os.path.exists(path("out")) or os.listdir(path("out")) == [], os.listdir(path("out"))


def case_gpu_nvdec_frames_into_the_chosen_encoder():
    """NVDEC's P010 frames into --pix-fmt and into the default HEVC encoder (the writer converts them):
    the same frames as the CPU path, the input's depth and range tag kept."""
    if not e2e.have_gpu():
        raise Skip("no CUDA device")
    need("libx265")
    src = path("hevc10.mkv")
    ffmpeg("-f", "lavfi", "-i", "testsrc2=s=640x360:r=30:d=1,eq=contrast=0.35", "-c:v", "libx265", "-x265-params", "log-level=error",
           "-pix_fmt", "yuv420p10le", "-color_range", "tv", src)
    a, b = path("cpu.mkv"), path("gpu.mkv")
    export_ok(src, "-o", a, "-c", "ffv1", "--pix-fmt", "yuv420p10le")
    r = histeq("export", src, "-o", b, "-c", "ffv1", "--pix-fmt", "yuv420p10le", "--hwdec", "nvdec", "--progress", "plain")
    assert r.returncode == 0 and "NVDEC" in r.stderr, r.stderr
    assert frame_md5s(a) == frame_md5s(b)
    out = path("gpu_default.mkv")  # Matroska keeps the range tag even where libx264 stands in (a static FFmpeg without libx265)
    r = histeq("export", src, "-o", out, "--hwdec", "nvdec", "--progress", "plain")
    assert r.returncode == 0, r.stderr
    v = video_stream(out)
    want = ("h264", "yuv420p10le") if "has no libx265 encoder" in r.stderr else ("hevc", "yuv420p10le")
    assert (v["codec_name"], v["pix_fmt"]) == want and v.get("color_range") == "tv", (v, r.stderr)


CASES = {k[5:]: v for k, v in sorted(globals().items()) if k.startswith("case_")}

if __name__ == "__main__":
    sys.exit(e2e.main(CASES))
