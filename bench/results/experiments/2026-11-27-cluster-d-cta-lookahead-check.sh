#!/usr/bin/env bash
# One device call that checks and times 2026-11-27-cluster-d-cta-lookahead.patch (the cluster
# elimination's D CTA with look-ahead; not measured when it was written, no GPU that session).
#
# Here (no GPU):
#   git apply bench/results/experiments/2026-11-27-cluster-d-cta-lookahead.patch
#   mkdir -p /tmp/la && cp kernels/* /tmp/la/ && git checkout kernels
#   bash scripts/gpu-ab.sh bundle-kernels . /tmp/la          # A = main's kernels, B = the patch's
#   cargo test --release --test gpu_solve --no-run            # then copy the printed binary:
#   strip -o .bundle-ab/gpu_solve target/release/deps/gpu_solve-<hash>
# Device:
#   run(command="bash bench/results/experiments/2026-11-27-cluster-d-cta-lookahead-check.sh", carry=[".bundle-ab"])
#
# Prints: correctness of B (max backward error over awkward shapes, cluster on, off and at every
# split level), the failing-column tests on B, racecheck and synccheck on B, then the A/B table
# (factor and solve µs, better of 2 rounds) for f64 n = 100, 120, 128 at N = 64, 1024, 4096.
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
la=.bundle-ab/kernels-b
echo "== correctness (B)"
for mode in default 0 all; do
    BTCHOL_KERNEL_DIR=$la BTCHOL_CACHE_DIR=/tmp/la-kc BTCHOL_ELIMINATE_CLUSTER=$mode timeout 300 "$B" bench \
        --backend cuda --algorithm nd --dtype f64 --rhs device --n 97,100,104,113,120,127,128 --N 1,2,3,17,64 \
        --batch 1,3 --nrhs 1,3 --repeats 1 --warmup 0 --csv "$out/corr-$mode.csv" > "$out/corr-$mode.log" 2>&1
    echo "cluster=$mode rc=$? $(awk -F, 'NR > 1 { e = $38 + 0; if (e > m) m = e; c++ } END { print c, "rows, max backward error", m }' "$out/corr-$mode.csv")"
done
echo "== failing columns (B)"
for mode in default all; do
    BTCHOL_KERNEL_DIR=$la BTCHOL_CACHE_DIR=/tmp/la-kc BTCHOL_ELIMINATE_CLUSTER=$mode BTCHOL_REQUIRE_GPU=1 \
        timeout 300 .bundle-ab/gpu_solve --test-threads 4 gpu_reports 2>&1 | grep "test result"
done
echo "== sanitizers (B)"
for tm in racecheck:default racecheck:all synccheck:all memcheck:all; do
    tool=${tm%%:*} mode=${tm##*:}
    BTCHOL_KERNEL_DIR=$la BTCHOL_CACHE_DIR=/tmp/la-kc BTCHOL_ELIMINATE_CLUSTER=$mode timeout 200 \
        compute-sanitizer --tool "$tool" --error-exitcode 9 "$B" bench --backend cuda --algorithm nd --dtype f64 \
        --rhs device --n 100,128 --N 7 --batch 2 --nrhs 2 --repeats 1 --warmup 0 > "$out/san-$tool-$mode.log" 2>&1
    echo "$tool cluster=$mode rc=$? $(tail -1 "$out/san-$tool-$mode.log")"
done
echo "== timing (A = main, B = look-ahead)"
OUT=$out bash scripts/gpu-ab.sh run --backend cuda --algorithm nd --dtype f64 --rhs device --n 100,120,128 \
    --N 64,1024,4096 --repeats 10 --warmup 3
