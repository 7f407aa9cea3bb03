#!/usr/bin/env python3
"""The player window on the GPU machine, driven through mpv's JSON IPC (--input-ipc-server): what
tests/player checks under Xvfb with Mesa, here with NVIDIA's GL, the CUDA-GL interop and NVDEC.

  player_ipc_device.py --histeq BIN --clip CLIP --out DIR [--window 1600x900]

Needs a display (tools/device/device_run.sh window starts Xvfb with the NVIDIA GLX vendor library). Steps:
  1. paused on the clip, mode, clip-limit, kernel and plain changed one at a time, a video and a
     window screenshot after each: every window shot differs from the one before, every video shot
     too but the kernel's (every kernel computes the same histogram), time-pos does not move; the
     time each paused change took to reach the screen (the refresh: a seek back to the frame);
  2. playing, every kernel of histeq-kernels for 2 s each, its histeq-timings;
  3. speed 2x and back; the drops and the rates;
  4. headless play taking the same IPC.
Writes DIR/player_ipc.json (everything measured), DIR/player_ipc_before.png and _after.png (the
window before and after the four paused changes); prints a summary; exits 1 when a check fails.
Standard library only (the device has no numpy): shots are compared by their bytes (stb writes the
same pixels to the same bytes).
"""
import argparse
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time


class Ipc:
    def __init__(self, path, timeout=60):
        end = time.monotonic() + timeout
        while True:
            try:
                self.s = socket.socket(socket.AF_UNIX)
                self.s.connect(path)
                break
            except OSError:
                self.s.close()
                if time.monotonic() > end:
                    raise
                time.sleep(0.1)
        self.f = self.s.makefile("rw")
        self.events = []

    def cmd(self, *args):
        self.f.write(json.dumps({"command": list(args), "request_id": 1}) + "\n")
        self.f.flush()
        for line in self.f:
            m = json.loads(line)
            if "event" in m:
                self.events.append(m)
                continue
            return m
        raise RuntimeError("the player closed the IPC")

    def get(self, name):
        r = self.cmd("get_property", name)
        return r.get("data") if r.get("error") == "success" else None


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def paused_changes(ipc, tmp, failures):
    ipc.cmd("set_property", "pause", True)
    time.sleep(0.5)
    t0 = ipc.get("time-pos")
    kernels = ipc.get("histeq-kernels") or []
    other = next((k for k in reversed(kernels) if k != ipc.get("kernel")), ipc.get("kernel"))
    steps, prev = [], None
    for name, value in (("before", None), ("mode", "clahe"), ("clip-limit", 4), ("kernel", other), ("plain", True)):
        started = time.monotonic()
        if value is not None:
            ipc.cmd("set_property", name, value)
        shots = {}
        for kind in ("video", "window"):
            path = os.path.join(tmp, f"{name}-{kind}.png")
            r = ipc.cmd("screenshot-to-file", path, kind)
            if r.get("error") != "success":
                failures.append(f"{name}: screenshot {kind}: {r}")
            shots[kind] = digest(path) if os.path.exists(path) else None
        step = {"change": name, "value": value, "to_screen_s": time.monotonic() - started, "time_pos": ipc.get("time-pos"),
                "video": shots["video"], "window": shots["window"]}
        if step["time_pos"] != t0:
            failures.append(f"{name}: time-pos moved {t0} -> {step['time_pos']}")
        if prev is not None:
            if step["window"] == prev["window"]:
                failures.append(f"{name}: the window shot did not change")
            if name != "kernel" and step["video"] == prev["video"]:
                failures.append(f"{name}: the picture did not change while paused")
            if name == "kernel" and step["video"] != prev["video"]:
                failures.append("kernel: the picture changed (kernels must compute the same histogram)")
        steps.append(step)
        prev = step
    return steps


def kernels_live(ipc):
    ipc.cmd("set_property", "pause", False)
    out = {}
    for k in ipc.get("histeq-kernels") or []:
        ipc.cmd("set_property", "kernel", k)
        time.sleep(2)
        out[k] = ipc.get("histeq-timings")
    return out


def headless(histeq, clip, tmp, failures):
    sock = os.path.join(tmp, "headless.sock")
    p = subprocess.Popen([histeq, "play", "--headless", clip, "--input-ipc-server", sock], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    ipc = Ipc(sock)
    while ipc.get("time-pos") is None:
        time.sleep(0.1)
    ipc.cmd("set_property", "pause", True)
    ipc.cmd("set_property", "mode", "clahe")
    mode = ipc.get("mode")
    ipc.cmd("quit")
    out, _ = p.communicate(timeout=60)
    if mode != "clahe" or p.returncode != 0:
        failures.append(f"headless IPC: mode {mode}, exit {p.returncode}: {out[-400:]}")
    return {"mode": mode, "exit": p.returncode}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--histeq", required=True)
    ap.add_argument("--clip", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--window", default="1600x900")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    tmp = tempfile.mkdtemp()
    failures, result = [], {}
    sock = os.path.join(tmp, "ipc.sock")
    p = subprocess.Popen([a.histeq, "play", a.clip, "--window", a.window, "--no-vsync", "--input-ipc-server", sock],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        ipc = Ipc(sock)
        while ipc.get("time-pos") is None:
            time.sleep(0.1)
        time.sleep(1)
        result["paused_changes"] = paused_changes(ipc, tmp, failures)
        shutil.copy(os.path.join(tmp, "before-window.png"), os.path.join(a.out, "player_ipc_before.png"))
        shutil.copy(os.path.join(tmp, "plain-window.png"), os.path.join(a.out, "player_ipc_after.png"))
        result["kernels"] = kernels_live(ipc)
        ipc.cmd("set_property", "speed", 2)
        time.sleep(2)
        result["speed_2x"] = ipc.get("histeq-timings")
        ipc.cmd("set_property", "speed", 1)
        ipc.cmd("quit")
        out, _ = p.communicate(timeout=60)
        result["window_exit"] = p.returncode
        result["window_summary"] = out[-3000:]
        if p.returncode != 0:
            failures.append(f"the window exited {p.returncode}")
    finally:
        if p.poll() is None:
            p.kill()
    result["headless"] = headless(a.histeq, a.clip, tmp, failures)
    result["failures"] = failures
    with open(os.path.join(a.out, "player_ipc.json"), "w") as f:
        json.dump(result, f, indent=1)
    for s in result.get("paused_changes", []):
        print(f"paused {s['change']:10} -> on screen in {s['to_screen_s'] * 1000:6.0f} ms (time-pos {s['time_pos']})")
    for k, t in result.get("kernels", {}).items():
        stages = {r["stage"]: r["avg"] for r in (t or {}).get("stages", [])}
        print(f"kernel {k:22} " + "  ".join(f"{n} {v:.3f}" for n, v in stages.items()))
    print("failures:" if failures else "all checks passed", *failures, sep="\n  ")
    shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
