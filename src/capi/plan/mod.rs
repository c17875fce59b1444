//! The plan handle: an opaque pointer to a [`Plan`] of the element type chosen at creation.
//!
//! One file per operation family: creation and queries here, then `copy` (upload), `factor`,
//! `masked` (upload, factor and solve of the items a batch mask selects), `solve` and `stream`
//! (the CUDA-stream entry points).

// The header follows this (alphabetical) order: copy (upload), factor, masked (batch masks),
// solve, stream.
mod copy;
mod factor;
mod gradient;
mod masked;
mod solve;
mod stream;

pub use copy::*;
pub use factor::*;
pub use gradient::*;
pub use masked::*;
pub use solve::*;
pub use stream::*;

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, Ordering};

use super::boundary::{fail, guard, non_null, size_arg, to_i64, CResult};
use super::errors::*;
use super::options::*;
use crate::model::Dims;
use crate::plan::Plan;
use crate::scalar::DType;

/// A plan of either element type.
pub(crate) enum AnyPlan {
    F32(Plan<f32>),
    F64(Plan<f64>),
}

/// Calls `$body` with `$p` bound to the typed plan and `$t` to its element type.
macro_rules! with_plan {
    ($any:expr, |$p:ident: $t:ident| $body:expr) => {
        match $any {
            crate::capi::plan::AnyPlan::F32($p) => {
                #[allow(dead_code)]
                type $t = f32;
                $body
            }
            crate::capi::plan::AnyPlan::F64($p) => {
                #[allow(dead_code)]
                type $t = f64;
                $body
            }
        }
    };
}
pub(crate) use with_plan;

/// An opaque plan: created by `btchol_plan_create` for one shape (B, N, n) and element type, it
/// owns its workspace, allocated once at creation, for upload, factor and solve. Destroy it with
/// `btchol_plan_destroy`.
///
/// Thread-safety: a plan is not thread-safe. One plan must not be used from two threads at once
/// (a call that overlaps another call on the same plan fails with `BTCHOL_STATUS_INVALID_STATE`
/// rather than racing, but destroying a plan while another thread uses it is undefined). A plan
/// may be created on one thread and used on another, and different plans may be used
/// concurrently from different threads.
pub struct btchol_plan {
    /// Set while an entry point works on the plan: turns concurrent use into an error.
    busy: AtomicBool,
    plan: UnsafeCell<AnyPlan>,
}

/// Exclusive access to a plan for the duration of one call.
pub(crate) struct PlanAccess<'a> {
    handle: &'a btchol_plan,
}

impl PlanAccess<'_> {
    pub(crate) fn plan(&mut self) -> &mut AnyPlan {
        // SAFETY: `busy` is held, so this is the only reference to the plan.
        unsafe { &mut *self.handle.plan.get() }
    }
}

impl Drop for PlanAccess<'_> {
    fn drop(&mut self) {
        self.handle.busy.store(false, Ordering::Release);
    }
}

/// Checks the handle and takes exclusive access to it.
///
/// # Safety
/// `plan` is NULL or a live handle from `btchol_plan_create`.
pub(crate) unsafe fn access<'a>(plan: *const btchol_plan) -> CResult<PlanAccess<'a>> {
    non_null(plan, "plan")?;
    let handle = &*plan;
    if handle.busy.compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed).is_err() {
        return Err(fail(
            BTCHOL_STATUS_INVALID_STATE,
            format_args!("the plan is in use by another thread: one plan must not be used from two threads at once"),
        ));
    }
    Ok(PlanAccess { handle })
}

impl AnyPlan {
    pub(crate) fn dims(&self) -> Dims {
        with_plan!(self, |p: T| p.dims())
    }
    pub(crate) fn is_cuda(&self) -> bool {
        with_plan!(self, |p: T| p.backend() == crate::plan::Backend::Cuda)
    }
}

