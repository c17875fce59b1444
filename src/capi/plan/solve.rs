//! Solving with the factor, in place, for right-hand sides with caller-chosen strides.

use std::ffi::c_void;

use super::copy::require_cuda;
use super::factor::report_factor;
use super::{access, btchol_plan, with_plan};
use crate::capi::boundary::{
    check_disjoint, check_range, fail, guard, non_null, size_arg, slice_from, slice_from_mut, CResult, Failure,
};
use crate::capi::errors::*;
use crate::capi::options::{btchol_layout, layout_arg};
use crate::model::{BlockTridiagRef, Dims, Layout, RhsMut, RhsShape};
use crate::plan::Plan;
use crate::scalar::Scalar;

/// The right-hand-side shape from the C arguments, with 0 meaning the dense default for `ld` and
/// `item_stride`, and the number of elements it spans.
pub(crate) fn rhs_shape(
    dims: Dims,
    nrhs: i64,
    layout: btchol_layout,
    ld: i64,
    item_stride: i64,
) -> CResult<(RhsShape, usize)> {
    let nrhs = size_arg(nrhs, "nrhs")?;
    let layout = layout_arg(layout, "rhs layout")?;
    let ld = match size_arg(ld, "ld")? {
        0 => match layout {
            Layout::RowMajor => nrhs,
            Layout::ColMajor => dims.rows(),
        },
        ld => ld,
    };
    let item_stride = match size_arg(item_stride, "item_stride")? {
        0 => match layout {
            Layout::RowMajor => dims.rows().checked_mul(ld),
            Layout::ColMajor => nrhs.checked_mul(ld),
        }
        .ok_or_else(|| {
            fail(
                BTCHOL_STATUS_INVALID_DIMENSION,
                format_args!("the default item_stride for nrhs = {nrhs} and ld = {ld} overflows (size too large)"),
            )
        })?,
        s => s,
    };
    // The extent in checked arithmetic first: C callers can pass any 64-bit size, and the model's
    // own check computes the last element's offset unchecked.
    if nrhs > 0 {
        let (rows, batch) = (dims.rows(), dims.batch);
        let last = match layout {
            Layout::RowMajor => (rows - 1).checked_mul(ld).and_then(|x| x.checked_add(nrhs)),
            Layout::ColMajor => (nrhs - 1).checked_mul(ld).and_then(|x| x.checked_add(rows)),
        };
        let total = last
            .and_then(|l| item_stride.checked_mul(batch - 1).and_then(|x| x.checked_add(l)))
            .filter(|&t| t <= isize::MAX as usize / 8);
        if total.is_none() {
            return Err(fail(
                BTCHOL_STATUS_INVALID_DIMENSION,
                format_args!(
                    "right-hand sides with nrhs = {nrhs}, ld = {ld}, item_stride = {item_stride} and B = {batch} \
                     would span more elements than memory can hold (size overflows)"
                ),
            ));
        }
    }
    let shape = RhsShape { nrhs, layout, ld, item_stride };
    let len = shape.required_len(dims)?;
    Ok((shape, len))
}

unsafe fn solve_typed<T: Scalar>(
    plan: &mut Plan<T>,
    rhs: *mut c_void,
    nrhs: i64,
    layout: btchol_layout,
    ld: i64,
    item_stride: i64,
) -> CResult {
    let dims = plan.dims();
    let (shape, len) = rhs_shape(dims, nrhs, layout, ld, item_stride)?;
    let data = slice_from_mut::<T>(rhs, len, "rhs")?;
    plan.solve(&mut RhsMut::new(dims, shape, data)?)?;
    Ok(())
}

