#!/usr/bin/env bash
# The chunk factor's products by a tile per lane (fourteenth session; written and compiled, not
# run: no device time left). Kernel-only variants of kernels/chunks.cu, one binary, four sides:
#   a = main;
#   b = 2026-11-29-chunk-factor-sigma-order.patch: the spike warp's Σ_S −= Y·Yᵀ moved to the
#       start of its READY → FREE window (before y is formed: y no longer live across it);
#   c = 2026-11-29-chunk-factor-sigma-tile.patch: b, and that update by syrk_tile (lane owns an
#       (LD/4)×(LD/8) tile: 6 shared loads per q instead of 17 at LD = 32, Y's rows stored so that
#       they are conflict-free, sy_row);
#   d = 2026-11-29-chunk-factor-chain-tile.patch: c, and the chain warp's D_{b+1} −= X_b·X_bᵀ by
#       syrk_tile in place in the staged block, then its rows loaded (on the critical path).
# Why: the chunk factor (68 % of the f64 n = 32, N = 16384 factor) had L1/TEX 73 % busy, the
# busiest unit (Nsight Compute, H200, 2026-11-29; experiments/README.md, fourteenth session). Same
# FMAs in the same order per element on every side: same bits expected. Static SASS (NVRTC 13.0,
# sm_90, f64 LD 32): spike's Σ loop 24 shared loads per 4 q against 68; registers 255 all sides,
# stack 80 B (a) / 96 (b) / 104 (c, d); f32 LD 32: 191 → 199 registers, no spills.
# Here (no GPU):  scripts/gpu-ab.sh bundle-kernels . bench/results/experiments/2026-11-29-chunk-factor-{sigma-order,sigma-tile,chain-tile}.patch
#                 (one build, each side's kernels compiled for sm_90, ~25 min on 2 cores)
# Device (one call, ~5 min):
#   run(command="bash bench/results/experiments/2026-11-29-chunk-factor-tile-call.sh corr && bash bench/results/experiments/2026-11-29-chunk-factor-tile-call.sh time", carry=[".bundle-ab"])
set -uo pipefail
cd "$(dirname "$0")/../../.."
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PATH=/usr/local/cuda/bin:$PATH
out=${OUT:-.bundle-ab/out}; mkdir -p "$out"
sides=$(cd .bundle-ab && ls -d kernels-* | sed 's/kernels-//')
nvidia-smi --query-gpu=name --format=csv,noheader
for s in $sides; do mkdir -p /tmp/btchol-ab-$s; [ -f .bundle-ab/kcache-$s.tgz ] && tar xzf .bundle-ab/kcache-$s.tgz -C /tmp/btchol-ab-$s; done
run_side() { local s=$1; shift; BTCHOL_CACHE_DIR=/tmp/btchol-ab-$s BTCHOL_KERNEL_DIR=.bundle-ab/kernels-$s timeout 120 .bundle-ab/btchol "$@"; }
corr="bench --backend cuda --algorithm nd --rhs device --repeats 1 --warmup 0"
case ${1:-} in
corr)
    # Chunks of 3 (many steps, a short last chunk; every tile shape: ld 8, 16, 24, 32, and the
    # fallback at ld 4), batches, several right-hand sides; then the plan's own partitions.
    for s in $sides; do
        BTCHOL_CHUNK=3 run_side $s $corr --dtype f64,f32 --n 32,29,24,20,16,12,8,3 --N 37,64 --batch 1,3 --nrhs 1,3 \
            --csv "$out/corr-$s.csv" > /dev/null 2>&1; echo "side $s chunks=3 rc=$?"
        run_side $s $corr --dtype f64,f32 --n 32,16 --N 4096,16384 --batch 1 --nrhs 1,4 \
            --csv "$out/corr-$s-default.csv" > /dev/null 2>&1; echo "side $s default rc=$?"
    done
    python3 scripts/ab-same-bits.py "$out" "" -default
    # Sanitizers on the last side (it holds every change): chunks of 3, both tile paths.
    last=$(echo $sides | awk '{print $NF}')
    for tool in memcheck racecheck synccheck; do
        BTCHOL_CACHE_DIR=/tmp/btchol-ab-$last BTCHOL_KERNEL_DIR=.bundle-ab/kernels-$last BTCHOL_CHUNK=3 timeout 90 \
            compute-sanitizer --tool $tool --error-exitcode 9 .bundle-ab/btchol $corr --dtype f64,f32 --n 32,24,16,8 \
            --N 37 --batch 2 --nrhs 2 > "$out/san-$last-$tool.log" 2>&1
        echo "side $last $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/san-$last-$tool.log" | tail -1)"
    done ;;
time)
    AB_ROUNDS=3 OUT=$out/nd timeout 300 bash scripts/gpu-ab.sh run --backend cuda --algorithm nd --dtype f64,f32 \
        --n 32,16 --N 4096,16384 --rhs device --repeats 30 ;;
*)
    echo "usage: $0 corr|time"; exit 2 ;;
esac
(cd "$out" && tar czf /tmp/tile-$1.tgz . && find . -mindepth 1 -delete && mv /tmp/tile-$1.tgz .)
