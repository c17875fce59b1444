//! The hardware limits every bench row is compared with (issue 5): the work a factor or solve must
//! do (flops, bytes), the device's peak rates, and the time those imply.
//!
//! For each of factor and solve:
//!
//! * `t_flop_us  = flops / peak flop rate of the dtype`,
//! * `t_bw_us    = bytes / peak memory bandwidth`,
//! * `t_limit_us = max(t_flop_us, t_bw_us)`: no implementation of that algorithm can be faster
//!   (up to the peaks being right), and `pct_of_limit = t_limit_us / measured median · 100`.
//!
//! Small single systems are latency-bound instead (`levels` dependent steps, each a chain of
//! potrf → trsm → syrk/gemm on n×n blocks plus a launch or barrier): for them `pct_of_limit` is
//! small by nature and `levels` is the number to read.
//!
//! # Where the peak rates come from
//! All in this file. GPUs: [`GPU_PEAKS`], a table keyed by the device name the plan reports, each
//! number measured once on that device (source in the entry). CPUs: measured by this process at
//! first use ([`cpu_peaks`]): an AVX2+FMA register loop and a memory copy, run on as many threads
//! as the row used, best of several trials. A device that is in neither (no table entry, a CPU
//! without AVX2+FMA) gets empty limit columns rather than a guess.

use std::sync::Mutex;

use btchol::schedule::{sequential_factor_flops, Schedule};
use btchol::{Algorithm, Backend, DType};

/// Peak rates of one device.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Peaks {
    /// FP64 flop/s.
    pub f64_flops: f64,
    /// FP32 flop/s.
    pub f32_flops: f64,
    /// Memory bandwidth in bytes/s, read and write bytes both counted.
    pub bytes_per_s: f64,
    /// Where the numbers come from, for the `peak_source` column: `table` or `probe`.
    pub source: &'static str,
}

impl Peaks {
    pub fn flops(&self, dtype: DType) -> f64 {
        match dtype {
            DType::F64 => self.f64_flops,
            DType::F32 => self.f32_flops,
        }
    }
}

/// GPU peaks by device name (exactly as `plan.gpu_name()` reports it).
///
/// NVIDIA H100 80GB HBM3 (the device machine until 2026-11-27), measured 2026-11-22 with CuPy
/// and CUDA events, medians (../shared/notes/cuda-toolchain.md, "Limits measured on the device's
/// H100"):
/// * FP64 56 TFLOP/s: cuBLAS DGEMM 8192³ on the FP64 tensor cores (the datasheet's 67 is not
///   reached; the non-tensor FP64 pipes give 34, so kernels without DMMA see a lower ceiling);
/// * FP32 51 TFLOP/s: cuBLAS SGEMM 8192³, TF32 off;
/// * 2.96 TB/s: device-to-device copy of 1 GiB, read + write counted (datasheet 3.35 TB/s).
///
/// NVIDIA H200 (the device machine from 2026-11-28), measured 2026-11-28 the same way by
/// `bench/peak/gpu_peaks.py` (15 repeats after 3 warm-ups, medians): FP64 55.7 TFLOP/s, FP32
/// 51.1 TFLOP/s (the H100's: the same chip), copy 4.19 TB/s (datasheet 4.8 TB/s).
pub const GPU_PEAKS: &[(&str, Peaks)] = &[
    ("NVIDIA H100 80GB HBM3", Peaks { f64_flops: 56e12, f32_flops: 51e12, bytes_per_s: 2.96e12, source: "table" }),
    ("NVIDIA H200", Peaks { f64_flops: 56e12, f32_flops: 51e12, bytes_per_s: 4.19e12, source: "table" }),
];

/// The peaks for the device a row ran on; `threads` is the CPU threads the plan used.
pub fn peaks(backend: Backend, device: &str, threads: usize) -> Option<Peaks> {
    match backend {
        Backend::Cuda => GPU_PEAKS.iter().find(|(name, _)| *name == device).map(|&(_, p)| p),
        Backend::Cpu | Backend::Auto => cpu_peaks(threads.max(1)),
    }
}

