//! The backward pass of a solve (gradients for learning) and half-precision inputs.

use std::ffi::c_void;

use super::copy::require_cuda;
use super::solve::rhs_shape;
use super::{access, btchol_plan, with_plan};
use crate::capi::boundary::{check_disjoint, check_range, fail, guard, non_null, slice_from, slice_from_mut, CResult};
use crate::capi::errors::*;
use crate::capi::options::btchol_layout;
use crate::model::{RhsMut, RhsRef};
use crate::plan::{HalfFloat, Plan};
use crate::scalar::Scalar;

/// Input formats of 16 bits for `btchol_plan_upload_half` and `btchol_plan_solve_half` (an
/// integer, like the other enumerations, so that a bad value is an error, not undefined behaviour).
pub type btchol_half_format = i32;
/// IEEE 754 binary16.
pub const BTCHOL_HALF_F16: btchol_half_format = 0;
/// bfloat16 (the upper 16 bits of an IEEE binary32).
pub const BTCHOL_HALF_BF16: btchol_half_format = 1;

fn half_arg(format: btchol_half_format) -> CResult<bool> {
    match format {
        0 => Ok(false),
        1 => Ok(true),
        v => Err(fail(BTCHOL_STATUS_INVALID_ARGUMENT, format_args!("unknown half format {v} (0 = F16, 1 = BF16)"))),
    }
}

/// The backward pass of `btchol_plan_solve`, with the existing factor. `x` holds the solution of
/// the forward solve; `grad` holds dL/dx on entry and dL/db on return (both with the shape of
/// `btchol_plan_solve`: nrhs, layout, ld, item_stride). `grad_diag` (B*N*n*n elements) and
/// `grad_sub` (B*(N-1)*n*n) receive the blocks of the symmetric matrix
/// G = -(lambda x^T + x lambda^T)/2, lambda = Psi^-1 dL/dx, summed over right-hand sides, in the
/// plan's block layout (D blocks with both triangles). dL = <G, dPsi> for symmetric perturbations
/// of Psi's pattern: the derivative with respect to an entry E_i(r,c) is 2*G_E(r,c), to a
/// lower-triangle entry D_i(r,c), r > c, 2*G_D(r,c), and to D_i(r,r) G_D(r,r).
///
/// Errors: those of `btchol_plan_solve` (also for `x`), and `BTCHOL_STATUS_INVALID_ARGUMENT` for
/// overlapping buffers. `grad_sub` may be NULL when N = 1. Items whose factor failed
/// are left unchanged and reported with `BTCHOL_STATUS_NOT_POSITIVE_DEFINITE`.
///
/// # Safety
/// `plan` is NULL or a live handle; the buffers are NULL or hold the element counts above in the
/// plan's dtype.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn btchol_plan_gradient(
    plan: *mut btchol_plan,
    x: *const c_void,
    grad: *mut c_void,
    nrhs: i64,
    layout: btchol_layout,
    ld: i64,
    item_stride: i64,
    grad_diag: *mut c_void,
    grad_sub: *mut c_void,
) -> btchol_status {
    guard("btchol_plan_gradient", || {
        let mut a = access(plan)?;
        with_plan!(a.plan(), |p: T| {
            let dims = p.dims();
            let (shape, len) = rhs_shape(dims, nrhs, layout, ld, item_stride)?;
            let xs = slice_from::<T>(x, len, "x")?;
            let g = slice_from_mut::<T>(grad, len, "grad")?;
            let gd = slice_from_mut::<T>(grad_diag, dims.diag_len(), "grad_diag")?;
            // N = 1 has no sub-diagonal blocks: grad_sub may then be NULL.
            let ge: &mut [T] =
                if dims.sub_len() == 0 { &mut [] } else { slice_from_mut::<T>(grad_sub, dims.sub_len(), "grad_sub")? };
            check_disjoint(g, "grad", xs, "x")?;
            check_disjoint(g, "grad", gd, "grad_diag")?;
            check_disjoint(gd, "grad_diag", ge, "grad_sub")?;
            p.gradient(&RhsRef::new(dims, shape, xs)?, &mut RhsMut::new(dims, shape, g)?, gd, ge)?;
            Ok(())
        })
    })
}

/// `btchol_plan_upload` for blocks given as 16-bit floats (`format`: F16 or BF16), with the
/// element counts and layout of `btchol_plan_upload`: widened exactly to the plan's dtype on the
/// host, checked for NaN/Inf, then uploaded.
///
/// # Safety
/// `plan` is NULL or a live handle; `diag` and `sub` are NULL or hold B*N*n*n and B*(N-1)*n*n
/// 16-bit values.
#[no_mangle]
pub unsafe extern "C" fn btchol_plan_upload_half(
    plan: *mut btchol_plan,
    format: btchol_half_format,
    diag: *const u16,
    sub: *const u16,
) -> btchol_status {
    guard("btchol_plan_upload_half", || {
        let mut a = access(plan)?;
        let bf = half_arg(format)?;
        with_plan!(a.plan(), |p: T| {
            // The caller's bits read in place as f16 / bf16 (both `repr(transparent)` over u16).
            unsafe fn upload<H: HalfFloat, T: Scalar>(p: &mut Plan<T>, diag: *const u16, sub: *const u16) -> CResult {
                let dims = p.dims();
                let d = slice_from::<H>(diag as *const c_void, dims.diag_len(), "diag")?;
                // N = 1 has no sub-diagonal blocks: sub may then be NULL.
                let e = if dims.sub_len() == 0 {
                    &[][..]
                } else {
                    slice_from::<H>(sub as *const c_void, dims.sub_len(), "sub")?
                };
                Ok(p.upload_half(d, e)?)
            }
            if bf {
                upload::<half::bf16, T>(p, diag, sub)
            } else {
                upload::<half::f16, T>(p, diag, sub)
            }
        })
    })
}

