#!/usr/bin/env bash
# 2026-12-02 (twenty-sixth session): every DMMA product of the block kernels (panel updates, the
# split gemm's 32 × 32 and 64 × 64 tiles, the fused kernels' staged gemm) on mma m16n8k4 in
# place of pairs of m8n8k4 (twice the FP64 tensor-core rate on sm_90: dmma_shapes.cu, 66 against
# 33 TFLOP/s, H200). A/B of the kernels (a: HEAD, b: the working tree's; carry .bundle-ab and
# .bundle: bash scripts/gpu-ab.sh bundle-kernels HEAD ., side a's cache from the gpu-check
# bundle), then the whole GPU check on side b's kernels (BTCHOL_KERNEL_DIR) when the A/B ran.
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
OUT=/tmp/ab1 AB_ROUNDS=2 timeout 330 bash scripts/gpu-ab.sh run --backend cuda --algorithm nd --dtype f64 --n 32,64,128 \
    --N 64,256,1024,4096 --rhs device --repeats 10 | tail -20
cp /tmp/ab1/ab.csv "$out/ab.csv"
OUT=/tmp/ab2 AB_ROUNDS=1 timeout 90 bash scripts/gpu-ab.sh run --backend cuda --algorithm nd --dtype f64 --n 32 --N 128 \
    --batch 256 --rhs device --repeats 10 | tail -4
cp /tmp/ab2/ab.csv "$out/ab-batch.csv"
[ "${CHECK:-1}" = 1 ] || exit 0
cp .bundle-ab/kcache-b.tgz .bundle/kcache.tgz
BTCHOL_KERNEL_DIR=$PWD/.bundle-ab/kernels-b timeout 420 bash scripts/gpu-check.sh run | tail -25
