#!/usr/bin/env bash
# One device call (written in the twelfth session, not yet run: that session's device time ran
# out; ~1.5 min): why the partitioned solve's chunk sweeps move only ~2.6 TB/s on the H200 (the
# forward and backward sweeps are 128 + 120 µs of the 336 µs f64 n = 32, N = 16384 solve, each
# reading ~335 MB: L_b⁻¹'s lower triangle, X_b and Y_b per step, experiments/README.md
# 2026-11-28 twelfth session), and where the factor's chunk kernel (484 of 707 µs, 18 % of the
# factor's limit) waits. Full Nsight Compute sections (memory workload, occupancy, warp states,
# scheduler) of each of the three kernels. What to read: achieved occupancy against the 4
# one-warp CTAs per SM that 52 KB of shared memory each allows (jit.rs chunk_solve_smem_bytes);
# DRAM throughput; the top stall reason (long scoreboard / barrier on the stage wait would say
# the one-step-ahead staging is too shallow: try three stages of smaller blocks, or two chunks
# per CTA sharing one stage ring; MIO / LSU throttle would say the 8-byte cp.async of the padded
# (ld + 1) stage layout: try 16-byte copies into an ld + 2 layout).
# Here (no GPU): bash scripts/gpu-check.sh bundle (or any bundle with .bundle/btchol; BTCHOL=path picks
# another binary, e.g. .bundle-ab/btchol-a with carry [".bundle-ab"]).
# Device: run(command="bash bench/results/experiments/2026-11-28-chunk-sweep-profile-call.sh", carry=[".bundle"])
set -uo pipefail
cd "$(dirname "$0")/../../.."
[ -f .bundle/payload.txz ] && tar xJf .bundle/payload.txz -C .bundle
out=${OUT:-.bundle/out}; mkdir -p "$out"
for k in btchol_forward_chunks_small btchol_backward_chunks_small btchol_factor_chunks_small; do
    OUT=$out timeout ${PROFILE_TIMEOUT:-150} bash scripts/gpu-profile.sh "$k" --backend cuda --algorithm nd --dtype f64 --n 32 --N 16384 \
        > "$out/$k.txt" 2>&1
    echo "$k rc=$?: $(grep -E ' Duration|DRAM Throughput|FP64|Issue Slots Busy|Achieved Occupancy|Theoretical Occupancy' "$out/$k.txt" \
        | tr -s ' ' | tr '\n' ';')"
done
(cd "$out" && rm -f ./*-sass.csv && tar czf /tmp/results.tgz . && find . -mindepth 1 -delete && mv /tmp/results.tgz .)
