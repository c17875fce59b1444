#!/usr/bin/env bash
# 2026-12-03 (twenty-eighth session): a = HEAD's kernels (78415b3), b = the cluster's coupling CTAs
# redistributing their tensor-core accumulators through shared memory too, each warp w through its
# CTA's T_w, unused during the panel's update (2026-12-03-coupling-redistribute.patch; cluster
# kernel at f64 LD 128: ~850 instructions fewer, registers 255 → 233, no stack).
# Bundle (on 78415b3): BUNDLE_KERNELS=0 bash scripts/gpu-ab.sh bundle-kernels . \
#   bench/results/experiments/2026-12-03-coupling-redistribute.patch   (carry .bundle-ab)
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
warm_sides a,b f64:64,f64:96,f64:104,f64:128
OUT=/tmp/ab1 AB_ROUNDS=2 timeout 200 bash scripts/gpu-ab.sh run --backend cuda --algorithm nd --dtype f64 \
    --n 64,96,100,128 --N 64,256,1024,4096 --rhs device --repeats 10 | tail -20
cp /tmp/ab1/ab.csv "$out/ab-coupling-redistribute.csv"
corr_sides 100 a,b --dtype f64 --n 64,96,100,120,128 --N 1,2,3,64,257
same_bits a b
rm -f "$out"/corr-*.csv
sanitize b racecheck --dtype f64 --n 128 --N 5 --batch 1
mv "$out/san-b-racecheck.log" "$out/san-b-racecheck-128.log"
sanitize b racecheck --dtype f64 --n 64,100 --N 9 --batch 2
sanitize b memcheck --dtype f64 --n 64,100,128 --N 3,17 --batch 1
sanitize b synccheck --dtype f64 --n 100 --N 5 --batch 1
