# Sourced by the experiment scripts in this folder when they run on the GPU machine: the
# repository root as working directory, CUDA 13.0 on the paths, $out (results; $OUT when the
# device tool sets it) and $B (the bundled bench binary), and the GPU's name printed first.
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PATH=/usr/local/cuda/bin:$PATH
out=${OUT:-.bundle-ab/out}; mkdir -p "$out"
B=.bundle-ab/btchol
nvidia-smi --query-gpu=name --format=csv,noheader

# use_gpu_check_bundle: $B the gpu-check bundle's binary (scripts/gpu-check.sh bundle, carry
# .bundle) instead, with its precompiled kernels as the cache (env-only sweeps: one binary, one
# kernel set, settings varied).
use_gpu_check_bundle() {
    B=.bundle/btchol
    export BTCHOL_CACHE_DIR=/tmp/btchol-gpu-check-bundle-cache
    mkdir -p "$BTCHOL_CACHE_DIR" && tar xzf .bundle/kcache.tgz -C "$BTCHOL_CACHE_DIR"
}

# warm_sides SIDES SHAPES: each side's kernel variants of SHAPES (btchol kernels --only, e.g.
# f64:64,f64:128) compiled into its cache, the sides side by side, before anything is timed.
warm_sides() {
    local side
    for side in ${1//,/ }; do
        ( BTCHOL_KERNEL_DIR=.bundle-ab/kernels-$side BTCHOL_CACHE_DIR=/tmp/btchol-ab-$side timeout 200 "$B" kernels \
            --warm --only "$2" | tail -1 ) &
    done
    wait
}

# corr_sides TIMEOUT SIDES BENCH_ARGS...: each side's seeded correctness rows (one repeat, --rhs
# device) into $out/corr-SIDE.csv, the sides in parallel, each with its kernels and cache.
corr_sides() {
    local t=$1 sides=$2 side; shift 2
    for side in ${sides//,/ }; do
        ( BTCHOL_KERNEL_DIR=.bundle-ab/kernels-$side BTCHOL_CACHE_DIR=/tmp/btchol-ab-$side timeout "$t" "$B" bench \
            --backend cuda --algorithm nd --rhs device --repeats 1 --warmup 0 --csv "$out/corr-$side.csv" "$@" \
            > /dev/null 2>&1; echo "$side correctness rc=$?" ) &
    done
    wait
}
# same_bits A B: B's rows against A's, shape by shape, by the solutions' SHA-256 (a patch that
# claims the same factor); rows A never reached (its timeout) are counted apart, not as different.
same_bits() {
    python3 - "$out/corr-$1.csv" "$out/corr-$2.csv" <<'PY'
import csv, sys
a, b = ({(r["dtype"], r["n"], r["N"], r["batch"], r["nrhs"]): r for r in csv.DictReader(open(p))} for p in sys.argv[1:])
both = [k for k in b if k in a]
diff = [k for k in both if a[k]["solution_sha256"] != b[k]["solution_sha256"]]
worst = max((float(r["backward_error"]) / (1e-15 if r["dtype"] == "f64" else 1e-6) for r in b.values()), default=0)
print(f"{len(b)} rows on the second side, {len(both)} on both, {len(diff)} with other bits {diff[:8]}; "
      f"worst backward error {worst:.2f} x (1e-15 f64, 1e-6 f32)")
PY
}
# sanitize SIDE TOOL BENCH_ARGS...: compute-sanitizer's TOOL over one side's bench (one repeat,
# --rhs device), the log in $out/san-SIDE-TOOL.log, its last line printed.
sanitize() {
    local side=$1 tool=$2; shift 2
    BTCHOL_KERNEL_DIR=.bundle-ab/kernels-$side BTCHOL_CACHE_DIR=/tmp/btchol-ab-$side timeout 120 compute-sanitizer \
        --tool "$tool" --error-exitcode 9 "$B" bench --backend cuda --algorithm nd --rhs device --repeats 1 --warmup 0 \
        "$@" > "$out/san-$side-$tool.log" 2>&1
    echo "side $side $tool rc=$? $(tail -1 "$out/san-$side-$tool.log")"
}
# mode_table NAME "MODE ...": the bench CSVs $out/NAME-MODE-*.csv (one per mode, round and
# whatever else) as one table, factor / solve µs, the best round per shape and mode, with every
# round kept in $out/NAME.csv; the per-run CSVs are removed.
mode_table() {
    python3 - "$out" "$1" "$2" <<'PY'
import csv, glob, sys
out, name, modes = sys.argv[1], sys.argv[2], sys.argv[3].split()
rows = {}
for f in glob.glob(f"{out}/{name}-*.csv"):
    mode = f[len(f"{out}/{name}-"):].split("-")[0]
    for r in csv.DictReader(open(f)):
        by = rows.setdefault((r["dtype"], int(r["n"]), int(r["N"])), {}).setdefault(mode, ([], []))
        by[0].append(float(r["factor_us_median"])); by[1].append(float(r["solve_us_median"]))
with open(f"{out}/{name}.csv", "w") as w:
    w.write("dtype,n,N,mode,factor_us_rounds,solve_us_rounds\n")
    for (dt, n, N), by in sorted(rows.items()):
        for m, (fa, so) in by.items():
            w.write(f"{dt},{n},{N},{m},{' '.join(f'{x:.1f}' for x in fa)},{' '.join(f'{x:.1f}' for x in so)}\n")
print(f"{name}: factor / solve µs, the best round, by mode:")
print("dtype   n     N " + "".join(f"{m:>16}" for m in modes))
for (dt, n, N), by in sorted(rows.items()):
    print(f"{dt:5} {n:3} {N:5} " + "".join(f"{min(by[m][0]):8.1f}/{min(by[m][1]):<7.1f}" if m in by else f"{'-':>16}" for m in modes))
PY
    rm -f "$out/$1"-*.csv
}

# env_sweep VAR NAME "MODE ..." ROUNDS TIMEOUT BENCH_ARGS...: the bench (--backend cuda
# --algorithm nd --rhs device and BENCH_ARGS) once per mode and round, rounds interleaved, with
# VAR=MODE (mode `default`: VAR unset; set but empty would be an error); then the rows' worst
# backward error and mode_table NAME.
env_sweep() {
    local var=$1 name=$2 modes=$3 rounds=$4 t=$5 round mode; shift 5
    for round in $(seq "$rounds"); do
        for mode in $modes; do
            local setting=(); [ "$mode" = default ] || setting=("$var=$mode")
            env "${setting[@]}" timeout "$t" "$B" bench --backend cuda --algorithm nd --rhs device \
                --csv "$out/$name-$mode-$round.csv" "$@" > /dev/null 2>&1
            echo -n "$mode/$round rc=$? "
        done
    done
    echo
    python3 - "$out" "$name" <<'PY'
import csv, glob, sys
rows = [r for f in glob.glob(f"{sys.argv[1]}/{sys.argv[2]}-*.csv") for r in csv.DictReader(open(f))]
worst = {dt: max((float(r["backward_error"]) for r in rows if r["dtype"] == dt), default=0) for dt in ("f64", "f32")}
print(f"{len(rows)} rows; worst backward error f64 {worst['f64']:.2e}, f32 {worst['f32']:.2e}")
PY
    mode_table "$name" "$modes"
}
