#!/usr/bin/env bash
# A/B benchmark of commits on the GPU in one device call (kernel work: is B faster than A?).
#
#   scripts/gpu-ab.sh bundle A B [C ...]
#                                  (here, no GPU needed) build the btchol binary of git refs A, B, …
#                                  (each in a temporary worktree with its own target folder, kept in
#                                  .ab-build/ so that rebuilds are incremental) into .bundle-ab/,
#                                  with each side's kernels compiled for sm_90 where NVRTC 13.0 is
#                                  in .venv-nvrtc130 (scripts/kernel-resources.sh installs it)
#   scripts/gpu-ab.sh bundle-kernels A B [C ...]
#                                  one binary (the working tree's) and the kernels/ folder of each
#                                  ref ("." = the working tree's; a folder: the working tree's with
#                                  that folder's files over them; a FILE.patch: the working tree's
#                                  with that patch of kernels/ applied), run with BTCHOL_KERNEL_DIR:
#                                  only the kernel source differs between the sides, and bundling
#                                  takes one build. The binary must be able to launch each side's
#                                  kernels (same kernel names and arguments; a side that cannot
#                                  load its kernels fails its bench). Each side's kernels are
#                                  compiled here for sm_90 as `bundle` does (BUNDLE_KERNELS=0: on
#                                  the device instead).
#   scripts/gpu-ab.sh run [BENCH ARGS...]
#                                  (on the GPU machine) run the same `btchol bench` on every side,
#                                  interleaved A B … A B … (so drift hits all), each with its own
#                                  kernel cache; prints one table with the ref of each row and
#                                  writes $OUT/ab.csv (OUT defaults to .bundle-ab/out);
#                                  AB_ROUNDS=K rounds instead of 2; AB_SIDES=a,c only those sides
#                                  (one bundle, several comparisons in one call). Other BTCHOL_*
#                                  settings in the environment apply to every side.
#
# Default bench: cuda, nested dissection, f64, n 8,16,32, N 64,1024,16384, --rhs device, 30 repeats.
# Device call:  run(command="bash scripts/gpu-ab.sh run", carry=[".bundle-ab"])
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}

