#!/usr/bin/env bash
# 2026-12-03 (twenty-eighth session): a = HEAD's kernels (78415b3: the D CTA's accumulators
# redistributed through its unused S region, the cluster kernel only), b = through the warp's own
# T_W instead (2026-12-03-redistribute-through-T.patch: no S needed, so btchol_factor_potrf_split's
# D CTA alone, at the wide levels, has it too; its stack 216 → 344 B at 128 registers).
# Bundle (on 78415b3): BUNDLE_KERNELS=0 bash scripts/gpu-ab.sh bundle-kernels . \
#   bench/results/experiments/2026-12-03-redistribute-through-T.patch   (carry .bundle-ab)
# Run 2026-12-03: factor 0.98-1.01, not landed (README.md here).
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
warm_sides a,b f64:64,f64:96,f64:104,f64:128
OUT=/tmp/ab1 AB_ROUNDS=2 timeout 200 bash scripts/gpu-ab.sh run --backend cuda --algorithm nd --dtype f64 \
    --n 64,96,100,128 --N 64,256,1024,4096 --rhs device --repeats 10 | tail -20
cp /tmp/ab1/ab.csv "$out/ab-redistribute-T.csv"
corr_sides 100 a,b --dtype f64 --n 64,96,100,120,128 --N 1,2,3,64,257
same_bits a b
rm -f "$out"/corr-*.csv
sanitize b racecheck --dtype f64 --n 128 --N 5 --batch 1
BTCHOL_SPLIT_ELIMINATE_MIN_CTAS=1 sanitize b racecheck --dtype f64 --n 96,128 --N 9 --batch 1
mv "$out/san-b-racecheck.log" "$out/san-b-racecheck-split.log"
BTCHOL_SPLIT_ELIMINATE_MIN_CTAS=1 sanitize b memcheck --dtype f64 --n 100,128 --N 17 --batch 1
sanitize b synccheck --dtype f64 --n 100 --N 5 --batch 1
