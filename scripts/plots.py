#!/usr/bin/env python3
"""Headline plots of the GPU performance issue (issue 5), from bench result CSVs.

Needs matplotlib (nothing else beyond the standard library):

    pip install matplotlib

Usage (from the repository root; re-run whenever new results arrive):

    python3 scripts/plots.py                                   # newest GPU CSV in bench/results/
    python3 scripts/plots.py --results bench/results/nvidia-h100-80gb-hbm3-2026-11-22.csv \\
        --cpu bench/results/cpu-amd-epyc-2026-11-22.csv        # + GPU-over-CPU speed-up plot

Inputs:
  --results    a `btchol bench --csv` file of the GPU run (columns: backend, dtype, n, N, batch,
               nrhs, algorithm, factor_us_median, solve_us_median, ...). Rows of other backends
               in it are used as the CPU side of the speed-up plot when --cpu is not given.
  --cpu        a `btchol bench --csv` file of the CPU backend, ideally measured in the same run
               on the same shapes (optional; without CPU rows the speed-up plot is skipped).
  --reference  the cuDSS / socu reference times (default
               bench/reference/h100-cudss-socu-2026-11-22.csv, copied from issue 5).

  --later     LABEL=CSV: a later run's GPU CSV (e.g. a few shapes measured after a change), drawn
               on the n = 32 f64 plots as its own series, labelled LABEL (repeatable).

Writes to --out (default bench/plots/):
  factor-n32-f64.png    (a) factor time vs N, n=32 f64: btchol, cuDSS, socu, target cuDSS/10
  solve-n32-f64.png     (b) solve time vs N, n=32 f64, 1 rhs: target cuDSS/5
  speedup-vs-cpu.png    (c) GPU time / CPU time per shape, factor and solve, vs N
  factor-by-n.png       (d) one panel per n in {8,16,32,64,128}: factor time vs N, f64 and f32
  batched.png           (e) the two batch shapes of the issue, when the results have them

Single systems are rows with batch = 1 and nrhs = 1. When a shape was measured several times
(several algorithms or thread counts) the fastest median is plotted.
"""

import argparse
import csv
import glob
import os
import sys
from collections import defaultdict

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit("scripts/plots.py needs matplotlib: pip install matplotlib")

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_REF = os.path.join(REPO, "bench", "reference", "h100-cudss-socu-2026-11-22.csv")
BLOCK_SIZES = (8, 16, 32, 64, 128)
# The rule: factor <= cuDSS / 10, solve <= cuDSS / 5.
TARGET_FACTOR = {"factor": 10.0, "solve": 5.0}
STYLE = {
    "cudss": dict(color="tab:green", marker="s", label="cuDSS 1.0.0"),
    "socu": dict(color="tab:orange", marker="^", label="socu 0.1.0, CUDA graphs"),
}


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def newest_gpu_csv():
    files = sorted(glob.glob(os.path.join(REPO, "bench", "results", "*.csv")))
    gpu = [f for f in files if not os.path.basename(f).startswith("cpu-")]
    if not gpu:
        sys.exit("no GPU results CSV in bench/results/; pass --results")
    return max(gpu, key=lambda f: (os.path.basename(f).rsplit("-", 3)[-3:], f))


def fnum(row, key):
    try:
        return float(row.get(key, "") or "nan")
    except ValueError:
        return float("nan")


def shape(row):
    """(dtype, n, N, batch, nrhs) of a bench row."""
    return (row["dtype"], int(row["n"]), int(row["N"]), int(row["batch"]), int(row["nrhs"]))


def best_times(rows):
    """{shape: (factor_us, solve_us, label)}: the fastest median factor per shape."""
    best = {}
    for r in rows:
        f, s = fnum(r, "factor_us_median"), fnum(r, "solve_us_median")
        k = shape(r)
        if k not in best or f < best[k][0]:
            best[k] = (f, s, f"{r['algorithm']}, {r['threads']} thr")
    return best


def reference_series(ref, lib, op, dtype, n, batch=1):
    pts = sorted(
        (int(r["N"]), float(r["time_us"]))
        for r in ref
        if r["library"] == lib and r["op"] == op and r["dtype"] == dtype and int(r["n"]) == n
        and int(r["batch"]) == batch
    )
    return [p[0] for p in pts], [p[1] for p in pts]


