#!/usr/bin/env python3
"""The Python module's speed (docs/performance.md). A program, not a test.

  python3 bench/python_bench.py host   [--calls 200] [--json FILE]
      numpy 1080p luma on the CPU, side by side in one run: histeq plain against
      cv2.equalizeHist, histeq CLAHE (8x8 tiles, clip 2) against cv2.createCLAHE(2, (8, 8)).apply;
      rounds alternate the two so both see the same machine. Median and p99 per call, the ratio.
  python3 bench/python_bench.py device [--calls 500] [--json FILE]
      a 1080p CUDA frame (PyTorch and CuPy, whichever is installed): the per-call time of the
      Python call eq(frame, out=...) against Equalizer::process called from C++ on the same
      equalizer, frames, output and stream (the module's _time_process); CUDA events around each
      call (synchronized before the next, so the GPU waits for the host as a caller's would), eight
      frames in rotation, warm-up first. The overhead is the difference of the medians.

Needs the module on PYTHONPATH (build/python, or an installed histeq).
"""
import argparse
import json
import os
import sys
import time

import numpy as np

H, W = 1080, 1920
ROTATE = 8


def picture(seed):
    """A low-contrast 1080p luma plane with structure (so the curves have work to do)."""
    rng = np.random.default_rng(seed)
    ramp = np.add.outer(np.arange(H) * (3 + seed % 3), np.arange(W) * 2) % 131
    blobs = (40 * np.sin(np.add.outer(np.arange(H) / (60 + seed), np.arange(W) / 90.0))).astype(int)
    return np.clip(50 + ramp + blobs + rng.integers(0, 12, (H, W)), 0, 255).astype(np.uint8)


def stats(us):
    a = np.asarray(us, dtype=float)
    return {"median_us": round(float(np.median(a)), 2), "p99_us": round(float(np.percentile(a, 99)), 2),
            "mean_us": round(float(a.mean()), 2), "calls": int(a.size)}


def timed(fn):
    """A call's microseconds on the host's clock."""
    def run(f):
        t0 = time.perf_counter_ns()
        fn(f)
        return (time.perf_counter_ns() - t0) / 1000
    return run


def host(args):
    import cv2

    import histeq
    frames = [picture(s) for s in range(ROTATE)]
    out = np.empty_like(frames[0])
    plain = histeq.Equalizer(plain=True, backend="cpu")
    clahe = histeq.Equalizer(mode="clahe", tiles=(8, 8), clip_limit=2, backend="cpu")
    cv_clahe = cv2.createCLAHE(2.0, (8, 8))
    cases = {
        "plain": {"histeq": timed(lambda f: plain(f, out=out)), "opencv": timed(lambda f: cv2.equalizeHist(f, dst=out)),
                  # Equalizer::process itself, timed in C++ on the same equalizer: the Python layer's share
                  "histeq_c++_process": lambda f: plain._time_process([f], out, None, 1)[1][0]},
        "clahe": {"histeq": timed(lambda f: clahe(f, out=out)), "opencv": timed(lambda f: cv_clahe.apply(f, dst=out)),
                  "histeq_c++_process": lambda f: clahe._time_process([f], out, None, 1)[1][0]},
        "plain_one_shot": {"histeq": timed(lambda f: histeq.equalize(f, out=out, plain=True, backend="cpu")),
                           "opencv": timed(lambda f: cv2.equalizeHist(f, dst=out))},
    }
    times = {c: {k: [] for k in fns} for c, fns in cases.items()}
    for fns in cases.values():  # warm-up: threads started, caches and buffers made
        for fn in fns.values():
            for f in frames:
                fn(f)
    rounds = max(1, args.calls // 20)
    for r in range(rounds):  # the libraries alternate in blocks of 20 calls, their order too
        for case, fns in cases.items():
            for name, fn in (list(fns.items()) if r % 2 == 0 else list(reversed(list(fns.items())))):
                times[case][name] += [fn(frames[(r * 20 + i) % ROTATE]) for i in range(20)]
    result = {"machine": {"cpus": os.cpu_count(), "load_1min": os.getloadavg()[0], "opencv": cv2.__version__,
                          "opencv_threads": cv2.getNumThreads(), "histeq": plain.info["device"],
                          "frame": f"{W}x{H} uint8 luma"}}
    for case, t in times.items():
        result[case] = {k: stats(v) for k, v in t.items()}
        result[case]["histeq_over_opencv"] = round(result[case]["histeq"]["median_us"] / result[case]["opencv"]["median_us"], 3)
    return result


def device_library(name):
    """(module, to_device, empty_like, event pair maker, elapsed ms) for torch or cupy, or None."""
    try:
        if name == "torch":
            import torch
            if not torch.cuda.is_available():
                return None
            return (lambda a: torch.from_numpy(a).cuda(), torch.empty_like,
                    lambda: (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)),
                    lambda a, b: a.elapsed_time(b))
        import cupy
        return (cupy.asarray, cupy.empty_like, lambda: (cupy.cuda.Event(), cupy.cuda.Event()),
                lambda a, b: cupy.cuda.get_elapsed_time(a, b))
    except ImportError:
        return None


