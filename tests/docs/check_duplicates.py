#!/usr/bin/env python3
"""Fails when the tree gains a pair of places that repeat six or more lines of code.

The `duplicates` tool of the development machines is not in CI (nor may it be copied into the
repository), so this is the CI side of the house rule "no new pairs of real code": a small
self-contained finder of repeated line windows, with today's pairs in
tests/docs/duplicate_baseline.txt. They may only shrink.

  check_duplicates.py ROOT            check core/, app/, lab/, bench/, tools/, tests/ and python/ under ROOT
  check_duplicates.py ROOT --list     every pair with its line ranges (for a clean-up)
  check_duplicates.py ROOT --update   rewrite the baseline after removing or moving duplication;
                                      refuses when the pairs or their shared lines grow in total
                                      (it writes a missing baseline from scratch)
  check_duplicates.py --self-test     plant copies in a scratch tree and check what is caught

What counts. C++, CUDA, Python and shell files git knows of (tracked, or untracked and not
ignored), third_party/ left out. A file becomes its significant lines: comments, blank lines,
preprocessor and import lines, and lines of punctuation alone are dropped; white space is folded,
string literals and numbers are folded to "" and 0, so a copy that changed only its constants or
messages still counts. Names are kept: the same shape with other names (which the duplicates tool
also reports) is left to that tool. Two places pair when they share a run of WINDOW significant
lines; a run found in more than TOO_COMMON places is boilerplate and not paired. A pair is its two
files and the number of lines of the first that the second repeats.
"""
import os
import re
import subprocess
import sys

from house_rules import planted_tree, usage_ok, verdict

WINDOW = 6
TOO_COMMON = 8
TREES = ("core", "app", "lab", "bench", "tools", "tests", "python")
C_LIKE = (".h", ".hpp", ".cpp", ".cc", ".cu", ".cuh", ".c")
SCRIPT = (".py", ".sh")
BASELINE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "duplicate_baseline.txt")
NUMBER = re.compile(r"\b(0[xX][0-9a-fA-F']+|\d[\d']*\.?\d*(?:[eE][-+]?\d+)?)[uUlLfF]*\b")
STRING = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'')


def list_files(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard", "--", *TREES],
                             capture_output=True, text=True, check=True).stdout.split("\n")
    except (OSError, subprocess.CalledProcessError):
        out = [os.path.relpath(os.path.join(d, f), root) for t in TREES for d, _, fs in os.walk(os.path.join(root, t)) for f in fs]
    return sorted({f.replace(os.sep, "/") for f in out if f.endswith(C_LIKE + SCRIPT) and "third_party/" not in f
                   and os.path.isfile(os.path.join(root, f))})


def strip_c_comments(text):
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text[i] == '"':
            m = STRING.match(text, i)
            j = m.end() if m else i + 1
            out.append(text[i:j])
            i = j
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def significant(path, text):
    """(line number, normalized line) of the lines that count."""
    c_like = path.endswith(C_LIKE)
    if c_like:
        text = strip_c_comments(text)
    out = []
    for n, raw in enumerate(text.split("\n"), 1):
        line = raw.strip()
        if not c_like:
            if line.startswith("#") or line.startswith(("import ", "from ")):
                continue
        elif line.startswith("#"):
            continue
        line = NUMBER.sub("0", STRING.sub('""', line))
        line = " ".join(line.split())
        if re.search(r"[A-Za-z_]", line.replace('""', "")):
            out.append((n, line))
    return out


def find_pairs(root):
    """{(file a, file b): [shared lines of a, (a first, a last), (b first, b last)]}, a < b or a == b."""
    files = {f: significant(f, open(os.path.join(root, f), encoding="utf-8", errors="replace").read())
             for f in list_files(root)}
    where = {}
    for f, lines in files.items():
        for k in range(len(lines) - WINDOW + 1):
            where.setdefault(tuple(l for _, l in lines[k:k + WINDOW]), []).append((f, k))
    shared = {}
    for places in where.values():
        if len(places) < 2 or len(places) > TOO_COMMON:
            continue
        for i, (fa, ka) in enumerate(places):
            for fb, kb in places[i + 1:]:
                if fa == fb and abs(ka - kb) < WINDOW:
                    continue  # a run that overlaps itself (a repeated line), not a copy
                key, ks = ((fa, fb), (ka, kb)) if (fa, ka) <= (fb, kb) else ((fb, fa), (kb, ka))
                shared.setdefault(key, []).append(ks)
    pairs = {}
    for (fa, fb), starts in shared.items():
        covered_a = {ka + d for ka, _ in starts for d in range(WINDOW)}
        covered_b = {kb + d for _, kb in starts for d in range(WINDOW)}
        la = [files[fa][k][0] for k in sorted(covered_a)]
        lb = [files[fb][k][0] for k in sorted(covered_b)]
        pairs[(fa, fb)] = [len(covered_a), (la[0], la[-1]), (lb[0], lb[-1])]
    return pairs


