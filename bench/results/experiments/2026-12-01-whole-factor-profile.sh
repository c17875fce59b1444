#!/usr/bin/env bash
# 2026-12-01: where the whole factor's time goes (it measured 37.9 µs at f64 n = 8, N = 64 against
# the level launches' 34.2, with ~0.4 µs more per block): Nsight Compute on the kernel (source
# counters, warp states) for f64 n = 8 at N = 16 and 64, and memcheck's full log of the
# sanitizer command that returned an error. Patches applied as in 2026-12-01-whole-factor-call.sh.
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
use_gpu_check_bundle
export BTCHOL_WHOLE_SOLVE=1 BTCHOL_WHOLE_FACTOR=1
small="bench --backend cuda --algorithm nd --dtype f64,f32 --n 8,5,16 --N 37,64 --batch 2 --nrhs 3 --repeats 1 --warmup 0"
echo "=== bench alone"; "$B" $small > "$out/bench-alone.log" 2>&1; echo "rc=$?"; tail -5 "$out/bench-alone.log"
echo "=== memcheck"; compute-sanitizer --tool memcheck "$B" $small > "$out/memcheck.log" 2>&1; echo "rc=$?"
grep -v "^=========     " "$out/memcheck.log" | head -40
export BTCHOL_NVRTC_LINEINFO=1
for N in 16 64; do
    echo "=== ncu N=$N"
    timeout 200 ncu --clock-control none -k regex:factor_whole --launch-skip 5 --launch-count 1 --set full --import-source yes \
        -f -o "$out/wf-$N" "$B" bench --backend cuda --algorithm nd --dtype f64 --n 8 --N $N --batch 1 --nrhs 1 \
        --repeats 10 --warmup 2 > "$out/ncu-$N.log" 2>&1; echo "rc=$?"; tail -3 "$out/ncu-$N.log"
    ncu --import "$out/wf-$N.ncu-rep" --page details > "$out/wf-$N-details.txt" 2>&1
    grep -E "Duration|Elapsed Cycles|Registers|Achieved Occupancy|Stall|No Eligible|Issued Warp" "$out/wf-$N-details.txt" | head -20
    ncu --import "$out/wf-$N.ncu-rep" --page source --csv --print-source cuda > "$out/wf-$N-source.csv" 2>&1 || true
    head -c 600 "$out/wf-$N-source.csv"; echo
done
