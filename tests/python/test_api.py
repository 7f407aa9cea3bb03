"""The Python API on the host (numpy): shapes, dtypes, out=, controls from the control table, the
temporal state and reset, and clear exceptions (never a crash) for bad input."""
import numpy as np
import pytest

import histeq
from conftest import picture


def test_controls_come_from_the_table():
    names = [c["python_name"] for c in histeq.controls()]
    assert {"mode", "tiles", "clip_limit", "temporal", "chroma", "kernel", "strength", "backend"} <= set(names)
    for c in histeq.controls():
        assert c["python_name"] in histeq.Equalizer.__doc__ and c["python_name"] in histeq.equalize.__doc__
        assert c["help"] and c["default"] != ""
    eq = histeq.Equalizer()
    for c in histeq.controls():  # every control reads back, typed
        eq.get(c["python_name"])
    assert histeq.Equalizer(mode="clahe").mode == "clahe"


def test_stub_lists_every_control():
    import os
    stub = os.path.join(os.path.dirname(histeq.__file__), "__init__.pyi")
    if not os.path.exists(stub):
        pytest.skip(f"no generated stub beside the module ({stub})")
    text = open(stub).read()
    for c in histeq.controls():
        assert f"{c['python_name']}:" in text, c["python_name"]


def test_kernels_list():
    ks = histeq.kernels()
    assert any(k["name"] == "cpu_parallel" and k["backend"] == "cpu" for k in ks)
    assert all({"name", "backend", "bins_8bit", "bins_16bit", "default"} <= set(k) for k in ks)


@pytest.mark.parametrize("depth", [8, 10])
def test_equalize_shapes_and_dtypes(depth):
    y = picture(depth=depth)
    out = histeq.equalize(y)
    assert out.shape == y.shape and out.dtype == y.dtype and out is not y
    assert not np.array_equal(out, y)
    assert int(out.max()) <= (235 if depth == 8 else 940)  # untagged video: limited range
    u = np.full((90, 160), 100 * (4 if depth == 10 else 1), y.dtype)
    yo, uo, vo = histeq.equalize((y, u, u.copy()))
    assert np.array_equal(yo, out)
    shift = 6 if depth == 10 else 0  # P010 holds its 10 bits high
    uv = np.stack([u, u], axis=-1) << shift  # NV12 / P010 as (rows, columns, 2) ...
    assert np.array_equal(histeq.equalize((y << shift, uv))[0] >> shift, out)
    assert np.array_equal(histeq.equalize((y << shift, uv.reshape(90, 320)))[0] >> shift, out)  # ... or (rows, 2 * columns)


def test_odd_sizes_and_pitched_views():
    y = picture(height=121, width=203)
    u = np.full((61, 102), 128, np.uint8)
    ref = histeq.equalize((y, u, u.copy()))
    big = np.zeros((121, 256), np.uint8)
    big[:, :203] = y
    view = big[:, :203]  # rows 256 bytes apart
    assert np.array_equal(histeq.equalize(view), ref[0])
    ro = y.copy()
    ro.flags.writeable = False  # a read-only input is fine
    assert np.array_equal(histeq.equalize(ro), ref[0])


def test_out_in_place_and_into_given_arrays():
    y = picture()
    want = histeq.equalize(y)
    out = np.empty_like(y)
    r = histeq.equalize(y, out=out)
    assert r is out and np.array_equal(out, want)
    inplace = y.copy()
    histeq.equalize(inplace, out=inplace)
    assert np.array_equal(inplace, want)


def test_plain_textbook_equals_opencv_and_plain_keeps_the_limited_range():
    cv2 = pytest.importorskip("cv2")
    rng = np.random.default_rng(3)
    for y in (picture(), rng.integers(0, 256, (240, 320), dtype=np.uint8), np.clip(rng.normal(40, 10, (240, 320)), 0, 255).astype(np.uint8)):
        ref = cv2.equalizeHist(y)
        assert np.array_equal(histeq.equalize(y, plain=True, textbook=True), ref)
        # Without textbook, plain maps within 16..235 (untagged video is limited range): the same
        # order of levels as OpenCV's, squeezed into the range, never the same picture.
        p = histeq.equalize(y, plain=True)
        assert p.min() >= 16 and p.max() <= 235 and not np.array_equal(p, ref)
        order = np.argsort(y, axis=None, kind="stable")
        assert np.all(np.diff(p.ravel()[order].astype(int)) >= 0) and np.all(np.diff(ref.ravel()[order].astype(int)) >= 0)


