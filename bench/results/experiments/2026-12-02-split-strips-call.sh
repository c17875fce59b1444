#!/usr/bin/env bash
# 2026-12-02 (twenty-fourth session), third call: the split elimination's trsm by strips of 64 rows
# held in shared memory (btchol_factor_trsm_strips, default) against the cluster variant's
# coupling rows (BTCHOL_SPLIT_TRSM=rows), potrf at 4 CTAs per SM; which levels take it
# (BTCHOL_SPLIT_ELIMINATE_MIN_CTAS), with and without the per-elimination start
# (BTCHOL_SPLIT_OVERLAP=0), and a timeline. Carry .bundle-ab (BUNDLE_KERNELS=0 bundle-kernels .).
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
export BTCHOL_KERNEL_DIR=.bundle-ab/kernels-a BTCHOL_CACHE_DIR=/tmp/btchol-ab-a
echo "=== sanitizer, split at every non-cluster split level"
for n in 80 100 128; do BTCHOL_SPLIT_ELIMINATE_MIN_CTAS=1 sanitize a memcheck --dtype f64 --n $n --N 300; done
BTCHOL_SPLIT_ELIMINATE_MIN_CTAS=1 sanitize a racecheck --dtype f64 --n 100 --N 100
BTCHOL_SPLIT_ELIMINATE_MIN_CTAS=1 sanitize a synccheck --dtype f64 --n 100 --N 100
echo "=== backward errors, split at every non-cluster split level, strips vs rows"
BTCHOL_SPLIT_ELIMINATE_MIN_CTAS=1 env_sweep BTCHOL_SPLIT_TRSM corr "default rows" 1 200 --dtype f64 --n 73,80,97,100,127,128 --N 2,3,5,97,300 --nrhs 3 --repeats 1 --warmup 0
echo "=== strips vs rows"
env_sweep BTCHOL_SPLIT_TRSM trsm "rows default" 2 200 --dtype f64 --n 96,100,128 --N 1024,4096 --repeats 10
echo "=== which levels (strips)"
env_sweep BTCHOL_SPLIT_ELIMINATE_MIN_CTAS levels "1000000000 default 132 66" 2 200 --dtype f64 --n 96,128 --N 256,1024,4096 --repeats 10
echo "=== overlap (strips)"
env_sweep BTCHOL_SPLIT_OVERLAP overlap "0 default" 2 200 --dtype f64 --n 100,128 --N 1024,4096 --repeats 10
echo "=== timeline f64 n = 128, N = 1024"
BTCHOL=.bundle-ab/btchol NAME=strips-n128-N1024 bash scripts/gpu-profile.sh --timeline --backend cuda --algorithm nd --dtype f64 --n 128 --N 1024 > $out/tl.txt 2>&1; head -16 $out/tl.txt