/// Solves Psi x = b in place for `nrhs` right-hand sides of every item, with the factor of the last
/// `btchol_plan_factor`.
///
/// `rhs` holds elements of the plan's dtype. Item b's (N*n)xnrhs matrix starts at element
/// b*item_stride; inside it, element (row, col) is at row*ld + col (`BTCHOL_LAYOUT_ROW_MAJOR`) or
/// col*ld + row (`BTCHOL_LAYOUT_COL_MAJOR`). `ld` = 0 means the dense default (nrhs for row-major,
/// N*n for column-major); `item_stride` = 0 means (N*n)*ld for row-major and nrhs*ld for
/// column-major, i.e. a dense (B, N*n, nrhs) C array or a dense (N*n, nrhs, B) Fortran array. The
/// buffer spans (B-1)*item_stride + (offset of the last element + 1) elements and must be aligned
/// for the element type.
///
/// Items whose factorization failed are left unchanged and the call returns
/// `BTCHOL_STATUS_NOT_POSITIVE_DEFINITE` (the other items are solved). On any other error nothing
/// is written.
///
/// Errors: `BTCHOL_STATUS_INVALID_STATE` (not factored), `BTCHOL_STATUS_INVALID_DIMENSION` (nrhs < 1,
/// negative or overflowing sizes), `BTCHOL_STATUS_INVALID_ARGUMENT` (ld < nrhs row-major or
/// ld < N*n column-major, overlapping items, misaligned buffer), `BTCHOL_STATUS_NON_FINITE_INPUT`.
///
/// # Safety
/// `plan` is NULL or a live handle; `rhs` is NULL or points to the element count above.
#[no_mangle]
pub unsafe extern "C" fn btchol_plan_solve(
    plan: *mut btchol_plan,
    rhs: *mut c_void,
    nrhs: i64,
    layout: btchol_layout,
    ld: i64,
    item_stride: i64,
) -> btchol_status {
    guard("btchol_plan_solve", || {
        let mut a = access(plan)?;
        with_plan!(a.plan(), |p: T| solve_typed::<T>(p, rhs, nrhs, layout, ld, item_stride))
    })
}

/// Like `btchol_plan_solve`, with `rhs` in the memory of the plan's GPU, solved on the plan's
/// stream. Elements are checked for NaN/Inf on the device and the check is read back once, after
/// the solve, so the call returns when the solve is complete; a non-finite value gives
/// `BTCHOL_STATUS_NON_FINITE_INPUT` and leaves `rhs` unwritten from its pass of `max_nrhs`
/// columns on (earlier passes are solved). A CPU plan returns `BTCHOL_STATUS_NO_CUDA`.
///
/// # Safety
/// `plan` is NULL or a live handle; `rhs` is NULL or a device pointer to the element count of
/// `btchol_plan_solve`.
#[no_mangle]
pub unsafe extern "C" fn btchol_plan_solve_device(
    plan: *mut btchol_plan,
    rhs: *mut c_void,
    nrhs: i64,
    layout: btchol_layout,
    ld: i64,
    item_stride: i64,
) -> btchol_status {
    guard("btchol_plan_solve_device", || {
        let mut a = access(plan)?;
        non_null(rhs, "rhs")?;
        let (shape, len) = rhs_shape(a.plan().dims(), nrhs, layout, ld, item_stride)?;
        require_cuda(a.plan(), "device memory", "; pass host memory to btchol_plan_solve")?;
        with_plan!(a.plan(), |p: T| {
            check_range::<T>(rhs, len, "rhs")?;
            p.solve_device(shape, rhs as *mut T)?;
            Ok(())
        })
    })
}

