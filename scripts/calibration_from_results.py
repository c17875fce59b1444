#!/usr/bin/env python3
"""Builds the compiled-in calibration table of the automatic dispatch (src/plan/dispatch.rs) from
measured results. Standard library only.

Usage (from the repository root; re-run and commit the output whenever results are added):

    python3 scripts/calibration_from_results.py            # writes bench/calibration/default.csv
    python3 scripts/calibration_from_results.py --out -    # to stdout

Inputs (all optional, every file found is used):
  bench/results/*.csv          `btchol bench --csv` files (columns backend, device, algorithm,
                               dtype, n, N, batch, nrhs, threads, factor_us_median,
                               solve_us_median, date, ...); not bench/results/experiments/,
                               which holds measurements of kernel variants that did not land
  bench/calibration/measured/*.csv
                               `btchol calibrate --out` files (already in the table's format)

Kept: rows with dtype f32/f64 (mixed precision is not a dispatch target), one right-hand side in
host memory (not `--rhs device`), no diagonal shift, not deterministic-only, no mask (active_items = batch where the column
exists). A shape measured several times (same target, device, dtype, n, N, batch, threads)
keeps its newest row. CUDA rows get threads = 1 (the host thread that launches).

Output columns: target (cpu-seq, cpu-nd, cuda-nd, cuda-seq), device, dtype, n, N, batch,
threads, factor_us, solve_us, date; '#' lines are comments.
"""

import argparse
import csv
import glob
import os
import sys

COLUMNS = ["target", "device", "dtype", "n", "N", "batch", "threads", "factor_us", "solve_us", "date"]


def from_bench(path):
    """Rows of a `btchol bench --csv` file, in the table's format."""
    out = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if "backend" not in r:
                return []  # not a bench file (e.g. an auto-vs-best check)
            if r.get("dtype") not in ("f32", "f64") or r.get("nrhs", "1") != "1":
                continue
            if r.get("diag_shift") not in (None, "", "0.000e0") and float(r["diag_shift"]) != 0.0:
                continue
            if r.get("active_items") not in (None, "") and r["active_items"] != r["batch"]:
                continue
            # The plan's solve takes host arrays; `--rhs device` rows leave out the copies, so
            # they would favour the GPU against the CPU targets (measured with host arrays).
            if r.get("rhs") == "device":
                continue
            backend, alg = r["backend"], r["algorithm"]
            if backend not in ("cpu", "cuda") or alg not in ("seq", "nd"):
                continue
            out.append({
                "target": f"{backend}-{alg}",
                "device": r["device"],
                "dtype": r["dtype"],
                "n": int(r["n"]),
                "N": int(r["N"]),
                "batch": int(r["batch"]),
                "threads": 1 if backend == "cuda" else int(r["threads"]),
                "factor_us": float(r["factor_us_median"]),
                "solve_us": float(r["solve_us_median"]),
                "date": r.get("date", ""),
            })
    return out


def from_calibration(path):
    """Rows of a `btchol calibrate` file ('#' comment lines skipped)."""
    with open(path, newline="") as f:
        lines = [l for l in f if not l.startswith("#")]
    out = []
    for r in csv.DictReader(lines):
        row = {k: r[k] for k in COLUMNS}
        for k in ("n", "N", "batch", "threads"):
            row[k] = int(row[k])
        for k in ("factor_us", "solve_us"):
            row[k] = float(row[k])
        out.append(row)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--results", default="bench/results", help="folder of bench CSVs")
    ap.add_argument("--measured", default="bench/calibration/measured", help="folder of calibrate CSVs")
    ap.add_argument("--out", default="bench/calibration/default.csv", help="output file, or - for stdout")
    args = ap.parse_args()

    sources, rows = [], []
    for path in sorted(glob.glob(os.path.join(args.results, "*.csv"))):
        got = from_bench(path)
        if got:
            sources.append(os.path.basename(path))
            rows += got
    for path in sorted(glob.glob(os.path.join(args.measured, "*.csv"))):
        sources.append(os.path.basename(path))
        rows += from_calibration(path)

    newest = {}
    for r in rows:
        key = (r["target"], r["device"], r["dtype"], r["n"], r["N"], r["batch"], r["threads"])
        if key not in newest or r["date"] >= newest[key]["date"]:
            newest[key] = r
    table = sorted(newest.values(), key=lambda r: (r["device"], r["target"], r["dtype"], r["threads"],
                                                   r["batch"], r["n"], r["N"]))

    out = sys.stdout if args.out == "-" else open(args.out, "w", newline="")
    out.write("# btchol calibration table (src/plan/dispatch.rs), generated by "
              "scripts/calibration_from_results.py; do not edit by hand.\n")
    out.write("# sources: " + ", ".join(sources) + "\n")
    w = csv.writer(out, lineterminator="\n")
    w.writerow(COLUMNS)
    for r in table:
        w.writerow([r[k] if not isinstance(r[k], float) else f"{r[k]:.3f}" for k in COLUMNS])
    if out is not sys.stdout:
        out.close()
        print(f"{args.out}: {len(table)} rows from {len(sources)} files", file=sys.stderr)


if __name__ == "__main__":
    main()
