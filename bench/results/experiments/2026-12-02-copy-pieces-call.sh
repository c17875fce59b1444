#!/usr/bin/env bash
# 2026-12-02: did copy_pieces (c214625: copy_elems and copy_block_staged through one lambda-indexed
# batched copy; the 192-thread update kernel went from 87 to 79 registers) slow the fused levels of
# f64 n = 64? The gpu-checks measured N = 1024 / 4096 / 16384 517 / 1206 / 3714 µs on c7c3fe0 and
# 531 / 1270 / 3939 on c214625, in different calls. Sides: a = c7c3fe0's kernels, b = c214625's.
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
AB_ROUNDS=2 bash scripts/gpu-ab.sh run --backend cuda --algorithm nd --dtype f64 --n 64 --N 1024,4096 --rhs device --repeats 10
