#!/usr/bin/env bash
# 2026-12-02: 192 threads (3·LD rows, two CTAs per SM at ≤ 168 registers) against 256 for the
# factor kernels of blocks padded to 33..64, one binary and kernel set (the working tree's after
# the staged tensor-core products), BTCHOL_LD64_THREADS=192 against the default, rounds interleaved.
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
B=.bundle-nt/btchol
export BTCHOL_CACHE_DIR=/tmp/btchol-nt-cache
mkdir -p "$BTCHOL_CACHE_DIR" && tar xzf .bundle-nt/kcache.tgz -C "$BTCHOL_CACHE_DIR"
env_sweep BTCHOL_LD64_THREADS ld64-threads "default 192" 2 300 --dtype f64 --n 40,48,64 --N 3,64,1024,4096 --repeats 20
env_sweep BTCHOL_LD64_THREADS ld64-threads-big "default 192" 2 300 --dtype f64,f32 --n 64 --N 16384 --repeats 8
env_sweep BTCHOL_LD64_THREADS ld64-threads-f32 "default 192" 2 300 --dtype f32 --n 48,64 --N 64,1024,4096 --repeats 20
