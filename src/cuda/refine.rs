//! The device side of mixed-precision refinement (`MixedPlan` with a GPU f32 plan): the f64
//! matrix, b, x and the residual stay in GPU memory, and each step is four kernels and one
//! read-back of per-column maxima (for the backward error), instead of copying vectors to the
//! host and computing the residual there. Everything runs on one stream of its own, which the f32
//! plan is set to as well, so its solves are ordered with these kernels.

use std::ffi::c_void;
use std::sync::Arc;

use cudarc::driver::{result, CudaFunction, CudaModule};
use cudarc::nvrtc::Ptx;

use super::jit;
use super::runtime::{cuda_err, Device, DeviceBuffer, Stream};
use crate::error::Result;
use crate::model::Dims;

const THREADS: usize = 256;

/// Device buffers and kernels of the refinement loop for one (B, N, n).
pub struct DeviceRefiner {
    dev: Device,
    stream: Stream,
    _module: Arc<CudaModule>,
    residual: CudaFunction,
    round: CudaFunction,
    update: CudaFunction,
    dims: Dims,
    /// D (full symmetric blocks), E row-major, E column-major, f64.
    diag: DeviceBuffer<f64>,
    sub: DeviceBuffer<f64>,
    sub_t: DeviceBuffer<f64>,
    /// Right-hand-side columns the vectors below are sized for.
    capacity: usize,
    b: DeviceBuffer<f64>,
    x: DeviceBuffer<f64>,
    r: DeviceBuffer<f64>,
    d: DeviceBuffer<f32>,
    rmax: DeviceBuffer<u64>,
    xmax: DeviceBuffer<u64>,
    /// Host copy of both maxima (bits), sized with the vectors, so steps do not allocate.
    host_maxima: Vec<u64>,
}

macro_rules! args {
    ($($a:expr),* $(,)?) => { [$(&$a as *const _ as *mut c_void),*] };
}

impl DeviceRefiner {
    pub fn new(dims: Dims) -> Result<Self> {
        let dev = Device::open()?;
        let cubin = jit::load_or_compile_refine(dev.arch)?;
        dev.bind()?;
        let module = dev
            .ctx
            .load_module(Ptx::from_binary((*cubin).clone()))
            .map_err(|e| cuda_err("loading the refinement kernels", e))?;
        let f = |name: &str| module.load_function(name).map_err(|e| cuda_err(name, e));
        let (dl, sl) = (dims.diag_len(), dims.sub_len());
        Ok(DeviceRefiner {
            residual: f("btchol_refine_residual")?,
            round: f("btchol_refine_round")?,
            update: f("btchol_refine_update")?,
            stream: Stream::new_owned(&dev)?,
            diag: DeviceBuffer::zeroed(&dev, dl, "refinement matrix (D)")?,
            sub: DeviceBuffer::zeroed(&dev, sl, "refinement matrix (E)")?,
            sub_t: DeviceBuffer::zeroed(&dev, sl, "refinement matrix (Eᵀ)")?,
            capacity: 0,
            b: DeviceBuffer::zeroed(&dev, 0, "refinement b")?,
            x: DeviceBuffer::zeroed(&dev, 0, "refinement x")?,
            r: DeviceBuffer::zeroed(&dev, 0, "refinement residual")?,
            d: DeviceBuffer::zeroed(&dev, 0, "refinement correction")?,
            rmax: DeviceBuffer::zeroed(&dev, 0, "refinement maxima")?,
            xmax: DeviceBuffer::zeroed(&dev, 0, "refinement maxima")?,
            host_maxima: Vec::new(),
            _module: module,
            dev,
            dims,
        })
    }

    /// The stream every refinement kernel runs on (give it to the f32 plan's `set_stream`).
    pub fn stream_ptr(&self) -> *mut c_void {
        self.stream.raw as *mut c_void
    }

    /// Copies the f64 matrix: D full symmetric row-major blocks, E row-major and column-major.
    pub fn upload_matrix(&mut self, diag: &[f64], sub: &[f64], sub_t: &[f64]) -> Result<()> {
        self.dev.bind()?;
        unsafe {
            result::memcpy_htod_async(self.diag.ptr, diag, self.stream.raw).map_err(|e| cuda_err("copying D", e))?;
            if !sub.is_empty() {
                result::memcpy_htod_async(self.sub.ptr, sub, self.stream.raw).map_err(|e| cuda_err("copying E", e))?;
                result::memcpy_htod_async(self.sub_t.ptr, sub_t, self.stream.raw)
                    .map_err(|e| cuda_err("copying E", e))?;
            }
        }
        self.stream.synchronize()
    }

