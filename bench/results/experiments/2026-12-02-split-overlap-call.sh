#!/usr/bin/env bash
# 2026-12-02 (twenty-fourth session), second call: the split elimination with the trsm CTAs
# started per elimination as its potrf ends (BTCHOL_SPLIT_OVERLAP, default on; 0: after the whole
# potrf launch), S in dynamic shared memory (the potrf launches without it), then which levels
# take it, the potrf's launch bound (sides: scripts/gpu-ab.sh bundle-kernels . /tmp/ab-b,
# BUNDLE_KERNELS=0: a = 3 CTAs per SM, b = 4), and a timeline of f64 n = 128, N = 1024. Carry .bundle-ab.
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
export BTCHOL_KERNEL_DIR=.bundle-ab/kernels-a BTCHOL_CACHE_DIR=/tmp/btchol-ab-a
echo "=== sanitizer, split at every non-cluster split level, overlapped"
BTCHOL_SPLIT_ELIMINATE_MIN_CTAS=1 sanitize a memcheck --dtype f64 --n 100 --N 300
BTCHOL_SPLIT_ELIMINATE_MIN_CTAS=1 sanitize a racecheck --dtype f64 --n 128 --N 100
BTCHOL_SPLIT_ELIMINATE_MIN_CTAS=1 sanitize a synccheck --dtype f64 --n 128 --N 100
echo "=== overlap (side a)"
env_sweep BTCHOL_SPLIT_OVERLAP overlap "0 default" 2 200 --dtype f64 --n 100,128 --N 64,256,1024,4096 --repeats 10
echo "=== which levels (side a, overlapped)"
env_sweep BTCHOL_SPLIT_ELIMINATE_MIN_CTAS levels "1000000000 default 132 1" 2 200 --dtype f64 --n 96,128 --N 256,1024,4096 --repeats 10
echo "=== timeline f64 n = 128, N = 1024 (side a)"
BTCHOL=.bundle-ab/btchol NAME=split-n128-N1024 bash scripts/gpu-profile.sh --timeline --backend cuda --algorithm nd --dtype f64 --n 128 --N 1024 | head -40
unset BTCHOL_KERNEL_DIR BTCHOL_CACHE_DIR
echo "=== potrf launch bound a (3) b (4)"
AB_ROUNDS=2 bash scripts/gpu-ab.sh run --backend cuda --algorithm nd --dtype f64 --n 128 --N 1024,4096 --rhs device --repeats 10
