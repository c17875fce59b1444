#!/usr/bin/env bash
# Ran after `scripts/gpu-check.sh run tests1` in the same device call (eleventh session; results in
# bench/results/ab/…-narrow-carveout-recheck.csv and experiments/README.md), on the
# gpu-check bundle (.bundle/btchol, its kernel cache): (1) the factor-level carveout rule of
# 0e7d6cb against the driver's choice (BTCHOL_SMEM_CARVEOUT_NARROW=none), factor and solve;
# (2) the cluster elimination's threshold at f64 ld = 64. The ncu timelines of 2026-11-28 showed
# its 1-elimination levels 2–5.6 µs faster than the one-CTA sweep at N = 64 and 256, and its
# 2-elimination level 8.6 µs slower at N = 256 (31 against 22.6 µs); K = 3 (levels of one
# elimination only) against the default (K = SM count) and 0 (never). Modes: base (driver's
# carveout, default cluster), new (0e7d6cb), newK3, newK0; 3 interleaved rounds.
# Device: run(command="bash scripts/gpu-check.sh run tests1; bash bench/results/experiments/2026-11-28-rules-check-call.sh", carry=[".bundle"])
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
B=.bundle/btchol
modes="base new newK3 newK0"
for round in 1 2 3; do
    for mode in $modes; do
        case $mode in
            base) env=(BTCHOL_SMEM_CARVEOUT_NARROW=none) ;; new) env=() ;;
            newK3) env=(BTCHOL_ELIMINATE_CLUSTER=3) ;; newK0) env=(BTCHOL_ELIMINATE_CLUSTER=0) ;;
        esac
        env "${env[@]}" BTCHOL_CACHE_DIR=/tmp/btchol-cache timeout 60 "$B" bench --backend cuda --algorithm nd \
            --dtype f64 --rhs device --n 64 --N 3,17,64,256,1024 --repeats 20 --warmup 5 \
            --csv "$out/rules-$mode-f64a-$round.csv" > /dev/null 2>&1
        env "${env[@]}" BTCHOL_CACHE_DIR=/tmp/btchol-cache timeout 60 "$B" bench --backend cuda --algorithm nd \
            --dtype f64 --rhs device --n 100,128 --N 64,1024 --repeats 20 --warmup 5 \
            --csv "$out/rules-$mode-f64b-$round.csv" > /dev/null 2>&1
        [ "${mode#newK}" = "$mode" ] && env "${env[@]}" BTCHOL_CACHE_DIR=/tmp/btchol-cache timeout 60 "$B" bench \
            --backend cuda --algorithm nd --dtype f32 --rhs device --n 40,72,128 --N 64,1024 --repeats 20 --warmup 5 \
            --csv "$out/rules-$mode-f32-$round.csv" > /dev/null 2>&1
        echo -n "$mode/$round "
    done
done
echo
mode_table rules "$modes"
