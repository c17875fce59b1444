#!/usr/bin/env bash
# 2026-12-02 (twenty-sixth session): is mma.sync m8n8k4 (the only FP64 shape sm_80 has, and the
# one every DMMA kernel here uses) the FP64 tensor cores' full rate on sm_90, or do the shapes
# sm_90 adds (m16n8k4 / k8 / k16) go faster? bench/micro/dmma_shapes.cu; then Nsight Compute of
# the widest level's btchol_factor_gemm_wide (f64 n = 128, N = 1024; carry .bundle): how busy its
# tensor pipe is.
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
nvcc -arch=sm_90 -O3 -std=c++17 -o /tmp/dmma_shapes bench/micro/dmma_shapes.cu && /tmp/dmma_shapes | tee "$out/dmma-shapes.txt"
cuobjdump -sass /tmp/dmma_shapes | grep -oE "DMMA[.A-Z0-9x]*" | sort | uniq -c
k=btchol_factor_gemm_wide
SKIP=0 COUNT=1 timeout 240 bash scripts/gpu-profile.sh $k --backend cuda --algorithm nd --dtype f64 --n 128 --N 1024 \
    > "$out/$k-details.txt" 2>&1
grep -E "Duration|Memory Throughput|DRAM Throughput|Compute \(SM\) Throughput|Registers Per|Achieved Occupancy|Issued Ipc|Warp Cycles Per Issued|L2 Hit|Executed Ipc A|Grid Size|Pipe|pipe" "$out/$k-details.txt" | head -30
grep -iE "stall|est. speedup|utiliz" "$out/$k-details.txt" | head -14
rm -f "$out"/*.ncu-rep
