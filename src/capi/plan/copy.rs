//! Copying a batch of matrices into a plan.

use std::ffi::c_void;

use super::{access, with_plan, AnyPlan};
use crate::capi::boundary::{check_range, fail, guard, non_null, slice_from, CResult};
use crate::capi::errors::*;
use crate::model::BlockTridiagRef;
use crate::scalar::Scalar;

/// Checks that the plan runs on a GPU before a `_device` entry point touches device memory.
pub(crate) fn require_cuda(plan: &AnyPlan, what: &str, hint: &str) -> CResult {
    if !plan.is_cuda() {
        return Err(fail(
            BTCHOL_STATUS_NO_CUDA,
            format_args!(
                "{what} requires a CUDA plan, but this plan runs on the CPU (btchol_cuda_available() = {}){hint}",
                crate::capi::plan::btchol_cuda_available()
            ),
        ));
    }
    Ok(())
}

unsafe fn upload_typed<T: Scalar>(plan: &mut crate::plan::Plan<T>, diag: *const c_void, sub: *const c_void) -> CResult {
    let dims = plan.dims();
    let layout = plan.options().layout;
    let diag = slice_from::<T>(diag, dims.diag_len(), "diag")?;
    let sub = slice_from::<T>(sub, dims.sub_len(), "sub")?;
    plan.upload(&BlockTridiagRef::new(dims, layout, diag, sub)?)?;
    Ok(())
}

unsafe fn upload_device_typed<T: Scalar>(
    plan: &mut crate::plan::Plan<T>,
    diag: *const c_void,
    sub: *const c_void,
) -> CResult {
    let dims = plan.dims();
    check_range::<T>(diag, dims.diag_len(), "diag")?;
    check_range::<T>(sub, dims.sub_len(), "sub")?;
    plan.upload_device(diag as *const T, sub as *const T)?;
    Ok(())
}

/// Copies a batch of matrices from host memory into the plan, after checking every element that
/// is read for NaN/Inf (nothing is copied when one is found). Resets the per-item status to
/// pending.
///
/// `diag` holds B*N*n*n elements of the plan's dtype (`float` or `double`), item-major: block i of
/// item b starts at element (b*N + i)*n*n; only the lower triangle (row >= column) of each D_i is
/// read. `sub` holds B*(N-1)*n*n elements: block i of item b (Psi_{i+1,i} = E_i) at (b*(N-1) + i)*n*n;
/// it may be NULL when N = 1. Inside a block, elements follow the plan's `layout` option. Both
/// must be aligned for the element type. The buffers are not used after the call returns.
///
/// Errors: `BTCHOL_STATUS_NULL_POINTER`, `BTCHOL_STATUS_INVALID_ARGUMENT` (misaligned buffer),
/// `BTCHOL_STATUS_NON_FINITE_INPUT`, `BTCHOL_STATUS_INVALID_STATE` (plan in use by another thread).
///
/// # Safety
/// `plan` is NULL or a live handle; `diag` and `sub` are NULL or point to the element counts above.
#[no_mangle]
pub unsafe extern "C" fn btchol_plan_upload(
    plan: *mut crate::capi::plan::btchol_plan,
    diag: *const c_void,
    sub: *const c_void,
) -> btchol_status {
    guard("btchol_plan_upload", || {
        let mut a = access(plan)?;
        with_plan!(a.plan(), |p: T| upload_typed::<T>(p, diag, sub))
    })
}

/// Like `btchol_plan_upload`, with `diag` and `sub` in the memory of the plan's GPU (device 0),
/// copied in stream order on the plan's stream: the call may return before the copy is done, so
/// keep the buffers unchanged until `btchol_plan_synchronize` or later work on that stream.
/// Elements are checked for NaN/Inf on the device (`BTCHOL_STATUS_NON_FINITE_INPUT`; the call
/// then waits for the check). A CPU plan returns `BTCHOL_STATUS_NO_CUDA`.
///
/// # Safety
/// `plan` is NULL or a live handle; `diag` and `sub` are NULL or device pointers with the element
/// counts of `btchol_plan_upload`.
#[no_mangle]
pub unsafe extern "C" fn btchol_plan_upload_device(
    plan: *mut crate::capi::plan::btchol_plan,
    diag: *const c_void,
    sub: *const c_void,
) -> btchol_status {
    guard("btchol_plan_upload_device", || {
        let mut a = access(plan)?;
        non_null(diag, "diag")?;
        if a.plan().dims().n_blocks > 1 {
            non_null(sub, "sub")?;
        }
        require_cuda(a.plan(), "device memory", "; pass host memory to btchol_plan_upload")?;
        with_plan!(a.plan(), |p: T| upload_device_typed::<T>(p, diag, sub))
    })
}
