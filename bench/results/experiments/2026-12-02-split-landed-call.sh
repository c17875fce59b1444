#!/usr/bin/env bash
# 2026-12-02 (twenty-fifth session): the GPU check of fe14a92 (the split elimination landed, S
# staged by plain loads, no strips; carry .bundle), then on that bundle's binary the split
# against the one-CTA elimination (BTCHOL_SPLIT_ELIMINATE_MIN_CTAS=10⁹) and f32 (never split)
# rows as a control.
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
echo "=== gpu-check"
timeout 420 bash scripts/gpu-check.sh run 2>&1 | tail -4
use_gpu_check_bundle
echo "=== split vs one-CTA elimination (f64), f32 control"
env_sweep BTCHOL_SPLIT_ELIMINATE_MIN_CTAS split "1000000000 default" 2 150 --dtype f64,f32 --n 80,100,128 --N 256,1024,4096 --repeats 10
