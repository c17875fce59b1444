#!/usr/bin/env bash
# One device call (eleventh session, run before 0e7d6cb: since then narrow 0 on the factor levels
# is the default, so "default" here means BTCHOL_SMEM_CARVEOUT_NARROW=none, and the narrow
# setting covers factor-level launches only): (1) the carveout per launch. The carveout sweep of
# 2026-11-28 (every kernel, function attribute) found 0 (the most L1) 6 % faster for f32 n = 72
# and 80 at N = 64 and 25 % slower at N = 1024, and 50 2.8 % faster for f64 n = 64 at N = 1024.
# BTCHOL_SMEM_CARVEOUT_NARROW=P sets it per launch on launches of at most one CTA per SM
# (src/cuda/engine.rs narrow_carveout), where occupancy cannot use the shared memory; modes:
# default, n0 (narrow 0), n0w50 (narrow 0, the rest 50), w50 (every kernel 50), 3 interleaved
# rounds, one binary. (2) Why the cluster elimination at ld 64 costs at N = 256 what it gains at
# N = 64 (the threshold sweep: K = 6, the levels of 1 and 2 eliminations only, −4.5 µs at N = 64,
# +7 µs at N = 256): ncu timelines (kernels serialised, each one's duration) of both N with
# BTCHOL_ELIMINATE_CLUSTER=0 and 6.
# Here (no GPU), from a clean tree: bash scripts/gpu-ab.sh bundle-kernels . .
# Device: run(command="bash bench/results/experiments/2026-11-28-narrow-carveout-call.sh", carry=[".bundle-ab"])
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
modes="default n0 n0w50 w50"
for round in 1 2 3; do
    for mode in $modes; do
        case $mode in
            default) env=() ;; n0) env=(BTCHOL_SMEM_CARVEOUT_NARROW=0) ;;
            n0w50) env=(BTCHOL_SMEM_CARVEOUT_NARROW=0 BTCHOL_SMEM_CARVEOUT=50) ;; w50) env=(BTCHOL_SMEM_CARVEOUT=50) ;;
        esac
        for dt in f32 f64; do
            ns=$([ $dt = f32 ] && echo 64,72,80,128 || echo 32,64,96,128)
            env "${env[@]}" BTCHOL_KERNEL_DIR=.bundle-ab/kernels-a BTCHOL_CACHE_DIR=/tmp/btchol-ab-a timeout 100 "$B" bench \
                --backend cuda --algorithm nd --dtype $dt --rhs device --n $ns --N 64,256,1024 --repeats 20 --warmup 5 \
                --csv "$out/narrow-$mode-$dt-$round.csv" > /dev/null 2>&1
        done
        echo -n "$mode/$round "
    done
done
echo
mode_table narrow "$modes"
for N in 64 256; do
    for k in 0 6; do
        BTCHOL=$B BTCHOL_KERNEL_DIR=.bundle-ab/kernels-a BTCHOL_ELIMINATE_CLUSTER=$k NAME=tl-N$N-K$k timeout 90 \
            bash scripts/gpu-profile.sh --timeline --backend cuda --algorithm nd --dtype f64 --n 64 --N $N \
            > "$out/tl-N$N-K$k.txt" 2>&1
        echo "N=$N K=$k: $(sed -n 3p "$out/tl-N$N-K$k.txt")"
    done
done
(cd "$out" && rm -f ./*-timeline.csv ./*-ncu.log && tar czf /tmp/results.tgz . && find . -mindepth 1 -delete && mv /tmp/results.tgz .)
