#!/usr/bin/python3
"""Makes the clips of `histeq quality` (docs/quality.md): real photographs (the skimage data set
Debian's python3-skimage ships) panned, zoomed, dimmed, faded and cut, with sensor-like noise,
encoded with x264 (so dark flat areas get compression blocks, as real footage does).

  bench/make_quality_clips.py OUTDIR [--size 960x540] [--fps 30] [--ten-bit] [--only CLIP,...] [--frames N]

Writes OUTDIR/{trailer,street,dark,cut,blacks,blacks_full,blacks10,blacks10_full}.mkv and beside
each a .json with its cuts (the first frame of each new shot), fades, the frame the stills show, its
range and depth, and a description: the ground truth the flicker metrics exclude cuts with.
  trailer  a dim animated trailer: six shots, hard cuts and fades through black, a bright object
           crossing one shot, noise
  street   a static street camera at dusk: one shot, fresh noise every frame, a bright headlight
           crossing every 3 s, a slow exposure drift
  dark     a dark low-contrast scene (luma about 16..50), heavy compression, slow pan
  cut      a bright shot, a cut to a dark shot, a cut back
  blacks   true blacks (2 s): a dim cafe whose shadows sit at black (camera noise clipped at black,
           so at 16..20), a lamp that reaches white, letterboxed 2.39:1 with bars at exactly black,
           a slow pan; FFV1, lossless, so those levels are exact. blacks: 8-bit limited range
           (tagged tv); blacks_full: 8-bit full (pc); blacks10, blacks10_full: the same at 10 bits
--ten-bit also writes trailer10.mkv (yuv420p10le, x264 High 10): the trailer at 10 bits.
--only makes some of them; --frames N cuts each to its first N frames (the e2e tests' short clips).
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


def to_yuv420(rgb, rng, noise, depth=8, full=False, camera=False):
    """BT.709, limited range (or full), 4:2:0 (chroma: 2x2 means); noise: luma sigma in 8-bit
    levels. camera: the noisy samples clipped to the range's black and white (luma) and its chroma
    ends, as a camera's output is: noise in the shadows sits on black, never below it."""
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    cb = (b - y) / 1.8556
    cr = (r - y) / 1.5748
    k = 1 << (depth - 8)
    top = (1 << depth) - 1
    # In units of the depth: limited 16..235 (chroma 16..240) << (depth - 8); full 0..max.
    y0, ys, cs = (0.0, top, top) if full else (16.0 * k, 219.0 * k, 224.0 * k)
    Y = y0 + ys * y
    if noise > 0:
        Y = Y + rng.normal(0, noise * k, Y.shape)
    U = 128 * k + cs * cb
    V = 128 * k + cs * cr
    h, w = Y.shape
    U = U.reshape(h // 2, 2, w // 2, 2).mean(axis=(1, 3))
    V = V.reshape(h // 2, 2, w // 2, 2).mean(axis=(1, 3))
    if noise > 0:
        U = U + rng.normal(0, noise * k / 2, U.shape)
        V = V + rng.normal(0, noise * k / 2, V.shape)
    dt = np.uint8 if depth == 8 else np.uint16
    if camera:
        lo, hi, clo, chi = (0, top, 0, top) if full else (16 * k, 235 * k, 16 * k, 240 * k)
        return [np.clip(np.rint(Y), lo, hi).astype(dt)] + [np.clip(np.rint(p), clo, chi).astype(dt) for p in (U, V)]
    return [np.clip(np.rint(p), 0, top).astype(dt) for p in (Y, U, V)]


def disc(rgb, x, y, radius, value):
    h, w = rgb.shape[:2]
    yy, xx = np.ogrid[:h, :w]
    m = ((xx - x) ** 2 + (yy - y) ** 2) <= radius ** 2
    rgb[m] = value


class Writer:
    """crf None: lossless (FFV1), for clips whose exact levels are the point."""

    def __init__(self, path, w, h, fps, depth, crf, full=False):
        self.path = path
        self.tmp = path + ".part.mkv"
        pix = "yuv420p" if depth == 8 else "yuv420p10le"
        if crf is None:
            codec = ["-c:v", "ffv1", "-level", "3", "-slices", "4", "-g", "30"]
        else:
            codec = ["-c:v", "libx264", "-preset", "veryfast", "-crf", str(crf)]
        self.p = subprocess.Popen(
            ["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-f", "rawvideo", "-pix_fmt", pix, "-s", f"{w}x{h}",
             "-r", str(fps), "-i", "-"] + codec +
            ["-pix_fmt", pix, "-color_range", "pc" if full else "tv", "-colorspace", "bt709", "-color_primaries", "bt709",
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


def render(path, w, h, fps, shots, fade_in, fade_out, noise, crf, seed, depth=8, describe="", still=0, full=False, bars=0):
    """bars: rows of letterbox at the top and the bottom, exactly black (no noise), chroma neutral;
    full or bars: the camera's clipping of the noise (to_yuv420)."""
    rng = np.random.default_rng(seed)
    out = Writer(path, w, h, fps, depth, crf, full)
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
            planes = to_yuv420(rgb * gain, rng, noise, depth, full, camera=full or bars > 0)
            if bars:
                black = 0 if full else 16 << (depth - 8)
                for p, v, b in zip(planes, (black, 128 << (depth - 8), 128 << (depth - 8)), (bars, bars // 2, bars // 2)):
                    p[:b] = v
                    p[p.shape[0] - b:] = v
            out.put(planes)
            frame += 1
    out.close()
    with open(os.path.splitext(path)[0] + ".json", "w") as f:
        json.dump({"frames": frame, "fps": fps, "cuts": cuts, "fade_frames": fades, "still": still, "description": describe,
                   "range": "full" if full else "limited", "bit_depth": depth}, f, indent=1)


def blacks(w, h, fps, seconds=2.0):
    """A dim cafe whose shadows sit at black, a lamp that reaches white, letterboxed to 2.39:1, a slow
    pan: (shots, letterbox rows)."""
    img = photo("coffee.png")
    ih, iw = img.shape[:2]
    bars = ((h - round(w / 2.39)) // 4) * 2  # even, so the chroma rows split with the luma's
    ph = h - 2 * bars
    zoom = 1.15
    scale = min(iw / w, ih / ph) / zoom
    first = view(img, w, ph, 0.42, 0.5, zoom)
    # Everything the darkest fifth of the picture holds goes to black: a dim exposure crushes its
    # shadows in the camera, before any noise.
    off = float(np.percentile(first @ np.array([0.2126, 0.7152, 0.0722], np.float32), 20))
    lamp_x, lamp_y, radius = 0.80 * iw, 0.22 * ih, ph / 14  # image coordinates; radius on screen
    yy, xx = np.mgrid[:ph, :w].astype(np.float32)

    def frame(i, n):
        cx = 0.42 + 0.16 * i / max(1, n - 1)
        rgb = np.clip((view(img, w, ph, cx, 0.5, zoom) - off) * 0.5, 0, 1)
        # The lamp: a white core (clipped), a warm glow falling off around it; it moves with the pan.
        lx = (lamp_x - cx * iw) / scale + w / 2
        ly = (lamp_y - 0.5 * ih) / scale + ph / 2
        g = np.exp(-((xx - lx) ** 2 + (yy - ly) ** 2) / (2 * radius ** 2))[..., None]
        rgb = np.clip(rgb + g * np.array([3.0, 2.6, 2.0], np.float32), 0, 1)
        out = np.zeros((h, w, 3), np.float32)
        out[bars:bars + ph] = rgb
        return out

    return [(int(round(fps * seconds)), frame)], bars


BLACKS = ("blacks", "blacks_full", "blacks10", "blacks10_full")  # (depth, range): (8, limited), (8, full), (10, ...)
CLIPS = ("trailer", "street", "dark", "cut") + BLACKS


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir")
    ap.add_argument("--size", default="960x540")
    ap.add_argument("--fps", type=int, default=30)
    ap.add_argument("--ten-bit", action="store_true")
    ap.add_argument("--only", default=",".join(CLIPS), help="the clips to make, comma-separated (" + ", ".join(CLIPS) + ")")
    ap.add_argument("--frames", type=int, default=0, help="at most this many frames a clip (0: all; tests use a few)")
    a = ap.parse_args()
    w, h = (int(v) for v in a.size.split("x"))
    only = set(a.only.split(","))
    if not only <= set(CLIPS):
        sys.exit(f"make_quality_clips.py: --only: unknown clip {sorted(only - set(CLIPS))[0]} ({', '.join(CLIPS)})")
    os.makedirs(a.outdir, exist_ok=True)
    fps = a.fps
    out = lambda name: os.path.join(a.outdir, name + ".mkv")

    def make(name, shots, *args, **kw):
        if a.frames:
            shots = [(min(n, a.frames), fn) for n, fn in shots]
            total = 0
            for k, (n, fn) in enumerate(shots):
                if total + n >= a.frames:
                    shots = shots[:k] + [(a.frames - total, fn)]
                    break
                total += n
        render(out(name), w, h, fps, shots, *args, **kw)

    if "trailer" in only:
        shots, fi, fo = trailer(w, h, fps)
        make("trailer", shots, fi, fo, noise=2.0, crf=24, seed=1, still=45,
             describe="dim animated trailer: 6 shots, hard cuts and fades through black, a bright object crossing, noise")
        if a.ten_bit:
            make("trailer10", shots, fi, fo, noise=2.0, crf=24, seed=1, depth=10,
                 describe="the trailer at 10 bits (x264 High 10)")

    moto = photo("motorcycle_left.png")

    def street(i, n):
        t = i / fps
        rgb = view(moto, w, h, 0.5, 0.55, 1.0) * (0.28 * (1 + 0.03 * np.sin(2 * np.pi * t / 7)))
        phase = (t % 3.0) / 1.0  # a headlight crosses during the first second of every 3
        if phase < 1:
            disc(rgb, int(-0.1 * w + 1.2 * w * phase), int(0.7 * h), h // 10, 1.0)
        return rgb

    if "street" in only:
        make("street", [(fps * 10, street)], set(), set(), noise=2.5, crf=26, seed=2, still=15,
             describe="static street camera at dusk: fresh noise every frame, a headlight crossing every 3 s, slow exposure drift")

    astro = photo("astronaut.png")

    def dark(i, n):
        base = view(astro, w, h, 0.45 + 0.1 * i / n, 0.5, 1.3)
        return 0.02 + 0.13 * base  # luma about 16..50 of 255

    if "dark" in only:
        make("dark", [(fps * 8, dark)], set(), set(), noise=1.5, crf=28, seed=3, still=120,
             describe="dark low-contrast scene (luma about 16..50), heavy compression, slow pan")

    coffee = photo("coffee.png")
    bright = lambda i, n: np.clip(view(astro, w, h, 0.5, 0.4, 1.1 + 0.1 * i / n) * 1.05 + 0.05, 0, 1)
    dim = lambda i, n: view(coffee, w, h, 0.5, 0.5, 1.2 + 0.1 * i / n) * 0.15
    if "cut" in only:
        make("cut", [(fps * 3, bright), (fps * 3, dim), (fps * 2, bright)], set(), set(),
             noise=1.5, crf=22, seed=4, still=135, describe="a bright shot, a cut to a dark shot, a cut back")

    # Lossless (FFV1): the point of these clips is their exact levels (black bars at black, shadows
    # at 16..20); x264 would ring into the bars and below black around the noise.
    shots, bars = blacks(w, h, fps)
    for depth in (8, 10):
        for full in (False, True):
            name = "blacks" + ("10" if depth == 10 else "") + ("_full" if full else "")
            if name in only:
                make(name, shots, set(), set(), noise=2.0, crf=None, seed=5, depth=depth, full=full, bars=bars, still=30,
                     describe=f"true blacks, {depth}-bit {'full' if full else 'limited'} range: a dim cafe whose shadows "
                              "sit at black, a lamp reaching white, letterboxed 2.39:1 (bars at black), camera noise "
                              "clipped at black, a slow pan")


if __name__ == "__main__":
    main()
