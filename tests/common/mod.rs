//! Shared helpers for the integration tests: build a random problem, solve it with a plan, and
//! measure the result against the independent f64 reference.
#![allow(dead_code)]

use btchol::reference::*;
use btchol::*;

/// A drawn problem with its right-hand sides and the solution btchol computed.
pub struct Solved<T: Scalar> {
    pub dims: Dims,
    pub layout: Layout,
    pub d: Vec<T>,
    pub e: Vec<T>,
    pub b: Vec<T>,
    pub x: Vec<T>,
    pub nrhs: usize,
}

impl<T: Scalar> Solved<T> {
    pub fn matrix(&self) -> BlockTridiagRef<'_, T> {
        BlockTridiagRef::new(self.dims, self.layout, &self.d, &self.e).unwrap()
    }
    pub fn backward_error(&self) -> f64 {
        let m = self.matrix();
        let x = RhsRef::dense(self.dims, self.nrhs, self.layout, &self.x).unwrap();
        let b = RhsRef::dense(self.dims, self.nrhs, self.layout, &self.b).unwrap();
        backward_error(&m, &x, &b, &[])
    }
}

pub fn seed_from(parts: &[usize]) -> u64 {
    parts.iter().fold(0x5EED_u64, |h, &p| h.wrapping_mul(0x100_0000_01B3).wrapping_add(p as u64 + 1))
}

/// Draws a problem from `seed`, factors and solves it with `options`.
pub fn solve_random<T: Scalar>(seed: u64, dims: Dims, nrhs: usize, layout: Layout, options: PlanOptions) -> Solved<T> {
    let (d, e) = random_problem::<T>(seed, dims, layout, 1.0);
    let len = RhsShape::dense(dims, nrhs, layout).required_len(dims).unwrap();
    let b = random_vec::<T>(seed ^ 0xB, len);
    let mut x = b.clone();
    let mut plan = Plan::<T>::new(dims, PlanOptions { layout, ..options }).unwrap();
    let m = BlockTridiagRef::new(dims, layout, &d, &e).unwrap();
    plan.upload(&m).unwrap();
    plan.factor().unwrap();
    plan.solve(&mut RhsMut::dense(dims, nrhs, layout, &mut x).unwrap()).unwrap();
    Solved { dims, layout, d, e, b, x, nrhs }
}

/// The backward-error bound the tests hold the solver to: 10·n·ε of the working precision
/// (n ≥ 4 so that n = 1 keeps a little room for the residual's own rounding).
pub fn tolerance<T: Scalar>(n: usize) -> f64 {
    10.0 * n.max(4) as f64 * T::EPSILON
}

/// The backend of the feature tests (masks, regularisation, ...): the CPU, or the GPU when
/// BTCHOL_TEST_BACKEND=cuda (scripts/gpu-check.sh runs them both ways).
pub fn test_backend() -> Backend {
    match std::env::var("BTCHOL_TEST_BACKEND").as_deref() {
        Ok("cuda") => Backend::Cuda,
        _ => Backend::Cpu,
    }
}

/// Plan options for `alg` with `threads` CPU threads on [`test_backend`]. On the GPU, the
/// sequential algorithm exists for n ≤ 32 only: larger blocks use nested dissection.
pub fn backend_options(alg: Algorithm, threads: usize, n: usize) -> PlanOptions {
    let backend = test_backend();
    let algorithm = if backend == Backend::Cuda && alg == Algorithm::Sequential && n > 32 {
        Algorithm::NestedDissection
    } else {
        alg
    };
    PlanOptions { backend, algorithm, threads, ..Default::default() }
}

/// Whether a CUDA plan can be created; else says the test is skipped, or panics when
/// BTCHOL_REQUIRE_GPU=1 (the GPU check script sets it, so a GPU test cannot skip silently there).
pub fn gpu_or_skip(test: &str) -> bool {
    let probe =
        Plan::<f64>::new(Dims::new(1, 2, 2).unwrap(), PlanOptions { backend: Backend::Cuda, ..Default::default() });
    match probe {
        Ok(_) => true,
        Err(e) => {
            if std::env::var("BTCHOL_REQUIRE_GPU").as_deref() == Ok("1") {
                panic!("BTCHOL_REQUIRE_GPU=1 but the CUDA backend is unusable: {e}");
            }
            eprintln!("SKIPPED {test}: no usable GPU ({e})");
            false
        }
    }
}

