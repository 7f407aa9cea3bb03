#!/usr/bin/python3
"""End-to-end regression tests of faults and hostile names and of batch resume, run by
CTest (one test per case) with e2e.py's helpers and conventions: each case makes its inputs with the
ffmpeg CLI in a fresh temporary folder and runs the histeq binary on them.

  safety.py --histeq build/app/histeq CASE     (exit 77 = skipped)
  safety.py --list
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402
from e2e import Skip, ffmpeg, low_contrast_clip, no_output_left, path, video_frames  # noqa: E402


def histeq(*args, timeout=120, **kw):
    return subprocess.run([e2e.HISTEQ] + [a if isinstance(a, bytes) else str(a) for a in args], capture_output=True,
                          timeout=timeout, **kw)


def text(b):
    return b.decode("utf-8", "replace")


def unescape(s):
    """The inverse of histeq's name escaping (README, "Names"): \\\\ and \\xNN."""
    return re.sub(rb"\\(\\|x([0-9a-fA-F]{2}))",
                  lambda m: b"\\" if m.group(1) == b"\\" else bytes([int(m.group(2), 16)]), s.encode("utf-8"))


def parts_left(folder):
    return [f for f in os.listdir(folder) if f.endswith(b".part" if isinstance(folder, bytes) else ".part")]


# --- D1: names that are not UTF-8 in every JSON output ---------------------------------------------

def case_non_utf8_names_in_json():
    folder = os.fsencode(path("latin1"))
    os.mkdir(folder)
    bad = os.path.join(folder, b"caf\xe9.mp4")  # Latin-1: not UTF-8
    shutil.copy(low_contrast_clip("c.mp4", seconds=1), bad)
    out = os.path.join(folder, b"out_\xe9.mp4")
    report, stats = os.path.join(folder, b"r\xe9.json"), os.path.join(folder, b"s\xe9.json")
    r = histeq("export", bad, "-o", out, "--progress", "json", "--report", report, "--stats-json", stats)
    assert r.returncode == 0, (r.returncode, text(r.stderr))
    events = [json.loads(l) for l in r.stdout.decode("utf-8").splitlines()]  # valid UTF-8, valid JSON
    start = events[0]
    assert start["event"] == "start" and "\ufffd" in start["input"], start
    assert unescape(start["input_escaped"]) == bad and unescape(start["output_escaped"]) == out, start
    rep = json.loads(open(report, "rb").read().decode("utf-8"))
    assert rep["files"][0]["result"] == "ok" and unescape(rep["files"][0]["input_escaped"]) == bad, rep
    st = json.loads(open(stats, "rb").read().decode("utf-8"))
    assert st["frames"] and unescape(st["source"]["name_escaped"]) == bad, st["source"]
    assert not parts_left(folder), parts_left(folder)
    # The batch: its worker threads print and record the same names.
    dest = os.fsencode(path("dest")) + b"\xe9"
    r = histeq("export", folder, "-o", dest + b"/", "--jobs", "2", "--progress", "json", "--report", report)
    assert r.returncode == 0, (r.returncode, text(r.stderr))
    events = [json.loads(l) for l in r.stdout.decode("utf-8").splitlines()]
    done = [e for e in events if e["event"] == "done"]
    assert sorted(unescape(e["file_escaped"]) for e in done) == sorted([bad, out]), done
    assert json.loads(open(report, "rb").read().decode("utf-8"))["files_ok"] == 2
    assert not parts_left(dest) and len(os.listdir(dest)) == 2 + 2, os.listdir(dest)  # two outputs, two sidecars


# --- D4: a file-size limit ---------------------------------------------------------------------------

