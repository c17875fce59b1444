#!/usr/bin/env bash
# 2026-12-02 (twenty-fourth session), last call: the GPU check of the split elimination (bundle
# of the working tree, carry .bundle), the split test with the trsm by strips
# (BTCHOL_SPLIT_TRSM=strips), then A/B (carry .bundle-ab: scripts/gpu-ab.sh bundle-kernels
# /tmp/ab-plain . with BUNDLE_KERNELS=0): a = S staged by plain loads, b = by cp.async (the cluster
# variant's coupling CTAs and btchol_factor_trsm_split), and strips against rows on side b.
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
echo "=== gpu-check"
timeout 420 bash scripts/gpu-check.sh run 2>&1 | tail -4
echo "=== the split test, trsm by strips"
t=$(ls .bundle/tests/gpu_solve-* | head -1)
BTCHOL_REQUIRE_GPU=1 BTCHOL_SPLIT_TRSM=strips timeout 60 "$t" gpu_wide_levels_of_blocks_73 2>&1 | grep -E "test result|panicked|FAILED" | head -5
echo "=== A/B S staging: a plain, b cp.async"
AB_ROUNDS=2 timeout 100 bash scripts/gpu-ab.sh run --backend cuda --algorithm nd --dtype f64 --n 64,100,128 --N 64,1024,4096 --rhs device --repeats 10
export BTCHOL_KERNEL_DIR=.bundle-ab/kernels-b BTCHOL_CACHE_DIR=/tmp/btchol-ab-b
echo "=== strips (cp.async) vs rows, side b"
env_sweep BTCHOL_SPLIT_TRSM trsm "default strips" 2 60 --dtype f64 --n 100,128 --N 1024,4096 --repeats 10