def btchol_series(best, op, dtype, n):
    idx = 0 if op == "factor" else 1
    pts = sorted((k[2], v[idx]) for k, v in best.items() if k[0] == dtype and k[1] == n and k[3] == 1 and k[4] == 1)
    return [p[0] for p in pts], [p[1] for p in pts]


def time_axes(ax, title):
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("N (blocks)")
    ax.set_ylabel("time (µs)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)


def plot_vs_references(ax, gpu_best, ref, op, dtype, n, gpu_label, with_target=True, suffix=""):
    """btchol, cuDSS, socu and the target on one axes; returns whether btchol had points."""
    x, y = btchol_series(gpu_best, op, dtype, n)
    if x:
        ax.plot(x, y, "o-", color="tab:blue", label=f"btchol {dtype}{suffix} ({gpu_label})")
    for lib, st in STYLE.items():
        rx, ry = reference_series(ref, lib, op, dtype, n)
        if rx:
            ax.plot(rx, ry, linestyle="-", **{**st, "label": f"{st['label']} {dtype}{suffix}"})
    if with_target:
        rx, ry = reference_series(ref, "cudss", op, dtype, n)
        if rx:
            d = TARGET_FACTOR[op]
            ax.plot(rx, [t / d for t in ry], "k--", label=f"target: cuDSS / {d:g} ({dtype})")
    return bool(x)


def device_label(rows):
    devs = sorted({r.get("device", "") for r in rows if r.get("device")})
    return ", ".join(devs) or "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", help="GPU bench CSV (default: newest non-CPU CSV in bench/results/)")
    ap.add_argument("--cpu", help="CPU bench CSV for the speed-up plot")
    ap.add_argument("--reference", default=DEFAULT_REF)
    ap.add_argument("--out", default=os.path.join(REPO, "bench", "plots"))
    ap.add_argument(
        "--later",
        action="append",
        default=[],
        metavar="LABEL=CSV",
        help="a later run's GPU CSV, drawn on the n = 32 f64 plots as its own series (repeatable)",
    )
    a = ap.parse_args()

    results = a.results or newest_gpu_csv()
    rows = read_csv(results)
    ref = read_csv(a.reference)
    # The references' device, from the file's name (<device>-cudss-socu-<date>.csv), in their
    # labels: it need not be the device of the results.
    ref_device = os.path.basename(a.reference).split("-cudss")[0].upper()
    if ref_device and ref_device != os.path.basename(a.reference).upper():
        for st in STYLE.values():
            st["label"] += f" ({ref_device})"
    gpu_rows = [r for r in rows if r["backend"] == "cuda"]
    cpu_rows = [r for r in rows if r["backend"] == "cpu"]
    if a.cpu:
        cpu_rows += [r for r in read_csv(a.cpu) if r["backend"] == "cpu"]
    if not gpu_rows:
        sys.exit(f"{results}: no rows with backend = cuda")
    gpu_best, cpu_best = best_times(gpu_rows), best_times(cpu_rows)
    gpu_label = device_label(gpu_rows).replace("NVIDIA ", "")
    later = [tuple(v.split("=", 1)) for v in a.later]
    later_best = {path: best_times([r for r in read_csv(path) if r["backend"] == "cuda"]) for _, path in later}
    src = f"data: {os.path.relpath(results, REPO)}; references: {os.path.relpath(a.reference, REPO)}"
    for _, path in later:
        src += f"; later: {os.path.relpath(path, REPO)}"
    os.makedirs(a.out, exist_ok=True)
    written = []

    def save(fig, name):
        fig.text(0.01, 0.005, src, fontsize=6, color="gray")
        path = os.path.join(a.out, name)
        fig.savefig(path, dpi=120, bbox_inches="tight")
        plt.close(fig)
        written.append(path)

    # (a), (b): n = 32 f64, single system, against the references.
    for op, name in (("factor", "factor-n32-f64.png"), ("solve", "solve-n32-f64.png")):
        fig, ax = plt.subplots(figsize=(7, 4.8))
        plot_vs_references(ax, gpu_best, ref, op, "f64", 32, gpu_label)
        for (label, path), marker in zip(later, "D*Pv"):
            x, y = btchol_series(later_best[path], op, "f64", 32)
            if x:
                ax.plot(x, y, marker, color="tab:purple", markersize=8, label=f"btchol f64, {label}")
        time_axes(ax, f"{op}, n = 32, f64, single system" + (", 1 rhs" if op == "solve" else ""))
        ax.legend(fontsize=8)
        save(fig, name)

    # (c): speed-up of the GPU over the CPU backend, shapes present in both.
    common = sorted(set(gpu_best) & set(cpu_best))
    if common:
        fig, axes = plt.subplots(1, 2, figsize=(12, 4.8), sharey=True)
        for ax, (op, idx) in zip(axes, (("factor", 0), ("solve", 1))):
            series = defaultdict(list)
            for k in common:
                dtype, n, nb, batch, nrhs = k
                series[(dtype, n, batch, nrhs)].append((nb, cpu_best[k][idx] / gpu_best[k][idx]))
            for (dtype, n, batch, nrhs), pts in sorted(series.items()):
                pts.sort()
                lab = f"n={n} {dtype}" + (f" B={batch}" if batch > 1 else "") + (f" m={nrhs}" if nrhs > 1 else "")
                ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-" if dtype == "f64" else "x--", label=lab)
            ax.axhline(1.0, color="k", lw=0.8)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("N (blocks)")
            ax.set_title(f"{op}: CPU time / GPU time (> 1: GPU faster)")
            ax.grid(True, which="both", alpha=0.3)
        axes[0].set_ylabel("speed-up")
        axes[1].legend(fontsize=7, ncol=2)
        cpu_label = device_label(cpu_rows)
        how = sorted({v[2] for k, v in cpu_best.items() if k in common})
        fig.suptitle(f"GPU ({gpu_label}) over CPU ({cpu_label}; {'; '.join(how)})", fontsize=9)
        save(fig, "speedup-vs-cpu.png")
    else:
        print("speed-up plot skipped: no CPU rows with the GPU rows' shapes (give --cpu)")

    # (d): one panel per block size.
    fig, grid = plt.subplots(2, 3, figsize=(15, 9.5))
    axes = list(grid.flat)
    for ax in axes[len(BLOCK_SIZES) :]:
        ax.set_visible(False)
    for ax, n in zip(axes, BLOCK_SIZES):
        plot_vs_references(ax, gpu_best, ref, "factor", "f64", n, gpu_label)
        x, y = btchol_series(gpu_best, "factor", "f32", n)
        if x:
            ax.plot(x, y, "o:", color="tab:purple", label="btchol f32")
        for lib, st in STYLE.items():
            rx, ry = reference_series(ref, lib, "factor", "f32", n)
            if rx:
                ax.plot(rx, ry, linestyle=":", color=st["color"], marker=st["marker"], label=f"{lib} f32")
        time_axes(ax, f"factor, n = {n}")
        ax.legend(fontsize=7)
    save(fig, "factor-by-n.png")

    # (e): the batch shapes, where measured.
    shapes = sorted({(int(r["batch"]), int(r["N"]), int(r["n"])) for r in ref if int(r["batch"]) > 1})
    have = [(b, nb, n) for b, nb, n in shapes if ("f64", n, nb, b, 1) in gpu_best]
    if have:
        fig, axes = plt.subplots(1, len(have), figsize=(6 * len(have), 4.4), squeeze=False)
        for ax, (b, nb, n) in zip(axes[0], have):
            labels, vals, colors = [], [], []
            for op, idx in (("factor", 0), ("solve", 1)):
                t = {lib: next((float(r["time_us"]) for r in ref if r["library"] == lib and r["op"] == op
                                and int(r["batch"]) == b and int(r["N"]) == nb and int(r["n"]) == n), None)
                     for lib in STYLE}
                entries = [("btchol", gpu_best[("f64", n, nb, b, 1)][idx], "tab:blue")]
                entries += [(lib, t[lib], STYLE[lib]["color"]) for lib in STYLE if t[lib] is not None]
                if t["cudss"] is not None:
                    entries.append(("target", t["cudss"] / TARGET_FACTOR[op], "black"))
                for lib, v, c in entries:
                    labels.append(f"{op}\n{lib}")
                    vals.append(v)
                    colors.append(c)
            ax.bar(range(len(vals)), vals, color=colors)
            ax.set_xticks(range(len(vals)), labels, fontsize=7)
            ax.set_yscale("log")
            ax.set_ylabel("time (µs)")
            ax.set_title(f"B = {b}, N = {nb}, n = {n}, f64")
            ax.grid(True, axis="y", which="both", alpha=0.3)
        save(fig, "batched.png")
    else:
        print("batch plot skipped: the results have none of the issue's batch shapes")

    for p in written:
        print("wrote", os.path.relpath(p, REPO))


if __name__ == "__main__":
    main()
