//! Regularisation (`PlanOptions::diag_shift`, `pivot_threshold` / `pivot_boost`) against the dense
//! f64 reference: a shift factors Ψ + σI without touching the caller's arrays, boosting replaces
//! small pivots and counts them exactly, per item. On the CPU, or the GPU with
//! BTCHOL_TEST_BACKEND=cuda.

mod common;

use btchol::reference::*;
use btchol::schedule::Schedule;
use btchol::*;
use common::*;

/// Options on the test backend (CPU, or GPU with BTCHOL_TEST_BACKEND=cuda); blocks here are small.
fn backend_opts(alg: Algorithm, threads: usize) -> PlanOptions {
    backend_options(alg, threads, 1)
}

/// Adds `shift` to every diagonal entry of D (caller layout: the diagonal is the same in both).
fn shifted(d: &[f64], n: usize, shift: f64) -> Vec<f64> {
    let mut s = d.to_vec();
    for blk in s.chunks_exact_mut(n * n) {
        for k in 0..n {
            blk[k * n + k] += shift;
        }
    }
    s
}

const SHAPES: [(usize, usize, usize); 7] =
    [(1, 1, 1), (1, 2, 3), (2, 3, 1), (3, 7, 5), (1, 13, 4), (2, 17, 9), (1, 2, 1)];

#[test]
fn diag_shift_solves_the_shifted_matrix_and_leaves_the_caller_data_alone() {
    for (batch, nb, n) in SHAPES {
        for alg in [Algorithm::Sequential, Algorithm::NestedDissection] {
            for layout in [Layout::RowMajor, Layout::ColMajor] {
                let dims = Dims::new(batch, nb, n).unwrap();
                let seed = seed_from(&[batch, nb, n, alg as usize, layout as usize]);
                // Ψ − 4I is in general indefinite; the plan's shift of +4 makes it Ψ again.
                let (d, e) = random_problem::<f64>(seed, dims, layout, 1.0);
                let d_minus = shifted(&d, n, -4.0);
                let (d0, e0) = (d_minus.clone(), e.clone());
                let nrhs = 3;
                let len = RhsShape::dense(dims, nrhs, layout).required_len(dims).unwrap();
                let b = random_vec::<f64>(seed ^ 7, len);
                let mut x = b.clone();
                let mut plan =
                    Plan::<f64>::new(dims, PlanOptions { layout, diag_shift: 4.0, ..backend_opts(alg, 2) }).unwrap();
                let m = BlockTridiagRef::new(dims, layout, &d_minus, &e).unwrap();
                plan.factor_solve(&m, &mut RhsMut::dense(dims, nrhs, layout, &mut x).unwrap()).unwrap();
                assert!(d_minus == d0 && e == e0, "the caller's blocks changed");
                // Ψ − 4I + 4I is Ψ up to the rounding of the two additions.
                let (d_back, e_ref) = (shifted(&d0, n, 4.0), e0);
                let m_ref = BlockTridiagRef::new(dims, layout, &d_back, &e_ref).unwrap();
                let xr = RhsRef::dense(dims, nrhs, layout, &x).unwrap();
                let br = RhsRef::dense(dims, nrhs, layout, &b).unwrap();
                let be = backward_error(&m_ref, &xr, &br, &[]);
                assert!(be < tolerance::<f64>(n), "{dims:?} {alg:?} {layout:?}: backward error {be:e}");
                // log det is that of the shifted matrix.
                let mut ld = vec![0.0; batch];
                plan.logdet(&mut ld).unwrap();
                for (item, &got) in ld.iter().enumerate() {
                    let rows = dims.rows();
                    let mut a = dense_matrix(&m_ref, item);
                    dense_cholesky(&mut a, rows).unwrap();
                    let want = dense_logdet(&a, rows);
                    assert!((got - want).abs() <= 1e-10 * want.abs().max(1.0), "logdet {got} vs {want}");
                }
                assert!(plan.boosted_pivots().iter().all(|&c| c == 0));
            }
        }
    }
}

#[test]
fn diag_shift_works_in_f32() {
    let dims = Dims::new(2, 9, 6).unwrap();
    let (d, e) = random_problem::<f32>(11, dims, Layout::RowMajor, 1.0);
    let mut plan =
        Plan::<f32>::new(dims, PlanOptions { diag_shift: 0.25, ..backend_opts(Algorithm::Sequential, 1) }).unwrap();
    let b = random_vec::<f32>(12, dims.batch * dims.rows());
    let mut x = b.clone();
    let m = BlockTridiagRef::new(dims, Layout::RowMajor, &d, &e).unwrap();
    plan.factor_solve(&m, &mut RhsMut::dense(dims, 1, Layout::RowMajor, &mut x).unwrap()).unwrap();
    let ds: Vec<f32> =
        shifted(&d.iter().map(|&v| v as f64).collect::<Vec<_>>(), 6, 0.25).into_iter().map(|v| v as f32).collect();
    let m_ref = BlockTridiagRef::new(dims, Layout::RowMajor, &ds, &e).unwrap();
    let be = backward_error(
        &m_ref,
        &RhsRef::dense(dims, 1, Layout::RowMajor, &x).unwrap(),
        &RhsRef::dense(dims, 1, Layout::RowMajor, &b).unwrap(),
        &[],
    );
    assert!(be < tolerance::<f32>(6), "backward error {be:e}");
}

/// Sets D_block[col, col] of `item` to `value` (caller layout: the diagonal offset is layout-free).
fn set_diag(d: &mut [f64], dims: Dims, item: usize, block: usize, col: usize, value: f64) {
    let n = dims.block_size;
    d[(item * dims.n_blocks + block) * n * n + col * n + col] = value;
}

