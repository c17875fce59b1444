//! Status codes: the numeric values are part of the ABI and fixed forever. New statuses get new
//! numbers at the end; no value is ever renumbered or reused.

use std::ffi::c_char;

use crate::error::Error;

/// The result of every fallible btchol function: `BTCHOL_STATUS_SUCCESS` (0) or one of the
/// `BTCHOL_STATUS_*` codes below. Call `btchol_last_error_message()` for the detail.
pub type btchol_status = i32;

/// The call succeeded.
pub const BTCHOL_STATUS_SUCCESS: btchol_status = 0;
/// An argument is outside its documented range (an unknown enum value, a leading dimension or
/// item stride that is too small, options not initialised with `btchol_plan_options_init`, a
/// misaligned or overlapping buffer).
pub const BTCHOL_STATUS_INVALID_ARGUMENT: btchol_status = 1;
/// A required pointer argument is NULL.
pub const BTCHOL_STATUS_NULL_POINTER: btchol_status = 2;
/// A size is zero, negative, too large, or makes a buffer size overflow.
pub const BTCHOL_STATUS_INVALID_DIMENSION: btchol_status = 3;
/// A caller buffer is smaller than the plan's dimensions require.
pub const BTCHOL_STATUS_BUFFER_TOO_SMALL: btchol_status = 4;
/// The input holds a NaN or an infinity (the message names the operand, item, block and element).
pub const BTCHOL_STATUS_NON_FINITE_INPUT: btchol_status = 5;
/// A matrix of the batch is not positive definite (the factor's `info` outputs and
/// `btchol_plan_item_status` say which item and which row).
pub const BTCHOL_STATUS_NOT_POSITIVE_DEFINITE: btchol_status = 6;
/// The call came in the wrong order (solve before factor, factor twice without an upload) or
/// the plan is in use by another thread.
pub const BTCHOL_STATUS_INVALID_STATE: btchol_status = 7;
/// The requested backend cannot run here: no CUDA backend in this build or no usable GPU
/// (`BTCHOL_STATUS_NO_CUDA`), or the CPU threads could not be started.
pub const BTCHOL_STATUS_BACKEND_UNAVAILABLE: btchol_status = 8;
/// Another name for `BTCHOL_STATUS_BACKEND_UNAVAILABLE`, returned when CUDA is needed.
pub const BTCHOL_STATUS_NO_CUDA: btchol_status = BTCHOL_STATUS_BACKEND_UNAVAILABLE;
/// A CUDA driver, runtime or NVRTC call failed (the message names the call).
pub const BTCHOL_STATUS_CUDA_ERROR: btchol_status = 9;
/// A workspace allocation failed.
pub const BTCHOL_STATUS_OUT_OF_MEMORY: btchol_status = 10;
/// A bug in btchol (a Rust panic caught at the C boundary). Destroy the plan involved; please
/// report the message.
pub const BTCHOL_STATUS_INTERNAL: btchol_status = 11;
/// The plan's backend does not provide the requested feature (yet): e.g. pivot boosting or batch
/// masks on the CUDA backend. The message names the feature; a CPU plan provides all of them.
pub const BTCHOL_STATUS_UNSUPPORTED: btchol_status = 12;

/// The status a library error maps to. Exhaustive on purpose: a new `Error` variant must be given
/// its status here before the crate compiles.
pub(crate) fn status_of(error: &Error) -> btchol_status {
    match error {
        Error::InvalidDimension(_) => BTCHOL_STATUS_INVALID_DIMENSION,
        Error::BufferTooSmall { .. } => BTCHOL_STATUS_BUFFER_TOO_SMALL,
        Error::InvalidArgument(_) => BTCHOL_STATUS_INVALID_ARGUMENT,
        Error::NonFinite { .. } => BTCHOL_STATUS_NON_FINITE_INPUT,
        Error::NotPositiveDefinite { .. } => BTCHOL_STATUS_NOT_POSITIVE_DEFINITE,
        Error::InvalidState(_) => BTCHOL_STATUS_INVALID_STATE,
        Error::BackendUnavailable(_) => BTCHOL_STATUS_BACKEND_UNAVAILABLE,
        Error::OutOfMemory(_) => BTCHOL_STATUS_OUT_OF_MEMORY,
        Error::Cuda(_) => BTCHOL_STATUS_CUDA_ERROR,
        Error::Unsupported(_) => BTCHOL_STATUS_UNSUPPORTED,
    }
}

/// A short, static, NUL-terminated description of `status`, e.g. "not positive definite";
/// "unknown status" for a value btchol does not define. Never NULL; the string lives as long as
/// the library is loaded. Thread-safe.
#[no_mangle]
pub extern "C" fn btchol_status_string(status: btchol_status) -> *const c_char {
    let s = match status {
        BTCHOL_STATUS_SUCCESS => c"success",
        BTCHOL_STATUS_INVALID_ARGUMENT => c"invalid argument",
        BTCHOL_STATUS_NULL_POINTER => c"null pointer",
        BTCHOL_STATUS_INVALID_DIMENSION => c"invalid dimension",
        BTCHOL_STATUS_BUFFER_TOO_SMALL => c"buffer too small",
        BTCHOL_STATUS_NON_FINITE_INPUT => c"non-finite input",
        BTCHOL_STATUS_NOT_POSITIVE_DEFINITE => c"not positive definite",
        BTCHOL_STATUS_INVALID_STATE => c"invalid state",
        BTCHOL_STATUS_BACKEND_UNAVAILABLE => c"backend unavailable (no CUDA)",
        BTCHOL_STATUS_CUDA_ERROR => c"CUDA error",
        BTCHOL_STATUS_OUT_OF_MEMORY => c"out of memory",
        BTCHOL_STATUS_INTERNAL => c"internal error",
        BTCHOL_STATUS_UNSUPPORTED => c"unsupported on this backend",
        _ => c"unknown status",
    };
    s.as_ptr()
}
