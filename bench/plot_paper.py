#!/usr/bin/env python3
"""Plots for `histeq bench --paper DIR`: one PNG per experiment CSV in DIR.

    python3 bench/plot_paper.py DIR

Grouped bars of effective GB/s per input (Nugteren's figures 8, 14, 15 and the course sweep, log
scale where the spread spans orders of magnitude), GB/s against sigma for Xu's figure 9, and for
the predictability experiment the time per content per kernel (each kernel a line over the
contents, its max/min in the legend: a flat line is a kernel whose time does not depend on the
picture). The predictability plot also works on any `histeq bench --csv` file:

    python3 bench/plot_paper.py --predictability results.csv out.png
Needs matplotlib (Debian: python3-matplotlib).
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read(path):
    with open(path) as f:
        lines = [line for line in f if not line.startswith("#")]
    return [r for r in csv.DictReader(lines) if r["status"] == "ok"]


def device_of(path):
    with open(path) as f:
        for line in f:
            if line.startswith("# device:"):
                return line.split(":", 1)[1].strip()
    return "?"


def bars(rows, title, out, log=False):
    sizes = list(dict.fromkeys(r["size"] for r in rows))
    fig, axes = plt.subplots(len(sizes), 1, figsize=(11, 4.2 * len(sizes)), squeeze=False)
    for ax, size in zip(axes[:, 0], sizes):
        sel = [r for r in rows if r["size"] == size]
        inputs = list(dict.fromkeys(r["input"] for r in sel))
        kernels = [k for k in dict.fromkeys(r["kernel"] for r in sel)]
        width = 0.8 / max(1, len(kernels))
        for i, k in enumerate(kernels):
            ys = []
            for inp in inputs:
                v = [float(r["gbps"]) for r in sel if r["kernel"] == k and r["input"] == inp]
                ys.append(v[0] if v else 0.0)
            xs = [j + (i - (len(kernels) - 1) / 2) * width for j in range(len(inputs))]
            style = {"color": "0.8", "edgecolor": "0.5"} if k == "read_ceiling" else {}
            ax.bar(xs, ys, width, label=k, **style)
        ax.set_xticks(range(len(inputs)))
        ax.set_xticklabels(inputs, rotation=30, ha="right")
        ax.set_ylabel("effective GB/s")
        if log:
            ax.set_yscale("log")
        ax.set_title(f"{title} - {size}")
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=8, ncol=4)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def sigma_plot(rows, title, out):
    fig, ax = plt.subplots(figsize=(8, 4.5))
    kernels = [k for k in dict.fromkeys(r["kernel"] for r in rows) if k != "read_ceiling"]
    sizes = list(dict.fromkeys(r["size"] for r in rows))
    inputs = list(dict.fromkeys(r["input"] for r in rows))
    styles = ["-", "--", ":", "-."]
    for si, size in enumerate(sizes):
        for k in kernels:
            ys = []
            for inp in inputs:
                v = [float(r["gbps"]) for r in rows if r["kernel"] == k and r["input"] == inp and r["size"] == size]
                ys.append(v[0] if v else float("nan"))
            ax.plot(range(len(inputs)), ys, marker="o", linestyle=styles[si % len(styles)], label=f"{k} ({size})")
    labels = [("s=" + t.split(":")[1]) if t.startswith("gaussian:") else t for t in inputs]
    ax.set_xticks(range(len(inputs)))
    ax.set_xticklabels(labels, rotation=30)
    ax.set_xlabel("Gaussian standard deviation (10-bit samples), then uniform")
    ax.set_ylabel("effective GB/s (samples + weights)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def predictability_plot(rows, title, out):
    rows = [r for r in rows if r["kernel"] != "read_ceiling"]
    groups = list(dict.fromkeys((r["size"], r.get("bits", "8")) for r in rows))
    fig, axes = plt.subplots(len(groups), 1, figsize=(10, 3.8 * len(groups)), squeeze=False)
    for ax, (size, bits) in zip(axes[:, 0], groups):
        sel = [r for r in rows if r["size"] == size and r.get("bits", "8") == bits]
        inputs = list(dict.fromkeys(r["input"] for r in sel))
        for k in dict.fromkeys(r["kernel"] for r in sel):
            ys = []
            for inp in inputs:
                v = [float(r["median_us"]) for r in sel if r["kernel"] == k and r["input"] == inp]
                ys.append(v[0] if v else float("nan"))
            good = [y for y in ys if y == y]
            ratio = max(good) / min(good) if good else float("nan")
            ax.plot(range(len(inputs)), ys, marker="o", label=f"{k} (max/min {ratio:.2f})")
        ax.set_xticks(range(len(inputs)))
        ax.set_xticklabels(inputs, rotation=30, ha="right")
        ax.set_ylabel("median time per frame (us)")
        ax.set_ylim(bottom=0)
        ax.set_title(f"{title} - {size}" + ("" if bits == "8" else f", {bits}-bit"))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--predictability":
        rows = read(sys.argv[2])
        predictability_plot(rows, f"Time per content ({device_of(sys.argv[2])})", sys.argv[3])
        print("plot: " + sys.argv[3])
        return
    if len(sys.argv) != 2:
        sys.exit("usage: plot_paper.py DIR | plot_paper.py --predictability CSV PNG")
    d = sys.argv[1]
    titles = {
        "nugteren_fig8": ("Nugteren fig. 8: method1 extensions", False),
        "nugteren_fig14": ("Nugteren fig. 14: method2 mappings", False),
        "nugteren_fig15": ("Nugteren fig. 15: reference vs method1 vs method2", False),
        "course_colours": ("Course report: distinct colours", True),
    }
    made = []
    for name in sorted(os.listdir(d)):
        if not name.endswith(".csv") or name == "summary.csv":
            continue
        path = os.path.join(d, name)
        rows = read(path)
        if not rows:
            continue
        stem = name[:-4]
        dev = device_of(path)
        out = os.path.join(d, stem + ".png")
        if stem == "xu_fig9":
            sigma_plot(rows, f"Xu fig. 9: collision vs collision_reduced, 1024 bins ({dev})", out)
        elif stem == "predictability":
            predictability_plot(rows, f"Predictability: time per content ({dev})", out)
        else:
            title, log = titles.get(stem, (stem, False))
            bars(rows, f"{title} ({dev})", out, log=log)
        made.append(out)
    print("plots: " + (", ".join(made) if made else "none"))


if __name__ == "__main__":
    main()
