//! The CUDA backend against the dense f64 reference and the CPU nested-dissection executor.
//! Each test skips (saying so) where no GPU is usable, and fails instead when
//! `BTCHOL_REQUIRE_GPU=1` (the GPU check script sets it).

mod common;
use btchol::reference::*;
use btchol::*;
use common::*;

/// Same factor as the CPU nested-dissection executor, up to rounding.
fn check<T: Scalar>(nb: usize, n: usize, batch: usize, nrhs: usize, layout: Layout) {
    check_gpu_against_cpu::<T>(cuda(1), Algorithm::NestedDissection, (nb, n, batch, nrhs), layout, 31);
}

fn cuda(threads: usize) -> PlanOptions {
    PlanOptions { backend: Backend::Cuda, algorithm: Algorithm::NestedDissection, threads, ..Default::default() }
}

#[test]
fn gpu_matches_reference_over_the_shape_matrix() {
    if !gpu_or_skip("gpu_matches_reference_over_the_shape_matrix") {
        return;
    }
    for nb in [1, 2, 3, 5, 17, 64, 1000] {
        for n in [1, 2, 3, 7, 8, 31, 32, 33, 64] {
            if nb == 1000 && n > 32 {
                continue; // the CPU reference comparison would dominate the run time
            }
            for (batch, nrhs, layout) in [(1, 1, Layout::RowMajor), (3, 5, Layout::ColMajor)] {
                check::<f64>(nb, n, batch, nrhs, layout);
                check::<f32>(nb, n, batch, nrhs, layout);
            }
        }
    }
}

/// Levels with at least as many eliminations (× batch) as the GPU has SMs run fused for blocks
/// padded to 33..64: each elimination does its own fill, and the update kernel the level's updates
/// (in f64 both on the tensor cores, from couplings staged with stride ld + 4; 192-thread
/// kernels). Narrower levels are split, so the shape matrix above never reaches them; these first
/// levels have 165 (N = 331) or 160 (batch 40 × 4) eliminations, more than an H100's 132 SMs.
#[test]
fn gpu_wide_levels_of_blocks_33_to_64_run_fused() {
    if !gpu_or_skip("gpu_wide_levels_of_blocks_33_to_64_run_fused") {
        return;
    }
    for (nb, n, batch, layout) in [
        (331, 33, 1, Layout::ColMajor),
        (331, 64, 1, Layout::RowMajor),
        (9, 45, 40, Layout::RowMajor),
        (9, 57, 40, Layout::ColMajor),
    ] {
        check::<f64>(nb, n, batch, 2, layout);
        check::<f32>(nb, n, batch, 2, layout);
    }
}

/// Blocks padded to 73..128 in f64 (sm_90): levels of at least 2 × SMs eliminations (× batch)
/// factor each elimination's D alone (btchol_factor_potrf_split, four CTAs per SM) and then its
/// couplings (btchol_factor_trsm_split); narrower levels keep one CTA or a cluster per
/// elimination, so the shapes above never reach them. These first levels have 300 eliminations
/// (N = 601, or a batch of 2 × 150), more than twice an H100's or H200's 132 SMs. Also
/// ill-conditioned diagonal blocks (κ = 1e10) and failures at that level (block 0, block 2 with
/// block 1 of the next level), reported as the CPU nested-dissection executor reports them.
#[test]
fn gpu_wide_levels_of_blocks_73_to_128_split_the_elimination() {
    if !gpu_or_skip("gpu_wide_levels_of_blocks_73_to_128_split_the_elimination") {
        return;
    }
    for (nb, n, batch, layout) in
        [(601, 73, 1, Layout::ColMajor), (601, 100, 1, Layout::RowMajor), (301, 128, 2, Layout::ColMajor)]
    {
        check::<f64>(nb, n, batch, 2, layout);
    }
    let dims = Dims::new(1, 601, 100).unwrap();
    let (d, e, b) = ill_conditioned_problem::<f64>(seed_from(&[601, 100, 72]), dims, 1e10);
    let be = solve_backward_error(dims, &d, &e, &b, cuda(1));
    assert!(be < tolerance::<f64>(100), "κ = 1e10, N = 601, n = 100: backward error {be:e}");
    let (nb, n) = (301, 128);
    for blocks in [vec![0], vec![2, 1]] {
        let dims = Dims::new(2, nb, n).unwrap();
        let (good, e) = random_problem::<f64>(seed_from(&[nb, n, blocks[0], 73]), dims, Layout::RowMajor, 1.0);
        let mut d = good.clone();
        for &block in &blocks {
            let col = 1 + block % 7;
            d[(nb + block) * n * n + col * n + col] = -1e3; // (item 1)
        }
        let cpu_opts =
            PlanOptions { backend: Backend::Cpu, algorithm: Algorithm::NestedDissection, ..Default::default() };
        check_gpu_fails_like_cpu(
            dims,
            (&d, &good, &e),
            1,
            cpu_opts,
            cuda(1),
            &format!("N={nb} n={n} blocks {blocks:?}"),
        );
    }
}

#[test]
fn gpu_handles_awkward_block_sizes() {
    if !gpu_or_skip("gpu_handles_awkward_block_sizes") {
        return;
    }
    for n in [1, 3, 7, 33, 65, 100, 127, 128, 129, 256] {
        for nb in [2, 7] {
            check::<f64>(nb, n, 2, 3, Layout::RowMajor);
            check::<f32>(nb, n, 1, 1, Layout::ColMajor);
        }
    }
}

#[test]
fn gpu_many_right_hand_sides_are_solved_in_chunks() {
    if !gpu_or_skip("gpu_many_right_hand_sides_are_solved_in_chunks") {
        return;
    }
    // 40 columns with the default 16 per pass: three passes.
    check::<f64>(33, 8, 2, 40, Layout::RowMajor);
}

