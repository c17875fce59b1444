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
            --rhs device --n 64,96,128 --N 64,256,1024 --repeats 20 --warmup 5 --csv "$out/threshold-$mode-$round.csv" > /dev/null 2>&1
        echo -n "$mode/$round "
    done
done
echo
mode_table threshold "$modes"
