//! The CPU backends against the independent f64 reference, over the shape matrix of the
//! foundation issue: N ∈ {1, 2, 3, 5, 17, 64, 1000}, n ∈ {1, 2, 3, 7, 8, 31, 32, 33, 64},
//! batch ∈ {1, 3}, m ∈ {1, 5}, f32 and f64, both layouts, every algorithm.

mod common;
use btchol::reference::*;
use btchol::*;
use common::*;

const ALGORITHMS: [Algorithm; 2] = [Algorithm::Sequential, Algorithm::NestedDissection];
const LAYOUTS: [Layout; 2] = [Layout::RowMajor, Layout::ColMajor];

fn check_shape<T: Scalar>(nb: usize, n: usize, batch: usize, nrhs: usize) {
    for alg in ALGORITHMS {
        for layout in LAYOUTS {
            for threads in [1, 2] {
                let seed = seed_from(&[nb, n, batch, nrhs, alg as usize, layout as usize, threads]);
                let dims = Dims::new(batch, nb, n).unwrap();
                let opts = PlanOptions { backend: Backend::Cpu, algorithm: alg, threads, ..Default::default() };
                let s = solve_random::<T>(seed, dims, nrhs, layout, opts);
                let be = s.backward_error();
                assert!(
                    be < tolerance::<T>(n),
                    "{:?} backward error {be:e} ≥ {:e} for N={nb} n={n} batch={batch} m={nrhs} {alg:?} {layout:?} threads={threads} seed={seed}",
                    T::DTYPE,
                    tolerance::<T>(n)
                );
            }
        }
    }
}

fn sweep<T: Scalar>() {
    for nb in [1, 2, 3, 5, 17, 64] {
        for n in [1, 2, 3, 7, 8, 31, 32, 33] {
            for (batch, nrhs) in [(1, 1), (3, 5)] {
                check_shape::<T>(nb, n, batch, nrhs);
            }
        }
    }
    for n in [1, 3, 8] {
        check_shape::<T>(1000, n, 1, 1);
    }
    check_shape::<T>(1000, 2, 3, 5);
    for nb in [1, 2, 17] {
        check_shape::<T>(nb, 64, 3, 5);
    }
}

#[test]
fn f64_backward_error_is_small_for_every_shape_algorithm_and_layout() {
    sweep::<f64>();
}

#[test]
fn f32_backward_error_is_small_for_every_shape_algorithm_and_layout() {
    sweep::<f32>();
}

/// Forward comparison with a dense f64 Cholesky of the whole matrix (small problems).
#[test]
fn solution_matches_dense_f64_cholesky() {
    for (nb, n) in [(1, 1), (2, 3), (3, 7), (5, 8), (17, 5), (13, 31), (7, 33)] {
        for alg in ALGORITHMS {
            let dims = Dims::new(2, nb, n).unwrap();
            let opts = PlanOptions { backend: Backend::Cpu, algorithm: alg, threads: 2, ..Default::default() };
            let s = solve_random::<f64>(seed_from(&[nb, n, alg as usize, 77]), dims, 3, Layout::ColMajor, opts);
            let m = s.matrix();
            let x = RhsRef::dense(dims, 3, Layout::ColMajor, &s.x).unwrap();
            let b = RhsRef::dense(dims, 3, Layout::ColMajor, &s.b).unwrap();
            for item in 0..2 {
                let rows = dims.rows();
                let mut l = dense_matrix(&m, item);
                dense_cholesky(&mut l, rows).unwrap();
                for col in 0..3 {
                    let want = dense_cholesky_solve(&l, rows, &column_f64(&b, dims, item, col));
                    let got = column_f64(&x, dims, item, col);
                    let scale = want.iter().fold(0.0f64, |a, v| a.max(v.abs()));
                    let err = want.iter().zip(&got).map(|(p, q)| (p - q).abs()).fold(0.0, f64::max) / scale;
                    // The generated matrices are well conditioned (diagonally dominant).
                    assert!(err < 1e-12, "forward error {err:e} for N={nb} n={n} {alg:?} item {item} col {col}");
                }
            }
        }
    }
}

