#!/usr/bin/env bash
# One device call (ninth session): the D CTA's look-ahead with T streamed by sub-panels
# (kernels/block_ops.cuh lookahead_solve_panel: the warps below solve their rows of panel P as
# warp P's sweep publishes each sub-panel of 4 columns, and warp P + 1 accumulates its own
# block's rank-32 update from the solved rows in registers). Side a: main's kernels, side b: the
# working tree's. The patch claims bit-identical factors, so the check compares the solutions'
# SHA-256 shape by shape, with the cluster elimination at every split level.
# Here (no GPU): bash scripts/gpu-ab.sh bundle-kernels HEAD .   (plus .bundle-ab/gpu_solve: the
# gpu_solve test binary, cargo test --release --test gpu_solve --no-run, stripped)
# Device: run(command="bash bench/results/experiments/2026-11-27-streamed-t-call.sh [recheck]", carry=[".bundle-ab"])
# (recheck: the sanitizers on both sides, then fewer shapes; after the first call's racecheck
# findings on side b.)
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
export BTCHOL_ELIMINATE_CLUSTER=all
san() {  # side tool
    BTCHOL_KERNEL_DIR=.bundle-ab/kernels-$1 BTCHOL_CACHE_DIR=/tmp/btchol-ab-$1 timeout 90 compute-sanitizer --tool $2 \
        --error-exitcode 9 "$B" bench --backend cuda --algorithm nd --dtype f64 --rhs device --n 100,128 --N 7 \
        --batch 2 --nrhs 2 --repeats 1 --warmup 0 > "$out/san-$1-$2.log" 2>&1
    echo "side $1 $2 rc=$? $(tail -1 "$out/san-$1-$2.log")"
}
if [ "${1:-}" = recheck ]; then
    san b racecheck; san b synccheck; san a racecheck
    for side in a b; do
        ( BTCHOL_KERNEL_DIR=.bundle-ab/kernels-$side BTCHOL_CACHE_DIR=/tmp/btchol-ab-$side timeout 120 "$B" bench \
            --backend cuda --algorithm nd --dtype f64 --rhs device --n 80,96,127,128 --N 1,3,17,64 --batch 1,3 \
            --repeats 1 --warmup 0 --csv "$out/corr-$side.csv" > /dev/null 2>&1; echo "$side correctness rc=$?" ) &
    done
    wait
    python3 -c "
import csv, sys
a, b = ({(r['n'], r['N'], r['batch']): r for r in csv.DictReader(open(f'$out/corr-{s}.csv'))} for s in 'ab')
d = [k for k in b if k in a and a[k]['solution_sha256'] != b[k]['solution_sha256']]
print(len(b), 'rows on b,', len(d), 'differ from a', d[:5], 'worst bwd', max(float(r['backward_error']) for r in b.values()))"
    unset BTCHOL_ELIMINATE_CLUSTER
    AB_SIDES=a,b AB_ROUNDS=3 OUT=$out bash scripts/gpu-ab.sh run --backend cuda --algorithm nd --dtype f64 --rhs device \
        --n 80,100,128 --N 3,64 --repeats 20 --warmup 5 | tail -7
    exit 0
fi
for side in a b; do
    ( BTCHOL_KERNEL_DIR=.bundle-ab/kernels-$side BTCHOL_CACHE_DIR=/tmp/btchol-ab-$side timeout 200 "$B" bench \
        --backend cuda --algorithm nd --dtype f64 --rhs device --n 73,80,96,100,104,127,128 \
        --N 1,2,3,17,64 --batch 1,3 --nrhs 1,2 --repeats 1 --warmup 0 --csv "$out/corr-$side.csv" > /dev/null 2>&1
      echo "$side correctness rc=$?" ) &
done
wait
python3 - "$out/corr-a.csv" "$out/corr-b.csv" <<'PY'
import csv, sys
rows = [list(csv.DictReader(open(p))) for p in sys.argv[1:]]
key = lambda r: (r["dtype"], r["n"], r["N"], r["batch"], r["nrhs"])
a = {key(r): r for r in rows[0]}
both = [r for r in rows[1] if key(r) in a]
diff = [key(r) for r in both if a[key(r)]["solution_sha256"] != r["solution_sha256"]]
worst = max([float(r["backward_error"]) for r in rows[1]] or [0])
print(f"side b: {len(rows[1])} rows ({len(rows[0])} on a), {len(both)} on both, {len(diff)} differ {diff[:8]}; worst backward error {worst:.3g}")
PY
BTCHOL_KERNEL_DIR=.bundle-ab/kernels-b BTCHOL_CACHE_DIR=/tmp/btchol-ab-b BTCHOL_REQUIRE_GPU=1 timeout 150 .bundle-ab/gpu_solve \
    --test-threads 4 gpu_factors_subnormal_pivots gpu_reports gpu_rejects_non_finite 2>&1 | grep -E "test result|FAILED|panicked" | head
for tool in racecheck synccheck; do
    BTCHOL_KERNEL_DIR=.bundle-ab/kernels-b BTCHOL_CACHE_DIR=/tmp/btchol-ab-b timeout 90 compute-sanitizer --tool $tool \
        --error-exitcode 9 "$B" bench --backend cuda --algorithm nd --dtype f64 --rhs device --n 100,128 --N 7 \
        --batch 2 --nrhs 2 --repeats 1 --warmup 0 > "$out/san-$tool.log" 2>&1
    echo "$tool rc=$? $(tail -1 "$out/san-$tool.log")"
done
unset BTCHOL_ELIMINATE_CLUSTER
AB_SIDES=a,b AB_ROUNDS=2 OUT=$out bash scripts/gpu-ab.sh run --backend cuda --algorithm nd --dtype f64 --rhs device \
    --n 80,96,100,128 --N 3,64,1024 --repeats 20 --warmup 5 | tail -14