#[test]
fn boosted_pivots_are_replaced_and_counted_exactly_per_item() {
    for (nb, n) in [(1, 1), (2, 3), (3, 1), (7, 5), (13, 4), (16, 8)] {
        for alg in [Algorithm::Sequential, Algorithm::NestedDissection] {
            for threads in [1, 2] {
                let dims = Dims::new(4, nb, n).unwrap();
                let seed = seed_from(&[nb, n, alg as usize, threads]);
                let (mut d, e) = random_problem::<f64>(seed, dims, Layout::RowMajor, 1.0);
                // Item 0: untouched. Item 1: D_0[0,0] = −1 (eliminated first by both algorithms, so
                // its pivot is exactly −1). Item 2: also a zero pivot in the last column of the
                // last level-0 block. Item 3: −1e-13, below the threshold, same block as item 1.
                let schedule = Schedule::new(nb);
                let level0 = &schedule.levels()[0];
                assert_eq!(level0.eliminations[0].block, 0, "block 0 is eliminated first");
                let last0 = level0.eliminations.last().unwrap().block;
                set_diag(&mut d, dims, 1, 0, 0, -1.0);
                set_diag(&mut d, dims, 2, 0, 0, -1.0);
                let two = !(last0 == 0 && n == 1);
                if two {
                    let col = if last0 == 0 { n - 1 } else { 0 };
                    set_diag(&mut d, dims, 2, last0, col, 0.0);
                }
                set_diag(&mut d, dims, 3, 0, 0, -1e-13);
                let boost = 1e6;
                let opts = PlanOptions { pivot_threshold: 1e-12, pivot_boost: boost, ..backend_opts(alg, threads) };
                let mut plan = Plan::<f64>::new(dims, opts).unwrap();
                let m = BlockTridiagRef::new(dims, Layout::RowMajor, &d, &e).unwrap();
                let nrhs = 2;
                let b = random_vec::<f64>(seed ^ 3, dims.batch * dims.rows() * nrhs);
                let mut x = b.clone();
                plan.factor_solve(&m, &mut RhsMut::dense(dims, nrhs, Layout::RowMajor, &mut x).unwrap()).unwrap();
                let want = [0, 1, if two { 2 } else { 1 }, 1];
                assert_eq!(plan.boosted_pivots(), &want, "N={nb} n={n} {alg:?} threads={threads}");
                assert!(plan.item_status().iter().all(|s| *s == ItemStatus::Factored));
                // Items 1 and 3: the boosted pivot was exactly D_0[0,0], so x solves the matrix with
                // that entry replaced by the boost; item 0 solves the original.
                let mut d_mod = d.clone();
                for item in [1, 3] {
                    set_diag(&mut d_mod, dims, item, 0, 0, boost);
                }
                let m_mod = BlockTridiagRef::new(dims, Layout::RowMajor, &d_mod, &e).unwrap();
                let be = backward_error(
                    &m_mod,
                    &RhsRef::dense(dims, nrhs, Layout::RowMajor, &x).unwrap(),
                    &RhsRef::dense(dims, nrhs, Layout::RowMajor, &b).unwrap(),
                    &[2],
                );
                assert!(be < tolerance::<f64>(n), "N={nb} n={n} {alg:?}: backward error {be:e}");

                // Without boosting the same matrix fails on item 1 at block 0, column 0.
                let mut strict = Plan::<f64>::new(dims, backend_opts(alg, threads)).unwrap();
                strict.upload(&m).unwrap();
                assert_eq!(strict.factor(), Err(Error::NotPositiveDefinite { item: 1, block: 0, column: 0 }));
                assert_eq!(strict.boosted_pivots(), &[0, 0, 0, 0]);
            }
        }
    }
}

#[test]
fn boosting_still_fails_on_non_finite_pivots_and_counts_before_the_failure() {
    // f32: 1e30² overflows in the Schur update of block 1, so its pivot is −inf, which no boost
    // can repair.
    let dims = Dims::new(1, 2, 1).unwrap();
    let (d, e) = ([1.0f32, 1.0], [1e30f32]);
    let mut plan =
        Plan::<f32>::new(dims, PlanOptions { pivot_boost: 1.0, ..backend_opts(Algorithm::Sequential, 1) }).unwrap();
    plan.upload(&BlockTridiagRef::new(dims, Layout::RowMajor, &d, &e).unwrap()).unwrap();
    assert_eq!(plan.factor(), Err(Error::NotPositiveDefinite { item: 0, block: 1, column: 0 }));
    assert_eq!(plan.boosted_pivots(), &[0]);
}

#[test]
fn regularisation_options_are_checked() {
    let dims = Dims::new(1, 3, 2).unwrap();
    let bad = [
        PlanOptions { diag_shift: f64::NAN, ..Default::default() },
        PlanOptions { diag_shift: f64::INFINITY, ..Default::default() },
        PlanOptions { pivot_threshold: -1.0, pivot_boost: 1.0, ..Default::default() },
        PlanOptions { pivot_boost: f64::NAN, ..Default::default() },
        PlanOptions { pivot_threshold: 1e-8, ..Default::default() },
    ];
    for o in bad {
        match Plan::<f64>::new(dims, o) {
            Err(Error::InvalidArgument(m)) => assert!(m.contains("diag_shift") || m.contains("pivot_"), "{m}"),
            r => panic!("{o:?}: {:?}", r.map(|_| ())),
        }
    }
    // f32: a boost beyond f32's range.
    assert!(matches!(
        Plan::<f32>::new(dims, PlanOptions { pivot_boost: 1e300, ..Default::default() }),
        Err(Error::InvalidArgument(_))
    ));
}
