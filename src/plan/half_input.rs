//! Half-precision inputs: blocks and right-hand sides given as IEEE f16 or bfloat16 (the `half`
//! crate's types; PyTorch users often hold such tensors) are widened to the plan's working
//! precision exactly (every f16 and bf16 value is an f32 and an f64 value), so a half-precision
//! problem is factored and solved in f32 or f64. Host data is widened on the host as it is read;
//! data already in GPU memory is widened on the device by the upload and solve kernels (no host
//! round trip, no extra device copy).

use super::{Engine, ItemStatus, Plan, State};
use crate::cuda::SourceFormat;
use crate::error::{Error, Result};
use crate::model::{BlockTridiagRef, RhsMut, RhsShape};
use crate::scalar::Scalar;

/// A 16-bit input format: f16 or bf16.
pub trait HalfFloat: Copy + Send + Sync + 'static {
    /// The format's name in messages.
    const NAME: &'static str;
    /// How the device kernels read it.
    #[doc(hidden)]
    const DEVICE_FORMAT: SourceFormat;
    fn widen(self) -> f64;
}

impl HalfFloat for half::f16 {
    const NAME: &'static str = "f16";
    const DEVICE_FORMAT: SourceFormat = SourceFormat::F16;
    fn widen(self) -> f64 {
        self.to_f64()
    }
}

impl HalfFloat for half::bf16 {
    const NAME: &'static str = "bf16";
    const DEVICE_FORMAT: SourceFormat = SourceFormat::Bf16;
    fn widen(self) -> f64 {
        self.to_f64()
    }
}

fn widen_into<H: HalfFloat, T: Scalar>(src: &[H], what: &'static str, needed: usize) -> Result<Vec<T>> {
    if src.len() < needed {
        return Err(Error::BufferTooSmall { what, needed, got: src.len() });
    }
    let mut v = Vec::new();
    v.try_reserve_exact(needed).map_err(|_| {
        Error::OutOfMemory(format!("{} bytes to widen the {} {what}", needed * std::mem::size_of::<T>(), H::NAME))
    })?;
    v.extend(src[..needed].iter().map(|h| T::from_f64(h.widen())));
    Ok(v)
}

impl<T: Scalar> Plan<T> {
    /// [`Plan::upload`] for blocks given in f16 or bf16 (same element layout and sizes): widened
    /// exactly to the plan's precision, checked for NaN/Inf, then uploaded. The widened copy is
    /// temporary host memory of the plan's precision.
    pub fn upload_half<H: HalfFloat>(&mut self, diag: &[H], sub: &[H]) -> Result<()> {
        let dims = self.dims;
        let d = widen_into::<H, T>(diag, "diagonal blocks", dims.diag_len())?;
        let e = widen_into::<H, T>(sub, "sub-diagonal blocks", dims.sub_len())?;
        self.upload(&BlockTridiagRef::new(dims, self.options.layout, &d, &e)?)
    }

    /// [`Plan::solve`] for right-hand sides given in f16 or bf16: `b` (shape `shape`) is widened
    /// exactly into `x` (same shape, the plan's precision: a solution rounded back to 16 bits would
    /// lose most of the factor's accuracy), which is then solved in place.
    pub fn solve_half<H: HalfFloat>(&mut self, shape: RhsShape, b: &[H], x: &mut [T]) -> Result<()> {
        let dims = self.dims;
        let len = shape.required_len(dims)?;
        if b.len() < len {
            return Err(Error::BufferTooSmall { what: "right-hand sides", needed: len, got: b.len() });
        }
        let mut out = RhsMut::new(dims, shape, x)?;
        // Only the elements the shape addresses (strided layouts leave gaps untouched).
        for item in 0..dims.batch {
            for row in 0..dims.rows() {
                for col in 0..shape.nrhs {
                    let k = shape.offset(item, row, col);
                    out.data[k] = T::from_f64(b[k].widen());
                }
            }
        }
        self.solve(&mut out)
    }

    /// [`Plan::upload_device`] for f16 / bf16 blocks already in GPU memory (the plan's layout,
    /// B·N and B·(N−1) blocks of n·n elements): widened on the device, checked for NaN/Inf
    /// (including values that are infinite in 16 bits), diagonal shift applied. GPU plans only.
    ///
    /// # Safety
    /// Both pointers must be device memory of the current device holding those extents.
    pub unsafe fn upload_device_half<H: HalfFloat>(&mut self, diag: *const H, sub: *const H) -> Result<()> {
        self.state = State::Empty;
        self.status.fill(ItemStatus::Pending);
        self.fresh.fill(false);
        match &mut self.engine {
            Engine::Cpu(_) => return Err(Self::no_cuda()),
            Engine::Cuda(e) => e.upload_device(self.options.layout, H::DEVICE_FORMAT, diag as u64, sub as u64, None)?,
        }
        self.state = State::Uploaded;
        self.fresh.fill(true);
        Ok(())
    }

    /// [`Plan::solve_device`] for f16 / bf16 right-hand sides in GPU memory: `b` (shape `shape`)
    /// is widened on the device, solved, and the solution written to `x` (same shape, the plan's
    /// precision; `b` is not modified), on the plan's stream; returns when the solve is complete,
    /// as [`Plan::solve_device`] (its NaN/Inf check and error behaviour too). GPU plans only.
    ///
    /// # Safety
    /// `b` and `x` must be device memory of the current device holding `shape.required_len(dims)`
    /// elements each.
    pub unsafe fn solve_device_half<H: HalfFloat>(&mut self, shape: RhsShape, b: *const H, x: *mut T) -> Result<()> {
        if self.state != State::Factored {
            return Err(Error::InvalidState("solve called before factor".into()));
        }
        shape.required_len(self.dims)?;
        match &mut self.engine {
            Engine::Cpu(_) => return Err(Self::no_cuda()),
            Engine::Cuda(e) => e.solve_device(shape, H::DEVICE_FORMAT, b as u64, x as u64)?,
        }
        self.first_failure()
    }
}
