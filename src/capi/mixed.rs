//! The mixed-precision plan handle: an f64 problem factored in f32 and solved to f64 accuracy by
//! iterative refinement ([`crate::MixedPlan`]).

use std::ffi::c_void;
use std::sync::Mutex;

use super::boundary::{fail, guard, non_null, size_arg, slice_from, slice_from_mut, write_opt, CResult};
use super::errors::*;
use super::options::{btchol_layout, btchol_plan_options, options_arg};
use super::plan::rhs_shape;
use crate::model::{BlockTridiagRef, Dims, RhsMut};
use crate::plan::{MixedPlan, RefineOptions};

/// An opaque mixed-precision plan from `btchol_mixed_plan_create`: f64 blocks and right-hand
/// sides, an f32 factor, f64 accuracy by iterative refinement (falling back to an f64 factor when
/// refinement does not converge). Same thread rules as `btchol_plan`.
pub struct btchol_mixed_plan {
    plan: Mutex<MixedPlan>,
}

unsafe fn with_mixed<R>(plan: *mut btchol_mixed_plan, body: impl FnOnce(&mut MixedPlan) -> CResult<R>) -> CResult<R> {
    non_null(plan, "plan")?;
    let handle = &*plan;
    let mut guard = match handle.plan.try_lock() {
        Ok(g) => g,
        Err(std::sync::TryLockError::WouldBlock) => {
            return Err(fail(
                BTCHOL_STATUS_INVALID_STATE,
                format_args!(
                    "the plan is in use by another thread: one plan must not be used from two threads at once"
                ),
            ))
        }
        Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
    };
    body(&mut guard)
}

/// Creates a mixed-precision plan for (B, N, n) = (batch, n_blocks, block_size). `options` as for
/// `btchol_plan_create` (NULL: defaults) apply to the f32 factor and the f64 fallback;
/// `max_iterations` (0: 10) bounds the refinement steps of a solve; `tolerance` (0: 32 * DBL_EPSILON)
/// is the normwise backward error a solve must reach.
///
/// # Safety
/// `options` is NULL or initialised; `out_plan` is writable.
#[no_mangle]
pub unsafe extern "C" fn btchol_mixed_plan_create(
    batch: i64,
    n_blocks: i64,
    block_size: i64,
    options: *const btchol_plan_options,
    max_iterations: i64,
    tolerance: f64,
    out_plan: *mut *mut btchol_mixed_plan,
) -> btchol_status {
    guard("btchol_mixed_plan_create", || {
        non_null(out_plan, "out_plan")?;
        let dims =
            Dims::new(size_arg(batch, "batch")?, size_arg(n_blocks, "n_blocks")?, size_arg(block_size, "block_size")?)?;
        let options = options_arg(options)?;
        let refine = RefineOptions { max_iterations: size_arg(max_iterations, "max_iterations")?, tolerance };
        let plan = MixedPlan::new(dims, options, refine)?;
        out_plan.write_unaligned(Box::into_raw(Box::new(btchol_mixed_plan { plan: Mutex::new(plan) })));
        Ok(())
    })
}

/// Destroys a mixed-precision plan; NULL is a no-op.
///
/// # Safety
/// `plan` is NULL or a live handle, destroyed once.
#[no_mangle]
pub unsafe extern "C" fn btchol_mixed_plan_destroy(plan: *mut btchol_mixed_plan) {
    if !plan.is_null() {
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(Box::from_raw(plan))));
    }
}

/// Copies f64 blocks (sizes and layout as `btchol_plan_upload`) into the plan. Errors as
/// `btchol_plan_upload`, and `BTCHOL_STATUS_INVALID_ARGUMENT` for entries beyond the f32 range.
///
/// # Safety
/// `plan` is NULL or a live handle; `diag`/`sub` NULL or hold B*N*n*n / B*(N-1)*n*n doubles.
#[no_mangle]
pub unsafe extern "C" fn btchol_mixed_plan_upload(
    plan: *mut btchol_mixed_plan,
    diag: *const f64,
    sub: *const f64,
) -> btchol_status {
    guard("btchol_mixed_plan_upload", || {
        with_mixed(plan, |p| {
            let dims = p.dims();
            let d = slice_from::<f64>(diag as *const c_void, dims.diag_len(), "diag")?;
            let e = if dims.sub_len() == 0 {
                &[][..]
            } else {
                slice_from::<f64>(sub as *const c_void, dims.sub_len(), "sub")?
            };
            p.upload(&BlockTridiagRef::new(dims, p.layout(), d, e)?)?;
            Ok(())
        })
    })
}

/// Factors in f32 (in f64 when the f32 factor fails). `BTCHOL_STATUS_NOT_POSITIVE_DEFINITE` is the
/// f64 factor's verdict.
///
/// # Safety
/// `plan` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn btchol_mixed_plan_factor(plan: *mut btchol_mixed_plan) -> btchol_status {
    guard("btchol_mixed_plan_factor", || with_mixed(plan, |p| Ok(p.factor()?)))
}

/// Solves in place to f64 accuracy (shape arguments as `btchol_plan_solve`, f64 elements). Writes
/// the refinement steps taken, the final normwise backward error and whether the f64 fallback
/// solved (1) or not (0) to the optional outputs (each may be NULL).
///
/// # Safety
/// `plan` is NULL or a live handle; `rhs` as for `btchol_plan_solve` with doubles; the outputs
/// are NULL or writable.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn btchol_mixed_plan_solve(
    plan: *mut btchol_mixed_plan,
    rhs: *mut f64,
    nrhs: i64,
    layout: btchol_layout,
    ld: i64,
    item_stride: i64,
    out_iterations: *mut i64,
    out_backward_error: *mut f64,
    out_fell_back: *mut i32,
) -> btchol_status {
    guard("btchol_mixed_plan_solve", || {
        with_mixed(plan, |p| {
            let dims = p.dims();
            let (shape, len) = rhs_shape(dims, nrhs, layout, ld, item_stride)?;
            let data = slice_from_mut::<f64>(rhs as *mut c_void, len, "rhs")?;
            let report = p.solve(&mut RhsMut::new(dims, shape, data)?)?;
            write_opt(out_iterations, report.iterations as i64);
            write_opt(out_backward_error, report.backward_error);
            write_opt(out_fell_back, report.fell_back as i32);
            Ok(())
        })
    })
}
