//! CUDA driver access: loaded at run time, primary context of device 0, raw device buffers.

use std::ffi::c_void;
use std::sync::{Arc, Mutex};

use cudarc::driver::{result, sys, CudaContext, CudaFunction, DriverError};

use crate::error::{Error, Result};

pub(crate) fn cuda_err(what: &str, e: DriverError) -> Error {
    Error::Cuda(format!("{what}: {e:?}"))
}

/// Runs `f`, turning a panic inside cudarc (it panics when a library is missing) into an error.
fn guarded<R>(what: &str, f: impl FnOnce() -> Result<R>) -> Result<R> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
        .unwrap_or_else(|_| Err(Error::BackendUnavailable(format!("{what}: the CUDA library could not be used"))))
}

/// Whether the NVIDIA driver library can be loaded and device 0 opened. Asking does not keep a
/// context (a CPU-only caller should not hold GPU memory for it): it uses the device kept by a
/// GPU plan where there is one, else opens device 0 and releases it again.
pub fn cuda_available() -> bool {
    Device::probe().is_ok()
}

/// A GPU: the primary context of device 0 and what the planner needs to know about it.
#[derive(Clone)]
pub struct Device {
    pub(crate) ctx: Arc<CudaContext>,
    pub name: String,
    /// Compute capability (major, minor).
    pub arch: (i32, i32),
    /// Largest dynamic shared memory a CTA may opt in to.
    pub smem_optin: usize,
    /// Streaming multiprocessors.
    pub sm_count: usize,
}

impl Device {
    /// Opens device 0 (`CUDA_VISIBLE_DEVICES` selects which one that is). The first successful
    /// open is kept for the life of the process, as the CUDA runtime keeps its primary context:
    /// without it the context was released with the last plan and the next plan created it again
    /// (H200, f64 n = 32, N = 1024: create + destroy 132 + 77 ms a plan, 8.5 + 2.3 ms kept;
    /// bench/results/experiments/plan-create-time.py). A failed open is not kept, so a later
    /// call tries again.
    pub fn open() -> Result<Device> {
        let mut opened = Self::kept().lock().unwrap_or_else(|p| p.into_inner());
        if let Some(dev) = opened.as_ref() {
            return Ok(dev.clone());
        }
        let dev = Self::open_uncached()?;
        *opened = Some(dev.clone());
        Ok(dev)
    }

    /// The device kept by [`Device::open`], else device 0 opened and released when the result is
    /// dropped (about 0.2 s on an H200): to ask what the GPU is without holding its context.
    pub fn probe() -> Result<Device> {
        let opened = Self::kept().lock().unwrap_or_else(|p| p.into_inner()).clone();
        opened.map_or_else(Self::open_uncached, Ok)
    }

    fn kept() -> &'static Mutex<Option<Device>> {
        static KEPT: Mutex<Option<Device>> = Mutex::new(None);
        &KEPT
    }

    fn open_uncached() -> Result<Device> {
        guarded("opening the CUDA driver", || {
            if !unsafe { sys::is_culib_present() } {
                return Err(Error::BackendUnavailable("no NVIDIA driver library (libcuda.so) found".into()));
            }
            let count = CudaContext::device_count()
                .map_err(|e| Error::BackendUnavailable(format!("the CUDA driver reports no usable device: {e:?}")))?;
            if count < 1 {
                return Err(Error::BackendUnavailable("no CUDA device present".into()));
            }
            let ctx = CudaContext::new(0).map_err(|e| cuda_err("creating the primary context of device 0", e))?;
            let name = ctx.name().map_err(|e| cuda_err("device name", e))?;
            let arch = ctx.compute_capability().map_err(|e| cuda_err("compute capability", e))?;
            let smem_optin = ctx
                .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
                .map_err(|e| cuda_err("shared memory size", e))? as usize;
            let sm_count = ctx
                .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
                .map_err(|e| cuda_err("multiprocessor count", e))? as usize;
            Ok(Device { ctx, name, arch, smem_optin, sm_count })
        })
    }

    /// Makes the context current on the calling thread (plans may move between threads).
    pub(crate) fn bind(&self) -> Result<()> {
        self.ctx.bind_to_thread().map_err(|e| cuda_err("binding the CUDA context", e))
    }
}

