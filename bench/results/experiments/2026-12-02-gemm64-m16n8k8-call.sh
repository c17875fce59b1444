#!/usr/bin/env bash
# 2026-12-02 (twenty-sixth session): the 64 × 64 split gemm tiles (btchol_factor_gemm_wide) on
# mma m16n8k8 (two k-slices per instruction, 2026-12-02-gemm64-m16n8k8.patch) against m16n8k4
# (f6666d5). a: the working tree's kernels, b: /tmp/k8 (BUNDLE_KERNELS=0 bash scripts/gpu-ab.sh
# bundle-kernels . /tmp/k8; carry .bundle-ab); both sides' variants compile here first, side by side.
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
for side in a b; do
    mkdir -p /tmp/btchol-ab-$side
    for n in 96 128; do
        BTCHOL_KERNEL_DIR=.bundle-ab/kernels-$side BTCHOL_CACHE_DIR=/tmp/btchol-ab-$side timeout 200 "$B" bench \
            --backend cuda --algorithm nd --dtype f64 --n $n --N 2 --repeats 1 --warmup 0 > /dev/null 2>&1 &
    done
done
wait
OUT=/tmp/ab1 AB_ROUNDS=2 timeout 200 bash scripts/gpu-ab.sh run --backend cuda --algorithm nd --dtype f64 \
    --n 96,128 --N 256,1024,4096 --rhs device --repeats 10 | tail -8
cp /tmp/ab1/ab.csv "$out/ab.csv"
