#!/usr/bin/env python3
"""Warp samples and executed instructions of one kernel, by stall reason, by opcode and by the
part of quality_gpu.cu the code came from: Nsight Compute's SASS page joined to nvdisasm's line
table (tools/device/chain_device.sh, PART=source, writes both).

  python3 bench/ncu_lines.py SASS_LINES.txt SRC_SASS.csv MANGLED_SUBSTRING KERNEL_NAME_SUBSTRING

SASS_LINES.txt: `nvdisasm -g -c` of the cubin the binary was built from; SRC_SASS.csv: `ncu
--import R.ncu-rep --page source --csv --print-source sass`. An instruction is put in the part of
quality_gpu.cu named by the last quality_gpu.cu line above it (code inlined from tone.h or CUB
counts where it was inlined), so the parts are approximate at their edges.
"""
import collections
import csv
import re
import sys

# quality_gpu.cu's parts, by line (the file at the commit the profile was taken on).
PARTS = [(30, 60, "clip helpers"), (60, 180, "clipped LUT"), (230, 300, "measure: struct, cluster sums"),
         (300, 328, "measure: sum_at (a mean)"), (328, 352, "measure: fill_buckets"),
         (352, 377, "measure: last_at_most"), (377, 400, "block_offset / limit_offset"),
         (400, 437, "frame_figures"), (437, 482, "step_states"), (482, 540, "temporal_ref_block: the writes")]


def line_table(path, fn_pat):
    """SASS offset -> (leaf file:line, last quality_gpu.cu line) for the function matching fn_pat."""
    table, inside, leaf, qline = {}, False, None, None
    for text in open(path):
        if text.startswith("//---"):
            inside = re.search(fn_pat, text) is not None
            continue
        if not inside:
            continue
        m = re.match(r'\s*//## File "([^"]+)", line (\d+)', text)
        if m:
            leaf = (m.group(1).split("/")[-1], int(m.group(2)))
            if leaf[0] == "quality_gpu.cu":
                qline = leaf[1]
            continue
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/", text)
        if m:
            table[int(m.group(1), 16)] = (leaf, qline)
    return table


def kernel_rows(path, name):
    """The header and rows of the first result of the kernel whose name contains `name`."""
    hdr, rows, mine = None, [], False
    for r in csv.reader(open(path)):
        if r and r[0] == "Kernel Name":
            if rows:
                break
            mine, hdr = name in r[1], None
            continue
        if r and r[0] == "Address":
            hdr = r
            continue
        if mine and hdr and len(r) == len(hdr):
            rows.append(r)
    return hdr, rows


def part_of(q):
    for lo, hi, name in PARTS:
        if q is not None and lo <= q < hi:
            return name
    return "other"


def main():
    sass_lines, src_csv, fn_pat, kname = sys.argv[1:5]
    table = line_table(sass_lines, fn_pat)
    hdr, rows = kernel_rows(src_csv, kname)
    if not rows:
        sys.exit(f"ncu_lines: no kernel matching {kname!r} in {src_csv}")
    ix = {k: i for i, k in enumerate(hdr)}
    stalls = [k for k in hdr if k.startswith("stall_") and "Not Issued" not in k]
    base = int(rows[0][ix["Address"]], 16)
    by_stall, by_op, by_part = collections.Counter(), collections.Counter(), collections.defaultdict(lambda: [0, 0])
    samples = executed = 0
    for r in rows:
        s = int(r[ix["Warp Stall Sampling (All Samples)"]] or 0)
        e = int(r[ix["Instructions Executed"]] or 0)
        samples, executed = samples + s, executed + e
        for k in stalls:
            by_stall[k] += int(r[ix[k]]) if r[ix[k]] not in ("", "-") else 0
        ops = [o for o in r[ix["Source"]].split() if not o.startswith("@")]
        by_op[ops[0].split(".")[0] if ops else "?"] += s
        leaf, q = table.get(int(r[ix["Address"]], 16) - base, (None, None))
        by_part[part_of(q)][0] += s
        by_part[part_of(q)][1] += e
    print(f"{kname}: {executed} warp instructions executed, {samples} warp samples, "
          f"{sum(1 for r in rows if int(r[ix['Address']], 16) - base in table)} of {len(rows)} instructions on a line")
    print(" stall reasons (share of the samples):")
    for k, v in by_stall.most_common(9):
        print(f"   {k:26s} {v:6d} {100.0 * v / max(samples, 1):5.1f}%")
    print(" opcodes (samples):", ", ".join(f"{k} {100.0 * v / max(samples, 1):.0f}%" for k, v in by_op.most_common(10)))
    print(" parts of quality_gpu.cu (samples, warp instructions):")
    for k, (s, e) in sorted(by_part.items(), key=lambda x: -x[1][0]):
        print(f"   {k:34s} {100.0 * s / max(samples, 1):5.1f}%  {e:6d} ({100.0 * e / max(executed, 1):4.1f}%)")


if __name__ == "__main__":
    main()