#[test]
fn logdet_matches_dense_reference() {
    for (nb, n) in [(1, 1), (2, 2), (3, 7), (17, 4), (9, 33)] {
        for alg in ALGORITHMS {
            let dims = Dims::new(3, nb, n).unwrap();
            let (d, e) = random_problem::<f64>(seed_from(&[nb, n, 5]), dims, Layout::RowMajor, 0.5);
            let m = BlockTridiagRef::new(dims, Layout::RowMajor, &d, &e).unwrap();
            let mut plan =
                Plan::<f64>::new(dims, PlanOptions { backend: Backend::Cpu, algorithm: alg, ..Default::default() })
                    .unwrap();
            plan.upload(&m).unwrap();
            plan.factor().unwrap();
            let mut got = [0.0; 3];
            plan.logdet(&mut got).unwrap();
            for (item, g) in got.iter().enumerate() {
                let mut l = dense_matrix(&m, item);
                dense_cholesky(&mut l, dims.rows()).unwrap();
                let want = dense_logdet(&l, dims.rows());
                assert!((g - want).abs() <= 1e-12 * want.abs().max(1.0), "logdet {g} vs {want} N={nb} n={n} {alg:?}");
            }
        }
    }
}

/// Sequential and nested dissection agree to rounding on the same input.
#[test]
fn algorithms_agree_to_rounding() {
    let dims = Dims::new(2, 37, 9).unwrap();
    let run = |alg| {
        let opts = PlanOptions { backend: Backend::Cpu, algorithm: alg, threads: 2, ..Default::default() };
        solve_random::<f64>(1234, dims, 2, Layout::RowMajor, opts).x
    };
    let (a, b) = (run(Algorithm::Sequential), run(Algorithm::NestedDissection));
    let diff = a.iter().zip(&b).map(|(p, q)| (p - q).abs()).fold(0.0, f64::max);
    let scale = a.iter().fold(0.0f64, |s, v| s.max(v.abs()));
    assert!(diff <= 1e-12 * scale, "sequential and nested dissection differ by {diff:e}");
}

/// Tiny pivots: a well-conditioned problem scaled by s = 1e-200 and 1e-310 in f64, 1e-30 and
/// 1e-39 in f32 (below √MIN_POSITIVE, and subnormal). (sΨ)x = (sb) has the unscaled problem's x,
/// to the bits the scaled input keeps. The small-block potrf once formed a_ji·a_ji2/d, whose
/// product underflows there (f32 errors of 5e-2 at 1e-39; src/dense/avx.rs chol_small).
#[test]
fn subnormal_pivots_factor_and_solve() {
    fn run<T: Scalar>(scale: f64, tol: f64) {
        for algorithm in ALGORITHMS {
            for (nb, n, batch) in [(5, 1, 1), (9, 3, 2), (17, 8, 1), (6, 16, 2), (4, 32, 1), (3, 33, 1)] {
                let dims = Dims::new(batch, nb, n).unwrap();
                let (_, tiny) = solve_scaled::<T>(71, dims, Backend::Cpu, algorithm, scale);
                let (_, unit) = solve_scaled::<T>(71, dims, Backend::Cpu, algorithm, 1.0);
                let diff = relative_difference(&tiny, &unit);
                assert!(diff <= tol, "{:?} N={nb} n={n} {algorithm:?}: |x_tiny - x| / |x| = {diff:e}", T::DTYPE);
            }
        }
    }
    run::<f64>(1e-200, 1e-11);
    run::<f64>(1e-310, 1e-11);
    run::<f32>(1e-30, 1e-4);
    run::<f32>(1e-39, 1e-4);
}

/// Ill-conditioned diagonal blocks (κ(D_i) = 1e10 in f64, 1e5 in f32; right-hand sides in the
/// directions of the large eigenvalues): both CPU algorithms stay backward stable.
#[test]
fn ill_conditioned_blocks_are_solved_backward_stably() {
    fn run<T: Scalar>(cond: f64) {
        for (nb, n, batch) in [(3, 5, 1), (17, 16, 2), (31, 24, 1), (9, 1, 1)] {
            let dims = Dims::new(batch, nb, n).unwrap();
            let (d, e, b) = ill_conditioned_problem::<T>(seed_from(&[nb, n, batch, 71]), dims, cond);
            for algorithm in [Algorithm::Sequential, Algorithm::NestedDissection] {
                let opts = PlanOptions { backend: Backend::Cpu, algorithm, ..Default::default() };
                let be = solve_backward_error(dims, &d, &e, &b, opts);
                assert!(be < tolerance::<T>(n), "{:?} {algorithm:?} N={nb} n={n}: backward error {be:e}", T::DTYPE);
            }
        }
    }
    run::<f64>(1e10);
    run::<f32>(1e5);
}

