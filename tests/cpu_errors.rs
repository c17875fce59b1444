//! Bad input and failures: each gets a precise error, nothing crashes, and the plan stays usable.

mod common;
use btchol::reference::*;
use btchol::*;
use common::*;

fn plan<T: Scalar>(dims: Dims, alg: Algorithm, threads: usize) -> Plan<T> {
    Plan::new(dims, PlanOptions { backend: Backend::Cpu, algorithm: alg, threads, ..Default::default() }).unwrap()
}

/// Makes D_block of `item` strongly negative definite; every principal submatrix avoiding that
/// block stays positive definite (diagonal dominance), so both orders must fail exactly there.
fn make_indefinite(d: &mut [f64], dims: Dims, item: usize, block: usize) {
    let n = dims.block_size;
    let blk = &mut d[(item * dims.n_blocks + block) * n * n..][..n * n];
    for k in 0..n {
        blk[k * n + k] = -1e3;
    }
}

#[test]
fn not_positive_definite_is_reported_at_the_chosen_item_and_block() {
    for alg in [Algorithm::Sequential, Algorithm::NestedDissection] {
        for (nb, n, batch) in [(1, 1, 1), (2, 3, 1), (17, 4, 3), (64, 7, 2), (1000, 2, 1)] {
            for &block in &[0, nb / 2, nb - 1] {
                let dims = Dims::new(batch, nb, n).unwrap();
                let (mut d, e) = random_problem::<f64>(seed_from(&[nb, n, block]), dims, Layout::RowMajor, 1.0);
                let bad_item = batch - 1;
                make_indefinite(&mut d, dims, bad_item, block);
                let m = BlockTridiagRef::new(dims, Layout::RowMajor, &d, &e).unwrap();
                let mut p = plan::<f64>(dims, alg, 2);
                p.upload(&m).unwrap();
                let err = p.factor().unwrap_err();
                assert_eq!(
                    err,
                    Error::NotPositiveDefinite { item: bad_item, block, column: 0 },
                    "{alg:?} N={nb} n={n}"
                );
                // The partitioned order fails at the same block.
                let opts = PlanOptions {
                    backend: Backend::Cpu,
                    algorithm: alg,
                    partition: Partition::Chunks(3),
                    ..Default::default()
                };
                let mut q = Plan::<f64>::new(dims, opts).unwrap();
                q.upload(&m).unwrap();
                assert_eq!(q.factor().unwrap_err(), Error::NotPositiveDefinite { item: bad_item, block, column: 0 });
                assert!(err.to_string().contains(&format!("block {block}")), "message names the block: {err}");
                // Other items are factored and solvable; the failed item's rhs is left untouched.
                for (i, st) in p.item_status().iter().enumerate() {
                    if i == bad_item {
                        assert_eq!(*st, ItemStatus::NotPositiveDefinite { block, column: 0 });
                    } else {
                        assert_eq!(*st, ItemStatus::Factored);
                    }
                }
                let b = random_vec::<f64>(3, dims.batch * dims.rows());
                let mut x = b.clone();
                let r = p.solve(&mut RhsMut::dense(dims, 1, Layout::RowMajor, &mut x).unwrap());
                assert!(matches!(r, Err(Error::NotPositiveDefinite { .. })));
                let rows = dims.rows();
                assert_eq!(&x[bad_item * rows..][..rows], &b[bad_item * rows..][..rows]);
                let xr = RhsRef::dense(dims, 1, Layout::RowMajor, &x).unwrap();
                let br = RhsRef::dense(dims, 1, Layout::RowMajor, &b).unwrap();
                assert!(backward_error(&m, &xr, &br, &[bad_item]) < tolerance::<f64>(n));
                let mut ld = vec![0.0; batch];
                p.logdet(&mut ld).unwrap();
                assert!(ld[bad_item].is_nan() && ld.iter().filter(|v| v.is_finite()).count() == batch - 1);
                // The plan stays usable: a good matrix factors after a new upload.
                let (d2, e2) = random_problem::<f64>(9, dims, Layout::RowMajor, 1.0);
                p.upload(&BlockTridiagRef::new(dims, Layout::RowMajor, &d2, &e2).unwrap()).unwrap();
                p.factor().unwrap();
            }
        }
    }
}

