//! The small value types of the C API: element type, layout, backend and algorithm codes (plain
//! `int32_t` values, checked on entry, so that no out-of-range integer from C ever becomes a Rust
//! enum), and the extensible plan-options struct.

use std::mem::{offset_of, size_of};

use super::boundary::{fail, guard, non_null, CResult};
use super::errors::*;
use crate::model::Layout;
use crate::plan::{Algorithm, Backend, Partition, PlanOptions};
use crate::scalar::DType;

/// Element type of a plan: `BTCHOL_DTYPE_F32` or `BTCHOL_DTYPE_F64`.
pub type btchol_dtype = i32;
/// 32-bit IEEE `float` elements.
pub const BTCHOL_DTYPE_F32: btchol_dtype = 0;
/// 64-bit IEEE `double` elements.
pub const BTCHOL_DTYPE_F64: btchol_dtype = 1;

/// Storage order of each nxn block and of each right-hand-side matrix.
pub type btchol_layout = i32;
/// Element (r, c) at `r*ld + c`: C, C++, NumPy.
pub const BTCHOL_LAYOUT_ROW_MAJOR: btchol_layout = 0;
/// Element (r, c) at `c*ld + r`: Fortran, MATLAB, Julia.
pub const BTCHOL_LAYOUT_COL_MAJOR: btchol_layout = 1;

/// Where the work runs.
pub type btchol_backend = i32;
/// The GPU when one is usable, else the CPU.
pub const BTCHOL_BACKEND_AUTO: btchol_backend = 0;
/// The CPU (threads from the plan's own pool).
pub const BTCHOL_BACKEND_CPU: btchol_backend = 1;
/// An NVIDIA GPU through CUDA; plan creation fails with `BTCHOL_STATUS_NO_CUDA` where none is
/// usable.
pub const BTCHOL_BACKEND_CUDA: btchol_backend = 2;

/// Which factorization runs.
pub type btchol_algorithm = i32;
/// Chosen by the plan's calibrated cost model from (B, N, n, dtype, threads, device);
/// `btchol_plan_algorithm` tells the choice.
pub const BTCHOL_ALGORITHM_AUTO: btchol_algorithm = 0;
/// The sequential block recursion: fewest flops, no parallelism inside one system (on CUDA: one
/// warp per item, n <= 32, for batches of short systems; larger n give
/// `BTCHOL_STATUS_UNSUPPORTED`).
pub const BTCHOL_ALGORITHM_SEQUENTIAL: btchol_algorithm = 1;
/// Nested dissection: floor(log2 N)+1 parallel levels, about 2.7x the flops of the sequential one.
pub const BTCHOL_ALGORITHM_NESTED_DISSECTION: btchol_algorithm = 2;

/// Nested dissection's block ordering (`btchol_plan_options.partition_chunk`): one of the codes
/// below, or k >= 1 for chunks of k blocks.
pub type btchol_partition = i32;
/// The plan's choice (default): on CUDA, chunks for blocks up to 32 from a horizon set by the
/// block size (N >= 128 for n <= 8, 1024 for n <= 16, 1536 for n <= 32; README, "Partitioned
/// nested dissection"); plain nested dissection elsewhere.
pub const BTCHOL_PARTITION_AUTO: btchol_partition = 0;
/// Plain nested dissection: floor(log2 N)+1 levels.
pub const BTCHOL_PARTITION_NONE: btchol_partition = -1;

/// Options fixed at plan creation. Initialise with `btchol_plan_options_init`, then change the
/// fields you need; a NULL options pointer means all defaults.
///
/// ABI: `sizeof(btchol_plan_options)` is fixed for ABI version 0 (SONAME `libbtchol.so.0`). New
/// options take the place of `reserved` words, whose zero value keeps today's behaviour, so a
/// program built against an older header keeps working with a newer library. `struct_size` lets
/// the library check that the struct was initialised and which fields the caller knows: the
/// library reads only the first `struct_size` bytes, and rejects non-zero bytes it does not know.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct btchol_plan_options {
    /// `sizeof(btchol_plan_options)`, set by `btchol_plan_options_init`.
    pub struct_size: usize,
    /// A `BTCHOL_BACKEND_*` value. Default `BTCHOL_BACKEND_AUTO`.
    pub backend: btchol_backend,
    /// A `BTCHOL_ALGORITHM_*` value. Default `BTCHOL_ALGORITHM_AUTO`.
    pub algorithm: btchol_algorithm,
    /// Layout of the D and E blocks passed to `btchol_plan_upload`: a `BTCHOL_LAYOUT_*` value.
    /// Default `BTCHOL_LAYOUT_ROW_MAJOR`.
    pub layout: btchol_layout,
    /// CPU threads of the plan's pool; 0 (the default) means all available cores.
    pub threads: i32,
    /// GPU only: right-hand sides solved per pass (more are solved in chunks); it sizes the
    /// device workspace for right-hand sides. 0 (the default) means 16.
    pub max_nrhs: i64,
    /// Static regularisation: added to every diagonal entry of the D_i as they are uploaded, so
    /// the plan factors Psi + diag_shift*I (the caller's arrays are not modified). Any finite
    /// value; 0.0 (the default) is off. Both backends (CUDA: added on the device, host and
    /// device uploads).
    pub diag_shift: f64,
    /// "Boost small pivots": when `pivot_boost` > 0, a pivot d <= `pivot_threshold` (a diagonal
    /// entry of the Schur complement before its square root) is replaced by `pivot_boost` and
    /// counted (`btchol_plan_boosted_pivots`) instead of failing. Both finite and >= 0; a
    /// non-zero threshold needs a non-zero boost. 0.0 (the default) is off. Both backends.
    pub pivot_threshold: f64,
    /// The value a boosted pivot is replaced by; 0.0 (the default) turns boosting off.
    pub pivot_boost: f64,
    /// Non-zero: bitwise-identical results for identical inputs, options and thread count on the
    /// same machine. Both backends are deterministic today, so this costs nothing; 0 (the
    /// default) makes no promise for future backends.
    pub deterministic: i32,
    /// Nested dissection's ordering: `BTCHOL_PARTITION_AUTO` (0, the default: the plan's choice),
    /// `BTCHOL_PARTITION_NONE` (-1: plain nested dissection), or k >= 1: chunks of k consecutive
    /// blocks eliminated in order, then their separators by nested dissection (fewer bytes moved;
    /// on the GPU one launch for all chunk steps). Ignored by the sequential algorithm. Both
    /// backends.
    pub partition_chunk: btchol_partition,
    /// Must be zero (set by `btchol_plan_options_init`).
    pub reserved: [i64; 1],
}

