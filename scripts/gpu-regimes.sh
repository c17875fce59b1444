#!/usr/bin/env bash
# Issue 5's profile evidence in one device call: for one shape of each performance regime, every
# kernel of one factor and one solve under Nsight Compute with its duration, DRAM bytes and DRAM /
# SM throughput (scripts/gpu-profile.sh --timeline), then the warp states (stall reasons) of the
# kernel that dominates each latency-bound regime.
#
#   scripts/gpu-regimes.sh [timelines|stalls|all]     (on the GPU machine, .bundle carried)
#   REGIMES=REGEX                                   only the regimes whose names match
#
# Writes $OUT/regimes.tgz (OUT defaults to .bundle/out): <regime>-timeline.txt, <regime>-stalls.txt
# and the stalls' per-instruction samples; unpack it into bench/results/profiles-<date>/.
# ~4 min on the H200 (2026-12-03).
# Device call:  run(command="bash scripts/gpu-regimes.sh", carry=[".bundle"])
set -uo pipefail
cd "$(dirname "$0")/.."
part=${1:-all}
out=${OUT:-.bundle/out}/regimes; mkdir -p "$out"
export OUT=$out
cuda=(--backend cuda --algorithm nd)
# regime name | bench arguments (one right-hand side in GPU memory throughout)
regimes=(
    "latency-one-cta-f64-n8-N64|${cuda[*]} --dtype f64 --n 8 --N 64"
    "latency-levels-f64-n16-N1024|${cuda[*]} --dtype f64 --n 16 --N 1024"
    "latency-levels-f64-n32-N64|${cuda[*]} --dtype f64 --n 32 --N 64"
    "latency-levels-f64-n32-N1024|${cuda[*]} --dtype f64 --n 32 --N 1024"
    "latency-levels-f32-n32-N1024|${cuda[*]} --dtype f32 --n 32 --N 1024"
    "bandwidth-chunks-f64-n32-N16384|${cuda[*]} --dtype f64 --n 32 --N 16384"
    "mixed-f64-n64-N256|${cuda[*]} --dtype f64 --n 64 --N 256"
    "mixed-f64-n128-N1024|${cuda[*]} --dtype f64 --n 128 --N 1024"
    "batch-seq-f64-B256-N128-n32|--backend cuda --algorithm seq --dtype f64 --n 32 --N 128 --batch 256"
    "batch-seq-f64-B1024-N32-n16|--backend cuda --algorithm seq --dtype f64 --n 16 --N 32 --batch 1024"
)
# regime | kernel (regex) whose warp states explain it | launches to skip (past the warm-up)
stalls=(
    "latency-one-cta-f64-n8-N64|btchol_factor_whole_small|2"
    "latency-levels-f64-n32-N1024|btchol_factor_level_small|9"
    "latency-levels-f64-n32-N64|btchol_solve_cluster_small|2"
    "mixed-f64-n128-N1024|btchol_factor_eliminate_cluster|6"
    "bandwidth-chunks-f64-n32-N16384|btchol_forward_chunks_small|2"
    "batch-seq-f64-B256-N128-n32|btchol_solve_seq|2"
)
metrics=dram__bytes_read.sum,dram__bytes_write.sum,gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed
metrics+=,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active
if [ "$part" = all ] || [ "$part" = timelines ]; then
    for r in "${regimes[@]}"; do
        name=${r%%|*}; read -ra args <<< "${r#*|}"
        [[ $name =~ ${REGIMES:-.} ]] || continue
        echo "== $name: ${args[*]}"
        NAME=$name TIMELINE_METRICS=$metrics bash scripts/gpu-profile.sh --timeline "${args[@]}" \
            > "$out/$name-timeline.txt" 2>&1
        head -4 "$out/$name-timeline.txt"
        gzip -f "$out/$name-timeline.csv"  # (ncu's raw page, every metric of every kernel)
        tar czf "$out/../regimes.tgz" -C "$out" .  # (after each shape: a call cut short keeps them)
    done
fi
if [ "$part" = all ] || [ "$part" = stalls ]; then
    for s in "${stalls[@]}"; do
        IFS='|' read -r name kernel skip <<< "$s"
        [[ $name =~ ${REGIMES:-.} ]] || continue
        for r in "${regimes[@]}"; do [ "${r%%|*}" = "$name" ] && read -ra args <<< "${r#*|}"; done
        echo "== $name: $kernel"
        NAME=$name-stalls SKIP=$skip bash scripts/gpu-profile.sh "$kernel" "${args[@]}" \
            > "$out/$name-stalls.txt" 2>&1
        grep -E "Duration|DRAM Throughput|Achieved Occupancy|Stall|No Instruction|Warp Cycles Per Issued" \
            "$out/$name-stalls.txt" | head -8
        # The stall reasons as numbers: warps stalled per issued instruction, by reason, largest
        # first (WarpStateStats' raw metrics; their sum is the cycles between a warp's issues).
        ncu -i "$out/$name-stalls.ncu-rep" --page raw --csv 2>/dev/null | python3 -c '
import csv, sys
rows = list(csv.reader(l for l in sys.stdin if l.startswith("\"")))
if len(rows) < 3: sys.exit()
head, vals = rows[0], rows[2]
pre, suf = "smsp__average_warps_issue_stalled_", "_per_issue_active.ratio"
st = {h[len(pre):-len(suf)]: float(v.replace(",", "") or 0) for h, v in zip(head, vals) if h.startswith(pre) and h.endswith(suf)}
tot = sum(st.values()) or 1
print(f"stall reasons (warps per issued instruction, {tot:.2f} in all):")
for k, v in sorted(st.items(), key=lambda kv: -kv[1])[:10]:
    print(f"  {k:24s} {v:6.2f}  {100 * v / tot:5.1f} %")
' | tee -a "$out/$name-stalls.txt"
        gzip -f "$out/$name-stalls-sass.csv" 2>/dev/null
        rm -f "$out/$name-stalls.ncu-rep"  # (large; the text and the samples are kept)
    done
fi
# One archive: the device tool brings back only a few files from $OUT.
find "$out" -name '*-ncu.log' -empty -delete
tar czf "$out/../regimes.tgz" -C "$out" . && rm -rf "$out" && ls -la "$(dirname "$out")/regimes.tgz"
