//! Host memory for fast GPU copies: `btchol_host_alloc` / `btchol_host_free` over
//! [`crate::HostBuffer`], so that C callers get page-locked memory without linking CUDA.

use std::collections::BTreeMap;
use std::ffi::c_void;
use std::sync::Mutex;

use super::boundary::{fail, guard, non_null, size_arg, write_opt};
use super::errors::*;
use crate::HostBuffer;

/// 64-byte units: every allocation is aligned for any element type and vector width.
#[derive(Clone, Copy, Default)]
#[repr(C, align(64))]
struct Line([u64; 8]);

/// The live allocations by address: `btchol_host_free` frees only what `btchol_host_alloc`
/// returned (anything else is an error, not undefined behaviour).
fn live() -> &'static Mutex<BTreeMap<usize, HostBuffer<Line>>> {
    static LIVE: Mutex<BTreeMap<usize, HostBuffer<Line>>> = Mutex::new(BTreeMap::new());
    &LIVE
}

/// Allocates `bytes` (at least 1) bytes of zeroed host memory, 64-byte aligned, for the blocks a GPU
/// plan copies: page-locked (pinned) where a GPU is present, so that `btchol_plan_upload` (and
/// `btchol_plan_factor_solve`'s blocks) copy at the bus's rate (measured on an H200: 51-54 GB/s,
/// against 35-47 GB/s from large ordinary arrays through btchol's threaded staging and 7-12 GB/s
/// below 4 MB; host right-hand sides are staged in the plan's own page-locked memory either way); ordinary memory elsewhere, so code using it runs everywhere.
/// `*page_locked` (may be NULL) is set to 1 or 0 accordingly. Free with `btchol_host_free`.
/// Allocate once and reuse: page-locked memory cannot be paged out, and the first page-locked
/// allocation of the process opens the GPU (as creating a GPU plan does).
/// Errors: BTCHOL_STATUS_INVALID_DIMENSION (bytes < 1), BTCHOL_STATUS_OUT_OF_MEMORY,
/// BTCHOL_STATUS_CUDA_ERROR. Thread-safe.
///
/// # Safety
/// `out` is writable; `page_locked` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn btchol_host_alloc(bytes: i64, out: *mut *mut c_void, page_locked: *mut i32) -> btchol_status {
    guard("btchol_host_alloc", || {
        non_null(out, "out")?;
        let bytes = size_arg(bytes, "bytes")?;
        if bytes == 0 {
            return Err(fail(BTCHOL_STATUS_INVALID_DIMENSION, format_args!("`bytes` must be at least 1")));
        }
        let mut buffer = HostBuffer::<Line>::zeroed(bytes.div_ceil(std::mem::size_of::<Line>()))?;
        let (ptr, locked) = (buffer.as_mut_ptr() as *mut c_void, buffer.is_page_locked());
        live().lock().unwrap_or_else(|p| p.into_inner()).insert(ptr as usize, buffer);
        out.write_unaligned(ptr);
        write_opt(page_locked, locked as i32);
        Ok(())
    })
}

/// Frees memory from `btchol_host_alloc`. NULL is a no-op; any other pointer that is not a live
/// allocation of `btchol_host_alloc` (freed already, from malloc, inside a block) is rejected
/// with BTCHOL_STATUS_INVALID_ARGUMENT and nothing is freed. Thread-safe.
///
/// # Safety
/// Nothing uses the memory after the call (no plan call is in flight with it).
#[no_mangle]
pub unsafe extern "C" fn btchol_host_free(ptr: *mut c_void) -> btchol_status {
    guard("btchol_host_free", || {
        if ptr.is_null() {
            return Ok(());
        }
        let freed = live().lock().unwrap_or_else(|p| p.into_inner()).remove(&(ptr as usize));
        match freed {
            Some(buffer) => {
                drop(buffer);
                Ok(())
            }
            None => Err(fail(
                BTCHOL_STATUS_INVALID_ARGUMENT,
                format_args!("{ptr:p} is not memory from btchol_host_alloc (or was freed already)"),
            )),
        }
    })
}
