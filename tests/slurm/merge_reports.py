#!/usr/bin/python3
"""Merges histeq export --report files (a job array's tasks, over one or more runs) into one:

  merge_reports.py REPORT.json... [-o MERGED.json]

Totals over every report (done = written, skipped, failed, interrupted), and each input's final
result: its last report's, by the reports' order on the command line (name them run by run).
"""
import argparse
import json
import sys


def merge(paths):
    totals = {"done": 0, "skipped": 0, "failed": 0, "interrupted": 0, "not started": 0}
    done_count, final = {}, {}
    for p in paths:
        with open(p, encoding="utf-8") as f:
            rep = json.load(f)
        for entry in rep["files"]:
            result = entry["result"]
            key = "done" if result == "ok" else result
            totals[key] = totals.get(key, 0) + 1
            name = entry.get("input_escaped", entry["input"])
            done_count[name] = done_count.get(name, 0) + (result == "ok")
            final[name] = {"result": result, "output": entry.get("output_escaped", entry["output"]),
                           "frames_out": entry["frames_out"], "message": entry.get("message", "")}
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
          f"{t['interrupted']} interrupted", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
