#!/usr/bin/python3
"""Makes the clips of `histeq quality` (docs/quality.md): real photographs (the skimage data set
Debian's python3-skimage ships) panned, zoomed, dimmed, faded and cut, with sensor-like noise,
encoded with x264 (so dark flat areas get compression blocks, as real footage does).

  bench/make_quality_clips.py OUTDIR [--size 960x540] [--fps 30] [--ten-bit]

Writes OUTDIR/{trailer,street,dark,cut}.mkv and beside each a .json with its cuts (the first frame
of each new shot), fades, the frame the stills show, and a description: the ground truth the
flicker metrics exclude cuts with.
  trailer  a dim animated trailer: six shots, hard cuts and fades through black, a bright object
           crossing one shot, noise
  street   a static street camera at dusk: one shot, fresh noise every frame, a bright headlight
           crossing every 3 s, a slow exposure drift
  dark     a dark low-contrast scene (luma about 16..50), heavy compression, slow pan
  cut      a bright shot, a cut to a dark shot, a cut back
--ten-bit also writes trailer10.mkv (yuv420p10le, x264 High 10): the trailer at 10 bits.
Needs numpy, python3-skimage and the ffmpeg CLI. Deterministic (fixed seeds).
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

DATA = "/usr/share/skimage-data"
if not os.path.isdir(DATA):
    DATA = "/usr/lib/python3/dist-packages/skimage/data"


def photo(name):
    from skimage import io
    img = io.imread(os.path.join(DATA, name))
    if img.ndim == 2:
        img = np.stack([img] * 3, axis=-1)
    return img[..., :3].astype(np.float32) / 255.0


def view(img, w, h, cx, cy, zoom):
    """A w x h window of img centred at (cx, cy) (fractions of the image) at `zoom` (1 = the
    image's shorter fit), bilinear."""
    ih, iw = img.shape[:2]
    scale = min(iw / w, ih / h) / zoom  # image pixels per output pixel
    xs = cx * iw + (np.arange(w) - w / 2 + 0.5) * scale
    ys = cy * ih + (np.arange(h) - h / 2 + 0.5) * scale
    xs = np.clip(xs, 0, iw - 1.001)
    ys = np.clip(ys, 0, ih - 1.001)
    x0 = xs.astype(np.int32)
    y0 = ys.astype(np.int32)
    fx = (xs - x0)[None, :, None]
    fy = (ys - y0)[:, None, None]
    a = img[y0][:, x0]
    b = img[y0][:, x0 + 1]
    c = img[y0 + 1][:, x0]
    d = img[y0 + 1][:, x0 + 1]
    return (a * (1 - fx) + b * fx) * (1 - fy) + (c * (1 - fx) + d * fx) * fy


def to_yuv420(rgb, rng, noise, depth=8):
    """BT.709 limited range, 4:2:0 (chroma: 2x2 means); noise: luma sigma in 8-bit levels."""
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    cb = (b - y) / 1.8556
    cr = (r - y) / 1.5748
    Y = 16 + 219 * y
    if noise > 0:
        Y = Y + rng.normal(0, noise, Y.shape)
    U = 128 + 224 * cb
    V = 128 + 224 * cr
    h, w = Y.shape
    U = U.reshape(h // 2, 2, w // 2, 2).mean(axis=(1, 3))
    V = V.reshape(h // 2, 2, w // 2, 2).mean(axis=(1, 3))
    if noise > 0:
        U = U + rng.normal(0, noise / 2, U.shape)
        V = V + rng.normal(0, noise / 2, V.shape)
    k = 1 << (depth - 8)
    top = (1 << depth) - 1
    dt = np.uint8 if depth == 8 else np.uint16
    return [np.clip(np.rint(p * k), 0, top).astype(dt) for p in (Y, U, V)]


def disc(rgb, x, y, radius, value):
    h, w = rgb.shape[:2]
    yy, xx = np.ogrid[:h, :w]
    m = ((xx - x) ** 2 + (yy - y) ** 2) <= radius ** 2
    rgb[m] = value


class Writer:
    def __init__(self, path, w, h, fps, depth, crf):
        self.path = path
        self.tmp = path + ".part.mkv"
        pix = "yuv420p" if depth == 8 else "yuv420p10le"
        codec = ["-c:v", "libx264", "-preset", "veryfast", "-crf", str(crf)]
        self.p = subprocess.Popen(
            ["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-f", "rawvideo", "-pix_fmt", pix, "-s", f"{w}x{h}",
             "-r", str(fps), "-i", "-"] + codec +
            ["-pix_fmt", pix, "-color_range", "tv", "-colorspace", "bt709", "-color_primaries", "bt709",
             "-color_trc", "bt709", self.tmp], stdin=subprocess.PIPE)

    def put(self, planes):
        for p in planes:
            self.p.stdin.write(p.tobytes())

    def close(self):
        self.p.stdin.close()
        if self.p.wait() != 0:
            sys.exit(f"make_quality_clips.py: ffmpeg failed on {self.path}")
        os.replace(self.tmp, self.path)


def smooth(t):
    return t * t * (3 - 2 * t)


def trailer(w, h, fps):
    """(shots, cuts, fades): each shot a function frame -> RGB."""
    imgs = {n: photo(n) for n in ("astronaut.png", "coffee.png", "chelsea.png", "rocket.jpg", "motorcycle_left.png")}
    shots = []  # (frames, render(i, n) -> rgb)

    def add(frames, fn):
        shots.append((frames, fn))

    s = int(fps * 2)
    add(s, lambda i, n: view(imgs["astronaut.png"], w, h, 0.5, 0.45, 1.0 + 0.25 * i / n) * 0.35)
    add(s, lambda i, n: view(imgs["coffee.png"], w, h, 0.35 + 0.3 * i / n, 0.5, 1.4) * 0.25)

    def cat(i, n):
        rgb = view(imgs["chelsea.png"], w, h, 0.5, 0.5, 1.1) * 0.3
        disc(rgb, int(-0.2 * w + 1.4 * w * i / n), int(0.3 * h), h // 6, 1.0)  # a bright object crossing
        return rgb

    add(s, cat)
    add(int(fps * 2.5), lambda i, n: view(imgs["rocket.jpg"], w, h, 0.5, 0.5, 1.6 - 0.5 * i / n) * 0.5)
    add(s, lambda i, n: view(imgs["motorcycle_left.png"], w, h, 0.4 + 0.2 * i / n, 0.55, 1.2) * 0.3)
    add(int(fps * 1.5), lambda i, n: view(imgs["coffee.png"], w, h, 0.5, 0.5, 1.0 + 0.1 * i / n) * 0.85)
    # Fades through black: the first half second of shot 0 and 3, the last of shots 2 and 5.
    fade_in = {0, 3}
    fade_out = {2, 5}
    return shots, fade_in, fade_out


def render(path, w, h, fps, shots, fade_in, fade_out, noise, crf, seed, depth=8, describe="", still=0):
    rng = np.random.default_rng(seed)
    out = Writer(path, w, h, fps, depth, crf)
    cuts, fades = [], []
    frame = 0
    fade = int(fps / 2)
    for k, (n, fn) in enumerate(shots):
        if k > 0 and not ((k - 1) in fade_out and k in fade_in):
            cuts.append(frame)  # a hard cut (a fade out then in through black is not one)
        for i in range(n):
            rgb = np.clip(fn(i, n), 0, 1)
            gain = 1.0
            if k in fade_in and i < fade:
                gain = smooth(i / fade)
            if k in fade_out and i >= n - fade:
                gain = smooth((n - 1 - i) / fade)
            if gain < 1:
                fades.append(frame)
            out.put(to_yuv420(rgb * gain, rng, noise, depth))
            frame += 1
    out.close()
    with open(os.path.splitext(path)[0] + ".json", "w") as f:
        json.dump({"frames": frame, "fps": fps, "cuts": cuts, "fade_frames": fades, "still": still, "description": describe}, f,
                  indent=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir")
    ap.add_argument("--size", default="960x540")
    ap.add_argument("--fps", type=int, default=30)
    ap.add_argument("--ten-bit", action="store_true")
    a = ap.parse_args()
    w, h = (int(v) for v in a.size.split("x"))
    os.makedirs(a.outdir, exist_ok=True)
    fps = a.fps

    shots, fi, fo = trailer(w, h, fps)
    render(os.path.join(a.outdir, "trailer.mkv"), w, h, fps, shots, fi, fo, noise=2.0, crf=24, seed=1, still=45,
           describe="dim animated trailer: 6 shots, hard cuts and fades through black, a bright object crossing, noise")
    if a.ten_bit:
        render(os.path.join(a.outdir, "trailer10.mkv"), w, h, fps, shots, fi, fo, noise=2.0, crf=24, seed=1, depth=10,
               describe="the trailer at 10 bits (x264 High 10)")

    moto = photo("motorcycle_left.png")

    def street(i, n):
        t = i / fps
        rgb = view(moto, w, h, 0.5, 0.55, 1.0) * (0.28 * (1 + 0.03 * np.sin(2 * np.pi * t / 7)))
        phase = (t % 3.0) / 1.0  # a headlight crosses during the first second of every 3
        if phase < 1:
            disc(rgb, int(-0.1 * w + 1.2 * w * phase), int(0.7 * h), h // 10, 1.0)
        return rgb

    render(os.path.join(a.outdir, "street.mkv"), w, h, fps, [(fps * 10, street)], set(), set(), noise=2.5, crf=26, seed=2, still=15,
           describe="static street camera at dusk: fresh noise every frame, a headlight crossing every 3 s, slow exposure drift")

    astro = photo("astronaut.png")

    def dark(i, n):
        base = view(astro, w, h, 0.45 + 0.1 * i / n, 0.5, 1.3)
        return 0.02 + 0.13 * base  # luma about 16..50 of 255

    render(os.path.join(a.outdir, "dark.mkv"), w, h, fps, [(fps * 8, dark)], set(), set(), noise=1.5, crf=28, seed=3, still=120,
           describe="dark low-contrast scene (luma about 16..50), heavy compression, slow pan")

    coffee = photo("coffee.png")
    bright = lambda i, n: np.clip(view(astro, w, h, 0.5, 0.4, 1.1 + 0.1 * i / n) * 1.05 + 0.05, 0, 1)
    dim = lambda i, n: view(coffee, w, h, 0.5, 0.5, 1.2 + 0.1 * i / n) * 0.15
    render(os.path.join(a.outdir, "cut.mkv"), w, h, fps, [(fps * 3, bright), (fps * 3, dim), (fps * 2, bright)], set(), set(),
           noise=1.5, crf=22, seed=4, still=135, describe="a bright shot, a cut to a dark shot, a cut back")


if __name__ == "__main__":
    main()