/// Creates a plan for a batch of `batch` systems, each with `n_blocks` (N) diagonal blocks of
/// size `block_size` (n), in element type `dtype` (a `BTCHOL_DTYPE_*`), and allocates all of its
/// workspace. `options` may be NULL for the defaults (automatic backend and algorithm, row-major
/// blocks, all cores). On success `*out_plan` receives the new plan; on failure it is untouched.
///
/// Errors: `BTCHOL_STATUS_NULL_POINTER` (out_plan), `BTCHOL_STATUS_INVALID_DIMENSION` (a size < 1,
/// n > 4096, N > 2^26, or B*N*n^2 beyond the address space), `BTCHOL_STATUS_INVALID_ARGUMENT`
/// (unknown dtype, bad options), `BTCHOL_STATUS_NO_CUDA` (CUDA requested where none is usable),
/// `BTCHOL_STATUS_OUT_OF_MEMORY`. Thread-safe.
///
/// # Safety
/// `options` is NULL or points to an initialised `btchol_plan_options`; `out_plan` points to a
/// writable `btchol_plan*`.
#[no_mangle]
pub unsafe extern "C" fn btchol_plan_create(
    batch: i64,
    n_blocks: i64,
    block_size: i64,
    dtype: btchol_dtype,
    options: *const btchol_plan_options,
    out_plan: *mut *mut btchol_plan,
) -> btchol_status {
    guard("btchol_plan_create", || {
        non_null(out_plan, "out_plan")?;
        let dims =
            Dims::new(size_arg(batch, "batch")?, size_arg(n_blocks, "n_blocks")?, size_arg(block_size, "block_size")?)?;
        let dtype = dtype_arg(dtype)?;
        let options = options_arg(options)?;
        let plan = match dtype {
            DType::F32 => AnyPlan::F32(Plan::new(dims, options)?),
            DType::F64 => AnyPlan::F64(Plan::new(dims, options)?),
        };
        let handle = Box::new(btchol_plan { busy: AtomicBool::new(false), plan: UnsafeCell::new(plan) });
        out_plan.write_unaligned(Box::into_raw(handle));
        Ok(())
    })
}

/// Destroys a plan and frees its workspace. NULL is a no-op. The plan must not be in use by
/// another thread, and must not be used again. (A CUDA plan's device memory is freed; device 0's
/// primary context, which the first CUDA plan retained, stays until the process ends, as the CUDA
/// runtime keeps it, so the next plan need not create it again.)
///
/// # Safety
/// `plan` is NULL or a live handle from `btchol_plan_create`, destroyed only once.
#[no_mangle]
pub unsafe extern "C" fn btchol_plan_destroy(plan: *mut btchol_plan) {
    if plan.is_null() {
        return;
    }
    // A panic while dropping (none is expected) must not cross the boundary; the plan is then leaked.
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(Box::from_raw(plan))));
}

/// Writes the bytes of workspace the plan holds (host and device) to `*out_bytes`.
///
/// # Safety
/// `plan` is NULL or a live handle; `out_bytes` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn btchol_plan_workspace_bytes(plan: *const btchol_plan, out_bytes: *mut i64) -> btchol_status {
    guard("btchol_plan_workspace_bytes", || {
        let mut a = access(plan)?;
        non_null(out_bytes, "out_bytes")?;
        let bytes = with_plan!(a.plan(), |p: T| p.workspace_bytes());
        out_bytes.write_unaligned(to_i64(bytes));
        Ok(())
    })
}

/// Writes the backend the plan runs on (`BTCHOL_BACKEND_CPU` or `BTCHOL_BACKEND_CUDA`, never
/// AUTO) to `*out_backend`.
///
/// # Safety
/// `plan` is NULL or a live handle; `out_backend` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn btchol_plan_backend(
    plan: *const btchol_plan,
    out_backend: *mut btchol_backend,
) -> btchol_status {
    guard("btchol_plan_backend", || {
        let mut a = access(plan)?;
        non_null(out_backend, "out_backend")?;
        let backend = with_plan!(a.plan(), |p: T| p.backend());
        out_backend.write_unaligned(backend_code(backend));
        Ok(())
    })
}

/// Writes the algorithm the plan runs (never AUTO) to `*out_algorithm`.
///
/// # Safety
/// `plan` is NULL or a live handle; `out_algorithm` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn btchol_plan_algorithm(
    plan: *const btchol_plan,
    out_algorithm: *mut btchol_algorithm,
) -> btchol_status {
    guard("btchol_plan_algorithm", || {
        let mut a = access(plan)?;
        non_null(out_algorithm, "out_algorithm")?;
        let algorithm = with_plan!(a.plan(), |p: T| p.algorithm());
        out_algorithm.write_unaligned(algorithm_code(algorithm));
        Ok(())
    })
}
