//! Batch masks (`Plan::upload_masked`, `factor_masked`, `solve_masked`): only the selected items
//! are uploaded, factored and solved; the others keep their factor, status and right-hand sides,
//! bit for bit. Checked against the dense f64 reference, on the CPU (or the GPU with
//! BTCHOL_TEST_BACKEND=cuda).

mod common;

use btchol::reference::*;
use btchol::*;
use common::*;

/// Options on the test backend (CPU, or GPU with BTCHOL_TEST_BACKEND=cuda); blocks here are small.
fn backend_opts(alg: Algorithm, threads: usize) -> PlanOptions {
    backend_options(alg, threads, 1)
}

/// Backward error of item `item` of `x` for the matrix (d, e) and right-hand sides b.
fn item_error(dims: Dims, d: &[f64], e: &[f64], nrhs: usize, x: &[f64], b: &[f64], item: usize) -> f64 {
    let m = BlockTridiagRef::new(dims, Layout::RowMajor, d, e).unwrap();
    let skip: Vec<usize> = (0..dims.batch).filter(|&i| i != item).collect();
    backward_error(
        &m,
        &RhsRef::dense(dims, nrhs, Layout::RowMajor, x).unwrap(),
        &RhsRef::dense(dims, nrhs, Layout::RowMajor, b).unwrap(),
        &skip,
    )
}

fn item_rows(dims: Dims, nrhs: usize, v: &[f64], item: usize) -> &[f64] {
    let len = dims.rows() * nrhs;
    &v[item * len..][..len]
}

#[test]
fn masked_calls_work_on_selected_items_only_and_keep_the_others() {
    for (batch, nb, n) in [(5, 1, 1), (5, 2, 3), (4, 3, 1), (6, 7, 5), (3, 13, 4), (7, 16, 2)] {
        // (Nested dissection also partitioned into chunks of 2: the chunk kernels on the GPU.)
        let orders = [
            (Algorithm::Sequential, Partition::Auto),
            (Algorithm::NestedDissection, Partition::Auto),
            (Algorithm::NestedDissection, Partition::Chunks(2)),
        ];
        for (alg, partition) in orders {
            for threads in [1, 2] {
                let dims = Dims::new(batch, nb, n).unwrap();
                let seed = seed_from(&[batch, nb, n, alg as usize, threads]);
                let (d1, e1) = random_problem::<f64>(seed, dims, Layout::RowMajor, 1.0);
                let (d2, e2) = random_problem::<f64>(seed ^ 0xABC, dims, Layout::RowMajor, 0.5);
                let nrhs = 2;
                let b = random_vec::<f64>(seed ^ 1, dims.batch * dims.rows() * nrhs);
                let mask: Vec<bool> = (0..batch).map(|i| i % 2 == 0 || i == batch - 1).collect();
                let mut plan = Plan::<f64>::new(dims, PlanOptions { partition, ..backend_opts(alg, threads) }).unwrap();
                plan.upload(&BlockTridiagRef::new(dims, Layout::RowMajor, &d1, &e1).unwrap()).unwrap();
                plan.factor().unwrap();
                let mut ld1 = vec![0.0; batch];
                plan.logdet(&mut ld1).unwrap();

                // New matrices for the selected items only; the caller's other items hold NaN,
                // which the masked upload must not read.
                let mut d2n = d2.clone();
                let bl = n * n;
                for (item, &m) in mask.iter().enumerate() {
                    if !m {
                        d2n[item * nb * bl] = f64::NAN;
                    }
                }
                let m2 = BlockTridiagRef::new(dims, Layout::RowMajor, &d2n, &e2).unwrap();
                plan.upload_masked(&m2, &mask).unwrap();
                for (item, &m) in mask.iter().enumerate() {
                    let want = if m { ItemStatus::Pending } else { ItemStatus::Factored };
                    assert_eq!(plan.item_status()[item], want);
                }
                plan.factor_masked(&mask).unwrap();
                assert!(plan.item_status().iter().all(|s| *s == ItemStatus::Factored));

                // Masked solve: selected items solved with the new matrix, the others' right-hand
                // sides untouched (NaN there is not even read).
                let mut x = b.clone();
                for (item, &m) in mask.iter().enumerate() {
                    if !m {
                        x[item * dims.rows() * nrhs] = f64::NAN;
                    }
                }
                let x_in = x.clone();
                plan.solve_masked(&mask, &mut RhsMut::dense(dims, nrhs, Layout::RowMajor, &mut x).unwrap()).unwrap();
                for (item, &m) in mask.iter().enumerate() {
                    if m {
                        let be = item_error(dims, &d2, &e2, nrhs, &x, &b, item);
                        assert!(be < tolerance::<f64>(n), "{dims:?} {alg:?} item {item}: {be:e}");
                    } else {
                        let (got, was) = (item_rows(dims, nrhs, &x, item), item_rows(dims, nrhs, &x_in, item));
                        assert!(got.iter().zip(was).all(|(a, b)| a.to_bits() == b.to_bits()), "item {item} changed");
                    }
                }

                // Unmasked solve: every item, each with the factor it holds.
                let mut x = b.clone();
                plan.solve(&mut RhsMut::dense(dims, nrhs, Layout::RowMajor, &mut x).unwrap()).unwrap();
                let mut ld = vec![0.0; batch];
                plan.logdet(&mut ld).unwrap();
                for (item, &m) in mask.iter().enumerate() {
                    let (d, e) = if m { (&d2, &e2) } else { (&d1, &e1) };
                    let be = item_error(dims, d, e, nrhs, &x, &b, item);
                    assert!(be < tolerance::<f64>(n), "{dims:?} {alg:?} item {item} (mask {m}): {be:e}");
                    if !m {
                        assert_eq!(ld[item].to_bits(), ld1[item].to_bits(), "logdet of kept item {item}");
                    } else {
                        assert_ne!(ld[item], ld1[item]);
                    }
                }
            }
        }
    }
}