/// Waits until the device has done what was queued on the legacy default stream. The driver's
/// "synchronous" memset and pageable host-to-device copy (`cuMemsetD8`, `cuMemcpyHtoD`) run there
/// and may return before the device has done them (CUDA's API synchronization notes), and the
/// plans' non-blocking streams are not ordered after that stream: without this wait a plan's
/// first kernels could run before its buffers were zeroed or its tables copied. A single process
/// almost never sees it; six processes sharing an H100 (time-sliced contexts) saw it in ~20 % of
/// plans (2026-11-26: zeroed failure keys read as "not positive definite at block 0, column 0"
/// and "non-finite value at block 0, row 0, column 0").
pub fn sync_legacy_stream(what: &str) -> Result<()> {
    unsafe { result::stream::synchronize(result::stream::null()) }.map_err(|e| cuda_err(what, e))
}

/// Device memory owned by a plan, freed on drop.
pub struct DeviceBuffer<T> {
    pub(crate) ptr: sys::CUdeviceptr,
    len: usize,
    ctx: Arc<CudaContext>,
    _t: std::marker::PhantomData<T>,
}

impl<T> DeviceBuffer<T> {
    /// Allocates `len` elements (at least one byte, so the pointer is valid), uninitialised.
    fn alloc(dev: &Device, len: usize, what: &str) -> Result<Self> {
        dev.bind()?;
        let bytes = len.checked_mul(std::mem::size_of::<T>()).ok_or_else(|| Error::OutOfMemory(what.into()))?.max(1);
        let ptr = unsafe { result::malloc_sync(bytes) }.map_err(|e| match e.0 {
            sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY => {
                Error::OutOfMemory(format!("{what}: {bytes} bytes of GPU memory"))
            }
            _ => cuda_err(what, e),
        })?;
        Ok(DeviceBuffer { ptr, len, ctx: dev.ctx.clone(), _t: std::marker::PhantomData })
    }

    /// Allocates `len` elements (at least one byte) and zeroes them.
    pub fn zeroed(dev: &Device, len: usize, what: &str) -> Result<Self> {
        let buf = Self::alloc(dev, len, what)?;
        unsafe { result::memset_d8_sync(buf.ptr, 0, buf.bytes().max(1)) }.map_err(|e| cuda_err(what, e))?;
        sync_legacy_stream(what)?;
        Ok(buf)
    }

    /// Allocates a buffer holding `data` (schedule tables and other set-up data).
    pub fn from_host(dev: &Device, data: &[T], what: &str) -> Result<Self> {
        if data.is_empty() {
            return Self::zeroed(dev, 0, what);
        }
        let buf = Self::alloc(dev, data.len(), what)?;
        unsafe { result::memcpy_htod_sync(buf.ptr, data) }.map_err(|e| cuda_err(what, e))?;
        sync_legacy_stream(what)?;
        Ok(buf)
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn bytes(&self) -> usize {
        self.len * std::mem::size_of::<T>()
    }
}

impl<T> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        let _ = self.ctx.bind_to_thread();
        let _ = unsafe { result::free_sync(self.ptr) };
    }
}

/// The stream a plan works on: its own, or one the caller owns and lent through `set_stream`.
pub struct Stream {
    pub(crate) raw: sys::CUstream,
    owned: bool,
}

impl Stream {
    pub fn new_owned(dev: &Device) -> Result<Stream> {
        dev.bind()?;
        let raw = result::stream::create(result::stream::StreamKind::NonBlocking)
            .map_err(|e| cuda_err("creating a stream", e))?;
        Ok(Stream { raw, owned: true })
    }
    /// # Safety
    /// `raw` must be a valid stream of the device's primary context (or null, the legacy default
    /// stream) and outlive its use by the plan.
    pub unsafe fn borrowed(raw: sys::CUstream) -> Stream {
        Stream { raw, owned: false }
    }
    pub fn synchronize(&self) -> Result<()> {
        unsafe { result::stream::synchronize(self.raw) }.map_err(|e| cuda_err("synchronizing the stream", e))
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        if self.owned {
            let _ = unsafe { result::stream::synchronize(self.raw) };
            let _ = unsafe { result::stream::destroy(self.raw) };
        }
    }
}

