//! Host-to-device copies of large pageable arrays at several times the driver's rate.
//!
//! The driver copies pageable memory through its own page-locked buffers with one CPU thread,
//! so an upload runs at that thread's memcpy rate: 7–12 GB/s on the H200 machine, whose cores
//! copy 5.6 GB/s each; the bus takes 51–54 GB/s from page-locked memory
//! (`bench/results/experiments/host-memory-upload.py`, `host-copy-threads.py`: 8 threads copy
//! 34 GB/s). So a large upload is split over worker threads, each copying its share through two
//! page-locked slots of its own and queueing the DMA of one slot while it fills the other.
//! Memory that is already page-locked (a [`crate::HostBuffer`]) is copied by the DMA directly.

use std::ffi::c_void;

use cudarc::driver::{result, sys};

use super::runtime::{cuda_err, Device, PinnedBuffer};
use crate::error::Result;
use crate::host_parallel::{host_threads, split_over};

/// The bytes of one slot (each worker fills one while the DMA reads its other).
const SLOT_BYTES: usize = 2 << 20;
/// Uploads smaller than this go through the driver's own copy (splitting them would cost more
/// than it saves).
const MIN_STAGED_BYTES: usize = 4 << 20;
/// At most this many workers (8 threads copy 34 GB/s on the H200 machine, 16 only 39).
const MAX_WORKERS: usize = 8;

/// A host range and where it goes on the device.
#[derive(Clone, Copy)]
pub struct Segment {
    pub src: *const u8,
    pub len: usize,
    pub dst: u64,
}

/// A worker's slot: page-locked bytes and the event that marks its last DMA done.
struct Slot {
    memory: PinnedBuffer<u8>,
    done: sys::CUevent,
}

// An event handle is an opaque driver object, usable from any thread of the context.
unsafe impl Send for Slot {}

/// The page-locked slots of the workers.
pub struct HostStager {
    /// Two slots per worker.
    slots: Vec<[Slot; 2]>,
}

/// What a worker needs, shared by the workers.
#[derive(Clone, Copy)]
struct Job<'a> {
    dev: &'a Device,
    stream: sys::CUstream,
    segments: &'a [Segment],
}
unsafe impl Send for Job<'_> {}
unsafe impl Sync for Job<'_> {}

impl HostStager {
    /// The stager of a plan whose uploads copy `upload_bytes`: its slots are allocated now, with
    /// the plan's other memory (none where uploads are small or `BTCHOL_HOST_THREADS` ≤ 1).
    pub fn new(dev: &Device, upload_bytes: usize) -> Result<Self> {
        let workers = host_threads().min(upload_bytes / SLOT_BYTES).min(MAX_WORKERS);
        let workers = if upload_bytes < MIN_STAGED_BYTES || workers < 2 { 0 } else { workers };
        let mut slots = Vec::with_capacity(workers);
        for _ in 0..workers {
            slots.push([Slot::new(dev)?, Slot::new(dev)?]);
        }
        Ok(HostStager { slots })
    }

    /// Queues the copies of `segments` on `stream`; returns once the host memory may be reused
    /// (every byte is in a slot's DMA or copied), not when the device has it: the caller orders
    /// its kernels after them on `stream`.
    pub fn copy_to_device(&mut self, dev: &Device, stream: sys::CUstream, segments: &[Segment]) -> Result<()> {
        let total: usize = segments.iter().map(|s| s.len).sum();
        let workers = self.slots.len();
        if workers < 2 || segments.iter().all(|s| s.len == 0 || page_locked(s.src)) {
            return direct(stream, segments);
        }
        let job = Job { dev, stream, segments };
        // A worker per slot pair, each on its share of the bytes (as the host passes).
        let outcome: Result<()> =
            split_over(&mut self.slots, total, |slots, share| run_worker(job, slots, share)).into_iter().collect();
        if outcome.is_err() {
            // Let the DMAs already queued finish reading the slots before anyone reuses them.
            let _ = unsafe { result::stream::synchronize(stream) };
        }
        outcome
    }
}

impl Slot {
    fn new(dev: &Device) -> Result<Slot> {
        let memory = PinnedBuffer::filled(dev, SLOT_BYTES, 0u8, "page-locked upload staging")?;
        let done = result::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING)
            .map_err(|e| cuda_err("creating an upload event", e))?;
        Ok(Slot { memory, done })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        // (Every upload synchronised the plan's stream before returning, so no DMA still reads
        // the slot.)
        let _ = unsafe { result::event::destroy(self.done) };
    }
}

/// Copies bytes `share` of the concatenated segments through the worker's two slots.
fn run_worker(job: Job<'_>, slots: &mut [Slot; 2], share: std::ops::Range<usize>) -> Result<()> {
    job.dev.bind()?;
    let (mut at, mut base, mut used) = (share.start, 0usize, [false; 2]);
    let mut turn = 0;
    for seg in job.segments {
        // This segment's part of the share, in slot-sized pieces.
        while at < share.end && at < base + seg.len {
            let off = at - base;
            let len = (share.end - at).min(base + seg.len - at).min(SLOT_BYTES);
            let slot = &mut slots[turn];
            unsafe {
                if used[turn] {
                    result::event::synchronize(slot.done).map_err(|e| cuda_err("waiting for an upload slot", e))?;
                }
                slot.memory[..len].copy_from_slice(std::slice::from_raw_parts(seg.src.add(off), len));
                result::memcpy_htod_async(seg.dst + off as u64, &slot.memory[..len], job.stream)
                    .map_err(|e| cuda_err("copying to the device", e))?;
                result::event::record(slot.done, job.stream).map_err(|e| cuda_err("recording an upload event", e))?;
            }
            used[turn] = true;
            turn ^= 1;
            at += len;
        }
        base += seg.len;
    }
    Ok(())
}

/// The driver's own copies (page-locked sources go straight to the DMA engine).
fn direct(stream: sys::CUstream, segments: &[Segment]) -> Result<()> {
    for s in segments.iter().filter(|s| s.len > 0) {
        let bytes = unsafe { std::slice::from_raw_parts(s.src, s.len) };
        unsafe { result::memcpy_htod_async(s.dst, bytes, stream) }.map_err(|e| cuda_err("copying to the device", e))?;
    }
    Ok(())
}

/// Whether CUDA knows `ptr` as page-locked host memory (cuMemHostAlloc'd or registered). Asked
/// with cuPointerGetAttributes, which answers "no type" for ordinary memory instead of failing
/// (cuMemHostGetFlags fails there, an API error compute-sanitizer reports).
fn page_locked(ptr: *const u8) -> bool {
    let mut memory_type: u32 = 0;
    let mut attribute = sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE;
    let mut data = [&mut memory_type as *mut u32 as *mut c_void];
    let status = unsafe { sys::cuPointerGetAttributes(1, &mut attribute, data.as_mut_ptr(), ptr as sys::CUdeviceptr) };
    status == sys::CUresult::CUDA_SUCCESS && memory_type == sys::CUmemorytype::CU_MEMORYTYPE_HOST as u32
}