/// CPU peaks on `threads` threads, measured once per thread count and cached (≈ 0.1–0.3 s).
///
/// * flops: each thread runs 12 independent chains of 256-bit FMAs (enough to hide the FMA latency
///   on two FMA pipes), 2 flops per lane; the threads run at the same time, so the result is the
///   aggregate rate of that many cores with whatever else the machine is doing;
/// * bandwidth: the threads copy disjoint parts of a 64 MiB buffer into another, read + write
///   counted (like the GPU's device-to-device figure).
///
/// The best of five trials is kept. On the 2-core development VM ("AMD EPYC") this gave
/// 19.6 GFLOP/s FP64 and 39.7 FP32 per core and 20–27 GB/s on 2026-11-23; the same VM name ran
/// the 2026-11-22 sweep at up to 35 / 72 GFLOP/s single-threaded, so its host varies and a fixed
/// table entry would be wrong: hence the probe. `bench/peak/cpu_peak.c` is the same probe in C.
/// `None` without AVX2+FMA (the probe would measure the wrong instructions).
pub fn cpu_peaks(threads: usize) -> Option<Peaks> {
    static CACHE: Mutex<Vec<(usize, Option<Peaks>)>> = Mutex::new(Vec::new());
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&(_, p)) = cache.iter().find(|(t, _)| *t == threads) {
        return p;
    }
    let p = probe::run(threads);
    cache.push((threads, p));
    p
}

#[cfg(target_arch = "x86_64")]
mod probe {
    use super::Peaks;
    use std::arch::x86_64::*;
    use std::hint::black_box;
    use std::time::Instant;

    const ITERS: usize = 2_000_000;
    const CHAINS: f64 = 12.0;

    #[target_feature(enable = "avx2,fma")]
    unsafe fn fma_f64(iters: usize) -> f64 {
        let m = _mm256_set1_pd(black_box(0.999_999));
        let c = _mm256_set1_pd(black_box(1e-7));
        let mut a = [_mm256_setzero_pd(); 12];
        for (k, v) in a.iter_mut().enumerate() {
            *v = _mm256_set1_pd(k as f64);
        }
        for _ in 0..iters {
            a[0] = _mm256_fmadd_pd(a[0], m, c);
            a[1] = _mm256_fmadd_pd(a[1], m, c);
            a[2] = _mm256_fmadd_pd(a[2], m, c);
            a[3] = _mm256_fmadd_pd(a[3], m, c);
            a[4] = _mm256_fmadd_pd(a[4], m, c);
            a[5] = _mm256_fmadd_pd(a[5], m, c);
            a[6] = _mm256_fmadd_pd(a[6], m, c);
            a[7] = _mm256_fmadd_pd(a[7], m, c);
            a[8] = _mm256_fmadd_pd(a[8], m, c);
            a[9] = _mm256_fmadd_pd(a[9], m, c);
            a[10] = _mm256_fmadd_pd(a[10], m, c);
            a[11] = _mm256_fmadd_pd(a[11], m, c);
        }
        let mut s = a[0];
        for v in &a[1..] {
            s = _mm256_add_pd(s, *v);
        }
        _mm256_cvtsd_f64(s)
    }

