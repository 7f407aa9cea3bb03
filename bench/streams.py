#!/usr/bin/env python3
"""Many streams per GPU: N concurrent `histeq play --headless` processes on one clip.

  bench/streams.py --histeq BIN --clip CLIP --streams 1,4,8,16 [--max-speed] [--hwdec auto] [--json OUT]

Each process plays the clip at its frame rate (or as fast as it can with --max-speed) and writes its
stats JSON; meanwhile the machine is sampled twice a second: CPU busy % (/proc/stat), and through
nvidia-smi the GPU's SM, NVDEC and memory-bandwidth utilization. Per stream count it reports the
aggregate fps, the frames late and dropped (behind schedule or at a live source), the slowest
stream's fps, and the busiest resource (the highest of CPU, GPU SM, NVDEC utilization).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time


def cpu_times():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + (v[4] if len(v) > 4 else 0)
    return sum(v), idle


class Sampler(threading.Thread):
    def __init__(self, period=0.5):
        super().__init__(daemon=True)
        self.period = period
        self.stop = threading.Event()
        self.cpu, self.gpu, self.dec, self.mem = [], [], [], []

    def run(self):
        last = cpu_times()
        smi = None
        try:
            smi = subprocess.Popen(
                ["nvidia-smi", "--query-gpu=utilization.gpu,utilization.decoder,utilization.memory",
                 "--format=csv,noheader,nounits", "-lms", str(int(self.period * 1000))],
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            threading.Thread(target=self._read_smi, args=(smi,), daemon=True).start()
        except FileNotFoundError:
            pass
        while not self.stop.wait(self.period):
            now = cpu_times()
            total, idle = now[0] - last[0], now[1] - last[1]
            if total > 0:
                self.cpu.append(100.0 * (total - idle) / total)
            last = now
        if smi:
            smi.terminate()

    def _read_smi(self, p):
        for line in p.stdout:
            try:
                g, d, m = (float(x) for x in line.strip().split(","))
            except ValueError:
                continue
            self.gpu.append(g)
            self.dec.append(d)
            self.mem.append(m)


def mean(v):
    return sum(v) / len(v) if v else None


def run(args, n, tmp):
    cmd = [args.histeq, "play", "--headless", "--quiet", "--hwdec", args.hwdec]
    if args.max_speed:
        cmd.append("--max-speed")
    if args.kernel:
        cmd += ["--kernel", args.kernel]
    if args.clip != "synthetic":
        cmd.append(args.clip)
    else:
        cmd += ["--size", args.size, "--duration", str(args.seconds)]
    sampler = Sampler()
    sampler.start()
    procs, outs = [], []
    t0 = time.monotonic()
    for i in range(n):
        js = os.path.join(tmp, f"s{n}_{i}.json")
        outs.append(js)
        procs.append(subprocess.Popen(cmd + ["--stats-json", js], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True))
    errors = []
    for p in procs:
        _, err = p.communicate()
        if p.returncode != 0:
            errors.append(err.strip().splitlines()[-1] if err.strip() else f"exit {p.returncode}")
    wall = time.monotonic() - t0
    sampler.stop.set()
    sampler.join()
    frames = late = dropped = 0
    fps = []
    decoder = ""
    for js in outs:
        try:
            with open(js) as f:
                j = json.load(f)
        except (OSError, ValueError):
            continue
        c = j["counters"]
        frames += c["frames"]
        late += c["late"]
        dropped += c["dropped_behind"] + c.get("dropped_source", 0)
        fps.append(c["frames"] / c["wall_s"] if c["wall_s"] > 0 else 0)
        decoder = j["source"].get("decoder", decoder)
    res = {"streams": n, "mode": "max-speed" if args.max_speed else "real-time", "wall_s": round(wall, 2),
           "frames": frames, "aggregate_fps": round(sum(fps), 1), "slowest_stream_fps": round(min(fps), 1) if fps else 0,
           "late": late, "dropped": dropped, "failed": len(errors), "errors": errors[:3], "decoder": decoder,
           "cpu_busy_pct": {"mean": mean(sampler.cpu), "max": max(sampler.cpu) if sampler.cpu else None},
           "gpu_sm_pct": {"mean": mean(sampler.gpu), "max": max(sampler.gpu) if sampler.gpu else None},
           "nvdec_pct": {"mean": mean(sampler.dec), "max": max(sampler.dec) if sampler.dec else None},
           "gpu_mem_bw_pct": {"mean": mean(sampler.mem), "max": max(sampler.mem) if sampler.mem else None}}
    loads = {"CPU": res["cpu_busy_pct"]["mean"], "GPU SM": res["gpu_sm_pct"]["mean"], "NVDEC": res["nvdec_pct"]["mean"]}
    loads = {k: v for k, v in loads.items() if v is not None}
    res["busiest"] = max(loads, key=loads.get) if loads else "?"
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--histeq", required=True)
    ap.add_argument("--clip", required=True, help="a video file, or 'synthetic' for the built-in source")
    ap.add_argument("--streams", default="1,4,8,16")
    ap.add_argument("--max-speed", action="store_true")
    ap.add_argument("--hwdec", default="auto")
    ap.add_argument("--kernel", default="")
    ap.add_argument("--size", default="1080p", help="synthetic size")
    ap.add_argument("--seconds", type=float, default=10, help="synthetic length")
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(x) for x in args.streams.split(",")):
            r = run(args, n, tmp)
            results.append(r)
            print(f"{n:3d} streams {r['mode']:9s}: {r['aggregate_fps']:8.1f} fps in all, slowest {r['slowest_stream_fps']:6.1f}, "
                  f"late {r['late']}, dropped {r['dropped']}, failed {r['failed']}; CPU {r['cpu_busy_pct']['mean'] or 0:.0f}%, "
                  f"GPU {r['gpu_sm_pct']['mean'] or 0:.0f}%, NVDEC {r['nvdec_pct']['mean'] or 0:.0f}% -> busiest {r['busiest']} "
                  f"({r['decoder']})", flush=True)
            for e in r["errors"]:
                print("    " + e, flush=True)
    if args.json:
        tmpf = args.json + ".part"
        with open(tmpf, "w") as f:
            json.dump({"command": sys.argv, "results": results}, f, indent=1)
        os.replace(tmpf, args.json)


if __name__ == "__main__":
    main()
