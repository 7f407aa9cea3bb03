"""histeq's Python results equal `histeq export`'s frames bit for bit: a clip made with
ffmpeg (lossless rawvideo in NUT, with a fade so the temporal filter has work), exported with
--codec rawvideo, against an Equalizer fed the same decoded frames with their times, compared
plane by plane, frame by frame; defaults, plain and CLAHE, 8 and 10 bits. Both run on the CPU here
(export: no GPU; the Equalizer: backend="cpu" so that a GPU machine compares the same path too).
"""
import os
import subprocess

import numpy as np
import pytest

import histeq
from conftest import read_raw

W, H, FPS, FRAMES = 320, 180, 25, 16
LOOKS = {  # the CLI's options and the same settings as keywords
    "defaults": ([], {}),
    "plain": (["--plain"], {"plain": True}),
    "clahe": (["--mode", "clahe", "--tiles", "4x3", "--clip-limit", "2"], {"mode": "clahe", "tiles": (4, 3), "clip_limit": 2}),
}


@pytest.fixture(scope="module", params=[8, 10])
def clip(request, ffmpeg, tmp_path_factory):
    depth = request.param
    path = str(tmp_path_factory.mktemp("clip") / f"in{depth}.nut")
    pix = "yuv420p" if depth == 8 else "yuv420p10le"
    subprocess.run([ffmpeg, "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i",
                    f"testsrc2=s={W}x{H}:r={FPS}:d={FRAMES / FPS},fade=in:0:10,eq=contrast=0.6",
                    "-pix_fmt", pix, "-c:v", "rawvideo", path], check=True)
    return path, depth


@pytest.mark.parametrize("look", sorted(LOOKS))
def test_equalizer_matches_export(clip, look, histeq_bin, tmp_path):
    path, depth = clip
    options, controls = LOOKS[look]
    out = str(tmp_path / "out.nut")
    r = subprocess.run([histeq_bin, "export", path, "-o", out, "--codec", "rawvideo", "--cpu", "--progress", "none", "-y"]
                       + options, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    want = read_raw(out, W, H, depth)
    frames = read_raw(path, W, H, depth)
    assert len(want) == len(frames) == FRAMES
    eq = histeq.Equalizer(backend="cpu", **controls)
    changed = False
    for k, (f, w) in enumerate(zip(frames, want)):
        got = eq(f, time=k / FPS)
        for p, name in enumerate("yuv"):
            assert got[p].dtype == w[p].dtype and got[p].shape == w[p].shape
            diff = np.count_nonzero(got[p] != w[p])
            assert diff == 0, f"{look}, {depth}-bit, frame {k}, plane {name}: {diff} samples differ from histeq export"
        changed |= not np.array_equal(got[0], f[0])
    assert changed, "the clip was not equalized at all (the comparison would prove nothing)"


def test_luma_only_matches_the_luma_of_export(clip, histeq_bin, tmp_path):
    """A Y-only frame gets the luma of the full frame (chroma does not feed the luma's curve)."""
    path, depth = clip
    out = str(tmp_path / "out.nut")
    r = subprocess.run([histeq_bin, "export", path, "-o", out, "--codec", "rawvideo", "--cpu", "--progress", "none", "-y",
                        "--chroma", "keep"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    want = read_raw(out, W, H, depth)
    eq = histeq.Equalizer(backend="cpu", chroma="keep")
    for k, (f, w) in enumerate(zip(read_raw(path, W, H, depth), want)):
        assert np.array_equal(eq(f[0], time=k / FPS), w[0]), f"frame {k}"