/// `btchol_plan_solve` for right-hand sides given as 16-bit floats: `rhs` (format F16 or BF16,
/// shape nrhs/layout/ld/item_stride as for `btchol_plan_solve`) is widened exactly and the
/// solution is written to `x` (same shape, the plan's dtype); `rhs` is not modified.
///
/// # Safety
/// `plan` is NULL or a live handle; `rhs` and `x` are NULL or hold the element count of
/// `btchol_plan_solve` (16-bit values and plan-dtype values respectively).
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn btchol_plan_solve_half(
    plan: *mut btchol_plan,
    format: btchol_half_format,
    rhs: *const u16,
    nrhs: i64,
    layout: btchol_layout,
    ld: i64,
    item_stride: i64,
    x: *mut c_void,
) -> btchol_status {
    guard("btchol_plan_solve_half", || {
        let mut a = access(plan)?;
        let bf = half_arg(format)?;
        with_plan!(a.plan(), |p: T| {
            let dims = p.dims();
            let (shape, len) = rhs_shape(dims, nrhs, layout, ld, item_stride)?;
            let out = slice_from_mut::<T>(x, len, "x")?;
            check_disjoint(out, "x", slice_from::<u16>(rhs as *const c_void, len, "rhs")?, "rhs")?;
            if bf {
                p.solve_half(shape, slice_from::<half::bf16>(rhs as *const c_void, len, "rhs")?, out)?
            } else {
                p.solve_half(shape, slice_from::<half::f16>(rhs as *const c_void, len, "rhs")?, out)?
            }
            Ok(())
        })
    })
}

/// `btchol_plan_upload_device` for 16-bit blocks (`format`: F16 or BF16) in the memory of the
/// plan's GPU: widened exactly to the plan's dtype on the device by the conversion kernel (no host
/// round trip), checked for NaN/Inf, diagonal shift applied. Element counts and layout as for
/// `btchol_plan_upload`. A CPU plan returns `BTCHOL_STATUS_NO_CUDA`.
///
/// # Safety
/// `plan` is NULL or a live handle; `diag` and `sub` are NULL or device pointers to B*N*n*n and
/// B*(N-1)*n*n 16-bit values.
#[no_mangle]
pub unsafe extern "C" fn btchol_plan_upload_device_half(
    plan: *mut btchol_plan,
    format: btchol_half_format,
    diag: *const u16,
    sub: *const u16,
) -> btchol_status {
    guard("btchol_plan_upload_device_half", || {
        let mut a = access(plan)?;
        let bf = half_arg(format)?;
        non_null(diag as *const c_void, "diag")?;
        if a.plan().dims().n_blocks > 1 {
            non_null(sub as *const c_void, "sub")?;
        }
        require_cuda(a.plan(), "device memory", "; pass host memory to btchol_plan_upload_half")?;
        with_plan!(a.plan(), |p: T| {
            let dims = p.dims();
            check_range::<u16>(diag as *const c_void, dims.diag_len(), "diag")?;
            check_range::<u16>(sub as *const c_void, dims.sub_len(), "sub")?;
            if bf {
                p.upload_device_half(diag as *const half::bf16, sub as *const half::bf16)?
            } else {
                p.upload_device_half(diag as *const half::f16, sub as *const half::f16)?
            }
            Ok(())
        })
    })
}

/// `btchol_plan_solve_device` for 16-bit right-hand sides in GPU memory: `rhs` (F16 or BF16,
/// shape as for `btchol_plan_solve`) is widened on the device and the solution written to `x`
/// (device memory, same shape, the plan's dtype) on the plan's stream; `rhs` is not modified.
/// Returns when the solve is complete, NaN/Inf checked as by `btchol_plan_solve_device`. A CPU
/// plan returns `BTCHOL_STATUS_NO_CUDA`.
///
/// # Safety
/// `plan` is NULL or a live handle; `rhs` and `x` are NULL or device pointers to the element count
/// of `btchol_plan_solve` (16-bit values and plan-dtype values respectively).
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn btchol_plan_solve_device_half(
    plan: *mut btchol_plan,
    format: btchol_half_format,
    rhs: *const u16,
    nrhs: i64,
    layout: btchol_layout,
    ld: i64,
    item_stride: i64,
    x: *mut c_void,
) -> btchol_status {
    guard("btchol_plan_solve_device_half", || {
        let mut a = access(plan)?;
        let bf = half_arg(format)?;
        non_null(rhs as *const c_void, "rhs")?;
        non_null(x, "x")?;
        let (shape, len) = rhs_shape(a.plan().dims(), nrhs, layout, ld, item_stride)?;
        require_cuda(a.plan(), "device memory", "; pass host memory to btchol_plan_solve_half")?;
        with_plan!(a.plan(), |p: T| {
            check_range::<u16>(rhs as *const c_void, len, "rhs")?;
            check_range::<T>(x, len, "x")?;
            if bf {
                p.solve_device_half(shape, rhs as *const half::bf16, x as *mut T)?
            } else {
                p.solve_device_half(shape, rhs as *const half::f16, x as *mut T)?
            }
            Ok(())
        })
    })
}
