#!/usr/bin/env bash
# 2026-12-02 (twenty-seventh session): the cluster elimination's panel solves as a loop over
# sub-panels (block_ops.cuh panel_solve_rolled) instead of straight-line code, which the profile
# of 2026-12-02-cluster-profile-call.sh found instruction-fetch bound. Sides of bash
# scripts/gpu-ab.sh bundle-kernels HEAD /tmp/side-b2 . (carry .bundle-ab): a HEAD's kernels, b the
# pivot chain change, c b + the rolled solves.
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
for side in b c; do
    ( BTCHOL_KERNEL_DIR=.bundle-ab/kernels-$side BTCHOL_CACHE_DIR=/tmp/btchol-ab-$side timeout 200 $B kernels --warm \
        --only f64:64,f64:72,f64:100,f64:128 | tail -1 ) &
done
wait
echo "=== A/B b, c"
OUT=/tmp/ab1 AB_SIDES=b,c AB_ROUNDS=2 timeout 240 bash scripts/gpu-ab.sh run --backend cuda --algorithm nd --dtype f64 \
    --n 64,72,100,128 --N 64,256,1024,4096 --rhs device --repeats 10 | tail -17
cp /tmp/ab1/ab.csv "$out/ab-rolled-solve.csv"
corr_sides 120 b,c --dtype f64 --n 64,72,100,120,128 --N 1,2,3,64,257,1024
same_bits b c
rm -f "$out"/corr-*.csv
sanitize c memcheck --dtype f64 --n 100,128 --N 3,17 --batch 1
sanitize c racecheck --dtype f64 --n 128 --N 5 --batch 1
sanitize c synccheck --dtype f64 --n 100 --N 5 --batch 1
ls "$out"
