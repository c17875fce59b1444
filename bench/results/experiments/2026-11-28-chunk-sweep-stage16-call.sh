#!/usr/bin/env bash
# One device call (thirteenth session, ~8 min), four sides: a = main; b = the solve's chunk sweeps staged by 16-byte
# cp.async into a leading dimension padded by one 16-byte piece, the transposed products reading
# 16 bytes per load (exp-stage16: kernels/chunks.cu CHS_VEC, sequential.cu stage_block<DST_LD>),
# against main. Why: Nsight Compute on the H200 (2026-11-28) found main's sweeps issue-bound, not
# bandwidth-bound: one warp per scheduler, 22.8 % issue slots busy, 60 % of the instructions the
# 8-byte copies' address arithmetic. c = b plus the chunk factor's spike warp doing its Σ_S update
# inside the next step's window (exp-sigma): in main's profile the chain warp waited for it at
# READY 18 % of its time. d = c plus one padded layout rule (SEQ_SLD) for the per-item sequential
# solves too: 16-byte staging and column loads there as well (exp-seq16). Same arithmetic in the
# same order on every side, so the same bits.
# Here (no GPU): bash scripts/gpu-ab.sh bundle main exp-stage16 exp-sigma exp-seq16
# Device, two calls (each under 10 min): run(command="bash bench/results/experiments/2026-11-28-chunk-sweep-stage16-call.sh check",
# carry=[".bundle-ab"]): steps 1-3; then the same with "time": step 4.
set -uo pipefail
cd "$(dirname "$0")/../../.."
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PATH=/usr/local/cuda/bin:$PATH
out=${OUT:-.bundle-ab/out}; mkdir -p "$out"
nvidia-smi --query-gpu=name --format=csv,noheader
for s in a b c d; do mkdir -p /tmp/btchol-ab-$s; [ -f .bundle-ab/kcache-$s.tgz ] && tar xzf .bundle-ab/kcache-$s.tgz -C /tmp/btchol-ab-$s; done
part=${1:-check}
run_side() { local s=$1; shift; BTCHOL_CACHE_DIR=/tmp/btchol-ab-$s timeout 120 ".bundle-ab/btchol-$s" "$@"; }
if [ "$part" = check ]; then
# 1. Correctness: chunk sweeps at small N (chunks of 3, a short last chunk, odd n, batches, several
#    right-hand sides) and the plan's own partitioned shapes; solutions' bits side by side.
corr="bench --backend cuda --algorithm nd --rhs device --repeats 1 --warmup 0"
seq="bench --backend cuda --algorithm seq --rhs device --repeats 1 --warmup 0 --dtype f64,f32 --n 32,29,16,8,3 --N 1,2,37 --nrhs 1,3"
for s in a b c d; do
    BTCHOL_CHUNK=3 run_side $s $corr --dtype f64,f32 --n 32,29,16,8,3 --N 37,64 --batch 1,3 --nrhs 1,3 \
        --csv "$out/corr-$s.csv" > /dev/null 2>&1; echo "side $s chunks=3 rc=$?"
    run_side $s $corr --dtype f64,f32 --n 32,16 --N 4096,16384 --batch 1 --nrhs 1,4 \
        --csv "$out/corr-$s-default.csv" > /dev/null 2>&1; echo "side $s default rc=$?"
    # the per-item sequential solves: with helper warps (small batches), one warp (large ones, one
    # stage and two)
    run_side $s $seq --batch 3 --csv "$out/corr-$s-seqinv.csv" > /dev/null 2>&1; echo "side $s seq-inv rc=$?"
    BTCHOL_SEQ_INV_SOLVE=0 BTCHOL_SEQ_SOLVE_STAGES=1 run_side $s $seq --batch 3 --csv "$out/corr-$s-seq1.csv" > /dev/null 2>&1
    echo "side $s seq 1-stage rc=$?"
    BTCHOL_SEQ_INV_SOLVE=0 BTCHOL_SEQ_SOLVE_STAGES=2 run_side $s $seq --batch 3 --csv "$out/corr-$s-seq2.csv" > /dev/null 2>&1
    echo "side $s seq 2-stage rc=$?"
