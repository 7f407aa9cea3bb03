#!/usr/bin/python3
"""A histeq job array on a real Slurm: a single-node cluster on this machine
(start_cluster.sh), the README's job file (export_array.sh) over a folder of 6 clips, one corrupt.

  1. sbatch --array=0-5; one task cancelled mid-export by scancel (SIGTERM: it stops cleanly), one
     killed by SIGKILL (it leaves its temporary .part, as a lost node or the OOM killer does);
  2. the same array again with --resume;
  3. every good clip complete (its frames = the input's = its sidecar's) and written exactly once
     over the two runs, the corrupt one reported failed, no .part left, and the merged report's
     counts: run 1 3 done, 1 failed, 1 interrupted (the killed task wrote none); run 2 2 done,
     3 skipped, 1 failed; the same final results whatever the order the reports are named in
     (merged by time, not by name);
  4. the SIGKILL reached the task's own process only: a decoy outside Slurm that looks like it
     (the same binary name and --index) is still alive.
The cluster is this run's alone (its own folder under --work, munged, ports; start_cluster.sh),
and is stopped at the end.

  test_job_array.py --histeq build/app/histeq --work DIR
Exit 77 (skipped) only when Slurm cannot be started here: not root, or slurm-wlm/munge missing.
"""
import argparse
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SKIP = 77
CLIPS = {  # name -> (size, seconds): b and e long enough to be caught mid-export
    "a.mp4": ("320x180", 1), "b.mp4": ("1280x720", 10), "c.mp4": ("320x180", 2),
    "e.mp4": ("1280x720", 10), "f.mkv": ("320x180", 1),
}
CORRUPT = "d.mp4"


def sh(*args, **kw):
    return subprocess.run(list(args), check=True, capture_output=True, text=True, **kw).stdout


def frames(path):
    out = sh("ffprobe", "-v", "error", "-count_packets", "-select_streams", "v:0", "-show_entries",
             "stream=nb_read_packets", "-of", "csv=p=0", path)
    return int(out.strip())


def make_clips(folder):
    os.makedirs(folder)
    for name, (size, secs) in CLIPS.items():
        sh("ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i", f"testsrc2=s={size}:r=30:d={secs},eq=contrast=0.4",
           "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", os.path.join(folder, name))
    with open(os.path.join(folder, CORRUPT), "wb") as f:
        f.write(b"\x00\x00\x00\x18ftypisom" + os.urandom(4000))  # an MP4 header, then noise


def submit(env, job_file, n, clips, out, reports, logs, *extra):
    job = sh("sbatch", "--parsable", f"--array=0-{n - 1}", "-o", os.path.join(logs, "%A_%a.out"), job_file, clips, out,
             reports, *extra, env=env).strip().split(";")[0]
    return job


def wait_done(env, job, timeout=150):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if not sh("squeue", "-h", "-j", job, env=env).strip():
            return
        time.sleep(0.3)
    raise AssertionError(f"job {job} still queued after {timeout} s:\n" + sh("squeue", env=env))


