#!/usr/bin/env bash
# 2026-12-02 (twenty-seventh session): the rolled panel solves alone (the call before measured them
# on top of the split rank update, which was slower by itself). Sides of bash scripts/gpu-ab.sh
# bundle-kernels HEAD /tmp/side-b2 . (carry .bundle-ab and .bundle, BUNDLE_KERNELS=0 bash
# scripts/gpu-check.sh bundle): b the pivot chain change, c b + the rolled solves. Then the GPU
# check on c's kernels (the bundle's own) if c is faster and racecheck-clean, else on b's.
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
for side in b c; do
    ( BTCHOL_KERNEL_DIR=.bundle-ab/kernels-$side BTCHOL_CACHE_DIR=/tmp/btchol-ab-$side timeout 200 $B kernels --warm \
        --only f64:64,f64:100,f64:128 | tail -1 ) &
done
wait
echo "=== A/B b, c"
OUT=/tmp/ab1 AB_SIDES=b,c AB_ROUNDS=2 timeout 150 bash scripts/gpu-ab.sh run --backend cuda --algorithm nd --dtype f64 \
    --n 64,100,128 --N 64,256,1024 --rhs device --repeats 10 | tail -11
cp /tmp/ab1/ab.csv "$out/ab-rolled-only.csv"
corr_sides 100 b,c --dtype f64 --n 64,100,120,128 --N 1,2,3,64,257
same_bits b c
rm -f "$out"/corr-*.csv
sanitize b racecheck --dtype f64 --n 128 --N 5 --batch 1
sanitize c racecheck --dtype f64 --n 128 --N 5 --batch 1
win=$(python3 - /tmp/ab1/ab.csv <<'PY'
import csv, sys, math
rows = list(csv.DictReader(open(sys.argv[1])))
best = {}
for r in rows:
    k = (r["side"], r["n"], r["N"]); best[k] = min(best.get(k, 1e99), float(r["factor_us_median"]))
ratios = [best[("c", n, N)] / best[("b", n, N)] for (s, n, N) in best if s == "b" and ("c", n, N) in best]
g = math.exp(sum(map(math.log, ratios)) / len(ratios))
print("c" if g < 0.99 else "b", f"{g:.3f}")
PY
)
echo "geomean c/b factor: $win"
tail -1 "$out/san-c-racecheck.log" | grep -q "SUMMARY: 0 hazards" || win="b (c racecheck)"
echo "=== gpu-check on ${win%% *}"
if [ "${win%% *}" = c ]; then timeout 400 bash scripts/gpu-check.sh run | tail -6
else BTCHOL_KERNEL_DIR=$PWD/.bundle-ab/kernels-b timeout 400 bash scripts/gpu-check.sh run | tail -6; fi
ls "$out" .bundle/out 2>/dev/null | head -30