sides=(a b c d e f g h)
# warm_side SIDE CMD...: the side's kernels compiled here for sm_90 by `CMD kernels --warm` (NVRTC
# 13.0 from PyPI, as on the GPU machine) into .bundle-ab/kcache-SIDE.tgz, so the run spends no
# device time compiling them; BUNDLE_KERNELS=0 skips it.
warm_side() {
    local side=$1 nvrtc; shift
    [ "${BUNDLE_KERNELS:-1}" = 1 ] && nvrtc=$(bash scripts/nvrtc-venv.sh) || return 0
    rm -rf "/tmp/btchol-ab-kcache-$side"
    LD_LIBRARY_PATH="$nvrtc:${LD_LIBRARY_PATH:-}" BTCHOL_CACHE_DIR="/tmp/btchol-ab-kcache-$side" \
        "$@" kernels --warm --arch sm_90
    tar czf ".bundle-ab/kcache-$side.tgz" -C "/tmp/btchol-ab-kcache-$side" .
}
if [ "$mode" = bundle ]; then
    [ $# -ge 3 ] && [ $# -le 9 ] || { echo "usage: $0 bundle REF_A REF_B [REF_C ...] (at most 8)"; exit 2; }
    shift
    rm -rf .bundle-ab && mkdir -p .bundle-ab .ab-build
    k=0
    for ref in "$@"; do
        side=${sides[$k]}; k=$((k + 1))
        wt=.ab-build/wt-$side
        git worktree remove --force "$wt" 2>/dev/null || true
        git worktree add --detach -q "$wt" "$ref"
        (cd "$wt" && CARGO_TARGET_DIR="$PWD/../target-$side" cargo build --release --bin btchol)
        cp ".ab-build/target-$side/release/btchol" ".bundle-ab/btchol-$side"
        strip --strip-debug ".bundle-ab/btchol-$side"
        warm_side "$side" ".bundle-ab/btchol-$side"
        echo "$ref $(git rev-parse --short "$ref")" > ".bundle-ab/ref-$side"
        git worktree remove --force "$wt"
    done
    du -sh .bundle-ab
    exit 0
fi
if [ "$mode" = bundle-kernels ]; then
    [ $# -ge 3 ] && [ $# -le 9 ] || { echo "usage: $0 bundle-kernels REF_A REF_B [REF_C ...] (at most 8)"; exit 2; }
    shift
    rm -rf .bundle-ab && mkdir -p .bundle-ab
    cargo build --release --bin btchol
    strip --strip-debug -o .bundle-ab/btchol target/release/btchol
    k=0
    for ref in "$@"; do
        side=${sides[$k]}; k=$((k + 1))
        mkdir -p ".bundle-ab/kernels-$side"
        if [ "$ref" = . ] || [ -d "$ref" ]; then  # the working tree's kernels, or a folder of variants
            src=$([ "$ref" = . ] && echo kernels || echo "$ref")
            cp kernels/* ".bundle-ab/kernels-$side/" && cp "$src"/* ".bundle-ab/kernels-$side/"
            echo "$ref $(basename "$(cd "$src" && pwd)")" > ".bundle-ab/ref-$side"
        elif [[ $ref == *.patch ]]; then  # the working tree's kernels with a patch (paths kernels/…)
            cp kernels/* ".bundle-ab/kernels-$side/"
            patch -s -p2 -d ".bundle-ab/kernels-$side" < "$ref"
            echo "$ref $(basename "$ref" .patch)" > ".bundle-ab/ref-$side"
        else
            git archive "$ref" kernels | tar x -C ".bundle-ab/kernels-$side" --strip-components=1
            echo "$ref $(git rev-parse --short "$ref")" > ".bundle-ab/ref-$side"
        fi
        warm_side "$side" env BTCHOL_KERNEL_DIR=".bundle-ab/kernels-$side" .bundle-ab/btchol
    done
    du -sh .bundle-ab
    exit 0
fi

[ "$mode" = run ] || { echo "usage: $0 bundle|bundle-kernels REF_A REF_B [REF_C ...] | run [BENCH ARGS...]"; exit 2; }
shift
[ -d .bundle-ab ] || { echo "no .bundle-ab: run '$0 bundle A B' first and carry .bundle-ab"; exit 2; }
out=${OUT:-.bundle-ab/out}; mkdir -p "$out"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
args=("$@")
[ ${#args[@]} -eq 0 ] && args=(--backend cuda --algorithm nd --dtype f64 --n 8,16,32 --N 64,1024,16384
    --rhs device --repeats 30)
present=()
for side in "${sides[@]}"; do
    [ -f ".bundle-ab/ref-$side" ] && [[ ",${AB_SIDES:-$side}," == *",$side,"* ]] && present+=("$side")
done
[ ${#present[@]} -gt 0 ] || { echo "no side to run (AB_SIDES=${AB_SIDES:-})"; exit 2; }
# side_run SIDE CMD...: btchol of that side (its own binary, or the shared one with its kernels).
side_run() {
    local side=$1; shift
    if [ -x ".bundle-ab/btchol-$side" ]; then
        BTCHOL_CACHE_DIR=/tmp/btchol-ab-$side ".bundle-ab/btchol-$side" "$@"
    else
        BTCHOL_CACHE_DIR=/tmp/btchol-ab-$side BTCHOL_KERNEL_DIR=".bundle-ab/kernels-$side" .bundle-ab/btchol "$@"
    fi
}
for side in "${present[@]}"; do  # each side's kernels compiled and cached before timing anything
    mkdir -p "/tmp/btchol-ab-$side"
    if [ -f ".bundle-ab/kcache-$side.tgz" ]; then
        tar xzf ".bundle-ab/kcache-$side.tgz" -C "/tmp/btchol-ab-$side"
        side_run "$side" kernels --warm > /dev/null 2>&1 || true
    fi  # (kernel sides compile on the bench's first use, which its warm-up runs absorb)
done
first=1
for round in $(seq "${AB_ROUNDS:-2}"); do
    for side in "${present[@]}"; do
        ref=$(cat ".bundle-ab/ref-$side")
        side_run "$side" bench "${args[@]}" --csv "$out/$side-$round.csv" > /dev/null \
            || { echo "side $side ($ref): bench failed" >&2; continue; }
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
sides = sorted(refs)
if not sides:
    sys.exit("no side produced results")
print("   ".join(f"{s.upper()} = {refs[s]}" for s in sides) + "   (µs, median per run, better of the rounds; x/A: ratio)")
head = f"{'dtype':>5} {'alg':>4} {'n':>4} {'N':>6} {'batch':>6}"
for what in ("factor", "solve"):
    head += "".join(f" {s.upper() + ' ' + what:>10}" + ("" if s == sides[0] else f" {s.upper() + '/A':>5}") for s in sides)
print(head)
for k in sorted({key(r) for r in rows}):
    line = f"{k[0]:>5} {k[4]:>4} {k[1]:>4} {k[2]:>6} {k[3]:>6}"
    for i in (0, 1):
        base = best.get((sides[0], k))
        for s in sides:
            v = best.get((s, k))
            line += f" {v[i]:>10.1f}" if v else f" {'-':>10}"
            if s != sides[0]:
                line += f" {v[i] / base[i]:>5.2f}" if v and base else f" {'-':>5}"
    print(line)
PY
