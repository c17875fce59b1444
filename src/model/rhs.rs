use super::{Dims, Layout};
use crate::error::{Error, Operand, Result};
use crate::host_parallel::{column_runs, shares, Threads};
use crate::scalar::Scalar;

/// Strides of a batch of (N·n)×m right-hand-side matrices.
///
/// Item b's matrix starts at `b · item_stride`; inside it, element (row, col) is at
/// `layout.offset(row, col, ld)`. The defaults (`item_stride = rows·ld` for row-major with
/// `ld = m`, `m·ld` for column-major with `ld = N·n`) describe a dense (B, N·n, m) NumPy array or
/// a dense (N·n, m, B) Julia/MATLAB array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RhsShape {
    pub nrhs: usize,
    pub layout: Layout,
    pub ld: usize,
    pub item_stride: usize,
}

impl RhsShape {
    /// The dense shape for `nrhs` right-hand sides.
    pub fn dense(dims: Dims, nrhs: usize, layout: Layout) -> Self {
        let rows = dims.rows();
        let ld = match layout {
            Layout::RowMajor => nrhs,
            Layout::ColMajor => rows,
        };
        let item_stride = match layout {
            Layout::RowMajor => rows * ld,
            Layout::ColMajor => nrhs * ld,
        };
        RhsShape { nrhs, layout, ld, item_stride }
    }

    /// Checks leading dimension and strides against `dims` and returns the buffer length needed.
    pub fn required_len(&self, dims: Dims) -> Result<usize> {
        let rows = dims.rows();
        if self.nrhs == 0 {
            return Err(Error::InvalidDimension("number of right-hand sides must be at least 1".into()));
        }
        let (min_ld, what) = match self.layout {
            Layout::RowMajor => (self.nrhs, "row-major leading dimension must be ≥ nrhs"),
            Layout::ColMajor => (rows, "column-major leading dimension must be ≥ N·n"),
        };
        if self.ld < min_ld {
            return Err(Error::InvalidArgument(format!("{what} ({min_ld}), got {}", self.ld)));
        }
        // Offset of the last element + 1, in checked arithmetic (ld comes from the caller).
        let (major, minor) = match self.layout {
            Layout::RowMajor => (rows - 1, self.nrhs - 1),
            Layout::ColMajor => (self.nrhs - 1, rows - 1),
        };
        let last = major
            .checked_mul(self.ld)
            .and_then(|x| x.checked_add(minor + 1))
            .ok_or_else(|| Error::InvalidDimension("right-hand side size overflows".into()))?;
        if dims.batch > 1 && self.item_stride < last {
            return Err(Error::InvalidArgument(format!(
                "right-hand-side item stride {} is smaller than one item's extent {last}: items would overlap",
                self.item_stride
            )));
        }
        self.item_stride
            .checked_mul(dims.batch - 1)
            .and_then(|x| x.checked_add(last))
            .ok_or_else(|| Error::InvalidDimension("right-hand side size overflows".into()))
    }

    #[inline(always)]
    pub fn offset(&self, item: usize, row: usize, col: usize) -> usize {
        item * self.item_stride + self.layout.offset(row, col, self.ld)
    }
}

/// A mutable batch of right-hand sides, overwritten by the solution.
#[derive(Debug)]
pub struct RhsMut<'a, T> {
    pub(crate) shape: RhsShape,
    pub(crate) data: &'a mut [T],
}

/// A read-only batch of right-hand sides (or solutions), for residuals.
#[derive(Debug, Clone, Copy)]
pub struct RhsRef<'a, T> {
    pub(crate) shape: RhsShape,
    pub(crate) data: &'a [T],
}

/// The first non-finite element in (item, column, row) order of the `count` items `item_of(k)`.
fn check_finite<T: Scalar>(
    shape: &RhsShape,
    dims: Dims,
    data: &[T],
    count: usize,
    item_of: impl Fn(usize) -> usize + Sync,
    threads: Threads,
) -> Result<()> {
    let (rows, m) = (dims.rows(), shape.nrhs);
    let first = shares(count * m * rows, std::mem::size_of::<T>(), threads, |range| {
        let mut found = None;
        column_runs(range, rows, m, |k, c, rr| {
            if found.is_none() {
                let b = item_of(k);
                found = rr.into_iter().find(|&r| !data[shape.offset(b, r, c)].is_finite()).map(|r| (b, r, c));
            }
        });
        found
    });
    match first {
        Some((b, r, c)) => Err(Error::NonFinite {
            operand: Operand::RightHandSide,
            item: b,
            block: r / dims.block_size,
            row: r % dims.block_size,
            col: c,
        }),
        None => Ok(()),
    }
}

impl<'a, T: Scalar> RhsMut<'a, T> {
    /// Wraps a caller buffer with an explicit shape after checking it fits `dims`.
    pub fn new(dims: Dims, shape: RhsShape, data: &'a mut [T]) -> Result<Self> {
        let need = shape.required_len(dims)?;
        if data.len() < need {
            return Err(Error::BufferTooSmall { what: "right-hand sides", needed: need, got: data.len() });
        }
        Ok(RhsMut { shape, data })
    }
    /// A dense (B, N·n, nrhs) batch in the given layout.
    pub fn dense(dims: Dims, nrhs: usize, layout: Layout, data: &'a mut [T]) -> Result<Self> {
        Self::new(dims, RhsShape::dense(dims, nrhs, layout), data)
    }
    pub fn shape(&self) -> RhsShape {
        self.shape
    }
    pub fn nrhs(&self) -> usize {
        self.shape.nrhs
    }
    pub fn as_ref(&self) -> RhsRef<'_, T> {
        RhsRef { shape: self.shape, data: self.data }
    }
    pub(crate) fn check_finite(&self, dims: Dims, threads: Threads) -> Result<()> {
        check_finite(&self.shape, dims, self.data, dims.batch, |k| k, threads)
    }
    /// [`Self::check_finite`] for the listed items only.
    pub(crate) fn check_finite_items(&self, dims: Dims, items: &[usize], threads: Threads) -> Result<()> {
        check_finite(&self.shape, dims, self.data, items.len(), |k| items[k], threads)
    }
}

impl<'a, T: Scalar> RhsRef<'a, T> {
    pub fn new(dims: Dims, shape: RhsShape, data: &'a [T]) -> Result<Self> {
        let need = shape.required_len(dims)?;
        if data.len() < need {
            return Err(Error::BufferTooSmall { what: "right-hand sides", needed: need, got: data.len() });
        }
        Ok(RhsRef { shape, data })
    }
    pub fn dense(dims: Dims, nrhs: usize, layout: Layout, data: &'a [T]) -> Result<Self> {
        Self::new(dims, RhsShape::dense(dims, nrhs, layout), data)
    }
    pub fn shape(&self) -> RhsShape {
        self.shape
    }
    pub(crate) fn check_finite(&self, dims: Dims, threads: Threads) -> Result<()> {
        check_finite(&self.shape, dims, self.data, dims.batch, |k| k, threads)
    }
    #[inline(always)]
    pub fn get(&self, item: usize, row: usize, col: usize) -> T {
        self.data[self.shape.offset(item, row, col)]
    }
}