#[test]
fn gpu_reports_not_positive_definite_per_item() {
    if !gpu_or_skip("gpu_reports_not_positive_definite_per_item") {
        return;
    }
    for (nb, n, batch) in [(1, 1, 1), (17, 4, 3), (64, 33, 2), (1000, 2, 4)] {
        for block in [0, nb / 2, nb - 1] {
            let dims = Dims::new(batch, nb, n).unwrap();
            let (mut d, e) = random_problem::<f64>(seed_from(&[nb, n, block]), dims, Layout::RowMajor, 1.0);
            let bad = batch / 2;
            let blk = &mut d[(bad * nb + block) * n * n..][..n * n];
            for k in 0..n {
                blk[k * n + k] = -1e3;
            }
            let m = BlockTridiagRef::new(dims, Layout::RowMajor, &d, &e).unwrap();
            let mut p = Plan::<f64>::new(dims, cuda(1)).unwrap();
            p.upload(&m).unwrap();
            assert_eq!(p.factor(), Err(Error::NotPositiveDefinite { item: bad, block, column: 0 }), "N={nb} n={n}");
            for (i, st) in p.item_status().iter().enumerate() {
                assert_eq!(*st == ItemStatus::Factored, i != bad);
            }
            check_solve_skips_failed_item(&mut p, &m, bad);
        }
    }
}

/// A block that fails at an inner column, for every kernel family (register panels and
/// 128-thread groups for n ≤ 32, the tall panel, the blocked panel with 32 and with 16 columns
/// above 128): the GPU reports the same (item, block, column) as the CPU nested-dissection
/// executor, factors the other items, and a later good matrix factors again.
#[test]
fn gpu_reports_failing_column_like_the_cpu_executor() {
    if !gpu_or_skip("gpu_reports_failing_column_like_the_cpu_executor") {
        return;
    }
    // `late`: the failing column in the last panels of the blocked sweep (n > 64 factors 32
    // columns at a time, n > 128 16) instead of among the first ones.
    for (nb, n, batch, late) in [
        (2, 32, 1, false),
        (37, 32, 2, false),
        (6, 12, 3, false),
        (5, 8, 2, false),
        (9, 5, 2, false),
        (11, 40, 2, false),
        (5, 100, 2, false),
        (5, 100, 2, true),
        (3, 72, 1, true),
        (3, 128, 1, true),
        (3, 130, 1, false),
        (3, 200, 1, true),
    ] {
        for block in [0, nb / 2, nb - 1] {
            let dims = Dims::new(batch, nb, n).unwrap();
            let (good, e) = random_problem::<f64>(seed_from(&[nb, n, block, 7]), dims, Layout::RowMajor, 1.0);
            let mut d = good.clone();
            let bad = batch - 1;
            let col = if late { n - 1 - 3 * (block % 8) } else { (n - 1).min(2 + block % n) };
            d[(bad * nb + block) * n * n + col * n + col] = -1e3;
            let m = BlockTridiagRef::new(dims, Layout::RowMajor, &d, &e).unwrap();
            let cpu_opts =
                PlanOptions { backend: Backend::Cpu, algorithm: Algorithm::NestedDissection, ..Default::default() };
            let mut cpu = Plan::<f64>::new(dims, cpu_opts).unwrap();
            cpu.upload(&m).unwrap();
            let want = cpu.factor();
            assert!(
                matches!(want, Err(Error::NotPositiveDefinite { item, block: b, .. }) if item == bad && b == block),
                "CPU: {want:?}"
            );
            let mut gpu = Plan::<f64>::new(dims, cuda(1)).unwrap();
            gpu.upload(&m).unwrap();
            assert_eq!(gpu.factor(), want, "N={nb} n={n} block={block} column={col}");
            for (i, st) in gpu.item_status().iter().enumerate() {
                assert_eq!(*st == ItemStatus::Factored, i != bad, "item {i}");
            }
            let ok = BlockTridiagRef::new(dims, Layout::RowMajor, &good, &e).unwrap();
            gpu.upload(&ok).unwrap();
            gpu.factor().unwrap();
        }
    }
}

#[test]
fn gpu_rejects_non_finite_input_and_stays_usable() {
    if !gpu_or_skip("gpu_rejects_non_finite_input_and_stays_usable") {
        return;
    }
    let dims = Dims::new(2, 5, 3).unwrap();
    let (mut d, mut e) = random_problem::<f64>(3, dims, Layout::RowMajor, 1.0);
    let mut p = Plan::<f64>::new(dims, cuda(1)).unwrap();
    d[(5 + 3) * 9 + 2 * 3 + 1] = f64::NAN;
    let err = p.upload(&BlockTridiagRef::new(dims, Layout::RowMajor, &d, &e).unwrap()).unwrap_err();
    assert_eq!(err, Error::NonFinite { operand: Operand::Diagonal, item: 1, block: 3, row: 2, col: 1 });
    assert!(matches!(p.factor(), Err(Error::InvalidState(_))), "a failed upload leaves no matrix");
    d[(5 + 3) * 9 + 2 * 3 + 1] = 1.0;
    d[(5 + 3) * 9 + 2 * 3 + 1] = random_problem::<f64>(3, dims, Layout::RowMajor, 1.0).0[(5 + 3) * 9 + 2 * 3 + 1];
    e[9 + 5] = f64::INFINITY;
    let err = p.upload(&BlockTridiagRef::new(dims, Layout::RowMajor, &d, &e).unwrap()).unwrap_err();
    assert_eq!(err, Error::NonFinite { operand: Operand::SubDiagonal, item: 0, block: 1, row: 1, col: 2 });
    let (d, e) = random_problem::<f64>(3, dims, Layout::RowMajor, 1.0);
    p.upload(&BlockTridiagRef::new(dims, Layout::RowMajor, &d, &e).unwrap()).unwrap();
    p.factor().unwrap();
    let mut ld = [0.0; 2];
    p.logdet(&mut ld).unwrap();
    let m = BlockTridiagRef::new(dims, Layout::RowMajor, &d, &e).unwrap();
    for (item, g) in ld.iter().enumerate() {
        let mut l = dense_matrix(&m, item);
        dense_cholesky(&mut l, dims.rows()).unwrap();
        let want = dense_logdet(&l, dims.rows());
        assert!((g - want).abs() < 1e-12 * want.abs().max(1.0), "logdet {g} vs {want}");
    }
}

