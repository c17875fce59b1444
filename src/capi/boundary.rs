//! The panic boundary and the argument checks every entry point shares: pointers (NULL,
//! alignment, address-space wrap), sizes (negative, overflowing), and the conversion of library
//! errors into a status plus the thread-local message.

use std::any::Any;
use std::ffi::c_void;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};

use super::errors::*;
use super::last_error;
use crate::error::Error;

/// A failed call whose message is already recorded: only the status travels up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Failure(pub(crate) btchol_status);

pub(crate) type CResult<T = ()> = Result<T, Failure>;

/// Records `message` and returns the failure carrying `status`.
pub(crate) fn fail(status: btchol_status, message: fmt::Arguments<'_>) -> Failure {
    last_error::record(message);
    Failure(status)
}

impl From<Error> for Failure {
    fn from(error: Error) -> Self {
        fail(status_of(&error), format_args!("{error}"))
    }
}

fn panic_text(payload: &(dyn Any + Send)) -> &str {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s
    } else {
        "(non-string panic payload)"
    }
}

/// Runs the body of entry point `name`: clears the last-error message, catches any panic (which
/// would otherwise abort the caller's process at the `extern "C"` boundary) and turns the outcome
/// into a status.
pub(crate) fn guard(name: &'static str, body: impl FnOnce() -> CResult) -> btchol_status {
    last_error::begin(name);
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => BTCHOL_STATUS_SUCCESS,
        Ok(Err(Failure(status))) => status,
        Err(payload) => {
            let text = panic_text(payload.as_ref());
            fail(
                BTCHOL_STATUS_INTERNAL,
                format_args!(
                    "internal error (panic: {text}); this is a bug in btchol, please report it. \
                     Destroy the plan involved: its state is unknown"
                ),
            )
            .0
        }
    }
}

/// Fails with `BTCHOL_STATUS_NULL_POINTER` when `ptr` is NULL.
pub(crate) fn non_null<T>(ptr: *const T, name: &str) -> CResult {
    if ptr.is_null() {
        Err(fail(BTCHOL_STATUS_NULL_POINTER, format_args!("argument `{name}` is NULL")))
    } else {
        Ok(())
    }
}

/// A size argument as `usize`: rejects negative values and values beyond the address space.
pub(crate) fn size_arg(value: i64, name: &str) -> CResult<usize> {
    if value < 0 {
        return Err(fail(BTCHOL_STATUS_INVALID_DIMENSION, format_args!("`{name}` must not be negative, got {value}")));
    }
    usize::try_from(value).map_err(|_| {
        fail(BTCHOL_STATUS_INVALID_DIMENSION, format_args!("`{name}` = {value} does not fit in this platform's size_t"))
    })
}

/// A `usize` count as the `int64_t` the C API reports.
pub(crate) fn to_i64(value: usize) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// Checks that `len` elements of `T` starting at `ptr` form a valid slice address range: `ptr`
/// non-NULL (unless `len` is 0), aligned for `T`, the byte size within `isize::MAX`, and the
/// range not wrapping around the address space.
pub(crate) fn check_range<T>(ptr: *const c_void, len: usize, name: &str) -> CResult {
    if len == 0 {
        return Ok(());
    }
    non_null(ptr, name)?;
    let align = std::mem::align_of::<T>();
    if (ptr as usize) % align != 0 {
        return Err(fail(
            BTCHOL_STATUS_INVALID_ARGUMENT,
            format_args!("`{name}` = {ptr:p} is not aligned to {align} bytes as its element type requires"),
        ));
    }
    let bytes = len
        .checked_mul(std::mem::size_of::<T>())
        .filter(|&b| b <= isize::MAX as usize)
        .filter(|&b| (ptr as usize).checked_add(b).is_some());
    if bytes.is_none() {
        return Err(fail(
            BTCHOL_STATUS_INVALID_DIMENSION,
            format_args!("`{name}` would span {len} elements, more than the address space holds"),
        ));
    }
    Ok(())
}

/// The caller's read-only buffer as a slice, after [`check_range`].
///
/// # Safety
/// The caller of the C function promises that `ptr` points to `len` readable elements of `T`
/// that nothing writes to during the call.
pub(crate) unsafe fn slice_from<'a, T>(ptr: *const c_void, len: usize, name: &str) -> CResult<&'a [T]> {
    check_range::<T>(ptr, len, name)?;
    if len == 0 {
        return Ok(&[]);
    }
    Ok(std::slice::from_raw_parts(ptr as *const T, len))
}

/// The caller's read-write buffer as a slice, after [`check_range`].
///
/// # Safety
/// The caller of the C function promises that `ptr` points to `len` writable elements of `T`
/// that nothing else accesses during the call.
pub(crate) unsafe fn slice_from_mut<'a, T>(ptr: *mut c_void, len: usize, name: &str) -> CResult<&'a mut [T]> {
    check_range::<T>(ptr, len, name)?;
    if len == 0 {
        return Ok(&mut []);
    }
    Ok(std::slice::from_raw_parts_mut(ptr as *mut T, len))
}

/// Fails when the byte ranges of two buffers overlap (a read-only and a written buffer must not
/// alias: the solver would read what it already overwrote).
pub(crate) fn check_disjoint<A, B>(a: &[A], a_name: &str, b: &[B], b_name: &str) -> CResult {
    let (a0, a1) = (a.as_ptr() as usize, a.as_ptr() as usize + std::mem::size_of_val(a));
    let (b0, b1) = (b.as_ptr() as usize, b.as_ptr() as usize + std::mem::size_of_val(b));
    if a0 < b1 && b0 < a1 {
        return Err(fail(BTCHOL_STATUS_INVALID_ARGUMENT, format_args!("buffers `{a_name}` and `{b_name}` overlap")));
    }
    Ok(())
}

/// Writes `value` through an optional output pointer (NULL means "not wanted").
///
/// # Safety
/// `ptr` is NULL or valid for one write of `T`.
pub(crate) unsafe fn write_opt<T>(ptr: *mut T, value: T) {
    if !ptr.is_null() {
        ptr.write_unaligned(value);
    }
}
