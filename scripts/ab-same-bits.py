#!/usr/bin/env python3
"""Same bits across the sides of an A/B call: compares the `btchol bench --csv` files
DIR/corr-SIDE[TAG].csv of sides b, c, … with side a's, row by row (dtype, n, N, batch, nrhs), by
the solution's sha256, and prints per side and tag the rows compared, those with other bits and
the worst backward error in units of 1e-15 (f64) / 1e-6 (f32). Exit status 1 where any row
differs or a side has no file or no rows.

    python3 scripts/ab-same-bits.py DIR [TAG ...]      (TAG: a file-name suffix, e.g. -default)
"""
import csv
import os
import sys


def rows(path):
    key = lambda r: (r["dtype"], r["n"], r["N"], r["batch"], r["nrhs"])
    return {key(r): r for r in csv.DictReader(open(path))}


def main():
    out, tags = sys.argv[1], sys.argv[2:] or [""]
    sides = sorted({f[5] for f in os.listdir(out) if f.startswith("corr-") and f.endswith(".csv")})
    bad = False
    for tag in tags:
        files = {s: os.path.join(out, f"corr-{s}{tag}.csv") for s in "a" + "".join(sides)}
        missing = [s for s, f in files.items() if not os.path.exists(f)]
        if missing:
            print(f"corr{tag}: no file for side(s) {', '.join(missing)}")
            bad = True
        if "a" in missing:
            continue
        a = rows(files["a"])
        for s in sides:
            if s == "a" or s in missing:
                continue
            b = rows(files[s])
            diff = [k for k in b if k in a and a[k]["solution_sha256"] != b[k]["solution_sha256"]]
            worst = max((float(r["backward_error"]) / (1e-15 if r["dtype"] == "f64" else 1e-6) for r in b.values()),
                        default=float("nan"))
            print(f"corr{tag} side {s}: {len(b)} rows ({len(a)} on a), {len(diff)} with other bits {diff[:6]}; "
                  f"worst backward error {worst:.2f} x")
            bad |= bool(diff) or not b  # (no rows: that side's run failed)
    sys.exit(1 if bad else 0)


main()
