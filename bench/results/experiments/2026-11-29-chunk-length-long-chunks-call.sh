#!/usr/bin/env bash
# One short device call (~1 min; sixteenth session): where chunks of 31 take over from 15 (N = 12288)
# and whether 63 does at N = 32768, n = 16 and 32; after the two chunk-length calls of 2026-11-29.
# BTCHOL_CHUNK varied, 2 interleaved rounds.
# Device: run(command="bash bench/results/experiments/2026-11-29-chunk-length-long-chunks-call.sh", carry=[".bundle"])
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
use_gpu_check_bundle
modes="15 31 63"
env_sweep BTCHOL_CHUNK chunks "$modes" 2 25 --dtype f64,f32 --n 16,32 --N 12288,32768 --repeats 20 --warmup 5
