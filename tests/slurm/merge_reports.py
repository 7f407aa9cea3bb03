#!/usr/bin/python3
"""Merges histeq export --report files (a job array's tasks, over one or more runs) into one:

  merge_reports.py REPORT.json... [-o MERGED.json]

Totals over every report (done = written, skipped, failed, short, interrupted), and each input's
final result: the one that ended last, by the time the report records for the file (`finished_at`,
UTC), else the report's own `finished_at`, else the report file's modification time. The order of
the files on the command line does not matter: `REPORTS/*.json` sorts job 10 before job 9, and a
resumed task's success still wins over the failure it repaired.
"""
import argparse
import datetime
import json
import os
import sys


def entry_time(entry, report, path):
    """Seconds since the epoch at which this file's export ended."""
    for stamp in (entry.get("finished_at"), report.get("finished_at")):
        if stamp:
            return datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    return os.stat(path).st_mtime


def merge(paths):
    totals = {"done": 0, "skipped": 0, "failed": 0, "short": 0, "interrupted": 0, "not started": 0}
    entries = []
    for p in paths:
        with open(p, encoding="utf-8") as f:
            rep = json.load(f)
        for k, entry in enumerate(rep["files"]):
            entries.append((entry_time(entry, rep, p), p, k, entry))
    entries.sort(key=lambda e: (e[0], e[1], e[2]))  # by time (ties: by report name, then place)
    done_count, final = {}, {}
    for _, _, _, entry in entries:
        result = entry["result"]
        key = "done" if result == "ok" else result
        totals[key] = totals.get(key, 0) + 1
        name = entry.get("input_escaped", entry["input"])
        done_count[name] = done_count.get(name, 0) + (result in ("ok", "short"))
        final[name] = {"result": result, "output": entry.get("output_escaped", entry["output"]),
                       "frames_out": entry["frames_out"], "message": entry.get("message", ""),
                       "finished_at": entry.get("finished_at", "")}
    return {"reports": len(paths), "totals": totals, "written": done_count, "files": final}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("reports", nargs="+")
    ap.add_argument("-o", "--output")
    a = ap.parse_args()
    merged = merge(a.reports)
    text = json.dumps(merged, indent=1, ensure_ascii=False)
    if a.output:
        with open(a.output, "w", encoding="utf-8") as f:
            f.write(text + "\n")
    else:
        print(text)
    t = merged["totals"]
    print(f"merged {len(a.reports)} reports: {t['done']} done, {t['skipped']} skipped, {t['failed']} failed, "
          f"{t['short']} short, {t['interrupted']} interrupted", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
