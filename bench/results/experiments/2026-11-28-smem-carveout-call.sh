#!/usr/bin/env bash
# One device call (written in the tenth session, not yet run): does the L1/shared-memory split
# matter? The driver sizes each kernel's shared memory for its highest occupancy and leaves the
# rest of the SM's 256 KB to L1. At f32 ld 80 the blocked elimination went from 96 to 80
# registers at d3930e0 (2 CTAs an SM instead of 1, so ~180 KB of shared memory instead of ~90 and
# about half the L1), which is when f32 n = 72 and 80 factored ~17 % slower (experiments README,
# fifth to seventh sessions: same instruction mix, +2 µs per elimination). Those eliminations
# read their rows' finished columns back from global memory, and a single system's levels have
# too few CTAs to use the occupancy. BTCHOL_SMEM_CARVEOUT=P sets every kernel's preference
# (src/cuda/engine.rs smem_carveout); this runs default / 0 (most L1) / 50 / 100, 3 interleaved
# rounds, on one binary. If 0 or 50 wins, the rule goes per kernel and level width.
# Here (no GPU), from a clean tree: bash scripts/gpu-ab.sh bundle-kernels . .
# Device: run(command="bash bench/results/experiments/2026-11-28-smem-carveout-call.sh", carry=[".bundle-ab"])
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
modes="default 0 50 100"
for round in 1 2 3; do
    for mode in $modes; do
        for dt in f32 f64; do
            ns=$([ $dt = f32 ] && echo 72,80,128 || echo 32,64,128)
            BTCHOL_SMEM_CARVEOUT=$([ "$mode" = default ] || echo "$mode") BTCHOL_KERNEL_DIR=.bundle-ab/kernels-a \
                BTCHOL_CACHE_DIR=/tmp/btchol-ab-a timeout 120 "$B" bench --backend cuda --algorithm nd --dtype $dt \
                --rhs device --n $ns --N 64,1024 --repeats 20 --warmup 5 --csv "$out/carveout-$mode-$dt-$round.csv" > /dev/null 2>&1
        done
        echo -n "$mode/$round "
    done
done
echo
mode_table carveout "$modes"
