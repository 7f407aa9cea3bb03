#!/usr/bin/python3
"""A regression corpus of mutated inputs, and its run: histeq export and play on every one.

  corpus.py make DIR                  seed clips (ffmpeg CLI) and their mutants, deterministic
  corpus.py run --histeq BIN DIR      each input through `export --cpu` and `play --headless --cpu`

A mutant is a seed truncated (at several points, in the header and mid-stream), with bits flipped
(few or many, anywhere or in the first kilobytes), with a range zeroed, or with a chunk repeated.
The run passes when every command ends as histeq's contract says bad input must: exit 0 or 1 (1:
one line "histeq: FILE: cause" on stderr), within its timeout, no output and no temporary file left
on failure; never a crash, a sanitizer report (exit 86 ASan, 87 UBSan: tests/sanitize/env.sh), an
abort or a hang.
"""
import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

SEEDS = [  # name, ffmpeg output arguments
    ("h264_aac.mp4", ["-f", "lavfi", "-i", "testsrc2=s=160x90:r=25:d=1", "-f", "lavfi", "-i", "sine=d=1", "-c:v", "libx264",
                      "-preset", "ultrafast", "-g", "10", "-c:a", "aac", "-pix_fmt", "yuv420p"]),
    ("ffv1.mkv", ["-f", "lavfi", "-i", "testsrc2=s=96x64:r=25:d=0.6", "-c:v", "ffv1", "-pix_fmt", "yuv422p10le", "-fflags",
                  "+bitexact"]),  # bitexact: no random segment UID, the same bytes every time
    ("mpeg2.ts", ["-f", "lavfi", "-i", "testsrc2=s=160x90:r=25:d=1", "-c:v", "mpeg2video", "-g", "5"]),
    ("raw.y4m", ["-f", "lavfi", "-i", "testsrc2=s=64x48:r=25:d=0.4", "-pix_fmt", "yuv420p"]),
    ("mjpeg.avi", ["-f", "lavfi", "-i", "testsrc2=s=96x64:r=25:d=0.6", "-c:v", "mjpeg", "-pix_fmt", "yuvj420p"]),
    ("hevc.mov", ["-f", "lavfi", "-i", "testsrc2=s=128x72:r=25:d=0.6", "-c:v", "libx265", "-preset", "ultrafast",
                  "-x265-params", "log-level=none", "-pix_fmt", "yuv420p10le"]),
]
MUTANTS_PER_SEED = 10
EXIT_OK = (0, 1)


def mutate(data, rng, kind):
    b = bytearray(data)
    n = len(b)
    if kind == "truncate":
        return bytes(b[:rng.choice([16, 64, 200, n // 3, n // 2, n - 100, n - 1])])
    if kind == "flip_head":
        for _ in range(rng.randint(1, 8)):
            i = rng.randrange(min(n, 4096))
            b[i] ^= 1 << rng.randrange(8)
    elif kind == "flip_any":
        for _ in range(rng.randint(1, 64)):
            i = rng.randrange(n)
            b[i] ^= 1 << rng.randrange(8)
    elif kind == "zero":
        i = rng.randrange(n)
        m = min(n - i, rng.randint(16, 2048))
        b[i:i + m] = bytes(m)
    elif kind == "repeat":
        i = rng.randrange(n // 2)
        b[i:i] = b[i:i + rng.randint(100, 3000)]
    elif kind == "bytes":  # every byte of a span set to one value (0xff runs confuse size fields)
        i = rng.randrange(n)
        v = rng.choice([0xff, 0x7f, 0x80])
        for k in range(i, min(n, i + rng.randint(4, 64))):
            b[k] = v
    return bytes(b)


KINDS = ["truncate", "flip_head", "flip_any", "zero", "repeat", "bytes"]


def make(folder, seeds=SEEDS, per_seed=MUTANTS_PER_SEED, rng_seed=18):
    """Writes each seed (ffmpeg CLI) as seed_NAME and its `per_seed` mutants as BASE_KK_KIND.EXT
    into `folder`, the kinds in turn; deterministic for a given (seeds, per_seed, rng_seed): the
    same corpus on every machine. tests/e2e/fuzz.py makes CI's smaller corpus with it."""
    os.makedirs(folder, exist_ok=True)
    rng = random.Random(rng_seed)
    made = 0
    for name, args in seeds:
        seed = os.path.join(folder, "seed_" + name)
        r = subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y"] + args + [seed], capture_output=True, text=True)
        if r.returncode != 0:
            print(f"corpus: no seed {name} (this ffmpeg cannot write it): {r.stderr.strip()[:200]}")
            continue
        data = open(seed, "rb").read()
        base, ext = os.path.splitext(name)
        for k in range(per_seed):
            kind = KINDS[k % len(KINDS)]
            with open(os.path.join(folder, f"{base}_{k:02d}_{kind}{ext}"), "wb") as f:
                f.write(mutate(data, rng, kind))
            made += 1
    print(f"corpus: {made} mutants of {len(seeds)} seeds in {folder}")
    return made


def check(cmd, inp, out, timeout):
    t0 = time.monotonic()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"hung (over {timeout} s)"
    dt = time.monotonic() - t0
    if r.returncode not in EXIT_OK:
        return f"exit {r.returncode} after {dt:.1f} s:\n{r.stderr[-3000:]}"
    if r.returncode == 1:
        lines = [l for l in r.stderr.splitlines() if l.strip()]
        if len(lines) != 1 or not lines[0].startswith(f"histeq: {inp}: "):
            return f"exit 1 without one line naming the file: {lines[:5]}"
        if out and os.path.exists(out):
            return "failed but left its output"
    if out:
        folder = os.path.dirname(out)
        left = [f for f in os.listdir(folder) if f.endswith(".part")]
        if left:
            return f"temporary files left: {left}"
    return ""


def run(histeq, folder, timeout):
    inputs = sorted(f for f in os.listdir(folder) if not f.startswith("seed_"))
    assert inputs, "empty corpus"
    work = tempfile.mkdtemp(prefix="histeq-corpus-")
    failures, t0 = [], time.monotonic()
    try:
        for name in inputs:
            inp = os.path.join(folder, name)
            out = os.path.join(work, "out.mkv")
            for cmd, o in (([histeq, "export", "--cpu", "--progress", "none", "-c", "ffv1", inp, "-o", out], out),
                           ([histeq, "play", "--headless", "--cpu", "--max-speed", "--quiet", inp], None)):
                why = check(cmd, inp, o, timeout)
                if why:
                    failures.append(f"{' '.join(cmd[1:3])} {name}: {why}")
                if o and os.path.exists(o):
                    os.remove(o)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"corpus: {len(inputs)} inputs, {2 * len(inputs)} runs, {len(failures)} failures, {time.monotonic() - t0:.0f} s")
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["make", "run"])
    ap.add_argument("dir")
    ap.add_argument("--histeq")
    ap.add_argument("--timeout", type=float, default=60)
    a = ap.parse_args()
    if a.what == "make":
        return 0 if make(a.dir) > 0 else 1
    if not os.path.isdir(a.dir) or not os.listdir(a.dir):
        make(a.dir)
    return run(os.path.abspath(a.histeq), a.dir, a.timeout)


if __name__ == "__main__":
    sys.exit(main())