    /// Starts a solve of `m` dense column-major right-hand sides `b`: x ← 0, r ← b, and the
    /// column maxima of r (read them with [`DeviceRefiner::read_maxima`]).
    pub fn start(&mut self, b: &[f64], m: usize) -> Result<()> {
        self.dev.bind()?;
        let len = self.dims.batch * self.dims.rows() * m;
        if m > self.capacity {
            let dev = &self.dev;
            self.b = DeviceBuffer::zeroed(dev, len, "refinement b")?;
            self.x = DeviceBuffer::zeroed(dev, len, "refinement x")?;
            self.r = DeviceBuffer::zeroed(dev, len, "refinement residual")?;
            self.d = DeviceBuffer::zeroed(dev, len, "refinement correction")?;
            self.rmax = DeviceBuffer::zeroed(dev, self.dims.batch * m, "refinement maxima")?;
            self.xmax = DeviceBuffer::zeroed(dev, self.dims.batch * m, "refinement maxima")?;
            self.host_maxima = vec![0; 2 * self.dims.batch * m];
            self.capacity = m;
        }
        unsafe {
            result::memcpy_htod_async(self.b.ptr, &b[..len], self.stream.raw).map_err(|e| cuda_err("copying b", e))?;
            result::memset_d8_async(self.x.ptr, 0, len * 8, self.stream.raw).map_err(|e| cuda_err("zeroing x", e))?;
        }
        self.residual(m)
    }

    /// The scaled residual in f32, ready for the f32 solve (in place): its device pointer.
    pub fn round(&mut self, m: usize) -> Result<*mut f32> {
        let rows = self.dims.rows() as i64;
        let total = rows * (self.dims.batch * m) as i64;
        let (r, rmax, d) = (self.r.ptr, self.rmax.ptr, self.d.ptr);
        let mut a = args![r, rmax, d, rows, total];
        self.launch(&self.round, total, &mut a)?;
        Ok(self.d.ptr as *mut f32)
    }

    /// x ← x + correction·scale, then the new residual and its column maxima.
    pub fn update(&mut self, m: usize) -> Result<()> {
        let rows = self.dims.rows() as i64;
        let total = rows * (self.dims.batch * m) as i64;
        let (x, d, rmax) = (self.x.ptr, self.d.ptr, self.rmax.ptr);
        let mut a = args![x, d, rmax, rows, total];
        self.launch(&self.update, total, &mut a)?;
        self.residual(m)
    }

    fn residual(&mut self, m: usize) -> Result<()> {
        let d = self.dims;
        let rows = d.rows() as i64;
        let total = rows * (d.batch * m) as i64;
        unsafe {
            result::memset_d8_async(self.rmax.ptr, 0, d.batch * m * 8, self.stream.raw)
                .and_then(|_| result::memset_d8_async(self.xmax.ptr, 0, d.batch * m * 8, self.stream.raw))
                .map_err(|e| cuda_err("zeroing maxima", e))?;
        }
        let (nb, n, mm) = (d.n_blocks as i32, d.block_size as i32, m as i32);
        let (dg, sb, st, x, b, r, rmax, xmax) = (
            self.diag.ptr,
            self.sub.ptr,
            self.sub_t.ptr,
            self.x.ptr,
            self.b.ptr,
            self.r.ptr,
            self.rmax.ptr,
            self.xmax.ptr,
        );
        let mut a = args![dg, sb, st, x, b, r, rmax, xmax, nb, n, mm, total];
        self.launch(&self.residual, total, &mut a)
    }

    /// Per (item, column): max |r| and max |x| of the last residual (one synchronisation).
    pub fn read_maxima(&mut self, m: usize, rmax: &mut [f64], xmax: &mut [f64]) -> Result<()> {
        let k = self.dims.batch * m;
        let bits = &mut self.host_maxima[..2 * k];
        unsafe {
            result::memcpy_dtoh_async(&mut bits[..k], self.rmax.ptr, self.stream.raw)
                .and_then(|_| result::memcpy_dtoh_async(&mut bits[k..], self.xmax.ptr, self.stream.raw))
                .map_err(|e| cuda_err("reading maxima", e))?;
        }
        self.stream.synchronize()?;
        for j in 0..k {
            rmax[j] = f64::from_bits(bits[j]);
            xmax[j] = f64::from_bits(bits[k + j]);
        }
        Ok(())
    }

    /// Copies x (dense column-major, m columns) to the host.
    pub fn read_x(&mut self, m: usize, x: &mut [f64]) -> Result<()> {
        let len = self.dims.batch * self.dims.rows() * m;
        unsafe { result::memcpy_dtoh_async(&mut x[..len], self.x.ptr, self.stream.raw) }
            .map_err(|e| cuda_err("reading x", e))?;
        self.stream.synchronize()
    }

    fn launch(&self, f: &CudaFunction, total: i64, args: &mut [*mut c_void]) -> Result<()> {
        let grid = (total as usize).div_ceil(THREADS);
        if grid == 0 {
            return Ok(());
        }
        unsafe {
            result::launch_kernel(
                f.cu_function(),
                (grid as u32, 1, 1),
                (THREADS as u32, 1, 1),
                0,
                self.stream.raw,
                args,
            )
        }
        .map_err(|e| cuda_err("launching a refinement kernel", e))
    }
}
