#!/usr/bin/env bash
# One device call that checks and times 2026-11-27-warp-sweep-sub-panels-v2.patch (the diagonal
# warp's sweep by sub-panels of 8 where the levels are latency-bound: the cluster variant and
# LD <= 72; the column loop elsewhere). Written in the seventh session, not yet run.
#
# Here (no GPU), from a clean tree at the commit the patch applies to:
#   git apply bench/results/experiments/2026-11-27-warp-sweep-sub-panels-v2.patch
#   mkdir -p /tmp/sub2 && cp kernels/block_ops.cuh /tmp/sub2/ && git checkout kernels
#   bash scripts/gpu-ab.sh bundle-kernels . /tmp/sub2        # A = main's kernels, B = the patch's
#   cargo test --release --test gpu_solve --no-run            # then copy the printed binary:
#   strip -o .bundle-ab/gpu_solve target/release/deps/gpu_solve-<hash>
# Device:
#   run(command="bash bench/results/experiments/2026-11-27-warp-sweep-sub-panels-v2-check.sh", carry=[".bundle-ab"])
# (Each side compiles its kernels on the device: ~4 minutes of the call for the correctness
# sweep's shapes.)
set -uo pipefail
cd "$(dirname "$0")/../../.."
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PATH=/usr/local/cuda/bin:$PATH
out=${OUT:-.bundle-ab/out}; mkdir -p "$out"
B=.bundle-ab/btchol
kb=.bundle-ab/kernels-b
nvidia-smi --query-gpu=name --format=csv,noheader
echo "== correctness (B)"
BTCHOL_KERNEL_DIR=$kb BTCHOL_CACHE_DIR=/tmp/btchol-ab-b timeout 300 "$B" bench --backend cuda --algorithm nd --dtype f64 \
    --rhs device --n 65,72,79,88,97,100,104,120,128 --N 1,2,3,17,64 --batch 1,3 --nrhs 1,3 --repeats 1 --warmup 0 \
    --csv "$out/corr.csv" > /dev/null 2>&1
echo "rc=$? $(awk -F, 'NR > 1 { e = $38 + 0; if (e > m) m = e; c++ } END { print c, "rows, max backward error", m }' "$out/corr.csv")"
BTCHOL_KERNEL_DIR=$kb BTCHOL_CACHE_DIR=/tmp/btchol-ab-b BTCHOL_REQUIRE_GPU=1 timeout 200 .bundle-ab/gpu_solve \
    --test-threads 4 gpu_reports 2>&1 | grep "test result"
for tool in racecheck synccheck; do
    BTCHOL_ELIMINATE_CLUSTER=all BTCHOL_KERNEL_DIR=$kb BTCHOL_CACHE_DIR=/tmp/btchol-ab-b timeout 200 \
        compute-sanitizer --tool $tool --error-exitcode 9 "$B" bench --backend cuda --algorithm nd --dtype f64 \
        --rhs device --n 72,100,128 --N 7 --batch 2 --nrhs 2 --repeats 1 --warmup 0 > "$out/san-$tool.log" 2>&1
    echo "$tool rc=$? $(tail -1 "$out/san-$tool.log")"
done
echo "== timing (A = main, B = sub-panels v2)"
OUT=$out bash scripts/gpu-ab.sh run --backend cuda --algorithm nd --dtype f64 --rhs device --n 72,80,96,100,128 \
    --N 64,1024 --repeats 10 --warmup 3
