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
