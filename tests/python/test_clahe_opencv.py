"""CLAHE against OpenCV's: with the textbook levels (textbook=True), histeq's CLAHE is OpenCV's
createCLAHE on any picture size, on every picture scikit-image's data module ships (grey, or RGB
made grey by OpenCV), within 2 levels: OpenCV pads a picture that is not a whole number of tiles
by reflection and lays its tile grid over the padded picture (core/equalize/tone.h, "OpenCV's tile
grid"). What remains is rounding (OpenCV's float weights and LUT scale against histeq's integer
ones): a level here and there. On the GPU the frames are the CPU's, bit for bit.
"""
import numpy as np
import pytest

import histeq

cv2 = pytest.importorskip("cv2", reason="python3-opencv is not installed (scripts/setup.sh installs it)")
skdata = pytest.importorskip("skimage.data", reason="python3-skimage is not installed (scripts/setup.sh installs it)")

# Helpers of the module, and binary_blobs, which draws a random picture rather than shipping one.
NOT_PICTURES = {"binary_blobs", "create_image_fetcher", "data_dir", "download_all", "file_hash", "image_fetcher",
                "lbp_frontal_face_cascade_filename"}


def grey(a):
    """An 8-bit grey picture of a picture skimage.data returns, or None (a stack, a volume)."""
    if a.dtype == bool:
        a = a.astype(np.uint8) * 255
    elif a.dtype != np.uint8:
        a = np.clip(np.round(a.astype(np.float64) * (255 if a.max() <= 1 else 1)), 0, 255).astype(np.uint8)
    if a.ndim == 3 and a.shape[2] in (3, 4):
        a = cv2.cvtColor(a, cv2.COLOR_RGBA2GRAY if a.shape[2] == 4 else cv2.COLOR_RGB2GRAY)
    return np.ascontiguousarray(a) if a.ndim == 2 else None


def pictures():
    """name -> grey picture, for every picture the installed scikit-image ships (those it would
    download first are not shipped)."""
    out = {}
    for name in sorted(skdata.__all__):
        f = getattr(skdata, name, None)
        if name in NOT_PICTURES or not callable(f):
            continue
        try:
            got = f()
        except Exception:  # noqa: BLE001 (not shipped: would be downloaded)
            continue
        for i, a in enumerate(got if isinstance(got, tuple) else (got,)):
            g = grey(a) if isinstance(a, np.ndarray) else None
            if g is not None:
                out[name if not isinstance(got, tuple) else f"{name}[{i}]"] = g
    return out


PICTURES = pictures()


def test_the_data_module_ships_pictures_of_every_kind():
    sizes = [g.shape for g in PICTURES.values()]
    assert len(PICTURES) >= 20, sorted(PICTURES)
    whole = sum(h % 8 == 0 and w % 8 == 0 for h, w in sizes)
    assert 0 < whole < len(sizes), "the pictures must hold both whole and partial tiles"


def clahe(g, backend="auto", **extra):
    return histeq.equalize(g, mode="clahe", clip_limit=2, textbook=True, range="full", backend=backend, **extra)


@pytest.mark.parametrize("name", sorted(PICTURES))
def test_textbook_clahe_is_opencvs(name):
    g = PICTURES[name]
    want = cv2.createCLAHE(clipLimit=2, tileGridSize=(8, 8)).apply(g)
    d = np.abs(clahe(g).astype(int) - want.astype(int))
    print(name, g.shape, "max", int(d.max()), "mean %.4f" % d.mean())
    assert d.max() <= 2 and d.mean() < 0.05, f"{name} {g.shape}: {int(d.max())} levels from OpenCV's at most, {d.mean():.4f} on average"


@pytest.mark.parametrize("tiles,clip", [((4, 4), 2.0), ((13, 5), 3.0), ((8, 8), 0.0), ((3, 7), 1.5)])
def test_other_grids_and_clips(tiles, clip):
    # Odd grids and sizes, the clip off (OpenCV's 0): every size scikit-image ships.
    for name, g in PICTURES.items():
        want = cv2.createCLAHE(clipLimit=clip, tileGridSize=tiles).apply(g)
        got = histeq.equalize(g, mode="clahe", clip_limit=clip, tiles=f"{tiles[0]}x{tiles[1]}", textbook=True, range="full")
        d = np.abs(got.astype(int) - want.astype(int))
        assert d.max() <= 2, f"{name} {g.shape} tiles {tiles} clip {clip}: {int(d.max())} levels from OpenCV's"


def test_tiny_pictures_pad_as_opencv_does():
    # Smaller than the grid: OpenCV pads to a whole number of tiles of one sample and more (the
    # reflection folds back on itself), and so does the textbook CLAHE.
    rng = np.random.default_rng(7)
    for h, w in [(1, 1), (2, 3), (5, 7), (7, 9), (9, 16), (16, 9), (17, 33)]:
        g = rng.integers(0, 256, size=(h, w), dtype=np.uint8)
        want = cv2.createCLAHE(clipLimit=2, tileGridSize=(8, 8)).apply(g)
        d = np.abs(clahe(g).astype(int) - want.astype(int))
        assert d.max() <= 2, f"{h}x{w}: {int(d.max())} levels from OpenCV's"


def test_on_the_gpu_the_frames_are_the_cpus(gpu):
    for name, g in PICTURES.items():
        assert np.array_equal(clahe(g, backend="gpu"), clahe(g, backend="cpu")), name
