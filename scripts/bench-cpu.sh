#!/usr/bin/env bash
# CPU benchmarks of btchol in one go (about 1-3 minutes on 2 cores):
#   1. side by side at N=1024, n=32, f64, 1 thread: LAPACK dpbtrf (banded Cholesky) vs btchol seq;
#   2. nested dissection with 1 and 2 threads at N=1024 and 4096, n=32, f64;
#   3. a single-thread sequential sweep n ∈ {8,16,32,64} × N ∈ {16,64,256,1024,4096} × {f64,f32}.
# Results: bench/results/cpu-<cpu-model-slug>-<YYYY-MM-DD>.csv (the sweep) and .jsonl next to it
# (the dpbtrf baseline lines and btchol's side-by-side lines). See bench/README.md.
#
# Needs cargo and python3 with numpy and scipy (installed with pip when missing).
# Environment: CARGO_TARGET_DIR (where to build), PYTHON (default python3).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PYTHON="${PYTHON:-python3}"
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
BTCHOL="$TARGET_DIR/release/btchol"

echo "== building btchol (release)"
cargo build --release --bin btchol
"$BTCHOL" info
# Which source was measured (read-only git queries; "+local changes" when the tree differs from HEAD).
rev="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then rev="$rev+local changes"; fi
echo "source: $rev"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown) (other work on the machine makes numbers noisy)"

if ! "$PYTHON" -c 'import numpy, scipy' 2>/dev/null; then
    echo "== numpy/scipy missing: installing them with pip"
    "$PYTHON" -m pip install --quiet numpy scipy
fi

# Result file names: CPU model as a slug, UTC date.
model="$(grep -m1 '^model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- || true)"
slug="$(printf '%s' "${model:-cpu}" | tr '[:upper:]' '[:lower:]' | sed -e 's/[^a-z0-9]\{1,\}/-/g' -e 's/^-//' -e 's/-$//')"
mkdir -p bench/results
base="bench/results/cpu-${slug:-cpu}-$(date -u +%F)"
CSV="$base.csv"
JSONL="$base.jsonl"
: > "$JSONL"

# field FILE_WITH_ONE_JSON_LINE KEY: one field of a JSON line.
field() { "$PYTHON" -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())[sys.argv[2]])' "$1" "$2"; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

echo
echo "== 1. side by side: N=1024 n=32 f64, 1 thread"
"$PYTHON" bench/cpu_baseline.py --N 1024 --n 32 --repeats 20 --json | tee "$tmp/lapack.json"
"$BTCHOL" bench --backend cpu --algorithm seq --dtype f64 --n 32 --N 1024 --threads 1 --json | tee "$tmp/seq.json"
cat "$tmp/lapack.json" "$tmp/seq.json" >> "$JSONL"
"$PYTHON" - "$tmp/lapack.json" "$tmp/seq.json" <<'PY'
import json, sys
lapack, seq = (json.loads(open(p).readline()) for p in sys.argv[1:3])
print(f"{'':18}{'factor ms':>12}{'solve ms':>12}{'GFLOP/s':>10}{'bwd err':>11}")
for name, r in (("LAPACK dpbtrf", lapack), ("btchol seq", seq)):
    print(f"{name:18}{r['factor_us_median'] / 1e3:12.3f}{r['solve_us_median'] / 1e3:12.3f}"
          f"{r['gflops_factor']:10.2f}{r['backward_error']:11.1e}")
print(f"btchol seq / dpbtrf: factor {lapack['factor_us_median'] / seq['factor_us_median']:.2f}x faster, "
      f"solve {lapack['solve_us_median'] / seq['solve_us_median']:.2f}x faster (ratio of medians)")
PY

echo
echo "== 2. nested dissection, 1 and 2 threads: N=1024,4096 n=32 f64"
"$PYTHON" bench/cpu_baseline.py --N 4096 --n 32 --repeats 10 --json >> "$JSONL"
"$BTCHOL" bench --backend cpu --algorithm nd --dtype f64 --n 32 --N 1024,4096 --threads 1,2 --json | tee "$tmp/nd.json"
"$BTCHOL" bench --backend cpu --algorithm seq --dtype f64 --n 32 --N 4096 --threads 1 --json | tee -a "$tmp/seq.json"
cat "$tmp/nd.json" >> "$JSONL"
tail -n 1 "$tmp/seq.json" >> "$JSONL"
"$PYTHON" - "$tmp/nd.json" "$tmp/seq.json" <<'PY'
import json, sys
nd = [json.loads(l) for l in open(sys.argv[1])]
seq = {r["N"]: r for r in map(json.loads, open(sys.argv[2]))}
for N in sorted({r["N"] for r in nd}):
    t = {r["threads"]: r["factor_us_median"] for r in nd if r["N"] == N}
    line = f"N={N}: nd factor {t.get(1, float('nan')) / 1e3:.3f} ms (1 thread), {t.get(2, float('nan')) / 1e3:.3f} ms (2 threads)"
    if 1 in t and 2 in t:
        line += f", 2-thread speedup {t[1] / t[2]:.2f}x"
    if N in seq and 2 in t:
        line += f"; seq 1 thread {seq[N]['factor_us_median'] / 1e3:.3f} ms (nd 2 threads is {seq[N]['factor_us_median'] / t[2]:.2f}x of it)"
    print(line)
PY

echo
echo "== 3. sweep: seq, 1 thread, f64 and f32 -> $CSV"
"$BTCHOL" bench --backend cpu --algorithm seq --dtype f64,f32 --n 8,16,32,64 --N 16,64,256,1024,4096 --threads 1 --csv "$CSV"

echo
echo "wrote $CSV and $JSONL"
