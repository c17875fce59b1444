//! Errors as values: every failure btchol can report, with the detail a user needs to act on it.

use thiserror::Error;

/// Which input array a problem was found in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operand {
    /// The diagonal blocks D_i.
    Diagonal,
    /// The sub-diagonal blocks E_i.
    SubDiagonal,
    /// The right-hand sides.
    RightHandSide,
}

impl std::fmt::Display for Operand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Operand::Diagonal => "diagonal block D",
            Operand::SubDiagonal => "sub-diagonal block E",
            Operand::RightHandSide => "right-hand side",
        })
    }
}

#[derive(Debug, Error, Clone, PartialEq)]
pub enum Error {
    /// A size is zero, too large, or does not fit in memory arithmetic.
    #[error("invalid dimension: {0}")]
    InvalidDimension(String),
    /// A buffer is shorter than the dimensions require, or a leading dimension is too small.
    #[error("buffer too small: {what} needs at least {needed} elements, got {got}")]
    BufferTooSmall { what: &'static str, needed: usize, got: usize },
    /// An argument is out of its documented range.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// A NaN or infinity in the input. Indices are 0-based in the caller's numbering.
    #[error("non-finite value in {operand} of batch item {item}, block {block}, row {row}, column {col}")]
    NonFinite { operand: Operand, item: usize, block: usize, row: usize, col: usize },
    /// The matrix is not positive definite. LAPACK INFO semantics: `block` (0-based, caller's
    /// numbering) is the diagonal block whose pivot failed, `column` (0-based) the column inside it.
    #[error("matrix of batch item {item} is not positive definite: pivot {column} of diagonal block {block} is not positive")]
    NotPositiveDefinite { item: usize, block: usize, column: usize },
    /// A call came in the wrong order (solve before factor, factor twice without upload, ...).
    #[error("invalid state: {0}")]
    InvalidState(String),
    /// The requested backend cannot run here (no GPU, no driver, not compiled in).
    #[error("backend unavailable: {0}")]
    BackendUnavailable(String),
    /// A workspace allocation failed.
    #[error("out of memory: {0}")]
    OutOfMemory(String),
    /// A CUDA driver or NVRTC call failed.
    #[error("CUDA error: {0}")]
    Cuda(String),
    /// A feature that this backend does not provide (yet); the message names the feature and the
    /// backend, e.g. "pivot boosting is not yet available on the CUDA backend".
    #[error("unsupported: {0}")]
    Unsupported(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