/// Solves one random problem with the GPU options `gpu` and the CPU's `cpu_algorithm`: the GPU
/// answer has a small backward error and equals the CPU's (same algorithm) up to rounding.
pub fn check_gpu_against_cpu<T: Scalar>(
    gpu: PlanOptions,
    cpu_algorithm: Algorithm,
    (nb, n, batch, nrhs): (usize, usize, usize, usize),
    layout: Layout,
    salt: usize,
) {
    let dims = Dims::new(batch, nb, n).unwrap();
    let seed = seed_from(&[nb, n, batch, nrhs, layout as usize, salt]);
    let g = solve_random::<T>(seed, dims, nrhs, layout, gpu);
    let be = g.backward_error();
    assert!(
        be < tolerance::<T>(n),
        "GPU {:?} {:?} backward error {be:e} for N={nb} n={n} batch={batch} m={nrhs} {layout:?} seed={seed}",
        gpu.algorithm,
        T::DTYPE
    );
    let cpu_opts = PlanOptions { backend: Backend::Cpu, algorithm: cpu_algorithm, threads: 2, ..Default::default() };
    let c = solve_random::<T>(seed, dims, nrhs, layout, cpu_opts);
    let scale = c.x.iter().fold(0.0f64, |s, v| s.max(v.to_f64().abs()));
    let diff = g.x.iter().zip(&c.x).map(|(a, b)| (a.to_f64() - b.to_f64()).abs()).fold(0.0, f64::max);
    assert!(
        diff <= 1e3 * n as f64 * T::EPSILON * scale.max(1.0),
        "GPU and CPU {cpu_algorithm:?} differ by {diff:e} (N={nb} n={n})"
    );
}

/// Item `bad` of `d` (with couplings `e`, row-major) is not positive definite and `good` is the
/// same problem without the fault: the GPU plan reports the CPU plan's failure (item, block,
/// column), marks only that item failed, solves the others and, with `good` uploaded, factors.
pub fn check_gpu_fails_like_cpu(
    dims: Dims,
    (d, good, e): (&[f64], &[f64], &[f64]),
    bad: usize,
    cpu_opts: PlanOptions,
    gpu_opts: PlanOptions,
    what: &str,
) {
    let m = BlockTridiagRef::new(dims, Layout::RowMajor, d, e).unwrap();
    let mut cpu = Plan::<f64>::new(dims, cpu_opts).unwrap();
    cpu.upload(&m).unwrap();
    let want = cpu.factor();
    assert!(matches!(want, Err(Error::NotPositiveDefinite { item, .. }) if item == bad), "CPU: {want:?}");
    let mut gpu = Plan::<f64>::new(dims, gpu_opts).unwrap();
    gpu.upload(&m).unwrap();
    assert_eq!(gpu.factor(), want, "{what}");
    for (i, st) in gpu.item_status().iter().enumerate() {
        assert_eq!(*st == ItemStatus::Factored, i != bad, "item {i}");
    }
    check_solve_skips_failed_item(&mut gpu, &m, bad);
    let ok = BlockTridiagRef::new(dims, Layout::RowMajor, good, e).unwrap();
    gpu.upload(&ok).unwrap();
    gpu.factor().unwrap();
}

