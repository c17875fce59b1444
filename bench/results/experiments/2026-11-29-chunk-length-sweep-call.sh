#!/usr/bin/env bash
# One device call (~3 min; written in the fifteenth session, run in the sixteenth: results in
# bench/results/ab, "chunk lengths re-chosen"): the chunk length of partitioned nested
# dissection again (src/plan.rs auto_chunk then: n 9..32, chunks of 7 for 3072 <= N < 8192 and
# of 15 from N = 8192, plain below). That rule is from the H100 of 2026-11-26
# (bench/results/ab/README.md, "Chunk length"), where 31 was already close at N = 16384 (f64
# n = 32: factor 738.9 vs 754.7 for 15, solve 378.0 vs 393.6); since then the chunk factor, the
# sweeps (16-byte staging, swizzle) and the separator levels (the wide-level rule) all got
# faster, so the balance may have moved; n = 8 (plain then) was never measured.
# Sweeps BTCHOL_CHUNK (0 = plain) on the gpu-check bundle's binary, 2 interleaved rounds; a
# length that wins a range of N on both the factor and the solve becomes the rule (src/plan.rs
# auto_chunk and its unit test).
# Here (no GPU): bash scripts/gpu-check.sh bundle   (or an existing .bundle of the current main)
# Device: run(command="bash bench/results/experiments/2026-11-29-chunk-length-sweep-call.sh", carry=[".bundle"])
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
use_gpu_check_bundle
modes="default 0 7 11 15 23 31"
env_sweep BTCHOL_CHUNK chunk "$modes" 2 100 --dtype f64,f32 --n 8,16,32 --N 2048,4096,8192,16384 --repeats 20 --warmup 5
