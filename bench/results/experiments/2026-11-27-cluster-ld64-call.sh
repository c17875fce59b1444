#!/usr/bin/env bash
# One device call (written in the ninth session, not yet run): the cluster elimination for
# 32 < ld <= 64 too (2026-11-27-cluster-ld64.patch: kernels/block_ops.cuh BLOCKED_PANEL_CODE,
# kernels/factor.cu, src/cuda/jit.rs KernelSpec::eliminate_cluster, scripts/kernel-resources.sh).
# At f64 n = 64, N = 64 the one-CTA elimination (all 64 columns swept by the whole CTA, a barrier
# per column) is 21-23 µs a level, ~75 % of the factor (timeline, H100, 2026-11-27); the
# cluster's look-ahead D CTA sweeps a panel in ~5.6 µs (~175 ns a column against ~340).
# A/B on one binary, one kernel set: BTCHOL_ELIMINATE_CLUSTER=0 (ld <= 64: main's one-CTA
# elimination, exactly) against the default (the cluster at levels whose clusters fit the SMs)
# and `all`. Different algorithms, so no bit comparison: backward errors, the failing-column
# tests, the sanitizers.
# Here (no GPU): git apply bench/results/experiments/2026-11-27-cluster-ld64.patch;
#   bash scripts/gpu-ab.sh bundle-kernels . .   (side a = side b = the patched tree), the stripped
#   gpu_solve test binary as .bundle-ab/gpu_solve; then git checkout kernels src scripts.
# Device: run(command="bash bench/results/experiments/2026-11-27-cluster-ld64-call.sh", carry=[".bundle-ab"])
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
export BTCHOL_ELIMINATE_CLUSTER=all
corr_sides 200 a --dtype f64 --n 33,40,47,48,57,64 --N 1,2,3,17,64,257 --batch 1,3 --nrhs 1,3
python3 -c "
import csv
rows = list(csv.DictReader(open('$out/corr-a.csv')))
print(len(rows), 'rows with the cluster at every split level; worst backward error', max(float(r['backward_error']) for r in rows))"
BTCHOL_KERNEL_DIR=.bundle-ab/kernels-a BTCHOL_CACHE_DIR=/tmp/btchol-ab-a BTCHOL_REQUIRE_GPU=1 timeout 200 .bundle-ab/gpu_solve \
    --test-threads 4 gpu_reports gpu_factors_subnormal_pivots gpu_rejects_non_finite gpu_handles_awkward 2>&1 \
    | grep -E "test result|FAILED|panicked" | head -5
for tool in racecheck synccheck; do sanitize a $tool --dtype f64 --n 40,64 --N 7 --batch 2 --nrhs 2; done
unset BTCHOL_ELIMINATE_CLUSTER
for round in 1 2 3; do
    for mode in 0 default; do
        BTCHOL_ELIMINATE_CLUSTER=$([ $mode = 0 ] && echo 0) BTCHOL_KERNEL_DIR=.bundle-ab/kernels-a \
            BTCHOL_CACHE_DIR=/tmp/btchol-ab-a "$B" bench --backend cuda --algorithm nd --dtype f64 --rhs device \
            --n 40,48,64 --N 3,64,1024 --repeats 20 --warmup 5 --csv "$out/time-$mode-$round.csv" > /dev/null 2>&1
    done
done
python3 - "$out" <<'PY'
import csv, glob, sys
best = {}
for f in glob.glob(f"{sys.argv[1]}/time-*.csv"):
    mode = f.split("time-")[1].split("-")[0]
    for r in csv.DictReader(open(f)):
        k = (r["n"], r["N"], mode)
        best[k] = min(best.get(k, 1e30), float(r["factor_us_median"]))
print("f64 factor µs (better of 3 rounds): n N  one-CTA (=0)  cluster (default)")
for n, N in sorted({(k[0], k[1]) for k in best}, key=lambda t: (int(t[0]), int(t[1]))):
    a, b = best.get((n, N, "0")), best.get((n, N, "default"))
    print(f"{n:>4} {N:>5} {a:10.1f} {b:10.1f} {b / a:6.2f}")
PY
