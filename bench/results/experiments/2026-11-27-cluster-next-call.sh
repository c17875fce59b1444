#!/usr/bin/env bash
# One device call (written in the ninth session, not yet run) for two patches to the cluster
# elimination, alone and together (both apply to a83ad34, and they compose):
#   b  2026-11-27-own-update-per-panel.patch: warp W of the D CTA updates its own diagonal block
#      by each panel it solves along that panel's solve (from registers), instead of by all of
#      them from global memory before its last panel (~6.9 µs of warp 3's chain at n = 128);
#      other sums' order, so other bits: backward errors only.
#   c  2026-11-27-coupling-push.patch: the D CTA pushes each sub-panel of T into the coupling
#      CTAs (st.async), which solve it as it lands; same bits as main.
#   d  both.   a  main.
# Here (no GPU), from a clean tree (E=bench/results/experiments):
#   for p in own-update-per-panel coupling-push "own-update-per-panel coupling-push"; do
#     d=/tmp/k-${p// /+}; mkdir -p $d; for q in $p; do git apply $E/2026-11-27-$q.patch; done
#     cp kernels/* $d/; git checkout kernels; done
#   bash scripts/gpu-ab.sh bundle-kernels . /tmp/k-own-update-per-panel /tmp/k-coupling-push \
#     /tmp/k-own-update-per-panel+coupling-push
#   cargo test --release --test gpu_solve --no-run; strip -o .bundle-ab/gpu_solve target/release/deps/gpu_solve-<hash>
# Device: run(command="bash bench/results/experiments/2026-11-27-cluster-next-call.sh", carry=[".bundle-ab"])
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
export BTCHOL_ELIMINATE_CLUSTER=all
corr_sides 150 a,b,c,d --dtype f64 --n 73,80,96,104,120,128 --N 1,2,3,17,64 --batch 1,3
for side in b c d; do echo -n "$side vs a: "; same_bits a $side; done  # (c must match; b and d: errors)
BTCHOL_KERNEL_DIR=.bundle-ab/kernels-d BTCHOL_CACHE_DIR=/tmp/btchol-ab-d BTCHOL_REQUIRE_GPU=1 timeout 150 .bundle-ab/gpu_solve \
    --exact gpu_reports_failing_column_like_the_cpu_executor gpu_reports_not_positive_definite_per_item 2>&1 \
    | grep -E "test result|FAILED|panicked" | head -5
for tool in racecheck synccheck memcheck; do sanitize d $tool --dtype f64 --n 96,128 --N 7 --batch 2 --nrhs 2; done
unset BTCHOL_ELIMINATE_CLUSTER
AB_SIDES=a,b,c,d AB_ROUNDS=2 OUT=$out bash scripts/gpu-ab.sh run --backend cuda --algorithm nd --dtype f64 --rhs device \
    --n 80,96,100,128 --N 3,64,1024 --repeats 20 --warmup 5 | tail -13