/// Device pointers in and out, on a stream the caller owns.
#[test]
fn gpu_device_pointers_and_caller_stream() {
    if !gpu_or_skip("gpu_device_pointers_and_caller_stream") {
        return;
    }
    use cudarc::driver::{CudaContext, DevicePtr, DevicePtrMut};
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.new_stream().unwrap();
    for layout in [Layout::RowMajor, Layout::ColMajor] {
        let dims = Dims::new(3, 37, 7).unwrap();
        let (d, e) = random_problem::<f64>(11, dims, layout, 1.0);
        let b = random_vec::<f64>(12, dims.batch * dims.rows() * 2);
        let dd = stream.clone_htod(&d).unwrap();
        let de = stream.clone_htod(&e).unwrap();
        let mut db = stream.clone_htod(&b).unwrap();
        stream.synchronize().unwrap();
        let mut p = Plan::<f64>::new(dims, PlanOptions { layout, ..cuda(1) }).unwrap();
        let shape = RhsShape::dense(dims, 2, layout);
        unsafe {
            p.set_stream(stream.cu_stream() as *mut std::ffi::c_void).unwrap();
            let (pd, _g1) = dd.device_ptr(&stream);
            let (pe, _g2) = de.device_ptr(&stream);
            p.upload_device(pd as *const f64, pe as *const f64).unwrap();
            p.factor().unwrap();
            let (pb, _g3) = db.device_ptr_mut(&stream);
            p.solve_device(shape, pb as *mut f64).unwrap();
        }
        p.synchronize().unwrap();
        let x = stream.clone_dtoh(&db).unwrap();
        let m = BlockTridiagRef::new(dims, layout, &d, &e).unwrap();
        let be =
            backward_error(&m, &RhsRef::new(dims, shape, &x).unwrap(), &RhsRef::new(dims, shape, &b).unwrap(), &[]);
        assert!(be < tolerance::<f64>(7), "device-pointer path backward error {be:e} ({layout:?})");
    }
}

/// A one-pass device solve is captured as a graph per distinct caller array (pointers and
/// strides in the key): more arrays than the plan keeps graphs for, revisited, each solved right,
/// beside arrays that take several passes (pack and unpack around the shared solve graph); a new
/// factor is used by graphs captured before it; a column-major array with the same pointer is a
/// different key.
#[test]
fn gpu_device_solves_through_many_arrays_and_refactors() {
    if !gpu_or_skip("gpu_device_solves_through_many_arrays_and_refactors") {
        return;
    }
    use cudarc::driver::{CudaContext, DevicePtrMut};
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let dims = Dims::new(2, 64, 32).unwrap();
    let mut p = Plan::<f64>::new(dims, PlanOptions { max_nrhs: 2, ..cuda(1) }).unwrap();
    let rows = dims.rows();
    // Arrays 0, 2, 4, ...: one pass (2 columns); 1, 3, ...: two passes (3 columns).
    let nrhs_of = |k: usize| 2 + k % 2;
    let bs: Vec<Vec<f64>> = (0..13).map(|k| random_vec::<f64>(40 + k as u64, dims.batch * rows * nrhs_of(k))).collect();
    let mut dbs: Vec<_> = bs.iter().map(|b| stream.clone_htod(b).unwrap()).collect();
    for (round, seed) in [(0, 31u64), (1, 31), (2, 32)] {
        let (d, e) = random_problem::<f64>(seed, dims, Layout::RowMajor, 1.0);
        let m = BlockTridiagRef::new(dims, Layout::RowMajor, &d, &e).unwrap();
        p.upload(&m).unwrap();
        p.factor().unwrap();
        for k in 0..bs.len() {
            let layout = if (k + round) % 3 == 0 { Layout::ColMajor } else { Layout::RowMajor };
            stream.memcpy_htod(&bs[k], &mut dbs[k]).unwrap();
            stream.synchronize().unwrap();
            let shape = RhsShape::dense(dims, nrhs_of(k), layout);
            unsafe {
                let (pb, _g) = dbs[k].device_ptr_mut(&stream);
                p.solve_device(shape, pb as *mut f64).unwrap();
            }
            p.synchronize().unwrap();
            let x = stream.clone_dtoh(&dbs[k]).unwrap();
            let be = backward_error(
                &m,
                &RhsRef::new(dims, shape, &x).unwrap(),
                &RhsRef::new(dims, shape, &bs[k]).unwrap(),
                &[],
            );
            assert!(be < tolerance::<f64>(32), "round {round}, array {k} ({layout:?}): backward error {be:e}");
        }
    }
}