#[test]
fn masked_results_are_bitwise_those_of_the_unmasked_calls() {
    // The same item factored and solved alone (masked) or with the whole batch gives the same bits.
    let dims = Dims::new(5, 11, 6).unwrap();
    for alg in [Algorithm::Sequential, Algorithm::NestedDissection] {
        let (d, e) = random_problem::<f64>(5, dims, Layout::RowMajor, 1.0);
        let m = BlockTridiagRef::new(dims, Layout::RowMajor, &d, &e).unwrap();
        let b = random_vec::<f64>(6, dims.batch * dims.rows());
        let mut full = Plan::<f64>::new(dims, backend_opts(alg, 2)).unwrap();
        let mut x_full = b.clone();
        full.factor_solve(&m, &mut RhsMut::dense(dims, 1, Layout::RowMajor, &mut x_full).unwrap()).unwrap();
        let mask = [false, true, false, false, true];
        let mut part = Plan::<f64>::new(dims, backend_opts(alg, 2)).unwrap();
        part.upload_masked(&m, &mask).unwrap();
        part.factor_masked(&mask).unwrap();
        let mut x_part = b.clone();
        part.solve_masked(&mask, &mut RhsMut::dense(dims, 1, Layout::RowMajor, &mut x_part).unwrap()).unwrap();
        for (item, &selected) in mask.iter().enumerate().take(5) {
            let (p, f, b0) =
                (item_rows(dims, 1, &x_part, item), item_rows(dims, 1, &x_full, item), item_rows(dims, 1, &b, item));
            let want = if selected { f } else { b0 };
            assert!(p.iter().zip(want).all(|(a, b)| a.to_bits() == b.to_bits()), "{alg:?} item {item}");
        }
        assert_eq!(part.item_status()[0], ItemStatus::Pending);
    }
}

