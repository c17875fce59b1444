#!/usr/bin/env bash
# 2026-12-02 (twenty-seventh session), sides of bash scripts/gpu-ab.sh bundle-kernels HEAD
# /tmp/side-b2 . (carry .bundle-ab): a HEAD's kernels, b the blocked sweep's pivot chain without a
# shuffle, c b with the rank-SWEEP_SUB update after a sub-panel split (the next sub-panel's
# columns at once, the others during the next sub-panel's sweep).
#  1. the dependent latencies of the sweep's operations (bench/micro/op_latency.cu);
#  2. A/B b against c, and their bits;
#  3. where the narrow levels' cluster elimination spends its time (f64 n = 128, N = 64, launch 5
#     of the warm-up factor), side b: ncu's per-instruction warp samples;
#  4. the cluster elimination at levels of more eliminations than the default rule's (which fit
#     the SMs at once), side b.
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
for side in b c; do
    ( BTCHOL_KERNEL_DIR=.bundle-ab/kernels-$side BTCHOL_CACHE_DIR=/tmp/btchol-ab-$side timeout 200 $B kernels --warm \
        --only f64:64,f64:72,f64:100,f64:128 | tail -1 ) &
done
nvcc -arch=sm_90 -O3 -std=c++17 -o /tmp/op_latency bench/micro/op_latency.cu && /tmp/op_latency | tee "$out/op-latency.txt"
wait
echo "=== A/B b, c"
OUT=/tmp/ab1 AB_SIDES=b,c AB_ROUNDS=2 timeout 240 bash scripts/gpu-ab.sh run --backend cuda --algorithm nd --dtype f64 \
    --n 64,72,100,128 --N 64,256,1024,4096 --rhs device --repeats 10 | tail -17
cp /tmp/ab1/ab.csv "$out/ab-split-update.csv"
corr_sides 120 b,c --dtype f64 --n 64,72,100,128 --N 1,2,3,64,257,1024
same_bits b c
echo "=== profile (b)"
export BTCHOL=.bundle-ab/btchol BTCHOL_KERNEL_DIR=$PWD/.bundle-ab/kernels-b
OUT=$out SKIP=4 NAME=cluster-n128-N64 timeout 200 bash scripts/gpu-profile.sh btchol_factor_eliminate_cluster \
    --backend cuda --algorithm nd --dtype f64 --n 128 --N 64 > "$out/cluster-n128-N64-details.txt" 2>&1
tail -2 "$out/cluster-n128-N64-details.txt"
rm -f "$out"/*.ncu-rep "$out"/corr-*.csv
echo "=== the cluster elimination at levels wider than the SMs (BTCHOL_ELIMINATE_CLUSTER=K: levels of <= K CTAs)"
BTCHOL_CACHE_DIR=/tmp/btchol-ab-b env_sweep BTCHOL_ELIMINATE_CLUSTER cluster-k "default 192 384 768" 2 100 \
    --dtype f64 --n 100,128 --N 256,1024,4096 --repeats 10
gzip "$out"/*-sass.csv; ls -la "$out"
