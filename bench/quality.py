#!/usr/bin/python3
"""Picture-quality metrics of `histeq quality` (docs/quality.md): histeq's outputs (made by the
histeq binary, listed in a manifest) beside the peers available on this machine, on the same clips.

  bench/quality.py --manifest DIR/histeq_runs.json --out DIR [--peers auto|none] [--stills]

Peers: ffmpeg's `histeq`, `normalize` (and with smoothing over 15 frames), `histeq,deflicker`
(when the ffmpeg CLI has those filters), OpenCV's equalizeHist and CLAHE (clip 2, 8x8) on the luma
(when python3-opencv is installed). Every output is decoded at the clip's own depth (yuv420p, or
yuv420p10le for a 10-bit clip) and measured the same way. crushed and shadow detail are computed at
that depth; the older figures on an 8-bit view of 10-bit frames ((v + 2) >> 2, so their 8-bit
thresholds and scales keep their meaning). OpenCV's peers equalize that 8-bit view (its
equalizeHist is 8-bit only), scaled back << 2 for the 10-bit measures.

  flicker      frame-to-frame change of the mean luma (at the clip's depth, in 8-bit levels),
               |m(t) - m(t-1)|, p50 and p99 over the frames
               that are not the first of a shot (cuts from the clip's .json), as a ratio to the
               input's; and the same for the total-variation distance between consecutive 256-bin
               luma histograms
  cut lag      for histeq configurations with the temporal filter: frames after each cut until the
               output's mean luma stays (3 frames) within 2 levels of the same configuration's
               without the filter (its "reference" run): 0 = the new shot's exposure at once
  colourfulness  Hasler & Suesstrunk 2003 (M = sigma_rgyb + 0.3 mu_rgyb on BT.709 RGB, converted
               per the clip's range and clipped to 0..255 as a display shows it), mean over every
               5th frame, output / input
  noise        in every 10th frame, the flattest 5 % of the 16x16 luma windows of the input (lowest
               standard deviation, among those above 0.25: a window that compression made perfectly
               flat stays flat through any LUT); the outputs' standard deviation in the same
               windows over the input's (sums over the windows)
  clipped      fraction of luma samples at 0 or 255 (of the 8-bit view, below)
  crushed      the share of luma samples at or below black or at or above white as a display shows
               them, per the clip's range (ffprobe's color_range: tv or untagged = limited, black
               16 and white 235, << (depth - 8) at 10 bits; pc = full, black 0 and white the
               maximum), output minus input in percentage points (the output's and the input's
               shares beside it). Every output is measured against the clip's range (histeq keeps
               the tag)
  shadow detail  in every 5th frame, the mean gradient magnitude (central differences) of the luma
               smoothed by a 3x3 box (so noise counts less than edges), over the darkest quarter by
               mean of the input's 16x16 windows that are not constant (letterbox bars are, and
               have no detail to lose), the same windows in the output: output over input (sums
               over the windows and frames); below 1 = shadow detail lost
  lifted black   in the same frames, the share of the input's luma samples at or below black whose
               output is above black at 8-bit precision (the 8-bit view): black lifted to a grey
               (letterbox bars), which the crushed figure counts as less crushed
  contrast     luma standard deviation (mean over frames), and its ratio to the input's
  time         ms per frame of the equalization: histeq's stage times (histogram .. apply, from
               its --stats-json), ffmpeg's filter by -benchmark (filtered minus unfiltered decode,
               best of 2, one filter thread), OpenCV's call (median over frames)

Writes DIR/quality.csv, DIR/quality.json, DIR/quality_table.md (the table of docs/quality.md),
DIR/crush_table.md (crushed, shadow detail and lifted black, a row a clip and a column a method),
DIR/floors_table.md (the floors of every histeq configuration with the temporal filter),
DIR/mean_luma.png (mean luma per frame, input and outputs) and with --stills DIR/stills/CLIP.png (input, plain, default, clahe and OpenCV CLAHE side by
side). Needs numpy, matplotlib and the ffmpeg CLI.
"""
import argparse
import csv
import itertools
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np

NOISE_EVERY = 10
COLOUR_EVERY = 5
DETAIL_EVERY = 5