/// An instantiated CUDA graph (a captured launch sequence, replayed at about 1 µs per dependent
/// node instead of a host launch per kernel), destroyed on drop.
pub struct Graph {
    exec: sys::CUgraphExec,
    ctx: Arc<CudaContext>,
}

impl Graph {
    /// Captures what `record` enqueues on `capture` (a stream nobody else uses) and instantiates it.
    pub fn capture(dev: &Device, capture: &Stream, record: impl FnOnce() -> Result<()>) -> Result<Graph> {
        dev.bind()?;
        let mode = sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
        unsafe { result::stream::begin_capture(capture.raw, mode) }.map_err(|e| cuda_err("capturing a graph", e))?;
        let recorded = record();
        // End the capture whatever happened, so the stream is usable again.
        let graph = unsafe { result::stream::end_capture(capture.raw) };
        recorded?;
        let graph = graph.map_err(|e| cuda_err("capturing a graph", e))?;
        let exec = unsafe { result::graph::instantiate(graph, sys::CUgraphInstantiate_flags(0)) };
        let _ = unsafe { result::graph::destroy(graph) };
        let exec = exec.map_err(|e| cuda_err("instantiating a graph", e))?;
        Ok(Graph { exec, ctx: dev.ctx.clone() })
    }

    /// Enqueues the whole graph on `stream`.
    pub fn launch(&self, stream: &Stream) -> Result<()> {
        unsafe { result::graph::launch(self.exec, stream.raw) }.map_err(|e| cuda_err("launching a graph", e))
    }
}

impl Drop for Graph {
    fn drop(&mut self) {
        let _ = self.ctx.bind_to_thread();
        let _ = unsafe { result::graph::exec_destroy(self.exec) };
    }
}

/// Page-locked host memory (staging for right-hand sides and flags): copies from it are true DMA
/// transfers, several microseconds cheaper per call than copies from pageable memory.
pub struct PinnedBuffer<T: Copy> {
    ptr: *mut T,
    len: usize,
    ctx: Arc<CudaContext>,
}

// The buffer is plain memory owned by the plan; it moves between threads with it.
unsafe impl<T: Copy + Send> Send for PinnedBuffer<T> {}

impl<T: Copy> PinnedBuffer<T> {
    /// Allocates `len` elements, all set to `value`.
    pub fn filled(dev: &Device, len: usize, value: T, what: &str) -> Result<Self> {
        dev.bind()?;
        let bytes = len.checked_mul(std::mem::size_of::<T>()).ok_or_else(|| Error::OutOfMemory(what.into()))?.max(1);
        // Portable: page-locked for every context of the process (the caller's own, too).
        let raw = unsafe { result::malloc_host(bytes, sys::CU_MEMHOSTALLOC_PORTABLE) }.map_err(|e| match e.0 {
            sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY => {
                Error::OutOfMemory(format!("{what}: {bytes} bytes of page-locked host memory"))
            }
            _ => cuda_err(what, e),
        })?;
        let buf = PinnedBuffer { ptr: raw as *mut T, len, ctx: dev.ctx.clone() };
        for i in 0..len {
            unsafe { buf.ptr.add(i).write(value) };
        }
        Ok(buf)
    }

    /// The buffer's address for kernels (page-locked memory is mapped into the device's address
    /// space wherever CUDA has unified addressing: every 64-bit platform it supports). A kernel's
    /// plain stores to it are the host's to read once the stream has been synchronised, no copy.
    pub fn device_ptr(&self) -> Result<u64> {
        let mut dptr: sys::CUdeviceptr = 0;
        unsafe { sys::cuMemHostGetDevicePointer_v2(&mut dptr, self.ptr as *mut std::ffi::c_void, 0) }
            .result()
            .map_err(|e| cuda_err("mapping page-locked memory into the device", e))?;
        Ok(dptr)
    }
}