def read_baseline(path):
    base = {}
    if os.path.exists(path):
        with open(path) as f:
            for raw in f:
                line = raw.split("#", 1)[0].strip()
                if line:
                    a, b, n = line.split()
                    base[(a, b)] = int(n)
    return base


def compare(pairs, base):
    return [f"{a}:{ra[0]}-{ra[1]} ~ {b}:{rb[0]}-{rb[1]}: {n} shared lines"
            + (f" (baseline {base[(a, b)]})" if (a, b) in base else " (a new pair)")
            for (a, b), (n, ra, rb) in sorted(pairs.items()) if n > base.get((a, b), 0)]


def write_baseline(path, pairs):
    with open(path, "w") as f:
        f.write("# Pairs of files that repeat 6 or more significant lines (tests/docs/check_duplicates.py): they may\n"
                "# only shrink. After removing or moving duplication: python3 tests/docs/check_duplicates.py . --update\n"
                "# file a, file b, lines of a repeated in b\n")
        for (a, b), (n, _, _) in sorted(pairs.items()):
            f.write(f"{a} {b} {n}\n")


def self_test():
    block = "\n".join(f"int step{i}(int x) {{ return x * {i} + offset_{i}; }}" for i in range(8))
    other = "\n".join(f"double other{i} = compute({i});" for i in range(8))
    planted = {
        "core/a/one.cpp": "// one\n#include <x>\n" + block + "\n",
        "app/b/two.cpp": "#include <y>\n" + block.replace("* 3", "* 30").replace("+ offset_5", "+   offset_5") + "\n",
        "core/a/ok.cpp": other + "\n",
        "tests/c/three.py": "import os\n" + "\n".join(f"value_{i} = call('{i}')" for i in range(7)) + "\n",
        "tests/c/four.py": "# a copy\n" + "\n".join(f"value_{i} = call(\"x{i}\")" for i in range(7)) + "\n",
    }
    with planted_tree(planted) as d:
        pairs = find_pairs(d)
        new = compare(pairs, {("app/b/two.cpp", "core/a/one.cpp"): 8})
        grown = compare(pairs, {("app/b/two.cpp", "core/a/one.cpp"): 7, ("tests/c/four.py", "tests/c/three.py"): 7})
    want = {("app/b/two.cpp", "core/a/one.cpp"): 8, ("tests/c/four.py", "tests/c/three.py"): 7}
    got = {k: v[0] for k, v in pairs.items()}
    ok = got == want and len(new) == 1 and "three.py" in new[0] and len(grown) == 1 and "one.cpp" in grown[0]
    return verdict(ok, "self-test: copies with other numbers, strings, spacing and comments paired; a new pair and a grown one "
                   "caught", f"pairs {got}, want {want}; new {new}; grown {grown}")

def main(argv):
    if argv == ["--self-test"]:
        return self_test()
    if not usage_ok(argv, __doc__, ("--update", "--list")):
        return 2
    pairs = find_pairs(argv[0])
    base = read_baseline(BASELINE)
    if argv[1:] == ["--list"]:
        for (a, b), (n, ra, rb) in sorted(pairs.items(), key=lambda p: -p[1][0]):
            print(f"{n:4d}  {a}:{ra[0]}-{ra[1]} ~ {b}:{rb[0]}-{rb[1]}")
        print(f"{len(pairs)} pairs, {sum(p[0] for p in pairs.values())} shared lines")
        return 0
    if argv[1:] == ["--update"]:
        total, old_total = sum(p[0] for p in pairs.values()), sum(base.values())
        if os.path.exists(BASELINE) and (len(pairs) > len(base) or total > old_total):
            print(f"--update refuses: {len(pairs)} pairs sharing {total} lines, the baseline {len(base)} sharing {old_total}:\n"
                  + "\n".join(compare(pairs, base)), file=sys.stderr)
            return 1
        write_baseline(BASELINE, pairs)
        print(f"{os.path.relpath(BASELINE)}: {len(pairs)} pairs, {total} shared lines (was {len(base)}, {old_total})")
        return 0
    problems = compare(pairs, base)
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} new or grown duplicate pair(s): share the code (see tests/docs/check_duplicates.py)",
              file=sys.stderr)
        return 1
    print(f"duplicates hold: {len(pairs)} pairs, none new or grown (baseline {len(base)})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
