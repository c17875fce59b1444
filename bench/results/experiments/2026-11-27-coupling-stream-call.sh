#!/usr/bin/env bash
# One device call (ninth session): the coupling CTAs of the cluster elimination solve their rows
# of each panel sub-panel by sub-panel too (the D CTA's sweep signals them per sub-panel; they copy
# that sub-panel's T and rdiag from the D CTA and solve it), after the D CTA's streamed T.
# Side a: the streamed T (main once landed), side b: this patch
# (2026-11-27-coupling-stream.patch, against the streamed-T commit).
# Here (no GPU): apply the patch, cp kernels/* /tmp/cs/, git checkout kernels,
#   bash scripts/gpu-ab.sh bundle-kernels . /tmp/cs
# Device: run(command="bash bench/results/experiments/2026-11-27-coupling-stream-call.sh", carry=[".bundle-ab"])
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
export BTCHOL_ELIMINATE_CLUSTER=all
for side in a b; do
    ( BTCHOL_KERNEL_DIR=.bundle-ab/kernels-$side BTCHOL_CACHE_DIR=/tmp/btchol-ab-$side timeout 150 "$B" bench \
        --backend cuda --algorithm nd --dtype f64 --rhs device --n 73,96,104,120,128 --N 1,2,3,17,64 --batch 1,3 \
        --repeats 1 --warmup 0 --csv "$out/corr-$side.csv" > /dev/null 2>&1; echo "$side correctness rc=$?" ) &
done
wait
python3 -c "
import csv
a, b = ({(r['n'], r['N'], r['batch']): r for r in csv.DictReader(open(f'$out/corr-{s}.csv'))} for s in 'ab')
d = [k for k in b if k in a and a[k]['solution_sha256'] != b[k]['solution_sha256']]
print(len(b), 'rows on b,', len(d), 'differ from a', d[:5], 'worst bwd', max(float(r['backward_error']) for r in b.values()))"
for tool in racecheck synccheck; do
    BTCHOL_KERNEL_DIR=.bundle-ab/kernels-b BTCHOL_CACHE_DIR=/tmp/btchol-ab-b timeout 90 compute-sanitizer --tool $tool \
        --error-exitcode 9 "$B" bench --backend cuda --algorithm nd --dtype f64 --rhs device --n 96,128 --N 7 \
        --batch 2 --nrhs 2 --repeats 1 --warmup 0 > "$out/san-$tool.log" 2>&1
    echo "side b $tool rc=$? $(tail -1 "$out/san-$tool.log")"
done
unset BTCHOL_ELIMINATE_CLUSTER
AB_SIDES=a,b AB_ROUNDS=3 OUT=$out bash scripts/gpu-ab.sh run --backend cuda --algorithm nd --dtype f64 --rhs device \
    --n 96,120,128 --N 3,64 --repeats 20 --warmup 5 | tail -7
