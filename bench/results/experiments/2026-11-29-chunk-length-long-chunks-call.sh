#!/usr/bin/env bash
# One short device call (~1 min; sixteenth session): where chunks of 31 take over from 15 (N = 12288)
# and whether 63 does at N = 32768, n = 16 and 32; after the two chunk-length calls of 2026-11-29.
# BTCHOL_CHUNK varied, 2 interleaved rounds.
# Device: run(command="bash bench/results/experiments/2026-11-29-chunk-length-long-chunks-call.sh", carry=[".bundle"])
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
use_gpu_check_bundle
modes="15 31 63"
for round in 1 2; do
    for mode in $modes; do
        BTCHOL_CHUNK="$mode" timeout 25 "$B" bench --backend cuda --algorithm nd --dtype f64,f32 --rhs device \
            --n 16,32 --N 12288,32768 --repeats 20 --warmup 5 --csv "$out/chunks-$mode-$round.csv" > /dev/null 2>&1
        echo -n "$mode/$round rc=$? "
    done
done
echo
python3 -c 'import csv,glob,sys; r=[x for f in glob.glob(sys.argv[1]+"/chunks-*.csv") for x in csv.DictReader(open(f))]; print(len(r), "rows; worst backward error f64", max(float(x["backward_error"]) for x in r if x["dtype"]=="f64"), "f32", max(float(x["backward_error"]) for x in r if x["dtype"]=="f32"))' "$out"
mode_table chunks "$modes"