    #[target_feature(enable = "avx2,fma")]
    unsafe fn fma_f32(iters: usize) -> f64 {
        let m = _mm256_set1_ps(black_box(0.9999));
        let c = _mm256_set1_ps(black_box(1e-7));
        let mut a = [_mm256_setzero_ps(); 12];
        for (k, v) in a.iter_mut().enumerate() {
            *v = _mm256_set1_ps(k as f32);
        }
        for _ in 0..iters {
            a[0] = _mm256_fmadd_ps(a[0], m, c);
            a[1] = _mm256_fmadd_ps(a[1], m, c);
            a[2] = _mm256_fmadd_ps(a[2], m, c);
            a[3] = _mm256_fmadd_ps(a[3], m, c);
            a[4] = _mm256_fmadd_ps(a[4], m, c);
            a[5] = _mm256_fmadd_ps(a[5], m, c);
            a[6] = _mm256_fmadd_ps(a[6], m, c);
            a[7] = _mm256_fmadd_ps(a[7], m, c);
            a[8] = _mm256_fmadd_ps(a[8], m, c);
            a[9] = _mm256_fmadd_ps(a[9], m, c);
            a[10] = _mm256_fmadd_ps(a[10], m, c);
            a[11] = _mm256_fmadd_ps(a[11], m, c);
        }
        let mut s = a[0];
        for v in &a[1..] {
            s = _mm256_add_ps(s, *v);
        }
        _mm256_cvtss_f32(s) as f64
    }

    /// Seconds of the slowest of `threads` concurrent runs of `f`, best of `trials`.
    fn best_concurrent(threads: usize, trials: usize, f: impl Fn(usize) + Sync) -> f64 {
        let mut best = f64::INFINITY;
        for _ in 0..trials {
            let t = Instant::now();
            std::thread::scope(|s| {
                for i in 0..threads {
                    let f = &f;
                    s.spawn(move || f(i));
                }
            });
            best = best.min(t.elapsed().as_secs_f64());
        }
        best
    }

    pub fn run(threads: usize) -> Option<Peaks> {
        if !btchol::cpu::isa::has_fma() {
            return None;
        }
        let flops_per_thread = ITERS as f64 * CHAINS * 2.0;
        // SAFETY: the CPU has AVX2 and FMA (checked above).
        let t64 = best_concurrent(threads, 5, |_| {
            black_box(unsafe { fma_f64(black_box(ITERS)) });
        });
        let t32 = best_concurrent(threads, 5, |_| {
            black_box(unsafe { fma_f32(black_box(ITERS)) });
        });
        const BYTES: usize = 64 << 20;
        let chunk = BYTES / threads;
        let src: Vec<u8> = vec![1; chunk * threads];
        let dst: Vec<Mutex<Vec<u8>>> = (0..threads).map(|_| Mutex::new(vec![2; chunk])).collect();
        let tc = best_concurrent(threads, 5, |i| {
            let mut d = dst[i].lock().unwrap_or_else(|e| e.into_inner());
            d.copy_from_slice(&src[i * chunk..(i + 1) * chunk]);
            black_box(&mut *d);
        });
        Some(Peaks {
            f64_flops: flops_per_thread * 4.0 * threads as f64 / t64,
            f32_flops: flops_per_thread * 8.0 * threads as f64 / t32,
            bytes_per_s: 2.0 * (chunk * threads) as f64 / tc,
            source: "probe",
        })
    }

    use std::sync::Mutex;
}

#[cfg(not(target_arch = "x86_64"))]
mod probe {
    pub fn run(_threads: usize) -> Option<super::Peaks> {
        None
    }
}

/// The work of one factor and one solve of the whole batch, by the algorithm that ran.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Work {
    /// Factor flops: `Schedule::factor_flops` for nested dissection, (7/3·N − 2)·n³ for seq; · B.
    pub factor_flops: f64,
    /// Bytes a factorization must move at least, algorithm-independent:
    /// `2 · (2N − 1) · n² · B · sizeof(dtype)`: read the N diagonal blocks D and the N − 1
    /// sub-diagonal blocks E once, and write the factor's N + (N − 1) blocks once. Blocks count as
    /// full n×n (as they are stored), so the symmetric D and the triangular factor blocks are
    /// over-counted by ≈ n(n−1)/2 elements each; nested dissection's fill (≈ N more blocks, which
    /// a kernel can keep on chip) is not counted.
    pub factor_bytes: f64,
    /// Solve flops for nrhs right-hand sides: forward + backward substitution, each with one
    /// triangular solve (n² flops per column) per diagonal block and one gemv (2n² per column) per
    /// off-diagonal factor block: `2 · nrhs · (N·n² + 2·C·n²) · B`, C = off-diagonal factor blocks
    /// (N − 1 for seq, N − 1 plus the fill for nested dissection).
    pub solve_flops: f64,
    /// Bytes a solve must move at least: read the factor once ((N + C) full n×n blocks) and the
    /// right-hand side once, write the solution once: `((N + C)·n² + 2·N·n·nrhs) · B · sizeof`.
    /// A real solve reads the factor twice (forward, then backward) unless it fits in cache.
    pub solve_bytes: f64,
}

