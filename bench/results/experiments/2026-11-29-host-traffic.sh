#!/usr/bin/env bash
# One device call (~3 min), eighteenth session. The factor-solve call (2026-11-29-factor-solve-call.sh)
# showed a caller with host data spending most of a call on host-device traffic: (1) the solve
# with host right-hand sides far above the device-rhs solve at large N (the fused cluster solve
# reads and writes mapped page-locked memory over PCIe, `staged_solve`), (2) the upload of D and
# E from pageable memory at ~12 GB/s. Part 1 sweeps BTCHOL_STAGED_SOLVE_MAX_BYTES (0: always
# copy; unset: always mapped; a knob of that session's binary, in CudaEngine::staged_solve,
# removed after this measurement found no difference) against the device-rhs solve; part 2 times upload and factor_solve
# from pageable and page-locked NumPy arrays (host-memory-upload.py).
# Device: run(command="bash bench/results/experiments/2026-11-29-host-traffic.sh", carry=[".bundle"])
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
use_gpu_check_bundle
common=(--backend cuda --algorithm nd --repeats 40 --warmup 5)
for round in 1 2; do
    for side in mapped copy device; do
        case $side in
            mapped) env=(); rhs=host ;;
            copy) env=(BTCHOL_STAGED_SOLVE_MAX_BYTES=0); rhs=host ;;
            device) env=(); rhs=device ;;
        esac
        env "${env[@]}" timeout 100 "$B" bench "${common[@]}" --rhs $rhs --dtype f64 --n 8,16,32 --N 64,256,1024,4096,16384 \
            --csv "$out/staged-$side-r$round.csv" > /dev/null 2>&1 || echo "$side r$round rc=$?"
        env "${env[@]}" timeout 60 "$B" bench "${common[@]}" --rhs $rhs --dtype f32,f64 --n 32 --N 256,1024 --nrhs 8 \
            --csv "$out/staged-$side-nrhs8-r$round.csv" > /dev/null 2>&1 || echo "$side nrhs8 r$round rc=$?"
    done
done
python3 - "$out" <<'PY'
import csv, glob, sys, statistics
from collections import defaultdict
t = defaultdict(list)
for f in glob.glob(sys.argv[1] + "/staged-*.csv"):
    side = f.split("staged-")[1].split("-")[0]
    for r in csv.DictReader(open(f)):
        t[(r["dtype"], int(r["n"]), int(r["N"]), int(r["nrhs"]), side)].append(float(r["solve_us_median"]))
keys = sorted({k[:4] for k in t})
print("dtype  n      N nrhs  bytes   mapped    copy  device  (solve µs, median of rounds)")
for k in keys:
    v = [statistics.median(t[k + (s,)]) if t.get(k + (s,)) else float("nan") for s in ("mapped", "copy", "device")]
    nbytes = k[2] * k[1] * k[3] * (8 if k[0] == "f64" else 4)
    print(f"{k[0]} {k[1]:3} {k[2]:6} {k[3]:4} {nbytes:7}  {v[0]:7.1f} {v[1]:7.1f} {v[2]:7.1f}")
PY
BTCHOL_LIB=.bundle/libbtchol.so PYTHONPATH=bindings/python timeout 150 python3 bench/results/experiments/host-memory-upload.py 20
