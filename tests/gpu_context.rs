//! The CUDA context's lifetime (its own test binary, so nothing else in the process has opened
//! the device first): asking whether CUDA is available keeps no context, and a GPU plan keeps
//! device 0's primary context after it is dropped, so the next plan does not create it again
//! (src/cuda/runtime.rs, `Device::open`). Skips (saying so) without a usable GPU, fails instead
//! under `BTCHOL_REQUIRE_GPU=1`.

use btchol::*;
use cudarc::driver::sys;

/// Whether device 0's primary context is active (retained by someone in this process).
fn primary_context_active() -> bool {
    let (mut dev, mut flags, mut active) = (0, 0, 0);
    unsafe {
        assert_eq!(sys::cuInit(0), sys::CUresult::CUDA_SUCCESS);
        assert_eq!(sys::cuDeviceGet(&mut dev, 0), sys::CUresult::CUDA_SUCCESS);
        assert_eq!(sys::cuDevicePrimaryCtxGetState(dev, &mut flags, &mut active), sys::CUresult::CUDA_SUCCESS);
    }
    active != 0
}

#[test]
fn gpu_plans_keep_the_primary_context_and_asking_for_cuda_does_not() {
    if !btchol::cuda::cuda_available() {
        assert_ne!(std::env::var("BTCHOL_REQUIRE_GPU").as_deref(), Ok("1"), "BTCHOL_REQUIRE_GPU=1 but no usable GPU");
        eprintln!("SKIPPED gpu_plans_keep_the_primary_context_and_asking_for_cuda_does_not: no usable GPU");
        return;
    }
    assert!(!primary_context_active(), "cuda_available() left device 0's primary context retained");
    let dims = Dims::new(1, 37, 8).unwrap();
    let options = PlanOptions { backend: Backend::Cuda, ..Default::default() };
    for round in 0..3 {
        let mut plan = Plan::<f64>::new(dims, options).unwrap();
        let (d, e) = spd_blocks(&dims);
        plan.upload(&BlockTridiagRef::new(dims, Layout::RowMajor, &d, &e).unwrap()).unwrap();
        plan.factor().unwrap();
        drop(plan);
        assert!(primary_context_active(), "round {round}: the context was released with the plan");
    }
}

/// A diagonally dominant block-tridiagonal matrix (D = 4I + 0.1, E = 0.5I): positive definite.
fn spd_blocks(dims: &Dims) -> (Vec<f64>, Vec<f64>) {
    let n = dims.block_size;
    let mut d = vec![0.1; dims.n_blocks * n * n];
    let mut e = vec![0.0; (dims.n_blocks - 1) * n * n];
    for b in 0..dims.n_blocks {
        for i in 0..n {
            d[b * n * n + i * n + i] = 4.0;
            if b + 1 < dims.n_blocks {
                e[b * n * n + i * n + i] = 0.5;
            }
        }
    }
    (d, e)
}