/// Off-diagonal blocks of the factor (couplings): N − 1 for seq; for nested dissection every
/// coupling of every eliminated block, which includes the fill.
#[cfg(test)]
pub fn factor_off_diagonal_blocks(algorithm: Algorithm, n_blocks: usize) -> usize {
    match algorithm {
        Algorithm::NestedDissection => off_diagonal_blocks(&Schedule::new(n_blocks)),
        _ => n_blocks - 1,
    }
}

fn off_diagonal_blocks(s: &Schedule) -> usize {
    s.levels().iter().flat_map(|l| &l.eliminations).map(|e| e.couplings.len()).sum()
}

/// The schedule a default plan of `algorithm` runs on `backend` for `dims` (nested dissection:
/// plain or partitioned, as `Partition::Auto` picks; `None` for the sequential algorithm).
pub fn plan_schedule(algorithm: Algorithm, backend: Backend, dims: btchol::Dims) -> Option<Schedule> {
    (algorithm == Algorithm::NestedDissection).then(|| {
        btchol::Partition::Auto
            .schedule(dims, backend == Backend::Cuda)
            .unwrap_or_else(|_| Schedule::new(dims.n_blocks))
    })
}

/// The [`Work`] of a (resolved) algorithm on B systems of N blocks of size n, with plain nested
/// dissection's schedule (the tests' counts by hand).
#[cfg(test)]
pub fn work(algorithm: Algorithm, batch: usize, n_blocks: usize, n: usize, nrhs: usize, elem: usize) -> Work {
    let schedule = (algorithm == Algorithm::NestedDissection).then(|| Schedule::new(n_blocks));
    work_for(schedule.as_ref(), batch, n_blocks, n, nrhs, elem)
}

/// The [`Work`] of `schedule` (`None`: the sequential algorithm) on B systems of N blocks of size n.
pub fn work_for(
    schedule: Option<&Schedule>,
    batch: usize,
    n_blocks: usize,
    n: usize,
    nrhs: usize,
    elem: usize,
) -> Work {
    let (b, nb, nf, k, e) = (batch as f64, n_blocks as f64, n as f64, nrhs as f64, elem as f64);
    let n2 = nf * nf;
    let factor_flops = schedule.map_or_else(|| sequential_factor_flops(n_blocks, n), |s| s.factor_flops(n)) * b;
    let c = schedule.map_or(n_blocks - 1, off_diagonal_blocks) as f64;
    Work {
        factor_flops,
        factor_bytes: 2.0 * (2.0 * nb - 1.0) * n2 * b * e,
        solve_flops: 2.0 * k * (nb * n2 + 2.0 * c * n2) * b,
        solve_bytes: ((nb + c) * n2 + 2.0 * nb * nf * k) * b * e,
    }
}

/// (t_flop_us, t_bw_us, t_limit_us) for `flops` and `bytes` at the given rates.
pub fn limit_us(flops: f64, bytes: f64, flops_per_s: f64, bytes_per_s: f64) -> (f64, f64, f64) {
    let t_flop = flops / flops_per_s * 1e6;
    let t_bw = bytes / bytes_per_s * 1e6;
    (t_flop, t_bw, t_flop.max(t_bw))
}

