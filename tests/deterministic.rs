//! Deterministic mode: the same factor + solve, run 20 times with several threads, gives the same
//! bits every time, for the sequential and the nested-dissection algorithm, single systems and
//! batches, with and without `PlanOptions::deterministic` (the CPU backend is deterministic in any
//! case: every output block is written by one task, in an order fixed by the schedule, and the
//! per-item reductions are integer minima and sums; the CUDA kernels use no floating-point
//! atomics). The first test also runs on the GPU with BTCHOL_TEST_BACKEND=cuda.

mod common;

use btchol::reference::*;
use btchol::*;
use common::*;

/// Factor + solve + logdet with a fresh plan; the solution's and log-determinants' bits.
fn run(dims: Dims, opts: PlanOptions, d: &[f64], e: &[f64], b: &[f64], nrhs: usize) -> (Vec<u64>, Vec<u64>) {
    let mut plan = Plan::<f64>::new(dims, opts).unwrap();
    let m = BlockTridiagRef::new(dims, Layout::RowMajor, d, e).unwrap();
    let mut x = b.to_vec();
    plan.factor_solve(&m, &mut RhsMut::dense(dims, nrhs, Layout::RowMajor, &mut x).unwrap()).unwrap();
    let mut ld = vec![0.0; dims.batch];
    plan.logdet(&mut ld).unwrap();
    (x.iter().map(|v| v.to_bits()).collect(), ld.iter().map(|v| v.to_bits()).collect())
}

#[test]
fn twenty_runs_give_identical_bits() {
    for (batch, nb, n) in [(1, 257, 8), (1, 64, 5), (6, 33, 4), (3, 2, 1), (1, 1, 3)] {
        for alg in [Algorithm::Sequential, Algorithm::NestedDissection] {
            let dims = Dims::new(batch, nb, n).unwrap();
            let seed = seed_from(&[batch, nb, n, alg as usize]);
            let (d, e) = random_problem::<f64>(seed, dims, Layout::RowMajor, 0.5);
            let nrhs = 3;
            let b = random_vec::<f64>(seed ^ 5, dims.batch * dims.rows() * nrhs);
            // On the test backend: the CPU, or the GPU with BTCHOL_TEST_BACKEND=cuda.
            let opts = |det: bool| PlanOptions { deterministic: det, ..backend_options(alg, 3, n) };
            let first = run(dims, opts(true), &d, &e, &b, nrhs);
            for k in 0..20 {
                let again = run(dims, opts(k % 2 == 0), &d, &e, &b, nrhs);
                assert!(again == first, "{dims:?} {alg:?}: run {k} differs in its bits");
            }
            // And it is the right answer.
            let x: Vec<f64> = first.0.iter().map(|&u| f64::from_bits(u)).collect();
            let m = BlockTridiagRef::new(dims, Layout::RowMajor, &d, &e).unwrap();
            let be = backward_error(
                &m,
                &RhsRef::dense(dims, nrhs, Layout::RowMajor, &x).unwrap(),
                &RhsRef::dense(dims, nrhs, Layout::RowMajor, &b).unwrap(),
                &[],
            );
            assert!(be < tolerance::<f64>(n), "{dims:?} {alg:?}: backward error {be:e}");
        }
    }
}

#[test]
fn nested_dissection_bits_do_not_depend_on_the_thread_count() {
    // Stronger than run-to-run: each output block's arithmetic is fixed by the schedule, so 1, 2
    // and 3 threads give the same bits.
    let dims = Dims::new(2, 100, 6).unwrap();
    let (d, e) = random_problem::<f64>(77, dims, Layout::RowMajor, 1.0);
    let b = random_vec::<f64>(78, dims.batch * dims.rows());
    let opts = |threads| PlanOptions {
        backend: Backend::Cpu,
        algorithm: Algorithm::NestedDissection,
        threads,
        deterministic: true,
        ..Default::default()
    };
    let one = run(dims, opts(1), &d, &e, &b, 1);
    for threads in [2, 3] {
        assert!(run(dims, opts(threads), &d, &e, &b, 1) == one, "{threads} threads");
    }
    // The partitioned order too (its own bits, the same for every thread count).
    let chunked = |threads| PlanOptions { partition: Partition::Chunks(7), ..opts(threads) };
    let one = run(dims, chunked(1), &d, &e, &b, 1);
    for threads in [2, 3] {
        assert!(run(dims, chunked(threads), &d, &e, &b, 1) == one, "partitioned, {threads} threads");
    }
}
