#!/usr/bin/env bash
# 2026-12-01: the whole small-block solve in one CTA per item (kernels/small.cu
# btchol_solve_whole_small): its GPU tests (default and forced everywhere it fits), the three
# sanitizers over it, and an A/B against the per-level launches / tail / cluster solve
# (BTCHOL_WHOLE_SOLVE=0), plus plain nested dissection where the plan partitions (n ≤ 8 from
# N = 128). One device call, the gpu-check bundle carried:
#   run(command="bash bench/results/experiments/2026-12-01-whole-solve-call.sh", carry=[".bundle"])
# Run as it stands on the landed kernel (bench/results/ab/nvidia-h200-2026-12-01-whole-solve-ab.csv,
# ~30 s of device time). The staged variant and the whole factor are measured by
# 2026-12-01-whole-factor-call.sh instead.
set -uo pipefail
cd "$(dirname "$0")/../../.."
[ -f .bundle/payload.txz ] && tar xJf .bundle/payload.txz -C .bundle
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PATH=/usr/local/cuda/bin:$PATH
export BTCHOL_REQUIRE_GPU=1 BTCHOL_CACHE_DIR=/tmp/btchol-cache BTCHOL_BIN=$PWD/.bundle/btchol
out=${OUT:-.bundle/out}; mkdir -p "$out"
mkdir -p "$BTCHOL_CACHE_DIR" && tar xzf .bundle/kcache.tgz -C "$BTCHOL_CACHE_DIR"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
t=$(ls .bundle/tests/gpu_solve-*)
echo "=== test (default rule)"; $t small_systems 2>&1 | tail -4
echo "=== gpu_solve, whole solve forced"; BTCHOL_WHOLE_SOLVE=1 timeout 200 $t 2>&1 | grep -E "test result|FAILED|panicked" | head -20
san="compute-sanitizer --error-exitcode=1"
small="bench --backend cuda --algorithm nd --dtype f64,f32 --n 8,5,16 --N 37,64 --batch 2 --nrhs 3 --repeats 1 --warmup 0"
for tool in memcheck racecheck synccheck; do
    echo "=== $tool"; BTCHOL_WHOLE_SOLVE=1 $san --tool $tool .bundle/btchol $small 2>&1 | tail -2
done
echo "=== A/B"
bash scripts/gpu-env-ab.sh 2 levels=BTCHOL_WHOLE_SOLVE=0 whole=BTCHOL_WHOLE_SOLVE=1 plainwhole=BTCHOL_WHOLE_SOLVE=1,BTCHOL_CHUNK=0 -- \
    --backend cuda --algorithm nd --dtype f64,f32 --n 8,16,32 --N 2,8,32,64,128,512 --batch 1 --nrhs 1 --rhs device --repeats 200
cp "$out/env-ab.csv" "$out/whole-solve-ab.csv" 2>/dev/null
