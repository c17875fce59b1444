//! Host memory for the data a GPU plan copies: page-locked where a GPU is present, ordinary
//! elsewhere, so the same code runs on both.
//!
//! Why: ordinary (pageable) memory reaches the GPU through a CPU copy into page-locked memory
//! first: the driver's own staging, one CPU copy at a time (7–12 GB/s on the H200 machine,
//! PCIe 5), or btchol's over several threads for uploads of 4 MB and more (`cuda::host_stager`,
//! 35–47 GB/s for 67–535 MB). From page-locked memory the DMA engine reads directly: 51–54 GB/s,
//! and from the first byte (f64 n = 32, N = 1024, 17 MB: upload 0.35 ms against 0.88 threaded,
//! 1.25 by the driver; `bench/results/experiments/host-memory-upload.py`). Pinning the caller's
//! memory on each call (cuMemHostRegister) costs about as much as the driver's copy, hence a
//! buffer the caller keeps.

use std::ops::{Deref, DerefMut};

use crate::cuda::runtime::{Device, PinnedBuffer};
use crate::error::{Error, Result};

/// A zero-initialised host array of `len` elements of `T`: page-locked (pinned) memory of the
/// GPU's context where a GPU plan could be created, ordinary memory otherwise
/// ([`HostBuffer::is_page_locked`] says which). Dereferences to a slice; pass it wherever btchol
/// takes host data (e.g. [`crate::BlockTridiagRef`]'s blocks), fill it in place each time.
///
/// Page-locked memory is a scarce system resource (the operating system cannot page it out):
/// allocate the buffers a solve loop reuses once, not per call. The first page-locked buffer of
/// the process opens the GPU's context (as creating a GPU plan would; about 0.1–0.2 s).
pub struct HostBuffer<T: Copy + Default + Send> {
    memory: Memory<T>,
}

enum Memory<T: Copy + Send> {
    PageLocked(PinnedBuffer<T>),
    Ordinary(Vec<T>),
}

impl<T: Copy + Default + Send> HostBuffer<T> {
    /// `len` zeroed elements (`T::default()`), page-locked if the CUDA driver and a GPU are
    /// present. Errors: [`Error::OutOfMemory`] when the memory cannot be had (page-locked memory
    /// is not silently replaced by ordinary memory: the caller asked for fast copies);
    /// [`Error::InvalidDimension`] when the byte size overflows.
    pub fn zeroed(len: usize) -> Result<Self> {
        let bytes = len
            .checked_mul(std::mem::size_of::<T>())
            .filter(|&b| b <= isize::MAX as usize)
            .ok_or_else(|| Error::InvalidDimension(format!("a host buffer of {len} elements overflows")))?;
        let memory = match Device::open() {
            Ok(dev) => Memory::PageLocked(PinnedBuffer::filled(&dev, len, T::default(), "a page-locked host buffer")?),
            Err(Error::BackendUnavailable(_)) => {
                let mut v = Vec::new();
                v.try_reserve_exact(len).map_err(|_| Error::OutOfMemory(format!("a host buffer of {bytes} bytes")))?;
                v.resize(len, T::default());
                Memory::Ordinary(v)
            }
            Err(e) => return Err(e),
        };
        Ok(HostBuffer { memory })
    }

    /// Whether the memory is page-locked (GPU copies from and to it run at the bus's rate).
    pub fn is_page_locked(&self) -> bool {
        matches!(self.memory, Memory::PageLocked(_))
    }
}

impl<T: Copy + Default + Send> Deref for HostBuffer<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        match &self.memory {
            Memory::PageLocked(p) => p,
            Memory::Ordinary(v) => v,
        }
    }
}

impl<T: Copy + Default + Send> DerefMut for HostBuffer<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        match &mut self.memory {
            Memory::PageLocked(p) => p,
            Memory::Ordinary(v) => v,
        }
    }
}

impl<T: Copy + Default + Send + std::fmt::Debug> std::fmt::Debug for HostBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostBuffer").field("len", &self.len()).field("page_locked", &self.is_page_locked()).finish()
    }
}
