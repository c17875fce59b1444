#!/usr/bin/env bash
# One device call (written in the tenth session, not yet run): which levels should take the
# cluster elimination? The rule (src/cuda/engine.rs eliminate_cluster) sends a split level to
# it when its clusters fit the SMs at once (3 CTAs per elimination and item <= SM count). At
# f64 n = 64 that gained 3 % at N = 64 and lost 1.2 % at N = 1024 (bench/results/ab, 2026-11-28),
# though both use the cluster at the same six levels (32 ... 1 eliminations). This sweeps the
# threshold with BTCHOL_ELIMINATE_CLUSTER=K (levels of at most K CTAs; 0 = never, default =
# the SM count) on one binary and kernel set, 3 interleaved rounds, and prints the factor per
# mode; a K that wins everywhere becomes the rule (or a rule by level width, if the levels of
# 24-32 eliminations are the ones that lose).
# Here (no GPU), from a clean tree: bash scripts/gpu-ab.sh bundle-kernels . .
# Device: run(command="bash bench/results/experiments/2026-11-28-cluster-threshold-call.sh", carry=[".bundle-ab"])
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
modes="0 6 12 24 48 96 default"
for round in 1 2 3; do
    for mode in $modes; do
        BTCHOL_ELIMINATE_CLUSTER=$([ "$mode" = default ] || echo "$mode") BTCHOL_KERNEL_DIR=.bundle-ab/kernels-a \
            BTCHOL_CACHE_DIR=/tmp/btchol-ab-a timeout 120 "$B" bench --backend cuda --algorithm nd --dtype f64 \
            --rhs device --n 64,96,128 --N 64,256,1024 --repeats 20 --warmup 5 --csv "$out/t-$mode-$round.csv" > /dev/null 2>&1
        echo -n "$mode/$round "
    done
done
echo
python3 - "$out" "$modes" <<'PY'
import csv, glob, sys
out, modes = sys.argv[1], sys.argv[2].split()
rows = {}
for f in glob.glob(f"{out}/t-*.csv"):
    mode, rnd = f.split("/t-")[1][:-4].split("-")
    for r in csv.DictReader(open(f)):
        rows.setdefault((int(r["n"]), int(r["N"])), {}).setdefault(mode, []).append(float(r["factor_us_median"]))
with open(f"{out}/threshold.csv", "w") as w:
    w.write("n,N,mode,factor_us_rounds\n")
    for (n, N), by in sorted(rows.items()):
        for m, v in by.items():
            w.write(f"{n},{N},{m},{' '.join(f'{x:.1f}' for x in v)}\n")
print("f64 factor µs, best of 3 rounds, by BTCHOL_ELIMINATE_CLUSTER:")
print("   n     N " + "".join(f"{m:>9}" for m in modes))
for (n, N), by in sorted(rows.items()):
    print(f"{n:4} {N:5} " + "".join(f"{min(by[m]):9.1f}" if m in by else f"{'-':>9}" for m in modes))
PY
rm -f "$out"/t-*.csv