/// After item `bad` failed to factor: a solve reports the failure, leaves that item's right-hand
/// side untouched and solves every other item (backward error against the reference).
pub fn check_solve_skips_failed_item(p: &mut Plan<f64>, m: &BlockTridiagRef<'_, f64>, bad: usize) {
    let dims = p.dims();
    let b = random_vec::<f64>(1, dims.batch * dims.rows());
    let mut x = b.clone();
    assert!(p.solve(&mut RhsMut::dense(dims, 1, Layout::RowMajor, &mut x).unwrap()).is_err());
    let rows = dims.rows();
    assert_eq!(&x[bad * rows..][..rows], &b[bad * rows..][..rows], "failed item's rhs untouched");
    let (xr, br) =
        (RhsRef::dense(dims, 1, Layout::RowMajor, &x).unwrap(), RhsRef::dense(dims, 1, Layout::RowMajor, &b).unwrap());
    assert!(backward_error(m, &xr, &br, &[bad]) < tolerance::<f64>(dims.block_size));
}

/// A well-conditioned random problem scaled by `scale` (tiny scales give tiny or subnormal
/// pivots), factored and solved by `backend` with `algorithm` in T: returns the scaled diagonal
/// blocks as T and the solution, which is the unscaled problem's ((sΨ)x = (sb)). `key` seeds it.
pub fn solve_scaled<T: Scalar>(
    key: usize,
    dims: Dims,
    backend: Backend,
    algorithm: Algorithm,
    scale: f64,
) -> (Vec<T>, Vec<T>) {
    solve_scaled_with(key, dims, PlanOptions { backend, algorithm, ..Default::default() }, scale)
}

/// [`solve_scaled`] with any plan options.
pub fn solve_scaled_with<T: Scalar>(key: usize, dims: Dims, options: PlanOptions, scale: f64) -> (Vec<T>, Vec<T>) {
    let (backend, algorithm) = (options.backend, options.algorithm);
    let (nb, n, batch) = (dims.n_blocks, dims.block_size, dims.batch);
    let (d, e) = random_problem::<f64>(seed_from(&[nb, n, batch, key]), dims, Layout::RowMajor, 1.0);
    let b = random_vec::<f64>(seed_from(&[nb, n, key + 1]), dims.batch * dims.rows());
    let cast = |v: &[f64]| v.iter().map(|&x| T::from_f64(x * scale)).collect::<Vec<T>>();
    let (d, e) = (cast(&d), cast(&e));
    let m = BlockTridiagRef::new(dims, Layout::RowMajor, &d, &e).unwrap();
    let mut p = Plan::<T>::new(dims, options).unwrap();
    p.upload(&m).unwrap();
    p.factor().unwrap_or_else(|err| panic!("{:?} {backend:?} N={nb} n={n} {algorithm:?}: {err}", T::DTYPE));
    let mut x = cast(&b);
    p.solve(&mut RhsMut::dense(dims, 1, Layout::RowMajor, &mut x).unwrap()).unwrap();
    (d, x)
}

/// max |x − y| / max |y| (the relative difference of two solutions).
pub fn relative_difference<T: Scalar>(x: &[T], y: &[T]) -> f64 {
    let size = y.iter().fold(0.0f64, |s, v| s.max(v.to_f64().abs()));
    x.iter().zip(y).map(|(a, b)| (a.to_f64() - b.to_f64()).abs()).fold(0.0, f64::max) / size
}