def wait_part(out, name, timeout=90, size=50000):
    """The task of `name` is exporting: its temporary file is there, frames in it."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        for p in glob.glob(os.path.join(out, f".{name}.*.part")):
            try:
                if os.path.getsize(p) >= size:
                    return
            except OSError:
                pass
        time.sleep(0.05)
    raise AssertionError(f"{name}: no export under way within {timeout} s")


def task_pid(histeq, conf, job, index):
    """The pid of task `index` of array job `job` on this run's cluster: the histeq process whose
    environment Slurm gave that task (SLURM_CONF, SLURM_ARRAY_JOB_ID, SLURM_ARRAY_TASK_ID), never a
    process that merely looks like it."""
    want = {b"SLURM_CONF": conf.encode(), b"SLURM_ARRAY_JOB_ID": job.encode(), b"SLURM_ARRAY_TASK_ID": str(index).encode()}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            args = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
            env = dict(v.split(b"=", 1) for v in open(f"/proc/{pid}/environ", "rb").read().split(b"\0") if b"=" in v)
        except OSError:
            continue
        if args and args[0] == histeq.encode() and all(env.get(k) == v for k, v in want.items()):
            return int(pid)
    raise AssertionError(f"task {job}_{index}: no histeq process found")


def kill_task(histeq, conf, job, index):
    """SIGKILL to the task's histeq, as when a node is lost or the kernel's OOM killer strikes:
    no chance to clean up. (scancel --signal=KILL is a cancel to Slurm: SIGTERM first.)"""
    os.kill(task_pid(histeq, conf, job, index), signal.SIGKILL)


def start_decoy(histeq, index):
    """A process outside Slurm that looks like task `index`'s histeq by its command line (argv[0]
    the binary, --index I): killing by name would hit it."""
    return subprocess.Popen(["bash", "-c", 'exec -a "$0" python3 -c "import time; time.sleep(600)" --index "$1"', histeq,
                             str(index)])


def results(path):
    with open(path) as f:
        return [(os.path.basename(e["input"]), e["result"]) for e in json.load(f)["files"]]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--histeq", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    histeq = os.path.abspath(a.histeq)
    os.makedirs(a.work, exist_ok=True)
    work = tempfile.mkdtemp(prefix="run.", dir=os.path.abspath(a.work))  # this run's: another run never shares it
    cluster = os.path.join(work, "cluster")
    start = subprocess.run(["bash", os.path.join(HERE, "start_cluster.sh"), cluster], capture_output=True, text=True)
    if start.returncode == 3:
        print("skipped: cannot start Slurm here: " + start.stderr.strip())
        shutil.rmtree(work, ignore_errors=True)
        return SKIP
    assert start.returncode == 0, "the cluster did not start:\n" + start.stdout + start.stderr
    conf = sh("bash", "-c", 'source "$1/env" && printf %s "$SLURM_CONF"', "_", cluster)
    env = dict(os.environ, SLURM_CONF=conf, HISTEQ=histeq, PATH=os.environ.get("PATH", "") + ":/usr/sbin")
    data = os.path.join(work, "data")
    clips, out, logs = os.path.join(data, "clips"), os.path.join(data, "out"), os.path.join(data, "logs")
    rep1, rep2 = os.path.join(data, "reports1"), os.path.join(data, "reports2")
    make_clips(clips)
    os.makedirs(logs)
    job_file = os.path.join(HERE, "export_array.sh")
    listing = sh(histeq, "export", clips + "/", "-o", out + "/", "--list").splitlines()
    names = [os.path.basename(l.split("\t")[0]) for l in listing]
    assert names == ["a.mp4", "b.mp4", "c.mp4", "d.mp4", "e.mp4", "f.mkv"], names
    t0 = time.monotonic()
    decoy = start_decoy(histeq, names.index("e.mp4"))
    try:
        job1 = submit(env, job_file, len(names), clips, out, rep1, logs)
        # Two tasks run at once (2 cores, 1 a task): b's and e's exports are caught as they run.
        wait_part(out, "b.mp4")
        sh("scancel", f"{job1}_{names.index('b.mp4')}", env=env)
        wait_part(out, "e.mp4")
        kill_task(histeq, conf, job1, names.index("e.mp4"))
        wait_done(env, job1)
        left = sorted(os.path.basename(p) for p in glob.glob(os.path.join(out, ".*.part")))
        assert len(left) == 1 and left[0].startswith(".e.mp4."), f"want the killed task's .part only, got {left}"
        assert not os.path.exists(os.path.join(out, "b.mp4")) and not os.path.exists(os.path.join(out, "e.mp4"))
        run1 = sorted(r for p in glob.glob(os.path.join(rep1, "*.json")) for r in results(p))
        assert run1 == [("a.mp4", "ok"), ("b.mp4", "interrupted"), ("c.mp4", "ok"), ("d.mp4", "failed"), ("f.mkv", "ok")], run1

        job2 = submit(env, job_file, len(names), clips, out, rep2, logs, "--resume")
        wait_done(env, job2)
        assert decoy.poll() is None, "the decoy (not a Slurm task) was killed"
    finally:
        decoy.kill()  # ours, by its pid
        decoy.wait()
        subprocess.run(["bash", os.path.join(HERE, "start_cluster.sh"), cluster, "stop"])
    elapsed = time.monotonic() - t0

    run2 = sorted(r for p in glob.glob(os.path.join(rep2, "*.json")) for r in results(p))
    assert run2 == [("a.mp4", "skipped"), ("b.mp4", "ok"), ("c.mp4", "skipped"), ("d.mp4", "failed"), ("e.mp4", "ok"),
                    ("f.mkv", "skipped")], run2
    reports = sorted(glob.glob(os.path.join(rep1, "*.json"))) + sorted(glob.glob(os.path.join(rep2, "*.json")))
    merged = json.loads(sh(sys.executable, os.path.join(HERE, "merge_reports.py"), *reports))
    # Named in the other order (as REPORTS/*.json lists job 10 before job 9): the same final results.
    backwards = json.loads(sh(sys.executable, os.path.join(HERE, "merge_reports.py"), *reversed(reports)))
    assert {k: v["result"] for k, v in backwards["files"].items()} == {k: v["result"] for k, v in merged["files"].items()}, \
        (backwards["files"], merged["files"])
    t = merged["totals"]
    assert (t["done"], t["skipped"], t["failed"], t["interrupted"]) == (5, 3, 2, 1), t
    for name in CLIPS:
        key = os.path.join(clips, name)
        assert merged["written"][key] == 1, (name, merged["written"])  # complete exactly once
        o = os.path.join(out, name)
        with open(os.path.join(out, f".{name}.histeq")) as f:
            recorded = int(f.read().split()[1])
        assert frames(o) == frames(key) == recorded, (name, frames(o), frames(key), recorded)
    bad = merged["files"][os.path.join(clips, CORRUPT)]
    assert bad["result"] == "failed" and bad["message"].startswith(os.path.join(clips, CORRUPT) + ": "), bad
    assert not glob.glob(os.path.join(out, "*.part")) and not glob.glob(os.path.join(out, ".*.part")), os.listdir(out)
    assert sorted(f for f in os.listdir(out) if not f.startswith(".")) == sorted(CLIPS), os.listdir(out)
    print(f"slurm job array: 6 tasks, 1 cancelled by scancel and 1 killed (SIGKILL) mid-export, resumed: "
          f"{t['done']} done, {t['skipped']} skipped, {t['failed']} failed, {t['interrupted']} interrupted over 2 runs; "
          f"every good clip written once, nothing left; {elapsed:.0f} s")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