#[test]
fn a_failing_pivot_inside_a_block_names_its_column() {
    let dims = Dims::new(1, 5, 4).unwrap();
    let (mut d, e) = random_problem::<f64>(1, dims, Layout::RowMajor, 1.0);
    // D_2 = diag(big, big, -1, big) ⇒ pivot 2 of block 2 fails first.
    let blk = &mut d[2 * 16..3 * 16];
    blk.fill(0.0);
    for k in 0..4 {
        blk[k * 4 + k] = if k == 2 { -1.0 } else { 100.0 };
    }
    for alg in [Algorithm::Sequential, Algorithm::NestedDissection] {
        let mut p = plan::<f64>(dims, alg, 1);
        p.upload(&BlockTridiagRef::new(dims, Layout::RowMajor, &d, &e).unwrap()).unwrap();
        assert_eq!(p.factor(), Err(Error::NotPositiveDefinite { item: 0, block: 2, column: 2 }));
    }
}

#[test]
fn non_finite_input_is_rejected_with_its_position() {
    let dims = Dims::new(2, 4, 3).unwrap();
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let (mut d, e) = random_problem::<f64>(2, dims, Layout::RowMajor, 1.0);
        // item 1, block 2, (row 2, col 1): lower triangle, so it is read.
        d[(4 + 2) * 9 + 2 * 3 + 1] = bad;
        let mut p = plan::<f64>(dims, Algorithm::Auto, 1);
        let err = p.upload(&BlockTridiagRef::new(dims, Layout::RowMajor, &d, &e).unwrap()).unwrap_err();
        assert_eq!(err, Error::NonFinite { operand: Operand::Diagonal, item: 1, block: 2, row: 2, col: 1 });
        // The upper triangle of D is never read, so a NaN there is ignored.
        let (mut d, mut e) = random_problem::<f64>(2, dims, Layout::RowMajor, 1.0);
        d[1] = bad;
        p.upload(&BlockTridiagRef::new(dims, Layout::RowMajor, &d, &e).unwrap()).unwrap();
        e[9 + 4] = bad; // item 0, block 1, (1, 1)
        let err = p.upload(&BlockTridiagRef::new(dims, Layout::RowMajor, &d, &e).unwrap()).unwrap_err();
        assert_eq!(err, Error::NonFinite { operand: Operand::SubDiagonal, item: 0, block: 1, row: 1, col: 1 });
        // A NaN right-hand side is rejected before anything is written.
        let (d, e) = random_problem::<f64>(2, dims, Layout::RowMajor, 1.0);
        p.upload(&BlockTridiagRef::new(dims, Layout::RowMajor, &d, &e).unwrap()).unwrap();
        p.factor().unwrap();
        let mut b = vec![1.0; 2 * 12];
        b[12 + 7] = bad;
        let before = b.clone();
        let err = p.solve(&mut RhsMut::dense(dims, 1, Layout::RowMajor, &mut b).unwrap()).unwrap_err();
        assert!(matches!(err, Error::NonFinite { operand: Operand::RightHandSide, item: 1, block: 2, row: 1, .. }));
        assert!(b.iter().zip(&before).all(|(p, q)| p.to_bits() == q.to_bits()));
    }
}

/// Right-hand sides of more than a megabyte are checked over several threads (src/host_parallel.rs):
/// the error still names the first non-finite element in (item, column, row) order, whichever
/// thread finds it, and nothing is written.
#[test]
fn non_finite_right_hand_sides_of_megabytes_are_reported_at_their_first_position() {
    let dims = Dims::new(3, 1500, 16).unwrap();
    let (d, e) = random_problem::<f64>(5, dims, Layout::RowMajor, 1.0);
    let mut p = plan::<f64>(dims, Algorithm::Auto, 1);
    p.upload(&BlockTridiagRef::new(dims, Layout::RowMajor, &d, &e).unwrap()).unwrap();
    p.factor().unwrap();
    let rows = dims.rows();
    for layout in [Layout::RowMajor, Layout::ColMajor] {
        let shape = RhsShape::dense(dims, 3, layout);
        let at = |b: usize, r: usize, c: usize| shape.offset(b, r, c);
        // (item, row, column) of the NaNs, and the one reported.
        for (bad, first) in [
            (vec![(2, 20000, 1), (2, 23000, 0)], (2, 23000, 0)),
            (vec![(2, rows - 1, 2)], (2, rows - 1, 2)),
            (vec![(0, 5, 2), (1, 0, 0)], (0, 5, 2)),
            (vec![(1, 17, 1), (1, 16, 1), (2, 0, 0)], (1, 16, 1)),
        ] {
            let mut b = vec![1.0; shape.required_len(dims).unwrap()];
            for &(i, r, c) in &bad {
                b[at(i, r, c)] = f64::NAN;
            }
            let before = b.clone();
            let err = p.solve(&mut RhsMut::new(dims, shape, &mut b).unwrap()).unwrap_err();
            let (i, r, c) = first;
            let want =
                Error::NonFinite { operand: Operand::RightHandSide, item: i, block: r / 16, row: r % 16, col: c };
            assert_eq!(err, want, "{layout:?} {bad:?}");
            assert!(b.iter().zip(&before).all(|(p, q)| p.to_bits() == q.to_bits()));
        }
    }
}