// The size is part of ABI 0: 8 (struct_size) + 4 x 4 (codes, threads) + 8 (max_nrhs) + 5 x 8
// (diag_shift, pivot_threshold, pivot_boost, deterministic + partition_chunk, which took the place
// of reserved words 0 to 3 of the first release, and reserved).
#[cfg(target_pointer_width = "64")]
const _: () = assert!(size_of::<btchol_plan_options>() == 72);
#[cfg(target_pointer_width = "64")]
const _: () = assert!(offset_of!(btchol_plan_options, diag_shift) == 32);

/// The bytes of the fields every version of the struct has (struct_size up to max_nrhs; the
/// first release had reserved words where the regularisation options are now).
const OPTIONS_MIN_SIZE: usize = offset_of!(btchol_plan_options, diag_shift);
/// Larger `struct_size` values are taken for an uninitialised struct.
const OPTIONS_MAX_SIZE: usize = 4096;

impl Default for btchol_plan_options {
    fn default() -> Self {
        btchol_plan_options {
            struct_size: size_of::<btchol_plan_options>(),
            backend: BTCHOL_BACKEND_AUTO,
            algorithm: BTCHOL_ALGORITHM_AUTO,
            layout: BTCHOL_LAYOUT_ROW_MAJOR,
            threads: 0,
            max_nrhs: 0,
            diag_shift: 0.0,
            pivot_threshold: 0.0,
            pivot_boost: 0.0,
            deterministic: 0,
            partition_chunk: BTCHOL_PARTITION_AUTO,
            reserved: [0; 1],
        }
    }
}

/// Sets every field of `*options` to its default and `options->struct_size` to
/// `sizeof(btchol_plan_options)`. Returns `BTCHOL_STATUS_NULL_POINTER` for NULL. Thread-safe.
///
/// # Safety
/// `options` is NULL or points to a writable `btchol_plan_options`.
#[no_mangle]
pub unsafe extern "C" fn btchol_plan_options_init(options: *mut btchol_plan_options) -> btchol_status {
    guard("btchol_plan_options_init", || {
        non_null(options, "options")?;
        options.write_unaligned(btchol_plan_options::default());
        Ok(())
    })
}

pub(crate) fn dtype_arg(dtype: btchol_dtype) -> CResult<DType> {
    match dtype {
        BTCHOL_DTYPE_F32 => Ok(DType::F32),
        BTCHOL_DTYPE_F64 => Ok(DType::F64),
        _ => Err(fail(
            BTCHOL_STATUS_INVALID_ARGUMENT,
            format_args!("unknown dtype {dtype} (expected BTCHOL_DTYPE_F32 = 0 or BTCHOL_DTYPE_F64 = 1)"),
        )),
    }
}

pub(crate) fn layout_arg(layout: btchol_layout, name: &str) -> CResult<Layout> {
    match layout {
        BTCHOL_LAYOUT_ROW_MAJOR => Ok(Layout::RowMajor),
        BTCHOL_LAYOUT_COL_MAJOR => Ok(Layout::ColMajor),
        _ => Err(fail(
            BTCHOL_STATUS_INVALID_ARGUMENT,
            format_args!(
                "unknown {name} {layout} (expected BTCHOL_LAYOUT_ROW_MAJOR = 0 or BTCHOL_LAYOUT_COL_MAJOR = 1)"
            ),
        )),
    }
}

pub(crate) fn backend_code(backend: Backend) -> btchol_backend {
    match backend {
        Backend::Auto => BTCHOL_BACKEND_AUTO,
        Backend::Cpu => BTCHOL_BACKEND_CPU,
        Backend::Cuda => BTCHOL_BACKEND_CUDA,
    }
}

