#!/usr/bin/env bash
# 2026-12-02 (twenty-fourth session): the split elimination at wide levels (f64, 72 < ld ≤ 128):
# btchol_factor_potrf_split (the cluster variant's D CTA alone) then btchol_factor_trsm_split (its
# coupling CTAs, the factor read from global memory). BTCHOL_SPLIT_ELIMINATE_MIN_CTAS: levels of
# at least K eliminations × batch take it (10⁹: never, the one-CTA elimination as before).
# Sides (scripts/gpu-ab.sh bundle-kernels . /tmp/ab-b /tmp/ab-c, BUNDLE_KERNELS=0): launch bounds
# (potrf, trsm min CTAs per SM) a = (3, 4), b = (2, 3), c = (3, 3). Carry .bundle-ab.
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
export BTCHOL_KERNEL_DIR=.bundle-ab/kernels-a BTCHOL_CACHE_DIR=/tmp/btchol-ab-a
echo "=== sanitizer, split at every non-cluster split level"
BTCHOL_SPLIT_ELIMINATE_MIN_CTAS=1 sanitize a memcheck --dtype f64 --n 100 --N 300
BTCHOL_SPLIT_ELIMINATE_MIN_CTAS=1 sanitize a racecheck --dtype f64 --n 128 --N 100
echo "=== which levels take the split elimination (side a)"
env_sweep BTCHOL_SPLIT_ELIMINATE_MIN_CTAS split "1000000000 default 1 132" 2 300 --dtype f64 --n 100,128 --N 256,1024,4096 --repeats 10
unset BTCHOL_KERNEL_DIR BTCHOL_CACHE_DIR
echo "=== launch bounds a (3,4) b (2,3) c (3,3), split at default levels"
AB_ROUNDS=2 bash scripts/gpu-ab.sh run --backend cuda --algorithm nd --dtype f64 --n 128 --N 1024,4096 --rhs device --repeats 10
