#!/usr/bin/env bash
# One device call (written in the eleventh session, not yet run, ~3 min): why the cluster
# elimination's level of two eliminations takes 31 µs at f64 n = 64, N = 256 but 21–22 µs at
# N = 64 (ncu timelines, experiments/README.md 2026-11-28; the same schedule shape, blocks 64
# and 192 against 16 and 48; one CTA takes 22.6 µs at both). With BTCHOL_ELIMINATE_CLUSTER=6
# each factor launches the cluster kernel three times (levels of 2, 1, 1 eliminations), so the
# first launch of each factor is that level: SKIP=6 profiles the third factor's. Full Nsight
# Compute sections (memory workload, warp states, scheduler) for both N, and the 1-elimination
# level (SKIP=7) at N = 256 as a third reference; compare L2 hit rate, DRAM bytes, the L2
# partition traffic (lts__t_sectors_srcunit_ltcfabric), and the stall reasons.
# Here (no GPU): bash scripts/gpu-check.sh bundle (or any bundle with .bundle/btchol).
# Device: run(command="bash bench/results/experiments/2026-11-28-cluster-two-elim-profile-call.sh", carry=[".bundle"])
set -uo pipefail
cd "$(dirname "$0")/../../.."
out=${OUT:-.bundle/out}; mkdir -p "$out"
for spec in "64 6" "256 6" "256 7"; do
    set -- $spec
    BTCHOL_ELIMINATE_CLUSTER=6 SKIP=$2 COUNT=1 NAME=two-elim-N$1-skip$2 timeout 150 \
        bash scripts/gpu-profile.sh btchol_factor_eliminate_cluster --backend cuda --algorithm nd --dtype f64 \
        --n 64 --N "$1" > "$out/two-elim-N$1-skip$2.txt" 2>&1
    echo "N=$1 SKIP=$2 rc=$?: $(grep -E 'Duration|L2 Hit Rate|DRAM Throughput' "$out/two-elim-N$1-skip$2.txt" | tr -s ' ' | head -3 | tr '\n' ';')"
done
(cd "$out" && rm -f ./*-sass.csv && tar czf /tmp/results.tgz . && find . -mindepth 1 -delete && mv /tmp/results.tgz .)