def time_python(fn, frames, calls, events, elapsed):
    a, b = events()
    gpu, host = [], []
    for i in range(calls):
        f = frames[i % len(frames)]
        a.record()
        t0 = time.perf_counter_ns()
        fn(f)
        t1 = time.perf_counter_ns()
        b.record()
        b.synchronize()
        gpu.append(elapsed(a, b) * 1000)
        host.append((t1 - t0) / 1000)
    return gpu, host


class CaiOnly:
    """An array of a library that speaks only __cuda_array_interface__ (the generic path)."""
    def __init__(self, a):
        self.__cuda_array_interface__ = a.__cuda_array_interface__


def device_variants(eq, frames, out):
    y_frames = [f[0] for f in frames]
    cai = [CaiOnly(f) for f in y_frames]
    cai_out = CaiOnly(out[0])
    return {
        "python eq(y, out=o)": (lambda f: eq(f, out=out[0]), y_frames),
        "python eq(y)": (lambda f: eq(f), y_frames),
        "python eq(y, out=o) via __cuda_array_interface__ only": (lambda f: eq(f, out=cai_out), cai),
        "python eq((y, u, v), out=o)": (lambda f: eq(f, out=out), frames),
    }


def device(args):
    import histeq
    if not histeq.gpu_available():
        return {"skipped": "no CUDA device"}
    result = {}
    for name in ("torch", "cupy"):
        lib = device_library(name)
        if lib is None:
            result[name] = {"skipped": f"{name} is not installed or sees no GPU"}
            continue
        to_dev, empty_like, events, elapsed = lib
        host_frames = [picture(s) for s in range(ROTATE)]
        chroma = np.full((H // 2, W // 2), 128, np.uint8)
        frames = [(to_dev(y), to_dev(chroma), to_dev(chroma)) for y in host_frames]
        out = tuple(empty_like(p) for p in frames[0])
        eq = histeq.Equalizer()
        r = {"equalizer": eq.info, "settings": eq.describe()}
        # C++ first and last, Python between: drift shows as a difference of the two C++ runs.
        runs = [("c++ process(y, out) [1]", None)] + list(device_variants(eq, frames, out).items()) + \
               [("c++ process(y, out) [2]", None)]
        for label, variant in runs:
            if variant is None:
                eq._time_process([f[0] for f in frames], out[0], None, args.warmup)
                gpu, host = eq._time_process([f[0] for f in frames], out[0], None, args.calls)
            else:
                fn, fr = variant
                time_python(fn, fr, args.warmup, events, elapsed)
                gpu, host = time_python(fn, fr, args.calls, events, elapsed)
            r[label] = {"events": stats(gpu), "host": stats(host)}
        cpp = min(r["c++ process(y, out) [1]"]["events"]["median_us"], r["c++ process(y, out) [2]"]["events"]["median_us"])
        py = r["python eq(y, out=o)"]["events"]["median_us"]
        r["overhead_median_us"] = round(py - cpp, 2)
        r["target_us"] = 10
        result[name] = r
    return result


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", choices=["host", "device"])
    p.add_argument("--calls", type=int, default=None, help="timed calls per variant (host 200, device 500)")
    p.add_argument("--warmup", type=int, default=50)
    p.add_argument("--json", help="also write the result to this file")
    args = p.parse_args()
    args.calls = args.calls or (200 if args.what == "host" else 500)
    result = host(args) if args.what == "host" else device(args)
    result = {"command": "python3 " + " ".join(sys.argv), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), **result}
    text = json.dumps(result, indent=1)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
