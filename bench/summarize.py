#!/usr/bin/env python3
"""Markdown tables from a `histeq bench --csv` file: one table per size and pitch, kernels as rows,
inputs as column groups (median us, GB/s, x_cub, x_ceiling).

    python3 bench/summarize.py docs/results/bench_h200.csv [--sizes 1080p,1g] [--pitches tight,padded]
"""
import argparse
import csv
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--sizes", default="")
    ap.add_argument("--pitches", default="tight,padded")
    a = ap.parse_args()
    with open(a.csv) as f:
        rows = [r for r in csv.DictReader(line for line in f if not line.startswith("#"))]
    if not rows:
        sys.exit("summarize.py: no rows in " + a.csv)
    sizes = a.sizes.split(",") if a.sizes else list(dict.fromkeys(r["size"] for r in rows))
    pitches = a.pitches.split(",")
    inputs = list(dict.fromkeys(r["input"] for r in rows))
    kernels = list(dict.fromkeys(r["kernel"] for r in rows))
    for size in sizes:
        for pitch in pitches:
            sel = {(r["kernel"], r["input"]): r for r in rows if r["size"] == size and r["pitch_kind"] == pitch}
            if not sel:
                continue
            any_row = next(iter(sel.values()))
            print(f"\n**{size} ({any_row['width']}x{any_row['height']}), {pitch} pitch ({any_row['pitch']} B), "
                  f"{any_row['buffers']} rotating buffers**\n")
            print("| kernel | " + " | ".join(f"{i}: median us / GB/s / x_cub / x_ceil" for i in inputs) + " |")
            print("|---|" + "---|" * len(inputs))
            for k in kernels:
                cells = []
                for i in inputs:
                    r = sel.get((k, i))
                    if r is None:
                        cells.append("-")
                    elif r["status"] != "ok":
                        cells.append(r["status"][:40])
                    else:
                        cells.append(f"{float(r['median_us']):.1f} / {float(r['gbps']):.0f} / "
                                     f"{float(r['x_cub']):.2f} / {float(r['x_ceiling']):.2f}")
                print(f"| {k} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
