"""histeq: real-time histogram equalization of video frames, on numpy arrays and CUDA arrays.

    import histeq
    y = histeq.equalize(y)                          # a 2-D uint8 / uint16 (10-bit) numpy array
    eq = histeq.Equalizer(mode="clahe")             # video: keeps the temporal state between frames
    for y, u, v in frames: y, u, v = eq((y, u, v))  # Y, (y, u, v) 4:2:0, or NV12 / P010 as (y, uv)

Frames are numpy arrays or CUDA arrays of any library (PyTorch, CuPy, ... through __dlpack__ or
__cuda_array_interface__), processed where they are, without copies; results come back in the
input's library (its empty_like) on the input's device, or into out=. The controls (keyword
arguments) are the project's control table: histeq.controls() lists them, and the docstrings of
equalize and Equalizer are made from it. Frames are bit-identical to `histeq export`'s with the same
settings. Errors of the input raise ValueError or TypeError.

Streams: stream=None runs on the current stream of the array's library (torch.cuda.current_stream(),
cupy.cuda.get_current_stream()); arrays of other libraries run on the legacy default stream (0).
stream= takes an int (a cudaStream_t), a torch or cupy stream, or any object with __cuda_stream__.
Device results are ready on that stream when the call returns (no host synchronization); host
results are complete.
"""
from __future__ import annotations

import difflib

from . import _histeq
from ._histeq import DeviceArray, gpu_available

__version__ = _histeq.version()
__all__ = ["equalize", "Equalizer", "histogram", "kernels", "controls", "gpu_available", "DeviceArray", "version"]

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
        if k in _BY_NAME or k == "plain":
            continue
        close = difflib.get_close_matches(k, list(_BY_NAME) + ["plain"], n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ValueError(f"{where}: unknown control {k!r}{hint}; histeq.controls() lists them")


def equalize(y, *, out=None, stream=None, **controls):
    _check_names(controls, "equalize")
    return _histeq._equalize(y, controls, out, stream)


def histogram(a, *, kernel: str = "", bins: int = 0, bits=None, stream=None):
    """The histogram of a 2-D uint8/uint16 array (numpy or CUDA) as a numpy uint32 array.

    kernel: a name of histeq.kernels() ("" = the default for the array's memory); bins: 0 = 2**bits,
    else a power of two the kernel supports; bits: the samples' significant bits (default 8 for
    uint8, 10 for uint16, as the video frames; samples at or above 2**bits are not counted). A device array's kernel runs on
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


equalize.__doc__ = f"""Equalizes one frame (no temporal history) and returns the result.

    y: a 2-D uint8 array (8-bit) or uint16 array (10-bit values in the low bits), numpy or CUDA;
    also (y, u, v) 4:2:0 planes or NV12/P010 as (y, uv), as Equalizer accepts.
    out: arrays to write into (same planes, shapes, dtype and device; may be the input itself).
    stream: see the module's docstring (default: the array library's current stream).

Keyword controls (histeq.controls()):
{_control_doc()}
"""

Equalizer.__doc__ = f"""Equalizes the frames of one video in order, keeping the temporal state.

    eq = histeq.Equalizer(mode="clahe", temporal=0.5)
    out = eq(frame, out=None, stream=None)

frame: a 2-D uint8/uint16 array (Y only), (y, u, v) 4:2:0 planes, or NV12 / P010 as (y, uv) with uv
of shape (rows/2, 2*columns/2) or (rows/2, columns/2, 2); uint16 means 10-bit (P010: in the high
bits). Numpy or CUDA arrays; the result is the same structure, in the input's library and device.
eq.reset() restarts the temporal state (a seek, another video). Controls change between frames as
attributes (eq.clip_limit = 2) or eq.set(clip_limit=2); eq.get(name) reads one.

Keyword controls (histeq.controls()):
{_control_doc()}
"""