done
python3 - "$out" <<'PY'
import csv, sys
out = sys.argv[1]
for tag in ("", "-default", "-seqinv", "-seq1", "-seq2"):
    a, b, c, d = ({(r["dtype"], r["n"], r["N"], r["batch"], r["nrhs"]): r for r in csv.DictReader(open(f"{out}/corr-{s}{tag}.csv"))}
                  for s in "abcd")
    for name, x in (("b", b), ("c", c), ("d", d)):
        diff = [k for k in x if k in a and a[k]["solution_sha256"] != x[k]["solution_sha256"]]
        worst = max(float(r["backward_error"]) / (1e-15 if r["dtype"] == "f64" else 1e-6) for r in x.values())
        print(f"corr{tag}: {len(x)} rows on {name} ({len(a)} on a), {len(diff)} with other bits {diff[:6]}; worst backward error {worst:.2f} x")
PY
# 2. Sanitizers on side d (every change: b's sweeps, c's factor, d's sequential solves) (chunks of 3:
#    many chunk steps in a short run).
for tool in memcheck racecheck synccheck; do
    BTCHOL_CACHE_DIR=/tmp/btchol-ab-d BTCHOL_CHUNK=3 timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 \
        .bundle-ab/btchol-d $corr --dtype f64 --n 32,16 --N 37 --batch 2 --nrhs 2 > "$out/san-d-$tool.log" 2>&1
    echo "side d nd $tool rc=$? $(tail -1 "$out/san-d-$tool.log")"
    for inv in 0 1; do
        BTCHOL_CACHE_DIR=/tmp/btchol-ab-d BTCHOL_SEQ_INV_SOLVE=$inv timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 \
            .bundle-ab/btchol-d bench --backend cuda --algorithm seq --rhs device --repeats 1 --warmup 0 --dtype f64 \
            --n 32,16 --N 9 --batch 2 --nrhs 2 > "$out/san-d-seq$inv-$tool.log" 2>&1
        echo "side d seq (inv=$inv) $tool rc=$? $(tail -1 "$out/san-d-seq$inv-$tool.log")"
    done
done
# 3. Side d's forward sweep under Nsight Compute and side c's chunk factor (instructions, issue, duration against the
#    H200 profile of main: 29.2 M instructions, 22.8 % issue slots busy, 125 µs).
BTCHOL=.bundle-ab/btchol-d OUT=$out/prof timeout 120 bash scripts/gpu-profile.sh btchol_forward_chunks_small --backend cuda \
    --algorithm nd --dtype f64 --n 32 --N 16384 > "$out/prof-d-forward.txt" 2>&1
BTCHOL=.bundle-ab/btchol-c OUT=$out/prof timeout 120 bash scripts/gpu-profile.sh btchol_factor_chunks_small --backend cuda \
    --algorithm nd --dtype f64 --n 32 --N 16384 > "$out/prof-c-factor.txt" 2>&1
rm -rf "$out/prof"
for f in prof-d-forward prof-c-factor; do
    echo "$f: $(grep -E ' Duration|Issue Slots Busy|Executed Instructions  |DRAM Throughput|Warp Cycles Per Issued' "$out/$f.txt" | tr -s ' ' | tr '\n' ';')"
done
fi
if [ "$part" = time ]; then
# 4. Timing, interleaved rounds (a's and b's chunk factor differ only in the 16-byte staging).
AB_ROUNDS=3 OUT=$out/nd timeout 300 bash scripts/gpu-ab.sh run --backend cuda --algorithm nd --dtype f64,f32 --n 32,16 \
    --N 1024,4096,16384 --rhs device --repeats 30
# (the per-item sequential factor stages D and E by 16-byte copies on b and c too)
AB_ROUNDS=2 OUT=$out/seq timeout 200 bash scripts/gpu-ab.sh run --backend cuda --algorithm seq --dtype f64,f32 --n 16,32 \
    --N 32,128 --batch 256,1024 --rhs device --repeats 20
fi
(cd "$out" && tar czf /tmp/results.tgz . && find . -mindepth 1 -delete && mv /tmp/results.tgz .)
