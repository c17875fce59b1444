#!/usr/bin/env bash
# The whole GPU test and benchmark suite: one bundle built here, run on the GPU machine in one
# device call (see below).
#
#   scripts/gpu-check.sh bundle   (here, no GPU needed) build release test binaries and the bench
#                                 binary, strip them and put them in .bundle/ (git-ignored)
#   scripts/gpu-check.sh run      (on the GPU machine, from the repository root) run every GPU
#                                 test with BTCHOL_REQUIRE_GPU=1, compute-sanitizer memcheck and
#                                 racecheck on small, medium and large problems (synccheck too on
#                                 the sequential warp pair), the Python binding's tests against
#                                 the bundled libbtchol.so, and a short benchmark;
#                                 prints one summary line. Bench CSVs and logs.tgz (every step's
#                                 log) go to $OUT (or .bundle/out).
#   scripts/gpu-check.sh run tests|checks
#                                 only the tests (warm-up, test binaries, Python binding), or only
#                                 the sanitizers and benchmarks. The whole takes ~4 min on the H200
#                                 (2026-11-29, commit 9bf47a1: tests 49 s, checks ~2.5 min), one
#                                 device call. (It took ~17 min in three calls, the tests in two
#                                 halves, until the CUDA context was kept per process: every test
#                                 plan created it again.)
#   GPU_CHECK_ONLY=REGEX          only the steps whose names match (an extended regex), e.g. to
#                                 finish a run that a call's time limit cut short
#
# Device call (see README, contributing):  run(command="bash scripts/gpu-check.sh run", carry=[".bundle"])
set -uo pipefail
cd "$(dirname "$0")/.."
mode=${1:-bundle}

if [ "$mode" = bundle ]; then
    set -e
    rm -rf .bundle && mkdir -p .bundle/tests
    cargo build --release --bin btchol
    cargo test --release --no-run --message-format=json 2>/dev/null \
        | python3 -c 'import json,sys
