#!/usr/bin/python3
"""The temporal denoiser (histeq --denoise, core/equalize/ops/denoise/denoise.h) on dark noisy footage with
its ground truth, beside OpenCV's CLAHE and ffmpeg's hqdn3d followed by CLAHE (docs/quality.md,
"Denoiser").

  bench/denoise_eval.py OUTDIR [--histeq build/app/histeq] [--frames 40] [--size 960x540] [--cpu]
  bench/denoise_eval.py OUTDIR --sweep dark_s6     the filter's constants swept in numpy (the choice)

1. Clips (OUTDIR/clips): the skimage photographs panned slowly (1 pixel a frame), luma mapped to
   16..60 (BT.709 limited range, a dark scene), fresh Gaussian noise every frame (luma sigma as
   named, chroma sigma / 2), stored lossless (FFV1) beside the CLEAN frames (.npy): the truth.
     dark_s3   chelsea.png, noise sigma 3 levels, 8-bit
     dark_s6   astronaut.png, sigma 6, 8-bit
     dark10_s4 coffee.png, sigma 4, 10-bit (levels of 255; x4 in the samples)
2. Runs (OUTDIR/runs), every output lossless FFV1:
     histeq default / default+denoise S    `histeq export IN -o OUT --codec ffv1 [--denoise S]`
     histeq clahe clip 2 [+denoise S]      the same with --mode clahe --clip-limit 2 (OpenCV's clip)
     histeq clahe clip 3 [+denoise S]      and --clip-limit 3: the steeper curve the denoiser allows
     opencv clahe                          cv2.createCLAHE(2, (8, 8)) on the noisy luma
     hqdn3d+clahe                          ffmpeg -vf hqdn3d (its defaults), then that CLAHE
   S is the clip's noise sigma (what a user would set; --denoise is the noise level).
3. Measures, on the luma at the 8-bit scale, frames 5.. (the recursive filter's first frames are
   its warm-up; every method is measured on the same frames), windows of 16x16 of the CLEAN frame:
   - gradient g = the Sobel gradient (x, y) of a frame; along(F) = sum over the pixels of
     (g_F . g_clean) / |g_clean|: the part of F's gradient along the clean picture's; noise (of
     random direction) adds nothing to it on average, blur takes from it.
   - detail gain = along(output) / along(input) over the textured windows (the quarter of the
     windows with the largest mean |g_clean|): how much the picture's own contrast grew.
   - noise gain = std of (F - Gaussian(F, sigma 2)) over the flat windows (the quarter with the
     smallest mean |g_clean|), output over input: how much the noise grew.
   - ratio = detail gain / noise gain (the issue: OpenCV's CLAHE about 0.9; target >= 1.3).
   - pan sharpness = along(output) over the strong edges (the pixels of the largest 5% |g_clean|),
     with the denoiser over without it (the same tone settings; target >= 0.95): smear on the pan.
   - chroma noise gain = the noise gain of U and V (flat windows at chroma resolution), output
     over input: whether the chroma needs denoising too.
Writes OUTDIR/denoise.csv and denoise.json (every figure, the commands). Needs numpy, scipy,
python3-skimage, python3-opencv and the ffmpeg CLI. Deterministic (fixed seeds).
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np
from scipy import ndimage as ndi

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_quality_clips import photo, view  # noqa: E402

CLIPS = [("dark_s3", "chelsea.png", 3.0, 8), ("dark_s6", "astronaut.png", 6.0, 8), ("dark10_s4", "coffee.png", 4.0, 10)]
WARMUP = 5


def clean_frames(name, w, h, n):
    """RGB frames in [0, 1]: the photo panned right to left, one output pixel a frame."""
    img = photo(name)
    ih, iw = img.shape[:2]
    scale = min(iw / w, ih / h) / 1.25  # image pixels per output pixel (zoom 1.25)
    span = (n + 1) * scale / iw
    return [view(img, w, h, 0.5 - span / 2 + i * scale / iw, 0.5, 1.25) for i in range(n)]


def to_yuv(rgb, rng, sigma, depth):
    """BT.709 limited range 4:2:0, the luma squeezed into 16..60; returns (noisy planes, clean luma
    at the 8-bit scale)."""
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    Y = 16 + 44 * y
    U = 128 + 0.25 * 224 * (b - y) / 1.8556  # the colours dimmed with the light
    V = 128 + 0.25 * 224 * (r - y) / 1.5748
    h, w = Y.shape
    U = U.reshape(h // 2, 2, w // 2, 2).mean(axis=(1, 3))
    V = V.reshape(h // 2, 2, w // 2, 2).mean(axis=(1, 3))
    k, top = 1 << (depth - 8), (1 << depth) - 1
    dt = np.uint8 if depth == 8 else np.uint16
    noisy = [Y + rng.normal(0, sigma, Y.shape), U + rng.normal(0, sigma / 2, U.shape), V + rng.normal(0, sigma / 2, V.shape)]
    return [np.clip(np.rint(p * k), 0, top).astype(dt) for p in noisy], Y


def pix(depth):
    return "yuv420p" if depth == 8 else "yuv420p10le"


def write_clip(path, planes_list, w, h, fps, depth):
    p = subprocess.Popen(["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-f", "rawvideo", "-pix_fmt", pix(depth), "-s", f"{w}x{h}",
                          "-r", str(fps), "-i", "-", "-c:v", "ffv1", "-pix_fmt", pix(depth), "-color_range", "tv",
                          "-colorspace", "bt709", "-color_primaries", "bt709", "-color_trc", "bt709", path], stdin=subprocess.PIPE)
    for planes in planes_list:
        for q in planes:
            p.stdin.write(q.tobytes())
    p.stdin.close()
    if p.wait() != 0:
        sys.exit(f"denoise_eval.py: ffmpeg failed writing {path}")


def read_clip(path, w, h, depth, vf=None):
    """Frames as (Y, U, V) float arrays at the 8-bit scale."""
    cmd = ["ffmpeg", "-nostdin", "-loglevel", "error", "-i", path] + (["-vf", vf] if vf else []) + \
          ["-pix_fmt", pix(depth), "-f", "rawvideo", "-"]
    raw = subprocess.run(cmd, check=True, stdout=subprocess.PIPE).stdout
    dt = np.uint8 if depth == 8 else np.dtype("<u2")
    bps = 1 if depth == 8 else 2
    fs = (w * h + 2 * (w // 2) * (h // 2)) * bps
    out = []
    for i in range(len(raw) // fs):
        a = np.frombuffer(raw[i * fs:(i + 1) * fs], dtype=dt).astype(np.float64) / (1 << (depth - 8))
        y = a[:w * h].reshape(h, w)
        u = a[w * h:w * h + (w // 2) * (h // 2)].reshape(h // 2, w // 2)
        v = a[w * h + (w // 2) * (h // 2):].reshape(h // 2, w // 2)
        out.append((y, u, v))
    return out


def opencv_clahe(frames, depth):
    import cv2
    clahe = cv2.createCLAHE(clipLimit=2.0, tileGridSize=(8, 8))
    out = []
    for y, u, v in frames:
        y8 = np.clip(np.rint(y), 0, 255).astype(np.uint8)  # OpenCV's CLAHE on the 8-bit luma (10-bit: rounded)
        out.append((clahe.apply(y8).astype(np.float64), u, v))
    return out


class Truth:
    """The windows and edges of a clean frame."""

    def __init__(self, clean, win=16):
        self.gx, self.gy = ndi.sobel(clean, 1), ndi.sobel(clean, 0)
        self.mag = np.hypot(self.gx, self.gy)
        h, w = clean.shape
        H, W = h // win, w // win
        m = self.mag[:H * win, :W * win].reshape(H, win, W, win).mean(axis=(1, 3))
        lo, hi = np.percentile(m, 25), np.percentile(m, 75)
        self.textured = np.kron(m >= hi, np.ones((win, win), bool))
        self.flat = np.kron(m <= lo, np.ones((win, win), bool))
        pad = ((0, h - H * win), (0, w - W * win))
        self.textured = np.pad(self.textured, pad)
        self.flat = np.pad(self.flat, pad)
        self.edges = self.mag >= np.percentile(self.mag, 95)
        self.flat_c = self.flat[::2, ::2]

    def along(self, f, mask):
        d = (ndi.sobel(f, 1) * self.gx + ndi.sobel(f, 0) * self.gy) / np.maximum(self.mag, 1e-9)
        return float(d[mask].sum())


def residual_std(f, mask):
    return float(np.std((f - ndi.gaussian_filter(f, 2.0))[mask]))


def measure(out, inp, truths):
    """The figures of one output against the input, over frames WARMUP.."""
    acc = {k: 0.0 for k in ("d_out", "d_in", "n_out", "n_in", "e_out", "c_out", "c_in")}
    n = 0
    for i in range(WARMUP, min(len(out), len(inp))):
        t = truths[i]
        (yo, uo, vo), (yi, ui, vi) = out[i], inp[i]
        acc["d_out"] += t.along(yo, t.textured)
        acc["d_in"] += t.along(yi, t.textured)
        acc["n_out"] += residual_std(yo, t.flat)
        acc["n_in"] += residual_std(yi, t.flat)
        acc["e_out"] += t.along(yo, t.edges)
        acc["c_out"] += residual_std(uo, t.flat_c) + residual_std(vo, t.flat_c)
        acc["c_in"] += residual_std(ui, t.flat_c) + residual_std(vi, t.flat_c)
        n += 1
    dg, ng = acc["d_out"] / acc["d_in"], acc["n_out"] / acc["n_in"]
    return {"detail_gain": dg, "noise_gain": ng, "ratio": dg / ng, "edge_along": acc["e_out"] / n,
            "chroma_noise_gain": acc["c_out"] / acc["c_in"]}


def model(frames, sigma, radius, lo_sigma, span_sigma, floor):
    """The filter of core/equalize/ops/denoise/denoise.h in numpy, its constants as arguments (the sweep that
    chose them): lo = window * sigma_q4 * lo_sigma, span = window * sigma_q4 * span_sigma, 8-bit."""
    h, w = frames[0][0].shape
    n = (2 * radius + 1) ** 2
    sq4 = int(round(sigma * 16))
    lo, span = int(n * sq4 * lo_sigma), max(1, int(n * sq4 * span_sigma))
    slope = ((256 - floor) << 16) // span
    s, out = None, []
    for y, u, v in frames:
        c = np.rint(y).astype(np.int64)
        if s is None:
            s = c * 16
            out.append((y, u, v))
            continue
        p = np.pad(np.abs(c * 16 - s), radius, mode="edge")
        d = sum(p[dy:dy + h, dx:dx + w] for dy in range(2 * radius + 1) for dx in range(2 * radius + 1))
        over = np.maximum(d - lo, 0)
        k = np.where(over >= span, 256, floor + ((over * slope) >> 16))
        e = (c * 16 - s) * k
        s = s + np.sign(e) * ((np.abs(e) + 128) >> 8)
        out.append((((s + 8) >> 4).astype(np.float64), u, v))
    return out


def sweep(a, w, h):
    """--sweep CLIP: the numpy filter with OpenCV's CLAHE as the curve, over a few constants, on a
    clip this script made (OUTDIR/clips)."""
    name, img, sigma, depth = next(c for c in CLIPS if c[0] == a.sweep)
    inp = read_clip(os.path.join(a.outdir, "clips", name + ".mkv"), w, h, depth)
    truths = [Truth(c) for c in np.load(os.path.join(a.outdir, "clips", name + ".clean.npy"))]
    base = measure(opencv_clahe(inp, depth), inp, truths)
    print(f"{name}: opencv clahe alone: detail {base['detail_gain']:.3f} noise {base['noise_gain']:.3f}")
    for radius, lo_s, span_s, floor in [(1, 1.0, 0.5, 48), (2, 1.0, 0.25, 48), (2, 1.0, 0.25, 32), (2, 0.95, 0.25, 32),
                                        (2, 1.05, 0.25, 32), (2, 1.0, 0.5, 32)]:
        m = measure(opencv_clahe(model(inp, sigma, radius, lo_s, span_s, floor), depth), inp, truths)
        print(f"{2 * radius + 1}x{2 * radius + 1} ramp {lo_s}..{lo_s + span_s} sigma floor {floor}: detail {m['detail_gain']:.3f} "
              f"noise {m['noise_gain']:.3f} ratio {m['ratio']:.3f} pan {m['edge_along'] / base['edge_along']:.3f}")
        sys.stdout.flush()


def run(cmd, log):
    log.append(" ".join(cmd))
    t = time.time()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.time() - t


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--histeq", default="build/app/histeq")
    ap.add_argument("--frames", type=int, default=40)
    ap.add_argument("--size", default="960x540")
    ap.add_argument("--fps", type=int, default=30)
    ap.add_argument("--cpu", action="store_true", help="pass --cpu to histeq export")
    ap.add_argument("--clips", default=",".join(c[0] for c in CLIPS))
    ap.add_argument("--sweep", metavar="CLIP", help="only the sweep of the filter's constants (numpy) on a clip made before")
    a = ap.parse_args()
    w, h = map(int, a.size.split("x"))
    if a.sweep:
        return sweep(a, w, h)
    os.makedirs(os.path.join(a.outdir, "clips"), exist_ok=True)
    os.makedirs(os.path.join(a.outdir, "runs"), exist_ok=True)
    rows, commands = [], []
    for ci, (name, img, sigma, depth) in enumerate(CLIPS):
        if name not in a.clips.split(","):
            continue
        rng = np.random.default_rng(100 + ci)
        planes, clean = [], []
        for rgb in clean_frames(img, w, h, a.frames):
            p, c = to_yuv(rgb, rng, sigma, depth)
            planes.append(p)
            clean.append(c)
        src = os.path.join(a.outdir, "clips", name + ".mkv")
        write_clip(src, planes, w, h, a.fps, depth)
        np.save(os.path.join(a.outdir, "clips", name + ".clean.npy"), np.array(clean, dtype=np.float32))
        inp = read_clip(src, w, h, depth)
        truths = [Truth(c) for c in clean]
        s = f"{sigma:g}"
        histeq_runs = []
        for label, opts in (("histeq default", []), ("histeq clahe clip 2", ["--mode", "clahe", "--clip-limit", "2"]),
                            ("histeq clahe clip 3", ["--mode", "clahe", "--clip-limit", "3"])):
            histeq_runs += [(label, opts), (f"{label}+denoise {s}", opts + ["--denoise", s])]
        outs = {}
        for label, extra in histeq_runs:
            dst = os.path.join(a.outdir, "runs", f"{name}.{label.replace(' ', '_').replace('+', '_')}.mkv")
            cmd = [a.histeq, "export", src, "-o", dst, "--codec", "ffv1", "--overwrite", "--progress", "none"] + (["--cpu"] if a.cpu else []) + extra
            secs = run(cmd, commands)
            outs[label] = (read_clip(dst, w, h, depth), secs)
        t = time.time()
        outs["opencv clahe 2 8x8"] = (opencv_clahe(inp, depth), time.time() - t)
        t = time.time()
        outs["hqdn3d+opencv clahe"] = (opencv_clahe(read_clip(src, w, h, depth, vf="hqdn3d"), depth), time.time() - t)
        commands.append(f"ffmpeg -i {src} -vf hqdn3d ... | cv2.createCLAHE(2, (8, 8)).apply(luma)")
        for label, (frames, secs) in outs.items():
            m = measure(frames, inp, truths)
            m.update({"clip": name, "sigma": sigma, "bit_depth": depth, "method": label, "wall_s": round(secs, 2)})
            rows.append(m)
        # Pan sharpness: each denoised run against the same settings without the denoiser.
        by = {r["method"]: r for r in rows if r["clip"] == name}
        for base in ("histeq default", "histeq clahe clip 2", "histeq clahe clip 3"):
            dn = by[f"{base}+denoise {s}"]
            dn["pan_sharpness"] = dn["edge_along"] / by[base]["edge_along"]
        by["hqdn3d+opencv clahe"]["pan_sharpness"] = by["hqdn3d+opencv clahe"]["edge_along"] / by["opencv clahe 2 8x8"]["edge_along"]
        for r in rows:
            if r["clip"] == name:
                print(f"{name:10s} {r['method']:28s} detail {r['detail_gain']:.2f} noise {r['noise_gain']:.2f} ratio {r['ratio']:.2f}"
                      f" pan {r.get('pan_sharpness', float('nan')):.3f} chroma {r['chroma_noise_gain']:.2f}")
        sys.stdout.flush()
    keys = ["clip", "sigma", "bit_depth", "method", "detail_gain", "noise_gain", "ratio", "pan_sharpness", "chroma_noise_gain", "wall_s"]
    with open(os.path.join(a.outdir, "denoise.csv"), "w") as f:
        f.write(",".join(keys) + "\n")
        for r in rows:
            f.write(",".join(f"{r[k]:.4f}" if isinstance(r.get(k), float) else str(r.get(k, "")) for k in keys) + "\n")
    with open(os.path.join(a.outdir, "denoise.json"), "w") as f:
        json.dump({"command": " ".join(sys.argv), "size": a.size, "frames": a.frames, "warmup_frames": WARMUP,
                   "histeq_commands": commands, "rows": rows}, f, indent=1)
    print(f"denoise_eval.py: wrote {a.outdir}/denoise.csv and denoise.json")


if __name__ == "__main__":
    main()
