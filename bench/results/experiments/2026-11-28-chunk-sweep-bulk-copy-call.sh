#!/usr/bin/env bash
# One device call (written in the twelfth session, not yet run; ~6 min): the chunk sweeps' blocks
# staged by bulk (TMA) copies, one cp.async.bulk per column and block with an mbarrier per stage
# buffer (2026-11-28-chunk-sweep-bulk-copy.patch: kernels/chunks.cu CHS_BULK, f64 blocks of 32 on
# sm_90, leading dimension ld + 2; src/cuda/jit.rs sizes the buffers for it), against main.
# Hypothesis: the sweeps' ~2.6 TB/s (H200; 128 + 120 µs of the f64 n = 32, N = 16384 solve) is
# capped by per-SM outstanding L1 requests of the 8-byte cp.async copies, which bulk copies
# bypass. Same arithmetic in the same order, so the solutions must have the same bits.
# Here (no GPU), from a clean tree on main:
#   git checkout -b exp-chunk-bulk && git apply bench/results/experiments/2026-11-28-chunk-sweep-bulk-copy.patch \
#     && git commit -qam "chunk sweeps: bulk copies" && git checkout main
#   bash scripts/gpu-ab.sh bundle main exp-chunk-bulk      # side a = main, b = the patch (~20 min: NVRTC)
# Device: run(command="bash bench/results/experiments/2026-11-28-chunk-sweep-bulk-copy-call.sh", carry=[".bundle-ab"])
set -uo pipefail
cd "$(dirname "$0")/../../.."
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PATH=/usr/local/cuda/bin:$PATH
out=${OUT:-.bundle-ab/out}; mkdir -p "$out"
nvidia-smi --query-gpu=name --format=csv,noheader
for s in a b; do mkdir -p /tmp/btchol-ab-$s; [ -f .bundle-ab/kcache-$s.tgz ] && tar xzf .bundle-ab/kcache-$s.tgz -C /tmp/btchol-ab-$s; done
run_side() { local s=$1; shift; BTCHOL_CACHE_DIR=/tmp/btchol-ab-$s ".bundle-ab/btchol-$s" "$@"; }
# 1. Correctness: chunk sweeps at small N (chunks of 3, a short last chunk, odd n, batches, several
#    right-hand sides) and the plan's own partitioned shapes; solutions' bits side by side.
corr="bench --backend cuda --algorithm nd --rhs device --repeats 1 --warmup 0"
for s in a b; do
    BTCHOL_CHUNK=3 timeout 120 run_side $s $corr --dtype f64,f32 --n 32,29,16 --N 37,64 --batch 1,3 --nrhs 1,3 \
        --csv "$out/corr-$s.csv" > /dev/null 2>&1; echo "side $s chunks=3 rc=$?"
    timeout 120 run_side $s $corr --dtype f64 --n 32 --N 4096,16384 --batch 1 --nrhs 1,4 \
        --csv "$out/corr-$s-default.csv" > /dev/null 2>&1; echo "side $s default rc=$?"
done
python3 - "$out" <<'PY'
import csv, sys
out = sys.argv[1]
for tag in ("", "-default"):
    a, b = ({(r["dtype"], r["n"], r["N"], r["batch"], r["nrhs"]): r for r in csv.DictReader(open(f"{out}/corr-{s}{tag}.csv"))}
            for s in "ab")
    diff = [k for k in b if k in a and a[k]["solution_sha256"] != b[k]["solution_sha256"]]
    worst = max(float(r["backward_error"]) / (1e-15 if r["dtype"] == "f64" else 1e-6) for r in b.values())
    print(f"corr{tag}: {len(b)} rows on b, {len(diff)} with other bits {diff[:6]}; worst backward error {worst:.2f} x")
PY
# 2. Sanitizers on side b's sweeps (chunks of 3: many chunk steps in a short run).
for tool in memcheck racecheck synccheck; do
    BTCHOL_CACHE_DIR=/tmp/btchol-ab-b BTCHOL_CHUNK=3 timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 \
        .bundle-ab/btchol-b $corr --dtype f64 --n 32,29 --N 37 --batch 2 --nrhs 2 > "$out/san-b-$tool.log" 2>&1
    echo "side b $tool rc=$? $(tail -1 "$out/san-b-$tool.log")"
done
# 3. Timing, interleaved rounds (the factor is the same code on both sides: its ratio is the noise).
AB_ROUNDS=3 OUT=$out timeout 200 bash scripts/gpu-ab.sh run --backend cuda --algorithm nd --dtype f64,f32 --n 32,16 \
    --N 4096,16384 --rhs device --repeats 30
(cd "$out" && tar czf /tmp/results.tgz . && find . -mindepth 1 -delete && mv /tmp/results.tgz .)
