"""The module on CUDA arrays: PyTorch and CuPy tensors in and out through DLPack and
__cuda_array_interface__, processed where they are (the result's pointer is the out= array's, an
in-place call keeps the input's), bit-identical to the CPU path, on the caller's stream; and the
frames people hold on the device (colour, float, 12/16-bit, NCHW batches, strided views), equal to
the host's. Skipped without a CUDA device, and per library without torch / cupy.
"""
import numpy as np
import pytest

import histeq
from conftest import picture

H, W = 1080, 1920


@pytest.fixture(scope="module")
def torch(gpu):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA device")
    return torch


@pytest.fixture(scope="module")
def cupy(gpu):
    cupy = pytest.importorskip("cupy")
    return cupy


def planes(depth=8, seed=0):
    y = picture(H, W, seed=seed, depth=depth)
    rng = np.random.default_rng(seed)
    scale = 4 if depth == 10 else 1
    u = (rng.integers(90, 160, (H // 2, W // 2)) * scale).astype(y.dtype)
    v = (rng.integers(90, 160, (H // 2, W // 2)) * scale).astype(y.dtype)
    return y, u, v


def cpu(frame, **controls):
    return histeq.equalize(frame, backend="cpu", **controls)


@pytest.mark.parametrize("controls", [{}, {"plain": True}, {"mode": "clahe"}])
def test_torch_in_and_out_zero_copy_and_equal_to_the_cpu(torch, controls):
    y, u, v = planes()
    want = cpu((y, u, v), **controls)
    dev = tuple(torch.from_numpy(p).cuda() for p in (y, u, v))
    eq = histeq.Equalizer(**controls)
    assert eq.info["backend"] == "gpu"
    got = eq(dev)
    assert all(isinstance(g, torch.Tensor) and g.is_cuda for g in got)
    for g, w in zip(got, want):
        assert np.array_equal(g.cpu().numpy(), w)
    out = tuple(torch.empty_like(p) for p in dev)
    ptrs = [o.data_ptr() for o in out]
    eq.reset()
    r = eq(dev, out=out)
    assert all(a is b for a, b in zip(r, out)) and [o.data_ptr() for o in out] == ptrs
    for o, w in zip(out, want):
        assert np.array_equal(o.cpu().numpy(), w)
    eq.reset()
    inptrs = [p.data_ptr() for p in dev]
    eq(dev, out=dev)  # in place
    assert [p.data_ptr() for p in dev] == inptrs
    for p, w in zip(dev, want):
        assert np.array_equal(p.cpu().numpy(), w)


def test_torch_luma_nv12_and_pitched_views(torch):
    y, u, v = planes(seed=1)
    x = torch.from_numpy(y).cuda()
    assert np.array_equal(histeq.equalize(x).cpu().numpy(), cpu(y))
    uv = np.stack([u, v], -1)
    got = histeq.equalize((x, torch.from_numpy(uv).cuda()))
    want = cpu((y, uv))
    assert np.array_equal(got[0].cpu().numpy(), want[0]) and np.array_equal(got[1].cpu().numpy(), want[1])
    big = torch.zeros((H, W + 64), dtype=torch.uint8, device="cuda")
    big[:, :W] = x
    view = big[:, :W]  # pitched rows, no copy
    r = histeq.equalize(view, out=view)
    assert r.data_ptr() == big.data_ptr()
    assert np.array_equal(big[:, :W].cpu().numpy(), cpu(y)) and not big[:, W:].any()


def test_cupy_in_and_out_through_both_protocols(cupy):
    y, u, v = planes(depth=10, seed=2)
    want = cpu((y, u, v))
    dev = tuple(cupy.asarray(p) for p in (y, u, v))
    got = histeq.Equalizer()(dev)
    assert all(isinstance(g, cupy.ndarray) for g in got)
    for g, w in zip(got, want):
        assert np.array_equal(cupy.asnumpy(g), w)

    class OnlyCai:  # a library that speaks __cuda_array_interface__ only
        def __init__(self, a):
            self.__cuda_array_interface__ = a.__cuda_array_interface__

    class OnlyDlpack:  # ... or DLPack only
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, **kw):
            return self.a.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

    for wrap in (OnlyCai, OnlyDlpack):
        r = histeq.equalize(tuple(wrap(p) for p in dev))
        assert all(isinstance(x, histeq.DeviceArray) for x in r), wrap
        for x, w in zip(r, want):
            assert np.array_equal(x.get(), w)
            assert np.array_equal(cupy.asnumpy(cupy.from_dlpack(x)), w)
            assert np.array_equal(cupy.asnumpy(cupy.asarray(x)), w)  # through its __cuda_array_interface__
    out = tuple(cupy.empty_like(p) for p in dev)
    r = histeq.equalize(tuple(OnlyCai(p) for p in dev), out=tuple(OnlyCai(o) for o in out))
    for o, w in zip(out, want):
        assert np.array_equal(cupy.asnumpy(o), w)


def test_torch_ten_bit_and_device_array_into_torch(torch, cupy):
    y, _, _ = planes(depth=10, seed=3)
    r = histeq.equalize(_CaiOnly(cupy.asarray(y)))
    t = torch.from_dlpack(r)
    assert t.is_cuda and t.data_ptr() == r.data_ptr and t.dtype == torch.uint16
    assert np.array_equal(cupy.asnumpy(cupy.from_dlpack(t)), cpu(y))  # and back out of torch


class _CaiOnly:
    def __init__(self, a):
        self.__cuda_array_interface__ = a.__cuda_array_interface__


def test_the_callers_stream_is_honoured(torch):
    """The frame is written on a side stream after a long sleep and equalized on that stream
    without any host synchronization: a call on another stream would read the old samples."""
    y, _, _ = planes(seed=4)
    src = torch.from_numpy(y).cuda()
    want = cpu(y)
    eq = histeq.Equalizer()
    for how in ("current", "argument", "int"):
        x = torch.zeros_like(src)
        out = torch.zeros_like(src)
        torch.cuda.synchronize()
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            torch.cuda._sleep(200_000_000)  # ~0.1 s of GPU time on s
            x.copy_(src)
            eq.reset()
            if how == "current":
                eq(x, out=out)
            elif how == "argument":
                eq(x, out=out, stream=s)
            else:
                eq(x, out=out, stream=s.cuda_stream)
        s.synchronize()
        assert np.array_equal(out.cpu().numpy(), want), how


def test_cpu_equalizer_takes_device_frames_and_gpu_takes_host_frames(torch):
    y, _, _ = planes(seed=5)
    x = torch.from_numpy(y).cuda()
    r = histeq.Equalizer(backend="cpu")(x)
    assert r.is_cuda and np.array_equal(r.cpu().numpy(), cpu(y))
    assert np.array_equal(histeq.Equalizer(backend="gpu")(y), cpu(y))


def test_histogram_on_the_device(torch):
    y = picture(H, W, seed=6)
    x = torch.from_numpy(y).cuda()
    want = np.bincount(y.ravel(), minlength=256)
    for k in ("", "method2_tuned", "cub"):
        assert np.array_equal(histeq.histogram(x, kernel=k), want), k


def test_bad_device_input_raises(torch):
    x = torch.zeros((H, W), dtype=torch.uint8, device="cuda")
    with pytest.raises(TypeError, match="uint8, uint16, float16"):
        histeq.equalize(x.short())  # int16: no depth the module takes (floats in [0, 1] are taken)
    with pytest.raises(ValueError):  # (a strided view is read through a copy: test_device_strides_depths_and_value_checks)
        histeq.equalize(x, out=torch.empty((H, W), dtype=torch.uint8))  # out on the host
    with pytest.raises(ValueError):
        histeq.equalize((x, torch.zeros((H // 2, W // 2), dtype=torch.uint8), torch.zeros((H // 2, W // 2), dtype=torch.uint8, device="cuda")))
    if torch.cuda.device_count() == 1:
        with pytest.raises(ValueError):
            histeq.Equalizer(device=1)


# ---- the frames people hold, on the device: equal to the host's ---------------------------------

def colour(h=H, w=W, seed=0):
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:h, 0:w]
    bgr = np.stack([(xx * 200 // w), (yy * 200 // h), ((xx + yy) % 97) * 2], -1) // 2 + 40
    return np.clip(bgr + rng.integers(0, 12, bgr.shape), 0, 255).astype(np.uint8)


def test_torch_bgr_rgba_and_float_nchw_batches_equal_the_host(torch):
    bgr = colour()
    host = histeq.equalize(bgr, backend="cpu")
    dev = torch.from_numpy(bgr).cuda()
    got = histeq.equalize(dev)
    assert got.is_cuda and got.dtype == torch.uint8 and np.array_equal(got.cpu().numpy(), host)
    rgba = np.concatenate([bgr[..., ::-1], np.full(bgr.shape[:2] + (1,), 9, np.uint8)], -1)
    r = histeq.equalize(torch.from_numpy(rgba).cuda(), channels="rgb")
    assert np.array_equal(r.cpu().numpy(), histeq.equalize(rgba, channels="rgb", backend="cpu"))
    batch = np.stack([colour(270, 480, s) for s in range(4)]).astype(np.float32) / 255  # N x H x W x C
    nchw = torch.from_numpy(np.ascontiguousarray(batch.transpose(0, 3, 1, 2))).cuda()
    want = histeq.equalize(np.ascontiguousarray(batch.transpose(0, 3, 1, 2)), backend="cpu", temporal=0)
    got = histeq.equalize(nchw, temporal=0)
    assert got.is_cuda and got.dtype == torch.float32 and np.array_equal(got.cpu().numpy(), want)
    eq, eqh = histeq.Equalizer(), histeq.Equalizer(backend="cpu")  # one video: the temporal state runs along N
    assert np.array_equal(eq(nchw).cpu().numpy(), eqh(np.ascontiguousarray(batch.transpose(0, 3, 1, 2))))


def test_device_strides_depths_and_value_checks(torch, cupy):
    y = picture(H, W, seed=8)
    x = torch.from_numpy(y).cuda()
    for view, host in ((x[:, ::2], y[:, ::2]), (x.flip(0), y[::-1]), (x.t(), y.T)):
        assert np.array_equal(histeq.equalize(view).cpu().numpy(), histeq.equalize(np.ascontiguousarray(host), backend="cpu"))
    assert np.array_equal(histeq.histogram(x[:, ::2]), np.bincount(y[:, ::2].ravel(), minlength=256))
    y12 = (y.astype(np.uint16) * 16 + 7)
    c12 = cupy.asarray(y12)
    assert np.array_equal(cupy.asnumpy(histeq.equalize(c12, bits=12)), histeq.equalize(y12, bits=12, backend="cpu"))
    out = cupy.full(c12.shape, 5, cupy.uint16)
    with pytest.raises(ValueError, match="do not fit 10 bits"):
        histeq.equalize(c12, out=out)
    assert int(out.max()) == 5 and int(out.min()) == 5  # untouched
    f = torch.rand((4, H // 4, W // 4), device="cuda", dtype=torch.float16)
    assert np.array_equal(histeq.equalize(f).cpu().numpy(), histeq.equalize(f.cpu().numpy(), backend="cpu"))
    f[1, 2, 3] = 2
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        histeq.equalize(f)
