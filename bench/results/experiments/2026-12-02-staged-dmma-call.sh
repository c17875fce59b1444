#!/usr/bin/env bash
# 2026-12-02: the fused factor kernels' products (the elimination's fill, the level's updates) on
# the FP64 tensor cores from couplings staged with column stride SLD, and the tiled conversion of
# transposed couplings. Sides (scripts/gpu-ab.sh bundle-kernels HEAD <dmma only> .): a = before,
# b = the products on the tensor cores, c = b + the tiled conversion. Then a timeline (every
# kernel's duration) of the upload + factor on sides a and c.
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
export AB_ROUNDS=2
echo "=== A/B f64"
bash scripts/gpu-ab.sh run --backend cuda --algorithm nd --dtype f64 --n 40,48,64 --N 3,64,1024,4096 --rhs device --repeats 20
cp "$out/ab.csv" "$out/ab-f64.csv"
echo "=== A/B f64 n = 64, N = 16384; f32 n = 48, 64"
bash scripts/gpu-ab.sh run --backend cuda --algorithm nd --dtype f64 --n 64 --N 16384 --rhs device --repeats 10
cp "$out/ab.csv" "$out/ab-f64-16384.csv"
bash scripts/gpu-ab.sh run --backend cuda --algorithm nd --dtype f32 --n 48,64 --N 64,1024,16384 --rhs device --repeats 10
cp "$out/ab.csv" "$out/ab-f32.csv"
for side in a c; do
    echo "=== timeline side $side"
    BTCHOL=.bundle-ab/btchol BTCHOL_KERNEL_DIR=.bundle-ab/kernels-$side NAME=$side-n64-N4096 \
        bash scripts/gpu-profile.sh --timeline --backend cuda --algorithm nd --dtype f64 --n 64 --N 4096 | head -34
done
