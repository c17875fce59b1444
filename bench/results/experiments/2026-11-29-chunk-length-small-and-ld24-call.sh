#!/usr/bin/env bash
# One short device call (~1.5 min; sixteenth session), after 2026-11-29-chunk-length-sweep-call.sh
# found chunks of 7 winning from N = 2048 at n = 8, 16 and 32 and chunks of 31 at n = 32,
# N = 16384: the block sizes that sweep did not cover, n = 4 (ld 4) and n = 24 (f64 ld 24,
# f32 ld 32), before the rule (src/plan.rs auto_chunk) names them. Same gpu-check bundle,
# BTCHOL_CHUNK varied, 2 interleaved rounds.
# Device: run(command="bash bench/results/experiments/2026-11-29-chunk-length-small-and-ld24-call.sh", carry=[".bundle"])
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
use_gpu_check_bundle
modes="0 7 15 31"
env_sweep BTCHOL_CHUNK chunks "$modes" 2 25 --dtype f64,f32 --n 4,24 --N 2048,16384 --repeats 20 --warmup 5
