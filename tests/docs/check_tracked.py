#!/usr/bin/env python3
"""Fails when the tracked tree holds raw results or names things after issue numbers.

The rules (the developers' guide: "Name files and sections after features, never after issue
numbers. Raw logs stay out of git."):
 - docs/results/ holds the figures that matter, not raw output: at most MAX_RESULTS files, none
   over MAX_BYTES. Raw logs, profiler reports, experiment diffs and per-run folders stay in git's
   history (docs/results/README.md says how to find them) or in an ignored folder;
 - no tracked path names an issue number (docs/results/issue19/..., bench/issue9_device.sh);
 - no Markdown file names one in its headings or its prose ("## Issue 19: ...", "(issue 20)"):
   the docs name features and dates.

  check_tracked.py ROOT          check the files git tracks under ROOT (`git ls-files`; outside a
                                 git checkout, every file under ROOT but build*/, out/ and dot folders)
  check_tracked.py --self-test   plant violations in scratch trees (with and without git) and check
                                 what is caught
"""
import os
import re
import shutil
import subprocess
import sys

from house_rules import planted_tree, usage_ok, verdict

RESULTS = "docs/results/"
MAX_RESULTS = 150
MAX_BYTES = 200 * 1024
ISSUE = re.compile(r"(?<![A-Za-z])issues?[-_ ]?#?\d+", re.IGNORECASE)
SKIPPED_DIRS = re.compile(r"^(build.*|out|Testing|\..*)$")


def tracked(root):
    """The files under ROOT, relative, '/'-separated: git's index where ROOT is a checkout, else a walk."""
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"], capture_output=True, check=True).stdout
        return sorted(p for p in out.decode("utf-8", "replace").split("\0") if p)
    except (OSError, subprocess.CalledProcessError):
        files = []
        for d, dirs, names in os.walk(root):
            dirs[:] = [x for x in dirs if not (d == root and SKIPPED_DIRS.match(x)) and not x.startswith(".")]
            files += [os.path.relpath(os.path.join(d, n), root).replace(os.sep, "/") for n in names]
        return sorted(files)


def results_problems(root, files):
    results = [f for f in files if f.startswith(RESULTS)]
    problems = []
    if len(results) > MAX_RESULTS:
        problems.append(f"{RESULTS}: {len(results)} files, over {MAX_RESULTS}: keep the summaries, "
                        "leave raw logs and per-run folders to git's history")
    for f in results:
        p = os.path.join(root, f)
        size = os.path.getsize(p) if os.path.isfile(p) else 0
        if size > MAX_BYTES:
            problems.append(f"{f}: {size:,} bytes, over {MAX_BYTES:,}: a raw dump, not a summary")
    return problems


def naming_problems(root, files):
    problems = [f"{f}: the path names an issue number; name it after the feature" for f in files if ISSUE.search(f)]
    for f in files:
        if not f.endswith(".md") or not os.path.isfile(os.path.join(root, f)):
            continue
        with open(os.path.join(root, f), encoding="utf-8", errors="replace") as text:
            for n, line in enumerate(text, 1):
                m = ISSUE.search(line)
                if m:
                    where = "a heading" if line.lstrip().startswith("#") else "the text"
                    problems.append(f"{f}:{n}: {where} names \"{m.group(0)}\"; name the feature (and the date) instead")
    return problems


def check(root):
    files = tracked(root)
    return results_problems(root, files) + naming_problems(root, files)


PLANTED = {
    **{f"docs/results/feature/r{i:03d}.csv": "a,b\n" for i in range(MAX_RESULTS)},  # one more below: 151
    "docs/results/big.json": "x" * (MAX_BYTES + 1),
    "docs/results/issue19/tiles/qb.csv": "a\n",
    "bench/issue9_device.sh": "\n",
    "bench/Issue_15_gpu_shape.sh": "\n",
    "docs/heading.md": "# Notes\n\n## Issue 19: where every target stands\n",
    "docs/prose.md": "The fold (issue 20, part 2) and issues 16, 19.\n",
    "docs/ok.md": "## The fold's serial chain (H200, 2026-11-26)\nAn issue of memory; tissue7 is a name; 19 issues.\n",
    "docs/results/ok/summary.csv": "x" * MAX_BYTES,
    "tools/device/device_check.sh": "\n",
}
WANT = {"docs/results/", "docs/results/big.json", "docs/results/issue19/tiles/qb.csv", "bench/issue9_device.sh",
        "bench/Issue_15_gpu_shape.sh", "docs/heading.md:3", "docs/prose.md:1"}


def caught(problems):
    return {p.split(": ")[0] for p in problems}


def self_test():
    ok = True
    with planted_tree(PLANTED) as d:
        found = caught(check(d))  # no git here: the walk
        ok &= found == WANT
        if ok and shutil.which("git"):
            # A git checkout: only what git tracks counts, so an ignored folder of raw output passes.
            raw = {f"docs/results/raw/log{i}.txt": "y" * (MAX_BYTES + 1) for i in range(3)}
            for rel, text in {**raw, ".gitignore": "/docs/results/raw/\n"}.items():
                os.makedirs(os.path.dirname(os.path.join(d, rel)), exist_ok=True)
                with open(os.path.join(d, rel), "w") as f:
                    f.write(text)
            git = ["git", "-C", d, "-c", "user.name=t", "-c", "user.email=t@t"]
            subprocess.run(git[:3] + ["init", "-q"], check=True)
            subprocess.run(git + ["add", "-A"], check=True)
            found = caught(check(d))
            ok &= found == WANT
    return verdict(ok, f"self-test: all {len(WANT)} planted violations caught (with and without git), "
                       "the allowed names, sizes and an ignored raw folder passed",
                   f"caught {sorted(found)}, planted {sorted(WANT)}")


def main(argv):
    if argv == ["--self-test"]:
        return self_test()
    if not usage_ok(argv, __doc__, (), max_args=1):
        return 2
    problems = check(argv[0])
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} problem(s): raw results in docs/results or names after issue numbers "
              "(see tests/docs/check_tracked.py)", file=sys.stderr)
        return 1
    files = tracked(argv[0])
    print(f"tracked tree holds: {sum(f.startswith(RESULTS) for f in files)} files in {RESULTS} "
          f"(at most {MAX_RESULTS}, none over {MAX_BYTES:,} bytes), no path or Markdown text named after an issue number")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
