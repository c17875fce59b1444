#!/usr/bin/env bash
# Two device calls that check and time three kernel variants written in the seventh session (run
# in the eighth: bench/results/ab/README.md; each is kernels/block_ops.cuh only, on be39806):
#   B  the sub-panel v2 patch (landed as 2026a6b)   the diagonal warp's sweep by sub-panels of 8
#      in the cluster variant and at ld <= 72 (the column loop elsewhere)
#   C  2026-11-27-cluster-own-panel-shared.patch   the look-ahead D warp's rank-32 update of its
#      own panel from shared memory instead of global (on the chain between two sweeps)
#   D  both patches
#
# Here (no GPU), from a clean tree:
#   E=bench/results/experiments; mkdir -p /tmp/vb /tmp/vc /tmp/vd
#   git checkout be39806 -- kernels
#   git diff be39806 2026a6b -- kernels | git apply && cp kernels/block_ops.cuh /tmp/vb/
#   git apply $E/2026-11-27-cluster-own-panel-shared.patch && cp kernels/block_ops.cuh /tmp/vd/
#   git checkout be39806 -- kernels && git apply $E/2026-11-27-cluster-own-panel-shared.patch && cp kernels/block_ops.cuh /tmp/vc/
#   git checkout be39806 -- kernels
#   bash scripts/gpu-ab.sh bundle-kernels . /tmp/vb /tmp/vc /tmp/vd     # A = be39806's kernels
#   git checkout HEAD -- kernels
#   cargo test --release --test gpu_solve --no-run                    # then copy the printed binary:
#   strip -o .bundle-ab/gpu_solve target/release/deps/gpu_solve-<hash>
# Device (back to back, so the second finds the machine and the kernel caches warm):
#   run(command="bash bench/results/experiments/2026-11-27-cluster-sweep-variants-check.sh check", carry=[".bundle-ab"])
#   run(command="bash bench/results/experiments/2026-11-27-cluster-sweep-variants-check.sh time", carry=[".bundle-ab"])
# (Kernel caches live in /tmp/btchol-ab-SIDE on the device: a fresh machine compiles again.)
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
case ${1:-} in
check)
    # All four sides at once (kernel compilation is per process and the device has 16 cores;
    # only correctness is read here). Side a is main's kernels, checked on a GPU for the first time.
    for side in a b c d; do
        ( k=.bundle-ab/kernels-$side c=/tmp/btchol-ab-$side
        BTCHOL_KERNEL_DIR=$k BTCHOL_CACHE_DIR=$c timeout 300 "$B" bench --backend cuda --algorithm nd --dtype f64 \
            --rhs device --n 65,72,79,97,104,128 --N 1,2,3,17,64 --batch 1,3 --nrhs 1,3 --repeats 1 --warmup 0 \
            --csv "$out/corr-$side.csv" > /dev/null 2>&1
        echo "$side correctness rc=$? $(awk -F, 'NR > 1 { e = $38 + 0; if (e > m) m = e; c++ } END { print c, "rows, max backward error", m }' "$out/corr-$side.csv")" ) &
    done
    wait
    BTCHOL_KERNEL_DIR=.bundle-ab/kernels-d BTCHOL_CACHE_DIR=/tmp/btchol-ab-d BTCHOL_ELIMINATE_CLUSTER=all \
        BTCHOL_REQUIRE_GPU=1 timeout 150 .bundle-ab/gpu_solve --test-threads 4 gpu_reports 2>&1 | grep "test result"
    for tool in racecheck synccheck; do
        BTCHOL_ELIMINATE_CLUSTER=all BTCHOL_KERNEL_DIR=.bundle-ab/kernels-d BTCHOL_CACHE_DIR=/tmp/btchol-ab-d timeout 120 \
            compute-sanitizer --tool $tool --error-exitcode 9 "$B" bench --backend cuda --algorithm nd --dtype f64 \
            --rhs device --n 72,100,128 --N 7 --batch 2 --nrhs 2 --repeats 1 --warmup 0 > "$out/san-$tool.log" 2>&1
        echo "$tool (d) rc=$? $(tail -1 "$out/san-$tool.log")"
    done ;;
time)
    OUT=$out bash scripts/gpu-ab.sh run --backend cuda --algorithm nd --dtype f64 --rhs device --n 72,80,96,100,128 \
        --N 64,1024 --repeats 10 --warmup 3 ;;
*) echo "usage: $0 check|time"; exit 2 ;;
esac
