#!/usr/bin/env bash
# The GPU benchmark sweep of issue 5, on the GPU machine, in parts that each fit one device call:
#
#   scripts/bench-gpu.sh single   cuda, nd, f64+f32, n in {8,16,32,64,128}, N = 2..16384 (powers of 2)
#   scripts/bench-gpu.sh batch    cuda, nd and seq, the issue's batch shapes: B=1024 N=32 n=16 and
#                                 B=256 N=128 n=32
#   (GPU rows solve right-hand sides in GPU memory, --rhs device, as the cuDSS and socu solve times
#   of issue 5 do; RHS=host measures the host-to-host solve instead.)
#   scripts/bench-gpu.sh cpu      the CPU backend of the same machine on the same shapes (N <= $CPU_MAX_N,
#                                 default 4096; seq and nd, all cores), for the speed-up plot
#   scripts/bench-gpu.sh all      all three
#   scripts/bench-gpu.sh calibrate  btchol calibrate (every target on this machine) to
#                                 $OUT/calibration-<device-slug>-<date>.csv (copy it to
#                                 bench/calibration/measured/, run scripts/calibration_from_results.py),
#                                 then btchol calibrate --check with that table to
#                                 $OUT/auto-check-<device-slug>-<date>.csv (for bench/results/)
#
# Each part writes $OUT/parts/<part>.csv (OUT defaults to .bundle/out), then every part present is
# merged into $OUT/<device-slug>-<UTC date>.csv (one header). Copy that file to bench/results/ and
# run scripts/plots.py on it (the CPU rows in it feed the speed-up plot).
# Binary: $BTCHOL, default .bundle/btchol (scripts/gpu-check.sh bundle builds it); quick runs:
# REPEATS=5 sets --repeats (default: the bench's adaptive repeats).
set -euo pipefail
cd "$(dirname "$0")/.."
part=${1:-all}
BTCHOL=${BTCHOL:-.bundle/btchol}
out=${OUT:-.bundle/out}
mkdir -p "$out/parts"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export BTCHOL_CACHE_DIR=${BTCHOL_CACHE_DIR:-/tmp/btchol-cache}
# (the kernels compiled into the bundle, scripts/gpu-check.sh bundle: no device time on NVRTC)
[ -f .bundle/kcache.tgz ] && mkdir -p "$BTCHOL_CACHE_DIR" && tar xzf .bundle/kcache.tgz -C "$BTCHOL_CACHE_DIR"
reps=(); [ -n "${REPEATS:-}" ] && reps=(--repeats "$REPEATS")
rhs=(--rhs "${RHS:-device}")
Ns=2,4,8,16,32,64,128,256,512,1024,2048,4096,8192,16384
CPU_MAX_N=${CPU_MAX_N:-4096}
cpuNs=$(echo "$Ns" | tr , '\n' | awk -v m="$CPU_MAX_N" '$1 <= m' | paste -sd,)

run_single() {
    "$BTCHOL" bench --backend cuda --algorithm nd --dtype f64,f32 --n 8,16,32,64,128 --N "$Ns" \
        "${rhs[@]}" "${reps[@]}" --csv "$out/parts/single.csv"
}
run_batch() {
    "$BTCHOL" bench --backend cuda --algorithm nd,seq --dtype f64,f32 --batch 1024 --N 32 --n 16 "${rhs[@]}" "${reps[@]}" \
        --csv "$out/parts/batch-1024x32x16.csv"
    "$BTCHOL" bench --backend cuda --algorithm nd,seq --dtype f64,f32 --batch 256 --N 128 --n 32 "${rhs[@]}" "${reps[@]}" \
        --csv "$out/parts/batch-256x128x32.csv"
}
run_cpu() {
    local r=("${reps[@]}"); [ ${#r[@]} -eq 0 ] && r=(--repeats 5 --warmup 1)
    "$BTCHOL" bench --backend cpu --algorithm seq,nd --threads 0 --dtype f64,f32 --n 8,16,32,64,128 \
        --N "$cpuNs" "${r[@]}" --csv "$out/parts/cpu-single.csv"
    "$BTCHOL" bench --backend cpu --algorithm seq,nd --threads 0 --dtype f64,f32 --batch 1024 --N 32 --n 16 \
        "${r[@]}" --csv "$out/parts/cpu-batch-1024x32x16.csv"
    "$BTCHOL" bench --backend cpu --algorithm seq,nd --threads 0 --dtype f64,f32 --batch 256 --N 128 --n 32 \
        "${r[@]}" --csv "$out/parts/cpu-batch-256x128x32.csv"
}
device=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || true)
slug=$(echo "${device:-gpu}" | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9]\+/-/g; s/^-//; s/-$//')
if [ "$part" = calibrate ]; then
    table="$out/calibration-$slug-$(date -u +%F).csv"
    # The grid that fits one device call (~120 s on the H100 host; the full default grid does not).
    "$BTCHOL" calibrate --out "$table" --n 8,16,32,64 --N 2,8,32,128,512,2048 --batch 1,16,1024 --dtype f64 \
        --max-us 20000 --repeats 3 --warmup 1
    # Off the table's N values, so interpolation is checked too (~250 s).
    "$BTCHOL" calibrate --check --table "$table" --n 8,16,32,64 --N 4,16,64,256,1024 --batch 1,16,1024 \
        --dtype f64 --out "$out/auto-check-$slug-$(date -u +%F).csv"
    exit
fi
case "$part" in
    single) run_single ;;
    batch) run_batch ;;
    cpu) run_cpu ;;
    all) run_single; run_batch; run_cpu ;;
    *) echo "usage: $0 single|batch|cpu|all|calibrate"; exit 2 ;;
esac

merged="$out/$slug-$(date -u +%F).csv"
first=1
for f in "$out"/parts/*.csv; do
    [ -s "$f" ] || continue
    if [ $first = 1 ]; then cat "$f"; first=0; else tail -n +2 "$f"; fi
done > "$merged"
echo "merged $(($(wc -l < "$merged") - 1)) rows into $merged"
