#!/usr/bin/env bash
# One device call (twenty-ninth session): the level thresholds of blocks above 64 again, now that
# the cluster elimination's code shrank by a third (78415b3, a15a1c3). A level of K eliminations
# takes the cluster elimination while K <= the SM count (BTCHOL_ELIMINATE_CLUSTER), the split
# potrf + trsm from 2 x the SM count (BTCHOL_SPLIT_ELIMINATE_MIN_CTAS), the one-CTA elimination
# between; on 2026-12-02 (before the shrink) moving either threshold past a power-of-two level
# lost 3-8 % (nvidia-h200-2026-12-02-cluster-threshold-wide.csv, -split-threshold-128-f6666d5.csv).
# Variants: the 256-elimination levels (N = 1024's second, N = 4096's fourth) on the cluster
# (c384) or split (s256) instead of the one-CTA elimination. One binary, interleaved rounds.
# Here: bash scripts/gpu-check.sh bundle. Device:
#   run(command="bash bench/results/experiments/2026-12-03-threshold-after-shrink-call.sh", carry=[".bundle"])
set -uo pipefail
cd "$(dirname "$0")/../../.."
[ -f .bundle/kcache.tgz ] && mkdir -p /tmp/btchol-cache && tar xzf .bundle/kcache.tgz -C /tmp/btchol-cache
OUT=${OUT:-.bundle/out} bash scripts/gpu-env-ab.sh 2 default=BTCHOL_UNUSED=1 c384=BTCHOL_ELIMINATE_CLUSTER=384 \
    s256=BTCHOL_SPLIT_ELIMINATE_MIN_CTAS=256 -- --backend cuda --algorithm nd --dtype f64 --n 96,100,128 \
    --N 256,1024,4096 --rhs device --repeats 10 --warmup 3