for l in sys.stdin:
    try: m=json.loads(l)
    except Exception: continue
    if m.get("profile",{}).get("test") and m.get("executable"): print(m["executable"])' \
        | while read -r exe; do cp "$exe" .bundle/tests/; done
    cargo build --release --lib
    cp target/release/btchol target/release/libbtchol.so .bundle/
    # The kernels compiled here for sm_90 (NVRTC 13.0 from PyPI, as the GPU machine's toolkit), so
    # the run does not spend ~1 minute of device time compiling them (a version mismatch only
    # misses the cache). BUNDLE_KERNELS=0 skips it (~3 min on 2 cores).
    # (A fresh checkout has no .venv-nvrtc130: scripts/nvrtc-venv.sh installs it.)
    if [ "${BUNDLE_KERNELS:-1}" = 1 ] && nvrtc=$(bash scripts/nvrtc-venv.sh); then
        rm -rf /tmp/btchol-bundle-kcache
        LD_LIBRARY_PATH="$nvrtc:${LD_LIBRARY_PATH:-}" BTCHOL_CACHE_DIR=/tmp/btchol-bundle-kcache \
            .bundle/btchol kernels --warm --arch sm_90
        tar czf .bundle/kcache.tgz -C /tmp/btchol-bundle-kcache .  # (34 MB of CUBINs, 8 compressed)
    fi
    strip --strip-debug .bundle/btchol .bundle/libbtchol.so .bundle/tests/* 2>/dev/null || true
    # pytest for the Python binding's tests (pure Python; the GPU machine has no network)
    python3 -m pip install -q --target .bundle/pylib pytest
    # The test binaries and pytest as one xz archive: uncompressed they take the bundle past the
    # device tool's 64 MiB carry limit (36 + 14 MB; ~12 MB packed). The run unpacks them.
    tar cJf .bundle/payload.txz -C .bundle tests pylib && rm -rf .bundle/tests .bundle/pylib
    git rev-parse --short HEAD > .bundle/commit 2>/dev/null || true
    du -sh .bundle
    exit 0
fi

[ "$mode" = run ] || { echo "usage: $0 bundle|run [tests|checks]"; exit 2; }
part=${2:-all}
case $part in
    all|tests|checks) ;;
    *) echo "usage: $0 bundle|run [tests|checks]"; exit 2 ;;
esac
[ -d .bundle ] || { echo "no .bundle: run '$0 bundle' first and carry .bundle"; exit 2; }
[ -f .bundle/payload.txz ] && tar xJf .bundle/payload.txz -C .bundle
out=${OUT:-.bundle/out}; mkdir -p "$out"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PATH=/usr/local/cuda/bin:$PATH
export BTCHOL_REQUIRE_GPU=1 BTCHOL_CACHE_DIR=/tmp/btchol-cache BTCHOL_BIN=$PWD/.bundle/btchol
device=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
echo "device: ${device:-none}   commit: $(cat .bundle/commit 2>/dev/null)"
pass=0; fail=0; failed=()
# Step logs go to $logs and, after every step, into one archive $out/logs.tgz: the device tool
# brings back only a few files from $OUT, and a call cut by its time limit still returns the logs.
logs=$(mktemp -d "${TMPDIR:-/tmp}/gpu-check-logs.XXXXXX")
# GPU_CHECK_ONLY (an extended regex over the step names, e.g. 'gpu_partitioned|python') runs only
# the steps it matches: for finishing a run that a device call's time limit cut short.
selected() { [ "$1" = kernels-warm ] || [[ $1 =~ ${GPU_CHECK_ONLY:-.} ]]; }
step() { # step NAME CMD...: run, log to $logs, count
    local name=$1; shift
    selected "$name" || return 0
    echo "=== $name"
    if "$@" >"$logs/$name.log" 2>&1; then pass=$((pass + 1)); tail -n 3 "$logs/$name.log"
    else fail=$((fail + 1)); failed+=("$name"); tail -n 40 "$logs/$name.log"; fi
    tar czf "$out/logs.tgz" -C "$logs" .
}
# The test steps are independent and mostly host-bound (references, plan set-up), so they run
# side by side, $njobs at a time (the GPU machine has 16 cores); each leaves NAME.rc beside its log.
# (Running side by side found a real bug on 2026-11-26: plans zeroed buffers on the legacy default
# stream, src/cuda/runtime.rs sync_legacy_stream; tests/gpu_concurrent.rs covers it now.) The
# sanitizer steps stay one at a time: each tool holds much device memory and time.
njobs=${GPU_CHECK_JOBS:-6}
pstep() { # pstep NAME CMD...: step in the background
    local name=$1; shift
    selected "$name" || return 0
    while [ "$(jobs -rp | wc -l)" -ge "$njobs" ]; do wait -n; done
    ( "$@" >"$logs/$name.log" 2>&1; echo $? >"$logs/$name.rc"
      tar czf "$out/logs.$BASHPID.tgz" -C "$logs" . 2>/dev/null && mv -f "$out/logs.$BASHPID.tgz" "$out/logs.tgz" ) &
}
collect() { # wait for the background steps and count them, in name order
    wait
    local rc name
    for rc in "$logs"/*.rc; do
        [ -e "$rc" ] || continue
        name=$(basename "$rc" .rc)
        echo "=== $name"
        if [ "$(cat "$rc")" = 0 ]; then pass=$((pass + 1)); tail -n 3 "$logs/$name.log"
        else fail=$((fail + 1)); failed+=("$name"); tail -n 40 "$logs/$name.log"; fi
        rm "$rc"
    done
    tar czf "$out/logs.tgz" -C "$logs" .
}

# Warm the kernel cache once so the tests measure nothing but themselves (from the bundle's
# kernels where they match this machine's NVRTC).
[ -f .bundle/kcache.tgz ] && mkdir -p "$BTCHOL_CACHE_DIR" && tar xzf .bundle/kcache.tgz -C "$BTCHOL_CACHE_DIR"
step kernels-warm .bundle/btchol kernels --warm
if [ "$part" != checks ]; then
# The GPU suites take longest: start them first.
for t in .bundle/tests/gpu_* $(ls .bundle/tests/* | grep -v /gpu_); do
    pstep "test-$(basename "$t" | sed 's/-[0-9a-f]*$//')" bash scripts/each-test.sh "$t"
done
# The solve tests again without CUDA graphs (kernels launched one by one).
for t in .bundle/tests/gpu_solve-*; do
    pstep test-gpu_solve-nographs env BTCHOL_CUDA_GRAPHS=0 bash scripts/each-test.sh "$t"
done
# The solve tests again with the whole factor and solve in one CTA forced wherever they fit (by
# default only blocks padded to 8 and f32 blocks padded to 16 take them, src/cuda/whole_*.rs), and
# the feature suites whose options reach the factor's kernel (pivot boosting, masks).
for t in .bundle/tests/gpu_solve-*; do
    pstep test-gpu_solve-whole-forced env BTCHOL_WHOLE_SOLVE=1 BTCHOL_WHOLE_FACTOR=1 bash scripts/each-test.sh "$t"
done
for suite in masks regularize; do
    for t in .bundle/tests/$suite-*; do
        pstep "test-$suite-cuda-whole-forced" env BTCHOL_TEST_BACKEND=cuda BTCHOL_WHOLE_SOLVE=1 BTCHOL_WHOLE_FACTOR=1 \
            bash scripts/each-test.sh "$t"
    done
done
# factor_solve's test again with the forward substitution fused into the f32 sequential factor
# too (by default f64 only).
for t in .bundle/tests/gpu_solve-*; do
    pstep test-gpu_solve-fused-f32 env BTCHOL_SEQ_FUSED_FORWARD=1 bash scripts/each-test.sh "$t" factor_solve_device
done
# The partitioned tests again with the chunk levels as per-level launches instead of the chunk kernel.
for t in .bundle/tests/gpu_partitioned-*; do
    pstep test-gpu_partitioned-level-launches env BTCHOL_CHUNK_KERNEL=0 bash scripts/each-test.sh "$t"
done
# The sequential tests again with the one-warp factor and solve forced (by default batches of at
# most two items per SM take the warp-pair factor and the solve with helper warps, so the small
# shapes would not reach them).
for t in .bundle/tests/gpu_features-*; do
    pstep test-gpu_features-seq-one-warp env BTCHOL_SEQ_PAIR=0 BTCHOL_SEQ_INV_SOLVE=0 bash scripts/each-test.sh "$t" sequential
    # and the one-warp factor's and solve's single-stage forms (by default only for batches that
    # they make resident and two stages do not)
    pstep test-gpu_features-seq-one-stage env BTCHOL_SEQ_PAIR=0 BTCHOL_SEQ_INV_SOLVE=0 BTCHOL_SEQ_FACTOR_STAGES=1 \
        BTCHOL_SEQ_SOLVE_STAGES=1 bash scripts/each-test.sh "$t" sequential
done
# The feature tests again with CUDA plans (mixed precision, gradients, half inputs, batch masks,
# regularisation and pivot boosting, deterministic mode).
for suite in refine_gradient masks regularize deterministic; do
    for t in .bundle/tests/$suite-*; do
        pstep "test-$suite-cuda" env BTCHOL_TEST_BACKEND=cuda bash scripts/each-test.sh "$t"
    done
done
# The Python binding against this build (CUDA tests, CuPy / PyTorch device arrays, 16-bit inputs).
pstep python-binding env BTCHOL_LIB=$PWD/.bundle/libbtchol.so PYTHONPATH=$PWD/.bundle/pylib \
    python3 -m pytest -q -p no:cacheprovider bindings/python/tests
collect
fi
if [ "$part" != tests ]; then
san="compute-sanitizer --error-exitcode=1"
small="bench --backend cuda --dtype f64 --n 8 --N 37 --batch 2 --nrhs 3 --repeats 1 --warmup 0"
medium="bench --backend cuda --dtype f64 --n 32 --N 1024 --batch 1 --nrhs 2 --repeats 1 --warmup 0"
# Large blocks: the tall panel (n = 48), the blocked panel with 32-column (n = 100) and 16-column
# (n = 200) panels, each with a partial last panel, the split gemm (every level at n > 64, the
# narrow ones at n = 48 and 64), and the cluster elimination's two panels (f64 n = 64).
large="bench --backend cuda --dtype f64,f32 --n 48,64,100,200 --N 7 --batch 2 --nrhs 2 --repeats 1 --warmup 0"
# The per-item sequential factor's warp pair (named barriers between its two warps) and the solve's
# helper warps (mbarriers), odd n and N; factor_solve too (with the one-warp factor: the forward
# substitution in the factor, the backward-only solve).
seq="bench --backend cuda --algorithm seq --dtype f64,f32 --n 32,7 --N 37,2 --batch 3 --nrhs 2 --repeats 1 --warmup 0 --factor-solve"
# Fused levels of blocks 33..64 (batch × eliminations ≥ SMs: the elimination's fill and the
# update kernel, f64 on the tensor cores from staged couplings), odd n.
wide="bench --backend cuda --dtype f64,f32 --n 45,64 --N 9 --batch 40 --nrhs 2 --repeats 1 --warmup 0"
step sanitizer-memcheck-wide $san --tool memcheck .bundle/btchol $wide
step sanitizer-racecheck-wide $san --tool racecheck .bundle/btchol $wide
step sanitizer-memcheck-small $san --tool memcheck .bundle/btchol $small
step sanitizer-memcheck-medium $san --tool memcheck .bundle/btchol $medium
step sanitizer-memcheck-large $san --tool memcheck .bundle/btchol $large
step sanitizer-racecheck-small $san --tool racecheck .bundle/btchol $small
step sanitizer-racecheck-medium $san --tool racecheck .bundle/btchol $medium
step sanitizer-racecheck-large $san --tool racecheck .bundle/btchol $large
for tool in memcheck racecheck synccheck; do
    step sanitizer-$tool-seq-pair env BTCHOL_SEQ_PAIR=1 $san --tool $tool .bundle/btchol $seq
done
# The one-warp factor and solve, both staging depths (the plan picks them for large batches only).
warp="env BTCHOL_SEQ_PAIR=0 BTCHOL_SEQ_INV_SOLVE=0"
for stages in 1 2; do
    step sanitizer-racecheck-seq-warp-$stages $warp BTCHOL_SEQ_FACTOR_STAGES=$stages BTCHOL_SEQ_SOLVE_STAGES=$stages \
        $san --tool racecheck .bundle/btchol $seq
done
step sanitizer-memcheck-seq-warp-1 $warp BTCHOL_SEQ_FACTOR_STAGES=1 BTCHOL_SEQ_SOLVE_STAGES=1 \
    $san --tool memcheck .bundle/btchol $seq
# factor_solve_device: the one-warp factor with the forward substitution (f32 too, forced) and the
# one-warp solve's backward sweep (inv0), or factor then the helper warps' solve (inv1), right-hand
# sides packed from and unpacked into the caller's device array.
for inv in 0 1; do
    for tool in memcheck racecheck; do
        step sanitizer-$tool-seq-fsolve-device-inv$inv env BTCHOL_SEQ_PAIR=0 BTCHOL_SEQ_INV_SOLVE=$inv \
            BTCHOL_SEQ_FUSED_FORWARD=1 $san --tool $tool .bundle/btchol $seq --rhs device
    done
done
# A single system's device solve in one launch (the cluster solve reading b and writing x in the
# caller's array, its CTAs exchanging NaN/Inf keys by st.async), odd n too.
fused="bench --backend cuda --dtype f64,f32 --n 32,29 --N 13,64 --batch 1 --nrhs 3 --rhs device --repeats 1 --warmup 0"
for tool in memcheck racecheck synccheck; do
    step sanitizer-$tool-fused $san --tool $tool .bundle/btchol $fused
done
# The whole factor and solve of a small system in one CTA (forced: f64 blocks of 16 take them only
# so), odd n.
whole="bench --backend cuda --algorithm nd --dtype f64,f32 --n 8,5,16 --N 37,64 --batch 2 --nrhs 3 --repeats 1 --warmup 0"
for tool in memcheck racecheck synccheck; do
    step sanitizer-$tool-whole-solve env BTCHOL_WHOLE_SOLVE=1 BTCHOL_WHOLE_FACTOR=1 $san --tool $tool .bundle/btchol $whole
done
# The chunk kernel of partitioned nested dissection (chunks of 3, a short last chunk; odd n).
chunks="bench --backend cuda --algorithm nd --dtype f64,f32 --n 32,7 --N 37 --batch 2 --nrhs 2 --repeats 1 --warmup 0"
for tool in memcheck racecheck; do
    step sanitizer-$tool-chunks env BTCHOL_CHUNK=3 $san --tool $tool .bundle/btchol $chunks
done
step bench-short .bundle/btchol bench --backend cuda --algorithm nd --dtype f64,f32 --n 8,32,64 --N 64,1024,16384 \
    --batch 1 --nrhs 1 --csv "$out/bench-short.csv"
# Partitioned nested dissection (the plan's choice from N = 2048 for n ≤ 32) against plain nested
# dissection (BTCHOL_CHUNK=0) in the same run.
step bench-partitioned .bundle/btchol bench --backend cuda --algorithm nd --dtype f64,f32 --rhs device \
    --n 16,32 --N 4096,16384 --batch 1 --nrhs 1 --csv "$out/bench-partitioned.csv"
step bench-plain-nd env BTCHOL_CHUNK=0 .bundle/btchol bench --backend cuda --algorithm nd --dtype f64,f32 --rhs device \
    --n 16,32 --N 4096,16384 --batch 1 --nrhs 1 --csv "$out/bench-plain-nd.csv"
step bench-large .bundle/btchol bench --backend cuda --algorithm nd --dtype f64,f32 --rhs device --n 64,128 \
    --N 64,256,1024,4096 --batch 1 --nrhs 1 --csv "$out/bench-large.csv"
step bench-batch .bundle/btchol bench --backend cuda --algorithm nd,seq --dtype f64 --rhs device --factor-solve \
    --n 16 --N 32 --batch 1024 --csv "$out/bench-batch.csv"
step bench-batch-256 .bundle/btchol bench --backend cuda --algorithm nd,seq --dtype f64 --rhs device --factor-solve \
    --n 32 --N 128 --batch 256 --csv "$out/bench-batch-256.csv"
step bench-mask .bundle/btchol bench --backend cuda --algorithm seq --dtype f64 --n 16 --N 32 --batch 1024 \
    --mask-fraction 0.25 --csv "$out/bench-mask.csv"
step bench-mixed .bundle/btchol bench --backend cuda --algorithm nd --precision f64,f32,mixed --n 32,128 --N 1024,4096 \
    --batch 1 --nrhs 1 --csv "$out/bench-mixed.csv"
fi
# The bench CSVs as one archive beside logs.tgz (a device call returns at most 8 files).
csvs=$(cd "$out" && ls bench-*.csv 2>/dev/null)
[ -n "$csvs" ] && (cd "$out" && tar czf bench-csv.tgz $csvs && rm -f $csvs)
echo
label=$([ "$part" = all ] || echo " ($part)")
echo "gpu-check$label on ${device:-no GPU}: $pass passed, $fail failed${failed:+ (${failed[*]})}"
[ "$fail" -eq 0 ]
