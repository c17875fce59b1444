#!/usr/bin/env bash
# The tenth session's three prepared experiments in one device call (~10 min of wall time at
# most; each prints its table): the cluster's L2 prefetch (sides a and b), the cluster threshold
# sweep and the carveout sweep (side a only). Results: $out/results.tgz (every CSV and log).
# Here (no GPU), from a clean tree (E=bench/results/experiments):
#   git apply $E/2026-11-28-cluster-l2-prefetch.patch; d=/tmp/k-l2-prefetch; mkdir -p $d; cp kernels/* $d/; git checkout kernels
#   bash scripts/gpu-ab.sh bundle-kernels . /tmp/k-l2-prefetch
# Device: run(command="bash bench/results/experiments/2026-11-28-next-call.sh", carry=[".bundle-ab"], timeout_s=600)
set -uo pipefail
here=$(dirname "$0")
timeout 170 bash "$here/2026-11-28-cluster-l2-prefetch-call.sh"
timeout 200 bash "$here/2026-11-28-cluster-threshold-call.sh"
timeout 200 bash "$here/2026-11-28-smem-carveout-call.sh"
out=${OUT:-.bundle-ab/out}
(cd "$out" && tar czf /tmp/results.tgz . && find . -mindepth 1 -delete && mv /tmp/results.tgz .)
