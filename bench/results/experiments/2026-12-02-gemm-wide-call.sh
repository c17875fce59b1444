#!/usr/bin/env bash
# 2026-12-02 (twenty-third session): which split levels take the 64 × 64 gemm tiles
# (BTCHOL_GEMM_WIDE_MIN_CTAS: default 4 × SMs, 0 = every split level, 10⁹ = none, i.e. the
# 32 × 32 tiles as before), then 2 against 3 CTAs per SM for the wide kernel
# (scripts/gpu-ab.sh bundle-kernels . /tmp/ab3: b = __launch_bounds__(256, 3)). Carry .bundle-ab.
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
export BTCHOL_KERNEL_DIR=.bundle-ab/kernels-a BTCHOL_CACHE_DIR=/tmp/btchol-ab-a
echo "=== which levels take the wide tiles"
env_sweep BTCHOL_GEMM_WIDE_MIN_CTAS wide "default 0 1000000000" 2 300 --dtype f64 --n 72,128 --N 64,128,256,1024,4096 --repeats 15
unset BTCHOL_KERNEL_DIR BTCHOL_CACHE_DIR
echo "=== 2 (a) against 3 (b) CTAs per SM"
AB_ROUNDS=2 bash scripts/gpu-ab.sh run --backend cuda --algorithm nd --dtype f64 --n 96,128 --N 256,1024,4096 --rhs device --repeats 15
