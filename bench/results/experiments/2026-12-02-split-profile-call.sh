#!/usr/bin/env bash
# 2026-12-02 (twenty-fifth session): where the split elimination's time goes on fe14a92 (carry
# .bundle): Nsight Compute of btchol_factor_trsm_split and btchol_factor_potrf_split, f64 n = 128,
# N = 1024 (the widest level: 512 eliminations), and the factor's timeline.
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
args=(--backend cuda --algorithm nd --dtype f64 --n 128 --N 1024)
for k in btchol_factor_trsm_split btchol_factor_potrf_split; do
    echo "=== $k"
    timeout 200 bash scripts/gpu-profile.sh "$k" "${args[@]}" > "$out/$k-details.txt" 2>&1
    grep -E "Duration|Memory Throughput|DRAM Throughput|Compute \(SM\) Throughput|Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit|Issued Ipc|No Eligible|Warp Cycles Per Issued|L1/TEX Hit|L2 Hit|Executed Ipc A|One or More" "$out/$k-details.txt" | head -30
    grep -iE "stall|est. speedup" "$out/$k-details.txt" | head -12
done
echo "=== timeline"
NAME=timeline-n128-N1024 timeout 150 bash scripts/gpu-profile.sh --timeline "${args[@]}" | head -30