def frames(cmd, w, h, depth=8):
    """Frames (Y, U, V) of yuv420p (8-bit) or yuv420p10le (16-bit samples) from a command's stdout."""
    bps = 1 if depth == 8 else 2
    cw, ch = (w + 1) // 2, (h + 1) // 2  # odd sizes: FFmpeg's chroma planes round up
    size = (w * h + 2 * cw * ch) * bps
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        while True:
            buf = p.stdout.read(size)
            if len(buf) < size:
                break
            a = np.frombuffer(buf, dtype=np.uint8 if bps == 1 else np.uint16)
            y = a[:w * h].reshape(h, w)
            u = a[w * h:w * h + cw * ch].reshape(ch, cw)
            v = a[w * h + cw * ch:].reshape(ch, cw)
            yield y, u, v
    finally:
        p.stdout.close()
        p.wait()


def decode(path, w, h, vf=None, depth=8):
    """Frames at `depth` bits (8: yuv420p; 10: yuv420p10le), samples as stored (no range change)."""
    cmd = ["ffmpeg", "-nostdin", "-v", "error", "-i", path]
    if vf:
        cmd += ["-vf", vf]
    pix = "yuv420p" if depth == 8 else "yuv420p10le"
    # Every decoded frame once: rawvideo output is constant-rate by default, and ffmpeg would repeat
    # a frame to fill a gap (an output whose video starts 23 ms in, behind AAC's priming samples,
    # came out a frame longer than its input: the KeyError on a 3-second clip).
    return frames(cmd + ["-fps_mode", "passthrough", "-pix_fmt", pix, "-f", "rawvideo", "-"], w, h, depth)


def probe_video(path):
    """(width, height, bit depth, full range) of the first video stream. Untagged is limited range,
    as ffmpeg and players assume."""
    r = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-of", "json", "-show_entries",
                        "stream=width,height,pix_fmt,bits_per_raw_sample,color_range", path], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{path}: ffprobe failed: {r.stderr.strip()}")
    st = json.loads(r.stdout)["streams"][0]
    depth = 10 if "10" in st.get("pix_fmt", "") else 8
    return st["width"], st["height"], depth, st.get("color_range") == "pc"


def levels(depth, full):
    """(black, white) luma levels of a range at a depth: limited 16 and 235 << (depth - 8); full 0 and
    the maximum."""
    if full:
        return 0, (1 << depth) - 1
    return 16 << (depth - 8), 235 << (depth - 8)


def to8(p, depth):
    """The 8-bit view of a plane (rounded), for the metrics defined on 8-bit levels."""
    if depth == 8:
        return p
    return np.minimum((p.astype(np.uint32) + (1 << (depth - 9))) >> (depth - 8), 255).astype(np.uint8)


def crushed(y, black, white):
    """(share at or below black, share at or above white) of a luma plane."""
    return float(np.count_nonzero(y <= black)) / y.size, float(np.count_nonzero(y >= white)) / y.size


def lifted_black(y, depth, black):
    """Where a luma plane is visibly above black: above it at 8-bit precision (the 8-bit view, so a
    10-bit sample a quarter of a level above black is not counted)."""
    return to8(y, depth) > (black >> (depth - 8))


def smoothed_gradient(y):
    """Gradient magnitude (central differences) of the luma smoothed by a 3x3 box (edges repeated)."""
    f = np.pad(y.astype(np.float32), 1, mode="edge")
    h, w = y.shape
    box = sum(f[r:r + h, c:c + w] for r in range(3) for c in range(3)) / 9.0
    gy, gx = np.gradient(box)
    return np.sqrt(gx * gx + gy * gy)