/// NaN/Inf in right-hand sides in GPU memory: the error names the first offending element (also
/// in a later pass of a multi-pass solve), the caller's array is not written from the offending
/// pass on, and the plan solves the next clean right-hand sides correctly.
#[test]
fn gpu_device_rhs_non_finite_is_reported_and_leaves_the_array() {
    if !gpu_or_skip("gpu_device_rhs_non_finite_is_reported_and_leaves_the_array") {
        return;
    }
    use cudarc::driver::{CudaContext, DevicePtrMut};
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let dims = Dims::new(3, 6, 5).unwrap();
    let (d, e) = random_problem::<f64>(21, dims, Layout::RowMajor, 1.0);
    let m = BlockTridiagRef::new(dims, Layout::RowMajor, &d, &e).unwrap();
    // max_nrhs 2: 5 right-hand sides take three passes.
    let mut p = Plan::<f64>::new(dims, PlanOptions { max_nrhs: 2, ..cuda(1) }).unwrap();
    p.upload(&m).unwrap();
    p.factor().unwrap();
    let (nrhs, rows) = (5, dims.rows());
    let shape = RhsShape::dense(dims, nrhs, Layout::RowMajor);
    // (item, row, col): in the first pass, and in the last one (passes before it are solved).
    for (item, row, col, untouched_from) in [(1, 13, 1, 0), (2, 29, 4, 4)] {
        let mut b = random_vec::<f64>(22, dims.batch * rows * nrhs);
        b[item * rows * nrhs + row * nrhs + col] = if col == 1 { f64::NAN } else { f64::NEG_INFINITY };
        let mut db = stream.clone_htod(&b).unwrap();
        stream.synchronize().unwrap();
        let err = unsafe {
            let (pb, _g) = db.device_ptr_mut(&stream);
            p.solve_device(shape, pb as *mut f64).unwrap_err()
        };
        let want = Error::NonFinite { operand: Operand::RightHandSide, item, block: row / 5, row: row % 5, col };
        assert_eq!(err, want);
        let x = stream.clone_dtoh(&db).unwrap();
        for k in 0..dims.batch {
            for r in 0..rows {
                for c in untouched_from..nrhs {
                    let i = k * rows * nrhs + r * nrhs + c;
                    assert!(x[i].to_bits() == b[i].to_bits(), "column {c} of item {k} was written");
                }
            }
        }
    }
    let b = random_vec::<f64>(23, dims.batch * rows * nrhs);
    let mut db = stream.clone_htod(&b).unwrap();
    stream.synchronize().unwrap();
    unsafe {
        let (pb, _g) = db.device_ptr_mut(&stream);
        p.solve_device(shape, pb as *mut f64).unwrap();
    }
    p.synchronize().unwrap();
    let x = stream.clone_dtoh(&db).unwrap();
    let be = backward_error(&m, &RhsRef::new(dims, shape, &x).unwrap(), &RhsRef::new(dims, shape, &b).unwrap(), &[]);
    assert!(be < tolerance::<f64>(5), "solve after a rejected right-hand side: backward error {be:e}");
}

/// One-pass device-array solves where the cluster kernel is the whole solve (padded block size
/// 32, few blocks): right answers in both layouts, with several right-hand sides and in place; a
/// failed item's columns and an array with a NaN are left as they were; the plan solves right
/// afterwards.
#[test]
fn gpu_device_solve_through_the_cluster_kernel() {
    if !gpu_or_skip("gpu_device_solve_through_the_cluster_kernel") {
        return;
    }
    use cudarc::driver::CudaContext;
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    for (nb, n, batch, nrhs) in [(2, 32, 1, 1), (23, 29, 3, 3), (64, 32, 2, 2), (5, 17, 2, 1)] {
        let dims = Dims::new(batch, nb, n).unwrap();
        let rows = dims.rows();
        for layout in [Layout::RowMajor, Layout::ColMajor] {
            let (mut d, e) = random_problem::<f64>(seed_from(&[nb, n, batch, nrhs]), dims, layout, 1.0);
            // The last item of a batch fails in its middle block (its column 0: −1e3 on the diagonal).
            let bad = (batch > 1).then_some(batch - 1);
            if let Some(bad) = bad {
                let blk = &mut d[(bad * nb + nb / 2) * n * n..][..n * n];
                (0..n).for_each(|k| blk[k * n + k] = -1e3);
            }
            let m = BlockTridiagRef::new(dims, layout, &d, &e).unwrap();
            let mut p = Plan::<f64>::new(dims, PlanOptions { layout, ..cuda(1) }).unwrap();
            p.upload(&m).unwrap();
            assert_eq!(p.factor().is_err(), bad.is_some(), "N={nb} n={n} batch {batch}");
            let shape = RhsShape::dense(dims, nrhs, layout);
            let solve = |p: &mut Plan<f64>, b: &[f64]| solve_device_copy(&stream, p, shape, b);
            let items = |x: &[f64], k: usize| x[k * rows * nrhs..][..rows * nrhs].to_vec();
            for round in 0..2 {
                let b = random_vec::<f64>(seed_from(&[nb, n, round]), batch * rows * nrhs);
                let (res, x) = solve(&mut p, &b);
                assert_eq!(res.is_err(), bad.is_some(), "N={nb} n={n} {layout:?}: {res:?}");
                let skip: Vec<usize> = bad.into_iter().collect();
                if let Some(bad) = bad {
                    assert_eq!(items(&x, bad), items(&b, bad), "failed item's right-hand sides untouched");
                }
                let be = backward_error(
                    &m,
                    &RhsRef::new(dims, shape, &x).unwrap(),
                    &RhsRef::new(dims, shape, &b).unwrap(),
                    &skip,
                );
                assert!(be < tolerance::<f64>(n), "N={nb} n={n} batch {batch} {layout:?}: backward error {be:e}");
                // A NaN anywhere: an error, and nothing of the array written.
                let mut bn = b.clone();
                bn[(batch / 2) * rows * nrhs + rows * nrhs / 2] = f64::NAN;
                let (res, x) = solve(&mut p, &bn);
                assert!(matches!(res, Err(Error::NonFinite { .. })), "{res:?}");
                assert!(x.iter().zip(&bn).all(|(a, b)| a.to_bits() == b.to_bits()), "array written despite a NaN");
            }
        }
    }
}