/// The partitioned schedule (chunks eliminated in order, then their separators by nested
/// dissection) through the CPU executor: every chunk length from the sequential extreme (one
/// chunk) to chunks of one block, awkward N (prime, a short last chunk, no separator) and n.
#[test]
fn partitioned_nested_dissection_backward_error_is_small() {
    for chunk in [1, 2, 3, 7, 15, 100] {
        for nb in [1, 2, 3, 5, 16, 17, 64, 131] {
            for (n, batch, nrhs) in [(1, 1, 1), (3, 3, 5), (8, 1, 2), (31, 2, 1)] {
                for threads in [1, 2] {
                    let dims = Dims::new(batch, nb, n).unwrap();
                    let opts = PlanOptions {
                        backend: Backend::Cpu,
                        algorithm: Algorithm::NestedDissection,
                        partition: Partition::Chunks(chunk),
                        threads,
                        ..Default::default()
                    };
                    let seed = seed_from(&[nb, n, batch, nrhs, chunk, threads]);
                    let be = solve_random::<f64>(seed, dims, nrhs, Layout::ColMajor, opts).backward_error();
                    assert!(be < tolerance::<f64>(n), "chunk={chunk} N={nb} n={n} B={batch} seed={seed}: {be:e}");
                    let be = solve_random::<f32>(seed, dims, nrhs, Layout::RowMajor, opts).backward_error();
                    assert!(be < tolerance::<f32>(n), "f32 chunk={chunk} N={nb} n={n} B={batch} seed={seed}: {be:e}");
                }
            }
        }
    }
}

#[test]
fn partition_chunks_of_zero_blocks_is_an_invalid_argument() {
    let opts = PlanOptions { backend: Backend::Cpu, partition: Partition::Chunks(0), ..Default::default() };
    let err = Plan::<f64>::new(Dims::new(1, 8, 2).unwrap(), opts).map(|_| ()).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
}

#[test]
fn auto_partition_chunks_only_small_blocks_on_the_gpu_past_a_horizon_set_by_the_block_size() {
    // Below N = 2048, short chunks from a horizon that depends on the block size.
    for (n, from, chunk) in [(1, 128, 5), (8, 128, 5), (9, 1024, 3), (16, 1024, 3), (17, 1536, 3), (32, 1536, 3)] {
        assert_eq!(Partition::auto_chunk(true, 1, n), 0, "n = {n}");
        assert_eq!(Partition::auto_chunk(true, from - 1, n), 0, "n = {n}");
        assert_eq!(Partition::auto_chunk(true, from, n), chunk, "n = {n}");
        assert_eq!(Partition::auto_chunk(true, 2047, n), chunk, "n = {n}");
        assert_eq!(Partition::auto_chunk(false, from, n), 0, "n = {n}");
    }
    for n in [1, 4, 8, 16, 24, 32] {
        assert_eq!(Partition::auto_chunk(true, 2048, n), 7, "n = {n}");
        assert_eq!(Partition::auto_chunk(true, 8191, n), 7, "n = {n}");
        assert_eq!(Partition::auto_chunk(true, 8192, n), 15, "n = {n}");
        assert_eq!(Partition::auto_chunk(true, 16383, n), 15, "n = {n}");
        assert_eq!(Partition::auto_chunk(false, 16384, n), 0, "n = {n}");
    }
    // Longer chunks pay from N = 16384 for blocks of 17..32 only (n = 16 solves slower with 31).
    assert_eq!(Partition::auto_chunk(true, 16384, 8), 15);
    assert_eq!(Partition::auto_chunk(true, 16384, 16), 15);
    assert_eq!(Partition::auto_chunk(true, 16384, 17), 31);
    assert_eq!(Partition::auto_chunk(true, 1 << 20, 32), 31);
    assert_eq!(Partition::auto_chunk(true, 16384, 33), 0);
    assert_eq!(Partition::auto_chunk(true, 16384, 64), 0);
}
