"""histeq: real-time histogram equalization of video frames, on numpy arrays and CUDA arrays.

    import histeq
    y = histeq.equalize(y)                          # a 2-D uint8 / uint16 (10-bit) numpy array
    bgr = histeq.equalize(cv2.imread("a.png"))      # H x W x 3 BGR (OpenCV's order; channels="rgb")
    eq = histeq.Equalizer(mode="clahe")             # video: keeps the temporal state between frames
    for y, u, v in frames: y, u, v = eq((y, u, v))  # Y, (y, u, v) 4:2:0 or 4:4:4, or NV12 / P010 as (y, uv)
    out = eq(batch)                                 # N x H x W (x C) or N x C x H x W: frames in order
    frame = eq(av_frame)                            # a PyAV VideoFrame in, one of the same format out

Frames are numpy arrays or CUDA arrays of any library (PyTorch, CuPy, ... through __dlpack__ or
__cuda_array_interface__), processed where they are; results come back in the input's library (its
empty_like) on the input's device, or into out=. uint8 is 8-bit; uint16 is 10-bit video unless
bits= (12 or 16) says otherwise; float in [0, 1] is equalized as 10-bit luma. Colour pictures are
equalized on the luma of full-range BT.601 YCbCr (OpenCV's COLOR_BGR2YCrCb) and converted back.
The controls (keyword arguments) are the project's control table: histeq.controls() lists them, and
the docstrings of equalize and Equalizer are made from it. Frames are bit-identical to `histeq
export`'s with the same settings. Errors of the input raise ValueError, TypeError or OverflowError
before anything is written.

Streams: stream=None runs on the current stream of the array's library (torch.cuda.current_stream(),
cupy.cuda.get_current_stream()); arrays of other libraries run on the legacy default stream (0).
stream= takes an int (a cudaStream_t), a torch or cupy stream, or any object with __cuda_stream__.
Device results are ready on that stream when the call returns (no host synchronization); host
results are complete. uint16 and float device frames are checked on the device first: the call
waits for the stream up to that check.
"""
from __future__ import annotations

import difflib

from . import _histeq
from ._histeq import DeviceArray, gpu_available

__version__ = _histeq.version()
__all__ = ["equalize", "Equalizer", "histogram", "kernels", "controls", "gpu_available", "DeviceArray", "version",
           "yuv420p_planes"]

_CONTROLS = _histeq.controls()
_BY_NAME = {c["python_name"]: c for c in _CONTROLS}


def version() -> str:
    """The library's version (the project's)."""
    return _histeq.version()


def controls() -> list:
    """Every control: name, python_name, type (choice, number, flag, grid), choices, min, max,
    zero_off (0 also valid, meaning off), unit, default, plain (its value under plain=True), help,
    live (may change between frames)."""
    return [dict(c, choices=list(c["choices"])) for c in _CONTROLS]


def kernels() -> list:
    """The histogram kernels: name, description, paper, section, backend (gpu/cpu), bins_8bit,
    bins_16bit, data_independent, default, alias_of."""
    return _histeq.kernels()


def _values(c) -> str:
    """A control's valid values, in words."""
    t = c["type"]
    unit = f" {c['unit']}" if c["unit"] else ""
    if t == "choice":
        return " | ".join(repr(x) for x in c["choices"])
    if t == "flag":
        return "True | False"
    if t == "grid":
        return f"(columns, rows) or 'CxR', each {c['min']:g}..{c['max']:g}"
    off = "0 (off) or " if c["zero_off"] else ""
    return f"{off}{c['min']:g}..{c['max']:g}{unit}"


def _control_doc() -> str:
    lines = ["plain: True | False; default False. Plain equalization (`histeq export --plain`); the other keywords apply on top."]
    for c in _CONTROLS:
        lines.append(f"{c['python_name']}: {_values(c)}; default {c['default']}. {c['help']}")
    return "\n".join("    " + line for line in lines)