/// A one-pass device solve of a single system whose levels the cluster kernel takes whole reads b
/// and writes x in the caller's array itself (kernels/small.cu `btchol_solve_cluster_small`,
/// fused). Over N = 1 … 512, odd n, 1 … 9 right-hand sides (9: past the cluster kernel's columns,
/// the packed path) and both layouts, in f64 and f32: right answers in place; the first NaN/Inf
/// (by row, then column) named exactly and the array left bit for bit; a failed factor leaves the
/// array too, and a NaN is still reported; the plan solves right afterwards. Host right-hand sides
/// (solve and factor_solve) take the same kernel through the mapped staging buffer.
#[test]
fn gpu_device_solve_of_a_single_system_in_one_launch() {
    if !gpu_or_skip("gpu_device_solve_of_a_single_system_in_one_launch") {
        return;
    }
    fn run<T: Scalar>() {
        use cudarc::driver::CudaContext;
        let ctx = CudaContext::new(0).unwrap();
        let stream = ctx.default_stream();
        let shapes =
            [(1, 32, 1), (2, 1, 3), (3, 7, 8), (13, 32, 2), (64, 32, 1), (127, 29, 4), (512, 32, 1), (17, 30, 9)];
        for (nb, n, nrhs) in shapes {
            let dims = Dims::new(1, nb, n).unwrap();
            let rows = dims.rows();
            for layout in [Layout::RowMajor, Layout::ColMajor] {
                let what = format!("{:?} N={nb} n={n} nrhs={nrhs} {layout:?}", T::DTYPE);
                let (d, e) = random_problem::<T>(seed_from(&[nb, n, nrhs, 7]), dims, layout, 1.0);
                let m = BlockTridiagRef::new(dims, layout, &d, &e).unwrap();
                let mut p = Plan::<T>::new(dims, PlanOptions { layout, ..cuda(1) }).unwrap();
                p.upload(&m).unwrap();
                p.factor().unwrap();
                let shape = RhsShape::dense(dims, nrhs, layout);
                let solve = |p: &mut Plan<T>, b: &[T]| solve_device_copy(&stream, p, shape, b);
                let same =
                    |x: &[T], b: &[T]| x.iter().zip(b).all(|(a, b)| a.to_f64().to_bits() == b.to_f64().to_bits());
                let at = |r: usize, c: usize| match layout {
                    Layout::RowMajor => r * nrhs + c,
                    Layout::ColMajor => c * rows + r,
                };
                let b = random_vec::<T>(seed_from(&[nb, n, nrhs, 8]), rows * nrhs);
                for round in 0..2 {
                    let (res, x) = solve(&mut p, &b);
                    res.unwrap_or_else(|err| panic!("{what} round {round}: {err}"));
                    let be = backward_error_of(&m, shape, &x, &b, &[]);
                    assert!(be < tolerance::<T>(n), "{what}: backward error {be:e}");
                    // Two non-finite values: the one in the earlier row is named (its column the
                    // last), nothing is written.
                    let mut bn = b.clone();
                    let (r0, r1) = (rows - 1 - round * (rows / 2), rows - 1);
                    bn[at(r1, 0)] = T::from_f64(f64::NAN);
                    bn[at(r0, nrhs - 1)] = T::from_f64(if round == 0 { f64::NAN } else { f64::INFINITY });
                    let (res, x) = solve(&mut p, &bn);
                    let want = Error::NonFinite {
                        operand: Operand::RightHandSide,
                        item: 0,
                        block: r0 / n,
                        row: r0 % n,
                        col: if r0 == r1 { 0 } else { nrhs - 1 },
                    };
                    assert_eq!(res, Err(want), "{what}");
                    assert!(same(&x, &bn), "{what}: array written despite a non-finite value");
                }
                // Host right-hand sides: the same kernel reads and writes the mapped staging
                // buffer; solve, and factor_solve (one launch sequence with the factor).
                let mut xh = b.clone();
                p.solve(&mut RhsMut::dense(dims, nrhs, layout, &mut xh).unwrap()).unwrap();
                let be = backward_error_of(&m, shape, &xh, &b, &[]);
                assert!(be < tolerance::<T>(n), "{what} host solve: backward error {be:e}");
                let mut xf = b.clone();
                p.factor_solve(&m, &mut RhsMut::dense(dims, nrhs, layout, &mut xf).unwrap()).unwrap();
                let be = backward_error_of(&m, shape, &xf, &b, &[]);
                assert!(be < tolerance::<T>(n), "{what} factor_solve: backward error {be:e}");
                // A factor that fails (the middle block's diagonal made negative): the solve says
                // so and leaves the array; a NaN in it is named first, as on the packed path.
                let mut dbad = d.clone();
                let blk = &mut dbad[(nb / 2) * n * n..][..n * n];
                (0..n).for_each(|k| blk[k * n + k] = T::from_f64(-1e3));
                let bad = BlockTridiagRef::new(dims, layout, &dbad, &e).unwrap();
                p.upload(&bad).unwrap();
                assert!(p.factor().is_err(), "{what}");
                let (res, x) = solve(&mut p, &b);
                assert!(matches!(res, Err(Error::NotPositiveDefinite { .. })), "{what}: {res:?}");
                assert!(same(&x, &b), "{what}: a failed item's right-hand sides were written");
                let mut xh = b.clone();
                let res = p.solve(&mut RhsMut::dense(dims, nrhs, layout, &mut xh).unwrap());
                assert!(matches!(res, Err(Error::NotPositiveDefinite { .. })), "{what} host: {res:?}");
                assert!(same(&xh, &b), "{what}: a failed item's host right-hand sides were written");
                let mut bn = b.clone();
                bn[at(rows / 2, 0)] = T::from_f64(f64::NAN);
                let (res, x) = solve(&mut p, &bn);
                assert!(matches!(res, Err(Error::NonFinite { .. })), "{what}: {res:?}");
                assert!(same(&x, &bn), "{what}");
                // And the plan, factored again, solves right.
                p.upload(&m).unwrap();
                p.factor().unwrap();
                let (res, x) = solve(&mut p, &b);
                res.unwrap();
                let be = backward_error_of(&m, shape, &x, &b, &[]);
                assert!(be < tolerance::<T>(n), "{what} after a failed factor: backward error {be:e}");
            }
        }
    }
    run::<f64>();
    run::<f32>();
}

