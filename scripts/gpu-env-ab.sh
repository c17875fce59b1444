#!/usr/bin/env bash
# A/B of run-time switches on one binary (the GPU machine, from the repository root, with .bundle
# from `scripts/gpu-check.sh bundle` carried): the same `btchol bench` under each environment,
# interleaved over rounds (A B A B ...) so that drift hits every variant alike; one table of the
# better per-round median per shape and variant, B/A against the first variant.
#
#   scripts/gpu-env-ab.sh [ROUNDS] LABEL=VAR=VALUE[,VAR=VALUE...] LABEL=... -- BENCH ARGS...
#
#   e.g. scripts/gpu-env-ab.sh 3 one-warp=BTCHOL_SEQ_PAIR=0 pair=BTCHOL_SEQ_PAIR=1 -- \
#            --backend cuda --algorithm seq --dtype f64 --n 32 --N 128 --batch 256 --rhs device
#
# Rows: $OUT/env-ab.csv (label, round, then the bench fields); OUT defaults to .bundle/out.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=2
[[ ${1:-} =~ ^[0-9]+$ ]] && { rounds=$1; shift; }
variants=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do variants+=("$1"); shift; done
[ "${1:-}" = -- ] && shift
[ ${#variants[@]} -ge 1 ] && [ $# -gt 0 ] || { echo "usage: $0 [ROUNDS] LABEL=VAR=VALUE[,...] ... -- BENCH ARGS"; exit 2; }
bin=${BTCHOL_BIN:-.bundle/btchol}
out=${OUT:-.bundle/out}; mkdir -p "$out"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export BTCHOL_CACHE_DIR=${BTCHOL_CACHE_DIR:-/tmp/btchol-cache}
"$bin" kernels --warm > /dev/null 2>&1 || true
csv=$out/env-ab.csv; : > "$csv"
for round in $(seq "$rounds"); do
    for v in "${variants[@]}"; do
        label=${v%%=*}; settings=${v#*=}
        IFS=, read -r -a envs <<< "$settings"
        env "${envs[@]}" "$bin" bench "$@" --csv "$out/.ab-$label-$round.csv" > /dev/null
        [ -s "$csv" ] || { printf 'label,round,'; head -1 "$out/.ab-$label-$round.csv"; } >> "$csv"
        tail -n +2 "$out/.ab-$label-$round.csv" | sed "s|^|$label,$round,|" >> "$csv"
        rm -f "$out/.ab-$label-$round.csv"
    done
done
python3 - "$csv" "${variants[@]%%=*}" <<'PY'
import csv, sys
rows, labels = list(csv.DictReader(open(sys.argv[1]))), sys.argv[2:]
key = lambda r: (r["dtype"], r["algorithm"], int(r["n"]), int(r["N"]), int(r["batch"]), int(r["nrhs"]))
best = {}
for r in rows:  # per variant and shape, the better of the rounds' medians
    k = (r["label"], key(r))
    f, s = float(r["factor_us_median"]), float(r["solve_us_median"])
    best[k] = (min(f, best[k][0]), min(s, best[k][1])) if k in best else (f, s)
print("µs, better per-round median; ratios against " + labels[0])
print(f"{'dtype':>5} {'alg':>4} {'n':>3} {'N':>6} {'batch':>5} {'nrhs':>4}  " +
      "  ".join(f"{l + ' factor':>16} {'/A':>5} {l + ' solve':>15} {'/A':>5}" for l in labels))
for k in sorted({key(r) for r in rows}):
    a = best.get((labels[0], k))
    cells = []
    for l in labels:
        v = best.get((l, k))
        cells.append(f"{v[0]:>16.1f} {v[0] / a[0]:>5.2f} {v[1]:>15.1f} {v[1] / a[1]:>5.2f}" if v and a else " " * 46)
    print(f"{k[0]:>5} {k[1]:>4} {k[2]:>3} {k[3]:>6} {k[4]:>5} {k[5]:>4}  " + "  ".join(cells))
PY