def _check_names(names, where):
    for k in names:
        if k in _BY_NAME or k == "plain" or _histeq._control_warning(k):
            continue  # an old name is taken, with a DeprecationWarning
        close = difflib.get_close_matches(k, list(_BY_NAME) + ["plain"], n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ValueError(f"{where}: unknown control {k!r}{hint}; histeq.controls() lists them")


def equalize(y, *, out=None, stream=None, layout=None, channels=None, bits=None, full_range=None, **controls):
    _check_names(controls, "equalize")
    if type(y).__name__ == "VideoFrame":
        return _av_call(lambda f, o, t, k: _histeq._equalize(f, controls, o, stream, None, k["channels"], None, k["full_range"]),
                        y, out, None)
    return _histeq._equalize(y, controls, out, stream, layout, channels, bits, full_range)


# ---- PyAV --------------------------------------------------------------------------------------

# PyAV's formats: (planes, dtype, chroma 0 none / 1 4:2:0 / 2 4:4:4 / 3 NV12-like, full range, channels)
_AV_FORMATS = {
    "gray": (1, "uint8", 0, False, None), "gray10le": (1, "uint16", 0, False, None),
    "yuv420p": (3, "uint8", 1, False, None), "yuvj420p": (3, "uint8", 1, True, None),
    "yuv420p10le": (3, "uint16", 1, False, None), "nv12": (2, "uint8", 3, False, None),
    "p010le": (2, "uint16", 3, False, None), "yuv444p": (3, "uint8", 2, False, None),
    "yuvj444p": (3, "uint8", 2, True, None), "yuv444p10le": (3, "uint16", 2, False, None),
    "rgb24": (1, "uint8", 0, True, "rgb"), "bgr24": (1, "uint8", 0, True, "bgr"),
    "rgba": (1, "uint8", 0, True, "rgb"), "bgra": (1, "uint8", 0, True, "bgr"),
}


def _av_views(frame):
    """numpy views of a PyAV VideoFrame's planes, in its own buffers (writable, no copy)."""
    import numpy as np
    name = frame.format.name
    if name not in _AV_FORMATS:
        raise ValueError(f"frame: PyAV format {name!r} is not taken (histeq takes {', '.join(_AV_FORMATS)}); "
                         f"frame.reformat(format='yuv420p') converts it")
    count, dtype, chroma, _, channels = _AV_FORMATS[name]
    w, h = frame.width, frame.height
    size = np.dtype(dtype).itemsize
    components = (4 if name.endswith("a") else 3) if channels else 1
    views = []
    for i, plane in enumerate(frame.planes[:count]):
        rows = h if i == 0 or chroma == 2 else (h + 1) // 2
        samples = w if i == 0 or chroma == 2 else (w + 1) // 2 * (2 if chroma == 3 else 1)
        buf = np.frombuffer(plane, np.uint8)[:plane.line_size * rows].reshape(rows, plane.line_size)
        a = buf[:, :samples * components * size].view(dtype)
        views.append(a.reshape(rows, samples, components) if channels else a)
    return views[0] if count == 1 else tuple(views)


def _av_call(call, frame, out, time):
    """Equalizes a PyAV VideoFrame into a new frame of its format (or into out=, a VideoFrame)."""
    import av
    name = frame.format.name
    views = _av_views(frame)
    if out is None:
        out = av.VideoFrame(frame.width, frame.height, name)
        out.pts, out.time_base = frame.pts, frame.time_base
    elif type(out).__name__ != "VideoFrame" or out.format.name != name or (out.width, out.height) != (frame.width, frame.height):
        raise ValueError(f"out: a VideoFrame in is written into a VideoFrame of its format and size ({name}, "
                         f"{frame.width}x{frame.height})")
    _, _, _, full, channels = _AV_FORMATS[name]
    # yuvj* and RGB are full range (PyAV 10 has no range tag of its own); the range control may still say otherwise.
    if time is None:
        try:
            time = frame.time  # pts * time_base; None without a pts
        except ZeroDivisionError:  # a pts without a time base
            time = None
    call(views, _av_views(out), time, {"channels": channels, "full_range": full or None})
    return out


def _av_equalizer_call(eq, frame, out, stream, time):
    """Equalizer(...)(VideoFrame): the C++ call hands PyAV frames here (the arrays' path stays in C++)."""
    return _av_call(lambda f, o, t, k: _histeq._Equalizer.__call__(eq, f, out=o, stream=stream, time=t, **k), frame, out, time)


def yuv420p_planes(a, format: str = "yuv420p"):
    """(y, u, v) views of a yuv420p array as PyAV's VideoFrame.to_ndarray() gives it: one
    (1.5 H) x W uint8 array, H rows of Y, then U and V (each H/2 x W/2). format="nv12": (y, uv),
    Y then H/2 rows of interleaved U, V. The views share the array's memory, so
    histeq.equalize(histeq.yuv420p_planes(a), out=histeq.yuv420p_planes(b)) writes b as a
    (1.5 H) x W array too. Works on numpy, torch and CuPy arrays (a contiguous one: no copy)."""
    if format not in ("yuv420p", "nv12"):
        raise ValueError(f"yuv420p_planes: format must be 'yuv420p' or 'nv12', not {format!r}")
    shape = tuple(a.shape)
    if len(shape) != 2 or shape[0] % 3 or shape[1] % 2 or (shape[0] * 2 // 3) % 2:
        raise ValueError(f"yuv420p_planes: expected a (1.5 H) x W array with H and W even, got shape {shape}")
    h, w = shape[0] * 2 // 3, shape[1]
    flat = a.reshape(-1)
    y = flat[:h * w].reshape(h, w)
    if format == "nv12":
        return y, flat[h * w:].reshape(h // 2, w)
    q = (h // 2) * (w // 2)
    return y, flat[h * w:h * w + q].reshape(h // 2, w // 2), flat[h * w + q:].reshape(h // 2, w // 2)


def histogram(a, *, kernel: str = "", bins: int = 0, bits=None, stream=None):
    """The histogram of a 2-D uint8/uint16 array (numpy or CUDA) as a numpy uint32 array.

    kernel: a name of histeq.kernels() ("" = the default for the array's memory); bins: 0 = 2**bits,
    else a power of two the kernel supports; bits: the samples' significant bits (default 8 for
    uint8, 10 for uint16, as the video frames; samples at or above 2**bits are not counted). Any
    strides (a view, a broadcast array) are read through a copy. A device array's kernel runs on
    `stream` and this call waits for its counts."""
    return _histeq.histogram(a, kernel=kernel, bins=bins, bits=bits, stream=stream)


def _typed(c, text):
    t = c["type"]
    if t == "number":
        return float(text)
    if t == "flag":
        return text in ("1", "on", "true", "True", "yes")
    if t == "grid":
        cols, _, rows = text.partition("x")
        return (int(cols), int(rows or cols))
    return text


class Equalizer(_histeq._Equalizer):
    def __init__(self, **controls):
        _check_names(controls, "Equalizer")
        super().__init__(controls)

    def set(self, **controls):
        """Changes controls between frames (live ones keep the temporal state; others restart it)."""
        _check_names(controls, "Equalizer.set")
        if "plain" in controls:
            raise ValueError("Equalizer.set: plain is chosen when the Equalizer is made (Equalizer(plain=True))")
        for k, v in controls.items():
            self._set(k, v)

    def get(self, name: str):
        """A control's value (float, bool, str, or (columns, rows) for a grid)."""
        _check_names([name], "Equalizer.get")
        if name == "plain":
            raise ValueError("Equalizer.get: plain is not a control but a starting point; get its controls")
        return _typed(_BY_NAME[name], self._get(name))

    def __getattr__(self, name):
        if name in _BY_NAME:
            return self.get(name)
        raise AttributeError(f"'Equalizer' object has no attribute {name!r}")

    def __setattr__(self, name, value):
        if name in _BY_NAME:
            self.set(**{name: value})
            return
        _check_names([name], "Equalizer")  # a misspelt control raises with a suggestion
        raise AttributeError(f"'Equalizer' object has no attribute {name!r}")

    def __repr__(self):
        return f"histeq.Equalizer({self.describe()}; {self.info['backend']})"


_FRAMES_DOC = """frame: one of
      - a 2-D array: a grey plane (uint8: 8-bit video; uint16: 10-bit video in the low bits, or
        12/16-bit with bits=12 / bits=16; float in [0, 1]: equalized as 10-bit luma);
      - H x W x 3 / H x W x 4 (alpha kept): a colour picture, BGR (OpenCV's order) or RGB with
        channels="rgb", equalized on the luma of full-range BT.601 YCbCr (OpenCV's
        COLOR_BGR2YCrCb) and converted back; uint8, uint16 with bits=, or float in [0, 1];
      - a batch: N x H x W, N x H x W x C or N x C x H x W (layout= when the shape cannot say, e.g.
        layout="NCHW"); its frames are one video, equalized in order (temporal=0: each alone);
      - (y, u, v) 4:2:0 or 4:4:4 planes, or NV12 / P010 as (y, uv), uv of shape (rows/2, 2*columns/2)
        or (rows/2, columns/2, 2); P010 holds its 10 bits high;
      - a PyAV VideoFrame (gray, yuv420p, yuvj420p, nv12, p010le, yuv420p10le, yuv444p, yuv444p10le,
        rgb24, bgr24, rgba, bgra): the result is a VideoFrame of its format. A (1.5 H) x W yuv420p
        array (VideoFrame.to_ndarray()) is refused: histeq.yuv420p_planes(a) gives its planes.
    Numpy or CUDA arrays, any strides (views are read through a copy, as OpenCV does); the result
    has the frame's structure, shape and dtype, in the input's library and device.
    out: arrays to write into (the same structure, shapes, dtype and device; the input itself for
    in-place work); never replaced by a copy: a broadcast out= is refused.
    layout: HW, HWC, CHW, NHW, NHWC or NCHW (default: from the shape). channels: "bgr" or "rgb".
    bits: uint16 samples' significant bits (default 10; required when they do not fit 10 bits).
    full_range: the samples' range when the array cannot say it (default: colour, float and
    12/16-bit arrays are full range, uint8 / 10-bit planes are video, limited).
    stream: see the module's docstring (default: the array library's current stream)."""

equalize.__doc__ = f"""Equalizes one frame or batch (a fresh temporal state) and returns the result.

    {_FRAMES_DOC}

Keyword controls (histeq.controls()):
{_control_doc()}
"""

Equalizer.__doc__ = f"""Equalizes the frames of one video in order, keeping the temporal state.

    eq = histeq.Equalizer(mode="clahe", temporal=0.5)
    out = eq(frame, out=None, stream=None, time=None, layout=None, channels=None, bits=None)

    {_FRAMES_DOC}
    time: the frame's time in seconds (a batch: one a frame); the temporal filter's interval.

eq.reset() restarts the temporal state (a seek, another video). Controls change between frames as
attributes (eq.clip_limit = 2) or eq.set(clip_limit=2); eq.get(name) reads one.

Keyword controls (histeq.controls()):
{_control_doc()}
"""