def test_clahe_is_local():
    y = picture()
    y[:, :160] //= 3  # a dark half
    g = histeq.equalize(y)
    c = histeq.equalize(y, mode="clahe", temporal=0)
    assert not np.array_equal(g, c)
    assert c[:, :150].std() > g[:, :150].std()  # the dark half gets its own curve


def test_temporal_state_reset_and_live_controls():
    a = picture(seed=1)
    b = (a.astype(int) * 9 // 10 + 12).astype(np.uint8)  # a little darker: no scene cut
    fresh_b = histeq.Equalizer()(b)
    eq = histeq.Equalizer()
    eq(a, time=0.0)
    after_a = eq(b, time=0.04)
    assert not np.array_equal(after_a, fresh_b), "the temporal filter kept no state"
    eq.reset()
    assert np.array_equal(eq(b, time=0.08), fresh_b)
    eq.reset()
    eq.temporal = 0  # a live control, as an attribute
    assert eq.temporal == 0.0
    eq(a)
    assert np.array_equal(eq(b), histeq.Equalizer(temporal=0)(b))
    eq.set(clip_limit=3, mode="clahe", tiles="4x4")
    assert (eq.clip_limit, eq.mode, eq.tiles) == (3.0, "clahe", (4, 4))
    assert np.array_equal(eq(b), histeq.Equalizer(temporal=0, clip_limit=3, mode="clahe", tiles=(4, 4))(b))


def test_histogram():
    y = picture()
    h = histeq.histogram(y)
    assert h.dtype == np.uint32 and h.shape == (256,) and h.sum() == y.size
    assert np.array_equal(h, np.bincount(y.ravel(), minlength=256))
    assert np.array_equal(histeq.histogram(y, kernel="cpu_reference", bins=64), h.reshape(64, 4).sum(axis=1))
    y10 = picture(depth=10)
    assert np.array_equal(histeq.histogram(y10), np.bincount(y10.ravel(), minlength=1024))


BAD = [
    (lambda y: histeq.equalize(y.astype(np.float32)), ValueError, "[0, 1]"),
    (lambda y: histeq.equalize(y.astype(np.int16)), TypeError, "uint8, uint16, float16"),
    (lambda y: histeq.equalize(np.zeros((4, 4, 4, 4, 4), np.uint8)), ValueError, "5-D"),
    (lambda y: histeq.equalize(np.zeros(16, np.uint8)), ValueError, "got shape (16,)"),
    (lambda y: histeq.equalize(np.zeros((0, 4), np.uint8)), ValueError, "empty"),
    (lambda y: histeq.equalize(np.zeros((4, 4, 5), np.uint8), layout="HWC"), ValueError, "5 channels"),
    (lambda y: histeq.equalize([1, 2, 3]), TypeError, "expected an array"),
    (lambda y: histeq.equalize("frame"), TypeError, "expected an array"),
    (lambda y: histeq.equalize(None), TypeError, "None"),
    (lambda y: histeq.equalize((y,)), ValueError, "sequence of 1"),
    (lambda y: histeq.equalize((y, y[:10], y[:10])), ValueError, "chroma"),
    (lambda y: histeq.equalize((y, np.zeros((90, 160), np.uint16), np.zeros((90, 160), np.uint16))), TypeError, "one dtype"),
    (lambda y: histeq.equalize(y, out=np.empty((10, 10), np.uint8)), ValueError, "out"),
    (lambda y: histeq.equalize(y, out=np.empty(y.shape, np.uint16)), ValueError, "out"),
    (lambda y: histeq.equalize(y, out=np.broadcast_to(np.uint8(0), y.shape)), ValueError, "out"),
    (lambda y: histeq.equalize(y, clip_limt=2), ValueError, "did you mean 'clip_limit'"),
    (lambda y: histeq.equalize(y, clip_limit=100), ValueError, "clip"),
    (lambda y: histeq.equalize(y, mode="local"), ValueError, "mode"),
    (lambda y: histeq.equalize(y, clip_limit=[1]), TypeError, "clip_limit"),
    (lambda y: histeq.equalize(y, plain="yes"), TypeError, "plain"),
    (lambda y: histeq.equalize(y, stream="s"), TypeError, "stream"),
    (lambda y: histeq.Equalizer(tiles=(0, 4)), ValueError, "tiles"),
    (lambda y: histeq.Equalizer(backend="gpu") if not histeq.gpu_available() else (_ for _ in ()).throw(ValueError("gpu")), ValueError, "gpu"),
    (lambda y: histeq.Equalizer(kernel="nope"), ValueError, "kernel"),
    (lambda y: setattr(histeq.Equalizer(), "clip_limt", 2), ValueError, "did you mean"),
    (lambda y: setattr(histeq.Equalizer(), "strength", 2), ValueError, "strength"),
    (lambda y: histeq.Equalizer()(y, time="now"), TypeError, "time"),
    (lambda y: histeq.histogram(y, bins=3), ValueError, "bins"),
    (lambda y: histeq.histogram(y, kernel="nope"), ValueError, "nope"),
    (lambda y: histeq.histogram(np.zeros((2, 2, 2), np.uint8)), ValueError, "2-D"),
    # Numbers beyond C's types: one clear error naming the argument (was RuntimeError: std::bad_cast).
    (lambda y: histeq.Equalizer(strength=10**400), OverflowError, "strength"),
    (lambda y: histeq.equalize(y, clip_limit=-10**400), OverflowError, "clip_limit"),
    (lambda y: histeq.Equalizer(tiles=(2**40, 1)), ValueError, "tiles must be 1..32 per axis, not 1099511627776x1"),
    (lambda y: histeq.Equalizer(tiles=(2**64, 2**64)), ValueError, "tiles must be 1..32 per axis"),
    (lambda y: histeq.Equalizer(tiles="4294967297x2"), ValueError, "tiles must be 1..32 per axis, not 4294967297x2"),
    (lambda y: histeq.Equalizer(tiles=(4.5, 2)), TypeError, "whole numbers"),
    (lambda y: histeq.histogram(y, bits=2**40), ValueError, "bits: 1099511627776 is not 1..16"),
    (lambda y: histeq.histogram(y, bits=2**70), OverflowError, "bits"),
    (lambda y: histeq.histogram(y, bits=17), ValueError, "bits"),
    (lambda y: histeq.histogram(y, bins=2**70), OverflowError, "bins"),
    (lambda y: histeq.Equalizer()(y, time=10**400), OverflowError, "time"),
]


@pytest.mark.parametrize("case", range(len(BAD)))
def test_bad_input_raises(case):
    call, error, words = BAD[case]
    with pytest.raises(error) as e:
        call(picture())
    assert words.lower() in str(e.value).lower(), str(e.value)


def test_samples_above_ten_bits_are_an_error_never_passed_through():
    rng = np.random.default_rng(5)
    y = rng.integers(0, 65536, (64, 96), dtype=np.uint16)
    u = rng.integers(0, 65536, (32, 48), dtype=np.uint16)
    for mode in ("global", "clahe"):
        for frame in (y, (y, u, u.copy())):
            with pytest.raises(ValueError, match="do not fit 10 bits"):
                histeq.equalize(frame, mode=mode)
        histeq.equalize((y, np.stack([u, u], -1)), mode=mode)  # P010: 16-bit words, the 10 bits high
        assert histeq.equalize(y, bits=16, mode=mode).dtype == np.uint16
    assert histeq.histogram(y).sum() <= y.size


# ---- strides: never read past an array (a broadcast array segfaulted in histogram) --------------

def test_histogram_of_any_strides_counts_the_arrays_samples():
    row = np.arange(256, dtype=np.uint8)
    b = np.broadcast_to(row, (200000, 256))  # row stride 0: was read as a tight plane, past the array
    assert np.array_equal(histeq.histogram(b), np.full(256, 200000))
    small = np.broadcast_to(row, (8, 256))
    assert np.array_equal(histeq.histogram(small), np.full(256, 8))
    y = picture()
    for view in (y[::-1], y[:, ::2], y[::3, ::-2], y.T, np.broadcast_to(y[:1], (50, 320))):
        assert np.array_equal(histeq.histogram(view), np.bincount(view.ravel(), minlength=256)), view.strides
    y10 = picture(depth=10)
    assert np.array_equal(histeq.histogram(y10[:, ::-1]), np.bincount(y10.ravel(), minlength=1024))
    with pytest.raises(TypeError, match="float32"):
        histeq.histogram(y.astype(np.float32))


def test_overlapping_out_is_refused():
    y = picture()
    for out in (np.broadcast_to(np.zeros(320, np.uint8), y.shape), np.lib.stride_tricks.as_strided(np.zeros(400, np.uint8), y.shape, (1, 1))):
        with pytest.raises(ValueError, match="overlap"):
            histeq.equalize(y, out=out)


# ---- numbers under a decimal-comma locale --------------------------------------------------------

def test_numbers_are_the_c_locales_under_de_DE():
    """The library's numbers never follow LC_NUMERIC: with de_DE.UTF-8 (made here by localedef in a
    temporary LOCPATH), strength 0.5 still reads back as 0.5 (it was '0,5' and raised)."""
    import locale
    import os
    import shutil
    import subprocess
    import tempfile
    if not shutil.which("localedef"):
        pytest.skip("no localedef (the locales package)")
    d = tempfile.mkdtemp(prefix="histeq-locale-")
    try:
        subprocess.run(["localedef", "-i", "de_DE", "-f", "UTF-8", os.path.join(d, "de_DE.UTF-8")], capture_output=True)
        old_path = os.environ.get("LOCPATH")

        def restore_locpath():
            # First: under LOCPATH glibc looks nowhere else (not in locale-archive), so the locale
            # the test began in (en_US.UTF-8, say) can be set again only once it is gone.
            if old_path is None:
                os.environ.pop("LOCPATH", None)
            else:
                os.environ["LOCPATH"] = old_path

        before = locale.setlocale(locale.LC_ALL)
        os.environ["LOCPATH"] = d
        try:
            locale.setlocale(locale.LC_ALL, "de_DE.UTF-8")
        except locale.Error as e:
            restore_locpath()
            pytest.skip(f"no de_DE.UTF-8 locale could be made ({e}; the locales package is needed)")
        try:
            assert locale.localeconv()["decimal_point"] == ","
            eq = histeq.Equalizer(strength=0.5, clip_limit=1.5, temporal=0.25)
            assert eq.strength == 0.5 and eq.clip_limit == 1.5 and eq.temporal == 0.25
            assert "clip 1.5, temporal 0.25 s" in eq.describe(), eq.describe()
            eq.set(clip_limit="2.5")
            assert eq.clip_limit == 2.5
            y = picture()
            assert np.array_equal(eq(y), histeq.Equalizer(strength=0.5, clip_limit=2.5, temporal=0.25)(y))
            assert np.array_equal(histeq.equalize(y, strength=0.5), histeq.equalize(y, strength="0.5"))
            with pytest.raises(ValueError, match="not a number"):
                histeq.equalize(y, strength="0,5")
            with pytest.raises(ValueError, match=r"span 0 \.\. 1\.5$"):  # the module's own messages too
                histeq.equalize(np.array([[0, 1.5]], np.float32))
            assert histeq.equalize(y.astype(np.float32) / 255).dtype == np.float32
        finally:
            restore_locpath()
            locale.setlocale(locale.LC_ALL, before)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_threads_never_overlap_on_one_equalizer():
    """eq(frame) lets go of the GIL; a second thread's call on the same object raises instead of
    running beside the first (the C++ Equalizer takes one call at a time). Separate equalizers run
    in parallel."""
    import threading
    y = picture(720, 1280)
    want = histeq.Equalizer(temporal=0)(y)
    shared = histeq.Equalizer(temporal=0)
    outcomes = []

    def work(eq):
        for _ in range(3):
            try:
                outcomes.append(np.array_equal(eq(y), want))
            except RuntimeError as e:
                assert "in use by another thread" in str(e)
                outcomes.append("busy")

    threads = [threading.Thread(target=work, args=(shared if i < 4 else histeq.Equalizer(temporal=0),)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(outcomes) == 18 and False not in outcomes


def test_an_old_control_name_warns_and_still_works():
    import warnings
    with pytest.warns(DeprecationWarning, match="use 'chroma-limit'"):
        eq = histeq.Equalizer(limit=1.5)
    assert eq.get("chroma_limit") == 1.5
    with pytest.warns(DeprecationWarning, match="'limit' is an old name"):
        eq.set(limit=2)
    assert eq.get("chroma_limit") == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the current names never warn
        histeq.Equalizer(chroma_limit=1.5).set(chroma_limit=2)
    assert "limit" not in [c["python_name"] for c in histeq.controls()]
