#!/usr/bin/env bash
# One device call (written in the ninth session, not yet run): the coupling CTAs of the cluster
# elimination get each sub-panel of T pushed into their shared memory by the D CTA's diagonal
# warp (st.async, counted on their sub[p][s]; 2026-11-27-coupling-push.patch, against bec4662),
# and solve it as it lands; only the last sub-panel is still copied after ready[1][p]. Unlike
# 2026-11-27-coupling-stream.patch (a remote release per sub-panel: a MEMBAR.ALL.GPU on the
# sweep's chain, 8-18 % slower) no fence is added to the sweep. Same operations in the same
# order: the factors must be bit-identical to main's.
# Here (no GPU): apply the patch, cp kernels/* /tmp/sa/, git checkout kernels,
#   bash scripts/gpu-ab.sh bundle-kernels . /tmp/sa   and the stripped gpu_solve test binary as
#   .bundle-ab/gpu_solve (cargo test --release --test gpu_solve --no-run; strip -o ...).
# Device: run(command="bash bench/results/experiments/2026-11-27-coupling-push-call.sh", carry=[".bundle-ab"])
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
export BTCHOL_ELIMINATE_CLUSTER=all
corr_sides 150 a,b --dtype f64 --n 73,80,96,104,120,128 --N 1,2,3,17,64 --batch 1,3
same_bits a b
BTCHOL_KERNEL_DIR=.bundle-ab/kernels-b BTCHOL_CACHE_DIR=/tmp/btchol-ab-b BTCHOL_REQUIRE_GPU=1 timeout 150 .bundle-ab/gpu_solve \
    --exact gpu_reports_failing_column_like_the_cpu_executor gpu_reports_not_positive_definite_per_item 2>&1 \
    | grep -E "test result|FAILED|panicked" | head -5
for tool in racecheck synccheck memcheck; do sanitize b $tool --dtype f64 --n 96,128 --N 7 --batch 2 --nrhs 2; done
unset BTCHOL_ELIMINATE_CLUSTER
AB_SIDES=a,b AB_ROUNDS=3 OUT=$out bash scripts/gpu-ab.sh run --backend cuda --algorithm nd --dtype f64 --rhs device \
    --n 80,96,100,128 --N 3,64,1024 --repeats 20 --warmup 5 | tail -13
