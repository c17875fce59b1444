#!/usr/bin/env bash
# Nsight Compute profile of one btchol kernel on the GPU machine: where its warps stall.
#
#   scripts/gpu-profile.sh KERNEL [BENCH ARGS...]
#       KERNEL      a kernel name or regex, e.g. btchol_solve_seq_small
#       BENCH ARGS  the `btchol bench` shape to profile (default: the batch solve of issue 5,
#                   --backend cuda --algorithm seq --dtype f64 --n 8 --N 32 --batch 1024)
#
# Runs on the GPU machine from the repository root with .bundle/btchol (scripts/gpu-check.sh
# bundle); BTCHOL=path picks another binary (e.g. .bundle-ab/btchol-b), BTCHOL_KERNEL_DIR a kernel
# variant. Profiles the 3rd launch of the kernel (after warm-up) with the clocks left alone, the
# kernels compiled with line information; writes $OUT/profile.ncu-rep and prints the warp-state
# (stall reasons), scheduler, occupancy and memory sections, then the per-line source view where
# this ncu can print it. Device call:
#   run(command="bash scripts/gpu-profile.sh btchol_solve_seq_small", carry=[".bundle"])
set -uo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: $0 KERNEL [BENCH ARGS...]"; exit 2; }
kernel=$1; shift
args=("$@")
[ ${#args[@]} -eq 0 ] && args=(--backend cuda --algorithm seq --dtype f64 --n 8 --N 32 --batch 1024)
out=${OUT:-.bundle/out}; mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export BTCHOL_NVRTC_LINEINFO=1 BTCHOL_CACHE_DIR=/tmp/btchol-profile-cache
bin=${BTCHOL:-.bundle/btchol}
"$bin" bench "${args[@]}" --rhs device --repeats 1 --warmup 0 > /dev/null  # compile and cache first
ncu --clock-control none --kernel-name "regex:$kernel" --launch-skip 2 --launch-count 1 \
    --section LaunchStats --section Occupancy --section SchedulerStats --section WarpStateStats \
    --section MemoryWorkloadAnalysis --section SourceCounters --import-source yes \
    -f -o "$out/profile" "$bin" bench "${args[@]}" --rhs device --repeats 3 --warmup 1 > "$out/ncu.log" 2>&1 \
    || { tail -20 "$out/ncu.log"; exit 1; }
ncu -i "$out/profile.ncu-rep" --page details
ncu -i "$out/profile.ncu-rep" --page source --csv --print-source sass > "$out/source-sass.csv" 2>&1 \
    && echo "per-instruction samples: $out/source-sass.csv ($(wc -l < "$out/source-sass.csv") lines)" \
    || echo "(this ncu cannot print the source page; open profile.ncu-rep in the Nsight Compute UI)"
