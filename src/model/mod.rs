//! The problem model: what a batch of block-tridiagonal systems is, how its blocks and right-hand
//! sides are laid out in caller memory, and the checks that keep bad input out of the solver.
//!
//! # Element layout
//! A batch holds `batch` independent systems Ψ x = b, each with `n_blocks` (N) diagonal blocks D_i
//! and N−1 sub-diagonal blocks E_i of size n×n, where Ψ_{i+1,i} = E_i and Ψ_{i,i+1} = E_iᵀ.
//!
//! * `diag`: `batch · N` blocks of n·n elements, item-major: block i of item b starts at
//!   `(b·N + i)·n·n`. Only the lower triangle (row ≥ column) of each D_i is read.
//! * `sub`: `batch · (N−1)` blocks, block i of item b at `(b·(N−1) + i)·n·n`.
//! * Inside a block, [`Layout::RowMajor`] puts element (r, c) at `r·n + c` (C, NumPy) and
//!   [`Layout::ColMajor`] at `c·n + r` (Fortran, MATLAB, Julia).
//! * Right-hand sides: each item has an (N·n)×m matrix; see [`RhsMut`].

mod matrix;
mod rhs;

pub use matrix::BlockTridiagRef;
pub use rhs::{RhsMut, RhsRef, RhsShape};

use crate::error::{Error, Result};

/// Storage order of the elements of each n×n block and of each right-hand-side matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Layout {
    /// Element (r, c) at `r·ld + c`: C, C++, NumPy.
    #[default]
    RowMajor,
    /// Element (r, c) at `c·ld + r`: Fortran, MATLAB, Julia.
    ColMajor,
}

impl Layout {
    /// Offset of element (r, c) in a matrix with leading dimension `ld`.
    #[inline(always)]
    pub fn offset(self, r: usize, c: usize, ld: usize) -> usize {
        match self {
            Layout::RowMajor => r * ld + c,
            Layout::ColMajor => c * ld + r,
        }
    }
}

/// Largest supported block size n. Beyond it the O(n³) block work dwarfs everything a
/// block-tridiagonal solver can exploit; use a dense or general sparse solver.
pub const MAX_BLOCK_SIZE: usize = 4096;

/// Largest supported number of blocks N (2^26 ≈ 67 million): failure reports pack the block index
/// in 26 bits.
pub const MAX_BLOCKS: usize = 1 << 26;

/// The sizes of a batch of block-tridiagonal systems.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dims {
    /// B: number of independent systems.
    pub batch: usize,
    /// N: number of diagonal blocks of each system.
    pub n_blocks: usize,
    /// n: size of each square block.
    pub block_size: usize,
}

impl Dims {
    /// Checked constructor: all sizes ≥ 1, n ≤ [`MAX_BLOCK_SIZE`], and every element count of the
    /// problem (including the nested-dissection fill, at most 2·N blocks) fits in `isize`.
    pub fn new(batch: usize, n_blocks: usize, block_size: usize) -> Result<Self> {
        if batch == 0 {
            return Err(Error::InvalidDimension("batch size must be at least 1".into()));
        }
        if n_blocks == 0 {
            return Err(Error::InvalidDimension("number of blocks N must be at least 1".into()));
        }
        if block_size == 0 {
            return Err(Error::InvalidDimension("block size n must be at least 1".into()));
        }
        if n_blocks > MAX_BLOCKS {
            return Err(Error::InvalidDimension(format!(
                "number of blocks N = {n_blocks} exceeds the supported maximum {MAX_BLOCKS}"
            )));
        }
        if block_size > MAX_BLOCK_SIZE {
            return Err(Error::InvalidDimension(format!(
                "block size n = {block_size} exceeds the supported maximum {MAX_BLOCK_SIZE}"
            )));
        }
        // Workspace is at most 3 blocks per node (D, E and one fill block), so bound 4·B·N·n².
        let total = batch
            .checked_mul(n_blocks)
            .and_then(|x| x.checked_mul(block_size))
            .and_then(|x| x.checked_mul(block_size))
            .and_then(|x| x.checked_mul(4))
            .filter(|&x| x <= isize::MAX as usize / 8);
        if total.is_none() {
            return Err(Error::InvalidDimension(format!(
                "batch {batch} × N {n_blocks} × n² ({block_size}²) overflows the addressable size"
            )));
        }
        Ok(Dims { batch, n_blocks, block_size })
    }

    /// Elements in one n×n block.
    pub fn block_len(&self) -> usize {
        self.block_size * self.block_size
    }
    /// Rows of one system: N·n.
    pub fn rows(&self) -> usize {
        self.n_blocks * self.block_size
    }
    /// Elements the caller's `diag` buffer must hold.
    pub fn diag_len(&self) -> usize {
        self.batch * self.n_blocks * self.block_len()
    }
    /// Elements the caller's `sub` buffer must hold.
    pub fn sub_len(&self) -> usize {
        self.batch * (self.n_blocks - 1) * self.block_len()
    }
}