pub(crate) fn algorithm_code(algorithm: Algorithm) -> btchol_algorithm {
    match algorithm {
        Algorithm::Auto => BTCHOL_ALGORITHM_AUTO,
        Algorithm::Sequential => BTCHOL_ALGORITHM_SEQUENTIAL,
        Algorithm::NestedDissection => BTCHOL_ALGORITHM_NESTED_DISSECTION,
    }
}

/// Reads the caller's options (NULL: defaults), honouring `struct_size`, and converts them.
///
/// # Safety
/// `options` is NULL or points to `options->struct_size` readable bytes.
#[allow(clippy::needless_update)]
pub(crate) unsafe fn options_arg(options: *const btchol_plan_options) -> CResult<PlanOptions> {
    let mut o = btchol_plan_options::default();
    if !options.is_null() {
        let size = std::ptr::addr_of!((*options).struct_size).read_unaligned();
        if !(OPTIONS_MIN_SIZE..=OPTIONS_MAX_SIZE).contains(&size) {
            return Err(fail(
                BTCHOL_STATUS_INVALID_ARGUMENT,
                format_args!(
                    "options->struct_size is {size}, expected sizeof(btchol_plan_options) = {}: \
                     initialise the options with btchol_plan_options_init",
                    size_of::<btchol_plan_options>()
                ),
            ));
        }
        let ours = size_of::<btchol_plan_options>();
        let src = options as *const u8;
        // Bytes past what this library knows come from a newer header: accept them only if zero.
        for k in ours..size {
            if src.add(k).read() != 0 {
                return Err(fail(
                    BTCHOL_STATUS_INVALID_ARGUMENT,
                    format_args!(
                        "options byte {k} is set, but this btchol ({}) knows only {ours} bytes of options",
                        crate::VERSION
                    ),
                ));
            }
        }
        std::ptr::copy_nonoverlapping(src, &mut o as *mut btchol_plan_options as *mut u8, size.min(ours));
    }
    let partition = match o.partition_chunk {
        BTCHOL_PARTITION_AUTO => Partition::Auto,
        BTCHOL_PARTITION_NONE => Partition::None,
        k if k >= 1 => Partition::Chunks(k as usize),
        k => {
            return Err(fail(
                BTCHOL_STATUS_INVALID_ARGUMENT,
                format_args!(
                    "options->partition_chunk is {k}: expected BTCHOL_PARTITION_AUTO = 0, BTCHOL_PARTITION_NONE = -1 \
                     or a chunk length >= 1"
                ),
            ))
        }
    };
    if let Some(k) = o.reserved.iter().position(|&r| r != 0) {
        return Err(fail(
            BTCHOL_STATUS_INVALID_ARGUMENT,
            format_args!(
                "options->reserved[{k}] is {}, but this btchol ({}) defines no option there: it must be 0",
                o.reserved[k],
                crate::VERSION
            ),
        ));
    }
    let backend = match o.backend {
        BTCHOL_BACKEND_AUTO => Backend::Auto,
        BTCHOL_BACKEND_CPU => Backend::Cpu,
        BTCHOL_BACKEND_CUDA => Backend::Cuda,
        b => {
            return Err(fail(
                BTCHOL_STATUS_INVALID_ARGUMENT,
                format_args!("unknown options->backend {b} (expected AUTO = 0, CPU = 1 or CUDA = 2)"),
            ))
        }
    };
    let algorithm = match o.algorithm {
        BTCHOL_ALGORITHM_AUTO => Algorithm::Auto,
        BTCHOL_ALGORITHM_SEQUENTIAL => Algorithm::Sequential,
        BTCHOL_ALGORITHM_NESTED_DISSECTION => Algorithm::NestedDissection,
        a => {
            return Err(fail(
                BTCHOL_STATUS_INVALID_ARGUMENT,
                format_args!(
                    "unknown options->algorithm {a} (expected AUTO = 0, SEQUENTIAL = 1 or NESTED_DISSECTION = 2)"
                ),
            ))
        }
    };
    let layout = layout_arg(o.layout, "options->layout")?;
    if o.threads < 0 {
        return Err(fail(
            BTCHOL_STATUS_INVALID_ARGUMENT,
            format_args!("options->threads must be >= 0 (0 = all cores), got {}", o.threads),
        ));
    }
    let max_nrhs = usize::try_from(o.max_nrhs).map_err(|_| {
        fail(
            BTCHOL_STATUS_INVALID_ARGUMENT,
            format_args!("options->max_nrhs must be >= 0 (0 = 16), got {}", o.max_nrhs),
        )
    })?;
    // Range checks of the numerical options are the plan's (one message for every language).
    // Options the C API does not expose yet keep their Rust defaults.
    Ok(PlanOptions {
        backend,
        algorithm,
        layout,
        threads: o.threads as usize,
        max_nrhs,
        diag_shift: o.diag_shift,
        pivot_threshold: o.pivot_threshold,
        pivot_boost: o.pivot_boost,
        deterministic: o.deterministic != 0,
        partition,
        ..PlanOptions::default()
    })
}
