//! GPU features beyond nested dissection: the per-item sequential algorithm (batches of short
//! systems), half-precision inputs already in device memory, and the diagonal shift of device
//! uploads, against the dense f64 reference and the CPU backend. Each test skips (saying so)
//! where no GPU is usable, and fails instead when `BTCHOL_REQUIRE_GPU=1`.

mod common;
use btchol::plan::HalfFloat;
use btchol::reference::*;
use btchol::*;
use common::*;
use cudarc::driver::{CudaContext, DevicePtr, DevicePtrMut};

/// The raw 16-bit words of half-precision values (what the device holds).
fn bits<H: HalfFloat>(v: &[H]) -> Vec<u16> {
    assert_eq!(std::mem::size_of::<H>(), 2);
    // SAFETY: H is a 2-byte plain value (f16 or bf16).
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u16, v.len()) }.to_vec()
}

/// The GPU's per-item sequential algorithm against the CPU's, up to rounding.
fn check_sequential<T: Scalar>(nb: usize, n: usize, batch: usize, nrhs: usize, layout: Layout) {
    check_gpu_against_cpu::<T>(gpu_seq(), Algorithm::Sequential, (nb, n, batch, nrhs), layout, 77);
}

fn gpu_seq() -> PlanOptions {
    PlanOptions { backend: Backend::Cuda, algorithm: Algorithm::Sequential, ..Default::default() }
}

#[test]
fn gpu_sequential_matches_reference_over_the_shape_matrix() {
    if !gpu_or_skip("gpu_sequential_matches_reference_over_the_shape_matrix") {
        return;
    }
    for nb in [1, 2, 3, 5, 17, 64, 257] {
        for n in [1, 2, 3, 7, 8, 16, 31, 32] {
            for (batch, nrhs, layout) in [(1, 1, Layout::RowMajor), (5, 3, Layout::ColMajor), (33, 2, Layout::RowMajor)]
            {
                check_sequential::<f64>(nb, n, batch, nrhs, layout);
                check_sequential::<f32>(nb, n, batch, nrhs, layout);
            }
        }
    }
    // Many right-hand sides (chunks of 16) and a large batch.
    check_sequential::<f64>(9, 8, 2, 40, Layout::RowMajor);
    check_sequential::<f64>(32, 16, 1024, 1, Layout::RowMajor);
    // Batches that fill every SM several times over with the largest blocks.
    check_sequential::<f64>(5, 32, 1024, 2, Layout::ColMajor);
    check_sequential::<f32>(6, 32, 1024, 1, Layout::RowMajor);
}

#[test]
fn gpu_sequential_refuses_large_blocks_clearly() {
    if !gpu_or_skip("gpu_sequential_refuses_large_blocks_clearly") {
        return;
    }
    match Plan::<f64>::new(Dims::new(2, 4, 33).unwrap(), gpu_seq()) {
        Err(Error::Unsupported(m)) => assert!(m.contains("n = 33") && m.contains("nested dissection"), "{m}"),
        r => panic!("{:?}", r.map(|_| ())),
    }
}

#[test]
fn gpu_sequential_reports_failures_like_the_cpu() {
    if !gpu_or_skip("gpu_sequential_reports_failures_like_the_cpu") {
        return;
    }
    for (nb, n, batch) in [(1, 1, 1), (17, 4, 3), (64, 32, 2), (1000, 2, 4)] {
        for block in [0, nb / 2, nb - 1] {
            let dims = Dims::new(batch, nb, n).unwrap();
            let (mut d, e) = random_problem::<f64>(seed_from(&[nb, n, block, 5]), dims, Layout::RowMajor, 1.0);
            let bad = batch / 2;
            let col = n / 2;
            d[(bad * nb + block) * n * n + col * n + col] = -1e3;
            let m = BlockTridiagRef::new(dims, Layout::RowMajor, &d, &e).unwrap();
            let mut want = Plan::<f64>::new(dims, PlanOptions { backend: Backend::Cpu, ..gpu_seq() }).unwrap();
            want.upload(&m).unwrap();
            let want_err = want.factor();
            let mut p = Plan::<f64>::new(dims, gpu_seq()).unwrap();
            p.upload(&m).unwrap();
            assert_eq!(p.factor(), want_err, "N={nb} n={n} block {block}");
            assert!(
                matches!(want_err, Err(Error::NotPositiveDefinite { item, block: b, .. }) if item == bad && b == block)
            );
            assert_eq!(p.item_status(), want.item_status());
            check_solve_skips_failed_item(&mut p, &m, bad);
        }
    }
}

