#!/usr/bin/env bash
# One device call (~2 min; written in the sixteenth session, not yet run: its device time went to
# the gpu-check of cbaf2c3 and the three chunk-length calls of 2026-11-29): chunks below N = 2048.
# On the H200 chunks of 7 won at N = 2048 for every n ≤ 32 (f64 n = 32: factor 218 → 195 µs,
# solve 106 → 94; bench/results/ab/README.md, sixteenth session), where the H100 of 2026-11-26
# found every chunk length slower; N = 1024 is one of the issue's headline rows (f64 n = 32:
# 146 / 76 µs against targets 73 / 33), and nothing below 2048 was measured. BTCHOL_CHUNK 0
# (plain, today's rule there) / 3 / 5 / 7 / 11 on the gpu-check bundle, 2 interleaved rounds;
# a length that wins a range of N on both the factor and the solve at every n becomes the rule
# (src/plan.rs auto_chunk and its test in tests/cpu_solve.rs).
# Then (~40 s) f32 n = 12 and 16 from N = 8192 with chunks of 11 against 15 (the rule): on
# 2026-11-29 11 solved f32 n = 16 faster at N = 8192 (120.9 → 106.8 µs) and 16384 (127.4 →
# 117.9), factors equal, while f64 n = 16 factored slower with 11 (213 → 244 at N = 16384); a
# confirmed win would make the rule depend on the dtype (auto_chunk takes block sizes only).
# Device: run(command="bash bench/results/experiments/2026-11-29-chunk-length-short-horizons-call.sh", carry=[".bundle"])
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
use_gpu_check_bundle
modes="0 3 5 7 11"
env_sweep BTCHOL_CHUNK chunks "$modes" 2 40 --dtype f64,f32 --n 8,16,32 --N 256,512,1024,1536 --repeats 30 --warmup 5
env_sweep BTCHOL_CHUNK chunks16 "15 11" 2 40 --dtype f32 --n 12,16 --N 8192,12288,16384,32768 --repeats 20 --warmup 5
