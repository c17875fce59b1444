#!/usr/bin/env bash
# 2026-12-02 (twenty-sixth session): where the factor's time goes after the m16n8k4 change
# (f6666d5; carry .bundle): per-kernel timelines of f64 n = 128, N = 1024 and f64 n = 64, N = 4096.
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
export BTCHOL_NVRTC_LINEINFO=1 BTCHOL_CACHE_DIR=/tmp/btchol-profile-cache  # (gpu-profile.sh's cache)
for n in 128 64; do
    timeout 200 .bundle/btchol bench --backend cuda --algorithm nd --dtype f64 --n $n --N 2 --repeats 1 --warmup 0 \
        > /dev/null 2>&1 &
done
wait
for s in "128 1024" "64 4096"; do
    set -- $s
    NAME=timeline-n$1-N$2-f6666d5 timeout 120 bash scripts/gpu-profile.sh --timeline --backend cuda --algorithm nd \
        --dtype f64 --n $1 --N $2 | head -60 || true
done
rm -f "$out"/*.ncu-rep "$out"/*-ncu.log