/// factor_solve (forward substitution interlaced with the factorization, one synchronisation)
/// gives the same answer as factor then solve, skips a failed item, and falls back to chunks when
/// there are more right-hand sides than one pass holds.
#[test]
fn gpu_factor_solve_interlaced_matches_factor_then_solve() {
    if !gpu_or_skip("gpu_factor_solve_interlaced_matches_factor_then_solve") {
        return;
    }
    // (n = 31, 32: the cluster solve right after the factor's last kernel, a failed item in it.)
    let shapes = [(1, 3, 1, 1), (17, 8, 3, 2), (1000, 4, 2, 1), (64, 33, 2, 20), (64, 32, 2, 3), (1000, 31, 1, 8)];
    for (nb, n, batch, nrhs) in shapes {
        let dims = Dims::new(batch, nb, n).unwrap();
        let (mut d, e) = random_problem::<f64>(seed_from(&[nb, n, 99]), dims, Layout::RowMajor, 1.0);
        let bad = if batch > 1 { Some(batch - 1) } else { None };
        if let Some(b) = bad {
            for k in 0..n {
                d[(b * nb + nb / 2) * n * n + k * n + k] = -1e3;
            }
        }
        let m = BlockTridiagRef::new(dims, Layout::RowMajor, &d, &e).unwrap();
        let b = random_vec::<f64>(7, batch * dims.rows() * nrhs);
        let mut x = b.clone();
        let mut p = Plan::<f64>::new(dims, cuda(1)).unwrap();
        let r = p.factor_solve(&m, &mut RhsMut::dense(dims, nrhs, Layout::RowMajor, &mut x).unwrap());
        match bad {
            Some(item) => assert_eq!(r, Err(Error::NotPositiveDefinite { item, block: nb / 2, column: 0 })),
            None => r.unwrap(),
        }
        let skip: Vec<usize> = bad.into_iter().collect();
        let per = dims.rows() * nrhs;
        for &s in &skip {
            assert_eq!(&x[s * per..][..per], &b[s * per..][..per], "failed item untouched");
        }
        let (xr, br) = (
            RhsRef::dense(dims, nrhs, Layout::RowMajor, &x).unwrap(),
            RhsRef::dense(dims, nrhs, Layout::RowMajor, &b).unwrap(),
        );
        let be = backward_error(&m, &xr, &br, &skip);
        assert!(be < tolerance::<f64>(n), "factor_solve backward error {be:e} N={nb} n={n}");
    }
}

/// Pivots below the smallest normal number (a well-conditioned matrix scaled down to ~1e-310 in
/// f64, ~1e-39 in f32) factor on the GPU: the kernels' fast reciprocal square root is exact only
/// for normal pivots, and a sweep that meets a subnormal one is repeated with the exact one
/// (kernels/small.cu rsqrt_pivot). (sΨ)x = (sb) has Ψx = b's solution, which the CPU computes
/// from the unscaled problem (cpu_solve.rs checks the CPU on the scaled one). Nested dissection and
/// the per-item sequential path; subnormal arithmetic keeps fewer bits, hence the tolerances.
#[test]
fn gpu_factors_subnormal_pivots() {
    if !gpu_or_skip("gpu_factors_subnormal_pivots") {
        return;
    }
    fn run<T: Scalar>(scale: f64, tol: f64) {
        let shapes = [
            (5, 1, 1, Algorithm::NestedDissection),
            (9, 8, 2, Algorithm::NestedDissection),
            (37, 16, 1, Algorithm::NestedDissection),
            (17, 32, 1, Algorithm::NestedDissection),
            (8, 16, 3, Algorithm::Sequential),
            (6, 32, 2, Algorithm::Sequential),
        ];
        for (nb, n, batch, algorithm) in shapes {
            let dims = Dims::new(batch, nb, n).unwrap();
            let (d_tiny, gpu) = solve_scaled::<T>(61, dims, Backend::Cuda, algorithm, scale);
            let min_normal = T::MIN_POSITIVE;
            assert!(d_tiny.iter().any(|v| v.to_f64() > 0.0 && v.to_f64() < min_normal), "pivots are subnormal");
            let (_, cpu) = solve_scaled::<T>(61, dims, Backend::Cpu, algorithm, 1.0);
            let diff = relative_difference(&gpu, &cpu);
            assert!(diff <= tol, "{:?} N={nb} n={n} {algorithm:?}: |x_gpu - x_cpu| / |x| = {diff:e}", T::DTYPE);
        }
    }
    run::<f64>(1e-310, 1e-8);
    run::<f32>(1e-39, 3e-2);
}

/// Ill-conditioned diagonal blocks (κ(D_i) = 1e10 in f64, 1e5 in f32) with right-hand sides in
/// the directions of their large eigenvalues: the small-block solve multiplies by L_i⁻¹
/// (kernels/small.cu btchol_invert_small) instead of substituting, so its residual could grow
/// with κ(L_i); the backward error must still meet the usual bound (and is printed beside the
/// CPU's, which substitutes).
#[test]
fn gpu_solve_with_ill_conditioned_blocks_is_backward_stable() {
    if !gpu_or_skip("gpu_solve_with_ill_conditioned_blocks_is_backward_stable") {
        return;
    }
    fn run<T: Scalar>(cond: f64) {
        for (nb, n, batch) in [(3, 5, 1), (17, 16, 2), (64, 32, 1), (31, 24, 1), (9, 1, 1)] {
            let dims = Dims::new(batch, nb, n).unwrap();
            let (d, e, b) = ill_conditioned_problem::<T>(seed_from(&[nb, n, batch, 71]), dims, cond);
            let gpu = solve_backward_error(dims, &d, &e, &b, cuda(1));
            let cpu_opts = PlanOptions { backend: Backend::Cpu, ..Default::default() };
            let cpu = solve_backward_error(dims, &d, &e, &b, cpu_opts);
            eprintln!(
                "{:?} κ = {cond:e} N={nb} n={n} B={batch}: backward error GPU {gpu:.2e}, CPU {cpu:.2e}",
                T::DTYPE
            );
            assert!(gpu < tolerance::<T>(n), "{:?} N={nb} n={n}: GPU backward error {gpu:e} (CPU {cpu:e})", T::DTYPE);
        }
    }
    run::<f64>(1e10);
    run::<f32>(1e5);
}

