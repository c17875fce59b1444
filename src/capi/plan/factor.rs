//! Factorization, its per-item outcome (LAPACK INFO semantics) and log-determinants.

use super::{access, btchol_plan, with_plan};
use crate::capi::boundary::{guard, slice_from_mut, write_opt, CResult, Failure};
use crate::capi::errors::*;
use crate::error::Error;
use crate::model::Dims;
use crate::plan::ItemStatus;

/// `btchol_plan_item_status` value of an item not factored since the last upload.
pub const BTCHOL_ITEM_PENDING: i64 = -1;

/// LAPACK's INFO for a failed pivot: 1 + the row of Psi (within the item) whose pivot failed.
pub(crate) fn lapack_info(dims: Dims, block: usize, column: usize) -> i64 {
    (block * dims.block_size + column + 1) as i64
}

/// Maps a factor outcome to the status, writing `failed_item` and `info` on success and on
/// "not positive definite".
///
/// # Safety
/// `failed_item` and `info` are NULL or writable.
pub(crate) unsafe fn report_factor(
    dims: Dims,
    result: crate::error::Result<()>,
    failed_item: *mut i64,
    info: *mut i64,
) -> CResult {
    match result {
        Ok(()) => {
            write_opt(failed_item, -1);
            write_opt(info, 0);
            Ok(())
        }
        Err(e @ Error::NotPositiveDefinite { item, block, column }) => {
            let k = lapack_info(dims, block, column);
            write_opt(failed_item, item as i64);
            write_opt(info, k);
            Err(crate::capi::boundary::fail(
                BTCHOL_STATUS_NOT_POSITIVE_DEFINITE,
                format_args!(
                    "{e} (failed_item = {item}, info = {k}: the leading minor of order {k} is not positive definite)"
                ),
            ))
        }
        Err(e) => Err(Failure::from(e)),
    }
}

/// Factors the uploaded batch in place (Psi = L*L^T for every item). Every item is attempted.
///
/// On `BTCHOL_STATUS_SUCCESS`, `*failed_item` = -1 and `*info` = 0. On
/// `BTCHOL_STATUS_NOT_POSITIVE_DEFINITE`, `*failed_item` = the first (0-based) item whose matrix is
/// not positive definite and `*info` = LAPACK's INFO for it: 1 + the row of Psi, counted from 0
/// within the item, whose pivot failed, so that block = (info-1)/n and column = (info-1)%n. With
/// the sequential algorithm this is exactly LAPACK's `?potrf` INFO (the leading minor of order
/// info is not positive definite); nested dissection eliminates blocks in another order, so it
/// names the pivot that failed first in that order. `btchol_plan_item_status` has the outcome of
/// every item. Both outputs are optional (NULL) and are untouched on any other status.
///
/// Errors: `BTCHOL_STATUS_INVALID_STATE` (no upload since the last factor: the factor overwrites
/// the matrix), `BTCHOL_STATUS_NOT_POSITIVE_DEFINITE`.
///
/// # Safety
/// `plan` is NULL or a live handle; `failed_item` and `info` are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn btchol_plan_factor(
    plan: *mut btchol_plan,
    failed_item: *mut i64,
    info: *mut i64,
) -> btchol_status {
    guard("btchol_plan_factor", || {
        let mut a = access(plan)?;
        let dims = a.plan().dims();
        let result = with_plan!(a.plan(), |p: T| p.factor());
        report_factor(dims, result, failed_item, info)
    })
}

/// Writes the outcome of the last factorization of each item to `out_info[0 .. B)`: 0 when the
/// item was factored, k > 0 (LAPACK INFO, as `btchol_plan_factor`'s `info`) when its pivot at row
/// k-1 was not positive, `BTCHOL_ITEM_PENDING` (-1) when it was not factored since the last
/// upload.
///
/// # Safety
/// `plan` is NULL or a live handle; `out_info` is NULL or points to B writable `int64_t`.
#[no_mangle]
pub unsafe extern "C" fn btchol_plan_item_status(plan: *const btchol_plan, out_info: *mut i64) -> btchol_status {
    guard("btchol_plan_item_status", || {
        let mut a = access(plan)?;
        let dims = a.plan().dims();
        let out = slice_from_mut::<i64>(out_info as *mut _, dims.batch, "out_info")?;
        let status = with_plan!(a.plan(), |p: T| p.item_status());
        for (o, s) in out.iter_mut().zip(status) {
            *o = match *s {
                ItemStatus::Pending => BTCHOL_ITEM_PENDING,
                ItemStatus::Factored => 0,
                ItemStatus::NotPositiveDefinite { block, column } => lapack_info(dims, block, column),
            };
        }
        Ok(())
    })
}

/// Writes the number of pivots the last factorization of each item boosted (see
/// `btchol_plan_options.pivot_boost`) to `out_counts[0 .. B)`: 0 for every item when boosting is
/// off or before the first factor; for an item that failed, the pivots boosted before the failure.
///
/// # Safety
/// `plan` is NULL or a live handle; `out_counts` is NULL or points to B writable `int64_t`.
#[no_mangle]
pub unsafe extern "C" fn btchol_plan_boosted_pivots(plan: *const btchol_plan, out_counts: *mut i64) -> btchol_status {
    guard("btchol_plan_boosted_pivots", || {
        let mut a = access(plan)?;
        let dims = a.plan().dims();
        let out = slice_from_mut::<i64>(out_counts as *mut _, dims.batch, "out_counts")?;
        let counts = with_plan!(a.plan(), |p: T| p.boosted_pivots());
        for (o, &c) in out.iter_mut().zip(counts) {
            *o = i64::from(c);
        }
        Ok(())
    })
}

/// Writes log det Psi of each item, from the factor, to `out_logdet[0 .. B)` (always `double`,
/// whatever the plan's dtype); NaN for items whose factorization failed.
///
/// Errors: `BTCHOL_STATUS_INVALID_STATE` (not factored).
///
/// # Safety
/// `plan` is NULL or a live handle; `out_logdet` is NULL or points to B writable `double`.
#[no_mangle]
pub unsafe extern "C" fn btchol_plan_logdet(plan: *mut btchol_plan, out_logdet: *mut f64) -> btchol_status {
    guard("btchol_plan_logdet", || {
        let mut a = access(plan)?;
        let dims = a.plan().dims();
        let out = slice_from_mut::<f64>(out_logdet as *mut _, dims.batch, "out_logdet")?;
        with_plan!(a.plan(), |p: T| p.logdet(out))?;
        Ok(())
    })
}
