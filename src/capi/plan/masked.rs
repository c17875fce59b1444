//! Batch masks: upload, factor and solve only the items a mask selects.

use std::ffi::c_void;

use super::factor::report_factor;
use super::solve::rhs_shape;
use super::{access, btchol_plan, with_plan};
use crate::capi::boundary::{fail, guard, slice_from, slice_from_mut, CResult};
use crate::capi::errors::*;
use crate::capi::options::btchol_layout;
use crate::model::{BlockTridiagRef, Dims, RhsMut};

/// The caller's mask of B bytes as `&[bool]`, after checking that every byte is 0 or 1 (the only
/// values a `bool` may hold, so the bytes are used in place: the boundary allocates nothing).
///
/// # Safety
/// `mask` is NULL or points to B readable bytes.
unsafe fn mask_arg<'a>(dims: Dims, mask: *const u8) -> CResult<&'a [bool]> {
    let bytes = slice_from::<u8>(mask as *const c_void, dims.batch, "mask")?;
    if let Some(k) = bytes.iter().position(|&m| m > 1) {
        return Err(fail(
            BTCHOL_STATUS_INVALID_ARGUMENT,
            format_args!("mask[{k}] is {}: each entry must be 1 (selected) or 0 (skipped)", bytes[k]),
        ));
    }
    Ok(std::slice::from_raw_parts(bytes.as_ptr() as *const bool, bytes.len()))
}

/// `btchol_plan_upload` for the items `mask` selects: `mask` points to B bytes, 1 = upload item b,
/// 0 = keep what the plan holds for it (its factor, status and boosted-pivot count). Only the
/// selected items of `diag` and `sub` are read (and checked for NaN/Inf); they become "uploaded,
/// not factored". Both backends (on the GPU the kernels skip the other items).
///
/// Errors: as `btchol_plan_upload`, and `BTCHOL_STATUS_INVALID_ARGUMENT` for a mask entry other
/// than 0 or 1.
///
/// # Safety
/// `plan` is NULL or a live handle; `mask` is NULL or points to B bytes; `diag` and `sub` as for
/// `btchol_plan_upload`.
#[no_mangle]
pub unsafe extern "C" fn btchol_plan_upload_masked(
    plan: *mut btchol_plan,
    mask: *const u8,
    diag: *const c_void,
    sub: *const c_void,
) -> btchol_status {
    guard("btchol_plan_upload_masked", || {
        let mut a = access(plan)?;
        let dims = a.plan().dims();
        let mask = mask_arg(dims, mask)?;
        with_plan!(a.plan(), |p: T| {
            let diag = slice_from::<T>(diag, dims.diag_len(), "diag")?;
            let sub = slice_from::<T>(sub, dims.sub_len(), "sub")?;
            p.upload_masked(&BlockTridiagRef::new(dims, p.options().layout, diag, sub)?, mask)?;
            Ok(())
        })
    })
}

/// `btchol_plan_factor` for the items `mask` (B bytes, 1 or 0) selects; each must have been
/// uploaded since its last factorization (else `BTCHOL_STATUS_INVALID_STATE` naming it, and
/// nothing is factored). The other items keep their factor, status and boosted-pivot count. The
/// outputs follow `btchol_plan_factor` and name the first selected item that is not positive
/// definite. Both backends.
///
/// # Safety
/// `plan` is NULL or a live handle; `mask` is NULL or points to B bytes; `failed_item` and `info`
/// are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn btchol_plan_factor_masked(
    plan: *mut btchol_plan,
    mask: *const u8,
    failed_item: *mut i64,
    info: *mut i64,
) -> btchol_status {
    guard("btchol_plan_factor_masked", || {
        let mut a = access(plan)?;
        let dims = a.plan().dims();
        let mask = mask_arg(dims, mask)?;
        let result = with_plan!(a.plan(), |p: T| p.factor_masked(mask));
        report_factor(dims, result, failed_item, info)
    })
}

/// `btchol_plan_solve` for the items `mask` (B bytes, 1 or 0) selects: their right-hand sides are
/// solved in place; those of the other items are neither read nor written. Each selected item must
/// be factored (`BTCHOL_STATUS_INVALID_STATE` naming it otherwise). Both backends.
///
/// # Safety
/// `plan` is NULL or a live handle; `mask` is NULL or points to B bytes; `rhs` as for
/// `btchol_plan_solve`.
#[no_mangle]
pub unsafe extern "C" fn btchol_plan_solve_masked(
    plan: *mut btchol_plan,
    mask: *const u8,
    rhs: *mut c_void,
    nrhs: i64,
    layout: btchol_layout,
    ld: i64,
    item_stride: i64,
) -> btchol_status {
    guard("btchol_plan_solve_masked", || {
        let mut a = access(plan)?;
        let dims = a.plan().dims();
        let mask = mask_arg(dims, mask)?;
        let (shape, len) = rhs_shape(dims, nrhs, layout, ld, item_stride)?;
        with_plan!(a.plan(), |p: T| {
            let data = slice_from_mut::<T>(rhs, len, "rhs")?;
            p.solve_masked(mask, &mut RhsMut::new(dims, shape, data)?)?;
            Ok(())
        })
    })
}