#[test]
fn masked_call_order_and_arguments_are_checked() {
    let dims = Dims::new(3, 4, 2).unwrap();
    let (d, e) = random_problem::<f64>(9, dims, Layout::RowMajor, 1.0);
    let m = BlockTridiagRef::new(dims, Layout::RowMajor, &d, &e).unwrap();
    let mut x = random_vec::<f64>(10, dims.batch * dims.rows());
    let mut plan = Plan::<f64>::new(dims, backend_opts(Algorithm::Sequential, 1)).unwrap();
    let some = [true, false, true];
    let state = |r: Result<()>| match r {
        Err(Error::InvalidState(m)) => m,
        r => panic!("expected InvalidState, got {r:?}"),
    };
    // Wrong mask length.
    assert!(matches!(plan.upload_masked(&m, &[true; 2]), Err(Error::InvalidArgument(s)) if s.contains("mask has 2")));
    // Before any upload.
    assert!(state(plan.factor_masked(&some)).contains("before upload"));
    // Only items 0 and 2 uploaded: factor() refuses (item 1 has no matrix), factor_masked works.
    plan.upload_masked(&m, &some).unwrap();
    assert!(state(plan.factor()).contains("item 1"));
    assert!(state(plan.solve_masked(&some, &mut RhsMut::dense(dims, 1, Layout::RowMajor, &mut x).unwrap()))
        .contains("before factor"));
    plan.factor_masked(&some).unwrap();
    // Item 0 again without a new upload.
    assert!(state(plan.factor_masked(&[true, false, false])).contains("item 0"));
    // Item 1 is not factored: the unmasked solve and a mask selecting it refuse.
    let mut rhs = RhsMut::dense(dims, 1, Layout::RowMajor, &mut x).unwrap();
    assert!(state(plan.solve(&mut rhs)).contains("item 1"));
    assert!(state(plan.solve_masked(&[false, true, false], &mut rhs)).contains("item 1"));
    plan.solve_masked(&some, &mut rhs).unwrap();
    // An empty mask does nothing and succeeds.
    plan.solve_masked(&[false; 3], &mut rhs).unwrap();
    // NaN in a selected item's right-hand side is still reported.
    x[dims.rows() * 2 + 1] = f64::NAN;
    let mut rhs = RhsMut::dense(dims, 1, Layout::RowMajor, &mut x).unwrap();
    assert!(matches!(plan.solve_masked(&some, &mut rhs), Err(Error::NonFinite { item: 2, .. })));
}

#[test]
fn masked_factor_reports_only_selected_failures() {
    let dims = Dims::new(3, 5, 3).unwrap();
    let (mut d, e) = random_problem::<f64>(21, dims, Layout::RowMajor, 1.0);
    d[(5 + 2) * 9 + 4] = -50.0; // item 1, block 2, (1, 1)
    d[(10 + 3) * 9] = -50.0; // item 2, block 3, (0, 0)
    let m = BlockTridiagRef::new(dims, Layout::RowMajor, &d, &e).unwrap();
    let mut plan = Plan::<f64>::new(dims, backend_opts(Algorithm::Sequential, 2)).unwrap();
    plan.upload(&m).unwrap();
    assert_eq!(
        plan.factor_masked(&[true, false, true]),
        Err(Error::NotPositiveDefinite { item: 2, block: 3, column: 0 })
    );
    assert_eq!(plan.item_status()[1], ItemStatus::Pending);
    assert_eq!(
        plan.factor_masked(&[false, true, false]),
        Err(Error::NotPositiveDefinite { item: 1, block: 2, column: 1 })
    );
    // Solving item 0 alone succeeds; the unmasked solve reports item 1 first.
    let b = random_vec::<f64>(22, dims.batch * dims.rows());
    let mut x = b.clone();
    let mut rhs = RhsMut::dense(dims, 1, Layout::RowMajor, &mut x).unwrap();
    plan.solve_masked(&[true, false, false], &mut rhs).unwrap();
    assert!(item_error(dims, &d, &e, 1, &x, &b, 0) < tolerance::<f64>(3));
    let mut rhs = RhsMut::dense(dims, 1, Layout::RowMajor, &mut x).unwrap();
    assert_eq!(plan.solve(&mut rhs), Err(Error::NotPositiveDefinite { item: 1, block: 2, column: 1 }));
}
