//! CUDA streams and availability. On a CPU plan every call is synchronous, so these are trivial.

use std::ffi::c_void;
use std::sync::OnceLock;

use super::copy::require_cuda;
use super::{access, btchol_plan, with_plan};
use crate::capi::boundary::guard;
use crate::capi::errors::*;

/// Sets the CUDA stream (a `cudaStream_t` / `CUstream` of device 0's primary context, owned by
/// the caller, who keeps it alive until the plan is destroyed or another stream is set) on which
/// the plan's GPU work runs; NULL selects the legacy default stream. Until a stream is set, a
/// CUDA plan runs on a non-blocking stream of its own, which is not ordered after other work of
/// the caller's (the legacy default stream included): set the stream that produces device inputs,
/// or synchronize it before passing them. A CPU plan accepts NULL (there is nothing to order) and
/// returns `BTCHOL_STATUS_NO_CUDA` for any other stream.
///
/// # Safety
/// `plan` is NULL or a live handle; `stream` is NULL or a live CUDA stream of the plan's context.
#[no_mangle]
pub unsafe extern "C" fn btchol_plan_set_stream(plan: *mut btchol_plan, stream: *mut c_void) -> btchol_status {
    guard("btchol_plan_set_stream", || {
        let mut a = access(plan)?;
        if stream.is_null() && !a.plan().is_cuda() {
            return Ok(());
        }
        require_cuda(a.plan(), "a non-NULL CUDA stream", "; pass NULL or create the plan with BTCHOL_BACKEND_CUDA")?;
        with_plan!(a.plan(), |p: T| p.set_stream(stream))?;
        Ok(())
    })
}

/// Waits until all work the plan queued on its stream has finished (CPU plans finish every call
/// before returning, so this returns `BTCHOL_STATUS_SUCCESS` at once). GPU errors raised by
/// earlier asynchronous work are reported here as `BTCHOL_STATUS_CUDA_ERROR`.
///
/// # Safety
/// `plan` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn btchol_plan_synchronize(plan: *mut btchol_plan) -> btchol_status {
    guard("btchol_plan_synchronize", || {
        let mut a = access(plan)?;
        with_plan!(a.plan(), |p: T| p.synchronize())?;
        Ok(())
    })
}

/// 1 when the NVIDIA driver can be loaded and reports a device (so `BTCHOL_BACKEND_CUDA` plans can
/// be created), else 0. Checked once per process, on the first call, without keeping a CUDA
/// context (a GPU plan keeps device 0's primary context until the process ends). Never fails;
/// thread-safe.
#[no_mangle]
pub extern "C" fn btchol_cuda_available() -> i32 {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    let available = AVAILABLE.get_or_init(|| std::panic::catch_unwind(crate::cuda::cuda_available).unwrap_or(false));
    i32::from(*available)
}
