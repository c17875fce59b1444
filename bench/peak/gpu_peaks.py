#!/usr/bin/env python3
"""The GPU peak rates that every bench row's limit columns are measured against (issue 5).

Measures, on the current GPU, with CuPy and CUDA events (median of timed repeats after warm-ups,
random data, never zeros):

* FP64 flop/s: cuBLAS DGEMM 8192^3 (the FP64 tensor cores on sm_80/sm_90);
* FP32 flop/s: cuBLAS SGEMM 8192^3 with TF32 off (CUPY_TF32=0, set before CuPy loads);
* bytes/s: device-to-device copy of 1 GiB, bytes read + written counted.

Prints one CSV row and the Rust table entry for `src/bin/btchol/limits.rs` (`GPU_PEAKS`).
Usage, on the GPU machine: python3 bench/peak/gpu_peaks.py [--out FILE.csv]
"""
import argparse
import os
import statistics
import sys

os.environ["CUPY_TF32"] = "0"  # plain FP32 SGEMM, as the limits mean it
import cupy as cp  # noqa: E402


def median_ms(fn, warmup=3, repeats=15):
    for _ in range(warmup):
        fn()
    cp.cuda.Device().synchronize()
    times = []
    for _ in range(repeats):
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop))
    return statistics.median(times)


def gemm_flops(dtype, m=8192):
    rng = cp.random.default_rng(1)
    a = rng.standard_normal((m, m), dtype=cp.float64).astype(dtype)
    b = rng.standard_normal((m, m), dtype=cp.float64).astype(dtype)
    c = cp.empty((m, m), dtype=dtype)
    ms = median_ms(lambda: cp.matmul(a, b, out=c))
    # A result check, so a wrong or skipped product cannot report a rate.
    row = int(rng.integers(0, m))
    ref = a[row].astype(cp.float64) @ b.astype(cp.float64)
    err = float(cp.linalg.norm(c[row].astype(cp.float64) - ref) / cp.linalg.norm(ref))
    if not err < (1e-12 if dtype == cp.float64 else 1e-4):
        sys.exit(f"{dtype.__name__} GEMM wrong: relative error {err:.2e}")
    return 2.0 * m**3 / (ms * 1e-3)


def copy_bytes_per_s(nbytes=1 << 30):
    src = cp.random.default_rng(2).random(nbytes // 8)
    dst = cp.empty_like(src)
    ms = median_ms(lambda: dst.__setitem__(Ellipsis, src))
    if not bool(cp.array_equal(dst, src)):
        sys.exit("device copy wrong")
    return 2.0 * nbytes / (ms * 1e-3)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", help="write the CSV row here as well")
    args = ap.parse_args()
    name = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    f64, f32, bw = gemm_flops(cp.float64), gemm_flops(cp.float32), copy_bytes_per_s()
    csv = "device,f64_tflops,f32_tflops,copy_tbytes_per_s\n"
    csv += f"{name},{f64 / 1e12:.1f},{f32 / 1e12:.1f},{bw / 1e12:.2f}\n"
    print(csv, end="")
    print(
        f'("{name}", Peaks {{ f64_flops: {f64 / 1e12:.0f}e12, f32_flops: {f32 / 1e12:.0f}e12, '
        f'bytes_per_s: {bw / 1e12:.2f}e12, source: "table" }}),'
    )
    if args.out:
        with open(args.out, "w") as f:
            f.write(csv)


if __name__ == "__main__":
    main()
