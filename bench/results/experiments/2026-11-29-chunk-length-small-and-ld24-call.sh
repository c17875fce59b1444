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
for round in 1 2; do
    for mode in $modes; do
        BTCHOL_CHUNK="$mode" timeout 25 "$B" bench --backend cuda --algorithm nd --dtype f64,f32 --rhs device \
            --n 4,24 --N 2048,16384 --repeats 20 --warmup 5 --csv "$out/chunks-$mode-$round.csv" > /dev/null 2>&1
        echo -n "$mode/$round rc=$? "
    done
done
echo
python3 -c 'import csv,glob,sys; r=[x for f in glob.glob(sys.argv[1]+"/chunks-*.csv") for x in csv.DictReader(open(f))]; print(len(r), "rows; worst backward error f64", max(float(x["backward_error"]) for x in r if x["dtype"]=="f64"), "f32", max(float(x["backward_error"]) for x in r if x["dtype"]=="f32"))' "$out"
mode_table chunks "$modes"
