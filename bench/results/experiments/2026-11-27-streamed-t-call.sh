#!/usr/bin/env bash
# One device call (ninth session): the D CTA's look-ahead with T streamed by sub-panels
# (kernels/block_ops.cuh lookahead_solve_panel: the warps below solve their rows of panel P as
# warp P's sweep publishes each sub-panel of 4 columns, and warp P + 1 accumulates its own
# block's rank-32 update from the solved rows in registers). Side a: main's kernels, side b: the
# working tree's. The patch claims bit-identical factors, so the check compares the solutions'
# SHA-256 shape by shape, with the cluster elimination at every split level.
# Here (no GPU): bash scripts/gpu-ab.sh bundle-kernels HEAD .   (plus .bundle-ab/gpu_solve: the
# gpu_solve test binary, cargo test --release --test gpu_solve --no-run, stripped)
# Device: run(command="bash bench/results/experiments/2026-11-27-streamed-t-call.sh [recheck]", carry=[".bundle-ab"])
# (recheck: the sanitizers on both sides, then fewer shapes; after the first call's racecheck
# findings on side b.)
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
export BTCHOL_ELIMINATE_CLUSTER=all
san() { sanitize "$1" "$2" --dtype f64 --n 100,128 --N 7 --batch 2 --nrhs 2; }
if [ "${1:-}" = recheck ]; then
    san b racecheck; san b synccheck; san a racecheck
    corr_sides 120 a,b --dtype f64 --n 80,96,127,128 --N 1,3,17,64 --batch 1,3
    same_bits a b
    unset BTCHOL_ELIMINATE_CLUSTER
    AB_SIDES=a,b AB_ROUNDS=3 OUT=$out bash scripts/gpu-ab.sh run --backend cuda --algorithm nd --dtype f64 --rhs device \
        --n 80,100,128 --N 3,64 --repeats 20 --warmup 5 | tail -7
    exit 0
fi
corr_sides 200 a,b --dtype f64 --n 73,80,96,100,104,127,128 --N 1,2,3,17,64 --batch 1,3 --nrhs 1,2
same_bits a b
BTCHOL_KERNEL_DIR=.bundle-ab/kernels-b BTCHOL_CACHE_DIR=/tmp/btchol-ab-b BTCHOL_REQUIRE_GPU=1 timeout 150 .bundle-ab/gpu_solve \
    --test-threads 4 gpu_factors_subnormal_pivots gpu_reports gpu_rejects_non_finite 2>&1 | grep -E "test result|FAILED|panicked" | head
san b racecheck; san b synccheck
unset BTCHOL_ELIMINATE_CLUSTER
AB_SIDES=a,b AB_ROUNDS=2 OUT=$out bash scripts/gpu-ab.sh run --backend cuda --algorithm nd --dtype f64 --rhs device \
    --n 80,96,100,128 --N 3,64,1024 --repeats 20 --warmup 5 | tail -14
