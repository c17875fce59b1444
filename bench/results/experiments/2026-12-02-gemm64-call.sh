#!/usr/bin/env bash
# 2026-12-02 (twenty-third session): the split gemm's 64 × 64 output tiles (f64, FP64 tensor
# cores, cp.async stages) against the 32 × 32 ones (BTCHOL_GEMM_TILE=32), one binary (the
# gpu-check bundle, carry .bundle): the GPU tests of the split levels and the sanitizers over
# them first, then the A/B. (BTCHOL_GEMM_TILE was that commit's switch; since e81a653 the 32 × 32
# tiles everywhere are BTCHOL_GEMM_WIDE_MIN_CTAS=1000000000, as in 2026-12-02-gemm-wide-call.sh.)
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
GPU_CHECK_ONLY='test-gpu_solve$|test-gpu_features$|sanitizer-(memcheck|racecheck)-(large|medium)' bash scripts/gpu-check.sh run 2>&1 | tail -40
use_gpu_check_bundle
echo "=== A/B: gemm tile 64 (default) against 32"
env_sweep BTCHOL_GEMM_TILE gemm "default 32" 2 240 --dtype f64 --n 40,64,96,128 --N 3,64,1024,4096 --repeats 15
