#!/usr/bin/env bash
# Check and time 2026-11-27-pivot-rsqrt-off-chain.patch (written in the eighth session, not yet run):
# the pivot's square root straight off the shuffle, its tests beside it (rsqrt_pivot_chain,
# kernels/common.cuh), in the warp sweeps of the blocked elimination (f64, 72 < n <= 128) and of
# the n <= 32 level / cluster / chunk kernels.
#
# Here (no GPU), from a clean tree (the same bundle serves 2026-11-27-profile-call.sh: a = main,
# b = cluster-trace instrumented, c = this patch):
#   E=bench/results/experiments; rm -rf /tmp/ct /tmp/pc; mkdir -p /tmp/pc
#   python3 scripts/cluster-trace.py instrument /tmp/ct
#   git apply $E/2026-11-27-pivot-rsqrt-off-chain.patch && cp kernels/common.cuh kernels/block_ops.cuh kernels/small.cu /tmp/pc/ && git checkout kernels
#   bash scripts/gpu-ab.sh bundle-kernels . /tmp/ct /tmp/pc
#   cargo test --release --test gpu_solve --no-run; strip -o .bundle-ab/gpu_solve target/release/deps/gpu_solve-<hash>
# Device (back to back, on one warm machine):
#   run(command="bash bench/results/experiments/2026-11-27-pivot-chain-check.sh check", carry=[".bundle-ab"])
#   run(command="bash bench/results/experiments/2026-11-27-pivot-chain-check.sh time", carry=[".bundle-ab"])
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
k=.bundle-ab/kernels-c c=/tmp/btchol-ab-c
case ${1:-} in
check)
    # Bits: the patch claims the same factor wherever the pivots are valid, so the solutions'
    # SHA-256 (column solution_sha256) must match side a's, shape by shape. (The bench's inputs
    # are seeded; if a row differs, run side a twice to see whether that shape is bitwise
    # reproducible at all, column `deterministic`.)
    corr_sides 400 a,c --dtype f64,f32 --n 1,5,8,13,16,29,32,65,72,97,128 --N 1,2,3,17,64,1031 --batch 1,3 --nrhs 1,3
    same_bits a c
    BTCHOL_KERNEL_DIR=$k BTCHOL_CACHE_DIR=$c BTCHOL_REQUIRE_GPU=1 timeout 300 .bundle-ab/gpu_solve --test-threads 4 \
        gpu_factors_subnormal_pivots gpu_reports gpu_rejects_non_finite gpu_handles_awkward 2>&1 | grep "test result"
    for tool in racecheck synccheck; do sanitize c $tool --dtype f64 --n 16,32,100 --N 7 --batch 2 --nrhs 2; done ;;
time)
    AB_SIDES=a,c AB_ROUNDS=3 OUT=$out bash scripts/gpu-ab.sh run --backend cuda --algorithm nd --dtype f64 --rhs device \
        --n 16,32,72,100,128 --N 3,64,1024 --repeats 20 --warmup 5
    AB_SIDES=a,c AB_ROUNDS=2 OUT=$out/seq bash scripts/gpu-ab.sh run --backend cuda --algorithm seq --dtype f64 --rhs device \
        --n 16 --N 32 --batch 1024 --repeats 10 --warmup 3 | tail -3 ;;
*) echo "usage: $0 check|time"; exit 2 ;;
esac
