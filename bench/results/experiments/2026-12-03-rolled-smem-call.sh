#!/usr/bin/env bash
# 2026-12-03 (twenty-eighth session): three sides, one binary: a = HEAD's kernels, b = the rolled
# panel solves without their race (2026-12-02-rolled-solve-racefree.patch), c = b with the D CTA's
# accumulators redistributed through its unused S region instead of 128 shuffles
# (2026-12-03-rolled-smem-redistribution.patch, against HEAD; the cluster kernel's SASS 19968 →
# 16424 instructions at f64 LD 128, registers 193 → 255, no stack).
# Bundle: BUNDLE_KERNELS=0 bash scripts/gpu-ab.sh bundle-kernels HEAD \
#   bench/results/experiments/2026-12-02-rolled-solve-racefree.patch \
#   bench/results/experiments/2026-12-03-rolled-smem-redistribution.patch     (carry .bundle-ab)
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
warm_sides a,b,c f64:64,f64:104,f64:128
OUT=/tmp/ab1 AB_ROUNDS=2 timeout 260 bash scripts/gpu-ab.sh run --backend cuda --algorithm nd --dtype f64 \
    --n 64,100,128 --N 64,256,1024,4096 --rhs device --repeats 10 | tail -40
cp /tmp/ab1/ab.csv "$out/ab-rolled-smem.csv"
corr_sides 100 a,b,c --dtype f64 --n 64,100,120,128 --N 1,2,3,64,257
same_bits a b
same_bits a c
rm -f "$out"/corr-*.csv
sanitize c racecheck --dtype f64 --n 128 --N 5 --batch 1
sanitize c racecheck --dtype f64 --n 64,100 --N 9 --batch 2
sanitize b racecheck --dtype f64 --n 128 --N 5 --batch 1
sanitize c memcheck --dtype f64 --n 100,128 --N 3,17 --batch 1
sanitize c synccheck --dtype f64 --n 100 --N 5 --batch 1
