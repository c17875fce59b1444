#!/usr/bin/env bash
# A/B benchmark of two commits on the GPU in one device call (kernel work: is B faster than A?).
#
#   scripts/gpu-ab.sh bundle A B   (here, no GPU needed) build the btchol binary of git refs A and B
#                                  (each in a temporary worktree with its own target folder, kept in
#                                  .ab-build/ so that rebuilds are incremental) into .bundle-ab/,
#                                  with each side's kernels compiled for sm_90 where NVRTC 13.0 is
#                                  in .venv-nvrtc130 (scripts/kernel-resources.sh installs it)
#   scripts/gpu-ab.sh run [BENCH ARGS...]
#                                  (on the GPU machine) run the same `btchol bench` on both
#                                  binaries, interleaved A B A B (so drift hits both), each with its
#                                  own kernel cache; prints one table with the ref of each row and
#                                  writes $OUT/ab.csv (OUT defaults to .bundle-ab/out);
#                                  AB_ROUNDS=K rounds instead of 2
#
# Default bench: cuda, nested dissection, f64, n 8,16,32, N 64,1024,16384, --rhs device, 30 repeats.
# Device call:  run(command="bash scripts/gpu-ab.sh run", carry=[".bundle-ab"])
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}

if [ "$mode" = bundle ]; then
    [ $# -eq 3 ] || { echo "usage: $0 bundle REF_A REF_B"; exit 2; }
    rm -rf .bundle-ab && mkdir -p .bundle-ab .ab-build
    for side in a b; do
        ref=$([ $side = a ] && echo "$2" || echo "$3")
        wt=.ab-build/wt-$side
        git worktree remove --force "$wt" 2>/dev/null || true
        git worktree add --detach -q "$wt" "$ref"
        (cd "$wt" && CARGO_TARGET_DIR="$PWD/../target-$side" cargo build --release --bin btchol)
        cp ".ab-build/target-$side/release/btchol" ".bundle-ab/btchol-$side"
        strip --strip-debug ".bundle-ab/btchol-$side"
        # Each side's kernels compiled here for sm_90 (NVRTC 13.0 from PyPI, as on the GPU
        # machine), so the run spends no device time compiling them; BUNDLE_KERNELS=0 skips it.
        if [ "${BUNDLE_KERNELS:-1}" = 1 ] && nvrtc=$(bash scripts/nvrtc-venv.sh); then
            rm -rf "/tmp/btchol-ab-kcache-$side"
            LD_LIBRARY_PATH="$nvrtc:${LD_LIBRARY_PATH:-}" BTCHOL_CACHE_DIR="/tmp/btchol-ab-kcache-$side" \
                ".bundle-ab/btchol-$side" kernels --warm --arch sm_90
            tar czf ".bundle-ab/kcache-$side.tgz" -C "/tmp/btchol-ab-kcache-$side" .
        fi
        echo "$ref $(git rev-parse --short "$ref")" > ".bundle-ab/ref-$side"
        git worktree remove --force "$wt"
    done
    du -sh .bundle-ab
    exit 0
fi

[ "$mode" = run ] || { echo "usage: $0 bundle REF_A REF_B | run [BENCH ARGS...]"; exit 2; }
shift
[ -d .bundle-ab ] || { echo "no .bundle-ab: run '$0 bundle A B' first and carry .bundle-ab"; exit 2; }
out=${OUT:-.bundle-ab/out}; mkdir -p "$out"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
args=("$@")
[ ${#args[@]} -eq 0 ] && args=(--backend cuda --algorithm nd --dtype f64 --n 8,16,32 --N 64,1024,16384
    --rhs device --repeats 30)
for side in a b; do  # compile and cache each side's kernels before timing anything
    mkdir -p "/tmp/btchol-ab-$side"
    [ -f ".bundle-ab/kcache-$side.tgz" ] && tar xzf ".bundle-ab/kcache-$side.tgz" -C "/tmp/btchol-ab-$side"
    BTCHOL_CACHE_DIR=/tmp/btchol-ab-$side ".bundle-ab/btchol-$side" kernels --warm > /dev/null 2>&1 || true
done
first=1
for round in $(seq "${AB_ROUNDS:-2}"); do
    for side in a b; do
        ref=$(cat ".bundle-ab/ref-$side")
        BTCHOL_CACHE_DIR=/tmp/btchol-ab-$side ".bundle-ab/btchol-$side" bench "${args[@]}" \
            --csv "$out/$side-$round.csv" > /dev/null
        if [ $first = 1 ]; then printf 'side,round,ref,'; head -1 "$out/$side-$round.csv"; first=0; fi
        tail -n +2 "$out/$side-$round.csv" | sed "s|^|$side,$round,${ref// /@},|"
    done
done > "$out/ab.csv"
python3 - "$out/ab.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
key = lambda r: (r["dtype"], int(r["n"]), int(r["N"]), int(r["batch"]), r["algorithm"])
best = {}
for r in rows:  # per side and shape, the better of the rounds' medians
    k = (r["side"], key(r))
    f, s = float(r["factor_us_median"]), float(r["solve_us_median"])
    best[k] = (min(f, best[k][0]), min(s, best[k][1])) if k in best else (f, s)
refs = {r["side"]: r["ref"].replace("@", " ") for r in rows}
print(f"A = {refs.get('a')}   B = {refs.get('b')}   (µs, median per run, better of the rounds)")
print(f"{'dtype':>5} {'alg':>4} {'n':>4} {'N':>6} {'batch':>6} {'A factor':>10} {'B factor':>10} {'B/A':>6} "
      f"{'A solve':>10} {'B solve':>10} {'B/A':>6}")
for k in sorted({key(r) for r in rows}):
    a, b = best.get(("a", k)), best.get(("b", k))
    if not a or not b:
        continue
    print(f"{k[0]:>5} {k[4]:>4} {k[1]:>4} {k[2]:>6} {k[3]:>6} {a[0]:>10.1f} {b[0]:>10.1f} {b[0]/a[0]:>6.2f} "
          f"{a[1]:>10.1f} {b[1]:>10.1f} {b[1]/a[1]:>6.2f}")
PY
