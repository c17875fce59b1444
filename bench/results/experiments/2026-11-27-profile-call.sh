#!/usr/bin/env bash
# One device call (eighth session's plan for the next, not yet run): where the time of a level goes.
#   1. scripts/cluster-trace.py on f64 n = 128 and n = 96, N = 64 (the cluster elimination is ~80 %
#      of the n = 128 factor, ~50 µs per launch, against ~15–20 µs estimated for its four panels);
#   2. Nsight Compute timelines (warm caches) of f64 n = 64 and n = 32, N = 64: which kernels a
#      level of those costs (n = 64: 29 µs per level, the elimination's register sweep estimated at
#      ~9 µs).
# Here (no GPU), from a clean tree: the bundle of 2026-11-27-pivot-chain-check.sh's header
# (a: main's kernels, b: cluster-trace instrumented, c: the pivot-chain patch), or only
#   python3 scripts/cluster-trace.py instrument /tmp/ct
#   bash scripts/gpu-ab.sh bundle-kernels . /tmp/ct
# Device:
#   run(command="bash bench/results/experiments/2026-11-27-profile-call.sh", carry=[".bundle-ab"])
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
for n in 128 96; do
    BTCHOL_KERNEL_DIR=.bundle-ab/kernels-b BTCHOL_CACHE_DIR=/tmp/btchol-ab-b timeout 240 "$B" bench --backend cuda \
        --algorithm nd --dtype f64 --n $n --N 64 --rhs device --repeats 50 --warmup 5 > "$out/trace-n$n.txt" 2>&1
    echo "== cluster trace f64 n = $n, N = 64 (rc $?)"
    python3 scripts/cluster-trace.py report "$out/trace-n$n.txt" | head -60
done
for n in 64 32; do
    echo "== timeline f64 n = $n, N = 64"
    NAME=timeline-n$n BTCHOL=$B BTCHOL_KERNEL_DIR=.bundle-ab/kernels-a timeout 200 bash scripts/gpu-profile.sh --timeline \
        --backend cuda --algorithm nd --dtype f64 --n $n --N 64 2>&1 | tail -40
done
