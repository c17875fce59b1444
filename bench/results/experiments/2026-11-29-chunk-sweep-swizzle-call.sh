#!/usr/bin/env bash
# The chunk sweeps' swizzled blocks against main's padded ones (fourteenth session), two sides:
# a = main (547859c's kernels: blocks padded by one 16-byte piece, SEQ_SLD; the gpu-check bundle's
# binary and kernel cache, .bundle/btchol); b = exp-swizzle (blocks unpadded, each column's 16-byte
# pieces permuted: sequential.cu SEQ_SWIZZLE_OK / block_at, chunks.cu CHS_LD; jit.rs chunk_block_ld).
# Why: f32 blocks of 32 padded by 4 floats need 28.3 KB a sweep CTA, one CTA per SM fewer than
# the 26 KB of the old ld + 1 layout, and the f32 n = 32, N = 16384 solve lost 4 % with it
# (bench/results/ab/README.md, thirteenth session); swizzled, 25.2 KB. Same arithmetic in the same
# order: same bits expected.
# Here (no GPU): scripts/gpu-check.sh bundle (main), then .bundle-ab/btchol-b, kcache-b.tgz, ref-b
# from exp-swizzle (as scripts/gpu-ab.sh bundle builds a side).
#   bash THIS corr   correctness: bits side by side, backward errors, memcheck on b (GPU-light:
#                    runs beside gpu-check's tests)
#   bash THIS time   timing, interleaved rounds (alone on the GPU)
# Device (one call, with the gpu-check tests2 half):
#   run(command="o=$OUT; (OUT=$o/swz bash bench/results/experiments/2026-11-29-chunk-sweep-swizzle-call.sh corr > $o/swz-corr.log 2>&1) & bash scripts/gpu-check.sh run tests2; wait; cat $o/swz-corr.log; OUT=$o/swz bash bench/results/experiments/2026-11-29-chunk-sweep-swizzle-call.sh time",
#       carry=[".bundle", ".bundle-ab"])
set -uo pipefail
cd "$(dirname "$0")/../../.."
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PATH=/usr/local/cuda/bin:$PATH
out=${OUT:-.bundle-ab/out}; mkdir -p "$out"
# Side a from the gpu-check bundle (same kernels as main), so the carry holds one binary fewer.
[ -x .bundle-ab/btchol-a ] || cp .bundle/btchol .bundle-ab/btchol-a
[ -f .bundle-ab/kcache-a.tgz ] || cp .bundle/kcache.tgz .bundle-ab/kcache-a.tgz
[ -f .bundle-ab/ref-a ] || echo "main $(cat .bundle/commit)" > .bundle-ab/ref-a
nvidia-smi --query-gpu=name --format=csv,noheader
for s in a b; do mkdir -p /tmp/btchol-ab-$s; [ -f .bundle-ab/kcache-$s.tgz ] && tar xzf .bundle-ab/kcache-$s.tgz -C /tmp/btchol-ab-$s; done
run_side() { local s=$1; shift; BTCHOL_CACHE_DIR=/tmp/btchol-ab-$s timeout 90 ".bundle-ab/btchol-$s" "$@"; }
corr="bench --backend cuda --algorithm nd --rhs device --repeats 1 --warmup 0"
if [ "${1:-}" = corr ]; then
    # Chunks of 3 (many steps, a short last chunk), odd n, n = 20 and 24 (padded, not swizzled, at
    # f64), batches, several right-hand sides; then the plan's own partitions.
    for s in a b; do
        BTCHOL_CHUNK=3 run_side $s $corr --dtype f64,f32 --n 32,29,24,20,16,8,3 --N 37,64 --batch 1,3 --nrhs 1,3 \
            --csv "$out/corr-$s.csv" > /dev/null 2>&1; echo "side $s chunks=3 rc=$?"
        run_side $s $corr --dtype f64,f32 --n 32,16 --N 4096,16384 --batch 1 --nrhs 1,4 \
            --csv "$out/corr-$s-default.csv" > /dev/null 2>&1; echo "side $s default rc=$?"
    done
    python3 scripts/ab-same-bits.py "$out" "" -default  # (the 2026-11-29 run compared the same inline)
    # memcheck (the new layout's shared-memory bounds) on b, chunks of 3.
    BTCHOL_CACHE_DIR=/tmp/btchol-ab-b BTCHOL_CHUNK=3 timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 \
        .bundle-ab/btchol-b $corr --dtype f64,f32 --n 32,16,8 --N 37 --batch 2 --nrhs 2 > "$out/san-b-memcheck.log" 2>&1
    echo "side b memcheck rc=$? $(tail -1 "$out/san-b-memcheck.log")"
elif [ "${1:-}" = time ]; then
    AB_ROUNDS=3 OUT=$out/nd timeout 150 bash scripts/gpu-ab.sh run --backend cuda --algorithm nd --dtype f32,f64 \
        --n 32,16 --N 16384 --rhs device --repeats 30
else
    echo "usage: $0 corr|time"; exit 2
fi
(cd "$out" && tar czf /tmp/swz-$1.tgz . && find . -mindepth 1 -delete && mv /tmp/swz-$1.tgz .)
