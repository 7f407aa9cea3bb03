#!/usr/bin/python3
"""The Slurm helpers as root runs them (tests/slurm/): what start_cluster.sh writes and touches, two
clusters side by side, and merge_reports.py's order. One CTest test per case:

  test_cluster.py --work DIR CASE     (exit 77 = skipped: not root, or slurm-wlm/munge missing)
  test_cluster.py --list

  env_quoted         a DIR named with a space, a quote and $(...): DIR/env, sourced, sets SLURM_CONF
                     to the cluster's file and runs nothing
  etc_untouched      /etc/munge (and its key) as it was: the cluster has a munge of its own
  two_clusters       two clusters at once have their own ports and daemons; stopping one leaves the
                     other working; a DIR whose cluster runs is refused, not reused
  merge_by_time      a resumed success named before the failure it repaired (REPORTS/*.json: job 10
                     before job 9) is the final result; so is one told by the reports' file times
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SKIP = 77
WORK = None


class Skip(Exception):
    pass


def cluster(folder, *args):
    return subprocess.run(["bash", os.path.join(HERE, "start_cluster.sh"), folder, *args], capture_output=True, text=True,
                          timeout=120)


def start(folder):
    r = cluster(folder)
    if r.returncode == 3:
        raise Skip("cannot start Slurm here: " + r.stderr.strip())
    assert r.returncode == 0, f"start_cluster.sh {folder}: exit {r.returncode}\n{r.stdout}{r.stderr}"
    return r


def sourced(folder, command):
    """`command` run by bash after `source DIR/env`, in an empty folder (where a stray command would leave its mark)."""
    cwd = tempfile.mkdtemp(dir=WORK)
    r = subprocess.run(["bash", "-c", 'source "$1/env" && eval "$2"', "_", folder, command], capture_output=True, text=True,
                       cwd=cwd, timeout=60)
    return r, cwd


def conf_of(folder):
    r, _ = sourced(folder, 'printf %s "$SLURM_CONF"')
    assert r.returncode == 0, r.stderr
    return r.stdout


def ports(conf):
    text = open(conf).read()
    return tuple(int(re.search(rf"^{k}=(\d+)$", text, re.M).group(1)) for k in ("SlurmctldPort", "SlurmdPort"))


def ping(folder):
    r, _ = sourced(folder, "scontrol ping")
    return r.returncode == 0 and "UP" in r.stdout


def case_env_quoted():
    folder = os.path.join(WORK, "it's a $(touch INJECTED) dir")
    start(folder)
    try:
        run = open(os.path.join(folder, "run")).read().strip()
        r, cwd = sourced(folder, 'printf %s "$SLURM_CONF"; sinfo -h -o %P')
        assert r.returncode == 0, r.stderr
        assert r.stdout.startswith(os.path.join(run, "slurm.conf")), r.stdout
        assert "ci" in r.stdout[len(run):], r.stdout  # the cluster answers through that file
        assert not os.listdir(cwd), f"sourcing DIR/env ran something: {os.listdir(cwd)}"
    finally:
        cluster(folder, "stop")
    assert not os.path.exists(run), f"{run} left after stop"


def etc_state():
    state = {}
    for p in ("/etc/munge", "/etc/munge/munge.key"):
        try:
            st = os.lstat(p)
            state[p] = (st.st_mode, st.st_uid, st.st_gid, st.st_ctime_ns, st.st_mtime_ns)
        except FileNotFoundError:
            state[p] = None
    return state


def case_etc_untouched():
    before = etc_state()
    folder = os.path.join(WORK, "etc")
    start(folder)
    try:
        assert ping(folder)
        during = etc_state()
    finally:
        cluster(folder, "stop")
    assert during == before == etc_state(), f"/etc/munge changed: before {before}, while running {during}"


def case_two_clusters():
    a, b = os.path.join(WORK, "a"), os.path.join(WORK, "b")
    start(a)
    try:
        start(b)
        try:
            pa, pb = ports(conf_of(a)), ports(conf_of(b))
            assert not set(pa) & set(pb), f"the clusters share ports: {pa} {pb}"
            assert conf_of(a) != conf_of(b)
            assert ping(a) and ping(b)
            again = cluster(a)  # a's cluster runs: refused, never reused
            assert again.returncode == 1 and "still running" in again.stderr, (again.returncode, again.stderr)
            assert ping(a), "a refused start stopped the running cluster"
            cluster(a, "stop")
            assert ping(b), "stopping one cluster stopped the other"
            r, _ = sourced(b, "sbatch --wait --wrap true -o /dev/null")
            assert r.returncode == 0, "the other cluster no longer runs jobs: " + r.stdout + r.stderr
        finally:
            cluster(b, "stop")
    finally:
        cluster(a, "stop")


def report(path, result, finished_at=None, mtime=None):
    entry = {"result": result, "input": "/in/x.mp4", "output": "/out/x.mp4", "frames_out": 30 if result == "ok" else 0}
    if finished_at:
        entry["finished_at"] = finished_at
    with open(path, "w") as f:
        json.dump({"files": [entry]}, f)
    if mtime:
        os.utime(path, (mtime, mtime))
    return path


def merged(*paths):
    r = subprocess.run([sys.executable, os.path.join(HERE, "merge_reports.py"), *paths], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def case_merge_by_time():
    d = tempfile.mkdtemp(dir=WORK)
    old = report(os.path.join(d, "9_0.json"), "failed", "2026-01-02T10:00:00.000Z")
    new = report(os.path.join(d, "10_0.json"), "ok", "2026-01-02T10:05:00.000Z")
    for order in ([new, old], [old, new]):  # as the shell's glob lists them, and the other way
        m = merged(*order)
        assert m["files"]["/in/x.mp4"]["result"] == "ok", m
        assert m["totals"]["done"] == 1 and m["totals"]["failed"] == 1 and m["written"]["/in/x.mp4"] == 1, m
    # Reports without times (older histeq): the files' modification times.
    old = report(os.path.join(d, "b.json"), "failed", mtime=time.time() - 600)
    new = report(os.path.join(d, "a.json"), "ok", mtime=time.time() - 60)
    assert merged(new, old)["files"]["/in/x.mp4"]["result"] == "ok"


CASES = {name[len("case_"):]: fn for name, fn in globals().items() if name.startswith("case_")}


def main():
    global WORK
    ap = argparse.ArgumentParser(description="the Slurm helpers' cases (see the top of this file)")
    ap.add_argument("case", nargs="?", choices=sorted(CASES))
    ap.add_argument("--list", action="store_true", help="print the cases, one a line")
    ap.add_argument("--work", help="a folder to work in: each case makes one of its own inside")
    a = ap.parse_args()
    if a.list or a.case is None:
        print("\n".join(CASES))
        return 0
    os.makedirs(a.work, exist_ok=True)
    WORK = tempfile.mkdtemp(prefix=a.case + ".", dir=os.path.abspath(a.work))
    try:
        CASES[a.case]()
    except Skip as e:
        print("skipped: " + str(e))
        return SKIP
    shutil.rmtree(WORK, ignore_errors=True)
    print(f"{a.case}: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