/// A problem whose diagonal blocks are ill-conditioned: D_i = Q_i·diag(λ)·Q_iᵀ with λ from 1 down
/// to 1/cond (geometric) and a random orthogonal Q_i, couplings of norm ≤ 0.2/cond (so Ψ is SPD
/// with κ(Ψ) ≈ cond), row-major; b = Ψ·x for a random x, which puts b in the directions of
/// the large eigenvalues (the hard case for solves that multiply by computed inverses).
pub fn ill_conditioned_problem<T: Scalar>(seed: u64, dims: Dims, cond: f64) -> (Vec<T>, Vec<T>, Vec<T>) {
    let (n, nb, bl) = (dims.block_size, dims.n_blocks, dims.block_len());
    let mut rng = Rng::new(seed);
    let mut d = vec![T::ZERO; dims.diag_len()];
    let mut e = vec![T::ZERO; dims.sub_len()];
    let lambda: Vec<f64> = (0..n).map(|k| cond.powf(-(k as f64) / (n.max(2) - 1) as f64)).collect();
    for b in 0..dims.batch {
        for i in 0..nb {
            // Q by Gram–Schmidt (twice, for orthogonality to working precision) on random columns.
            let mut q: Vec<Vec<f64>> = Vec::with_capacity(n);
            while q.len() < n {
                let mut v: Vec<f64> = (0..n).map(|_| rng.uniform()).collect();
                for _ in 0..2 {
                    for u in &q {
                        let dot: f64 = u.iter().zip(&v).map(|(a, b)| a * b).sum();
                        v.iter_mut().zip(u).for_each(|(x, y)| *x -= dot * y);
                    }
                }
                let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
                if norm > 1e-3 {
                    q.push(v.iter().map(|x| x / norm).collect());
                }
            }
            let blk = &mut d[(b * nb + i) * bl..][..bl];
            for r in 0..n {
                for c in 0..n {
                    blk[r * n + c] = T::from_f64((0..n).map(|k| q[k][r] * lambda[k] * q[k][c]).sum());
                }
            }
        }
        for i in 0..nb.saturating_sub(1) {
            let blk = &mut e[(b * (nb - 1) + i) * bl..][..bl];
            blk.iter_mut().for_each(|v| *v = T::from_f64(0.2 / cond * rng.uniform() / n as f64));
        }
    }
    let m = BlockTridiagRef::new(dims, Layout::RowMajor, &d, &e).unwrap();
    let mut rhs = Vec::with_capacity(dims.batch * dims.rows());
    for item in 0..dims.batch {
        let x: Vec<f64> = (0..dims.rows()).map(|_| rng.uniform()).collect();
        rhs.extend(matvec_f64(&m, item, &x).into_iter().map(T::from_f64));
    }
    (d, e, rhs)
}

/// Factors and solves `(d, e, b)` (row-major, one right-hand side) with `options`; returns the
/// normwise backward error of the solution.
pub fn solve_backward_error<T: Scalar>(dims: Dims, d: &[T], e: &[T], b: &[T], options: PlanOptions) -> f64 {
    let m = BlockTridiagRef::new(dims, Layout::RowMajor, d, e).unwrap();
    let mut p = Plan::<T>::new(dims, options).unwrap();
    p.upload(&m).unwrap();
    p.factor().unwrap();
    let mut x = b.to_vec();
    p.solve(&mut RhsMut::dense(dims, 1, Layout::RowMajor, &mut x).unwrap()).unwrap();
    let (xr, br) =
        (RhsRef::dense(dims, 1, Layout::RowMajor, &x).unwrap(), RhsRef::dense(dims, 1, Layout::RowMajor, b).unwrap());
    backward_error(&m, &xr, &br, &[])
}

/// Solves `b` through `Plan::solve_device` on a copy of it in GPU memory; returns the result and
/// the array afterwards (the solution, or `b` where the solve left it).
pub fn solve_device_copy<T: Scalar>(
    stream: &std::sync::Arc<cudarc::driver::CudaStream>,
    plan: &mut Plan<T>,
    shape: RhsShape,
    b: &[T],
) -> (Result<()>, Vec<T>) {
    use cudarc::driver::DevicePtrMut;
    let mut db = stream.clone_htod(b).unwrap();
    // (The plan's own stream is not ordered after `stream`: the copy must be done first.)
    stream.synchronize().unwrap();
    let res = unsafe {
        let (pb, _g) = db.device_ptr_mut(stream);
        plan.solve_device(shape, pb as *mut T)
    };
    plan.synchronize().unwrap();
    (res, stream.clone_dtoh(&db).unwrap())
}

/// The backward error of the solutions `x` of `b` (same shape) against the dense reference.
pub fn backward_error_of<T: Scalar>(m: &BlockTridiagRef<T>, shape: RhsShape, x: &[T], b: &[T], skip: &[usize]) -> f64 {
    let dims = m.dims();
    backward_error(m, &RhsRef::new(dims, shape, x).unwrap(), &RhsRef::new(dims, shape, b).unwrap(), skip)
}
