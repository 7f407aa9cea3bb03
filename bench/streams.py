#!/usr/bin/env python3
"""Many streams per GPU: N concurrent `histeq play --headless` processes on one clip.

  bench/streams.py --histeq BIN --clip CLIP --streams 1,4,8,16 [--max-speed] [--hwdec auto] [--json OUT]
  bench/streams.py --gst --clip CLIP.mp4 --streams 16,64 [--max-speed] [--json OUT]

Each process plays the clip at its frame rate (or as fast as it can with --max-speed) and writes its
stats JSON; meanwhile the machine is sampled twice a second: CPU busy % (/proc/stat), and through
nvidia-smi the GPU's SM, NVDEC and memory-bandwidth utilization and its memory in use. Per stream
count it reports the aggregate fps, the frames late and dropped (behind schedule or at a live
source), the slowest stream's fps, the busiest resource (the highest of CPU, GPU SM, NVDEC
utilization), and the GPU memory the streams added (peak minus the idle GPU's, per stream).

--gst serves all the streams from one process instead: one gst-launch-1.0 with a branch per stream,
`filesrc ! qtdemux ! h264parse ! nvh264dec ! histeq ! fpsdisplaysink` on CUDA memory (the element
of app/gstreamer), synchronised to the clock (real time) unless --max-speed. Late frames are the
ones the sinks' QoS dropped (fpsdisplaysink's "dropped"), frames its "rendered".
"""
import argparse
import collections
import json
import os
import re
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
        self.cpu, self.gpu, self.dec, self.mem, self.used, self.host = [], [], [], [], [], []

    def run(self):
        last = cpu_times()
        smi = None
        try:
            smi = subprocess.Popen(
                ["nvidia-smi", "--query-gpu=utilization.gpu,utilization.decoder,utilization.memory,memory.used",
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
            self.host.append(host_memory_used())
            last = now
        if smi:
            smi.terminate()

    def _read_smi(self, p):
        for line in p.stdout:
            try:
                g, d, m, u = (float(x) for x in line.strip().split(","))
            except ValueError:
                continue
            self.gpu.append(g)
            self.dec.append(d)
            self.mem.append(m)
            self.used.append(u)


def host_memory_used():
    """The host's memory in use (MiB): MemTotal - MemAvailable."""
    with open("/proc/meminfo") as f:
        kb = {line.split(":")[0]: int(line.split()[1]) for line in f}
    return (kb["MemTotal"] - kb["MemAvailable"]) / 1024


def mean(v):
    return sum(v) / len(v) if v else None


def gpu_memory_used():
    """The GPU's memory in use (MiB) now, or None without nvidia-smi."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=20).stdout
        return float(out.split()[0])
    except (OSError, ValueError, IndexError, subprocess.TimeoutExpired):
        return None


def run_processes(args, n, tmp):
    """n `histeq play --headless` processes; returns (errors, per-stream counters, {why a stream
    decoded on the CPU: how many})."""
    cmd = [args.histeq, "play", "--headless", "--quiet", "--hwdec", args.hwdec]
    if args.max_speed:
        cmd.append("--max-speed")
    if args.kernel:
        cmd += ["--kernel", args.kernel]
    if args.clip != "synthetic":
        cmd.append(args.clip)
    else:
        cmd += ["--size", args.size, "--duration", str(args.seconds)]
    procs, outs = [], []
    for i in range(n):
        js = os.path.join(tmp, f"s{n}_{i}.json")
        outs.append(js)
        procs.append(subprocess.Popen(cmd + ["--stats-json", js], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True))
    errors, notes = [], collections.Counter()
    for p in procs:
        _, err = p.communicate()
        if p.returncode != 0:
            errors.append(err.strip().splitlines()[-1] if err.strip() else f"exit {p.returncode}")
        notes.update(line.split("note: ", 1)[-1] for line in err.splitlines() if "software decode" in line)
    streams = []
    for js in outs:
        try:
            with open(js) as f:
                j = json.load(f)
        except (OSError, ValueError):
            continue
        c = j["counters"]
        streams.append({"frames": c["frames"], "late": c["late"], "dropped": c["dropped_behind"] + c.get("dropped_source", 0),
                        "fps": c["frames"] / c["wall_s"] if c["wall_s"] > 0 else 0,
                        "decoder": j["source"].get("decoder", "")})
    return errors, streams, dict(notes)


QOS_MSG = re.compile(r'from element "([^"]+)" \(qos\)')
EXECUTION = re.compile(r"Execution ended after (\d+):(\d+):([\d.]+)")


def run_gst(args, n):
    """One gst-launch-1.0 with n branches; returns (errors, per-stream counters, {})."""
    cmd = ["gst-launch-1.0", "-m"]
    for i in range(n):
        # A sink with QoS and a lateness bound of 20 ms drops a frame that comes later than that, and
        # tells the decoder upstream, which then skips late frames itself; both say so on the bus (a
        # qos message each): those are the dropped frames, counted for the whole process.
        cmd += ["filesrc", f"location={args.clip}", "!", "qtdemux", "!", "h264parse", "!", "nvh264dec", "!",
                "video/x-raw(memory:CUDAMemory)", "!", "histeq", "!", "fakesink", f"name=s{i}",
                "sync=false" if args.max_speed else "sync=true", "qos=true", "max-lateness=20000000"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    t = EXECUTION.search(p.stdout)
    if p.returncode != 0 or not t:
        tail = (p.stderr or p.stdout).strip().splitlines()
        return [tail[-1] if tail else f"exit {p.returncode}"], [], {}
    # From PLAYING to the last branch's EOS: the set-up (contexts, decoders) is before it.
    playing_s = int(t.group(1)) * 3600 + int(t.group(2)) * 60 + float(t.group(3))
    dropped = len(QOS_MSG.findall(p.stdout))
    # The drops are the process's, not a branch's: the first branch carries them all. A branch's fps
    # is its frames over the time from PLAYING to the last EOS (so below 60 where the process fell
    # behind the clock).
    return [], [{"frames": args.clip_frames - (dropped if i == 0 else 0), "late": 0, "dropped": dropped if i == 0 else 0,
                 "fps": args.clip_frames / playing_s, "decoder": "nvh264dec (one process)"} for i in range(n)], {}


def run(args, n, tmp):
    idle, host_idle = gpu_memory_used(), host_memory_used()
    sampler = Sampler()
    sampler.start()
    t0 = time.monotonic()
    errors, streams, notes = run_gst(args, n) if args.gst else run_processes(args, n, tmp)
    wall = time.monotonic() - t0
    sampler.stop.set()
    sampler.join()
    fps = [st["fps"] for st in streams]
    peak = max(sampler.used) if sampler.used else None
    added = peak - idle if peak is not None and idle is not None else None
    res = {"streams": n, "mode": ("gst one process, " if args.gst else "") + ("max-speed" if args.max_speed else "real-time"),
           "wall_s": round(wall, 2), "frames": sum(st["frames"] for st in streams), "aggregate_fps": round(sum(fps), 1),
           "slowest_stream_fps": round(min(fps), 1) if fps else 0, "late": sum(st["late"] for st in streams),
           "dropped": sum(st["dropped"] for st in streams), "failed": len(errors) if errors else n - len(streams),
           "errors": errors[:3], "decoders": dict(collections.Counter(st["decoder"] for st in streams)),
           "software_decode_notes": notes,
           "cpu_busy_pct": {"mean": mean(sampler.cpu), "max": max(sampler.cpu) if sampler.cpu else None},
           "gpu_sm_pct": {"mean": mean(sampler.gpu), "max": max(sampler.gpu) if sampler.gpu else None},
           "nvdec_pct": {"mean": mean(sampler.dec), "max": max(sampler.dec) if sampler.dec else None},
           "gpu_mem_bw_pct": {"mean": mean(sampler.mem), "max": max(sampler.mem) if sampler.mem else None},
           "gpu_mem_mib": {"idle": idle, "peak": peak, "per_stream": round(added / n, 1) if added is not None else None},
           "host_mem_mib": {"idle": round(host_idle), "peak": round(max(sampler.host, default=host_idle)),
                            "per_stream": round((max(sampler.host, default=host_idle) - host_idle) / n, 1)}}
    loads = {"CPU": res["cpu_busy_pct"]["mean"], "GPU SM": res["gpu_sm_pct"]["mean"], "NVDEC": res["nvdec_pct"]["mean"]}
    loads = {k: v for k, v in loads.items() if v is not None}
    res["busiest"] = max(loads, key=loads.get) if loads else "?"
    return res


def summary(r):
    """One line for a stream count's result."""
    pct = {k: r[k]["mean"] or 0 for k in ("cpu_busy_pct", "gpu_sm_pct", "nvdec_pct")}
    decoders = ", ".join(f"{k}: {v}" for k, v in r["decoders"].items())
    parts = [f"{r['streams']:3d} streams {r['mode']}: {r['aggregate_fps']:.1f} fps in all",
             f"slowest {r['slowest_stream_fps']:.1f}", f"late {r['late']}", f"dropped {r['dropped']}", f"failed {r['failed']}",
             "CPU {cpu_busy_pct:.0f}% GPU {gpu_sm_pct:.0f}% NVDEC {nvdec_pct:.0f}%".format(**pct),
             f"memory a stream: GPU {r['gpu_mem_mib']['per_stream']} MiB, host {r['host_mem_mib']['per_stream']} MiB",
             f"busiest {r['busiest']} ({decoders})"]
    return "; ".join(parts)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--histeq", default="", help="the histeq binary (process mode)")
    ap.add_argument("--gst", action="store_true", help="all streams in one gst-launch-1.0 process")
    ap.add_argument("--clip-frames", type=int, default=0, help="--gst: the clip's frame count (needed)")
    ap.add_argument("--clip", required=True, help="a video file, or 'synthetic' for the built-in source")
    ap.add_argument("--streams", default="1,4,8,16")
    ap.add_argument("--max-speed", action="store_true")
    ap.add_argument("--hwdec", default="auto")
    ap.add_argument("--kernel", default="")
    ap.add_argument("--size", default="1080p", help="synthetic size")
    ap.add_argument("--seconds", type=float, default=10, help="synthetic length")
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    if not args.gst and not args.histeq:
        ap.error("--histeq BIN is needed without --gst")
    if args.gst and args.clip_frames <= 0:
        ap.error("--gst needs --clip-frames N")
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(x) for x in args.streams.split(",")):
            r = run(args, n, tmp)
            results.append(r)
            print(summary(r), flush=True)
            for note, count in r["software_decode_notes"].items():
                print(f"    {count} x {note}", flush=True)
            for e in r["errors"]:
                print("    " + e, flush=True)
    if args.json:
        tmpf = args.json + ".part"
        with open(tmpf, "w") as f:
            json.dump({"command": sys.argv, "results": results}, f, indent=1)
        os.replace(tmpf, args.json)


if __name__ == "__main__":
    main()
