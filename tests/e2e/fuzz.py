#!/usr/bin/python3
"""Mutated inputs in the normal CI: a fixed corpus of 42 inputs, made by the
sanitizer corpus's generator (tests/sanitize/corpus.py: seeds from the ffmpeg CLI, then truncated,
bit-flipped, zeroed, repeated; a fixed random seed, so the same bytes on every machine), through
each of histeq's ways in, one CTest test per way:

  export   histeq export MUTANT -o OUT.mkv --report R       (a file in, a file out)
  play     histeq play --headless MUTANT                     (the player's pipeline, no window)
  pipe     cat MUTANT | histeq export - -o - -f nut --report R | ffprobe -   (the pipe path)

Every run must end as histeq's contract says bad input must:
  - exit 0, or 1 with exactly one line "histeq: NAME: cause" on stderr (notes may precede an exit 0);
    never a signal (a crash, an abort), never a hang (a timeout);
  - no temporary file left in the output's folder, and no output after a failure (files);
  - the report's frames_out is what was written (the file's video packets, or what the consumer of
    the pipe read), and its frames_in is frames_out;
  - no short output reported "ok": a mutant cut short (the `truncate` kind) whose container records
    its length (Matroska, WebM, MP4/MOV, AVI; a transport stream cut inside a packet) either has 95%
    of its seed's frames or is reported "short" (or fails).
The corpus is small (6 seeds at 160x90 and smaller, 7 mutants each) so that each test takes well
under two minutes on a loaded 2-core machine.

  fuzz.py --histeq build/app/histeq CASE     (exit 77 = skipped: no ffmpeg/ffprobe)
  fuzz.py --list
"""
import json
import os
import shlex
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "sanitize"))
import corpus  # noqa: E402
import e2e  # noqa: E402
from e2e import path  # noqa: E402

SEEDS = [s for s in corpus.SEEDS if s[0] in ("h264_aac.mp4", "ffv1.mkv", "mpeg2.ts", "mjpeg.avi")] + [
    ("vp9_opus.webm", ["-f", "lavfi", "-i", "testsrc2=s=96x64:r=25:d=1", "-f", "lavfi", "-i", "sine=d=1", "-c:v",
                       "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-c:a", "libopus", "-fflags", "+bitexact"]),
    ("h264_aac.mkv", ["-f", "lavfi", "-i", "testsrc2=s=128x72:r=25:d=1", "-f", "lavfi", "-i", "sine=d=1", "-c:v",
                      "libx264", "-preset", "ultrafast", "-g", "10", "-c:a", "aac", "-pix_fmt", "yuv420p", "-fflags", "+bitexact"]),
]
PER_SEED = 7
RNG_SEED = 35
TIMEOUT = 60
LENGTH_KNOWN = (".mkv", ".webm", ".mp4", ".mov", ".avi")  # containers that record how long they are


def make_corpus():
    folder = path("corpus")
    with open(os.devnull, "w") as quiet:
        stdout, sys.stdout = sys.stdout, quiet
        try:
            corpus.make(folder, seeds=SEEDS, per_seed=PER_SEED, rng_seed=RNG_SEED)
        finally:
            sys.stdout = stdout
    names = sorted(f for f in os.listdir(folder) if not f.startswith("seed_"))
    assert len(names) == len(SEEDS) * PER_SEED, names
    return folder, names


def seed_frames(folder, name):
    """The video frames of the seed `name` was made from."""
    base, ext = os.path.splitext(name)
    return e2e.video_frames(os.path.join(folder, "seed_" + base.rsplit("_", 2)[0] + ext))


def verdict(r, shown):
    """"" when the run ended as the contract says, else why not. `shown`: the name histeq says."""
    if r.returncode < 0:
        return f"killed by signal {-r.returncode}:\n{r.stderr[-2000:]}"
    if r.returncode not in (0, 1):
        return f"exit {r.returncode}:\n{r.stderr[-2000:]}"
    if r.returncode == 1:
        lines = [l for l in r.stderr.splitlines() if l.strip()]
        if len(lines) != 1 or not lines[0].startswith(f"histeq: {shown}: "):
            return f"exit 1 without one line naming the input: {lines[:5]}"
    return ""


def q(s):
    return shlex.quote(str(s))