def window_means(a, size=16):
    h, w = (a.shape[0] // size) * size, (a.shape[1] // size) * size
    return a[:h, :w].astype(np.float32).reshape(h // size, size, w // size, size).mean(axis=(1, 3)).ravel()


def shadow_windows(y, size=16):
    """The darkest quarter (by mean) of the 16x16 windows of an input frame that are not constant."""
    h, w = (y.shape[0] // size) * size, (y.shape[1] // size) * size
    t = y[:h, :w].reshape(h // size, size, w // size, size)
    live = np.nonzero((t.max(axis=(1, 3)) > t.min(axis=(1, 3))).ravel())[0]
    if len(live) == 0:
        return live
    mean = window_means(y, size)[live]
    return live[np.argsort(mean, kind="stable")[:max(1, len(live) // 4)]]


def shadow_detail_sum(y, idx):
    """The sum over the windows idx of the mean smoothed gradient in each."""
    return float(window_means(smoothed_gradient(y))[idx].sum()) if len(idx) else 0.0


def compare_files(inp, out):
    """crushed (input, output, difference in percentage points), shadow detail, lifted black, the
    flicker p99 ratio (no cuts) and the colourfulness ratio of one output against its input, as
    quality.py measures them, at the input's depth and range; shadow detail, lifted black and
    colourfulness in every frame (for the short clips of tests)."""
    w, h, depth, full = probe_video(inp)
    a, b = Stats(depth, full, detail_every=1), Stats(depth, full, detail_every=1)
    for i, (fi, fo) in enumerate(itertools.zip_longest(decode(inp, w, h, depth=depth), decode(out, w, h, depth=depth))):
        if fi is None or fo is None:
            raise RuntimeError(f"{out} has {'more' if fi is None else 'fewer'} frames than {inp}")
        a.add_levels(i, fi[0])
        b.add_levels(i, fo[0], flat=a)
        for st, f in ((a, fi), (b, fo)):
            st.mean.append(float(f[0].mean(dtype=np.float64)) / (1 << (depth - 8)))
            st.colour[i] = colourfulness(*(to8(p, depth) for p in f), full)
    r = crush_detail(a, b)
    step = lambda st: float(np.percentile(np.abs(np.diff(st.mean)), 99)) if len(st.mean) > 1 else 0.0
    r.update({"depth": depth, "full_range": full, "frames": len(a.crush),
              "flicker_p99_ratio": step(b) / step(a) if step(a) > 0 else float("nan"),
              "colourfulness_ratio": float(np.mean(list(b.colour.values())) / np.mean(list(a.colour.values())))})
    return r


def rgb709(y, u, v, full=False):
    """BT.709 YUV 4:2:0 (8-bit samples) -> RGB floats clipped to 0..255 as a display shows them (chroma
    upsampled by repetition), per the clip's range: limited (16..235 luma, 16..240 chroma) expanded
    to 0..255, full range (0..255) as it is. Reading full-range samples as limited ones put every
    shadow below 16 at negative RGB, clipped to black with its colour, and scaled the chroma by 255 /
    224: the full-range clips' colourfulness ratios came out x1.11-1.14 too high."""
    ys, cs = (1.0, 1.0) if full else (255 / 219, 255 / 224)
    Y = (y.astype(np.float32) - (0 if full else 16)) * ys
    U = np.repeat(np.repeat((u.astype(np.float32) - 128) * cs, 2, 0), 2, 1)[:y.shape[0], :y.shape[1]]
    V = np.repeat(np.repeat((v.astype(np.float32) - 128) * cs, 2, 0), 2, 1)[:y.shape[0], :y.shape[1]]
    r = Y + 1.5748 * V
    b = Y + 1.8556 * U
    g = (Y - 0.2126 * r - 0.0722 * b) / 0.7152
    return np.clip(r, 0, 255), np.clip(g, 0, 255), np.clip(b, 0, 255)


def colourfulness(y, u, v, full=False):
    r, g, b = rgb709(y, u, v, full)
    rg = r - g
    yb = 0.5 * (r + g) - b
    return math.sqrt(rg.std() ** 2 + yb.std() ** 2) + 0.3 * math.sqrt(rg.mean() ** 2 + yb.mean() ** 2)


def window_std(y, size=16):
    h, w = (y.shape[0] // size) * size, (y.shape[1] // size) * size
    t = y[:h, :w].astype(np.float32).reshape(h // size, size, w // size, size)
    return t.std(axis=(1, 3)).ravel()


def hist256(y):
    return np.bincount(y.ravel(), minlength=256)[:256].astype(np.float64) / y.size


class Stats:
    """Per-frame figures of one sequence of frames (input or an output) at `depth` bits."""

    def __init__(self, depth=8, full=False, detail_every=DETAIL_EVERY):
        self.mean, self.std, self.clipped, self.hists, self.colour, self.windows = [], [], [], [], {}, {}
        self.depth, self.full = depth, full
        self.black, self.white = levels(depth, full)
        self.crush, self.detail, self.detail_every = [], {}, detail_every
        self.black_masks, self.lifted = {}, [0, 0]  # input: where it is black; output: [lifted, input-black samples]

    def add_levels(self, i, y, flat=None):
        """crushed, shadow detail and lifted black, at the frames' own depth (flat: the input's
        Stats, whose shadow windows and black samples an output is measured in)."""
        self.crush.append(crushed(y, self.black, self.white))
        if i % self.detail_every == 0:
            idx = shadow_windows(y) if flat is None else flat.detail[i][0]
            self.detail[i] = (idx, shadow_detail_sum(y, idx))
            if flat is None:
                self.black_masks[i] = np.packbits(y.ravel() <= self.black)
            else:
                black = np.unpackbits(flat.black_masks[i], count=y.size).astype(bool)
                self.lifted[0] += int(np.count_nonzero(lifted_black(y, self.depth, self.black).ravel() & black))
                self.lifted[1] += int(np.count_nonzero(black))

    def add(self, i, y, u, v, flat=None):
        self.add_levels(i, y, flat)
        # The mean at the frame's own precision, in 8-bit levels: the mean of the rounded 8-bit view
        # moves by up to 0.005 levels with the rounding alone, a tenth of the slow pans' steps.
        self.mean.append(float(y.mean(dtype=np.float64)) / (1 << (self.depth - 8)))
        y, u, v = (to8(p, self.depth) for p in (y, u, v))
        self.std.append(float(y.std()))
        self.clipped.append(float(np.count_nonzero((y == 0) | (y == 255))) / y.size)
        self.hists.append(hist256(y))
        if i % COLOUR_EVERY == 0:
            self.colour[i] = colourfulness(y, u, v, self.full)
        if i % NOISE_EVERY == 0:
            s = window_std(y)
            if flat is None:  # the input: choose the flattest 5 % of the windows that are not constant
                k = max(1, len(s) // 20)
                live = np.nonzero(s >= 0.25)[0]
                idx = live[np.argsort(s[live], kind="stable")[:k]]
                self.windows[i] = (idx, s[idx])
            else:
                idx = flat.windows[i][0]
                self.windows[i] = (idx, s[idx])


def shot_starts(meta, n):
    return set(meta.get("cuts", [])) if meta else set()


def flicker(st, cuts):
    m = np.array(st.mean)
    d = np.abs(np.diff(m))
    tv = np.array([0.5 * np.abs(st.hists[t] - st.hists[t - 1]).sum() for t in range(1, len(st.hists))])
    keep = np.array([t not in cuts for t in range(1, len(m))], dtype=bool)
    return d[keep], tv[keep]


def cut_lag(st, ref, cuts):
    m, r = np.array(st.mean), np.array(ref)
    worst = 0
    for c in sorted(cuts):
        if c + 18 > len(m):
            continue
        lag = next((k for k in range(0, 15) if all(abs(m[c + j] - r[c + j]) <= 2.0 for j in range(k, k + 3))), 15)
        worst = max(worst, lag)
    return worst


def crush_detail(inp, st):
    """crushed (percent of luma samples; the output's minus the input's in percentage points) and
    shadow detail (output over input) of an output's Stats against the input's."""
    cin = 100 * np.mean(inp.crush, axis=0)
    cout = 100 * np.mean(st.crush, axis=0)
    d_in = sum(inp.detail[i][1] for i in st.detail)
    d_out = sum(v[1] for v in st.detail.values())
    return {"crushed_pct": float(cout.sum()), "crushed_black_pct": float(cout[0]), "crushed_white_pct": float(cout[1]),
            "crushed_in_pct": float(cin.sum()), "crushed_pp": float(cout.sum() - cin.sum()),
            "shadow_detail_ratio": float(d_out / d_in) if d_in > 0 else float("nan"),
            "lifted_black_pct": 100.0 * st.lifted[0] / st.lifted[1] if st.lifted[1] > 0 else float("nan")}


def measure(clip, inp, st, cuts, ref=None):
    d_in, tv_in = flicker(inp, cuts)
    d, tv = flicker(st, cuts)
    ratio = lambda a, b: float(a / b) if b > 0 else float("nan")
    col_in = np.mean([inp.colour[i] for i in st.colour])
    col = np.mean(list(st.colour.values()))
    noise_in = sum(float(inp.windows[i][1].sum()) for i in st.windows)
    noise = sum(float(st.windows[i][1].sum()) for i in st.windows)
    return {
        "flicker_mean_p50": float(np.percentile(d, 50)), "flicker_mean_p99": float(np.percentile(d, 99)),
        "flicker_mean_p50_ratio": ratio(np.percentile(d, 50), np.percentile(d_in, 50)),
        "flicker_mean_p99_ratio": ratio(np.percentile(d, 99), np.percentile(d_in, 99)),
        "flicker_hist_p50_ratio": ratio(np.percentile(tv, 50), np.percentile(tv_in, 50)),
        "flicker_hist_p99_ratio": ratio(np.percentile(tv, 99), np.percentile(tv_in, 99)),
        "cut_lag_frames": cut_lag(st, ref, cuts) if cuts and ref is not None else None,
        "colourfulness_ratio": ratio(col, col_in),
        "noise_ratio": ratio(noise, noise_in),
        "clipped_pct": 100 * float(np.mean(st.clipped)),
        "contrast": float(np.mean(st.std)),
        "contrast_ratio": ratio(np.mean(st.std), np.mean(inp.std)),
        **crush_detail(inp, st),
    }


def ffmpeg_filters():
    try:
        out = subprocess.run(["ffmpeg", "-hide_banner", "-filters"], capture_output=True, text=True).stdout
    except FileNotFoundError:
        return set()
    return {l.split()[1] for l in out.splitlines() if len(l.split()) > 2 and l.startswith(" ")}


def ffmpeg_ms(path, vf, frames_n):
    def rtime(extra):
        best = float("inf")
        for _ in range(2):
            r = subprocess.run(["ffmpeg", "-nostdin", "-benchmark", "-filter_threads", "1", "-i", path] + extra +
                               ["-pix_fmt", "yuv420p", "-f", "null", "-"], capture_output=True, text=True)
            m = re.search(r"rtime=([\d.]+)s", r.stderr)
            if m:
                best = min(best, float(m.group(1)))
        return best
    base = rtime([])
    withf = rtime(["-vf", vf])
    return max(0.0, (withf - base) * 1000 / frames_n)


def peers(enabled):
    out = []
    if not enabled:
        return out
    f = ffmpeg_filters()
    if "histeq" in f:
        out.append(("ffmpeg histeq", "ffmpeg", "histeq"))
    if "normalize" in f:
        out.append(("ffmpeg normalize", "ffmpeg", "normalize"))
        out.append(("ffmpeg normalize s15", "ffmpeg", "normalize=smoothing=15"))
    if "histeq" in f and "deflicker" in f:
        out.append(("ffmpeg histeq+deflicker", "ffmpeg", "histeq,deflicker"))
    try:
        import cv2  # noqa: F401
        out.append(("opencv equalizeHist", "opencv", "equalize"))
        out.append(("opencv CLAHE 2 8x8", "opencv", "clahe"))
    except ImportError:
        print("quality.py: python3-opencv is not installed: no OpenCV peers", file=sys.stderr)
    return out


def run_opencv(kind, path, w, h, depth=8):
    """OpenCV on the 8-bit view of the luma; at 10 bits its output scaled back (<< 2)."""
    import cv2
    clahe = cv2.createCLAHE(clipLimit=2.0, tileGridSize=(8, 8))
    times = []
    for y, u, v in decode(path, w, h, depth=depth):
        y8 = to8(y, depth)
        t = time.perf_counter()
        o = cv2.equalizeHist(y8) if kind == "equalize" else clahe.apply(y8)
        times.append((time.perf_counter() - t) * 1000)
        if depth > 8:
            o = o.astype(np.uint16) << (depth - 8)
        yield (o, u, v), times


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--peers", default="auto", choices=["auto", "none"])
    ap.add_argument("--stills", action="store_true")
    a = ap.parse_args()
    man = json.load(open(a.manifest))
    os.makedirs(a.out, exist_ok=True)
    rows, curves = [], {}
    still_frames = {}
    peer_list = peers(a.peers == "auto")
    for clip in man["clips"]:
        name, path, w, h = clip["name"], clip["path"], clip["width"], clip["height"]
        meta = json.load(open(clip["meta"])) if clip.get("meta") and os.path.exists(clip["meta"]) else {}
        _, _, depth, full = probe_video(path)
        still_at = int(meta.get("still", clip["frames"] // 2))
        stills = {}
        inp, cuts, row = measure_input(name, path, w, h, depth, full, meta, still_at, stills)
        rows.append(row)
        curves[name] = {"input": inp.mean}

        methods = []
        runs = [r for r in man["runs"] if r["clip"] == name]
        for r in sorted(runs, key=lambda r: 0 if any(r["config"] == o.get("reference") for o in runs) else 1):
            methods.append((r["config"], "histeq", r))
        for label, kind, arg in peer_list:
            methods.append((label, kind, arg))
        for label, kind, arg in methods:
            ms = {}
            st, n, times = measure_frames(method_frames(kind, arg, path, w, h, depth, full), inp, still_at, stills, label)
            if kind == "histeq":
                times = arg.get("ms", [])
            if n != len(inp.mean):
                print(f"quality.py: {name} {label}: {n} frames out of {len(inp.mean)}", file=sys.stderr)
                continue
            if kind == "ffmpeg":
                ms = {"ms_median": ffmpeg_ms(path, arg, n), "ms_p99": None, "time_note": "ffmpeg -benchmark, 1 filter thread"}
            elif times:
                ms = {"ms_median": float(np.median(times)), "ms_p99": float(np.percentile(times, 99)),
                      "time_note": arg.get("time_note", "histeq stage times") if kind == "histeq" else "cv2 call on the luma"}
            row = {"clip": name, "method": label, "kind": kind,
                   "settings": arg.get("quality", "") if kind == "histeq" else (arg if kind == "ffmpeg" else "")}
            ref = None
            if kind == "histeq" and arg.get("reference"):
                ref = curves[name].get(arg["reference"])
            row.update(measure(name, inp, st, cuts, ref))
            row.update(ms)
            rows.append(row)
            curves[name][label] = st.mean
            print(f"  {label:24s} flicker p99 x{row['flicker_mean_p99_ratio']:.2f}  colour x{row['colourfulness_ratio']:.2f}  "
                  f"noise x{row['noise_ratio']:.2f}  clipped {row['clipped_pct']:.1f} %  contrast x{row['contrast_ratio']:.2f}  "
                  f"cut lag {row['cut_lag_frames']}  hist p99 x{row['flicker_hist_p99_ratio']:.2f}  "
                  f"crushed {row['crushed_pct']:.2f} % (input {row['crushed_in_pct']:.2f}, {row['crushed_pp']:+.2f} pp)  "
                  f"shadow detail x{row['shadow_detail_ratio']:.2f}  lifted black {row['lifted_black_pct']:.2f} %  "
                  f"{row.get('ms_median', float('nan')) or 0:.3f} ms", flush=True)
        still_frames[name] = (stills, full)

    write_results(a.out, man, rows)
    write_markdown(rows, os.path.join(a.out, "quality_table.md"))
    write_crush_markdown(rows, os.path.join(a.out, "crush_table.md"))
    write_floors_markdown(rows, os.path.join(a.out, "floors_table.md"))
    plot(curves, os.path.join(a.out, "mean_luma.png"))
    if a.stills:
        for name, (stills, full) in still_frames.items():
            save_stills(name, stills, os.path.join(a.out, "stills", name + ".png"), full)
    print(f"wrote {a.out}/quality.csv, quality.json, quality_table.md, crush_table.md, floors_table.md, mean_luma.png" + (", stills/" if a.stills else ""))


def measure_input(name, path, w, h, depth, full, meta, still_at, stills):
    """(Stats, cuts, row) of a clip's input; its still into stills."""
    inp = Stats(depth, full)
    for i, (y, u, v) in enumerate(decode(path, w, h, depth=depth)):
        inp.add(i, y, u, v)
        if i == still_at:
            stills["input"] = tuple(to8(p, depth).copy() for p in (y, u, v))
    cuts = shot_starts(meta, len(inp.mean))
    # Where a scene-cut threshold must sit: the input's histogram distances at cuts and within
    # shots (fades through black, where the histogram changes fastest, apart).
    _, tv_in = flicker(inp, set())
    fades = set(meta.get("fade_frames", []))
    at_cut = [float(tv_in[c - 1]) for c in cuts if 0 < c <= len(tv_in)]
    inside = [float(tv_in[t - 1]) for t in range(1, len(inp.mean)) if t not in cuts and t not in fades and t - 1 not in fades] or [0.0]
    cin = 100 * np.mean(inp.crush, axis=0)
    row = {"clip": name, "method": "input", "kind": "input", "settings": meta.get("description", ""),
           "crushed_pct": float(cin.sum()), "crushed_black_pct": float(cin[0]), "crushed_white_pct": float(cin[1]),
           "crushed_in_pct": float(cin.sum()), "range": "full" if full else "limited", "bit_depth": depth,
           "hist_distance_at_cuts_min": min(at_cut) if at_cut else None,
           "hist_distance_within_shots_max": max(inside) if inside else None}
    print(f"{name}: {len(inp.mean)} frames, {depth}-bit {'full' if full else 'limited'} range, crushed {cin.sum():.2f} % "
          f"(black {cin[0]:.2f} + white {cin[1]:.2f}), cuts {sorted(cuts)}; histogram distance at cuts min "
          f"{min(at_cut) if at_cut else float('nan'):.3f}, within shots max {max(inside):.3f}", flush=True)
    return inp, cuts, row


def method_frames(kind, arg, path, w, h, depth, full):
    """An output's frames at the clip's depth, each with the per-frame times so far (OpenCV's) or None."""
    if kind == "histeq":
        return ((f, None) for f in decode(arg["output"], w, h, depth=depth))
    if kind == "ffmpeg":
        # ffmpeg's equalizers work in RGB: back in the clip's range (the default is limited).
        return ((f, None) for f in decode(path, w, h, arg + ",scale=out_range=" + ("pc" if full else "tv"), depth=depth))
    return run_opencv(arg, path, w, h, depth)


def measure_frames(gen, inp, still_at, stills, label):
    """(Stats, frames, times) of an output against the input's Stats; frames beyond the input's are
    counted, not measured (the caller reports the mismatch)."""
    st = Stats(inp.depth, inp.full)
    n, times = 0, None
    for i, (f, t) in enumerate(gen):
        n += 1
        if i >= len(inp.mean):
            continue
        st.add(i, *f, flat=inp)
        if t is not None:
            times = t
        if i == still_at:
            stills[label] = tuple(to8(p, inp.depth).copy() for p in f)
    return st, n, times


def write_results(out, man, rows):
    fields = ["clip", "method", "kind", "settings", "flicker_mean_p50", "flicker_mean_p99", "flicker_mean_p50_ratio",
              "flicker_mean_p99_ratio", "flicker_hist_p50_ratio", "flicker_hist_p99_ratio", "cut_lag_frames",
              "colourfulness_ratio", "noise_ratio", "clipped_pct", "crushed_pp", "crushed_pct", "crushed_black_pct",
              "crushed_white_pct", "crushed_in_pct", "shadow_detail_ratio", "lifted_black_pct", "contrast", "contrast_ratio", "ms_median", "ms_p99",
              "time_note", "range", "bit_depth", "hist_distance_at_cuts_min", "hist_distance_within_shots_max"]
    tmp = os.path.join(out, "quality.csv.part")
    with open(tmp, "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        wr.writeheader()
        for r in rows:
            wr.writerow(r)
    os.replace(tmp, os.path.join(out, "quality.csv"))
    tmp = os.path.join(out, "quality.json.part")
    with open(tmp, "w") as f:
        json.dump({"command": man.get("command"), "device": man.get("device"), "rows": rows}, f, indent=1)
    os.replace(tmp, os.path.join(out, "quality.json"))


def write_markdown(rows, path):
    """The table of docs/quality.md: a row a clip and method."""
    def f(v, fmt="{:.2f}"):
        return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else fmt.format(v)
    lines = ["| clip | method | flicker p50 / p99 (x input) | hist. distance p99 (x input) | cut lag (frames) | "
             "colourfulness (x input) | noise in flat areas (x input) | clipped % | crushed pp over input (output %: black + white) | "
             "shadow detail (x input) | contrast (luma sd, x input) | ms / frame |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["kind"] == "input":
            continue
        lines.append(f"| {r['clip']} | {r['method']} | {f(r['flicker_mean_p50_ratio'])} / {f(r['flicker_mean_p99_ratio'])} | "
                     f"{f(r['flicker_hist_p99_ratio'])} | {f(r['cut_lag_frames'], '{}')} | {f(r['colourfulness_ratio'])} | "
                     f"{f(r['noise_ratio'])} | {f(r['clipped_pct'], '{:.1f}')} | {f(r['crushed_pp'], '{:+.2f}')} "
                     f"({f(r['crushed_black_pct'])} + {f(r['crushed_white_pct'])}) | {f(r['shadow_detail_ratio'])} | "
                     f"{f(r['contrast'], '{:.1f}')} ({f(r['contrast_ratio'])}) | "
                     f"{f(r.get('ms_median'), '{:.2f}')} |")
    with open(path + ".part", "w") as fh:
        fh.write("\n".join(lines) + "\n")
    os.replace(path + ".part", path)


def write_crush_markdown(rows, path):
    """The blacks-and-shadows table of docs/quality.md: a row a clip, a column a method (the -t0
    references left out), each cell crushed (pp over the input) / shadow detail (x the input) /
    lifted black (% of the input's black samples)."""
    f = lambda v, fmt: "-" if v is None or (isinstance(v, float) and math.isnan(v)) else fmt.format(v)
    methods = list(dict.fromkeys(r["method"] for r in rows if r["kind"] != "input" and not r["method"].endswith("-t0")))
    lines = ["| clip (input: % at black + white) | " + " | ".join(methods) + " |", "|---" * (len(methods) + 1) + "|"]
    for clip in dict.fromkeys(r["clip"] for r in rows):
        inp = next(r for r in rows if r["clip"] == clip and r["kind"] == "input")
        cell = {r["method"]: f"{f(r['crushed_pp'], '{:+.2f}')} / {f(r['shadow_detail_ratio'], '{:.2f}')} / "
                             f"{f(r.get('lifted_black_pct'), '{:.2f}')}"
                for r in rows if r["clip"] == clip and r["kind"] != "input"}
        lines.append(f"| {clip} ({inp['crushed_black_pct']:.2f} + {inp['crushed_white_pct']:.2f}) | " +
                     " | ".join(cell.get(m, "-") for m in methods) + " |")
    with open(path + ".part", "w") as fh:
        fh.write("\n".join(lines) + "\n")
    os.replace(path + ".part", path)


def write_floors_markdown(rows, path):
    """The floors, a row a clip and histeq configuration with a cut-lag reference (the
    temporal filter on): flicker p99, cut lag, colourfulness, noise, crushed, shadow detail, lifted
    black."""
    f = lambda v, fmt: "-" if v is None or (isinstance(v, float) and math.isnan(v)) else fmt.format(v)
    lines = ["| clip | method | flicker p99 (x input) | cut lag (frames) | colourfulness (x input) | noise in flat areas (x input) | "
             "crushed (pp over input) | shadow detail (x input) | lifted black (% of input black) |", "|---" * 9 + "|"]
    for r in rows:
        if r["kind"] != "histeq" or "cut_lag_frames" not in r or r["method"].endswith("-t0") or r["method"] in ("plain", "textbook"):
            continue
        lines.append(f"| {r['clip']} | {r['method']} | {f(r['flicker_mean_p99_ratio'], '{:.2f}')} | {f(r['cut_lag_frames'], '{}')} | "
                     f"{f(r['colourfulness_ratio'], '{:.2f}')} | {f(r['noise_ratio'], '{:.2f}')} | {f(r['crushed_pp'], '{:+.2f}')} | "
                     f"{f(r['shadow_detail_ratio'], '{:.2f}')} | {f(r.get('lifted_black_pct'), '{:.2f}')} |")
    with open(path + ".part", "w") as fh:
        fh.write("\n".join(lines) + "\n")
    os.replace(path + ".part", path)


def plot(curves, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    n = len(curves)
    fig, axes = plt.subplots(n, 1, figsize=(11, 2.6 * n), squeeze=False)
    for ax, (clip, c) in zip(axes[:, 0], curves.items()):
        for label, m in c.items():
            style = dict(color="black", lw=2.2) if label == "input" else dict(lw=1.1)
            if label in ("plain", "default", "clahe"):
                style["lw"] = 1.8
            ax.plot(m, label=label, **style)
        ax.set_title(clip, loc="left", fontsize=10)
        ax.set_ylabel("mean luma")
        ax.set_ylim(0, 255)
        ax.grid(alpha=0.3)
    axes[0, 0].legend(fontsize=7, ncol=4, loc="upper right")
    axes[-1, 0].set_xlabel("frame")
    fig.tight_layout()
    fig.savefig(path + ".part.png", dpi=90)
    os.replace(path + ".part.png", path)
    plt.close(fig)


def save_stills(name, stills, path, full=False):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    order = [k for k in ("input", "plain", "default", "clahe", "opencv CLAHE 2 8x8", "ffmpeg histeq") if k in stills]
    if len(order) < 2:
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    cols = 3 if len(order) > 4 else 2
    rows_n = (len(order) + cols - 1) // cols
    y0 = stills["input"][0]
    aspect = y0.shape[0] / y0.shape[1]
    fig, axes = plt.subplots(rows_n, cols, figsize=(5 * cols, 5 * cols * aspect * rows_n / cols + 0.4 * rows_n), squeeze=False)
    for ax in axes.ravel():
        ax.axis("off")
    for ax, k in zip(axes.ravel(), order):
        r, g, b = rgb709(*stills[k], full)
        ax.imshow(np.stack([r, g, b], -1).astype(np.uint8))
        ax.set_title(k, fontsize=10)
    fig.tight_layout()
    fig.savefig(path + ".part.png", dpi=80)
    plt.close(fig)
    try:  # 256 colours (as scripts/player_screenshots.sh): a fraction of the size, for the docs
        from PIL import Image
        im = Image.open(path + ".part.png").convert("RGB")
        im.quantize(colors=256, method=Image.Quantize.LIBIMAGEQUANT, dither=Image.Dither.FLOYDSTEINBERG).save(
            path + ".part.png", optimize=True)
    except Exception:  # no python3-pil (or no libimagequant): the full PNG
        pass
    os.replace(path + ".part.png", path)


if __name__ == "__main__":
    main()
