"""The frames Python users hold (host, numpy): OpenCV's BGR and RGB pictures against OpenCV, 4:4:4
planes, 12/16-bit and float arrays against numpy references of the documented conversions, NHW /
NHWC / NCHW batches against frame-by-frame calls, PyAV frames and their (1.5 H) x W arrays,
non-contiguous, reversed and broadcast arrays, and bad arrays that leave out= untouched."""
import numpy as np
import pytest

import histeq
from conftest import picture


def photo(seed=0, h=240, w=320):
    """A colour picture with structure (skimage's astronaut when there, else a made one), as BGR."""
    try:
        from skimage import data
        rgb = data.astronaut()[:h, :w]
    except Exception:
        rng = np.random.default_rng(seed)
        yy, xx = np.mgrid[0:h, 0:w]
        rgb = np.stack([(xx * 255 // w), (yy * 255 // h), ((xx + yy) % 97) * 2], -1) // 2 + 40
        rgb = np.clip(rgb + rng.integers(0, 12, rgb.shape), 0, 255).astype(np.uint8)
    return np.ascontiguousarray(rgb[..., ::-1])


# ---- colour: OpenCV's order, OpenCV's numbers ------------------------------------------------------

def test_bgr_equals_opencv_ycrcb_equalize_hist_and_back():
    cv2 = pytest.importorskip("cv2")
    for bgr in (photo(), photo(h=121, w=203), np.random.default_rng(1).integers(30, 120, (90, 160, 3), dtype=np.uint8)):
        ycrcb = cv2.cvtColor(bgr, cv2.COLOR_BGR2YCrCb)
        ycrcb[..., 0] = cv2.equalizeHist(ycrcb[..., 0])
        want = cv2.cvtColor(ycrcb, cv2.COLOR_YCrCb2BGR)
        got = histeq.equalize(bgr, plain=True, textbook=True)
        assert got.shape == bgr.shape and got.dtype == np.uint8
        diff = np.abs(got.astype(int) - want.astype(int))
        assert diff.max() <= 1 and (diff == 0).mean() >= 0.99, (diff.max(), (diff == 0).mean())
        # RGB: the same picture with its channels the other way round.
        rgb = np.ascontiguousarray(bgr[..., ::-1])
        assert np.array_equal(histeq.equalize(rgb, channels="rgb", plain=True, textbook=True), got[..., ::-1])


def test_the_luma_is_equalized_and_the_alpha_kept():
    cv2 = pytest.importorskip("cv2")
    bgr = photo()
    bgra = np.concatenate([bgr, np.arange(bgr.size // 3, dtype=np.uint8).reshape(bgr.shape[:2] + (1,))], -1)
    got = histeq.equalize(bgra, plain=True, textbook=True)
    assert np.array_equal(got[..., 3], bgra[..., 3])
    assert np.array_equal(got[..., :3], histeq.equalize(bgr, plain=True, textbook=True))
    y = cv2.cvtColor(got[..., :3], cv2.COLOR_BGR2YCrCb)[..., 0]
    assert np.abs(np.bincount(y.ravel(), minlength=256).cumsum() / y.size - np.arange(1, 257) / 256).max() < 0.05  # flat histogram
    # The defaults (not plain) work on colour too, and change the colours with the luma (chroma "auto").
    d = histeq.equalize(bgr)
    assert d.shape == bgr.shape and not np.array_equal(d, bgr)


def test_444_planes():
    y = picture()
    rng = np.random.default_rng(2)
    u, v = (rng.integers(100, 156, y.shape, dtype=np.uint8) for _ in range(2))
    yo, uo, vo = histeq.equalize((y, u, v), chroma="keep")
    assert np.array_equal(yo, histeq.equalize(y)) and np.array_equal(uo, u) and np.array_equal(vo, v)
    yo, uo, vo = histeq.equalize((y, u, v))  # chroma "auto": the colours follow the luma's gain
    assert uo.shape == y.shape and not np.array_equal(uo, u)
    y10, u10 = y.astype(np.uint16) * 4, u.astype(np.uint16) * 4
    r = histeq.equalize((y10, u10, u10.copy()), chroma="keep")
    assert np.array_equal(r[0], histeq.equalize(y10)) and np.array_equal(r[1], u10)


# ---- depths: 12/16-bit and float against the documented conversions ------------------------------

def test_sixteen_and_twelve_bits_scale_to_ten_and_back():
    rng = np.random.default_rng(4)
    y16 = (picture().astype(np.uint32) * 200 + rng.integers(0, 200, (180, 320))).astype(np.uint16)
    with pytest.raises(ValueError, match="bits=12 or bits=16"):
        histeq.equalize(y16)
    for bits, y in ((16, y16), (12, y16 >> 4)):
        m = (1 << bits) - 1
        ten = ((y.astype(np.int64) * 1023 + m // 2) // m).astype(np.uint16)
        eq10 = histeq.equalize(ten, full_range=True)
        want = ((eq10.astype(np.int64) * m + 511) // 1023).astype(np.uint16)
        got = histeq.equalize(y, bits=bits)
        assert got.dtype == np.uint16 and np.array_equal(got, want), bits
    with pytest.raises(ValueError, match="exceed bits=12"):
        histeq.equalize(y16, bits=12)
    ok10 = picture(depth=10)
    assert np.array_equal(histeq.equalize(ok10, bits=10), histeq.equalize(ok10))
    with pytest.raises(ValueError, match="bits"):
        histeq.equalize(picture(), bits=12)  # uint8 takes no bits=


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_float_in_unit_range_is_ten_bit_luma(dtype):
    x = (picture().astype(np.float64) / 255).astype(dtype)
    ten = np.clip(np.floor(x.astype(np.float64 if dtype == np.float64 else np.float32) * 1023 + 0.5), 0, 1023).astype(np.uint16)
    eq10 = histeq.equalize(ten, full_range=True)
    got = histeq.equalize(x)
    assert got.dtype == dtype and got.shape == x.shape
    want = eq10 / 1023.0 if dtype == np.float64 else (np.float32(1) * eq10 / np.float32(1023)).astype(dtype)
    assert np.array_equal(got, want.astype(dtype))
    bad = x.copy()
    bad[3, 4] = 1.5
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        histeq.equalize(bad)
    bad[3, 4] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        histeq.equalize(bad)


def test_float_colour():
    bgr = photo().astype(np.float32) / 255
    got = histeq.equalize(bgr, plain=True, textbook=True)
    assert got.dtype == np.float32 and got.shape == bgr.shape and 0 <= got.min() and got.max() <= 1
    u8 = histeq.equalize(photo(), plain=True, textbook=True).astype(np.float32) / 255
    assert np.abs(got - u8).mean() < 0.01  # the same picture, at 10 bits instead of 8


# ---- batches ---------------------------------------------------------------------------------------

def test_batches_are_one_video_in_order_or_each_alone_with_temporal_zero():
    frames = np.stack([picture(seed=s) // (1 + s % 2) + 10 * s for s in range(5)])  # N x H x W
    eq = histeq.Equalizer()
    want = np.stack([eq(f, time=k / 25) for k, f in enumerate(frames)])
    assert np.array_equal(histeq.Equalizer()(frames, time=[k / 25 for k in range(5)]), want)
    each = histeq.equalize(frames, temporal=0)
    for k in range(5):
        assert np.array_equal(each[k], histeq.equalize(frames[k], temporal=0)), k
    with pytest.raises(ValueError, match="times for 5 frames"):
        histeq.Equalizer()(frames, time=[0, 1])


def test_colour_batches_nhwc_and_nchw():
    bgr = np.stack([photo(), photo()[::-1].copy(), photo()[:, ::-1].copy()])  # N x H x W x 3
    want = np.stack([histeq.equalize(b, temporal=0) for b in bgr])
    assert np.array_equal(histeq.equalize(bgr, temporal=0), want)
    nchw = np.ascontiguousarray(bgr.transpose(0, 3, 1, 2))
    got = histeq.equalize(nchw, temporal=0)
    assert got.shape == nchw.shape and np.array_equal(got.transpose(0, 2, 3, 1), want)
    assert np.array_equal(histeq.equalize(nchw[0], layout="CHW", temporal=0).transpose(1, 2, 0), want[0])
    with pytest.raises(ValueError, match="layout='NHWC' or layout='NCHW'"):
        histeq.equalize(np.zeros((2, 3, 4, 3), np.uint8))


# ---- PyAV ------------------------------------------------------------------------------------------

def test_pyav_frames_and_their_packed_arrays():
    av = pytest.importorskip("av")
    y = picture()
    chroma = np.add.outer(np.arange(90), np.arange(160)) // 4 % 50  # smooth, as chroma is
    u, v = (100 + chroma).astype(np.uint8), (150 - chroma).astype(np.uint8)
    packed = np.concatenate([y, u.reshape(45, 320), v.reshape(45, 320)])  # PyAV's yuv420p to_ndarray()
    frame = av.VideoFrame.from_ndarray(packed, format="yuv420p")
    frame.pts = 7
    want = histeq.equalize((y, u, v))
    got = histeq.equalize(frame)
    assert type(got) is type(frame) and got.format.name == "yuv420p" and got.pts == 7
    assert np.array_equal(got.to_ndarray(), np.concatenate([want[0], want[1].reshape(45, 320), want[2].reshape(45, 320)]))
    assert np.array_equal(histeq.Equalizer()(frame).to_ndarray(), got.to_ndarray())
    with pytest.raises(ValueError, match="yuv420p_planes"):
        histeq.equalize(frame.to_ndarray())  # never read as one grey picture
    planes = histeq.yuv420p_planes(packed)
    assert all(np.shares_memory(p, packed) for p in planes)
    out = np.empty_like(packed)
    histeq.equalize(planes, out=histeq.yuv420p_planes(out))
    assert np.array_equal(out, got.to_ndarray())
    rgb = av.VideoFrame.from_ndarray(photo()[..., ::-1].copy(), format="rgb24")
    assert np.array_equal(histeq.equalize(rgb, plain=True).to_ndarray(),
                          histeq.equalize(photo(), plain=True)[..., ::-1])


def test_decoded_video_frames_and_their_arrays(tmp_path, ffmpeg):
    """Frames PyAV decodes from a real clip: the VideoFrame is equalized as its planes, and its
    to_ndarray() (one (1.5 H) x W array) is refused, never read as grey."""
    av = pytest.importorskip("av")
    import subprocess
    clip = str(tmp_path / "c.mp4")
    subprocess.run([ffmpeg, "-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=10:duration=1",
                    "-vf", "eq=contrast=0.5", "-pix_fmt", "yuv420p", "-c:v", "libx264", clip], check=True)
    eq, ref = histeq.Equalizer(), histeq.Equalizer()
    with av.open(clip) as c:
        for n, frame in enumerate(c.decode(video=0)):
            a = frame.to_ndarray()
            assert a.shape == (360, 320)
            with pytest.raises(ValueError, match="yuv420p_planes"):
                histeq.equalize(a)
            got = eq(frame)
            want = ref(histeq.yuv420p_planes(a), time=frame.time)
            assert np.array_equal(got.to_ndarray(), np.concatenate([want[0], want[1].reshape(60, 320), want[2].reshape(60, 320)])), n


def test_grey_pictures_with_a_third_of_rows_are_still_grey():
    """(1.5 H) x W is also the shape of ordinary pictures (1080 rows = 1.5 x 720): only arrays that
    hold yuv420p are refused."""
    rng = np.random.default_rng(7)
    pics = [picture(), picture(1080, 1920), rng.integers(0, 256, (240, 320), dtype=np.uint8),
            np.clip(rng.normal(40, 10, (240, 320)), 0, 255).astype(np.uint8), np.full((90, 64), 128, np.uint8)]
    try:
        from skimage import data
        pics += [data.coins()[:300], data.camera()[:510], data.text()[:171], data.moon()[:510]]
    except Exception:
        pass
    for p in pics:
        assert p.shape[0] % 3 == 0
        histeq.equalize(p)  # no error
    packed = np.concatenate([picture(), np.full((90, 320), 128, np.uint8)])  # a grey video's yuv420p
    with pytest.raises(ValueError, match="yuv420p_planes"):
        histeq.equalize(packed)
    histeq.equalize(packed, layout="HW")  # read as grey when asked


# ---- strides ---------------------------------------------------------------------------------------

def test_one_channel_and_reversed_channel_views():
    y = picture()
    g = histeq.equalize(y[..., None])  # H x W x 1: grey
    assert g.shape == (180, 320, 1) and np.array_equal(g[..., 0], histeq.equalize(y))
    bgr = photo()
    assert np.array_equal(histeq.equalize(bgr[..., ::-1], channels="rgb"), histeq.equalize(bgr)[..., ::-1])
    frames = np.stack([y, y // 2 + 40])
    assert np.array_equal(histeq.equalize(frames[:, None], temporal=0)[:, 0], histeq.equalize(frames, temporal=0))  # N x 1 x H x W


def test_non_contiguous_reversed_and_broadcast_inputs_are_read_through_a_copy():
    y = picture()
    for view in (y[:, ::2], y[::-1], y[::-2, ::-3], np.asfortranarray(y), y.T):
        assert np.array_equal(histeq.equalize(view), histeq.equalize(np.ascontiguousarray(view)))
    b = np.broadcast_to(np.arange(256, dtype=np.uint8), (300, 256))
    assert np.array_equal(histeq.equalize(b), histeq.equalize(np.ascontiguousarray(b)))
    bgr = photo()
    assert np.array_equal(histeq.equalize(bgr[::2, ::2]), histeq.equalize(np.ascontiguousarray(bgr[::2, ::2])))


def test_out_is_written_through_its_strides_never_replaced():
    y = picture()
    want = histeq.equalize(y)
    big = np.zeros((180, 640), np.uint8)
    r = histeq.equalize(y, out=big[:, ::2])
    assert r.base is big or np.shares_memory(r, big)
    assert np.array_equal(big[:, ::2], want) and not big[:, 1::2].any()
    flipped = np.zeros_like(y)
    histeq.equalize(y, out=flipped[::-1])
    assert np.array_equal(flipped[::-1], want)
    inplace = y.copy()
    histeq.equalize(inplace[:, ::2], out=inplace[:, ::2])
    assert np.array_equal(inplace[:, ::2], histeq.equalize(np.ascontiguousarray(y[:, ::2]))) and np.array_equal(inplace[:, 1::2], y[:, 1::2])


BAD_OUT = [  # (the call on y and out, out's dtype, error, words)
    (lambda y, o: histeq.equalize(y, out=np.broadcast_to(o[:1], o.shape)), np.uint8, ValueError, "overlap"),
    (lambda y, o: histeq.equalize(y.astype(np.uint16) * 64, out=o), np.uint16, ValueError, "bits"),
    (lambda y, o: histeq.equalize(y.astype(np.float32), out=o), np.float32, ValueError, "[0, 1]"),
    (lambda y, o: histeq.equalize(np.stack([y, y]), out=o), np.uint8, ValueError, "shape"),
    (lambda y, o: histeq.equalize(y, out=o, layout="HWC"), np.uint8, ValueError, "layout"),
    (lambda y, o: histeq.equalize(y, out=o, channels="rgba"), np.uint8, ValueError, "channels"),
    (lambda y, o: histeq.equalize(y, out=o, bits=2**40), np.uint8, ValueError, "bits: 1099511627776 is not 10, 12 or 16"),
    (lambda y, o: histeq.equalize(y, out=o, bits=2**80), np.uint8, OverflowError, "bits"),
    (lambda y, o: histeq.equalize(y.astype(np.int32), out=o), np.uint8, TypeError, "uint8, uint16, float16"),
    (lambda y, o: histeq.equalize(np.zeros((2, 3, 4, 5, 6), np.uint8), out=o), np.uint8, ValueError, "5-D"),
    (lambda y, o: histeq.equalize(y, out=o, strength=10**400), np.uint8, OverflowError, "strength"),
    (lambda y, o: histeq.Equalizer()(y, out=o, time=[1, 2]), np.uint8, ValueError, "time"),
]


@pytest.mark.parametrize("case", range(len(BAD_OUT)))
def test_a_bad_array_raises_one_error_and_leaves_out_untouched(case):
    call, dtype, error, words = BAD_OUT[case]
    y = picture()
    out = np.full(y.shape, 0.25 if dtype == np.float32 else 77, dtype)
    before = out.copy()
    with pytest.raises(error) as e:
        call(y, out)
    assert words.lower() in str(e.value).lower(), str(e.value)
    assert "\n" not in str(e.value)
    assert np.array_equal(out, before)
