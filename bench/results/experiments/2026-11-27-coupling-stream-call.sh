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
corr_sides 150 a,b --dtype f64 --n 73,96,104,120,128 --N 1,2,3,17,64 --batch 1,3
same_bits a b
for tool in racecheck synccheck; do sanitize b $tool --dtype f64 --n 96,128 --N 7 --batch 2 --nrhs 2; done
unset BTCHOL_ELIMINATE_CLUSTER
AB_SIDES=a,b AB_ROUNDS=3 OUT=$out bash scripts/gpu-ab.sh run --backend cuda --algorithm nd --dtype f64 --rhs device \
    --n 96,120,128 --N 3,64 --repeats 20 --warmup 5 | tail -7