def case_file_size_limit_fails_cleanly():
    clip = low_contrast_clip("big.mkv", size="640x360", seconds=2, audio=False, extra=("-f", "matroska"))
    out = path("big_eq.mkv")
    # ffv1 at 640x360: 60 frames pass the 100 kB limit early.
    r = subprocess.run(["bash", "-c", 'ulimit -f 100; exec "$@"', "histeq", e2e.HISTEQ, "export", clip, "-o", out,
                        "-c", "ffv1", "--progress", "none"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1, (r.returncode, r.stderr)  # not 153 (killed by SIGXFSZ)
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and lines[0].startswith("histeq: ") and "too large" in lines[0].lower(), lines
    no_output_left(out)


# --- D5: --report and --stats-json never follow a planted name ----------------------------------------

def case_report_and_stats_ignore_planted_symlinks():
    clip = low_contrast_clip("p.mp4", seconds=1)
    victim, victim2 = path("victim.txt"), path("victim2.txt")
    for v in (victim, victim2):
        open(v, "w").write("precious\n")
    report, stats = path("r.json"), path("s.json")
    os.symlink(victim, report + ".part")
    os.symlink(victim2, stats + ".part")
    r = histeq("export", clip, "-o", path("p_eq.mp4"), "--report", report, "--stats-json", stats, "--progress", "none")
    assert r.returncode == 0, text(r.stderr)
    assert open(victim).read() == "precious\n" and open(victim2).read() == "precious\n", "a planted symlink was followed"
    assert json.load(open(report))["files_ok"] == 1 and json.load(open(stats))["frames"]
    assert not os.path.islink(report) and not os.path.islink(stats)
    hidden = [f for f in os.listdir(path("")) if f.startswith(".r.json") or f.startswith(".s.json")]
    assert not hidden, hidden


# --- D7: --ext ---------------------------------------------------------------------------------------

def case_ext_is_letters_and_digits():
    clip = low_contrast_clip("e.mp4", seconds=1)
    deep = path("a/b/c")
    os.makedirs(deep)
    for ext in ("mkv/../../../escaped.mkv", "../x", "mk v", ""):
        r = histeq("export", clip, "-o", deep + "/", "--ext", ext, "--progress", "none")
        if ext == "":
            continue  # an empty --ext is "each input's own"
        assert r.returncode == 2 and "letters and digits" in text(r.stderr), (ext, r.returncode, text(r.stderr))
    assert not os.path.exists(path("escaped.mkv")) and not os.path.exists(path("a/escaped.mkv"))
    r = histeq("export", clip, "-o", path("ok") + "/", "--ext", ".MKV2", "--list")
    assert r.returncode == 0 and text(r.stdout).rstrip().endswith("/ok/e.MKV2"), text(r.stdout)


# --- D8: --list and the terminal ---------------------------------------------------------------------

def case_list_escapes_names():
    folder = os.fsencode(path("names"))
    os.mkdir(folder)
    clip = low_contrast_clip("n.mp4", seconds=1)
    names = [b"new\nline.mp4", b"tab\there.mp4", b"esc\x1b[31mred.mp4", b"back\\slash.mp4", b"plain.mp4", b"\xff.mp4"]
    for n in names:
        shutil.copy(clip, os.path.join(folder, n))
    out = os.fsencode(path("o")) + b"/"
    r = histeq("export", folder, "-o", out, "--list")
    assert r.returncode == 0, text(r.stderr)
    lines = r.stdout.decode("utf-8").split("\n")
    assert lines[-1] == "" and len(lines) == len(names) + 1, lines  # one line a file
    pairs = [l.split("\t") for l in lines[:-1]]
    assert all(len(p) == 2 for p in pairs), pairs
    assert sorted(unescape(p[0]) for p in pairs) == sorted(os.path.join(folder, n) for n in names), pairs
    assert "\x1b" not in r.stdout.decode("utf-8")
    # --index I is the I-th line of --list.
    for i in (0, 3):
        r = histeq("export", folder, "-o", out, "--index", i, "--list")
        assert r.stdout.decode("utf-8") == lines[i] + "\n", (i, r.stdout)
    # A bad file with an escape sequence in its name: the terminal gets "\x1b", not ESC.
    bad = os.path.join(folder, b"evil\x1b]0;owned\x07.mp4")
    open(bad, "wb").write(b"not a video\n" * 10)
    r = histeq("export", bad, "-o", os.path.join(folder, b"evil_out.mp4"))
    assert r.returncode == 1 and b"\x1b" not in r.stderr and b"\x07" not in r.stderr, r.stderr
    assert b"evil\\x1b]0;owned\\x07.mp4" in r.stderr, r.stderr


# --- D11: messages and exit codes --------------------------------------------------------------------

def y4m(name, w, h, frames=1):
    p = path(name)
    with open(p, "wb") as f:
        f.write(f"YUV4MPEG2 W{w} H{h} F30:1 Ip A1:1 C420jpeg\n".encode())
        for _ in range(frames):
            f.write(b"FRAME\n" + bytes(64))
    return p


def case_bad_frame_sizes_say_the_file_and_the_cause():
    for w, h, words in ((70000, 70000, ("70000x70000",)), (2, 65535, ("2x65535",))):
        clip = y4m(f"s{w}x{h}.y4m", w, h)
        r = histeq("export", clip, "-o", path("s_eq.mp4"))
        err = text(r.stderr)
        lines = [l for l in err.splitlines() if l.strip()]
        assert r.returncode == 1 and len(lines) == 1, (r.returncode, err)
        assert lines[0].startswith(f"histeq: {clip}: "), lines
        assert "busy" not in lines[0] and all(w_ in lines[0] for w_ in words), lines
        no_output_left(path("s_eq.mp4"))


def case_url_with_bad_data_is_not_called_a_file():
    import http.server
    import threading

    class Garbage(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Length", "4096")
            self.end_headers()
            self.wfile.write(bytes(range(256)) * 16)

        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Garbage)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{srv.server_address[1]}/clip.mp4"
        r = histeq("export", url, "-o", path("u.mp4"), timeout=60)
    finally:
        srv.shutdown()
    err = text(r.stderr)
    assert r.returncode == 1 and err.startswith(f"histeq: {url}: "), err
    assert "file" not in err.split(": ", 2)[2] and "stream" in err, err


def case_stdin_ahead_of_real_time_has_no_negative_latency():
    prod = subprocess.Popen(["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i",
                             "testsrc2=s=320x240:r=30:d=3", "-c:v", "libx264", "-preset", "ultrafast", "-f", "mpegts", "-"],
                            stdout=subprocess.PIPE)
    js = path("ahead.json")
    r = subprocess.run([e2e.HISTEQ, "play", "--headless", "--quiet", "--cpu", "--max-speed", "--stats-json", js, "--live", "-"],
                       stdin=prod.stdout, capture_output=True, text=True, timeout=60)
    prod.stdout.close()
    prod.wait()
    assert r.returncode == 0, r.stderr
    frames = json.load(open(js))["frames"]
    g2g = [f["glass-to-glass"] for f in frames if "glass-to-glass" in f]
    assert len(g2g) >= 10 and min(g2g) >= 0, (len(g2g), min(g2g) if g2g else None)  # some frames go to the probe


def case_signals_exit_128_plus_the_signal():
    clip = low_contrast_clip("sig.mp4", size="1280x720", seconds=8, audio=False)
    for sig, code in ((signal.SIGTERM, 143), (signal.SIGHUP, 129), (signal.SIGINT, 130)):
        out = path("sig_eq.mp4")
        p = subprocess.Popen([e2e.HISTEQ, "export", clip, "-o", out, "--preset", "veryslow", "--progress", "none"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(1.5)
        assert p.poll() is None, "finished before the signal"
        p.send_signal(sig)
        _, err = p.communicate(timeout=60)
        assert p.returncode == code, (sig, p.returncode, err)
        no_output_left(out)


def case_usage_errors_exit_2_and_name_the_word():
    cases = [
        (["exprot", "a.mp4"], "unknown command 'exprot'; did you mean 'export'?"),
        (["export", "a.mp4", "-o", "b.mp4", "--overwrtie"], "unknown option '--overwrtie' for 'export'; did you mean '--overwrite'?"),
        (["export", "--bogus"], "unknown option '--bogus' for 'export'"),
        (["export", "a.mp4", "-o", "b.mp4", "--progress", "loud"], "--progress"),
        (["export", "a.mp4"], "--output is required"),
        (["play", "--cpuu", "a.mp4"], "did you mean '--cpu'?"),
        ([], "A subcommand is required"),
    ]
    for args, want in cases:
        r = histeq(*args)
        err = text(r.stderr)
        lines = [l for l in err.splitlines() if l.strip()]
        assert r.returncode == 2, (args, r.returncode, err)
        assert len(lines) == 1 and want in lines[0], (args, lines)
    assert "input is required" not in text(histeq("export", "--bogus").stderr)


def case_sizes_and_tiles_never_wrap_at_32_bits():
    """WxH is one checked parser (core/cuda/numbers.h): sscanf's %d made 4294967304x4294967300 tiles
    8x4 and a 4294967616x180 synthetic source 320x180, and ran."""
    clip = low_contrast_clip("t.mp4", seconds=1, audio=False)
    out = path("t_eq.mp4")
    cases = [
        (["export", clip, "-o", out, "--mode", "clahe", "--tiles", "4294967304x4294967300"],
         "tiles must be 1..32 per axis, not 4294967304x4294967300"),
        (["export", clip, "-o", out, "--mode", "clahe", "--tiles", "8x-4"], "tiles must be WxH"),
        (["play", "--headless", "--size", "4294967616x180", "--duration", "0.1"],
         "size must be 1..65536 per axis, not 4294967616x180"),
        (["play", "--headless", "--size", "99999999999999999999999x2", "--duration", "0.1"], "size must be 1..65536 per axis"),
    ]
    for args, want in cases:
        r = histeq(*args)
        err = text(r.stderr)
        lines = [l for l in err.splitlines() if l.strip()]
        assert r.returncode != 0, (args, r.returncode, err)
        assert len(lines) == 1 and want in lines[0], (args, lines)
        assert not os.path.exists(out), args


# --- -n / --skip-existing and --resume ---------------------------------------------------------------

def resume_folder():
    folder = path("clips")
    os.mkdir(folder)
    for n, s in (("a.mp4", 1), ("b.mp4", 1), ("c.mp4", 1)):
        shutil.copy(low_contrast_clip("r" + n, seconds=s, audio=False), os.path.join(folder, n))
    open(os.path.join(folder, "d.mp4"), "w").write("corrupt\n" * 30)
    return folder


def report_of(p):
    rep = json.load(open(p))
    return {os.path.basename(f["input"]): f["result"] for f in rep["files"]}, rep


def case_skip_existing_never_overwrites():
    clip = low_contrast_clip("n.mp4", seconds=1)
    out = path("n_eq.mp4")
    open(out, "w").write("mine\n")
    rep = path("n.json")
    r = histeq("export", clip, "-o", out, "-n", "--report", rep)
    assert r.returncode == 0 and "skipped" in text(r.stderr), (r.returncode, text(r.stderr))
    assert open(out).read() == "mine\n" and report_of(rep)[0] == {"n.mp4": "skipped"}
    r = histeq("export", clip, "-o", out, "-n", "-y")
    assert r.returncode == 2, text(r.stderr)
    folder = resume_folder()
    dest = path("dest")
    os.mkdir(dest)
    open(os.path.join(dest, "b.mp4"), "w").write("mine\n")
    r = histeq("export", folder, "-o", dest + "/", "--skip-existing", "--report", rep, "--progress", "plain")
    assert r.returncode == 1, text(r.stderr)  # d.mp4 is corrupt
    results, j = report_of(rep)
    assert results == {"a.mp4": "ok", "b.mp4": "skipped", "c.mp4": "ok", "d.mp4": "failed"}, results
    assert j["files_ok"] == 2 and j["files_skipped"] == 1 and j["files_failed"] == 1, j
    assert open(os.path.join(dest, "b.mp4")).read() == "mine\n"
    assert "1 skipped" in text(r.stderr), text(r.stderr)


def case_resume_skips_complete_outputs_and_redoes_the_rest():
    folder = resume_folder()
    dest = path("dest")
    rep = path("r.json")
    r = histeq("export", folder, "-o", dest + "/", "--progress", "none")
    assert r.returncode == 1, text(r.stderr)
    assert sorted(f for f in os.listdir(dest) if not f.startswith(".")) == ["a.mp4", "b.mp4", "c.mp4"]
    # What a killed run leaves: b.mp4 cut short (its sidecar now disagrees), c.mp4's record gone,
    # and a temporary file of a task killed mid-export.
    b = os.path.join(dest, "b.mp4")
    ffmpeg("-i", os.path.join(folder, "b.mp4"), "-frames:v", "10", "-c", "copy", path("b10.mp4"))
    shutil.copy(path("b10.mp4"), b)
    os.remove(os.path.join(dest, ".c.mp4.histeq"))
    open(os.path.join(dest, ".a.mp4.Ab12Cd.part"), "w").write("half")
    a_mtime = os.stat(os.path.join(dest, "a.mp4")).st_mtime_ns
    r = histeq("export", folder, "-o", dest + "/", "--resume", "--report", rep, "--progress", "none")
    assert r.returncode == 1, text(r.stderr)
    results, j = report_of(rep)
    assert results == {"a.mp4": "skipped", "b.mp4": "ok", "c.mp4": "ok", "d.mp4": "failed"}, results
    assert j["files_ok"] == 2 and j["files_skipped"] == 1 and j["files_failed"] == 1, j
    assert os.stat(os.path.join(dest, "a.mp4")).st_mtime_ns == a_mtime, "a complete output was written again"
    assert video_frames(b) == 30 and not parts_left(dest), os.listdir(dest)
    # The same as a job array's tasks: each --index resumes its own file; skipped is success.
    for i, want in ((0, 0), (1, 0), (3, 1)):
        r = histeq("export", folder, "-o", dest + "/", "--resume", "--index", i, "--report", rep, "--progress", "none")
        assert r.returncode == want and list(report_of(rep)[0].values()) == [["skipped", "skipped", None, "failed"][i]], \
            (i, r.returncode, text(r.stderr))
    assert histeq("export", folder, "-o", dest + "/", "--resume", "-n").returncode == 2
    r = histeq("export", os.path.join(folder, "a.mp4"), "-o", path("one.mp4"), "--resume")
    assert r.returncode == 2 and "batch" in text(r.stderr), text(r.stderr)


# --- --report and --stats-json: each written whatever becomes of the other -------------------------------

def case_report_is_written_when_stats_json_cannot_be():
    clip = low_contrast_clip("s.mp4", seconds=1)
    out, rep = path("s_eq.mp4"), path("r.json")
    open(rep, "w").write('{"stale": "an earlier run\'s report"}\n')
    stats = path("no/such/folder/stats.json")
    r = histeq("export", clip, "-o", out, "--report", rep, "--stats-json", stats, "--progress", "none")
    lines = [l for l in text(r.stderr).splitlines() if l.strip()]
    assert r.returncode == 1 and len(lines) == 1 and lines[0].startswith(f"histeq: {stats}: cannot write"), (r.returncode, lines)
    j = json.load(open(rep))
    assert "stale" not in j, "the earlier run's report survived"
    entry = j["files"][0]
    assert entry["result"] == "ok" and entry["frames_out"] == video_frames(out), entry
    assert any(n.startswith("--stats-json: ") for n in entry["notes"]), entry
    # And the other way: a report that cannot be written leaves the stats written.
    st2 = path("s2.json")
    r = histeq("export", clip, "-o", path("s_eq2.mp4"), "--report", path("no/such/r.json"), "--stats-json", st2, "--progress", "none")
    assert r.returncode == 1 and json.load(open(st2))["frames"], text(r.stderr)


# --- output names up to NAME_MAX: the hidden files beside them fit too ------------------------------------

def named_bytes(n, ext=".mkv", char="x"):
    """A file name of exactly n bytes (UTF-8) ending in ext."""
    body = char * ((n - len(ext)) // len(char.encode()))
    body += "y" * (n - len(ext) - len(body.encode()))
    name = body + ext
    assert len(name.encode()) == n, len(name.encode())
    return name


def hidden_files(folder):
    return sorted(f for f in os.listdir(folder) if f.startswith("."))


def case_long_output_names_export_and_resume():
    clip = low_contrast_clip("l.mp4", seconds=1, audio=False)
    folder = path("long")
    os.mkdir(folder)
    # One export: the output, its report and its stats each at 243..255 bytes (and one in 2-byte characters).
    for n, char in ((243, "x"), (250, "x"), (255, "x"), (254, "\u00e9")):
        out = os.path.join(folder, named_bytes(n, char=char))
        rep, stats = os.path.join(folder, named_bytes(n, ".json", "r")), os.path.join(folder, named_bytes(n, ".json", "s"))
        r = histeq("export", clip, "-o", out, "-c", "ffv1", "--report", rep, "--stats-json", stats, "--progress", "none")
        assert r.returncode == 0, (n, r.returncode, text(r.stderr))
        assert video_frames(out) == 30 and json.load(open(rep))["files_ok"] == 1 and json.load(open(stats))["frames"], n
        assert not hidden_files(folder), hidden_files(folder)
        for f in (out, rep, stats):
            os.remove(f)
    # A batch into DIR/: a 255-byte output has its record (.NAME.histeq, shortened), so --resume
    # finds it complete; a task killed mid-export leaves its temporary file, which --resume removes.
    ins = path("ins")
    os.mkdir(ins)
    small = os.path.join(ins, named_bytes(255, ".mp4", "a"))
    shutil.copy(clip, small)
    big = os.path.join(ins, named_bytes(255, ".mp4", "\u00e9"))
    shutil.copy(low_contrast_clip("big.mp4", size="1280x720", seconds=6, audio=False), big)
    dest = path("dest")
    r = histeq("export", small, "-o", dest + "/", "-c", "ffv1", "--ext", "mkv", "--progress", "none")
    assert r.returncode == 0, text(r.stderr)
    assert len(hidden_files(dest)) == 1 and hidden_files(dest)[0].endswith(".histeq"), hidden_files(dest)
    p = subprocess.Popen([e2e.HISTEQ, "export", big, "-o", dest + "/", "-c", "ffv1", "--ext", "mkv", "--progress", "none"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t0 = time.monotonic()
    while not parts_left(dest) and time.monotonic() - t0 < 60:
        time.sleep(0.05)
    time.sleep(0.3)
    p.kill()
    p.wait()
    left = parts_left(dest)
    assert len(left) == 1 and len(left[0].encode()) <= 255, left
    left[0].encode("utf-8")  # cut on a character's boundary: valid UTF-8
    rep = path("resume.json")
    r = histeq("export", ins, "-o", dest + "/", "-c", "ffv1", "--ext", "mkv", "--resume", "--report", rep, "--progress", "none")
    assert r.returncode == 0, text(r.stderr)
    by_name = sorted((os.path.basename(f["input"])[0], f["result"]) for f in json.load(open(rep))["files"])
    assert by_name == [("a", "skipped"), ("\u00e9", "ok")], by_name
    assert not parts_left(dest) and video_frames(os.path.join(dest, os.path.basename(big)[:-4] + ".mkv")) == 180, os.listdir(dest)
    assert len(hidden_files(dest)) == 2, hidden_files(dest)  # the two records


# --- D9: bench --paper runs its plot script without a shell, never from the working directory ---------

def case_bench_paper_runs_no_shell_and_no_planted_script():
    if not e2e.have_gpu():
        raise Skip("bench --paper needs a CUDA device")
    cwd = path("cwd")
    os.makedirs(os.path.join(cwd, "bench"))
    planted = path("planted_ran")
    open(os.path.join(cwd, "bench", "plot_paper.py"), "w").write(f"open({planted!r}, 'w').write('x')\n")
    injected = path("injected")
    paper = path("paper'; touch '" + injected + "'; echo '")
    r = subprocess.run([e2e.HISTEQ, "bench", "--paper", paper, "--experiments", "nugteren_fig8", "--runs", "2", "--warmup", "1"],
                       capture_output=True, text=True, timeout=600, cwd=cwd)
    assert not os.path.exists(injected), "the folder's name ran as shell code"
    assert not os.path.exists(planted), "bench/plot_paper.py of the working directory ran"
    assert r.returncode in (0, 1) and os.path.isdir(paper), (r.returncode, r.stderr)


CASES = {k[5:]: v for k, v in sorted(globals().items()) if k.startswith("case_")}


if __name__ == "__main__":
    sys.exit(e2e.main(CASES))
