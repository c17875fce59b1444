#!/usr/bin/env bash
# 2026-12-02 (twenty-sixth session): the split elimination's trsm with its panel's T, S and the
# tensor-core update's A operand (the block's finished columns) staged in shared memory by
# cp.async a chunk ahead (trsm_split_panels), against the kernels of the m16n8k4 change alone.
# a: /tmp/m16kernels (its cache from the previous call), b: the working tree's kernels, one
# binary with the new trsm's shared-memory size (bash scripts/gpu-ab.sh bundle-kernels
# /tmp/m16kernels . with BUNDLE_KERNELS=0; carry .bundle-ab). Side b's variants compile here,
# side by side, first; then memcheck and racecheck of the split trsm (forced at every level).
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
mkdir -p /tmp/btchol-ab-b
for n in 73 80 100 128; do
    BTCHOL_KERNEL_DIR=.bundle-ab/kernels-b BTCHOL_CACHE_DIR=/tmp/btchol-ab-b timeout 200 "$B" bench --backend cuda \
        --algorithm nd --dtype f64 --n $n --N 2 --repeats 1 --warmup 0 > /dev/null 2>&1 &
done
wait
echo "side b compiled: $(ls /tmp/btchol-ab-b | wc -l) cache files"
OUT=/tmp/ab1 AB_ROUNDS=2 timeout 200 bash scripts/gpu-ab.sh run --backend cuda --algorithm nd --dtype f64 \
    --n 80,100,128 --N 256,1024,4096 --rhs device --repeats 10 | tail -12
cp /tmp/ab1/ab.csv "$out/ab.csv"
export BTCHOL_SPLIT_ELIMINATE_MIN_CTAS=1
OUT=/tmp/ab2 AB_ROUNDS=1 timeout 100 bash scripts/gpu-ab.sh run --backend cuda --algorithm nd --dtype f64 \
    --n 73,100,128 --N 601 --batch 2 --rhs device --repeats 3 | tail -5
cp /tmp/ab2/ab.csv "$out/ab-forced.csv"
sanitize b memcheck --dtype f64 --n 100 --N 61 --batch 2
sanitize b racecheck --dtype f64 --n 128 --N 33
sanitize b synccheck --dtype f64 --n 73 --N 33
