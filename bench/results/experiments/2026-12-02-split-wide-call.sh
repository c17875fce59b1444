#!/usr/bin/env bash
# 2026-12-02 (twenty-third session), carry .bundle-ab (scripts/gpu-ab.sh bundle-kernels . .,
# side a): (1) f64 blocks of 33..64 with every level split (BTCHOL_FUSED_MIN_CTAS=10⁹), the wide
# levels' fills and updates then in the 64 × 64 gemm tiles, against the fused levels (default);
# (2) a timeline of f64 n = 128, N = 1024 with the wide gemm (where the factor's time goes now).
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
export BTCHOL_KERNEL_DIR=.bundle-ab/kernels-a BTCHOL_CACHE_DIR=/tmp/btchol-ab-a
echo "=== split every level of ld 33..64 (wide gemm) against fused"
env_sweep BTCHOL_FUSED_MIN_CTAS split "default 1000000000" 2 300 --dtype f64 --n 48,64 --N 1024,4096,16384 --repeats 10
echo "=== timeline f64 n = 128, N = 1024"
BTCHOL=.bundle-ab/btchol NAME=n128-N1024 bash scripts/gpu-profile.sh --timeline --backend cuda --algorithm nd --dtype f64 --n 128 --N 1024 | head -40