impl<T: Copy> std::ops::Deref for PinnedBuffer<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl<T: Copy> std::ops::DerefMut for PinnedBuffer<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl<T: Copy> Drop for PinnedBuffer<T> {
    fn drop(&mut self) {
        let _ = self.ctx.bind_to_thread();
        let _ = unsafe { result::free_host(self.ptr as *mut std::ffi::c_void) };
    }
}

/// Launch parameters: `grid` CTAs of `threads` threads with `smem` bytes of dynamic shared memory,
/// in thread-block clusters of `cluster` CTAs along x (sm_90; 1: no cluster), and with `early`
/// the programmatic dependent launch of sm_90: the kernel may be scheduled while the previous
/// kernel in the stream (or graph) still runs, and waits for it inside (kernels/common.cuh
/// `wait_for_previous_kernel`), so its launch latency overlaps the previous kernel's work.
/// `carveout`: this launch's preferred share of the SM's L1/shared memory for shared memory, in
/// percent (None: the kernel's own, the driver's choice unless set on the function).
#[derive(Clone, Copy, Debug)]
pub struct KernelLaunch {
    pub grid: usize,
    pub threads: usize,
    pub smem: usize,
    pub cluster: usize,
    pub early: bool,
    pub carveout: Option<u32>,
}

impl KernelLaunch {
    /// Runs `with` on the driver's launch configuration (the attributes point into it).
    fn with_config<R>(&self, stream: sys::CUstream, with: impl FnOnce(&sys::CUlaunchConfig) -> R) -> R {
        let mut attrs: [sys::CUlaunchAttribute; 3] = unsafe { std::mem::zeroed() };
        let mut n = 0;
        if self.cluster > 1 {
            attrs[n].id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
            attrs[n].value.clusterDim =
                sys::CUlaunchAttributeValue_union__bindgen_ty_1 { x: self.cluster as u32, y: 1, z: 1 };
            n += 1;
        }
        if self.early {
            attrs[n].id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
            attrs[n].value.programmaticStreamSerializationAllowed = 1;
            n += 1;
        }
        if let Some(percent) = self.carveout {
            attrs[n].id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT;
            attrs[n].value.sharedMemCarveout = percent;
            n += 1;
        }
        let config = sys::CUlaunchConfig {
            gridDimX: self.grid as u32,
            gridDimY: 1,
            gridDimZ: 1,
            blockDimX: self.threads as u32,
            blockDimY: 1,
            blockDimZ: 1,
            sharedMemBytes: self.smem as u32,
            hStream: stream,
            attrs: attrs.as_mut_ptr(),
            numAttrs: n as u32,
        };
        with(&config)
    }

    /// Enqueues `f` on `stream` (captured into a graph like any launch; nothing for an empty grid).
    ///
    /// # Safety
    /// `args` must match the kernel's parameters; with `early`, the kernel must wait for the
    /// previous one before it touches memory that one writes.
    pub unsafe fn launch(&self, f: &CudaFunction, stream: sys::CUstream, args: &mut [*mut c_void]) -> Result<()> {
        if self.grid == 0 {
            return Ok(());
        }
        let f = f.cu_function();
        self.with_config(stream, |config| unsafe {
            sys::cuLaunchKernelEx(config, f, args.as_mut_ptr(), std::ptr::null_mut()).result()
        })
        .map_err(|e| cuda_err("launching a kernel", e))
    }

    /// How many such clusters the device can hold at once (0: the launch would fail).
    pub fn max_active(&self, f: &CudaFunction) -> Result<usize> {
        let f = f.cu_function();
        let mut count = 0i32;
        self.with_config(std::ptr::null_mut(), |config| unsafe {
            sys::cuOccupancyMaxActiveClusters(&mut count, f, config).result()
        })
        .map_err(|e| cuda_err("cluster occupancy", e))?;
        Ok(count.max(0) as usize)
    }
}
