#!/usr/bin/env bash
# One device call (ninth session): warp 0 of the cluster elimination's D CTA forwards the other
# warps' ready signals to the coupling CTAs (2026-11-27-signal-forwarder.patch, against 529e2b7),
# taking lane 0's remote release (a MEMBAR.ALL.GPU) off each warp's solve → sweep chain.
# Side a: main's kernels, side b: the patch. Here (no GPU): apply the patch, cp kernels/* /tmp/fw/,
# git checkout kernels, bash scripts/gpu-ab.sh bundle-kernels . /tmp/fw, and the stripped gpu_solve
# test binary as .bundle-ab/gpu_solve.
# Device: run(command="bash bench/results/experiments/2026-11-27-signal-forwarder-call.sh", carry=[".bundle-ab"])
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
export BTCHOL_ELIMINATE_CLUSTER=all
corr_sides 120 a,b --dtype f64 --n 73,100,128 --N 1,2,3,17,64 --batch 1,3
same_bits a b
BTCHOL_KERNEL_DIR=.bundle-ab/kernels-b BTCHOL_CACHE_DIR=/tmp/btchol-ab-b BTCHOL_REQUIRE_GPU=1 timeout 150 .bundle-ab/gpu_solve \
    --exact gpu_reports_failing_column_like_the_cpu_executor gpu_reports_not_positive_definite_per_item 2>&1 \
    | grep -E "test result|FAILED|panicked" | head -5
unset BTCHOL_ELIMINATE_CLUSTER
AB_SIDES=a,b AB_ROUNDS=3 OUT=$out bash scripts/gpu-ab.sh run --backend cuda --algorithm nd --dtype f64 --rhs device \
    --n 96,128 --N 3,64 --repeats 20 --warmup 5 | tail -5
