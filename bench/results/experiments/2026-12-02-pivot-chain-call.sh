#!/usr/bin/env bash
# 2026-12-02 (twenty-seventh session): the pivot chain of the warp sweeps without a shuffle: every
# lane forms the next pivot itself (the next pivot row's own FMA, from its two values shuffled
# off the chain) and the pivot policy's selects come after the reciprocal square root.
# Sides (bash scripts/gpu-ab.sh bundle-kernels HEAD /tmp/side-b .; carry .bundle-ab):
#   a: HEAD's kernels;  b: the blocked sweep's change (block_ops.cuh, n > 32);  c: b + small.cu's
#   potrf_panel_warp (n ≤ 32).
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
only=f64:8,f64:16,f64:32,f64:64,f64:100,f64:128,f32:32
for side in a b c; do  # each side's variants compiled before any timing, the sides side by side
    ( BTCHOL_KERNEL_DIR=.bundle-ab/kernels-$side BTCHOL_CACHE_DIR=/tmp/btchol-ab-$side timeout 200 $B kernels --warm \
        --only $only | tail -1 ) &
done
wait
echo "=== correctness (same bits?)"
corr_sides 120 a,b,c --dtype f64 --n 8,16,32,64,100,128 --N 1,2,3,64,257,1024
same_bits a b; same_bits a c
echo "=== n > 32: a, b"
OUT=/tmp/ab1 AB_SIDES=a,b AB_ROUNDS=2 timeout 240 bash scripts/gpu-ab.sh run --backend cuda --algorithm nd --dtype f64 \
    --n 64,100,128 --N 64,256,1024,4096 --rhs device --repeats 10 | tail -14
cp /tmp/ab1/ab.csv "$out/ab-large.csv"
echo "=== n <= 32: a, c"
OUT=/tmp/ab2 AB_SIDES=a,c AB_ROUNDS=2 timeout 200 bash scripts/gpu-ab.sh run --backend cuda --algorithm nd --dtype f64 \
    --n 8,16,32 --N 64,256,1024,4096 --rhs device --repeats 20 | tail -14
cp /tmp/ab2/ab.csv "$out/ab-small.csv"
OUT=/tmp/ab3 AB_SIDES=a,c AB_ROUNDS=2 timeout 100 bash scripts/gpu-ab.sh run --backend cuda --algorithm nd --dtype f32 \
    --n 32 --N 64,1024,16384 --rhs device --repeats 20 | tail -5
cp /tmp/ab3/ab.csv "$out/ab-f32.csv"
OUT=/tmp/ab4 AB_SIDES=a,c AB_ROUNDS=2 timeout 100 bash scripts/gpu-ab.sh run --backend cuda --dtype f64 --n 32 --N 128 \
    --batch 256 --rhs device --repeats 10 | tail -3
OUT=/tmp/ab5 AB_SIDES=a,c AB_ROUNDS=2 timeout 100 bash scripts/gpu-ab.sh run --backend cuda --dtype f64 --n 16 --N 32 \
    --batch 1024 --rhs device --repeats 10 | tail -3
cat /tmp/ab4/ab.csv > "$out/ab-batch.csv"; tail -n +2 /tmp/ab5/ab.csv >> "$out/ab-batch.csv"
cp "$out"/corr-*.csv /tmp/ 2>/dev/null; true
