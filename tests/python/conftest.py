"""Shared fixtures of the Python module's tests (ctest -L python runs each file with pytest).

The module comes from PYTHONPATH (ctest: build/python, the normal build's copy; by hand: that, or
an installed histeq); the CLI for the comparisons with `histeq export` from HISTEQ_BIN (default
build/app/histeq). A test that cannot run here (no ffmpeg, no GPU, no torch/cupy) is skipped with
its reason, never passed.
"""
import os
import shutil
import subprocess

import numpy as np
import pytest

import histeq

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="session")
def histeq_bin():
    path = os.environ.get("HISTEQ_BIN", os.path.join(ROOT, "build", "app", "histeq"))
    if not os.access(path, os.X_OK):
        pytest.skip(f"no histeq CLI at {path} (set HISTEQ_BIN)")
    return path


@pytest.fixture(scope="session")
def ffmpeg():
    if not shutil.which("ffmpeg"):
        pytest.skip("no ffmpeg CLI on PATH")
    return shutil.which("ffmpeg")


@pytest.fixture(scope="session")
def gpu():
    if not histeq.gpu_available():
        pytest.skip("no CUDA device")


def read_raw(path, width, height, depth):
    """The frames of a video as (y, u, v) numpy planes, decoded by the ffmpeg CLI."""
    pix = "yuv420p" if depth == 8 else "yuv420p10le"
    r = subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-i", path, "-f", "rawvideo", "-pix_fmt", pix, "-"],
                       capture_output=True, check=True)
    dtype = np.uint8 if depth == 8 else np.uint16
    data = np.frombuffer(r.stdout, dtype=dtype)
    cw, ch = (width + 1) // 2, (height + 1) // 2
    size = width * height + 2 * cw * ch
    frames = []
    for k in range(len(data) // size):
        f = data[k * size:(k + 1) * size]
        y = f[:width * height].reshape(height, width)
        u = f[width * height:width * height + cw * ch].reshape(ch, cw)
        v = f[width * height + cw * ch:].reshape(ch, cw)
        frames.append((y, u, v))
    return frames


def picture(height=180, width=320, seed=0, depth=8):
    """A deterministic low-contrast picture (so equalization has work to do)."""
    rng = np.random.default_rng(seed)
    ramp = np.add.outer(np.arange(height) * 3, np.arange(width) * 2) % 97
    y = 60 + ramp + rng.integers(0, 8, (height, width))
    return (y * (4 if depth == 10 else 1)).astype(np.uint8 if depth == 8 else np.uint16)

