#!/usr/bin/env bash
# 2026-12-01: the whole small-block factor in one CTA per item
# (kernels/small.cu btchol_factor_whole_small) and the staged whole solve (both landed: run it from
# main after scripts/gpu-check.sh bundle).
# One device call (~4 min), the bundle carried:
#   run(command="bash bench/results/experiments/2026-12-01-whole-factor-call.sh", carry=[".bundle"])
# 1. correctness: the new GPU tests with the default rules, the gpu_solve suite and the masks and
#    regularize suites (CUDA plans) with both kernels forced, memcheck / racecheck / synccheck;
# 2. A/B on one binary, 2 interleaved rounds: factor and solve with the level launches
#    (BTCHOL_WHOLE_FACTOR=0 BTCHOL_WHOLE_SOLVE=0), the whole solve only, both, at n = 5, 8, 16 in
#    f64 and f32, N = 2 … 100, and n = 8 at N = 128 / 256 with plain nested dissection (BTCHOL_CHUNK=0)
#    against the plan's chunks; batches of 8.
# Then set whole_factor.rs and whole_solve.rs default_rule from the tables (env-ab CSVs in $OUT).
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
use_gpu_check_bundle
[ -f .bundle/payload.txz ] && tar xJf .bundle/payload.txz -C .bundle
export BTCHOL_REQUIRE_GPU=1 BTCHOL_BIN=$PWD/$B OUT=$out  # (gpu-env-ab.sh writes to $OUT)
t=$(ls .bundle/tests/gpu_solve-*)
echo "=== new tests (default rules)"; $t one_cta_per_item 2>&1 | grep -E "^test |test result"
forced="BTCHOL_WHOLE_SOLVE=1 BTCHOL_WHOLE_FACTOR=1"
echo "=== gpu_solve, both forced"; env $forced timeout 240 $t 2>&1 | grep -E "test result|FAILED|panicked" | head -20
for suite in masks regularize; do
    echo "=== $suite (cuda), both forced"
    env $forced BTCHOL_TEST_BACKEND=cuda timeout 120 $(ls .bundle/tests/$suite-*) 2>&1 | grep -E "test result|FAILED|panicked" | head -10
done
san="compute-sanitizer --error-exitcode=1"
small="bench --backend cuda --algorithm nd --dtype f64,f32 --n 8,5,16 --N 37,64 --batch 2 --nrhs 3 --repeats 1 --warmup 0"
for tool in memcheck racecheck synccheck; do
    echo "=== $tool"; env $forced $san --tool $tool "$B" $small 2>&1 | tail -2
done
echo "=== A/B"
ab() { bash scripts/gpu-env-ab.sh 2 levels=BTCHOL_WHOLE_SOLVE=0,BTCHOL_WHOLE_FACTOR=0 solve=BTCHOL_WHOLE_SOLVE=1,BTCHOL_WHOLE_FACTOR=0 \
    both=BTCHOL_WHOLE_SOLVE=1,BTCHOL_WHOLE_FACTOR=1 "$@"; }
ab -- --backend cuda --algorithm nd --dtype f64,f32 --n 5,8,16 --N 2,4,8,16,32,64,100 --batch 1 --nrhs 1 --rhs device --repeats 200
cp "$out/env-ab.csv" "$out/whole-factor-ab.csv"
ab plain=BTCHOL_WHOLE_SOLVE=1,BTCHOL_WHOLE_FACTOR=1,BTCHOL_CHUNK=0 -- \
    --backend cuda --algorithm nd --dtype f64,f32 --n 8 --N 128,256 --batch 1 --nrhs 1 --rhs device --repeats 200
cp "$out/env-ab.csv" "$out/whole-factor-ab-2.csv"
ab -- --backend cuda --algorithm nd --dtype f64,f32 --n 8,16 --N 16,64 --batch 8 --nrhs 1,4 --rhs device --repeats 100
cp "$out/env-ab.csv" "$out/whole-factor-ab-3.csv"
# 3. where the kernel's time goes: Nsight Compute's source counters (f64 n = 8, N = 64; the
#    sources linked where NVRTC's line info names them).
if [ "${PROFILE:-1}" = 1 ]; then
    for f in kernels/*.cu kernels/*.cuh; do ln -sf "$f" .; done
    BTCHOL_NVRTC_LINEINFO=1 BTCHOL_WHOLE_SOLVE=1 BTCHOL_WHOLE_FACTOR=1 timeout 200 ncu --clock-control none \
        -k regex:factor_whole --launch-skip 5 --launch-count 1 --set full --import-source yes -f -o "$out/wf-64" \
        "$B" bench --backend cuda --algorithm nd --dtype f64 --n 8 --N 64 --batch 1 --nrhs 1 --repeats 10 --warmup 2 \
        > "$out/ncu.log" 2>&1; echo "ncu rc=$?"
    ncu --import "$out/wf-64.ncu-rep" --page details > "$out/wf-64-details.txt" 2>&1
    grep -E "  Duration|Executed Instructions  |Issued Warp Per|Warp Cycles Per Issued" "$out/wf-64-details.txt"
    ncu --import "$out/wf-64.ncu-rep" --page source --csv --print-source sass > "$out/wf-64-source.csv" 2>&1 || true
    rm -f "$out/wf-64.ncu-rep"; wc -l "$out/wf-64-source.csv"
fi