/// `limit / measured · 100`, NaN when either is missing or the measurement is zero.
pub fn pct_of_limit(limit_us: f64, measured_us: f64) -> f64 {
    if measured_us > 0.0 {
        limit_us / measured_us * 100.0
    } else {
        f64::NAN
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEQ: Algorithm = Algorithm::Sequential;
    const ND: Algorithm = Algorithm::NestedDissection;

    #[test]
    fn one_block_is_one_cholesky() {
        // N = 1: one potrf (n³/3 flops) whatever the algorithm; nothing off the diagonal.
        for alg in [SEQ, ND] {
            let w = work(alg, 1, 1, 6, 1, 8);
            assert!((w.factor_flops - 72.0).abs() < 1e-9, "{}", w.factor_flops); // 6³/3
            assert_eq!(factor_off_diagonal_blocks(alg, 1), 0);
            // Read D (36 elements), write the factor block: 2·36·8 bytes.
            assert_eq!(w.factor_bytes, 576.0);
            // Forward and backward triangular solve, n² each: 2·36.
            assert_eq!(w.solve_flops, 72.0);
            // Factor block 36 + b and x 2·6, times 8 bytes.
            assert_eq!(w.solve_bytes, 384.0);
        }
    }

    #[test]
    fn sequential_counts_by_hand() {
        // N = 3, n = 2, seq: potrf ×3 (8/3 each), trsm ×2 (8), syrk ×2 (8): 8 + 32 = 40 = (7 − 2)·8.
        let w = work(SEQ, 1, 3, 2, 1, 8);
        assert_eq!(w.factor_flops, 40.0);
        assert_eq!(w.factor_flops, sequential_factor_flops(3, 2));
        // Batch and nrhs scale linearly; f32 halves the bytes.
        let wb = work(SEQ, 5, 3, 2, 3, 4);
        assert_eq!(wb.factor_flops, 200.0);
        assert_eq!(wb.factor_bytes, 5.0 * 2.0 * 5.0 * 4.0 * 4.0);
        // Solve, one rhs: 2·(3·4 + 2·2·4) = 56; three rhs: 168, ×5 systems.
        assert_eq!(w.solve_flops, 56.0);
        assert_eq!(wb.solve_flops, 5.0 * 168.0);
        // Solve bytes: (3 + 2) blocks of 4 + b and x of 6 each = 32 elements.
        assert_eq!(w.solve_bytes, 32.0 * 8.0);
    }

    #[test]
    fn nested_dissection_counts_by_hand() {
        // N = 3, nested dissection: level 0 eliminates blocks 1 and 3 (1-based), each with one
        // coupling to block 2 (potrf + trsm each), block 2 gets a two-source syrk update (2n³);
        // level 1 eliminates block 2 (potrf). n = 3: 3·9 + 2·27 + 2·27 = 135.
        assert_eq!(work(ND, 1, 3, 3, 1, 8).factor_flops, 135.0);
        assert_eq!(factor_off_diagonal_blocks(ND, 3), 2);
        // N = 4 has one fill block: eliminating block 3 couples blocks 2 and 4.
        assert_eq!(factor_off_diagonal_blocks(ND, 4), 4);
        // Nested dissection never does fewer flops than seq (N ≤ 3: the same steps, no fill; N ≥ 4: more).
        for nb in [2, 3, 4, 7, 64, 1000] {
            let (s, d) = (work(SEQ, 1, nb, 8, 1, 8), work(ND, 1, nb, 8, 1, 8));
            let same = (d.factor_flops - s.factor_flops).abs() < 1e-9 * s.factor_flops;
            assert!(if nb <= 3 { same } else { d.factor_flops > s.factor_flops && !same }, "N = {nb}");
            assert!(d.solve_flops >= s.solve_flops, "N = {nb}");
            // Factor bytes are algorithm-independent.
            assert_eq!(d.factor_bytes, s.factor_bytes);
        }
    }

    #[test]
    fn limits_and_percentages() {
        // 1 GFLOP at 1 TFLOP/s = 1000 µs; 1 GB at 2 TB/s = 500 µs: flop-bound.
        assert_eq!(limit_us(1e9, 1e9, 1e12, 2e12), (1000.0, 500.0, 1000.0));
        assert_eq!(pct_of_limit(25.0, 100.0), 25.0);
        assert!(pct_of_limit(25.0, 0.0).is_nan());
        let h100 = peaks(Backend::Cuda, "NVIDIA H100 80GB HBM3", 1).unwrap();
        assert_eq!((h100.flops(DType::F64), h100.flops(DType::F32)), (56e12, 51e12));
        assert!(peaks(Backend::Cuda, "some other GPU", 1).is_none());
    }

    #[test]
    fn bench_rows_carry_the_limit_columns() {
        use crate::config::{Case, RunSettings};
        use crate::report::{Row, Value};
        // A tiny CPU run through the real runner and row builder, both algorithms, a batch.
        for algorithm in [SEQ, ND] {
            let dims = btchol::Dims::new(3, 5, 4).unwrap();
            let case =
                Case { backend: Backend::Cpu, algorithm, dtype: DType::F64, mixed: false, dims, nrhs: 2, threads: 1 };
            let settings =
                RunSettings { repeats: Some(2), warmup: 0, seed: 7, ..crate::config::BenchConfig::default().run };
            let m = crate::measure::run_case(&case, &settings).unwrap();
            // The runner's counts and this module's agree.
            let w = work(m.algorithm, 3, 5, 4, 2, 8);
            assert_eq!((m.flops_schedule, m.bytes_min), (w.factor_flops, w.factor_bytes));
            let row = Row::from_measurement(&m, "2026-01-01T00:00:00Z");
            let header = row.csv_header();
            for col in [
                "levels",
                "flops_seq",
                "flops_schedule",
                "bytes_min",
                "t_flop_us",
                "t_bw_us",
                "t_limit_us",
                "pct_of_limit",
                "solve_flops",
                "solve_bytes",
                "solve_t_limit_us",
                "solve_pct_of_limit",
                "peak_gflops",
                "peak_gbytes_per_s",
                "peak_source",
            ] {
                assert!(header.split(',').any(|h| h == col), "CSV lacks {col}: {header}");
                assert!(row.to_json().contains(&format!("\"{col}\": ")), "JSON lacks {col}");
            }
            assert_eq!(header.split(',').count(), row.to_csv().split(',').count());
            let num = |k: &str| match row.get(k) {
                Some(Value::Fixed(x, _)) => *x,
                Some(Value::Int(i)) => *i as f64,
                other => panic!("{k}: {other:?}"),
            };
            assert_eq!(num("solve_flops"), w.solve_flops);
            if let Some(p) = cpu_peaks(1) {
                let (tf, tb) = (num("t_flop_us"), num("t_bw_us"));
                assert!((tf - w.factor_flops / p.f64_flops * 1e6).abs() < 1e-3, "{tf}");
                assert!((num("t_limit_us") - tf.max(tb)).abs() < 1e-9);
                let pct = num("pct_of_limit");
                assert!(pct > 0.0 && pct.is_finite(), "{pct}");
                assert!(matches!(row.get("peak_source"), Some(Value::Str(s)) if s == "probe"));
            }
        }
    }

    #[test]
    fn cpu_probe_is_plausible() {
        if let Some(p) = cpu_peaks(1) {
            // Any AVX2+FMA core: well above 1 GFLOP/s and 1 GB/s, f32 about twice f64.
            assert!(p.f64_flops > 1e9 && p.bytes_per_s > 1e9, "{p:?}");
            assert!(p.f32_flops > 1.2 * p.f64_flops, "{p:?}");
            assert_eq!(cpu_peaks(1), Some(p), "cached");
        }
    }
}
