//! Version queries. The header's `BTCHOL_VERSION_*` macros are the version a program was compiled
//! against; `btchol_version*()` the version of the library it runs with.

use std::ffi::c_char;

/// Major version of the header (semantic versioning of the crate).
pub const BTCHOL_VERSION_MAJOR: u32 = 0;
/// Minor version of the header.
pub const BTCHOL_VERSION_MINOR: u32 = 1;
/// Patch version of the header.
pub const BTCHOL_VERSION_PATCH: u32 = 0;
/// The header's version as one number: MAJOR*1000000 + MINOR*1000 + PATCH.
pub const BTCHOL_VERSION_NUMBER: u32 =
    BTCHOL_VERSION_MAJOR * 1_000_000 + BTCHOL_VERSION_MINOR * 1_000 + BTCHOL_VERSION_PATCH;
/// The ABI version: the N of the shared library's SONAME `libbtchol.so.N`. It changes only when an
/// existing function, type or status value changes incompatibly.
pub const BTCHOL_ABI_VERSION: u32 = 0;

const fn parse_u32(s: &str) -> u32 {
    let b = s.as_bytes();
    let mut v = 0;
    let mut i = 0;
    while i < b.len() {
        v = v * 10 + (b[i] - b'0') as u32;
        i += 1;
    }
    v
}

// The header constants must follow Cargo.toml (then regenerate include/btchol.h with cbindgen).
const _: () = assert!(
    parse_u32(env!("CARGO_PKG_VERSION_MAJOR")) == BTCHOL_VERSION_MAJOR
        && parse_u32(env!("CARGO_PKG_VERSION_MINOR")) == BTCHOL_VERSION_MINOR
        && parse_u32(env!("CARGO_PKG_VERSION_PATCH")) == BTCHOL_VERSION_PATCH,
    "BTCHOL_VERSION_* in src/capi/version.rs differ from the version in Cargo.toml"
);

/// The library's version as a static NUL-terminated string, e.g. "0.1.0". Never NULL.
/// Thread-safe.
#[no_mangle]
pub extern "C" fn btchol_version() -> *const c_char {
    const V: &str = concat!(env!("CARGO_PKG_VERSION"), "\0");
    V.as_ptr() as *const c_char
}

/// The library's version as MAJOR*1000000 + MINOR*1000 + PATCH (compare with
/// `BTCHOL_VERSION_NUMBER`). Thread-safe.
#[no_mangle]
pub extern "C" fn btchol_version_number() -> u32 {
    BTCHOL_VERSION_NUMBER
}