def length_known(inp):
    """Whether a cut of this input can be seen: its container records its length, or (a transport
    stream) the cut falls inside a 188-byte packet."""
    return inp.endswith(LENGTH_KNOWN) or (inp.endswith(".ts") and os.path.getsize(inp) % 188 != 0)


def leftovers(folder, keep):
    return [f for f in os.listdir(folder) if f not in keep]


def check_report(name, folder, rep, written):
    """The report's entry against the frames written; "" or why it is wrong."""
    entry = json.load(open(rep))["files"][0]
    if entry["frames_out"] != written or entry["frames_in"] != entry["frames_out"]:
        return f"report says {entry['frames_in']} in, {entry['frames_out']} out; {written} written"
    if "_truncate" in name and entry["result"] == "ok" and length_known(os.path.join(folder, name)):
        whole = seed_frames(folder, name)
        if written < 0.95 * whole:
            return f"cut short ({written} of the seed's {whole} frames) but reported \"ok\""
    return ""


def run_export(folder, name):
    inp = os.path.join(folder, name)
    work = path("work_" + name)
    os.mkdir(work)
    out, rep = os.path.join(work, "out.mkv"), os.path.join(work, "report.json")
    r = subprocess.run([e2e.HISTEQ, "export", "--cpu", "--progress", "none", "-c", "ffv1", inp, "-o", out, "--report", rep],
                       capture_output=True, text=True, errors="replace", timeout=TIMEOUT)
    why = verdict(r, inp)
    if not why and leftovers(work, {"out.mkv", "report.json"}):
        why = f"files left: {leftovers(work, {'out.mkv', 'report.json'})}"
    if not why and r.returncode == 1 and os.path.exists(out):
        why = "failed but left its output"
    if not why and r.returncode == 0:
        why = check_report(name, folder, rep, e2e.video_frames(out))
    return why


def run_play(folder, name):
    inp = os.path.join(folder, name)
    r = subprocess.run([e2e.HISTEQ, "play", "--headless", "--cpu", "--max-speed", "--quiet", inp], capture_output=True, text=True,
                       errors="replace", timeout=TIMEOUT)
    return verdict(r, inp)


def run_pipe(folder, name):
    inp = os.path.join(folder, name)
    work = path("work_" + name)
    os.mkdir(work)
    rep = os.path.join(work, "report.json")
    line = (f"cat {q(inp)} | {q(e2e.HISTEQ)} export - -o - -f nut -c ffv1 --cpu --progress none --report {q(rep)} "
            f"2>{q(os.path.join(work, 'err'))} | ffprobe -v error -count_packets -select_streams v:0 "
            f"-show_entries stream=nb_read_packets -of csv=p=0 -i pipe:0; exit ${{PIPESTATUS[1]}}")
    p = subprocess.run(["bash", "-c", line], capture_output=True, text=True, errors="replace", timeout=TIMEOUT, cwd=work)
    err = open(os.path.join(work, "err"), errors="replace").read()
    r = subprocess.CompletedProcess(p.args, p.returncode if p.returncode < 128 else -(p.returncode - 128), "", err)
    why = verdict(r, "-")
    if not why and leftovers(work, {"report.json", "err"}):
        why = f"files left: {leftovers(work, {'report.json', 'err'})}"
    if not why and r.returncode == 0:
        counted = p.stdout.strip().splitlines()
        why = check_report(name, folder, rep, int(counted[0]) if counted and counted[0].isdigit() else 0)
    return why


def sweep(run):
    folder, names = make_corpus()
    failures, t0 = [], time.monotonic()
    for name in names:
        try:
            why = run(folder, name)
        except subprocess.TimeoutExpired:
            why = f"hung (over {TIMEOUT} s)"
        if why:
            failures.append(f"{name}: {why}")
    print(f"fuzz: {len(names)} mutants, {len(failures)} failures, {time.monotonic() - t0:.0f} s")
    assert not failures, "\n".join(failures)


def case_export():
    sweep(run_export)


def case_play():
    sweep(run_play)


def case_pipe():
    sweep(run_pipe)


CASES = {k[5:]: v for k, v in sorted(globals().items()) if k.startswith("case_")}


if __name__ == "__main__":
    sys.exit(e2e.main(CASES))
