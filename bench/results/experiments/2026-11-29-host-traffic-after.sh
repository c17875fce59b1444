#!/usr/bin/env bash
# One device call (~2 min), eighteenth session: the host paths with the threaded copies
# (src/cuda/host_stager.rs for uploads of 4 MB and more, src/host_parallel.rs for the host
# right-hand sides' check, pack and unpack from 512 KB) against the same binary with
# BTCHOL_HOST_THREADS=1 (everything on the caller's thread, uploads by the driver's copy: the
# behaviour before, but for the pack's memcpy), and against --rhs device (the solver alone).
# `btchol bench --factor-solve`: solve_us with host right-hand sides; fsolve_us = upload + factor
# + solve in one call from a Vec. Then host-memory-upload.py (pageable against page-locked NumPy
# arrays, through the Python binding).
# Device: run(command="bash bench/results/experiments/2026-11-29-host-traffic-after.sh", carry=[".bundle"])
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
use_gpu_check_bundle
common=(--backend cuda --repeats 30 --warmup 5)
shapes=("--algorithm nd --dtype f64 --n 8,16,32 --N 64,1024,4096,16384"
        "--algorithm seq --dtype f64 --n 16 --N 32 --batch 1024"
        "--algorithm seq --dtype f64 --n 32 --N 128 --batch 256")
for side in threads one-thread device; do
    for k in 0 1 2; do
        case $side in
            threads) env=(); extra=(--rhs host --factor-solve) ;;
            one-thread) env=(BTCHOL_HOST_THREADS=1); extra=(--rhs host --factor-solve) ;;
            device) env=(); extra=(--rhs device) ;;
        esac
        echo "== $side: ${shapes[$k]}"
        env "${env[@]}" timeout 100 "$B" bench "${common[@]}" ${shapes[$k]} "${extra[@]}" \
            --csv "$out/host-after-$side-$k.csv" | tail -n +3 | cut -c1-125
    done
done
BTCHOL_LIB=.bundle/libbtchol.so PYTHONPATH=bindings/python timeout 150 python3 bench/results/experiments/host-memory-upload.py 20
