#!/usr/bin/env bash
# 2026-12-02 (twenty-fifth session): the tensor-core panel update's A fragments (the rows'
# finished values, read back from global memory; ncu of btchol_factor_trsm_split put ~23 % of its
# samples on the DMMAs that wait for them) prefetched into L1 DMMA_A_PREFETCH columns ahead.
# Sides (scripts/gpu-ab.sh bundle-kernels fe14a92 . /tmp/ab-pf16, BUNDLE_KERNELS=0; carry
# .bundle-ab): a = fe14a92 (no prefetch), b = 8 columns ahead, c = 16.
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
echo "=== sanitizer, side b"
sanitize b memcheck --dtype f64 --n 100 --N 97
echo "=== A/B"
AB_ROUNDS=2 timeout 420 bash scripts/gpu-ab.sh run --backend cuda --algorithm nd --dtype f64 --n 48,64,100,128 --N 64,1024,4096 --rhs device --repeats 10
