#!/usr/bin/env bash
# 2026-12-02 (twenty-sixth session): the GPU check of the m16n8k4 change (carry .bundle:
# BUNDLE_KERNELS=0 bash scripts/gpu-check.sh bundle; its kernels-warm step compiles them there), then on that bundle's binary the split
# threshold at 128 eliminations (below the default 2 × SMs: the second-widest level of n = 128,
# N = 1024 splits too).
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
echo "=== gpu-check"
timeout 440 bash scripts/gpu-check.sh run 2>&1 | tail -4
B=.bundle/btchol; export BTCHOL_CACHE_DIR=/tmp/btchol-cache  # (the kernels gpu-check warmed)
echo "=== split threshold"
env_sweep BTCHOL_SPLIT_ELIMINATE_MIN_CTAS thr "128 default" 2 100 --dtype f64 --n 96,100,128 --N 1024 --repeats 10
