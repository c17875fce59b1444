#!/usr/bin/env bash
# 2026-12-02: the whole GPU check of the bundle (scripts/gpu-check.sh run), then where the fused
# levels of blocks 33..64 should start (BTCHOL_FUSED_MIN_CTAS: split below K eliminations × batch;
# default the SMs, 132) and a timeline of f64 n = 64, N = 4096 with the bundle's kernels.
set -uo pipefail
cd "$(dirname "$0")/../../.."
bash scripts/gpu-check.sh run 2>&1 | tail -15
source bench/results/experiments/device-env.sh
use_gpu_check_bundle
env_sweep BTCHOL_FUSED_MIN_CTAS fused-min "default 64 32" 2 200 --dtype f64,f32 --n 40,64 --N 256,1024,4096 --repeats 20
NAME=n64-N4096 BTCHOL=.bundle/btchol bash scripts/gpu-profile.sh --timeline --backend cuda --algorithm nd --dtype f64 \
    --n 64 --N 4096 > "$out/timeline.log" 2>&1; head -34 "$out/timeline.log"
