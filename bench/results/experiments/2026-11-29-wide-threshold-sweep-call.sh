#!/usr/bin/env bash
# One device call (~3 min; written in the fifteenth session, not yet run): the rest of the
# wide-level threshold (src/cuda/engine.rs wide_level_min_ctas). The fifteenth session moved f64
# blocks padded to 32 to the group kernel from SMs + 1 CTAs (their panels: one CTA per SM) and
# found ld 24 and 16 worse with 133 or 256 (bench/results/ab/README.md, fifteenth session). Not
# measured since the H100 of 2026-11-24: f32 (panels at every width today; two panel CTAs per SM
# at ld 32, four at ld 16), and the f64 thresholds at the panels' own wave counts (ld 16: two
# CTAs per SM, so 2 × SMs + 1 = 265; ld 24: its CTAs per SM unknown, so 265 and 529 both), and
# for f64 ld 32 whether the groups also win below one wave (65; 1 = groups on every level).
# Sweeps BTCHOL_WIDE_MIN_CTAS on the gpu-check bundle's binary, 3 interleaved rounds; a mode that
# wins a block size everywhere becomes its rule (with a unit test), as in the fifteenth session.
# Here (no GPU): bash scripts/gpu-check.sh bundle   (or an existing .bundle of the current main)
# Device: run(command="bash bench/results/experiments/2026-11-29-wide-threshold-sweep-call.sh", carry=[".bundle"])
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
use_gpu_check_bundle
modes="default 1 65 133 265 529"
for round in 1 2 3; do
    for mode in $modes; do
        for dt in f32 f64; do
            ns=$([ "$dt" = f32 ] && echo 8,16,32 || echo 16,20,24,32)
            setting=(); [ "$mode" = default ] || setting=(BTCHOL_WIDE_MIN_CTAS="$mode")
            env "${setting[@]}" timeout 100 "$B" bench --backend cuda \
                --algorithm nd --dtype "$dt" --rhs device --n "$ns" --N 400,1024,2048,4096,16384 --repeats 20 \
                --warmup 5 --csv "$out/wide-$mode-$dt-$round.csv" > /dev/null 2>&1
        done
        echo -n "$mode/$round "
    done
done
echo
mode_table wide "$modes"
