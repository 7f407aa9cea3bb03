#!/usr/bin/env python3
"""Export benchmark: the same 1080p60 clip exported three ways, in one run, with the same x264
settings, timed by wall clock (and CPU time of the process tree):

  plain      ffmpeg -i CLIP -c:v libx264 -preset P -crf C OUT            (the floor: decode + encode)
  histeq     histeq export CLIP -o OUT --preset P --crf C                (GPU when present, else CPU)
  vf_histeq  ffmpeg -i CLIP -vf histeq -c:v libx264 -preset P -crf C OUT (FFmpeg's own equalizer)
  passthrough histeq export --passthrough ...  (histeq's own decode + encode with no equalization:
             the floor on machines without the ffmpeg CLI, e.g. the GPU machine)
  strength0  histeq export --strength 0 ...  (the whole equalizer runs, but the picture is unchanged:
             separates histeq's own cost from x264's extra work on the equalized, busier picture)

Rounds are interleaved (each round runs every method once, in a rotated order) so that a change in
the machine's load hits all methods alike; the table gives the median of the rounds, the ratio of
each median to the floor's, and the median of the per-round ratios (each method against the floor
of the same round: the steadier figure on a shared machine). Needs only the Python standard library.

  bench/export_bench.py [--clip FILE] [--frames 600] [--rounds 3] [--preset veryfast] [--crf 20]
                        [--histeq build/app/histeq] [--methods plain,histeq,vf_histeq,passthrough]
                        [--extra-histeq "--cpu"] [--codec rawvideo] [--csv FILE] [--json FILE]
--codec NAME times histeq's methods with that encoder instead of x264 (rawvideo: no encoding at
all), written as Matroska to standard output, which goes to /dev/null: the floor where the encoder is
not the bottleneck (the plain and vf_histeq methods keep x264).
The clip is made by bench/make_real_clip.sh when it does not exist (needs the ffmpeg CLI).
"""
import argparse
import json
import os
import platform
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def timed(cmd):
    """Runs cmd; returns (wall seconds, CPU seconds of it and its children)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        sys.exit(f"export_bench: {' '.join(map(shlex.quote, cmd))} failed:\n{r.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clip", default=os.path.join(HERE, "..", ".cache", "real1080p60_600.mp4"))
    ap.add_argument("--frames", type=int, default=600)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--preset", default="veryfast")
    ap.add_argument("--crf", type=int, default=20)
    ap.add_argument("--histeq", default=os.path.join(HERE, "..", "build", "app", "histeq"))
    ap.add_argument("--methods", default=None,
                    help="default: plain,histeq,vf_histeq,passthrough,strength0 (without ffmpeg: passthrough,histeq,strength0)")
    ap.add_argument("--extra-histeq", default="", help="more options for histeq export, e.g. --cpu")
    ap.add_argument("--codec", default="libx264",
                    help="histeq's encoder; other than libx264: its output to /dev/null as Matroska, without --preset and --crf")
    ap.add_argument("--csv")
    ap.add_argument("--json")
    a = ap.parse_args()

    have_ffmpeg = shutil.which("ffmpeg") is not None
    methods = (a.methods or ("plain,histeq,vf_histeq,passthrough,strength0" if have_ffmpeg else "passthrough,histeq,strength0")).split(",")
    if not os.path.exists(a.clip):
        if not have_ffmpeg:
            sys.exit(f"export_bench: {a.clip} does not exist and there is no ffmpeg to make it")
        os.makedirs(os.path.dirname(os.path.abspath(a.clip)), exist_ok=True)
        print(f"making {a.clip} ({a.frames} frames, 1080p60) with bench/make_real_clip.sh ...", flush=True)
        subprocess.run(["bash", os.path.join(HERE, "make_real_clip.sh"), a.clip, str(a.frames), "1920x1080", "60"], check=True)

    x264 = ["-c:v", "libx264", "-preset", a.preset, "-crf", str(a.crf)]
    out_dir = tempfile.mkdtemp(prefix="histeq-bench-")
    extra = shlex.split(a.extra_histeq)
    cmds = {
        "plain": ["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-i", a.clip, *x264, "-c:a", "copy", os.path.join(out_dir, "plain.mp4")],
        "vf_histeq": ["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-i", a.clip, "-vf", "histeq", *x264, "-c:a", "copy",
                      os.path.join(out_dir, "vf_histeq.mp4")],
    }

    def histeq(name, *more):
        if a.codec == "libx264":
            out = ["-o", os.path.join(out_dir, name + ".mp4"), "--preset", a.preset, "--crf", str(a.crf)]
        else:
            out = ["-o", "-", "-f", "matroska", "--codec", a.codec]
        return [a.histeq, "export", a.clip, "-y", "--progress", "none", *out, *more, *extra]

    cmds["histeq"] = histeq("histeq")
    cmds["passthrough"] = histeq("passthrough", "--passthrough")
    cmds["strength0"] = histeq("strength0", "--strength", "0")
    floor = "plain" if "plain" in methods else "passthrough"

    info = subprocess.run([a.histeq, "info"], capture_output=True, text=True).stdout
    gpu = "no CUDA device" not in info and "--cpu" not in extra
    enc = f"x264 preset {a.preset}, crf {a.crf}" if a.codec == "libx264" else f"histeq's encoder {a.codec} to /dev/null"
    print(f"clip {a.clip}: {enc}; {os.cpu_count()} cores ({cpu_model()}); "
          f"histeq on the {'GPU' if gpu else 'CPU'}; {a.rounds} interleaved rounds", flush=True)
    walls = {m: [] for m in methods}
    cpus = {m: [] for m in methods}
    loads = []
    for r in range(a.rounds):
        order = methods[r % len(methods):] + methods[: r % len(methods)]
        for m in order:
            loads.append(os.getloadavg()[0])
            w, c = timed(cmds[m])
            walls[m].append(w)
            cpus[m].append(c)
            print(f"  round {r + 1}: {m:12s} {w:7.2f} s wall {c:7.2f} s CPU", flush=True)
    def size(m):
        path = cmds[m][-1] if m in ("plain", "vf_histeq") else cmds[m][cmds[m].index("-o") + 1]
        return os.path.getsize(path) if path != "-" else 0
    sizes = {m: size(m) for m in methods}
    shutil.rmtree(out_dir, ignore_errors=True)

    med = {m: statistics.median(walls[m]) for m in methods}
    medc = {m: statistics.median(cpus[m]) for m in methods}
    rows = []
    print(f"\n{'method':12s} {'median wall s':>14s} {'x floor':>8s} {'per-round x':>12s} {'median CPU s':>13s} {'x floor':>8s} "
          f"{'fps':>7s} {'MB out':>7s}")
    for m in methods:
        per_round = statistics.median(w / f for w, f in zip(walls[m], walls[floor]))
        row = {"method": m, "wall_s": round(med[m], 3), "wall_x_floor": round(med[m] / med[floor], 3),
               "wall_x_floor_per_round": round(per_round, 3),
               "cpu_s": round(medc[m], 3), "cpu_x_floor": round(medc[m] / medc[floor], 3),
               "fps": round(a.frames / med[m], 1), "out_mb": round(sizes[m] / 1e6, 2),
               "walls": [round(x, 3) for x in walls[m]], "cpus": [round(x, 3) for x in cpus[m]]}
        rows.append(row)
        print(f"{m:12s} {row['wall_s']:14.2f} {row['wall_x_floor']:8.3f} {row['wall_x_floor_per_round']:12.3f} "
              f"{row['cpu_s']:13.2f} {row['cpu_x_floor']:8.3f} "
              f"{row['fps']:7.1f} {row['out_mb']:7.2f}")
    print(f"(floor = {floor}; load average during the run: {min(loads):.1f} .. {max(loads):.1f})")

    meta = {"command": [sys.argv[0]] + sys.argv[1:], "clip": os.path.basename(a.clip), "frames": a.frames,
            "preset": a.preset, "crf": a.crf, "codec": a.codec, "rounds": a.rounds, "floor": floor, "cores": os.cpu_count(),
            "cpu": cpu_model(), "histeq_backend": "gpu" if gpu else "cpu", "extra_histeq": a.extra_histeq,
            "load_min": round(min(loads), 2), "load_max": round(max(loads), 2),
            "date": time.strftime("%Y-%m-%d %H:%M:%S")}
    if a.json:
        json.dump({"meta": meta, "results": rows}, open(a.json, "w"), indent=1)
    if a.csv:
        with open(a.csv, "w") as f:
            f.write("# " + " ".join(map(shlex.quote, meta["command"])) + "\n")
            f.write("method,wall_s,wall_x_floor,wall_x_floor_per_round,cpu_s,cpu_x_floor,fps,out_mb,backend,preset,crf,cores,walls\n")
            for r in rows:
                f.write(f"{r['method']},{r['wall_s']},{r['wall_x_floor']},{r['wall_x_floor_per_round']},{r['cpu_s']},{r['cpu_x_floor']},{r['fps']},"
                        f"{r['out_mb']},{meta['histeq_backend']},{a.preset},{a.crf},{os.cpu_count()},"
                        f"{' '.join(map(str, r['walls']))}\n")


if __name__ == "__main__":
    main()