/// `factor_solve_device` (factor and device solve as one launch sequence; with one warp per item
/// for both, the f64 sequential factor does the forward substitution, the solve only the
/// backward) gives the same bits as `factor` then `solve_device`, and the host `factor_solve` as
/// `factor` then `solve`: both algorithms, f64 and f32 (f32 fused too under
/// `BTCHOL_SEQ_FUSED_FORWARD=1`, a gpu-check step); batches that take the warp-pair factor (up to
/// 2 items per SM), the one-warp factor with the helper warps' solve (up to 4), one warp for both
/// (beyond: fused); N = 1, 2, 3, prime N, n = 1, odd n, several right-hand sides. A failed item
/// keeps its right-hand side; a NaN in b is the error and leaves the array unwritten, the factor
/// standing; the upload is required first.
#[test]
fn gpu_factor_solve_device_matches_factor_then_solve() {
    if !gpu_or_skip("gpu_factor_solve_device_matches_factor_then_solve") {
        return;
    }
    use cudarc::driver::{CudaContext, DevicePtrMut, DeviceRepr, ValidAsZeroBits};
    let ctx = CudaContext::new(0).unwrap();
    let sms = ctx.attribute(cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT).unwrap()
        as usize;
    let stream = ctx.default_stream();
    fn run<T: Scalar + DeviceRepr + ValidAsZeroBits>(sms: usize, stream: &std::sync::Arc<cudarc::driver::CudaStream>) {
        let wide = |v: &[T]| v.iter().map(|x| x.to_f64()).collect::<Vec<f64>>();
        let same = |x: &[T], y: &[T]| wide(x).iter().zip(wide(y)).all(|(a, c)| a.to_bits() == c.to_bits());
        let seq = Algorithm::Sequential;
        let nd = Algorithm::NestedDissection;
        // (N, n, batch, nrhs, algorithm): 8 items per SM fused (f64), 3 per SM the one-warp factor
        // and the helper warps' solve, 1 per SM the warp pair (neither fused).
        let shapes = [
            (1, 5, 8 * sms, 1, seq),
            (2, 16, 8 * sms, 1, seq),
            (3, 7, 3 * sms, 3, seq),
            (31, 32, 3 * sms, 2, seq),
            (13, 1, 8 * sms, 2, seq),
            (32, 16, 8 * sms, 1, seq),
            (17, 32, 5 * sms, 2, seq),
            (29, 24, sms, 1, seq),
            (64, 32, 1, 2, nd),
            (17, 8, 3, 1, nd),
            (5, 33, 2, 2, nd),
        ];
        for (nb, n, batch, nrhs, algorithm) in shapes {
            let what = format!("{} N={nb} n={n} B={batch} nrhs={nrhs} {algorithm:?}", std::any::type_name::<T>());
            let dims = Dims::new(batch, nb, n).unwrap();
            let (mut d, e) = random_problem::<T>(seed_from(&[nb, n, batch, 5]), dims, Layout::RowMajor, 1.0);
            let bad = batch - 1; // fails in its middle block (column 0: −1e3 on the diagonal)
            if batch > 1 {
                d[(bad * nb + nb / 2) * n * n] = T::from_f64(-1e3);
            }
            let m = BlockTridiagRef::new(dims, Layout::RowMajor, &d, &e).unwrap();
            let want_err = (batch > 1).then_some(Error::NotPositiveDefinite { item: bad, block: nb / 2, column: 0 });
            let check = |r: Result<()>| match want_err.clone() {
                Some(err) => assert_eq!(r, Err(err), "{what}"),
                None => r.unwrap(),
            };
            let shape = RhsShape::dense(dims, nrhs, Layout::RowMajor);
            let b = random_vec::<T>(seed_from(&[nb, n, 6]), batch * dims.rows() * nrhs);
            let mut p = Plan::<T>::new(dims, PlanOptions { algorithm, ..cuda(1) }).unwrap();
            let device_solve = |p: &mut Plan<T>, fused: bool, b: &[T]| {
                let mut db = stream.clone_htod(b).unwrap();
                stream.synchronize().unwrap();
                let r = unsafe {
                    let (pb, _g) = db.device_ptr_mut(stream);
                    if fused {
                        p.factor_solve_device(shape, pb as *mut T)
                    } else {
                        check(p.factor());
                        p.solve_device(shape, pb as *mut T)
                    }
                };
                (r, stream.clone_dtoh(&db).unwrap())
            };
            assert!(matches!(device_solve(&mut p, true, &b).0, Err(Error::InvalidState(_))), "{what}: before upload");
            p.upload(&m).unwrap();
            let (r, x_two) = device_solve(&mut p, false, &b);
            check(r);
            p.upload(&m).unwrap();
            let (r, x_one) = device_solve(&mut p, true, &b);
            check(r);
            assert!(same(&x_one, &x_two), "{what}: device bits differ");
            let per = dims.rows() * nrhs;
            if batch > 1 {
                assert!(same(&x_one[bad * per..][..per], &b[bad * per..][..per]), "{what}: failed item written");
            }
            let skip: Vec<usize> = (batch > 1).then_some(bad).into_iter().collect();
            let (xr, br) = (RhsRef::new(dims, shape, &x_one).unwrap(), RhsRef::new(dims, shape, &b).unwrap());
            let be = backward_error(&m, &xr, &br, &skip);
            assert!(be < tolerance::<T>(n), "{what}: backward error {be:e}");
            assert!(matches!(device_solve(&mut p, true, &b).0, Err(Error::InvalidState(_))), "{what}: factor twice");
            // The host factor_solve (Sequence::FactorSolve) against factor then solve.
            let mut x_host = b.clone();
            check(p.factor_solve(&m, &mut RhsMut::new(dims, shape, &mut x_host).unwrap()));
            assert!(same(&x_host, &x_two), "{what}: host bits differ");
            // A NaN in b: the error, b as it was, the factor standing (solve_device after it).
            let mut bn = b.clone();
            bn[per / 2] = T::from_f64(f64::NAN);
            p.upload(&m).unwrap();
            let (r, x) = device_solve(&mut p, true, &bn);
            let (row, col) = ((per / 2) / nrhs, (per / 2) % nrhs);
            let want = Error::NonFinite { operand: Operand::RightHandSide, item: 0, block: row / n, row: row % n, col };
            assert_eq!(r, Err(want), "{what}");
            assert!(same(&x, &bn), "{what}: written despite the NaN");
            let mut db = stream.clone_htod(&b).unwrap();
            stream.synchronize().unwrap();
            let r = unsafe {
                let (pb, _g) = db.device_ptr_mut(stream);
                p.solve_device(shape, pb as *mut T)
            };
            check(r);
            assert!(same(&stream.clone_dtoh(&db).unwrap(), &x_two), "{what}: solve after the NaN");
        }
    }
    run::<f64>(sms, &stream);
    run::<f32>(sms, &stream);
}

