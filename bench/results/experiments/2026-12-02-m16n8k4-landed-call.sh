#!/usr/bin/env bash
# 2026-12-02 (twenty-sixth session): the GPU check of the m16n8k4 change (carry .bundle: bash
# scripts/gpu-check.sh bundle on the working tree), then on that bundle's binary the split
# threshold at 128 eliminations (below the default 2 × SMs: the second-widest level of n = 128,
# N = 1024 splits too) and the factor's timeline at f64 n = 128, N = 1024.
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
echo "=== gpu-check"
timeout 400 bash scripts/gpu-check.sh run 2>&1 | tail -4
use_gpu_check_bundle
echo "=== split threshold"
env_sweep BTCHOL_SPLIT_ELIMINATE_MIN_CTAS thr "128 default" 2 100 --dtype f64 --n 96,100,128 --N 1024 --repeats 10
echo "=== timeline"
BTCHOL=$B NAME=timeline-n128-N1024 timeout 90 bash scripts/gpu-profile.sh --timeline --backend cuda --algorithm nd \
    --dtype f64 --n 128 --N 1024 | head -40
rm -f "$out"/*.ncu-rep "$out"/*-ncu.log
