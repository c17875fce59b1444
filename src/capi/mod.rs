//! The C API: a thin, stable, handle-based boundary over [`crate::Plan`], declared in
//! `include/btchol.h` (generated from this module by the pinned cbindgen in `cbindgen.toml`).
//!
//! Every entry point checks its pointers and sizes, runs inside a panic boundary, converts the C
//! arguments, calls the Rust API and maps its [`crate::Error`] to a fixed `btchol_status` plus a
//! thread-local message. No numerical logic lives here.
//!
//! * `boundary`: the panic boundary and the pointer and size checks;
//! * `errors`: the status codes (fixed numeric values), their mapping from [`crate::Error`] and
//!   `btchol_status_string`;
//! * `last_error`: the thread-local message behind `btchol_last_error_message`;
//! * `memory`: page-locked host memory for fast GPU copies (`btchol_host_alloc`);
//! * `options`: dtype, layout, backend and algorithm codes and the extensible options struct;
//! * `plan`: the opaque plan handle and its methods, one file per operation family;
//! * `version`: version queries and the header's version macros.
//!
//! Conventions: sizes are `int64_t` (negative values are rejected with a message); outputs come
//! last and are written only on success (documented exceptions: the `info` outputs of factor,
//! and the in-place right-hand sides of items that did solve); every pointer is checked; the
//! boundary allocates nothing after `btchol_plan_create` but what `btchol_host_alloc` is asked
//! for (the last-error message lives in a fixed thread-local buffer; `tests/capi_no_alloc.rs`
//! checks it), and a GPU plan's large host copies start short-lived threads unless
//! `BTCHOL_HOST_THREADS=1` (`host_parallel`).

#![allow(non_camel_case_types)]

// The header follows the order of these (alphabetical, as rustfmt keeps them) declarations; the
// names are chosen so that it reads: status codes, error message, host memory, mixed plan,
// options, plan, version.
mod boundary;
pub mod errors;
mod last_error;
pub mod memory;
pub mod mixed;
pub mod options;
pub mod plan;
pub mod version;

pub use errors::*;
pub use last_error::btchol_last_error_message;
pub use memory::*;
pub use mixed::*;
pub use options::*;
pub use plan::*;
pub use version::*;

#[cfg(test)]
mod tests;