/// Small systems solve in one CTA per item (kernels/small.cu `btchol_solve_whole_small`: every
/// level, the right-hand sides in shared memory; the plan's default for blocks padded to 8 and
/// f32 blocks padded to 16 with narrow levels, src/cuda/whole_solve.rs; `BTCHOL_WHOLE_SOLVE=1`
/// forces it wherever it fits, as a gpu-check step does for this whole binary). Awkward shapes around it: N = 1 … 127 (prime, odd, powers of two), n from
/// 1 to 16 (odd, not a multiple of the padding), batches of 1 and 3, 1 to 13 right-hand sides
/// (13: about as many as fit its shared memory at N = 64, n = 8; 40: more, the level launches),
/// both layouts and precisions: the dense reference's backward error and the CPU's answer; a
/// failed item is reported and left untouched while the others are solved; device right-hand
/// sides too.
#[test]
fn gpu_small_systems_solve_in_one_cta_per_item() {
    if !gpu_or_skip("gpu_small_systems_solve_in_one_cta_per_item") {
        return;
    }
    let shapes = [
        (1, 1, 1, 1),
        (2, 3, 1, 1),
        (3, 8, 3, 2),
        (5, 16, 1, 3),
        (7, 5, 3, 1),
        (13, 11, 1, 13),
        (31, 8, 3, 1),
        (64, 8, 1, 1),
        (64, 8, 1, 13),
        (64, 8, 1, 40),
        (64, 16, 3, 2),
        (97, 7, 1, 4),
        (100, 12, 1, 1),
        (127, 1, 2, 3),
    ];
    for (i, &(nb, n, batch, nrhs)) in shapes.iter().enumerate() {
        let layout = if i % 2 == 0 { Layout::RowMajor } else { Layout::ColMajor };
        check::<f64>(nb, n, batch, nrhs, layout);
        check::<f32>(nb, n, batch, nrhs, layout);
    }
    for (nb, n) in [(31, 8), (64, 16)] {
        let dims = Dims::new(3, nb, n).unwrap();
        let (mut d, e) = random_problem::<f64>(seed_from(&[nb, n, 5]), dims, Layout::RowMajor, 1.0);
        (0..n).for_each(|k| d[(nb + nb / 3) * n * n + k * n + k] = -1e3); // item 1 fails
        let m = BlockTridiagRef::new(dims, Layout::RowMajor, &d, &e).unwrap();
        let mut p = Plan::<f64>::new(dims, cuda(1)).unwrap();
        p.upload(&m).unwrap();
        assert!(p.factor().is_err());
        check_solve_skips_failed_item(&mut p, &m, 1);
    }
    use cudarc::driver::CudaContext;
    let stream = CudaContext::new(0).unwrap().default_stream();
    for (nb, n, nrhs) in [(64, 8, 2), (17, 16, 1)] {
        let dims = Dims::new(2, nb, n).unwrap();
        let (d, e) = random_problem::<f64>(seed_from(&[nb, n, 6]), dims, Layout::ColMajor, 1.0);
        let m = BlockTridiagRef::new(dims, Layout::ColMajor, &d, &e).unwrap();
        let mut p = Plan::<f64>::new(dims, PlanOptions { layout: Layout::ColMajor, ..cuda(1) }).unwrap();
        p.upload(&m).unwrap();
        p.factor().unwrap();
        let shape = RhsShape::dense(dims, nrhs, Layout::ColMajor);
        let b = random_vec::<f64>(seed_from(&[nb, n, 7]), 2 * dims.rows() * nrhs);
        let (res, x) = solve_device_copy(&stream, &mut p, shape, &b);
        res.unwrap();
        let be = backward_error_of(&m, shape, &x, &b, &[]);
        assert!(be < tolerance::<f64>(n), "device solve N={nb} n={n}: backward error {be:e}");
    }
}

/// Small systems factor in one CTA per item (kernels/small.cu `btchol_factor_whole_small`: every
/// level and the inverses, the blocks in shared memory; `BTCHOL_WHOLE_FACTOR=1` forces it wherever
/// it fits, as a gpu-check step does for this binary): failures at the first, a middle and the last
/// level, and two in one item (the level kernels' rule: the earliest level, then the smallest block
/// and column), reported as the CPU nested-dissection executor reports them; the other items are
/// factored and solved, and a good matrix factors again.
#[test]
fn gpu_small_systems_factor_in_one_cta_per_item() {
    if !gpu_or_skip("gpu_small_systems_factor_in_one_cta_per_item") {
        return;
    }
    for (nb, n, batch) in [(8usize, 8, 1), (13, 5, 3), (31, 8, 2), (64, 8, 2), (64, 16, 2), (97, 3, 1), (33, 12, 2)] {
        let root = (1usize << (usize::BITS - 1 - nb.leading_zeros())) - 1; // (eliminated at the last level)
        for blocks in [vec![0], vec![nb / 2], vec![root], vec![nb - 1, 1]] {
            let dims = Dims::new(batch, nb, n).unwrap();
            let (good, e) = random_problem::<f64>(seed_from(&[nb, n, blocks[0], 8]), dims, Layout::RowMajor, 1.0);
            let mut d = good.clone();
            let bad = batch - 1;
            for &block in &blocks {
                let col = (n - 1).min(1 + block % n);
                d[(bad * nb + block) * n * n + col * n + col] = -1e3;
            }
            let cpu_opts =
                PlanOptions { backend: Backend::Cpu, algorithm: Algorithm::NestedDissection, ..Default::default() };
            let what = format!("N={nb} n={n} blocks {blocks:?}");
            check_gpu_fails_like_cpu(dims, (&d, &good, &e), bad, cpu_opts, cuda(1), &what);
        }
    }
}