/// `btchol_plan_factor` and `btchol_plan_solve_device` in one call: the uploaded batch is
/// factored and `rhs` (the memory of the plan's GPU, shape as for `btchol_plan_solve`) solved in
/// place, as one launch sequence with one wait, so the call returns when both are complete. With
/// the sequential algorithm on large f64 batches (more than four items per multiprocessor) the
/// factor does the forward substitution as it goes, and the solve reads the factor once instead
/// of twice. Outputs and errors as for those two:
/// `BTCHOL_STATUS_NOT_POSITIVE_DEFINITE` with `*failed_item` and `*info` as from
/// `btchol_plan_factor` (those items' right-hand sides are left unchanged, the others solved);
/// `BTCHOL_STATUS_NON_FINITE_INPUT` for a NaN/Inf in `rhs`, which then is not written (the
/// factor stands: `btchol_plan_solve_device` may follow with a finite `rhs`);
/// `BTCHOL_STATUS_INVALID_STATE` when the batch was not uploaded since its last factor. A CPU plan
/// returns `BTCHOL_STATUS_NO_CUDA` (use `btchol_plan_factor` and `btchol_plan_solve`).
///
/// # Safety
/// `plan` is NULL or a live handle; `rhs` is NULL or a device pointer to the element count of
/// `btchol_plan_solve`; `failed_item` and `info` are NULL or writable.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn btchol_plan_factor_solve_device(
    plan: *mut btchol_plan,
    rhs: *mut c_void,
    nrhs: i64,
    layout: btchol_layout,
    ld: i64,
    item_stride: i64,
    failed_item: *mut i64,
    info: *mut i64,
) -> btchol_status {
    guard("btchol_plan_factor_solve_device", || {
        let mut a = access(plan)?;
        non_null(rhs, "rhs")?;
        let dims = a.plan().dims();
        let (shape, len) = rhs_shape(dims, nrhs, layout, ld, item_stride)?;
        require_cuda(a.plan(), "device memory", "; use btchol_plan_factor and btchol_plan_solve")?;
        let result = with_plan!(a.plan(), |p: T| {
            check_range::<T>(rhs, len, "rhs")?;
            Ok::<_, Failure>(p.factor_solve_device(shape, rhs as *mut T))
        })?;
        report_factor(dims, result, failed_item, info)
    })
}

#[allow(clippy::too_many_arguments)]
unsafe fn factor_solve_typed<T: Scalar>(
    plan: &mut Plan<T>,
    diag: *const c_void,
    sub: *const c_void,
    rhs: *mut c_void,
    nrhs: i64,
    layout: btchol_layout,
    ld: i64,
    item_stride: i64,
    failed_item: *mut i64,
    info: *mut i64,
) -> CResult {
    let dims = plan.dims();
    let diag = slice_from::<T>(diag, dims.diag_len(), "diag")?;
    let sub = slice_from::<T>(sub, dims.sub_len(), "sub")?;
    let (shape, len) = rhs_shape(dims, nrhs, layout, ld, item_stride)?;
    let data = slice_from_mut::<T>(rhs, len, "rhs")?;
    check_disjoint(data, "rhs", diag, "diag")?;
    check_disjoint(data, "rhs", sub, "sub")?;
    let matrix = BlockTridiagRef::new(dims, plan.options().layout, diag, sub)?;
    let mut rhs = RhsMut::new(dims, shape, data)?;
    let result = plan.factor_solve(&matrix, &mut rhs);
    report_factor(dims, result, failed_item, info)
}

/// `btchol_plan_upload`, `btchol_plan_factor` and `btchol_plan_solve` in one call, with the
/// arguments, outputs and errors of those three. The right-hand sides are checked before anything
/// is uploaded; `rhs` must not overlap `diag` or `sub`.
///
/// # Safety
/// As for the three functions it combines.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn btchol_plan_factor_solve(
    plan: *mut btchol_plan,
    diag: *const c_void,
    sub: *const c_void,
    rhs: *mut c_void,
    nrhs: i64,
    layout: btchol_layout,
    ld: i64,
    item_stride: i64,
    failed_item: *mut i64,
    info: *mut i64,
) -> btchol_status {
    guard("btchol_plan_factor_solve", || {
        let mut a = access(plan)?;
        with_plan!(a.plan(), |p: T| factor_solve_typed::<T>(
            p,
            diag,
            sub,
            rhs,
            nrhs,
            layout,
            ld,
            item_stride,
            failed_item,
            info
        ))
    })
}
