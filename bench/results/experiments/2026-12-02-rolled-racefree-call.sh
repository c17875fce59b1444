#!/usr/bin/env bash
# Prepared 2026-12-02 (twenty-seventh session); run in the twenty-eighth as side b of 2026-12-03-rolled-smem-call.sh (landed, ../ab/README.md): the rolled panel solves with the
# rank-4 update skipped after a panel's last sub-panel (where its pair loads ran past T into the
# next panel's T: the 6 racecheck hazards of 2026-12-02-rolled-only-call.sh).
# Bundle: BUNDLE_KERNELS=0 bash scripts/gpu-ab.sh bundle-kernels HEAD \
#   bench/results/experiments/2026-12-02-rolled-solve-racefree.patch   (carry .bundle-ab)
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
warm_sides a,b f64:64,f64:100,f64:128
OUT=/tmp/ab1 AB_ROUNDS=2 timeout 200 bash scripts/gpu-ab.sh run --backend cuda --algorithm nd --dtype f64 \
    --n 64,100,128 --N 64,256,1024,4096 --rhs device --repeats 10 | tail -14
cp /tmp/ab1/ab.csv "$out/ab-rolled-racefree.csv"
corr_sides 100 a,b --dtype f64 --n 64,100,120,128 --N 1,2,3,64,257
same_bits a b
rm -f "$out"/corr-*.csv
sanitize b racecheck --dtype f64 --n 128 --N 5 --batch 1
sanitize b racecheck --dtype f64 --n 64,100 --N 9 --batch 2
sanitize b memcheck --dtype f64 --n 100,128 --N 3,17 --batch 1
sanitize b synccheck --dtype f64 --n 100 --N 5 --batch 1
