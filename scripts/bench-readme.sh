#!/usr/bin/env bash
# The README's GPU table (Performance, "GPU, NVIDIA H200"), re-measured in one device call
# (~2 min on the H200): the single-system rows (nd, f64 n = 8, 16, 32, 64, 128 and f32 n = 32 at
# the table's N) and the batch rows (nd and seq, the issue's two batch shapes), right-hand sides
# in device memory (`--rhs device`, as issue 5's cuDSS and socu solves were timed), adaptive
# repeats. Writes $OUT/<device-slug>-<UTC date>-readme-<commit>.csv (OUT defaults to .bundle/out);
# copy it to bench/results/ and update the table from it.
# Binary: $BTCHOL, default .bundle/btchol (scripts/gpu-check.sh bundle builds it).
# Device call: run(command="bash scripts/bench-readme.sh", carry=[".bundle"])
set -euo pipefail
cd "$(dirname "$0")/.."
BTCHOL=${BTCHOL:-.bundle/btchol}
out=${OUT:-.bundle/out}; mkdir -p "$out/readme-parts"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export BTCHOL_CACHE_DIR=${BTCHOL_CACHE_DIR:-/tmp/btchol-cache}
if [ -f .bundle/kcache.tgz ]; then mkdir -p "$BTCHOL_CACHE_DIR" && tar xzf .bundle/kcache.tgz -C "$BTCHOL_CACHE_DIR"; fi
commit=$(cat .bundle/commit 2>/dev/null || git rev-parse --short HEAD)
bench() { local part=$1; shift; "$BTCHOL" bench --backend cuda --rhs device --csv "$out/readme-parts/$part.csv" "$@"; }
bench small --algorithm nd --dtype f64 --n 8,16,32 --N 64,1024,4096,16384
bench f32 --algorithm nd --dtype f32 --n 32 --N 64,1024,4096,16384
bench large --algorithm nd --dtype f64 --n 64,128 --N 64,1024,4096
bench batch-1024 --algorithm nd,seq --dtype f64,f32 --n 16 --N 32 --batch 1024
bench batch-256 --algorithm seq --dtype f64 --n 32 --N 128 --batch 256
device=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr 'A-Z ' 'a-z-')
merged="$out/$device-$(date -u +%F)-readme-$commit.csv"
awk 'FNR == 1 && NR != 1 { next } { print }' "$out"/readme-parts/{small,f32,large,batch-1024,batch-256}.csv > "$merged"
echo "wrote $merged ($(($(wc -l < "$merged") - 1)) rows)"