#[test]
fn zero_and_absurd_sizes_are_rejected() {
    assert!(matches!(Dims::new(0, 4, 4), Err(Error::InvalidDimension(_))));
    assert!(matches!(Dims::new(1, 0, 4), Err(Error::InvalidDimension(_))));
    assert!(matches!(Dims::new(1, 4, 0), Err(Error::InvalidDimension(_))));
    assert!(matches!(Dims::new(1, 4, 1 << 20), Err(Error::InvalidDimension(_))));
    assert!(matches!(Dims::new(usize::MAX, 4, 4), Err(Error::InvalidDimension(_))));
    assert!(matches!(Dims::new(1 << 40, 1 << 20, 64), Err(Error::InvalidDimension(_))));
    let e = Dims::new(1, 0, 4).unwrap_err();
    assert!(e.to_string().contains("N"), "{e}");
}

#[test]
fn short_buffers_and_bad_strides_are_rejected() {
    let dims = Dims::new(2, 3, 2).unwrap();
    let d = vec![1.0f64; dims.diag_len() - 1];
    let e = vec![0.0f64; dims.sub_len()];
    assert!(matches!(BlockTridiagRef::new(dims, Layout::RowMajor, &d, &e), Err(Error::BufferTooSmall { .. })));
    let d = vec![1.0f64; dims.diag_len()];
    let e = vec![0.0f64; dims.sub_len() - 1];
    assert!(matches!(BlockTridiagRef::new(dims, Layout::RowMajor, &d, &e), Err(Error::BufferTooSmall { .. })));
    let mut b = vec![0.0f64; 2 * 6 * 2 - 1];
    assert!(matches!(RhsMut::dense(dims, 2, Layout::RowMajor, &mut b), Err(Error::BufferTooSmall { .. })));
    let mut b = vec![0.0f64; 100];
    let bad_ld = RhsShape { nrhs: 2, layout: Layout::RowMajor, ld: 1, item_stride: 12 };
    assert!(matches!(RhsMut::new(dims, bad_ld, &mut b), Err(Error::InvalidArgument(_))));
    let bad_ld = RhsShape { nrhs: 2, layout: Layout::ColMajor, ld: 5, item_stride: 12 };
    assert!(matches!(RhsMut::new(dims, bad_ld, &mut b), Err(Error::InvalidArgument(_))));
    let overlap = RhsShape { nrhs: 2, layout: Layout::RowMajor, ld: 2, item_stride: 3 };
    assert!(matches!(RhsMut::new(dims, overlap, &mut b), Err(Error::InvalidArgument(_))));
    let zero = RhsShape { nrhs: 0, layout: Layout::RowMajor, ld: 2, item_stride: 12 };
    assert!(matches!(RhsMut::new(dims, zero, &mut b), Err(Error::InvalidDimension(_))));
    // A matrix of other dims or layout than the plan's is refused.
    let mut p = plan::<f64>(dims, Algorithm::Auto, 1);
    let other = Dims::new(2, 4, 2).unwrap();
    let (d, e) = random_problem::<f64>(1, other, Layout::RowMajor, 1.0);
    assert!(matches!(
        p.upload(&BlockTridiagRef::new(other, Layout::RowMajor, &d, &e).unwrap()),
        Err(Error::InvalidArgument(_))
    ));
    let (d, e) = random_problem::<f64>(1, dims, Layout::ColMajor, 1.0);
    assert!(matches!(
        p.upload(&BlockTridiagRef::new(dims, Layout::ColMajor, &d, &e).unwrap()),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
fn calls_out_of_order_are_invalid_state_and_harmless() {
    let dims = Dims::new(1, 4, 2).unwrap();
    let mut p = plan::<f32>(dims, Algorithm::Auto, 1);
    let mut b = vec![1.0f32; 8];
    assert!(matches!(p.factor(), Err(Error::InvalidState(_))));
    assert!(matches!(
        p.solve(&mut RhsMut::dense(dims, 1, Layout::RowMajor, &mut b).unwrap()),
        Err(Error::InvalidState(_))
    ));
    assert!(matches!(p.logdet(&mut [0.0]), Err(Error::InvalidState(_))));
    assert!(b.iter().all(|&v| v == 1.0));
    let (d, e) = random_problem::<f32>(1, dims, Layout::RowMajor, 1.0);
    let m = BlockTridiagRef::new(dims, Layout::RowMajor, &d, &e).unwrap();
    p.upload(&m).unwrap();
    p.factor().unwrap();
    assert!(matches!(p.factor(), Err(Error::InvalidState(_))), "second factor without upload");
    assert!(matches!(p.logdet(&mut []), Err(Error::BufferTooSmall { .. })));
    p.upload(&m).unwrap();
    p.factor().unwrap();
    p.solve(&mut RhsMut::dense(dims, 1, Layout::RowMajor, &mut b).unwrap()).unwrap();
}

#[test]
fn cuda_backend_request_without_cuda_is_a_clear_error() {
    let dims = Dims::new(1, 4, 2).unwrap();
    let r = Plan::<f64>::new(dims, PlanOptions { backend: Backend::Cuda, ..Default::default() });
    match r {
        Err(Error::BackendUnavailable(msg)) => assert!(!msg.is_empty()),
        Err(e) => panic!("unexpected error {e}"),
        Ok(_) => {} // a machine with a usable GPU
    }
    // Auto always works: it falls back to the CPU.
    Plan::<f64>::new(dims, PlanOptions::default()).unwrap();
}

#[test]
fn factor_solve_matches_factor_then_solve_and_matvec_gives_the_residual() {
    let dims = Dims::new(2, 9, 3).unwrap();
    let (d, e) = random_problem::<f64>(4, dims, Layout::ColMajor, 1.0);
    let m = BlockTridiagRef::new(dims, Layout::ColMajor, &d, &e).unwrap();
    let b = random_vec::<f64>(5, 2 * 27 * 2);
    let mut x = b.clone();
    let mut p = Plan::<f64>::new(dims, PlanOptions { layout: Layout::ColMajor, ..Default::default() }).unwrap();
    p.factor_solve(&m, &mut RhsMut::dense(dims, 2, Layout::ColMajor, &mut x).unwrap()).unwrap();
    let mut y = vec![0.0; b.len()];
    m.matvec(
        &RhsRef::dense(dims, 2, Layout::ColMajor, &x).unwrap(),
        &mut RhsMut::dense(dims, 2, Layout::ColMajor, &mut y).unwrap(),
    )
    .unwrap();
    let r = y.iter().zip(&b).map(|(p, q)| (p - q).abs()).fold(0.0, f64::max);
    assert!(r < 1e-12, "residual {r:e}");
}

#[test]
fn overflowing_right_hand_side_strides_are_rejected() {
    let dims = Dims::new(2, 3, 2).unwrap();
    let mut b = vec![0.0f64; 100];
    for shape in [
        RhsShape { nrhs: 2, layout: Layout::RowMajor, ld: usize::MAX / 2, item_stride: 12 },
        RhsShape { nrhs: 2, layout: Layout::ColMajor, ld: usize::MAX, item_stride: 12 },
        RhsShape { nrhs: 2, layout: Layout::RowMajor, ld: 2, item_stride: usize::MAX },
    ] {
        let r = RhsMut::new(dims, shape, &mut b);
        assert!(matches!(r, Err(Error::InvalidDimension(_)) | Err(Error::InvalidArgument(_))), "{shape:?}: {r:?}");
    }
}