/// f16 / bf16 blocks and right-hand sides in device memory give bit for bit the solution of the
/// host half-precision path (both widen exactly), which solves the widened problem.
fn check_half_device<H: HalfFloat + std::fmt::Debug>(to_half: fn(f64) -> H, alg: Algorithm) {
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    for (batch, nb, n, layout) in
        [(1, 1, 1, Layout::RowMajor), (3, 17, 7, Layout::ColMajor), (2, 40, 32, Layout::RowMajor)]
    {
        let dims = Dims::new(batch, nb, n).unwrap();
        let (d, e) = random_problem::<f64>(seed_from(&[batch, nb, n, 3]), dims, layout, 1.0);
        let nrhs = 2;
        let shape = RhsShape::dense(dims, nrhs, layout);
        let b = random_vec::<f64>(9, shape.required_len(dims).unwrap());
        let (dh, eh, bh): (Vec<H>, Vec<H>, Vec<H>) = (
            d.iter().map(|&v| to_half(v)).collect(),
            e.iter().map(|&v| to_half(v)).collect(),
            b.iter().map(|&v| to_half(v)).collect(),
        );
        let opts = PlanOptions { backend: Backend::Cuda, algorithm: alg, layout, ..Default::default() };
        // Host half path.
        let mut host = Plan::<f64>::new(dims, opts).unwrap();
        host.upload_half(&dh, &eh).unwrap();
        host.factor().unwrap();
        let mut x_host = vec![0.0; b.len()];
        host.solve_half(shape, &bh, &mut x_host).unwrap();
        // Device half path.
        let (dd, de, db) = (
            stream.clone_htod(&bits(&dh)).unwrap(),
            stream.clone_htod(&bits(&eh)).unwrap(),
            stream.clone_htod(&bits(&bh)).unwrap(),
        );
        // (The plan's own stream is not ordered after `stream`: the copies must be done first.)
        stream.synchronize().unwrap();
        let mut dx = stream.alloc_zeros::<f64>(b.len()).unwrap();
        let mut dev = Plan::<f64>::new(dims, opts).unwrap();
        unsafe {
            let (pd, _g1) = dd.device_ptr(&stream);
            let (pe, _g2) = de.device_ptr(&stream);
            dev.upload_device_half(pd as *const H, pe as *const H).unwrap();
            dev.factor().unwrap();
            let (pb, _g3) = db.device_ptr(&stream);
            let (px, _g4) = dx.device_ptr_mut(&stream);
            dev.solve_device_half(shape, pb as *const H, px as *mut f64).unwrap();
        }
        dev.synchronize().unwrap();
        let x_dev = stream.clone_dtoh(&dx).unwrap();
        assert_eq!(x_dev, x_host, "{batch} {nb} {n} {layout:?} {alg:?}");
        // And it solves the widened problem.
        let widen = |v: &[H]| v.iter().map(|h| h.widen()).collect::<Vec<f64>>();
        let (dw, ew, bw) = (widen(&dh), widen(&eh), widen(&bh));
        let m = BlockTridiagRef::new(dims, layout, &dw, &ew).unwrap();
        let be = backward_error(
            &m,
            &RhsRef::new(dims, shape, &x_dev).unwrap(),
            &RhsRef::new(dims, shape, &bw).unwrap(),
            &[],
        );
        assert!(be < tolerance::<f64>(n), "half device path backward error {be:e}");
        // A non-finite 16-bit value is refused (the last diagonal entry of the last block).
        let mut bad = dh.clone();
        let last = bad.len() - 1;
        bad[last] = to_half(f64::INFINITY);
        let dbad = stream.clone_htod(&bits(&bad)).unwrap();
        stream.synchronize().unwrap(); // (else the upload may read the buffer before the copy lands)
        let r = unsafe {
            let (pd, _g1) = dbad.device_ptr(&stream);
            let (pe, _g2) = de.device_ptr(&stream);
            dev.upload_device_half(pd as *const H, pe as *const H)
        };
        assert!(matches!(r, Err(Error::NonFinite { operand: Operand::Diagonal, .. })), "{r:?}");
    }
}

#[test]
fn gpu_half_inputs_from_device_memory() {
    if !gpu_or_skip("gpu_half_inputs_from_device_memory") {
        return;
    }
    for alg in [Algorithm::NestedDissection, Algorithm::Sequential] {
        check_half_device::<half::f16>(half::f16::from_f64, alg);
        check_half_device::<half::bf16>(half::bf16::from_f64, alg);
    }
}

#[test]
fn gpu_diag_shift_applies_to_device_uploads() {
    if !gpu_or_skip("gpu_diag_shift_applies_to_device_uploads") {
        return;
    }
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let dims = Dims::new(2, 19, 5).unwrap();
    let (d, e) = random_problem::<f64>(4, dims, Layout::RowMajor, 1.0);
    // The plan factors (Ψ − 3I) + 3I = Ψ.
    let mut d_minus = d.clone();
    for blk in d_minus.chunks_exact_mut(25) {
        for k in 0..5 {
            blk[k * 5 + k] -= 3.0;
        }
    }
    let (dd, de) = (stream.clone_htod(&d_minus).unwrap(), stream.clone_htod(&e).unwrap());
    stream.synchronize().unwrap(); // (the plan's own stream is not ordered after `stream`)
    let mut p =
        Plan::<f64>::new(dims, PlanOptions { backend: Backend::Cuda, diag_shift: 3.0, ..Default::default() }).unwrap();
    unsafe {
        let (pd, _g1) = dd.device_ptr(&stream);
        let (pe, _g2) = de.device_ptr(&stream);
        p.upload_device(pd as *const f64, pe as *const f64).unwrap();
    }
    p.factor().unwrap();
    let b = random_vec::<f64>(5, dims.batch * dims.rows());
    let mut x = b.clone();
    p.solve(&mut RhsMut::dense(dims, 1, Layout::RowMajor, &mut x).unwrap()).unwrap();
    let m = BlockTridiagRef::new(dims, Layout::RowMajor, &d, &e).unwrap();
    let be = backward_error(
        &m,
        &RhsRef::dense(dims, 1, Layout::RowMajor, &x).unwrap(),
        &RhsRef::dense(dims, 1, Layout::RowMajor, &b).unwrap(),
        &[],
    );
    assert!(be < tolerance::<f64>(5) * 4.0, "backward error {be:e}");
}
