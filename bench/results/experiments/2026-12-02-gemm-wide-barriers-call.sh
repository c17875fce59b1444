#!/usr/bin/env bash
# 2026-12-02 (twenty-third session): the wide split gemm's cp.async loop, one binary, carry
# .bundle-ab (scripts/gpu-ab.sh bundle-kernels . /tmp/gw-b /tmp/gw-c): a = two barriers per
# chunk (e81a653), b = one barrier per chunk (the next chunk issued after it), c = b with four
# stages of 16 columns (the same 69.6 KB). memcheck and racecheck over the split gemm's partial
# tiles (n = 100, 200) on b and c first.
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
for side in b c; do
    for tool in memcheck racecheck; do
        sanitize $side $tool --dtype f64 --n 100,200 --N 7 --batch 2 --nrhs 2
    done
done
AB_ROUNDS=2 bash scripts/gpu-ab.sh run --backend cuda --algorithm nd --dtype f64 --n 96,128 --N 256,1024,4096 --rhs device --repeats 15
