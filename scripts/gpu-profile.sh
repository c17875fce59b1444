#!/usr/bin/env bash
# Nsight Compute on the GPU machine: where a btchol kernel's warps stall, and where a launch
# sequence's time goes.
#
#   scripts/gpu-profile.sh KERNEL [BENCH ARGS...]
#       KERNEL      a kernel name or regex, e.g. btchol_solve_seq_small
#       BENCH ARGS  the `btchol bench` shape to profile (default: the batch solve of issue 5,
#                   --backend cuda --algorithm seq --dtype f64 --n 16 --N 32 --batch 1024)
#     Profiles launches SKIP..SKIP+COUNT-1 of the kernel (env SKIP, default 2, i.e. after warm-up;
#     COUNT, default 1) with the clocks left alone, the kernels compiled with line information and
#     warp states sampled every 2^(5+SAMPLING) cycles (env SAMPLING, default 0: the finest, so that
#     a 10 µs kernel still yields hundreds of samples);
#     writes $OUT/NAME.ncu-rep (env NAME, default the kernel) and prints the warp-state (stall
#     reasons), scheduler, occupancy and memory sections, then writes the per-instruction samples
#     to $OUT/NAME-sass.csv where this ncu can print them.
#   scripts/gpu-profile.sh --timeline [BENCH ARGS...]
#     Every kernel of one factor and one solve (after a warm-up run) with its duration, in launch
#     order, and their sum, to $OUT/NAME-timeline.csv (env NAME, default "timeline"): the sum
#     against the bench's wall time is what the launch gaps cost. TIMELINE_METRICS=m1,m2,... adds
#     those ncu metrics as columns (scripts/gpu-regimes.sh uses DRAM bytes and throughputs).
#
# Runs from the repository root with .bundle/btchol (scripts/gpu-check.sh bundle); BTCHOL=path
# picks another binary, BTCHOL_KERNEL_DIR a kernel variant. Device call:
#   run(command="bash scripts/gpu-profile.sh btchol_solve_seq_small", carry=[".bundle"])
set -uo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: $0 KERNEL|--timeline [BENCH ARGS...]"; exit 2; }
kernel=$1; shift
args=("$@")
[ ${#args[@]} -eq 0 ] && args=(--backend cuda --algorithm seq --dtype f64 --n 16 --N 32 --batch 1024)
out=${OUT:-.bundle/out}; mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
if [ "$kernel" = --timeline ]; then
    # (durations need no line information: the kernels of the bench's own cache, bundled ones too)
    export BTCHOL_CACHE_DIR=${BTCHOL_CACHE_DIR:-/tmp/btchol-cache}
    [ -f .bundle/kcache.tgz ] && mkdir -p "$BTCHOL_CACHE_DIR" && tar xzf .bundle/kcache.tgz -C "$BTCHOL_CACHE_DIR"
else
    export BTCHOL_NVRTC_LINEINFO=1 BTCHOL_CACHE_DIR=/tmp/btchol-profile-cache
fi
bin=${BTCHOL:-.bundle/btchol}
[[ " ${args[*]} " == *" --rhs "* ]] || args+=(--rhs device)  # (device right-hand sides unless given)
"$bin" bench "${args[@]}" --repeats 3 --warmup 1 | tail -2  # compile, cache, and the wall time
if [ "$kernel" = --timeline ]; then
    name=${NAME:-timeline}
    # One warm-up factor + solve, then one measured: profile everything from the measured factor
    # on (the bench's first launches are uploads and the warm-up).
    # (--cache-control none: ncu's default flushes the caches before every kernel, so a kernel
    # that reads what the previous one left in L2 ran from DRAM: the look-ahead cluster elimination
    # measured the same as the code before it, 84 µs, while the graph's factor was 10 % faster.)
    # (TIMELINE_METRICS=list adds ncu metrics per kernel, e.g. dram__bytes_read.sum and the DRAM
    # and SM throughput in % of peak, each a column of the table; they cost ncu replays, and the
    # durations measured the same with them: f64 n = 128, N = 1024, 5278 against 5271 µs in all.)
    metrics=gpu__time_duration.sum${TIMELINE_METRICS:+,$TIMELINE_METRICS}
    ncu --clock-control none --cache-control none --metrics "$metrics" --csv --page raw \
        "$bin" bench "${args[@]}" --repeats 1 --warmup 1 > "$out/$name-timeline.csv" 2> "$out/$name-ncu.log" \
        || { tail -20 "$out/$name-ncu.log"; exit 1; }
    python3 - "$out/$name-timeline.csv" <<'PY'
import csv, os, sys
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
head, body = rows[0], rows[2:]  # second row: units
k, t = head.index("Kernel Name"), head.index("gpu__time_duration.sum")
# (the raw page carries every device attribute too: only the metrics asked for are shown)
extra = [head.index(m) for m in os.environ.get("TIMELINE_METRICS", "").split(",") if m in head]
def num(v):
    try:
        return float(v.replace(",", ""))  # ncu prints thousands separators
    except ValueError:
        return float("nan")
ns = lambda r: num(r[t])
print(f"{len(body)} kernels, {sum(ns(r) for r in body) / 1e3:.1f} us in all (ns below)")
label = lambda m: m.split(".")[0] + (" %" if ".pct" in m else "")  # e.g. gpu__dram_throughput %
print(f"  {'kernel':60s} {'ns':>10s}" + "".join(f" {label(head[i]):>24s}" for i in extra))
for r in body:
    print(f"  {r[k][:60]:60s} {ns(r):>10.0f}" + "".join(f" {num(r[i]):>24.4g}" for i in extra))
PY
    exit 0
fi
name=${NAME:-$kernel}
ncu --clock-control none --kernel-name "regex:$kernel" --launch-skip "${SKIP:-2}" --launch-count "${COUNT:-1}" \
    --warp-sampling-interval "${SAMPLING:-0}" \
    --section LaunchStats --section Occupancy --section SchedulerStats --section WarpStateStats \
    --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section InstructionStats --section SpeedOfLight --section SourceCounters --import-source yes \
    -f -o "$out/$name" "$bin" bench "${args[@]}" --repeats 3 --warmup 1 > "$out/$name-ncu.log" 2>&1 \
    || { tail -20 "$out/$name-ncu.log"; exit 1; }
ncu -i "$out/$name.ncu-rep" --page details
ncu -i "$out/$name.ncu-rep" --page source --csv --print-source sass > "$out/$name-sass.csv" 2>&1 \
    && echo "per-instruction samples: $out/$name-sass.csv ($(wc -l < "$out/$name-sass.csv") lines)" \
    || echo "(this ncu cannot print the source page; open $name.ncu-rep in the Nsight Compute UI)"
