#!/usr/bin/env bash
# One device call (written in the tenth session, not yet run): each CTA of the cluster
# elimination asks for its whole block in L2 at its start (2026-11-28-cluster-l2-prefetch.patch:
# one cp.async.bulk.prefetch.L2 by thread 0, common.cuh prefetch_l2_bulk). The look-ahead D CTA
# reads its panels from global memory one after another along its chain; if a level's blocks
# have left L2 (N = 1024: ~100 MB of blocks at n = 64, twice the L2), each of those reads is a
# DRAM latency on the chain. A guess at why the cluster at ld = 64 loses 1.2 % at N = 1024 while
# it gains 3 % at N = 64. Same arithmetic: the bits must match main's.
# Here (no GPU), from a clean tree (E=bench/results/experiments):
#   git apply $E/2026-11-28-cluster-l2-prefetch.patch; d=/tmp/k-l2-prefetch; mkdir -p $d; cp kernels/* $d/; git checkout kernels
#   bash scripts/gpu-ab.sh bundle-kernels . /tmp/k-l2-prefetch     (side a: main, b: the patch)
# Device: run(command="bash bench/results/experiments/2026-11-28-cluster-l2-prefetch-call.sh", carry=[".bundle-ab"])
# (The threshold and carveout calls use side a of the same bundle: run all three in one call.)
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
BTCHOL_ELIMINATE_CLUSTER=all corr_sides 120 a,b --dtype f64 --n 64,100,128 --N 1,3,17,64 --batch 1,3
echo -n "b vs a: "; same_bits a b
sanitize b memcheck --dtype f64 --n 64,128 --N 7 --batch 2 --nrhs 2
AB_SIDES=a,b AB_ROUNDS=3 OUT=$out bash scripts/gpu-ab.sh run --backend cuda --algorithm nd --dtype f64 --rhs device \
    --n 64,96,128 --N 64,1024 --repeats 20 --warmup 5 | tail -8
