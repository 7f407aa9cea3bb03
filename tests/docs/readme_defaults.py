#!/usr/bin/env python3
"""The README's option defaults are what the command line says (the README once said --temporal
defaulted to 0.5 when it was 0.35). The defaults come from the code (eq::default_quality() and the
option tables), and `histeq CMD --help` prints them as `--name TYPE=VALUE`; every `(default V` the
README's command reference gives for an option is checked against that.

  readme_defaults.py --histeq BIN README.md       exit 0, or one line per mismatch and exit 1
  readme_defaults.py --self-test                  the parser on a known good and a known bad text
"""
import argparse
import re
import subprocess
import sys

OPTION = re.compile(r"^\s{2}(-\w, )?(--[a-z][a-z0-9-]*)\b(.*)$")
HELP_DEFAULT = re.compile(r"^\s+(?:-\w, ?)?(--[a-z][a-z0-9-]*)(?:,-\w)?\s+[A-Z]+(?::\{[^}]*\})?=(\S+)")


def readme_defaults(text):
    """{option: default} from the README's command reference: an option line (two spaces, then
    --name) and its continuation lines (deeper indented, no option of their own)."""
    out, current, body = {}, None, ""

    def close():
        if current:
            m = re.search(r"\(default ([^;,):\s]+)", body)
            if m:
                out[current] = m.group(1)

    for line in text.splitlines():
        m = OPTION.match(line)
        if m:
            close()
            current, body = m.group(2), m.group(3)
        elif current and line.startswith(" " * 10) and not line.strip().startswith("-"):
            body += " " + line.strip()
        else:
            close()
            current, body = None, ""
    close()
    return out


def help_defaults(text):
    out = {}
    for line in text.splitlines():
        m = HELP_DEFAULT.match(line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


def same(a, b):
    try:
        return float(a) == float(b)
    except ValueError:
        return a == b


def mismatches(readme, helps):
    bad = []
    for opt, want in sorted(readme_defaults(readme).items()):
        if opt in helps and not same(want, helps[opt]):
            bad.append(f"README says {opt} defaults to {want}, the command line says {helps[opt]}")
    return bad


def self_test():
    helps = {"--temporal": "0.35", "--tiles": "8x8"}
    good = "  --temporal S                   smooth the LUT over time, time constant S seconds, with the\n" \
           "                                 output's brightness ... (default 0.35; 0 = off)\n" \
           "  --tiles CxR                    clahe: the tile grid (default 8x8)\n"
    bad = good.replace("default 0.35", "default 0.5")
    assert mismatches(good, helps) == [], mismatches(good, helps)
    assert len(mismatches(bad, helps)) == 1, mismatches(bad, helps)
    sample = "  --temporal FLOAT=0.35 Excludes: --plain\n  -k,--kernel TEXT=method2_tuned\n  --mode TEXT:{global,clahe}=global\n"
    assert help_defaults(sample) == {"--temporal": "0.35", "--kernel": "method2_tuned", "--mode": "global"}, help_defaults(sample)
    print("readme_defaults self-test: ok")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--histeq")
    ap.add_argument("--self-test", action="store_true")
    ap.add_argument("readme", nargs="?")
    a = ap.parse_args()
    if a.self_test:
        self_test()
        return 0
    helps = {}
    for cmd in ("play", "export", "bench", "quality"):
        r = subprocess.run([a.histeq, cmd, "--help"], capture_output=True, text=True, timeout=60)
        for k, v in help_defaults(r.stdout).items():
            helps.setdefault(k, v)
    bad = mismatches(open(a.readme, encoding="utf-8").read(), helps)
    for line in bad:
        print(line)
    checked = [o for o in readme_defaults(open(a.readme, encoding="utf-8").read()) if o in helps]
    print(f"readme_defaults: {len(checked)} defaults checked, {len(bad)} wrong")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
